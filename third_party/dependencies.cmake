# Every dependency comes from the system (Debian packages installed by
# scripts/setup.sh); nothing is vendored.
find_package(absl REQUIRED)
find_package(ZLIB REQUIRED)  # reading gzipped traces
find_package(Threads REQUIRED)
if(CCALLOC_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(CCALLOC_BUILD_BENCH OR CCALLOC_BUILD_TESTS)
  find_package(benchmark REQUIRED)
endif()
# Only the CUDA headers are needed at build time: the driver (libcuda.so.1) is
# opened at run time so that every binary starts on machines without a GPU.
find_path(CUDA_DRIVER_INCLUDE_DIR cuda.h
          HINTS /usr/local/cuda/include ENV CUDA_HOME PATH_SUFFIXES include
          REQUIRED)

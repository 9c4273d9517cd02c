# Every dependency comes from the system (Debian packages installed by
# scripts/setup.sh); nothing is vendored. The one exception is the
# ThreadSanitizer build, which needs an instrumented Abseil (below).
find_package(absl REQUIRED)
find_package(ZLIB REQUIRED)  # reading gzipped traces
find_package(Threads REQUIRED)
if(CCALLOC_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(CCALLOC_BUILD_BENCH OR CCALLOC_BUILD_TESTS)
  find_package(benchmark REQUIRED)
endif()

# Debian's libabsl is not built with -fsanitize=thread, so TSAN cannot see
# absl::Mutex and reports a race on everything it guards. Refuse that mix
# rather than produce a wall of false reports: build the instrumented one with
# scripts/build_tsan_abseil.sh and pass -Dabsl_DIR=<prefix>/lib/cmake/absl.
if(CCALLOC_SANITIZE MATCHES "thread")
  option(CCALLOC_ALLOW_UNINSTRUMENTED_ABSL
         "Allow a TSAN build against the system (uninstrumented) Abseil" OFF)
  if(absl_DIR MATCHES "^/usr/(lib|share)/" AND NOT CCALLOC_ALLOW_UNINSTRUMENTED_ABSL)
    message(FATAL_ERROR
      "CCALLOC_SANITIZE=thread found the system Abseil (${absl_DIR}), which is "
      "not instrumented. Run scripts/build_tsan_abseil.sh and configure with "
      "-Dabsl_DIR=<its prefix>/lib/cmake/absl (scripts/test.sh does this).")
  endif()
  message(STATUS "ccalloc: TSAN build against Abseil from ${absl_DIR}")
endif()

# Only the CUDA headers are needed at build time: the driver (libcuda.so.1) is
# opened at run time so that every binary starts on machines without a GPU.
find_path(CUDA_DRIVER_INCLUDE_DIR cuda.h
          HINTS /usr/local/cuda/include ENV CUDA_HOME PATH_SUFFIXES include
          REQUIRED)

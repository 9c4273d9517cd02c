# Every dependency comes from the system (Debian packages installed by
# scripts/setup.sh), with two exceptions: the ThreadSanitizer build needs an
# instrumented Abseil (below), and the pip package (python/build_backend.py)
# builds the vendored Abseil of third_party/abseil-cpp into the plugin.
find_package(Threads REQUIRED)

# CCALLOC_VENDORED_ABSL: Abseil from third_party/abseil-cpp (Debian's source,
# see third_party/README.md), static and position-independent, built only as
# far as ccalloc's targets need it. The plugin then carries its own copy and
# loads no libabsl_*.so: the machine needs no Abseil at all. The system's
# static libraries cannot stand in for it: Debian's libabsl-dev has only the
# shared ones in its CMake package, and its .a files are not built for a
# shared object (local-exec TLS relocations). The version script of
# allocator/torch/plugin.cmake keeps this copy's symbols private, so it cannot clash
# with another Abseil in the process (PyTorch's, say).
option(CCALLOC_VENDORED_ABSL
       "Build the vendored Abseil (third_party/abseil-cpp) statically into ccalloc" OFF)
if(CCALLOC_VENDORED_ABSL)
  set(ABSL_PROPAGATE_CXX_STD ON)
  set(ABSL_BUILD_TESTING OFF)
  set(ABSL_ENABLE_INSTALL OFF)
  set(BUILD_TESTING OFF)
  set(BUILD_SHARED_LIBS OFF)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.25)
    # SYSTEM: Abseil's headers are not ours to keep warning-free.
    add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/abseil-cpp
                     ${CMAKE_BINARY_DIR}/third_party/abseil-cpp EXCLUDE_FROM_ALL SYSTEM)
  else()
    add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/abseil-cpp
                     ${CMAKE_BINARY_DIR}/third_party/abseil-cpp EXCLUDE_FROM_ALL)
  endif()
  if(CCALLOC_INSTALL)
    # The exported ccalloc target would name absl:: targets that no installed
    # package provides.
    message(FATAL_ERROR "CCALLOC_VENDORED_ABSL=ON needs CCALLOC_INSTALL=OFF")
  endif()
else()
  find_package(absl REQUIRED)
endif()

# gzipped trace files (stats/trace.cc). ON: required; AUTO: used if found
# (the pip package: a machine without zlib's headers still builds it, and .gz
# traces are then refused with an error); OFF: not used.
set(CCALLOC_ZLIB ON CACHE STRING "Use zlib for .gz traces: ON, AUTO or OFF")
if(CCALLOC_ZLIB STREQUAL "AUTO")
  find_package(ZLIB)
elseif(CCALLOC_ZLIB)
  find_package(ZLIB REQUIRED)
endif()
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

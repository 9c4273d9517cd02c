# The PyTorch plugin: libccalloc_torch.so, which torch.cuda.memory.
# CUDAPluggableAllocator loads (python/ccalloc/torch.py does it for the user).
# Included from allocator/CMakeLists.txt, so the paths below are that folder's.
#
# The library carries the whole allocator (the static ccalloc library) and
# exports only the ccalloc_torch_* C functions: it is loaded into processes
# full of other libraries, and none of them should bind to our C++ symbols (or
# we to theirs). -fvisibility=hidden covers the plugin's own files; the version
# script also hides what comes from the static library.
set(CCALLOC_TORCH_VERSION_SCRIPT ${CMAKE_CURRENT_BINARY_DIR}/ccalloc_torch.map)
file(WRITE ${CCALLOC_TORCH_VERSION_SCRIPT}
  "{\n  global:\n    ccalloc_torch_*;\n  local:\n    *;\n};\n")

add_library(ccalloc_torch SHARED ${CMAKE_CURRENT_LIST_DIR}/torch_plugin.cc
  ${CMAKE_CURRENT_LIST_DIR}/torch_ext_api.cc ${CMAKE_CURRENT_LIST_DIR}/uncached.cc
  ${CMAKE_CURRENT_LIST_DIR}/source_pools.cc)
target_compile_options(ccalloc_torch PRIVATE ${CCALLOC_WARNINGS})
target_include_directories(ccalloc_torch PRIVATE ${PROJECT_SOURCE_DIR}
  # The C contract with the PyTorch extension, shipped in the Python package.
  ${PROJECT_SOURCE_DIR}/python/ccalloc/csrc)
target_link_libraries(ccalloc_torch PRIVATE
  ccalloc absl::status absl::statusor absl::strings absl::synchronization)
target_link_options(ccalloc_torch PRIVATE
  "LINKER:--version-script=${CCALLOC_TORCH_VERSION_SCRIPT}")
set_target_properties(ccalloc_torch PROPERTIES
  OUTPUT_NAME ccalloc_torch
  CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON
  LINK_DEPENDS ${CCALLOC_TORCH_VERSION_SCRIPT}
  # scripts/gpu_torch.sh and the Python package look for it here.
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
if(NOT CCALLOC_VENDORED_ABSL)
  # scripts/device_libs.sh copies Abseil into BUILD_DIR/lib for machines that
  # lack it; with this the plugin finds it there without LD_LIBRARY_PATH.
  # (With the vendored Abseil linked in, as in the pip package, there is
  # nothing to find.)
  set_target_properties(ccalloc_torch PROPERTIES BUILD_RPATH "$ORIGIN/../lib")
endif()

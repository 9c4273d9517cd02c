"""A ten-line C++ shim, built against the installed PyTorch, that turns a
failed ccalloc allocation into torch.OutOfMemoryError.

Why: PyTorch's pluggable allocator calls the plugin's malloc through a
std::function and does not look at the result. The plugin therefore throws a
std::runtime_error on failure, which PyTorch reports as a plain RuntimeError.
Only an exception of type c10::OutOfMemoryError becomes torch.OutOfMemoryError
(what `except torch.cuda.OutOfMemoryError` and tools like batch-size finders
catch), and that type lives in libc10, which the plugin must not link. The shim
is the one piece that does: it calls ccalloc_torch_try_malloc and raises
c10::OutOfMemoryError (or c10::Error for other failures) with ccalloc's report.

Cost: one compiler run the first time for a given PyTorch and compiler (about
two seconds: only c10/util/Exception.h is included); the result is cached in
$CCALLOC_CACHE or ~/.cache/ccalloc (see _build.py). It needs a C++ compiler ($CXX or c++) and
PyTorch's headers (shipped in the wheel under torch/include).
"""

from . import _build

SHIM_SOURCE = r"""
// Built at run time by python/ccalloc/_shim.py against the installed PyTorch.
#include <cstddef>
#include <c10/util/Exception.h>

namespace {
using TryMalloc = int (*)(size_t, int, void*, void**);
using Free = void (*)(void*, size_t, int, void*);
using LastError = const char* (*)();
TryMalloc try_malloc = nullptr;
Free plugin_free = nullptr;
LastError last_error = nullptr;
constexpr int kOutOfMemory = 1;  // CCALLOC_OUT_OF_MEMORY
}  // namespace

extern "C" __attribute__((visibility("default")))
void ccalloc_shim_bind(void* malloc_fn, void* free_fn, void* last_error_fn) {
  try_malloc = reinterpret_cast<TryMalloc>(malloc_fn);
  plugin_free = reinterpret_cast<Free>(free_fn);
  last_error = reinterpret_cast<LastError>(last_error_fn);
}

extern "C" __attribute__((visibility("default")))
void* ccalloc_shim_malloc(size_t size, int device, void* stream) {
  void* ptr = nullptr;
  int code = try_malloc(size, device, stream, &ptr);
  if (code == kOutOfMemory) {
    TORCH_CHECK_WITH(OutOfMemoryError, false, last_error());
  }
  TORCH_CHECK(code == 0, last_error());
  return ptr;
}

extern "C" __attribute__((visibility("default")))
void ccalloc_shim_free(void* ptr, size_t size, int device, void* stream) {
  plugin_free(ptr, size, device, stream);
}
"""


class ShimError(_build.BuildError):
    pass


def build_shim(torch_module, verbose=False):
    """Path of the shim library for this PyTorch, compiling it if needed.

    Raises ShimError (with the compiler's output) when it cannot be built.
    """
    try:
        include, libdir, abi = _build.torch_paths(torch_module)
        return _build.build(
            "libccalloc_torch_shim", [("shim.cc", SHIM_SOURCE)],
            [f"-D_GLIBCXX_USE_CXX11_ABI={abi}", "-I", include,
             "-L", libdir, f"-Wl,-rpath,{libdir}", "-lc10"],
            [torch_module.__version__, include], verbose=verbose, what="the OOM shim")
    except _build.BuildError as e:
        raise ShimError(str(e)) from None

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
$CCALLOC_CACHE or ~/.cache/ccalloc. It needs a C++ compiler ($CXX or c++) and
PyTorch's headers (shipped in the wheel under torch/include).
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

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


class ShimError(RuntimeError):
    pass


def _cache_dir():
    base = os.environ.get("CCALLOC_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "ccalloc")
    return os.path.join(base, "torch_shim")


def build_shim(torch_module, verbose=False):
    """Path of the shim library for this PyTorch, compiling it if needed.

    Raises ShimError (with the compiler's output) when it cannot be built.
    """
    torch_dir = os.path.dirname(os.path.abspath(torch_module.__file__))
    include = os.path.join(torch_dir, "include")
    libdir = os.path.join(torch_dir, "lib")
    if not os.path.isfile(os.path.join(include, "c10", "util", "Exception.h")):
        raise ShimError(f"PyTorch's headers are not installed ({include}/c10/util/Exception.h missing)")
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if not cxx:
        raise ShimError("no C++ compiler found (set CXX)")
    abi = int(bool(getattr(torch_module._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    key = hashlib.sha256("\0".join([
        SHIM_SOURCE, torch_module.__version__, torch_dir, cxx, str(abi), sys.platform,
    ]).encode()).hexdigest()[:16]
    out_dir = os.path.join(_cache_dir(), key)
    target = os.path.join(out_dir, "libccalloc_torch_shim.so")
    if os.path.isfile(target):
        return target
    os.makedirs(out_dir, exist_ok=True)
    errors = []
    # PyTorch 2.x headers need C++17; newer ones may want C++20.
    for std in ("-std=c++17", "-std=c++20"):
        with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
            src = os.path.join(tmp, "shim.cc")
            with open(src, "w") as f:
                f.write(SHIM_SOURCE)
            tmp_target = os.path.join(tmp, "shim.so")
            cmd = [cxx, std, "-O2", "-fPIC", "-shared", "-fvisibility=hidden",
                   f"-D_GLIBCXX_USE_CXX11_ABI={abi}", "-I", include, src,
                   "-L", libdir, f"-Wl,-rpath,{libdir}", "-lc10", "-o", tmp_target]
            if verbose:
                print("ccalloc: building the OOM shim:", " ".join(cmd), file=sys.stderr)
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode == 0:
                # Atomic: a concurrent process sees the whole file or none.
                os.replace(tmp_target, target)
                return target
            errors.append(f"{' '.join(cmd)}\n{proc.stderr[-2000:]}")
    raise ShimError("could not build the OOM shim:\n" + "\n".join(errors))

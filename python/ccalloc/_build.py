"""Compiles the small C++ pieces that must match the installed PyTorch.

PyTorch's C++ ABI changes between releases, so what includes its headers is
built on the user's machine against the PyTorch that is installed there, once,
and cached under $CCALLOC_CACHE or ~/.cache/ccalloc (keyed by the sources, the
PyTorch version and location, the compiler and the flags). Both pieces that
need it use this module: the OOM shim (_shim.py) and the extension that makes
ccalloc PyTorch's whole CUDA allocator (_ext.py).

The compiler is $CXX, else c++, g++ or clang++; PyTorch's headers come from the
wheel (torch/include).
"""

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile


# Part of every cache key: bump it when the way things are compiled changes,
# so that no library built the old way is reused.
RECIPE = "2"


class BuildError(RuntimeError):
    pass


def cache_root():
    return os.environ.get("CCALLOC_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "ccalloc")


def torch_paths(torch_module):
    """(include dir, lib dir, _GLIBCXX_USE_CXX11_ABI) of the installed PyTorch."""
    torch_dir = os.path.dirname(os.path.abspath(torch_module.__file__))
    include = os.path.join(torch_dir, "include")
    if not os.path.isfile(os.path.join(include, "c10", "util", "Exception.h")):
        raise BuildError(f"PyTorch's headers are not installed ({include}/c10/util/Exception.h missing)")
    abi = int(bool(getattr(torch_module._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    return include, os.path.join(torch_dir, "lib"), abi


def cuda_include():
    """The CUDA runtime headers: $CUDA_HOME, /usr/local/cuda, or nvcc's."""
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    for root in candidates:
        if root and os.path.isfile(os.path.join(root, "include", "cuda_runtime_api.h")):
            return os.path.join(root, "include")
    raise BuildError("the CUDA runtime headers (cuda_runtime_api.h) were not found; set CUDA_HOME")


def python_include():
    return sysconfig.get_paths()["include"]


def compiler():
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if not cxx:
        raise BuildError("no C++ compiler found (set CXX)")
    return cxx


def build(name, sources, args, key_parts, verbose=False, what="a ccalloc component"):
    """Path of shared library `name` built from `sources` ((file name, text)
    pairs) with compiler arguments `args` (sources are appended), compiling it
    if the cache has none for this key. Tries C++17, then C++20 (newer PyTorch
    headers may want it). Raises BuildError with the compiler's output."""
    cxx = compiler()
    key = hashlib.sha256("\0".join(
        [RECIPE, cxx, sys.platform, *args, *key_parts, *(n + t for n, t in sources)]).encode()).hexdigest()[:16]
    out_dir = os.path.join(cache_root(), name, key)
    target = os.path.join(out_dir, name + ".so")
    if os.path.isfile(target):
        return target
    os.makedirs(out_dir, exist_ok=True)
    errors = []
    for std in ("-std=c++17", "-std=c++20"):
        with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
            paths = []
            for file_name, text in sources:
                path = os.path.join(tmp, file_name)
                with open(path, "w") as f:
                    f.write(text)
                if file_name.endswith((".cc", ".cpp")):
                    paths.append(path)
            tmp_target = os.path.join(tmp, name + ".so")
            # Sources before the libraries: with --as-needed (the default on
            # Ubuntu) a library named before the code that uses it is dropped.
            cmd = [cxx, std, "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-I", tmp,
                   *paths, *args, "-o", tmp_target]
            if verbose:
                print(f"ccalloc: building {what}:", " ".join(cmd), file=sys.stderr)
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode == 0:
                # Atomic: a concurrent process sees the whole file or none.
                os.replace(tmp_target, target)
                return target
            errors.append(f"{' '.join(cmd)}\n{proc.stderr[-3000:]}")
    raise BuildError(f"could not build {what}:\n" + "\n".join(errors))

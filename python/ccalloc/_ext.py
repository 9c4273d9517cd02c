"""Builds and loads the extension that makes ccalloc PyTorch's whole CUDA
allocator (csrc/ccalloc_ext.cpp over the plugin's C functions in
csrc/ccalloc_torch.h).

Built against the installed PyTorch the first time enable() runs (a compiler
run of a few seconds; only c10's CUDA allocator header, pybind11 and the CUDA
runtime header are included), then cached (see _build.py). It links the
plugin by its path, so the extension and ctypes share one allocator.
"""

import importlib.util
import os
import sys

from . import _build

MODULE = "_ccalloc_ext"
_CSRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc")


class ExtensionError(_build.BuildError):
    pass


def _sources():
    out = []
    for name in sorted(os.listdir(_CSRC)):
        if name.endswith((".cpp", ".cc", ".h")):
            with open(os.path.join(_CSRC, name)) as f:
                out.append((name, f.read()))
    return out


def build(torch_module, plugin_path, verbose=False):
    """Path of the extension for this PyTorch and plugin, compiling it if needed."""
    try:
        include, libdir, abi = _build.torch_paths(torch_module)
        plugin_dir = os.path.dirname(os.path.realpath(plugin_path))
        plugin_file = os.path.basename(plugin_path)
        args = [
            f"-D_GLIBCXX_USE_CXX11_ABI={abi}", f"-DTORCH_EXTENSION_NAME={MODULE}",
            "-isystem", include,
            "-isystem", os.path.join(include, "torch", "csrc", "api", "include"),
            "-isystem", _build.python_include(), "-isystem", _build.cuda_include(),
            "-L", libdir, f"-Wl,-rpath,{libdir}", "-lc10", "-lc10_cuda", "-ltorch_cuda",
            "-ltorch_cpu", "-ltorch",
            "-L", plugin_dir, f"-l:{plugin_file}", f"-Wl,-rpath,{plugin_dir}",
        ]
        return _build.build(MODULE, _sources(), args,
                            [torch_module.__version__, include, os.path.realpath(plugin_path)],
                            verbose=verbose, what="the PyTorch extension")
    except _build.BuildError as e:
        raise ExtensionError(str(e)) from None


def load(torch_module, plugin_path, verbose=False):
    """The extension module (install(), installed())."""
    path = build(torch_module, plugin_path, verbose=verbose)
    if MODULE in sys.modules:
        return sys.modules[MODULE]
    spec = importlib.util.spec_from_file_location(MODULE, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[MODULE] = module
    return module

"""ccalloc: a caching allocator for GPU memory, usable from PyTorch.

    import ccalloc.torch
    ccalloc.torch.enable()      # before CUDA is initialised

ccalloc.torch is the PyTorch integration (it imports torch only when used);
ccalloc.Plugin is the plain ctypes binding of libccalloc_torch.so, which
ccalloc.find_library() finds: installed with the package by `pip install .`
(ccalloc/lib/), or built by CMake (target ccalloc_torch) in a checkout.
"""

__version__ = "0.1.0"

__all__ = ["CcallocError", "OutOfMemoryError", "Plugin", "find_library", "load_library"]


# With CCALLOC=1 every interpreter of the environment imports this package at
# start-up (ccalloc/_autoload.py), so the binding (ctypes, json) is imported
# on first use of these names, not here.
def __getattr__(name):
    if name in __all__:
        from . import _plugin
        return getattr(_plugin, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))

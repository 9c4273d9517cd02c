"""ccalloc: a caching allocator for GPU memory, usable from PyTorch.

    import ccalloc.torch
    ccalloc.torch.enable()      # before CUDA is initialised

ccalloc.torch is the PyTorch integration (it imports torch only when used);
ccalloc.Plugin is the plain ctypes binding of libccalloc_torch.so, which
ccalloc.find_library() finds: installed with the package by `pip install .`
(ccalloc/lib/), or built by CMake (target ccalloc_torch) in a checkout.
"""

from ._plugin import (CcallocError, OutOfMemoryError, Plugin, find_library,
                      load_library)

__version__ = "0.1.0"

__all__ = ["CcallocError", "OutOfMemoryError", "Plugin", "find_library", "load_library"]

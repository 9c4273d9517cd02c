"""Builds and loads _ccalloc_profiler_ext (pysrc/profiler_ext.cc): the memory
profiler's per-module forward wrappers that set module tags with no Python
frame per module call (see the source for why and how).

Built with the Python headers only (no torch, no CUDA) the first time a
profiler needs it, then cached like the other compiled pieces (_build.py).
Where it cannot be built (no compiler, no Python headers) load() returns None
and says why in error(); the profiler then uses Python forward hooks.

May call: ccalloc._build and the standard library.
"""

import importlib.util
import os
import sys

from . import _build

MODULE = "_ccalloc_profiler_ext"
_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pysrc", "profiler_ext.cc")
_state = {}


def load(verbose=False):
    """The extension module (Switch, TagForward), or None if it cannot be built."""
    if "module" in _state:
        return _state["module"]
    module = None
    try:
        with open(_SOURCE) as f:
            source = f.read()
        include = _build.python_include()
        if not os.path.isfile(os.path.join(include, "Python.h")):
            raise _build.BuildError(f"the Python headers are not installed ({include}/Python.h missing)")
        path = _build.build(MODULE, [("profiler_ext.cc", source)], ["-isystem", include],
                            [sys.version, include], verbose=verbose, what="the profiler's module tag wrappers")
        if MODULE in sys.modules:
            module = sys.modules[MODULE]
        else:
            spec = importlib.util.spec_from_file_location(MODULE, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules[MODULE] = module
    except (OSError, ImportError, _build.BuildError) as e:
        _state["error"] = str(e)
    _state["module"] = module
    return module


def error():
    """Why load() returned None (None if it did not)."""
    return _state.get("error")

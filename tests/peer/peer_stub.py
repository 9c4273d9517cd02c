"""Stand-ins for what a copy of PyTorch's tests imports and the installed
PyTorch lacks (the peer suite: tests/peer/peer_suite.py).

The test files come from the PyTorch repository at (or near) the installed
version, so a file may import a name that this PyTorch does not have yet
(`from torch.testing._internal.common_utils import TEST_CUDA_PYTHON_BINDINGS`)
or a module that this machine lacks (`import psutil`). Either would fail the
whole file's collection, under both allocators alike, and hide every test.

install(test_files) reads the files' imports (ast; module level only, and not
those inside try blocks, which guard themselves), then:
- for each module that a file imports names from (not `torch` itself; the
  test files themselves too), once
  that module has executed, adds a module-level __getattr__ that answers only
  the names the files ask for and the module lacks, with a stand-in
  (_Missing: false, empty, and as a decorator it skips the test);
- for each module that is imported and cannot be found at all, gives an
  empty module with the same __getattr__.
A known name gets its real meaning where that is simple (EXPANDABLE_SEGMENTS
from PYTORCH_CUDA_ALLOC_CONF, as common_utils computes it), and a renamed one
the value of its new name where the module has that (_RENAMED: an older copy
of a test file asking inductor_utils for HAS_CUDA gets HAS_CUDA_AND_TRITON,
instead of a false that would leave the file with no tests). used() lists the
names stood in for, which the peer plugin records with each run.
Nothing here imports torch.
"""

import ast
import importlib.abc
import importlib.machinery
import os
import sys
import types
import unittest

_used = []          # "module.name" stood in for, in order
_wanted = {}        # module -> set of names the files import from it
_missing_ok = set()  # modules that may be replaced by an empty one when not found
_finder = None
_STDLIB = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names)


def used():
    return list(_used)


class _Missing:
    """A name the installed PyTorch lacks: false, empty, and a decorator (or
    decorator factory) that skips what it decorates."""

    def __init__(self, qualname):
        self._qualname = qualname

    def _reason(self):
        return f"peer stub: {self._qualname} is not in the installed PyTorch"

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __contains__(self, item):
        return False

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Missing(f"{self._qualname}.{name}")

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and (isinstance(args[0], type) or callable(args[0])):
            return unittest.skip(self._reason())(args[0])
        return unittest.skip(self._reason())

    def __repr__(self):
        return f"<peer stub {self._qualname}>"


# Names PyTorch renamed, old -> new, answered with the new name's value.
_RENAMED = {"HAS_CUDA": "HAS_CUDA_AND_TRITON"}


def _renamed(module, attr):
    """(True, value) when `attr` is an old name of something `module` has."""
    new = _RENAMED.get(attr)
    if new is not None and new in module.__dict__:
        return True, module.__dict__[new]
    return False, None


def _known(module, name):
    """The real meaning of a few names, where it is simple; else a _Missing."""
    if name == "EXPANDABLE_SEGMENTS":
        conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
        return "expandable_segments:True" in conf
    if name.startswith(("TEST_", "PLATFORM_SUPPORTS_", "IS_", "HAS_")) or name.endswith("OrLater"):
        return False
    return _Missing(f"{module}.{name}")


def _patch(module):
    name = module.__name__
    wanted = _wanted.get(name)
    if not wanted:
        return
    previous = module.__dict__.get("__getattr__")
    if getattr(previous, "_peer_stub", False):
        return

    def __getattr__(attr):
        if previous is not None:
            try:
                return previous(attr)
            except AttributeError:
                pass
        if attr in wanted:
            found, value = _renamed(module, attr)
            if not found:
                value = _known(name, attr)
            setattr(module, attr, value)
            _used.append(f"{name}.{attr}")
            return value
        raise AttributeError(f"module {name!r} has no attribute {attr!r}")

    __getattr__._peer_stub = True
    module.__getattr__ = __getattr__


class _Loader(importlib.abc.Loader):
    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is self:
            spec.loader = self._inner
        if getattr(module, "__loader__", None) is self:
            module.__loader__ = self._inner
        self._inner.exec_module(module)
        _patch(module)


class _EmptyLoader(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        _used.append(f"{module.__name__} (whole module)")
        _patch(module)


class _Finder(importlib.abc.MetaPathFinder):
    _peer_stub = True

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in _wanted and fullname not in _missing_ok:
            return None
        for finder in list(sys.meta_path):
            if getattr(finder, "_peer_stub", False):
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            try:
                spec = find(fullname, path, target)
            except (ImportError, AttributeError, ValueError):
                spec = None
            if spec is not None:
                break
        else:
            spec = None
        if spec is None:
            if fullname in _missing_ok:
                parent = fullname.rpartition(".")[0]
                if parent and parent not in sys.modules and parent not in _missing_ok:
                    return None
                _wanted.setdefault(fullname, set())
                return importlib.machinery.ModuleSpec(fullname, _EmptyLoader(), is_package=True)
            return None
        if fullname in _wanted and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader)
        return spec


def _imports(tree):
    """(from-imports: module -> names, plain imports) at module level, outside try blocks."""
    froms, plain = {}, set()

    def visit(body):
        for node in body:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = {a.name for a in node.names if a.name != "*"}
                froms.setdefault(node.module, set()).update(names)
            elif isinstance(node, ast.Import):
                plain.update(a.name for a in node.names)
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            # try blocks guard their own imports; function bodies run later
    visit(tree.body)
    return froms, plain


def install(test_files):
    """Reads the imports of test_files and installs the stand-ins (see the
    module's docstring). Safe to call more than once."""
    global _finder
    queue = [os.path.abspath(f) for f in test_files]
    seen = set()
    local = {os.path.splitext(os.path.basename(f))[0] for f in queue}
    while queue:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        try:
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
        except (OSError, SyntaxError):
            continue
        froms, plain = _imports(tree)
        # the test files' own helpers beside them (test_cuda.py for
        # test_cuda_expandable_segments.py) import names too
        for module in list(froms) + list(plain):
            helper = os.path.join(os.path.dirname(path), module.split(".")[0] + ".py")
            if "." not in module and os.path.isfile(helper):
                local.add(module)
                queue.append(helper)
        for module, names in froms.items():
            top = module.split(".")[0]
            if module == "torch" or top == "tools" or top in _STDLIB:
                continue  # torch itself, the repository's tools/ (tests/peer/stubs), Python's own
            _wanted.setdefault(module, set()).update(names)
            if top not in local:
                # A test file is never replaced whole, but one may import a
                # class another copy lacks (test_cuda_expandable_segments.py
                # from a newer test_cuda.py): a stand-in is not a class, so
                # pytest collects nothing for it.
                _missing_ok.add(module)
        for module in plain:
            top = module.split(".")[0]
            if top != "torch" and top not in local and top not in _STDLIB:
                _missing_ok.add(module)
    for module in list(_wanted):
        if module in sys.modules:
            _patch(sys.modules[module])
    if _finder is None:
        _finder = _Finder()
        sys.meta_path.insert(0, _finder)

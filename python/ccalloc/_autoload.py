"""ccalloc in a process that never calls it: CCALLOC=1.

install() puts a finder at the front of sys.meta_path that waits for the
top-level `torch` module to be imported. It lets the other finders find
torch as usual and wraps only the loader they return, so that right after
torch/__init__.py has finished executing (torch.cuda is there, CUDA is not
initialised yet) ccalloc.torch.enable() runs, with its settings from
CCALLOC_CONF. Then the finder takes itself out of sys.meta_path: one
enable() per process. A process that never imports torch never imports it
here either, nor ccalloc.torch.

Who calls install():
- the `ccalloc-autoload.pth` hook that `pip install .` puts in site-packages,
  at every interpreter start of that environment, when CCALLOC is set (see
  from_environment());
- python/ccalloc/_boot/sitecustomize.py, for an interpreter that has the
  package on PYTHONPATH instead of installed (ccalloc-run and
  `python -m ccalloc.run` put _boot/ on PYTHONPATH for their children);
- ccalloc.run, in its own process.
A second install() in the same process does nothing, so the .pth hook and
sitecustomize never both install.

When enable() fails (CUDA was initialised before torch finished importing,
no plugin library, settings it refuses, ...) the import of torch raises
AutoloadError, a RuntimeError that says CCALLOC=1 asked for ccalloc and how
to turn it off. It is raised on purpose rather than printed: the user asked
for ccalloc, and a job must not go on quietly under another allocator. The
import system then drops `torch` from sys.modules; the process cannot use
torch after that and should end.
"""

import os
import sys
import _thread

ENV = "CCALLOC"
CONF_ENV = "CCALLOC_CONF"
_ON = ("1",)
_OFF = ("", "0")

_lock = _thread.RLock()
_installed = False
_started = False  # the callback was called (once per process)
_finder = None
_result = None   # None until the callback returned; then ("ok", value) or ("error", exception)


class AutoloadError(RuntimeError):
    """enable() failed in a process where CCALLOC=1 asked for ccalloc."""


class _StepAside(Exception):
    """The process itself named another allocator backend: no enable()."""


def _default_enable():
    from . import torch as ccalloc_torch
    # A process that sets PyTorch's backend itself (a test's subprocess that
    # asks for cudaMallocAsync) chose its allocator more precisely than a
    # CCALLOC=1 it inherited: PyTorch's choice stands, and stderr says so.
    # An explicit ccalloc.torch.enable() with that setting still refuses it.
    var, setting = ccalloc_torch.pytorch_setting()
    for item in setting:
        key, _, value = (part.strip() for part in item.partition(":"))
        if key == "backend" and value not in ("", "native"):
            raise _StepAside(f"{var} names backend:{value}")
    return ccalloc_torch.enable()


def _message(error):
    conf = os.environ.get(CONF_ENV)
    settings = f" with CCALLOC_CONF={conf!r}" if conf else ""
    who = f"{ENV}={os.environ[ENV]}" if ENV in os.environ else "ccalloc._autoload.install()"
    return (f"ccalloc: {who} asked for ccalloc as PyTorch's CUDA allocator in this process "
            f"(pid {os.getpid()}), and ccalloc.torch.enable(){settings} failed: "
            f"{type(error).__name__}: {error}\n"
            f"To run without ccalloc, unset {ENV} (or set {ENV}=0) for this process; it is "
            f"inherited from the environment, ccalloc-run or `python -m ccalloc.run`.")


def _run(callback):
    """Runs the enable callback once; raises AutoloadError if it fails. The
    lock is not held while it runs: it imports, under the import system's
    locks."""
    global _result, _started
    with _lock:
        if _started:
            return
        _started = True
    try:
        value = (callback or _default_enable)()
    except _StepAside as e:
        _result = ("skipped", str(e))
        sys.stderr.write(f"ccalloc: {ENV}={os.environ.get(ENV, '')} is set but {e}: PyTorch's "
                         f"own allocator backend runs this process (pid {os.getpid()}), not "
                         f"ccalloc\n")
        return
    except Exception as e:
        _result = ("error", e)
        raise AutoloadError(_message(e)) from e
    _result = ("ok", value)


class _Loader:
    """torch's own loader, with the enable callback run after exec_module."""

    def __init__(self, loader, finder):
        self._loader = loader
        self._finder = finder

    def __getattr__(self, name):
        # get_resource_reader, get_data, is_package, ...: torch's loader's.
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        loader = self._loader
        # While torch runs, and after, it sees its own loader.
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is self:
            spec.loader = loader
        if getattr(module, "__loader__", None) is self:
            module.__loader__ = loader
        loader.exec_module(module)
        self._finder.fire()


class _TorchFinder:
    """The sys.meta_path entry install() adds (see the module's docstring)."""

    _ccalloc_autoload = True

    def __init__(self, callback):
        self._callback = callback

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" or path is not None:
            return None
        for finder in list(sys.meta_path):
            if getattr(finder, "_ccalloc_autoload", False):
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _Loader(spec.loader, self)
        return spec

    def invalidate_caches(self):
        pass

    def remove(self):
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass

    def fire(self):
        self.remove()
        _run(self._callback)


def install(enable=None):
    """Makes `enable` (default: ccalloc.torch.enable with conf from
    CCALLOC_CONF) run once, right after the top-level torch module has
    finished executing; at once if torch is already imported. Returns True
    if this call installed the hook (or ran enable), False if an earlier
    install() in this process already had. Raises AutoloadError when enable
    runs here (torch already imported) and fails."""
    global _installed, _finder
    with _lock:
        if _installed:
            return False
        _installed = True
        already = "torch" in sys.modules
        if not already:
            _finder = _TorchFinder(enable)
            sys.meta_path.insert(0, _finder)
    if already:
        _run(enable)
    return True


def requested(environ=None):
    """True when CCALLOC asks for ccalloc (1); False when unset, empty or 0.
    Any other value is reported on stderr and counts as off."""
    value = (os.environ if environ is None else environ).get(ENV, "").strip()
    if value in _ON:
        return True
    if value not in _OFF:
        sys.stderr.write(f"ccalloc: {ENV}={value!r} is neither 1 (enable ccalloc) nor 0 or unset "
                         f"(leave it off); ccalloc is not enabled\n")
    return False


def from_environment():
    """install() when CCALLOC=1: what the .pth hook and sitecustomize run."""
    if requested():
        return install()
    return False


def status():
    """Whether install() ran, whether the hook still waits for torch, and
    what enable returned (or the exception it raised)."""
    return {
        "installed": _installed,
        "waiting": _finder is not None and _finder in sys.meta_path,
        "enabled": None if _result is None else _result[0] == "ok",
        "result": None if _result is None else _result[1],
    }


def _reset_for_tests():
    """Undoes install() (host tests only)."""
    global _installed, _started, _finder, _result
    with _lock:
        if _finder is not None:
            _finder.remove()
        _installed, _started, _finder, _result = False, False, None, None

"""ccalloc's hook for interpreters that do not have the installed .pth.

ccalloc-run and `python -m ccalloc.run` put this folder at the front of
PYTHONPATH, so that a child Python (`python train.py`, a torch.multiprocessing
or DataLoader worker, anything started with subprocess) imports this file at
start-up through site.py. It does what the `ccalloc-autoload.pth` of an
installed package does: when CCALLOC=1, ccalloc._autoload.install() (which
does nothing if the .pth already installed it). It then runs the next
`sitecustomize` on sys.path, if there is one, so that an environment's or a
user's own sitecustomize still runs; `import sitecustomize` afterwards gives
that one.

If `ccalloc` cannot be imported from sys.path (a child started from another
directory than the checkout's python/), the folder that holds this copy of
the package is appended to sys.path, after everything else.
"""

import os
import sys


def _ccalloc_install():
    if os.environ.get("CCALLOC", "") in ("", "0"):
        return
    import importlib.util
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        if importlib.util.find_spec("ccalloc") is None and package_parent not in sys.path:
            sys.path.append(package_parent)
        from ccalloc import _autoload
    except Exception as e:
        sys.stderr.write(f"ccalloc: CCALLOC={os.environ.get('CCALLOC')} asks for ccalloc, but the "
                         f"package cannot be imported ({type(e).__name__}: {e}); this process "
                         f"runs without it\n")
        return
    _autoload.from_environment()


def _ccalloc_chain():
    """Executes the next sitecustomize on sys.path after this folder."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.realpath(__file__))

    def same(entry):
        try:
            return os.path.realpath(entry or os.curdir) == here
        except (TypeError, ValueError):
            return False

    positions = [i for i, entry in enumerate(sys.path) if same(entry)]
    start = positions[0] + 1 if positions else 0
    rest = [entry for entry in sys.path[start:] if not same(entry)]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_ccalloc_install()
_ccalloc_chain()

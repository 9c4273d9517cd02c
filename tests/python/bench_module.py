"""Loads a bench/*.py script (or a bench/probes/*.py one) as a module, for the
host-only tests of its functions (the scripts are not a package)."""

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load(name, folder="bench"):
    """`folder`/`name`.py, `folder` relative to the repository root."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, folder, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

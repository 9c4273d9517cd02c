"""Runs a program with ccalloc as PyTorch's CUDA allocator, without editing it.

    python -m ccalloc.run [--conf CONF] script.py [args...]
    python -m ccalloc.run [--conf CONF] -m module [args...]
    ccalloc-run [--conf CONF] command [args...]      # ccalloc-run python train.py ...

Both set CCALLOC=1 (and CCALLOC_CONF=CONF with --conf) in the environment
and put python/ccalloc/_boot/ (a sitecustomize that installs the hook)
at the front of PYTHONPATH, so that every Python process started from
there inherits ccalloc: torchrun's workers, torch.multiprocessing and
DataLoader workers started with spawn or forkserver, subprocess children.
An installed package's `ccalloc-autoload.pth` does the same in every
interpreter of the environment once CCALLOC=1; the two never both install.

`python -m ccalloc.run` installs the hook in its own process too
(ccalloc._autoload.install()) and runs the target there with runpy, as
python would: the script as __main__ with sys.argv == [script, args...]
and its folder first on sys.path, or the module as __main__ with
sys.argv[0] its file. `ccalloc-run` (console script, ccalloc.run:launch)
takes a whole command and execs it: `ccalloc-run python train.py`,
`torchrun --no-python ccalloc-run python train.py`, `ccalloc-run torchrun
train.py` (torchrun's own agent process then enables ccalloc as well, at
no harm: it does not use CUDA).

ccalloc.torch.enable() runs when the program imports torch, before it can
initialise CUDA; if it fails, `import torch` raises
ccalloc._autoload.AutoloadError saying so (see _autoload.py).
"""

import os
import sys

USAGE_RUN = ("usage: python -m ccalloc.run [--conf CONF] (script.py | -m module) [args...]\n"
             "Runs the script or module with ccalloc as PyTorch's CUDA allocator (CCALLOC=1 for it\n"
             "and every process it starts; --conf sets CCALLOC_CONF).\n")
USAGE_LAUNCH = ("usage: ccalloc-run [--conf CONF] command [args...]\n"
                "  e.g. ccalloc-run python train.py, torchrun --no-python ccalloc-run python train.py\n"
                "Runs the command with CCALLOC=1 (and CCALLOC_CONF=CONF) in its environment, so that\n"
                "every Python process it starts makes ccalloc PyTorch's CUDA allocator.\n")


class UsageError(Exception):
    pass


def boot_dir():
    """The folder with ccalloc's sitecustomize.py (python/ccalloc/_boot)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_boot")


def _options(args, usage):
    """(conf or None, remaining args) from leading --conf CONF / --conf=CONF / --."""
    conf = None
    args = list(args)
    while args:
        arg = args[0]
        if arg in ("-h", "--help"):
            sys.stdout.write(usage)
            raise SystemExit(0)
        if arg == "--":
            args.pop(0)
            break
        if arg == "--conf":
            if len(args) < 2:
                raise UsageError("--conf needs a value (PYTORCH_CUDA_ALLOC_CONF-style settings)")
            conf = args[1]
            del args[:2]
        elif arg.startswith("--conf="):
            conf = arg[len("--conf="):]
            args.pop(0)
        else:
            break
    return conf, args


def set_environment(conf=None, environ=None):
    """CCALLOC=1, CCALLOC_CONF (if conf is given) and _boot/ first on
    PYTHONPATH (once), in `environ` (os.environ by default)."""
    env = os.environ if environ is None else environ
    env["CCALLOC"] = "1"
    if conf is not None:
        env["CCALLOC_CONF"] = conf
    boot = boot_dir()
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if boot not in parts:
        env["PYTHONPATH"] = os.pathsep.join([boot] + parts)
    return env


def _fail(usage, message):
    sys.stderr.write(f"ccalloc: {message}\n{usage}")
    return 2


def main(argv=None):
    """python -m ccalloc.run: see the module's docstring."""
    import runpy
    from . import _autoload

    args = sys.argv[1:] if argv is None else list(argv)
    try:
        conf, args = _options(args, USAGE_RUN)
    except UsageError as e:
        return _fail(USAGE_RUN, str(e))
    if not args:
        return _fail(USAGE_RUN, "no script or -m module to run")
    if args[0] == "-m":
        if len(args) < 2:
            return _fail(USAGE_RUN, "-m needs a module name")
        module, rest = args[1], args[2:]
        script = None
    elif args[0].startswith("-"):
        return _fail(USAGE_RUN, f"unknown option {args[0]!r}")
    else:
        script, rest = args[0], args[1:]
        if not os.path.exists(script):
            return _fail(USAGE_RUN, f"can't open file {script!r}: no such file")

    set_environment(conf)
    _autoload.install()
    if script is not None:
        sys.argv[:] = [script] + rest
        # As `python script.py`: the script's folder first on sys.path, in
        # place of the current directory that `python -m` put there (a
        # folder or zip with __main__.py: run_path puts it there itself).
        if sys.path and sys.path[0] in ("", os.getcwd()) and not getattr(sys.flags, "safe_path", False):
            del sys.path[0]
        if os.path.isfile(script) and not getattr(sys.flags, "safe_path", False):
            sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name="__main__")
    else:
        # run_module sets sys.argv[0] to the module's file, as `python -m` does.
        sys.argv[:] = ["-m"] + rest
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


def launch(argv=None):
    """ccalloc-run: sets the environment (set_environment) and execs the command."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        conf, args = _options(args, USAGE_LAUNCH)
    except UsageError as e:
        return _fail(USAGE_LAUNCH, str(e))
    if not args:
        return _fail(USAGE_LAUNCH, "no command to run")
    set_environment(conf)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp(args[0], args)
    except OSError as e:
        hint = ""
        if args[0].endswith(".py"):
            hint = f" (to run a script: ccalloc-run python {' '.join(args)})"
        sys.stderr.write(f"ccalloc-run: cannot run {args[0]!r}: {e.strerror or e}{hint}\n")
        return 127 if isinstance(e, FileNotFoundError) else 126


if __name__ == "__main__":
    sys.exit(main())

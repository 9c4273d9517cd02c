"""Host-only tests of ccalloc's launcher: the torch import hook
(ccalloc/_autoload.py), the CCALLOC=1 start-up hooks (ccalloc-autoload.pth,
ccalloc/_boot/sitecustomize.py), `python -m ccalloc.run`, ccalloc-run
(ccalloc.run:launch) and what the wheel carries for them. No torch, no GPU,
no plugin library: a fake `torch` package in a temporary folder stands in.

    python3 tests/python/test_launcher_host.py       # or: python3 -m unittest ...
"""

import base64
import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_DIR = os.path.join(ROOT, "python")
BOOT = os.path.join(PYTHON_DIR, "ccalloc", "_boot")
sys.path.insert(0, PYTHON_DIR)

from ccalloc import _autoload  # noqa: E402
import ccalloc.run as ccalloc_run  # noqa: E402

# torch/__init__.py of the fake: records when it starts and finishes, and
# offers torch.cuda.is_initialized(), which returns True under
# FAKE_TORCH_CUDA_INITIALIZED=1 (ccalloc.torch.enable() calls it first);
# with FAKE_TORCH_PRINT=1 (the child processes here) both say so on stdout.
FAKE_TORCH_INIT = '''
import os
EVENTS = ["started"]
from . import cuda
EVENTS.append("finished")
if os.environ.get("FAKE_TORCH_PRINT"):
    print("fake torch: finished", flush=True)
'''
FAKE_TORCH_CUDA = '''
import os
CALLS = []
def is_initialized():
    CALLS.append("is_initialized")
    if os.environ.get("FAKE_TORCH_PRINT"):
        print("fake torch: is_initialized called", flush=True)
    return os.environ.get("FAKE_TORCH_CUDA_INITIALIZED") == "1"
'''
SCRUB = ("CCALLOC", "CCALLOC_CONF", "PYTHONPATH", "CCALLOC_TORCH_LIBRARY", "PYTHONSTARTUP",
         "PYTHONNOUSERSITE", "FAKE_TORCH_CUDA_INITIALIZED")


def _drop_torch():
    for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
        del sys.modules[name]


class _TempDirs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ccalloc-launcher-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.fake = os.path.join(self.tmp, "fake")
        os.makedirs(os.path.join(self.fake, "torch", "cuda"))
        with open(os.path.join(self.fake, "torch", "__init__.py"), "w") as f:
            f.write(FAKE_TORCH_INIT)
        with open(os.path.join(self.fake, "torch", "cuda", "__init__.py"), "w") as f:
            f.write(FAKE_TORCH_CUDA)

    def write(self, relpath, text):
        path = os.path.join(self.tmp, relpath)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def env(self, pythonpath=(), **extra):
        env = {k: v for k, v in os.environ.items() if k not in SCRUB}
        env["PYTHONNOUSERSITE"] = "1"
        env["FAKE_TORCH_PRINT"] = "1"
        if pythonpath:
            env["PYTHONPATH"] = os.pathsep.join(pythonpath)
        env.update(extra)
        return env

    def python(self, args, env, cwd=None):
        return subprocess.run([sys.executable, *args], env=env, cwd=cwd or self.tmp,
                              capture_output=True, text=True, timeout=120)


class ImportHookTest(_TempDirs):
    """(a) install(enable=...) in this process, with the fake torch."""

    def setUp(self):
        super().setUp()
        self.assertNotIn("torch", sys.modules, "these tests need a process without torch")
        _autoload._reset_for_tests()
        self.addCleanup(_autoload._reset_for_tests)
        self.addCleanup(_drop_torch)
        sys.path.insert(0, self.fake)
        self.addCleanup(sys.path.remove, self.fake)
        importlib.invalidate_caches()
        # The fake must be the torch these tests import, ahead of any real one
        # the interpreter has (Debian's python3-torch in
        # /usr/lib/python3/dist-packages, an environment's, ...).
        self.fake_init = os.path.join(self.fake, "torch", "__init__.py")
        spec = importlib.util.find_spec("torch")
        self.assertEqual(spec and spec.origin, self.fake_init, "the fake torch is shadowed")
        self.calls = []

    def callback(self):
        torch = sys.modules["torch"]
        self.assertEqual(torch.__file__, self.fake_init, "enable ran on another torch")
        # What torch had done by the time the callback ran.
        self.calls.append((list(torch.EVENTS), hasattr(torch, "cuda")))
        return "enabled"

    def test_runs_once_after_torch_finished_and_only_when_imported(self):
        self.assertTrue(_autoload.install(enable=self.callback))
        self.assertFalse(_autoload.install(enable=self.callback), "a second install() installed")
        self.assertEqual(sum(getattr(f, "_ccalloc_autoload", False) for f in sys.meta_path), 1)
        import json as _json  # noqa: F401  other imports do not fire it
        self.assertIsNotNone(importlib.util.find_spec("torch"))  # finding is not importing
        self.assertEqual(self.calls, [])
        self.assertTrue(_autoload.status()["waiting"])

        import torch
        self.assertEqual(self.calls, [(["started", "finished"], True)])
        self.assertEqual(_autoload.status()["result"], "enabled")
        self.assertFalse(any(getattr(f, "_ccalloc_autoload", False) for f in sys.meta_path),
                         "the finder stayed in sys.meta_path")
        # torch sees its own loader, not the wrapper.
        self.assertNotIsInstance(torch.__loader__, _autoload._Loader)
        self.assertNotIsInstance(torch.__spec__.loader, _autoload._Loader)
        self.assertEqual(torch.__file__, os.path.join(self.fake, "torch", "__init__.py"))

        _drop_torch()
        import torch  # noqa: F811  imported afresh: enable does not run again
        self.assertEqual(len(self.calls), 1)

    def test_a_submodule_import_fires_it_after_torch_itself(self):
        _autoload.install(enable=self.callback)
        import torch.cuda  # noqa: F401
        self.assertEqual(self.calls, [(["started", "finished"], True)])

    def test_torch_already_imported_enables_at_once(self):
        import torch  # noqa: F401
        self.assertEqual(self.calls, [])
        self.assertTrue(_autoload.install(enable=self.callback))
        self.assertEqual(self.calls, [(["started", "finished"], True)])
        self.assertFalse(any(getattr(f, "_ccalloc_autoload", False) for f in sys.meta_path))

    def test_a_failing_enable_fails_the_import_loudly(self):
        def failing():
            raise RuntimeError("the plugin is missing")
        _autoload.install(enable=failing)
        os.environ["CCALLOC"] = "1"
        self.addCleanup(os.environ.pop, "CCALLOC", None)
        with self.assertRaises(_autoload.AutoloadError) as caught:
            import torch  # noqa: F401
        text = str(caught.exception)
        self.assertIn("CCALLOC=1 asked for ccalloc", text)
        self.assertIn("the plugin is missing", text)
        self.assertIn("unset CCALLOC", text)
        self.assertIsInstance(caught.exception.__cause__, RuntimeError)
        self.assertFalse(_autoload.status()["enabled"])

    def test_another_thread_importing_torch_waits_for_enable(self):
        import threading
        started, done, seen = threading.Event(), [], []

        def slow():
            started.set()
            time.sleep(0.3)
            done.append(True)

        def other():
            started.wait(10)
            import torch  # noqa: F401
            seen.append(len(done))

        _autoload.install(enable=slow)
        thread = threading.Thread(target=other)
        thread.start()
        import torch  # noqa: F401
        thread.join(10)
        self.assertEqual(done, [True])
        self.assertEqual(seen, [1], "another thread got torch before enable finished")

    def test_no_torch_no_callback(self):
        # No torch on sys.path: neither the fake nor one the interpreter has
        # installed (the entries that hold one are left out while it runs).
        saved = list(sys.path)
        self.addCleanup(sys.path.__setitem__, slice(None), saved)
        sys.path[:] = [entry for entry in sys.path
                       if importlib.machinery.PathFinder.find_spec("torch", [entry]) is None]
        importlib.invalidate_caches()
        if importlib.util.find_spec("torch") is not None:
            self.skipTest("a finder other than sys.path's finds torch: "
                          f"{importlib.util.find_spec('torch').origin}")
        _autoload.install(enable=self.callback)
        with self.assertRaises(ImportError):
            import torch  # noqa: F401
        self.assertEqual(self.calls, [])
        self.assertTrue(_autoload.status()["waiting"])

    def test_requested(self):
        self.assertTrue(_autoload.requested({"CCALLOC": "1"}))
        for off in ({}, {"CCALLOC": ""}, {"CCALLOC": "0"}):
            self.assertFalse(_autoload.requested(off))


class StartupHookTest(_TempDirs):
    """(b) a child `python -c "import torch"` with _boot/ on PYTHONPATH."""

    CHECK = ("import sys; import torch; "
             "print('MODS', sorted(m for m in sys.modules if m.startswith('ccalloc')))")

    def test_ccalloc_1_enables_when_torch_is_imported(self):
        # enable() runs for real: it finds CUDA "initialised" and refuses, so
        # the child fails with the message, after torch finished importing.
        env = self.env([self.fake, PYTHON_DIR, BOOT], CCALLOC="1", FAKE_TORCH_CUDA_INITIALIZED="1")
        proc = self.python(["-c", self.CHECK], env)
        self.assertNotEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("AutoloadError: ccalloc: CCALLOC=1 asked for ccalloc", proc.stderr)
        self.assertIn("must run before CUDA is initialised", proc.stderr)
        self.assertIn("unset CCALLOC", proc.stderr)
        self.assertEqual(proc.stdout.splitlines(),
                         ["fake torch: finished", "fake torch: is_initialized called"])

    def test_enable_goes_on_to_load_the_plugin(self):
        missing = os.path.join(self.tmp, "no", "libccalloc_torch.so")
        env = self.env([self.fake, PYTHON_DIR, BOOT], CCALLOC="1", CCALLOC_TORCH_LIBRARY=missing)
        proc = self.python(["-c", self.CHECK], env)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("AutoloadError", proc.stderr)
        self.assertIn(missing, proc.stderr)

    def test_a_process_that_names_another_backend_keeps_it(self):
        # PyTorch's test_allocator_backend: the child sets backend:
        # cudaMallocAsync itself, after start-up and before importing torch.
        # CCALLOC=1 (inherited) steps aside, says so on stderr, and never
        # calls enable() (which would find CUDA "initialised" and fail).
        for var in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"):
            env = self.env([self.fake, PYTHON_DIR, BOOT], CCALLOC="1",
                           FAKE_TORCH_CUDA_INITIALIZED="1")
            code = (f"import os; os.environ[{var!r}] = 'max_split_size_mb:20,backend:cudaMallocAsync'; "
                    "import torch; from ccalloc import _autoload; "
                    "print('ENABLED', _autoload.status()['enabled'])")
            proc = self.python(["-c", code], env)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(proc.stdout.splitlines(), ["fake torch: finished", "ENABLED False"])
            self.assertIn(f"{var} names backend:cudaMallocAsync", proc.stderr)
        # backend:native is PyTorch's own caching allocator's name: ccalloc
        # replaces it as usual (enable() runs, and here refuses).
        env = self.env([self.fake, PYTHON_DIR, BOOT], CCALLOC="1", FAKE_TORCH_CUDA_INITIALIZED="1",
                       PYTORCH_CUDA_ALLOC_CONF="backend:native")
        proc = self.python(["-c", self.CHECK], env)
        self.assertIn("AutoloadError", proc.stderr)

    def test_without_ccalloc_nothing_of_ccalloc_is_imported(self):
        for extra in ({}, {"CCALLOC": "0"}, {"CCALLOC": ""}):
            env = self.env([self.fake, PYTHON_DIR, BOOT], **extra)
            proc = self.python(["-c", self.CHECK], env)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(proc.stdout.splitlines(), ["fake torch: finished", "MODS []"], extra)
            self.assertEqual(proc.stderr, "")

    def test_a_process_that_never_imports_torch_never_imports_it(self):
        env = self.env([self.fake, PYTHON_DIR, BOOT], CCALLOC="1")
        proc = self.python(["-c", "import sys, json; from ccalloc import _autoload; print(json.dumps("
                            "['torch' in sys.modules, 'ccalloc.torch' in sys.modules, "
                            "_autoload.status()['waiting']]))"], env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(proc.stdout), [False, False, True])

    def test_an_unknown_value_is_reported_and_left_off(self):
        env = self.env([self.fake, PYTHON_DIR, BOOT], CCALLOC="yes please")
        proc = self.python(["-c", self.CHECK], env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("CCALLOC='yes please' is neither 1", proc.stderr)
        self.assertNotIn("is_initialized", proc.stdout)

    def test_package_found_without_python_dir_on_path(self):
        # Only _boot/ on PYTHONPATH: sitecustomize finds the package it belongs to.
        env = self.env([self.fake, BOOT], CCALLOC="1", FAKE_TORCH_CUDA_INITIALIZED="1")
        proc = self.python(["-c", self.CHECK], env)
        self.assertIn("must run before CUDA is initialised", proc.stderr)


class UserSitecustomizeTest(_TempDirs):
    """(d) ours chains to the next sitecustomize on sys.path."""

    def test_the_users_sitecustomize_still_runs(self):
        user = os.path.dirname(self.write("user/sitecustomize.py", '''
            import os, sys
            MARK = "user"
            # Ours ran first: with CCALLOC=1 it has installed the hook by now.
            print("user sitecustomize ran", os.environ.get("CCALLOC"),
                  "ccalloc._autoload" in sys.modules, flush=True)
        '''))
        code = ("import sys, sitecustomize; from ccalloc import _autoload; "
                "print('FILE', sitecustomize.__file__, sitecustomize.MARK); "
                "print('WAITING', _autoload.status()['waiting'])")
        for ccalloc in ("1", "0"):
            env = self.env([BOOT, user, PYTHON_DIR], CCALLOC=ccalloc)
            proc = self.python(["-c", code], env)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            lines = proc.stdout.splitlines()
            self.assertEqual(lines[0], f"user sitecustomize ran {ccalloc} {ccalloc == '1'}")
            self.assertEqual(lines[1], f"FILE {os.path.join(user, 'sitecustomize.py')} user")
            self.assertEqual(lines[2], f"WAITING {ccalloc == '1'}")

    # What a child reports: the module named sitecustomize after start-up (its
    # file and the names it defined, or None if there is none) and whether
    # ccalloc's hook is installed and waiting for torch.
    REPORT_SITECUSTOMIZE = (
        "import json, sys; m = sys.modules.get('sitecustomize'); a = sys.modules.get('ccalloc._autoload'); "
        "print(json.dumps([None if m is None else "
        "[m.__file__, sorted(k for k in vars(m) if not k.startswith('__'))], "
        "a is not None and a.status()['waiting']]))")

    def test_the_interpreters_own_sitecustomize_runs_after_ours(self):
        # The interpreter may have a sitecustomize of its own (Debian's python3
        # has /etc/python3.X/sitecustomize.py in its stdlib folder) or none
        # (python.org or pyenv builds). Which, is what it loads without _boot/.
        proc = self.python(["-c", self.REPORT_SITECUSTOMIZE], self.env([PYTHON_DIR], CCALLOC="1"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        own, waiting = json.loads(proc.stdout)
        self.assertFalse(waiting)
        proc = self.python(["-c", self.REPORT_SITECUSTOMIZE],
                           self.env([BOOT, PYTHON_DIR], CCALLOC="1"))
        self.assertEqual((proc.returncode, proc.stderr), (0, ""))
        found, waiting = json.loads(proc.stdout)
        self.assertTrue(waiting, "ours did not install the hook")
        if own is None:
            # None of its own: `import sitecustomize` gives ours.
            self.assertEqual(os.path.realpath(found[0]),
                             os.path.realpath(os.path.join(BOOT, "sitecustomize.py")))
            self.assertIn("_ccalloc_chain", found[1])
        else:
            # Its own ran too, after ours, as it does without _boot/, and
            # `import sitecustomize` gives it.
            self.assertEqual(os.path.realpath(found[0]), os.path.realpath(own[0]))
            self.assertEqual(found[1], own[1])


class RunTest(_TempDirs):
    """(c) python -m ccalloc.run and ccalloc-run."""

    REPORT = '''
        import json, os, subprocess, sys
        from ccalloc import _autoload
        child = subprocess.run([sys.executable, "-c",
            "import os, sys, json; print(json.dumps([os.environ.get('CCALLOC'), "
            "os.environ.get('CCALLOC_CONF'), "
            "sorted(m for m in sys.modules if m.startswith('ccalloc'))]))"],
            capture_output=True, text=True, check=True)
        print(json.dumps({
            "name": __name__, "argv": sys.argv, "path0": sys.path[0],
            "main_file": getattr(sys.modules["__main__"], "__file__", None),
            "env": [os.environ.get("CCALLOC"), os.environ.get("CCALLOC_CONF")],
            "waiting": _autoload.status()["waiting"],
            "child": json.loads(child.stdout),
        }))
        sys.exit(int(os.environ.get("EXIT_WITH", "0")))
    '''

    def run_target(self, args, **extra):
        env = self.env([PYTHON_DIR], **extra)
        cwd = os.path.join(self.tmp, "cwd")
        os.makedirs(cwd, exist_ok=True)
        return self.python(["-m", "ccalloc.run", *args], env, cwd=cwd)

    def test_script_runs_as_main_with_argv_and_children_inherit(self):
        script = self.write("scripts/script.py", self.REPORT)
        proc = self.run_target(["--conf", "memory_limit:1GiB", script, "a", "b"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = json.loads(proc.stdout)
        self.assertEqual(out["name"], "__main__")
        self.assertEqual(out["argv"], [script, "a", "b"])
        self.assertEqual(out["path0"], os.path.dirname(script))
        self.assertEqual(out["main_file"], script)
        self.assertEqual(out["env"], ["1", "memory_limit:1GiB"])
        self.assertTrue(out["waiting"], "the hook is not installed in the script's process")
        # The child found _boot/ on PYTHONPATH and installed the hook.
        self.assertEqual(out["child"][:2], ["1", "memory_limit:1GiB"])
        self.assertIn("ccalloc._autoload", out["child"][2])
        self.assertNotIn("ccalloc.torch", out["child"][2])

    def test_relative_script_argv_is_as_typed(self):
        self.write("cwd/script.py", self.REPORT)
        proc = self.run_target(["script.py", "a", "b"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = json.loads(proc.stdout)
        self.assertEqual(out["argv"], ["script.py", "a", "b"])
        self.assertEqual(out["env"], ["1", None])

    def test_module_runs_as_main(self):
        mod = self.write("cwd/reportmod.py", self.REPORT)
        proc = self.run_target(["-m", "reportmod", "x"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = json.loads(proc.stdout)
        self.assertEqual(out["name"], "__main__")
        self.assertEqual(out["argv"], [mod, "x"])
        self.assertEqual(out["env"][0], "1")

    def test_exit_status_and_torch_import_in_the_target(self):
        script = self.write("scripts/script.py", self.REPORT)
        self.assertEqual(self.run_target([script], EXIT_WITH="3").returncode, 3)
        # The target's `import torch` runs enable() (here: refused, loudly).
        bad = self.write("scripts/imports_torch.py", "import torch\nprint('after torch')\n")
        proc = self.python(["-m", "ccalloc.run", bad],
                           self.env([self.fake, PYTHON_DIR], FAKE_TORCH_CUDA_INITIALIZED="1"))
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("must run before CUDA is initialised", proc.stderr)
        self.assertNotIn("after torch", proc.stdout)

    def test_usage_errors(self):
        for args in ([], ["--conf"], ["-m"], ["--bogus", "x.py"], ["missing.py"]):
            proc = self.run_target(args)
            self.assertEqual(proc.returncode, 2, (args, proc.stderr))
            self.assertIn("usage: python -m ccalloc.run", proc.stderr)

    def test_launch_execs_the_command_with_the_environment(self):
        code = ("import os, sys, json; print(json.dumps([os.environ.get('CCALLOC'), "
                "os.environ.get('CCALLOC_CONF'), os.environ['PYTHONPATH'].split(os.pathsep), "
                "sys.modules['ccalloc._autoload'].status()['waiting']]))")
        launcher = ("import sys; from ccalloc.run import launch; sys.exit(launch())")
        env = self.env([PYTHON_DIR])
        proc = self.python(["-c", launcher, "--conf=max_split_size_mb:64", sys.executable, "-c", code],
                           env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(proc.stdout),
                         ["1", "max_split_size_mb:64", [BOOT, PYTHON_DIR], True])
        # Launched twice (ccalloc-run ccalloc-run ...): _boot/ once.
        env = self.env([BOOT, PYTHON_DIR])
        proc = self.python(["-c", launcher, sys.executable, "-c", code], env)
        self.assertEqual(json.loads(proc.stdout)[2], [BOOT, PYTHON_DIR])
        proc = self.python(["-c", launcher, "no-such-command-ccalloc"], env)
        self.assertEqual(proc.returncode, 127)
        self.assertIn("ccalloc-run: cannot run 'no-such-command-ccalloc'", proc.stderr)
        proc = self.python(["-c", launcher], env)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("usage: ccalloc-run", proc.stderr)


class WheelTest(_TempDirs):
    """(e) the wheel carries the .pth, _boot/ and the ccalloc-run entry point."""

    def setUp(self):
        super().setUp()
        sys.path.insert(0, PYTHON_DIR)
        self.addCleanup(sys.path.remove, PYTHON_DIR)
        import build_backend
        self.backend = build_backend
        plugin = self.write("plugin/libccalloc_torch.so", "not a real library\n")
        self.wheel_dir = os.path.join(self.tmp, "wheel")
        os.makedirs(self.wheel_dir)
        import contextlib
        import io
        with contextlib.redirect_stderr(io.StringIO()):
            self.wheel = os.path.join(self.wheel_dir, build_backend._write_wheel(self.wheel_dir, plugin))

    def test_contents_and_record(self):
        with zipfile.ZipFile(self.wheel) as zf:
            names = set(zf.namelist())
            dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/RECORD"))
            for name in ("ccalloc-autoload.pth", "ccalloc/_autoload.py", "ccalloc/run.py",
                         "ccalloc/_boot/sitecustomize.py", f"{dist_info}/entry_points.txt",
                         "ccalloc/pysrc/profiler_ext.cc"):   # the profiler's wrappers, built at first use
                self.assertIn(name, names)
            pth = zf.read("ccalloc-autoload.pth").decode()
            with open(os.path.join(PYTHON_DIR, "ccalloc-autoload.pth")) as f:
                self.assertEqual(pth, f.read())
            lines = [l for l in pth.splitlines() if l.strip() and not l.startswith("#")]
            self.assertEqual(len(lines), 1)
            self.assertTrue(lines[0].startswith("import "), "site.py executes only `import` lines")
            entry_points = zf.read(f"{dist_info}/entry_points.txt").decode()
            self.assertIn("[console_scripts]\nccalloc-run = ccalloc.run:launch\n", entry_points)
            record = {}
            for line in zf.read(f"{dist_info}/RECORD").decode().splitlines():
                path, digest, size = line.rsplit(",", 2)
                record[path] = (digest, size)
            for name in ("ccalloc-autoload.pth", f"{dist_info}/entry_points.txt",
                         "ccalloc/_boot/sitecustomize.py"):
                data = zf.read(name)
                digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual(record[name], (f"sha256={digest}", str(len(data))), name)
            self.assertEqual(set(record), names)

    def test_metadata_dir_and_pyproject_agree(self):
        meta = os.path.join(self.tmp, "meta")
        os.makedirs(meta)
        info = self.backend.prepare_metadata_for_build_wheel(meta)
        with open(os.path.join(meta, info, "entry_points.txt")) as f:
            self.assertIn("ccalloc-run = ccalloc.run:launch", f.read())
        with open(os.path.join(ROOT, "pyproject.toml")) as f:
            scripts = f.read().split("[project.scripts]", 1)[1]
        declared = dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]+)"', scripts, re.M))
        self.assertEqual(declared, self.backend.CONSOLE_SCRIPTS)
        module, func = declared["ccalloc-run"].split(":")
        self.assertIs(getattr(importlib.import_module(module), func), ccalloc_run.launch)

    def _site(self):
        site_dir = os.path.join(self.tmp, "site")
        with zipfile.ZipFile(self.wheel) as zf:
            zf.extractall(site_dir)
        return site_dir

    def test_the_pth_hook_of_the_installed_wheel(self):
        # site.addsitedir() is what site.py runs on site-packages at start-up.
        site_dir = self._site()
        code = ("import site, sys; site.addsitedir(sys.argv[1]); "
                "import ccalloc; print('FROM', ccalloc.__file__); import torch")
        env = self.env([self.fake], CCALLOC="1", FAKE_TORCH_CUDA_INITIALIZED="1")
        proc = self.python(["-c", code, site_dir], env)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn(f"FROM {os.path.join(site_dir, 'ccalloc', '__init__.py')}", proc.stdout)
        self.assertIn("AutoloadError: ccalloc: CCALLOC=1 asked for ccalloc", proc.stderr)
        self.assertIn("must run before CUDA is initialised", proc.stderr)

        # Off: nothing imported, nothing printed.
        code = ("import site, sys; site.addsitedir(sys.argv[1]); import torch; "
                "print(sorted(m for m in sys.modules if m.startswith('ccalloc')))")
        proc = self.python(["-c", code, site_dir], self.env([self.fake]))
        self.assertEqual((proc.returncode, proc.stderr), (0, ""))
        self.assertEqual(proc.stdout.splitlines()[-1], "[]")

        # With _boot/ on PYTHONPATH as well (ccalloc-run on an installed
        # package): one hook, not two.
        code = ("import site, sys; site.addsitedir(sys.argv[1]); "
                "print(sum(getattr(f, '_ccalloc_autoload', False) for f in sys.meta_path))")
        proc = self.python(["-c", code, site_dir],
                           self.env([os.path.join(site_dir, "ccalloc", "_boot")], CCALLOC="1"))
        self.assertEqual((proc.returncode, proc.stdout.strip()), (0, "1"), proc.stderr)

    def test_the_pth_hook_without_the_package(self):
        # The .pth left where ccalloc cannot be imported: a message, not a crash.
        site_dir = os.path.join(self.tmp, "only-pth")
        os.makedirs(site_dir)
        shutil.copy(os.path.join(PYTHON_DIR, "ccalloc-autoload.pth"), site_dir)
        code = "import site, sys; site.addsitedir(sys.argv[1]); print('still running')"
        proc = self.python(["-c", code, site_dir], self.env(CCALLOC="1"))
        self.assertEqual(proc.returncode, 0)
        self.assertEqual(proc.stdout.strip(), "still running")
        self.assertIn("ccalloc: CCALLOC=1 asks for ccalloc, but the package cannot be imported",
                      proc.stderr)
        self.assertNotIn("Error processing line", proc.stderr)

    def test_a_venv_with_the_wheel_enables_at_start_up(self):
        # The real start-up path: the .pth in a virtual environment's site-packages.
        venv = os.path.join(self.tmp, "venv")
        made = subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv],
                              capture_output=True, text=True)
        if made.returncode != 0:
            self.skipTest(f"python3 -m venv failed: {made.stderr[-300:]}")
        python = os.path.join(venv, "bin", "python")
        purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        with zipfile.ZipFile(self.wheel) as zf:
            zf.extractall(purelib)
        code = "import sys; print(sys.modules['ccalloc'].__file__); import torch"
        env = self.env([self.fake], CCALLOC="1", FAKE_TORCH_CUDA_INITIALIZED="1")
        proc = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True,
                              timeout=120)
        self.assertNotEqual(proc.returncode, 0)
        self.assertTrue(proc.stdout.startswith(purelib), proc.stdout)
        self.assertIn("must run before CUDA is initialised", proc.stderr)
        proc = subprocess.run([python, "-c", "import sys, torch; print('ccalloc' in sys.modules)"],
                              env=self.env([self.fake]), capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.stdout.splitlines()[-1], "False", proc.stderr)


if __name__ == "__main__":
    unittest.main()

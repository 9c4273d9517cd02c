"""ccalloc enabled without editing code, on a real GPU (skipped without torch
or CUDA): CCALLOC=1, `python -m ccalloc.run`, ccalloc-run, torchrun, and the
processes that torch.multiprocessing and DataLoader workers start. Every
scenario runs in fresh processes whose script never calls ccalloc; each
prints "RESULT <json>" lines with ccalloc.torch.status() and the allocator
PyTorch reports, after a CUDA allocation where it makes one.

    PYTHONPATH=python CCALLOC_TORCH_LIBRARY=BUILD/allocator/libccalloc_torch.so \
        python3 -m pytest -v tests/python/test_launcher_gpu.py

or, after `pip install .`, CCALLOC_TEST_INSTALLED=1: the installed package,
its ccalloc-autoload.pth and ccalloc-run console script (no PYTHONPATH).
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INSTALLED = os.environ.get("CCALLOC_TEST_INSTALLED") == "1"
PYTHON_DIR = os.path.join(ROOT, "python")
BOOT = os.path.join(PYTHON_DIR, "ccalloc", "_boot")
MiB = 1 << 20

# What each process reports: no ccalloc call before CUDA; the allocation
# goes through whichever allocator is PyTorch's.
REPORT = textwrap.dedent('''
    import json, os, sys

    def report(where, allocate=True):
        import torch
        out = {"where": where, "pid": os.getpid(), "argv": sys.argv}
        if allocate:
            x = torch.empty(4 << 20, dtype=torch.uint8, device="cuda")
            out["torch_allocated"] = torch.cuda.memory_allocated()
        backend = getattr(torch.cuda.memory, "get_allocator_backend", None)
        out["backend"] = backend() if backend else None
        import ccalloc.torch as ct
        status = ct.status()
        out["enabled"] = status["enabled"]
        out["mode"] = status["mode"]
        out["options"] = status["options"]
        out["cuda_initialized"] = torch.cuda.is_initialized()
        if status["enabled"] and allocate:
            out["ccalloc_allocated"] = ct.memory_allocated()
        return out

    def emit(obj):
        print("RESULT " + json.dumps(obj), flush=True)
''')


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    # One extension build for every process of the module.
    return os.environ.get("CCALLOC_CACHE") or str(tmp_path_factory.mktemp("ccalloc_cache"))


@pytest.fixture
def script(tmp_path):
    def write(name, body):
        path = tmp_path / name
        path.write_text(REPORT + textwrap.dedent(body))
        return str(path)
    return write


def child_env(cache, ccalloc=None, boot=True):
    env = dict(os.environ)
    for var in ("CCALLOC", "CCALLOC_CONF", "CCALLOC_TORCH_SIMULATE", "PYTORCH_CUDA_ALLOC_CONF"):
        env.pop(var, None)
    env["CCALLOC_CACHE"] = cache
    if ccalloc is not None:
        env["CCALLOC"] = ccalloc
    if not INSTALLED:
        parts = ([BOOT] if boot else []) + [PYTHON_DIR] + [
            p for p in [os.environ.get("PYTHONPATH")] if p]
        env["PYTHONPATH"] = os.pathsep.join(parts)
    return env


def run(cmd, env, timeout=600, expect_ok=True, cwd=None):
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    results = [json.loads(line[len("RESULT "):]) for line in proc.stdout.splitlines()
               if line.startswith("RESULT ")]
    if expect_ok:
        assert proc.returncode == 0 and results, (
            f"{cmd} failed, rc={proc.returncode}\n--- stdout ---\n{proc.stdout[-4000:]}\n"
            f"--- stderr ---\n{proc.stderr[-6000:]}")
    return proc, results


def assert_enabled(result, allocate=True):
    assert result["enabled"], result
    assert result["mode"] in ("extension", "pluggable"), result
    if result["mode"] == "extension":
        assert result["backend"] == "ccalloc", result
    if allocate:
        assert result["ccalloc_allocated"] >= 4 * MiB, result


def ccalloc_run_command(tmp_path):
    """The ccalloc-run console script: pip's after `pip install .`, else the
    same two lines pip would write, over this checkout."""
    if INSTALLED:
        path = shutil.which("ccalloc-run")
        assert path, "CCALLOC_TEST_INSTALLED=1 but no ccalloc-run on PATH"
        return [path]
    path = tmp_path / "ccalloc-run"
    path.write_text(f"#!{sys.executable}\nimport sys\nfrom ccalloc.run import launch\nsys.exit(launch())\n")
    path.chmod(0o755)
    return [str(path)]


def test_ccalloc_1_enables_a_plain_python(cache):
    code = REPORT + "emit(report('python -c'))\n"
    _, results = run([sys.executable, "-c", code], child_env(cache, "1"))
    assert_enabled(results[-1])
    # Off: PyTorch's own allocator, and ccalloc.torch was never enabled.
    _, results = run([sys.executable, "-c", code], child_env(cache))
    assert not results[-1]["enabled"] and results[-1]["backend"] == "native", results[-1]


def test_ccalloc_conf_reaches_the_allocator(cache):
    code = REPORT + "emit(report('conf'))\n"
    _, results = run([sys.executable, "-c", code], child_env(cache, "1"))
    assert "expandable_segments:True" in results[-1]["options"], results[-1]
    env = child_env(cache, "1")
    env["CCALLOC_CONF"] = "expandable_segments:False"
    _, results = run([sys.executable, "-c", code], env)
    assert_enabled(results[-1])
    assert "expandable_segments:False" in results[-1]["options"], results[-1]


def test_python_m_ccalloc_run(cache, script):
    path = script("train.py", "emit(report('ccalloc.run'))\n")
    _, results = run([sys.executable, "-m", "ccalloc.run", path, "a", "b"], child_env(cache, boot=False))
    assert_enabled(results[-1])
    assert results[-1]["argv"] == [path, "a", "b"]


def test_ccalloc_run_console_script(cache, script, tmp_path):
    path = script("train.py", "emit(report('ccalloc-run'))\n")
    cmd = ccalloc_run_command(tmp_path) + ["--conf", "expandable_segments:True",
                                           sys.executable, path, "x"]
    _, results = run(cmd, child_env(cache, boot=False))
    assert_enabled(results[-1])
    assert results[-1]["argv"] == [path, "x"]


MP_SPAWN = '''
    import torch.multiprocessing as mp

    def child(rank, queue):
        queue.put(report(f"torch.multiprocessing child {rank}"))

    if __name__ == "__main__":
        emit(report("parent"))
        ctx = mp.get_context("spawn")
        queue = ctx.SimpleQueue()
        mp.spawn(child, args=(queue,), nprocs=2, join=True)
        for _ in range(2):
            emit(queue.get())
'''


def test_torch_multiprocessing_spawn_children(cache, script):
    path = script("mp_train.py", MP_SPAWN)
    _, results = run([sys.executable, "-m", "ccalloc.run", path], child_env(cache, boot=False))
    assert len(results) == 3, results
    assert len({r["pid"] for r in results}) == 3
    for r in results:
        assert_enabled(r)


DATALOADER = '''
    import torch

    class Probe(torch.utils.data.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            # Workers do not touch CUDA: was ccalloc enabled there?
            return report(f"DataLoader worker item {i}", allocate=False)

    if __name__ == "__main__":
        emit(report("main"))
        loader = torch.utils.data.DataLoader(Probe(), batch_size=None, num_workers=1,
                                             multiprocessing_context="spawn")
        for item in loader:
            emit(item)
'''


@pytest.mark.parametrize("how", ["ccalloc.run", "CCALLOC=1"])
def test_dataloader_spawn_worker(cache, script, how):
    path = script("loader.py", DATALOADER)
    if how == "ccalloc.run":
        cmd, env = [sys.executable, "-m", "ccalloc.run", path], child_env(cache, boot=False)
    else:
        cmd, env = [sys.executable, path], child_env(cache, "1")
    _, results = run(cmd, env)
    assert len(results) == 3, results
    main, workers = results[0], results[1:]
    assert_enabled(main)
    for w in workers:
        assert w["pid"] != main["pid"], w
        assert_enabled(w, allocate=False)
        # Enabling in a worker that never uses CUDA does not start CUDA there.
        assert w["cuda_initialized"] is False, w


def test_torchrun_no_python_ccalloc_run(cache, script, tmp_path):
    path = script("ddp_train.py", "r = report('torchrun worker'); r['rank'] = os.environ.get('RANK'); emit(r)\n")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           "--no-python", *ccalloc_run_command(tmp_path), sys.executable, path]
    _, results = run(cmd, child_env(cache, boot=False))
    assert sorted(r["rank"] for r in results) == ["0", "1"], results
    for r in results:
        assert_enabled(r)


def test_ccalloc_run_torchrun(cache, script, tmp_path):
    # torchrun's agent inherits CCALLOC=1 too and enables ccalloc (without CUDA).
    path = script("ddp_train.py", "r = report('torchrun worker'); r['rank'] = os.environ.get('RANK'); emit(r)\n")
    cmd = ccalloc_run_command(tmp_path) + [sys.executable, "-m", "torch.distributed.run", "--standalone",
                                           "--nproc_per_node=1", path]
    _, results = run(cmd, child_env(cache, boot=False))
    assert [r["rank"] for r in results] == ["0"], results
    assert_enabled(results[0])


LATE = '''
    import torch
    x = torch.ones(1, device="cuda")          # CUDA initialised first
    import ccalloc.torch as ct
    from ccalloc import _autoload
    out = {}
    for name, call in (("enable", ct.enable), ("autoload", _autoload.install)):
        try:
            call()
            out[name] = None
        except RuntimeError as e:
            out[name] = [type(e).__name__, str(e)]
    y = torch.ones(1 << 20, device="cuda")   # PyTorch's allocator still works
    out["backend"] = torch.cuda.memory.get_allocator_backend()
    out["enabled"] = ct.is_enabled()
    out["sum"] = float(y.sum())
    print("RESULT " + json.dumps(out), flush=True)
'''


def test_cuda_initialised_first_gets_a_clear_error_and_nothing_installed(cache):
    _, results = run([sys.executable, "-c", "import json\n" + textwrap.dedent(LATE)], child_env(cache))
    out = results[-1]
    assert out["enable"][0] == "RuntimeError" and "must run before CUDA is initialised" in out["enable"][1]
    assert out["autoload"][0] == "AutoloadError", out
    assert "must run before CUDA is initialised" in out["autoload"][1] and "unset CCALLOC" in out["autoload"][1]
    assert out["backend"] == "native" and out["enabled"] is False and out["sum"] == float(1 << 20), out

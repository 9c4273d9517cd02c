"""Every torch.cuda feature a user touches, with ccalloc as PyTorch's allocator
and with PyTorch's own allocator as the control, on a real GPU (skipped
without torch or CUDA). Each case (compat_cases.py) runs in a process of its
own under each allocator; a case passes when its own checks hold under every
allocator and what it computed agrees with native PyTorch.

    PYTHONPATH=python CCALLOC_TORCH_LIBRARY=BUILD/allocator/libccalloc_torch.so \
        python3 -m pytest -v tests/python/test_torch_compat_gpu.py

or, after `pip install .`, CCALLOC_TEST_INSTALLED=1 (the installed package).

CCALLOC_COMPAT_MEMCHECK=1 also runs the CUDA-graph case under
compute-sanitizer memcheck with ccalloc. The selected cases' processes run
CCALLOC_COMPAT_JOBS (4) at a time before the first test, those that take most
of the device's memory alone (ALONE).
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASES = os.path.join(HERE, "compat_cases.py")
_results = {}


def run_case(case, allocator, timeout=400, wrapper=(), extra_env=None):
    key = (case, allocator, tuple(wrapper))
    if key in _results:
        return _results[key]
    env = dict(os.environ)
    for var in ("CCALLOC_TORCH_SIMULATE", "PYTORCH_CUDA_ALLOC_CONF", "CCALLOC_CONF"):
        env.pop(var, None)
    env["CCALLOC_TEST_ALLOCATOR"] = allocator
    env.update(extra_env or {})
    if not os.environ.get("CCALLOC_TEST_INSTALLED"):
        # This checkout's package; with CCALLOC_TEST_INSTALLED=1 the one pip installed.
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.join(ROOT, "python")] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    proc = subprocess.run([*wrapper, sys.executable, CASES, case], env=env, cwd=HERE,
                          capture_output=True, text=True, timeout=timeout)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, (
        f"{case} under {allocator} failed (exit {proc.returncode}):\n"
        f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    result = json.loads(lines[-1][len("RESULT "):])
    result["_stderr"] = proc.stderr
    result["_stdout"] = proc.stdout
    print(f"{case} [{allocator}]: {json.dumps({k: v for k, v in result.items() if not k.startswith('_')})}")
    _results[key] = result
    return result


# (case, allocators to run besides native, fields that must equal native's)
MATRIX = [
    ("graph_temporaries", ("ccalloc", "ccalloc-classic"), ("eager_unchanged",)),
    ("graph_shared_pool", ("ccalloc", "ccalloc-classic"), ()),
    ("graph_result_after_destroy", ("ccalloc", "ccalloc-classic"),
     ("sums_ok", "deltas_after_destroy", "deltas_after_destroy_side_stream")),
    ("compile_reduce_overhead", ("ccalloc",), ("losses",)),
    ("cudnn_benchmark", ("ccalloc",), ()),
    ("ipc_spawn", ("ccalloc", "ccalloc-classic"), ("child_sums", "child_offset", "written_back")),
    ("memory_history", ("ccalloc",), ("named_allocs", "cleared_when_off")),
    ("history_contexts", ("ccalloc", "ccalloc-classic"),
     ("frames_by_context", "frames_after_a_recording_with_context", "annotation_by_recording",
      "frames_beyond_alloc_and_free", "frames_after_trace_plot_filter_freed",
      "empty_cache_stack_by_context", "compile_contexts", "frames_kept_while_live")),
    ("stats_and_cache", ("ccalloc",), ("keys", "fraction_enforced")),
    ("oom", ("ccalloc",), ("raised",)),
    ("oom_text", ("ccalloc", "ccalloc-classic"), ("begins_as_pytorch", "num_ooms")),
    ("accelerator_stats", ("ccalloc",), ("has_key", "delta")),
    ("memory_fraction", ("ccalloc",), ("read_back", "zero_refuses", "bad")),
    ("mempool", ("ccalloc",), ("pool_bytes_at_least_4MiB",)),
    ("mempool_own_allocator", ("ccalloc", "ccalloc-classic"),
     ("used_own_allocator", "data_ok", "freed_through_it")),
    ("mempool_use_on_oom", ("ccalloc", "ccalloc-classic"), ("outcomes",)),
    ("profiler_memory", ("ccalloc",), ("saw_4MiB_allocation",)),
    ("graphed_callables", ("ccalloc", "ccalloc-classic"), ()),
    ("graph_multistream_capture", ("ccalloc", "ccalloc-classic", "ccalloc-own", "ccalloc-xs"),
     ("eager_unchanged",)),
    ("amp_grad_scaler", ("ccalloc",), ("losses",)),
    ("record_stream_safety", ("ccalloc", "ccalloc-classic", "ccalloc-own", "ccalloc-xs"),
     ("side_sum",)),
    ("threads", ("ccalloc", "ccalloc-own", "ccalloc-xs"), ()),
    ("dlpack", ("ccalloc",), ("same_pointer",)),
    ("raw_alloc", ("ccalloc",), ("freed",)),
    ("allocator_settings", ("ccalloc", "ccalloc-classic"),
     ("blocks", "max_split_size", "other_keys", "unknown_key", "uncached_requested",
      "cached_requested")),
    ("checkpoint_state", ("ccalloc", "ccalloc-classic"),
     ("changed_by_second_graph", "restored", "live_after_outputs_died",
      "live_blocks_restored_then_freed")),
    ("cross_stream_ordering", ("ccalloc", "ccalloc-classic", "ccalloc-own", "ccalloc-xs"),
     ("late_writes_kept_out",)),
    ("cross_device", ("ccalloc",), ()),
    ("ddp", ("ccalloc",), ("checksum",)),
]


# Cases that take most of the device's memory (or set a fraction of it), or
# read what the device has free: they run alone. The rest run
# CCALLOC_COMPAT_JOBS (4) processes at a time: each process's figures are its
# own allocator's, and an H200 holds several of them at once.
ALONE = {"oom", "oom_text", "memory_fraction", "mempool_use_on_oom", "stats_and_cache",
         "accelerator_stats", "ddp", "cross_device", "ipc_spawn"}


@pytest.fixture(scope="session")
def prefetched(request):
    """Runs the selected cases' processes (native and each allocator) before
    the first test needs them, a few at a time, and leaves their results in
    run_case's cache; a process that fails is run again, and reported, when
    its test asks for it."""
    import concurrent.futures
    wanted = []
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "case" in params and "allocators" in params:
            wanted += [(params["case"], a) for a in ("native",) + tuple(params["allocators"])]

    def quiet(case, allocator):
        try:
            run_case(case, allocator)
        except Exception:  # noqa: BLE001 (run again, and reported, by the test)
            pass
    together = [w for w in wanted if w[0] not in ALONE]
    jobs = max(1, int(os.environ.get("CCALLOC_COMPAT_JOBS", "4")))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(lambda w: quiet(*w), together))
    for w in wanted:
        if w[0] in ALONE:
            quiet(*w)


@pytest.mark.parametrize("case,allocators,same", MATRIX, ids=[m[0] for m in MATRIX])
def test_case(case, allocators, same, prefetched):
    native = run_case(case, "native")
    if native.get("skipped"):
        pytest.skip(native["skipped"])
    assert native["ok"], f"the control failed: {native}"
    for allocator in allocators:
        got = run_case(case, allocator)
        assert got["allocator"] == "ccalloc"
        assert got["ok"], f"{case} under {allocator}: {got}"
        for field in same:
            assert got[field] == native[field], (
                f"{case}: {field} under {allocator} = {got[field]!r}, native = {native[field]!r}")


def test_cross_stream_ordering_lends_memory_across_streams():
    # The case checks what a missing ordering would break; here, that the
    # paths it checks ran: lending wherever a stream would map (ccalloc-xs)
    # lent memory with device-side waits, cross_stream_reuse:False lent
    # nothing, and the default (auto) lent with device-side waits, every
    # request there being one it would otherwise have moved memory for.
    got = run_case("cross_stream_ordering", "ccalloc-xs")
    assert got["borrowed"] >= 1 and got["device_waits"] >= 1, got
    assert run_case("cross_stream_ordering", "ccalloc-own")["borrowed"] == 0
    default = run_case("cross_stream_ordering", "ccalloc")
    assert default["borrowed"] >= 1 and default["device_waits"] >= 1, default


def test_threads_train_as_under_native():
    # Each thread's model, data and stream are its own, so its result must
    # not depend on the allocator beyond the last bits of reductions.
    native = run_case("threads", "native")
    got = run_case("threads", "ccalloc")
    for a, b in zip(got["checksums"], native["checksums"]):
        assert abs(a - b) <= 1e-6 * max(1.0, abs(b))


def test_cudnn_losses_close_to_native():
    # cudnn's benchmark picks algorithms by timing, so losses may differ in
    # the last bits between two runs of any allocator; they must stay close.
    native = run_case("cudnn_benchmark", "native")
    got = run_case("cudnn_benchmark", "ccalloc")
    for a, b in zip(got["losses"], native["losses"]):
        assert abs(a - b) <= 2e-2 * max(1.0, abs(b))


@pytest.mark.skipif(not os.environ.get("CCALLOC_COMPAT_MEMCHECK") or not shutil.which("compute-sanitizer"),
                    reason="set CCALLOC_COMPAT_MEMCHECK=1 (needs compute-sanitizer)")
@pytest.mark.parametrize("allocator", ["ccalloc", "ccalloc-classic"])
def test_graph_replay_memcheck_clean(allocator):
    got = run_case("graph_temporaries", allocator, timeout=590,
                   wrapper=("compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "9",
                            "--report-api-errors", "no"),
                   extra_env={"CCALLOC_COMPAT_SMALL": "1"})
    assert got["ok"]
    assert "ERROR SUMMARY: 0 errors" in got["_stderr"] or "ERROR SUMMARY: 0 errors" in got.get("_stdout", "")

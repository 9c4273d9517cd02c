"""ccalloc inside PyTorch on a real GPU (skipped without torch or CUDA).

Each scenario runs in a fresh python process: the allocator has to be chosen
before CUDA is initialised, and PyTorch cannot swap it afterwards. A child
prints one line "RESULT <json>" that the test reads.

    PYTHONPATH=python CCALLOC_TORCH_LIBRARY=BUILD/allocator/libccalloc_torch.so \
        LD_LIBRARY_PATH=BUILD/lib python3 -m pytest -v tests/python/test_torch_gpu.py
"""

import json
import math
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GiB = 1 << 30
MiB = 1 << 20

PRELUDE = textwrap.dedent("""
    import json, math, os, sys
    import torch
    ALLOCATOR = os.environ["CCALLOC_TEST_ALLOCATOR"]
    ct = None
    INFO = {}
    if ALLOCATOR == "ccalloc":
        import ccalloc.torch as ct
        # This suite covers the plain CUDAPluggableAllocator path (malloc/free
        # and hooks); test_torch_compat_gpu.py covers the extension.
        INFO = ct.enable(conf=os.environ.get("CCALLOC_TEST_CONF") or None,
                         mode=os.environ.get("CCALLOC_TEST_MODE", "pluggable"),
                         oom_error=os.environ.get("CCALLOC_TEST_OOM", "auto"))

    def emit(obj):
        print("RESULT " + json.dumps(obj), flush=True)

    def stats():
        return ct.memory_stats() if ct else torch.cuda.memory_stats()
""")


@pytest.fixture(scope="module")
def shim_cache(tmp_path_factory):
    # One shim build for the whole module, in a folder of its own.
    return str(tmp_path_factory.mktemp("ccalloc_cache"))


def run_child(body, allocator, shim_cache, conf=None, oom="auto", timeout=300, env=None):
    child_env = dict(os.environ)
    # The host-only package test sets this in the pytest process; a child
    # that inherited it would run on a simulated device.
    child_env.pop("CCALLOC_TORCH_SIMULATE", None)
    child_env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    child_env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "python")] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    child_env["CCALLOC_TEST_ALLOCATOR"] = allocator
    child_env["CCALLOC_TEST_CONF"] = conf or ""
    child_env["CCALLOC_TEST_OOM"] = oom
    child_env["CCALLOC_CACHE"] = shim_cache
    child_env["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    child_env.update(env or {})
    proc = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
                          env=child_env, capture_output=True, text=True, timeout=timeout)
    results = [line[len("RESULT "):] for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and results, (
        f"child ({allocator}, conf={conf!r}) failed, rc={proc.returncode}\n"
        f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-6000:]}")
    return json.loads(results[-1])


TRAIN = """
    torch.manual_seed(1234)
    torch.cuda.manual_seed_all(1234)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    model = torch.nn.Sequential(
        torch.nn.Linear(256, 1024), torch.nn.LayerNorm(1024), torch.nn.GELU(),
        torch.nn.Linear(1024, 1024), torch.nn.GELU(),
        torch.nn.Linear(1024, 10)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator(device="cuda").manual_seed(99)

    def train_step(batch):
        x = torch.randn(batch, 256, device="cuda", generator=gen)
        y = torch.randint(0, 10, (batch,), device="cuda", generator=gen)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()
"""


def test_training_losses_are_bit_identical_to_the_native_allocator(shim_cache):
    body = TRAIN + """
    # Batch sizes that change every step make the allocator split, reuse and
    # grow; the results must not depend on where tensors live.
    losses = [train_step(64 + 97 * (i % 13)) for i in range(40)]
    emit({"losses": [float(l).hex() for l in losses], "info": INFO,
          "allocations": stats()["allocation.all.allocated"],
          "torch_allocated": torch.cuda.memory_allocated()})
    """
    native = run_child(body, "native", shim_cache)
    for conf in (None, "expandable_segments:False"):
        ours = run_child(body, "ccalloc", shim_cache, conf=conf)
        assert ours["info"]["enabled"] and ours["allocations"] > 100, ours
        assert ours["losses"] == native["losses"], f"conf={conf}"
        assert all(math.isfinite(float.fromhex(l)) for l in ours["losses"])
        # patch_torch: torch.cuda.memory_allocated() reads ccalloc's counters.
        assert ours["torch_allocated"] > 0


CROSS_STREAM = """
    n = 16 * 1024 * 1024                      # 64 MiB of float32
    side = torch.cuda.Stream()                # a pool stream: non-blocking
    main = torch.cuda.current_stream()
    result = {}
    for use_record in (False, True):
        x = torch.ones(n, device="cuda")      # allocated on the main stream
        out = torch.zeros(n, device="cuda")
        torch.cuda.synchronize()
        side.wait_stream(main)
        with torch.cuda.stream(side):
            torch.cuda._sleep(int(3e8))       # ~150 ms: the reader is late
            out.copy_(x)
        if use_record:
            x.record_stream(side)
        x_ptr = x.data_ptr()
        del x
        z = torch.empty(n, device="cuda")     # same size, main stream, right away
        z.fill_(2.0)
        torch.cuda.synchronize()
        result["record" if use_record else "control"] = {
            "reused": z.data_ptr() == x_ptr,
            "corrupted": not bool((out == 1).all().item()),
        }
        del z, out
        torch.cuda.synchronize()
    emit(result)
"""


@pytest.mark.parametrize("allocator,conf", [("native", None), ("ccalloc", None),
                                            ("ccalloc", "expandable_segments:False")])
def test_record_stream_protects_a_block_in_use_on_another_stream(shim_cache, allocator, conf):
    r = run_child(CROSS_STREAM, allocator, shim_cache, conf=conf)
    # The control shows the race is real: without record_stream the block is
    # reused at once and the late reader sees the new data.
    assert r["control"]["reused"] and r["control"]["corrupted"], r
    assert not r["record"]["corrupted"], r
    assert not r["record"]["reused"], r


def test_stats_have_exactly_the_native_keys(shim_cache):
    body = """
    x = torch.empty(1 << 20, device="cuda")   # 4 MiB
    s = stats()
    out = {"keys": sorted(s), "allocated": s["allocated_bytes.all.current"]}
    if ct:
        out["torch_keys"] = sorted(torch.cuda.memory_stats())
        out["torch_allocated"] = torch.cuda.memory_allocated()
        out["torch_max_reserved"] = torch.cuda.max_memory_reserved()
        out["summary"] = "PyTorch CUDA memory summary" in torch.cuda.memory_summary()
        out["snapshot"] = sum(seg["allocated_size"] for seg in torch.cuda.memory_snapshot())
        torch.cuda.reset_peak_memory_stats()
        out["extras"] = sorted(ct.ccalloc_stats())
    emit(out)
    """
    native = run_child(body, "native", shim_cache)
    ours = run_child(body, "ccalloc", shim_cache)
    assert ours["keys"] == native["keys"]
    assert ours["torch_keys"] == native["keys"]
    assert ours["allocated"] == 4 * MiB == native["allocated"]
    assert ours["torch_allocated"] == 4 * MiB
    assert ours["torch_max_reserved"] >= 4 * MiB
    assert ours["summary"] and ours["snapshot"] == 4 * MiB
    assert "fragmentation" in ours["extras"]


@pytest.mark.parametrize("conf", [None, "expandable_segments:False"])
def test_empty_cache_returns_memory_to_the_device(shim_cache, conf):
    body = """
    chunks = [torch.empty(512 * 1024 * 1024, dtype=torch.uint8, device="cuda") for _ in range(8)]
    for c in chunks:
        c.fill_(1)
    torch.cuda.synchronize()
    del chunks, c
    reserved_before = ct.memory_reserved()
    free_before = torch.cuda.mem_get_info()[0]
    torch.cuda.empty_cache()                  # PyTorch's reset hook
    free_after = torch.cuda.mem_get_info()[0]
    reserved_after = ct.memory_reserved()
    y = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    del y
    reserved_again = ct.memory_reserved()
    ct.empty_cache()                          # ccalloc's own entry point
    emit({"free_gain": free_after - free_before, "reserved_before": reserved_before,
          "reserved_after": reserved_after, "reserved_again": reserved_again,
          "reserved_final": ct.memory_reserved(),
          "hooks": INFO["hooks"]})
    """
    r = run_child(body, "ccalloc", shim_cache, conf=conf)
    assert r["hooks"]["empty_cache"].startswith("PyTorch hook"), r
    assert r["reserved_before"] >= 4 * GiB
    assert r["reserved_after"] == 0, r
    assert r["free_gain"] >= 0.9 * r["reserved_before"], r
    assert r["reserved_again"] >= GiB and r["reserved_final"] == 0, r


OOM = TRAIN + """
    total = torch.cuda.mem_get_info()[1]
    limit = 6 << 30
    torch.cuda.set_per_process_memory_fraction(limit / total)   # the hook
    first = train_step(256)
    chunks, error = [], None
    try:
        for _ in range(64):
            chunks.append(torch.empty(512 << 20, dtype=torch.uint8, device="cuda"))
    except RuntimeError as e:
        error = {"type": type(e).__name__, "is_oom": isinstance(e, torch.OutOfMemoryError),
                 "message": str(e)}
    held = len(chunks)
    peak_reserved = ct.max_memory_reserved()
    del chunks
    after = [train_step(256) for _ in range(3)]
    emit({"error": error, "held": held, "limit": limit, "peak_reserved": peak_reserved,
          "num_ooms": ct.memory_stats()["num_ooms"], "losses": [first] + after,
          "fraction": torch.cuda.get_per_process_memory_fraction(), "wanted": limit / total,
          "oom_error": INFO["oom_error"], "shim": INFO["shim"]})
"""


@pytest.mark.parametrize("oom", ["auto", "runtime"])
def test_out_of_memory_raises_ccallocs_report_and_training_goes_on(shim_cache, oom):
    r = run_child(OOM, "ccalloc", shim_cache, oom=oom)
    e = r["error"]
    assert e is not None, r
    assert "ccalloc" in e["message"] and "out of memory" in e["message"].lower(), e
    if oom == "auto":
        # The shim needs a C++ compiler and PyTorch's headers (both on the GPU image).
        assert r["oom_error"] == "torch.OutOfMemoryError", r
        assert e["is_oom"] and e["type"] == "OutOfMemoryError", e
    else:
        assert not e["is_oom"] and e["type"] == "RuntimeError", e
    assert r["num_ooms"] >= 1
    assert 0 < r["held"] * (512 << 20) <= r["limit"]
    assert all(math.isfinite(l) for l in r["losses"]), r["losses"]


def test_set_per_process_memory_fraction_is_honoured(shim_cache):
    body = """
    total = torch.cuda.mem_get_info()[1]
    limit = 8 << 30
    torch.cuda.set_per_process_memory_fraction(limit / total)
    a = torch.empty(int(0.75 * limit), dtype=torch.uint8, device="cuda")
    refused = None
    try:
        b = torch.empty(int(0.5 * limit), dtype=torch.uint8, device="cuda")
    except RuntimeError as e:
        refused = str(e)
    fits = torch.empty(int(0.2 * limit), dtype=torch.uint8, device="cuda")
    bad = None
    try:
        torch.cuda.set_per_process_memory_fraction(0.0)
    except (RuntimeError, ValueError) as e:
        bad = {"type": type(e).__name__, "message": str(e)}
    emit({"refused": refused, "limit": limit, "ccalloc_limit": ct.get_memory_limit(),
          "peak_reserved": ct.max_memory_reserved(), "bad": bad,
          "fraction": torch.cuda.get_per_process_memory_fraction(), "wanted": limit / total})
    """
    r = run_child(body, "ccalloc", shim_cache)
    assert r["refused"] and "ccalloc" in r["refused"], r
    assert abs(r["ccalloc_limit"] - r["limit"]) <= 1 << 20, r
    assert r["peak_reserved"] <= r["ccalloc_limit"], r
    assert abs(r["fraction"] - r["wanted"]) < 1e-6, r
    # Fraction 0 would be a cap of 0 bytes (ccalloc's "no cap"): refused, by
    # PyTorch's own check or by ccalloc's hook, and the cap stays as it was.
    assert r["bad"], "fraction 0 is refused"
    if r["bad"]["type"] == "RuntimeError":
        assert "ccalloc" in r["bad"]["message"], r["bad"]


def test_enable_after_cuda_init_is_a_clear_error(shim_cache):
    body = """
    torch.zeros(1, device="cuda")
    import ccalloc.torch as late
    try:
        late.enable()
        emit({"error": None})
    except RuntimeError as e:
        emit({"error": str(e)})
    """
    r = run_child(body, "native", shim_cache)
    assert r["error"] and "before CUDA is initialised" in r["error"], r

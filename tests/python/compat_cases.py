"""What a PyTorch user does on a GPU, one case per run, under one allocator.

    CCALLOC_TEST_ALLOCATOR=native|ccalloc|ccalloc-classic|ccalloc-own|ccalloc-xs python3 compat_cases.py CASE

prints one line "RESULT <json>" with what the case saw ("ok" is its own
verdict; the other fields are compared across allocators by
test_torch_compat_gpu.py). The allocator has to be chosen before CUDA is
initialised, so each run is a process of its own; processes that
torch.multiprocessing spawns import this file again and enable the same
allocator (the variable is inherited).
"""

import json
import os
import sys
import tempfile

import torch

# The CUDA-graph and pool-state cases (a file of their own for its size);
# imported before the allocator is enabled below, which they do not touch.
from compat_graph_cases import (  # noqa: F401  (CASES collects them)
    case_checkpoint_state, case_graph_multistream_capture, case_graph_result_after_destroy,
    case_graph_shared_pool, case_graph_temporaries, case_graphed_callables)

ALLOCATOR = os.environ.get("CCALLOC_TEST_ALLOCATOR", "native")
_CONFS = {"ccalloc": None, "ccalloc-classic": "expandable_segments:False",
          "ccalloc-own": "cross_stream_reuse:False",
          "ccalloc-xs": "cross_stream_reuse:True"}
if ALLOCATOR.startswith("ccalloc"):
    import ccalloc.torch as _ct
    _ct.enable(conf=_CONFS[ALLOCATOR], mode="extension")

MiB = 1 << 20


def _allocator_name():
    return torch.cuda.memory.get_allocator_backend() if ALLOCATOR == "native" else "ccalloc"


def case_compile_reduce_overhead():
    """torch.compile(mode="reduce-overhead") training steps (cudagraph trees)
    against the same steps in eager mode."""
    import copy
    torch.manual_seed(2)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).cuda()
    eager_model = copy.deepcopy(model)
    compiled = torch.compile(model, mode="reduce-overhead")
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    eager_opt = torch.optim.SGD(eager_model.parameters(), lr=0.05)
    gen = torch.Generator(device="cuda").manual_seed(3)
    losses, eager_losses = [], []
    for _ in range(10):
        x = torch.randn(64, 256, device="cuda", generator=gen)
        y = torch.randint(0, 10, (64,), device="cuda", generator=gen)
        for m, o, out in ((compiled, opt, losses), (eager_model, eager_opt, eager_losses)):
            loss = torch.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            o.step()
            o.zero_grad(set_to_none=True)
            out.append(float(loss))
    gap = max(abs(a - b) for a, b in zip(losses, eager_losses))
    return {"ok": gap < 1e-3, "losses": losses, "eager_losses": eager_losses, "max_gap_to_eager": gap}


def case_cudnn_benchmark():
    """cudnn.benchmark training of a small CNN with two input sizes (cudnn
    sizes its workspace with the allocator's cacheInfo)."""
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(4)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
        torch.nn.Conv2d(32, 64, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    gen = torch.Generator(device="cuda").manual_seed(5)
    losses = []
    for step in range(8):
        side = 64 if step % 2 == 0 else 96
        x = torch.randn(32, 3, side, side, device="cuda", generator=gen)
        y = torch.randint(0, 10, (32,), device="cuda", generator=gen)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(float(loss))
    return {"ok": all(l == l for l in losses), "losses": losses}


def _ipc_child(rank, tensors, results):
    whole, part = tensors
    results.put((float(whole.sum()), float(part.sum()), part.data_ptr() - whole.data_ptr()))
    part.fill_(-1.0)  # the producer must see this
    torch.cuda.synchronize()


def case_ipc_spawn():
    """A CUDA tensor and a view at an offset, shared with a spawned process
    that reads them and writes through the view."""
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    whole = torch.arange(1 << 20, device="cuda", dtype=torch.float32)
    part = whole[1000:2000]
    # Before the child writes through `part`.
    expect_whole, expect_part = float(whole.sum()), float(part.sum())
    results = ctx.SimpleQueue()
    proc = ctx.Process(target=_ipc_child, args=(0, (whole, part), results))
    proc.start()
    got = results.get()
    proc.join(120)
    torch.cuda.synchronize()
    written = bool(torch.all(part == -1.0)) and float(whole[999]) == 999.0 and float(whole[2000]) == 2000.0
    ok = (proc.exitcode == 0 and got[0] == expect_whole and got[1] == expect_part
          and got[2] == 4000 and written)
    return {"ok": ok, "child_sums": got[:2], "child_offset": got[2], "written_back": written}


def case_memory_history():
    """_record_memory_history, _snapshot and _dump_snapshot with Python frames."""
    import pickle
    torch.cuda.memory._record_memory_history(max_entries=100000)

    def allocate_named_tensors():
        return [torch.empty(2 * MiB, device="cuda") for _ in range(4)]
    held = allocate_named_tensors()
    del held[0]
    snap = torch.cuda.memory._snapshot()
    path = os.path.join(tempfile.mkdtemp(), "snapshot.pickle")
    torch.cuda.memory._dump_snapshot(path)
    torch.cuda.memory._record_memory_history(enabled=None)
    # Turned off, the history is gone (PyTorch clears its trace buffer).
    cleared = not any(len(dev) for dev in torch.cuda.memory._snapshot()["device_traces"])
    with open(path, "rb") as f:
        dumped = pickle.load(f)
    traces = [t for dev in snap["device_traces"] for t in dev]
    actions = sorted({t["action"] for t in traces})
    named = [t for t in traces if t["action"] == "alloc" and
             any(fr.get("name") == "allocate_named_tensors" for fr in t.get("frames", []))]
    blocks_with_frames = [b for s in snap["segments"] for b in s["blocks"]
                          if b["state"] == "active_allocated" and b.get("frames")]
    ok = (len(named) == 4 and "free_requested" in actions and len(blocks_with_frames) >= 3
          and len(dumped["segments"]) > 0 and cleared)
    return {"ok": ok, "actions": actions, "named_allocs": len(named), "cleared_when_off": cleared,
            "live_blocks_with_frames": len(blocks_with_frames), "dump_bytes": os.path.getsize(path)}


def case_history_contexts():
    """PyTorch's test_memory_plots*: which history settings put stacks where.
    context=None records no frames; context="all" gives empty_cache's give-back
    (segment_free, or segment_unmap for expandable/growable memory) the
    caller's stack, "alloc" and "state" do not; outside torch.compile a trace
    entry's compile_context is "N/A"."""
    import inspect
    import json
    from torch.cuda import _memory_viz

    def run_history_probe():
        x = torch.rand(128, 128, device="cuda")
        return x * x + x * x
    # Three recordings in a row: none without a context shows the probe's
    # frames, the one with a context (and a record_function, which history
    # keeps as an annotation) does, and the one after it, without a context,
    # shows nothing of it (test_memory_plots' order).
    filter_freed = "filter_freed" in inspect.signature(_memory_viz.trace_plot).parameters
    found, annotated, beyond, took, filtered = [], [], [], [], []
    for context in (None, "all", None):
        torch.cuda.empty_cache()
        torch.cuda.memory._record_memory_history("all", context=context, stacks="python")
        try:
            if context is None:
                run_history_probe()
            else:
                with torch.profiler.record_function("ccalloc_annotation_probe"):
                    run_history_probe()
            snap = torch.cuda.memory._snapshot()
            text = json.dumps(snap)
            found.append("run_history_probe" in text)
            annotated.append("ccalloc_annotation_probe" in text)
            # The probe's blocks are all freed: what of its frames stays in
            # the trace beyond their alloc and free entries is the memory it
            # took (segment_alloc, or segment_map where segments grow), which
            # memory_viz's trace_plot(filter_freed=True) keeps and
            # test_memory_plots looks for the test's name in.
            taken = [e for dev in snap["device_traces"] for e in dev
                     if e["action"] not in ("alloc", "free_requested", "free_completed")]
            beyond.append("run_history_probe" in json.dumps(taken))
            took.append(sorted({e["action"] for e in taken}))
            if filter_freed:
                _memory_viz.trace_plot(snap, filter_freed=True)   # may change snap
                filtered.append("run_history_probe" in json.dumps(snap))
        finally:
            torch.cuda.memory._record_memory_history(None)
    names = {"None": found[0], "all": found[1]}
    after = {"all": found[1], "None": found[2]}
    annotation = {"all": annotated[1], "None": annotated[2]}
    beyond_alloc_free = {"all": beyond[1], "None": beyond[2]}
    after_filter_freed = {"all": filtered[1], "None": filtered[2]} if filter_freed else None
    give_back = {}
    compile_contexts = set()
    for context in ("alloc", "all", "state"):
        torch.cuda.empty_cache()
        torch.cuda.memory._record_memory_history(context=context)
        try:
            x = torch.rand(3, 4, device="cuda")
            del x
            torch.cuda.empty_cache()
            snap = torch.cuda.memory._snapshot()
            give_back[context] = "empty_cache" in json.dumps(snap)
            compile_contexts |= {str(e.get("compile_context")).split(";")[0]
                                 for dev in snap["device_traces"] for e in dev}
        finally:
            torch.cuda.memory._record_memory_history(None)
    # A block keeps its frames while it lives, history on or off; freed with
    # history off, they go with it: a block allocated later at its address,
    # with history off, has none (test_memory_plots after the tests before it).
    def allocate_with_frames():
        return torch.empty(4 * MiB // 4, device="cuda")
    torch.cuda.empty_cache()
    torch.cuda.memory._record_memory_history("all", context="all", stacks="python")
    t = allocate_with_frames()
    where = t.data_ptr()
    torch.cuda.memory._record_memory_history(None)
    kept_while_live = "allocate_with_frames" in json.dumps(torch.cuda.memory._snapshot()["segments"])
    del t
    u = torch.empty(4 * MiB // 4, device="cuda")
    reused = u.data_ptr() == where
    stale = "allocate_with_frames" in json.dumps(torch.cuda.memory._snapshot()["segments"])
    del u
    ok = (names == {"None": False, "all": True} and after == {"all": True, "None": False}
          and not annotation["None"] and beyond_alloc_free == {"all": True, "None": False}
          and after_filter_freed in (None, {"all": True, "None": False})
          and give_back == {"alloc": False, "all": True, "state": False} and not stale)
    return {"ok": ok, "frames_by_context": names, "frames_after_a_recording_with_context": after,
            "annotation_by_recording": annotation,
            "frames_beyond_alloc_and_free": beyond_alloc_free,
            "frames_after_trace_plot_filter_freed": after_filter_freed,
            "entries_beyond_alloc_and_free": took[1],
            "empty_cache_stack_by_context": give_back,
            "compile_contexts": sorted(compile_contexts), "frames_kept_while_live": kept_while_live,
            "address_reused": reused, "stale_frames": stale}


def case_stats_and_cache():
    """memory_stats keys, allocated/peak figures, empty_cache, fraction, summary."""
    torch.cuda.reset_peak_memory_stats()
    x = torch.empty(64 * MiB, dtype=torch.uint8, device="cuda")
    y = torch.empty(3 * MiB, dtype=torch.uint8, device="cuda")
    allocated = torch.cuda.memory_allocated()
    del y
    peak = torch.cuda.max_memory_allocated()
    stats = torch.cuda.memory_stats()
    torch.cuda.empty_cache()
    reserved_after_empty = torch.cuda.memory_reserved()
    summary = torch.cuda.memory_summary()
    free_before, total = torch.cuda.mem_get_info()
    torch.cuda.set_per_process_memory_fraction(0.5)
    fraction_ok = True
    try:
        torch.empty(int(total * 0.6), dtype=torch.uint8, device="cuda")
        fraction_ok = False
    except torch.OutOfMemoryError:
        pass
    torch.cuda.set_per_process_memory_fraction(1.0)
    del x
    ok = (allocated >= 67 * MiB and peak >= allocated and reserved_after_empty >= 64 * MiB
          and fraction_ok and "allocated_bytes.all.current" in stats and len(summary) > 0)
    return {"ok": ok, "keys": sorted(stats.keys()), "allocated": allocated, "peak": peak,
            "fraction_enforced": fraction_ok}


def case_oom():
    """torch.OutOfMemoryError on a request past the device, and training goes on."""
    free, total = torch.cuda.mem_get_info()
    raised = False
    try:
        torch.empty(total * 2, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError:
        raised = True
    x = torch.ones(1 << 20, device="cuda")
    return {"ok": raised and float(x.sum()) == float(1 << 20), "raised": raised}


def case_oom_text():
    """PyTorch's out-of-memory text, which tools and its own tests match on
    (test_out_of_memory): a request past the device, 800,000,000 GiB, and an
    exabyte or more; each a torch.OutOfMemoryError, and the GPU goes on."""
    tensor = torch.zeros(1024, device="cuda")
    d = tensor.device.index
    seen = {}
    for name, n in (("past_device", 2 * torch.cuda.mem_get_info()[1]),
                    ("huge", 1024 * 1024 * 1024 * 800000000),
                    ("exabyte", 1024 * 1024 * 1024 * 8000000000)):
        try:
            torch.empty(n, dtype=torch.int8, device="cuda")
            seen[name] = None
        except torch.OutOfMemoryError as e:
            seen[name] = str(e)
    tensor.fill_(1)
    starts = {
        "past_device": "CUDA out of memory. Tried to allocate ",
        "huge": f"CUDA out of memory. Tried to allocate 800000000.00 GiB. GPU {d} has a total "
                "capacity of",
        "exabyte": "CUDA out of memory. Tried to allocate more than 1EB memory",
    }
    begins = {k: bool(seen[k]) and seen[k].startswith(v) for k, v in starts.items()}
    pytorch_tail = all("is reserved by PyTorch but unallocated" in seen[k]
                       for k in ("past_device", "huge") if seen[k])
    return {"ok": all(begins.values()) and pytorch_tail and bool((tensor == 1).all()),
            "begins_as_pytorch": begins, "num_ooms": torch.cuda.memory_stats()["num_ooms"]}


def case_accelerator_stats():
    """torch.accelerator's statistics (PyTorch's test_memory_stats) reach the
    allocator in charge: active bytes follow a 1 KiB tensor and its free."""
    import gc
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.reset_accumulated_memory_stats()
    before = torch.accelerator.memory_stats().get("active_bytes.all.current")
    tmp = torch.randn(256, device="cuda")
    during = torch.accelerator.memory_stats().get("active_bytes.all.current")
    del tmp
    gc.collect()
    torch.accelerator.empty_cache()
    after = torch.accelerator.memory_stats()
    ok = (before is not None and during == before + 1024
          and after.get("active_bytes.all.current") == before
          and after.get("active_bytes.all.freed") == 1024
          and torch.accelerator.memory_allocated() == torch.cuda.memory_allocated())
    return {"ok": ok, "has_key": before is not None, "delta": (during or 0) - (before or 0)}


def case_memory_fraction():
    """set/get_per_process_memory_fraction as PyTorch's own tests use them
    (test_get_per_process_memory_fraction): 0 and 1 accepted and read back,
    0 refuses new device memory, bad values refused."""
    torch.zeros(1, device="cuda")
    got = []
    for f in (1.0, 0.0, 0.375, 0.5):
        torch.cuda.set_per_process_memory_fraction(f)
        got.append(torch.cuda.get_per_process_memory_fraction() == f)
    torch.cuda.set_per_process_memory_fraction(0.0)
    refused = False
    try:
        # New device memory (a cached block would serve a small request).
        torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError:
        refused = True
    torch.cuda.set_per_process_memory_fraction(1.0)
    bad = []
    for f in (-0.1, 2.0):
        try:
            torch.cuda.set_per_process_memory_fraction(f)
            bad.append("accepted")
        except ValueError as e:
            bad.append("ValueError" if "Invalid fraction value" in str(e) else str(e))
    x = torch.ones(1 << 20, device="cuda")
    return {"ok": all(got) and refused and float(x.sum()) == float(1 << 20),
            "read_back": got, "zero_refuses": refused, "bad": bad}


def case_mempool():
    """torch.cuda.MemPool and use_mem_pool: allocations land in the pool."""
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        a = torch.randn(4 * MiB // 4, device="cuda")
    b = torch.randn(4 * MiB // 4, device="cuda")
    in_pool = sum(s["total_size"] for s in pool.snapshot())
    ok = in_pool >= 4 * MiB and float((a - a).sum()) == 0 and b.numel() > 0
    del a
    return {"ok": ok, "pool_bytes_at_least_4MiB": in_pool >= 4 * MiB, "use_count": pool.use_count()}


_OWN_ALLOCATOR_SRC = r"""
#include <cuda_runtime_api.h>
#include <sys/types.h>
static int mallocs = 0, frees = 0;
extern "C" {
void* own_malloc(ssize_t size, int device, cudaStream_t stream) {
  void* ptr = nullptr;
  if (cudaMalloc(&ptr, size) != cudaSuccess) return nullptr;
  ++mallocs;
  return ptr;
}
void own_free(void* ptr, ssize_t size, int device, cudaStream_t stream) {
  cudaFree(ptr);
  ++frees;
}
int own_mallocs() { return mallocs; }
int own_frees() { return frees; }
}
"""


def case_mempool_own_allocator():
    """torch.cuda.MemPool(allocator=CUDAPluggableAllocator(...)) (vLLM's sleep
    mode, NCCL's symmetric memory): the pool's allocations come from that
    allocator and go back to it; other allocations do not."""
    import ctypes
    import shutil
    import subprocess
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        return {"skipped": "no nvcc to build the pool's allocator"}
    d = tempfile.mkdtemp()
    src, lib = os.path.join(d, "own_alloc.cu"), os.path.join(d, "own_alloc.so")
    with open(src, "w") as f:
        f.write(_OWN_ALLOCATOR_SRC)
    subprocess.run([nvcc, "-shared", "-Xcompiler", "-fPIC", "-o", lib, src], check=True)
    counts = ctypes.CDLL(lib)
    own = torch.cuda.memory.CUDAPluggableAllocator(lib, "own_malloc", "own_free")
    pool = torch.cuda.MemPool(own.allocator())
    with torch.cuda.use_mem_pool(pool):
        x = torch.full((4 * MiB // 4,), 3.0, device="cuda")
    in_pool = counts.own_mallocs()
    y = torch.ones(4 * MiB // 4, device="cuda")
    used_own = in_pool >= 1
    outside_not_own = counts.own_mallocs() == in_pool   # y came from the cache
    data_ok = float(x.sum()) == 3.0 * x.numel() and float(y.sum()) == y.numel()
    del x
    torch.cuda.synchronize()
    del pool
    torch.cuda.empty_cache()
    freed_back = counts.own_frees() >= 1
    return {"ok": used_own and data_ok and freed_back and outside_not_own,
            "used_own_allocator": used_own, "data_ok": data_ok,
            "freed_through_it": freed_back, "outside_not_own": outside_not_own,
            "own_mallocs": counts.own_mallocs()}


def case_mempool_use_on_oom():
    """MemPool(use_on_oom=True): out of memory (the process's memory fraction),
    an allocation outside the pool takes the pool's free memory, as PyTorch's
    allocator does; a plain MemPool lends nothing."""
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.empty_cache()
    torch.cuda.set_per_process_memory_fraction((512 * MiB) / total)
    outcomes = {}
    try:
        for use_on_oom in (False, True):
            pool = torch.cuda.MemPool(use_on_oom=use_on_oom)
            with torch.cuda.use_mem_pool(pool):
                x = torch.empty(400 * MiB, dtype=torch.uint8, device="cuda")
            del x                               # the pool keeps its memory
            try:
                y = torch.empty(300 * MiB, dtype=torch.uint8, device="cuda")
                outcomes[str(use_on_oom)] = "served"
                del y
            except torch.OutOfMemoryError:
                outcomes[str(use_on_oom)] = "out of memory"
            del pool
            torch.cuda.empty_cache()
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
    ok = outcomes == {"False": "out of memory", "True": "served"}
    return {"ok": ok, "outcomes": outcomes}


def case_profiler_memory():
    """torch.profiler with profile_memory=True sees the allocator's traffic."""
    from torch.profiler import ProfilerActivity, profile
    torch.empty(1, device="cuda")  # CUDA initialised outside the profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 profile_memory=True) as prof:
        x = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")
        y = x + 1
        del x, y
    usage = [e.device_memory_usage for e in prof.events() if e.device_memory_usage]
    seen = max(usage) if usage else 0
    return {"ok": seen >= 4 * MiB, "saw_4MiB_allocation": seen >= 4 * MiB}


def case_cross_stream_ordering():
    """Memory freed on one stream while a slow write to it is still queued,
    then asked for on another stream and written at once; then the same
    the other way round; then memory freed once its work is done, asked for
    on a stream that has memory of its own. With cross_stream_reuse:False
    (ccalloc-own) ccalloc lends nothing across streams. Lending wherever a
    stream would map (ccalloc-xs), it lends another stream's memory before
    that stream's work on it is done, ordered after that work on the
    device, and the late write may not land in the new tensor. The default
    (cross_stream_reuse:auto) lends as ccalloc-xs does where it would
    otherwise move memory: here every request, the cache holding no more
    than its peak."""
    n = 64 * MiB // 4
    b = torch.cuda.Stream()
    torch.cuda.synchronize()
    x = torch.empty(n, device="cuda")
    torch.cuda._sleep(200_000_000)        # the current stream stays busy
    x.fill_(2.0)                          # ... then writes x
    del x                                 # freed, the write still queued
    with torch.cuda.stream(b):
        y = torch.full((n,), 5.0, device="cuda")   # b asks at once
    torch.cuda.synchronize()
    y_ok = bool(torch.all(y == 5.0))
    del y
    torch.cuda.synchronize()
    with torch.cuda.stream(b):
        u = torch.empty(n, device="cuda")
        torch.cuda._sleep(200_000_000)
        u.fill_(3.0)
        del u                             # freed on b, the write still queued
    z = torch.full((n,), 7.0, device="cuda")       # the current stream asks
    torch.cuda.synchronize()
    z_ok = bool(torch.all(z == 7.0))
    # Done with: z's memory, freed and synchronized, may serve a new stream
    # (lent by default), which writes it while the current stream writes
    # memory of its own.
    c = torch.cuda.Stream()
    with torch.cuda.stream(c):
        t = torch.empty(2 * MiB, dtype=torch.uint8, device="cuda")  # c's own range
        del t
    del z
    torch.cuda.synchronize()
    with torch.cuda.stream(c):
        w = torch.full((n,), 9.0, device="cuda")
    v = torch.full((n,), 1.0, device="cuda")
    torch.cuda.synchronize()
    w_ok = bool(torch.all(w == 9.0)) and bool(torch.all(v == 1.0))
    counters = _ct.ccalloc_counters() if ALLOCATOR.startswith("ccalloc") else {}
    return {"ok": y_ok and z_ok and w_ok, "late_writes_kept_out": [y_ok, z_ok],
            "finished_lent_ok": w_ok, "borrowed": counters.get("num_cross_stream_reuses"),
            "device_waits": counters.get("num_device_waits")}


def case_cross_device():
    """tensor.to("cuda:1") and peer copies between two GPUs."""
    if torch.cuda.device_count() < 2:
        return {"ok": True, "skipped": "needs 2 GPUs"}
    a = torch.randn(8 * MiB // 4, device="cuda:0")
    b = a.to("cuda:1")
    c = torch.empty_like(a)
    c.copy_(b)
    d = torch.empty(8 * MiB // 4, device="cuda:1")
    d.copy_(a, non_blocking=True)
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)
    ok = bool(torch.equal(a, c)) and bool(torch.equal(d.cpu(), a.cpu()))
    return {"ok": ok, "peer": torch.cuda.can_device_access_peer(0, 1)}


def _ddp_worker(rank, world, port, results):
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    torch.manual_seed(6)
    model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 4)).cuda()
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    gen = torch.Generator(device="cuda").manual_seed(100 + rank)
    for _ in range(3):
        loss = ddp(torch.randn(32, 128, device="cuda", generator=gen)).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    checksum = float(sum(p.detach().double().sum() for p in model.parameters()))
    results.put((rank, checksum))
    dist.destroy_process_group()


def case_ddp():
    """DistributedDataParallel on two GPUs, one process each."""
    if torch.cuda.device_count() < 2:
        return {"ok": True, "skipped": "needs 2 GPUs"}
    import socket
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    results = ctx.SimpleQueue()
    procs = [ctx.Process(target=_ddp_worker, args=(r, 2, port, results)) for r in range(2)]
    for p in procs:
        p.start()
    got = dict(results.get() for _ in procs)
    for p in procs:
        p.join(120)
    ok = all(p.exitcode == 0 for p in procs) and got[0] == got[1]
    return {"ok": ok, "checksum": got[0]}


def case_amp_grad_scaler():
    """Mixed-precision training with torch.amp.GradScaler (fp16 autocast,
    scaled backward, unscale and clip, step and update)."""
    torch.manual_seed(10)
    model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    gen = torch.Generator(device="cuda").manual_seed(11)
    losses = []
    for _ in range(8):
        x = torch.randn(128, 256, device="cuda", generator=gen)
        y = torch.randint(0, 10, (128,), device="cuda", generator=gen)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        losses.append(round(float(loss), 4))
    return {"ok": all(l == l for l in losses), "losses": losses, "scale": scaler.get_scale()}


def case_record_stream_safety():
    """A tensor freed on the main stream while a slow kernel on a side stream
    still reads it (record_stream): memory handed out next on the main
    stream and written at once must not change what the side stream read."""
    n = 16 * MiB // 4
    main, side = torch.cuda.current_stream(), torch.cuda.Stream()
    src = torch.full((n,), 3.0, device="cuda")
    side.wait_stream(main)
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)   # keeps the read below queued
        total = src.sum()
    src.record_stream(side)
    del src
    # Same size, same stream: the cache would reuse the freed block at once
    # if it ignored the side stream's pending read.
    fresh = [torch.full((n,), -1.0, device="cuda") for _ in range(4)]
    torch.cuda.synchronize()
    got = float(total)
    return {"ok": got == 3.0 * n and all(float(t[0]) == -1.0 for t in fresh), "side_sum": got}


def case_threads():
    """Two Python threads training their own models on their own streams at
    once (the allocator is called from both)."""
    import threading
    results, errors = {}, []
    models = []
    for k in range(2):  # made here: the global seed is not per thread
        torch.manual_seed(20 + k)
        models.append(torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.ReLU(),
                                          torch.nn.Linear(2048, 512)).cuda())
    torch.cuda.synchronize()

    def train(k):
        try:
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                model = models[k]
                opt = torch.optim.SGD(model.parameters(), lr=0.01)
                gen = torch.Generator(device="cuda").manual_seed(30 + k)
                for step in range(40):
                    x = torch.randn(64 + 32 * (step % 5), 512, device="cuda", generator=gen)
                    loss = model(x).square().mean()
                    loss.backward()
                    opt.step()
                    opt.zero_grad(set_to_none=True)
                stream.synchronize()
                results[k] = float(sum(p.detach().double().sum() for p in model.parameters()))
        except Exception as e:  # reported, not swallowed: the case fails
            errors.append(repr(e))

    threads = [threading.Thread(target=train, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"ok": not errors and len(results) == 2, "errors": errors,
            "checksums": [results.get(k) for k in range(2)]}


def case_dlpack():
    """A tensor exported through DLPack and __cuda_array_interface__ and
    consumed back: same memory, writes seen both ways, freed once."""
    a = torch.arange(1 << 20, device="cuda", dtype=torch.float32)
    b = torch.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(a))
    iface = a.__cuda_array_interface__
    b[7] = -7.0
    same = b.data_ptr() == a.data_ptr() == iface["data"][0]
    ok = same and float(a[7]) == -7.0
    del a
    ok = ok and float(b[8]) == 8.0   # b keeps the memory alive
    return {"ok": ok, "same_pointer": same}


def case_raw_alloc():
    """torch.cuda.caching_allocator_alloc / _delete, the raw path extensions
    use, on the current and on a given stream."""
    stream = torch.cuda.Stream()
    p = torch.cuda.caching_allocator_alloc(4 * MiB)
    q = torch.cuda.caching_allocator_alloc(1000, stream=stream)
    ok = p != 0 and q != 0 and p != q
    before = torch.cuda.memory_allocated()
    torch.cuda.caching_allocator_delete(p)
    torch.cuda.caching_allocator_delete(q)
    after = torch.cuda.memory_allocated()
    return {"ok": ok and after < before, "freed": after < before}


def case_allocator_settings():
    """PYTORCH_CUDA_ALLOC_CONF's keys set at run time, as test_allocator_settings
    does (torch.cuda.memory._set_allocator_settings): the block a request gets
    under roundup_power2_divisions (one value, then the array syntax), the keys
    a later call leaves out going back to their defaults, max_split_size_mb in
    memory_stats, PyTorch's other keys accepted; what an unknown key does (the
    error, and the block a request gets after it) is compared with native's;
    and caching_allocator_enable(False), which makes requests bypass the cache
    (test_cachingAllocator_raw_alloc)."""
    key = "active_bytes.all.allocated"
    held = []

    def block_for(nbytes):
        """Bytes the request's block took (the allocator's rounding)."""
        # (PyTorch's memory_stats() is empty until its allocator has
        # served a request.)
        before = torch.cuda.memory_stats().get(key, 0)
        held.append(torch.empty(nbytes, dtype=torch.uint8, device="cuda"))
        return torch.cuda.memory_stats()[key] - before

    n, big = 84 * MiB, 400 * MiB
    torch.cuda.empty_cache()
    blocks = {}
    for label, conf, size in (
            ("default", "", n),
            ("div4", "roundup_power2_divisions:4", n),
            ("others_reset", "garbage_collection_threshold:0.5,max_split_size_mb:40", n)):
        torch.cuda.memory._set_allocator_settings(conf)
        blocks[label] = block_for(size)
    split = torch.cuda.memory_stats().get("max_split_size")
    torch.cuda.memory._set_allocator_settings(
        "garbage_collection_threshold:0.5,roundup_power2_divisions:[64:8,128:2,256:2,512:2,1024:1,>:1]")
    blocks["array_84MiB"] = block_for(n)
    blocks["array_400MiB"] = block_for(big)
    try:
        torch.cuda.memory._set_allocator_settings("foo:1,bar:2")
        unknown = "accepted"
    except Exception as e:  # noqa: BLE001 (the type is compared with native's)
        unknown = type(e).__name__
    blocks["after_refusal"] = block_for(n)
    try:
        torch.cuda.memory._set_allocator_settings("release_lock_on_cudamalloc:True")
        other_keys = "accepted"
    except Exception as e:  # noqa: BLE001
        other_keys = type(e).__name__
    blocks["after_other_keys"] = block_for(n)
    torch.cuda.memory._set_allocator_settings("")
    del held[:]
    torch.cuda.empty_cache()

    def requested_by_raw_alloc(nbytes):
        stream = torch.cuda.current_stream().cuda_stream
        start = torch.cuda.memory_stats()["requested_bytes.all.allocated"]
        ptr = torch._C._cuda_cudaCachingAllocator_raw_alloc(nbytes, stream)
        counted = torch.cuda.memory_stats()["requested_bytes.all.allocated"] - start
        torch._C._cuda_cudaCachingAllocator_raw_delete(ptr)
        return counted
    try:
        torch.cuda.caching_allocator_enable(False)
        uncached = requested_by_raw_alloc(MiB)
    finally:
        torch.cuda.caching_allocator_enable(True)
    cached = requested_by_raw_alloc(MiB)
    ok = (blocks["default"] == n and blocks["div4"] == 96 * MiB and blocks["others_reset"] == n
          and blocks["array_84MiB"] == 88 * MiB and blocks["array_400MiB"] == 512 * MiB
          and other_keys == "accepted" and blocks["after_other_keys"] == n
          and uncached == 0 and cached == MiB)
    return {"ok": ok, "blocks": blocks, "max_split_size": split, "other_keys": other_keys,
            "unknown_key": unknown, "uncached_requested": uncached, "cached_requested": cached}


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    result = CASES[sys.argv[1]]()
    result["allocator"] = _allocator_name()
    print("RESULT " + json.dumps(result), flush=True)

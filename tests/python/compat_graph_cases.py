"""The CUDA-graph and pool-state cases of compat_cases.py (which imports
them into its CASES and runs them the same way, one per process, under the
allocator it enabled): graph temporaries and shared pools, a graph's result
after the graph is gone, make_graphed_callables, capture on several streams,
and cudagraph trees' checkpointed pool state."""

import os

import torch

MiB = 1 << 20


def _warm_then_capture(f, x, pool=None):
    """f(x) three times on a side stream, as PyTorch asks before a capture
    (cuBLAS makes its handle and workspace at the first matmul, which a
    capture refuses), then f(x) captured (into `pool` when given): the graph
    and its output."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            f(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, pool=pool):
        out = f(x)
    return graph, out


def case_graph_temporaries():
    """A captured graph whose temporaries are freed during capture, then eager
    tensors of the same sizes, then five replays with new inputs."""
    torch.manual_seed(0)
    # Smaller under compute-sanitizer, which checks every access of every kernel.
    n = 256 if os.environ.get("CCALLOC_COMPAT_SMALL") else 1024
    x = torch.randn(n, n, device="cuda")
    w = torch.randn(n, n, device="cuda") / n ** 0.5

    def f(inp):
        return ((inp @ w).relu() * 2 + 1).softmax(-1) @ w

    graph, out = _warm_then_capture(f, x)
    # Eager tensors of the sizes the graph's temporaries had: they must not
    # get the graph's memory, or a replay overwrites them.
    eager = [torch.full((n, n), float(i), device="cuda") for i in range(8)]
    small = [torch.full((1000,), float(i), device="cuda") for i in range(8)]
    diffs = []
    for step in range(5):
        x.copy_(torch.randn(n, n, device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
        diffs.append(float((out - f(x)).abs().max()))
    eager_ok = all(bool(torch.all(t == i)) for i, t in enumerate(eager)) and all(
        bool(torch.all(t == i)) for i, t in enumerate(small))
    reserved_before = torch.cuda.memory_reserved()
    del graph, out
    torch.cuda.empty_cache()
    return {"ok": eager_ok and max(diffs) < 1e-4, "eager_unchanged": eager_ok,
            "max_diff": max(diffs), "reserved_dropped": torch.cuda.memory_reserved() < reserved_before}


def case_graph_shared_pool():
    """Two graphs sharing one private pool (graph_pool_handle), replayed in
    capture order; then the pool is released."""
    torch.manual_seed(1)
    x = torch.randn(512, 512, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        # Warm-up, as PyTorch asks: cuBLAS creates its handle and workspace on
        # the first matmul, which a capture does not allow.
        y = (x * 2 + 1).tanh()
        (y @ y).relu().sum(0)
    torch.cuda.current_stream().wait_stream(side)
    pool = torch.cuda.graph_pool_handle()
    g1, g2 = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    with torch.cuda.graph(g1, pool=pool):
        y = (x * 2 + 1).tanh()
    with torch.cuda.graph(g2, pool=pool):
        z = (y @ y).relu().sum(0)
    keep = torch.full((512, 512), 7.0, device="cuda")
    ok = True
    for _ in range(5):
        x.copy_(torch.randn(512, 512, device="cuda"))
        g1.replay()
        g2.replay()
        torch.cuda.synchronize()
        ref = ((x * 2 + 1).tanh() @ (x * 2 + 1).tanh()).relu().sum(0)
        ok = ok and bool(torch.allclose(z, ref, rtol=1e-4, atol=1e-3))
    ok = ok and bool(torch.all(keep == 7.0))
    return {"ok": ok}


def _graph_result_after_destroy_steps():
    import gc
    elem = 4
    deltas, sums_ok = [], True
    s = torch.cuda.Stream()
    gc.collect()
    torch.cuda.empty_cache()
    for numel in (512 // elem, MiB // elem, (MiB + 512) // elem, (10 * MiB - 512) // elem,
                  (10 * MiB + 512) // elem):
        g = torch.cuda.CUDAGraph()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            a = torch.ones((numel,), device="cuda")
            before = torch.cuda.memory_stats()
            g.capture_begin()
            b = a.clone()
            for _ in range(5):
                b = b.clone() + 1
            g.capture_end()
        torch.cuda.current_stream().wait_stream(s)
        gc.collect()
        for i in range(2):
            g.replay()
            sums_ok = sums_ok and b.sum().item() == 6 * numel
            if i == 0:
                torch.cuda.empty_cache()
        del g
        gc.collect()
        torch.cuda.empty_cache()
        after = torch.cuda.memory_stats()
        sums_ok = sums_ok and b.sum().item() == 6 * numel  # the result outlives its graph
        deltas.append({k: after.get(k, 0) - before.get(k, 0)
                       for k in ("active.all.current", "active_bytes.all.current",
                                 "allocated_bytes.all.current")})
        del a, b
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return sums_ok, deltas


def case_graph_result_after_destroy():
    """PyTorch's test_graph_memory_stats_and_use_result_after_destroy_graph,
    its sizes and its order: a graph's result, used after the graph is gone
    and the cache emptied; the stat deltas it reads, for comparison. Once on
    the default stream, once with a side stream current, as PyTorch's TestCuda
    runs every test (_do_cuda_non_default_stream)."""
    sums_default, deltas = _graph_result_after_destroy_steps()
    previous = torch.cuda.current_stream()
    torch.cuda.set_stream(torch.cuda.Stream())
    try:
        sums_side, deltas_side = _graph_result_after_destroy_steps()
    finally:
        torch.cuda.set_stream(previous)
    torch.cuda.synchronize()
    ok = sums_default and sums_side
    return {"ok": ok, "sums_ok": [sums_default, sums_side], "deltas_after_destroy": deltas,
            "deltas_after_destroy_side_stream": deltas_side}


def case_graphed_callables():
    """torch.cuda.make_graphed_callables: a module's forward and backward
    captured as graphs (their own private pool), then trained with new inputs
    against the same module run eagerly."""
    import copy
    torch.manual_seed(7)
    model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.GELU(),
                                torch.nn.Linear(256, 128)).cuda()
    eager = copy.deepcopy(model)
    sample = torch.randn(32, 128, device="cuda", requires_grad=True)
    graphed = torch.cuda.make_graphed_callables(model, (sample,))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    eager_opt = torch.optim.SGD(eager.parameters(), lr=0.05)
    gen = torch.Generator(device="cuda").manual_seed(8)
    losses, eager_losses = [], []
    for _ in range(6):
        x = torch.randn(32, 128, device="cuda", generator=gen, requires_grad=True)
        for m, o, out in ((graphed, opt, losses), (eager, eager_opt, eager_losses)):
            loss = m(x).square().mean()
            loss.backward()
            o.step()
            o.zero_grad(set_to_none=True)
            out.append(float(loss))
    gap = max(abs(a - b) for a, b in zip(losses, eager_losses))
    return {"ok": gap < 1e-4, "max_gap_to_eager": gap, "steps": len(losses)}


def case_graph_multistream_capture():
    """A capture that forks work onto a second stream and joins it back:
    the side stream's temporaries belong to the capture's pool, and eager
    tensors made afterwards must not share their memory."""
    torch.manual_seed(9)
    x = torch.randn(1024, 1024, device="cuda")
    w = torch.randn(1024, 1024, device="cuda") / 32
    side = torch.cuda.Stream()

    def f(inp):
        main = torch.cuda.current_stream()
        side.wait_stream(main)
        with torch.cuda.stream(side):
            a = (inp @ w).relu()          # allocated on the side stream
        b = (inp * 2).sigmoid()
        main.wait_stream(side)
        return a + b

    graph, out = _warm_then_capture(f, x)
    eager = [torch.full((1024, 1024), float(i), device="cuda") for i in range(6)]
    diffs = []
    for _ in range(4):
        x.copy_(torch.randn(1024, 1024, device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
        diffs.append(float((out - f(x)).abs().max()))
    eager_ok = all(bool(torch.all(t == i)) for i, t in enumerate(eager))
    return {"ok": eager_ok and max(diffs) < 1e-4, "eager_unchanged": eager_ok,
            "max_diff": max(diffs)}


def case_checkpoint_state():
    """cudagraph trees' checkpointed pool state, as TestBlockStateAbsorption
    uses it (torch._C._cuda_getCheckpointState / _cuda_setCheckpointPoolState):
    a graph's pool checkpointed with its outputs live, then changed by a
    second graph allocating into it, set back (the second graph's output
    passed as stale): the pool's segments and blocks are as they were; and a
    checkpoint whose outputs died before it is set back holds their blocks
    live until each is freed by address."""
    def pool_segments(pool):
        return [s for s in torch.cuda.memory_snapshot() if s["segment_pool_id"] == pool]

    def shape(segments):
        return sorted((s["address"], s["total_size"], s["allocated_size"], s["active_size"],
                       tuple((b["size"], b["state"]) for b in s["blocks"])) for s in segments)

    def live_blocks(pool):
        return sum(b["state"] == "active_allocated" for s in pool_segments(pool)
                   for b in s["blocks"])

    def capture(fn, pool=None):
        graph, outputs = _warm_then_capture(lambda _: fn(), None, pool=pool)
        torch.cuda.synchronize()
        return graph, outputs

    def small_outputs():
        return tuple(torch.ones([512], device="cuda", dtype=torch.uint8) for _ in range(3))

    device = torch.cuda.current_device()
    graph, outputs = capture(small_outputs)
    pool = graph.pool()
    before = shape(pool_segments(pool))
    state = torch._C._cuda_getCheckpointState(device, pool)
    graph2, outputs2 = capture(lambda: (torch.ones([512], device="cuda", dtype=torch.uint8),),
                               pool=pool)
    changed = shape(pool_segments(pool)) != before
    torch._C._cuda_setCheckpointPoolState(
        device, state, [t.untyped_storage()._cdata for t in outputs2], [])
    del outputs2
    restored = shape(pool_segments(pool)) == before

    graph3, outputs3 = capture(lambda: (torch.ones([512], device="cuda", dtype=torch.uint8),
                                        torch.ones([512], device="cuda", dtype=torch.uint8)))
    pool3 = graph3.pool()
    state3 = torch._C._cuda_getCheckpointState(device, pool3)
    ptrs = [t.data_ptr() for t in outputs3]
    del outputs3
    freed_before_restore = live_blocks(pool3)
    torch._C._cuda_setCheckpointPoolState(device, state3, [], [])
    live = [live_blocks(pool3)]
    for ptr in ptrs:
        torch._C._cuda_cudaCachingAllocator_raw_delete(ptr)
        live.append(live_blocks(pool3))
    ok = changed and restored and freed_before_restore == 0 and live == [2, 1, 0]
    return {"ok": ok, "changed_by_second_graph": changed, "restored": restored,
            "live_after_outputs_died": freed_before_restore, "live_blocks_restored_then_freed": live}

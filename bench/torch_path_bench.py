"""Host time per tensor allocation and free through PyTorch's own path
(torch.empty / tensor destruction: the CUDAAllocator interface, the deleter),
per allocator, one child process each, interleaved rounds.

The micro-benchmarks (gpu_round.sh bench) time the allocators' C++ entry
points; a training step pays for the whole path PyTorch takes to reach them.
This times that path: a churn of --window live tensors of sizes drawn from
512 B..32 MiB (the same mix every process), --ops allocations, and prints the
mean ns per allocate+free pair for each allocator and the ratio to PyTorch's
expandable_segments, and for ccalloc the driver calls (maps, unmaps, creates,
releases, stream waits) its policy made per 1,000 timed pairs.

Usage: python3 bench/torch_path_bench.py [--rounds 3] [--ops 200000]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

CONFIGS = {
    "native": {"PYTORCH_CUDA_ALLOC_CONF": ""},
    "native_expandable": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
    "ccalloc": {"CCALLOC_ENABLE": "1"},
    "ccalloc_classic": {"CCALLOC_ENABLE": "1", "CCALLOC_CONF": "expandable_segments:False"},
}


CALLS = ("num_maps", "num_unmaps", "num_device_alloc", "num_device_free", "num_stream_syncs")


def child(a):
    counters = lambda: None  # noqa: E731 (PyTorch's allocators: no counters)
    if os.environ.get("CCALLOC_ENABLE"):
        import ccalloc.torch as ct
        ct.enable()
        counters = lambda: {k: ct.ccalloc_counters().get(k, 0) for k in CALLS}  # noqa: E731
    import torch
    rng = random.Random(0)
    if a.pattern == "hot":  # one size over and over: the path alone, no policy
        sizes = [1024] * a.ops
    else:
        sizes = [int(2 ** rng.uniform(9, 25)) // 4 for _ in range(a.ops)]
    slots = [None] * a.window
    for s in sizes[: a.window]:  # warm the cache with the same mix
        slots[rng.randrange(a.window)] = torch.empty(s, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    picks = [rng.randrange(a.window) for _ in range(a.ops)]
    for _ in range(a.warm):  # the same pairs untimed first: reuse, not growth
        for s, i in zip(sizes, picks):
            slots[i] = torch.empty(s, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    before = counters()
    t0 = time.perf_counter()
    for s, i in zip(sizes, picks):
        slots[i] = torch.empty(s, dtype=torch.float32, device="cuda")
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    after = counters()
    out = {"ns_per_pair": (t1 - t0) / a.ops * 1e9}
    if before is not None:
        # ccalloc's driver calls during the timed pairs, per 1,000 pairs: the
        # path's cost apart from the policy's.
        out["calls_per_1k_pairs"] = {k: 1000.0 * (after[k] - before[k]) / a.ops for k in CALLS}
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--ops", type=int, default=200000)
    p.add_argument("--window", type=int, default=1000)
    p.add_argument("--warm", type=int, default=0,
                   help="untimed passes over the same pairs first (0: the timed pairs include "
                        "the growth from the prefill to the window's live set)")
    p.add_argument("--pattern", choices=("churn", "hot"), default="churn")
    p.add_argument("--child", action="store_true")
    p.add_argument("--out", default=None)
    a = p.parse_args()
    if a.child:
        return child(a)
    res = {k: [] for k in CONFIGS}
    calls = {}
    for _ in range(a.rounds):
        for name, env in CONFIGS.items():
            e = dict(os.environ)
            e.pop("PYTORCH_CUDA_ALLOC_CONF", None)
            e.pop("CCALLOC_CONF", None)
            e.update({k: v for k, v in env.items() if v})
            out = subprocess.run([sys.executable, __file__, "--child", "--ops", str(a.ops),
                                  "--window", str(a.window), "--pattern", a.pattern,
                                  "--warm", str(a.warm)], env=e, capture_output=True,
                                 text=True, timeout=300)
            if out.returncode != 0:
                print(name, "failed:", out.stderr[-2000:])
                continue
            row = json.loads(out.stdout.strip().splitlines()[-1])
            res[name].append(row["ns_per_pair"])
            if "calls_per_1k_pairs" in row:
                calls.setdefault(name, []).append(row["calls_per_1k_pairs"])
    base = statistics.mean(res["native_expandable"]) if res["native_expandable"] else None
    summary = {}
    for name, v in res.items():
        if not v:
            continue
        m = statistics.mean(v)
        summary[name] = {"mean_ns": m, "rounds": v, "vs_expandable": m / base if base else None}
        if name in calls:
            summary[name]["calls_per_1k_pairs"] = calls[name]
        print(f"{a.pattern:5s} {name:18s} {m:8.1f} ns per torch.empty + free  (rounds {', '.join(f'{x:.0f}' for x in v)})"
              + (f"  {m / base:.3f}x expandable" if base else ""))
        for r in calls.get(name, []):
            print(f"      driver calls per 1,000 pairs: " + ", ".join(f"{k} {v:.2f}" for k, v in r.items()))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()

"""Host time per tensor allocation and free through PyTorch's own path
(torch.empty / tensor destruction: the CUDAAllocator interface, the deleter),
per allocator, one child process each, interleaved rounds.

The micro-benchmarks (gpu_round.sh bench) time the allocators' C++ entry
points; a training step pays for the whole path PyTorch takes to reach them.
This times that path: a churn of --window live tensors of sizes drawn from
512 B..32 MiB (the same mix every process), --ops allocations, and prints the
mean ns per allocate+free pair for each allocator and the ratio to PyTorch's
expandable_segments.

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


def child(a):
    if os.environ.get("CCALLOC_ENABLE"):
        import ccalloc.torch as ct
        ct.enable()
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
    t0 = time.perf_counter()
    for s, i in zip(sizes, picks):
        slots[i] = torch.empty(s, dtype=torch.float32, device="cuda")
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    print(json.dumps({"ns_per_pair": (t1 - t0) / a.ops * 1e9}))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--ops", type=int, default=200000)
    p.add_argument("--window", type=int, default=1000)
    p.add_argument("--pattern", choices=("churn", "hot"), default="churn")
    p.add_argument("--child", action="store_true")
    p.add_argument("--out", default=None)
    a = p.parse_args()
    if a.child:
        return child(a)
    res = {k: [] for k in CONFIGS}
    for _ in range(a.rounds):
        for name, env in CONFIGS.items():
            e = dict(os.environ)
            e.pop("PYTORCH_CUDA_ALLOC_CONF", None)
            e.pop("CCALLOC_CONF", None)
            e.update({k: v for k, v in env.items() if v})
            out = subprocess.run([sys.executable, __file__, "--child", "--ops", str(a.ops),
                                  "--window", str(a.window), "--pattern", a.pattern], env=e, capture_output=True,
                                 text=True, timeout=300)
            if out.returncode != 0:
                print(name, "failed:", out.stderr[-2000:])
                continue
            res[name].append(json.loads(out.stdout.strip().splitlines()[-1])["ns_per_pair"])
    base = statistics.mean(res["native_expandable"]) if res["native_expandable"] else None
    summary = {}
    for name, v in res.items():
        if not v:
            continue
        m = statistics.mean(v)
        summary[name] = {"mean_ns": m, "rounds": v, "vs_expandable": m / base if base else None}
        print(f"{a.pattern:5s} {name:18s} {m:8.1f} ns per torch.empty + free  (rounds {', '.join(f'{x:.0f}' for x in v)})"
              + (f"  {m / base:.3f}x expandable" if base else ""))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Step time and memory of DistributedDataParallel training under each
allocator: one process per GPU, a fresh process group per run.

    python3 bench/ddp_step_time.py [--gpus 2] [--rounds 3] [--steps 45] \\
        [--configs native_expandable,ccalloc,ccalloc_own] --out ddp.json

Why: ccalloc lends memory between streams where it would otherwise move it
(cross_stream_reuse:auto), ordering the two streams on the device at such
steps. DDP overlaps its gradient all-reduce (NCCL's own stream) with the
backward pass, so that ordering is where DDP could lose time. This runs a GPT-2
sized transformer LM (12 layers, 768 wide, 32k vocabulary, bf16 autocast,
AdamW) whose sequence length changes every step (128..1024, the same sequence
on every rank and under every allocator), wrapped in DDP with its default
buckets, and times every step of rank 0 (a synchronize at each step's end, as
a loss read would). Rounds are interleaved and the order of the allocators
turns with the round; each run is a new set of processes, so no allocator
inherits another's state.

The configurations are bench/compare_training.py's (its CONFIGS, installed
the same way) and ccalloc_own. The output's "runs" are those of
compare_training.py (workload "ddp_lm", config, round, step_ms, mean_step_ms
after warm-up, peak_allocated and peak_reserved: rank 0's), so
bench/pool_rounds.py pools them; every rank's peaks and ccalloc's counters
are kept per run as well.
"""

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time

from compare_training import (BASELINE, CONFIGS, child_env, decoder_lm, good_runs,  # noqa: E402
                              paired_rounds, setup_allocator, start_order)

WORKLOAD = "ddp_lm"
# Beside compare_training.py's configurations: the default without its loans
# between streams, what DDP's NCCL stream would see under PyTorch's contract.
# (Registered at import, so the ranks, which import this file again, know it.)
CONFIGS["ccalloc_own"] = {"ccalloc_conf": "cross_stream_reuse:False"}
COUNTERS = ("num_maps", "num_cross_stream_reuses", "num_device_waits", "prepare_ns", "wait_ns")


def lengths(steps, seed):
    """The sequence length of every step: the same on every rank and run."""
    rng = random.Random(seed)
    return [rng.randint(128, 1024) for _ in range(steps)]


def summarize(runs, baseline=BASELINE):
    """Per configuration: rounds, mean step ms, the mean of the round ratios
    against the baseline's run of the same round (compare_training.py's
    pairing), and the worst peak reserved over peak allocated on any rank."""
    ok = good_runs(runs)
    base = [r for r in ok if r["config"] == baseline]
    out = []
    for config in dict.fromkeys(r["config"] for r in ok):
        rs = [r for r in ok if r["config"] == config]
        ratios = [r["mean_step_ms"] / b for r, b in paired_rounds(rs, base)]
        out.append({
            "config": config, "rounds": len(rs),
            "mean_step_ms": statistics.mean(r["mean_step_ms"] for r in rs),
            "vs_baseline": statistics.mean(ratios) if ratios else None,
            "vs_baseline_rounds": ratios,
            "reserved_over_allocated": max(max(x["peak_reserved"] / x["peak_allocated"]
                                               for x in r["ranks"]) for r in rs),
        })
    return out


# --- one rank ---------------------------------------------------------------------

def rank_main(rank, world, port, config, steps, warmup, seed, library, queue):
    ct = setup_allocator(config, library)
    import torch
    import torch.distributed as dist
    F = torch.nn.functional
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    vocab, d, heads, layers, batch = 32000, 768, 12, 12, 8
    torch.manual_seed(seed)
    model = torch.nn.parallel.DistributedDataParallel(
        decoder_lm(torch, vocab, d, heads, layers, 1024, tied=False).cuda(), device_ids=[rank])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator(device="cuda").manual_seed(seed + rank)
    step_ms = []
    for seq in lengths(steps, seed):
        # A plain training loop's body, not compare_training.py's step
        # function: `logits` lives on into the next step's forward, as a
        # loop variable does, and that is part of the memory measured here.
        start = time.perf_counter()
        ids = torch.randint(0, vocab, (batch, seq), device="cuda", generator=gen)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids)
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, vocab), ids[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        step_ms.append((time.perf_counter() - start) * 1e3)
    stats = ct if ct is not None else torch.cuda
    out = {"rank": rank, "step_ms": step_ms, "peak_allocated": stats.max_memory_allocated(),
           "peak_reserved": stats.max_memory_reserved(), "final_loss": float(loss)}
    if ct is not None:
        counters = ct.ccalloc_counters()
        out["counters"] = {k: counters.get(k) for k in COUNTERS}
    dist.destroy_process_group()
    queue.put(out)


def run_once(args, config, rnd, position):
    """One run: a process per GPU, as a child of a fresh interpreter so that
    the allocator is installed before CUDA starts."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = child_env(config)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", config, "--port", str(port),
           "--gpus", str(args.gpus), "--steps", str(args.steps), "--warmup", str(args.warmup),
           "--seed", str(args.seed)]
    if args.library:
        cmd += ["--library", args.library]
    base = {"workload": WORKLOAD, "config": config, "round": rnd, "start_position": position,
            "steps": args.steps, "warmup": args.warmup}
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return dict(base, error=f"timed out after {args.timeout} s")
    lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
    if done.returncode != 0 or not lines:
        return dict(base, error=f"exit {done.returncode}: {done.stderr[-2000:]}")
    ranks = sorted(json.loads(lines[-1])["ranks"], key=lambda r: r["rank"])
    timed = ranks[0]["step_ms"][args.warmup:]
    return dict(base, step_ms=ranks[0]["step_ms"], mean_step_ms=statistics.mean(timed),
                stdev_step_ms=statistics.stdev(timed) if len(timed) > 1 else 0.0,
                peak_allocated=ranks[0]["peak_allocated"], peak_reserved=ranks[0]["peak_reserved"],
                reserved_over_allocated=ranks[0]["peak_reserved"] / ranks[0]["peak_allocated"],
                ranks=ranks)


def child(args):
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    procs = [ctx.Process(target=rank_main, args=(r, args.gpus, args.port, args.child, args.steps,
                                                 args.warmup, args.seed, args.library, queue))
             for r in range(args.gpus)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    if any(p.exitcode != 0 for p in procs):
        sys.exit(f"a rank failed: exit codes {[p.exitcode for p in procs]}")
    print(json.dumps({"ranks": [queue.get() for _ in procs]}))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", default="native_expandable,ccalloc,ccalloc_own")
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=45)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=300, help="seconds a run may take")
    ap.add_argument("--time-budget", type=float, default=0,
                    help="seconds: begin no round that the longest round so far would not "
                         "finish within (0: no budget)")
    ap.add_argument("--library", default=os.environ.get("CCALLOC_TORCH_LIBRARY"))
    ap.add_argument("--out")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args)
    configs = args.configs.split(",")
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        ap.error(f"unknown configuration(s) {unknown}; known: {sorted(CONFIGS)}")
    if args.warmup >= args.steps:
        ap.error("--warmup must be below --steps")
    start, longest, runs = time.monotonic(), 0.0, []
    for rnd in range(args.rounds):
        if args.time_budget and time.monotonic() - start + longest > args.time_budget:
            print(f"round {rnd}: skipped, the time budget would not hold it", flush=True)
            break
        began = time.monotonic()
        for position, i in enumerate(start_order(len(configs), rnd)):
            config = configs[i]
            run = run_once(args, config, rnd, position)
            runs.append(run)
            print(f"round {rnd} {config:18} " + (f"error: {run['error'][-300:]}" if "error" in run
                  else f"{run['mean_step_ms']:8.1f} ms/step, reserved/allocated "
                       f"{run['reserved_over_allocated']:.4f}"), flush=True)
        longest = max(longest, time.monotonic() - began)
    summary = summarize(runs)
    print(f"{'config':18} {'rounds':>6} {'mean ms':>8} {'vs ' + BASELINE:>22} {'resv/alloc':>10}")
    for s in summary:
        ratio = "-" if s["vs_baseline"] is None else f"{s['vs_baseline']:.3f}"
        print(f"{s['config']:18} {s['rounds']:6d} {s['mean_step_ms']:8.1f} {ratio:>22} "
              f"{s['reserved_over_allocated']:10.4f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"args": vars(args), "runs": runs, "summary": summary}, f, indent=1)
    return 1 if any("error" in r for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Where a training step's host time goes when its shapes repeat.

bench/compare_training.py draws a new shape for most steps of gpt2, ckpt_lm and
two_streams (sequence lengths from hundreds), so every timed step meets shapes
cuDNN and cuBLAS have not seen: their plan building is most of the host's time
there. This probe trains one workload (as compare_training builds it) on its
first --shapes step shapes, --passes times over, under one allocator, and prints
per pass the mean step time, the host's launch time and, under ccalloc, the
driver work per step (chunks mapped, prepare / wait / worker ms from
ccalloc_counters()); then one more pass under torch.profiler (CPU), its top
host ops, and a last pass after it.

  python3 bench/probes/shape_repeat_probe.py native_expandable two_streams
  python3 bench/probes/shape_repeat_probe.py ccalloc two_streams

Run each allocator in its own process (PyTorch reads its allocator settings
once); interleave the runs to see the spread.
"""
import argparse
import os
import random
import sys
import time

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)  # compare_training.py is in bench/
import compare_training as ctm  # noqa: E402  (the workloads and allocator set-up)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("config", choices=sorted(ctm.CONFIGS))
    p.add_argument("workload", choices=ctm.WORKLOADS)
    p.add_argument("--shapes", type=int, default=6, help="distinct step shapes per pass")
    p.add_argument("--passes", type=int, default=4, help="timed passes before the profiled one")
    p.add_argument("--ops", type=int, default=25, help="host ops listed from the profile")
    p.add_argument("--no-profile", dest="profile", action="store_false",
                   help="skip the profiled pass and the one after it (timed passes only)")
    args = p.parse_args(argv)
    torch_conf = ctm.CONFIGS[args.config].get("torch_conf")
    if torch_conf:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = torch_conf
    ct = ctm.setup_allocator(args.config, None)
    import torch
    wargs = ctm.parse_args(["--workloads", args.workload, "--steps", str(args.shapes + 2),
                            "--warmup", "1"])
    torch.backends.cudnn.benchmark = False
    torch.manual_seed(wargs.seed)
    step, shapes = ctm.BUILDERS[args.workload](torch, wargs, random.Random(wargs.seed))
    first, timed = shapes[:2], shapes[2:2 + args.shapes]

    keys = ("num_maps", "prepare_ns", "wait_ns", "worker_ns", "map_ns", "create_ns",
            "foreground_unmap_ns", "num_foreground_unmaps")

    def counters():
        c = ct.ccalloc_counters() if ct else {}
        return {k: c.get(k, 0) for k in keys}

    def one_pass(tag):
        torch.cuda.synchronize()
        c0, t0, launch = counters(), time.perf_counter(), 0.0
        for shape in timed:
            a = time.perf_counter()
            step(shape)
            launch += time.perf_counter() - a
            torch.cuda.synchronize()
        n = len(timed)
        wall = (time.perf_counter() - t0) * 1e3 / n
        c1 = counters()
        calls = ""
        if ct:
            d = {k: (c1[k] - c0[k]) / n for k in keys}
            calls = (f"  maps/step {d['num_maps']:.1f}  prepare {d['prepare_ns'] / 1e6:.2f} ms"
                     f"  wait {d['wait_ns'] / 1e6:.2f} ms  worker {d['worker_ns'] / 1e6:.2f} ms"
                     f"  (in prepare: map {d['map_ns'] / 1e6:.2f} create {d['create_ns'] / 1e6:.2f}"
                     f" fg unmaps {d['num_foreground_unmaps']:.1f} {d['foreground_unmap_ns'] / 1e6:.2f} ms)")
        print(f"{args.config} {args.workload} {tag}: {wall:.1f} ms/step"
              f" (launch {launch * 1e3 / n:.1f}){calls}", flush=True)

    for shape in first:
        step(shape)
    for k in range(args.passes):
        one_pass(f"pass {k}")
    if not args.profile:
        return 0
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        one_pass("profiled")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.ops,
                                    max_name_column_width=48))
    one_pass("after")
    return 0


if __name__ == "__main__":
    sys.exit(main())

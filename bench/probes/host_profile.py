"""Where a training step's host time goes, per allocator: one child process
per (workload, allocator), the same seeded shapes, the launching thread's
time split by operator and by CUDA call (torch.profiler), and the Python
garbage collector's pauses inside the steps.

compare_training.py shows that a host-bound step is slower with one
allocator than another (its 'launch' column); this says in what. The
profiled steps run after the timed ones, so the profiler's own cost does not
touch the launch times reported.

Usage: python3 bench/probes/host_profile.py --workloads two_streams,ckpt_lm \
           [--configs native_expandable,ccalloc] [--steps 12] [--profile-steps 4]
           [--ccalloc-config NAME=CONF ...] [--out FILE]
"""
import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)  # compare_training.py is in bench/
import compare_training as ctr  # noqa: E402  (the workloads and allocator setup)


class GcClock:
    """Time the collector spends in collections, from gc.callbacks."""

    def __init__(self):
        self.ns, self.collections, self._start = 0, 0, None
        gc.callbacks.append(self._callback)

    def _callback(self, phase, info):
        if phase == "start":
            self._start = time.perf_counter_ns()
        elif self._start is not None:
            self.ns += time.perf_counter_ns() - self._start
            self.collections += 1
            self._start = None


def child(args):
    ct = ctr.setup_allocator(args.config, None)
    import torch
    from torch.profiler import ProfilerActivity, profile
    torch.backends.cudnn.benchmark = False
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    cargs = ctr.parse_args(["--steps", str(args.warmup + args.steps + args.profile_steps),
                            "--warmup", str(args.warmup)])
    step, shapes = ctr.BUILDERS[args.workload](torch, cargs, rng)
    shapes, warmup = ctr.warm_every_shape(shapes, args.warmup)
    clock = GcClock()
    launch_ms, gc_ms = [], []
    timed = shapes[: warmup + args.steps]
    for i, shape in enumerate(timed):
        torch.cuda.synchronize()
        gc0 = clock.ns
        t0 = time.perf_counter()
        step(shape)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        if i >= warmup:
            launch_ms.append((t1 - t0) * 1e3)
            gc_ms.append((clock.ns - gc0) / 1e6)
    rest = shapes[warmup + args.steps:][: args.profile_steps]
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for shape in rest:
            step(shape)
        torch.cuda.synchronize()
    ops = {}
    for e in prof.key_averages():
        ops[e.key] = {"calls": e.count, "self_cpu_us": e.self_cpu_time_total,
                      "cpu_us": e.cpu_time_total}
    n = max(1, len(rest))
    out = {"workload": args.workload, "config": args.config, "steps": len(launch_ms),
           "mean_launch_ms": statistics.fmean(launch_ms), "launch_ms": launch_ms,
           "mean_gc_ms": statistics.fmean(gc_ms), "gc_ms": gc_ms,
           "profiled_steps": n,
           "ops_per_step": {k: {kk: vv / n for kk, vv in v.items()} for k, v in ops.items()}}
    if ct:
        out["ccalloc"] = {k: v for k, v in ct.ccalloc_counters().items()
                          if isinstance(v, (int, float))}
    json.dump(out, sys.stdout)


def compare(results, workloads, top):
    """Side by side, per workload: the operators and CUDA calls whose self
    CPU time per profiled step differs most from the first config's, with
    calls per step, then each config's total. Returns the lines."""
    lines = []
    for workload in workloads:
        rows = [r for r in results if r["workload"] == workload]
        if len(rows) < 2:
            continue
        base = rows[0]
        keys = set().union(*(r["ops_per_step"].keys() for r in rows))

        def self_ms(r, k):
            return r["ops_per_step"].get(k, {}).get("self_cpu_us", 0.0) / 1e3

        def calls(r, k):
            return r["ops_per_step"].get(k, {}).get("calls", 0.0)

        order = sorted(keys, key=lambda k: (-max(abs(self_ms(r, k) - self_ms(base, k))
                                                 for r in rows[1:]), k))
        lines.append("")
        lines.append(f"{workload}: self CPU ms per profiled step (calls per step), "
                     f"largest differences from {base['config']} first")
        lines.append(f"{'op':44}" + "".join(f"{r['config'][:22]:>26}" for r in rows))
        for k in order[:top]:
            lines.append(f"{k[:44]:44}" + "".join(
                f"{self_ms(r, k):12.2f} ({calls(r, k):9.1f})" for r in rows))
        lines.append(f"{'total':44}" + "".join(
            f"{sum(self_ms(r, k) for k in keys):12.2f} {'':11}" for r in rows))
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workloads", default="two_streams,ckpt_lm")
    p.add_argument("--configs", default="native_expandable,ccalloc")
    p.add_argument("--ccalloc-config", action="append", default=[],
                   help="NAME=CONF: a ccalloc configuration under its own name")
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--profile-steps", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--timeout", type=int, default=240)
    p.add_argument("--out")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--workload", help=argparse.SUPPRESS)
    p.add_argument("--config", help=argparse.SUPPRESS)
    args = p.parse_args()
    for extra in args.ccalloc_config:
        name, _, conf = extra.partition("=")
        ctr.CONFIGS[name] = {"ccalloc_conf": conf}
    if args.child:
        child(args)
        return
    results = []
    for workload in args.workloads.split(","):
        for config in args.configs.split(","):
            cmd = [sys.executable, os.path.abspath(__file__), "--child", "--workload", workload,
                   "--config", config, "--steps", str(args.steps), "--warmup", str(args.warmup),
                   "--profile-steps", str(args.profile_steps), "--seed", str(args.seed)]
            for extra in args.ccalloc_config:
                cmd += ["--ccalloc-config", extra]
            r = subprocess.run(cmd, env=ctr.child_env(config), capture_output=True, text=True,
                               timeout=args.timeout)
            if r.returncode != 0:
                print(f"{workload} {config}: failed\n{r.stderr[-2000:]}", flush=True)
                continue
            res = json.loads(r.stdout.strip().splitlines()[-1])
            results.append(res)
            print(f"{workload:12} {config:20} launch {res['mean_launch_ms']:7.1f} ms/step "
                  f"(sd {statistics.pstdev(res['launch_ms']):5.1f})  gc {res['mean_gc_ms']:5.2f} "
                  f"ms/step", flush=True)
    for line in compare(results, args.workloads.split(","), args.top):
        print(line)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"results": results}, f, indent=1)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""policy_sweep.py — judge a policy change on a broad workload set, not one trace.

Replays every bundled training trace (traces/*.trace.gz) and a spread of
generated scenarios (several seeds of each: transformer, small-huge,
two-streams, growing, pinned, and the micro-benchmarks' churn) through
ccalloc on the simulated card, with ccalloc's defaults or CONF on top, and
prints per workload the peak reserved / peak allocated and the driver time
the launching thread pays (the replay's model, priced with the measured
table): per step in the second half for the traces (what a training step
costs once warm), in total for the scenarios. Then the sums per group and
the worst ratio over the traces and over everything.

With --baseline (the --out of an earlier run) it prints what changed: every
workload whose driver time moved by more than 30% (and 0.05 ms), and every
one whose ratio rose above both its baseline and 1.01, marked "!". A policy
that helps the traces it was written for and hurts the scenarios shows here.

    python3 bench/policy_sweep.py --out /tmp/base.json
    python3 bench/policy_sweep.py --conf mapped_fit:True --baseline /tmp/base.json
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = ([f"scenario:transformer:{s}" for s in range(1, 9)] +
             [f"scenario:small-huge:{s}" for s in range(1, 4)] +
             [f"scenario:two-streams:{s}" for s in range(1, 4)] +
             [f"scenario:growing:{s}" for s in range(1, 3)] +
             [f"scenario:pinned:{s}" for s in range(1, 3)] +
             ["scenario:churn:1042"])


def workloads(only):
    traces = sorted(glob.glob(os.path.join(ROOT, "traces", "*.trace.gz")))
    every = traces + SCENARIOS
    if not only:
        return every
    wanted = only.split(",")
    picked = [w for w in every if any(name == label(w) for name in wanted)]
    missing = set(wanted) - {label(w) for w in picked}
    if missing:
        sys.exit(f"policy_sweep: no workload named {', '.join(sorted(missing))}")
    return picked


def label(workload):
    base = os.path.basename(workload)
    return base[:-len(".trace.gz")] if base.endswith(".trace.gz") else workload


def group(name):
    return name.split(":")[1] if name.startswith("scenario:") else "traces"


def run(args, names):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "replay.json")
        cmd = [args.replay, "--repeat", "0", "--no-progress", "--json", out]
        cmd += ["--gpu-lag", str(args.gpu_lag)] if args.gpu_lag else []
        # (With a --conf, that policy alone: the defaults are the baseline's.)
        cmd += ["--conf", args.conf, "--policy", "custom"] if args.conf else ["--policy", "ccalloc"]
        done = subprocess.run(cmd + names, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        if done.returncode != 0:
            sys.exit(f"policy_sweep: {' '.join(cmd)} failed:\n{done.stderr}")
        results = json.load(open(out))
    want = "custom" if args.conf else "ccalloc"
    results = [r for r in results if r["policy"] == want]
    if len(results) != len(names):
        sys.exit(f"policy_sweep: {len(results)} results for {len(names)} workloads")
    rows = []
    for name, r in zip(names, results):
        per_step = r.get("late_caller_driver_ms_per_step")
        ms = per_step if per_step is not None else r["modelled_driver_ms"] - r["background_driver_ms"]
        rows.append({"workload": label(name), "group": group(label(name)), "ratio": r["ratio"],
                     "caller_driver_ms": ms, "per_step": per_step is not None,
                     "maps": r["maps"], "unmaps": r["unmaps"], "returns": r.get("returns", 0)})
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--replay", default=os.path.join(ROOT, "build", "default", "bench",
                                                     "ccalloc-replay"),
                   help="the ccalloc-replay binary (default: build/default's)")
    p.add_argument("--conf", default="", help="CCALLOC_CONF on top of ccalloc's defaults")
    p.add_argument("--gpu-lag", type=int, default=0, help="ccalloc-replay --gpu-lag N")
    p.add_argument("--only", default="", help="comma-separated workload names (default: all)")
    p.add_argument("--baseline", help="an earlier --out to compare with")
    p.add_argument("--out", help="write the rows as JSON")
    args = p.parse_args()
    if not os.path.exists(args.replay):
        sys.exit(f"policy_sweep: no replay binary at {args.replay} (build it, or --replay)")

    rows = run(args, workloads(args.only))
    print(f"{'workload':28} {'resv/alloc':>10} {'driver ms':>10} {'':9} {'maps':>7} {'unmaps':>7} {'returns':>7}")
    for r in rows:
        unit = "per step" if r["per_step"] else "total"
        print(f"{r['workload']:28} {r['ratio']:10.4f} {r['caller_driver_ms']:10.2f} {unit:9} "
              f"{r['maps']:7} {r['unmaps']:7} {r['returns']:7}")
    sums = {}
    for r in rows:
        sums[r["group"]] = sums.get(r["group"], 0.0) + r["caller_driver_ms"]
    print("launching thread's driver ms by group: " +
          ", ".join(f"{g} {v:.2f}" for g, v in sums.items()))
    traces = [r for r in rows if r["group"] == "traces"]
    if traces:
        worst = max(traces, key=lambda r: r["ratio"])
        print(f"worst ratio over the traces: {worst['ratio']:.4f} ({worst['workload']})")
    worst = max(rows, key=lambda r: r["ratio"])
    print(f"worst ratio over every workload: {worst['ratio']:.4f} ({worst['workload']})")

    if args.baseline:
        base = {r["workload"]: r for r in json.load(open(args.baseline))["rows"]}
        changes = []
        for r in rows:
            b = base.get(r["workload"])
            if b is None:
                continue
            before, after = b["caller_driver_ms"], r["caller_driver_ms"]
            factor = (after + 0.05) / (before + 0.05)
            moved = abs(after - before) > 0.05 and not 1 / 1.3 <= factor <= 1.3
            worse = r["ratio"] > max(b["ratio"], 1.01) + 1e-4
            if moved or worse:
                changes.append(f"{'! ' if worse else '  '}{r['workload']}: driver ms {before:.2f} -> "
                               f"{after:.2f}, ratio {b['ratio']:.4f} -> {r['ratio']:.4f}")
        print("against the baseline:" if changes else "against the baseline: no change")
        for c in changes:
            print(c)
    if args.out:
        json.dump({"conf": args.conf, "gpu_lag": args.gpu_lag, "rows": rows}, open(args.out, "w"),
                  indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

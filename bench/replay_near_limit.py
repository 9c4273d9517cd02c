#!/usr/bin/env python3
"""Replays each trace on a card only a little larger than the trace's own peak.

What a job that runs close to its GPU's memory meets: first every trace is
replayed with room (the default 80 GiB simulated card) to learn its peak
allocated, then again on a card FACTOR times that peak. Prints per trace the
peak reserved / peak allocated, the modelled driver time on the allocating
thread after warm-up, and the allocations refused after the free-all-and-retry
path; then the worst ratio, the summed driver time and the refusals.

    python3 bench/replay_near_limit.py --factor 1.03 [--conf "CCALLOC_CONF"] traces/*.trace.gz

Uses build/default/bench/ccalloc-replay (--replay to name another build).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def replay(binary, trace, conf, capacity=None):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cmd = [binary, "--repeat", "0", "--no-progress", "--json", out]
        cmd += ["--policy", "custom", "--conf", conf] if conf else ["--policy", "ccalloc"]
        if capacity:
            cmd += ["--capacity", str(capacity)]
        subprocess.run(cmd + [trace], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            return json.load(f)[0]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("traces", nargs="+")
    p.add_argument("--factor", type=float, required=True,
                   help="the card's memory as a multiple of the trace's peak allocated")
    p.add_argument("--conf", default="", help="a CCALLOC_CONF policy instead of the default")
    p.add_argument("--replay", default="build/default/bench/ccalloc-replay")
    args = p.parse_args(argv)
    rows = []
    for trace in args.traces:
        roomy = replay(args.replay, trace, args.conf)
        capacity = int(roomy["peak_allocated_bytes"] * args.factor)
        r = replay(args.replay, trace, args.conf, capacity)
        late = r.get("late_caller_driver_ms_per_step") or 0.0
        rows.append((r["trace"], r["ratio"], late, r["ooms"]))
        print(f"{r['trace']:24s} card {capacity / 2**30:7.2f} GiB  ratio {r['ratio']:.4f}  "
              f"late {late:6.3f} ms/step  refused {r['ooms']}")
    worst = max(rows, key=lambda x: x[1])
    refused = ", ".join(f"{t} ({n})" for t, _, _, n in rows if n > 0) or "none"
    print(f"worst ratio {worst[1]:.4f} ({worst[0]}), late ms a step summed "
          f"{sum(x[2] for x in rows):.1f}, refused: {refused}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Is the device machine's host slower on some cores than on others?

compare_training.py's host reference (a fixed pure-Python loop) moves by 2x
between the processes of one call, and host-bound training steps move with
it. If the speed belongs to the core a process lands on (a busy hyperthread
sibling, another socket), pinning every process of a comparison to the same
fast cores takes that spread out of the ratios. This times the same loop
pinned to each core in turn, over interleaved rounds, and prints the
spread by core and by round.

  python3 bench/probes/host_core_probe.py [--rounds 3] [--out FILE.json]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

# The same loop as every training run's host reference.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/
from compare_training import host_reference_ms  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    by_core = {c: [] for c in cores}
    for _ in range(args.rounds):
        for c in cores:
            os.sched_setaffinity(0, {c})
            by_core[c].append(host_reference_ms())
    os.sched_setaffinity(0, set(cores))
    unpinned = [host_reference_ms() for _ in range(args.rounds)]
    try:
        topo = subprocess.run(["lscpu", "-e"], capture_output=True, text=True).stdout
    except OSError:
        topo = ""
    print(topo)
    print(f"{'core':>5} " + " ".join(f"round{r:>2}" for r in range(args.rounds)) + "   min ms")
    for c in cores:
        print(f"{c:>5} " + " ".join(f"{v:7.2f}" for v in by_core[c]) + f"  {min(by_core[c]):7.2f}")
    print("unpinned " + " ".join(f"{v:7.2f}" for v in unpinned))
    mins = [min(v) for v in by_core.values()]
    print(f"min over cores {min(mins):.2f}, max {max(mins):.2f}, "
          f"median {statistics.median(mins):.2f} ms")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"host": platform.node(), "lscpu": topo, "by_core_ms": by_core,
                       "unpinned_ms": unpinned}, f, indent=1)


if __name__ == "__main__":
    main()

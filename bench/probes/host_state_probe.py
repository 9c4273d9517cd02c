#!/usr/bin/env python3
"""What is the device machines' slow host state: time the CPU is taken away
(a hypervisor's steal), a lower clock, or less work done per cycle?

bench/probes/host_core_probe.py found every core of these hosts running the same
pure-Python loop at one speed or at about half of it, switching every few
seconds, and host-bound training steps move with it by more than the 1%
being measured. What can take it out of a comparison depends on what it is:

  - steal: the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID) stays the
    same while its wall time doubles, and /proc/stat's steal column grows;
  - a lower clock: CPU time doubles with wall time, cycles (perf) do not;
  - less work per cycle (a busy sibling hyperthread, a shared cache): wall,
    CPU time and cycles all double, instructions do not.

And whether it holds the whole machine at once (then a monitor on another
core sees each step's state) or each core apart. This runs --workers
processes pinned to different cores, each timing a ~0.5 ms slice of the
reference loop again and again for --seconds, with per slice: wall time,
thread CPU time and, where perf_event_open lets an unprivileged process
count its own user-space events, cycles and instructions. The parent samples
/proc/stat every 100 ms. Prints a summary and writes every sample (--out).

  python3 bench/probes/host_state_probe.py [--seconds 20] [--workers 3] [--out FILE]
"""
import argparse
import json
import multiprocessing as mp
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from host_counters import ThreadCounters, cpu_jiffies  # noqa: E402 (bench/, the folder above)

SLICE_ITERATIONS = 10_000   # ~0.5 ms of the loop in the fast state

def worker(core, seconds, queue):
    os.sched_setaffinity(0, {core})
    counters = ThreadCounters()
    samples = []   # (wall start ns, wall ns, cpu ns, cycles, instructions)
    end = time.monotonic_ns() + int(seconds * 1e9)
    while True:
        w0 = time.monotonic_ns()
        c0, y0, i0, *_ = counters.read()
        acc = 0
        for i in range(SLICE_ITERATIONS):
            acc += i & 7
        w1 = time.monotonic_ns()
        c1, y1, i1, *_ = counters.read()
        samples.append((w0, w1 - w0, c1 - c0, y1 - y0, i1 - i0))
        if w1 >= end:
            break
    queue.put({"core": core, "perf": counters.perf, "samples": samples})


def summarize(result, stat_samples):
    """Per worker: the slices split at the median wall time into fast and
    slow halves, and what each quantity did between them; and how often the
    workers were slow at the same moment."""
    out = {"workers": []}
    for w in result:
        s = w["samples"][5:]   # the first slices warm the loop
        walls = sorted(x[1] for x in s)
        cut = walls[len(walls) // 2]
        fast = [x for x in s if x[1] <= cut]
        slow = [x for x in s if x[1] > cut]
        row = {"core": w["core"], "slices": len(s), "perf": w["perf"]}
        for name, k in (("wall_us", 1), ("cpu_us", 2), ("cycles_k", 3), ("instr_k", 4)):
            f = statistics.fmean(x[k] for x in fast) / 1e3
            sl = statistics.fmean(x[k] for x in slow) / 1e3
            row[name] = {"fast": round(f, 2), "slow": round(sl, 2),
                         "slow_over_fast": round(sl / f, 3) if f else None}
        # How much of the time the slow state held: slices half again as
        # slow as the fastest tenth.
        slow_fraction = sum(1 for x in s if x[1] > 1.5 * walls[len(walls) // 10]) / len(s)
        row["fraction_of_slices_over_1.5x_fastest_decile"] = round(slow_fraction, 3)
        out["workers"].append(row)
    # Simultaneity: per 50 ms window, each worker's mean speed; correlation
    # of the workers' series.
    def series(w):
        by = {}
        for w0, wall, *_ in w["samples"][5:]:
            by.setdefault(w0 // 50_000_000, []).append(wall)
        return {k: statistics.fmean(v) for k, v in by.items()}
    ser = [series(w) for w in result]
    corr = []
    for a in range(len(ser)):
        for b in range(a + 1, len(ser)):
            keys = sorted(set(ser[a]) & set(ser[b]))
            if len(keys) > 3:
                try:
                    corr.append(round(statistics.correlation([ser[a][k] for k in keys],
                                                             [ser[b][k] for k in keys]), 3))
                except statistics.StatisticsError:   # a worker whose speed never moved
                    corr.append(None)
    out["speed_correlation_between_workers_50ms"] = corr
    if len(stat_samples) > 1:
        d_steal = stat_samples[-1][1] - stat_samples[0][1]
        d_total = stat_samples[-1][2] - stat_samples[0][2]
        out["steal_fraction"] = round(d_steal / d_total, 4) if d_total else None
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    picks = [cores[(i * len(cores)) // args.workers] for i in range(args.workers)]
    queue = mp.Queue()
    procs = [mp.Process(target=worker, args=(c, args.seconds, queue)) for c in picks]
    for p in procs:
        p.start()
    stat_samples = []
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        steal, total = cpu_jiffies()
        stat_samples.append((time.monotonic_ns(), steal, total))
        time.sleep(0.1)
    result = [queue.get() for _ in procs]
    for p in procs:
        p.join()
    result.sort(key=lambda w: w["core"])
    summary = summarize(result, stat_samples)
    print(json.dumps(summary, indent=1))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"summary": summary, "proc_stat": stat_samples,
                       "workers": result}, f)


if __name__ == "__main__":
    main()

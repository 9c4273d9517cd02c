#!/usr/bin/env python3
"""Summarizes shape-repeat rounds (`scripts/gpu_round.sh … repeat`, or
bench/probes/shape_repeat_probe.py runs logged one after another).

Reads the probe's pass lines,

    ccalloc unet pass 3: 70.4 ms/step (launch 70.4)  maps/step 11.5  prepare 2.55 ms ...

each run's round given by a `=== repeat: round N` line before it (what the
`repeat` part writes) or a `round N: ` prefix on the line. For every workload
and allocator it prints the mean ms a step over the passes from --from-pass
on (the first passes meet new shapes), round by round, that mean over the
baseline's of the same round (expandable_segments by default), the mean of
those round ratios, and for ccalloc the launching thread's driver work a step
over the same passes: prepare, and within it waits, map calls, creates and
foreground unmaps.

    python3 bench/probes/shape_repeat_summary.py OUT/repeat.log [--from-pass 2] [--json FILE]
"""
import argparse
import json
import re
import statistics
import sys

PASS = re.compile(r"^(?:round (\d+): )?(\S+) (\S+) pass (\d+): ([\d.]+) ms/step \(launch ([\d.]+)\)(.*)$")
ROUND = re.compile(r"^=== repeat: round (\d+)")
FIELDS = (("maps/step", "maps"), ("prepare", "prepare_ms"), ("wait", "wait_ms"),
          ("worker", "worker_ms"), ("map", "map_ms"), ("create", "create_ms"))


def parse(lines):
    """The pass lines as dicts: round (None when the log gives none), config,
    workload, pass, ms, launch_ms and what of FIELDS the line has."""
    out, current = [], None
    for line in lines:
        line = line.rstrip("\n")
        m = ROUND.match(line)
        if m:
            current = int(m.group(1))
            continue
        m = PASS.match(line)
        if not m:
            continue
        rnd = int(m.group(1)) if m.group(1) else current
        row = {"round": rnd, "config": m.group(2), "workload": m.group(3),
               "pass": int(m.group(4)), "ms": float(m.group(5)),
               "launch_ms": float(m.group(6))}
        rest = m.group(7)
        for label, key in FIELDS:
            f = re.search(r"(?:^|\s|\()" + re.escape(label) + r" ([\d.]+)", rest)
            if f:
                row[key] = float(f.group(1))
        f = re.search(r"fg unmaps ([\d.]+) ([\d.]+) ms", rest)
        if f:
            row["fg_unmaps"], row["fg_ms"] = float(f.group(1)), float(f.group(2))
        out.append(row)
    return out


def summarize(rows, baseline, from_pass):
    """Per (workload, config): per-round means over passes >= from_pass,
    ratios to the baseline's same round, their mean, and the mean driver work."""
    timed = [r for r in rows if r["pass"] >= from_pass]
    keys = list(dict.fromkeys((r["workload"], r["config"]) for r in timed))
    means = {}
    for r in timed:
        means.setdefault((r["workload"], r["config"], r["round"]), []).append(r["ms"])
    out = []
    for workload, config in keys:
        rounds = sorted({rnd for (w, c, rnd) in means if (w, c) == (workload, config)},
                        key=lambda x: (x is None, x))
        per_round = {rnd: statistics.fmean(means[(workload, config, rnd)]) for rnd in rounds}
        ratios = []
        for rnd in rounds:
            base = means.get((workload, baseline, rnd))
            if base and config != baseline:
                ratios.append(per_round[rnd] / statistics.fmean(base))
        mine = [r for r in timed if r["workload"] == workload and r["config"] == config]
        work = {}
        for _, key in FIELDS + (("", "fg_unmaps"), ("", "fg_ms")):
            values = [r[key] for r in mine if key in r]
            if values:
                work[key] = statistics.fmean(values)
        out.append({"workload": workload, "config": config,
                    "ms_by_round": [per_round[r] for r in rounds], "rounds": rounds,
                    "ratios": ratios, "mean_ratio": statistics.fmean(ratios) if ratios else None,
                    **work})
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("log")
    p.add_argument("--from-pass", type=int, default=2,
                   help="first pass counted (default 2: passes 0 and 1 meet new shapes)")
    p.add_argument("--baseline", default="native_expandable")
    p.add_argument("--json", help="write the summary here too")
    args = p.parse_args(argv)
    with open(args.log) as f:
        rows = parse(f)
    if not rows:
        print(f"shape_repeat_summary: no pass lines in {args.log}", file=sys.stderr)
        return 1
    summary = summarize(rows, args.baseline, args.from_pass)
    print(f"mean ms a step over passes >= {args.from_pass}, by round; the ratio to "
          f"{args.baseline}'s same round; ccalloc's launching-thread driver work a step "
          "(prepare, and within it waits, map calls, creates, foreground unmaps)")
    head = (f"{'workload':<12} {'config':<18} {'ms by round':<26} {'vs base':<22} {'mean':>6} "
            f"{'maps':>6} {'prepare':>8} {'wait':>6} {'map':>6} {'create':>7} {'fg ms':>6}")
    print(head)
    print("-" * len(head))
    fmt = lambda v, w, d=2: f"{v:{w}.{d}f}" if v is not None else f"{'-':>{w}}"  # noqa: E731
    for s in summary:
        by_round = " ".join(f"{x:.1f}" for x in s["ms_by_round"])
        ratios = " ".join(f"{x:.3f}" for x in s["ratios"]) or "-"
        print(f"{s['workload']:<12} {s['config']:<18} {by_round:<26} {ratios:<22} "
              f"{fmt(s['mean_ratio'], 6, 3)} {fmt(s.get('maps'), 6, 1)} "
              f"{fmt(s.get('prepare_ms'), 8)} {fmt(s.get('wait_ms'), 6)} "
              f"{fmt(s.get('map_ms'), 6)} {fmt(s.get('create_ms'), 7)} {fmt(s.get('fg_ms'), 6)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"from_pass": args.from_pass, "baseline": args.baseline,
                       "summary": summary, "passes": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

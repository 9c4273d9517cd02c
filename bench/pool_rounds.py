#!/usr/bin/env python3
"""Pools the rounds of several bench/compare_training.py results into one
step-time ratio per workload, with the interval it can claim.

    python3 bench/pool_rounds.py \\
        bench/results/h100_cross_stream_reuse_auto_ab.json \\
        bench/results/h100_cross_stream_reuse_auto_aa.json \\
        [--baseline native_expandable] [--target 1.01] [--json OUT.json]

Each input is a compare_training.py --out file, or one wrapped as
bench/results/ wraps them ({"results": {...}}). Within a file, a run of every
other configuration is paired with the baseline's run of the same workload
and round (the round is interleaved: the same host state, near enough), and
each pair gives one ratio, mean step time over the baseline's. The rounds of
all files pooled, each workload gets the mean ratio, its standard deviation
and a two-sided 95% Student-t interval, and a verdict against the target:
'met' where the interval lies below it, 'over' where it lies above, and
'not resolved' where it holds the target: then 'rounds for +-x' says how many
rounds of that spread an interval of half-width (target - 1) would take.

Side-by-side runs (--concurrent) record where each process started in its
round (start_position). A process started first reads faster than its
partners, and the start order turns with the round, so a count of rounds that
is not a multiple of the processes leans one way. Where the paired runs have
positions, a second table gives the mean ratio for each start position of the
baseline, and their mean: the figure balanced over the start order. Runs
spread over several GPUs (--gpus) record the GPU each ran on (gpu_slot), and
a third table balances over the baseline's GPU the same way.

Pool only runs of the same policy: the files say their commit; this script
does not judge what changed between them.
"""

import argparse
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_training import good_runs, paired_rounds  # noqa: E402 (the summary's own pairing)
from protocol import T95, t95  # noqa: E402,F401 (the verdict's own quantiles)


def runs_of(document):
    """The runs of a compare_training.py result, bare or wrapped."""
    if isinstance(document, dict) and "runs" not in document and "results" in document:
        document = document["results"]
    if not isinstance(document, dict) or not isinstance(document.get("runs"), list):
        raise ValueError("no 'runs' list: not a compare_training.py result")
    return document["runs"]


def paired_runs(runs, baseline):
    """{(workload, config): (the paired runs with their round's baseline mean
    step time, the baseline's runs)}, paired as compare_training.py's own
    summary pairs them (paired_rounds), failed and skipped runs left out
    (good_runs)."""
    ok = good_runs(runs)
    out = {}
    for workload, config in dict.fromkeys((r["workload"], r["config"]) for r in ok):
        if config == baseline:
            continue
        rs = [r for r in ok if r["workload"] == workload and r["config"] == config]
        base = [r for r in ok if r["workload"] == workload and r["config"] == baseline]
        paired = paired_rounds(rs, base)
        if paired:
            out[(workload, config)] = (paired, base)
    return out


def round_ratios(runs, baseline, source=""):
    """{(workload, config): [(source, round, ratio), ...]} from one file."""
    return {key: [(source, r["round"], r["mean_step_ms"] / b) for r, b in paired]
            for key, (paired, _) in paired_runs(runs, baseline).items()}


def baseline_positions(runs, baseline, field="start_position"):
    """{(workload, config): [the baseline's `field` (start_position, or
    gpu_slot: the GPU it ran on) in each paired round, None where the runs
    do not say], ...} in round_ratios' order."""
    out = {}
    for key, (paired, base) in paired_runs(runs, baseline).items():
        where = {b["round"]: b.get(field) for b in base}
        out[key] = [where.get(r["round"]) for r, _ in paired]
    return out


def pool(ratios, target):
    """Per (workload, config): the pooled figures and the verdict."""
    out = []
    for (workload, config), items in sorted(ratios.items()):
        values = [r for _, _, r in items]
        n = len(values)
        mean = statistics.fmean(values)
        sd = statistics.stdev(values) if n > 1 else None
        half = t95(n - 1) * sd / math.sqrt(n) if sd is not None else math.inf
        low, high = mean - half, mean + half
        if high <= target:
            verdict = "met"
        elif low > target:
            verdict = "over"
        else:
            verdict = "not resolved"
        needed = None
        if verdict == "not resolved" and sd is not None and target > 1:
            # Rounds for a half-width of (target - 1) at this spread (normal
            # approximation: the t quantile is near 2 there).
            needed = math.ceil((1.96 * sd / (target - 1)) ** 2)
        out.append({"workload": workload, "config": config, "rounds": n, "mean": mean,
                    "sd": sd, "low": low, "high": high, "verdict": verdict,
                    "rounds_needed": needed, "ratios": values,
                    "sources": sorted({s for s, _, _ in items})})
    return out


def balance_over(ratios, labels):
    """Per (workload, config) whose every paired round carries a label for
    the baseline (where it started, the GPU it ran on): the mean ratio for
    each label and the mean of those (balanced over them)."""
    out = []
    for key, items in sorted(ratios.items()):
        where = labels.get(key, [])
        if not items or len(where) != len(items) or any(p is None for p in where):
            continue
        groups = {}
        for (_, _, ratio), p in zip(items, where):
            groups.setdefault(p, []).append(ratio)
        means = {p: statistics.fmean(v) for p, v in sorted(groups.items())}
        out.append({"workload": key[0], "config": key[1], "rounds": len(items),
                    "by_label": {p: {"rounds": len(groups[p]), "mean": m}
                                    for p, m in means.items()},
                    "balanced": statistics.fmean(means.values())})
    return out


def print_balance(rows, title, column):
    """balance_over's rows as a table under `title` (nothing without
    rows); `column` names what the cells are by."""
    if not rows:
        return
    print("\n" + title)
    header = f"{'workload':<12} {'config':<18} {'rounds':>6}  {column:<40} {'balanced':>8}"
    print(header)
    print("-" * len(header))
    for b in rows:
        cells = "  ".join(f"{p}: {v['mean']:.3f} ({v['rounds']})"
                          for p, v in b["by_label"].items())
        print(f"{b['workload']:<12} {b['config']:<18} {b['rounds']:>6}  {cells:<40} "
              f"{b['balanced']:>8.3f}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", help="compare_training.py results (bare or wrapped)")
    p.add_argument("--baseline", default="native_expandable",
                   help="the configuration each ratio is against (default native_expandable)")
    p.add_argument("--target", type=float, default=1.01,
                   help="the ratio the verdict is against (default 1.01)")
    p.add_argument("--json", default=None, help="write the pooled figures here")
    args = p.parse_args(argv)

    ratios, positions, slots = {}, {}, {}
    for path in args.files:
        try:
            with open(path) as f:
                runs = runs_of(json.load(f))
        except (OSError, ValueError) as e:
            print(f"pool_rounds: {path}: {e}", file=sys.stderr)
            return 2
        file_positions = baseline_positions(runs, args.baseline)
        file_slots = baseline_positions(runs, args.baseline, field="gpu_slot")
        for key, items in round_ratios(runs, args.baseline, source=path).items():
            ratios.setdefault(key, []).extend(items)
            positions.setdefault(key, []).extend(file_positions[key])
            slots.setdefault(key, []).extend(file_slots[key])
    if not ratios:
        print(f"pool_rounds: no run paired with a '{args.baseline}' run of the same workload "
              "and round", file=sys.stderr)
        return 1
    rows = pool(ratios, args.target)

    print(f"mean step time over {args.baseline}'s, pooled over {len(args.files)} file(s): "
          f"the mean of the round ratios, a two-sided 95% t interval, and the verdict "
          f"against {args.target}")
    header = (f"{'workload':<12} {'config':<18} {'rounds':>6} {'mean':>7} {'sd':>7} "
              f"{'95% interval':>15}  {'verdict':<13} {'rounds for +-' + format(args.target - 1, '.0%'):>15}")
    print(header)
    print("-" * len(header))
    for r in rows:
        sd = f"{r['sd']:.3f}" if r["sd"] is not None else "-"
        interval = (f"{r['low']:.3f}..{r['high']:.3f}" if math.isfinite(r["low"])
                    else "- (one round)")
        needed = str(r["rounds_needed"]) if r["rounds_needed"] is not None else "-"
        print(f"{r['workload']:<12} {r['config']:<18} {r['rounds']:>6} {r['mean']:>7.3f} "
              f"{sd:>7} {interval:>15}  {r['verdict']:<13} {needed:>15}")
    balanced = balance_over(ratios, positions)
    print_balance(balanced, f"by where {args.baseline} started in its round (side by side: "
                  f"0 = first), the mean ratio, and the mean over those positions (balanced "
                  f"over the start order)", "by position")
    # Side by side on several GPUs (compare_training.py --gpus): the same
    # balance over the GPU the baseline ran on, which turns with the round.
    by_gpu = balance_over(ratios, slots)
    print_balance(by_gpu, f"by the GPU {args.baseline} ran on (side by side over several "
                  f"GPUs), the mean ratio, and the mean over those GPUs (balanced over them)",
                  "by GPU")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"baseline": args.baseline, "target": args.target, "files": args.files,
                       "rows": [{k: (v if not (isinstance(v, float) and not math.isfinite(v))
                                     else None) for k, v in r.items()} for r in rows],
                       "by_start_position": balanced, "by_gpu": by_gpu},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

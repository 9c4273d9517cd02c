"""The step-time figures of record for bench/compare_training.py.

How a user meets an allocator: one job on one GPU. So the verdict compares
runs made one process at a time on the same GPU, in rounds whose order of
allocators turns from round to round, and reports per workload:

  * the mean over rounds of the per-round ratio (a config's mean step time
    after warm-up over its reference's in the same round), with the 95%
    Student-t interval of that mean;
  * the same for the A/A controls run in the same call (expandable_segments
    against itself, ccalloc against itself): the noise floor a difference
    must clear;
  * peak reserved over peak allocated, worst round;
  * driver calls per timed step on the allocating thread (ccalloc: every
    call its backend made there, DeviceBackend::driver_calls; PyTorch: its
    num_device_alloc + num_device_free, the counters it has), and ccalloc's
    calls on its background thread.

Everything here reads the runs compare_training.py records; nothing runs.
"""

import math
import statistics

# Two-sided 95% quantiles of Student's t by degrees of freedom (1..30); the
# normal's 1.96 beyond.
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
       2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
       2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]

# (config, reference): what each row of the verdict compares. The first is
# the question; the other two are the A/A controls.
PAIRS = (("ccalloc", "native_expandable"),
         ("expandable_b", "native_expandable"),
         ("ccalloc_b", "ccalloc"))


def t95(df):
    if df < 1:
        return math.inf
    return T95[df - 1] if df <= len(T95) else 1.96


def interval(values):
    """(mean, low, high) of the 95% t interval of the mean of `values`;
    low and high are None with fewer than two values."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None, None
    half = t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def _ok(runs):
    return [r for r in runs if "error" not in r and not r.get("skipped")]


def round_ratios(runs, workload, config, reference):
    """Per round that ran both: config's mean step time over reference's."""
    of = lambda c: {r["round"]: r["mean_step_ms"] for r in _ok(runs)
                    if r["workload"] == workload and r["config"] == c}
    mine, ref = of(config), of(reference)
    return [mine[k] / ref[k] for k in sorted(mine) if k in ref and ref[k] > 0]


def driver_calls_per_step(run):
    """(allocating thread, background) driver calls per timed step of one
    run, or (None, None) where the run did not count them."""
    warmup = run.get("warmup", 0)
    calls = run.get("step_calls")
    if calls and "driver_calls" in calls["counters"]:
        k = calls["counters"].index("driver_calls")
        b = calls["counters"].index("background_driver_calls")
        timed = calls["steps"][warmup:]
        if timed:
            return (statistics.fmean(s[k] for s in timed),
                    statistics.fmean(s[b] for s in timed))
    device = run.get("device_calls")  # PyTorch's own counters, per step
    if device:
        timed = device[warmup:]
        if timed:
            return statistics.fmean(a + f for a, f in timed), 0.0
    return None, None


def verdict(runs):
    """One row per (workload, pair of PAIRS) that has paired rounds."""
    rows = []
    ok = _ok(runs)
    for workload in dict.fromkeys(r["workload"] for r in ok):
        for config, reference in PAIRS:
            ratios = round_ratios(runs, workload, config, reference)
            if not ratios:
                continue
            mean, low, high = interval(ratios)
            mine = [r for r in ok if r["workload"] == workload and r["config"] == config]
            ref = [r for r in ok if r["workload"] == workload and r["config"] == reference]
            memory = lambda rs: max((r["reserved_over_allocated"] for r in rs
                                     if r.get("reserved_over_allocated") is not None),
                                    default=None)
            calls = lambda rs: [c for c in (driver_calls_per_step(r) for r in rs)
                                if c[0] is not None]
            mc, rc = calls(mine), calls(ref)
            rows.append({
                "workload": workload, "config": config, "reference": reference,
                "rounds": len(ratios), "ratios": ratios, "mean": mean, "low": low,
                "high": high, "memory": memory(mine), "reference_memory": memory(ref),
                "calls_per_step": statistics.fmean(c[0] for c in mc) if mc else None,
                "background_calls_per_step": statistics.fmean(c[1] for c in mc) if mc else None,
                "reference_calls_per_step": statistics.fmean(c[0] for c in rc) if rc else None,
            })
    return rows


def print_verdict(rows):
    f = lambda v, d=3: "-" if v is None else f"{v:.{d}f}"
    print()
    print("verdict (sequential rounds, one process at a time): 'mean' is the mean over rounds "
          "of the per-round ratio of mean step times after warm-up, '95%' its t interval; "
          "expandable_b and ccalloc_b are A/A controls (the same allocator twice); "
          "'resv/alloc' peak reserved / peak allocated, worst round, for the config and "
          "its reference; 'calls/step' driver calls per timed step on the allocating "
          "thread (ccalloc: its backend's calls; PyTorch: num_device_alloc + "
          "num_device_free), 'bg' ccalloc's on its background thread")
    head = (f"{'workload':11} {'config':13} {'vs':18} {'n':>2} {'mean':>6} {'95%':>13} "
            f"{'resv/alloc':>15} {'calls/step':>15} {'bg':>6}  rounds")
    print(head)
    print("-" * len(head))
    for r in rows:
        ci = f"{f(r['low'])}..{f(r['high'])}" if r["low"] is not None else "-"
        mem = f"{f(r['memory'], 4)}/{f(r['reference_memory'], 4)}"
        calls = f"{f(r['calls_per_step'], 1)}/{f(r['reference_calls_per_step'], 1)}"
        print(f"{r['workload']:11} {r['config']:13} {r['reference']:18} {r['rounds']:2d} "
              f"{r['mean']:6.3f} {ci:>13} {mem:>15} {calls:>15} "
              f"{f(r['background_calls_per_step'], 1):>6}  "
              + " ".join(f"{x:.3f}" for x in r["ratios"]))

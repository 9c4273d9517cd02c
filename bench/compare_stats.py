"""The figures bench/compare_training.py draws from its runs: per workload and
allocator the mean step time over rounds against the baseline's (summarize,
mean_ratio, and the host-adjusted fit beside it, host_adjusted_ratio), what a
mapped chunk costs in step time (move_costs), where ccalloc's placements and
waits fall among the steps (placement_thirds, wait_steps), and the worst case
over the workloads (worst_cases).

Everything here reads the runs the children recorded; nothing runs, and
nothing needs torch or a GPU. The verdict of record is bench/protocol.py's.
"""

import math
import os
import statistics
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
if BENCH not in sys.path:   # the siblings below, however this module was reached
    sys.path.insert(0, BENCH)
from compare_configs import BASELINE, CONFIGS, HOST_CLOCKS, is_ccalloc  # noqa: E402


def host_adjusted_ratio(rs, base_runs):
    """Step time of `rs` against `base_runs`, with the host's state taken out:
    a least-squares fit of log(step ms) over every timed step of both, with
    one term per step index (every run trains the same shapes in the same
    order, so step i is the same work in all of them), one for the
    allocator, and the log of the step's host probe (host_probe_ms). Returns
    (ratio, standard error of its log, the probe's elasticity, steps);
    (None, None, None, steps) where the runs have no probes or the fit is
    degenerate. A diagnostic beside the plain mean, which stays the figure of
    record: it tells an allocator's cost from the host states its processes
    happened to draw. Steps of one process are not independent (its host
    state persists), so the error understates the spread between rounds."""
    groups = {}
    mine = {id(r) for r in rs}
    for r in list(rs) + list(base_runs):
        probes = r.get("host_probe_ms")
        if not probes:
            continue
        for i in range(r["warmup"], min(len(r["step_ms"]), len(probes))):
            if r["step_ms"][i] > 0 and probes[i] > 0:
                groups.setdefault(i, []).append((math.log(r["step_ms"][i]),
                                                 1.0 if id(r) in mine else 0.0,
                                                 math.log(probes[i])))
    # Each step index's mean taken out (its shape's own time), then two
    # regressors: which allocator, and the host probe.
    ys, xs, ps = [], [], []
    for g in groups.values():
        if len(g) < 2:
            continue
        my, mx, mp = (statistics.fmean(v[k] for v in g) for k in range(3))
        for y, x, p in g:
            ys.append(y - my)
            xs.append(x - mx)
            ps.append(p - mp)
    n = len(ys)
    sxx = sum(x * x for x in xs)
    spp = sum(p * p for p in ps)
    sxp = sum(x * p for x, p in zip(xs, ps))
    det = sxx * spp - sxp * sxp
    if n < 4 or sxx <= 0 or det <= 1e-12 * max(sxx * spp, 1e-300):
        return None, None, None, n
    sxy = sum(x * y for x, y in zip(xs, ys))
    spy = sum(p * y for p, y in zip(ps, ys))
    b = (spp * sxy - sxp * spy) / det
    c = (sxx * spy - sxp * sxy) / det
    dof = max(n - 2 - len(groups), 1)
    s2 = sum((y - b * x - c * p) ** 2 for x, p, y in zip(xs, ps, ys)) / dof
    return math.exp(b), math.sqrt(s2 * spp / det), c, n


def good_runs(runs):
    return [r for r in runs if "error" not in r and not r.get("skipped")]


def paired_rounds(rs, base_runs):
    """The runs of `rs` whose round `base_runs` also ran, each with that
    round's baseline mean step time: [(run, base_mean_ms), ...] in rs' order.
    The one pairing rule of the summary and of bench/pool_rounds.py."""
    base = {r["round"]: r["mean_step_ms"] for r in base_runs}
    return [(r, base[r["round"]]) for r in rs if r["round"] in base]


def mean_ratio(rs, base_runs):
    """Mean step time of `rs` over that of `base_runs`, over the rounds both
    have, and the same ratio round by round."""
    paired = paired_rounds(rs, base_runs)
    if not paired:
        return None, []
    ratio = (statistics.fmean(r["mean_step_ms"] for r, _ in paired) /
             statistics.fmean(b for _, b in paired))
    return ratio, [r["mean_step_ms"] / b for r, b in paired]


def mean_of(rs, get):
    """Mean of get(r) over the runs that have it; None when none does."""
    values = [v for v in map(get, rs) if v is not None]
    return statistics.fmean(values) if values else None


def summarize(runs):
    """Per workload and allocator, over rounds: the mean of the per-run mean step
    times and their spread, that mean against native_expandable's and native's
    over the same rounds, and the worst memory figures."""
    ok = good_runs(runs)
    out = []
    for workload in dict.fromkeys(r["workload"] for r in ok):
        of = lambda config: [r for r in ok if r["workload"] == workload and r["config"] == config]
        native, expandable = of("native"), of(BASELINE)
        native_median = {r["round"]: r["median_step_ms"] for r in native}
        for config in dict.fromkeys(r["config"] for r in ok if r["workload"] == workload):
            rs = of(config)
            means = [r["mean_step_ms"] for r in rs]
            vs_exp, vs_exp_rounds = mean_ratio(rs, expandable)
            adj, adj_err, elasticity, adj_steps = (
                host_adjusted_ratio(rs, expandable) if config != BASELINE else
                (None, None, None, 0))
            vs_nat, _ = mean_ratio(rs, native)
            rel = [r["median_step_ms"] / native_median[r["round"]] for r in rs
                   if r["round"] in native_median]
            out.append({
                "workload": workload, "config": config, "rounds": len(rs),
                "mean_step_ms": statistics.fmean(means),
                "mean_step_ms_min": min(means), "mean_step_ms_max": max(means),
                "mean_step_ms_stdev": statistics.stdev(means) if len(means) > 1 else 0.0,
                # Step-to-step spread inside a run (shapes change every step).
                "step_stdev_ms": statistics.fmean(r["stdev_step_ms"] for r in rs),
                "max_step_ms": max(r["max_step_ms"] for r in rs),
                "median_step_ms": statistics.median(r["median_step_ms"] for r in rs),
                "mean_vs_expandable": vs_exp, "mean_vs_expandable_rounds": vs_exp_rounds,
                "mean_vs_native": vs_nat,
                # The same with the host's state taken out (a diagnostic:
                # host_adjusted_ratio).
                "host_adjusted_vs_expandable": adj, "host_adjusted_log_error": adj_err,
                "host_probe_elasticity": elasticity, "host_adjusted_steps": adj_steps,
                # As before: median over rounds of (median step / native's median step).
                "step_vs_native": statistics.median(rel) if rel else None,
                "peak_allocated": max(r["peak_allocated"] for r in rs),
                "peak_reserved": max(r["peak_reserved"] for r in rs),
                "reserved_over_allocated": max((r["reserved_over_allocated"] for r in rs
                                                if r["reserved_over_allocated"] is not None),
                                               default=None),
                # The device's own count (memory in use less what was in use
                # before the first allocation) against reserved, read together.
                "device_vs_reserved_max_gap": max(r["device_vs_reserved_max_gap"] for r in rs),
                "other_device_memory": max(r["other_device_memory"] or 0 for r in rs),
                "device_vs_reserved_max_gap_after_warmup": max(
                    r["device_vs_reserved_max_gap_after_warmup"] for r in rs),
                # Where the time goes (runs from before these figures lack them).
                "mean_launch_ms": mean_of(rs, lambda r: r.get("mean_launch_ms")),
                "mean_gpu_span_ms": mean_of(rs, lambda r: r.get("mean_gpu_span_ms")),
                "kernel_ms_per_step": mean_of(
                    rs, lambda r: (r.get("kernel_profile") or {}).get("kernel_ms_per_step")),
                # Each run's host speed (host_reference_ms), by round.
                "host_ref_ms": mean_of(rs, lambda r: r.get("host_ref_ms")),
                "host_ref_ms_rounds": [r.get("host_ref_ms") for r in rs],
            })
    return out


def step_counter(run, name):
    """One of ccalloc's counters, step by step, as the run read it between
    steps (step_calls); None where the run has no such counter."""
    calls = run.get("step_calls") or {}
    names = calls.get("counters", [])
    if name not in names:
        return None
    at = names.index(name)
    return [step[at] for step in calls.get("steps", [])]


def move_costs(runs):
    """What each chunk a ccalloc configuration maps costs in step time.

    Every run of a workload trains the same shapes in the same order, so step
    i of a ccalloc run can be set against step i of native_expandable's runs
    (their mean over rounds). The ccalloc step's extra time is fitted by least
    squares to the chunks it mapped (num_maps; a move is one map and one
    unmap): the slope is the step time one mapped chunk costs, the intercept
    what the configuration costs with no driver calls. A fit needs steps with
    different counts; None where there are none."""
    ok = good_runs(runs)
    out = []
    for workload in dict.fromkeys(r["workload"] for r in ok):
        base = [r for r in ok if r["workload"] == workload and r["config"] == BASELINE]
        if not base:
            continue
        for config in dict.fromkeys(r["config"] for r in ok if r["workload"] == workload):
            rs = [r for r in ok if r["workload"] == workload and r["config"] == config
                  and r.get("step_calls")]
            xs, ys, fg = [], [], []
            # cross_stream_reuse: loans and the device-side waits ordering them.
            lent = {"num_cross_stream_reuses": [], "num_device_waits": []}
            host = {k: [] for k in HOST_CLOCKS}
            for r in rs:
                # num_maps: the first counter child_train records.
                maps = [step[0] for step in r["step_calls"]["steps"]]
                unmaps = step_counter(r, "num_foreground_unmaps")
                clocks = {k: step_counter(r, k) for k in host}
                loans = {k: step_counter(r, k) for k in lent}
                for i in range(r["warmup"], min(len(r["step_ms"]), len(maps))):
                    paired = [b["step_ms"][i] for b in base if i < len(b["step_ms"])]
                    if not paired:
                        continue
                    xs.append(maps[i])
                    ys.append(r["step_ms"][i] - statistics.fmean(paired))
                    for k, v in host.items():
                        if clocks[k] is not None:
                            v.append(clocks[k][i] / 1e6)
                    if unmaps is not None:
                        fg.append(unmaps[i])
                    for k, v in lent.items():
                        if loans[k] is not None:
                            v.append(loans[k][i])
            # A fit needs different counts, and maps enough to be a cost.
            if len(set(xs)) < 2 or sum(xs) < len(xs):
                continue
            mx, my = statistics.fmean(xs), statistics.fmean(ys)
            slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys)) /
                     sum((x - mx) ** 2 for x in xs))
            # How the placements' time falls over the steps: a cost spread
            # thin (every step re-lays a little) and one in a few steps (the
            # steps that reach the peak lay memory out again) call for
            # different cures.
            prep = sorted(host["prepare_ns"], reverse=True)
            top = prep[:max(1, math.ceil(len(prep) / 10))]
            out.append({"workload": workload, "config": config, "steps": len(xs),
                        "maps_per_step": mx, "extra_ms_per_step": my,
                        "us_per_map": slope * 1e3, "extra_ms_without_maps": my - slope * mx,
                        "foreground_unmaps_per_step": statistics.fmean(fg) if fg else None,
                        "loans_per_step": (statistics.fmean(lent["num_cross_stream_reuses"])
                                           if lent["num_cross_stream_reuses"] else None),
                        "device_waits_per_step": (statistics.fmean(lent["num_device_waits"])
                                                  if lent["num_device_waits"] else None),
                        "prepare_ms_median_step": statistics.median(prep) if prep else None,
                        "prepare_ms_max_step": prep[0] if prep else None,
                        "prepare_share_top_tenth": (sum(top) / sum(prep)
                                                    if prep and sum(prep) > 0 else None),
                        # ccalloc's own clock: host ms per step in placements
                        # that mapped, in waits, and on the unmap worker.
                        **{k.replace("_ns", "_ms_per_step"): statistics.fmean(v) if v else None
                           for k, v in host.items()}})
    return out


def placement_thirds(runs):
    """ccalloc's placements (its own clock, prepare_ns: the launching
    thread's time in placements that mapped memory, waits included) in each
    third of the timed steps, as ms a step and as a share of the same steps'
    time, over a configuration's runs of a workload. A training run's mean
    step is its steady steps': the first third holds most of the steps that
    reach a new peak (sequence lengths drawn at random set records ever more
    rarely), the last shows what the allocator costs once they are rare.
    Runs without the clock are left out; None where no run has it."""
    out = []
    ok = [r for r in good_runs(runs) if r.get("step_calls")]
    for key in dict.fromkeys((r["workload"], r["config"]) for r in ok):
        rs = [r for r in ok if (r["workload"], r["config"]) == key]
        thirds = [[0.0, 0.0, 0] for _ in range(3)]   # prepare ms, step ms, steps
        for r in rs:
            prepare = step_counter(r, "prepare_ns")
            if prepare is None:
                continue
            first = r["warmup"]
            n = min(len(r["step_ms"]), len(prepare)) - first
            for j in range(max(n, 0)):
                t = thirds[min(2, 3 * j // n)]
                t[0] += prepare[first + j] / 1e6
                t[1] += r["step_ms"][first + j]
                t[2] += 1
        if not all(t[2] for t in thirds):
            continue
        out.append({"workload": key[0], "config": key[1],
                    "prepare_ms_per_step": [t[0] / t[2] for t in thirds],
                    "share_of_step": [t[0] / t[1] if t[1] else None for t in thirds]})
    return out


def wait_steps(runs, threshold_ms=1.0):
    """Where a ccalloc configuration's extra step time sits: in the steps
    where it waited for queued work (wait_ns of at least threshold_ms: a
    drain of the GPU's queue, after which the GPU idles while the host
    queues work again) or in the rest. Each step is set against the
    baseline's same step of the same round (the same shape). A control, a
    configuration of PyTorch's own allocator beside the baseline (an A/A
    run, --torch-config), is set against it on the same steps: what the
    method reads there where no allocator differs. None where no run of a
    workload has the clock and a baseline run of its round. Also the mean
    size of the blocks whose placement waited under them (waited_block_mib:
    a huge block landing where memory left earlier in its step, or small
    ones), None where the runs did not count it."""
    ok = good_runs(runs)
    by = {(r["workload"], r["config"], r.get("round", 0)): r for r in ok}
    out = []
    for workload, config in dict.fromkeys((r["workload"], r["config"]) for r in ok):
        if not is_ccalloc(config):
            continue
        # Only PyTorch's allocator set as the baseline is: another setting
        # (native, cudaMallocAsync) is a different allocator, not a control.
        control = next((c for (w, c, _) in by if w == workload and c != BASELINE
                        and not is_ccalloc(c) and CONFIGS.get(c, {}).get("torch_conf")
                        == CONFIGS[BASELINE]["torch_conf"]), None)
        parts = {True: [[], [], []], False: [[], [], []]}   # ccalloc, control, wait ms
        waited = [0, 0]   # blocks that waited under them: bytes, count
        for (w, c, rnd), r in by.items():
            if (w, c) != (workload, config):
                continue
            waits = step_counter(r, "wait_ns")
            block_bytes = step_counter(r, "wait_under_block_bytes")
            block_waits = step_counter(r, "num_waits_under_block")
            base = by.get((workload, BASELINE, rnd))
            if waits is None or base is None:
                continue
            other = by.get((workload, control, rnd)) if control else None
            for i in range(r["warmup"], min(len(r["step_ms"]), len(waits),
                                            len(base["step_ms"]))):
                wait_ms = waits[i] / 1e6
                part = parts[wait_ms >= threshold_ms]
                part[0].append(r["step_ms"][i] - base["step_ms"][i])
                if other is not None and i < len(other["step_ms"]):
                    part[1].append(other["step_ms"][i] - base["step_ms"][i])
                part[2].append(wait_ms)
                if block_bytes is not None and block_waits is not None:
                    waited[0] += block_bytes[i]
                    waited[1] += block_waits[i]
        if not parts[True][0] and not parts[False][0]:
            continue
        mean = lambda xs: statistics.fmean(xs) if xs else None   # noqa: E731
        total = sum(parts[True][0]) + sum(parts[False][0])
        out.append({"workload": workload, "config": config, "control": control,
                    "threshold_ms": threshold_ms,
                    "wait_steps": len(parts[True][0]),
                    "wait_steps_extra_ms": mean(parts[True][0]),
                    "wait_steps_control_ms": mean(parts[True][1]),
                    "wait_steps_wait_ms": mean(parts[True][2]),
                    "other_steps": len(parts[False][0]),
                    "other_steps_extra_ms": mean(parts[False][0]),
                    "other_steps_control_ms": mean(parts[False][1]),
                    "wait_steps_share_of_extra": (sum(parts[True][0]) / total
                                                  if total > 0 else None),
                    "waited_block_mib": (waited[0] / waited[1] / 2**20
                                         if waited[1] > 0 else None)})
    return out


def worst_cases(summary, runs, workloads, configs):
    """For every ccalloc configuration: the largest mean step time ratio against
    native_expandable and the largest peak reserved / peak allocated over the
    workloads, and which workloads have no figure (failed or skipped)."""
    out = []
    for config in [c for c in configs if is_ccalloc(c)]:
        rows = {s["workload"]: s for s in summary if s["config"] == config}
        timed = [s for s in rows.values() if s["mean_vs_expandable"] is not None]
        worst_time = max(timed, key=lambda s: s["mean_vs_expandable"], default=None)
        worst_mem = max((s for s in rows.values() if s["reserved_over_allocated"] is not None),
                        key=lambda s: s["reserved_over_allocated"], default=None)
        problems = {}
        for r in runs:
            if r["config"] in (config, BASELINE) and ("error" in r or r.get("skipped")):
                problems.setdefault(r["workload"], set()).add(
                    f"{r['config']} round {r.get('round', 0) + 1} "
                    + ("skipped" if r.get("skipped") else "failed"))
        out.append({
            "config": config, "workloads": len(workloads),
            "with_time_ratio": len(timed), "with_memory_ratio": len(rows),
            "worst_time_ratio": worst_time and worst_time["mean_vs_expandable"],
            "worst_time_workload": worst_time and worst_time["workload"],
            "worst_time_ratio_max_round": worst_time and max(worst_time["mean_vs_expandable_rounds"]),
            "worst_reserved_over_allocated": worst_mem and worst_mem["reserved_over_allocated"],
            "worst_memory_workload": worst_mem and worst_mem["workload"],
            "incomplete": {w: sorted(p) for w, p in problems.items()},
            "missing_time_ratio": [w for w in workloads if w not in {s["workload"] for s in timed}],
            "missing_memory_ratio": [w for w in workloads if w not in rows
                                     or rows[w]["reserved_over_allocated"] is None],
        })
    return out

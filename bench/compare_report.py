"""The tables bench/compare_training.py prints: every run, the summary over
rounds, the driver calls in step time, ccalloc's placements by third of the
timed steps, where its extra time sits, and the traces recorded. Each takes
the figures compare_stats.py computed (or the runs themselves) and prints;
none computes a figure of its own.
"""

import os
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
if BENCH not in sys.path:   # the siblings below, however this module was reached
    sys.path.insert(0, BENCH)
from compare_configs import BASELINE  # noqa: E402

GiB = 1 << 30


def fmt_bytes(n):
    return "-" if n is None else f"{n / GiB:7.2f} GiB"


def fmt_ratio(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def print_table(runs, maxb, cap_gib):
    print()
    head = (f"{'workload':11} {'allocator':18} {'rnd':>3} {'mean ms':>8} {'stdev':>7} "
            f"{'median':>8} {'max ms':>8} {'peak alloc':>11} {'peak resv':>11} {'resv/alloc':>10} "
            f"{'dev peak':>11} {'dev after':>11}")
    print(head)
    print("-" * len(head))
    for r in runs:
        rnd = r.get("round", 0) + 1
        if r.get("skipped"):
            print(f"{r['workload']:11} {r['config']:18} {rnd:3d} skipped: {r['skipped']}")
            continue
        if "error" in r:
            print(f"{r['workload']:11} {r['config']:18} {rnd:3d} failed: "
                  f"{r['error'].splitlines()[-1][:60]}")
            continue
        ratio = r["reserved_over_allocated"]
        print(f"{r['workload']:11} {r['config']:18} {rnd:3d} {r['mean_step_ms']:8.1f} "
              f"{r['stdev_step_ms']:7.1f} {r['median_step_ms']:8.1f} {r['max_step_ms']:8.1f} "
              f"{fmt_bytes(r['peak_allocated']):>11} {fmt_bytes(r['peak_reserved']):>11} "
              f"{fmt_ratio(ratio, 4):>10} {fmt_bytes(r['device_used_peak']):>11} "
              f"{fmt_bytes(r['device_used_after']):>11}")
    if maxb:
        print()
        print(f"largest ResNet-50 batch at 224 px under {cap_gib:g} GiB")
        for r in maxb:
            if "error" in r:
                print(f"  {r['config']:18} failed: {r['error'].splitlines()[-1][:60]}")
            else:
                print(f"  {r['config']:18} {r['max_batch']:6d}   ({len(r['probes'])} probes, "
                      f"first failing {r['first_failing']})")


def fmt_ms(v):
    return "-" if v is None else f"{v:.2f}"


def print_heading(description, head):
    """A table's opening: a blank line, what it shows, its column heads and a rule."""
    print()
    print(description)
    print(head)
    print("-" * len(head))


def print_summary(summary, worst, rounds):
    print_heading(
        f"summary over {rounds} interleaved round(s). Step time: 'mean' is the mean over rounds "
        "of each run's mean step time after warm-up, 'min'/'max'/'sd' the spread of those "
        "per-run means, 'in-run sd' the step-to-step stdev within a run (shapes change every "
        f"step); 'vs {BASELINE}' and 'vs native' are mean / that allocator's mean over the same "
        "rounds, 'rounds' the same ratio round by round.",
        f"{'workload':11} {'allocator':18} {'n':>2} {'mean ms':>8} {'min':>8} {'max':>8} "
        f"{'sd':>6} {'in-run sd':>9} {'median':>8} {'vs expand':>9} {'rounds':>13} "
        f"{'vs native':>9}")
    for r in summary:
        rr = r["mean_vs_expandable_rounds"]
        span = f"{min(rr):.3f}..{max(rr):.3f}" if rr else "-"
        print(f"{r['workload']:11} {r['config']:18} {r['rounds']:2d} {r['mean_step_ms']:8.1f} "
              f"{r['mean_step_ms_min']:8.1f} {r['mean_step_ms_max']:8.1f} "
              f"{r['mean_step_ms_stdev']:6.2f} {r['step_stdev_ms']:9.1f} {r['median_step_ms']:8.1f} "
              f"{fmt_ratio(r['mean_vs_expandable']):>9} {span:>13} {fmt_ratio(r['mean_vs_native']):>9}")
    if any(r.get("host_adjusted_vs_expandable") is not None for r in summary):
        print_heading(
            f"host adjusted (a diagnostic; the mean above is the figure of record): step time "
            f"against {BASELINE}'s fitted over every timed step with one term per step (the "
            f"same shape in every run), one for the allocator and one for the host probe (a "
            f"~1 ms loop before each step: the host runs at one speed or at half of it, "
            f"switching every few seconds); 'err' is the fit's standard error of the log, "
            f"which understates the spread between rounds; 'elast' is step time's elasticity "
            f"to the probe",
            f"{'workload':11} {'allocator':18} {'adjusted':>9} {'err':>6} {'elast':>6} {'steps':>6}")
        for r in summary:
            if r.get("host_adjusted_vs_expandable") is None:
                continue
            print(f"{r['workload']:11} {r['config']:18} "
                  f"{fmt_ratio(r['host_adjusted_vs_expandable']):>9} "
                  f"{r['host_adjusted_log_error']:6.3f} {r['host_probe_elasticity']:6.2f} "
                  f"{r['host_adjusted_steps']:6d}")
    if any(r["mean_launch_ms"] is not None for r in summary):
        print_heading(
            "where the time goes, means over rounds: 'launch' is the host's time until the "
            "step's last launch returned, 'gpu span' the current stream's time from the "
            "step's first to its last work (idle gaps included), 'kernels' the GPU time of "
            "the kernels alone (--kernel-profile). launch near step: host bound. 'host ref' "
            "is a fixed pure-Python loop timed in each run (host_reference_ms): a round whose "
            "host ran slow shows there, whatever the allocator.",
            f"{'workload':11} {'allocator':18} {'step ms':>8} {'launch':>8} {'gpu span':>8} "
            f"{'kernels':>8} {'host ref':>8}")
        fmt = lambda v: "-" if v is None else f"{v:.1f}"
        for r in summary:
            print(f"{r['workload']:11} {r['config']:18} {r['mean_step_ms']:8.1f} "
                  f"{fmt(r['mean_launch_ms']):>8} {fmt(r['mean_gpu_span_ms']):>8} "
                  f"{fmt(r['kernel_ms_per_step']):>8} {fmt(r.get('host_ref_ms')):>8}")
    print_heading(
        "memory, worst round: peak reserved / peak allocated from torch.cuda.max_memory_reserved() "
        "/ max_memory_allocated(); 'device gap' is the largest |device memory in use - in use "
        "before the first allocation - reserved| / reserved, read together at the end of every "
        "step; 'other' is device memory no allocator holds (library kernels loaded lazily), "
        "measured after the warm-up steps, and 'gap after' the same gap with it counted",
        f"{'workload':11} {'allocator':18} {'peak alloc':>11} {'peak resv':>11} "
        f"{'resv/alloc':>10} {'device gap':>10} {'other':>10} {'gap after':>9}")
    for r in summary:
        print(f"{r['workload']:11} {r['config']:18} "
              f"{fmt_bytes(r['peak_allocated']):>11} {fmt_bytes(r['peak_reserved']):>11} "
              f"{fmt_ratio(r['reserved_over_allocated'], 4):>10} "
              f"{100 * r['device_vs_reserved_max_gap']:9.2f}% "
              f"{fmt_bytes(r['other_device_memory']):>10} "
              f"{100 * r['device_vs_reserved_max_gap_after_warmup']:8.2f}%")
    for w in worst:
        print()
        t = (f"mean step time {w['worst_time_ratio']:.3f} x {BASELINE}'s ({w['worst_time_workload']}; "
             f"worst single round {w['worst_time_ratio_max_round']:.3f})"
             if w["worst_time_ratio"] is not None else f"no step time ratio (no paired {BASELINE} runs)")
        m = (f"peak reserved / peak allocated {w['worst_reserved_over_allocated']:.4f} "
             f"({w['worst_memory_workload']})" if w["worst_reserved_over_allocated"] is not None
             else "no memory figures")
        print(f"worst case over workloads for {w['config']} ({w['with_time_ratio']} of "
              f"{w['workloads']} workloads with a time ratio): {t}; {m}")
        if w["missing_time_ratio"]:
            print(f"  no time ratio, so not in the worst case: {', '.join(w['missing_time_ratio'])}")
        if w["missing_memory_ratio"]:
            print(f"  no memory figure, so not in the worst case: "
                  f"{', '.join(w['missing_memory_ratio'])}")
        for workload, problems in w["incomplete"].items():
            print(f"  incomplete: {workload}: {', '.join(problems)}")


def print_move_costs(moves):
    """move_costs' table: what each chunk a ccalloc configuration maps costs."""
    print_heading(
        f"driver calls in step time: each ccalloc step's time less {BASELINE}'s on the "
        "same step (mean over its rounds), fitted to the chunks the step mapped; "
        "'prepare', 'wait' and 'worker ms' are ccalloc's own clock per step: the "
        "launching thread in placements that mapped memory, in waits for queued work "
        "(of which 'under', 'trim', 'rel': pages under a block still mapped to moved "
        "memory, a trim beyond the marks, memory going back), the unmap worker's "
        "thread, and the unmaps the launching thread made itself ('fg unmaps', "
        "their ms within 'prepare'), as are its map calls with their access ('map ms') "
        "and its creates of new memory ('create ms'); what 'prepare' has beyond "
        "those and the waits is the cache's own bookkeeping; 'loans' and 'dev waits' "
        "are blocks lent across streams and the device-side waits that ordered them "
        "(cross_stream_reuse); 'prep med', 'prep max' and 'top 10%' say how 'prepare' "
        "falls over the steps: its median and largest step, and the share of it in the "
        "tenth of the steps that cost most",
        f"{'workload':11} {'allocator':18} {'steps':>5} {'maps/step':>9} "
        f"{'extra ms':>8} {'us/map':>7} {'extra ms, no maps':>17} {'prepare ms':>10} "
        f"{'wait ms':>7} {'under':>6} {'trim':>6} {'rel':>6} {'worker ms':>9} "
        f"{'fg unmaps':>9} {'fg ms':>6} {'map ms':>6} {'create ms':>9} "
        f"{'loans':>6} {'dev waits':>9} "
        f"{'prep med':>8} {'prep max':>8} {'top 10%':>7}")
    for m in moves:
        print(f"{m['workload']:11} {m['config']:18} {m['steps']:5d} {m['maps_per_step']:9.1f} "
              f"{m['extra_ms_per_step']:8.2f} {m['us_per_map']:7.1f} "
              f"{m['extra_ms_without_maps']:17.2f} {fmt_ms(m.get('prepare_ms_per_step')):>10} "
              f"{fmt_ms(m.get('wait_ms_per_step')):>7} "
              f"{fmt_ms(m.get('wait_under_block_ms_per_step')):>6} "
              f"{fmt_ms(m.get('wait_trim_ms_per_step')):>6} "
              f"{fmt_ms(m.get('wait_release_ms_per_step')):>6} "
              f"{fmt_ms(m.get('worker_ms_per_step')):>9} "
              f"{fmt_ms(m.get('foreground_unmaps_per_step')):>9} "
              f"{fmt_ms(m.get('foreground_unmap_ms_per_step')):>6} "
              f"{fmt_ms(m.get('map_ms_per_step')):>6} "
              f"{fmt_ms(m.get('create_ms_per_step')):>9} "
              f"{fmt_ms(m.get('loans_per_step')):>6} "
              f"{fmt_ms(m.get('device_waits_per_step')):>9} "
              f"{fmt_ms(m.get('prepare_ms_median_step')):>8} "
              f"{fmt_ms(m.get('prepare_ms_max_step')):>8} "
              f"{fmt_ratio(m.get('prepare_share_top_tenth'), 2):>7}")


def print_placement_thirds(thirds):
    """placement_thirds' table: ccalloc's placements by third of the timed steps."""
    print_heading(
        "ccalloc's placements by third of the timed steps (its own clock, waits "
        "included): ms a step, and the share of those steps' time; the first third "
        "holds most of the steps that reach a new peak",
        f"{'workload':11} {'allocator':18} {'first ms':>8} {'middle ms':>9} "
        f"{'last ms':>7} {'first %':>7} {'middle %':>8} {'last %':>6}")
    for t in thirds:
        ms, share = t["prepare_ms_per_step"], t["share_of_step"]
        print(f"{t['workload']:11} {t['config']:18} {ms[0]:8.2f} {ms[1]:9.2f} {ms[2]:7.2f} "
              + " ".join(f"{100 * x:{w}.1f}" for x, w in zip(share, (7, 8, 6))))


def print_wait_steps(waits):
    """wait_steps' table: where ccalloc's extra step time sits."""
    print_heading(
        f"where ccalloc's extra time sits: each step against {BASELINE}'s same step of the "
        "same round, split by whether ccalloc waited for queued work in it (at least "
        "1 ms: a drain of the GPU's queue); 'control' is the A/A configuration "
        "(--torch-config) on the same steps, 'wait ms' ccalloc's waits in those steps, "
        "'share' the part of its extra time that the waiting steps hold, 'block MiB' the "
        "mean size of the blocks that waited for pages under them",
        f"{'workload':11} {'allocator':18} {'wait steps':>10} {'ms more':>8} {'control':>8} "
        f"{'wait ms':>8} {'other steps':>11} {'ms more':>8} {'control':>8} {'share':>6} "
        f"{'block MiB':>9}")
    opt = lambda x, f: "-" if x is None else format(x, f)   # noqa: E731
    for w in waits:
        print(f"{w['workload']:11} {w['config']:18} {w['wait_steps']:10d} "
              f"{opt(w['wait_steps_extra_ms'], '8.1f'):>8} "
              f"{opt(w['wait_steps_control_ms'], '8.1f'):>8} "
              f"{opt(w['wait_steps_wait_ms'], '8.1f'):>8} {w['other_steps']:11d} "
              f"{opt(w['other_steps_extra_ms'], '8.1f'):>8} "
              f"{opt(w['other_steps_control_ms'], '8.1f'):>8} "
              f"{opt(w['wait_steps_share_of_extra'], '6.2f'):>6} "
              f"{opt(w.get('waited_block_mib'), '9.1f'):>9}")


def print_traces(traces):
    """A line per trace recorded (--record-traces): where it is, or why not."""
    print()
    for t in traces:
        if t.get("skipped"):
            what = f"skipped: {t['skipped']}"
        elif "path" not in t:
            what = f"failed: {t['error'].splitlines()[-1][:60]}"
        else:
            what = f"{t['path']} ({t['events']} events, {t['bytes'] / 1024:.0f} KiB)"
            if "error" in t:
                what += f", but the run failed: {t['error'].splitlines()[-1][:60]}"
        print(f"trace {t['workload']}: {what}")

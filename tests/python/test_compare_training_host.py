"""Host-only tests of bench/compare_training.py's step plan: no torch, no GPU.

    python3 tests/python/test_compare_training_host.py   # or: python3 -m pytest tests/python
"""

import unittest

from bench_module import load

compare_training = load("compare_training")


class WarmEveryShapeTest(unittest.TestCase):
    def test_repeated_shapes_are_each_warmed_once_before_the_timed_steps(self):
        shapes = [48, 48, 24, 40, 56] + [48, 32, 64, 32, 64, 24, 40, 56, 32, 64, 48, 24] 
        planned, warmup = compare_training.warm_every_shape(shapes, 5)
        # The warm-up keeps its own steps and adds 32 and 64 (first seen
        # after it), in order of first appearance; the timed steps follow
        # unchanged.
        self.assertEqual(planned[:5], shapes[:5])
        self.assertEqual(planned[5:warmup], [32, 64])
        self.assertEqual(planned[warmup:], shapes[5:])
        self.assertTrue(set(planned[warmup:]) <= set(planned[:warmup]))

    def test_a_workload_whose_steps_are_mostly_new_is_left_as_it_is(self):
        shapes = [(8, n) for n in range(256, 256 + 30)]
        self.assertEqual(compare_training.warm_every_shape(shapes, 5), (shapes, 5))

    def test_unhashable_shapes_compare_by_value(self):
        shapes = [[64, 160], [96, 192]] * 6
        planned, warmup = compare_training.warm_every_shape(shapes, 1)
        self.assertEqual(warmup, 2)
        self.assertEqual(planned[:warmup], [[64, 160], [96, 192]])


def run(config, rnd, mean, launch=None, gpu=None, kernel=None):
    r = {"workload": "unet", "config": config, "round": rnd, "mean_step_ms": mean,
         "median_step_ms": mean, "stdev_step_ms": 1.0, "max_step_ms": mean + 1,
         "peak_allocated": 100, "peak_reserved": 101, "reserved_over_allocated": 1.01,
         "device_vs_reserved_max_gap": 0.0, "other_device_memory": 0,
         "device_vs_reserved_max_gap_after_warmup": 0.0}
    if launch is not None:
        r.update(mean_launch_ms=launch, mean_gpu_span_ms=gpu,
                 kernel_profile=None if kernel is None else {"kernel_ms_per_step": kernel})
    return r


def main_with(run_child, argv):
    """compare_training.main, quiet, with each run made by `run_child`
    (run_child's arguments) instead of a child process on a GPU."""
    import contextlib, io
    real = compare_training.run_child, compare_training.print_table
    compare_training.run_child = run_child
    compare_training.print_table = lambda *a: None
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return compare_training.main(argv)
    finally:
        compare_training.run_child, compare_training.print_table = real


def child_result(config, workload, ms):
    """What a child run returns: 60 ms a step for native_expandable, `ms`
    for the others."""
    return run(config, 0, 60.0 if config == "native_expandable" else ms) | {
        "workload": workload, "wall_s": 0.1, "device_used_peak": 101}


def main_to_json(run_child, argv):
    """main_with, writing --out to a temporary file: (exit status, the
    result it wrote)."""
    import json, os, tempfile
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        rc = main_with(run_child, argv + ["--out", out])
        with open(out) as f:
            return rc, json.load(f)


class SummaryTest(unittest.TestCase):
    def test_where_the_time_goes_is_averaged_over_the_runs_that_have_it(self):
        runs = [run("native_expandable", 0, 60.0, launch=20.0, gpu=58.0, kernel=50.0),
                run("native_expandable", 1, 62.0, launch=22.0, gpu=60.0),
                run("ccalloc", 0, 66.0),  # from before the figures: none
                run("ccalloc", 1, 63.0, launch=30.0, gpu=61.0, kernel=52.0)]
        rows = {r["config"]: r for r in compare_training.summarize(runs)}
        e, c = rows["native_expandable"], rows["ccalloc"]
        self.assertAlmostEqual(e["mean_launch_ms"], 21.0)
        self.assertAlmostEqual(e["mean_gpu_span_ms"], 59.0)
        self.assertAlmostEqual(e["kernel_ms_per_step"], 50.0)  # one run profiled
        self.assertAlmostEqual(c["mean_launch_ms"], 30.0)
        self.assertAlmostEqual(c["kernel_ms_per_step"], 52.0)
        self.assertAlmostEqual(c["mean_vs_expandable"], (66.0 + 63.0) / (60.0 + 62.0))

    def test_runs_without_the_figures_give_none(self):
        rows = compare_training.summarize([run("native_expandable", 0, 60.0)])
        self.assertIsNone(rows[0]["mean_launch_ms"])
        self.assertIsNone(rows[0]["kernel_ms_per_step"])
        self.assertIsNone(rows[0]["host_ref_ms"])

    def test_each_runs_host_reference_is_kept_by_round_and_averaged(self):
        a, b = run("ccalloc", 0, 60.0), run("ccalloc", 1, 70.0)
        a["host_ref_ms"], b["host_ref_ms"] = 10.0, 14.0
        row = compare_training.summarize([a, b])[0]
        self.assertEqual(row["host_ref_ms_rounds"], [10.0, 14.0])
        self.assertAlmostEqual(row["host_ref_ms"], 12.0)


class HostReferenceTest(unittest.TestCase):
    def test_the_reference_times_the_loop_and_grows_with_it(self):
        short = compare_training.host_reference_ms(repeats=3, iterations=20_000)
        long = compare_training.host_reference_ms(repeats=3, iterations=400_000)
        self.assertGreater(short, 0.0)
        # Twenty times the work: well over twice the time on any host.
        self.assertGreater(long, 2 * short)



class HostAdjustedTest(unittest.TestCase):
    SHAPES = [100.0, 150.0, 80.0, 120.0, 90.0, 200.0]

    @classmethod
    def probed(cls, config, rnd, factor, slow, host_cost=1.0):
        """A run whose step i takes SHAPES[i] * factor, times 1 + host_cost
        on the steps in `slow` (the host at half speed: probe 2.0, else 1.0)."""
        ms = [s * factor * ((1 + host_cost) if i in slow else 1.0)
              for i, s in enumerate(cls.SHAPES)]
        probes = [2.0 if i in slow else 1.0 for i in range(len(cls.SHAPES))]
        return {"workload": "unet", "config": config, "round": rnd, "warmup": 1,
                "step_ms": [999.0] + ms, "host_probe_ms": [0.5] + probes}

    def test_the_host_state_is_taken_out_of_the_ratio(self):
        # ccalloc is 3% slower on every step but drew the slow host on four
        # steps, the baseline on one: the plain ratio reads far more.
        base = [self.probed("native_expandable", 0, 1.0, {2}),
                self.probed("native_expandable", 1, 1.0, {0})]
        mine = [self.probed("ccalloc", 0, 1.03, {1, 3, 4, 5}),
                self.probed("ccalloc", 1, 1.03, {0, 2})]
        plain = (sum(sum(r["step_ms"][1:]) for r in mine) /
                 sum(sum(r["step_ms"][1:]) for r in base))
        self.assertGreater(plain, 1.3)
        ratio, err, elasticity, steps = compare_training.host_adjusted_ratio(mine, base)
        self.assertAlmostEqual(ratio, 1.03, places=6)
        self.assertAlmostEqual(elasticity, 1.0, places=6)  # twice the probe, twice the time
        self.assertLess(err, 1e-6)
        self.assertEqual(steps, 4 * 6)

    def test_without_probes_or_without_a_host_signal_it_gives_none(self):
        base = [self.probed("native_expandable", 0, 1.0, set())]
        mine = [self.probed("ccalloc", 0, 1.1, set())]
        # No step ran slow anywhere: the probe cannot be told from a constant.
        self.assertIsNone(compare_training.host_adjusted_ratio(mine, base)[0])
        bare = [{k: v for k, v in r.items() if k != "host_probe_ms"} for r in mine + base]
        self.assertEqual(compare_training.host_adjusted_ratio(bare[:1], bare[1:]),
                         (None, None, None, 0))

    def test_the_summary_carries_it_for_all_but_the_baseline(self):
        runs = []
        for config, factor, slow in (("native_expandable", 1.0, {1}), ("ccalloc", 0.95, {4})):
            r = self.probed(config, 0, factor, slow)
            r.update({k: v for k, v in run(config, 0, 1.0).items() if k not in r})
            r["mean_step_ms"] = sum(r["step_ms"][1:]) / 6
            runs.append(r)
        rows = {r["config"]: r for r in compare_training.summarize(runs)}
        self.assertAlmostEqual(rows["ccalloc"]["host_adjusted_vs_expandable"], 0.95, places=6)
        self.assertEqual(rows["ccalloc"]["host_adjusted_steps"], 12)
        self.assertIsNone(rows["native_expandable"]["host_adjusted_vs_expandable"])


class MoveCostTest(unittest.TestCase):
    def steps(self, config, rnd, ms, maps):
        return {"workload": "unet", "config": config, "round": rnd, "warmup": 1,
                "step_ms": [500.0] + ms,
                "step_calls": {"steps": [[999, 0, 0]] + [[m, m, 0] for m in maps]}}

    def test_the_extra_time_is_fitted_to_the_chunks_mapped_on_the_same_steps(self):
        base = [60.0, 80.0, 70.0, 65.0]
        maps = [10, 200, 0, 40]
        runs = [self.steps("native_expandable", 0, [b - 1 for b in base], [0] * 4),
                self.steps("native_expandable", 1, [b + 1 for b in base], [0] * 4),
                # 75 us per chunk mapped, 0.5 ms more whatever the calls.
                self.steps("ccalloc", 0, [b + 0.5 + 0.075 * m for b, m in zip(base, maps)], maps)]
        (m,) = compare_training.move_costs(runs)
        self.assertEqual((m["config"], m["steps"]), ("ccalloc", 4))  # warm-up left out
        self.assertAlmostEqual(m["us_per_map"], 75.0)
        self.assertAlmostEqual(m["extra_ms_without_maps"], 0.5)
        self.assertAlmostEqual(m["maps_per_step"], 62.5)
        self.assertIsNone(m["prepare_ms_per_step"])  # runs that did not read the clocks

    def test_the_allocators_own_clocks_are_averaged_over_the_timed_steps(self):
        runs = [self.steps("native_expandable", 0, [60.0, 80.0], [0, 0]),
                self.steps("ccalloc", 0, [61.0, 90.0], [1, 100])]
        runs[1]["step_calls"] = {
            "counters": ["num_maps", "num_unmaps", "num_stream_syncs", "prepare_ns", "wait_ns",
                         "worker_ns"],
            "steps": [[999, 0, 0, 9e9, 9e9, 9e9], [1, 1, 0, 1e6, 0, 2e6],
                      [100, 100, 1, 7e6, 1e6, 4e6]]}
        (m,) = compare_training.move_costs(runs)
        self.assertAlmostEqual(m["prepare_ms_per_step"], 4.0)  # warm-up step left out
        self.assertAlmostEqual(m["wait_ms_per_step"], 0.5)
        self.assertAlmostEqual(m["worker_ms_per_step"], 3.0)
        self.assertIsNone(m["wait_trim_ms_per_step"])  # not read by these runs

    def test_how_the_placements_time_falls_over_the_steps(self):
        # Twenty timed steps: eighteen cheap ones and two that lay memory out
        # again (the steps that reach the peak).
        prep = [0.5] * 9 + [40.0] + [0.5] * 9 + [60.0]
        maps = [1] * 9 + [300] + [1] * 9 + [500]
        runs = [self.steps("native_expandable", 0, [60.0] * 20, [0] * 20),
                self.steps("ccalloc", 0, [61.0] * 20, maps)]
        runs[1]["step_calls"] = {
            "counters": ["num_maps", "num_unmaps", "num_stream_syncs", "prepare_ns"],
            "steps": [[999, 0, 0, 9e9]] + [[m, m, 0, p * 1e6] for m, p in zip(maps, prep)]}
        (m,) = compare_training.move_costs(runs)
        self.assertAlmostEqual(m["prepare_ms_median_step"], 0.5)
        self.assertAlmostEqual(m["prepare_ms_max_step"], 60.0)   # warm-up's 9e9 left out
        self.assertAlmostEqual(m["prepare_share_top_tenth"], 100.0 / 109.0)
        runs[1]["step_calls"]["steps"] = [[999, 0, 0, 0]] + [[m, m, 0, 0] for m in maps]
        (m,) = compare_training.move_costs(runs)
        self.assertIsNone(m["prepare_share_top_tenth"])          # no time to share out

    def test_waits_are_split_by_what_waited(self):
        runs = [self.steps("native_expandable", 0, [60.0, 80.0], [0, 0]),
                self.steps("ccalloc", 0, [61.0, 90.0], [1, 100])]
        runs[1]["step_calls"] = {
            "counters": ["num_maps", "num_unmaps", "num_stream_syncs", "prepare_ns", "wait_ns",
                         "worker_ns", "wait_under_block_ns", "wait_trim_ns", "wait_release_ns"],
            "steps": [[999] * 9, [1, 1, 0, 1e6, 0, 2e6, 0, 0, 0],
                      [100, 100, 2, 9e6, 6e6, 4e6, 1e6, 4e6, 0]]}
        (m,) = compare_training.move_costs(runs)
        self.assertAlmostEqual(m["wait_ms_per_step"], 3.0)
        self.assertAlmostEqual(m["wait_under_block_ms_per_step"], 0.5)
        self.assertAlmostEqual(m["wait_trim_ms_per_step"], 2.0)
        self.assertAlmostEqual(m["wait_release_ms_per_step"], 0.0)

    def test_loans_across_streams_are_averaged_over_the_timed_steps(self):
        runs = [self.steps("native_expandable", 0, [60.0, 80.0], [0, 0]),
                self.steps("ccalloc_xs", 0, [61.0, 90.0], [1, 100])]
        runs[1]["step_calls"] = {
            "counters": ["num_maps", "num_unmaps", "num_stream_syncs", "num_foreground_unmaps",
                         "num_cross_stream_reuses", "num_device_waits"],
            "steps": [[999] * 6, [1, 1, 0, 0, 10, 14], [100, 100, 0, 3, 30, 50]]}
        (m,) = compare_training.move_costs(runs)
        self.assertAlmostEqual(m["loans_per_step"], 20.0)  # warm-up step left out
        self.assertAlmostEqual(m["device_waits_per_step"], 32.0)
        runs[1]["step_calls"]["counters"] = runs[1]["step_calls"]["counters"][:4]
        (m,) = compare_training.move_costs(runs)
        self.assertIsNone(m["loans_per_step"])  # runs from before the counters

    def test_a_configuration_that_hardly_maps_gets_no_fit(self):
        runs = [self.steps("native_expandable", 0, [60.0, 61.0], [0, 0]),
                self.steps("loose", 0, [59.0, 62.0], [0, 1])]
        self.assertEqual(compare_training.move_costs(runs), [])


class PlacementThirdsTest(unittest.TestCase):
    def run_(self, rnd, prep_ms, step_ms, warmup=2):
        n = len(prep_ms)
        return {"workload": "gpt2", "config": "ccalloc", "round": rnd, "warmup": warmup,
                "step_ms": [999.0] * warmup + step_ms,
                "step_calls": {"counters": ["num_maps", "prepare_ns"],
                               "steps": [[0, 9e9]] * warmup + [[1, p * 1e6] for p in prep_ms]}}

    def test_each_third_of_the_timed_steps_is_averaged_over_the_runs(self):
        # Nine timed steps: the peaks early, steady after.
        a = self.run_(0, [30, 10, 2, 1, 1, 1, 0, 0, 3], [100.0] * 9)
        b = self.run_(1, [20, 0, 4, 1, 1, 1, 0, 0, 0], [200.0] * 9)
        (t,) = compare_training.placement_thirds([a, b])
        self.assertEqual((t["workload"], t["config"]), ("gpt2", "ccalloc"))
        self.assertAlmostEqual(t["prepare_ms_per_step"][0], 66.0 / 6)   # warm-up left out
        self.assertAlmostEqual(t["prepare_ms_per_step"][1], 1.0)
        self.assertAlmostEqual(t["prepare_ms_per_step"][2], 0.5)
        self.assertAlmostEqual(t["share_of_step"][0], 66.0 / 900.0)
        self.assertAlmostEqual(t["share_of_step"][2], 3.0 / 900.0)

    def test_runs_without_the_clock_or_with_too_few_steps_give_nothing(self):
        a = self.run_(0, [1.0, 2.0], [100.0, 100.0])
        self.assertEqual(compare_training.placement_thirds([a]), [])
        b = self.run_(0, [1.0] * 6, [100.0] * 6)
        b["step_calls"]["counters"] = ["num_maps", "wait_ns"]
        self.assertEqual(compare_training.placement_thirds([b]), [])


class WaitStepsTest(unittest.TestCase):
    """wait_steps: ccalloc's extra step time split by the steps it waited in."""

    @staticmethod
    def timed(config, rnd, steps, waits=None):
        r = run(config, rnd, sum(steps) / len(steps)) | {"step_ms": steps, "warmup": 1}
        if waits is not None:
            r["step_calls"] = {"counters": ["num_maps", "wait_ns"],
                               "steps": [[0, int(w * 1e6)] for w in waits]}
        return r

    def test_the_waiting_steps_and_the_rest_are_set_against_the_baseline_apart(self):
        runs = []
        for rnd, shift in ((0, 0.0), (1, 10.0)):   # round 1 ran 10 ms slower throughout
            runs += [self.timed("native_expandable", rnd, [99, 100, 100, 100, 100]),
                     self.timed("expandable_b", rnd, [99, 101, 100, 99, 100]),
                     # step 0 is warm-up (its wait does not count); step 2 waits 20 ms
                     self.timed("ccalloc", rnd, [150, 102, 130, 102, 102],
                                waits=[50, 0, 20, 0.5, 0])]
            for r in runs[-3:]:
                r["step_ms"] = [x + shift for x in r["step_ms"]]
        [w] = compare_training.wait_steps(runs)
        self.assertEqual((w["workload"], w["config"], w["control"]),
                         ("unet", "ccalloc", "expandable_b"))
        self.assertEqual(w["wait_steps"], 2)          # step 2 of each round
        self.assertEqual(w["other_steps"], 6)         # steps 1, 3, 4 (0.5 ms is no drain)
        self.assertAlmostEqual(w["wait_steps_extra_ms"], 30.0)
        self.assertAlmostEqual(w["wait_steps_control_ms"], 0.0)
        self.assertAlmostEqual(w["wait_steps_wait_ms"], 20.0)
        self.assertAlmostEqual(w["other_steps_extra_ms"], 2.0)
        self.assertAlmostEqual(w["other_steps_control_ms"], 0.0)
        self.assertAlmostEqual(w["wait_steps_share_of_extra"], 60 / 72)
        self.assertIsNone(w["waited_block_mib"])      # these runs did not count it

    def test_the_blocks_that_waited_under_them_are_sized_over_the_timed_steps(self):
        mib = 2**20
        r = self.timed("ccalloc", 0, [150, 102, 130, 102, 102], waits=[50, 0, 20, 0, 5])
        # Step 0 (warm-up) waited for a 1 GiB block; step 2 for one of 900
        # MiB and, twice, one of 50; step 4 for one of 100.
        r["step_calls"] = {
            "counters": ["num_maps", "wait_ns", "num_waits_under_block",
                         "wait_under_block_bytes"],
            "steps": [[0, int(w * 1e6), n, b * mib] for w, n, b in
                      zip([50, 0, 20, 0, 5], [1, 0, 3, 0, 1], [1024, 0, 1000, 0, 100])]}
        [w] = compare_training.wait_steps([self.timed("native_expandable", 0, [100] * 5), r])
        self.assertAlmostEqual(w["waited_block_mib"], 1100 / 4)

    def test_another_pytorch_allocator_is_no_control(self):
        runs = [self.timed("native_expandable", 0, [100] * 5),
                self.timed("native", 0, [90] * 5),           # PyTorch's default allocator
                self.timed("ccalloc", 0, [101, 101, 120, 101, 101], waits=[0, 0, 5, 0, 0])]
        [w] = compare_training.wait_steps(runs)
        self.assertIsNone(w["control"])
        self.assertIsNone(w["wait_steps_control_ms"])
        self.assertAlmostEqual(w["wait_steps_extra_ms"], 20.0)

    def test_without_the_clock_or_a_baseline_in_the_round_there_is_nothing(self):
        runs = [self.timed("native_expandable", 0, [100] * 5),
                self.timed("ccalloc", 0, [101] * 5),                 # no step_calls
                self.timed("ccalloc", 1, [101] * 5, waits=[0] * 5)]  # round 1 has no baseline
        self.assertEqual(compare_training.wait_steps(runs), [])


class ConcurrentRoundsTest(unittest.TestCase):
    """--concurrent starts a round's allocators together, one process each."""

    def main(self, argv):
        import threading, time
        lock, state = threading.Lock(), {"active": 0, "most": 0, "calls": 0}

        def run_child(args, config, mode, workload=None, **_):
            with lock:
                state["active"] += 1
                state["calls"] += 1
                state["most"] = max(state["most"], state["active"])
            time.sleep(0.2)   # a run: long enough for its partners to start
            with lock:
                state["active"] -= 1
            return run(config, 0, 60.0 if config == "native_expandable" else 61.0) | {
                "workload": workload, "wall_s": 0.2, "device_used_peak": 101}

        return main_with(run_child, argv), state

    def test_a_rounds_allocators_run_side_by_side_and_are_summarized_by_round(self):
        import json, os, tempfile
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            rc, state = self.main(["--workloads", "unet,vit", "--configs",
                                   "native_expandable,ccalloc", "--rounds", "2", "--concurrent",
                                   "--out", out])
            with open(out) as f:
                result = json.load(f)
        self.assertEqual(rc, 0)
        self.assertEqual(state["calls"], 8)   # 2 rounds x 2 workloads x 2 allocators
        self.assertEqual(state["most"], 2)    # both allocators of a round at once, no more
        runs = result["runs"]
        self.assertEqual([(r["workload"], r["config"], r["round"]) for r in runs[:4]],
                         [("unet", "native_expandable", 0), ("unet", "ccalloc", 0),
                          ("vit", "native_expandable", 0), ("vit", "ccalloc", 0)])
        self.assertTrue(all(r["concurrent"] == 2 for r in runs))
        # Each run says where it started in its round: the order turns.
        self.assertEqual([(r["config"], r["round"], r["start_position"]) for r in runs
                          if r["workload"] == "unet"],
                         [("native_expandable", 0, 0), ("ccalloc", 0, 1),
                          ("native_expandable", 1, 1), ("ccalloc", 1, 0)])
        rows = {(r["workload"], r["config"]): r for r in result["summary"]}
        self.assertAlmostEqual(rows[("unet", "ccalloc")]["mean_vs_expandable"], 61.0 / 60.0)

    def test_the_order_the_processes_start_in_turns_with_the_round(self):
        order = compare_training.start_order
        self.assertEqual([order(3, r) for r in range(4)],
                         [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 1, 2]])
        self.assertEqual(order(1, 5), [0])
        # Each round's results still come back in the configurations' order.
        rc, state = self.main(["--workloads", "unet", "--configs", "native_expandable,ccalloc",
                               "--rounds", "2", "--concurrent"])
        self.assertEqual(rc, 0)
        self.assertEqual(state["calls"], 4)

    def test_a_time_budget_begins_only_whole_turns_of_the_start_order(self):
        # Each run says it took 40 s (it takes none): with a 70 s budget the
        # first turn (two rounds of two processes) runs, and the second turn
        # (~80 s) is not begun, though its first round alone (~40 s) fits.
        def run_child(args, config, mode, workload=None, **_):
            return run(config, 0, 60.0 if config == "native_expandable" else 61.0) | {
                "workload": workload, "wall_s": 40.0, "device_used_peak": 101}
        rc, result = main_to_json(run_child, ["--workloads", "unet", "--configs",
                                              "native_expandable,ccalloc", "--rounds", "4",
                                              "--concurrent", "--time-budget", "70"])
        runs = result["runs"]
        self.assertEqual(rc, 1)   # incomplete: rounds were skipped, and it says so
        ran = sorted({r["round"] for r in runs if not r.get("skipped")})
        self.assertEqual(ran, [0, 1])
        skipped = [r for r in runs if r.get("skipped")]
        self.assertEqual(sorted({r["round"] for r in skipped}), [2, 3])
        self.assertEqual(len(skipped), 4)
        self.assertIn("whole turn", skipped[0]["skipped"])
        # Each allocator started first once.
        self.assertEqual(sorted(r["start_position"] for r in runs
                                if r["config"] == "ccalloc" and not r.get("skipped")), [0, 1])

    def test_side_by_side_over_several_gpus_each_allocator_meets_each_gpu(self):
        seen = []

        def run_child(args, config, mode, workload=None, env=None, **_):
            seen.append((config, (env or {}).get("CUDA_VISIBLE_DEVICES")))
            return child_result(config, workload, 61.0)
        rc, result = main_to_json(run_child, ["--workloads", "unet", "--configs",
                                              "native_expandable,ccalloc", "--rounds", "2",
                                              "--concurrent", "--gpus", "2,3"])
        self.assertEqual(rc, 0)
        runs = result["runs"]
        # One GPU each in a round, and the pairing turns with the round.
        self.assertEqual([(r["config"], r["round"], r["gpu_slot"]) for r in runs],
                         [("native_expandable", 0, 2), ("ccalloc", 0, 3),
                          ("native_expandable", 1, 3), ("ccalloc", 1, 2)])
        self.assertEqual(sorted(seen), sorted([("native_expandable", "2"), ("ccalloc", "3"),
                                               ("native_expandable", "3"), ("ccalloc", "2")]))
        self.assertEqual([compare_training.gpu_slot([0, 1], i, 0) for i in range(3)], [0, 1, 0])
        self.assertIsNone(compare_training.gpu_slot(None, 0, 0))

    def test_gpus_need_side_by_side_runs_and_device_indexes(self):
        import contextlib, io
        for argv in (["--gpus", "0,1"], ["--concurrent", "--gpus", "a,b"],
                     ["--concurrent", "--gpus", "-1"]):
            with self.subTest(argv=argv), contextlib.redirect_stderr(io.StringIO()):
                with self.assertRaises(SystemExit):
                    main_with(lambda *a, **k: {}, ["--workloads", "unet", "--configs",
                                                    "native_expandable,ccalloc"] + argv)

    def test_without_it_the_allocators_run_one_after_another(self):
        rc, state = self.main(["--workloads", "unet", "--configs", "native_expandable,ccalloc",
                               "--rounds", "2"])
        self.assertEqual(rc, 0)
        self.assertEqual(state["calls"], 4)
        self.assertEqual(state["most"], 1)


class ExtraTorchConfigTest(unittest.TestCase):
    """--torch-config names another setting of PyTorch's own allocator: with
    expandable_segments again it is an A/A control of the method itself."""

    def test_an_a_a_control_runs_pytorchs_allocator_twice(self):
        import os
        seen = []

        def run_child(args, config, mode, workload=None, **_):
            seen.append(config)
            return run(config, 0, 60.0 if config == "native_expandable" else 63.0) | {
                "workload": workload, "wall_s": 0.2, "device_used_peak": 101}

        import json, tempfile
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            rc = main_with(run_child, ["--workloads", "unet", "--concurrent", "--rounds", "1",
                                       "--configs", "native_expandable,expandable_b",
                                       "--torch-config", "expandable_b=expandable_segments:True",
                                       "--out", out])
            with open(out) as f:
                result = json.load(f)
        self.assertEqual(rc, 0)
        self.assertEqual(sorted(seen), ["expandable_b", "native_expandable"])
        rows = {r["config"]: r for r in result["summary"]}
        self.assertAlmostEqual(rows["expandable_b"]["mean_vs_expandable"], 63.0 / 60.0)
        # The child runs PyTorch's allocator under that setting, not ccalloc.
        self.assertFalse(compare_training.is_ccalloc("expandable_b"))
        old = os.environ.get("CCALLOC_CONF")
        os.environ["CCALLOC_CONF"] = "mapped_fit:False"
        try:
            env = compare_training.child_env("expandable_b")
        finally:
            if old is None:
                os.environ.pop("CCALLOC_CONF")
            else:
                os.environ["CCALLOC_CONF"] = old
        self.assertEqual(env["PYTORCH_CUDA_ALLOC_CONF"], "expandable_segments:True")
        self.assertNotIn("CCALLOC_CONF", env)

    def test_a_name_already_taken_or_without_a_setting_is_refused(self):
        import contextlib, io
        for extra in ("ccalloc=expandable_segments:True", "expandable_segments:True"):
            with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
                compare_training.parse_args(["--torch-config", extra])


class LockstepTest(unittest.TestCase):
    """--lockstep: the round's processes take turns, one step at a time."""

    def children(self, turns, steps, log, lock, skip=()):
        import threading, time

        def child(name):
            if name in skip:
                return                       # never opens its FIFOs, as a child that died
            turn = compare_training.Turn(turns.env[name])
            for i in range(steps[name]):
                turn.wait()
                with lock:
                    log.append((name, "start"))
                time.sleep(0.002)            # the step
                with lock:
                    log.append((name, "end"))
                turn.finished(last=i + 1 == steps[name])
        return [threading.Thread(target=child, args=(n,)) for n in turns.names]

    def run_round(self, steps, timeout=10.0, skip=()):
        import tempfile, threading
        log, lock = [], threading.Lock()
        with tempfile.TemporaryDirectory() as tmp:
            turns = compare_training.Turns(list(steps), tmp, timeout)
            threads = self.children(turns, steps, log, lock, skip) + [
                threading.Thread(target=turns.run)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
                self.assertFalse(t.is_alive(), "a turn never came")
            turns.close()
        return log, turns.turns

    def test_steps_never_overlap_and_the_order_alternates(self):
        log, turns = self.run_round({"a": 4, "b": 4})
        # One step at a time: every start is followed by its own end.
        for (n1, e1), (n2, e2) in zip(log[::2], log[1::2]):
            self.assertEqual((e1, e2, n1), ("start", "end", n2))
        order = [n for n, e in log if e == "start"]
        self.assertEqual(order, ["a", "b", "b", "a", "a", "b", "b", "a"])
        self.assertEqual(turns, {"a": 3, "b": 3})   # the last step answers "e"

    def test_a_child_with_more_steps_runs_on_alone(self):
        log, _ = self.run_round({"a": 2, "b": 5})
        order = [n for n, e in log if e == "start"]
        self.assertEqual(order.count("a"), 2)
        self.assertEqual(order.count("b"), 5)
        self.assertEqual(order[-3:], ["b", "b", "b"])

    def test_a_child_that_never_comes_leaves_the_rotation(self):
        log, _ = self.run_round({"dead": 3, "b": 3}, timeout=0.3, skip=("dead",))
        self.assertEqual([n for n, e in log if e == "start"], ["b", "b", "b"])

    def test_a_lockstep_round_hands_each_child_its_turns(self):
        import threading
        lock, starts = threading.Lock(), []

        def run_child(args, config, mode, workload=None, env=None, **_):
            turn = compare_training.Turn(env)   # the child's side, as in child_train
            for i in range(3):
                turn.wait()
                with lock:
                    starts.append(config)
                turn.finished(last=i == 2)
            return child_result(config, workload, 63.0)

        rc, result = main_to_json(run_child, ["--workloads", "unet", "--configs",
                                              "native_expandable,ccalloc", "--rounds", "1",
                                              "--lockstep", "--timeout", "20"])
        self.assertEqual(rc, 0)
        self.assertEqual(starts, ["native_expandable", "ccalloc", "ccalloc", "native_expandable",
                                  "native_expandable", "ccalloc"])
        self.assertTrue(all(r["lockstep"] and r["concurrent"] == 2 for r in result["runs"]))
        rows = {r["config"]: r for r in result["summary"]}
        self.assertAlmostEqual(rows["ccalloc"]["mean_vs_expandable"], 63.0 / 60.0)

    def test_without_a_parent_a_child_runs_alone(self):
        turn = compare_training.Turn({})
        turn.wait()
        turn.finished(last=True)


if __name__ == "__main__":
    unittest.main()

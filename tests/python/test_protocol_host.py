"""Host tests of bench/protocol.py (the step-time verdict) and of the
sequential protocol compare_training.py runs by default: the A/A twins run in
the same call, the order of the allocators turns every round, and the
verdict's ratios, intervals and driver calls per step come from the runs."""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import compare_training  # noqa: E402
import protocol  # noqa: E402
from test_compare_training_host import main_with, run  # noqa: E402


class IntervalTest(unittest.TestCase):
    def test_mean_and_t_interval(self):
        mean, low, high = protocol.interval([1.0, 1.02, 0.98, 1.0])
        self.assertAlmostEqual(mean, 1.0)
        # sd = 0.01633, t(3) = 3.182: half width 0.02598.
        self.assertAlmostEqual(high - mean, 3.182 * 0.0163299 / 2, places=5)
        self.assertAlmostEqual(mean - low, high - mean)

    def test_one_value_has_no_interval(self):
        self.assertEqual(protocol.interval([1.5]), (1.5, None, None))
        self.assertTrue(math.isinf(protocol.t95(0)))


class DriverCallsTest(unittest.TestCase):
    def test_ccalloc_counts_its_backends_calls_after_warm_up(self):
        r = {"warmup": 1, "step_calls": {
            "counters": ["num_maps", "driver_calls", "background_driver_calls"],
            "steps": [[9, 100, 7], [1, 4, 2], [3, 6, 0]]}}
        self.assertEqual(protocol.driver_calls_per_step(r), (5.0, 1.0))

    def test_pytorch_counts_its_device_allocs_and_frees(self):
        r = {"warmup": 2, "device_calls": [[50, 0], [9, 9], [1, 0], [2, 1]]}
        self.assertEqual(protocol.driver_calls_per_step(r), (2.0, 0.0))

    def test_a_run_without_counts_says_none(self):
        self.assertEqual(protocol.driver_calls_per_step({"warmup": 1}), (None, None))


class VerdictTest(unittest.TestCase):
    def test_ratios_pair_rounds_and_the_controls_have_their_references(self):
        runs = []
        for rnd, (exp, cc, exp_b, cc_b) in enumerate([(100, 101, 99, 102), (110, 108, 111, 108)]):
            runs += [run("native_expandable", rnd, exp), run("ccalloc", rnd, cc),
                     run("expandable_b", rnd, exp_b), run("ccalloc_b", rnd, cc_b)]
        runs.append(run("ccalloc", 2, 50))  # no reference in round 2: not paired
        rows = {r["config"]: r for r in protocol.verdict(runs)}
        self.assertEqual(rows["ccalloc"]["reference"], "native_expandable")
        self.assertEqual(rows["ccalloc"]["ratios"], [1.01, 108 / 110])
        self.assertEqual(rows["expandable_b"]["ratios"], [0.99, 111 / 110])
        self.assertEqual(rows["ccalloc_b"]["reference"], "ccalloc")
        self.assertEqual(rows["ccalloc_b"]["ratios"], [102 / 101, 1.0])
        self.assertIsNotNone(rows["ccalloc"]["low"])
        self.assertEqual(rows["ccalloc"]["memory"], 1.01)


class SequentialDefaultTest(unittest.TestCase):
    def test_default_runs_the_twins_six_rounds_in_turning_order(self):
        seen = []

        def run_child(args, config, mode, workload=None, **_):
            seen.append(config)
            return run(config, 0, 60.0) | {"workload": workload, "wall_s": 0.1,
                                            "device_used_peak": 101}

        self.assertEqual(main_with(run_child, ["--workloads", "unet"]), 0)
        configs = compare_training.DEFAULT_CONFIGS.split(",")
        self.assertEqual(len(seen), 6 * len(configs))
        rounds = [seen[i:i + len(configs)] for i in range(0, len(seen), len(configs))]
        for rnd, order in enumerate(rounds):
            self.assertEqual(sorted(order), sorted(configs))
            self.assertEqual(order[0], configs[rnd % len(configs)])
        self.assertIn("expandable_b", configs)
        self.assertIn("ccalloc_b", configs)
        self.assertFalse(compare_training.is_ccalloc("expandable_b"))
        self.assertTrue(compare_training.is_ccalloc("ccalloc_b"))


if __name__ == "__main__":
    unittest.main()

"""Host-only tests of bench/torch_alloc_bench.py's targets: no torch, no GPU.

    python3 tests/python/test_torch_alloc_bench_host.py
"""

import unittest

from bench_module import load

torch_alloc_bench = load("torch_alloc_bench")


def results(ours_churn, theirs_churn=None, hot=60.0):
    r = {"ccalloc:ccalloc": {"hot_pair/512": {"ns_per_op": hot},
                             "churn/W:1000": {"ns_per_op": ours_churn}}}
    if theirs_churn is not None:
        r["torch-native"] = {"churn/W:1000": {"ns_per_op": theirs_churn}}
    return r


class TargetsTest(unittest.TestCase):
    def by_pattern(self, r):
        return {t["pattern"]: t for t in torch_alloc_bench.check_targets(r)}

    def test_churn_is_judged_against_pytorch_native_in_the_same_run(self):
        t = self.by_pattern(results(394.8, 454.2))["churn/W:1000"]
        self.assertTrue(t["met"])
        self.assertEqual(t["limit_ns"], 454.2)
        self.assertIn("torch-native", t["limit_from"])
        # The same figure against a faster PyTorch run is a miss.
        self.assertFalse(self.by_pattern(results(394.8, 380.0))["churn/W:1000"]["met"])

    def test_churn_without_pytorch_figures_is_not_judged(self):
        self.assertNotIn("churn/W:1000", self.by_pattern(results(394.8)))

    def test_hot_pair_keeps_its_fixed_100_ns(self):
        self.assertTrue(self.by_pattern(results(1.0, hot=99.0))["hot_pair/512"]["met"])
        t = self.by_pattern(results(1.0, hot=101.0))["hot_pair/512"]
        self.assertFalse(t["met"])
        self.assertEqual(t["limit_from"], "fixed")


class RoundsTest(unittest.TestCase):
    def test_rounds_pool_their_reps_and_keep_each_rounds_ratio(self):
        results, rounds = {}, {}
        by_name = {"torch-native": [(400.0, [390.0, 400.0, 410.0]), (620.0, [600.0, 620.0, 640.0])],
                   "ccalloc:ccalloc": [(540.0, [530.0, 540.0, 550.0]), (390.0, [380.0, 390.0, 400.0])]}
        for k in range(2):
            for name, runs in by_name.items():
                median, reps = runs[k]
                torch_alloc_bench.merge_round(
                    results, rounds, [{"pattern": "churn/W:1000", "ns_per_op": median, "reps": reps}],
                    lambda r, n=name: n)
        # The figure is the median over both rounds' reps, not the last round's.
        self.assertEqual(results["torch-native"]["churn/W:1000"]["ns_per_op"], 505.0)
        self.assertEqual(results["ccalloc:ccalloc"]["churn/W:1000"]["ns_per_op"], 465.0)
        self.assertEqual(len(results["ccalloc:ccalloc"]["churn/W:1000"]["reps"]), 6)
        t = {t["pattern"]: t for t in torch_alloc_bench.check_targets(results, rounds)}
        churn = t["churn/W:1000"]
        self.assertTrue(churn["met"])
        self.assertEqual(churn["round_ratios"], [1.35, round(390.0 / 620.0, 3)])
        # A fixed target has no per-round ratio.
        self.assertNotIn("round_ratios", t.get("hot_pair/512", {}))


if __name__ == "__main__":
    unittest.main()

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


if __name__ == "__main__":
    unittest.main()

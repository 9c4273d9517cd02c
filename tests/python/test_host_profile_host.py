"""Host-only tests of bench/probes/host_profile.py's side-by-side table: no
torch, no GPU.

    python3 tests/python/test_host_profile_host.py
"""

import unittest

from bench_module import load

host_profile = load("host_profile", "bench/probes")


def run(config, ops, workload="lm"):
    return {"workload": workload, "config": config,
            "ops_per_step": {k: {"calls": c, "self_cpu_us": us} for k, (c, us) in ops.items()}}


class CompareTest(unittest.TestCase):
    def setUp(self):
        self.results = [
            run("native_expandable", {"aten::empty_strided": (795, 2920.0),
                                      "cudaLaunchKernel": (748, 4710.0),
                                      "aten::mm": (58, 5690.0)}),
            run("ccalloc", {"aten::empty_strided": (795, 7320.0),
                            "cudaLaunchKernel": (748, 4580.0),
                            "aten::nll_loss_backward": (1, 3940.0)}),
            run("native_expandable", {"aten::mm": (1, 1.0)}, workload="other"),
        ]

    def test_largest_differences_from_the_first_config_come_first(self):
        lines = host_profile.compare(self.results, ["lm"], top=10)
        ops = [line.split()[0] for line in lines[3:-1]]
        # |7.32 - 2.92| = 4.40, then mm (5.69 in one only), then nll (3.94).
        self.assertEqual(ops[:3], ["aten::mm", "aten::empty_strided", "aten::nll_loss_backward"])
        self.assertEqual(ops[-1], "cudaLaunchKernel")
        row = next(line for line in lines if line.startswith("aten::empty_strided"))
        self.assertIn("2.92 (    795.0)", row)
        self.assertIn("7.32 (    795.0)", row)

    def test_an_op_one_config_never_ran_counts_as_zero_and_totals_add_up(self):
        lines = host_profile.compare(self.results, ["lm"], top=10)
        row = next(line for line in lines if line.startswith("aten::nll_loss_backward"))
        self.assertIn("0.00 (      0.0)", row)
        total = lines[-1].split()
        self.assertEqual(total[0], "total")
        self.assertAlmostEqual(float(total[1]), 2.92 + 4.71 + 5.69, places=2)
        self.assertAlmostEqual(float(total[2]), 7.32 + 4.58 + 3.94, places=2)

    def test_top_limits_the_rows_and_a_workload_with_one_config_is_left_out(self):
        lines = host_profile.compare(self.results, ["lm", "other"], top=2)
        self.assertEqual(len(lines), 3 + 2 + 1)
        self.assertFalse(any(line.startswith("other") for line in lines))


if __name__ == "__main__":
    unittest.main()

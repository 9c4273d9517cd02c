"""Host-only tests of bench/ddp_step_time.py: the step plan, the turning
order, a run read back from its child, the summary, and that its output pools
with bench/pool_rounds.py.

    python3 tests/python/test_ddp_step_time_host.py
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import ddp_step_time  # noqa: E402
import pool_rounds  # noqa: E402


def child_output(step_ms, peaks):
    """What a child prints: one JSON line with every rank's figures."""
    ranks = [{"rank": r, "step_ms": step_ms, "peak_allocated": a, "peak_reserved": b}
             for r, (a, b) in enumerate(peaks)]
    return "NCCL INFO noise\n" + json.dumps({"ranks": list(reversed(ranks))}) + "\n"


class DdpStepTimeTest(unittest.TestCase):
    def args(self, **kw):
        base = dict(gpus=2, steps=6, warmup=2, seed=0, library=None, timeout=30)
        base.update(kw)
        return mock.Mock(**base)

    def test_every_run_trains_the_same_lengths(self):
        a, b = ddp_step_time.lengths(50, 0), ddp_step_time.lengths(50, 0)
        self.assertEqual(a, b)
        self.assertTrue(all(128 <= n <= 1024 for n in a))
        self.assertGreater(len(set(a)), 10)   # the shapes change step by step
        self.assertNotEqual(a, ddp_step_time.lengths(50, 1))

    def test_the_order_turns_so_each_allocator_starts_first_once_a_turn(self):
        configs = ["native_expandable", "ccalloc", "ccalloc_own"]
        started = []

        def fake_run(args, config, rnd, position):
            started.append((rnd, position, config))
            return {"workload": ddp_step_time.WORKLOAD, "config": config, "round": rnd,
                    "start_position": position, "mean_step_ms": 100.0,
                    "reserved_over_allocated": 1.0,
                    "ranks": [{"peak_allocated": 100, "peak_reserved": 100}]}
        with mock.patch.object(ddp_step_time, "run_once", side_effect=fake_run), \
                contextlib.redirect_stdout(io.StringIO()):
            ddp_step_time.main(["--configs", ",".join(configs), "--rounds", "4"])
        firsts = [c for rnd, position, c in started if position == 0]
        self.assertEqual(sorted(firsts[:3]), sorted(configs))
        self.assertEqual(firsts[3], firsts[0])
        # Every round runs every allocator once.
        for rnd in range(4):
            self.assertEqual(sorted(c for r, _, c in started if r == rnd), sorted(configs))

    def test_a_run_reads_rank_zero_after_the_warmup_and_keeps_every_rank(self):
        done = subprocess.CompletedProcess([], 0, child_output(
            [90.0, 80.0, 10.0, 20.0, 30.0, 40.0], [(100, 101), (100, 103)]), "")
        with mock.patch.object(ddp_step_time.subprocess, "run", return_value=done) as run:
            got = ddp_step_time.run_once(self.args(), "native_expandable", 4, 1)
        self.assertEqual(got["mean_step_ms"], 25.0)
        self.assertEqual((got["round"], got["start_position"]), (4, 1))
        self.assertAlmostEqual(got["reserved_over_allocated"], 1.01)
        self.assertEqual([r["rank"] for r in got["ranks"]], [0, 1])
        env = run.call_args.kwargs["env"]
        self.assertEqual(env["PYTORCH_CUDA_ALLOC_CONF"], "expandable_segments:True")

    def test_a_failed_child_is_an_error_run_not_a_figure(self):
        done = subprocess.CompletedProcess([], 1, "", "NCCL error: unhandled system error")
        with mock.patch.object(ddp_step_time.subprocess, "run", return_value=done):
            got = ddp_step_time.run_once(self.args(), "ccalloc", 0, 0)
        self.assertIn("NCCL error", got["error"])
        self.assertNotIn("mean_step_ms", got)

    def test_summary_pairs_rounds_and_takes_the_worst_rank_for_memory(self):
        runs = [
            {"config": "native_expandable", "round": 0, "mean_step_ms": 100.0,
             "ranks": [{"peak_allocated": 100, "peak_reserved": 120}]},
            {"config": "native_expandable", "round": 1, "mean_step_ms": 200.0,
             "ranks": [{"peak_allocated": 100, "peak_reserved": 110}]},
            {"config": "ccalloc", "round": 0, "mean_step_ms": 110.0,
             "ranks": [{"peak_allocated": 100, "peak_reserved": 100},
                       {"peak_allocated": 100, "peak_reserved": 102}]},
            {"config": "ccalloc", "round": 1, "mean_step_ms": 190.0,
             "ranks": [{"peak_allocated": 100, "peak_reserved": 101}]},
            {"config": "ccalloc", "round": 2, "error": "timed out"},
        ]
        got = {s["config"]: s for s in ddp_step_time.summarize(runs)}
        self.assertAlmostEqual(got["ccalloc"]["vs_baseline"], (1.1 + 0.95) / 2)
        self.assertEqual(got["ccalloc"]["rounds"], 2)
        self.assertAlmostEqual(got["ccalloc"]["reserved_over_allocated"], 1.02)
        self.assertAlmostEqual(got["native_expandable"]["reserved_over_allocated"], 1.2)

    def test_its_output_pools_with_pool_rounds(self):
        runs = []
        for rnd, (base, ours) in enumerate([(100.0, 102.0), (100.0, 98.0), (100.0, 101.0)]):
            for position, (config, ms) in enumerate([("native_expandable", base),
                                                     ("ccalloc", ours)]):
                runs.append({"workload": ddp_step_time.WORKLOAD, "config": config,
                             "round": rnd, "start_position": position, "mean_step_ms": ms})
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "ddp.json")
            with open(path, "w") as f:
                json.dump({"runs": runs}, f)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                pool_rounds.main([path])
        row = [l for l in out.getvalue().splitlines() if l.startswith("ddp_lm") and "ccalloc" in l]
        self.assertTrue(row, out.getvalue())
        self.assertIn("1.003", row[0])

    def test_an_unknown_configuration_is_refused_before_any_run(self):
        with mock.patch.object(ddp_step_time, "run_once") as run, \
                contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            ddp_step_time.main(["--configs", "native_expandable,ccalloc_fast"])
        run.assert_not_called()


if __name__ == "__main__":
    unittest.main()

"""Host-only tests of bench/pool_rounds.py: pairing, pooling and verdicts.

    python3 tests/python/test_pool_rounds_host.py
"""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import pool_rounds  # noqa: E402


def run(workload, config, rnd, ms):
    return {"workload": workload, "config": config, "round": rnd, "mean_step_ms": ms}


class PoolRoundsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, document):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            json.dump(document, f)
        return path

    def main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = pool_rounds.main(list(argv))
        return rc, out.getvalue(), err.getvalue()

    def balanced_row(self, name, runs, key):
        """Pools `runs` (written as NAME.json) with --json: (what it printed,
        the one row of the JSON's `key` table)."""
        path = self.write(name + ".json", {"runs": runs})
        out_json = os.path.join(self.tmp.name, name + ".out.json")
        rc, out, _ = self.main(path, "--json", out_json)
        self.assertEqual(rc, 0)
        with open(out_json) as f:
            (row,) = json.load(f)[key]
        return out, row

    def test_pairs_each_run_with_the_baseline_of_its_own_round_only(self):
        runs = [run("lm", "native_expandable", 0, 100.0), run("lm", "ccalloc", 0, 110.0),
                run("lm", "native_expandable", 1, 200.0), run("lm", "ccalloc", 1, 190.0),
                # Round 2 has no baseline: it pairs with nothing.
                run("lm", "ccalloc", 2, 50.0),
                # A failed run (compare_training.py marks it) pairs with nothing.
                dict(run("lm", "native_expandable", 3, None), error="rc 1"),
                run("lm", "ccalloc", 3, 80.0)]
        ratios = pool_rounds.round_ratios(runs, "native_expandable", source="f")
        self.assertEqual(list(ratios), [("lm", "ccalloc")])
        self.assertEqual([(r, round(x, 6)) for _, r, x in ratios[("lm", "ccalloc")]],
                         [(0, 1.1), (1, 0.95)])

    def test_side_by_side_rounds_are_balanced_over_where_the_baseline_started(self):
        def placed(workload, config, rnd, ms, position):
            return dict(run(workload, config, rnd, ms), start_position=position)
        # Three rounds with the baseline first (ratio 1.04), one with it
        # second (1.00): the plain mean leans to the first, the balanced one
        # weighs the two positions alike.
        runs = []
        for rnd, (ms, base_first) in enumerate([(104.0, True), (104.0, True), (104.0, True),
                                                (100.0, False)]):
            runs += [placed("ts", "native_expandable", rnd, 100.0, 0 if base_first else 1),
                     placed("ts", "ccalloc", rnd, ms, 1 if base_first else 0)]
        out, row = self.balanced_row("p", runs, "by_start_position")
        self.assertIn("balanced over the start order", out)
        self.assertEqual(row["rounds"], 4)
        self.assertEqual({p: v["rounds"] for p, v in row["by_label"].items()},
                         {"0": 3, "1": 1})
        self.assertAlmostEqual(row["by_label"]["0"]["mean"], 1.04)
        self.assertAlmostEqual(row["balanced"], 1.02)
        # Runs that do not say where they started get no such table.
        plain = self.write("q.json", {"runs": [run("ts", "native_expandable", 0, 100.0),
                                                run("ts", "ccalloc", 0, 101.0)]})
        rc, out, _ = self.main(plain)
        self.assertEqual(rc, 0)
        self.assertNotIn("balanced over the start order", out)

    def test_rounds_over_several_gpus_are_balanced_over_the_baselines_gpu(self):
        def on(workload, config, rnd, ms, gpu):
            return dict(run(workload, config, rnd, ms), gpu_slot=gpu)
        # The baseline on GPU 0 in three rounds (ratio 1.03), on GPU 1 in one
        # (0.99): balanced over the GPUs, 1.01.
        runs = []
        for rnd, (ms, gpu) in enumerate([(103.0, 0), (103.0, 0), (103.0, 0), (99.0, 1)]):
            runs += [on("lm", "native_expandable", rnd, 100.0, gpu),
                     on("lm", "ccalloc", rnd, ms, 1 - gpu)]
        out, row = self.balanced_row("g", runs, "by_gpu")
        self.assertIn("balanced over them", out)
        self.assertEqual({g: v["rounds"] for g, v in row["by_label"].items()},
                         {"0": 3, "1": 1})
        self.assertAlmostEqual(row["balanced"], 1.01)
        plain = self.write("h.json", {"runs": [run("lm", "native_expandable", 0, 100.0),
                                                run("lm", "ccalloc", 0, 101.0)]})
        rc, out, _ = self.main(plain)
        self.assertNotIn("balanced over them", out)

    def test_pools_rounds_across_files_bare_and_wrapped(self):
        a = self.write("a.json", {"runs": [run("lm", "native_expandable", 0, 100.0),
                                           run("lm", "ccalloc", 0, 102.0)]})
        b = self.write("b.json", {"date": "d", "results": {"runs": [
            run("lm", "native_expandable", 0, 100.0), run("lm", "ccalloc", 0, 104.0),
            run("lm", "native_expandable", 1, 100.0), run("lm", "ccalloc", 1, 103.0)]}})
        out_json = os.path.join(self.tmp.name, "pooled.json")
        rc, out, err = self.main(a, b, "--json", out_json)
        self.assertEqual(rc, 0, err)
        with open(out_json) as f:
            rows = json.load(f)["rows"]
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0]["rounds"], 3)
        self.assertAlmostEqual(rows[0]["mean"], 1.03)
        self.assertEqual(len(rows[0]["sources"]), 2)
        self.assertIn("lm", out)

    def test_verdicts_follow_the_interval_not_the_mean(self):
        def verdict(values, target=1.01):
            items = {("w", "c"): [("f", i, v) for i, v in enumerate(values)]}
            return pool_rounds.pool(items, target)[0]

        # Tight and under: met. Tight and over: over.
        self.assertEqual(verdict([0.990, 0.991, 0.989, 0.990])["verdict"], "met")
        self.assertEqual(verdict([1.050, 1.051, 1.049, 1.050])["verdict"], "over")
        # A mean under the target with a wide spread proves nothing, and says
        # how many rounds would.
        wide = verdict([0.90, 1.10, 0.95, 1.02])
        self.assertEqual(wide["verdict"], "not resolved")
        self.assertGreater(wide["rounds_needed"], 4)
        self.assertLess(wide["low"], 1.0)
        self.assertGreater(wide["high"], 1.01)
        # One round has no spread: never a verdict but 'not resolved'.
        one = verdict([0.5])
        self.assertEqual(one["verdict"], "not resolved")
        self.assertIsNone(one["sd"])

    def test_a_file_without_runs_is_an_error_that_names_it(self):
        bad = self.write("bad.json", {"rows": []})
        rc, _, err = self.main(bad)
        self.assertEqual(rc, 2)
        self.assertIn("bad.json", err)

    def test_no_pair_at_all_is_an_error(self):
        only = self.write("only.json", {"runs": [run("lm", "ccalloc", 0, 100.0)]})
        rc, _, err = self.main(only)
        self.assertEqual(rc, 1)
        self.assertIn("native_expandable", err)


if __name__ == "__main__":
    unittest.main()

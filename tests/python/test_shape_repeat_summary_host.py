"""Host-only tests of bench/probes/shape_repeat_summary.py: parsing the probe's
pass lines, the pass filter, pairing by round and the driver-work columns.

    python3 tests/python/test_shape_repeat_summary_host.py
"""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "probes"))
import shape_repeat_summary as srs  # noqa: E402

# What gpu_round.sh's repeat part writes: a round header before each run,
# then the probe's lines (ccalloc's with its driver work).
LOG = """=== repeat: round 1
native_expandable gpt2 pass 0: 250.0 ms/step (launch 240.0)
native_expandable gpt2 pass 1: 80.0 ms/step (launch 50.0)
native_expandable gpt2 pass 2: 80.0 ms/step (launch 50.0)
=== repeat: round 1
ccalloc gpt2 pass 0: 260.0 ms/step (launch 250.0)  maps/step 190.0  prepare 12.00 ms  wait 0.00 ms  worker 0.30 ms  (in prepare: map 9.00 create 1.00 fg unmaps 4.0 0.20 ms)
ccalloc gpt2 pass 1: 90.0 ms/step (launch 50.0)  maps/step 10.0  prepare 1.00 ms  wait 0.00 ms  worker 0.10 ms  (in prepare: map 0.50 create 0.10 fg unmaps 1.0 0.05 ms)
ccalloc gpt2 pass 2: 84.0 ms/step (launch 50.0)  maps/step 2.0  prepare 0.40 ms  wait 0.10 ms  worker 0.00 ms  (in prepare: map 0.20 create 0.00 fg unmaps 1.0 0.04 ms)
=== repeat: round 2
native_expandable gpt2 pass 2: 100.0 ms/step (launch 90.0)
=== repeat: round 2
ccalloc gpt2 pass 2: 90.0 ms/step (launch 80.0)  maps/step 0.0  prepare 0.00 ms  wait 0.00 ms  worker 0.00 ms  (in prepare: map 0.00 create 0.00 fg unmaps 0.0 0.00 ms)
=== repeat: round 3
ccalloc gpt2 pass 2: 70.0 ms/step (launch 60.0)  maps/step 0.0  prepare 0.00 ms  wait 0.00 ms  worker 0.00 ms  (in prepare: map 0.00 create 0.00 fg unmaps 0.0 0.00 ms)
"""


class ShapeRepeatSummaryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.tmp.name, "repeat.log")
        with open(self.log, "w") as f:
            f.write(LOG)

    def tearDown(self):
        self.tmp.cleanup()

    def summary(self, from_pass=2):
        rows = srs.parse(LOG.splitlines())
        return {(s["workload"], s["config"]): s for s in srs.summarize(rows, "native_expandable", from_pass)}

    def test_lines_parse_with_rounds_and_driver_work(self):
        rows = srs.parse(LOG.splitlines())
        self.assertEqual(len(rows), 9)
        first = rows[3]
        self.assertEqual((first["round"], first["config"], first["pass"]), (1, "ccalloc", 0))
        self.assertEqual(first["maps"], 190.0)
        self.assertEqual(first["prepare_ms"], 12.0)
        self.assertEqual(first["map_ms"], 9.0)   # not maps/step's figure
        self.assertEqual(first["create_ms"], 1.0)
        self.assertEqual((first["fg_unmaps"], first["fg_ms"]), (4.0, 0.2))
        self.assertNotIn("maps", rows[0])        # expandable_segments has no counters

    def test_a_prefixed_round_is_read_too(self):
        rows = srs.parse(["round 7: ccalloc unet pass 3: 70.4 ms/step (launch 70.4)  maps/step 11.5"])
        self.assertEqual((rows[0]["round"], rows[0]["workload"], rows[0]["maps"]), (7, "unet", 11.5))

    def test_ratios_pair_rounds_and_skip_early_passes(self):
        s = self.summary()
        ours = s[("gpt2", "ccalloc")]
        # Round 1 pass 2 only (84 / 80), round 2 (90 / 100); round 3 has no baseline.
        self.assertEqual(ours["rounds"], [1, 2, 3])
        self.assertEqual([round(x, 4) for x in ours["ratios"]], [1.05, 0.9])
        self.assertAlmostEqual(ours["mean_ratio"], 0.975)
        self.assertAlmostEqual(ours["prepare_ms"], 0.4 / 3)
        self.assertEqual(s[("gpt2", "native_expandable")]["ratios"], [])
        # From pass 1: round 1's ccalloc mean is (90 + 84) / 2 against 80.
        self.assertAlmostEqual(self.summary(from_pass=1)[("gpt2", "ccalloc")]["ratios"][0], 87 / 80)

    def test_main_prints_and_writes_json(self):
        out = io.StringIO()
        path = os.path.join(self.tmp.name, "s.json")
        with contextlib.redirect_stdout(out):
            rc = srs.main([self.log, "--json", path])
        self.assertEqual(rc, 0)
        self.assertIn("1.050 0.900", out.getvalue())
        with open(path) as f:
            doc = json.load(f)
        self.assertEqual(doc["from_pass"], 2)
        self.assertEqual(len(doc["passes"]), 9)

    def test_a_log_without_pass_lines_is_an_error(self):
        empty = os.path.join(self.tmp.name, "empty.log")
        with open(empty, "w") as f:
            f.write("=== repeat: round 1\nTraceback (most recent call last):\n")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(srs.main([empty]), 1)
        self.assertIn("no pass lines", err.getvalue())


if __name__ == "__main__":
    unittest.main()

"""Host-only tests of the ccalloc-replay command line: the plain report it
prints by default, the full tables behind --verbose, and a JSON that does not
depend on either.

    CCALLOC_REPLAY=build/default/bench/ccalloc-replay python3 tests/python/test_replay_cli_host.py
"""

import json
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPLAY = os.environ.get("CCALLOC_REPLAY",
                        os.path.join(ROOT, "build", "default", "bench", "ccalloc-replay"))
GIB = 1 << 30

# Two 1 GiB blocks, the first freed, then 1.5 GiB, twice: PyTorch's native
# policy holds 3.5 GiB for 2.5 GiB in use (tests/replay_report_test.cc, FragmentingTrace).
FRAG = "\n".join([
    "# caching-allocator trace v1: a <id> <bytes> <stream> | f <id>",
    "# steps: 2",
    f"a 0 {GIB} 0", f"a 1 {GIB} 0", "f 0", f"a 2 {GIB * 3 // 2} 0", "f 2", "f 1",
    f"a 3 {GIB} 0", f"a 4 {GIB} 0", "f 3", f"a 5 {GIB * 3 // 2} 0", "f 5", "f 4",
]) + "\n"


def load(path):
    with open(path) as f:
        return json.load(f)


def replay(*args):
    done = subprocess.run([REPLAY, "--no-progress", "--repeat", "0", *args],
                          capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


@unittest.skipUnless(os.path.exists(REPLAY), "needs the ccalloc-replay binary")
class ReplayCliTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.trace = os.path.join(self.tmp.name, "frag.trace")
        with open(self.trace, "w") as f:
            f.write(FRAG)

    def tearDown(self):
        self.tmp.cleanup()

    def test_default_output_is_plain_words_and_a_summary_table(self):
        rc, out, err = replay(self.trace)
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        first = next(l for l in lines if l.startswith("frag: "))
        self.assertRegex(first, r"^frag: PyTorch's allocator would hold 3\.5 GiB at its peak for "
                                r"2\.5 GiB in use \(1\.400x\); ccalloc holds [0-9.]+ GiB "
                                r"\(1\.[0-9]{3}x\), [0-9.]+ MiB less \([0-9]+%\)\.$")
        at = lines.index(first)
        # Its few lines: the memory, the driver time a step (the trace says its steps).
        block = lines[at:lines.index("", at)]
        self.assertLessEqual(len(block), 4, block)
        self.assertTrue(block[1].startswith("  Driver time a step after warm-up"), block)
        self.assertIn("last half of 2 steps", block[1])
        # The summary: a header and one row per trace.
        header = next(l for l in lines if l.startswith("trace "))
        self.assertEqual(header.split()[:4], ["trace", "PyTorch", "GiB", "ratio"])
        row = lines[lines.index(header) + 2]
        self.assertEqual(row.split()[:3], ["frag", "3.50", "1.400"])
        self.assertTrue(any(l.startswith("Worst case over 1 trace:") for l in lines), out)
        # None of the full tables.
        for header in ("peak alloc MiB", "caller ms/step", "== frag", "worst ratio over all"):
            self.assertNotIn(header, out)
        self.assertIn("--verbose", out)

    def test_verbose_adds_the_full_tables(self):
        rc, out, err = replay("--verbose", self.trace)
        self.assertEqual(rc, 0, err)
        self.assertIn("== frag (", out)
        self.assertIn("frag: PyTorch's allocator would hold 3.5 GiB", out)
        self.assertRegex(out, r"(?m)^policy +peak alloc MiB +peak rsv MiB +ratio ")
        self.assertRegex(out, r"(?m)^policy +dev alloc +dev free +create ")
        self.assertRegex(out, r"(?m)^pytorch-native +2,560 +3,584 +1\.400 ")
        self.assertIn("ccalloc vs pytorch-native: peak reserved", out)
        self.assertIn("worst ratio over all traces (1): pytorch-native 1.4000 (frag)", out)
        self.assertIn("ratio = peak reserved / peak allocated; frag run =", out)

    def test_out_of_memory_is_said_plainly(self):
        rc, out, err = replay("--capacity", "2GiB", self.trace)
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"(?m)^  PyTorch's allocator ran OUT OF MEMORY on the simulated "
                              r"2\.0 GiB card: [0-9,]+ allocations? refused \(the first at event ")
        self.assertRegex(out, r"(?m)^  ccalloc ran OUT OF MEMORY on the simulated 2\.0 GiB card")
        self.assertRegex(out, r"(?m)^frag +[0-9.]+ OOM ")

    def test_custom_policies_are_named_and_compared_with_pytorch(self):
        rc, out, err = replay("--conf", "expandable_segments:False", self.trace)
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"(?m)^  custom \(expandable_segments:False\) would hold 3\.5 GiB "
                              r"\(1\.400x\), as much as PyTorch's allocator\.$")
        self.assertIn("custom GiB", out)

    def test_json_is_the_same_with_or_without_verbose(self):
        paths = [os.path.join(self.tmp.name, n) for n in ("plain.json", "verbose.json")]
        self.assertEqual(replay("--json", paths[0], self.trace)[0], 0)
        self.assertEqual(replay("--verbose", "--json", paths[1], self.trace)[0], 0)
        plain, verbose = (load(p) for p in paths)
        self.assertEqual([sorted(r) for r in plain], [sorted(r) for r in verbose])
        for r in plain:
            for key in ("peak_allocated_bytes", "peak_reserved_bytes", "ratio", "steps", "fits",
                        "ooms", "late_caller_driver_ms_per_step", "driver_calls"):
                self.assertIn(key, r)
        self.assertEqual(plain[0]["peak_reserved_bytes"], 7 * GIB // 2)

    def test_usage_describes_the_plain_report_and_verbose(self):
        rc, out, _ = replay("-h")
        self.assertEqual(rc, 0)
        self.assertIn("--verbose, -v", out)
        self.assertIn("PyTorch's allocator would hold", out)


if __name__ == "__main__":
    unittest.main()

"""Host-only tests of the peer suite (tests/peer/peer_suite.py, its pytest
plugin and its import stand-ins): no torch, no GPU. A fake test file stands
in for PyTorch's: one test fails only under FAKE_FAIL=1 (which the fake
ccalloc configuration sets), one fails only natively, a fake `torch` and
`ccalloc.torch` in each process say which allocator it has, a helper module
lacks a name the file imports and a module the file imports does not exist.

    python3 tests/python/test_peer_suite_host.py

The runner starts pytest processes: the interpreter is this one if it has
pytest, else /usr/bin/python3 if that has it (Debian's python3-pytest,
scripts/setup.sh); without either the tests skip.
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import types
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER = os.path.join(ROOT, "tests", "peer")
sys.path.insert(0, PEER)

import peer_stub  # noqa: E402
import peer_suite  # noqa: E402


def _python_with_pytest():
    for py in (sys.executable, "/usr/bin/python3"):
        if py and os.path.exists(py) and subprocess.run(
                [py, "-c", "import pytest"], capture_output=True).returncode == 0:
            return py
    return None


PYTHON = _python_with_pytest()

# Stands in for the CCALLOC=1 hook and torch: what the plugin's marker reads.
FAKE_ALLOCATOR = '''
import os, sys, types
_on = os.environ.get("CCALLOC") == "1" and not os.environ.get("FAKE_NO_ENABLE")
_torch = types.ModuleType("torch")
_torch.__version__ = "0.0-fake"
_torch.cuda = types.SimpleNamespace(memory=types.SimpleNamespace(
    get_allocator_backend=lambda: "ccalloc" if _on else "native",
    _set_allocator_settings=lambda s: os.environ.__setitem__("FAKE_SETTINGS", s)))
sys.modules.setdefault("torch", _torch)
if _on:
    _ct = types.ModuleType("ccalloc.torch")
    _ct.status = lambda: {"enabled": True, "mode": "fake", "library": None, "options": None}
    sys.modules["ccalloc.torch"] = _ct
'''

FAKE_TEST = FAKE_ALLOCATOR + '''
import time
import unittest

if os.environ.get("FAKE_SLOW_IMPORT"):
    time.sleep(60)      # a process the time limit stops before collection

import pytest

import peer_fake_no_such_module
from peer_fake_helpers import PRESENT, TEST_NOT_THERE, skip_not_there


_left_behind = []


class TestA(unittest.TestCase):
    def test_same(self):
        self.assertEqual(PRESENT, 1)

    def test_differs(self):
        _left_behind.append(1)   # what a failing test leaves in its process
        self.assertFalse(os.environ.get("FAKE_FAIL"), "fails under FAKE_FAIL")

    def test_documented(self):
        self.assertFalse(os.environ.get("FAKE_FAIL"), "documented difference")

    def test_order_dependent(self):
        # Fails only in a process where test_differs failed first: alone it passes.
        self.assertFalse(os.environ.get("FAKE_FAIL") and _left_behind, "after test_differs")

    def test_native_fails(self):
        self.assertEqual(os.environ.get("CCALLOC"), "1", "fails natively")

    def test_stub_flag(self):
        self.assertFalse(TEST_NOT_THERE)

    @skip_not_there
    def test_stub_skips(self):
        raise AssertionError("a stand-in decorator must skip")

    def test_settings(self):
        # PEER_ALLOCATOR_SETTINGS does not apply to this file
        self.assertIsNone(os.environ.get("FAKE_SETTINGS"))


class TestB(unittest.TestCase):
    def test_b(self):
        pass

    @pytest.mark.serial
    def test_b_serial(self):
        pass


class TestSlow(unittest.TestCase):
    def test_slow_1(self):
        time.sleep(1.5)

    def test_slow_2(self):
        time.sleep(1.5)

    def test_slow_3(self):
        time.sleep(1.5)

    def test_slow_4(self):
        time.sleep(1.5)
'''

FAKE_HELPERS = '''
PRESENT = 1
'''

KNOWN = '''# doc

## Not this section
- `TestA::test_differs`: listed outside the peer-suite section, so it does not count

## PyTorch's own tests (the peer suite)
- `TestA::test_documented` (ccalloc): a reason
'''


@unittest.skipIf(PYTHON is None, "no python3 with pytest (Debian: python3-pytest)")
class PeerSuiteTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.tests = os.path.join(d, "test")
        os.makedirs(self.tests)
        with open(os.path.join(self.tests, "test_fake.py"), "w") as f:
            f.write(FAKE_TEST)
        with open(os.path.join(self.tests, "peer_fake_helpers.py"), "w") as f:
            f.write(FAKE_HELPERS)
        self.known = os.path.join(d, "known.md")
        with open(self.known, "w") as f:
            f.write(KNOWN)

    def tearDown(self):
        self.tmp.cleanup()

    def run_suite(self, *extra, budget=120):
        out = os.path.join(self.tmp.name, "out.json")
        argv = ["--tests", self.tmp.name, "--files", "test_fake.py,test_absent.py",
                "--python", PYTHON, "--known", self.known, "--budget", str(budget),
                "--out", out, "--logs", os.path.join(self.tmp.name, "logs"), "--min-start", "1",
                *extra]
        start = time.monotonic()
        proc = subprocess.run([sys.executable, os.path.join(PEER, "peer_suite.py"), *argv],
                              capture_output=True, text=True, timeout=300)
        elapsed = time.monotonic() - start
        with open(out) as f:
            result = json.load(f)
        return proc, result, elapsed

    def test_reports_exactly_the_difference(self):
        proc, result, _ = self.run_suite(
            "--configs", "native,ccalloc", "--config-env", "ccalloc:FAKE_FAIL=1",
            "-k", "not TestSlow", "--jobs", "3")
        out = proc.stdout
        self.assertEqual(proc.returncode, 1, out + proc.stderr)  # one undocumented difference
        self.assertEqual(result["missing_files"], ["test_absent.py"])
        self.assertEqual([c["errors"] for c in result["collection"]], [[]], out)
        diffs = {(d["nodeid"], d["config"]): d for d in result["differences"]}
        self.assertEqual(sorted(diffs), [("test_fake.py::TestA::test_differs", "ccalloc"),
                                         ("test_fake.py::TestA::test_documented", "ccalloc"),
                                         ("test_fake.py::TestA::test_order_dependent", "ccalloc")],
                         out)
        # Each difference is rerun in a process of its own: alone, the one that
        # failed only after another test's failure passes.
        self.assertEqual(diffs[("test_fake.py::TestA::test_order_dependent", "ccalloc")]["alone"],
                         "passed alone")
        d = diffs[("test_fake.py::TestA::test_differs", "ccalloc")]
        self.assertIsNone(d["documented"])
        self.assertIn("fails under FAKE_FAIL", d["message"])
        self.assertEqual(d["alone"], "fails alone too")
        self.assertEqual(diffs[("test_fake.py::TestA::test_documented", "ccalloc")]["documented"],
                         "TestA::test_documented")
        tests = result["tests"]
        # fails natively, passes with ccalloc: not a difference
        self.assertEqual(tests["test_fake.py::TestA::test_native_fails"]["native"]["outcome"], "failed")
        self.assertEqual(tests["test_fake.py::TestA::test_native_fails"]["ccalloc"]["outcome"], "passed")
        for cfg in ("native", "ccalloc"):
            self.assertEqual(tests["test_fake.py::TestA::test_same"][cfg]["outcome"], "passed")
            self.assertEqual(tests["test_fake.py::TestA::test_stub_flag"][cfg]["outcome"], "passed")
            self.assertEqual(tests["test_fake.py::TestA::test_stub_skips"][cfg]["outcome"], "skipped")
            self.assertEqual(tests["test_fake.py::TestB::test_b_serial"][cfg]["outcome"], "passed")
        self.assertNotIn("test_fake.py::TestSlow::test_slow_1", tests)
        self.assertEqual(result["counts"]["native"], {"failed": 1, "passed": 8, "skipped": 1})
        self.assertEqual(result["counts"]["ccalloc"], {"failed": 3, "passed": 6, "skipped": 1})
        phases = {(p["group"], p["phase"]) for p in result["processes"]}
        self.assertIn(("test_fake.py (serial)", "serial"), phases)
        self.assertIn(("test_fake.py::TestA", "parallel"), phases)
        self.assertTrue(all(e["ok"] for e in result["enabled_check"]), result["enabled_check"])
        backends = {e["config"]: e["allocator_backend"] for e in result["enabled_check"]}
        self.assertEqual(backends, {"native": "native", "ccalloc": "ccalloc"})
        self.assertIn("peer_fake_helpers.TEST_NOT_THERE", result["stubs"])
        self.assertIn("peer_fake_no_such_module (whole module)", result["stubs"])
        self.assertIn("test_fake.py::TestA::test_differs (ccalloc): failed, fails alone too; "
                      "UNDOCUMENTED", out)
        self.assertIn("fails under FAKE_FAIL", out)
        self.assertIn("peer suite: FAILED", out)
        self.assertEqual(result["skipped"], [])

    def test_missing_class_in_another_test_file(self):
        # as test_cuda_expandable_segments.py imports a class that its copy
        # of test_cuda.py lacks: the rest of the file still runs
        with open(os.path.join(self.tests, "test_fake_reexport.py"), "w") as f:
            f.write("from test_fake import TestB, TestGone  # noqa: F401\n")
        proc, result, _ = self.run_suite(
            "--files", "test_fake_reexport.py", "--configs", "native,ccalloc", "-k", "test_b")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(result["collection"][0]["errors"], [])
        self.assertEqual(result["counts"]["native"], {"passed": 2}, proc.stdout)
        self.assertIn("test_fake.TestGone", result["stubs"])

    def test_enabled_check(self):
        proc, result, _ = self.run_suite(
            "--configs", "native,ccalloc", "--config-env", "ccalloc:FAKE_NO_ENABLE=1",
            "-k", "test_same or test_b", "--jobs", "2")
        self.assertEqual(proc.returncode, 1)
        bad = [e for e in result["enabled_check"] if not e["ok"]]
        self.assertTrue(bad)
        self.assertEqual({e["config"] for e in bad}, {"ccalloc"})
        self.assertIn("ccalloc is not enabled", bad[0]["problem"])
        self.assertIn("ENABLED CHECK FAILED", proc.stdout)
        # and a native process with ccalloc in it is caught too
        proc, result, _ = self.run_suite(
            "--configs", "native,ccalloc", "--config-env", "native:CCALLOC=1",
            "-k", "test_same", "--jobs", "2")
        self.assertEqual(proc.returncode, 1)
        bad = [e for e in result["enabled_check"] if not e["ok"]]
        self.assertEqual({e["config"] for e in bad}, {"native"}, result["enabled_check"])

    def test_stopped_before_collection_is_unfinished_not_unchecked(self):
        proc, result, _ = self.run_suite(
            "--configs", "native,ccalloc", "--config-env", "ccalloc:FAKE_SLOW_IMPORT=1",
            "--jobs", "2", "--no-serial", "-k", "test_same", budget=8)
        stopped = [p for p in result["processes"] if p["config"] == "ccalloc"]
        self.assertTrue(stopped and all(p["timed_out"] for p in stopped), result["processes"])
        self.assertEqual([e for e in result["enabled_check"] if not e["ok"]], [], proc.stdout)
        self.assertNotIn("ENABLED CHECK FAILED", proc.stdout)
        same = [t for n, t in result["tests"].items() if n.endswith("TestA::test_same")]
        self.assertEqual([t["ccalloc"]["outcome"] for t in same], ["unfinished"], same)
        self.assertEqual(result["differences"], [])

    def test_budget_skips_and_reports(self):
        budget = 4
        proc, result, elapsed = self.run_suite(
            "--configs", "native,ccalloc", "--jobs", "1", "--no-serial", "-k", "TestSlow or TestB",
            budget=budget)
        out = proc.stdout
        self.assertLess(elapsed, budget + 10, out)
        skipped = {(s["group"], s["config"]) for s in result["skipped"]}
        # TestSlow (the largest class) starts first; the budget ends inside it.
        for cfg in ("native", "ccalloc"):
            self.assertIn(("test_fake.py::TestB", cfg), skipped, out)
        self.assertIn(("test_fake.py::TestSlow", "ccalloc"), skipped, out)
        self.assertIn("skipped for the budget", out)
        self.assertIn("test_fake.py::TestB (native, 2 tests, parallel)", out)
        ran = [p for p in result["processes"] if p["group"] == "test_fake.py::TestSlow"]
        for p in ran:
            self.assertTrue(p["timed_out"], p)
            self.assertLessEqual(p["seconds"], budget + 1)
        if ran:
            slow = [t for n, t in result["tests"].items() if "TestSlow" in n]
            outcomes = {t["native"]["outcome"] for t in slow if "native" in t}
            self.assertIn("unfinished", outcomes)
            self.assertIn("not finished", out)
        self.assertEqual(result["differences"], [])
        # Nothing differed, but not everything ran: never "OK".
        self.assertEqual(proc.returncode, 2, out)
        self.assertIn("peer suite: INCOMPLETE", out)
        self.assertNotIn("peer suite: OK", out)


class StubTest(unittest.TestCase):
    def test_imports_outside_try_only(self):
        import ast
        tree = ast.parse(textwrap.dedent('''
            import a.b
            from c import d, e
            try:
                from f import g
                import h
            except ImportError:
                pass
            if True:
                from i import j
            def later():
                from k import l
        '''))
        froms, plain = peer_stub._imports(tree)
        self.assertEqual(froms, {"c": {"d", "e"}, "i": {"j"}})
        self.assertEqual(plain, {"a.b"})

    def test_missing_is_false_and_skips(self):
        m = peer_stub._Missing("x.Y")
        self.assertFalse(m)
        self.assertEqual(list(m), [])

        @m
        def f():
            pass
        self.assertTrue(getattr(f, "__unittest_skip__", False))

        @m("arg")
        def g():
            pass
        self.assertTrue(getattr(g, "__unittest_skip__", False))
        self.assertIs(peer_stub._known("m", "TEST_SOMETHING"), False)

    def test_a_renamed_name_gets_the_new_ones_value(self):
        # An older test file's `from ...inductor_utils import HAS_CUDA` where
        # the installed PyTorch calls it HAS_CUDA_AND_TRITON: its value, not a
        # false that would define none of the file's tests.
        module = types.ModuleType("fake_inductor_utils")
        module.HAS_CUDA_AND_TRITON = True
        peer_stub._wanted["fake_inductor_utils"] = {"HAS_CUDA", "HAS_NOTHING"}
        try:
            peer_stub._patch(module)
            self.assertIs(module.HAS_CUDA, True)
            self.assertIs(module.HAS_NOTHING, False)  # no new name: a false stand-in
            module.HAS_CUDA_AND_TRITON = False
            fresh = types.ModuleType("fake_inductor_utils")
            fresh.HAS_CUDA_AND_TRITON = False
            peer_stub._patch(fresh)
            self.assertIs(fresh.HAS_CUDA, False)
        finally:
            del peer_stub._wanted["fake_inductor_utils"]

    def test_known_patterns_and_markers(self):
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write(KNOWN + "- `TestMemPool::test_mempool_*`: globbed\n## After\n- `X::y`\n")
        try:
            pats = peer_suite.known_patterns(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(pats, ["TestA::test_documented", "TestMemPool::test_mempool_*"])
        self.assertEqual(peer_suite.documented("t.py::TestMemPool::test_mempool_ctx", pats),
                         "TestMemPool::test_mempool_*")
        self.assertIsNone(peer_suite.documented("t.py::TestA::test_differs", pats))
        ok = {"torch_imported": True, "allocator_backend": "ccalloc", "ccalloc": {"enabled": True}}
        self.assertIsNone(peer_suite.check_marker("ccalloc", ok))
        self.assertIsNotNone(peer_suite.check_marker("native", ok))
        self.assertIsNotNone(peer_suite.check_marker("ccalloc", None))
        self.assertIsNotNone(peer_suite.check_marker(
            "ccalloc_classic", {"torch_imported": True, "allocator_backend": "native",
                                "ccalloc": {"enabled": False}}))


if __name__ == "__main__":
    unittest.main()

"""Host tests of the memory profiler (ccalloc/memreport.py, ccalloc/profiler.py).

    python3 tests/python/test_profiler_host.py

Three parts: the pure accounting, report, plot and JSON on made-up numbers;
the accounting against the real plugin's blocks on a simulated device
(CCALLOC_TORCH_SIMULATE; skipped when the plugin is not built); and, when a
torch is importable (Debian's CPU python3-torch: /usr/bin/python3), the
profiler's hooks on a CPU model with a fake allocator view that records the
tag set on each thread.
"""

import json
import os
import sys
import threading
import unittest
import xml.dom.minidom

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if os.environ.get("CCALLOC_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(ROOT, "python"))

import ccalloc  # noqa: E402
from ccalloc import memreport as mr  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

MiB = 1 << 20


def sample(step, phase, allocated, peak, reserved, largest=0, **kinds):
    k = dict.fromkeys(mr.KINDS, 0)
    k.update(kinds)
    k["temporaries"] = allocated - sum(v for n, v in k.items() if n != "temporaries")
    return {"step": step, "phase": phase, "allocated": allocated, "peak": peak,
            "reserved": reserved, "largest_free": largest, "kinds": k,
            "activations_by_module": {"enc": k["activations"]} if k["activations"] else {},
            "tag_rise": {}}


def two_steps():
    P, G, O, A = 100 * MiB, 100 * MiB, 200 * MiB, 300 * MiB
    s = []
    # Step 1: nothing but parameters at the start; Adam state appears.
    s.append(sample(1, "start", P, P, P))
    s.append(sample(1, "forward", P + A, P + A + 10 * MiB, 600 * MiB, parameters=P, activations=A))
    s.append(sample(1, "loss", P + A + MiB, P + A + 2 * MiB, 600 * MiB, parameters=P, activations=A))
    s.append(sample(1, "backward", P + G, P + A + G + 50 * MiB, 700 * MiB, parameters=P, gradients=G))
    s.append(sample(1, "optimizer", P + G + O, P + G + O + 5 * MiB, 800 * MiB, 50 * MiB,
                    parameters=P, gradients=G, optimizer_state=O))
    s.append(sample(1, "other", P + O, P + G + O, 800 * MiB, 100 * MiB,
                    parameters=P, optimizer_state=O))
    # Step 2 starts with the optimizer state (and here, gradients kept).
    s.append(sample(2, "start", P + O, P + O, 800 * MiB, parameters=P, optimizer_state=O))
    s.append(sample(2, "forward", P + O + A, P + O + A, 900 * MiB, parameters=P, optimizer_state=O,
                    activations=A))
    s.append(sample(2, "backward", P + O + G, P + O + A + G + 50 * MiB, 1000 * MiB, parameters=P,
                    optimizer_state=O, gradients=G))
    s.append(sample(2, "optimizer", P + O + G, P + O + G, 1000 * MiB, parameters=P,
                    optimizer_state=O, gradients=G))
    return s


class AccountTest(unittest.TestCase):
    def test_each_block_counts_once_under_the_first_kind(self):
        holders = [("activations", "lin1"), ("parameters", None), ("gradients", None),
                   ("activations", "lin2"), ("optimizer_state", None), ("activations", "lin2")]
        blocks = [(1000, 512), (1000, 512), (2000, 1024), (3000, 256), (4000, 2048), (3000, 256)]
        kinds, modules = mr.account(10000, holders, blocks)
        self.assertEqual(kinds["parameters"], 512)      # saved weight is a parameter
        self.assertEqual(kinds["gradients"], 1024)
        self.assertEqual(kinds["optimizer_state"], 2048)
        self.assertEqual(kinds["activations"], 256)     # one block, saved twice
        self.assertEqual(modules, {"lin2": 256})
        self.assertEqual(sum(kinds.values()), 10000)
        self.assertEqual(kinds["temporaries"], 10000 - 512 - 1024 - 2048 - 256)

    def test_unheld_pointers_are_skipped_and_bad_input_refused(self):
        kinds, _ = mr.account(100, [("parameters", None)], [(0, 0)])
        self.assertEqual(kinds["temporaries"], 100)
        with self.assertRaises(mr.AccountingError):
            mr.account(100, [("parameters", None)], [(1, 200)])
        with self.assertRaisesRegex(ValueError, "unknown kind"):
            mr.account(100, [("weights", None)], [(1, 10)])
        with self.assertRaisesRegex(ValueError, "holders but"):
            mr.account(100, [("parameters", None)], [])

    def test_fragmentation(self):
        self.assertEqual(mr.fragmentation(0, 0), 0.0)
        self.assertAlmostEqual(mr.fragmentation(100, 25), 0.75)


class ReportTest(unittest.TestCase):
    def test_report_answers_the_three_questions(self):
        text = mr.report(two_steps())
        # What appears at the first optimizer step: the optimizer state.
        self.assertRegex(text, r"optimizer: \+200\.0 MiB optimizer state appeared")
        # What raises the backward peak: live activations + what backward allocates.
        self.assertRegex(text, r"backward: peak 550\.0 MiB = 401\.0 MiB live when it began "
                               r"\(activations \(allocated in forward, still live\) 300\.0 MiB")
        self.assertIn("new gradients 100.0 MiB", text)
        # Why step two peaks higher: the optimizer state carried into it.
        self.assertRegex(text, r"step peak 750\.0 MiB \(backward\) vs 550\.0 MiB the step before: "
                               r"\+200\.0 MiB")
        self.assertIn("optimizer state 200.0 MiB", text.split("step 2")[1])
        self.assertIn("check: kinds add up", text)
        self.assertNotIn("FAILED", text)

    def test_a_sample_that_does_not_add_up_is_reported(self):
        s = two_steps()
        s[2]["kinds"]["temporaries"] += 1
        s[3]["torch_allocated"] = s[3]["allocated"] + 512
        self.assertEqual(len(mr.check_sample(s[2])), 1)
        text = mr.report(s)
        self.assertIn("check FAILED: loss: kinds sum to", text)
        self.assertIn("torch.cuda.memory_allocated() is", text)

    def test_svg_is_well_formed_and_draws_each_kind_and_phase(self):
        doc = xml.dom.minidom.parseString(mr.svg(two_steps()))
        titles = [t.firstChild.data for t in doc.getElementsByTagName("title")]
        for kind in mr.KINDS + ("cached_free",):
            self.assertIn(kind, titles)
        for phase in ("forward", "loss", "backward", "optimizer", "other"):
            self.assertIn(phase, titles)
        self.assertIn("peak in backward: 550.0 MiB", titles)
        with self.assertRaises(ValueError):
            mr.svg([])

    def test_json_round_trips(self):
        s = two_steps()
        d = json.loads(mr.to_json(s, {"model": "x"}))
        self.assertEqual(d["samples"], s)
        self.assertEqual(d["meta"], {"model": "x"})
        self.assertEqual(d["kinds"], list(mr.KINDS))

    def test_oom_report_names_phase_module_kinds_and_holders(self):
        s = two_steps()[1]
        text = mr.oom_report(s, {"forward/enc": 300 * MiB, "": 100 * MiB}, request=2 << 30,
                             phase="forward", module="enc.layer3")
        self.assertIn("out of memory allocating 2.00 GiB during forward in module enc.layer3", text)
        self.assertIn("activations 300.0 MiB", text)
        self.assertIn("forward/enc 300.0 MiB, (untagged) 100.0 MiB", text)


class HistoryTagsTest(unittest.TestCase):
    def snapshot(self):
        frame = {"filename": "train.py", "line": 10, "name": "forward"}
        return {
            "segments": [{"address": 4096, "blocks": [
                {"address": 4096, "size": 512, "state": "active_allocated", "frames": [frame]},
                {"address": 4608, "size": 512, "state": "inactive", "frames": []},
                {"address": 5120, "size": 512, "state": "active_allocated", "frames": []}]}],
            "device_traces": [[
                {"action": "alloc", "addr": 4096, "compile_context": "ccalloc tag: forward/enc",
                 "frames": [frame]},
                {"action": "alloc", "addr": 5120, "compile_context": "", "frames": []},
                {"action": "free_requested", "addr": 4096, "frames": []},
                # The extension's form now: PyTorch's compile context first.
                {"action": "alloc", "addr": 6144, "compile_context": "N/A; ccalloc tag: loss",
                 "frames": []},
                {"action": "alloc", "addr": 6656, "compile_context": "Torch-Compiled Region: 0/0",
                 "frames": []}]],
        }

    def test_tags_become_first_frames_of_entries_and_live_blocks(self):
        from ccalloc import history
        snap = self.snapshot()
        tags = history.block_tags_from_ccalloc([{"segments": [{"blocks": [
            {"address": 4096, "tag_name": "forward/enc"}, {"address": 4608, "tag_name": "x"},
            {"address": 5120}]}]}])
        self.assertEqual(tags, {4096: "forward/enc", 4608: "x"})
        _, entries, blocks = history.add_tag_frames(snap, tags)
        # The alloc of 4096 and its free (which names no tag) are tagged, and
        # the alloc whose tag follows PyTorch's compile context.
        self.assertEqual((entries, blocks), (3, 1))
        trace = snap["device_traces"][0]
        self.assertEqual(trace[0]["frames"][0], {"filename": "ccalloc tag", "line": 0, "name": "forward/enc"})
        self.assertEqual(trace[0]["frames"][1]["filename"], "train.py")
        self.assertEqual(trace[1]["frames"], [])
        self.assertEqual(trace[2]["frames"],
                         [{"filename": "ccalloc tag", "line": 0, "name": "forward/enc"}])
        self.assertEqual(trace[3]["frames"], [{"filename": "ccalloc tag", "line": 0, "name": "loss"}])
        self.assertEqual(trace[4]["frames"], [])   # a compiled region's name is not a tag
        b = snap["segments"][0]["blocks"]
        self.assertEqual(b[0]["frames"][0]["name"], "forward/enc")
        self.assertEqual(b[1]["frames"], [])   # free memory has no tag
        # Tagging twice keeps one tag frame.
        history.add_tag_frames(snap, tags)
        self.assertEqual([f["filename"] for f in trace[0]["frames"]], ["ccalloc tag", "train.py"])
        with self.assertRaisesRegex(ValueError, "segments"):
            history.add_tag_frames({}, {})


class PluginTestCase(unittest.TestCase):
    """Loads the real plugin on a simulated device, or skips when it is not built."""

    @classmethod
    def setUpClass(cls):
        os.environ.setdefault("CCALLOC_TORCH_SIMULATE", str(4 << 30))
        try:
            cls.plugin = ccalloc.load_library()
        except FileNotFoundError as e:
            raise unittest.SkipTest(f"plugin not built: {e}")

    def tagged_mallocs(self, dev, prefix, n):
        """n blocks of 1000 * (i + 1) bytes on `dev`, each under a tag of its
        own (prefix-i), the calling thread's tag put back after each."""
        p, ptrs = self.plugin, []
        for i in range(n):
            prev = p.set_tag(p.tag_intern(f"{prefix}-{i}"))
            try:
                ptrs.append(p.malloc(1000 * (i + 1), device=dev))
            finally:
                p.set_tag(prev)
        return ptrs


class PluginBlocksTest(PluginTestCase):
    """The batched block lookup and the accounting on the real plugin."""

    def test_blocks_holding_and_account_add_up_to_allocated(self):
        p, dev = self.plugin, 7
        tag = p.tag_intern("profiler-test")
        prev = p.set_tag(tag)
        try:
            a = p.malloc(1000, device=dev)        # rounded up by the allocator
            b = p.malloc(3 * MiB, device=dev)
        finally:
            p.set_tag(prev)
        c = p.malloc(5 * MiB + 1, device=dev)
        starts, sizes, tags = p.blocks_holding([a, b + 4096, c, 12345], dev)
        self.assertEqual(starts, [a, b, c, 0])  # an interior pointer finds its block
        self.assertGreaterEqual(sizes[0], 1000)
        self.assertGreaterEqual(sizes[2], 5 * MiB + 1)
        self.assertEqual(tags[:2], [tag, tag])
        self.assertEqual(p.tag_name(tag), "profiler-test")
        allocated = p.raw_stats(dev)["allocated_bytes.all.current"]
        kinds, _ = mr.account(allocated, [("parameters", None), ("gradients", None)],
                              list(zip(starts[:2], sizes[:2])))
        self.assertEqual(sum(kinds.values()), allocated)
        self.assertEqual(kinds["temporaries"], sizes[2])
        p.free(b, dev)
        self.assertEqual(p.blocks_holding([b], dev)[0], [0])
        self.assertGreater(p.largest_free_block(dev), 0)
        p.free(a, dev)
        p.free(c, dev)
        with self.assertRaises(ccalloc.CcallocError):
            p.blocks_holding([a], -3)

    def test_one_read_is_the_separate_reads(self):
        # view.read(): counters, largest free block and tag usage in one C
        # call (what the profiler takes at each boundary), the same numbers
        # as the separate calls; peaks reset only when asked.
        from ccalloc.profiler import _CcallocView, _split
        p, dev = self.plugin, 12
        view = _CcallocView(p, dev)
        if view.read is None:
            self.skipTest("plugin built without ccalloc_torch_profile_read")
        # More tags than the first read has room for.
        ptrs = self.tagged_mallocs(dev, "one-read", 80)
        big = p.malloc(8 * MiB, device=dev)
        p.free(big, dev)
        try:
            (ids, cur, peak, by_id), counters = _split(view.read(False))
            self.assertTrue(by_id)
            self.assertEqual(counters[:3], view.counters())
            self.assertEqual(counters[3], p.largest_free_block(dev))
            self.assertEqual([list(ids), list(cur), list(peak)], [list(a) for a in view.tag_read()])
            self.assertEqual(sum(cur), counters[0])
            self.assertGreaterEqual(counters[1], counters[0] + 8 * MiB)
            self.assertEqual(list(view.read(True)[:2]), list(counters[:2]))   # read, then reset
            stats = p.raw_stats(dev)
            self.assertEqual(stats["allocated_bytes.all.peak"], stats["allocated_bytes.all.current"])
            _, _, peak_after, _ = _split(view.read(False))[0]
            self.assertEqual(list(peak_after), list(cur))
        finally:
            for ptr in ptrs:
                p.free(ptr, dev)
        with self.assertRaises(ccalloc.CcallocError):
            _CcallocView(p, -3).read()

    def test_compact_tag_usage_matches_the_json(self):
        from ccalloc.profiler import _CcallocView
        p, dev = self.plugin, 8
        view = _CcallocView(p, dev)
        if view._tag_usage is None:
            self.skipTest("plugin built without ccalloc_torch_tag_usage")
        # More tags than the first read has room for.
        ptrs = self.tagged_mallocs(dev, "compact", 100)
        ptrs.append(p.malloc(5000, device=dev))   # untagged
        try:
            want = {t["name"]: (t["current_bytes"], t["peak_bytes"]) for t in p.tag_usage(dev)}
            self.assertEqual(view.tag_usage(), want)
            # The same tags: the very ids object of the last read (what the
            # profiler keys its forward-tag positions on); a new tag: another.
            ids = view.tag_read()[0]
            self.assertIs(view.tag_read()[0], ids)
            prev = p.set_tag(p.tag_intern("compact-new"))
            try:
                ptrs.append(p.malloc(1000, device=dev))
            finally:
                p.set_tag(prev)
            self.assertIsNot(view.tag_read()[0], ids)
            self.assertEqual(len(view.tag_read()[0]), len(ids) + 1)
            p.free(ptrs.pop(3), dev)
            want = {t["name"]: (t["current_bytes"], t["peak_bytes"]) for t in p.tag_usage(dev)}
            self.assertEqual(view.tag_usage(), want)
            self.assertEqual(want["compact-3"][0], 0)
        finally:
            for ptr in ptrs:
                p.free(ptr, dev)


class FakeView:
    """The allocator as the profiler sees it, for CPU tensors: each distinct
    storage is a block of its size; allocated is the sum of every block looked
    up so far (the profiler looks parameters, optimizer state and gradients up
    in separate calls) plus temporaries."""

    def __init__(self):
        self.extra = 1 << 20
        self.seen = {}          # ptr -> size of each block looked up
        self.tags = []          # (thread id, name)
        self.device = "cpu"
        self.known_sizes = {}

    def counters(self):
        return self.allocated, self.allocated, self.allocated * 2

    def blocks(self, ptrs):
        out = []
        for p in ptrs:
            size = self.known_sizes.get(p, 0)
            out.append((p, size) if size else (0, 0))
        self.seen.update((p, s) for p, s in out if p)
        self.allocated = sum(self.seen.values()) + self.extra
        return [p for p, _ in out], [s for _, s in out]

    def largest_free(self):
        return 0

    def tag_usage(self):
        return {}

    def reset_peaks(self):
        pass

    def set_tag(self, name):
        self.tags.append((threading.get_ident(), name))
        return 0

    def restore_tag(self, tag):
        pass


@unittest.skipIf(torch is None, "no torch (Debian's python3-torch runs this under /usr/bin/python3)")
class ProfilerHooksTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.view = FakeView()
        from ccalloc.profiler import MemoryProfiler
        self.prof = MemoryProfiler(self.model, self.opt, view=self.view)
        self.view.known_sizes = _SizeOf()

    def tearDown(self):
        self.prof.close()

    def run_step(self):
        with self.prof.step():
            out = self.model(torch.randn(32, 8))
            loss = out.square().mean()
            loss.backward()
            self.opt.step()
            self.opt.zero_grad(set_to_none=True)

    def test_phases_kinds_and_modules(self):
        # exact_saved: the fake view has no tag counters; the saved tensors
        # are followed through the pack hook instead.
        from ccalloc.profiler import MemoryProfiler
        self.prof.close()
        self.prof = MemoryProfiler(self.model, self.opt, view=self.view, exact_saved=True)
        self.run_step()
        self.run_step()
        phases = [(s["step"], s["phase"]) for s in self.prof.samples]
        self.assertEqual(phases[:8], [(1, "start"), (1, "other"), (1, "forward"), (1, "loss"),
                                      (1, "backward"), (1, "other"), (1, "optimizer"), (1, "other")])
        self.assertEqual(phases[8], (2, "start"))
        by = {(s["step"], s["phase"]): s for s in self.prof.samples}
        nparams = sum(p.numel() * 4 for p in self.model.parameters())
        self.assertEqual(by[(1, "start")]["kinds"]["parameters"], nparams)
        self.assertEqual(by[(1, "start")]["kinds"]["optimizer_state"], 0)
        self.assertEqual(by[(1, "backward")]["kinds"]["gradients"], nparams)
        self.assertEqual(by[(1, "loss")]["kinds"]["gradients"], 0)
        # Adam: exp_avg and exp_avg_sq per parameter (+ the step counters).
        self.assertGreaterEqual(by[(1, "optimizer")]["kinds"]["optimizer_state"], 2 * nparams)
        self.assertEqual(by[(2, "start")]["kinds"]["optimizer_state"],
                         by[(1, "optimizer")]["kinds"]["optimizer_state"])
        # Saved for backward after forward, attributed to the modules; gone after backward.
        acts = by[(1, "forward")]["activations_by_module"]
        self.assertGreater(acts.get("0", 0) + acts.get("1", 0) + acts.get("2", 0), 0)
        self.assertEqual(by[(1, "backward")]["kinds"]["activations"], 0)
        for s in self.prof.samples:
            self.assertEqual(sum(s["kinds"].values()), s["allocated"], s["phase"])
        self.assertEqual(self.prof.problems(), [])
        text = self.prof.report()
        self.assertIn("optimizer state appeared", text)
        self.assertIn("activations saved for backward", text)

    def test_sample_every_accounts_the_first_steps_and_every_nth(self):
        from ccalloc.profiler import MemoryProfiler
        self.prof.close()
        self.prof = MemoryProfiler(self.model, self.opt, view=self.view, sample_every=4)
        work = []       # (boundaries, tags set) of each step
        for _ in range(9):
            b, t = self.prof.boundaries, len(self.view.tags)
            self.run_step()
            work.append((self.prof.boundaries - b, len(self.view.tags) - t))
        self.assertEqual(sorted({s["step"] for s in self.prof.samples}), [1, 2, 3, 4, 8])
        for step, (boundaries, tags) in enumerate(work, start=1):
            if self.prof.sampled(step):
                self.assertGreater(boundaries, 0, step)
                self.assertGreater(tags, 0, step)
            else:       # a step not sampled reads nothing and tags nothing
                self.assertEqual((boundaries, tags), (0, 0), step)
        for s in self.prof.samples:
            self.assertEqual(sum(s["kinds"].values()), s["allocated"], s["phase"])
        self.assertEqual(self.prof.problems(), [])
        self.assertIn("vs step 4's", self.prof.report())   # step 8 is compared with step 4
        self.assertIn("vs step 4's", self.prof.report(8))  # and so alone
        with self.assertRaisesRegex(ValueError, "sample_every"):
            MemoryProfiler(self.model, self.opt, view=self.view, sample_every=0)

    def test_a_step_not_sampled_still_knows_its_phase_for_an_oom_report(self):
        from ccalloc.profiler import MemoryProfiler
        self.prof.close()
        self.prof = MemoryProfiler(self.model, self.opt, view=self.view, sample_every=5)
        for _ in range(3):
            self.run_step()
        seen = []
        with self.prof.step():            # step 4: not sampled
            out = self.model(torch.randn(32, 8))
            seen.append(self.prof.phase)
            text = self.prof.oom_report()     # as an out-of-memory error would
            out.square().mean().backward()
            seen.append(self.prof.phase)
            self.opt.step()
            self.opt.zero_grad(set_to_none=True)
        self.assertEqual(seen, ["loss", "other"])
        self.assertIn("out of memory during loss", text)
        self.assertEqual({s["step"] for s in self.prof.samples}, {1, 2, 3})
        self.run_step()                   # step 5: sampled, as before
        self.assertIn(5, {s["step"] for s in self.prof.samples})

    def test_a_peak_in_a_step_not_sampled_counts_in_max_allocated(self):
        from ccalloc.profiler import MemoryProfiler

        class PeakView(FakeView):
            spike = 0   # a peak the allocator saw since the last reset

            def counters(self):
                return self.allocated, max(self.allocated, self.spike), self.allocated * 2

            def reset_peaks(self):
                self.spike = 0
        self.prof.close()
        self.view = PeakView()
        self.view.known_sizes = _SizeOf()
        self.prof = MemoryProfiler(self.model, self.opt, view=self.view, sample_every=5)
        for _ in range(3):
            self.run_step()
        before = self.prof.max_allocated
        self.run_step()                   # step 4: not sampled
        self.view.spike = 1 << 34
        self.run_step()                   # step 5: sampled; its start reads the spike
        self.assertLess(before, 1 << 34)
        self.assertEqual(self.prof.max_allocated, 1 << 34)
        self.assertTrue(all(s["peak"] < 1 << 34 for s in self.prof.samples if s["step"] == 5))

    def test_default_follows_no_saved_tensor(self):
        self.run_step()
        self.assertEqual(self.prof._saved, [])
        self.assertIsNone(self.prof._hooks_ctx)
        for s in self.prof.samples:
            self.assertEqual(s["activations_basis"], "forward")
            self.assertEqual(sum(s["kinds"].values()), s["allocated"], s["phase"])

    def test_samples_are_completed_when_read_or_when_many_wait(self):
        import ccalloc.profiler as profiler
        self.run_step()
        self.assertTrue(self.prof._pending)      # left raw by the boundaries
        self.assertTrue(all(isinstance(s["tag_rise"], dict) for s in self.prof.samples))
        self.assertEqual(self.prof._pending, [])
        saved = profiler._PENDING_MAX
        profiler._PENDING_MAX = 3
        try:
            self.run_step()
            self.assertEqual(self.prof._pending, [])   # end_step derived them
            self.assertTrue(all(isinstance(s["tag_rise"], dict) for s in self.prof._samples))
        finally:
            profiler._PENDING_MAX = saved

    def test_cached_blocks_stay_exact_when_parameters_or_state_change(self):
        self.run_step()
        # Replace a parameter (refresh() re-reads them) and give the
        # optimizer new state: the cached blocks must follow.
        with torch.no_grad():
            self.model[0].weight = torch.nn.Parameter(torch.randn(16, 8))
        self.prof.refresh()
        self.opt.add_param_group({"params": [self.model[0].weight]})
        self.run_step()
        self.run_step()
        nparams = sum(p.numel() * 4 for p in self.model.parameters())
        last = [s for s in self.prof.samples if s["step"] == 3]
        self.assertEqual(last[0]["kinds"]["parameters"], nparams)
        for s in self.prof.samples:
            self.assertEqual(sum(s["kinds"].values()), s["allocated"], s["phase"])
        self.assertEqual(self.prof.problems(), [])
        self.assertGreaterEqual(last[-1]["kinds"]["optimizer_state"], 2 * nparams)

    def test_tags_follow_phases_and_modules_on_the_right_threads(self):
        self.run_step()
        names = [n for _, n in self.view.tags]
        for expected in ("forward", "forward/0", "forward/2", "loss", "backward", "optimizer", "other"):
            self.assertIn(expected, names)
        # The backward tag is set by a hook, on the thread autograd runs it on
        # (on CPU the caller's; the test checks it is set from the hook too).
        self.assertGreaterEqual(names.count("backward"), 2)

    def test_gradients_replaced_at_a_reused_id_are_seen(self):
        # Each parameter's gradient is replaced between two boundaries by a
        # tensor whose storage is twice as large, created after the old one
        # died: CPython then gives it the old one's id, so only the weak
        # references tell the profiler to look the gradients up again.
        nparams = sum(p.numel() * 4 for p in self.model.parameters())
        with self.prof.step():
            self.model(torch.randn(32, 8)).square().mean().backward()
            reused = 0
            for p in self.model.parameters():
                big = torch.zeros(2 * p.numel())
                shape, stride, old = p.shape, p.stride(), id(p.grad)
                p.grad = None
                p.grad = torch.as_strided(big, shape, stride)
                reused += id(p.grad) == old
            del big
            self.opt.step()
        self.assertGreater(reused, 0, "no gradient got its predecessor's id: the case is not reached")
        by_phase = [(s["phase"], s["kinds"]["gradients"]) for s in self.prof.samples]
        self.assertEqual(by_phase[4], ("backward", nparams))
        self.assertEqual(by_phase[5], ("other", 2 * nparams))     # closed by optimizer.step()
        for s in self.prof.samples:
            self.assertEqual(sum(s["kinds"].values()), s["allocated"], s["phase"])

    def test_gradients_are_read_after_backward_and_at_a_steps_start(self):
        # .grad is read where gradients appear in training (a step's start,
        # after each backward), not at every boundary: one set by hand where
        # there was none counts as temporaries until the next of those.
        # The kinds add up to allocated either way.
        nparams = sum(p.numel() * 4 for p in self.model.parameters())
        with self.prof.step():
            out = self.model(torch.randn(32, 8))
            for p in self.model.parameters():
                p.grad = torch.ones_like(p)
            out.square().mean().backward()   # accumulates into the gradients set by hand
            self.opt.step()
        with self.prof.step():
            self.model(torch.randn(32, 8))
        by = {(s["step"], s["phase"]): s["kinds"] for s in self.prof.samples}
        self.assertEqual(by[(1, "forward")]["gradients"], 0)
        self.assertEqual(by[(1, "loss")]["gradients"], 0, "gradients set by hand were read before backward")
        self.assertEqual(by[(1, "backward")]["gradients"], nparams)
        self.assertEqual(by[(2, "start")]["gradients"], nparams)
        for s in self.prof.samples:
            self.assertEqual(sum(s["kinds"].values()), s["allocated"], s["phase"])

    def test_module_tags_restore_the_parent_and_stay_in_forward(self):
        from ccalloc.profiler import MemoryProfiler
        self.prof.close()
        model = torch.nn.Sequential(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()),
                                    torch.nn.Linear(8, 4))
        self.prof = MemoryProfiler(model, None, view=self.view)
        with self.prof.step():
            model(torch.randn(2, 8)).sum().backward()
        names = [n for _, n in self.view.tags]
        start = names.index("forward")
        self.assertEqual(names[start:names.index("loss")],
                         ["forward", "forward/0", "forward/0.0", "forward/0", "forward/0.1",
                          "forward/0", "forward", "forward/1", "forward"])
        # Outside a step no module tag is set, also after a step whose
        # forward raised (it ends in the forward phase).
        with self.assertRaises(RuntimeError):
            with self.prof.step():
                model(torch.randn(2, 5))
        self.assertEqual(self.prof.phase, "forward")
        before = len(self.view.tags)
        model(torch.randn(2, 8))
        self.assertEqual(self.view.tags[before:], [])

    def test_close_removes_hooks_and_the_backward_wrapper(self):
        self.assertIn("torch.autograd.backward wrapper", self.prof.leftovers())
        self.assertTrue(any(x.startswith("_forward_pre_hooks") for x in self.prof.leftovers()))
        self.run_step()
        self.prof.close()
        self.assertEqual(self.prof.leftovers(), [])
        self.assertFalse(hasattr(torch.autograd.backward, "__wrapped__"))
        before = len(self.view.tags)
        self.model(torch.randn(2, 8)).sum().backward()
        self.assertEqual(len(self.view.tags), before)

    def test_a_closure_step_opens_the_optimizer_phase_when_the_closure_returns(self):
        # optimizer.step(closure) runs forward and backward inside step()
        # (LBFGS; Lightning's automatic optimization): the optimizer phase
        # is the update after the closure, not the whole step() call.
        def closure():
            self.opt.zero_grad()
            loss = self.model(torch.randn(32, 8)).square().mean()
            loss.backward()
            return loss
        for _ in range(2):
            with self.prof.step():
                loss = self.opt.step(closure)
        self.assertIsInstance(loss, torch.Tensor)        # step() still returns the closure's loss
        phases = [(s["step"], s["phase"]) for s in self.prof.samples]
        self.assertEqual(phases[:8], [(1, "start"), (1, "other"), (1, "forward"), (1, "loss"),
                                      (1, "backward"), (1, "other"), (1, "optimizer"), (1, "other")])
        by = {(s["step"], s["phase"]): s for s in self.prof.samples}
        self.assertEqual(by[(1, "backward")]["kinds"]["optimizer_state"], 0)
        self.assertGreater(by[(1, "optimizer")]["kinds"]["optimizer_state"], 0)   # Adam's state
        self.assertEqual(self.prof.problems(), [])
        self.assertIn("optimizer state appeared", self.prof.report())
        # Outside a step the closure is passed on untouched.
        seen = []
        self.opt.step(lambda: seen.append(1) or closure())
        self.assertEqual(seen, [1])
        # PyTorch >= 2.0 gives a step pre hook (optimizer, args, kwargs) with
        # the optimizer first in args; the closure after it or by keyword.
        with self.prof.step():
            args, kwargs = self.prof._opt_pre(self.opt, (self.opt, closure), {"x": 1})
            self.assertIs(args[0], self.opt)
            self.assertIsNot(args[1], closure)
            self.assertEqual((len(args), kwargs), (2, {"x": 1}))
            self.assertEqual(self.prof.phase, "other")
            args[1]()
            self.assertEqual(self.prof.phase, "optimizer")   # opened when the closure returned
            self.prof._opt_post(self.opt, args, kwargs)
            args, kwargs = self.prof._opt_pre(self.opt, (self.opt,), {"closure": closure})
            self.assertEqual(args, (self.opt,))
            self.assertIsNot(kwargs["closure"], closure)
            kwargs["closure"]()
            self.assertEqual(self.prof.phase, "optimizer")
            self.prof._opt_post(self.opt, args, kwargs)
            self.assertIsNone(self.prof._opt_pre(self.opt, (self.opt,), {}))
            self.assertEqual(self.prof.phase, "optimizer")   # no closure: opened at once

    def test_begin_forward_tags_a_forward_that_never_calls_the_model(self):
        with self.prof.step():
            self.prof.begin_forward()
            out = self.model[2](self.model[1](self.model[0](torch.randn(4, 8))))
            self.prof.end_forward()
            out.sum().backward()
        names = [n for _, n in self.view.tags]
        start = names.index("forward")
        self.assertEqual(names[start:names.index("loss")],
                         ["forward", "forward/0", "forward", "forward/1", "forward", "forward/2", "forward"])
        self.assertEqual([s["phase"] for s in self.prof.samples],
                         ["start", "other", "forward", "loss", "backward", "other"])

    def test_figures_of_a_step(self):
        self.assertIsNone(self.prof.figures())
        self.run_step()
        self.run_step()
        two = [s for s in self.prof.samples if s["step"] == 2]
        f = self.prof.figures()
        self.assertEqual(f["step"], 2)
        self.assertEqual(f["kinds"], two[-1]["kinds"])
        self.assertEqual(sum(f["kinds"].values()), f["allocated"])
        self.assertEqual((f["allocated"], f["reserved"]), (two[-1]["allocated"], two[-1]["reserved"]))
        self.assertEqual(f["peak"], max(s["peak"] for s in two))
        self.assertEqual(f["max_kinds"]["gradients"], max(s["kinds"]["gradients"] for s in two))
        self.assertGreater(f["max_kinds"]["gradients"], f["kinds"]["gradients"])   # zeroed at the end
        self.assertEqual(self.prof.figures(1)["step"], 1)
        with self.assertRaises(KeyError):
            self.prof.figures(7)

    def test_bad_input(self):
        from ccalloc.profiler import MemoryProfiler
        with self.assertRaisesRegex(TypeError, "torch.nn.Module"):
            MemoryProfiler(object(), view=FakeView())
        with self.assertRaisesRegex(RuntimeError, "without begin_step"):
            self.prof.end_step()


class _SimTagView:
    """The real plugin on a simulated device, for CPU tensors: the first
    time the profiler looks up a CPU pointer it gets a simulated block of its
    own (allocated under the calling thread's tag); counters, tag usage and
    block lookups are the plugin's own, so the tag accounting is the real one."""

    def __init__(self, plugin, device):
        from ccalloc.profiler import _CcallocView
        self.inner = _CcallocView(plugin, device)
        self.plugin, self.sim_device, self.device = plugin, device, "cpu"
        self.sim = {}
        self.reads = []

    def block_for(self, ptr, size=4096):
        if ptr not in self.sim:
            self.sim[ptr] = self.plugin.malloc(size, device=self.sim_device)
        return self.sim[ptr]

    def blocks(self, ptrs):
        return self.inner.blocks([self.block_for(p) for p in ptrs])

    def counters(self):
        return self.inner.counters()

    def largest_free(self):
        return 0

    def tag_usage(self):
        self.record()
        return self.inner.tag_usage()

    def record(self):
        """Keeps the plugin's own JSON tag usage as of this read: what the
        tests derive the expected tag_rise from."""
        self.reads.append({t["name"]: (t["current_bytes"], t["peak_bytes"])
                           for t in self.plugin.tag_usage(self.sim_device)})

    def reset_peaks(self):
        self.inner.reset_peaks()

    def tag_token(self, name):
        return self.inner.tag_token(name)

    def tag_setter(self):
        return self.inner.tag_setter()

    def tag_function(self):
        return self.inner.tag_function()

    def current_tag(self):
        return self.inner.current_tag()

    def set_tag(self, name):
        return self.inner.set_tag(name)

    def restore_tag(self, tag):
        self.inner.restore_tag(tag)


class _SimRawTagView(_SimTagView):
    """_SimTagView with the arrays-by-tag-id read of ccalloc's own view
    (what the profiler uses on a GPU) instead of the {name: ...} dict."""

    raw_reads = 0

    def tag_read(self):
        self.raw_reads += 1
        self.record()
        return self.inner.tag_read()

    def tag_name(self, tag):
        return self.inner.tag_name(tag)


class _SimOneReadView(_SimRawTagView):
    """_SimRawTagView with ccalloc's one-call read (view.read: counters,
    largest free block and tags at once, what the profiler uses on a GPU)."""

    one_reads = 0

    def read(self, reset=True):
        self.one_reads += 1
        self.record()
        self.inner.device = self.sim_device
        return self.inner.read(reset)


def expected_tag_rise(samples, reads):
    """tag_rise as the profiler defines it, from each sample's JSON tag
    usage: each tag's peak since the last sample of the step less its live
    bytes at that sample (0 at the step's start), where above."""
    out, before = [], {}
    for s, now in zip(samples, reads):
        if s["phase"] == "start":
            before = {}
        out.append({n: peak - before.get(n, (0, 0))[0] for n, (_, peak) in now.items()
                    if peak - before.get(n, (0, 0))[0] > 0})
        before = now
    return out


@unittest.skipIf(torch is None, "no torch (Debian's python3-torch runs this under /usr/bin/python3)")
class TagActivationsTest(PluginTestCase):
    """Activations from the allocator's per-tag counters (the default): the
    bytes allocated in forward and still live, by module, exactly; through
    the {name: ...} tag read of a view (DEV) and the arrays by tag id of
    ccalloc's own (RAW_DEV, its own device: per-tag counters are per device)."""

    DEV = 9
    RAW_DEV = 10
    CACHE_DEV = 11
    ONE_READ_DEV = 13
    ONE_READ_CACHE_DEV = 14
    HOOKS_DEV = 15

    # The views here have the plugin's tag function: module tags go through
    # the C forward wrappers (pysrc/profiler_ext.cc) unless told otherwise.

    def test_activations_are_the_forward_blocks_still_live(self):
        self.run_model(_SimTagView(self.plugin, self.DEV))

    def test_the_same_from_the_arrays_by_tag_id(self):
        self.run_model(_SimRawTagView(self.plugin, self.RAW_DEV))

    def one_read_view(self, dev):
        """A _SimOneReadView on `dev`; skips when the plugin has no one-call read."""
        view = _SimOneReadView(self.plugin, dev)
        if view.inner.read is None:
            self.skipTest("plugin built without ccalloc_torch_profile_read")
        return view

    def test_the_same_from_one_read_per_boundary(self):
        view = self.one_read_view(self.ONE_READ_DEV)
        self.run_model(view)
        self.assertEqual(view.raw_reads, 0)

    def test_the_same_with_python_hooks(self):
        self.run_model(self.one_read_view(self.HOOKS_DEV), module_tags="hooks")

    def run_model(self, view, **kwargs):
        from ccalloc.profiler import MemoryProfiler
        plugin, dev = self.plugin, view.sim_device
        live = {}            # module name -> [(ptr, block size)] allocated in its forward

        class Alloc(torch.nn.Module):
            """A Linear whose forward also allocates on the simulated device
            (like the activations a CUDA forward allocates) and frees it when
            backward reaches its output."""

            def __init__(self, name, nbytes, keep=False):
                super().__init__()
                self.lin = torch.nn.Linear(8, 8)
                self.name, self.nbytes, self.keep = name, nbytes, keep

            def forward(self, x):
                ptr = plugin.malloc(self.nbytes, device=dev)
                size = plugin.blocks_holding([ptr], dev)[1][0]
                live.setdefault(self.name, []).append((ptr, size))
                out = self.lin(x)
                if not self.keep:
                    def free(grad, ptr=ptr, name=self.name):
                        plugin.free(ptr, dev)
                        live[name].remove((ptr, size))
                    out.register_hook(free)
                return out

        model = torch.nn.Sequential(Alloc("0", 3 * MiB), torch.nn.ReLU(), Alloc("2", MiB + 1),
                                    Alloc("3", 200 * 1024, keep=True))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        # One parameter's block is allocated under a forward tag: it must
        # count as a parameter, not also as an activation of module 0.
        prev = plugin.set_tag(plugin.tag_intern("forward/0"))
        try:
            view.block_for(model[0].lin.weight.data_ptr(), 64 * 1024)
        finally:
            plugin.set_tag(prev)
        prof = MemoryProfiler(model, opt, view=view, **kwargs)
        wrapped = _forward_wrapped(model)
        self.assertEqual(wrapped, [] if kwargs.get("module_tags") == "hooks" else
                         ["0", "0.lin", "1", "2", "2.lin", "3", "3.lin"])
        try:
            expected = {}
            for _ in range(2):
                with prof.step():
                    out = model(torch.randn(4, 8))
                    expected[(prof.step_index, "forward")] = {
                        n: sum(s for _, s in v) for n, v in live.items() if v}
                    loss = out.square().mean()
                    loss.backward()
                    expected[(prof.step_index, "backward")] = {
                        n: sum(s for _, s in v) for n, v in live.items() if v}
                    opt.step()
                    opt.zero_grad(set_to_none=True)
            by = {(s["step"], s["phase"]): s for s in prof.samples}
            for key, modules in expected.items():
                s = by[key]
                self.assertEqual(s["activations_by_module"], modules, key)
                self.assertEqual(s["kinds"]["activations"], sum(modules.values()), key)
            # After backward only what module 3 keeps (two steps' worth by step 2).
            self.assertEqual(set(by[(2, "backward")]["activations_by_module"]), {"3"})
            self.assertEqual(len(live["3"]), 2)
            self.assertGreater(by[(1, "start")]["kinds"]["parameters"], 64 * 1024)
            for s in prof.samples:
                self.assertEqual(sum(s["kinds"].values()), s["allocated"], (s["step"], s["phase"]))
                self.assertGreaterEqual(s["kinds"]["temporaries"], 0)
            self.assertEqual(prof.problems(), [])
            self.assertIn("activations (allocated in forward, still live)", prof.report())
            # tag_rise, derived when the samples are read, is what the
            # allocator's own usage at each boundary says.
            self.assertEqual(len(view.reads), len(prof.samples))
            if isinstance(view, _SimOneReadView):
                self.assertEqual(view.one_reads, len(prof.samples))
            elif isinstance(view, _SimRawTagView):
                self.assertEqual(view.raw_reads, len(prof.samples))
            self.assertEqual([s["tag_rise"] for s in prof.samples],
                             expected_tag_rise(prof.samples, view.reads))
            self.assertTrue(any(s["tag_rise"] for s in prof.samples))
        finally:
            prof.close()
            self.assertEqual(prof.leftovers(), [])
            for v in live.values():
                for ptr, _ in v:
                    plugin.free(ptr, dev)
            for ptr in view.sim.values():
                plugin.free(ptr, dev)

    def test_cached_blocks_measure_what_a_fresh_profiler_does(self):
        self.cached_blocks(_SimRawTagView(self.plugin, self.CACHE_DEV))

    def test_cached_blocks_with_one_read_per_boundary(self):
        view = self.one_read_view(self.ONE_READ_CACHE_DEV)
        self.cached_blocks(view)
        self.assertGreater(view.one_reads, 0)

    def cached_blocks(self, view):
        # The profiler looks blocks up again only when pointers or
        # gradients change: wherever a step stands, what it measures through
        # its caches (twice: the second read is all cache hits) is what a
        # profiler with no cache measures, and the kinds add up.
        from ccalloc.profiler import MemoryProfiler
        plugin, dev = self.plugin, view.sim_device
        held = []

        class Alloc(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(8, 8)

            def forward(self, x):
                held.append(plugin.malloc(64 * 1024, device=dev))   # an activation
                return self.lin(x)

        model = torch.nn.Sequential(Alloc(), torch.nn.ReLU(), Alloc())
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        prof = MemoryProfiler(model, opt, view=view)

        def check(where):
            cached = prof.measure()
            self.assertEqual(prof.measure(), cached, where)
            fresh = MemoryProfiler(model, opt, view=view)
            try:
                self.assertEqual(fresh.measure(), cached, where)
            finally:
                fresh.close()
            self.assertEqual(sum(cached["kinds"].values()), cached["allocated"], where)
        try:
            for step in range(3):
                with prof.step():
                    out = model(torch.randn(4, 8))
                    check((step, "forward"))
                    out.square().mean().backward()
                    check((step, "backward"))
                    opt.step()
                    check((step, "optimizer"))
                    opt.zero_grad(set_to_none=True)
                    check((step, "zero_grad"))
                    plugin.free(held.pop(0), dev)
            self.assertEqual(prof.problems(), [])
            self.assertGreater(prof.samples[-1]["kinds"]["activations"], 0)
        finally:
            prof.close()
            for ptr in held + list(view.sim.values()):
                plugin.free(ptr, dev)


def _forward_wrapped(model):
    """Names of the submodules whose forward is a C tag wrapper."""
    return [n for n, m in model.named_modules()
            if type(vars(m).get("forward")).__module__ == "_ccalloc_profiler_ext"]


class _SizeOf(dict):
    """ptr -> bytes of the largest live CPU storage starting there (through
    gc, every time: addresses are reused as tensors come and go)."""

    def get(self, ptr, default=0):
        import gc
        size = 0
        for obj in gc.get_objects():
            if isinstance(obj, torch.Tensor) and obj.data_ptr() == ptr:
                size = max(size, obj.storage().nbytes() if hasattr(obj.storage(), "nbytes")
                           else obj.numel() * obj.element_size())
        return size or default


if __name__ == "__main__":
    unittest.main(verbosity=2)

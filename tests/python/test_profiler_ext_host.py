"""Host tests of the memory profiler's extension (python/ccalloc/_profiler_ext.py,
pysrc/profiler_ext.cc): module tags through the C forward wrappers, read
back from the plugin on a simulated device; and the profiler's hook and
accounting tests of test_profiler_host.py again with the extension taken
away (Python hooks, the boundaries' scans in Python).

    python3 tests/python/test_profiler_ext_host.py

Skips without torch (Debian's CPU python3-torch: /usr/bin/python3) or the plugin.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_profiler_host as base  # noqa: E402  (its classes by attribute: not run twice here)

torch = base.torch


class _WithoutExtension:
    """A test class's tests with the profiler's extension taken away (as
    where it cannot be built): module tags through Python hooks, the
    boundaries' scans in Python."""

    def setUp(self):
        from ccalloc import _profiler_ext
        self._ext_state = dict(_profiler_ext._state)
        _profiler_ext._state.clear()
        _profiler_ext._state["module"] = None
        super().setUp()

    def tearDown(self):
        from ccalloc import _profiler_ext
        try:
            super().tearDown()
        finally:
            _profiler_ext._state.clear()
            _profiler_ext._state.update(self._ext_state)


class ProfilerHooksWithoutExtensionTest(_WithoutExtension, base.ProfilerHooksTest):
    pass


class TagActivationsWithoutExtensionTest(_WithoutExtension, base.TagActivationsTest):
    # Per-tag counters are per device: devices of their own.
    DEV, RAW_DEV, CACHE_DEV, ONE_READ_DEV, ONE_READ_CACHE_DEV, HOOKS_DEV = 20, 21, 22, 23, 24, 25

    def run_model(self, view, **kwargs):
        super().run_model(view, **dict(kwargs, module_tags="hooks"))   # what it falls back to

    def test_module_tags_fall_back_to_hooks(self):
        from ccalloc.profiler import MemoryProfiler
        model = torch.nn.Sequential(torch.nn.Linear(4, 4))
        prof = MemoryProfiler(model, None, view=base._SimOneReadView(self.plugin, 26))
        try:
            self.assertIsNone(prof._ext)
            self.assertEqual(base._forward_wrapped(model), [])
            self.assertIn("_forward_pre_hooks on 0", prof.leftovers())
        finally:
            prof.close()


@unittest.skipIf(torch is None, "no torch (Debian's python3-torch runs this under /usr/bin/python3)")
class ForwardWrapperTest(base.PluginTestCase):
    """Module tags through the C forward wrappers (pysrc/profiler_ext.cc):
    the tag each forward runs under, read back from the plugin."""

    DEV = 16

    def setUp(self):
        from ccalloc import _profiler_ext
        if _profiler_ext.load() is None:
            self.skipTest(f"tag wrappers not built: {_profiler_ext.error()}")
        self.view = base._SimOneReadView(self.plugin, self.DEV)
        if self.view.inner.read is None:
            self.skipTest("plugin built without ccalloc_torch_profile_read")
        self.seen = []          # (module name, tag name) at each Record's forward

    def tearDown(self):
        for ptr in self.view.sim.values():
            self.plugin.free(ptr, self.DEV)

    def record(self, name):
        tag = self.plugin.current_tag()
        self.seen.append((name, self.plugin.tag_name(tag) if tag else ""))

    def nested(self):
        test = self

        class Record(torch.nn.Module):
            def __init__(self, name, *children):
                super().__init__()
                self.name = name
                self.children_ = torch.nn.ModuleList(children)
                self.lin = torch.nn.Linear(4, 4)

            def forward(self, x):
                test.record(self.name)
                for c in self.children_:
                    x = c(x)
                    test.record(self.name)      # the parent's tag is back
                return self.lin(x)
        return torch.nn.Sequential(Record("a", Record("a.b")), Record("c"))

    def profiler(self, model, **kwargs):
        from ccalloc.profiler import MemoryProfiler
        params = list(model.parameters())
        opt = torch.optim.SGD(params, lr=0.1) if params else None
        return MemoryProfiler(model, opt, view=self.view, **kwargs)

    def test_each_forward_runs_under_its_tag_and_the_parents_comes_back(self):
        model = self.nested()
        prof = self.profiler(model)
        try:
            # Not the ModuleLists: containers, never called.
            self.assertEqual(base._forward_wrapped(model),
                             ["0", "0.children_.0", "0.children_.0.lin", "0.lin", "1", "1.lin"])
            with prof.step():
                model(torch.randn(2, 4)).sum().backward()
            self.assertEqual(self.seen, [("a", "forward/0"), ("a.b", "forward/0.children_.0"),
                                         ("a", "forward/0"), ("c", "forward/1")])
            self.assertEqual(prof.problems(), [])
            # Outside a step, and in a step outside forward, no module tag.
            self.seen.clear()
            model(torch.randn(2, 4))
            with prof.step():
                model[1](torch.randn(2, 4))
            self.assertEqual([t for _, t in self.seen], ["", "", "", "", "other"])
        finally:
            prof.close()

    def test_a_forward_that_raises_gives_the_tag_back(self):
        test = self

        class Raise(torch.nn.Module):
            def forward(self, x):
                raise ValueError("inside")

        class Parent(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.child = Raise()

            def forward(self, x):
                try:
                    self.child(x)
                except ValueError:
                    test.record("parent")
                return x * 2
        model = torch.nn.Sequential(Parent())
        prof = self.profiler(model)
        try:
            with prof.step():
                model(torch.randn(2, 4))
            self.assertEqual(self.seen, [("parent", "forward/0")])
        finally:
            prof.close()

    def test_no_tag_on_another_thread(self):
        import threading
        model = self.nested()
        prof = self.profiler(model)
        try:
            with prof.step():
                prof.begin_forward()
                t = threading.Thread(target=model[1], args=(torch.randn(2, 4),))
                t.start()
                t.join()
                prof.end_forward()
            self.assertEqual(self.seen, [("c", "")])
        finally:
            prof.close()

    def test_close_puts_the_forwards_back(self):
        model = self.nested()
        inner = model[1]
        before = inner.forward
        prof = self.profiler(model)
        self.assertIn("forward wrapper on 1", prof.leftovers())
        self.assertEqual(inner.forward.__wrapped__, before)
        self.assertEqual(inner.forward.__name__, "forward")      # the forward's attributes
        # Code that wraps a forward after the profiler did keeps its wrapper:
        # close() leaves it, and the profiler's inside it sets no tag then.
        theirs = model[0].forward

        def their_forward(*args, **kwargs):
            return theirs(*args, **kwargs)
        model[0].forward = their_forward
        prof.close()
        self.assertEqual(prof.leftovers(), [])
        self.assertNotIn("forward", vars(inner))
        self.assertIs(model[0].forward, their_forward)
        self.seen.clear()
        model(torch.randn(2, 4))
        self.assertEqual(set(t for _, t in self.seen), {""})

    def test_a_deep_copy_computes_with_its_own_parameters(self):
        import copy
        model = self.nested()
        prof = self.profiler(model)
        try:
            twin = copy.deepcopy(model)
            self.assertEqual(base._forward_wrapped(twin), [])
            with torch.no_grad():
                for p in twin.parameters():
                    p.zero_()
            x = torch.randn(2, 4)
            self.assertEqual(float(twin(x).abs().sum()), 0.0)
            self.assertNotEqual(float(model(x).abs().sum()), 0.0)
        finally:
            prof.close()

    def test_python_hooks_where_the_wrappers_do_not_fit(self):
        for kwargs, model in (({"module_tags": "hooks"}, self.nested()),
                              ({"exact_saved": True}, self.nested()),
                              ({}, torch.nn.DataParallel(self.nested()))):
            prof = self.profiler(model, **kwargs)
            try:
                self.assertEqual(base._forward_wrapped(model), [], kwargs)
                self.assertTrue(any(x.startswith("_forward_pre_hooks") for x in prof.leftovers()), kwargs)
            finally:
                prof.close()
        with self.assertRaisesRegex(ValueError, "module_tags"):
            self.profiler(self.nested(), module_tags="yes")

    def test_an_oom_report_names_the_module_running(self):
        test = self
        reports = []

        class Report(torch.nn.Module):
            def forward(self, x):
                reports.append(test.prof.oom_report())
                return x
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), Report())
        self.prof = self.profiler(model)
        try:
            with self.prof.step():
                model(torch.randn(2, 4))
            self.assertIn("in module 1", reports[0])
        finally:
            self.prof.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)

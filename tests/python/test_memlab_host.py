"""Host tests of the line profiler, the tensor report and the notebook magics
(ccalloc/lineprof.py, ccalloc/tensor_report.py, ccalloc/_notebook.py).

    CCALLOC_TORCH_LIBRARY=BUILD/allocator/libccalloc_torch.so python3 tests/python/test_memlab_host.py

Everything runs on the plugin's simulated device (CCALLOC_TORCH_SIMULATE),
where block sizes are exact, so each figure is checked against a hand
computation: the profiled functions allocate and free simulated blocks
through the plugin, which is what a CUDA tensor's allocation does under
ccalloc. Skipped without the plugin; the tensor report and %%ccalloc_profile
also need torch (Debian's CPU python3-torch: /usr/bin/python3), where CPU
tensors are backed by simulated blocks of their storage's size. The line
profiler runs under every tracing backend this Python has (sys.settrace;
sys.monitoring on 3.12+). The magics run in a fake IPython shell, and in
a real one when IPython is importable.
"""

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.dom.minidom

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if os.environ.get("CCALLOC_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("CCALLOC_TORCH_SIMULATE", str(4 << 30))

import ccalloc.torch as ct  # noqa: E402
from ccalloc import lineprof  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

MiB = 1 << 20
BACKENDS = ["settrace"] + (["monitoring"] if hasattr(sys, "monitoring") else [])

try:
    PLUGIN, WHY = ct.load(), ""
except FileNotFoundError as e:
    PLUGIN, WHY = None, f"plugin not built (set CCALLOC_TORCH_LIBRARY): {e}"

needs_plugin = unittest.skipIf(PLUGIN is None, WHY)
needs_torch = unittest.skipIf(torch is None, "no torch (Debian's python3-torch: /usr/bin/python3)")


def allocated(dev):
    return PLUGIN.raw_stats(dev)["allocated_bytes.all.current"]


# --- functions profiled (line numbers are taken relative to their def) -------------

def work(p, dev, seen):
    a = p.malloc(4 * MiB, dev)
    seen.append(allocated(dev))
    b = p.malloc(2 * MiB, dev); p.free(b, dev)  # noqa: E702
    seen.append(allocated(dev))
    alloc_free(p, dev, 8)
    seen.append(allocated(dev))
    p.free(a, dev)
    seen.append(allocated(dev))


def alloc_free(p, dev, mib):
    t = p.malloc(mib * MiB, dev)
    p.free(t, dev)


def temporary(p, dev):
    p.free(p.malloc(64 * MiB, dev), dev)
    return 0


def leaf(p, dev):
    t = p.malloc(MiB, dev)
    p.free(t, dev)


def mid(p, dev):
    leaf(p, dev)
    leaf(p, dev)


def top(p, dev):
    mid(p, dev)


def boom(p, dev, keep):
    keep.append(p.malloc(MiB, dev))
    p.free(keep.pop(), dev); raise ValueError("boom")  # noqa: E702


def gen(p, dev):
    a = p.malloc(MiB, dev)
    yield a
    p.free(a, dev)


def consume(p, dev):
    for _ in gen(p, dev):
        pass


def rows(prof, fn):
    """{line offset from the def: record} of fn in prof's records."""
    code = lineprof._code_of(fn)
    for f in prof.records():
        if f["function"] == getattr(code, "co_qualname", code.co_name) and f["first_line"] == code.co_firstlineno:
            return {r["line"] - code.co_firstlineno: r for r in f["lines"]}
    return None


@needs_plugin
class LineProfilerTest(unittest.TestCase):
    DEV = 20

    def profile(self, backend, *fns, dev=None, **kwargs):
        return lineprof.LineProfiler(*fns, device=self.DEV if dev is None else dev,
                                     backend=backend, **kwargs)

    def test_per_line_figures_are_the_hand_computed_ones(self):
        for i, backend in enumerate(BACKENDS):
            with self.subTest(backend=backend):
                dev = self.DEV + i
                base = allocated(dev)
                prof = self.profile(backend, work, dev=dev)
                seen = []
                with prof:
                    work(PLUGIN, dev, seen)
                    work(PLUGIN, dev, seen)
                r = rows(prof, work)
                B = base
                # line: (hits, allocated, freed, live after, peak in line, transient), two calls
                want = {1: (2, 8 * MiB, 0, B + 4 * MiB, B + 4 * MiB, 0),
                        3: (2, 4 * MiB, 4 * MiB, B + 4 * MiB, B + 6 * MiB, 2 * MiB),
                        5: (2, 16 * MiB, 16 * MiB, B + 4 * MiB, B + 12 * MiB, 8 * MiB),
                        7: (2, 0, 8 * MiB, B, B + 4 * MiB, 0)}
                for line, (hits, a, f, live, peak, trans) in want.items():
                    got = r[line]
                    self.assertEqual((got["hits"], got["allocated"], got["freed"], got["live_after"],
                                      got["peak"], got["transient"]), (hits, a, f, live, peak, trans),
                                     (line, got["code"]))
                # The lines that read memory_allocated(): live after each line
                # is what the next line saw (the second call's, summed figures).
                self.assertEqual([r[line]["live_after"] for line in (1, 3, 5, 7)], seen[4:])
                self.assertEqual(r[2]["peak"], B + 4 * MiB)
                self.assertNotIn(0, r)                       # the def line has no row
                self.assertEqual(prof.records()[0]["calls"], 2)
                self.assertEqual(prof.max_allocated, B + 12 * MiB)
                self.assertNotIn("alloc_free", [f["function"] for f in prof.records()])

    def test_the_peak_of_a_temporary_freed_inside_its_line(self):
        # Sampling memory_allocated() at line boundaries sees nothing here:
        # the line starts and ends at the same live bytes.
        for i, backend in enumerate(BACKENDS):
            with self.subTest(backend=backend):
                dev = self.DEV + 4 + i
                held = PLUGIN.malloc(3 * MiB, dev)
                try:
                    base = allocated(dev)
                    prof = self.profile(backend, temporary, dev=dev)
                    with prof:
                        temporary(PLUGIN, dev)
                    r = rows(prof, temporary)[1]
                    self.assertEqual((r["allocated"], r["freed"], r["live_after"]),
                                     (64 * MiB, 64 * MiB, base))
                    self.assertEqual(r["peak"], base + 64 * MiB)
                    self.assertEqual(r["transient"], 64 * MiB)
                    self.assertEqual(rows(prof, temporary)[2]["peak"], base)
                finally:
                    PLUGIN.free(held, dev)

    def test_nested_lines_are_traced_on_request_and_to_the_depth_asked(self):
        for backend in BACKENDS:
            for nested, traced in ((False, {"top"}), (1, {"top", "mid"}), (True, {"top", "mid", "leaf"}),
                                   (lambda code: code.co_name == "leaf", {"top", "leaf"})):
                with self.subTest(backend=backend, nested=nested):
                    base = allocated(self.DEV + 6)
                    prof = self.profile(backend, top, dev=self.DEV + 6, nested=nested)
                    with prof:
                        top(PLUGIN, self.DEV + 6)
                    names = {f["function"] for f in prof.records()}
                    self.assertEqual(names, traced)
                    # The calling line includes what its callees did, traced or not.
                    t = rows(prof, top)[1]
                    self.assertEqual((t["allocated"], t["freed"], t["peak"], t["live_after"]),
                                     (2 * MiB, 2 * MiB, base + MiB, base))
                    if "mid" in traced:
                        m = rows(prof, mid)
                        self.assertEqual((m[1]["allocated"], m[2]["allocated"], m[1]["peak"]),
                                         (MiB, MiB, base + MiB))
                    if "leaf" in traced:
                        lf = rows(prof, leaf)
                        self.assertEqual(lf[1]["hits"], 2)
                        self.assertEqual((lf[1]["allocated"], lf[2]["freed"], lf[1]["live_after"]),
                                         (2 * MiB, 2 * MiB, base + MiB))

    def test_generators_and_exceptions_close_their_lines(self):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                dev, keep = self.DEV + 7, []
                base = allocated(dev)
                prof = self.profile(backend, boom, gen, dev=dev)
                with prof:
                    with self.assertRaises(ValueError):
                        boom(PLUGIN, dev, keep)
                    consume(PLUGIN, dev)
                self.assertEqual(prof._stack, [])
                b = rows(prof, boom)
                self.assertEqual((b[1]["allocated"], b[2]["freed"], b[2]["live_after"]), (MiB, MiB, base))
                g = rows(prof, gen)
                self.assertEqual((g[1]["allocated"], g[1]["live_after"], g[2]["hits"]), (MiB, base + MiB, 1))
                self.assertEqual((g[3]["freed"], g[3]["live_after"]), (MiB, base))

    def test_the_backends_agree_and_leave_tracing_as_found(self):
        results = []
        for backend in BACKENDS:
            before = sys.gettrace()
            prof = self.profile(backend, work, alloc_free, dev=self.DEV + 8)
            with prof:
                work(PLUGIN, self.DEV + 8, [])
            self.assertIs(sys.gettrace(), before)
            if hasattr(sys, "monitoring"):
                self.assertIsNone(sys.monitoring.get_tool(sys.monitoring.PROFILER_ID))
            results.append([(f["function"], [(r["line"], r["allocated"], r["freed"], r["peak"])
                                             for r in f["lines"]]) for f in prof.records()])
            self.assertEqual(len(results[-1]), 2)
        self.assertTrue(all(r == results[0] for r in results))

    def test_two_profilers_on_one_device_are_refused(self):
        a = self.profile("settrace", leaf, dev=self.DEV + 9)
        b = self.profile("settrace", mid, dev=self.DEV + 9)
        with a:
            with self.assertRaisesRegex(RuntimeError, "another line profiler"):
                b.enable()
            with a:      # nesting the same one is fine
                leaf(PLUGIN, self.DEV + 9)
        self.assertFalse(a.enabled)
        with b:
            mid(PLUGIN, self.DEV + 9)
        self.assertEqual(rows(b, mid)[1]["allocated"], MiB)

    def test_decorated_functions_share_one_profiler(self):
        dev = self.DEV + 10
        inner = ct.profile_lines(alloc_free, device=dev, at_exit=False)

        def outer(p, d):
            inner(p, d, 2)
            return 1
        outer = ct.profile_lines(outer, device=dev, at_exit=False)
        self.assertIs(inner.line_profiler, outer.line_profiler)
        base = allocated(dev)
        self.assertEqual(outer(PLUGIN, dev), 1)
        prof = outer.line_profiler
        o = rows(prof, outer)[1]
        self.assertEqual((o["allocated"], o["peak"]), (2 * MiB, base + 2 * MiB))
        self.assertEqual(rows(prof, alloc_free)[1]["allocated"], 2 * MiB)
        self.assertFalse(prof.enabled)

    def test_table_json_and_html(self):
        dev = self.DEV + 11
        base = allocated(dev)
        prof = ct.line_profiler(temporary, device=dev)
        prof.run(temporary, PLUGIN, dev)
        text = prof.table()
        self.assertIn("## temporary", text)
        line = next(l for l in text.splitlines() if "p.free(p.malloc(64 * MiB, dev), dev)" in l)
        self.assertIn("64.0 MiB", line)
        self.assertIn("return 0", text)
        self.assertIn("def temporary(p, dev):", text)
        data = json.loads(prof.json())
        self.assertEqual(data["functions"][0]["lines"][0]["peak"], base + 64 * MiB)
        self.assertEqual(data["counters"], "ccalloc")
        doc = xml.dom.minidom.parseString("<root>" + prof.html() + "</root>")
        self.assertGreaterEqual(len(doc.getElementsByTagName("tr")), 4)
        self.assertIn("linear-gradient", prof.html())


@needs_plugin
@needs_torch
class TensorReportTest(unittest.TestCase):
    DEV = 40

    def setUp(self):
        from ccalloc import tensor_report as tr
        self.tr = tr
        self.view = _SimBlocks(PLUGIN, self.DEV, tr)
        self.base = allocated(self.DEV)
        self.assertEqual(self.base, 0, "the report's device must start empty")

    def tearDown(self):
        for ptr in self.view.sim.values():
            PLUGIN.free(ptr, self.DEV)
        for ptr in getattr(self, "loose", []):
            PLUGIN.free(ptr, self.DEV)

    def model_and_adam(self):
        torch.manual_seed(0)
        emb = torch.nn.Embedding(16, 8)
        model = torch.nn.Sequential(emb, torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8),
                                    torch.nn.Linear(8, 16))
        model[3].weight = emb.weight                 # tied: one storage, two names
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        model(torch.randint(0, 16, (4,))).sum().backward()
        opt.step()
        return model, opt

    def test_parameters_gradients_and_state_are_named_and_totals_match(self):
        model, opt = self.model_and_adam()
        tensors = [t for _, t in model.named_parameters()] + [b for _, b in model.named_buffers()]
        tensors += [p.grad for p in model.parameters()]
        tensors += [v for st in opt.state.values() for v in st.values()]
        for t in tensors:
            self.view.back(t)
        batch = torch.randn(64, 8)
        self.view.back(batch)
        view_of_weight = model[1].weight.t()         # shares the parameter's storage
        self.loose = []
        for tag, size in (("optimizer", 3 * MiB), ("optimizer", MiB), ("forward/2", 2 * MiB)):
            prev = PLUGIN.set_tag(PLUGIN.tag_intern(tag))
            self.loose.append(PLUGIN.malloc(size, self.DEV))
            PLUGIN.set_tag(prev)
        adam = os.path.join(os.path.dirname(torch.__file__), "optim", "adam.py")
        self.view.frame_at[self.loose[0]] = [{"filename": adam, "line": 9,
                                              "name": "_single_tensor_adam"},
                                             {"filename": "/home/u/train.py", "line": 42, "name": "step"}]
        rep = ct.report_tensors(model, opt, view=self.view, extra={"batch": batch})
        names = rep.names()
        for name, p in model.named_parameters():
            self.assertIn(name, names)
            self.assertIn(f"{name}.grad", names)
            for key in ("exp_avg", "exp_avg_sq", "step"):
                self.assertIn(f"optimizer[{name}].{key}", names)
        for name in ("2.running_mean", "2.running_var", "2.num_batches_tracked", "batch"):
            self.assertIn(name, names)
        # Tied weight: one block, the second name points at the first.
        tied = names["3.weight"]
        self.assertIs(tied, names["0.weight"])
        self.assertEqual([t.get("shares") for t in tied["tensors"]], [None, "0.weight"])
        self.assertEqual(names["1.weight.grad"]["kind"], "gradient")
        self.assertEqual(names["optimizer[1.bias].exp_avg"]["kind"], "optimizer_state")
        self.assertNotIn("tensor#0", names)           # the view of 1.weight is not a tensor of its own
        del view_of_weight
        # Every block once; they add up to what the allocator counts.
        self.assertEqual(rep.total, allocated(self.DEV))
        self.assertTrue(rep.matches)
        self.assertEqual(len(rep.entries), len(self.view.sim) + 3)
        kinds = rep.by_kind()
        self.assertEqual(kinds["unnamed"], 6 * MiB)
        self.assertEqual(sum(kinds.values()), rep.total)
        groups = {(t, f): (n, s) for t, f, n, s in rep.groups()}
        self.assertEqual(groups[("optimizer", "train.py:42 in step")], (1, 3 * MiB))
        self.assertEqual(groups[("optimizer", "")], (1, MiB))
        self.assertEqual(groups[("forward/2", "")], (1, 2 * MiB))
        text = str(rep)
        self.assertIn("3.weight (-> 0.weight)", text)
        self.assertIn("optimizer[0.weight].exp_avg_sq", text)
        self.assertIn("= memory_allocated()", text)
        self.assertIn("tag optimizer  train.py:42 in step", text)
        data = json.loads(rep.json())
        self.assertEqual(data["total"], data["allocated"])
        xml.dom.minidom.parseString("<root>" + rep.html() + "</root>")

    def test_python_tensors_fill_in_unnamed_blocks(self):
        model, opt = self.model_and_adam()
        for t in list(model.parameters()):
            self.view.back(t)
        held = torch.zeros(128, 4, dtype=torch.float64)
        self.view.back(held)
        rep = ct.report_tensors(model, view=self.view)
        py = [t for b in rep.entries for t in b["tensors"] if t["name"].startswith("tensor#")]
        self.assertEqual([(t["shape"], t["dtype"], t["nbytes"]) for t in py], [([128, 4], "float64", 4096)])
        self.assertTrue(rep.matches)
        rep = ct.report_tensors(model, view=self.view, python_tensors=False)
        self.assertEqual(rep.by_kind()["unnamed"], 4096)

    def test_allocating_frame_skips_library_frames(self):
        f = self.tr.allocating_frame
        self.assertIsNone(f([]))
        self.assertIsNone(f([{"filename": "??", "line": 0, "name": "cudaMalloc"}]))
        torch_dir = os.path.dirname(torch.__file__)
        frames = [{"filename": "ccalloc tag", "line": 0, "name": "forward"},
                  {"filename": os.path.join(torch_dir, "nn", "functional.py"), "line": 5, "name": "linear"},
                  {"filename": "/work/model.py", "line": 17, "name": "forward"}]
        self.assertEqual(f(frames), "model.py:17 in forward")
        self.assertEqual(f(frames[:2]), "functional.py:5 in linear")


class _SimBlocks:
    """The report's view of the simulated device, for CPU tensors: a
    tensor's storage, once back()ed, is a simulated block of its size."""

    def __new__(cls, plugin, dev, tr):
        class View(tr._CcallocBlocks):
            def __init__(self):
                super().__init__(plugin, dev)
                self.sim, self.frame_at = {}, {}

            def holds(self, t):
                return t.device.type == "cpu"

            def back(self, t):
                ptr = tr._storage_ptr(t)
                if ptr not in self.sim:
                    st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
                    self.sim[ptr] = plugin.malloc(max(st.nbytes(), 1), dev)

            def locate(self, ptrs, starts, ends):
                return super().locate([self.sim.get(p, 0) for p in ptrs], starts, ends)

            def frames(self, torch, wanted):
                return {a: f for a, f in self.frame_at.items() if a in wanted}
        return View()


class FakeShell:
    """What the magics use of IPython's InteractiveShell."""

    def __init__(self):
        self.user_ns = {}
        self.magics = {}

    def register_magic_function(self, func, magic_kind="line", magic_name=None):
        self.magics[(magic_kind, magic_name or func.__name__)] = func


@needs_plugin
class NotebookTest(unittest.TestCase):
    DEV = 50

    def setUp(self):
        from ccalloc import _notebook
        self.nb = _notebook
        self.shown = []
        _notebook.DISPLAY = self.shown.append
        self.ip = FakeShell()
        ct.load_ipython_extension(self.ip)
        self.ip.user_ns.update(p=PLUGIN, dev=self.DEV, MiB=MiB, temporary=temporary)

    def tearDown(self):
        self.nb.DISPLAY = None

    def test_extension_registers_the_magics(self):
        self.assertEqual(set(self.ip.magics), {("line_cell", "ccalloc_lines"), ("cell", "ccalloc_profile")})

    def test_line_magic_profiles_a_function_or_the_statement(self):
        lines = self.ip.magics[("line_cell", "ccalloc_lines")]
        base = allocated(self.DEV)
        prof = lines(f"-f temporary -d {self.DEV} -r temporary(p, dev)")
        self.assertEqual(rows(prof, temporary)[1]["peak"], base + 64 * MiB)
        self.assertEqual(len(self.shown), 1)
        self.assertIn("## temporary", str(self.shown[0]))
        # No -f: the statement's own line.
        prof = lines(f"-d {self.DEV} -r x = p.malloc(2 * MiB, dev); p.free(x, dev)")
        (f,) = prof.records()
        self.assertEqual((f["lines"][0]["allocated"], f["lines"][0]["peak"]), (2 * MiB, base + 2 * MiB))
        self.assertIn("x = p.malloc(2 * MiB, dev)", f["lines"][0]["code"])

    def test_cell_magic_profiles_each_line_of_the_cell(self):
        lines = self.ip.magics[("line_cell", "ccalloc_lines")]
        base = allocated(self.DEV)
        cell = "a = p.malloc(4 * MiB, dev)\ntemporary(p, dev)\np.free(a, dev)\n"
        prof = lines(f"-d {self.DEV} -n -r", cell)
        by = {f["function"]: f for f in prof.records()}
        cell_rows = {r["line"]: r for r in by["<module>"]["lines"]}
        self.assertEqual((cell_rows[1]["allocated"], cell_rows[1]["live_after"]), (4 * MiB, base + 4 * MiB))
        self.assertEqual(cell_rows[2]["peak"], base + 68 * MiB)
        self.assertEqual(cell_rows[3]["live_after"], base)
        self.assertIn("temporary", by)           # -n: the callee's lines too
        self.assertIn("p.free(a, dev)", str(self.shown[-1]))

    def test_options_are_parsed_before_the_statement(self):
        split = self.nb.split_options
        opts, rest = split("-f a.b -f 'c d' -n 2 -t -- -x + 1")
        self.assertEqual(opts, {"-f": ["a.b", "c d"], "-n": [2], "-t": [True]})
        self.assertEqual(rest, "-x + 1")
        self.assertEqual(split("--nested y = f(x, 'a b')"), ({"-n": [True]}, "y = f(x, 'a b')"))
        with self.assertRaises(self.nb._usage_error()):
            split("-q x")
        with self.assertRaises(self.nb._usage_error()):
            self.ip.magics[("line_cell", "ccalloc_lines")]("-d 50")

    @needs_torch
    def test_profile_magic_reports_the_cell_and_shows_the_svg(self):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from test_profiler_host import FakeView, _SizeOf
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        view = FakeView()
        view.known_sizes = _SizeOf()
        self.ip.user_ns.update(torch=torch, model=model, opt=opt, view=view)
        cell = ("loss = model(torch.randn(32, 8)).square().mean()\nloss.backward()\n"
                "opt.step()\nopt.zero_grad(set_to_none=True)\n")
        prof = self.ip.magics[("cell", "ccalloc_profile")]("model opt -n 5 -o 'dict(view=view)' -r", cell)
        self.assertEqual(prof.step_index, 5)
        # Each of the cell's steps is in the report (no sampling in a notebook).
        self.assertEqual(sorted({s["step"] for s in prof.samples}), [1, 2, 3, 4, 5])
        self.assertEqual(prof.leftovers(), [])
        self.assertIn("optimizer state appeared", str(self.shown[0]))
        svg = self.shown[1]
        xml.dom.minidom.parseString(svg._repr_svg_())
        self.assertIn("SVG", repr(svg))


@needs_plugin
class RealIPythonTest(unittest.TestCase):
    def test_load_ext_and_cell_magic_in_ipython(self):
        try:
            from IPython.core.interactiveshell import InteractiveShell
        except ImportError:
            self.skipTest("IPython not installed")
        ip = InteractiveShell.instance()
        ip.run_line_magic("load_ext", "ccalloc.torch")
        ip.user_ns.update(p=PLUGIN, dev=60, MiB=MiB)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            ip.run_cell("%%ccalloc_lines -d 60 -t\nq = p.malloc(8 * MiB, dev)\np.free(q, dev)\n")
        text = out.getvalue()
        self.assertIn("q = p.malloc(8 * MiB, dev)", text)
        self.assertIn("8.0 MiB", text)


PROBE = os.path.join(ROOT, "bench", "probes", "memlab_side_by_side.py")
FETCH = os.path.join(ROOT, "scripts", "fetch_memlab.sh")


class MemlabSideBySideCliTest(unittest.TestCase):
    """No plugin, torch or memlab needed: the probe parses its arguments
    before importing any of them."""

    def probe(self, *args):
        return subprocess.run([sys.executable, PROBE, *args], capture_output=True, text=True,
                              timeout=60)

    def test_help(self):
        r = self.probe("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--memlab DIR", r.stdout)
        self.assertIn("--out DIR", r.stdout)

    def test_refuses_without_memlab_folder(self):
        r = self.probe("--out", "x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--memlab DIR is required", r.stderr)
        self.assertIn("scripts/fetch_memlab.sh", r.stderr)
        with tempfile.TemporaryDirectory() as empty:
            r = self.probe("--memlab", empty)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no pytorch_memlab/__init__.py there", r.stderr)


@unittest.skipIf(shutil.which("git") is None or shutil.which("bash") is None, "no git or bash")
class FetchMemlabTest(unittest.TestCase):
    def git(self, repo, *args):
        subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t",
                        "-c", "commit.gpgsign=false", *args], check=True, capture_output=True)

    def make_repo(self, root, package):
        repo = os.path.join(root, package + "_repo")
        os.makedirs(os.path.join(repo, package, "sub"))
        for rel, text in ((f"{package}/__init__.py", "X = 1\n"), (f"{package}/sub/m.py", ""),
                          ("LICENSE", "MIT\n"), ("setup.py", ""), ("test/t.py", "")):
            os.makedirs(os.path.dirname(os.path.join(repo, rel)), exist_ok=True)
            with open(os.path.join(repo, rel), "w") as f:
                f.write(text)
        self.git(repo, "init", "-q")
        self.git(repo, "add", "-A")
        self.git(repo, "commit", "-q", "-m", "c")
        return repo

    def test_extracts_only_the_packages(self):
        with tempfile.TemporaryDirectory() as d:
            memlab = self.make_repo(d, "pytorch_memlab")
            calm = self.make_repo(d, "calmsize")
            dest = os.path.join(d, "out", "memlab")
            r = subprocess.run(["bash", FETCH, memlab, dest, os.path.join(calm, ".git")],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            got = sorted(os.path.relpath(os.path.join(p, f), dest)
                         for p, _, fs in os.walk(dest) for f in fs)
            self.assertEqual(got, ["SOURCE.txt", "calmsize/LICENSE", "calmsize/__init__.py",
                                   "calmsize/sub/m.py", "pytorch_memlab/LICENSE",
                                   "pytorch_memlab/__init__.py", "pytorch_memlab/sub/m.py"])
            with open(os.path.join(dest, "SOURCE.txt")) as f:
                self.assertEqual([l.split()[0] for l in f], ["pytorch_memlab", "calmsize"])

    def test_refuses_a_repo_without_the_package(self):
        with tempfile.TemporaryDirectory() as d:
            other = self.make_repo(d, "calmsize")
            r = subprocess.run(["bash", FETCH, other, os.path.join(d, "dest")],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 1)
            self.assertIn("no pytorch_memlab/__init__.py", r.stderr)
            r = subprocess.run(["bash", FETCH, other], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 2)
            self.assertIn("MEMLAB_GIT_DIR DEST", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)

"""Host tests of the headless notebook runner (ccalloc/notebook_run.py) and of
the example notebook of the magics (docs/examples/line_profiler_magics.ipynb).

    CCALLOC_TORCH_LIBRARY=BUILD/allocator/libccalloc_torch.so python3 tests/python/test_notebook_host.py

Three parts, each running `python3 -m ccalloc.notebook_run` as a user would,
in a child process (the in-process engine's shell is a singleton, and the
magics keep state per process):
- the runner on a notebook of plain cells (print, stderr, IPython.display's
  SVG and HTML, an expression, a failing cell): needs IPython only;
- the magics of ccalloc/_notebook.py in a notebook on the plugin's simulated
  device (CCALLOC_TORCH_SIMULATE), allocating through the plugin itself as
  tests/python/test_memlab_host.py does: needs IPython and the plugin, no
  torch, and checks the line tables' figures;
- the example notebook: on a CUDA GPU as it is, or with a CPU torch on the
  simulated device with its setup cell (tagged "setup") swapped for one
  that loads the plugin instead of enabling it and puts the model on the CPU,
  and %%ccalloc_profile given test_profiler_host.py's FakeView (CPU tensors
  do not pass through the plugin: there the tables' rows are there, their
  figures are 0 B). Skipped without torch.
The runner's engine is "ipython" throughout, so that what is tested is the
same wherever nbclient happens to be installed.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.dom.minidom

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
# The children import ccalloc from the checkout, or as installed.
PYTHON_DIR = None if os.environ.get("CCALLOC_TEST_INSTALLED") == "1" else os.path.join(ROOT, "python")
EXAMPLE = os.path.join(ROOT, "docs", "examples", "line_profiler_magics.ipynb")

try:
    import IPython  # noqa: F401
    NO_IPYTHON = ""
except ImportError:
    NO_IPYTHON = "IPython not installed (Debian's python3-ipython)"

try:
    import torch
except ImportError:
    torch = None

needs_ipython = unittest.skipIf(NO_IPYTHON, NO_IPYTHON)
needs_torch = unittest.skipIf(torch is None, "no torch (Debian's python3-torch: /usr/bin/python3)")

LIBRARY = os.environ.get("CCALLOC_TORCH_LIBRARY", "")
needs_plugin = unittest.skipUnless(
    LIBRARY and os.path.exists(LIBRARY), f"plugin not built (set CCALLOC_TORCH_LIBRARY): {LIBRARY!r}")


def code(source, **metadata):
    return {"cell_type": "code", "execution_count": None, "metadata": metadata, "outputs": [],
            "source": source}


def notebook(*cells):
    for i, c in enumerate(cells):
        c.setdefault("id", f"cell-{i}")
    return {"nbformat": 4, "nbformat_minor": 5, "cells": list(cells),
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}}}


def text(value):
    return "".join(value) if isinstance(value, list) else value


def outputs(nb):
    """[(cell index among the code cells, output)] of the executed notebook."""
    code_cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    return [(i, o) for i, c in enumerate(code_cells) for o in c["outputs"]]


class _Runs(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def run_notebook(self, nb, *args, env=None, timeout=300):
        """(exit status, stderr, the executed notebook) of notebook_run on nb."""
        path, out = os.path.join(self.tmp, "in.ipynb"), os.path.join(self.tmp, "out.ipynb")
        with open(path, "w") as f:
            json.dump(nb, f)
        child = dict(os.environ if env is None else env)
        child["PYTHONPATH"] = os.pathsep.join(p for p in (PYTHON_DIR, child.get("PYTHONPATH")) if p)
        child["IPYTHONDIR"] = os.path.join(self.tmp, "ipython")   # not the user's ~/.ipython
        r = subprocess.run([sys.executable, "-m", "ccalloc.notebook_run", path, out,
                            "--engine", "ipython", *args],
                           env=child, capture_output=True, text=True, timeout=timeout)
        executed = None
        if os.path.exists(out):
            with open(out) as f:
                executed = json.load(f)
        return r.returncode, r.stderr, executed


SMALL_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>'


@needs_ipython
class RunnerTest(_Runs):
    """The runner itself: what a Jupyter kernel would record for each kind of
    output, and a failed cell."""

    def plain(self):
        return notebook(
            {"cell_type": "markdown", "metadata": {}, "source": ["# not run\n", "kept as it is"]},
            code("print('one')\nimport sys\nprint('to stderr', file=sys.stderr)\nprint('two')"),
            code(["from IPython.display import SVG, HTML, display\n",
                  f"display(SVG({SMALL_SVG!r}))\n",
                  "display(HTML('<b>bold</b>'))\n"]),
            code("6 * 7"),
            code("6 * 7;"),
            code("class Table:\n    def _repr_html_(self):\n        return '<table><tr><td>1</td></tr></table>'\n"
                 "    def __repr__(self):\n        return 'Table(1)'\nTable()"),
            code("def boom():\n    raise ValueError('the cell failed')\nboom()"),
            code("print('after the failure')"))

    def test_outputs_of_each_kind(self):
        rc, err, nb = self.run_notebook(self.plain())
        self.assertEqual(rc, 1, err)   # the failing cell
        self.assertIn("ValueError: the cell failed", err)
        self.assertEqual(nb["nbformat"], 4)
        self.assertEqual(text(nb["cells"][0]["source"]), "# not run\nkept as it is")
        self.assertNotIn("outputs", nb["cells"][0])
        out = outputs(nb)
        by_cell = {}
        for i, o in out:
            by_cell.setdefault(i, []).append(o)
        # print and stderr: one stream output per run of the same stream.
        self.assertEqual([(o["output_type"], o["name"], o["text"]) for o in by_cell[0]],
                         [("stream", "stdout", "one\n"), ("stream", "stderr", "to stderr\n"),
                          ("stream", "stdout", "two\n")])
        svg, html = by_cell[1]
        self.assertEqual(svg["output_type"], "display_data")
        self.assertEqual(svg["data"]["image/svg+xml"], SMALL_SVG)
        self.assertIn("text/plain", svg["data"])
        xml.dom.minidom.parseString(svg["data"]["image/svg+xml"])
        self.assertEqual(html["data"]["text/html"], "<b>bold</b>")
        (result,) = by_cell[2]
        self.assertEqual((result["output_type"], result["data"], result["execution_count"]),
                         ("execute_result", {"text/plain": "42"}, 3))
        self.assertNotIn(3, by_cell)               # a trailing ";" shows nothing
        (table,) = by_cell[4]
        self.assertEqual(table["data"], {"text/plain": "Table(1)",
                                         "text/html": "<table><tr><td>1</td></tr></table>"})
        (error,) = by_cell[5]
        self.assertEqual((error["output_type"], error["ename"], error["evalue"]),
                         ("error", "ValueError", "the cell failed"))
        self.assertIn("boom()", "\n".join(error["traceback"]))
        # Like nbconvert, the run stops at the failed cell.
        code_cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
        self.assertEqual([c["execution_count"] for c in code_cells], [1, 2, 3, 4, 5, 6, None])
        self.assertEqual(code_cells[-1]["outputs"], [])

    def test_allow_errors_runs_the_rest_and_still_fails(self):
        rc, err, nb = self.run_notebook(self.plain(), "--allow-errors")
        self.assertEqual(rc, 1, err)
        last = [c for c in nb["cells"] if c["cell_type"] == "code"][-1]
        self.assertEqual(last["outputs"], [{"output_type": "stream", "name": "stdout",
                                            "text": "after the failure\n"}])

    def test_a_clean_run_exits_zero_and_replaces_old_outputs(self):
        cell = code("print('fresh')")
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "stale\n"}]
        expected = code("1 / 0", tags=["raises-exception"])   # Jupyter's tag: meant to fail
        rc, err, nb = self.run_notebook(notebook(cell, expected, code("%load_ext ccalloc.torch")))
        self.assertEqual(rc, 0, err)
        self.assertEqual(nb["cells"][0]["outputs"],
                         [{"output_type": "stream", "name": "stdout", "text": "fresh\n"}])
        self.assertEqual(nb["cells"][1]["outputs"][0]["ename"], "ZeroDivisionError")
        self.assertEqual(nb["cells"][2]["execution_count"], 3)
        self.assertIn("3 code cells run", err)

    def test_usage_errors_and_timeouts_are_errors(self):
        rc, err, nb = self.run_notebook(
            notebook(code("%ccalloc_no_such_magic"), code("import time\ntime.sleep(30)")),
            "--allow-errors", "--timeout", "1", timeout=60)
        self.assertEqual(rc, 1, err)
        first, second = ([o for o in c["outputs"] if o["output_type"] == "error"] for c in nb["cells"])
        self.assertEqual(first[0]["ename"], "UsageError")
        self.assertEqual(second[0]["ename"], "TimeoutError")

    def test_refuses_what_is_not_nbformat_4(self):
        rc, err, nb = self.run_notebook({"nbformat": 3, "worksheets": []})
        self.assertEqual(rc, 2)
        self.assertIn("not an nbformat 4 notebook", err)
        self.assertIsNone(nb)


def _simulated_env():
    env = dict(os.environ)
    env["CCALLOC_TORCH_SIMULATE"] = str(4 << 30)
    return env


@needs_ipython
@needs_plugin
class SimulatedMagicsTest(_Runs):
    """%ccalloc_lines and %%ccalloc_lines in a notebook on the simulated
    device, allocating through the plugin (ccalloc.Plugin.malloc): exact
    figures without torch."""

    def test_line_tables_of_a_statement_and_a_cell(self):
        nb = notebook(
            code("%load_ext ccalloc.torch\nimport ccalloc.torch\np = ccalloc.torch.load()\n"
                 "MiB, dev = 1 << 20, 0\n"
                 "def temporary():\n    t = p.malloc(64 * MiB, dev)\n    p.free(t, dev)\n"),
            code("%ccalloc_lines x = p.malloc(2 * MiB, dev); p.free(x, dev)"),
            code("%%ccalloc_lines -n\na = p.malloc(4 * MiB, dev)\ntemporary()\np.free(a, dev)\n"))
        rc, err, nb = self.run_notebook(nb, env=_simulated_env())
        self.assertEqual(rc, 0, err)
        out = outputs(nb)
        self.assertEqual([i for i, _ in out], [1, 2], out)
        line, cell = (o for _, o in out)
        for o in (line, cell):
            self.assertEqual(o["output_type"], "display_data")
            self.assertIn("<table", o["data"]["text/html"])
            self.assertIn("peak in line", o["data"]["text/html"])
        table = line["data"]["text/plain"]
        self.assertIn("ccalloc line profile (device 0, ccalloc counters)", table)
        self.assertRegex(table, r"line +hits +allocated +freed +live after +peak in line +transient +code")
        # The statement's row: 2 MiB allocated and freed within it.
        self.assertRegex(table, r"\n +1 +1 +2\.0 MiB +2\.0 MiB +0 B +2\.0 MiB +2\.0 MiB  "
                                r"x = p\.malloc\(2 \* MiB, dev\); p\.free\(x, dev\)")
        rows = cell["data"]["text/plain"]
        self.assertRegex(rows, r"\n +2 +1 +64\.0 MiB +64\.0 MiB +4\.0 MiB +68\.0 MiB +64\.0 MiB  temporary\(\)")
        self.assertIn("## temporary", rows)          # -n: the callee's own lines
        self.assertIn("t = p.malloc(64 * MiB, dev)", rows)


def _profile_checks(test, nb, kinds_add_up):
    """What the executed example notebook must hold, wherever it ran
    (kinds_add_up: the report's own check passed, as it must on the GPU;
    test_profiler_host.py's FakeView does not promise it)."""
    out = outputs(nb)
    shown = [(i, o) for i, o in out if o["output_type"] == "display_data"]
    plain = [o["data"].get("text/plain", "") for _, o in shown]
    line_table = next(t for t in plain if "gram = (x @ x.T).relu().sum()" in t)
    test.assertRegex(line_table, r"line +hits +allocated +freed +live after +peak in line")
    cell_table = next(t for t in plain if "y = model[2](model[1](h))" in t)
    test.assertIn("del h, y", cell_table)
    report = next(t for t in plain if "check: kinds add up" in t or "check FAILED" in t)
    if kinds_add_up:
        test.assertNotIn("check FAILED", report)
    for word in ("step ", "forward", "backward", "optimizer", "params", "grads"):
        test.assertIn(word, report)
    svgs = [o["data"]["image/svg+xml"] for _, o in shown if "image/svg+xml" in o["data"]]
    test.assertEqual(len(svgs), 1)
    test.assertIn("<svg", svgs[0])
    xml.dom.minidom.parseString(svgs[0])


def _example():
    with open(EXAMPLE) as f:
        return json.load(f)


class ExampleNotebookTest(_Runs):
    def test_is_committed_without_outputs(self):
        nb = _example()
        self.assertEqual(nb["nbformat"], 4)
        sources = [text(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
        for c in nb["cells"]:
            if c["cell_type"] == "code":
                self.assertEqual((c["outputs"], c["execution_count"]), ([], None))
        joined = "\n".join(sources)
        for magic in ("%load_ext ccalloc.torch", "\n%ccalloc_lines ", "%%ccalloc_lines\n",
                      "%%ccalloc_profile model optimizer -n 2\n"):
            self.assertIn(magic, "\n" + joined)
        self.assertEqual(sum("setup" in c["metadata"].get("tags", []) for c in nb["cells"]), 1)

    @needs_ipython
    @needs_plugin
    @needs_torch
    def test_runs_on_the_simulated_device(self):
        nb = _example()
        for c in nb["cells"]:
            if "setup" in c["metadata"].get("tags", []):
                c["source"] = (
                    "%load_ext ccalloc.torch\nimport sys\nimport torch\nimport ccalloc.torch\n"
                    "ccalloc.torch.load()   # the simulated device: no enable()\n"
                    "device = 'cpu'\n"
                    f"sys.path.insert(0, {HERE!r})\n"
                    "from test_profiler_host import FakeView, _SizeOf\n"
                    "view = FakeView()\nview.known_sizes = _SizeOf()\n")
            elif text(c["source"]).startswith("%%ccalloc_profile"):
                first, rest = text(c["source"]).split("\n", 1)
                c["source"] = first + " -o 'dict(view=view)'\n" + rest
        rc, err, executed = self.run_notebook(nb, env=_simulated_env())
        self.assertEqual(rc, 0, err)
        _profile_checks(self, executed, kinds_add_up=False)

    @needs_ipython
    @needs_plugin
    @unittest.skipUnless(torch is not None and torch.cuda.is_available(), "no CUDA GPU")
    def test_runs_on_the_gpu_as_committed(self):
        env = dict(os.environ)
        env.pop("CCALLOC_TORCH_SIMULATE", None)
        rc, err, executed = self.run_notebook(_example(), env=env, timeout=600)
        self.assertEqual(rc, 0, err)
        _profile_checks(self, executed, kinds_add_up=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)

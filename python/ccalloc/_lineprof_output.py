"""The line profiler's output: its figures as data, a text table, JSON, HTML.

ccalloc.lineprof.LineProfiler gathers per (code object, line) records at
line boundaries; this module turns them into records() (plain dicts, what
the JSON holds) and LineReport, whose str() is the table (each function's
source with its figures beside the lines that ran) and whose _repr_html_
is the same as an HTML table for notebooks. Pure Python: no torch.
"""

import html as _html
import inspect
import json
import linecache
import os

from .memreport import fmt_bytes

ENTRY = 0   # ccalloc.lineprof.ENTRY: a frame's entry segment, not a line

COLUMNS = (("hits", "hits"), ("allocated", "allocated"), ("freed", "freed"),
           ("live_after", "live after"), ("peak", "peak in line"), ("transient", "transient"))
_BYTES = ("allocated", "freed", "live_after", "peak", "transient")


def _name(code):
    return getattr(code, "co_qualname", None) or code.co_name


def _source(code, executed):
    """{line: text} of the function's source (its whole block where inspect
    finds it, else the lines from its first to the last that ran), or {}."""
    first = code.co_firstlineno
    try:
        if code.co_name == "<module>":
            raise OSError("module code: no block")
        lines, first = inspect.getsourcelines(code)
        out = {first + i: t.rstrip("\r\n") for i, t in enumerate(lines)}
    except (OSError, TypeError, IndexError):
        out = {}
    last = max(executed, default=first)
    if executed:
        first = min(first, min(executed))
    if not out or last > max(out):
        lines = linecache.getlines(code.co_filename)
        for n in range(first, last + 1):
            if 0 < n <= len(lines):
                out.setdefault(n, lines[n - 1].rstrip("\r\n"))
    return out


def _by_code(prof):
    by = {}
    for (code, line), r in prof._stats.items():
        if line != ENTRY:
            by.setdefault(code, {})[line] = r
    return by


def records(prof):
    """See LineProfiler.records()."""
    out = []
    by = _by_code(prof)
    for code in prof._order:
        lines = by.get(code, {})
        calls = prof._calls.get(code, 0)
        if not lines and not calls:
            continue
        source = _source(code, lines)
        rows = []
        for n in sorted(lines):
            r = lines[n]
            rows.append({"line": n, "code": source.get(n, ""), "hits": r[0], "allocated": r[1],
                         "freed": r[2], "live_after": r[3], "live_after_max": r[6],
                         "peak": r[4], "transient": r[5]})
        out.append({"function": _name(code), "file": code.co_filename,
                    "first_line": code.co_firstlineno, "calls": calls,
                    "target": code in prof._targets, "lines": rows})
    return out


class LineReport:
    """A LineProfiler's figures as of its making: str() is the table,
    _repr_html_() the HTML (Jupyter shows it), json() the JSON, data the
    records."""

    def __init__(self, prof, functions=None):
        self.data = records(prof)
        if functions is not None:
            names = {f if isinstance(f, str) else _name(_code(f)) for f in functions}
            self.data = [f for f in self.data if f["function"] in names]
        self.by_code = _by_code(prof)
        self._codes = {(_name(c), c.co_filename, c.co_firstlineno): c for c in prof._order}
        view = prof.view
        self.meta = {"device": getattr(view, "device", None),
                     "counters": getattr(view, "kind", None),
                     "max_allocated": prof.max_allocated}

    def _full_source(self, f):
        code = self._codes.get((f["function"], f["file"], f["first_line"]))
        executed = {r["line"] for r in f["lines"]}
        return _source(code, executed) if code is not None else {r["line"]: r["code"] for r in f["lines"]}

    def _rows(self, f):
        """(line, {column: value or None}, code text) for every source line."""
        source = self._full_source(f)
        ran = {r["line"]: r for r in f["lines"]}
        for n in sorted(set(source) | set(ran)):
            yield n, ran.get(n), source.get(n, ran.get(n, {}).get("code", ""))

    def __str__(self):
        if not self.data:
            return "ccalloc line profile: no profiled function ran"
        head = (f"ccalloc line profile (device {self.meta['device']}, "
                f"{self.meta['counters']} counters): peak of the profiled lines "
                f"{fmt_bytes(self.meta['max_allocated'])}")
        parts = [head, ""]
        widths = [6] + [max(11, len(title)) for _, title in COLUMNS]
        widths[1] = 6
        for f in self.data:
            calls = f["calls"]
            parts.append(f"## {f['function']}  ({os.path.basename(f['file'])}:{f['first_line']}, "
                         f"{calls} call{'s' if calls != 1 else ''})")
            titles = ["line"] + [title for _, title in COLUMNS]
            parts.append("  ".join(t.rjust(w) for t, w in zip(titles, widths)) + "  code")
            for n, r, text in self._rows(f):
                cells = [str(n)]
                for key, _ in COLUMNS:
                    if r is None:
                        cells.append("")
                    elif key in _BYTES:
                        cells.append(fmt_bytes(r[key]))
                    else:
                        cells.append(str(r[key]))
                parts.append("  ".join(c.rjust(w) for c, w in zip(cells, widths)) + "  " + text)
            parts.append("")
        parts.append("allocated/freed: summed over the line's executions; live after: "
                     "memory_allocated() when it last ended; peak in line: the highest "
                     "memory_allocated() during it; transient: peak less the larger of live "
                     "before and after (its temporaries). A line includes the calls it makes.")
        return "\n".join(parts)

    __repr__ = __str__

    def json(self):
        return json.dumps({"profiler": "ccalloc line profiler", **self.meta,
                           "functions": self.data}, indent=1)

    def html(self):
        if not self.data:
            return "<p>ccalloc line profile: no profiled function ran</p>"
        top = max([r["peak"] for f in self.data for r in f["lines"]] + [1])
        out = ['<div class="ccalloc-line-profile">',
               f"<p>ccalloc line profile (device {self.meta['device']}, "
               f"{_html.escape(str(self.meta['counters']))} counters): peak of the profiled "
               f"lines {fmt_bytes(self.meta['max_allocated'])}</p>"]
        for f in self.data:
            out.append(f"<h4 style=\"font-family:monospace\">{_html.escape(f['function'])} "
                       f"<small>{_html.escape(os.path.basename(f['file']))}:{f['first_line']}, "
                       f"{f['calls']} calls</small></h4>")
            out.append('<table style="border-collapse:collapse;font-size:12px">')
            out.append("<tr>" + "".join(f'<th style="text-align:right;padding:0 6px">{t}</th>'
                                        for t in ["line"] + [t for _, t in COLUMNS])
                       + '<th style="text-align:left">code</th></tr>')
            for n, r, text in self._rows(f):
                cells = [f'<td style="text-align:right;padding:0 6px;color:#888">{n}</td>']
                for key, _ in COLUMNS:
                    style = "text-align:right;padding:0 6px"
                    if r is None:
                        value = ""
                    elif key in _BYTES:
                        value = fmt_bytes(r[key])
                        if key == "peak":
                            pct = 100.0 * r[key] / top
                            style += (f";background:linear-gradient(90deg,#f28e2b66 {pct:.1f}%,"
                                      f"transparent {pct:.1f}%)")
                    else:
                        value = str(r[key])
                    cells.append(f'<td style="{style}">{value}</td>')
                cells.append('<td style="text-align:left"><pre style="margin:0">'
                             f"{_html.escape(text)}</pre></td>")
                out.append("<tr>" + "".join(cells) + "</tr>")
            out.append("</table>")
        out.append("</div>")
        return "\n".join(out)

    def _repr_html_(self):
        return self.html()

    def save(self, prefix):
        """Writes prefix.txt, prefix.json and prefix.html; returns their paths."""
        paths = {}
        for ext, text in (("txt", str(self)), ("json", self.json()), ("html", self.html())):
            paths[ext] = f"{prefix}.{ext}"
            with open(paths[ext], "w") as f:
                f.write(text + "\n")
        return paths


def _code(fn):
    from .lineprof import _code_of
    return _code_of(fn)

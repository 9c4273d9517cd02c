"""pytorch_memlab and ccalloc on the same function and the same model, in one
process, one after the other (issue 55: "a side-by-side example against
memlab's output on the same function").

    bash scripts/fetch_memlab.sh MEMLAB_GIT_DIR .scratch/memlab [CALMSIZE_GIT_DIR]
    PYTHONPATH=python CCALLOC_TORCH_LIBRARY=BUILD/allocator/libccalloc_torch.so \
        LD_LIBRARY_PATH=BUILD/lib python3 bench/probes/memlab_side_by_side.py \
        --memlab .scratch/memlab --out OUT_DIR

What it does, on CUDA device 0:
1. ccalloc.torch.enable() first (--allocator native leaves PyTorch's own),
   then imports memlab from --memlab DIR (memlab's profile.py resets CUDA's
   statistics at import, so it comes after the allocator is chosen).
2. A small MLP with Adam and a training step whose one line builds a 1 GiB
   temporary, `big = (x @ w).relu().sum()` (x 16384 x 256, w 256 x 16384,
   float32: the product and its relu, 1 GiB each, live at once within the
   line). One untimed step first (Adam's state, cuBLAS's workspace).
3. memlab's LineProfiler on one step (its default columns, then with
   allocated-bytes columns asked for), then ccalloc's line_profiler on one
   step with the same inputs. memlab only reads torch.cuda.memory_stats(),
   which under ccalloc are ccalloc's, so both run on the same allocator.
4. memlab's MemReporter(model) with add_optimizer(opt) and
   ccalloc.torch.report_tensors(model, opt) on the same live state.

Writes to --out: memlab_lines.txt, ccalloc_lines.txt (and .json),
memlab_report.txt, ccalloc_report.txt, side_by_side.txt (all four, in that
order, as printed) and summary.json (the big line's peak as each profiler
gives it, the true one measured around the unprofiled line, and the
profiled step's wall time under each).

memlab needs pandas (its table) and calmsize (its byte format). The GPU
image has pandas; if it is missing, an empty stand-in module is put in
sys.modules for memlab's import only and memlab's table is rendered by this
probe from memlab's own raw records (marked as such in the output). If
calmsize is not importable (fetch_memlab.sh was given no calmsize clone), a
stand-in of calmsize.size with its default units and formatting is used.
IPython is not needed (memlab's magics are skipped when it is missing).
"""

import argparse
import contextlib
import inspect
import io
import json
import math
import os
import re
import sys
import time
import types

FETCH_HINT = ("get it with: bash scripts/fetch_memlab.sh MEMLAB_GIT_DIR .scratch/memlab "
              "[CALMSIZE_GIT_DIR], then pass --memlab .scratch/memlab (on the GPU machine, "
              "carry \".scratch/memlab\")")


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description="pytorch_memlab's LineProfiler and MemReporter beside ccalloc's line "
                    "profiler and tensor report, on the same function and model (CUDA).")
    p.add_argument("--memlab", metavar="DIR",
                   help="folder holding pytorch_memlab/ (and calmsize/), as written by "
                        "scripts/fetch_memlab.sh; required")
    p.add_argument("--out", metavar="DIR", help="folder for the text outputs (made if missing)")
    p.add_argument("--allocator", choices=("ccalloc", "native"), default="ccalloc",
                   help="ccalloc (ccalloc.torch.enable(), the default) or PyTorch's own")
    p.add_argument("--mode", choices=("auto", "extension", "pluggable"), default="auto",
                   help="ccalloc.torch.enable()'s mode (default auto)")
    p.add_argument("--n", type=int, default=16384, help="rows of x; x @ w is n x n float32")
    p.add_argument("--k", type=int, default=256, help="columns of x, features of the MLP")
    p.add_argument("--hidden", type=int, default=1024, help="the MLP's hidden width")
    args = p.parse_args(argv)
    if not args.memlab:
        p.error("--memlab DIR is required: the folder holding pytorch_memlab/, which is not "
                "installed here and not fetched by this probe; " + FETCH_HINT)
    if not os.path.isfile(os.path.join(args.memlab, "pytorch_memlab", "__init__.py")):
        p.error(f"--memlab {args.memlab}: no pytorch_memlab/__init__.py there; " + FETCH_HINT)
    return args


# --- memlab's imports ----------------------------------------------------------------

def _calmsize_stand_in():
    """calmsize.size as memlab's readable_size uses it: format(size(n), '.2f')
    is the amount in the largest 1024-power unit not above n, then the unit
    letter ('1.00G', '512.00B'); the same table and rule as calmsize 0.1.3."""
    units = [(1024 ** 5, "P"), (1024 ** 4, "T"), (1024 ** 3, "G"), (1024 ** 2, "M"),
             (1024, "K"), (1, "B")]

    class ByteSize:
        def __init__(self, n):
            sign = -1 if n < 0 else 1
            for factor, unit in units:
                if abs(n) >= factor:
                    break
            self.amount, self.unit = sign * abs(n) / factor, unit

        def __format__(self, spec):
            return (format(self.amount, spec) + self.unit) if spec else str(self)

        def __str__(self):
            return str(int(round(self.amount))) + self.unit

    mod = types.ModuleType("calmsize")
    mod.size, mod.ByteSize = ByteSize, ByteSize
    mod.__doc__ = "stand-in for calmsize, made by bench/probes/memlab_side_by_side.py"
    return mod


def _pandas_stand_in():
    """An empty module named pandas with the two names memlab's line_records.py
    uses in annotations at import (pd.DataFrame); anything else of it fails.
    Only in sys.modules while memlab is imported."""
    mod = types.ModuleType("pandas")
    mod.__doc__ = "stand-in for pandas, made by bench/probes/memlab_side_by_side.py"

    class _Missing:
        def __init__(self, *a, **k):
            raise ImportError("pandas is not installed (memlab_side_by_side's stand-in)")
    mod.DataFrame = mod.MultiIndex = _Missing
    return mod


def import_memlab(folder):
    """Imports pytorch_memlab from `folder`; returns (module, notes)."""
    notes = []
    sys.path.insert(0, os.path.abspath(folder))
    try:
        import calmsize  # noqa: F401
    except ImportError:
        sys.modules["calmsize"] = _calmsize_stand_in()
        notes.append("calmsize: not importable, a stand-in of calmsize.size was used "
                     "(the same units and format)")
    stub_pandas = False
    try:
        import pandas  # noqa: F401
    except ImportError:
        sys.modules["pandas"] = _pandas_stand_in()   # for memlab's import only
        stub_pandas = True
        notes.append("pandas: not installed; memlab's table was rendered by this probe from "
                     "memlab's own raw line records (memlab's display() needs pandas)")
    try:
        import pytorch_memlab
        from pytorch_memlab.line_profiler import line_profiler as _lp  # noqa: F401
    finally:
        if stub_pandas:
            del sys.modules["pandas"]
    src = os.path.join(folder, "SOURCE.txt")
    if os.path.exists(src):
        with open(src) as f:
            notes += ["source: " + line.strip() for line in f if line.strip()]
    return pytorch_memlab, stub_pandas, notes


def memlab_table(lp, func, columns, without_pandas):
    """memlab's text table of func for `columns` (its print_stats), or, without
    pandas, the same figures from its raw records: per record the peak columns
    are the largest and the allocated/freed ones the sum since the previous
    record of the same function (memlab's _accumulate_line_records), then the
    largest per line (its groupby(...).max())."""
    if not without_pandas:
        s = io.StringIO()
        lp.print_stats(func, columns=columns, stream=s)
        return s.getvalue()
    from pytorch_memlab.utils import readable_size
    code_hash = hash(func.__code__)
    raw = lp._raw_line_records
    per_line = {}
    for i, r in enumerate(raw):
        if r["code_hash"] != code_hash:
            continue
        lo = i if r["prev_record_idx"] in (-1, i - 1) else r["prev_record_idx"] + 1
        row = per_line.setdefault(r["line"], {})
        for c in columns:
            if c.endswith("peak"):
                v = max(raw[j][c] for j in range(lo, i + 1))
            elif c.endswith(("allocated", "freed")):
                v = sum(raw[j][c] for j in range(lo, i + 1))
            else:
                v = r[c]
            row[c] = max(row.get(c, v), v)
    lines, start = inspect.getsourcelines(func)
    heads = [c.split(".") for c in columns]
    w = max([len(p) for h in heads for p in h] + [8]) + 1
    out = [f"## {func.__qualname__}", ""]
    for level in range(3):
        out.append("".join(h[level].rjust(w) for h in heads) + ("  line  code" if level == 0 else ""))
    for n, text in enumerate(lines, start):
        row = per_line.get(n, {})
        cells = "".join(readable_size(row.get(c, math.nan)).rjust(w) for c in columns)
        out.append(f"{cells}  {n:>4}  {text.rstrip()}")
    return "\n".join(out) + "\n"


# --- the workload ----------------------------------------------------------------------

def train_step(model, opt, x, target, w):
    opt.zero_grad(set_to_none=True)
    out = model(x)
    loss = torch.nn.functional.mse_loss(out, target)
    big = (x @ w).relu().sum()          # 1 GiB product and 1 GiB relu, freed within the line
    loss.backward()
    opt.step()
    return loss.item() + 0 * big.item()


torch = None
DEVICE = "cuda"     # device 0 (torch.cuda's current device)


def main(argv=None):
    global torch
    args = parse_args(argv)
    import ccalloc.torch as ct
    info = ct.enable(mode=args.mode) if args.allocator == "ccalloc" else {}
    import torch as _torch
    torch = _torch
    if not torch.cuda.is_available():
        sys.exit("memlab_side_by_side: needs a CUDA device (torch.cuda.is_available() is False)")
    memlab, without_pandas, notes = import_memlab(args.memlab)

    torch.manual_seed(0)
    dev = DEVICE
    model = torch.nn.Sequential(
        torch.nn.Linear(args.k, args.hidden), torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, args.k)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x = torch.randn(args.n, args.k, device=dev)
    target = torch.randn(args.n, args.k, device=dev)
    w = torch.randn(args.k, args.n, device=dev)
    train_step(model, opt, x, target, w)         # Adam's state, cuBLAS's workspace
    torch.cuda.synchronize()

    # The big line's true peak: the allocator's peak counter around it,
    # unprofiled, with what train_step holds live at that line (the forward's
    # output, loss and saved activations) live here too.
    opt.zero_grad(set_to_none=True)
    out = model(x)
    loss = torch.nn.functional.mse_loss(out, target)
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    big = (x @ w).relu().sum()
    true_peak = torch.cuda.max_memory_allocated()
    del big, out, loss
    torch.cuda.synchronize()

    # memlab first, then ccalloc, each on one step with the same inputs.
    def timed(profiler):
        """One profiled step, to the end of its GPU work: its wall seconds."""
        t0 = time.perf_counter()
        with profiler:
            train_step(model, opt, x, target, w)
            torch.cuda.synchronize()
        return time.perf_counter() - t0

    lp = memlab.LineProfiler(train_step)
    memlab_seconds = timed(lp)
    default_cols = ("active_bytes.all.peak", "reserved_bytes.all.peak")
    more_cols = ("allocated_bytes.all.peak", "allocated_bytes.all.current",
                 "allocated_bytes.all.allocated", "allocated_bytes.all.freed")
    memlab_default = memlab_table(lp, train_step, default_cols, without_pandas)
    memlab_more = memlab_table(lp, train_step, more_cols, without_pandas)

    # memlab's enable() empties the cache before its step; so does this, so that
    # both profiled steps start from the same cache (their times are indicative).
    torch.cuda.empty_cache()
    prof = ct.line_profiler(train_step)
    ccalloc_seconds = timed(prof)
    ccalloc_lines = str(prof.report())

    # The line numbers of the big line, and each profiler's figure for it.
    first = train_step.__code__.co_firstlineno
    src, _ = inspect.getsourcelines(train_step)
    big_line = first + next(i for i, s in enumerate(src) if "(x @ w)" in s)
    memlab_rows = [r for r in lp._raw_line_records
                   if r["code_hash"] == hash(train_step.__code__) and r["line"] == big_line]
    (rec,) = prof.records()
    ccalloc_row = next(r for r in rec["lines"] if r["line"] == big_line)

    rep_buf = io.StringIO()
    reporter = memlab.MemReporter(model)
    reporter.add_optimizer(opt)
    with contextlib.redirect_stdout(rep_buf):
        reporter.report(device=x.device)
    memlab_report = rep_buf.getvalue()
    # What memlab's reporter counts for x (mem_reporter.py: untyped_storage().size()
    # times element_size(), rounded up to 512), beside x's bytes.
    memlab_rule_x = math.ceil(x.untyped_storage().size() * x.element_size() / 512) * 512
    used = re.findall(r"Used Memory: (\S+)", memlab_report)
    on_device = re.findall(r"The allocated memory on \S+: (\S+)", memlab_report)
    rep = ct.report_tensors(model, opt, extra={"x": x, "target": target, "w": w})
    ccalloc_report = str(rep)

    head = (f"allocator: {args.allocator}"
            + (f" (ccalloc mode {info.get('mode')})" if info else "")
            + f", torch {torch.__version__}, Python {sys.version.split()[0]}, "
            + torch.cuda.get_device_name(0))
    sections = [
        ("pytorch_memlab LineProfiler, default columns", memlab_default),
        ("pytorch_memlab LineProfiler, allocated-bytes columns asked for "
         "(reset at every traced line: per line)", memlab_more),
        ("ccalloc line profiler (ccalloc.torch.line_profiler)", ccalloc_lines),
        ("pytorch_memlab MemReporter(model) + add_optimizer(opt)", memlab_report),
        ("ccalloc tensor report (ccalloc.torch.report_tensors(model, opt, extra=...))",
         ccalloc_report),
    ]
    text = "\n".join([head] + [f"memlab: {n}" for n in notes] + [""]
                     + [f"===== {title}\n{body.rstrip()}\n" for title, body in sections])
    print(text)

    summary = {
        "allocator": args.allocator, "info": info, "torch": torch.__version__,
        "python": sys.version.split()[0], "device": torch.cuda.get_device_name(0),
        "memlab_notes": notes, "memlab_rendered_without_pandas": without_pandas,
        "big_line": big_line, "live_before_big_line": before, "true_peak": true_peak,
        "memlab_active_peak": max((r["active_bytes.all.peak"] for r in memlab_rows), default=None),
        "memlab_allocated_peak": max((r["allocated_bytes.all.peak"] for r in memlab_rows),
                                     default=None),
        "memlab_reserved_peak": max((r["reserved_bytes.all.peak"] for r in memlab_rows),
                                    default=None),
        "ccalloc_peak": ccalloc_row["peak"], "ccalloc_transient": ccalloc_row["transient"],
        "ccalloc_peak_error": (ccalloc_row["peak"] - true_peak) / true_peak,
        "ccalloc_allocated": ccalloc_row["allocated"], "ccalloc_freed": ccalloc_row["freed"],
        "step_seconds": {"memlab": memlab_seconds, "ccalloc": ccalloc_seconds},
        "memory_allocated": torch.cuda.memory_allocated(),
        "memlab_report_used_memory": used, "memlab_report_allocated_memory": on_device,
        "x_nbytes": x.nbytes, "memlab_rule_bytes_of_x": memlab_rule_x,
        "ccalloc_report_total": rep.total, "ccalloc_report_matches": rep.matches,
    }
    print("summary: " + json.dumps(summary))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        files = {"memlab_lines.txt": memlab_default + "\n" + memlab_more,
                 "ccalloc_lines.txt": ccalloc_lines, "ccalloc_lines.json": prof.json(),
                 "memlab_report.txt": memlab_report, "ccalloc_report.txt": ccalloc_report,
                 "side_by_side.txt": text, "summary.json": json.dumps(summary, indent=1)}
        for name, body in files.items():
            with open(os.path.join(args.out, name), "w") as f:
                f.write(body.rstrip("\n") + "\n")
        print(f"wrote {', '.join(files)} to {args.out}")


if __name__ == "__main__":
    main()

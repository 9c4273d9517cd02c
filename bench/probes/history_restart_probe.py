#!/usr/bin/env python3
"""Which memory-history restart leaves frames that the new settings did not ask for.

PyTorch's `TestCudaMallocAsync::test_memory_plots` turns memory history on three
times in one process (context "all" with C++ stacks, "all" with Python stacks,
then no context), each time allocating a little and taking a snapshot, and
expects the snapshot to hold the test function's name exactly when a context
is recorded and C++ frames exactly when C++ stacks are. Under ccalloc it fails
on the H200 (2026-12-03) at the name check, in both segment kinds, where a
probe outside pytest passed: this probe does the same three restarts inside a
function of that name, after optional earlier work that leaves state behind
(a CUDA graph whose pool stays alive, a block allocated under history and kept,
annotations), and prints for each restart what it expected, what it found and
where in the snapshot each unexpected string is (the JSON path).

    python3 bench/probes/history_restart_probe.py                 # PyTorch's allocator
    CCALLOC=1 PYTHONPATH=python/ccalloc/_boot:python python3 bench/probes/history_restart_probe.py
    ... --before graph,kept,annotate                              # state left behind first

Exit status 0 when every restart showed what it asked for, else 1.
"""
import argparse
import json
import sys

import torch

NAME = "test_memory_plots"


def paths_of(obj, needle, path="$", out=None, limit=8):
    """JSON paths under obj whose string value contains needle (at most limit)."""
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(obj, dict):
        for k, v in obj.items():
            paths_of(v, needle, f"{path}.{k}", out, limit)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            paths_of(v, needle, f"{path}[{i}]", out, limit)
    elif isinstance(obj, str) and needle in obj:
        out.append(path)
    return out


def leave_state(kinds, keep):
    if "graph" in kinds:
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            x = torch.ones(1024, device="cuda")
            with torch.cuda.graph(g):
                y = x * 2
        torch.cuda.current_stream().wait_stream(s)
        g.replay()
        keep += [g, x, y]
    if "kept" in kinds:
        torch.cuda.memory._record_memory_history("all", context="all", stacks="python")
        keep.append(torch.empty(3 << 20, dtype=torch.uint8, device="cuda"))
        torch.cuda.memory._record_memory_history(None)
    if "annotate" in kinds:
        torch.cuda.memory._record_memory_history("all", context="all", stacks="python")
        with torch.profiler.record_function(NAME + "_annotation"):
            torch.empty(1 << 10, device="cuda")
        torch.cuda.memory._record_memory_history(None)


def test_memory_plots():
    """Named as PyTorch's test: its name is what the frames are searched for."""
    ok = True
    for context, stacks in (("all", "all"), ("all", "python"), (None, "python")):
        try:
            torch.cuda.memory.empty_cache()
            torch.cuda.memory._record_memory_history("all", context=context, stacks=stacks)
            a = torch.rand(128, 128, device="cuda")
            _ = a * a + a * a
            del a, _
            snap = torch.cuda.memory._snapshot()
        finally:
            torch.cuda.memory._record_memory_history(None)
        text = json.dumps(snap)
        want_name, want_cpp = context is not None, stacks == "all"
        has_name, has_cpp = NAME in text, "::rand" in text
        good = has_name == want_name and has_cpp == want_cpp
        ok &= good
        print(f"context={context} stacks={stacks}: name {has_name} (want {want_name}), "
              f"C++ frames {has_cpp} (want {want_cpp}) {'ok' if good else 'DIFFERS'}")
        if has_name != want_name and has_name:
            print("  name at:", ", ".join(paths_of(snap, NAME)))
        if has_cpp != want_cpp and has_cpp:
            print("  C++ frames at:", ", ".join(paths_of(snap, "::rand")))
    return ok


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", default="", help="comma-separated: graph, kept, annotate")
    args = ap.parse_args(argv)
    try:
        import ccalloc.torch as ct
        status = ct.status()
    except Exception:            # not on the path: PyTorch's allocator
        status = {"enabled": False}
    print("allocator:", torch.cuda.memory.get_allocator_backend(), "ccalloc:", status.get("enabled"),
          status.get("mode"))
    keep = []
    leave_state({k for k in args.before.split(",") if k}, keep)
    return 0 if test_memory_plots() else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""PyTorch's CUDA caching allocator next to ccalloc, on the same patterns.

Host nanoseconds per allocate or free, the median of N repetitions, for the
hot-pair and churn patterns of bench/patterns.h:

  torch-native        PyTorch's caching allocator, default settings
  torch-expandable    the same with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  ccalloc:*, cudaMalloc, cudaMallocAsync
                      from ccalloc-gpu-bench, run as a subprocess

PyTorch is timed in C++ (bench/torch_alloc_bench.cpp, compiled here with
torch.utils.cpp_extension.load, which needs a CUDA toolkit and ninja) through
c10::cuda::CUDACachingAllocator::raw_alloc / raw_delete, so Python's overhead
is not counted. Each PyTorch configuration runs in its own process because
the allocator reads its settings once, when CUDA starts.

  python3 bench/torch_alloc_bench.py --gpu-bench build/bench/ccalloc-gpu-bench \\
      --out $OUT/bench.json

--rounds N runs the whole set N times, interleaved (PyTorch's runs, then
ccalloc-gpu-bench's; every second round in the reverse order), so a drift of
the host's speed falls on every allocator alike: back to back on one H100 the
same code read 546.9 and 392.7 ns a churn operation, and PyTorch's own 461.9
and 622.2. A figure is then the median over every round's repetitions, and a
target relative to another allocator is also given per round (the ratio of
the two medians of that round) with its spread.

Without torch, a CUDA device or the gpu-bench binary, the missing parts are
reported and skipped; the exit status is non-zero only if something that was
available failed.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
HOT_PAIR_SIZES = [512, 64 << 10, 4 << 20, 64 << 20]  # bench/patterns.h
CHURN_WINDOWS = [100, 1000]
PATTERNS = [f"hot_pair/{b}" for b in HOT_PAIR_SIZES] + [f"churn/W:{w}" for w in CHURN_WINDOWS]
TORCH_CONFIGS = {"torch-native": None, "torch-expandable": "expandable_segments:True"}
# Targets for ccalloc's own policy: host ns per operation, or the name of an
# allocator timed in the same run whose figure it must not exceed (PyTorch's
# own churn figure moves by half from one machine to the next, 400-770 ns on
# H100s, so a fixed number would judge the machine, not the allocator).
TARGETS = {"hot_pair": 100.0, "churn/W:1000": "torch-native"}


def merge_round(results, rounds, data_results, allocator_of):
    """Adds one run's rows to `results` (allocator -> pattern -> {"ns_per_op",
    "reps"}: the reps of every round so far, the median over them) and its
    medians to `rounds` (allocator -> pattern -> [median of each round])."""
    for r in data_results:
        a, p = allocator_of(r), r["pattern"]
        row = results.setdefault(a, {}).setdefault(p, {"reps": []})
        row["reps"] = row["reps"] + list(r["reps"])
        row["ns_per_op"] = statistics.median(row["reps"])
        rounds.setdefault(a, {}).setdefault(p, []).append(r["ns_per_op"])


def round_ratios(rounds, ours, theirs, pattern):
    """Per round, ours' median over theirs' (rounds where both ran)."""
    a = rounds.get(ours, {}).get(pattern, [])
    b = rounds.get(theirs, {}).get(pattern, [])
    return [x / y for x, y in zip(a, b) if y]


def check_targets(results, rounds=None):
    """ccalloc's figures against TARGETS: one entry per pattern that has a
    target and a figure (a relative target needs its allocator's figure).
    With `rounds` (merge_round's), a relative target also lists the ratio of
    each round."""
    ours = results.get("ccalloc:ccalloc", {})
    out = []
    for p in PATTERNS:
        target = TARGETS.get(p, TARGETS.get(p.split("/")[0]))
        v = ours.get(p, {}).get("ns_per_op")
        if target is None or v is None:
            continue
        if isinstance(target, str):
            limit = results.get(target, {}).get(p, {}).get("ns_per_op")
            if limit is None:
                continue
            source = f"{target}'s, same run"
        else:
            limit, source = float(target), "fixed"
        t = {"pattern": p, "ns_per_op": v, "limit_ns": limit, "limit_from": source,
             "met": v <= limit}
        if isinstance(target, str) and rounds:
            t["round_ratios"] = [round(x, 3) for x in
                                 round_ratios(rounds, "ccalloc:ccalloc", target, p)]
        out.append(t)
    return out


def worker(reps):
    """Runs in a child process: times PyTorch's allocator, prints JSON."""
    import torch
    from torch.utils.cpp_extension import load

    if not torch.cuda.is_available():
        print(json.dumps({"skipped": "torch sees no CUDA device"}))
        return 0
    torch.zeros(1, device="cuda")  # start CUDA and the allocator first
    ext = load(
        name="ccalloc_torch_alloc_bench",
        sources=[str(HERE / "torch_alloc_bench.cpp")],
        extra_include_paths=[str(HERE)],
        extra_cflags=["-O2"],
        with_cuda=True,
        verbose=False,
    )
    results = []
    for pattern in PATTERNS:
        kind, arg = pattern.split("/")
        if kind == "hot_pair":
            values = ext.hot_pair(int(arg), reps)
        else:
            values = ext.churn(int(arg.split(":")[1]), reps)
        torch.cuda.synchronize()
        results.append({"pattern": pattern, "ns_per_op": statistics.median(values),
                        "reps": [round(v, 2) for v in values]})
    print(json.dumps({
        "torch_version": torch.__version__,
        "device": torch.cuda.get_device_name(0),
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        "results": results,
    }))
    return 0


def run_torch(name, conf, reps):
    env = dict(os.environ)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    if conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = conf
    print(f"[torch] {name} ({conf or 'defaults'}): building/loading the extension and timing...",
          file=sys.stderr, flush=True)
    proc = subprocess.run([sys.executable, str(pathlib.Path(__file__).resolve()), "--worker",
                           "--reps", str(reps)], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, f"{name} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}"
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if not lines:
        return None, f"{name}: no result in the output:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    data = json.loads(lines[-1])
    if "skipped" in data:
        return None, f"{name} skipped: {data['skipped']}"
    return data, None


def run_gpu_bench(path, reps):
    exe = pathlib.Path(path)
    if not exe.exists():
        return None, f"ccalloc-gpu-bench not found at {exe} (build it: cmake --build BUILD --target ccalloc-gpu-bench)"
    env = dict(os.environ)
    # scripts/device_libs.sh puts the Abseil/benchmark shared libraries the
    # binary needs into BUILD/lib for machines without those packages.
    lib = exe.resolve().parent.parent / "lib"
    if lib.is_dir():
        env["LD_LIBRARY_PATH"] = f"{lib}:{env.get('LD_LIBRARY_PATH', '')}".rstrip(":")
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "gpu.json"
        print("[gpu-bench] running ccalloc-gpu-bench...", file=sys.stderr, flush=True)
        proc = subprocess.run([str(exe), "--json", str(out), "--reps", str(reps)], env=env,
                              capture_output=True, text=True)
        sys.stderr.write(proc.stdout)
        if proc.returncode != 0:
            return None, f"ccalloc-gpu-bench failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}"
        if "no CUDA device: skipped" in proc.stdout:
            return None, "ccalloc-gpu-bench: no CUDA device: skipped"
        return json.loads(out.read_text()), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu-bench", default="build/bench/ccalloc-gpu-bench",
                    help="path of the ccalloc-gpu-bench binary")
    ap.add_argument("--out", help="write the combined results as JSON here")
    ap.add_argument("--reps", type=int, default=7, help="repetitions (median reported)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="interleaved rounds of every allocator (see above)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.reps < 1:
        ap.error("--reps must be at least 1")
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if args.worker:
        return worker(args.reps)

    problems, skipped = [], []
    results = {}  # allocator -> pattern -> {"ns_per_op", "reps"}
    meta = {}
    try:
        import torch  # noqa: F401  (only to know whether the torch part can run)
        have_torch = True
    except ImportError:
        have_torch = False
        skipped.append("torch is not installed: PyTorch columns skipped")
    rounds = {}  # allocator -> pattern -> [median of each round]
    runs = [(name, conf) for name, conf in TORCH_CONFIGS.items() if have_torch]
    runs.append(("gpu-bench", None))
    failed = set()  # a run that failed or was skipped once is not tried again
    for k in range(args.rounds):
        for name, conf in (runs if k % 2 == 0 else runs[::-1]):
            if name in failed:
                continue
            if name == "gpu-bench":
                data, err = run_gpu_bench(args.gpu_bench, args.reps)
            else:
                data, err = run_torch(name, conf, args.reps)
            if err:
                (skipped if "skipped" in err else problems).append(err)
                failed.add(name)
                continue
            if name == "gpu-bench":
                meta.setdefault("device", data.get("device"))
                merge_round(results, rounds, data["results"], lambda r: r["allocator"])
            else:
                meta.update({"torch_version": data["torch_version"], "device": data["device"]})
                merge_round(results, rounds, data["results"], lambda r, n=name: n)

    allocators = [a for a in ["torch-native", "torch-expandable", "ccalloc:pytorch-native",
                              "ccalloc:ccalloc", "cudaMalloc", "cudaMallocAsync"] if a in results]
    allocators += [a for a in results if a not in allocators]
    ratios = []
    targets = []
    if allocators:
        print(f"host ns per allocate or free, median of {args.reps} x {args.rounds} "
              f"round(s); device: "
              f"{meta.get('device', '?')}; torch {meta.get('torch_version', '-')}")
        header = f"{'pattern':<16}" + "".join(f"{a:>24}" for a in allocators)
        have_ratio = "ccalloc:ccalloc" in results and "torch-native" in results
        if have_ratio:
            header += f"{'ccalloc/torch-native':>22}"
            if "torch-expandable" in results:
                header += f"{'ccalloc/torch-exp':>19}"
        print(header)
        print("-" * len(header))
        for p in PATTERNS:
            row = f"{p:<16}"
            for a in allocators:
                v = results[a].get(p, {}).get("ns_per_op")
                row += f"{v:>24.1f}" if v is not None else f"{'-':>24}"
            if have_ratio:
                ours = results["ccalloc:ccalloc"].get(p, {}).get("ns_per_op")
                for base in ["torch-native", "torch-expandable"]:
                    if base not in results:
                        continue
                    theirs = results[base].get(p, {}).get("ns_per_op")
                    if ours and theirs:
                        ratios.append({"pattern": p, "allocator": "ccalloc:ccalloc",
                                       "baseline": base, "ratio": ours / theirs})
                        width = 22 if base == "torch-native" else 19
                        row += f"{ours / theirs:>{width}.3f}"
            print(row)
        print("(ratio < 1: ccalloc takes less host time per operation than PyTorch's allocator)")
        if "ccalloc:ccalloc" in results:
            targets = check_targets(results, rounds)
            for t in targets:
                per_round = ""
                if len(t.get("round_ratios", [])) > 1:
                    per_round = ("; ratio per round " +
                                 ", ".join(f"{x:.3f}" for x in t["round_ratios"]))
                print(f"target {t['pattern']}: {t['ns_per_op']:.1f} ns <= {t['limit_ns']:.1f} ns "
                      f"({t['limit_from']}): {'met' if t['met'] else 'MISSED'}{per_round}")
    for s in skipped:
        print(f"skipped: {s}")
    for e in problems:
        print(f"error: {e}", file=sys.stderr)

    if args.out:
        out = pathlib.Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        flat = [{"allocator": a, "pattern": p, "ns_per_op": r["ns_per_op"], "reps": r["reps"]}
                for a in allocators for p, r in results[a].items()]
        out.write_text(json.dumps({**meta, "reps": args.reps, "rounds": args.rounds,
                                   "round_medians": rounds, "results": flat, "ratios": ratios,
                                   "targets": targets, "skipped": skipped, "errors": problems},
                                  indent=1) + "\n")
        print(f"wrote {out}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

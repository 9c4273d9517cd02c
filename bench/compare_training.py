#!/usr/bin/env python3
"""Trains real models under each CUDA allocator and compares speed and memory.

One process per (allocator, workload): an allocator is chosen before CUDA is
initialised and cannot be changed afterwards, and a fresh process keeps one
run's cache from helping the next.

Allocators (--configs):
  native              PyTorch's caching allocator, default settings
  native_expandable   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  cuda_malloc_async   PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
  ccalloc             ccalloc through CUDAPluggableAllocator, default policy
  ccalloc_classic     ccalloc with expandable_segments:False (classic segments)

Workloads (--workloads):
  gpt2      GPT-2 small from a transformers GPT2Config (random weights, 12
            layers, 768 wide), AdamW, batch 16, bf16 autocast, a new sequence
            length each step drawn from 64..1024 (fixed seed).
  resnet50  torchvision ResNet-50 (random weights), SGD with momentum, bf16
            autocast, batch 96, image side drawn from {160,192,224,256} each step.

Per run: median step time after the warm-up steps (torch.cuda.synchronize()
ends every step), peak allocated and peak reserved bytes (for ccalloc from its
own counters: PyTorch's statistics do not reach a pluggable allocator), their
ratio, and device memory in use (mem_get_info total - free, minus what was in
use after CUDA initialisation and before the first allocation), both the
largest value seen at the end of a step and the value after the run.

--max-batch: for ResNet-50 at 224 px, the largest batch that trains for a few
steps under a memory cap (--cap-gib, default 20: set_per_process_memory_fraction
for PyTorch's allocators, ccalloc's memory limit for ccalloc), found by
doubling then bisecting; every probe starts from an emptied cache.

    PYTHONPATH=python CCALLOC_TORCH_LIBRARY=build/allocator/libccalloc_torch.so \\
        python3 bench/compare_training.py --out results.json [--max-batch]

With the defaults (30 steps, 5 of them warm-up) the comparison and the
max-batch search take about five minutes on an H100.
"""

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GiB = 1 << 30

CONFIGS = {
    "native": {"torch_conf": None},
    "native_expandable": {"torch_conf": "expandable_segments:True"},
    "cuda_malloc_async": {"torch_conf": "backend:cudaMallocAsync"},
    "ccalloc": {"ccalloc_conf": ""},
    "ccalloc_classic": {"ccalloc_conf": "expandable_segments:False"},
}
WORKLOADS = ("gpt2", "resnet50")


# --- child side -----------------------------------------------------------------

def setup_allocator(config_name, library):
    """Installs the allocator; returns the ccalloc.torch module or None."""
    config = CONFIGS[config_name]
    if "ccalloc_conf" not in config:
        return None
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import ccalloc.torch as ct
    ct.enable(conf=config["ccalloc_conf"] or None, library=library)
    return ct


class Memory:
    """Reads peaks from the allocator in charge and device use from the driver."""

    def __init__(self, torch, ct):
        self.torch, self.ct = torch, ct
        torch.cuda.init()
        free, self.total = torch.cuda.mem_get_info()
        self.baseline = self.total - free   # context, before any allocation
        self.device_peak = 0
        # Largest relative gap between the device's count and the allocator's
        # reserved bytes, read at the same moment (end of each step).
        self.max_gap = 0.0
        # CUDA loads library kernels (cuDNN, cuBLAS) lazily, after the first
        # allocation, and that memory is no allocator's. Once the warm-up steps
        # have loaded them, `other` = device use - reserved is fixed, and the
        # gap counted from there measures the allocator's own accounting.
        self.other = None
        self.max_gap_after_warmup = 0.0

    def sample(self):
        free, _ = self.torch.cuda.mem_get_info()
        used = self.total - free - self.baseline
        self.device_peak = max(self.device_peak, used)
        m = self.ct if self.ct else self.torch.cuda
        reserved = m.memory_reserved()
        if reserved > 0:
            self.max_gap = max(self.max_gap, abs(used - reserved) / reserved)
            if self.other is not None:
                self.max_gap_after_warmup = max(self.max_gap_after_warmup,
                                                abs(used - self.other - reserved) / reserved)
        return used, reserved

    def settle(self):
        used, reserved = self.sample()
        self.other = used - reserved

    def peaks(self):
        m = self.ct if self.ct else self.torch.cuda
        return m.max_memory_allocated(), m.max_memory_reserved()

    def stats(self):
        return self.ct.memory_stats() if self.ct else self.torch.cuda.memory_stats()


def build_gpt2(torch, batch, seed):
    from transformers import GPT2Config, GPT2LMHeadModel
    config = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024, vocab_size=50257)
    model = GPT2LMHeadModel(config).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator(device="cuda").manual_seed(seed)

    def step(seq):
        ids = torch.randint(0, config.vocab_size, (batch, seq), device="cuda", generator=gen)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()
    return step


def build_resnet50(torch, batch, seed):
    import torchvision
    model = torchvision.models.resnet50(weights=None).cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    gen = torch.Generator(device="cuda").manual_seed(seed)

    def step(side, batch=batch):
        x = torch.randn(batch, 3, side, side, device="cuda", generator=gen)
        y = torch.randint(0, 1000, (batch,), device="cuda", generator=gen)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()
    return step, opt


def child_train(args):
    ct = setup_allocator(args.config, args.library)
    import torch
    torch.backends.cudnn.benchmark = False   # same algorithms for every allocator
    mem = Memory(torch, ct)
    rng = random.Random(args.seed)
    if args.workload == "gpt2":
        step = build_gpt2(torch, args.gpt2_batch, args.seed)
        shapes = [rng.randint(64, 1024) for _ in range(args.steps)]
    else:
        step, _ = build_resnet50(torch, args.resnet_batch, args.seed)
        shapes = [rng.choice((160, 192, 224, 256)) for _ in range(args.steps)]
    times, loss = [], None
    for i, shape in enumerate(shapes):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = step(shape)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        if i + 1 == args.warmup:
            mem.settle()
        else:
            mem.sample()
        if (i + 1) % 10 == 0:
            print(f"[child] step {i + 1}/{len(shapes)}: {times[-1] * 1e3:.1f} ms", flush=True)
    peak_alloc, peak_reserved = mem.peaks()
    stats = mem.stats()
    result = {
        "config": args.config, "workload": args.workload, "steps": len(shapes),
        "warmup": args.warmup, "shapes": shapes,
        "step_ms": [t * 1e3 for t in times],
        "median_step_ms": statistics.median(times[args.warmup:]) * 1e3,
        "peak_allocated": peak_alloc, "peak_reserved": peak_reserved,
        "reserved_over_allocated": peak_reserved / peak_alloc if peak_alloc else None,
        "device_used_after": mem.sample()[0], "device_used_peak": mem.device_peak,
        "device_vs_reserved_max_gap": mem.max_gap,
        "other_device_memory": mem.other,
        "device_vs_reserved_max_gap_after_warmup": mem.max_gap_after_warmup,
        "baseline_used": mem.baseline, "device_total": mem.total,
        "num_alloc_retries": stats.get("num_alloc_retries"), "num_ooms": stats.get("num_ooms"),
        "final_loss": float(loss.float().item()),
        "torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
    }
    if ct:
        result["ccalloc"] = ct.ccalloc_stats()
    return result


def is_oom(error):
    text = str(error)
    return "out of memory" in text.lower() or "ALLOC_FAILED" in text


def child_max_batch(args):
    ct = setup_allocator(args.config, args.library)
    import torch
    torch.backends.cudnn.benchmark = False
    mem = Memory(torch, ct)
    cap = int(args.cap_gib * GiB)
    if ct:
        ct.set_memory_limit(cap)
    else:
        torch.cuda.set_per_process_memory_fraction(cap / mem.total)
    step, opt = build_resnet50(torch, 1, args.seed)
    probes = []

    def fits(batch):
        gc.collect()
        torch.cuda.empty_cache()
        t0 = time.perf_counter()
        try:
            for _ in range(args.probe_steps):
                step(224, batch=batch)
            torch.cuda.synchronize()
            ok = True
        except RuntimeError as e:   # torch.OutOfMemoryError is a RuntimeError
            if not is_oom(e):
                raise
            ok = False
        opt.zero_grad(set_to_none=True)
        probes.append({"batch": batch, "fits": ok, "seconds": time.perf_counter() - t0})
        print(f"[child] batch {batch}: {'fits' if ok else 'out of memory'}", flush=True)
        return ok

    good, bad = 0, None
    batch = args.start_batch
    while batch <= args.max_batch_limit:          # doubling
        if fits(batch):
            good, batch = batch, batch * 2
        else:
            bad = batch
            break
    if bad is None:
        bad = args.max_batch_limit + 1
    while bad - good > args.resolution:           # bisection
        mid = (good + bad) // 2
        if fits(mid):
            good = mid
        else:
            bad = mid
    return {"config": args.config, "workload": "resnet50@224", "cap_bytes": cap,
            "max_batch": good, "first_failing": bad if bad <= args.max_batch_limit else None,
            "probes": probes, "device_used_peak": mem.device_peak}


# --- parent side ------------------------------------------------------------------

def child_env(config_name):
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    env.pop("PYTORCH_ALLOC_CONF", None)
    env.pop("CCALLOC_CONF", None)
    env.pop("CCALLOC_TORCH_SIMULATE", None)
    conf = CONFIGS[config_name].get("torch_conf")
    if conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = conf
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "python")] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    return env


def run_child(args, config, mode, workload=None):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", mode, "--config", config,
           "--steps", str(args.steps), "--warmup", str(args.warmup), "--seed", str(args.seed),
           "--gpt2-batch", str(args.gpt2_batch), "--resnet-batch", str(args.resnet_batch),
           "--cap-gib", str(args.cap_gib), "--probe-steps", str(args.probe_steps),
           "--start-batch", str(args.start_batch), "--resolution", str(args.resolution),
           "--max-batch-limit", str(args.max_batch_limit)]
    for extra in args.ccalloc_config:
        cmd += ["--ccalloc-config", extra]
    if workload:
        cmd += ["--workload", workload]
    if args.library:
        cmd += ["--library", args.library]
    t0 = time.time()
    result, tail = None, []
    try:
        proc = subprocess.Popen(cmd, env=child_env(config), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        # A hung child (a stuck kernel, a deadlock) must not stop the comparison.
        killed = []
        watchdog = threading.Timer(args.timeout, lambda: (killed.append(1), proc.kill()))
        watchdog.start()
        try:
            for line in proc.stdout:
                if line.startswith("RESULT "):
                    result = json.loads(line[len("RESULT "):])
                else:
                    tail.append(line.rstrip())
                    tail = tail[-40:]
                    if line.startswith("[child] "):
                        print("    " + line[len("[child] "):].rstrip(), flush=True)
            proc.wait()
        finally:
            watchdog.cancel()
        rc = proc.returncode
        if killed:
            tail.append(f"killed after {args.timeout:.0f} s")
    except OSError as e:
        rc, tail = -1, [str(e)]
    elapsed = time.time() - t0
    if result is None or rc != 0:
        print(f"  !! {config} {mode} {workload or ''} failed (rc={rc}):\n" +
              "\n".join("     " + t for t in tail[-15:]), flush=True)
        return {"config": config, "workload": workload, "error": "\n".join(tail), "rc": rc,
                "wall_s": elapsed}
    result["wall_s"] = elapsed
    return result


def fmt_bytes(n):
    return "-" if n is None else f"{n / GiB:7.2f} GiB"


def print_table(runs, maxb, cap_gib):
    print()
    head = (f"{'workload':9} {'allocator':18} {'median ms':>9} {'peak alloc':>11} "
            f"{'peak resv':>11} {'resv/alloc':>10} {'dev peak':>11} {'dev after':>11}")
    print(head)
    print("-" * len(head))
    for r in runs:
        if "error" in r:
            print(f"{r['workload']:9} {r['config']:18} failed: {r['error'].splitlines()[-1][:60]}")
            continue
        ratio = r["reserved_over_allocated"]
        print(f"{r['workload']:9} {r['config']:18} {r['median_step_ms']:9.1f} "
              f"{fmt_bytes(r['peak_allocated']):>11} {fmt_bytes(r['peak_reserved']):>11} "
              f"{(f'{ratio:.3f}' if ratio else '-'):>10} {fmt_bytes(r['device_used_peak']):>11} "
              f"{fmt_bytes(r['device_used_after']):>11}")
    if maxb:
        print()
        print(f"largest ResNet-50 batch at 224 px under {cap_gib:g} GiB")
        for r in maxb:
            if "error" in r:
                print(f"  {r['config']:18} failed: {r['error'].splitlines()[-1][:60]}")
            else:
                print(f"  {r['config']:18} {r['max_batch']:6d}   ({len(r['probes'])} probes, "
                      f"first failing {r['first_failing']})")


def summarize(runs):
    """Per workload and allocator: medians over rounds, and step time relative to
    PyTorch native measured in the same round (the median of those ratios)."""
    ok = [r for r in runs if "error" not in r]
    out = []
    for workload in dict.fromkeys(r["workload"] for r in ok):
        native = {r["round"]: r["median_step_ms"] for r in ok
                  if r["workload"] == workload and r["config"] == "native"}
        for config in dict.fromkeys(r["config"] for r in ok if r["workload"] == workload):
            rs = [r for r in ok if r["workload"] == workload and r["config"] == config]
            rel = [r["median_step_ms"] / native[r["round"]] for r in rs if r["round"] in native]
            peak_res = max(r["peak_reserved"] for r in rs)
            peak_alloc = max(r["peak_allocated"] for r in rs)
            out.append({
                "workload": workload, "config": config, "rounds": len(rs),
                "median_step_ms": statistics.median(r["median_step_ms"] for r in rs),
                "step_vs_native": statistics.median(rel) if rel else None,
                "peak_allocated": peak_alloc, "peak_reserved": peak_res,
                "reserved_over_allocated": max(r["reserved_over_allocated"] for r in rs),
                # The device's own count (memory in use less what was in use
                # before the first allocation) against reserved, read together.
                "device_vs_reserved_max_gap": max(r["device_vs_reserved_max_gap"] for r in rs),
                "other_device_memory": max(r["other_device_memory"] or 0 for r in rs),
                "device_vs_reserved_max_gap_after_warmup": max(
                    r["device_vs_reserved_max_gap_after_warmup"] for r in rs),
            })
    return out


def print_summary(summary, rounds):
    print()
    print(f"summary over {rounds} round(s): step time is the median of the per-run medians; "
          "'vs native' is the median over rounds of (median step / native's median step in "
          "the same round); 'device gap' is the largest |device memory in use - in use before the "
          "first allocation - reserved| / reserved, read together at the end of every step; "
          "'other' is device memory no allocator holds (library kernels loaded lazily), measured "
          "after the warm-up steps, and 'gap after' the same gap with it counted")
    head = (f"{'workload':9} {'allocator':18} {'median ms':>9} {'vs native':>9} {'peak alloc':>11} "
            f"{'peak resv':>11} {'resv/alloc':>10} {'device gap':>10} {'other':>10} "
            f"{'gap after':>9}")
    print(head)
    print("-" * len(head))
    for r in summary:
        vs = f"{r['step_vs_native']:.3f}" if r["step_vs_native"] else "-"
        print(f"{r['workload']:9} {r['config']:18} {r['median_step_ms']:9.1f} {vs:>9} "
              f"{fmt_bytes(r['peak_allocated']):>11} {fmt_bytes(r['peak_reserved']):>11} "
              f"{r['reserved_over_allocated']:10.4f} {100 * r['device_vs_reserved_max_gap']:9.2f}% "
              f"{fmt_bytes(r['other_device_memory']):>10} "
              f"{100 * r['device_vs_reserved_max_gap_after_warmup']:8.2f}%")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--configs", default=",".join(CONFIGS),
                   help=f"comma-separated subset of {','.join(CONFIGS)}")
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--rounds", type=int, default=1,
                   help="repeat every training run this often, interleaved")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gpt2-batch", type=int, default=16)
    p.add_argument("--resnet-batch", type=int, default=96)
    p.add_argument("--max-batch", action="store_true", help="also search the largest batch under a cap")
    p.add_argument("--cap-gib", type=float, default=20.0)
    p.add_argument("--probe-steps", type=int, default=3)
    p.add_argument("--start-batch", type=int, default=64)
    p.add_argument("--resolution", type=int, default=8)
    p.add_argument("--max-batch-limit", type=int, default=4096)
    p.add_argument("--library", default=None, help="libccalloc_torch.so (else CCALLOC_TORCH_LIBRARY)")
    p.add_argument("--timeout", type=float, default=400.0, help="seconds per child process")
    p.add_argument("--out", default=None, help="write every result as JSON here")
    p.add_argument("--ccalloc-config", action="append", default=[], metavar="NAME=CONF",
                   help="an extra ccalloc configuration to compare (CCALLOC_CONF syntax); "
                        "repeatable, name it in --configs")
    p.add_argument("--child", choices=("train", "max_batch"), help=argparse.SUPPRESS)
    p.add_argument("--config", help=argparse.SUPPRESS)
    p.add_argument("--workload", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    for extra in args.ccalloc_config:
        name, sep, conf = extra.partition("=")
        if not sep or not name:
            p.error(f"--ccalloc-config wants NAME=CONF, got {extra!r}")
        CONFIGS[name] = {"ccalloc_conf": conf}
    if args.warmup >= args.steps:
        p.error("--warmup must be smaller than --steps")
    for c in args.configs.split(","):
        if c not in CONFIGS:
            p.error(f"unknown allocator config {c!r} (known: {', '.join(CONFIGS)})")
    for w in args.workloads.split(","):
        if w and w not in WORKLOADS:
            p.error(f"unknown workload {w!r} (known: {', '.join(WORKLOADS)})")
    return args


def main(argv):
    args = parse_args(argv)
    if args.child:
        result = child_train(args) if args.child == "train" else child_max_batch(args)
        print("RESULT " + json.dumps(result), flush=True)
        return 0
    configs = args.configs.split(",")
    workloads = [w for w in args.workloads.split(",") if w]
    runs, maxb = [], []
    t0 = time.time()
    # Rounds interleave the allocators (A B C A B C ...) so that drift in the
    # GPU's clocks or a neighbour's load falls on all of them alike.
    for rnd in range(args.rounds):
        for workload in workloads:
            for config in configs:
                print(f"[{time.time() - t0:6.0f}s] {workload} / {config}"
                      + (f" (round {rnd + 1}/{args.rounds})" if args.rounds > 1 else ""), flush=True)
                runs.append(run_child(args, config, "train", workload))
                runs[-1]["round"] = rnd
                r = runs[-1]
                if "error" not in r:
                    print(f"  median {r['median_step_ms']:.1f} ms, peak allocated "
                          f"{fmt_bytes(r['peak_allocated'])}, peak reserved {fmt_bytes(r['peak_reserved'])}, "
                          f"device peak {fmt_bytes(r['device_used_peak'])} ({r['wall_s']:.0f} s)", flush=True)
    if args.max_batch:
        for config in configs:
            print(f"[{time.time() - t0:6.0f}s] max batch / {config}", flush=True)
            maxb.append(run_child(args, config, "max_batch"))
    print_table(runs, maxb, args.cap_gib)
    summary = summarize(runs)
    print_summary(summary, args.rounds)
    print(f"\ntotal {time.time() - t0:.0f} s")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"args": vars(args), "runs": runs, "max_batch": maxb, "summary": summary},
                      f, indent=1)
        print(f"wrote {args.out}")
    failed = [r for r in runs + maxb if "error" in r]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Trains real models under each CUDA allocator and compares speed and memory.

One process per (allocator, workload, round): an allocator is chosen before
CUDA is initialised and cannot be changed afterwards, and a fresh process keeps
one run's cache from helping the next.

Allocators (--configs):
  native              PyTorch's caching allocator, default settings
  native_expandable   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  cuda_malloc_async   PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
  ccalloc             ccalloc as PyTorch's allocator (ccalloc.torch.enable()), default policy
  ccalloc_classic     ccalloc with expandable_segments:False (classic segments)

Workloads (--workloads, default all; random weights, synthetic data, fixed
seeds, and a new shape every step drawn from a seeded generator, the same
sequence for every allocator and round):
  gpt2         GPT-2 small from a transformers GPT2Config (12 layers, 768 wide),
               AdamW, batch 16 (--gpt2-batch), bf16 autocast, sequence length
               64..1024.
  resnet50     torchvision ResNet-50, SGD with momentum, bf16 autocast, batch 96
               (--resnet-batch), image side from {160,192,224,256}.
  seq2seq      encoder-decoder torch.nn.Transformer (6+6 layers, 512 wide, 8
               heads, 32k vocabularies, causal decoder mask), Adam, fp32 weights
               with TF32 matmuls, batch 64, source and target lengths 16..256
               drawn independently.
  unet         diffusion-style conv UNet (4 levels 128..512 channels, ResBlocks
               with GroupNorm and a sinusoidal time embedding, skip connections,
               self-attention at 8x8), epsilon-prediction MSE, AdamW, fp16
               autocast with GradScaler, 64x64 images, batch 24..64.
  vit          torchvision ViT-B/16, 224 px, AdamW, bf16 autocast, label
               smoothing, gradient clipping, batch 48..128.
  ckpt_lm      decoder-only LM (16 layers, 1024 wide, 32k vocabulary, tied head)
               with torch.utils.checkpoint (non-reentrant) around every block,
               AdamW, bf16 autocast, batch 8, sequence length 256..2048.
  two_streams  two-tower classifier whose ResNet-18 image tower runs on the
               current stream and whose 6-layer transformer text tower runs on
               a second stream (wait_stream / record_stream, so its backward
               runs there too), fed from pinned host memory by a third, copy
               stream that loads the next batch during this step; bf16
               autocast, AdamW, batch 64..128, side {160,192,224}, 32..256 tokens.
  gnn, moe, hf_trainer, generate
               random graph sizes, top-1 expert routing, GPT-2 through
               transformers' Trainer, and generate() growing a KV cache:
               bench/workload_families.py.

Per run: step time after the warm-up steps (torch.cuda.synchronize() ends every
step; a workload that repeats a few shapes gets one more warm-up step for each
shape its timed steps repeat and the warm-up missed, since the first step of a
new shape costs 100-400 ms whatever the allocator: warm_every_shape,
--no-warm-shapes turns it off) as the mean (the figure compared: a median hides the slow steps), median,
stdev, min and max; peak allocated and peak reserved bytes from
torch.cuda.max_memory_allocated() / max_memory_reserved() (with
ccalloc.torch.enable()'s extension these are ccalloc's own counters; in the
CUDAPluggableAllocator fallback mode, where PyTorch's statistics do not reach
the plugin, ccalloc's counters are read directly) and their ratio; device memory
in use (mem_get_info total - free, minus what was in use after CUDA
initialisation), the largest value seen at the end of a step and after the run.

--rounds N repeats every run N times, interleaved: each round runs every
workload under every allocator (A B C A B C ...), so drift in the GPU's clocks
falls on all of them alike. The summary gives, per workload and allocator, the
mean over rounds of the per-run mean step time with its spread (min, max and
stdev of the per-run means), the ratio of that mean to native_expandable's
(and native's) over the same rounds, and the worst peak reserved / peak
allocated; then, for each ccalloc configuration, the worst case over the
workloads.

The host of the device machines runs the same code at one speed or at half of
it, switching every few seconds on every core (bench/probes/host_core_probe.py), so
one process can draw mostly the slow state and the next mostly the fast one.
Each run times a ~1 ms probe of the host reference loop before every step
(host_probe_ms), and the summary adds, for every allocator but the baseline,
its step time against native_expandable's fitted with the probe taken out
(host_adjusted_ratio: a term per step index, one for the allocator, one for
the log of the probe): a diagnostic beside the mean, which stays the figure
compared.

--concurrent runs a round's allocators side by side instead: one process
each, started together on the same GPU, so that every host state falls on all
of them at once. The host-bound workloads leave the GPU idle most of a step,
and the processes share it alike; each run's device-memory figures then count
the others' memory too (peak allocated and reserved are the allocator's own).
Two allocators at a time fit GPT-2 on an 80 GB card. --torch-config
expandable_b=expandable_segments:True with --configs
native_expandable,expandable_b runs PyTorch's allocator against itself, an
A/A control: what the method reads where nothing differs. The order the
processes start in turns with the round, so no allocator always starts first.

--lockstep runs them side by side too, but taking turns step by step: the
parent gives each process one step in turn (the order alternating from step
to step) and the next only when that step's work on the GPU is done. So a
step of one allocator and the same step of the other meet the same host
state a few hundred milliseconds apart, as --concurrent's do, while the GPU
runs one process's work at a time, as in sequential rounds. On an H100 host
(2026-11-27) its per-step differences were noisier than sequential runs'
(ResNet-50: 3.5% of a step against 0.5%): the processes disturb each other,
and sequential rounds stay the measure of record.

Where the time goes, per run: the host's time to launch each step (until the
step's function returns) and the span of its work on the GPU (CUDA events
around it); --kernel-profile N adds the GPU time of the kernels alone over the
last N timed shapes (torch.profiler, after the timed steps). And, for every
ccalloc configuration, the step time each chunk it mapped cost (move_costs:
the step's time less native_expandable's on the same step, fitted to the
step's num_maps). On an H100 that is ~50-70 us a chunk, about the table's
cuMemMap + cuMemSetAccess + cuMemUnmap, which makes the number of chunks moved
the figure that decides ccalloc's speed on a host-bound model.

--record-traces DIR: after the timed rounds, one short untimed run per
workload (--trace-steps steps) under ccalloc with CCALLOC_TRACE set, leaving
DIR/<workload>.trace.gz, the allocation trace in the format of traces/README.md
(replayable with ccalloc-replay). The timed runs never record.

--max-batch: for ResNet-50 at 224 px, the largest batch that trains for a few
steps under a memory cap (--cap-gib, default 20: set_per_process_memory_fraction
for PyTorch's allocators, ccalloc's memory limit for ccalloc), found by
doubling then bisecting; every probe starts from an emptied cache.

    PYTHONPATH=python CCALLOC_TORCH_LIBRARY=build/allocator/libccalloc_torch.so \\
        python3 bench/compare_training.py --configs native_expandable,ccalloc \\
        --rounds 2 --record-traces traces/new --out results.json

Every workload trains 30 steps (5 warm-up) in 2-10 s on an H100; a process
costs another 5-10 s to start (imports, CUDA context, model construction).

The code is in units beside this one, in bench/: compare_configs.py (what is
compared), compare_workloads.py (the models and their shapes),
compare_child.py (one run, in its own process, and --lockstep's turns),
compare_stats.py (the figures drawn from the runs) and compare_report.py (the
tables). This file is the runner and its command line; every name those
units define that other code uses is importable from here as before.
"""

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host_counters import ThreadCounters  # noqa: E402,F401 (bench/ is the script's folder)
import protocol  # noqa: E402
import workload_families  # noqa: E402,F401
# The units of the comparison (see above), re-exported: bench/ddp_step_time.py,
# bench/pool_rounds.py, the probes and tests/python import these names from here.
from compare_configs import (BASELINE, CONFIGS, DEFAULT_CONFIGS, HOST_CLOCKS,  # noqa: E402,F401
                             is_ccalloc)
from compare_workloads import (BUILDERS, DEVICE, WORKLOADS, build_gpt2,  # noqa: E402,F401
                               build_resnet50, decoder_lm, device_scope, grad_scaler,
                               warm_every_shape, workload_ckpt_lm, workload_gpt2,
                               workload_resnet50, workload_seq2seq, workload_two_streams,
                               workload_unet, workload_vit)
from compare_child import (HOST_PROBE_ITERATIONS, LOCKSTEP_ENV, Memory, Turn,  # noqa: E402,F401
                           Turns, child_max_batch, child_train, host_reference_ms, is_oom,
                           kernel_time, setup_allocator)
from compare_stats import (good_runs, host_adjusted_ratio, mean_of, mean_ratio,  # noqa: E402,F401
                           move_costs, paired_rounds, placement_thirds, step_counter,
                           summarize, wait_steps, worst_cases)
from compare_report import (GiB, fmt_bytes, fmt_ms, fmt_ratio, print_heading,  # noqa: E402,F401
                            print_move_costs, print_placement_thirds, print_summary,
                            print_table, print_traces, print_wait_steps)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- parent side ------------------------------------------------------------------

def start_order(n, rnd):
    """The order in which round `rnd` starts its n side-by-side processes
    (indexes into the round's configurations): turned by one each round, so
    that no allocator is always first (or last) to start."""
    k = rnd % n if n else 0
    return list(range(k, n)) + list(range(k))


def gpu_slot(gpus, i, rnd):
    """The GPU (--gpus) the round's i-th configuration runs on, turning by one
    each round so that every allocator meets every GPU alike; None without
    --gpus."""
    if not gpus:
        return None
    return gpus[(i + rnd) % len(gpus)]


def child_env(config_name, extra=None):
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    for var in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "CCALLOC_CONF",
                "CCALLOC_TORCH_SIMULATE", "CCALLOC_TRACE"):
        env.pop(var, None)
    conf = CONFIGS[config_name].get("torch_conf")
    if conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = conf
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "python")] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    env.update(extra or {})
    return env


def run_child(args, config, mode, workload=None, steps=None, warmup=None, env=None,
              warm_shapes=None):
    steps = args.steps if steps is None else steps
    warm_shapes = args.warm_shapes if warm_shapes is None else warm_shapes
    warmup = args.warmup if warmup is None else warmup
    cmd = [sys.executable, os.path.abspath(__file__), "--child", mode, "--config", config,
           "--steps", str(steps), "--warmup", str(warmup), "--seed", str(args.seed),
           "--gpt2-batch", str(args.gpt2_batch), "--resnet-batch", str(args.resnet_batch),
           "--cap-gib", str(args.cap_gib), "--probe-steps", str(args.probe_steps),
           "--start-batch", str(args.start_batch), "--resolution", str(args.resolution),
           "--max-batch-limit", str(args.max_batch_limit),
           "--kernel-profile", str(args.kernel_profile)]
    for extra in args.ccalloc_config:
        cmd += ["--ccalloc-config", extra]
    for extra in args.torch_config:
        cmd += ["--torch-config", extra]
    if workload:
        cmd += ["--workload", workload]
    if not warm_shapes:
        cmd += ["--no-warm-shapes"]
    if args.library:
        cmd += ["--library", args.library]
    t0 = time.time()
    result, tail = None, []
    try:
        proc = subprocess.Popen(cmd, env=child_env(config, env), stdout=subprocess.PIPE,
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
        return {"config": config, "workload": workload, "error": "\n".join(tail) or f"rc={rc}",
                "rc": rc, "wall_s": elapsed}
    result["wall_s"] = elapsed
    return result


def count_events(path):
    with gzip.open(path, "rt") as f:
        return sum(1 for line in f if line[:1] in ("a", "f"))


def record_trace(args, config, workload):
    """One untimed run with CCALLOC_TRACE set; gzips what the plugin wrote at exit."""
    os.makedirs(args.record_traces, exist_ok=True)
    raw = os.path.join(os.path.abspath(args.record_traces), f"{workload}.trace")
    for stale in (raw, raw + ".gz"):
        if os.path.exists(stale):
            os.remove(stale)
    r = run_child(args, config, "train", workload, steps=args.trace_steps,
                  warmup=min(args.warmup, args.trace_steps - 1), env={"CCALLOC_TRACE": raw},
                  warm_shapes=False)
    entry = {"workload": workload, "config": config, "steps": args.trace_steps,
             "wall_s": r.get("wall_s")}
    if "error" in r:
        entry["error"] = r["error"]
    if os.path.exists(raw):
        with open(raw, "rb") as src, gzip.GzipFile(raw + ".gz", "wb", mtime=0) as dst:
            shutil.copyfileobj(src, dst)
            # The replay's per-step figures read this (stats/trace.h).
            dst.write(f"# steps: {args.trace_steps}\n".encode())
        os.remove(raw)
        entry.update(path=raw + ".gz", bytes=os.path.getsize(raw + ".gz"),
                     events=count_events(raw + ".gz"),
                     peak_allocated=r.get("peak_allocated"))
        print(f"  trace {entry['path']}: {entry['events']} events, "
              f"{entry['bytes'] / 1024:.0f} KiB", flush=True)
    else:
        entry.setdefault("error", "the run left no trace")
        print(f"  !! no trace for {workload}", flush=True)
    return entry


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="Workloads: " + ", ".join(WORKLOADS) +
                                       " (see the module docstring).")
    p.add_argument("--configs", default=DEFAULT_CONFIGS,
                   help=f"comma-separated subset of {','.join(CONFIGS)}")
    p.add_argument("--workloads", default="all",
                   help=f"comma-separated subset of {','.join(WORKLOADS)}, or 'all' (default)")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--rounds", type=int, default=6,
                   help="repeat every training run this often, interleaved, the order of "
                        "the allocators turning by one a round (0: traces only)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--no-warm-shapes", dest="warm_shapes", action="store_false",
                   help="do not add a warm-up step for each shape the timed steps repeat "
                        "(see warm_every_shape)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--kernel-profile", type=int, default=0, metavar="N",
                   help="after the timed steps, run the last N timed shapes again under "
                        "torch.profiler and report the GPU time of their kernels per step "
                        "(kernel_profile in the JSON; 0: off)")
    p.add_argument("--gpt2-batch", type=int, default=16)
    p.add_argument("--resnet-batch", type=int, default=96)
    p.add_argument("--record-traces", metavar="DIR", default=None,
                   help="first record DIR/<workload>.trace.gz per workload in an untimed ccalloc "
                        "run of --trace-steps steps (CCALLOC_TRACE)")
    p.add_argument("--trace-steps", type=int, default=12)
    p.add_argument("--concurrent", action="store_true",
                   help="run each round's allocators side by side (one process each, started "
                        "together on the same GPU) instead of one after another, so that the "
                        "host's speed states fall on all of them alike; device-memory figures "
                        "then include the other processes' memory")
    p.add_argument("--lockstep", action="store_true",
                   help="like --concurrent, but the processes take turns step by step, one step "
                        "on the GPU at a time (the order alternating), so that the same step of "
                        "each allocator meets the same host state (on an H100 host its "
                        "per-step differences were noisier than sequential runs': the "
                        "processes disturb each other)")
    p.add_argument("--gpus", default=None, metavar="LIST",
                   help="with --concurrent or --lockstep: comma-separated CUDA device indexes "
                        "the side-by-side processes are spread over (CUDA_VISIBLE_DEVICES), one "
                        "each where there are as many, so that they share the host but not a "
                        "GPU's time slices; which allocator gets which GPU turns with the round "
                        "(each run records its 'gpu_slot')")
    p.add_argument("--time-budget", type=float, default=0.0, metavar="SECONDS",
                   help="start no run that would likely end after this many seconds from the "
                        "start (estimated from the longest run of that workload so far), and, "
                        "side by side, no turn of the start order that would not end in it; "
                        "skipped runs are reported. 0: no budget")
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
    p.add_argument("--torch-config", action="append", default=[], metavar="NAME=CONF",
                   help="an extra PyTorch allocator configuration to compare "
                        "(PYTORCH_CUDA_ALLOC_CONF syntax; 'expandable_segments:True' again "
                        "gives an A/A control); repeatable, name it in --configs")
    p.add_argument("--child", choices=("train", "max_batch"), help=argparse.SUPPRESS)
    p.add_argument("--config", help=argparse.SUPPRESS)
    p.add_argument("--workload", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    for option, key, extras in (("--ccalloc-config", "ccalloc_conf", args.ccalloc_config),
                                ("--torch-config", "torch_conf", args.torch_config)):
        for extra in extras:
            name, sep, conf = extra.partition("=")
            if not sep or not name:
                p.error(f"{option} wants NAME=CONF, got {extra!r}")
            if name in CONFIGS and CONFIGS[name] != {key: conf}:
                p.error(f"{option}: {name!r} is already a configuration")
            CONFIGS[name] = {key: conf}
    if args.warmup >= args.steps:
        p.error("--warmup must be smaller than --steps")
    if args.gpus is not None:
        try:
            args.gpus = [int(g) for g in args.gpus.split(",") if g.strip()]
        except ValueError:
            p.error(f"--gpus wants device indexes like 0,1, got {args.gpus!r}")
        if not args.gpus or any(g < 0 for g in args.gpus):
            p.error("--gpus wants one or more device indexes (0, 1, ...)")
        if args.child is None and not (args.concurrent or args.lockstep):
            p.error("--gpus spreads side-by-side processes: it needs --concurrent or --lockstep")
    if args.trace_steps < 2:
        p.error("--trace-steps must be at least 2")
    if args.rounds < 0:
        p.error("--rounds must not be negative")
    for c in args.configs.split(","):
        if c not in CONFIGS:
            p.error(f"unknown allocator config {c!r} (known: {', '.join(CONFIGS)})")
    if args.workloads == "all":
        args.workloads = ",".join(WORKLOADS)
    for w in args.workloads.split(","):
        if w and w not in WORKLOADS:
            p.error(f"unknown workload {w!r} (known: {', '.join(WORKLOADS)}, all)")
    if args.child == "train" and args.workload not in WORKLOADS:
        p.error("--child train needs --workload")
    return args


def main(argv):
    args = parse_args(argv)
    if args.child:
        result = child_train(args) if args.child == "train" else child_max_batch(args)
        print("RESULT " + json.dumps(result), flush=True)
        return 0
    configs = args.configs.split(",")
    workloads = [w for w in args.workloads.split(",") if w]
    runs, maxb, traces = [], [], []
    t0 = time.time()
    longest = {}   # workload -> longest wall time of a run so far

    def estimate(workload):
        """How long a run of `workload` will likely take: its longest so far,
        else the longest of any, else a minute."""
        return longest.get(workload, max(longest.values(), default=60.0))

    def over_budget(workload):
        estimate_s = estimate(workload)
        if args.time_budget and time.time() - t0 + estimate_s > args.time_budget:
            print(f"  skipped: ~{estimate_s:.0f} s would pass the time budget", flush=True)
            return f"time budget {args.time_budget:.0f} s"
        return None

    def report(r):
        if "error" not in r:
            print(f"  {r['workload']} / {r['config']}: mean {r['mean_step_ms']:.1f} ms "
                  f"(median {r['median_step_ms']:.1f}, max {r['max_step_ms']:.1f}), peak allocated "
                  f"{fmt_bytes(r['peak_allocated'])}, peak reserved "
                  f"{fmt_bytes(r['peak_reserved'])} ({fmt_ratio(r['reserved_over_allocated'], 4)}), "
                  f"device peak {fmt_bytes(r['device_used_peak'])} ({r['wall_s']:.0f} s)",
                  flush=True)

    # Rounds interleave the allocators (A B C A B C ...) so that drift in the
    # GPU's clocks or a neighbour's load falls on all of them alike.
    # --concurrent runs a round's allocators side by side instead, one
    # process each, started together: the host's speed states then fall on
    # all of them at once.
    # --lockstep: side by side, one step at a time (Turns).
    side_by_side = args.concurrent or args.lockstep
    groups = [configs] if side_by_side else [[c] for c in configs]

    def run_together(group, workload, rnd):
        if len(group) == 1:
            return [run_child(args, group[0], "train", workload)]
        together = [None] * len(group)
        tmp = tempfile.TemporaryDirectory() if args.lockstep else None
        turns = Turns(group, tmp.name, args.timeout) if tmp else None

        def one(i, config):
            env = dict(turns.env[config]) if turns else {}
            slot = gpu_slot(args.gpus, i, rnd)
            if slot is not None:
                env["CUDA_VISIBLE_DEVICES"] = str(slot)
            try:
                together[i] = run_child(args, config, "train", workload, env=env or None)
                if slot is not None:
                    together[i]["gpu_slot"] = slot
            except Exception as e:   # noqa: BLE001 (a thread's error must not vanish)
                together[i] = {"config": config, "workload": workload,
                               "error": repr(e), "rc": -1, "wall_s": 0.0}
        # Started in an order that turns with the round (start_order): the
        # first process up takes the GPU's context and the host's cores
        # first, and a fixed order would give that to the same allocator in
        # every round.
        order = start_order(len(group), rnd)
        threads = [threading.Thread(target=one, args=(i, group[i])) for i in order]
        if turns:
            threads.append(threading.Thread(target=turns.run))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if turns:
            turns.close()
            tmp.cleanup()
        # Which started first matters: a process started first has read up
        # to ~3% faster than its partners (an A/A control of
        # expandable_segments read 1.025 over 15 rounds of two streams where
        # its partner started first, 0.986 otherwise), so each run says
        # where it started (bench/pool_rounds.py balances over it).
        for position, i in enumerate(order):
            together[i]["start_position"] = position
        return together

    # Side by side the start order turns by one a round, and a process
    # started first reads faster (run_together): so a time budget begins a
    # new turn of the order only where the whole turn fits, and every
    # allocator starts in each place as often as the others.
    turn = len(configs) if side_by_side and len(configs) > 1 else 1
    for rnd in range(args.rounds):
        if turn > 1 and rnd > 0 and rnd % turn == 0 and args.time_budget:
            needed = min(turn, args.rounds - rnd) * sum(estimate(w) for w in workloads)
            if time.time() - t0 + needed > args.time_budget:
                reason = (f"time budget {args.time_budget:.0f} s: a whole turn of the start "
                          f"order ({turn} rounds, ~{needed:.0f} s) would not fit")
                print(f"  stopped: {reason}", flush=True)
                runs.extend({"config": c, "workload": w, "round": later, "skipped": reason}
                            for later in range(rnd, args.rounds) for w in workloads
                            for c in configs)
                break
        # One process at a time, the allocators' order turning by one each
        # round (start_order), so that none always runs first after another.
        ordered = [groups[i] for i in start_order(len(groups), rnd)]
        for workload in workloads:
            for group in ordered:
                print(f"[{time.time() - t0:6.0f}s] {workload} / {', '.join(group)}"
                      + (" in lockstep" if args.lockstep else
                         " side by side" if args.concurrent else "")
                      + (f" on GPUs {','.join(map(str, args.gpus))}" if args.gpus else "")
                      + (f" (round {rnd + 1}/{args.rounds})" if args.rounds > 1 else ""), flush=True)
                skip = over_budget(workload)
                if skip:
                    runs.extend({"config": c, "workload": workload, "round": rnd,
                                 "skipped": skip} for c in group)
                    continue
                for r in run_together(group, workload, rnd):
                    r["round"] = rnd
                    if side_by_side:
                        r["concurrent"] = len(group)
                    if args.lockstep:
                        r["lockstep"] = True
                    runs.append(r)
                    longest[workload] = max(longest.get(workload, 0.0), r["wall_s"])
                    report(r)
    if args.record_traces:
        # After the timed rounds, untimed: no timed run carries a recorder, and
        # a time budget cuts traces before timings.
        tracer = next((c for c in configs if is_ccalloc(c)), "ccalloc")
        for workload in workloads:
            print(f"[{time.time() - t0:6.0f}s] trace {workload} / {tracer} "
                  f"({args.trace_steps} steps)", flush=True)
            skip = over_budget(workload)
            if skip:
                traces.append({"workload": workload, "config": tracer, "skipped": skip})
                continue
            traces.append(record_trace(args, tracer, workload))
            longest[workload] = max(longest.get(workload, 0.0), traces[-1].get("wall_s") or 0.0)
    if args.max_batch:
        for config in configs:
            print(f"[{time.time() - t0:6.0f}s] max batch / {config}", flush=True)
            maxb.append(run_child(args, config, "max_batch"))
    print_table(runs, maxb, args.cap_gib)
    summary = summarize(runs)
    worst = worst_cases(summary, runs, workloads, configs)
    print_summary(summary, worst, args.rounds)
    verdict = protocol.verdict(runs)
    if verdict:
        protocol.print_verdict(verdict)
    moves = move_costs(runs)
    if moves:
        print_move_costs(moves)
    thirds = placement_thirds(runs)
    if thirds:
        print_placement_thirds(thirds)
    waits = wait_steps(runs)
    if waits:
        print_wait_steps(waits)
    if traces:
        print_traces(traces)
    print(f"\ntotal {time.time() - t0:.0f} s")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"args": vars(args), "runs": runs, "max_batch": maxb, "summary": summary,
                       "verdict": verdict,
                       "worst_case": worst, "move_costs": moves,
                       "placement_thirds": thirds, "wait_steps": waits,
                       "traces": traces}, f, indent=1)
        print(f"wrote {args.out}")
    failed = [r for r in runs + maxb + traces if "error" in r]
    skipped = [r for r in runs + traces if r.get("skipped")]
    if failed or skipped:
        print(f"incomplete: {len(failed)} run(s) failed, {len(skipped)} skipped")
    return 1 if failed or skipped else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

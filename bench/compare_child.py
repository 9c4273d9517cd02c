"""One run of bench/compare_training.py, in the child process the runner
starts for it (compare_training.py --child train|max_batch): the allocator
installed before CUDA starts, the memory readings, the timed training steps
with what each step cost the host and the driver, and the largest-batch
search; and --lockstep's turn-taking, both sides of its FIFOs (the parent's
Turns and the child's Turn), so that the handshake reads in one place.

Everything here but Turns runs in the child, on the GPU's machine; the parent
reads only the RESULT line a run prints (compare_training.run_child).
"""

import gc
import os
import random
import statistics
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
if BENCH not in sys.path:   # the siblings below, however this module was reached
    sys.path.insert(0, BENCH)
from compare_configs import CONFIGS, HOST_CLOCKS  # noqa: E402
from compare_workloads import BUILDERS, build_resnet50, warm_every_shape  # noqa: E402
from host_counters import ThreadCounters  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GiB = 1 << 30


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
        # With the extension ccalloc is PyTorch's whole allocator and torch.cuda's
        # statistics are its counters; in the pluggable fallback they are not.
        self.mode = ct.status()["mode"] if ct else None
        self.source = ct if self.mode == "pluggable" else torch.cuda
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
        reserved = self.source.memory_reserved()
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
        return self.source.max_memory_allocated(), self.source.max_memory_reserved()

    def stats(self):
        return self.source.memory_stats()


def kernel_time(torch, step, shapes):
    """Mean GPU time per step of the kernels (and copies, memsets) that
    `shapes` run, from torch.profiler: the device's own work, with none of
    the idle time between launches. None where the profiler sees no device
    activity (no CUPTI)."""
    from torch.profiler import ProfilerActivity, profile
    from torch.autograd import DeviceType
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for shape in shapes:
            step(shape)
        torch.cuda.synchronize()
    device_us, launches = 0.0, 0
    for e in prof.events():
        if e.device_type == DeviceType.CUDA:
            device_us += e.time_range.elapsed_us()
            launches += 1
    if launches == 0:
        return None
    return {"steps": len(shapes), "kernel_ms_per_step": device_us / 1e3 / len(shapes),
            "device_ops_per_step": launches / len(shapes)}


def host_reference_ms(repeats=5, iterations=200_000):
    """The host's speed in this process: the fastest of `repeats` timings of
    a fixed pure-Python loop, in ms. Host-bound steps move with it: one
    process of an allocator can run every step 10-20% slower than the next
    (seen on an H100, 2026-11-26), and this says whether the
    host itself was slower then, the allocator aside."""
    best = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        acc = 0
        for i in range(iterations):
            acc += i & 7
        elapsed = (time.perf_counter() - t0) * 1e3
        best = elapsed if best is None else min(best, elapsed)
    return best


# The per-step host probe: about a millisecond of the reference loop.
HOST_PROBE_ITERATIONS = 20_000


def child_train(args):
    host_ref_before = host_reference_ms()
    ct = setup_allocator(args.config, args.library)
    import torch
    torch.backends.cudnn.benchmark = False   # same algorithms for every allocator
    torch.manual_seed(args.seed)
    mem = Memory(torch, ct)
    rng = random.Random(args.seed)
    step, shapes = BUILDERS[args.workload](torch, args, rng)
    warmup = args.warmup
    if args.warm_shapes:
        shapes, warmup = warm_every_shape(shapes, args.warmup)
    times, loss = [], None
    # ccalloc's driver work in each step (maps, unmaps, waits for queued
    # work), read between steps, so a slow step can be told apart from one
    # that made driver calls (and ccalloc's own clocks, HOST_CLOCKS).
    counters = ("num_maps", "num_unmaps", "num_stream_syncs", "num_foreground_unmaps",
                "num_cross_stream_reuses", "num_device_waits", "num_waits_under_block",
                "wait_under_block_bytes", "driver_calls", "background_driver_calls",
                "driver_ns", "background_driver_ns") + HOST_CLOCKS
    step_calls, last = [], ct.ccalloc_counters() if ct else None
    # The allocator's device allocations and frees in each step, by
    # torch.cuda.memory_stats(): PyTorch's own count of its driver work
    # (for ccalloc with its extension, ccalloc's creates and releases).
    device_calls = []
    device_keys = ("num_device_alloc", "num_device_free")
    last_device = [mem.stats().get(k, 0) for k in device_keys]
    # Where a step's time goes: the host's time to launch it (until step()
    # returns) and the span of the current stream's work on the GPU (events
    # around it). A step whose launch takes about its whole time is host
    # bound, and an allocator's host cost shows there; one whose GPU span is
    # longer with one allocator than another ran slower kernels or left the
    # GPU idle waiting for launches.
    launch_ms, gpu_ms = [], []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    # The host's state at each step: the device machines' host runs the same
    # code at one speed or at half of it, switching every few seconds
    # (bench/probes/host_core_probe.py: every core shows both), so a process's mean
    # step time says as much about the states it drew as about its
    # allocator. A short probe before each step (outside its time) says which
    # state each step drew: host_adjusted_ratio takes it out of the ratio.
    probes = []
    # And what each step cost the host besides its wall time: the launching
    # thread's CPU time and the process's (the backward pass runs on
    # autograd's own thread), user-space cycles and instructions (where the
    # guest lets a process count them) and the machine's steal time, read
    # from the step's start to its end (bench/host_counters.py): whichever
    # stays put across the two states measures the step's host work without
    # them.
    host = ThreadCounters()
    host_steps = []
    turn = Turn()   # --lockstep: one step at a time among the round's processes
    for i, shape in enumerate(shapes):
        torch.cuda.synchronize()
        turn.wait()
        probes.append(host_reference_ms(repeats=1, iterations=HOST_PROBE_ITERATIONS))
        h0 = host.read()
        t0 = time.perf_counter()
        start.record()
        loss = step(shape)
        end.record()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        host_steps.append(ThreadCounters.delta(h0, host.read()))
        launch_ms.append((t1 - t0) * 1e3)
        gpu_ms.append(start.elapsed_time(end))
        if ct:
            now = ct.ccalloc_counters()
            step_calls.append([now.get(k, 0) - last.get(k, 0) for k in counters])
            last = now
        now_device = [mem.stats().get(k, 0) for k in device_keys]
        device_calls.append([a - b for a, b in zip(now_device, last_device)])
        last_device = now_device
        if i + 1 == warmup:
            mem.settle()
        else:
            mem.sample()
        turn.finished(last=i + 1 == len(shapes))
        if (i + 1) % 10 == 0:
            print(f"[child] step {i + 1}/{len(shapes)}: {times[-1] * 1e3:.1f} ms", flush=True)
    peak_alloc, peak_reserved = mem.peaks()
    stats = mem.stats()
    timed = times[warmup:]
    # After the timed steps (it slows the steps it watches): the GPU time of
    # the kernels themselves, with no idle gaps, over the last timed shapes.
    # Again after the steps: both ends of the run (the minimum of the two).
    host_ref = min(host_ref_before, host_reference_ms())
    kernel = kernel_time(torch, step, shapes[-args.kernel_profile:]) if args.kernel_profile else None
    result = {
        "host_ref_ms": host_ref,
        "config": args.config, "workload": args.workload, "steps": len(shapes),
        "warmup": warmup, "shapes": shapes,
        "step_ms": [t * 1e3 for t in times],
        "host_probe_ms": probes,
        "host_counters": {"perf": host.perf, "steps": host_steps},
        "launch_ms": launch_ms, "gpu_span_ms": gpu_ms,
        "mean_launch_ms": statistics.fmean(launch_ms[warmup:]),
        "mean_gpu_span_ms": statistics.fmean(gpu_ms[warmup:]),
        "kernel_profile": kernel,
        "mean_step_ms": statistics.fmean(timed) * 1e3,
        "median_step_ms": statistics.median(timed) * 1e3,
        "stdev_step_ms": (statistics.stdev(timed) if len(timed) > 1 else 0.0) * 1e3,
        "min_step_ms": min(timed) * 1e3, "max_step_ms": max(timed) * 1e3,
        "peak_allocated": peak_alloc, "peak_reserved": peak_reserved,
        "reserved_over_allocated": peak_reserved / peak_alloc if peak_alloc else None,
        "peak_source": "ccalloc counters" if mem.source is ct else "torch.cuda",
        "ccalloc_mode": mem.mode,
        "device_used_after": mem.sample()[0], "device_used_peak": mem.device_peak,
        "device_vs_reserved_max_gap": mem.max_gap,
        "other_device_memory": mem.other,
        "device_vs_reserved_max_gap_after_warmup": mem.max_gap_after_warmup,
        "baseline_used": mem.baseline, "device_total": mem.total,
        "num_alloc_retries": stats.get("num_alloc_retries"), "num_ooms": stats.get("num_ooms"),
        "device_calls": device_calls,
        "final_loss": float(loss.float().item()),
        "torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
    }
    if ct:
        result["ccalloc"] = ct.ccalloc_stats()
        result["step_calls"] = {"counters": list(counters), "steps": step_calls}
        # ccalloc's own peaks, next to what torch.cuda reported.
        result["ccalloc_peak_allocated"] = ct.max_memory_allocated()
        result["ccalloc_peak_reserved"] = ct.max_memory_reserved()
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


# --- --lockstep -------------------------------------------------------------------

LOCKSTEP_ENV = "CCALLOC_COMPARE_LOCKSTEP"


class Turns:
    """--lockstep's coordinator: one step at a time to each child in turn.

    A pair of FIFOs per child (go: the parent's "g"; done: the child's "d"
    after each step, "e" after its last). The parent holds both ends open
    (O_RDWR), so no open blocks on a child that never starts; a child whose
    turn brings no answer within `timeout` seconds (it died, or hangs: its
    run's watchdog kills it) or that says "e" leaves the rotation.
    """

    def __init__(self, names, directory, timeout):
        self.names, self.timeout, self.fds, self.env = list(names), timeout, {}, {}
        self.turns = {n: 0 for n in self.names}
        for i, n in enumerate(self.names):
            go, done = (os.path.join(directory, f"{i}.{k}") for k in ("go", "done"))
            os.mkfifo(go)
            os.mkfifo(done)
            self.fds[n] = (os.open(go, os.O_RDWR), os.open(done, os.O_RDWR))
            self.env[n] = {LOCKSTEP_ENV: f"{go}{os.pathsep}{done}"}

    def run(self):
        import select
        active, turn = list(self.names), 0
        while active:
            k = turn % len(active)
            for n in active[k:] + active[:k]:
                go, done = self.fds[n]
                os.write(go, b"g")
                ready, _, _ = select.select([done], [], [], self.timeout)
                if not ready or os.read(done, 1) != b"d":
                    active.remove(n)
                else:
                    self.turns[n] += 1
            turn += 1

    def close(self):
        for go, done in self.fds.values():
            os.close(go)
            os.close(done)


class Turn:
    """A child's side of --lockstep (a no-op without it)."""

    def __init__(self, env=None):
        spec = (os.environ if env is None else env).get(LOCKSTEP_ENV)
        self.go = self.done = None
        if spec:
            go, done = spec.split(os.pathsep)
            self.go, self.done = os.open(go, os.O_RDONLY), os.open(done, os.O_WRONLY)

    def wait(self):
        """Blocks until the parent gives this child its next step."""
        if self.go is not None and os.read(self.go, 1) != b"g":
            self.go = self.done = None   # the parent is gone: run on alone

    def finished(self, last=False):
        """The step's work is done; `last`: there is no further step."""
        if self.done is not None:
            os.write(self.done, b"e" if last else b"d")
            if last:
                os.close(self.done)
                os.close(self.go)
                self.go = self.done = None

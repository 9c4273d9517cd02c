#!/usr/bin/env python3
"""GPU acceptance of sleep and wake (issue 12), in one process (plus job B).

    python3 bench/sleep_wake.py --out OUTDIR/sleep.json

What it does, each check printed as "CHECK <name>: PASS|FAIL ..." and kept in
the JSON whatever the others did:

1. A reference run of model A (an MLP of ~200M parameters trained with AdamW:
   weights, gradients and optimizer state ~3.2 GiB, all made inside
   `ccalloc.torch.region(...)`), with a CUDA graph of forward+loss on a static
   batch captured after the first steps and replayed at fixed points.
2. The same run, paused with backup three times: cold (the pause pins its
   host buffer), after reserve_backup() (the buffer pinned ahead, outside the
   timed path, as the docs advise) and warm (the buffer reused). During the first pause a second
   process (job B, plain PyTorch) takes the freed memory. Checks: free device
   memory rises by the paused bytes within 1%; B allocates more than was free
   before the pause; losses and graph replays bit-identical to the reference.
3. Throughput: backup GiB/s (pause time) and restore GiB/s (resume time)
   against a plain pinned `copy_` of the same bytes each way. Checked for the
   pause after reserve_backup and the warm one; the cold one is a NOTE.
4. Pause without backup of 16 GiB in one region, timed (target <= 100 ms),
   and its resume.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import time
import traceback

# cuBLAS is deterministic per configuration with a fixed workspace; set before
# CUDA starts.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

GiB = 1 << 30
MiB = 1 << 20

results = {"checks": {}, "measurements": {}, "errors": []}


def check(name, ok, detail):
    results["checks"][name] = {"pass": bool(ok), "detail": detail}
    print(f"CHECK {name}: {'PASS' if ok else 'FAIL'} {detail}", flush=True)


def measure(name, value):
    results["measurements"][name] = value
    print(f"MEASURE {name}: {value}", flush=True)


def guarded(name, fn, *args):
    """Runs one stage; an exception is reported and the run goes on."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - every failure is reported, none hides others
        traceback.print_exc()
        results["errors"].append(f"{name}: {type(e).__name__}: {e}")
        print(f"ERROR {name}: {type(e).__name__}: {e}", flush=True)
        return None


JOB_B = r"""
import sys, torch
torch.cuda.init(); torch.empty(1, device="cuda")   # context first
print("ready", flush=True)
n = int(sys.stdin.readline())
try:
    x = torch.empty(n, dtype=torch.uint8, device="cuda")
    x.fill_(7)
    torch.cuda.synchronize()
    print("ok", n, int(x[-1].item()), flush=True)
    del x
except Exception as e:
    print("failed", type(e).__name__, str(e).replace("\n", " ")[:300], flush=True)
sys.stdin.readline()   # stays until A has resumed: B's context holds no tensor now
"""


def bits(t):
    """The exact float32 bit pattern of a scalar tensor."""
    return struct.unpack("<I", struct.pack("<f", float(t)))[0]


class Run:
    """Model A: its parameters, gradients and AdamW state in region `name`."""

    def __init__(self, torch, ct, name, width, depth, batch, seed):
        self.torch, self.ct, self.name = torch, ct, name
        torch.manual_seed(seed)
        with ct.region(name):
            layers = []
            for _ in range(depth):
                layers += [torch.nn.Linear(width, width), torch.nn.GELU()]
            self.model = torch.nn.Sequential(*layers[:-1]).cuda()
            for p in self.model.parameters():
                # The autograd engine allocates on its own thread, outside the
                # region: gradients made here and zeroed in place stay here.
                p.grad = torch.zeros_like(p)
            self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4, foreach=False)
        self.param_bytes = sum(p.numel() * p.element_size() for p in self.model.parameters())
        g = torch.Generator(device="cuda").manual_seed(seed + 1)
        self.data = [(torch.randn(batch, width, device="cuda", generator=g),
                      torch.randn(batch, width, device="cuda", generator=g)) for _ in range(4)]
        self.step_no = 0
        self.losses = []
        self.graph = None

    def step(self):
        torch = self.torch
        x, y = self.data[self.step_no % len(self.data)]
        self.opt.zero_grad(set_to_none=False)
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        with self.ct.region(self.name):  # AdamW state is created at the first step
            self.opt.step()
        self.losses.append(bits(loss.detach()))
        self.step_no += 1

    def capture(self):
        """A CUDA graph of forward + loss on a static batch (no grad)."""
        torch = self.torch
        self.static_x, self.static_y = (t.clone() for t in self.data[0])
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            for _ in range(2):
                torch.nn.functional.mse_loss(self.model(self.static_x), self.static_y)
        torch.cuda.current_stream().wait_stream(s)
        self.graph = torch.cuda.CUDAGraph()
        with torch.no_grad(), torch.cuda.graph(self.graph):
            self.static_loss = torch.nn.functional.mse_loss(self.model(self.static_x),
                                                            self.static_y)

    def replay(self):
        self.graph.replay()
        self.torch.cuda.synchronize()
        return bits(self.static_loss)

    def close(self):
        self.graph = None
        del self.model, self.opt, self.data
        self.torch.cuda.synchronize()


def region_live_bytes(ct, name):
    """Bytes of allocated blocks in region `name` (from ccalloc's snapshot)."""
    plugin = ct._require_plugin()
    pool = (1 << 63) | ct._regions[name]
    total = 0
    for seg in plugin.snapshot(0)["segments"]:
        if seg.get("pool_id") == pool:
            total += sum(b["size"] for b in seg["blocks"] if b["state"] == "active_allocated")
    return total


def pinned_copy_rates(torch, nbytes, reps=3):
    """GiB/s of a plain pinned copy_ of nbytes, device->host and host->device (best of reps)."""
    dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    d2h, h2d = [], []
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        host.copy_(dev, non_blocking=True)
        torch.cuda.synchronize()
        d2h.append(nbytes / GiB / (time.perf_counter() - t))
        t = time.perf_counter()
        dev.copy_(host, non_blocking=True)
        torch.cuda.synchronize()
        h2d.append(nbytes / GiB / (time.perf_counter() - t))
    del dev, host
    return max(d2h), max(h2d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--width", type=int, default=8192)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--steps", type=int, default=6, help="steps between pauses")
    ap.add_argument("--big-gib", type=int, default=16)
    args = ap.parse_args()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)

    import ccalloc.torch as ct
    info = ct.enable()
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.use_deterministic_algorithms(True)
    results["mode"] = info.get("mode")
    results["device"] = torch.cuda.get_device_name(0)
    results["torch"] = torch.__version__
    print("ccalloc mode:", info.get("mode"), "| device:", results["device"], "| torch",
          torch.__version__, flush=True)

    def stats():
        return ct.ccalloc_stats(0)

    def free_now():
        torch.cuda.synchronize()
        return torch.cuda.mem_get_info()[0]

    # Job B starts first: its CUDA context (~0.5 GiB) is taken before any
    # measurement of free memory.
    job_b = subprocess.Popen([sys.executable, "-c", JOB_B], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)  # plain PyTorch: no enable()
    ready = job_b.stdout.readline().strip()
    print("job B:", ready, flush=True)

    n1 = args.steps
    # ---- 1. reference: no pause -------------------------------------------
    ref = {}

    def reference():
        r = Run(torch, ct, "ref", args.width, args.depth, args.batch, seed=1234)
        for _ in range(n1):
            r.step()
        r.capture()
        ref["g0"] = r.replay()
        for _ in range(n1):
            r.step()
        ref["g1"] = r.replay()
        for _ in range(n1):
            r.step()
        ref["g2"] = r.replay()
        ref["losses"] = r.losses
        r.close()
        del r
        torch.cuda.empty_cache()

    guarded("reference run", reference)

    # ---- 2. model A with two pauses ---------------------------------------
    a = guarded("build A", Run, torch, ct, "A", args.width, args.depth, args.batch, 1234)
    if a is None:
        return finish(args, job_b)
    got = {}

    def first_steps():
        for _ in range(n1):
            a.step()
        live = region_live_bytes(ct, "A")
        want = 4 * a.param_bytes  # weights, grads, exp_avg, exp_avg_sq
        check("region_holds_model_A", want <= live <= want + 256 * MiB,
              f"region A live {live / GiB:.3f} GiB, weights+grads+AdamW state "
              f"{want / GiB:.3f} GiB")
        a.capture()
        got["g0"] = a.replay()
        return live

    live = guarded("first steps", first_steps)
    grad_ptrs = [p.grad.data_ptr() for p in a.model.parameters()]

    def pause_cycle(label, with_job_b):
        reserved0 = torch.cuda.memory_reserved(0)
        free0 = free_now()
        t = time.perf_counter()
        given = ct.pause("A", backup=True, device=0)
        t_pause = time.perf_counter() - t
        free1 = free_now()
        reserved1 = torch.cuda.memory_reserved(0)
        s = stats()
        backed = s["backup_bytes"]
        measure(f"{label}_pause_s", round(t_pause, 4))
        measure(f"{label}_paused_bytes", given)
        measure(f"{label}_backup_bytes", backed)
        measure(f"{label}_backup_host_bytes", s["backup_host_bytes"])
        rise = free1 - free0
        check(f"{label}_free_memory_rises_by_paused_bytes",
              given > 0 and abs(rise - given) <= 0.01 * given,
              f"free +{rise / GiB:.4f} GiB, paused {given / GiB:.4f} GiB "
              f"({100.0 * (rise - given) / max(given, 1):+.3f}%)")
        check(f"{label}_reserved_drops_by_paused_bytes", reserved0 - reserved1 == given,
              f"reserved {reserved0 / GiB:.4f} -> {reserved1 / GiB:.4f} GiB")
        check(f"{label}_backup_holds_region_live_bytes", backed == live,
              f"backup {backed} bytes, region A live {live} bytes")
        if with_job_b and job_b.poll() is None:
            want = free1 - 512 * MiB
            job_b.stdin.write(f"{want}\n")
            job_b.stdin.flush()
            answer = job_b.stdout.readline().strip()
            check("job_B_uses_the_freed_memory",
                  answer.startswith("ok") and want > free0,
                  f"B asked {want / GiB:.3f} GiB (free before the pause "
                  f"{free0 / GiB:.3f} GiB): {answer}")
            job_b.stdin.write("done\n")
            job_b.stdin.flush()
            job_b.wait(timeout=60)
        free_now()
        t = time.perf_counter()
        taken = ct.resume("A", device=0)
        t_resume = time.perf_counter() - t
        measure(f"{label}_resume_s", round(t_resume, 4))
        measure(f"{label}_resumed_bytes", taken)
        backup_rate = backed / GiB / t_pause
        restore_rate = backed / GiB / t_resume
        measure(f"{label}_backup_GiBps", round(backup_rate, 2))
        measure(f"{label}_restore_GiBps", round(restore_rate, 2))
        return backed, backup_rate, restore_rate

    cold = guarded("cold pause (with job B)", pause_cycle, "cold", True)
    if job_b.poll() is None:
        job_b.kill()

    def middle():
        got["g0_after_resume"] = a.replay()
        check("graph_replay_after_resume_bit_identical",
              got["g0_after_resume"] == got.get("g0") == ref.get("g0"),
              f"graph loss bits {got['g0_after_resume']:#010x}, before pause "
              f"{got.get('g0', 0):#010x}, reference {ref.get('g0', 0):#010x}")
        check("grads_kept_their_addresses",
              grad_ptrs == [p.grad.data_ptr() for p in a.model.parameters()],
              "p.grad pointers before the pause equal those after resume and further steps")
        for _ in range(n1):
            a.step()
        got["g1"] = a.replay()

    guarded("steps after the cold pause", middle)

    def reserve_ahead():
        # The cold pause's buffer goes (empty_cache frees the buffer of a
        # running region), then reserve_backup pins a fresh one, timed apart.
        torch.cuda.empty_cache()
        measure("host_bytes_before_reserve_backup", stats()["backup_host_bytes"])
        t = time.perf_counter()
        pinned = ct.reserve_backup("A", device=0)
        measure("reserve_backup_s", round(time.perf_counter() - t, 4))
        measure("reserve_backup_bytes", pinned)
        return pinned

    guarded("reserve_backup", reserve_ahead)
    reserved = guarded("first pause after reserve_backup", pause_cycle, "reserved", False)
    warm = guarded("warm pause", pause_cycle, "warm", False)

    def last():
        for _ in range(n1):
            a.step()
        got["g2"] = a.replay()
        same = a.losses == ref.get("losses")
        first_diff = next((i for i, (x, y) in enumerate(zip(a.losses, ref.get("losses", [])))
                           if x != y), None)
        check("losses_bit_identical_to_reference", same,
              f"{len(a.losses)} losses; first difference at step {first_diff}")
        check("graph_replays_bit_identical_to_reference",
              (got.get("g1"), got.get("g2")) == (ref.get("g1"), ref.get("g2")),
              f"graph after pause 1: {got.get('g1')} vs {ref.get('g1')}; after pause 2: "
              f"{got.get('g2')} vs {ref.get('g2')}")

    guarded("steps after the warm pause", last)

    # ---- 3. throughput against a plain pinned copy_ -----------------------
    def throughput():
        nbytes = (cold or reserved or warm)[0]
        d2h, h2d = pinned_copy_rates(torch, nbytes)
        measure("pinned_copy_d2h_GiBps", round(d2h, 2))
        measure("pinned_copy_h2d_GiBps", round(h2d, 2))
        for label, r in (("cold", cold), ("reserved", reserved), ("warm", warm)):
            if r is None:
                continue
            _, up, down = r
            print(f"NOTE {label}: backup {up:.2f} GiB/s ({100 * up / d2h:.0f}% of pinned "
                  f"copy_ {d2h:.2f}), restore {down:.2f} GiB/s ({100 * down / h2d:.0f}% of "
                  f"{h2d:.2f})", flush=True)
        if warm is not None:
            check("warm_backup_at_least_80pct_of_pinned_copy", warm[1] >= 0.8 * d2h,
                  f"{warm[1]:.2f} vs {d2h:.2f} GiB/s")
            check("warm_restore_at_least_80pct_of_pinned_copy", warm[2] >= 0.8 * h2d,
                  f"{warm[2]:.2f} vs {h2d:.2f} GiB/s")
        if reserved is not None:
            check("first_backup_after_reserve_backup_at_least_80pct_of_pinned_copy",
                  reserved[1] >= 0.8 * d2h, f"{reserved[1]:.2f} vs {d2h:.2f} GiB/s")
        # The cold pause pins its buffer (cuMemHostAlloc, seconds for GiBs):
        # a NOTE above, not a check; reserve_backup() is the way around it.

    guarded("throughput", throughput)

    def drop_a():
        a.close()
        torch.cuda.empty_cache()
        measure("backup_host_bytes_after_empty_cache", stats()["backup_host_bytes"])

    guarded("drop A", drop_a)

    # ---- 4. pause without backup of 16 GiB --------------------------------
    def big():
        chunk = 2 * GiB
        with ct.region("big"):
            ts = [torch.empty(chunk, dtype=torch.uint8, device="cuda")
                  for _ in range(args.big_gib * GiB // chunk)]
        torch.cuda.synchronize()
        t = time.perf_counter()
        given = ct.pause("big", backup=False, device=0)
        t_pause = time.perf_counter() - t
        measure("big_paused_bytes", given)
        measure("big_pause_ms", round(1000 * t_pause, 2))
        check(f"pause_without_backup_{args.big_gib}GiB_le_100ms",
              given >= args.big_gib * GiB and t_pause <= 0.100,
              f"{given / GiB:.2f} GiB in {1000 * t_pause:.1f} ms")
        t = time.perf_counter()
        ct.resume("big", device=0)
        measure("big_resume_ms", round(1000 * (time.perf_counter() - t), 2))
        ts[0].fill_(1)
        torch.cuda.synchronize()
        del ts
        torch.cuda.empty_cache()

    guarded("16 GiB pause", big)
    return finish(args, job_b)


def finish(args, job_b):
    if job_b is not None and job_b.poll() is None:
        job_b.kill()
    checks = results["checks"]
    failed = [k for k, v in checks.items() if not v["pass"]]
    results["passed"] = len(checks) - len(failed)
    results["failed"] = failed
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"SUMMARY {results['passed']}/{len(checks)} checks passed; failed: {failed}; "
          f"errors: {results['errors']}", flush=True)
    return 0 if not failed and not results["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())

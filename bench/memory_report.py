#!/usr/bin/env python3
"""Where did my memory go, on the GPU: the profile part of scripts/gpu_round.sh.

    python3 bench/memory_report.py --out DIR

Two training scripts of our own under ccalloc.torch.profile(): a seq2seq
with attention (GRU encoder and decoder, Adam, a new random length per
batch) and a conv UNet (Adam). For each: the per-step report (DIR/<model>.txt,
printed), the plot (.svg), the JSON, and a check that the kinds add up to
torch.cuda.memory_allocated() at every phase boundary (any mismatch is
printed and fails the run). Then: the profiler's overhead (mean step time
with and without it, interleaved rounds after warm-up; each case in a
process of its own, so that no case inherits another's allocator, caches or
garbage: a case measured after another in the same process once ran its
"off" rounds 27% slower than the same case measured first), an out-of-memory
error under the profiler (a memory limit), and a memory-history dump of two
seq2seq steps with Python frames and ccalloc's tags (DIR/history.pickle,
plus MemoryViz.js from the installed torch and, when it builds offline,
trace_plot's HTML) for scripts/render_memory_viz.sh.

Each part prints "=== <part>: PASS|FAIL ..." and runs even if one before it
failed; the exit status is non-zero if any failed.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import ccalloc.torch as ct  # noqa: E402
from gc_clock import GcClock  # noqa: E402

RESULTS = {}


def part(name):
    def wrap(fn):
        def run(*args, **kwargs):
            print(f"\n=== {name}: start", flush=True)
            t0 = time.time()
            try:
                out = fn(*args, **kwargs)
                ok = out is not False and not (isinstance(out, dict) and out.get("ok") is False)
            except Exception:
                traceback.print_exc()
                ok, out = False, None
            RESULTS[name] = "PASS" if ok else "FAIL"
            try:
                release()
            except Exception:
                traceback.print_exc()
            print(f"=== {name}: {RESULTS[name]} ({time.time() - t0:.1f}s)", flush=True)
            return out
        return run
    return wrap


# --- models ------------------------------------------------------------------------

def seq2seq_model(torch, vocab=32000, hidden=1024, layers=2):
    nn = torch.nn

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.query = nn.Linear(hidden, hidden, bias=False)
            self.combine = nn.Linear(2 * hidden, hidden)

        def forward(self, dec, enc, mask):
            scores = torch.bmm(self.query(dec), enc.transpose(1, 2))          # B,T,S
            scores = scores.masked_fill(~mask[:, None, :], float("-inf"))
            ctx = torch.bmm(scores.softmax(-1), enc)                           # B,T,H
            return torch.tanh(self.combine(torch.cat([dec, ctx], -1)))

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_embed = nn.Embedding(vocab, hidden)
            self.tgt_embed = nn.Embedding(vocab, hidden)
            self.encoder = nn.GRU(hidden, hidden, layers, batch_first=True)
            self.decoder = nn.GRU(hidden, hidden, layers, batch_first=True)
            self.attention = Attention()
            self.generator = nn.Linear(hidden, vocab)

        def forward(self, src, src_mask, tgt):
            enc, h = self.encoder(self.src_embed(src))
            dec, _ = self.decoder(self.tgt_embed(tgt), h)
            return self.generator(self.attention(dec, enc, src_mask))

    return Seq2Seq()


def seq2seq_batch(torch, step, batch=32, vocab=32000, device="cuda"):
    # Variable lengths: each step its own source and target lengths, and
    # padding inside the batch.
    g = torch.Generator().manual_seed(1000 + step)
    s_len = int(torch.randint(40, 120, (1,), generator=g))
    t_len = int(torch.randint(40, 120, (1,), generator=g))
    lengths = torch.randint(s_len // 2, s_len + 1, (batch,), generator=g)
    src = torch.randint(1, vocab, (batch, s_len), generator=g)
    mask = torch.arange(s_len)[None, :] < lengths[:, None]
    tgt = torch.randint(1, vocab, (batch, t_len + 1), generator=g)
    return (src.to(device), mask.to(device), tgt[:, :-1].to(device), tgt[:, 1:].to(device))


def seq2seq_step(torch, model, opt, step):
    src, mask, tgt_in, tgt_out = seq2seq_batch(torch, step)
    logits = model(src, mask, tgt_in)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def unet_model(torch, base=64, depth=4):
    nn = torch.nn

    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                             nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            chans = [base * 2 ** i for i in range(depth + 1)]
            self.stem = block(3, chans[0])
            self.down = nn.ModuleList(block(chans[i], chans[i + 1]) for i in range(depth))
            self.up = nn.ModuleList(nn.ConvTranspose2d(chans[i + 1], chans[i], 2, stride=2)
                                    for i in reversed(range(depth)))
            self.merge = nn.ModuleList(block(2 * chans[i], chans[i]) for i in reversed(range(depth)))
            self.head = nn.Conv2d(chans[0], 3, 1)
            self.pool = nn.MaxPool2d(2)

        def forward(self, x):
            skips = [self.stem(x)]
            for d in self.down:
                skips.append(d(self.pool(skips[-1])))
            x = skips.pop()
            for up, merge in zip(self.up, self.merge):
                x = merge(torch.cat([up(x), skips.pop()], 1))
            return self.head(x)

    return UNet()


def unet_step(torch, model, opt, step, batch=8, size=256):
    g = torch.Generator().manual_seed(2000 + step)
    x = torch.randn(batch, 3, size, size, generator=g).cuda()
    loss = (model(x) - x).square().mean()   # a denoising-style target
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


MODELS = {
    "seq2seq": (seq2seq_model, seq2seq_step),
    "unet": (unet_model, unet_step),
}


def build(torch, name):
    make, step = MODELS[name]
    torch.manual_seed(0)
    model = make(torch).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    return model, opt, step


def close(prof):
    """prof.close(), then fail loudly if anything of a profiler is still
    attached (hooks, the backward wrapper, saved-tensor hooks): a profiler
    left attached would slow every later measurement, "off" rounds included."""
    prof.close()
    left = prof.leftovers()
    if left:
        raise RuntimeError(f"profiler still attached after close(): {', '.join(left)}")


def release():
    """Between parts: what a part left is garbage once it returned."""
    import gc
    import torch
    gc.collect()
    torch.cuda.synchronize()
    ct.empty_cache()


# --- parts ---------------------------------------------------------------------------

def profile_model(torch, name, out, steps):
    model, opt, step = build(torch, name)
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    print(f"{name}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f} M parameters, "
          f"{params / 2**20:.0f} MiB")
    prof = ct.profile(model, opt, check_torch=True)
    try:
        for i in range(steps):
            with prof.step():
                step(torch, model, opt, i)
    finally:
        close(prof)
    paths = prof.save(os.path.join(out, name))
    print(prof.report())
    problems = prof.problems()
    n = len(prof.samples)
    print(f"{name}: {n} phase boundaries checked against torch.cuda.memory_allocated(): "
          f"{len(problems)} mismatches")
    for p in problems:
        print(f"  MISMATCH step {p[0]} {p[1]}: {p[2]}")
    print(f"{name}: wrote {', '.join(paths.values())}")
    return not problems and n > 0


def mean_step_time(torch, model, opt, step, steps, first, prof=None):
    """Mean seconds per step over `steps` steps run back to back (one
    synchronize before and after: throughput, as in training, not the
    latency of a step started on an idle GPU). With a profiler, reading its
    samples at the end (what it defers from the boundaries to then) is
    timed too: the user pays for it once the report is read."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(steps):
        if prof is None:
            step(torch, model, opt, first + i)
        else:
            with prof.step():
                step(torch, model, opt, first + i)
    if prof is not None:
        len(prof.samples)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / steps


BUDGET = 1.02


def overhead(torch, name, rounds, steps, **profile_kwargs):
    """Mean step time with and without the profiler (the settings a user
    gets from ct.profile(model, opt) unless profile_kwargs say otherwise):
    `rounds` rounds of `steps` steps each way after a warm-up of both, the
    order alternating per round, the same batches both ways, each round
    started after a full garbage collection (gc.collect(), untimed), so that
    one due from before lands in neither mode's round. The part passes when
    the ratio of the means is within BUDGET ("ok")."""
    import gc
    model, opt, step = build(torch, name)
    mean_step_time(torch, model, opt, step, 5, 0)   # warm-up (cudnn, caches, Adam state)
    prof = ct.profile(model, opt, **profile_kwargs)
    try:
        mean_step_time(torch, model, opt, step, 5, 0, prof)
    finally:
        close(prof)
    off, on, host, boundaries, by_boundary = [], [], 0.0, 0, {}
    clock = GcClock()
    try:
        for r in range(rounds):
            for mode in (("off", "on") if r % 2 == 0 else ("on", "off")):
                gc.collect()
                clock.mode = mode
                # Same batches for both: variable lengths vary with the step number.
                if mode == "off":
                    off.append(mean_step_time(torch, model, opt, step, steps, 100))
                    clock.mode = None
                    continue
                prof = ct.profile(model, opt, **profile_kwargs)
                try:
                    on.append(mean_step_time(torch, model, opt, step, steps, 100, prof))
                finally:
                    clock.mode = None
                    close(prof)
                host += prof.host_seconds
                boundaries += prof.boundaries
                for k, v in getattr(prof, "host_seconds_by_boundary", {}).items():
                    by_boundary[k] = by_boundary.get(k, 0.0) + v
    finally:
        clock.close()
    m_off, m_on = sum(off) / len(off), sum(on) / len(on)
    ratio = m_on / m_off
    per_round = sorted(b / a for a, b in zip(off, on))
    settings = ", ".join(f"{k}={v}" for k, v in profile_kwargs.items()) or "defaults"
    ok = ratio <= BUDGET
    print(f"{name} overhead ({settings}): off {m_off * 1e3:.2f} ms, on {m_on * 1e3:.2f} ms per step "
          f"(mean of {rounds} interleaved rounds of {steps} steps each way, after warm-up): "
          f"ratio {ratio:.4f} ({(ratio - 1) * 100:+.2f}%); per-round ratios "
          f"min {per_round[0]:.4f} median {per_round[len(per_round) // 2]:.4f} max {per_round[-1]:.4f}; "
          f"off rounds {min(off) * 1e3:.2f}..{max(off) * 1e3:.2f} ms, on rounds "
          f"{min(on) * 1e3:.2f}..{max(on) * 1e3:.2f} ms; profiler's own time at phase boundaries "
          f"{host / (rounds * steps) * 1e3:.3f} ms per step ({boundaries / (rounds * steps):.0f} "
          f"boundaries per step): {'PASS' if ok else 'FAIL'} against {(BUDGET - 1) * 100:.0f}%")
    n = rounds * steps
    gcs = {m: (clock.count.get(m, 0), clock.full.get(m, 0), clock.seconds.get(m, 0.0)) for m in ("off", "on")}
    print(f"{name} garbage collections in the overhead rounds ({settings}): "
          + ", ".join(f"{m} {c / n:.2f} per step ({f} full), {t / n * 1e3:.3f} ms per step"
                      for m, (c, f, t) in gcs.items()))
    # Which boundaries cost (by the phase each opens): the one opening
    # forward often runs while the GPU waits for the host.
    by_us = {k: v / n * 1e6 for k, v in by_boundary.items()}
    print(f"{name} profiler's time by boundary ({settings}), us per step: "
          + ", ".join(f"{k} {v:.0f}" for k, v in by_us.items()))
    return {"model": name, "settings": settings, "off_ms": m_off * 1e3, "on_ms": m_on * 1e3,
            "ratio": ratio, "ok": ok, "round_ratios": per_round,
            "off_rounds_ms": [t * 1e3 for t in off], "on_rounds_ms": [t * 1e3 for t in on],
            "boundary_ms_per_step": host / (rounds * steps) * 1e3,
            "boundaries_per_step": boundaries / (rounds * steps), "boundary_us_per_step": by_us,
            "gc": {m: {"collections": c, "full": f, "ms_per_step": t / n * 1e3} for m, (c, f, t) in gcs.items()}}


def overhead_in_child(args, name, **profile_kwargs):
    """overhead() in a new process (this script with --overhead-case): its
    output goes to ours; its result comes back as JSON."""
    fd, path = tempfile.mkstemp(prefix=f"overhead_{name}_", suffix=".json", dir=args.out)
    os.close(fd)
    cmd = [sys.executable, os.path.abspath(__file__), "--out", args.out, "--rounds", str(args.rounds),
           "--round-steps", str(args.round_steps), "--overhead-case", name,
           "--overhead-kwargs", json.dumps(profile_kwargs), "--overhead-json", path]
    sys.stdout.flush()
    r = subprocess.run(cmd, timeout=600)
    try:
        with open(path) as f:
            text = f.read()
    finally:
        os.remove(path)
    if r.returncode != 0 or not text:
        print(f"{name}: the overhead process exited with {r.returncode}")
        return False
    return json.loads(text)


def oom_under_profiler(torch):
    model, opt, step = build(torch, "unet")
    prof = ct.profile(model, opt)
    ct.set_memory_limit(int(ct.memory_reserved() + (1 << 30)))
    message = None
    try:
        for i in range(2):
            with prof.step():
                unet_step(torch, model, opt, i, batch=32)
    except torch.OutOfMemoryError as e:
        message = str(e)
    finally:
        prof.close()
        ct.set_memory_limit(0)
    if message is None:
        print("no out-of-memory error under a 1 GiB headroom limit")
        return False
    print("torch.OutOfMemoryError under the profiler:\n" + message)
    return "ccalloc profiler: out of memory" in message and "live by kind" in message


def history(torch, out):
    model, opt, step = build(torch, "seq2seq")
    step(torch, model, opt, 0)           # Adam state exists before recording
    prof = ct.profile(model, opt)
    torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python",
                                             max_entries=40000)
    try:
        for i in range(2):
            with prof.step():
                step(torch, model, opt, i + 1)
        path = os.path.join(out, "history.pickle")
        snap = ct.snapshot()
        from ccalloc import history as hist
        hist.dump(snap, path)
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
        prof.close()
    entries = [e for t in snap["device_traces"] for e in t]
    tagged = [e for e in entries if e.get("frames") and e["frames"][0].get("filename") == "ccalloc tag"]
    with_py = [e for e in entries if any(f.get("filename", "").endswith(".py") for f in e.get("frames", []))]
    tags = sorted({e["frames"][0]["name"] for e in tagged})
    print(f"history: {len(entries)} trace entries, {len(tagged)} with a ccalloc tag frame, "
          f"{len(with_py)} with Python frames; tags seen: {tags[:12]}{' ...' if len(tags) > 12 else ''}")
    print(f"history: {os.path.getsize(path)} bytes in {path}")
    viz = os.path.join(os.path.dirname(torch.__file__), "utils", "viz", "MemoryViz.js")
    if os.path.exists(viz):
        shutil.copy(viz, os.path.join(out, "MemoryViz.js"))
        print(f"history: copied {viz}")
    else:
        print(f"history: no {viz} in this torch")
    html = os.path.join(out, "trace_plot.html")
    r = subprocess.run([sys.executable, "-m", "torch.cuda._memory_viz", "trace_plot", path, "-o", html],
                       capture_output=True, text=True, timeout=60)
    print(f"history: trace_plot exit {r.returncode} {r.stderr[-500:]}")
    return bool(tagged) and bool(with_py) and any(t.startswith("forward") for t in tags) and \
        "backward" in tags


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=12, help="overhead rounds (interleaved; a round of the UNet varies by up to +-15%%)")
    ap.add_argument("--round-steps", type=int, default=20)
    ap.add_argument("--parts", default="report,overhead,oom,history",
                    help="also overhead_exact: the overhead with exact_saved=True")
    # What the overhead part runs in a process of its own per case.
    ap.add_argument("--overhead-case", help=argparse.SUPPRESS)
    ap.add_argument("--overhead-kwargs", default="{}", help=argparse.SUPPRESS)
    ap.add_argument("--overhead-json", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    import torch
    info = ct.enable()
    if args.overhead_case:
        r = overhead(torch, args.overhead_case, args.rounds, args.round_steps,
                     **json.loads(args.overhead_kwargs))
        with open(args.overhead_json, "w") as f:
            json.dump(r, f)
        return 0
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name()}, "
          f"ccalloc mode {info['mode']}, allocator {torch.cuda.memory.get_allocator_backend()}")
    parts = args.parts.split(",")
    summary = {}
    if "report" in parts:
        for name in MODELS:
            part(f"report_{name}")(profile_model)(torch, name, args.out, args.steps)
    if "overhead" in parts:
        results = []
        for name in MODELS:
            # What a user gets (the verdict), then per-phase tags only (for comparison).
            r = part(f"overhead_{name}")(overhead_in_child)(args, name)
            if r:
                results.append(r)
            r = part(f"overhead_{name}_phase_tags_only")(overhead_in_child)(args, name, module_tags=False)
            if r:
                results.append(r)
            if "overhead_exact" in parts:   # the strict saved-for-backward kind (costly)
                r = part(f"overhead_{name}_exact_saved")(overhead_in_child)(args, name, exact_saved=True)
                if r:
                    results.append(r)
        summary["overhead"] = results
        defaults = [r for r in results if r["settings"] == "defaults"]
        if defaults:
            worst = max(r["ratio"] for r in defaults)
            print(f"overhead: worst ratio with the default settings {worst:.4f} ({(worst - 1) * 100:+.2f}%); "
                  f"{'within' if worst <= BUDGET else 'ABOVE'} the {(BUDGET - 1) * 100:.0f}% budget")
    if "oom" in parts:
        part("oom")(oom_under_profiler)(torch)
    if "history" in parts:
        part("history")(history)(torch, args.out)
    summary["results"] = RESULTS
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print("\n=== memory_report summary: " + ", ".join(f"{k} {v}" for k, v in RESULTS.items()))
    return 0 if RESULTS and all(v == "PASS" for v in RESULTS.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

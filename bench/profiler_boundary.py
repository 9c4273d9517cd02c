"""Host time per phase boundary of the memory profiler on synthetic models
(CPU torch; the block lookups go to the plugin's simulated device: each CPU
pointer seen gets a simulated block of its own on first sight):

  linear500: 500 Linear layers, 1,000 parameters, ~3,000 Adam state tensors;
  gru64: a GRUCell unrolled over 64 time steps (thousands of tensors saved
      for backward per step: what exact_saved=True pays a Python call for);
  decoder50: a seq2seq-style decoder run once per target token (50 tokens: a
      GRUCell, an attention module with its two Linears and an output Linear
      per token, 250 module calls per forward): the per-module-call hooks'
      cost, as in the GPU seq2seq whose hooks fire thousands of times a step.

Each case runs with the profiler off too: "step wall" on vs off is the whole
cost (hooks per module call, pack hooks, boundaries). "us per boundary" is
the profiler's host_seconds per boundary (the step's first sample counts as
one since the profiler times it: 8 a step; 7 before); "by boundary" splits
it by the phase each opens; "less the simulation's block
mallocs" takes out what mapping new CPU pointers to simulated blocks cost
(a plugin malloc each, the bench's own, where a GPU has the block already).
"gc in boundaries" counts the garbage collections that started inside a
boundary: their time is billed to the boundary whose allocation crossed the
collector's threshold, and one full collection (tens of ms in a process
with torch loaded) moves a run's mean by tens of us per boundary. "per
module call" is the forward's wall time inside a profiled step less the
boundaries' own time, less the same forward's time with no profiler
attached, divided by the module calls (median of interleaved rounds; noisy
at the 0.5 us level).

    CCALLOC_TORCH_SIMULATE=$((4<<30)) /usr/bin/python3 bench/profiler_boundary.py
"""
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("CCALLOC_TORCH_SIMULATE", str(4 << 30))
import torch  # noqa: E402
import ccalloc  # noqa: E402
from ccalloc.profiler import MemoryProfiler, _CcallocView  # noqa: E402
from gc_clock import GcClock  # noqa: E402

DEV = 5


def _on_device(name):
    """_CcallocView's method `name` run with the simulated device's index
    (the view says "cpu" otherwise, so that the profiler takes CPU optimizer
    state too)."""
    def method(self, *args):
        self.device = DEV
        try:
            return getattr(_CcallocView, name)(self, *args)
        finally:
            self.device = "cpu"
    return method


class SimView(_CcallocView):
    def __init__(self, plugin):
        super().__init__(plugin, DEV)
        self.device = "cpu"
        self.sim = _Sim(plugin)
        self.sim_seconds = 0.0     # mapping CPU pointers to simulated blocks (a malloc each new one)

    def blocks(self, ptrs):
        t0 = time.perf_counter()
        out = list(map(self.sim.__getitem__, ptrs))   # C-level: the bench's own cost stays small
        self.sim_seconds += time.perf_counter() - t0
        self.device = DEV
        try:
            return super().blocks(out)
        finally:
            self.device = "cpu"

    def largest_free(self):
        return 0

    counters = _on_device("counters")
    reset_peaks = _on_device("reset_peaks")
    tag_usage = _on_device("tag_usage")
    if hasattr(_CcallocView, "tag_read"):   # (a profiler from before it, for comparisons)
        tag_read = _on_device("tag_read")
    if hasattr(_CcallocView, "read"):       # one call per boundary (likewise)
        read = _on_device("read")


class _Sim(dict):
    def __init__(self, plugin):
        super().__init__()
        self.plugin = plugin

    def __missing__(self, ptr):
        y = self[ptr] = self.plugin.malloc(4096, device=DEV)
        return y


class GRU64(torch.nn.Module):
    def __init__(self, hidden=32, steps=64):
        super().__init__()
        self.cell = torch.nn.GRUCell(hidden, hidden)
        self.out = torch.nn.Linear(hidden, hidden)
        self.steps = steps

    def forward(self, x):
        h = torch.zeros_like(x)
        for _ in range(self.steps):
            h = self.cell(x, h)
        return self.out(h)


class Attention(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.query = torch.nn.Linear(hidden, hidden, bias=False)
        self.combine = torch.nn.Linear(2 * hidden, hidden)

    def forward(self, dec, enc):
        scores = torch.bmm(enc, self.query(dec)[:, :, None])[:, :, 0]        # B,S
        ctx = torch.bmm(scores.softmax(-1)[:, None, :], enc)[:, 0]           # B,H
        return torch.tanh(self.combine(torch.cat([dec, ctx], -1)))


class Decoder50(torch.nn.Module):
    def __init__(self, hidden=16, steps=50):
        super().__init__()
        self.cell = torch.nn.GRUCell(hidden, hidden)
        self.attention = Attention(hidden)
        self.out = torch.nn.Linear(hidden, hidden)
        self.steps = steps

    def forward(self, x, enc):
        h = enc[:, 0]
        total = 0
        for _ in range(self.steps):
            h = self.cell(x, h)
            total = total + self.out(self.attention(h, enc))
        return total


def make(case):
    """(model, the forward's arguments)"""
    torch.manual_seed(0)
    if case == "linear500":
        return torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(500)]), (torch.randn(2, 4),)
    if case == "decoder50":
        return Decoder50(), (torch.randn(4, 16), torch.randn(4, 8, 16))
    return GRU64(), (torch.randn(8, 32),)


def module_calls(model, args):
    """Module calls in one forward of model (the model itself not counted)."""
    n = [0]
    h = torch.nn.modules.module.register_module_forward_pre_hook(lambda m, a: n.__setitem__(0, n[0] + 1))
    try:
        model(*args)
    finally:
        h.remove()
    return n[0] - 1


def hook_cost(case, rounds=15, reps=10, **kwargs):
    """us per module call that the profiler adds to a forward in a step."""
    model, args = make(case)
    calls = module_calls(model, args) * reps
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    off, on = [], []
    for r in range(rounds):
        for mode in (("off", "on") if r % 2 == 0 else ("on", "off")):
            if mode == "off":
                t0 = time.perf_counter()
                for _ in range(reps):
                    model(*args)
                off.append(time.perf_counter() - t0)
                continue
            prof = MemoryProfiler(model, opt, view=SimView(ccalloc.load_library()), **kwargs)
            with prof.step():
                h0 = prof.host_seconds
                t0 = time.perf_counter()
                for _ in range(reps):
                    model(*args)
                on.append(time.perf_counter() - t0 - (prof.host_seconds - h0))
            prof.close()
    off.sort()
    on.sort()
    per = (on[rounds // 2] - off[rounds // 2]) / calls
    settings = ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "defaults"
    print(f"{case} ({settings}): {per * 1e6:.2f} us per module call ({calls // reps} calls per forward; "
          f"forward {off[rounds // 2] / reps * 1e3:.2f} ms off, "
          f"{on[rounds // 2] / reps * 1e3:.2f} ms on less boundaries)")


def _gc_in_boundaries(prof):
    """A GcClock counting the garbage collections that start inside the
    profiler's phase boundaries (mode "boundary"): their time is billed to
    the boundary that allocated the object that crossed the collector's
    threshold."""
    clock = GcClock()
    inner = prof._boundary

    def boundary(next_phase):
        clock.mode = "boundary"
        try:
            return inner(next_phase)
        finally:
            clock.mode = None
    prof._boundary = boundary       # what the profiler's own calls find first
    return clock


def main(case, n=50, on=True, **kwargs):
    model, args = make(case)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    prof = MemoryProfiler(model, opt, view=SimView(ccalloc.load_library()), **kwargs) if on else None

    def step():
        if prof is None:
            model(*args).sum().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            return
        with prof.step():
            model(*args).sum().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    for _ in range(3):
        step()
    if prof is not None:
        prof.host_seconds, prof.boundaries, prof.view.sim_seconds = 0.0, 0, 0.0
        if hasattr(prof, "host_seconds_by_boundary"):
            prof.host_seconds_by_boundary.clear()
        gcs = _gc_in_boundaries(prof)
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    wall = time.perf_counter() - t0
    settings = ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "defaults"
    if prof is None:
        print(f"{case} off: step wall {wall / n * 1e3:.1f} ms")
        return
    gcs.close()
    nparams = len(list(model.parameters()))
    nstate = sum(1 for s in opt.state.values() for v in s.values() if torch.is_tensor(v))
    b = prof.boundaries
    print(f"{case} ({settings}): {nparams} parameters, {nstate} optimizer state tensors: "
          f"{prof.host_seconds / b * 1e6:.0f} us per boundary "
          f"({(prof.host_seconds - prof.view.sim_seconds) / b * 1e6:.0f} less the simulation's "
          f"block mallocs; {b / n:.0f} per step), {prof.host_seconds / n * 1e3:.2f} ms per step; "
          f"step wall {wall / n * 1e3:.1f} ms; gc in boundaries: "
          f"{gcs.count.get('boundary', 0) / n:.2f} collections per step "
          f"({gcs.full.get('boundary', 0)} full), "
          f"{gcs.seconds.get('boundary', 0.0) / b * 1e6:.0f} us per boundary")
    by = getattr(prof, "host_seconds_by_boundary", None)
    if by:
        print("  by boundary, us per step: " + ", ".join(f"{k} {v / n * 1e6:.0f}" for k, v in by.items()))
    prof.close()


if __name__ == "__main__":
    import inspect
    exact = "exact_saved" in inspect.signature(MemoryProfiler).parameters
    for case in ("linear500", "gru64", "decoder50"):
        main(case, on=False)
        main(case)
        main(case, module_tags=False)
        if exact:
            main(case, exact_saved=True)
    hook_cost("decoder50")
    hook_cost("decoder50", module_tags=False)

"""Host time per phase boundary of the memory profiler on synthetic models
(CPU torch; the block lookups go to the plugin's simulated device: each CPU
pointer seen gets a simulated block of its own on first sight):

  linear500: 500 Linear layers, 1,000 parameters, ~3,000 Adam state tensors;
  gru64: a GRUCell unrolled over 64 time steps (thousands of tensors saved
      for backward per step: what exact_saved=True pays a Python call for).

Each case runs with the profiler off too: "step wall" on vs off is the whole
cost (hooks per module call, pack hooks, boundaries).

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

DEV = 5


class SimView(_CcallocView):
    def __init__(self, plugin):
        super().__init__(plugin, DEV)
        self.device = "cpu"        # the profiler then takes CPU optimizer state too
        self.sim = _Sim(plugin)

    def blocks(self, ptrs):
        out = list(map(self.sim.__getitem__, ptrs))   # C-level: the bench's own cost stays small
        self.device = DEV
        try:
            return super().blocks(out)
        finally:
            self.device = "cpu"

    def counters(self):
        self.device = DEV
        try:
            return super().counters()
        finally:
            self.device = "cpu"

    def largest_free(self):
        return 0

    def reset_peaks(self):
        self.plugin.reset_peak_stats(DEV)

    def tag_usage(self):
        self.device = DEV
        try:
            return super().tag_usage()
        finally:
            self.device = "cpu"


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


def make(case):
    torch.manual_seed(0)
    if case == "linear500":
        return torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(500)]), torch.randn(2, 4)
    return GRU64(), torch.randn(8, 32)


def main(case, n=20, on=True, **kwargs):
    model, x = make(case)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    prof = MemoryProfiler(model, opt, view=SimView(ccalloc.load_library()), **kwargs) if on else None

    def step():
        if prof is None:
            model(x).sum().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            return
        with prof.step():
            model(x).sum().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    for _ in range(3):
        step()
    if prof is not None:
        prof.host_seconds, prof.boundaries = 0.0, 0
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    wall = time.perf_counter() - t0
    settings = ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "defaults"
    if prof is None:
        print(f"{case} off: step wall {wall / n * 1e3:.1f} ms")
        return
    nparams = len(list(model.parameters()))
    nstate = sum(1 for s in opt.state.values() for v in s.values() if torch.is_tensor(v))
    print(f"{case} ({settings}): {nparams} parameters, {nstate} optimizer state tensors: "
          f"{prof.host_seconds / prof.boundaries * 1e6:.0f} us per boundary "
          f"({prof.boundaries / n:.0f} per step), {prof.host_seconds / n * 1e3:.2f} ms per step; "
          f"step wall {wall / n * 1e3:.1f} ms")
    prof.close()


if __name__ == "__main__":
    import inspect
    exact = "exact_saved" in inspect.signature(MemoryProfiler).parameters
    for case in ("linear500", "gru64"):
        main(case, on=False)
        main(case)
        main(case, module_tags=False)
        if exact:
            main(case, exact_saved=True)

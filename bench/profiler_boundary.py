"""Host time per phase boundary of the memory profiler on a synthetic model
with ~1,000 parameters and ~2,000 Adam state tensors (CPU torch; the block
lookups go to the plugin's simulated device: each CPU pointer seen gets a
simulated block of its own on first sight).

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
        return {t["name"]: (t["current_bytes"], t["peak_bytes"]) for t in self.plugin.tag_usage(DEV)}


class _Sim(dict):
    def __init__(self, plugin):
        super().__init__()
        self.plugin = plugin

    def __missing__(self, ptr):
        y = self[ptr] = self.plugin.malloc(4096, device=DEV)
        return y


def main(module_tags=True):
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(500)])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    prof = MemoryProfiler(model, opt, view=SimView(ccalloc.load_library()), module_tags=module_tags)
    x = torch.randn(2, 4)

    def step():
        with prof.step():
            model(x).sum().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    for _ in range(3):
        step()
    prof.host_seconds, prof.boundaries = 0.0, 0
    t0 = time.perf_counter()
    n = 20
    for _ in range(n):
        step()
    wall = time.perf_counter() - t0
    nparams = len(list(model.parameters()))
    nstate = sum(1 for s in opt.state.values() for v in s.values() if torch.is_tensor(v))
    print(f"module_tags={module_tags}: {nparams} parameters, {nstate} optimizer state tensors: "
          f"{prof.host_seconds / prof.boundaries * 1e6:.0f} us per boundary "
          f"({prof.boundaries / n:.0f} per step), {prof.host_seconds / n * 1e3:.2f} ms per step; "
          f"step wall {wall / n * 1e3:.1f} ms")
    prof.close()


if __name__ == "__main__":
    main(True)
    main(False)

"""GcClock: the garbage collections that run while a mode is set, for the
profiler's benchmarks (bench/memory_report.py: by overhead round;
bench/profiler_boundary.py: inside phase boundaries)."""

import gc
import time


class GcClock:
    """Garbage collections that run while `mode` is set (gc.callbacks):
    count, full ones, seconds, by mode. A full collection in a process with
    torch and CUDA loaded takes tens of ms: one landing in a round moves that
    round's mean by a few percent, whichever mode it is."""

    def __init__(self):
        self.mode = None
        self.count, self.full, self.seconds = {}, {}, {}
        self._t = 0.0
        gc.callbacks.append(self.callback)

    def callback(self, phase, info):
        if self.mode is None:
            return
        if phase == "start":
            self._t = time.perf_counter()
            return
        m = self.mode
        self.count[m] = self.count.get(m, 0) + 1
        self.full[m] = self.full.get(m, 0) + (info["generation"] == 2)
        self.seconds[m] = self.seconds.get(m, 0.0) + time.perf_counter() - self._t

    def close(self):
        gc.callbacks.remove(self.callback)

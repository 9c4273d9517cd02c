"""Host-only tests of bench/probes/host_state_probe.py's summary: what it says
the host's slow state is, from synthetic slices.

    python3 tests/python/test_host_state_probe_host.py
"""

import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "probes"))
import host_state_probe as hsp  # noqa: E402

MS = 1_000_000


def worker(core, slow_windows, cpu_scales=True, phase=0):
    """Slices of 0.5 ms (fast) or 1.0 ms (slow) over 2 s; a 50 ms window is
    slow when its index is in slow_windows. CPU time follows wall time (a
    slower CPU) or stays at the fast time (time taken away)."""
    samples, t = [], 0
    while t < 2000 * MS:
        slow = ((t // (50 * MS)) + phase) in slow_windows
        wall = 1_000_000 if slow else 500_000
        cpu = wall if cpu_scales else 500_000
        samples.append((t, wall, cpu, 0, 0))
        t += wall
    return {"core": core, "perf": False, "samples": samples}


class SummaryTest(unittest.TestCase):
    def test_a_slower_cpu_shows_in_cpu_time_and_together_on_every_core(self):
        slow = set(range(0, 40, 3))
        out = hsp.summarize([worker(0, slow), worker(5, slow)],
                            [(0, 10, 1000), (1, 12, 3000)])
        for row in out["workers"]:
            self.assertAlmostEqual(row["wall_us"]["slow_over_fast"], 2.0, places=2)
            self.assertAlmostEqual(row["cpu_us"]["slow_over_fast"], 2.0, places=2)
            self.assertIsNone(row["cycles_k"]["slow_over_fast"])   # no perf counters
            self.assertGreater(row["fraction_of_slices_over_1.5x_fastest_decile"], 0.2)
        self.assertEqual(len(out["speed_correlation_between_workers_50ms"]), 1)
        self.assertGreater(out["speed_correlation_between_workers_50ms"][0], 0.9)
        self.assertAlmostEqual(out["steal_fraction"], 2 / 2000)

    def test_time_taken_away_leaves_cpu_time_alone_and_states_apart_do_not_correlate(self):
        slow = set(range(0, 40, 2))
        out = hsp.summarize([worker(0, slow, cpu_scales=False),
                             worker(1, slow, cpu_scales=False, phase=1)], [])
        row = out["workers"][0]
        self.assertAlmostEqual(row["wall_us"]["slow_over_fast"], 2.0, places=2)
        self.assertAlmostEqual(row["cpu_us"]["slow_over_fast"], 1.0, places=2)
        self.assertLess(out["speed_correlation_between_workers_50ms"][0], -0.9)
        self.assertNotIn("steal_fraction", out)


if __name__ == "__main__":
    unittest.main()

"""Host-only tests of bench/host_counters.py: the per-step host counters
compare_training.py records beside each step's wall time.

    python3 tests/python/test_host_counters_host.py
"""

import os
import sys
import threading
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import host_counters as hc  # noqa: E402


def spin(ms):
    # Until this thread has used `ms` of CPU time, not of wall time: on a
    # loaded machine (CI's two cores running tests side by side) a thread
    # spinning by the wall clock gets less CPU than it spins for.
    end = time.thread_time() + ms / 1e3
    while time.thread_time() < end:
        pass


class ThreadCountersTest(unittest.TestCase):
    def test_cpu_time_counts_work_not_sleep(self):
        c = hc.ThreadCounters()
        a = c.read()
        spin(30)
        b = c.read()
        time.sleep(0.05)
        d = c.read()
        busy, idle = hc.ThreadCounters.delta(a, b), hc.ThreadCounters.delta(b, d)
        self.assertGreater(busy["cpu_ms"], 5.0)
        self.assertLess(idle["cpu_ms"], 20.0)
        self.assertLess(idle["cpu_ms"], busy["cpu_ms"])

    def test_cpu_time_is_this_threads_own(self):
        # Another thread's work does not count for the thread that reads ...
        c = hc.ThreadCounters()
        a = c.read()
        t = threading.Thread(target=spin, args=(40,))
        t.start()
        t.join()
        b = c.read()
        d = hc.ThreadCounters.delta(a, b)
        self.assertLess(d["cpu_ms"], 20.0)
        # ... while the process's CPU time does.
        self.assertGreater(d["process_cpu_ms"], 20.0)

    def test_perf_counters_count_or_report_absence(self):
        c = hc.ThreadCounters()
        a = c.read()
        spin(20)
        b = c.read()
        d = hc.ThreadCounters.delta(a, b)
        if c.perf:
            self.assertGreater(d["minstr"], 1.0)
            self.assertGreater(d["mcycles"], 1.0)
        else:
            self.assertEqual((d["minstr"], d["mcycles"]), (0.0, 0.0))

    def test_steal_is_never_negative(self):
        a = hc.steal_jiffies()
        spin(5)
        self.assertGreaterEqual(hc.steal_jiffies(), a)
        self.assertGreaterEqual(a, 0)


if __name__ == "__main__":
    unittest.main()

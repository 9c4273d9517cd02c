"""Host test of bench/profiler_overhead.py: every model, tiny, on the CPU
with the profiler reading the plugin's simulated device.

    python3 tests/python/test_profiler_overhead_host.py

Skips without torch (Debian's CPU python3-torch: /usr/bin/python3) or
without the plugin. Checks the shape of what the bench reports, that it
measured what it says (blocks, steps, module counts), and that the profiled
blocks' kinds added up at every boundary; not the figures themselves.
"""

import json
import math
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
os.environ.setdefault("CCALLOC_TORCH_SIMULATE", str(4 << 30))

try:
    import torch
except ImportError:
    torch = None


@unittest.skipIf(torch is None, "no torch (Debian's python3-torch runs this under /usr/bin/python3)")
class ProfilerOverheadBenchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import ccalloc
        try:
            ccalloc.load_library()
        except (OSError, FileNotFoundError) as e:
            raise unittest.SkipTest(f"plugin not built: {e}")
        import profiler_overhead
        cls.bench = profiler_overhead
        cls.dir = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.dir.name, "overhead.json")
        cls.rc = profiler_overhead.main(["--device", "cpu", "--tiny", "--blocks", "2", "--steps", "2",
                                         "--warmup", "1", "--calls-rounds", "2", "--profile", "sample_every=2",
                                         "--out", cls.out])
        with open(cls.out) as f:
            cls.result = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_every_model_is_measured_and_exact(self):
        self.assertEqual(self.rc, 0)
        models = {r["model"]: r for r in self.result["models"]}
        self.assertEqual(sorted(models), sorted(self.bench.MODELS))
        for name, r in models.items():
            self.assertEqual(r["problems"], [], name)
            self.assertEqual(r["pairs"], 2, name)
            self.assertEqual(len(r["plain_block_ms"]), 2, name)
            self.assertEqual(len(r["profiled_block_ms"]), 2, name)
            self.assertEqual(r["steps_per_block"], 2, name)
            self.assertGreater(r["module_calls_per_step"], 0, name)
            self.assertGreater(r["plain_ms"], 0, name)
            for key in ("overhead_pct", "overhead_ci95_pct", "boundary_us_per_step", "module_call_us"):
                self.assertTrue(math.isfinite(r[key]), (name, key))
            self.assertGreater(r["boundary_us_per_step"], 0, name)
            # Timed steps 4 and 5 of each block: 4 accounted, 5 not.
            self.assertEqual(r["sampled_steps_per_block"], 1, name)
            self.assertAlmostEqual(r["boundary_us_per_sampled_step"], 2 * r["boundary_us_per_step"],
                                   delta=1e-6, msg=name)
            # A step: start, other, forward, loss, backward, other, optimizer, end.
            self.assertEqual(r["boundaries_per_step"], 8, name)

    def test_the_models_have_the_shapes_the_acceptance_asks_for(self):
        models = {r["model"]: r for r in self.result["models"]}
        self.assertGreaterEqual(models["deep"]["modules"], 200)
        self.assertEqual(models["moe"]["optimizer"], "Adam")
        # The decoder runs its cell, attention and output once per token.
        self.assertGreater(models["seq2seq"]["module_calls_per_step"], 4 * models["seq2seq"]["modules"])
        # The LSTM LM: embedding, the fused 3-layer LSTM and the head, one call each.
        self.assertEqual(models["rnn"]["module_calls_per_step"], 3)
        self.assertEqual(models["rnn"]["modules"], 4)
        self.assertEqual(self.result["meta"]["device"], "cpu")

    def test_mean_ci(self):
        m, h = self.bench.mean_ci([1.0, 2.0, 3.0])
        self.assertAlmostEqual(m, 2.0)
        self.assertAlmostEqual(h, 4.303 * 1.0 / math.sqrt(3), places=6)
        self.assertTrue(math.isnan(self.bench.mean_ci([1.0])[1]))


if __name__ == "__main__":
    unittest.main()

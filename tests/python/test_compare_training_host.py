"""Host-only tests of bench/compare_training.py's step plan: no torch, no GPU.

    python3 tests/python/test_compare_training_host.py   # or: python3 -m pytest tests/python
"""

import importlib.util
import os
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location(
    "compare_training", os.path.join(ROOT, "bench", "compare_training.py"))
compare_training = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare_training)


class WarmEveryShapeTest(unittest.TestCase):
    def test_repeated_shapes_are_each_warmed_once_before_the_timed_steps(self):
        shapes = [48, 48, 24, 40, 56] + [48, 32, 64, 32, 64, 24, 40, 56, 32, 64, 48, 24] 
        planned, warmup = compare_training.warm_every_shape(shapes, 5)
        # The warm-up keeps its own steps and adds 32 and 64 (first seen
        # after it), in order of first appearance; the timed steps follow
        # unchanged.
        self.assertEqual(planned[:5], shapes[:5])
        self.assertEqual(planned[5:warmup], [32, 64])
        self.assertEqual(planned[warmup:], shapes[5:])
        self.assertTrue(set(planned[warmup:]) <= set(planned[:warmup]))

    def test_a_workload_whose_steps_are_mostly_new_is_left_as_it_is(self):
        shapes = [(8, n) for n in range(256, 256 + 30)]
        self.assertEqual(compare_training.warm_every_shape(shapes, 5), (shapes, 5))

    def test_unhashable_shapes_compare_by_value(self):
        shapes = [[64, 160], [96, 192]] * 6
        planned, warmup = compare_training.warm_every_shape(shapes, 1)
        self.assertEqual(warmup, 2)
        self.assertEqual(planned[:warmup], [[64, 160], [96, 192]])


if __name__ == "__main__":
    unittest.main()

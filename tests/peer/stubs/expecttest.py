"""A stand-in for the expecttest package, which PyTorch's
torch.testing._internal.common_utils imports and the GPU machine lacks (no
network there to install it). Only what common_utils' TestCase uses: the
inline expectations compare the text; nothing is rewritten (EXPECTTEST_ACCEPT
is not supported)."""

import unittest


class TestCase(unittest.TestCase):
    longMessage = True

    def assertExpectedInline(self, actual, expect, skip=0):
        self.assertEqual(str(actual).strip(), str(expect).strip())

    def assertExpectedRaisesInline(self, exc_type, callable, expect, *args, **kwargs):
        with self.assertRaises(exc_type) as cm:
            callable(*args, **kwargs)
        self.assertEqual(str(cm.exception).strip(), str(expect).strip())

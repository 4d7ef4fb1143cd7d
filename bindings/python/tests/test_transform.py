# bindings/python/tests/test_transform.py - weft.transform: the plugin's components from
# Python, propagation through the weft_transform shared library, the numpy view of the
# GlobalTransform column.
# SPDX-License-Identifier: MIT
#
# Needs the weft_transform shared library in $WEFT_TRANSFORM_LIBRARY (the ctest test
# test_python_transform builds it and sets WEFT_REQUIRE_TRANSFORM=1, making its absence
# a failure); skipped otherwise, as under test_python_binding. The numpy case is
# skipped without numpy.
import ctypes
import math
import os
import unittest

import weft
from weft import read, with_
from weft import transform as wt

HAVE_LIB = bool(os.environ.get("WEFT_TRANSFORM_LIBRARY"))
if not HAVE_LIB and os.environ.get("WEFT_REQUIRE_TRANSFORM") == "1":
    raise RuntimeError("WEFT_REQUIRE_TRANSFORM=1 but WEFT_TRANSFORM_LIBRARY is not set")
needs_lib = unittest.skipUnless(HAVE_LIB, "WEFT_TRANSFORM_LIBRARY is not set")

try:
    import numpy as np
except ImportError:
    np = None


class TestComponents(unittest.TestCase):
    def test_layout_matches_the_c_structs(self):
        self.assertEqual(ctypes.sizeof(wt.Transform), 40)
        self.assertEqual(ctypes.sizeof(wt.GlobalTransform), 48)
        self.assertEqual(wt.Transform.translation.offset, 0)
        self.assertEqual(wt.Transform.rotation.offset, 12)
        self.assertEqual(wt.Transform.scale.offset, 28)

    def test_transform_requires_global(self):
        w = weft.World()
        try:
            t, g, _ = wt.register(w)
            self.assertEqual(w.lookup(wt.TRANSFORM_NAME), t.id)
            e = w.spawn(wt.Transform.identity(1, 2, 3))
            got = w.get(e, wt.GlobalTransform)
            self.assertEqual(list(got.m), [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0])
        finally:
            w.close()


@needs_lib
class TestPropagation(unittest.TestCase):
    def setUp(self):
        self.w = weft.World()
        self.s = self.w.schedule("post")
        wt.add_systems(self.w, self.s)

    def tearDown(self):
        self.w.close()

    def test_child_follows_parent(self):
        w = self.w
        root = w.spawn(wt.Transform.identity(10, 0, 0))
        rot = wt.Transform.identity(0, 1, 0)
        half = math.sqrt(0.5)
        rot.rotation[:] = (0.0, 0.0, half, half)  # 90 degrees about z
        mid = w.spawn(rot)
        leaf = w.spawn(wt.Transform.identity(2, 0, 0))
        w.set_parent(mid, root)
        w.set_parent(leaf, mid)
        self.s.run()
        # leaf: root (10,0,0) + mid (0,1,0) + (2,0,0) turned 90 degrees = (10,3,0)
        x, y, z = w.get(leaf, wt.GlobalTransform).translation
        self.assertAlmostEqual(x, 10.0, places=5)
        self.assertAlmostEqual(y, 3.0, places=5)
        self.assertAlmostEqual(z, 0.0, places=5)
        same = wt.compute_global(w, leaf)
        self.assertEqual(list(same.m), list(w.get(leaf, wt.GlobalTransform).m))
        # move the root: the subtree follows on the next run
        w.get_mut(root, wt.Transform).translation[0] = -5.0
        self.s.run()
        self.assertAlmostEqual(w.get(leaf, wt.GlobalTransform).translation[0], -5.0, places=5)

    def test_set_twice_refused(self):
        with self.assertRaises(weft.WeftError) as cm:
            wt.add_systems(self.w, self.s)
        self.assertEqual(cm.exception.name, "WEFT_ERR_ALREADY_EXISTS")

    @unittest.skipIf(np is None, "numpy is not installed")
    def test_numpy_view_of_globals(self):
        w = self.w
        root = w.spawn(wt.Transform.identity(1, 0, 0))
        kids = [w.spawn(wt.Transform.identity(0, float(k), 0)) for k in range(100)]
        for k in kids:
            w.set_parent(k, root)
        self.s.run()
        seen = {}
        for chunk in w.query(read(wt.GlobalTransform), with_(wt.Transform)):
            m = wt.global_matrices(chunk, 0)
            self.assertEqual(m.shape, (chunk.count, 3, 4))
            for e, row in zip(chunk.entities, m):
                seen[e] = row[:, 3].copy()
        self.assertEqual(len(seen), 101)
        for k, e in enumerate(kids):
            np.testing.assert_allclose(seen[e], [1.0, float(k), 0.0])


if __name__ == "__main__":
    unittest.main()

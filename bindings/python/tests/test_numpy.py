# bindings/python/tests/test_numpy.py - Chunk.array: zero-copy numpy columns (values, dtype, change marking, read-only, invalidation) and the binding without numpy.
# SPDX-License-Identifier: MIT
#
# Skipped when numpy is missing, unless WEFT_REQUIRE_NUMPY=1 (set by the
# ctest test that runs this file with an interpreter that has numpy), where
# that is a failure. TestWithoutNumpy runs either way.
import ctypes
import os
import pickle
import subprocess
import sys
import unittest

import weft
from weft import Changed, optional, read, with_, write

try:
    import numpy as np
except ImportError:
    np = None
    if os.environ.get("WEFT_REQUIRE_NUMPY") == "1":
        raise

needs_numpy = unittest.skipIf(np is None, "numpy is not installed")


class Position(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


class Velocity(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


class Body(ctypes.Structure):
    # nested struct, fixed array, padding before the int64
    _fields_ = [("pos", Position), ("axes", ctypes.c_float * 3), ("flags", ctypes.c_uint8),
                ("id", ctypes.c_int64)]


class WorldCase(unittest.TestCase):
    def setUp(self):
        self.w = weft.World()
        self.w.register(Position)
        self.w.register(Velocity)
        self.w.register(Body)
        self.tag = self.w.tag("Frozen")

    def tearDown(self):
        try:
            if self.w._ptr:
                self.w.check()
        finally:
            self.w.close()

    def spawn_moving(self, n, start=0):
        return [self.w.spawn(Position(i, -i), Velocity(0.5 * i, 2)) for i in range(start, start + n)]

    def changes(self):
        """A function listing the entities whose Position changed since its
        previous call (a Changed query; drained once here)."""
        q = self.w.query(read(Position), Changed(Position))

        def since():
            return sorted(e for c in q for e in c.entities)
        since()
        return since


@needs_numpy
class TestValues(WorldCase):
    def test_structured_view_of_the_column_without_copying(self):
        es = self.spawn_moving(5)
        q = self.w.query(write(Position), read(Velocity))
        chunks = 0
        for chunk in q:
            chunks += 1
            p, v = chunk.array(0), chunk.array(1)
            self.assertIsInstance(p, np.ndarray)
            self.assertIsInstance(p, weft.ColumnArray)
            self.assertEqual(p.dtype, np.dtype(Position))
            self.assertEqual(p.dtype.names, ("x", "y"))
            self.assertEqual(p.shape, (chunk.count,))
            self.assertEqual(p["x"].tolist(), [0, 1, 2, 3, 4])
            self.assertEqual(v["x"].tolist(), [0, 0.5, 1, 1.5, 2])
            # the same memory as the ctypes column
            col = chunk.column(0, mark=False)
            self.assertEqual(p.__array_interface__["data"][0], col.address)
            col[2].y = 42
            self.assertEqual(p[2]["y"], 42)
            p["x"] += v["x"]
            p["y"] = p["y"] * 2 + v["y"]
        self.assertEqual(chunks, 1)
        self.assertEqual([self.w.get(e, Position).x for e in es], [0, 1.5, 3, 4.5, 6])
        self.assertEqual([self.w.get(e, Position).y for e in es], [2, 0, 86, -4, -6])

    def test_nested_struct_array_and_padding_fields(self):
        e = self.w.spawn(Body(Position(1, 2), (ctypes.c_float * 3)(3, 4, 5), 7, 1 << 40))
        self.assertEqual(np.dtype(Body).itemsize, ctypes.sizeof(Body))
        for chunk in self.w.query(write(Body)):
            b = chunk.array(0)
            self.assertEqual(b["pos"]["y"][0], 2)
            self.assertEqual(b["axes"].shape, (1, 3))
            self.assertEqual(b["axes"][0].tolist(), [3, 4, 5])
            self.assertEqual(int(b["id"][0]), 1 << 40)
            b["axes"][:, 1] = 9
            b["id"] += 1
            b[0]["flags"] = 8       # a row is a 0-d view: writes go through
        got = self.w.get(e, Body)
        self.assertEqual((list(got.axes), got.flags, got.id), ([3, 9, 5], 8, (1 << 40) + 1))

    def test_results_in_new_memory_are_plain_arrays_that_stay_valid(self):
        self.spawn_moving(4)
        for chunk in self.w.query(read(Position)):
            p = chunk.array(0)
            total = np.sum(p["x"])
            doubled = p["x"] * 2
            copied = p.copy()
            listed = p["y"].tolist()
        self.assertIs(type(doubled), np.ndarray)
        self.assertIs(type(copied), np.ndarray)
        self.assertEqual(float(total), 6)
        self.assertEqual(doubled.tolist(), [0, 2, 4, 6])
        self.assertEqual(copied["y"].tolist(), [0, -1, -2, -3])
        self.assertEqual(listed, [0, -1, -2, -3])

    def test_one_array_per_chunk_over_several_tables(self):
        self.spawn_moving(3)
        extra = [self.w.spawn(Position(10 + i, 0), Velocity(1, 1), self.tag) for i in range(2)]
        sizes = []
        for chunk in self.w.query(write(Position), read(Velocity)):
            p, v = chunk.array(0), chunk.array(1)
            sizes.append(len(p))
            p["x"] += v["x"]
        self.assertEqual(sorted(sizes), [2, 3])
        self.assertEqual([self.w.get(e, Position).x for e in extra], [11, 12])

    def test_optional_absent_term_is_none_and_tags_have_no_array(self):
        self.w.spawn(Position(1, 1))
        for chunk in self.w.query(read(Position), optional(Velocity)):
            self.assertIsNone(chunk.array(1))
        for chunk in self.w.query(read(Position), with_(self.tag)):
            with self.assertRaises(TypeError):
                chunk.array(1)
            with self.assertRaises(IndexError):
                chunk.array(5)


@needs_numpy
class TestChangeMarking(WorldCase):
    def test_write_array_marks_like_the_c_field_accessor(self):
        es = self.spawn_moving(3)
        self.w.spawn(Velocity(1, 1))
        changed = self.changes()
        self.assertEqual(changed(), [])
        for chunk in self.w.query(write(Position)):
            chunk.array(0)          # asking is enough, as with weft_iter_field_mut
        self.assertEqual(changed(), sorted(es))

    def test_nomark_and_read_arrays_mark_nothing(self):
        self.spawn_moving(3)
        changed = self.changes()
        for chunk in self.w.query(write(Position)):
            chunk.array(0, mark=False)["x"] += 1
        for chunk in self.w.query(read(Position)):
            chunk.array(0)
        self.assertEqual(changed(), [])

    def test_same_marks_as_column(self):
        a = self.spawn_moving(2)
        b = [self.w.spawn(Position(0, 0), Velocity(0, 0), self.tag)]
        changed = self.changes()
        for chunk in self.w.query(write(Position), with_(self.tag)):
            chunk.column(0)
        by_column = changed()
        for chunk in self.w.query(write(Position), with_(self.tag)):
            chunk.array(0)
        self.assertEqual(changed(), by_column)
        self.assertEqual(by_column, b)
        self.assertNotIn(a[0], by_column)


@needs_numpy
class TestReadOnly(WorldCase):
    def test_read_term_array_cannot_be_written(self):
        es = self.spawn_moving(2)
        for chunk in self.w.query(read(Position), read(Velocity)):
            p = chunk.array(0)
            self.assertFalse(p.flags.writeable)
            with self.assertRaises(ValueError):
                p.flags.writeable = True
            with self.assertRaises(weft.WeftError) as cm:
                p["x"][0] = 5
            self.assertEqual(cm.exception.name, "WEFT_ERR_ACCESS_VIOLATION")
            self.assertIn("term 0 (Position) is a READ term", cm.exception.message)
            x = p["x"]
            with self.assertRaises(weft.WeftError):
                x += 1
            with self.assertRaises(weft.WeftError):
                np.add(p["y"], 1, out=p["y"])
            with self.assertRaises(ValueError):     # numpy's own check underneath
                np.copyto(p["x"], 3)
        self.assertEqual([self.w.get(e, Position).x for e in es], [0, 1])

    def test_write_term_array_is_writeable(self):
        self.spawn_moving(1)
        for chunk in self.w.query(write(Position)):
            self.assertTrue(chunk.array(0).flags.writeable)


@needs_numpy
class TestInvalidation(WorldCase):
    def assertStale(self, fn):
        with self.assertRaises(weft.WeftError) as cm:
            fn()
        self.assertEqual(cm.exception.name, "WEFT_ERR_INVALID_HANDLE")
        self.assertIn("chunk is over", cm.exception.message)

    def test_every_use_after_the_iteration_raises(self):
        self.spawn_moving(3)
        for chunk in self.w.query(write(Position), read(Velocity)):
            p, v = chunk.array(0), chunk.array(1)
            x, row, part = p["x"], p[1], p[1:]
            self.assertTrue(p.valid)
        # The iteration is over; despawning frees and reuses the rows.
        for e in list(self.w.query(read(Position)).each()):
            self.w.despawn(e[0])
        self.w.spawn(Position(7, 7))
        self.assertFalse(p.valid)
        for a in (p, v, x, row, part):
            self.assertStale(lambda: a[0])
            self.assertStale(lambda: a + 1)
            self.assertStale(lambda: np.sum(a))
            self.assertStale(lambda: repr(a))
            self.assertStale(lambda: str(a))
            self.assertStale(a.copy)
            self.assertStale(a.tolist)
            self.assertStale(lambda: list(a))
            self.assertStale(lambda: a.base)
            self.assertStale(lambda: a.view(np.ndarray))
            self.assertStale(lambda: a.ctypes)
            self.assertStale(lambda: a.__array_interface__)
        self.assertStale(lambda: p["x"])
        self.assertStale(lambda: p.__setitem__("x", 1))
        self.assertStale(lambda: x.__iadd__(1))
        self.assertStale(lambda: np.add(1, 1, out=x))
        self.assertStale(lambda: np.concatenate([x, x]))
        self.assertStale(lambda: x.T)
        self.assertStale(lambda: x.reshape(3, 1))

    def test_arrays_of_a_chunk_go_stale_at_the_next_chunk(self):
        self.spawn_moving(2)
        self.w.spawn(Position(5, 5), self.tag)
        arrays = []
        for chunk in self.w.query(write(Position)):
            for old in arrays:
                self.assertStale(lambda: old["x"])
            a = chunk.array(0)
            a["x"] += 1
            arrays.append(a)
        self.assertEqual(len(arrays), 2)

    def test_break_ends_the_chunk(self):
        self.spawn_moving(2)
        for chunk in self.w.query(write(Position)):
            a = chunk.array(0)
            break
        self.assertStale(lambda: a["x"])
        self.assertStale(lambda: chunk.array(0))

    def test_closing_the_world_inside_the_loop(self):
        self.spawn_moving(2)
        q = self.w.query(write(Position))
        it = iter(q)
        chunk = next(it)
        a = chunk.array(0)
        self.w.close()
        self.assertStale(lambda: a["x"])
        it.close()

    def test_array_kept_from_a_system_raises_after_the_run(self):
        self.spawn_moving(3)
        s = self.w.schedule("update")
        kept = []

        @s.system(query=[write(Position), read(Velocity)])
        def move(ctx):
            for chunk in ctx.iter(0):
                p, v = chunk.array(0), chunk.array(1)
                p["x"] += v["x"] * ctx.delta
                kept.append(p)

        s.run(2.0)
        self.assertEqual(sorted(self.w.get(e[0], Position).x
                                for e in self.w.query(read(Position)).each()), [0, 2, 4])
        self.assertStale(lambda: kept[0]["x"])

    def test_every_operator_on_a_stale_array_raises(self):
        # the operators' short path (scalar or plain-array operand) checks
        # the chunk too, and so does an array reused by the next run
        self.spawn_moving(3)
        s = self.w.schedule("update")
        kept = []
        pairs = np.dtype((np.float32, 2))

        @s.system(query=[write(Position), read(Velocity)])
        def move(ctx):
            for chunk in ctx.iter(0):
                p, v = chunk.array(0, dtype=pairs), chunk.array(1, dtype=pairs)
                p += v * ctx.delta
                kept.append((p, v))

        s.run(1.0)
        s.run(1.0)
        self.assertIs(kept[0][0], kept[1][0])    # the same column: the array is reused
        p, v = kept[1]
        plain = np.ones((3, 2), np.float32)
        ops = {
            "p += 1": lambda: p.__iadd__(1), "p -= plain": lambda: p.__isub__(plain),
            "p *= 2.0": lambda: p.__imul__(2.0), "p /= 2": lambda: p.__itruediv__(2),
            "p + 1": lambda: p + 1, "1 + p": lambda: 1 + p, "p - plain": lambda: p - plain,
            "2 * v": lambda: 2 * v, "v * np.float32(2)": lambda: v * np.float32(2),
            "v / 2": lambda: v / 2, "p + [1, 2]": lambda: p + [1, 2],
            "p + v": lambda: p + v,
        }
        for name, op in ops.items():
            with self.subTest(name):
                self.assertStale(op)
        got = sorted(self.w.get(e[0], Position).x for e in self.w.query(read(Position)).each())
        self.assertEqual(got, [0, 2, 4])        # x = i, + 0.5 i per run, two runs

    def test_read_column_refuses_an_in_place_operator(self):
        self.spawn_moving(2)
        for chunk in self.w.query(read(Position)):
            p = chunk.array(0, dtype=np.dtype((np.float32, 2)))
            for name, op in (("+= 1", lambda: p.__iadd__(1)),
                             ("*= plain", lambda: p.__imul__(np.ones((2, 2), np.float32)))):
                with self.subTest(name):
                    with self.assertRaises(weft.WeftError) as cm:
                        op()
                    self.assertEqual(cm.exception.name, "WEFT_ERR_ACCESS_VIOLATION")

    def test_pickles_as_a_plain_array_and_not_once_stale(self):
        self.spawn_moving(3)
        for chunk in self.w.query(read(Position)):
            a = chunk.array(0)
            back = pickle.loads(pickle.dumps(a["x"]))
            rows = pickle.loads(pickle.dumps(a, protocol=5))
        self.assertIs(type(back), np.ndarray)
        self.assertEqual(back.tolist(), [0, 1, 2])
        self.assertEqual(rows["y"].tolist(), [0, -1, -2])
        self.assertStale(lambda: pickle.dumps(a))

    def test_copies_and_reductions_outlive_the_chunk(self):
        self.spawn_moving(2)
        for chunk in self.w.query(read(Position)):
            a = chunk.array(0)
            keep = a.copy()
            m = a["x"].max()
        self.assertEqual(keep["x"].tolist(), [0, 1])
        self.assertEqual(float(m), 1)


@needs_numpy
class TestBadInput(WorldCase):
    def test_dtype_of_the_wrong_size_raises_weft_message(self):
        self.spawn_moving(1)
        for chunk in self.w.query(write(Position)):
            with self.assertRaises(weft.WeftError) as cm:
                chunk.array(0, dtype=np.dtype([("x", "<f4")]))
            self.assertEqual(cm.exception.name, "WEFT_ERR_SIZE_MISMATCH")
            self.assertIn("component 'Position' has size 8 but 4 bytes", cm.exception.message)
            # a dtype of the right size is taken as given
            a = chunk.array(0, dtype=np.dtype([("xy", "<f4", (2,))]))
            self.assertEqual(a["xy"].shape, (1, 2))
        self.w.check()

    def test_dtype_of_the_wrong_size_inside_a_system(self):
        self.spawn_moving(1)
        s = self.w.schedule("update")
        seen = []

        @s.system(query=[write(Position)])
        def wrong(ctx):
            for chunk in ctx.iter(0):
                try:
                    chunk.array(0, dtype="<f8,<f8")
                except weft.WeftError as exc:
                    seen.append(exc)

        s.run(0)
        self.assertEqual([e.name for e in seen], ["WEFT_ERR_SIZE_MISMATCH"])
        self.assertIn("component 'Position' has size 8", seen[0].message)


class TestWithoutNumpy(unittest.TestCase):
    def test_the_binding_works_and_array_raises_a_clear_import_error(self):
        code = r'''
import sys, ctypes
sys.modules["numpy"] = None          # as if numpy were not installed
import weft
class P(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float)]
with weft.World() as w:
    w.register(P)
    w.spawn(P(1.5))
    for chunk in w.query(weft.write(P)):
        chunk.column(0)[0].x += 1
        try:
            chunk.array(0)
        except ImportError as exc:
            print("ImportError:", exc)
    print(sum(p.x for _, p in w.query(P).each()))
'''
        r = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.strip().split("\n")
        self.assertTrue(lines[0].startswith("ImportError: weft: Chunk.array returns numpy "
                                            "arrays, and numpy is not installed"), lines[0])
        self.assertIn("python3-numpy", lines[0])
        self.assertEqual(lines[1], "2.5")


if __name__ == "__main__":
    unittest.main()

# bindings/python/tests/test_reflect.py - the reflection module: ctypes
# components described and read/written as dicts, entity dicts, snapshots
# (full, delta, merge, zstd, restore errors) and scenes.
# SPDX-License-Identifier: MIT
import ctypes
import unittest

import weft


class Vec2(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


class Slot(ctypes.Structure):
    _fields_ = [("item", ctypes.c_uint16), ("count", ctypes.c_int8)]


class Body(ctypes.Structure):
    _fields_ = [("position", Vec2),
                ("slots", Slot * 3),
                ("label", ctypes.c_char * 10),
                ("mood", ctypes.c_int32),
                ("alive", ctypes.c_bool),
                ("target", ctypes.c_uint64),
                ("mass", ctypes.c_double),
                ("scores", ctypes.c_int32 * 2)]


MOODS = {"calm": 0, "angry": 1, "sleepy": -7}


def make_world():
    w = weft.World()
    body = w.register(Body)
    w.describe(body, entities=("target",), enums={"mood": MOODS})
    pos = w.register(Vec2, name="Pos")
    w.describe(pos)
    return w, body, pos


class ReflectCase(unittest.TestCase):
    def setUp(self):
        self.w, self.body, self.pos = make_world()

    def tearDown(self):
        try:
            self.w.check()
        finally:
            self.w.close()


class TestDicts(ReflectCase):
    def test_described_component_reads_as_a_dict(self):
        other = self.w.spawn()
        b = Body()
        b.position.x = 1.5
        b.slots[1].item = 9
        b.slots[2].count = -5
        b.label = b"hello"
        b.mood = -7
        b.alive = True
        b.target = other
        b.mass = 0.25
        b.scores[1] = 42
        e = self.w.spawn(b)
        self.assertTrue(self.w.is_described(self.body))
        d = self.w.get_dict(e, self.body)
        self.assertEqual(d["position"], {"x": 1.5, "y": 0})
        self.assertEqual(d["slots"][1], {"item": 9, "count": 0})
        self.assertEqual(d["slots"][2]["count"], -5)
        self.assertEqual(d["label"], "hello")
        self.assertEqual(d["mood"], "sleepy")
        self.assertIs(d["alive"], True)
        self.assertEqual(d["target"], other)
        self.assertEqual(d["mass"], 0.25)
        self.assertEqual(d["scores"], [0, 42])

    def test_set_dict_writes_the_given_fields_only(self):
        e = self.w.spawn(Body(mass=2.0))
        self.w.set_dict(e, self.body, {"position": {"y": 3}, "mood": "angry",
                                       "label": "x\"y", "slots": [{}, {"count": 7}, {}]})
        v = self.w.get(e, self.body)
        self.assertEqual(v.position.y, 3.0)
        self.assertEqual(v.mood, 1)
        self.assertEqual(v.label, b'x"y')
        self.assertEqual(v.slots[1].count, 7)
        self.assertEqual(v.mass, 2.0)   # untouched
        # an absent component is inserted with defaults for the rest
        f = self.w.spawn()
        self.w.set_dict(f, self.pos, {"x": 4})
        self.assertEqual(self.w.get(f, self.pos).x, 4.0)
        # round trip through dicts keeps every value
        self.w.set_dict(f, self.body, self.w.get_dict(e, self.body))
        self.assertEqual(self.w.get_dict(f, self.body), self.w.get_dict(e, self.body))

    def test_bad_dicts_raise_with_the_path_and_change_nothing(self):
        e = self.w.spawn(Body(mass=2.0))
        before = self.w.hash()
        cases = [
            ({"mass": "heavy"}, weft.ERR_TYPE_MISMATCH, "mass"),
            ({"nope": 1}, weft.ERR_NOT_FOUND, "nope"),
            ({"mood": "furious"}, None, "mood"),
            ({"slots": [{"count": 1000}, {}, {}]}, None, "slots[0].count"),
            ({"label": "far too long for ten"}, None, "label"),
            ({"target": 0xDEAD00000001}, None, "target"),
        ]
        for values, status, path in cases:
            with self.assertRaises(weft.WeftError) as cm:
                self.w.set_dict(e, self.body, values)
            if status is not None:
                self.assertEqual(cm.exception.status, status, values)
            self.assertIn(path, cm.exception.message, values)
            self.assertEqual(self.w.hash(), before, values)

    def test_describe_refuses_what_it_cannot_describe(self):
        class Odd(ctypes.Structure):
            _fields_ = [("p", ctypes.c_void_p)]
        c = self.w.register(Odd)
        with self.assertRaises(TypeError):
            self.w.describe(c)
        with self.assertRaises(KeyError):
            self.w.describe(self.w.register(Slot), entities=("missing",))
        with self.assertRaises(weft.WeftError) as cm:
            self.w.describe(self.body)
        self.assertEqual(cm.exception.status, weft.ERR_ALREADY_EXISTS)
        tag = self.w.tag("Tag")
        with self.assertRaises(TypeError):
            self.w.describe(tag)

    def test_entity_dicts_spawn_and_load(self):
        tag = self.w.tag("Marked")
        e = self.w.spawn(Body(mass=1.0), Vec2(x=2, y=3), tag)
        d = self.w.entity_dict(e)
        self.assertEqual(d["id"], e)
        self.assertEqual(d["components"]["Pos"], {"x": 2, "y": 3})
        self.assertIsNone(d["components"]["Marked"])  # a tag is a unit struct: null
        copy = self.w.spawn_dict(d)
        self.assertNotEqual(copy, e)
        self.assertEqual(self.w.entity_dict(copy)["components"], d["components"])
        f = self.w.spawn()
        self.w.load_entity(f, {"components": {"Pos": {"y": 9}}})
        self.assertEqual(self.w.get(f, self.pos).y, 9.0)
        q = self.w.query(weft.read(self.pos))
        rows = self.w.query_dicts(q)
        self.assertEqual([r["id"] for r in rows], [e, copy, f])
        with self.assertRaises(weft.WeftError) as cm:
            self.w.spawn_dict({"components": {"NoSuch": {}}})
        self.assertEqual(cm.exception.status, weft.ERR_UNKNOWN_COMPONENT)


class TestSnapshots(ReflectCase):
    def populate(self):
        ents = []
        for i in range(50):
            ents.append(self.w.spawn(Body(mass=float(i)), Vec2(x=i, y=-i)))
        self.w.despawn(ents[7])
        return ents

    def second(self):
        w, _, _ = make_world()
        self.addCleanup(w.close)
        return w

    def test_snapshot_restores_the_same_world(self):
        self.populate()
        data = self.w.snapshot()
        self.assertEqual(data[:8], b"WEFTSNAP")
        t = self.second()
        t.restore(data)
        t.check()
        self.assertEqual(t.hash(), self.w.hash())
        self.assertEqual(t.snapshot(), data)
        # a live world rolls back in place: later changes are undone, the
        # registrations stay and restore_count tells caches to rebuild
        h = t.hash()
        t.spawn(Vec2(x=1, y=2))
        self.assertNotEqual(t.hash(), h)
        n = t.restore_count
        t.restore(data)
        self.assertEqual(t.hash(), h)
        self.assertEqual(t.restore_count, n + 1)
        t.check()
        # corrupt input
        u = self.second()
        bad = bytearray(data)
        bad[100] ^= 0xFF
        with self.assertRaises(weft.WeftError) as cm:
            u.restore(bytes(bad))
        self.assertEqual(cm.exception.status, weft.ERR_BAD_FORMAT)
        self.assertEqual(u.hash(), self.second().hash())

    def test_deltas_merge_into_the_full_snapshot(self):
        ents = self.populate()
        base = self.w.snapshot()
        since = self.w.change_tick
        self.w.track_changes()
        self.w.increment_change_tick()
        for e in ents[::10]:
            if self.w.is_alive(e):
                self.w.get_mut(e, self.pos).x += 100
        delta = self.w.snapshot_delta(since)
        self.assertLess(len(delta), len(base) // 2)
        self.assertEqual(self.w.snapshot_merge(base, delta), self.w.snapshot())
        # a structural change: still merges
        since = self.w.change_tick
        base = self.w.snapshot()
        self.w.increment_change_tick()
        self.w.despawn(ents[3])
        delta = self.w.snapshot_delta(since)
        self.assertEqual(self.w.snapshot_merge(base, delta), self.w.snapshot())
        self.w.track_changes(False)

    @unittest.skipUnless(weft.zstd_available(), "libweft built without zstd")
    def test_zstd_snapshots(self):
        for i in range(500):
            self.w.spawn(Vec2(x=1, y=2))
        plain = self.w.snapshot()
        packed = self.w.snapshot(zstd=True, level=5)
        self.assertLess(len(packed), len(plain) // 4)
        t = self.second()
        t.restore(packed)
        self.assertEqual(t.snapshot(), plain)

    def test_snapshot_refuses_bad_options(self):
        with self.assertRaises(weft.WeftError) as cm:
            self.w.snapshot(zstd=True, level=25)
        self.assertEqual(cm.exception.status, weft.ERR_INVALID_ARG)


class TestScenes(ReflectCase):
    def test_scene_spawns_remapped_copies(self):
        root = self.w.spawn(Vec2(x=1))
        child = self.w.spawn(Body(mass=3.0))
        self.w.set_parent(child, root)
        self.w.set_dict(child, self.body, {"target": root})
        with self.w.scene_from_tree(root) as scene:
            self.assertEqual(len(scene), 2)
            a = scene.spawn()
            b = scene.spawn()
        self.assertEqual(len(a), 2)
        self.assertTrue(set(a).isdisjoint(b))
        for copy in (a, b):
            new_root, new_child = copy
            self.assertEqual(self.w.parent(new_child), new_root)
            self.assertEqual(self.w.get_dict(new_child, self.body)["target"], new_root)
        self.assertEqual(len(scene), 0)
        q = self.w.query(weft.read(self.body))
        scene = self.w.scene_from_query(q)
        self.assertEqual(len(scene), 3)
        scene.close()
        clone = self.w.clone(root, recursive=True)
        self.assertNotIn(clone, (root, child))
        self.assertEqual(len(self.w.children(clone)), 1)

    def test_world_close_frees_scenes(self):
        self.w.spawn(Vec2(x=1))
        scene = self.w.scene_from_query(self.w.query(weft.read(self.pos)))
        self.w.close()
        self.assertEqual(len(scene), 0)
        scene.close()  # harmless after the world is gone
        self.w, _, _ = make_world()


if __name__ == "__main__":
    unittest.main()

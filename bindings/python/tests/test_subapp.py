# bindings/python/tests/test_subapp.py - sub-apps from Python: entity sync and mapping, the three
# extraction forms (component with a Python transform, resource when changed, instance map),
# Python systems in the sub-world, pipelined frames on a pool shared with the main world with
# the same hashes as inline ones, clone and hash rules, errors (run by ctest).
# SPDX-License-Identifier: MIT
import ctypes
import unittest

import weft


class Pos(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


class RPos(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


class Score(ctypes.Structure):
    _fields_ = [("v", ctypes.c_int32)]


class Sum(ctypes.Structure):
    _fields_ = [("v", ctypes.c_double)]


class Inst(ctypes.Structure):
    _fields_ = [("s", ctypes.c_float)]


class SubAppCase(unittest.TestCase):
    def setUp(self):
        self.app = weft.App()
        self.w = self.app.world
        self.pos = self.w.register(Pos)
        self.score = self.w.register(Score)

    def tearDown(self):
        try:
            if self.app._ptr:
                self.w.check()
        finally:
            self.app.close()

    def add(self, name="render", **kw):
        sub = self.app.add_sub_app(name, **kw)
        self.assertIsInstance(sub, weft.SubApp)
        self.assertIs(self.app.sub_app(name), sub)
        return sub

    def spawn_synced(self, sub, x, y):
        return self.w.spawn(Pos(x, y), sub.sync_tag)


class TestExtraction(SubAppCase):
    def test_component_with_transform_and_twins(self):
        sub = self.add()
        sw = sub.world
        sw.register(RPos)
        seen = []

        def double(e, src, dst):
            seen.append(e)
            if src.y > 10:
                return False   # dropped: the twin gets no RPos
            dst.x, dst.y = src.x * 2, src.y * 2
            return True

        self.assertTrue(sub.extract_component(Pos, RPos, transform=double))
        e1 = self.spawn_synced(sub, 1, 2)
        e2 = self.spawn_synced(sub, 3, 20)
        e3 = self.w.spawn(Pos(5, 5))   # not tagged
        self.app.update(1 / 60)
        self.assertEqual(sorted(seen), sorted([e1, e2]))
        t1, t2 = sub.map(e1), sub.map(e2)
        self.assertNotEqual(t1, t2)
        r = sw.get(t1, RPos)
        self.assertEqual((r.x, r.y), (2, 4))
        self.assertIsNone(sw.get(t2, RPos))
        # each side holds the other's id
        self.assertEqual(sw.get(t1, sub.main_entity).target, e1)
        self.assertEqual(self.w.get(e1, sub.sub_entity).target, t1)
        with self.assertRaises(weft.WeftError) as cm:
            sub.map(e3)
        self.assertEqual(cm.exception.name, "WEFT_ERR_NOT_FOUND")
        # despawning the main entity despawns the twin at the next sync
        self.w.despawn(e1)
        self.app.update(1 / 60)
        self.assertFalse(sw.is_alive(t1))
        self.assertEqual(sub.frames, 2)

    def test_transform_exception_is_raised_by_update(self):
        sub = self.add()
        sub.world.register(RPos)

        def boom(e, src, dst):
            raise ValueError("transform failed")

        sub.extract_component(Pos, RPos, transform=boom)
        self.spawn_synced(sub, 1, 1)
        with self.assertRaises(ValueError):
            self.app.update(1 / 60)

    def test_resource_only_when_changed(self):
        sub = self.add()
        sw = sub.world
        rs = sw.register(Score, name="RScore")
        calls = []

        def copy(e, src, dst):
            calls.append(src.v)
            dst.v = src.v
            return True

        sub.extract_resource(Score, rs, transform=copy)
        self.w.resource_insert(Score(7))
        self.app.update(1 / 60)
        self.app.update(1 / 60)
        self.assertEqual(calls, [7])   # unchanged: not extracted again
        self.assertEqual(sw.resource_get(rs).v, 7)
        self.w.resource_get_mut(Score).v = 9
        self.app.update(1 / 60)
        self.assertEqual(calls, [7, 9])
        self.assertEqual(sw.resource_get(rs).v, 9)

    def test_user_extract_system(self):
        sub = self.add()
        sw = sub.world
        sw.register(RPos)
        total = sw.register(Sum)
        sw.resource_insert(Sum(0))
        self.w.resource_insert(Score(3))
        seen = []

        def extract(ctx, main):
            s = 0.0
            for e, p in main.each(0):
                s += p.x
                twin = main.sub_entity(e)
                if twin is not None:
                    ctx.world.insert(twin, RPos(p.x, p.y))
            ctx.world.resource_get_mut(Sum).v = s
            seen.append((main.resource(Score).v, main.resource_changed(Score)))

        sub.add_extract(extract, main_queries=[[weft.read(Pos), weft.with_(sub.sync_tag)]],
                        main_resources=[Score], resources=[weft.write(total)], exclusive=True)
        e1 = self.spawn_synced(sub, 1, 2)
        self.spawn_synced(sub, 4, 5)
        self.w.spawn(Pos(100, 0))   # not synced: not in the query
        self.app.update(1 / 60)
        self.app.update(1 / 60)
        self.assertEqual(sw.resource_get(Sum).v, 5.0)
        self.assertEqual(seen, [(3, True), (3, False)])
        r = sw.get(sub.map(e1), RPos)
        self.assertEqual((r.x, r.y), (1, 2))

    def test_instance_map(self):
        sub = self.add()

        def keep_even(e, src, dst):
            if int(src.x) % 2:
                return False
            dst.s = src.x + src.y
            return True

        m = sub.extract_instances("Instances", Pos, Inst, transform=keep_even)
        es = [self.w.spawn(Pos(i, 0.5)) for i in range(10)]
        self.app.update(1 / 60)
        got = sub.instances(m)
        self.assertEqual(sorted(got), sorted(es[0::2]))
        self.assertEqual(list(got), sorted(got))   # keys ascending
        for i in range(0, 10, 2):
            self.assertEqual(got[es[i]].s, i + 0.5)
            self.assertEqual(sub.instance(m, es[i]).s, i + 0.5)
        self.assertIsNone(sub.instance(m, es[1]))
        self.assertEqual(sub.world.stats().live_entities, 0)

    def test_instance_map_hash_follows_contents(self):
        hashes = []
        for _ in range(2):
            with weft.App() as app:
                app.world.register(Pos)
                sub = app.add_sub_app("render")
                sub.extract_instances("Instances", Pos)
                for i in range(30):
                    app.world.spawn(Pos(i, 2 * i))
                app.update(1 / 60)
                hashes.append(sub.world.hash())
                app.world.spawn(Pos(0, 0))   # keep the allocations apart
        self.assertEqual(hashes[0], hashes[1])


class TestSystemsAndPipeline(SubAppCase):
    def build(self, sub):
        sw = sub.world
        sw.register(RPos)
        total = sw.register(Sum)
        sw.resource_insert(Sum(0))
        sub.extract_component(Pos, RPos)

        def sum_positions(ctx):
            s = 0.0
            for _, p in ctx.each():
                s += p.x + 3 * p.y
            ctx.world.resource_get_mut(Sum).v = s

        sub.add_system("Update", sum_positions, query=[weft.read(RPos)],
                       resources=[weft.write(total)], exclusive=True)
        hashes = []

        def record(ctx):
            hashes.append(ctx.world.hash())

        sub.add_system("Last", record, exclusive=True)

        def move(ctx):
            for chunk in ctx.iter():
                col = chunk.column(0)
                for r in range(chunk.count):
                    col[r].x += 1.0
                    col[r].y = (col[r].y + 0.5) % 7

        self.app.add_system("Update", move, query=[weft.write(Pos)])
        return hashes

    def run_frames(self, pipelined, threads, share, frames=40):
        with weft.App() as app:
            self.app, self.w = app, app.world   # for build()
            app.world.register(Pos)
            if threads > 1:
                app.world.set_threads(threads)
            sub = app.add_sub_app("render", pipelined=pipelined, share_threads=share)
            if share:
                self.assertEqual(sub.world.threads, app.world.threads)
            hashes = self.build(sub)
            for i in range(20):
                app.world.spawn(Pos(i, i % 5), sub.sync_tag)
            for _ in range(frames):
                app.update(1 / 60)
            sub.wait()
            self.assertEqual(sub.frames, frames)
            out = list(hashes)
            self.assertGreater(sub.world.resource_get(Sum).v, 0)
        return out

    @unittest.skipIf(weft.max_threads() < 2,
                     "needs threads: this weft was built with WEFT_THREADS=OFF")
    def test_pipelined_shared_pool_same_hashes(self):
        app0 = self.app
        try:
            ref = self.run_frames(False, 1, False)
            self.assertEqual(len(ref), 40)
            self.assertNotEqual(ref[0], ref[-1])
            self.assertEqual(self.run_frames(True, 1, False), ref)
            self.assertEqual(self.run_frames(True, 2, True), ref)
            self.assertEqual(self.run_frames(False, 2, True), ref)
        finally:
            self.app, self.w = app0, app0.world

    @unittest.skipIf(weft.max_threads() < 2,
                     "needs threads: this weft was built with WEFT_THREADS=OFF")
    def test_set_pipelined_and_wait(self):
        sub = self.add()
        sub.world.register(RPos)
        sub.extract_component(Pos, RPos)
        self.spawn_synced(sub, 1, 1)
        sub.set_pipelined(True)
        self.app.update(1 / 60)
        sub.wait()
        sub.set_pipelined(False)
        self.app.update(1 / 60)
        self.assertEqual(sub.frames, 2)


class TestRules(SubAppCase):
    @unittest.skipUnless(ctypes.sizeof(ctypes.c_void_p) == 8, "layouts pinned for LP64")
    def test_desc_layouts_match_weft_h(self):
        # Same numbers as tests/abi/test_abi_layout.c.
        from weft import _abi
        self.assertEqual(ctypes.sizeof(_abi.WeftSubAppDesc), 80)
        self.assertEqual(_abi.WeftSubAppDesc.share_threads.offset, 74)
        self.assertEqual(_abi.WeftSubAppDesc._end_canary.offset, 76)
        self.assertEqual(ctypes.sizeof(_abi.WeftInstanceMap), 32)

    def test_name_used_twice(self):
        self.add()
        with self.assertRaises(weft.WeftError) as cm:
            self.app.add_sub_app("render")
        self.assertEqual(cm.exception.name, "WEFT_ERR_ALREADY_EXISTS")

    def test_sub_app_is_driven_by_its_app(self):
        sub = self.add()
        with self.assertRaises(weft.WeftError) as cm:
            sub.app.update(1 / 60)
        self.assertEqual(cm.exception.name, "WEFT_ERR_WRONG_PHASE")
        sub.world.close()   # only drops the wrapper: the sub-app owns the world
        self.app.update(1 / 60)

    def test_clone_gets_own_twin(self):
        sub = self.add()
        e = self.spawn_synced(sub, 1, 2)
        self.app.update(1 / 60)
        twin = sub.map(e)
        c = self.w.clone(e)
        self.assertTrue(self.w.has(c, sub.sync_tag))
        self.assertFalse(self.w.has(c, sub.sub_entity))
        self.app.update(1 / 60)
        self.assertNotEqual(sub.map(c), twin)
        self.assertEqual(sub.map(e), twin)

    def test_closed_app_forgets_its_sub_apps(self):
        with weft.App() as app:
            sub = app.add_sub_app("render")
        with self.assertRaises(weft.WeftError) as cm:
            sub.frames
        self.assertEqual(cm.exception.name, "WEFT_ERR_INVALID_HANDLE")

    @unittest.skipIf(weft.max_threads() < 2,
                     "needs threads: this weft was built with WEFT_THREADS=OFF")
    def test_share_threads_rules(self):
        a = weft.World()
        b = weft.World()
        try:
            a.set_threads(2)
            b.share_threads(a)
            self.assertEqual(b.threads, 2)
            with self.assertRaises(weft.WeftError) as cm:
                a.set_threads(3)
            self.assertEqual(cm.exception.name, "WEFT_ERR_WRONG_PHASE")
            with self.assertRaises(weft.WeftError) as cm:
                a.share_threads(a)
            self.assertEqual(cm.exception.name, "WEFT_ERR_INVALID_ARG")
            b.share_threads(None)
            a.set_threads(3)
        finally:
            b.close()
            a.close()


if __name__ == "__main__":
    unittest.main()

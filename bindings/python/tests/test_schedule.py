# bindings/python/tests/test_schedule.py - systems written in Python run by weft's executors (run by ctest).
# SPDX-License-Identifier: MIT
import ctypes
import gc
import json
import os
import threading
import unittest
import weakref

import weft
from weft import read, write, with_, Changed, terms


class Position(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


class Velocity(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


class Score(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int64)]


class Time(ctypes.Structure):
    _fields_ = [("elapsed", ctypes.c_double), ("steps", ctypes.c_int32)]


class Hit(ctypes.Structure):
    _fields_ = [("amount", ctypes.c_int32)]


class Counter(ctypes.Structure):
    _fields_ = [("n", ctypes.c_int32)]


class Boom(Exception):
    pass


class ScheduleCase(unittest.TestCase):
    def setUp(self):
        self.w = weft.World()
        self.w.register(Position)
        self.w.register(Velocity)
        self.w.register(Score)
        self.w.register(Time)

    def tearDown(self):
        try:
            self.w.check()
        finally:
            self.w.close()

    def movers(self, n):
        return [self.w.spawn(Position(i, 0), Velocity(1, 2)) for i in range(n)]


def move(ctx):
    dt = ctx.delta
    for chunk in ctx.iter(0):
        p, v = chunk.column(0), chunk.column(1)
        for i in range(chunk.count):
            p[i].x += v[i].x * dt
            p[i].y += v[i].y * dt


MOVE = dict(query=[write(Position), read(Velocity)])


class TestLayouts(unittest.TestCase):
    @unittest.skipUnless(ctypes.sizeof(ctypes.c_void_p) == 8, "layouts pinned for LP64")
    def test_scheduler_struct_layouts(self):
        # Same numbers as tests/abi/test_abi_layout.c.
        expect = {
            weft.WeftResourceUse: 8, weft.WeftMessageUse: 8, weft.WeftLocalDesc: 32,
            weft.WeftSystemDesc: 136, weft.WeftConditionDesc: 80,
            weft.WeftAmbiguity: 24, weft.WeftSystemStats: 40,
            weft.WeftJobSystem: 32, weft.WeftAppDesc: 104, weft.WeftPluginDesc: 80,
            weft.WeftPluginGroupDesc: 48,
        }
        for t, size in expect.items():
            self.assertEqual(ctypes.sizeof(t), size, t.__name__)
        self.assertEqual(weft.WeftSystemDesc.query_count.offset, 40)
        self.assertEqual(weft.WeftSystemDesc.flags.offset, 76)
        self.assertEqual(weft.WeftSystemDesc.local.offset, 80)
        self.assertEqual(weft.WeftSystemDesc.query_groups.offset, 112)
        self.assertEqual(weft.WeftSystemDesc.removed.offset, 120)
        self.assertEqual(weft.WeftSystemDesc.removed_count.offset, 128)
        self.assertEqual(weft.WeftSystemDesc._end_canary.offset, 132)
        self.assertEqual(weft.WeftConditionDesc._end_canary.offset, 76)
        self.assertEqual(weft.WeftAmbiguity.components.offset, 16)
        self.assertEqual(weft.WeftAppDesc.world_desc.offset, 16)
        self.assertEqual(weft.WeftAppDesc.max_fixed_steps.offset, 88)
        self.assertEqual(weft.WeftAppDesc._end_canary.offset, 96)
        self.assertEqual(weft.WeftPluginDesc.repeatable.offset, 52)
        self.assertEqual(weft.WeftPluginDesc._end_canary.offset, 72)
        self.assertEqual(weft.WeftPluginGroupDesc.disabled_count.offset, 40)


class TestScheduleLifetime(ScheduleCase):
    def test_create_lookup_destroy(self):
        w = self.w
        s = w.schedule("update")
        self.assertIs(w.schedule_lookup("update"), s)
        self.assertIsNone(w.schedule_lookup("nope"))
        with self.assertRaises(weft.WeftError) as cm:
            w.schedule("update")
        self.assertEqual(cm.exception.name, "WEFT_ERR_ALREADY_EXISTS")
        s.destroy()
        self.assertIsNone(w.schedule_lookup("update"))
        with self.assertRaises(weft.WeftError):
            s.run()
        w.schedule("update")   # the name is free again

    def test_trampolines_live_as_long_as_the_schedule(self):
        w = self.w
        s = w.schedule("update")
        ran = []

        class Body:
            def __call__(self, ctx):
                ran.append(ctx.name)
        body = Body()
        ref = weakref.ref(body)
        s.add_system(body, name="body")
        del body
        gc.collect()
        self.assertIsNotNone(ref())          # kept by the schedule
        s.run()
        s.run()
        self.assertEqual(ran, ["body", "body"])
        s.destroy()
        gc.collect()
        self.assertIsNone(ref())             # released with it

    def test_context_is_invalid_after_the_call(self):
        s = self.w.schedule("update")
        kept = []
        s.add_system(lambda ctx: kept.append(ctx), name="keeper")
        s.run()
        with self.assertRaises(weft.WeftError) as cm:
            kept[0].delta
        self.assertEqual(cm.exception.name, "WEFT_ERR_WRONG_PHASE")


class TestPythonSystems(ScheduleCase):
    def test_movement(self):
        w = self.w
        es = self.movers(100)
        s = w.schedule("update")
        s.add_system(move, **MOVE)
        s.run(0.5)
        s.run(0.5)
        for i, e in enumerate(es):
            p = w.get(e, Position)
            self.assertEqual((p.x, p.y), (i + 1.0, 2.0))
        st = s.system_stats("move")
        self.assertEqual((st.runs, st.skipped, st.failures), (2, 0, 0))

    def test_changed_filter_counter(self):
        w = self.w
        es = self.movers(10)
        s = w.schedule("update")
        poke = []
        seen = []

        def poker(ctx):
            for e in poke:
                ctx.get_mut(0, e, 0).x += 100
        s.add_system(poker, query=[write(Position)])

        def counter(ctx):
            seen.append(sum(len(c) for c in ctx.iter(0)))
        s.add_system(counter, query=[read(Position), Changed(Position)], after="poker")

        s.run()                 # first run: everything counts as changed
        s.run()                 # nothing written since the counter's last run
        poke[:] = [es[3], es[7]]
        s.run()
        poke[:] = []
        s.run()
        self.assertEqual(seen, [10, 0, 2, 0])
        self.assertEqual(w.get(es[3], Position).x, 103)

    def test_commands_with_auto_sync_reach_the_next_system(self):
        w = self.w
        s = w.schedule("update")
        counts = []

        def spawner(ctx):
            cmds = ctx.commands
            for i in range(5):
                cmds.spawn(Position(i, i), Velocity(0, 1))
        spawn = s.add_system(spawner, commands=True)

        def counter(ctx):
            counts.append((ctx.count(0), sum(len(c) for c in ctx.iter(0))))
        s.add_system(counter, query=[read(Position)], after=spawn)
        s.run()
        self.assertGreaterEqual(s.sync_count, 1)
        s.run()
        self.assertEqual(counts, [(5, 5), (10, 10)])
        self.assertEqual(w.stats().live_entities, 10)

    def test_without_auto_sync_the_spawns_land_at_the_end(self):
        w = self.w
        s = w.schedule("update")
        s.set_auto_sync(False)
        counts = []
        spawn = s.add_system(lambda ctx: ctx.commands.spawn(Position(0, 0)),
                             name="spawner", commands=True)
        s.add_system(lambda ctx: counts.append(ctx.count(0)), name="counter",
                     query=[read(Position)], after=spawn)
        s.run()
        s.run()
        self.assertEqual(counts, [0, 1])
        self.assertEqual(w.stats().live_entities, 2)

    def test_context_views_die_with_the_run(self):
        # Views a system hands out are valid during its run only: kept
        # past it, they raise instead of touching the world's memory.
        w = self.w
        es = self.movers(3)
        w.resource_insert(Score(0))
        s = w.schedule("update")
        kept = []

        def keeper(ctx):
            r = ctx.resource_mut(Score)
            r.value += 1
            p = ctx.get_mut(0, es[0], 0)
            p.x += 1
            kept[:] = [r, p]
            self.assertEqual(r.value, 1)
        s.add_system(keeper, query=[write(Position)], resources=[write(Score)])
        s.run()
        self.assertEqual(w.resource_get(Score).value, 1)
        self.assertEqual(len(kept), 2)
        for v, field in zip(kept, ("value", "x")):
            with self.assertRaises(weft.WeftError) as cm:
                getattr(v, field)
            self.assertEqual(cm.exception.name, "WEFT_ERR_INVALID_HANDLE")
            with self.assertRaises(weft.WeftError):
                setattr(v, field, 5)
        self.assertEqual(w.resource_get(Score).value, 1)

    def test_resources_and_messages(self):
        w = self.w
        hits = w.message_type(Hit)
        w.resource_insert(Score(0))
        w.resource_insert(Time(0, 0))
        s = w.schedule("update")

        def shoot(ctx):
            t = ctx.resource_mut(Time)
            t.elapsed += ctx.delta
            t.steps += 1
            for i in range(t.steps):
                ctx.write(hits, Hit(i + 1))
        s.add_system(shoot, resources=[write(Time)], messages=[write(hits)])

        def score(ctx):
            total = sum(m.amount for m in ctx.messages(hits))
            ctx.resource_mut(Score).value += total
            self.assertEqual(ctx.resource(Time).steps, ctx.resource(Time).steps)
        s.add_system(score, resources=[write(Score), read(Time)],
                     messages=[read(hits)], after="shoot")
        for _ in range(3):
            s.run(0.25)
            w.update_messages()
        self.assertEqual(w.resource_get(Score).value, 1 + (1 + 2) + (1 + 2 + 3))
        t = w.resource_get(Time)
        self.assertEqual((t.elapsed, t.steps), (0.75, 3))

    def test_undeclared_resource_fails_the_run(self):
        w = self.w
        w.resource_insert(Score(1))
        s = w.schedule("update")
        s.add_system(lambda ctx: ctx.resource(Score), name="sneaky")
        with self.assertRaises(weft.WeftError) as cm:
            s.run()
        self.assertEqual(cm.exception.name, "WEFT_ERR_ACCESS_VIOLATION")
        self.assertIn("sneaky", str(cm.exception))

    def test_local_state(self):
        s = self.w.schedule("update")
        seen = []

        def tick(ctx):
            ctx.local.n += 1
            seen.append(ctx.local.n)
        s.add_system(tick, local=Counter)
        for _ in range(3):
            s.run()
        self.assertEqual(seen, [1, 2, 3])

    def test_exclusive_system_uses_the_world(self):
        w = self.w
        s = w.schedule("update")
        made = []

        def builder(ctx):
            made.append(ctx.world.spawn(Position(7, 7)))
            self.assertIs(ctx.world, w)
        s.add_system(builder, exclusive=True)
        s.run()
        self.assertTrue(w.is_alive(made[0]))
        self.assertEqual(w.get(made[0], Position).x, 7)

    def test_non_exclusive_system_may_not_use_the_world(self):
        s = self.w.schedule("update")
        s.add_system(lambda ctx: ctx.world, name="grabby")
        with self.assertRaises(weft.WeftError) as cm:
            s.run()
        self.assertEqual(cm.exception.name, "WEFT_ERR_WRONG_PHASE")
        self.assertIn("grabby", str(cm.exception))

    def test_param_set_and_removed_components(self):
        w = self.w
        es = self.movers(4)
        s = w.schedule("update")
        sums = []

        def both(ctx):
            for chunk in ctx.iter(0):          # one member of the set at a time
                p = chunk.column(0)
                for i in range(chunk.count):
                    p[i].y += 1
            sums.append(sum(p.y for _, p in ctx.each(1)))
        with self.assertRaises(weft.WeftError) as cm:
            s.add_system(both, queries=[[write(Position)], [read(Position)]])
        self.assertEqual(cm.exception.name, "WEFT_ERR_ACCESS_VIOLATION")
        s.add_system(both, queries=[[write(Position)], [read(Position)]], query_groups=[1, 1])
        gone = []
        s.add_system(lambda ctx: gone.extend(ctx.removed(Velocity)), name="mourner",
                     removed=[Velocity])
        s.add_system(lambda ctx: list(ctx.removed(Velocity)), name="nosy")
        w.remove(es[1], Velocity)
        w.despawn(es[2])
        with self.assertRaises(weft.WeftError) as cm:
            s.run()
        self.assertEqual(cm.exception.name, "WEFT_ERR_ACCESS_VIOLATION")
        self.assertIn("nosy", str(cm.exception))
        self.assertEqual(sums, [3.0])             # 3 live movers, y 0 -> 1
        self.assertEqual(sorted(gone), sorted([es[1], es[2]]))

    def test_breaking_out_of_an_iteration(self):
        self.movers(10)
        s = self.w.schedule("update")
        firsts = []

        def peek(ctx):
            for chunk in ctx.iter(0):
                firsts.append(chunk.entities[0])
                break
            held = ctx.iter(0)
            next(held)   # left open on purpose: ended when the system returns
            self._held = held
        s.add_system(peek, query=[read(Position)])
        s.run()
        s.run()
        self.assertEqual(len(firsts), 2)


class TestOrdering(ScheduleCase):
    def logger(self, log, name):
        def body(ctx):
            log.append(ctx.name)
        body.__name__ = name
        return body

    def test_before_after_chain_and_sets(self):
        s = self.w.schedule("update")
        log = []
        a = s.add_system(self.logger(log, "a"))
        b = s.add_system(self.logger(log, "b"))
        c = s.add_system(self.logger(log, "c"))
        d = s.add_system(self.logger(log, "d"))
        e = s.add_system(self.logger(log, "e"))
        s.add_chain(c, b, a)                      # c, b, a
        early, late = s.ensure_set("early"), s.ensure_set("late")
        e.in_set(early)
        d.in_set(late)
        s.add_order(early, late)                  # e before d
        late.after(a)                         # d after a
        s.run()
        self.assertLess(log.index("c"), log.index("b"))
        self.assertLess(log.index("b"), log.index("a"))
        self.assertLess(log.index("e"), log.index("d"))
        self.assertLess(log.index("a"), log.index("d"))
        self.assertEqual(sorted(log), ["a", "b", "c", "d", "e"])
        self.assertEqual([n for n in s.order_of()], log)
        self.assertEqual(s.position(c), log.index("c"))
        self.assertEqual(s.node_count, 5)
        self.assertEqual(s.node_name(d), "d")
        self.assertTrue(s.has_edge(c, b))

    def test_cycle_names_its_nodes(self):
        s = self.w.schedule("update")
        a = s.add_system(lambda ctx: None, name="alpha")
        b = s.add_system(lambda ctx: None, name="beta")
        a.before(b)
        b.before(a)
        with self.assertRaises(weft.WeftError) as cm:
            s.build()
        self.assertEqual(cm.exception.name, "WEFT_ERR_SCHEDULE_CYCLE")
        self.assertIn("alpha", cm.exception.message)
        self.assertIn("beta", cm.exception.message)

    def test_apply_point(self):
        w = self.w
        s = w.schedule("update")
        s.set_auto_sync(False)
        counts = []
        spawn = s.add_system(lambda ctx: ctx.commands.spawn(Position(0, 0)),
                             name="spawner", commands=True)
        ap = s.add_apply_point("apply")
        look = s.add_system(lambda ctx: counts.append(ctx.count(0)), name="counter",
                            query=[read(Position)])
        s.add_chain(spawn, ap, look)
        s.run()
        self.assertEqual(counts, [1])


class TestConditions(ScheduleCase):
    def test_python_condition_skips_a_system(self):
        s = self.w.schedule("update")
        gate = {"open": False}
        ran = []
        s.add_system(lambda ctx: ran.append(1), name="gated",
                     run_if=lambda ctx: gate["open"])
        s.run()
        gate["open"] = True
        s.run()
        s.run()
        gate["open"] = False
        s.run()
        self.assertEqual(len(ran), 2)
        st = s.system_stats("gated")
        self.assertEqual((st.runs, st.skipped), (2, 2))

    def test_builtin_conditions_and_combinators(self):
        w = self.w
        s = w.schedule("update")
        ran = {k: 0 for k in ("once", "not_once", "changed", "and", "or", "exists")}

        def bump(key):
            def body(ctx):
                ran[key] += 1
            body.__name__ = key
            return body
        yes = lambda ctx: True   # noqa: E731
        no = lambda ctx: False   # noqa: E731
        s.add_system(bump("once"), run_if=s.run_once())
        s.add_system(bump("not_once"), run_if=~s.run_once())
        s.add_system(bump("changed"), run_if=s.resource_changed(Score))
        s.add_system(bump("and"), run_if=s.condition(yes) & s.condition(no))
        s.add_system(bump("or"), run_if=s.condition(no) | s.condition(yes))
        s.add_system(bump("exists"), run_if=s.and_(s.resource_exists(Score), yes))
        s.run()                        # no Score yet
        w.resource_insert(Score(1))
        s.run()                        # inserted: changed
        s.run()                        # untouched
        w.resource_get_mut(Score).value = 2
        s.run()                        # written: changed
        self.assertEqual(ran, {"once": 1, "not_once": 3, "changed": 2, "and": 0,
                               "or": 4, "exists": 3})

    def test_condition_on_a_set(self):
        s = self.w.schedule("update")
        ran = []
        group = s.ensure_set("group")
        s.add_system(lambda ctx: ran.append("x"), name="x", in_set=group)
        s.add_system(lambda ctx: ran.append("y"), name="y", in_set=group)
        group.run_if(s.run_once())
        s.run()
        s.run()
        self.assertEqual(sorted(ran), ["x", "y"])

    def test_condition_attached_once(self):
        s = self.w.schedule("update")
        c = s.run_once()
        a = s.add_system(lambda ctx: None, name="a", run_if=c)
        with self.assertRaises(weft.WeftError):
            s.add_system(lambda ctx: None, name="b").run_if(c)
        self.assertIsNotNone(a)


class TestFailures(ScheduleCase):
    def test_exception_in_a_system_is_raised_as_weft_error(self):
        w = self.w
        es = self.movers(3)
        s = w.schedule("update")
        s.add_system(move, **MOVE)

        def explode(ctx):
            raise Boom("reactor breach")
        s.add_system(explode)
        after = []
        s.add_system(lambda ctx: after.append(1), name="after", after="explode")
        with self.assertRaises(weft.WeftError) as cm:
            s.run(1.0)
        err = cm.exception
        self.assertIn("explode", str(err))
        self.assertIn("reactor breach", err.message)
        self.assertIn("Boom", err.message)
        self.assertIsInstance(err.__cause__, Boom)
        self.assertEqual(err.status, weft.PYTHON_EXCEPTION_STATUS)
        # the rest of the run completed
        self.assertEqual(after, [1])
        self.assertEqual(w.get(es[0], Position).x, 1)
        self.assertEqual(s.system_stats("explode").failures, 1)
        w.check()

    def test_weft_error_inside_a_system_keeps_its_status(self):
        s = self.w.schedule("update")

        def lookup(ctx):
            ctx.commands.despawn(0)    # invalid entity: refused when recorded
        s.add_system(lookup, commands=True)
        with self.assertRaises(weft.WeftError) as cm:
            s.run()
        self.assertEqual(cm.exception.name, "WEFT_ERR_INVALID_ENTITY")
        self.assertIn("lookup", str(cm.exception))

    def test_fail_with_status_and_message(self):
        s = self.w.schedule("update")
        s.add_system(lambda ctx: ctx.fail("ERR_NOT_FOUND", "no player"), name="find_player")
        with self.assertRaises(weft.WeftError) as cm:
            s.run()
        self.assertEqual(cm.exception.name, "WEFT_ERR_NOT_FOUND")
        self.assertIn("no player", cm.exception.message)
        self.assertIsNone(cm.exception.__cause__)

    def test_first_failure_wins_and_next_run_is_clean(self):
        s = self.w.schedule("update")
        state = {"raise": True}

        def first(ctx):
            if state["raise"]:
                raise ValueError("first")

        def second(ctx):
            if state["raise"]:
                raise KeyError("second")
        a = s.add_system(first)
        s.add_system(second, after=a)
        with self.assertRaises(weft.WeftError) as cm:
            s.run()
        self.assertIsInstance(cm.exception.__cause__, ValueError)
        self.assertEqual(s.system_stats("second").failures, 1)
        state["raise"] = False
        s.run()

    def test_exception_in_a_condition(self):
        s = self.w.schedule("update")
        ran = []

        def broken(ctx):
            raise Boom("bad gate")
        s.add_system(lambda ctx: ran.append(1), name="guarded", run_if=broken)
        with self.assertRaises(weft.WeftError) as cm:
            s.run()
        self.assertIn("bad gate", str(cm.exception))
        self.assertIsInstance(cm.exception.__cause__, Boom)
        self.assertEqual(ran, [])

    def test_keyboard_interrupt_passes_through(self):
        s = self.w.schedule("update")

        def stop(ctx):
            raise KeyboardInterrupt()
        s.add_system(stop)
        with self.assertRaises(KeyboardInterrupt):
            s.run()

    def test_observer_exception_during_the_run(self):
        w = self.w
        def on_add(trigger):
            raise Boom("observer")
        w.observe(weft.ADD, on_add, component=Velocity)
        s = w.schedule("update")
        s.add_system(lambda ctx: ctx.commands.spawn(Velocity(0, 0)), name="spawner",
                     commands=True)
        with self.assertRaises(Boom):
            s.run()
        self.assertEqual(w.stats().live_entities, 1)


class TestDiagnostics(ScheduleCase):
    def test_ambiguity_report(self):
        w = self.w
        s = w.schedule("update")
        a = s.add_system(lambda ctx: None, name="push", query=[write(Position)])
        b = s.add_system(lambda ctx: None, name="pull", query=[write(Position)])
        s.add_system(lambda ctx: None, name="reader", query=[read(Velocity)])
        s.add_system(lambda ctx: None, name="score_a", resources=[write(Score)])
        s.add_system(lambda ctx: None, name="score_b", resources=[read(Score)])
        s.build()
        amb = {x.names: x for x in s.ambiguities()}
        self.assertEqual(set(amb), {("push", "pull"), ("score_a", "score_b")})
        self.assertEqual([c.name for c in amb[("push", "pull")].components], ["Position"])
        self.assertEqual(amb[("push", "pull")].a, a)
        self.assertEqual(amb[("push", "pull")].b, b)
        self.assertIn("Position", repr(amb[("push", "pull")]))
        s.add_ambiguous_pair(a, b)
        s.add_ambiguous_component(Score)
        s.build()
        self.assertEqual(s.ambiguities(), [])
        self.assertLess(a.position, b.position)   # still ordered by registration

    def test_disjoint_filters_are_not_ambiguous(self):
        w = self.w
        w.tag("Frozen")
        s = w.schedule("update")
        s.add_system(lambda ctx: None, name="thaw",
                     query=[write(Position), with_("Frozen")])
        s.add_system(lambda ctx: None, name="melt",
                     query=[write(Position), weft.without("Frozen")])
        s.build()
        self.assertEqual(s.ambiguities(), [])

    def test_stats_trace_and_dot(self):
        self.movers(50)
        s = self.w.schedule("update")
        s.set_profiling(True)
        s.add_system(move, **MOVE)
        s.add_system(lambda ctx: None, name="idle", after="move")
        s.run(0.1)
        s.run(0.1)
        st = s.system_stats("move")
        self.assertEqual(st.runs, 2)
        self.assertGreater(st.total_ns, 0)
        self.assertGreaterEqual(st.total_ns, st.last_ns)
        self.assertIn("runs", st.as_dict())
        self.assertGreaterEqual(s.max_concurrency, 1)
        self.assertGreaterEqual(s.build_count, 1)
        trace = json.loads(s.trace_json())
        events = trace["traceEvents"] if isinstance(trace, dict) else trace
        names = {e.get("name") for e in events}
        self.assertIn("move", names)
        self.assertIn("idle", names)
        dot = s.dot()
        self.assertIn("digraph", dot)
        self.assertIn("move", dot)
        self.assertIn("idle", dot)

    def test_dot_empty_before_build(self):
        s = self.w.schedule("update")
        s.add_system(lambda ctx: None, name="x")
        self.assertEqual(s.dot(), "")
        self.assertEqual(s.position("x"), -1)
        with self.assertRaises(weft.WeftError):
            s.ambiguities()


class TestApp(ScheduleCase):
    def test_fixed_schedule_step_count(self):
        w = self.w
        log = []
        app = weft.App(w, fixed_step=0.25, max_delta=1.0)
        self.addCleanup(app.close)
        fixed = app.schedule("FixedUpdate")
        fixed.add_system(lambda ctx: log.append(("fixed", ctx.delta)), name="physics")
        app.add_system("Update", lambda ctx: log.append(("update", ctx.delta)), name="logic")
        steps = []
        for dt in (0.625, 0.625, 0.125, 5.0):
            log.clear()
            app.update(dt)
            steps.append(app.fixed_steps)
            n = steps[-1]
            self.assertEqual(log[:n], [("fixed", 0.25)] * n)   # before Update
            self.assertEqual(log[n:], [("update", min(dt, 1.0))])
        # 0.625 -> 2 (0.125 left), 0.75 -> 3 (0), 0.125 -> 0, clamped 1.0 -> 4
        self.assertEqual(steps, [2, 3, 0, 4])
        self.assertEqual(app.fixed_accumulator, 0.125)
        self.assertEqual(fixed.system_stats("physics").runs, 9)
        self.assertEqual(app.update_count, 4)

    def test_update_reports_a_failing_system(self):
        w = self.w
        app = weft.App(w, fixed_step=0.125)
        self.addCleanup(app.close)
        app.add_system("FixedUpdate", lambda ctx: 1 / 0, name="divide")
        later = []
        app.add_system("Update", lambda ctx: later.append(1), name="logic")
        with self.assertRaises(weft.WeftError) as cm:
            app.update(0.125)
        self.assertEqual(app.fixed_steps, 1)
        self.assertIn("divide", str(cm.exception))
        self.assertIsInstance(cm.exception.__cause__, ZeroDivisionError)
        self.assertEqual(later, [1])   # every schedule still runs

    def test_update_updates_messages(self):
        w = self.w
        hits = w.message_type(Hit)
        app = weft.App(w)
        self.addCleanup(app.close)
        s = app.schedule("Update")
        got = []
        s.add_system(lambda ctx: ctx.write(hits, Hit(1)), name="emit",
                     messages=[write(hits)])
        s.add_system(lambda ctx: got.append(len(list(ctx.messages(hits)))), name="take",
                     messages=[read(hits)], after="emit")
        for _ in range(4):
            app.update(0.016)
        self.assertEqual(got, [1, 1, 1, 1])

    def test_order_and_inserted_schedules(self):
        app = weft.App(self.w)
        self.addCleanup(app.close)
        self.assertEqual(app.labels("startup"), ["PreStartup", "Startup", "PostStartup"])
        self.assertEqual(app.labels(), ["First", "PreUpdate", "StateTransition",
                                        "RunFixedMainLoop", "Update", "PostUpdate", "Last"])
        app.insert_schedule("Ai", after="Update")
        app.insert_schedule("Input", before="PreUpdate")
        self.assertEqual(app.labels()[:3], ["First", "Input", "PreUpdate"])
        self.assertEqual(app.labels()[5:7], ["Update", "Ai"])
        with self.assertRaises(weft.WeftError) as cm:
            app.insert_schedule("Update", after="Last")
        self.assertEqual(cm.exception.name, "WEFT_ERR_INVALID_ARG")
        with self.assertRaises(weft.WeftError) as cm:
            app.insert_schedule("X", after="Nowhere")
        self.assertEqual(cm.exception.name, "WEFT_ERR_NOT_FOUND")
        with self.assertRaises(weft.WeftError) as cm:
            app.insert_schedule("Ai", after="Ai")
        self.assertEqual(cm.exception.name, "WEFT_ERR_SCHEDULE_CYCLE")
        log = []
        app.add_system("Startup", lambda ctx: log.append("startup"), name="s")
        app.add_system("Ai", lambda ctx: log.append("ai"), name="ai")
        app.add_system("Input", lambda ctx: log.append("input"), name="input")
        app.update(0.01)
        app.update(0.01)
        self.assertEqual(log, ["startup", "input", "ai", "input", "ai"])

    def test_runner_and_exit(self):
        app = weft.App()   # its own world
        self.addCleanup(app.close)
        count = []

        @app.system("Update")
        def tick(ctx):
            count.append(1)
            if len(count) == 3:
                app.exit(5)

        def runner(a):
            while a.exit_requested is None:
                a.update(1 / 60)
        self.assertIsNone(app.exit_requested)
        app.run(runner)
        self.assertEqual(len(count), 3)
        self.assertEqual(app.exit_requested, 5)

        def bad_runner(a):
            raise KeyError("stop")
        with self.assertRaises(KeyError):
            app.run(bad_runner)

    def test_world_close_releases_the_app(self):
        w = weft.World()
        app = weft.App(w)
        w.close()             # destroys the app first
        with self.assertRaises(weft.WeftError):
            app.update(0.1)


def build_sim(w):
    """A schedule of Python systems touching disjoint and shared data."""
    w.resource_insert(Score(0))
    for i in range(64):
        w.spawn(Position(i, -i), Velocity(1 + i % 3, 0.5))
    s = w.schedule("update")
    main = threading.get_ident()
    threads = set()

    def note(ctx):
        threads.add(threading.get_ident() == main)

    def mover(ctx):
        note(ctx)
        move(ctx)

    def spawner(ctx):
        note(ctx)
        for chunk in ctx.iter(0):
            p = chunk.column(0)
            for i in range(chunk.count):
                if p[i].x > 20 and int(p[i].x) % 7 == 0:
                    ctx.commands.spawn(Position(-p[i].x, 0), Velocity(0, 1))

    def scorer(ctx):
        note(ctx)
        total = sum(len(c) for c in ctx.iter(0))
        ctx.resource_mut(Score).value += total

    def grow(ctx):
        note(ctx)
        for chunk in ctx.iter(0):
            v = chunk.column(0)
            for i in range(chunk.count):
                v[i].y += 0.25
    s.add_system(mover, **MOVE)
    s.add_system(spawner, query=[read(Position)], commands=True, after="mover")
    s.add_system(scorer, query=[read(Position), Changed(Position)],
                 resources=[write(Score)], after="spawner")
    s.add_system(grow, query=[write(Velocity)], after="mover")
    return s, threads


@unittest.skipIf(weft.max_threads() < 2,
                 "needs threads: this weft was built with WEFT_THREADS=OFF")
class TestThreads(unittest.TestCase):
    def run_sim(self, threads, runs=6):
        with weft.World() as w:
            for t in (Position, Velocity, Score):
                w.register(t)
            w.set_threads(threads)
            self.assertEqual(w.threads, max(1, threads))
            s, seen = build_sim(w)
            for _ in range(runs):
                s.run(0.5)
            w.check()
            self.assertEqual(seen, {True})   # Python systems ran on the caller
            return w.hash(), w.stats().live_entities, w.resource_get(Score).value

    def test_two_threads_give_the_same_world(self):
        one = self.run_sim(1)
        two = self.run_sim(2)
        self.assertEqual(one, two)
        self.assertGreater(one[1], 64)     # the spawner did spawn

    @unittest.skipUnless(os.environ.get("WEFT_TEST_C_SYSTEM"),
                         "needs the test C system (WEFT_TEST_C_SYSTEM, set by ctest)")
    def test_c_system_beside_python_systems(self):
        # pytest_count_runs (bindings/python/tests/c_system.c) has the exact
        # weft_system_fn type and counts its runs in `user`.
        lib = ctypes.CDLL(os.environ["WEFT_TEST_C_SYSTEM"])
        c_fn = ctypes.cast(lib.pytest_count_runs, ctypes.c_void_p).value
        runs = ctypes.c_int32(0)
        with weft.World() as w:
            for t in (Position, Velocity, Score):
                w.register(t)
            w.set_threads(2)
            s, seen = build_sim(w)
            c_node = s.add_system(c_fn, name="c_count", user=ctypes.addressof(runs))
            for _ in range(3):
                s.run(0.5)
            self.assertEqual(c_node.stats().runs, 3)
            self.assertEqual(runs.value, 3)
            self.assertEqual(seen, {True})
            w.set_threads(1)
            s.run(0.5)
            self.assertEqual(c_node.stats().runs, 4)
            self.assertEqual(runs.value, 4)


if __name__ == "__main__":
    unittest.main()

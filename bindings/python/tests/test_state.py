# bindings/python/tests/test_state.py - states through the Python binding: registration,
# transitions and their schedules, sub and computed states, state-scoped despawns,
# conditions and access from systems, bad input (run by ctest).
# SPDX-License-Identifier: MIT
import ctypes
import unittest

import weft
from weft import read, write


class Hp(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int32)]


class Boom(Exception):
    pass


class StateCase(unittest.TestCase):
    def setUp(self):
        self.w = weft.World()
        self.log = []
        self.app = self.w.register_state("App", ["Menu", "Game", "Over"])
        self.phase = self.w.register_state("Phase", ["Setup", "Battle"],
                                           source=self.app, source_value="Game")

    def tearDown(self):
        self.w.close()

    def logger(self, label):
        def sys_fn(ctx):
            self.log.append(label)
        sys_fn.__name__ = label
        return sys_fn

    def step(self):
        self.log.clear()
        self.w.state_transition()
        return list(self.log)

    def test_values_and_initial_state(self):
        self.assertEqual(self.app.values, {"Menu": 0, "Game": 1, "Over": 2})
        self.assertIsNone(self.app.get())          # nothing before the first step
        self.assertFalse(self.app.exists)
        self.w.state_transition()
        self.assertEqual(self.app.get(), "Menu")
        self.assertIsNone(self.phase.get())
        self.assertTrue(self.app.exists)
        self.assertFalse(self.phase.exists)
        self.assertIs(self.w.state_lookup("Phase"), self.phase)
        self.assertIsNone(self.w.state_lookup("Nope"))

    def test_exit_leaf_to_root_enter_root_to_leaf(self):
        for st, v in ((self.app, "Menu"), (self.app, "Game"), (self.phase, "Setup"),
                      (self.phase, "Battle")):
            st.on_enter(v).add_system(self.logger("+" + v))
            st.on_exit(v).add_system(self.logger("-" + v))
        self.app.on_transition("Game", "Menu").add_system(self.logger("Game>Menu"))
        self.assertEqual(self.step(), ["+Menu"])
        self.app.set_next("Game")
        self.assertEqual(self.step(), ["-Menu", "+Game", "+Setup"])
        self.phase.set_next("Battle")
        self.assertEqual(self.step(), ["-Setup", "+Battle"])
        self.app.set_next("Menu")
        self.assertEqual(self.step(), ["-Battle", "-Game", "Game>Menu", "+Menu"])
        self.assertIsNone(self.phase.get())
        self.assertFalse(self.phase.exists)

    def test_last_write_wins_and_messages(self):
        reader = self.app.transitions.reader()
        self.w.state_transition()
        first = list(reader)
        self.assertEqual(len(first), 1)
        self.assertEqual(first[0].exited, weft.STATE_VALUE_NONE)
        self.assertEqual(first[0].entered, 0)
        self.app.set_next("Over")
        self.app.set_next("Game")
        self.w.state_transition()
        self.assertEqual(self.app.get(), "Game")
        ev = list(reader)
        self.assertEqual([(e.exited, e.entered, e.same) for e in ev], [(0, 1, 0)])

    def test_systems_queue_and_read_states(self):
        s = self.w.schedule("update")
        seen = []

        def look(ctx):
            seen.append((ctx.state(self.app), ctx.state(self.phase)))

        def first(ctx):
            ctx.set_next_state(self.app, "Over")

        def second(ctx):
            ctx.set_next_state(self.app, "Game")   # runs after first: wins

        s.add_system(look, resources=[read(self.app.resource), read(self.phase.resource)])
        s.add_system(first, resources=[write(self.app.next_resource)])
        s.add_system(second, resources=[write(self.app.next_resource)])
        self.w.state_transition()
        s.run()
        self.w.state_transition()
        s.run()
        self.assertEqual(seen, [("Menu", None), ("Game", "Setup")])

        def undeclared(ctx):
            ctx.state(self.app)
        bad = self.w.schedule("bad")
        bad.add_system(undeclared)
        with self.assertRaises(weft.WeftError):
            bad.run()

    def test_conditions(self):
        s = self.w.schedule("update")
        runs = {"game": 0, "phase": 0, "changed": 0}

        def count(key):
            def fn(ctx):
                runs[key] += 1
            fn.__name__ = key
            return fn
        s.add_system(count("game")).run_if(s.in_state(self.app, "Game"))
        s.add_system(count("phase")).run_if(s.state_exists(self.phase))
        s.add_system(count("changed")).run_if(s.state_changed(self.app))
        self.w.state_transition()
        s.run()
        s.run()
        self.assertEqual(runs, {"game": 0, "phase": 0, "changed": 1})
        self.app.set_next("Game")
        self.w.state_transition()
        s.run()
        self.assertEqual(runs, {"game": 1, "phase": 1, "changed": 2})

    def test_computed_state_and_exceptions(self):
        calls = []

        def in_battle(app, phase):
            calls.append((app, phase))
            if phase == "Battle":
                return "Yes"
            if app == "Over":
                raise Boom("compute failed")
            return None
        fight = self.w.register_state("Fight", ["Yes"], sources=[self.app, self.phase],
                                      compute=in_battle)
        self.assertIsNone(fight.next_resource)
        with self.assertRaises(weft.WeftError) as cm:
            fight.set_next("Yes")
        self.assertEqual(cm.exception.status, weft.ERR_IMMUTABLE)
        self.w.state_transition()
        self.assertEqual(calls, [("Menu", None)])
        self.assertIsNone(fight.get())
        self.app.set_next("Game")
        self.w.state_transition()
        self.phase.set_next("Battle")
        self.w.state_transition()
        self.assertEqual(fight.get(), "Yes")
        self.app.set_next("Over")
        with self.assertRaises(Boom):
            self.w.state_transition()
        self.assertIsNone(fight.get())     # the failed compute counted as none
        self.assertEqual(self.app.get(), "Over")

    def test_despawn_on_exit(self):
        self.w.register(Hp)
        self.w.state_transition()
        menu = [self.w.spawn(self.app.despawn_on_exit_value("Menu")) for _ in range(3)]
        game = [self.w.spawn(self.app.despawn_on_exit_value("Game"), Hp(5)) for _ in range(2)]
        keep = self.w.spawn(Hp(1))
        self.app.set_next("Game")
        self.w.state_transition()
        self.assertTrue(all(not self.w.is_alive(e) for e in menu))
        self.assertTrue(all(self.w.is_alive(e) for e in game))
        self.app.set_next("Over")
        self.w.state_transition()
        self.assertTrue(all(not self.w.is_alive(e) for e in game))
        self.assertTrue(self.w.is_alive(keep))

    def test_bad_input(self):
        with self.assertRaises(KeyError):
            self.app.set_next("Nowhere")
        with self.assertRaises(weft.WeftError) as cm:
            self.app.set_next(42)
        self.assertEqual(cm.exception.status, weft.ERR_INVALID_ARG)
        with self.assertRaises(weft.WeftError) as cm:
            self.w.register_state("App", ["X"])
        self.assertEqual(cm.exception.status, weft.ERR_ALREADY_EXISTS)
        with self.assertRaises(KeyError):
            self.w.register_state("Sub", ["A"], source=self.app, source_value="Never")
        with self.assertRaises(weft.WeftError) as cm:
            self.w.register_state("Sub", ["A"], source=self.app, source_value=9)
        self.assertEqual(cm.exception.status, weft.ERR_NOT_FOUND)
        with self.assertRaises(weft.WeftError) as cm:
            self.app.on_enter("Menu").destroy()
        self.assertEqual(cm.exception.status, weft.ERR_INVALID_ARG)
        self.assertIsNotNone(self.app.on_enter("Menu"))


class AppStateCase(unittest.TestCase):
    def test_app_enters_at_startup_and_transitions_each_update(self):
        with weft.App() as app:
            log = []
            screen = app.register_state("Screen", ["Menu", "Game"])
            screen.on_enter("Menu").add_system(lambda ctx: log.append("+Menu"),
                                               name="enter_menu")
            screen.on_enter("Game").add_system(lambda ctx: log.append("+Game"),
                                               name="enter_game")
            app.add_system("PreStartup", lambda ctx: log.append("PreStartup"),
                           name="pre_startup")
            app.add_system("Update", lambda ctx: log.append("Update:%s" % ctx.state(screen)),
                           name="update", resources=[read(screen.resource)])
            frames = {"n": 0}

            def press(ctx):
                frames["n"] += 1
                if frames["n"] == 2:
                    ctx.set_next_state(screen, "Game")
            app.add_system("PreUpdate", press, resources=[write(screen.next_resource)])
            app.update(1 / 60)
            app.update(1 / 60)
            self.assertEqual(log, ["+Menu", "PreStartup", "Update:Menu", "+Game",
                                   "Update:Game"])

    def test_plugin_drives_world_states(self):
        with weft.App() as app:
            app.add_states_plugin()
            with self.assertRaises(weft.WeftError) as cm:
                app.add_states_plugin()
            self.assertEqual(cm.exception.status, weft.ERR_ALREADY_EXISTS)
            s = app.world.register_state("S", ["A", "B"], initial="B")
            entered = []
            s.on_enter("B").add_system(lambda ctx: entered.append(1), name="enter_b")
            app.update(0.0)
            self.assertEqual(entered, [1])
            self.assertEqual(s.get(), "B")


if __name__ == "__main__":
    unittest.main()

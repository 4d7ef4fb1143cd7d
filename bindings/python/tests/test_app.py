# bindings/python/tests/test_app.py - the App from Python: plugins written in Python (dependency
# order, groups, failures), stepping a schedule, diagnostics and the diagnostics plugin (run by
# ctest).
# SPDX-License-Identifier: MIT
import unittest

import weft


class AppCase(unittest.TestCase):
    def setUp(self):
        self.app = weft.App()
        self.w = self.app.world

    def tearDown(self):
        try:
            if self.app._ptr:
                self.w.check()
        finally:
            self.app.close()


class Physics(weft.Plugin):
    """A plugin as a subclass: its schedule after FixedUpdate."""

    def __init__(self, log):
        super().__init__(dependencies=["Time"])
        self.log = log

    def build(self, app):
        self.log.append("build:Physics")
        app.insert_schedule("Physics", after="FixedUpdate")

    def finish(self, app):
        self.log.append("finish:Physics")


class TestPlugins(AppCase):
    def test_dependency_order_finish_and_cleanup(self):
        log = []
        app = self.app
        app.add_plugin(Physics(log))
        app.add_plugin(name="Time", build=lambda a: log.append("build:Time"),
                       cleanup=lambda a: log.append("cleanup:Time"))

        def build_render(a):
            log.append("build:Render")
            # a build may add plugins: built in the same setup
            a.add_plugin(name="Ui", build=lambda a2: log.append("build:Ui"),
                         dependencies=["Render"])
        app.add_plugin(name="Render", build=build_render, dependencies=["Physics"])
        self.assertEqual(app.plugins(), ["Physics", "Time", "Render"])
        self.assertTrue(app.has_plugin("Time"))
        app.setup()
        self.assertEqual(log, ["build:Time", "build:Physics", "build:Render", "build:Ui",
                               "finish:Physics", "cleanup:Time"])
        self.assertEqual(app.plugins(), ["Time", "Physics", "Render", "Ui"])
        self.assertIn("Physics", app.labels("fixed"))
        with self.assertRaises(weft.WeftError) as cm:
            app.add_plugin(name="Late", build=lambda a: None)
        self.assertEqual(cm.exception.name, "WEFT_ERR_WRONG_PHASE")

    def test_duplicates_missing_and_cycles(self):
        app = self.app
        built = []
        app.add_plugin(name="A", build=lambda a: built.append("A"))
        with self.assertRaises(weft.WeftError) as cm:
            app.add_plugin(name="A", build=lambda a: None)
        self.assertEqual(cm.exception.name, "WEFT_ERR_ALREADY_EXISTS")
        app.add_plugin(name="R", build=lambda a: built.append("R1"), repeatable=True)
        app.add_plugin(name="R", build=lambda a: built.append("R2"), repeatable=True)
        app.add_plugin(name="B", build=lambda a: built.append("B"), dependencies=["Missing"])
        with self.assertRaises(weft.WeftError) as cm:
            app.setup()
        self.assertEqual(cm.exception.name, "WEFT_ERR_NOT_FOUND")
        self.assertIn("'Missing'", str(cm.exception))
        self.assertEqual(built, [])       # nothing built
        app.add_plugin(name="X", build=lambda a: None, dependencies=["Y"])
        app.add_plugin(name="Y", build=lambda a: None, dependencies=["X"])
        app.add_plugin(name="Missing", build=lambda a: built.append("M"))
        with self.assertRaises(weft.WeftError) as cm:
            app.setup()
        self.assertEqual(cm.exception.name, "WEFT_ERR_SCHEDULE_CYCLE")
        self.assertIn("'X' -> 'Y' -> 'X'", str(cm.exception))
        self.assertEqual(built, [])

    def test_groups_with_disabled_members(self):
        app = self.app
        built = []
        members = [weft.Plugin(name=n, build=lambda a, n=n: built.append(n))
                   for n in ("Time", "Audio", "Input")]
        with self.assertRaises(weft.WeftError) as cm:
            app.add_plugin_group("Defaults", members, disabled=["Render"])
        self.assertEqual(cm.exception.name, "WEFT_ERR_NOT_FOUND")
        self.assertEqual(app.plugins(), [])
        app.add_plugin_group("Defaults", members, disabled=["Audio"])
        self.assertEqual(app.plugins(), ["Time", "Input"])
        app.update(0.01)
        self.assertEqual(built, ["Time", "Input"])

    def test_exception_in_build_is_raised(self):
        app = self.app

        def bad(a):
            raise KeyError("no assets")
        app.add_plugin(name="Assets", build=bad)
        with self.assertRaises(weft.WeftError) as cm:
            app.update(0.01)
        self.assertEqual(cm.exception.name, "WEFT_ERR_CALLBACK")
        self.assertIsInstance(cm.exception.__cause__, KeyError)
        self.assertIn("Assets", str(cm.exception))
        with self.assertRaises(weft.WeftError):
            app.update(0.01)   # the app stays failed
        self.assertEqual(app.update_count, 0)


class TestStepping(AppCase):
    def test_step_continue_breakpoints(self):
        app = self.app
        trail = []
        s = app.schedule("Update")
        prev = None
        for name in ("a", "b", "c", "d"):
            node = s.add_system(lambda ctx, n=name: trail.append(n), name=name,
                                after=(prev,) if prev else ())
            prev = node
        s.add_system(lambda ctx: trail.append("infra"), name="infra",
                     flags=weft.SYSTEM_NOT_STEPPABLE, before=("a",))

        def update():
            trail.clear()
            app.update(0.01)
            return list(trail)
        self.assertEqual(update(), ["infra", "a", "b", "c", "d"])
        s.stepping = True
        self.assertTrue(s.stepping)
        self.assertEqual(update(), ["infra"])
        self.assertEqual(s.step_cursor.name, "a")
        seen = []
        for _ in range(5):
            s.step()
            seen.append(update()[1])
        self.assertEqual(seen, ["a", "b", "c", "d", "a"])   # schedule order, then wraps
        s.set_breakpoint("d")
        s.continue_()
        self.assertEqual(update(), ["infra", "b", "c"])
        self.assertEqual(s.step_cursor.name, "d")
        s.continue_()
        self.assertEqual(update(), ["infra", "d"])
        s.set_step_behavior("b", weft.STEP_NEVER_RUN)
        s.set_breakpoint("d", False)
        s.continue_()
        self.assertEqual(update(), ["infra", "a", "c", "d"])
        s.stepping = False
        self.assertEqual(update(), ["infra", "a", "b", "c", "d"])
        with self.assertRaises(weft.WeftError) as cm:
            s.step()
        self.assertEqual(cm.exception.name, "WEFT_ERR_WRONG_PHASE")


class TestDiagnostics(AppCase):
    def test_smoothing_against_a_hand_computed_series(self):
        w = self.w
        w.diag_add("x", suffix="ms", history_len=4, smoothing=0.5)
        series = [(0.0, 10), (0.25, 20), (0.5, 14), (1.5, 30), (1.75, 6)]
        ema = [10, 15, 14.5, 30, 18]
        for (t, x), e in zip(series, ema):
            w.diag_record("x", t, x)
            self.assertAlmostEqual(w.diag("x").smoothed, e)
        d = w.diag("x")
        self.assertEqual(d.value, 6)
        self.assertEqual(d.count, 4)
        self.assertAlmostEqual(d.average, 17.5)
        self.assertEqual((d.min, d.max), (6, 30))
        self.assertEqual(d.suffix, "ms")
        self.assertEqual(w.diag_history("x"), [20, 14, 30, 6])
        with self.assertRaises(weft.WeftError) as cm:
            w.diag_record("x", 1.0, 1)   # earlier than the last
        self.assertEqual(cm.exception.name, "WEFT_ERR_INVALID_ARG")
        with self.assertRaises(weft.WeftError):
            w.diag("nope")
        w.diag_set_enabled("x", False)
        w.diag_record("x", 2.0, 1000)
        self.assertEqual(w.diag("x").value, 6)
        self.assertEqual(w.diag_names(), ["x"])

    def test_plugin_measures_and_logs(self):
        lines = []

        def logger(level, status, message, file, line):
            if level == weft.LOG_INFO:
                lines.append(message)
        app = weft.App(logger=logger)
        self.addCleanup(app.close)
        w = app.world
        for _ in range(3):
            w.spawn()
        app.add_system("Update", lambda ctx: None, name="work")
        app.add_diagnostics_plugin(log_interval=0.5, per_system=True)
        self.assertIn(weft.DIAG_PLUGIN, app.plugins())
        for _ in range(4):
            app.update(0.25)
        self.assertAlmostEqual(w.diag(weft.DIAG_FRAME_TIME).value, 250.0)
        self.assertAlmostEqual(w.diag(weft.DIAG_FPS).value, 4.0)
        self.assertEqual(w.diag(weft.DIAG_FRAME_COUNT).value, 4)
        self.assertEqual(w.diag(weft.DIAG_ENTITY_COUNT).value, 3)
        self.assertEqual(w.diag(weft.DIAG_ARCHETYPE_COUNT).value, w.stats().archetypes)
        self.assertEqual(w.diag("system/Update/work").count, 4)
        # reports at t = 0.5 and 1.0, one line per diagnostic
        self.assertEqual(len(lines), 2 * 6)
        self.assertTrue(all(m.startswith("diagnostic ") for m in lines))


if __name__ == "__main__":
    unittest.main()

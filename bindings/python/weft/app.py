# bindings/python/weft/app.py - the App: a World driven through the main schedule order, fixed time,
# runners and exit requests (weft_app_* in weft.h).
# SPDX-License-Identifier: MIT
"""The App: a World driven through the main schedule order (PreStartup,
Startup, PostStartup once; First, PreUpdate, StateTransition,
RunFixedMainLoop with the fixed order FixedFirst .. FixedLast 0..k times,
Update, PostUpdate, Last every update), fixed time, runners and exit
requests. Labels are schedule names; App.schedule(label) gives the
Schedule, on which every Schedule method works."""

import ctypes
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from ._abi import (
    APP_AFTER, APP_BEFORE, APP_ORDER_FIXED, APP_ORDER_MAIN, APP_ORDER_STARTUP,
    ERR_INVALID_HANDLE, ERR_OUT_OF_MEMORY, OK, PLUGIN_FN, RUNNER_FN, WeftAppDesc,
    WeftDiagPluginDesc, WeftPluginDesc, WeftPluginGroupDesc,
)
from ._convert import check_name
from ._loader import _lib
from .errors import WeftError, _s
from .schedules import Schedule
from .state import State
from .systems import _exc_status
from .world import World

_ORDERS = {"startup": APP_ORDER_STARTUP, "main": APP_ORDER_MAIN, "fixed": APP_ORDER_FIXED}


class Plugin:
    """A plugin written in Python: build(app) configures the App (adds
    schedules, systems, resources, other plugins); finish(app) and
    cleanup(app) are optional and run after every build, in build order.
    dependencies: names of plugins built before this one. Subclass it and
    override build (the name defaults to the class name), or pass the
    callables. An exception in a callback stops the setup; the App call
    that ran it raises it."""

    def __init__(self, name: Optional[str] = None,
                 build: Optional[Callable[["App"], Any]] = None,
                 finish: Optional[Callable[["App"], Any]] = None,
                 cleanup: Optional[Callable[["App"], Any]] = None,
                 dependencies: Iterable[str] = (), repeatable: bool = False) -> None:
        self.name = name or type(self).__name__
        # callables given here shadow the methods (setattr: an instance
        # attribute where the class has a method)
        for key, fn in (("build", build), ("finish", finish), ("cleanup", cleanup)):
            if fn is not None:
                setattr(self, key, fn)
        self.dependencies = tuple(dependencies)
        self.repeatable = repeatable

    def build(self, app: "App") -> None:
        raise NotImplementedError("Plugin %r has no build" % self.name)

    def finish(self, app: "App") -> None:
        pass

    def cleanup(self, app: "App") -> None:
        pass


class App:
    """A weft app. App() creates its own World (keyword arguments go to
    World()); App(world=w) drives an existing one, which outlives the app.
    Use as a context manager or call close(). Every method runs on the
    world's driver thread."""

    _subs: Dict[str, Any]   # name -> SubApp (add_sub_app)

    def __init__(self, world=None, fixed_step=0.0, max_delta=0.0, max_fixed_steps=0,
                 no_message_update=False, **world_kwargs):
        self._ptr = None
        self._owns_world = world is None
        if world is None:
            world = World(**world_kwargs)
        elif world_kwargs:
            raise TypeError("World arguments given with an existing world")
        self.world = world
        desc = WeftAppDesc()
        desc.world = world._p()
        desc.fixed_step = fixed_step
        desc.max_delta = max_delta
        desc.max_fixed_steps = max_fixed_steps
        desc.no_message_update = no_message_update
        ptr = _lib.weft_app_create(ctypes.byref(desc))
        if not ptr:
            status = _lib.weft_last_status(world._p())
            msg = _s(_lib.weft_last_error(world._p()))
            if self._owns_world:
                world.close()
            raise WeftError(status if status != OK else ERR_OUT_OF_MEMORY,
                            msg or "weft_app_create failed", recorded=True)
        self._ptr = ptr
        self._runner = None
        self._plugins = []        # trampolines and names the app points at
        self._plugin_exc = None   # first exception of a plugin callback
        self._sub = False         # a sub-app's (owned by its App: never destroyed here)
        self._subs = {}           # name -> SubApp
        world._app = self

    @classmethod
    def _over(cls, world: World, ptr: int) -> "App":
        """An App over a sub-app's weft_app * (its App destroys it)."""
        a = cls.__new__(cls)
        a._ptr = ptr
        a._owns_world = False
        a.world = world
        a._runner = None
        a._plugins = []
        a._plugin_exc = None
        a._sub = True
        a._subs = {}
        return a

    # -- lifetime
    def _p(self):
        if not self._ptr:
            raise WeftError(ERR_INVALID_HANDLE, "app closed")
        self.world._p()   # the world's thread check
        return self._ptr

    def close(self) -> None:
        """Destroys the app, then the World when the app created it."""
        self._release()
        if self._owns_world:
            self.world.close()

    def _release(self):
        """Destroys the app only (World.close calls it first)."""
        if self._sub:
            return   # a sub-app goes with its App
        if self._ptr:
            self.world._p()   # the thread check
            status = _lib.weft_app_destroy(self._ptr)
            if status == OK:
                self._ptr = None
                self.world._app = None
                for sub in self._subs.values():
                    sub._forget()
                self._subs.clear()
            self.world._check(status)

    # -- sub-apps
    def add_sub_app(self, name: str, pipelined: bool = False, clear_every_frame: bool = False,
                    share_threads: bool = False) -> Any:
        """Adds a sub-app (weft.SubApp) on a new world, with its own labels
        and an Extract schedule; see weft.subapp. pipelined: its frames run
        on a thread of its own, overlapping the next update.
        clear_every_frame: every sub-world entity is despawned before each
        extraction. share_threads: the sub-world runs on this world's
        executor (one built-in pool for both). WeftError ALREADY_EXISTS for
        a name in use."""
        from .subapp import add_sub_app
        sub = add_sub_app(self, name, pipelined, clear_every_frame, share_threads)
        self._subs[name] = sub
        return sub

    def sub_app(self, name: str) -> Any:
        """The sub-app added as `name`; KeyError otherwise."""
        return self._subs[name]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- labels
    def schedule(self, label: str) -> Schedule:
        """The Schedule of `label` (a built-in label or one inserted with
        insert_schedule); WeftError NOT_FOUND otherwise."""
        w = self.world
        ptr = w._handle(_lib.weft_app_schedule(self._p(), label.encode("utf-8")))
        sch = w._schedules.get(ptr)
        if sch is None:
            sch = w._schedules[ptr] = Schedule(w, ptr, label)
        return sch

    # -- states
    def register_state(self, name: str, values: Any, initial: Any = None,
                       **kwargs: Any) -> State:
        """Registers a state on the app's world (arguments as
        World.register_state) and makes the app run its transitions: once
        before PreStartup (the initial value is entered) and in
        StateTransition every update (weft_app_register_state). Returns
        its weft.State."""
        return self.world._register_state(
            lambda desc: _lib.weft_app_register_state(self._p(), desc), name, values, initial,
            **kwargs)

    def add_states_plugin(self) -> None:
        """Adds the "weft.states" plugin: states registered with
        World.register_state are then driven by the app too."""
        self.world._check(_lib.weft_app_add_states_plugin(self._p()))

    def add_system(self, label, fn, **kwargs):
        """Schedule(label).add_system(fn, **kwargs)."""
        return self.schedule(label).add_system(fn, **kwargs)

    def system(self, label, **kwargs):
        """Decorator form of add_system."""
        return self.schedule(label).system(**kwargs)

    def insert_schedule(self, label: str, before: Optional[str] = None,
                        after: Optional[str] = None) -> Schedule:
        """Places the schedule `label` right before or after another label
        (exactly one of before/after); returns its Schedule. A label placed
        earlier moves. WeftError for an unknown anchor, a cycle, a
        built-in label."""
        if (before is None) == (after is None):
            raise TypeError("give exactly one of before= and after=")
        anchor = before if before is not None else after
        assert anchor is not None
        place = APP_BEFORE if before is not None else APP_AFTER
        self.world._check(_lib.weft_app_insert_schedule(
            self._p(), label.encode("utf-8"), anchor.encode("utf-8"), place))
        return self.schedule(label)

    def labels(self, order: str = "main") -> List[str]:
        """The labels of an order ("startup", "main" or "fixed") in run
        order."""
        o = _ORDERS[order]
        p = self._p()
        return [_s(_lib.weft_app_label(p, o, i))
                for i in range(_lib.weft_app_label_count(p, o))]

    # -- plugins
    def _tramp(self, fn):
        """A PLUGIN_FN calling fn(app); an exception is kept for the App
        call that ran the setup and fails the callback."""
        def call(app_ptr, user):
            w = self.world
            w._enter(False)   # a callback of the world: close() refuses
            try:
                fn(self)
                return OK
            except BaseException as exc:   # must not unwind into C
                if self._plugin_exc is None:
                    self._plugin_exc = exc
                return _exc_status(exc)
            finally:
                w._leave(False)
        return PLUGIN_FN(call)

    def _plugin_desc(self, plugin):
        desc = WeftPluginDesc()
        name = plugin.name.encode("utf-8")
        deps = [check_name(d, "plugin dependency") for d in plugin.dependencies]
        arr = (ctypes.c_char_p * max(1, len(deps)))(*deps)
        desc.name = name
        tramps = [self._tramp(plugin.build)]
        desc.build = tramps[0]
        # only the callbacks the plugin defines: weft skips NULL ones
        if type(plugin).finish is not Plugin.finish or "finish" in vars(plugin):
            tramps.append(self._tramp(plugin.finish))
            desc.finish = tramps[-1]
        if type(plugin).cleanup is not Plugin.cleanup or "cleanup" in vars(plugin):
            tramps.append(self._tramp(plugin.cleanup))
            desc.cleanup = tramps[-1]
        desc.dependencies = arr
        desc.dependency_count = len(deps)
        desc.repeatable = plugin.repeatable
        return desc, (name, arr, tramps, plugin)

    def add_plugin(self, plugin: Optional[Plugin] = None, **kwargs: Any) -> Plugin:
        """Adds a Plugin (or Plugin(**kwargs)); it is built by setup(), the
        first update() or run(). WeftError: ALREADY_EXISTS (a second one of
        the name, unless both are repeatable), WRONG_PHASE (after the
        setup), INVALID_ARG."""
        if plugin is None:
            plugin = Plugin(**kwargs)
        desc, keep = self._plugin_desc(plugin)
        self.world._check(_lib.weft_app_add_plugin(self._p(), ctypes.byref(desc)))
        self._plugins.append(keep)
        return plugin

    def add_plugin_group(self, name: str, plugins: Iterable[Plugin],
                         disabled: Sequence[str] = ()) -> None:
        """Adds the members of a group that are not named in `disabled`,
        all or none."""
        plugins = list(plugins)
        descs = (WeftPluginDesc * max(1, len(plugins)))()
        keeps = []
        for i, pl in enumerate(plugins):
            descs[i], keep = self._plugin_desc(pl)
            keeps.append(keep)
        off = [check_name(d, "disabled plugin") for d in disabled]
        off_arr = (ctypes.c_char_p * max(1, len(off)))(*off)
        g = WeftPluginGroupDesc()
        g.name = name.encode("utf-8")
        g.plugins = descs
        g.plugin_count = len(plugins)
        g.disabled = off_arr
        g.disabled_count = len(off)
        self.world._check(_lib.weft_app_add_plugin_group(self._p(), ctypes.byref(g)))
        self._plugins.extend(k for k, pl in zip(keeps, plugins) if pl.name not in disabled)

    def _after_setup(self, status):
        """Raises a plugin callback's exception (chained into WeftError
        with the world's message), else the status as WeftError."""
        exc, self._plugin_exc = self._plugin_exc, None
        if exc is not None:
            if not isinstance(exc, Exception):
                raise exc
            msg = _s(_lib.weft_last_error(self.world._p()))
            raise WeftError(status if status != OK else ERR_OUT_OF_MEMORY, msg,
                            recorded=True) from exc
        return status

    def setup(self) -> None:
        """Builds the plugins in dependency order, then finishes and cleans
        them up (the first update() does it when you do not)."""
        status = self._after_setup(_lib.weft_app_setup(self._p()))
        self.world._check(status)

    def has_plugin(self, name: str) -> bool:
        return bool(_lib.weft_app_has_plugin(self._p(), name.encode("utf-8")))

    def plugins(self) -> List[str]:
        """Plugin names: in order of addition, in build order after setup."""
        p = self._p()
        return [_s(_lib.weft_app_plugin_name(p, i))
                for i in range(_lib.weft_app_plugin_count(p))]

    def add_diagnostics_plugin(self, log_interval: float = 1.0, per_system: bool = False,
                               history_len: int = 0) -> None:
        """Adds weft's diagnostics plugin: every update it records frame
        time, FPS, frame count, entity and archetype counts (and each
        system's time with per_system) in the World's diagnostics, and logs
        them every log_interval seconds of app time through the World's
        logger (negative: never)."""
        desc = WeftDiagPluginDesc()
        desc.log_interval = log_interval
        desc.per_system = per_system
        desc.history_len = history_len
        self.world._check(_lib.weft_app_add_diagnostics_plugin(self._p(), ctypes.byref(desc)))

    # -- running
    def update(self, dt: float) -> None:
        """Runs one update of `dt` seconds (startup once first; see
        weft_app_update). Every schedule runs; the first failure is raised
        afterwards as WeftError (chained to the Python exception when a
        Python system raised)."""
        w = self.world
        p = self._p()
        outer, w._system_exc = w._system_exc, None
        for sub in self._subs.values():
            sub._in_flight = sub._in_flight or sub._pipelined
        try:
            status = _lib.weft_app_update(p, dt)
            failures = w._system_exc
        finally:
            w._system_exc = outer
        self._after_setup(status if self._plugin_exc is not None else OK)
        w._finish_run(status, failures)

    def run(self, runner: Callable[["App"], Any]) -> None:
        """Sets the plugins up and calls runner(app), which drives the app
        with update() until it decides to stop (exit_requested tells
        whether something asked). An exception from the runner propagates."""
        caught = []

        def tramp(app_ptr, user):
            try:
                runner(self)
                return OK
            except BaseException as exc:   # must not unwind into C
                caught.append(exc)
                return _exc_status(exc)
        fn = RUNNER_FN(tramp)
        self._runner = fn
        try:
            status = _lib.weft_app_run(self._p(), fn, None)
        finally:
            self._runner = None
        if caught:
            raise caught[0]
        self._after_setup(status if self._plugin_exc is not None else OK)
        if status != OK:
            self.world._check(status)

    def exit(self, code: int = 0) -> None:
        """Asks the runner to stop with `code` (the first request wins).
        May be called from a system."""
        _lib.weft_app_exit(self._p(), code)

    @property
    def exit_requested(self) -> Optional[int]:
        """None, or the code of the first exit request."""
        code = ctypes.c_int32(0)
        if _lib.weft_app_exit_requested(self._p(), ctypes.byref(code)):
            return code.value
        return None

    @property
    def update_count(self) -> int:
        return _lib.weft_app_update_count(self._p())

    @property
    def fixed_steps(self) -> int:
        """Fixed steps run by the last update."""
        return _lib.weft_app_fixed_steps(self._p())

    @property
    def fixed_accumulator(self) -> float:
        """Seconds left in the fixed-step accumulator."""
        return _lib.weft_app_fixed_accumulator(self._p())

    @property
    def fixed_step(self) -> float:
        return _lib.weft_app_fixed_step(self._p())

    @fixed_step.setter
    def fixed_step(self, step: float) -> None:
        self.world._check(_lib.weft_app_set_fixed_step(self._p(), step))

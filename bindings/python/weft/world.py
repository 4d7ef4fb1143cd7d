# bindings/python/weft/world.py - the World: lifetime, error and callback plumbing, entities,
# resources, ticks and diagnostics; the other concepts' World
# methods come from their modules' mixins.
# SPDX-License-Identifier: MIT
"""The World: lifetime, error and callback plumbing, entities, resources, ticks
and diagnostics; the other concepts' World methods come from their modules'
mixins."""

from __future__ import annotations

import ctypes
import threading
from threading import get_ident as _thread_id
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Set, Tuple, Type, overload

from ._abi import (
    ERR_INTERNAL, ERR_INVALID_HANDLE, ERR_OUT_OF_MEMORY, ERR_WRONG_PHASE, ERR_WRONG_THREAD, FREE_USER_FN, LOG_FN, OK,
    WeftArchetypeInfo, WeftTicks, WeftValue, WeftWorldDesc, WeftWorldStats, c_entity,
)
from ._loader import _lib
from .errors import WeftError, _s, status_name
from .components import _ComponentsWorld, _checked_view, _copy
from .queries import _QueriesWorld
from .commands import _CommandsWorld
from .observers import _ObserversWorld
from .messages import _MessagesWorld
from .relationships import _RelationshipsWorld
from .schedules import _SchedulesWorld
from .state import _StatesWorld
from .diagnostics import _DiagnosticsWorld
from .reflect import _ReflectWorld

if TYPE_CHECKING:
    from ._typing import ComponentRef, Entity, S, Value
    from .components import View


def entity_index(e: Entity) -> int:
    """Index part (low 32 bits) of an entity handle."""
    return e & 0xFFFFFFFF


def entity_generation(e: Entity) -> int:
    """Generation part (high 32 bits) of an entity handle."""
    return (e >> 32) & 0xFFFFFFFF


def max_threads() -> int:
    """The most workers World.set_threads accepts: 1 when the library was
    built without threads (WEFT_THREADS=OFF)."""
    return int(_lib.weft_max_threads())


class World(_ComponentsWorld,
            _QueriesWorld,
            _CommandsWorld,
            _ObserversWorld,
            _MessagesWorld,
            _RelationshipsWorld,
            _SchedulesWorld,
            _StatesWorld,
            _DiagnosticsWorld,
            _ReflectWorld):
    """A weft world. Use as a context manager or call close().

    Thread model: the world belongs to the thread that created it (its
    driver). Every call from another thread raises WeftError
    (WEFT_ERR_WRONG_THREAD) before reaching weft, except from inside one of
    the world's own Python callbacks (a system, condition, observer, hook,
    logger, state compute) running on the thread weft gave it: while one
    runs on another thread (a pipelined sub-app), the owner's calls raise
    instead. release_thread() hands the world to the next thread that uses
    it. See docs/bindings.md ("Threads")."""

    def __init__(self, entity_capacity_hint: int = 0,
                 logger: Optional[Callable[[int, str, str, str, int], Any]] = None) -> None:
        """`logger(level, status_name, message, file, line)` receives every
        error and warning the world records (optional)."""
        self._init_fields()
        desc = WeftWorldDesc()
        desc.entity_capacity_hint = entity_capacity_hint
        if logger is not None:
            def _log(user, level, status, message, file, line):
                self._enter()
                try:
                    logger(level, status_name(status), _s(message), _s(file), line)
                except BaseException as exc:   # must not unwind into C
                    self._store(exc)
                finally:
                    self._leave()
            desc.logger.fn = LOG_FN(_log)
            self._keep.append(desc.logger.fn)
        ptr = _lib.weft_world_create(ctypes.byref(desc))
        if not ptr:
            raise WeftError(ERR_OUT_OF_MEMORY, "weft_world_create failed")
        self._ptr = ptr

    @classmethod
    def _borrow(cls, ptr: int) -> "World":
        """A World over a weft_world * that something else owns (a
        sub-app's world): close() forgets it instead of destroying it."""
        w = cls.__new__(cls)
        w._init_fields()
        w._borrowed = True
        w._ptr = ptr
        return w

    def _init_fields(self) -> None:
        self._ptr = None
        self._owner: Optional[int] = _thread_id()  # the driver thread (None: released)
        self._owner_thread: Any = threading.current_thread()
        self._cb: Dict[int, int] = {}  # thread -> nesting of this world's callbacks on it
        self._busy: Optional[Callable[[], Optional[str]]] = None  # sub-app: frame in flight?
        self._borrowed = False  # owned elsewhere (_borrow): never destroyed here
        self._by_type = {}      # ctypes type -> Component
        self._by_id = {}        # id -> Component
        self._events = {}       # id -> Event
        self._callbacks = {}    # observer key -> (trampoline, python fn)
        self._keep = []         # ctypes objects the world points at
        self._queries: Set[Any] = set()
        self._scenes: Set[Any] = set()  # live Scene objects (reflect.py)
        self._pending = None    # first exception caught in a callback
        self._depth = 0         # nesting of Python callbacks on the stack
        self._next_key = 1
        self._schedules = {}    # weft_schedule * -> Schedule
        self._app = None        # the App driving this world, if any
        self._system_exc = None # exceptions systems/conditions raised in a run
        self._in_system = 0     # Python systems/conditions on the stack
        self._states: Dict[int, Any] = {}   # weft_state -> State
        self._keep_state: List[Any] = []    # ctypes objects state descriptors point at
        self._free_user = FREE_USER_FN(self._on_free_user)

    # -- lifetime
    def close(self) -> None:
        """Destroys the world (dtor hooks run, observers freed). Raises
        WeftError, and the world stays open and usable, whenever weft
        refuses the destroy: inside any of the world's callbacks (system,
        condition, observer, hook, logger, state compute, plugin, extract
        transform: WRONG_PHASE) or while an App update runs. Raises
        WRONG_THREAD from a thread that does not own the world."""
        if not self._ptr:
            return
        self._p()   # the thread check
        if self._borrowed:
            self._forget()
            return
        if self._cb:
            # inside one of this world's Python callbacks: weft refuses
            # (and the binding does not even ask: some callbacks, like the
            # logger, run where weft cannot tell)
            raise WeftError(ERR_WRONG_PHASE, "World.close() inside one of the world's "
                            "callbacks: close it after the call that ran the callback "
                            "returns")
        if self._app is not None:
            self._app._release()   # raises when weft refuses (the app is updating)
        status = _lib.weft_world_destroy(self._ptr)
        if status != OK:
            msg = _s(_lib.weft_last_error(self._ptr)) if not self._in_system else ""
            raise WeftError(status, msg or "weft refused to destroy the world", recorded=True)
        self._ptr = None
        for q in list(self._queries):
            q._ptr = None
        self._queries.clear()
        for sc in list(self._scenes):
            sc._ptr = None   # the world frees its scenes
        self._scenes.clear()
        for sch in list(self._schedules.values()):
            sch._forget()
        self._schedules.clear()
        self._callbacks.clear()
        self._keep.clear()
        self._raise_pending()

    destroy = close

    def _forget(self) -> None:
        """Drops a borrowed world's wrappers (its owner destroys it)."""
        self._ptr = None
        for q in list(self._queries):
            q._ptr = None
        self._queries.clear()
        for sc in list(self._scenes):
            sc._ptr = None
        self._scenes.clear()
        for sch in list(self._schedules.values()):
            sch._forget()
        self._schedules.clear()
        self._callbacks.clear()
        self._keep.clear()

    def share_threads(self, lender: Optional["World"]) -> None:
        """Runs this world's schedules on `lender`'s executor (its built-in
        pool or job system; see weft_world_share_threads); None stops.
        While lent, the lender's executor cannot change nor can it close."""
        self._check(_lib.weft_world_share_threads(self._p(),
                                                  lender._p() if lender is not None else None))

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self):
        try:
            if self._ptr and not self._borrowed:
                _lib.weft_world_destroy(self._ptr)
                self._ptr = None
        except Exception:
            pass

    @property
    def ptr(self) -> Optional[int]:
        """The raw weft_world * (an int), for calling C directly."""
        return self._ptr

    def _p(self):
        """The weft_world *, after the thread check (every call goes
        through here): raises when the world is closed or the calling
        thread may not use it now."""
        p = self._ptr
        t = _thread_id()
        cb = self._cb
        if p and (t in cb or (t == self._owner and not cb and self._busy is None)):
            return p   # inside its callback on this thread, or the idle owner
        if not p:
            raise WeftError(ERR_INVALID_HANDLE, "world closed")
        self._thread_check()
        return p

    def _thread_check(self) -> None:
        t = _thread_id()
        if t in self._cb:
            return   # inside one of this world's callbacks, on the thread weft chose
        if self._owner is None or not self._owner_thread.is_alive():
            # released, or its owner has ended: the first thread to use it takes it
            self._owner, self._owner_thread = t, threading.current_thread()
        if t != self._owner:
            raise WeftError(ERR_WRONG_THREAD, "this World belongs to thread %d; thread %d may "
                            "not use it (one thread drives a world: create it on the thread "
                            "that uses it, or call release_thread() on the owner first)"
                            % (self._owner, t))
        if self._cb:
            raise WeftError(ERR_WRONG_THREAD, "this World is running a callback on another "
                            "thread (a pipelined sub-app's frame): wait for it first")
        if self._busy is not None:
            why = self._busy()
            if why:
                raise WeftError(ERR_WRONG_THREAD, why)

    @property
    def owner_thread(self) -> Optional[int]:
        """The threading.get_ident() of the thread that drives this world
        (None after release_thread(), until a thread uses it)."""
        return self._owner

    def release_thread(self) -> None:
        """Gives the world up from its owner thread: the next thread that
        uses it becomes its owner (to hand a world to a worker thread).
        Raises from another thread or inside a callback."""
        self._p()
        if self._cb:
            raise WeftError(ERR_WRONG_THREAD, "release_thread() inside a callback")
        self._owner = None

    # -- errors and callbacks
    def _may_call(self) -> bool:
        """Whether this thread may call weft on the world now (no raise)."""
        try:
            self._p()
            return True
        except WeftError:
            return False

    def _enter(self, depth: bool = True):
        """A Python callback of this world starts on this thread (`depth`:
        exceptions it stores wait until the outermost weft call returns)."""
        if depth:
            self._depth += 1
        t = _thread_id()
        self._cb[t] = self._cb.get(t, 0) + 1

    def _leave(self, depth: bool = True):
        """The callback _enter() announced returns."""
        self._leave_on(_thread_id(), depth)

    def _leave_on(self, t: int, depth: bool = True):
        """_leave, given the calling thread's id `t`."""
        n = self._cb.get(t, 1) - 1
        if n:
            self._cb[t] = n
        else:
            self._cb.pop(t, None)
        if depth:
            self._depth -= 1

    def _store(self, exc):
        if self._pending is None:
            self._pending = exc

    def _raise_pending(self):
        """Re-raises the first exception a callback caught, once no Python
        callback is on the stack (i.e. after the outer weft call)."""
        if self._pending is not None and self._depth == 0:
            exc, self._pending = self._pending, None
            raise exc

    # While a system runs, weft records the errors of the calls it makes
    # in the run's error sink (reported by weft_schedule_run), not in the
    # world's slot: the slot then says nothing about those calls, so inside
    # a system the binding neither clears nor reads it.
    _IN_SYSTEM_MESSAGE = "failed inside a system (schedule.run() reports weft's message)"

    def _clear(self):
        if not self._in_system:
            _lib.weft_clear_error(self._ptr)

    def _raise_last(self):
        self._raise_pending()
        if self._in_system:
            # weft_last_status reads the running system's error sink (weft.h,
            # "error sink"): the status of the call that just failed, without
            # clearing it (the failure still fails the run)
            st = _lib.weft_last_status(self._ptr)
            raise WeftError(st if st != OK else ERR_INTERNAL, self._IN_SYSTEM_MESSAGE,
                            recorded=True)
        st = _lib.weft_last_status(self._ptr)
        raise WeftError(st if st != OK else ERR_INTERNAL, _s(_lib.weft_last_error(self._ptr)),
                        recorded=True)

    def _check_slot(self):
        """Raises when the error slot holds a failure (after _clear()).
        Inside a system a NULL result reads as "absent" (see above)."""
        self._raise_pending()
        if not self._in_system and _lib.weft_last_status(self._ptr) != OK:
            self._raise_last()

    def _check(self, status):
        self._raise_pending()
        if status != OK:
            msg = self._IN_SYSTEM_MESSAGE if self._in_system \
                else _s(_lib.weft_last_error(self._ptr))
            raise WeftError(status, msg, recorded=True)

    def _handle(self, h):
        self._raise_pending()
        if not h:
            self._raise_last()
        return h

    @property
    def last_status(self) -> int:
        return _lib.weft_last_status(self._p())

    @property
    def last_error(self) -> str:
        return _s(_lib.weft_last_error(self._p()))

    def clear_error(self) -> None:
        _lib.weft_clear_error(self._p())

    # -- entities
    def spawn(self, *values: Value) -> Entity:
        """Spawns an entity with the given values (struct instances, tags,
        or (component, value) pairs) in one placement; returns its id."""
        if not values:
            return self._handle(_lib.weft_spawn(self._p()))
        arr, keep = self._values(values)
        return self._handle(_lib.weft_spawn_with(self._p(), arr, len(values)))

    spawn_with = spawn

    def spawn_bulk(self, n: int, *columns: Any) -> List[Entity]:
        """Spawns `n` entities with the same components. Each column is a
        ctypes array (or list) of n structs, a (component, array) pair, or a
        component / tag (default-construct all n). Returns the ids (a list)."""
        vals = (WeftValue * max(1, len(columns)))()
        keep = []
        for i, col in enumerate(columns):
            comp = None
            if isinstance(col, tuple):
                comp, col = self.component_of(col[0]), col[1]
            if isinstance(col, (list, tuple)):
                if len(col) != n:
                    raise ValueError("column %d has %d values, want %d" % (i, len(col), n))
                t: Any = type(col[0]) if n else comp.type   # type: ignore[union-attr]
                col = (t * n)(*col)
            if isinstance(col, ctypes.Array):
                if len(col) != n:
                    raise ValueError("column %d has %d values, want %d" % (i, len(col), n))
                if comp is None:
                    comp = self.component_of(col._type_)
                if not getattr(col, "_b_needsfree_", 1):
                    col = type(col).from_buffer_copy(col)
                keep.append(col)
                vals[i].id = comp.id
                vals[i].size = ctypes.sizeof(col._type_)
                vals[i].ptr = ctypes.addressof(col)
            else:
                comp = self.component_of(col)
                vals[i].id = comp.id
                vals[i].size = comp.size
                vals[i].ptr = None
        out = (c_entity * max(1, n))()
        self._check(_lib.weft_spawn_bulk(self._p(), vals, len(columns), n, out))
        return list(out[:n])

    def despawn(self, e: Entity) -> None:
        self._check(_lib.weft_despawn(self._p(), e))

    def is_alive(self, e: Entity) -> bool:
        return bool(_lib.weft_is_alive(self._p(), e))

    def reserve(self) -> Entity:
        """Reserves an id (live after flush())."""
        return self._handle(_lib.weft_entity_reserve(self._p()))

    def flush(self) -> None:
        self._check(_lib.weft_entity_flush(self._p()))

    def insert(self, e: Entity, *values: Value) -> None:
        """Adds or replaces one or more components (one row move)."""
        if len(values) == 1:
            comp, ptr, size, keep = self._value(values[0])
            self._check(_lib.weft_insert(self._p(), e, comp.id, ptr, size))
        else:
            arr, keep = self._values(values)
            self._check(_lib.weft_insert_many(self._p(), e, arr, len(values)))

    insert_many = insert

    def remove(self, e: Entity, component: ComponentRef) -> None:
        """Removes a component (no-op when absent)."""
        self._check(_lib.weft_remove(self._p(), e, self.component_of(component).id))

    def has(self, e: Entity, component: ComponentRef) -> bool:
        return bool(_lib.weft_has(self._p(), e, self.component_of(component).id))

    @overload
    def get(self, e: Entity, component: Type[S]) -> Optional[S]: ...

    @overload
    def get(self, e: Entity, component: ComponentRef) -> Any: ...

    def get(self, e: Entity, component: ComponentRef) -> Any:
        """A copy of e's value of `component`, or None when e lacks it.
        Raises WeftError on misuse (stale entity, size mismatch, tag)."""
        c = self.component_of(component)
        self._clear()
        ptr = _lib.weft_get(self._p(), e, c.id, c.size)
        if not ptr:
            self._check_slot()
            return None
        return _copy(c.type, ptr)

    def get_mut(self, e: Entity, component: ComponentRef) -> Optional[View]:
        """A writable View over e's value (stamps it changed), or None when
        e lacks it. The view is valid only until the next structural change
        (spawn, despawn, insert, remove, flush, applying commands, the end
        of an iteration); used later it raises WeftError (see View)."""
        c = self.component_of(component)
        self._clear()
        ptr = _lib.weft_get_mut(self._p(), e, c.id, c.size)
        if not ptr:
            self._check_slot()
            return None

        def resolve():
            # neither call records an error: a dead entity or a missing
            # component is an expected outcome (weft.h)
            p = self._ptr and self._p()
            return p and _lib.weft_is_alive(p, e) and _lib.weft_get(p, e, c.id, c.size)
        return _checked_view(c.type, ptr, "%s of entity %#x" % (c.name, e), resolve)

    def ticks(self, e: Entity, component: ComponentRef) -> Tuple[int, int]:
        """(added, changed) change ticks of e's component."""
        t = WeftTicks()
        self._check(_lib.weft_get_ticks(self._p(), e, self.component_of(component).id,
                                        ctypes.byref(t)))
        return t.added, t.changed

    def archetype_of(self, e: Entity) -> int:
        return _lib.weft_entity_archetype(self._p(), e)

    # -- resources
    def resource_insert(self, value: Value, component: Optional[ComponentRef] = None) -> None:
        """Inserts or replaces a resource (a registered component type used
        as a singleton)."""
        if component is not None:
            value = (component, value)
        comp, ptr, size, keep = self._value(value)
        self._check(_lib.weft_resource_insert(self._p(), comp.id, ptr, size))

    @overload
    def resource_get(self, component: Type[S]) -> Optional[S]: ...

    @overload
    def resource_get(self, component: ComponentRef) -> Any: ...

    def resource_get(self, component: ComponentRef) -> Any:
        """A copy of the resource, or None when absent."""
        c = self.component_of(component)
        self._clear()
        ptr = _lib.weft_resource_get(self._p(), c.id, c.size)
        if not ptr:
            self._check_slot()
            return None
        return _copy(c.type, ptr)

    def resource_get_mut(self, component: ComponentRef) -> Optional[View]:
        """Writable View of the resource (valid until it is removed or
        replaced; raises WeftError when used later), or None when absent."""
        c = self.component_of(component)
        self._clear()
        ptr = _lib.weft_resource_get_mut(self._p(), c.id, c.size)
        if not ptr:
            self._check_slot()
            return None

        def resolve():
            p = self._ptr and self._p()
            return p and _lib.weft_resource_get(p, c.id, c.size)
        return _checked_view(c.type, ptr, "resource %s" % c.name, resolve)

    def resource_has(self, component: ComponentRef) -> bool:
        return bool(_lib.weft_resource_has(self._p(), self.component_of(component).id))

    def resource_remove(self, component: ComponentRef) -> None:
        self._check(_lib.weft_resource_remove(self._p(), self.component_of(component).id))

    # -- ticks, diagnostics
    @property
    def change_tick(self) -> int:
        return _lib.weft_world_change_tick(self._p())

    @change_tick.setter
    def change_tick(self, tick: int) -> None:
        _lib.weft_world_set_change_tick(self._p(), tick)

    def increment_change_tick(self) -> int:
        return _lib.weft_world_increment_change_tick(self._p())

    @property
    def restore_count(self) -> int:
        """Snapshots restored into this world (restore()); a cache of the
        host's keyed on entities is rebuilt when it changes."""
        return _lib.weft_world_restore_count(self._p())

    def stats(self) -> WeftWorldStats:
        """A WeftWorldStats struct (fields as in weft.h; .as_dict())."""
        s = WeftWorldStats()
        self._check(_lib.weft_world_get_stats(self._p(), ctypes.byref(s)))
        return s

    def archetypes(self) -> List[Tuple[int, List[int]]]:
        """[(entity_count, [component ids])] for every archetype."""
        out = []
        for i in range(self.stats().archetypes):
            info = WeftArchetypeInfo()
            self._check(_lib.weft_archetype_info_get(self._p(), i, ctypes.byref(info)))
            ids = [info.components[k] for k in range(info.component_count)]
            out.append((info.entity_count, ids))
        return out

    def hash(self) -> int:
        """Canonical 64-bit hash of the world."""
        return _lib.weft_world_hash(self._p())

    def check(self) -> None:
        """Verifies the storage invariants; raises WeftError (CORRUPT)."""
        self._check(_lib.weft_world_check(self._p()))

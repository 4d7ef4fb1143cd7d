# bindings/python/weft/observers.py - events, triggers and observers, and the World
# methods for them.
# SPDX-License-Identifier: MIT
"""Events, triggers and observers, and the World methods for them."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Callable, Optional

from ._typing import _WorldInternals
from ._abi import ERR_INVALID_HANDLE, OBSERVER_FN, WeftEventDesc, WeftObserverDesc
from ._loader import _lib
from .errors import WeftError
from .components import _copy, _owned

if TYPE_CHECKING:
    from ._typing import ComponentRef, Entity


class Event:
    """A registered custom event (payload_type: a ctypes struct or None)."""

    def __init__(self, eid, name, payload_type):
        self.id = eid
        self.name = name
        self.payload_type = payload_type

    def __int__(self):
        return self.id

    __index__ = __int__


class Trigger:
    """What an observer receives: a view of weft's trigger, valid only
    during the observer's call. Every attribute raises WeftError
    (INVALID_HANDLE) afterwards (the trigger lives in weft's stack frame);
    read what must outlive the call (trigger.entity, trigger.payload,
    which is a copy) inside it."""

    __slots__ = ("world", "_tt", "_payload_type")

    def __init__(self, world, tptr, payload_type):
        self.world = world
        self._tt = tptr.contents
        self._payload_type = payload_type

    @property
    def _t(self):
        t = self._tt
        if t is None:
            raise WeftError(ERR_INVALID_HANDLE, "trigger used after its observer returned "
                            "(it lives only during the observer's call: copy what you need)")
        self.world._p()   # the thread check
        return t

    def _end(self):
        self._tt = None

    @property
    def valid(self) -> bool:
        """Whether the observer's call is still running."""
        return self._tt is not None

    event = property(lambda self: self._t.event)
    component = property(lambda self: self._t.component)
    entity = property(lambda self: self._t.entity)
    original = property(lambda self: self._t.original)

    @property
    def payload(self) -> Any:
        """Copy of the payload (the event's struct type, else bytes; None
        without payload)."""
        t = self._t
        if not t.payload or not t.payload_size:
            return None
        if self._payload_type is not None:
            return _copy(self._payload_type, t.payload)
        return ctypes.string_at(t.payload, t.payload_size)

    @property
    def propagate(self) -> bool:
        return bool(self._t.propagate)

    @propagate.setter
    def propagate(self, v: bool) -> None:
        self._t.propagate = bool(v)

    def stop(self) -> None:
        """Stops propagation up ChildOf."""
        self._t.propagate = False


class Observer:
    """Handle of a registered observer."""

    def __init__(self, world, ptr, key):
        self.world = world
        self._ptr = ptr
        self.key = key

    @property
    def alive(self) -> bool:
        return self.key in self.world._callbacks

    def destroy(self) -> None:
        if self._ptr and self.alive and self.world._ptr:
            self.world._check(_lib.weft_observer_destroy(self.world._p(), self._ptr))
        self._ptr = None


class _ObserversWorld(_WorldInternals):
    """World methods for observers (a mixin of weft.World)."""

    # -- events and observers
    def event(self, name: str, payload_type: Optional[type] = None) -> Event:
        """Registers a custom event; payload_type is a ctypes struct or None."""
        desc = WeftEventDesc()
        bname = name.encode("utf-8")
        desc.name = bname
        desc.payload_size = ctypes.sizeof(payload_type) if payload_type is not None else 0
        eid = self._handle(_lib.weft_event_register(self._p(), ctypes.byref(desc)))
        ev = Event(eid, name, payload_type)
        self._events[eid] = ev
        return ev

    def observe(self, event: Any, fn: Callable[[Trigger], Any],
                component: Optional[ComponentRef] = None, entity: Entity = 0) -> Observer:
        """Registers `fn(trigger)` for a lifecycle event (ADD, INSERT,
        REPLACE, REMOVE, DESPAWN; needs `component`) or a custom Event. It
        runs inside the triggering call (structural calls it makes are
        deferred). Exceptions it raises are re-raised after that call."""
        eid = int(event)
        ev = self._events.get(eid)
        payload_type = ev.payload_type if ev is not None else None
        key = self._next_key
        self._next_key += 1

        def tramp(world, tptr, user):
            self._enter()
            trig = None
            try:
                trig = Trigger(self, tptr, payload_type)
                fn(trig)
            except BaseException as exc:   # must not unwind into C
                self._store(exc)
            finally:
                if trig is not None:
                    trig._end()
                self._leave()
        cfn = OBSERVER_FN(tramp)
        desc = WeftObserverDesc()
        desc.event = eid
        desc.component = self.component_of(component).id if component is not None else 0
        desc.entity = entity
        desc.fn = cfn
        desc.user = key
        desc.free_user = self._free_user
        self._callbacks[key] = (cfn, fn)
        try:
            ptr = self._handle(_lib.weft_observer_create(self._p(), ctypes.byref(desc)))
        except BaseException:
            self._callbacks.pop(key, None)
            raise
        return Observer(self, ptr, key)

    def observer(self, event: Any, component: Optional[ComponentRef] = None,
                 entity: Entity = 0) -> Callable[[Callable[[Trigger], Any]], Observer]:
        """Decorator form of observe()."""
        def deco(fn):
            return self.observe(event, fn, component, entity)
        return deco

    def _on_free_user(self, user):
        # The observer is gone: drop its trampoline. Never raises.
        try:
            self._callbacks.pop(user, None)
        except BaseException:
            pass

    def trigger(self, event: Any, target: Entity = 0, payload: Any = None,
                propagate: bool = False) -> None:
        """Triggers a custom event synchronously."""
        ptr, size = None, 0
        if payload is not None:
            payload = _owned(payload)
            ptr, size = ctypes.addressof(payload), ctypes.sizeof(payload)
        self._check(_lib.weft_trigger_event(self._p(), int(event), target, ptr, size,
                                            propagate))

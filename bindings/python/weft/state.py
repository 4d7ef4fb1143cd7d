# bindings/python/weft/state.py - states (finite state machines on resources and
# schedules), and the World methods for them.
# SPDX-License-Identifier: MIT
"""States: freely mutable, sub and computed states; their OnEnter/OnExit/
OnTransition schedules, transition messages and state-scoped despawns; the
World methods for them (see weft.h, "states")."""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ._typing import _WorldInternals
from ._abi import (
    STATE_COMPUTE_FN, STATE_KIND_COMPUTED, STATE_KIND_DEFAULT, STATE_KIND_SUB,
    STATE_VALUE_NONE, WeftNextState, WeftStateDesc, WeftStateTransitionEvent,
    WeftStateValue,
)
from ._loader import _lib
from ._convert import check_int, check_name
from .components import Component
from .messages import MessageType
from .schedules import Schedule

#: A state value: its name or its number.
StateRef = Union[str, int]


class StateValue(ctypes.Structure):
    """The State<name> resource: the current value."""
    _fields_ = [("value", ctypes.c_uint32)]


class StateTag(ctypes.Structure):
    """DespawnOnExit<name> / DespawnOnEnter<name>: the value it names."""
    _fields_ = [("value", ctypes.c_uint32)]


class State:
    """A state type of one world. Values are passed and returned as their
    names (str) or their numbers (int); a state that does not exist has the
    value None. Components and resources registered for it are plain
    Components: declare read(state.resource) to read it from a system, and
    write(state.next_resource) to queue a transition from one."""

    def __init__(self, world: Any, sid: int, name: str, values: Dict[str, int],
                 kind: int) -> None:
        self.world = world
        self.id = sid
        self.name = name
        self.kind = kind
        self.values = dict(values)                       # name -> number
        self.names = {v: k for k, v in self.values.items()}  # number -> name
        w = world._p()
        self.resource = world._adopt(_lib.weft_state_resource(w, sid), StateValue,
                                     "State<%s>" % name)
        self.next_resource: Optional[Component] = None
        if kind != STATE_KIND_COMPUTED:
            self.next_resource = world._adopt(_lib.weft_state_next_resource(w, sid),
                                              WeftNextState, "NextState<%s>" % name)
        self.despawn_on_exit = world._adopt(_lib.weft_state_despawn_on_exit(w, sid),
                                            StateTag, "DespawnOnExit<%s>" % name)
        self.despawn_on_enter = world._adopt(_lib.weft_state_despawn_on_enter(w, sid),
                                             StateTag, "DespawnOnEnter<%s>" % name)
        self.transitions = MessageType(world, _lib.weft_state_transition_message(w, sid),
                                       WeftStateTransitionEvent,
                                       "StateTransitionEvent<%s>" % name)

    def __int__(self) -> int:
        return self.id

    __index__ = __int__

    def __repr__(self) -> str:
        return "State(%r, id=%d)" % (self.name, self.id)

    def number(self, value: StateRef) -> int:
        """The number of a value given by name or number (KeyError when it
        is not one of this state's values)."""
        if isinstance(value, str):
            try:
                return self.values[value]
            except KeyError:
                raise KeyError("%r is not a value of state %s" % (value, self.name)) from None
        value = int(value)
        if value not in self.names:
            raise KeyError("%d is not a value of state %s" % (value, self.name))
        return value

    def name_of(self, number: int) -> Optional[str]:
        """The name of a value number (None for STATE_VALUE_NONE)."""
        return None if number == STATE_VALUE_NONE else self.names.get(number, str(number))

    # -- the current value, queued values
    def get(self) -> Optional[str]:
        """The current value's name, or None when the state does not exist."""
        v = ctypes.c_uint32()
        self.world._check(_lib.weft_state_get(self.world._p(), self.id, ctypes.byref(v)))
        return self.name_of(v.value)

    @property
    def exists(self) -> bool:
        return bool(_lib.weft_state_exists(self.world._p(), self.id))

    def set_next(self, value: StateRef) -> None:
        """Queues a transition to `value` for the next transition step (the
        last call before it wins). Unknown values raise WeftError
        INVALID_ARG (numbers) or KeyError (names); a computed state raises
        WeftError IMMUTABLE."""
        v = self.number(value) if isinstance(value, str) else int(value)
        self.world._check(_lib.weft_state_set_next(self.world._p(), self.id, v))

    # -- owned schedules
    def _owned(self, ptr: Any, name: str) -> Schedule:
        w = self.world
        ptr = w._handle(ptr)
        sch: Optional[Schedule] = w._schedules.get(ptr)
        if sch is None:
            sch = w._schedules[ptr] = Schedule(w, ptr, name)
        return sch

    def on_enter(self, value: StateRef) -> Schedule:
        """The OnEnter(value) Schedule (created on first use; owned by the
        state: destroy() on it raises)."""
        n = self.number(value)
        return self._owned(_lib.weft_state_on_enter(self.world._p(), self.id, n),
                           "OnEnter(%s::%s)" % (self.name, self.names[n]))

    def on_exit(self, value: StateRef) -> Schedule:
        """The OnExit(value) Schedule."""
        n = self.number(value)
        return self._owned(_lib.weft_state_on_exit(self.world._p(), self.id, n),
                           "OnExit(%s::%s)" % (self.name, self.names[n]))

    def on_transition(self, exited: StateRef, entered: StateRef) -> Schedule:
        """The OnTransition(exited, entered) Schedule."""
        a, b = self.number(exited), self.number(entered)
        return self._owned(_lib.weft_state_on_transition(self.world._p(), self.id, a, b),
                           "OnTransition(%s::%s -> %s::%s)"
                           % (self.name, self.names[a], self.name, self.names[b]))

    # -- state-scoped entities
    def despawn_on_exit_value(self, value: StateRef) -> Tuple[Component, StateTag]:
        """A (component, value) pair for spawn/insert: the entity is
        despawned when this state exits `value`."""
        return (self.despawn_on_exit, StateTag(self.number(value)))

    def despawn_on_enter_value(self, value: StateRef) -> Tuple[Component, StateTag]:
        """A (component, value) pair: despawned when the state enters `value`."""
        return (self.despawn_on_enter, StateTag(self.number(value)))


def _values_of(values: Union[Sequence[str], Dict[str, int]]) -> Dict[str, int]:
    """{name: number} from a list of names (numbered 0, 1, ...) or a dict."""
    if isinstance(values, dict):
        out = {str(k): check_int(ctypes.c_uint32, int(v), "state value %r" % k)
               for k, v in values.items()}
        if len(set(out.values())) != len(out):
            raise ValueError("state values %r: two names share a number" % (values,))
    else:
        if isinstance(values, (str, bytes)):
            raise TypeError("state values are a list of names or a dict, not one string")
        names = [str(name) for name in values]
        out = {name: i for i, name in enumerate(names)}
        if len(out) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError("state values %r: %s given twice (each value needs its own "
                             "name)" % (names, ", ".join(dup)))
    for name in out:
        check_name(name, "state value name")
    return out


class _StatesWorld(_WorldInternals):
    """World methods for states (a mixin of weft.World)."""

    def _adopt(self, cid: int, ctype: type, name: str) -> Component:
        """The Component for an id registered by weft itself."""
        if not cid:
            self._raise_last()
        c = self._by_id.get(cid)
        if c is None:
            c = Component(self, cid, ctype, name, ctypes.sizeof(ctype), ctypes.alignment(ctype))
            self._by_id[cid] = c
        return c

    def register_state(self, name: str, values: Union[Sequence[str], Dict[str, int]],
                       initial: Optional[StateRef] = None, *, source: Optional[State] = None,
                       source_value: Optional[StateRef] = None,
                       sources: Sequence[State] = (),
                       compute: Optional[Callable[..., Optional[StateRef]]] = None) -> State:
        """Registers a state type and returns its State (see
        _register_state for the arguments)."""
        return self._register_state(
            lambda desc: _lib.weft_state_register(self._p(), desc), name, values, initial,
            source=source, source_value=source_value, sources=sources, compute=compute)

    def _register_state(self, register: Callable[[Any], int], name: str,
                        values: Union[Sequence[str], Dict[str, int]],
                        initial: Optional[StateRef] = None, *,
                        source: Optional[State] = None,
                        source_value: Optional[StateRef] = None,
                        sources: Sequence[State] = (),
                        compute: Optional[Callable[..., Optional[StateRef]]] = None) -> State:
        """Registers a state type and returns its State.

        `values` is a list of names (numbered 0, 1, ...) or a dict
        {name: number}. `initial` (a name or number; default: the first
        value) is entered at the first transition step.
        Sub state: give `source` (a State) and `source_value`: it exists
        only while the source has that value.
        Computed state: give `sources` (States) and `compute`, called as
        compute(*values) with each source's current value name (None when
        that source does not exist); it returns a value (name or number)
        or None for "does not exist". It cannot be set."""
        vals = _values_of(values)
        if not vals:
            raise ValueError("a state needs at least one value")
        arr = (WeftStateValue * len(vals))()
        keep: List[Any] = [arr]
        for i, (vname, num) in enumerate(vals.items()):
            b = vname.encode("utf-8")
            keep.append(b)
            arr[i].value = num
            arr[i].name = b
        desc = WeftStateDesc()
        bname = name.encode("utf-8")
        desc.name = bname
        desc.values = arr
        desc.value_count = len(vals)
        kind = STATE_KIND_DEFAULT
        src_states = []
        if compute is not None:
            kind = STATE_KIND_COMPUTED
            if source is not None or source_value is not None or initial is not None:
                raise ValueError("a computed state takes sources and compute only")
            src_states = list(sources)
            c_sources = (ctypes.c_uint32 * max(1, len(src_states)))(
                *[int(s) for s in src_states])
            desc.sources = c_sources
            desc.source_count = len(src_states)
            keep.append(c_sources)
            names = dict(vals)
            world = self

            def tramp(src, count, user):
                world._enter()
                try:
                    args = [s.name_of(src[i]) for i, s in enumerate(src_states[:count])]
                    r = compute(*args)
                    if r is None:
                        return STATE_VALUE_NONE
                    return names[r] if isinstance(r, str) \
                        else check_int(ctypes.c_uint32, int(r), "compute's result")
                except BaseException as exc:  # never unwinds into weft
                    world._store(exc)
                    return STATE_VALUE_NONE
                finally:
                    world._leave()
            cfn = STATE_COMPUTE_FN(tramp)
            desc.compute = cfn
            keep.append(cfn)
        else:
            if sources:
                raise ValueError("sources are for computed states (give compute)")
            if source is not None:
                if source_value is None:
                    raise ValueError("a sub state needs source_value")
                kind = STATE_KIND_SUB
                desc.source = int(source)
                desc.source_value = (source.number(source_value)
                                     if isinstance(source_value, str) else int(source_value))
            elif source_value is not None:
                raise ValueError("source_value needs a source")
            first = next(iter(vals.values()))
            if initial is None:
                desc.initial = first
            elif isinstance(initial, str):
                if initial not in vals:
                    raise KeyError("%r is not a value of state %s" % (initial, name))
                desc.initial = vals[initial]
            else:
                desc.initial = int(initial)
        desc.kind = kind
        sid = self._handle(register(ctypes.byref(desc)))
        st = State(self, sid, name, vals, kind)
        self._keep_state.append(keep)
        self._states[sid] = st
        return st

    def state_lookup(self, name: str) -> Optional[State]:
        """The State registered under `name` through this World, or None."""
        sid = _lib.weft_state_lookup(self._p(), name.encode("utf-8"))
        return self._states.get(sid) if sid else None

    def state_transition(self) -> None:
        """Runs one transition step (weft_state_transition): queued values
        applied, OnExit leaf to root, OnTransition, OnEnter root to leaf,
        state-scoped despawns. Raises the first failure."""
        outer, self._system_exc = self._system_exc, None
        try:
            status = _lib.weft_state_transition(self._p())
            failures = self._system_exc
        finally:
            self._system_exc = outer
        self._finish_run(status, failures)

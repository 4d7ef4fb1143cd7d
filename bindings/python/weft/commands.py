# bindings/python/weft/commands.py - command buffers (Commands) and the World methods
# that make them.
# SPDX-License-Identifier: MIT
"""Command buffers (Commands) and the World methods that make them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Union

from ._typing import _WorldInternals
from ._abi import ERR_INVALID_HANDLE, ERR_STALE_ENTITY, ERR_WRONG_PHASE, OK
from ._loader import _lib
from .errors import WeftError, _s

if TYPE_CHECKING:
    from ._typing import ComponentRef, Entity, Value


def is_provisional(e: int) -> bool:
    """Whether `e` is a provisional handle (generation's top bit set: what a
    system's buffer hands out for a spawn; see ProvisionalEntity)."""
    return bool((int(e) >> 63) & 1)


class ProvisionalEntity(int):
    """What `ctx.commands.spawn()` returns inside a system: a provisional
    handle, not yet an entity. weft gives the spawn its real id only when
    the buffer is applied (at the system's next sync point), so:

    - use it in later commands of the same system run (insert, remove,
      despawn, a ChildOf value through the same buffer): weft maps it at
      apply;
    - anywhere else (a World call, another buffer, a later run) weft
      refuses it with WeftError STALE_ENTITY: it never names another
      entity;
    - after the buffer is applied, `resolve()` gives the real entity (an
      int), until the same buffer's next round with spawns is applied.

    It is an int (the handle), so it passes where an Entity is expected;
    compare real entities with `resolve()`'s result, not with it."""

    # (an int subclass cannot have __slots__: _cmds lives in its __dict__)
    _cmds: "Commands"

    def __new__(cls, handle: int, cmds: "Commands") -> "ProvisionalEntity":
        self = int.__new__(cls, handle)
        self._cmds = cmds
        return self

    def resolve(self) -> int:
        """The real entity the spawn became. Raises WeftError: WRONG_PHASE
        before the buffer was applied, STALE_ENTITY once a later round of
        the buffer was applied (or the spawn failed), INVALID_HANDLE when
        the buffer is gone (its schedule destroyed, the world closed)."""
        return self._cmds._resolve(self)

    def __repr__(self) -> str:
        return "ProvisionalEntity(%#x)" % int(self)


class Commands:
    """A command buffer. Recorded calls are applied in FIFO order by apply().
    As a context manager it applies on a clean exit and is destroyed."""

    def __init__(self, world: Any, ptr: Optional[int] = None, owned: bool = True,
                 schedule: Any = None) -> None:
        self.world = world
        self._owned = owned
        self._keep: List[Any] = []
        self._ptr = ptr or world._handle(_lib.weft_commands_create(world._p()))
        # a system's buffer: the raw pointer outlives this wrapper's use
        # (it belongs to the system, freed with its schedule), for resolve()
        self._buffer = self._ptr
        self._schedule = schedule

    def _p(self):
        if not self._ptr:
            raise WeftError(ERR_INVALID_HANDLE, "command buffer destroyed (or its system "
                            "run has ended)")
        self.world._p()   # the world is open, and this thread may use it
        return self._ptr

    def spawn(self, *values: Value) -> Union[Entity, ProvisionalEntity]:
        """Records a spawn; returns its id at once. From a World's buffer
        (World.commands()) that is the entity, live after apply(). Inside a
        system (ctx.commands) it is a ProvisionalEntity: usable in this
        run's later commands, refused elsewhere, resolve() after apply."""
        arr, keep = self.world._values(values)
        w = self.world
        w._clear()
        e = _lib.weft_cmd_spawn(self._p(), arr, len(values))
        if not e:
            w._raise_last()
        if (e >> 63) & 1:
            return ProvisionalEntity(e, self)
        return e

    def resolve(self, e: int) -> Entity:
        """The real entity of a handle this buffer's spawn returned (see
        ProvisionalEntity.resolve); a real entity comes back unchanged."""
        return self._resolve(e)

    def _resolve(self, e):
        w = self.world
        w._p()   # open, and this thread may use it
        sch = self._schedule
        if not self._buffer or (sch is not None and not sch._ptr) \
                or (self._owned and not self._ptr):
            raise WeftError(ERR_INVALID_HANDLE, "the command buffer of %#x is gone (its "
                            "schedule was destroyed)" % int(e))
        if self._schedule is not None and self._ptr and (int(e) >> 63) & 1:
            # this run's own round: not applied before the system returns
            # (asked here, so that weft does not fail the system for it)
            raise WeftError(ERR_WRONG_PHASE, "provisional entity %#x: its spawn is not "
                            "applied yet (the system's commands apply at its next sync "
                            "point; resolve it after that)" % int(e))
        w._clear()
        r = _lib.weft_commands_resolve(self._buffer, int(e))
        if not r:
            st = _lib.weft_last_status(w._ptr)
            if st == ERR_WRONG_PHASE:
                raise WeftError(ERR_WRONG_PHASE, "provisional entity %#x: its spawn is not "
                                "applied yet (the system's commands apply at its next sync "
                                "point; resolve it after that)" % int(e), recorded=True)
            raise WeftError(st if st != OK else ERR_STALE_ENTITY,
                            "provisional entity %#x: %s" % (int(e), _s(
                                _lib.weft_last_error(w._ptr)) or "stale"), recorded=True)
        return int(r)

    def insert(self, e: Entity, *values: Value, try_: bool = False) -> None:
        """Records an insert of one or more values (copied now)."""
        w = self.world
        if len(values) == 1:
            comp, ptr, size, _ = w._value(values[0])
            fn = _lib.weft_cmd_try_insert if try_ else _lib.weft_cmd_insert
            w._check(fn(self._p(), e, comp.id, ptr, size))
        else:
            if try_:
                raise ValueError("try_ takes one value")
            arr, keep = w._values(values)
            w._check(_lib.weft_cmd_insert_many(self._p(), e, arr, len(values)))

    def remove(self, e: Entity, component: ComponentRef, try_: bool = False) -> None:
        c = self.world.component_of(component)
        fn = _lib.weft_cmd_try_remove if try_ else _lib.weft_cmd_remove
        self.world._check(fn(self._p(), e, c.id))

    def despawn(self, e: Entity, try_: bool = False) -> None:
        fn = _lib.weft_cmd_try_despawn if try_ else _lib.weft_cmd_despawn
        self.world._check(fn(self._p(), e))

    def resource_insert(self, value: Value) -> None:
        comp, ptr, size, _ = self.world._value(value)
        self.world._check(_lib.weft_cmd_resource_insert(self._p(), comp.id, ptr, size))

    def resource_remove(self, component: ComponentRef) -> None:
        c = self.world.component_of(component)
        self.world._check(_lib.weft_cmd_resource_remove(self._p(), c.id))

    def __len__(self) -> int:
        return _lib.weft_commands_count(self._p())

    def apply(self) -> None:
        """Applies and empties the buffer. Per-command failures do not stop
        the rest; the first is raised afterwards as WeftError."""
        self.world._check(_lib.weft_commands_apply(self.world._p(), self._p()))

    def destroy(self) -> None:
        if self._ptr and self._owned and self.world._ptr:
            _lib.weft_commands_destroy(self._p())
        self._ptr = None

    def __enter__(self) -> Commands:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            if exc_type is None:
                self.apply()
        finally:
            self.destroy()


class _CommandsWorld(_WorldInternals):
    """World methods for commands (a mixin of weft.World)."""

    # -- commands
    def commands(self) -> Commands:
        """A new command buffer (context manager: applies on exit)."""
        return Commands(self)

    def world_commands(self) -> Commands:
        """The world's own buffer (never destroyed by the binding)."""
        return Commands(self, self._handle(_lib.weft_world_commands(self._p())), owned=False)

# bindings/python/weft/commands.py - command buffers (Commands) and the World methods
# that make them.
# SPDX-License-Identifier: MIT
"""Command buffers (Commands) and the World methods that make them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional

from ._typing import _WorldInternals
from ._abi import ERR_INVALID_HANDLE
from ._loader import _lib
from .errors import WeftError

if TYPE_CHECKING:
    from ._typing import ComponentRef, Entity, Value


class Commands:
    """A command buffer. Recorded calls are applied in FIFO order by apply().
    As a context manager it applies on a clean exit and is destroyed."""

    def __init__(self, world: Any, ptr: Optional[int] = None, owned: bool = True) -> None:
        self.world = world
        self._owned = owned
        self._keep: List[Any] = []
        self._ptr = ptr or world._handle(_lib.weft_commands_create(world._p()))

    def _p(self):
        if not self._ptr:
            raise WeftError(ERR_INVALID_HANDLE, "command buffer destroyed (or its system "
                            "run has ended)")
        self.world._p()   # the world is open, and this thread may use it
        return self._ptr

    def spawn(self, *values: Value) -> Entity:
        """Records a spawn; returns the reserved entity id at once."""
        arr, keep = self.world._values(values)
        w = self.world
        w._clear()
        e = _lib.weft_cmd_spawn(self._p(), arr, len(values))
        if not e:
            w._raise_last()
        return e

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

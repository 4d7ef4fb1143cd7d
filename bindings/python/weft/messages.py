# bindings/python/weft/messages.py - message types and readers, and the World methods for them.
# SPDX-License-Identifier: MIT
"""Message types and readers, and the World methods for them."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Optional

from ._typing import _WorldInternals
from ._abi import WeftMessageCursor, WeftMessageDesc
from ._loader import _lib
from .components import _copy, _is_struct_type, _owned

if TYPE_CHECKING:
    from ._typing import ComponentRef


class MessageType:
    def __init__(self, world, mid, ctype, name):
        self.world = world
        self.id = mid
        self.type = ctype
        self.name = name

    def reader(self) -> MessageReader:
        return MessageReader(self)


class MessageReader:
    """A reader with its own cursor; iterating yields copies of the unread
    messages in write order."""

    def __init__(self, mtype):
        self.mtype = mtype
        self.cursor = WeftMessageCursor()

    @property
    def missed(self) -> int:
        return self.cursor.missed

    def unread(self) -> int:
        w = self.mtype.world
        n = _lib.weft_message_unread(w._p(), self.mtype.id, ctypes.byref(self.cursor))
        if n < 0:
            w._raise_last()
        return n

    def read(self):
        """Next unread message (a copy) or None."""
        w = self.mtype.world
        w._clear()
        ptr = _lib.weft_message_read(w._p(), self.mtype.id, ctypes.byref(self.cursor),
                                     ctypes.sizeof(self.mtype.type))
        if not ptr:
            w._check_slot()
            return None
        return _copy(self.mtype.type, ptr)

    def __iter__(self):
        while True:
            m = self.read()
            if m is None:
                return
            yield m


class RemovedReader:
    """Entities that lost a component (remove or despawn), per cursor."""

    def __init__(self, world, component):
        self.world = world
        self.component = world.component_of(component)
        self.cursor = WeftMessageCursor()
        world._check(_lib.weft_removed_track(world._p(), self.component.id))

    def __iter__(self):
        w = self.world
        while True:
            w._clear()
            e = _lib.weft_removed_read(w._p(), self.component.id, ctypes.byref(self.cursor))
            if not e:
                w._check_slot()
                return
            yield e


class _MessagesWorld(_WorldInternals):
    """World methods for messages (a mixin of weft.World)."""

    # -- messages
    def message_type(self, ctype: type, name: Optional[str] = None) -> MessageType:
        """Registers a message type from a ctypes struct."""
        if not _is_struct_type(ctype):
            raise TypeError("message types are ctypes.Structure subclasses")
        name = name or ctype.__qualname__
        desc = WeftMessageDesc()
        bname = name.encode("utf-8")
        desc.name = bname
        desc.size = ctypes.sizeof(ctype)
        desc.align = ctypes.alignment(ctype)
        mid = self._handle(_lib.weft_message_register(self._p(), ctypes.byref(desc)))
        return MessageType(self, mid, ctype, name)

    def write_message(self, mtype: MessageType, msg: Any) -> None:
        msg = _owned(msg)
        self._check(_lib.weft_message_write(self._p(), mtype.id, ctypes.addressof(msg),
                                            ctypes.sizeof(msg)))

    def update_messages(self) -> None:
        """Swaps message buffers (once per frame); ages removed streams."""
        _lib.weft_messages_update(self._p())

    def removed(self, component: ComponentRef) -> RemovedReader:
        """A reader of entities that lose `component`."""
        return RemovedReader(self, component)

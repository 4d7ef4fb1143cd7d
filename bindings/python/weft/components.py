# bindings/python/weft/components.py - component handles, value helpers and checked views
# (View), and the World methods that register components.
# SPDX-License-Identifier: MIT
"""Component handles, value helpers and checked views (View), and the World
methods that register components."""

from __future__ import annotations

import ctypes
from threading import get_ident as _thread_id
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence

from ._abi import (
    ERR_INVALID_HANDLE, ERR_UNKNOWN_COMPONENT, ERR_WRONG_THREAD, HOOK_FN, STORAGE_DEFAULT, WeftComponentDesc,
    WeftComponentInfo, WeftRequire, WeftValue,
)
from ._loader import _lib
from .errors import WeftError, _s
from ._typing import _WorldInternals

if TYPE_CHECKING:
    from ._typing import ComponentRef, Hook


class Component:
    """A registered component: its id in one world and its ctypes type
    (None for tags)."""

    __slots__ = ("world", "id", "type", "name", "size", "align", "_keep")

    def __init__(self, world: Any, cid: int, ctype: Optional[type], name: str, size: int,
                 align: int) -> None:
        self.world = world
        self.id = cid
        self.type = ctype
        self.name = name
        self.size = size
        self.align = align
        self._keep: List[Any] = []

    @property
    def is_tag(self) -> bool:
        return self.size == 0

    def __int__(self) -> int:
        return self.id

    __index__ = __int__

    def __repr__(self) -> str:
        return "Component(%r, id=%d, size=%d)" % (self.name, self.id, self.size)


def _is_struct_type(t):
    return isinstance(t, type) and issubclass(t, (ctypes.Structure, ctypes.Union))


def _view(ctype, addr):
    """A ctypes object of type `ctype` over memory at `addr` (no copy)."""
    return ctype.from_address(addr)


def _copy(ctype, addr):
    """A copy of the `ctype` value at `addr`."""
    return ctype.from_buffer_copy((ctypes.c_char * ctypes.sizeof(ctype)).from_address(addr))


def _owned(value):
    """`value` itself if it owns its buffer, else a copy: the C ABI forbids
    passing pointers into the world's storage as the source of a write."""
    if isinstance(value, View):
        return value.copy()
    if getattr(value, "_b_needsfree_", 1):
        return value
    return type(value).from_buffer_copy(value)


class View:
    """A writable view of one value in the world's storage (what get_mut
    and resource_get_mut return), checked on every use.

    Attribute and item access read and write the world's memory directly,
    as a ctypes struct over it would, but first ask weft where the value
    lives now: once it has moved (a structural change, a table grown), died
    (despawn, remove) or its world or system run has ended, the view raises
    WeftError(WEFT_ERR_INVALID_HANDLE) instead of touching memory the world
    no longer holds there. Fields that are structs or arrays come back as
    views sharing the same check. copy() returns an owned ctypes copy;
    passing a view where weft takes a value copies it the same way."""

    __slots__ = ("_obj", "_live", "_what")

    def __init__(self, obj, live, what):
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_live", live)    # () -> bool, no side effects
        object.__setattr__(self, "_what", what)

    def _get(self):
        if not self._live():
            raise WeftError(ERR_INVALID_HANDLE,
                            "stale view of %s: the value moved or is gone (views last "
                            "until the next structural change, or the end of the "
                            "system run that made them); take a new one" % self._what)
        return self._obj

    def _wrap(self, v):
        if isinstance(v, (ctypes.Structure, ctypes.Union, ctypes.Array)):
            return View(v, self._live, self._what)
        return v

    @property
    def type(self) -> type:
        """The ctypes type viewed."""
        return type(self._obj)

    @property
    def address(self) -> int:
        """The value's address now (checked when taken, like np.asarray
        of a column: an explicit escape, for passing to C at once)."""
        return ctypes.addressof(self._get())

    def copy(self) -> Any:
        """An owned copy (a ctypes object that no longer refers to the world)."""
        obj = self._get()
        return type(obj).from_buffer_copy(obj)

    def __getattr__(self, name: str) -> Any:
        return self._wrap(getattr(self._get(), name))

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._get(), name, _owned(value) if isinstance(value, View) else value)

    def __getitem__(self, i: int) -> Any:
        return self._wrap(self._get()[i])

    def __setitem__(self, i: int, value: Any) -> None:
        self._get()[i] = _owned(value) if isinstance(value, View) else value

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self) -> Iterator[Any]:
        obj = self._get()
        return iter([self._wrap(obj[i]) for i in range(len(obj))])

    def __repr__(self) -> str:
        state = "live" if self._live() else "stale"
        return "<weft.View of %s (%s)>" % (self._what, state)


class _LeasedView(View):
    """A View whose validity is a chunk's lease (arrays._Lease): the check
    is inline (no call) on the common path, since per-row loops over
    Chunk.column go through it for every field."""

    __slots__ = ("_lease",)

    def __init__(self, obj, lease, what):
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_live", lease.live)
        object.__setattr__(self, "_what", what)
        object.__setattr__(self, "_lease", lease)

    def _get(self):
        lease = self._lease
        if lease.alive and lease.world._ptr and _thread_id() == lease.thread:
            return self._obj
        return View._get(self)

    def _wrap(self, v):
        if isinstance(v, (ctypes.Structure, ctypes.Union, ctypes.Array)):
            return _LeasedView(v, self._lease, self._what)
        return v

    def __getattr__(self, name: str) -> Any:
        lease = self._lease
        if lease.alive and lease.world._ptr and _thread_id() == lease.thread:
            v = getattr(self._obj, name)
        else:
            v = getattr(View._get(self), name)
        if isinstance(v, (ctypes.Structure, ctypes.Union, ctypes.Array)):
            return _LeasedView(v, lease, self._what)
        return v

    def __setattr__(self, name: str, value: Any) -> None:
        lease = self._lease
        if lease.alive and lease.world._ptr and _thread_id() == lease.thread \
                and not isinstance(value, View):
            setattr(self._obj, name, value)
        else:
            View.__setattr__(self, name, value)

    def __getitem__(self, i: int) -> Any:
        lease = self._lease
        if lease.alive and lease.world._ptr and _thread_id() == lease.thread:
            v = self._obj[i]
        else:
            v = View._get(self)[i]
        if isinstance(v, (ctypes.Structure, ctypes.Union, ctypes.Array)):
            return _LeasedView(v, lease, self._what)
        return v


def _checked_view(ctype, addr, what, resolve):
    """A View of `ctype` at `addr`, live while resolve() (the value's
    current address, or None; it must have no side effects) equals addr."""
    def live():
        try:
            return resolve() == addr
        except WeftError as exc:
            if exc.status == ERR_WRONG_THREAD:
                raise   # not stale: this thread may not use the world
            return False
    return View(ctype.from_address(addr), live, what)


class _ComponentsWorld(_WorldInternals):
    """World methods for components (a mixin of weft.World)."""

    # -- components
    def register(self, ctype: Optional[type] = None, name: Optional[str] = None,
                 storage: int = STORAGE_DEFAULT, flags: int = 0, align: Optional[int] = None,
                 requires: Sequence[Any] = (), on_add: Optional[Hook] = None,
                 on_insert: Optional[Hook] = None, on_replace: Optional[Hook] = None,
                 on_remove: Optional[Hook] = None, on_despawn: Optional[Hook] = None) -> Component:
        """Registers a component from a ctypes.Structure subclass (size and
        alignment from ctypes), or a tag when `ctype` is None (give `name`).
        `requires`: components (or (component, default value) pairs) added
        with this one. on_*: lifecycle hooks fn(world, entity, component)
        run in the deferred phase. Returns the Component."""
        if ctype is not None and not _is_struct_type(ctype):
            raise TypeError("component types are ctypes.Structure subclasses")
        if name is None:
            if ctype is None:
                raise ValueError("a tag needs a name")
            name = ctype.__qualname__
        size = ctypes.sizeof(ctype) if ctype is not None else 0
        if align is None:
            align = ctypes.alignment(ctype) if ctype is not None and size else 0
        keep: List[Any] = []
        desc = WeftComponentDesc()
        bname = name.encode("utf-8")
        desc.name = bname
        desc.size = size
        desc.align = align
        desc.storage = storage
        desc.flags = flags
        hooks = dict(on_add=on_add, on_insert=on_insert, on_replace=on_replace,
                     on_remove=on_remove, on_despawn=on_despawn)
        for field, fn in hooks.items():
            if fn is not None:
                tramp = HOOK_FN(self._hook_trampoline(fn))
                keep.append(tramp)
                setattr(desc.lifecycle, field, tramp)
        reqs = self._requires(requires, keep)
        if reqs is not None:
            desc.required = reqs
            desc.required_count = len(reqs)
        cid = self._handle(_lib.weft_component_register(self._p(), ctypes.byref(desc)))
        comp = Component(self, cid, ctype if size else None, name, size, align)
        comp._keep = keep   # hook trampolines must outlive the world's use
        self._keep.append(keep)
        if ctype is not None:
            self._by_type[ctype] = comp
        self._by_id[cid] = comp
        return comp

    component = register

    def tag(self, name: str, storage: int = STORAGE_DEFAULT) -> Component:
        """Registers a tag (a component without value)."""
        return self.register(None, name=name, storage=storage)

    def _requires(self, requires, keep):
        if not requires:
            return None
        arr = (WeftRequire * len(requires))()
        for i, r in enumerate(requires):
            if isinstance(r, tuple):
                c, value = r
                c = self.component_of(c)
                value = value.copy() if isinstance(value, View) \
                    else type(value).from_buffer_copy(value)
                keep.append(value)
                arr[i].value = ctypes.addressof(value)
                arr[i].size = ctypes.sizeof(value)
            else:
                c = self.component_of(r)
            arr[i].id = c.id
        keep.append(arr)
        return arr

    def require(self, component: ComponentRef, *requires: Any) -> None:
        """Adds requirements to an already registered component."""
        c = self.component_of(component)
        keep: List[Any] = []
        arr = self._requires(requires, keep)
        self._keep.append(keep)
        self._check(_lib.weft_component_require(self._p(), c.id, arr, len(requires)))

    def _hook_trampoline(self, fn):
        def hook(world, e, c, user):
            self._enter()
            try:
                fn(self, e, self._by_id.get(c, c))
            except BaseException as exc:   # must not unwind into C
                self._store(exc)
            finally:
                self._leave()
        return hook

    def component_of(self, x: ComponentRef) -> Component:
        """The Component for a Component, a registered ctypes type, an id,
        or a registered name."""
        if isinstance(x, Component):
            if x.world is not self:
                raise ValueError("component %s belongs to another world" % x.name)
            return x
        if isinstance(x, type):
            try:
                return self._by_type[x]
            except KeyError:
                raise TypeError("%s is not a registered component type" % x.__name__) from None
        if isinstance(x, int):
            if x in self._by_id:
                return self._by_id[x]
            raise WeftError(ERR_UNKNOWN_COMPONENT, "component id %d unknown to the binding" % x)
        if isinstance(x, str):
            cid = _lib.weft_component_lookup(self._p(), x.encode("utf-8"))
            if not cid or cid not in self._by_id:
                raise KeyError(x)
            return self._by_id[cid]
        raise TypeError("not a component: %r" % (x,))

    def lookup(self, name: str) -> int:
        """Component id registered under `name`, or 0."""
        return _lib.weft_component_lookup(self._p(), name.encode("utf-8"))

    def component_info(self, component: ComponentRef) -> Dict[str, Any]:
        c = self.component_of(component)
        info = WeftComponentInfo()
        self._check(_lib.weft_component_info_get(self._p(), c.id, ctypes.byref(info)))
        return {"name": _s(info.name), "size": info.size, "align": info.align,
                "storage": info.storage, "flags": info.flags}

    # -- values
    def _value(self, v):
        """(Component, pointer, size, keepalive) for one value argument:
        a struct instance, a (component, struct) pair, or a bare component
        / tag (default-construct)."""
        if isinstance(v, tuple):
            comp, val = v
            comp = self.component_of(comp)
        elif isinstance(v, View):
            comp, val = self.component_of(v.type), v
        elif isinstance(v, (ctypes.Structure, ctypes.Union)):
            comp, val = self.component_of(type(v)), v
        else:
            comp, val = self.component_of(v), None
        if val is None:
            return comp, None, comp.size, None
        val = _owned(val)
        return comp, ctypes.addressof(val), ctypes.sizeof(val), val

    def _values(self, values):
        arr = (WeftValue * max(1, len(values)))()
        keep = [arr]
        for i, v in enumerate(values):
            comp, ptr, size, k = self._value(v)
            arr[i].id = comp.id
            arr[i].size = size
            arr[i].ptr = ptr
            keep.append(k)
        return arr, keep

# bindings/python/weft/subapp.py - sub-apps: second worlds fed by extraction from an App's world,
# optionally pipelined (weft_app_add_sub_app, weft_sub_app_* in weft.h).
# SPDX-License-Identifier: MIT
"""Sub-apps: a second App on a world of its own that its App drives. After
the main schedules of every App.update, each sub-app is synced (main
entities carrying its sync tag get a twin in the sub-world), extracted
(its Extract schedule reads the main world, read-only, and writes the
sub-world) and updated, inline or, pipelined, on a thread of its own while
the caller goes on with the next frame. See weft.h ("sub-apps").

Python systems added to a pipelined sub-app run on its thread (ctypes
takes the interpreter lock for each call): keep them away from the objects
the driver thread uses meanwhile, and call wait() before touching the
sub-app or its world from the driver."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from ._abi import (
    ACCESS_NONE, ERR_INVALID_HANDLE, EXTRACT_FN, OK, OPER_WITH, OPER_WITHOUT, SYSTEM_COMMANDS, SYSTEM_EXCLUSIVE, SYSTEM_MAIN_THREAD,
    WeftExtractComponentDesc, WeftExtractDesc, WeftExtractInstancesDesc,
    WeftExtractResourceDesc, WeftInstanceMap, WeftIter, WeftQueryDesc, WeftSubAppDesc,
    WeftSystemDesc,
)
from ._loader import _lib
from .components import Component, View
from .errors import WeftError
from .queries import Chunk, _Chunks, _fill_query_desc
from .systems import QuerySpec, SystemContext, _SystemInfo, _SystemQuery
from .world import World

if TYPE_CHECKING:
    from ._typing import ComponentRef, Entity
    from .app import App

#: transform(main_entity, src, dst) -> keep: src is a view of the main
#: value (None for a tag), dst a zeroed view of the target to fill.
Transform = Callable[[int, Any, Any], bool]


def _adopt(world: World, cid: int, ctype: Optional[type], name: str) -> Component:
    """The Component for an id weft registered itself (tag when ctype is None)."""
    if not cid:
        world._raise_last()
    c = world._by_id.get(cid)
    if c is None:
        size = ctypes.sizeof(ctype) if ctype is not None else 0
        align = ctypes.alignment(ctype) if ctype is not None else 0
        c = Component(world, cid, ctype, name, size, align)
        world._by_id[cid] = c
    return c


class MainView:
    """The main world as an extract system sees it (read-only), valid
    during the system's call: its main queries by index, its declared main
    resources, and the twins of main entities."""

    __slots__ = ("_ctx", "_queries", "_world")

    def __init__(self, ctx: SystemContext, queries: List[Any], world: World) -> None:
        self._ctx = ctx
        self._queries = queries
        self._world = world

    def iter(self, query: int = 0) -> Iterator[Chunk]:
        """Chunks of main query number `query` (Added/Changed: since this
        system's previous extraction). Columns are read-only views."""
        if not 0 <= query < len(self._queries):
            raise IndexError("no main query %d" % query)
        return _Chunks(self._iter(query), self._ctx._p)

    def _iter(self, query):
        sq = self._queries[query]
        it = WeftIter()
        st = _lib.weft_extract_iter(self._ctx._p(), query, ctypes.byref(it))
        if st != OK:
            raise WeftError(st, "weft_extract_iter(%d) failed" % query, recorded=True)
        chunk = None
        done = False
        try:
            while self._ctx._p() and _lib.weft_iter_next(ctypes.byref(it)):
                chunk = Chunk(sq, it)
                yield chunk
                chunk._end()
            done = True
        finally:
            if chunk is not None:
                chunk._end()
            if not done and self._ctx._ptr:   # else ended with the extract system
                _lib.weft_iter_fini(ctypes.byref(it))

    def each(self, query: int = 0) -> Iterator[Tuple[Any, ...]]:
        """(entity, field copies...) per row of main query `query`."""
        sq = self._queries[query]
        for chunk in self.iter(query):
            cols = [chunk._column_raw(i) for i, t in enumerate(sq.terms)
                    if t.component.type is not None and t.access != ACCESS_NONE
                    and t.oper not in (OPER_WITH, OPER_WITHOUT)]
            ents = chunk._entities_raw()
            for r in range(chunk.count):
                chunk._live()
                yield (ents[r],) + tuple(type(c[r]).from_buffer_copy(c[r]) for c in cols)

    def resource(self, component: ComponentRef) -> Optional[Any]:
        """A copy of a declared main resource, or None when absent."""
        c = self._world.component_of(component)
        ctype: Any = c.type
        if ctype is None:
            raise TypeError("%s is a tag" % c.name)
        p = _lib.weft_extract_resource(self._ctx._p(), c.id, c.size)
        return ctype.from_buffer_copy(ctypes.string_at(p, c.size)) if p else None

    def resource_changed(self, component: ComponentRef) -> bool:
        """Whether a declared main resource changed since this sub-app's
        previous extraction."""
        c = self._world.component_of(component)
        return bool(_lib.weft_extract_resource_changed(self._ctx._p(), c.id))

    def sub_entity(self, main_entity: Entity) -> Optional[Entity]:
        """The twin of `main_entity` in the sub-world, or None (weft
        records why as the system's failure)."""
        e = _lib.weft_extract_sub_entity(self._ctx._p(), main_entity)
        return int(e) if e else None


class SubApp:
    """A sub-app of an App (App.add_sub_app). Build it like an App: its
    schedule(label), add_system, system and insert_schedule work on the
    sub-world's labels, and .world is its World (owned by the sub-app:
    close() on it only drops the wrapper). Its App drives and destroys it;
    update() and run() are not for it. Every method runs on the App's
    driver thread, and with a frame in flight (pipelined) only after
    wait()."""

    def __init__(self, parent: "App", ptr: int, name: str) -> None:
        from .app import App
        self.parent = parent
        self.name = name
        self._ptr: Optional[int] = ptr
        self.world = World._borrow(_lib.weft_app_world(ptr))
        # the App methods that build (schedules, systems, plugins) need an
        # App over this pointer: one that never destroys it
        self.app = App._over(self.world, ptr)
        self._keep: List[Any] = []           # descriptors' callbacks
        self._pipelined = False              # frames run on the sub-app's thread
        self._in_flight = False              # a frame may be running there now
        # the thread model (World._p): while a frame may run on the
        # sub-app's thread, the driver keeps off the sub-world
        self.world._busy = self._busy_reason
        self._maps: Dict[int, Any] = {}      # map component id -> instance ctypes type

    def _p(self) -> int:
        if not self._ptr:
            raise WeftError(ERR_INVALID_HANDLE, "sub-app closed (its App is gone)")
        self.parent.world._p()   # the main world's thread check
        return self._ptr

    def _busy_reason(self) -> Optional[str]:
        if self._in_flight:
            return ("sub-app %r has a frame in flight on its own thread: call wait() "
                    "before touching its world" % self.name)
        return None

    def _forget(self) -> None:
        """The App destroyed the sub-app: drop the wrappers."""
        self._ptr = None
        self.app._ptr = None
        self.world._forget()
        self._keep.clear()

    # -- building, as an App
    def schedule(self, label: str) -> Any:
        """The sub-world's Schedule of `label` (App.schedule)."""
        return self.app.schedule(label)

    def add_system(self, label: str, fn: Any, **kwargs: Any) -> Any:
        """App.add_system on the sub-app."""
        return self.app.add_system(label, fn, **kwargs)

    def system(self, label: str, **kwargs: Any) -> Any:
        """Decorator form of add_system."""
        return self.app.system(label, **kwargs)

    def insert_schedule(self, label: str, before: Optional[str] = None,
                        after: Optional[str] = None) -> Any:
        """App.insert_schedule on the sub-app."""
        return self.app.insert_schedule(label, before=before, after=after)

    # -- the pipeline
    def wait(self) -> None:
        """Waits for the frame in flight (pipelined) and raises its failure
        (WeftError with the main world's message), if any."""
        p = self._p()
        try:
            self.parent.world._check(_lib.weft_sub_app_wait(p))
        finally:
            self._in_flight = False

    def set_pipelined(self, on: bool) -> None:
        """Pipelined mode from the next update on; turning it off waits for
        the frame in flight (and raises its failure)."""
        p = self._p()
        try:
            st = _lib.weft_sub_app_set_pipelined(p, on)
        finally:
            if not on:
                self._in_flight = False   # turning it off waits for the frame
        if st == OK:
            self._pipelined = bool(on)
        self.parent.world._check(st)

    @property
    def frames(self) -> int:
        """Frames the sub-app completed (after wait() when pipelined)."""
        return int(_lib.weft_sub_app_frames(self._p()))

    # -- entity sync
    @property
    def sync_tag(self) -> Component:
        """The main-world tag that marks entities to sync into this sub-app."""
        return _adopt(self.parent.world, _lib.weft_sub_app_sync_tag(self._p()), None,
                      self.name + ".Sync")

    @property
    def sub_entity(self) -> Component:
        """The main-world component holding a synced entity's twin
        (one weft_entity; read it with World.get)."""
        from .relationships import c_entity_struct
        return _adopt(self.parent.world, _lib.weft_sub_app_sub_entity(self._p()),
                      c_entity_struct, self.name + ".SubEntity")

    @property
    def main_entity(self) -> Component:
        """The sub-world component holding a twin's main entity."""
        from .relationships import c_entity_struct
        return _adopt(self.world, _lib.weft_sub_app_main_entity(self._p()), c_entity_struct,
                      "MainEntity")

    def map(self, main_entity: Entity) -> Entity:
        """The twin of `main_entity` in the sub-world. WeftError NOT_FOUND
        when it is not synced yet, STALE_ENTITY / INVALID_ENTITY for a dead
        main entity, WRONG_PHASE with a frame in flight."""
        w = self.parent.world
        w._clear()
        e = _lib.weft_sub_app_map(self._p(), main_entity)
        if not e:
            w._raise_last()
        return int(e)

    # -- extraction
    def add_extract(self, fn: Callable[[SystemContext, MainView], Any],
                    name: Optional[str] = None, main_queries: Sequence[Any] = (),
                    main_resources: Sequence[ComponentRef] = (), queries: Sequence[Any] = (),
                    resources: Sequence[Any] = (), exclusive: bool = False,
                    commands: bool = False) -> int:
        """Adds an extract system fn(ctx, main) to the sub-app's Extract
        schedule: ctx is its SystemContext on the sub-world side (`queries`,
        `resources`, commands; ctx.world when exclusive), main a MainView of
        the main world through `main_queries` (read-only terms) and
        `main_resources`. Returns its node."""
        if name is None:
            name = getattr(fn, "__name__", None) or "extract"
        sched = self.world.schedule_lookup("Extract")
        assert sched is not None
        main = self.parent.world
        info = _SystemInfo(name)
        info.exclusive = exclusive
        d = WeftExtractDesc()
        sysd = d.system
        bname = name.encode("utf-8")
        sysd.name = bname
        keep: List[Any] = sched._describe(sysd, info, queries, resources, ())
        sysd.flags = (SYSTEM_EXCLUSIVE if exclusive else 0) | SYSTEM_MAIN_THREAD \
            | (SYSTEM_COMMANDS if commands else 0)
        mqs: List[Any] = []
        if main_queries:
            arr = (WeftQueryDesc * len(main_queries))()
            for i, q in enumerate(main_queries):
                spec = q if isinstance(q, QuerySpec) else QuerySpec(list(q))
                ts = main._terms(spec.terms)
                _fill_query_desc(arr[i], ts, spec.flags)
                mqs.append(_SystemQuery(main, ts, i, name))
            d.main_queries = arr
            d.main_query_count = len(main_queries)
            keep.append(arr)
        if main_resources:
            ids = [main.component_of(r).id for r in main_resources]
            rarr = (ctypes.c_uint32 * len(ids))(*ids)
            d.main_resources = rarr
            d.main_resource_count = len(ids)
            keep.append(rarr)
        world = main

        def body(ctx: SystemContext) -> None:
            fn(ctx, MainView(ctx, mqs, world))
        cfn = sched._system_fn(body, info)
        sysd.fn = cfn
        self.world._clear()
        nid = _lib.weft_sub_app_add_extract(self._p(), ctypes.byref(d))
        if not nid:
            self.world._raise_last()
        del keep
        sched._adopt_system(int(nid), name, info, cfn, fn)
        return int(nid)

    def _transform(self, fn: Optional[Transform], src: Optional[Component],
                   dst_type: Optional[type]) -> Any:
        """An EXTRACT_FN calling fn(main_e, src view, dst view), or NULL.
        An exception is kept on the main world (raised by App.update) and
        extracts nothing."""
        if fn is None:
            return None   # the descriptor's field stays NULL: copy
        f = fn
        src_type: Any = src.type if src is not None else None
        out_type: Any = dst_type
        parent = self.parent.world

        def call(main_e: int, sp: Optional[int], dp: Optional[int], user: Any) -> bool:
            # src and dst are weft's memory for this call only: checked
            # Views that raise once it has returned
            live = [True]
            alive = live.__getitem__
            try:
                s = View(src_type.from_address(sp), lambda: alive(0), "an extracted value") \
                    if src_type is not None and sp else None
                d = View(out_type.from_address(dp), lambda: alive(0), "an extraction target") \
                    if out_type is not None and dp else None
                return bool(f(int(main_e), s, d))
            except BaseException as exc:   # must not unwind into C
                parent._store(exc)
                return False
            finally:
                live[0] = False
        tramp = EXTRACT_FN(call)
        self._keep.append(tramp)
        return tramp

    def extract_component(self, main_component: ComponentRef, sub_component: ComponentRef,
                          transform: Optional[Transform] = None, changed_only: bool = False,
                          name: Optional[str] = None) -> int:
        """Every synced main entity's `main_component`, copied (or
        transformed; a false return removes it) onto its twin as
        `sub_component`; changed_only: only values changed since the
        previous extraction. Returns the system's node in the Extract
        schedule."""
        mc = self.parent.world.component_of(main_component)
        sc = self.world.component_of(sub_component)
        d = WeftExtractComponentDesc()
        bname = name.encode("utf-8") if name else None
        d.name = bname
        d.main_component = mc.id
        d.sub_component = sc.id
        tramp = self._transform(transform, mc, sc.type)
        if tramp is not None:
            d.transform = tramp
        d.changed_only = changed_only
        self.world._clear()
        node = _lib.weft_sub_app_extract_component(self._p(), ctypes.byref(d))
        if not node:
            self.world._raise_last()
        return int(node)

    def extract_resource(self, main_resource: ComponentRef, sub_resource: ComponentRef,
                         transform: Optional[Transform] = None,
                         name: Optional[str] = None) -> int:
        """`main_resource` copied (or transformed) into `sub_resource` when
        it changed since the previous extraction (or the sub-world lacks
        it); its removal removes it. Returns the system's node."""
        mc = self.parent.world.component_of(main_resource)
        sc = self.world.component_of(sub_resource)
        d = WeftExtractResourceDesc()
        bname = name.encode("utf-8") if name else None
        d.name = bname
        d.main_resource = mc.id
        d.sub_resource = sc.id
        tramp = self._transform(transform, mc, sc.type)
        if tramp is not None:
            d.transform = tramp
        self.world._clear()
        node = _lib.weft_sub_app_extract_resource(self._p(), ctypes.byref(d))
        if not node:
            self.world._raise_last()
        return int(node)

    def extract_instances(self, map_name: str, main_component: ComponentRef,
                          instance_type: Optional[type] = None,
                          transform: Optional[Transform] = None) -> Component:
        """Every main entity with `main_component` (synced or not) into a
        map resource `map_name` of the sub-world keyed by main entity, no
        sub-world entities made. instance_type: the ctypes type of an
        instance (default: the component's; with no transform the sizes
        must match). Returns the map resource; read it with instances()."""
        mc = self.parent.world.component_of(main_component)
        itype: Any = instance_type if instance_type is not None else mc.type
        if itype is None:
            raise TypeError("a tag has no instance type: give instance_type and a transform")
        d = WeftExtractInstancesDesc()
        bname = map_name.encode("utf-8")
        d.map_name = bname
        d.main_component = mc.id
        d.instance_size = ctypes.sizeof(itype)
        tramp = self._transform(transform, mc, itype)
        if tramp is not None:
            d.extract = tramp
        self.world._clear()
        cid = _lib.weft_sub_app_extract_instances(self._p(), ctypes.byref(d))
        comp = _adopt(self.world, cid, WeftInstanceMap, map_name)
        self._maps[comp.id] = itype
        return comp

    def instances(self, map_component: ComponentRef) -> Dict[int, Any]:
        """The instance map's entries as {main entity: instance (a copy)},
        in ascending entity order; {} before the first extraction."""
        comp = self.world.component_of(map_component)
        itype = self._maps.get(comp.id)
        if itype is None:
            raise ValueError("%s is no instance map of this sub-app" % comp.name)
        m = self.world.resource_get(comp)
        if m is None or m.count <= 0:
            return {}
        size = ctypes.sizeof(itype)
        base = m.values or 0
        return {int(m.keys[i]): itype.from_buffer_copy(
                    ctypes.string_at(base + i * size, size))
                for i in range(m.count)}

    def instance(self, map_component: ComponentRef, main_entity: Entity) -> Optional[Any]:
        """One entry of the instance map (a copy), or None."""
        comp = self.world.component_of(map_component)
        itype = self._maps.get(comp.id)
        if itype is None:
            raise ValueError("%s is no instance map of this sub-app" % comp.name)
        m = self.world.resource_get(comp)
        if m is None:
            return None
        p = _lib.weft_instance_map_get(ctypes.byref(m), main_entity)
        if not p:
            return None
        return itype.from_buffer_copy(ctypes.string_at(p, ctypes.sizeof(itype)))


def add_sub_app(app: "App", name: str, pipelined: bool = False,
                clear_every_frame: bool = False, share_threads: bool = False) -> SubApp:
    """App.add_sub_app."""
    d = WeftSubAppDesc()
    bname = name.encode("utf-8")
    d.name = bname
    d.pipelined = pipelined
    d.clear_every_frame = clear_every_frame
    d.share_threads = share_threads
    w = app.world
    w._clear()
    ptr = _lib.weft_app_add_sub_app(app._p(), ctypes.byref(d))
    if not ptr:
        w._raise_last()
    sub = SubApp(app, ptr, name)
    sub._pipelined = bool(pipelined)
    return sub

# bindings/python/weft/systems.py - what a Python system sees: query specs, system contexts and
# the failure plumbing of Python callbacks.
# SPDX-License-Identifier: MIT
"""What a Python system sees: query specs, system contexts and the failure
plumbing of Python callbacks."""

from __future__ import annotations

import ctypes
from threading import get_ident as _thread_id
from typing import TYPE_CHECKING, Any, Iterator, Optional, Sequence, Tuple

from ._abi import (
    ACCESS_NONE, ACCESS_READ, ACCESS_WRITE, ERR_ACCESS_VIOLATION, ERR_CALLBACK,
    ERR_IMMUTABLE, ERR_INVALID_ARG, ERR_OUT_OF_MEMORY, ERR_WRONG_PHASE, ERR_WRONG_THREAD, OK, OPER_WITH, OPER_WITHOUT,
    STATUS_NAMES, WeftIter,
)
from ._loader import _lib
from .errors import WeftError, _s, status_str
from .components import View, _checked_view, _copy, _owned, _view
from .queries import Chunk, write
from .commands import Commands

if TYPE_CHECKING:
    from ._typing import ComponentRef, Entity, TermLike
    from .state import State, StateRef


#: Status a system or condition fails with when it raises an exception that
#: is not a WeftError (a WeftError fails it with its own status, MemoryError
#: with WEFT_ERR_OUT_OF_MEMORY): WEFT_ERR_CALLBACK, "a user callback failed";
#: the message names the exception.
PYTHON_EXCEPTION_STATUS = ERR_CALLBACK


def _exc_text(exc):
    if isinstance(exc, WeftError):
        return exc.message or status_str(exc.status)
    text = str(exc)
    return "%s: %s" % (type(exc).__name__, text) if text else type(exc).__name__


class _Failure:
    """An exception a Python system or condition raised during a run."""

    __slots__ = ("exc", "kind", "name", "schedule")

    def __init__(self, exc, kind, name, schedule):
        self.exc = exc
        self.kind = kind
        self.name = name
        self.schedule = schedule


def _exc_status(exc):
    if isinstance(exc, WeftError) and exc.status != OK:
        return exc.status
    if isinstance(exc, MemoryError):
        return ERR_OUT_OF_MEMORY
    return PYTHON_EXCEPTION_STATUS


def _status_of(status):
    """A status given as a number, "WEFT_ERR_X" or "ERR_X"."""
    if isinstance(status, str):
        name = status if status.startswith("WEFT_") else "WEFT_" + status
        try:
            return STATUS_NAMES.index(name)
        except ValueError:
            raise ValueError("unknown status %r" % status) from None
    return int(status)


class QuerySpec:
    """The terms (and query flags) of one query of a system or condition;
    terms(...) builds one. A plain list or tuple of terms works as well."""

    __slots__ = ("terms", "flags")

    def __init__(self, terms: Sequence[TermLike], flags: int = 0) -> None:
        self.terms = tuple(terms)
        self.flags = flags


def terms(*ts: TermLike, flags: int = 0) -> QuerySpec:
    """One query of a system: terms(write(Position), read(Velocity))."""
    return QuerySpec(ts, flags)


_fast_system_iter = _lib._weft_fast["weft_system_iter"]
_iter_next = _lib.weft_iter_next


class _SystemQuery:
    """A system's query as Chunk sees it: resolved terms, and error hooks
    that leave the world's error slot alone (a system may run while C
    systems run on other threads); weft records a system's own misuse as
    the system's failure, which schedule.run() raises."""

    __slots__ = ("world", "terms", "index", "system", "_arrays", "_spare")

    def __init__(self, world, terms, index, system):
        self._arrays = {}   # term -> the last column array made (arrays.chunk_array)
        self._spare = None  # a finished iteration's WeftIter, for the next one
        self.world = world
        self.terms = terms
        self.index = index
        self.system = system

    def _clear(self):
        pass

    def _absent(self, chunk, term, row=None):
        if row is None and chunk.has(term):
            raise WeftError(ERR_ACCESS_VIOLATION, "term %d of query %d is present but "
                            "its field was refused" % (term, self.index), recorded=True)
        return None

    def _check(self, status):
        if status != OK:
            raise WeftError(status, "a chunk call on query %d failed" % self.index,
                            recorded=True)


class _SystemInfo:
    """What the binding knows of one system or condition it added."""

    __slots__ = ("name", "queries", "resources", "messages", "removed", "local",
                 "exclusive", "is_condition")

    def __init__(self, name):
        self.name = name
        self.queries = []       # _SystemQuery per query index
        self.resources = {}     # component id -> access
        self.messages = {}      # message type id -> (MessageType, access)
        self.removed = set()    # component ids whose removals it reads
        self.local = None       # ctypes type of the local state
        self.exclusive = False
        self.is_condition = False


class _SystemChunks:
    """The iterator SystemContext.iter returns (a class rather than a
    generator: this runs for every chunk of every Python system). Every
    step first checks the context (its run, its thread), so a step from
    elsewhere raises without advancing or ending the iteration; the
    iteration ends at its last chunk, at close(), or when the system
    returns."""

    __slots__ = ("_ctx", "_sq", "_it", "_ref", "_chunk", "_done")

    def __init__(self, ctx, sq):
        ptr = ctx._p()
        self._ctx = ctx
        self._sq = sq
        spare = sq._spare   # the iterator storage of the query's last finished iteration
        if spare is not None:
            sq._spare = None
            it, ref = spare
        else:
            it = WeftIter()
            ref = ctypes.byref(it)
        self._it = it
        self._ref = ref
        self._chunk = None
        self._done = True
        st = _fast_system_iter(ptr, sq.index, ref)
        if st != OK:
            raise WeftError(st, "weft_system_iter(%d) failed" % sq.index, recorded=True)
        self._done = False

    def __iter__(self):
        # A for loop steps a generator over the same state (cheaper per
        # step than __next__); next(g) on this object still goes through
        # __next__, which raises from a wrong thread without ending.
        return self._steps()

    def _steps(self):
        ctx = self._ctx
        sq = self._sq
        it = self._it
        ref = self._ref
        while True:
            if not ctx._ptr or _thread_id() != ctx._thread:
                ctx._p()   # raises WRONG_PHASE / WRONG_THREAD
            chunk = self._chunk
            if chunk is not None:
                chunk._lease.alive = False   # its arrays and views go stale
                self._chunk = None
            if self._done:
                return
            if _iter_next(ref):
                chunk = self._chunk = Chunk(sq, it, ref, ctx._thread)
                yield chunk
                continue
            self._done = True
            sq._spare = (it, ref)   # see __next__
            return

    def __next__(self):
        ctx = self._ctx
        if not ctx._ptr or _thread_id() != ctx._thread:
            ctx._p()   # raises WRONG_PHASE / WRONG_THREAD
        chunk = self._chunk
        if chunk is not None:
            chunk._lease.alive = False   # its arrays and views go stale
            self._chunk = None
        if self._done:
            raise StopIteration
        ref = self._ref
        if _iter_next(ref):
            chunk = self._chunk = Chunk(self._sq, self._it, ref, ctx._thread)
            return chunk
        self._done = True
        # ended: its storage serves the query's next iteration (a chunk
        # kept past its end checks its lease before touching it)
        self._sq._spare = (self._it, self._ref)
        raise StopIteration

    def close(self):
        """Ends the iteration early (what breaking out of the loop does)."""
        chunk = self._chunk
        if chunk is not None:
            chunk._end()
            self._chunk = None
        if not self._done:
            self._done = True
            ctx = self._ctx
            if ctx._ptr and self._sq.world._ptr and _thread_id() == ctx._thread:
                _lib.weft_iter_fini(self._ref)


class SystemContext:
    """What a Python system or condition receives; valid only during the
    call (its methods raise afterwards). Chunks, columns and views it hands
    out are valid at most as long (columns: until the next chunk)."""

    __slots__ = ("schedule", "_info", "_ptr", "_cmds", "_open", "_thread")

    def __init__(self, schedule, info, ptr, thread=None):
        self.schedule = schedule
        self._info = info
        self._ptr = ptr
        self._cmds = None
        self._open = None
        # the thread weft runs the system on (its trampoline passes it)
        self._thread = _thread_id() if thread is None else thread

    def _p(self):
        if not self._ptr:
            raise WeftError(ERR_WRONG_PHASE, "system context used after its system returned")
        if _thread_id() != self._thread:
            raise WeftError(ERR_WRONG_THREAD, "system context used from another thread than "
                            "the one running its system")
        return self._ptr

    def _live(self):
        """Whether the system's call is still running (for its views)."""
        return self._p() is not None if self._ptr else False

    def _close(self):
        # Ends iterations the system left open (a generator kept alive)
        # before control returns to weft.
        if self._open:
            for g in list(self._open):
                g.close()
        if self._cmds is not None:
            self._cmds._ptr = None
        self._ptr = None

    @property
    def world(self) -> Any:
        """The World, for exclusive systems only (WeftError WRONG_PHASE for
        others: they touch the world through the context)."""
        if not _lib.weft_system_world(self._p()):
            raise WeftError(ERR_WRONG_PHASE, "not an exclusive system: only exclusive "
                            "systems may use the world directly", recorded=True)
        return self.schedule.world

    @property
    def name(self) -> str:
        return _s(_lib.weft_system_name(self._p()))

    @property
    def delta(self) -> float:
        """dt passed to the run (the fixed step inside a frame's fixed
        schedule)."""
        return _lib.weft_system_delta(self._p())

    @property
    def this_run(self) -> int:
        return _lib.weft_system_this_run(self._p())

    @property
    def last_run(self) -> int:
        return _lib.weft_system_last_run(self._p())

    @property
    def worker(self) -> int:
        """The executor worker running the call (0 .. threads - 1)."""
        return _lib.weft_system_worker(self._p())

    @property
    def local(self) -> Any:
        """A view of the system's local state (the `local` ctypes type given
        to add_system; zeroed when the system was added), or None."""
        ptr = _lib.weft_system_local(self._p())
        if not ptr or self._info.local is None:
            return None
        return View(_view(self._info.local, ptr), self._live,
                    "the local state of %r" % self._info.name)

    @property
    def commands(self) -> Commands:
        """The system's command buffer (a Commands; applied at the next sync
        point). Conditions have none."""
        if self._cmds is None:
            ptr = _lib.weft_system_commands(self._p())
            if not ptr:
                raise WeftError(ERR_INVALID_ARG, "conditions have no command buffer")
            self._cmds = Commands(self.schedule.world, ptr, owned=False,
                                  schedule=self.schedule)
        return self._cmds

    def _query(self, query):
        qs = self._info.queries
        if not 0 <= query < len(qs):
            raise IndexError("%r has %d queries, no query %d" % (self._info.name, len(qs), query))
        return qs[query]

    def iter(self, query: int = 0) -> Iterator[Chunk]:
        """Chunks of the system's query number `query`, with this run's
        ticks (Added/Changed since the system's previous run). Columns are
        ctypes arrays of the component structs, as for Query.iter()."""
        g = _SystemChunks(self, self._query(query))
        if self._open is None:
            self._open = []
        self._open.append(g)   # ended when the system returns (_close)
        return g

    def each(self, query: int = 0) -> Iterator[Tuple[Any, ...]]:
        """(entity, field copies...) per row of query `query`."""
        sq = self._query(query)
        for chunk in self.iter(query):
            cols = []
            for i, t in enumerate(sq.terms):
                if t.access == ACCESS_NONE or t.oper in (OPER_WITH, OPER_WITHOUT) \
                        or t.component.type is None:
                    continue
                cols.append(chunk._column_raw(i, mark=False) if t.access == ACCESS_WRITE
                            else chunk._column_raw(i))
            ents = chunk._entities_raw()
            for r in range(chunk.count):
                chunk._live()
                yield (ents[r],) + tuple(
                    None if c is None else type(c[r]).from_buffer_copy(c[r]) for c in cols)

    def count(self, query: int = 0) -> int:
        """Entities matched by query `query` (filters ignored)."""
        sq = self._query(query)
        n = _lib.weft_system_count(self._p(), sq.index)
        if n < 0:
            raise WeftError(ERR_INVALID_ARG, "weft_system_count(%d) failed" % sq.index,
                            recorded=True)
        return n

    def get(self, query: int, e: Entity, term: int) -> Any:
        """Copy of term `term` of entity `e` through query `query`, or None
        when e does not match."""
        sq = self._query(query)
        comp = sq.terms[term].component
        ptr = _lib.weft_system_get(self._p(), sq.index, e, term, comp.size)
        return _copy(comp.type, ptr) if ptr else None

    def get_mut(self, query: int, e: Entity, term: int) -> Optional[View]:
        """Writable view of a WRITE term of `e` (marks it changed), or None
        when e does not match."""
        sq = self._query(query)
        comp = sq.terms[term].component
        ptr = _lib.weft_system_get_mut(self._p(), sq.index, e, term, comp.size)
        if not ptr:
            return None

        def resolve():
            # weft_system_get: the same lookup without the change mark
            p = self._ptr and self._p()
            return p and _lib.weft_system_get(p, sq.index, e, term, comp.size)
        return _checked_view(comp.type, ptr, "%s of entity %#x" % (comp.name, e), resolve)

    def _resource_comp(self, component, want_write):
        comp = self.schedule.world.component_of(component)
        access = self._info.resources.get(comp.id)
        if access is None or (want_write and access != ACCESS_WRITE):
            raise WeftError(ERR_ACCESS_VIOLATION, "resource %s is not declared %s"
                            % (comp.name, "WRITE" if want_write else "READ or WRITE"))
        return comp

    def state(self, state: State) -> Optional[str]:
        """The current value (name) of `state` (a weft.State), whose
        resource the system declared READ; None when it does not exist."""
        self._resource_comp(state.resource, False)
        v = ctypes.c_uint32()
        st = _lib.weft_system_state_get(self._p(), state.id, ctypes.byref(v))
        if st != 0:
            raise WeftError(st, "reading state %s failed" % state.name)
        return state.name_of(v.value)

    def set_next_state(self, state: State, value: StateRef) -> None:
        """Queues a transition of `state` to `value`; the system declared
        WRITE on state.next_resource. The last write before the transition
        step wins."""
        if state.next_resource is None:
            raise WeftError(ERR_IMMUTABLE, "state %s is computed: it cannot be set"
                            % state.name)
        self._resource_comp(state.next_resource, True)
        st = _lib.weft_system_state_set_next(self._p(), state.id, state.number(value))
        if st != 0:
            raise WeftError(st, "setting state %s failed" % state.name)

    def resource(self, component: ComponentRef) -> Any:
        """Copy of a resource the system declared (READ or WRITE), or None
        when it is absent."""
        comp = self._resource_comp(component, False)
        ptr = _lib.weft_system_resource(self._p(), comp.id, comp.size)
        return _copy(comp.type, ptr) if ptr else None

    def resource_mut(self, component: ComponentRef) -> Optional[View]:
        """Writable view of a resource declared WRITE (marks it changed),
        or None when it is absent."""
        comp = self._resource_comp(component, True)
        ptr = _lib.weft_system_resource_mut(self._p(), comp.id, comp.size)
        if not ptr:
            return None

        def resolve():
            p = self._ptr and self._p()
            return p and _lib.weft_system_resource(p, comp.id, comp.size)
        return _checked_view(comp.type, ptr, "resource %s" % comp.name, resolve)

    def _message(self, mtype, want_write):
        entry = self._info.messages.get(mtype.id)
        if entry is None or entry[1] != (ACCESS_WRITE if want_write else ACCESS_READ):
            raise WeftError(ERR_ACCESS_VIOLATION, "message %s is not declared %s"
                            % (mtype.name, "WRITE" if want_write else "READ"))

    def read(self, mtype: Any) -> Any:
        """Next unread message (a copy) of a type declared READ, or None."""
        self._message(mtype, False)
        ptr = _lib.weft_system_message_read(self._p(), mtype.id, ctypes.sizeof(mtype.type))
        return _copy(mtype.type, ptr) if ptr else None

    def messages(self, mtype: Any) -> Iterator[Any]:
        """Every unread message of a type declared READ (copies)."""
        while True:
            m = self.read(mtype)
            if m is None:
                return
            yield m

    def write(self, mtype: Any, msg: Any) -> None:
        """Writes a message of a type declared WRITE."""
        self._message(mtype, True)
        msg = _owned(msg)
        st = _lib.weft_system_message_write(self._p(), mtype.id, ctypes.addressof(msg),
                                            ctypes.sizeof(msg))
        if st != OK:
            raise WeftError(st, "writing a %s message failed" % mtype.name, recorded=True)

    write_message = write

    def removed(self, component: ComponentRef) -> Iterator[Entity]:
        """Entities that lost `component` (declared in add_system's
        `removed`) since this system last read them."""
        comp = self.schedule.world.component_of(component)
        if comp.id not in self._info.removed:
            raise WeftError(ERR_ACCESS_VIOLATION, "removals of %s are not declared" % comp.name)
        while True:
            e = _lib.weft_system_removed_read(self._p(), comp.id)
            if not e:
                return
            yield e

    def fail(self, status: Any, message: Optional[str] = None) -> None:
        """Marks this run failed with `status` (a number or a name such as
        "ERR_NOT_FOUND") and `message`; the system should then return.
        schedule.run() raises the first failure of the run as WeftError."""
        st = _status_of(status)
        if st == OK:
            raise ValueError("fail() needs a failure status, not OK")
        _lib.weft_system_fail(self._p(), st,
                              message.encode("utf-8") if message is not None else None)

    def __repr__(self):
        return "SystemContext(%r)" % self._info.name

# bindings/python/weft/queries.py - query terms, chunks and queries, and World.query().
# SPDX-License-Identifier: MIT
"""Query terms, chunks and queries, and World.query()."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Iterator, Optional, Tuple

from ._abi import (
    ACCESS_DEFAULT, ACCESS_NONE, ACCESS_READ, ACCESS_WRITE, ERR_INVALID_HANDLE, FILTER_ADDED,
    FILTER_CHANGED, FILTER_NONE, MAX_TERMS, OPER_AND, OPER_DEFAULT, OPER_OPTIONAL, OPER_OR,
    OPER_WITH, OPER_WITHOUT, WeftIter, WeftQueryDesc, c_entity,
)
from ._loader import _lib
from .errors import WeftError
from ._typing import _WorldInternals
from .components import Component, _LeasedView, _copy, _owned, _view
from .arrays import _Lease, chunk_array

if TYPE_CHECKING:
    from ._typing import ComponentRef, Entity, TermLike


class Term:
    """One query term: a component plus access, operator, filter bits and
    or-group (see weft_term)."""

    __slots__ = ("component", "access", "oper", "filter", "or_group")

    def __init__(self, component: Any, access: int = ACCESS_DEFAULT, oper: int = OPER_AND,
                 filter=FILTER_NONE, or_group=0):
        self.component = component
        self.access = access
        self.oper = oper
        self.filter = filter
        self.or_group = or_group


def read(c: ComponentRef, filter: int = FILTER_NONE) -> Term:
    """AND term with a read-only field."""
    return Term(c, ACCESS_READ, OPER_AND, filter)


def write(c: ComponentRef, filter: int = FILTER_NONE) -> Term:
    """AND term with a writable field."""
    return Term(c, ACCESS_WRITE, OPER_AND, filter)


def with_(c: ComponentRef, filter: int = FILTER_NONE) -> Term:
    """The entity must have `c`; no field."""
    return Term(c, ACCESS_NONE, OPER_WITH, filter)


def without(c: ComponentRef) -> Term:
    """The entity must not have `c`."""
    return Term(c, ACCESS_NONE, OPER_WITHOUT)


def optional(c: ComponentRef, write: bool = False) -> Term:
    """A field when present (None for chunks without it)."""
    return Term(c, ACCESS_WRITE if write else ACCESS_READ, OPER_OPTIONAL)


def or_(c: ComponentRef, group: int, write: bool = False, filter: int = FILTER_NONE) -> Term:
    """OR term: at least one term of `group` must be present."""
    return Term(c, ACCESS_WRITE if write else ACCESS_READ, OPER_OR, filter, group)


def Added(c: ComponentRef) -> Term:
    """Filter: `c` was added since the query's last completed run (no field)."""
    return Term(c, ACCESS_NONE, OPER_WITH, FILTER_ADDED)


def Changed(c: ComponentRef) -> Term:
    """Filter: `c` was written since the query's last completed run (no field)."""
    return Term(c, ACCESS_NONE, OPER_WITH, FILTER_CHANGED)


_iter_count = _lib._weft_fast["weft_iter_count"]


class Chunk:
    """One chunk of an iteration: `count` rows of one table. Every view it
    hands out (entities, columns, arrays) is zero-copy and valid only until
    the iteration moves to the next chunk or ends; the numpy arrays of
    array() check that before every use."""

    __slots__ = ("_query", "_it", "_ref", "count", "_lease")

    def __init__(self, query, it, ref=None, thread=None):
        self._query = query
        self._it = it
        self._ref = ref = ref if ref is not None else ctypes.byref(it)   # for the C calls
        self.count = _iter_count(ref)
        # `thread`: the iterating thread, when the caller has just checked it
        self._lease = _Lease(query.world, "a chunk", thread)

    def _live(self):
        """The lease of this chunk (its arrays, columns and views share it),
        after checking it: WeftError (INVALID_HANDLE) once the iteration
        has left the chunk, the system returned or the world closed."""
        lease = self._lease
        lease.check()
        return lease

    def _end(self):
        """The iteration leaves this chunk: what it handed out goes stale."""
        self._lease.end()

    @property
    def valid(self) -> bool:
        """Whether the chunk is still current (its columns usable)."""
        return self._lease.alive and bool(self._query.world._ptr)

    def _leased(self, obj, what):
        """A View over `obj` (a ctypes array or struct in the chunk's
        memory) that checks the chunk before every use."""
        return _LeasedView(obj, self._lease, what)

    # Chunk.array(term, mark=True, dtype=None): the function itself, not a
    # method calling it (one call less per column per chunk)
    array = chunk_array

    def __len__(self) -> int:
        return self.count

    @property
    def entities(self) -> Any:
        """The chunk's entities: a checked View of a uint64 ctypes array
        (indexing gives ints; it raises once the chunk is over). Copy it
        with list(chunk.entities) to keep it."""
        return self._leased(self._entities_raw(), "the entities of a chunk")

    def _entities_raw(self):
        self._live()
        if self.count == 0:
            return (c_entity * 0)()
        p = _lib.weft_iter_entities(self._ref)
        return (c_entity * self.count).from_address(ctypes.addressof(p.contents))

    def has(self, term: int) -> bool:
        self._live()
        return bool(_lib.weft_iter_has(self._ref, term))

    def _term(self, term):
        terms = self._query.terms
        if not 0 <= term < len(terms):
            raise IndexError("term %d out of range" % term)
        comp = terms[term].component
        if comp.type is None:
            raise TypeError("term %d (%s) is a tag: it has no field" % (term, comp.name))
        return terms[term], comp

    def column(self, term: int, mark: bool = True) -> Any:
        """Column of term `term`: a checked View of a ctypes array of the
        component struct (zero-copy: indexing reads and writes the table
        column), or None when an OPTIONAL/OR term is absent from this chunk.
        It raises WeftError (INVALID_HANDLE) once the iteration has moved
        to the next chunk or ended. WRITE terms come writable and, with
        `mark` (default), every row of the chunk is stamped changed; READ
        terms must only be read."""
        col = self._column_raw(term, mark)
        if col is None:
            return None
        return self._leased(col, "term %d of a chunk" % term)

    def _column_raw(self, term, mark=True):
        """column() without the View: the raw ctypes array (internal)."""
        t, comp = self._term(term)
        self._live()
        q = self._query
        q._clear()
        it = self._ref
        if t.access == ACCESS_WRITE:
            fn = _lib.weft_iter_field_mut if mark else _lib.weft_iter_field_mut_nomark
            ptr = fn(it, term, comp.size)
        else:
            ptr = _lib.weft_iter_field(it, term, comp.size)
        if not ptr:
            return q._absent(self, term)
        return (comp.type * self.count).from_address(ptr)

    def memoryview(self, term: int, mark: bool = True) -> Optional[memoryview]:
        """The column as a memoryview (read-only for READ terms)."""
        col = self._column_raw(term, mark)
        if col is None:
            return None
        mv = memoryview(col)
        if self._query.terms[term].access != ACCESS_WRITE:
            mv = mv.toreadonly()
        return mv

    def get(self, term: int, row: int) -> Any:
        """Copy of term `term` at `row` (table or sparse), None if absent."""
        t, comp = self._term(term)
        self._live()
        q = self._query
        q._clear()
        ptr = _lib.weft_iter_get(self._ref, term, row, comp.size)
        if not ptr:
            return q._absent(self, term, row)
        return _copy(comp.type, ptr)

    def get_mut(self, term: int, row: int) -> Any:
        """Writable view of a WRITE term at `row` (stamps it changed): a
        weft.View, valid while the chunk is current."""
        t, comp = self._term(term)
        self._live()
        q = self._query
        q._clear()
        ptr = _lib.weft_iter_get_mut(self._ref, term, row, comp.size)
        if not ptr:
            return q._absent(self, term, row)
        return self._leased(_view(comp.type, ptr), "term %d row %d of a chunk" % (term, row))

    def mark(self, term: int, row: int) -> None:
        self._live()
        self._query._check(_lib.weft_iter_mark(self._ref, term, row))

    def set_if_neq(self, term: int, row: int, value: Any) -> bool:
        """Writes `value` if it differs from the row's; returns whether it did."""
        _, comp = self._term(term)
        self._live()
        value = _owned(value)
        changed = ctypes.c_bool(False)
        self._query._check(_lib.weft_iter_set_if_neq(
            self._ref, term, row, ctypes.addressof(value),
            ctypes.sizeof(value), ctypes.byref(changed)))
        return changed.value


def _fill_query_desc(desc, terms, flags=0):
    """Fills a WeftQueryDesc from resolved Terms (see World._terms)."""
    if not 1 <= len(terms) <= MAX_TERMS:
        raise ValueError("a query takes 1..%d terms" % MAX_TERMS)
    for i, t in enumerate(terms):
        desc.terms[i].id = t.component.id
        desc.terms[i].access = t.access
        desc.terms[i].oper = t.oper
        desc.terms[i].filter = t.filter
        desc.terms[i].or_group = t.or_group
    desc.term_count = len(terms)
    desc.flags = flags


class _Chunks:
    """The iterator Query.iter and SystemContext.iter return: a generator
    of Chunks behind a check that runs before every step, so that a thread
    that may not use the world (or a context that has ended) raises without
    advancing, or ending, the iteration."""

    __slots__ = ("_gen", "_check", "__weakref__")

    def __init__(self, gen, check):
        self._gen = gen
        self._check = check

    def __iter__(self):
        return self

    def __next__(self):
        self._check()
        return next(self._gen)

    def close(self):
        """Ends the iteration early (what breaking out of the loop does)."""
        self._gen.close()


class Query:
    """A compiled query. Iterate it (`for chunk in query:`) for chunks;
    breaking out of the loop ends the iteration early (weft_iter_fini)."""

    def __init__(self, world, terms, flags=0):
        self._arrays = {}   # term -> the last column array made (arrays.chunk_array)
        self.world = world
        self.terms = terms
        desc = WeftQueryDesc()
        _fill_query_desc(desc, terms, flags)
        self._ptr = world._handle(_lib.weft_query_create(world._p(), ctypes.byref(desc)))
        world._queries.add(self)

    # Error-slot hooks used by Chunk (a system's queries use other ones).
    def _clear(self):
        self.world._clear()

    def _absent(self, chunk, term, row=None):
        self.world._check_slot()
        return None

    def _check(self, status):
        self.world._check(status)

    def destroy(self) -> None:
        if self._ptr and self.world._ptr:
            wp = self.world._p()
            p, self._ptr = self._ptr, None
            self.world._queries.discard(self)
            self.world._check(_lib.weft_query_destroy(wp, p))

    def __enter__(self) -> Query:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.destroy()

    def _p(self):
        if not self._ptr:
            raise WeftError(ERR_INVALID_HANDLE, "query destroyed")
        return self._ptr

    def iter(self) -> Iterator[Chunk]:
        """Iterator of Chunk objects. While it runs, structural calls are
        deferred and applied when it ends."""
        return _Chunks(self._iter(), self.world._p)

    def _iter(self):
        w = self.world
        it = WeftIter()
        w._check(_lib.weft_query_iter(w._p(), self._p(), ctypes.byref(it)))
        done = False
        chunk = None
        try:
            while _lib.weft_iter_next(ctypes.byref(it)):   # _Chunks checks the world first
                chunk = Chunk(self, it)
                yield chunk
                chunk._end()
            done = True
        finally:
            if chunk is not None:
                chunk._end()
            # a closed world took its iterations with it; a thread that may
            # not use the world (a collector) leaves it open rather than race
            if not done and w._ptr and w._may_call():
                _lib.weft_iter_fini(ctypes.byref(it))
            w._raise_pending()

    __iter__ = iter

    def each(self) -> Iterator[Tuple[Any, ...]]:
        """(entity, field copies...) per row; convenience, copies values."""
        for chunk in self.iter():
            cols = []
            for i, t in enumerate(self.terms):
                if t.access == ACCESS_NONE or t.oper in (OPER_WITH, OPER_WITHOUT) \
                        or t.component.type is None:
                    continue
                cols.append(chunk._column_raw(i, mark=False) if t.access == ACCESS_WRITE
                            else chunk._column_raw(i))
            ents = chunk._entities_raw()
            for r in range(chunk.count):
                chunk._live()   # the world may have closed while the caller held a row
                yield (ents[r],) + tuple(
                    None if c is None else type(c[r]).from_buffer_copy(c[r]) for c in cols)

    def count(self) -> int:
        n = _lib.weft_query_count(self.world._p(), self._p())
        if n < 0:
            self.world._raise_last()
        return n

    def __len__(self) -> int:
        return self.count()

    def is_empty(self) -> bool:
        return bool(_lib.weft_query_is_empty(self.world._p(), self._p()))

    def single(self) -> Entity:
        out = c_entity(0)
        self.world._check(_lib.weft_query_single(self.world._p(), self._p(),
                                                 ctypes.byref(out)))
        return out.value

    def matches(self, e: Entity) -> bool:
        return bool(_lib.weft_query_matches(self.world._p(), self._p(), e))

    def get(self, e: Entity, term: int) -> Any:
        """Copy of term `term` for entity `e` through the query (None when
        `e` does not match or the term is absent)."""
        comp = self.terms[term].component
        w = self.world
        w._clear()
        ptr = _lib.weft_query_get(w._p(), self._p(), e, term, comp.size)
        if not ptr:
            w._check_slot()
            return None
        return _copy(comp.type, ptr)

    @property
    def last_run(self) -> int:
        return _lib.weft_query_last_run(self.world._p(), self._p())

    @last_run.setter
    def last_run(self, tick: int) -> None:
        self.world._check(_lib.weft_query_set_last_run(self.world._p(), self._p(), tick))


class _QueriesWorld(_WorldInternals):
    """World methods for queries (a mixin of weft.World)."""

    # -- queries
    def query(self, *terms: TermLike, flags: int = 0) -> Query:
        """Compiles a query. Terms: a component/type (read AND term) or a
        Term from read/write/with_/without/optional/or_/Added/Changed.
        Added(c)/Changed(c) of a component that another term already lists
        merge into that term (its filter bits), so
        query(write(Position), Changed(Position)) is one term; term indices
        count the remaining terms in order."""
        return Query(self, self._terms(terms), flags)

    def _terms(self, terms):
        """Resolved, merged Terms of a query (see query())."""
        ts = []
        for t in terms:
            if not isinstance(t, Term):
                t = Term(t)
            else:
                t = Term(t.component, t.access, t.oper, t.filter, t.or_group)
            t.component = self.component_of(t.component)
            ts.append(t)
        merged = []
        for t in ts:
            if t.oper == OPER_WITH and t.access == ACCESS_NONE and t.filter:
                host = [o for o in ts if o is not t and o.component is t.component
                        and o.oper in (OPER_AND, OPER_DEFAULT, OPER_WITH, OPER_OR)]
                if host:
                    host[0].filter |= t.filter
                    continue
            merged.append(t)
        return merged

    def disabled(self) -> Component:
        """The built-in Disabled tag's Component."""
        cid = self._handle(_lib.weft_disabled(self._p()))
        if cid not in self._by_id:
            self._by_id[cid] = Component(self, cid, None, "weft.Disabled", 0, 0)
        return self._by_id[cid]

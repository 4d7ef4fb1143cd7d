# bindings/python/weft/schedules.py - schedules, nodes and run conditions, and the World methods
# for schedules and the executor.
# SPDX-License-Identifier: MIT
"""Schedules, nodes and run conditions, and the World methods for schedules,
the executor."""

from __future__ import annotations

import ctypes
from threading import get_ident as _thread_id
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence, Tuple, Union

from ._typing import _WorldInternals
from ._abi import (
    ACCESS_READ, ACCESS_WRITE, CONDITION_FN, ERR_INVALID_HANDLE, ERR_WRONG_PHASE,
    MAX_SYSTEM_QUERIES, NODE_SET, OK, ORDER_IGNORE_DEFERRED, SYSTEM_COMMANDS, SYSTEM_EXCLUSIVE,
    STEP_BREAK, STEP_DEFAULT, SYSTEM_FN, SYSTEM_MAIN_THREAD, WeftAmbiguity, WeftConditionDesc,
    WeftMessageUse, WeftQueryDesc, WeftResourceUse, WeftSystemDesc, WeftSystemStats, _vp,
    c_component,
)
from ._convert import check_int
from ._loader import _P, _lib
from .errors import WeftError, _s
from .components import _is_struct_type
from .queries import Term, _fill_query_desc
from .messages import MessageType
from .systems import (
    QuerySpec, SystemContext, _Failure, _SystemInfo, _SystemQuery, _exc_status, _exc_text,
)

if TYPE_CHECKING:
    from ._typing import ComponentRef, TermLike
    from .state import State, StateRef
    #: A schedule node: a Node, its id, or the name of a system, set or apply point.
    NodeRef = Union["Node", int, str]


def _is_c_function(fn):
    return isinstance(fn, (int, ctypes._CFuncPtr)) and not isinstance(fn, bool)


class Node:
    """A system, apply point or set of one schedule. int(node) is the
    weft_node. Ordering helpers return the node, so calls chain."""

    __slots__ = ("schedule", "id", "name")

    def __init__(self, schedule, nid, name):
        self.schedule = schedule
        self.id = nid
        self.name = name

    def __int__(self) -> int:
        return self.id

    __index__ = __int__

    def __eq__(self, other):
        return isinstance(other, Node) and other.schedule is self.schedule \
            and other.id == self.id

    def __hash__(self):
        return hash((id(self.schedule), self.id))

    @property
    def is_set(self) -> bool:
        return bool(self.id & NODE_SET)

    def before(self, *others: NodeRef, ignore_deferred: bool = False) -> Node:
        for o in others:
            self.schedule.add_order(self, o, ignore_deferred=ignore_deferred)
        return self

    def after(self, *others: NodeRef, ignore_deferred: bool = False) -> Node:
        for o in others:
            self.schedule.add_order(o, self, ignore_deferred=ignore_deferred)
        return self

    def in_set(self, *sets: NodeRef) -> Node:
        for st in sets:
            self.schedule.add_to_set(self, st)
        return self

    def run_if(self, *conditions: Any) -> Node:
        for c in conditions:
            self.schedule.add_condition(self, c)
        return self

    def ambiguous_with(self, *others: NodeRef) -> Node:
        for o in others:
            self.schedule.add_ambiguous_pair(self, o)
        return self

    @property
    def position(self):
        """Place in the built order (0-based), or -1."""
        return self.schedule.position(self)

    def stats(self):
        return self.schedule.system_stats(self)

    def __repr__(self):
        kind = "set" if self.is_set else "node"
        return "Node(%r, %s %d)" % (self.name, kind, self.id & ~NODE_SET)


class Condition:
    """A run condition owned by a schedule. Attach it once, with run_if()
    or inside one combinator: a & b (short circuit), a | b, ~a."""

    __slots__ = ("schedule", "_ptr", "name")

    def __init__(self, schedule, ptr, name):
        self.schedule = schedule
        self._ptr = ptr
        self.name = name

    def __and__(self, other: Condition) -> Condition:
        return self.schedule.and_(self, other)

    def __or__(self, other: Condition) -> Condition:
        return self.schedule.or_(self, other)

    def __invert__(self) -> Condition:
        return self.schedule.not_(self)

    def __repr__(self):
        return "Condition(%r)" % self.name


class Ambiguity:
    """Two conflicting systems with no declared order: `a` runs first (by
    registration). `components` lists the Components (or ids) they conflict
    on; empty when one of them is exclusive."""

    __slots__ = ("a", "b", "components")

    def __init__(self, a, b, components):
        self.a = a
        self.b = b
        self.components = components

    @property
    def names(self) -> Tuple[str, str]:
        return (self.a.name, self.b.name)

    def __repr__(self):
        comps = ", ".join(getattr(c, "name", str(c)) for c in self.components)
        return "Ambiguity(%r, %r: %s)" % (self.a.name, self.b.name, comps or "exclusive")


class Schedule:
    """A named, ordered collection of systems, owned by the world. Create
    it with World.schedule(name). It keeps every trampoline of its Python
    systems and conditions alive until it is destroyed (or the world is).

    Python systems are functions fn(ctx) taking a SystemContext. They are
    flagged WEFT_SYSTEM_MAIN_THREAD, so they run on the thread that called
    run() whatever the executor; C systems (add_system with a C function
    pointer) run on the pool beside them. An exception raised by a Python
    system or condition never unwinds into weft: the trampoline catches it
    and fails the run (weft_system_fail) with its text, and run() raises
    WeftError with the world's message, chained to the exception."""

    def __init__(self, world, ptr, name):
        self.world = world
        self.name = name
        self._ptr = ptr
        self._callbacks = []   # (CFUNCTYPE trampoline, python callable)
        self._nodes = {}       # weft_node -> Node
        self._by_name = {}     # name -> Node (systems, apply points, sets)
        self._systems = {}     # weft_node -> _SystemInfo

    def _p(self):
        if not self._ptr:
            raise WeftError(ERR_INVALID_HANDLE, "schedule %r destroyed" % self.name)
        self.world._p()   # the world's thread check
        return self._ptr

    def _forget(self):
        self._ptr = None
        self._callbacks.clear()

    def destroy(self):
        """Destroys the schedule (its systems, conditions and unapplied
        commands) and releases its trampolines."""
        if self._ptr and self.world._ptr:
            self.world._check(_lib.weft_schedule_destroy(self._p()))
            self.world._schedules.pop(self._ptr, None)
        self._forget()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()

    # -- nodes
    def _node(self, x):
        """weft_node of a Node, an int, or the name of a node added here."""
        if isinstance(x, Node):
            if x.schedule is not self:
                raise ValueError("node %r belongs to schedule %r" % (x.name, x.schedule.name))
            return x.id
        if isinstance(x, str):
            try:
                return self._by_name[x].id
            except KeyError:
                raise KeyError("schedule %r has no node named %r" % (self.name, x)) from None
        return int(x)

    def node(self, nid):
        """The Node for a weft_node number (or a name)."""
        nid = self._node(nid)
        n = self._nodes.get(nid)
        if n is None:
            n = Node(self, nid, _s(_lib.weft_schedule_node_name(self._p(), nid)))
            self._nodes[nid] = n
        return n

    def _add_node(self, nid, name):
        n = Node(self, nid, name)
        self._nodes[nid] = n
        self._by_name.setdefault(name, n)
        return n

    def _uses(self, items, what, lookup):
        """(ctypes array or None, count, {id: (obj, access)}) of resource or
        message uses; items are read(x)/write(x) terms or bare x (READ)."""
        items = list(items)
        out = {}
        for it in items:
            if isinstance(it, Term):
                if it.access not in (ACCESS_READ, ACCESS_WRITE):
                    raise ValueError("a %s use is read(x) or write(x)" % what)
                obj, access = lookup(it.component), it.access
            else:
                obj, access = lookup(it), ACCESS_READ
            if obj.id in out:
                raise ValueError("%s %s listed twice" % (what, obj.name))
            out[obj.id] = (obj, access)
        return out

    def _describe(self, desc, info, queries, resources, messages):
        """Fills the queries/resources/messages of a system or condition
        descriptor; returns the ctypes arrays to keep until the add call."""
        w = self.world
        keep = []
        specs = []
        for q in queries:
            if isinstance(q, QuerySpec):
                specs.append(q)
            elif isinstance(q, (list, tuple)):
                specs.append(QuerySpec(q))
            else:
                raise TypeError("each query is terms(...) or a list of terms, not %r" % (q,))
        if len(specs) > MAX_SYSTEM_QUERIES:
            raise ValueError("at most %d queries per system" % MAX_SYSTEM_QUERIES)
        if specs:
            arr = (WeftQueryDesc * len(specs))()
            for i, spec in enumerate(specs):
                ts = w._terms(spec.terms)
                _fill_query_desc(arr[i], ts, spec.flags)
                info.queries.append(_SystemQuery(w, ts, i, info.name))
            desc.queries = arr
            desc.query_count = len(specs)
            keep.append(arr)
        res = self._uses(resources, "resource", w.component_of)
        if res:
            arr = (WeftResourceUse * len(res))()
            for i, (cid, (comp, access)) in enumerate(res.items()):
                arr[i].id = cid
                arr[i].access = access
                info.resources[cid] = access
            desc.resources = arr
            desc.resource_count = len(res)
            keep.append(arr)

        def message_type(m):
            if not isinstance(m, MessageType):
                raise TypeError("not a MessageType: %r" % (m,))
            return m
        msgs = self._uses(messages, "message", message_type)
        if msgs:
            arr = (WeftMessageUse * len(msgs))()
            for i, (mid, (mt, access)) in enumerate(msgs.items()):
                arr[i].type = mid
                arr[i].access = access
                info.messages[mid] = (mt, access)
            desc.messages = arr
            desc.message_count = len(msgs)
            keep.append(arr)
        return keep

    def _system_fn(self, fn, info):
        """A SYSTEM_FN running the Python fn(ctx) (sub-apps' extract systems)."""
        return SYSTEM_FN(self._system_trampoline(fn, info))

    def _adopt_system(self, nid, name, info, cfn, pyfn):
        """Records a system added by another call (weft_sub_app_add_extract)."""
        self._callbacks.append((cfn, pyfn))
        self._systems[nid] = info
        return self._add_node(nid, name)

    def _system_trampoline(self, fn, info):
        world = self.world
        sched = self

        def tramp(ctx, user):
            # World._enter/_leave inlined (this runs for every system run)
            t = _thread_id()
            world._depth += 1
            cb = world._cb
            cb[t] = cb.get(t, 0) + 1
            world._in_system += 1
            c = None
            try:
                c = SystemContext(sched, info, ctx, t)
                fn(c)
            except BaseException as exc:   # must not unwind into C
                _fail_with(sched, info, ctx, exc)
            finally:
                try:
                    if c is not None:
                        c._close()
                except BaseException as exc:
                    _fail_with(sched, info, ctx, exc)
                world._in_system -= 1
                world._leave_on(t)
        return tramp

    def _condition_trampoline(self, fn, info):
        world = self.world
        sched = self

        def tramp(ctx, user):
            world._enter()
            world._in_system += 1
            c = None
            result = False
            try:
                c = SystemContext(sched, info, ctx)
                result = bool(fn(c))
            except BaseException as exc:   # must not unwind into C
                _fail_with(sched, info, ctx, exc)
                result = False
            finally:
                try:
                    if c is not None:
                        c._close()
                except BaseException as exc:
                    _fail_with(sched, info, ctx, exc)
                    result = False
                world._in_system -= 1
                world._leave()
            return result
        return tramp

    def add_system(self, fn: Any, name: Optional[str] = None,
                   queries: Sequence[Any] = (), resources: Sequence[Any] = (),
                   messages: Sequence[Any] = (), *, query: Optional[Sequence[TermLike]] = None,
                   exclusive: bool = False, commands: bool = False,
                   main_thread: Optional[bool] = None, flags: int = 0,
                   local: Optional[type] = None, user: Optional[int] = None,
                   query_groups: Optional[Sequence[int]] = None,
                   removed: Sequence[ComponentRef] = (), in_set: Optional[NodeRef] = None,
                   before: Any = (), after: Any = (), run_if: Any = None) -> Node:
        """Adds a system; returns its Node.

        fn: a Python callable fn(ctx) (ctx: SystemContext), or a C function
          (a ctypes function pointer or an address) of type weft_system_fn,
          called with `user`.
        queries: the system's queries by index, each terms(...) or a list of
          terms (read/write/with_/without/optional/or_/Added/Changed);
          `query=` gives a single one.
        resources / messages: read(x) or write(x) per resource component /
          MessageType (a bare one means READ).
        exclusive: runs alone and may use ctx.world (structural calls too).
        commands: records commands (a sync point is inserted before its
          declared successors when auto sync is on).
        main_thread: default True for Python systems (required: they must
          run on the thread holding the interpreter), False for C ones.
        local: a ctypes type for zeroed per-system state (ctx.local).
        query_groups: one int per query; queries sharing a non-zero group
          form a param set (they may conflict; iterate one at a time).
        removed: components whose removals the system reads (ctx.removed).
        in_set / before / after / run_if: shorthands for the Node methods."""
        if query is not None:
            queries = [query] + list(queries)
        is_c = _is_c_function(fn)
        if name is None:
            name = getattr(fn, "__name__", None)
            if not name or is_c:
                raise ValueError("a C system needs a name")
        info = _SystemInfo(name)
        info.exclusive = exclusive
        desc = WeftSystemDesc()
        bname = name.encode("utf-8")
        desc.name = bname
        keep = self._describe(desc, info, queries, resources, messages)
        if main_thread is None:
            main_thread = not is_c
        if not is_c and not main_thread:
            raise ValueError("Python systems run on the main thread (main_thread=False "
                             "is for C systems)")
        flags |= (SYSTEM_EXCLUSIVE if exclusive else 0) \
            | (SYSTEM_MAIN_THREAD if main_thread else 0) \
            | (SYSTEM_COMMANDS if commands else 0)
        desc.flags = flags
        if query_groups is not None:
            groups = list(query_groups)
            if len(groups) != len(info.queries):
                raise ValueError("query_groups needs one group per query (%d), got %d"
                                 % (len(info.queries), len(groups)))
            arr = (ctypes.c_int32 * max(1, len(groups)))(
                *[check_int(ctypes.c_int32, g, "query group") for g in groups])
            desc.query_groups = arr
            keep.append(arr)
        rcomps = [self.world.component_of(c) for c in removed]
        if rcomps:
            rarr = (c_component * len(rcomps))(*[c.id for c in rcomps])
            desc.removed = rarr
            desc.removed_count = len(rcomps)
            keep.append(rarr)
            info.removed = {c.id for c in rcomps}
        if local is not None:
            if not _is_struct_type(local):
                raise TypeError("local is a ctypes.Structure subclass")
            desc.local.size = ctypes.sizeof(local)
            desc.local.align = ctypes.alignment(local)
            info.local = local
        if is_c:
            cfn = fn if isinstance(fn, SYSTEM_FN) else SYSTEM_FN(
                fn if isinstance(fn, int) else ctypes.cast(fn, _vp).value)  # type: ignore[arg-type]
            if user is not None and not isinstance(user, int):
                user_obj, user = user, ctypes.cast(user, _vp).value
                pyfn = (fn, user_obj)   # keeps the user object alive too
            else:
                pyfn = fn
            desc.user = user
        else:
            if user is not None:
                raise ValueError("user is for C systems; Python systems use closures")
            cfn = SYSTEM_FN(self._system_trampoline(fn, info))
            pyfn = fn
        desc.fn = cfn
        nid = self.world._handle(_lib.weft_schedule_add_system(self._p(), ctypes.byref(desc)))
        del keep
        self._callbacks.append((cfn, pyfn))
        self._systems[nid] = info
        node = self._add_node(nid, name)
        if in_set is not None:
            node.in_set(*(in_set if isinstance(in_set, (list, tuple)) else (in_set,)))
        node.before(*(before if isinstance(before, (list, tuple)) else (before,)))
        node.after(*(after if isinstance(after, (list, tuple)) else (after,)))
        if run_if is not None:
            node.run_if(*(run_if if isinstance(run_if, (list, tuple)) else (run_if,)))
        return node

    def system(self, *args: Any, **kwargs: Any) -> Any:
        """Decorator form of add_system: @schedule.system(query=[...]).
        The decorated name is bound to the system's Node."""
        if len(args) == 1 and callable(args[0]) and not kwargs \
                and not isinstance(args[0], (list, tuple, QuerySpec)):
            return self.add_system(args[0])

        def deco(fn):
            return self.add_system(fn, *args, **kwargs)
        return deco

    def add_apply_point(self, name: str) -> Node:
        """Adds an explicit apply point (commands of every system before it
        are applied when it runs)."""
        nid = self.world._handle(_lib.weft_schedule_add_apply_point(self._p(),
                                                                    name.encode("utf-8")))
        return self._add_node(nid, name)

    def ensure_set(self, name: str) -> Node:
        """The set named `name` (created on first use)."""
        nid = self.world._handle(_lib.weft_schedule_ensure_set(self._p(), name.encode("utf-8")))
        n = self._nodes.get(nid)
        return n if n is not None else self._add_node(nid, name)

    def add_to_set(self, node: NodeRef, set_: NodeRef) -> None:
        self.world._check(_lib.weft_schedule_add_to_set(self._p(), self._node(node),
                                                        self._node(set_)))

    def add_order(self, before: NodeRef, after: NodeRef, ignore_deferred: bool = False) -> None:
        """`before` finishes before `after` starts (nodes or sets)."""
        self.world._check(_lib.weft_schedule_add_order(
                self._p(), self._node(before), self._node(after),
                ORDER_IGNORE_DEFERRED if ignore_deferred else 0))

    def add_chain(self, *nodes: NodeRef, ignore_deferred: bool = False) -> None:
        """Orders nodes[0] before nodes[1] before ..."""
        if len(nodes) == 1 and isinstance(nodes[0], (list, tuple)):
            nodes = nodes[0]
        arr = (ctypes.c_uint32 * max(1, len(nodes)))(*[self._node(n) for n in nodes])
        self.world._check(_lib.weft_schedule_add_chain(
                self._p(), arr, len(nodes), ORDER_IGNORE_DEFERRED if ignore_deferred else 0))

    def add_ambiguous_pair(self, a: NodeRef, b: NodeRef) -> None:
        """a and b may run in either order: left out of the ambiguity report."""
        self.world._check(_lib.weft_schedule_add_ambiguous_pair(self._p(), self._node(a),
                                                                self._node(b)))

    def add_ambiguous_component(self, component: ComponentRef) -> None:
        """Leaves a component or resource out of the ambiguity report."""
        self.world._check(_lib.weft_schedule_add_ambiguous_component(
                   self._p(), self.world.component_of(component).id))

    def set_auto_sync(self, on: bool) -> None:
        self.world._check(_lib.weft_schedule_set_auto_sync(self._p(), bool(on)))

    def set_apply_final(self, on: bool) -> None:
        self.world._check(_lib.weft_schedule_set_apply_final(self._p(), bool(on)))

    def set_profiling(self, on: bool) -> None:
        """Records per-system times (stats total_ns/last_ns, trace_json)."""
        self.world._check(_lib.weft_schedule_set_profiling(self._p(), bool(on)))

    def apply_pending(self) -> None:
        """Applies every queued command of the schedule's systems."""
        self.world._check(_lib.weft_schedule_apply_pending(self._p()))

    # -- stepping (a system-level debugger; weft_schedule_set_stepping)
    @property
    def stepping(self) -> bool:
        """Whether stepping is on: a run then runs only not-steppable
        systems (SYSTEM_NOT_STEPPABLE, STEP_ALWAYS_RUN) and what step() or
        continue_() asked for."""
        return bool(_lib.weft_schedule_is_stepping(self._p()))

    @stepping.setter
    def stepping(self, on: bool) -> None:
        self.world._check(_lib.weft_schedule_set_stepping(self._p(), bool(on)))

    def step(self) -> None:
        """The next run runs one system: the next steppable one in
        schedule order (from the start after the last)."""
        self.world._check(_lib.weft_schedule_step(self._p()))

    def continue_(self) -> None:
        """The next run runs the steppable systems from the cursor to the
        end, stopping before the next breakpoint."""
        self.world._check(_lib.weft_schedule_continue(self._p()))

    def set_step_behavior(self, node: NodeRef, behavior: int) -> None:
        """STEP_DEFAULT, STEP_ALWAYS_RUN, STEP_NEVER_RUN or STEP_BREAK for a
        system (a Node, its number or its name)."""
        self.world._check(_lib.weft_schedule_set_step_behavior(
            self._p(), self._node(node), behavior))

    def set_breakpoint(self, node: NodeRef, on: bool = True) -> None:
        """A breakpoint on a system (continue_() stops before it), or none."""
        self.set_step_behavior(node, STEP_BREAK if on else STEP_DEFAULT)

    @property
    def step_cursor(self) -> Optional[Node]:
        """The Node the next step would run, or None."""
        nid = _lib.weft_schedule_step_cursor(self._p())
        return self.node(nid) if nid else None

    # -- run conditions
    def _cond(self, ptr, name):
        return Condition(self, self.world._handle(ptr), name)

    def _as_condition(self, c, name=None):
        if isinstance(c, Condition):
            if c.schedule is not self:
                raise ValueError("condition %r belongs to schedule %r"
                                 % (c.name, c.schedule.name))
            return c
        if callable(c):
            fname = getattr(c, "__name__", None)
            if fname and fname != "<lambda>":
                name = fname
            return self.condition(c, name=name)
        raise TypeError("not a condition: %r" % (c,))

    def condition(self, fn: Callable[[SystemContext], Any], name: Optional[str] = None,
                  queries: Sequence[Any] = (), resources: Sequence[Any] = (),
                  messages: Sequence[Any] = (), *,
                  query: Optional[Sequence[TermLike]] = None) -> Condition:
        """A condition written in Python: fn(ctx) -> bool, read-only
        (queries, resources and messages must be READ). An exception fails
        the run (raised by run()) and counts as False."""
        if query is not None:
            queries = [query] + list(queries)
        name = name or str(getattr(fn, "__name__", "condition"))
        info = _SystemInfo(name)
        info.is_condition = True
        desc = WeftConditionDesc()
        bname = name.encode("utf-8")
        desc.name = bname
        keep = self._describe(desc, info, queries, resources, messages)
        cfn = CONDITION_FN(self._condition_trampoline(fn, info))
        desc.fn = cfn
        ptr = self.world._handle(_lib.weft_condition_create(self._p(), ctypes.byref(desc)))
        del keep
        self._callbacks.append((cfn, fn))
        return Condition(self, ptr, name)

    def run_once(self) -> Condition:
        """True the first time it is evaluated, false after."""
        return self._cond(_lib.weft_condition_run_once(self._p()), "run_once")

    def resource_changed(self, component: ComponentRef) -> Condition:
        """True when the resource exists and was inserted or written since
        this condition last evaluated."""
        c = self.world.component_of(component)
        return self._cond(_lib.weft_condition_resource_changed(self._p(), c.id),
                          "resource_changed(%s)" % c.name)

    def resource_exists(self, component: ComponentRef) -> Condition:
        c = self.world.component_of(component)
        return self._cond(_lib.weft_condition_resource_exists(self._p(), c.id),
                          "resource_exists(%s)" % c.name)

    def on_message(self, mtype: Any) -> Condition:
        """True when messages of `mtype` arrived that it has not seen."""
        return self._cond(_lib.weft_condition_on_message(self._p(), mtype.id),
                          "on_message(%s)" % mtype.name)

    def in_state(self, state: State, value: StateRef) -> Condition:
        """True while `state` (a weft.State) exists and has `value`."""
        v = state.number(value)
        return self._cond(_lib.weft_condition_in_state(self._p(), state.id, v),
                          "in_state(%s::%s)" % (state.name, state.names[v]))

    def state_exists(self, state: State) -> Condition:
        """True while `state` exists."""
        return self._cond(_lib.weft_condition_state_exists(self._p(), state.id),
                          "state_exists(%s)" % state.name)

    def state_changed(self, state: State) -> Condition:
        """True when `state` exists and changed (or appeared) since this
        condition last evaluated."""
        return self._cond(_lib.weft_condition_state_changed(self._p(), state.id),
                          "state_changed(%s)" % state.name)

    def and_(self, a: Condition, b: Condition, eager: bool = False) -> Condition:
        """a AND b (b evaluated only when a is true, unless eager)."""
        a, b = self._as_condition(a), self._as_condition(b)
        fn = _lib.weft_condition_and_eager if eager else _lib.weft_condition_and
        return self._cond(fn(self._p(), a._ptr, b._ptr), "(%s and %s)" % (a.name, b.name))

    def or_(self, a: Condition, b: Condition) -> Condition:
        """a OR b (b evaluated only when a is false)."""
        a, b = self._as_condition(a), self._as_condition(b)
        return self._cond(_lib.weft_condition_or(self._p(), a._ptr, b._ptr),
                          "(%s or %s)" % (a.name, b.name))

    def not_(self, a: Condition) -> Condition:
        a = self._as_condition(a)
        return self._cond(_lib.weft_condition_not(self._p(), a._ptr), "not %s" % a.name)

    def add_condition(self, node: NodeRef, condition: Any) -> None:
        """Attaches a Condition (or a Python callable, made a condition) to
        a system or set. Every condition of a node must be true."""
        nid = self._node(node)
        c = self._as_condition(condition, name="run_if(%s)" % self.node(nid).name)
        self.world._check(_lib.weft_schedule_add_condition(self._p(), nid, c._ptr))
        return c

    # -- build and run
    def build(self) -> None:
        """Builds now (run() builds when something changed). Raises
        WeftError SCHEDULE_CYCLE naming the nodes of a cycle."""
        self.world._check(_lib.weft_schedule_build(self._p()))

    @property
    def build_count(self) -> int:
        return _lib.weft_schedule_build_count(self._p())

    def run(self, dt: float = 0.0) -> None:
        """Runs every system once with delta time `dt`, on the world's
        executor. Every system runs even when one fails; afterwards the
        first failure is raised as WeftError carrying the world's message
        (chained to the exception when a Python system raised one)."""
        w = self.world
        p = self._p()   # checks the world too
        outer, w._system_exc = w._system_exc, None
        try:
            status = _lib.weft_schedule_run(p, dt)
            failures = w._system_exc
        finally:
            w._system_exc = outer
        if status != OK or failures or w._pending is not None:
            w._finish_run(status, failures)

    # -- inspection
    @property
    def node_count(self) -> int:
        """Systems and apply points added (nodes 1 .. node_count)."""
        return _lib.weft_schedule_node_count(self._p())

    def nodes(self):
        """Nodes of every system and apply point, in the order added."""
        return [self.node(i) for i in range(1, self.node_count + 1)]

    def node_name(self, node: NodeRef) -> str:
        return _s(_lib.weft_schedule_node_name(self._p(), self._node(node)))

    def position(self, node):
        """Place of a system or apply point in the built order, or -1."""
        return _lib.weft_schedule_position(self._p(), self._node(node))

    def order_of(self) -> List[str]:
        """Names of the systems and apply points in built order (empty when
        not built)."""
        placed = [(self.position(n), n) for n in self.nodes()]
        return [n.name for pos, n in sorted(placed, key=lambda x: x[0]) if pos >= 0]

    @property
    def sync_count(self) -> int:
        """Sync points in the built schedule, or -1."""
        return _lib.weft_schedule_sync_count(self._p())

    def has_edge(self, before: NodeRef, after: NodeRef) -> bool:
        return bool(_lib.weft_schedule_has_edge(self._p(), self._node(before),
                                                self._node(after)))

    def ambiguities(self) -> List[Ambiguity]:
        """Ambiguity list of the last build (WeftError when not built)."""
        n = _lib.weft_schedule_ambiguity_count(self._p())
        if n < 0:
            raise WeftError(ERR_WRONG_PHASE, "schedule %r is not built" % self.name)
        out = []
        w = self.world
        for i in range(n):
            a = WeftAmbiguity()
            w._check(_lib.weft_schedule_ambiguity(self._p(), i, ctypes.byref(a)))
            comps = [w._by_id.get(a.components[k], a.components[k])
                     for k in range(a.component_count)]
            out.append(Ambiguity(self.node(a.a), self.node(a.b), comps))
        return out

    def system_stats(self, node: NodeRef) -> Any:
        """A WeftSystemStats (runs, skipped, failures, total_ns, last_ns)."""
        st = WeftSystemStats()
        self.world._check(_lib.weft_schedule_system_stats(self._p(), self._node(node),
                                                          ctypes.byref(st)))
        return st

    @property
    def max_concurrency(self) -> int:
        """Most systems seen running at once during the last run."""
        return _lib.weft_schedule_max_concurrency(self._p())

    def _text(self, fn):
        p = self._p()
        n = fn(p, None, 0)
        if n == 0:
            return ""
        buf = ctypes.create_string_buffer(n + 1)
        fn(p, buf, n + 1)
        return buf.value.decode("utf-8", "replace")

    def trace_json(self) -> str:
        """The last run as Chrome trace-event JSON (needs profiling on)."""
        return self._text(_lib.weft_schedule_trace_json)

    def dot(self) -> str:
        """The built schedule as Graphviz DOT ("" when not built)."""
        return self._text(_lib.weft_schedule_dot)

    def __repr__(self):
        return "Schedule(%r)" % self.name


def _fail_with(sched, info, ctx, exc):
    """Fails the running system or condition with a caught exception and
    keeps it for run() to chain. A WeftError weft recorded itself already
    fails the run, with weft's own message, through the run's error sink.
    Never raises."""
    try:
        world = sched.world
        if world._system_exc is None:
            world._system_exc = []
        world._system_exc.append(_Failure(exc, "condition" if info.is_condition else "system",
                                          info.name, sched.name))
        if not (isinstance(exc, WeftError) and exc.recorded):
            _lib.weft_system_fail(ctx, _exc_status(exc),
                                  _exc_text(exc).encode("utf-8", "replace"))
    except BaseException:
        pass


class _SchedulesWorld(_WorldInternals):
    """World methods for schedules (a mixin of weft.World)."""

    # -- schedules, executor
    def schedule(self, name: str) -> Schedule:
        """Creates an empty Schedule named `name` (WeftError
        ALREADY_EXISTS when the name is taken; see schedule_lookup)."""
        ptr = self._handle(_lib.weft_schedule_create(self._p(), name.encode("utf-8")))
        sch = Schedule(self, ptr, name)
        self._schedules[ptr] = sch
        return sch

    def schedule_lookup(self, name: str) -> Optional[Schedule]:
        """The Schedule named `name`, or None."""
        ptr = _lib.weft_schedule_lookup(self._p(), name.encode("utf-8"))
        if not ptr:
            return None
        sch = self._schedules.get(ptr)
        if sch is None:   # created from C: no Python systems in it
            sch = self._schedules[ptr] = Schedule(self, ptr, name)
        return sch

    def schedules(self) -> List[Schedule]:
        """The Schedules created or looked up through this World."""
        return list(self._schedules.values())

    def set_threads(self, threads: int) -> None:
        """Sets the executor: 0 or 1 runs schedules single-threaded on the
        calling thread; n > 1 starts a pool of n - 1 workers (the caller is
        the last); n < 0 one worker per CPU. Python systems still run on
        the calling thread (they are WEFT_SYSTEM_MAIN_THREAD); C systems
        added with add_system(c_function) run on the pool beside them."""
        self._check(_lib.weft_world_set_threads(self._p(), threads))

    @property
    def threads(self):
        """Workers of the current executor (1: single-threaded)."""
        return _lib.weft_world_threads(self._p())

    def _finish_run(self, status, failures):
        """Raises what a schedule run or app update left: an exception of an
        observer or hook first (as itself); then the run's failure as
        WeftError with the world's message, chained to the exception of the
        Python system it names; then an exception of a Python condition
        (weft counts a failing condition as false; older libraries did not
        report it, so the binding still does when the run returned OK).
        KeyboardInterrupt, SystemExit and the like are re-raised as
        themselves."""
        self._raise_pending()
        failures = failures or []
        for f in failures:
            if not isinstance(f.exc, Exception):
                raise f.exc
        if status != OK:
            msg = _s(_lib.weft_last_error(self._ptr))
            cause = None
            for f in failures:
                if f.kind == "system" and ("schedule '%s': system '%s' failed"
                                           % (f.schedule, f.name)) in msg:
                    cause = f.exc
                    break
            if cause is None and failures:
                cause = failures[0].exc
            raise WeftError(status, msg, recorded=True) from cause
        if failures:
            f = failures[0]
            what = "condition" if f.kind == "condition" else "system"
            raise WeftError(_exc_status(f.exc), "schedule '%s': %s '%s' failed: %s%s"
                            % (f.schedule, what, f.name, _exc_text(f.exc),
                               " (it counted as false)" if f.kind == "condition" else ""),
                            recorded=True) from f.exc

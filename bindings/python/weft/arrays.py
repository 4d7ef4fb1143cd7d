# bindings/python/weft/arrays.py - chunk columns as zero-copy numpy structured arrays that check, on every use, that their chunk is still current (Chunk.array).
# SPDX-License-Identifier: MIT
"""Chunk columns as zero-copy numpy structured arrays (Chunk.array).

numpy is optional: it is imported on the first Chunk.array call, which
raises ImportError when it is missing; nothing else in the binding needs it.

A numpy array cannot be invalidated: it keeps its data pointer for as long
as it lives. The world's column memory, though, lasts only until the next
structural change after the chunk. So the arrays handed out are of a
subclass, ColumnArray, that keeps a lease on its chunk and checks it before
every operation that reads or writes the memory: item and field access,
arithmetic and comparisons, ufuncs, numpy functions (through
__array_ufunc__ and __array_function__), every ndarray method, printing,
iteration. Once the chunk is over (the iteration moved on or ended, the
system returned, the world closed), each of them raises
WeftError(WEFT_ERR_INVALID_HANDLE) before touching the memory.

Every array derived from a column that still points into the world's
memory (a field a["x"], a slice, a transpose, a reshape, a row a[i]) finds
the lease through its base chain, which numpy always ends at the exporter
object created here, and is a ColumnArray with the same check. Results in
new memory (a copy, a + 1, np.sum) come back as plain ndarrays: they are
the caller's and stay valid. A row of a structured column comes back as a
0-d ColumnArray rather than a numpy.void, because a void scalar of a
structured array is a view that numpy would let outlive the chunk.

Explicit conversions to a plain array (np.asarray(a), a.view(np.ndarray),
memoryview(a), a.base, a.ctypes, a.__array_interface__) hand out the raw
memory, as taking the address would: they are checked when made and not
afterwards, so use them only inside the chunk."""

from __future__ import annotations

import ctypes
from threading import get_ident as _thread_id
from typing import Any, Dict

from ._abi import ACCESS_WRITE, ERR_ACCESS_VIOLATION, ERR_INVALID_HANDLE, ERR_SIZE_MISMATCH
from ._loader import _lib
from .errors import WeftError

_state: Dict[str, Any] = {}   # "np": the numpy module, "cls": ColumnArray, once built
_dtypes: Dict[type, Any] = {}  # ctypes type -> numpy dtype
_shape_of: Any = None          # ndarray.shape's getter, once numpy is imported
_dtype_get: Any = None         # ndarray.dtype's getter


def _numpy():
    """The numpy module, or ImportError saying what needs it."""
    np = _state.get("np")
    if np is not None:
        return np
    try:
        import numpy as np
    except ImportError as exc:
        raise ImportError(
            "weft: Chunk.array returns numpy arrays, and numpy is not installed "
            "(Debian: apt-get install python3-numpy; a venv made with "
            "--system-site-packages sees it). Chunk.column gives the same "
            "zero-copy column as a ctypes array without numpy.") from exc
    _state["np"] = np
    global _shape_of, _dtype_get
    _shape_of = np.ndarray.shape.__get__
    _dtype_get = np.ndarray.dtype.__get__
    _state["cls"] = _build_class(np)
    return np


def column_array_type() -> type:
    """The ColumnArray class (imports numpy; ImportError without it)."""
    _numpy()
    return _state["cls"]


class _Lease:
    """Validity of the arrays of one chunk: live until end(), and while the
    world is open."""

    __slots__ = ("alive", "world", "what", "thread")

    def __init__(self, world, what, thread=None):
        self.alive = True
        self.world = world
        self.what = what
        # the thread iterating (World._p, or the system's context, allowed it)
        self.thread = _thread_id() if thread is None else thread

    def end(self):
        self.alive = False

    def live(self):
        """Whether the chunk is current; WeftError (WRONG_THREAD) from a
        thread that may not use the world (World._p)."""
        if not self.alive or not self.world._ptr:
            return False
        if _thread_id() != self.thread:
            self.world._p()
        return True

    def check(self):
        if self.alive and self.world._ptr and _thread_id() == self.thread:
            return   # the common case, without a call
        if not self.live():
            raise WeftError(ERR_INVALID_HANDLE,
                            "stale column array of %s: its chunk is over (arrays last "
                            "until the iteration moves to the next chunk or ends); "
                            "copy what must outlive it (a.copy())" % self.what)


class _Exporter:
    """What numpy keeps as the base of a column array: the memory as an
    array interface (read-only for READ terms), and the lease. Every array
    numpy derives from that memory ends its base chain here."""

    __slots__ = ("__array_interface__", "lease", "readonly", "what")

    def __init__(self, addr, count, itemsize, readonly, lease, what):
        self.__array_interface__ = {"data": (addr, readonly), "shape": (count,),
                                    "typestr": "|V%d" % itemsize, "version": 3}
        self.lease = lease
        self.readonly = readonly
        self.what = what


def _dtype_of(np, comp):
    """numpy dtype of a component's ctypes structure (fields, offsets,
    nested structs and arrays; itemsize = ctypes.sizeof)."""
    dt = _dtypes.get(comp.type)
    if dt is None:
        try:
            dt = np.dtype(comp.type)
        except (TypeError, ValueError, NotImplementedError) as exc:
            raise TypeError("component %s: its ctypes type has no numpy dtype (%s); "
                            "pass dtype= to Chunk.array" % (comp.name, exc)) from None
        _dtypes[comp.type] = dt
    return dt


def chunk_array(chunk: Any, term: int, mark: bool = True, dtype: Any = None) -> Any:
    """Column of term `term` as a zero-copy numpy structured array whose
    dtype is the component's ctypes structure (a["x"] is a field), or
    None when an OPTIONAL/OR term is absent from this chunk.

    READ terms give read-only arrays (writeable=False; writing raises
    WeftError ACCESS_VIOLATION). WRITE terms give writable ones and, with
    `mark` (default), stamp every row of the chunk changed when asked,
    as weft_iter_field_mut does. `dtype` replaces the structure's dtype
    (its itemsize must be the component's size: WeftError
    SIZE_MISMATCH otherwise).

    The array is a weft.ColumnArray, a numpy subclass that checks before
    every use that the chunk is still current: once the iteration has
    moved on or ended, using it (or any view of it) raises WeftError
    INVALID_HANDLE instead of reading memory the world may have freed.
    Copies (a.copy(), a["x"] * 2, np.sum(a["x"])) are plain arrays and
    stay valid. Needs numpy: ImportError without it (column() gives the
    same memory as a ctypes array)."""
    # The short path, for a system asking again what it asked in its
    # previous run (same term, dtype object and mark, the same memory):
    # one C call (which also stamps the change ticks), the lease, done.
    q = chunk._query
    ent = q._arrays.get(term)
    if ent is not None and ent[2] is dtype and ent[8] is mark:
        lease = chunk._lease
        if not (lease.alive and lease.world._ptr and _thread_id() == lease.thread):
            lease.check()
        ptr = ent[9](chunk._ref, term, ent[10])
        arr = ent[4]
        if ptr == ent[0] and chunk.count == ent[1] and _shape_of(arr) == ent[6] \
                and _dtype_get(arr) is ent[7]:
            ent[5].lease = lease
            arr._weft_lease = lease
            return arr
        if not ptr:
            return q._absent(chunk, term)
        q._arrays.pop(term, None)   # another memory: build it below (asks weft again)
    np = _numpy()
    t, comp = chunk._term(term)
    q = chunk._query
    lease = chunk._live()
    dt = _dtype_of(np, comp) if dtype is None else \
        (dtype if isinstance(dtype, np.dtype) else np.dtype(dtype))
    if dt.itemsize != comp.size and hasattr(q, "system"):
        # weft refuses the size itself, and a world query raises weft's
        # message; a system cannot read its error slot (see _SystemQuery),
        # so its chunks are checked here, in weft's words.
        raise WeftError(ERR_SIZE_MISMATCH,
                        "Chunk.array: term %d component '%s' has size %d but the dtype "
                        "has itemsize %d" % (term, comp.name, comp.size, dt.itemsize))
    q._clear()
    it = chunk._ref
    fast = _lib._weft_fast
    if t.access == ACCESS_WRITE:
        fn = fast["weft_iter_field_mut" if mark else "weft_iter_field_mut_nomark"]
    else:
        fn = fast["weft_iter_field"]
    ptr = fn(it, term, dt.itemsize)
    if not ptr:
        return q._absent(chunk, term)
    cls = _state["cls"]
    readonly = t.access != ACCESS_WRITE
    if chunk.count == 0:
        out = np.empty(0, dt)
        if readonly:
            out.flags.writeable = False
        return out
    # The array of the same column made for an earlier chunk (the previous
    # run of a system, usually) is reused when it is over the very same
    # memory: same address, rows, dtype and access, shape unchanged. It
    # gets this chunk's lease (so it is checked as a new one would be);
    # arrays derived from it earlier keep their own, ended lease. This
    # saves the array's construction on every run.
    cache = q._arrays
    ent = cache.get(term)
    if ent is not None and ent[0] == ptr and ent[1] == chunk.count and ent[2] is dtype \
            and ent[3] == readonly:
        arr, exp = ent[4], ent[5]
        if _shape_of(arr) == ent[6] and _dtype_get(arr) is ent[7]:
            exp.lease = lease
            arr._weft_lease = lease
            return arr
    exp = _Exporter(ptr, chunk.count, dt.itemsize, readonly, lease, (term, comp.name))
    arr = np.ndarray.view(np.asarray(exp), dtype=dt, type=cls)
    # keyed on what the caller passed (`dtype`, None included) and `mark`,
    # with the C call that gives the column (it also stamps the ticks)
    cache[term] = (ptr, chunk.count, dtype, readonly, arr, exp, _shape_of(arr),
                   _dtype_get(arr), mark, fn, dt.itemsize)
    return arr


def _build_class(np):
    ndarray = np.ndarray
    base_of = ndarray.base.__get__
    iface = ndarray.__array_interface__.__get__
    view = ndarray.view

    def exporter_of(a):
        b = a
        while isinstance(b, ndarray):
            b = base_of(b)
        return b if isinstance(b, _Exporter) else None

    def lease_of(a):
        exp = exporter_of(a)
        return exp.lease if exp is not None else None

    def check_writable(a):
        """WeftError(ACCESS_VIOLATION) for a column of a READ term (numpy's
        own read-only flag stops the write anyway; this names the term)."""
        if isinstance(a, ColumnArray) and not a.flags.writeable:
            exp = exporter_of(a)
            if exp is not None and exp.readonly:
                raise WeftError(ERR_ACCESS_VIOLATION,
                                "term %d (%s) is a READ term: its column array is read-only "
                                "(query it with write() to change it)" % exp.what)

    def check(a):
        lease = getattr(a, "_weft_lease", None)
        if lease is not None:
            lease.check()
        return a

    def plain(x):
        """Checked plain view of a ColumnArray (the memory, no subclass),
        anything else as it is; recurses into lists and tuples."""
        if isinstance(x, ColumnArray):
            check(x)
            return view(x, ndarray)
        if type(x) in (list, tuple):
            return type(x)(plain(v) for v in x)
        return x

    def wrap(r):
        """A result as the caller gets it: arrays over a chunk's memory as
        ColumnArray (checked), arrays in their own memory as plain ndarrays."""
        if isinstance(r, ndarray):
            lease = lease_of(r)
            if lease is not None:
                return r if type(r) is ColumnArray else view(r, ColumnArray)
            return view(r, ndarray) if isinstance(r, ColumnArray) else r
        if type(r) in (list, tuple):
            return type(r)(wrap(v) for v in r)
        return r

    class ColumnArray(ndarray):
        """A zero-copy numpy view of a chunk column, checked before every
        use (see weft.arrays). Read-only for READ terms."""

        def __array_finalize__(self, obj):
            self._weft_lease = lease_of(self)

        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            out = kwargs.get("out")
            if out is not None:
                outs = list(out)
                for i, o in enumerate(outs):
                    if isinstance(o, ColumnArray):
                        lease = o._weft_lease
                        if lease is not None:
                            lease.check()
                        outs[i] = view(o, ndarray)
                kwargs["out"] = tuple(outs)
            # the inputs as plain arrays, checked (a loop, not plain(): this
            # runs for every arithmetic operation on a column)
            args = list(inputs)
            for i, x in enumerate(args):
                if isinstance(x, ColumnArray):
                    lease = x._weft_lease
                    if lease is not None:
                        lease.check()
                    args[i] = view(x, ndarray)
                elif type(x) in (list, tuple):
                    args[i] = plain(x)
            try:
                r = getattr(ufunc, method)(*args, **kwargs)
            except ValueError:
                # numpy refuses a read-only output; name the READ term
                for o in out or ():
                    check_writable(o)
                raise
            if out is not None and method != "at":
                return out[0] if len(out) == 1 else out
            if type(r) is ndarray and base_of(r) is None:
                return r   # new memory: the caller's, unchecked
            return wrap(r)

        def __array_function__(self, func, types, args, kwargs):
            return wrap(func(*plain(args), **plain(kwargs)))

        def __getitem__(self, key):
            check(self)
            r = ndarray.__getitem__(self, key)
            if isinstance(r, np.void):
                # a row of a structured column: a 0-d view instead of a
                # numpy.void, which would refer to the memory unchecked
                key = key if isinstance(key, tuple) else (key,)
                r = ndarray.__getitem__(self, key + (Ellipsis,))
            return wrap(r)

        def __setitem__(self, key, value):
            check(self)
            check_writable(self)
            if isinstance(value, ColumnArray):
                # `a["x"] += b` ends with a["x"] = <the same view, already
                # updated in place>: skip that copy of the memory onto itself
                cur = ndarray.__getitem__(self, key)
                if isinstance(cur, ndarray) and iface(cur) == iface(value):
                    check(value)
                    return
            ndarray.__setitem__(self, key, plain(value))

        def __reduce__(self):
            # pickles as the plain array it holds (the class is local to
            # this module's numpy build, and a pickle outlives the chunk)
            check(self)
            return view(self, ndarray).__reduce__()

        def __reduce_ex__(self, protocol):
            check(self)
            return view(self, ndarray).__reduce_ex__(protocol)

        def __iter__(self):
            check(self)
            for i in range(len(self)):
                yield self[i]

        def __repr__(self):
            check(self)
            return "weft.ColumnArray(%s)" % repr(view(self, ndarray))

        def __str__(self):
            check(self)
            return str(view(self, ndarray))

        @property
        def valid(self):
            """False once the chunk is over (using the array then raises)."""
            lease = self._weft_lease
            return lease is None or (lease.alive and bool(lease.world._ptr))

    def checked_method(name, fn):
        def method(self, *args, **kwargs):
            check(self)
            return wrap(fn(self, *args, **kwargs))
        method.__name__ = name
        method.__qualname__ = "ColumnArray." + name
        method.__doc__ = fn.__doc__
        return method

    def checked_property(name, prop):
        def get(self):
            check(self)
            return wrap(prop.__get__(self))

        def set_(self, value):
            check(self)
            prop.__set__(self, value)
        return property(get, set_, doc=prop.__doc__)

    # Arithmetic operators need no wrapper: ndarray implements them with
    # ufuncs, which call ColumnArray.__array_ufunc__ (checked above).
    # Comparisons stay wrapped (structured arrays compare without ufuncs).
    via_ufunc = {"__%s%s__" % (p, op) for op in (
        "add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift",
        "rshift", "and", "or", "xor") for p in ("", "r", "i")} \
        | {"__divmod__", "__rdivmod__", "__neg__", "__pos__", "__abs__", "__invert__"}
    def fast_binop(name):
        """The operator `name` with a short path when the other operand is
        no ColumnArray (a scalar, a plain array: `p += v * dt`): check the
        lease, then run ndarray's operator on the plain view, which skips
        __array_ufunc__. With a ColumnArray on the other side it goes
        through __array_ufunc__, which checks both."""
        base = getattr(ndarray, name)
        inplace = name.startswith("__i")

        def op(self, other):
            if not (type(other) in plain_types or type(other) is ndarray
                    or isinstance(other, np.generic)):
                return base(self, other)   # a column, a list, ...: the checked path
            lease = self._weft_lease
            if lease is not None:
                lease.check()
            try:
                r = base(view(self, ndarray), other)
            except ValueError:
                check_writable(self)   # a READ term's column: name it
                raise
            if inplace:
                return self
            if r is NotImplemented or (type(r) is ndarray and base_of(r) is None):
                return r
            return wrap(r)
        op.__name__ = name
        op.__qualname__ = "ColumnArray." + name
        return op

    plain_types = (int, float, complex, bool)
    for name in ("__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__",
                 "__mul__", "__rmul__", "__imul__", "__truediv__", "__rtruediv__",
                 "__itruediv__"):
        setattr(ColumnArray, name, fast_binop(name))
    own = set(vars(ColumnArray)) | via_ufunc
    skip = {"__new__", "__init__", "__array_finalize__", "__array_wrap__",
            "__array_prepare__", "__class_getitem__", "__init_subclass__",
            "__subclasshook__", "__getattribute__", "__setattr__", "__delattr__",
            "__dir__", "__sizeof__", "__format__"}
    getsets = {"T", "real", "imag", "flat", "data", "base", "ctypes",
               "__array_interface__", "__array_struct__"}
    for name, member in vars(ndarray).items():
        if name in own or name in skip:
            continue
        if name in getsets:
            setattr(ColumnArray, name, checked_property(name, member))
        elif callable(member) and not isinstance(member, type):
            setattr(ColumnArray, name, checked_method(name, member))
    ColumnArray.__module__ = "weft"
    return ColumnArray

# bindings/python/weft/_convert.py - every Python value the binding hands to weft goes through one check per kind: integers must fit their C type (OverflowError), names must not hold a NUL (ValueError), float32 values must fit a float.
# SPDX-License-Identifier: MIT
"""Argument conversion, refused instead of changed.

ctypes converts silently: an int32 argument wraps (2**32 + 2 becomes 2),
a uint64 takes -1 as 2**64 - 1, a char * stops at the first NUL, a float
field turns 1e300 into inf. weft would then act on another value than the
caller gave. The binding refuses instead, in one place per kind:

- `check_int(ctype, value, what)`: OverflowError when `value` does not fit.
- `check_name(value, what)`: the UTF-8 bytes of a str (or bytes) name;
  ValueError when it holds a NUL, TypeError when it is neither.
- `check_float32(value, what)`: OverflowError beyond float32's range.

They are applied everywhere at once, not at each call site: the loader
declares every prototype with `checked_argtype(t)` in place of each integer,
float and char * argument type (so every argument of every weft call is
checked), and `install_field_checks(cls)` makes every descriptor struct of
_abi.py check what is stored in its integer, float and char * fields."""

import ctypes
import math
import threading

_INT_RANGES: dict = {}
for _t, _bits, _signed in ((ctypes.c_int8, 8, True), (ctypes.c_uint8, 8, False),
                           (ctypes.c_int16, 16, True), (ctypes.c_uint16, 16, False),
                           (ctypes.c_int32, 32, True), (ctypes.c_uint32, 32, False),
                           (ctypes.c_int64, 64, True), (ctypes.c_uint64, 64, False),
                           (ctypes.c_int, 8 * ctypes.sizeof(ctypes.c_int), True),
                           (ctypes.c_uint, 8 * ctypes.sizeof(ctypes.c_uint), False),
                           (ctypes.c_long, 8 * ctypes.sizeof(ctypes.c_long), True),
                           (ctypes.c_ulong, 8 * ctypes.sizeof(ctypes.c_ulong), False),
                           (ctypes.c_size_t, 8 * ctypes.sizeof(ctypes.c_size_t), False)):
    _INT_RANGES[_t] = ((-(1 << (_bits - 1)), (1 << (_bits - 1)) - 1) if _signed
                       else (0, (1 << _bits) - 1))
_C_NAMES = {ctypes.c_int8: "int8", ctypes.c_uint8: "uint8", ctypes.c_int16: "int16",
            ctypes.c_uint16: "uint16", ctypes.c_int32: "int32", ctypes.c_uint32: "uint32",
            ctypes.c_int64: "int64", ctypes.c_uint64: "uint64"}
_FLT_MAX = 3.4028234663852886e38


def _cname(ctype):
    return _C_NAMES.get(ctype, ctype.__name__)


def check_int(ctype, value, what="argument"):
    """`value` (an int, or anything with __index__) when it fits the C
    integer type `ctype`; OverflowError naming `what` otherwise."""
    lo, hi = _INT_RANGES[ctype]
    v = value.__index__() if not isinstance(value, int) and hasattr(value, "__index__") \
        else value
    if isinstance(v, int) and not lo <= v <= hi:
        raise OverflowError("%s: %d does not fit %s (%d..%d); weft would see another value"
                            % (what, v, _cname(ctype), lo, hi))
    return v


def check_name(value, what="name"):
    """The NUL-free UTF-8 bytes of a name (str or bytes; None stays None)."""
    if value is None:
        return None
    if isinstance(value, str):
        b = value.encode("utf-8")
    elif isinstance(value, (bytes, bytearray)):
        b = bytes(value)
    else:
        raise TypeError("%s: a name is a str, not %s" % (what, type(value).__name__))
    if b"\0" in b:
        raise ValueError("%s: %r holds a NUL character; weft would cut the name there"
                         % (what, value))
    return b


def check_float32(value, what="argument"):
    v = float(value)
    if math.isfinite(v) and abs(v) > _FLT_MAX:
        raise OverflowError("%s: %r does not fit a float32 (it would become inf)"
                            % (what, value))
    return value


# -- prototypes: checked argument types ------------------------------------

_tls = threading.local()   # the exception a from_param raised (see raised())


def _fail(exc):
    _tls.exc = exc
    raise exc


def raised():
    """The OverflowError/ValueError a checked argument type raised in this
    thread's last failed call (ctypes reports it as ArgumentError), once."""
    exc = getattr(_tls, "exc", None)
    _tls.exc = None
    return exc


_argtypes: dict = {}


def checked_argtype(t):
    """`t`, or for an integer, float or char * type a subclass whose
    from_param refuses what `t` would change."""
    if t in _argtypes:
        return _argtypes[t]
    out = t
    if t in _INT_RANGES:
        lo, hi = _INT_RANGES[t]
        base_from_param = t.from_param
        cname = _cname(t)

        def from_param(cls, v, lo=lo, hi=hi, base=base_from_param, cname=cname):
            if type(v) is int:
                if lo <= v <= hi:
                    return base(v)
                _fail(OverflowError("%d does not fit %s (%d..%d); weft would see another "
                                    "value" % (v, cname, lo, hi)))
            if not isinstance(v, (int, ctypes._SimpleCData)) and hasattr(v, "__index__"):
                v = v.__index__()
                if not lo <= v <= hi:
                    _fail(OverflowError("%d does not fit %s" % (v, cname)))
            elif isinstance(v, int) and not lo <= v <= hi:   # bool, IntEnum
                _fail(OverflowError("%d does not fit %s" % (v, cname)))
            return base(v)
        out = type("checked_" + t.__name__, (t,), {"from_param": classmethod(from_param)})
    elif t is ctypes.c_float:
        base_f = t.from_param

        def from_param_f(cls, v, base=base_f):
            if isinstance(v, (int, float)):
                try:
                    check_float32(v)
                except OverflowError as exc:
                    _fail(exc)
            return base(v)
        out = type("checked_c_float", (t,), {"from_param": classmethod(from_param_f)})
    elif t is ctypes.c_char_p:
        base_s = t.from_param

        def from_param_s(cls, v, base=base_s):
            if isinstance(v, bytes) and b"\0" in v:
                _fail(ValueError("%r holds a NUL character; weft would cut the name there"
                                 % (v,)))
            return base(v)
        out = type("checked_c_char_p", (t,), {"from_param": classmethod(from_param_s)})
    _argtypes[t] = out
    return out


def wrap_checked(fn, name):
    """`fn` (a ctypes function whose argtypes came from checked_argtype),
    re-raising a refused argument as the OverflowError/ValueError itself,
    named after the call, instead of ctypes' ArgumentError."""
    def call(*args):
        try:
            return fn(*args)
        except ctypes.ArgumentError:
            exc = raised()
            if exc is None:
                raise
            raise type(exc)("%s, %s" % (name, exc)) from None
    call.__name__ = name
    call.__wrapped__ = fn
    return call


# -- descriptor structs: checked fields -------------------------------------

def _field_checks(cls):
    checks = cls.__dict__.get("_weft_checks")
    if checks is None:
        checks = {}
        for f in cls._fields_:
            name, ft = f[0], f[1]
            if ft in _INT_RANGES and len(f) == 2:   # not a bit field
                checks[name] = ("int", ft)
            elif ft is ctypes.c_float:
                checks[name] = ("f32", ft)
            elif ft is ctypes.c_char_p:
                checks[name] = ("str", ft)
        cls._weft_checks = checks
    return checks


def _checked_setattr(self, name, value):
    check = _field_checks(type(self)).get(name)
    if check is not None:
        kind, ft = check
        what = "%s.%s" % (type(self).__name__, name)
        if kind == "int":
            value = check_int(ft, value, what)
        elif kind == "f32":
            check_float32(value, what)
        elif isinstance(value, (bytes, str)):
            value = check_name(value, what)
    object.__setattr__(self, name, value)


def install_field_checks(cls):
    """Makes the ctypes Structure `cls` check the values stored in its
    integer, float and char * fields (see _checked_setattr)."""
    cls.__setattr__ = _checked_setattr
    return cls

# bindings/python/weft/reflect.py - reflection: describing components from their
# ctypes layouts, reading and writing them as dicts (weft's JSON), binary
# snapshots (full, delta, merge, zstd) and scenes (save a query or a tree,
# spawn it again, clone).
# SPDX-License-Identifier: MIT
"""Reflection: describe ctypes components, read and write them as dicts,
save and restore snapshots, save and spawn scenes.

Values travel as weft's JSON (weft_json_*), parsed with the standard
library's json: integers as ints (a u64 above 2^63 - 1 as a decimal
string), floats as floats (NaN and infinities as None), strings as str,
enums by name, entities as ints, nested structs as dicts and arrays as
lists."""

import ctypes
import json

from ._abi import (
    ERR_CAPACITY, ERR_INVALID_HANDLE, KIND_BOOL, KIND_ENTITY, KIND_ENUM, KIND_F32, KIND_F64,
    KIND_I8, KIND_I16, KIND_I32, KIND_I64, KIND_STRING, KIND_STRUCT, KIND_U8, KIND_U16,
    KIND_U32, KIND_U64, OK, SNAPSHOT_DELTA, SNAPSHOT_ZSTD, WeftEnumValue, WeftField,
    WeftSnapshotOptions, WeftTypeDesc, c_entity,
)
from ._loader import _lib
from .errors import WeftError, _s

# ctypes scalar type -> weft kind (c_long and friends are aliases of these)
_KINDS = {
    ctypes.c_bool: KIND_BOOL,
    ctypes.c_int8: KIND_I8, ctypes.c_int16: KIND_I16,
    ctypes.c_int32: KIND_I32, ctypes.c_int64: KIND_I64,
    ctypes.c_uint8: KIND_U8, ctypes.c_uint16: KIND_U16,
    ctypes.c_uint32: KIND_U32, ctypes.c_uint64: KIND_U64,
    ctypes.c_float: KIND_F32, ctypes.c_double: KIND_F64,
}


def zstd_available():
    """True when libweft was built with zstd (snapshot compression)."""
    return bool(_lib.weft_snapshot_zstd_available())


def kind_name(kind):
    """weft's name of a field kind ("i32", "entity", ...)."""
    return _s(_lib.weft_kind_name(kind))


def _struct_like(t):
    return isinstance(t, type) and issubclass(t, (ctypes.Structure, ctypes.Union))


class _DescBuilder:
    """Builds weft_type_desc trees from ctypes Structure layouts; keeps every
    ctypes object alive until the describe call has copied them."""

    def __init__(self, entities, enums):
        self.entities = set(entities)
        self.enums = dict(enums or {})
        self.keep = []
        self.used = set()

    def _scalar(self, t, path):
        try:
            return _KINDS[t]
        except KeyError:
            raise TypeError("%s: weft cannot describe a field of type %s"
                            % (path, t.__name__)) from None

    def desc(self, stype, prefix=""):
        fields = stype._fields_
        arr = (WeftField * max(1, len(fields)))()
        self.keep.append(arr)
        name = stype.__name__.encode("utf-8")
        self.keep.append(name)
        for i, spec in enumerate(fields):
            fname, ftype = spec[0], spec[1]
            if len(spec) > 2:
                raise TypeError("%s%s: bit fields cannot be described" % (prefix, fname))
            path = prefix + fname
            f = arr[i]
            bname = fname.encode("utf-8")
            self.keep.append(bname)
            f.name = bname
            f.offset = getattr(stype, fname).offset
            count = 0
            elem = ftype
            if hasattr(ftype, "_length_") and hasattr(ftype, "_type_") \
                    and not _struct_like(ftype):
                count = ftype._length_
                elem = ftype._type_
            if elem is ctypes.c_char:
                if not count:
                    raise TypeError("%s: a single c_char; use c_int8 or c_char * n" % path)
                f.kind = KIND_STRING
                f.count = count
            elif _struct_like(elem):
                sub = self.desc(elem, path + ".")
                f.kind = KIND_STRUCT
                f.type = ctypes.pointer(sub)
                self.keep.append(f.type)
                f.count = count
            elif path in self.entities:
                self.used.add(path)
                if ctypes.sizeof(elem) != 8:
                    raise TypeError("%s: an entity field holds 8 bytes (c_uint64)" % path)
                f.kind = KIND_ENTITY
                f.count = count
            elif path in self.enums:
                self.used.add(path)
                values = self.enums[path]
                varr = (WeftEnumValue * max(1, len(values)))()
                for k, (vname, v) in enumerate(values.items()):
                    b = vname.encode("utf-8")
                    self.keep.append(b)
                    varr[k].name = b
                    varr[k].value = v
                self.keep.append(varr)
                f.kind = KIND_ENUM
                f.enum_base = self._scalar(elem, path)
                f.enum_values = varr
                f.enum_count = len(values)
                f.count = count
            else:
                f.kind = self._scalar(elem, path)
                f.count = count
        d = WeftTypeDesc()
        d.name = name
        d.size = ctypes.sizeof(stype)
        d.align = ctypes.alignment(stype)
        d.fields = arr
        d.field_count = len(fields)
        self.keep.append(d)
        return d


class Scene:
    """A saved set of entities (weft_scene): spawn it any number of times;
    references inside the set are remapped to the new entities. Close it
    (or use it as a context manager) to free the saved values; the world's
    close frees it too."""

    def __init__(self, world, ptr):
        self.world = world
        self._ptr = ptr
        world._scenes.add(self)

    def __len__(self):
        return _lib.weft_scene_count(self._p()) if self._ptr and self.world._ptr else 0

    def _p(self):
        if not self._ptr or not self.world._ptr:
            raise WeftError(ERR_INVALID_HANDLE, "scene destroyed")
        self.world._p()   # the thread check
        return self._ptr

    def spawn(self):
        """Spawns the scene once more; returns the new entities in scene
        order."""
        n = len(self)
        out = (c_entity * max(1, n))()
        w = self.world
        w._clear()
        w._check(_lib.weft_scene_spawn(w._p(), self._p(), out, n))
        return list(out[:n])

    def close(self):
        if self._ptr and self.world._ptr:
            wp = self.world._p()
            p, self._ptr = self._ptr, None
            self.world._scenes.discard(self)
            self.world._check(_lib.weft_scene_destroy(wp, p))
        self._ptr = None

    destroy = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _ReflectWorld:
    """World methods for reflection (a mixin of weft.World)."""

    # -- descriptions
    def describe(self, component, entities=(), enums=None):
        """Describes a registered ctypes component (or resource) from its
        _fields_, so that it can be read and written as a dict, saved in
        scenes with remapping and shown by tools. Integer, float and bool
        fields map to weft's kinds, c_char arrays to strings, nested
        Structures to nested descriptions, other arrays to fixed arrays.
        `entities`: names (dotted for nested fields) of c_uint64 fields that
        hold entities; `enums`: {name: {value name: int}} for fields whose
        values have names."""
        c = self.component_of(component)
        if c.type is None:
            raise TypeError("%s is a tag: it has no fields" % c.name)
        b = _DescBuilder(entities, enums)
        d = b.desc(c.type)
        unknown = (set(b.entities) | set(b.enums)) - b.used
        if unknown:
            raise KeyError("no such field: %s" % ", ".join(sorted(unknown)))
        self._clear()
        self._check(_lib.weft_component_describe(self._p(), c.id, ctypes.byref(d)))

    def is_described(self, component):
        return bool(_lib.weft_component_is_described(self._p(),
                                                      self.component_of(component).id))

    # -- writers: size query, then the text
    def _written(self, fn, *args):
        n = ctypes.c_size_t(0)
        self._clear()
        st = fn(self._p(), *args, None, 0, ctypes.byref(n))
        if st != ERR_CAPACITY:
            self._check(st if st != OK else ERR_CAPACITY)
        buf = ctypes.create_string_buffer(n.value)
        got = ctypes.c_size_t(0)
        self._check(fn(self._p(), *args, buf, n.value, ctypes.byref(got)))
        return buf.raw[:got.value]

    def _json(self, fn, *args):
        return json.loads(self._written(fn, *args)[:-1].decode("utf-8"))

    # -- dicts
    def get_dict(self, entity, component):
        """Component `component` of `entity` as a dict of its described
        fields."""
        return self._json(_lib.weft_json_write_component, entity,
                          self.component_of(component).id)

    def set_dict(self, entity, component, values):
        """Writes the fields given in `values` (a dict, or any subset of
        the fields) into `component` of `entity`, inserting it when absent
        (other fields keep their value, or the default). Type, range and
        unknown-field errors raise WeftError naming the field path; the
        entity is then unchanged."""
        text = json.dumps(values, allow_nan=False).encode("utf-8")
        self._clear()
        self._check(_lib.weft_json_read_component(self._p(), entity,
                                                  self.component_of(component).id,
                                                  text, len(text)))

    def entity_dict(self, entity):
        """The entity as {"id": entity, "components": {name: fields}}:
        described components, tags as {} and relationships as
        {"target": entity}."""
        return self._json(_lib.weft_json_write_entity, entity)

    def load_entity(self, entity, d):
        """Inserts every component of an entity dict (as entity_dict gives)
        on `entity`, in one structural step; all or nothing."""
        text = json.dumps(d, allow_nan=False).encode("utf-8")
        self._clear()
        self._check(_lib.weft_json_read_entity(self._p(), entity, text, len(text)))

    def spawn_dict(self, d):
        """Spawns an entity from an entity dict; returns it."""
        text = json.dumps(d, allow_nan=False).encode("utf-8")
        self._clear()
        return self._handle(_lib.weft_json_spawn(self._p(), text, len(text)))

    def query_dicts(self, query):
        """The entities `query` matches, as entity dicts, in iteration
        order (not a run of the query)."""
        return self._json(_lib.weft_json_write_query, query._p())

    # -- snapshots
    def snapshot(self, zstd=False, level=0):
        """The whole world as a binary snapshot (bytes), compressed with
        zstd when asked (see zstd_available())."""
        return self._snapshot(0, 0, zstd, level)

    def snapshot_delta(self, since, zstd=False, level=0):
        """What changed since change tick `since` (the tick of the base
        snapshot): merge it into the base with snapshot_merge."""
        return self._snapshot(SNAPSHOT_DELTA, since, zstd, level)

    def _snapshot(self, flags, since, zstd, level):
        o = WeftSnapshotOptions()
        o.flags = flags | (SNAPSHOT_ZSTD if zstd else 0)
        o.since = since
        o.zstd_level = level
        return self._written(_lib.weft_snapshot_write_ex, ctypes.byref(o))

    def track_changes(self, on=True):
        """Starts (again, from the current change tick) or stops tracking
        changes, which makes deltas proportional to what changed."""
        self._clear()
        self._check(_lib.weft_snapshot_track(self._p(), bool(on)))

    def snapshot_merge(self, base, delta):
        """The full snapshot equal to `base` with `delta` applied."""
        return self._written(_lib.weft_snapshot_merge, base, len(base), delta, len(delta))

    def restore(self, data):
        """Restores a snapshot into this world, empty or live (in place:
        its content is replaced, its registrations, schedules and queries
        stay), with the same registrations as the saved one. Raises
        WeftError (BAD_FORMAT, WRONG_PHASE with reservations pending, ...)
        with the world unchanged."""
        self._clear()
        self._check(_lib.weft_snapshot_restore(self._p(), data, len(data)))

    # -- scenes
    def scene_from_query(self, query):
        """Saves the entities `query` matches as a Scene."""
        self._clear()
        return Scene(self, self._handle(_lib.weft_scene_from_query(self._p(), query._p())))

    def scene_from_tree(self, root):
        """Saves `root` and every entity below it through ChildOf."""
        self._clear()
        return Scene(self, self._handle(_lib.weft_scene_from_tree(self._p(), root)))

    def clone(self, entity, recursive=False):
        """A copy of `entity` (and, recursive, of its subtree); returns it."""
        self._clear()
        return self._handle(_lib.weft_clone(self._p(), entity, bool(recursive)))

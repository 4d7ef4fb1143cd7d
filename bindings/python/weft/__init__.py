# bindings/python/weft/__init__.py - pure-ctypes Python binding of weft's C ABI.
# SPDX-License-Identifier: MIT
"""Python binding of weft, an embeddable ECS runtime (C ABI via ctypes).

Standard library only. The shared library is found through the
environment variable WEFT_LIBRARY (full path), else
ctypes.util.find_library('weft'), else a few common build paths, and is
refused unless weft_abi_version() equals ABI_VERSION.

Components are ctypes.Structure subclasses registered with
World.register(); entities are Python ints (weft_entity, uint64). Every
weft failure raises WeftError(status name, world's message).

Lifetimes (the C rules, see docs/bindings.md):
- World.get() returns a copy; World.get_mut() and resource_get_mut()
  return a struct *view* over the world's memory, valid only until the next
  structural change (spawn, despawn, insert, remove, flush, applying
  commands, the end of an iteration). Using it later reads freed memory.
- Chunk columns/entities are zero-copy views valid until the next chunk.
- Trigger objects passed to observers are valid only during the callback.

Callbacks (observers, lifecycle hooks) never let a Python exception unwind
into C: the ctypes trampoline catches it, stores it on the World, and the
binding re-raises it once the outermost weft call has returned.
"""

import ctypes
import ctypes.util
import os
import sys

__all__ = [
    "ABI_VERSION", "WeftError", "World", "Component", "Query", "Chunk",
    "Commands", "Observer", "Event", "MessageType", "MessageReader",
    "RemovedReader", "Term", "read", "write", "with_", "without",
    "optional", "or_", "Added", "Changed", "load_library",
    "ADD", "INSERT", "REPLACE", "REMOVE", "DESPAWN",
    "STORAGE_TABLE", "STORAGE_SPARSE", "COMPONENT_IMMUTABLE",
    "COMPONENT_MAIN_THREAD", "COMPONENT_NO_CHANGE_TICKS",
    "entity_index", "entity_generation",
]

#: WEFT_VERSION this module was written for (0.1.0).
ABI_VERSION = 100

# ---------------------------------------------------------------- C types

c_entity = ctypes.c_uint64
c_component = ctypes.c_uint32
c_event = ctypes.c_uint32
c_message_type = ctypes.c_uint32
c_status = ctypes.c_int32
_vp = ctypes.c_void_p

# Enums (all pinned to 32 bits in weft.h).
OK = 0
STATUS_NAMES = (
    "WEFT_OK", "WEFT_ERR_INVALID_ARG", "WEFT_ERR_INVALID_HANDLE",
    "WEFT_ERR_STALE_ENTITY", "WEFT_ERR_SIZE_MISMATCH",
    "WEFT_ERR_OUT_OF_MEMORY", "WEFT_ERR_CAPACITY",
    "WEFT_ERR_ALREADY_EXISTS", "WEFT_ERR_NOT_FOUND",
    "WEFT_ERR_WRONG_THREAD", "WEFT_ERR_WRONG_PHASE",
    "WEFT_ERR_ACCESS_VIOLATION", "WEFT_ERR_SCHEDULE_CYCLE",
    "WEFT_ERR_POISONED", "WEFT_ERR_INTERNAL", "WEFT_ERR_INVALID_ENTITY",
    "WEFT_ERR_UNKNOWN_COMPONENT", "WEFT_ERR_IMMUTABLE",
    "WEFT_ERR_BAD_ALIGNMENT", "WEFT_ERR_DUPLICATE_COMPONENT",
    "WEFT_ERR_CORRUPT", "WEFT_ERR_NOT_UNIQUE", "WEFT_ERR_DEPTH_LIMIT",
    "WEFT_ERR_RELATIONSHIP",
)
for _i, _n in enumerate(STATUS_NAMES):
    globals()[_n[len("WEFT_"):]] = _i
del _i, _n

LOG_ERROR, LOG_WARN, LOG_INFO = 1, 2, 3
STORAGE_DEFAULT, STORAGE_TABLE, STORAGE_SPARSE = 0, 1, 2
COMPONENT_IMMUTABLE = 1 << 0
COMPONENT_MAIN_THREAD = 1 << 1
COMPONENT_NO_CHANGE_TICKS = 1 << 2
ACCESS_DEFAULT, ACCESS_READ, ACCESS_WRITE, ACCESS_NONE = 0, 1, 2, 3
OPER_DEFAULT, OPER_AND, OPER_OPTIONAL, OPER_WITH, OPER_WITHOUT, OPER_OR = range(6)
FILTER_NONE, FILTER_ADDED, FILTER_CHANGED = 0, 1 << 0, 1 << 1
QUERY_MATCH_DISABLED = 1 << 0
QUERY_UNCACHED = 1 << 1
RELATIONSHIP_LINKED_DESPAWN = 1 << 0
MAX_TERMS = 16
MAX_EVENT_DEPTH = 64
ADD, INSERT, REPLACE, REMOVE, DESPAWN = 1, 2, 3, 4, 5

# Function pointer types.
ALLOC_FN = ctypes.CFUNCTYPE(_vp, ctypes.c_size_t, ctypes.c_size_t, _vp)
FREE_FN = ctypes.CFUNCTYPE(None, _vp, ctypes.c_size_t, ctypes.c_size_t, _vp)
LOG_FN = ctypes.CFUNCTYPE(None, _vp, ctypes.c_int32, c_status, ctypes.c_char_p,
                          ctypes.c_char_p, ctypes.c_int32)
TYPE_HOOK_FN = ctypes.CFUNCTYPE(None, _vp, ctypes.c_int32, _vp)
MOVE_HOOK_FN = ctypes.CFUNCTYPE(None, _vp, _vp, ctypes.c_int32, _vp)
HOOK_FN = ctypes.CFUNCTYPE(None, _vp, c_entity, c_component, _vp)
REQUIRE_CTOR_FN = ctypes.CFUNCTYPE(None, _vp, _vp)
COMMAND_FN = ctypes.CFUNCTYPE(None, _vp, _vp, _vp)
COMMAND_DROP_FN = ctypes.CFUNCTYPE(None, _vp, _vp)
FREE_USER_FN = ctypes.CFUNCTYPE(None, _vp)
MESSAGE_DROP_FN = ctypes.CFUNCTYPE(None, _vp, _vp)


class WeftAllocator(ctypes.Structure):
    _fields_ = [("alloc", ALLOC_FN), ("free", FREE_FN), ("user", _vp)]


class WeftLogger(ctypes.Structure):
    _fields_ = [("fn", LOG_FN), ("user", _vp)]


class WeftWorldDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("allocator", WeftAllocator),
                ("logger", WeftLogger),
                ("entity_capacity_hint", ctypes.c_int32),
                ("_end_canary", ctypes.c_uint32)]


class WeftWorldStats(ctypes.Structure):
    _fields_ = [("live_entities", ctypes.c_int64),
                ("live_bytes", ctypes.c_int64),
                ("archetypes", ctypes.c_int32),
                ("tables", ctypes.c_int32),
                ("components", ctypes.c_int32),
                ("resources", ctypes.c_int32),
                ("entity_records", ctypes.c_int32),
                ("pending_reserved", ctypes.c_int32)]

    def as_dict(self):
        return {name: getattr(self, name) for name, _ in self._fields_}

    def __repr__(self):
        return "WorldStats(%s)" % ", ".join(
            "%s=%r" % kv for kv in self.as_dict().items())


class WeftArchetypeInfo(ctypes.Structure):
    _fields_ = [("entity_count", ctypes.c_int32),
                ("table", ctypes.c_int32),
                ("component_count", ctypes.c_int32),
                ("components", ctypes.POINTER(c_component))]


class WeftTypeHooks(ctypes.Structure):
    _fields_ = [("ctor", TYPE_HOOK_FN), ("dtor", TYPE_HOOK_FN),
                ("move", MOVE_HOOK_FN), ("copy", MOVE_HOOK_FN),
                ("user", _vp)]


class WeftLifecycleHooks(ctypes.Structure):
    _fields_ = [("on_add", HOOK_FN), ("on_insert", HOOK_FN),
                ("on_replace", HOOK_FN), ("on_remove", HOOK_FN),
                ("on_despawn", HOOK_FN), ("user", _vp)]


class WeftRequire(ctypes.Structure):
    _fields_ = [("id", c_component), ("value", _vp),
                ("size", ctypes.c_size_t), ("ctor", REQUIRE_CTOR_FN),
                ("user", _vp)]


class WeftComponentDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("name", ctypes.c_char_p),
                ("size", ctypes.c_size_t),
                ("align", ctypes.c_size_t),
                ("hooks", WeftTypeHooks),
                ("lifecycle", WeftLifecycleHooks),
                ("storage", ctypes.c_int32),
                ("flags", ctypes.c_uint32),
                ("required", ctypes.POINTER(WeftRequire)),
                ("required_count", ctypes.c_int32),
                ("_end_canary", ctypes.c_uint32)]


class WeftComponentInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("size", ctypes.c_size_t),
                ("align", ctypes.c_size_t), ("storage", ctypes.c_int32),
                ("flags", ctypes.c_uint32)]


class WeftValue(ctypes.Structure):
    _fields_ = [("id", c_component), ("size", ctypes.c_size_t), ("ptr", _vp)]


class WeftTicks(ctypes.Structure):
    _fields_ = [("added", ctypes.c_uint32), ("changed", ctypes.c_uint32)]


class WeftTerm(ctypes.Structure):
    _fields_ = [("id", c_component), ("access", ctypes.c_int32),
                ("oper", ctypes.c_int32), ("filter", ctypes.c_uint32),
                ("or_group", ctypes.c_int32)]


class WeftQueryDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("terms", WeftTerm * MAX_TERMS),
                ("term_count", ctypes.c_int32),
                ("flags", ctypes.c_uint32),
                ("_end_canary", ctypes.c_uint32)]


class WeftIter(ctypes.Structure):
    _fields_ = [("_opaque", ctypes.c_uint64 * 64)]


class WeftEventDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("name", ctypes.c_char_p),
                ("payload_size", ctypes.c_size_t),
                ("_end_canary", ctypes.c_uint32)]


class WeftTrigger(ctypes.Structure):
    _fields_ = [("event", c_event), ("component", c_component),
                ("entity", c_entity), ("original", c_entity),
                ("payload", _vp), ("payload_size", ctypes.c_size_t),
                ("propagate", ctypes.c_bool)]


OBSERVER_FN = ctypes.CFUNCTYPE(None, _vp, ctypes.POINTER(WeftTrigger), _vp)


class WeftObserverDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("event", c_event),
                ("component", c_component),
                ("entity", c_entity),
                ("fn", OBSERVER_FN),
                ("user", _vp),
                ("free_user", FREE_USER_FN),
                ("_end_canary", ctypes.c_uint32)]


class WeftMessageDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("name", ctypes.c_char_p),
                ("size", ctypes.c_size_t),
                ("align", ctypes.c_size_t),
                ("drop", MESSAGE_DROP_FN),
                ("user", _vp),
                ("_end_canary", ctypes.c_uint32)]


class WeftMessageCursor(ctypes.Structure):
    _fields_ = [("next", ctypes.c_uint64), ("missed", ctypes.c_uint64)]


class WeftRelationshipDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("name", ctypes.c_char_p),
                ("flags", ctypes.c_uint32),
                ("_end_canary", ctypes.c_uint32)]


# ------------------------------------------------------------ prototypes

_P = ctypes.POINTER
_w = _vp          # weft_world *
_q = _vp          # weft_query *
_cmds = _vp       # weft_commands *
_obs = _vp        # weft_observer *
_sz = ctypes.c_size_t
_i32 = ctypes.c_int32
_u32 = ctypes.c_uint32
_i64 = ctypes.c_int64
_bool = ctypes.c_bool
_cstr = ctypes.c_char_p
_it = _P(WeftIter)

# name: (restype, argtypes) -- mirrors include/weft.h.
_PROTOTYPES = {
    "weft_abi_version": (_i32, []),
    "weft_status_name": (_cstr, [c_status]),
    "weft_status_str": (_cstr, [c_status]),
    "weft_entity_index": (_u32, [c_entity]),
    "weft_entity_generation": (_u32, [c_entity]),
    # world
    "weft_world_create": (_w, [_P(WeftWorldDesc)]),
    "weft_world_destroy": (None, [_w]),
    "weft_last_status": (c_status, [_w]),
    "weft_last_error": (_cstr, [_w]),
    "weft_clear_error": (None, [_w]),
    "weft_world_change_tick": (_u32, [_w]),
    "weft_world_increment_change_tick": (_u32, [_w]),
    "weft_world_get_stats": (c_status, [_w, _P(WeftWorldStats)]),
    "weft_archetype_info_get": (c_status, [_w, _i32, _P(WeftArchetypeInfo)]),
    "weft_entity_archetype": (_i32, [_w, c_entity]),
    "weft_world_hash": (ctypes.c_uint64, [_w]),
    "weft_world_check": (c_status, [_w]),
    # components
    "weft_component_register": (c_component, [_w, _P(WeftComponentDesc)]),
    "weft_component_require": (c_status, [_w, c_component, _P(WeftRequire), _i32]),
    "weft_component_lookup": (c_component, [_w, _cstr]),
    "weft_component_info_get": (c_status, [_w, c_component, _P(WeftComponentInfo)]),
    # entities
    "weft_spawn": (c_entity, [_w]),
    "weft_spawn_with": (c_entity, [_w, _P(WeftValue), _i32]),
    "weft_spawn_bulk": (c_status, [_w, _P(WeftValue), _i32, _i32, _P(c_entity)]),
    "weft_despawn": (c_status, [_w, c_entity]),
    "weft_is_alive": (_bool, [_w, c_entity]),
    "weft_entity_reserve": (c_entity, [_w]),
    "weft_entity_flush": (c_status, [_w]),
    # component access
    "weft_insert": (c_status, [_w, c_entity, c_component, _vp, _sz]),
    "weft_insert_many": (c_status, [_w, c_entity, _P(WeftValue), _i32]),
    "weft_remove": (c_status, [_w, c_entity, c_component]),
    "weft_has": (_bool, [_w, c_entity, c_component]),
    "weft_get": (_vp, [_w, c_entity, c_component, _sz]),
    "weft_get_mut": (_vp, [_w, c_entity, c_component, _sz]),
    "weft_get_ticks": (c_status, [_w, c_entity, c_component, _P(WeftTicks)]),
    # resources
    "weft_resource_insert": (c_status, [_w, c_component, _vp, _sz]),
    "weft_resource_remove": (c_status, [_w, c_component]),
    "weft_resource_has": (_bool, [_w, c_component]),
    "weft_resource_get": (_vp, [_w, c_component, _sz]),
    "weft_resource_get_mut": (_vp, [_w, c_component, _sz]),
    "weft_resource_get_ticks": (c_status, [_w, c_component, _P(WeftTicks)]),
    # queries
    "weft_disabled": (c_component, [_w]),
    "weft_query_create": (_q, [_w, _P(WeftQueryDesc)]),
    "weft_query_destroy": (c_status, [_w, _q]),
    "weft_query_last_run": (_u32, [_w, _q]),
    "weft_query_set_last_run": (c_status, [_w, _q, _u32]),
    "weft_query_iter": (c_status, [_w, _q, _it]),
    "weft_iter_next": (_bool, [_it]),
    "weft_iter_fini": (None, [_it]),
    "weft_iter_count": (_i32, [_it]),
    "weft_iter_entities": (_P(c_entity), [_it]),
    "weft_iter_field": (_vp, [_it, _i32, _sz]),
    "weft_iter_field_mut": (_vp, [_it, _i32, _sz]),
    "weft_iter_field_mut_nomark": (_vp, [_it, _i32, _sz]),
    "weft_iter_has": (_bool, [_it, _i32]),
    "weft_iter_get": (_vp, [_it, _i32, _i32, _sz]),
    "weft_iter_get_mut": (_vp, [_it, _i32, _i32, _sz]),
    "weft_iter_mark": (c_status, [_it, _i32, _i32]),
    "weft_iter_set_if_neq": (c_status, [_it, _i32, _i32, _vp, _sz, _P(_bool)]),
    "weft_query_matches": (_bool, [_w, _q, c_entity]),
    "weft_query_get": (_vp, [_w, _q, c_entity, _i32, _sz]),
    "weft_query_count": (_i64, [_w, _q]),
    "weft_query_is_empty": (_bool, [_w, _q]),
    "weft_query_single": (c_status, [_w, _q, _P(c_entity)]),
    # change ticks
    "weft_world_clamp_ticks": (_bool, [_w, _bool]),
    "weft_world_set_change_tick": (None, [_w, _u32]),
    "weft_tick_is_newer": (_bool, [_u32, _u32, _u32]),
    # commands
    "weft_commands_create": (_cmds, [_w]),
    "weft_commands_destroy": (None, [_cmds]),
    "weft_world_commands": (_cmds, [_w]),
    "weft_commands_count": (_i32, [_cmds]),
    "weft_cmd_spawn": (c_entity, [_cmds, _P(WeftValue), _i32]),
    "weft_cmd_insert": (c_status, [_cmds, c_entity, c_component, _vp, _sz]),
    "weft_cmd_insert_many": (c_status, [_cmds, c_entity, _P(WeftValue), _i32]),
    "weft_cmd_remove": (c_status, [_cmds, c_entity, c_component]),
    "weft_cmd_despawn": (c_status, [_cmds, c_entity]),
    "weft_cmd_try_insert": (c_status, [_cmds, c_entity, c_component, _vp, _sz]),
    "weft_cmd_try_remove": (c_status, [_cmds, c_entity, c_component]),
    "weft_cmd_try_despawn": (c_status, [_cmds, c_entity]),
    "weft_cmd_resource_insert": (c_status, [_cmds, c_component, _vp, _sz]),
    "weft_cmd_resource_remove": (c_status, [_cmds, c_component]),
    "weft_cmd_custom": (c_status, [_cmds, COMMAND_FN, _vp, _sz, COMMAND_DROP_FN, _vp]),
    "weft_commands_apply": (c_status, [_w, _cmds]),
    # events and observers
    "weft_event_register": (c_event, [_w, _P(WeftEventDesc)]),
    "weft_observer_create": (_obs, [_w, _P(WeftObserverDesc)]),
    "weft_observer_destroy": (c_status, [_w, _obs]),
    "weft_trigger_event": (c_status, [_w, c_event, c_entity, _vp, _sz, _bool]),
    # messages
    "weft_message_register": (c_message_type, [_w, _P(WeftMessageDesc)]),
    "weft_message_write": (c_status, [_w, c_message_type, _vp, _sz]),
    "weft_message_read": (_vp, [_w, c_message_type, _P(WeftMessageCursor), _sz]),
    "weft_message_unread": (_i64, [_w, c_message_type, _P(WeftMessageCursor)]),
    "weft_messages_update": (None, [_w]),
    "weft_removed_track": (c_status, [_w, c_component]),
    "weft_removed_read": (c_entity, [_w, c_component, _P(WeftMessageCursor)]),
    # relationships and hierarchy
    "weft_relationship_register": (c_component, [_w, _P(WeftRelationshipDesc)]),
    "weft_relationship_targets": (c_component, [_w, c_component]),
    "weft_child_of": (c_component, [_w]),
    "weft_relate": (c_status, [_w, c_entity, c_component, c_entity]),
    "weft_unrelate": (c_status, [_w, c_entity, c_component]),
    "weft_related": (c_entity, [_w, c_entity, c_component]),
    "weft_related_sources": (_P(c_entity), [_w, c_entity, c_component, _P(_i32)]),
    "weft_set_parent": (c_status, [_w, c_entity, c_entity]),
    "weft_remove_parent": (c_status, [_w, c_entity]),
    "weft_parent": (c_entity, [_w, c_entity]),
    "weft_children": (_P(c_entity), [_w, c_entity, _P(_i32)]),
    "weft_ancestors": (_i32, [_w, c_entity, c_component, _P(c_entity), _i32]),
    "weft_descendants": (_i64, [_w, c_entity, c_component, _P(c_entity), _i64]),
}


def _candidate_paths():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", "..", ".."))
    names = ["libweft.so.0", "libweft.so", "libweft.dylib", "weft.dll"]
    dirs = [os.path.join(root, d) for d in
            ("build", "build/Release", "build/release", "cmake-build-release",
             "build/Debug", "cmake-build-debug", "out/build")]
    dirs += ["/usr/local/lib", "/usr/local/lib64", "/usr/lib"]
    return [os.path.join(d, n) for d in dirs for n in names]


def load_library(path=None):
    """Loads libweft, declares every prototype and checks the ABI version.

    Order: `path`, $WEFT_LIBRARY, ctypes.util.find_library('weft'), common
    build paths. Raises OSError when nothing loads and ImportError on an ABI
    version mismatch."""
    tried = []
    candidates = []
    if path:
        candidates.append(path)
    elif os.environ.get("WEFT_LIBRARY"):
        candidates.append(os.environ["WEFT_LIBRARY"])
    else:
        found = ctypes.util.find_library("weft")
        if found:
            candidates.append(found)
        candidates += [p for p in _candidate_paths() if os.path.exists(p)]
    lib = None
    for cand in candidates:
        try:
            lib = ctypes.CDLL(cand)
            break
        except OSError as exc:
            tried.append("%s (%s)" % (cand, exc))
    if lib is None:
        raise OSError("weft: cannot load the shared library; set WEFT_LIBRARY "
                      "to the full path of libweft.so. Tried: %s"
                      % ("; ".join(tried) or "nothing found"))
    lib.weft_abi_version.restype = ctypes.c_int32
    lib.weft_abi_version.argtypes = []
    version = lib.weft_abi_version()
    if version != ABI_VERSION:
        raise ImportError("weft: library %s has ABI version %d, this binding "
                          "was written for %d" % (lib._name, version, ABI_VERSION))
    for name, (restype, argtypes) in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


_lib = load_library()


def _s(b):
    return b.decode("utf-8", "replace") if b is not None else ""


def status_name(status):
    return _s(_lib.weft_status_name(status))


def status_str(status):
    return _s(_lib.weft_status_str(status))


def entity_index(e):
    """Index part (low 32 bits) of an entity handle."""
    return e & 0xFFFFFFFF


def entity_generation(e):
    """Generation part (high 32 bits) of an entity handle."""
    return (e >> 32) & 0xFFFFFFFF


class WeftError(Exception):
    """A weft call failed. `status` is the numeric weft_status, `name` its
    name (e.g. "WEFT_ERR_STALE_ENTITY"), `message` the world's
    weft_last_error text."""

    def __init__(self, status, message=""):
        self.status = int(status)
        self.name = status_name(self.status)
        self.message = message
        super().__init__("%s: %s" % (self.name, message or status_str(self.status)))


# ------------------------------------------------------------ components

class Component:
    """A registered component: its id in one world and its ctypes type
    (None for tags)."""

    __slots__ = ("world", "id", "type", "name", "size", "align", "_keep")

    def __init__(self, world, cid, ctype, name, size, align):
        self.world = world
        self.id = cid
        self.type = ctype
        self.name = name
        self.size = size
        self.align = align
        self._keep = []

    @property
    def is_tag(self):
        return self.size == 0

    def __int__(self):
        return self.id

    __index__ = __int__

    def __repr__(self):
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
    if getattr(value, "_b_needsfree_", 1):
        return value
    return type(value).from_buffer_copy(value)


# ------------------------------------------------------------ queries

class Term:
    """One query term: a component plus access, operator, filter bits and
    or-group (see weft_term)."""

    __slots__ = ("component", "access", "oper", "filter", "or_group")

    def __init__(self, component, access=ACCESS_DEFAULT, oper=OPER_AND,
                 filter=FILTER_NONE, or_group=0):
        self.component = component
        self.access = access
        self.oper = oper
        self.filter = filter
        self.or_group = or_group


def read(c, filter=FILTER_NONE):
    """AND term with a read-only field."""
    return Term(c, ACCESS_READ, OPER_AND, filter)


def write(c, filter=FILTER_NONE):
    """AND term with a writable field."""
    return Term(c, ACCESS_WRITE, OPER_AND, filter)


def with_(c, filter=FILTER_NONE):
    """The entity must have `c`; no field."""
    return Term(c, ACCESS_NONE, OPER_WITH, filter)


def without(c):
    """The entity must not have `c`."""
    return Term(c, ACCESS_NONE, OPER_WITHOUT)


def optional(c, write=False):
    """A field when present (None for chunks without it)."""
    return Term(c, ACCESS_WRITE if write else ACCESS_READ, OPER_OPTIONAL)


def or_(c, group, write=False, filter=FILTER_NONE):
    """OR term: at least one term of `group` must be present."""
    return Term(c, ACCESS_WRITE if write else ACCESS_READ, OPER_OR, filter, group)


def Added(c):
    """Filter: `c` was added since the query's last completed run (no field)."""
    return Term(c, ACCESS_NONE, OPER_WITH, FILTER_ADDED)


def Changed(c):
    """Filter: `c` was written since the query's last completed run (no field)."""
    return Term(c, ACCESS_NONE, OPER_WITH, FILTER_CHANGED)


class Chunk:
    """One chunk of an iteration: `count` rows of one table. Every view it
    hands out (entities, columns) is zero-copy and valid only until the
    iteration moves to the next chunk or ends."""

    __slots__ = ("_query", "_it", "count")

    def __init__(self, query, it):
        self._query = query
        self._it = it
        self.count = _lib.weft_iter_count(ctypes.byref(it))

    def __len__(self):
        return self.count

    @property
    def entities(self):
        """uint64 ctypes array of the chunk's entities (a view)."""
        if self.count == 0:
            return (c_entity * 0)()
        p = _lib.weft_iter_entities(ctypes.byref(self._it))
        return (c_entity * self.count).from_address(ctypes.addressof(p.contents))

    def has(self, term):
        return bool(_lib.weft_iter_has(ctypes.byref(self._it), term))

    def _term(self, term):
        terms = self._query.terms
        if not 0 <= term < len(terms):
            raise IndexError("term %d out of range" % term)
        comp = terms[term].component
        if comp.type is None:
            raise TypeError("term %d (%s) is a tag: it has no field" % (term, comp.name))
        return terms[term], comp

    def column(self, term, mark=True):
        """Column of term `term` as a ctypes array of the component struct
        (a zero-copy view of the table column, valid until the next chunk),
        or None when an OPTIONAL/OR term is absent from this chunk.
        WRITE terms come writable and, with `mark` (default), every row of
        the chunk is stamped changed; READ terms must only be read."""
        t, comp = self._term(term)
        w = self._query.world
        w._clear()
        it = ctypes.byref(self._it)
        if t.access == ACCESS_WRITE:
            fn = _lib.weft_iter_field_mut if mark else _lib.weft_iter_field_mut_nomark
            ptr = fn(it, term, comp.size)
        else:
            ptr = _lib.weft_iter_field(it, term, comp.size)
        if not ptr:
            w._check_slot()
            return None
        return (comp.type * self.count).from_address(ptr)

    def memoryview(self, term, mark=True):
        """The column as a memoryview (read-only for READ terms)."""
        col = self.column(term, mark)
        if col is None:
            return None
        mv = memoryview(col)
        if self._query.terms[term].access != ACCESS_WRITE:
            mv = mv.toreadonly()
        return mv

    def get(self, term, row):
        """Copy of term `term` at `row` (table or sparse), None if absent."""
        t, comp = self._term(term)
        w = self._query.world
        w._clear()
        ptr = _lib.weft_iter_get(ctypes.byref(self._it), term, row, comp.size)
        if not ptr:
            w._check_slot()
            return None
        return _copy(comp.type, ptr)

    def get_mut(self, term, row):
        """Writable view of a WRITE term at `row` (stamps it changed)."""
        t, comp = self._term(term)
        w = self._query.world
        w._clear()
        ptr = _lib.weft_iter_get_mut(ctypes.byref(self._it), term, row, comp.size)
        if not ptr:
            w._check_slot()
            return None
        return _view(comp.type, ptr)

    def mark(self, term, row):
        self._query.world._check(_lib.weft_iter_mark(ctypes.byref(self._it), term, row))

    def set_if_neq(self, term, row, value):
        """Writes `value` if it differs from the row's; returns whether it did."""
        _, comp = self._term(term)
        value = _owned(value)
        changed = ctypes.c_bool(False)
        self._query.world._check(_lib.weft_iter_set_if_neq(
            ctypes.byref(self._it), term, row, ctypes.addressof(value),
            ctypes.sizeof(value), ctypes.byref(changed)))
        return changed.value


class Query:
    """A compiled query. Iterate it (`for chunk in query:`) for chunks;
    breaking out of the loop ends the iteration early (weft_iter_fini)."""

    def __init__(self, world, terms, flags=0):
        self.world = world
        self.terms = terms
        desc = WeftQueryDesc()
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
        self._ptr = world._handle(_lib.weft_query_create(world._ptr, ctypes.byref(desc)))
        world._queries.add(self)

    def destroy(self):
        if self._ptr and self.world._ptr:
            p, self._ptr = self._ptr, None
            self.world._queries.discard(self)
            self.world._check(_lib.weft_query_destroy(self.world._ptr, p))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()

    def _p(self):
        if not self._ptr:
            raise WeftError(ERR_INVALID_HANDLE, "query destroyed")
        return self._ptr

    def iter(self):
        """Generator of Chunk objects. While it runs, structural calls are
        deferred and applied when it ends."""
        w = self.world
        it = WeftIter()
        w._check(_lib.weft_query_iter(w._p(), self._p(), ctypes.byref(it)))
        done = False
        try:
            while _lib.weft_iter_next(ctypes.byref(it)):
                yield Chunk(self, it)
            done = True
        finally:
            if not done:
                _lib.weft_iter_fini(ctypes.byref(it))
            w._raise_pending()

    __iter__ = iter

    def each(self):
        """(entity, field copies...) per row; convenience, copies values."""
        for chunk in self.iter():
            cols = []
            for i, t in enumerate(self.terms):
                if t.access == ACCESS_NONE or t.oper in (OPER_WITH, OPER_WITHOUT) \
                        or t.component.type is None:
                    continue
                cols.append(chunk.column(i, mark=False) if t.access == ACCESS_WRITE
                            else chunk.column(i))
            ents = chunk.entities
            for r in range(chunk.count):
                yield (ents[r],) + tuple(
                    None if c is None else type(c[r]).from_buffer_copy(c[r]) for c in cols)

    def count(self):
        n = _lib.weft_query_count(self.world._p(), self._p())
        if n < 0:
            self.world._raise_last()
        return n

    def __len__(self):
        return self.count()

    def is_empty(self):
        return bool(_lib.weft_query_is_empty(self.world._p(), self._p()))

    def single(self):
        out = c_entity(0)
        self.world._check(_lib.weft_query_single(self.world._p(), self._p(),
                                                 ctypes.byref(out)))
        return out.value

    def matches(self, e):
        return bool(_lib.weft_query_matches(self.world._p(), self._p(), e))

    def get(self, e, term):
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
    def last_run(self):
        return _lib.weft_query_last_run(self.world._p(), self._p())

    @last_run.setter
    def last_run(self, tick):
        self.world._check(_lib.weft_query_set_last_run(self.world._p(), self._p(), tick))


# ------------------------------------------------------------ commands

class Commands:
    """A command buffer. Recorded calls are applied in FIFO order by apply().
    As a context manager it applies on a clean exit and is destroyed."""

    def __init__(self, world, ptr=None, owned=True):
        self.world = world
        self._owned = owned
        self._keep = []
        self._ptr = ptr or world._handle(_lib.weft_commands_create(world._p()))

    def _p(self):
        if not self._ptr:
            raise WeftError(ERR_INVALID_HANDLE, "command buffer destroyed")
        return self._ptr

    def spawn(self, *values):
        """Records a spawn; returns the reserved entity id at once."""
        arr, keep = self.world._values(values)
        w = self.world
        w._clear()
        e = _lib.weft_cmd_spawn(self._p(), arr, len(values))
        if not e:
            w._raise_last()
        return e

    def insert(self, e, *values, try_=False):
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

    def remove(self, e, component, try_=False):
        c = self.world.component_of(component)
        fn = _lib.weft_cmd_try_remove if try_ else _lib.weft_cmd_remove
        self.world._check(fn(self._p(), e, c.id))

    def despawn(self, e, try_=False):
        fn = _lib.weft_cmd_try_despawn if try_ else _lib.weft_cmd_despawn
        self.world._check(fn(self._p(), e))

    def resource_insert(self, value):
        comp, ptr, size, _ = self.world._value(value)
        self.world._check(_lib.weft_cmd_resource_insert(self._p(), comp.id, ptr, size))

    def resource_remove(self, component):
        c = self.world.component_of(component)
        self.world._check(_lib.weft_cmd_resource_remove(self._p(), c.id))

    def __len__(self):
        return _lib.weft_commands_count(self._p())

    def apply(self):
        """Applies and empties the buffer. Per-command failures do not stop
        the rest; the first is raised afterwards as WeftError."""
        self.world._check(_lib.weft_commands_apply(self.world._p(), self._p()))

    def destroy(self):
        if self._ptr and self._owned and self.world._ptr:
            _lib.weft_commands_destroy(self._ptr)
        self._ptr = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.apply()
        finally:
            self.destroy()


# ------------------------------------------------------------ events

class Event:
    """A registered custom event (payload_type: a ctypes struct or None)."""

    def __init__(self, eid, name, payload_type):
        self.id = eid
        self.name = name
        self.payload_type = payload_type

    def __int__(self):
        return self.id

    __index__ = __int__


class Trigger:
    """What an observer receives; valid only during the callback."""

    __slots__ = ("world", "_t", "_payload_type")

    def __init__(self, world, tptr, payload_type):
        self.world = world
        self._t = tptr.contents
        self._payload_type = payload_type

    event = property(lambda self: self._t.event)
    component = property(lambda self: self._t.component)
    entity = property(lambda self: self._t.entity)
    original = property(lambda self: self._t.original)

    @property
    def payload(self):
        """Copy of the payload (the event's struct type, else bytes; None
        without payload)."""
        t = self._t
        if not t.payload or not t.payload_size:
            return None
        if self._payload_type is not None:
            return _copy(self._payload_type, t.payload)
        return ctypes.string_at(t.payload, t.payload_size)

    @property
    def propagate(self):
        return bool(self._t.propagate)

    @propagate.setter
    def propagate(self, v):
        self._t.propagate = bool(v)

    def stop(self):
        """Stops propagation up ChildOf."""
        self._t.propagate = False


class Observer:
    """Handle of a registered observer."""

    def __init__(self, world, ptr, key):
        self.world = world
        self._ptr = ptr
        self.key = key

    @property
    def alive(self):
        return self.key in self.world._callbacks

    def destroy(self):
        if self._ptr and self.alive and self.world._ptr:
            self.world._check(_lib.weft_observer_destroy(self.world._ptr, self._ptr))
        self._ptr = None


# ------------------------------------------------------------ messages

class MessageType:
    def __init__(self, world, mid, ctype, name):
        self.world = world
        self.id = mid
        self.type = ctype
        self.name = name

    def reader(self):
        return MessageReader(self)


class MessageReader:
    """A reader with its own cursor; iterating yields copies of the unread
    messages in write order."""

    def __init__(self, mtype):
        self.mtype = mtype
        self.cursor = WeftMessageCursor()

    @property
    def missed(self):
        return self.cursor.missed

    def unread(self):
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


# ------------------------------------------------------------ world

class World:
    """A weft world. Use as a context manager or call close(). Every method
    runs on the thread that created the world (weft's driver thread)."""

    def __init__(self, entity_capacity_hint=0, logger=None):
        """`logger(level, status_name, message, file, line)` receives every
        error and warning the world records (optional)."""
        self._ptr = None
        self._by_type = {}      # ctypes type -> Component
        self._by_id = {}        # id -> Component
        self._events = {}       # id -> Event
        self._callbacks = {}    # observer key -> (trampoline, python fn)
        self._keep = []         # ctypes objects the world points at
        self._queries = set()
        self._pending = None    # first exception caught in a callback
        self._depth = 0         # nesting of Python callbacks on the stack
        self._next_key = 1
        desc = WeftWorldDesc()
        desc.entity_capacity_hint = entity_capacity_hint
        if logger is not None:
            def _log(user, level, status, message, file, line):
                self._enter()
                try:
                    logger(level, status_name(status), _s(message), _s(file), line)
                except BaseException as exc:   # must not unwind into C
                    self._store(exc)
                finally:
                    self._depth -= 1
            desc.logger.fn = LOG_FN(_log)
            self._keep.append(desc.logger.fn)
        self._free_user = FREE_USER_FN(self._on_free_user)
        ptr = _lib.weft_world_create(ctypes.byref(desc))
        if not ptr:
            raise WeftError(ERR_OUT_OF_MEMORY, "weft_world_create failed")
        self._ptr = ptr

    # -- lifetime
    def close(self):
        """Destroys the world (dtor hooks run, observers freed)."""
        if self._ptr:
            p, self._ptr = self._ptr, None
            for q in list(self._queries):
                q._ptr = None
            self._queries.clear()
            _lib.weft_world_destroy(p)
            self._callbacks.clear()
            self._keep.clear()
            self._raise_pending()

    destroy = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            if self._ptr:
                _lib.weft_world_destroy(self._ptr)
                self._ptr = None
        except Exception:
            pass

    @property
    def ptr(self):
        """The raw weft_world * (an int), for calling C directly."""
        return self._ptr

    def _p(self):
        if not self._ptr:
            raise WeftError(ERR_INVALID_HANDLE, "world closed")
        return self._ptr

    # -- errors and callbacks
    def _enter(self):
        self._depth += 1

    def _store(self, exc):
        if self._pending is None:
            self._pending = exc

    def _raise_pending(self):
        """Re-raises the first exception a callback caught, once no Python
        callback is on the stack (i.e. after the outer weft call)."""
        if self._pending is not None and self._depth == 0:
            exc, self._pending = self._pending, None
            raise exc

    def _clear(self):
        _lib.weft_clear_error(self._ptr)

    def _raise_last(self):
        self._raise_pending()
        st = _lib.weft_last_status(self._ptr)
        raise WeftError(st if st != OK else ERR_INTERNAL, _s(_lib.weft_last_error(self._ptr)))

    def _check_slot(self):
        """Raises when the error slot holds a failure (after _clear())."""
        self._raise_pending()
        if _lib.weft_last_status(self._ptr) != OK:
            self._raise_last()

    def _check(self, status):
        self._raise_pending()
        if status != OK:
            raise WeftError(status, _s(_lib.weft_last_error(self._ptr)))

    def _handle(self, h):
        self._raise_pending()
        if not h:
            self._raise_last()
        return h

    @property
    def last_status(self):
        return _lib.weft_last_status(self._p())

    @property
    def last_error(self):
        return _s(_lib.weft_last_error(self._p()))

    def clear_error(self):
        _lib.weft_clear_error(self._p())

    # -- components
    def register(self, ctype=None, name=None, storage=STORAGE_DEFAULT, flags=0,
                 align=None, requires=(), on_add=None, on_insert=None,
                 on_replace=None, on_remove=None, on_despawn=None):
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
            align = ctypes.alignment(ctype) if size else 0
        keep = []
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

    def tag(self, name, storage=STORAGE_DEFAULT):
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
                value = type(value).from_buffer_copy(value)
                keep.append(value)
                arr[i].value = ctypes.addressof(value)
                arr[i].size = ctypes.sizeof(value)
            else:
                c = self.component_of(r)
            arr[i].id = c.id
        keep.append(arr)
        return arr

    def require(self, component, *requires):
        """Adds requirements to an already registered component."""
        c = self.component_of(component)
        keep = []
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
                self._depth -= 1
        return hook

    def component_of(self, x):
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

    def lookup(self, name):
        """Component id registered under `name`, or 0."""
        return _lib.weft_component_lookup(self._p(), name.encode("utf-8"))

    def component_info(self, component):
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

    # -- entities
    def spawn(self, *values):
        """Spawns an entity with the given values (struct instances, tags,
        or (component, value) pairs) in one placement; returns its id."""
        if not values:
            return self._handle(_lib.weft_spawn(self._p()))
        arr, keep = self._values(values)
        return self._handle(_lib.weft_spawn_with(self._p(), arr, len(values)))

    spawn_with = spawn

    def spawn_bulk(self, n, *columns):
        """Spawns `n` entities with the same components. Each column is a
        ctypes array (or list) of n structs, a (component, array) pair, or a
        component / tag (default-construct all n). Returns the ids (a list)."""
        vals = (WeftValue * max(1, len(columns)))()
        keep = []
        for i, col in enumerate(columns):
            comp = None
            if isinstance(col, tuple):
                comp, col = self.component_of(col[0]), col[1]
            if isinstance(col, (list, tuple)):
                if len(col) != n:
                    raise ValueError("column %d has %d values, want %d" % (i, len(col), n))
                t = type(col[0]) if n else comp.type
                col = (t * n)(*col)
            if isinstance(col, ctypes.Array):
                if len(col) != n:
                    raise ValueError("column %d has %d values, want %d" % (i, len(col), n))
                if comp is None:
                    comp = self.component_of(col._type_)
                if not getattr(col, "_b_needsfree_", 1):
                    col = type(col).from_buffer_copy(col)
                keep.append(col)
                vals[i].id = comp.id
                vals[i].size = ctypes.sizeof(col._type_)
                vals[i].ptr = ctypes.addressof(col)
            else:
                comp = self.component_of(col)
                vals[i].id = comp.id
                vals[i].size = comp.size
                vals[i].ptr = None
        out = (c_entity * max(1, n))()
        self._check(_lib.weft_spawn_bulk(self._p(), vals, len(columns), n, out))
        return list(out[:n])

    def despawn(self, e):
        self._check(_lib.weft_despawn(self._p(), e))

    def is_alive(self, e):
        return bool(_lib.weft_is_alive(self._p(), e))

    def reserve(self):
        """Reserves an id (live after flush())."""
        return self._handle(_lib.weft_entity_reserve(self._p()))

    def flush(self):
        self._check(_lib.weft_entity_flush(self._p()))

    def insert(self, e, *values):
        """Adds or replaces one or more components (one row move)."""
        if len(values) == 1:
            comp, ptr, size, keep = self._value(values[0])
            self._check(_lib.weft_insert(self._p(), e, comp.id, ptr, size))
        else:
            arr, keep = self._values(values)
            self._check(_lib.weft_insert_many(self._p(), e, arr, len(values)))

    insert_many = insert

    def remove(self, e, component):
        """Removes a component (no-op when absent)."""
        self._check(_lib.weft_remove(self._p(), e, self.component_of(component).id))

    def has(self, e, component):
        return bool(_lib.weft_has(self._p(), e, self.component_of(component).id))

    def get(self, e, component):
        """A copy of e's value of `component`, or None when e lacks it.
        Raises WeftError on misuse (stale entity, size mismatch, tag)."""
        c = self.component_of(component)
        self._clear()
        ptr = _lib.weft_get(self._p(), e, c.id, c.size)
        if not ptr:
            self._check_slot()
            return None
        return _copy(c.type, ptr)

    def get_mut(self, e, component):
        """A writable struct *view* over e's value (stamps it changed), or
        None when e lacks it. The view is valid only until the next
        structural change (spawn, despawn, insert, remove, flush, applying
        commands, the end of an iteration); do not keep it longer."""
        c = self.component_of(component)
        self._clear()
        ptr = _lib.weft_get_mut(self._p(), e, c.id, c.size)
        if not ptr:
            self._check_slot()
            return None
        return _view(c.type, ptr)

    def ticks(self, e, component):
        """(added, changed) change ticks of e's component."""
        t = WeftTicks()
        self._check(_lib.weft_get_ticks(self._p(), e, self.component_of(component).id,
                                        ctypes.byref(t)))
        return t.added, t.changed

    def archetype_of(self, e):
        return _lib.weft_entity_archetype(self._p(), e)

    # -- resources
    def resource_insert(self, value, component=None):
        """Inserts or replaces a resource (a registered component type used
        as a singleton)."""
        if component is not None:
            value = (component, value)
        comp, ptr, size, keep = self._value(value)
        self._check(_lib.weft_resource_insert(self._p(), comp.id, ptr, size))

    def resource_get(self, component):
        """A copy of the resource, or None when absent."""
        c = self.component_of(component)
        self._clear()
        ptr = _lib.weft_resource_get(self._p(), c.id, c.size)
        if not ptr:
            self._check_slot()
            return None
        return _copy(c.type, ptr)

    def resource_get_mut(self, component):
        """Writable view of the resource (valid until it is removed or
        replaced), or None when absent."""
        c = self.component_of(component)
        self._clear()
        ptr = _lib.weft_resource_get_mut(self._p(), c.id, c.size)
        if not ptr:
            self._check_slot()
            return None
        return _view(c.type, ptr)

    def resource_has(self, component):
        return bool(_lib.weft_resource_has(self._p(), self.component_of(component).id))

    def resource_remove(self, component):
        self._check(_lib.weft_resource_remove(self._p(), self.component_of(component).id))

    # -- queries
    def query(self, *terms, flags=0):
        """Compiles a query. Terms: a component/type (read AND term) or a
        Term from read/write/with_/without/optional/or_/Added/Changed.
        Added(c)/Changed(c) of a component that another term already lists
        merge into that term (its filter bits), so
        query(write(Position), Changed(Position)) is one term; term indices
        count the remaining terms in order."""
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
        return Query(self, merged, flags)

    def disabled(self):
        """The built-in Disabled tag's Component."""
        cid = self._handle(_lib.weft_disabled(self._p()))
        if cid not in self._by_id:
            self._by_id[cid] = Component(self, cid, None, "weft.Disabled", 0, 0)
        return self._by_id[cid]

    # -- commands
    def commands(self):
        """A new command buffer (context manager: applies on exit)."""
        return Commands(self)

    def world_commands(self):
        """The world's own buffer (never destroyed by the binding)."""
        return Commands(self, self._handle(_lib.weft_world_commands(self._p())), owned=False)

    # -- events and observers
    def event(self, name, payload_type=None):
        """Registers a custom event; payload_type is a ctypes struct or None."""
        desc = WeftEventDesc()
        bname = name.encode("utf-8")
        desc.name = bname
        desc.payload_size = ctypes.sizeof(payload_type) if payload_type is not None else 0
        eid = self._handle(_lib.weft_event_register(self._p(), ctypes.byref(desc)))
        ev = Event(eid, name, payload_type)
        self._events[eid] = ev
        return ev

    def observe(self, event, fn, component=None, entity=0):
        """Registers `fn(trigger)` for a lifecycle event (ADD, INSERT,
        REPLACE, REMOVE, DESPAWN; needs `component`) or a custom Event. It
        runs inside the triggering call (structural calls it makes are
        deferred). Exceptions it raises are re-raised after that call."""
        eid = int(event)
        ev = self._events.get(eid)
        payload_type = ev.payload_type if ev is not None else None
        key = self._next_key
        self._next_key += 1

        def tramp(world, tptr, user):
            self._enter()
            try:
                fn(Trigger(self, tptr, payload_type))
            except BaseException as exc:   # must not unwind into C
                self._store(exc)
            finally:
                self._depth -= 1
        cfn = OBSERVER_FN(tramp)
        desc = WeftObserverDesc()
        desc.event = eid
        desc.component = self.component_of(component).id if component is not None else 0
        desc.entity = entity
        desc.fn = cfn
        desc.user = key
        desc.free_user = self._free_user
        self._callbacks[key] = (cfn, fn)
        try:
            ptr = self._handle(_lib.weft_observer_create(self._p(), ctypes.byref(desc)))
        except BaseException:
            self._callbacks.pop(key, None)
            raise
        return Observer(self, ptr, key)

    def observer(self, event, component=None, entity=0):
        """Decorator form of observe()."""
        def deco(fn):
            return self.observe(event, fn, component, entity)
        return deco

    def _on_free_user(self, user):
        # The observer is gone: drop its trampoline. Never raises.
        try:
            self._callbacks.pop(user, None)
        except BaseException:
            pass

    def trigger(self, event, target=0, payload=None, propagate=False):
        """Triggers a custom event synchronously."""
        ptr, size = None, 0
        if payload is not None:
            payload = _owned(payload)
            ptr, size = ctypes.addressof(payload), ctypes.sizeof(payload)
        self._check(_lib.weft_trigger_event(self._p(), int(event), target, ptr, size,
                                            propagate))

    # -- messages
    def message_type(self, ctype, name=None):
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

    def write_message(self, mtype, msg):
        msg = _owned(msg)
        self._check(_lib.weft_message_write(self._p(), mtype.id, ctypes.addressof(msg),
                                            ctypes.sizeof(msg)))

    def update_messages(self):
        """Swaps message buffers (once per frame); ages removed streams."""
        _lib.weft_messages_update(self._p())

    def removed(self, component):
        """A reader of entities that lose `component`."""
        return RemovedReader(self, component)

    # -- relationships and hierarchy
    def relationship(self, name, linked_despawn=False):
        """Registers a relationship; returns its source Component (values
        are entities; change them with relate())."""
        desc = WeftRelationshipDesc()
        bname = name.encode("utf-8")
        desc.name = bname
        desc.flags = RELATIONSHIP_LINKED_DESPAWN if linked_despawn else 0
        cid = self._handle(_lib.weft_relationship_register(self._p(), ctypes.byref(desc)))
        comp = Component(self, cid, c_entity_struct, name, 8, 8)
        self._by_id[cid] = comp
        return comp

    def child_of(self):
        """The built-in ChildOf relationship's Component."""
        cid = self._handle(_lib.weft_child_of(self._p()))
        if cid not in self._by_id:
            self._by_id[cid] = Component(self, cid, c_entity_struct, "ChildOf", 8, 8)
        return self._by_id[cid]

    def relate(self, source, rel, target):
        self._check(_lib.weft_relate(self._p(), source, self.component_of(rel).id, target))

    def unrelate(self, source, rel):
        self._check(_lib.weft_unrelate(self._p(), source, self.component_of(rel).id))

    def related(self, source, rel):
        return _lib.weft_related(self._p(), source, self.component_of(rel).id)

    @staticmethod
    def _entity_list(ptr, n):
        if not ptr or n.value <= 0:
            return []
        return list((c_entity * n.value).from_address(ctypes.addressof(ptr.contents)))

    def sources(self, target, rel):
        """Entities pointing at `target` through `rel` (a copied list)."""
        n = ctypes.c_int32(0)
        ptr = _lib.weft_related_sources(self._p(), target, self.component_of(rel).id,
                                        ctypes.byref(n))
        return self._entity_list(ptr, n)

    def set_parent(self, child, parent):
        self._check(_lib.weft_set_parent(self._p(), child, parent))

    def remove_parent(self, child):
        self._check(_lib.weft_remove_parent(self._p(), child))

    def parent(self, e):
        """The ChildOf parent of e, or 0."""
        return _lib.weft_parent(self._p(), e)

    def children(self, e):
        """e's children in order (a copied list)."""
        n = ctypes.c_int32(0)
        ptr = _lib.weft_children(self._p(), e, ctypes.byref(n))
        return self._entity_list(ptr, n)

    def ancestors(self, e, rel=None):
        """Parent first, root last."""
        rid = self.component_of(rel).id if rel is not None else self.child_of().id
        self._clear()
        n = _lib.weft_ancestors(self._p(), e, rid, None, 0)
        if n < 0:
            self._raise_last()
        out = (c_entity * max(1, n))()
        n = _lib.weft_ancestors(self._p(), e, rid, out, n)
        return list(out[:n])

    def descendants(self, e, rel=None):
        """Breadth first, e excluded."""
        rid = self.component_of(rel).id if rel is not None else self.child_of().id
        self._clear()
        n = _lib.weft_descendants(self._p(), e, rid, None, 0)
        if n < 0:
            self._raise_last()
        out = (c_entity * max(1, n))()
        n = _lib.weft_descendants(self._p(), e, rid, out, n)
        if n < 0:
            self._raise_last()
        return list(out[:n])

    # -- ticks, diagnostics
    @property
    def change_tick(self):
        return _lib.weft_world_change_tick(self._p())

    @change_tick.setter
    def change_tick(self, tick):
        _lib.weft_world_set_change_tick(self._p(), tick)

    def increment_change_tick(self):
        return _lib.weft_world_increment_change_tick(self._p())

    def stats(self):
        """A WeftWorldStats struct (fields as in weft.h; .as_dict())."""
        s = WeftWorldStats()
        self._check(_lib.weft_world_get_stats(self._p(), ctypes.byref(s)))
        return s

    def archetypes(self):
        """[(entity_count, [component ids])] for every archetype."""
        out = []
        for i in range(self.stats().archetypes):
            info = WeftArchetypeInfo()
            self._check(_lib.weft_archetype_info_get(self._p(), i, ctypes.byref(info)))
            ids = [info.components[k] for k in range(info.component_count)]
            out.append((info.entity_count, ids))
        return out

    def hash(self):
        """Canonical 64-bit hash of the world."""
        return _lib.weft_world_hash(self._p())

    def check(self):
        """Verifies the storage invariants; raises WeftError (CORRUPT)."""
        self._check(_lib.weft_world_check(self._p()))


class c_entity_struct(ctypes.Structure):
    """Value type of relationship source components: one weft_entity."""
    _fields_ = [("target", c_entity)]

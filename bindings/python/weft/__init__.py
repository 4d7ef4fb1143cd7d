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
  return a View over the world's memory, valid only until the next
  structural change (spawn, despawn, insert, remove, flush, applying
  commands, the end of an iteration). A View checks where the value lives
  before every use and raises WeftError once it is stale.
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
import weakref

__all__ = [
    "ABI_VERSION", "WeftError", "World", "Component", "Query", "Chunk",
    "Commands", "Observer", "Event", "MessageType", "MessageReader",
    "RemovedReader", "Term", "read", "write", "with_", "without",
    "optional", "or_", "Added", "Changed", "load_library",
    "ADD", "INSERT", "REPLACE", "REMOVE", "DESPAWN",
    "STORAGE_TABLE", "STORAGE_SPARSE", "COMPONENT_IMMUTABLE",
    "COMPONENT_MAIN_THREAD", "COMPONENT_NO_CHANGE_TICKS",
    "entity_index", "entity_generation",
    "Schedule", "Node", "Condition", "SystemContext", "Ambiguity", "QuerySpec",
    "terms", "SYSTEM_EXCLUSIVE", "SYSTEM_MAIN_THREAD", "SYSTEM_COMMANDS",
    "PYTHON_EXCEPTION_STATUS", "QUERY_SINGLE", "QUERY_POPULATED", "View",
]

#: WEFT_VERSION this module was written for (0.2.0).
ABI_VERSION = 300

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
    "WEFT_ERR_RELATIONSHIP", "WEFT_ERR_CALLBACK", "WEFT_ERR_BAD_FORMAT",
    "WEFT_ERR_TYPE_MISMATCH",
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
QUERY_SINGLE = 1 << 2      # a system query: run only when exactly one entity matches
QUERY_POPULATED = 1 << 3   # a system query: run only when at least one matches
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


# Systems and schedules.
SYSTEM_EXCLUSIVE = 1 << 0
SYSTEM_MAIN_THREAD = 1 << 1
SYSTEM_COMMANDS = 1 << 2
ORDER_IGNORE_DEFERRED = 1 << 0
NODE_SET = 0x80000000
MAX_SYSTEM_QUERIES = 16
MAX_SYSTEM_RESOURCES = 32
MAX_SYSTEM_MESSAGES = 16

SYSTEM_FN = ctypes.CFUNCTYPE(None, _vp, _vp)
CONDITION_FN = ctypes.CFUNCTYPE(ctypes.c_bool, _vp, _vp)
LOCAL_FN = ctypes.CFUNCTYPE(None, _vp, _vp)
JOB_FN = ctypes.CFUNCTYPE(None, _vp)
JOB_SUBMIT_FN = ctypes.CFUNCTYPE(None, _vp, JOB_FN, _vp)
JOB_HELP_FN = ctypes.CFUNCTYPE(None, _vp)
CHUNK_FN = ctypes.CFUNCTYPE(None, _vp, _vp, _vp)   # (weft_iter *, weft_commands *, user)


class WeftResourceUse(ctypes.Structure):
    _fields_ = [("id", c_component), ("access", ctypes.c_int32)]


class WeftMessageUse(ctypes.Structure):
    _fields_ = [("type", c_message_type), ("access", ctypes.c_int32)]


class WeftLocalDesc(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("align", ctypes.c_size_t),
                ("init", LOCAL_FN), ("fini", LOCAL_FN)]


class WeftSystemDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("name", ctypes.c_char_p),
                ("fn", SYSTEM_FN),
                ("user", _vp),
                ("queries", ctypes.POINTER(WeftQueryDesc)),
                ("query_count", ctypes.c_int32),
                ("resources", ctypes.POINTER(WeftResourceUse)),
                ("resource_count", ctypes.c_int32),
                ("messages", ctypes.POINTER(WeftMessageUse)),
                ("message_count", ctypes.c_int32),
                ("flags", ctypes.c_uint32),
                ("local", WeftLocalDesc),
                ("query_groups", ctypes.POINTER(ctypes.c_int32)),
                ("removed", ctypes.POINTER(c_component)),
                ("removed_count", ctypes.c_int32),
                ("_end_canary", ctypes.c_uint32)]


class WeftConditionDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("name", ctypes.c_char_p),
                ("fn", CONDITION_FN),
                ("user", _vp),
                ("queries", ctypes.POINTER(WeftQueryDesc)),
                ("query_count", ctypes.c_int32),
                ("resources", ctypes.POINTER(WeftResourceUse)),
                ("resource_count", ctypes.c_int32),
                ("messages", ctypes.POINTER(WeftMessageUse)),
                ("message_count", ctypes.c_int32),
                ("_end_canary", ctypes.c_uint32)]


class WeftAmbiguity(ctypes.Structure):
    _fields_ = [("a", ctypes.c_uint32), ("b", ctypes.c_uint32),
                ("component_count", ctypes.c_int32),
                ("components", ctypes.POINTER(c_component))]


class WeftSystemStats(ctypes.Structure):
    _fields_ = [("runs", ctypes.c_uint64), ("skipped", ctypes.c_uint64),
                ("failures", ctypes.c_uint64), ("total_ns", ctypes.c_uint64),
                ("last_ns", ctypes.c_uint64)]

    def as_dict(self):
        return {name: getattr(self, name) for name, _ in self._fields_}

    def __repr__(self):
        return "SystemStats(%s)" % ", ".join(
            "%s=%r" % kv for kv in self.as_dict().items())


class WeftJobSystem(ctypes.Structure):
    _fields_ = [("user", _vp), ("workers", ctypes.c_uint32),
                ("submit", JOB_SUBMIT_FN), ("help", JOB_HELP_FN)]


class WeftFrameDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("schedules", ctypes.POINTER(_vp)),
                ("schedule_count", ctypes.c_int32),
                ("fixed", _vp),
                ("fixed_before", ctypes.c_int32),
                ("fixed_step", ctypes.c_double),
                ("max_delta", ctypes.c_double),
                ("no_message_update", ctypes.c_bool),
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
_sch = _vp       # weft_schedule *
_cond = _vp      # weft_condition *
_ctx = _vp       # weft_system_ctx *
_node = ctypes.c_uint32   # weft_node

# name: (restype, argtypes) -- mirrors include/weft.h.
_PROTOTYPES = {
    "weft_abi_version": (_i32, []),
    "weft_status_name": (_cstr, [c_status]),
    "weft_status_str": (_cstr, [c_status]),
    "weft_entity_index": (_u32, [c_entity]),
    "weft_entity_generation": (_u32, [c_entity]),
    # world
    "weft_world_create": (_w, [_P(WeftWorldDesc)]),
    "weft_world_destroy": (c_status, [_w]),
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
    # systems and schedules
    "weft_schedule_create": (_sch, [_w, _cstr]),
    "weft_schedule_lookup": (_sch, [_w, _cstr]),
    "weft_schedule_destroy": (c_status, [_sch]),
    "weft_schedule_add_system": (_node, [_sch, _P(WeftSystemDesc)]),
    "weft_schedule_add_apply_point": (_node, [_sch, _cstr]),
    "weft_schedule_ensure_set": (_node, [_sch, _cstr]),
    "weft_schedule_add_to_set": (c_status, [_sch, _node, _node]),
    "weft_schedule_add_order": (c_status, [_sch, _node, _node, _u32]),
    "weft_schedule_add_chain": (c_status, [_sch, _P(_node), _i32, _u32]),
    "weft_schedule_add_ambiguous_pair": (c_status, [_sch, _node, _node]),
    "weft_schedule_add_ambiguous_component": (c_status, [_sch, c_component]),
    "weft_schedule_set_auto_sync": (c_status, [_sch, _bool]),
    "weft_schedule_set_apply_final": (c_status, [_sch, _bool]),
    "weft_schedule_apply_pending": (c_status, [_sch]),
    "weft_schedule_set_profiling": (c_status, [_sch, _bool]),
    "weft_condition_create": (_cond, [_sch, _P(WeftConditionDesc)]),
    "weft_condition_and": (_cond, [_sch, _cond, _cond]),
    "weft_condition_and_eager": (_cond, [_sch, _cond, _cond]),
    "weft_condition_or": (_cond, [_sch, _cond, _cond]),
    "weft_condition_not": (_cond, [_sch, _cond]),
    "weft_condition_run_once": (_cond, [_sch]),
    "weft_condition_resource_changed": (_cond, [_sch, c_component]),
    "weft_condition_resource_exists": (_cond, [_sch, c_component]),
    "weft_condition_on_message": (_cond, [_sch, c_message_type]),
    "weft_schedule_add_condition": (c_status, [_sch, _node, _cond]),
    "weft_schedule_build": (c_status, [_sch]),
    "weft_schedule_build_count": (_u32, [_sch]),
    "weft_schedule_run": (c_status, [_sch, ctypes.c_double]),
    "weft_schedule_node_count": (_i32, [_sch]),
    "weft_schedule_node_name": (_cstr, [_sch, _node]),
    "weft_schedule_position": (_i32, [_sch, _node]),
    "weft_schedule_sync_count": (_i32, [_sch]),
    "weft_schedule_has_edge": (_bool, [_sch, _node, _node]),
    "weft_schedule_ambiguity_count": (_i32, [_sch]),
    "weft_schedule_ambiguity": (c_status, [_sch, _i32, _P(WeftAmbiguity)]),
    "weft_schedule_system_stats": (c_status, [_sch, _node, _P(WeftSystemStats)]),
    "weft_schedule_max_concurrency": (_i32, [_sch]),
    "weft_schedule_trace_json": (_sz, [_sch, _vp, _sz]),
    "weft_schedule_dot": (_sz, [_sch, _vp, _sz]),
    "weft_world_set_threads": (c_status, [_w, _i32]),
    "weft_world_set_job_system": (c_status, [_w, _P(WeftJobSystem)]),
    "weft_world_threads": (_i32, [_w]),
    # the system context
    "weft_system_name": (_cstr, [_ctx]),
    "weft_system_delta": (ctypes.c_double, [_ctx]),
    "weft_system_this_run": (_u32, [_ctx]),
    "weft_system_last_run": (_u32, [_ctx]),
    "weft_system_worker": (_i32, [_ctx]),
    "weft_system_local": (_vp, [_ctx]),
    "weft_system_world": (_w, [_ctx]),
    "weft_system_commands": (_cmds, [_ctx]),
    "weft_system_iter": (c_status, [_ctx, _i32, _it]),
    "weft_system_count": (_i64, [_ctx, _i32]),
    "weft_system_get": (_vp, [_ctx, _i32, c_entity, _i32, _sz]),
    "weft_system_get_mut": (_vp, [_ctx, _i32, c_entity, _i32, _sz]),
    "weft_system_resource": (_vp, [_ctx, c_component, _sz]),
    "weft_system_resource_mut": (_vp, [_ctx, c_component, _sz]),
    "weft_system_message_write": (c_status, [_ctx, c_message_type, _vp, _sz]),
    "weft_system_message_read": (_vp, [_ctx, c_message_type, _sz]),
    "weft_system_removed_read": (c_entity, [_ctx, c_component]),
    "weft_system_fail": (None, [_ctx, c_status, _cstr]),
    "weft_system_par_each": (c_status, [_ctx, _i32, CHUNK_FN, _vp, _i32]),
    # frames
    "weft_frame_configure": (c_status, [_w, _P(WeftFrameDesc)]),
    "weft_frame_run": (c_status, [_w, ctypes.c_double]),
    "weft_frame_fixed_steps": (_i32, [_w]),
    "weft_frame_accumulator": (ctypes.c_double, [_w]),
}


def _candidate_paths():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", "..", ".."))
    soname = "libweft.so.0.%d" % (ABI_VERSION // 100 % 100)   # see CMakeLists.txt
    names = [soname, "libweft.so", "libweft.dylib", "weft.dll"]
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
    missing = []
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            # A library of the right version that lacks a symbol was built
            # from an older source tree: the rest of the binding still
            # works; calling the missing function raises.
            missing.append(name)
            setattr(lib, name, _missing_symbol(lib, name))
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    lib._weft_missing = tuple(missing)
    return lib


def _missing_symbol(lib, name):
    def missing(*args):
        raise OSError("weft: %s is not exported by %s (a library built from "
                      "an older source tree?)" % (name, lib._name))
    missing.__name__ = name
    return missing


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
    weft_last_error text. `recorded` is true when weft itself recorded the
    failure (so, inside a system, it already fails the system's run)."""

    recorded = False

    def __init__(self, status, message="", recorded=False):
        self.status = int(status)
        self.name = status_name(self.status)
        self.message = message
        self.recorded = recorded
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
    def type(self):
        """The ctypes type viewed."""
        return type(self._obj)

    def copy(self):
        """An owned copy (a ctypes object that no longer refers to the world)."""
        obj = self._get()
        return type(obj).from_buffer_copy(obj)

    def __getattr__(self, name):
        return self._wrap(getattr(self._get(), name))

    def __setattr__(self, name, value):
        setattr(self._get(), name, _owned(value) if isinstance(value, View) else value)

    def __getitem__(self, i):
        return self._wrap(self._get()[i])

    def __setitem__(self, i, value):
        self._get()[i] = _owned(value) if isinstance(value, View) else value

    def __len__(self):
        return len(self._get())

    def __iter__(self):
        obj = self._get()
        return iter([self._wrap(obj[i]) for i in range(len(obj))])

    def __repr__(self):
        state = "live" if self._live() else "stale"
        return "<weft.View of %s (%s)>" % (self._what, state)


def _checked_view(ctype, addr, what, resolve):
    """A View of `ctype` at `addr`, live while resolve() (the value's
    current address, or None; it must have no side effects) equals addr."""
    def live():
        try:
            return resolve() == addr
        except WeftError:
            return False
    return View(ctype.from_address(addr), live, what)


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
        q = self._query
        q._clear()
        it = ctypes.byref(self._it)
        if t.access == ACCESS_WRITE:
            fn = _lib.weft_iter_field_mut if mark else _lib.weft_iter_field_mut_nomark
            ptr = fn(it, term, comp.size)
        else:
            ptr = _lib.weft_iter_field(it, term, comp.size)
        if not ptr:
            return q._absent(self, term)
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
        q = self._query
        q._clear()
        ptr = _lib.weft_iter_get(ctypes.byref(self._it), term, row, comp.size)
        if not ptr:
            return q._absent(self, term, row)
        return _copy(comp.type, ptr)

    def get_mut(self, term, row):
        """Writable view of a WRITE term at `row` (stamps it changed)."""
        t, comp = self._term(term)
        q = self._query
        q._clear()
        ptr = _lib.weft_iter_get_mut(ctypes.byref(self._it), term, row, comp.size)
        if not ptr:
            return q._absent(self, term, row)
        return _view(comp.type, ptr)

    def mark(self, term, row):
        self._query._check(_lib.weft_iter_mark(ctypes.byref(self._it), term, row))

    def set_if_neq(self, term, row, value):
        """Writes `value` if it differs from the row's; returns whether it did."""
        _, comp = self._term(term)
        value = _owned(value)
        changed = ctypes.c_bool(False)
        self._query._check(_lib.weft_iter_set_if_neq(
            ctypes.byref(self._it), term, row, ctypes.addressof(value),
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


class Query:
    """A compiled query. Iterate it (`for chunk in query:`) for chunks;
    breaking out of the loop ends the iteration early (weft_iter_fini)."""

    def __init__(self, world, terms, flags=0):
        self.world = world
        self.terms = terms
        desc = WeftQueryDesc()
        _fill_query_desc(desc, terms, flags)
        self._ptr = world._handle(_lib.weft_query_create(world._ptr, ctypes.byref(desc)))
        world._queries.add(self)

    # Error-slot hooks used by Chunk (a system's queries use other ones).
    def _clear(self):
        self.world._clear()

    def _absent(self, chunk, term, row=None):
        self.world._check_slot()
        return None

    def _check(self, status):
        self.world._check(status)

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
        self._schedules = {}    # weft_schedule * -> Schedule
        self._frame = ()        # schedules the frame plan points at
        self._system_exc = None # exceptions systems/conditions raised in a run
        self._in_system = 0     # Python systems/conditions on the stack
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
        """Destroys the world (dtor hooks run, observers freed). Raises
        WeftError (WRONG_PHASE) from inside one of the world's callbacks,
        where weft refuses and the world stays usable."""
        if self._ptr:
            destroyed = False
            if self._depth:
                # inside a callback of this world: weft refuses
                self._check(_lib.weft_world_destroy(self._ptr))
                destroyed = True
            p, self._ptr = self._ptr, None
            for q in list(self._queries):
                q._ptr = None
            self._queries.clear()
            if not destroyed:
                _lib.weft_world_destroy(p)
            for sch in list(self._schedules.values()):
                sch._forget()
            self._schedules.clear()
            self._frame = ()
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

    # While a system runs, weft records the errors of the calls it makes
    # in the run's error sink (reported by weft_schedule_run), not in the
    # world's slot: the slot then says nothing about those calls, so inside
    # a system the binding neither clears nor reads it.
    _IN_SYSTEM_MESSAGE = "failed inside a system (schedule.run() reports weft's message)"

    def _clear(self):
        if not self._in_system:
            _lib.weft_clear_error(self._ptr)

    def _raise_last(self):
        self._raise_pending()
        if self._in_system:
            raise WeftError(ERR_INTERNAL, self._IN_SYSTEM_MESSAGE, recorded=True)
        st = _lib.weft_last_status(self._ptr)
        raise WeftError(st if st != OK else ERR_INTERNAL, _s(_lib.weft_last_error(self._ptr)),
                        recorded=True)

    def _check_slot(self):
        """Raises when the error slot holds a failure (after _clear()).
        Inside a system a NULL result reads as "absent" (see above)."""
        self._raise_pending()
        if not self._in_system and _lib.weft_last_status(self._ptr) != OK:
            self._raise_last()

    def _check(self, status):
        self._raise_pending()
        if status != OK:
            msg = self._IN_SYSTEM_MESSAGE if self._in_system \
                else _s(_lib.weft_last_error(self._ptr))
            raise WeftError(status, msg, recorded=True)

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
        """A writable View over e's value (stamps it changed), or None when
        e lacks it. The view is valid only until the next structural change
        (spawn, despawn, insert, remove, flush, applying commands, the end
        of an iteration); used later it raises WeftError (see View)."""
        c = self.component_of(component)
        self._clear()
        ptr = _lib.weft_get_mut(self._p(), e, c.id, c.size)
        if not ptr:
            self._check_slot()
            return None

        def resolve():
            # neither call records an error: a dead entity or a missing
            # component is an expected outcome (weft.h)
            p = self._ptr
            return p and _lib.weft_is_alive(p, e) and _lib.weft_get(p, e, c.id, c.size)
        return _checked_view(c.type, ptr, "%s of entity %#x" % (c.name, e), resolve)

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
        """Writable View of the resource (valid until it is removed or
        replaced; raises WeftError when used later), or None when absent."""
        c = self.component_of(component)
        self._clear()
        ptr = _lib.weft_resource_get_mut(self._p(), c.id, c.size)
        if not ptr:
            self._check_slot()
            return None

        def resolve():
            p = self._ptr
            return p and _lib.weft_resource_get(p, c.id, c.size)
        return _checked_view(c.type, ptr, "resource %s" % c.name, resolve)

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

    # -- schedules, executor, frames
    def schedule(self, name):
        """Creates an empty Schedule named `name` (WeftError
        ALREADY_EXISTS when the name is taken; see schedule_lookup)."""
        ptr = self._handle(_lib.weft_schedule_create(self._p(), name.encode("utf-8")))
        sch = Schedule(self, ptr, name)
        self._schedules[ptr] = sch
        return sch

    def schedule_lookup(self, name):
        """The Schedule named `name`, or None."""
        ptr = _lib.weft_schedule_lookup(self._p(), name.encode("utf-8"))
        if not ptr:
            return None
        sch = self._schedules.get(ptr)
        if sch is None:   # created from C: no Python systems in it
            sch = self._schedules[ptr] = Schedule(self, ptr, name)
        return sch

    def schedules(self):
        """The Schedules created or looked up through this World."""
        return list(self._schedules.values())

    def set_threads(self, threads):
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

    def frame_configure(self, schedules=(), fixed=None, fixed_before=None,
                        fixed_step=0.0, max_delta=0.0, no_message_update=False):
        """Sets the plan frame_run() follows: `schedules` in order every
        frame, and the optional `fixed` schedule run floor(acc / step)
        times per frame (dt = fixed_step, 0: 1/64 s) before
        schedules[fixed_before] (default: after all). max_delta clamps a
        frame's dt (0: 0.25 s). The plan keeps the Schedule objects alive."""
        schedules = list(schedules)
        arr = (_vp * max(1, len(schedules)))()
        for i, sch in enumerate(schedules):
            arr[i] = sch._p()
        desc = WeftFrameDesc()
        desc.schedules = ctypes.cast(arr, _P(_vp)) if schedules else None
        desc.schedule_count = len(schedules)
        desc.fixed = fixed._p() if fixed is not None else None
        desc.fixed_before = len(schedules) if fixed_before is None else fixed_before
        desc.fixed_step = fixed_step
        desc.max_delta = max_delta
        desc.no_message_update = no_message_update
        self._check(_lib.weft_frame_configure(self._p(), ctypes.byref(desc)))
        self._frame = tuple(schedules) + ((fixed,) if fixed is not None else ())

    def frame_run(self, dt):
        """Runs one frame of `dt` seconds (see weft_frame_run). Every
        schedule runs; the first failure is raised afterwards as WeftError
        (chained to the Python exception when a Python system raised)."""
        p = self._p()
        outer, self._system_exc = self._system_exc, None
        try:
            status = _lib.weft_frame_run(p, dt)
            failures = self._system_exc
        finally:
            self._system_exc = outer
        self._finish_run(status, failures)

    @property
    def frame_fixed_steps(self):
        """Fixed steps run by the last frame."""
        return _lib.weft_frame_fixed_steps(self._p())

    @property
    def frame_accumulator(self):
        """Seconds left in the fixed-step accumulator."""
        return _lib.weft_frame_accumulator(self._p())

    def _finish_run(self, status, failures):
        """Raises what a schedule or frame run left: an exception of an
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


# ------------------------------------------------------------ systems and schedules

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

    def __init__(self, terms, flags=0):
        self.terms = tuple(terms)
        self.flags = flags


def terms(*ts, flags=0):
    """One query of a system: terms(write(Position), read(Velocity))."""
    return QuerySpec(ts, flags)


class _SystemQuery:
    """A system's query as Chunk sees it: resolved terms, and error hooks
    that leave the world's error slot alone (a system may run while C
    systems run on other threads); weft records a system's own misuse as
    the system's failure, which schedule.run() raises."""

    __slots__ = ("world", "terms", "index", "system")

    def __init__(self, world, terms, index, system):
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


class SystemContext:
    """What a Python system or condition receives; valid only during the
    call (its methods raise afterwards). Chunks, columns and views it hands
    out are valid at most as long (columns: until the next chunk)."""

    __slots__ = ("schedule", "_info", "_ptr", "_cmds", "_open")

    def __init__(self, schedule, info, ptr):
        self.schedule = schedule
        self._info = info
        self._ptr = ptr
        self._cmds = None
        self._open = None

    def _p(self):
        if not self._ptr:
            raise WeftError(ERR_WRONG_PHASE, "system context used after its system returned")
        return self._ptr

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
    def world(self):
        """The World, for exclusive systems only (WeftError WRONG_PHASE for
        others: they touch the world through the context)."""
        if not _lib.weft_system_world(self._p()):
            raise WeftError(ERR_WRONG_PHASE, "not an exclusive system: only exclusive "
                            "systems may use the world directly", recorded=True)
        return self.schedule.world

    @property
    def name(self):
        return _s(_lib.weft_system_name(self._p()))

    @property
    def delta(self):
        """dt passed to the run (the fixed step inside a frame's fixed
        schedule)."""
        return _lib.weft_system_delta(self._p())

    @property
    def this_run(self):
        return _lib.weft_system_this_run(self._p())

    @property
    def last_run(self):
        return _lib.weft_system_last_run(self._p())

    @property
    def worker(self):
        """The executor worker running the call (0 .. threads - 1)."""
        return _lib.weft_system_worker(self._p())

    @property
    def local(self):
        """A view of the system's local state (the `local` ctypes type given
        to add_system; zeroed when the system was added), or None."""
        ptr = _lib.weft_system_local(self._p())
        if not ptr or self._info.local is None:
            return None
        return _view(self._info.local, ptr)

    @property
    def commands(self):
        """The system's command buffer (a Commands; applied at the next sync
        point). Conditions have none."""
        if self._cmds is None:
            ptr = _lib.weft_system_commands(self._p())
            if not ptr:
                raise WeftError(ERR_INVALID_ARG, "conditions have no command buffer")
            self._cmds = Commands(self.schedule.world, ptr, owned=False)
        return self._cmds

    def _query(self, query):
        qs = self._info.queries
        if not 0 <= query < len(qs):
            raise IndexError("%r has %d queries, no query %d" % (self._info.name, len(qs), query))
        return qs[query]

    def iter(self, query=0):
        """Chunks of the system's query number `query`, with this run's
        ticks (Added/Changed since the system's previous run). Columns are
        ctypes arrays of the component structs, as for Query.iter()."""
        sq = self._query(query)
        ptr = self._p()
        g = self._iter(ptr, sq)
        if self._open is None:
            self._open = weakref.WeakSet()
        self._open.add(g)
        return g

    def _iter(self, ptr, sq):
        it = WeftIter()
        st = _lib.weft_system_iter(ptr, sq.index, ctypes.byref(it))
        if st != OK:
            raise WeftError(st, "weft_system_iter(%d) failed" % sq.index, recorded=True)
        done = False
        try:
            while _lib.weft_iter_next(ctypes.byref(it)):
                yield Chunk(sq, it)
            done = True
        finally:
            if not done:
                _lib.weft_iter_fini(ctypes.byref(it))

    def each(self, query=0):
        """(entity, field copies...) per row of query `query`."""
        sq = self._query(query)
        for chunk in self.iter(query):
            cols = []
            for i, t in enumerate(sq.terms):
                if t.access == ACCESS_NONE or t.oper in (OPER_WITH, OPER_WITHOUT) \
                        or t.component.type is None:
                    continue
                cols.append(chunk.column(i, mark=False) if t.access == ACCESS_WRITE
                            else chunk.column(i))
            ents = chunk.entities
            for r in range(chunk.count):
                yield (ents[r],) + tuple(
                    None if c is None else type(c[r]).from_buffer_copy(c[r]) for c in cols)

    def count(self, query=0):
        """Entities matched by query `query` (filters ignored)."""
        sq = self._query(query)
        n = _lib.weft_system_count(self._p(), sq.index)
        if n < 0:
            raise WeftError(ERR_INVALID_ARG, "weft_system_count(%d) failed" % sq.index,
                            recorded=True)
        return n

    def get(self, query, e, term):
        """Copy of term `term` of entity `e` through query `query`, or None
        when e does not match."""
        sq = self._query(query)
        comp = sq.terms[term].component
        ptr = _lib.weft_system_get(self._p(), sq.index, e, term, comp.size)
        return _copy(comp.type, ptr) if ptr else None

    def get_mut(self, query, e, term):
        """Writable view of a WRITE term of `e` (marks it changed), or None
        when e does not match."""
        sq = self._query(query)
        comp = sq.terms[term].component
        ptr = _lib.weft_system_get_mut(self._p(), sq.index, e, term, comp.size)
        if not ptr:
            return None

        def resolve():
            # weft_system_get: the same lookup without the change mark
            p = self._ptr
            return p and _lib.weft_system_get(p, sq.index, e, term, comp.size)
        return _checked_view(comp.type, ptr, "%s of entity %#x" % (comp.name, e), resolve)

    def _resource_comp(self, component, want_write):
        comp = self.schedule.world.component_of(component)
        access = self._info.resources.get(comp.id)
        if access is None or (want_write and access != ACCESS_WRITE):
            raise WeftError(ERR_ACCESS_VIOLATION, "resource %s is not declared %s"
                            % (comp.name, "WRITE" if want_write else "READ or WRITE"))
        return comp

    def resource(self, component):
        """Copy of a resource the system declared (READ or WRITE), or None
        when it is absent."""
        comp = self._resource_comp(component, False)
        ptr = _lib.weft_system_resource(self._p(), comp.id, comp.size)
        return _copy(comp.type, ptr) if ptr else None

    def resource_mut(self, component):
        """Writable view of a resource declared WRITE (marks it changed),
        or None when it is absent."""
        comp = self._resource_comp(component, True)
        ptr = _lib.weft_system_resource_mut(self._p(), comp.id, comp.size)
        if not ptr:
            return None

        def resolve():
            p = self._ptr
            return p and _lib.weft_system_resource(p, comp.id, comp.size)
        return _checked_view(comp.type, ptr, "resource %s" % comp.name, resolve)

    def _message(self, mtype, want_write):
        entry = self._info.messages.get(mtype.id)
        if entry is None or entry[1] != (ACCESS_WRITE if want_write else ACCESS_READ):
            raise WeftError(ERR_ACCESS_VIOLATION, "message %s is not declared %s"
                            % (mtype.name, "WRITE" if want_write else "READ"))

    def read(self, mtype):
        """Next unread message (a copy) of a type declared READ, or None."""
        self._message(mtype, False)
        ptr = _lib.weft_system_message_read(self._p(), mtype.id, ctypes.sizeof(mtype.type))
        return _copy(mtype.type, ptr) if ptr else None

    def messages(self, mtype):
        """Every unread message of a type declared READ (copies)."""
        while True:
            m = self.read(mtype)
            if m is None:
                return
            yield m

    def write(self, mtype, msg):
        """Writes a message of a type declared WRITE."""
        self._message(mtype, True)
        msg = _owned(msg)
        st = _lib.weft_system_message_write(self._p(), mtype.id, ctypes.addressof(msg),
                                            ctypes.sizeof(msg))
        if st != OK:
            raise WeftError(st, "writing a %s message failed" % mtype.name, recorded=True)

    write_message = write

    def removed(self, component):
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

    def fail(self, status, message=None):
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

    def __int__(self):
        return self.id

    __index__ = __int__

    def __eq__(self, other):
        return isinstance(other, Node) and other.schedule is self.schedule \
            and other.id == self.id

    def __hash__(self):
        return hash((id(self.schedule), self.id))

    @property
    def is_set(self):
        return bool(self.id & NODE_SET)

    def before(self, *others, ignore_deferred=False):
        for o in others:
            self.schedule.add_order(self, o, ignore_deferred=ignore_deferred)
        return self

    def after(self, *others, ignore_deferred=False):
        for o in others:
            self.schedule.add_order(o, self, ignore_deferred=ignore_deferred)
        return self

    def in_set(self, *sets):
        for st in sets:
            self.schedule.add_to_set(self, st)
        return self

    def run_if(self, *conditions):
        for c in conditions:
            self.schedule.add_condition(self, c)
        return self

    def ambiguous_with(self, *others):
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

    def __and__(self, other):
        return self.schedule.and_(self, other)

    def __or__(self, other):
        return self.schedule.or_(self, other)

    def __invert__(self):
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
    def names(self):
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
        return self._ptr

    def _forget(self):
        self._ptr = None
        self._callbacks.clear()

    def destroy(self):
        """Destroys the schedule (its systems, conditions and unapplied
        commands) and releases its trampolines."""
        if self._ptr and self.world._ptr:
            self.world._check(_lib.weft_schedule_destroy(self._ptr))
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

    def _system_trampoline(self, fn, info):
        world = self.world
        sched = self

        def tramp(ctx, user):
            world._depth += 1
            world._in_system += 1
            c = None
            try:
                c = SystemContext(sched, info, ctx)
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
                world._depth -= 1
        return tramp

    def _condition_trampoline(self, fn, info):
        world = self.world
        sched = self

        def tramp(ctx, user):
            world._depth += 1
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
                world._depth -= 1
            return result
        return tramp

    def add_system(self, fn, name=None, queries=(), resources=(), messages=(), *,
                   query=None, exclusive=False, commands=False, main_thread=None,
                   flags=0, local=None, user=None, query_groups=None, removed=(),
                   in_set=None, before=(), after=(), run_if=None):
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
            arr = (ctypes.c_int32 * max(1, len(groups)))(*groups)
            desc.query_groups = arr
            keep.append(arr)
        removed = [self.world.component_of(c) for c in removed]
        if removed:
            arr = (c_component * len(removed))(*[c.id for c in removed])
            desc.removed = arr
            desc.removed_count = len(removed)
            keep.append(arr)
            info.removed = {c.id for c in removed}
        if local is not None:
            if not _is_struct_type(local):
                raise TypeError("local is a ctypes.Structure subclass")
            desc.local.size = ctypes.sizeof(local)
            desc.local.align = ctypes.alignment(local)
            info.local = local
        if is_c:
            cfn = fn if isinstance(fn, SYSTEM_FN) else SYSTEM_FN(
                fn if isinstance(fn, int) else ctypes.cast(fn, _vp).value)
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

    def system(self, *args, **kwargs):
        """Decorator form of add_system: @schedule.system(query=[...]).
        The decorated name is bound to the system's Node."""
        if len(args) == 1 and callable(args[0]) and not kwargs \
                and not isinstance(args[0], (list, tuple, QuerySpec)):
            return self.add_system(args[0])

        def deco(fn):
            return self.add_system(fn, *args, **kwargs)
        return deco

    def add_apply_point(self, name):
        """Adds an explicit apply point (commands of every system before it
        are applied when it runs)."""
        nid = self.world._handle(_lib.weft_schedule_add_apply_point(self._p(),
                                                                    name.encode("utf-8")))
        return self._add_node(nid, name)

    def ensure_set(self, name):
        """The set named `name` (created on first use)."""
        nid = self.world._handle(_lib.weft_schedule_ensure_set(self._p(), name.encode("utf-8")))
        n = self._nodes.get(nid)
        return n if n is not None else self._add_node(nid, name)

    def add_to_set(self, node, set_):
        self.world._check(_lib.weft_schedule_add_to_set(self._p(), self._node(node),
                                                        self._node(set_)))

    def add_order(self, before, after, ignore_deferred=False):
        """`before` finishes before `after` starts (nodes or sets)."""
        self.world._check(_lib.weft_schedule_add_order(
                self._p(), self._node(before), self._node(after),
                ORDER_IGNORE_DEFERRED if ignore_deferred else 0))

    def add_chain(self, *nodes, ignore_deferred=False):
        """Orders nodes[0] before nodes[1] before ..."""
        if len(nodes) == 1 and isinstance(nodes[0], (list, tuple)):
            nodes = nodes[0]
        arr = (ctypes.c_uint32 * max(1, len(nodes)))(*[self._node(n) for n in nodes])
        self.world._check(_lib.weft_schedule_add_chain(
                self._p(), arr, len(nodes), ORDER_IGNORE_DEFERRED if ignore_deferred else 0))

    def add_ambiguous_pair(self, a, b):
        """a and b may run in either order: left out of the ambiguity report."""
        self.world._check(_lib.weft_schedule_add_ambiguous_pair(self._p(), self._node(a),
                                                                self._node(b)))

    def add_ambiguous_component(self, component):
        """Leaves a component or resource out of the ambiguity report."""
        self.world._check(_lib.weft_schedule_add_ambiguous_component(
                   self._p(), self.world.component_of(component).id))

    def set_auto_sync(self, on):
        self.world._check(_lib.weft_schedule_set_auto_sync(self._p(), bool(on)))

    def set_apply_final(self, on):
        self.world._check(_lib.weft_schedule_set_apply_final(self._p(), bool(on)))

    def set_profiling(self, on):
        """Records per-system times (stats total_ns/last_ns, trace_json)."""
        self.world._check(_lib.weft_schedule_set_profiling(self._p(), bool(on)))

    def apply_pending(self):
        """Applies every queued command of the schedule's systems."""
        self.world._check(_lib.weft_schedule_apply_pending(self._p()))

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

    def condition(self, fn, name=None, queries=(), resources=(), messages=(), *,
                  query=None):
        """A condition written in Python: fn(ctx) -> bool, read-only
        (queries, resources and messages must be READ). An exception fails
        the run (raised by run()) and counts as False."""
        if query is not None:
            queries = [query] + list(queries)
        name = name or getattr(fn, "__name__", "condition")
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

    def run_once(self):
        """True the first time it is evaluated, false after."""
        return self._cond(_lib.weft_condition_run_once(self._p()), "run_once")

    def resource_changed(self, component):
        """True when the resource exists and was inserted or written since
        this condition last evaluated."""
        c = self.world.component_of(component)
        return self._cond(_lib.weft_condition_resource_changed(self._p(), c.id),
                          "resource_changed(%s)" % c.name)

    def resource_exists(self, component):
        c = self.world.component_of(component)
        return self._cond(_lib.weft_condition_resource_exists(self._p(), c.id),
                          "resource_exists(%s)" % c.name)

    def on_message(self, mtype):
        """True when messages of `mtype` arrived that it has not seen."""
        return self._cond(_lib.weft_condition_on_message(self._p(), mtype.id),
                          "on_message(%s)" % mtype.name)

    def and_(self, a, b, eager=False):
        """a AND b (b evaluated only when a is true, unless eager)."""
        a, b = self._as_condition(a), self._as_condition(b)
        fn = _lib.weft_condition_and_eager if eager else _lib.weft_condition_and
        return self._cond(fn(self._p(), a._ptr, b._ptr), "(%s and %s)" % (a.name, b.name))

    def or_(self, a, b):
        """a OR b (b evaluated only when a is false)."""
        a, b = self._as_condition(a), self._as_condition(b)
        return self._cond(_lib.weft_condition_or(self._p(), a._ptr, b._ptr),
                          "(%s or %s)" % (a.name, b.name))

    def not_(self, a):
        a = self._as_condition(a)
        return self._cond(_lib.weft_condition_not(self._p(), a._ptr), "not %s" % a.name)

    def add_condition(self, node, condition):
        """Attaches a Condition (or a Python callable, made a condition) to
        a system or set. Every condition of a node must be true."""
        nid = self._node(node)
        c = self._as_condition(condition, name="run_if(%s)" % self.node(nid).name)
        self.world._check(_lib.weft_schedule_add_condition(self._p(), nid, c._ptr))
        return c

    # -- build and run
    def build(self):
        """Builds now (run() builds when something changed). Raises
        WeftError SCHEDULE_CYCLE naming the nodes of a cycle."""
        self.world._check(_lib.weft_schedule_build(self._p()))

    @property
    def build_count(self):
        return _lib.weft_schedule_build_count(self._p())

    def run(self, dt=0.0):
        """Runs every system once with delta time `dt`, on the world's
        executor. Every system runs even when one fails; afterwards the
        first failure is raised as WeftError carrying the world's message
        (chained to the exception when a Python system raised one)."""
        w = self.world
        wp, p = w._p(), self._p()
        outer, w._system_exc = w._system_exc, None
        try:
            status = _lib.weft_schedule_run(p, dt)
            failures = w._system_exc
        finally:
            w._system_exc = outer
        w._finish_run(status, failures)

    # -- inspection
    @property
    def node_count(self):
        """Systems and apply points added (nodes 1 .. node_count)."""
        return _lib.weft_schedule_node_count(self._p())

    def nodes(self):
        """Nodes of every system and apply point, in the order added."""
        return [self.node(i) for i in range(1, self.node_count + 1)]

    def node_name(self, node):
        return _s(_lib.weft_schedule_node_name(self._p(), self._node(node)))

    def position(self, node):
        """Place of a system or apply point in the built order, or -1."""
        return _lib.weft_schedule_position(self._p(), self._node(node))

    def order_of(self):
        """Names of the systems and apply points in built order (empty when
        not built)."""
        placed = [(self.position(n), n) for n in self.nodes()]
        return [n.name for pos, n in sorted(placed, key=lambda x: x[0]) if pos >= 0]

    @property
    def sync_count(self):
        """Sync points in the built schedule, or -1."""
        return _lib.weft_schedule_sync_count(self._p())

    def has_edge(self, before, after):
        return bool(_lib.weft_schedule_has_edge(self._p(), self._node(before),
                                                self._node(after)))

    def ambiguities(self):
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

    def system_stats(self, node):
        """A WeftSystemStats (runs, skipped, failures, total_ns, last_ns)."""
        st = WeftSystemStats()
        self.world._check(_lib.weft_schedule_system_stats(self._p(), self._node(node),
                                                          ctypes.byref(st)))
        return st

    @property
    def max_concurrency(self):
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

    def trace_json(self):
        """The last run as Chrome trace-event JSON (needs profiling on)."""
        return self._text(_lib.weft_schedule_trace_json)

    def dot(self):
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

# bindings/python/weft/_abi.py - the C ABI mirrored in ctypes: scalar types, enums and flags,
# callback types and the descriptor structs of weft.h.
# SPDX-License-Identifier: MIT
"""The C ABI mirrored in ctypes: scalar types, enums and flags, callback types
and the descriptor structs of weft.h."""

import ctypes
from typing import TYPE_CHECKING


#: WEFT_VERSION this module was written for (0.2.0).
ABI_VERSION = 300


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
    "WEFT_ERR_TYPE_MISMATCH", "WEFT_ERR_UNSUPPORTED",
)
for _i, _n in enumerate(STATUS_NAMES):
    globals()[_n[len("WEFT_"):]] = _i
del _i, _n
if TYPE_CHECKING:
    # The names the loop above defines, spelled out for type checkers
    # (tests/test_types.py keeps the two lists equal).
    ERR_INVALID_ARG: int
    ERR_INVALID_HANDLE: int
    ERR_STALE_ENTITY: int
    ERR_SIZE_MISMATCH: int
    ERR_OUT_OF_MEMORY: int
    ERR_CAPACITY: int
    ERR_ALREADY_EXISTS: int
    ERR_NOT_FOUND: int
    ERR_WRONG_THREAD: int
    ERR_WRONG_PHASE: int
    ERR_ACCESS_VIOLATION: int
    ERR_SCHEDULE_CYCLE: int
    ERR_POISONED: int
    ERR_INTERNAL: int
    ERR_INVALID_ENTITY: int
    ERR_UNKNOWN_COMPONENT: int
    ERR_IMMUTABLE: int
    ERR_BAD_ALIGNMENT: int
    ERR_DUPLICATE_COMPONENT: int
    ERR_CORRUPT: int
    ERR_NOT_UNIQUE: int
    ERR_DEPTH_LIMIT: int
    ERR_RELATIONSHIP: int
    ERR_CALLBACK: int
    ERR_BAD_FORMAT: int
    ERR_TYPE_MISMATCH: int
    ERR_UNSUPPORTED: int

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
SYSTEM_NOT_STEPPABLE = 1 << 3
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


# -- the app (weft_app_*)
APP_BEFORE = 1
APP_AFTER = 2
APP_ORDER_STARTUP = 1
APP_ORDER_MAIN = 2
APP_ORDER_FIXED = 3
APP_MIN_FIXED_STEP = 1e-6
APP_MAX_FIXED_STEPS = 1024
APP_LABELS = ("PreStartup", "Startup", "PostStartup", "First", "PreUpdate",
              "StateTransition", "RunFixedMainLoop", "Update", "PostUpdate", "Last",
              "FixedFirst", "FixedPreUpdate", "FixedUpdate", "FixedPostUpdate", "FixedLast")
PLUGIN_FN = ctypes.CFUNCTYPE(c_status, _vp, _vp)
RUNNER_FN = ctypes.CFUNCTYPE(c_status, _vp, _vp)


class WeftAppDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("world", _vp),
                ("world_desc", WeftWorldDesc),
                ("fixed_step", ctypes.c_double),
                ("max_delta", ctypes.c_double),
                ("max_fixed_steps", ctypes.c_int32),
                ("no_message_update", ctypes.c_bool),
                ("_end_canary", ctypes.c_uint32)]


# Sub-apps and extraction (weft_sub_app_* in weft.h).
class WeftSubAppDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("name", ctypes.c_char_p),
                ("world_desc", WeftWorldDesc),
                ("pipelined", ctypes.c_bool),
                ("clear_every_frame", ctypes.c_bool),
                ("share_threads", ctypes.c_bool),
                ("_end_canary", ctypes.c_uint32)]


# bool (*)(weft_entity main_e, const void *src, void *dst, void *user)
EXTRACT_FN = ctypes.CFUNCTYPE(ctypes.c_bool, c_entity, _vp, _vp, _vp)


class WeftExtractComponentDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("name", ctypes.c_char_p),
                ("main_component", ctypes.c_uint32),
                ("sub_component", ctypes.c_uint32),
                ("transform", EXTRACT_FN),
                ("user", _vp),
                ("changed_only", ctypes.c_bool),
                ("_end_canary", ctypes.c_uint32)]


class WeftExtractResourceDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("name", ctypes.c_char_p),
                ("main_resource", ctypes.c_uint32),
                ("sub_resource", ctypes.c_uint32),
                ("transform", EXTRACT_FN),
                ("user", _vp),
                ("_end_canary", ctypes.c_uint32)]


class WeftExtractInstancesDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("map_name", ctypes.c_char_p),
                ("main_component", ctypes.c_uint32),
                ("instance_size", ctypes.c_size_t),
                ("extract", EXTRACT_FN),
                ("user", _vp),
                ("_end_canary", ctypes.c_uint32)]


class WeftExtractDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("system", WeftSystemDesc),
                ("main_queries", ctypes.POINTER(WeftQueryDesc)),
                ("main_query_count", ctypes.c_int32),
                ("main_resources", ctypes.POINTER(ctypes.c_uint32)),
                ("main_resource_count", ctypes.c_int32),
                ("main_messages", ctypes.POINTER(ctypes.c_uint32)),
                ("main_message_count", ctypes.c_int32),
                ("_end_canary", ctypes.c_uint32)]


class WeftInstanceMap(ctypes.Structure):
    _fields_ = [("count", ctypes.c_int32),
                ("_pad", ctypes.c_uint32),
                ("instance_size", ctypes.c_size_t),
                ("keys", ctypes.POINTER(c_entity)),
                ("values", _vp)]


# Reflection (type descriptions, snapshots).
(KIND_NONE, KIND_BOOL, KIND_I8, KIND_I16, KIND_I32, KIND_I64, KIND_U8, KIND_U16,
 KIND_U32, KIND_U64, KIND_F32, KIND_F64, KIND_ENTITY, KIND_STRING, KIND_STRUCT,
 KIND_ENUM) = range(16)
SNAPSHOT_DELTA = 1 << 0
SNAPSHOT_ZSTD = 1 << 1
SNAPSHOT_VERSION = 1


class WeftEnumValue(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_int64)]


class WeftTypeDesc(ctypes.Structure):
    pass


class WeftField(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p),
                ("kind", ctypes.c_int32),
                ("offset", ctypes.c_size_t),
                ("count", ctypes.c_int32),
                ("type", ctypes.POINTER(WeftTypeDesc)),
                ("enum_base", ctypes.c_int32),
                ("enum_values", ctypes.POINTER(WeftEnumValue)),
                ("enum_count", ctypes.c_int32)]


WeftTypeDesc._fields_ = [("name", ctypes.c_char_p),
                         ("size", ctypes.c_size_t),
                         ("align", ctypes.c_size_t),
                         ("fields", ctypes.POINTER(WeftField)),
                         ("field_count", ctypes.c_int32)]


class WeftSnapshotOptions(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("flags", ctypes.c_uint32),
                ("since", ctypes.c_uint32),
                ("zstd_level", ctypes.c_int32),
                ("_end_canary", ctypes.c_uint32)]


class WeftPluginDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("name", ctypes.c_char_p),
                ("build", PLUGIN_FN),
                ("finish", PLUGIN_FN),
                ("cleanup", PLUGIN_FN),
                ("dependencies", ctypes.POINTER(ctypes.c_char_p)),
                ("dependency_count", ctypes.c_int32),
                ("repeatable", ctypes.c_bool),
                ("user", _vp),
                ("free_user", FREE_USER_FN),
                ("_end_canary", ctypes.c_uint32)]


# -- stepping (weft_schedule_set_stepping ...)
STEP_DEFAULT = 0
STEP_ALWAYS_RUN = 1
STEP_NEVER_RUN = 2
STEP_BREAK = 3

# -- diagnostics (weft_diag_*)
DIAG_HISTORY = 120
DIAG_SMOOTHING = 2.0 / 21.0
DIAG_FRAME_TIME = "frame_time"
DIAG_FPS = "fps"
DIAG_FRAME_COUNT = "frame_count"
DIAG_ENTITY_COUNT = "entity_count"
DIAG_ARCHETYPE_COUNT = "archetype_count"
DIAG_SYSTEM_PREFIX = "system/"
DIAG_PLUGIN = "weft.diagnostics"


class WeftDiagDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("name", ctypes.c_char_p),
                ("suffix", ctypes.c_char_p),
                ("history_len", ctypes.c_int32),
                ("smoothing", ctypes.c_double),
                ("_end_canary", ctypes.c_uint32)]


class WeftDiagValue(ctypes.Structure):
    _fields_ = [("value", ctypes.c_double),
                ("average", ctypes.c_double),
                ("smoothed", ctypes.c_double),
                ("min", ctypes.c_double),
                ("max", ctypes.c_double),
                ("time", ctypes.c_double),
                ("count", ctypes.c_int32),
                ("history_len", ctypes.c_int32),
                ("enabled", ctypes.c_bool),
                ("suffix", ctypes.c_char_p)]


class WeftDiagPluginDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("log_interval", ctypes.c_double),
                ("per_system", ctypes.c_bool),
                ("history_len", ctypes.c_int32),
                ("_end_canary", ctypes.c_uint32)]


class WeftPluginGroupDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("name", ctypes.c_char_p),
                ("plugins", ctypes.POINTER(WeftPluginDesc)),
                ("plugin_count", ctypes.c_int32),
                ("disabled", ctypes.POINTER(ctypes.c_char_p)),
                ("disabled_count", ctypes.c_int32),
                ("_end_canary", ctypes.c_uint32)]


# States.
STATE_VALUE_NONE = 0xFFFFFFFF
MAX_STATE_VALUES = 1024
MAX_STATE_SOURCES = 8
STATE_KIND_DEFAULT = 0
STATE_KIND_SUB = 1
STATE_KIND_COMPUTED = 2

# uint32_t (*)(const uint32_t *sources, int32_t count, void *user)
STATE_COMPUTE_FN = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32),
                                    ctypes.c_int32, _vp)


class WeftStateValue(ctypes.Structure):
    _fields_ = [("value", ctypes.c_uint32), ("name", ctypes.c_char_p)]


class WeftStateDesc(ctypes.Structure):
    _fields_ = [("_start_canary", ctypes.c_uint32),
                ("name", ctypes.c_char_p),
                ("kind", ctypes.c_int32),
                ("values", ctypes.POINTER(WeftStateValue)),
                ("value_count", ctypes.c_int32),
                ("initial", ctypes.c_uint32),
                ("source", ctypes.c_uint32),
                ("source_value", ctypes.c_uint32),
                ("sources", ctypes.POINTER(ctypes.c_uint32)),
                ("source_count", ctypes.c_int32),
                ("compute", STATE_COMPUTE_FN),
                ("user", _vp),
                ("_end_canary", ctypes.c_uint32)]


class WeftNextState(ctypes.Structure):
    """The NextState<name> resource."""
    _fields_ = [("value", ctypes.c_uint32), ("pending", ctypes.c_uint32)]


class WeftStateTransitionEvent(ctypes.Structure):
    """One message of StateTransitionEvent<name>."""
    _fields_ = [("state", ctypes.c_uint32), ("exited", ctypes.c_uint32),
                ("entered", ctypes.c_uint32), ("same", ctypes.c_uint32)]


def _install_checks():
    """Every struct and union above refuses a value its fields would change
    (an integer out of range, a name with a NUL): _convert.py."""
    from ._convert import install_field_checks
    for obj in list(globals().values()):
        if isinstance(obj, type) and issubclass(obj, (ctypes.Structure, ctypes.Union)) \
                and obj.__module__ == __name__:
            install_field_checks(obj)


_install_checks()

# bindings/python/weft/__init__.py - pure-ctypes Python binding of weft's C ABI.
# SPDX-License-Identifier: MIT
"""Python binding of weft, an embeddable ECS runtime (C ABI via ctypes).

Standard library only (numpy optional: Chunk.array returns columns as
zero-copy numpy arrays, checked before every use). The shared library is
found through the environment variable WEFT_LIBRARY (full path), else the
installed library (pkg-config, then the standard library path), else a
build tree next to the sources, and is refused unless weft_abi_version()
equals ABI_VERSION (see _loader.load_library).

Components are ctypes.Structure subclasses registered with
World.register(); entities are Python ints (weft_entity, uint64). Every
weft failure raises WeftError(status name, world's message).

Lifetimes (the C rules, see docs/bindings.md):
- World.get() returns a copy; World.get_mut() and resource_get_mut()
  return a View over the world's memory, valid only until the next
  structural change (spawn, despawn, insert, remove, flush, applying
  commands, the end of an iteration). A View checks where the value lives
  before every use and raises WeftError once it is stale.
- Chunk columns/entities are zero-copy views valid until the next chunk;
  Chunk.array's numpy arrays raise WeftError once their chunk is over.
- Trigger objects passed to observers are valid only during the callback.

Callbacks (observers, lifecycle hooks) never let a Python exception unwind
into C: the ctypes trampoline catches it, stores it on the World, and the
binding re-raises it once the outermost weft call has returned.
"""

from typing import TYPE_CHECKING, Any

__all__ = [
    "ABI_VERSION", "WeftError", "World", "Component", "Query", "Chunk",
    "Commands", "ProvisionalEntity", "is_provisional", "Observer", "Event", "MessageType", "MessageReader",
    "RemovedReader", "Term", "read", "write", "with_", "without",
    "optional", "or_", "Added", "Changed", "load_library",
    "ADD", "INSERT", "REPLACE", "REMOVE", "DESPAWN",
    "STORAGE_TABLE", "STORAGE_SPARSE", "COMPONENT_IMMUTABLE",
    "COMPONENT_MAIN_THREAD", "COMPONENT_NO_CHANGE_TICKS",
    "entity_index", "entity_generation", "max_threads",
    "Schedule", "Node", "Condition", "SystemContext", "Ambiguity", "QuerySpec",
    "terms", "SYSTEM_EXCLUSIVE", "SYSTEM_MAIN_THREAD", "SYSTEM_COMMANDS",
    "PYTHON_EXCEPTION_STATUS", "QUERY_SINGLE", "QUERY_POPULATED", "View",
    "State", "StateTag", "StateValue", "STATE_VALUE_NONE", "WeftNextState",
    "WeftStateTransitionEvent",
    "App", "APP_LABELS", "Plugin", "SubApp", "SYSTEM_NOT_STEPPABLE", "STEP_DEFAULT",
    "STEP_ALWAYS_RUN", "STEP_NEVER_RUN", "STEP_BREAK", "DiagValue",
    "Scene", "zstd_available", "kind_name", "SNAPSHOT_DELTA", "SNAPSHOT_ZSTD",
    "SNAPSHOT_VERSION", "KIND_BOOL", "KIND_I8", "KIND_I16", "KIND_I32", "KIND_I64",
    "KIND_U8", "KIND_U16", "KIND_U32", "KIND_U64", "KIND_F32", "KIND_F64", "KIND_ENTITY",
    "KIND_STRING", "KIND_STRUCT", "KIND_ENUM", "ERR_UNSUPPORTED",
]

# The package is split by concept; this file only gathers every module's
# names, so `import weft` (and `weft.<name>`, private helpers included) sees
# one namespace. Modules import only from modules before them in this list:
#   _abi (ctypes mirror of weft.h) -> _loader (the library) -> errors ->
#   components -> arrays -> queries -> commands -> observers -> messages ->
#   relationships -> systems -> schedules -> state -> diagnostics -> reflect ->
#   world -> app
# A new concept gets its own module after the ones it uses; World methods
# for it go in a mixin class there (as _QueriesWorld in queries.py), added
# to World's bases in world.py, and its public names are imported here and
# listed in __all__.
from ._abi import (  # noqa: F401
    ABI_VERSION, ACCESS_DEFAULT, ACCESS_NONE, ACCESS_READ, ACCESS_WRITE, ADD, ALLOC_FN,
    CHUNK_FN, COMMAND_DROP_FN, COMMAND_FN, COMPONENT_IMMUTABLE, COMPONENT_MAIN_THREAD,
    COMPONENT_NO_CHANGE_TICKS, CONDITION_FN, DESPAWN, ERR_ACCESS_VIOLATION, ERR_ALREADY_EXISTS,
    ERR_BAD_ALIGNMENT, ERR_BAD_FORMAT, ERR_CALLBACK, ERR_CAPACITY, ERR_CORRUPT,
    ERR_DEPTH_LIMIT, ERR_DUPLICATE_COMPONENT, ERR_IMMUTABLE, ERR_INTERNAL, ERR_INVALID_ARG,
    ERR_INVALID_ENTITY, ERR_INVALID_HANDLE, ERR_NOT_FOUND, ERR_NOT_UNIQUE, ERR_OUT_OF_MEMORY,
    ERR_POISONED, ERR_RELATIONSHIP, ERR_SCHEDULE_CYCLE, ERR_SIZE_MISMATCH, ERR_STALE_ENTITY,
    ERR_TYPE_MISMATCH, ERR_UNKNOWN_COMPONENT, ERR_UNSUPPORTED, ERR_WRONG_PHASE,
    ERR_WRONG_THREAD, FILTER_ADDED, FILTER_CHANGED, FILTER_NONE, FREE_FN, FREE_USER_FN, HOOK_FN,
    INSERT, JOB_FN, JOB_HELP_FN,
    JOB_SUBMIT_FN, LOCAL_FN, LOG_ERROR, LOG_FN, LOG_INFO, LOG_WARN, MAX_EVENT_DEPTH,
    MAX_SYSTEM_MESSAGES, MAX_SYSTEM_QUERIES, MAX_SYSTEM_RESOURCES, MAX_TERMS, MESSAGE_DROP_FN,
    MOVE_HOOK_FN, NODE_SET, OBSERVER_FN, OK, OPER_AND, OPER_DEFAULT, OPER_OPTIONAL, OPER_OR,
    OPER_WITH, OPER_WITHOUT, ORDER_IGNORE_DEFERRED, QUERY_MATCH_DISABLED, QUERY_POPULATED,
    QUERY_SINGLE, QUERY_UNCACHED, RELATIONSHIP_LINKED_DESPAWN, REMOVE, REPLACE,
    REQUIRE_CTOR_FN, STATUS_NAMES, STORAGE_DEFAULT, STORAGE_SPARSE, STORAGE_TABLE,
    SYSTEM_COMMANDS, SYSTEM_EXCLUSIVE, SYSTEM_FN, SYSTEM_MAIN_THREAD, TYPE_HOOK_FN,
    WeftAllocator, WeftAmbiguity, WeftArchetypeInfo, WeftComponentDesc, WeftComponentInfo,
    WeftConditionDesc, WeftEventDesc, WeftIter, WeftJobSystem,
    WeftLifecycleHooks, WeftLocalDesc, WeftLogger, WeftMessageCursor, WeftMessageDesc,
    WeftMessageUse, WeftObserverDesc, WeftQueryDesc, WeftRelationshipDesc, WeftRequire,
    WeftResourceUse, WeftSystemDesc, WeftSystemStats, WeftTerm, WeftTicks, WeftTrigger,
    WeftTypeHooks, WeftValue, WeftWorldDesc, WeftWorldStats, c_component, c_entity, c_event,
    c_message_type, c_status, _vp,
)
from ._loader import (  # noqa: F401
    load_library, _P, _PROTOTYPES, _bool, _candidate_paths, _cmds, _cond, _cstr, _ctx,
    _expected_abi, _i32, _i64, _it, _lib, _missing_symbol, _node, _obs, _q, _sch, _sz, _u32, _w,
)
from .errors import (  # noqa: F401
    WeftError, status_name, status_str, _s,
)
from .components import (  # noqa: F401
    Component, View, _checked_view, _copy, _is_struct_type, _owned, _view,
)
from .arrays import (  # noqa: F401
    column_array_type,
)
from .queries import (  # noqa: F401
    Added, Changed, Chunk, Query, Term, optional, or_, read, with_, without, write,
    _fill_query_desc,
)
from .commands import (  # noqa: F401
    Commands, ProvisionalEntity, is_provisional,
)
from .observers import (  # noqa: F401
    Event, Observer, Trigger,
)
from .messages import (  # noqa: F401
    MessageReader, MessageType, RemovedReader,
)
from .relationships import (  # noqa: F401
    c_entity_struct,
)
from .systems import (  # noqa: F401
    PYTHON_EXCEPTION_STATUS, QuerySpec, SystemContext, terms, _Failure, _SystemInfo,
    _SystemQuery, _exc_status, _exc_text, _status_of,
)
from .schedules import (  # noqa: F401
    Ambiguity, Condition, Node, Schedule, _fail_with, _is_c_function,
)
from .state import (  # noqa: F401
    State, StateTag, StateValue, _StatesWorld, _values_of,
)
from .diagnostics import (  # noqa: F401
    DiagValue,
)
from ._abi import (  # noqa: F401
    KIND_BOOL, KIND_ENTITY, KIND_ENUM, KIND_F32, KIND_F64, KIND_I8, KIND_I16, KIND_I32,
    KIND_I64, KIND_NONE, KIND_STRING, KIND_STRUCT, KIND_U8, KIND_U16, KIND_U32, KIND_U64,
    SNAPSHOT_DELTA, SNAPSHOT_VERSION, SNAPSHOT_ZSTD, WeftEnumValue, WeftField,
    WeftSnapshotOptions, WeftTypeDesc,
)
from .reflect import (  # noqa: F401
    Scene, kind_name, zstd_available, _DescBuilder, _ReflectWorld,
)
from .world import (  # noqa: F401
    World, entity_generation, entity_index, max_threads,
)
from ._abi import (  # noqa: F401
    MAX_STATE_SOURCES, MAX_STATE_VALUES, STATE_COMPUTE_FN, STATE_KIND_COMPUTED,
    STATE_KIND_DEFAULT, STATE_KIND_SUB, STATE_VALUE_NONE, WeftNextState, WeftStateDesc,
    WeftStateTransitionEvent, WeftStateValue,
    APP_AFTER, APP_BEFORE, APP_LABELS, APP_MAX_FIXED_STEPS, APP_MIN_FIXED_STEP,
    APP_ORDER_FIXED, APP_ORDER_MAIN, APP_ORDER_STARTUP, PLUGIN_FN, RUNNER_FN, WeftAppDesc,
    WeftPluginDesc, WeftPluginGroupDesc, SYSTEM_NOT_STEPPABLE, STEP_ALWAYS_RUN, STEP_BREAK,
    STEP_DEFAULT, STEP_NEVER_RUN, DIAG_ARCHETYPE_COUNT, DIAG_ENTITY_COUNT, DIAG_FPS,
    DIAG_FRAME_COUNT, DIAG_FRAME_TIME, DIAG_HISTORY, DIAG_PLUGIN, DIAG_SMOOTHING,
    DIAG_SYSTEM_PREFIX, WeftDiagDesc, WeftDiagPluginDesc, WeftDiagValue,
)
from .subapp import SubApp  # noqa: F401
from .app import (  # noqa: F401
    App, Plugin,
)

from ._typing import (  # noqa: F401  (names of the type hints, for annotations)
    ComponentRef, Entity, TermLike, Value,
)

if TYPE_CHECKING:
    ColumnArray: Any    # a numpy.ndarray subclass, made when numpy is first used
else:
    def __getattr__(name):
        # weft.ColumnArray (the numpy subclass Chunk.array returns) exists
        # only with numpy, so it is made on first use: ImportError without
        # numpy. Hidden from type checkers, which would otherwise accept any
        # attribute of the module.
        if name == "ColumnArray":
            return column_array_type()
        raise AttributeError("module 'weft' has no attribute %r" % name)

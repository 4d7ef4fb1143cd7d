# bindings/python/weft/_loader.py - loading libweft: every prototype, the library search, the ABI
# version check; `_lib` is the loaded library.
# SPDX-License-Identifier: MIT
"""Loading libweft: every prototype, the library search, the ABI version check;
`_lib` is the loaded library."""

import ctypes
import ctypes.util
import os
import sys

from ._abi import (
    ABI_VERSION, CHUNK_FN, COMMAND_DROP_FN, COMMAND_FN, WeftAmbiguity, WeftArchetypeInfo,
    WeftComponentDesc, WeftComponentInfo, WeftConditionDesc, WeftEventDesc, WeftFrameDesc,
    WeftIter, WeftJobSystem, WeftMessageCursor, WeftMessageDesc, WeftObserverDesc,
    WeftQueryDesc, WeftRelationshipDesc, WeftRequire, WeftSystemDesc, WeftSystemStats,
    WeftTicks, WeftValue, WeftWorldDesc, WeftWorldStats, _vp, c_component, c_entity, c_event,
    c_message_type, c_status, WeftSnapshotOptions, WeftTypeDesc,
)


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
    # reflection: descriptions, JSON, snapshots, scenes
    "weft_component_describe": (c_status, [_w, c_component, _P(WeftTypeDesc)]),
    "weft_component_is_described": (_bool, [_w, c_component]),
    "weft_kind_name": (_cstr, [_i32]),
    "weft_json_write_component": (c_status, [_w, c_entity, c_component, _vp, _sz, _P(_sz)]),
    "weft_json_write_entity": (c_status, [_w, c_entity, _vp, _sz, _P(_sz)]),
    "weft_json_write_query": (c_status, [_w, _q, _vp, _sz, _P(_sz)]),
    "weft_json_read_component": (c_status, [_w, c_entity, c_component, _cstr, _sz]),
    "weft_json_read_entity": (c_status, [_w, c_entity, _cstr, _sz]),
    "weft_json_spawn": (c_entity, [_w, _cstr, _sz]),
    "weft_snapshot_write": (c_status, [_w, _vp, _sz, _P(_sz)]),
    "weft_snapshot_write_ex": (c_status, [_w, _P(WeftSnapshotOptions), _vp, _sz, _P(_sz)]),
    "weft_snapshot_zstd_available": (_bool, []),
    "weft_snapshot_delta_write": (c_status, [_w, _u32, _vp, _sz, _P(_sz)]),
    "weft_snapshot_track": (c_status, [_w, _bool]),
    "weft_snapshot_merge": (c_status, [_w, _vp, _sz, _vp, _sz, _vp, _sz, _P(_sz)]),
    "weft_snapshot_restore": (c_status, [_w, _vp, _sz]),
    "weft_scene_from_query": (_vp, [_w, _q]),
    "weft_scene_from_tree": (_vp, [_w, c_entity]),
    "weft_scene_count": (_i32, [_vp]),
    "weft_scene_spawn": (c_status, [_w, _vp, _P(c_entity), _i32]),
    "weft_scene_destroy": (c_status, [_w, _vp]),
    "weft_clone": (c_entity, [_w, c_entity, _bool]),
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


def _expected_abi():
    """ABI_VERSION as the package shows it now (weft.ABI_VERSION; the
    module's own value while the package is still being imported)."""
    return getattr(sys.modules.get(__package__), "ABI_VERSION", ABI_VERSION)


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
    expected = _expected_abi()
    if version != expected:
        raise ImportError("weft: library %s has ABI version %d, this binding "
                          "was written for %d" % (lib._name, version, expected))
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

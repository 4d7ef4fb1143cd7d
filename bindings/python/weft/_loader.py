# bindings/python/weft/_loader.py - loading libweft: every prototype, the library search, the ABI
# version check; `_lib` is the loaded library.
# SPDX-License-Identifier: MIT
"""Loading libweft: every prototype, the library search, the ABI version check;
`_lib` is the loaded library."""

import collections
import ctypes
import os
import subprocess
import sys

from ._abi import (
    ABI_VERSION, CHUNK_FN, COMMAND_DROP_FN, COMMAND_FN, RUNNER_FN, WeftAppDesc, WeftDiagDesc,
    WeftDiagPluginDesc, WeftDiagValue, WeftPluginDesc, WeftPluginGroupDesc, WeftAmbiguity, WeftArchetypeInfo,
    WeftComponentDesc, WeftComponentInfo, WeftConditionDesc, WeftEventDesc,
    WeftIter, WeftJobSystem, WeftMessageCursor, WeftMessageDesc, WeftObserverDesc,
    WeftQueryDesc, WeftRelationshipDesc, WeftRequire, WeftSystemDesc, WeftSystemStats,
    WeftTicks, WeftValue, WeftWorldDesc, WeftWorldStats, _vp, c_component, c_entity, c_event,
    c_message_type, c_status, WeftSnapshotOptions, WeftTypeDesc,
)
from ._abi import WeftStateDesc
from ._convert import checked_argtype, wrap_checked
from ._abi import (
    WeftExtractComponentDesc, WeftExtractDesc, WeftExtractInstancesDesc, WeftExtractResourceDesc,
    WeftInstanceMap, WeftSubAppDesc,
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
_app = _vp       # weft_app *

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
    "weft_world_restore_count": (ctypes.c_uint64, [_w]),
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
    "weft_commands_resolve": (c_entity, [_cmds, c_entity]),
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
    "weft_max_threads": (_i32, []),
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
    # the app
    "weft_app_create": (_app, [_P(WeftAppDesc)]),
    "weft_app_destroy": (c_status, [_app]),
    "weft_app_world": (_w, [_app]),
    "weft_app_schedule": (_sch, [_app, _cstr]),
    "weft_app_add_system": (_node, [_app, _cstr, _P(WeftSystemDesc)]),
    "weft_app_insert_schedule": (c_status, [_app, _cstr, _cstr, _i32]),
    "weft_app_label_count": (_i32, [_app, _i32]),
    "weft_app_label": (_cstr, [_app, _i32, _i32]),
    "weft_app_update": (c_status, [_app, ctypes.c_double]),
    "weft_app_run": (c_status, [_app, RUNNER_FN, _vp]),
    "weft_app_exit": (c_status, [_app, _i32]),
    "weft_app_exit_requested": (_bool, [_app, _P(_i32)]),
    "weft_app_update_count": (_i64, [_app]),
    "weft_app_fixed_steps": (_i32, [_app]),
    "weft_app_fixed_accumulator": (ctypes.c_double, [_app]),
    "weft_app_fixed_step": (ctypes.c_double, [_app]),
    "weft_app_set_fixed_step": (c_status, [_app, ctypes.c_double]),
    "weft_app_add_plugin": (c_status, [_app, _P(WeftPluginDesc)]),
    "weft_app_add_plugin_group": (c_status, [_app, _P(WeftPluginGroupDesc)]),
    "weft_app_setup": (c_status, [_app]),
    "weft_app_has_plugin": (_bool, [_app, _cstr]),
    "weft_app_plugin_count": (_i32, [_app]),
    "weft_app_plugin_name": (_cstr, [_app, _i32]),
    # stepping
    "weft_schedule_set_stepping": (c_status, [_sch, _bool]),
    "weft_schedule_is_stepping": (_bool, [_sch]),
    "weft_schedule_step": (c_status, [_sch]),
    "weft_schedule_continue": (c_status, [_sch]),
    "weft_schedule_set_step_behavior": (c_status, [_sch, _node, _i32]),
    "weft_schedule_step_cursor": (_node, [_sch]),
    # diagnostics
    "weft_diag_add": (c_status, [_w, _P(WeftDiagDesc)]),
    "weft_diag_record": (c_status, [_w, _cstr, ctypes.c_double, ctypes.c_double]),
    "weft_diag_get": (c_status, [_w, _cstr, _P(WeftDiagValue)]),
    "weft_diag_history": (_i32, [_w, _cstr, _P(ctypes.c_double), _i32]),
    "weft_diag_set_enabled": (c_status, [_w, _cstr, _bool]),
    "weft_diag_count": (_i32, [_w]),
    "weft_diag_name": (_cstr, [_w, _i32]),
    "weft_app_add_diagnostics_plugin": (c_status, [_app, _P(WeftDiagPluginDesc)]),
    # sub-apps
    "weft_app_add_sub_app": (_app, [_app, _P(WeftSubAppDesc)]),
    "weft_app_sub_app": (_app, [_app, _cstr]),
    "weft_sub_app_parent": (_app, [_app]),
    "weft_sub_app_wait": (c_status, [_app]),
    "weft_sub_app_set_pipelined": (c_status, [_app, _bool]),
    "weft_sub_app_frames": (_i64, [_app]),
    "weft_sub_app_sync_tag": (_u32, [_app]),
    "weft_sub_app_sub_entity": (_u32, [_app]),
    "weft_sub_app_main_entity": (_u32, [_app]),
    "weft_sub_app_map": (c_entity, [_app, c_entity]),
    "weft_sub_app_extract_component": (_node, [_app, _P(WeftExtractComponentDesc)]),
    "weft_sub_app_extract_resource": (_node, [_app, _P(WeftExtractResourceDesc)]),
    "weft_sub_app_extract_instances": (_u32, [_app, _P(WeftExtractInstancesDesc)]),
    "weft_instance_map_get": (_vp, [_P(WeftInstanceMap), c_entity]),
    "weft_world_share_threads": (c_status, [_w, _w]),
    "weft_sub_app_add_extract": (_node, [_app, _P(WeftExtractDesc)]),
    "weft_extract_iter": (c_status, [_ctx, _i32, _it]),
    "weft_extract_resource": (_vp, [_ctx, _u32, _sz]),
    "weft_extract_resource_changed": (_bool, [_ctx, _u32]),
    "weft_extract_sub_entity": (c_entity, [_ctx, c_entity]),
    # states
    "weft_state_register": (_u32, [_w, _P(WeftStateDesc)]),
    "weft_state_lookup": (_u32, [_w, _cstr]),
    "weft_state_name": (_cstr, [_w, _u32]),
    "weft_state_value_name": (_cstr, [_w, _u32, _u32]),
    "weft_state_get": (c_status, [_w, _u32, _P(_u32)]),
    "weft_state_exists": (_bool, [_w, _u32]),
    "weft_state_set_next": (c_status, [_w, _u32, _u32]),
    "weft_state_transition": (c_status, [_w]),
    "weft_state_on_enter": (_sch, [_w, _u32, _u32]),
    "weft_state_on_exit": (_sch, [_w, _u32, _u32]),
    "weft_state_on_transition": (_sch, [_w, _u32, _u32, _u32]),
    "weft_state_resource": (c_component, [_w, _u32]),
    "weft_state_next_resource": (c_component, [_w, _u32]),
    "weft_state_despawn_on_exit": (c_component, [_w, _u32]),
    "weft_state_despawn_on_enter": (c_component, [_w, _u32]),
    "weft_state_transition_message": (c_message_type, [_w, _u32]),
    "weft_system_state_get": (c_status, [_ctx, _u32, _P(_u32)]),
    "weft_system_state_set_next": (c_status, [_ctx, _u32, _u32]),
    "weft_condition_in_state": (_cond, [_sch, _u32, _u32]),
    "weft_condition_state_exists": (_cond, [_sch, _u32]),
    "weft_condition_state_changed": (_cond, [_sch, _u32]),
    "weft_app_add_states_plugin": (c_status, [_app]),
    "weft_app_register_state": (_u32, [_app, _P(WeftStateDesc)]),
}


def _soname():
    """The soname of the library this binding was written for (see
    CMakeLists.txt): libweft.so.0.<minor> before 1.0, libweft.so.<major> after."""
    major, minor = ABI_VERSION // 10000, ABI_VERSION // 100 % 100
    return "libweft.so.0.%d" % minor if major == 0 else "libweft.so.%d" % major


def _source_root():
    """The repository root when the package is used from its clone
    (bindings/python/weft/ -> ../../..), else None."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", "..", ".."))
    if os.path.isfile(os.path.join(root, "include", "weft.h")):
        return root
    return None


def _candidate_paths(root=None):
    """Library files a build tree next to the sources would hold, most
    likely first (only those that exist are tried)."""
    root = root if root is not None else _source_root()
    if root is None:
        return []
    names = [_soname(), "libweft.so", "libweft.dylib", "weft.dll"]
    dirs = [os.path.join(root, d) for d in
            ("build", "build/release", "build/Release", "cmake-build-release",
             "build/Debug", "cmake-build-debug", "out/build")]
    return [os.path.join(d, n) for d in dirs for n in names]


def _pkg_config_libdir():
    """libdir of the installed weft.pc (`pkg-config --variable=libdir weft`,
    which honours PKG_CONFIG_PATH), or (None, why not)."""
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "weft"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, "pkg-config not usable (%s)" % exc
    libdir = out.stdout.strip()
    if out.returncode != 0 or not libdir:
        return None, "pkg-config knows no weft (no weft.pc on PKG_CONFIG_PATH)"
    return libdir, None


class _Candidate(collections.namedtuple("_Candidate", "origin path final why")):
    """One place load_library() looks: `path` (a file, or a soname for the
    dynamic loader) or None with `why` when the step has nothing to try;
    `final` for an explicit choice, which stops the search when it fails
    instead of falling through to a guess."""

    __slots__ = ()


def _bundled_path():
    """Where `pip install` puts the library it builds: inside the package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), _soname())


def _library_candidates(path=None, environ=None, pkg_config=_pkg_config_libdir,
                        root=None, exists=os.path.exists, bundled=None):
    """The places load_library() looks, in order (a list of _Candidate).
    The parameters other than `path` are for tests."""
    env = os.environ if environ is None else environ
    if path:
        return [_Candidate("explicit path", os.fspath(path), True, None)]
    if env.get("WEFT_LIBRARY"):
        return [_Candidate("WEFT_LIBRARY", env["WEFT_LIBRARY"], True, None)]
    bundled = bundled if bundled is not None else _bundled_path()
    inside = (_Candidate("bundled", bundled, False, None) if exists(bundled) else
              _Candidate("bundled", None, False,
                         "the package carries no library (installed with "
                         "WEFT_BUILD_LIBRARY=0, or used from the clone)"))
    prefer_installed = env.get("WEFT_PREFER_INSTALLED", "") not in ("", "0")
    out = [] if prefer_installed else [inside]
    libdir, why = pkg_config()
    if libdir:
        found = [os.path.join(libdir, n) for n in (_soname(), "libweft.so")
                 if exists(os.path.join(libdir, n))]
        out.append(_Candidate("pkg-config", found[0], False, None) if found else
                   _Candidate("pkg-config", None, False,
                              "libdir %s holds no %s" % (libdir, _soname())))
    else:
        out.append(_Candidate("pkg-config", None, False, why))
    # The dynamic loader's search: LD_LIBRARY_PATH, ld.so.cache, /lib, /usr/lib.
    out.append(_Candidate("standard library path", _soname(), False, None))
    if prefer_installed:
        out.append(inside)
    root = root if root is not None else _source_root()
    built = [p for p in _candidate_paths(root) if exists(p)] if root else []
    out += [_Candidate("build tree", p, False, None) for p in built]
    if not built:
        out.append(_Candidate("build tree", None, False,
                              "none built in %s" % root if root else
                              "the package is not inside a weft clone"))
    return out


def _expected_abi():
    """ABI_VERSION as the package shows it now (weft.ABI_VERSION; the
    module's own value while the package is still being imported)."""
    return getattr(sys.modules.get(__package__), "ABI_VERSION", ABI_VERSION)


def _open_checked(cand):
    """(CDLL, None) when `cand` loads and has the expected ABI version,
    else (None, why not)."""
    try:
        lib = ctypes.CDLL(cand)
    except OSError as exc:
        return None, str(exc)
    try:
        fn = lib.weft_abi_version
    except AttributeError:
        return None, "not a weft library (no weft_abi_version)"
    fn.restype = ctypes.c_int32
    fn.argtypes = []
    version, expected = fn(), _expected_abi()
    if version != expected:
        return None, ("weft_abi_version() is %d, this binding was written for %d"
                      % (version, expected))
    return lib, None


def load_library(path=None):
    """Loads libweft, declares every prototype and checks the ABI version.

    Order: `path`, else $WEFT_LIBRARY, else the library `pip install`
    built into the package (bundled), else the installed library
    (`pkg-config --variable=libdir weft`, then the soname through the
    dynamic loader's standard path), else a build tree next to the sources
    (build/, build/release, ...). WEFT_PREFER_INSTALLED=1 moves the bundled
    library after the installed one. A given path or WEFT_LIBRARY is the only
    candidate; the searched ones are tried until one loads and has this
    binding's ABI version. Raises ImportError naming every candidate and
    why it was refused (a library of another ABI version included)."""
    tried = []
    lib = None
    for cand in _library_candidates(path):
        if cand.path is None:
            tried.append("%s: %s" % (cand.origin, cand.why))
            continue
        lib, why = _open_checked(cand.path)
        if lib is not None:
            break
        tried.append("%s: %s" % (cand.origin, why if why.startswith(cand.path)
                                 else "%s: %s" % (cand.path, why)))
        if cand.final:
            break
    if lib is None:
        raise ImportError(
            "weft: no usable libweft (%s, ABI version %d). Tried, in order:\n  %s\n"
            "Install the package from a weft checkout (pip install ./bindings/python "
            "builds and bundles the library), build and install weft (cmake --install; "
            "for a prefix outside the system's, add its lib/pkgconfig to "
            "PKG_CONFIG_PATH), or set WEFT_LIBRARY to the full path of %s." % (_soname(), _expected_abi(), "\n  ".join(tried),
                                         _soname()))
    missing = []
    lib._weft_fast = {}
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
        if name in _FAST:
            # a second function object with the plain argument types, for
            # the binding's own per-chunk calls whose integers it makes
            # itself (term indexes, sizes): no conversion check on them
            raw = lib[name]
            raw.restype = restype
            raw.argtypes = argtypes
            lib._weft_fast[name] = raw
        checked = [checked_argtype(t) for t in argtypes]
        fn.argtypes = checked
        if any(c is not t for c, t in zip(checked, argtypes)):
            # a refused argument raises OverflowError/ValueError, not
            # ctypes' ArgumentError (_convert.py)
            setattr(lib, name, wrap_checked(fn, name))
    lib._weft_missing = tuple(missing)
    lib._weft_origin = cand.origin   # which step found it (see _library_candidates)
    return lib


#: calls the binding makes per chunk or per run with arguments it computes
#: itself; _lib._weft_fast holds them unchecked (_convert.py checks user
#: values, and these never carry one)
_FAST = ("weft_iter_field", "weft_iter_field_mut", "weft_iter_field_mut_nomark",
         "weft_system_iter", "weft_iter_count")


def _missing_symbol(lib, name):
    def missing(*args):
        raise OSError("weft: %s is not exported by %s (a library built from "
                      "an older source tree?)" % (name, lib._name))
    missing.__name__ = name
    return missing


_lib = load_library()

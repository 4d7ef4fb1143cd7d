// tests/abi/test_abi_layout.c - pins the size and field offsets of every
// public struct on LP64 targets, so an accidental ABI change fails CI.
// SPDX-License-Identifier: MIT
//
// When a layout changes on purpose, bump the soname (major version) and
// regenerate the table below.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "weft.h"

#define ABI_SIZE(T, n) assert_int_equal(sizeof(T), (n))
#define ABI_OFF(T, f, n) assert_int_equal(offsetof(T, f), (n))

static void abi_struct_layouts_are_pinned(void **state)
{
    (void)state;
#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu && SIZE_MAX == 0xFFFFFFFFFFFFFFFFu
    ABI_SIZE(weft_task_outcome, 264);
    ABI_OFF(weft_task_outcome, status, 4);
    ABI_OFF(weft_task_outcome, message, 8);
    ABI_SIZE(weft_task_desc, 80);
    ABI_OFF(weft_task_desc, pool, 4);
    ABI_OFF(weft_task_desc, fn, 8);
    ABI_OFF(weft_task_desc, user, 16);
    ABI_OFF(weft_task_desc, input, 24);
    ABI_OFF(weft_task_desc, input_size, 32);
    ABI_OFF(weft_task_desc, result_size, 40);
    ABI_OFF(weft_task_desc, apply, 48);
    ABI_OFF(weft_task_desc, order, 56);
    ABI_OFF(weft_task_desc, flags, 64);
    ABI_OFF(weft_task_desc, apply_delay, 68);
    ABI_OFF(weft_task_desc, _end_canary, 72);
    ABI_SIZE(weft_allocator, 24);
    ABI_OFF(weft_allocator, alloc, 0);
    ABI_OFF(weft_allocator, free, 8);
    ABI_OFF(weft_allocator, user, 16);
    ABI_SIZE(weft_logger, 16);
    ABI_OFF(weft_logger, user, 8);
    ABI_SIZE(weft_os_object, 64);
    ABI_SIZE(weft_os_api, 144);
    ABI_OFF(weft_os_api, _start_canary, 0);
    ABI_OFF(weft_os_api, thread_create, 8);
    ABI_OFF(weft_os_api, thread_join, 16);
    ABI_OFF(weft_os_api, thread_yield, 24);
    ABI_OFF(weft_os_api, cpu_count, 32);
    ABI_OFF(weft_os_api, mutex_init, 40);
    ABI_OFF(weft_os_api, mutex_fini, 48);
    ABI_OFF(weft_os_api, mutex_lock, 56);
    ABI_OFF(weft_os_api, mutex_unlock, 64);
    ABI_OFF(weft_os_api, cond_init, 72);
    ABI_OFF(weft_os_api, cond_fini, 80);
    ABI_OFF(weft_os_api, cond_wait, 88);
    ABI_OFF(weft_os_api, cond_signal, 96);
    ABI_OFF(weft_os_api, cond_broadcast, 104);
    ABI_OFF(weft_os_api, now_ns, 112);
    ABI_OFF(weft_os_api, log, 120);
    ABI_OFF(weft_os_api, user, 128);
    ABI_OFF(weft_os_api, _end_canary, 136);
    ABI_SIZE(weft_world_desc, 56);
    ABI_OFF(weft_world_desc, _start_canary, 0);
    ABI_OFF(weft_world_desc, allocator, 8);
    ABI_OFF(weft_world_desc, logger, 32);
    ABI_OFF(weft_world_desc, entity_capacity_hint, 48);
    ABI_OFF(weft_world_desc, _end_canary, 52);
    ABI_SIZE(weft_world_stats, 40);
    ABI_OFF(weft_world_stats, live_entities, 0);
    ABI_OFF(weft_world_stats, live_bytes, 8);
    ABI_OFF(weft_world_stats, archetypes, 16);
    ABI_OFF(weft_world_stats, tables, 20);
    ABI_OFF(weft_world_stats, components, 24);
    ABI_OFF(weft_world_stats, resources, 28);
    ABI_OFF(weft_world_stats, entity_records, 32);
    ABI_OFF(weft_world_stats, pending_reserved, 36);
    ABI_SIZE(weft_archetype_info, 24);
    ABI_OFF(weft_archetype_info, entity_count, 0);
    ABI_OFF(weft_archetype_info, table, 4);
    ABI_OFF(weft_archetype_info, component_count, 8);
    ABI_OFF(weft_archetype_info, components, 16);
    ABI_SIZE(weft_type_hooks, 40);
    ABI_OFF(weft_type_hooks, ctor, 0);
    ABI_OFF(weft_type_hooks, dtor, 8);
    ABI_OFF(weft_type_hooks, move, 16);
    ABI_OFF(weft_type_hooks, copy, 24);
    ABI_OFF(weft_type_hooks, user, 32);
    ABI_SIZE(weft_lifecycle_hooks, 48);
    ABI_OFF(weft_lifecycle_hooks, on_add, 0);
    ABI_OFF(weft_lifecycle_hooks, on_insert, 8);
    ABI_OFF(weft_lifecycle_hooks, on_replace, 16);
    ABI_OFF(weft_lifecycle_hooks, on_remove, 24);
    ABI_OFF(weft_lifecycle_hooks, on_despawn, 32);
    ABI_OFF(weft_lifecycle_hooks, user, 40);
    ABI_SIZE(weft_require, 40);
    ABI_OFF(weft_require, id, 0);
    ABI_OFF(weft_require, value, 8);
    ABI_OFF(weft_require, size, 16);
    ABI_OFF(weft_require, ctor, 24);
    ABI_OFF(weft_require, user, 32);
    ABI_SIZE(weft_component_desc, 144);
    ABI_OFF(weft_component_desc, _start_canary, 0);
    ABI_OFF(weft_component_desc, name, 8);
    ABI_OFF(weft_component_desc, size, 16);
    ABI_OFF(weft_component_desc, align, 24);
    ABI_OFF(weft_component_desc, hooks, 32);
    ABI_OFF(weft_component_desc, lifecycle, 72);
    ABI_OFF(weft_component_desc, storage, 120);
    ABI_OFF(weft_component_desc, flags, 124);
    ABI_OFF(weft_component_desc, required, 128);
    ABI_OFF(weft_component_desc, required_count, 136);
    ABI_OFF(weft_component_desc, _end_canary, 140);
    ABI_SIZE(weft_component_info, 32);
    ABI_OFF(weft_component_info, name, 0);
    ABI_OFF(weft_component_info, size, 8);
    ABI_OFF(weft_component_info, align, 16);
    ABI_OFF(weft_component_info, storage, 24);
    ABI_OFF(weft_component_info, flags, 28);
    ABI_SIZE(weft_value, 24);
    ABI_OFF(weft_value, id, 0);
    ABI_OFF(weft_value, size, 8);
    ABI_OFF(weft_value, ptr, 16);
    ABI_SIZE(weft_ticks, 8);
    ABI_OFF(weft_ticks, added, 0);
    ABI_OFF(weft_ticks, changed, 4);
    ABI_SIZE(weft_term, 20);
    ABI_OFF(weft_term, id, 0);
    ABI_OFF(weft_term, access, 4);
    ABI_OFF(weft_term, oper, 8);
    ABI_OFF(weft_term, filter, 12);
    ABI_OFF(weft_term, or_group, 16);
    ABI_SIZE(weft_query_desc, 336);
    ABI_OFF(weft_query_desc, _start_canary, 0);
    ABI_OFF(weft_query_desc, terms, 4);
    ABI_OFF(weft_query_desc, term_count, 324);
    ABI_OFF(weft_query_desc, flags, 328);
    ABI_OFF(weft_query_desc, _end_canary, 332);
    ABI_SIZE(weft_iter, 512);
    ABI_OFF(weft_iter, _private, 0);
    assert_int_equal(_Alignof(weft_iter), 8);
    // the state is private, but it must fit the storage it lives in
    assert_true(sizeof(weft_iter_state) <= sizeof(weft_iter));
    assert_true(_Alignof(weft_iter_state) <= _Alignof(weft_iter));
    ABI_SIZE(weft_event_desc, 32);
    ABI_OFF(weft_event_desc, _start_canary, 0);
    ABI_OFF(weft_event_desc, name, 8);
    ABI_OFF(weft_event_desc, payload_size, 16);
    ABI_OFF(weft_event_desc, _end_canary, 24);
    ABI_SIZE(weft_trigger, 48);
    ABI_OFF(weft_trigger, event, 0);
    ABI_OFF(weft_trigger, component, 4);
    ABI_OFF(weft_trigger, entity, 8);
    ABI_OFF(weft_trigger, original, 16);
    ABI_OFF(weft_trigger, payload, 24);
    ABI_OFF(weft_trigger, payload_size, 32);
    ABI_OFF(weft_trigger, propagate, 40);
    ABI_SIZE(weft_observer_desc, 56);
    ABI_OFF(weft_observer_desc, _start_canary, 0);
    ABI_OFF(weft_observer_desc, event, 4);
    ABI_OFF(weft_observer_desc, component, 8);
    ABI_OFF(weft_observer_desc, entity, 16);
    ABI_OFF(weft_observer_desc, fn, 24);
    ABI_OFF(weft_observer_desc, user, 32);
    ABI_OFF(weft_observer_desc, free_user, 40);
    ABI_OFF(weft_observer_desc, _end_canary, 48);
    ABI_SIZE(weft_message_desc, 56);
    ABI_OFF(weft_message_desc, _start_canary, 0);
    ABI_OFF(weft_message_desc, name, 8);
    ABI_OFF(weft_message_desc, size, 16);
    ABI_OFF(weft_message_desc, align, 24);
    ABI_OFF(weft_message_desc, drop, 32);
    ABI_OFF(weft_message_desc, user, 40);
    ABI_OFF(weft_message_desc, _end_canary, 48);
    ABI_SIZE(weft_message_cursor, 16);
    ABI_OFF(weft_message_cursor, next, 0);
    ABI_OFF(weft_message_cursor, missed, 8);
    ABI_SIZE(weft_relationship_desc, 24);
    ABI_OFF(weft_relationship_desc, _start_canary, 0);
    ABI_OFF(weft_relationship_desc, name, 8);
    ABI_OFF(weft_relationship_desc, flags, 16);
    ABI_OFF(weft_relationship_desc, _end_canary, 20);
    ABI_SIZE(weft_resource_use, 8);
    ABI_OFF(weft_resource_use, id, 0);
    ABI_OFF(weft_resource_use, access, 4);
    ABI_SIZE(weft_message_use, 8);
    ABI_OFF(weft_message_use, type, 0);
    ABI_OFF(weft_message_use, access, 4);
    ABI_SIZE(weft_local_desc, 32);
    ABI_OFF(weft_local_desc, size, 0);
    ABI_OFF(weft_local_desc, align, 8);
    ABI_OFF(weft_local_desc, init, 16);
    ABI_OFF(weft_local_desc, fini, 24);
    ABI_SIZE(weft_system_desc, 136);
    ABI_OFF(weft_system_desc, _start_canary, 0);
    ABI_OFF(weft_system_desc, name, 8);
    ABI_OFF(weft_system_desc, fn, 16);
    ABI_OFF(weft_system_desc, user, 24);
    ABI_OFF(weft_system_desc, queries, 32);
    ABI_OFF(weft_system_desc, query_count, 40);
    ABI_OFF(weft_system_desc, resources, 48);
    ABI_OFF(weft_system_desc, resource_count, 56);
    ABI_OFF(weft_system_desc, messages, 64);
    ABI_OFF(weft_system_desc, message_count, 72);
    ABI_OFF(weft_system_desc, flags, 76);
    ABI_OFF(weft_system_desc, local, 80);
    ABI_OFF(weft_system_desc, query_groups, 112);
    ABI_OFF(weft_system_desc, removed, 120);
    ABI_OFF(weft_system_desc, removed_count, 128);
    ABI_OFF(weft_system_desc, _end_canary, 132);
    ABI_SIZE(weft_condition_desc, 80);
    ABI_OFF(weft_condition_desc, _start_canary, 0);
    ABI_OFF(weft_condition_desc, name, 8);
    ABI_OFF(weft_condition_desc, fn, 16);
    ABI_OFF(weft_condition_desc, user, 24);
    ABI_OFF(weft_condition_desc, queries, 32);
    ABI_OFF(weft_condition_desc, query_count, 40);
    ABI_OFF(weft_condition_desc, resources, 48);
    ABI_OFF(weft_condition_desc, resource_count, 56);
    ABI_OFF(weft_condition_desc, messages, 64);
    ABI_OFF(weft_condition_desc, message_count, 72);
    ABI_OFF(weft_condition_desc, _end_canary, 76);
    ABI_SIZE(weft_ambiguity, 24);
    ABI_OFF(weft_ambiguity, a, 0);
    ABI_OFF(weft_ambiguity, b, 4);
    ABI_OFF(weft_ambiguity, component_count, 8);
    ABI_OFF(weft_ambiguity, components, 16);
    ABI_SIZE(weft_system_stats, 40);
    ABI_OFF(weft_system_stats, runs, 0);
    ABI_OFF(weft_system_stats, skipped, 8);
    ABI_OFF(weft_system_stats, failures, 16);
    ABI_OFF(weft_system_stats, total_ns, 24);
    ABI_OFF(weft_system_stats, last_ns, 32);
    ABI_SIZE(weft_job_system, 32);
    ABI_OFF(weft_job_system, user, 0);
    ABI_OFF(weft_job_system, workers, 8);
    ABI_OFF(weft_job_system, submit, 16);
    ABI_OFF(weft_job_system, help, 24);
    ABI_SIZE(weft_app_desc, 104);
    ABI_OFF(weft_app_desc, _start_canary, 0);
    ABI_OFF(weft_app_desc, world, 8);
    ABI_OFF(weft_app_desc, world_desc, 16);
    ABI_OFF(weft_app_desc, fixed_step, 72);
    ABI_OFF(weft_app_desc, max_delta, 80);
    ABI_OFF(weft_app_desc, max_fixed_steps, 88);
    ABI_OFF(weft_app_desc, no_message_update, 92);
    ABI_OFF(weft_app_desc, _end_canary, 96);
    ABI_SIZE(weft_plugin_desc, 80);
    ABI_OFF(weft_plugin_desc, _start_canary, 0);
    ABI_OFF(weft_plugin_desc, name, 8);
    ABI_OFF(weft_plugin_desc, build, 16);
    ABI_OFF(weft_plugin_desc, finish, 24);
    ABI_OFF(weft_plugin_desc, cleanup, 32);
    ABI_OFF(weft_plugin_desc, dependencies, 40);
    ABI_OFF(weft_plugin_desc, dependency_count, 48);
    ABI_OFF(weft_plugin_desc, repeatable, 52);
    ABI_OFF(weft_plugin_desc, user, 56);
    ABI_OFF(weft_plugin_desc, free_user, 64);
    ABI_OFF(weft_plugin_desc, _end_canary, 72);
    ABI_SIZE(weft_plugin_group_desc, 48);
    ABI_OFF(weft_plugin_group_desc, _start_canary, 0);
    ABI_OFF(weft_plugin_group_desc, name, 8);
    ABI_OFF(weft_plugin_group_desc, plugins, 16);
    ABI_OFF(weft_plugin_group_desc, plugin_count, 24);
    ABI_OFF(weft_plugin_group_desc, disabled, 32);
    ABI_OFF(weft_plugin_group_desc, disabled_count, 40);
    ABI_OFF(weft_plugin_group_desc, _end_canary, 44);
    ABI_SIZE(weft_sub_app_desc, 80);
    ABI_OFF(weft_sub_app_desc, _start_canary, 0);
    ABI_OFF(weft_sub_app_desc, name, 8);
    ABI_OFF(weft_sub_app_desc, world_desc, 16);
    ABI_OFF(weft_sub_app_desc, pipelined, 72);
    ABI_OFF(weft_sub_app_desc, clear_every_frame, 73);
    ABI_OFF(weft_sub_app_desc, share_threads, 74);
    ABI_OFF(weft_sub_app_desc, _end_canary, 76);
    ABI_SIZE(weft_extract_desc, 192);
    ABI_OFF(weft_extract_desc, system, 8);
    ABI_OFF(weft_extract_desc, main_queries, 144);
    ABI_OFF(weft_extract_desc, main_query_count, 152);
    ABI_OFF(weft_extract_desc, main_resources, 160);
    ABI_OFF(weft_extract_desc, main_resource_count, 168);
    ABI_OFF(weft_extract_desc, main_messages, 176);
    ABI_OFF(weft_extract_desc, main_message_count, 184);
    ABI_OFF(weft_extract_desc, _end_canary, 188);
    ABI_SIZE(weft_extract_component_desc, 48);
    ABI_OFF(weft_extract_component_desc, name, 8);
    ABI_OFF(weft_extract_component_desc, main_component, 16);
    ABI_OFF(weft_extract_component_desc, sub_component, 20);
    ABI_OFF(weft_extract_component_desc, transform, 24);
    ABI_OFF(weft_extract_component_desc, user, 32);
    ABI_OFF(weft_extract_component_desc, changed_only, 40);
    ABI_OFF(weft_extract_component_desc, _end_canary, 44);
    ABI_SIZE(weft_extract_resource_desc, 48);
    ABI_OFF(weft_extract_resource_desc, name, 8);
    ABI_OFF(weft_extract_resource_desc, main_resource, 16);
    ABI_OFF(weft_extract_resource_desc, sub_resource, 20);
    ABI_OFF(weft_extract_resource_desc, transform, 24);
    ABI_OFF(weft_extract_resource_desc, user, 32);
    ABI_OFF(weft_extract_resource_desc, _end_canary, 40);
    ABI_SIZE(weft_instance_map, 32);
    ABI_OFF(weft_instance_map, count, 0);
    ABI_OFF(weft_instance_map, instance_size, 8);
    ABI_OFF(weft_instance_map, keys, 16);
    ABI_OFF(weft_instance_map, values, 24);
    ABI_SIZE(weft_extract_instances_desc, 56);
    ABI_OFF(weft_extract_instances_desc, map_name, 8);
    ABI_OFF(weft_extract_instances_desc, main_component, 16);
    ABI_OFF(weft_extract_instances_desc, instance_size, 24);
    ABI_OFF(weft_extract_instances_desc, extract, 32);
    ABI_OFF(weft_extract_instances_desc, user, 40);
    ABI_OFF(weft_extract_instances_desc, _end_canary, 48);
    ABI_SIZE(weft_enum_value, 16);
    ABI_OFF(weft_enum_value, value, 8);
    ABI_SIZE(weft_field, 64);
    ABI_OFF(weft_field, kind, 8);
    ABI_OFF(weft_field, offset, 16);
    ABI_OFF(weft_field, count, 24);
    ABI_OFF(weft_field, type, 32);
    ABI_OFF(weft_field, enum_base, 40);
    ABI_OFF(weft_field, enum_values, 48);
    ABI_OFF(weft_field, enum_count, 56);
    ABI_SIZE(weft_type_desc, 40);
    ABI_OFF(weft_type_desc, size, 8);
    ABI_OFF(weft_type_desc, align, 16);
    ABI_OFF(weft_type_desc, fields, 24);
    ABI_OFF(weft_type_desc, field_count, 32);
    ABI_SIZE(weft_state_value, 16);
    ABI_OFF(weft_state_value, value, 0);
    ABI_OFF(weft_state_value, name, 8);
    ABI_SIZE(weft_state_desc, 88);
    ABI_OFF(weft_state_desc, _start_canary, 0);
    ABI_OFF(weft_state_desc, name, 8);
    ABI_OFF(weft_state_desc, kind, 16);
    ABI_OFF(weft_state_desc, values, 24);
    ABI_OFF(weft_state_desc, value_count, 32);
    ABI_OFF(weft_state_desc, initial, 36);
    ABI_OFF(weft_state_desc, source, 40);
    ABI_OFF(weft_state_desc, source_value, 44);
    ABI_OFF(weft_state_desc, sources, 48);
    ABI_OFF(weft_state_desc, source_count, 56);
    ABI_OFF(weft_state_desc, compute, 64);
    ABI_OFF(weft_state_desc, user, 72);
    ABI_OFF(weft_state_desc, _end_canary, 80);
    ABI_SIZE(weft_next_state, 8);
    ABI_OFF(weft_next_state, value, 0);
    ABI_OFF(weft_next_state, pending, 4);
    ABI_SIZE(weft_state_transition_event, 16);
    ABI_OFF(weft_state_transition_event, state, 0);
    ABI_OFF(weft_state_transition_event, exited, 4);
    ABI_OFF(weft_state_transition_event, entered, 8);
    ABI_OFF(weft_state_transition_event, same, 12);
    ABI_SIZE(weft_snapshot_options, 20);
    ABI_OFF(weft_snapshot_options, flags, 4);
    ABI_OFF(weft_snapshot_options, since, 8);
    ABI_OFF(weft_snapshot_options, zstd_level, 12);
    ABI_OFF(weft_snapshot_options, _end_canary, 16);
#else
    skip();
#endif
}

static void abi_enums_are_32_bits(void **state)
{
    (void)state;
    assert_int_equal(sizeof(weft_status), 4);
    assert_int_equal(sizeof(weft_storage), 4);
    assert_int_equal(sizeof(weft_access), 4);
    assert_int_equal(sizeof(weft_oper), 4);
    assert_int_equal(sizeof(weft_filter), 4);
    assert_int_equal(sizeof(weft_log_level), 4);
    assert_int_equal(sizeof(weft_component_flags), 4);
    assert_int_equal(sizeof(weft_query_flags), 4);
    assert_int_equal(sizeof(weft_relationship_flags), 4);
    assert_int_equal(sizeof(weft_state_kind), 4);
    assert_int_equal(sizeof(weft_app_place), 4);
    assert_int_equal(sizeof(weft_step_behavior), 4);
    assert_int_equal(sizeof(weft_app_order), 4);
    assert_int_equal(sizeof(weft_snapshot_flags), 4);
    assert_int_equal(sizeof(weft_entity), 8);
    assert_int_equal(sizeof(weft_component), 4);
}

static void abi_version_matches_header(void **state)
{
    (void)state;
    assert_int_equal(weft_abi_version(), WEFT_VERSION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(abi_struct_layouts_are_pinned),
        cmocka_unit_test(abi_enums_are_32_bits),
        cmocka_unit_test(abi_version_matches_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

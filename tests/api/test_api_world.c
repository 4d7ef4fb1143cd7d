// tests/api/test_api_world.c - black-box tests of the world section of
// weft.h: create/destroy, hooks, status table, error slot, change tick,
// stats, archetype info, canonical hash and self-check.
// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_world.h"
#include "weft.h"

typedef struct vec2 {
    float x;
    float y;
} vec2;

// ---- create / destroy ----

static void world_create_null_desc_uses_defaults(void **state)
{
    (void)state;
    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    weft_entity e = weft_spawn(w);
    assert_true(e != 0);
    assert_true(weft_is_alive(w, e));
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_world_destroy(w);
}

static void world_create_zeroed_desc_uses_defaults(void **state)
{
    (void)state;
    weft_world_desc d;
    memset(&d, 0, sizeof d);
    weft_world *w = weft_world_create(&d);
    assert_non_null(w);
    weft_component c = tw_comp(w, "pos", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    vec2 v = {1.0f, 2.0f};
    weft_entity e = weft_spawn(w);
    assert_int_equal(weft_insert(w, e, c, &v, sizeof v), WEFT_OK);
    const vec2 *g = weft_get(w, e, c, sizeof v);
    assert_non_null(g);
    assert_memory_equal(g, &v, sizeof v);
    weft_world_destroy(w);
}

static void world_create_rejects_canaries(void **state)
{
    (void)state;
    tw_fixture f;
    tw_alloc_init(&f.alloc);
    tw_log_init(&f.log);
    weft_world_desc d = tw_fixture_desc(&f);
    d._start_canary = 1;
    assert_null(weft_world_create(&d));
    d._start_canary = 0;
    d._end_canary = 0xdeadbeef;
    assert_null(weft_world_create(&d));
    assert_int_equal(tw_alloc_live_bytes(&f.alloc), 0);
    assert_int_equal(tw_alloc_errors(&f.alloc), 0);
    tw_alloc_fini(&f.alloc);
}

static void world_create_rejects_half_allocator(void **state)
{
    (void)state;
    tw_fixture f;
    tw_alloc_init(&f.alloc);
    tw_log_init(&f.log);
    weft_world_desc d = tw_fixture_desc(&f);
    d.allocator.free = NULL;
    assert_null(weft_world_create(&d));
    d = tw_fixture_desc(&f);
    d.allocator.alloc = NULL;
    assert_null(weft_world_create(&d));
    assert_int_equal(tw_alloc_live_bytes(&f.alloc), 0);
    tw_alloc_fini(&f.alloc);
}

static void world_destroy_null_is_ignored(void **state)
{
    (void)state;
    weft_world_destroy(NULL);
}

static void world_allocator_hook_sees_every_byte(void **state)
{
    tw_fixture *f = *state;
    weft_world_stats s;
    assert_true(tw_alloc_live_bytes(&f->alloc) > 0); // the world itself
    assert_int_equal(weft_world_get_stats(f->w, &s), WEFT_OK);
    assert_int_equal(s.live_bytes, tw_alloc_live_bytes(&f->alloc));

    weft_component a = tw_comp(f->w, "a", 8, 8, WEFT_STORAGE_TABLE, 0);
    weft_component b = tw_comp(f->w, "b", 16, 16, WEFT_STORAGE_SPARSE, 0);
    for (int i = 0; i < 500; i++) {
        uint64_t va = (uint64_t)i;
        unsigned char vb[16] = {0};
        vb[0] = (unsigned char)i;
        weft_value vals[2] = {{a, 8, &va}, {b, 16, vb}};
        assert_true(weft_spawn_with(f->w, vals, i % 3 == 0 ? 2 : 1) != 0);
    }
    assert_int_equal(weft_world_get_stats(f->w, &s), WEFT_OK);
    assert_int_equal(s.live_bytes, tw_alloc_live_bytes(&f->alloc));
    assert_int_equal(tw_alloc_errors(&f->alloc), 0);
    // The teardown asserts that destroy returns every byte.
}

static void world_entity_capacity_hint_accepted(void **state)
{
    (void)state;
    tw_fixture f;
    tw_alloc_init(&f.alloc);
    tw_log_init(&f.log);
    weft_world_desc d = tw_fixture_desc(&f);
    d.entity_capacity_hint = 4096;
    weft_world *w = weft_world_create(&d);
    assert_non_null(w);
    for (int i = 0; i < 4096; i++) {
        assert_true(weft_spawn(w) != 0);
    }
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    assert_int_equal(s.live_entities, 4096);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_world_destroy(w);
    assert_int_equal(tw_alloc_live_bytes(&f.alloc), 0);
    assert_int_equal(tw_alloc_errors(&f.alloc), 0);
    tw_alloc_fini(&f.alloc);
}

// ---- version, status table, handles ----

static void world_abi_version_matches_header(void **state)
{
    (void)state;
    assert_int_equal(weft_abi_version(), WEFT_VERSION);
    assert_int_equal(WEFT_VERSION, 300); /* 0.3.0 */
}

static void world_status_names_are_distinct(void **state)
{
    (void)state;
    assert_string_equal(weft_status_name(WEFT_OK), "WEFT_OK");
    assert_string_equal(weft_status_name(WEFT_ERR_STALE_ENTITY), "WEFT_ERR_STALE_ENTITY");
    assert_string_equal(weft_status_name(WEFT_ERR_SIZE_MISMATCH), "WEFT_ERR_SIZE_MISMATCH");
    assert_string_equal(weft_status_name(WEFT_ERR_CORRUPT), "WEFT_ERR_CORRUPT");
    for (int i = 0; i < WEFT_STATUS_NUM; i++) {
        const char *n = weft_status_name((weft_status)i);
        const char *s = weft_status_str((weft_status)i);
        assert_non_null(n);
        assert_non_null(s);
        assert_true(strncmp(n, "WEFT_", 5) == 0);
        assert_true(strlen(s) > 3);
        assert_string_not_equal(n, "WEFT_UNKNOWN");
        assert_string_not_equal(s, "unknown status");
        for (int j = 0; j < i; j++) {
            assert_string_not_equal(n, weft_status_name((weft_status)j));
            assert_string_not_equal(s, weft_status_str((weft_status)j));
        }
    }
    assert_string_equal(weft_status_name(WEFT_STATUS_NUM), "WEFT_UNKNOWN");
    assert_string_equal(weft_status_name((weft_status)-1), "WEFT_UNKNOWN");
    assert_string_equal(weft_status_name((weft_status)9999), "WEFT_UNKNOWN");
    assert_string_equal(weft_status_str(WEFT_STATUS_NUM), "unknown status");
    assert_string_equal(weft_status_str((weft_status)-7), "unknown status");
}

static void world_status_values_are_pinned(void **state)
{
    (void)state;
    // Values are part of the ABI and must never be renumbered.
    assert_int_equal(WEFT_OK, 0);
    assert_int_equal(WEFT_ERR_INVALID_ARG, 1);
    assert_int_equal(WEFT_ERR_INVALID_HANDLE, 2);
    assert_int_equal(WEFT_ERR_STALE_ENTITY, 3);
    assert_int_equal(WEFT_ERR_SIZE_MISMATCH, 4);
    assert_int_equal(WEFT_ERR_OUT_OF_MEMORY, 5);
    assert_int_equal(WEFT_ERR_INTERNAL, 14);
    assert_int_equal(WEFT_ERR_INVALID_ENTITY, 15);
    assert_int_equal(WEFT_ERR_CORRUPT, 20);
}

static void world_entity_handle_splits_index_and_generation(void **state)
{
    (void)state;
    weft_entity e = ((uint64_t)7 << 32) | 5u;
    assert_int_equal(weft_entity_index(e), 5);
    assert_int_equal(weft_entity_generation(e), 7);
    e = ((uint64_t)0xFFFFFFFFu << 32) | 0xFFFFFFFEu;
    assert_int_equal(weft_entity_index(e), 0xFFFFFFFEu);
    assert_int_equal(weft_entity_generation(e), 0xFFFFFFFFu);
    assert_int_equal(weft_entity_index(WEFT_ENTITY_NONE), 0);
    assert_int_equal(weft_entity_generation(WEFT_ENTITY_NONE), 0);
}

// ---- change tick ----

static void world_change_tick_starts_at_one(void **state)
{
    tw_fixture *f = *state;
    assert_int_equal(weft_world_change_tick(f->w), 1);
    assert_int_equal(weft_world_increment_change_tick(f->w), 2);
    assert_int_equal(weft_world_change_tick(f->w), 2);
    assert_int_equal(weft_world_increment_change_tick(f->w), 3);
    assert_int_equal(weft_world_change_tick(NULL), 0);
    assert_int_equal(weft_world_increment_change_tick(NULL), 0);
}

// ---- error slot and logger ----

static void world_error_slot_lifecycle(void **state)
{
    tw_fixture *f = *state;
    assert_int_equal(weft_last_status(f->w), WEFT_OK);
    assert_string_equal(weft_last_error(f->w), "");
    assert_int_equal(f->log.count, 0);

    weft_component c = tw_comp(f->w, "hp", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_entity e = weft_spawn(f->w);
    int32_t v = 5;
    assert_int_equal(weft_insert(f->w, e, c, &v, 8), WEFT_ERR_SIZE_MISMATCH);
    tw_expect_error(f, WEFT_ERR_SIZE_MISMATCH, "hp");
    assert_true(f->log.last_had_file);

    // A later success does not clear the slot: it holds the last failure.
    assert_int_equal(weft_insert(f->w, e, c, &v, sizeof v), WEFT_OK);
    assert_int_equal(weft_last_status(f->w), WEFT_ERR_SIZE_MISMATCH);

    weft_clear_error(f->w);
    assert_int_equal(weft_last_status(f->w), WEFT_OK);
    assert_string_equal(weft_last_error(f->w), "");

    // A second failure replaces the first.
    assert_int_equal(weft_despawn(f->w, 0), WEFT_ERR_INVALID_ENTITY);
    tw_expect_error(f, WEFT_ERR_INVALID_ENTITY, NULL);
    assert_int_equal(f->log.error_count, 2);

    weft_clear_error(NULL); // ignored
    assert_int_equal(weft_last_status(NULL), WEFT_ERR_INVALID_HANDLE);
    assert_non_null(weft_last_error(NULL));
    assert_true(strlen(weft_last_error(NULL)) > 0);
}

static void world_without_logger_still_records(void **state)
{
    (void)state;
    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    assert_int_equal(weft_despawn(w, ((uint64_t)1 << 32) | 3u), WEFT_ERR_INVALID_ENTITY);
    assert_int_equal(weft_last_status(w), WEFT_ERR_INVALID_ENTITY);
    assert_true(strlen(weft_last_error(w)) > 0);
    weft_world_destroy(w);
}

// ---- stats and archetype info ----

static void world_stats_of_fresh_world(void **state)
{
    tw_fixture *f = *state;
    weft_world_stats s;
    memset(&s, 0x55, sizeof s);
    assert_int_equal(weft_world_get_stats(f->w, &s), WEFT_OK);
    assert_int_equal(s.live_entities, 0);
    assert_int_equal(s.archetypes, 1);
    assert_int_equal(s.tables, 1);
    assert_int_equal(s.components, 0);
    assert_int_equal(s.resources, 0);
    assert_int_equal(s.pending_reserved, 0);
    assert_true(s.live_bytes > 0);

    weft_archetype_info info;
    assert_int_equal(weft_archetype_info_get(f->w, 0, &info), WEFT_OK);
    assert_int_equal(info.entity_count, 0);
    assert_int_equal(info.component_count, 0);
    assert_int_equal(info.table, 0);
}

static void world_stats_counts_follow_operations(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = tw_comp(w, "a", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component b = tw_comp(w, "b", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component s1 = tw_comp(w, "s", 4, 4, WEFT_STORAGE_SPARSE, 0);
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    assert_int_equal(s.components, 3);

    weft_entity e[6];
    for (int i = 0; i < 6; i++) {
        e[i] = weft_spawn(w);
    }
    int32_t v = 1;
    assert_int_equal(weft_insert(w, e[0], a, &v, 4), WEFT_OK); // {a}
    assert_int_equal(weft_insert(w, e[1], a, &v, 4), WEFT_OK); // {a}
    assert_int_equal(weft_insert(w, e[1], s1, &v, 4), WEFT_OK); // {a,s}
    assert_int_equal(weft_insert(w, e[2], a, &v, 4), WEFT_OK);
    assert_int_equal(weft_insert(w, e[2], b, &v, 4), WEFT_OK); // {a,b}
    assert_int_equal(weft_despawn(w, e[5]), WEFT_OK);
    assert_int_equal(weft_resource_insert(w, b, &v, 4), WEFT_OK);

    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    assert_int_equal(s.live_entities, 5);
    assert_int_equal(s.archetypes, 4); // {}, {a}, {a,s}, {a,b}
    assert_int_equal(s.tables, 3);     // {}, {a} (shared by {a,s}), {a,b}
    assert_int_equal(s.resources, 1);
    assert_true(s.entity_records >= 6);

    // Per-archetype entity counts and sorted component lists.
    int32_t total = 0;
    int found_as = 0;
    int32_t table_a = -1;
    int32_t table_as = -2;
    for (int32_t i = 0; i < s.archetypes; i++) {
        weft_archetype_info info;
        assert_int_equal(weft_archetype_info_get(w, i, &info), WEFT_OK);
        total += info.entity_count;
        assert_true(info.table >= 0 && info.table < s.tables);
        for (int32_t k = 1; k < info.component_count; k++) {
            assert_true(info.components[k - 1] < info.components[k]);
        }
        if (i == 0) {
            assert_int_equal(info.component_count, 0);
            assert_int_equal(info.entity_count, 2); // e[3], e[4]
        }
        if (info.component_count == 1) {
            assert_int_equal(info.components[0], a);
            assert_int_equal(info.entity_count, 1);
            table_a = info.table;
        }
        if (info.component_count == 2 && info.components[1] == s1) {
            assert_int_equal(info.components[0], a);
            assert_int_equal(info.entity_count, 1);
            table_as = info.table;
            found_as = 1;
        }
    }
    assert_int_equal(total, 5);
    assert_true(found_as);
    assert_int_equal(table_a, table_as); // sparse components share the table

    // weft_entity_archetype agrees with the info.
    int32_t arch = weft_entity_archetype(w, e[2]);
    weft_archetype_info info;
    assert_int_equal(weft_archetype_info_get(w, arch, &info), WEFT_OK);
    assert_int_equal(info.component_count, 2);
    assert_int_equal(info.components[0], a);
    assert_int_equal(info.components[1], b);
    assert_int_equal(weft_entity_archetype(w, e[3]), 0);
    weft_clear_error(w);
    assert_int_equal(weft_entity_archetype(w, e[5]), -1);
    assert_int_equal(weft_entity_archetype(w, 0), -1);
    assert_int_equal(weft_last_status(w), WEFT_OK); // no error recorded
}

static void world_archetype_components_outlive_new_archetypes(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component c[8];
    char name[16];
    for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof name, "c%d", i);
        c[i] = tw_comp(w, name, 4, 4, WEFT_STORAGE_TABLE, 0);
    }
    weft_entity e = weft_spawn(w);
    int32_t v = 0;
    assert_int_equal(weft_insert(w, e, c[0], &v, 4), WEFT_OK);
    weft_archetype_info first;
    assert_int_equal(weft_archetype_info_get(w, weft_entity_archetype(w, e), &first),
                     WEFT_OK);
    const weft_component *ids = first.components;
    // Create many more archetypes; the earlier pointer must stay valid.
    for (int mask = 1; mask < 256; mask++) {
        weft_entity x = weft_spawn(w);
        for (int i = 0; i < 8; i++) {
            if (mask & (1 << i)) {
                assert_int_equal(weft_insert(w, x, c[i], &v, 4), WEFT_OK);
            }
        }
    }
    assert_int_equal(ids[0], c[0]);
    assert_int_equal(first.component_count, 1);
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    assert_int_equal(s.archetypes, 256); // every subset of 8 components
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- hash ----

static void world_hash_null_is_zero(void **state)
{
    (void)state;
    assert_true(weft_world_hash(NULL) == 0);
}

typedef struct hash_world {
    tw_fixture *f;
    weft_component pos;
    weft_component vel;
    weft_component tag;
    weft_component sp;
    weft_component res;
} hash_world;

static hash_world hash_world_new(void)
{
    hash_world h;
    h.f = tw_fixture_new();
    assert_non_null(h.f);
    assert_non_null(h.f->w);
    h.pos = tw_comp(h.f->w, "pos", sizeof(vec2), 0, WEFT_STORAGE_TABLE, 0);
    h.vel = tw_comp(h.f->w, "vel", sizeof(vec2), 0, WEFT_STORAGE_TABLE, 0);
    h.tag = tw_comp(h.f->w, "tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    h.sp = tw_comp(h.f->w, "sp", 8, 8, WEFT_STORAGE_SPARSE, 0);
    h.res = tw_comp(h.f->w, "res", 8, 8, WEFT_STORAGE_TABLE, 0);
    return h;
}

static void world_hash_independent_of_operation_order(void **state)
{
    (void)state;
    hash_world a = hash_world_new();
    hash_world b = hash_world_new();
    weft_entity ea[4];
    weft_entity eb[4];
    for (int i = 0; i < 4; i++) {
        ea[i] = weft_spawn(a.f->w);
        eb[i] = weft_spawn(b.f->w);
        assert_true(ea[i] == eb[i]);
    }
    vec2 p0 = {1, 2}, p1 = {3, 4}, v0 = {5, 6}, v1 = {7, 8};
    uint64_t s0 = 42, r0 = 99, r1 = 100;
    // World A: archetype {pos} first, then {pos,vel}; rows e0, e1.
    assert_int_equal(weft_insert(a.f->w, ea[0], a.pos, &p0, 8), WEFT_OK);
    assert_int_equal(weft_insert(a.f->w, ea[0], a.vel, &v0, 8), WEFT_OK);
    assert_int_equal(weft_insert(a.f->w, ea[1], a.pos, &p1, 8), WEFT_OK);
    assert_int_equal(weft_insert(a.f->w, ea[1], a.vel, &v1, 8), WEFT_OK);
    assert_int_equal(weft_insert(a.f->w, ea[2], a.tag, NULL, 0), WEFT_OK);
    assert_int_equal(weft_insert(a.f->w, ea[2], a.sp, &s0, 8), WEFT_OK);
    assert_int_equal(weft_resource_insert(a.f->w, a.res, &r0, 8), WEFT_OK);
    assert_int_equal(weft_resource_insert(a.f->w, a.pos, &r1, 8), WEFT_OK);
    // World B: archetype {vel} first, rows e1 before e0, other resource order.
    assert_int_equal(weft_resource_insert(b.f->w, b.pos, &r1, 8), WEFT_OK);
    assert_int_equal(weft_insert(b.f->w, eb[2], b.sp, &s0, 8), WEFT_OK);
    assert_int_equal(weft_insert(b.f->w, eb[1], b.vel, &v1, 8), WEFT_OK);
    assert_int_equal(weft_insert(b.f->w, eb[1], b.pos, &p1, 8), WEFT_OK);
    assert_int_equal(weft_insert(b.f->w, eb[2], b.tag, NULL, 0), WEFT_OK);
    weft_value both[2] = {{b.vel, 8, &v0}, {b.pos, 8, &p0}};
    assert_int_equal(weft_insert_many(b.f->w, eb[0], both, 2), WEFT_OK);
    assert_int_equal(weft_resource_insert(b.f->w, b.res, &r0, 8), WEFT_OK);

    assert_int_equal(weft_world_check(a.f->w), WEFT_OK);
    assert_int_equal(weft_world_check(b.f->w), WEFT_OK);
    assert_true(weft_world_hash(a.f->w) == weft_world_hash(b.f->w));
    assert_true(weft_world_hash(a.f->w) != 0);

    // Any difference in content shows up in the hash.
    uint64_t before = weft_world_hash(b.f->w);
    vec2 *pm = weft_get_mut(b.f->w, eb[1], b.pos, 8);
    assert_non_null(pm);
    pm->x = 3.5f;
    assert_true(weft_world_hash(b.f->w) != before);
    pm = weft_get_mut(b.f->w, eb[1], b.pos, 8);
    pm->x = 3.0f;
    assert_true(weft_world_hash(b.f->w) == before);
    // A tag alone changes it.
    assert_int_equal(weft_insert(b.f->w, eb[3], b.tag, NULL, 0), WEFT_OK);
    assert_true(weft_world_hash(b.f->w) != before);
    assert_int_equal(weft_remove(b.f->w, eb[3], b.tag), WEFT_OK);
    assert_true(weft_world_hash(b.f->w) == before);
    // So does a resource.
    assert_int_equal(weft_resource_insert(b.f->w, b.vel, &r0, 8), WEFT_OK);
    assert_true(weft_world_hash(b.f->w) != before);
    assert_int_equal(weft_resource_remove(b.f->w, b.vel), WEFT_OK);
    assert_true(weft_world_hash(b.f->w) == before);
    // And an extra empty entity.
    weft_entity extra = weft_spawn(b.f->w);
    assert_true(weft_world_hash(b.f->w) != before);
    assert_int_equal(weft_despawn(b.f->w, extra), WEFT_OK);

    tw_fixture_free(a.f);
    tw_fixture_free(b.f);
}

static void world_hash_independent_of_row_order(void **state)
{
    (void)state;
    hash_world a = hash_world_new();
    hash_world b = hash_world_new();
    enum { N = 50 };
    weft_entity ea[N];
    weft_entity eb[N];
    for (int i = 0; i < N; i++) {
        vec2 p = {(float)i, (float)(2 * i)};
        weft_value v = {a.pos, 8, &p};
        ea[i] = weft_spawn_with(a.f->w, &v, 1);
        eb[i] = weft_spawn(b.f->w);
        assert_true(ea[i] == eb[i]);
    }
    // Insert into B in reverse, so its table rows run backwards.
    for (int i = N - 1; i >= 0; i--) {
        vec2 p = {(float)i, (float)(2 * i)};
        assert_int_equal(weft_insert(b.f->w, eb[i], b.pos, &p, 8), WEFT_OK);
    }
    assert_true(weft_world_hash(a.f->w) == weft_world_hash(b.f->w));
    // Swapping two entities' values is a different world.
    vec2 *p0 = weft_get_mut(b.f->w, eb[0], b.pos, 8);
    vec2 t = *p0;
    vec2 *p1 = weft_get_mut(b.f->w, eb[1], b.pos, 8);
    *p0 = *p1;
    *p1 = t;
    assert_true(weft_world_hash(a.f->w) != weft_world_hash(b.f->w));
    tw_fixture_free(a.f);
    tw_fixture_free(b.f);
}

static void world_hash_is_stable_across_reads(void **state)
{
    tw_fixture *f = *state;
    weft_component c = tw_comp(f->w, "c", 4, 4, WEFT_STORAGE_TABLE, 0);
    for (int i = 0; i < 10; i++) {
        int32_t v = i;
        weft_value val = {c, 4, &v};
        assert_true(weft_spawn_with(f->w, &val, 1) != 0);
    }
    uint64_t h = weft_world_hash(f->w);
    assert_int_equal(weft_world_check(f->w), WEFT_OK);
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(f->w, &s), WEFT_OK);
    assert_true(weft_world_hash(f->w) == h);
    weft_world_increment_change_tick(f->w);
    assert_true(weft_world_hash(f->w) == h); // ticks are not content
}

// ---- check ----

static void world_check_passes_through_churn(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component t = tw_comp(w, "t", 12, 4, WEFT_STORAGE_TABLE, 0);
    weft_component s = tw_comp(w, "s", 12, 4, WEFT_STORAGE_SPARSE, 0);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_entity es[64];
    unsigned char v[12] = {1, 2, 3};
    for (int i = 0; i < 64; i++) {
        es[i] = weft_spawn(w);
        if (i % 2) {
            assert_int_equal(weft_insert(w, es[i], t, v, 12), WEFT_OK);
        }
        if (i % 3) {
            assert_int_equal(weft_insert(w, es[i], s, v, 12), WEFT_OK);
        }
    }
    for (int i = 0; i < 64; i += 5) {
        assert_int_equal(weft_despawn(w, es[i]), WEFT_OK);
        assert_int_equal(weft_world_check(w), WEFT_OK);
    }
    assert_int_equal(weft_world_check(NULL), WEFT_ERR_INVALID_HANDLE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(world_create_null_desc_uses_defaults),
        cmocka_unit_test(world_create_zeroed_desc_uses_defaults),
        cmocka_unit_test(world_create_rejects_canaries),
        cmocka_unit_test(world_create_rejects_half_allocator),
        cmocka_unit_test(world_destroy_null_is_ignored),
        cmocka_unit_test_setup_teardown(world_allocator_hook_sees_every_byte, tw_setup,
                                        tw_teardown),
        cmocka_unit_test(world_entity_capacity_hint_accepted),
        cmocka_unit_test(world_abi_version_matches_header),
        cmocka_unit_test(world_status_names_are_distinct),
        cmocka_unit_test(world_status_values_are_pinned),
        cmocka_unit_test(world_entity_handle_splits_index_and_generation),
        cmocka_unit_test_setup_teardown(world_change_tick_starts_at_one, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(world_error_slot_lifecycle, tw_setup, tw_teardown),
        cmocka_unit_test(world_without_logger_still_records),
        cmocka_unit_test_setup_teardown(world_stats_of_fresh_world, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(world_stats_counts_follow_operations, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(world_archetype_components_outlive_new_archetypes,
                                        tw_setup, tw_teardown),
        cmocka_unit_test(world_hash_null_is_zero),
        cmocka_unit_test(world_hash_independent_of_operation_order),
        cmocka_unit_test(world_hash_independent_of_row_order),
        cmocka_unit_test_setup_teardown(world_hash_is_stable_across_reads, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(world_check_passes_through_churn, tw_setup,
                                        tw_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/api/test_api_misuse.c - every error status that bad input can get
// from the world/entity/component/resource API; after each one the world
// must be unchanged (hash, stats, weft_world_check) and the error slot and
// logger must report it.
// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_world.h"
#include "weft.h"

// Runs `stmt` (which asserts the call's own return value) between a
// snapshot and the checks: status recorded and logged, message non-empty
// and containing `needle` (if not NULL), world unchanged.
#define MISUSE(f, expected, needle, stmt)                  \
    do {                                                   \
        tw_snap snap_ = tw_snap_take((f)->w);              \
        weft_clear_error((f)->w);                          \
        int64_t logs_ = (f)->log.count;                    \
        stmt;                                              \
        tw_expect_error((f), (expected), (needle));        \
        assert_true((f)->log.count > logs_);               \
        tw_snap_expect_same((f)->w, &snap_);               \
    } while (0)

static weft_entity mk(uint32_t index, uint32_t gen)
{
    return ((uint64_t)gen << 32) | index;
}

typedef struct misuse_env {
    tw_fixture *f;
    weft_component pos;    // 24 bytes, table
    weft_component vel;    // 12 bytes, sparse
    weft_component tag;    // tag
    weft_component frozen; // immutable
    weft_component noticks;
    weft_entity e1;        // {pos, vel, tag, frozen, noticks}
    weft_entity e2;        // {pos}
    weft_entity dead;      // despawned
} misuse_env;

typedef struct vec3d {
    double x, y, z;
} vec3d;

static int misuse_setup(void **state)
{
    misuse_env *m = calloc(1, sizeof *m);
    if (!m) {
        return -1;
    }
    m->f = tw_fixture_new();
    if (!m->f || !m->f->w) {
        return -1;
    }
    weft_world *w = m->f->w;
    m->pos = tw_comp(w, "position", sizeof(vec3d), 8, WEFT_STORAGE_TABLE, 0);
    m->vel = tw_comp(w, "velocity_sparse", 12, 4, WEFT_STORAGE_SPARSE, 0);
    m->tag = tw_comp(w, "marker", 0, 0, WEFT_STORAGE_TABLE, 0);
    m->frozen = tw_comp(w, "frozen_id", 4, 4, WEFT_STORAGE_TABLE, WEFT_COMPONENT_IMMUTABLE);
    m->noticks = tw_comp(w, "untracked", 4, 4, WEFT_STORAGE_TABLE,
                         WEFT_COMPONENT_NO_CHANGE_TICKS);
    vec3d p = {1, 2, 3};
    float v[3] = {4, 5, 6};
    int32_t i = 7;
    weft_value vals[5] = {{m->pos, sizeof p, &p},
                          {m->vel, 12, v},
                          {m->tag, 0, NULL},
                          {m->frozen, 4, &i},
                          {m->noticks, 4, &i}};
    m->e1 = weft_spawn_with(w, vals, 5);
    m->e2 = weft_spawn_with(w, vals, 1);
    m->dead = weft_spawn_with(w, vals, 2);
    if (!m->e1 || !m->e2 || !m->dead || weft_despawn(w, m->dead) != WEFT_OK) {
        return -1;
    }
    if (weft_resource_insert(w, m->pos, &p, sizeof p) != WEFT_OK ||
        weft_resource_insert(w, m->tag, NULL, 0) != WEFT_OK ||
        weft_resource_insert(w, m->frozen, &i, 4) != WEFT_OK) {
        return -1;
    }
    *state = m;
    return 0;
}

static int misuse_teardown(void **state)
{
    misuse_env *m = *state;
    tw_fixture_free(m->f);
    free(m);
    return 0;
}

// ---- NULL world: INVALID_HANDLE everywhere ----

static void misuse_null_world_is_invalid_handle(void **state)
{
    misuse_env *m = *state;
    weft_world_stats s;
    weft_archetype_info ai;
    weft_component_info ci;
    weft_ticks tk;
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = "x";
    d.size = 4;
    vec3d p = {0, 0, 0};
    weft_value val = {m->pos, sizeof p, &p};
    weft_entity out[2];

    assert_int_equal(weft_world_get_stats(NULL, &s), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_archetype_info_get(NULL, 0, &ai), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_entity_archetype(NULL, m->e1), -1);
    assert_true(weft_world_hash(NULL) == 0);
    assert_int_equal(weft_world_check(NULL), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_component_register(NULL, &d), 0);
    assert_int_equal(weft_component_lookup(NULL, "position"), 0);
    assert_int_equal(weft_component_info_get(NULL, m->pos, &ci), WEFT_ERR_INVALID_HANDLE);
    assert_true(weft_spawn(NULL) == 0);
    assert_true(weft_spawn_with(NULL, &val, 1) == 0);
    assert_int_equal(weft_spawn_bulk(NULL, &val, 1, 1, out), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_despawn(NULL, m->e1), WEFT_ERR_INVALID_HANDLE);
    assert_false(weft_is_alive(NULL, m->e1));
    assert_true(weft_entity_reserve(NULL) == 0);
    assert_int_equal(weft_entity_flush(NULL), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_insert(NULL, m->e1, m->pos, &p, sizeof p), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_insert_many(NULL, m->e1, &val, 1), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_remove(NULL, m->e1, m->pos), WEFT_ERR_INVALID_HANDLE);
    assert_false(weft_has(NULL, m->e1, m->pos));
    assert_null(weft_get(NULL, m->e1, m->pos, sizeof p));
    assert_null(weft_get_mut(NULL, m->e1, m->pos, sizeof p));
    assert_int_equal(weft_get_ticks(NULL, m->e1, m->pos, &tk), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_resource_insert(NULL, m->pos, &p, sizeof p),
                     WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_resource_remove(NULL, m->pos), WEFT_ERR_INVALID_HANDLE);
    assert_false(weft_resource_has(NULL, m->pos));
    assert_null(weft_resource_get(NULL, m->pos, sizeof p));
    assert_null(weft_resource_get_mut(NULL, m->pos, sizeof p));
    assert_int_equal(weft_resource_get_ticks(NULL, m->pos, &tk), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_world_change_tick(NULL), 0);
    assert_int_equal(weft_world_increment_change_tick(NULL), 0);
    assert_int_equal(weft_last_status(NULL), WEFT_ERR_INVALID_HANDLE);
    assert_non_null(weft_last_error(NULL));
    weft_clear_error(NULL);
    weft_world_destroy(NULL);
    // The real world saw none of it.
    assert_int_equal(weft_last_status(m->f->w), WEFT_OK);
    assert_int_equal(m->f->log.count, 0);
}

// ---- INVALID_ARG ----

static void misuse_null_out_pointers_are_invalid_arg(void **state)
{
    misuse_env *m = *state;
    tw_fixture *f = m->f;
    weft_world *w = f->w;
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL,
           assert_int_equal(weft_world_get_stats(w, NULL), WEFT_ERR_INVALID_ARG));
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL,
           assert_int_equal(weft_archetype_info_get(w, 0, NULL), WEFT_ERR_INVALID_ARG));
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL,
           assert_int_equal(weft_component_info_get(w, m->pos, NULL), WEFT_ERR_INVALID_ARG));
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL,
           assert_int_equal(weft_get_ticks(w, m->e1, m->pos, NULL), WEFT_ERR_INVALID_ARG));
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL,
           assert_int_equal(weft_resource_get_ticks(w, m->pos, NULL), WEFT_ERR_INVALID_ARG));
}

static void misuse_bad_component_desc_is_invalid_arg(void **state)
{
    misuse_env *m = *state;
    tw_fixture *f = m->f;
    weft_world *w = f->w;
    weft_component_desc d;

    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL,
           assert_int_equal(weft_component_register(w, NULL), 0));
    memset(&d, 0, sizeof d);
    d.size = 4;
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL,
           assert_int_equal(weft_component_register(w, &d), 0)); // name NULL
    d.name = "";
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL,
           assert_int_equal(weft_component_register(w, &d), 0)); // empty name
    d.name = "ok_name";
    d.storage = (weft_storage)7;
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL, assert_int_equal(weft_component_register(w, &d), 0));
    d.storage = WEFT_STORAGE_NUM;
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL, assert_int_equal(weft_component_register(w, &d), 0));
    d.storage = WEFT_STORAGE_DEFAULT;
    d.flags = 1u << 9;
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL, assert_int_equal(weft_component_register(w, &d), 0));
    d.flags = 0;
    d._start_canary = 0xC0FFEE;
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL, assert_int_equal(weft_component_register(w, &d), 0));
    d._start_canary = 0;
    d._end_canary = 1;
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL, assert_int_equal(weft_component_register(w, &d), 0));
    d._end_canary = 0;
    // Nothing was registered under the name by the failed attempts.
    assert_int_equal(weft_component_lookup(w, "ok_name"), 0);
    assert_true(weft_component_register(w, &d) != 0);
}

static void misuse_bad_counts_are_invalid_arg(void **state)
{
    misuse_env *m = *state;
    tw_fixture *f = m->f;
    weft_world *w = f->w;
    vec3d p = {0, 0, 0};
    weft_value val = {m->pos, sizeof p, &p};
    weft_entity out[4];

    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL, assert_true(weft_spawn_with(w, NULL, 2) == 0));
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL, assert_true(weft_spawn_with(w, &val, -1) == 0));
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL,
           assert_int_equal(weft_spawn_bulk(w, NULL, 1, 4, out), WEFT_ERR_INVALID_ARG));
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL,
           assert_int_equal(weft_spawn_bulk(w, &val, -1, 4, out), WEFT_ERR_INVALID_ARG));
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL,
           assert_int_equal(weft_spawn_bulk(w, &val, 1, -4, out), WEFT_ERR_INVALID_ARG));
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL,
           assert_int_equal(weft_insert_many(w, m->e1, NULL, 1), WEFT_ERR_INVALID_ARG));
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL,
           assert_int_equal(weft_insert_many(w, m->e1, &val, -1), WEFT_ERR_INVALID_ARG));
}

static void misuse_tag_value_access_is_invalid_arg(void **state)
{
    misuse_env *m = *state;
    tw_fixture *f = m->f;
    weft_world *w = f->w;
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL, assert_null(weft_get(w, m->e1, m->tag, 0)));
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL, assert_null(weft_get_mut(w, m->e1, m->tag, 0)));
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL, assert_null(weft_resource_get(w, m->tag, 0)));
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL, assert_null(weft_resource_get_mut(w, m->tag, 0)));
}

static void misuse_no_change_ticks_get_ticks_is_invalid_arg(void **state)
{
    misuse_env *m = *state;
    tw_fixture *f = m->f;
    weft_ticks tk;
    MISUSE(f, WEFT_ERR_INVALID_ARG, NULL,
           assert_int_equal(weft_get_ticks(f->w, m->e1, m->noticks, &tk),
                            WEFT_ERR_INVALID_ARG));
}

// ---- INVALID_ENTITY / STALE_ENTITY ----

static void check_entity_rejected_opt(misuse_env *m, weft_entity bad, weft_status expected,
                                      bool try_despawn)
{
    tw_fixture *f = m->f;
    weft_world *w = f->w;
    vec3d p = {9, 9, 9};
    weft_value val = {m->pos, sizeof p, &p};
    weft_ticks tk;
    if (try_despawn) {
        MISUSE(f, expected, NULL, assert_int_equal(weft_despawn(w, bad), expected));
    }
    MISUSE(f, expected, NULL, assert_int_equal(weft_insert(w, bad, m->pos, &p, sizeof p),
                                               expected));
    MISUSE(f, expected, NULL, assert_int_equal(weft_insert(w, bad, m->tag, NULL, 0),
                                               expected));
    MISUSE(f, expected, NULL, assert_int_equal(weft_insert_many(w, bad, &val, 1), expected));
    MISUSE(f, expected, NULL, assert_int_equal(weft_remove(w, bad, m->pos), expected));
    MISUSE(f, expected, NULL, assert_int_equal(weft_remove(w, bad, m->vel), expected));
    MISUSE(f, expected, NULL, assert_null(weft_get(w, bad, m->pos, sizeof p)));
    MISUSE(f, expected, NULL, assert_null(weft_get(w, bad, m->vel, 12)));
    MISUSE(f, expected, NULL, assert_null(weft_get_mut(w, bad, m->pos, sizeof p)));
    MISUSE(f, expected, NULL, assert_int_equal(weft_get_ticks(w, bad, m->pos, &tk), expected));
    // Queries that answer instead of failing record nothing.
    weft_clear_error(w);
    assert_false(weft_is_alive(w, bad));
    assert_false(weft_has(w, bad, m->pos));
    assert_int_equal(weft_entity_archetype(w, bad), -1);
    assert_int_equal(weft_last_status(w), WEFT_OK);
}

static void check_entity_rejected(misuse_env *m, weft_entity bad, weft_status expected)
{
    check_entity_rejected_opt(m, bad, expected, true);
}

static void misuse_invalid_entities(void **state)
{
    misuse_env *m = *state;
    check_entity_rejected(m, WEFT_ENTITY_NONE, WEFT_ERR_INVALID_ENTITY);
    check_entity_rejected(m, mk(500, 1), WEFT_ERR_INVALID_ENTITY);
    check_entity_rejected(m, mk(0xFFFFFFFFu, 1), WEFT_ERR_INVALID_ENTITY);
    check_entity_rejected(m, mk(0x7FFFFFFFu, 0x12345), WEFT_ERR_INVALID_ENTITY);
}

static void misuse_stale_entities(void **state)
{
    misuse_env *m = *state;
    // A despawned handle; despawning it again is the same error.
    check_entity_rejected(m, m->dead, WEFT_ERR_STALE_ENTITY);
    // Its index reused: the old handle stays stale.
    weft_entity reused = weft_spawn(m->f->w);
    assert_int_equal(weft_entity_index(reused), weft_entity_index(m->dead));
    check_entity_rejected(m, m->dead, WEFT_ERR_STALE_ENTITY);
    // A generation from the future.
    check_entity_rejected(m, mk(weft_entity_index(m->e1), 77), WEFT_ERR_STALE_ENTITY);
}

static void misuse_despawn_twice_is_stale(void **state)
{
    misuse_env *m = *state;
    tw_fixture *f = m->f;
    weft_entity e = weft_spawn(f->w);
    assert_int_equal(weft_despawn(f->w, e), WEFT_OK);
    MISUSE(f, WEFT_ERR_STALE_ENTITY, NULL,
           assert_int_equal(weft_despawn(f->w, e), WEFT_ERR_STALE_ENTITY));
}

static void misuse_entity_from_another_world(void **state)
{
    misuse_env *m = *state;
    tw_fixture *other = tw_fixture_new();
    assert_non_null(other);
    // In the other world index 0 is on its second generation; here index 0
    // (e1) is on its first, so the foreign handle is stale here.
    weft_entity x = weft_spawn(other->w);
    assert_int_equal(weft_despawn(other->w, x), WEFT_OK);
    weft_entity foreign = weft_spawn(other->w);
    assert_int_equal(weft_entity_index(foreign), weft_entity_index(m->e1));
    assert_true(foreign != m->e1);
    check_entity_rejected(m, foreign, WEFT_ERR_STALE_ENTITY);
    // A foreign index this world never allocated.
    for (int i = 0; i < 100; i++) {
        foreign = weft_spawn(other->w);
    }
    check_entity_rejected(m, foreign, WEFT_ERR_INVALID_ENTITY);
    tw_fixture_free(other);
}

static void misuse_reserved_unflushed_is_not_live(void **state)
{
    misuse_env *m = *state;
    weft_entity r = weft_entity_reserve(m->f->w);
    assert_true(r != 0);
    // "not yet live": STALE_ENTITY (weft.h, WEFT_ERR_STALE_ENTITY). Despawn
    // is left out: it flushes pending reservations first (weft.h).
    check_entity_rejected_opt(m, r, WEFT_ERR_STALE_ENTITY, false);
    assert_false(weft_is_alive(m->f->w, r));
    assert_int_equal(weft_entity_flush(m->f->w), WEFT_OK);
    assert_true(weft_is_alive(m->f->w, r));
}

// ---- UNKNOWN_COMPONENT ----

static void check_component_rejected(misuse_env *m, weft_component bad, const char *needle)
{
    tw_fixture *f = m->f;
    weft_world *w = f->w;
    int32_t v = 1;
    weft_value one = {bad, 4, &v};
    weft_value two[2] = {{m->pos, sizeof(vec3d), NULL}, {bad, 4, &v}};
    weft_entity out[3];
    weft_ticks tk;
    weft_component_info ci;
    const weft_status U = WEFT_ERR_UNKNOWN_COMPONENT;
    MISUSE(f, U, needle, assert_int_equal(weft_insert(w, m->e1, bad, &v, 4), U));
    MISUSE(f, U, needle, assert_int_equal(weft_insert_many(w, m->e1, &one, 1), U));
    MISUSE(f, U, needle, assert_int_equal(weft_insert_many(w, m->e2, two, 2), U));
    MISUSE(f, U, needle, assert_int_equal(weft_remove(w, m->e1, bad), U));
    MISUSE(f, U, needle, assert_null(weft_get(w, m->e1, bad, 4)));
    MISUSE(f, U, needle, assert_null(weft_get_mut(w, m->e1, bad, 4)));
    MISUSE(f, U, needle, assert_int_equal(weft_get_ticks(w, m->e1, bad, &tk), U));
    MISUSE(f, U, needle, assert_true(weft_spawn_with(w, &one, 1) == 0));
    MISUSE(f, U, needle, assert_true(weft_spawn_with(w, two, 2) == 0));
    MISUSE(f, U, needle, assert_int_equal(weft_spawn_bulk(w, two, 2, 3, out), U));
    MISUSE(f, U, needle, assert_int_equal(weft_component_info_get(w, bad, &ci), U));
    MISUSE(f, U, needle, assert_int_equal(weft_resource_insert(w, bad, &v, 4), U));
    MISUSE(f, U, needle, assert_int_equal(weft_resource_remove(w, bad), U));
    MISUSE(f, U, needle, assert_null(weft_resource_get(w, bad, 4)));
    MISUSE(f, U, needle, assert_null(weft_resource_get_mut(w, bad, 4)));
    MISUSE(f, U, needle, assert_int_equal(weft_resource_get_ticks(w, bad, &tk), U));
    weft_clear_error(w);
    assert_false(weft_has(w, m->e1, bad));
    assert_false(weft_resource_has(w, bad));
    assert_int_equal(weft_last_status(w), WEFT_OK);
}

static void misuse_unknown_components(void **state)
{
    misuse_env *m = *state;
    check_component_rejected(m, WEFT_COMPONENT_NONE, NULL);
    check_component_rejected(m, 999, "999");
    check_component_rejected(m, 0xFFFFFFFFu, NULL);
    // An id that exists only in another world.
    tw_fixture *other = tw_fixture_new();
    assert_non_null(other);
    weft_component foreign = 0;
    char name[16];
    for (int i = 0; i < 12; i++) {
        snprintf(name, sizeof name, "f%d", i);
        foreign = tw_comp(other->w, name, 4, 4, WEFT_STORAGE_TABLE, 0);
    }
    check_component_rejected(m, foreign, NULL);
    tw_fixture_free(other);
}

// ---- SIZE_MISMATCH ----

static void misuse_size_mismatch_names_component_and_sizes(void **state)
{
    misuse_env *m = *state;
    tw_fixture *f = m->f;
    weft_world *w = f->w;
    const weft_status S = WEFT_ERR_SIZE_MISMATCH;
    unsigned char buf[64] = {0};
    weft_entity out[3];

    // Both sizes must be in the message: the component's 24 and the caller's 40.
    MISUSE(f, S, "position", assert_int_equal(weft_insert(w, m->e1, m->pos, buf, 40), S));
    assert_true(tw_contains(weft_last_error(w), "24"));
    assert_true(tw_contains(weft_last_error(w), "40"));
    MISUSE(f, S, "position", assert_int_equal(weft_insert(w, m->e2, m->pos, buf, 8), S));
    MISUSE(f, S, "velocity_sparse", assert_int_equal(weft_insert(w, m->e2, m->vel, buf, 16), S));
    MISUSE(f, S, "marker", assert_int_equal(weft_insert(w, m->e2, m->tag, buf, 4), S));
    MISUSE(f, S, "position", assert_null(weft_get(w, m->e1, m->pos, 23)));
    assert_true(tw_contains(weft_last_error(w), "23"));
    MISUSE(f, S, "velocity_sparse", assert_null(weft_get(w, m->e1, m->vel, 4)));
    MISUSE(f, S, "position", assert_null(weft_get_mut(w, m->e1, m->pos, 25)));
    MISUSE(f, S, "frozen_id", assert_null(weft_get(w, m->e1, m->frozen, 8)));

    weft_value bad1[2] = {{m->vel, 12, NULL}, {m->pos, 16, buf}};
    MISUSE(f, S, "position", assert_true(weft_spawn_with(w, bad1, 2) == 0));
    MISUSE(f, S, "position", assert_int_equal(weft_spawn_bulk(w, bad1, 2, 3, out), S));
    MISUSE(f, S, "position", assert_int_equal(weft_insert_many(w, m->e2, bad1, 2), S));
    weft_value badtag = {m->tag, 1, buf};
    MISUSE(f, S, "marker", assert_true(weft_spawn_with(w, &badtag, 1) == 0));

    MISUSE(f, S, "position", assert_int_equal(weft_resource_insert(w, m->pos, buf, 32), S));
    MISUSE(f, S, "position", assert_null(weft_resource_get(w, m->pos, 4)));
    MISUSE(f, S, "position", assert_null(weft_resource_get_mut(w, m->pos, 48)));
    MISUSE(f, S, "velocity_sparse", assert_int_equal(weft_resource_insert(w, m->vel, buf, 4), S));
}

// ---- registration errors ----

static void misuse_duplicate_registration(void **state)
{
    misuse_env *m = *state;
    tw_fixture *f = m->f;
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = "position";
    d.size = sizeof(vec3d);
    d.align = 8;
    MISUSE(f, WEFT_ERR_ALREADY_EXISTS, "position",
           assert_int_equal(weft_component_register(f->w, &d), 0));
    d.size = 4; // a different layout under the same name
    d.align = 4;
    d.storage = WEFT_STORAGE_SPARSE;
    MISUSE(f, WEFT_ERR_ALREADY_EXISTS, "position",
           assert_int_equal(weft_component_register(f->w, &d), 0));
    assert_int_equal(weft_component_lookup(f->w, "position"), m->pos);
    weft_component_info ci;
    assert_int_equal(weft_component_info_get(f->w, m->pos, &ci), WEFT_OK);
    assert_int_equal(ci.size, sizeof(vec3d));
}

static void misuse_bad_alignment(void **state)
{
    misuse_env *m = *state;
    tw_fixture *f = m->f;
    static const struct {
        size_t size;
        size_t align;
    } cases[] = {{12, 3}, {12, 6}, {8192, 8192}, {16, 12}, {12, 8}, {4, 4096},
                 {24, 16}, {1, 2}, {96, 64}, {(size_t)1 << 20, 1u << 13}};
    char name[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        weft_component_desc d;
        memset(&d, 0, sizeof d);
        snprintf(name, sizeof name, "misaligned_%zu", i);
        d.name = name;
        d.size = cases[i].size;
        d.align = cases[i].align;
        MISUSE(f, WEFT_ERR_BAD_ALIGNMENT, NULL,
               assert_int_equal(weft_component_register(f->w, &d), 0));
        assert_int_equal(weft_component_lookup(f->w, name), 0);
    }
    // The limits themselves are fine.
    assert_true(tw_comp(f->w, "page", 4096, 4096, WEFT_STORAGE_TABLE, 0) != 0);
    assert_true(tw_comp(f->w, "byte", 1, 1, WEFT_STORAGE_TABLE, 0) != 0);
}

static void misuse_capacity_of_components(void **state)
{
    misuse_env *m = *state;
    tw_fixture *f = m->f;
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    char name[32];
    d.name = name;
    d.size = 4;
    // Register until the limit weft.h states (ids 1 .. 32,000) is hit,
    // then check that one more attempt fails the same way and changes
    // nothing.
    weft_component last = 0;
    for (int i = 0; i < 70000; i++) {
        snprintf(name, sizeof name, "many_%d", i);
        weft_clear_error(f->w);
        weft_component c = weft_component_register(f->w, &d);
        if (c == 0) {
            tw_expect_error(f, WEFT_ERR_CAPACITY, NULL);
            assert_int_equal(last, 32000);
            snprintf(name, sizeof name, "one_more");
            MISUSE(f, WEFT_ERR_CAPACITY, NULL,
                   assert_int_equal(weft_component_register(f->w, &d), 0));
            assert_int_equal(weft_component_lookup(f->w, "one_more"), 0);
            return;
        }
        last = c;
    }
    fail_msg("70,000 components registered: no limit");
}

// ---- IMMUTABLE ----

static void misuse_get_mut_of_immutable(void **state)
{
    misuse_env *m = *state;
    tw_fixture *f = m->f;
    weft_world_increment_change_tick(f->w);
    MISUSE(f, WEFT_ERR_IMMUTABLE, "frozen_id",
           assert_null(weft_get_mut(f->w, m->e1, m->frozen, 4)));
    MISUSE(f, WEFT_ERR_IMMUTABLE, "frozen_id",
           assert_null(weft_resource_get_mut(f->w, m->frozen, 4)));
    weft_ticks tk;
    assert_int_equal(weft_get_ticks(f->w, m->e1, m->frozen, &tk), WEFT_OK);
    assert_int_equal(tk.changed, 1); // the refused get_mut stamped nothing
}

// ---- DUPLICATE_COMPONENT ----

static void misuse_duplicate_component_in_one_call(void **state)
{
    misuse_env *m = *state;
    tw_fixture *f = m->f;
    weft_world *w = f->w;
    const weft_status D = WEFT_ERR_DUPLICATE_COMPONENT;
    vec3d p = {1, 1, 1};
    weft_value dup[3] = {{m->pos, sizeof p, &p}, {m->vel, 12, NULL}, {m->pos, sizeof p, &p}};
    weft_value duptag[2] = {{m->tag, 0, NULL}, {m->tag, 0, NULL}};
    weft_value dupsparse[2] = {{m->vel, 12, NULL}, {m->vel, 12, NULL}};
    weft_entity out[5];
    MISUSE(f, D, "position", assert_true(weft_spawn_with(w, dup, 3) == 0));
    MISUSE(f, D, "marker", assert_true(weft_spawn_with(w, duptag, 2) == 0));
    MISUSE(f, D, "position", assert_int_equal(weft_spawn_bulk(w, dup, 3, 5, out), D));
    MISUSE(f, D, "velocity_sparse", assert_int_equal(weft_spawn_bulk(w, dupsparse, 2, 5, out), D));
    MISUSE(f, D, "position", assert_int_equal(weft_insert_many(w, m->e2, dup, 3), D));
    MISUSE(f, D, "velocity_sparse", assert_int_equal(weft_insert_many(w, m->e1, dupsparse, 2), D));
}

// ---- NOT_FOUND ----

static void misuse_not_found(void **state)
{
    misuse_env *m = *state;
    tw_fixture *f = m->f;
    weft_world *w = f->w;
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    weft_archetype_info ai;
    MISUSE(f, WEFT_ERR_NOT_FOUND, NULL,
           assert_int_equal(weft_archetype_info_get(w, -1, &ai), WEFT_ERR_NOT_FOUND));
    MISUSE(f, WEFT_ERR_NOT_FOUND, NULL,
           assert_int_equal(weft_archetype_info_get(w, s.archetypes, &ai), WEFT_ERR_NOT_FOUND));
    MISUSE(f, WEFT_ERR_NOT_FOUND, NULL,
           assert_int_equal(weft_archetype_info_get(w, 1 << 30, &ai), WEFT_ERR_NOT_FOUND));
    weft_ticks tk;
    MISUSE(f, WEFT_ERR_NOT_FOUND, NULL,
           assert_int_equal(weft_get_ticks(w, m->e2, m->vel, &tk), WEFT_ERR_NOT_FOUND));
    MISUSE(f, WEFT_ERR_NOT_FOUND, NULL,
           assert_int_equal(weft_get_ticks(w, m->e2, m->frozen, &tk), WEFT_ERR_NOT_FOUND));
    MISUSE(f, WEFT_ERR_NOT_FOUND, NULL,
           assert_int_equal(weft_resource_get_ticks(w, m->vel, &tk), WEFT_ERR_NOT_FOUND));
}

// ---- not errors ----

static void misuse_absent_things_are_not_errors(void **state)
{
    misuse_env *m = *state;
    tw_fixture *f = m->f;
    weft_world *w = f->w;
    tw_snap snap = tw_snap_take(w);
    weft_clear_error(w);
    assert_null(weft_get(w, m->e2, m->vel, 12));
    assert_null(weft_get(w, m->e2, m->frozen, 4));
    assert_null(weft_resource_get(w, m->vel, 12));
    assert_int_equal(weft_remove(w, m->e2, m->vel), WEFT_OK);
    assert_int_equal(weft_resource_remove(w, m->vel), WEFT_OK);
    assert_int_equal(weft_component_lookup(w, "nope"), 0);
    assert_false(weft_has(w, m->e2, m->tag));
    assert_int_equal(weft_last_status(w), WEFT_OK);
    assert_int_equal(f->log.count, 0);
    tw_snap_expect_same(w, &snap);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, misuse_setup, misuse_teardown)
    const struct CMUnitTest tests[] = {
        T(misuse_null_world_is_invalid_handle),
        T(misuse_null_out_pointers_are_invalid_arg),
        T(misuse_bad_component_desc_is_invalid_arg),
        T(misuse_bad_counts_are_invalid_arg),
        T(misuse_tag_value_access_is_invalid_arg),
        T(misuse_no_change_ticks_get_ticks_is_invalid_arg),
        T(misuse_invalid_entities),
        T(misuse_stale_entities),
        T(misuse_despawn_twice_is_stale),
        T(misuse_entity_from_another_world),
        T(misuse_reserved_unflushed_is_not_live),
        T(misuse_unknown_components),
        T(misuse_size_mismatch_names_component_and_sizes),
        T(misuse_duplicate_registration),
        T(misuse_bad_alignment),
        T(misuse_capacity_of_components),
        T(misuse_get_mut_of_immutable),
        T(misuse_duplicate_component_in_one_call),
        T(misuse_not_found),
        T(misuse_absent_things_are_not_errors),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

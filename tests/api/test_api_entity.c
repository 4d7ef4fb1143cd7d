// tests/api/test_api_entity.c - black-box tests of entity handles: spawn,
// spawn_with, spawn_bulk, despawn, generations, LIFO reuse, reserve + flush
// (also from several threads at once).
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "test_world.h"
#include "weft.h"

static weft_entity mk(uint32_t index, uint32_t gen)
{
    return ((uint64_t)gen << 32) | index;
}

// ---- generations and reuse ----

static void entity_alloc_trace_first_generation_is_one(void **state)
{
    tw_fixture *f = *state;
    // {index, generation}: A{0,1}, B{1,1}, despawn A, C{0,2} (LIFO reuse).
    weft_entity a = weft_spawn(f->w);
    weft_entity b = weft_spawn(f->w);
    assert_true(a == mk(0, 1));
    assert_true(b == mk(1, 1));
    assert_int_equal(weft_despawn(f->w, a), WEFT_OK);
    assert_false(weft_is_alive(f->w, a)); // right away, before any reuse
    assert_true(weft_is_alive(f->w, b));
    weft_entity c = weft_spawn(f->w);
    assert_true(c == mk(0, 2));
    assert_int_equal(weft_entity_index(c), 0);
    assert_int_equal(weft_entity_generation(c), 2);
    assert_false(weft_is_alive(f->w, a));
    assert_true(weft_is_alive(f->w, c));
}

static void entity_stale_handle_rejected_after_reuse(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component hp = tw_comp(w, "hp", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component sp = tw_comp(w, "sp", 4, 4, WEFT_STORAGE_SPARSE, 0);
    weft_entity e[6];
    for (int i = 0; i < 6; i++) {
        e[i] = weft_spawn(w);
    }
    // A stale handle: {5,1} despawned, index 5 reused as {5,2}.
    weft_entity old = e[5];
    assert_true(old == mk(5, 1));
    assert_int_equal(weft_despawn(w, old), WEFT_OK);
    weft_entity fresh = weft_spawn(w);
    assert_true(fresh == mk(5, 2));
    int32_t v = 7;
    assert_int_equal(weft_insert(w, fresh, hp, &v, 4), WEFT_OK);
    assert_int_equal(weft_insert(w, fresh, sp, &v, 4), WEFT_OK);

    tw_snap snap = tw_snap_take(w);
    assert_false(weft_is_alive(w, old));
    assert_false(weft_has(w, old, hp));
    assert_false(weft_has(w, old, sp));
    assert_int_equal(weft_entity_archetype(w, old), -1);

    weft_clear_error(w);
    assert_null(weft_get(w, old, hp, 4));
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, NULL);
    weft_clear_error(w);
    assert_null(weft_get(w, old, sp, 4));
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, NULL);
    weft_clear_error(w);
    assert_null(weft_get_mut(w, old, hp, 4));
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, NULL);
    assert_int_equal(weft_insert(w, old, hp, &v, 4), WEFT_ERR_STALE_ENTITY);
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, NULL);
    weft_value val = {hp, 4, &v};
    assert_int_equal(weft_insert_many(w, old, &val, 1), WEFT_ERR_STALE_ENTITY);
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, NULL);
    assert_int_equal(weft_remove(w, old, hp), WEFT_ERR_STALE_ENTITY);
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, NULL);
    weft_ticks t;
    assert_int_equal(weft_get_ticks(w, old, hp, &t), WEFT_ERR_STALE_ENTITY);
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, NULL);
    assert_int_equal(weft_despawn(w, old), WEFT_ERR_STALE_ENTITY);
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, NULL);
    tw_snap_expect_same(w, &snap);

    // The live holder of index 5 is untouched.
    const int32_t *g = weft_get(w, fresh, hp, 4);
    assert_non_null(g);
    assert_int_equal(*g, 7);
}

static void entity_indices_reused_lifo(void **state)
{
    tw_fixture *f = *state;
    weft_entity e[10];
    for (int i = 0; i < 10; i++) {
        e[i] = weft_spawn(f->w);
        assert_int_equal(weft_entity_index(e[i]), (uint32_t)i);
    }
    assert_int_equal(weft_despawn(f->w, e[2]), WEFT_OK);
    assert_int_equal(weft_despawn(f->w, e[7]), WEFT_OK);
    assert_int_equal(weft_despawn(f->w, e[4]), WEFT_OK);
    weft_entity r1 = weft_spawn(f->w);
    weft_entity r2 = weft_spawn(f->w);
    assert_int_equal(weft_despawn(f->w, e[9]), WEFT_OK);
    weft_entity r3 = weft_spawn(f->w);
    weft_entity r4 = weft_spawn(f->w);
    weft_entity r5 = weft_spawn(f->w);
    assert_true(r1 == mk(4, 2));
    assert_true(r2 == mk(7, 2));
    assert_true(r3 == mk(9, 2));
    assert_true(r4 == mk(2, 2));
    assert_true(r5 == mk(10, 1)); // free list empty: a fresh index
}

static void entity_generation_bumps_on_every_despawn(void **state)
{
    tw_fixture *f = *state;
    for (uint32_t g = 1; g <= 20; g++) {
        weft_entity e = weft_spawn(f->w);
        assert_true(e == mk(0, g));
        assert_true(weft_is_alive(f->w, e));
        assert_int_equal(weft_despawn(f->w, e), WEFT_OK);
        assert_false(weft_is_alive(f->w, e));
    }
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(f->w, &s), WEFT_OK);
    assert_int_equal(s.entity_records, 1);
    assert_int_equal(s.live_entities, 0);
}

static void entity_spawn_many_unique_and_alive(void **state)
{
    tw_fixture *f = *state;
    enum { N = 5000 };
    weft_entity *e = calloc(N, sizeof *e);
    assert_non_null(e);
    for (int i = 0; i < N; i++) {
        e[i] = weft_spawn(f->w);
        assert_true(e[i] != 0);
        assert_int_equal(weft_entity_index(e[i]), (uint32_t)i);
    }
    for (int i = 0; i < N; i += 2) {
        assert_int_equal(weft_despawn(f->w, e[i]), WEFT_OK);
    }
    for (int i = 0; i < N; i++) {
        assert_int_equal(weft_is_alive(f->w, e[i]), i % 2 == 1);
    }
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(f->w, &s), WEFT_OK);
    assert_int_equal(s.live_entities, N / 2);
    assert_int_equal(weft_world_check(f->w), WEFT_OK);
    free(e);
}

static void entity_is_alive_false_for_none_and_unknown(void **state)
{
    tw_fixture *f = *state;
    weft_entity e = weft_spawn(f->w);
    weft_clear_error(f->w);
    assert_false(weft_is_alive(f->w, 0));
    assert_false(weft_is_alive(f->w, mk(12345, 1)));
    assert_false(weft_is_alive(f->w, mk(0, 0)));
    assert_false(weft_is_alive(f->w, mk(0, 2)));
    assert_false(weft_is_alive(NULL, e));
    assert_false(weft_is_alive(f->w, mk(0xFFFFFFFFu, 1)));
    assert_int_equal(weft_last_status(f->w), WEFT_OK); // answers, not errors
}

// ---- spawn_with / spawn_bulk ----

typedef struct pos3 {
    float x, y, z;
} pos3;

static void entity_spawn_with_lands_in_final_archetype(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    tw_tracker *tr = &f->tracker;
    weft_component tracked = tw_tracked_register(w, "tracked", WEFT_STORAGE_TABLE, tr);
    weft_component pos = tw_comp(w, "pos", sizeof(pos3), 0, WEFT_STORAGE_TABLE, 0);
    weft_component sp = tw_comp(w, "sp", 8, 8, WEFT_STORAGE_SPARSE, 0);
    weft_component tag = tw_comp(w, "tag", 0, 0, WEFT_STORAGE_TABLE, 0);

    tw_tracked tv;
    tw_tracked_make(&tv, 77);
    pos3 p = {1, 2, 3};
    uint64_t s = 0x1122334455667788ull;
    weft_value vals[4] = {
        {sp, 8, &s}, {tag, 0, NULL}, {pos, sizeof p, &p}, {tracked, sizeof tv, &tv}};
    weft_entity e = weft_spawn_with(w, vals, 4);
    assert_true(e != 0);
    // One placement: the copy hook ran once and nothing moved. (Empty
    // intermediate archetypes may exist as graph-walk caches; no entity
    // passed through them.)
    assert_int_equal(tr->copies, 1);
    assert_int_equal(tr->moves, 0);
    assert_int_equal(tr->ctors, 0);
    weft_world_stats st;
    assert_int_equal(weft_world_get_stats(w, &st), WEFT_OK);
    for (int32_t a = 0; a < st.archetypes; a++) {
        weft_archetype_info ai;
        assert_int_equal(weft_archetype_info_get(w, a, &ai), WEFT_OK);
        assert_int_equal(ai.entity_count, a == weft_entity_archetype(w, e) ? 1 : 0);
    }
    weft_archetype_info info;
    assert_int_equal(weft_archetype_info_get(w, weft_entity_archetype(w, e), &info),
                     WEFT_OK);
    assert_int_equal(info.component_count, 4);
    assert_int_equal(info.entity_count, 1);

    const pos3 *gp = weft_get(w, e, pos, sizeof(pos3));
    assert_non_null(gp);
    assert_memory_equal(gp, &p, sizeof p);
    const uint64_t *gs = weft_get(w, e, sp, 8);
    assert_non_null(gs);
    assert_true(*gs == s);
    const tw_tracked *gt = weft_get(w, e, tracked, sizeof(tw_tracked));
    assert_non_null(gt);
    assert_true(gt->self == gt);
    assert_true(gt->payload == 77);
    assert_true(weft_has(w, e, tag));
    assert_int_equal(tr->errors, 0);
}

static void entity_spawn_with_nothing_is_empty_entity(void **state)
{
    tw_fixture *f = *state;
    weft_entity e = weft_spawn_with(f->w, NULL, 0);
    assert_true(e != 0);
    assert_true(weft_is_alive(f->w, e));
    assert_int_equal(weft_entity_archetype(f->w, e), 0);
}

static void entity_spawn_with_null_ptr_default_constructs(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    tw_tracker *tr = &f->tracker;
    weft_component tracked = tw_tracked_register(w, "tracked", WEFT_STORAGE_SPARSE, tr);
    weft_component raw = tw_comp(w, "raw", 24, 8, WEFT_STORAGE_TABLE, 0);
    weft_value vals[2] = {{raw, 24, NULL}, {tracked, sizeof(tw_tracked), NULL}};
    weft_entity e = weft_spawn_with(w, vals, 2);
    assert_true(e != 0);
    assert_int_equal(tr->ctors, 1);
    assert_int_equal(tr->copies, 0);
    const unsigned char *r = weft_get(w, e, raw, 24);
    assert_non_null(r);
    unsigned char zero[24] = {0};
    assert_memory_equal(r, zero, 24); // zero-filled without a ctor
    const tw_tracked *t = weft_get(w, e, tracked, sizeof(tw_tracked));
    assert_non_null(t);
    assert_true(t->magic == TW_MAGIC_LIVE);
    assert_true(t->self == t);
}

static void entity_spawn_bulk_writes_ids_and_values(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = tw_comp(w, "a", 8, 8, WEFT_STORAGE_TABLE, 0);
    weft_component b = tw_comp(w, "b", 3, 1, WEFT_STORAGE_SPARSE, 0);
    weft_component tag = tw_comp(w, "tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    weft_component z = tw_comp(w, "z", 16, 16, WEFT_STORAGE_TABLE, 0);
    enum { N = 1000 };
    uint64_t *av = malloc(N * sizeof *av);
    unsigned char *bv = malloc(N * 3);
    weft_entity *ids = malloc(N * sizeof *ids);
    assert_non_null(av);
    assert_non_null(bv);
    assert_non_null(ids);
    for (int i = 0; i < N; i++) {
        av[i] = (uint64_t)i * 1000003u;
        bv[3 * i] = (unsigned char)i;
        bv[3 * i + 1] = (unsigned char)(i >> 8);
        bv[3 * i + 2] = 0xEE;
    }
    weft_value cols[4] = {{a, 8, av}, {b, 3, bv}, {tag, 0, NULL}, {z, 16, NULL}};
    weft_world_stats before;
    assert_int_equal(weft_world_get_stats(w, &before), WEFT_OK);
    assert_int_equal(weft_spawn_bulk(w, cols, 4, N, ids), WEFT_OK);
    weft_world_stats after;
    assert_int_equal(weft_world_get_stats(w, &after), WEFT_OK);
    assert_int_equal(after.live_entities, before.live_entities + N);
    weft_archetype_info bulk_arch;
    assert_int_equal(weft_archetype_info_get(w, weft_entity_archetype(w, ids[0]), &bulk_arch),
                     WEFT_OK);
    assert_int_equal(bulk_arch.entity_count, N);
    assert_int_equal(bulk_arch.component_count, 4);
    unsigned char zero[16] = {0};
    for (int i = 0; i < N; i++) {
        assert_true(ids[i] != 0);
        assert_true(weft_is_alive(w, ids[i]));
        for (int j = 0; j < i && j < 8; j++) {
            assert_true(ids[i] != ids[j]);
        }
        const uint64_t *ga = weft_get(w, ids[i], a, 8);
        assert_non_null(ga);
        assert_true(*ga == av[i]);
        const unsigned char *gb = weft_get(w, ids[i], b, 3);
        assert_non_null(gb);
        assert_memory_equal(gb, bv + 3 * i, 3);
        const void *gz = weft_get(w, ids[i], z, 16);
        assert_non_null(gz);
        assert_memory_equal(gz, zero, 16);
        assert_true(weft_has(w, ids[i], tag));
    }
    // All ids distinct: indices are 0..N-1 in a fresh world.
    char *seen = calloc(N, 1);
    assert_non_null(seen);
    for (int i = 0; i < N; i++) {
        uint32_t idx = weft_entity_index(ids[i]);
        assert_true(idx < N);
        assert_false(seen[idx]);
        seen[idx] = 1;
    }
    free(seen);
    // out_entities may be NULL; n = 0 spawns nothing.
    assert_int_equal(weft_spawn_bulk(w, cols, 4, 10, NULL), WEFT_OK);
    assert_int_equal(weft_spawn_bulk(w, cols, 4, 0, NULL), WEFT_OK);
    assert_int_equal(weft_world_get_stats(w, &after), WEFT_OK);
    assert_int_equal(after.live_entities, before.live_entities + N + 10);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    free(av);
    free(bv);
    free(ids);
}

static void entity_spawn_bulk_default_constructs(void **state)
{
    tw_fixture *f = *state;
    tw_tracker *tr = &f->tracker;
    weft_component t = tw_tracked_register(f->w, "tracked", WEFT_STORAGE_TABLE, tr);
    weft_entity ids[100];
    weft_value col = {t, sizeof(tw_tracked), NULL};
    assert_int_equal(weft_spawn_bulk(f->w, &col, 1, 100, ids), WEFT_OK);
    assert_int_equal(tr->ctors, 100);
    assert_int_equal(tr->copies, 0);
    for (int i = 0; i < 100; i++) {
        const tw_tracked *v = weft_get(f->w, ids[i], t, sizeof(tw_tracked));
        assert_non_null(v);
        assert_true(v->self == v);
    }
    tw_tracked src[50];
    for (int i = 0; i < 50; i++) {
        tw_tracked_make(&src[i], (uint64_t)i + 1000);
    }
    col.ptr = src;
    assert_int_equal(weft_spawn_bulk(f->w, &col, 1, 50, ids), WEFT_OK);
    assert_int_equal(tr->copies, 50);
    for (int i = 0; i < 50; i++) {
        const tw_tracked *v = weft_get(f->w, ids[i], t, sizeof(tw_tracked));
        assert_non_null(v);
        assert_true(v->payload == (uint64_t)i + 1000);
        assert_true(v->self == v);
    }
    assert_int_equal(tr->errors, 0);
    assert_int_equal(tw_tracker_live(tr), 150);
}

static void entity_despawn_middle_row_keeps_others(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = tw_comp(w, "a", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component s = tw_comp(w, "s", 4, 4, WEFT_STORAGE_SPARSE, 0);
    enum { N = 40 };
    weft_entity e[N];
    for (int i = 0; i < N; i++) {
        int32_t v = i;
        weft_value vals[2] = {{a, 4, &v}, {s, 4, &v}};
        e[i] = weft_spawn_with(w, vals, 2);
    }
    // First, a middle row, the last row, then row 0.
    int order[] = {17, N - 1, 0, 5, 30, 22};
    bool dead[N] = {false};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        assert_int_equal(weft_despawn(w, e[order[k]]), WEFT_OK);
        dead[order[k]] = true;
        assert_int_equal(weft_world_check(w), WEFT_OK);
        for (int i = 0; i < N; i++) {
            assert_int_equal(weft_is_alive(w, e[i]), !dead[i]);
            if (dead[i]) {
                continue;
            }
            const int32_t *ga = weft_get(w, e[i], a, 4);
            const int32_t *gs = weft_get(w, e[i], s, 4);
            assert_non_null(ga);
            assert_non_null(gs);
            assert_int_equal(*ga, i);
            assert_int_equal(*gs, i);
        }
    }
}

// ---- reserve + flush ----

static void entity_reserve_not_alive_until_flush(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_entity live = weft_spawn(w);
    weft_entity r = weft_entity_reserve(w);
    assert_true(r != 0);
    assert_true(r != live);
    assert_false(weft_is_alive(w, r));
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    assert_int_equal(s.pending_reserved, 1);
    assert_int_equal(s.live_entities, 1);
    uint64_t h = weft_world_hash(w);

    assert_int_equal(weft_entity_flush(w), WEFT_OK);
    assert_true(weft_is_alive(w, r)); // the same handle value
    assert_int_equal(weft_entity_archetype(w, r), 0);
    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    assert_int_equal(s.pending_reserved, 0);
    assert_int_equal(s.live_entities, 2);
    assert_true(weft_world_hash(w) != h);
    assert_int_equal(weft_world_check(w), WEFT_OK);

    // A flushed id is an ordinary entity.
    weft_component c = tw_comp(w, "c", 4, 4, WEFT_STORAGE_TABLE, 0);
    int32_t v = 3;
    assert_int_equal(weft_insert(w, r, c, &v, 4), WEFT_OK);
    assert_int_equal(weft_despawn(w, r), WEFT_OK);
    assert_false(weft_is_alive(w, r));
    // Flushing with nothing pending is fine.
    assert_int_equal(weft_entity_flush(w), WEFT_OK);
}

static void entity_reserve_reuses_despawned_generation(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_entity e[4];
    for (int i = 0; i < 4; i++) {
        e[i] = weft_spawn(w);
    }
    assert_int_equal(weft_despawn(w, e[1]), WEFT_OK);
    weft_entity r1 = weft_entity_reserve(w);
    weft_entity r2 = weft_entity_reserve(w);
    assert_true(r1 != r2);
    // Whatever index is used, a stale handle is never handed out again.
    for (int i = 0; i < 4; i++) {
        assert_true(r1 != e[i]);
        assert_true(r2 != e[i]);
    }
    if (weft_entity_index(r1) == 1) {
        assert_int_equal(weft_entity_generation(r1), 2);
    }
    assert_int_equal(weft_entity_flush(w), WEFT_OK);
    assert_true(weft_is_alive(w, r1));
    assert_true(weft_is_alive(w, r2));
    assert_false(weft_is_alive(w, e[1]));
    weft_entity n = weft_spawn(w);
    assert_true(n != r1 && n != r2);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void entity_spawn_flushes_pending_reservations(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_entity r = weft_entity_reserve(w);
    weft_entity e = weft_spawn(w);
    assert_true(e != 0 && e != r);
    assert_true(weft_is_alive(w, r));
    assert_true(weft_is_alive(w, e));
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    assert_int_equal(s.pending_reserved, 0);
    assert_int_equal(s.live_entities, 2);

    // Also through spawn_with and spawn_bulk.
    weft_component c = tw_comp(w, "c", 4, 4, WEFT_STORAGE_TABLE, 0);
    int32_t v = 1;
    weft_value val = {c, 4, &v};
    weft_entity r2 = weft_entity_reserve(w);
    assert_true(weft_spawn_with(w, &val, 1) != 0);
    assert_true(weft_is_alive(w, r2));
    weft_entity r3 = weft_entity_reserve(w);
    weft_entity out[3];
    int32_t vs[3] = {1, 2, 3};
    val.ptr = vs;
    assert_int_equal(weft_spawn_bulk(w, &val, 1, 3, out), WEFT_OK);
    assert_true(weft_is_alive(w, r3));
    for (int i = 0; i < 3; i++) {
        assert_true(out[i] != r3 && out[i] != r2 && out[i] != r);
    }
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

enum { RES_THREADS = 4, RES_PER_THREAD = 3000 };

typedef struct reserve_job {
    weft_world *w;
    weft_entity *out;
    int32_t n;
    pthread_barrier_t *start;
} reserve_job;

static void *reserve_worker(void *arg)
{
    reserve_job *j = arg;
    pthread_barrier_wait(j->start);
    for (int32_t i = 0; i < j->n; i++) {
        j->out[i] = weft_entity_reserve(j->w);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void entity_reserve_from_threads_gives_distinct_ids(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    // Leave freed indices around so reservations may draw on them too.
    enum { PRE = 600 };
    weft_entity pre[PRE];
    for (int i = 0; i < PRE; i++) {
        pre[i] = weft_spawn(w);
    }
    for (int i = 0; i < PRE; i += 2) {
        assert_int_equal(weft_despawn(w, pre[i]), WEFT_OK);
    }
    const int total = RES_THREADS * RES_PER_THREAD;
    weft_entity *ids = calloc((size_t)total, sizeof *ids);
    assert_non_null(ids);
    pthread_t th[RES_THREADS];
    reserve_job jobs[RES_THREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, RES_THREADS);
    for (int t = 0; t < RES_THREADS; t++) {
        jobs[t].w = w;
        jobs[t].out = ids + t * RES_PER_THREAD;
        jobs[t].n = RES_PER_THREAD;
        jobs[t].start = &start;
        assert_int_equal(pthread_create(&th[t], NULL, reserve_worker, &jobs[t]), 0);
    }
    for (int t = 0; t < RES_THREADS; t++) {
        pthread_join(th[t], NULL);
    }
    pthread_barrier_destroy(&start);

    for (int i = 0; i < total; i++) {
        assert_true(ids[i] != 0);
        assert_false(weft_is_alive(w, ids[i]));
    }
    for (int i = 1; i < PRE; i += 2) {
        assert_true(weft_is_alive(w, pre[i]));
    }
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    assert_int_equal(s.pending_reserved, total);
    assert_int_equal(s.live_entities, PRE / 2);

    // No id handed out twice, none equal to a live or stale handle.
    weft_entity *sorted = malloc((size_t)total * sizeof *sorted);
    assert_non_null(sorted);
    memcpy(sorted, ids, (size_t)total * sizeof *sorted);
    qsort(sorted, (size_t)total, sizeof *sorted, cmp_u64);
    for (int i = 1; i < total; i++) {
        assert_true(sorted[i] != sorted[i - 1]);
    }
    // Indices are distinct too (two live entities cannot share an index).
    for (int i = 0; i < total; i++) {
        sorted[i] = weft_entity_index(ids[i]);
    }
    qsort(sorted, (size_t)total, sizeof *sorted, cmp_u64);
    for (int i = 1; i < total; i++) {
        assert_true(sorted[i] != sorted[i - 1]);
    }
    for (int i = 0; i < PRE; i++) {
        weft_entity key = pre[i];
        for (int k = 0; k < total; k++) {
            if (ids[k] == key) {
                fail_msg("reserved id %llx equals pre-existing handle", (unsigned long long)key);
            }
        }
    }

    assert_int_equal(weft_entity_flush(w), WEFT_OK);
    for (int i = 0; i < total; i++) {
        assert_true(weft_is_alive(w, ids[i]));
    }
    for (int i = 0; i < PRE; i += 2) {
        assert_false(weft_is_alive(w, pre[i]));
    }
    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    assert_int_equal(s.pending_reserved, 0);
    assert_int_equal(s.live_entities, PRE / 2 + total);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    free(sorted);
    free(ids);
}

// The spawn archetype cache writes values by remembered column: spawning
// the same set in another order, or a set of the same size with a sparse
// member, must still put every value in its own component.
static void entity_spawn_with_same_set_any_order(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = tw_comp(w, "a", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component b = tw_comp(w, "b", 8, 8, WEFT_STORAGE_TABLE, 0);
    weft_component s = tw_comp(w, "s", 4, 4, WEFT_STORAGE_SPARSE, 0);
    int32_t va = 1;
    int64_t vb = 2;
    int32_t vs = 3;
    weft_entity e[4];
    e[0] = weft_spawn_with(w, (weft_value[]){{a, 4, &va}, {b, 8, &vb}}, 2);
    e[1] = weft_spawn_with(w, (weft_value[]){{b, 8, &vb}, {a, 4, &va}}, 2);
    e[2] = weft_spawn_with(w, (weft_value[]){{b, 8, &vb}, {a, 4, &va}}, 2);
    e[3] = weft_spawn_with(w, (weft_value[]){{s, 4, &vs}, {a, 4, &va}}, 2);
    for (int i = 0; i < 4; i++) {
        assert_true(e[i] != 0);
        assert_int_equal(*(const int32_t *)weft_get(w, e[i], a, 4), 1);
        if (i < 3) {
            assert_int_equal(*(const int64_t *)weft_get(w, e[i], b, 8), 2);
        }
    }
    assert_int_equal(*(const int32_t *)weft_get(w, e[3], s, 4), 3);
    assert_false(weft_has(w, e[3], b));
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// A spawn with the list of the previous spawn skips the checks (the spawn
// cache vouches for it); a list that only looks like it must still be
// checked: a wrong size, a duplicate, the same ids in another order, a
// requirement registered since, and a spawn while a query iterates.
static void entity_spawn_with_repeat_still_checked(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = tw_comp(w, "a", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component b = tw_comp(w, "b", 8, 8, WEFT_STORAGE_TABLE, 0);
    weft_component c = tw_comp(w, "c", 4, 4, WEFT_STORAGE_TABLE, 0);
    int32_t va = 1;
    int64_t vb = 2;
    weft_value ok[2] = {{a, 4, &va}, {b, 8, &vb}};
    assert_true(weft_spawn_with(w, ok, 2) != 0);
    assert_true(weft_spawn_with(w, ok, 2) != 0); // served by the cache
    weft_world_stats st;
    assert_int_equal(weft_world_get_stats(w, &st), WEFT_OK);
    int64_t alive = st.live_entities;

    weft_value bad_size[2] = {{a, 8, &vb}, {b, 8, &vb}};
    assert_true(weft_spawn_with(w, bad_size, 2) == 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_SIZE_MISMATCH);
    weft_value dup[2] = {{a, 4, &va}, {a, 4, &va}};
    assert_true(weft_spawn_with(w, dup, 2) == 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_DUPLICATE_COMPONENT);
    assert_true(weft_spawn_with(w, ok, -1) == 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_INVALID_ARG);
    assert_true(weft_spawn_with(w, NULL, 2) == 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_world_get_stats(w, &st), WEFT_OK);
    assert_int_equal(st.live_entities, alive);

    // a requirement added after the list was cached applies to it
    int32_t vc = 7;
    weft_require rc = {c, &vc, 4, NULL, NULL};
    assert_int_equal(weft_component_require(w, a, &rc, 1), WEFT_OK);
    weft_entity e = weft_spawn_with(w, ok, 2);
    assert_true(e != 0);
    assert_int_equal(*(const int32_t *)weft_get(w, e, c, 4), 7);
    assert_int_equal(*(const int64_t *)weft_get(w, e, b, 8), 2);

    // inside an iteration the spawn is deferred, cached list or not
    weft_query_desc qd = {0};
    qd.terms[0].id = a;
    qd.term_count = 1;
    weft_query *q = weft_query_create(w, &qd);
    assert_non_null(q);
    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    assert_true(weft_iter_next(&it));
    weft_entity d = weft_spawn_with(w, ok, 2);
    assert_true(d != 0);
    assert_false(weft_is_alive(w, d));
    weft_iter_fini(&it);
    assert_true(weft_is_alive(w, d));
    weft_query_destroy(w, q);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- weft_get_many ----

// Every slot agrees with weft_get over a mix of live handles (two
// archetypes, table and sparse values), a stale handle, the null handle,
// an out-of-range index and an entity without the component; more handles
// than one prefetch group, in scrambled order.
static void entity_get_many_matches_get(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component hp = tw_comp(w, "hp", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component sp = tw_comp(w, "sp", 4, 4, WEFT_STORAGE_SPARSE, 0);
    weft_component tag = tw_comp(w, "tag", 0, 1, WEFT_STORAGE_TABLE, 0);
    enum { N = 100 };
    weft_entity h[N + 4];
    for (int32_t i = 0; i < N; i++) {
        int32_t v = 1000 + i;
        weft_value vals[2] = {{hp, 4, &v}, {sp, 4, &v}};
        h[i] = weft_spawn_with(w, vals, i % 3 == 0 ? 1 : 2);
        if (i % 5 == 0) {
            assert_int_equal(weft_insert(w, h[i], tag, NULL, 0), WEFT_OK);
        }
    }
    weft_entity stale = h[7];
    assert_int_equal(weft_despawn(w, stale), WEFT_OK);
    h[7] = weft_spawn(w); // no hp, no sp; reuses index 7
    h[N] = stale;
    h[N + 1] = 0;
    h[N + 2] = mk(1u << 30, 1);
    h[N + 3] = h[N - 1];
    for (int32_t i = 0; i < N + 4; i++) { // scramble (a fixed permutation)
        int32_t j = (i * 37 + 11) % (N + 4);
        weft_entity t = h[i];
        h[i] = h[j];
        h[j] = t;
    }
    const void *out[N + 4];
    int32_t want = 0;
    for (int32_t i = 0; i < N + 4; i++) {
        weft_clear_error(w);
        want += weft_get(w, h[i], hp, 4) != NULL;
    }
    weft_clear_error(w);
    assert_int_equal(weft_get_many(w, h, N + 4, hp, 4, out), want);
    assert_int_equal(weft_last_status(w), WEFT_OK); // misses are not errors
    for (int32_t i = 0; i < N + 4; i++) {
        assert_ptr_equal(out[i], weft_get(w, h[i], hp, 4));
    }
    int32_t got = weft_get_many(w, h, N + 4, sp, 4, out);
    int32_t sparse_found = 0;
    for (int32_t i = 0; i < N + 4; i++) {
        const void *p = weft_get(w, h[i], sp, 4);
        assert_ptr_equal(out[i], p);
        sparse_found += p != NULL;
    }
    assert_int_equal(got, sparse_found);
    assert_true(sparse_found > 0 && sparse_found < N);
    assert_int_equal(weft_get_many(w, h, 0, hp, 4, NULL), 0);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// Misuse is refused before anything is written.
static void entity_get_many_refuses_misuse(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component hp = tw_comp(w, "hp", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component tag = tw_comp(w, "tag", 0, 1, WEFT_STORAGE_TABLE, 0);
    int32_t v = 5;
    weft_entity e = weft_spawn_with(w, (weft_value[]){{hp, 4, &v}}, 1);
    const void *out[1] = {&v};
    assert_int_equal(weft_get_many(NULL, &e, 1, hp, 4, out), -1);
    assert_int_equal(weft_get_many(w, &e, -1, hp, 4, out), -1);
    assert_int_equal(weft_last_status(w), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_get_many(w, NULL, 1, hp, 4, out), -1);
    assert_int_equal(weft_last_status(w), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_get_many(w, &e, 1, hp, 4, NULL), -1);
    assert_int_equal(weft_last_status(w), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_get_many(w, &e, 1, 999, 4, out), -1);
    assert_int_equal(weft_last_status(w), WEFT_ERR_UNKNOWN_COMPONENT);
    assert_int_equal(weft_get_many(w, &e, 1, hp, 8, out), -1);
    assert_int_equal(weft_last_status(w), WEFT_ERR_SIZE_MISMATCH);
    assert_int_equal(weft_get_many(w, &e, 1, tag, 0, out), -1);
    assert_int_equal(weft_last_status(w), WEFT_ERR_INVALID_ARG);
    assert_ptr_equal(out[0], &v); // untouched
    assert_int_equal(weft_get_many(w, &e, 1, hp, 4, out), 1);
    assert_int_equal(*(const int32_t *)out[0], 5);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tw_setup, tw_teardown)
    const struct CMUnitTest tests[] = {
        T(entity_alloc_trace_first_generation_is_one),
        T(entity_stale_handle_rejected_after_reuse),
        T(entity_indices_reused_lifo),
        T(entity_generation_bumps_on_every_despawn),
        T(entity_spawn_many_unique_and_alive),
        T(entity_is_alive_false_for_none_and_unknown),
        T(entity_spawn_with_lands_in_final_archetype),
        T(entity_spawn_with_nothing_is_empty_entity),
        T(entity_spawn_with_null_ptr_default_constructs),
        T(entity_spawn_bulk_writes_ids_and_values),
        T(entity_spawn_bulk_default_constructs),
        T(entity_despawn_middle_row_keeps_others),
        T(entity_reserve_not_alive_until_flush),
        T(entity_reserve_reuses_despawned_generation),
        T(entity_spawn_flushes_pending_reservations),
        T(entity_reserve_from_threads_gives_distinct_ids),
        T(entity_spawn_with_same_set_any_order),
        T(entity_spawn_with_repeat_still_checked),
        T(entity_get_many_matches_get),
        T(entity_get_many_refuses_misuse),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

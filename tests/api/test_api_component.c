// tests/api/test_api_component.c - black-box tests of components:
// registration, lookup, info, insert/insert_many/remove/has/get/get_mut,
// tags, alignment after growth, type hooks (counted ctor/copy/move/dtor),
// change ticks, flags, and table vs sparse storage giving the same results.
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

static const weft_storage storages[2] = {WEFT_STORAGE_TABLE, WEFT_STORAGE_SPARSE};

// ---- registration ----

static void component_register_gives_dense_ids_from_one(void **state)
{
    tw_fixture *f = *state;
    char name[32];
    for (uint32_t i = 1; i <= 40; i++) {
        snprintf(name, sizeof name, "comp_%u", i);
        weft_component c = tw_comp(f->w, name, i % 5 * 4, 0,
                                   i % 2 ? WEFT_STORAGE_TABLE : WEFT_STORAGE_SPARSE, 0);
        assert_int_equal(c, i);
    }
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(f->w, &s), WEFT_OK);
    assert_int_equal(s.components, 40);
    assert_int_equal(weft_world_check(f->w), WEFT_OK);
}

static void component_lookup_by_name(void **state)
{
    tw_fixture *f = *state;
    weft_component a = tw_comp(f->w, "alpha", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component b = tw_comp(f->w, "beta", 8, 8, WEFT_STORAGE_SPARSE, 0);
    assert_int_equal(weft_component_lookup(f->w, "alpha"), a);
    assert_int_equal(weft_component_lookup(f->w, "beta"), b);
    weft_clear_error(f->w);
    assert_int_equal(weft_component_lookup(f->w, "gamma"), 0);
    assert_int_equal(weft_component_lookup(f->w, "alph"), 0);
    assert_int_equal(weft_component_lookup(f->w, "alphaa"), 0);
    assert_int_equal(weft_component_lookup(f->w, ""), 0);
    assert_int_equal(weft_component_lookup(NULL, "alpha"), 0);
    assert_int_equal(weft_last_status(f->w), WEFT_OK); // absence is an answer
    // a NULL name is misuse, not absence
    assert_int_equal(weft_component_lookup(f->w, NULL), 0);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "name is NULL");
}

static void component_name_is_copied(void **state)
{
    tw_fixture *f = *state;
    char buf[32];
    snprintf(buf, sizeof buf, "%s", "transient");
    weft_component c = tw_comp(f->w, buf, 4, 4, WEFT_STORAGE_TABLE, 0);
    memset(buf, 'x', sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    assert_int_equal(weft_component_lookup(f->w, "transient"), c);
    weft_component_info info;
    assert_int_equal(weft_component_info_get(f->w, c, &info), WEFT_OK);
    assert_string_equal(info.name, "transient");
}

static void component_info_reports_descriptor(void **state)
{
    tw_fixture *f = *state;
    weft_component t = tw_comp(f->w, "t", 12, 4, WEFT_STORAGE_DEFAULT, 0);
    weft_component s = tw_comp(f->w, "s", 64, 64, WEFT_STORAGE_SPARSE,
                               WEFT_COMPONENT_IMMUTABLE | WEFT_COMPONENT_NO_CHANGE_TICKS);
    weft_component x = tw_comp(f->w, "x", 8, 8, WEFT_STORAGE_TABLE,
                               WEFT_COMPONENT_MAIN_THREAD);
    weft_component_info info;
    assert_int_equal(weft_component_info_get(f->w, t, &info), WEFT_OK);
    assert_string_equal(info.name, "t");
    assert_int_equal(info.size, 12);
    assert_int_equal(info.align, 4);
    assert_int_equal(info.storage, WEFT_STORAGE_TABLE); // never DEFAULT
    assert_int_equal(info.flags, 0);
    assert_int_equal(weft_component_info_get(f->w, s, &info), WEFT_OK);
    assert_string_equal(info.name, "s");
    assert_int_equal(info.size, 64);
    assert_int_equal(info.align, 64);
    assert_int_equal(info.storage, WEFT_STORAGE_SPARSE);
    assert_int_equal(info.flags, WEFT_COMPONENT_IMMUTABLE | WEFT_COMPONENT_NO_CHANGE_TICKS);
    assert_int_equal(weft_component_info_get(f->w, x, &info), WEFT_OK);
    assert_int_equal(info.flags, WEFT_COMPONENT_MAIN_THREAD);
}

static void component_align_derived_from_size(void **state)
{
    tw_fixture *f = *state;
    static const struct {
        size_t size;
        size_t align;
    } cases[] = {{1, 1}, {2, 2}, {3, 1}, {4, 4}, {6, 2}, {12, 4}, {24, 8},
                 {48, 16}, {64, 16}, {96, 16}, {4096, 16}, {20, 4}, {40, 8}};
    char name[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(name, sizeof name, "derived_%zu", i);
        weft_component c = tw_comp(f->w, name, cases[i].size, 0, WEFT_STORAGE_TABLE, 0);
        weft_component_info info;
        assert_int_equal(weft_component_info_get(f->w, c, &info), WEFT_OK);
        if (info.align != cases[i].align) {
            fail_msg("size %zu: derived align %zu, expected %zu", cases[i].size, info.align,
                     cases[i].align);
        }
    }
}

// ---- insert / get / remove ----

static void component_insert_get_replace_remove(void **state)
{
    tw_fixture *f = *state;
    for (int k = 0; k < 2; k++) {
        char name[16];
        snprintf(name, sizeof name, "v%d", k);
        weft_component c = tw_comp(f->w, name, 12, 4, storages[k], 0);
        weft_entity e = weft_spawn(f->w);
        weft_entity other = weft_spawn(f->w);
        int32_t v1[3] = {1, 2, 3};
        int32_t v2[3] = {4, 5, 6};
        assert_false(weft_has(f->w, e, c));
        weft_clear_error(f->w);
        assert_null(weft_get(f->w, e, c, 12));
        assert_int_equal(weft_last_status(f->w), WEFT_OK); // absent: no error
        assert_int_equal(weft_insert(f->w, e, c, v1, 12), WEFT_OK);
        assert_int_equal(weft_insert(f->w, other, c, v2, 12), WEFT_OK);
        assert_true(weft_has(f->w, e, c));
        const int32_t *g = weft_get(f->w, e, c, 12);
        assert_non_null(g);
        assert_memory_equal(g, v1, 12);
        v1[0] = 99; // the world holds a copy
        g = weft_get(f->w, e, c, 12);
        assert_int_equal(g[0], 1);
        assert_int_equal(weft_insert(f->w, e, c, v2, 12), WEFT_OK); // replace
        g = weft_get(f->w, e, c, 12);
        assert_memory_equal(g, v2, 12);
        int32_t *m = weft_get_mut(f->w, e, c, 12);
        assert_non_null(m);
        m[2] = -8;
        g = weft_get(f->w, e, c, 12);
        assert_int_equal(g[2], -8);
        assert_int_equal(weft_remove(f->w, e, c), WEFT_OK);
        assert_false(weft_has(f->w, e, c));
        assert_null(weft_get(f->w, e, c, 12));
        assert_true(weft_is_alive(f->w, e));
        // Removing an absent component is a no-op.
        uint64_t h = weft_world_hash(f->w);
        assert_int_equal(weft_remove(f->w, e, c), WEFT_OK);
        assert_true(weft_world_hash(f->w) == h);
        // The other entity kept its value.
        g = weft_get(f->w, other, c, 12);
        assert_memory_equal(g, v2, 12);
        assert_int_equal(weft_world_check(f->w), WEFT_OK);
    }
}

static void component_insert_null_zero_fills(void **state)
{
    tw_fixture *f = *state;
    // The fixture allocator fills fresh memory with 0xA5, so zeroes must be
    // written by weft.
    for (int k = 0; k < 2; k++) {
        char name[16];
        snprintf(name, sizeof name, "z%d", k);
        weft_component c = tw_comp(f->w, name, 40, 8, storages[k], 0);
        unsigned char zero[40] = {0};
        for (int i = 0; i < 20; i++) {
            weft_entity e = weft_spawn(f->w);
            assert_int_equal(weft_insert(f->w, e, c, NULL, 40), WEFT_OK);
            const void *g = weft_get(f->w, e, c, 40);
            assert_non_null(g);
            assert_memory_equal(g, zero, 40);
        }
        // Replacing with NULL also resets to the default.
        weft_entity e = weft_spawn(f->w);
        unsigned char ones[40];
        memset(ones, 1, sizeof ones);
        assert_int_equal(weft_insert(f->w, e, c, ones, 40), WEFT_OK);
        assert_int_equal(weft_insert(f->w, e, c, NULL, 40), WEFT_OK);
        assert_memory_equal(weft_get(f->w, e, c, 40), zero, 40);
    }
}

static void component_has_false_without_error(void **state)
{
    tw_fixture *f = *state;
    weft_component c = tw_comp(f->w, "c", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_entity e = weft_spawn(f->w);
    weft_entity dead = weft_spawn(f->w);
    assert_int_equal(weft_despawn(f->w, dead), WEFT_OK);
    weft_clear_error(f->w);
    assert_false(weft_has(f->w, e, c));
    assert_false(weft_has(f->w, dead, c));
    assert_false(weft_has(f->w, 0, c));
    assert_false(weft_has(f->w, e, 0));
    assert_false(weft_has(f->w, e, 999));
    assert_false(weft_has(NULL, e, c));
    assert_int_equal(weft_last_status(f->w), WEFT_OK);
}

static void component_tags_have_no_value(void **state)
{
    tw_fixture *f = *state;
    for (int k = 0; k < 2; k++) {
        char name[16];
        snprintf(name, sizeof name, "tag%d", k);
        weft_component tag = tw_comp(f->w, name, 0, 0, storages[k], 0);
        weft_component_info info;
        assert_int_equal(weft_component_info_get(f->w, tag, &info), WEFT_OK);
        assert_int_equal(info.size, 0);
        weft_entity e = weft_spawn(f->w);
        assert_int_equal(weft_insert(f->w, e, tag, NULL, 0), WEFT_OK);
        assert_true(weft_has(f->w, e, tag));
        assert_int_equal(weft_insert(f->w, e, tag, NULL, 0), WEFT_OK); // again: fine
        tw_snap snap = tw_snap_take(f->w);
        weft_clear_error(f->w);
        assert_null(weft_get(f->w, e, tag, 0));
        tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
        tw_snap_expect_same(f->w, &snap);
        weft_value v = {tag, 0, NULL};
        weft_entity e2 = weft_spawn_with(f->w, &v, 1);
        assert_true(weft_has(f->w, e2, tag));
        weft_entity bulk[5];
        assert_int_equal(weft_spawn_bulk(f->w, &v, 1, 5, bulk), WEFT_OK);
        for (int i = 0; i < 5; i++) {
            assert_true(weft_has(f->w, bulk[i], tag));
        }
        assert_int_equal(weft_remove(f->w, e, tag), WEFT_OK);
        assert_false(weft_has(f->w, e, tag));
        assert_int_equal(weft_world_check(f->w), WEFT_OK);
    }
}

// ---- alignment ----

static void check_aligned(weft_world *w, weft_entity *es, int n, weft_component c,
                          size_t size, size_t align)
{
    for (int i = 0; i < n; i++) {
        const unsigned char *p = weft_get(w, es[i], c, size);
        assert_non_null(p);
        if ((uintptr_t)p % align != 0) {
            fail_msg("entity %d: value at %p not aligned to %zu", i, (const void *)p, align);
        }
        if (p[0] != (unsigned char)i || p[size - 1] != (unsigned char)(i * 7)) {
            fail_msg("entity %d: value corrupted", i);
        }
    }
}

static void component_alignment_honored_after_growth(void **state)
{
    tw_fixture *f = *state;
    static const size_t aligns[] = {16, 64, 4096};
    for (size_t ai = 0; ai < 3; ai++) {
        for (int k = 0; k < 2; k++) {
            size_t align = aligns[ai];
            size_t size = align == 4096 ? 4096 : align * 2;
            int n = align == 4096 ? 70 : 300;
            char name[32];
            snprintf(name, sizeof name, "al%zu_%d", align, k);
            weft_component c = tw_comp(f->w, name, size, align, storages[k], 0);
            snprintf(name, sizeof name, "other%zu_%d", align, k);
            weft_component other = tw_comp(f->w, name, 1, 1, WEFT_STORAGE_TABLE, 0);
            weft_component_info info;
            assert_int_equal(weft_component_info_get(f->w, c, &info), WEFT_OK);
            assert_int_equal(info.align, align);
            unsigned char *buf = calloc(1, size);
            assert_non_null(buf);
            weft_entity *es = calloc((size_t)n, sizeof *es);
            assert_non_null(es);
            for (int i = 0; i < n; i++) {
                buf[0] = (unsigned char)i;
                buf[size - 1] = (unsigned char)(i * 7);
                es[i] = weft_spawn(f->w);
                assert_int_equal(weft_insert(f->w, es[i], c, buf, size), WEFT_OK);
                if ((i & (i - 1)) == 0 || i == n - 1) { // after each likely growth
                    check_aligned(f->w, es, i + 1, c, size, align);
                }
            }
            // Move half of the rows to another archetype, then check again.
            for (int i = 0; i < n; i += 2) {
                assert_int_equal(weft_insert(f->w, es[i], other, NULL, 1), WEFT_OK);
            }
            check_aligned(f->w, es, n, c, size, align);
            // spawn_with and spawn_bulk too.
            weft_value v = {c, size, buf};
            weft_entity sw = weft_spawn_with(f->w, &v, 1);
            const void *p = weft_get(f->w, sw, c, size);
            assert_true((uintptr_t)p % align == 0);
            weft_entity bulk[9];
            v.ptr = NULL;
            assert_int_equal(weft_spawn_bulk(f->w, &v, 1, 9, bulk), WEFT_OK);
            for (int i = 0; i < 9; i++) {
                p = weft_get(f->w, bulk[i], c, size);
                assert_true((uintptr_t)p % align == 0);
            }
            // And resources.
            assert_int_equal(weft_resource_insert(f->w, c, buf, size), WEFT_OK);
            p = weft_resource_get(f->w, c, size);
            assert_non_null(p);
            assert_true((uintptr_t)p % align == 0);
            assert_int_equal(weft_world_check(f->w), WEFT_OK);
            free(buf);
            free(es);
        }
    }
}

// ---- hooks ----

static void component_dtor_runs_once_per_value(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        tw_fixture *f = tw_fixture_new();
        assert_non_null(f);
        weft_world *w = f->w;
        tw_tracker *tr = &f->tracker;
        weft_component t = tw_tracked_register(w, "tracked", storages[k], tr);
        weft_component pad = tw_comp(w, "pad", 4, 4, WEFT_STORAGE_TABLE, 0);
        tw_tracked v;
        tw_tracked_make(&v, 1);

        weft_entity a = weft_spawn(w);
        assert_int_equal(weft_insert(w, a, t, &v, sizeof v), WEFT_OK);
        assert_int_equal(tr->copies, 1);
        assert_int_equal(tr->dtors, 0);
        // Replace: the old value is destroyed once, the new one copied in.
        tw_tracked_make(&v, 2);
        assert_int_equal(weft_insert(w, a, t, &v, sizeof v), WEFT_OK);
        assert_int_equal(tr->dtors, 1);
        assert_int_equal(tr->copies, 2);
        assert_true(((const tw_tracked *)weft_get(w, a, t, sizeof v))->payload == 2);
        // Remove: destroyed once.
        assert_int_equal(weft_remove(w, a, t), WEFT_OK);
        assert_int_equal(tr->dtors, 2);
        // Removing again destroys nothing.
        assert_int_equal(weft_remove(w, a, t), WEFT_OK);
        assert_int_equal(tr->dtors, 2);
        // Despawn: destroyed once.
        assert_int_equal(weft_insert(w, a, t, NULL, sizeof v), WEFT_OK);
        assert_int_equal(tr->ctors, 1);
        assert_int_equal(weft_insert(w, a, pad, NULL, 4), WEFT_OK); // moves a row
        assert_int_equal(weft_despawn(w, a), WEFT_OK);
        assert_int_equal(tr->dtors, 3);
        assert_int_equal(tw_tracker_live(tr), 0);
        // Removing another component leaves the tracked value alone.
        weft_entity b = weft_spawn(w);
        assert_int_equal(weft_insert(w, b, pad, NULL, 4), WEFT_OK);
        assert_int_equal(weft_insert(w, b, t, &v, sizeof v), WEFT_OK);
        assert_int_equal(weft_remove(w, b, pad), WEFT_OK);
        assert_int_equal(tr->dtors, 3);
        // Despawning a stale handle destroys nothing.
        assert_int_equal(weft_despawn(w, a), WEFT_ERR_STALE_ENTITY);
        assert_int_equal(tr->dtors, 3);
        // World destroy: each remaining value destroyed exactly once.
        for (int i = 0; i < 30; i++) {
            weft_entity e = weft_spawn(w);
            assert_int_equal(weft_insert(w, e, t, &v, sizeof v), WEFT_OK);
        }
        assert_int_equal(weft_resource_insert(w, t, &v, sizeof v), WEFT_OK);
        assert_int_equal(tw_tracker_live(tr), 32);
        weft_world_destroy(w);
        f->w = NULL;
        assert_int_equal(tw_tracker_live(tr), 0);
        if (tr->errors) {
            fail_msg("storage %d: %s", k, tr->first_error);
        }
        tw_fixture_free(f);
    }
}

static void component_copy_and_move_hooks_used(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    tw_tracker *tr = &f->tracker;
    weft_component t = tw_tracked_register(w, "tracked", WEFT_STORAGE_TABLE, tr);
    weft_component extra = tw_comp(w, "extra", 8, 8, WEFT_STORAGE_TABLE, 0);
    weft_component sp = tw_comp(w, "sp", 8, 8, WEFT_STORAGE_SPARSE, 0);
    enum { N = 300 };
    weft_entity e[N];
    for (int i = 0; i < N; i++) {
        tw_tracked v;
        tw_tracked_make(&v, (uint64_t)i);
        e[i] = weft_spawn(w);
        assert_int_equal(weft_insert(w, e[i], t, &v, sizeof v), WEFT_OK);
    }
    assert_int_equal(tr->copies, N); // insert copies through the hook
    assert_int_equal(tr->ctors, 0);
    int64_t moves_after_growth = tr->moves;
    // Migration: every moved tracked value goes through the move hook.
    for (int i = 0; i < N; i += 3) {
        int64_t before = tr->moves;
        assert_int_equal(weft_insert(w, e[i], extra, NULL, 8), WEFT_OK);
        assert_true(tr->moves > before);
    }
    // A sparse insert moves no row.
    int64_t before_sparse = tr->moves;
    for (int i = 0; i < N; i += 5) {
        assert_int_equal(weft_insert(w, e[i], sp, NULL, 8), WEFT_OK);
    }
    assert_int_equal(tr->moves, before_sparse);
    // Swap-removes on despawn.
    for (int i = 1; i < N; i += 7) {
        assert_int_equal(weft_despawn(w, e[i]), WEFT_OK);
    }
    assert_true(tr->moves > moves_after_growth);
    for (int i = 0; i < N; i++) {
        if (!weft_is_alive(w, e[i])) {
            continue;
        }
        const tw_tracked *v = weft_get(w, e[i], t, sizeof(tw_tracked));
        assert_non_null(v);
        assert_true(v->self == v); // never relocated by memcpy
        assert_true(v->magic == TW_MAGIC_LIVE);
        assert_true(v->payload == (uint64_t)i);
    }
    if (tr->errors) {
        fail_msg("%s", tr->first_error);
    }
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    assert_int_equal(tw_tracker_live(tr), s.live_entities);
}

static void component_move_hook_used_in_sparse_sets(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    tw_tracker *tr = &f->tracker;
    weft_component t = tw_tracked_register(w, "tracked_sparse", WEFT_STORAGE_SPARSE, tr);
    weft_component other = tw_comp(w, "other", 8, 8, WEFT_STORAGE_TABLE, 0);
    enum { N = 300 };
    weft_entity e[N];
    bool has[N];
    for (int i = 0; i < N; i++) {
        tw_tracked v;
        tw_tracked_make(&v, (uint64_t)i * 3);
        e[i] = weft_spawn(w);
        assert_int_equal(weft_insert(w, e[i], t, &v, sizeof v), WEFT_OK); // dense growth
        has[i] = true;
    }
    for (int i = 0; i < N; i += 3) { // swap-removes in the dense array
        assert_int_equal(weft_remove(w, e[i], t), WEFT_OK);
        has[i] = false;
    }
    for (int i = 1; i < N; i += 10) { // despawn: dense swap-remove again
        assert_int_equal(weft_despawn(w, e[i]), WEFT_OK);
        has[i] = false;
    }
    for (int i = 2; i < N; i += 4) { // table moves leave sparse values in place
        if (weft_is_alive(w, e[i])) {
            assert_int_equal(weft_insert(w, e[i], other, NULL, 8), WEFT_OK);
        }
    }
    int64_t live = 0;
    for (int i = 0; i < N; i++) {
        const tw_tracked *v = weft_is_alive(w, e[i]) ? weft_get(w, e[i], t, sizeof *v) : NULL;
        if (!has[i]) {
            assert_null(v);
            continue;
        }
        live++;
        assert_non_null(v);
        assert_true(v->self == v);
        assert_true(v->magic == TW_MAGIC_LIVE);
        assert_true(v->payload == (uint64_t)i * 3);
    }
    assert_int_equal(tw_tracker_live(tr), live);
    if (tr->errors) {
        fail_msg("%s", tr->first_error);
    }
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void component_insert_many_single_move(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    tw_tracker *tr = &f->tracker;
    weft_component t = tw_tracked_register(w, "tracked", WEFT_STORAGE_TABLE, tr);
    weft_component a = tw_comp(w, "a", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component b = tw_comp(w, "b", 8, 8, WEFT_STORAGE_TABLE, 0);
    weft_component s = tw_comp(w, "s", 2, 2, WEFT_STORAGE_SPARSE, 0);
    tw_tracked v;
    tw_tracked_make(&v, 5);
    weft_value one = {t, sizeof v, &v};
    weft_entity e = weft_spawn_with(w, &one, 1);
    int32_t av = 11;
    uint64_t bv = 22;
    uint16_t sv = 33;
    weft_world_stats st0;
    assert_int_equal(weft_world_get_stats(w, &st0), WEFT_OK);
    int64_t moves0 = tr->moves;
    weft_value many[3] = {{b, 8, &bv}, {s, 2, &sv}, {a, 4, &av}};
    assert_int_equal(weft_insert_many(w, e, many, 3), WEFT_OK);
    assert_int_equal(tr->moves - moves0, 1); // one row move, not three
    weft_world_stats st1;
    assert_int_equal(weft_world_get_stats(w, &st1), WEFT_OK);
    assert_true(st1.archetypes > st0.archetypes);
    weft_archetype_info ai;
    assert_int_equal(weft_archetype_info_get(w, weft_entity_archetype(w, e), &ai), WEFT_OK);
    assert_int_equal(ai.component_count, 4);
    assert_int_equal(ai.entity_count, 1);
    assert_int_equal(*(const int32_t *)weft_get(w, e, a, 4), 11);
    assert_true(*(const uint64_t *)weft_get(w, e, b, 8) == 22);
    assert_int_equal(*(const uint16_t *)weft_get(w, e, s, 2), 33);
    const tw_tracked *tv = weft_get(w, e, t, sizeof v);
    assert_true(tv->self == tv && tv->payload == 5);

    // Mixed: replace existing values and add a new one, still at most one move.
    weft_component c = tw_comp(w, "c", 1, 1, WEFT_STORAGE_TABLE, 0);
    tw_tracked v2;
    tw_tracked_make(&v2, 6);
    int32_t av2 = 12;
    uint8_t cv = 44;
    weft_value mixed[3] = {{a, 4, &av2}, {c, 1, &cv}, {t, sizeof v2, &v2}};
    int64_t moves1 = tr->moves;
    int64_t dtors1 = tr->dtors;
    assert_int_equal(weft_insert_many(w, e, mixed, 3), WEFT_OK);
    assert_true(tr->moves - moves1 <= 1);
    assert_int_equal(tr->dtors - dtors1, 1); // the replaced tracked value
    assert_int_equal(*(const int32_t *)weft_get(w, e, a, 4), 12);
    assert_int_equal(*(const uint8_t *)weft_get(w, e, c, 1), 44);
    tv = weft_get(w, e, t, sizeof v);
    assert_true(tv->self == tv && tv->payload == 6);
    // count 0 is a no-op.
    uint64_t h = weft_world_hash(w);
    assert_int_equal(weft_insert_many(w, e, NULL, 0), WEFT_OK);
    assert_true(weft_world_hash(w) == h);
    assert_int_equal(tr->errors, 0);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void component_sparse_insert_keeps_table(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = tw_comp(w, "a", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component s = tw_comp(w, "s", 4, 4, WEFT_STORAGE_SPARSE, 0);
    weft_component tag = tw_comp(w, "stag", 0, 0, WEFT_STORAGE_SPARSE, 0);
    int32_t v = 1;
    weft_value val = {a, 4, &v};
    weft_entity e = weft_spawn_with(w, &val, 1);
    weft_archetype_info i0, i1, i2;
    assert_int_equal(weft_archetype_info_get(w, weft_entity_archetype(w, e), &i0), WEFT_OK);
    assert_int_equal(weft_insert(w, e, s, &v, 4), WEFT_OK);
    assert_int_equal(weft_archetype_info_get(w, weft_entity_archetype(w, e), &i1), WEFT_OK);
    assert_int_equal(weft_insert(w, e, tag, NULL, 0), WEFT_OK);
    assert_int_equal(weft_archetype_info_get(w, weft_entity_archetype(w, e), &i2), WEFT_OK);
    assert_int_equal(i0.table, i1.table);
    assert_int_equal(i0.table, i2.table);
    assert_int_equal(i1.component_count, 2);
    assert_int_equal(i2.component_count, 3);
    assert_int_equal(weft_remove(w, e, s), WEFT_OK);
    assert_int_equal(weft_archetype_info_get(w, weft_entity_archetype(w, e), &i1), WEFT_OK);
    assert_int_equal(i1.table, i0.table);
    weft_world_stats st;
    assert_int_equal(weft_world_get_stats(w, &st), WEFT_OK);
    assert_int_equal(st.tables, 2);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// Runs the same script against a component of the given storage; returns
// the final hash.
static uint64_t storage_script(weft_storage storage, uint64_t *values_digest)
{
    tw_fixture *f = tw_fixture_new();
    assert_non_null(f);
    weft_world *w = f->w;
    weft_component a = tw_comp(w, "a", 6, 2, storage, 0);
    weft_component t = tw_comp(w, "t", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component tag = tw_comp(w, "tag", 0, 0, storage, 0);
    tw_rng rng;
    tw_rng_seed(&rng, 1234);
    enum { N = 64 };
    weft_entity e[N];
    for (int i = 0; i < N; i++) {
        e[i] = weft_spawn(w);
    }
    for (int step = 0; step < 2000; step++) {
        int i = (int)tw_rng_below(&rng, N);
        unsigned char v[6];
        tw_rng_bytes(&rng, v, sizeof v);
        switch (tw_rng_below(&rng, 6)) {
        case 0:
            assert_int_equal(weft_insert(w, e[i], a, v, 6), WEFT_OK);
            break;
        case 1:
            assert_int_equal(weft_remove(w, e[i], a), WEFT_OK);
            break;
        case 2:
            assert_int_equal(weft_insert(w, e[i], t, v, 4), WEFT_OK);
            break;
        case 3:
            assert_int_equal(weft_insert(w, e[i], tag, NULL, 0), WEFT_OK);
            break;
        case 4:
            assert_int_equal(weft_remove(w, e[i], tag), WEFT_OK);
            break;
        default: {
            unsigned char *m = weft_get_mut(w, e[i], a, 6);
            if (m) {
                m[0] ^= v[0];
            }
            break;
        }
        }
    }
    assert_int_equal(weft_world_check(w), WEFT_OK);
    uint64_t d = 1469598103934665603ull;
    for (int i = 0; i < N; i++) {
        const unsigned char *g = weft_get(w, e[i], a, 6);
        d = (d ^ (g ? 1u : 0u)) * 1099511628211ull;
        d = (d ^ (weft_has(w, e[i], tag) ? 1u : 0u)) * 1099511628211ull;
        for (int b = 0; g && b < 6; b++) {
            d = (d ^ g[b]) * 1099511628211ull;
        }
    }
    *values_digest = d;
    uint64_t h = weft_world_hash(w);
    tw_fixture_free(f);
    return h;
}

static void component_table_and_sparse_behave_identically(void **state)
{
    (void)state;
    uint64_t dt = 0, ds = 0;
    uint64_t ht = storage_script(WEFT_STORAGE_TABLE, &dt);
    uint64_t hs = storage_script(WEFT_STORAGE_SPARSE, &ds);
    assert_true(dt == ds);
    assert_true(ht == hs); // the canonical hash ignores storage kind
}

// ---- change ticks ----

static void component_ticks_follow_writes(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    for (int k = 0; k < 2; k++) {
        char name[16];
        snprintf(name, sizeof name, "tk%d", k);
        weft_component c = tw_comp(w, name, 8, 8, storages[k], 0);
        weft_entity e = weft_spawn(w);
        uint32_t t0 = weft_world_change_tick(w);
        uint64_t v = 1;
        assert_int_equal(weft_insert(w, e, c, &v, 8), WEFT_OK);
        weft_ticks tk;
        assert_int_equal(weft_get_ticks(w, e, c, &tk), WEFT_OK);
        assert_int_equal(tk.added, t0);
        assert_int_equal(tk.changed, t0);

        uint32_t t1 = weft_world_increment_change_tick(w);
        assert_non_null(weft_get(w, e, c, 8)); // get does not stamp
        assert_int_equal(weft_get_ticks(w, e, c, &tk), WEFT_OK);
        assert_int_equal(tk.changed, t0);
        assert_non_null(weft_get_mut(w, e, c, 8)); // get_mut does
        assert_int_equal(weft_get_ticks(w, e, c, &tk), WEFT_OK);
        assert_int_equal(tk.added, t0);
        assert_int_equal(tk.changed, t1);

        uint32_t t2 = weft_world_increment_change_tick(w);
        assert_int_equal(weft_insert(w, e, c, &v, 8), WEFT_OK); // replace
        assert_int_equal(weft_get_ticks(w, e, c, &tk), WEFT_OK);
        assert_int_equal(tk.added, t0); // kept
        assert_int_equal(tk.changed, t2);

        // Ticks travel with the value when its row moves.
        weft_component other = tw_comp(w, k ? "mv1" : "mv0", 4, 4, WEFT_STORAGE_TABLE, 0);
        weft_world_increment_change_tick(w);
        assert_int_equal(weft_insert(w, e, other, NULL, 4), WEFT_OK);
        assert_int_equal(weft_get_ticks(w, e, c, &tk), WEFT_OK);
        assert_int_equal(tk.added, t0);
        assert_int_equal(tk.changed, t2);

        // Remove then add again: a new added tick.
        uint32_t t3 = weft_world_increment_change_tick(w);
        assert_int_equal(weft_remove(w, e, c), WEFT_OK);
        weft_clear_error(w);
        assert_int_equal(weft_get_ticks(w, e, c, &tk), WEFT_ERR_NOT_FOUND);
        assert_int_equal(weft_insert(w, e, c, &v, 8), WEFT_OK);
        assert_int_equal(weft_get_ticks(w, e, c, &tk), WEFT_OK);
        assert_int_equal(tk.added, t3);
        assert_int_equal(tk.changed, t3);
        weft_world_increment_change_tick(w);
    }
}

static void component_ticks_from_spawn_paths(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = tw_comp(w, "a", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component s = tw_comp(w, "s", 4, 4, WEFT_STORAGE_SPARSE, 0);
    weft_world_increment_change_tick(w);
    weft_world_increment_change_tick(w);
    uint32_t now = weft_world_change_tick(w);
    weft_value vals[2] = {{a, 4, NULL}, {s, 4, NULL}};
    weft_entity e = weft_spawn_with(w, vals, 2);
    weft_entity bulk[20];
    assert_int_equal(weft_spawn_bulk(w, vals, 2, 20, bulk), WEFT_OK);
    weft_ticks tk;
    assert_int_equal(weft_get_ticks(w, e, a, &tk), WEFT_OK);
    assert_int_equal(tk.added, now);
    assert_int_equal(tk.changed, now);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(weft_get_ticks(w, bulk[i], a, &tk), WEFT_OK);
        assert_int_equal(tk.added, now);
        assert_int_equal(weft_get_ticks(w, bulk[i], s, &tk), WEFT_OK);
        assert_int_equal(tk.added, now);
        assert_int_equal(tk.changed, now);
    }
}

static void component_flags_immutable_and_no_ticks(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component im = tw_comp(w, "frozen", 4, 4, WEFT_STORAGE_TABLE,
                                WEFT_COMPONENT_IMMUTABLE);
    weft_component nt = tw_comp(w, "noticks", 4, 4, WEFT_STORAGE_SPARSE,
                                WEFT_COMPONENT_NO_CHANGE_TICKS);
    weft_component nt2 = tw_comp(w, "noticks_t", 4, 4, WEFT_STORAGE_TABLE,
                                 WEFT_COMPONENT_NO_CHANGE_TICKS);
    weft_entity e = weft_spawn(w);
    int32_t v = 1, v2 = 2;
    assert_int_equal(weft_insert(w, e, im, &v, 4), WEFT_OK);
    assert_int_equal(weft_insert(w, e, im, &v2, 4), WEFT_OK); // replace is allowed
    assert_int_equal(*(const int32_t *)weft_get(w, e, im, 4), 2);
    tw_snap snap = tw_snap_take(w);
    weft_clear_error(w);
    assert_null(weft_get_mut(w, e, im, 4));
    tw_expect_error(f, WEFT_ERR_IMMUTABLE, "frozen");
    tw_snap_expect_same(w, &snap);

    assert_int_equal(weft_insert(w, e, nt, &v, 4), WEFT_OK);
    assert_int_equal(weft_insert(w, e, nt2, &v, 4), WEFT_OK);
    int32_t *m = weft_get_mut(w, e, nt, 4);
    assert_non_null(m);
    *m = 5;
    assert_int_equal(*(const int32_t *)weft_get(w, e, nt, 4), 5);
    m = weft_get_mut(w, e, nt2, 4);
    assert_non_null(m);
    *m = 6;
    assert_int_equal(*(const int32_t *)weft_get(w, e, nt2, 4), 6);
    snap = tw_snap_take(w);
    weft_ticks tk;
    assert_int_equal(weft_get_ticks(w, e, nt, &tk), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    assert_int_equal(weft_get_ticks(w, e, nt2, &tk), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    tw_snap_expect_same(w, &snap);
}

static void component_main_thread_flag_usable_on_driver(void **state)
{
    tw_fixture *f = *state;
    weft_component c = tw_comp(f->w, "mt", 4, 4, WEFT_STORAGE_TABLE,
                               WEFT_COMPONENT_MAIN_THREAD);
    weft_entity e = weft_spawn(f->w);
    int32_t v = 3;
    assert_int_equal(weft_insert(f->w, e, c, &v, 4), WEFT_OK);
    int32_t *m = weft_get_mut(f->w, e, c, 4);
    assert_non_null(m);
    assert_int_equal(*m, 3);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tw_setup, tw_teardown)
    const struct CMUnitTest tests[] = {
        T(component_register_gives_dense_ids_from_one),
        T(component_lookup_by_name),
        T(component_name_is_copied),
        T(component_info_reports_descriptor),
        T(component_align_derived_from_size),
        T(component_insert_get_replace_remove),
        T(component_insert_null_zero_fills),
        T(component_has_false_without_error),
        T(component_tags_have_no_value),
        T(component_alignment_honored_after_growth),
        cmocka_unit_test(component_dtor_runs_once_per_value),
        T(component_copy_and_move_hooks_used),
        T(component_move_hook_used_in_sparse_sets),
        T(component_insert_many_single_move),
        T(component_sparse_insert_keeps_table),
        cmocka_unit_test(component_table_and_sparse_behave_identically),
        T(component_ticks_follow_writes),
        T(component_ticks_from_spawn_paths),
        T(component_flags_immutable_and_no_ticks),
        T(component_main_thread_flag_usable_on_driver),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/fault/test_fault.c - allocation-failure injection: for each scenario,
// fail the Nth allocation (once, then from N onwards) for N = 1, 2, ...
// until the scenario runs without hitting the injected failure.
// SPDX-License-Identifier: MIT
//
// Each failing call must return WEFT_ERR_OUT_OF_MEMORY (or 0 / NULL with
// that status recorded), leave the world's content exactly as before the
// call (hash, live entities, components, resources, pending reservations)
// and pass weft_world_check; calling the scenario again without failures
// must then succeed (no id or value lost). Every world is destroyed at the
// end of each attempt and the fixture must see zero live bytes.
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fault.h"
#include "test_world.h"
#include "weft.h"

#define MAX_N 20000

typedef struct fx {
    tw_fixture *f;
    weft_world *w;
    weft_component pos;   // 8 bytes, table
    weft_component vel;   // 16 bytes align 16, table
    weft_component sp;    // 12 bytes, sparse
    weft_component tag;   // table tag
    weft_component big;   // 4096 bytes align 4096, table
    weft_component trk;   // tracked, table
    weft_entity e[512];
    int32_t ne;
    int32_t progress;     // calls of the scenario already done (restartable)
    weft_entity reserved[128];
    int32_t nreserved;
    tw_snap pre;          // world before the current call
    const char *scenario;
    int64_t n;
    bool sticky;
} fx;

// Snapshot the world before a fallible call; allocations made by the
// snapshot itself neither count nor fail.
static void pre(fx *x)
{
    tw_alloc_pause(&x->f->alloc, true);
    x->pre = tw_snap_take(x->w);
    tw_alloc_pause(&x->f->alloc, false);
}

static weft_status spawn_status(fx *x, weft_entity e)
{
    if (e != 0) {
        return WEFT_OK;
    }
    weft_status st = weft_last_status(x->w);
    return st == WEFT_OK ? WEFT_ERR_INTERNAL : st;
}

static void register_all(fx *x)
{
    x->pos = tw_comp(x->w, "pos", 8, 8, WEFT_STORAGE_TABLE, 0);
    x->vel = tw_comp(x->w, "vel", 16, 16, WEFT_STORAGE_TABLE, 0);
    x->sp = tw_comp(x->w, "sp", 12, 4, WEFT_STORAGE_SPARSE, 0);
    x->tag = tw_comp(x->w, "tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    x->big = tw_comp(x->w, "big", 4096, 4096, WEFT_STORAGE_TABLE, 0);
    x->trk = tw_tracked_register(x->w, "trk", WEFT_STORAGE_TABLE, &x->f->tracker);
}

static uint64_t val64(int32_t i)
{
    return 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
}

// ---- scenarios ----

typedef struct scenario {
    const char *name;
    void (*prepare)(fx *x);
    weft_status (*run)(fx *x);
    void (*verify)(fx *x);
} scenario;

// register components (table, sparse, tag, big alignment, hooks)
static void prep_none(fx *x)
{
    (void)x;
}

static weft_status run_register(fx *x)
{
    static const struct {
        const char *name;
        size_t size;
        size_t align;
        weft_storage st;
    } defs[] = {{"r_table", 24, 8, WEFT_STORAGE_TABLE},
                {"r_sparse", 12, 4, WEFT_STORAGE_SPARSE},
                {"r_tag", 0, 0, WEFT_STORAGE_TABLE},
                {"r_page", 4096, 4096, WEFT_STORAGE_SPARSE}};
    for (; x->progress < 4; x->progress++) {
        weft_component_desc d;
        memset(&d, 0, sizeof d);
        d.name = defs[x->progress].name;
        d.size = defs[x->progress].size;
        d.align = defs[x->progress].align;
        d.storage = defs[x->progress].st;
        pre(x);
        weft_component c = weft_component_register(x->w, &d);
        if (c == 0) {
            // The failed name must not be taken.
            assert_int_equal(weft_component_lookup(x->w, d.name), 0);
            return weft_last_status(x->w);
        }
    }
    return WEFT_OK;
}

static void verify_register(fx *x)
{
    weft_component c = weft_component_lookup(x->w, "r_page");
    assert_true(c != 0);
    weft_component_info ci;
    assert_int_equal(weft_component_info_get(x->w, c, &ci), WEFT_OK);
    assert_int_equal(ci.align, 4096);
    assert_true(weft_component_lookup(x->w, "r_table") != 0);
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(x->w, &s), WEFT_OK);
    assert_int_equal(s.components, 4);
}

// spawn into a fresh world
static weft_status run_spawn(fx *x)
{
    for (; x->progress < 3; x->progress++) {
        pre(x);
        weft_entity e = weft_spawn(x->w);
        if (e == 0) {
            return spawn_status(x, e);
        }
        x->e[x->ne++] = e;
    }
    return WEFT_OK;
}

static void verify_spawn(fx *x)
{
    assert_int_equal(x->ne, 3);
    for (int i = 0; i < x->ne; i++) {
        assert_true(weft_is_alive(x->w, x->e[i]));
        assert_int_equal(weft_entity_index(x->e[i]), (uint32_t)i); // no index lost
    }
}

// spawn_with into a new archetype
static void prep_registered(fx *x)
{
    register_all(x);
}

static weft_status run_spawn_with(fx *x)
{
    for (; x->progress < 2; x->progress++) {
        uint64_t p = val64(x->progress);
        unsigned char v[16] = {1, 2, 3};
        unsigned char s[12] = {4, 5, 6};
        tw_tracked t;
        tw_tracked_make(&t, 7);
        weft_value vals[5] = {
            {x->pos, 8, &p}, {x->vel, 16, v}, {x->sp, 12, s}, {x->tag, 0, NULL},
            {x->trk, sizeof t, &t}};
        pre(x);
        weft_entity e = weft_spawn_with(x->w, vals, x->progress == 0 ? 5 : 3);
        if (e == 0) {
            return spawn_status(x, e);
        }
        x->e[x->ne++] = e;
    }
    return WEFT_OK;
}

static void verify_spawn_with(fx *x)
{
    assert_int_equal(x->ne, 2);
    const uint64_t *p = weft_get(x->w, x->e[0], x->pos, 8);
    assert_non_null(p);
    assert_true(*p == val64(0));
    const unsigned char *s = weft_get(x->w, x->e[0], x->sp, 12);
    assert_non_null(s);
    assert_int_equal(s[2], 6);
    const tw_tracked *t = weft_get(x->w, x->e[0], x->trk, sizeof(tw_tracked));
    assert_non_null(t);
    assert_true(t->self == t && t->payload == 7);
    assert_true(weft_has(x->w, x->e[0], x->tag));
    assert_false(weft_has(x->w, x->e[1], x->tag));
    assert_true(weft_has(x->w, x->e[1], x->sp));
}

// spawn_bulk of 1000 entities
static weft_status run_spawn_bulk(fx *x)
{
    enum { N = 1000 };
    static uint64_t pv[N];
    static unsigned char sv[N * 12];
    static weft_entity out[N];
    for (int i = 0; i < N; i++) {
        pv[i] = val64(i);
        memset(sv + 12 * i, i & 0xFF, 12);
    }
    weft_value cols[4] = {{x->pos, 8, pv}, {x->sp, 12, sv}, {x->tag, 0, NULL},
                          {x->trk, sizeof(tw_tracked), NULL}};
    for (; x->progress < 1; x->progress++) {
        pre(x);
        weft_status st = weft_spawn_bulk(x->w, cols, 4, N, out);
        if (st != WEFT_OK) {
            return st;
        }
        memcpy(x->e, out, sizeof x->e);
        x->ne = 512;
    }
    return WEFT_OK;
}

static void verify_spawn_bulk(fx *x)
{
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(x->w, &s), WEFT_OK);
    assert_int_equal(s.live_entities, 1000);
    for (int i = 0; i < x->ne; i++) {
        const uint64_t *p = weft_get(x->w, x->e[i], x->pos, 8);
        assert_non_null(p);
        assert_true(*p == val64(i));
        const unsigned char *sp = weft_get(x->w, x->e[i], x->sp, 12);
        assert_non_null(sp);
        assert_int_equal(sp[11], i & 0xFF);
    }
}

// inserts that create new archetypes (table, sparse, many), then removes
static void prep_one_entity(fx *x)
{
    register_all(x);
    uint64_t p = 1;
    weft_value v = {x->pos, 8, &p};
    x->e[0] = weft_spawn_with(x->w, &v, 1);
    x->e[1] = weft_spawn_with(x->w, &v, 1);
    x->ne = 2;
    assert_true(x->e[0] && x->e[1]);
}

static weft_status run_insert(fx *x)
{
    weft_world *w = x->w;
    unsigned char buf[16] = {9, 9};
    weft_status st = WEFT_OK;
    tw_tracked t;
    tw_tracked_make(&t, 42);
    weft_value many[3] = {{x->tag, 0, NULL}, {x->trk, sizeof t, &t}, {x->sp, 12, buf}};
    while (x->progress < 7 && st == WEFT_OK) {
        pre(x);
        switch (x->progress) {
        case 0:
            st = weft_insert(w, x->e[0], x->vel, buf, 16); // new table archetype
            break;
        case 1:
            st = weft_insert(w, x->e[0], x->sp, buf, 12); // sparse: shares the table
            break;
        case 2:
            st = weft_insert_many(w, x->e[1], many, 3); // new archetype, one move
            break;
        case 3:
            st = weft_insert(w, x->e[1], x->vel, buf, 16); // another new one
            break;
        case 4:
            st = weft_remove(w, x->e[0], x->pos); // remove to a new archetype
            break;
        case 5:
            st = weft_remove(w, x->e[1], x->trk);
            break;
        default:
            st = weft_insert(w, x->e[0], x->big, NULL, 4096); // 4096-aligned column
            break;
        }
        if (st == WEFT_OK) {
            x->progress++;
        }
    }
    return st;
}

static void verify_insert(fx *x)
{
    weft_world *w = x->w;
    assert_false(weft_has(w, x->e[0], x->pos));
    assert_true(weft_has(w, x->e[0], x->vel));
    assert_true(weft_has(w, x->e[0], x->sp));
    assert_true(weft_has(w, x->e[0], x->big));
    const void *b = weft_get(w, x->e[0], x->big, 4096);
    assert_non_null(b);
    assert_true((uintptr_t)b % 4096 == 0);
    assert_true(weft_has(w, x->e[1], x->tag));
    assert_false(weft_has(w, x->e[1], x->trk));
    const unsigned char *v = weft_get(w, x->e[1], x->vel, 16);
    assert_non_null(v);
    assert_int_equal(v[1], 9);
}

// table growth: many spawns into one archetype
static weft_status run_growth(fx *x)
{
    for (; x->progress < 300; x->progress++) {
        uint64_t p = val64(x->progress);
        tw_tracked t;
        tw_tracked_make(&t, (uint64_t)x->progress);
        weft_value vals[2] = {{x->pos, 8, &p}, {x->trk, sizeof t, &t}};
        pre(x);
        weft_entity e = weft_spawn_with(x->w, vals, 2);
        if (e == 0) {
            return spawn_status(x, e);
        }
        x->e[x->ne++] = e;
    }
    return WEFT_OK;
}

static void verify_growth(fx *x)
{
    assert_int_equal(x->ne, 300);
    for (int i = 0; i < x->ne; i++) {
        const uint64_t *p = weft_get(x->w, x->e[i], x->pos, 8);
        assert_non_null(p);
        assert_true(*p == val64(i));
        const tw_tracked *t = weft_get(x->w, x->e[i], x->trk, sizeof(tw_tracked));
        assert_true(t->self == t && t->payload == (uint64_t)i);
    }
}

// sparse inserts into many entities (pages, dense growth)
static void prep_many_empty(fx *x)
{
    register_all(x);
    for (int i = 0; i < 400 && i < 512; i++) {
        x->e[x->ne++] = weft_spawn(x->w);
    }
}

static weft_status run_sparse(fx *x)
{
    for (; x->progress < x->ne; x->progress++) {
        unsigned char s[12];
        memset(s, x->progress & 0xFF, sizeof s);
        pre(x);
        // Spread over the index space so several sparse pages are needed.
        int i = (x->progress * 37) % x->ne;
        weft_status st = weft_insert(x->w, x->e[i], x->sp, s, 12);
        if (st != WEFT_OK) {
            return st;
        }
    }
    return WEFT_OK;
}

static void verify_sparse(fx *x)
{
    for (int k = 0; k < x->ne; k++) {
        int i = (k * 37) % x->ne;
        const unsigned char *s = weft_get(x->w, x->e[i], x->sp, 12);
        assert_non_null(s);
        assert_int_equal(s[0], k & 0xFF);
    }
}

// resources
static weft_status run_resource(fx *x)
{
    weft_status st = WEFT_OK;
    uint64_t p = 5;
    while (x->progress < 4 && st == WEFT_OK) {
        pre(x);
        switch (x->progress) {
        case 0:
            st = weft_resource_insert(x->w, x->pos, &p, 8);
            break;
        case 1:
            st = weft_resource_insert(x->w, x->big, NULL, 4096);
            break;
        case 2:
            st = weft_resource_insert(x->w, x->trk, NULL, sizeof(tw_tracked));
            break;
        default:
            p = 6;
            st = weft_resource_insert(x->w, x->pos, &p, 8); // replace
            break;
        }
        if (st == WEFT_OK) {
            x->progress++;
        }
    }
    return st;
}

static void verify_resource(fx *x)
{
    const uint64_t *p = weft_resource_get(x->w, x->pos, 8);
    assert_non_null(p);
    assert_true(*p == 6);
    const void *b = weft_resource_get(x->w, x->big, 4096);
    assert_non_null(b);
    assert_true((uintptr_t)b % 4096 == 0);
    assert_true(weft_resource_has(x->w, x->trk));
}

// reserve + flush
static void prep_reserved(fx *x)
{
    register_all(x);
    for (int i = 0; i < 20; i++) {
        x->e[x->ne++] = weft_spawn(x->w);
    }
    for (int i = 0; i < 20; i += 3) {
        assert_int_equal(weft_despawn(x->w, x->e[i]), WEFT_OK);
    }
    for (int i = 0; i < 100; i++) {
        x->reserved[x->nreserved++] = weft_entity_reserve(x->w);
    }
}

static weft_status run_flush(fx *x)
{
    for (; x->progress < 1; x->progress++) {
        pre(x);
        weft_status st = weft_entity_flush(x->w);
        if (st != WEFT_OK) {
            for (int i = 0; i < x->nreserved; i++) {
                assert_false(weft_is_alive(x->w, x->reserved[i]));
            }
            return st;
        }
    }
    return WEFT_OK;
}

static void verify_flush(fx *x)
{
    for (int i = 0; i < x->nreserved; i++) {
        assert_true(weft_is_alive(x->w, x->reserved[i])); // no id lost
    }
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(x->w, &s), WEFT_OK);
    assert_int_equal(s.pending_reserved, 0);
    assert_int_equal(s.live_entities, 20 - 7 + 100);
}

// reservations flushed implicitly by spawn
static weft_status run_spawn_after_reserve(fx *x)
{
    for (; x->progress < 1; x->progress++) {
        uint64_t p = 3;
        weft_value v = {x->pos, 8, &p};
        pre(x);
        weft_entity e = weft_spawn_with(x->w, &v, 1);
        if (e == 0) {
            return spawn_status(x, e);
        }
        x->e[0] = e;
    }
    return WEFT_OK;
}

static void verify_spawn_after_reserve(fx *x)
{
    assert_true(weft_has(x->w, x->e[0], x->pos));
    for (int i = 0; i < x->nreserved; i++) {
        assert_true(weft_is_alive(x->w, x->reserved[i]));
        assert_true(x->reserved[i] != x->e[0]);
    }
}

// despawn (with hooks) must never fail on memory
static void prep_populated(fx *x)
{
    register_all(x);
    for (int i = 0; i < 60; i++) {
        uint64_t p = val64(i);
        unsigned char s[12] = {0};
        weft_value vals[3] = {{x->pos, 8, &p}, {x->sp, 12, s}, {x->trk, sizeof(tw_tracked), NULL}};
        x->e[x->ne++] = weft_spawn_with(x->w, vals, 1 + i % 3);
    }
}

static weft_status run_despawn(fx *x)
{
    for (; x->progress < x->ne; x->progress += 2) {
        pre(x);
        weft_status st = weft_despawn(x->w, x->e[x->progress]);
        if (st != WEFT_OK) {
            return st;
        }
    }
    return WEFT_OK;
}

static void verify_despawn(fx *x)
{
    for (int i = 0; i < x->ne; i++) {
        assert_int_equal(weft_is_alive(x->w, x->e[i]), i % 2 == 1);
    }
}

// ---- driver (tests/support/fault.c) ----

static void case_prepare(tw_fault *c)
{
    const scenario *sc = c->user;
    fx *x = calloc(1, sizeof *x);
    assert_non_null(x);
    x->f = tw_fixture_new();
    assert_non_null(x->f);
    assert_non_null(x->f->w);
    x->w = x->f->w;
    x->scenario = sc->name;
    x->n = c->n;
    x->sticky = c->sticky;
    sc->prepare(x);
    c->f = x->f;
    c->state = x;
}

static weft_status case_run(tw_fault *c)
{
    const scenario *sc = c->user;
    return sc->run(c->state);
}

// A failed call reports OUT_OF_MEMORY and leaves the content and the
// storage as they were.
static void case_failed(tw_fault *c)
{
    fx *x = c->state;
    assert_int_equal(weft_last_status(x->w), WEFT_ERR_OUT_OF_MEMORY);
    assert_int_equal(x->f->log.last_status, WEFT_ERR_OUT_OF_MEMORY);
    uint64_t h = weft_world_hash(x->w);
    weft_world_stats now;
    assert_int_equal(weft_world_get_stats(x->w, &now), WEFT_OK);
    if (h != x->pre.hash || now.live_entities != x->pre.stats.live_entities ||
        now.pending_reserved != x->pre.stats.pending_reserved) {
        fail_msg("%s: N=%lld%s: failed call changed the world (hash %016llx -> "
                 "%016llx, live %lld -> %lld, pending %d -> %d)",
                 c->name, (long long)c->n, c->sticky ? " sticky" : "",
                 (unsigned long long)x->pre.hash, (unsigned long long)h,
                 (long long)x->pre.stats.live_entities, (long long)now.live_entities,
                 x->pre.stats.pending_reserved, now.pending_reserved);
    }
    tw_snap_expect_same_content(x->w, &x->pre);
}

static void case_verify(tw_fault *c)
{
    const scenario *sc = c->user;
    sc->verify(c->state);
}

static void case_finish(tw_fault *c)
{
    free(c->state);
}

static const tw_fault_ops case_ops = {case_prepare, case_run, case_failed, case_verify,
                                      case_finish};

static const scenario scenarios[] = {
    {"register", prep_none, run_register, verify_register},
    {"spawn", prep_none, run_spawn, verify_spawn},
    {"spawn_with_new_archetype", prep_registered, run_spawn_with, verify_spawn_with},
    {"spawn_bulk", prep_registered, run_spawn_bulk, verify_spawn_bulk},
    {"insert_new_archetype", prep_one_entity, run_insert, verify_insert},
    {"table_growth", prep_registered, run_growth, verify_growth},
    {"sparse_insert", prep_many_empty, run_sparse, verify_sparse},
    {"resource_insert", prep_registered, run_resource, verify_resource},
    {"reserve_flush", prep_reserved, run_flush, verify_flush},
    {"spawn_flushes_reserved", prep_reserved, run_spawn_after_reserve,
     verify_spawn_after_reserve},
    {"despawn", prep_populated, run_despawn, verify_despawn},
};

static void fault_scenario(void **state)
{
    const scenario *sc = *state;
    tw_fault_run(sc->name, &case_ops, (void *)sc, false, MAX_N);
    tw_fault_run(sc->name, &case_ops, (void *)sc, true, MAX_N);
}

// create world: fail the Nth allocation inside weft_world_create.
static void fault_create_world(void **state)
{
    (void)state;
    for (int sticky = 0; sticky < 2; sticky++) {
        for (int64_t n = 1; n <= MAX_N; n++) {
            tw_fixture *f = calloc(1, sizeof *f);
            assert_non_null(f);
            tw_alloc_init(&f->alloc);
            tw_log_init(&f->log);
            weft_world_desc d = tw_fixture_desc(f);
            tw_alloc_fail_nth(&f->alloc, n, sticky != 0);
            f->w = weft_world_create(&d);
            int64_t injected = tw_alloc_injected(&f->alloc);
            tw_alloc_disarm(&f->alloc);
            if (f->w == NULL) {
                assert_true(injected > 0);
                assert_int_equal(tw_alloc_live_bytes(&f->alloc), 0);
                assert_int_equal(tw_alloc_live_blocks(&f->alloc), 0);
                tw_fixture_free(f);
                continue;
            }
            // A world that came up must be fully usable.
            assert_int_equal(weft_world_check(f->w), WEFT_OK);
            weft_component c = tw_comp(f->w, "c", 4, 4, WEFT_STORAGE_TABLE, 0);
            int32_t v = 1;
            weft_value val = {c, 4, &v};
            assert_true(weft_spawn_with(f->w, &val, 1) != 0);
            assert_int_equal(weft_world_check(f->w), WEFT_OK);
            tw_fixture_free(f);
            if (injected == 0) {
                break;
            }
        }
    }
}

int main(void)
{
    enum { NS = sizeof scenarios / sizeof scenarios[0] };
    struct CMUnitTest tests[NS + 1];
    static char names[NS][64];
    tests[0] = (struct CMUnitTest)cmocka_unit_test(fault_create_world);
    for (size_t i = 0; i < NS; i++) {
        snprintf(names[i], sizeof names[i], "fault_%s", scenarios[i].name);
        struct CMUnitTest t = cmocka_unit_test_prestate(fault_scenario, (void *)&scenarios[i]);
        t.name = names[i];
        tests[i + 1] = t;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}

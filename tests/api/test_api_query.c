// tests/api/test_api_query.c - black-box tests of queries:
// descriptor validation, archetype matching (thousands of archetypes, shared
// tables, sparse With/Without, incremental matching, optional and or-groups,
// Disabled), chunk iteration and field access, per-entity access, structural
// calls deferred while iterating, and change detection (Added/Changed
// vectors, marking rules, wrap-around, clamp).
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

#include "test_world.h"
#include "weft.h"

typedef struct vec2 {
    float x, y;
} vec2;

// ---- helpers ----

static weft_query_desc qdesc(void)
{
    weft_query_desc d;
    memset(&d, 0, sizeof d);
    return d;
}

static void add_term(weft_query_desc *d, weft_component id, weft_access access,
                     weft_oper oper, uint32_t filter, int32_t group)
{
    weft_term *t = &d->terms[d->term_count++];
    t->id = id;
    t->access = access;
    t->oper = oper;
    t->filter = filter;
    t->or_group = group;
}

static weft_query *mkq(weft_world *w, const weft_query_desc *d)
{
    weft_query *q = weft_query_create(w, d);
    if (!q) {
        fail_msg("weft_query_create: %s: %s", weft_status_name(weft_last_status(w)),
                 weft_last_error(w));
    }
    return q;
}

// Query with one AND READ term.
static weft_query *q_read(weft_world *w, weft_component c, uint32_t filter)
{
    weft_query_desc d = qdesc();
    add_term(&d, c, WEFT_ACCESS_READ, WEFT_OPER_AND, filter, 0);
    return mkq(w, &d);
}

// Iterates q to the end; hits[index] counts how often each entity index was
// yielded (hits has n slots, zeroed here). Returns the number of rows.
static int64_t collect(weft_world *w, weft_query *q, uint8_t *hits, size_t n)
{
    if (hits) {
        memset(hits, 0, n);
    }
    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    int64_t total = 0;
    while (weft_iter_next(&it)) {
        int32_t c = weft_iter_count(&it);
        assert_true(c > 0);
        const weft_entity *es = weft_iter_entities(&it);
        assert_non_null(es);
        for (int32_t i = 0; i < c; i++) {
            assert_true(weft_is_alive(w, es[i]));
            if (hits) {
                uint32_t idx = weft_entity_index(es[i]);
                assert_true(idx < n);
                hits[idx]++;
            }
        }
        total += c;
    }
    assert_int_equal(weft_iter_count(&it), 0);
    return total;
}

// Runs q and expects exactly the entities in `want` (each once).
static void expect_yields(weft_world *w, weft_query *q, const weft_entity *want, int n)
{
    uint8_t hits[256];
    int64_t total = collect(w, q, hits, sizeof hits);
    for (int i = 0; i < n; i++) {
        uint32_t idx = weft_entity_index(want[i]);
        if (hits[idx] != 1) {
            fail_msg("entity %u yielded %d times, expected once", idx, hits[idx]);
        }
    }
    if (total != n) {
        fail_msg("query yielded %lld rows, expected %d", (long long)total, n);
    }
}

static weft_entity spawn_pos(weft_world *w, weft_component pos, float x)
{
    vec2 p = {x, -x};
    weft_value v = {pos, sizeof p, &p};
    weft_entity e = weft_spawn_with(w, &v, 1);
    assert_true(e != 0);
    return e;
}

// ---- validation ----

typedef struct vfx {
    tw_fixture *f;
    weft_world *w;
    weft_component pos, vel, tag, imm, sp;
} vfx;

static vfx vsetup(tw_fixture *f)
{
    vfx v;
    v.f = f;
    v.w = f->w;
    v.pos = tw_comp(v.w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    v.vel = tw_comp(v.w, "Vel", 8, 4, WEFT_STORAGE_TABLE, 0);
    v.tag = tw_comp(v.w, "Tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    v.imm = tw_comp(v.w, "Frozen", 4, 4, WEFT_STORAGE_TABLE, WEFT_COMPONENT_IMMUTABLE);
    v.sp = tw_comp(v.w, "Spr", 4, 4, WEFT_STORAGE_SPARSE, 0);
    spawn_pos(v.w, v.pos, 1);
    return v;
}

// Expects weft_query_create to refuse d with `st`, naming `needle`, and to
// leave the world unchanged.
static void expect_refused(vfx *v, const weft_query_desc *d, weft_status st,
                           const char *needle)
{
    tw_snap s = tw_snap_take(v->w);
    weft_clear_error(v->w);
    weft_query *q = weft_query_create(v->w, d);
    if (q) {
        fail_msg("weft_query_create accepted a descriptor that should give %s",
                 weft_status_name(st));
    }
    tw_expect_error(v->f, st, needle);
    tw_snap_expect_same(v->w, &s);
}

static void query_create_rejects_invalid_args(void **state)
{
    vfx v = vsetup(*state);
    weft_world *w = v.w;

    weft_clear_error(w);
    assert_null(weft_query_create(w, NULL));
    tw_expect_error(v.f, WEFT_ERR_INVALID_ARG, "desc");

    weft_query_desc d = qdesc();
    expect_refused(&v, &d, WEFT_ERR_INVALID_ARG, "term_count"); // 0 terms

    d = qdesc();
    for (int i = 0; i < WEFT_MAX_TERMS; i++) {
        add_term(&d, v.pos, WEFT_ACCESS_READ, WEFT_OPER_OPTIONAL, 0, 0);
    }
    d.term_count = WEFT_MAX_TERMS + 1; // 17
    expect_refused(&v, &d, WEFT_ERR_INVALID_ARG, "term_count");
    d.term_count = -1;
    expect_refused(&v, &d, WEFT_ERR_INVALID_ARG, "term_count");

    d = qdesc();
    add_term(&d, v.pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    d._start_canary = 1;
    expect_refused(&v, &d, WEFT_ERR_INVALID_ARG, "canary");
    d._start_canary = 0;
    d._end_canary = 0xdead;
    expect_refused(&v, &d, WEFT_ERR_INVALID_ARG, "canary");
    d._end_canary = 0;
    d.flags = 1u << 7;
    expect_refused(&v, &d, WEFT_ERR_INVALID_ARG, "flag");
    d.flags = 0;

    // per-term problems; the message names the term and its component
    struct {
        weft_access access;
        weft_oper oper;
        uint32_t filter;
        const char *what;
    } bad[] = {
        {WEFT_ACCESS_NUM, WEFT_OPER_AND, 0, "unknown access"},
        {(weft_access)77, WEFT_OPER_AND, 0, "unknown access"},
        {WEFT_ACCESS_READ, WEFT_OPER_NUM, 0, "unknown oper"},
        {WEFT_ACCESS_READ, WEFT_OPER_AND, 1u << 2, "unknown filter bit"},
        {WEFT_ACCESS_READ, WEFT_OPER_WITH, 0, "field access on WITH"},
        {WEFT_ACCESS_WRITE, WEFT_OPER_WITH, 0, "write access on WITH"},
        {WEFT_ACCESS_READ, WEFT_OPER_WITHOUT, 0, "field access on WITHOUT"},
        {WEFT_ACCESS_READ, WEFT_OPER_OPTIONAL, WEFT_FILTER_CHANGED, "filter on OPTIONAL"},
        {WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT, WEFT_FILTER_ADDED, "filter on WITHOUT"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        d = qdesc();
        add_term(&d, v.vel, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
        add_term(&d, v.pos, bad[i].access, bad[i].oper, bad[i].filter, 0);
        print_message("case: %s\n", bad[i].what);
        expect_refused(&v, &d, WEFT_ERR_INVALID_ARG, "term 1");
        assert_true(tw_contains(weft_last_error(w), "Pos"));
    }
}

static void query_create_rejects_unknown_and_immutable(void **state)
{
    vfx v = vsetup(*state);
    weft_query_desc d = qdesc();
    add_term(&d, v.pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    add_term(&d, 999, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    expect_refused(&v, &d, WEFT_ERR_UNKNOWN_COMPONENT, "term 1");

    d = qdesc();
    add_term(&d, 0, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    expect_refused(&v, &d, WEFT_ERR_UNKNOWN_COMPONENT, "term 0");

    d = qdesc();
    add_term(&d, v.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0, 0);
    add_term(&d, v.imm, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0, 0);
    expect_refused(&v, &d, WEFT_ERR_IMMUTABLE, "Frozen");
    assert_true(tw_contains(weft_last_error(v.w), "term 1"));
    d.terms[1].oper = WEFT_OPER_OPTIONAL; // write on an optional immutable too
    expect_refused(&v, &d, WEFT_ERR_IMMUTABLE, "Frozen");

    // reading an immutable component is fine
    d.terms[1].access = WEFT_ACCESS_READ;
    weft_query *q = mkq(v.w, &d);
    assert_int_equal(weft_query_destroy(v.w, q), WEFT_OK);
}

// The message for an unknown id names the id itself (a message names what
// was wrong, docs/errors.md), not only the term.
static void query_create_unknown_component_message_names_id(void **state)
{
    vfx v = vsetup(*state);
    weft_query_desc d = qdesc();
    add_term(&d, v.pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    add_term(&d, 999, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    expect_refused(&v, &d, WEFT_ERR_UNKNOWN_COMPONENT, "term 1");
    if (!tw_contains(weft_last_error(v.w), "999")) {
        fail_msg("message \"%s\" does not name component id 999", weft_last_error(v.w));
    }
}

static void query_create_rejects_written_twice_or_written_and_read(void **state)
{
    vfx v = vsetup(*state);
    weft_access pairs[][2] = {
        {WEFT_ACCESS_WRITE, WEFT_ACCESS_READ},
        {WEFT_ACCESS_READ, WEFT_ACCESS_WRITE},
        {WEFT_ACCESS_WRITE, WEFT_ACCESS_WRITE},
        {WEFT_ACCESS_WRITE, WEFT_ACCESS_DEFAULT},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        weft_query_desc d = qdesc();
        add_term(&d, v.vel, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
        add_term(&d, v.pos, pairs[i][0], WEFT_OPER_AND, 0, 0);
        add_term(&d, v.pos, pairs[i][1], WEFT_OPER_OPTIONAL, 0, 0);
        expect_refused(&v, &d, WEFT_ERR_DUPLICATE_COMPONENT, "Pos");
        assert_true(tw_contains(weft_last_error(v.w), "term 2"));
    }
}

// weft.h: DUPLICATE_COMPONENT also for "a component ... listed twice".
static void query_create_rejects_component_listed_twice(void **state)
{
    vfx v = vsetup(*state);
    weft_query_desc d = qdesc();
    add_term(&d, v.pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    add_term(&d, v.pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    expect_refused(&v, &d, WEFT_ERR_DUPLICATE_COMPONENT, "Pos");
}

static void query_other_world_is_invalid_handle(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_entity e = spawn_pos(w, pos, 1);
    weft_query *q = q_read(w, pos, 0);

    tw_fixture *g = tw_fixture_new();
    assert_non_null(g);
    assert_non_null(g->w);
    weft_world *w2 = g->w;
    (void)tw_comp(w2, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_entity e2 = spawn_pos(w2, pos, 2);
    tw_snap s = tw_snap_take(w2);
    weft_iter it;
    assert_int_equal(weft_query_iter(w2, q, &it), WEFT_ERR_INVALID_HANDLE);
    tw_expect_error(g, WEFT_ERR_INVALID_HANDLE, "another world");
    weft_clear_error(w2);
    assert_int_equal(weft_query_destroy(w2, q), WEFT_ERR_INVALID_HANDLE);
    tw_expect_error(g, WEFT_ERR_INVALID_HANDLE, NULL);
    weft_clear_error(w2);
    assert_int_equal(weft_query_count(w2, q), -1);
    tw_expect_error(g, WEFT_ERR_INVALID_HANDLE, NULL);
    weft_clear_error(w2);
    assert_false(weft_query_matches(w2, q, e2));
    tw_expect_error(g, WEFT_ERR_INVALID_HANDLE, NULL);
    weft_clear_error(w2);
    assert_null(weft_query_get(w2, q, e2, 0, sizeof(vec2)));
    tw_expect_error(g, WEFT_ERR_INVALID_HANDLE, NULL);
    weft_entity out = 0;
    weft_clear_error(w2);
    assert_int_equal(weft_query_single(w2, q, &out), WEFT_ERR_INVALID_HANDLE);
    weft_clear_error(w2);
    assert_int_equal(weft_query_set_last_run(w2, q, 5), WEFT_ERR_INVALID_HANDLE);
    weft_clear_error(w2);
    assert_true(weft_query_is_empty(w2, q));
    tw_expect_error(g, WEFT_ERR_INVALID_HANDLE, NULL);
    tw_snap_expect_same(w2, &s);

    // NULL world/query
    assert_int_equal(weft_query_iter(NULL, q, &it), WEFT_ERR_INVALID_HANDLE);
    weft_clear_error(w);
    assert_int_equal(weft_query_iter(w, NULL, &it), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_query_iter(w, q, NULL), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_query_destroy(w, NULL), WEFT_OK);

    // the query still works in its own world
    int32_t c = (int32_t)weft_query_count(w, q);
    assert_int_equal(c, 1);
    assert_true(weft_query_matches(w, q, e));
    assert_int_equal(weft_query_destroy(w, q), WEFT_OK);
    tw_fixture_free(g);
}

static void query_destroy_while_iterating_is_wrong_phase(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    spawn_pos(w, pos, 1);
    weft_query *q = q_read(w, pos, 0);
    weft_query *q2 = q_read(w, pos, 0);
    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    assert_true(weft_iter_next(&it));
    assert_int_equal(weft_query_destroy(w, q), WEFT_ERR_WRONG_PHASE);
    tw_expect_error(f, WEFT_ERR_WRONG_PHASE, NULL);
    // another query may go while q iterates
    assert_int_equal(weft_query_destroy(w, q2), WEFT_OK);
    weft_iter_fini(&it);
    weft_iter_fini(&it); // harmless twice
    assert_int_equal(weft_query_destroy(w, q), WEFT_OK);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- matching ----

#define NTAGS 12
#define NCOMB (1 << NTAGS)

enum { S_POS = NTAGS, S_VEL, S_HP, S_STAG, S_COUNT };

typedef struct mterm {
    int slot;
    weft_oper oper;
    int group;
} mterm;

typedef struct mquery {
    int n;
    mterm t[6];
} mquery;

static bool naive_match(const mquery *mq, uint32_t mask)
{
    uint32_t groups = 0, seen = 0;
    for (int i = 0; i < mq->n; i++) {
        bool has = (mask >> mq->t[i].slot) & 1u;
        switch (mq->t[i].oper) {
        case WEFT_OPER_AND:
        case WEFT_OPER_WITH:
            if (!has) {
                return false;
            }
            break;
        case WEFT_OPER_WITHOUT:
            if (has) {
                return false;
            }
            break;
        case WEFT_OPER_OR:
            groups |= 1u << mq->t[i].group;
            if (has) {
                seen |= 1u << mq->t[i].group;
            }
            break;
        default:
            break;
        }
    }
    return groups == seen;
}

static uint32_t big_mask(int i)
{
    uint32_t m = (uint32_t)i & (NCOMB - 1);
    if (i % 3 != 0) {
        m |= 1u << S_POS;
    }
    if (i % 5 != 0) {
        m |= 1u << S_VEL;
    }
    if (i % 7 == 0) {
        m |= 1u << S_HP;
    }
    if (i % 11 == 0) {
        m |= 1u << S_STAG;
    }
    return m;
}

static weft_entity big_spawn(weft_world *w, const weft_component *slots, uint32_t mask,
                             int i)
{
    weft_value vals[S_COUNT];
    int n = 0;
    vec2 p = {(float)i, (float)-i};
    vec2 vel = {(float)i * 2, 0};
    int32_t hp = i;
    for (int s = 0; s < S_COUNT; s++) {
        if (!((mask >> s) & 1u)) {
            continue;
        }
        vals[n].id = slots[s];
        vals[n].size = 0;
        vals[n].ptr = NULL;
        if (s == S_POS) {
            vals[n].size = sizeof p;
            vals[n].ptr = &p;
        } else if (s == S_VEL) {
            vals[n].size = sizeof vel;
            vals[n].ptr = &vel;
        } else if (s == S_HP) {
            vals[n].size = sizeof hp;
            vals[n].ptr = &hp;
        }
        n++;
    }
    weft_entity e = weft_spawn_with(w, vals, n);
    assert_true(e != 0);
    return e;
}

static weft_query *mq_create(weft_world *w, const weft_component *slots, const mquery *mq,
                             uint32_t flags)
{
    weft_query_desc d = qdesc();
    d.flags = flags;
    for (int i = 0; i < mq->n; i++) {
        const mterm *t = &mq->t[i];
        bool field = (t->oper == WEFT_OPER_AND || t->oper == WEFT_OPER_OPTIONAL ||
                      t->oper == WEFT_OPER_OR) &&
                     (t->slot == S_POS || t->slot == S_VEL || t->slot == S_HP);
        add_term(&d, slots[t->slot], field ? WEFT_ACCESS_READ : WEFT_ACCESS_NONE, t->oper, 0,
                 t->group);
    }
    return mkq(w, &d);
}

// Checks a query against the naive filter over ents[0..n) with masks.
static void mq_check(weft_world *w, weft_query *q, const mquery *mq, const weft_entity *ents,
                     const uint32_t *masks, int n, uint8_t *hits, size_t hits_len,
                     int qi)
{
    int64_t total = collect(w, q, hits, hits_len);
    int64_t want = 0;
    for (int i = 0; i < n; i++) {
        bool m = naive_match(mq, masks[i]);
        uint32_t idx = weft_entity_index(ents[i]);
        if (hits[idx] != (m ? 1 : 0)) {
            fail_msg("query %d: entity %d (mask %#x) yielded %d times, naive says %d", qi, i,
                     masks[i], hits[idx], m);
        }
        want += m;
    }
    assert_int_equal(total, want);
    assert_int_equal(weft_query_count(w, q), want);
    assert_int_equal(weft_query_is_empty(w, q), want == 0);
    for (int i = 0; i < n; i += 37) {
        assert_int_equal(weft_query_matches(w, q, ents[i]), naive_match(mq, masks[i]));
    }
}

static void match_thousands_of_archetypes_vs_naive(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component slots[S_COUNT];
    char name[16];
    for (int i = 0; i < NTAGS; i++) {
        snprintf(name, sizeof name, "t%d", i);
        slots[i] = tw_comp(w, name, 0, 0, WEFT_STORAGE_TABLE, 0);
    }
    slots[S_POS] = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    slots[S_VEL] = tw_comp(w, "Vel", 8, 4, WEFT_STORAGE_TABLE, 0);
    slots[S_HP] = tw_comp(w, "Hp", 4, 4, WEFT_STORAGE_SPARSE, 0);
    slots[S_STAG] = tw_comp(w, "STag", 0, 0, WEFT_STORAGE_SPARSE, 0);

    const mquery qs[] = {
        {1, {{S_POS, WEFT_OPER_AND, 0}}},
        {3, {{S_POS, WEFT_OPER_AND, 0}, {0, WEFT_OPER_WITH, 0}, {1, WEFT_OPER_WITHOUT, 0}}},
        {4,
         {{3, WEFT_OPER_WITH, 0},
          {7, WEFT_OPER_WITH, 0},
          {11, WEFT_OPER_WITHOUT, 0},
          {S_VEL, WEFT_OPER_OPTIONAL, 0}}},
        {5,
         {{2, WEFT_OPER_OR, 1},
          {4, WEFT_OPER_OR, 1},
          {5, WEFT_OPER_OR, 2},
          {6, WEFT_OPER_OR, 2},
          {S_VEL, WEFT_OPER_AND, 0}}},
        {2, {{S_HP, WEFT_OPER_AND, 0}, {1, WEFT_OPER_WITH, 0}}},
        {3, {{S_STAG, WEFT_OPER_WITHOUT, 0}, {9, WEFT_OPER_WITH, 0}, {S_POS, WEFT_OPER_AND, 0}}},
        {3, {{S_STAG, WEFT_OPER_WITH, 0}, {0, WEFT_OPER_OR, 7}, {1, WEFT_OPER_OR, 7}}},
        {1, {{S_POS, WEFT_OPER_OPTIONAL, 0}}},
        {1, {{0, WEFT_OPER_WITHOUT, 0}}},
        {3, {{S_HP, WEFT_OPER_OR, 3}, {S_STAG, WEFT_OPER_OR, 3}, {10, WEFT_OPER_WITHOUT, 0}}},
        {6,
         {{0, WEFT_OPER_WITH, 0},
          {1, WEFT_OPER_WITH, 0},
          {2, WEFT_OPER_WITH, 0},
          {3, WEFT_OPER_WITH, 0},
          {4, WEFT_OPER_WITHOUT, 0},
          {S_POS, WEFT_OPER_AND, 0}}},
    };
    enum { NQ = sizeof qs / sizeof qs[0] };
    // half the queries exist before any entity (all matching incremental)
    weft_query *cached[NQ], *uncached[NQ];
    for (int i = 0; i < NQ; i += 2) {
        cached[i] = mq_create(w, slots, &qs[i], 0);
    }

    const int n1 = NCOMB, n2 = NCOMB + 600;
    weft_entity *ents = calloc((size_t)n2, sizeof *ents);
    uint32_t *masks = calloc((size_t)n2, sizeof *masks);
    uint8_t *hits = calloc((size_t)n2 + 16, 1);
    assert_non_null(ents);
    assert_non_null(masks);
    assert_non_null(hits);
    for (int i = 0; i < n1; i++) {
        masks[i] = big_mask(i);
        ents[i] = big_spawn(w, slots, masks[i], i);
    }
    weft_world_stats st;
    assert_int_equal(weft_world_get_stats(w, &st), WEFT_OK);
    assert_true(st.archetypes > 4096);
    for (int i = 1; i < NQ; i += 2) {
        cached[i] = mq_create(w, slots, &qs[i], 0);
    }
    for (int i = 0; i < NQ; i++) {
        uncached[i] = mq_create(w, slots, &qs[i], WEFT_QUERY_UNCACHED);
    }
    for (int i = 0; i < NQ; i++) {
        mq_check(w, cached[i], &qs[i], ents, masks, n1, hits, (size_t)n2 + 16, i);
        mq_check(w, uncached[i], &qs[i], ents, masks, n1, hits, (size_t)n2 + 16, i);
    }

    // values reach the right rows
    weft_iter it;
    assert_int_equal(weft_query_iter(w, cached[0], &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        const vec2 *p = weft_iter_field(&it, 0, sizeof(vec2));
        assert_non_null(p);
        const weft_entity *es = weft_iter_entities(&it);
        for (int32_t r = 0; r < weft_iter_count(&it); r++) {
            assert_true(p[r].x == (float)weft_entity_index(es[r]));
        }
    }

    // new archetypes after matching: Pos|Vel with fresh tag combos where
    // mask bit pattern uses S_STAG and S_HP in new combinations, plus
    // moves of existing entities into archetypes that do not exist yet
    for (int i = n1; i < n2; i++) {
        uint32_t m = big_mask(i * 7 + 3) | (1u << S_HP) | (1u << S_STAG);
        masks[i] = m;
        ents[i] = big_spawn(w, slots, m, i);
    }
    for (int i = 0; i < n1; i += 97) {
        assert_int_equal(weft_remove(w, ents[i], slots[S_POS]), WEFT_OK);
        masks[i] &= ~(1u << S_POS);
        assert_int_equal(weft_insert(w, ents[i], slots[S_STAG], NULL, 0), WEFT_OK);
        masks[i] |= 1u << S_STAG;
    }
    for (int i = 0; i < NQ; i++) {
        mq_check(w, cached[i], &qs[i], ents, masks, n2, hits, (size_t)n2 + 16, i);
        mq_check(w, uncached[i], &qs[i], ents, masks, n2, hits, (size_t)n2 + 16, i);
        assert_int_equal(weft_query_destroy(w, cached[i]), WEFT_OK);
        assert_int_equal(weft_query_destroy(w, uncached[i]), WEFT_OK);
    }
    free(ents);
    free(masks);
    free(hits);
}

// A table shared by several matching archetypes is listed once, and sparse
// With/Without filters are exact per row.
static void match_shared_table_listed_once_and_sparse_filters_exact(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_component stag = tw_comp(w, "SparseTag", 0, 0, WEFT_STORAGE_SPARSE, 0);
    weft_component sval = tw_comp(w, "SparseVal", 4, 4, WEFT_STORAGE_SPARSE, 0);
    weft_entity e1 = spawn_pos(w, pos, 1);
    weft_entity e2 = spawn_pos(w, pos, 2);
    weft_entity e3 = spawn_pos(w, pos, 3);
    weft_entity e4 = spawn_pos(w, pos, 4);
    assert_int_equal(weft_insert(w, e2, stag, NULL, 0), WEFT_OK);
    int32_t v = 5;
    assert_int_equal(weft_insert(w, e3, sval, &v, 4), WEFT_OK);
    assert_int_equal(weft_insert(w, e4, stag, NULL, 0), WEFT_OK);
    assert_int_equal(weft_insert(w, e4, sval, &v, 4), WEFT_OK);
    // four archetypes, one table
    weft_archetype_info a1, a2;
    assert_int_equal(weft_archetype_info_get(w, weft_entity_archetype(w, e1), &a1), WEFT_OK);
    assert_int_equal(weft_archetype_info_get(w, weft_entity_archetype(w, e4), &a2), WEFT_OK);
    assert_int_equal(a1.table, a2.table);
    assert_int_not_equal(weft_entity_archetype(w, e1), weft_entity_archetype(w, e4));

    weft_query *all = q_read(w, pos, 0);
    weft_entity want_all[] = {e1, e2, e3, e4};
    expect_yields(w, all, want_all, 4);
    weft_query_desc d = qdesc();
    add_term(&d, pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    add_term(&d, stag, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0, 0);
    weft_query *with = mkq(w, &d);
    weft_entity want_with[] = {e2, e4};
    expect_yields(w, with, want_with, 2);
    d.terms[1].oper = WEFT_OPER_WITHOUT;
    weft_query *without = mkq(w, &d);
    weft_entity want_without[] = {e1, e3};
    expect_yields(w, without, want_without, 2);
    d.terms[1].oper = WEFT_OPER_WITH;
    add_term(&d, sval, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT, 0, 0);
    weft_query *mixed = mkq(w, &d);
    weft_entity want_mixed[] = {e2};
    expect_yields(w, mixed, want_mixed, 1);
    assert_true(weft_query_matches(w, mixed, e2));
    assert_false(weft_query_matches(w, mixed, e4));
    assert_false(weft_query_matches(w, without, e2));
    assert_true(weft_query_matches(w, without, e3));
    assert_int_equal(weft_query_count(w, with), 2);

    // a sparse data term: values per row
    d = qdesc();
    add_term(&d, sval, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    add_term(&d, pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    weft_query *sq = mkq(w, &d);
    weft_entity want_sq[] = {e3, e4};
    expect_yields(w, sq, want_sq, 2);
    // sparse tag added/removed afterwards: no new archetype needed
    assert_int_equal(weft_remove(w, e2, stag), WEFT_OK);
    assert_int_equal(weft_insert(w, e1, stag, NULL, 0), WEFT_OK);
    weft_entity want_with2[] = {e1, e4};
    expect_yields(w, with, want_with2, 2);
    weft_entity want_without2[] = {e2, e3};
    expect_yields(w, without, want_without2, 2);
    expect_yields(w, all, want_all, 4);
}

static void match_incremental_new_archetypes_and_empty_ones(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_component a = tw_comp(w, "A", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component b = tw_comp(w, "B", 0, 0, WEFT_STORAGE_TABLE, 0);
    weft_component s = tw_comp(w, "S", 0, 0, WEFT_STORAGE_SPARSE, 0);
    weft_query *q = q_read(w, pos, 0);
    assert_int_equal(collect(w, q, NULL, 0), 0); // nothing yet
    assert_true(weft_query_is_empty(w, q));
    weft_entity e1 = spawn_pos(w, pos, 1);
    weft_entity want1[] = {e1};
    expect_yields(w, q, want1, 1);
    // brand-new archetypes: {Pos,A}, {Pos,A,B}, {Pos,S}
    weft_entity e2 = spawn_pos(w, pos, 2);
    assert_int_equal(weft_insert(w, e2, a, NULL, 4), WEFT_OK);
    weft_entity e3 = spawn_pos(w, pos, 3);
    weft_value vs[] = {{a, 4, NULL}, {b, 0, NULL}};
    assert_int_equal(weft_insert_many(w, e3, vs, 2), WEFT_OK);
    weft_entity e4 = spawn_pos(w, pos, 4);
    assert_int_equal(weft_insert(w, e4, s, NULL, 0), WEFT_OK);
    weft_entity want2[] = {e1, e2, e3, e4};
    expect_yields(w, q, want2, 4);
    // an archetype that exists but is empty: matched, yields nothing
    weft_entity e5 = spawn_pos(w, pos, 5);
    assert_int_equal(weft_insert(w, e5, b, NULL, 0), WEFT_OK); // {Pos,B} new
    assert_int_equal(weft_remove(w, e5, pos), WEFT_OK);        // {B}; {Pos,B} empty
    weft_query_desc d = qdesc();
    add_term(&d, b, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0, 0);
    add_term(&d, pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    add_term(&d, a, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT, 0, 0);
    weft_query *qb = mkq(w, &d);
    assert_int_equal(collect(w, qb, NULL, 0), 0);
    expect_yields(w, q, want2, 4);
    assert_int_equal(weft_despawn(w, e1), WEFT_OK);
    weft_entity want3[] = {e2, e3, e4};
    expect_yields(w, q, want3, 3);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void match_optional_and_or_groups(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_component vel = tw_comp(w, "Vel", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_component a = tw_comp(w, "A", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component b = tw_comp(w, "B", 4, 4, WEFT_STORAGE_SPARSE, 0);
    weft_component c = tw_comp(w, "C", 0, 0, WEFT_STORAGE_TABLE, 0);
    weft_component dd = tw_comp(w, "D", 0, 0, WEFT_STORAGE_SPARSE, 0);
    // entity i: Pos always; Vel if i&1; A if i&2; B if i&4; C if i&8; D if i&16
    weft_entity e[32];
    for (int i = 0; i < 32; i++) {
        e[i] = spawn_pos(w, pos, (float)i);
        vec2 v = {(float)i, 1};
        int32_t x = i * 10, y = i * 100;
        if (i & 1) {
            assert_int_equal(weft_insert(w, e[i], vel, &v, sizeof v), WEFT_OK);
        }
        if (i & 2) {
            assert_int_equal(weft_insert(w, e[i], a, &x, 4), WEFT_OK);
        }
        if (i & 4) {
            assert_int_equal(weft_insert(w, e[i], b, &y, 4), WEFT_OK);
        }
        if (i & 8) {
            assert_int_equal(weft_insert(w, e[i], c, NULL, 0), WEFT_OK);
        }
        if (i & 16) {
            assert_int_equal(weft_insert(w, e[i], dd, NULL, 0), WEFT_OK);
        }
    }
    // Pos, OPTIONAL Vel, OR{A, B} (group 1), OR{C, D} (group 2)
    weft_query_desc d = qdesc();
    add_term(&d, pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    add_term(&d, vel, WEFT_ACCESS_READ, WEFT_OPER_OPTIONAL, 0, 0);
    add_term(&d, a, WEFT_ACCESS_READ, WEFT_OPER_OR, 0, 1);
    add_term(&d, b, WEFT_ACCESS_READ, WEFT_OPER_OR, 0, 1);
    add_term(&d, c, WEFT_ACCESS_NONE, WEFT_OPER_OR, 0, -5);
    add_term(&d, dd, WEFT_ACCESS_NONE, WEFT_OPER_OR, 0, -5);
    weft_query *q = mkq(w, &d);
    uint8_t seen[64] = {0};
    int64_t n = 0;
    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        const weft_entity *es = weft_iter_entities(&it);
        int32_t cnt = weft_iter_count(&it);
        const vec2 *pv = weft_iter_field(&it, 0, sizeof(vec2));
        const vec2 *vv = weft_iter_field(&it, 1, sizeof(vec2));
        const int32_t *av = weft_iter_field(&it, 2, 4);
        assert_non_null(pv);
        assert_true(weft_iter_has(&it, 0));
        assert_int_equal(weft_iter_has(&it, 1), vv != NULL);
        assert_int_equal(weft_iter_has(&it, 2), av != NULL);
        for (int32_t r = 0; r < cnt; r++) {
            int i = (int)pv[r].x;
            assert_true(i >= 0 && i < 32);
            assert_true(es[r] == e[i]);
            seen[i]++;
            n++;
            // optional Vel present exactly for odd i (per chunk)
            assert_int_equal(vv != NULL, (i & 1) != 0);
            if (vv) {
                assert_true(vv[r].x == (float)i);
            }
            assert_int_equal(av != NULL, (i & 2) != 0);
            if (av) {
                assert_int_equal(av[r], i * 10);
            }
            const int32_t *bv = weft_iter_get(&it, 3, r, 4);
            assert_int_equal(bv != NULL, (i & 4) != 0);
            if (bv) {
                assert_int_equal(*bv, i * 100);
            }
            const int32_t *ag = weft_iter_get(&it, 2, r, 4);
            assert_int_equal(ag != NULL, (i & 2) != 0);
        }
    }
    int64_t want = 0;
    for (int i = 0; i < 32; i++) {
        bool m = (i & 6) != 0 && (i & 24) != 0;
        assert_int_equal(seen[i], m ? 1 : 0);
        want += m;
        assert_int_equal(weft_query_matches(w, q, e[i]), m);
        const vec2 *vg = weft_query_get(w, q, e[i], 1, sizeof(vec2));
        assert_int_equal(vg != NULL, m && (i & 1));
        const int32_t *bg = weft_query_get(w, q, e[i], 3, 4);
        assert_int_equal(bg != NULL, m && (i & 4));
    }
    assert_int_equal(n, want);
    assert_int_equal(weft_query_count(w, q), want);

    // one group only, sparse-only members: D or B
    d = qdesc();
    add_term(&d, dd, WEFT_ACCESS_NONE, WEFT_OPER_OR, 0, 0);
    add_term(&d, b, WEFT_ACCESS_READ, WEFT_OPER_OR, 0, 0);
    weft_query *q2 = mkq(w, &d);
    int64_t want2 = 0;
    for (int i = 0; i < 32; i++) {
        bool m = (i & 20) != 0;
        want2 += m;
        assert_int_equal(weft_query_matches(w, q2, e[i]), m);
    }
    assert_int_equal(collect(w, q2, NULL, 0), want2);
}

// Disabled entities are skipped unless a query names Disabled (Bevy's
// default query filter).
static void match_disabled_entities(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_query *early = q_read(w, pos, 0); // before Disabled exists
    weft_entity e1 = spawn_pos(w, pos, 1);
    weft_entity e2 = spawn_pos(w, pos, 2);
    weft_entity e3 = spawn_pos(w, pos, 3);
    assert_int_equal(collect(w, early, NULL, 0), 3);
    weft_component dis = weft_disabled(w);
    assert_true(dis != 0);
    assert_int_equal(weft_disabled(w), dis);
    assert_int_equal(weft_component_lookup(w, "weft.Disabled"), dis);
    weft_component_info info;
    assert_int_equal(weft_component_info_get(w, dis, &info), WEFT_OK);
    assert_int_equal(info.size, 0);
    assert_int_equal(info.storage, WEFT_STORAGE_TABLE);
    assert_int_equal(weft_insert(w, e3, dis, NULL, 0), WEFT_OK);

    weft_query *def = q_read(w, pos, 0);
    weft_entity want_def[] = {e1, e2};
    expect_yields(w, def, want_def, 2);
    expect_yields(w, early, want_def, 2);
    weft_query_desc d = qdesc();
    add_term(&d, pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    add_term(&d, dis, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0, 0);
    weft_query *with = mkq(w, &d);
    weft_entity want_with[] = {e3};
    expect_yields(w, with, want_with, 1);
    d.terms[1].oper = WEFT_OPER_WITHOUT;
    weft_query *without = mkq(w, &d);
    expect_yields(w, without, want_def, 2);
    d.terms[1].oper = WEFT_OPER_OPTIONAL;
    weft_query *opt = mkq(w, &d); // mentioning Disabled lifts the default filter
    weft_entity want_all[] = {e1, e2, e3};
    expect_yields(w, opt, want_all, 3);
    d = qdesc();
    add_term(&d, pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    d.flags = WEFT_QUERY_MATCH_DISABLED;
    weft_query *allq = mkq(w, &d);
    expect_yields(w, allq, want_all, 3);
    d.flags = WEFT_QUERY_MATCH_DISABLED | WEFT_QUERY_UNCACHED;
    weft_query *allu = mkq(w, &d);
    expect_yields(w, allu, want_all, 3);

    assert_false(weft_query_matches(w, def, e3));
    assert_null(weft_query_get(w, def, e3, 0, sizeof(vec2)));
    assert_true(weft_query_matches(w, allq, e3));
    const vec2 *p = weft_get(w, e3, pos, sizeof(vec2));
    assert_non_null(p);
    assert_true(p->x == 3);
    weft_entity one = 0;
    assert_int_equal(weft_query_single(w, with, &one), WEFT_OK);
    assert_true(one == e3);

    // re-enable
    assert_int_equal(weft_remove(w, e3, dis), WEFT_OK);
    expect_yields(w, def, want_all, 3);
    assert_int_equal(collect(w, with, NULL, 0), 0);
    // disabling a sparse-tagged entity too
    weft_component st = tw_comp(w, "ST", 0, 0, WEFT_STORAGE_SPARSE, 0);
    assert_int_equal(weft_insert(w, e1, st, NULL, 0), WEFT_OK);
    assert_int_equal(weft_insert(w, e1, dis, NULL, 0), WEFT_OK);
    weft_entity want_23[] = {e2, e3};
    expect_yields(w, def, want_23, 2);
    expect_yields(w, early, want_23, 2);
}

// ---- iteration API ----

static void iter_chunks_fields_and_misuse(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_component vel = tw_comp(w, "Vel", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_component sp = tw_comp(w, "Sp", 4, 4, WEFT_STORAGE_SPARSE, 0);
    weft_component tag = tw_comp(w, "Tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    weft_entity e[30];
    for (int i = 0; i < 30; i++) {
        e[i] = spawn_pos(w, pos, (float)i);
        vec2 v = {1, 0};
        assert_int_equal(weft_insert(w, e[i], vel, &v, sizeof v), WEFT_OK);
        int32_t s = i;
        assert_int_equal(weft_insert(w, e[i], sp, &s, 4), WEFT_OK);
        if (i % 3 == 0) {
            assert_int_equal(weft_insert(w, e[i], tag, NULL, 0), WEFT_OK);
        }
    }
    weft_query_desc d = qdesc();
    add_term(&d, pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0, 0);
    add_term(&d, vel, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    add_term(&d, sp, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    add_term(&d, tag, WEFT_ACCESS_NONE, WEFT_OPER_OPTIONAL, 0, 0);
    weft_query *q = mkq(w, &d);
    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    int chunks = 0;
    int64_t rows = 0;
    while (weft_iter_next(&it)) {
        chunks++;
        int32_t n = weft_iter_count(&it);
        rows += n;
        const weft_entity *es = weft_iter_entities(&it);
        vec2 *p = weft_iter_field_mut(&it, 0, sizeof(vec2));
        const vec2 *v = weft_iter_field(&it, 1, sizeof(vec2));
        assert_non_null(p);
        assert_non_null(v);
        for (int32_t r = 0; r < n; r++) {
            int i = (int)p[r].x;
            assert_true(es[r] == e[i]);
            p[r].x += v[r].x * 100; // p += v
            const int32_t *s = weft_iter_get(&it, 2, r, 4);
            assert_non_null(s);
            assert_int_equal(*s, i);
        }
        // misuse, each with its status; the iteration goes on
        weft_clear_error(w);
        assert_null(weft_iter_field(&it, 0, 4));
        tw_expect_error(f, WEFT_ERR_SIZE_MISMATCH, "Pos");
        weft_clear_error(w);
        assert_null(weft_iter_field_mut(&it, 0, 16));
        tw_expect_error(f, WEFT_ERR_SIZE_MISMATCH, NULL);
        weft_clear_error(w);
        assert_null(weft_iter_field_mut(&it, 1, sizeof(vec2)));
        tw_expect_error(f, WEFT_ERR_ACCESS_VIOLATION, "Vel");
        weft_clear_error(w);
        assert_null(weft_iter_field_mut_nomark(&it, 1, sizeof(vec2)));
        tw_expect_error(f, WEFT_ERR_ACCESS_VIOLATION, NULL);
        weft_clear_error(w);
        assert_null(weft_iter_get_mut(&it, 1, 0, sizeof(vec2)));
        tw_expect_error(f, WEFT_ERR_ACCESS_VIOLATION, NULL);
        weft_clear_error(w);
        assert_int_equal(weft_iter_mark(&it, 1, 0), WEFT_ERR_ACCESS_VIOLATION);
        weft_clear_error(w);
        // the sparse term is a plain array for the chunk too
        const int32_t *sv = weft_iter_field(&it, 2, 4);
        assert_non_null(sv);
        for (int32_t r = 0; r < n; r++) {
            assert_int_equal(sv[r], (int32_t)p[r].x - 100);
        }
        assert_null(weft_iter_field(&it, 2, 8));
        tw_expect_error(f, WEFT_ERR_SIZE_MISMATCH, "Sp");
        weft_clear_error(w);
        assert_null(weft_iter_field(&it, 3, 0)); // tag, access NONE
        tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
        weft_clear_error(w);
        assert_null(weft_iter_field(&it, 4, 8)); // out of range
        tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
        weft_clear_error(w);
        assert_null(weft_iter_field(&it, -1, 8));
        tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
        weft_clear_error(w);
        assert_null(weft_iter_get(&it, 2, n, 4)); // row out of range
        tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
        weft_clear_error(w);
        assert_null(weft_iter_get(&it, 2, 0, 8));
        tw_expect_error(f, WEFT_ERR_SIZE_MISMATCH, NULL);
        assert_int_equal(weft_iter_mark(&it, 0, n), WEFT_ERR_INVALID_ARG);
        bool ch = true;
        assert_int_equal(weft_iter_set_if_neq(&it, 1, 0, v, sizeof(vec2), &ch),
                         WEFT_ERR_ACCESS_VIOLATION);
        assert_false(ch);
        assert_int_equal(weft_iter_set_if_neq(&it, 0, 0, NULL, sizeof(vec2), NULL),
                         WEFT_ERR_INVALID_ARG);
        assert_false(weft_iter_has(&it, 99));
        assert_false(weft_iter_has(&it, -1));
    }
    assert_int_equal(rows, 30);
    // {Pos,Vel} and {Pos,Vel,Tag} tables, each cut where the sparse Sp
    // values stop being consecutive (moving rows reordered the tables)
    assert_true(chunks >= 2);
    assert_int_equal(weft_iter_count(&it), 0);
    assert_null(weft_iter_entities(&it));
    assert_false(weft_iter_next(&it)); // stays ended
    for (int i = 0; i < 30; i++) {
        const vec2 *p = weft_get(w, e[i], pos, sizeof(vec2));
        assert_true(p->x == (float)i + 100);
    }
    // accessors on NULL
    assert_false(weft_iter_next(NULL));
    weft_iter_fini(NULL);
    assert_int_equal(weft_iter_count(NULL), 0);
    assert_null(weft_iter_entities(NULL));
    assert_null(weft_iter_field(NULL, 0, 8));
    assert_int_equal(weft_iter_mark(NULL, 0, 0), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void iter_per_entity_get_count_single(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_component hp = tw_comp(w, "Hp", 4, 4, WEFT_STORAGE_SPARSE, 0);
    weft_component boss = tw_comp(w, "Boss", 0, 0, WEFT_STORAGE_TABLE, 0);
    weft_query_desc d = qdesc();
    add_term(&d, pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0, 0);
    add_term(&d, boss, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0, 0);
    add_term(&d, hp, WEFT_ACCESS_READ, WEFT_OPER_OPTIONAL, 0, 0);
    weft_query *q = mkq(w, &d);
    weft_entity one = 77;
    assert_int_equal(weft_query_single(w, q, &one), WEFT_ERR_NOT_FOUND);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, NULL);
    assert_true(one == 0);
    assert_true(weft_query_is_empty(w, q));
    assert_int_equal(weft_query_count(w, q), 0);
    assert_int_equal(weft_query_single(w, q, NULL), WEFT_ERR_INVALID_ARG);

    weft_entity plain = spawn_pos(w, pos, 1);
    weft_entity b1 = spawn_pos(w, pos, 2);
    assert_int_equal(weft_insert(w, b1, boss, NULL, 0), WEFT_OK);
    assert_int_equal(weft_query_single(w, q, &one), WEFT_OK);
    assert_true(one == b1);
    assert_false(weft_query_is_empty(w, q));
    assert_true(weft_query_matches(w, q, b1));
    assert_false(weft_query_matches(w, q, plain));
    assert_false(weft_query_matches(w, q, 0));
    vec2 *p = (vec2 *)weft_query_get(w, q, b1, 0, sizeof(vec2));
    assert_non_null(p);
    assert_true(p->x == 2);
    // a WRITE term through weft_query_get is not stamped
    weft_ticks t0, t1;
    assert_int_equal(weft_get_ticks(w, b1, pos, &t0), WEFT_OK);
    weft_world_increment_change_tick(w);
    p->x = 5;
    assert_int_equal(weft_get_ticks(w, b1, pos, &t1), WEFT_OK);
    assert_int_equal(t0.changed, t1.changed);
    assert_null(weft_query_get(w, q, b1, 2, 4)); // optional absent: no error
    assert_null(weft_query_get(w, q, plain, 0, sizeof(vec2))); // no match
    weft_clear_error(w);
    assert_null(weft_query_get(w, q, b1, 1, 0)); // WITH: no field
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    weft_clear_error(w);
    assert_null(weft_query_get(w, q, b1, 3, 4));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    weft_clear_error(w);
    assert_null(weft_query_get(w, q, b1, 0, 4));
    tw_expect_error(f, WEFT_ERR_SIZE_MISMATCH, NULL);
    int32_t h = 9;
    assert_int_equal(weft_insert(w, b1, hp, &h, 4), WEFT_OK);
    const int32_t *hg = weft_query_get(w, q, b1, 2, 4);
    assert_non_null(hg);
    assert_int_equal(*hg, 9);

    weft_entity b2 = spawn_pos(w, pos, 3);
    assert_int_equal(weft_insert(w, b2, boss, NULL, 0), WEFT_OK);
    one = 77;
    assert_int_equal(weft_query_single(w, q, &one), WEFT_ERR_NOT_UNIQUE);
    tw_expect_error(f, WEFT_ERR_NOT_UNIQUE, NULL);
    assert_int_equal(weft_query_count(w, q), 2);
    // per-entity queries do not advance the last run
    uint32_t lr = weft_query_last_run(w, q);
    (void)weft_query_count(w, q);
    (void)weft_query_matches(w, q, b2);
    assert_int_equal(weft_query_last_run(w, q), lr);
    assert_int_equal(weft_despawn(w, b2), WEFT_OK);
    assert_false(weft_query_matches(w, q, b2)); // stale
    assert_null(weft_query_get(w, q, b2, 0, sizeof(vec2)));
    assert_int_equal(weft_query_single(w, q, &one), WEFT_OK);
    assert_true(one == b1);

    // e1{A,B}, e2{A,B,C}, e3{B}: (&B) with A without C -> single e1
    weft_component ca = tw_comp(w, "QA", 0, 0, WEFT_STORAGE_TABLE, 0);
    weft_component cb = tw_comp(w, "QB", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component cc = tw_comp(w, "QC", 0, 0, WEFT_STORAGE_SPARSE, 0);
    weft_value v1[] = {{ca, 0, NULL}, {cb, 4, NULL}};
    weft_value v2[] = {{ca, 0, NULL}, {cb, 4, NULL}, {cc, 0, NULL}};
    weft_value v3[] = {{cb, 4, NULL}};
    weft_entity q1 = weft_spawn_with(w, v1, 2);
    (void)weft_spawn_with(w, v2, 3);
    (void)weft_spawn_with(w, v3, 1);
    d = qdesc();
    add_term(&d, cb, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    add_term(&d, ca, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0, 0);
    add_term(&d, cc, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT, 0, 0);
    weft_query *qb = mkq(w, &d);
    assert_int_equal(weft_query_single(w, qb, &one), WEFT_OK);
    assert_true(one == q1);
}

// ---- deferred structural changes ----

static void defer_structural_calls_while_iterating(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_component vel = tw_comp(w, "Vel", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_component hp = tw_comp(w, "Hp", 4, 4, WEFT_STORAGE_SPARSE, 0);
    weft_entity e1 = spawn_pos(w, pos, 1);
    weft_entity e2 = spawn_pos(w, pos, 2);
    weft_entity e3 = spawn_pos(w, pos, 3);
    vec2 v = {7, 7};
    assert_int_equal(weft_insert(w, e2, vel, &v, sizeof v), WEFT_OK);
    weft_query *q = q_read(w, pos, 0);

    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    int chunks = 0;
    weft_entity s1 = 0, s2 = 0;
    int32_t hpv = 41;
    vec2 src = {99, 98};
    while (weft_iter_next(&it)) {
        if (chunks++ > 0) {
            continue;
        }
        weft_value sv = {pos, sizeof src, &src};
        s1 = weft_spawn_with(w, &sv, 1);
        assert_true(s1 != 0);
        src.x = -1; // the call copied the value
        assert_false(weft_is_alive(w, s1));
        s2 = weft_spawn(w);
        assert_true(s2 != 0 && s2 != s1);
        assert_false(weft_is_alive(w, s2));
        assert_int_equal(weft_insert(w, s2, hp, &hpv, 4), WEFT_OK); // on a reserved id
        hpv = 0;
        assert_int_equal(weft_insert(w, e1, vel, &v, sizeof v), WEFT_OK);
        v.x = 0;
        assert_int_equal(weft_remove(w, e2, vel), WEFT_OK);
        assert_int_equal(weft_despawn(w, e3), WEFT_OK);
        // nothing happened yet
        assert_false(weft_has(w, e1, vel));
        assert_true(weft_has(w, e2, vel));
        assert_true(weft_is_alive(w, e3));
        assert_null(weft_get(w, s2, hp, 4));
        // bulk spawn is refused
        weft_entity out[2];
        weft_value bc = {pos, sizeof(vec2), NULL};
        assert_int_equal(weft_spawn_bulk(w, &bc, 1, 2, out), WEFT_ERR_WRONG_PHASE);
        tw_expect_error(f, WEFT_ERR_WRONG_PHASE, NULL);
        // misuse still reported at call time
        assert_int_equal(weft_insert(w, e1, vel, &v, 4), WEFT_ERR_SIZE_MISMATCH);
        assert_int_equal(weft_remove(w, e1, 999), WEFT_ERR_UNKNOWN_COMPONENT);
        assert_int_equal(weft_despawn(w, 0), WEFT_ERR_INVALID_ENTITY);
    }
    assert_int_equal(chunks, 2);
    // applied at the end, in order
    assert_true(weft_is_alive(w, s1));
    assert_true(weft_is_alive(w, s2));
    const vec2 *p = weft_get(w, s1, pos, sizeof(vec2));
    assert_non_null(p);
    assert_true(p->x == 99 && p->y == 98);
    const int32_t *h = weft_get(w, s2, hp, 4);
    assert_non_null(h);
    assert_int_equal(*h, 41);
    const vec2 *vv = weft_get(w, e1, vel, sizeof(vec2));
    assert_non_null(vv);
    assert_true(vv->x == 7);
    assert_false(weft_has(w, e2, vel));
    assert_false(weft_is_alive(w, e3));
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_entity want[] = {e1, e2, s1};
    expect_yields(w, q, want, 3);
    // not deferred any more
    weft_entity s3 = weft_spawn(w);
    assert_true(weft_is_alive(w, s3));
}

static void defer_nested_iterations_apply_at_outermost_end(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_component tag = tw_comp(w, "Tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    weft_entity e1 = spawn_pos(w, pos, 1);
    weft_entity e2 = spawn_pos(w, pos, 2);
    weft_query *q1 = q_read(w, pos, 0);
    weft_query *q2 = q_read(w, pos, 0);
    weft_iter outer, inner;
    assert_int_equal(weft_query_iter(w, q1, &outer), WEFT_OK);
    assert_true(weft_iter_next(&outer));
    weft_entity s = weft_spawn(w);
    assert_int_equal(weft_query_iter(w, q2, &inner), WEFT_OK);
    int64_t n = 0;
    while (weft_iter_next(&inner)) {
        n += weft_iter_count(&inner);
        assert_int_equal(weft_insert(w, e1, tag, NULL, 0), WEFT_OK);
    }
    assert_int_equal(n, 2);
    // inner ended, outer still open: nothing applied
    assert_false(weft_is_alive(w, s));
    assert_false(weft_has(w, e1, tag));
    // a third iteration, ended early
    weft_iter third;
    assert_int_equal(weft_query_iter(w, q2, &third), WEFT_OK);
    assert_int_equal(weft_despawn(w, e2), WEFT_OK);
    weft_iter_fini(&third);
    assert_true(weft_is_alive(w, e2));
    while (weft_iter_next(&outer)) {
    }
    assert_true(weft_is_alive(w, s));
    assert_true(weft_has(w, e1, tag));
    assert_false(weft_is_alive(w, e2));
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void defer_fini_applies_and_keeps_last_run(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_entity e1 = spawn_pos(w, pos, 1);
    weft_query *q = q_read(w, pos, WEFT_FILTER_CHANGED);
    uint32_t lr = weft_query_last_run(w, q);
    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    assert_true(weft_iter_next(&it));
    weft_entity s = weft_spawn(w);
    assert_int_equal(weft_despawn(w, e1), WEFT_OK);
    assert_int_equal(weft_despawn(w, e1), WEFT_OK); // second one fails at apply time
    weft_clear_error(w);
    weft_iter_fini(&it);
    assert_int_equal(weft_query_last_run(w, q), lr); // not advanced
    assert_true(weft_is_alive(w, s));
    assert_false(weft_is_alive(w, e1));
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, NULL);
    assert_false(weft_iter_next(&it));
    assert_int_equal(weft_world_check(w), WEFT_OK);
    // not deferring any more: immediate effect
    weft_entity e2 = spawn_pos(w, pos, 2);
    assert_true(weft_is_alive(w, e2));
    weft_world_stats st;
    assert_int_equal(weft_world_get_stats(w, &st), WEFT_OK);
    assert_int_equal(st.live_entities, 2);
    assert_int_equal(st.pending_reserved, 0);
    // a completed iteration advances the last run
    assert_int_equal(collect(w, q, NULL, 0), 1);
    assert_int_not_equal(weft_query_last_run(w, q), lr);
}

// ---- change detection ----

static void ticks_comparison_vectors(void **state)
{
    (void)state;
    // the wrapping comparison: newer than last_run, not after this_run
    assert_true(weft_tick_is_newer(7, 5, 10));
    assert_false(weft_tick_is_newer(5, 5, 10));
    assert_true(weft_tick_is_newer(10, 5, 10));
    assert_false(weft_tick_is_newer(11, 5, 10));
    assert_true(weft_tick_is_newer(0x05, 0xFFFFFFF0u, 0x10));
    assert_false(weft_tick_is_newer(0xFFFFFFF0u, 0x05, 0x10));
    // both older than MAX_CHANGE_AGE: both clamp, equal, not newer
    uint32_t now = 4000000000u;
    assert_false(weft_tick_is_newer(now - 3500000000u, now - 3600000000u, now));
    assert_false(weft_tick_is_newer(now - 3600000000u, now - 3500000000u, now));
    assert_false(weft_tick_is_newer(100, 50, 4000000000u));
    assert_true(weft_tick_is_newer(now - WEFT_MAX_CHANGE_AGE + 1, now - 3600000000u, now));
    assert_int_equal(WEFT_MAX_CHANGE_AGE, 3258167296u);
    assert_int_equal(WEFT_CHECK_TICK_THRESHOLD, 518400000u);
}

typedef struct cfx {
    tw_fixture *f;
    weft_world *w;
    weft_component pos, vel;
    weft_entity e[6];
} cfx;

static cfx csetup(tw_fixture *f)
{
    cfx c;
    c.f = f;
    c.w = f->w;
    c.pos = tw_comp(c.w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    c.vel = tw_comp(c.w, "Vel", 8, 4, WEFT_STORAGE_TABLE, 0);
    for (int i = 0; i < 6; i++) {
        c.e[i] = spawn_pos(c.w, c.pos, (float)i);
    }
    return c;
}

static void change_first_run_then_added_vs_changed(void **state)
{
    cfx c = csetup(*state);
    weft_world *w = c.w;
    weft_query *qc = q_read(w, c.pos, WEFT_FILTER_CHANGED);
    weft_query *qa = q_read(w, c.pos, WEFT_FILTER_ADDED);
    weft_query *qb = q_read(w, c.pos, WEFT_FILTER_ADDED | WEFT_FILTER_CHANGED);
    // first run: everything is added and changed
    assert_int_equal(weft_query_count(w, qc), 6);
    assert_int_equal(collect(w, qc, NULL, 0), 6);
    assert_int_equal(collect(w, qa, NULL, 0), 6);
    assert_int_equal(collect(w, qb, NULL, 0), 6);
    assert_int_equal(collect(w, qc, NULL, 0), 0);
    assert_int_equal(collect(w, qa, NULL, 0), 0);
    assert_int_equal(weft_query_count(w, qb), 0);

    vec2 v = {5, 5};
    assert_int_equal(weft_insert(w, c.e[0], c.vel, &v, sizeof v), WEFT_OK); // row move only
    assert_int_equal(weft_insert(w, c.e[1], c.pos, &v, sizeof v), WEFT_OK); // replace
    vec2 *m = weft_get_mut(w, c.e[2], c.pos, sizeof(vec2));                 // get_mut
    assert_non_null(m);
    const vec2 *r = weft_get(w, c.e[3], c.pos, sizeof(vec2)); // read only
    assert_non_null(r);
    assert_int_equal(weft_remove(w, c.e[4], c.pos), WEFT_OK); // re-add
    assert_int_equal(weft_insert(w, c.e[4], c.pos, &v, sizeof v), WEFT_OK);
    weft_value pv = {c.pos, sizeof v, &v};
    weft_entity fresh = weft_spawn_with(w, &pv, 1);
    weft_entity want_c[] = {c.e[1], c.e[2], c.e[4], fresh};
    weft_entity want_a[] = {c.e[4], fresh};
    assert_int_equal(weft_query_count(w, qc), 4);
    assert_true(weft_query_matches(w, qc, c.e[1]));
    assert_false(weft_query_matches(w, qc, c.e[3]));
    assert_false(weft_query_matches(w, qa, c.e[1]));
    expect_yields(w, qc, want_c, 4);
    expect_yields(w, qa, want_a, 2);
    expect_yields(w, qb, want_a, 2);
    assert_int_equal(collect(w, qc, NULL, 0), 0);

    // ticks as seen through weft_get_ticks
    weft_ticks t;
    assert_int_equal(weft_get_ticks(w, c.e[1], c.pos, &t), WEFT_OK);
    assert_true(t.changed != t.added);
    assert_int_equal(weft_get_ticks(w, fresh, c.pos, &t), WEFT_OK);
    assert_int_equal(t.added, t.changed);
}

static void change_marking_rules_through_iteration(void **state)
{
    cfx c = csetup(*state);
    weft_world *w = c.w;
    weft_query_desc d = qdesc();
    add_term(&d, c.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0, 0);
    weft_query *qw = mkq(w, &d);
    weft_query *qr = q_read(w, c.pos, WEFT_FILTER_CHANGED);
    assert_int_equal(collect(w, qr, NULL, 0), 6);
    weft_iter it;

    // read-only fetch of a write term: no mark
    assert_int_equal(weft_query_iter(w, qw, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        assert_non_null(weft_iter_field(&it, 0, sizeof(vec2)));
        assert_non_null(weft_iter_get(&it, 0, 0, sizeof(vec2)));
    }
    assert_int_equal(weft_query_count(w, qr), 0);

    // nomark: values change, ticks do not
    assert_int_equal(weft_query_iter(w, qw, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        vec2 *p = weft_iter_field_mut_nomark(&it, 0, sizeof(vec2));
        assert_non_null(p);
        for (int32_t r = 0; r < weft_iter_count(&it); r++) {
            p[r].y = 1000;
        }
    }
    assert_int_equal(weft_query_count(w, qr), 0);
    assert_int_equal(collect(w, qr, NULL, 0), 0);
    assert_true(((const vec2 *)weft_get(w, c.e[3], c.pos, sizeof(vec2)))->y == 1000);

    // explicit mark of one row
    assert_int_equal(weft_query_iter(w, qw, &it), WEFT_OK);
    weft_entity marked = 0;
    while (weft_iter_next(&it)) {
        assert_int_equal(weft_iter_mark(&it, 0, 2), WEFT_OK);
        marked = weft_iter_entities(&it)[2];
    }
    weft_entity want1[] = {marked};
    expect_yields(w, qr, want1, 1);

    // field_mut marks every row of the chunk
    assert_int_equal(weft_query_iter(w, qw, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        assert_non_null(weft_iter_field_mut(&it, 0, sizeof(vec2)));
    }
    expect_yields(w, qr, c.e, 6);
    // get_mut through the iterator marks one row
    assert_int_equal(weft_query_iter(w, qw, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        vec2 *p = weft_iter_get_mut(&it, 0, 4, sizeof(vec2));
        assert_non_null(p);
        marked = weft_iter_entities(&it)[4];
    }
    weft_entity want2[] = {marked};
    expect_yields(w, qr, want2, 1);

    // set_if_neq: equal -> untouched; different -> copied and marked
    assert_int_equal(weft_query_iter(w, qw, &it), WEFT_OK);
    uint8_t odd[16] = {0};
    while (weft_iter_next(&it)) {
        const weft_entity *es = weft_iter_entities(&it);
        for (int32_t r = 0; r < weft_iter_count(&it); r++) {
            vec2 cur = *(const vec2 *)weft_iter_get(&it, 0, r, sizeof(vec2));
            bool changed = !(r & 1);
            vec2 nv = cur;
            if (r & 1) {
                nv.x += 0.5f;
                odd[weft_entity_index(es[r])] = 1;
            }
            assert_int_equal(weft_iter_set_if_neq(&it, 0, r, &nv, sizeof nv, &changed),
                             WEFT_OK);
            assert_int_equal(changed, (r & 1) != 0);
            nv.x = -12345; // copied, not referenced
        }
    }
    uint8_t hits[16];
    assert_int_equal(collect(w, qr, hits, sizeof hits), 3);
    for (int i = 0; i < 6; i++) {
        uint32_t idx = weft_entity_index(c.e[i]);
        assert_int_equal(hits[idx], odd[idx]);
        const vec2 *p = weft_get(w, c.e[i], c.pos, sizeof(vec2));
        assert_true(p->x == (float)i + (odd[idx] ? 0.5f : 0.0f));
    }
    vec2 zero = {0, 0};
    assert_int_not_equal(weft_iter_set_if_neq(&it, 0, 0, &zero, sizeof zero, NULL),
                         WEFT_OK); // iteration over
}

static void change_query_does_not_see_its_own_writes(void **state)
{
    cfx c = csetup(*state);
    weft_world *w = c.w;
    weft_query_desc d = qdesc();
    add_term(&d, c.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, WEFT_FILTER_CHANGED, 0);
    weft_query *self = mkq(w, &d);
    weft_query *other = q_read(w, c.pos, WEFT_FILTER_CHANGED);
    assert_int_equal(collect(w, other, NULL, 0), 6);
    for (int round = 0; round < 3; round++) {
        weft_iter it;
        int64_t n = 0;
        assert_int_equal(weft_query_iter(w, self, &it), WEFT_OK);
        while (weft_iter_next(&it)) {
            vec2 *p = weft_iter_field_mut(&it, 0, sizeof(vec2));
            p[0].y += 1;
            n += weft_iter_count(&it);
        }
        // first run sees everything, later runs nothing (only own writes)
        assert_int_equal(n, round == 0 ? 6 : 0);
        assert_int_equal(weft_query_count(w, self), 0);
        assert_int_equal(collect(w, other, NULL, 0), round == 0 ? 6 : 0);
    }
    // a write by someone else is seen by both
    assert_non_null(weft_get_mut(w, c.e[5], c.pos, sizeof(vec2)));
    weft_entity want[] = {c.e[5]};
    expect_yields(w, self, want, 1);
    expect_yields(w, other, want, 1);
    // the last run is this_run of the completed iteration
    uint32_t before = weft_world_change_tick(w);
    assert_int_equal(collect(w, self, NULL, 0), 0);
    assert_int_equal(weft_query_last_run(w, self), before);
    assert_int_equal(weft_world_change_tick(w), before + 1);
    assert_int_equal(weft_query_set_last_run(w, self, before - 3), WEFT_OK);
    assert_int_equal(weft_query_last_run(w, self), before - 3);
}

static void change_sparse_and_or_group_filters(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_component hp = tw_comp(w, "Hp", 4, 4, WEFT_STORAGE_SPARSE, 0);
    weft_component mp = tw_comp(w, "Mp", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_entity e[8];
    int32_t x = 1;
    for (int i = 0; i < 8; i++) {
        e[i] = spawn_pos(w, pos, (float)i);
        if (i & 1) {
            assert_int_equal(weft_insert(w, e[i], hp, &x, 4), WEFT_OK);
        }
        if (i & 2) {
            assert_int_equal(weft_insert(w, e[i], mp, &x, 4), WEFT_OK);
        }
    }
    weft_query *qs = q_read(w, hp, WEFT_FILTER_CHANGED);
    weft_query_desc d = qdesc();
    add_term(&d, pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    add_term(&d, hp, WEFT_ACCESS_READ, WEFT_OPER_OR, WEFT_FILTER_CHANGED, 4);
    add_term(&d, mp, WEFT_ACCESS_READ, WEFT_OPER_OR, WEFT_FILTER_CHANGED, 4);
    weft_query *qo = mkq(w, &d);
    assert_int_equal(collect(w, qs, NULL, 0), 4);
    assert_int_equal(collect(w, qo, NULL, 0), 6);
    assert_int_equal(collect(w, qo, NULL, 0), 0);
    assert_non_null(weft_get_mut(w, e[1], hp, 4));  // hp only
    assert_non_null(weft_get_mut(w, e[3], mp, 4));  // has both, mp changed
    assert_non_null(weft_get_mut(w, e[2], pos, 8)); // not a filtered term
    weft_entity want_s[] = {e[1]};
    expect_yields(w, qs, want_s, 1);
    weft_entity want_o[] = {e[1], e[3]};
    expect_yields(w, qo, want_o, 2);
    // sparse write through the iterator
    d = qdesc();
    add_term(&d, hp, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0, 0);
    weft_query *qw = mkq(w, &d);
    weft_iter it;
    assert_int_equal(weft_query_iter(w, qw, &it), WEFT_OK);
    weft_entity got = 0;
    while (weft_iter_next(&it)) {
        for (int32_t r = 0; r < weft_iter_count(&it); r++) {
            if (weft_iter_entities(&it)[r] == e[5]) {
                int32_t *p = weft_iter_get_mut(&it, 0, r, 4);
                assert_non_null(p);
                *p = 55;
                got = e[5];
            }
        }
    }
    assert_true(got == e[5]);
    weft_entity want_s2[] = {e[5]};
    expect_yields(w, qs, want_s2, 1);
    expect_yields(w, qo, want_s2, 1);
    assert_int_equal(*(const int32_t *)weft_get(w, e[5], hp, 4), 55);
}

static void change_wrap_around(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_world_set_change_tick(w, 0xFFFFFFF0u);
    assert_int_equal(weft_world_change_tick(w), 0xFFFFFFF0u);
    weft_entity e[10];
    for (int i = 0; i < 10; i++) {
        e[i] = spawn_pos(w, pos, (float)i);
    }
    weft_query *qc = q_read(w, pos, WEFT_FILTER_CHANGED);
    weft_query *qa = q_read(w, pos, WEFT_FILTER_ADDED);
    weft_query_desc d = qdesc();
    add_term(&d, pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0, 0);
    weft_query *qw = mkq(w, &d);
    assert_int_equal(collect(w, qc, NULL, 0), 10);
    assert_int_equal(collect(w, qa, NULL, 0), 10);
    bool wrapped = false;
    for (int k = 0; k < 40; k++) {
        int i = k % 10;
        uint32_t before = weft_world_change_tick(w);
        assert_non_null(weft_get_mut(w, e[i], pos, sizeof(vec2)));
        weft_entity want[] = {e[i]};
        assert_int_equal(weft_query_count(w, qc), 1);
        expect_yields(w, qc, want, 1);
        assert_int_equal(collect(w, qa, NULL, 0), 0);
        if (k % 4 == 0) {
            weft_world_increment_change_tick(w);
        }
        if (k % 7 == 3) { // a write through an iteration
            weft_iter it;
            assert_int_equal(weft_query_iter(w, qw, &it), WEFT_OK);
            while (weft_iter_next(&it)) {
                assert_int_equal(weft_iter_mark(&it, 0, i), WEFT_OK);
            }
            expect_yields(w, qc, want, 1);
        }
        if (k % 10 == 9) { // something added across the wrap
            weft_entity n = spawn_pos(w, pos, 50);
            weft_entity wa[] = {n};
            expect_yields(w, qa, wa, 1);
            expect_yields(w, qc, wa, 1);
            assert_int_equal(weft_despawn(w, n), WEFT_OK);
        }
        wrapped |= weft_world_change_tick(w) < before;
    }
    assert_true(wrapped);
    assert_true(weft_world_change_tick(w) < 0x100);
}

static void change_clamp_old_ticks(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_component hp = tw_comp(w, "Hp", 4, 4, WEFT_STORAGE_SPARSE, 0);
    weft_component res = tw_comp(w, "Res", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_world_set_change_tick(w, 100);
    weft_entity e1 = spawn_pos(w, pos, 1);
    weft_entity e2 = spawn_pos(w, pos, 2);
    int32_t x = 3;
    assert_int_equal(weft_insert(w, e1, hp, &x, 4), WEFT_OK);
    assert_int_equal(weft_resource_insert(w, res, &x, 4), WEFT_OK);
    weft_query *recent = q_read(w, pos, WEFT_FILTER_CHANGED);
    weft_query *idle = q_read(w, pos, WEFT_FILTER_CHANGED);
    weft_query *sparse = q_read(w, hp, WEFT_FILTER_CHANGED);
    assert_int_equal(weft_query_set_last_run(w, idle, 90), WEFT_OK);

    uint32_t now = 100u + 3500000000u; // the ticks are 3.5e9 old
    weft_world_set_change_tick(w, now);
    assert_int_equal(weft_query_set_last_run(w, recent, now - 10), WEFT_OK);
    assert_int_equal(weft_query_set_last_run(w, sparse, now - 10), WEFT_OK);
    assert_true(weft_world_clamp_ticks(w, true));
    uint32_t floor = now - WEFT_MAX_CHANGE_AGE;
    weft_ticks t;
    assert_int_equal(weft_get_ticks(w, e1, pos, &t), WEFT_OK);
    assert_int_equal(t.added, floor);
    assert_int_equal(t.changed, floor);
    assert_int_equal(weft_get_ticks(w, e2, pos, &t), WEFT_OK);
    assert_int_equal(t.changed, floor);
    assert_int_equal(weft_get_ticks(w, e1, hp, &t), WEFT_OK);
    assert_int_equal(t.added, floor);
    assert_int_equal(t.changed, floor);
    assert_int_equal(weft_resource_get_ticks(w, res, &t), WEFT_OK);
    assert_int_equal(t.added, floor);
    assert_int_equal(t.changed, floor);
    assert_int_equal(weft_query_last_run(w, idle), floor);
    assert_int_equal(weft_query_last_run(w, recent), now - 10);

    // no false positives: neither the recent nor the idle query sees them
    assert_int_equal(weft_query_count(w, recent), 0);
    assert_int_equal(weft_query_count(w, idle), 0);
    assert_int_equal(weft_query_count(w, sparse), 0);
    assert_int_equal(collect(w, recent, NULL, 0), 0);
    assert_int_equal(collect(w, idle, NULL, 0), 0);
    assert_int_equal(collect(w, sparse, NULL, 0), 0);
    // a new change is seen by both
    assert_non_null(weft_get_mut(w, e2, pos, sizeof(vec2)));
    assert_non_null(weft_get_mut(w, e1, hp, 4));
    weft_entity want[] = {e2};
    expect_yields(w, recent, want, 1);
    expect_yields(w, idle, want, 1);
    weft_entity want_s[] = {e1};
    expect_yields(w, sparse, want_s, 1);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void change_clamp_runs_only_past_threshold(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_world_set_change_tick(w, 1000);
    weft_entity e = spawn_pos(w, pos, 1);
    // the last clamp happens at 1000 + 2.9e9 (e is young enough then)
    uint32_t check = 1000u + 2900000000u;
    weft_world_set_change_tick(w, check);
    assert_true(weft_world_clamp_ticks(w, true));
    weft_ticks t;
    assert_int_equal(weft_get_ticks(w, e, pos, &t), WEFT_OK);
    assert_int_equal(t.changed, 1000);
    assert_false(weft_world_clamp_ticks(w, false));
    // 3.4e9 old, but less than a threshold since the last clamp: nothing
    weft_world_set_change_tick(w, check + WEFT_CHECK_TICK_THRESHOLD - 1);
    assert_false(weft_world_clamp_ticks(w, false));
    assert_int_equal(weft_get_ticks(w, e, pos, &t), WEFT_OK);
    assert_int_equal(t.changed, 1000);
    // a query iteration at that point does not clamp either
    weft_query *q = q_read(w, pos, 0);
    weft_world_set_change_tick(w, check + WEFT_CHECK_TICK_THRESHOLD - 2);
    assert_int_equal(collect(w, q, NULL, 0), 1);
    assert_int_equal(weft_get_ticks(w, e, pos, &t), WEFT_OK);
    assert_int_equal(t.changed, 1000);
    // at the threshold an iteration clamps
    uint32_t now = check + WEFT_CHECK_TICK_THRESHOLD;
    weft_world_set_change_tick(w, now);
    assert_int_equal(collect(w, q, NULL, 0), 1);
    assert_int_equal(weft_get_ticks(w, e, pos, &t), WEFT_OK);
    assert_int_equal(t.changed, now - WEFT_MAX_CHANGE_AGE);
    assert_int_equal(t.added, now - WEFT_MAX_CHANGE_AGE);
    assert_false(weft_world_clamp_ticks(w, false)); // just ran
    weft_world_set_change_tick(w, now + WEFT_CHECK_TICK_THRESHOLD);
    assert_true(weft_world_clamp_ticks(w, false));
    assert_false(weft_world_clamp_ticks(w, false));
    assert_true(weft_world_clamp_ticks(w, true));
    assert_false(weft_world_clamp_ticks(NULL, true));
}

// A column left untouched for more than 2^31 ticks (but less than
// MAX_CHANGE_AGE, so the clamp leaves it alone) is then written: a Changed
// query must see the write (weft.h, change ticks: every stored tick stays
// comparable while it is younger than MAX_CHANGE_AGE). Three ways to write:
// field_mut over a whole table, field_mut over a partial chunk, and a
// changed row moving into such a table.
typedef struct qfx {
    weft_world *w;
    weft_component pos, vel, st;
    weft_entity a, b, c;
    weft_query *qr;
} qfx;

#define QUIET_TICKS 2200000000u // > 2^31, < WEFT_MAX_CHANGE_AGE

static qfx quiet_setup(tw_fixture *f)
{
    qfx x;
    x.w = f->w;
    x.pos = tw_comp(x.w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    x.vel = tw_comp(x.w, "Vel", 8, 4, WEFT_STORAGE_TABLE, 0);
    x.st = tw_comp(x.w, "ST", 0, 0, WEFT_STORAGE_SPARSE, 0);
    weft_world_set_change_tick(x.w, 100);
    x.a = spawn_pos(x.w, x.pos, 1); // table {Pos}
    x.b = spawn_pos(x.w, x.pos, 2); // table {Pos,Vel}
    vec2 v = {0, 0};
    assert_int_equal(weft_insert(x.w, x.b, x.vel, &v, sizeof v), WEFT_OK);
    x.c = spawn_pos(x.w, x.pos, 3); // {Pos,Vel} + sparse tag, same table as b
    assert_int_equal(weft_insert(x.w, x.c, x.vel, &v, sizeof v), WEFT_OK);
    assert_int_equal(weft_insert(x.w, x.c, x.st, NULL, 0), WEFT_OK);
    weft_world_set_change_tick(x.w, 100u + QUIET_TICKS);
    x.qr = q_read(x.w, x.pos, WEFT_FILTER_CHANGED);
    assert_int_equal(collect(x.w, x.qr, NULL, 0), 3); // first run: all
    assert_int_equal(weft_query_count(x.w, x.qr), 0);
    assert_int_equal(collect(x.w, x.qr, NULL, 0), 0);
    return x;
}

static void change_after_quiet_period_whole_table_field_mut(void **state)
{
    qfx x = quiet_setup(*state);
    weft_query_desc d = qdesc();
    add_term(&d, x.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0, 0);
    add_term(&d, x.vel, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT, 0, 0);
    weft_query *qw = mkq(x.w, &d); // the whole table {Pos}: only a
    weft_iter it;
    assert_int_equal(weft_query_iter(x.w, qw, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        assert_int_equal(weft_iter_count(&it), 1);
        vec2 *p = weft_iter_field_mut(&it, 0, sizeof(vec2));
        p[0].y = 11;
    }
    weft_ticks t;
    assert_int_equal(weft_get_ticks(x.w, x.a, x.pos, &t), WEFT_OK);
    assert_int_equal(t.changed, 100u + QUIET_TICKS + 2);
    weft_entity want[] = {x.a};
    assert_int_equal(weft_query_count(x.w, x.qr), 1);
    expect_yields(x.w, x.qr, want, 1);
}

static void change_after_quiet_period_partial_chunk_field_mut(void **state)
{
    qfx x = quiet_setup(*state);
    weft_query_desc d = qdesc();
    add_term(&d, x.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0, 0);
    add_term(&d, x.st, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0, 0);
    weft_query *qw = mkq(x.w, &d); // c's row only of table {Pos,Vel}
    weft_iter it;
    assert_int_equal(weft_query_iter(x.w, qw, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        assert_int_equal(weft_iter_count(&it), 1);
        vec2 *p = weft_iter_field_mut(&it, 0, sizeof(vec2));
        p[0].y = 12;
    }
    weft_ticks t;
    assert_int_equal(weft_get_ticks(x.w, x.c, x.pos, &t), WEFT_OK);
    assert_int_equal(t.changed, 100u + QUIET_TICKS + 2);
    weft_entity want[] = {x.c};
    assert_int_equal(weft_query_count(x.w, x.qr), 1);
    expect_yields(x.w, x.qr, want, 1);
}

static void change_after_quiet_period_row_moves_in(void **state)
{
    qfx x = quiet_setup(*state);
    assert_non_null(weft_get_mut(x.w, x.a, x.pos, sizeof(vec2)));
    // a's fresh Pos moves into {Pos,Vel}, whose Pos column was last
    // written at tick 100
    vec2 v = {0, 0};
    assert_int_equal(weft_insert(x.w, x.a, x.vel, &v, sizeof v), WEFT_OK);
    weft_entity want[] = {x.a};
    assert_int_equal(weft_query_count(x.w, x.qr), 1);
    expect_yields(x.w, x.qr, want, 1);
}

// In a world whose change tick is past 2^31, a row migrating into a table
// created just now carries its recent ticks; a Changed/Added query must see
// them (found by the model test: seeds whose tick starts near the wrap).
static void change_row_moving_into_new_table_at_high_tick(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component pos = tw_comp(w, "Pos", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_component vel = tw_comp(w, "Vel", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_world_set_change_tick(w, 0x90000000u);
    weft_entity e = spawn_pos(w, pos, 1);
    weft_query *qc = q_read(w, pos, WEFT_FILTER_CHANGED);
    weft_query *qa = q_read(w, pos, WEFT_FILTER_ADDED);
    assert_int_equal(collect(w, qc, NULL, 0), 1);
    assert_int_equal(collect(w, qa, NULL, 0), 1);
    weft_entity n = spawn_pos(w, pos, 2);              // added and changed now
    assert_non_null(weft_get_mut(w, e, pos, sizeof(vec2))); // changed now
    vec2 v = {0, 0};
    assert_int_equal(weft_insert(w, e, vel, &v, sizeof v), WEFT_OK); // new table
    assert_int_equal(weft_insert(w, n, vel, &v, sizeof v), WEFT_OK);
    weft_entity want_c[] = {e, n};
    weft_entity want_a[] = {n};
    assert_true(weft_query_matches(w, qc, e));
    assert_int_equal(weft_query_count(w, qc), 2);
    assert_int_equal(weft_query_count(w, qa), 1);
    expect_yields(w, qc, want_c, 2);
    expect_yields(w, qa, want_a, 1);
}

static void change_ticks_after_whole_table_write_and_row_moves(void **state)
{
    cfx c = csetup(*state);
    weft_world *w = c.w;
    weft_query_desc d = qdesc();
    add_term(&d, c.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0, 0);
    weft_query *qw = mkq(w, &d);
    weft_query *qr = q_read(w, c.pos, WEFT_FILTER_CHANGED);
    assert_int_equal(collect(w, qr, NULL, 0), 6);
    weft_world_increment_change_tick(w);
    uint32_t t1 = weft_world_change_tick(w);
    weft_iter it;
    assert_int_equal(weft_query_iter(w, qw, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        assert_non_null(weft_iter_field_mut(&it, 0, sizeof(vec2)));
    }
    weft_ticks t;
    for (int i = 0; i < 6; i++) {
        assert_int_equal(weft_get_ticks(w, c.e[i], c.pos, &t), WEFT_OK);
        assert_int_equal(t.changed, t1);
        assert_true(t.added < t1);
    }
    assert_int_equal(collect(w, qr, NULL, 0), 6);
    // new row after the write: own ticks; old rows keep t1
    weft_world_increment_change_tick(w);
    weft_entity n = spawn_pos(w, c.pos, 9);
    uint32_t t2 = weft_world_change_tick(w);
    assert_int_equal(weft_get_ticks(w, n, c.pos, &t), WEFT_OK);
    assert_int_equal(t.changed, t2);
    assert_int_equal(t.added, t2);
    assert_int_equal(weft_get_ticks(w, c.e[0], c.pos, &t), WEFT_OK);
    assert_int_equal(t.changed, t1);
    weft_entity want_n[] = {n};
    expect_yields(w, qr, want_n, 1);
    // whole-table write again, then move one row away and despawn another
    uint32_t t3 = weft_world_change_tick(w); // this_run of the next iteration
    assert_int_equal(weft_query_iter(w, qw, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        assert_non_null(weft_iter_field_mut(&it, 0, sizeof(vec2)));
    }
    assert_int_equal(weft_despawn(w, c.e[0]), WEFT_OK);
    vec2 v = {1, 1};
    assert_int_equal(weft_insert(w, c.e[1], c.vel, &v, sizeof v), WEFT_OK);
    assert_int_equal(weft_get_ticks(w, c.e[1], c.pos, &t), WEFT_OK);
    assert_int_equal(t.changed, t3);
    for (int i = 2; i < 6; i++) {
        assert_int_equal(weft_get_ticks(w, c.e[i], c.pos, &t), WEFT_OK);
        assert_int_equal(t.changed, t3);
    }
    weft_entity want[] = {c.e[1], c.e[2], c.e[3], c.e[4], c.e[5], n};
    expect_yields(w, qr, want, 6);
    assert_int_equal(collect(w, qr, NULL, 0), 0);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- one field loop for both storages ----

// Runs `hp[r] += 1000 + (int32_t)p[r].x` through weft_iter_field /
// weft_iter_field_mut over every (Pos, Hp) entity and checks each chunk's
// Hp values against weft_iter_get (the per-row path). Returns the chunks.
static int field_loop_add(weft_world *w, weft_query *q)
{
    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    int chunks = 0;
    while (weft_iter_next(&it)) {
        chunks++;
        int32_t n = weft_iter_count(&it);
        const vec2 *p = weft_iter_field(&it, 0, sizeof(vec2));
        const int32_t *before = weft_iter_field(&it, 1, sizeof(int32_t));
        assert_non_null(p);
        assert_non_null(before);
        assert_true(weft_iter_has(&it, 1));
        for (int32_t r = 0; r < n; r++) {
            assert_ptr_equal(weft_iter_get(&it, 1, r, sizeof(int32_t)), before + r);
        }
        int32_t *hp = weft_iter_field_mut(&it, 1, sizeof(int32_t));
        assert_ptr_equal(hp, before);
        for (int32_t r = 0; r < n; r++) {
            hp[r] += 1000 + (int32_t)p[r].x;
        }
    }
    return chunks;
}

// The same loop works with Hp stored in a table or in a sparse set: the
// sparse values come out as a plain array per chunk, chunks are cut where
// they stop being consecutive in the sparse set (here: after removals and
// re-inserts), writes through weft_iter_field_mut are stamped changed, and
// every value is visited once.
static void iter_field_same_loop_table_or_sparse(void **state)
{
    (void)state;
    for (int storage = 0; storage < 2; storage++) {
        weft_storage st = storage ? WEFT_STORAGE_SPARSE : WEFT_STORAGE_TABLE;
        weft_world *w = weft_world_create(NULL);
        assert_non_null(w);
        weft_component pos = tw_comp(w, "Pos", sizeof(vec2), 0, WEFT_STORAGE_TABLE, 0);
        weft_component hp = tw_comp(w, "Hp", sizeof(int32_t), 0, st, 0);
        enum { N = 200 };
        weft_entity e[N];
        for (int i = 0; i < N; i++) {
            e[i] = spawn_pos(w, pos, (float)i);
            int32_t v = i;
            assert_int_equal(weft_insert(w, e[i], hp, &v, sizeof v), WEFT_OK);
        }
        // shuffle the sparse order: every 7th loses Hp and gets it back
        for (int i = 0; i < N; i += 7) {
            assert_int_equal(weft_remove(w, e[i], hp), WEFT_OK);
            int32_t v = i;
            assert_int_equal(weft_insert(w, e[i], hp, &v, sizeof v), WEFT_OK);
        }
        weft_query_desc d = qdesc();
        add_term(&d, pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
        add_term(&d, hp, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0, 0);
        weft_query *q = mkq(w, &d);
        weft_query_desc dc = qdesc();
        add_term(&dc, hp, WEFT_ACCESS_READ, WEFT_OPER_AND, WEFT_FILTER_CHANGED, 0);
        weft_query *changed = mkq(w, &dc);
        assert_int_equal(weft_query_count(w, changed), N); // all new
        weft_iter it;
        assert_int_equal(weft_query_iter(w, changed, &it), WEFT_OK);
        weft_iter_fini(&it); // not completed: last run unchanged
        assert_int_equal(weft_query_iter(w, changed, &it), WEFT_OK);
        while (weft_iter_next(&it)) {
        }
        assert_int_equal(weft_query_count(w, changed), 0);

        int chunks = field_loop_add(w, q);
        if (st == WEFT_STORAGE_TABLE) {
            assert_int_equal(chunks, 1); // one table, one chunk
        } else {
            assert_true(chunks > 1); // cut at the re-inserted values
        }
        for (int i = 0; i < N; i++) {
            const int32_t *v = weft_get(w, e[i], hp, sizeof(int32_t));
            assert_non_null(v);
            assert_int_equal(*v, i + 1000 + i);
        }
        // every written row is Changed for a reader that ran before
        assert_int_equal(weft_query_count(w, changed), N);
        assert_int_equal(weft_world_check(w), WEFT_OK);
        weft_world_destroy(w);
    }
}

// An OPTIONAL sparse field: per chunk it is either an array or NULL
// (weft_iter_has agrees), never mixed.
static void iter_field_optional_sparse_per_chunk(void **state)
{
    (void)state;
    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    weft_component pos = tw_comp(w, "Pos", sizeof(vec2), 0, WEFT_STORAGE_TABLE, 0);
    weft_component hp = tw_comp(w, "Hp", sizeof(int32_t), 0, WEFT_STORAGE_SPARSE, 0);
    enum { N = 60 };
    weft_entity e[N];
    for (int i = 0; i < N; i++) {
        e[i] = spawn_pos(w, pos, (float)i);
        if ((i / 5) % 2 == 0) { // runs of 5 with Hp, 5 without
            int32_t v = 7 * i;
            assert_int_equal(weft_insert(w, e[i], hp, &v, sizeof v), WEFT_OK);
        }
    }
    weft_query_desc d = qdesc();
    add_term(&d, pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0, 0);
    add_term(&d, hp, WEFT_ACCESS_READ, WEFT_OPER_OPTIONAL, 0, 0);
    weft_query *q = mkq(w, &d);
    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    int rows = 0;
    int with = 0;
    while (weft_iter_next(&it)) {
        int32_t n = weft_iter_count(&it);
        const vec2 *p = weft_iter_field(&it, 0, sizeof(vec2));
        const int32_t *h = weft_iter_field(&it, 1, sizeof(int32_t));
        assert_int_equal(weft_iter_has(&it, 1), h != NULL);
        for (int32_t r = 0; r < n; r++) {
            int i = (int)p[r].x;
            bool has = (i / 5) % 2 == 0;
            assert_int_equal(h != NULL, has);
            if (h) {
                assert_int_equal(h[r], 7 * i);
                with++;
            } else {
                assert_null(weft_iter_get(&it, 1, r, sizeof(int32_t)));
            }
        }
        rows += n;
    }
    assert_int_equal(rows, N);
    assert_int_equal(with, N / 2);
    weft_world_destroy(w);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tw_setup, tw_teardown)
    const struct CMUnitTest tests[] = {
        T(query_create_rejects_invalid_args),
        T(query_create_rejects_unknown_and_immutable),
        T(query_create_unknown_component_message_names_id),
        T(query_create_rejects_written_twice_or_written_and_read),
        T(query_create_rejects_component_listed_twice),
        T(query_other_world_is_invalid_handle),
        T(query_destroy_while_iterating_is_wrong_phase),
        T(match_thousands_of_archetypes_vs_naive),
        T(match_shared_table_listed_once_and_sparse_filters_exact),
        T(iter_field_same_loop_table_or_sparse),
        T(iter_field_optional_sparse_per_chunk),
        T(match_incremental_new_archetypes_and_empty_ones),
        T(match_optional_and_or_groups),
        T(match_disabled_entities),
        T(iter_chunks_fields_and_misuse),
        T(iter_per_entity_get_count_single),
        T(defer_structural_calls_while_iterating),
        T(defer_nested_iterations_apply_at_outermost_end),
        T(defer_fini_applies_and_keeps_last_run),
        T(ticks_comparison_vectors),
        T(change_first_run_then_added_vs_changed),
        T(change_marking_rules_through_iteration),
        T(change_query_does_not_see_its_own_writes),
        T(change_sparse_and_or_group_filters),
        T(change_wrap_around),
        T(change_clamp_old_ticks),
        T(change_clamp_runs_only_past_threshold),
        T(change_after_quiet_period_whole_table_field_mut),
        T(change_after_quiet_period_partial_chunk_field_mut),
        T(change_after_quiet_period_row_moves_in),
        T(change_row_moving_into_new_table_at_high_tick),
        T(change_ticks_after_whole_table_write_and_row_moves),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/model/test_model.c - property test: random operation sequences
// applied to a weft world and to a naive reference model, compared after
// every operation.
// SPDX-License-Identifier: MIT
//
// The model keeps, per entity index: generation, state (never used, free,
// live, reserved), a component mask, each component's bytes and its
// added/changed ticks; plus the LIFO free list, the pending reservations and
// the resources. Operations: spawn, spawn_with, spawn_bulk, despawn,
// insert, insert_many, remove, get, get_mut, has, reserve, flush, resource
// insert/remove/get/get_mut, change-tick increments and a few misuse calls
// that must fail and change nothing. After every operation the touched
// entities are compared in full (has, bytes, ticks) along with the world
// counters; every CHECK_EVERY operations and at the end, weft_world_check
// runs and every entity, dead handle and resource is compared.
//
// Required components: several components require others, with
// every kind of default (value blob, ctor callback, neither -> the ctor
// hook of t_v16 or zeroes), a chain (s_u8i -> t_c64 -> t_u64 -> s_v16 ->
// t_u8), a diamond (s_c64 -> t_u8 directly and through s_v16) and a cycle
// (s_b3 <-> t_b3i). The model expands every spawn/insert as weft_spawn_with
// documents: each component required (transitively) by a supplied one,
// absent from the entity and not supplied, is added at the current tick with
// the default of its closest requirer (breadth-first depth from a supplied
// component; a tie goes to the earlier supplied component, then to
// requirement order). Present components are untouched; removing never
// removes what was required.
//
// Seeds: fixed per test; WEFT_TEST_SEED runs that one seed instead
// (WEFT_TEST_OPS sets the length). A failure prints seed and op index;
// WEFT_MODEL_TRACE=1 logs every operation to stderr.
// WEFT_MODEL_REQ_SEQUENTIAL=1 (diagnosis only) models the precedence of the
// first implementation, fixed in de7246c: closures taken one supplied
// component at a time, the first one to reach a component giving its
// default however deep. Against the current library it must fail (a check
// that the model sees the difference).
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

#define NCOMP 12
#define MAXE 4096       // model index space
#define LIVE_HIGH 1200  // above this, despawn is favoured
#define CHECK_EVERY 2500
#define DEAD_RING 64
#define OPS_PER_SEED 60000

typedef struct comp_spec {
    const char *name;
    size_t size;
    size_t align;
    weft_storage storage;
    uint32_t flags;
} comp_spec;

static const comp_spec specs[NCOMP] = {
    {"t_tag", 0, 0, WEFT_STORAGE_TABLE, 0},
    {"s_tag", 0, 0, WEFT_STORAGE_SPARSE, 0},
    {"t_u8", 1, 1, WEFT_STORAGE_TABLE, 0},
    {"s_b3", 3, 1, WEFT_STORAGE_SPARSE, 0},
    {"t_u64", 8, 8, WEFT_STORAGE_TABLE, 0},
    {"s_u64", 8, 8, WEFT_STORAGE_SPARSE, WEFT_COMPONENT_NO_CHANGE_TICKS},
    {"t_v16", 16, 16, WEFT_STORAGE_TABLE, 0},
    {"s_v16", 16, 16, WEFT_STORAGE_SPARSE, 0},
    {"t_c64", 64, 64, WEFT_STORAGE_TABLE, WEFT_COMPONENT_NO_CHANGE_TICKS},
    {"s_c64", 64, 64, WEFT_STORAGE_SPARSE, 0},
    {"t_b3i", 3, 1, WEFT_STORAGE_TABLE, WEFT_COMPONENT_IMMUTABLE},
    {"s_u8i", 1, 1, WEFT_STORAGE_SPARSE, WEFT_COMPONENT_IMMUTABLE},
};

// t_v16 has a ctor hook: default construction fills it with this byte.
#define CTOR_HOOK_BYTE 0xC3
// t_u8's default when required by s_v16: a ctor callback writing this.
#define REQ_CTOR_BYTE 0x5A

static void v16_ctor_hook(void *ptr, int32_t count, void *user)
{
    (void)user;
    memset(ptr, CTOR_HOOK_BYTE, (size_t)count * 16);
}

static void req_byte_ctor(void *dst, void *user)
{
    *(unsigned char *)dst = *(const unsigned char *)user;
}

// Default bytes of component c constructed without a value.
static void default_bytes(int c, unsigned char *dst)
{
    memset(dst, c == 6 ? CTOR_HOOK_BYTE : 0, specs[c].size);
}

// ---- requirements ----

enum { RQ_NONE = 0, RQ_VALUE, RQ_CTOR };

typedef struct mreq {
    int id;           // required component index
    int kind;         // RQ_*
    const unsigned char *value;
} mreq;

static const unsigned char v7a[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const unsigned char v7b[16] = {0xF0, 0xE1, 0xD2, 0xC3, 0xB4, 0xA5, 0x96, 0x87,
                                      0x78, 0x69, 0x5A, 0x4B, 0x3C, 0x2D, 0x1E, 0x0F};
static const unsigned char v2_from_9[1] = {0x11};
static const unsigned char v3_from_10[3] = {9, 8, 7};
static const unsigned char v10_from_3[3] = {1, 2, 3};
static unsigned char v8_from_11[64]; // filled in model_init
static const unsigned char req_ctor_byte = REQ_CTOR_BYTE;

#define MAXREQ 3
// reqs[c][0..nreqs[c]): what component c requires, in requirement order;
// registered through the descriptor when every required id is registered
// earlier, else afterwards through weft_component_require.
static const mreq reqs[NCOMP][MAXREQ] = {
    [1] = {{6, RQ_NONE, NULL}},                              // s_tag -> t_v16 (ctor hook)
    [3] = {{10, RQ_VALUE, v10_from_3}},                      // s_b3 -> t_b3i (cycle)
    [4] = {{7, RQ_VALUE, v7a}, {0, RQ_NONE, NULL}},          // t_u64 -> s_v16, t_tag
    [7] = {{2, RQ_CTOR, NULL}},                              // s_v16 -> t_u8 (ctor)
    [8] = {{4, RQ_NONE, NULL}},                              // t_c64 -> t_u64 (zeroes)
    [9] = {{7, RQ_VALUE, v7b}, {2, RQ_VALUE, v2_from_9}},    // s_c64: diamond on t_u8
    [10] = {{3, RQ_VALUE, v3_from_10}},                      // t_b3i -> s_b3 (cycle)
    [11] = {{8, RQ_VALUE, v8_from_11}},                      // s_u8i -> t_c64 (chain)
};
static const int nreqs[NCOMP] = {[1] = 1, [3] = 1, [4] = 2, [7] = 1, [8] = 1,
                                 [9] = 2, [10] = 1, [11] = 1};

static int req_count(int c)
{
    return nreqs[c];
}

static bool req_sequential; // WEFT_MODEL_REQ_SEQUENTIAL

static void req_default(const mreq *r, unsigned char *dst)
{
    switch (r->kind) {
    case RQ_VALUE:
        memcpy(dst, r->value, specs[r->id].size);
        break;
    case RQ_CTOR:
        memset(dst, 0, specs[r->id].size);
        dst[0] = REQ_CTOR_BYTE;
        break;
    default:
        default_bytes(r->id, dst);
        break;
    }
}

// Breadth-first closure of c: for each reachable id (c itself excluded),
// its depth and the requirement that reached it first.
typedef struct mclosure {
    int order[NCOMP];
    int n;
    int depth[NCOMP];
    const mreq *def[NCOMP];
} mclosure;

static void closure_of(int c, mclosure *cl)
{
    memset(cl, 0, sizeof *cl);
    bool seen[NCOMP] = {false};
    seen[c] = true;
    int from[NCOMP];
    int head = 0;
    from[0] = c;
    int nfrom = 1;
    int fdepth[NCOMP + 1];
    fdepth[0] = 0;
    while (head < nfrom) {
        int x = from[head];
        int d = fdepth[head];
        head++;
        for (int j = 0; j < req_count(x); j++) {
            const mreq *r = &reqs[x][j];
            if (seen[r->id]) {
                continue;
            }
            seen[r->id] = true;
            cl->order[cl->n++] = r->id;
            cl->depth[r->id] = d + 1;
            cl->def[r->id] = r;
            fdepth[nfrom] = d + 1;
            from[nfrom++] = r->id;
        }
    }
}

// The required components a call supplying cs[0..k) adds to an entity
// holding `present`: ids in out[], their defaults in bytes[].
static int expand_required(uint16_t present, const int *cs, int k, int *out,
                           unsigned char bytes[][64])
{
    uint16_t supplied = 0;
    for (int i = 0; i < k; i++) {
        supplied |= (uint16_t)(1u << cs[i]);
    }
    int n = 0;
    const mreq *best[NCOMP] = {NULL};
    int best_depth[NCOMP];
    for (int i = 0; i < k; i++) {
        mclosure cl;
        closure_of(cs[i], &cl);
        for (int q = 0; q < cl.n; q++) {
            int r = cl.order[q];
            if (((present | supplied) >> r) & 1u) {
                continue;
            }
            if (!best[r]) {
                out[n++] = r;
                best[r] = cl.def[r];
                best_depth[r] = cl.depth[r];
            } else if (!req_sequential && cl.depth[r] < best_depth[r]) {
                best[r] = cl.def[r]; // closer requirer; ties keep the earlier one
                best_depth[r] = cl.depth[r];
            }
        }
    }
    for (int q = 0; q < n; q++) {
        req_default(best[out[q]], bytes[q]);
    }
    return n;
}

enum { ST_NEVER = 0, ST_FREE, ST_LIVE, ST_RESERVED };

typedef struct ment {
    uint32_t gen;   // generation of the index's current/next handle
    uint8_t state;
    uint16_t mask;
    uint32_t added[NCOMP];
    uint32_t changed[NCOMP];
    unsigned char data[NCOMP][64];
} ment;

typedef struct model {
    tw_fixture *f;
    weft_world *w;
    weft_component ids[NCOMP];
    tw_rng rng;
    uint64_t seed;
    int64_t op;
    const char *opname;
    uint32_t records;
    uint32_t freelist[MAXE];
    uint32_t nfree;
    uint32_t live[MAXE];
    int32_t live_pos[MAXE];
    uint32_t nlive;
    uint32_t pending[MAXE];
    uint32_t npending;
    weft_entity dead[DEAD_RING];
    uint32_t ndead;
    uint32_t tick;
    bool res_present[NCOMP];
    unsigned char res_data[NCOMP][64];
    uint32_t res_added[NCOMP];
    uint32_t res_changed[NCOMP];
    ment ents[MAXE];
} model;

static model *cur; // for failure messages

#define MFAIL(...)                                                                  \
    do {                                                                            \
        char msg_[512];                                                             \
        snprintf(msg_, sizeof msg_, __VA_ARGS__);                                   \
        fail_msg("model: seed=%llu op=%lld (%s): %s [weft: %s: %s]\n"               \
                 "  reproduce: WEFT_TEST_SEED=%llu WEFT_TEST_OPS=%lld",             \
                 (unsigned long long)cur->seed, (long long)cur->op, cur->opname,    \
                 msg_, weft_status_name(weft_last_status(cur->w)),                  \
                 weft_last_error(cur->w), (unsigned long long)cur->seed,            \
                 (long long)cur->op + 1);                                           \
    } while (0)

#define MCHECK(cond, ...)     \
    do {                      \
        if (!(cond)) {        \
            MFAIL(__VA_ARGS__); \
        }                     \
    } while (0)

static weft_entity mk(uint32_t index, uint32_t gen)
{
    return ((uint64_t)gen << 32) | index;
}

static weft_entity handle_of(const model *m, uint32_t idx)
{
    return mk(idx, m->ents[idx].gen);
}

static bool has_ticks(int c)
{
    return specs[c].size > 0 && !(specs[c].flags & WEFT_COMPONENT_NO_CHANGE_TICKS);
}

// ---- model bookkeeping ----

static void live_add(model *m, uint32_t idx)
{
    m->live_pos[idx] = (int32_t)m->nlive;
    m->live[m->nlive++] = idx;
}

static void live_del(model *m, uint32_t idx)
{
    int32_t p = m->live_pos[idx];
    uint32_t last = m->live[--m->nlive];
    m->live[p] = last;
    m->live_pos[last] = p;
    m->live_pos[idx] = -1;
}

// Validates a handle weft just handed out for a new (or reserved) entity and
// claims its index in the model. `expected` (if not 0) is the exact handle
// LIFO reuse predicts.
static uint32_t accept_new_id(model *m, weft_entity e, weft_entity expected)
{
    MCHECK(e != 0, "new entity handle is 0");
    if (expected != 0) {
        MCHECK(e == expected, "got entity {%u,%u}, LIFO reuse predicts {%u,%u}",
               weft_entity_index(e), weft_entity_generation(e),
               weft_entity_index(expected), weft_entity_generation(expected));
    }
    uint32_t idx = weft_entity_index(e);
    uint32_t gen = weft_entity_generation(e);
    MCHECK(idx < MAXE, "index %u beyond the model's range", idx);
    if (idx < m->records) {
        MCHECK(m->ents[idx].state == ST_FREE,
               "handed out index %u which is not free (state %d)", idx,
               m->ents[idx].state);
        MCHECK(gen == m->ents[idx].gen, "reused index %u with generation %u, expected %u",
               idx, gen, m->ents[idx].gen);
        uint32_t k = m->nfree;
        while (k > 0 && m->freelist[k - 1] != idx) {
            k--;
        }
        MCHECK(k > 0, "index %u not in the free list", idx);
        memmove(&m->freelist[k - 1], &m->freelist[k], (m->nfree - k) * sizeof(uint32_t));
        m->nfree--;
    } else {
        MCHECK(idx == m->records, "fresh index %u, expected %u", idx, m->records);
        MCHECK(gen == 1, "fresh index %u with generation %u, expected 1", idx, gen);
        m->records++;
        m->ents[idx].gen = 1;
    }
    return idx;
}

static weft_entity predict_spawn(const model *m)
{
    if (m->nfree > 0) {
        uint32_t idx = m->freelist[m->nfree - 1];
        return mk(idx, m->ents[idx].gen);
    }
    return mk(m->records, 1);
}

static void make_live(model *m, uint32_t idx)
{
    ment *e = &m->ents[idx];
    e->state = ST_LIVE;
    e->mask = 0;
    live_add(m, idx);
}

static void model_flush(model *m)
{
    for (uint32_t i = 0; i < m->npending; i++) {
        make_live(m, m->pending[i]);
    }
    m->npending = 0;
}

static void model_set(model *m, uint32_t idx, int c, const void *value)
{
    ment *e = &m->ents[idx];
    if (!(e->mask & (1u << c))) {
        e->added[c] = m->tick;
    }
    e->changed[c] = m->tick;
    e->mask |= (uint16_t)(1u << c);
    if (specs[c].size > 0) {
        if (value) {
            memcpy(e->data[c], value, specs[c].size);
        } else {
            default_bytes(c, e->data[c]);
        }
    }
}

// Adds what cs[0..k) requires and idx lacks (before the supplied values are
// set: `present` is the entity's mask before the call).
static void model_require(model *m, uint32_t idx, uint16_t present, const int *cs, int k)
{
    int out[NCOMP];
    unsigned char bytes[NCOMP][64];
    int n = expand_required(present, cs, k, out, bytes);
    for (int q = 0; q < n; q++) {
        model_set(m, idx, out[q], bytes[q]);
    }
}

static void model_despawn(model *m, uint32_t idx)
{
    ment *e = &m->ents[idx];
    m->dead[m->ndead++ % DEAD_RING] = handle_of(m, idx);
    live_del(m, idx);
    e->state = ST_FREE;
    e->gen++;
    e->mask = 0;
    m->freelist[m->nfree++] = idx;
}

// ---- comparison ----

static void verify_entity(model *m, uint32_t idx)
{
    const ment *e = &m->ents[idx];
    weft_entity h = handle_of(m, idx);
    weft_world *w = m->w;
    if (e->state != ST_LIVE) {
        MCHECK(!weft_is_alive(w, h), "index %u (state %d) reported alive", idx, e->state);
        if (e->state == ST_FREE && e->gen > 1) {
            MCHECK(!weft_is_alive(w, mk(idx, e->gen - 1)), "despawned {%u,%u} alive", idx,
                   e->gen - 1);
        }
        return;
    }
    MCHECK(weft_is_alive(w, h), "live entity {%u,%u} not alive", idx, e->gen);
    for (int c = 0; c < NCOMP; c++) {
        bool want = (e->mask >> c) & 1u;
        bool got = weft_has(w, h, m->ids[c]);
        MCHECK(got == want, "entity %u component %s: has=%d, model %d", idx, specs[c].name,
               got, want);
        if (specs[c].size == 0) {
            continue;
        }
        const unsigned char *p = weft_get(w, h, m->ids[c], specs[c].size);
        if (!want) {
            MCHECK(p == NULL, "entity %u component %s: get returned a value for an absent one",
                   idx, specs[c].name);
            continue;
        }
        MCHECK(p != NULL, "entity %u component %s: get returned NULL", idx, specs[c].name);
        MCHECK((uintptr_t)p % specs[c].align == 0, "entity %u component %s misaligned", idx,
               specs[c].name);
        if (memcmp(p, e->data[c], specs[c].size) != 0) {
            MFAIL("entity %u component %s: bytes differ from the model (first %02x vs %02x)",
                  idx, specs[c].name, p[0], e->data[c][0]);
        }
        if (has_ticks(c)) {
            weft_ticks tk;
            weft_status st = weft_get_ticks(w, h, m->ids[c], &tk);
            MCHECK(st == WEFT_OK, "get_ticks: %s", weft_status_name(st));
            MCHECK(tk.added == e->added[c] && tk.changed == e->changed[c],
                   "entity %u component %s: ticks %u/%u, model %u/%u", idx, specs[c].name,
                   tk.added, tk.changed, e->added[c], e->changed[c]);
        }
    }
}

static void verify_counts(model *m)
{
    weft_world_stats s;
    MCHECK(weft_world_get_stats(m->w, &s) == WEFT_OK, "get_stats failed");
    MCHECK(s.live_entities == (int64_t)m->nlive, "live_entities %lld, model %u",
           (long long)s.live_entities, m->nlive);
    MCHECK(s.pending_reserved == (int32_t)m->npending, "pending_reserved %d, model %u",
           s.pending_reserved, m->npending);
    int32_t res = 0;
    for (int c = 0; c < NCOMP; c++) {
        res += m->res_present[c];
    }
    MCHECK(s.resources == res, "resources %d, model %d", s.resources, res);
    MCHECK(s.components == NCOMP, "components %d", s.components);
}

static void verify_resources(model *m)
{
    for (int c = 0; c < NCOMP; c++) {
        bool has = weft_resource_has(m->w, m->ids[c]);
        MCHECK(has == m->res_present[c], "resource %s: has=%d, model %d", specs[c].name, has,
               m->res_present[c]);
        if (!has || specs[c].size == 0) {
            continue;
        }
        const unsigned char *p = weft_resource_get(m->w, m->ids[c], specs[c].size);
        MCHECK(p != NULL, "resource %s: get NULL", specs[c].name);
        MCHECK(memcmp(p, m->res_data[c], specs[c].size) == 0, "resource %s: bytes differ",
               specs[c].name);
        weft_ticks tk;
        MCHECK(weft_resource_get_ticks(m->w, m->ids[c], &tk) == WEFT_OK,
               "resource_get_ticks failed");
        MCHECK(tk.added == m->res_added[c] && tk.changed == m->res_changed[c],
               "resource %s: ticks %u/%u, model %u/%u", specs[c].name, tk.added, tk.changed,
               m->res_added[c], m->res_changed[c]);
    }
}

static void verify_all(model *m)
{
    const char *saved = m->opname;
    m->opname = "full check";
    weft_status st = weft_world_check(m->w);
    MCHECK(st == WEFT_OK, "weft_world_check: %s", weft_status_name(st));
    for (uint32_t i = 0; i < m->records; i++) {
        verify_entity(m, i);
    }
    MCHECK(!weft_is_alive(m->w, mk(m->records, 1)), "never-used index alive");
    uint32_t nd = m->ndead < DEAD_RING ? m->ndead : DEAD_RING;
    for (uint32_t i = 0; i < nd; i++) {
        MCHECK(!weft_is_alive(m->w, m->dead[i]), "dead handle alive again");
        MCHECK(!weft_has(m->w, m->dead[i], m->ids[2]), "dead handle has a component");
    }
    verify_resources(m);
    verify_counts(m);
    // Archetype entity counts add up to the live entities.
    weft_world_stats s;
    weft_world_get_stats(m->w, &s);
    int64_t total = 0;
    for (int32_t a = 0; a < s.archetypes; a++) {
        weft_archetype_info ai;
        MCHECK(weft_archetype_info_get(m->w, a, &ai) == WEFT_OK, "archetype_info %d", a);
        total += ai.entity_count;
    }
    MCHECK(total == (int64_t)m->nlive, "archetype entity counts sum to %lld, model %u",
           (long long)total, m->nlive);
    m->opname = saved;
}

// ---- operation helpers ----

static uint32_t pick_live(model *m)
{
    return m->live[tw_rng_below(&m->rng, m->nlive)];
}

// Picks k distinct components into out (k <= NCOMP).
static void pick_comps(model *m, int *out, int k)
{
    int all[NCOMP];
    for (int i = 0; i < NCOMP; i++) {
        all[i] = i;
    }
    for (int i = 0; i < k; i++) {
        int j = i + (int)tw_rng_below(&m->rng, (uint32_t)(NCOMP - i));
        int t = all[i];
        all[i] = all[j];
        all[j] = t;
        out[i] = all[i];
    }
}

// Random value for component c into buf; returns buf or NULL (default).
static const void *rand_value(model *m, int c, unsigned char *buf)
{
    if (specs[c].size == 0 || tw_rng_chance(&m->rng, 15)) {
        return NULL;
    }
    tw_rng_bytes(&m->rng, buf, specs[c].size);
    return buf;
}

static void expect_ok(model *m, weft_status st, const char *what)
{
    (void)m;
    MCHECK(st == WEFT_OK, "%s returned %s", what, weft_status_name(st));
}

// ---- operations ----

static void op_spawn(model *m)
{
    m->opname = "spawn";
    weft_entity want = predict_spawn(m);
    model_flush(m); // spawning flushes pending reservations first
    weft_entity e = weft_spawn(m->w);
    uint32_t idx = accept_new_id(m, e, want);
    make_live(m, idx);
    verify_entity(m, idx);
}

static void op_spawn_with(model *m)
{
    m->opname = "spawn_with";
    int k = (int)tw_rng_below(&m->rng, 5);
    int cs[NCOMP];
    pick_comps(m, cs, k);
    unsigned char bufs[NCOMP][64];
    weft_value vals[NCOMP];
    for (int i = 0; i < k; i++) {
        vals[i].id = m->ids[cs[i]];
        vals[i].size = specs[cs[i]].size;
        vals[i].ptr = rand_value(m, cs[i], bufs[i]);
    }
    weft_entity want = predict_spawn(m);
    model_flush(m);
    weft_entity e = weft_spawn_with(m->w, vals, k);
    uint32_t idx = accept_new_id(m, e, want);
    make_live(m, idx);
    for (int i = 0; i < k; i++) {
        model_set(m, idx, cs[i], vals[i].ptr);
    }
    model_require(m, idx, 0, cs, k);
    verify_entity(m, idx);
}

static void op_spawn_bulk(model *m)
{
    m->opname = "spawn_bulk";
    int k = (int)tw_rng_below(&m->rng, 4);
    int n = 1 + (int)tw_rng_below(&m->rng, 16);
    int cs[NCOMP];
    pick_comps(m, cs, k);
    static unsigned char cols[NCOMP][16 * 64];
    weft_value vals[NCOMP];
    for (int i = 0; i < k; i++) {
        vals[i].id = m->ids[cs[i]];
        vals[i].size = specs[cs[i]].size;
        vals[i].ptr = NULL;
        if (specs[cs[i]].size > 0 && !tw_rng_chance(&m->rng, 15)) {
            tw_rng_bytes(&m->rng, cols[i], specs[cs[i]].size * (size_t)n);
            vals[i].ptr = cols[i];
        }
    }
    weft_entity out[16];
    model_flush(m);
    expect_ok(m, weft_spawn_bulk(m->w, vals, k, n, out), "spawn_bulk");
    for (int j = 0; j < n; j++) {
        uint32_t idx = accept_new_id(m, out[j], 0);
        make_live(m, idx);
        for (int i = 0; i < k; i++) {
            const unsigned char *v = vals[i].ptr;
            model_set(m, idx, cs[i], v ? v + specs[cs[i]].size * (size_t)j : NULL);
        }
        model_require(m, idx, 0, cs, k);
    }
    for (int j = 0; j < n; j++) {
        verify_entity(m, weft_entity_index(out[j]));
    }
}

static void op_despawn(model *m)
{
    m->opname = "despawn";
    uint32_t idx = pick_live(m);
    weft_entity h = handle_of(m, idx);
    expect_ok(m, weft_despawn(m->w, h), "despawn");
    model_despawn(m, idx);
    verify_entity(m, idx);
    MCHECK(!weft_is_alive(m->w, h), "despawned handle still alive");
    if (m->nlive > 0) {
        verify_entity(m, pick_live(m));
    }
}

static void op_insert(model *m)
{
    m->opname = "insert";
    uint32_t idx = pick_live(m);
    int c = (int)tw_rng_below(&m->rng, NCOMP);
    unsigned char buf[64];
    const void *v = rand_value(m, c, buf);
    uint16_t present = m->ents[idx].mask;
    expect_ok(m, weft_insert(m->w, handle_of(m, idx), m->ids[c], v, specs[c].size), "insert");
    model_set(m, idx, c, v);
    model_require(m, idx, present, &c, 1);
    verify_entity(m, idx);
}

static void op_insert_many(model *m)
{
    m->opname = "insert_many";
    uint32_t idx = pick_live(m);
    int k = 1 + (int)tw_rng_below(&m->rng, 4);
    int cs[NCOMP];
    pick_comps(m, cs, k);
    unsigned char bufs[NCOMP][64];
    weft_value vals[NCOMP];
    for (int i = 0; i < k; i++) {
        vals[i].id = m->ids[cs[i]];
        vals[i].size = specs[cs[i]].size;
        vals[i].ptr = rand_value(m, cs[i], bufs[i]);
    }
    uint16_t present = m->ents[idx].mask;
    expect_ok(m, weft_insert_many(m->w, handle_of(m, idx), vals, k), "insert_many");
    for (int i = 0; i < k; i++) {
        model_set(m, idx, cs[i], vals[i].ptr);
    }
    model_require(m, idx, present, cs, k);
    verify_entity(m, idx);
}

static void op_remove(model *m)
{
    m->opname = "remove";
    uint32_t idx = pick_live(m);
    ment *e = &m->ents[idx];
    int c = (int)tw_rng_below(&m->rng, NCOMP);
    if (e->mask && tw_rng_chance(&m->rng, 75)) {
        while (!((e->mask >> c) & 1u)) {
            c = (c + 1) % NCOMP;
        }
    }
    expect_ok(m, weft_remove(m->w, handle_of(m, idx), m->ids[c]), "remove");
    e->mask &= (uint16_t)~(1u << c);
    verify_entity(m, idx);
}

static void op_get_mut(model *m)
{
    m->opname = "get_mut";
    uint32_t idx = pick_live(m);
    ment *e = &m->ents[idx];
    int c = 2 + (int)tw_rng_below(&m->rng, NCOMP - 2); // never a tag
    weft_entity h = handle_of(m, idx);
    weft_clear_error(m->w);
    unsigned char *p = weft_get_mut(m->w, h, m->ids[c], specs[c].size);
    if (!((e->mask >> c) & 1u)) {
        MCHECK(p == NULL, "get_mut of an absent component returned a value");
        MCHECK(weft_last_status(m->w) == WEFT_OK, "get_mut of an absent component errored");
    } else if (specs[c].flags & WEFT_COMPONENT_IMMUTABLE) {
        MCHECK(p == NULL, "get_mut of an immutable component returned a value");
        MCHECK(weft_last_status(m->w) == WEFT_ERR_IMMUTABLE, "expected IMMUTABLE");
    } else {
        MCHECK(p != NULL, "get_mut returned NULL");
        tw_rng_bytes(&m->rng, e->data[c], specs[c].size);
        memcpy(p, e->data[c], specs[c].size);
        e->changed[c] = m->tick;
    }
    verify_entity(m, idx);
}

static void op_read(model *m)
{
    m->opname = "get/has";
    // The canonical hash is O(world); sample it.
    bool hash_it = (m->op & 15) == 0;
    uint64_t h0 = hash_it ? weft_world_hash(m->w) : 0;
    verify_entity(m, pick_live(m));
    // Dead handles: never alive, never have anything.
    if (m->ndead > 0) {
        weft_entity d = m->dead[tw_rng_below(&m->rng, m->ndead < DEAD_RING ? m->ndead : DEAD_RING)];
        MCHECK(!weft_is_alive(m->w, d), "dead handle alive");
        for (int c = 0; c < NCOMP; c++) {
            MCHECK(!weft_has(m->w, d, m->ids[c]), "dead handle has %s", specs[c].name);
        }
    }
    MCHECK(!hash_it || weft_world_hash(m->w) == h0, "reads changed the world hash");
}

static void op_reserve(model *m)
{
    m->opname = "reserve";
    int k = 1 + (int)tw_rng_below(&m->rng, 4);
    for (int i = 0; i < k; i++) {
        weft_entity r = weft_entity_reserve(m->w);
        uint32_t idx = accept_new_id(m, r, 0);
        m->ents[idx].state = ST_RESERVED;
        m->ents[idx].mask = 0;
        m->pending[m->npending++] = idx;
        MCHECK(!weft_is_alive(m->w, r), "reserved id alive before flush");
    }
}

static void op_flush(model *m)
{
    m->opname = "flush";
    uint32_t first = m->npending ? m->pending[0] : 0;
    bool any = m->npending > 0;
    expect_ok(m, weft_entity_flush(m->w), "flush");
    model_flush(m);
    if (any) {
        verify_entity(m, first);
    }
}

static void op_tick(model *m)
{
    m->opname = "increment_change_tick";
    uint32_t t = weft_world_increment_change_tick(m->w);
    m->tick++;
    MCHECK(t == m->tick, "change tick %u, model %u", t, m->tick);
    MCHECK(weft_world_change_tick(m->w) == m->tick, "change tick mismatch");
}

static void op_resource(model *m)
{
    m->opname = "resource";
    int c = 2 + (int)tw_rng_below(&m->rng, NCOMP - 2);
    weft_component r = m->ids[c];
    size_t size = specs[c].size;
    switch (tw_rng_below(&m->rng, 4)) {
    case 0: {
        unsigned char buf[64];
        const void *v = rand_value(m, c, buf);
        expect_ok(m, weft_resource_insert(m->w, r, v, size), "resource_insert");
        if (!m->res_present[c]) {
            m->res_added[c] = m->tick;
        }
        m->res_changed[c] = m->tick;
        m->res_present[c] = true;
        if (v) {
            memcpy(m->res_data[c], v, size);
        } else {
            default_bytes(c, m->res_data[c]);
        }
        break;
    }
    case 1:
        expect_ok(m, weft_resource_remove(m->w, r), "resource_remove");
        m->res_present[c] = false;
        break;
    case 2: {
        weft_clear_error(m->w);
        unsigned char *p = weft_resource_get_mut(m->w, r, size);
        if (!m->res_present[c]) {
            MCHECK(p == NULL, "resource_get_mut of an absent resource");
        } else if (specs[c].flags & WEFT_COMPONENT_IMMUTABLE) {
            MCHECK(p == NULL && weft_last_status(m->w) == WEFT_ERR_IMMUTABLE,
                   "resource_get_mut of an immutable resource");
        } else {
            MCHECK(p != NULL, "resource_get_mut NULL");
            tw_rng_bytes(&m->rng, m->res_data[c], size);
            memcpy(p, m->res_data[c], size);
            m->res_changed[c] = m->tick;
        }
        break;
    }
    default:
        break; // read only
    }
    verify_resources(m);
}

// Misuse that must fail with the documented status and change nothing.
static void op_misuse(model *m)
{
    m->opname = "misuse";
    uint64_t h0 = weft_world_hash(m->w);
    weft_world_stats s0;
    weft_world_get_stats(m->w, &s0);
    uint32_t idx = pick_live(m);
    weft_entity h = handle_of(m, idx);
    unsigned char buf[128] = {0};
    weft_status want = WEFT_OK;
    weft_status got = WEFT_OK;
    switch (tw_rng_below(&m->rng, 4)) {
    case 0: { // wrong size
        int c = (int)tw_rng_below(&m->rng, NCOMP);
        want = WEFT_ERR_SIZE_MISMATCH;
        got = weft_insert(m->w, h, m->ids[c], buf, specs[c].size + 1);
        break;
    }
    case 1: { // stale handle
        if (m->ndead == 0) {
            return;
        }
        weft_entity d = m->dead[tw_rng_below(&m->rng, m->ndead < DEAD_RING ? m->ndead : DEAD_RING)];
        want = WEFT_ERR_STALE_ENTITY;
        got = weft_insert(m->w, d, m->ids[4], buf, 8);
        break;
    }
    case 2: { // duplicate component in one spawn
        weft_value vals[3] = {{m->ids[4], 8, buf}, {m->ids[7], 16, NULL}, {m->ids[4], 8, buf}};
        want = WEFT_ERR_DUPLICATE_COMPONENT;
        got = weft_spawn_with(m->w, vals, 3) == 0 ? weft_last_status(m->w) : WEFT_OK;
        break;
    }
    default: { // duplicate in insert_many
        weft_value vals[2] = {{m->ids[1], 0, NULL}, {m->ids[1], 0, NULL}};
        want = WEFT_ERR_DUPLICATE_COMPONENT;
        got = weft_insert_many(m->w, h, vals, 2);
        break;
    }
    }
    MCHECK(got == want, "misuse returned %s, expected %s", weft_status_name(got),
           weft_status_name(want));
    MCHECK(weft_last_status(m->w) == want, "error slot holds %s",
           weft_status_name(weft_last_status(m->w)));
    MCHECK(weft_world_hash(m->w) == h0, "failed call changed the world hash");
    weft_world_stats s1;
    weft_world_get_stats(m->w, &s1);
    MCHECK(s1.live_entities == s0.live_entities && s1.entity_records == s0.entity_records &&
               s1.pending_reserved == s0.pending_reserved,
           "failed call changed the counters");
    weft_clear_error(m->w);
    verify_entity(m, idx);
}

// ---- driver ----

static void model_init(model *m, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    cur = m;
    m->seed = seed;
    m->opname = "init";
    tw_rng_seed(&m->rng, seed);
    m->f = tw_fixture_new();
    assert_non_null(m->f);
    assert_non_null(m->f->w);
    m->w = m->f->w;
    for (int i = 0; i < 64; i++) {
        v8_from_11[i] = (unsigned char)(0x80 + i * 3);
    }
    const char *sq = getenv("WEFT_MODEL_REQ_SEQUENTIAL");
    req_sequential = sq != NULL && *sq != '\0' && *sq != '0';
    // Register in order; requirements on earlier ids go in the descriptor,
    // the others (cycles, forward references) through weft_component_require.
    bool late[NCOMP] = {false};
    for (int c = 0; c < NCOMP; c++) {
        weft_component_desc d;
        memset(&d, 0, sizeof d);
        d.name = specs[c].name;
        d.size = specs[c].size;
        d.align = specs[c].align;
        d.storage = specs[c].storage;
        d.flags = specs[c].flags;
        if (c == 6) {
            d.hooks.ctor = v16_ctor_hook;
        }
        weft_require rq[MAXREQ];
        int n = req_count(c);
        for (int j = 0; j < n; j++) {
            const mreq *r = &reqs[c][j];
            late[c] |= r->id >= c;
            memset(&rq[j], 0, sizeof rq[j]);
            rq[j].id = m->ids[r->id];
            if (r->kind == RQ_VALUE) {
                rq[j].value = r->value;
                rq[j].size = specs[r->id].size;
            } else if (r->kind == RQ_CTOR) {
                rq[j].ctor = req_byte_ctor;
                rq[j].user = (void *)(uintptr_t)&req_ctor_byte;
            }
        }
        if (!late[c]) {
            d.required = rq;
            d.required_count = n;
        }
        m->ids[c] = weft_component_register(m->w, &d);
        if (m->ids[c] == 0) {
            fail_msg("registering %s: %s", specs[c].name, weft_last_error(m->w));
        }
    }
    for (int c = 0; c < NCOMP; c++) {
        if (!late[c]) {
            continue;
        }
        weft_require rq[MAXREQ];
        int n = req_count(c);
        for (int j = 0; j < n; j++) {
            const mreq *r = &reqs[c][j];
            memset(&rq[j], 0, sizeof rq[j]);
            rq[j].id = m->ids[r->id];
            if (r->kind == RQ_VALUE) {
                rq[j].value = r->value;
                rq[j].size = specs[r->id].size;
            } else if (r->kind == RQ_CTOR) {
                rq[j].ctor = req_byte_ctor;
                rq[j].user = (void *)(uintptr_t)&req_ctor_byte;
            }
        }
        weft_status st = weft_component_require(m->w, m->ids[c], rq, n);
        if (st != WEFT_OK) {
            fail_msg("requirements of %s: %s", specs[c].name, weft_last_error(m->w));
        }
    }
    for (int i = 0; i < MAXE; i++) {
        m->live_pos[i] = -1;
    }
    m->tick = weft_world_change_tick(m->w);
    assert_int_equal(m->tick, 1);
}

static void model_run(uint64_t seed, int64_t ops)
{
    model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    model_init(m, seed);
    const char *tr = getenv("WEFT_MODEL_TRACE");
    bool trace = tr != NULL && *tr != '\0' && *tr != '0';
    for (m->op = 0; m->op < ops; m->op++) {
        uint32_t r = tw_rng_below(&m->rng, 1000);
        bool crowded = m->nlive + m->npending > LIVE_HIGH || m->records > MAXE - 64;
        if (m->nlive == 0 || (!crowded && r < 60)) {
            if (r % 2 == 0) {
                op_spawn(m);
            } else {
                op_spawn_with(m);
            }
        } else if (r < 150) {
            if (crowded) {
                op_despawn(m);
            } else {
                op_spawn_with(m);
            }
        } else if (r < 170) {
            if (crowded) {
                op_despawn(m);
            } else {
                op_spawn_bulk(m);
            }
        } else if (r < 300) {
            op_despawn(m);
        } else if (r < 480) {
            op_insert(m);
        } else if (r < 560) {
            op_insert_many(m);
        } else if (r < 690) {
            op_remove(m);
        } else if (r < 780) {
            op_read(m);
        } else if (r < 850) {
            op_get_mut(m);
        } else if (r < 875) {
            if (crowded) {
                op_despawn(m);
            } else {
                op_reserve(m);
            }
        } else if (r < 895) {
            op_flush(m);
        } else if (r < 935) {
            op_resource(m);
        } else if (r < 955) {
            op_tick(m);
        } else {
            op_misuse(m);
        }
        if (trace) {
            fprintf(stderr, "op %lld %s live=%u pending=%u free=%u\n", (long long)m->op,
                    m->opname, m->nlive, m->npending, m->nfree);
        }
        verify_counts(m);
        if ((m->op + 1) % CHECK_EVERY == 0) {
            verify_all(m);
        }
    }
    m->opname = "final";
    verify_all(m);
    // Flush what is pending and compare once more, then tear down: destroy
    // must return every byte (checked by tw_fixture_free).
    op_flush(m);
    verify_all(m);
    tw_fixture_free(m->f);
    cur = NULL;
    free(m);
}

static int64_t ops_from_env(void)
{
    const char *s = getenv("WEFT_TEST_OPS");
    if (s && *s) {
        long long v = strtoll(s, NULL, 10);
        if (v > 0) {
            return v;
        }
    }
    return OPS_PER_SEED;
}

static void model_random_ops_seed_1(void **state)
{
    (void)state;
    model_run(1, ops_from_env());
}

static void model_random_ops_seed_2(void **state)
{
    (void)state;
    model_run(0x5EED0002ull, ops_from_env());
}

static void model_random_ops_seed_3(void **state)
{
    (void)state;
    model_run(0xC0FFEE1234ull, ops_from_env());
}

static void model_random_ops_seed_4(void **state)
{
    (void)state;
    model_run(20240917ull, ops_from_env());
}

static uint64_t env_seed;

static void model_random_ops_env_seed(void **state)
{
    (void)state;
    model_run(env_seed, ops_from_env());
}

int main(void)
{
    bool overridden = false;
    env_seed = tw_seed_from_env(0, &overridden);
    if (overridden) {
        fprintf(stderr, "model: WEFT_TEST_SEED=%llu, %lld ops\n",
                (unsigned long long)env_seed, (long long)ops_from_env());
        const struct CMUnitTest one[] = {
            cmocka_unit_test(model_random_ops_env_seed),
        };
        return cmocka_run_group_tests(one, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(model_random_ops_seed_1),
        cmocka_unit_test(model_random_ops_seed_2),
        cmocka_unit_test(model_random_ops_seed_3),
        cmocka_unit_test(model_random_ops_seed_4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/model/test_model_query.c - random worlds and random queries checked
// against a naive filter over a reference model.
//
// The reference model keeps, per entity, the set of components, their bytes
// and the added/changed tick of each component, recorded by the test itself
// at every write (the world's change tick is mirrored: +1 per iteration
// start and per weft_world_increment_change_tick). Queries have random
// AND/OPTIONAL/WITH/WITHOUT/OR terms over 10 table and sparse components
// (tags included) plus Disabled, random Added/Changed filters and flags.
// Each query check iterates the query (sometimes writing through
// field_mut / nomark / get_mut / set_if_neq, sometimes queueing structural
// calls that apply when the iteration ends, sometimes stopping early) and
// compares every yielded row and every field with the model; count,
// is_empty and matches are compared too. Periodically every entity's
// components, bytes and ticks are compared and weft_world_check runs.
//
// Fixed seeds per CI run, in two groups: change tick starting at 1, and
// starting just before the u32 wrap. WEFT_TEST_SEED=<n> runs that one seed
// in each group (printed on every run so a failure can be replayed).
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

#define NREG 10          // regular components
#define SDIS NREG        // slot of Disabled
#define NSLOT (NREG + 1)
#define VMAX 16
#define MAX_SLOTS 8192   // model entities ever created per world
#define MAX_ALIVE 140
#define NQ 8
#define MAX_PENDING 64

typedef struct mspec {
    const char *name;
    uint32_t size;
    weft_storage storage;
} mspec;

static const mspec SPECS[NREG] = {
    {"A", 8, WEFT_STORAGE_TABLE},   {"B", 4, WEFT_STORAGE_TABLE},
    {"C", 16, WEFT_STORAGE_TABLE},  {"T1", 0, WEFT_STORAGE_TABLE},
    {"T2", 0, WEFT_STORAGE_TABLE},  {"S1", 4, WEFT_STORAGE_SPARSE},
    {"S2", 8, WEFT_STORAGE_SPARSE}, {"ST", 0, WEFT_STORAGE_SPARSE},
    {"D", 12, WEFT_STORAGE_TABLE},  {"E", 16, WEFT_STORAGE_SPARSE},
};

typedef struct ment {
    weft_entity h;
    bool alive;
    uint32_t mask;
    uint8_t val[NSLOT][VMAX];
    uint32_t added[NSLOT];
    uint32_t changed[NSLOT];
} ment;

typedef struct mterm {
    int slot;
    weft_oper oper;
    weft_access access; // resolved
    uint32_t filter;
    int group;
} mterm;

typedef struct mquery {
    weft_query *q;
    int n;
    mterm t[6];
    uint32_t flags;
    bool allow_dis;
    uint32_t last_run;
} mquery;

typedef enum pkind { P_SPAWN, P_INSERT, P_REMOVE, P_DESPAWN } pkind;

typedef struct pending {
    pkind kind;
    weft_entity h;
    int nval;
    int slots[NSLOT];
    uint8_t vals[NSLOT][VMAX];
    bool has_val[NSLOT];
} pending;

typedef struct model {
    tw_fixture *f;
    weft_world *w;
    tw_rng rng;
    uint64_t seed;
    weft_component ids[NSLOT];
    uint32_t size[NSLOT];
    bool sparse[NSLOT];
    ment *ents;
    int nents;
    int *idx2slot; // entity index -> model slot, -1
    int alive;
    uint32_t tick; // mirror of the world's change tick
    mquery qs[NQ];
    pending pend[MAX_PENDING];
    int npend;
    int64_t checks;
    int64_t iterations;
    int64_t deferred;
    int64_t marks;
} model;

static uint32_t rnd(model *m, uint32_t n)
{
    return tw_rng_below(&m->rng, n);
}

static bool chance(model *m, uint32_t pct)
{
    return tw_rng_chance(&m->rng, pct);
}

// The wrapping tick comparison (weft_tick_is_newer), written out
// independently of the library.
static bool model_newer(uint32_t t, uint32_t last_run, uint32_t this_run)
{
    uint32_t a = this_run - t, b = this_run - last_run;
    if (a > WEFT_MAX_CHANGE_AGE) {
        a = WEFT_MAX_CHANGE_AGE;
    }
    if (b > WEFT_MAX_CHANGE_AGE) {
        b = WEFT_MAX_CHANGE_AGE;
    }
    return b > a;
}

static void sync_tick(model *m)
{
    uint32_t wt = weft_world_change_tick(m->w);
    if (wt != m->tick) {
        fail_msg("seed %llu: world change tick %u, model %u", (unsigned long long)m->seed, wt,
                 m->tick);
    }
}

static int slot_of(model *m, weft_entity e)
{
    uint32_t idx = weft_entity_index(e);
    if (idx >= MAX_SLOTS || m->idx2slot[idx] < 0) {
        return -1;
    }
    int s = m->idx2slot[idx];
    return m->ents[s].h == e && m->ents[s].alive ? s : -1;
}

static int random_alive(model *m)
{
    if (m->alive == 0) {
        return -1;
    }
    for (int tries = 0; tries < 64; tries++) {
        int s = (int)rnd(m, (uint32_t)m->nents);
        if (m->ents[s].alive) {
            return s;
        }
    }
    for (int s = 0; s < m->nents; s++) {
        if (m->ents[s].alive) {
            return s;
        }
    }
    return -1;
}

// ---- model-side writes ----

static void model_put(model *m, ment *e, int c, const uint8_t *val)
{
    bool had = (e->mask >> c) & 1u;
    if (m->size[c]) {
        if (val) {
            memcpy(e->val[c], val, m->size[c]);
        } else {
            memset(e->val[c], 0, m->size[c]);
        }
    }
    if (!had) {
        e->added[c] = m->tick;
    }
    e->changed[c] = m->tick;
    e->mask |= 1u << c;
}

static int model_new_entity(model *m, weft_entity h)
{
    assert_true(m->nents < MAX_SLOTS);
    uint32_t idx = weft_entity_index(h);
    assert_true(idx < MAX_SLOTS);
    int s = m->nents++;
    ment *e = &m->ents[s];
    memset(e, 0, sizeof *e);
    e->h = h;
    e->alive = true;
    m->idx2slot[idx] = s;
    m->alive++;
    return s;
}

// ---- verification ----

static void verify_entity(model *m, int s)
{
    ment *e = &m->ents[s];
    if (!e->alive) {
        assert_false(weft_is_alive(m->w, e->h));
        return;
    }
    assert_true(weft_is_alive(m->w, e->h));
    for (int c = 0; c < NSLOT; c++) {
        bool has = (e->mask >> c) & 1u;
        if (weft_has(m->w, e->h, m->ids[c]) != has) {
            fail_msg("seed %llu: entity %d component %d: has %d, model %d",
                     (unsigned long long)m->seed, s, c, !has, has);
        }
        if (!has) {
            continue;
        }
        if (m->size[c]) {
            const void *p = weft_get(m->w, e->h, m->ids[c], m->size[c]);
            assert_non_null(p);
            if (memcmp(p, e->val[c], m->size[c]) != 0) {
                fail_msg("seed %llu: entity %d component %d: bytes differ",
                         (unsigned long long)m->seed, s, c);
            }
        }
        weft_ticks t;
        assert_int_equal(weft_get_ticks(m->w, e->h, m->ids[c], &t), WEFT_OK);
        if (t.added != e->added[c] || t.changed != e->changed[c]) {
            fail_msg("seed %llu: entity %d component %d: ticks %u/%u, model %u/%u",
                     (unsigned long long)m->seed, s, c, t.added, t.changed, e->added[c],
                     e->changed[c]);
        }
        m->checks++;
    }
}

static void verify_all(model *m)
{
    sync_tick(m);
    for (int s = 0; s < m->nents; s++) {
        verify_entity(m, s);
    }
    weft_status st = weft_world_check(m->w);
    if (st != WEFT_OK) {
        fail_msg("seed %llu: weft_world_check: %s", (unsigned long long)m->seed,
                 weft_last_error(m->w));
    }
    weft_world_stats stats;
    assert_int_equal(weft_world_get_stats(m->w, &stats), WEFT_OK);
    assert_int_equal(stats.live_entities, m->alive);
}

// ---- queries ----

static bool naive_match(const model *m, const mquery *mq, const ment *e, uint32_t this_run)
{
    if (!e->alive) {
        return false;
    }
    if (((e->mask >> SDIS) & 1u) && !mq->allow_dis) {
        return false;
    }
    uint32_t all = 0, present = 0, filtered = 0, passed = 0;
    for (int i = 0; i < mq->n; i++) {
        const mterm *t = &mq->t[i];
        bool has = (e->mask >> t->slot) & 1u;
        bool pass = true;
        if (has && (t->filter & WEFT_FILTER_ADDED) &&
            !model_newer(e->added[t->slot], mq->last_run, this_run)) {
            pass = false;
        }
        if (has && (t->filter & WEFT_FILTER_CHANGED) &&
            !model_newer(e->changed[t->slot], mq->last_run, this_run)) {
            pass = false;
        }
        switch (t->oper) {
        case WEFT_OPER_AND:
        case WEFT_OPER_WITH:
            if (!has || !pass) {
                return false;
            }
            break;
        case WEFT_OPER_WITHOUT:
            if (has) {
                return false;
            }
            break;
        case WEFT_OPER_OR:
            all |= 1u << t->group;
            if (has) {
                present |= 1u << t->group;
            }
            if (t->filter) {
                filtered |= 1u << t->group;
            }
            if (has && pass) {
                passed |= 1u << t->group;
            }
            break;
        default:
            break;
        }
    }
    (void)m;
    return present == all && (filtered & ~passed) == 0;
}

static void query_make(model *m, mquery *mq)
{
    memset(mq, 0, sizeof *mq);
    weft_query_desc d;
    memset(&d, 0, sizeof d);
    mq->n = 1 + (int)rnd(m, 5);
    bool used[NSLOT] = {false};
    for (int i = 0; i < mq->n; i++) {
        int s;
        do {
            s = chance(m, 5) ? SDIS : (int)rnd(m, NREG);
        } while (used[s]);
        used[s] = true;
        mterm *t = &mq->t[i];
        t->slot = s;
        uint32_t r = rnd(m, 100);
        t->oper = r < 32   ? WEFT_OPER_AND
                  : r < 47 ? WEFT_OPER_OPTIONAL
                  : r < 65 ? WEFT_OPER_WITH
                  : r < 80 ? WEFT_OPER_WITHOUT
                           : WEFT_OPER_OR;
        bool field_oper = t->oper == WEFT_OPER_AND || t->oper == WEFT_OPER_OPTIONAL ||
                          t->oper == WEFT_OPER_OR;
        weft_access given;
        if (field_oper && m->size[s]) {
            t->access = chance(m, 50) ? WEFT_ACCESS_WRITE : WEFT_ACCESS_READ;
            given = (t->access == WEFT_ACCESS_READ && chance(m, 30)) ? WEFT_ACCESS_DEFAULT
                                                                     : t->access;
        } else {
            t->access = WEFT_ACCESS_NONE;
            given = chance(m, 50) ? WEFT_ACCESS_DEFAULT : WEFT_ACCESS_NONE;
        }
        if ((t->oper == WEFT_OPER_AND || t->oper == WEFT_OPER_WITH ||
             t->oper == WEFT_OPER_OR) &&
            chance(m, 35)) {
            t->filter = 1 + rnd(m, 3);
        }
        t->group = t->oper == WEFT_OPER_OR ? (int)rnd(m, 2) : 0;
        weft_term *dt = &d.terms[i];
        dt->id = m->ids[s];
        dt->access = given;
        dt->oper = (t->oper == WEFT_OPER_AND && chance(m, 30)) ? WEFT_OPER_DEFAULT : t->oper;
        dt->filter = t->filter;
        dt->or_group = t->group * 1000 - 7;
        if (s == SDIS) {
            mq->allow_dis = true;
        }
    }
    // groups: renumber to dense bits in order of first appearance
    int map[2] = {-1, -1}, ng = 0;
    for (int i = 0; i < mq->n; i++) {
        if (mq->t[i].oper == WEFT_OPER_OR) {
            int g = mq->t[i].group;
            if (map[g] < 0) {
                map[g] = ng++;
            }
            mq->t[i].group = map[g];
        }
    }
    d.term_count = mq->n;
    if (chance(m, 15)) {
        mq->flags |= WEFT_QUERY_MATCH_DISABLED;
        mq->allow_dis = true;
    }
    if (chance(m, 20)) {
        mq->flags |= WEFT_QUERY_UNCACHED;
    }
    d.flags = mq->flags;
    mq->q = weft_query_create(m->w, &d);
    if (!mq->q) {
        fail_msg("seed %llu: weft_query_create: %s", (unsigned long long)m->seed,
                 weft_last_error(m->w));
    }
    mq->last_run = m->tick - WEFT_MAX_CHANGE_AGE;
    assert_int_equal(weft_query_last_run(m->w, mq->q), mq->last_run);
}

static void random_value(model *m, int c, uint8_t *buf)
{
    tw_rng_bytes(&m->rng, buf, m->size[c]);
    if (chance(m, 10)) {
        buf[0] = 0; // some repeated values, for set_if_neq
    }
}

// Queues a structural call while iterating and records it for the model.
static void queue_deferred(model *m)
{
    if (m->npend >= MAX_PENDING) {
        return;
    }
    pending *p = &m->pend[m->npend];
    memset(p, 0, sizeof *p);
    uint32_t r = rnd(m, 100);
    int s = random_alive(m);
    uint8_t scratch[VMAX];
    if (r < 25 || s < 0) {
        if (m->alive + m->npend >= MAX_ALIVE) {
            return;
        }
        p->kind = P_SPAWN;
        weft_value vals[NSLOT];
        uint8_t bufs[NSLOT][VMAX];
        for (int c = 0; c < NREG; c++) {
            if (!chance(m, 30)) {
                continue;
            }
            vals[p->nval].id = m->ids[c];
            vals[p->nval].size = m->size[c];
            vals[p->nval].ptr = NULL;
            p->slots[p->nval] = c;
            if (m->size[c] && chance(m, 80)) {
                random_value(m, c, bufs[p->nval]);
                memcpy(p->vals[p->nval], bufs[p->nval], m->size[c]);
                vals[p->nval].ptr = bufs[p->nval];
                p->has_val[p->nval] = true;
            }
            p->nval++;
        }
        p->h = weft_spawn_with(m->w, vals, p->nval);
        assert_true(p->h != 0);
        assert_false(weft_is_alive(m->w, p->h));
        memset(bufs, 0xA5, sizeof bufs); // copied at call time
    } else if (r < 65) {
        int c = (int)rnd(m, NSLOT);
        p->kind = P_INSERT;
        p->h = m->ents[s].h;
        p->nval = 1;
        p->slots[0] = c;
        const void *ptr = NULL;
        if (m->size[c] && chance(m, 80)) {
            random_value(m, c, scratch);
            memcpy(p->vals[0], scratch, m->size[c]);
            p->has_val[0] = true;
            ptr = scratch;
        }
        assert_int_equal(weft_insert(m->w, p->h, m->ids[c], ptr, m->size[c]), WEFT_OK);
        memset(scratch, 0x5A, sizeof scratch);
    } else if (r < 90) {
        int c = (int)rnd(m, NSLOT);
        p->kind = P_REMOVE;
        p->h = m->ents[s].h;
        p->slots[0] = c;
        assert_int_equal(weft_remove(m->w, p->h, m->ids[c]), WEFT_OK);
    } else {
        p->kind = P_DESPAWN;
        p->h = m->ents[s].h;
        assert_int_equal(weft_despawn(m->w, p->h), WEFT_OK);
    }
    m->npend++;
    m->deferred++;
}

// Applies the queued calls to the model, as the world did at the end of
// the outermost iteration (at the current tick).
static void apply_pending(model *m)
{
    for (int i = 0; i < m->npend; i++) {
        pending *p = &m->pend[i];
        if (p->kind == P_SPAWN) {
            int s = model_new_entity(m, p->h);
            for (int k = 0; k < p->nval; k++) {
                model_put(m, &m->ents[s], p->slots[k], p->has_val[k] ? p->vals[k] : NULL);
            }
            continue;
        }
        int s = slot_of(m, p->h);
        if (s < 0) {
            continue; // despawned earlier in the queue: fails at apply time
        }
        ment *e = &m->ents[s];
        if (p->kind == P_INSERT) {
            model_put(m, e, p->slots[0], p->has_val[0] ? p->vals[0] : NULL);
        } else if (p->kind == P_REMOVE) {
            e->mask &= ~(1u << p->slots[0]);
        } else {
            e->alive = false;
            m->alive--;
        }
    }
    m->npend = 0;
}

static void dump_query(const model *m, const mquery *mq)
{
    print_message("query flags %#x last_run %u tick %u:\n", mq->flags, mq->last_run, m->tick);
    for (int i = 0; i < mq->n; i++) {
        const mterm *t = &mq->t[i];
        print_message("  term %d: slot %d oper %d access %d filter %u group %d\n", i,
                      t->slot, (int)t->oper, (int)t->access, t->filter, t->group);
    }
}

static void dump_entity(const model *m, int s)
{
    const ment *e = &m->ents[s];
    print_message("entity %d (index %u) mask %#x:\n", s, weft_entity_index(e->h), e->mask);
    for (int c = 0; c < NSLOT; c++) {
        if ((e->mask >> c) & 1u) {
            weft_ticks t = {0, 0};
            weft_get_ticks(m->w, e->h, m->ids[c], &t);
            print_message("  comp %d: model %u/%u world %u/%u\n", c, e->added[c],
                          e->changed[c], t.added, t.changed);
        }
    }
}

static void check_count_and_matches(model *m, mquery *mq)
{
    int64_t want = 0;
    for (int s = 0; s < m->nents; s++) {
        want += naive_match(m, mq, &m->ents[s], m->tick);
    }
    int64_t got = weft_query_count(m->w, mq->q);
    if (got != want) {
        dump_query(m, mq);
        for (int s = 0; s < m->nents; s++) {
            bool nm = naive_match(m, mq, &m->ents[s], m->tick);
            if (m->ents[s].alive && weft_query_matches(m->w, mq->q, m->ents[s].h) != nm) {
                dump_entity(m, s);
            }
        }
        fail_msg("seed %llu: weft_query_count %lld, naive %lld", (unsigned long long)m->seed,
                 (long long)got, (long long)want);
    }
    assert_int_equal(weft_query_is_empty(m->w, mq->q), want == 0);
    for (int k = 0; k < 24 && m->alive; k++) {
        int s = random_alive(m);
        bool nm = naive_match(m, mq, &m->ents[s], m->tick);
        if (weft_query_matches(m->w, mq->q, m->ents[s].h) != nm) {
            fail_msg("seed %llu: weft_query_matches(entity %d) = %d, naive %d",
                     (unsigned long long)m->seed, s, !nm, nm);
        }
        // a field through the query
        for (int i = 0; i < mq->n; i++) {
            const mterm *t = &mq->t[i];
            if (t->access == WEFT_ACCESS_NONE) {
                continue;
            }
            const void *p = weft_query_get(m->w, mq->q, m->ents[s].h, i, m->size[t->slot]);
            bool has = nm && ((m->ents[s].mask >> t->slot) & 1u);
            assert_int_equal(p != NULL, has);
            if (p) {
                assert_memory_equal(p, m->ents[s].val[t->slot], m->size[t->slot]);
            }
        }
        m->checks++;
    }
    assert_int_equal(weft_query_last_run(m->w, mq->q), mq->last_run);
    m->checks += m->nents;
}

static void check_iteration(model *m, mquery *mq)
{
    uint32_t this_run = m->tick;
    static uint8_t want[MAX_SLOTS], seen[MAX_SLOTS];
    int64_t nwant = 0;
    for (int s = 0; s < m->nents; s++) {
        want[s] = naive_match(m, mq, &m->ents[s], this_run);
        seen[s] = 0;
        nwant += want[s];
    }
    weft_iter it;
    assert_int_equal(weft_query_iter(m->w, mq->q, &it), WEFT_OK);
    m->tick++;
    bool early = chance(m, 8);
    bool stopped = false;
    int chunks = 0;
    while (weft_iter_next(&it)) {
        chunks++;
        int32_t n = weft_iter_count(&it);
        assert_true(n > 0);
        const weft_entity *es = weft_iter_entities(&it);
        for (int32_t r = 0; r < n; r++) {
            int s = slot_of(m, es[r]);
            if (s < 0) {
                fail_msg("seed %llu: iteration yielded an unknown entity",
                         (unsigned long long)m->seed);
            }
            if (!want[s] || seen[s]) {
                fail_msg("seed %llu: entity %d yielded (want %d, seen %d) by a query with %d "
                         "terms",
                         (unsigned long long)m->seed, s, want[s], seen[s], mq->n);
            }
            seen[s] = 1;
        }
        for (int i = 0; i < mq->n; i++) {
            const mterm *t = &mq->t[i];
            int c = t->slot;
            uint32_t sz = m->size[c];
            if (t->access == WEFT_ACCESS_NONE) {
                continue;
            }
            if (!m->sparse[c]) {
                const uint8_t *col = weft_iter_field(&it, i, sz);
                bool has0 = (m->ents[slot_of(m, es[0])].mask >> c) & 1u;
                assert_int_equal(weft_iter_has(&it, i), has0);
                assert_int_equal(col != NULL, has0);
                for (int32_t r = 0; r < n; r++) {
                    ment *e = &m->ents[slot_of(m, es[r])];
                    assert_int_equal((e->mask >> c) & 1u, has0);
                    if (col && memcmp(col + (size_t)r * sz, e->val[c], sz) != 0) {
                        fail_msg("seed %llu: field %d row %d bytes differ",
                                 (unsigned long long)m->seed, i, r);
                    }
                }
                if (!col || t->access != WEFT_ACCESS_WRITE) {
                    continue;
                }
                uint32_t how = rnd(m, 100);
                if (how < 25) { // marked write of the whole chunk
                    uint8_t *w = weft_iter_field_mut(&it, i, sz);
                    assert_non_null(w);
                    for (int32_t r = 0; r < n; r++) {
                        ment *e = &m->ents[slot_of(m, es[r])];
                        random_value(m, c, e->val[c]);
                        memcpy(w + (size_t)r * sz, e->val[c], sz);
                        e->changed[c] = this_run;
                    }
                    m->marks++;
                } else if (how < 35) { // unmarked write, then a mark of one row
                    uint8_t *w = weft_iter_field_mut_nomark(&it, i, sz);
                    assert_non_null(w);
                    for (int32_t r = 0; r < n; r++) {
                        ment *e = &m->ents[slot_of(m, es[r])];
                        random_value(m, c, e->val[c]);
                        memcpy(w + (size_t)r * sz, e->val[c], sz);
                    }
                    if (chance(m, 50)) {
                        int32_t r = (int32_t)rnd(m, (uint32_t)n);
                        assert_int_equal(weft_iter_mark(&it, i, r), WEFT_OK);
                        m->ents[slot_of(m, es[r])].changed[c] = this_run;
                    }
                } else if (how < 45) { // set_if_neq on one row
                    int32_t r = (int32_t)rnd(m, (uint32_t)n);
                    ment *e = &m->ents[slot_of(m, es[r])];
                    uint8_t v[VMAX];
                    if (chance(m, 50)) {
                        memcpy(v, e->val[c], sz);
                    } else {
                        random_value(m, c, v);
                    }
                    bool differs = memcmp(v, e->val[c], sz) != 0;
                    bool ch = !differs;
                    assert_int_equal(weft_iter_set_if_neq(&it, i, r, v, sz, &ch), WEFT_OK);
                    assert_int_equal(ch, differs);
                    if (differs) {
                        memcpy(e->val[c], v, sz);
                        e->changed[c] = this_run;
                    }
                }
            } else {
                for (int32_t r = 0; r < n; r++) {
                    ment *e = &m->ents[slot_of(m, es[r])];
                    bool has = (e->mask >> c) & 1u;
                    const uint8_t *p = weft_iter_get(&it, i, r, sz);
                    assert_int_equal(p != NULL, has);
                    if (p && memcmp(p, e->val[c], sz) != 0) {
                        fail_msg("seed %llu: sparse field %d row %d bytes differ",
                                 (unsigned long long)m->seed, i, r);
                    }
                    if (p && t->access == WEFT_ACCESS_WRITE && chance(m, 20)) {
                        uint8_t *w = weft_iter_get_mut(&it, i, r, sz);
                        assert_ptr_equal(w, p);
                        random_value(m, c, e->val[c]);
                        memcpy(w, e->val[c], sz);
                        e->changed[c] = this_run;
                        m->marks++;
                    }
                }
            }
        }
        if (chance(m, 15)) {
            queue_deferred(m);
        }
        if (early && chance(m, 50)) {
            weft_iter_fini(&it);
            stopped = true;
            break;
        }
    }
    (void)chunks;
    for (int s = 0; s < m->nents; s++) {
        if (!stopped && want[s] != seen[s]) {
            dump_query(m, mq);
            dump_entity(m, s);
            fail_msg("seed %llu: entity %d: naive %d, yielded %d (query: %d terms, flags "
                     "%#x, last_run %u, this_run %u)",
                     (unsigned long long)m->seed, s, want[s], seen[s], mq->n, mq->flags,
                     mq->last_run, this_run);
        }
    }
    m->checks += m->nents;
    if (!stopped) {
        mq->last_run = this_run;
    }
    assert_int_equal(weft_query_last_run(m->w, mq->q), mq->last_run);
    apply_pending(m);
    m->iterations++;
    (void)nwant;
}

// ---- world operations ----

static void op_spawn(model *m)
{
    if (m->alive >= MAX_ALIVE) {
        return;
    }
    weft_value vals[NSLOT];
    uint8_t bufs[NSLOT][VMAX];
    int slots[NSLOT];
    bool hv[NSLOT];
    int n = 0;
    for (int c = 0; c < NSLOT; c++) {
        if (!chance(m, c == SDIS ? 10 : 30)) {
            continue;
        }
        vals[n].id = m->ids[c];
        vals[n].size = m->size[c];
        vals[n].ptr = NULL;
        hv[n] = false;
        if (m->size[c] && chance(m, 85)) {
            random_value(m, c, bufs[n]);
            vals[n].ptr = bufs[n];
            hv[n] = true;
        }
        slots[n++] = c;
    }
    // shuffle the order: the world sorts
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rnd(m, (uint32_t)i + 1);
        weft_value tv = vals[i];
        vals[i] = vals[j];
        vals[j] = tv;
        int ts = slots[i];
        slots[i] = slots[j];
        slots[j] = ts;
        bool th = hv[i];
        hv[i] = hv[j];
        hv[j] = th;
    }
    weft_entity h = weft_spawn_with(m->w, vals, n);
    assert_true(h != 0);
    int s = model_new_entity(m, h);
    for (int i = 0; i < n; i++) {
        model_put(m, &m->ents[s], slots[i], hv[i] ? (const uint8_t *)vals[i].ptr : NULL);
    }
}

static void op_insert(model *m)
{
    int s = random_alive(m);
    if (s < 0) {
        return;
    }
    int c = (int)rnd(m, NSLOT);
    uint8_t buf[VMAX];
    const uint8_t *ptr = NULL;
    if (m->size[c] && chance(m, 85)) {
        random_value(m, c, buf);
        ptr = buf;
    }
    assert_int_equal(weft_insert(m->w, m->ents[s].h, m->ids[c], ptr, m->size[c]), WEFT_OK);
    model_put(m, &m->ents[s], c, ptr);
}

static void op_remove(model *m)
{
    int s = random_alive(m);
    if (s < 0) {
        return;
    }
    int c = (int)rnd(m, NSLOT);
    if (chance(m, 70)) { // prefer a component it has
        for (int k = 0; k < NSLOT; k++) {
            int cc = (c + k) % NSLOT;
            if ((m->ents[s].mask >> cc) & 1u) {
                c = cc;
                break;
            }
        }
    }
    assert_int_equal(weft_remove(m->w, m->ents[s].h, m->ids[c]), WEFT_OK);
    m->ents[s].mask &= ~(1u << c);
}

static void op_despawn(model *m)
{
    int s = random_alive(m);
    if (s < 0) {
        return;
    }
    assert_int_equal(weft_despawn(m->w, m->ents[s].h), WEFT_OK);
    m->ents[s].alive = false;
    m->alive--;
}

static void op_get_mut(model *m)
{
    int s = random_alive(m);
    if (s < 0) {
        return;
    }
    ment *e = &m->ents[s];
    for (int k = 0, c = (int)rnd(m, NREG); k < NREG; k++, c = (c + 1) % NREG) {
        if (m->size[c] && ((e->mask >> c) & 1u)) {
            uint8_t *p = weft_get_mut(m->w, e->h, m->ids[c], m->size[c]);
            assert_non_null(p);
            if (chance(m, 80)) {
                random_value(m, c, e->val[c]);
                memcpy(p, e->val[c], m->size[c]);
            }
            e->changed[c] = m->tick;
            return;
        }
    }
}

static void run_world(uint64_t seed, int steps, bool wrap, int64_t *checks)
{
    model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->ents = calloc(MAX_SLOTS, sizeof *m->ents);
    m->idx2slot = malloc(MAX_SLOTS * sizeof *m->idx2slot);
    assert_non_null(m->ents);
    assert_non_null(m->idx2slot);
    for (int i = 0; i < MAX_SLOTS; i++) {
        m->idx2slot[i] = -1;
    }
    m->seed = seed;
    tw_rng_seed(&m->rng, seed);
    m->f = tw_fixture_new();
    assert_non_null(m->f);
    assert_non_null(m->f->w);
    m->w = m->f->w;
    for (int c = 0; c < NREG; c++) {
        m->ids[c] = tw_comp(m->w, SPECS[c].name, SPECS[c].size, 0, SPECS[c].storage, 0);
        m->size[c] = SPECS[c].size;
        m->sparse[c] = SPECS[c].storage == WEFT_STORAGE_SPARSE;
    }
    m->ids[SDIS] = weft_disabled(m->w);
    assert_true(m->ids[SDIS] != 0);
    m->size[SDIS] = 0;
    m->sparse[SDIS] = false;
    // some worlds run across the u32 wrap of the change tick
    m->tick = 1;
    if (wrap) {
        m->tick = 0xFFFFFFFFu - 300u - rnd(m, 400);
        weft_world_set_change_tick(m->w, m->tick);
        // start the clamp period here: the model does not model the clamp,
        // and the run stays far below WEFT_CHECK_TICK_THRESHOLD ticks
        weft_world_clamp_ticks(m->w, true);
    }
    sync_tick(m);
    for (int i = 0; i < NQ; i++) {
        query_make(m, &m->qs[i]);
    }
    for (int i = 0; i < 30; i++) {
        op_spawn(m);
    }
    for (int step = 0; step < steps; step++) {
        uint32_t r = rnd(m, 100);
        if (r < 14) {
            op_spawn(m);
        } else if (r < 32) {
            op_insert(m);
        } else if (r < 43) {
            op_remove(m);
        } else if (r < 48) {
            op_despawn(m);
        } else if (r < 57) {
            op_get_mut(m);
        } else if (r < 62) {
            uint32_t t = weft_world_increment_change_tick(m->w);
            m->tick++;
            assert_int_equal(t, m->tick);
        } else if (r < 84) {
            check_iteration(m, &m->qs[rnd(m, NQ)]);
        } else if (r < 96) {
            check_count_and_matches(m, &m->qs[rnd(m, NQ)]);
        } else {
            mquery *mq = &m->qs[rnd(m, NQ)];
            assert_int_equal(weft_query_destroy(m->w, mq->q), WEFT_OK);
            query_make(m, mq);
        }
        if (step % 97 == 0) {
            verify_all(m);
        }
    }
    verify_all(m);
    for (int i = 0; i < NQ; i++) {
        check_iteration(m, &m->qs[i]);
        assert_int_equal(weft_query_destroy(m->w, m->qs[i].q), WEFT_OK);
    }
    verify_all(m);
    print_message("seed %llu: %d steps, %lld iterations, %lld deferred calls, %lld marked "
                  "writes, %lld checks, %d entities alive, final tick %u\n",
                  (unsigned long long)seed, steps, (long long)m->iterations,
                  (long long)m->deferred, (long long)m->marks, (long long)m->checks, m->alive,
                  m->tick);
    *checks += m->checks;
    tw_fixture_free(m->f);
    free(m->idx2slot);
    free(m->ents);
    free(m);
}

static void run_seeds(const uint64_t *seeds, size_t n, bool wrap)
{
    bool overridden = false;
    uint64_t one = tw_seed_from_env(0, &overridden);
    int64_t checks = 0;
    if (overridden) {
        print_message("WEFT_TEST_SEED=%llu\n", (unsigned long long)one);
        run_world(one, 3000, wrap, &checks);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        print_message("seed %llu (replay: WEFT_TEST_SEED=%llu)\n",
                      (unsigned long long)seeds[i], (unsigned long long)seeds[i]);
        run_world(seeds[i], 1500, wrap, &checks);
    }
    print_message("total checks: %lld\n", (long long)checks);
    assert_true(checks >= 20000);
}

// Change tick starting at 1.
static void model_query_random_worlds(void **state)
{
    (void)state;
    static const uint64_t seeds[] = {1, 2, 4, 5, 7, 8, 10, 11, 0x5eed, 0xC0FFEE, 424242, 99999};
    run_seeds(seeds, sizeof seeds / sizeof seeds[0], false);
}

// Change tick starting a few hundred ticks before the u32 wrap.
static void model_query_random_worlds_across_tick_wrap(void **state)
{
    (void)state;
    static const uint64_t seeds[] = {3, 6, 9, 12, 77, 1234};
    run_seeds(seeds, sizeof seeds / sizeof seeds[0], true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(model_query_random_worlds),
        cmocka_unit_test(model_query_random_worlds_across_tick_wrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

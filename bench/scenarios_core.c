/* bench/scenarios_core.c - core-world scenarios: spawn, moves, despawn, get, memory.
 * SPDX-License-Identifier: MIT
 *
 * Each scenario times one operation over all N entities, through weft and
 * through the baseline store, and reports ns per entity. Setup (registering
 * components, spawning the population an operation works on) and
 * verification are outside the timed region. The first repetition of every
 * scenario is verified: results are compared with the input data, counts
 * with weft_world_get_stats, and the world with weft_world_check, so a fast
 * but wrong library cannot pass.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "bench_world.h"
#include "weft.h"

static double bench_per_entity(uint64_t t0, uint64_t t1, int32_t n)
{
    return (double)(t1 - t0) / (double)n;
}

/* ---- the pair driver: warm-up, alternate weft and baseline, median ---- */

/* One timed repetition; returns ns per entity. `verify` is set on the first. */
typedef double (*bench_rep_fn)(const bench_cfg *cfg, const bench_data *d, bool verify);

static void bench_pair(const char *scenario, const bench_cfg *cfg, const bench_data *d,
                       bench_rep_fn weft_rep, bench_rep_fn base_rep, double target)
{
    double *wv = bench_xmalloc(sizeof(double) * (size_t)cfg->reps);
    double *bv = bench_xmalloc(sizeof(double) * (size_t)cfg->reps);
    for (int32_t r = -cfg->warmup; r < cfg->reps; r++) {
        bool first = r == -cfg->warmup;
        double a = weft_rep(cfg, d, first);
        double b = base_rep(cfg, d, first);
        bench_trace(cfg, scenario, "weft", r, a);
        bench_trace(cfg, scenario, "baseline", r, b);
        if (r >= 0) {
            wv[r] = a;
            bv[r] = b;
        }
    }
    bench_report(scenario, "ns", bench_median(wv, cfg->reps),
                 bench_median(bv, cfg->reps), target);
    free(wv);
    free(bv);
}

/* ---- spawn one by one ---- */

static double spawn_weft(const bench_cfg *cfg, const bench_data *d, bool verify)
{
    bench_world b;
    bench_world_init(&b, "spawn", 0, WEFT_STORAGE_DEFAULT, NULL);
    weft_value v[2] = {
        {b.pos, sizeof(bench_position), NULL},
        {b.vel, sizeof(bench_velocity), NULL},
    };
    int32_t n = cfg->n;
    uint64_t t0 = bench_now_ns();
    for (int32_t i = 0; i < n; i++) {
        v[0].ptr = &d->pos[i];
        v[1].ptr = &d->vel[i];
        if (weft_spawn_with(b.w, v, 2) == WEFT_ENTITY_NONE) {
            bench_world_expect(&b, "weft_spawn_with", weft_last_status(b.w));
        }
    }
    uint64_t t1 = bench_now_ns();
    if (verify) {
        bench_world_verify(&b, n);
    }
    bench_world_fini(&b);
    return bench_per_entity(t0, t1, n);
}

static double spawn_base(const bench_cfg *cfg, const bench_data *d, bool verify)
{
    (void)verify;
    bl_store *s = bl_create(true);
    int32_t n = cfg->n;
    uint64_t t0 = bench_now_ns();
    for (int32_t i = 0; i < n; i++) {
        bl_spawn(s, &d->pos[i], &d->vel[i]);
    }
    uint64_t t1 = bench_now_ns();
    bl_destroy(s);
    return bench_per_entity(t0, t1, n);
}

void bench_spawn(const bench_cfg *cfg, const bench_data *data)
{
    bench_pair("spawn one by one (Pos+Vel)", cfg, data, spawn_weft, spawn_base, 20.0);
}

/* ---- bulk spawn ---- */

static double bulk_weft(const bench_cfg *cfg, const bench_data *d, bool verify)
{
    bench_world b;
    bench_world_init(&b, "bulk", 0, WEFT_STORAGE_DEFAULT, NULL);
    int32_t n = cfg->n;
    weft_entity *ents = bench_xmalloc(sizeof *ents * (size_t)n);
    memset(ents, 0, sizeof *ents * (size_t)n);
    uint64_t t0 = bench_now_ns();
    bench_world_spawn_bulk(&b, d, n, ents);
    uint64_t t1 = bench_now_ns();
    if (verify) {
        bench_world_verify(&b, n);
        for (int32_t i = 0; i < n; i += 997) {
            const bench_position *p =
                weft_get(b.w, ents[i], b.pos, sizeof(bench_position));
            if (p == NULL || memcmp(p, &d->pos[i], sizeof *p) != 0) {
                bench_fail("bulk", "weft_get after weft_spawn_bulk", "wrong value");
            }
        }
    }
    free(ents);
    bench_world_fini(&b);
    return bench_per_entity(t0, t1, n);
}

static double bulk_base(const bench_cfg *cfg, const bench_data *d, bool verify)
{
    (void)verify;
    bl_store *s = bl_create(true);
    int32_t n = cfg->n;
    uint64_t *ents = bench_xmalloc(sizeof *ents * (size_t)n);
    memset(ents, 0, sizeof *ents * (size_t)n);
    uint64_t t0 = bench_now_ns();
    bl_spawn_bulk(s, n, d->pos, d->vel, ents);
    uint64_t t1 = bench_now_ns();
    free(ents);
    bl_destroy(s);
    return bench_per_entity(t0, t1, n);
}

void bench_spawn_bulk(const bench_cfg *cfg, const bench_data *data)
{
    bench_pair("spawn bulk (Pos+Vel)", cfg, data, bulk_weft, bulk_base, 2.0);
}

/* ---- insert then remove Health on all entities ---- */

static double add_remove_weft(const bench_cfg *cfg, const bench_data *d, bool verify,
                              weft_storage storage, const char *scenario)
{
    bench_world b;
    bench_world_init(&b, scenario, 0, storage, NULL);
    int32_t n = cfg->n;
    weft_entity *ents = bench_xmalloc(sizeof *ents * (size_t)n);
    bench_world_spawn_bulk(&b, d, n, ents);
    uint64_t t0 = bench_now_ns();
    for (int32_t i = 0; i < n; i++) {
        bench_health h = {i};
        weft_status st = weft_insert(b.w, ents[i], b.hp, &h, sizeof h);
        if (st != WEFT_OK) {
            bench_world_expect(&b, "weft_insert", st);
        }
    }
    uint64_t t1 = bench_now_ns();
    if (verify) {
        for (int32_t i = 0; i < n; i += 997) {
            const bench_health *h = weft_get(b.w, ents[i], b.hp, sizeof(bench_health));
            const bench_position *p =
                weft_get(b.w, ents[i], b.pos, sizeof(bench_position));
            if (h == NULL || h->hp != i || p == NULL ||
                memcmp(p, &d->pos[i], sizeof *p) != 0) {
                bench_fail(scenario, "weft_get after weft_insert", "wrong value");
            }
        }
        bench_world_verify(&b, n);
    }
    uint64_t t2 = bench_now_ns();
    for (int32_t i = 0; i < n; i++) {
        weft_status st = weft_remove(b.w, ents[i], b.hp);
        if (st != WEFT_OK) {
            bench_world_expect(&b, "weft_remove", st);
        }
    }
    uint64_t t3 = bench_now_ns();
    if (verify) {
        for (int32_t i = 0; i < n; i += 997) {
            if (weft_has(b.w, ents[i], b.hp)) {
                bench_fail(scenario, "weft_has after weft_remove", "still present");
            }
        }
        bench_world_verify(&b, n);
    }
    free(ents);
    bench_world_fini(&b);
    return (double)((t1 - t0) + (t3 - t2)) / (double)n;
}

static double add_remove_base(const bench_cfg *cfg, const bench_data *d, bool sparse)
{
    bl_store *s = bl_create(true);
    int32_t n = cfg->n;
    uint64_t *ents = bench_xmalloc(sizeof *ents * (size_t)n);
    bl_spawn_bulk(s, n, d->pos, d->vel, ents);
    uint64_t t0 = bench_now_ns();
    for (int32_t i = 0; i < n; i++) {
        bench_health h = {i};
        if (sparse) {
            bl_insert_health_sparse(s, ents[i], &h);
        } else {
            bl_insert_health(s, ents[i], &h);
        }
    }
    for (int32_t i = 0; i < n; i++) {
        if (sparse) {
            bl_remove_health_sparse(s, ents[i]);
        } else {
            bl_remove_health(s, ents[i]);
        }
    }
    uint64_t t1 = bench_now_ns();
    free(ents);
    bl_destroy(s);
    return bench_per_entity(t0, t1, n);
}

static double table_weft(const bench_cfg *cfg, const bench_data *d, bool verify)
{
    return add_remove_weft(cfg, d, verify, WEFT_STORAGE_TABLE, "table add+remove");
}

static double table_base(const bench_cfg *cfg, const bench_data *d, bool verify)
{
    (void)verify;
    return add_remove_base(cfg, d, false);
}

static double sparse_weft(const bench_cfg *cfg, const bench_data *d, bool verify)
{
    return add_remove_weft(cfg, d, verify, WEFT_STORAGE_SPARSE, "sparse add+remove");
}

static double sparse_base(const bench_cfg *cfg, const bench_data *d, bool verify)
{
    (void)verify;
    return add_remove_base(cfg, d, true);
}

void bench_add_remove_table(const bench_cfg *cfg, const bench_data *data)
{
    bench_pair("add+remove Health, table (2 moves)", cfg, data, table_weft,
               table_base, 12.0);
}

void bench_add_remove_sparse(const bench_cfg *cfg, const bench_data *data)
{
    bench_pair("add+remove Health, sparse", cfg, data, sparse_weft, sparse_base, 8.0);
}

/* ---- despawn all ---- */

static double despawn_weft(const bench_cfg *cfg, const bench_data *d, bool verify)
{
    bench_world b;
    bench_world_init(&b, "despawn", 0, WEFT_STORAGE_DEFAULT, NULL);
    int32_t n = cfg->n;
    weft_entity *ents = bench_xmalloc(sizeof *ents * (size_t)n);
    bench_world_spawn_bulk(&b, d, n, ents);
    uint64_t t0 = bench_now_ns();
    for (int32_t i = 0; i < n; i++) {
        weft_status st = weft_despawn(b.w, ents[i]);
        if (st != WEFT_OK) {
            bench_world_expect(&b, "weft_despawn", st);
        }
    }
    uint64_t t1 = bench_now_ns();
    if (verify) {
        bench_world_verify(&b, 0);
        if (weft_is_alive(b.w, ents[0]) || weft_is_alive(b.w, ents[n - 1])) {
            bench_fail("despawn", "weft_is_alive after weft_despawn", "still alive");
        }
    }
    free(ents);
    bench_world_fini(&b);
    return bench_per_entity(t0, t1, n);
}

static double despawn_base(const bench_cfg *cfg, const bench_data *d, bool verify)
{
    (void)verify;
    bl_store *s = bl_create(true);
    int32_t n = cfg->n;
    uint64_t *ents = bench_xmalloc(sizeof *ents * (size_t)n);
    bl_spawn_bulk(s, n, d->pos, d->vel, ents);
    uint64_t t0 = bench_now_ns();
    for (int32_t i = 0; i < n; i++) {
        bl_despawn(s, ents[i]);
    }
    uint64_t t1 = bench_now_ns();
    if (bl_live(s) != 0) {
        bench_fail("despawn", "baseline despawn", "entities left");
    }
    free(ents);
    bl_destroy(s);
    return bench_per_entity(t0, t1, n);
}

void bench_despawn(const bench_cfg *cfg, const bench_data *data)
{
    bench_pair("despawn all", cfg, data, despawn_weft, despawn_base, 8.0);
}

/* ---- get by handle, shuffled ---- */

/* The population is built once; each repetition is one pass over the
 * shuffled handles. Sums are of small integers held in doubles, so weft,
 * baseline and the input data must agree exactly. */
void bench_get(const bench_cfg *cfg, const bench_data *d)
{
    int32_t n = cfg->n;
    bench_world b;
    bench_world_init(&b, "get", 0, WEFT_STORAGE_DEFAULT, NULL);
    weft_entity *ents = bench_xmalloc(sizeof *ents * (size_t)n);
    bench_world_spawn_bulk(&b, d, n, ents);
    bl_store *s = bl_create(true);
    uint64_t *bents = bench_xmalloc(sizeof *bents * (size_t)n);
    bl_spawn_bulk(s, n, d->pos, d->vel, bents);

    weft_entity *wsh = bench_xmalloc(sizeof *wsh * (size_t)n);
    uint64_t *bsh = bench_xmalloc(sizeof *bsh * (size_t)n);
    double expect1 = 0.0;
    double expect2 = 0.0;
    for (int32_t i = 0; i < n; i++) {
        wsh[i] = ents[d->perm[i]];
        bsh[i] = bents[d->perm[i]];
        expect1 += (double)d->pos[i].x;
        expect2 += (double)d->pos[i].x + (double)d->vel[i].y;
    }

    int32_t reps = cfg->reps;
    double *w1 = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *b1 = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *w2 = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *b2 = bench_xmalloc(sizeof(double) * (size_t)reps);
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        double sum[4] = {0.0, 0.0, 0.0, 0.0};
        uint64_t t[9];
        t[0] = bench_now_ns();
        for (int32_t i = 0; i < n; i++) {
            const bench_position *p = weft_get(b.w, wsh[i], b.pos, sizeof *p);
            if (p == NULL) {
                bench_world_expect(&b, "weft_get", weft_last_status(b.w));
                bench_fail("get", "weft_get", "NULL without an error");
            }
            sum[0] += (double)p->x;
        }
        t[1] = bench_now_ns();
        for (int32_t i = 0; i < n; i++) {
            const bench_position *p = bl_get_pos(s, bsh[i]);
            sum[1] += (double)p->x;
        }
        t[2] = bench_now_ns();
        for (int32_t i = 0; i < n; i++) {
            const bench_position *p = weft_get(b.w, wsh[i], b.pos, sizeof *p);
            const bench_velocity *v = weft_get(b.w, wsh[i], b.vel, sizeof *v);
            if (p == NULL || v == NULL) {
                bench_world_expect(&b, "weft_get", weft_last_status(b.w));
                bench_fail("get", "weft_get", "NULL without an error");
            }
            sum[2] += (double)p->x + (double)v->y;
        }
        t[3] = bench_now_ns();
        for (int32_t i = 0; i < n; i++) {
            const bench_position *p = bl_get_pos(s, bsh[i]);
            const bench_velocity *v = bl_get_vel(s, bsh[i]);
            sum[3] += (double)p->x + (double)v->y;
        }
        t[4] = bench_now_ns();
        if (sum[0] != expect1 || sum[1] != expect1 || sum[2] != expect2 ||
            sum[3] != expect2) {
            bench_fail("get", "sum check", "a get returned a wrong value");
        }
        double v1w = bench_per_entity(t[0], t[1], n);
        double v1b = bench_per_entity(t[1], t[2], n);
        double v2w = bench_per_entity(t[2], t[3], n);
        double v2b = bench_per_entity(t[3], t[4], n);
        bench_trace(cfg, "get 1", "weft", r, v1w);
        bench_trace(cfg, "get 1", "baseline", r, v1b);
        bench_trace(cfg, "get 2", "weft", r, v2w);
        bench_trace(cfg, "get 2", "baseline", r, v2b);
        if (r >= 0) {
            w1[r] = v1w;
            b1[r] = v1b;
            w2[r] = v2w;
            b2[r] = v2b;
        }
    }
    bench_report("get 1 component, shuffled", "ns", bench_median(w1, reps),
                 bench_median(b1, reps), 4.0);
    bench_report("get 2 components, shuffled", "ns", bench_median(w2, reps),
                 bench_median(b2, reps), 10.0);
    bench_world_verify(&b, n);
    free(w1);
    free(b1);
    free(w2);
    free(b2);
    free(wsh);
    free(bsh);
    free(bents);
    free(ents);
    bl_destroy(s);
    bench_world_fini(&b);
}

/* ---- memory ---- */

/* A counting allocator hook, to cross-check the world's live_bytes: a
 * mismatch, or a byte still allocated after destroy, fails the bench. */
typedef struct bench_counter {
    int64_t bytes;
} bench_counter;

static void *bench_counting_alloc(size_t size, size_t align, void *user)
{
    void *p = NULL;
    size_t a = align < sizeof(void *) ? sizeof(void *) : align;
    if (posix_memalign(&p, a, size == 0 ? 1 : size) != 0) {
        return NULL;
    }
    ((bench_counter *)user)->bytes += (int64_t)size;
    return p;
}

static void bench_counting_free(void *ptr, size_t size, size_t align, void *user)
{
    (void)align;
    if (ptr == NULL) {
        return;
    }
    ((bench_counter *)user)->bytes -= (int64_t)size;
    free(ptr);
}

static void memory_case(const bench_cfg *cfg, const bench_data *d, bool ticks,
                        bool bulk, const char *label, double target)
{
    int32_t n = cfg->n;
    bench_counter counter = {0};
    weft_allocator alloc = {bench_counting_alloc, bench_counting_free, &counter};
    bench_world b;
    uint32_t flags = ticks ? 0u : (uint32_t)WEFT_COMPONENT_NO_CHANGE_TICKS;
    bench_world_init(&b, label, flags, WEFT_STORAGE_DEFAULT, &alloc);
    weft_world_stats before;
    weft_world_stats after;
    bench_world_expect(&b, "weft_world_get_stats", weft_world_get_stats(b.w, &before));
    int64_t hook_before = counter.bytes;
    if (bulk) {
        bench_world_spawn_bulk(&b, d, n, NULL);
    } else {
        weft_value v[2] = {
            {b.pos, sizeof(bench_position), NULL},
            {b.vel, sizeof(bench_velocity), NULL},
        };
        for (int32_t i = 0; i < n; i++) {
            v[0].ptr = &d->pos[i];
            v[1].ptr = &d->vel[i];
            if (weft_spawn_with(b.w, v, 2) == WEFT_ENTITY_NONE) {
                bench_world_expect(&b, "weft_spawn_with", weft_last_status(b.w));
            }
        }
    }
    bench_world_expect(&b, "weft_world_get_stats", weft_world_get_stats(b.w, &after));
    int64_t hook_delta = counter.bytes - hook_before;
    int64_t stats_delta = after.live_bytes - before.live_bytes;
    if (hook_delta != stats_delta) {
        char detail[160];
        snprintf(detail, sizeof detail,
                 "live_bytes grew by %lld but the allocator hook saw %lld bytes",
                 (long long)stats_delta, (long long)hook_delta);
        bench_fail(label, "live-byte accounting", detail);
    }
    bench_world_verify(&b, n);
    bench_world_fini(&b);
    if (counter.bytes != 0) {
        char detail[160];
        snprintf(detail, sizeof detail, "%lld bytes still allocated after weft_world_destroy",
                 (long long)counter.bytes);
        bench_fail(label, "leak check", detail);
    }

    bl_store *s = bl_create(ticks);
    size_t bl_before = bl_bytes(s);
    if (bulk) {
        bl_spawn_bulk(s, n, d->pos, d->vel, NULL);
    } else {
        for (int32_t i = 0; i < n; i++) {
            bl_spawn(s, &d->pos[i], &d->vel[i]);
        }
    }
    double base = (double)(bl_bytes(s) - bl_before) / (double)n;
    bl_destroy(s);
    bench_report(label, "B", (double)stats_delta / (double)n, base, target);
}

void bench_memory(const bench_cfg *cfg, const bench_data *data)
{
    memory_case(cfg, data, true, false, "bytes/entity ticks, one by one", 52.0);
    memory_case(cfg, data, true, true, "bytes/entity ticks, bulk", 52.0);
    memory_case(cfg, data, false, false, "bytes/entity no ticks, one by one", 36.0);
    memory_case(cfg, data, false, true, "bytes/entity no ticks, bulk", 36.0);
}

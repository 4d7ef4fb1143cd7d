/* bench/scenarios_suite.c - the peer-comparable suite: abeimler shapes and design claims.
 * SPDX-License-Identifier: MIT
 *
 * abeimler/ecs_benchmark shapes (all sweepable over N, see harness --sweep):
 *  create / destroy       spawn Position+Velocity one by one / despawn all,
 *                         vs the baseline store (baseline.h).
 *  get1/get2/get3         weft_get of Position, +Velocity, +Data for every
 *                         entity, in creation order and in a shuffled order,
 *                         vs a minimal handle store (generation-checked index
 *                         -> row -> struct arrays) reached through real calls.
 *  addrem                 remove a table Health from every entity, then add
 *                         it back (two row moves each), vs the baseline store.
 *  update2 / update7      abeimler's "update systems": 2 systems (movement +
 *                         data) and 7 systems (+ more-complex, health, damage,
 *                         sprite, render), over plain entities (all carry all
 *                         six components) and mixed entities. weft runs each
 *                         system as a plain C loop over the chunks of one
 *                         cached query; the baseline runs the very same loop
 *                         functions over plain C struct arrays (one set of
 *                         arrays per entity shape). Target: within 1.05x.
 *
 * The per-system work is an approximation of abeimler's (written from his
 * component and system descriptions, not copied):
 *  movement     pos += vel * dt                      (dt = 1/60)
 *  data         thingy = (thingy + 1) % 1000000; dingy += 0.0001 * dt;
 *               mingy = !mingy; seed = xorshift32(seed); numgy = seed
 *  more-complex every 10th thingy: vel re-aimed from numgy, depending on
 *               whether pos.x > pos.y (reads pos + data, writes vel)
 *  health       hp <= 0 and alive -> dead, hp = 0; dead -> revived at
 *               maxhp; otherwise hp clamped to [0, maxhp]
 *  damage       hp -= max(atk - def, 0) while hp > 0, floored at 0
 *  sprite       character from the health status and hp ('x', '!', '@')
 *  render       writes the sprite character into a 320x240 frame buffer at
 *               (int)pos, when inside (reads pos + sprite)
 * "Mixed" (also an approximation of abeimler's mixed layout): entities are
 * spawned round-robin in four shapes: all six components; Pos+Vel+Data;
 * Pos+Vel+Data+Health+Sprite; Pos+Data+Health+Damage+Sprite (no Velocity).
 *
 * Design claims (what docs/architecture.md says the design buys):
 *  aos       N1/N2: pos += vel*dt over weft columns vs an array of pointers to
 *            256-byte heap objects (allocated interleaved with other
 *            allocations) and vs a contiguous array of those objects.
 *  toggle    N9: a marker toggled on 100k entities every frame: table tag
 *            (row moves) vs sparse tag vs a bool field written through a
 *            query; each vs a plain C bool array.
 *  spawnset  N10: 100k spawns with Pos+Vel+Health at once vs spawn + three
 *            inserts (weft vs weft).
 *  bulkspawn N11: 100k Pos+Vel+Health spawned by one weft_spawn_bulk vs
 *            the same spawned one by one with weft_spawn_with (equal work:
 *            both worlds must hash the same).
 *  fragsweep N13: 100k entities over 1..10,000 archetypes (tag combinations),
 *            one query p += v; and 500 archetypes x 3 entities.
 *  changedpct N15: a Changed(Position) query pass over 100k entities with
 *            1%, 10%, 100% changed (random rows) vs an unfiltered pass.
 *  memsets   live bytes per entity for typical component sets, with and
 *            without change ticks, vs the packed component bytes + 8 B
 *            (one handle) per entity.
 * Small N: the timed region repeats the operation (over several worlds for
 * create/destroy/addrem) until about 64k entity-operations, and divides.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "bench_world.h"
#include "weft.h"

#if defined(__GNUC__)
#define SUITE_NOINLINE __attribute__((noinline))
#else
#define SUITE_NOINLINE
#endif

/* ---- abeimler-like components ---- */

typedef struct suite_data {
    int32_t thingy;
    double dingy;
    bool mingy;
    uint32_t seed;
    uint32_t numgy;
} suite_data;

enum { SUITE_ALIVE = 0, SUITE_DEAD = 1 };

typedef struct suite_health {
    int32_t hp;
    int32_t maxhp;
    int32_t status;
} suite_health;

typedef struct suite_damage {
    int32_t atk;
    int32_t def;
} suite_damage;

typedef struct suite_sprite {
    char c;
} suite_sprite;

enum { SUITE_FB_W = 320, SUITE_FB_H = 240 };
static const float SUITE_DT = 1.0f / 60.0f;

/* ---- measurement driver ---- */

typedef double (*suite_fn)(void *ctx, bool verify);

/* Alternates weft and baseline repetitions after warm-up; reports medians. */
static void suite_measure(const bench_cfg *cfg, const char *name, int64_t param,
                          const char *unit, suite_fn wf, void *wctx, suite_fn bf,
                          void *bctx, double max_ratio)
{
    double *wv = bench_xmalloc(sizeof(double) * (size_t)cfg->reps);
    double *bv = bench_xmalloc(sizeof(double) * (size_t)cfg->reps);
    for (int32_t r = -cfg->warmup; r < cfg->reps; r++) {
        bool first = r == -cfg->warmup;
        double a = wf(wctx, first);
        double b = bf(bctx, first);
        bench_trace(cfg, name, "weft", r, a);
        bench_trace(cfg, name, "baseline", r, b);
        if (r >= 0) {
            wv[r] = a;
            bv[r] = b;
        }
    }
    bench_report_param(name, param, unit, bench_median(wv, cfg->reps),
                       bench_median(bv, cfg->reps), max_ratio);
    free(wv);
    free(bv);
}

/* Repetitions of an operation over n entities so that a timed region spans
 * about `ops` entity-operations. */
static int32_t suite_loops(int32_t n, int32_t ops)
{
    return n >= ops ? 1 : ops / n;
}

static double suite_ns(uint64_t t0, uint64_t t1, int64_t count)
{
    return (double)(t1 - t0) / (double)count;
}

/* ---- create / destroy / remove+add (sweepable) ---- */

typedef struct suite_struct_ctx {
    const bench_cfg *cfg;
    const bench_data *d;
    int32_t loops;
    bench_world *worlds;
    bl_store **stores;
    weft_entity *ents;  /* loops * n */
    uint64_t *bents;    /* loops * n */
} suite_struct_ctx;

static double create_weft(void *p, bool verify)
{
    suite_struct_ctx *c = p;
    int32_t n = c->cfg->n;
    for (int32_t l = 0; l < c->loops; l++) {
        bench_world_init(&c->worlds[l], "create", 0, WEFT_STORAGE_DEFAULT, NULL);
    }
    uint64_t t0 = bench_now_ns();
    for (int32_t l = 0; l < c->loops; l++) {
        bench_world *b = &c->worlds[l];
        weft_value v[2] = {{b->pos, sizeof(bench_position), NULL},
                           {b->vel, sizeof(bench_velocity), NULL}};
        for (int32_t i = 0; i < n; i++) {
            v[0].ptr = &c->d->pos[i];
            v[1].ptr = &c->d->vel[i];
            if (weft_spawn_with(b->w, v, 2) == WEFT_ENTITY_NONE) {
                bench_world_expect(b, "weft_spawn_with", weft_last_status(b->w));
            }
        }
    }
    uint64_t t1 = bench_now_ns();
    for (int32_t l = 0; l < c->loops; l++) {
        if (verify && l == 0) {
            bench_world_verify(&c->worlds[l], n);
        }
        bench_world_fini(&c->worlds[l]);
    }
    return suite_ns(t0, t1, (int64_t)n * c->loops);
}

static double create_base(void *p, bool verify)
{
    (void)verify;
    suite_struct_ctx *c = p;
    int32_t n = c->cfg->n;
    for (int32_t l = 0; l < c->loops; l++) {
        c->stores[l] = bl_create(true);
    }
    uint64_t t0 = bench_now_ns();
    for (int32_t l = 0; l < c->loops; l++) {
        for (int32_t i = 0; i < n; i++) {
            bl_spawn(c->stores[l], &c->d->pos[i], &c->d->vel[i]);
        }
    }
    uint64_t t1 = bench_now_ns();
    for (int32_t l = 0; l < c->loops; l++) {
        bl_destroy(c->stores[l]);
    }
    return suite_ns(t0, t1, (int64_t)n * c->loops);
}

static double destroy_weft(void *p, bool verify)
{
    suite_struct_ctx *c = p;
    int32_t n = c->cfg->n;
    for (int32_t l = 0; l < c->loops; l++) {
        bench_world_init(&c->worlds[l], "destroy", 0, WEFT_STORAGE_DEFAULT, NULL);
        bench_world_spawn_bulk(&c->worlds[l], c->d, n, c->ents + (size_t)l * (size_t)n);
    }
    uint64_t t0 = bench_now_ns();
    for (int32_t l = 0; l < c->loops; l++) {
        const weft_entity *e = c->ents + (size_t)l * (size_t)n;
        for (int32_t i = 0; i < n; i++) {
            weft_status st = weft_despawn(c->worlds[l].w, e[i]);
            if (st != WEFT_OK) {
                bench_world_expect(&c->worlds[l], "weft_despawn", st);
            }
        }
    }
    uint64_t t1 = bench_now_ns();
    for (int32_t l = 0; l < c->loops; l++) {
        if (verify && l == 0) {
            bench_world_verify(&c->worlds[l], 0);
        }
        bench_world_fini(&c->worlds[l]);
    }
    return suite_ns(t0, t1, (int64_t)n * c->loops);
}

static double destroy_base(void *p, bool verify)
{
    (void)verify;
    suite_struct_ctx *c = p;
    int32_t n = c->cfg->n;
    for (int32_t l = 0; l < c->loops; l++) {
        c->stores[l] = bl_create(true);
        bl_spawn_bulk(c->stores[l], n, c->d->pos, c->d->vel,
                      c->bents + (size_t)l * (size_t)n);
    }
    uint64_t t0 = bench_now_ns();
    for (int32_t l = 0; l < c->loops; l++) {
        const uint64_t *e = c->bents + (size_t)l * (size_t)n;
        for (int32_t i = 0; i < n; i++) {
            bl_despawn(c->stores[l], e[i]);
        }
    }
    uint64_t t1 = bench_now_ns();
    for (int32_t l = 0; l < c->loops; l++) {
        bl_destroy(c->stores[l]);
    }
    return suite_ns(t0, t1, (int64_t)n * c->loops);
}

/* remove+add keeps the state, so the worlds are built once for all reps. */
static double addrem_weft(void *p, bool verify)
{
    suite_struct_ctx *c = p;
    int32_t n = c->cfg->n;
    uint64_t t0 = bench_now_ns();
    for (int32_t l = 0; l < c->loops; l++) {
        bench_world *b = &c->worlds[l];
        const weft_entity *e = c->ents + (size_t)l * (size_t)n;
        for (int32_t i = 0; i < n; i++) {
            weft_status st = weft_remove(b->w, e[i], b->hp);
            if (st != WEFT_OK) {
                bench_world_expect(b, "weft_remove", st);
            }
        }
        for (int32_t i = 0; i < n; i++) {
            bench_health h = {i};
            weft_status st = weft_insert(b->w, e[i], b->hp, &h, sizeof h);
            if (st != WEFT_OK) {
                bench_world_expect(b, "weft_insert", st);
            }
        }
    }
    uint64_t t1 = bench_now_ns();
    if (verify) {
        const bench_health *h =
            weft_get(c->worlds[0].w, c->ents[n - 1], c->worlds[0].hp, sizeof *h);
        if (h == NULL || h->hp != n - 1) {
            bench_fail("addrem", "weft_get after remove+insert", "wrong value");
        }
        bench_world_verify(&c->worlds[0], n);
    }
    return suite_ns(t0, t1, (int64_t)n * c->loops);
}

static double addrem_base(void *p, bool verify)
{
    (void)verify;
    suite_struct_ctx *c = p;
    int32_t n = c->cfg->n;
    uint64_t t0 = bench_now_ns();
    for (int32_t l = 0; l < c->loops; l++) {
        const uint64_t *e = c->bents + (size_t)l * (size_t)n;
        for (int32_t i = 0; i < n; i++) {
            bl_remove_health(c->stores[l], e[i]);
        }
        for (int32_t i = 0; i < n; i++) {
            bench_health h = {i};
            bl_insert_health(c->stores[l], e[i], &h);
        }
    }
    uint64_t t1 = bench_now_ns();
    return suite_ns(t0, t1, (int64_t)n * c->loops);
}

static void suite_struct_alloc(suite_struct_ctx *c, const bench_cfg *cfg,
                               const bench_data *d, int32_t ops)
{
    c->cfg = cfg;
    c->d = d;
    c->loops = suite_loops(cfg->n, ops);
    size_t total = (size_t)cfg->n * (size_t)c->loops;
    c->worlds = bench_xmalloc(sizeof *c->worlds * (size_t)c->loops);
    c->stores = bench_xmalloc(sizeof *c->stores * (size_t)c->loops);
    c->ents = bench_xmalloc(sizeof *c->ents * total);
    c->bents = bench_xmalloc(sizeof *c->bents * total);
}

static void suite_struct_free(suite_struct_ctx *c)
{
    free(c->worlds);
    free(c->stores);
    free(c->ents);
    free(c->bents);
}

void bench_suite_create(const bench_cfg *cfg, const bench_data *data)
{
    suite_struct_ctx c;
    suite_struct_alloc(&c, cfg, data, 1024);
    suite_measure(cfg, "create (Pos+Vel, one by one)", -1, "ns", create_weft, &c,
                  create_base, &c, 0.0);
    suite_struct_free(&c);
}

void bench_suite_destroy(const bench_cfg *cfg, const bench_data *data)
{
    suite_struct_ctx c;
    suite_struct_alloc(&c, cfg, data, 1024);
    suite_measure(cfg, "destroy (all, creation order)", -1, "ns", destroy_weft, &c,
                  destroy_base, &c, 0.0);
    suite_struct_free(&c);
}

void bench_suite_addrem(const bench_cfg *cfg, const bench_data *data)
{
    suite_struct_ctx c;
    suite_struct_alloc(&c, cfg, data, 1024);
    int32_t n = cfg->n;
    bench_health *hv = bench_xmalloc(sizeof *hv * (size_t)n);
    for (int32_t i = 0; i < n; i++) {
        hv[i].hp = i;
    }
    for (int32_t l = 0; l < c.loops; l++) {
        bench_world *b = &c.worlds[l];
        bench_world_init(b, "addrem", 0, WEFT_STORAGE_DEFAULT, NULL);
        weft_value cols[3] = {{b->pos, sizeof(bench_position), data->pos},
                              {b->vel, sizeof(bench_velocity), data->vel},
                              {b->hp, sizeof(bench_health), hv}};
        bench_world_expect(b, "weft_spawn_bulk",
                           weft_spawn_bulk(b->w, cols, 3, n, c.ents + (size_t)l * (size_t)n));
        c.stores[l] = bl_create(true);
        uint64_t *e = c.bents + (size_t)l * (size_t)n;
        bl_spawn_bulk(c.stores[l], n, data->pos, data->vel, e);
        for (int32_t i = 0; i < n; i++) {
            bl_insert_health(c.stores[l], e[i], &hv[i]);
        }
    }
    suite_measure(cfg, "remove+add Health (table)", -1, "ns", addrem_weft, &c,
                  addrem_base, &c, 0.0);
    for (int32_t l = 0; l < c.loops; l++) {
        bench_world_fini(&c.worlds[l]);
        bl_destroy(c.stores[l]);
    }
    free(hv);
    suite_struct_free(&c);
}

/* ---- get 1/2/3 components by entity ---- */

/* The minimal handle store the get rows are measured against. */
typedef struct gs_store {
    int32_t cap;
    uint32_t *gen;
    int32_t *row;
    bench_position *pos;
    bench_velocity *vel;
    suite_data *data;
} gs_store;

enum { GS_POS = 0, GS_VEL = 1, GS_DATA = 2 };

static SUITE_NOINLINE const void *gs_get(const gs_store *s, uint64_t e, int comp)
{
    uint32_t idx = (uint32_t)e;
    if (idx == 0 || (int64_t)idx > s->cap || s->gen[idx] != (uint32_t)(e >> 32)) {
        return NULL;
    }
    int32_t r = s->row[idx];
    switch (comp) {
    case GS_POS:
        return &s->pos[r];
    case GS_VEL:
        return &s->vel[r];
    default:
        return &s->data[r];
    }
}

typedef struct suite_get_ctx {
    const bench_cfg *cfg;
    int32_t ncomp;
    bool shuffled;
    int32_t loops;
    bench_world b;
    weft_component data_c;
    weft_entity *ents;  /* visit order */
    uint64_t *bents;    /* visit order */
    gs_store gs;
    double expect;      /* checksum both sides must reach */
} suite_get_ctx;

static double get_weft(void *p, bool verify)
{
    suite_get_ctx *c = p;
    int32_t n = c->cfg->n;
    weft_world *w = c->b.w;
    double sum = 0.0;
    uint64_t t0 = bench_now_ns();
    for (int32_t l = 0; l < c->loops; l++) {
        for (int32_t i = 0; i < n; i++) {
            const bench_position *ps = weft_get(w, c->ents[i], c->b.pos, sizeof *ps);
            sum += (double)ps->x;
            if (c->ncomp > 1) {
                const bench_velocity *v = weft_get(w, c->ents[i], c->b.vel, sizeof *v);
                sum += (double)v->y;
            }
            if (c->ncomp > 2) {
                const suite_data *dd = weft_get(w, c->ents[i], c->data_c, sizeof *dd);
                sum += dd->thingy;
            }
        }
    }
    uint64_t t1 = bench_now_ns();
    if (verify && sum != c->expect) {
        bench_fail("get", "weft_get checksum", "differs from the baseline");
    }
    return suite_ns(t0, t1, (int64_t)n * c->loops);
}

static double get_base(void *p, bool verify)
{
    (void)verify;
    suite_get_ctx *c = p;
    int32_t n = c->cfg->n;
    double sum = 0.0;
    uint64_t t0 = bench_now_ns();
    for (int32_t l = 0; l < c->loops; l++) {
        for (int32_t i = 0; i < n; i++) {
            const bench_position *ps = gs_get(&c->gs, c->bents[i], GS_POS);
            sum += (double)ps->x;
            if (c->ncomp > 1) {
                const bench_velocity *v = gs_get(&c->gs, c->bents[i], GS_VEL);
                sum += (double)v->y;
            }
            if (c->ncomp > 2) {
                const suite_data *dd = gs_get(&c->gs, c->bents[i], GS_DATA);
                sum += dd->thingy;
            }
        }
    }
    uint64_t t1 = bench_now_ns();
    c->expect = sum;
    return suite_ns(t0, t1, (int64_t)n * c->loops);
}

static void suite_get(const bench_cfg *cfg, const bench_data *d, int32_t ncomp)
{
    static const char *const names[3][2] = {
        {"get 1 component (creation order)", "get 1 component (shuffled)"},
        {"get 2 components (creation order)", "get 2 components (shuffled)"},
        {"get 3 components (creation order)", "get 3 components (shuffled)"},
    };
    int32_t n = cfg->n;
    suite_get_ctx c;
    memset(&c, 0, sizeof c);
    c.cfg = cfg;
    c.ncomp = ncomp;
    c.loops = suite_loops(n, 1 << 16);
    bench_world_init(&c.b, "get", 0, WEFT_STORAGE_DEFAULT, NULL);
    c.data_c = bench_register(&c.b, "Data", sizeof(suite_data), WEFT_STORAGE_DEFAULT, 0);
    suite_data *dv = bench_xmalloc(sizeof *dv * (size_t)n);
    memset(dv, 0, sizeof *dv * (size_t)n);
    for (int32_t i = 0; i < n; i++) {
        dv[i].thingy = i % 1000;
    }
    weft_entity *created = bench_xmalloc(sizeof *created * (size_t)n);
    weft_value cols[3] = {{c.b.pos, sizeof(bench_position), d->pos},
                          {c.b.vel, sizeof(bench_velocity), d->vel},
                          {c.data_c, sizeof(suite_data), dv}};
    bench_world_expect(&c.b, "weft_spawn_bulk", weft_spawn_bulk(c.b.w, cols, 3, n, created));
    c.gs.cap = n;
    c.gs.gen = bench_xmalloc(sizeof *c.gs.gen * (size_t)(n + 1));
    c.gs.row = bench_xmalloc(sizeof *c.gs.row * (size_t)(n + 1));
    c.gs.pos = bench_xmalloc(sizeof *c.gs.pos * (size_t)n);
    c.gs.vel = bench_xmalloc(sizeof *c.gs.vel * (size_t)n);
    c.gs.data = dv;
    memcpy(c.gs.pos, d->pos, sizeof *c.gs.pos * (size_t)n);
    memcpy(c.gs.vel, d->vel, sizeof *c.gs.vel * (size_t)n);
    for (int32_t i = 0; i <= n; i++) {
        c.gs.gen[i] = 1;
        c.gs.row[i] = i > 0 ? i - 1 : 0;
    }
    c.ents = bench_xmalloc(sizeof *c.ents * (size_t)n);
    c.bents = bench_xmalloc(sizeof *c.bents * (size_t)n);
    for (int s = 0; s < 2; s++) {
        c.shuffled = s == 1;
        for (int32_t i = 0; i < n; i++) {
            int32_t k = c.shuffled ? d->perm[i] : i;
            c.ents[i] = created[k];
            c.bents[i] = ((uint64_t)1 << 32) | (uint64_t)(k + 1);
        }
        /* baseline first, so the weft side can be checked on its first run */
        get_base(&c, false);
        suite_measure(cfg, names[ncomp - 1][s], -1, "ns", get_weft, &c, get_base, &c, 0.0);
    }
    free(c.ents);
    free(c.bents);
    free(c.gs.gen);
    free(c.gs.row);
    free(c.gs.pos);
    free(c.gs.vel);
    free(created);
    free(dv);
    bench_world_fini(&c.b);
}

void bench_suite_get1(const bench_cfg *cfg, const bench_data *data)
{
    suite_get(cfg, data, 1);
}

void bench_suite_get2(const bench_cfg *cfg, const bench_data *data)
{
    suite_get(cfg, data, 2);
}

void bench_suite_get3(const bench_cfg *cfg, const bench_data *data)
{
    suite_get(cfg, data, 3);
}

/* ---- update systems: the kernels both sides run ---- */

static void sys_movement(bench_position *restrict p, const bench_velocity *restrict v,
                         int32_t n, float dt)
{
    for (int32_t i = 0; i < n; i++) {
        p[i].x += v[i].x * dt;
        p[i].y += v[i].y * dt;
    }
}

static void sys_data(suite_data *restrict d, int32_t n, float dt)
{
    for (int32_t i = 0; i < n; i++) {
        d[i].thingy = (d[i].thingy + 1) % 1000000;
        d[i].dingy += 0.0001 * (double)dt;
        d[i].mingy = !d[i].mingy;
        uint32_t x = d[i].seed;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        d[i].seed = x;
        d[i].numgy = x;
    }
}

static void sys_more_complex(const bench_position *restrict p, bench_velocity *restrict v,
                             const suite_data *restrict d, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        if (d[i].thingy % 10 == 0) {
            float a = (float)(d[i].numgy % 17u) - 8.0f;
            float b = (float)((d[i].numgy >> 8) % 5u);
            if (p[i].x > p[i].y) {
                v[i].x = a;
                v[i].y = b;
            } else {
                v[i].x = -b;
                v[i].y = a;
            }
        }
    }
}

static void sys_health(suite_health *restrict h, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        if (h[i].hp <= 0 && h[i].status != SUITE_DEAD) {
            h[i].hp = 0;
            h[i].status = SUITE_DEAD;
        } else if (h[i].status == SUITE_DEAD && h[i].hp == 0) {
            h[i].hp = h[i].maxhp;
            h[i].status = SUITE_ALIVE;
        } else if (h[i].hp > h[i].maxhp) {
            h[i].hp = h[i].maxhp;
        } else if (h[i].hp < 0) {
            h[i].hp = 0;
        }
    }
}

static void sys_damage(suite_health *restrict h, const suite_damage *restrict dm, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        int32_t total = dm[i].atk - dm[i].def;
        if (h[i].hp > 0 && total > 0) {
            int32_t hp = h[i].hp - total;
            h[i].hp = hp > 0 ? hp : 0;
        }
    }
}

static void sys_sprite(suite_sprite *restrict s, const suite_health *restrict h, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        char c = '@';
        if (h[i].status == SUITE_DEAD) {
            c = 'x';
        } else if (h[i].hp * 3 < h[i].maxhp) {
            c = '!';
        }
        s[i].c = c;
    }
}

static void sys_render(const bench_position *restrict p, const suite_sprite *restrict s,
                       int32_t n, char *restrict fb)
{
    for (int32_t i = 0; i < n; i++) {
        int32_t x = (int32_t)p[i].x;
        int32_t y = (int32_t)p[i].y;
        if (x >= 0 && x < SUITE_FB_W && y >= 0 && y < SUITE_FB_H) {
            fb[y * SUITE_FB_W + x] = s[i].c;
        }
    }
}

/* ---- update systems: the baseline (plain C struct arrays per shape) ---- */

enum { SUITE_SHAPES = 4 };

typedef struct suite_group {
    int32_t n;
    bench_position *pos;
    bench_velocity *vel;
    suite_data *data;
    suite_health *health;
    suite_damage *damage;
    suite_sprite *sprite;
} suite_group;

/* Which components shape s carries: bit 0 pos, 1 vel, 2 data, 3 health,
 * 4 damage, 5 sprite. Plain worlds use shape 0 only. */
static const unsigned g_shape_mask[SUITE_SHAPES] = {0x3f, 0x07, 0x2f, 0x3d};

typedef struct suite_update_ctx {
    const bench_cfg *cfg;
    int32_t systems;   /* 2 or 7 */
    int32_t loops;     /* frames per timed region */
    int32_t n;
    /* weft */
    bench_world b;
    weft_component data_c, health_c, damage_c, sprite_c;
    weft_query *q[7];
    char *fb_w;
    /* baseline */
    suite_group g[SUITE_SHAPES];
    char *fb_b;
} suite_update_ctx;

static void suite_values(const bench_data *d, int32_t i, bench_position *p,
                         bench_velocity *v, suite_data *dd, suite_health *h,
                         suite_damage *dm, suite_sprite *s)
{
    *p = d->pos[i];
    p->x *= 0.3f; /* 0 .. 307: most land inside the frame buffer */
    p->y *= 0.23f;
    *v = d->vel[i];
    memset(dd, 0, sizeof *dd);
    dd->thingy = i % 1000;
    dd->seed = (uint32_t)i * 2654435761u | 1u;
    h->hp = 1 + i % 120;
    h->maxhp = 100;
    h->status = SUITE_ALIVE;
    dm->atk = i % 7;
    dm->def = i % 3;
    s->c = '@';
}

static void suite_update_frame_base(suite_update_ctx *c)
{
    for (int32_t s = 0; s < SUITE_SHAPES; s++) {
        suite_group *g = &c->g[s];
        if (g->n == 0) {
            continue;
        }
        if (g->pos && g->vel) {
            sys_movement(g->pos, g->vel, g->n, SUITE_DT);
        }
        if (g->data) {
            sys_data(g->data, g->n, SUITE_DT);
        }
    }
    if (c->systems == 2) {
        return;
    }
    for (int32_t s = 0; s < SUITE_SHAPES; s++) {
        suite_group *g = &c->g[s];
        if (g->n > 0 && g->pos && g->vel && g->data) {
            sys_more_complex(g->pos, g->vel, g->data, g->n);
        }
    }
    for (int32_t s = 0; s < SUITE_SHAPES; s++) {
        suite_group *g = &c->g[s];
        if (g->n > 0 && g->health) {
            sys_health(g->health, g->n);
        }
    }
    for (int32_t s = 0; s < SUITE_SHAPES; s++) {
        suite_group *g = &c->g[s];
        if (g->n > 0 && g->health && g->damage) {
            sys_damage(g->health, g->damage, g->n);
        }
    }
    for (int32_t s = 0; s < SUITE_SHAPES; s++) {
        suite_group *g = &c->g[s];
        if (g->n > 0 && g->sprite && g->health) {
            sys_sprite(g->sprite, g->health, g->n);
        }
    }
    for (int32_t s = 0; s < SUITE_SHAPES; s++) {
        suite_group *g = &c->g[s];
        if (g->n > 0 && g->pos && g->sprite) {
            sys_render(g->pos, g->sprite, g->n, c->fb_b);
        }
    }
}

static void suite_update_frame_weft(suite_update_ctx *c)
{
    weft_world *w = c->b.w;
    for (int32_t s = 0; s < c->systems; s++) {
        weft_iter it;
        bench_world_expect(&c->b, "weft_query_iter", weft_query_iter(w, c->q[s], &it));
        while (weft_iter_next(&it)) {
            int32_t n = weft_iter_count(&it);
            switch (s) {
            case 0:
                sys_movement(weft_iter_field_mut(&it, 0, sizeof(bench_position)),
                             weft_iter_field(&it, 1, sizeof(bench_velocity)), n, SUITE_DT);
                break;
            case 1:
                sys_data(weft_iter_field_mut(&it, 0, sizeof(suite_data)), n, SUITE_DT);
                break;
            case 2:
                sys_more_complex(weft_iter_field(&it, 0, sizeof(bench_position)),
                                 weft_iter_field_mut(&it, 1, sizeof(bench_velocity)),
                                 weft_iter_field(&it, 2, sizeof(suite_data)), n);
                break;
            case 3:
                sys_health(weft_iter_field_mut(&it, 0, sizeof(suite_health)), n);
                break;
            case 4:
                sys_damage(weft_iter_field_mut(&it, 0, sizeof(suite_health)),
                           weft_iter_field(&it, 1, sizeof(suite_damage)), n);
                break;
            case 5:
                sys_sprite(weft_iter_field_mut(&it, 0, sizeof(suite_sprite)),
                           weft_iter_field(&it, 1, sizeof(suite_health)), n);
                break;
            default:
                sys_render(weft_iter_field(&it, 0, sizeof(bench_position)),
                           weft_iter_field(&it, 1, sizeof(suite_sprite)), n, c->fb_w);
                break;
            }
        }
    }
}

/* An order-independent checksum of every component value (integer parts). */
static int64_t suite_checksum_base(const suite_update_ctx *c)
{
    int64_t sum = 0;
    for (int32_t s = 0; s < SUITE_SHAPES; s++) {
        const suite_group *g = &c->g[s];
        for (int32_t i = 0; i < g->n; i++) {
            if (g->pos) {
                sum += (int64_t)(g->pos[i].x * 1024.0f) + (int64_t)(g->pos[i].y * 1024.0f);
            }
            if (g->data) {
                sum += g->data[i].thingy + (int64_t)g->data[i].numgy;
            }
            if (g->health) {
                sum += g->health[i].hp * 7 + g->health[i].status;
            }
            if (g->sprite) {
                sum += g->sprite[i].c;
            }
        }
    }
    return sum;
}

static int64_t suite_checksum_weft(suite_update_ctx *c)
{
    int64_t sum = 0;
    weft_world *w = c->b.w;
    weft_component comps[4] = {c->b.pos, c->data_c, c->health_c, c->sprite_c};
    for (int k = 0; k < 4; k++) {
        weft_query_desc qd;
        memset(&qd, 0, sizeof qd);
        qd.term_count = 1;
        qd.terms[0].id = comps[k];
        qd.flags = WEFT_QUERY_UNCACHED;
        weft_query *q = weft_query_create(w, &qd);
        if (q == NULL) {
            bench_world_expect(&c->b, "weft_query_create", weft_last_status(w));
        }
        weft_iter it;
        bench_world_expect(&c->b, "weft_query_iter", weft_query_iter(w, q, &it));
        while (weft_iter_next(&it)) {
            int32_t n = weft_iter_count(&it);
            for (int32_t i = 0; i < n; i++) {
                if (k == 0) {
                    const bench_position *p = weft_iter_field(&it, 0, sizeof *p);
                    sum += (int64_t)(p[i].x * 1024.0f) + (int64_t)(p[i].y * 1024.0f);
                } else if (k == 1) {
                    const suite_data *d = weft_iter_field(&it, 0, sizeof *d);
                    sum += d[i].thingy + (int64_t)d[i].numgy;
                } else if (k == 2) {
                    const suite_health *h = weft_iter_field(&it, 0, sizeof *h);
                    sum += h[i].hp * 7 + h[i].status;
                } else {
                    const suite_sprite *s = weft_iter_field(&it, 0, sizeof *s);
                    sum += s[i].c;
                }
            }
        }
        bench_world_expect(&c->b, "weft_query_destroy", weft_query_destroy(w, q));
    }
    return sum;
}

static double update_weft(void *p, bool verify)
{
    suite_update_ctx *c = p;
    uint64_t t0 = bench_now_ns();
    for (int32_t l = 0; l < c->loops; l++) {
        suite_update_frame_weft(c);
    }
    uint64_t t1 = bench_now_ns();
    (void)verify;
    return suite_ns(t0, t1, (int64_t)c->n * c->loops);
}

static double update_base(void *p, bool verify)
{
    suite_update_ctx *c = p;
    uint64_t t0 = bench_now_ns();
    for (int32_t l = 0; l < c->loops; l++) {
        suite_update_frame_base(c);
    }
    uint64_t t1 = bench_now_ns();
    /* Both sides have now run the same frames from the same values. */
    if (verify && suite_checksum_base(c) != suite_checksum_weft(c)) {
        bench_fail("update", "checksum after the first frames", "weft != baseline");
    }
    return suite_ns(t0, t1, (int64_t)c->n * c->loops);
}

static weft_query *suite_query(bench_world *b, int32_t count, const weft_component *ids,
                               const bool *write)
{
    weft_query_desc qd;
    memset(&qd, 0, sizeof qd);
    qd.term_count = count;
    for (int32_t i = 0; i < count; i++) {
        qd.terms[i].id = ids[i];
        qd.terms[i].access = write[i] ? WEFT_ACCESS_WRITE : WEFT_ACCESS_READ;
    }
    weft_query *q = weft_query_create(b->w, &qd);
    if (q == NULL) {
        bench_world_expect(b, "weft_query_create", weft_last_status(b->w));
    }
    return q;
}

static void suite_update(const bench_cfg *cfg, const bench_data *d, int32_t systems,
                         bool mixed, uint32_t flags, const char *name, double target)
{
    suite_update_ctx c;
    memset(&c, 0, sizeof c);
    int32_t n = cfg->n;
    c.cfg = cfg;
    c.systems = systems;
    c.n = n;
    c.loops = suite_loops(n, 1 << 16);
    c.fb_w = bench_xmalloc(SUITE_FB_W * SUITE_FB_H);
    c.fb_b = bench_xmalloc(SUITE_FB_W * SUITE_FB_H);
    memset(c.fb_w, ' ', SUITE_FB_W * SUITE_FB_H);
    memset(c.fb_b, ' ', SUITE_FB_W * SUITE_FB_H);
    bench_world_init(&c.b, name, flags, WEFT_STORAGE_DEFAULT, NULL);
    c.data_c = bench_register(&c.b, "Data", sizeof(suite_data), WEFT_STORAGE_DEFAULT, flags);
    c.health_c = bench_register(&c.b, "HealthA", sizeof(suite_health), WEFT_STORAGE_DEFAULT,
                                flags);
    c.damage_c = bench_register(&c.b, "Damage", sizeof(suite_damage), WEFT_STORAGE_DEFAULT,
                                flags);
    c.sprite_c = bench_register(&c.b, "Sprite", sizeof(suite_sprite), WEFT_STORAGE_DEFAULT,
                                flags);
    weft_component all[6] = {c.b.pos, c.b.vel, c.data_c, c.health_c, c.damage_c, c.sprite_c};
    size_t sizes[6] = {sizeof(bench_position), sizeof(bench_velocity), sizeof(suite_data),
                       sizeof(suite_health), sizeof(suite_damage), sizeof(suite_sprite)};
    /* baseline groups */
    int32_t shapes = mixed ? SUITE_SHAPES : 1;
    for (int32_t s = 0; s < shapes; s++) {
        int32_t cnt = mixed ? n / SUITE_SHAPES + (s < n % SUITE_SHAPES ? 1 : 0) : n;
        suite_group *g = &c.g[s];
        unsigned m = g_shape_mask[s];
        size_t cap = (size_t)cnt + 1;
        g->pos = (m & 1u) ? bench_xmalloc(sizeof *g->pos * cap) : NULL;
        g->vel = (m & 2u) ? bench_xmalloc(sizeof *g->vel * cap) : NULL;
        g->data = (m & 4u) ? bench_xmalloc(sizeof *g->data * cap) : NULL;
        g->health = (m & 8u) ? bench_xmalloc(sizeof *g->health * cap) : NULL;
        g->damage = (m & 16u) ? bench_xmalloc(sizeof *g->damage * cap) : NULL;
        g->sprite = (m & 32u) ? bench_xmalloc(sizeof *g->sprite * cap) : NULL;
    }
    for (int32_t i = 0; i < n; i++) {
        bench_position p;
        bench_velocity v;
        suite_data dd;
        suite_health h;
        suite_damage dm;
        suite_sprite sp;
        suite_values(d, i, &p, &v, &dd, &h, &dm, &sp);
        int32_t s = mixed ? i % SUITE_SHAPES : 0;
        unsigned m = g_shape_mask[s];
        suite_group *g = &c.g[s];
        int32_t r = g->n++;
        const void *vals[6] = {&p, &v, &dd, &h, &dm, &sp};
        weft_value wv[6];
        int32_t k = 0;
        for (int32_t j = 0; j < 6; j++) {
            if (m & (1u << j)) {
                wv[k].id = all[j];
                wv[k].size = sizes[j];
                wv[k].ptr = vals[j];
                k++;
            }
        }
        if (weft_spawn_with(c.b.w, wv, k) == WEFT_ENTITY_NONE) {
            bench_world_expect(&c.b, "weft_spawn_with", weft_last_status(c.b.w));
        }
        if (g->pos) g->pos[r] = p;
        if (g->vel) g->vel[r] = v;
        if (g->data) g->data[r] = dd;
        if (g->health) g->health[r] = h;
        if (g->damage) g->damage[r] = dm;
        if (g->sprite) g->sprite[r] = sp;
    }
    {
        weft_component ids[3];
        bool wr[3];
        ids[0] = c.b.pos; ids[1] = c.b.vel; wr[0] = true; wr[1] = false;
        c.q[0] = suite_query(&c.b, 2, ids, wr);
        ids[0] = c.data_c; wr[0] = true;
        c.q[1] = suite_query(&c.b, 1, ids, wr);
        ids[0] = c.b.pos; ids[1] = c.b.vel; ids[2] = c.data_c;
        wr[0] = false; wr[1] = true; wr[2] = false;
        c.q[2] = suite_query(&c.b, 3, ids, wr);
        ids[0] = c.health_c; wr[0] = true;
        c.q[3] = suite_query(&c.b, 1, ids, wr);
        ids[0] = c.health_c; ids[1] = c.damage_c; wr[0] = true; wr[1] = false;
        c.q[4] = suite_query(&c.b, 2, ids, wr);
        ids[0] = c.sprite_c; ids[1] = c.health_c; wr[0] = true; wr[1] = false;
        c.q[5] = suite_query(&c.b, 2, ids, wr);
        ids[0] = c.b.pos; ids[1] = c.sprite_c; wr[0] = false; wr[1] = false;
        c.q[6] = suite_query(&c.b, 2, ids, wr);
    }
    suite_measure(cfg, name, -1, "ns", update_weft, &c, update_base, &c, target);
    for (int32_t s = 0; s < SUITE_SHAPES; s++) {
        free(c.g[s].pos);
        free(c.g[s].vel);
        free(c.g[s].data);
        free(c.g[s].health);
        free(c.g[s].damage);
        free(c.g[s].sprite);
    }
    free(c.fb_w);
    free(c.fb_b);
    bench_world_fini(&c.b);
}

void bench_suite_update2(const bench_cfg *cfg, const bench_data *data)
{
    suite_update(cfg, data, 2, false, 0, "update 2 systems, plain", 1.05);
    suite_update(cfg, data, 2, true, 0, "update 2 systems, mixed", 1.05);
}

void bench_suite_update7(const bench_cfg *cfg, const bench_data *data)
{
    suite_update(cfg, data, 7, false, 0, "update 7 systems, plain", 1.05);
    suite_update(cfg, data, 7, true, 0, "update 7 systems, mixed", 1.05);
    suite_update(cfg, data, 7, false, WEFT_COMPONENT_NO_CHANGE_TICKS,
                 "update 7 systems, plain, no ticks", 1.05);
}

/* ---- design claims ---- */

/* A query Position(write), Velocity(read) over the whole world. */
static weft_query *suite_pv_query(bench_world *b)
{
    weft_component ids[2] = {b->pos, b->vel};
    bool wr[2] = {true, false};
    return suite_query(b, 2, ids, wr);
}

static void suite_pv_pass(bench_world *b, weft_query *q)
{
    weft_iter it;
    bench_world_expect(b, "weft_query_iter", weft_query_iter(b->w, q, &it));
    while (weft_iter_next(&it)) {
        sys_movement(weft_iter_field_mut(&it, 0, sizeof(bench_position)),
                     weft_iter_field(&it, 1, sizeof(bench_velocity)),
                     weft_iter_count(&it), SUITE_DT);
    }
}

/* N1/N2: 256-byte game objects. */
typedef struct suite_obj {
    bench_position p;
    bench_velocity v;
    char rest[240];
} suite_obj;

void bench_suite_aos(const bench_cfg *cfg, const bench_data *d)
{
    static const int32_t sizes[3] = {10000, 50000, 100000};
    for (int k = 0; k < 3; k++) {
        int32_t n = sizes[k];
        if (n > cfg->n) {
            n = cfg->n;
        }
        int32_t loops = suite_loops(n, 1000000);
        bench_world b;
        bench_world_init(&b, "aos", 0, WEFT_STORAGE_DEFAULT, NULL);
        bench_world_spawn_bulk(&b, d, n, NULL);
        weft_query *q = suite_pv_query(&b);
        suite_obj **ptrs = bench_xmalloc(sizeof *ptrs * (size_t)n);
        void **junk = bench_xmalloc(sizeof *junk * (size_t)n);
        suite_obj *contig = bench_xmalloc(sizeof *contig * (size_t)n);
        uint64_t rng = cfg->seed;
        for (int32_t i = 0; i < n; i++) {
            ptrs[i] = bench_xmalloc(sizeof **ptrs);
            memset(ptrs[i], 0, sizeof **ptrs);
            ptrs[i]->p = d->pos[i];
            ptrs[i]->v = d->vel[i];
            contig[i] = *ptrs[i];
            junk[i] = bench_xmalloc(16 + (size_t)(bench_rng_next(&rng) % 497u));
        }
        for (int32_t i = 0; i < n; i++) {
            free(junk[i]);
        }
        double wv[3][64];
        int32_t reps = cfg->reps < 64 ? cfg->reps : 63;
        for (int32_t r = -cfg->warmup; r < reps; r++) {
            uint64_t t0 = bench_now_ns();
            for (int32_t l = 0; l < loops; l++) {
                suite_pv_pass(&b, q);
            }
            uint64_t t1 = bench_now_ns();
            for (int32_t l = 0; l < loops; l++) {
                for (int32_t i = 0; i < n; i++) {
                    suite_obj *o = ptrs[i];
                    o->p.x += o->v.x * SUITE_DT;
                    o->p.y += o->v.y * SUITE_DT;
                }
            }
            uint64_t t2 = bench_now_ns();
            for (int32_t l = 0; l < loops; l++) {
                for (int32_t i = 0; i < n; i++) {
                    contig[i].p.x += contig[i].v.x * SUITE_DT;
                    contig[i].p.y += contig[i].v.y * SUITE_DT;
                }
            }
            uint64_t t3 = bench_now_ns();
            if (r >= 0) {
                int64_t cnt = (int64_t)n * loops;
                wv[0][r] = suite_ns(t0, t1, cnt);
                wv[1][r] = suite_ns(t1, t2, cnt);
                wv[2][r] = suite_ns(t2, t3, cnt);
            }
        }
        double w = bench_median(wv[0], reps);
        bench_report_param("N1/N2 weft columns vs AoS pointer array", n, "ns", w,
                           bench_median(wv[1], reps), 0.2);
        bench_report_param("N1 weft columns vs contiguous AoS", n, "ns", w,
                           bench_median(wv[2], reps), 0.0);
        for (int32_t i = 0; i < n; i++) {
            free(ptrs[i]);
        }
        free(ptrs);
        free(junk);
        free(contig);
        bench_world_fini(&b);
    }
}

/* N9: a marker toggled on 100k entities every frame. */
void bench_suite_toggle(const bench_cfg *cfg, const bench_data *d)
{
    int32_t n = cfg->n < 100000 ? cfg->n : 100000;
    static const char *const names[3] = {"N9 toggle marker: table tag vs bool array",
                                         "N9 toggle marker: sparse tag vs bool array",
                                         "N9 toggle marker: bool field vs bool array"};
    bool *flags = bench_xmalloc((size_t)n);
    memset(flags, 0, (size_t)n);
    for (int kind = 0; kind < 3; kind++) {
        bench_world b;
        bench_world_init(&b, "toggle", 0, WEFT_STORAGE_DEFAULT, NULL);
        weft_component m;
        if (kind == 2) {
            m = bench_register(&b, "Flag", sizeof(bool), WEFT_STORAGE_DEFAULT, 0);
        } else {
            m = bench_register(&b, "Marker", 0,
                               kind == 0 ? WEFT_STORAGE_TABLE : WEFT_STORAGE_SPARSE, 0);
        }
        weft_entity *ents = bench_xmalloc(sizeof *ents * (size_t)n);
        if (kind == 2) {
            weft_value cols[3] = {{b.pos, sizeof(bench_position), d->pos},
                                  {b.vel, sizeof(bench_velocity), d->vel},
                                  {m, sizeof(bool), NULL}};
            bench_world_expect(&b, "weft_spawn_bulk", weft_spawn_bulk(b.w, cols, 3, n, ents));
        } else {
            bench_world_spawn_bulk(&b, d, n, ents);
        }
        weft_query *fq = NULL;
        if (kind == 2) {
            weft_component ids[1] = {m};
            bool wr[1] = {true};
            fq = suite_query(&b, 1, ids, wr);
        }
        double wv[64];
        double bv[64];
        int32_t reps = cfg->reps < 64 ? cfg->reps : 63;
        int32_t frames = 4;
        for (int32_t r = -cfg->warmup; r < reps; r++) {
            uint64_t t0 = bench_now_ns();
            for (int32_t f = 0; f < frames; f++) {
                bool on = f % 2 == 0;
                if (kind == 2) {
                    weft_iter it;
                    bench_world_expect(&b, "weft_query_iter", weft_query_iter(b.w, fq, &it));
                    while (weft_iter_next(&it)) {
                        bool *fl = weft_iter_field_mut(&it, 0, sizeof(bool));
                        int32_t c = weft_iter_count(&it);
                        for (int32_t i = 0; i < c; i++) {
                            fl[i] = on;
                        }
                    }
                } else {
                    for (int32_t i = 0; i < n; i++) {
                        weft_status st = on ? weft_insert(b.w, ents[i], m, NULL, 0)
                                            : weft_remove(b.w, ents[i], m);
                        if (st != WEFT_OK) {
                            bench_world_expect(&b, on ? "weft_insert" : "weft_remove", st);
                        }
                    }
                }
            }
            uint64_t t1 = bench_now_ns();
            for (int32_t f = 0; f < frames; f++) {
                bool on = f % 2 == 0;
                for (int32_t i = 0; i < n; i++) {
                    flags[i] = on;
                }
                __asm__ volatile("" : : "r"(flags) : "memory");
            }
            uint64_t t2 = bench_now_ns();
            if (r >= 0) {
                wv[r] = suite_ns(t0, t1, (int64_t)n * frames);
                bv[r] = suite_ns(t1, t2, (int64_t)n * frames);
            }
        }
        bench_report_param(names[kind], n, "ns", bench_median(wv, reps),
                           bench_median(bv, reps), 0.0);
        free(ents);
        bench_world_fini(&b);
    }
    free(flags);
}

/* N10 (full set vs incremental) and N11 (bulk vs one by one), weft vs weft. */
void bench_suite_spawnset(const bench_cfg *cfg, const bench_data *d)
{
    int32_t n = cfg->n < 100000 ? cfg->n : 100000;
    double inc[64];
    double full[64];
    double bulk[64];
    int32_t reps = cfg->reps < 64 ? cfg->reps : 63;
    bench_health h = {100};
    bench_health *hps = bench_xmalloc(sizeof *hps * (size_t)n);
    for (int32_t i = 0; i < n; i++) {
        hps[i] = h;
    }
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        bench_world b;
        bench_world_init(&b, "spawnset", 0, WEFT_STORAGE_DEFAULT, NULL);
        uint64_t t0 = bench_now_ns();
        for (int32_t i = 0; i < n; i++) {
            weft_entity e = weft_spawn(b.w);
            if (e == WEFT_ENTITY_NONE ||
                weft_insert(b.w, e, b.pos, &d->pos[i], sizeof(bench_position)) != WEFT_OK ||
                weft_insert(b.w, e, b.vel, &d->vel[i], sizeof(bench_velocity)) != WEFT_OK ||
                weft_insert(b.w, e, b.hp, &h, sizeof h) != WEFT_OK) {
                bench_world_expect(&b, "spawn + insert", weft_last_status(b.w));
            }
        }
        uint64_t t1 = bench_now_ns();
        bench_world_verify(&b, n);
        bench_world_fini(&b);
        bench_world_init(&b, "spawnset", 0, WEFT_STORAGE_DEFAULT, NULL);
        weft_value v[3] = {{b.pos, sizeof(bench_position), NULL},
                           {b.vel, sizeof(bench_velocity), NULL},
                           {b.hp, sizeof h, &h}};
        uint64_t t2 = bench_now_ns();
        for (int32_t i = 0; i < n; i++) {
            v[0].ptr = &d->pos[i];
            v[1].ptr = &d->vel[i];
            if (weft_spawn_with(b.w, v, 3) == WEFT_ENTITY_NONE) {
                bench_world_expect(&b, "weft_spawn_with", weft_last_status(b.w));
            }
        }
        uint64_t t3 = bench_now_ns();
        bench_world_verify(&b, n);
        uint64_t one_by_one = weft_world_hash(b.w);
        bench_world_fini(&b);
        bench_world_init(&b, "spawnset", 0, WEFT_STORAGE_DEFAULT, NULL);
        /* The same three components and values as the one-by-one run. */
        weft_value cols[3] = {{b.pos, sizeof(bench_position), d->pos},
                              {b.vel, sizeof(bench_velocity), d->vel},
                              {b.hp, sizeof h, hps}};
        uint64_t t4 = bench_now_ns();
        bench_world_expect(&b, "weft_spawn_bulk", weft_spawn_bulk(b.w, cols, 3, n, NULL));
        uint64_t t5 = bench_now_ns();
        bench_world_verify(&b, n);
        if (weft_world_hash(b.w) != one_by_one) {
            bench_fail("spawnset", "N11 equal work", "the bulk world differs from the "
                       "one-by-one world");
        }
        bench_world_fini(&b);
        if (r >= 0) {
            inc[r] = suite_ns(t0, t1, n);
            full[r] = suite_ns(t2, t3, n);
            bulk[r] = suite_ns(t4, t5, n);
        }
    }
    double f = bench_median(full, reps);
    bench_report_param("N10 spawn + 3 inserts vs spawn with the full set", n, "ns",
                       bench_median(inc, reps), f, 0.0);
    bench_report_param("N11 bulk spawn vs one by one (Pos+Vel+Health)", n, "ns",
                       bench_median(bulk, reps), f, 0.0);
    free(hps);
}

/* N13: n entities spread over A archetypes (tag combinations). */
static void suite_frag_case(const bench_cfg *cfg, const bench_data *d, int32_t n,
                            int32_t archetypes, const char *name)
{
    enum { TAGS = 14 };
    bench_world b;
    bench_world_init(&b, "fragsweep", 0, WEFT_STORAGE_DEFAULT, NULL);
    weft_component tags[TAGS];
    for (int t = 0; t < TAGS; t++) {
        char tn[16];
        snprintf(tn, sizeof tn, "Tag%d", t);
        tags[t] = bench_register(&b, tn, 0, WEFT_STORAGE_TABLE, 0);
    }
    int32_t per = n / archetypes;
    for (int32_t a = 0; a < archetypes; a++) {
        weft_value cols[2 + TAGS];
        int32_t k = 0;
        cols[k++] = (weft_value){b.pos, sizeof(bench_position), d->pos + (size_t)a * (size_t)per};
        cols[k++] = (weft_value){b.vel, sizeof(bench_velocity), d->vel + (size_t)a * (size_t)per};
        for (int t = 0; t < TAGS; t++) {
            if (a & (1 << t)) {
                cols[k++] = (weft_value){tags[t], 0, NULL};
            }
        }
        bench_world_expect(&b, "weft_spawn_bulk", weft_spawn_bulk(b.w, cols, k, per, NULL));
    }
    int32_t total = per * archetypes;
    bench_position *p = bench_xmalloc(sizeof *p * (size_t)total);
    memcpy(p, d->pos, sizeof *p * (size_t)total);
    weft_query *q = suite_pv_query(&b);
    int32_t loops = suite_loops(total, 1000000);
    double wv[64];
    double bv[64];
    int32_t reps = cfg->reps < 64 ? cfg->reps : 63;
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        uint64_t t0 = bench_now_ns();
        for (int32_t l = 0; l < loops; l++) {
            suite_pv_pass(&b, q);
        }
        uint64_t t1 = bench_now_ns();
        for (int32_t l = 0; l < loops; l++) {
            sys_movement(p, d->vel, total, SUITE_DT);
            __asm__ volatile("" : : "r"(p) : "memory");
        }
        uint64_t t2 = bench_now_ns();
        if (r >= 0) {
            wv[r] = suite_ns(t0, t1, (int64_t)total * loops);
            bv[r] = suite_ns(t1, t2, (int64_t)total * loops);
        }
    }
    bench_report_param(name, archetypes, "ns", bench_median(wv, reps),
                       bench_median(bv, reps), 0.0);
    free(p);
    bench_world_fini(&b);
}

void bench_suite_fragsweep(const bench_cfg *cfg, const bench_data *d)
{
    int32_t n = cfg->n < 100000 ? cfg->n : 100000;
    static const int32_t counts[5] = {1, 10, 100, 1000, 10000};
    for (int k = 0; k < 5; k++) {
        if (counts[k] <= n) {
            suite_frag_case(cfg, d, n, counts[k], "N13 fragmentation: 100k entities over A archetypes");
        }
    }
    if (n >= 1500) {
        suite_frag_case(cfg, d, 1500, 500, "N13 500 archetypes x 3 entities");
    }
}

/* N15: Changed(Position) pass with 1%, 10%, 100% of the rows changed. */
void bench_suite_changedpct(const bench_cfg *cfg, const bench_data *d)
{
    int32_t n = cfg->n < 100000 ? cfg->n : 100000;
    static const int32_t pct[3] = {1, 10, 100};
    bench_world b;
    bench_world_init(&b, "changedpct", 0, WEFT_STORAGE_DEFAULT, NULL);
    weft_entity *ents = bench_xmalloc(sizeof *ents * (size_t)n);
    bench_world_spawn_bulk(&b, d, n, ents);
    weft_query_desc qd;
    memset(&qd, 0, sizeof qd);
    qd.term_count = 2;
    qd.terms[0].id = b.pos;
    qd.terms[0].filter = WEFT_FILTER_CHANGED;
    qd.terms[1].id = b.vel;
    weft_query *cq = weft_query_create(b.w, &qd);
    qd.terms[0].filter = WEFT_FILTER_NONE;
    weft_query *fq = weft_query_create(b.w, &qd);
    if (cq == NULL || fq == NULL) {
        bench_world_expect(&b, "weft_query_create", weft_last_status(b.w));
    }
    /* The first run sees everything as changed. */
    weft_iter it;
    bench_world_expect(&b, "weft_query_iter", weft_query_iter(b.w, cq, &it));
    while (weft_iter_next(&it)) {
    }
    int32_t reps = cfg->reps < 64 ? cfg->reps : 63;
    for (int k = 0; k < 3; k++) {
        int32_t changed = (int32_t)((int64_t)n * pct[k] / 100);
        double wv[64];
        double bv[64];
        for (int32_t r = -cfg->warmup; r < reps; r++) {
            /* distinct random rows: the first `changed` perm values below n */
            for (int32_t i = 0, j = 0; i < changed; j++) {
                if (d->perm[j] >= n) {
                    continue;
                }
                bench_position *p = weft_get_mut(b.w, ents[d->perm[j]], b.pos, sizeof *p);
                i++;
                if (p == NULL) {
                    bench_world_expect(&b, "weft_get_mut", weft_last_status(b.w));
                }
                p->x += 1.0f;
            }
            double s1 = 0.0;
            double s2 = 0.0;
            int64_t seen = 0;
            uint64_t t0 = bench_now_ns();
            bench_world_expect(&b, "weft_query_iter", weft_query_iter(b.w, cq, &it));
            while (weft_iter_next(&it)) {
                const bench_position *p = weft_iter_field(&it, 0, sizeof *p);
                const bench_velocity *v = weft_iter_field(&it, 1, sizeof *v);
                int32_t c = weft_iter_count(&it);
                for (int32_t i = 0; i < c; i++) {
                    s1 += (double)(p[i].x + v[i].x);
                }
                seen += c;
            }
            uint64_t t1 = bench_now_ns();
            bench_world_expect(&b, "weft_query_iter", weft_query_iter(b.w, fq, &it));
            while (weft_iter_next(&it)) {
                const bench_position *p = weft_iter_field(&it, 0, sizeof *p);
                const bench_velocity *v = weft_iter_field(&it, 1, sizeof *v);
                int32_t c = weft_iter_count(&it);
                for (int32_t i = 0; i < c; i++) {
                    s2 += (double)(p[i].x + v[i].x);
                }
            }
            uint64_t t2 = bench_now_ns();
            if (seen != changed || s1 > s2 + 1e9) {
                bench_fail("changedpct", "Changed query", "saw a wrong number of rows");
            }
            if (r >= 0) {
                wv[r] = suite_ns(t0, t1, n);
                bv[r] = suite_ns(t1, t2, n);
            }
        }
        bench_report_param("N15 Changed pass vs full pass (per entity in the world)", pct[k],
                           "ns", bench_median(wv, reps), bench_median(bv, reps), 0.0);
    }
    free(ents);
    bench_world_fini(&b);
}

/* Memory: live bytes per entity for typical sets, with and without ticks. */
void bench_suite_memsets(const bench_cfg *cfg, const bench_data *d)
{
    (void)d;
    static const char *const names[4][2] = {
        {"memory Pos (ticks)", "memory Pos (no ticks)"},
        {"memory Pos+Vel (ticks)", "memory Pos+Vel (no ticks)"},
        {"memory Pos+Vel+Health (ticks)", "memory Pos+Vel+Health (no ticks)"},
        {"memory abeimler 6 components (ticks)", "memory abeimler 6 components (no ticks)"},
    };
    int32_t n = cfg->n;
    for (int set = 0; set < 4; set++) {
        for (int nt = 0; nt < 2; nt++) {
            uint32_t flags = nt ? WEFT_COMPONENT_NO_CHANGE_TICKS : 0;
            bench_world b;
            bench_world_init(&b, "memsets", flags, WEFT_STORAGE_DEFAULT, NULL);
            weft_component dc = bench_register(&b, "Data", sizeof(suite_data),
                                               WEFT_STORAGE_DEFAULT, flags);
            weft_component hc = bench_register(&b, "HealthA", sizeof(suite_health),
                                               WEFT_STORAGE_DEFAULT, flags);
            weft_component mc = bench_register(&b, "Damage", sizeof(suite_damage),
                                               WEFT_STORAGE_DEFAULT, flags);
            weft_component sc = bench_register(&b, "Sprite", sizeof(suite_sprite),
                                               WEFT_STORAGE_DEFAULT, flags);
            weft_value cols[6];
            int32_t k = 0;
            size_t packed = 8;
            cols[k++] = (weft_value){b.pos, sizeof(bench_position), NULL};
            packed += sizeof(bench_position);
            if (set >= 1) {
                cols[k++] = (weft_value){b.vel, sizeof(bench_velocity), NULL};
                packed += sizeof(bench_velocity);
            }
            if (set == 2) {
                cols[k++] = (weft_value){b.hp, sizeof(bench_health), NULL};
                packed += sizeof(bench_health);
            }
            if (set == 3) {
                cols[k++] = (weft_value){dc, sizeof(suite_data), NULL};
                cols[k++] = (weft_value){hc, sizeof(suite_health), NULL};
                cols[k++] = (weft_value){mc, sizeof(suite_damage), NULL};
                cols[k++] = (weft_value){sc, sizeof(suite_sprite), NULL};
                packed += sizeof(suite_data) + sizeof(suite_health) + sizeof(suite_damage) +
                          sizeof(suite_sprite);
            }
            weft_world_stats before;
            weft_world_stats after;
            bench_world_expect(&b, "weft_world_get_stats", weft_world_get_stats(b.w, &before));
            for (int32_t i = 0; i < n; i++) {
                if (weft_spawn_with(b.w, cols, k) == WEFT_ENTITY_NONE) {
                    bench_world_expect(&b, "weft_spawn_with", weft_last_status(b.w));
                }
            }
            bench_world_expect(&b, "weft_world_get_stats", weft_world_get_stats(b.w, &after));
            double per = (double)(after.live_bytes - before.live_bytes) / (double)n;
            bench_report_param(names[set][nt], n, "B", per, (double)packed, 0.0);
            bench_world_fini(&b);
        }
    }
}

/* bench/scenarios_require.c - required components: what requiring costs.
 * SPDX-License-Identifier: MIT
 *
 * Every row compares two ways of building the same entities through weft,
 * measured in the same run on fresh worlds (one per variant and
 * repetition), so the ratio is what requirements cost over spelling every
 * component out:
 *  - spawn: N weft_spawn_with calls supplying only Position, which
 *           requires Velocity (value-blob default {1, -1}) and Health
 *           (value-blob default {100}), vs N weft_spawn_with calls
 *           supplying all three (the same default values) in a world
 *           where nothing requires anything. Target: ratio <= 1.1.
 *  - bulk:  one weft_spawn_bulk of N with the Position column only vs one
 *           with Position, Velocity and Health columns (the default
 *           values, prepared outside the timed region). No target is
 *           given for it.
 * Both variants of a row run in every repetition, in alternating order;
 * each figure is the median over the repetitions, and the ratio is the
 * median of the per-repetition ratios. Times are the thread's CPU time
 * (bench_cpu_ns), as in scenarios_events.c. World creation, registration
 * and destruction are outside the timed region. The first repetition is
 * verified: live count, weft_world_check, component count per entity and
 * values read back on a sample of entities.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft.h"

static const bench_velocity RQ_VEL_DEFAULT = {1.0f, -1.0f};
static const bench_health RQ_HP_DEFAULT = {100};

typedef struct rq_world {
    weft_world *w;
    weft_component pos, vel, hp;
    const char *scenario;
} rq_world;

static void rq_expect(const rq_world *b, const char *what, weft_status st)
{
    if (st != WEFT_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s: %s", weft_status_name(st), weft_last_error(b->w));
        bench_fail(b->scenario, what, detail);
    }
}

static weft_component rq_register(rq_world *b, const char *name, size_t size,
                                  const weft_require *reqs, int32_t count)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    d.required = reqs;
    d.required_count = count;
    weft_component c = weft_component_register(b->w, &d);
    if (c == 0) {
        rq_expect(b, "weft_component_register", weft_last_status(b->w));
        bench_fail(b->scenario, "weft_component_register", "0 without an error");
    }
    return c;
}

/* With `required`, Position requires Velocity and Health (value defaults);
 * without, nothing requires anything. */
static void rq_init(rq_world *b, const char *scenario, bool required)
{
    memset(b, 0, sizeof *b);
    b->scenario = scenario;
    b->w = weft_world_create(NULL);
    if (b->w == NULL) {
        bench_fail(scenario, "weft_world_create", "returned NULL");
    }
    b->vel = rq_register(b, "Velocity", sizeof(bench_velocity), NULL, 0);
    b->hp = rq_register(b, "Health", sizeof(bench_health), NULL, 0);
    weft_require reqs[2];
    memset(reqs, 0, sizeof reqs);
    reqs[0].id = b->vel;
    reqs[0].value = &RQ_VEL_DEFAULT;
    reqs[0].size = sizeof RQ_VEL_DEFAULT;
    reqs[1].id = b->hp;
    reqs[1].value = &RQ_HP_DEFAULT;
    reqs[1].size = sizeof RQ_HP_DEFAULT;
    b->pos = rq_register(b, "Position", sizeof(bench_position), required ? reqs : NULL,
                         required ? 2 : 0);
}

static void rq_fini(rq_world *b)
{
    weft_world_destroy(b->w);
    b->w = NULL;
}

static void rq_verify(const rq_world *b, const bench_data *d, const weft_entity *ents,
                      int32_t n)
{
    weft_world_stats s;
    rq_expect(b, "weft_world_get_stats", weft_world_get_stats(b->w, &s));
    if (s.live_entities != n) {
        bench_fail(b->scenario, "live entity count", "differs from N");
    }
    rq_expect(b, "weft_world_check", weft_world_check(b->w));
    for (int32_t i = 0; i < n; i += 997) {
        const bench_position *p = weft_get(b->w, ents[i], b->pos, sizeof *p);
        const bench_velocity *v = weft_get(b->w, ents[i], b->vel, sizeof *v);
        const bench_health *h = weft_get(b->w, ents[i], b->hp, sizeof *h);
        if (!p || !v || !h) {
            bench_fail(b->scenario, "weft_get", "a component is missing");
        }
        if (p->x != d->pos[i].x || p->y != d->pos[i].y || v->x != RQ_VEL_DEFAULT.x ||
            v->y != RQ_VEL_DEFAULT.y || h->hp != RQ_HP_DEFAULT.hp) {
            bench_fail(b->scenario, "weft_get", "wrong value read back");
        }
        weft_archetype_info ai;
        rq_expect(b, "weft_archetype_info_get",
                  weft_archetype_info_get(b->w, weft_entity_archetype(b->w, ents[i]), &ai));
        if (ai.component_count != 3) {
            bench_fail(b->scenario, "archetype", "entity does not have exactly 3 components");
        }
    }
}

/* ---- one repetition of each variant: ns per entity ---- */

typedef double (*rq_rep_fn)(const bench_cfg *cfg, const bench_data *d, bool verify,
                            weft_entity *ents, const bench_velocity *vels,
                            const bench_health *hps);

static double rq_spawn_required(const bench_cfg *cfg, const bench_data *d, bool verify,
                                weft_entity *ents, const bench_velocity *vels,
                                const bench_health *hps)
{
    (void)vels, (void)hps;
    rq_world b;
    rq_init(&b, "require", true);
    int32_t n = cfg->n;
    weft_value v = {b.pos, sizeof(bench_position), NULL};
    uint64_t t0 = bench_cpu_ns();
    for (int32_t i = 0; i < n; i++) {
        v.ptr = &d->pos[i];
        ents[i] = weft_spawn_with(b.w, &v, 1);
    }
    uint64_t t1 = bench_cpu_ns();
    if (verify) {
        for (int32_t i = 0; i < n; i++) {
            if (ents[i] == 0) {
                rq_expect(&b, "weft_spawn_with", weft_last_status(b.w));
            }
        }
        rq_verify(&b, d, ents, n);
    }
    rq_fini(&b);
    return (double)(t1 - t0) / (double)n;
}

static double rq_spawn_explicit(const bench_cfg *cfg, const bench_data *d, bool verify,
                                weft_entity *ents, const bench_velocity *vels,
                                const bench_health *hps)
{
    (void)vels, (void)hps;
    rq_world b;
    rq_init(&b, "require", false);
    int32_t n = cfg->n;
    weft_value v[3] = {{b.pos, sizeof(bench_position), NULL},
                       {b.vel, sizeof(bench_velocity), &RQ_VEL_DEFAULT},
                       {b.hp, sizeof(bench_health), &RQ_HP_DEFAULT}};
    uint64_t t0 = bench_cpu_ns();
    for (int32_t i = 0; i < n; i++) {
        v[0].ptr = &d->pos[i];
        ents[i] = weft_spawn_with(b.w, v, 3);
    }
    uint64_t t1 = bench_cpu_ns();
    if (verify) {
        for (int32_t i = 0; i < n; i++) {
            if (ents[i] == 0) {
                rq_expect(&b, "weft_spawn_with", weft_last_status(b.w));
            }
        }
        rq_verify(&b, d, ents, n);
    }
    rq_fini(&b);
    return (double)(t1 - t0) / (double)n;
}

static double rq_bulk_required(const bench_cfg *cfg, const bench_data *d, bool verify,
                               weft_entity *ents, const bench_velocity *vels,
                               const bench_health *hps)
{
    (void)vels, (void)hps;
    rq_world b;
    rq_init(&b, "require", true);
    int32_t n = cfg->n;
    weft_value col = {b.pos, sizeof(bench_position), d->pos};
    uint64_t t0 = bench_cpu_ns();
    weft_status st = weft_spawn_bulk(b.w, &col, 1, n, ents);
    uint64_t t1 = bench_cpu_ns();
    rq_expect(&b, "weft_spawn_bulk", st);
    if (verify) {
        rq_verify(&b, d, ents, n);
    }
    rq_fini(&b);
    return (double)(t1 - t0) / (double)n;
}

static double rq_bulk_explicit(const bench_cfg *cfg, const bench_data *d, bool verify,
                               weft_entity *ents, const bench_velocity *vels,
                               const bench_health *hps)
{
    rq_world b;
    rq_init(&b, "require", false);
    int32_t n = cfg->n;
    weft_value cols[3] = {{b.pos, sizeof(bench_position), d->pos},
                          {b.vel, sizeof(bench_velocity), vels},
                          {b.hp, sizeof(bench_health), hps}};
    uint64_t t0 = bench_cpu_ns();
    weft_status st = weft_spawn_bulk(b.w, cols, 3, n, ents);
    uint64_t t1 = bench_cpu_ns();
    rq_expect(&b, "weft_spawn_bulk", st);
    if (verify) {
        rq_verify(&b, d, ents, n);
    }
    rq_fini(&b);
    return (double)(t1 - t0) / (double)n;
}

/* ---- the driver: both variants every repetition, order alternating ---- */

typedef struct rq_pair {
    double a;     /* median of variant A (the table's "weft" column) */
    double b;     /* median of variant B (the table's "baseline" column) */
    double ratio; /* median of the per-repetition ratios a / b */
} rq_pair;

static rq_pair rq_run(const char *name, const bench_cfg *cfg, const bench_data *d,
                      rq_rep_fn fa, rq_rep_fn fb, weft_entity *ents,
                      const bench_velocity *vels, const bench_health *hps)
{
    int32_t reps = cfg->reps;
    double *va = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *vb = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *vr = bench_xmalloc(sizeof(double) * (size_t)reps);
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        bool first = r == -cfg->warmup;
        double a, b;
        if (((r + cfg->warmup) & 1) == 0) {
            a = fa(cfg, d, first, ents, vels, hps);
            b = fb(cfg, d, first, ents, vels, hps);
        } else {
            b = fb(cfg, d, first, ents, vels, hps);
            a = fa(cfg, d, first, ents, vels, hps);
        }
        bench_trace(cfg, name, "weft", r, a);
        bench_trace(cfg, name, "baseline", r, b);
        if (r >= 0) {
            va[r] = a;
            vb[r] = b;
            vr[r] = b > 0.0 ? a / b : 0.0;
        }
    }
    rq_pair out;
    out.a = bench_median(va, reps);
    out.b = bench_median(vb, reps);
    out.ratio = bench_median(vr, reps);
    free(va);
    free(vb);
    free(vr);
    return out;
}

void bench_require(const bench_cfg *cfg, const bench_data *data)
{
    int32_t n = cfg->n;
    weft_entity *ents = bench_xmalloc(sizeof(weft_entity) * (size_t)n);
    bench_velocity *vels = bench_xmalloc(sizeof(bench_velocity) * (size_t)n);
    bench_health *hps = bench_xmalloc(sizeof(bench_health) * (size_t)n);
    for (int32_t i = 0; i < n; i++) {
        vels[i] = RQ_VEL_DEFAULT;
        hps[i] = RQ_HP_DEFAULT;
    }
    rq_pair sp = rq_run("require spawn", cfg, data, rq_spawn_required, rq_spawn_explicit, ents,
                        vels, hps);
    rq_pair bk = rq_run("require bulk", cfg, data, rq_bulk_required, rq_bulk_explicit, ents,
                        vels, hps);
    bench_report_ratio("spawn Pos(requires Vel+Hp) vs all 3", "ns", sp.a, sp.b, 1.1);
    bench_report_ratio("bulk Pos(requires Vel+Hp) vs all 3", "ns", bk.a, bk.b, 0.0);
    bench_note("require: spawn_with, Position requiring Velocity+Health vs all three "
               "supplied: %.2f vs %.2f ns/entity, median per-rep ratio %.3f (target 1.1)",
               sp.a, sp.b, sp.ratio);
    bench_note("require: spawn_bulk of N, Position column only vs three columns: %.2f vs "
               "%.2f ns/entity, median per-rep ratio %.3f (no target)",
               bk.a, bk.b, bk.ratio);
    free(ents);
    free(vels);
    free(hps);
}

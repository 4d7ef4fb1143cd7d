/* bench/bench_sched.c - scheduler scenarios (targets in bench/targets.txt; N24, N25, N26).
 * SPDX-License-Identifier: MIT
 *
 * Every scenario measures weft and its baseline in the same run, in
 * alternating blocks (the executor is switched with weft_world_set_threads
 * between blocks, outside the timed regions), and reports medians.
 *
 *  sched_empty     1,000 and 6,000 empty systems, each declaring a write to
 *                  its own resource (nothing conflicts); one schedule run =
 *                  one sample; ns per system on 1 thread and on the 2-thread
 *                  pool (fork/join included), vs a plain loop calling as many
 *                  empty functions through an array of function pointers.
 *                  Targets: <= 50 ns / system on 1 thread, <= 150 ns on 2;
 *                  6,000 within 1.2x of 1,000 per system. The absolute
 *                  targets also appear as "budget" rows (baseline = the
 *                  budget, ratio target 1.0) so --check can test them.
 *  sched_heavy2    two independent systems, each ~1.5 ms of arithmetic over
 *                  its own component column (size calibrated at start-up):
 *                  2 threads vs 1 (target >= 1.9x speedup, flecs 1.00x), and
 *                  1 thread vs the two kernels called directly.
 *  par_iter        one system, weft_system_par_each of a sqrt/sin/cos kernel
 *                  over 1M and over 4,096 entities (the smallest size the
 *                  default min_rows splits; the bench fails unless the
 *                  2-thread run used >= 2 chunk tasks): 2 threads vs 1
 *                  (target >= 1.95x at 1M, >= 1.25x at 4,096), and vs a
 *                  plain C loop and a plain C 2-way split on a persistent
 *                  pthread (condition-variable handoff per pass).
 *  par_sweep       N26: par_each on 2 threads vs the same system on 1 thread,
 *                  N = 2^6 .. the smallest power of two >= min(--n, 2^20)
 *                  (2^20 by default, 2^17 with --quick) x kernel weight
 *                  (light: 1 add; medium: 10 flops; heavy: 100 flops), with
 *                  the default min_rows (1024) and with min_rows 64 (forced
 *                  split). The output column has no change ticks, so a
 *                  kernel's weight is what its label says.
 *  sched_overhead  N25: 10 .. 6,000 empty systems, ns per system on 1 and 2
 *                  threads vs the function-pointer loop (runs batched so a
 *                  sample holds >= 10,000 system runs); and the one build
 *                  of each schedule, us per system vs the 10-system build
 *                  (a single sample: a growth curve, not a precise figure).
 *  sched_sync      N24: 8 writers (emit commands: despawn last run's
 *                  entities, spawn 64 new ones) and 8 readers (verify they
 *                  see exactly this run's 64), interleaved by a chain
 *                  W1 R1 W2 R2 .. (8 sync points) vs grouped as two ordered
 *                  sets (1 sync point); time per run on 1 and 2 threads,
 *                  with the commands only and with ~20 us of compute per
 *                  system (+compute: k_heavy over 384 private floats).
 *  sched_build     weft_schedule_build for 100, 500, 2,000 systems with
 *                  seeded random access (1-3 query terms over 64 components,
 *                  30% writes, half with a resource), a quarter with an edge
 *                  from a random earlier system, a tenth emitting commands;
 *                  build time vs linear growth from the 100-system build.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_world.h"
#include "weft.h"

#if defined(__GNUC__)
#define SCH_NOINLINE __attribute__((noinline))
#else
#define SCH_NOINLINE
#endif

enum { SCH_MAX_SAMPLES = 4096 };

/* ---- shared helpers ---- */

static weft_node sch_add_system(bench_world *b, weft_schedule *s, const char *name,
                                weft_system_fn fn, void *user, const weft_query_desc *queries,
                                int32_t query_count, const weft_resource_use *res,
                                int32_t res_count, uint32_t flags)
{
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.fn = fn;
    d.user = user;
    d.queries = queries;
    d.query_count = query_count;
    d.resources = res;
    d.resource_count = res_count;
    d.flags = flags;
    weft_node n = weft_schedule_add_system(s, &d);
    if (n == WEFT_NODE_NONE) {
        bench_world_expect(b, "weft_schedule_add_system", weft_last_status(b->w));
        bench_fail(b->scenario, "weft_schedule_add_system", "returned 0 with no error");
    }
    return n;
}

static weft_schedule *sch_create(bench_world *b, const char *name)
{
    weft_schedule *s = weft_schedule_create(b->w, name);
    if (s == NULL) {
        bench_world_expect(b, "weft_schedule_create", weft_last_status(b->w));
        bench_fail(b->scenario, "weft_schedule_create", "returned NULL");
    }
    return s;
}

static void sch_threads(bench_world *b, int32_t threads)
{
    bench_world_expect(b, "weft_world_set_threads", weft_world_set_threads(b->w, threads));
    if (weft_world_threads(b->w) != threads) {
        char detail[96];
        snprintf(detail, sizeof detail, "asked for %d threads, executor has %d", (int)threads,
                 (int)weft_world_threads(b->w));
        bench_fail(b->scenario, "weft_world_set_threads", detail);
    }
}

static void sch_run(bench_world *b, weft_schedule *s)
{
    bench_world_expect(b, "weft_schedule_run", weft_schedule_run(s, 1.0 / 60.0));
}

static double sch_ns(uint64_t t0, uint64_t t1, int64_t count)
{
    return (double)(t1 - t0) / (double)count;
}

static int32_t sch_reps(const bench_cfg *cfg)
{
    return cfg->reps < 64 ? cfg->reps : 64;
}

static uint64_t sch_runs_of(const bench_world *b, weft_schedule *s, weft_node n)
{
    weft_system_stats st;
    bench_world_expect(b, "weft_schedule_system_stats", weft_schedule_system_stats(s, n, &st));
    return st.runs;
}

/* A float in [0, 0.9): kernel inputs that keep every result bounded and
 * away from denormals. */
static float sch_unit(uint64_t *rng)
{
    return (float)(bench_rng_next(rng) % 9000u) * 1e-4f;
}

/* ---- kernels (shared by weft systems and their plain C baselines) ---- */

/* light: 1 add per element. */
static SCH_NOINLINE void k_light(const float *in, float *out, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        out[i] = in[i] + 1.0f;
    }
}

/* medium: degree-5 Horner, 10 flops per element. */
static SCH_NOINLINE void k_medium(const float *in, float *out, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        float x = in[i];
        out[i] = ((((0.05f * x + 0.1f) * x + 0.2f) * x + 0.3f) * x + 0.4f) * x + 0.5f;
    }
}

/* heavy: 50 dependent multiply-adds, 100 flops per element; the result
 * stays in [0.05, 0.5] for inputs in [0, 0.9). */
static SCH_NOINLINE void k_heavy(const float *in, float *out, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        float x = in[i];
        float y = 0.5f;
        for (int k = 0; k < 50; k++) {
            y = y * x + 0.05f;
        }
        out[i] = y;
    }
}

/* par_iter's kernel: a few sqrt / sin / cos per entity, from Position. */
static SCH_NOINLINE void k_trig(const bench_position *p, float *out, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        float a = p[i].x * (1.0f / 1024.0f);
        float b = p[i].y * (1.0f / 1024.0f);
        out[i] = sqrtf(a * a + b * b) + sinf(a) * cosf(b) + sqrtf(fabsf(a - b) + 1.0f) +
                 sinf(a * b);
    }
}

/* ---- empty systems: sched_empty and sched_overhead (N25) ---- */

typedef void (*sch_fn)(weft_system_ctx *ctx, void *user);

static void sch_empty_system(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
}

/* The baseline's callee: the same empty body, reached through an array. */
static SCH_NOINLINE void sch_nop(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
}

enum { SCH_MAX_EMPTY = 6000 };
static sch_fn g_fns[SCH_MAX_EMPTY];
static void *g_users[SCH_MAX_EMPTY];

static SCH_NOINLINE void sch_fill_fns(void)
{
    for (int32_t i = 0; i < SCH_MAX_EMPTY; i++) {
        g_fns[i] = sch_nop;
        g_users[i] = &g_users[i];
    }
}

static SCH_NOINLINE void sch_call_all(int32_t count)
{
    for (int32_t i = 0; i < count; i++) {
        g_fns[i](NULL, g_users[i]);
    }
}

typedef struct sch_empty_world {
    bench_world b;
    weft_schedule *s;
    int32_t count;
    double build_ns; /* the one weft_schedule_build, ns */
} sch_empty_world;

static void sch_empty_make(sch_empty_world *e, const char *scenario, int32_t count)
{
    bench_world_init(&e->b, scenario, 0, WEFT_STORAGE_DEFAULT, NULL);
    e->count = count;
    e->s = sch_create(&e->b, "empty");
    char name[32];
    for (int32_t i = 0; i < count; i++) {
        snprintf(name, sizeof name, "R%d", (int)i);
        weft_component r = bench_register(&e->b, name, sizeof(int32_t), WEFT_STORAGE_DEFAULT, 0);
        weft_resource_use use = {r, WEFT_ACCESS_WRITE};
        snprintf(name, sizeof name, "S%d", (int)i);
        sch_add_system(&e->b, e->s, name, sch_empty_system, NULL, NULL, 0, &use, 1, 0);
    }
    uint64_t t0 = bench_now_ns();
    bench_world_expect(&e->b, "weft_schedule_build", weft_schedule_build(e->s));
    e->build_ns = (double)(bench_now_ns() - t0);
    if (weft_schedule_ambiguity_count(e->s) != 0) {
        bench_fail(scenario, "weft_schedule_build", "disjoint systems reported ambiguous");
    }
}

typedef struct sch_empty_result {
    double t1;       /* ns per system, 1 thread */
    double t2;       /* ns per system, 2 threads */
    double base;     /* ns per call through the function-pointer array */
    int32_t conc2;   /* max concurrency seen on 2 threads */
} sch_empty_result;

/* `per_sample` runs per timed sample, `samples` samples per block and
 * executor; blocks alternate 1 thread, 2 threads, baseline. */
static sch_empty_result sch_empty_measure(const bench_cfg *cfg, sch_empty_world *e,
                                          int32_t per_sample, int32_t samples)
{
    int32_t reps = sch_reps(cfg);
    int32_t total = reps * samples;
    if (total > SCH_MAX_SAMPLES) {
        samples = SCH_MAX_SAMPLES / reps;
        total = reps * samples;
    }
    double *v1 = bench_xmalloc(sizeof *v1 * (size_t)total);
    double *v2 = bench_xmalloc(sizeof *v2 * (size_t)total);
    double *vb = bench_xmalloc(sizeof *vb * (size_t)total);
    int64_t per = (int64_t)per_sample * e->count;
    uint64_t expected = sch_runs_of(&e->b, e->s, 1);
    sch_empty_result res = {0.0, 0.0, 0.0, 0};
    /* the build without threads (WEFT_THREADS=OFF) measures 1 thread only */
    int32_t tmax = weft_max_threads() < 2 ? 1 : 2;
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        for (int32_t t = 1; t <= tmax; t++) {
            sch_threads(&e->b, t);
            sch_run(&e->b, e->s); /* wakes a fresh pool, warms the caches */
            expected++;
            for (int32_t k = 0; k < samples; k++) {
                uint64_t t0 = bench_now_ns();
                for (int32_t i = 0; i < per_sample; i++) {
                    sch_run(&e->b, e->s);
                }
                uint64_t t1 = bench_now_ns();
                expected += (uint64_t)per_sample;
                if (r >= 0) {
                    (t == 1 ? v1 : v2)[r * samples + k] = sch_ns(t0, t1, per);
                }
            }
            if (t == 2) {
                int32_t c = weft_schedule_max_concurrency(e->s);
                res.conc2 = c > res.conc2 ? c : res.conc2;
            }
        }
        for (int32_t k = 0; k < samples; k++) {
            uint64_t t0 = bench_now_ns();
            for (int32_t i = 0; i < per_sample; i++) {
                sch_call_all(e->count);
            }
            uint64_t t1 = bench_now_ns();
            if (r >= 0) {
                vb[r * samples + k] = sch_ns(t0, t1, per);
            }
        }
    }
    /* Every system ran every time: check the first and the last. */
    if (sch_runs_of(&e->b, e->s, 1) != expected ||
        sch_runs_of(&e->b, e->s, (weft_node)e->count) != expected) {
        bench_fail(e->b.scenario, "system stats", "a system did not run on every schedule run");
    }
    sch_threads(&e->b, 1);
    res.t1 = bench_median(v1, total);
    res.t2 = tmax == 2 ? bench_median(v2, total) : 0.0;
    res.base = bench_median(vb, total);
    free(v1);
    free(v2);
    free(vb);
    return res;
}

void bench_sched_empty(const bench_cfg *cfg, const bench_data *data)
{
    (void)data;
    sch_fill_fns();
    static const int32_t counts[2] = {1000, 6000};
    sch_empty_result res[2];
    for (int k = 0; k < 2; k++) {
        sch_empty_world e;
        sch_empty_make(&e, "sched_empty", counts[k]);
        res[k] = sch_empty_measure(cfg, &e, 1, 40);
        bench_world_fini(&e.b);
    }
    bench_report("sched_empty 1000 systems, 1 thread (ns/system)", "ns", res[0].t1,
                 res[0].base, 50.0);
    bench_report("sched_empty 6000 systems, 1 thread (ns/system)", "ns", res[1].t1,
                 res[1].base, 0.0);
    bench_report_ratio("sched_empty 6000 vs 1000 systems, 1 thread", "ns", res[1].t1, res[0].t1,
                       1.2);
    bench_report_ratio("sched_empty 1000 systems, 1 thread vs 50 ns budget", "ns", res[0].t1,
                       50.0, 1.0);
    if (weft_max_threads() < 2) {
        bench_note("sched_empty: built without threads (WEFT_THREADS=OFF): no 2-thread rows");
        return;
    }
    bench_report("sched_empty 1000 systems, 2 threads (ns/system)", "ns", res[0].t2,
                 res[0].base, 150.0);
    bench_report("sched_empty 6000 systems, 2 threads (ns/system)", "ns", res[1].t2,
                 res[1].base, 0.0);
    bench_report_ratio("sched_empty 6000 vs 1000 systems, 2 threads", "ns", res[1].t2,
                       res[0].t2, 1.2);
    bench_report_ratio("sched_empty 1000 systems, 2 threads vs 150 ns budget", "ns", res[0].t2,
                       150.0, 1.0);
    bench_note("sched_empty: baseline = one call through an array of function pointers; "
               "1,000 systems: %.1f / %.1f ns per system (1 / 2 threads) = %.0f / %.0f us "
               "per run; 6,000: %.1f / %.1f ns; max concurrency on 2 threads: %d (1,000), "
               "%d (6,000)",
               res[0].t1, res[0].t2, res[0].t1 * 1e-3 * 1000, res[0].t2 * 1e-3 * 1000,
               res[1].t1, res[1].t2, (int)res[0].conc2, (int)res[1].conc2);
}

void bench_sched_overhead(const bench_cfg *cfg, const bench_data *data)
{
    (void)data;
    sch_fill_fns();
    static const int32_t counts[] = {10, 30, 100, 300, 1000, 3000, 6000};
    double build10 = 0.0;
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        sch_empty_world e;
        sch_empty_make(&e, "sched_overhead", counts[k]);
        double build = e.build_ns * 1e-3 / counts[k];
        build10 = k == 0 ? build : build10;
        int32_t per_sample = 10000 / counts[k];
        per_sample = per_sample < 1 ? 1 : per_sample;
        sch_empty_result res = sch_empty_measure(cfg, &e, per_sample, 10);
        bench_world_fini(&e.b);
        bench_report_param("N25 scheduler overhead, 1 thread (ns/system)", counts[k], "ns",
                           res.t1, res.base, 0.0);
        if (weft_max_threads() >= 2) { /* none in the build without threads */
            bench_report_param("N25 scheduler overhead, 2 threads (ns/system)", counts[k], "ns",
                               res.t2, res.base, 0.0);
        }
        bench_report_param("N25 build, disjoint systems, vs 10 systems (us/system)", counts[k],
                           "us", build, build10, 0.0);
    }
}

/* ---- sched_heavy2: two independent ~1.5 ms systems ---- */

static void sch_heavy_system(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    weft_status st = weft_system_iter(ctx, 0, &it);
    if (st != WEFT_OK) {
        weft_system_fail(ctx, st, "weft_system_iter");
        return;
    }
    while (weft_iter_next(&it)) {
        float *v = weft_iter_field_mut(&it, 0, sizeof *v);
        if (v == NULL) {
            weft_iter_fini(&it);
            weft_system_fail(ctx, WEFT_ERR_INTERNAL, "no column");
            return;
        }
        k_heavy(v, v, weft_iter_count(&it));
    }
}

void bench_sched_heavy2(const bench_cfg *cfg, const bench_data *data)
{
    (void)data;
    /* Calibrate: elements per system for ~1.5 ms of k_heavy. */
    enum { CAL = 4096 };
    float *cal = bench_xmalloc(sizeof *cal * CAL);
    uint64_t rng = cfg->seed ^ 0x4ea7u;
    for (int32_t i = 0; i < CAL; i++) {
        cal[i] = sch_unit(&rng);
    }
    double cv[5];
    for (int k = 0; k < 5; k++) {
        uint64_t t0 = bench_now_ns();
        k_heavy(cal, cal, CAL);
        cv[k] = sch_ns(t0, bench_now_ns(), CAL);
    }
    double per_elem = bench_median(cv, 5);
    free(cal);
    int64_t want = (int64_t)(1.5e6 / (per_elem > 0.01 ? per_elem : 0.01));
    want = (want + 1023) / 1024 * 1024;
    want = want < 4096 ? 4096 : (want > (1 << 22) ? (1 << 22) : want);
    int32_t n = (int32_t)want;

    bench_world b;
    bench_world_init(&b, "sched_heavy2", 0, WEFT_STORAGE_DEFAULT, NULL);
    weft_component ca = bench_register(&b, "HeavyA", sizeof(float), WEFT_STORAGE_DEFAULT, 0);
    weft_component cb = bench_register(&b, "HeavyB", sizeof(float), WEFT_STORAGE_DEFAULT, 0);
    float *pa = bench_xmalloc(sizeof *pa * (size_t)n);
    float *pb = bench_xmalloc(sizeof *pb * (size_t)n);
    for (int32_t i = 0; i < n; i++) {
        pa[i] = sch_unit(&rng);
        pb[i] = sch_unit(&rng);
    }
    weft_value cols[2] = {{ca, sizeof(float), pa}, {cb, sizeof(float), pb}};
    bench_world_expect(&b, "weft_spawn_bulk", weft_spawn_bulk(b.w, cols, 2, n, NULL));
    weft_schedule *s = sch_create(&b, "heavy2");
    weft_query_desc qa;
    memset(&qa, 0, sizeof qa);
    qa.term_count = 1;
    qa.terms[0].id = ca;
    qa.terms[0].access = WEFT_ACCESS_WRITE;
    weft_query_desc qb = qa;
    qb.terms[0].id = cb;
    sch_add_system(&b, s, "heavy_a", sch_heavy_system, NULL, &qa, 1, NULL, 0, 0);
    sch_add_system(&b, s, "heavy_b", sch_heavy_system, NULL, &qb, 1, NULL, 0, 0);
    bench_world_expect(&b, "weft_schedule_build", weft_schedule_build(s));

    int32_t reps = sch_reps(cfg);
    double v1[64];
    double v2[64];
    double vp[64];
    int32_t conc = 0;
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        sch_threads(&b, 1);
        sch_run(&b, s);
        uint64_t t0 = bench_now_ns();
        sch_run(&b, s);
        uint64_t t1 = bench_now_ns();
        sch_threads(&b, 2);
        sch_run(&b, s);
        uint64_t t2 = bench_now_ns();
        sch_run(&b, s);
        uint64_t t3 = bench_now_ns();
        int32_t c = weft_schedule_max_concurrency(s);
        conc = c > conc ? c : conc;
        uint64_t t4 = bench_now_ns();
        k_heavy(pa, pa, n);
        k_heavy(pb, pb, n);
        uint64_t t5 = bench_now_ns();
        if (r >= 0) {
            v1[r] = (double)(t1 - t0) * 1e-3;
            v2[r] = (double)(t3 - t2) * 1e-3;
            vp[r] = (double)(t5 - t4) * 1e-3;
        }
    }
    sch_threads(&b, 1);
    double m1 = bench_median(v1, reps);
    double m2 = bench_median(v2, reps);
    double mp = bench_median(vp, reps);
    bench_report_ratio("sched_heavy2 2 threads vs 1 thread (us/run)", "us", m2, m1,
                       1.0 / 1.9);
    bench_report_ratio("sched_heavy2 1 thread vs the kernels called directly", "us", m1, mp,
                       0.0);
    bench_note("sched_heavy2: 2 systems x %d entities x 100 flops (~%.2f ms each); speedup on "
               "2 threads %.2fx (target >= 1.9x, flecs 1.00x); max concurrency %d",
               (int)n, mp * 0.5e-3, m1 / m2, (int)conc);
    free(pa);
    free(pb);
    bench_world_fini(&b);
}

/* ---- par_iter: par_each of a heavy kernel, 1M and 4,096 entities ---- */

typedef struct sch_par_sys {
    weft_chunk_fn fn;
    int32_t min_rows;
    void *user; /* passed to fn */
} sch_par_sys;

static void sch_par_system(weft_system_ctx *ctx, void *user)
{
    const sch_par_sys *p = user;
    weft_status st = weft_system_par_each(ctx, 0, p->fn, p->user, p->min_rows);
    if (st != WEFT_OK) {
        weft_system_fail(ctx, st, "weft_system_par_each");
    }
}

/* user: an atomic counter of the chunk tasks run, or NULL. */
static void sch_trig_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    if (user != NULL) {
        atomic_fetch_add_explicit((atomic_int *)user, 1, memory_order_relaxed);
    }
    while (weft_iter_next(it)) {
        const bench_position *p = weft_iter_field(it, 0, sizeof *p);
        float *o = weft_iter_field_mut(it, 1, sizeof *o);
        if (p != NULL && o != NULL) {
            k_trig(p, o, weft_iter_count(it));
        }
    }
}

/* A plain C 2-way split: one persistent helper thread, handed each pass
 * through a mutex and condition variable (the minimal fork/join). */
typedef struct sch_split {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t go;
    pthread_cond_t done;
    uint64_t gen_go;
    uint64_t gen_done;
    bool quit;
    const bench_position *p;
    float *o;
    int32_t n;
} sch_split;

static void *sch_split_main(void *arg)
{
    sch_split *sp = arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&sp->mu);
    for (;;) {
        while (sp->gen_go == seen && !sp->quit) {
            pthread_cond_wait(&sp->go, &sp->mu);
        }
        if (sp->quit) {
            break;
        }
        seen = sp->gen_go;
        int32_t half = sp->n / 2;
        pthread_mutex_unlock(&sp->mu);
        k_trig(sp->p + half, sp->o + half, sp->n - half);
        pthread_mutex_lock(&sp->mu);
        sp->gen_done = seen;
        pthread_cond_signal(&sp->done);
    }
    pthread_mutex_unlock(&sp->mu);
    return NULL;
}

static void sch_split_start(sch_split *sp, const bench_position *p, float *o, int32_t n)
{
    memset(sp, 0, sizeof *sp);
    sp->p = p;
    sp->o = o;
    sp->n = n;
    pthread_mutex_init(&sp->mu, NULL);
    pthread_cond_init(&sp->go, NULL);
    pthread_cond_init(&sp->done, NULL);
    if (pthread_create(&sp->thread, NULL, sch_split_main, sp) != 0) {
        bench_fail("par_iter", "pthread_create", "failed");
    }
}

static void sch_split_pass(sch_split *sp)
{
    pthread_mutex_lock(&sp->mu);
    uint64_t g = ++sp->gen_go;
    pthread_cond_signal(&sp->go);
    pthread_mutex_unlock(&sp->mu);
    k_trig(sp->p, sp->o, sp->n / 2);
    pthread_mutex_lock(&sp->mu);
    while (sp->gen_done != g) {
        pthread_cond_wait(&sp->done, &sp->mu);
    }
    pthread_mutex_unlock(&sp->mu);
}

static void sch_split_stop(sch_split *sp)
{
    pthread_mutex_lock(&sp->mu);
    sp->quit = true;
    pthread_cond_signal(&sp->go);
    pthread_mutex_unlock(&sp->mu);
    pthread_join(sp->thread, NULL);
    pthread_mutex_destroy(&sp->mu);
    pthread_cond_destroy(&sp->go);
    pthread_cond_destroy(&sp->done);
}

typedef struct sch_par_result {
    double w1, w2, loop, split; /* ns per entity */
    int32_t tasks2;             /* chunk tasks of one 2-thread run */
} sch_par_result;

static sch_par_result sch_par_case(const bench_cfg *cfg, int32_t n, uint64_t seed)
{
    bench_world b;
    bench_world_init(&b, "par_iter", 0, WEFT_STORAGE_DEFAULT, NULL);
    weft_component out = bench_register(&b, "Out", sizeof(float), WEFT_STORAGE_DEFAULT, 0);
    bench_position *pos = bench_xmalloc(sizeof *pos * (size_t)n);
    float *po = bench_xmalloc(sizeof *po * (size_t)n);
    uint64_t rng = seed;
    for (int32_t i = 0; i < n; i++) {
        pos[i].x = (float)(bench_rng_next(&rng) % 1024u);
        pos[i].y = (float)(bench_rng_next(&rng) % 1024u);
        po[i] = 0.0f;
    }
    weft_value cols[2] = {{b.pos, sizeof(bench_position), pos}, {out, sizeof(float), NULL}};
    bench_world_expect(&b, "weft_spawn_bulk", weft_spawn_bulk(b.w, cols, 2, n, NULL));
    weft_schedule *s = sch_create(&b, "par_iter");
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.term_count = 2;
    q.terms[0].id = b.pos;
    q.terms[0].access = WEFT_ACCESS_READ;
    q.terms[1].id = out;
    q.terms[1].access = WEFT_ACCESS_WRITE;
    atomic_int tasks;
    atomic_init(&tasks, 0);
    sch_par_sys sys = {sch_trig_chunk, 0, &tasks};
    sch_add_system(&b, s, "par_trig", sch_par_system, &sys, &q, 1, NULL, 0, 0);
    bench_world_expect(&b, "weft_schedule_build", weft_schedule_build(s));
    sch_split sp;
    sch_split_start(&sp, pos, po, n);

    /* Small N: batch passes so a sample is ~1M entity-passes. */
    int32_t batch = n >= (1 << 20) ? 1 : (1 << 20) / n;
    batch = batch > 1024 ? 1024 : batch;
    int64_t per = (int64_t)batch * n;
    int32_t reps = sch_reps(cfg);
    int32_t samples = n >= (1 << 20) ? 1 : 5;
    int32_t total = reps * samples;
    double *v1 = bench_xmalloc(sizeof(double) * (size_t)total);
    double *v2 = bench_xmalloc(sizeof(double) * (size_t)total);
    double *vl = bench_xmalloc(sizeof(double) * (size_t)total);
    double *vs = bench_xmalloc(sizeof(double) * (size_t)total);
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        for (int32_t t = 1; t <= 2; t++) {
            sch_threads(&b, t);
            sch_run(&b, s);
            for (int32_t k = 0; k < samples; k++) {
                uint64_t t0 = bench_now_ns();
                for (int32_t i = 0; i < batch; i++) {
                    sch_run(&b, s);
                }
                uint64_t t1 = bench_now_ns();
                if (r >= 0) {
                    (t == 1 ? v1 : v2)[r * samples + k] = sch_ns(t0, t1, per);
                }
            }
        }
        for (int32_t k = 0; k < samples; k++) {
            uint64_t t0 = bench_now_ns();
            for (int32_t i = 0; i < batch; i++) {
                k_trig(pos, po, n);
            }
            uint64_t t1 = bench_now_ns();
            for (int32_t i = 0; i < batch; i++) {
                sch_split_pass(&sp);
            }
            uint64_t t2 = bench_now_ns();
            if (r >= 0) {
                vl[r * samples + k] = sch_ns(t0, t1, per);
                vs[r * samples + k] = sch_ns(t1, t2, per);
            }
        }
    }
    /* The system computed what the plain loop did. */
    weft_query *check = weft_query_create(b.w, &q);
    if (check == NULL) {
        bench_world_expect(&b, "weft_query_create", weft_last_status(b.w));
    }
    weft_iter it;
    bench_world_expect(&b, "weft_query_iter", weft_query_iter(b.w, check, &it));
    int64_t row = 0;
    while (weft_iter_next(&it)) {
        const float *o = weft_iter_field(&it, 1, sizeof *o);
        int32_t c = weft_iter_count(&it);
        for (int32_t i = 0; i < c; i++, row++) {
            if (o[i] != po[row]) {
                bench_fail("par_iter", "result check", "par_each output differs from the loop");
            }
        }
    }
    if (row != n) {
        bench_fail("par_iter", "result check", "wrong row count");
    }
    /* One counted run per thread count: the 2-thread figure must come from
     * a run the pool really split (a single chunk would be the 1-thread
     * inline path measured twice). */
    int32_t counted[3] = {0, 0, 0};
    for (int32_t t = 1; t <= 2; t++) {
        sch_threads(&b, t);
        atomic_store(&tasks, 0);
        sch_run(&b, s);
        counted[t] = atomic_load(&tasks);
    }
    if (counted[1] != 1 || counted[2] < 2) {
        char detail[96];
        snprintf(detail, sizeof detail, "%d chunk task(s) on 1 thread, %d on 2 (want 1, >= 2)",
                 (int)counted[1], (int)counted[2]);
        bench_fail("par_iter", "split check", detail);
    }
    sch_threads(&b, 1);
    sch_par_result res = {bench_median(v1, total), bench_median(v2, total),
                          bench_median(vl, total), bench_median(vs, total), counted[2]};
    sch_split_stop(&sp);
    free(v1);
    free(v2);
    free(vl);
    free(vs);
    free(pos);
    free(po);
    bench_world_fini(&b);
    return res;
}

void bench_sched_par_iter(const bench_cfg *cfg, const bench_data *data)
{
    (void)data;
    sch_par_result big = sch_par_case(cfg, 1000000, cfg->seed ^ 0x1111u);
    /* The smallest size the pool splits with the default min_rows (1024):
     * par_each runs inline below 2 x min_rows rows. */
    sch_par_result small = sch_par_case(cfg, 4096, cfg->seed ^ 0x2222u);
    bench_report_ratio("par_iter 1M heavy, 2 threads vs 1 thread", "ns", big.w2, big.w1,
                       1.0 / 1.95);
    bench_report_ratio("par_iter 1M heavy, 2 threads vs plain C 2-way split", "ns", big.w2,
                       big.split, 0.0);
    bench_report_ratio("par_iter 1M heavy, 1 thread vs plain C loop", "ns", big.w1, big.loop,
                       0.0);
    bench_report_ratio("par_iter 1M heavy, plain C: 2-way split vs loop", "ns", big.split,
                       big.loop, 0.0);
    bench_report_ratio("par_iter 4096 heavy, 2 threads vs 1 thread", "ns", small.w2, small.w1,
                       0.8);
    bench_report_ratio("par_iter 4096 heavy, 2 threads vs plain C 2-way split", "ns", small.w2,
                       small.split, 0.0);
    bench_report_ratio("par_iter 4096 heavy, 1 thread vs plain C loop", "ns", small.w1,
                       small.loop, 0.0);
    bench_report_ratio("par_iter 4096 heavy, plain C: 2-way split vs loop", "ns", small.split,
                       small.loop, 0.0);
    bench_note("par_iter: speedup on 2 threads %.2fx at 1M in %d chunk tasks (target >= 1.95x; "
               "plain C split %.2fx; flecs 2.01x), %.2fx at 4,096 in %d tasks (target >= "
               "1.25x; plain C split %.2fx)",
               big.w1 / big.w2, (int)big.tasks2, big.loop / big.split, small.w1 / small.w2,
               (int)small.tasks2, small.loop / small.split);
}

/* ---- par_sweep (N26): break-even over N and kernel weight ---- */

static void sch_light_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    (void)user;
    while (weft_iter_next(it)) {
        const float *in = weft_iter_field(it, 0, sizeof *in);
        float *o = weft_iter_field_mut(it, 1, sizeof *o);
        if (in != NULL && o != NULL) {
            k_light(in, o, weft_iter_count(it));
        }
    }
}

static void sch_medium_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    (void)user;
    while (weft_iter_next(it)) {
        const float *in = weft_iter_field(it, 0, sizeof *in);
        float *o = weft_iter_field_mut(it, 1, sizeof *o);
        if (in != NULL && o != NULL) {
            k_medium(in, o, weft_iter_count(it));
        }
    }
}

static void sch_heavy_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    (void)user;
    while (weft_iter_next(it)) {
        const float *in = weft_iter_field(it, 0, sizeof *in);
        float *o = weft_iter_field_mut(it, 1, sizeof *o);
        if (in != NULL && o != NULL) {
            k_heavy(in, o, weft_iter_count(it));
        }
    }
}

void bench_sched_par_sweep(const bench_cfg *cfg, const bench_data *data)
{
    (void)data;
    enum { SERIES = 6 };
    static const char *const names[SERIES] = {
        "N26 par_each 2 vs 1 thread, light (1 add)",
        "N26 par_each 2 vs 1 thread, medium (10 flops)",
        "N26 par_each 2 vs 1 thread, heavy (100 flops)",
        "N26 par_each 2 vs 1 thread, light, min_rows 64",
        "N26 par_each 2 vs 1 thread, medium, min_rows 64",
        "N26 par_each 2 vs 1 thread, heavy, min_rows 64",
    };
    static const weft_chunk_fn fns[3] = {sch_light_chunk, sch_medium_chunk, sch_heavy_chunk};
    int32_t cap = cfg->n < (1 << 20) ? cfg->n : (1 << 20);
    int32_t max_level = 6;
    while (max_level < 20 && ((int32_t)1 << max_level) < cap) {
        max_level++;
    }

    bench_world b;
    bench_world_init(&b, "par_sweep", 0, WEFT_STORAGE_DEFAULT, NULL);
    weft_component cin = bench_register(&b, "In", sizeof(float), WEFT_STORAGE_DEFAULT, 0);
    weft_component cout = bench_register(&b, "Out", sizeof(float), WEFT_STORAGE_DEFAULT,
                                         WEFT_COMPONENT_NO_CHANGE_TICKS);
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.term_count = 2;
    q.terms[0].id = cin;
    q.terms[0].access = WEFT_ACCESS_READ;
    q.terms[1].id = cout;
    q.terms[1].access = WEFT_ACCESS_WRITE;
    weft_schedule *sch[SERIES];
    sch_par_sys sys[SERIES];
    for (int k = 0; k < SERIES; k++) {
        char name[32];
        snprintf(name, sizeof name, "par_sweep_%d", k);
        sch[k] = sch_create(&b, name);
        sys[k].fn = fns[k % 3];
        sys[k].min_rows = k < 3 ? 0 : 64;
        sys[k].user = NULL;
        sch_add_system(&b, sch[k], name, sch_par_system, &sys[k], &q, 1, NULL, 0, 0);
        bench_world_expect(&b, "weft_schedule_build", weft_schedule_build(sch[k]));
    }
    int32_t max_n = (int32_t)1 << max_level;
    float *vals = bench_xmalloc(sizeof *vals * (size_t)max_n);
    uint64_t rng = cfg->seed ^ 0x26u;
    for (int32_t i = 0; i < max_n; i++) {
        vals[i] = sch_unit(&rng);
    }
    int32_t live = 0;
    int32_t reps = sch_reps(cfg);
    double (*v)[2][64] = bench_xmalloc(sizeof *v * SERIES);
    for (int32_t level = 6; level <= max_level; level++) {
        int32_t n = (int32_t)1 << level;
        /* Grow the one table to n rows. */
        weft_value cols[2] = {{cin, sizeof(float), vals + live}, {cout, sizeof(float), NULL}};
        bench_world_expect(&b, "weft_spawn_bulk",
                           weft_spawn_bulk(b.w, cols, 2, n - live, NULL));
        live = n;
        for (int32_t r = -cfg->warmup; r < reps; r++) {
            for (int32_t t = 1; t <= 2; t++) {
                sch_threads(&b, t);
                for (int k = 0; k < SERIES; k++) {
                    /* a sample: >= 2^16 entity-passes of the heavy kernel,
                     * >= 2^19 of the others (~0.4 ms or more) */
                    int32_t want = k % 3 == 2 ? (1 << 16) : (1 << 19);
                    int32_t batch = n >= want ? 1 : want / n;
                    int64_t per = (int64_t)batch * n;
                    sch_run(&b, sch[k]);
                    uint64_t t0 = bench_now_ns();
                    for (int32_t i = 0; i < batch; i++) {
                        sch_run(&b, sch[k]);
                    }
                    uint64_t t1 = bench_now_ns();
                    if (r >= 0) {
                        v[k][t - 1][r] = sch_ns(t0, t1, per);
                    }
                }
            }
        }
        for (int k = 0; k < SERIES; k++) {
            bench_report_param(names[k], n, "ns", bench_median(v[k][1], reps),
                               bench_median(v[k][0], reps), 0.0);
        }
    }
    sch_threads(&b, 1);
    free(v);
    free(vals);
    bench_world_fini(&b);
    bench_note("N26: weft = ns per entity on 2 threads, baseline = the same system on 1 "
               "thread; speedup = baseline / weft (charted by bench/plot.sh)");
}

/* ---- sched_sync (N24): interleaved vs grouped command-producing systems ---- */

enum { SYNC_PAIRS = 8, SYNC_SPAWN = 64, SYNC_WORK = 384 };

typedef struct sch_sync_state {
    int32_t frame[SYNC_PAIRS];  /* written by writer i, read by reader i after it */
    int32_t seen[SYNC_PAIRS];   /* rows reader i saw in its last run */
    int32_t errors[SYNC_PAIRS]; /* rows with a value of another frame */
} sch_sync_state;

typedef struct sch_sync_sys {
    sch_sync_state *st;
    weft_component c;
    int32_t i;
    int32_t work_n;            /* 0, or SYNC_WORK: k_heavy over it per run */
    float work[2 * SYNC_WORK]; /* compute payloads: writer's, then reader's */
} sch_sync_sys;

static void sch_sync_writer(weft_system_ctx *ctx, void *user)
{
    sch_sync_sys *s = user;
    weft_commands *cmds = weft_system_commands(ctx);
    weft_iter it;
    weft_status st = weft_system_iter(ctx, 0, &it);
    if (st != WEFT_OK || cmds == NULL) {
        weft_system_fail(ctx, st != WEFT_OK ? st : WEFT_ERR_INTERNAL, "writer setup");
        return;
    }
    while (weft_iter_next(&it)) {
        const weft_entity *ents = weft_iter_entities(&it);
        int32_t c = weft_iter_count(&it);
        for (int32_t k = 0; k < c; k++) {
            weft_cmd_despawn(cmds, ents[k]);
        }
    }
    k_heavy(s->work, s->work, s->work_n);
    float value = (float)++s->st->frame[s->i];
    weft_value v = {s->c, sizeof value, &value};
    for (int32_t k = 0; k < SYNC_SPAWN; k++) {
        if (weft_cmd_spawn(cmds, &v, 1) == WEFT_ENTITY_NONE) {
            weft_system_fail(ctx, WEFT_ERR_INTERNAL, "weft_cmd_spawn");
            return;
        }
    }
}

static void sch_sync_reader(weft_system_ctx *ctx, void *user)
{
    sch_sync_sys *s = user;
    weft_iter it;
    weft_status st = weft_system_iter(ctx, 0, &it);
    if (st != WEFT_OK) {
        weft_system_fail(ctx, st, "weft_system_iter");
        return;
    }
    k_heavy(s->work + SYNC_WORK, s->work + SYNC_WORK, s->work_n);
    float want = (float)s->st->frame[s->i];
    int32_t seen = 0;
    while (weft_iter_next(&it)) {
        const float *v = weft_iter_field(&it, 0, sizeof *v);
        int32_t c = weft_iter_count(&it);
        for (int32_t k = 0; k < c; k++) {
            s->st->errors[s->i] += v[k] != want;
        }
        seen += c;
    }
    s->st->seen[s->i] = seen;
}

typedef struct sch_sync_world {
    bench_world b;
    weft_schedule *s;
    sch_sync_state st;
    sch_sync_sys sys[SYNC_PAIRS]; /* writer i and reader i share one */
} sch_sync_world;

static void sch_sync_make(sch_sync_world *x, bool grouped)
{
    memset(&x->st, 0, sizeof x->st);
    bench_world_init(&x->b, "sched_sync", 0, WEFT_STORAGE_DEFAULT, NULL);
    x->s = sch_create(&x->b, grouped ? "grouped" : "interleaved");
    weft_node writers[SYNC_PAIRS];
    weft_node readers[SYNC_PAIRS];
    for (int32_t i = 0; i < SYNC_PAIRS; i++) {
        char name[32];
        snprintf(name, sizeof name, "C%d", (int)i);
        x->sys[i].st = &x->st;
        x->sys[i].i = i;
        x->sys[i].work_n = 0;
        uint64_t rng = 0x24u + (uint64_t)i;
        for (int32_t k = 0; k < 2 * SYNC_WORK; k++) {
            x->sys[i].work[k] = sch_unit(&rng);
        }
        x->sys[i].c = bench_register(&x->b, name, sizeof(float), WEFT_STORAGE_DEFAULT, 0);
        weft_query_desc q;
        memset(&q, 0, sizeof q);
        q.term_count = 1;
        q.terms[0].id = x->sys[i].c;
        q.terms[0].access = WEFT_ACCESS_READ;
        snprintf(name, sizeof name, "write%d", (int)i);
        writers[i] = sch_add_system(&x->b, x->s, name, sch_sync_writer, &x->sys[i], &q, 1,
                                    NULL, 0, WEFT_SYSTEM_COMMANDS);
        snprintf(name, sizeof name, "read%d", (int)i);
        readers[i] = sch_add_system(&x->b, x->s, name, sch_sync_reader, &x->sys[i], &q, 1,
                                    NULL, 0, 0);
    }
    if (grouped) {
        weft_node ws = weft_schedule_ensure_set(x->s, "writers");
        weft_node rs = weft_schedule_ensure_set(x->s, "readers");
        if (ws == WEFT_NODE_NONE || rs == WEFT_NODE_NONE) {
            bench_world_expect(&x->b, "weft_schedule_ensure_set", weft_last_status(x->b.w));
        }
        for (int32_t i = 0; i < SYNC_PAIRS; i++) {
            bench_world_expect(&x->b, "weft_schedule_add_to_set",
                                   weft_schedule_add_to_set(x->s, writers[i], ws));
            bench_world_expect(&x->b, "weft_schedule_add_to_set",
                                   weft_schedule_add_to_set(x->s, readers[i], rs));
        }
        bench_world_expect(&x->b, "weft_schedule_add_order",
                           weft_schedule_add_order(x->s, ws, rs, 0));
    } else {
        weft_node chain[2 * SYNC_PAIRS];
        for (int32_t i = 0; i < SYNC_PAIRS; i++) {
            chain[2 * i] = writers[i];
            chain[2 * i + 1] = readers[i];
        }
        bench_world_expect(&x->b, "weft_schedule_add_chain",
                               weft_schedule_add_chain(x->s, chain, 2 * SYNC_PAIRS, 0));
    }
    bench_world_expect(&x->b, "weft_schedule_build", weft_schedule_build(x->s));
}

static void sch_sync_verify(sch_sync_world *x)
{
    for (int32_t i = 0; i < SYNC_PAIRS; i++) {
        if (x->st.seen[i] != SYNC_SPAWN || x->st.errors[i] != 0) {
            char detail[128];
            snprintf(detail, sizeof detail, "reader %d saw %d rows (want %d), %d stale",
                     (int)i, (int)x->st.seen[i], SYNC_SPAWN, (int)x->st.errors[i]);
            bench_fail("sched_sync", "reader check", detail);
        }
    }
}

void bench_sched_sync(const bench_cfg *cfg, const bench_data *data)
{
    (void)data;
    static const char *const names[2][2] = {
        {"N24 interleaved vs grouped, 1 thread (us/run)",
         "N24 interleaved vs grouped, 2 threads (us/run)"},
        {"N24 interleaved vs grouped, +compute, 1 thread (us/run)",
         "N24 interleaved vs grouped, +compute, 2 threads (us/run)"},
    };
    sch_sync_world *x = bench_xmalloc(sizeof *x * 2); /* [0] interleaved, [1] grouped */
    sch_sync_make(&x[0], false);
    sch_sync_make(&x[1], true);
    int32_t syncs[2] = {weft_schedule_sync_count(x[0].s), weft_schedule_sync_count(x[1].s)};
    enum { BATCH = 10, SAMPLES = 4, MAXV = 256 };
    int32_t reps = sch_reps(cfg);
    int32_t total = reps * SAMPLES;
    /* [variant][interleaved/grouped][threads - 1][sample] */
    double (*v)[2][2][MAXV] = bench_xmalloc(sizeof *v * 2);
    int32_t conc[2] = {0, 0};
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        for (int32_t t = 1; t <= 2; t++) {
            for (int g = 0; g < 2; g++) {
                sch_threads(&x[g].b, t);
                for (int var = 0; var < 2; var++) {
                    for (int32_t i = 0; i < SYNC_PAIRS; i++) {
                        x[g].sys[i].work_n = var ? SYNC_WORK : 0;
                    }
                    sch_run(&x[g].b, x[g].s);
                    sch_sync_verify(&x[g]);
                    for (int32_t k = 0; k < SAMPLES; k++) {
                        uint64_t t0 = bench_now_ns();
                        for (int32_t i = 0; i < BATCH; i++) {
                            sch_run(&x[g].b, x[g].s);
                        }
                        uint64_t t1 = bench_now_ns();
                        if (r >= 0) {
                            v[var][g][t - 1][r * SAMPLES + k] =
                                (double)(t1 - t0) * 1e-3 / BATCH;
                        }
                    }
                    sch_sync_verify(&x[g]);
                    if (t == 2 && g == 1) {
                        int32_t c = weft_schedule_max_concurrency(x[g].s);
                        conc[var] = c > conc[var] ? c : conc[var];
                    }
                }
            }
        }
    }
    double m[2][2][2];
    for (int g = 0; g < 2; g++) {
        sch_threads(&x[g].b, 1);
        for (int var = 0; var < 2; var++) {
            for (int t = 0; t < 2; t++) {
                m[var][g][t] = bench_median(v[var][g][t], total);
            }
        }
        bench_world_verify(&x[g].b, SYNC_PAIRS * SYNC_SPAWN);
        bench_world_fini(&x[g].b);
    }
    free(v);
    free(x);
    bench_report_ratio("N24 sync points: interleaved vs grouped", "sp", (double)syncs[0],
                       (double)syncs[1], 0.0);
    for (int var = 0; var < 2; var++) {
        for (int t = 0; t < 2; t++) {
            bench_report_ratio(names[var][t], "us", m[var][0][t], m[var][1][t], 0.0);
        }
    }
    bench_note("N24: 8 writers (despawn %d, spawn %d through commands) + 8 readers; sync "
               "points interleaved %d, grouped %d; +compute: each system also runs 100 "
               "flops x %d; grouped 2 vs 1 thread: %.2fx (plain), %.2fx (+compute); max "
               "concurrency %d / %d",
               SYNC_SPAWN, SYNC_SPAWN, (int)syncs[0], (int)syncs[1], SYNC_WORK,
               m[0][1][0] / m[0][1][1], m[1][1][0] / m[1][1][1], (int)conc[0], (int)conc[1]);
}

/* ---- sched_build: build time for 100, 500, 2,000 random systems ---- */

void bench_sched_build(const bench_cfg *cfg, const bench_data *data)
{
    (void)data;
    enum { COMPS = 64, RESOURCES = 16 };
    bench_world b;
    bench_world_init(&b, "sched_build", 0, WEFT_STORAGE_DEFAULT, NULL);
    weft_component comps[COMPS];
    weft_component res[RESOURCES];
    char name[32];
    for (int32_t i = 0; i < COMPS; i++) {
        snprintf(name, sizeof name, "B%d", (int)i);
        comps[i] = bench_register(&b, name, sizeof(float), WEFT_STORAGE_DEFAULT, 0);
    }
    for (int32_t i = 0; i < RESOURCES; i++) {
        snprintf(name, sizeof name, "BR%d", (int)i);
        res[i] = bench_register(&b, name, sizeof(float), WEFT_STORAGE_DEFAULT, 0);
    }
    static const int32_t counts[3] = {100, 500, 2000};
    double ms[3];
    int32_t amb[3];
    int32_t syncs[3];
    int32_t edges[3];
    int32_t reps = sch_reps(cfg);
    int32_t serial = 0;
    weft_node *nodes = bench_xmalloc(sizeof *nodes * 2000);
    for (int k = 0; k < 3; k++) {
        double v[64];
        for (int32_t r = -cfg->warmup; r < reps; r++) {
            snprintf(name, sizeof name, "build%d", (int)serial++);
            weft_schedule *s = sch_create(&b, name);
            uint64_t rng = cfg->seed ^ (uint64_t)counts[k]; /* the same graph every rep */
            edges[k] = 0;
            for (int32_t i = 0; i < counts[k]; i++) {
                weft_query_desc q;
                memset(&q, 0, sizeof q);
                q.term_count = 1 + (int32_t)(bench_rng_next(&rng) % 3u);
                for (int32_t t = 0; t < q.term_count; t++) {
                    weft_component c;
                    bool dup;
                    do {
                        c = comps[bench_rng_next(&rng) % COMPS];
                        dup = false;
                        for (int32_t u = 0; u < t; u++) {
                            dup = dup || q.terms[u].id == c;
                        }
                    } while (dup);
                    q.terms[t].id = c;
                    q.terms[t].access = bench_rng_next(&rng) % 10u < 3u ? WEFT_ACCESS_WRITE
                                                                        : WEFT_ACCESS_READ;
                }
                weft_resource_use ru = {res[bench_rng_next(&rng) % RESOURCES],
                                        bench_rng_next(&rng) % 2u ? WEFT_ACCESS_WRITE
                                                                  : WEFT_ACCESS_READ};
                int32_t nres = bench_rng_next(&rng) % 2u ? 1 : 0;
                uint32_t flags = bench_rng_next(&rng) % 10u == 0 ? WEFT_SYSTEM_COMMANDS : 0;
                snprintf(name, sizeof name, "sys%d", (int)i);
                nodes[i] = sch_add_system(&b, s, name, sch_empty_system, NULL, &q, 1, &ru, nres,
                                          flags);
                if (i > 0 && bench_rng_next(&rng) % 4u == 0) {
                    weft_node before = nodes[bench_rng_next(&rng) % (uint64_t)i];
                    bench_world_expect(&b, "weft_schedule_add_order",
                                           weft_schedule_add_order(s, before, nodes[i], 0));
                    edges[k]++;
                }
            }
            uint64_t t0 = bench_now_ns();
            bench_world_expect(&b, "weft_schedule_build", weft_schedule_build(s));
            uint64_t t1 = bench_now_ns();
            if (r >= 0) {
                v[r] = (double)(t1 - t0) * 1e-6;
            }
            amb[k] = weft_schedule_ambiguity_count(s);
            syncs[k] = weft_schedule_sync_count(s);
            bench_world_expect(&b, "weft_schedule_destroy", weft_schedule_destroy(s));
        }
        ms[k] = bench_median(v, reps);
    }
    free(nodes);
    bench_world_fini(&b);
    for (int k = 0; k < 3; k++) {
        bench_report_param("sched_build time vs linear from 100 systems (ms)", counts[k], "ms",
                           ms[k], ms[0] * counts[k] / counts[0], 0.0);
    }
    bench_note("sched_build: %.1f / %.1f / %.1f us per system at 100 / 500 / 2,000 systems "
               "(growth %.2fx, %.2fx vs 100); declared edges %d / %d / %d, ambiguities %d / "
               "%d / %d, sync points %d / %d / %d",
               ms[0] * 1e3 / counts[0], ms[1] * 1e3 / counts[1], ms[2] * 1e3 / counts[2],
               (ms[1] / counts[1]) / (ms[0] / counts[0]),
               (ms[2] / counts[2]) / (ms[0] / counts[0]), (int)edges[0], (int)edges[1],
               (int)edges[2], (int)amb[0], (int)amb[1], (int)amb[2], (int)syncs[0],
               (int)syncs[1], (int)syncs[2]);
}

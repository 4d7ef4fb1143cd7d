/* bench/scenarios_events.c - command buffer, observer and hierarchy scenarios: cmd, cmdspawn, observer, tree.
 * SPDX-License-Identifier: MIT
 *
 * Every row compares two ways of doing the same thing through weft,
 * measured in the same run on identical worlds (a fresh world per variant
 * and repetition), so the ratio is what one path costs over the other:
 *  - cmd:      N inserts of Health, then N removes, recorded into one
 *              command buffer and applied (weft_cmd_insert / weft_cmd_remove
 *              + weft_commands_apply), vs the same immediate calls
 *              (weft_insert / weft_remove). Target: ratio <= 1.3 (flecs'
 *              deferred queue: 1.81 in flecs' published figures). Record and apply are split
 *              in a note.
 *  - cmdspawn: N spawns with Position+Velocity through weft_cmd_spawn +
 *              apply vs weft_spawn_with. No target is given for it.
 *  - observer: N spawn_with Position+Velocity with one observer registered
 *              on an unrelated component (WEFT_EVENT_ADD of Health) vs with
 *              no observer. Target: within 5% (ratio <= 1.05). Both worlds
 *              are live at once and spawn in alternating blocks of 4,096;
 *              2 * reps + 1 repetitions, each swapping which world goes
 *              first, so drift of a noisy machine lands on both.
 *  - tree:     despawning a 1,000-node tree through its root (wide: one
 *              root with 999 children; deep: a chain of 1,000), ns per node,
 *              vs despawning 1,000 plain entities one by one; and 10,000
 *              children spawned under one parent (weft_spawn +
 *              weft_set_parent each; through commands: weft_cmd_spawn +
 *              weft_cmd_insert of ChildOf + apply; weft_spawn_with ChildOf)
 *              vs 10,000 plain weft_spawn calls, ns per child. No targets
 *              are given for these. The fixed tree sizes are repeated
 *              max(1, N / 20,000) (despawn) and max(1, N / 100,000)
 *              (children) times per repetition, so --quick stays quick.
 * Both variants of a row run in every repetition, in alternating order;
 * each figure is the median over the repetitions. Times are the thread's
 * CPU time (CLOCK_THREAD_CPUTIME_ID), not wall time: on a shared machine
 * the time the bench spends preempted by other work is not counted. The first repetition is
 * verified: live counts, weft_world_check, values read back, observer call
 * counts, children lists (count and order) and ancestor chains.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_world.h"
#include "weft.h"

enum {
    EV_FIGS = 3,            /* per variant: total, and up to two parts */
    EV_TREE_NODES = 1000,   /* nodes per despawned tree */
    EV_KIDS = 10000,        /* children under one parent */
    EV_KIDS_SMALL = 1000,   /* children per parent in the scaling note */
    EV_TREES_PER = 20000,   /* one tree per this many N, at least one */
    EV_PARENTS_PER = 100000 /* one 10k-child parent per this many N, at least one */
};

/* Thread CPU time (see bench_cpu_ns): on a shared machine the other load
 * preempting the bench is not counted. */
static uint64_t ev_now(void)
{
    return bench_cpu_ns();
}

static double ev_ns(uint64_t t0, uint64_t t1)
{
    return (double)(t1 - t0);
}

static void ev_expect_count(const char *scenario, const char *what, int64_t got,
                            int64_t want)
{
    if (got != want) {
        char detail[128];
        snprintf(detail, sizeof detail, "%lld, expected %lld", (long long)got,
                 (long long)want);
        bench_fail(scenario, what, detail);
    }
}

static weft_commands *ev_commands(const bench_world *b)
{
    weft_commands *c = weft_commands_create(b->w);
    if (c == NULL) {
        bench_world_expect(b, "weft_commands_create", weft_last_status(b->w));
        bench_fail(b->scenario, "weft_commands_create", "NULL without an error");
    }
    return c;
}

/* ---- the driver: both variants every repetition, order alternating ---- */

/* One repetition of one variant: writes ns per item into figs[0] (total)
 * and, where a variant has parts, figs[1] and figs[2]. `verify` is set on
 * the first (warm-up) repetition. */
typedef void (*ev_rep_fn)(const bench_cfg *cfg, const bench_data *d, bool verify,
                          double *figs);

typedef struct ev_pair {
    double a[EV_FIGS]; /* medians of variant A (the table's "weft" column) */
    double b[EV_FIGS]; /* medians of variant B (the table's "baseline" column) */
    double ratio;      /* median of the per-repetition ratios a[0] / b[0] */
} ev_pair;

static ev_pair ev_run(const char *name, const bench_cfg *cfg, const bench_data *d,
                      ev_rep_fn fa, ev_rep_fn fb, int32_t reps)
{
    double *va[EV_FIGS];
    double *vb[EV_FIGS];
    for (int32_t f = 0; f < EV_FIGS; f++) {
        va[f] = bench_xmalloc(sizeof(double) * (size_t)reps);
        vb[f] = bench_xmalloc(sizeof(double) * (size_t)reps);
    }
    double *vr = bench_xmalloc(sizeof(double) * (size_t)reps);
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        bool first = r == -cfg->warmup;
        double a[EV_FIGS] = {0.0, 0.0, 0.0};
        double b[EV_FIGS] = {0.0, 0.0, 0.0};
        if (((r + cfg->warmup) & 1) == 0) {
            fa(cfg, d, first, a);
            fb(cfg, d, first, b);
        } else {
            fb(cfg, d, first, b);
            fa(cfg, d, first, a);
        }
        bench_trace(cfg, name, "weft", r, a[0]);
        bench_trace(cfg, name, "baseline", r, b[0]);
        if (r >= 0) {
            for (int32_t f = 0; f < EV_FIGS; f++) {
                va[f][r] = a[f];
                vb[f][r] = b[f];
            }
            vr[r] = b[0] > 0.0 ? a[0] / b[0] : 0.0;
        }
    }
    ev_pair out;
    for (int32_t f = 0; f < EV_FIGS; f++) {
        out.a[f] = bench_median(va[f], reps);
        out.b[f] = bench_median(vb[f], reps);
        free(va[f]);
        free(vb[f]);
    }
    out.ratio = bench_median(vr, reps);
    free(vr);
    return out;
}

/* ---- cmd: insert then remove Health on all, commands vs immediate ---- */

static void cmd_check_inserted(const bench_world *b, const weft_entity *ents, int32_t n)
{
    for (int32_t i = 0; i < n; i += 997) {
        const bench_health *h = weft_get(b->w, ents[i], b->hp, sizeof(bench_health));
        if (h == NULL || h->hp != i) {
            bench_fail(b->scenario, "weft_get after the inserts", "missing or wrong value");
        }
    }
    bench_world_verify(b, n);
}

static void cmd_check_removed(const bench_world *b, const weft_entity *ents, int32_t n)
{
    for (int32_t i = 0; i < n; i += 997) {
        if (weft_has(b->w, ents[i], b->hp)) {
            bench_fail(b->scenario, "weft_has after the removes", "still present");
        }
    }
    bench_world_verify(b, n);
}

static void cmd_weft(const bench_cfg *cfg, const bench_data *d, bool verify, double *figs)
{
    bench_world b;
    bench_world_init(&b, "cmd", 0, WEFT_STORAGE_DEFAULT, NULL);
    int32_t n = cfg->n;
    weft_entity *ents = bench_xmalloc(sizeof *ents * (size_t)n);
    bench_world_spawn_bulk(&b, d, n, ents);
    weft_commands *c = ev_commands(&b);

    uint64_t t0 = ev_now();
    for (int32_t i = 0; i < n; i++) {
        bench_health h = {i};
        weft_status st = weft_cmd_insert(c, ents[i], b.hp, &h, sizeof h);
        if (st != WEFT_OK) {
            bench_world_expect(&b, "weft_cmd_insert", st);
        }
    }
    uint64_t t1 = ev_now();
    bench_world_expect(&b, "weft_commands_apply (inserts)", weft_commands_apply(b.w, c));
    uint64_t t2 = ev_now();
    if (verify) {
        ev_expect_count("cmd", "weft_commands_count after apply", weft_commands_count(c), 0);
        cmd_check_inserted(&b, ents, n);
    }
    uint64_t t3 = ev_now();
    for (int32_t i = 0; i < n; i++) {
        weft_status st = weft_cmd_remove(c, ents[i], b.hp);
        if (st != WEFT_OK) {
            bench_world_expect(&b, "weft_cmd_remove", st);
        }
    }
    uint64_t t4 = ev_now();
    bench_world_expect(&b, "weft_commands_apply (removes)", weft_commands_apply(b.w, c));
    uint64_t t5 = ev_now();
    if (verify) {
        ev_expect_count("cmd", "weft_commands_count after apply", weft_commands_count(c), 0);
        cmd_check_removed(&b, ents, n);
    }
    double record = ev_ns(t0, t1) + ev_ns(t3, t4);
    double apply = ev_ns(t1, t2) + ev_ns(t4, t5);
    figs[0] = (record + apply) / n;
    figs[1] = record / n;
    figs[2] = apply / n;
    weft_commands_destroy(c);
    free(ents);
    bench_world_fini(&b);
}

static void cmd_immediate(const bench_cfg *cfg, const bench_data *d, bool verify,
                          double *figs)
{
    bench_world b;
    bench_world_init(&b, "cmd (immediate)", 0, WEFT_STORAGE_DEFAULT, NULL);
    int32_t n = cfg->n;
    weft_entity *ents = bench_xmalloc(sizeof *ents * (size_t)n);
    bench_world_spawn_bulk(&b, d, n, ents);

    uint64_t t0 = ev_now();
    for (int32_t i = 0; i < n; i++) {
        bench_health h = {i};
        weft_status st = weft_insert(b.w, ents[i], b.hp, &h, sizeof h);
        if (st != WEFT_OK) {
            bench_world_expect(&b, "weft_insert", st);
        }
    }
    uint64_t t1 = ev_now();
    if (verify) {
        cmd_check_inserted(&b, ents, n);
    }
    uint64_t t2 = ev_now();
    for (int32_t i = 0; i < n; i++) {
        weft_status st = weft_remove(b.w, ents[i], b.hp);
        if (st != WEFT_OK) {
            bench_world_expect(&b, "weft_remove", st);
        }
    }
    uint64_t t3 = ev_now();
    if (verify) {
        cmd_check_removed(&b, ents, n);
    }
    figs[0] = (ev_ns(t0, t1) + ev_ns(t2, t3)) / n;
    figs[1] = ev_ns(t0, t1) / n;
    figs[2] = ev_ns(t2, t3) / n;
    free(ents);
    bench_world_fini(&b);
}

void bench_events_cmd(const bench_cfg *cfg, const bench_data *data)
{
    ev_pair p = ev_run("cmd", cfg, data, cmd_weft, cmd_immediate, cfg->reps);
    bench_report_ratio("cmd insert+remove Health vs immediate", "ns", p.a[0], p.b[0], 1.3);
    bench_note("cmd: N = %d with Position+Velocity, Health (table) inserted then removed "
               "on all; weft = one weft_commands buffer: record %.1f + apply %.1f ns "
               "(insert and remove rounds summed); baseline = weft_insert %.1f + "
               "weft_remove %.1f ns; median of per-repetition ratios %.2f; flecs: 1.81",
               (int)cfg->n, p.a[1], p.a[2], p.b[1], p.b[2], p.ratio);
}

/* ---- cmdspawn: spawns through commands vs immediate ---- */

static void cmdspawn_check(const bench_world *b, const bench_data *d, const weft_entity *ents,
                           int32_t n)
{
    for (int32_t i = 0; i < n; i += 997) {
        const bench_position *p = weft_get(b->w, ents[i], b->pos, sizeof(bench_position));
        const bench_velocity *v = weft_get(b->w, ents[i], b->vel, sizeof(bench_velocity));
        if (p == NULL || v == NULL || memcmp(p, &d->pos[i], sizeof *p) != 0 ||
            memcmp(v, &d->vel[i], sizeof *v) != 0) {
            bench_fail(b->scenario, "weft_get after the spawns", "missing or wrong value");
        }
    }
    bench_world_verify(b, n);
}

static void cmdspawn_weft(const bench_cfg *cfg, const bench_data *d, bool verify,
                          double *figs)
{
    bench_world b;
    bench_world_init(&b, "cmdspawn", 0, WEFT_STORAGE_DEFAULT, NULL);
    int32_t n = cfg->n;
    weft_entity *ents = bench_xmalloc(sizeof *ents * (size_t)n);
    weft_commands *c = ev_commands(&b);
    weft_value v[2] = {
        {b.pos, sizeof(bench_position), NULL},
        {b.vel, sizeof(bench_velocity), NULL},
    };
    uint64_t t0 = ev_now();
    for (int32_t i = 0; i < n; i++) {
        v[0].ptr = &d->pos[i];
        v[1].ptr = &d->vel[i];
        ents[i] = weft_cmd_spawn(c, v, 2);
        if (ents[i] == WEFT_ENTITY_NONE) {
            bench_world_expect(&b, "weft_cmd_spawn", weft_last_status(b.w));
        }
    }
    uint64_t t1 = ev_now();
    bench_world_expect(&b, "weft_commands_apply", weft_commands_apply(b.w, c));
    uint64_t t2 = ev_now();
    if (verify) {
        ev_expect_count("cmdspawn", "weft_commands_count after apply",
                        weft_commands_count(c), 0);
        cmdspawn_check(&b, d, ents, n);
    }
    figs[0] = ev_ns(t0, t2) / n;
    figs[1] = ev_ns(t0, t1) / n;
    figs[2] = ev_ns(t1, t2) / n;
    weft_commands_destroy(c);
    free(ents);
    bench_world_fini(&b);
}

/* Immediate spawn_with of Position+Velocity, one by one. */
static void cmdspawn_immediate(const bench_cfg *cfg, const bench_data *d, bool verify,
                               double *figs)
{
    bench_world b;
    bench_world_init(&b, "cmdspawn (immediate)", 0, WEFT_STORAGE_DEFAULT, NULL);
    int32_t n = cfg->n;
    weft_entity *ents = bench_xmalloc(sizeof *ents * (size_t)n);
    weft_value v[2] = {
        {b.pos, sizeof(bench_position), NULL},
        {b.vel, sizeof(bench_velocity), NULL},
    };
    uint64_t t0 = ev_now();
    for (int32_t i = 0; i < n; i++) {
        v[0].ptr = &d->pos[i];
        v[1].ptr = &d->vel[i];
        ents[i] = weft_spawn_with(b.w, v, 2);
        if (ents[i] == WEFT_ENTITY_NONE) {
            bench_world_expect(&b, "weft_spawn_with", weft_last_status(b.w));
        }
    }
    uint64_t t1 = ev_now();
    if (verify) {
        cmdspawn_check(&b, d, ents, n);
    }
    figs[0] = ev_ns(t0, t1) / n;
    free(ents);
    bench_world_fini(&b);
}

void bench_events_cmdspawn(const bench_cfg *cfg, const bench_data *data)
{
    ev_pair p = ev_run("cmdspawn", cfg, data, cmdspawn_weft, cmdspawn_immediate, cfg->reps);
    bench_report_ratio("cmd spawn Pos+Vel vs spawn_with", "ns", p.a[0], p.b[0], 0.0);
    bench_note("cmdspawn: N = %d; weft = weft_cmd_spawn record %.1f + apply %.1f ns; "
               "baseline = weft_spawn_with; median of per-repetition ratios %.2f; no "
               "target given (the ratio is reported for reference)",
               (int)cfg->n, p.a[1], p.a[2], p.ratio);
}

/* ---- observer: spawn with an unrelated observer vs none ---- */

/* Both worlds live side by side; their spawns run in alternating blocks of
 * EV_OBS_BLOCK, so a change of machine load within a repetition hits both
 * (with thread CPU time, preemption is not counted at all). */
enum { EV_OBS_BLOCK = 4096 };

static int64_t g_obs_calls;

static void ev_count_observer(weft_world *w, weft_trigger *t, void *user)
{
    (void)w;
    (void)t;
    (void)user;
    g_obs_calls++;
}

typedef struct obs_side {
    bench_world b;
    weft_entity *ents;
    weft_value v[2];
    uint64_t ns;
} obs_side;

static void obs_init(obs_side *s, const char *scenario, bool observe, int32_t n)
{
    bench_world_init(&s->b, scenario, 0, WEFT_STORAGE_DEFAULT, NULL);
    if (observe) {
        weft_observer_desc od;
        memset(&od, 0, sizeof od);
        od.event = WEFT_EVENT_ADD;
        od.component = s->b.hp;
        od.fn = ev_count_observer;
        if (weft_observer_create(s->b.w, &od) == NULL) {
            bench_world_expect(&s->b, "weft_observer_create", weft_last_status(s->b.w));
            bench_fail(scenario, "weft_observer_create", "NULL without an error");
        }
    }
    s->ents = bench_xmalloc(sizeof *s->ents * (size_t)n);
    s->v[0] = (weft_value){s->b.pos, sizeof(bench_position), NULL};
    s->v[1] = (weft_value){s->b.vel, sizeof(bench_velocity), NULL};
    s->ns = 0;
}

static void obs_block(obs_side *s, const bench_data *d, int32_t from, int32_t to)
{
    uint64_t t0 = ev_now();
    for (int32_t i = from; i < to; i++) {
        s->v[0].ptr = &d->pos[i];
        s->v[1].ptr = &d->vel[i];
        s->ents[i] = weft_spawn_with(s->b.w, s->v, 2);
        if (s->ents[i] == WEFT_ENTITY_NONE) {
            bench_world_expect(&s->b, "weft_spawn_with", weft_last_status(s->b.w));
        }
    }
    s->ns += ev_now() - t0;
}

/* Values and counts; the observer has not run, and runs once when Health
 * is added in its world (and not when added in the other). */
static void obs_check(obs_side *on, obs_side *off, const bench_data *d, int32_t n)
{
    cmdspawn_check(&on->b, d, on->ents, n);
    cmdspawn_check(&off->b, d, off->ents, n);
    ev_expect_count("observer", "observer calls during the spawns", g_obs_calls, 0);
    bench_health h = {7};
    bench_world_expect(&off->b, "weft_insert",
                       weft_insert(off->b.w, off->ents[n / 2], off->b.hp, &h, sizeof h));
    ev_expect_count("observer", "observer calls after Health added without observer",
                    g_obs_calls, 0);
    bench_world_expect(&on->b, "weft_insert",
                       weft_insert(on->b.w, on->ents[n / 2], on->b.hp, &h, sizeof h));
    ev_expect_count("observer", "observer calls after one Health insert", g_obs_calls, 1);
    bench_world_verify(&on->b, n);
    bench_world_verify(&off->b, n);
}

void bench_events_observer(const bench_cfg *cfg, const bench_data *d)
{
    int32_t n = cfg->n;
    int32_t reps = 2 * cfg->reps + 1;
    double *von = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *voff = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *vr = bench_xmalloc(sizeof(double) * (size_t)reps);
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        obs_side on;
        obs_side off;
        obs_init(&on, "observer", true, n);
        obs_init(&off, "observer (none)", false, n);
        g_obs_calls = 0;
        bool on_first = ((r + cfg->warmup) & 1) == 0;
        for (int32_t from = 0, blk = 0; from < n; from += EV_OBS_BLOCK, blk++) {
            int32_t to = n - from < EV_OBS_BLOCK ? n : from + EV_OBS_BLOCK;
            if (on_first == ((blk & 1) == 0)) {
                obs_block(&on, d, from, to);
                obs_block(&off, d, from, to);
            } else {
                obs_block(&off, d, from, to);
                obs_block(&on, d, from, to);
            }
        }
        if (r == -cfg->warmup) {
            obs_check(&on, &off, d, n);
        }
        double a = (double)on.ns / n;
        double b = (double)off.ns / n;
        bench_trace(cfg, "observer", "weft", r, a);
        bench_trace(cfg, "observer", "baseline", r, b);
        if (r >= 0) {
            von[r] = a;
            voff[r] = b;
            vr[r] = a / b;
        }
        free(on.ents);
        free(off.ents);
        bench_world_fini(&on.b);
        bench_world_fini(&off.b);
    }
    double ratio = bench_median(vr, reps);
    bench_report_ratio("spawn, unrelated observer vs none", "ns", bench_median(von, reps),
                       bench_median(voff, reps), 1.05);
    bench_note("observer: N = %d spawn_with Position+Velocity in each of two live worlds, "
               "in alternating blocks of %d; weft = the world with one observer on "
               "WEFT_EVENT_ADD of Health, baseline = the world with none; %d repetitions, "
               "first world swapped every repetition; median of per-repetition ratios %.3f",
               (int)n, (int)EV_OBS_BLOCK, (int)reps, ratio);
    free(von);
    free(voff);
    free(vr);
}

/* ---- tree: subtree despawn and many children ---- */

static int32_t tree_count(const bench_cfg *cfg)
{
    int32_t k = cfg->n / EV_TREES_PER;
    return k < 1 ? 1 : k;
}

static int32_t kids_parents(const bench_cfg *cfg)
{
    int32_t k = cfg->n / EV_PARENTS_PER;
    return k < 1 ? 1 : k;
}

static void tree_world(bench_world *b, const char *scenario, weft_component *child_of)
{
    bench_world_init(b, scenario, 0, WEFT_STORAGE_DEFAULT, NULL);
    *child_of = weft_child_of(b->w);
    if (*child_of == WEFT_COMPONENT_NONE) {
        bench_world_expect(b, "weft_child_of", weft_last_status(b->w));
        bench_fail(scenario, "weft_child_of", "0 without an error");
    }
}

static weft_entity tree_spawn(const bench_world *b)
{
    weft_entity e = weft_spawn(b->w);
    if (e == WEFT_ENTITY_NONE) {
        bench_world_expect(b, "weft_spawn", weft_last_status(b->w));
    }
    return e;
}

/* Builds `trees` trees of EV_TREE_NODES nodes (wide: one root with the
 * rest as children; deep: a chain), times despawning each root. */
static void tree_despawn(const bench_cfg *cfg, bool verify, double *figs, bool deep)
{
    const char *scenario = deep ? "tree deep despawn" : "tree wide despawn";
    bench_world b;
    weft_component child_of;
    tree_world(&b, scenario, &child_of);
    int32_t trees = tree_count(cfg);
    weft_entity *roots = bench_xmalloc(sizeof *roots * (size_t)trees);
    weft_entity *leaves = bench_xmalloc(sizeof *leaves * (size_t)trees);
    for (int32_t t = 0; t < trees; t++) {
        roots[t] = tree_spawn(&b);
        weft_entity prev = roots[t];
        for (int32_t i = 1; i < EV_TREE_NODES; i++) {
            weft_entity e = tree_spawn(&b);
            bench_world_expect(&b, "weft_set_parent",
                               weft_set_parent(b.w, e, deep ? prev : roots[t]));
            prev = e;
        }
        leaves[t] = prev;
    }
    if (verify) {
        bench_world_verify(&b, (int64_t)trees * EV_TREE_NODES);
        for (int32_t t = 0; t < trees; t++) {
            int32_t count = 0;
            const weft_entity *kids = weft_children(b.w, roots[t], &count);
            ev_expect_count(scenario, "children of a root", count,
                            deep ? 1 : EV_TREE_NODES - 1);
            if (kids == NULL || (!deep && kids[count - 1] != leaves[t])) {
                bench_fail(scenario, "weft_children", "wrong list");
            }
            ev_expect_count(scenario, "ancestors of a leaf",
                            weft_ancestors(b.w, leaves[t], child_of, NULL, 0),
                            deep ? EV_TREE_NODES - 1 : 1);
            ev_expect_count(scenario, "descendants of a root",
                            weft_descendants(b.w, roots[t], child_of, NULL, 0),
                            EV_TREE_NODES - 1);
        }
    }
    uint64_t t0 = ev_now();
    for (int32_t t = 0; t < trees; t++) {
        weft_status st = weft_despawn(b.w, roots[t]);
        if (st != WEFT_OK) {
            bench_world_expect(&b, "weft_despawn (root)", st);
        }
    }
    uint64_t t1 = ev_now();
    if (verify) {
        bench_world_verify(&b, 0);
        if (weft_is_alive(b.w, leaves[0]) || weft_is_alive(b.w, leaves[trees - 1])) {
            bench_fail(scenario, "weft_is_alive after the root's despawn", "leaf alive");
        }
    }
    figs[0] = ev_ns(t0, t1) / ((double)trees * EV_TREE_NODES);
    free(roots);
    free(leaves);
    bench_world_fini(&b);
}

static void tree_wide(const bench_cfg *cfg, const bench_data *d, bool verify, double *figs)
{
    (void)d;
    tree_despawn(cfg, verify, figs, false);
}

static void tree_deep(const bench_cfg *cfg, const bench_data *d, bool verify, double *figs)
{
    (void)d;
    tree_despawn(cfg, verify, figs, true);
}

/* As many plain entities as the trees hold, despawned one by one. */
static void tree_flat(const bench_cfg *cfg, const bench_data *d, bool verify, double *figs)
{
    (void)d;
    bench_world b;
    weft_component child_of;
    tree_world(&b, "tree flat despawn", &child_of);
    int32_t n = tree_count(cfg) * EV_TREE_NODES;
    weft_entity *ents = bench_xmalloc(sizeof *ents * (size_t)n);
    for (int32_t i = 0; i < n; i++) {
        ents[i] = tree_spawn(&b);
    }
    uint64_t t0 = ev_now();
    for (int32_t i = 0; i < n; i++) {
        weft_status st = weft_despawn(b.w, ents[i]);
        if (st != WEFT_OK) {
            bench_world_expect(&b, "weft_despawn", st);
        }
    }
    uint64_t t1 = ev_now();
    if (verify) {
        bench_world_verify(&b, 0);
    }
    figs[0] = ev_ns(t0, t1) / n;
    free(ents);
    bench_world_fini(&b);
}

typedef enum kids_mode {
    KIDS_PLAIN,      /* weft_spawn only */
    KIDS_SET_PARENT, /* weft_spawn + weft_set_parent */
    KIDS_COMMANDS,   /* weft_cmd_spawn + weft_cmd_insert(ChildOf) + apply */
    KIDS_SPAWN_WITH  /* weft_spawn_with(ChildOf) */
} kids_mode;

/* Spawns `parents` parents with `per` children each (parents spawned
 * untimed); ns per child. */
static void kids_case(bool verify, double *figs, kids_mode mode, int32_t parents,
                      int32_t per)
{
    static const char *const names[] = {"tree plain spawn", "tree set_parent",
                                        "tree cmd set_parent", "tree spawn_with ChildOf"};
    const char *scenario = names[mode];
    bench_world b;
    weft_component child_of;
    tree_world(&b, scenario, &child_of);
    int32_t total = parents * per;
    weft_entity *par = bench_xmalloc(sizeof *par * (size_t)parents);
    weft_entity *kids = bench_xmalloc(sizeof *kids * (size_t)total);
    for (int32_t p = 0; p < parents; p++) {
        par[p] = tree_spawn(&b);
    }
    weft_commands *c = mode == KIDS_COMMANDS ? ev_commands(&b) : NULL;
    weft_value cv = {child_of, sizeof(weft_entity), NULL};

    uint64_t t0 = ev_now();
    for (int32_t p = 0; p < parents; p++) {
        weft_entity parent = par[p];
        weft_entity *out = kids + (size_t)p * (size_t)per;
        switch (mode) {
        case KIDS_PLAIN:
            for (int32_t i = 0; i < per; i++) {
                out[i] = tree_spawn(&b);
            }
            break;
        case KIDS_SET_PARENT:
            for (int32_t i = 0; i < per; i++) {
                out[i] = tree_spawn(&b);
                weft_status st = weft_set_parent(b.w, out[i], parent);
                if (st != WEFT_OK) {
                    bench_world_expect(&b, "weft_set_parent", st);
                }
            }
            break;
        case KIDS_COMMANDS:
            for (int32_t i = 0; i < per; i++) {
                out[i] = weft_cmd_spawn(c, NULL, 0);
                if (out[i] == WEFT_ENTITY_NONE) {
                    bench_world_expect(&b, "weft_cmd_spawn", weft_last_status(b.w));
                }
                weft_status st =
                    weft_cmd_insert(c, out[i], child_of, &parent, sizeof parent);
                if (st != WEFT_OK) {
                    bench_world_expect(&b, "weft_cmd_insert (ChildOf)", st);
                }
            }
            break;
        case KIDS_SPAWN_WITH:
            cv.ptr = &parent;
            for (int32_t i = 0; i < per; i++) {
                out[i] = weft_spawn_with(b.w, &cv, 1);
                if (out[i] == WEFT_ENTITY_NONE) {
                    bench_world_expect(&b, "weft_spawn_with (ChildOf)",
                                       weft_last_status(b.w));
                }
            }
            break;
        }
    }
    if (c != NULL) {
        bench_world_expect(&b, "weft_commands_apply", weft_commands_apply(b.w, c));
    }
    uint64_t t1 = ev_now();
    if (verify) {
        bench_world_verify(&b, (int64_t)parents + total);
        for (int32_t p = 0; p < parents; p++) {
            int32_t count = 0;
            const weft_entity *list = weft_children(b.w, par[p], &count);
            ev_expect_count(scenario, "children of a parent", count,
                            mode == KIDS_PLAIN ? 0 : per);
            const weft_entity *want = kids + (size_t)p * (size_t)per;
            if (mode != KIDS_PLAIN &&
                (list == NULL || memcmp(list, want, sizeof *want * (size_t)per) != 0)) {
                bench_fail(scenario, "weft_children", "not the children in spawn order");
            }
            if (mode != KIDS_PLAIN && weft_parent(b.w, want[per - 1]) != par[p]) {
                bench_fail(scenario, "weft_parent", "wrong parent");
            }
        }
    }
    figs[0] = ev_ns(t0, t1) / total;
    if (c != NULL) {
        weft_commands_destroy(c);
    }
    free(par);
    free(kids);
    bench_world_fini(&b);
}

static void kids_plain(const bench_cfg *cfg, const bench_data *d, bool verify, double *figs)
{
    (void)d;
    kids_case(verify, figs, KIDS_PLAIN, kids_parents(cfg), EV_KIDS);
}

static void kids_set_parent(const bench_cfg *cfg, const bench_data *d, bool verify,
                            double *figs)
{
    (void)d;
    kids_case(verify, figs, KIDS_SET_PARENT, kids_parents(cfg), EV_KIDS);
}

static void kids_commands(const bench_cfg *cfg, const bench_data *d, bool verify,
                          double *figs)
{
    (void)d;
    kids_case(verify, figs, KIDS_COMMANDS, kids_parents(cfg), EV_KIDS);
}

static void kids_spawn_with(const bench_cfg *cfg, const bench_data *d, bool verify,
                            double *figs)
{
    (void)d;
    kids_case(verify, figs, KIDS_SPAWN_WITH, kids_parents(cfg), EV_KIDS);
}

/* The same number of children, EV_KIDS_SMALL per parent: how the cost per
 * child grows with the parent's list. */
static void kids_small(const bench_cfg *cfg, const bench_data *d, bool verify, double *figs)
{
    (void)d;
    int32_t parents = kids_parents(cfg) * (EV_KIDS / EV_KIDS_SMALL);
    kids_case(verify, figs, KIDS_SET_PARENT, parents, EV_KIDS_SMALL);
}

void bench_events_tree(const bench_cfg *cfg, const bench_data *data)
{
    int32_t reps = cfg->reps;
    ev_pair wide = ev_run("tree wide", cfg, data, tree_wide, tree_flat, reps);
    ev_pair deep = ev_run("tree deep", cfg, data, tree_deep, tree_flat, reps);
    ev_pair setp = ev_run("tree set_parent", cfg, data, kids_set_parent, kids_plain, reps);
    ev_pair cmds = ev_run("tree cmd", cfg, data, kids_commands, kids_plain, reps);
    ev_pair with = ev_run("tree spawn_with", cfg, data, kids_spawn_with, kids_plain, reps);
    ev_pair small = ev_run("tree 1k", cfg, data, kids_small, kids_set_parent, reps);
    bench_report_ratio("tree despawn wide 1k, per node", "ns", wide.a[0], wide.b[0], 0.0);
    bench_report_ratio("tree despawn deep 1k, per node", "ns", deep.a[0], deep.b[0], 0.0);
    bench_report_ratio("10k children spawn+set_parent", "ns", setp.a[0], setp.b[0], 0.0);
    bench_report_ratio("10k children cmd spawn+ChildOf", "ns", cmds.a[0], cmds.b[0], 0.0);
    bench_report_ratio("10k children spawn_with ChildOf", "ns", with.a[0], with.b[0], 0.0);
    bench_note("tree despawn: %d trees of %d nodes (wide: root + %d children; deep: a "
               "chain), weft_despawn of each root, ns per node; baseline = as many "
               "plain entities despawned one by one; no target given",
               (int)tree_count(cfg), (int)EV_TREE_NODES, (int)EV_TREE_NODES - 1);
    bench_note("tree children: %d parent(s) x %d children, ns per child; baseline = "
               "weft_spawn alone; weft = weft_spawn + weft_set_parent / weft_cmd_spawn + "
               "weft_cmd_insert(ChildOf) + apply / weft_spawn_with(ChildOf); no target "
               "given",
               (int)kids_parents(cfg), (int)EV_KIDS);
    bench_note("tree children scaling: spawn+set_parent %.1f ns per child with %d "
               "children per parent vs %.1f ns with %d (ratio %.2f)",
               small.a[0], (int)EV_KIDS_SMALL, small.b[0], (int)EV_KIDS,
               small.b[0] > 0.0 ? small.a[0] / small.b[0] : 0.0);
}

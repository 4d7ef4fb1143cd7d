/* bench/scenarios_transform.c - the transform plugin (weft_transform) vs a
 * hand-written plain-C recursive single-threaded propagation over the same
 * trees stored in arrays (docs/transform.md). Each figure is the median
 * frame: write the moving Transforms, then propagate (weft: the plugin's
 * schedule; baseline: the recursion over the arrays).
 * Shapes: wide (1 root, 100 children, 1,000 leaves each), humanoids
 * (rigs of 51 bones, after Bevy's transform_hierarchy stress test), a
 * large tree (branching 4, depth 8), chains of 10,000 and 1,000.
 * SPDX-License-Identifier: MIT */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft_transform.h"

/* Registered in bench/harness.c's scenario table. */
void bench_transform(const bench_cfg *cfg, const bench_data *data);

typedef struct xtree {
    int32_t n;
    int32_t *parent;      /* -1: root */
    int32_t *first, *kids; /* children of i: kids[first[i] .. first[i + 1]) */
    weft_transform *t;
    weft_affine *g;
} xtree;

static void xtree_alloc(xtree *x, int32_t n)
{
    x->n = n;
    x->parent = bench_xmalloc((size_t)n * sizeof *x->parent);
    x->first = bench_xmalloc((size_t)(n + 1) * sizeof *x->first);
    x->kids = bench_xmalloc((size_t)n * sizeof *x->kids);
    x->t = bench_xmalloc((size_t)n * sizeof *x->t);
    x->g = bench_xmalloc((size_t)n * sizeof *x->g);
}

/* Children lists from the parent array (parents precede children). */
static void xtree_finish(xtree *x)
{
    memset(x->first, 0, (size_t)(x->n + 1) * sizeof *x->first);
    for (int32_t i = 0; i < x->n; i++) {
        if (x->parent[i] >= 0) {
            x->first[x->parent[i] + 1]++;
        }
    }
    for (int32_t i = 0; i < x->n; i++) {
        x->first[i + 1] += x->first[i];
    }
    int32_t *fill = bench_xmalloc((size_t)x->n * sizeof *fill);
    memcpy(fill, x->first, (size_t)x->n * sizeof *fill);
    for (int32_t i = 0; i < x->n; i++) {
        if (x->parent[i] >= 0) {
            x->kids[fill[x->parent[i]]++] = i;
        }
        x->t[i] = weft_transform_identity();
        x->t[i].translation[0] = 0.5f;
        x->t[i].rotation[1] = 0.0998334f; /* ~0.2 rad about y */
        x->t[i].rotation[3] = 0.9950042f;
    }
    free(fill);
}

static void xtree_free(xtree *x)
{
    free(x->parent);
    free(x->first);
    free(x->kids);
    free(x->t);
    free(x->g);
}

static int32_t shape_wide(xtree *x)
{
    int32_t n = 1 + 100 + 100 * 1000;
    xtree_alloc(x, n);
    x->parent[0] = -1;
    for (int32_t i = 1; i <= 100; i++) {
        x->parent[i] = 0;
    }
    for (int32_t i = 101; i < n; i++) {
        x->parent[i] = 1 + (i - 101) / 1000;
    }
    return n;
}

/* One rig: root, spine of 4, neck + head, two arms (3 + 5 fingers x 3),
 * two legs of 4: 51 bones. */
static int32_t rig(int32_t *parent, int32_t base)
{
    int32_t k = base;
    int32_t root = k;
    parent[k++] = -1;
    int32_t prev = root;
    for (int s = 0; s < 4; s++) {
        parent[k] = prev;
        prev = k++;
    }
    int32_t spine_top = prev;
    parent[k] = spine_top;
    parent[k + 1] = k;
    k += 2;
    for (int arm = 0; arm < 2; arm++) {
        prev = spine_top;
        for (int s = 0; s < 3; s++) {
            parent[k] = prev;
            prev = k++;
        }
        int32_t hand = prev;
        for (int f = 0; f < 5; f++) {
            int32_t fp = hand;
            for (int s = 0; s < 3; s++) {
                parent[k] = fp;
                fp = k++;
            }
        }
    }
    for (int leg = 0; leg < 2; leg++) {
        prev = root;
        for (int s = 0; s < 4; s++) {
            parent[k] = prev;
            prev = k++;
        }
    }
    return k - base;
}

static int32_t shape_humanoids(xtree *x)
{
    int32_t rigs = 2000;
    xtree_alloc(x, rigs * 51);
    int32_t k = 0;
    for (int32_t r = 0; r < rigs; r++) {
        k += rig(x->parent, k);
    }
    x->n = k;
    return k;
}

static int32_t shape_large(xtree *x)
{
    int32_t n = (1 << 16) + (1 << 14) + (1 << 12) + (1 << 10) + 256 + 64 + 16 + 4 + 1;
    xtree_alloc(x, n);
    x->parent[0] = -1;
    for (int32_t i = 1; i < n; i++) {
        x->parent[i] = (i - 1) / 4;
    }
    return n;
}

static int32_t shape_chains(xtree *x, int32_t chains, int32_t len)
{
    xtree_alloc(x, chains * len);
    for (int32_t c = 0; c < chains; c++) {
        for (int32_t k = 0; k < len; k++) {
            x->parent[c * len + k] = k ? c * len + k - 1 : -1;
        }
    }
    return chains * len;
}

/* ---- baseline: recursion over the arrays ---- */

static void base_prop(xtree *x, int32_t i, const weft_affine *pg)
{
    weft_affine local;
    weft_transform_to_affine(&x->t[i], &local);
    if (pg) {
        weft_affine_mul(pg, &local, &x->g[i]);
    } else {
        x->g[i] = local;
    }
    for (int32_t k = x->first[i]; k < x->first[i + 1]; k++) {
        base_prop(x, x->kids[k], &x->g[i]);
    }
}

static double base_frame(xtree *x, float step)
{
    uint64_t t0 = bench_now_ns();
    for (int32_t i = 0; i < x->n; i++) {
        x->t[i].translation[1] += step;
    }
    for (int32_t i = 0; i < x->n; i++) {
        if (x->parent[i] < 0) {
            base_prop(x, i, NULL);
        }
    }
    return (double)(bench_now_ns() - t0);
}

/* ---- weft ---- */

typedef struct xworld {
    weft_world *w;
    weft_schedule *s;
    weft_transform_ids ids;
    weft_query *all;  /* Transform WRITE */
    weft_entity *e;
} xworld;

static void xworld_make(xworld *xw, const xtree *x)
{
    xw->w = weft_world_create(NULL);
    xw->s = weft_schedule_create(xw->w, "PostUpdate");
    if (!xw->w || !xw->s || weft_transform_add_systems(xw->w, xw->s, NULL) != WEFT_OK ||
        weft_transform_register(xw->w, &xw->ids) != WEFT_OK) {
        bench_fail("transform", "setup", xw->w ? weft_last_error(xw->w) : "world");
    }
    xw->e = bench_xmalloc((size_t)x->n * sizeof *xw->e);
    for (int32_t i = 0; i < x->n; i++) {
        weft_value v = {xw->ids.transform, sizeof x->t[i], &x->t[i]};
        xw->e[i] = weft_spawn_with(xw->w, &v, 1);
        if (!xw->e[i] ||
            (x->parent[i] >= 0 && weft_set_parent(xw->w, xw->e[i], xw->e[x->parent[i]]) != WEFT_OK)) {
            bench_fail("transform", "spawn", weft_last_error(xw->w));
        }
    }
    weft_query_desc qd;
    memset(&qd, 0, sizeof qd);
    qd.terms[0].id = xw->ids.transform;
    qd.terms[0].access = WEFT_ACCESS_WRITE;
    qd.term_count = 1;
    xw->all = weft_query_create(xw->w, &qd);
    if (weft_schedule_run(xw->s, 0) != WEFT_OK) {
        bench_fail("transform", "first run", weft_last_error(xw->w));
    }
}

static void xworld_free(xworld *xw)
{
    weft_world_destroy(xw->w);
    free(xw->e);
}

static void xworld_run(xworld *xw)
{
    if (weft_schedule_run(xw->s, 0) != WEFT_OK) {
        bench_fail("transform", "run", weft_last_error(xw->w));
    }
}

/* All moving: every Transform written, then propagation. */
static double weft_frame_all(xworld *xw, float step)
{
    uint64_t t0 = bench_now_ns();
    weft_iter it;
    weft_query_iter(xw->w, xw->all, &it);
    while (weft_iter_next(&it)) {
        int32_t n = weft_iter_count(&it);
        weft_transform *t = weft_iter_field_mut(&it, 0, sizeof *t);
        for (int32_t r = 0; r < n; r++) {
            t[r].translation[1] += step;
        }
    }
    xworld_run(xw);
    return (double)(bench_now_ns() - t0);
}

/* Some moving: the listed entities' Transforms written, then propagation. */
static double weft_frame_some(xworld *xw, const int32_t *which, int32_t count, float step)
{
    uint64_t t0 = bench_now_ns();
    for (int32_t k = 0; k < count; k++) {
        weft_transform *t =
            weft_get_mut(xw->w, xw->e[which[k]], xw->ids.transform, sizeof *t);
        t->translation[1] += step;
    }
    xworld_run(xw);
    return (double)(bench_now_ns() - t0);
}

/* A row label that outlives the scenario (the harness keeps the pointer). */
static const char *keep(const char *label)
{
    size_t n = strlen(label) + 1;
    char *p = bench_xmalloc(n);
    memcpy(p, label, n);
    return p;
}

static int32_t reps_of(const bench_cfg *cfg)
{
    return cfg->reps < 5 ? 5 : cfg->reps;
}

/* Median of weft all-moving frames at `threads` and of baseline frames. */
static void measure_all(const bench_cfg *cfg, xworld *xw, xtree *x, int32_t threads,
                        double *weft_ns, double *base_ns)
{
    if (weft_world_set_threads(xw->w, threads) != WEFT_OK) {
        bench_fail("transform", "threads", weft_last_error(xw->w));
    }
    int32_t reps = reps_of(cfg);
    double *wv = bench_xmalloc((size_t)reps * sizeof *wv);
    double *bv = bench_xmalloc((size_t)reps * sizeof *bv);
    for (int32_t k = 0; k < cfg->warmup + 1; k++) {
        weft_frame_all(xw, 0.001f);
        base_frame(x, 0.001f);
    }
    for (int32_t k = 0; k < reps; k++) {
        wv[k] = weft_frame_all(xw, 0.001f);
        bv[k] = base_frame(x, 0.001f);
    }
    *weft_ns = bench_median(wv, reps);
    *base_ns = bench_median(bv, reps);
    free(wv);
    free(bv);
}

static void shape_rows(const bench_cfg *cfg, const char *name, xtree *x)
{
    xtree_finish(x);
    xworld xw;
    xworld_make(&xw, x);
    double w1, b1, w2, b2;
    measure_all(cfg, &xw, x, 1, &w1, &b1);
    measure_all(cfg, &xw, x, 2, &w2, &b2);
    char label[128];
    snprintf(label, sizeof label, "transform %s %d, all moving, 1 thread vs plain C (us)", name,
             (int)x->n);
    bench_report_ratio(keep(label), "us", w1 / 1e3, b1 / 1e3, 1.3);
    snprintf(label, sizeof label, "transform %s %d, all moving, 2 threads vs 1 (us)", name,
             (int)x->n);
    bench_report_ratio(keep(label), "us", w2 / 1e3, w1 / 1e3, 1.0 / 1.8);
    bench_note("transform %s: weft 1 thread %.0f us, 2 threads %.0f us (speedup %.2fx), "
               "plain C %.0f us", name, w1 / 1e3, w2 / 1e3, w1 / w2, b1 / 1e3);
    xworld_free(&xw);
    xtree_free(x);
}

void bench_transform(const bench_cfg *cfg, const bench_data *data)
{
    (void)data;
    xtree x;
    shape_wide(&x);
    shape_rows(cfg, "wide", &x);
    shape_humanoids(&x);
    shape_rows(cfg, "humanoids", &x);

    /* Large tree: static and 1% of the leaves moving vs all moving (1 thread). */
    shape_large(&x);
    xtree_finish(&x);
    xworld xw;
    xworld_make(&xw, &x);
    double w_all, b_all;
    measure_all(cfg, &xw, &x, 1, &w_all, &b_all);
    int32_t reps = reps_of(cfg);
    double *v = bench_xmalloc((size_t)reps * sizeof *v);
    xworld_run(&xw); /* settle */
    for (int32_t k = 0; k < reps; k++) {
        uint64_t t0 = bench_now_ns();
        xworld_run(&xw);
        v[k] = (double)(bench_now_ns() - t0);
    }
    double w_static = bench_median(v, reps);
    int32_t leaves0 = x.n - (1 << 16), nleaf = (1 << 16) / 100;
    int32_t *which = bench_xmalloc((size_t)nleaf * sizeof *which);
    uint64_t s = cfg->seed;
    for (int32_t k = 0; k < nleaf; k++) {
        which[k] = leaves0 + (int32_t)(bench_rng_next(&s) % (uint64_t)(1 << 16));
    }
    for (int32_t k = 0; k < reps; k++) {
        v[k] = weft_frame_some(&xw, which, nleaf, 0.001f);
    }
    double w_leaves = bench_median(v, reps);
    char label[128];
    snprintf(label, sizeof label, "transform large %d static vs all moving (us)", (int)x.n);
    bench_report_ratio(keep(label), "us", w_static / 1e3, w_all / 1e3, 0.02);
    snprintf(label, sizeof label, "transform large %d, 1%% leaves moving vs all moving (us)",
             (int)x.n);
    bench_report_ratio(keep(label), "us", w_leaves / 1e3, w_all / 1e3, 0.05);
    snprintf(label, sizeof label, "transform large %d, all moving, 1 thread vs plain C (us)",
             (int)x.n);
    bench_report_ratio(keep(label), "us", w_all / 1e3, b_all / 1e3, 0);
    free(which);
    free(v);
    xworld_free(&xw);
    xtree_free(&x);

    /* Chains: 10,000 deep vs ten of 1,000 (the same nodes): linear in depth. */
    xtree c1, c10;
    shape_chains(&c1, 1, 10000);
    xtree_finish(&c1);
    shape_chains(&c10, 10, 1000);
    xtree_finish(&c10);
    xworld x1, x10;
    xworld_make(&x1, &c1);
    xworld_make(&x10, &c10);
    double wd, bd, ws, bs;
    measure_all(cfg, &x1, &c1, 1, &wd, &bd);
    measure_all(cfg, &x10, &c10, 1, &ws, &bs);
    bench_report_ratio("transform chain 10,000 deep vs 10 chains of 1,000 (us)", "us",
                       wd / 1e3, ws / 1e3, 1.2);
    bench_report_ratio("transform chain 10,000 deep, 1 thread vs plain C (us)", "us", wd / 1e3,
                       bd / 1e3, 0);
    xworld_free(&x1);
    xworld_free(&x10);
    xtree_free(&c1);
    xtree_free(&c10);
}

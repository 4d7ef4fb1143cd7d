/* examples/15_transform_stress.c - a transform hierarchy stress test for
 * the transform plugin (include/weft_transform.h, docs/transform.md), with
 * the shapes of Bevy's transform_hierarchy stress test
 * (examples/stress_tests/transform_hierarchy.rs): large, wide and deep
 * trees, a chain, a tree with only its leaves or only its first levels
 * moving, and humanoid rigs all active, all but ten inactive, or half and
 * half. Each node is chosen to move (or not) when it is spawned; every
 * frame a system in Update rewrites the moving nodes' translations and the
 * plugin propagates in PostUpdate.
 *
 * Usage: weft_example_transform_stress [config|all] [frames] [threads] [small]
 *   config   one of the names below, or all (default)
 *   frames   frames per configuration (default 60)
 *   threads  workers (default 0: one per CPU)
 *   small    any fourth argument: smaller shapes (the ctest smoke run)
 * Prints per configuration: nodes, moving nodes, depth, mean frame time.
 * After the last frame it checks every node's GlobalTransform against
 * weft_transform_compute_global (the same bits) and exits 1 on a mismatch.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft_transform.h"

typedef enum shape { TREE, NON_UNIFORM, HUMANOIDS } shape;

typedef struct config {
    const char *name;
    shape kind;
    int depth, width, small_depth;          /* TREE, NON_UNIFORM */
    int active, inactive, small_div;        /* HUMANOIDS */
    float probability;                      /* chance a node moves */
    int min_depth, max_depth;               /* only nodes at these depths move;
                                               a negative min_depth counts
                                               from the deepest level (-1) */
} config;

static const config CONFIGS[] = {
    {"large_tree", NON_UNIFORM, 18, 8, 8, 0, 0, 1, 0.5f, 0, 1 << 30},
    {"wide_tree", TREE, 3, 500, 2, 0, 0, 1, 0.5f, 0, 1 << 30},
    {"deep_tree", NON_UNIFORM, 25, 2, 14, 0, 0, 1, 0.5f, 0, 1 << 30},
    {"chain", TREE, 2500, 1, 500, 0, 0, 1, 0.5f, 0, 1 << 30},
    {"update_leaves", TREE, 18, 2, 11, 0, 0, 1, 0.5f, -1, 1 << 30},
    {"update_shallow", TREE, 18, 2, 11, 0, 0, 1, 0.5f, 0, 8},
    {"humanoids_active", HUMANOIDS, 0, 0, 0, 4000, 0, 20, 1.0f, 0, 1 << 30},
    {"humanoids_inactive", HUMANOIDS, 0, 0, 0, 10, 3990, 20, 1.0f, 0, 1 << 30},
    {"humanoids_mixed", HUMANOIDS, 0, 0, 0, 2000, 2000, 20, 1.0f, 0, 1 << 30},
};
enum { NCONFIGS = sizeof CONFIGS / sizeof CONFIGS[0] };

/* Parent map of the tree being built: parent[i] < i, -1 for a root. */
typedef struct nodes {
    int32_t *parent, *depth;
    int32_t n, cap;
} nodes;

static int32_t node_add(nodes *v, int32_t parent)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 1024;
        v->parent = realloc(v->parent, (size_t)v->cap * sizeof *v->parent);
        v->depth = realloc(v->depth, (size_t)v->cap * sizeof *v->depth);
        if (!v->parent || !v->depth) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
    }
    v->parent[v->n] = parent;
    v->depth[v->n] = parent < 0 ? 0 : v->depth[parent] + 1;
    return v->n++;
}

/* A uniform tree of `depth` levels (the root's is level 0): every node
 * above the last level has `width` children. Built level by level
 * (parents before children). */
static void gen_tree(nodes *v, int depth, int width)
{
    int32_t first = node_add(v, -1), last = first + 1;
    for (int d = 1; d < depth; d++) {
        int32_t end = v->n;
        for (int32_t p = first; p < last && p < end; p++) {
            for (int k = 0; k < width; k++) {
                node_add(v, p);
            }
        }
        first = last;
        last = v->n;
    }
}

/* A non-uniform tree: a node with `left` levels below it has up to `width`
 * children, the k-th of which gets left - 1 - k levels, so the first side
 * is deepest (far fewer nodes than the uniform tree of that depth); the
 * whole tree has left + 1 levels. */
static void gen_non_uniform(nodes *v, int32_t parent, int left, int width)
{
    int32_t self = node_add(v, parent);
    for (int k = 0; k < width && left - 1 - k >= 0; k++) {
        gen_non_uniform(v, self, left - 1 - k, width);
    }
}

/* One humanoid rig of 51 bones: root, spine of 4, neck and head, two arms
 * of 3 with five fingers of 3, two legs of 4 (the bench's rig). */
static void gen_humanoid(nodes *v)
{
    int32_t root = node_add(v, -1), prev = root;
    for (int s = 0; s < 4; s++) {
        prev = node_add(v, prev);
    }
    int32_t spine_top = prev;
    node_add(v, node_add(v, spine_top));
    for (int arm = 0; arm < 2; arm++) {
        prev = spine_top;
        for (int s = 0; s < 3; s++) {
            prev = node_add(v, prev);
        }
        for (int f = 0; f < 5; f++) {
            int32_t fp = prev;
            for (int s = 0; s < 3; s++) {
                fp = node_add(v, fp);
            }
        }
    }
    for (int leg = 0; leg < 2; leg++) {
        prev = root;
        for (int s = 0; s < 4; s++) {
            prev = node_add(v, prev);
        }
    }
}

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float rnd01(uint64_t *s)
{
    return (float)((double)(rng(s) >> 11) * (1.0 / 9007199254740992.0));
}

/* The moving nodes' angles (Bevy's UpdateValue), one per mover. */
typedef struct movers {
    weft_component transform;
    weft_entity *e;
    float *angle;
    int32_t n;
} movers;

/* Update: each mover's angle advances; its translation goes round a circle. */
static void update_sys(weft_system_ctx *ctx, void *user)
{
    movers *m = user;
    for (int32_t k = 0; k < m->n; k++) {
        weft_transform *t =
            weft_system_get_mut(ctx, 0, m->e[k], 0, sizeof(weft_transform));
        if (!t) {
            weft_system_fail(ctx, WEFT_ERR_NOT_FOUND, "a mover lost its Transform");
            return;
        }
        m->angle[k] += (float)weft_system_delta(ctx) * 0.1f;
        t->translation[0] = cosf(m->angle[k]) * 32.0f;
        t->translation[1] = sinf(m->angle[k]) * 32.0f;
    }
}

static double now_ms(void)
{
    return (double)clock() * 1000.0 / CLOCKS_PER_SEC;
}

static int run_config(const config *cfg, int frames, int threads, int small)
{
    nodes v = {NULL, NULL, 0, 0};
    /* which nodes may move: 0 inactive rig, 1 active */
    char *active = NULL;
    if (cfg->kind == TREE) {
        gen_tree(&v, small ? cfg->small_depth : cfg->depth, cfg->width);
    } else if (cfg->kind == NON_UNIFORM) {
        gen_non_uniform(&v, -1, (small ? cfg->small_depth : cfg->depth) - 1, cfg->width);
    }
    int rigs_on = small ? cfg->active / cfg->small_div + (cfg->active > 0) : cfg->active;
    int rigs_off = small ? cfg->inactive / cfg->small_div : cfg->inactive;
    if (cfg->kind == HUMANOIDS) {
        int32_t cap = (rigs_on + rigs_off) * 51;
        active = malloc((size_t)cap);
        for (int r = 0; r < rigs_on + rigs_off; r++) {
            int32_t from = v.n;
            gen_humanoid(&v);
            memset(active + from, r < rigs_on, (size_t)(v.n - from));
        }
    }
    weft_app *app = weft_app_create(NULL);
    if (!app) {
        fprintf(stderr, "app: out of memory\n");
        return 2;
    }
    weft_world *w = weft_app_world(app);
    weft_transform_ids ids;
    if (weft_world_set_threads(w, threads) != WEFT_OK || weft_transform_add_plugin(app) != WEFT_OK ||
        weft_transform_register(w, &ids) != WEFT_OK) {
        fprintf(stderr, "setup: %s\n", weft_last_error(w));
        return 2;
    }
    weft_entity *e = malloc((size_t)v.n * sizeof *e);
    movers m = {ids.transform, malloc((size_t)v.n * sizeof(weft_entity)),
                malloc((size_t)v.n * sizeof(float)), 0};
    if (!e || !m.e || !m.angle) {
        fprintf(stderr, "out of memory\n");
        return 2;
    }
    uint64_t seed = 0x5eedull;
    int maxdepth = 0;
    for (int32_t i = 0; i < v.n; i++) {
        maxdepth = v.depth[i] > maxdepth ? v.depth[i] : maxdepth;
    }
    int min_depth = cfg->min_depth < 0 ? maxdepth + 1 + cfg->min_depth : cfg->min_depth;
    for (int32_t i = 0; i < v.n; i++) {
        weft_transform t = weft_transform_identity();
        if (v.parent[i] < 0 && cfg->kind == HUMANOIDS) { /* rigs spread out */
            t.translation[0] = rnd01(&seed) * 500.0f - 250.0f;
            t.translation[1] = rnd01(&seed) * 500.0f - 250.0f;
        } else if (v.parent[i] >= 0) { /* children offset around their parent */
            t.translation[0] = rnd01(&seed) * 2.0f - 1.0f;
            t.translation[1] = 1.0f;
        }
        weft_value val = {ids.transform, sizeof t, &t};
        e[i] = weft_spawn_with(w, &val, 1);
        if (!e[i] || (v.parent[i] >= 0 && weft_set_parent(w, e[i], e[v.parent[i]]) != WEFT_OK)) {
            fprintf(stderr, "spawn: %s\n", weft_last_error(w));
            return 2;
        }
        bool moves = rnd01(&seed) < cfg->probability && v.depth[i] >= min_depth &&
                     v.depth[i] <= cfg->max_depth && (!active || active[i]);
        if (moves) {
            m.e[m.n] = e[i];
            m.angle[m.n++] = rnd01(&seed) * 6.2831853f;
        }
    }
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0] = (weft_term){ids.transform, WEFT_ACCESS_WRITE, 0, 0, 0};
    q.term_count = 1;
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "stress.update";
    d.fn = update_sys;
    d.user = &m;
    d.queries = &q;
    d.query_count = 1;
    if (!weft_app_add_system(app, WEFT_APP_UPDATE, &d)) {
        fprintf(stderr, "system: %s\n", weft_last_error(w));
        return 2;
    }
    if (weft_app_update(app, 1.0 / 60.0) != WEFT_OK) { /* startup + first frame */
        fprintf(stderr, "first frame: %s\n", weft_last_error(w));
        return 2;
    }
    double t0 = now_ms();
    for (int f = 0; f < frames; f++) {
        if (weft_app_update(app, 1.0 / 60.0) != WEFT_OK) {
            fprintf(stderr, "frame %d: %s\n", f, weft_last_error(w));
            return 2;
        }
    }
    double ms = (now_ms() - t0) / (frames > 0 ? frames : 1);
    /* every node against the on-demand computation: the same bits */
    int32_t bad = 0;
    for (int32_t i = 0; i < v.n; i++) {
        weft_affine want;
        const weft_affine *g = weft_get(w, e[i], ids.global, sizeof *g);
        if (weft_transform_compute_global(w, e[i], &want) != WEFT_OK || !g ||
            memcmp(g, &want, sizeof want) != 0) {
            bad++;
        }
    }
    printf("%-19s nodes %7d  moving %7d  depth %5d  %8.3f ms/frame (cpu)  %s\n", cfg->name,
           (int)v.n, (int)m.n, maxdepth, ms, bad ? "MISMATCH" : "checked");
    if (bad) {
        fprintf(stderr, "%s: %d nodes differ from weft_transform_compute_global\n", cfg->name,
                (int)bad);
    }
    weft_app_destroy(app);
    free(e);
    free(m.e);
    free(m.angle);
    free(active);
    free(v.parent);
    free(v.depth);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    int frames = argc > 2 ? atoi(argv[2]) : 60;
    int threads = argc > 3 ? atoi(argv[3]) : -1;
    int small = argc > 4;
    if (frames < 0) {
        fprintf(stderr, "frames must not be negative\n");
        return 2;
    }
    int rc = 0, ran = 0;
    for (int k = 0; k < NCONFIGS; k++) {
        if (strcmp(which, "all") == 0 || strcmp(which, CONFIGS[k].name) == 0) {
            int r = run_config(&CONFIGS[k], frames, threads, small);
            rc = r > rc ? r : rc;
            ran++;
        }
    }
    if (!ran) {
        fprintf(stderr, "unknown configuration '%s'; available: all", which);
        for (int k = 0; k < NCONFIGS; k++) {
            fprintf(stderr, " %s", CONFIGS[k].name);
        }
        fprintf(stderr, "\n");
        return 2;
    }
    return rc;
}

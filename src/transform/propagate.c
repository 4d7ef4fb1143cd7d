/* src/transform/propagate.c - registration, the propagation systems and
 * the plugin of weft_transform (include/weft_transform.h, docs/transform.md).
 *
 * After Bevy's bevy_transform (crates/bevy_transform/src/systems.rs):
 * mark_dirty_trees walks up from every entity whose Transform or ChildOf
 * changed (or whose ChildOf was removed) and marks it and its ancestors,
 * stopping at the first already marked, so the marks cost O(changed x
 * depth) and never O(world). propagate then
 *   1. recomputes, in parallel chunks, every root (no ChildOf) whose
 *      Transform changed (Bevy's sync_simple_transforms);
 *   2. takes the roots of the marked trees (the Changed filter on
 *      TransformTreeChanged) and walks down from them, entering a child only
 *      when its parent was recomputed or the child is marked, so subtrees
 *      in which nothing moved are never touched;
 *   3. splits the walk: the first levels are expanded on the system's thread
 *      until there are enough independent subtrees, which pool tasks then
 *      take from a shared cursor, each walking its subtrees with an explicit
 *      stack (no recursion: 100,000-deep chains are fine);
 *   4. writes the new GlobalTransforms back, stamped changed, through the
 *      system's query (in parallel chunks, or one by one when few changed).
 * Every entity is computed exactly once from the same inputs whichever task
 * takes it, so results are bit-identical on any thread count.
 *
 * Built on weft.h only. The walk reads the world through weft_get,
 * weft_children and weft_get_ticks on the world pointer the systems
 * captured: reads while the system runs with its declared read access
 * (queries 4 and the marks' ordering) and no structural change, which
 * weft defers during a run. Writes go only through the system's queries.
 * SPDX-License-Identifier: MIT */
#include "transform_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* One pending node of the walk: its parent's GlobalTransform (a stable
 * pointer: a column value or a slot of res) and whether that parent was
 * recomputed this run. */
typedef struct xf_item {
    weft_entity e;
    const weft_affine *parent;
    uint32_t parent_changed;
} xf_item;

/* State shared by the two systems of one schedule (user pointer of both;
 * freed by the mark system's local fini). The mark system runs before
 * propagate (same set, chained), so the arrays are handed over by the
 * schedule's ordering. Arrays are indexed by entity index. */
typedef struct xf_ctx {
    weft_world *world;
    weft_transform_ids ids;
    weft_component targets; /* ChildOf.targets */
    uint32_t epoch;         /* mark run counter (never 0 after the first) */
    int32_t cap;            /* entries of the arrays below */
    _Atomic uint32_t *tree_epoch; /* == epoch: the entity or a descendant changed */
    uint32_t *self_epoch;   /* == epoch: its Transform/ChildOf changed */
    uint32_t *stamp;        /* == epoch: res holds a new value to write */
    weft_affine *res;       /* new GlobalTransforms */
    weft_entity *changed;   /* entities with a new value (cap) */
    xf_item *items;         /* pending subtrees (cap) */
    xf_item *next;          /* the next level while expanding (cap) */
    int32_t nitems;
    _Atomic int32_t cursor;   /* next item a task takes */
    _Atomic int32_t nchanged; /* entries of changed */
    _Atomic int64_t visited;  /* nodes walked this run (bounded by cap) */
    _Atomic int32_t corrupt;  /* the walk passed its bound */
    _Atomic int32_t oom;      /* a task's stack could not grow */
    weft_entity *roots;       /* marked roots to stamp (cap) */
    _Atomic int32_t nroots;
    _Atomic int32_t mark_bad; /* a parallel mark walk passed its bound */
} xf_ctx;

/* ---- registration ---- */

static weft_status find_or_register(weft_world *w, const char *name, size_t size,
                                    const weft_require *req, int32_t nreq,
                                    weft_component *out)
{
    weft_component c = weft_component_lookup(w, name);
    if (c) {
        weft_component_info info;
        weft_status st = weft_component_info_get(w, c, &info);
        if (st != WEFT_OK) {
            return st;
        }
        if (info.size != size) {
            return WEFT_ERR_SIZE_MISMATCH;
        }
        *out = c;
        return WEFT_OK;
    }
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    d.required = req;
    d.required_count = nreq;
    c = weft_component_register(w, &d);
    if (!c) {
        return weft_last_status(w);
    }
    *out = c;
    return WEFT_OK;
}

WEFT_API weft_status weft_transform_register(weft_world *world, weft_transform_ids *out)
{
    if (!world) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out) {
        return WEFT_ERR_INVALID_ARG;
    }
    weft_transform_ids ids;
    memset(&ids, 0, sizeof ids);
    ids.child_of = weft_child_of(world);
    if (!ids.child_of) {
        return weft_last_status(world) != WEFT_OK ? weft_last_status(world)
                                                  : WEFT_ERR_INVALID_HANDLE;
    }
    weft_status st = find_or_register(world, WEFT_GLOBAL_TRANSFORM_NAME, sizeof(weft_affine),
                                      NULL, 0, &ids.global);
    if (st == WEFT_OK) {
        st = find_or_register(world, WEFT_TRANSFORM_TREE_CHANGED_NAME, 1, NULL, 0,
                              &ids.tree_changed);
    }
    if (st == WEFT_OK) {
        static const weft_affine identity = {{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}};
        static const uint8_t zero = 0;
        weft_require req[2];
        memset(req, 0, sizeof req);
        req[0].id = ids.global;
        req[0].value = &identity;
        req[0].size = sizeof identity;
        req[1].id = ids.tree_changed;
        req[1].value = &zero;
        req[1].size = 1;
        st = find_or_register(world, WEFT_TRANSFORM_NAME, sizeof(weft_transform), req, 2,
                              &ids.transform);
    }
    if (st != WEFT_OK) {
        return st;
    }
    *out = ids;
    return WEFT_OK;
}

/* ---- the shared state ---- */

static void ctx_free(xf_ctx *c)
{
    free((void *)c->tree_epoch);
    free(c->roots);
    free(c->self_epoch);
    free(c->stamp);
    free(c->res);
    free(c->changed);
    free(c->items);
    free(c->next);
    free(c);
}

/* Grows the arrays to cover every allocated entity index (new entries 0). */
static bool ctx_reserve(xf_ctx *c)
{
    weft_world_stats s;
    if (weft_world_get_stats(c->world, &s) != WEFT_OK) {
        return false;
    }
    int32_t need = s.entity_records + 1;
    if (need <= c->cap) {
        return true;
    }
    int32_t cap = c->cap ? c->cap : 1024;
    while (cap < need) {
        cap = cap > INT32_MAX / 2 ? need : cap * 2;
    }
    void *p;
#define XF_GROW(field, zero)                                                             \
    p = realloc((void *)c->field, (size_t)cap * sizeof *c->field);                               \
    if (!p) {                                                                            \
        return false;                                                                    \
    }                                                                                    \
    c->field = p;                                                                        \
    if (zero) {                                                                          \
        memset((void *)(c->field + c->cap), 0, (size_t)(cap - c->cap) * sizeof *c->field); \
    }
    XF_GROW(tree_epoch, 1)
    XF_GROW(self_epoch, 1)
    XF_GROW(stamp, 1)
    XF_GROW(res, 0)
    XF_GROW(changed, 0)
    XF_GROW(items, 0)
    XF_GROW(next, 0)
    XF_GROW(roots, 0)
#undef XF_GROW
    c->cap = cap;
    return true;
}

static inline uint32_t eidx(weft_entity e)
{
    return (uint32_t)e;
}

/* ---- mark_dirty_trees ---- */

enum { MQ_TRANSFORM_CHANGED, MQ_PARENT_CHANGED, MQ_TREE, MQ_PARENT };

/* Marks e (its own input changed) and walks up marking its ancestors. */
static bool mark_from(xf_ctx *c, weft_entity e, int64_t bound)
{
    uint32_t i = eidx(e);
    if (i >= (uint32_t)c->cap) {
        return true;
    }
    c->self_epoch[i] = c->epoch;
    const weft_entity *pe = weft_get(c->world, e, c->ids.child_of, sizeof(weft_entity));
    int32_t nch = 0;
    if (!pe && !weft_children(c->world, e, &nch)) {
        return true; /* a root without children: the simple path recomputes it */
    }
    weft_entity x = e;
    for (int64_t steps = 0;; steps++) {
        uint32_t xi = eidx(x);
        if (xi >= (uint32_t)c->cap || steps > bound) {
            return steps <= bound;
        }
        if (atomic_load_explicit(&c->tree_epoch[xi], memory_order_relaxed) == c->epoch ||
            atomic_exchange_explicit(&c->tree_epoch[xi], c->epoch, memory_order_relaxed) ==
                c->epoch) {
            return true; /* this path is marked already (by this task or another) */
        }
        const weft_entity *p = weft_get(c->world, x, c->ids.child_of, sizeof(weft_entity));
        if (!p || !*p) {
            /* a root, reached once (the exchange above): its
             * TransformTreeChanged is stamped after the walks, on the
             * system's thread, and is what propagate looks for */
            int32_t k = atomic_fetch_add_explicit(&c->nroots, 1, memory_order_relaxed);
            if (k < c->cap) {
                c->roots[k] = x;
            }
            return true;
        }
        x = *p;
    }
}

/* A pool task of the marks: the chunk's entities whose Transform changed. */
static void mark_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    xf_ctx *c = user;
    int64_t bound = c->cap;
    while (weft_iter_next(it)) {
        const weft_entity *ents = weft_iter_entities(it);
        int32_t n = weft_iter_count(it);
        for (int32_t r = 0; r < n; r++) {
            if (!mark_from(c, ents[r], bound)) {
                atomic_store(&c->mark_bad, 1);
            }
        }
    }
}

static void mark_system(weft_system_ctx *sys, void *user)
{
    xf_ctx *c = user;
    if (!ctx_reserve(c)) {
        weft_system_fail(sys, WEFT_ERR_OUT_OF_MEMORY,
                         "weft.transform.mark_dirty_trees: out of memory for the dirty bits");
        return;
    }
    if (++c->epoch == 0) { /* wrapped: old marks could alias the new epoch */
        memset((void *)c->tree_epoch, 0, (size_t)c->cap * sizeof *c->tree_epoch);
        memset(c->self_epoch, 0, (size_t)c->cap * sizeof *c->self_epoch);
        memset(c->stamp, 0, (size_t)c->cap * sizeof *c->stamp);
        c->epoch = 1;
    }
    int64_t bound = c->cap;
    atomic_store(&c->nroots, 0);
    atomic_store(&c->mark_bad, 0);
    weft_status pst = weft_system_par_each(sys, MQ_TRANSFORM_CHANGED, mark_chunk, c, 4096);
    if (pst != WEFT_OK) {
        weft_system_fail(sys, pst, "weft.transform.mark_dirty_trees: cannot iterate");
        return;
    }
    bool ok = !atomic_load(&c->mark_bad);
    for (int q = MQ_PARENT_CHANGED; q <= MQ_PARENT_CHANGED; q++) {
        weft_iter it;
        if (weft_system_iter(sys, q, &it) != WEFT_OK) {
            weft_system_fail(sys, WEFT_ERR_OUT_OF_MEMORY,
                             "weft.transform.mark_dirty_trees: cannot iterate");
            return;
        }
        while (weft_iter_next(&it)) {
            const weft_entity *ents = weft_iter_entities(&it);
            int32_t n = weft_iter_count(&it);
            for (int32_t r = 0; r < n; r++) {
                ok = mark_from(c, ents[r], bound) && ok;
            }
        }
    }
    /* Orphans (ChildOf removed): now roots, recomputed by propagate. */
    for (weft_entity e; (e = weft_system_removed_read(sys, c->ids.child_of)) != 0;) {
        if (weft_is_alive(c->world, e) && weft_has(c->world, e, c->ids.transform)) {
            ok = mark_from(c, e, bound) && ok;
        }
    }
    int32_t nroots = atomic_load(&c->nroots);
    for (int32_t k = 0; k < nroots && k < c->cap; k++) {
        weft_system_get_mut(sys, MQ_TREE, c->roots[k], 0, 1);
    }
    if (!ok) {
        weft_system_fail(sys, WEFT_ERR_RELATIONSHIP,
                         "weft.transform.mark_dirty_trees: a ChildOf chain is longer than "
                         "the entity count (corrupted hierarchy); marking stopped");
    }
}

static void mark_fini(void *local, void *user)
{
    (void)local;
    ctx_free(user);
}

/* ---- propagate ---- */

enum { PQ_ROOT_CHANGED, PQ_ROOT, PQ_DIRTY_ROOT, PQ_CHILD, PQ_READS };

/* Entities with a new value, gathered per task and published in blocks
 * (one atomic add per block instead of per node). */
typedef struct xf_batch {
    int32_t n;
    weft_entity e[256];
} xf_batch;

static void batch_flush(xf_ctx *c, xf_batch *b)
{
    if (b->n == 0) {
        return;
    }
    int32_t k = atomic_fetch_add_explicit(&c->nchanged, b->n, memory_order_relaxed);
    for (int32_t j = 0; j < b->n && k + j < c->cap; j++) {
        c->changed[k + j] = b->e[j];
    }
    b->n = 0;
}

/* Visits one node: recomputes it when its parent was recomputed or its own
 * input changed, then hands out the children that need a visit. */
static inline void visit(xf_ctx *c, const xf_item *it, xf_item *out, int32_t *nout,
                         xf_batch *b)
{
    weft_world *w = c->world;
    weft_entity e = it->e;
    uint32_t i = eidx(e);
    const weft_transform *t = weft_get(w, e, c->ids.transform, sizeof(weft_transform));
    const weft_affine *old = weft_get(w, e, c->ids.global, sizeof(weft_affine));
    if (!t || !old || i >= (uint32_t)c->cap) {
        return; /* not part of the transform hierarchy: skipped with its subtree */
    }
    bool recompute = it->parent_changed || c->self_epoch[i] == c->epoch;
    const weft_affine *mine = old;
    if (recompute) {
        weft_affine local;
        wxf_to_affine(t, &local);
        wxf_mul(it->parent, &local, &c->res[i]);
        if (memcmp(&c->res[i], old, sizeof *old) != 0) {
            c->stamp[i] = c->epoch;
            if (b->n == (int32_t)(sizeof b->e / sizeof b->e[0])) {
                batch_flush(c, b);
            }
            b->e[b->n++] = e;
        }
        mine = &c->res[i];
    }
    int32_t n = 0;
    const weft_entity *ch = weft_children(w, e, &n);
    for (int32_t k = 0; k < n; k++) {
        uint32_t ci = eidx(ch[k]);
        if (recompute || (ci < (uint32_t)c->cap && atomic_load_explicit(&c->tree_epoch[ci], memory_order_relaxed) == c->epoch)) {
            xf_item *o = &out[(*nout)++];
            o->e = ch[k];
            o->parent = mine;
            o->parent_changed = recompute;
        }
    }
}

/* A pool task: takes items from the shared cursor and walks each subtree
 * depth first with its own stack. */
static void walk_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    xf_ctx *c = user;
    while (weft_iter_next(it)) {
        /* the chunk's rows only carry the task */
    }
    xf_item *stack = NULL;
    int32_t cap = 0;
    xf_batch batch;
    batch.n = 0;
    const int32_t grab = 16;
    for (;;) {
        int32_t first = atomic_fetch_add_explicit(&c->cursor, grab, memory_order_relaxed);
        if (first >= c->nitems) {
            break;
        }
        int32_t last = first + grab < c->nitems ? first + grab : c->nitems;
        for (int32_t k = first; k < last; k++) {
            int32_t top = 0;
            if (cap < 1) {
                cap = 256;
                stack = malloc((size_t)cap * sizeof *stack);
                if (!stack) {
                    batch_flush(c, &batch);
                    atomic_store(&c->oom, 1);
                    return;
                }
            }
            stack[top++] = c->items[k];
            int64_t walked = 0;
            while (top > 0) {
                xf_item cur = stack[--top];
                int32_t n = 0;
                const weft_entity *ch = weft_children(c->world, cur.e, &n);
                (void)ch;
                if (top + n > cap) {
                    int32_t nc = cap;
                    while (nc < top + n) {
                        nc *= 2;
                    }
                    xf_item *ns = realloc(stack, (size_t)nc * sizeof *stack);
                    if (!ns) {
                        free(stack);
                        batch_flush(c, &batch);
                        atomic_store(&c->oom, 1);
                        return;
                    }
                    stack = ns;
                    cap = nc;
                }
                visit(c, &cur, stack, &top, &batch);
                if (++walked > (int64_t)c->cap) {
                    break; /* more nodes than entities: a cycle */
                }
            }
            int64_t v = atomic_fetch_add_explicit(&c->visited, walked, memory_order_relaxed);
            if (v + walked > (int64_t)c->cap) {
                atomic_store(&c->corrupt, 1);
                free(stack);
                batch_flush(c, &batch);
                return;
            }
        }
    }
    free(stack);
    batch_flush(c, &batch);
}

/* Write-back task: copies the new values of this chunk's rows, stamped. */
static void write_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    xf_ctx *c = user;
    while (weft_iter_next(it)) {
        const weft_entity *ents = weft_iter_entities(it);
        int32_t n = weft_iter_count(it);
        weft_affine *g = weft_iter_field_mut_nomark(it, 0, sizeof(weft_affine));
        for (int32_t r = 0; r < n; r++) {
            uint32_t i = eidx(ents[r]);
            if (i < (uint32_t)c->cap && c->stamp[i] == c->epoch) {
                g[r] = c->res[i];
                weft_iter_mark(it, 0, r);
            }
        }
    }
}

/* Roots whose Transform changed: the simple path, in parallel chunks. */
static void root_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    (void)user;
    while (weft_iter_next(it)) {
        int32_t n = weft_iter_count(it);
        const weft_transform *t = weft_iter_field(it, 0, sizeof(weft_transform));
        weft_affine *g = weft_iter_field_mut_nomark(it, 1, sizeof(weft_affine));
        for (int32_t r = 0; r < n; r++) {
            weft_affine a;
            wxf_to_affine(&t[r], &a);
            if (memcmp(&a, &g[r], sizeof a) != 0) {
                g[r] = a;
                weft_iter_mark(it, 1, r);
            }
        }
    }
}

/* Levels expanded on the system's thread before the pool takes over. */
enum { XF_EXPAND_LEVELS = 8, XF_ITEMS_PER_WORKER = 64 };

static void propagate_system(weft_system_ctx *sys, void *user)
{
    xf_ctx *c = user;
    weft_world *w = c->world;
    if (!ctx_reserve(c)) {
        weft_system_fail(sys, WEFT_ERR_OUT_OF_MEMORY,
                         "weft.transform.propagate: out of memory for the results");
        return;
    }
    weft_status st = weft_system_par_each(sys, PQ_ROOT_CHANGED, root_chunk, c, 1024);
    if (st != WEFT_OK) {
        weft_system_fail(sys, st, "weft.transform.propagate: roots");
        return;
    }
    atomic_store(&c->nchanged, 0);
    atomic_store(&c->visited, 0);
    atomic_store(&c->corrupt, 0);
    atomic_store(&c->oom, 0);
    c->nitems = 0;
    /* The roots of the marked trees. */
    weft_iter it;
    if (weft_system_iter(sys, PQ_DIRTY_ROOT, &it) != WEFT_OK) {
        weft_system_fail(sys, WEFT_ERR_OUT_OF_MEMORY, "weft.transform.propagate: iterate");
        return;
    }
    while (weft_iter_next(&it)) {
        const weft_entity *ents = weft_iter_entities(&it);
        int32_t n = weft_iter_count(&it);
        for (int32_t r = 0; r < n; r++) {
            weft_entity e = ents[r];
            uint32_t i = eidx(e);
            if (i >= (uint32_t)c->cap) {
                continue;
            }
            const weft_transform *t =
                weft_system_get(sys, PQ_ROOT, e, 0, sizeof(weft_transform));
            const weft_affine *g = weft_system_get(sys, PQ_ROOT, e, 1, sizeof(weft_affine));
            if (!t || !g) {
                continue;
            }
            bool self = c->self_epoch[i] == c->epoch;
            if (self) {
                /* an orphan, or a root the simple path wrote already */
                weft_affine a;
                wxf_to_affine(t, &a);
                if (memcmp(&a, g, sizeof a) != 0) {
                    weft_affine *gm =
                        weft_system_get_mut(sys, PQ_ROOT, e, 1, sizeof(weft_affine));
                    if (gm) {
                        *gm = a;
                    }
                }
            }
            int32_t nc = 0;
            const weft_entity *ch = weft_children(w, e, &nc);
            for (int32_t k = 0; k < nc; k++) {
                uint32_t ci = eidx(ch[k]);
                if (self || (ci < (uint32_t)c->cap && atomic_load_explicit(&c->tree_epoch[ci], memory_order_relaxed) == c->epoch)) {
                    if (c->nitems >= c->cap) {
                        weft_iter_fini(&it);
                        weft_system_fail(sys, WEFT_ERR_RELATIONSHIP,
                                         "weft.transform.propagate: more pending children "
                                         "than entities (corrupted hierarchy)");
                        return;
                    }
                    xf_item *o = &c->items[c->nitems++];
                    o->e = ch[k];
                    o->parent = g;
                    o->parent_changed = self;
                }
            }
        }
    }
    /* Expand the first levels here until there are enough subtrees. */
    int32_t threads = weft_world_threads(w);
    int32_t want = (threads > 1 ? threads : 1) * XF_ITEMS_PER_WORKER;
    int64_t walked = 0;
    xf_batch batch;
    batch.n = 0;
    for (int lvl = 0; lvl < XF_EXPAND_LEVELS && c->nitems > 0 && c->nitems < want; lvl++) {
        int32_t nn = 0;
        for (int32_t k = 0; k < c->nitems; k++) {
            int32_t nc = 0;
            weft_children(w, c->items[k].e, &nc);
            if ((int64_t)nn + nc > c->cap) {
                weft_system_fail(sys, WEFT_ERR_RELATIONSHIP,
                                 "weft.transform.propagate: more pending children than "
                                 "entities (corrupted hierarchy)");
                return;
            }
            visit(c, &c->items[k], c->next, &nn, &batch);
        }
        walked += c->nitems;
        xf_item *tmp = c->items;
        c->items = c->next;
        c->next = tmp;
        c->nitems = nn;
    }
    batch_flush(c, &batch);
    atomic_store(&c->visited, walked);
    if (c->nitems > 0) {
        atomic_store(&c->cursor, 0);
        int64_t rows = weft_system_count(sys, PQ_CHILD);
        int32_t min_rows = 64;
        if (threads > 1 && rows / (4 * threads) > min_rows) {
            min_rows = (int32_t)(rows / (4 * threads));
        }
        if (threads <= 1) {
            min_rows = INT32_MAX / 2; /* one task */
        }
        st = weft_system_par_each(sys, PQ_CHILD, walk_chunk, c, min_rows);
        if (st != WEFT_OK) {
            weft_system_fail(sys, st, "weft.transform.propagate: walk");
            return;
        }
        if (atomic_load(&c->oom)) {
            weft_system_fail(sys, WEFT_ERR_OUT_OF_MEMORY,
                             "weft.transform.propagate: out of memory for a walk stack");
            return;
        }
        if (atomic_load(&c->corrupt) || atomic_load(&c->cursor) < c->nitems) {
            weft_system_fail(sys, WEFT_ERR_RELATIONSHIP,
                             "weft.transform.propagate: the walk visited more nodes than "
                             "there are entities (corrupted hierarchy); stopped");
            return;
        }
    }
    int32_t nchanged = atomic_load(&c->nchanged);
    if (nchanged == 0) {
        return;
    }
    int64_t rows = weft_system_count(sys, PQ_CHILD);
    if ((int64_t)nchanged * 16 < rows || threads <= 1) {
        for (int32_t k = 0; k < nchanged && k < c->cap; k++) {
            weft_entity e = c->changed[k];
            weft_affine *g = weft_system_get_mut(sys, PQ_CHILD, e, 0, sizeof(weft_affine));
            if (g) {
                *g = c->res[eidx(e)];
            }
        }
    } else {
        st = weft_system_par_each(sys, PQ_CHILD, write_chunk, c, 1024);
        if (st != WEFT_OK) {
            weft_system_fail(sys, st, "weft.transform.propagate: write-back");
        }
    }
}

WEFT_API weft_status weft_transform_add_systems(weft_world *world, weft_schedule *schedule,
                                                weft_node *out_set)
{
    if (!world || !schedule) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_transform_ids ids;
    weft_status st = weft_transform_register(world, &ids);
    if (st != WEFT_OK) {
        return st;
    }
    int32_t nsets = weft_schedule_sets(schedule, NULL, 0);
    if (nsets < 0) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (nsets > 0) {
        weft_node *sets = malloc((size_t)nsets * sizeof *sets);
        if (!sets) {
            return WEFT_ERR_OUT_OF_MEMORY;
        }
        nsets = weft_schedule_sets(schedule, sets, nsets);
        bool dup = false;
        for (int32_t k = 0; k < nsets; k++) {
            const char *nm = weft_schedule_node_name(schedule, sets[k]);
            dup = dup || (nm && strcmp(nm, WEFT_TRANSFORM_SET_PROPAGATE) == 0);
        }
        free(sets);
        if (dup) {
            return WEFT_ERR_ALREADY_EXISTS;
        }
    }
    xf_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    c->world = world;
    c->ids = ids;
    c->targets = weft_relationship_targets(world, ids.child_of);

    /* mark_dirty_trees */
    weft_query_desc mq[4];
    memset(mq, 0, sizeof mq);
    mq[MQ_TRANSFORM_CHANGED].terms[0] =
        (weft_term){ids.transform, WEFT_ACCESS_NONE, WEFT_OPER_WITH, WEFT_FILTER_CHANGED, 0};
    mq[MQ_TRANSFORM_CHANGED].term_count = 1;
    mq[MQ_PARENT_CHANGED].terms[0] =
        (weft_term){ids.child_of, WEFT_ACCESS_NONE, WEFT_OPER_WITH, WEFT_FILTER_CHANGED, 0};
    mq[MQ_PARENT_CHANGED].terms[1] =
        (weft_term){ids.transform, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0, 0};
    mq[MQ_PARENT_CHANGED].term_count = 2;
    mq[MQ_TREE].terms[0] = (weft_term){ids.tree_changed, WEFT_ACCESS_WRITE, 0, 0, 0};
    mq[MQ_TREE].term_count = 1;
    mq[MQ_PARENT].terms[0] = (weft_term){ids.child_of, WEFT_ACCESS_READ, 0, 0, 0};
    mq[MQ_PARENT].term_count = 1;
    weft_system_desc md;
    memset(&md, 0, sizeof md);
    md.name = "weft.transform.mark_dirty_trees";
    md.fn = mark_system;
    md.user = c;
    md.queries = mq;
    md.query_count = 4;
    md.removed = &ids.child_of;
    md.removed_count = 1;
    md.local.size = 1;
    md.local.fini = mark_fini;
    weft_node mark = weft_schedule_add_system(schedule, &md);
    if (!mark) {
        ctx_free(c);
        return weft_last_status(world);
    }
    /* From here c belongs to the mark system (freed by its fini). */

    /* propagate */
    weft_query_desc pq[5];
    memset(pq, 0, sizeof pq);
    pq[PQ_ROOT_CHANGED].terms[0] =
        (weft_term){ids.transform, WEFT_ACCESS_READ, 0, WEFT_FILTER_CHANGED, 0};
    pq[PQ_ROOT_CHANGED].terms[1] = (weft_term){ids.global, WEFT_ACCESS_WRITE, 0, 0, 0};
    pq[PQ_ROOT_CHANGED].terms[2] =
        (weft_term){ids.child_of, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT, 0, 0};
    pq[PQ_ROOT_CHANGED].term_count = 3;
    pq[PQ_ROOT].terms[0] = (weft_term){ids.transform, WEFT_ACCESS_READ, 0, 0, 0};
    pq[PQ_ROOT].terms[1] = (weft_term){ids.global, WEFT_ACCESS_WRITE, 0, 0, 0};
    pq[PQ_ROOT].terms[2] = (weft_term){ids.child_of, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT, 0, 0};
    pq[PQ_ROOT].term_count = 3;
    pq[PQ_DIRTY_ROOT].terms[0] =
        (weft_term){ids.tree_changed, WEFT_ACCESS_NONE, WEFT_OPER_WITH, WEFT_FILTER_CHANGED, 0};
    pq[PQ_DIRTY_ROOT].terms[1] =
        (weft_term){ids.child_of, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT, 0, 0};
    pq[PQ_DIRTY_ROOT].term_count = 2;
    pq[PQ_CHILD].terms[0] = (weft_term){ids.global, WEFT_ACCESS_WRITE, 0, 0, 0};
    pq[PQ_CHILD].terms[1] = (weft_term){ids.child_of, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0, 0};
    pq[PQ_CHILD].term_count = 2;
    /* What the walk reads through weft_get / weft_children. */
    pq[PQ_READS].terms[0] = (weft_term){ids.transform, WEFT_ACCESS_READ, 0, 0, 0};
    pq[PQ_READS].terms[1] = (weft_term){ids.child_of, WEFT_ACCESS_READ, WEFT_OPER_OPTIONAL, 0, 0};
    pq[PQ_READS].terms[2] = (weft_term){c->targets, WEFT_ACCESS_READ, WEFT_OPER_OPTIONAL, 0, 0};
    pq[PQ_READS].term_count = c->targets ? 3 : 2;
    static const int32_t groups[5] = {1, 1, 0, 0, 0};
    weft_system_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.name = "weft.transform.propagate";
    pd.fn = propagate_system;
    pd.user = c;
    pd.queries = pq;
    pd.query_count = 5;
    pd.query_groups = groups;
    weft_node prop = weft_schedule_add_system(schedule, &pd);
    if (!prop) {
        return weft_last_status(world);
    }
    weft_node set = weft_schedule_ensure_set(schedule, WEFT_TRANSFORM_SET_PROPAGATE);
    if (!set) {
        return weft_last_status(world);
    }
    if ((st = weft_schedule_add_to_set(schedule, mark, set)) != WEFT_OK ||
        (st = weft_schedule_add_to_set(schedule, prop, set)) != WEFT_OK ||
        (st = weft_schedule_add_order(schedule, mark, prop, 0)) != WEFT_OK) {
        return st;
    }
    if (out_set) {
        *out_set = set;
    }
    return WEFT_OK;
}

/* ---- plugin ---- */

static weft_status plugin_build(weft_app *app, void *user)
{
    (void)user;
    weft_world *w = weft_app_world(app);
    weft_status st = weft_transform_add_systems(w, weft_app_schedule(app, WEFT_APP_POST_STARTUP),
                                                NULL);
    if (st == WEFT_OK) {
        st = weft_transform_add_systems(w, weft_app_schedule(app, WEFT_APP_POST_UPDATE), NULL);
    }
    return st;
}

WEFT_API weft_status weft_transform_add_plugin(weft_app *app)
{
    weft_plugin_desc d;
    memset(&d, 0, sizeof d);
    d.name = WEFT_TRANSFORM_PLUGIN;
    d.build = plugin_build;
    return weft_app_add_plugin(app, &d);
}

/* ---- on demand ---- */

/* The ChildOf chain from e up to its root, root last; -1 when longer than
 * the bound (a corrupted world). */
static int64_t chain_of(const weft_world *w, weft_component child_of, weft_entity e,
                        weft_entity **out, int64_t bound)
{
    int64_t n = 0, cap = 16;
    weft_entity *v = malloc((size_t)cap * sizeof *v);
    if (!v) {
        return -2;
    }
    for (weft_entity x = e; x;) {
        if (n >= bound) {
            free(v);
            return -1;
        }
        if (n == cap) {
            weft_entity *nv = realloc(v, (size_t)(cap * 2) * sizeof *v);
            if (!nv) {
                free(v);
                return -2;
            }
            v = nv;
            cap *= 2;
        }
        v[n++] = x;
        const weft_entity *p =
            child_of ? weft_get(w, x, child_of, sizeof(weft_entity)) : NULL;
        x = p ? *p : 0;
    }
    *out = v;
    return n;
}

static weft_status compute(weft_world *w, weft_entity e, weft_affine *out, bool write)
{
    if (!w) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out) {
        return WEFT_ERR_INVALID_ARG;
    }
    if (!weft_is_alive(w, e)) {
        return WEFT_ERR_STALE_ENTITY;
    }
    weft_component tc = weft_component_lookup(w, WEFT_TRANSFORM_NAME);
    weft_component gc = weft_component_lookup(w, WEFT_GLOBAL_TRANSFORM_NAME);
    weft_component child_of = weft_component_lookup(w, "weft.ChildOf");
    if (!tc || !gc || !weft_has(w, e, tc)) {
        return WEFT_ERR_NOT_FOUND;
    }
    weft_world_stats s;
    weft_status st = weft_world_get_stats(w, &s);
    if (st != WEFT_OK) {
        return st;
    }
    weft_entity *chain = NULL;
    int64_t n = chain_of(w, child_of, e, &chain, s.live_entities + 1);
    if (n == -2) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    if (n < 0) {
        return WEFT_ERR_RELATIONSHIP;
    }
    weft_affine g = weft_affine_identity();
    for (int64_t k = n - 1; k >= 0; k--) {
        const weft_transform *t = weft_get(w, chain[k], tc, sizeof(weft_transform));
        if (!t) {
            continue; /* an ancestor without Transform counts as the identity */
        }
        weft_affine local;
        wxf_to_affine(t, &local);
        if (k == n - 1) {
            g = local;
        } else {
            wxf_mul(&g, &local, &g);
        }
        if (write) {
            weft_affine *gm = weft_get_mut(w, chain[k], gc, sizeof(weft_affine));
            if (!gm) {
                free(chain);
                return weft_last_status(w);
            }
            *gm = g;
        }
    }
    free(chain);
    *out = g;
    return WEFT_OK;
}

WEFT_API weft_status weft_transform_compute_global(const weft_world *world, weft_entity e,
                                                   weft_affine *out)
{
    /* compute() writes nothing when write is false */
    return compute((weft_world *)(uintptr_t)world, e, out, false);
}

WEFT_API weft_status weft_transform_propagate_for(weft_world *world, weft_entity e)
{
    weft_affine out;
    return compute(world, e, &out, true);
}

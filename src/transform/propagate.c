/* src/transform/propagate.c - registration, the propagation system and
 * the plugin of weft_transform (include/weft_transform.h, docs/transform.md).
 *
 * After Bevy's bevy_transform (crates/bevy_transform/src/systems.rs), with
 * the hierarchy kept flattened between frames instead of walked:
 *
 * - The cache. Every entity with Transform and GlobalTransform reachable
 *   from a root (no ChildOf) through such entities gets a position; the
 *   positions list the forest in depth-first preorder, so a node's parent
 *   has a smaller position and a subtree is the contiguous range
 *   [p, p + size[p]). Per position: the entity, its parent's position, its
 *   subtree size, its root, its local matrix and its last GlobalTransform.
 *   The cache is rebuilt (one walk over weft_children from the roots) only
 *   when the hierarchy changed: a ChildOf added or changed (reparent), a
 *   ChildOf, Transform or GlobalTransform removed from a live entity
 *   (orphan), Disabled added or removed, or an entity with a parent or
 *   children gaining Transform. A new childless root is appended, and a
 *   despawned subtree becomes a hole (both without a rebuild).
 * - Each frame, in one system:
 *   1. local: the rows whose Transform changed (a Changed query; every row
 *      after a rebuild) get their local matrix computed and are marked
 *      dirty, in parallel chunks;
 *   2. global: global[q] = global[parent[q]] * local[q] for every position
 *      that is dirty or whose parent was recomputed. Few dirty positions:
 *      their subtree ranges, sorted, on the system's thread. Many: one
 *      scan in position order; with threads, the forest is cut into
 *      subtrees of at most n / (8 x threads) nodes, their ancestors are
 *      computed first, and pool tasks take the subtree ranges from a
 *      shared cursor;
 *   3. write-back: recomputed values that differ from the stored
 *      GlobalTransform are written and stamped changed (Bevy's set_if_neq),
 *      in parallel chunks through the system's query (a chunk whose every
 *      row changed is stamped at once), or per entity when few changed;
 *      the roots of the trees in which something changed get
 *      TransformTreeChanged stamped.
 *   A static scene costs the detection queries only.
 * Each position's value depends only on its ancestors' inputs, whichever
 * task computes it, so results are bit-identical on any thread count.
 *
 * Built on weft.h only. The rebuild reads weft_children and weft_is_alive
 * on the world the system captured, on the system's thread, while the
 * system runs with read access declared for ChildOf and its targets and no
 * structural change can happen (weft defers them during a run). Every
 * component value is read and written through the system's queries.
 * SPDX-License-Identifier: MIT */
#include "transform_internal.h"

#include "core/atomic.h" /* header-only wrappers: no link to weft internals */
#include <stdlib.h>
#include <string.h>

/* A contiguous run of positions made of whole subtrees. */
typedef struct xf_range {
    int32_t a, b;
} xf_range;

/* The cache and scratch of one propagation system (its user pointer; freed
 * by its local's fini). Arrays named by position hold pcap entries; those
 * named by entity index hold icap. */
typedef struct xf_ctx {
    weft_world *world;
    weft_transform_ids ids;
    weft_component targets;  /* ChildOf.targets */
    weft_component disabled; /* weft.Disabled */
    bool valid;              /* the cache matches the world */
    uint64_t restores;       /* weft_world_restore_count when it was checked */
    uint32_t epoch;          /* frame counter (never 0 after the first) */
    /* by entity index */
    int32_t icap;
    int32_t *pos_of;  /* position, or -1 */
    uint32_t *member; /* == build: in the query of every hierarchy node */
    uint32_t build;
    int32_t *list;    /* dirty positions this frame (2 * icap; -1 unused) */
    /* by position */
    int32_t n, pcap, holes;
    weft_entity *ent; /* 0: a hole (despawned) */
    int32_t *parent;  /* -1: root */
    int32_t *size;    /* nodes in the subtree, itself included */
    int32_t *root;
    weft_affine *local;
    weft_affine *gl;          /* last computed GlobalTransform */
    uint32_t *dirty;          /* == epoch: local recomputed this frame */
    uint32_t *out;            /* == epoch: global recomputed this frame */
    wf_atomic_u32 *touched;   /* roots: == epoch: something in the tree changed */
    int32_t *tops;            /* the parallel scan's ancestors, in order */
    xf_range *ranges;         /* the parallel scan's subtree runs */
    int32_t ntops, nranges;
    /* build scratch */
    weft_entity *stack_e;
    int32_t *stack_p;
    int32_t scap;
    /* per frame */
    wf_atomic_u32 ndirty;     /* entries of list reserved this frame */
    int32_t list_limit;       /* past it, chunks are no longer listed */
    wf_atomic_u32 cursor;
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

/* ---- the cache ---- */

static void ctx_free(xf_ctx *c)
{
    free(c->pos_of);
    free(c->member);
    free(c->list);
    free(c->ent);
    free(c->parent);
    free(c->size);
    free(c->root);
    free(c->local);
    free(c->gl);
    free(c->dirty);
    free(c->out);
    free((void *)c->touched);
    free(c->tops);
    free(c->ranges);
    free(c->stack_e);
    free(c->stack_p);
    free(c);
}

static int32_t grow_cap(int32_t have, int32_t need)
{
    int64_t cap = have ? have : 1024;
    while (cap < need) {
        cap *= 2;
    }
    return cap > INT32_MAX / 2 ? INT32_MAX / 2 : (int32_t)cap;
}

/* realloc of `count` entries of `size`, new tail [old, count) set to byte
 * `fill` when fill >= 0. */
static bool regrow(void **p, size_t size, int32_t old, int32_t count, int fill)
{
    void *q = realloc(*p, (size_t)count * size);
    if (!q) {
        return false;
    }
    *p = q;
    if (fill >= 0 && count > old) {
        memset((char *)q + (size_t)old * size, fill, (size_t)(count - old) * size);
    }
    return true;
}

/* Arrays by entity index cover every allocated index. */
static bool reserve_index(xf_ctx *c)
{
    weft_world_stats s;
    if (weft_world_get_stats(c->world, &s) != WEFT_OK) {
        return false;
    }
    int32_t need = s.entity_records + 1;
    if (need <= c->icap) {
        return true;
    }
    if (need > INT32_MAX / 4) {
        return false;
    }
    int32_t cap = grow_cap(c->icap, need);
    if (!regrow((void **)&c->pos_of, sizeof *c->pos_of, c->icap, cap, 0xff) ||
        !regrow((void **)&c->member, sizeof *c->member, c->icap, cap, 0) ||
        !regrow((void **)&c->list, sizeof *c->list, 2 * c->icap, 2 * cap, -1)) {
        return false;
    }
    c->icap = cap;
    return true;
}

/* Arrays by position hold at least `need` entries (new epochs 0). */
static bool reserve_pos(xf_ctx *c, int32_t need)
{
    if (need <= c->pcap) {
        return true;
    }
    if (need > INT32_MAX / 4) {
        return false;
    }
    int32_t cap = grow_cap(c->pcap, need), o = c->pcap;
    if (!regrow((void **)&c->ent, sizeof *c->ent, o, cap, -1) ||
        !regrow((void **)&c->parent, sizeof *c->parent, o, cap, -1) ||
        !regrow((void **)&c->size, sizeof *c->size, o, cap, -1) ||
        !regrow((void **)&c->root, sizeof *c->root, o, cap, -1) ||
        !regrow((void **)&c->local, sizeof *c->local, o, cap, -1) ||
        !regrow((void **)&c->gl, sizeof *c->gl, o, cap, -1) ||
        !regrow((void **)&c->dirty, sizeof *c->dirty, o, cap, 0) ||
        !regrow((void **)&c->out, sizeof *c->out, o, cap, 0) ||
        !regrow((void **)&c->touched, sizeof *c->touched, o, cap, 0) ||
        !regrow((void **)&c->tops, sizeof *c->tops, o, cap, -1) ||
        !regrow((void **)&c->ranges, sizeof *c->ranges, o, cap, -1)) {
        return false;
    }
    c->pcap = cap;
    return true;
}

static inline uint32_t eidx(weft_entity e)
{
    return (uint32_t)e;
}

/* Position of the live handle e, or -1. */
static inline int32_t pos_of(const xf_ctx *c, weft_entity e)
{
    uint32_t i = eidx(e);
    if (i >= (uint32_t)c->icap) {
        return -1;
    }
    int32_t p = c->pos_of[i];
    return p >= 0 && c->ent[p] == e ? p : -1;
}

/* The system's queries. */
enum {
    Q_ALL,            /* Transform READ, GlobalTransform WRITE */
    Q_CHANGED,        /* Transform READ (Changed), with GlobalTransform */
    Q_ADDED,          /* with Transform (Added), with GlobalTransform */
    Q_GADDED,         /* with GlobalTransform (Added), with Transform */
    Q_PARENT_CHANGED, /* with ChildOf (Changed) */
    Q_DISABLED_ADDED, /* with Disabled (Added) */
    Q_ROOTS,          /* with Transform, GlobalTransform, without ChildOf */
    Q_TREE,           /* TransformTreeChanged WRITE, without ChildOf */
    Q_READS,          /* what the rebuild reads through weft_children */
    Q_COUNT
};

typedef enum xf_fail {
    XF_OK,
    XF_OOM,
    XF_CORRUPT,
    XF_ITER
} xf_fail;

static bool push(xf_ctx *c, int32_t *top, weft_entity e, int32_t parent)
{
    if (*top == c->scap) {
        int32_t cap = grow_cap(c->scap, c->scap + 1);
        if (cap <= c->scap || !regrow((void **)&c->stack_e, sizeof *c->stack_e, 0, cap, -1) ||
            !regrow((void **)&c->stack_p, sizeof *c->stack_p, 0, cap, -1)) {
            return false;
        }
        c->scap = cap;
    }
    c->stack_e[*top] = e;
    c->stack_p[*top] = parent;
    (*top)++;
    return true;
}

/* Lays the forest out again: members (every row of Q_ALL), then a
 * depth-first walk from each root over weft_children, entering members
 * only; then subtree sizes. A node reached twice (only in a corrupted
 * world) fails with XF_CORRUPT. */
static xf_fail rebuild(xf_ctx *c, weft_system_ctx *sys)
{
    c->valid = false;
    if (++c->build == 0) {
        memset(c->member, 0, (size_t)c->icap * sizeof *c->member);
        c->build = 1;
    }
    for (int32_t q = 0; q < c->n; q++) {
        if (c->ent[q]) {
            c->pos_of[eidx(c->ent[q])] = -1;
        }
    }
    c->n = 0;
    c->holes = 0;
    weft_iter it;
    int32_t members = 0;
    if (weft_system_iter(sys, Q_ALL, &it) != WEFT_OK) {
        return XF_ITER;
    }
    while (weft_iter_next(&it)) {
        const weft_entity *ents = weft_iter_entities(&it);
        int32_t n = weft_iter_count(&it);
        for (int32_t r = 0; r < n; r++) {
            uint32_t i = eidx(ents[r]);
            if (i < (uint32_t)c->icap) {
                c->member[i] = c->build;
                members++;
            }
        }
    }
    if (!reserve_pos(c, members + 1)) {
        return XF_OOM;
    }
    if (weft_system_iter(sys, Q_ROOTS, &it) != WEFT_OK) {
        return XF_ITER;
    }
    xf_fail fail = XF_OK;
    while (fail == XF_OK && weft_iter_next(&it)) {
        const weft_entity *ents = weft_iter_entities(&it);
        int32_t nr = weft_iter_count(&it);
        for (int32_t r = 0; r < nr && fail == XF_OK; r++) {
            uint32_t ri = eidx(ents[r]);
            if (ri >= (uint32_t)c->icap || c->member[ri] != c->build) {
                continue;
            }
            int32_t top = 0;
            if (!push(c, &top, ents[r], -1)) {
                fail = XF_OOM;
                break;
            }
            while (top > 0) {
                top--;
                weft_entity x = c->stack_e[top];
                int32_t par = c->stack_p[top];
                uint32_t xi = eidx(x);
                if (c->pos_of[xi] >= 0 || c->n >= members) {
                    fail = XF_CORRUPT; /* reached twice: a cycle or shared child */
                    break;
                }
                int32_t p = c->n++;
                c->ent[p] = x;
                c->parent[p] = par;
                c->root[p] = par < 0 ? p : c->root[par];
                c->size[p] = 1;
                c->pos_of[xi] = p;
                int32_t nc = 0;
                const weft_entity *ch = weft_children(c->world, x, &nc);
                for (int32_t k = nc - 1; k >= 0; k--) { /* first child on top */
                    uint32_t ci = eidx(ch[k]);
                    if (ci < (uint32_t)c->icap && c->member[ci] == c->build &&
                        !push(c, &top, ch[k], p)) {
                        fail = XF_OOM;
                        break;
                    }
                }
                if (fail != XF_OK) {
                    break;
                }
            }
        }
    }
    weft_iter_fini(&it);
    if (fail != XF_OK) {
        for (int32_t q = 0; q < c->n; q++) {
            c->pos_of[eidx(c->ent[q])] = -1;
        }
        c->n = 0;
        return fail;
    }
    for (int32_t q = c->n - 1; q > 0; q--) {
        if (c->parent[q] >= 0) {
            c->size[c->parent[q]] += c->size[q];
        }
    }
    c->valid = true;
    return XF_OK;
}

/* A despawned entity at p: when its whole subtree is dead, the range
 * becomes holes (true); otherwise the cache needs a rebuild (false). */
static bool hole_subtree(xf_ctx *c, int32_t p)
{
    int32_t end = p + c->size[p];
    for (int32_t q = p; q < end; q++) {
        if (c->ent[q] && weft_is_alive(c->world, c->ent[q])) {
            return false;
        }
    }
    for (int32_t q = p; q < end; q++) {
        if (c->ent[q]) {
            c->pos_of[eidx(c->ent[q])] = -1;
            c->ent[q] = 0;
            c->holes++;
        }
    }
    return true;
}

/* Reads one removal stream to its end; true when the cache must be
 * rebuilt for it. */
static bool read_removed(xf_ctx *c, weft_system_ctx *sys, weft_component comp)
{
    bool again = false;
    for (weft_entity e; (e = weft_system_removed_read(sys, comp)) != 0;) {
        if (again || !c->valid) {
            again = true;
            continue; /* drained; the rebuild sees the world as it is */
        }
        int32_t p = pos_of(c, e);
        if (p >= 0) {
            again = weft_is_alive(c->world, e) || !hole_subtree(c, p);
        } else {
            /* not in the cache: matters when it is now a hierarchy node
             * (re-enabled, or orphaned from a parent outside the cache) */
            again = weft_is_alive(c->world, e) && weft_has(c->world, e, c->ids.transform);
        }
    }
    return again;
}

/* True when query q yields a row. */
static bool any_row(weft_system_ctx *sys, int32_t q, bool *ok)
{
    weft_iter it;
    if (weft_system_iter(sys, q, &it) != WEFT_OK) {
        *ok = false;
        return false;
    }
    bool any = weft_iter_next(&it) && weft_iter_count(&it) > 0;
    weft_iter_fini(&it);
    return any;
}

/* ---- the three passes ---- */

/* Pass 1 (pool task): local matrices of the chunk's rows, marked dirty and
 * listed; the roots of their trees marked touched. */
static void local_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    xf_ctx *c = user;
    const uint32_t ep = c->epoch;
    while (weft_iter_next(it)) {
        const weft_entity *ents = weft_iter_entities(it);
        int32_t n = weft_iter_count(it);
        const weft_transform *t = weft_iter_field(it, 0, sizeof *t);
        /* listed only while few (the sparse pass); past the limit the
         * scan of every position takes over and the list is not read */
        int32_t *slot = NULL;
        if ((int32_t)wf_atomic_load_relaxed_u32(&c->ndirty) <= c->list_limit) {
            slot = c->list + (int32_t)wf_atomic_fetch_add_relaxed_u32(&c->ndirty, (uint32_t)n);
        }
        for (int32_t r = 0; r < n; r++) {
            uint32_t i = eidx(ents[r]);
            int32_t p = i < (uint32_t)c->icap ? c->pos_of[i] : -1;
            if (slot) {
                slot[r] = p;
            }
            if (p < 0) {
                continue; /* not reachable from a root through Transforms */
            }
            wxf_to_affine(&t[r], &c->local[p]);
            c->dirty[p] = ep;
            wf_atomic_u32 *tr = &c->touched[c->root[p]];
            if (wf_atomic_load_relaxed_u32(tr) != ep) {
                wf_atomic_store_relaxed_u32(tr, ep);
            }
        }
    }
}

/* Pass 2 over [a, b): a position is recomputed when dirty or when its
 * parent was. Every parent outside the range is computed already. */
static void scan(xf_ctx *c, int32_t a, int32_t b)
{
    const uint32_t ep = c->epoch;
    const int32_t *parent = c->parent;
    const uint32_t *dirty = c->dirty;
    uint32_t *out = c->out;
    const weft_affine *local = c->local;
    weft_affine *gl = c->gl;
    for (int32_t q = a; q < b; q++) {
        int32_t p = parent[q];
        if (p < 0) {
            if (dirty[q] == ep) {
                gl[q] = local[q];
                out[q] = ep;
            }
        } else if (dirty[q] == ep || out[p] == ep) {
            wxf_mul(&gl[p], &local[q], &gl[q]);
            out[q] = ep;
        }
    }
}

/* Pass 2 of one whole subtree whose root is recomputed. */
static void scan_subtree(xf_ctx *c, int32_t a)
{
    const uint32_t ep = c->epoch;
    int32_t b = a + c->size[a];
    int32_t p = c->parent[a];
    if (p < 0) {
        c->gl[a] = c->local[a];
    } else {
        wxf_mul(&c->gl[p], &c->local[a], &c->gl[a]);
    }
    c->out[a] = ep;
    for (int32_t q = a + 1; q < b; q++) {
        wxf_mul(&c->gl[c->parent[q]], &c->local[q], &c->gl[q]);
        c->out[q] = ep;
    }
}

/* Pass 2: subtree runs taken from the shared cursor; as a pool task, the
 * chunk's rows only carry the task. */
static void take_ranges(xf_ctx *c)
{
    for (;;) {
        int32_t k = (int32_t)wf_atomic_fetch_add_relaxed_u32(&c->cursor, 1);
        if (k >= c->nranges) {
            break;
        }
        scan(c, c->ranges[k].a, c->ranges[k].b);
    }
}

static void scan_task(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    while (weft_iter_next(it)) {
    }
    take_ranges(user);
}

/* Cuts the forest into runs of whole subtrees of at most `grain` nodes;
 * the nodes above them (tops) are listed in preorder. */
static void partition(xf_ctx *c, int32_t grain)
{
    c->ntops = 0;
    c->nranges = 0;
    for (int32_t p = 0; p < c->n;) {
        int32_t s = c->size[p];
        if (s <= grain) {
            xf_range *last = c->nranges ? &c->ranges[c->nranges - 1] : NULL;
            if (last && last->b == p && last->b - last->a + s <= grain) {
                last->b += s;
            } else {
                c->ranges[c->nranges].a = p;
                c->ranges[c->nranges].b = p + s;
                c->nranges++;
            }
            p += s;
        } else {
            c->tops[c->ntops++] = p++;
        }
    }
}

/* Pass 3 pool task: recomputed values that differ from the stored ones are
 * written and stamped. */
static void write_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    xf_ctx *c = user;
    const uint32_t ep = c->epoch;
    while (weft_iter_next(it)) {
        const weft_entity *ents = weft_iter_entities(it);
        int32_t n = weft_iter_count(it);
        weft_affine *g = weft_iter_field_mut_nomark(it, 1, sizeof *g);
        int32_t diff = 0;
        for (int32_t r = 0; r < n; r++) {
            uint32_t i = eidx(ents[r]);
            int32_t p = i < (uint32_t)c->icap ? c->pos_of[i] : -1;
            diff += p >= 0 && c->out[p] == ep && memcmp(&g[r], &c->gl[p], sizeof *g) != 0;
        }
        if (diff == 0) {
            continue;
        }
        if (diff == n) { /* every row: one stamp for the chunk */
            g = weft_iter_field_mut(it, 1, sizeof *g);
            for (int32_t r = 0; r < n; r++) {
                g[r] = c->gl[c->pos_of[eidx(ents[r])]];
            }
            continue;
        }
        for (int32_t r = 0; r < n; r++) {
            uint32_t i = eidx(ents[r]);
            int32_t p = i < (uint32_t)c->icap ? c->pos_of[i] : -1;
            if (p >= 0 && c->out[p] == ep && memcmp(&g[r], &c->gl[p], sizeof *g) != 0) {
                g[r] = c->gl[p];
                weft_iter_mark(it, 1, r);
            }
        }
    }
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Pass 2 and 3 for few dirty positions, on the system's thread: each
 * dirty subtree once (sorted, a subtree inside the previous one skipped),
 * written back per entity. False when they cover too much (use the scan). */
static bool sparse_pass(xf_ctx *c, weft_system_ctx *sys, int32_t nd)
{
    qsort(c->list, (size_t)nd, sizeof *c->list, cmp_i32);
    int64_t cover = 0;
    for (int32_t k = 0, end = -1; k < nd; k++) {
        int32_t p = c->list[k];
        if (p >= end) {
            end = p + c->size[p];
            cover += c->size[p];
        }
    }
    if (cover * 8 > c->n) {
        return false;
    }
    for (int32_t k = 0, end = -1; k < nd; k++) {
        int32_t p = c->list[k];
        if (p < end) {
            continue;
        }
        end = p + c->size[p];
        scan_subtree(c, p);
        for (int32_t q = p; q < end; q++) {
            if (!c->ent[q]) {
                continue;
            }
            weft_affine *g = (weft_affine *)(uintptr_t)weft_system_get(sys, Q_ALL, c->ent[q], 1,
                                                                       sizeof *g);
            if (g && memcmp(g, &c->gl[q], sizeof *g) != 0) {
                g = weft_system_get_mut(sys, Q_ALL, c->ent[q], 1, sizeof *g);
                if (g) {
                    *g = c->gl[q];
                }
            }
        }
    }
    return true;
}

/* Stamps TransformTreeChanged on the roots (with children) touched. */
static bool stamp_trees(xf_ctx *c, weft_system_ctx *sys)
{
    weft_iter it;
    if (weft_system_iter(sys, Q_TREE, &it) != WEFT_OK) {
        return false;
    }
    const uint32_t ep = c->epoch;
    while (weft_iter_next(&it)) {
        const weft_entity *ents = weft_iter_entities(&it);
        int32_t n = weft_iter_count(&it);
        for (int32_t r = 0; r < n; r++) {
            int32_t p = pos_of(c, ents[r]);
            if (p >= 0 && c->size[p] > 1 &&
                wf_atomic_load_relaxed_u32(&c->touched[p]) == ep) {
                weft_iter_mark(&it, 0, r);
            }
        }
    }
    return true;
}

/* Appends the new childless root e (true), or asks for a rebuild (false). */
static bool append_root(xf_ctx *c, weft_system_ctx *sys, weft_entity e, int32_t *nlisted)
{
    int32_t nc = 0;
    if (pos_of(c, e) >= 0) {
        return true;
    }
    if (weft_parent(c->world, e) != 0 || weft_children(c->world, e, &nc) != NULL || nc > 0) {
        return false;
    }
    const weft_transform *t = weft_system_get(sys, Q_ALL, e, 0, sizeof *t);
    if (!t || !reserve_pos(c, c->n + 1) || *nlisted >= c->icap) {
        return false;
    }
    int32_t p = c->n++;
    c->ent[p] = e;
    c->parent[p] = -1;
    c->size[p] = 1;
    c->root[p] = p;
    c->pos_of[eidx(e)] = p;
    wxf_to_affine(t, &c->local[p]);
    c->dirty[p] = c->epoch;
    c->list[(*nlisted)++] = p;
    return true;
}

/* Appends the rows of q (new entities) as roots; false: rebuild. The rows
 * are gathered first: q and Q_ALL are one param set (both touch
 * GlobalTransform), so Q_ALL is read after q's iteration ended. */
static bool append_rows(xf_ctx *c, weft_system_ctx *sys, int32_t q, int32_t *nlisted, bool *ok)
{
    weft_iter it;
    if (weft_system_iter(sys, q, &it) != WEFT_OK) {
        *ok = false;
        return false;
    }
    int32_t top = 0;
    while (weft_iter_next(&it)) {
        const weft_entity *ents = weft_iter_entities(&it);
        int32_t n = weft_iter_count(&it);
        for (int32_t r = 0; r < n; r++) {
            if (!push(c, &top, ents[r], -1)) {
                weft_iter_fini(&it);
                return false; /* out of memory: the rebuild will say so */
            }
        }
    }
    for (int32_t k = 0; k < top; k++) {
        if (!append_root(c, sys, c->stack_e[k], nlisted)) {
            return false;
        }
    }
    return true;
}

/* Tasks for a parallel pass over query q: about two per worker. */
static int32_t task_rows(weft_system_ctx *sys, int32_t q, int32_t threads)
{
    int64_t rows = weft_system_count(sys, q);
    int64_t per = rows / (2 * (int64_t)threads);
    return per < 256 ? 256 : per > INT32_MAX ? INT32_MAX : (int32_t)per;
}

static void fail_with(weft_system_ctx *sys, xf_ctx *c, xf_fail f, const char *what)
{
    c->valid = false;
    switch (f) {
    case XF_OOM:
        weft_system_fail(sys, WEFT_ERR_OUT_OF_MEMORY,
                         "weft.transform.propagate: out of memory for the hierarchy cache");
        break;
    case XF_CORRUPT:
        weft_system_fail(sys, WEFT_ERR_RELATIONSHIP,
                         "weft.transform.propagate: an entity is reached twice from the roots "
                         "through ChildOf (corrupted hierarchy); nothing propagated");
        break;
    default:
        weft_system_fail(sys, WEFT_ERR_OUT_OF_MEMORY, what);
        break;
    }
}

static void propagate_system(weft_system_ctx *sys, void *user)
{
    xf_ctx *c = user;
    if (!reserve_index(c)) {
        fail_with(sys, c, XF_OOM, NULL);
        return;
    }
    if (++c->epoch == 0) { /* wrapped: old marks could alias the new epoch */
        memset(c->dirty, 0, (size_t)c->pcap * sizeof *c->dirty);
        memset(c->out, 0, (size_t)c->pcap * sizeof *c->out);
        memset((void *)c->touched, 0, (size_t)c->pcap * sizeof *c->touched);
        c->epoch = 1;
    }
    /* What changed in the hierarchy (every stream read to its end). A
     * snapshot restored into the world replaced the content wholesale,
     * without events: the cache is rebuilt. */
    uint64_t restores = weft_world_restore_count(c->world);
    bool again = !c->valid || restores != c->restores;
    c->restores = restores;
    bool ok = true;
    again = read_removed(c, sys, c->ids.child_of) || again;
    again = read_removed(c, sys, c->ids.transform) || again;
    again = read_removed(c, sys, c->ids.global) || again;
    if (c->disabled) {
        again = read_removed(c, sys, c->disabled) || again;
        again = any_row(sys, Q_DISABLED_ADDED, &ok) || again;
    }
    again = any_row(sys, Q_PARENT_CHANGED, &ok) || again;
    if (!ok) {
        fail_with(sys, c, XF_ITER, "weft.transform.propagate: cannot iterate");
        return;
    }
    int32_t nlisted = 0;
    if (!again) {
        again = !append_rows(c, sys, Q_ADDED, &nlisted, &ok) ||
                !append_rows(c, sys, Q_GADDED, &nlisted, &ok);
        again = again || (c->holes > 1024 && c->holes * 2 > c->n);
    }
    int32_t pass1 = Q_CHANGED;
    if (again) {
        xf_fail f = ok ? rebuild(c, sys) : XF_ITER;
        if (f != XF_OK) {
            fail_with(sys, c, f, "weft.transform.propagate: cannot iterate");
            return;
        }
        nlisted = 0;
        pass1 = Q_ALL;
    }
    /* Pass 1: local matrices. */
    int32_t threads = weft_world_threads(c->world);
    wf_atomic_store_relaxed_u32(&c->ndirty, (uint32_t)nlisted);
    c->list_limit = pass1 == Q_ALL ? -1 : c->n / 32;
    weft_status st = weft_system_par_each(sys, pass1, local_chunk, c,
                                          threads > 1 ? task_rows(sys, pass1, threads)
                                                      : INT32_MAX);
    if (st != WEFT_OK) {
        fail_with(sys, c, XF_ITER, "weft.transform.propagate: cannot iterate (local)");
        return;
    }
    int32_t nd = 0, listed = (int32_t)wf_atomic_load_relaxed_u32(&c->ndirty);
    bool many = pass1 == Q_ALL || listed > c->list_limit;
    for (int32_t k = 0; !many && k < listed; k++) {
        if (c->list[k] >= 0) {
            c->list[nd++] = c->list[k];
        }
    }
    if (!many && nd == 0) {
        return; /* nothing moved */
    }
    /* Passes 2 and 3. */
    if (many || !sparse_pass(c, sys, nd)) {
        if (threads > 1 && c->n >= 4096) {
            int32_t grain = c->n / (8 * threads);
            partition(c, grain < 256 ? 256 : grain);
            for (int32_t k = 0; k < c->ntops; k++) {
                scan(c, c->tops[k], c->tops[k] + 1);
            }
            wf_atomic_store_relaxed_u32(&c->cursor, 0);
            st = weft_system_par_each(sys, Q_ALL, scan_task, c, task_rows(sys, Q_ALL, threads));
            if (st == WEFT_OK && (int32_t)wf_atomic_load_relaxed_u32(&c->cursor) < c->nranges) {
                take_ranges(c); /* no task ran (no rows): finish here */
            }
        } else {
            scan(c, 0, c->n);
        }
        if (st == WEFT_OK) {
            st = weft_system_par_each(sys, Q_ALL, write_chunk, c,
                                      threads > 1 ? task_rows(sys, Q_ALL, threads) : INT32_MAX);
        }
        if (st != WEFT_OK) {
            fail_with(sys, c, XF_ITER, "weft.transform.propagate: cannot iterate (write-back)");
            return;
        }
    }
    if (!stamp_trees(c, sys)) {
        fail_with(sys, c, XF_ITER, "weft.transform.propagate: cannot iterate (trees)");
    }
}

static void prop_fini(void *local, void *user)
{
    (void)local;
    ctx_free(user);
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
    weft_component disabled = weft_disabled(world);
    if (!disabled) {
        return weft_last_status(world) != WEFT_OK ? weft_last_status(world)
                                                  : WEFT_ERR_OUT_OF_MEMORY;
    }
    xf_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    c->world = world;
    c->ids = ids;
    c->targets = weft_relationship_targets(world, ids.child_of);
    c->disabled = disabled;

    weft_query_desc q[Q_COUNT];
    memset(q, 0, sizeof q);
#define XF_TERM(qi, ti, comp, acc, op, flt)                                              \
    q[qi].terms[ti] = (weft_term){(comp), (acc), (op), (flt), 0};                       \
    q[qi].term_count = (ti) + 1
    XF_TERM(Q_ALL, 0, ids.transform, WEFT_ACCESS_READ, 0, 0);
    XF_TERM(Q_ALL, 1, ids.global, WEFT_ACCESS_WRITE, 0, 0);
    XF_TERM(Q_CHANGED, 0, ids.transform, WEFT_ACCESS_READ, 0, WEFT_FILTER_CHANGED);
    XF_TERM(Q_CHANGED, 1, ids.global, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0);
    XF_TERM(Q_ADDED, 0, ids.transform, WEFT_ACCESS_NONE, WEFT_OPER_WITH, WEFT_FILTER_ADDED);
    XF_TERM(Q_ADDED, 1, ids.global, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0);
    XF_TERM(Q_GADDED, 0, ids.global, WEFT_ACCESS_NONE, WEFT_OPER_WITH, WEFT_FILTER_ADDED);
    XF_TERM(Q_GADDED, 1, ids.transform, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0);
    XF_TERM(Q_PARENT_CHANGED, 0, ids.child_of, WEFT_ACCESS_NONE, WEFT_OPER_WITH,
            WEFT_FILTER_CHANGED);
    XF_TERM(Q_DISABLED_ADDED, 0, disabled, WEFT_ACCESS_NONE, WEFT_OPER_WITH, WEFT_FILTER_ADDED);
    XF_TERM(Q_ROOTS, 0, ids.transform, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0);
    XF_TERM(Q_ROOTS, 1, ids.global, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0);
    XF_TERM(Q_ROOTS, 2, ids.child_of, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT, 0);
    XF_TERM(Q_TREE, 0, ids.tree_changed, WEFT_ACCESS_WRITE, 0, 0);
    XF_TERM(Q_TREE, 1, ids.child_of, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT, 0);
    XF_TERM(Q_READS, 0, ids.transform, WEFT_ACCESS_READ, 0, 0);
    XF_TERM(Q_READS, 1, ids.child_of, WEFT_ACCESS_READ, WEFT_OPER_OPTIONAL, 0);
    if (c->targets) {
        XF_TERM(Q_READS, 2, c->targets, WEFT_ACCESS_READ, WEFT_OPER_OPTIONAL, 0);
    }
#undef XF_TERM
    const weft_component removed[4] = {ids.child_of, ids.transform, ids.global, disabled};
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "weft.transform.propagate";
    d.fn = propagate_system;
    d.user = c;
    d.queries = q;
    d.query_count = Q_COUNT;
    d.removed = removed;
    d.removed_count = 4;
    d.local.size = 1;
    d.local.fini = prop_fini;
    /* Q_ALL writes GlobalTransform, Q_GADDED filters on it: a param set
     * (never iterated at the same time). */
    int32_t groups[Q_COUNT];
    memset(groups, 0, sizeof groups);
    groups[Q_ALL] = 1;
    groups[Q_GADDED] = 1;
    d.query_groups = groups;
    weft_node prop = weft_schedule_add_system(schedule, &d);
    if (!prop) {
        ctx_free(c);
        return weft_last_status(world);
    }
    /* From here c belongs to the system (freed by its local's fini). */
    weft_node set = weft_schedule_ensure_set(schedule, WEFT_TRANSFORM_SET_PROPAGATE);
    if (!set) {
        return weft_last_status(world);
    }
    if ((st = weft_schedule_add_to_set(schedule, prop, set)) != WEFT_OK) {
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

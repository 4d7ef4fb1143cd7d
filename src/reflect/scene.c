/* src/reflect/scene.c - scenes: saved entity sets, spawned with remapping.
 * SPDX-License-Identifier: MIT
 *
 * A scene holds copies (made with the copy hooks) of every component of a
 * set of entities, except relationship lists, which follow from the
 * sources. Spawning it creates one new entity per saved one and rewrites
 * every entity reference that points into the set: relationship sources
 * (ChildOf and user relationships) and the entity fields of described
 * components (the offsets recorded in their descriptions). References to
 * entities outside the set are kept as they are; a relationship whose
 * outside target is no longer alive is dropped.
 *
 * Each entity is spawned in one structural step with all its values. The
 * spawn order puts every relationship target of the set before its
 * sources (depth along the in-set relationship links), so each source is
 * spawned already pointing at its new target. An entity field pointing at
 * an entity of the set spawned later is written in place once that entity
 * exists (and the component marked changed): a value cannot name an id
 * before it is handed out. If a spawn fails, the entities spawned so far
 * are despawned again.
 */
#include "reflect/reflect.h"

#include <string.h>

#include "world/relationship.h"

typedef struct wf_scene_val {
    const wf_type_info *ti;
    void *val;                 /* owned copy, NULL for tags */
} wf_scene_val;

struct weft_scene {
    weft_world *world;
    weft_scene *prev, *next;   /* the world's live scenes */
    uint32_t n;                /* entities */
    uint32_t cap_n;
    weft_entity *src;          /* [cap_n] the saved entities' ids */
    uint32_t *first;           /* [cap_n + 1] values of entity i:
                                  items[first[i] .. first[i + 1]) */
    wf_scene_val *items;       /* [cap_items] */
    uint32_t total;
    uint32_t cap_items;
};

void wf_scene_destroy(weft_world *w, weft_scene *s)
{
    if (!s) {
        return;
    }
    if (s->prev) {
        s->prev->next = s->next;
    } else {
        w->scenes = s->next;
    }
    if (s->next) {
        s->next->prev = s->prev;
    }
    for (uint32_t i = 0; i < s->total; i++) {
        if (s->items[i].val) {
            wf_type_destroy(s->items[i].ti, s->items[i].val, 1);
            wf_free(&w->alloc, s->items[i].val, s->items[i].ti->size, s->items[i].ti->align);
        }
    }
    wf_free(&w->alloc, s->src, (size_t)s->cap_n * sizeof *s->src, _Alignof(weft_entity));
    if (s->first) {
        wf_free(&w->alloc, s->first, ((size_t)s->cap_n + 1) * sizeof *s->first,
                _Alignof(uint32_t));
    }
    wf_free(&w->alloc, s->items, (size_t)s->cap_items * sizeof *s->items,
            _Alignof(wf_scene_val));
    wf_free(&w->alloc, s, sizeof *s, _Alignof(weft_scene));
}

uint32_t wf_scene_count(const weft_scene *s)
{
    return s->n;
}

weft_world *wf_scene_world(const weft_scene *s)
{
    return s->world;
}

static const uint8_t *value_ptr(const weft_world *w, const wf_record *rec, weft_entity e,
                                const wf_type_info *ti)
{
    if (ti->storage == WEFT_STORAGE_SPARSE) {
        return wf_column_ptr(&ti->sparse->dense, wf_sparse_find(ti->sparse, (uint32_t)e));
    }
    const wf_archetype *arch = wf_world_archetype(w, rec->arch);
    return wf_column_ptr(wf_table_column(arch->table, ti->id), rec->row);
}

/* Makes room for one more entity with `k` values. */
static bool scene_room(weft_world *w, weft_scene *s, uint32_t k)
{
    if (s->n + 1 > s->cap_n) {
        uint32_t cap = s->cap_n ? s->cap_n * 2 : 16u;
        weft_entity *src = wf_alloc(&w->alloc, (size_t)cap * sizeof *src, _Alignof(weft_entity));
        uint32_t *first = wf_alloc(&w->alloc, ((size_t)cap + 1) * sizeof *first,
                                   _Alignof(uint32_t));
        if (!src || !first) {
            wf_free(&w->alloc, src, (size_t)cap * sizeof *src, _Alignof(weft_entity));
            wf_free(&w->alloc, first, ((size_t)cap + 1) * sizeof *first, _Alignof(uint32_t));
            return false;
        }
        if (s->n) {
            memcpy(src, s->src, (size_t)s->n * sizeof *src);
            memcpy(first, s->first, ((size_t)s->n + 1) * sizeof *first);
            wf_free(&w->alloc, s->src, (size_t)s->cap_n * sizeof *src, _Alignof(weft_entity));
            wf_free(&w->alloc, s->first, ((size_t)s->cap_n + 1) * sizeof *first,
                    _Alignof(uint32_t));
        } else {
            first[0] = 0;
        }
        s->src = src;
        s->first = first;
        s->cap_n = cap;
    }
    void *data = s->items;
    if (!wf_grow(&w->alloc, &data, &s->cap_items, s->total + k, sizeof *s->items,
                 _Alignof(wf_scene_val))) {
        return false;
    }
    s->items = data;
    return true;
}

/* Appends a copy of live entity e. False on out of memory (recorded). */
static bool scene_add(weft_world *w, weft_scene *s, weft_entity e)
{
    const wf_record *rec = wf_entity_live(w, e);
    const wf_archetype *arch = wf_world_archetype(w, rec->arch);
    if (!scene_room(w, s, arch->id_count)) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory saving a scene");
        return false;
    }
    uint32_t at = s->total;
    for (uint32_t i = 0; i < arch->id_count; i++) {
        const wf_type_info *ti = wf_registry_get(&w->registry, arch->ids[i]);
        if (ti->rel_source || ti->no_clone) {
            /* a relationship list follows from its sources; a no_clone
             * link belongs to its owner (a sub-app's twin mapping) */
            continue;
        }
        void *copy = NULL;
        if (ti->size) {
            copy = wf_alloc(&w->alloc, ti->size, ti->align);
            if (!copy) {
                for (uint32_t k = s->total; k < at; k++) {
                    if (s->items[k].val) {
                        wf_type_destroy(s->items[k].ti, s->items[k].val, 1);
                        wf_free(&w->alloc, s->items[k].val, s->items[k].ti->size,
                                s->items[k].ti->align);
                    }
                }
                wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory saving a scene");
                return false;
            }
            wf_type_construct(ti, copy, value_ptr(w, rec, e, ti), 1);
        }
        s->items[at].ti = ti;
        s->items[at].val = copy;
        at++;
    }
    s->src[s->n] = e;
    s->n++;
    s->total = at;
    s->first[s->n] = at;
    return true;
}

/* World teardown: scenes the user did not destroy go with the world. */
static void scenes_fini(weft_world *w)
{
    while (w->scenes) {
        wf_scene_destroy(w, w->scenes);
    }
}

static weft_scene *scene_new(weft_world *w)
{
    weft_scene *s = wf_calloc(&w->alloc, sizeof *s, _Alignof(weft_scene));
    if (!s) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory creating a scene");
        return NULL;
    }
    s->world = w;
    s->next = w->scenes;
    if (s->next) {
        s->next->prev = s;
    }
    w->scenes = s;
    w->scenes_fini = scenes_fini;
    return s;
}

weft_scene *wf_scene_from_query(weft_world *w, weft_query *q)
{
    wf_query_env env = wf_world_query_env(w);
    if (!wf_query_update(q, &env)) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory matching archetypes");
        return NULL;
    }
    weft_scene *s = scene_new(w);
    if (!s) {
        return NULL;
    }
    wf_iter it;
    wf_iter_init(&it, w, q, &env, q->last_run, w->change_tick, false);
    q->iterating++;
    w->iter_depth++;
    bool ok = true;
    while (ok && wf_iter_step(&it)) {
        const weft_entity *es = it.table->entities + it.start;
        for (uint32_t i = 0; ok && i < it.count; i++) {
            ok = scene_add(w, s, es[i]);
        }
    }
    it.state = WF_ITER_DONE;
    q->iterating--;
    w->iter_depth--;
    if (!ok) {
        wf_scene_destroy(w, s);
        return NULL;
    }
    return s;
}

weft_scene *wf_scene_from_tree(weft_world *w, weft_entity root, bool recursive)
{
    weft_scene *s = scene_new(w);
    if (!s || !scene_add(w, s, root)) {
        wf_scene_destroy(w, s);
        return NULL;
    }
    const wf_type_info *rel = wf_registry_get(&w->registry, w->child_of);
    /* breadth first: the scene itself is the queue */
    for (uint32_t k = 0; recursive && rel && k < s->n; k++) {
        const wf_rel_list *l = wf_rel_list_of(w, s->src[k], rel);
        for (int32_t i = 0; l && i < l->count; i++) {
            if (!scene_add(w, s, l->items[i])) {
                wf_scene_destroy(w, s);
                return NULL;
            }
            l = wf_rel_list_of(w, s->src[k], rel); /* stable: nothing moved */
        }
    }
    return s;
}

/* ---- spawning ---- */

typedef struct spawn_ctx {
    weft_world *w;
    const weft_scene *s;
    uint32_t *sorted;          /* [n] scene indices sorted by source id */
    weft_entity *made;         /* [n] new ids (0: not yet) */
} spawn_ctx;

/* Scene index of entity e, or UINT32_MAX. */
static uint32_t find_src(const spawn_ctx *c, weft_entity e)
{
    uint32_t lo = 0;
    uint32_t hi = c->s->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        weft_entity x = c->s->src[c->sorted[mid]];
        if (x == e) {
            return c->sorted[mid];
        }
        if (x < e) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return UINT32_MAX;
}

static void sort_by_src(const weft_scene *s, uint32_t *idx)
{
    /* heap sort: in place, O(n log n), no comparator state */
    uint32_t n = s->n;
    for (uint32_t i = 0; i < n; i++) {
        idx[i] = i;
    }
    for (uint32_t start = n / 2; start-- > 0;) {
        uint32_t root = start;
        for (;;) {
            uint32_t child = 2 * root + 1;
            if (child >= n) {
                break;
            }
            if (child + 1 < n && s->src[idx[child]] < s->src[idx[child + 1]]) {
                child++;
            }
            if (s->src[idx[root]] >= s->src[idx[child]]) {
                break;
            }
            uint32_t t = idx[root];
            idx[root] = idx[child];
            idx[child] = t;
            root = child;
        }
    }
    for (uint32_t end = n; end-- > 1;) {
        uint32_t t = idx[0];
        idx[0] = idx[end];
        idx[end] = t;
        uint32_t root = 0;
        for (;;) {
            uint32_t child = 2 * root + 1;
            if (child >= end) {
                break;
            }
            if (child + 1 < end && s->src[idx[child]] < s->src[idx[child + 1]]) {
                child++;
            }
            if (s->src[idx[root]] >= s->src[idx[child]]) {
                break;
            }
            t = idx[root];
            idx[root] = idx[child];
            idx[child] = t;
            root = child;
        }
    }
}

/* An entity field to write once the entity it names exists. */
typedef struct fixup {
    uint32_t entity;           /* scene index of the holder */
    const wf_type_info *ti;
    uint32_t offset;
    uint32_t target;           /* scene index of the named entity */
} fixup;

typedef struct spawn_scratch {
    uint32_t *sorted;
    uint32_t *depth;
    uint32_t *order;
    weft_entity *made;
    fixup *fix;
    uint32_t nfix, cap_fix;
    void **tmp;                /* [max values of one entity] patched copies */
    weft_value *vals;
    uint32_t max_vals;
} spawn_scratch;

static void scratch_release(weft_world *w, const weft_scene *s, spawn_scratch *x)
{
    size_t n = s->n;
    wf_free(&w->alloc, x->sorted, n * sizeof *x->sorted, _Alignof(uint32_t));
    wf_free(&w->alloc, x->depth, n * sizeof *x->depth, _Alignof(uint32_t));
    wf_free(&w->alloc, x->order, n * sizeof *x->order, _Alignof(uint32_t));
    wf_free(&w->alloc, x->made, n * sizeof *x->made, _Alignof(weft_entity));
    wf_free(&w->alloc, x->fix, (size_t)x->cap_fix * sizeof *x->fix, _Alignof(fixup));
    wf_free(&w->alloc, x->tmp, (size_t)x->max_vals * sizeof *x->tmp, _Alignof(void *));
    wf_free(&w->alloc, x->vals, (size_t)x->max_vals * sizeof *x->vals, _Alignof(weft_value));
}

/* In-set relationship depth: a source deeper than each of its targets. */
static void compute_depths(const spawn_ctx *c, uint32_t *depth)
{
    const weft_scene *s = c->s;
    memset(depth, 0, (size_t)s->n * sizeof *depth);
    bool changed = true;
    for (uint32_t pass = 0; changed && pass <= s->n; pass++) {
        changed = false;
        for (uint32_t i = 0; i < s->n; i++) {
            for (uint32_t k = s->first[i]; k < s->first[i + 1]; k++) {
                const wf_scene_val *v = &s->items[k];
                if (!v->ti->rel_targets) {
                    continue;
                }
                weft_entity t;
                memcpy(&t, v->val, sizeof t);
                uint32_t j = find_src(c, t);
                if (j != UINT32_MAX && depth[i] <= depth[j]) {
                    depth[i] = depth[j] + 1;
                    changed = true;
                }
            }
        }
    }
}

/* Replaces references into the set by the new ids; records fixups for
 * the entities not spawned yet. False on out of memory. */
static bool remap_value(spawn_ctx *c, spawn_scratch *x, uint32_t i, const wf_scene_val *v,
                        uint8_t *copy)
{
    weft_world *w = c->w;
    const wf_rdesc *d = wf_reflect_component(w, v->ti->id);
    for (uint32_t k = 0; d && k < d->entity_count; k++) {
        weft_entity ref;
        memcpy(&ref, copy + d->entity_offs[k], sizeof ref);
        uint32_t j = ref ? find_src(c, ref) : UINT32_MAX;
        if (j == UINT32_MAX) {
            continue; /* outside the set: kept */
        }
        weft_entity now = c->made[j];
        memcpy(copy + d->entity_offs[k], &now, sizeof now);
        if (!now) {
            void *data = x->fix;
            if (!wf_grow(&w->alloc, &data, &x->cap_fix, x->nfix + 1, sizeof *x->fix,
                         _Alignof(fixup))) {
                return false;
            }
            x->fix = data;
            x->fix[x->nfix++] = (fixup){i, v->ti, d->entity_offs[k], j};
        }
    }
    return true;
}

weft_status wf_scene_spawn(weft_world *w, const weft_scene *s, weft_entity *out,
                           uint32_t out_cap)
{
    if (w->iter_depth || w->settling) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "weft_scene_spawn: not while iterating or in a hook");
    }
    if (s->n == 0) {
        return WEFT_OK;
    }
    spawn_scratch x;
    memset(&x, 0, sizeof x);
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t k = s->first[i + 1] - s->first[i];
        x.max_vals = k > x.max_vals ? k : x.max_vals;
    }
    x.max_vals = x.max_vals ? x.max_vals : 1u;
    size_t n = s->n;
    x.sorted = wf_alloc(&w->alloc, n * sizeof *x.sorted, _Alignof(uint32_t));
    x.depth = wf_alloc(&w->alloc, n * sizeof *x.depth, _Alignof(uint32_t));
    x.order = wf_alloc(&w->alloc, n * sizeof *x.order, _Alignof(uint32_t));
    x.made = wf_calloc(&w->alloc, n * sizeof *x.made, _Alignof(weft_entity));
    x.tmp = wf_calloc(&w->alloc, (size_t)x.max_vals * sizeof *x.tmp, _Alignof(void *));
    x.vals = wf_alloc(&w->alloc, (size_t)x.max_vals * sizeof *x.vals, _Alignof(weft_value));
    weft_status st = WEFT_OK;
    if (!x.sorted || !x.depth || !x.order || !x.made || !x.tmp || !x.vals) {
        scratch_release(w, s, &x);
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory spawning a scene");
    }
    spawn_ctx c = {w, s, x.sorted, x.made};
    sort_by_src(s, x.sorted);
    compute_depths(&c, x.depth);
    /* stable order by depth: targets before their sources */
    uint32_t max_depth = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        max_depth = x.depth[i] > max_depth ? x.depth[i] : max_depth;
    }
    uint32_t at = 0;
    for (uint32_t d = 0; d <= max_depth && at < s->n; d++) {
        for (uint32_t i = 0; i < s->n; i++) {
            if (x.depth[i] == d) {
                x.order[at++] = i;
            }
        }
    }
    uint32_t spawned = 0;
    for (; spawned < s->n && st == WEFT_OK; spawned++) {
        uint32_t i = x.order[spawned];
        uint32_t nv = 0;
        for (uint32_t k = s->first[i]; k < s->first[i + 1] && st == WEFT_OK; k++) {
            const wf_scene_val *v = &s->items[k];
            const void *ptr = v->val;
            x.vals[nv].id = v->ti->id; /* before any break: cleanup reads it */
            x.vals[nv].size = v->ti->size;
            const wf_rdesc *d = wf_reflect_component(w, v->ti->id);
            if (v->val && (v->ti->rel_targets || (d && d->entity_count))) {
                uint8_t *copy = wf_alloc(&w->alloc, v->ti->size, v->ti->align);
                if (!copy) {
                    st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory spawning a scene");
                    break;
                }
                wf_type_construct(v->ti, copy, v->val, 1);
                x.tmp[nv] = copy;
                if (v->ti->rel_targets) {
                    /* a relationship: to the new target, or kept outside the
                     * set while alive, or dropped */
                    weft_entity t;
                    memcpy(&t, copy, sizeof t);
                    uint32_t j = find_src(&c, t);
                    if (j != UINT32_MAX) {
                        memcpy(copy, &x.made[j], sizeof t);
                    } else if (!wf_entity_live(w, t)) {
                        wf_free(&w->alloc, copy, v->ti->size, v->ti->align);
                        x.tmp[nv] = NULL;
                        continue;
                    }
                } else if (!remap_value(&c, &x, i, v, copy)) {
                    st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory spawning a scene");
                    nv++;
                    break;
                }
                ptr = copy;
            }
            x.vals[nv].ptr = ptr;
            nv++;
        }
        if (st == WEFT_OK) {
            st = wf_commit_spawn(w, x.vals, (int32_t)nv, &x.made[i]);
            if (w->cmds.count || w->events.has_dead) {
                wf_world_settle(w);
            }
        }
        for (uint32_t k = 0; k < nv; k++) {
            if (x.tmp[k]) {
                const wf_type_info *ti = wf_registry_get(&w->registry, x.vals[k].id);
                wf_type_destroy(ti, x.tmp[k], 1);
                wf_free(&w->alloc, x.tmp[k], ti->size, ti->align);
                x.tmp[k] = NULL;
            }
        }
        if (st != WEFT_OK) {
            break;
        }
    }
    if (st != WEFT_OK) {
        /* undo: the entities made so far go again, newest first */
        for (uint32_t k = spawned; k-- > 0;) {
            weft_entity e = x.made[x.order[k]];
            wf_record *rec = e ? wf_entity_live(w, e) : NULL;
            if (rec) {
                wf_commit_despawn(w, e, rec);
                if (w->cmds.count || w->events.has_dead) {
                    wf_world_settle(w);
                }
            }
        }
        scratch_release(w, s, &x);
        return st;
    }
    for (uint32_t k = 0; k < x.nfix; k++) {
        const fixup *f = &x.fix[k];
        weft_entity holder = x.made[f->entity];
        wf_record *rec = wf_entity_live(w, holder);
        if (!rec || !wf_archetype_has(wf_world_archetype(w, rec->arch), f->ti->id)) {
            continue; /* a hook removed it meanwhile */
        }
        wf_column *col;
        uint32_t row;
        if (f->ti->storage == WEFT_STORAGE_SPARSE) {
            col = &f->ti->sparse->dense;
            row = wf_sparse_find(f->ti->sparse, (uint32_t)holder);
        } else {
            col = wf_table_column(wf_world_archetype(w, rec->arch)->table, f->ti->id);
            row = rec->row;
        }
        memcpy((uint8_t *)wf_column_ptr(col, row) + f->offset, &x.made[f->target],
               sizeof(weft_entity));
        wf_column_mark(col, row, w->change_tick, w->change_tick);
        wf_journal_add(w, col, row, 1, w->change_tick);
    }
    if (out) {
        uint32_t k = s->n < out_cap ? s->n : out_cap;
        memcpy(out, x.made, (size_t)k * sizeof *out);
    }
    scratch_release(w, s, &x);
    return WEFT_OK;
}

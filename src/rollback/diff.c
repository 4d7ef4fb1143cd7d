/* src/rollback/diff.c - weft_rollback_diff: two snapshots of worlds with
 * the same registrations compared component by component. Each snapshot
 * is restored into the scratch world in turn (its own content saved first
 * and put back at the end) and walked through the public API: one
 * uncached query per component (Disabled entities included) gives every
 * (entity, component) and its bytes, weft_resource_get every resource.
 * The records of both sides, sorted, are merged into the differences.
 * SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "rollback_internal.h"

uint64_t wrb_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

#define WRB_FNV_SEED 14695981039346656037ull

/* One (entity, component) with the hash of its value; entity 0: a
 * resource. */
typedef struct rec {
    weft_entity e;
    weft_component c;
    uint64_t h;
} rec;

typedef struct recs {
    rec *v;
    size_t n, cap; /* cap in records */
} recs;

static bool recs_push(const wrb_alloc *al, recs *r, weft_entity e, weft_component c, uint64_t h)
{
    if (r->n == r->cap) {
        size_t ncap = r->cap ? r->cap * 2 : 256;
        rec *nv = wrb_malloc(al, ncap * sizeof *nv);
        if (!nv) {
            return false;
        }
        if (r->n) {
            memcpy(nv, r->v, r->n * sizeof *nv);
        }
        wrb_free(al, r->v, r->cap * sizeof *r->v);
        r->v = nv;
        r->cap = ncap;
    }
    r->v[r->n++] = (rec){e, c, h};
    return true;
}

static void recs_free(const wrb_alloc *al, recs *r)
{
    wrb_free(al, r->v, r->cap * sizeof *r->v);
    memset(r, 0, sizeof *r);
}

/* Resources sort after every entity: entity 0 is mapped to the top. */
static uint64_t rec_key(const rec *r)
{
    return r->e ? (uint64_t)weft_entity_index(r->e) << 32 | weft_entity_generation(r->e)
                : UINT64_MAX;
}

static int rec_cmp(const void *pa, const void *pb)
{
    const rec *a = pa, *b = pb;
    uint64_t ka = rec_key(a), kb = rec_key(b);
    if (ka != kb) {
        return ka < kb ? -1 : 1;
    }
    return a->c < b->c ? -1 : a->c > b->c;
}

/* Every (entity, component) and resource of the world's current content. */
static weft_status collect(weft_world *w, const wrb_alloc *al, recs *out)
{
    weft_world_stats st;
    weft_status s = weft_world_get_stats(w, &st);
    if (s != WEFT_OK) {
        return s;
    }
    int32_t n = st.components;
    /* target lists of relationships: compared by their entities */
    weft_component *list_rel = wrb_calloc(al, (size_t)n + 1, sizeof *list_rel);
    if (!list_rel) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    for (weft_component c = 1; c <= (weft_component)n; c++) {
        weft_component t = weft_relationship_targets(w, c);
        if (t >= 1 && t <= (weft_component)n) {
            list_rel[t] = c;
        }
    }
    s = WEFT_OK;
    for (weft_component c = 1; c <= (weft_component)n && s == WEFT_OK; c++) {
        weft_component_info info;
        if (weft_component_info_get(w, c, &info) != WEFT_OK) {
            continue;
        }
        bool bytes = info.size > 0 && !list_rel[c];
        if (weft_resource_has(w, c)) {
            uint64_t h = WRB_FNV_SEED;
            if (bytes) {
                const void *v = weft_resource_get(w, c, info.size);
                if (v) {
                    h = wrb_hash_bytes(h, v, info.size);
                }
            }
            if (!recs_push(al, out, 0, c, h)) {
                s = WEFT_ERR_OUT_OF_MEMORY;
                break;
            }
        }
        weft_query_desc qd;
        memset(&qd, 0, sizeof qd);
        qd.terms[0].id = c;
        qd.terms[0].oper = bytes ? WEFT_OPER_AND : WEFT_OPER_WITH;
        qd.terms[0].access = bytes ? WEFT_ACCESS_READ : WEFT_ACCESS_NONE;
        qd.term_count = 1;
        qd.flags = WEFT_QUERY_MATCH_DISABLED | WEFT_QUERY_UNCACHED;
        weft_query *q = weft_query_create(w, &qd);
        if (!q) {
            s = weft_last_status(w);
            break;
        }
        weft_iter it;
        s = weft_query_iter(w, q, &it);
        while (s == WEFT_OK && weft_iter_next(&it)) {
            int32_t cnt = weft_iter_count(&it);
            const weft_entity *es = weft_iter_entities(&it);
            const unsigned char *vals = bytes ? weft_iter_field(&it, 0, info.size) : NULL;
            for (int32_t i = 0; i < cnt; i++) {
                uint64_t h = WRB_FNV_SEED;
                if (vals) {
                    h = wrb_hash_bytes(h, vals + (size_t)i * info.size, info.size);
                } else if (list_rel[c]) {
                    int32_t k = 0;
                    const weft_entity *src = weft_related_sources(w, es[i], list_rel[c], &k);
                    if (src && k > 0) {
                        h = wrb_hash_bytes(h, src, (size_t)k * sizeof *src);
                    }
                }
                if (!recs_push(al, out, es[i], c, h)) {
                    s = WEFT_ERR_OUT_OF_MEMORY;
                    break;
                }
            }
            if (s != WEFT_OK) {
                weft_iter_fini(&it);
            }
        }
        weft_query_destroy(w, q);
    }
    wrb_free(al, list_rel, ((size_t)n + 1) * sizeof *list_rel);
    if (s == WEFT_OK && out->n > 1) {
        qsort(out->v, out->n, sizeof *out->v, rec_cmp);
    }
    return s;
}

typedef struct emit {
    weft_rollback_diff_entry *out;
    int32_t cap;
    int32_t total;
} emit;

static void put(emit *em, weft_rollback_diff_kind kind, weft_entity e, weft_component c)
{
    if (em->total < em->cap && em->out) {
        em->out[em->total] = (weft_rollback_diff_entry){kind, e, c};
    }
    if (em->total < INT32_MAX) {
        em->total++;
    }
}

static void merge(const recs *a, const recs *b, emit *em)
{
    size_t i = 0, j = 0;
    while (i < a->n || j < b->n) {
        const rec *ra = i < a->n ? &a->v[i] : NULL;
        const rec *rb = j < b->n ? &b->v[j] : NULL;
        int cmp = !ra ? 1 : !rb ? -1 : rec_cmp(ra, rb);
        weft_entity e = cmp <= 0 ? ra->e : rb->e;
        /* an entity is first met on both sides at once, or on one only */
        bool in_a = ra && ra->e == e, in_b = rb && rb->e == e;
        bool first = (i == 0 || a->v[i - 1].e != e) && (j == 0 || b->v[j - 1].e != e);
        if (e != 0 && first && in_a != in_b) {
            /* the whole entity is on one side only: one entry, skip its records */
            put(em, in_a ? WEFT_RB_DIFF_ENTITY_ONLY_A : WEFT_RB_DIFF_ENTITY_ONLY_B, e, 0);
            const recs *r = in_a ? a : b;
            size_t *k = in_a ? &i : &j;
            while (*k < r->n && r->v[*k].e == e) {
                (*k)++;
            }
            continue;
        }
        if (cmp == 0) {
            if (ra->h != rb->h) {
                put(em, e ? WEFT_RB_DIFF_VALUE : WEFT_RB_DIFF_RESOURCE_VALUE, e, ra->c);
            }
            i++;
            j++;
        } else if (cmp < 0) {
            put(em, e ? WEFT_RB_DIFF_ONLY_A : WEFT_RB_DIFF_RESOURCE_ONLY_A, e, ra->c);
            i++;
        } else {
            put(em, e ? WEFT_RB_DIFF_ONLY_B : WEFT_RB_DIFF_RESOURCE_ONLY_B, e, rb->c);
            j++;
        }
    }
}

weft_status wrb_diff(weft_world *w, const wrb_alloc *al, const void *a, size_t a_len,
                     const void *b, size_t b_len, weft_rollback_diff_entry *out, int32_t cap,
                     int32_t *out_count)
{
    if (out_count) {
        *out_count = 0;
    }
    if (!w || !a || !b || !out_count || cap < 0 || (cap > 0 && !out)) {
        return w ? WEFT_ERR_INVALID_ARG : WEFT_ERR_INVALID_HANDLE;
    }
    size_t saved_len = 0;
    weft_status s = weft_snapshot_write(w, NULL, 0, &saved_len);
    if (s != WEFT_ERR_CAPACITY) {
        return s == WEFT_OK ? WEFT_ERR_INTERNAL : s;
    }
    void *saved = wrb_malloc(al, saved_len);
    if (!saved) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    s = weft_snapshot_write(w, saved, saved_len, &saved_len);
    recs ra = {0}, rb = {0};
    if (s == WEFT_OK) {
        s = weft_snapshot_restore(w, a, a_len);
        if (s == WEFT_OK) {
            s = collect(w, al, &ra);
        }
        if (s == WEFT_OK) {
            s = weft_snapshot_restore(w, b, b_len);
        }
        if (s == WEFT_OK) {
            s = collect(w, al, &rb);
        }
        /* put the scratch world's own content back whatever happened */
        weft_status back = weft_snapshot_restore(w, saved, saved_len);
        if (s == WEFT_OK) {
            s = back;
        }
    }
    if (s == WEFT_OK) {
        emit em = {out, cap, 0};
        merge(&ra, &rb, &em);
        *out_count = em.total;
    }
    recs_free(al, &ra);
    recs_free(al, &rb);
    wrb_free(al, saved, saved_len);
    return s;
}

weft_status weft_rollback_diff(weft_world *world, const void *a, size_t a_len, const void *b,
                               size_t b_len, weft_rollback_diff_entry *out, int32_t cap,
                               int32_t *out_count, const weft_allocator *allocator)
{
    wrb_alloc al;
    wrb_alloc_init(&al, allocator);
    return wrb_diff(world, &al, a, a_len, b, b_len, out, cap, out_count);
}

const char *weft_rollback_diff_kind_name(weft_rollback_diff_kind kind)
{
    switch (kind) {
    case WEFT_RB_DIFF_VALUE: return "value";
    case WEFT_RB_DIFF_ONLY_A: return "only_a";
    case WEFT_RB_DIFF_ONLY_B: return "only_b";
    case WEFT_RB_DIFF_ENTITY_ONLY_A: return "entity_only_a";
    case WEFT_RB_DIFF_ENTITY_ONLY_B: return "entity_only_b";
    case WEFT_RB_DIFF_RESOURCE_VALUE: return "resource_value";
    case WEFT_RB_DIFF_RESOURCE_ONLY_A: return "resource_only_a";
    case WEFT_RB_DIFF_RESOURCE_ONLY_B: return "resource_only_b";
    default: return "?";
    }
}

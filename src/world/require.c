/* src/world/require.c - requirement lists, closures, value expansion.
 * SPDX-License-Identifier: MIT
 */
#include "world/require.h"
#include "core/guard.h"

#include <string.h>

weft_status wf_require_check(weft_world *w, weft_component self, const char *name,
                             const weft_require *reqs, int32_t count)
{
    if (count < 0 || (count > 0 && !reqs)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "component '%s': required list is NULL or its count negative", name);
    }
    for (int32_t i = 0; i < count; i++) {
        const wf_type_info *ri = wf_registry_get(&w->registry, reqs[i].id);
        if (!ri) {
            return wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT,
                            "component '%s' requires id %u, which is not registered", name,
                            reqs[i].id);
        }
        if (wf_type_managed(ri)) {
            return wf_managed_refuse(w, ri, "weft_component_require");
        }
        if (ri->rel_targets) {
            /* one default for every entity cannot name each one's target */
            return wf_error(w, WEFT_ERR_RELATIONSHIP,
                            "component '%s' requires relationship '%s': a relationship "
                            "cannot be required (each source names its own target; "
                            "use weft_relate)",
                            name, ri->name);
        }
        if (self && reqs[i].id == self) {
            return wf_error(w, WEFT_ERR_INVALID_ARG, "component '%s' requires itself", name);
        }
        if (reqs[i].value && reqs[i].size != ri->size) {
            return wf_error(w, WEFT_ERR_SIZE_MISMATCH,
                            "component '%s' requires '%s' with a %zu-byte default, but '%s' "
                            "has size %u",
                            name, ri->name, reqs[i].size, ri->name, ri->size);
        }
        for (int32_t j = 0; j < i; j++) {
            if (reqs[j].id == reqs[i].id) {
                return wf_error(w, WEFT_ERR_DUPLICATE_COMPONENT,
                                "component '%s' requires '%s' twice", name, ri->name);
            }
        }
    }
    return WEFT_OK;
}

static void require_free_one(weft_world *w, wf_require *r)
{
    if (r->value) {
        const wf_type_info *ri = wf_registry_get(&w->registry, r->id);
        wf_type_destroy(ri, r->value, 1);
        wf_free(&w->alloc, r->value, ri->size, ri->align);
        r->value = NULL;
    }
}

weft_status wf_require_add(weft_world *w, wf_type_info *ti, const weft_require *reqs,
                           int32_t count)
{
    if (count == 0) {
        return WEFT_OK;
    }
    /* the ids must not already be required by ti */
    for (int32_t i = 0; i < count; i++) {
        for (uint32_t j = 0; j < ti->req_count; j++) {
            if (ti->reqs[j].id == reqs[i].id) {
                return wf_error(w, WEFT_ERR_DUPLICATE_COMPONENT,
                                "component '%s' already requires '%s'", ti->name,
                                wf_component_name(w, reqs[i].id));
            }
        }
    }
    uint32_t n = ti->req_count + (uint32_t)count;
    wf_require *list = wf_calloc(&w->alloc, n * sizeof *list, _Alignof(wf_require));
    if (!list) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory adding requirements");
    }
    for (int32_t i = 0; i < count; i++) {
        wf_require *r = &list[ti->req_count + (uint32_t)i];
        const wf_type_info *ri = wf_registry_get(&w->registry, reqs[i].id);
        r->id = reqs[i].id;
        r->ctor = reqs[i].ctor;
        r->user = reqs[i].user;
        if (reqs[i].value && ri->size) {
            r->value = wf_alloc(&w->alloc, ri->size, ri->align);
            if (!r->value) {
                for (int32_t j = 0; j < i; j++) {
                    require_free_one(w, &list[ti->req_count + (uint32_t)j]);
                }
                wf_free(&w->alloc, list, n * sizeof *list, _Alignof(wf_require));
                return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory adding requirements");
            }
            wf_type_construct(ri, r->value, reqs[i].value, 1);
        }
    }
    if (ti->req_count) {
        memcpy(list, ti->reqs, ti->req_count * sizeof *list);
    }
    wf_free(&w->alloc, ti->reqs, ti->req_count * sizeof *list, _Alignof(wf_require));
    ti->reqs = list;
    ti->req_count = n;
    /* every cached closure may now be stale (a requirement of a requirement) */
    w->req_gen++;
    return WEFT_OK;
}

void wf_require_fini(weft_world *w)
{
    for (uint32_t id = 1; id <= w->registry.count; id++) {
        wf_type_info *ti = w->registry.infos[id];
        for (uint32_t j = 0; j < ti->req_count; j++) {
            require_free_one(w, &ti->reqs[j]);
        }
        wf_free(&w->alloc, ti->reqs, ti->req_count * sizeof *ti->reqs, _Alignof(wf_require));
        wf_free(&w->alloc, ti->closure, ti->closure_cap * sizeof *ti->closure,
                _Alignof(wf_req_link));
        ti->reqs = NULL;
        ti->closure = NULL;
        ti->req_count = ti->closure_count = ti->closure_cap = 0;
    }
}

/* Appends src's direct requirements to ti's closure, skipping ti and ids
 * already listed. False on OOM. */
static bool closure_append(weft_world *w, wf_type_info *ti, const wf_type_info *src,
                           uint32_t depth)
{
    for (uint32_t j = 0; j < src->req_count; j++) {
        const wf_require *r = &src->reqs[j];
        bool seen = r->id == ti->id;
        for (uint32_t q = 0; q < ti->closure_count && !seen; q++) {
            seen = ti->closure[q].id == r->id;
        }
        if (seen) {
            continue;
        }
        if (ti->closure_count == ti->closure_cap &&
            !wf_grow(&w->alloc, (void **)&ti->closure, &ti->closure_cap,
                     (uint64_t)ti->closure_count + 1, sizeof *ti->closure,
                     _Alignof(wf_req_link))) {
            return false;
        }
        ti->closure[ti->closure_count].id = r->id;
        ti->closure[ti->closure_count].depth = depth;
        ti->closure[ti->closure_count].def = r;
        ti->closure_count++;
    }
    return true;
}

/* Rebuilds ti's closure breadth first: its own requirements, then theirs,
 * each id once (so cycles end). False on OOM (rebuilt next time). */
static bool require_closure(weft_world *w, wf_type_info *ti)
{
    ti->closure_count = 0;
    if (!closure_append(w, ti, ti, 1)) {
        return false;
    }
    for (uint32_t head = 0; head < ti->closure_count; head++) {
        if (!closure_append(w, ti, wf_registry_get(&w->registry, ti->closure[head].id),
                            ti->closure[head].depth + 1)) {
            return false;
        }
    }
    ti->closure_gen = w->req_gen;
    return true;
}

/* Makes room for `need` values (kept: the first s->count). */
static bool scratch_grow(weft_world *w, wf_req_scratch *s, uint64_t need)
{
    /* int32_t counts: the growth is limited to INT32_MAX */
    uint32_t ucap = wf_grow_cap((uint32_t)s->cap, need, 8, INT32_MAX, sizeof(weft_value));
    if (ucap == 0) {
        return false;
    }
    int32_t cap = (int32_t)ucap;
    weft_value *v = wf_alloc(&w->alloc, (size_t)cap * sizeof *v, _Alignof(weft_value));
    bool *o = wf_calloc(&w->alloc, (size_t)cap * sizeof *o, _Alignof(bool));
    if (!v || !o) {
        wf_free(&w->alloc, v, (size_t)cap * sizeof *v, _Alignof(weft_value));
        wf_free(&w->alloc, o, (size_t)cap * sizeof *o, _Alignof(bool));
        return false;
    }
    memcpy(v, s->vals, (size_t)s->count * sizeof *v);
    memcpy(o, s->owned, (size_t)s->count * sizeof *o);
    if (s->vals != s->small) {
        wf_free(&w->alloc, s->vals, (size_t)s->cap * sizeof *v, _Alignof(weft_value));
        wf_free(&w->alloc, s->owned, (size_t)s->cap * sizeof *o, _Alignof(bool));
    }
    s->vals = v;
    s->owned = o;
    s->cap = cap;
    return true;
}

static bool values_have(const weft_value *v, int32_t n, weft_component id)
{
    for (int32_t i = 0; i < n; i++) {
        if (v[i].id == id) {
            return true;
        }
    }
    return false;
}

/* Appends the default of link l to the scratch list (copying the supplied
 * values in front on first use). */
static weft_status require_append(weft_world *w, wf_req_scratch *s, const weft_value *values,
                                  int32_t count, const wf_req_link *l)
{
    if (s->count == 0) {
        if (s->cap < (int64_t)count + 1 && !scratch_grow(w, s, (uint64_t)count + 1)) {
            return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory resolving requirements");
        }
        memcpy(s->vals, values, (size_t)count * sizeof *values);
        memset(s->owned, 0, (size_t)count * sizeof *s->owned);
        s->count = count;
    }
    if (s->count == s->cap && !scratch_grow(w, s, (uint64_t)s->count + 1)) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory resolving requirements");
    }
    const wf_type_info *ri = wf_registry_get(&w->registry, l->id);
    weft_value *v = &s->vals[s->count];
    v->id = l->id;
    v->size = ri->size;
    v->ptr = NULL;
    s->owned[s->count] = false;
    if (l->def->ctor && ri->size) {
        void *tmp = wf_alloc(&w->alloc, ri->size, ri->align);
        if (!tmp) {
            return wf_error(w, WEFT_ERR_OUT_OF_MEMORY,
                            "out of memory constructing a required default");
        }
        WF_CALLBACK(w, l->def->ctor(tmp, l->def->user));
        v->ptr = tmp;
        s->owned[s->count] = true;
        s->any_owned = true;
    } else if (l->def->value) {
        v->ptr = l->def->value;
    }
    s->count++;
    return WEFT_OK;
}

/* Does the cached plan answer this call? */
static inline bool plan_matches(const wf_req_plan *p, const wf_archetype *src,
                                const weft_value *values, int32_t count, uint32_t gen)
{
    if (p->count != count || p->src != src->id || p->gen != gen) {
        return false;
    }
    for (int32_t i = 0; i < count; i++) {
        if (p->ids[i] != values[i].id) {
            return false;
        }
    }
    return true;
}

weft_status wf_require_expand_slow(weft_world *w, const wf_archetype *src,
                                   const weft_value *values, int32_t count,
                                   wf_req_scratch *s, const weft_value **out,
                                   int32_t *out_count)
{
    s->vals = s->small;
    s->owned = s->owned_small;
    s->cap = 32;
    s->count = 0;
    s->any_owned = false;
    *out = values;
    *out_count = count;
    wf_req_plan *plan = &w->req_plan;
    if (plan_matches(plan, src, values, count, w->req_gen)) {
        /* the same source and supplied ids as last time: replay the links */
        for (int32_t k = 0; k < plan->link_count; k++) {
            weft_status st = require_append(w, s, values, count, plan->links[k]);
            if (st != WEFT_OK) {
                return st;
            }
        }
        if (s->count) {
            *out = s->vals;
            *out_count = s->count;
        }
        return WEFT_OK;
    }
    const wf_req_link *chosen[WF_REQ_PLAN_LINKS];
    int32_t nchosen = 0;
    /* Closures first (they may need building), and the deepest level. */
    uint32_t max_depth = 0;
    for (int32_t i = 0; i < count; i++) {
        wf_type_info *ti = wf_registry_get(&w->registry, values[i].id);
        if (!ti->req_count) {
            continue;
        }
        if (ti->closure_gen != w->req_gen && !require_closure(w, ti)) {
            return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory resolving requirements");
        }
        if (ti->closure_count && ti->closure[ti->closure_count - 1].depth > max_depth) {
            max_depth = ti->closure[ti->closure_count - 1].depth;
        }
    }
    /* Breadth first across all supplied components: depth 1 of each (in
     * call order), then depth 2, ...; the first default met for an id wins,
     * so the closest requirer wins and ties go to the earlier component. */
    for (uint32_t d = 1; d <= max_depth; d++) {
        for (int32_t i = 0; i < count; i++) {
            const wf_type_info *ti = wf_registry_get(&w->registry, values[i].id);
            for (uint32_t k = 0; k < ti->closure_count; k++) {
                const wf_req_link *l = &ti->closure[k];
                if (l->depth != d || wf_archetype_has(src, l->id) ||
                    values_have(values, count, l->id) ||
                    (s->count > count &&
                     values_have(s->vals + count, s->count - count, l->id))) {
                    continue;
                }
                weft_status st = require_append(w, s, values, count, l);
                if (st != WEFT_OK) {
                    return st;
                }
                if (nchosen <= WF_REQ_PLAN_LINKS) {
                    if (nchosen < WF_REQ_PLAN_LINKS) {
                        chosen[nchosen] = l;
                    }
                    nchosen++;
                }
            }
        }
    }
    /* remember the answer when it fits (closure links stay valid until the
     * generation moves, which invalidates the plan too) */
    if (count <= WF_SPAWN_CACHE_IDS && nchosen <= WF_REQ_PLAN_LINKS) {
        for (int32_t i = 0; i < count; i++) {
            plan->ids[i] = values[i].id;
        }
        plan->count = count;
        plan->src = src->id;
        plan->gen = w->req_gen;
        plan->link_count = nchosen;
        plan->any_ctor = false;
        for (int32_t k = 0; k < nchosen; k++) {
            const wf_type_info *ri = wf_registry_get(&w->registry, chosen[k]->id);
            plan->links[k] = chosen[k];
            plan->vals[k].id = chosen[k]->id;
            plan->vals[k].size = ri->size;
            plan->vals[k].ptr = chosen[k]->def->value;
            plan->any_ctor |= chosen[k]->def->ctor != NULL && ri->size != 0;
        }
    }
    if (s->count) {
        *out = s->vals;
        *out_count = s->count;
    }
    return WEFT_OK;
}

void wf_require_release(weft_world *w, wf_req_scratch *s)
{
    for (int32_t i = 0; s->any_owned && i < s->count; i++) {
        if (s->owned[i]) {
            const wf_type_info *ri = wf_registry_get(&w->registry, s->vals[i].id);
            wf_type_destroy(ri, (void *)(uintptr_t)s->vals[i].ptr, 1);
            wf_free(&w->alloc, (void *)(uintptr_t)s->vals[i].ptr, ri->size, ri->align);
        }
    }
    if (s->vals != s->small) {
        wf_free(&w->alloc, s->vals, (size_t)s->cap * sizeof *s->vals, _Alignof(weft_value));
        wf_free(&w->alloc, s->owned, (size_t)s->cap * sizeof *s->owned, _Alignof(bool));
    }
    s->vals = s->small;
    s->owned = s->owned_small;
    s->count = 0;
}

/* src/world/defer.c - the deferred structural-change queue.
 * SPDX-License-Identifier: MIT
 */
#include "world/defer.h"

#include <string.h>

#include "world/commit.h"

static void defer_drop_value(weft_world *w, wf_deferred *d)
{
    if (d->value) {
        const wf_type_info *ti = wf_registry_get(&w->registry, d->c);
        wf_type_destroy(ti, d->value, 1);
        wf_free(&w->alloc, d->value, ti->size, ti->align);
        d->value = NULL;
    }
}

weft_status wf_defer_push(weft_world *w, wf_defer_kind kind, weft_entity e,
                          weft_component c, const weft_value *values, int32_t count,
                          weft_entity *out_spawned)
{
    wf_defer_queue *q = &w->defer;
    uint32_t need = q->count + 1u + (uint32_t)count;
    if (need > q->cap) {
        uint32_t cap = q->cap ? q->cap * 2 : 16;
        while (cap < need) {
            cap *= 2;
        }
        wf_deferred *ops = wf_alloc(&w->alloc, cap * sizeof *ops, _Alignof(wf_deferred));
        if (!ops) {
            return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory deferring a call");
        }
        if (q->count) {
            memcpy(ops, q->ops, q->count * sizeof *ops);
        }
        wf_free(&w->alloc, q->ops, q->cap * sizeof *ops, _Alignof(wf_deferred));
        q->ops = ops;
        q->cap = cap;
    }
    wf_deferred *op = &q->ops[q->count];
    for (int32_t i = 0; i < count; i++) {
        const wf_type_info *ti = wf_registry_get(&w->registry, values[i].id);
        wf_deferred *v = &op[1 + i];
        v->kind = WF_DEFER_VALUE;
        v->count = 0;
        v->e = e;
        v->c = values[i].id;
        v->value = NULL;
        if (ti->size && values[i].ptr) {
            v->value = wf_alloc(&w->alloc, ti->size, ti->align);
            if (!v->value) {
                for (int32_t j = 0; j < i; j++) {
                    defer_drop_value(w, &op[1 + j]);
                }
                return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory deferring a call");
            }
            wf_type_construct(ti, v->value, values[i].ptr, 1);
        }
    }
    if (kind == WF_DEFER_SPAWN) {
        e = wf_entities_reserve_id(&w->entities);
        if (!e) {
            for (int32_t j = 0; j < count; j++) {
                defer_drop_value(w, &op[1 + j]);
            }
            return wf_error(w, WEFT_ERR_CAPACITY, "entity index space exhausted");
        }
        for (int32_t j = 0; j < count; j++) {
            op[1 + j].e = e;
        }
        *out_spawned = e;
    }
    op->kind = kind;
    op->count = count;
    op->e = e;
    op->c = c;
    op->value = NULL;
    q->count = need;
    return WEFT_OK;
}

bool wf_defer_entity_ok(const weft_world *w, weft_entity e)
{
    const wf_entity_index *ix = &w->entities;
    uint32_t idx = (uint32_t)e;
    uint32_t gen = (uint32_t)(e >> 32);
    if (e == 0) {
        return false;
    }
    if (idx < ix->count) {
        /* live, or a dead record whose next generation was handed out by a
         * reservation */
        return ix->records[idx].gen == gen;
    }
    uint32_t from_free, fresh;
    wf_entities_pending(ix, &from_free, &fresh);
    return idx < ix->count + fresh && gen == WF_FIRST_GENERATION;
}

/* Applies one SPAWN/INSERT with its values at ops[1..count]. */
static void defer_apply_values(weft_world *w, const wf_deferred *op)
{
    weft_value small[16];
    weft_value *vals = small;
    if (op->count > 16) {
        vals = wf_alloc(&w->alloc, (size_t)op->count * sizeof *vals, _Alignof(weft_value));
        if (!vals) {
            wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory applying a deferred insert");
            return;
        }
    }
    for (int32_t i = 0; i < op->count; i++) {
        const wf_deferred *v = &op[1 + i];
        vals[i].id = v->c;
        vals[i].size = wf_registry_get(&w->registry, v->c)->size;
        vals[i].ptr = v->value;
    }
    wf_record *rec;
    if (wf_entity_check(w, op->e, &rec) == WEFT_OK) {
        wf_commit_insert(w, op->e, rec, vals, op->count);
    }
    if (vals != small) {
        wf_free(&w->alloc, vals, (size_t)op->count * sizeof *vals, _Alignof(weft_value));
    }
}

void wf_defer_apply(weft_world *w)
{
    wf_defer_queue *q = &w->defer;
    for (uint32_t i = 0; i < q->count; i++) {
        wf_deferred *op = &q->ops[i];
        wf_record *rec;
        switch (op->kind) {
        case WF_DEFER_SPAWN:
            if (wf_commit_flush(w) == WEFT_OK && op->count > 0) {
                defer_apply_values(w, op);
            }
            break;
        case WF_DEFER_INSERT:
            defer_apply_values(w, op);
            break;
        case WF_DEFER_REMOVE:
            if (wf_entity_check(w, op->e, &rec) == WEFT_OK) {
                wf_commit_remove(w, op->e, rec, wf_registry_get(&w->registry, op->c));
            }
            break;
        case WF_DEFER_DESPAWN:
            if (wf_entity_check(w, op->e, &rec) == WEFT_OK) {
                wf_commit_despawn(w, op->e, rec);
            }
            break;
        case WF_DEFER_FLUSH:
            wf_commit_flush(w);
            break;
        case WF_DEFER_VALUE:
            defer_drop_value(w, op);
            break;
        default:
            break;
        }
    }
    q->count = 0;
}

void wf_defer_fini(weft_world *w)
{
    wf_defer_queue *q = &w->defer;
    for (uint32_t i = 0; i < q->count; i++) {
        if (q->ops[i].kind == WF_DEFER_VALUE) {
            defer_drop_value(w, &q->ops[i]);
        }
    }
    wf_free(&w->alloc, q->ops, q->cap * sizeof *q->ops, _Alignof(wf_deferred));
    q->ops = NULL;
    q->count = q->cap = 0;
}

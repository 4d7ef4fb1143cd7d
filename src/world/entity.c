/* src/world/entity.c - the entity operations behind the public entry
 * points (see entity.h): phase checks, deferral, commit, settle.
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"
#include "world/entity.h"

weft_entity wf_entity_defer_spawn(weft_world *w, const weft_value *values, int32_t count)
{
    weft_entity e = 0;
    wf_defer_push(w, WF_CMD_SPAWN, 0, 0, values, count, &e);
    return e;
}

weft_status wf_entity_defer_check(weft_world *w, weft_entity e, const char *fn)
{
    if (!wf_defer_entity_ok(w, e)) {
        wf_record *rec;
        weft_status st = wf_entity_check(w, e, &rec);
        return st != WEFT_OK ? st
                             : wf_error(w, WEFT_ERR_STALE_ENTITY, "%s: entity is not alive",
                                        fn);
    }
    return WEFT_OK;
}

weft_entity wf_entity_spawn_with(weft_world *w, const weft_value *values, int32_t count,
                                 const char *fn)
{
    if (wf_world_refuse_shared(w, fn)) {
        return 0;
    }
    weft_entity e = 0;
    if (WF_LIKELY(!w->iter_depth) && wf_spawn_cache_vouches(w, values, count)) {
        /* the list of the last spawn: checked then, so not again */
        wf_entity_done(w, wf_commit_spawn_cached(w, values, count, &e));
        return e;
    }
    if (wf_values_check(w, values, count, fn) != WEFT_OK) {
        return 0;
    }
    if (WF_UNLIKELY(w->iter_depth)) {
        return wf_entity_defer_spawn(w, values, count);
    }
    wf_entity_done(w, wf_commit_spawn(w, values, count, &e));
    return e;
}

weft_status wf_entity_despawn(weft_world *w, weft_entity e, const char *fn)
{
    if (wf_world_refuse_shared(w, fn)) {
        return WEFT_ERR_WRONG_PHASE;
    }
    if (WF_UNLIKELY(w->iter_depth)) {
        weft_status st = wf_entity_defer_check(w, e, fn);
        return st != WEFT_OK ? st : wf_defer_push(w, WF_CMD_DESPAWN, e, 0, NULL, 0, NULL);
    }
    wf_record *rec;
    weft_status st = wf_entity_check(w, e, &rec);
    if (st != WEFT_OK) {
        return st;
    }
    return wf_entity_done(w, wf_commit_despawn(w, e, rec));
}

weft_status wf_entity_insert(weft_world *w, weft_entity e, weft_component c, const void *value,
                             size_t size, const char *fn)
{
    if (wf_world_refuse_shared(w, fn)) {
        return WEFT_ERR_WRONG_PHASE;
    }
    if (WF_UNLIKELY(w->iter_depth)) {
        weft_value v = {c, size, value};
        weft_status st = wf_entity_defer_check(w, e, fn);
        if (st == WEFT_OK) {
            st = wf_values_check(w, &v, 1, fn);
        }
        return st != WEFT_OK ? st : wf_defer_push(w, WF_CMD_INSERT, e, 0, &v, 1, NULL);
    }
    wf_record *rec;
    weft_status st = wf_entity_check(w, e, &rec);
    if (st != WEFT_OK) {
        return st;
    }
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (WF_UNLIKELY(!ti || ti->size != size || wf_type_managed(ti))) {
        weft_value v = {c, size, value};
        return wf_values_check(w, &v, 1, fn);
    }
    return wf_entity_done(w, wf_commit_insert_one(w, e, rec, ti, value));
}

weft_status wf_entity_remove(weft_world *w, weft_entity e, weft_component c, const char *fn)
{
    if (wf_world_refuse_shared(w, fn)) {
        return WEFT_ERR_WRONG_PHASE;
    }
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (WF_UNLIKELY(w->iter_depth)) {
        weft_status st = wf_entity_defer_check(w, e, fn);
        if (st == WEFT_OK && !ti) {
            st = wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT,
                          "%s: component id %u is not registered in this world", fn, c);
        }
        if (st == WEFT_OK && wf_type_managed(ti)) {
            st = wf_managed_refuse(w, ti, fn);
        }
        return st != WEFT_OK ? st : wf_defer_push(w, WF_CMD_REMOVE, e, c, NULL, 0, NULL);
    }
    wf_record *rec;
    weft_status st = wf_entity_check(w, e, &rec);
    if (st != WEFT_OK) {
        return st;
    }
    if (!ti) {
        return wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT,
                        "%s: component id %u is not registered in this world", fn, c);
    }
    if (wf_type_managed(ti)) {
        return wf_managed_refuse(w, ti, fn);
    }
    return wf_entity_done(w, wf_commit_remove(w, e, rec, ti));
}

/* wf_entity_locate's body; static so that the checking path of get and
 * get_mut has it inline. */
static wf_column *entity_locate(const weft_world *w, weft_entity e, weft_component c,
                                size_t size, const char *fn, uint32_t *out_row,
                                weft_status *status)
{
    wf_record *rec;
    *status = wf_entity_check(w, e, &rec);
    if (*status != WEFT_OK) {
        return NULL;
    }
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (!ti) {
        *status = wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT,
                           "%s: component id %u is not registered in this world", fn, c);
        return NULL;
    }
    if (size != ti->size) {
        *status = wf_error(w, WEFT_ERR_SIZE_MISMATCH,
                           "%s: component '%s' has size %u but %zu bytes were passed", fn,
                           ti->name, ti->size, size);
        return NULL;
    }
    if (ti->storage == WEFT_STORAGE_SPARSE) {
        uint32_t d = wf_sparse_find(ti->sparse, (uint32_t)e);
        if (d == WF_SPARSE_EMPTY) {
            return NULL;
        }
        *out_row = d;
        return &ti->sparse->dense;
    }
    wf_column *col = wf_table_column(wf_world_archetype(w, rec->arch)->table, c);
    *out_row = rec->row;
    return col;
}

wf_column *wf_entity_locate(const weft_world *w, weft_entity e, weft_component c, size_t size,
                            const char *fn, uint32_t *out_row, weft_status *status)
{
    return entity_locate(w, e, c, size, fn, out_row, status);
}

/* Slow path of get/get_mut: full checks with messages. Kept out of line
 * and cold so the fast path of wf_entity_get needs no register spills. */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static void *entity_get_checked(const weft_world *w, weft_entity e, weft_component c,
                                size_t size, bool mut)
{
    const char *fn = mut ? "weft_get_mut" : "weft_get";
    uint32_t row = 0;
    weft_status st;
    wf_column *col = entity_locate(w, e, c, size, fn, &row, &st);
    if (!col) {
        return NULL;
    }
    const wf_type_info *ti = col->ti;
    if (ti->size == 0) {
        wf_error(w, WEFT_ERR_INVALID_ARG,
                 "%s: '%s' is a tag and has no value; use weft_has", fn, ti->name);
        return NULL;
    }
    if (mut) {
        if (ti->flags & WEFT_COMPONENT_IMMUTABLE) {
            wf_error(w, WEFT_ERR_IMMUTABLE,
                     "weft_get_mut: component '%s' is immutable (re-insert it instead)",
                     ti->name);
            return NULL;
        }
        wf_column_mark(col, row, w->change_tick, w->change_tick);
        /* mut comes only from wf_entity_get_mut, which holds a mutable world */
        wf_journal_add((weft_world *)(uintptr_t)w, col, row, 1, w->change_tick);
    }
    return wf_column_ptr(col, row);
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
const void *wf_entity_get_slow(const weft_world *w, weft_entity e, weft_component c,
                               size_t size)
{
    const wf_record *r = wf_entity_live(w, e);
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (r && ti && ti->size == size && size != 0) {
        if (ti->storage == WEFT_STORAGE_TABLE) {
            return NULL; /* a table component the entity lacks */
        }
        uint32_t d = wf_sparse_find(ti->sparse, (uint32_t)e);
        return d == WF_SPARSE_EMPTY ? NULL : wf_column_ptr(&ti->sparse->dense, d);
    }
    return entity_get_checked(w, e, c, size, false);
}

void *wf_entity_get_mut(weft_world *w, weft_entity e, weft_component c, size_t size)
{
    if (wf_world_refuse_shared(w, "weft_get_mut")) {
        return NULL;
    }
    return entity_get_checked(w, e, c, size, true);
}

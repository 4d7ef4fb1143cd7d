/* src/api/api_entity.c - spawn, despawn, reserve, insert, remove, get.
 * SPDX-License-Identifier: MIT
 *
 * Armor first (world handle, entity generation, component id, size), then
 * one call into world/commit.c. weft_get and weft_get_mut keep a fast path
 * that records nothing and fall back to the checking path on any doubt.
 */
#include "internal.h"

/* Ends a structural call: what hooks and observers deferred is applied
 * now (unless the call itself ran deferred). */
static inline weft_status entity_done(weft_world *w, weft_status st)
{
    if (WF_UNLIKELY(w->cmds.count || w->events.has_dead)) {
        wf_world_settle(w);
    }
    return st;
}

/* ---- deferral while iterating (world/defer.h) ---- */

/* Spawn while iterating: a reserved id now, the entity at the end. */
static weft_entity entity_defer_spawn(weft_world *w, const weft_value *values,
                                      int32_t count)
{
    weft_entity e = 0;
    wf_defer_push(w, WF_CMD_SPAWN, 0, 0, values, count, &e);
    return e;
}

static weft_status entity_defer_check(weft_world *w, weft_entity e, const char *fn)
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

WEFT_API weft_entity weft_spawn(weft_world *world)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    if (wf_world_refuse_shared(world, "weft_spawn")) {
        return 0;
    }
    if (WF_UNLIKELY(world->iter_depth)) {
        return entity_defer_spawn(world, NULL, 0);
    }
    weft_entity e = 0;
    entity_done(world, wf_commit_spawn(world, NULL, 0, &e));
    return e;
}

WEFT_API weft_entity weft_spawn_with(weft_world *world, const weft_value *values,
                                     int32_t count)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    if (wf_world_refuse_shared(world, "weft_spawn_with")) {
        return 0;
    }
    weft_entity e = 0;
    if (WF_LIKELY(!world->iter_depth) && wf_spawn_cache_vouches(world, values, count)) {
        /* the list of the last spawn: checked then, so not again */
        entity_done(world, wf_commit_spawn_cached(world, values, count, &e));
        return e;
    }
    if (wf_values_check(world, values, count, "weft_spawn_with") != WEFT_OK) {
        return 0;
    }
    if (WF_UNLIKELY(world->iter_depth)) {
        return entity_defer_spawn(world, values, count);
    }
    entity_done(world, wf_commit_spawn(world, values, count, &e));
    return e;
}

WEFT_API weft_status weft_spawn_bulk(weft_world *world, const weft_value *columns,
                                     int32_t column_count, int32_t n,
                                     weft_entity *out_entities)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_spawn_bulk")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    if (n < 0) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_spawn_bulk: n %d is negative", n);
    }
    weft_status st = wf_values_check(world, columns, column_count, "weft_spawn_bulk");
    if (st != WEFT_OK) {
        return st;
    }
    if (world->iter_depth) {
        return wf_error(world, WEFT_ERR_WRONG_PHASE,
                        "weft_spawn_bulk: not allowed while a query iteration, hook or "
                        "observer is running");
    }
    return entity_done(world, wf_commit_spawn_bulk(world, columns, column_count, (uint32_t)n,
                                                    out_entities));
}

WEFT_API weft_status weft_despawn(weft_world *world, weft_entity e)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_despawn")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    if (WF_UNLIKELY(world->iter_depth)) {
        weft_status st = entity_defer_check(world, e, "weft_despawn");
        return st != WEFT_OK ? st : wf_defer_push(world, WF_CMD_DESPAWN, e, 0, NULL, 0, NULL);
    }
    wf_record *rec;
    weft_status st = wf_entity_check(world, e, &rec);
    if (st != WEFT_OK) {
        return st;
    }
    return entity_done(world, wf_commit_despawn(world, e, rec));
}

WEFT_API bool weft_is_alive(const weft_world *world, weft_entity e)
{
    return wf_world_ok(world) && e != 0 && wf_entity_live(world, e) != NULL;
}

WEFT_API weft_entity weft_entity_reserve(weft_world *world)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    return wf_entities_reserve_id(&world->entities);
}

WEFT_API weft_status weft_entity_flush(weft_world *world)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_entity_flush")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    if (world->iter_depth) {
        return wf_defer_push(world, WF_CMD_FLUSH, 0, 0, NULL, 0, NULL);
    }
    return entity_done(world, wf_commit_flush(world));
}

WEFT_API weft_status weft_insert(weft_world *world, weft_entity e, weft_component c,
                                 const void *value, size_t size)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_insert")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    if (WF_UNLIKELY(world->iter_depth)) {
        weft_value v = {c, size, value};
        weft_status st = entity_defer_check(world, e, "weft_insert");
        if (st == WEFT_OK) {
            st = wf_values_check(world, &v, 1, "weft_insert");
        }
        return st != WEFT_OK ? st : wf_defer_push(world, WF_CMD_INSERT, e, 0, &v, 1, NULL);
    }
    wf_record *rec;
    weft_status st = wf_entity_check(world, e, &rec);
    if (st != WEFT_OK) {
        return st;
    }
    const wf_type_info *ti = wf_registry_get(&world->registry, c);
    if (WF_UNLIKELY(!ti || ti->size != size || wf_type_managed(ti))) {
        weft_value v = {c, size, value};
        return wf_values_check(world, &v, 1, "weft_insert");
    }
    return entity_done(world, wf_commit_insert_one(world, e, rec, ti, value));
}

WEFT_API weft_status weft_insert_many(weft_world *world, weft_entity e,
                                      const weft_value *values, int32_t count)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_insert_many")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    if (WF_UNLIKELY(world->iter_depth)) {
        weft_status st = entity_defer_check(world, e, "weft_insert_many");
        if (st == WEFT_OK) {
            st = wf_values_check(world, values, count, "weft_insert_many");
        }
        if (st == WEFT_OK && count > 0) {
            st = wf_defer_push(world, WF_CMD_INSERT, e, 0, values, count, NULL);
        }
        return st;
    }
    wf_record *rec;
    weft_status st = wf_entity_check(world, e, &rec);
    if (st == WEFT_OK) {
        st = wf_values_check(world, values, count, "weft_insert_many");
    }
    if (st == WEFT_OK && count > 0) {
        st = entity_done(world, wf_commit_insert(world, e, rec, values, count));
    }
    return st;
}

WEFT_API weft_status weft_remove(weft_world *world, weft_entity e, weft_component c)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_remove")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    const wf_type_info *ti = wf_registry_get(&world->registry, c);
    if (WF_UNLIKELY(world->iter_depth)) {
        weft_status st = entity_defer_check(world, e, "weft_remove");
        if (st == WEFT_OK && !ti) {
            st = wf_error(world, WEFT_ERR_UNKNOWN_COMPONENT,
                          "weft_remove: component id %u is not registered in this world", c);
        }
        if (st == WEFT_OK && wf_type_managed(ti)) {
            st = wf_managed_refuse(world, ti, "weft_remove");
        }
        return st != WEFT_OK ? st : wf_defer_push(world, WF_CMD_REMOVE, e, c, NULL, 0, NULL);
    }
    wf_record *rec;
    weft_status st = wf_entity_check(world, e, &rec);
    if (st != WEFT_OK) {
        return st;
    }
    if (!ti) {
        return wf_error(world, WEFT_ERR_UNKNOWN_COMPONENT,
                        "weft_remove: component id %u is not registered in this world", c);
    }
    if (wf_type_managed(ti)) {
        return wf_managed_refuse(world, ti, "weft_remove");
    }
    return entity_done(world, wf_commit_remove(world, e, rec, ti));
}

WEFT_API bool weft_has(const weft_world *world, weft_entity e, weft_component c)
{
    if (!wf_world_ok(world)) {
        return false;
    }
    const wf_record *r = wf_entity_live(world, e);
    const wf_type_info *ti = wf_registry_get(&world->registry, c);
    if (!r || !ti) {
        return false;
    }
    if (ti->storage == WEFT_STORAGE_SPARSE) {
        return wf_sparse_find(ti->sparse, (uint32_t)e) != WF_SPARSE_EMPTY;
    }
    return wf_table_column(wf_world_archetype(world, r->arch)->table, c) != NULL;
}

/* Locates e's value of c: its column and row, or NULL when e lacks c.
 * Records errors for misuse; *status tells which. */
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

/* Slow path of get/get_mut: full checks with messages. Kept out of line
 * and cold so the fast path of weft_get needs no register spills. */
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
        /* mut comes only from weft_get_mut, which holds a mutable world */
        wf_journal_add((weft_world *)(uintptr_t)w, col, row, 1, w->change_tick);
    }
    return wf_column_ptr(col, row);
}

/* Everything weft_get does beyond its fast path: sparse components,
 * absence, and misuse. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static const void *entity_get_slow(const weft_world *world, weft_entity e,
                                   weft_component c, size_t size)
{
    const wf_record *r = wf_entity_live(world, e);
    const wf_type_info *ti = wf_registry_get(&world->registry, c);
    if (r && ti && ti->size == size && size != 0) {
        if (ti->storage == WEFT_STORAGE_TABLE) {
            return NULL; /* a table component the entity lacks */
        }
        uint32_t d = wf_sparse_find(ti->sparse, (uint32_t)e);
        return d == WF_SPARSE_EMPTY ? NULL : wf_column_ptr(&ti->sparse->dense, d);
    }
    return entity_get_checked(world, e, c, size, false);
}

WEFT_API const void *weft_get(const weft_world *world, weft_entity e, weft_component c,
                              size_t size)
{
    /* Fast path: live entity holding c in its table, right size. It never
     * touches the registry (the column knows its size) and ends in a tail
     * call otherwise, so it needs no register spills. */
    if (WF_LIKELY(world != NULL && world->magic == WF_WORLD_MAGIC)) {
        const wf_record *r = wf_entity_live(world, e);
        if (WF_LIKELY(r != NULL)) {
            const wf_archetype *arch = wf_world_archetype(world, r->arch);
            if (WF_LIKELY(c < arch->col_map_len && arch->col_map[c] >= 0)) {
                const wf_column *col = &arch->cols[arch->col_map[c]];
                if (WF_LIKELY(col->size == size && size != 0)) {
                    return wf_column_ptr(col, r->row);
                }
            }
        }
        return entity_get_slow(world, e, c, size);
    }
    return NULL;
}

WEFT_API int32_t weft_get_many(const weft_world *world, const weft_entity *entities,
                               int32_t count, weft_component c, size_t size,
                               const void **out)
{
    if (!wf_world_ok(world)) {
        return -1;
    }
    if (count < 0) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_get_many: count %d is negative", count);
        return -1;
    }
    if (count > 0 && (!entities || !out)) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_get_many: %s is NULL with count %d",
                 entities ? "out" : "entities", count);
        return -1;
    }
    const wf_type_info *ti = wf_registry_get(&world->registry, c);
    if (!ti) {
        wf_error(world, WEFT_ERR_UNKNOWN_COMPONENT,
                 "weft_get_many: component id %u is not registered in this world", c);
        return -1;
    }
    if (ti->size == 0) {
        wf_error(world, WEFT_ERR_INVALID_ARG,
                 "weft_get_many: '%s' is a tag and has no value; use weft_has", ti->name);
        return -1;
    }
    if (ti->size != size) {
        wf_error(world, WEFT_ERR_SIZE_MISMATCH,
                 "weft_get_many: size %zu does not match component '%s' (%u bytes)", size,
                 ti->name, ti->size);
        return -1;
    }
    return wf_world_get_many(world, entities, count, ti, out);
}

WEFT_API void *weft_get_mut(weft_world *world, weft_entity e, weft_component c,
                            size_t size)
{
    if (!wf_world_ok(world) || wf_world_refuse_shared(world, "weft_get_mut")) {
        return NULL;
    }
    return entity_get_checked(world, e, c, size, true);
}

WEFT_API weft_status weft_get_ticks(const weft_world *world, weft_entity e,
                                    weft_component c, weft_ticks *out)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_get_ticks: out is NULL");
    }
    const wf_type_info *ti = wf_registry_get(&world->registry, c);
    uint32_t row = 0;
    weft_status st;
    wf_column *col = entity_locate(world, e, c, ti ? ti->size : 0, "weft_get_ticks", &row,
                                   &st);
    if (st != WEFT_OK) {
        return st;
    }
    if (!col) {
        return wf_error(world, WEFT_ERR_NOT_FOUND,
                        "weft_get_ticks: entity %u:%u has no component '%s'", (uint32_t)e,
                        (uint32_t)(e >> 32), ti->name);
    }
    if (!col->ticks) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_get_ticks: component '%s' stores no change ticks",
                        col->ti->name);
    }
    *out = wf_column_ticks(col, row, world->change_tick);
    return WEFT_OK;
}

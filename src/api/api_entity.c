/* src/api/api_entity.c - spawn, despawn, reserve, insert, remove, get.
 * SPDX-License-Identifier: MIT
 *
 * Armor first (world handle, entity generation, component id, size), then
 * one call into world/commit.c, or into world/entity.c for the operations
 * internal code shares (spawn_with, despawn, insert, remove, get, get_mut).
 * weft_get keeps an inline fast path that records nothing and falls back
 * to the checking path on any doubt.
 */
#include "internal.h"
#include "world/entity.h"

WEFT_API weft_entity weft_spawn(weft_world *world)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    if (wf_world_refuse_shared(world, "weft_spawn")) {
        return 0;
    }
    if (WF_UNLIKELY(world->iter_depth)) {
        return wf_entity_defer_spawn(world, NULL, 0);
    }
    weft_entity e = 0;
    wf_entity_done(world, wf_commit_spawn(world, NULL, 0, &e));
    return e;
}

WEFT_API weft_entity weft_spawn_with(weft_world *world, const weft_value *values,
                                     int32_t count)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    return wf_entity_spawn_with(world, values, count, "weft_spawn_with");
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
    return wf_entity_done(world, wf_commit_spawn_bulk(world, columns, column_count, (uint32_t)n,
                                                    out_entities));
}

WEFT_API weft_status weft_despawn(weft_world *world, weft_entity e)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_entity_despawn(world, e, "weft_despawn");
}

WEFT_API bool weft_is_alive(const weft_world *world, weft_entity e)
{
    return wf_world_ok(world) && wf_entity_alive(world, e);
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
    return wf_entity_done(world, wf_commit_flush(world));
}

WEFT_API weft_status weft_insert(weft_world *world, weft_entity e, weft_component c,
                                 const void *value, size_t size)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_entity_insert(world, e, c, value, size, "weft_insert");
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
        weft_status st = wf_entity_defer_check(world, e, "weft_insert_many");
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
        st = wf_entity_done(world, wf_commit_insert(world, e, rec, values, count));
    }
    return st;
}

WEFT_API weft_status weft_remove(weft_world *world, weft_entity e, weft_component c)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_entity_remove(world, e, c, "weft_remove");
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

WEFT_API const void *weft_get(const weft_world *world, weft_entity e, weft_component c,
                              size_t size)
{
    /* the fast path is inline (world/entity.h): live entity holding c in
     * its table, right size */
    return WF_LIKELY(wf_world_ok(world)) ? wf_entity_get(world, e, c, size) : NULL;
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
    return wf_world_ok(world) ? wf_entity_get_mut(world, e, c, size) : NULL;
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
    wf_column *col = wf_entity_locate(world, e, c, ti ? ti->size : 0, "weft_get_ticks", &row,
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

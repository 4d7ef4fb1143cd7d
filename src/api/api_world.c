/* src/api/api_world.c - world lifecycle, error slot, stats, hash, check.
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"
#include "schedule/schedule.h"

#include <string.h>

WEFT_API weft_world *weft_world_create(const weft_world_desc *desc)
{
    weft_world_desc d;
    memset(&d, 0, sizeof d);
    if (desc) {
        d = *desc;
    }
    if (d._start_canary || d._end_canary) {
        return NULL;
    }
    if ((d.allocator.alloc == NULL) != (d.allocator.free == NULL)) {
        return NULL; /* give both allocator functions or neither */
    }
    if (d.entity_capacity_hint < 0) {
        return NULL;
    }
    return wf_world_create(&d);
}

WEFT_API weft_status weft_world_destroy(weft_world *world)
{
    if (!world) {
        return WEFT_OK;
    }
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_in_callback(world)) {
        return wf_error(world, WEFT_ERR_WRONG_PHASE,
                        "weft_world_destroy: called from inside a callback of this world "
                        "(hook, observer, system, condition, custom command, drop, logger, "
                        "allocator, type hook, plugin, ...); destroy it after the outer call "
                        "returns");
    }
    if (world->app_attached) {
        return wf_error(world, WEFT_ERR_WRONG_PHASE,
                        "weft_world_destroy: an app drives this world; destroy the app "
                        "(weft_app_destroy) first");
    }
    if (wf_exec_lent(world)) {
        return wf_error(world, WEFT_ERR_WRONG_PHASE,
                        "weft_world_destroy: other worlds run on this world's executor "
                        "(weft_world_share_threads); destroy them or stop sharing first");
    }
    wf_world_destroy(world);
    return WEFT_OK;
}

WEFT_API weft_status weft_last_status(const weft_world *world)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_error_last(world); /* inside a system: the system's slot */
}

WEFT_API const char *weft_last_error(const weft_world *world)
{
    if (!wf_world_ok(world)) {
        return "invalid world handle";
    }
    return wf_error_last_message(world); /* inside a system: the system's slot */
}

WEFT_API void weft_clear_error(weft_world *world)
{
    if (wf_world_ok(world)) {
        wf_error_sink *sink = wf_error_sink_for(world);
        if (sink) {
            /* inside a system: the errors so far were handled, they no
             * longer fail it (access violations stay: they fail it
             * directly) */
            sink->count = 0;
            sink->status = WEFT_OK;
            sink->last = WEFT_OK;
            sink->last_message[0] = '\0';
            return;
        }
        world->last_status = WEFT_OK;
        world->last_error[0] = '\0';
    }
}

WEFT_API uint32_t weft_world_change_tick(const weft_world *world)
{
    return wf_world_ok(world) ? world->change_tick : 0;
}

WEFT_API uint64_t weft_world_restore_count(const weft_world *world)
{
    return wf_world_ok(world) ? world->restores : 0;
}

WEFT_API uint32_t weft_world_increment_change_tick(weft_world *world)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    return ++world->change_tick;
}

WEFT_API weft_status weft_world_get_stats(const weft_world *world, weft_world_stats *out)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_world_get_stats: out is NULL");
    }
    uint32_t pf, pn;
    wf_entities_pending(&world->entities, &pf, &pn);
    out->live_entities = world->entities.live;
    out->live_bytes = wf_alloc_live(&world->alloc);
    out->archetypes = (int32_t)world->graph.arch_count;
    out->tables = (int32_t)world->graph.table_count;
    out->components = (int32_t)world->registry.count;
    out->resources = world->registry.resources;
    out->entity_records = (int32_t)world->entities.count;
    out->pending_reserved = (int32_t)(pf + pn);
    return WEFT_OK;
}

WEFT_API weft_status weft_archetype_info_get(const weft_world *world, int32_t index,
                                             weft_archetype_info *out)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_archetype_info_get: out is NULL");
    }
    if (index < 0 || (uint32_t)index >= world->graph.arch_count) {
        return wf_error(world, WEFT_ERR_NOT_FOUND,
                        "archetype index %d out of range (the world has %u)", index,
                        world->graph.arch_count);
    }
    const wf_archetype *arch = world->graph.archetypes[index];
    out->entity_count = arch->entity_count;
    out->table = (int32_t)arch->table->id;
    out->component_count = (int32_t)arch->id_count;
    out->components = arch->ids;
    return WEFT_OK;
}

WEFT_API int32_t weft_entity_archetype(const weft_world *world, weft_entity e)
{
    if (!wf_world_ok(world)) {
        return -1;
    }
    const wf_record *r = wf_entity_live(world, e);
    return r ? (int32_t)r->arch : -1;
}

WEFT_API uint64_t weft_world_hash(const weft_world *world)
{
    return wf_world_ok(world) ? wf_world_hash(world) : 0;
}

WEFT_API weft_status weft_world_check(weft_world *world)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_world_check(world);
}

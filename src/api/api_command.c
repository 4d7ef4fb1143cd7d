/* src/api/api_command.c - command buffers: create, record, apply, destroy.
 * SPDX-License-Identifier: MIT
 *
 * Recording validates component ids and sizes at once (the values are
 * copied then); entities are checked at apply, where a spawn recorded
 * earlier may have made them live.
 */
#include "internal.h"

static bool cmds_ok(const weft_commands *cmds)
{
    return cmds && cmds->magic == WF_CMDS_MAGIC && wf_world_ok(cmds->world);
}

WEFT_API weft_commands *weft_commands_create(weft_world *world)
{
    if (!wf_world_ok(world)) {
        return NULL;
    }
    weft_commands *b = wf_alloc(&world->alloc, sizeof *b, _Alignof(weft_commands));
    if (!b) {
        wf_error(world, WEFT_ERR_OUT_OF_MEMORY, "out of memory creating a command buffer");
        return NULL;
    }
    wf_cmds_init(b, world, &world->alloc, &world->registry);
    b->next = world->buffers;
    if (world->buffers) {
        world->buffers->prev = b;
    }
    world->buffers = b;
    return b;
}

WEFT_API void weft_commands_destroy(weft_commands *cmds)
{
    if (!cmds_ok(cmds) || cmds == &cmds->world->cmds || cmds->applying) {
        return;
    }
    weft_world *w = cmds->world;
    if (cmds->prev) {
        cmds->prev->next = cmds->next;
    } else {
        w->buffers = cmds->next;
    }
    if (cmds->next) {
        cmds->next->prev = cmds->prev;
    }
    w->busy++; /* drop functions run; the buffer cannot be destroyed again */
    cmds->applying = true;
    wf_cmds_fini(cmds);
    w->busy--;
    wf_free(&w->alloc, cmds, sizeof *cmds, _Alignof(weft_commands));
}

WEFT_API weft_commands *weft_world_commands(weft_world *world)
{
    if (!wf_world_ok(world)) {
        return NULL;
    }
    /* the world buffer is applied when the outer operation ends (an
     * extract system's main query iteration, say): refused while a sub-app
     * extracts from the world, as every other write is */
    if (world->read_only && wf_world_refuse_shared(world, "weft_world_commands")) {
        return NULL;
    }
    return &world->cmds;
}

WEFT_API int32_t weft_commands_count(const weft_commands *cmds)
{
    return cmds_ok(cmds) ? cmds->count : 0;
}

WEFT_API weft_entity weft_commands_resolve(const weft_commands *cmds, weft_entity e)
{
    if (!cmds_ok(cmds)) {
        return 0;
    }
    weft_world *w = cmds->world;
    if (e == 0 || !WF_CMD_IS_PROV(e)) {
        return e;
    }
    if (WF_CMD_PROV_TAG(e) == cmds->prov_tag) {
        wf_error(w, WEFT_ERR_WRONG_PHASE,
                 "weft_commands_resolve: provisional entity %u is of the round still being "
                 "recorded; its real id exists once the buffer is applied",
                 (uint32_t)e);
        return 0;
    }
    weft_entity real = wf_cmds_resolved(cmds, e);
    if (!real) {
        wf_error(w, WEFT_ERR_STALE_ENTITY,
                 "weft_commands_resolve: provisional entity %u is not of this buffer's last "
                 "applied round (another buffer's, an older round's, or its spawn failed)",
                 (uint32_t)e);
    }
    return real;
}

/* Shared body of the entity commands. */
static weft_status cmd_record(weft_commands *cmds, wf_cmd_op op, uint8_t flags,
                              weft_entity e, weft_component c, const weft_value *values,
                              int32_t count, const char *fn)
{
    if (!cmds_ok(cmds)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_world *w = cmds->world;
    weft_status st = wf_values_check(w, values, count, fn);
    if (st != WEFT_OK) {
        return st;
    }
    if (op == WF_CMD_REMOVE) {
        const wf_type_info *ti = wf_registry_get(&w->registry, c);
        if (!ti) {
            return wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT,
                            "%s: component id %u is not registered in this world", fn, c);
        }
        if (wf_type_managed(ti)) {
            return wf_managed_refuse(w, ti, fn);
        }
    }
    if (op != WF_CMD_SPAWN && e == 0) {
        return wf_error(w, WEFT_ERR_INVALID_ENTITY, "%s: entity 0 is the null handle", fn);
    }
    return wf_cmds_record(w, cmds, op, flags, e, c, values, count, NULL);
}

WEFT_API weft_entity weft_cmd_spawn(weft_commands *cmds, const weft_value *values,
                                    int32_t count)
{
    if (!cmds_ok(cmds)) {
        return 0;
    }
    weft_world *w = cmds->world;
    if (wf_values_check(w, values, count, "weft_cmd_spawn") != WEFT_OK) {
        return 0;
    }
    weft_entity e = 0;
    wf_cmds_record(w, cmds, WF_CMD_SPAWN, 0, 0, 0, values, count, &e);
    return e;
}

/* One plain value (trivially copyable, alignment <= 8) or none: the short
 * path; anything else, and every misuse, takes cmd_record. */
static inline bool cmd_small_ok(const weft_commands *cmds, weft_entity e,
                                const wf_type_info *ti, size_t size)
{
    return e != 0 && ti && ti->size == size && ti->trivial && ti->align <= 8 &&
           cmds_ok(cmds);
}

WEFT_API weft_status weft_cmd_insert(weft_commands *cmds, weft_entity e, weft_component c,
                                     const void *value, size_t size)
{
    const wf_type_info *ti = cmds ? wf_registry_get(cmds->registry, c) : NULL;
    if (WF_LIKELY(cmd_small_ok(cmds, e, ti, size))) {
        return wf_cmds_record_small(cmds->world, cmds, WF_CMD_INSERT, 0, e, 0, ti, value);
    }
    weft_value v = {c, size, value};
    return cmd_record(cmds, WF_CMD_INSERT, 0, e, 0, &v, 1, "weft_cmd_insert");
}

WEFT_API weft_status weft_cmd_insert_many(weft_commands *cmds, weft_entity e,
                                          const weft_value *values, int32_t count)
{
    if (count == 0 && cmds_ok(cmds)) {
        return WEFT_OK;
    }
    return cmd_record(cmds, WF_CMD_INSERT, 0, e, 0, values, count, "weft_cmd_insert_many");
}

WEFT_API weft_status weft_cmd_remove(weft_commands *cmds, weft_entity e, weft_component c)
{
    const wf_type_info *ti = cmds_ok(cmds) ? wf_registry_get(cmds->registry, c) : NULL;
    if (WF_LIKELY(ti && e && !wf_type_managed(ti))) {
        return wf_cmds_record_small(cmds->world, cmds, WF_CMD_REMOVE, 0, e, c, NULL, NULL);
    }
    return cmd_record(cmds, WF_CMD_REMOVE, 0, e, c, NULL, 0, "weft_cmd_remove");
}

WEFT_API weft_status weft_cmd_despawn(weft_commands *cmds, weft_entity e)
{
    if (WF_LIKELY(cmds_ok(cmds) && e)) {
        return wf_cmds_record_small(cmds->world, cmds, WF_CMD_DESPAWN, 0, e, 0, NULL, NULL);
    }
    return cmd_record(cmds, WF_CMD_DESPAWN, 0, e, 0, NULL, 0, "weft_cmd_despawn");
}

WEFT_API weft_status weft_cmd_try_insert(weft_commands *cmds, weft_entity e,
                                         weft_component c, const void *value, size_t size)
{
    weft_value v = {c, size, value};
    return cmd_record(cmds, WF_CMD_INSERT, WF_CMD_TRY, e, 0, &v, 1, "weft_cmd_try_insert");
}

WEFT_API weft_status weft_cmd_try_remove(weft_commands *cmds, weft_entity e,
                                         weft_component c)
{
    return cmd_record(cmds, WF_CMD_REMOVE, WF_CMD_TRY, e, c, NULL, 0, "weft_cmd_try_remove");
}

WEFT_API weft_status weft_cmd_try_despawn(weft_commands *cmds, weft_entity e)
{
    return cmd_record(cmds, WF_CMD_DESPAWN, WF_CMD_TRY, e, 0, NULL, 0,
                      "weft_cmd_try_despawn");
}

WEFT_API weft_status weft_cmd_resource_insert(weft_commands *cmds, weft_component r,
                                              const void *value, size_t size)
{
    weft_value v = {r, size, value};
    if (!cmds_ok(cmds)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_status st = wf_values_check(cmds->world, &v, 1, "weft_cmd_resource_insert");
    return st != WEFT_OK ? st
                         : wf_cmds_record(cmds->world, cmds, WF_CMD_RES_INSERT, 0, 0, 0, &v,
                                          1, NULL);
}

WEFT_API weft_status weft_cmd_resource_remove(weft_commands *cmds, weft_component r)
{
    if (!cmds_ok(cmds)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!wf_registry_get(&cmds->world->registry, r)) {
        return wf_error(cmds->world, WEFT_ERR_UNKNOWN_COMPONENT,
                        "weft_cmd_resource_remove: component id %u is not registered", r);
    }
    return wf_cmds_record(cmds->world, cmds, WF_CMD_RES_REMOVE, 0, 0, r, NULL, 0, NULL);
}

WEFT_API weft_status weft_cmd_custom(weft_commands *cmds, weft_command_fn fn,
                                     const void *payload, size_t size,
                                     weft_command_drop_fn drop, void *user)
{
    if (!cmds_ok(cmds)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_world *w = cmds->world;
    if (!fn || (size && !payload)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "weft_cmd_custom: fn is NULL or payload "
                        "missing");
    }
    if (size > WF_CMD_PAYLOAD_MAX) {
        return wf_error(w, WEFT_ERR_CAPACITY,
                        "weft_cmd_custom: a payload of %zu bytes exceeds the limit of %u bytes",
                        size, (unsigned)WF_CMD_PAYLOAD_MAX);
    }
    if (cmds->gen > WEFT_MAX_EVENT_DEPTH) {
        return wf_error(w, WEFT_ERR_DEPTH_LIMIT,
                        "weft_cmd_custom: commands cascaded for more than %u rounds",
                        WEFT_MAX_EVENT_DEPTH);
    }
    if (!wf_cmds_push_custom(cmds, fn, payload, size, drop, user)) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory recording a command");
    }
    return WEFT_OK;
}

WEFT_API weft_status weft_commands_apply(weft_world *world, weft_commands *cmds)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_commands_apply")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    if (!cmds || cmds->world != world) {
        return wf_error(world, WEFT_ERR_INVALID_HANDLE,
                        "weft_commands_apply: the buffer is NULL or belongs to another world");
    }
    if (world->iter_depth || cmds->applying || world->settling) {
        return wf_error(world, WEFT_ERR_WRONG_PHASE,
                        "weft_commands_apply: not allowed inside a hook, observer, query "
                        "iteration or another apply");
    }
    if (cmds == &world->cmds) {
        world->settling = true;
        weft_status st = wf_cmds_apply(world, cmds);
        world->settling = false;
        wf_world_settle(world);
        return st;
    }
    weft_status st = wf_cmds_apply(world, cmds);
    wf_world_settle(world);
    return st;
}

/* src/api/api_reflect.c - type descriptions, field paths, snapshots.
 * SPDX-License-Identifier: MIT
 *
 * Armor (world handle, ids, phase), then one call into src/reflect/.
 */
#include "internal.h"
#include "module/module.h"
#include "reflect/reflect.h"
#include "schedule/schedule.h"
#include "world/inspect.h"
#include "world/messages.h"

WEFT_API weft_status weft_component_describe(weft_world *world, weft_component c,
                                             const weft_type_desc *desc)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!desc) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_component_describe: desc is NULL");
    }
    const wf_type_info *ti = wf_registry_get(&world->registry, c);
    if (!ti) {
        return wf_error(world, WEFT_ERR_UNKNOWN_COMPONENT,
                        "weft_component_describe: component id %u is not registered", c);
    }
    if (ti->size == 0) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_component_describe: '%s' is a tag and has no fields", ti->name);
    }
    if (ti->rel_source) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_component_describe: '%s' is a relationship's source list, "
                        "kept by weft",
                        ti->name);
    }
    weft_status again;
    if (world->module_build && wf_module_describe(world, c, desc, &again)) {
        return again; /* a module's component declared again: for the commit */
    }
    if (wf_reflect_component(world, c)) {
        return wf_error(world, WEFT_ERR_ALREADY_EXISTS, "component '%s' is already described",
                        ti->name);
    }
    weft_status st;
    wf_rdesc *d = wf_rdesc_compile(world, desc, ti->size, ti->align, ti->name, &st);
    if (!d) {
        return st;
    }
    if (!wf_reflect_install(world, false, c, d)) {
        return wf_error(world, WEFT_ERR_OUT_OF_MEMORY, "out of memory describing '%s'",
                        ti->name);
    }
    return WEFT_OK;
}

WEFT_API weft_status weft_component_migration_defaults(weft_world *world, weft_component c,
                                                       const void *value, size_t size)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!value) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_component_migration_defaults: value is NULL");
    }
    if (!world->module_build) {
        return wf_error(world, WEFT_ERR_WRONG_PHASE,
                        "weft_component_migration_defaults: only inside a reloadable "
                        "module's build");
    }
    return wf_module_defaults(world, c, value, size);
}

WEFT_API weft_status weft_message_describe(weft_world *world, weft_message_type type,
                                           const weft_type_desc *desc)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!desc) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_message_describe: desc is NULL");
    }
    const wf_msg_stream *s = wf_messages_type(world, type);
    if (!s) {
        return wf_error(world, WEFT_ERR_NOT_FOUND,
                        "weft_message_describe: message type %u is not registered", type);
    }
    if (wf_reflect_message(world, type)) {
        return wf_error(world, WEFT_ERR_ALREADY_EXISTS,
                        "message type '%s' is already described", s->name);
    }
    weft_status st;
    wf_rdesc *d = wf_rdesc_compile(world, desc, (uint32_t)s->size, (uint32_t)s->align,
                                   s->name, &st);
    if (!d) {
        return st;
    }
    if (!wf_reflect_install(world, true, type, d)) {
        return wf_error(world, WEFT_ERR_OUT_OF_MEMORY, "out of memory describing '%s'",
                        s->name);
    }
    return WEFT_OK;
}

WEFT_API bool weft_component_is_described(const weft_world *world, weft_component c)
{
    return wf_world_ok(world) && wf_reflect_component(world, c) != NULL;
}

WEFT_API const char *weft_kind_name(weft_kind kind)
{
    return wf_kind_name(kind);
}

WEFT_API weft_status weft_field_get(const weft_world *world, weft_entity e, weft_component c,
                                    const char *path, weft_kind kind, void *out, size_t size)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_field_get(world, e, c, path, kind, out, size);
}

WEFT_API weft_status weft_field_set(weft_world *world, weft_entity e, weft_component c,
                                    const char *path, weft_kind kind, const void *value,
                                    size_t size)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_field_set(world, e, c, path, kind, value, size);
}

WEFT_API weft_status weft_snapshot_write(weft_world *world, void *buf, size_t cap,
                                         size_t *out_len)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out_len) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_snapshot_write: out_len is NULL");
    }
    *out_len = 0; /* what any error other than CAPACITY leaves */
    return wf_snapshot_write(world, buf, cap, out_len);
}

WEFT_API weft_status weft_snapshot_restore(weft_world *world, const void *data, size_t len)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!data) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_snapshot_restore: data is NULL");
    }
    weft_status st = wf_snapshot_restore(world, data, len);
#ifndef NDEBUG
    /* The restore validated the blob's meaning before changing anything:
     * a restored world failing weft_world_check is weft's bug, so a debug
     * build stops there (the fuzzers run debug builds). */
    if (st == WEFT_OK && wf_world_check(world) != WEFT_OK) {
        wf_assert_fail(world->last_error, __FILE__, __LINE__);
    }
#endif
    return st;
}

WEFT_API weft_status weft_snapshot_delta_write(weft_world *world, uint32_t since, void *buf,
                                               size_t cap, size_t *out_len)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out_len) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_snapshot_delta_write: out_len is NULL");
    }
    *out_len = 0; /* what any error other than CAPACITY leaves */
    return wf_snapshot_delta_write(world, since, buf, cap, out_len);
}

WEFT_API weft_status weft_snapshot_write_ex(weft_world *world,
                                            const weft_snapshot_options *options, void *buf,
                                            size_t cap, size_t *out_len)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out_len) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_snapshot_write_ex: out_len is NULL");
    }
    *out_len = 0; /* what any error other than CAPACITY leaves */
    weft_snapshot_options o;
    memset(&o, 0, sizeof o);
    if (options) {
        o = *options;
    }
    if (o._start_canary || o._end_canary) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_snapshot_write_ex: options canary set (zero-initialize them)");
    }
    if (o.flags & ~(uint32_t)(WEFT_SNAPSHOT_DELTA | WEFT_SNAPSHOT_ZSTD)) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_snapshot_write_ex: unknown flag bits 0x%x", o.flags);
    }
    if (o.zstd_level < 0 || o.zstd_level > 19) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_snapshot_write_ex: zstd level %d is not in 0..19", o.zstd_level);
    }
    return wf_snapshot_write_ex(world, (o.flags & WEFT_SNAPSHOT_DELTA) != 0, o.since,
                                (o.flags & WEFT_SNAPSHOT_ZSTD) != 0,
                                o.zstd_level ? o.zstd_level : 3, buf, cap, out_len);
}

WEFT_API bool weft_snapshot_zstd_available(void)
{
    return wf_zstd_available();
}

WEFT_API weft_status weft_snapshot_track(weft_world *world, bool on)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (world->sys && world->sys->depth) {
        return wf_error(world, WEFT_ERR_WRONG_PHASE,
                        "weft_snapshot_track: not while a schedule is running");
    }
    if (on) {
        wf_journal_start(world);
    } else {
        wf_journal_stop(world);
    }
    return WEFT_OK;
}

WEFT_API weft_status weft_snapshot_merge(weft_world *world, const void *base, size_t base_len,
                                         const void *delta, size_t delta_len, void *buf,
                                         size_t cap, size_t *out_len)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!base || !delta || !out_len) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_snapshot_merge: base, delta or out_len is NULL");
    }
    *out_len = 0; /* what any error other than CAPACITY leaves */
    return wf_snapshot_merge(world, base, base_len, delta, delta_len, buf, cap, out_len);
}

/* ---- JSON ---- */

WEFT_API weft_status weft_json_write_component(const weft_world *world, weft_entity e,
                                               weft_component c, char *buf, size_t cap,
                                               size_t *out_len)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out_len) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_json_write_component: out_len is NULL");
    }
    *out_len = 0; /* what any error other than CAPACITY leaves */
    return wf_json_write_component(world, e, c, buf, cap, out_len);
}

WEFT_API weft_status weft_json_write_entity(const weft_world *world, weft_entity e, char *buf,
                                            size_t cap, size_t *out_len)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out_len) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_json_write_entity: out_len is NULL");
    }
    *out_len = 0; /* what any error other than CAPACITY leaves */
    return wf_json_write_entity(world, e, buf, cap, out_len);
}

WEFT_API weft_status weft_json_write_query(weft_world *world, weft_query *query, char *buf,
                                           size_t cap, size_t *out_len)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!query || query->world != world || !out_len) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_json_write_query: query or out_len is NULL or of another world");
    }
    *out_len = 0; /* what any error other than CAPACITY leaves */
    if (query->iterating) {
        return wf_error(world, WEFT_ERR_WRONG_PHASE,
                        "weft_json_write_query: the query is being iterated");
    }
    return wf_json_write_query(world, query, buf, cap, out_len);
}

WEFT_API weft_status weft_json_read_component(weft_world *world, weft_entity e,
                                              weft_component c, const char *text, size_t len)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!text) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_json_read_component: text is NULL");
    }
    return wf_json_read_component(world, e, c, text, len);
}

WEFT_API weft_status weft_json_read_entity(weft_world *world, weft_entity e, const char *text,
                                           size_t len)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!text) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_json_read_entity: text is NULL");
    }
    return wf_json_read_entity(world, e, text, len);
}

WEFT_API weft_entity weft_json_spawn(weft_world *world, const char *text, size_t len)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    if (!text) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_json_spawn: text is NULL");
        return 0;
    }
    weft_entity e = 0;
    return wf_json_spawn(world, text, len, &e) == WEFT_OK ? e : 0;
}

WEFT_API weft_status weft_json_write_resource(const weft_world *world, weft_component r,
                                              char *buf, size_t cap, size_t *out_len)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out_len) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_json_write_resource: out_len is NULL");
    }
    *out_len = 0; /* what any error other than CAPACITY leaves */
    return wf_json_write_resource(world, r, buf, cap, out_len);
}

WEFT_API weft_status weft_json_read_resource(weft_world *world, weft_component r,
                                             const char *text, size_t len)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_json_read_resource")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    if (!text) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_json_read_resource: text is NULL");
    }
    return wf_json_read_resource(world, r, text, len);
}

/* ---- scenes and cloning ---- */

static weft_status scene_phase(weft_world *w, const char *fn)
{
    if (w->iter_depth || w->settling) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "%s: not while iterating or in a hook", fn);
    }
    return WEFT_OK;
}

WEFT_API weft_scene *weft_scene_from_query(weft_world *world, weft_query *query)
{
    if (!wf_world_ok(world)) {
        return NULL;
    }
    if (!query || query->world != world) {
        wf_error(world, WEFT_ERR_INVALID_ARG,
                 "weft_scene_from_query: query is NULL or of another world");
        return NULL;
    }
    if (query->iterating || scene_phase(world, "weft_scene_from_query") != WEFT_OK) {
        wf_error(world, WEFT_ERR_WRONG_PHASE,
                 "weft_scene_from_query: not while iterating or in a hook");
        return NULL;
    }
    return wf_scene_from_query(world, query);
}

WEFT_API weft_scene *weft_scene_from_tree(weft_world *world, weft_entity root)
{
    if (!wf_world_ok(world)) {
        return NULL;
    }
    wf_record *rec;
    if (wf_entity_check(world, root, &rec) != WEFT_OK) {
        return NULL;
    }
    return wf_scene_from_tree(world, root, true);
}

WEFT_API int32_t weft_scene_count(const weft_scene *scene)
{
    return scene ? (int32_t)wf_scene_count(scene) : 0;
}

WEFT_API weft_status weft_scene_spawn(weft_world *world, const weft_scene *scene,
                                      weft_entity *out, int32_t out_cap)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!scene || wf_scene_world(scene) != world || out_cap < 0) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_scene_spawn: scene NULL or of another world, or out_cap < 0");
    }
    return wf_scene_spawn(world, scene, out, (uint32_t)out_cap);
}

WEFT_API weft_status weft_scene_destroy(weft_world *world, weft_scene *scene)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!scene) {
        return WEFT_OK;
    }
    if (wf_scene_world(scene) != world) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_scene_destroy: the scene belongs to another world");
    }
    wf_scene_destroy(world, scene);
    return WEFT_OK;
}

WEFT_API weft_entity weft_clone(weft_world *world, weft_entity e, bool recursive)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    wf_record *rec;
    if (wf_entity_check(world, e, &rec) != WEFT_OK ||
        scene_phase(world, "weft_clone") != WEFT_OK) {
        return 0;
    }
    weft_scene *s = wf_scene_from_tree(world, e, recursive);
    if (!s) {
        return 0;
    }
    weft_entity first = 0;
    weft_status st = wf_scene_spawn(world, s, &first, 1);
    wf_scene_destroy(world, s);
    return st == WEFT_OK ? first : 0;
}

WEFT_API weft_status weft_json_write_schema(const weft_world *world, weft_component c, char *buf,
                                            size_t cap, size_t *out_len)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out_len) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_json_write_schema: out_len is NULL");
    }
    *out_len = 0; /* what any error other than CAPACITY leaves */
    return wf_json_write_schema(world, c, buf, cap, out_len);
}

WEFT_API weft_status weft_snapshot_set_limit(weft_world *world, uint64_t max_bytes)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    world->snapshot_max = max_bytes;
    return WEFT_OK;
}

WEFT_API uint64_t weft_snapshot_limit(const weft_world *world)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    return world->snapshot_max ? world->snapshot_max : WF_SNAPSHOT_MAX_DEFAULT;
}

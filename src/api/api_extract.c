/* src/api/api_extract.c - extract system entry points: adding them, their
 * main-world parameters, the three extraction forms, instance maps.
 * SPDX-License-Identifier: MIT
 *
 * Argument and phase checks, then one call into src/app/extract.c, where
 * extract systems and the forms live.
 */
#include "app/subapp.h"

#include <string.h>

/* The record of a sub-app argument that may change (no update, no
 * pipelined frame in flight), or NULL (error recorded in its world). */
static wf_sub *sub_of(weft_app *sub, const char *fn)
{
    if (!wf_app_ok(sub)) {
        return NULL;
    }
    wf_sub *s = wf_sub_of(sub);
    if (!s) {
        wf_error(sub->world, WEFT_ERR_INVALID_ARG, "%s: the app is no sub-app", fn);
        return NULL;
    }
    if (s->parent->updating) {
        wf_error(sub->world, WEFT_ERR_WRONG_PHASE, "%s: called during an update", fn);
        return NULL;
    }
    if (wf_sub_busy(s)) {
        /* the record's thread may hold a frame: no schedule may change */
        wf_error(sub->world, WEFT_ERR_WRONG_PHASE,
                 "%s: a pipelined frame is in flight (weft_sub_app_wait first)", fn);
        return NULL;
    }
    return s;
}

WEFT_API weft_node weft_sub_app_add_extract(weft_app *sub, const weft_extract_desc *desc)
{
    const char *fn = "weft_sub_app_add_extract";
    wf_sub *s = sub_of(sub, fn);
    if (!s) {
        return 0;
    }
    if (!desc) {
        wf_error(sub->world, WEFT_ERR_INVALID_ARG, "%s: desc is NULL", fn);
        return 0;
    }
    if (!desc->system.fn) {
        wf_error(sub->world, WEFT_ERR_INVALID_ARG, "%s: desc->system.fn is NULL", fn);
        return 0;
    }
    return wf_extract_add_user(s, desc, fn);
}

/* ---- the main-world parameters ---- */

WEFT_API const weft_world *weft_extract_main(weft_system_ctx *ctx)
{
    wf_extract *x = wf_extract_current(ctx, "weft_extract_main");
    return x ? x->sub->parent->world : NULL;
}

WEFT_API weft_status weft_extract_iter(weft_system_ctx *ctx, int32_t query, weft_iter *it)
{
    if (!ctx) {
        return WEFT_ERR_INVALID_ARG;
    }
    wf_extract *x = wf_extract_current(ctx, "weft_extract_iter");
    if (!x) {
        if (it) {
            memset(it, 0, sizeof *it);
        }
        return WEFT_ERR_WRONG_PHASE;
    }
    if (!it || query < 0 || query >= x->nmq) {
        if (it) {
            memset(it, 0, sizeof *it);
        }
        return wf_error(ctx->world, WEFT_ERR_INVALID_ARG,
                        "weft_extract_iter: it NULL or main query %d out of range 0..%d", query,
                        x->nmq - 1);
    }
    return wf_extract_iter(ctx, x, query, it);
}

WEFT_API const void *weft_extract_resource(weft_system_ctx *ctx, weft_component r, size_t size)
{
    wf_extract *x = wf_extract_current(ctx, "weft_extract_resource");
    return x ? wf_extract_resource_get(ctx, x, r, size) : NULL;
}

WEFT_API bool weft_extract_resource_changed(weft_system_ctx *ctx, weft_component r)
{
    wf_extract *x = wf_extract_current(ctx, "weft_extract_resource_changed");
    return x && wf_extract_resource_changed(ctx, x, r);
}

WEFT_API const void *weft_extract_message_read(weft_system_ctx *ctx, weft_message_type type,
                                               size_t size)
{
    wf_extract *x = wf_extract_current(ctx, "weft_extract_message_read");
    return x ? wf_extract_message_read(ctx, x, type, size) : NULL;
}

WEFT_API weft_entity weft_extract_sub_entity(weft_system_ctx *ctx, weft_entity main_e)
{
    wf_extract *x = wf_extract_current(ctx, "weft_extract_sub_entity");
    if (!x) {
        return 0;
    }
    return wf_sub_map(x->sub, main_e, ctx->world, "weft_extract_sub_entity");
}

/* ---- the forms ---- */

WEFT_API weft_node weft_sub_app_extract_component(weft_app *sub,
                                                  const weft_extract_component_desc *desc)
{
    const char *fn = "weft_sub_app_extract_component";
    wf_sub *s = sub_of(sub, fn);
    if (!s) {
        return 0;
    }
    if (!desc || desc->_start_canary || desc->_end_canary) {
        wf_error(sub->world, WEFT_ERR_INVALID_ARG, "%s: desc NULL or canary not 0", fn);
        return 0;
    }
    return wf_extract_add_component(s, desc, fn);
}

WEFT_API weft_node weft_sub_app_extract_resource(weft_app *sub,
                                                 const weft_extract_resource_desc *desc)
{
    const char *fn = "weft_sub_app_extract_resource";
    wf_sub *s = sub_of(sub, fn);
    if (!s) {
        return 0;
    }
    if (!desc || desc->_start_canary || desc->_end_canary) {
        wf_error(sub->world, WEFT_ERR_INVALID_ARG, "%s: desc NULL or canary not 0", fn);
        return 0;
    }
    return wf_extract_add_resource(s, desc, fn);
}

WEFT_API weft_component weft_sub_app_extract_instances(weft_app *sub,
                                                       const weft_extract_instances_desc *desc)
{
    const char *fn = "weft_sub_app_extract_instances";
    wf_sub *s = sub_of(sub, fn);
    if (!s) {
        return 0;
    }
    if (!desc || desc->_start_canary || desc->_end_canary || !desc->map_name ||
        !desc->map_name[0] || desc->instance_size == 0) {
        wf_error(sub->world, WEFT_ERR_INVALID_ARG,
                 "%s: desc NULL, canary not 0, no map_name or instance_size 0", fn);
        return 0;
    }
    return wf_extract_add_instances(s, desc, fn);
}

WEFT_API const void *weft_instance_map_get(const weft_instance_map *map, weft_entity main_e)
{
    if (!map || map->count <= 0 || !map->keys) {
        return NULL;
    }
    uint32_t lo = 0;
    uint32_t hi = (uint32_t)map->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (map->keys[mid] < main_e) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < (uint32_t)map->count && map->keys[lo] == main_e) {
        return (const unsigned char *)map->values + (size_t)lo * map->instance_size;
    }
    return NULL;
}

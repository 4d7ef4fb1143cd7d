/* src/api/api_resource.c - resources: singletons keyed by component id.
 * SPDX-License-Identifier: MIT
 *
 * A resource value lives in its own allocation hanging off the component's
 * registry entry, with its own added/changed ticks.
 */
#include "internal.h"

static wf_type_info *resource_info(const weft_world *w, weft_component r, const char *fn)
{
    wf_type_info *ti = wf_registry_get(&w->registry, r);
    if (!ti) {
        wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT,
                 "%s: resource id %u is not a registered component", fn, r);
    }
    return ti;
}

static bool resource_size_ok(const weft_world *w, const wf_type_info *ti, size_t size,
                             const char *fn)
{
    if (size != ti->size) {
        wf_error(w, WEFT_ERR_SIZE_MISMATCH,
                 "%s: resource '%s' has size %u but %zu bytes were passed", fn, ti->name,
                 ti->size, size);
        return false;
    }
    return true;
}

WEFT_API weft_status weft_resource_insert(weft_world *world, weft_component r,
                                          const void *value, size_t size)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_resource_insert")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    wf_type_info *ti = resource_info(world, r, "weft_resource_insert");
    if (!ti) {
        return WEFT_ERR_UNKNOWN_COMPONENT;
    }
    if (!resource_size_ok(world, ti, size, "weft_resource_insert")) {
        return WEFT_ERR_SIZE_MISMATCH;
    }
    if (wf_type_managed(ti)) {
        return wf_managed_refuse(world, ti, "weft_resource_insert");
    }
    return wf_resource_insert(world, ti, value);
}

WEFT_API weft_status weft_resource_remove(weft_world *world, weft_component r)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_resource_remove")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    wf_type_info *ti = resource_info(world, r, "weft_resource_remove");
    if (!ti) {
        return WEFT_ERR_UNKNOWN_COMPONENT;
    }
    wf_resource_remove(world, ti);
    return WEFT_OK;
}

WEFT_API bool weft_resource_has(const weft_world *world, weft_component r)
{
    if (!wf_world_ok(world)) {
        return false;
    }
    const wf_type_info *ti = wf_registry_get(&world->registry, r);
    return ti && ti->res_present;
}

static void *resource_get(const weft_world *w, weft_component r, size_t size, bool mut)
{
    const char *fn = mut ? "weft_resource_get_mut" : "weft_resource_get";
    wf_type_info *ti = resource_info(w, r, fn);
    if (!ti || !resource_size_ok(w, ti, size, fn)) {
        return NULL;
    }
    if (ti->size == 0) {
        wf_error(w, WEFT_ERR_INVALID_ARG,
                 "%s: '%s' is a tag and has no value; use weft_resource_has", fn, ti->name);
        return NULL;
    }
    if (!ti->res_present) {
        return NULL;
    }
    if (mut) {
        if (ti->flags & WEFT_COMPONENT_IMMUTABLE) {
            wf_error(w, WEFT_ERR_IMMUTABLE,
                     "%s: resource '%s' is immutable (re-insert it instead)", fn, ti->name);
            return NULL;
        }
        ti->res_ticks.changed = w->change_tick;
    }
    return ti->res_value;
}

WEFT_API const void *weft_resource_get(const weft_world *world, weft_component r,
                                       size_t size)
{
    return wf_world_ok(world) ? resource_get(world, r, size, false) : NULL;
}

WEFT_API void *weft_resource_get_mut(weft_world *world, weft_component r, size_t size)
{
    if (!wf_world_ok(world) || wf_world_refuse_shared(world, "weft_resource_get_mut")) {
        return NULL;
    }
    return resource_get(world, r, size, true);
}

WEFT_API weft_status weft_resource_get_ticks(const weft_world *world, weft_component r,
                                             weft_ticks *out)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_resource_get_ticks: out is NULL");
    }
    const wf_type_info *ti = resource_info(world, r, "weft_resource_get_ticks");
    if (!ti) {
        return WEFT_ERR_UNKNOWN_COMPONENT;
    }
    if (!ti->res_present) {
        return wf_error(world, WEFT_ERR_NOT_FOUND, "resource '%s' is not present", ti->name);
    }
    *out = ti->res_ticks;
    return WEFT_OK;
}

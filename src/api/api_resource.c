/* src/api/api_resource.c - resources: singletons keyed by component id.
 * SPDX-License-Identifier: MIT
 *
 * A resource value lives in its own allocation hanging off the component's
 * registry entry, with its own added/changed ticks (world/resource.c, which
 * also holds the checks internal code shares).
 */
#include "internal.h"

WEFT_API weft_status weft_resource_insert(weft_world *world, weft_component r,
                                          const void *value, size_t size)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_resource_set(world, r, value, size, "weft_resource_insert");
}

WEFT_API weft_status weft_resource_remove(weft_world *world, weft_component r)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_resource_unset(world, r, "weft_resource_remove");
}

WEFT_API bool weft_resource_has(const weft_world *world, weft_component r)
{
    return wf_world_ok(world) && wf_resource_has(world, r);
}

WEFT_API const void *weft_resource_get(const weft_world *world, weft_component r,
                                       size_t size)
{
    return wf_world_ok(world) ? wf_resource_value(world, r, size, false) : NULL;
}

WEFT_API void *weft_resource_get_mut(weft_world *world, weft_component r, size_t size)
{
    if (!wf_world_ok(world) || wf_world_refuse_shared(world, "weft_resource_get_mut")) {
        return NULL;
    }
    return wf_resource_value(world, r, size, true);
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
    return wf_resource_ticks(world, r, out, "weft_resource_get_ticks");
}

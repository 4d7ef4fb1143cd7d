/* src/world/resource.c - resource insert and remove, and the resource
 * operations behind the public entry points (phase, id and size checks).
 * SPDX-License-Identifier: MIT
 */
#include "world/resource.h"

weft_status wf_resource_insert(weft_world *w, wf_type_info *ti, const void *value)
{
    uint32_t tick = w->change_tick;
    if (ti->res_present) {
        if (ti->res_value) {
            wf_type_destroy(ti, ti->res_value, 1);
            wf_type_construct(ti, ti->res_value, value, 1);
        }
        ti->res_ticks.changed = tick;
        return WEFT_OK;
    }
    if (ti->size) {
        ti->res_value = wf_alloc(&w->alloc, ti->size, ti->align);
        if (!ti->res_value) {
            return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory inserting resource '%s'",
                            ti->name);
        }
        wf_type_construct(ti, ti->res_value, value, 1);
    }
    ti->res_present = true;
    ti->res_ticks.added = tick;
    ti->res_ticks.changed = tick;
    w->registry.resources++;
    return WEFT_OK;
}

void wf_resource_remove(weft_world *w, wf_type_info *ti)
{
    if (!ti->res_present) {
        return;
    }
    if (ti->res_value) {
        wf_type_destroy(ti, ti->res_value, 1);
        wf_free(&w->alloc, ti->res_value, ti->size, ti->align);
        ti->res_value = NULL;
    }
    ti->res_present = false;
    w->registry.resources--;
}

/* The registry entry of resource id r, or NULL (UNKNOWN_COMPONENT recorded
 * naming fn). */
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

weft_status wf_resource_set(weft_world *w, weft_component r, const void *value, size_t size,
                            const char *fn)
{
    if (wf_world_refuse_shared(w, fn)) {
        return WEFT_ERR_WRONG_PHASE;
    }
    wf_type_info *ti = resource_info(w, r, fn);
    if (!ti) {
        return WEFT_ERR_UNKNOWN_COMPONENT;
    }
    if (!resource_size_ok(w, ti, size, fn)) {
        return WEFT_ERR_SIZE_MISMATCH;
    }
    if (wf_type_managed(ti)) {
        return wf_managed_refuse(w, ti, fn);
    }
    return wf_resource_insert(w, ti, value);
}

weft_status wf_resource_unset(weft_world *w, weft_component r, const char *fn)
{
    if (wf_world_refuse_shared(w, fn)) {
        return WEFT_ERR_WRONG_PHASE;
    }
    wf_type_info *ti = resource_info(w, r, fn);
    if (!ti) {
        return WEFT_ERR_UNKNOWN_COMPONENT;
    }
    wf_resource_remove(w, ti);
    return WEFT_OK;
}

void *wf_resource_value(const weft_world *w, weft_component r, size_t size, bool mut)
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

weft_status wf_resource_ticks(const weft_world *w, weft_component r, weft_ticks *out,
                              const char *fn)
{
    const wf_type_info *ti = resource_info(w, r, fn);
    if (!ti) {
        return WEFT_ERR_UNKNOWN_COMPONENT;
    }
    if (!ti->res_present) {
        return wf_error(w, WEFT_ERR_NOT_FOUND, "resource '%s' is not present", ti->name);
    }
    *out = ti->res_ticks;
    return WEFT_OK;
}

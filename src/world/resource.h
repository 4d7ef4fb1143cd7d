/* src/world/resource.h - resource insert and remove, and the resource
 * operations behind the public entry points.
 * SPDX-License-Identifier: MIT
 *
 * A resource is the value of a registered component id held by the world
 * itself, in its own allocation hanging off the registry entry, with its
 * own added/changed ticks. Driver thread only.
 */
#ifndef WF_RESOURCE_H
#define WF_RESOURCE_H

#include "world/world.h"

/* Inserts or replaces (value copied; NULL = default). */
weft_status wf_resource_insert(weft_world *w, wf_type_info *ti, const void *value);
/* Removes (no-op when absent). */
void wf_resource_remove(weft_world *w, wf_type_info *ti);

/* What weft_resource_insert, _remove, _get(_mut), _get_ticks and _has do
 * once the world handle is checked: phase (a shared world refuses
 * changes), id and size checks, errors recorded naming `fn`. */
weft_status wf_resource_set(weft_world *w, weft_component r, const void *value, size_t size,
                            const char *fn);
weft_status wf_resource_unset(weft_world *w, weft_component r, const char *fn);
/* The value (size bytes), or NULL: absent (nothing recorded), or misuse
 * (recorded). `mut` marks it changed (the caller holds a mutable world). */
void *wf_resource_value(const weft_world *w, weft_component r, size_t size, bool mut);
/* Its added/changed ticks; NOT_FOUND when absent. */
weft_status wf_resource_ticks(const weft_world *w, weft_component r, weft_ticks *out,
                              const char *fn);

static inline bool wf_resource_has(const weft_world *w, weft_component r)
{
    const wf_type_info *ti = wf_registry_get(&w->registry, r);
    return ti && ti->res_present;
}

#endif

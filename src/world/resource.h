/* src/world/resource.h - resource insert and remove.
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

#endif

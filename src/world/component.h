/* src/world/component.h - component registration and lookup behind the
 * public entry points.
 * SPDX-License-Identifier: MIT
 *
 * weft_component_register checks its descriptor (and, in a reloadable
 * module's build, lets the module declare its components again); what
 * follows, shared with internal code that registers components of its own
 * (sub-apps, the Disabled tag), is here. Driver thread only.
 */
#ifndef WF_COMPONENT_H
#define WF_COMPONENT_H

#include "world/world.h"

/* Registers a component from a checked descriptor (name set, storage,
 * flags, size and alignment valid; align 0 takes the default): refuses a
 * shared world, a name already registered, a full registry or invalid
 * requirements. Returns the id, or 0 with the error recorded. */
weft_component wf_component_register(weft_world *w, const weft_component_desc *desc);

/* Registry entry of component c, or NULL with UNKNOWN_COMPONENT recorded
 * (weft_component_info_get's message). */
const wf_type_info *wf_component_known(const weft_world *w, weft_component c);

#endif

/* src/world/resource.c - resource insert and remove.
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

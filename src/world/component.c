/* src/world/component.c - component registration past the descriptor
 * checks (see component.h).
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"
#include "world/component.h"

weft_component wf_component_register(weft_world *w, const weft_component_desc *desc)
{
    if (wf_world_refuse_shared(w, "weft_component_register")) {
        return 0;
    }
    const char *name = desc->name;
    size_t align = desc->align ? desc->align : wf_default_align(desc->size);
    if (wf_registry_lookup(&w->registry, name)) {
        wf_error(w, WEFT_ERR_ALREADY_EXISTS, "component '%s' is already registered (id %u)",
                 name, wf_registry_lookup(&w->registry, name));
        return 0;
    }
    if (w->registry.count >= WF_MAX_COMPONENTS) {
        wf_error(w, WEFT_ERR_CAPACITY, "component '%s': the world already has %u "
                 "components (the limit)", name, WF_MAX_COMPONENTS);
        return 0;
    }
    if (wf_require_check(w, 0, name, desc->required, desc->required_count) != WEFT_OK) {
        return 0;
    }
    weft_storage storage =
        desc->storage == WEFT_STORAGE_SPARSE ? WEFT_STORAGE_SPARSE : WEFT_STORAGE_TABLE;
    wf_sparse_set *sparse = NULL;
    wf_type_info *ti = wf_registry_add(&w->registry, &w->alloc, desc, (uint32_t)desc->size,
                                       (uint32_t)align, storage);
    if (!ti) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory registering component '%s'", name);
        return 0;
    }
    if (storage == WEFT_STORAGE_SPARSE) {
        sparse = wf_sparse_create(&w->alloc, ti);
        if (!sparse) {
            wf_registry_pop(&w->registry, &w->alloc);
            wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory registering component '%s'",
                     name);
            return 0;
        }
        ti->sparse = sparse;
    }
    if (desc->required_count > 0 &&
        wf_require_add(w, ti, desc->required, desc->required_count) != WEFT_OK) {
        wf_sparse_destroy(ti->sparse, &w->alloc);
        ti->sparse = NULL;
        wf_registry_pop(&w->registry, &w->alloc);
        return 0;
    }
    return ti->id;
}

const wf_type_info *wf_component_known(const weft_world *w, weft_component c)
{
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (!ti) {
        wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT, "component id %u is not registered in this world",
                 c);
    }
    return ti;
}

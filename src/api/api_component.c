/* src/api/api_component.c - component registration and lookup.
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"
#include "module/module.h"
#include "world/component.h"

#include <string.h>

#define WF_KNOWN_COMPONENT_FLAGS                                               \
    (WEFT_COMPONENT_IMMUTABLE | WEFT_COMPONENT_MAIN_THREAD |                   \
     WEFT_COMPONENT_NO_CHANGE_TICKS)

WEFT_API weft_component weft_component_register(weft_world *world,
                                                const weft_component_desc *desc)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    if (wf_world_refuse_shared(world, "weft_component_register")) {
        return 0;
    }
    if (!desc) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_component_register: desc is NULL");
        return 0;
    }
    if (desc->_start_canary || desc->_end_canary) {
        wf_error(world, WEFT_ERR_INVALID_ARG,
                 "weft_component_register: descriptor canary is not 0 (was the desc "
                 "zero-initialised?)");
        return 0;
    }
    if (world->module_build &&
        (desc->hooks.ctor || desc->hooks.dtor || desc->hooks.move || desc->hooks.copy)) {
        wf_error(world, WEFT_ERR_UNSUPPORTED,
                 "weft_component_register: component '%s' with type hooks (ctor, dtor, move, "
                 "copy) registered from a reloadable module's build; its values outlive the "
                 "module's code, so register it in the host (lifecycle hooks are fine)",
                 desc->name ? desc->name : "");
        return 0;
    }
    if (!desc->name || !desc->name[0]) {
        wf_error(world, WEFT_ERR_INVALID_ARG,
                 "weft_component_register: a component needs a non-empty name");
        return 0;
    }
    const char *name = desc->name;
    if ((unsigned)desc->storage >= (unsigned)WEFT_STORAGE_NUM) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "component '%s': unknown storage %u", name,
                 (unsigned)desc->storage);
        return 0;
    }
    if (desc->flags & ~(uint32_t)WF_KNOWN_COMPONENT_FLAGS) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "component '%s': unknown flag bits 0x%x",
                 name, desc->flags & ~(uint32_t)WF_KNOWN_COMPONENT_FLAGS);
        return 0;
    }
    if (desc->size > WF_MAX_COMPONENT_SIZE) {
        wf_error(world, WEFT_ERR_INVALID_ARG,
                 "component '%s': size %zu exceeds the limit of %u bytes", name, desc->size,
                 WF_MAX_COMPONENT_SIZE);
        return 0;
    }
    size_t align = desc->align ? desc->align : wf_default_align(desc->size);
    if ((align & (align - 1)) != 0 || align > WF_MAX_ALIGN) {
        wf_error(world, WEFT_ERR_BAD_ALIGNMENT,
                 "component '%s': alignment %zu is not a power of two up to %u", name,
                 align, WF_MAX_ALIGN);
        return 0;
    }
    if (desc->size % align != 0) {
        wf_error(world, WEFT_ERR_BAD_ALIGNMENT,
                 "component '%s': size %zu is not a multiple of its alignment %zu", name,
                 desc->size, align);
        return 0;
    }
    weft_component again;
    if (world->module_build &&
        wf_module_redeclare(world, desc, (uint32_t)desc->size, (uint32_t)align,
                            desc->storage == WEFT_STORAGE_SPARSE ? WEFT_STORAGE_SPARSE
                                                                 : WEFT_STORAGE_TABLE,
                            &again)) {
        return again; /* a module's component, declared again by its reload */
    }
    return wf_component_register(world, desc);
}

WEFT_API weft_status weft_component_require(weft_world *world, weft_component c,
                                           const weft_require *reqs, int32_t count)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    wf_type_info *ti = wf_registry_get(&world->registry, c);
    if (!ti) {
        return wf_error(world, WEFT_ERR_UNKNOWN_COMPONENT,
                        "weft_component_require: component id %u is not registered", c);
    }
    weft_status st = wf_require_check(world, c, ti->name, reqs, count);
    return st != WEFT_OK ? st : wf_require_add(world, ti, reqs, count);
}

WEFT_API weft_component weft_component_lookup(const weft_world *world, const char *name)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    if (!name) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_component_lookup: name is NULL");
        return 0;
    }
    return wf_registry_lookup(&world->registry, name);
}

WEFT_API weft_status weft_component_info_get(const weft_world *world,
                                             weft_component component,
                                             weft_component_info *out)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_component_info_get: out is NULL");
    }
    const wf_type_info *ti = wf_component_known(world, component);
    if (!ti) {
        return WEFT_ERR_UNKNOWN_COMPONENT;
    }
    out->name = ti->name;
    out->size = ti->size;
    out->align = ti->align;
    out->storage = ti->storage;
    out->flags = ti->flags;
    return WEFT_OK;
}

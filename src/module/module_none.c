/* src/module/module_none.c - reloadable modules left out of the build
 * (CMake -DWEFT_MODULES=OFF).
 * SPDX-License-Identifier: MIT
 *
 * Loading code at run time needs the platform's loader and file watching
 * (module.c: dlopen, ELF, inotify; Linux), so it is the one module of the
 * core library that stays POSIX-only instead of going through the OS
 * layer (core/os.h). Builds for other targets (WebAssembly, consoles)
 * compile this file instead: the public functions keep their signatures,
 * weft_module_load reports UNSUPPORTED, and no module handle can exist,
 * so the functions taking one report INVALID_HANDLE before reaching here.
 */
#include "module/module.h"

weft_status wf_module_safe_point(weft_app *a, const char *fn)
{
    (void)fn;
    (void)a;
    return WEFT_OK;
}

weft_module *wf_module_load(weft_app *a, const char *path)
{
    (void)path;
    wf_error(a->world, WEFT_ERR_UNSUPPORTED,
             "weft_module_load: this weft was built without reloadable modules "
             "(WEFT_MODULES=OFF: they need dlopen and inotify)");
    return NULL;
}

weft_status wf_module_reload(weft_module *m)
{
    (void)m;
    return WEFT_ERR_UNSUPPORTED;
}

void wf_module_unload(weft_module *m)
{
    (void)m;
}

weft_message_type wf_module_message(weft_app *a)
{
    wf_error(a->world, WEFT_ERR_UNSUPPORTED, "weft_module_reloaded_message: this weft was "
             "built without reloadable modules (WEFT_MODULES=OFF)");
    return 0;
}

weft_component wf_module_resource(weft_app *a)
{
    wf_error(a->world, WEFT_ERR_UNSUPPORTED, "weft_module_reloads_resource: this weft was "
             "built without reloadable modules (WEFT_MODULES=OFF)");
    return 0;
}

weft_status wf_module_watch(weft_module *m, bool on, bool polling)
{
    (void)m;
    (void)on;
    (void)polling;
    return WEFT_ERR_UNSUPPORTED;
}

bool wf_module_redeclare(weft_world *w, const weft_component_desc *desc, uint32_t size,
                         uint32_t align, weft_storage storage, weft_component *out)
{
    (void)w;
    (void)desc;
    (void)size;
    (void)align;
    (void)storage;
    (void)out;
    return false;
}

bool wf_module_describe(weft_world *w, weft_component c, const weft_type_desc *desc,
                        weft_status *out)
{
    (void)w;
    (void)c;
    (void)desc;
    (void)out;
    return false;
}

weft_status wf_module_defaults(weft_world *w, weft_component c, const void *value,
                               size_t size)
{
    (void)c;
    (void)value;
    (void)size;
    return wf_error(w, WEFT_ERR_UNSUPPORTED, "weft_component_migration_defaults: this weft "
                    "was built without reloadable modules (WEFT_MODULES=OFF)");
}

bool wf_module_observer(weft_world *w, const weft_observer_desc *desc, weft_observer **out)
{
    (void)w;
    (void)desc;
    (void)out;
    return false;
}

bool wf_module_observer_added(weft_world *w, weft_observer *o)
{
    (void)w;
    (void)o;
    return true;
}

bool wf_module_condition(weft_world *w, weft_schedule *s, const weft_condition_desc *desc,
                         weft_condition **out)
{
    (void)w;
    (void)s;
    (void)desc;
    (void)out;
    return false;
}

bool wf_module_condition_added(weft_world *w, weft_condition *c)
{
    (void)w;
    (void)c;
    return true;
}

bool wf_module_condition_made(weft_world *w, weft_condition *c)
{
    (void)w;
    (void)c;
    return true;
}

weft_status wf_module_message_again(weft_world *w, weft_message_type type, size_t size,
                                    size_t align, weft_message_type *out)
{
    (void)w;
    (void)type;
    (void)size;
    (void)align;
    (void)out;
    return WEFT_ERR_NOT_FOUND;
}

bool wf_module_message_reserve(weft_world *w)
{
    (void)w;
    return true;
}

void wf_module_message_added(weft_world *w, weft_message_type type)
{
    (void)w;
    (void)type;
}

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

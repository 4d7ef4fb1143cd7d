/* src/api/api_module.c - reloadable modules: load, reload, unload and the
 * reload signals.
 * SPDX-License-Identifier: MIT
 */
#include "module/module.h"

WEFT_API weft_module *weft_module_load(weft_app *app, const char *path)
{
    if (!wf_app_ok(app)) {
        return NULL;
    }
    if (!path || !path[0]) {
        wf_error(app->world, WEFT_ERR_INVALID_ARG, "weft_module_load: path is NULL or empty");
        return NULL;
    }
    return wf_module_load(app, path);
}

WEFT_API weft_status weft_module_reload(weft_module *module)
{
    if (!wf_module_ok(module)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_module_reload(module);
}

WEFT_API weft_status weft_module_unload(weft_module *module)
{
    if (!wf_module_ok(module)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_status st = wf_module_safe_point(module->app, "weft_module_unload");
    if (st != WEFT_OK) {
        return st;
    }
    wf_module_unload(module);
    return WEFT_OK;
}

WEFT_API int32_t weft_module_reload_count(const weft_module *module)
{
    return wf_module_ok(module) ? (int32_t)module->reloads : 0;
}

WEFT_API int32_t weft_module_system_count(const weft_module *module)
{
    return wf_module_ok(module) ? (int32_t)module->nsystems : 0;
}

WEFT_API weft_message_type weft_module_reloaded_message(weft_app *app)
{
    return wf_app_ok(app) ? wf_module_message(app) : 0;
}

WEFT_API weft_component weft_module_reloads_resource(weft_app *app)
{
    return wf_app_ok(app) ? wf_module_resource(app) : 0;
}

WEFT_API weft_status weft_module_watch(weft_module *module, bool on, bool polling)
{
    if (!wf_module_ok(module)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_status st = wf_module_safe_point(module->app, "weft_module_watch");
    return st != WEFT_OK ? st : wf_module_watch(module, on, polling);
}

WEFT_API weft_status weft_module_watch_status(const weft_module *module)
{
    return wf_module_ok(module) ? module->watch_status : WEFT_ERR_INVALID_HANDLE;
}

/* src/api/api_diag.c - diagnostics: the store's entry points and the
 * diagnostics plugin.
 * SPDX-License-Identifier: MIT
 */
#include "diag/diag.h"

#include <math.h>
#include <string.h>

#define DIAG_MAX_HISTORY 65536

/* Armor for calls naming a diagnostic: its index, or -1 with the error
 * recorded. */
static int32_t diag_lookup(const weft_world *w, const char *name, const char *fn)
{
    if (!name) {
        wf_error(w, WEFT_ERR_INVALID_ARG, "%s: name is NULL", fn);
        return -1;
    }
    int32_t i = wf_diag_find(w, name);
    if (i < 0) {
        wf_error(w, WEFT_ERR_NOT_FOUND, "%s: no diagnostic named '%s'", fn, name);
    }
    return i;
}

WEFT_API weft_status weft_diag_add(weft_world *world, const weft_diag_desc *desc)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!desc || desc->_start_canary || desc->_end_canary) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_diag_add: desc NULL or canary not 0");
    }
    if (!desc->name || !desc->name[0]) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_diag_add: name NULL or empty");
    }
    if (desc->history_len < 0 || desc->history_len > DIAG_MAX_HISTORY) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_diag_add: '%s': history_len %d out of range 0..%d", desc->name,
                        desc->history_len, DIAG_MAX_HISTORY);
    }
    if (!isfinite(desc->smoothing) || desc->smoothing < 0.0) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_diag_add: '%s': smoothing must be finite and >= 0", desc->name);
    }
    int32_t i = wf_diag_add(world, desc->name, desc->suffix,
                            desc->history_len ? desc->history_len : WEFT_DIAG_HISTORY,
                            desc->smoothing > 0.0 ? desc->smoothing : WEFT_DIAG_SMOOTHING,
                            "weft_diag_add");
    return i >= 0 ? WEFT_OK : wf_error_last(world);
}

WEFT_API weft_status weft_diag_record(weft_world *world, const char *name, double time,
                                      double value)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    int32_t i = diag_lookup(world, name, "weft_diag_record");
    if (i < 0) {
        return wf_error_last(world);
    }
    if (!isfinite(time) || !isfinite(value)) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_diag_record: '%s': time and value must be finite", name);
    }
    const wf_diag_entry *e = wf_diag_entry_at(world, i);
    if (e->count && time < e->last_time) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_diag_record: '%s': time %g is before the last measurement's %g",
                        name, time, e->last_time);
    }
    wf_diag_record(world, i, time, value);
    return WEFT_OK;
}

WEFT_API weft_status weft_diag_get(const weft_world *world, const char *name,
                                   weft_diag_value *out)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_diag_get: out is NULL");
    }
    int32_t i = diag_lookup(world, name, "weft_diag_get");
    if (i < 0) {
        return wf_error_last(world);
    }
    const wf_diag_entry *e = wf_diag_entry_at(world, i);
    memset(out, 0, sizeof *out);
    wf_diag_summary(e, &out->average, &out->min, &out->max);
    if (e->count) {
        out->value = e->last_value;
        out->smoothed = e->ema;
        out->time = e->last_time;
    }
    out->count = e->count;
    out->history_len = e->cap;
    out->enabled = e->enabled;
    out->suffix = e->suffix;
    return WEFT_OK;
}

WEFT_API int32_t weft_diag_history(const weft_world *world, const char *name, double *out,
                                   int32_t cap)
{
    if (!wf_world_ok(world)) {
        return -1;
    }
    if (cap < 0 || (cap > 0 && !out)) {
        wf_error(world, WEFT_ERR_INVALID_ARG,
                 "weft_diag_history: cap %d negative or out NULL with a cap", cap);
        return -1;
    }
    int32_t i = diag_lookup(world, name, "weft_diag_history");
    if (i < 0) {
        return -1;
    }
    const wf_diag_entry *e = wf_diag_entry_at(world, i);
    for (int32_t k = 0; k < e->count && k < cap; k++) {
        out[k] = e->ring[(e->head + k) % e->cap];
    }
    return e->count;
}

WEFT_API weft_status weft_diag_set_enabled(weft_world *world, const char *name, bool on)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    int32_t i = diag_lookup(world, name, "weft_diag_set_enabled");
    if (i < 0) {
        return wf_error_last(world);
    }
    wf_diag_entry_at(world, i)->enabled = on;
    return WEFT_OK;
}

WEFT_API int32_t weft_diag_count(const weft_world *world)
{
    return wf_world_ok(world) && world->diag ? (int32_t)world->diag->n : 0;
}

WEFT_API const char *weft_diag_name(const weft_world *world, int32_t index)
{
    if (!wf_world_ok(world)) {
        return NULL;
    }
    if (index < 0 || !world->diag || (uint32_t)index >= world->diag->n) {
        wf_error(world, WEFT_ERR_NOT_FOUND, "weft_diag_name: index %d out of range", index);
        return NULL;
    }
    return world->diag->v[index].name;
}

WEFT_API weft_status weft_app_add_diagnostics_plugin(weft_app *app,
                                                     const weft_diag_plugin_desc *desc)
{
    if (!wf_app_ok(app)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_diag_plugin_desc d;
    memset(&d, 0, sizeof d);
    if (desc) {
        d = *desc;
    }
    weft_world *w = app->world;
    if (d._start_canary || d._end_canary || !isfinite(d.log_interval) || d.history_len < 0 ||
        d.history_len > DIAG_MAX_HISTORY) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_app_add_diagnostics_plugin: canary not 0, log_interval not "
                        "finite or history_len out of range 0..%d",
                        DIAG_MAX_HISTORY);
    }
    /* the same phase rules as any plugin */
    if (app->updating || (app->in_callback && app->phase != WF_APP_BUILDING)) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "weft_app_add_diagnostics_plugin: called during an update or a plugin "
                        "callback");
    }
    if (app->phase != WF_APP_ADDING && app->phase != WF_APP_BUILDING) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "weft_app_add_diagnostics_plugin: the app's plugins are already set up");
    }
    return wf_diag_plugin_add(app, d.log_interval == 0.0 ? 1.0 : d.log_interval, d.per_system,
                              d.history_len ? d.history_len : WEFT_DIAG_HISTORY);
}

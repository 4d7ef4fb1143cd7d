/* src/api/api_app.c - the app: creation, labels, updates, runners, exit
 * requests, fixed time and plugins.
 * SPDX-License-Identifier: MIT
 */
#include "app/app.h"
#include "core/guard.h"

#include <math.h>
#include <string.h>

/* Armor for calls that change the app or run it: a valid app, no update,
 * runner or plugin callback in progress unless `in_callback_ok`. */
static weft_status app_busy(const weft_app *a, const char *fn, bool in_callback_ok)
{
    if (a->updating) {
        return wf_error(a->world, WEFT_ERR_WRONG_PHASE, "%s: called during an update", fn);
    }
    if (a->in_callback && !in_callback_ok) {
        return wf_error(a->world, WEFT_ERR_WRONG_PHASE, "%s: called from a plugin callback",
                        fn);
    }
    return WEFT_OK;
}

/* A sub-app is driven by its app: refuses (WRONG_PHASE) to update, run or
 * destroy it directly. */
static weft_status app_refuse_sub(const weft_app *a, const char *fn)
{
    if (a->parent) {
        return wf_error(a->world, WEFT_ERR_WRONG_PHASE,
                        "%s: this is a sub-app: the app it belongs to updates and destroys it",
                        fn);
    }
    return WEFT_OK;
}

static bool step_ok(double step)
{
    /* The cast rounds the constant to double: where floating expressions
     * are evaluated in long double (i386's x87, FLT_EVAL_METHOD 2), 1e-6 as
     * written is a little above the double 1e-6 a caller passes, which would
     * then be refused. */
    return isfinite(step) && step >= (double)WEFT_APP_MIN_FIXED_STEP;
}

WEFT_API weft_app *weft_app_create(const weft_app_desc *desc)
{
    weft_app_desc d;
    memset(&d, 0, sizeof d);
    if (desc) {
        d = *desc;
    }
    weft_world *given = d.world;
    if (given && !wf_world_ok(given)) {
        return NULL;
    }
    const char *bad = NULL;
    if (d._start_canary || d._end_canary) {
        bad = "desc canary not 0";
    } else if (!isfinite(d.fixed_step) || d.fixed_step < 0.0 ||
               (d.fixed_step != 0.0 && !step_ok(d.fixed_step))) {
        bad = "fixed_step must be 0 or finite and >= WEFT_APP_MIN_FIXED_STEP";
    } else if (!isfinite(d.max_delta) || d.max_delta < 0.0) {
        bad = "max_delta must be finite and >= 0";
    } else if (d.max_fixed_steps < 0 || d.max_fixed_steps > WEFT_APP_MAX_FIXED_STEPS) {
        bad = "max_fixed_steps must be in 0..WEFT_APP_MAX_FIXED_STEPS";
    }
    if (bad) {
        if (given) {
            wf_error(given, WEFT_ERR_INVALID_ARG, "weft_app_create: %s", bad);
        }
        return NULL;
    }
    if (!given) {
        const weft_world_desc *wd = &d.world_desc;
        if (wd->_start_canary || wd->_end_canary || wd->entity_capacity_hint < 0 ||
            (wd->allocator.alloc == NULL) != (wd->allocator.free == NULL)) {
            return NULL;
        }
    }
    return wf_app_new(given, &d);
}

WEFT_API weft_status weft_app_destroy(weft_app *app)
{
    if (!app) {
        return WEFT_OK;
    }
    if (!wf_app_ok(app)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_status st = app_refuse_sub(app, "weft_app_destroy");
    if (st == WEFT_OK) {
        st = app_busy(app, "weft_app_destroy", false);
    }
    if (st == WEFT_OK && app->in_runner) {
        st = wf_error(app->world, WEFT_ERR_WRONG_PHASE, "weft_app_destroy: called from the runner");
    }
    if (st == WEFT_OK &&
        (wf_world_in_callback(app->world) || wf_guard_inside(app, sizeof *app))) {
        st = wf_error(app->world, WEFT_ERR_WRONG_PHASE,
                      "weft_app_destroy: called from inside a callback of the app or its "
                      "world");
    }
    if (st != WEFT_OK) {
        return st;
    }
    wf_app_destroy(app);
    return WEFT_OK;
}

WEFT_API weft_world *weft_app_world(weft_app *app)
{
    return wf_app_ok(app) ? app->world : NULL;
}

WEFT_API weft_schedule *weft_app_schedule(weft_app *app, const char *label)
{
    if (!wf_app_ok(app)) {
        return NULL;
    }
    if (!label) {
        wf_error(app->world, WEFT_ERR_INVALID_ARG, "weft_app_schedule: label is NULL");
        return NULL;
    }
    return wf_app_schedule(app, label, "weft_app_schedule");
}

WEFT_API weft_node weft_app_add_system(weft_app *app, const char *label,
                                       const weft_system_desc *desc)
{
    if (!wf_app_ok(app)) {
        return 0;
    }
    if (!label) {
        wf_error(app->world, WEFT_ERR_INVALID_ARG, "weft_app_add_system: label is NULL");
        return 0;
    }
    weft_schedule *s = wf_app_schedule(app, label, "weft_app_add_system");
    if (!s) {
        return 0;
    }
    /* the schedule's own checks (phase, desc), with its messages */
    if (wf_schedule_refuse_running(s, "weft_schedule_add_system") != WEFT_OK ||
        wf_system_desc_check(app->world, desc) != WEFT_OK) {
        return 0;
    }
    return wf_schedule_add_system(s, desc);
}

WEFT_API weft_status weft_app_insert_schedule(weft_app *app, const char *label,
                                              const char *anchor, weft_app_place place)
{
    if (!wf_app_ok(app)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_status st = app_busy(app, "weft_app_insert_schedule", true);
    if (st != WEFT_OK) {
        return st;
    }
    if (!label || !label[0] || !anchor || !anchor[0]) {
        return wf_error(app->world, WEFT_ERR_INVALID_ARG,
                        "weft_app_insert_schedule: label or anchor NULL or empty");
    }
    if (place == WEFT_APP_PLACE_DEFAULT) {
        place = WEFT_APP_AFTER;
    }
    if (place != WEFT_APP_BEFORE && place != WEFT_APP_AFTER) {
        return wf_error(app->world, WEFT_ERR_INVALID_ARG,
                        "weft_app_insert_schedule: place %d is neither WEFT_APP_BEFORE nor "
                        "WEFT_APP_AFTER",
                        (int)place);
    }
    return wf_app_insert(app, label, anchor, place);
}

static int32_t order_index(weft_app_order order)
{
    switch (order) {
    case WEFT_APP_ORDER_STARTUP:
        return WF_APP_STARTUP;
    case WEFT_APP_ORDER_DEFAULT:
    case WEFT_APP_ORDER_MAIN:
        return WF_APP_MAIN;
    case WEFT_APP_ORDER_FIXED:
        return WF_APP_FIXED;
    default:
        return -1;
    }
}

WEFT_API int32_t weft_app_label_count(const weft_app *app, weft_app_order order)
{
    int32_t o = order_index(order);
    if (!wf_app_ok(app) || o < 0) {
        return -1;
    }
    return (int32_t)app->nflat[o];
}

WEFT_API const char *weft_app_label(const weft_app *app, weft_app_order order, int32_t index)
{
    if (!wf_app_ok(app)) {
        return NULL;
    }
    int32_t o = order_index(order);
    if (o < 0) {
        wf_error(app->world, WEFT_ERR_INVALID_ARG, "weft_app_label: order %d is unknown",
                 (int)order);
        return NULL;
    }
    if (index < 0 || (uint32_t)index >= app->nflat[o]) {
        wf_error(app->world, WEFT_ERR_NOT_FOUND, "weft_app_label: index %d out of range 0..%u",
                 index, app->nflat[o]);
        return NULL;
    }
    return app->labels[app->flat[o][index]].sched->name;
}

WEFT_API weft_status weft_app_update(weft_app *app, double dt)
{
    if (!wf_app_ok(app)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_status st = app_refuse_sub(app, "weft_app_update");
    if (st == WEFT_OK) {
        st = app_busy(app, "weft_app_update", false);
    }
    if (st == WEFT_OK && wf_world_in_callback(app->world)) {
        /* the runner's frame belongs to the app, not to its world: a
         * runner updates the app */
        st = wf_error(app->world, WEFT_ERR_WRONG_PHASE,
                      "weft_app_update: called from inside a callback of the app's world");
    }
    if (st != WEFT_OK) {
        return st;
    }
    if (!isfinite(dt) || dt < 0.0) {
        return wf_error(app->world, WEFT_ERR_INVALID_ARG,
                        "weft_app_update: dt must be finite and >= 0");
    }
    if (wf_world_refuse_shared(app->world, "weft_app_update")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    return wf_app_update(app, dt);
}

WEFT_API weft_status weft_app_run(weft_app *app, weft_app_runner_fn runner, void *user)
{
    if (!wf_app_ok(app)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_status st = app_refuse_sub(app, "weft_app_run");
    if (st == WEFT_OK) {
        st = app_busy(app, "weft_app_run", false);
    }
    if (st != WEFT_OK) {
        return st;
    }
    if (!runner) {
        return wf_error(app->world, WEFT_ERR_INVALID_ARG, "weft_app_run: runner is NULL");
    }
    if (app->in_runner) {
        return wf_error(app->world, WEFT_ERR_WRONG_PHASE, "weft_app_run: the app already runs");
    }
    if (wf_world_refuse_shared(app->world, "weft_app_run")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    st = wf_app_setup(app);
    if (st != WEFT_OK) {
        return st;
    }
    app->in_runner = true;
    WF_CALLBACK(app, st = runner(app, user));
    app->in_runner = false;
    return st;
}

WEFT_API weft_status weft_app_exit(weft_app *app, int32_t code)
{
    if (!wf_app_ok(app)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    wf_app_exit(app, code);
    return WEFT_OK;
}

WEFT_API bool weft_app_exit_requested(const weft_app *app, int32_t *out_code)
{
    return wf_app_ok(app) && wf_app_exit_requested(app, out_code);
}

WEFT_API int64_t weft_app_update_count(const weft_app *app)
{
    return wf_app_ok(app) ? app->updates : 0;
}

WEFT_API int32_t weft_app_fixed_steps(const weft_app *app)
{
    return wf_app_ok(app) ? app->fixed_steps : 0;
}

WEFT_API double weft_app_fixed_accumulator(const weft_app *app)
{
    return wf_app_ok(app) && app->world->sys ? app->world->sys->acc : 0.0;
}

WEFT_API double weft_app_fixed_step(const weft_app *app)
{
    return wf_app_ok(app) ? app->step : 0.0;
}

WEFT_API weft_status weft_app_set_fixed_step(weft_app *app, double step)
{
    if (!wf_app_ok(app)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_status st = app_busy(app, "weft_app_set_fixed_step", true);
    if (st != WEFT_OK) {
        return st;
    }
    if (!step_ok(step)) {
        return wf_error(app->world, WEFT_ERR_INVALID_ARG,
                        "weft_app_set_fixed_step: step %g s is not finite or below the minimum "
                        "of %g s",
                        step, WEFT_APP_MIN_FIXED_STEP);
    }
    app->step = step;
    return WEFT_OK;
}

/* ---- plugins ---- */

/* Plugins may be added until the setup is past building. */
static weft_status plugin_phase(weft_app *a, const char *fn)
{
    weft_status st = app_busy(a, fn, a->phase == WF_APP_BUILDING);
    if (st != WEFT_OK) {
        return st;
    }
    if (a->phase != WF_APP_ADDING && a->phase != WF_APP_BUILDING) {
        return wf_error(a->world, WEFT_ERR_WRONG_PHASE,
                        "%s: the app's plugins are already set up", fn);
    }
    return WEFT_OK;
}

WEFT_API weft_status weft_app_add_plugin(weft_app *app, const weft_plugin_desc *desc)
{
    if (!wf_app_ok(app)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_status st = plugin_phase(app, "weft_app_add_plugin");
    if (st != WEFT_OK) {
        return st;
    }
    if (!desc) {
        return wf_error(app->world, WEFT_ERR_INVALID_ARG, "weft_app_add_plugin: desc is NULL");
    }
    st = wf_plugin_desc_check(app, desc, "weft_app_add_plugin", NULL);
    if (st != WEFT_OK) {
        return st;
    }
    return wf_app_add_plugin(app, desc);
}

WEFT_API weft_status weft_app_add_plugin_group(weft_app *app,
                                               const weft_plugin_group_desc *desc)
{
    if (!wf_app_ok(app)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_status st = plugin_phase(app, "weft_app_add_plugin_group");
    if (st != WEFT_OK) {
        return st;
    }
    if (!desc || desc->_start_canary || desc->_end_canary || !desc->name || !desc->name[0]) {
        return wf_error(app->world, WEFT_ERR_INVALID_ARG,
                        "weft_app_add_plugin_group: desc NULL, canary not 0 or no name");
    }
    if (desc->plugin_count < 0 || (desc->plugin_count > 0 && !desc->plugins) ||
        desc->disabled_count < 0 || (desc->disabled_count > 0 && !desc->disabled)) {
        return wf_error(app->world, WEFT_ERR_INVALID_ARG,
                        "weft_app_add_plugin_group: group '%s': negative count or NULL array",
                        desc->name);
    }
    return wf_app_add_group(app, desc);
}

WEFT_API weft_status weft_app_setup(weft_app *app)
{
    if (!wf_app_ok(app)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_status st = app_busy(app, "weft_app_setup", false);
    if (st != WEFT_OK) {
        return st;
    }
    if (wf_world_refuse_shared(app->world, "weft_app_setup")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    return wf_app_setup(app);
}

WEFT_API bool weft_app_has_plugin(const weft_app *app, const char *name)
{
    if (!wf_app_ok(app)) {
        return false;
    }
    if (!name) {
        wf_error(app->world, WEFT_ERR_INVALID_ARG, "weft_app_has_plugin: name is NULL");
        return false;
    }
    return wf_app_plugin_find(app, name) >= 0;
}

WEFT_API int32_t weft_app_plugin_count(const weft_app *app)
{
    return wf_app_ok(app) ? (int32_t)app->nplugins : -1;
}

WEFT_API const char *weft_app_plugin_name(const weft_app *app, int32_t index)
{
    if (!wf_app_ok(app)) {
        return NULL;
    }
    if (index < 0 || (uint32_t)index >= app->nplugins) {
        wf_error(app->world, WEFT_ERR_NOT_FOUND,
                 "weft_app_plugin_name: index %d out of range 0..%u", index, app->nplugins);
        return NULL;
    }
    return app->plugins[index].name;
}

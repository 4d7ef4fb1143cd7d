/* src/api/api_state.c - states: registration, queued transitions, the
 * transition step, the schedules and components of a state, access from
 * systems and run conditions.
 * SPDX-License-Identifier: MIT
 *
 * Thin entry points over src/state: armor (world magic, the calling
 * context, state ids and values), then one call. A state's values live in
 * resources, so systems reach them through their declared resource uses
 * and the scheduler orders readers and writers like any other resource.
 */
#include "app/app_state.h"
#include "module/module.h"
#include "state/state.h"

#include <string.h>

/* The state `s` of a valid world, or NULL (recorded). */
static wf_state_type *state_arg(const weft_world *w, weft_state s, const char *fn)
{
    if (!wf_world_ok(w)) {
        return NULL;
    }
    return wf_state_find(w, s, fn);
}

static bool value_ok(const weft_world *w, const wf_state_type *t, uint32_t value,
                     const char *fn)
{
    if (wf_state_value_index(t, value) < 0) {
        wf_error(w, WEFT_ERR_INVALID_ARG, "%s: %u is not a value of state '%s'", fn, value,
                 t->name);
        return false;
    }
    return true;
}

static bool not_in_transition(const weft_world *w, const char *fn)
{
    if (w->states && w->states->in_transition) {
        wf_error(w, WEFT_ERR_WRONG_PHASE, "%s: not allowed during weft_state_transition", fn);
        return false;
    }
    return true;
}

/* ---- registration and lookup ---- */

WEFT_API weft_state weft_state_register(weft_world *world, const weft_state_desc *desc)
{
    if (!wf_world_ok(world) || wf_world_refuse_shared(world, "weft_state_register") ||
        !not_in_transition(world, "weft_state_register")) {
        return 0;
    }
    return wf_state_register(world, desc);
}

WEFT_API weft_state weft_state_lookup(const weft_world *world, const char *name)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    if (!name) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_state_lookup: name is NULL");
        return 0;
    }
    return wf_state_lookup(world, name);
}

WEFT_API const char *weft_state_name(const weft_world *world, weft_state state)
{
    const wf_state_type *t = state_arg(world, state, "weft_state_name");
    return t ? t->name : NULL;
}

WEFT_API const char *weft_state_value_name(const weft_world *world, weft_state state,
                                           uint32_t value)
{
    const wf_state_type *t = state_arg(world, state, "weft_state_value_name");
    if (!t || !value_ok(world, t, value, "weft_state_value_name")) {
        return NULL;
    }
    return t->values[wf_state_value_index(t, value)].name;
}

/* ---- values ---- */

WEFT_API weft_status weft_state_get(const weft_world *world, weft_state state,
                                    uint32_t *out)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_state_get: out is NULL");
    }
    const wf_state_type *t = wf_state_find(world, state, "weft_state_get");
    if (!t) {
        return WEFT_ERR_NOT_FOUND;
    }
    const wf_type_info *ti = wf_registry_get(&world->registry, t->res_state);
    *out = WEFT_STATE_VALUE_NONE;
    if (ti->res_present) {
        memcpy(out, ti->res_value, sizeof *out);
    }
    return WEFT_OK;
}

WEFT_API bool weft_state_exists(const weft_world *world, weft_state state)
{
    const wf_state_type *t = state_arg(world, state, "weft_state_exists");
    return t && wf_registry_get(&world->registry, t->res_state)->res_present;
}

/* Shared checks of the two ways to queue a value. */
static weft_status set_next_check(const weft_world *w, const wf_state_type *t, uint32_t value,
                                  const char *fn)
{
    if (t->kind == WEFT_STATE_KIND_COMPUTED) {
        return wf_error(w, WEFT_ERR_IMMUTABLE,
                        "%s: '%s' is a computed state: its value follows its sources and "
                        "cannot be set", fn, t->name);
    }
    if (!value_ok(w, t, value, fn)) {
        return WEFT_ERR_INVALID_ARG;
    }
    return WEFT_OK;
}

WEFT_API weft_status weft_state_set_next(weft_world *world, weft_state state, uint32_t value)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_state_set_next")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    wf_state_type *t = wf_state_find(world, state, "weft_state_set_next");
    if (!t) {
        return WEFT_ERR_NOT_FOUND;
    }
    weft_status st = set_next_check(world, t, value, "weft_state_set_next");
    return st != WEFT_OK ? st : wf_state_queue(world, t, value);
}

WEFT_API weft_status weft_state_transition(weft_world *world)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_state_transition")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    return wf_state_transition(world);
}

/* ---- schedules ---- */

static weft_schedule *owned(weft_world *w, weft_state s, uint8_t kind, uint32_t from,
                            uint32_t to, const char *fn)
{
    if (!wf_world_ok(w) || wf_world_refuse_shared(w, fn)) {
        return NULL;
    }
    wf_state_type *t = wf_state_find(w, s, fn);
    if (!t || !value_ok(w, t, from, fn) || (kind == WF_STATE_TRANS && !value_ok(w, t, to, fn))) {
        return NULL;
    }
    return wf_state_schedule(w, t, kind, from, to);
}

WEFT_API weft_schedule *weft_state_on_enter(weft_world *world, weft_state state,
                                            uint32_t value)
{
    return owned(world, state, WF_STATE_ENTER, value, 0, "weft_state_on_enter");
}

WEFT_API weft_schedule *weft_state_on_exit(weft_world *world, weft_state state,
                                           uint32_t value)
{
    return owned(world, state, WF_STATE_EXIT, value, 0, "weft_state_on_exit");
}

WEFT_API weft_schedule *weft_state_on_transition(weft_world *world, weft_state state,
                                                 uint32_t from, uint32_t to)
{
    return owned(world, state, WF_STATE_TRANS, from, to, "weft_state_on_transition");
}

/* ---- ids ---- */

WEFT_API weft_component weft_state_resource(const weft_world *world, weft_state state)
{
    const wf_state_type *t = state_arg(world, state, "weft_state_resource");
    return t ? t->res_state : 0;
}

WEFT_API weft_component weft_state_next_resource(const weft_world *world, weft_state state)
{
    const wf_state_type *t = state_arg(world, state, "weft_state_next_resource");
    if (t && !t->res_next) {
        wf_error(world, WEFT_ERR_IMMUTABLE,
                 "weft_state_next_resource: '%s' is a computed state and has no NextState",
                 t->name);
        return 0;
    }
    return t ? t->res_next : 0;
}

WEFT_API weft_component weft_state_despawn_on_exit(const weft_world *world, weft_state state)
{
    const wf_state_type *t = state_arg(world, state, "weft_state_despawn_on_exit");
    return t ? t->on_exit : 0;
}

WEFT_API weft_component weft_state_despawn_on_enter(const weft_world *world,
                                                    weft_state state)
{
    const wf_state_type *t = state_arg(world, state, "weft_state_despawn_on_enter");
    return t ? t->on_enter : 0;
}

WEFT_API weft_message_type weft_state_transition_message(const weft_world *world,
                                                         weft_state state)
{
    const wf_state_type *t = state_arg(world, state, "weft_state_transition_message");
    return t ? t->msg : 0;
}

/* ---- from systems ---- */

/* Did the running system or condition declare resource r (for writing
 * when `write`)? A violation fails it and is recorded. */
static bool ctx_declared(weft_system_ctx *ctx, weft_component r, bool write, const char *fn)
{
    const wf_system *sys = ctx->sys;
    for (int32_t i = 0; i < sys->nres; i++) {
        if (sys->res[i].id == r) {
            if (write && sys->res[i].access != WEFT_ACCESS_WRITE) {
                break;
            }
            return true;
        }
    }
    wf_ctx_violation(ctx, fn, write ? "NextState not declared WRITE" : "State not declared",
                     r);
    return false;
}

WEFT_API weft_status weft_system_state_get(weft_system_ctx *ctx, weft_state state,
                                           uint32_t *out)
{
    if (!ctx || !ctx->world || !ctx->sys) {
        return WEFT_ERR_INVALID_ARG;
    }
    weft_world *w = ctx->world;
    if (!out) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "weft_system_state_get: out is NULL");
    }
    const wf_state_type *t = wf_state_find(w, state, "weft_system_state_get");
    if (!t) {
        return WEFT_ERR_NOT_FOUND;
    }
    if (!ctx_declared(ctx, t->res_state, false, "weft_system_state_get")) {
        return WEFT_ERR_ACCESS_VIOLATION;
    }
    const wf_type_info *ti = wf_registry_get(&w->registry, t->res_state);
    *out = WEFT_STATE_VALUE_NONE;
    if (ti->res_present) {
        memcpy(out, ti->res_value, sizeof *out);
    }
    return WEFT_OK;
}

WEFT_API weft_status weft_system_state_set_next(weft_system_ctx *ctx, weft_state state,
                                                uint32_t value)
{
    if (!ctx || !ctx->world || !ctx->sys) {
        return WEFT_ERR_INVALID_ARG;
    }
    weft_world *w = ctx->world;
    if (ctx->condition) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_system_state_set_next: a run condition may not set a state");
    }
    wf_state_type *t = wf_state_find(w, state, "weft_system_state_set_next");
    if (!t) {
        return WEFT_ERR_NOT_FOUND;
    }
    weft_status st = set_next_check(w, t, value, "weft_system_state_set_next");
    if (st != WEFT_OK) {
        return st;
    }
    if (!ctx_declared(ctx, t->res_next, true, "weft_system_state_set_next")) {
        return WEFT_ERR_ACCESS_VIOLATION;
    }
    /* declared WRITE: the scheduler gives this system the resource alone */
    wf_type_info *ti = wf_registry_get(&w->registry, t->res_next);
    if (!ti->res_present) {
        return wf_error(w, WEFT_ERR_NOT_FOUND,
                        "weft_system_state_set_next: NextState<%s> was removed", t->name);
    }
    weft_next_state next = {value, 1};
    memcpy(ti->res_value, &next, sizeof next);
    ti->res_ticks.changed = ctx->this_run;
    return WEFT_OK;
}

/* ---- run conditions ---- */

static weft_condition *state_cond(weft_schedule *s, weft_state state, uint8_t kind,
                                  const char *fn)
{
    if (!s || s->magic != WF_SCHEDULE_MAGIC || !wf_world_ok(s->world)) {
        return NULL;
    }
    weft_world *w = s->world;
    if (s->running) {
        wf_error(w, WEFT_ERR_WRONG_PHASE, "%s: schedule '%s' is running", fn, s->name);
        return NULL;
    }
    const wf_state_type *t = wf_state_find(w, state, fn);
    if (!t) {
        return NULL;
    }
    weft_condition *c = wf_condition_new(s, kind);
    if (c && w->module_build && !wf_module_condition_made(w, c)) {
        return NULL; /* stays in the schedule's list, unattached */
    }
    if (c) {
        c->res = t->res_state;
    }
    return c;
}

WEFT_API weft_condition *weft_condition_in_state(weft_schedule *schedule, weft_state state,
                                                 uint32_t value)
{
    const char *fn = "weft_condition_in_state";
    if (schedule && schedule->magic == WF_SCHEDULE_MAGIC && wf_world_ok(schedule->world)) {
        const wf_state_type *t = wf_state_get(schedule->world, state);
        if (t && !value_ok(schedule->world, t, value, fn)) {
            return NULL;
        }
    }
    weft_condition *c = state_cond(schedule, state, WF_COND_RES_U32_EQ, fn);
    if (c) {
        c->u32 = value;
    }
    return c;
}

WEFT_API weft_condition *weft_condition_state_exists(weft_schedule *schedule,
                                                     weft_state state)
{
    return state_cond(schedule, state, WF_COND_RES_EXISTS, "weft_condition_state_exists");
}

WEFT_API weft_condition *weft_condition_state_changed(weft_schedule *schedule,
                                                      weft_state state)
{
    return state_cond(schedule, state, WF_COND_RES_CHANGED, "weft_condition_state_changed");
}

/* ---- states on an app ---- */

WEFT_API weft_status weft_app_add_states_plugin(weft_app *app)
{
    if (!wf_app_ok(app)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    /* the rules of weft_app_add_plugin: before the setup is done, from a
     * plugin's build at the latest, never during an update */
    bool building = app->phase == WF_APP_BUILDING;
    if (app->updating || (app->in_callback && !building) ||
        (app->phase != WF_APP_ADDING && !building)) {
        return wf_error(app->world, WEFT_ERR_WRONG_PHASE,
                        "weft_app_add_states_plugin: plugins can no longer be added (during "
                        "an update, a plugin callback, or after the setup)");
    }
    return wf_app_add_states_plugin(app);
}

WEFT_API weft_state weft_app_register_state(weft_app *app, const weft_state_desc *desc)
{
    if (!wf_app_ok(app)) {
        return 0;
    }
    weft_world *w = app->world;
    if (wf_world_refuse_shared(w, "weft_app_register_state") ||
        !not_in_transition(w, "weft_app_register_state")) {
        return 0;
    }
    /* bad input is refused before the hooks change the app */
    if (wf_state_register_check(w, desc) != WEFT_OK || wf_app_states_hook(app) != WEFT_OK) {
        return 0;
    }
    return wf_state_register(w, desc);
}

/* src/app/app_state.c - states on an app: the transition step hooked into
 * the app's schedules (the "weft.states" plugin).
 * SPDX-License-Identifier: MIT
 *
 * The state layer (src/state) works on a bare world; an app only has to
 * run its transition step at the right places of its order, as Bevy's
 * StatesPlugin does: once at startup, before PreStartup, so the initial
 * states are entered before any startup system runs, and every update in
 * the StateTransition label (after PreUpdate, before the fixed loop and
 * Update). Both places hold one exclusive system calling
 * wf_state_transition; the startup one lives in a label of its own,
 * StateTransitionStartup, placed before PreStartup. Hooking is idempotent
 * (the system is found by its function), so the plugin's build and
 * weft_app_register_state may both do it. Once the startup order has run
 * (or during an update) only the per-update hook is added: a state
 * registered later is entered by the next StateTransition.
 *
 * Threads: the driver of the app's world.
 */
#include "app/app_state.h"
#include "state/state.h"

#include <string.h>

#define WF_STATES_PLUGIN "weft.states"
#define WF_STATES_STARTUP_LABEL "StateTransitionStartup"

/* The exclusive system: one transition step of the world. A failure
 * (an OnEnter system failed, a bad queued value) fails the system, so the
 * app's update reports it; the error itself is already recorded. */
static void app_state_step(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_status st = wf_state_transition(ctx->world);
    if (st != WEFT_OK) {
        const wf_error_sink *sink = wf_error_sink_for(ctx->world);
        wf_ctx_fail(ctx, st, sink && sink->count ? sink->last_message : "state transition");
    }
}

static bool has_step(const weft_schedule *s)
{
    for (uint32_t i = 0; i < s->nnodes; i++) {
        if (s->nodes[i].sys && s->nodes[i].sys->fn == app_state_step) {
            return true;
        }
    }
    return false;
}

static weft_status add_step(weft_app *a, weft_schedule *s)
{
    if (has_step(s)) {
        return WEFT_OK;
    }
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "weft.state_transition";
    d.fn = app_state_step;
    /* weft's own: a stepping debugger on the schedule does not stop it */
    d.flags = WEFT_SYSTEM_EXCLUSIVE | WEFT_SYSTEM_NOT_STEPPABLE;
    wf_system *sys = wf_system_create(a->world, s, &d, NULL);
    if (!sys) {
        return wf_error_last(a->world);
    }
    weft_node n = wf_schedule_add_system_node(s, sys);
    if (!n) {
        wf_system_destroy(a->world, sys);
        return wf_error_last(a->world);
    }
    return WEFT_OK;
}

weft_status wf_app_states_hook(weft_app *a)
{
    weft_schedule *main_sched = wf_app_schedule(a, WEFT_APP_STATE_TRANSITION,
                                                "weft_app_register_state");
    if (!main_sched) {
        return wf_error_last(a->world);
    }
    if (main_sched->running) {
        return wf_error(a->world, WEFT_ERR_WRONG_PHASE,
                        "states: the StateTransition schedule is running");
    }
    bool started = a->world->sys->app_started;
    if (!started && !a->updating && wf_app_find(a, WF_STATES_STARTUP_LABEL) < 0) {
        weft_status st = wf_app_insert(a, WF_STATES_STARTUP_LABEL, WEFT_APP_PRE_STARTUP,
                                       WEFT_APP_BEFORE);
        if (st != WEFT_OK) {
            return st;
        }
    }
    int32_t startup = wf_app_find(a, WF_STATES_STARTUP_LABEL);
    if (startup >= 0 && !started) {
        weft_status st = add_step(a, a->labels[startup].sched);
        if (st != WEFT_OK) {
            return st;
        }
    }
    return add_step(a, main_sched);
}

static weft_status states_plugin_build(weft_app *a, void *user)
{
    (void)user;
    return wf_app_states_hook(a);
}

weft_status wf_app_add_states_plugin(weft_app *a)
{
    weft_plugin_desc d;
    memset(&d, 0, sizeof d);
    d.name = WF_STATES_PLUGIN;
    d.build = states_plugin_build;
    if (wf_app_plugin_find(a, WF_STATES_PLUGIN) >= 0) {
        return wf_error(a->world, WEFT_ERR_ALREADY_EXISTS,
                        "weft_app_add_states_plugin: the plugin '%s' was already added",
                        WF_STATES_PLUGIN);
    }
    return wf_app_add_plugin(a, &d);
}

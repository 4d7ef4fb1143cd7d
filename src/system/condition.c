/* src/system/condition.c - run conditions: user callbacks, combinators and
 * the built-in ones.
 * SPDX-License-Identifier: MIT
 *
 * A condition is a small tree evaluated where the step it guards is about
 * to run. User conditions get a read-only context on their own wf_system
 * (queries, resources, messages with its own cursors) and a last-run tick
 * of their own. The access of every condition of a step (and of the sets
 * above it) is folded into the step's access at build time, so nothing
 * that conflicts with a condition can run while it is evaluated.
 */
#include "system/system.h"
#include "core/guard.h"

#include <string.h>

static bool cond_user(weft_condition *c, weft_system_ctx *outer)
{
    wf_system *sys = c->sys;
    if (!sys->cond_fn) {
        return false; /* its module was unloaded (src/module/module_load.c) */
    }
    weft_system_ctx ctx = *outer;
    ctx.sys = sys;
    ctx.condition = true;
    ctx.exclusive = false;
    wf_error_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.world = outer->world;
    sink.shared = true; /* conditions only read */
    wf_error_sink *prev = wf_error_sink_swap(&sink);
    bool r;
    WF_CALLBACK(outer->world, r = sys->cond_fn(&ctx, sys->user));
    wf_error_sink_swap(prev);
    if (sink.count && sys->fail_status == WEFT_OK) {
        wf_ctx_fail(&ctx, sink.status, sink.message);
    }
    if (sys->fail_status != WEFT_OK) {
        r = false; /* a failing condition counts as false (it must not let a
                      system run on a broken premise); the
                      run reports it after the systems' failures */
    }
    wf_system_set_last_run(sys, outer->this_run);
    return r;
}

bool wf_condition_eval(weft_condition *c, weft_system_ctx *ctx)
{
    weft_world *w = ctx->world;
    switch (c->kind) {
    case WF_COND_USER:
        return cond_user(c, ctx);
    case WF_COND_AND:
        return wf_condition_eval(c->a, ctx) && wf_condition_eval(c->b, ctx);
    case WF_COND_AND_EAGER: {
        bool x = wf_condition_eval(c->a, ctx);
        bool y = wf_condition_eval(c->b, ctx);
        return x && y;
    }
    case WF_COND_OR:
        return wf_condition_eval(c->a, ctx) || wf_condition_eval(c->b, ctx);
    case WF_COND_NOT:
        return !wf_condition_eval(c->a, ctx);
    case WF_COND_RUN_ONCE: {
        bool first = !c->fired;
        c->fired = true;
        return first;
    }
    case WF_COND_RES_EXISTS: {
        const wf_type_info *ti = wf_registry_get(&w->registry, c->res);
        return ti && ti->res_present;
    }
    case WF_COND_RES_U32_EQ: {
        const wf_type_info *ti = wf_registry_get(&w->registry, c->res);
        uint32_t v;
        if (!ti || !ti->res_present || ti->size < sizeof v) {
            return false;
        }
        memcpy(&v, ti->res_value, sizeof v);
        return v == c->u32;
    }
    case WF_COND_RES_CHANGED: {
        const wf_type_info *ti = wf_registry_get(&w->registry, c->res);
        bool r = ti && ti->res_present &&
                 (wf_tick_newer(ti->res_ticks.changed, c->last_run, ctx->this_run) ||
                  wf_tick_newer(ti->res_ticks.added, c->last_run, ctx->this_run));
        c->last_run = ctx->this_run;
        return r;
    }
    case WF_COND_ON_MESSAGE: {
        const wf_msg_stream *s = wf_messages_type(w, c->msg);
        if (!s) {
            return false;
        }
        bool any = false;
        while (wf_stream_read(s, &c->cursor)) {
            any = true;
        }
        return any;
    }
    default:
        return false;
    }
}

void wf_condition_free(weft_world *w, weft_condition *c)
{
    if (c->sys) {
        wf_system_destroy(w, c->sys);
    }
    wf_free(&w->alloc, c, sizeof *c, _Alignof(weft_condition));
}

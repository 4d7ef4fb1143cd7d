/* src/system/context.c - what a running system or condition reaches
 * through its context: failure reporting, its queries, iteration.
 * SPDX-License-Identifier: MIT
 *
 * The public weft_system_* calls (src/api/api_system.c) check their
 * arguments and forward here; the executor (src/schedule/executor.c) uses
 * the same entry points, never the public ones.
 */
#include "system/system.h"

#include <stdio.h>
#include <string.h>

void wf_ctx_fail(weft_system_ctx *ctx, weft_status st, const char *msg)
{
    wf_system *sys = ctx->sys;
    if (!sys || sys->fail_status != WEFT_OK) {
        return;
    }
    sys->fail_status = st == WEFT_OK ? WEFT_ERR_INTERNAL : st;
    const char *text = msg ? msg : wf_status_message(st);
    snprintf(sys->fail_msg, sizeof sys->fail_msg, "%s", text ? text : "unknown status");
    if (ctx->run_failed) {
        /* relaxed: read after the run's join, which orders it */
        wf_atomic_store_relaxed_u32(ctx->run_failed, 1);
    }
}

weft_status wf_ctx_violation(weft_system_ctx *ctx, const char *fn, const char *what,
                             weft_component c)
{
    char msg[WF_ERROR_LEN];
    snprintf(msg, sizeof msg, "%s: %s '%s' touched '%s' (%s)", fn,
             ctx->condition ? "condition" : "system", ctx->sys->name,
             wf_component_name(ctx->world, c), what);
    wf_ctx_fail(ctx, WEFT_ERR_ACCESS_VIOLATION, msg);
    return wf_error(ctx->world, WEFT_ERR_ACCESS_VIOLATION, "%s", msg);
}

weft_query *wf_ctx_query(weft_system_ctx *ctx, int32_t query, const char *fn)
{
    if (query < 0 || query >= ctx->sys->nqueries) {
        wf_error(ctx->world, WEFT_ERR_INVALID_ARG, "%s: '%s' has no query %d (it declared %d)",
                 fn, ctx->sys->name, query, ctx->sys->nqueries);
        return NULL;
    }
    weft_query *q = ctx->sys->queries[query];
    wf_query_env env = wf_world_query_env(ctx->world);
    if (!wf_query_update(q, &env)) {
        wf_error(ctx->world, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory matching archetypes",
                 fn);
        return NULL;
    }
    return q;
}

bool wf_ctx_group_busy(weft_system_ctx *ctx, int32_t query, const char *fn)
{
    const wf_system *sys = ctx->sys;
    if (!sys->groups || sys->groups[query] == 0) {
        return false;
    }
    for (int32_t j = 0; j < sys->nqueries; j++) {
        if (j != query && sys->groups[j] == sys->groups[query] && sys->queries[j]->iterating) {
            char what[96];
            snprintf(what, sizeof what, "query %d iterated while query %d of its param set "
                     "is open", query, j);
            wf_ctx_violation(ctx, fn, what, sys->queries[query]->terms[0].id);
            return true;
        }
    }
    return false;
}

weft_status wf_ctx_iter(weft_system_ctx *ctx, int32_t query, weft_iter *it, const char *fn)
{
    weft_query *q = wf_ctx_query(ctx, query, fn);
    if (!q || wf_ctx_group_busy(ctx, query, fn)) {
        memset(it, 0, sizeof *it);
        return wf_error_last(ctx->world);
    }
    weft_world *w = ctx->world;
    wf_query_env env = wf_world_query_env(w);
    wf_iter *wi = wf_iter_of(it);
    wf_iter_init(wi, w, q, &env, q->last_run, ctx->this_run, false);
    wi->mode = ctx->exclusive ? WF_ITER_EXCL : WF_ITER_SYSTEM;
    if (!wf_iter_open(wi, ctx->exclusive)) {
        memset(it, 0, sizeof *it);
        return wf_error(w, WEFT_ERR_CAPACITY, "%s: %d iterations of query %d are already open",
                        fn, WF_QUERY_MAX_OPEN, query);
    }
    if (ctx->exclusive) {
        w->iter_depth++;
    }
    return WEFT_OK;
}

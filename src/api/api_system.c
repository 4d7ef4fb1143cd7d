/* src/api/api_system.c - what a running system sees: its queries,
 * resources, messages, commands, local state, and failure reporting.
 * SPDX-License-Identifier: MIT
 *
 * Every access goes through what the system declared; anything else is an
 * ACCESS_VIOLATION that names the system and the component, and fails the
 * run. Errors recorded while a system runs go to its own slot (see
 * wf_error_sink), never to the world's, so systems on other threads do not
 * race on it.
 */
#include "schedule/schedule.h"

#include <stdio.h>
#include <string.h>

static bool ctx_ok(const weft_system_ctx *ctx)
{
    return ctx && ctx->world && ctx->sys;
}

WEFT_API const char *weft_system_name(const weft_system_ctx *ctx)
{
    return ctx_ok(ctx) ? ctx->sys->name : NULL;
}

WEFT_API double weft_system_delta(const weft_system_ctx *ctx)
{
    return ctx ? ctx->dt : 0.0;
}

WEFT_API uint32_t weft_system_this_run(const weft_system_ctx *ctx)
{
    return ctx ? ctx->this_run : 0;
}

WEFT_API uint32_t weft_system_last_run(const weft_system_ctx *ctx)
{
    return ctx_ok(ctx) ? ctx->sys->last_run : 0;
}

WEFT_API int32_t weft_system_worker(const weft_system_ctx *ctx)
{
    return ctx ? ctx->worker : 0;
}

WEFT_API void *weft_system_local(weft_system_ctx *ctx)
{
    return ctx_ok(ctx) ? ctx->sys->local : NULL;
}

WEFT_API weft_world *weft_system_world(weft_system_ctx *ctx)
{
    if (!ctx_ok(ctx)) {
        return NULL;
    }
    if (!ctx->exclusive) {
        wf_error(ctx->world, WEFT_ERR_WRONG_PHASE,
                 "weft_system_world: '%s' is not exclusive: use its context", ctx->sys->name);
        return NULL;
    }
    return ctx->world;
}

WEFT_API weft_commands *weft_system_commands(weft_system_ctx *ctx)
{
    if (!ctx_ok(ctx) || ctx->condition) {
        return NULL;
    }
    ctx->sys->cmds_used = true; /* the run checks this buffer afterwards */
    return ctx->sys->cmds;
}

WEFT_API weft_status weft_system_iter(weft_system_ctx *ctx, int32_t query, weft_iter *it)
{
    if (!ctx_ok(ctx)) {
        return WEFT_ERR_INVALID_ARG;
    }
    if (!it) {
        return wf_error(ctx->world, WEFT_ERR_INVALID_ARG, "weft_system_iter: it is NULL");
    }
    return wf_ctx_iter(ctx, query, it, "weft_system_iter");
}

WEFT_API int64_t weft_system_count(weft_system_ctx *ctx, int32_t query)
{
    if (!ctx_ok(ctx)) {
        return -1;
    }
    weft_query *q = wf_ctx_query(ctx, query, "weft_system_count");
    return q ? wf_system_query_count(ctx->world, q) : -1;
}

/* Row of e in q at this run, or NULL when e does not match. */
static const wf_match *ctx_entity(weft_system_ctx *ctx, weft_query *q, weft_entity e,
                                  uint32_t *row)
{
    weft_world *w = ctx->world;
    const wf_record *r = wf_entity_live(w, e);
    if (!r || !wf_query_has_arch(q, r->arch)) {
        return NULL;
    }
    const wf_match *m = wf_query_table_match(q, wf_world_archetype(w, r->arch)->table);
    if (q->row_filters &&
        !wf_query_row_passes(q, m, r->row, e, q->last_run, ctx->this_run, w->change_tick)) {
        return NULL;
    }
    *row = r->row;
    return m;
}

static void *ctx_get(weft_system_ctx *ctx, int32_t query, weft_entity e, int32_t term,
                     size_t size, bool write, const char *fn)
{
    if (!ctx_ok(ctx)) {
        return NULL;
    }
    weft_query *q = wf_ctx_query(ctx, query, fn);
    if (!q) {
        return NULL;
    }
    weft_world *w = ctx->world;
    if (term < 0 || (uint32_t)term >= q->term_count) {
        wf_error(w, WEFT_ERR_INVALID_ARG, "%s: term %d out of range", fn, term);
        return NULL;
    }
    const wf_term *t = &q->terms[term];
    if (t->access == WEFT_ACCESS_NONE) {
        wf_ctx_violation(ctx, fn, "a term without access", t->id);
        return NULL;
    }
    if (write && t->access != WEFT_ACCESS_WRITE) {
        wf_ctx_violation(ctx, fn, "write through a READ term", t->id);
        return NULL;
    }
    if (size != t->size) {
        wf_error(w, WEFT_ERR_SIZE_MISMATCH, "%s: term %d component '%s' has size %u, not %zu",
                 fn, term, t->ti->name, t->size, size);
        return NULL;
    }
    uint32_t row;
    const wf_match *m = ctx_entity(ctx, q, e, &row);
    if (!m) {
        return NULL;
    }
    wf_column *c;
    uint32_t at = row;
    if (t->sparse) {
        uint32_t d = wf_sparse_find(t->ti->sparse, (uint32_t)e);
        if (d == WF_SPARSE_EMPTY) {
            return NULL;
        }
        c = &t->ti->sparse->dense;
        at = d;
    } else {
        if (m->cols[term] < 0) {
            return NULL;
        }
        c = &m->table->cols[m->cols[term]];
    }
    if (write) {
        wf_column_mark(c, at, ctx->this_run, w->change_tick);
        wf_journal_add(w, c, at, 1, ctx->this_run);
    }
    return wf_column_ptr(c, at);
}

WEFT_API const void *weft_system_get(weft_system_ctx *ctx, int32_t query, weft_entity e,
                                     int32_t term, size_t size)
{
    return ctx_get(ctx, query, e, term, size, false, "weft_system_get");
}

WEFT_API void *weft_system_get_mut(weft_system_ctx *ctx, int32_t query, weft_entity e,
                                   int32_t term, size_t size)
{
    if (ctx_ok(ctx) && ctx->condition) {
        weft_query *q = wf_ctx_query(ctx, query, "weft_system_get_mut");
        if (q && term >= 0 && (uint32_t)term < q->term_count) {
            wf_ctx_violation(ctx, "weft_system_get_mut", "write from a condition", q->terms[term].id);
        }
        return NULL;
    }
    return ctx_get(ctx, query, e, term, size, true, "weft_system_get_mut");
}

/* The declared use of resource r, or NULL (violation recorded). */
static const weft_resource_use *ctx_res(weft_system_ctx *ctx, weft_component r, bool write,
                                        size_t size, const wf_type_info **out, const char *fn)
{
    if (!ctx_ok(ctx)) {
        return NULL;
    }
    const wf_system *sys = ctx->sys;
    const weft_resource_use *use = NULL;
    for (int32_t i = 0; i < sys->nres; i++) {
        if (sys->res[i].id == r) {
            use = &sys->res[i];
            break;
        }
    }
    if (!use) {
        wf_ctx_violation(ctx, fn, "resource not declared", r);
        return NULL;
    }
    if (write && use->access != WEFT_ACCESS_WRITE) {
        wf_ctx_violation(ctx, fn, "resource declared READ", r);
        return NULL;
    }
    const wf_type_info *ti = wf_registry_get(&ctx->world->registry, r);
    if (size != ti->size) {
        wf_error(ctx->world, WEFT_ERR_SIZE_MISMATCH,
                 "%s: resource '%s' has size %u, not %zu", fn, ti->name, ti->size, size);
        return NULL;
    }
    *out = ti;
    return use;
}

WEFT_API const void *weft_system_resource(weft_system_ctx *ctx, weft_component r, size_t size)
{
    const wf_type_info *ti;
    if (!ctx_res(ctx, r, false, size, &ti, "weft_system_resource") || !ti->res_present) {
        return NULL;
    }
    return ti->res_value;
}

WEFT_API void *weft_system_resource_mut(weft_system_ctx *ctx, weft_component r, size_t size)
{
    const wf_type_info *cti;
    if (!ctx_res(ctx, r, true, size, &cti, "weft_system_resource_mut") || !cti->res_present) {
        return NULL;
    }
    wf_type_info *ti = (wf_type_info *)(uintptr_t)cti; /* declared WRITE: ours this run */
    ti->res_ticks.changed = ctx->this_run;
    return ti->res_value;
}

static int32_t ctx_msg(weft_system_ctx *ctx, weft_message_type type, bool write,
                       const char *fn)
{
    const wf_system *sys = ctx->sys;
    for (int32_t i = 0; i < sys->nmsgs; i++) {
        if (sys->msgs[i].type == type) {
            if (write && sys->msgs[i].access != WEFT_ACCESS_WRITE) {
                break;
            }
            return i;
        }
    }
    char msg[WF_ERROR_LEN];
    snprintf(msg, sizeof msg, "%s: '%s' did not declare %s access to message type %u", fn,
             sys->name, write ? "WRITE" : "READ", type);
    wf_ctx_fail(ctx, WEFT_ERR_ACCESS_VIOLATION, msg);
    wf_error(ctx->world, WEFT_ERR_ACCESS_VIOLATION, "%s", msg);
    return -1;
}

WEFT_API weft_status weft_system_message_write(weft_system_ctx *ctx, weft_message_type type,
                                               const void *msg, size_t size)
{
    if (!ctx_ok(ctx)) {
        return WEFT_ERR_INVALID_ARG;
    }
    if (ctx_msg(ctx, type, true, "weft_system_message_write") < 0) {
        return WEFT_ERR_ACCESS_VIOLATION;
    }
    wf_msg_stream *s = wf_messages_type(ctx->world, type);
    if (size != s->size || !msg) {
        return wf_error(ctx->world, msg ? WEFT_ERR_SIZE_MISMATCH : WEFT_ERR_INVALID_ARG,
                        "weft_system_message_write: message NULL or size %zu is not %zu",
                        size, (size_t)s->size);
    }
    if (!wf_stream_write(&ctx->world->alloc, s, msg)) {
        return wf_error(ctx->world, WEFT_ERR_OUT_OF_MEMORY, "out of memory writing a message");
    }
    return WEFT_OK;
}

WEFT_API const void *weft_system_message_read(weft_system_ctx *ctx, weft_message_type type,
                                              size_t size)
{
    if (!ctx_ok(ctx)) {
        return NULL;
    }
    int32_t i = ctx_msg(ctx, type, false, "weft_system_message_read");
    if (i < 0) {
        return NULL;
    }
    const wf_msg_stream *s = wf_messages_type(ctx->world, type);
    if (size != s->size) {
        wf_error(ctx->world, WEFT_ERR_SIZE_MISMATCH,
                 "weft_system_message_read: size %zu is not %zu", size, (size_t)s->size);
        return NULL;
    }
    return wf_stream_read(s, &ctx->sys->cursors[i]);
}

WEFT_API weft_entity weft_system_removed_read(weft_system_ctx *ctx, weft_component c)
{
    if (!ctx_ok(ctx)) {
        return WEFT_ENTITY_NONE;
    }
    const wf_system *sys = ctx->sys;
    for (int32_t i = 0; i < sys->nremoved; i++) {
        if (sys->removed[i] == c) {
            const wf_type_info *ti = wf_registry_get(&ctx->world->registry, c);
            const wf_msg_stream *s = wf_removed_stream(ctx->world, ti);
            const weft_entity *e = s ? wf_stream_read(s, &sys->rcursors[i]) : NULL;
            return e ? *e : WEFT_ENTITY_NONE;
        }
    }
    wf_ctx_violation(ctx, "weft_system_removed_read", "removals not declared", c);
    return WEFT_ENTITY_NONE;
}

WEFT_API void weft_system_fail(weft_system_ctx *ctx, weft_status status, const char *message)
{
    if (ctx_ok(ctx)) {
        wf_ctx_fail(ctx, status, message);
    }
}

WEFT_API weft_status weft_system_par_each(weft_system_ctx *ctx, int32_t query,
                                          weft_chunk_fn fn, void *user, int32_t min_rows)
{
    if (!ctx_ok(ctx)) {
        return WEFT_ERR_INVALID_ARG;
    }
    if (!fn) {
        return wf_error(ctx->world, WEFT_ERR_INVALID_ARG, "weft_system_par_each: fn is NULL");
    }
    if (!wf_ctx_query(ctx, query, "weft_system_par_each") ||
        wf_ctx_group_busy(ctx, query, "weft_system_par_each")) {
        return wf_error_last(ctx->world);
    }
    return wf_par_each(ctx, query, fn, user, min_rows);
}

/* src/app/extract.c - extract systems: their main-world parameters and
 * the three extraction forms (component, resource, instances).
 * SPDX-License-Identifier: MIT
 *
 * The entry points (src/api/api_extract.c) check their arguments and call
 * in here.
 *
 * An extract system is a system of the sub-world's Extract schedule whose
 * body is a trampoline (extract_run) with the record as user pointer. The
 * trampoline publishes (record, context) in thread-local storage for the
 * weft_extract_* calls, which therefore work only inside the body, during
 * an extraction (WRONG_PHASE otherwise). Extract systems carry the
 * MAIN_THREAD flag: they run one at a time on the thread running the
 * extraction, which is the main world's driver, so reading the main world
 * (its queries open iterations, its message cursors move) never races.
 *
 * Change detection against the previous extraction: a main query's
 * Added/Changed filters compare with its own last run (the end of its
 * previous complete iteration); resources compare their changed tick with
 * the record's last_tick, the main tick of its previous extraction (see
 * extract() in subapp.c for how those ticks bracket an extraction).
 *
 * The forms are exclusive systems that write the sub-world directly: a
 * value already present is overwritten in place, so the steady state of a
 * component extraction is one lookup and one copy per entity.
 */
#include "app/subapp.h"
#include "core/guard.h"
#include "world/component.h"
#include "world/entity.h"
#include "world/iteration.h"
#include "world/messages.h"

#include <stdio.h>
#include <string.h>

#define X_ALIGN _Alignof(uint64_t)

/* The extract system running on this thread, and its context. */
static _Thread_local wf_extract *tls_x;
static _Thread_local weft_system_ctx *tls_ctx;

/* ---- records ---- */

void wf_extract_free(wf_sub *sub, wf_extract *x)
{
    wf_allocator *a = &sub->parent->alloc;
    weft_world *main = sub->parent->world;
    for (int32_t i = 0; i < x->nmq; i++) {
        wf_world_query_drop(main, x->mq[i], "weft_query_destroy");
    }
    wf_free(a, x->mq, (size_t)x->nmq * sizeof *x->mq, X_ALIGN);
    wf_free(a, x->mres, (size_t)x->nmres * sizeof *x->mres, X_ALIGN);
    wf_free(a, x->mmsg, (size_t)x->nmmsg * sizeof *x->mmsg, X_ALIGN);
    wf_free(a, x->cursors, (size_t)x->nmmsg * sizeof *x->cursors, X_ALIGN);
    wf_free(a, x->scratch, x->dst_size, 16);
    wf_free(a, x->keys, (size_t)x->cap * sizeof *x->keys, X_ALIGN);
    wf_free(a, x->pub_keys, (size_t)x->cap * sizeof *x->pub_keys, X_ALIGN);
    wf_free(a, x->values, (size_t)x->cap * x->dst_size, 16);
    wf_free(a, x->pub_values, (size_t)x->cap * x->dst_size, 16);
    wf_free(a, x->perm, (size_t)x->cap * sizeof *x->perm, X_ALIGN);
    wf_free(a, x->perm_tmp, (size_t)x->cap * sizeof *x->perm_tmp, X_ALIGN);
    wf_free(a, x, sizeof *x, _Alignof(wf_extract));
}

wf_extract *wf_extract_current(weft_system_ctx *ctx, const char *fn)
{
    if (!ctx) {
        return NULL;
    }
    if (!tls_x || tls_ctx != ctx || !tls_x->sub->extracting) {
        wf_error(ctx->world, WEFT_ERR_WRONG_PHASE,
                 "%s: only an extract system may call it, during an extraction", fn);
        return NULL;
    }
    return tls_x;
}

static void run_component(weft_system_ctx *ctx, wf_extract *x);
static void run_resource(weft_system_ctx *ctx, wf_extract *x);
static void run_instances(weft_system_ctx *ctx, wf_extract *x);

static void extract_run(weft_system_ctx *ctx, void *user)
{
    wf_extract *x = user;
    if (!x->sub->extracting) {
        wf_ctx_fail(ctx, WEFT_ERR_WRONG_PHASE,
                    "an extract system runs only in its sub-app's extraction");
        return;
    }
    wf_extract *prev_x = tls_x;
    weft_system_ctx *prev_ctx = tls_ctx;
    tls_x = x;
    tls_ctx = ctx;
    switch (x->kind) {
    case WF_EXTRACT_COMPONENT:
        run_component(ctx, x);
        break;
    case WF_EXTRACT_RESOURCE:
        run_resource(ctx, x);
        break;
    case WF_EXTRACT_INSTANCES:
        run_instances(ctx, x);
        break;
    default:
        WF_CALLBACK(WF_GUARD_ANY, x->fn(ctx, x->user));
        break;
    }
    tls_x = prev_x;
    tls_ctx = prev_ctx;
    x->last_tick = x->sub->now_tick;
    x->ran = true;
}

/* ---- adding ---- */

/* A main-world query of an extract system (what weft_query_create does:
 * a shared world refuses), or NULL with the error recorded in main. */
static weft_query *main_query(weft_world *main, const weft_query_desc *desc)
{
    if (wf_world_refuse_shared(main, "weft_query_create")) {
        return NULL;
    }
    return wf_world_query_create(main, desc, "weft_query_create");
}

static bool count_ok(int32_t n, int32_t max, const void *arr)
{
    return n >= 0 && n <= max && (n == 0 || arr != NULL);
}

/* Adds `x` (kind and form fields set, the rest zero; freed on failure)
 * as an extract system described by d. */
static weft_node add_extract(wf_sub *s, const weft_extract_desc *d, wf_extract *x,
                             const char *fn)
{
    weft_world *sw = s->app->world;
    weft_world *main = s->parent->world;
    wf_allocator *a = &s->parent->alloc;
    x->sub = s;
    if (d->_start_canary || d->_end_canary ||
        !count_ok(d->main_query_count, WEFT_MAX_SYSTEM_QUERIES, d->main_queries) ||
        !count_ok(d->main_resource_count, WEFT_MAX_SYSTEM_RESOURCES, d->main_resources) ||
        !count_ok(d->main_message_count, WEFT_MAX_SYSTEM_MESSAGES, d->main_messages)) {
        wf_extract_free(s, x);
        wf_error(sw, WEFT_ERR_INVALID_ARG,
                 "%s: canary not 0, a main count out of range or an array NULL", fn);
        return 0;
    }
    for (int32_t i = 0; i < d->main_query_count; i++) {
        const weft_query_desc *q = &d->main_queries[i];
        for (int32_t t = 0; t < q->term_count && t < WEFT_MAX_TERMS; t++) {
            if (q->terms[t].access == WEFT_ACCESS_WRITE) {
                wf_extract_free(s, x);
                wf_error(sw, WEFT_ERR_ACCESS_VIOLATION,
                         "%s: main query %d term %d writes: the main world is read-only "
                         "to extract systems",
                         fn, i, t);
                return 0;
            }
        }
    }
    for (int32_t i = 0; i < d->main_resource_count; i++) {
        if (!wf_component_known(main, d->main_resources[i])) {
            wf_extract_free(s, x);
            wf_error(sw, WEFT_ERR_NOT_FOUND, "%s: main resource %u is not registered", fn,
                     d->main_resources[i]);
            return 0;
        }
    }
    for (int32_t i = 0; i < d->main_message_count; i++) {
        if (!wf_messages_type(main, d->main_messages[i])) {
            wf_extract_free(s, x);
            wf_error(sw, WEFT_ERR_NOT_FOUND, "%s: main message type %u is not registered", fn,
                     d->main_messages[i]);
            return 0;
        }
    }
    int32_t nq = d->main_query_count;
    x->mq = nq ? wf_calloc(a, (size_t)nq * sizeof *x->mq, X_ALIGN) : NULL;
    x->nmq = x->mq ? nq : 0;
    int32_t nr = d->main_resource_count;
    x->mres = nr ? wf_alloc(a, (size_t)nr * sizeof *x->mres, X_ALIGN) : NULL;
    x->nmres = x->mres ? nr : 0;
    int32_t nm = d->main_message_count;
    x->mmsg = nm ? wf_alloc(a, (size_t)nm * sizeof *x->mmsg, X_ALIGN) : NULL;
    x->cursors = nm ? wf_calloc(a, (size_t)nm * sizeof *x->cursors, X_ALIGN) : NULL;
    x->nmmsg = x->mmsg && x->cursors ? nm : 0;
    if (x->nmq != nq || x->nmres != nr || x->nmmsg != nm) {
        if (x->nmmsg != nm) {
            /* free what was allocated of the pair with the size it had */
            wf_free(a, x->mmsg, (size_t)nm * sizeof *x->mmsg, X_ALIGN);
            wf_free(a, x->cursors, (size_t)nm * sizeof *x->cursors, X_ALIGN);
            x->mmsg = NULL;
            x->cursors = NULL;
        }
        wf_extract_free(s, x);
        wf_error(sw, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
        return 0;
    }
    if (nr) {
        memcpy(x->mres, d->main_resources, (size_t)nr * sizeof *x->mres);
    }
    if (nm) {
        memcpy(x->mmsg, d->main_messages, (size_t)nm * sizeof *x->mmsg);
    }
    for (int32_t i = 0; i < nq; i++) {
        x->mq[i] = main_query(main, &d->main_queries[i]);
        if (!x->mq[i]) {
            weft_status st = wf_error_last(main);
            wf_error(sw, st, "%s: main query %d: %s", fn, i, wf_error_last_message(main));
            wf_extract_free(s, x);
            return 0;
        }
    }
    weft_system_desc sd = d->system;
    sd.fn = extract_run;
    sd.user = x;
    sd.flags |= WEFT_SYSTEM_MAIN_THREAD;
    /* the checks of weft_schedule_add_system (phase, the user's desc) */
    weft_node node = 0;
    if (wf_schedule_refuse_running(s->extract, "weft_schedule_add_system") == WEFT_OK &&
        wf_system_desc_check(sw, &sd) == WEFT_OK) {
        node = wf_schedule_add_system(s->extract, &sd);
    }
    if (!node) {
        wf_extract_free(s, x);
        return 0;
    }
    wf_extract **tail = &s->extracts;
    while (*tail) {
        tail = &(*tail)->next;
    }
    *tail = x;
    return node;
}

static wf_extract *new_record(wf_sub *s, uint8_t kind)
{
    wf_extract *x = wf_calloc(&s->parent->alloc, sizeof *x, _Alignof(wf_extract));
    if (!x) {
        wf_error(s->app->world, WEFT_ERR_OUT_OF_MEMORY, "out of memory adding an extract system");
        return NULL;
    }
    x->kind = kind;
    x->sub = s;
    return x;
}

weft_node wf_extract_add_user(wf_sub *s, const weft_extract_desc *desc, const char *fn)
{
    wf_extract *x = new_record(s, WF_EXTRACT_USER);
    if (!x) {
        return 0;
    }
    x->fn = desc->system.fn;
    x->user = desc->system.user;
    return add_extract(s, desc, x, fn);
}

/* ---- the main-world parameters ---- */

weft_status wf_extract_iter(weft_system_ctx *ctx, wf_extract *x, int32_t query, weft_iter *it)
{
    weft_world *main = x->sub->parent->world;
    weft_status st = wf_world_query_iter(main, x->mq[query], it, "weft_query_iter");
    if (st != WEFT_OK) {
        wf_error(ctx->world, st, "weft_extract_iter: %s", wf_error_last_message(main));
    }
    return st;
}

static bool res_declared(weft_system_ctx *ctx, const wf_extract *x, weft_component r,
                         const char *fn)
{
    for (int32_t i = 0; i < x->nmres; i++) {
        if (x->mres[i] == r) {
            return true;
        }
    }
    wf_error(ctx->world, WEFT_ERR_ACCESS_VIOLATION,
             "%s: main resource %u is not among the extract system's main_resources", fn, r);
    return false;
}

const void *wf_extract_resource_get(weft_system_ctx *ctx, wf_extract *x, weft_component r,
                                    size_t size)
{
    if (!res_declared(ctx, x, r, "weft_extract_resource")) {
        return NULL;
    }
    weft_world *main = x->sub->parent->world;
    const wf_type_info *ti = wf_component_known(main, r);
    if (!ti || ti->size != size) {
        wf_error(ctx->world, WEFT_ERR_SIZE_MISMATCH,
                 "weft_extract_resource: size %zu differs from main resource %u's", size, r);
        return NULL;
    }
    if (!wf_resource_has(main, r)) {
        return NULL;
    }
    return wf_resource_value(main, r, size, false);
}

/* Did main resource r change since x's previous extraction? */
static bool res_changed(const wf_extract *x, weft_component r)
{
    weft_world *main = x->sub->parent->world;
    weft_ticks t;
    if (!wf_resource_has(main, r) ||
        wf_resource_ticks(main, r, &t, "weft_resource_get_ticks") != WEFT_OK) {
        return false;
    }
    return !x->ran || wf_tick_newer(t.changed, x->last_tick, x->sub->now_tick);
}

bool wf_extract_resource_changed(weft_system_ctx *ctx, wf_extract *x, weft_component r)
{
    if (!res_declared(ctx, x, r, "weft_extract_resource_changed")) {
        return false;
    }
    return res_changed(x, r);
}

const void *wf_extract_message_read(weft_system_ctx *ctx, wf_extract *x,
                                    weft_message_type type, size_t size)
{
    for (int32_t i = 0; i < x->nmmsg; i++) {
        if (x->mmsg[i] == type) {
            weft_world *main = x->sub->parent->world;
            /* what weft_message_read does, its errors recorded in main */
            const wf_msg_stream *ms = wf_message_stream(main, type, size, "weft_message_read");
            const void *m = ms ? wf_stream_read(ms, &x->cursors[i]) : NULL;
            if (!m && wf_error_last(main) == WEFT_ERR_SIZE_MISMATCH) {
                wf_error(ctx->world, WEFT_ERR_SIZE_MISMATCH, "weft_extract_message_read: %s",
                         wf_error_last_message(main));
            }
            return m;
        }
    }
    wf_error(ctx->world, WEFT_ERR_ACCESS_VIOLATION,
             "weft_extract_message_read: main message type %u is not among the extract "
             "system's main_messages",
             type);
    return NULL;
}

/* ---- the forms ---- */

/* The size of component c of w; false when c is none (UNKNOWN_COMPONENT
 * recorded in w for an unregistered id, as weft_component_info_get does). */
static bool component_size(weft_world *w, weft_component c, size_t *out)
{
    const wf_type_info *ti = c ? wf_component_known(w, c) : NULL;
    if (!ti) {
        return false;
    }
    *out = ti->size;
    return true;
}

/* Writes `val` (dst_size bytes; NULL for a tag) as dst on the live twin:
 * in place when present (the steady state: one lookup), else inserted. */
static weft_status put_value(weft_world *sw, const wf_extract *x, weft_entity twin,
                             const void *val)
{
    if (x->dst_size) {
        /* NULL without an error when the twin lacks it */
        void *p = wf_entity_get_mut(sw, twin, x->dst, x->dst_size);
        if (p) {
            memcpy(p, val, x->dst_size);
            return WEFT_OK;
        }
    }
    return wf_entity_insert(sw, twin, x->dst, val, x->dst_size, "weft_insert");
}

static void run_component(weft_system_ctx *ctx, wf_extract *x)
{
    weft_world *sw = ctx->world;
    weft_world *main = x->sub->parent->world;
    for (int32_t q = 0; q < x->nmq; q++) {
        weft_iter it;
        if (wf_world_query_iter(main, x->mq[q], &it, "weft_query_iter") != WEFT_OK) {
            wf_ctx_fail(ctx, wf_error_last(main), wf_error_last_message(main));
            return;
        }
        while (wf_world_iter_next(&it)) {
            int32_t n = wf_world_iter_count(&it);
            const weft_entity *ents = wf_world_iter_entities(&it);
            const weft_entity *twins = wf_world_iter_field(&it, 0, sizeof(weft_entity));
            const unsigned char *src =
                x->src_size ? wf_world_iter_field(&it, 1, x->src_size) : NULL;
            for (int32_t i = 0; i < n; i++) {
                weft_entity twin = twins[i];
                if (WF_UNLIKELY(wf_entity_live(sw, twin) == NULL)) {
                    char msg[160];
                    snprintf(msg, sizeof msg,
                             "extracting onto twin %u:%u of main entity %u:%u: the twin was "
                             "despawned",
                             wf_handle_index(twin), wf_handle_gen(twin),
                             wf_handle_index(ents[i]), wf_handle_gen(ents[i]));
                    wf_ctx_fail(ctx, WEFT_ERR_STALE_ENTITY, msg);
                    continue;
                }
                const void *sp = src ? src + (size_t)i * x->src_size : NULL;
                weft_status st;
                if (x->transform) {
                    if (x->dst_size) {
                        memset(x->scratch, 0, x->dst_size);
                    }
                    bool keep;
                    WF_CALLBACK(WF_GUARD_ANY,
                                keep = x->transform(ents[i], sp, x->scratch, x->user));
                    if (keep) {
                        st = put_value(sw, x, twin, x->scratch);
                    } else {
                        st = wf_entity_remove(sw, twin, x->dst, "weft_remove");
                    }
                } else {
                    st = put_value(sw, x, twin, sp);
                }
                if (st != WEFT_OK) {
                    wf_ctx_fail(ctx, st, wf_error_last_message(sw));
                }
            }
        }
    }
}

static weft_node add_form(wf_sub *s, wf_extract *x, const char *name, const char *prefix,
                          const weft_query_desc *queries, int32_t nq, const weft_component *res,
                          int32_t nr, const char *fn)
{
    char buf[96];
    if (!name) {
        snprintf(buf, sizeof buf, "%s.%u", prefix, x->src);
        name = buf;
    }
    if (x->dst_size) {
        x->scratch = wf_alloc(&s->parent->alloc, x->dst_size, 16);
        if (!x->scratch) {
            wf_extract_free(s, x);
            wf_error(s->app->world, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
            return 0;
        }
    }
    weft_extract_desc d;
    memset(&d, 0, sizeof d);
    d.system.name = name;
    d.system.fn = extract_run;
    d.system.flags = WEFT_SYSTEM_EXCLUSIVE;
    d.main_queries = queries;
    d.main_query_count = nq;
    d.main_resources = res;
    d.main_resource_count = nr;
    return add_extract(s, &d, x, fn);
}

/* Checks the (main, sub) ids and sizes of a form; records the error. */
static bool form_ids(wf_sub *s, weft_component src, weft_component dst, bool transform,
                     size_t *src_size, size_t *dst_size, const char *fn)
{
    weft_world *sw = s->app->world;
    if (!component_size(s->parent->world, src, src_size)) {
        wf_error(sw, WEFT_ERR_UNKNOWN_COMPONENT, "%s: %u is no component of the main world", fn,
                 src);
        return false;
    }
    if (!component_size(sw, dst, dst_size)) {
        wf_error(sw, WEFT_ERR_UNKNOWN_COMPONENT, "%s: %u is no component of the sub-world", fn,
                 dst);
        return false;
    }
    if (!transform && *src_size != *dst_size) {
        wf_error(sw, WEFT_ERR_SIZE_MISMATCH,
                 "%s: without a transform the sizes must be equal (main %zu, sub %zu)", fn,
                 *src_size, *dst_size);
        return false;
    }
    return true;
}

weft_node wf_extract_add_component(wf_sub *s, const weft_extract_component_desc *desc,
                                   const char *fn)
{
    size_t ss, ds;
    if (!form_ids(s, desc->main_component, desc->sub_component, desc->transform != NULL, &ss,
                  &ds, fn)) {
        return 0;
    }
    wf_extract *x = new_record(s, WF_EXTRACT_COMPONENT);
    if (!x) {
        return 0;
    }
    x->src = desc->main_component;
    x->dst = desc->sub_component;
    x->src_size = ss;
    x->dst_size = ds;
    x->transform = desc->transform;
    x->user = desc->user;
    x->changed_only = desc->changed_only;
    /* query 0: every synced entity with the source (or those whose source
     * changed); query 1 (changed_only): those synced since the previous
     * extraction, whose source may be old */
    weft_query_desc q[2];
    memset(q, 0, sizeof q);
    for (int k = 0; k < 2; k++) {
        q[k].terms[0].id = s->sub_entity;
        q[k].terms[0].access = WEFT_ACCESS_READ;
        q[k].terms[1].id = x->src;
        q[k].terms[1].access = ss ? WEFT_ACCESS_READ : WEFT_ACCESS_NONE;
        q[k].terms[1].oper = ss ? WEFT_OPER_AND : WEFT_OPER_WITH;
        q[k].term_count = 2;
    }
    if (desc->changed_only) {
        q[0].terms[1].filter = WEFT_FILTER_CHANGED;
        q[1].terms[0].filter = WEFT_FILTER_CHANGED;
    }
    return add_form(s, x, desc->name, "extract", q, desc->changed_only ? 2 : 1, NULL, 0, fn);
}

static void run_resource(weft_system_ctx *ctx, wf_extract *x)
{
    weft_world *sw = ctx->world;
    weft_world *main = x->sub->parent->world;
    weft_status st = WEFT_OK;
    if (!wf_resource_has(main, x->src)) {
        if (wf_resource_has(sw, x->dst)) {
            st = wf_resource_unset(sw, x->dst, "weft_resource_remove");
        }
    } else if (res_changed(x, x->src) || !wf_resource_has(sw, x->dst)) {
        const void *src = x->src_size ? wf_resource_value(main, x->src, x->src_size, false) : NULL;
        const void *val = src;
        bool keep = true;
        if (x->transform) {
            if (x->dst_size) {
                memset(x->scratch, 0, x->dst_size);
            }
            WF_CALLBACK(WF_GUARD_ANY, keep = x->transform(0, src, x->scratch, x->user));
            val = x->scratch;
        }
        if (keep) {
            st = wf_resource_set(sw, x->dst, val, x->dst_size, "weft_resource_insert");
        } else if (wf_resource_has(sw, x->dst)) {
            st = wf_resource_unset(sw, x->dst, "weft_resource_remove");
        }
    }
    if (st != WEFT_OK) {
        wf_ctx_fail(ctx, st, wf_error_last_message(sw));
    }
}

weft_node wf_extract_add_resource(wf_sub *s, const weft_extract_resource_desc *desc,
                                  const char *fn)
{
    size_t ss, ds;
    if (!form_ids(s, desc->main_resource, desc->sub_resource, desc->transform != NULL, &ss, &ds,
                  fn)) {
        return 0;
    }
    wf_extract *x = new_record(s, WF_EXTRACT_RESOURCE);
    if (!x) {
        return 0;
    }
    x->src = desc->main_resource;
    x->dst = desc->sub_resource;
    x->src_size = ss;
    x->dst_size = ds;
    x->transform = desc->transform;
    x->user = desc->user;
    return add_form(s, x, desc->name, "extract_resource", NULL, 0, &x->src, 1, fn);
}

/* ---- instances ---- */

static bool inst_reserve(wf_extract *x, uint64_t need)
{
    if (need <= x->cap) {
        return true;
    }
    wf_allocator *a = &x->sub->parent->alloc;
    uint32_t nc = wf_grow_cap(x->cap, need, 64u, UINT32_MAX / 4, x->dst_size + 24);
    if (nc == 0) {
        return false;
    }
    weft_entity *k = wf_alloc(a, (size_t)nc * sizeof *k, X_ALIGN);
    weft_entity *pk = wf_alloc(a, (size_t)nc * sizeof *pk, X_ALIGN);
    unsigned char *v = wf_alloc(a, (size_t)nc * x->dst_size, 16);
    unsigned char *pv = wf_alloc(a, (size_t)nc * x->dst_size, 16);
    uint32_t *p = wf_alloc(a, (size_t)nc * sizeof *p, X_ALIGN);
    uint32_t *pt = wf_alloc(a, (size_t)nc * sizeof *pt, X_ALIGN);
    if (!k || !pk || !v || !pv || !p || !pt) {
        wf_free(a, k, (size_t)nc * sizeof *k, X_ALIGN);
        wf_free(a, pk, (size_t)nc * sizeof *pk, X_ALIGN);
        wf_free(a, v, (size_t)nc * x->dst_size, 16);
        wf_free(a, pv, (size_t)nc * x->dst_size, 16);
        wf_free(a, p, (size_t)nc * sizeof *p, X_ALIGN);
        wf_free(a, pt, (size_t)nc * sizeof *pt, X_ALIGN);
        return false;
    }
    /* staged entries survive (a reserve happens mid-extraction); the
     * published map is rebuilt after staging */
    uint32_t old = x->cap;
    if (old) {
        memcpy(k, x->keys, (size_t)old * sizeof *k);
        memcpy(v, x->values, (size_t)old * x->dst_size);
    }
    wf_free(a, x->keys, (size_t)old * sizeof *x->keys, X_ALIGN);
    wf_free(a, x->pub_keys, (size_t)old * sizeof *x->pub_keys, X_ALIGN);
    wf_free(a, x->values, (size_t)old * x->dst_size, 16);
    wf_free(a, x->pub_values, (size_t)old * x->dst_size, 16);
    wf_free(a, x->perm, (size_t)old * sizeof *x->perm, X_ALIGN);
    wf_free(a, x->perm_tmp, (size_t)old * sizeof *x->perm_tmp, X_ALIGN);
    x->keys = k;
    x->pub_keys = pk;
    x->values = v;
    x->pub_values = pv;
    x->perm = p;
    x->perm_tmp = pt;
    x->cap = nc;
    return true;
}

/* Sorts perm[0..n) by keys (stable bottom-up merge sort: keys are unique,
 * stability only keeps the result independent of the algorithm). */
static void sort_perm(const weft_entity *keys, uint32_t *perm, uint32_t *tmp, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        perm[i] = i;
    }
    uint32_t *src = perm;
    uint32_t *dst = tmp;
    for (uint32_t width = 1; width < n; width *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * width) {
            uint32_t mid = lo + width < n ? lo + width : n;
            uint32_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            uint32_t i = lo;
            uint32_t j = mid;
            uint32_t k = lo;
            while (i < mid && j < hi) {
                dst[k++] = keys[src[j]] < keys[src[i]] ? src[j++] : src[i++];
            }
            while (i < mid) {
                dst[k++] = src[i++];
            }
            while (j < hi) {
                dst[k++] = src[j++];
            }
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != perm) {
        memcpy(perm, src, (size_t)n * sizeof *perm);
    }
}

static void run_instances(weft_system_ctx *ctx, wf_extract *x)
{
    weft_world *sw = ctx->world;
    weft_world *main = x->sub->parent->world;
    weft_iter it;
    if (wf_world_query_iter(main, x->mq[0], &it, "weft_query_iter") != WEFT_OK) {
        wf_ctx_fail(ctx, wf_error_last(main), wf_error_last_message(main));
        return;
    }
    uint32_t count = 0;
    while (wf_world_iter_next(&it)) {
        int32_t n = wf_world_iter_count(&it);
        const weft_entity *ents = wf_world_iter_entities(&it);
        const unsigned char *src = x->src_size ? wf_world_iter_field(&it, 0, x->src_size) : NULL;
        if (!inst_reserve(x, (uint64_t)count + (uint64_t)n)) {
            wf_world_iter_fini(&it);
            wf_ctx_fail(ctx, WEFT_ERR_OUT_OF_MEMORY, "out of memory growing an instance map");
            return;
        }
        for (int32_t i = 0; i < n; i++) {
            const void *sp = src ? src + (size_t)i * x->src_size : NULL;
            unsigned char *slot = x->values + (size_t)count * x->dst_size;
            bool keep = true;
            if (x->transform) {
                memset(slot, 0, x->dst_size);
                WF_CALLBACK(WF_GUARD_ANY, keep = x->transform(ents[i], sp, slot, x->user));
            } else {
                memcpy(slot, sp, x->dst_size);
            }
            if (keep) {
                x->keys[count++] = ents[i];
            }
        }
    }
    sort_perm(x->keys, x->perm, x->perm_tmp, count);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t p = x->perm[i];
        x->pub_keys[i] = x->keys[p];
        memcpy(x->pub_values + (size_t)i * x->dst_size, x->values + (size_t)p * x->dst_size,
               x->dst_size);
    }
    weft_instance_map map;
    memset(&map, 0, sizeof map);
    map.count = (int32_t)count;
    map.instance_size = x->dst_size;
    map.keys = x->pub_keys;
    map.values = x->pub_values;
    weft_status st = wf_resource_set(sw, x->dst, &map, sizeof map, "weft_resource_insert");
    if (st != WEFT_OK) {
        wf_ctx_fail(ctx, st, wf_error_last_message(sw));
    }
}

/* weft_world_hash of a map resource: its entries, not the addresses of
 * the arrays holding them (which differ from one run or world to the
 * next), so equal extractions hash equal. */
static void inst_map_hash(const void *value, wf_hash_feed_fn feed, void *state)
{
    const weft_instance_map *m = value;
    int32_t count = m->count > 0 && m->keys ? m->count : 0;
    uint64_t size = m->instance_size;
    feed(state, &count, sizeof count);
    feed(state, &size, sizeof size);
    if (count > 0) {
        feed(state, m->keys, (size_t)count * sizeof *m->keys);
        if (m->values) {
            feed(state, m->values, (size_t)count * m->instance_size);
        }
    }
}

weft_component wf_extract_add_instances(wf_sub *s, const weft_extract_instances_desc *desc,
                                        const char *fn)
{
    weft_world *sw = s->app->world;
    size_t ss;
    if (!component_size(s->parent->world, desc->main_component, &ss)) {
        wf_error(sw, WEFT_ERR_UNKNOWN_COMPONENT, "%s: %u is no component of the main world", fn,
                 desc->main_component);
        return 0;
    }
    if (!desc->extract && ss != desc->instance_size) {
        wf_error(sw, WEFT_ERR_SIZE_MISMATCH,
                 "%s: without an extract function instance_size must equal the component's "
                 "size (%zu)",
                 fn, ss);
        return 0;
    }
    if (wf_registry_lookup(&sw->registry, desc->map_name)) {
        wf_error(sw, WEFT_ERR_ALREADY_EXISTS, "%s: the sub-world has a component '%s'", fn,
                 desc->map_name);
        return 0;
    }
    weft_component_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.name = desc->map_name;
    cd.size = sizeof(weft_instance_map);
    weft_component map = wf_component_register(sw, &cd);
    if (!map) {
        return 0;
    }
    wf_type_info *mti = wf_registry_get(&sw->registry, map);
    mti->hash_value = inst_map_hash;
    mti->save_zeroed = true; /* a snapshot holds an empty map */
    wf_extract *x = new_record(s, WF_EXTRACT_INSTANCES);
    if (!x) {
        return 0;
    }
    x->src = desc->main_component;
    x->dst = map;
    x->src_size = ss;
    x->dst_size = desc->instance_size;
    x->transform = desc->extract;
    x->user = desc->user;
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0].id = x->src;
    q.terms[0].access = ss ? WEFT_ACCESS_READ : WEFT_ACCESS_NONE;
    q.terms[0].oper = ss ? WEFT_OPER_AND : WEFT_OPER_WITH;
    q.term_count = 1;
    char name[96];
    snprintf(name, sizeof name, "extract_instances.%s", desc->map_name);
    /* the scratch is not needed: values are transformed in place */
    size_t keep = x->dst_size;
    x->dst_size = 0;
    weft_node n = add_form(s, x, name, "extract_instances", &q, 1, NULL, 0, fn);
    if (n) {
        x->dst_size = keep;
    }
    return n ? map : 0;
}

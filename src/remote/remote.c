/* src/remote/remote.c - weft_remote lifecycle, the request queue, polling
 * and the app plugin.
 * SPDX-License-Identifier: MIT
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "remote_internal.h"

static weft_remote *wr_check(const weft_remote *r)
{
    return (r && r->magic == WR_MAGIC) ? (weft_remote *)(uintptr_t)r : NULL;
}

void wr_fail(weft_remote *r, weft_status status, const char *fmt, ...)
{
    va_list ap;
    r->last_status = status;
    va_start(ap, fmt);
    vsnprintf(r->last_error, sizeof r->last_error, fmt, ap);
    va_end(ap);
}

static weft_status wr_limit(int32_t v, int32_t def, int32_t *out)
{
    if (v < 0) {
        return WEFT_ERR_INVALID_ARG;
    }
    *out = v ? v : def;
    return WEFT_OK;
}

WEFT_API weft_status weft_remote_create(const weft_remote_desc *desc, weft_remote **out)
{
    if (!out) {
        return WEFT_ERR_INVALID_ARG;
    }
    *out = NULL;
    if (!desc || desc->_start_canary || desc->_end_canary) {
        return WEFT_ERR_INVALID_ARG;
    }
    if (!desc->world) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (desc->flags & ~(uint32_t)(WEFT_REMOTE_ALLOW_WRITES | WEFT_REMOTE_NO_SERVER)) {
        return WEFT_ERR_INVALID_ARG;
    }
    if (desc->port < WEFT_REMOTE_ANY_PORT || desc->port > 65535) {
        return WEFT_ERR_INVALID_ARG;
    }
    if (desc->token && (desc->token[0] == '\0' || strlen(desc->token) > WR_TOKEN_MAX)) {
        return WEFT_ERR_INVALID_ARG;
    }
    struct in_addr addr;
    if (inet_pton(AF_INET, desc->bind_address ? desc->bind_address : "127.0.0.1", &addr) != 1) {
        return WEFT_ERR_INVALID_ARG;
    }
    weft_remote *r = calloc(1, sizeof *r);
    if (!r) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    if (wr_limit(desc->max_request_bytes, WR_DEFAULT_MAX_REQUEST_BYTES, &r->max_request_bytes) ||
        wr_limit(desc->max_depth, WR_DEFAULT_MAX_DEPTH, &r->max_depth) ||
        wr_limit(desc->max_batch, WR_DEFAULT_MAX_BATCH, &r->max_batch) ||
        wr_limit(desc->max_connections, WR_DEFAULT_MAX_CONNECTIONS, &r->max_connections) ||
        wr_limit(desc->timeout_ms, WR_DEFAULT_TIMEOUT_MS, &r->timeout_ms) ||
        wr_limit(desc->poll_budget, WR_DEFAULT_POLL_BUDGET, &r->poll_budget)) {
        free(r);
        return WEFT_ERR_INVALID_ARG;
    }
    r->magic = WR_MAGIC;
    r->world = desc->world;
    r->flags = desc->flags;
    r->bind_ip = addr.s_addr;
    r->port = desc->port == 0 ? WEFT_REMOTE_DEFAULT_PORT
              : desc->port == WEFT_REMOTE_ANY_PORT ? 0 : desc->port;
    if (desc->token) {
        r->token_len = strlen(desc->token);
        memcpy(r->token, desc->token, r->token_len + 1);
    }
    if (pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r);
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    if (pthread_cond_init(&r->cond, NULL) != 0) {
        pthread_mutex_destroy(&r->lock);
        free(r);
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    if (!(r->flags & WEFT_REMOTE_NO_SERVER)) {
        weft_status st = wr_http_start(r);
        if (st != WEFT_OK) {
            pthread_cond_destroy(&r->cond);
            pthread_mutex_destroy(&r->lock);
            free(r);
            return st;
        }
    } else {
        r->port = 0;
    }
    *out = r;
    return WEFT_OK;
}

WEFT_API weft_status weft_remote_destroy(weft_remote *remote)
{
    weft_remote *r = wr_check(remote);
    if (!r) {
        return WEFT_OK;
    }
    pthread_mutex_lock(&r->lock);
    r->stopping = 1;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    /* Joins every connection thread: each sees `stopping`, takes its
     * request off the queue and answers with an error. */
    wr_http_stop(r);
    /* every connection has ended: only the list's references are left */
    while (r->streams) {
        wr_stream *st = r->streams;
        r->streams = st->next;
        if (--st->refs == 0) {
            wr_stream_free(st);
        }
    }
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->lock);
    free(r->last_response);
    free(r->scratch);
    r->magic = 0;
    free(r);
    return WEFT_OK;
}

WEFT_API int32_t weft_remote_port(const weft_remote *remote)
{
    const weft_remote *r = wr_check(remote);
    return r ? r->port : 0;
}

static uint64_t wr_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Answers q (taken: RUNNING); a +watch whose value did not change is
 * parked again until its hold time passes. */
/* Answers q, or parks it again (a +watch with nothing new). Returns true
 * when it was answered. q must not be touched afterwards: once answered
 * (or parked and then timed out) its HTTP thread frees it. */
static bool wr_answer(weft_remote *r, wr_request *q, bool fresh)
{
    uint64_t now = wr_now_ns();
    bool may_hold = fresh || now < q->hold_until;
    int oom = 0, hold = 0;
    size_t rlen = 0;
    char *resp = wr_rpc_handle(r, q->body, q->len, may_hold, &hold, &rlen, &oom, &q->watch);
    if (oom) {
        resp = wr_rpc_error_text(WEFT_REMOTE_INTERNAL_ERROR, "out of memory", &rlen);
    }
    pthread_mutex_lock(&r->lock);
    if (hold) {
        if (fresh) {
            q->hold_until = now + (uint64_t)r->timeout_ms * 500000u; /* half the timeout */
        }
        q->state = WR_REQ_PARKED;
        q->next = r->parked;
        r->parked = q;
    } else {
        q->response = resp;
        q->response_len = rlen;
        q->state = WR_REQ_DONE;
        pthread_cond_broadcast(&r->cond);
        wr_http_wake(r);
    }
    pthread_mutex_unlock(&r->lock);
    return !hold;
}

uint32_t wr_watch_since(weft_remote *r)
{
    if (!r->since_taken) {
        r->since_now = weft_world_change_tick(r->world);
        weft_world_increment_change_tick(r->world);
        r->since_taken = true;
    }
    return r->since_now;
}

void wr_stream_free(wr_stream *st)
{
    free(st->body);
    free(st->pending);
    free(st->watch.prev_ids);
    free(st);
}

/* Checks every open stream: drops those whose connection ended, and
 * queues an event on those whose value changed (replacing an unsent
 * one: a slow reader gets the newest value, never a backlog). Returns
 * how many events were queued. Never waits for a connection. */
static int32_t wr_poll_streams(weft_remote *r)
{
    /* Only the driver unlinks streams (connection threads push new ones
     * at the head), and the list holds a reference, so the streams
     * reachable from `list` stay valid while they are checked below. */
    pthread_mutex_lock(&r->lock);
    for (wr_stream **pp = &r->streams; *pp;) {
        wr_stream *st = *pp;
        if (st->gone) {
            *pp = st->next;
            r->stream_count--;
            if (--st->refs == 0) {
                wr_stream_free(st);
            }
            continue;
        }
        pp = &st->next;
    }
    wr_stream *list = r->streams;
    pthread_mutex_unlock(&r->lock);
    /* round robin: when this poll's re-evaluations run out, the next poll
     * starts where this one stopped */
    int32_t n = 0;
    for (wr_stream *st = list; st; st = st->next) {
        n++;
    }
    int32_t start = n ? r->stream_rr % n : 0;
    int32_t events = 0;
    for (int32_t k = 0; k < n; k++) {
        wr_stream *st = list;
        for (int32_t i = (start + k) % n; i > 0; i--) {
            st = st->next;
        }
        if (r->eval_left <= 0) {
            r->stream_rr = (start + k) % n;
            break;
        }
        if (st->finished) { /* written by the driver only */
            continue;
        }
        bool ends = false;
        int oom = 0;
        size_t len = 0;
        char *text = wr_rpc_stream(r, st, &len, &ends, &oom);
        if (oom) {
            text = wr_rpc_error_text(WEFT_REMOTE_INTERNAL_ERROR, "out of memory", &len);
            ends = true;
        }
        if (!text && !ends) {
            continue;
        }
        pthread_mutex_lock(&r->lock);
        free(st->pending);
        st->pending = text;
        st->pending_len = text ? len : 0;
        st->finished = ends;
        st->events += text != NULL;
        pthread_cond_broadcast(&r->cond);
        wr_http_wake(r);
        pthread_mutex_unlock(&r->lock);
        events += text != NULL;
    }
    r->stream_events += events;
    return events;
}

WEFT_API int32_t weft_remote_poll(weft_remote *remote, int32_t budget)
{
    weft_remote *r = wr_check(remote);
    if (!r) {
        return -1;
    }
    if (budget < 1) {
        wr_fail(r, WEFT_ERR_INVALID_ARG, "weft_remote_poll: budget %d < 1", (int)budget);
        return -1;
    }
    r->since_taken = false;
    /* Held watches and streams whose value may have changed are
     * re-evaluated, at most `budget` of them per poll (the rest at the
     * next); queued requests are answered, at most `budget` of them. */
    r->eval_left = budget;
    /* Held +watch requests first (at most max_connections of them). */
    pthread_mutex_lock(&r->lock);
    wr_request *held = r->parked;
    r->parked = NULL;
    for (wr_request *q = held; q; q = q->next) {
        q->state = WR_REQ_RUNNING;
    }
    bool streams = r->streams != NULL;
    pthread_mutex_unlock(&r->lock);
    int32_t done = 0;
    while (held) {
        wr_request *q = held;
        held = q->next;
        q->next = NULL;
        done += wr_answer(r, q, false);
    }
    if (streams) {
        done += wr_poll_streams(r);
    }
    int32_t taken = 0;
    while (taken < budget) {
        pthread_mutex_lock(&r->lock);
        wr_request *q = r->head;
        if (q) {
            r->head = q->next;
            if (!r->head) {
                r->tail = NULL;
            }
            q->next = NULL;
            q->state = WR_REQ_RUNNING;
        }
        pthread_mutex_unlock(&r->lock);
        if (!q) {
            break;
        }
        (void)wr_answer(r, q, true);
        taken++;
    }
    return done + taken;
}

WEFT_API const char *weft_remote_handle(weft_remote *remote, const char *text, size_t len,
                                        size_t *out_len)
{
    weft_remote *r = wr_check(remote);
    if (out_len) {
        *out_len = 0;
    }
    if (!r) {
        return NULL;
    }
    if (!text && len > 0) {
        wr_fail(r, WEFT_ERR_INVALID_ARG, "weft_remote_handle: text is NULL with len %zu", len);
        return NULL;
    }
    free(r->last_response);
    r->last_response = NULL;
    int oom = 0, hold = 0;
    size_t rlen = 0;
    r->since_taken = false;
    char *resp = wr_rpc_handle(r, text ? text : "", len, false, &hold, &rlen, &oom, NULL);
    if (oom) {
        wr_fail(r, WEFT_ERR_OUT_OF_MEMORY, "weft_remote_handle: out of memory");
        return NULL;
    }
    r->last_response = resp;
    if (out_len) {
        *out_len = resp ? rlen : 0;
    }
    return resp;
}

WEFT_API weft_status weft_remote_last_status(const weft_remote *remote)
{
    const weft_remote *r = wr_check(remote);
    return r ? r->last_status : WEFT_ERR_INVALID_HANDLE;
}

WEFT_API const char *weft_remote_last_error(const weft_remote *remote)
{
    const weft_remote *r = wr_check(remote);
    return r ? r->last_error : "invalid remote handle";
}

WEFT_API weft_status weft_remote_counts(const weft_remote *remote, int64_t *out_requests,
                                        int64_t *out_errors)
{
    const weft_remote *r = wr_check(remote);
    if (!r) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (out_requests) {
        *out_requests = r->requests;
    }
    if (out_errors) {
        *out_errors = r->errors;
    }
    return WEFT_OK;
}

WEFT_API weft_status weft_remote_get_stats(const weft_remote *remote, weft_remote_stats *out)
{
    weft_remote *r = wr_check(remote);
    if (!r) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out) {
        wr_fail(r, WEFT_ERR_INVALID_ARG, "weft_remote_get_stats: out is NULL");
        return WEFT_ERR_INVALID_ARG;
    }
    memset(out, 0, sizeof *out);
    out->requests = r->requests;
    out->errors = r->errors;
    out->watch_probes = r->watch_checks;
    out->watch_evaluations = r->watch_evals;
    out->stream_events = r->stream_events;
    pthread_mutex_lock(&r->lock);
    for (const wr_request *q = r->parked; q; q = q->next) {
        out->held_watches++;
    }
    out->open_streams = r->stream_count;
    pthread_mutex_unlock(&r->lock);
    return WEFT_OK;
}

/* ---- app plugin ---- */

static void wr_poll_system(weft_system_ctx *ctx, void *user)
{
    weft_remote *r = user;
    (void)ctx;
    weft_remote_poll(r, r->poll_budget);
    /* What the requests' weft calls refused (a client's bad input) was
     * answered to the client: it is not this system's failure, and must
     * not make the host's weft_app_update fail. */
    weft_clear_error(r->world);
}

static weft_status wr_plugin_build(weft_app *app, void *user)
{
    weft_system_desc sd = {0};
    sd.name = "weft.remote_poll";
    sd.fn = wr_poll_system;
    sd.user = user;
    sd.flags = WEFT_SYSTEM_EXCLUSIVE | WEFT_SYSTEM_NOT_STEPPABLE;
    return weft_app_add_system(app, WEFT_APP_LAST, &sd) ? WEFT_OK
                                                         : weft_last_status(weft_app_world(app));
}

static void wr_plugin_free(void *user)
{
    weft_remote_destroy(user);
}

WEFT_API weft_status weft_remote_add_plugin(weft_app *app, const weft_remote_desc *desc,
                                            weft_remote **out)
{
    if (out) {
        *out = NULL;
    }
    weft_world *world = weft_app_world(app);
    if (!world) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (weft_app_has_plugin(app, "weft.remote")) {
        return WEFT_ERR_ALREADY_EXISTS;
    }
    weft_remote_desc d = {0};
    if (desc) {
        d = *desc;
    }
    d.world = world;
    weft_remote *r = NULL;
    weft_status st = weft_remote_create(&d, &r);
    if (st != WEFT_OK) {
        return st;
    }
    weft_plugin_desc pd = {0};
    pd.name = "weft.remote";
    pd.build = wr_plugin_build;
    pd.user = r;
    pd.free_user = wr_plugin_free;
    st = weft_app_add_plugin(app, &pd);
    if (st != WEFT_OK) {
        weft_remote_destroy(r);
        return st;
    }
    r->app = app;
    if (out) {
        *out = r;
    }
    return WEFT_OK;
}

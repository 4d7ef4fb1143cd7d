/* src/remote/remote_internal.h - shared state of the weft_remote library.
 * SPDX-License-Identifier: MIT
 *
 * weft_remote is a client of weft's public API (include/weft.h) only: it
 * calls weft_* functions and never wf_* internals (tests/layering checks
 * its objects). Its own cross-file functions use the wr_ prefix.
 *
 * Threads: the HTTP server's connection threads (http.c) fill a request,
 * push it on the queue and wait on its condition; the driver pops requests
 * in weft_remote_poll, answers them with wr_rpc_handle (rpc.c) and wakes
 * the waiter. Only the queue and the request states are shared, under
 * `lock`.
 */
#ifndef WEFT_REMOTE_INTERNAL_H
#define WEFT_REMOTE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft_remote.h"

#define WR_MAGIC 0x57524d54u /* "WRMT" */

/* ---- the remote's limits, together (weft's own are in src/core/config.h) ---- */

/* Bytes of the bearer token. */
#define WR_TOKEN_MAX 256
/* A request must be complete this long after its connection was accepted
 * (http.c); a client that stops reading an answer is dropped after as
 * long without progress. */
#define WR_REQUEST_DEADLINE_MS 10000
/* Bytes of a request's head (request line and headers). */
#define WR_HEAD_MAX 8192
/* A held event stream gets a keep-alive comment this often. */
#define WR_STREAM_KEEPALIVE_NS 5000000000ull
/* The cost a request's JSON may build (rpc.c: a container weighs 4, any
 * other value 1), checked by a scan before parsing. */
#define WR_COST_MAX (1 << 17)
/* Defaults of weft_remote_desc's zero fields (weft_remote.h). */
#define WR_DEFAULT_MAX_REQUEST_BYTES (1 << 20)
#define WR_DEFAULT_MAX_DEPTH 32
#define WR_DEFAULT_MAX_BATCH 64
#define WR_DEFAULT_MAX_CONNECTIONS 16
#define WR_DEFAULT_TIMEOUT_MS 5000
#define WR_DEFAULT_POLL_BUDGET 16

typedef enum wr_req_state {
    WR_REQ_QUEUED = 0,  /* on the queue, owned by the waiter */
    WR_REQ_RUNNING = 1, /* taken by the driver */
    WR_REQ_DONE = 2,    /* answered: response set */
    WR_REQ_PARKED = 3,  /* a +watch held on the parked list, owned by the waiter */
} wr_req_state;

/* What a +watch client has seen: the change tick its value was read at
 * (`since`: writes stamped later are newer), a hash of the structure the
 * value depends on (entities matched, their archetypes: `shape`) and a
 * hash of the value itself. Carried in the etag for a long poll, kept by
 * the server for a stream. */
typedef struct wr_watch {
    bool loaded;   /* the etag param was read (or there is none) */
    bool primed;   /* since/shape/hash describe a value the client has */
    uint32_t since;
    uint64_t shape;
    uint64_t hash;
    /* bevy_remote's watches (world.get_components+watch,
     * world.list_components+watch): what the previous answer saw present,
     * to report removals */
    bool failed;              /* the previous answer was an error (hash: its hash) */
    uint64_t present_bits;    /* get_components: the names present, by index (64 first) */
    uint32_t *prev_ids;       /* list_components: the components present (malloc'ed) */
    int32_t prev_n;
} wr_watch;

/* One HTTP request waiting for the driver. Allocated and freed by its
 * connection thread; the driver only reads `body` and sets the answer. */
typedef struct wr_request {
    struct wr_request *next;
    char *body;
    size_t len;
    wr_req_state state;
    char *response;     /* malloc'ed by the driver, NULL: no content */
    uint64_t hold_until;  /* PARKED: monotonic ns after which it is answered */
    size_t response_len;
    wr_watch watch;       /* a +watch: what the client has */
} wr_request;

/* A server-sent-event stream: one +watch request whose changes the
 * driver pushes (POST / with "Accept: text/event-stream"). Shared by the
 * driver (on r->streams) and the connection thread sending it; freed by
 * whichever drops the last reference, under r->lock. */
typedef struct wr_stream {
    struct wr_stream *next;
    char *body;           /* the request, immutable */
    size_t len;
    int refs;             /* the list's and the connection's */
    bool gone;            /* the connection ended: the driver drops it */
    bool finished;        /* an answer that ends the stream is pending */
    char *pending;        /* the newest unsent event (older ones are replaced) */
    size_t pending_len;
    uint64_t next_keepalive; /* monotonic ns, server thread only */
    uint64_t events;      /* events queued so far */
    wr_watch watch;       /* driver only */
    struct weft_remote *remote;
} wr_stream;

struct wr_server;


struct weft_remote {
    uint32_t magic;
    weft_world *world;
    weft_app *app;      /* set by weft_remote_add_plugin: lists its schedules */
    uint32_t flags;
    int32_t port;
    int32_t max_request_bytes;
    int32_t max_depth;
    int32_t max_batch;
    int32_t max_connections;
    int32_t timeout_ms;
    int32_t poll_budget;
    char token[WR_TOKEN_MAX + 1];
    size_t token_len;
    uint32_t bind_ip;   /* network byte order */

    /* shared with the connection threads */
    pthread_mutex_t lock;
    pthread_cond_t cond;     /* a request was answered, or stopping */
    wr_request *head, *tail;
    wr_request *parked;      /* held +watch requests */
    wr_stream *streams;      /* open event streams */
    int32_t stream_count;
    int stopping;

    struct wr_server *server; /* http.c */

    /* driver only */
    char *last_response;      /* what weft_remote_handle returned */
    int64_t requests, errors;
    weft_status last_status;
    char last_error[512];
    char *scratch;            /* component JSON text */
    size_t scratch_cap;
    bool since_taken;         /* this poll's watch tick was taken */
    uint32_t since_now;       /* ... and is this */
    int64_t watch_checks, watch_evals; /* +watch probes, and full evaluations */
    int64_t stream_events;    /* events queued on streams */
    int32_t eval_left;        /* re-evaluations of held watches left this poll */
    int32_t stream_rr;        /* streams: where the next poll starts checking */
    bool in_batch;            /* answering a batch's requests */
};

/* rpc.c: answers `text`; returns a malloc'ed response (NULL: nothing to
 * answer, or out of memory with *oom set). Driver thread only. */
char *wr_rpc_handle(weft_remote *r, const char *text, size_t len, bool may_hold, int *hold,
                    size_t *out_len, int *oom, wr_watch *watch);

/* rpc.c: answers a stream's request: an event to send (malloc'ed), or
 * NULL with *hold set when nothing changed; *ends when the stream must
 * end after this event (not a single +watch request). */
char *wr_rpc_stream(weft_remote *r, wr_stream *s, size_t *out_len, bool *ends, int *oom);

/* remote.c: frees a stream whose last reference was dropped. */
void wr_stream_free(wr_stream *s);

/* remote.c: the tick +watch values read in this poll are stamped with
 * (the world's change tick is advanced once per poll, so every later
 * write is newer). */
uint32_t wr_watch_since(weft_remote *r);

/* rpc.c: the whole-request error response for `code` (used by the server
 * for bodies it refuses before parsing); malloc'ed, NULL on OOM. */
char *wr_rpc_error_text(int code, const char *message, size_t *out_len);

/* http.c: starts the server thread; stops it (every connection closed,
 * waiting requests answered 503); wakes it after the driver answered a
 * request or queued a stream event (any thread, lock held or not). */
weft_status wr_http_start(weft_remote *r);
void wr_http_stop(weft_remote *r);
void wr_http_wake(weft_remote *r);

/* remote.c: records an error in the remote's slot. */
void wr_fail(weft_remote *r, weft_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

/* src/remote/http.c - the HTTP side of weft_remote, on libmicrohttpd.
 * SPDX-License-Identifier: MIT
 *
 * libmicrohttpd runs one thread per connection (MHD_USE_THREAD_PER_CONNECTION),
 * so a connection thread may block waiting for the driver without holding
 * up other clients; the number of connections, and so of threads, is
 * capped by max_connections, and idle connections are closed after 10 s.
 * A connection thread only reads the body (refusing it past
 * max_request_bytes), checks the bearer token, queues the request and
 * waits for the driver's answer (weft_remote_poll) for at most timeout_ms.
 * It never touches the world.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "remote_internal.h"

/* The inspector page, src/remote/page/index.html (bytes written by CMake). */
static const unsigned char wr_page[] = {
#include "remote_page.inc"
};

typedef struct wr_conn {
    char *body;
    size_t len, cap;
    int too_large;
} wr_conn;

static enum MHD_Result wr_send(struct MHD_Connection *c, unsigned int http, char *text,
                               size_t len)
{
    struct MHD_Response *resp;
    if (text) {
        resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    } else {
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    if (text) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    }
    enum MHD_Result ret = MHD_queue_response(c, http, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result wr_send_error(struct MHD_Connection *c, unsigned int http, int code,
                                     const char *message)
{
    size_t len = 0;
    char *text = wr_rpc_error_text(code, message, &len);
    return wr_send(c, http, text, len);
}

/* GET /: the static inspector page. It holds no data (it asks POST / for
 * everything, with the token the user types), so it needs no token; it
 * may not be framed and loads nothing from elsewhere. */
static enum MHD_Result wr_send_page(struct MHD_Connection *c)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        sizeof wr_page, (void *)(uintptr_t)wr_page, MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
    MHD_add_response_header(resp, "Content-Security-Policy",
                            "default-src 'none'; script-src 'unsafe-inline'; "
                            "style-src 'unsafe-inline'; connect-src 'self'; "
                            "frame-ancestors 'none'");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* On a loopback address, the Host header must name the loopback too
 * (127.0.0.1, localhost or [::1], any port): a page whose own domain was
 * rebound to 127.0.0.1 (DNS rebinding) sends its domain and is refused. */
static int wr_host_ok(const weft_remote *r, struct MHD_Connection *c)
{
    if ((ntohl(r->bind_ip) >> 24) != 127) {
        return 1;
    }
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!h) {
        return 0;
    }
    static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(h, names[i], n) == 0 && (h[n] == '\0' || h[n] == ':')) {
            return 1;
        }
    }
    return 0;
}

/* Constant-time comparison of the Authorization header with the token. */
static int wr_authorized(const weft_remote *r, struct MHD_Connection *c)
{
    if (r->token_len == 0) {
        return 1;
    }
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_AUTHORIZATION);
    static const char prefix[] = "Bearer ";
    if (!h || strncmp(h, prefix, sizeof prefix - 1) != 0) {
        return 0;
    }
    h += sizeof prefix - 1;
    size_t n = strlen(h);
    unsigned diff = (unsigned)(n != r->token_len);
    for (size_t i = 0; i < r->token_len; i++) {
        diff |= (unsigned)((unsigned char)r->token[i] ^ (unsigned char)(i < n ? h[i] : 0));
    }
    return diff == 0;
}

static void wr_deadline(struct timespec *ts, int32_t ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec += 1;
        ts->tv_nsec -= 1000000000L;
    }
}

/* Queues the body, waits for the driver and sends its answer. */
static enum MHD_Result wr_dispatch(weft_remote *r, struct MHD_Connection *c, wr_conn *conn)
{
    wr_request *q = calloc(1, sizeof *q);
    if (!q) {
        return wr_send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, WEFT_REMOTE_INTERNAL_ERROR,
                             "out of memory");
    }
    q->body = conn->body;
    q->len = conn->len;
    struct timespec deadline;
    wr_deadline(&deadline, r->timeout_ms);
    pthread_mutex_lock(&r->lock);
    if (r->stopping) {
        pthread_mutex_unlock(&r->lock);
        free(q);
        return wr_send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, WEFT_REMOTE_INTERNAL_ERROR,
                             "the server is stopping");
    }
    if (r->tail) {
        r->tail->next = q;
    } else {
        r->head = q;
    }
    r->tail = q;
    int timed_out = 0;
    while (q->state != WR_REQ_DONE) {
        if (q->state == WR_REQ_QUEUED && (r->stopping || timed_out)) {
            /* Still ours: unlink it; the driver never sees it. */
            wr_request **pp = &r->head;
            wr_request *prev = NULL;
            while (*pp != q) {
                prev = *pp;
                pp = &(*pp)->next;
            }
            *pp = q->next;
            if (r->tail == q) {
                r->tail = prev;
            }
            break;
        }
        if (q->state == WR_REQ_PARKED && (r->stopping || timed_out)) {
            wr_request **pp = &r->parked;
            while (*pp != q) {
                pp = &(*pp)->next;
            }
            *pp = q->next;
            break;
        }
        if (pthread_cond_timedwait(&r->cond, &r->lock, &deadline) == ETIMEDOUT) {
            timed_out = 1;
        }
    }
    int stopping = r->stopping;
    pthread_mutex_unlock(&r->lock);
    if (q->state != WR_REQ_DONE) {
        free(q);
        return wr_send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, WEFT_REMOTE_INTERNAL_ERROR,
                             stopping ? "the server is stopping"
                                      : "the world was not polled in time");
    }
    char *resp = q->response;
    size_t rlen = q->response_len;
    free(q);
    return resp ? wr_send(c, MHD_HTTP_OK, resp, rlen) : wr_send(c, MHD_HTTP_NO_CONTENT, NULL, 0);
}

/* ---- server-sent events ----
 *
 * POST / with "Accept: text/event-stream" and one "+watch" request: the
 * answer is a stream; every change the driver finds (wr_poll_streams in
 * remote.c) is one event "data: <JSON-RPC response>\n\n". The connection
 * thread waits here for the next event and never holds the driver: the
 * driver only replaces the stream's pending event under the lock. A
 * client that goes away is noticed within WR_STREAM_SLICE_MS (its socket
 * reads end-of-file) or at the next write; the stream then ends and the
 * driver drops it at its next poll. */

#define WR_STREAM_SLICE_MS 100
#define WR_STREAM_KEEPALIVE_NS 5000000000ull

static uint64_t wr_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Has the client closed its end? (a peek: nothing is consumed) */
static bool wr_peer_closed(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) {
        return false;
    }
    char ch;
    ssize_t k = recv(ci->connect_fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT);
    return k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static ssize_t wr_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    wr_stream *st = cls;
    weft_remote *r = st->remote;
    (void)pos;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        if (st->sending) {
            size_t n = st->sending_len - st->sent;
            if (n > max) {
                n = max;
            }
            memcpy(buf, st->sending + st->sent, n);
            st->sent += n;
            if (st->sent == st->sending_len) {
                free(st->sending);
                st->sending = NULL;
            }
            pthread_mutex_unlock(&r->lock);
            return (ssize_t)n;
        }
        if (st->pending) {
            /* "data: <text>\n\n" (the compact JSON holds no newline) */
            char *ev = malloc(st->pending_len + 8);
            if (!ev) {
                pthread_mutex_unlock(&r->lock);
                return MHD_CONTENT_READER_END_WITH_ERROR;
            }
            memcpy(ev, "data: ", 6);
            memcpy(ev + 6, st->pending, st->pending_len);
            memcpy(ev + 6 + st->pending_len, "\n\n", 2);
            free(st->pending);
            st->pending = NULL;
            st->sending = ev;
            st->sending_len = st->pending_len + 8;
            st->sent = 0;
            continue;
        }
        if (st->finished || r->stopping) {
            pthread_mutex_unlock(&r->lock);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        uint64_t now = wr_mono_ns();
        if (now >= st->next_keepalive) {
            static const char ka[] = ": keep-alive\n\n";
            st->next_keepalive = now + WR_STREAM_KEEPALIVE_NS;
            st->sending = malloc(sizeof ka - 1);
            if (!st->sending) {
                pthread_mutex_unlock(&r->lock);
                return MHD_CONTENT_READER_END_WITH_ERROR;
            }
            memcpy(st->sending, ka, sizeof ka - 1);
            st->sending_len = sizeof ka - 1;
            st->sent = 0;
            continue;
        }
        pthread_mutex_unlock(&r->lock);
        if (wr_peer_closed(st->conn)) {
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        pthread_mutex_lock(&r->lock);
        if (st->pending || st->finished || r->stopping) {
            continue;
        }
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_nsec += WR_STREAM_SLICE_MS * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec += 1;
            deadline.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&r->cond, &r->lock, &deadline);
    }
}

/* The response is gone (sent, or the connection ended): the connection's
 * reference is dropped; the driver unlinks the stream at its next poll. */
static void wr_stream_release(void *cls)
{
    wr_stream *st = cls;
    weft_remote *r = st->remote;
    pthread_mutex_lock(&r->lock);
    st->gone = true;
    bool last = --st->refs == 0;
    pthread_mutex_unlock(&r->lock);
    if (last) {
        wr_stream_free(st);
    }
}

static bool wr_wants_stream(struct MHD_Connection *c)
{
    const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    return a && strstr(a, "text/event-stream") != NULL;
}

static enum MHD_Result wr_open_stream(weft_remote *r, struct MHD_Connection *c, wr_conn *conn)
{
    wr_stream *st = calloc(1, sizeof *st);
    if (!st) {
        return wr_send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, WEFT_REMOTE_INTERNAL_ERROR,
                             "out of memory");
    }
    st->body = conn->body ? conn->body : calloc(1, 1);
    if (!st->body) {
        free(st);
        return wr_send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, WEFT_REMOTE_INTERNAL_ERROR,
                             "out of memory");
    }
    conn->body = NULL; /* the stream owns it now */
    st->len = conn->len;
    st->remote = r;
    st->conn = c;
    st->refs = 2;
    st->next_keepalive = wr_mono_ns() + WR_STREAM_KEEPALIVE_NS;
    struct MHD_Response *resp = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, 4096, wr_stream_read, st, wr_stream_release);
    if (!resp) {
        wr_stream_free(st);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    pthread_mutex_lock(&r->lock);
    if (r->stopping) {
        pthread_mutex_unlock(&r->lock);
        MHD_destroy_response(resp); /* releases the stream's connection reference */
        pthread_mutex_lock(&r->lock);
        bool last = --st->refs == 0; /* and the list's, never taken */
        pthread_mutex_unlock(&r->lock);
        if (last) {
            wr_stream_free(st);
        }
        return wr_send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, WEFT_REMOTE_INTERNAL_ERROR,
                             "the server is stopping");
    }
    st->next = r->streams;
    r->streams = st;
    r->stream_count++;
    pthread_mutex_unlock(&r->lock);
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result wr_access(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version,
                                 const char *upload_data, size_t *upload_data_size,
                                 void **con_cls)
{
    weft_remote *r = cls;
    (void)version;
    wr_conn *conn = *con_cls;
    if (!conn) {
        if (!wr_host_ok(r, c)) {
            return wr_send_error(c, MHD_HTTP_FORBIDDEN, WEFT_REMOTE_INVALID_REQUEST,
                                 "the Host header does not name the loopback address");
        }
        if (strcmp(method, MHD_HTTP_METHOD_GET) == 0 &&
            (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0)) {
            return wr_send_page(c);
        }
        /* Headers are in: refuse early what will be refused anyway. */
        if (strcmp(method, MHD_HTTP_METHOD_POST) != 0) {
            return wr_send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, WEFT_REMOTE_INVALID_REQUEST,
                                 "only GET / (the inspector) and POST / are served");
        }
        if (strcmp(url, "/") != 0) {
            return wr_send_error(c, MHD_HTTP_NOT_FOUND, WEFT_REMOTE_INVALID_REQUEST,
                                 "only GET / (the inspector) and POST / are served");
        }
        if (!wr_authorized(r, c)) {
            return wr_send_error(c, MHD_HTTP_UNAUTHORIZED, WEFT_REMOTE_INVALID_REQUEST,
                                 "missing or wrong bearer token");
        }
        conn = calloc(1, sizeof *conn);
        if (!conn) {
            return MHD_NO;
        }
        *con_cls = conn;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (conn->too_large || n > (size_t)r->max_request_bytes - conn->len) {
            conn->too_large = 1;
            return MHD_YES;
        }
        if (conn->len + n + 1 > conn->cap) {
            size_t cap = conn->cap ? conn->cap : 1024;
            while (cap < conn->len + n + 1) {
                cap *= 2;
            }
            char *nb = realloc(conn->body, cap);
            if (!nb) {
                return MHD_NO;
            }
            conn->body = nb;
            conn->cap = cap;
        }
        memcpy(conn->body + conn->len, upload_data, n);
        conn->len += n;
        conn->body[conn->len] = '\0';
        return MHD_YES;
    }
    if (conn->too_large) {
        return wr_send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, WEFT_REMOTE_INVALID_REQUEST,
                             "request body exceeds the size limit");
    }
    if (wr_wants_stream(c)) {
        return wr_open_stream(r, c, conn);
    }
    return wr_dispatch(r, c, conn);
}

static void wr_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    wr_conn *conn = *con_cls;
    if (conn) {
        free(conn->body);
        free(conn);
        *con_cls = NULL;
    }
}

weft_status wr_http_start(weft_remote *r)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)r->port);
    sa.sin_addr.s_addr = r->bind_ip;
    r->daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
        wr_access, r, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)r->max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_NOTIFY_COMPLETED, wr_completed, r,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536, MHD_OPTION_END);
    if (!r->daemon) {
        return WEFT_ERR_UNSUPPORTED;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(r->daemon,
                                                           MHD_DAEMON_INFO_BIND_PORT);
    if (info) {
        r->port = info->port;
    }
    return WEFT_OK;
}

void wr_http_stop(weft_remote *r)
{
    if (r->daemon) {
        MHD_stop_daemon(r->daemon);
        r->daemon = NULL;
    }
}

/* src/remote/http.c - the HTTP side of weft_remote: a small HTTP/1.1
 * server on one thread.
 * SPDX-License-Identifier: MIT
 *
 * One server thread owns every connection: non-blocking sockets watched
 * with poll(2). It reads a request (head and body, against a deadline that
 * runs from the connection's accept to the request's last byte), checks
 * it (method, exact path, Host, bearer token, size), queues it for the
 * driver, and sends the driver's answer when the driver sets it (the
 * driver wakes the thread through a pipe, wr_http_wake). Every answer
 * closes its connection (`Connection: close`). It never touches the
 * world and never waits for the driver: a connection waiting for the
 * driver costs a socket, not a thread.
 *
 * Why not libmicrohttpd (which weft_remote used before): it measures only
 * idleness (a client sending a header byte every few seconds kept its
 * connection forever), it stops accepting when its connection limit is
 * reached (so idle half-sent requests held every slot and the next
 * clients waited in the kernel's backlog, a batch at a time), and its
 * header values are C strings (a NUL inside a header went unseen). The
 * protocol weft_remote needs (one POST or GET per connection, a body with
 * Content-Length, answers and chunked event streams) is small enough to
 * serve directly with those rules built in:
 *
 * - a request must be complete WR_REQUEST_DEADLINE_MS after its
 *   connection was accepted, whatever pace its bytes come at;
 * - when every slot (max_connections) is taken and a new connection
 *   arrives, the connection that has been reading its request the
 *   longest is closed to make room (a slot waiting for the driver,
 *   sending, or streaming is never taken away); when no slot is reading,
 *   the newcomer gets 503;
 * - the request head is bytes, not strings: a NUL anywhere in it, a
 *   path other than exactly "/", duplicate Content-Length or
 *   Authorization headers are refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "remote_internal.h"

/* The inspector page, src/remote/page/index.html (bytes written by CMake). */
static const unsigned char wr_page[] = {
#include "remote_page.inc"
};


typedef enum wr_conn_state {
    WR_CONN_READ = 0, /* reading the request */
    WR_CONN_WAIT,     /* queued for the driver */
    WR_CONN_WRITE,    /* sending the answer, then closing */
    WR_CONN_STREAM,   /* an event stream */
} wr_conn_state;

typedef struct wr_conn {
    int fd;
    wr_conn_state state;
    uint64_t accepted_ns;   /* monotonic */
    uint64_t progress_ns;   /* the last write progress (WRITE, STREAM) */
    uint64_t wait_until_ns; /* WAIT: when the driver is given up on */
    /* the request */
    char *buf;              /* head, then body */
    size_t len, cap;
    size_t head_len;        /* bytes of the head (with its blank line), 0: not complete */
    size_t body_len;        /* Content-Length */
    bool continue_sent;
    bool want_stream;
    bool get_page;
    wr_request *req;        /* WAIT */
    wr_stream *stream;      /* STREAM */
    /* the answer */
    char *out;
    size_t out_len, out_sent;
    bool close_after;       /* WRITE: close when out is sent */
    bool stream_ending;     /* STREAM: the last chunk is queued */
} wr_conn;

typedef struct wr_server {
    int listen_fd;
    int wake[2];
    pthread_t thread;
    bool started;
    wr_conn **conns;
    int32_t nconns;
} wr_server;

static uint64_t wr_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void wr_http_wake(weft_remote *r)
{
    wr_server *s = r->server;
    if (s) {
        char b = 1;
        ssize_t k = write(s->wake[1], &b, 1); /* full pipe: already woken */
        (void)k;
    }
}

static const char *wr_reason(int code)
{
    switch (code) {
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    default: return "Service Unavailable";
    }
}

/* Sets the connection's answer: status line, headers, body (copied or
 * taken when `take`), then the connection closes. */
static void wr_respond(wr_conn *c, int code, const char *ctype, const char *extra, char *body,
                       size_t blen, bool take)
{
    char head[768];
    int hn;
    if (code == 204) {
        hn = snprintf(head, sizeof head, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
        blen = 0;
    } else {
        hn = snprintf(head, sizeof head,
                      "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                      "Cache-Control: no-store\r\n%sConnection: close\r\n\r\n",
                      code, wr_reason(code), ctype, blen, extra ? extra : "");
    }
    free(c->out);
    c->out = malloc((size_t)hn + blen);
    if (c->out) {
        memcpy(c->out, head, (size_t)hn);
        if (blen) {
            memcpy(c->out + hn, body, blen);
        }
        c->out_len = (size_t)hn + blen;
    } else {
        c->out_len = 0;
    }
    if (take) {
        free(body);
    }
    c->out_sent = 0;
    c->state = WR_CONN_WRITE;
    c->close_after = true;
    c->progress_ns = wr_mono_ns();
}

static void wr_respond_error(wr_conn *c, int http, int code, const char *message)
{
    size_t len = 0;
    char *text = wr_rpc_error_text(code, message, &len);
    if (!text) {
        wr_respond(c, 500, "text/plain", NULL, (char *)"out of memory", 13, false);
        return;
    }
    wr_respond(c, http, "application/json", NULL, text, len, true);
}

/* ---- the request head ---- */

static bool wr_name_is(const char *p, size_t n, const char *name)
{
    size_t m = strlen(name);
    if (n != m) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char a = p[i], b = name[i];
        if (a >= 'A' && a <= 'Z') {
            a = (char)(a - 'A' + 'a');
        }
        if (a != b) {
            return false;
        }
    }
    return true;
}

typedef struct wr_head {
    const char *method, *target;
    size_t method_len, target_len;
    const char *host, *auth, *accept, *clen, *te, *expect;
    size_t host_len, auth_len, accept_len, clen_len, te_len, expect_len;
    int dup;      /* a header that must appear once appeared twice */
} wr_head;

static void wr_head_set(wr_head *h, const char **slot, size_t *slot_len, const char *v, size_t n)
{
    if (*slot) {
        h->dup = 1;
    }
    *slot = v;
    *slot_len = n;
}

/* Parses the head c->buf[0, head_len): returns 0 or the HTTP status that
 * refuses it. */
static int wr_parse_head(const wr_conn *c, wr_head *h)
{
    memset(h, 0, sizeof *h);
    const char *p = c->buf, *end = c->buf + c->head_len;
    if (memchr(p, '\0', c->head_len)) {
        return 400;
    }
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    const char *sp1 = memchr(p, ' ', (size_t)(eol - p));
    if (!sp1) {
        return 400;
    }
    const char *sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
    if (!sp2) {
        return 400;
    }
    const char *ver = sp2 + 1;
    size_t vlen = (size_t)(eol - ver);
    if (vlen && ver[vlen - 1] == '\r') {
        vlen--;
    }
    if (vlen != 8 || memcmp(ver, "HTTP/1.", 7) != 0 || (ver[7] != '0' && ver[7] != '1')) {
        return 400;
    }
    h->method = p;
    h->method_len = (size_t)(sp1 - p);
    h->target = sp1 + 1;
    h->target_len = (size_t)(sp2 - sp1 - 1);
    p = eol + 1;
    while (p < end) {
        eol = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)(eol - p);
        if (n && p[n - 1] == '\r') {
            n--;
        }
        if (n == 0) {
            break; /* the blank line */
        }
        if (*p == ' ' || *p == '\t') {
            return 400; /* obsolete line folding */
        }
        const char *colon = memchr(p, ':', n);
        if (!colon || colon == p) {
            return 400;
        }
        size_t nlen = (size_t)(colon - p);
        for (size_t i = 0; i < nlen; i++) {
            if (p[i] == ' ' || p[i] == '\t') {
                return 400;
            }
        }
        const char *v = colon + 1, *ve = p + n;
        while (v < ve && (*v == ' ' || *v == '\t')) {
            v++;
        }
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) {
            ve--;
        }
        size_t vl = (size_t)(ve - v);
        if (wr_name_is(p, nlen, "host")) {
            wr_head_set(h, &h->host, &h->host_len, v, vl);
        } else if (wr_name_is(p, nlen, "authorization")) {
            wr_head_set(h, &h->auth, &h->auth_len, v, vl);
        } else if (wr_name_is(p, nlen, "accept")) {
            h->accept = v; /* several are allowed: the last is kept */
            h->accept_len = vl;
        } else if (wr_name_is(p, nlen, "content-length")) {
            wr_head_set(h, &h->clen, &h->clen_len, v, vl);
        } else if (wr_name_is(p, nlen, "transfer-encoding")) {
            wr_head_set(h, &h->te, &h->te_len, v, vl);
        } else if (wr_name_is(p, nlen, "expect")) {
            wr_head_set(h, &h->expect, &h->expect_len, v, vl);
        }
        p = eol + 1;
    }
    return h->dup ? 400 : 0;
}

/* On a loopback address, the Host header must name the loopback too
 * (127.0.0.1, localhost or [::1], any port): a page whose own domain was
 * rebound to 127.0.0.1 (DNS rebinding) sends its domain and is refused. */
static bool wr_host_ok(const weft_remote *r, const wr_head *h)
{
    if ((ntohl(r->bind_ip) >> 24) != 127) {
        return true;
    }
    if (!h->host) {
        return false;
    }
    static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (h->host_len >= n && memcmp(h->host, names[i], n) == 0) {
            if (h->host_len == n) {
                return true;
            }
            if (h->host[n] != ':' || h->host_len == n + 1) {
                continue;
            }
            bool digits = true;
            for (size_t k = n + 1; k < h->host_len; k++) {
                digits &= h->host[k] >= '0' && h->host[k] <= '9';
            }
            if (digits) {
                return true;
            }
        }
    }
    return false;
}

/* The Authorization header against the token: every byte of the header
 * value after "Bearer " must match, over the whole length of both, in
 * time that depends only on the lengths. */
static bool wr_authorized(const weft_remote *r, const wr_head *h)
{
    if (r->token_len == 0) {
        return true;
    }
    static const char prefix[] = "Bearer ";
    size_t pl = sizeof prefix - 1;
    if (!h->auth || h->auth_len < pl || memcmp(h->auth, prefix, pl) != 0) {
        return false;
    }
    const unsigned char *v = (const unsigned char *)h->auth + pl;
    size_t n = h->auth_len - pl;
    unsigned diff = (unsigned)(n != r->token_len);
    for (size_t i = 0; i < r->token_len; i++) {
        diff |= (unsigned)((unsigned char)r->token[i] ^ (i < n ? v[i] : 0u));
    }
    return diff == 0;
}

static bool wr_has(const char *v, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; v && i + m <= n; i++) {
        if (memcmp(v + i, needle, m) == 0) {
            return true;
        }
    }
    return false;
}

/* The head is complete: decides what to do with the request. Returns
 * false when the connection was answered (refused, or the page). */
static bool wr_head_done(weft_remote *r, wr_conn *c)
{
    wr_head h;
    int bad = wr_parse_head(c, &h);
    if (bad) {
        wr_respond_error(c, bad, WEFT_REMOTE_INVALID_REQUEST, "malformed HTTP request head");
        return false;
    }
    if (!wr_host_ok(r, &h)) {
        wr_respond_error(c, 403, WEFT_REMOTE_INVALID_REQUEST,
                         "the Host header does not name the loopback address");
        return false;
    }
    bool is_get = h.method_len == 3 && memcmp(h.method, "GET", 3) == 0;
    bool is_post = h.method_len == 4 && memcmp(h.method, "POST", 4) == 0;
    bool root = h.target_len == 1 && h.target[0] == '/';
    if (is_get && (root || (h.target_len == 11 && memcmp(h.target, "/index.html", 11) == 0))) {
        c->get_page = true;
        return true;
    }
    if (!is_post) {
        wr_respond_error(c, 405, WEFT_REMOTE_INVALID_REQUEST,
                         "only GET / (the inspector) and POST / are served");
        return false;
    }
    if (!root) {
        wr_respond_error(c, 404, WEFT_REMOTE_INVALID_REQUEST,
                         "only GET / (the inspector) and POST / are served");
        return false;
    }
    if (!wr_authorized(r, &h)) {
        wr_respond_error(c, 401, WEFT_REMOTE_INVALID_REQUEST, "missing or wrong bearer token");
        return false;
    }
    if (h.te) {
        wr_respond_error(c, 411, WEFT_REMOTE_INVALID_REQUEST,
                         "send the body with Content-Length (no transfer coding)");
        return false;
    }
    if (!h.clen || h.clen_len == 0 || h.clen_len > 12) {
        wr_respond_error(c, 411, WEFT_REMOTE_INVALID_REQUEST, "Content-Length is required");
        return false;
    }
    uint64_t len = 0;
    for (size_t i = 0; i < h.clen_len; i++) {
        if (h.clen[i] < '0' || h.clen[i] > '9') {
            wr_respond_error(c, 400, WEFT_REMOTE_INVALID_REQUEST, "bad Content-Length");
            return false;
        }
        len = len * 10 + (uint64_t)(h.clen[i] - '0');
    }
    if (len > (uint64_t)r->max_request_bytes) {
        wr_respond_error(c, 413, WEFT_REMOTE_INVALID_REQUEST,
                         "request body exceeds the size limit");
        return false;
    }
    c->body_len = (size_t)len;
    c->want_stream = wr_has(h.accept, h.accept_len, "text/event-stream");
    if (h.expect && h.expect_len == 12 && wr_name_is(h.expect, 12, "100-continue")) {
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        ssize_t k = send(c->fd, cont, sizeof cont - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)k; /* best effort: the client sends the body after a while anyway */
        c->continue_sent = true;
    }
    return true;
}

/* ---- requests and answers ---- */

static void wr_send_page(wr_conn *c)
{
    wr_respond(c, 200, "text/html; charset=utf-8",
               "Content-Security-Policy: default-src 'none'; script-src 'unsafe-inline'; "
               "style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'\r\n"
               "X-Content-Type-Options: nosniff\r\n",
               (char *)(uintptr_t)wr_page, sizeof wr_page, false);
}

/* bevy_remote answers its +watch methods as a stream whatever the
 * Accept header says: a single request object whose method is one. */
static bool wr_is_bevy_watch_body(const char *body, size_t len)
{
    static const char needle[] = "+watch";
    bool maybe = false;
    for (size_t i = 0; i + sizeof needle - 1 <= len && !maybe; i++) {
        maybe = memcmp(body + i, needle, sizeof needle - 1) == 0;
    }
    if (!maybe) {
        return false;
    }
    json_error_t jerr;
    json_t *doc = json_loadb(body, len, 0, &jerr);
    json_t *m = json_is_object(doc) ? json_object_get(doc, "method") : NULL;
    bool yes = json_is_string(m) && (strcmp(json_string_value(m), "world.get_components+watch") == 0 ||
                                     strcmp(json_string_value(m), "world.list_components+watch") == 0);
    json_decref(doc);
    return yes;
}

/* The body is complete: queue it for the driver, or open a stream. */
static void wr_request_done(weft_remote *r, wr_conn *c)
{
    char *body = malloc(c->body_len + 1);
    if (!body) {
        wr_respond_error(c, 500, WEFT_REMOTE_INTERNAL_ERROR, "out of memory");
        return;
    }
    memcpy(body, c->buf + c->head_len, c->body_len);
    body[c->body_len] = '\0';
    free(c->buf);
    c->buf = NULL;
    c->len = c->cap = 0;
    if (!c->want_stream && c->body_len <= (size_t)r->max_request_bytes &&
        wr_is_bevy_watch_body(body, c->body_len)) {
        c->want_stream = true;
    }
    if (c->want_stream) {
        wr_stream *st = calloc(1, sizeof *st);
        static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                   "Cache-Control: no-store\r\nTransfer-Encoding: chunked\r\n"
                                   "Connection: close\r\n\r\n";
        c->out = st ? malloc(sizeof head - 1) : NULL;
        if (!c->out) {
            free(st);
            free(body);
            wr_respond_error(c, 500, WEFT_REMOTE_INTERNAL_ERROR, "out of memory");
            return;
        }
        memcpy(c->out, head, sizeof head - 1);
        c->out_len = sizeof head - 1;
        c->out_sent = 0;
        st->body = body;
        st->len = c->body_len;
        st->remote = r;
        st->refs = 2;
        st->next_keepalive = wr_mono_ns() + WR_STREAM_KEEPALIVE_NS;
        pthread_mutex_lock(&r->lock);
        st->next = r->streams;
        r->streams = st;
        r->stream_count++;
        pthread_mutex_unlock(&r->lock);
        c->stream = st;
        c->state = WR_CONN_STREAM;
        c->progress_ns = wr_mono_ns();
        return;
    }
    wr_request *q = calloc(1, sizeof *q);
    if (!q) {
        free(body);
        wr_respond_error(c, 500, WEFT_REMOTE_INTERNAL_ERROR, "out of memory");
        return;
    }
    q->body = body;
    q->len = c->body_len;
    pthread_mutex_lock(&r->lock);
    if (r->tail) {
        r->tail->next = q;
    } else {
        r->head = q;
    }
    r->tail = q;
    pthread_mutex_unlock(&r->lock);
    c->req = q;
    c->state = WR_CONN_WAIT;
    c->wait_until_ns = wr_mono_ns() + (uint64_t)r->timeout_ms * 1000000u;
}

/* Takes q off the queue or the parked list while it is still the
 * server's (QUEUED or PARKED). Lock held. Returns false when the driver
 * has it (RUNNING) or answered it (DONE). */
static bool wr_unlink_request(weft_remote *r, wr_request *q)
{
    if (q->state == WR_REQ_QUEUED) {
        wr_request **pp = &r->head, *prev = NULL;
        while (*pp != q) {
            prev = *pp;
            pp = &(*pp)->next;
        }
        *pp = q->next;
        if (r->tail == q) {
            r->tail = prev;
        }
        return true;
    }
    if (q->state == WR_REQ_PARKED) {
        wr_request **pp = &r->parked;
        while (*pp != q) {
            pp = &(*pp)->next;
        }
        *pp = q->next;
        return true;
    }
    return false;
}

static void wr_free_request(wr_request *q)
{
    free(q->watch.prev_ids);
    free(q->body);
    free(q);
}

/* WAIT: the driver answered, or the wait is over. Lock not held. */
static void wr_check_wait(weft_remote *r, wr_conn *c, uint64_t now, bool stopping)
{
    wr_request *q = c->req;
    pthread_mutex_lock(&r->lock);
    if (q->state != WR_REQ_DONE) {
        if ((stopping || now >= c->wait_until_ns) && wr_unlink_request(r, q)) {
            pthread_mutex_unlock(&r->lock);
            c->req = NULL;
            wr_free_request(q);
            wr_respond_error(c, 503, WEFT_REMOTE_INTERNAL_ERROR,
                             stopping ? "the server is stopping"
                                      : "the world was not polled in time");
            return;
        }
        pthread_mutex_unlock(&r->lock);
        return;
    }
    pthread_mutex_unlock(&r->lock);
    c->req = NULL;
    char *resp = q->response;
    size_t rlen = q->response_len;
    wr_free_request(q);
    if (resp) {
        wr_respond(c, 200, "application/json", NULL, resp, rlen, true);
    } else {
        wr_respond(c, 204, NULL, NULL, NULL, 0, false);
    }
}

/* STREAM: when nothing is being sent, takes the pending event (or a
 * keep-alive) as the next chunk. Lock not held. */
static void wr_check_stream(weft_remote *r, wr_conn *c, uint64_t now, bool stopping)
{
    if (c->out_sent < c->out_len || c->stream_ending) {
        return;
    }
    wr_stream *st = c->stream;
    pthread_mutex_lock(&r->lock);
    char *ev = st->pending;
    size_t evlen = st->pending_len;
    st->pending = NULL;
    bool end = (st->finished && !ev) || stopping;
    pthread_mutex_unlock(&r->lock);
    const char *data = NULL;
    size_t dlen = 0;
    static const char ka[] = ": keep-alive\n\n";
    if (ev) {
        data = ev;
        dlen = evlen;
    } else if (!end && now >= st->next_keepalive) {
        data = ka;
        dlen = sizeof ka - 1;
    } else if (!end) {
        return;
    }
    st->next_keepalive = now + WR_STREAM_KEEPALIVE_NS;
    /* one chunk: "<hex size>\r\n" [data: ...\n\n] "\r\n", then "0\r\n\r\n" at the end */
    size_t payload = ev ? dlen + 8 : dlen;
    free(c->out);
    c->out = malloc(payload + 64);
    if (!c->out) {
        free(ev);
        c->out_len = c->out_sent = 0;
        c->stream_ending = true;
        return;
    }
    size_t n = 0;
    if (payload) {
        n = (size_t)snprintf(c->out, 32, "%zx\r\n", payload);
        if (ev) {
            memcpy(c->out + n, "data: ", 6);
            memcpy(c->out + n + 6, data, dlen);
            memcpy(c->out + n + 6 + dlen, "\n\n", 2);
        } else {
            memcpy(c->out + n, data, dlen);
        }
        n += payload;
        memcpy(c->out + n, "\r\n", 2);
        n += 2;
    }
    free(ev);
    pthread_mutex_lock(&r->lock);
    bool fin = st->finished && !st->pending;
    pthread_mutex_unlock(&r->lock);
    if (fin || stopping || end) {
        memcpy(c->out + n, "0\r\n\r\n", 5);
        n += 5;
        c->stream_ending = true;
    }
    c->out_len = n;
    c->out_sent = 0;
}

/* ---- the connections ---- */

static void wr_conn_close(weft_remote *r, wr_server *s, int32_t i)
{
    wr_conn *c = s->conns[i];
    if (c->req) {
        pthread_mutex_lock(&r->lock);
        bool ours = c->req->state == WR_REQ_DONE || wr_unlink_request(r, c->req);
        pthread_mutex_unlock(&r->lock);
        if (ours) {
            free(c->req->response);
            wr_free_request(c->req);
        }
        /* else the driver holds it: only destroy closes such a connection,
         * and the driver is not polling then */
    }
    if (c->stream) {
        wr_stream *st = c->stream;
        pthread_mutex_lock(&r->lock);
        st->gone = true;
        bool last = --st->refs == 0;
        pthread_mutex_unlock(&r->lock);
        if (last) {
            wr_stream_free(st);
        }
    }
    close(c->fd);
    free(c->buf);
    free(c->out);
    free(c);
    s->conns[i] = s->conns[--s->nconns];
}

/* Reads what the socket has. Returns false when the connection must close. */
static bool wr_conn_read(weft_remote *r, wr_conn *c)
{
    if (c->state != WR_CONN_READ) {
        /* a stream, or an answer on its way: the client only closes */
        char sink[512];
        for (;;) {
            ssize_t k = recv(c->fd, sink, sizeof sink, MSG_DONTWAIT);
            if (k == 0) {
                return false;
            }
            if (k < 0) {
                return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
            }
        }
    }
    for (;;) {
        size_t want = c->head_len ? c->head_len + c->body_len : WR_HEAD_MAX;
        if (c->len >= want) {
            return true;
        }
        if (c->cap < want) {
            size_t cap = c->head_len ? want : (c->cap ? c->cap * 2 : 1024);
            if (cap > want) {
                cap = want;
            }
            char *nb = realloc(c->buf, cap);
            if (!nb) {
                return false;
            }
            c->buf = nb;
            c->cap = cap;
        }
        ssize_t k = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
        if (k == 0) {
            return false;
        }
        if (k < 0) {
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        }
        size_t from = c->len >= 3 ? c->len - 3 : 0;
        c->len += (size_t)k;
        if (!c->head_len) {
            for (size_t i = from; i + 1 < c->len; i++) {
                if (c->buf[i] == '\n' &&
                    (c->buf[i + 1] == '\n' ||
                     (i + 2 < c->len && c->buf[i + 1] == '\r' && c->buf[i + 2] == '\n'))) {
                    c->head_len = i + (c->buf[i + 1] == '\n' ? 2 : 3);
                    break;
                }
            }
            if (!c->head_len) {
                if (c->len >= WR_HEAD_MAX) {
                    wr_respond_error(c, 431, WEFT_REMOTE_INVALID_REQUEST,
                                     "request head too large");
                    return true;
                }
                continue;
            }
            if (!wr_head_done(r, c)) {
                return true;
            }
            if (c->get_page) {
                wr_send_page(c);
                return true;
            }
        }
        if (c->len > c->head_len + c->body_len) {
            wr_respond_error(c, 400, WEFT_REMOTE_INVALID_REQUEST,
                             "more bytes than Content-Length");
            return true;
        }
        if (c->len == c->head_len + c->body_len) {
            wr_request_done(r, c);
            return true;
        }
    }
}

/* Writes what it can. Returns false when the connection must close. */
static bool wr_conn_write(wr_conn *c, uint64_t now)
{
    while (c->out_sent < c->out_len) {
        ssize_t k = send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0) {
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        }
        c->out_sent += (size_t)k;
        c->progress_ns = now;
    }
    if (c->state == WR_CONN_WRITE && c->close_after) {
        return false;
    }
    if (c->state == WR_CONN_STREAM && c->stream_ending) {
        return false;
    }
    return true;
}

/* A new connection: when every slot is taken, the one reading its
 * request the longest makes room; when none is reading, the newcomer is
 * told to come back. */
static void wr_accept(weft_remote *r, wr_server *s, uint64_t now)
{
    for (;;) {
        int fd = accept(s->listen_fd, NULL, NULL);
        if (fd < 0) {
            return;
        }
        int fl = fcntl(fd, F_GETFL, 0);
        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (s->nconns >= r->max_connections) {
            int32_t oldest = -1;
            for (int32_t i = 0; i < s->nconns; i++) {
                if (s->conns[i]->state == WR_CONN_READ &&
                    (oldest < 0 || s->conns[i]->accepted_ns < s->conns[oldest]->accepted_ns)) {
                    oldest = i;
                }
            }
            if (oldest < 0) {
                static const char busy[] =
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                    "Connection: close\r\n\r\n";
                ssize_t k = send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
                (void)k;
                close(fd);
                continue;
            }
            wr_conn_close(r, s, oldest);
        }
        wr_conn *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        c->accepted_ns = now;
        s->conns[s->nconns++] = c;
    }
}

static void *wr_http_main(void *arg)
{
    weft_remote *r = arg;
    wr_server *s = r->server;
    int32_t cap = r->max_connections + 2;
    struct pollfd *pf = calloc((size_t)cap, sizeof *pf);
    wr_conn **polled = calloc((size_t)cap, sizeof *polled);
    if (!pf || !polled) {
        free(pf);
        free(polled);
        return NULL;
    }
    for (;;) {
        uint64_t now = wr_mono_ns();
        pthread_mutex_lock(&r->lock);
        bool stopping = r->stopping != 0;
        pthread_mutex_unlock(&r->lock);
        /* the driver's answers and stream events; deadlines */
        for (int32_t i = 0; i < s->nconns;) {
            wr_conn *c = s->conns[i];
            bool keep = true;
            if (c->state == WR_CONN_WAIT) {
                wr_check_wait(r, c, now, stopping);
            }
            if (c->state == WR_CONN_STREAM) {
                wr_check_stream(r, c, now, stopping);
            }
            if (c->state == WR_CONN_READ &&
                (stopping || now - c->accepted_ns >= (uint64_t)WR_REQUEST_DEADLINE_MS * 1000000u)) {
                if (stopping || c->len == 0) {
                    keep = false;
                } else {
                    wr_respond_error(c, 408, WEFT_REMOTE_INVALID_REQUEST,
                                     "the request was not complete in time");
                    /* one attempt to tell it, then it goes */
                    wr_conn_write(c, now);
                    keep = false;
                }
            }
            if (keep && (c->state == WR_CONN_WRITE || c->state == WR_CONN_STREAM)) {
                keep = wr_conn_write(c, now);
                if (keep && c->out_sent < c->out_len &&
                    now - c->progress_ns >= (uint64_t)WR_REQUEST_DEADLINE_MS * 1000000u) {
                    keep = false; /* a client that stopped reading */
                }
                if (keep && stopping && c->state == WR_CONN_WRITE) {
                    keep = false;
                }
            }
            if (!keep) {
                wr_conn_close(r, s, i);
                continue;
            }
            i++;
        }
        if (stopping) {
            break;
        }
        /* wait for bytes, a wake-up or the next deadline */
        int32_t n = 0;
        pf[n].fd = s->wake[0];
        pf[n].events = POLLIN;
        polled[n++] = NULL;
        pf[n].fd = s->listen_fd;
        pf[n].events = POLLIN;
        polled[n++] = NULL;
        uint64_t next = now + 1000000000u; /* at least once a second */
        for (int32_t i = 0; i < s->nconns; i++) {
            wr_conn *c = s->conns[i];
            /* a connection waiting for the driver is not watched: the
             * driver may be answering its request, which is freed only
             * once answered (or taken back while still queued) */
            pf[n].fd = c->state == WR_CONN_WAIT ? -1 : c->fd;
            pf[n].events = POLLIN;
            if (c->out_sent < c->out_len) {
                pf[n].events |= POLLOUT;
            }
            polled[n++] = c;
            uint64_t due = c->state == WR_CONN_READ
                               ? c->accepted_ns + (uint64_t)WR_REQUEST_DEADLINE_MS * 1000000u
                           : c->state == WR_CONN_WAIT   ? c->wait_until_ns
                           : c->state == WR_CONN_STREAM ? c->stream->next_keepalive
                                                        : next;
            if (due < next) {
                next = due;
            }
        }
        int timeout = next > now ? (int)((next - now) / 1000000u) + 1 : 0;
        int k = poll(pf, (nfds_t)n, timeout);
        if (k < 0 && errno != EINTR) {
            break;
        }
        now = wr_mono_ns();
        if (k > 0 && (pf[0].revents & POLLIN)) {
            char sink[64];
            while (read(s->wake[0], sink, sizeof sink) > 0) {
            }
        }
        for (int32_t j = 2; k > 0 && j < n; j++) {
            if (!pf[j].revents) {
                continue;
            }
            int32_t i = 0;
            while (i < s->nconns && s->conns[i] != polled[j]) {
                i++;
            }
            if (i == s->nconns) {
                continue; /* closed meanwhile */
            }
            wr_conn *c = s->conns[i];
            bool keep = true;
            if (pf[j].revents & (POLLIN | POLLHUP | POLLERR)) {
                keep = wr_conn_read(r, c);
            }
            if (keep && (c->state == WR_CONN_WRITE || c->state == WR_CONN_STREAM)) {
                keep = wr_conn_write(c, now);
            }
            if (!keep) {
                wr_conn_close(r, s, i);
            }
        }
        if (k > 0 && (pf[1].revents & POLLIN)) {
            wr_accept(r, s, now);
        }
    }
    /* stopping: every connection goes; requests still queued are freed */
    while (s->nconns > 0) {
        wr_conn_close(r, s, s->nconns - 1);
    }
    free(pf);
    free(polled);
    return NULL;
}

weft_status wr_http_start(weft_remote *r)
{
    wr_server *s = calloc(1, sizeof *s);
    if (!s) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    s->listen_fd = -1;
    s->wake[0] = s->wake[1] = -1;
    s->conns = calloc((size_t)r->max_connections, sizeof *s->conns);
    if (!s->conns || pipe(s->wake) != 0) {
        goto fail;
    }
    for (int i = 0; i < 2; i++) {
        int fl = fcntl(s->wake[i], F_GETFL, 0);
        fcntl(s->wake[i], F_SETFL, fl | O_NONBLOCK);
        fcntl(s->wake[i], F_SETFD, FD_CLOEXEC);
    }
    s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->listen_fd < 0) {
        goto fail;
    }
    int one = 1;
    setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)r->port);
    sa.sin_addr.s_addr = r->bind_ip;
    if (bind(s->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(s->listen_fd, 256) != 0) {
        goto fail;
    }
    socklen_t sl = sizeof sa;
    if (getsockname(s->listen_fd, (struct sockaddr *)&sa, &sl) == 0) {
        r->port = ntohs(sa.sin_port);
    }
    r->server = s;
    if (pthread_create(&s->thread, NULL, wr_http_main, r) != 0) {
        r->server = NULL;
        goto fail;
    }
    s->started = true;
    return WEFT_OK;
fail:
    if (s->listen_fd >= 0) {
        close(s->listen_fd);
    }
    if (s->wake[0] >= 0) {
        close(s->wake[0]);
        close(s->wake[1]);
    }
    free(s->conns);
    free(s);
    return WEFT_ERR_UNSUPPORTED;
}

void wr_http_stop(weft_remote *r)
{
    wr_server *s = r->server;
    if (!s) {
        return;
    }
    wr_http_wake(r);
    pthread_join(s->thread, NULL);
    r->server = NULL;
    close(s->listen_fd);
    close(s->wake[0]);
    close(s->wake[1]);
    free(s->conns);
    free(s);
}

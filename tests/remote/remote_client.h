/* tests/remote/remote_client.h - small loopback HTTP clients for the
 * weft_remote tests: one POST answered in full, and a server-sent-event
 * reader that counts the events of a stream on its own thread.
 * SPDX-License-Identifier: MIT
 */
#ifndef WEFT_REMOTE_CLIENT_H
#define WEFT_REMOTE_CLIENT_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline char *rc_find(char *hay, size_t n, const char *needle, size_t m)
{
    for (size_t i = 0; i + m <= n; i++) {
        if (memcmp(hay + i, needle, m) == 0) {
            return hay + i;
        }
    }
    return NULL;
}

static inline int rc_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    return fd;
}

/* Sends POST / with `body`; `accept` NULL or an Accept header value. */
static inline bool rc_send_post(int fd, const char *body, const char *accept)
{
    char head[512];
    size_t blen = strlen(body);
    int hn = snprintf(head, sizeof head,
                      "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                      "Content-Type: application/json\r\nContent-Length: %zu\r\n%s%s%s\r\n",
                      blen, accept ? "Accept: " : "", accept ? accept : "", accept ? "\r\n" : "");
    return send(fd, head, (size_t)hn, MSG_NOSIGNAL) == hn &&
           send(fd, body, blen, MSG_NOSIGNAL) == (ssize_t)blen;
}

/* One POST, read to the end. Returns the HTTP status (-1: socket error);
 * the body (malloc'ed, NUL-terminated) goes to *out_body when not NULL. */
static inline int rc_post(int port, const char *body, char **out_body)
{
    if (out_body) {
        *out_body = NULL;
    }
    int fd = rc_connect(port);
    if (fd < 0) {
        return -1;
    }
    if (!rc_send_post(fd, body, NULL)) {
        close(fd);
        return -1;
    }
    size_t cap = 1 << 14, n = 0;
    char *buf = malloc(cap);
    ssize_t k;
    while ((k = recv(fd, buf + n, cap - n - 1, 0)) > 0) {
        n += (size_t)k;
        if (n + 1 == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    buf[n] = '\0';
    close(fd);
    int status = -1;
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1) {
        status = -1;
    }
    if (out_body) {
        const char *b = strstr(buf, "\r\n\r\n");
        *out_body = strdup(b ? b + 4 : "");
    }
    free(buf);
    return status;
}

/* An event-stream reader: counts "data:" events, keeps the last one. */
typedef struct rc_stream {
    int fd;
    pthread_t thread;
    pthread_mutex_t lock;
    int events;          /* complete events received */
    char last[1 << 16];  /* the last event's data (cut to fit) */
    bool ended;          /* the server closed the stream */
    bool headers_ok;     /* 200 with text/event-stream */
    char *buf;           /* unparsed bytes */
    size_t len, cap;
} rc_stream;

static inline void rc_stream_parse(rc_stream *s)
{
    /* events end with a blank line */
    for (;;) {
        char *end = NULL;
        for (size_t i = 0; i + 1 < s->len; i++) {
            if (s->buf[i] == '\n' && s->buf[i + 1] == '\n') {
                end = s->buf + i;
                break;
            }
        }
        if (!end) {
            return;
        }
        size_t elen = (size_t)(end - s->buf);
        if (elen >= 6 && strncmp(s->buf, "data: ", 6) == 0) {
            pthread_mutex_lock(&s->lock);
            size_t n = elen - 6 < sizeof s->last - 1 ? elen - 6 : sizeof s->last - 1;
            memcpy(s->last, s->buf + 6, n);
            s->last[n] = '\0';
            s->events++;
            pthread_mutex_unlock(&s->lock);
        }
        memmove(s->buf, end + 2, s->len - elen - 2);
        s->len -= elen + 2;
    }
}

/* Chunked transfer coding: the reader strips chunk-size lines first. */
static inline void *rc_stream_main(void *arg)
{
    rc_stream *s = arg;
    char raw[8192];
    size_t rawlen = 0;
    bool in_body = false;
    size_t chunk_left = 0;
    for (;;) {
        ssize_t k = recv(s->fd, raw + rawlen, sizeof raw - rawlen, 0);
        if (k <= 0) {
            break;
        }
        rawlen += (size_t)k;
        size_t off = 0;
        if (!in_body) {
            char *h = rc_find(raw, rawlen, "\r\n\r\n", 4);
            if (!h) {
                continue;
            }
            pthread_mutex_lock(&s->lock);
            s->headers_ok = strncmp(raw, "HTTP/1.1 200", 12) == 0 &&
                            rc_find(raw, (size_t)(h - raw), "text/event-stream", 17) != NULL;
            pthread_mutex_unlock(&s->lock);
            in_body = true;
            off = (size_t)(h - raw) + 4;
        }
        while (off < rawlen) {
            if (chunk_left == 0) {
                char *eol = rc_find(raw + off, rawlen - off, "\r\n", 2);
                if (!eol) {
                    break;
                }
                if (eol == raw + off) { /* the CRLF after a chunk */
                    off += 2;
                    continue;
                }
                chunk_left = strtoul(raw + off, NULL, 16);
                off = (size_t)(eol - raw) + 2;
                if (chunk_left == 0) {
                    goto done; /* the last chunk */
                }
                continue;
            }
            size_t n = rawlen - off < chunk_left ? rawlen - off : chunk_left;
            if (s->len + n > s->cap) {
                s->cap = (s->len + n) * 2;
                s->buf = realloc(s->buf, s->cap);
            }
            memcpy(s->buf + s->len, raw + off, n);
            s->len += n;
            off += n;
            chunk_left -= n;
            rc_stream_parse(s);
        }
        memmove(raw, raw + off, rawlen - off);
        rawlen -= off;
    }
done:
    pthread_mutex_lock(&s->lock);
    s->ended = true;
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* Opens a stream for `body` sent with `accept` as its Accept header (NULL:
 * none); NULL when the connection fails. */
static inline rc_stream *rc_stream_open_as(int port, const char *body, const char *accept)
{
    rc_stream *s = calloc(1, sizeof *s);
    s->fd = rc_connect(port);
    if (s->fd < 0 || !rc_send_post(s->fd, body, accept)) {
        if (s->fd >= 0) {
            close(s->fd);
        }
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_create(&s->thread, NULL, rc_stream_main, s);
    return s;
}

/* Opens an event stream for `body` (Accept: text/event-stream). */
static inline rc_stream *rc_stream_open(int port, const char *body)
{
    return rc_stream_open_as(port, body, "text/event-stream");
}

static inline int rc_stream_events(rc_stream *s)
{
    pthread_mutex_lock(&s->lock);
    int n = s->events;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static inline bool rc_stream_ended(rc_stream *s)
{
    pthread_mutex_lock(&s->lock);
    bool e = s->ended;
    pthread_mutex_unlock(&s->lock);
    return e;
}

/* Copies the last event's data. */
static inline void rc_stream_last(rc_stream *s, char *out, size_t cap)
{
    pthread_mutex_lock(&s->lock);
    size_t n = 0; /* copied up to the NUL, cut to fit */
    while (n + 1 < cap && n + 1 < sizeof s->last && s->last[n] != '\0') {
        out[n] = s->last[n];
        n++;
    }
    out[n] = '\0';
    pthread_mutex_unlock(&s->lock);
}

/* Closes the client's end (mid-stream) and joins the reader. */
static inline void rc_stream_close(rc_stream *s)
{
    shutdown(s->fd, SHUT_RDWR);
    pthread_join(s->thread, NULL);
    close(s->fd);
    pthread_mutex_destroy(&s->lock);
    free(s->buf);
    free(s);
}

static inline void rc_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#endif

/* tests/remote/test_remote_hostile.c - weft_remote's HTTP front under
 * hostile clients, each started by the test on 127.0.0.1 and bounded in
 * count and time: a NUL after the bearer token, a path that only decodes
 * to "/", a client that trickles its head, 200 half-sent requests beside
 * a normal client, and a body whose batch is too long to be parsed.
 * SPDX-License-Identifier: MIT
 */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "remote_fixture.h"

/* ---- jansson's allocations, counted (the parse-limit test) ---- */

static size_t g_live, g_peak;
static pthread_mutex_t g_alloc_lock = PTHREAD_MUTEX_INITIALIZER;

/* No size header: the remote frees some of jansson's buffers (dumped
 * text) with free(), so the block must be a plain malloc'ed one. */
static void *count_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        return NULL;
    }
    pthread_mutex_lock(&g_alloc_lock);
    g_live += malloc_usable_size(p);
    if (g_live > g_peak) {
        g_peak = g_live;
    }
    pthread_mutex_unlock(&g_alloc_lock);
    return p;
}

static void count_free(void *p)
{
    if (!p) {
        return;
    }
    pthread_mutex_lock(&g_alloc_lock);
    g_live -= malloc_usable_size(p);
    pthread_mutex_unlock(&g_alloc_lock);
    free(p);
}

/* ---- a driver that keeps polling, and records its longest frame ---- */

typedef struct driver {
    weft_remote *r;
    pthread_t thread;
    volatile int stop;
    uint64_t max_frame_ns;
} driver;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *driver_main(void *arg)
{
    driver *d = arg;
    while (!__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE)) {
        uint64_t t0 = now_ns();
        weft_remote_poll(d->r, 8);
        uint64_t dt = now_ns() - t0;
        if (dt > d->max_frame_ns) {
            d->max_frame_ns = dt;
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void driver_start(driver *d, weft_remote *r)
{
    memset(d, 0, sizeof *d);
    d->r = r;
    assert_int_equal(pthread_create(&d->thread, NULL, driver_main, d), 0);
}

static void driver_stop(driver *d)
{
    __atomic_store_n(&d->stop, 1, __ATOMIC_RELEASE);
    pthread_join(d->thread, NULL);
}

static weft_remote *start(fx_world *fx, const char *token, int32_t max_request_bytes)
{
    fx_make(fx);
    weft_remote_desc d = {0};
    d.world = fx->w;
    d.port = WEFT_REMOTE_ANY_PORT;
    d.token = token;
    d.max_request_bytes = max_request_bytes;
    weft_remote *r = NULL;
    assert_int_equal(weft_remote_create(&d, &r), WEFT_OK);
    return r;
}

static void stop(fx_world *fx, weft_remote *r)
{
    weft_remote_destroy(r);
    weft_world_destroy(fx->w);
}

static int connect_to(int port)
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
    struct timeval tv = {5, 0}; /* no read waits longer */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* Sends `len` raw bytes, reads the answer to EOF; the HTTP status (-1:
 * none) and, when `body` is not NULL, the body. */
static int raw_request(int port, const char *bytes, size_t len, char *body, size_t cap)
{
    int fd = connect_to(port);
    if (fd < 0) {
        return -1;
    }
    if (send(fd, bytes, len, MSG_NOSIGNAL) != (ssize_t)len) {
        close(fd);
        return -1;
    }
    char buf[8192];
    size_t n = 0;
    ssize_t k;
    while (n < sizeof buf - 1 && (k = recv(fd, buf + n, sizeof buf - 1 - n, 0)) > 0) {
        n += (size_t)k;
    }
    buf[n] = '\0';
    close(fd);
    int status = -1;
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1) {
        status = -1;
    }
    if (body) {
        const char *b = strstr(buf, "\r\n\r\n");
        snprintf(body, cap, "%s", b ? b + 4 : "");
    }
    return status;
}

static const char k_rpc[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.list_components\"}";

/* A POST with the given request line target and extra header lines. */
static size_t make_post(char *out, size_t cap, const char *target, const char *headers,
                        size_t headers_len)
{
    int n = snprintf(out, cap, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %zu\r\n",
                     target, strlen(k_rpc));
    memcpy(out + n, headers, headers_len);
    size_t m = (size_t)n + headers_len;
    memcpy(out + m, "\r\n", 2);
    m += 2;
    memcpy(out + m, k_rpc, strlen(k_rpc));
    return m + strlen(k_rpc);
}

/* 1. The token is compared over the whole header value: a NUL and junk
 * after it, a prefix of it, or more bytes are refused. */
static void test_token_nul_refused(void **state)
{
    (void)state;
    fx_world fx;
    weft_remote *r = start(&fx, "s3cret", 0);
    driver d;
    driver_start(&d, r);
    int port = weft_remote_port(r);
    char req[1024], body[4096];
    static const char good[] = "Authorization: Bearer s3cret\r\n";
    size_t n = make_post(req, sizeof req, "/", good, sizeof good - 1);
    assert_int_equal(raw_request(port, req, n, body, sizeof body), 200);
    static const char nul[] = "Authorization: Bearer s3cret\0junk\r\n";
    n = make_post(req, sizeof req, "/", nul, sizeof nul - 1);
    int st = raw_request(port, req, n, body, sizeof body);
    assert_true(st == 400 || st == 401);
    static const char nul_end[] = "Authorization: Bearer s3cret\0\r\n";
    n = make_post(req, sizeof req, "/", nul_end, sizeof nul_end - 1);
    st = raw_request(port, req, n, body, sizeof body);
    assert_true(st == 400 || st == 401);
    static const char shorter[] = "Authorization: Bearer s3cre\r\n";
    n = make_post(req, sizeof req, "/", shorter, sizeof shorter - 1);
    assert_int_equal(raw_request(port, req, n, body, sizeof body), 401);
    static const char longer[] = "Authorization: Bearer s3cretX\r\n";
    n = make_post(req, sizeof req, "/", longer, sizeof longer - 1);
    assert_int_equal(raw_request(port, req, n, body, sizeof body), 401);
    static const char twice[] = "Authorization: Bearer s3cret\r\nAuthorization: Bearer x\r\n";
    n = make_post(req, sizeof req, "/", twice, sizeof twice - 1);
    st = raw_request(port, req, n, body, sizeof body);
    assert_true(st == 400 || st == 401);
    driver_stop(&d);
    stop(&fx, r);
}

/* 2. The path must be exactly "/": nothing that decodes or normalizes
 * to it is served. */
static void test_path_exact(void **state)
{
    (void)state;
    fx_world fx;
    weft_remote *r = start(&fx, NULL, 4096);
    driver d;
    driver_start(&d, r);
    int port = weft_remote_port(r);
    char req[1024], body[4096];
    size_t n = make_post(req, sizeof req, "/", "", 0);
    assert_int_equal(raw_request(port, req, n, body, sizeof body), 200);
    static const char *const bad[] = {"/%00/../../etc/passwd", "/%00", "//", "/?x=1", "/.",
                                      "/index.html", "http://127.0.0.1/", "*", "/%2f"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = make_post(req, sizeof req, bad[i], "", 0);
        int st = raw_request(port, req, n, body, sizeof body);
        if (st != 404 && st != 400) {
            fail_msg("POST %s answered %d: %s", bad[i], st, body);
        }
        assert_null(strstr(body, "\"result\""));
    }
    /* a NUL inside the request line */
    static const char nul_line[] = "POST /\0 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n";
    int st = raw_request(port, nul_line, sizeof nul_line - 1, body, sizeof body);
    assert_true(st == 400 || st == 404);
    driver_stop(&d);
    stop(&fx, r);
}

/* 3. A client that sends one head byte every 400 ms loses its connection
 * 10 s after it connected (WR_REQUEST_DEADLINE_MS), not when it goes
 * quiet. The test gives up waiting at 14 s. */
static void test_trickling_head_has_a_deadline(void **state)
{
    (void)state;
    fx_world fx;
    weft_remote *r = start(&fx, NULL, 4096);
    driver d;
    driver_start(&d, r);
    int fd = connect_to(weft_remote_port(r));
    assert_true(fd >= 0);
    uint64_t t0 = now_ns();
    static const char head[] = "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
                               "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    bool closed = false;
    for (size_t i = 0; now_ns() - t0 < 14000000000ull; i++) {
        if (send(fd, head + (i % (sizeof head - 1)), 1, MSG_NOSIGNAL) != 1) {
            closed = true;
            break;
        }
        char ch;
        ssize_t k = recv(fd, &ch, 1, MSG_DONTWAIT);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
            closed = true;
            break;
        }
        if (k > 0) { /* an answer (408) comes before the close */
            closed = true;
            break;
        }
        struct timespec ts = {0, 400000000};
        nanosleep(&ts, NULL);
    }
    double secs = (double)(now_ns() - t0) / 1e9;
    close(fd);
    driver_stop(&d);
    stop(&fx, r);
    if (!closed || secs < 9.0 || secs > 12.5) {
        fail_msg("the trickling client kept its slot for %.1f s (closed: %d)", secs, closed);
    }
}

/* 4. 200 half-sent requests, then kept trickling: a normal client is
 * still answered within 2 s, five times in a row, and the driver's
 * frames stay short. */
#define IDLE_CLIENTS 200

typedef struct trickler {
    int *fds;
    int n;
    volatile int stop;
} trickler;

static void *trickle_main(void *arg)
{
    trickler *t = arg;
    while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
        for (int i = 0; i < t->n; i++) {
            if (t->fds[i] >= 0 && send(t->fds[i], "a", 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1 &&
                errno != EAGAIN) {
                close(t->fds[i]);
                t->fds[i] = -1;
            }
        }
        struct timespec ts = {0, 300000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void test_half_sent_crowd_does_not_lock_out(void **state)
{
    (void)state;
    fx_world fx;
    weft_remote *r = start(&fx, NULL, 4096);
    driver d;
    driver_start(&d, r);
    int port = weft_remote_port(r);
    int fds[IDLE_CLIENTS];
    static const char half[] = "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ";
    for (int i = 0; i < IDLE_CLIENTS; i++) {
        fds[i] = connect_to(port);
        assert_true(fds[i] >= 0);
        if (i % 2 == 0) { /* half of them send a partial head, half nothing */
            (void)send(fds[i], half, sizeof half - 1, MSG_NOSIGNAL);
        }
    }
    trickler t = {fds, IDLE_CLIENTS, 0};
    pthread_t tt;
    assert_int_equal(pthread_create(&tt, NULL, trickle_main, &t), 0);
    struct timespec settle = {0, 200000000};
    nanosleep(&settle, NULL);
    char req[1024], body[4096];
    size_t n = make_post(req, sizeof req, "/", "", 0);
    for (int k = 0; k < 5; k++) {
        uint64_t t0 = now_ns();
        int st = raw_request(port, req, n, body, sizeof body);
        double secs = (double)(now_ns() - t0) / 1e9;
        if (st != 200 || secs > 2.0) {
            fail_msg("a normal client beside %d half-sent requests: HTTP %d after %.2f s",
                     IDLE_CLIENTS, st, secs);
        }
        assert_non_null(strstr(body, "\"result\""));
    }
    __atomic_store_n(&t.stop, 1, __ATOMIC_RELEASE);
    pthread_join(tt, NULL);
    for (int i = 0; i < IDLE_CLIENTS; i++) {
        if (fds[i] >= 0) {
            close(fds[i]);
        }
    }
    driver_stop(&d);
    /* the driver never waits for a connection: a poll stays far below a
     * frame even with the crowd */
    if (d.max_frame_ns > 100000000u) {
        fail_msg("a poll took %.1f ms", (double)d.max_frame_ns / 1e6);
    }
    stop(&fx, r);
}

/* 5. A 1 MiB body of [{},{},...] is refused by its batch length before it
 * is parsed: jansson never holds more than a little of it. So is a 1 MiB
 * single request whose params hold that many values. */
static char *big_body(const char *prefix, const char *suffix, size_t bytes)
{
    char *s = malloc(bytes + 256);
    size_t n = (size_t)sprintf(s, "%s", prefix);
    while (n + 3 + strlen(suffix) < bytes) {
        memcpy(s + n, "{},", 3);
        n += 3;
    }
    memcpy(s + n, "{}", 2);
    n += 2;
    n += (size_t)sprintf(s + n, "%s", suffix);
    return s;
}

static void test_batch_limit_before_parse(void **state)
{
    (void)state;
    fx_world fx;
    fx_make(&fx);
    weft_remote_desc desc = {0};
    desc.world = fx.w;
    desc.flags = WEFT_REMOTE_NO_SERVER;
    desc.max_request_bytes = 2 << 20;
    weft_remote *r = NULL;
    assert_int_equal(weft_remote_create(&desc, &r), WEFT_OK);
    const char *bodies[2];
    char *b1 = big_body("[", "]", 1 << 20);
    char *b2 = big_body("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.query\",\"params\":{\"x\":[",
                        "]}}", 1 << 20);
    bodies[0] = b1;
    bodies[1] = b2;
    for (int i = 0; i < 2; i++) {
        pthread_mutex_lock(&g_alloc_lock);
        size_t base = g_live;
        g_peak = g_live;
        pthread_mutex_unlock(&g_alloc_lock);
        size_t len = 0;
        const char *out = weft_remote_handle(r, bodies[i], strlen(bodies[i]), &len);
        assert_non_null(out);
        assert_non_null(strstr(out, "-32600"));
        size_t peak = g_peak - base;
        if (peak > (4u << 20)) {
            fail_msg("body %d: jansson held %zu bytes at its peak", i, peak);
        }
    }
    free(b1);
    free(b2);
    /* the limit itself: 64 requests are a batch, 65 are not */
    char *batch = malloc(65 * 80 + 8);
    for (int count = 64; count <= 65; count++) {
        size_t n = 0;
        batch[n++] = '[';
        for (int i = 0; i < count; i++) {
            n += (size_t)sprintf(batch + n, "%s{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"world.list_components\"}",
                                 i ? "," : "", i);
        }
        batch[n++] = ']';
        batch[n] = '\0';
        size_t olen = 0;
        const char *out = weft_remote_handle(r, batch, n, &olen);
        assert_non_null(out);
        json_error_t jerr;
        json_t *j = json_loadb(out, olen, 0, &jerr);
        assert_non_null(j);
        if (count == 64) {
            assert_true(json_is_array(j));
            assert_int_equal(json_array_size(j), 64);
        } else {
            assert_int_equal(fx_code(j), -32600);
        }
        json_decref(j);
    }
    free(batch);
    weft_remote_destroy(r);
    weft_world_destroy(fx.w);
}

int main(void)
{
    json_set_alloc_funcs(count_malloc, count_free);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_nul_refused),
        cmocka_unit_test(test_path_exact),
        cmocka_unit_test(test_batch_limit_before_parse),
        cmocka_unit_test(test_half_sent_crowd_does_not_lock_out),
        cmocka_unit_test(test_trickling_head_has_a_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* bench/bench_remote.c - weft_remote_bench: requests per second of the
 * weft_remote library (include/weft_remote.h) over loopback HTTP, each
 * beside a baseline measured in the same run, and the frame-time cost of
 * the remote plugin on an app.
 * SPDX-License-Identifier: MIT
 *
 * Rows (ratio = weft_remote / baseline; > 1 is the overhead):
 *   get_components, HTTP vs in-process: the same request through the
 *     server (a new loopback connection per request, answered by a
 *     polling driver thread) and through weft_remote_handle;
 *   get_components, in-process vs direct: weft_remote_handle vs the two
 *     weft_json_write_component calls the request makes;
 *   query 10k entities, HTTP vs direct: world.query of N entities' two
 *     components vs weft_json_write_query of the same entities;
 *   frame, idle remote vs none: an app update (one system over N entities)
 *     with the remote plugin and no client, vs the same app without it;
 *   frame, busy remote vs none: the same while a client thread sends
 *     get_components requests back to back;
 *   held +watch of a 10k query, poll vs recomputation: a poll with one
 *     long poll held on weft.query+watch of N entities in an unchanged
 *     world (judged from change ticks) vs evaluating that query in-process
 *     (what a check by recomputation costs).
 * Usage: weft_remote_bench [--quick] [--check]   (N = 10000; --quick: fewer
 * requests; --check: exit 4 when the idle plugin costs more than 2% of a
 * frame or a held watch check more than half a recomputation; meant for a
 * quiet machine, not CI)
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "weft_remote.h"

typedef struct rb_pos {
    float x, y;
} rb_pos;

static uint64_t rb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static weft_component rb_pos_id, rb_hp_id;

static weft_world *rb_world(int n, weft_entity *first)
{
    weft_world *w = weft_world_create(NULL);
    weft_component_desc d = {0};
    d.name = "Position";
    d.size = sizeof(rb_pos);
    rb_pos_id = weft_component_register(w, &d);
    d.name = "Health";
    d.size = sizeof(int32_t);
    rb_hp_id = weft_component_register(w, &d);
    static const weft_field pf[] = {
        {.name = "x", .kind = WEFT_KIND_F32, .offset = offsetof(rb_pos, x)},
        {.name = "y", .kind = WEFT_KIND_F32, .offset = offsetof(rb_pos, y)},
    };
    static const weft_type_desc pd = {"Position", sizeof(rb_pos), 0, pf, 2};
    static const weft_field hf[] = {{.name = "hp", .kind = WEFT_KIND_I32}};
    static const weft_type_desc hd = {"Health", sizeof(int32_t), 0, hf, 1};
    weft_component_describe(w, rb_pos_id, &pd);
    weft_component_describe(w, rb_hp_id, &hd);
    for (int i = 0; i < n; i++) {
        rb_pos p = {(float)i, (float)(i * 2)};
        int32_t hp = i;
        weft_value v[2] = {{rb_pos_id, sizeof p, &p}, {rb_hp_id, sizeof hp, &hp}};
        weft_entity e = weft_spawn_with(w, v, 2);
        if (i == 0) {
            *first = e;
        }
    }
    return w;
}

/* One POST with "Connection: close"; returns the HTTP status. */
static int rb_post(int port, const char *body, size_t *resp_bytes)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    char head[256];
    size_t blen = strlen(body);
    int hn = snprintf(head, sizeof head,
                      "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                      "Content-Length: %zu\r\n\r\n",
                      blen);
    if (send(fd, head, (size_t)hn, MSG_NOSIGNAL) != hn ||
        send(fd, body, blen, MSG_NOSIGNAL) != (ssize_t)blen) {
        close(fd);
        return -1;
    }
    static __thread char buf[1 << 16];
    size_t total = 0;
    int status = -1;
    ssize_t k;
    bool first = true;
    while ((k = recv(fd, buf, sizeof buf - 1, 0)) > 0) {
        if (first) {
            buf[k] = '\0';
            sscanf(buf, "HTTP/1.%*d %d", &status);
            first = false;
        }
        total += (size_t)k;
    }
    close(fd);
    if (resp_bytes) {
        *resp_bytes = total;
    }
    return status;
}

typedef struct rb_client {
    int port;
    const char *body;
    int count;            /* requests to send; 0: until stop */
    volatile int stop;
    int done;
    int failures;
    uint64_t ns;
    size_t last_bytes;
} rb_client;

static void *rb_client_main(void *arg)
{
    rb_client *c = arg;
    uint64_t t0 = rb_now();
    int i = 0;
    for (; c->count ? i < c->count : !__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE); i++) {
        if (rb_post(c->port, c->body, &c->last_bytes) != 200) {
            c->failures++;
        }
    }
    c->ns = rb_now() - t0;
    c->count = i;
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void rb_row(const char *name, double weft_ns, double base_ns, const char *unit)
{
    printf("%-44s %12.1f %12.1f %s  ratio %.2f\n", name, weft_ns, base_ns, unit,
           weft_ns / base_ns);
}

/* The frame's work: Position += 1 over every entity. */
static void rb_system(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        rb_pos *p = weft_iter_field_mut(&it, 0, sizeof *p);
        int32_t cnt = weft_iter_count(&it);
        for (int32_t i = 0; i < cnt; i++) {
            p[i].x += 1.0f;
        }
    }
}

static weft_app *rb_app(int n, bool with_remote, weft_remote **out)
{
    weft_entity first;
    weft_app_desc ad = {0};
    ad.world = rb_world(n, &first);
    weft_app *app = weft_app_create(&ad);
    weft_query_desc qd = {0};
    qd.terms[0].id = rb_pos_id;
    qd.terms[0].access = WEFT_ACCESS_WRITE;
    qd.term_count = 1;
    weft_system_desc sd = {0};
    sd.name = "move";
    sd.fn = rb_system;
    sd.queries = &qd;
    sd.query_count = 1;
    weft_app_add_system(app, WEFT_APP_UPDATE, &sd);
    if (with_remote) {
        weft_remote_desc d = {0};
        d.port = WEFT_REMOTE_ANY_PORT;
        weft_remote_add_plugin(app, &d, out);
    }
    weft_app_update(app, 1.0 / 60);
    return app;
}

static int rb_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Median update time of `app` and `base`, alternating, `frames` each. */
static void rb_frames(weft_app *app, weft_app *base, int frames, double *app_ns,
                      double *base_ns)
{
    uint64_t *ta = malloc(sizeof *ta * (size_t)frames);
    uint64_t *tb = malloc(sizeof *tb * (size_t)frames);
    for (int i = 0; i < frames; i++) {
        uint64_t t0 = rb_now();
        weft_app_update(app, 1.0 / 60);
        uint64_t t1 = rb_now();
        weft_app_update(base, 1.0 / 60);
        tb[i] = rb_now() - t1;
        ta[i] = t1 - t0;
    }
    qsort(ta, (size_t)frames, sizeof *ta, rb_cmp);
    qsort(tb, (size_t)frames, sizeof *tb, rb_cmp);
    *app_ns = (double)ta[frames / 2];
    *base_ns = (double)tb[frames / 2];
    free(ta);
    free(tb);
}

static double rb_idle_ratio = 0, rb_watch_ratio = 0;

static void *rb_post_thread(void *arg)
{
    rb_client *c = arg;
    if (rb_post(c->port, c->body, &c->last_bytes) != 200) {
        c->failures++;
    }
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* One long poll held on a 10k-entity query: what each poll costs. */
static void rb_watch_row(bool quick)
{
    const int n = 10000;
    weft_entity first = 0;
    weft_world *w = rb_world(n, &first);
    weft_remote_desc d = {0};
    d.world = w;
    d.port = WEFT_REMOTE_ANY_PORT;
    d.timeout_ms = 600000; /* held for the whole measurement */
    weft_remote *r = NULL;
    if (weft_remote_create(&d, &r) != WEFT_OK) {
        return;
    }
    const char *q = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.query+watch\",\"params\":"
                    "{\"data\":{\"components\":[\"Position\",\"Health\"]}}}";
    const char *resp = weft_remote_handle(r, q, strlen(q), NULL);
    const char *tag = resp ? strstr(resp, "\"etag\":\"") : NULL;
    if (!tag) {
        weft_remote_destroy(r);
        weft_world_destroy(w);
        return;
    }
    char etag[64];
    snprintf(etag, sizeof etag, "%.42s", tag + 8);
    char body[512];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"weft.query+watch\",\"params\":"
             "{\"data\":{\"components\":[\"Position\",\"Health\"]},\"etag\":\"%s\"}}", etag);
    rb_client c = {.port = weft_remote_port(r), .body = body, .count = 1};
    pthread_t t;
    pthread_create(&t, NULL, rb_post_thread, &c);
    weft_remote_stats st = {0};
    while (st.held_watches == 0) {
        weft_remote_poll(r, 16);
        weft_remote_get_stats(r, &st);
    }
    const int polls = quick ? 200 : 1000;
    uint64_t t0 = rb_now();
    for (int i = 0; i < polls; i++) {
        weft_remote_poll(r, 16);
    }
    double poll_ns = (double)(rb_now() - t0) / polls;
    const char *plain = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.query\",\"params\":"
                        "{\"data\":{\"components\":[\"Position\",\"Health\"]}}}";
    const int evals = quick ? 10 : 50;
    t0 = rb_now();
    for (int i = 0; i < evals; i++) {
        weft_remote_handle(r, plain, strlen(plain), NULL);
    }
    double eval_ns = (double)(rb_now() - t0) / evals;
    weft_remote_get_stats(r, &st);
    rb_row("held +watch 10k query, poll vs recompute (us)", poll_ns / 1e3, eval_ns / 1e3, "us");
    printf("  -> still held: %d, %lld evaluations for %d polls\n", (int)st.held_watches,
           (long long)st.watch_evaluations, polls);
    rb_watch_ratio = poll_ns / eval_ns;
    /* release the client: a change */
    rb_pos *p = weft_get_mut(w, first, rb_pos_id, sizeof *p);
    p->x += 1.0f;
    while (!__atomic_load_n(&c.done, __ATOMIC_ACQUIRE)) {
        weft_remote_poll(r, 16);
    }
    pthread_join(t, NULL);
    weft_remote_destroy(r);
    weft_world_destroy(w);
}

static void rb_frame_rows(bool quick)
{
    const int n = 100000;
    const int frames = quick ? 4000 : 20000;
    weft_remote *r = NULL;
    weft_app *with = rb_app(n, true, &r);
    weft_app *without = rb_app(n, false, NULL);
    double a, b;
    rb_frames(with, without, frames, &a, &b);
    rb_row("frame 100k entities, idle remote vs none (us)", a / 1e3, b / 1e3, "us");
    rb_idle_ratio = a / b;
    char body[256];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.get_components\","
             "\"params\":{\"entity\":1,\"components\":[\"Position\"]}}");
    rb_client c = {.port = weft_remote_port(r), .body = body, .count = 0};
    pthread_t t;
    pthread_create(&t, NULL, rb_client_main, &c);
    rb_frames(with, without, frames, &a, &b);
    __atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
    /* keep answering until the client's last request is in */
    while (!__atomic_load_n(&c.done, __ATOMIC_ACQUIRE)) {
        weft_app_update(with, 1.0 / 60);
    }
    pthread_join(t, NULL);
    rb_row("frame 100k entities, busy remote vs none (us)", a / 1e3, b / 1e3, "us");
    printf("  -> %d requests answered during the busy frames (%d failures)\n", c.count,
           c.failures);
    weft_world *ww = weft_app_world(with), *wo = weft_app_world(without);
    weft_app_destroy(with);
    weft_app_destroy(without);
    weft_world_destroy(ww);
    weft_world_destroy(wo);
}

int main(int argc, char **argv)
{
    bool quick = false, check = false;
    for (int i = 1; i < argc; i++) {
        quick |= strcmp(argv[i], "--quick") == 0;
        check |= strcmp(argv[i], "--check") == 0;
    }
    const int n = 10000;
    const int reqs = quick ? 300 : 2000;
    weft_entity first = 0;
    weft_world *w = rb_world(n, &first);
    weft_remote_desc d = {0};
    d.world = w;
    d.port = WEFT_REMOTE_ANY_PORT;
    d.max_request_bytes = 1 << 20;
    weft_remote *r = NULL;
    if (weft_remote_create(&d, &r) != WEFT_OK) {
        fprintf(stderr, "weft_remote_bench: cannot start the server\n");
        return 1;
    }
    char get_body[256];
    snprintf(get_body, sizeof get_body,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.get_components\",\"params\":"
             "{\"entity\":%llu,\"components\":[\"Position\",\"Health\"]}}",
             (unsigned long long)first);
    printf("weft_remote_bench: N = %d entities, %d requests per HTTP row\n", n, reqs);
    printf("%-44s %12s %12s\n", "scenario", "weft_remote", "baseline");

    /* HTTP: a client thread, the driver polls */
    rb_client c = {.port = weft_remote_port(r), .body = get_body, .count = reqs};
    pthread_t t;
    pthread_create(&t, NULL, rb_client_main, &c);
    while (!__atomic_load_n(&c.done, __ATOMIC_ACQUIRE)) {
        if (weft_remote_poll(r, 16) == 0) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
    pthread_join(t, NULL);
    double http_ns = (double)c.ns / c.count;
    /* in-process */
    int inproc = reqs * 10;
    uint64_t t0 = rb_now();
    for (int i = 0; i < inproc; i++) {
        weft_remote_handle(r, get_body, strlen(get_body), NULL);
    }
    double handle_ns = (double)(rb_now() - t0) / inproc;
    /* direct */
    char buf[256];
    size_t len;
    t0 = rb_now();
    for (int i = 0; i < inproc; i++) {
        weft_json_write_component(w, first, rb_pos_id, buf, sizeof buf, &len);
        weft_json_write_component(w, first, rb_hp_id, buf, sizeof buf, &len);
    }
    double direct_ns = (double)(rb_now() - t0) / inproc;
    rb_row("get_components, HTTP vs in-process (ns/req)", http_ns, handle_ns, "ns");
    rb_row("get_components, in-process vs direct", handle_ns, direct_ns, "ns");
    printf("  -> %.0f requests/s over loopback HTTP (%d failures)\n", 1e9 / http_ns,
           c.failures);

    /* query of every entity */
    const char *q_body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.query\",\"params\":"
                         "{\"data\":{\"components\":[\"Position\",\"Health\"]}}}";
    rb_client qc = {.port = weft_remote_port(r), .body = q_body, .count = quick ? 10 : 50};
    pthread_create(&t, NULL, rb_client_main, &qc);
    while (!__atomic_load_n(&qc.done, __ATOMIC_ACQUIRE)) {
        if (weft_remote_poll(r, 16) == 0) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
    pthread_join(t, NULL);
    weft_query_desc qd = {0};
    qd.terms[0].id = rb_pos_id;
    qd.terms[1].id = rb_hp_id;
    qd.term_count = 2;
    weft_query *q = weft_query_create(w, &qd);
    size_t need = 0;
    weft_json_write_query(w, q, NULL, 0, &need);
    char *big = malloc(need);
    int qreps = quick ? 10 : 50;
    t0 = rb_now();
    for (int i = 0; i < qreps; i++) {
        weft_json_write_query(w, q, big, need, &len);
    }
    double qdirect = (double)(rb_now() - t0) / qreps;
    free(big);
    rb_row("query 10k entities, HTTP vs direct (us)", (double)qc.ns / qc.count / 1e3,
           qdirect / 1e3, "us");
    printf("  -> %.1f queries/s, %zu bytes each (%d failures)\n",
           1e9 / ((double)qc.ns / qc.count), qc.last_bytes, qc.failures);
    weft_query_destroy(w, q);
    weft_remote_destroy(r);
    weft_world_destroy(w);
    rb_frame_rows(quick);
    rb_watch_row(quick);
    if (c.failures || qc.failures) {
        return 1;
    }
    if (check) {
        bool ok = rb_idle_ratio <= 1.02 && rb_watch_ratio > 0 && rb_watch_ratio <= 0.5;
        printf("check: idle plugin %.3f (target <= 1.02), held watch check %.3f (target <= "
               "0.5): %s\n",
               rb_idle_ratio, rb_watch_ratio, ok ? "met" : "MISSED");
        return ok ? 0 : 4;
    }
    return 0;
}

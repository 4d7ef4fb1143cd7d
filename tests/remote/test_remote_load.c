/* tests/remote/test_remote_load.c - 32 concurrent clients on 127.0.0.1
 * for 20 s (WEFT_REMOTE_LOAD_SECONDS overrides) against an app that keeps
 * running its frames with the remote plugin: reads, queries of 1,000
 * entities, batches, writes, bad input, long polls, event streams opened
 * and dropped mid-stream, the page. Checked: every request gets a valid
 * HTTP and JSON-RPC answer (bad input: the expected error), the frames
 * keep running (each answers at most the poll budget; the driver never
 * waits for a client),
 * the world's memory and the remote's streams and held watches are
 * bounded and back to none when the clients are gone. Latencies are
 * reported per kind of client.
 * SPDX-License-Identifier: MIT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "remote_client.h"
#include "remote_fixture.h"

#define LOAD_CLIENTS 32
#define LOAD_ROLES 8

static const char *const role_names[LOAD_ROLES] = {
    "get_components", "query 1k", "batch", "writes", "bad input", "long poll", "stream", "page+schedule",
};

typedef struct load_client {
    int id, role, port;
    weft_entity a;          /* an entity every client reads */
    volatile int *stop;
    /* results */
    int requests, failures, events;
    char failure[256];
    uint64_t *lat;          /* ns per request */
    int nlat, caplat;
    int finished;           /* atomic: the thread is about to return */
} load_client;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void record(load_client *c, uint64_t t0)
{
    if (c->nlat == c->caplat) {
        c->caplat = c->caplat ? c->caplat * 2 : 1024;
        c->lat = realloc(c->lat, sizeof *c->lat * (size_t)c->caplat);
    }
    c->lat[c->nlat++] = now_ns() - t0;
    c->requests++;
}

static void fail_once(load_client *c, const char *what, int status, const char *body)
{
    if (c->failures++ == 0) {
        snprintf(c->failure, sizeof c->failure, "%s: HTTP %d %.150s", what, status,
                 body ? body : "");
    }
}

/* POSTs `body`; expects HTTP 200 and a JSON-RPC answer whose error code
 * is `want_code` (0: a result). Returns the parsed answer or NULL. */
static json_t *call(load_client *c, const char *body, int want_code)
{
    char *resp = NULL;
    uint64_t t0 = now_ns();
    int status = rc_post(c->port, body, &resp);
    record(c, t0);
    json_error_t jerr;
    json_t *j = resp ? json_loads(resp, 0, &jerr) : NULL;
    int code = 0;
    if (json_is_object(j)) {
        code = fx_code(j);
    } else if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++) {
            code = code ? code : fx_code(json_array_get(j, i));
        }
    }
    if (status != 200 || !j || code != want_code) {
        fail_once(c, body, status, resp);
        json_decref(j);
        j = NULL;
    }
    free(resp);
    return j;
}

static void *client_main(void *arg)
{
    load_client *c = arg;
    char body[512];
    weft_entity mine = 0;
    char etag[64] = "";
    while (!__atomic_load_n(c->stop, __ATOMIC_ACQUIRE)) {
        json_t *j = NULL;
        switch (c->role) {
        case 0:
            snprintf(body, sizeof body,
                     "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"world.get_components\","
                     "\"params\":{\"entity\":%llu,\"components\":[\"Position\",\"Health\"],"
                     "\"strict\":true}}",
                     c->id, (unsigned long long)c->a);
            j = call(c, body, 0);
            break;
        case 1:
            j = call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.query\",\"params\":"
                        "{\"data\":{\"components\":[\"Position\"],\"has\":[\"Tag\"]}}}", 0);
            break;
        case 2:
            j = call(c, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.list_components\"},"
                        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"weft.archetypes\"},"
                        "{\"jsonrpc\":\"2.0\",\"method\":\"weft.world_stats\"},"
                        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"weft.world_stats\"}]", 0);
            break;
        case 3:
            if (!mine) {
                j = call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.spawn_entity\","
                            "\"params\":{\"components\":{\"Health\":{\"hp\":1}}}}", 0);
                json_t *e = json_object_get(json_object_get(j, "result"), "entity");
                mine = e ? (weft_entity)json_integer_value(e) : 0;
            } else if (c->requests % 20 == 19) {
                snprintf(body, sizeof body,
                         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.despawn_entity\","
                         "\"params\":{\"entity\":%llu}}", (unsigned long long)mine);
                j = call(c, body, 0);
                mine = 0;
            } else {
                snprintf(body, sizeof body,
                         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.mutate_components\","
                         "\"params\":{\"entity\":%llu,\"component\":\"Health\",\"path\":"
                         "\"slots[1]\",\"value\":%d}}",
                         (unsigned long long)mine, c->requests);
                j = call(c, body, 0);
            }
            break;
        case 4: {
            static const char *const bad[] = {
                "{\"jsonrpc\":", "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"rpc.discover\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.nothing\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.get_components\",\"params\":"
                "{\"entity\":\"x\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.get_components\",\"params\":"
                "{\"entity\":123456789,\"components\":[\"Position\"]}}",
                "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.mutate_components\",\"params\":"
                "{\"entity\":1,\"component\":\"Nope\",\"path\":\"\",\"value\":1}}",
            };
            static const int codes[] = {WEFT_REMOTE_PARSE_ERROR, WEFT_REMOTE_INVALID_REQUEST,
                                        WEFT_REMOTE_METHOD_NOT_FOUND, WEFT_REMOTE_INVALID_PARAMS,
                                        -23401 /* bevy_remote: entity not found */,
                                        WEFT_REMOTE_INVALID_REQUEST,
                                        -23401 /* bevy_remote: entity not found */};
            int k = c->requests % 7;
            j = call(c, bad[k], codes[k]);
            break;
        }
        case 5:
            snprintf(body, sizeof body,
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.query+watch\",\"params\":"
                     "{\"data\":{\"components\":[\"Health\"]}%s%s%s}}",
                     etag[0] ? ",\"etag\":\"" : "", etag, etag[0] ? "\"" : "");
            j = call(c, body, 0);
            if (j) {
                json_t *t = json_object_get(json_object_get(j, "result"), "etag");
                snprintf(etag, sizeof etag, "%s", t ? json_string_value(t) : "");
            }
            break;
        case 6: {
            snprintf(body, sizeof body,
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.get_components+watch\","
                     "\"params\":{\"entity\":%llu,\"components\":[\"Position\"]}}",
                     (unsigned long long)c->a);
            uint64_t t0 = now_ns();
            rc_stream *s = rc_stream_open(c->port, body);
            if (!s) {
                fail_once(c, "stream open", -1, NULL);
                break;
            }
            /* read until the first event (the frames may be slow on a
             * loaded machine: up to 10 s), a little more, then drop it
             * mid-stream */
            for (int i = 0; i < 5000 && rc_stream_events(s) == 0 && !rc_stream_ended(s); i++) {
                rc_sleep_ms(2);
            }
            for (int i = 0; i < 100 && !__atomic_load_n(c->stop, __ATOMIC_ACQUIRE); i++) {
                rc_sleep_ms(2);
            }
            int ev = rc_stream_events(s);
            if (ev == 0 || rc_stream_ended(s)) {
                fail_once(c, "stream: no event, or ended", ev, NULL);
            }
            c->events += ev;
            rc_stream_close(s);
            record(c, t0);
            break;
        }
        default: {
            char *resp = NULL;
            uint64_t t0 = now_ns();
            int fd = rc_connect(c->port);
            if (fd >= 0) {
                const char *get = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
                send(fd, get, strlen(get), MSG_NOSIGNAL);
                char buf[4096];
                size_t total = 0;
                ssize_t k;
                int status = -1;
                while ((k = recv(fd, buf, sizeof buf - 1, 0)) > 0) {
                    if (total == 0) {
                        buf[k] = '\0';
                        sscanf(buf, "HTTP/1.%*d %d", &status);
                    }
                    total += (size_t)k;
                }
                close(fd);
                record(c, t0);
                if (status != 200 || total < 1000) {
                    fail_once(c, "GET /", status, NULL);
                }
            } else {
                fail_once(c, "GET / connect", -1, NULL);
            }
            free(resp);
            j = call(c, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.schedule\",\"params\":"
                        "{\"schedule\":\"Update\"}},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
                        "\"weft.trace\",\"params\":{\"schedule\":\"Update\",\"profile\":true}}]",
                     0);
            break;
        }
        }
        json_decref(j);
    }
    __atomic_store_n(&c->finished, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* The frame's work: every Position moves. */
static void sys_move(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        fx_pos *p = weft_iter_field_mut(&it, 0, sizeof *p);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            p[i].x += 1.0f;
        }
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_32_clients(void **state)
{
    (void)state;
    int seconds = 20;
    const char *env = getenv("WEFT_REMOTE_LOAD_SECONDS");
    if (env && atoi(env) > 0) {
        seconds = atoi(env);
    }
    fx_world fx;
    fx_make(&fx);
    for (int i = 0; i < 1000; i++) {
        fx_pos p = {(float)i, 0};
        fx_health h = {i, {0, 0, 0}};
        weft_value v[2] = {{fx.pos, sizeof p, &p}, {fx.health, sizeof h, &h}};
        weft_spawn_with(fx.w, v, 2);
    }
    weft_app_desc ad = {0};
    ad.world = fx.w;
    weft_app *app = weft_app_create(&ad);
    assert_non_null(app);
    weft_query_desc q = {0};
    q.terms[0].id = fx.pos;
    q.terms[0].access = WEFT_ACCESS_WRITE;
    q.term_count = 1;
    weft_system_desc sd = {0};
    sd.name = "move";
    sd.fn = sys_move;
    sd.queries = &q;
    sd.query_count = 1;
    assert_true(weft_app_add_system(app, WEFT_APP_UPDATE, &sd) != 0);
    weft_remote_desc d = {0};
    d.port = WEFT_REMOTE_ANY_PORT;
    d.flags = WEFT_REMOTE_ALLOW_WRITES;
    d.max_connections = 64;
    d.poll_budget = 8;
    /* generous: under sanitizers on a loaded machine a request may wait
     * several slow frames in the queue (32 clients, 8 answered per frame) */
    d.timeout_ms = 15000;
    weft_remote *r = NULL;
    assert_int_equal(weft_remote_add_plugin(app, &d, &r), WEFT_OK);
    assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
    weft_world_stats ws0;
    weft_world_get_stats(fx.w, &ws0);

    volatile int stop = 0;
    load_client clients[LOAD_CLIENTS];
    pthread_t threads[LOAD_CLIENTS];
    memset(clients, 0, sizeof clients);
    for (int i = 0; i < LOAD_CLIENTS; i++) {
        clients[i].id = i;
        clients[i].role = i % LOAD_ROLES;
        clients[i].port = weft_remote_port(r);
        clients[i].a = fx.a;
        clients[i].stop = &stop;
        assert_int_equal(pthread_create(&threads[i], NULL, client_main, &clients[i]), 0);
    }
    uint64_t start = now_ns(), window = start;
    int64_t frames = 0, window_frames = 0, min_window = INT64_MAX;
    int64_t max_bytes = ws0.live_bytes;
    int32_t max_streams = 0, max_held = 0;
    uint64_t busy_ns = 0, longest_ns = 0;
    while (now_ns() - start < (uint64_t)seconds * 1000000000u) {
        uint64_t f0 = now_ns();
        weft_status st = weft_app_update(app, 1.0 / 60);
        uint64_t f1 = now_ns() - f0;
        busy_ns += f1;
        longest_ns = f1 > longest_ns ? f1 : longest_ns;
        if (st != WEFT_OK) {
            fail_msg("frame %lld: %s", (long long)frames, weft_last_error(fx.w));
        }
        frames++;
        window_frames++;
        uint64_t t = now_ns();
        if (t - window >= 1000000000u) {
            min_window = window_frames < min_window ? window_frames : min_window;
            window_frames = 0;
            window = t;
            weft_world_stats ws;
            weft_world_get_stats(fx.w, &ws);
            max_bytes = ws.live_bytes > max_bytes ? ws.live_bytes : max_bytes;
            weft_remote_stats rs;
            weft_remote_get_stats(r, &rs);
            max_streams = rs.open_streams > max_streams ? rs.open_streams : max_streams;
            max_held = rs.held_watches > max_held ? rs.held_watches : max_held;
        }
        rc_sleep_ms(1);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    /* the clients' last requests are answered by the frames below */
    int joined = 0;
    bool done[LOAD_CLIENTS] = {false};
    uint64_t wait_start = now_ns();
    while (joined < LOAD_CLIENTS && now_ns() - wait_start < 30000000000ull) {
        assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
        rc_sleep_ms(1);
        for (int i = 0; i < LOAD_CLIENTS; i++) {
            if (!done[i] && __atomic_load_n(&clients[i].finished, __ATOMIC_ACQUIRE)) {
                pthread_join(threads[i], NULL);
                done[i] = true;
                joined++;
            }
        }
    }
    assert_int_equal(joined, LOAD_CLIENTS);
    /* streams and held watches are gone once their connections are */
    weft_remote_stats rs;
    for (int i = 0; i < 5000; i++) {
        assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
        weft_remote_get_stats(r, &rs);
        if (rs.open_streams == 0 && rs.held_watches == 0) {
            break;
        }
        rc_sleep_ms(1);
    }
    assert_int_equal(rs.open_streams, 0);
    assert_int_equal(rs.held_watches, 0);

    int total = 0, failures = 0;
    for (int role = 0; role < LOAD_ROLES; role++) {
        uint64_t *all = NULL;
        int n = 0, reqs = 0, events = 0;
        for (int i = role; i < LOAD_CLIENTS; i += LOAD_ROLES) {
            all = realloc(all, sizeof *all * (size_t)(n + clients[i].nlat + 1));
            memcpy(all + n, clients[i].lat, sizeof *all * (size_t)clients[i].nlat);
            n += clients[i].nlat;
            reqs += clients[i].requests;
            events += clients[i].events;
            if (clients[i].failures) {
                print_message("client %d (%s): %d failures, first: %s\n", i, role_names[role],
                              clients[i].failures, clients[i].failure);
            }
            failures += clients[i].failures;
        }
        qsort(all, (size_t)n, sizeof *all, cmp_u64);
        print_message("%-15s %6d requests  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms%s\n",
                      role_names[role], reqs, n ? all[n / 2] / 1e6 : 0.0,
                      n ? all[(size_t)n * 99 / 100] / 1e6 : 0.0, n ? all[n - 1] / 1e6 : 0.0,
                      role == 6 ? " (per stream)" : "");
        if (role == 6) {
            print_message("%-15s %6d events received\n", "", events);
        }
        total += reqs;
        free(all);
    }
    for (int i = 0; i < LOAD_CLIENTS; i++) {
        free(clients[i].lat);
    }
    weft_world_stats ws1;
    weft_world_get_stats(fx.w, &ws1);
    print_message("frames: %.1f ms on average, longest %.1f ms\n",
                  frames ? busy_ns / 1e6 / (double)frames : 0.0, longest_ns / 1e6);
    print_message("%d s, %lld frames (fewest in a second: %lld), %d requests, world bytes "
                  "%lld -> max %lld -> %lld, at most %d streams and %d held watches\n",
                  seconds, (long long)frames, (long long)min_window, total,
                  (long long)ws0.live_bytes, (long long)max_bytes, (long long)ws1.live_bytes,
                  (int)max_streams, (int)max_held);
    assert_int_equal(failures, 0);
    /* every client kept being answered (no speed is asserted here: the
     * latencies above are a report; bench/ measures) */
    for (int i = 0; i < LOAD_CLIENTS; i++) {
        assert_true(clients[i].requests >= 1);
    }
    /* the frames kept running: every frame answers at most poll_budget
     * requests and re-evaluates at most as many watches, so on a loaded
     * machine under sanitizers a frame is slow, but never waits for a
     * client (a held driver would stop them; the frames per second are
     * printed above) */
    assert_true(frames >= 2);
    /* bounded: the writers' spawns are despawned every 20 requests */
    assert_true(max_bytes < ws0.live_bytes * 2 + (1 << 20));
    /* one stream per streaming client, plus dropped ones whose end was
     * not yet noticed (within 100 ms) or unlinked (at the next frame): the
     * bound is the connection limit; none is left once the clients are
     * gone (checked above) */
    assert_true(max_streams <= 64);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    weft_world_destroy(fx.w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_32_clients),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* tests/remote/test_remote_stream.c - +watch judged by change ticks, and
 * server-sent-event streams over loopback: an unchanged world gives no
 * event, a change exactly one, a write of the same bytes none (the ticks
 * say "look", the value says "same"), structural changes (despawn, spawn
 * into a query) are seen; a client that goes away mid-stream is dropped
 * without leaking (ASan) and never holds the driver; a request that is
 * not a +watch is answered once and ends its stream.
 * SPDX-License-Identifier: MIT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "remote_client.h"
#include "remote_fixture.h"

static weft_remote *start(fx_world *fx, int32_t timeout_ms)
{
    fx_make(fx);
    weft_remote_desc d = {0};
    d.world = fx->w;
    d.port = WEFT_REMOTE_ANY_PORT;
    d.timeout_ms = timeout_ms;
    weft_remote *r = NULL;
    assert_int_equal(weft_remote_create(&d, &r), WEFT_OK);
    return r;
}

/* Polls (1 ms apart) until `events` reach `want`, at most ~10 s. */
static void poll_until_events(weft_remote *r, rc_stream *s, int want)
{
    for (int i = 0; i < 10000 && rc_stream_events(s) < want; i++) {
        assert_true(weft_remote_poll(r, 8) >= 0);
        rc_sleep_ms(1);
    }
    assert_int_equal(rc_stream_events(s), want);
}

/* Polls `n` times, 1 ms apart (events that would come, come). */
static void poll_n(weft_remote *r, int n)
{
    for (int i = 0; i < n; i++) {
        assert_true(weft_remote_poll(r, 8) >= 0);
        rc_sleep_ms(1);
    }
}

static weft_remote_stats stats_of(weft_remote *r)
{
    weft_remote_stats st;
    assert_int_equal(weft_remote_get_stats(r, &st), WEFT_OK);
    return st;
}

static void test_stream_get_components(void **state)
{
    (void)state;
    fx_world fx;
    weft_remote *r = start(&fx, 0);
    char body[256];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"weft.get_components+watch\","
             "\"params\":{\"entity\":%llu,\"components\":[\"Health\"]}}",
             (unsigned long long)fx.a);
    rc_stream *s = rc_stream_open(weft_remote_port(r), body);
    assert_non_null(s);
    poll_until_events(r, s, 1); /* the present value */
    char last[4096];
    rc_stream_last(s, last, sizeof last);
    assert_non_null(strstr(last, "\"hp\":10"));
    assert_non_null(strstr(last, "\"id\":7"));
    assert_non_null(strstr(last, "\"etag\""));
    assert_true(s->headers_ok);

    /* unchanged: no event, and no recomputation (the ticks tell) */
    weft_remote_stats before = stats_of(r);
    poll_n(r, 100);
    assert_int_equal(rc_stream_events(s), 1);
    weft_remote_stats after = stats_of(r);
    assert_true(after.watch_probes >= before.watch_probes + 100);
    assert_true(after.watch_evaluations == before.watch_evaluations);
    assert_int_equal(after.open_streams, 1);

    /* a change: exactly one event */
    fx_health h = {42, {4, 5, 6}};
    assert_int_equal(weft_insert(fx.w, fx.a, fx.health, &h, sizeof h), WEFT_OK);
    poll_until_events(r, s, 2);
    poll_n(r, 100);
    assert_int_equal(rc_stream_events(s), 2);
    rc_stream_last(s, last, sizeof last);
    assert_non_null(strstr(last, "\"hp\":42"));

    /* the same bytes written again: the tick says look, the value says
     * same: recomputed, no event */
    before = stats_of(r);
    assert_int_equal(weft_insert(fx.w, fx.a, fx.health, &h, sizeof h), WEFT_OK);
    poll_n(r, 50);
    assert_int_equal(rc_stream_events(s), 2);
    after = stats_of(r);
    assert_true(after.watch_evaluations > before.watch_evaluations);

    /* a change to another entity, or to a component not watched: nothing */
    fx_pos p = {9, 9};
    assert_int_equal(weft_insert(fx.w, fx.b, fx.pos, &p, sizeof p), WEFT_OK);
    assert_int_equal(weft_insert(fx.w, fx.a, fx.pos, &p, sizeof p), WEFT_OK);
    before = stats_of(r);
    poll_n(r, 50);
    assert_int_equal(rc_stream_events(s), 2);
    after = stats_of(r);
    assert_true(after.watch_evaluations == before.watch_evaluations);

    /* a write through a mutable pointer (weft_get_mut stamps the tick) */
    fx_health *hm = weft_get_mut(fx.w, fx.a, fx.health, sizeof *hm);
    assert_non_null(hm);
    hm->slots[1] = 99;
    poll_until_events(r, s, 3);
    rc_stream_last(s, last, sizeof last);
    assert_non_null(strstr(last, "99"));

    /* despawned: one error event (stale entity), then silence */
    assert_int_equal(weft_despawn(fx.w, fx.a), WEFT_OK);
    poll_until_events(r, s, 4);
    rc_stream_last(s, last, sizeof last);
    char code[32];
    snprintf(code, sizeof code, "%d", WEFT_REMOTE_WEFT_ERROR - WEFT_ERR_STALE_ENTITY);
    assert_non_null(strstr(last, code));
    poll_n(r, 50);
    assert_int_equal(rc_stream_events(s), 4);
    assert_false(rc_stream_ended(s));

    rc_stream_close(s);
    weft_remote_destroy(r);
    weft_world_destroy(fx.w);
}

/* A query stream sees spawns into it and despawns out of it (structure,
 * not ticks), and writes to the queried components. */
static void test_stream_query(void **state)
{
    (void)state;
    fx_world fx;
    weft_remote *r = start(&fx, 0);
    rc_stream *s = rc_stream_open(
        weft_remote_port(r), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.query+watch\","
                             "\"params\":{\"data\":{\"components\":[\"Position\"]}}}");
    assert_non_null(s);
    poll_until_events(r, s, 1);
    poll_n(r, 30);
    assert_int_equal(rc_stream_events(s), 1);
    fx_pos p = {3, 4};
    weft_value v = {fx.pos, sizeof p, &p};
    weft_entity e = weft_spawn_with(fx.w, &v, 1);
    poll_until_events(r, s, 2);
    char last[8192];
    char want[64];
    snprintf(want, sizeof want, "\"entity\":%llu", (unsigned long long)e);
    rc_stream_last(s, last, sizeof last);
    assert_non_null(strstr(last, want));
    /* an entity without Position changes nothing */
    int32_t o = 1;
    weft_value vo = {fx.opaque, sizeof o, &o};
    weft_entity other = weft_spawn_with(fx.w, &vo, 1);
    assert_true(other != 0);
    poll_n(r, 30);
    assert_int_equal(rc_stream_events(s), 2);
    /* a despawn (no tick is stamped) */
    assert_int_equal(weft_despawn(fx.w, e), WEFT_OK);
    poll_until_events(r, s, 3);
    rc_stream_last(s, last, sizeof last);
    assert_null(strstr(last, want));
    /* despawn and a new spawn in the same archetype, reusing the index:
     * another entity (generation) */
    assert_int_equal(weft_despawn(fx.w, fx.b), WEFT_OK);
    weft_entity e2 = weft_spawn_with(fx.w, &v, 1);
    assert_true(e2 != fx.b);
    poll_until_events(r, s, 4);
    poll_n(r, 30);
    assert_int_equal(rc_stream_events(s), 4);
    rc_stream_close(s);
    weft_remote_destroy(r);
    weft_world_destroy(fx.w);
}

/* A long poll judged by ticks: held without recomputation. */
static void test_long_poll_by_ticks(void **state)
{
    (void)state;
    fx_world fx;
    weft_remote *r = start(&fx, 4000);
    char body[512];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.get_components+watch\","
             "\"params\":{\"entity\":%llu,\"components\":[\"Position\"]}}",
             (unsigned long long)fx.a);
    const char *resp = weft_remote_handle(r, body, strlen(body), NULL);
    assert_non_null(resp);
    json_error_t jerr;
    json_t *j = json_loads(resp, 0, &jerr);
    char etag[64];
    snprintf(etag, sizeof etag, "%s",
             json_string_value(json_object_get(json_object_get(j, "result"), "etag")));
    json_decref(j);
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"weft.get_components+watch\","
             "\"params\":{\"entity\":%llu,\"components\":[\"Position\"],\"etag\":\"%s\"}}",
             (unsigned long long)fx.a, etag);
    rc_stream *s = rc_stream_open(weft_remote_port(r), body); /* as a stream: resumes */
    assert_non_null(s);
    poll_n(r, 100);
    assert_int_equal(rc_stream_events(s), 0); /* the client's etag is current */
    weft_remote_stats st = stats_of(r);
    assert_int_equal(st.watch_evaluations, 1); /* only the first, in-process answer */
    fx_pos p = {8, 8};
    assert_int_equal(weft_insert(fx.w, fx.a, fx.pos, &p, sizeof p), WEFT_OK);
    poll_until_events(r, s, 1);
    rc_stream_close(s);
    weft_remote_destroy(r);
    weft_world_destroy(fx.w);
}

/* A client that closes mid-stream: dropped at a later poll, nothing
 * leaks; one that stops reading a large stream never holds the driver. */
static void test_stream_disconnect(void **state)
{
    (void)state;
    fx_world fx;
    weft_remote *r = start(&fx, 0);
    for (int i = 0; i < 600; i++) { /* a larger value: about 30 KB */
        fx_pos p = {(float)i, (float)-i};
        weft_value v = {fx.pos, sizeof p, &p};
        weft_spawn_with(fx.w, &v, 1);
    }
    const char *qbody = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.query+watch\","
                        "\"params\":{\"data\":{\"components\":[\"Position\"]}}}";
    rc_stream *s = rc_stream_open(weft_remote_port(r), qbody);
    assert_non_null(s);
    poll_until_events(r, s, 1);
    rc_stream_close(s); /* gone mid-stream, with more to come */
    fx_pos p = {1, 1};
    assert_int_equal(weft_insert(fx.w, fx.b, fx.pos, &p, sizeof p), WEFT_OK);
    for (int i = 0; i < 5000 && stats_of(r).open_streams > 0; i++) {
        poll_n(r, 1);
    }
    assert_int_equal(stats_of(r).open_streams, 0);

    /* a client that never reads: the server's writes back up, the driver
     * keeps polling and keeps replacing the one pending event */
    int fd = rc_connect(weft_remote_port(r));
    assert_true(fd >= 0);
    assert_true(rc_send_post(fd, qbody, "text/event-stream"));
    for (int i = 0; i < 5000 && stats_of(r).open_streams == 0; i++) {
        poll_n(r, 1);
    }
    for (int i = 0; i < 100; i++) {
        fx_pos *pm = weft_get_mut(fx.w, fx.b, fx.pos, sizeof *pm);
        pm->x += 1.0f; /* a new value every poll */
        assert_true(weft_remote_poll(r, 8) >= 0);
    }
    weft_remote_stats st = stats_of(r);
    assert_int_equal(st.open_streams, 1);
    assert_true(st.stream_events >= 50);
    close(fd);
    for (int i = 0; i < 5000 && stats_of(r).open_streams > 0; i++) {
        poll_n(r, 1);
    }
    assert_int_equal(stats_of(r).open_streams, 0);

    /* destroyed with a stream open: its connection ends, nothing leaks */
    s = rc_stream_open(weft_remote_port(r), qbody);
    assert_non_null(s);
    poll_until_events(r, s, 1);
    weft_remote_destroy(r);
    for (int i = 0; i < 5000 && !rc_stream_ended(s); i++) {
        rc_sleep_ms(1);
    }
    assert_true(rc_stream_ended(s));
    rc_stream_close(s);
    weft_world_destroy(fx.w);
}

/* Not a +watch: answered once, then the stream ends. */
static void test_stream_not_watch(void **state)
{
    (void)state;
    fx_world fx;
    weft_remote *r = start(&fx, 0);
    static const char *const bodies[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.list_components\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.get_components+watch\","
        "\"params\":{\"entity\":\"x\"}}",
        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.list_components+watch\"}]",
        "not json",
        "",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        rc_stream *s = rc_stream_open(weft_remote_port(r), bodies[i]);
        assert_non_null(s);
        for (int k = 0; k < 5000 && !rc_stream_ended(s); k++) {
            poll_n(r, 1);
        }
        assert_true(rc_stream_ended(s));
        assert_int_equal(rc_stream_events(s), i == 4 ? 1 : 1);
        rc_stream_close(s);
    }
    poll_n(r, 5);
    assert_int_equal(stats_of(r).open_streams, 0);
    weft_remote_destroy(r);
    weft_world_destroy(fx.w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_get_components),
        cmocka_unit_test(test_stream_query),
        cmocka_unit_test(test_long_poll_by_ticks),
        cmocka_unit_test(test_stream_disconnect),
        cmocka_unit_test(test_stream_not_watch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

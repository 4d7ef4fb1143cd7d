/* tests/remote/test_remote_http.c - weft_remote's HTTP server over
 * loopback: requests answered by weft_remote_poll and by the app plugin's
 * system in Last, bearer token, size limit, methods, timeouts, 204 for
 * notifications.
 * SPDX-License-Identifier: MIT
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "remote_fixture.h"

typedef struct http_call {
    int port;
    const char *method;
    const char *token;  /* NULL: no Authorization header */
    const char *host;   /* NULL: 127.0.0.1 */
    const char *body;
    size_t body_len;    /* 0: strlen(body) */
    int status;         /* out: HTTP status, -1 on a socket error */
    char resp[16384];   /* out: the response body */
    volatile int done;
} http_call;

/* One HTTP/1.1 request with "Connection: close"; reads to EOF. */
static void http_do(http_call *c)
{
    c->status = -1;
    c->resp[0] = '\0';
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)c->port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return;
    }
    size_t blen = c->body ? (c->body_len ? c->body_len : strlen(c->body)) : 0;
    char head[512];
    int hn = snprintf(head, sizeof head,
                      "%s / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n"
                      "Content-Type: application/json\r\nContent-Length: %zu\r\n%s%s%s\r\n",
                      c->method, c->host ? c->host : "127.0.0.1", blen, c->token ? "Authorization: Bearer " : "",
                      c->token ? c->token : "", c->token ? "\r\n" : "");
    if (send(fd, head, (size_t)hn, MSG_NOSIGNAL) != hn) {
        close(fd);
        return;
    }
    size_t off = 0;
    while (off < blen) {
        ssize_t k = send(fd, c->body + off, blen - off, MSG_NOSIGNAL);
        if (k <= 0) {
            break; /* the server may refuse early (413) */
        }
        off += (size_t)k;
    }
    static char raw[1 << 16];
    char *buf = malloc(sizeof raw);
    size_t n = 0;
    ssize_t k;
    while (n < sizeof raw - 1 && (k = recv(fd, buf + n, sizeof raw - 1 - n, 0)) > 0) {
        n += (size_t)k;
    }
    buf[n] = '\0';
    close(fd);
    int status = 0;
    if (sscanf(buf, "HTTP/1.%*d %d", &status) == 1) {
        c->status = status;
    }
    const char *body = strstr(buf, "\r\n\r\n");
    if (body) {
        snprintf(c->resp, sizeof c->resp, "%s", body + 4);
    }
    free(buf);
}

static void *http_thread(void *arg)
{
    http_call *c = arg;
    http_do(c);
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Runs the call on a thread while the driver polls (or updates the app). */
static void http_while_polling(http_call *c, weft_remote *r, weft_app *app)
{
    pthread_t t;
    c->done = 0;
    assert_int_equal(pthread_create(&t, NULL, http_thread, c), 0);
    while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
        if (app) {
            assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
        } else {
            assert_true(weft_remote_poll(r, 8) >= 0);
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    pthread_join(t, NULL);
}

static int resp_code(const http_call *c)
{
    json_error_t err;
    json_t *j = json_loads(c->resp, 0, &err);
    int code = j ? fx_code(j) : 1;
    json_decref(j);
    return code;
}

static weft_remote *start(fx_world *fx, uint32_t flags, const char *token, int32_t timeout_ms)
{
    fx_make(fx);
    weft_remote_desc d = {0};
    d.world = fx->w;
    d.port = WEFT_REMOTE_ANY_PORT;
    d.flags = flags;
    d.token = token;
    d.timeout_ms = timeout_ms;
    d.max_request_bytes = 4096;
    weft_remote *r = NULL;
    assert_int_equal(weft_remote_create(&d, &r), WEFT_OK);
    assert_true(weft_remote_port(r) > 0);
    return r;
}

static void test_post_and_poll(void **state)
{
    (void)state;
    fx_world fx;
    weft_remote *r = start(&fx, 0, NULL, 0);
    http_call *c = calloc(1, sizeof *c);
    c->port = weft_remote_port(r);
    c->method = "POST";
    c->body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.list_components\"}";
    http_while_polling(c, r, NULL);
    assert_int_equal(c->status, 200);
    assert_int_equal(resp_code(c), 0);
    assert_non_null(strstr(c->resp, "\"Position\""));

    /* a notification: 204, no body */
    c->body = "{\"jsonrpc\":\"2.0\",\"method\":\"world.list_components\"}";
    http_while_polling(c, r, NULL);
    assert_int_equal(c->status, 204);
    assert_string_equal(c->resp, "");

    /* malformed JSON: 200 with a JSON-RPC parse error */
    c->body = "{\"jsonrpc\":";
    http_while_polling(c, r, NULL);
    assert_int_equal(c->status, 200);
    assert_int_equal(resp_code(c), WEFT_REMOTE_PARSE_ERROR);

    /* GET / is the inspector page: static, served without the driver */
    c->method = "GET";
    c->body = NULL;
    http_do(c);
    assert_int_equal(c->status, 200);
    assert_non_null(strstr(c->resp, "<title>weft inspector</title>"));
    assert_non_null(strstr(c->resp, "weft.query+watch"));
    /* a Host other than the loopback (DNS rebinding) is refused */
    c->host = "evil.example:15702";
    http_do(c);
    assert_int_equal(c->status, 403);
    c->host = "localhost:8080";
    http_do(c);
    assert_int_equal(c->status, 200);
    c->host = "127.0.0.1.evil.example";
    http_do(c);
    assert_int_equal(c->status, 403);
    c->host = NULL;
    /* other methods are refused */
    c->method = "PUT";
    http_do(c);
    assert_int_equal(c->status, 405);
    assert_int_equal(resp_code(c), WEFT_REMOTE_INVALID_REQUEST);

    /* over the size limit: 413, refused before the driver sees it */
    int64_t before = 0;
    weft_remote_counts(r, &before, NULL);
    char *big = malloc(8192);
    memset(big, ' ', 8191);
    big[8191] = '\0';
    c->method = "POST";
    c->body = big;
    http_do(c);
    assert_int_equal(c->status, 413);
    assert_int_equal(resp_code(c), WEFT_REMOTE_INVALID_REQUEST);
    int64_t after = 0;
    weft_remote_counts(r, &after, NULL);
    assert_true(before == after);
    free(big);
    free(c);
    weft_remote_destroy(r);
    weft_world_destroy(fx.w);
}

static void test_token(void **state)
{
    (void)state;
    fx_world fx;
    weft_remote *r = start(&fx, 0, "s3cret", 0);
    http_call *c = calloc(1, sizeof *c);
    c->port = weft_remote_port(r);
    c->method = "POST";
    c->body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"rpc.discover\"}";
    http_do(c);
    assert_int_equal(c->status, 401);
    c->token = "s3cre";
    http_do(c);
    assert_int_equal(c->status, 401);
    c->token = "s3cret!";
    http_do(c);
    assert_int_equal(c->status, 401);
    c->token = "s3cret";
    http_while_polling(c, r, NULL);
    assert_int_equal(c->status, 200);
    assert_int_equal(resp_code(c), 0);
    free(c);
    weft_remote_destroy(r);
    weft_world_destroy(fx.w);
}

static void test_not_polled_times_out(void **state)
{
    (void)state;
    fx_world fx;
    weft_remote *r = start(&fx, 0, NULL, 100);
    http_call *c = calloc(1, sizeof *c);
    c->port = weft_remote_port(r);
    c->method = "POST";
    c->body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"rpc.discover\"}";
    http_do(c); /* nobody polls */
    assert_int_equal(c->status, 503);
    assert_int_equal(resp_code(c), WEFT_REMOTE_INTERNAL_ERROR);
    /* the abandoned request is gone: nothing left to answer */
    assert_int_equal(weft_remote_poll(r, 4), 0);
    free(c);
    weft_remote_destroy(r);
    weft_world_destroy(fx.w);
}

/* +watch over HTTP is a long poll: held while the value is unchanged,
 * answered at the next poll after a change, or when the hold time (half
 * of timeout_ms) passes with the same etag. */
static void test_watch_long_poll(void **state)
{
    (void)state;
    fx_world fx;
    weft_remote *r = start(&fx, 0, NULL, 4000); /* held for 2 s: the 50 polls below fit on a loaded machine */
    http_call *c = calloc(1, sizeof *c);
    c->port = weft_remote_port(r);
    c->method = "POST";
    char body[512];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.get_components+watch\","
             "\"params\":{\"entity\":%llu,\"components\":[\"Health\"]}}",
             (unsigned long long)fx.a);
    c->body = body;
    http_while_polling(c, r, NULL);
    assert_int_equal(c->status, 200);
    json_error_t jerr;
    json_t *j = json_loads(c->resp, 0, &jerr);
    char etag[64];
    snprintf(etag, sizeof etag, "%s",
             json_string_value(json_object_get(json_object_get(j, "result"), "etag")));
    json_decref(j);
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"weft.get_components+watch\","
             "\"params\":{\"entity\":%llu,\"components\":[\"Health\"],\"etag\":\"%s\"}}",
             (unsigned long long)fx.a, etag);
    /* unchanged: held across polls, then changed: answered */
    pthread_t t;
    c->done = 0;
    assert_int_equal(pthread_create(&t, NULL, http_thread, c), 0);
    for (int i = 0; i < 50; i++) {
        weft_remote_poll(r, 8);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_false(__atomic_load_n(&c->done, __ATOMIC_ACQUIRE));
    fx_health h = {77, {0, 0, 0}};
    assert_int_equal(weft_insert(fx.w, fx.a, fx.health, &h, sizeof h), WEFT_OK);
    while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
        weft_remote_poll(r, 8);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    pthread_join(t, NULL);
    assert_int_equal(c->status, 200);
    assert_non_null(strstr(c->resp, "\"hp\":77"));
    assert_null(strstr(c->resp, etag + 26)); /* another value hash */
    /* unchanged until the hold time passes: answered with the same etag */
    j = json_loads(c->resp, 0, &jerr);
    snprintf(etag, sizeof etag, "%s",
             json_string_value(json_object_get(json_object_get(j, "result"), "etag")));
    json_decref(j);
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"weft.get_components+watch\","
             "\"params\":{\"entity\":%llu,\"components\":[\"Health\"],\"etag\":\"%s\"}}",
             (unsigned long long)fx.a, etag);
    http_while_polling(c, r, NULL);
    assert_int_equal(c->status, 200);
    assert_non_null(strstr(c->resp, etag + 26)); /* the same value hash */
    free(c);
    weft_remote_destroy(r);
    weft_world_destroy(fx.w);
}

/* The app plugin answers from its system in Last while the app updates. */
static void test_app_plugin(void **state)
{
    (void)state;
    fx_world fx;
    fx_make(&fx);
    weft_app_desc ad = {0};
    ad.world = fx.w;
    weft_app *app = weft_app_create(&ad);
    assert_non_null(app);
    weft_remote_desc d = {0};
    d.port = WEFT_REMOTE_ANY_PORT;
    d.flags = WEFT_REMOTE_ALLOW_WRITES;
    weft_remote *r = NULL;
    assert_int_equal(weft_remote_add_plugin(app, &d, &r), WEFT_OK);
    assert_non_null(r);
    assert_int_equal(weft_remote_add_plugin(app, &d, NULL), WEFT_ERR_ALREADY_EXISTS);
    assert_int_equal(weft_remote_add_plugin(NULL, &d, NULL), WEFT_ERR_INVALID_HANDLE);
    assert_true(weft_app_has_plugin(app, "weft.remote"));
    http_call *c = calloc(1, sizeof *c);
    c->port = weft_remote_port(r);
    c->method = "POST";
    c->body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.spawn_entity\",\"params\":"
              "{\"components\":{\"Position\":{\"x\":5,\"y\":6}}}}";
    weft_world_stats before, after;
    weft_world_get_stats(fx.w, &before);
    http_while_polling(c, r, app);
    assert_int_equal(c->status, 200);
    assert_int_equal(resp_code(c), 0);
    weft_world_get_stats(fx.w, &after);
    assert_int_equal(after.live_entities, before.live_entities + 1);
    /* requests that weft refuses (a bad field) or that read a component
     * larger than the remote's scratch buffer: answered to the client,
     * and not a failure of the plugin's system (http_while_polling checks
     * that every weft_app_update returns WEFT_OK) */
    char body[256];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"world.insert_components\",\"params\":"
             "{\"entity\":%llu,\"components\":{\"Position\":{\"z\":1}}}}",
             (unsigned long long)fx.a);
    c->body = body;
    http_while_polling(c, r, app);
    assert_int_equal(c->status, 200);
    assert_int_equal(resp_code(c), -23402); /* an unknown field: a component error */
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"world.get_components\",\"params\":"
             "{\"entity\":%llu,\"components\":[\"Health\",\"Position\"]}}",
             (unsigned long long)fx.a);
    c->body = body;
    http_while_polling(c, r, app);
    assert_int_equal(c->status, 200);
    assert_int_equal(resp_code(c), 0);
    assert_non_null(strstr(c->resp, "\"slots\":[1,2,3]"));
    free(c);
    assert_int_equal(weft_app_destroy(app), WEFT_OK); /* destroys the remote */
    weft_world_destroy(fx.w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_post_and_poll),
        cmocka_unit_test(test_token),
        cmocka_unit_test(test_not_polled_times_out),
        cmocka_unit_test(test_watch_long_poll),
        cmocka_unit_test(test_app_plugin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* tests/remote/test_remote_bevy.c - weft_remote as a client written for
 * Bevy's remote protocol sees it (bevy_remote 0.16 and later): requests
 * and expected answers in Bevy's shapes, over HTTP on 127.0.0.1.
 *
 * The world holds what a Bevy app would: a Name (a newtype over a string),
 * a unit enum component (Shape), a marker component (a tag), a struct
 * component (Transform-like), and the hierarchy, read and written under
 * bevy_ecs::hierarchy::ChildOf and ::Children. Checked: get (lenient:
 * {components, errors}; strict: the map itself, or the error), query,
 * list, insert (a newtype written bare), remove, spawn, despawn, reparent,
 * the +watch forms (streamed without an Accept header; answers are the
 * changes, judged by change ticks: a write of the same bytes is one), a
 * watch in a batch, and bevy_remote's error codes.
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "remote_client.h"
#include "remote_fixture.h"

#define CHILD_OF "bevy_ecs::hierarchy::ChildOf"
#define CHILDREN "bevy_ecs::hierarchy::Children"

typedef struct bv_name {
    char name[32];
} bv_name;

typedef struct bv_xform {
    float translation[3];
    float scale;
} bv_xform;

typedef struct bevy_world {
    weft_world *w;
    weft_remote *r;
    int port;
    weft_component name, shape, marker, xform;
    weft_entity parent, child, lone;
} bevy_world;

static const weft_field name_fields[] = {
    {.name = "name", .kind = WEFT_KIND_STRING, .offset = 0, .count = 32},
    {.name = "_shape", .kind = WEFT_KIND_SHAPE, .count = WEFT_SHAPE_NEWTYPE},
};
static const weft_type_desc name_desc = {.name = "Name", .fields = name_fields,
                                         .field_count = 2};
static const weft_enum_value shapes[] = {{"Circle", 0}, {"Square", 1}};
static const weft_field shape_fields[] = {
    {.name = "value", .kind = WEFT_KIND_ENUM, .offset = 0, .enum_values = shapes,
     .enum_count = 2},
    {.name = "_shape", .kind = WEFT_KIND_SHAPE, .count = WEFT_SHAPE_NEWTYPE},
};
static const weft_type_desc shape_desc = {.name = "Shape", .fields = shape_fields,
                                          .field_count = 2};
static const weft_field xform_fields[] = {
    {.name = "translation", .kind = WEFT_KIND_F32, .offset = offsetof(bv_xform, translation),
     .count = 3},
    {.name = "scale", .kind = WEFT_KIND_F32, .offset = offsetof(bv_xform, scale)},
};
static const weft_type_desc xform_desc = {.name = "Transform", .fields = xform_fields,
                                          .field_count = 2};

static weft_component reg(weft_world *w, const char *name, size_t size, size_t align)
{
    weft_component_desc d = {0};
    d.name = name;
    d.size = size;
    d.align = align;
    return weft_component_register(w, &d);
}

static int setup(void **state)
{
    bevy_world *b = calloc(1, sizeof *b);
    b->w = weft_world_create(NULL);
    b->name = reg(b->w, "bevy_ecs::name::Name", sizeof(bv_name), 1);
    b->shape = reg(b->w, "game::Shape", sizeof(int32_t), 4);
    b->marker = reg(b->w, "game::Player", 0, 0);
    b->xform = reg(b->w, "bevy_transform::components::transform::Transform", sizeof(bv_xform),
                   4);
    assert_int_equal(weft_component_describe(b->w, b->name, &name_desc), WEFT_OK);
    assert_int_equal(weft_component_describe(b->w, b->shape, &shape_desc), WEFT_OK);
    assert_int_equal(weft_component_describe(b->w, b->xform, &xform_desc), WEFT_OK);
    bv_name n = {"Parent Node"};
    int32_t circle = 0;
    bv_xform x = {{1, 2, 3}, 1};
    weft_value v[4] = {{b->name, sizeof n, &n},
                       {b->shape, sizeof circle, &circle},
                       {b->marker, 0, NULL},
                       {b->xform, sizeof x, &x}};
    b->parent = weft_spawn_with(b->w, v, 4);
    bv_name cn = {"Child"};
    weft_value cv = {b->name, sizeof cn, &cn};
    b->child = weft_spawn_with(b->w, &cv, 1);
    assert_int_equal(weft_set_parent(b->w, b->child, b->parent), WEFT_OK);
    b->lone = weft_spawn_with(b->w, &v[3], 1);
    weft_remote_desc d = {0};
    d.world = b->w;
    d.port = WEFT_REMOTE_ANY_PORT;
    d.flags = WEFT_REMOTE_ALLOW_WRITES;
    assert_int_equal(weft_remote_create(&d, &b->r), WEFT_OK);
    b->port = weft_remote_port(b->r);
    *state = b;
    return 0;
}

static int teardown(void **state)
{
    bevy_world *b = *state;
    weft_remote_destroy(b->r);
    weft_world_destroy(b->w);
    free(b);
    return 0;
}

/* ---- a client: one POST on a thread while this thread drives ---- */

typedef struct post_call {
    int port;
    char body[2048];
    char *resp;
    int status;
    volatile int done;
} post_call;

static void *post_main(void *arg)
{
    post_call *c = arg;
    c->status = rc_post(c->port, c->body, &c->resp);
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Sends the request (printf-style) and returns the parsed JSON-RPC answer. */
static json_t *brp(bevy_world *b, const char *fmt, ...)
{
    post_call *c = calloc(1, sizeof *c);
    c->port = b->port;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->body, sizeof c->body, fmt, ap);
    va_end(ap);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, post_main, c), 0);
    while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
        assert_true(weft_remote_poll(b->r, 8) >= 0);
        rc_sleep_ms(1);
    }
    pthread_join(t, NULL);
    assert_int_equal(c->status, 200);
    json_error_t jerr;
    json_t *j = json_loads(c->resp, 0, &jerr);
    if (!j) {
        fail_msg("not JSON: %s", c->resp);
    }
    free(c->resp);
    free(c);
    return j;
}

static json_t *result(json_t *resp)
{
    json_t *r = json_object_get(resp, "result");
    if (!r) {
        char *t = json_dumps(resp, 0);
        fail_msg("an error: %s", t);
    }
    return r;
}

/* Compares a JSON value with the expected text (parsed). */
static void expect_json(json_t *got, const char *want_text)
{
    json_error_t jerr;
    json_t *want = json_loads(want_text, JSON_DECODE_ANY, &jerr);
    assert_non_null(want);
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_SORT_KEYS | JSON_ENCODE_ANY);
        fail_msg("got %s, expected %s", g, want_text);
    }
    json_decref(want);
}

#define ID(e) ((unsigned long long)(e))

static void test_get_components(void **state)
{
    bevy_world *b = *state;
    json_t *r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.get_components\",\"params\":"
                       "{\"entity\":%llu,\"components\":[\"bevy_ecs::name::Name\",\"game::Shape\","
                       "\"game::Player\",\"bevy_transform::components::transform::Transform\","
                       "\"" CHILDREN "\"]}}",
                    ID(b->parent));
    json_t *res = result(r);
    char want[512];
    snprintf(want, sizeof want,
             "{\"components\":{\"bevy_ecs::name::Name\":\"Parent Node\",\"game::Shape\":\"Circle\","
             "\"game::Player\":null,\"bevy_transform::components::transform::Transform\":"
             "{\"translation\":[1,2,3],\"scale\":1},\"" CHILDREN "\":[%llu]},\"errors\":{}}",
             ID(b->child));
    expect_json(res, want);
    json_decref(r);
    /* lenient: the failures are in errors, with bevy_remote's codes */
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"world.get_components\",\"params\":"
               "{\"entity\":%llu,\"components\":[\"bevy_ecs::name::Name\",\"" CHILD_OF "\","
               "\"game::Nope\",\"game::Shape\"]}}",
            ID(b->child));
    res = result(r);
    snprintf(want, sizeof want, "{\"bevy_ecs::name::Name\":\"Child\",\"" CHILD_OF "\":%llu}",
             ID(b->parent));
    expect_json(json_object_get(res, "components"), want);
    json_t *errors = json_object_get(res, "errors");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(errors, "game::Nope"),
                                                        "code")),
                     -23402);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(errors, "game::Shape"),
                                                        "code")),
                     -23403);
    json_decref(r);
    /* strict: the map itself; a failure is the answer */
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"world.get_components\",\"params\":"
               "{\"entity\":%llu,\"components\":[\"bevy_ecs::name::Name\"],\"strict\":true}}",
            ID(b->child));
    expect_json(result(r), "{\"bevy_ecs::name::Name\":\"Child\"}");
    json_decref(r);
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"world.get_components\",\"params\":"
               "{\"entity\":%llu,\"components\":[\"game::Shape\"],\"strict\":true}}",
            ID(b->child));
    assert_int_equal(fx_code(r), -23403);
    json_decref(r);
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"world.get_components\",\"params\":"
               "{\"entity\":999999,\"components\":[\"game::Shape\"]}}");
    assert_int_equal(fx_code(r), -23401);
    json_decref(r);
}

static void test_query_and_list(void **state)
{
    bevy_world *b = *state;
    json_t *r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.query\",\"params\":"
                       "{\"data\":{\"components\":[\"bevy_ecs::name::Name\"],\"option\":"
                       "[\"game::Shape\"],\"has\":[\"game::Player\"]},\"filter\":{\"without\":"
                       "[\"" CHILD_OF "\"]}}}");
    char want[512];
    snprintf(want, sizeof want,
             "[{\"entity\":%llu,\"components\":{\"bevy_ecs::name::Name\":\"Parent Node\","
             "\"game::Shape\":\"Circle\"},\"has\":{\"game::Player\":true}}]",
             ID(b->parent));
    expect_json(result(r), want);
    json_decref(r);
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"world.query\",\"params\":"
               "{\"data\":{\"components\":[\"" CHILD_OF "\"]}}}");
    snprintf(want, sizeof want, "[{\"entity\":%llu,\"components\":{\"" CHILD_OF "\":%llu}}]",
             ID(b->child), ID(b->parent));
    expect_json(result(r), want);
    json_decref(r);
    /* every registered component, or an entity's */
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"world.list_components\"}");
    json_t *all = result(r);
    assert_true(json_is_array(all));
    bool seen = false;
    for (size_t i = 0; i < json_array_size(all); i++) {
        seen |= strcmp(json_string_value(json_array_get(all, i)), "game::Shape") == 0;
    }
    assert_true(seen);
    json_decref(r);
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"world.list_components\",\"params\":"
               "{\"entity\":%llu}}",
            ID(b->lone));
    expect_json(result(r), "[\"bevy_transform::components::transform::Transform\"]");
    json_decref(r);
}

static void test_writes(void **state)
{
    bevy_world *b = *state;
    /* a newtype written as its bare value; a unit variant by name */
    json_t *r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.insert_components\","
                       "\"params\":{\"entity\":%llu,\"components\":{\"bevy_ecs::name::Name\":"
                       "\"Renamed\",\"game::Shape\":\"Square\",\"game::Player\":null}}}",
                    ID(b->lone));
    assert_true(json_is_null(result(r)));
    json_decref(r);
    assert_string_equal(((const bv_name *)weft_get(b->w, b->lone, b->name, sizeof(bv_name)))->name,
                        "Renamed");
    assert_int_equal(*(const int32_t *)weft_get(b->w, b->lone, b->shape, 4), 1);
    assert_true(weft_has(b->w, b->lone, b->marker));
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"world.remove_components\","
               "\"params\":{\"entity\":%llu,\"components\":[\"game::Player\",\"game::Shape\"]}}",
            ID(b->lone));
    assert_true(json_is_null(result(r)));
    json_decref(r);
    assert_false(weft_has(b->w, b->lone, b->marker));
    /* spawn under a parent (Bevy's ChildOf is the parent entity) */
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"world.spawn_entity\",\"params\":"
               "{\"components\":{\"bevy_ecs::name::Name\":\"New\",\"" CHILD_OF "\":%llu}}}",
            ID(b->parent));
    json_t *ev = json_object_get(result(r), "entity");
    assert_true(json_is_integer(ev));
    weft_entity spawned = (weft_entity)json_integer_value(ev);
    json_decref(r);
    assert_true(weft_parent(b->w, spawned) == b->parent);
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"world.get_components\",\"params\":"
               "{\"entity\":%llu,\"components\":[\"" CHILDREN "\"],\"strict\":true}}",
            ID(b->parent));
    char want[256];
    snprintf(want, sizeof want, "{\"" CHILDREN "\":[%llu,%llu]}", ID(b->child), ID(spawned));
    expect_json(result(r), want);
    json_decref(r);
    /* reparent: under lone, then no parent */
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"world.reparent_entities\",\"params\":"
               "{\"entities\":[%llu],\"parent\":%llu}}",
            ID(spawned), ID(b->lone));
    assert_true(json_is_null(result(r)));
    json_decref(r);
    assert_true(weft_parent(b->w, spawned) == b->lone);
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"world.reparent_entities\",\"params\":"
               "{\"entities\":[%llu]}}",
            ID(spawned));
    assert_true(json_is_null(result(r)));
    json_decref(r);
    assert_true(weft_parent(b->w, spawned) == 0);
    /* a parent under its own child: self reparent */
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"world.reparent_entities\",\"params\":"
               "{\"entities\":[%llu],\"parent\":%llu}}",
            ID(b->parent), ID(b->child));
    assert_int_equal(fx_code(r), -23404);
    json_decref(r);
    /* Children written: the list becomes the children, in its order */
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"world.insert_components\",\"params\":"
               "{\"entity\":%llu,\"components\":{\"" CHILDREN "\":[%llu,%llu]}}}",
            ID(b->lone), ID(spawned), ID(b->child));
    assert_true(json_is_null(result(r)));
    json_decref(r);
    assert_true(weft_parent(b->w, b->child) == b->lone);
    assert_true(weft_parent(b->w, spawned) == b->lone);
    /* despawn */
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"world.despawn_entity\",\"params\":"
               "{\"entity\":%llu}}",
            ID(spawned));
    assert_true(json_is_null(result(r)));
    json_decref(r);
    assert_false(weft_is_alive(b->w, spawned));
    r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"world.despawn_entity\",\"params\":"
               "{\"entity\":%llu}}",
            ID(spawned));
    assert_int_equal(fx_code(r), -23401);
    json_decref(r);
}

static void poll_until(bevy_world *b, rc_stream *s, int want)
{
    for (int i = 0; i < 5000 && rc_stream_events(s) < want; i++) {
        assert_true(weft_remote_poll(b->r, 8) >= 0);
        rc_sleep_ms(1);
    }
    assert_int_equal(rc_stream_events(s), want);
}

static void poll_n(bevy_world *b, int n)
{
    for (int i = 0; i < n; i++) {
        assert_true(weft_remote_poll(b->r, 8) >= 0);
        rc_sleep_ms(1);
    }
}

static json_t *last_result(rc_stream *s)
{
    static char last[1 << 16];
    rc_stream_last(s, last, sizeof last);
    json_error_t jerr;
    json_t *j = json_loads(last, 0, &jerr);
    if (!j) {
        fail_msg("event not JSON: %s", last);
    }
    return j;
}

static void test_watch(void **state)
{
    bevy_world *b = *state;
    char body[512];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"world.get_components+watch\",\"params\":"
             "{\"entity\":%llu,\"components\":[\"bevy_ecs::name::Name\","
             "\"bevy_transform::components::transform::Transform\",\"game::Nope\"]}}",
             ID(b->parent));
    /* streamed without being asked for (no Accept header), as bevy_remote does */
    rc_stream *s = rc_stream_open_as(b->port, body, NULL);
    assert_non_null(s);
    poll_until(b, s, 1);
    json_t *ev = last_result(s);
    assert_int_equal(json_integer_value(json_object_get(ev, "id")), 7);
    json_t *res = result(ev);
    expect_json(json_object_get(res, "components"),
                "{\"bevy_ecs::name::Name\":\"Parent Node\",\"bevy_transform::components::"
                "transform::Transform\":{\"translation\":[1,2,3],\"scale\":1}}");
    expect_json(json_object_get(res, "removed"), "[]");
    assert_non_null(json_object_get(json_object_get(res, "errors"), "game::Nope"));
    json_decref(ev);
    /* nothing written: nothing sent */
    poll_n(b, 30);
    assert_int_equal(rc_stream_events(s), 1);
    /* a write of the same bytes is a change (change ticks decide) */
    bv_xform same = *(const bv_xform *)weft_get(b->w, b->parent, b->xform, sizeof same);
    assert_int_equal(weft_insert(b->w, b->parent, b->xform, &same, sizeof same), WEFT_OK);
    poll_until(b, s, 2);
    ev = last_result(s);
    expect_json(json_object_get(result(ev), "components"),
                "{\"bevy_transform::components::transform::Transform\":"
                "{\"translation\":[1,2,3],\"scale\":1}}");
    json_decref(ev);
    /* removed */
    assert_int_equal(weft_remove(b->w, b->parent, b->xform), WEFT_OK);
    poll_until(b, s, 3);
    ev = last_result(s);
    expect_json(json_object_get(result(ev), "components"), "{}");
    expect_json(json_object_get(result(ev), "removed"),
                "[\"bevy_transform::components::transform::Transform\"]");
    json_decref(ev);
    poll_n(b, 30);
    assert_int_equal(rc_stream_events(s), 3);
    rc_stream_close(s);

    /* list_components+watch: {added, removed} */
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"world.list_components+watch\","
             "\"params\":{\"entity\":%llu}}",
             ID(b->lone));
    s = rc_stream_open_as(b->port, body, NULL);
    assert_non_null(s);
    poll_until(b, s, 1);
    ev = last_result(s);
    expect_json(json_object_get(result(ev), "added"),
                "[\"bevy_transform::components::transform::Transform\"]");
    json_decref(ev);
    poll_n(b, 20);
    assert_int_equal(rc_stream_events(s), 1);
    int32_t sq = 1;
    assert_int_equal(weft_insert(b->w, b->lone, b->shape, &sq, sizeof sq), WEFT_OK);
    poll_until(b, s, 2);
    ev = last_result(s);
    expect_json(result(ev), "{\"added\":[\"game::Shape\"],\"removed\":[]}");
    json_decref(ev);
    assert_int_equal(weft_remove(b->w, b->lone, b->shape), WEFT_OK);
    poll_until(b, s, 3);
    ev = last_result(s);
    expect_json(result(ev), "{\"added\":[],\"removed\":[\"game::Shape\"]}");
    json_decref(ev);
    rc_stream_close(s);
    poll_n(b, 5);

    /* a watch cannot be part of a batch */
    json_t *r = brp(b, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.list_components+watch\","
                       "\"params\":{\"entity\":%llu}}]",
                    ID(b->lone));
    assert_int_equal(fx_code(json_array_get(r, 0)), WEFT_REMOTE_INVALID_REQUEST);
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_get_components, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_and_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

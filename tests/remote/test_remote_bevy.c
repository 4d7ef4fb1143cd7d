/* tests/remote/test_remote_bevy.c - weft_remote as a client written for
 * Bevy's remote protocol sees it (bevy_remote 0.16 and later): requests
 * and expected answers in Bevy's shapes, over HTTP on 127.0.0.1.
 *
 * The world holds what a Bevy app would: a Name (a newtype over a string),
 * a unit enum component (Shape), a marker component (a tag), a struct
 * component (Transform-like), one with an enum with data, an option and
 * a nested struct (Motion), a tuple struct (Pair), and the hierarchy, read and written under
 * bevy_ecs::hierarchy::ChildOf and ::Children. Checked: get (lenient:
 * {components, errors}; strict: the map itself, or the error), query,
 * list, insert (a newtype written bare), remove, spawn, despawn, reparent,
 * the +watch forms (streamed without an Accept header; answers are the
 * changes, judged by change ticks: a write of the same bytes is one), a
 * watch in a batch, bevy_remote's error codes, and registry.schema (bevy_remote
 * 0.17's type schemas, built from the type descriptions).
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

/* A component with Bevy's other shapes: an enum with data (a unit
 * variant, a newtype variant, a struct variant), an option, a nested
 * named struct and a tuple struct. */
typedef struct bv_vec2 {
    float x, y;
} bv_vec2;

typedef struct bv_opt {
    bool some;
    float value;
} bv_opt;

typedef struct bv_motion {
    int32_t tag; /* 0 Idle, 1 Speed, 2 Towards */
    union {
        float speed;
        bv_vec2 towards;
    } u;
    bv_opt limit;
    bv_vec2 at;
    int8_t level;
} bv_motion;

typedef struct bevy_world {
    weft_world *w;
    weft_remote *r;
    int port;
    weft_component name, shape, marker, xform, motion, pair;
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

static const weft_field vec2_fields[] = {
    {.name = "x", .kind = WEFT_KIND_F32, .offset = offsetof(bv_vec2, x)},
    {.name = "y", .kind = WEFT_KIND_F32, .offset = offsetof(bv_vec2, y)},
};
static const weft_type_desc vec2_desc = {.name = "glam::Vec2", .size = sizeof(bv_vec2), .align = 4,
                                         .fields = vec2_fields, .field_count = 2};
static const weft_field opt_fields[] = {
    {.name = "some", .kind = WEFT_KIND_BOOL, .offset = offsetof(bv_opt, some)},
    {.name = "value", .kind = WEFT_KIND_F32, .offset = offsetof(bv_opt, value)},
    {.name = "_shape", .kind = WEFT_KIND_SHAPE, .count = WEFT_SHAPE_OPTION},
};
static const weft_type_desc opt_desc = {.size = sizeof(bv_opt), .align = 4, .fields = opt_fields,
                                        .field_count = 3};
static const weft_enum_value variants[] = {{"Idle", 0}, {"Speed", 1}, {"Towards", 2}};
static const weft_field motion_kind_fields[] = {
    {.name = "kind", .kind = WEFT_KIND_ENUM, .offset = offsetof(bv_motion, tag),
     .enum_values = variants, .enum_count = 3},
    {.name = "Speed", .kind = WEFT_KIND_F32, .offset = offsetof(bv_motion, u.speed)},
    {.name = "Towards", .kind = WEFT_KIND_STRUCT, .offset = offsetof(bv_motion, u.towards),
     .type = &vec2_desc},
    {.name = "_shape", .kind = WEFT_KIND_SHAPE, .count = WEFT_SHAPE_ENUM},
};
static const weft_type_desc motion_kind_desc = {.name = "game::MotionKind",
                                                .size = offsetof(bv_motion, limit),
                                                .fields = motion_kind_fields, .field_count = 4};
static const weft_enum_value levels[] = {{"Low", 0}, {"High", 1}};
static const weft_field motion_fields[] = {
    {.name = "kind", .kind = WEFT_KIND_STRUCT, .offset = 0, .type = &motion_kind_desc},
    {.name = "limit", .kind = WEFT_KIND_STRUCT, .offset = offsetof(bv_motion, limit),
     .type = &opt_desc},
    {.name = "at", .kind = WEFT_KIND_STRUCT, .offset = offsetof(bv_motion, at),
     .type = &vec2_desc},
    {.name = "level", .kind = WEFT_KIND_ENUM, .offset = offsetof(bv_motion, level),
     .enum_base = WEFT_KIND_I8, .enum_values = levels, .enum_count = 2},
};
static const weft_type_desc motion_desc = {.name = "Motion", .fields = motion_fields,
                                           .field_count = 4};
static const weft_field pair_fields[] = {
    {.name = "a", .kind = WEFT_KIND_U64, .offset = 0},
    {.name = "b", .kind = WEFT_KIND_ENTITY, .offset = 8},
    {.name = "_shape", .kind = WEFT_KIND_SHAPE, .count = WEFT_SHAPE_TUPLE},
};
static const weft_type_desc pair_desc = {.name = "Pair", .fields = pair_fields,
                                         .field_count = 3};

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
    b->motion = reg(b->w, "game::Motion", sizeof(bv_motion), _Alignof(bv_motion));
    b->pair = reg(b->w, "other_crate::Pair", 16, 8);
    if (weft_component_describe(b->w, b->motion, &motion_desc) != WEFT_OK) {
        fail_msg("%s", weft_last_error(b->w));
    }
    assert_int_equal(weft_component_describe(b->w, b->pair, &pair_desc), WEFT_OK);
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

/* registry.schema (bevy_remote 0.17's export_registry_types): every
 * described type in JsonSchemaBevyType's shape, keyed by type path, with
 * the types its fields refer to; the crate and reflect-type filters. */
static void test_registry_schema(void **state)
{
    bevy_world *b = *state;
    json_t *r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"registry.schema\"}");
    json_t *all = result(r);
#define RT_COMP "\"reflectTypes\":[\"Component\",\"Default\",\"Serialize\",\"Deserialize\"]"
#define RT_VALUE "\"reflectTypes\":[\"Default\",\"Serialize\",\"Deserialize\"]"
#define REF(p) "{\"type\":{\"$ref\":\"#/$defs/" p "\"}}"
    expect_json(json_object_get(all, "bevy_transform::components::transform::Transform"),
                "{\"shortPath\":\"Transform\",\"typePath\":"
                "\"bevy_transform::components::transform::Transform\",\"modulePath\":"
                "\"bevy_transform::components::transform\",\"crateName\":\"bevy_transform\"," RT_COMP
                ",\"kind\":\"Struct\",\"type\":\"object\",\"additionalProperties\":false,"
                "\"properties\":{\"translation\":" REF("[f32; 3]") ",\"scale\":" REF("f32") "},"
                "\"required\":[\"translation\",\"scale\"]}");
    expect_json(json_object_get(all, "[f32; 3]"),
                "{\"shortPath\":\"[f32; 3]\",\"typePath\":\"[f32; 3]\"," RT_VALUE
                ",\"kind\":\"Array\",\"type\":\"array\",\"items\":" REF("f32") "}");
    expect_json(json_object_get(all, "f32"), "{\"shortPath\":\"f32\",\"typePath\":\"f32\"," RT_VALUE
                                             ",\"kind\":\"Value\",\"type\":\"float\"}");
    /* a newtype is a TupleStruct in Bevy's schema (serde writes it bare) */
    expect_json(json_object_get(all, "bevy_ecs::name::Name"),
                "{\"shortPath\":\"Name\",\"typePath\":\"bevy_ecs::name::Name\",\"modulePath\":"
                "\"bevy_ecs::name\",\"crateName\":\"bevy_ecs\"," RT_COMP
                ",\"kind\":\"TupleStruct\",\"type\":\"array\",\"prefixItems\":["
                REF("alloc::string::String") "],\"items\":false}");
    expect_json(json_object_get(all, "alloc::string::String"),
                "{\"shortPath\":\"String\",\"typePath\":\"alloc::string::String\",\"modulePath\":"
                "\"alloc::string\",\"crateName\":\"alloc\"," RT_VALUE
                ",\"kind\":\"Value\",\"type\":\"string\"}");
    /* a newtype over a C enum: a unit-only enum */
    expect_json(json_object_get(all, "game::Shape"),
                "{\"shortPath\":\"Shape\",\"typePath\":\"game::Shape\",\"modulePath\":\"game\","
                "\"crateName\":\"game\"," RT_COMP ",\"kind\":\"Enum\",\"type\":\"string\","
                "\"oneOf\":[\"Circle\",\"Square\"]}");
    /* a tag: a unit struct */
    expect_json(json_object_get(all, "game::Player"),
                "{\"shortPath\":\"Player\",\"typePath\":\"game::Player\",\"modulePath\":\"game\","
                "\"crateName\":\"game\"," RT_COMP ",\"kind\":\"Struct\",\"type\":\"object\","
                "\"additionalProperties\":false}");
    /* an option field is not required; nested types have entries */
    expect_json(json_object_get(all, "game::Motion"),
                "{\"shortPath\":\"Motion\",\"typePath\":\"game::Motion\",\"modulePath\":\"game\","
                "\"crateName\":\"game\"," RT_COMP ",\"kind\":\"Struct\",\"type\":\"object\","
                "\"additionalProperties\":false,\"properties\":{\"kind\":" REF("game::MotionKind")
                ",\"limit\":" REF("core::option::Option<f32>") ",\"at\":" REF("glam::Vec2")
                ",\"level\":" REF("game::Motion::level") "},"
                "\"required\":[\"kind\",\"at\",\"level\"]}");
    expect_json(json_object_get(all, "game::MotionKind"),
                "{\"shortPath\":\"MotionKind\",\"typePath\":\"game::MotionKind\",\"modulePath\":"
                "\"game\",\"crateName\":\"game\"," RT_VALUE ",\"kind\":\"Enum\",\"type\":\"object\","
                "\"oneOf\":[{\"typePath\":\"game::MotionKind::Idle\",\"shortPath\":\"Idle\"},"
                "{\"type\":\"array\",\"kind\":\"Tuple\",\"typePath\":\"game::MotionKind::Speed\","
                "\"shortPath\":\"Speed\",\"prefixItems\":[" REF("f32") "],\"items\":false},"
                "{\"type\":\"object\",\"kind\":\"Struct\",\"typePath\":\"game::MotionKind::Towards\","
                "\"shortPath\":\"Towards\",\"properties\":{"
                "\"x\":{\"type\":{\"$ref\":\"#/$defs/f32\"},\"typePath\":\"x\"},"
                "\"y\":{\"type\":{\"$ref\":\"#/$defs/f32\"},\"typePath\":\"y\"}},"
                "\"additionalProperties\":false,\"required\":[\"x\",\"y\"]}]}");
    expect_json(json_object_get(all, "core::option::Option<f32>"),
                "{\"shortPath\":\"Option<f32>\",\"typePath\":\"core::option::Option<f32>\","
                "\"modulePath\":\"core::option\",\"crateName\":\"core\"," RT_VALUE
                ",\"kind\":\"Enum\",\"type\":\"object\",\"oneOf\":["
                "{\"typePath\":\"core::option::Option<f32>::None\",\"shortPath\":\"None\"},"
                "{\"type\":\"array\",\"kind\":\"Tuple\",\"typePath\":"
                "\"core::option::Option<f32>::Some\",\"shortPath\":\"Some\",\"prefixItems\":["
                REF("f32") "],\"items\":false}]}");
    expect_json(json_object_get(all, "game::Motion::level"),
                "{\"shortPath\":\"level\",\"typePath\":\"game::Motion::level\",\"modulePath\":"
                "\"game::Motion\",\"crateName\":\"game\"," RT_VALUE
                ",\"kind\":\"Enum\",\"type\":\"string\",\"oneOf\":[\"Low\",\"High\"]}");
    expect_json(json_object_get(all, "other_crate::Pair"),
                "{\"shortPath\":\"Pair\",\"typePath\":\"other_crate::Pair\",\"modulePath\":"
                "\"other_crate\",\"crateName\":\"other_crate\"," RT_COMP
                ",\"kind\":\"TupleStruct\",\"type\":\"array\",\"prefixItems\":[" REF("u64") ","
                REF("bevy_ecs::entity::Entity") "],\"items\":false}");
    /* Bevy maps an opaque type that is not a primitive to "object" */
    expect_json(json_object_get(all, "bevy_ecs::entity::Entity"),
                "{\"shortPath\":\"Entity\",\"typePath\":\"bevy_ecs::entity::Entity\","
                "\"modulePath\":\"bevy_ecs::entity\",\"crateName\":\"bevy_ecs\","
                "\"reflectTypes\":[\"Serialize\",\"Deserialize\"],\"kind\":\"Value\","
                "\"type\":\"object\"}");
    /* every entry is keyed by its typePath, and every $ref resolves */
    const char *key;
    json_t *e;
    json_object_foreach(all, key, e) {
        assert_string_equal(json_string_value(json_object_get(e, "typePath")), key);
        char *text = json_dumps(e, 0);
        for (char *p = strstr(text, "#/$defs/"); p; p = strstr(p + 1, "#/$defs/")) {
            char target[256];
            size_t n = strcspn(p + 8, "\"");
            snprintf(target, sizeof target, "%.*s", (int)n, p + 8);
            if (!json_object_get(all, target)) {
                fail_msg("%s refers to %s, which is not in the answer", key, target);
            }
        }
        free(text);
    }
    /* an undescribed component with bytes cannot be read or written: left out */
    weft_component opaque = reg(b->w, "game::Opaque", 4, 4);
    assert_true(opaque != 0);
    json_t *r2 = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"registry.schema\"}");
    assert_null(json_object_get(result(r2), "game::Opaque"));
    assert_int_equal(json_object_size(result(r2)), json_object_size(all));
    json_decref(r2);

    /* the crate filters: a type without a crate passes them, as in Bevy */
    json_t *f = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"registry.schema\",\"params\":"
                       "{\"with_crates\":[\"game\",\"glam\"]}}");
    size_t want = 0;
    json_object_foreach(all, key, e) {
        json_t *crate = json_object_get(e, "crateName");
        bool in = !crate || strcmp(json_string_value(crate), "game") == 0 ||
                  strcmp(json_string_value(crate), "glam") == 0;
        want += in;
        assert_true((json_object_get(result(f), key) != NULL) == in);
    }
    assert_int_equal(json_object_size(result(f)), want);
    assert_non_null(json_object_get(result(f), "game::Motion"));
    assert_non_null(json_object_get(result(f), "f32"));
    assert_null(json_object_get(result(f), "bevy_ecs::name::Name"));
    json_decref(f);
    f = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"registry.schema\",\"params\":"
               "{\"without_crates\":[\"game\"]}}");
    assert_null(json_object_get(result(f), "game::Motion"));
    assert_null(json_object_get(result(f), "game::MotionKind"));
    assert_non_null(json_object_get(result(f), "glam::Vec2"));
    assert_non_null(json_object_get(result(f), "bevy_ecs::name::Name"));
    json_decref(f);

    /* type_limit: the reflect types; a type is a Resource while one is
     * present */
    bv_xform x = {{0, 0, 0}, 2};
    assert_int_equal(weft_resource_insert(b->w, b->xform, &x, sizeof x), WEFT_OK);
    f = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"registry.schema\",\"params\":"
               "{\"type_limit\":{\"with\":[\"Resource\"]}}}");
    expect_json(json_object_get(json_object_get(result(f),
                                                "bevy_transform::components::transform::Transform"),
                                "reflectTypes"),
                "[\"Component\",\"Resource\",\"Default\",\"Serialize\",\"Deserialize\"]");
    assert_int_equal(json_object_size(result(f)), 1);
    json_decref(f);
    f = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"registry.schema\",\"params\":"
               "{\"type_limit\":{\"with\":[\"Component\"],\"without\":[\"Resource\"]},"
               "\"with_crates\":[\"game\"]}}");
    json_t *keys = json_array();
    json_object_foreach(result(f), key, e) {
        json_array_append_new(keys, json_string(key));
    }
    /* jansson keeps insertion order: components in registration order */
    expect_json(keys, "[\"game::Shape\",\"game::Player\",\"game::Motion\",\"weft.ChildOf\"]");
    json_decref(keys);
    json_decref(f);

    /* bad params: -32602, as serde refuses them in bevy_remote */
    static const char *const bad[] = {
        "[1]", "{\"with_crates\":\"game\"}", "{\"without_crates\":[1]}",
        "{\"type_limit\":3}", "{\"type_limit\":{\"with\":\"Component\"}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *br = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"registry.schema\","
                            "\"params\":%s}",
                         bad[i]);
        assert_int_equal(fx_code(br), WEFT_REMOTE_INVALID_PARAMS);
        json_decref(br);
    }
    json_decref(r);
}

/* bevy_remote 0.17 (which weft follows) has no world.trigger_event,
 * world.write_message or world.observe+watch (0.18 and 0.19 added them):
 * they are not served under Bevy's names (docs/remote.md). */
static void test_later_methods_not_served(void **state)
{
    bevy_world *b = *state;
    static const char *const names[] = {"world.trigger_event", "world.write_message",
                                        "world.observe+watch", "world.observe"};
    uint64_t before = weft_world_hash(b->w);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        json_t *r = brp(b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":"
                           "{\"event\":\"game::Boom\",\"message\":\"game::Hit\"}}",
                        names[i]);
        assert_int_equal(fx_code(r), WEFT_REMOTE_METHOD_NOT_FOUND);
        json_decref(r);
    }
    assert_true(weft_world_hash(b->w) == before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_get_components, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_and_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registry_schema, setup, teardown),
        cmocka_unit_test_setup_teardown(test_later_methods_not_served, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

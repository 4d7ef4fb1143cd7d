/* tests/remote/test_remote_rpc.c - every weft_remote method and error code,
 * answered through weft_remote_handle (no server), and the world unchanged
 * by every refused request.
 * SPDX-License-Identifier: MIT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "remote_fixture.h"

typedef struct fx_state {
    fx_world fx;
    weft_remote *r;
} fx_state;

static int setup_flags(void **state, uint32_t flags)
{
    fx_state *s = calloc(1, sizeof *s);
    fx_make(&s->fx);
    weft_remote_desc d = {0};
    d.world = s->fx.w;
    d.flags = WEFT_REMOTE_NO_SERVER | flags;
    if (weft_remote_create(&d, &s->r) != WEFT_OK) {
        return -1;
    }
    *state = s;
    return 0;
}

static int setup_rw(void **state)
{
    return setup_flags(state, WEFT_REMOTE_ALLOW_WRITES);
}

static int setup_ro(void **state)
{
    return setup_flags(state, 0);
}

static int teardown(void **state)
{
    fx_state *s = *state;
    weft_remote_destroy(s->r);
    weft_world_destroy(s->fx.w);
    free(s);
    return 0;
}

static json_t *result_of(json_t *resp)
{
    assert_non_null(resp);
    assert_int_equal(fx_code(resp), 0);
    assert_string_equal(json_string_value(json_object_get(resp, "jsonrpc")), "2.0");
    return json_object_get(resp, "result");
}

static void test_get_components(void **state)
{
    fx_state *s = *state;
    json_t *resp = fx_call(s->r,
                           "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"world.get_components\","
                           "\"params\":{\"entity\":%llu,\"components\":[\"Position\",\"Health\","
                           "\"Tag\",\"Nope\",\"Opaque\"]}}",
                           (unsigned long long)s->fx.a);
    json_t *res = result_of(resp);
    assert_int_equal(json_integer_value(json_object_get(resp, "id")), 7);
    json_t *comps = json_object_get(res, "components");
    json_t *pos = json_object_get(comps, "Position");
    assert_true(json_number_value(json_object_get(pos, "x")) == 1.5);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(comps, "Health"), "hp")),
                     10);
    assert_true(json_is_null(json_object_get(comps, "Tag"))); /* a unit struct */
    assert_non_null(json_object_get(comps, "Tag"));
    json_t *errors = json_object_get(res, "errors");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(errors, "Nope"), "code")),
        fx_bevy_code(WEFT_ERR_UNKNOWN_COMPONENT, 0));
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(errors, "Opaque"), "code")),
        fx_bevy_code(WEFT_ERR_NOT_FOUND, 0));
    json_decref(resp);

    /* strict: the first failure fails the request */
    resp = fx_call(s->r,
                   "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"world.get_components\","
                   "\"params\":{\"entity\":%llu,\"components\":[\"Position\",\"Health\"],"
                   "\"strict\":true}}",
                   (unsigned long long)s->fx.b);
    assert_int_equal(fx_code(resp), fx_bevy_code(WEFT_ERR_NOT_FOUND, 0));
    json_t *data = json_object_get(json_object_get(resp, "error"), "data");
    assert_string_equal(json_string_value(json_object_get(data, "status")), "WEFT_ERR_NOT_FOUND");
    assert_string_equal(json_string_value(json_object_get(resp, "id")), "s");
    json_decref(resp);
}

static void test_query(void **state)
{
    fx_state *s = *state;
    json_t *resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.query\","
                                 "\"params\":{\"data\":{\"components\":[\"Position\"],"
                                 "\"option\":[\"Health\"],\"has\":[\"Tag\"]}}}");
    json_t *res = result_of(resp);
    assert_int_equal(json_array_size(res), 2);
    int seen = 0;
    size_t i;
    json_t *row;
    json_array_foreach(res, i, row) {
        weft_entity e = (weft_entity)json_integer_value(json_object_get(row, "entity"));
        json_t *comps = json_object_get(row, "components");
        json_t *has = json_object_get(row, "has");
        assert_non_null(json_object_get(comps, "Position"));
        if (e == s->fx.a) {
            seen |= 1;
            assert_non_null(json_object_get(comps, "Health"));
            assert_true(json_is_true(json_object_get(has, "Tag")));
        } else {
            assert_true(e == s->fx.b);
            seen |= 2;
            assert_null(json_object_get(comps, "Health"));
            assert_true(json_is_false(json_object_get(has, "Tag")));
        }
    }
    assert_int_equal(seen, 3);
    json_decref(resp);

    /* filter: with Tag -> only a; without Tag -> b; option all */
    resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"world.query\","
                         "\"params\":{\"data\":{\"option\":\"all\"},"
                         "\"filter\":{\"with\":[\"Position\"],\"without\":[\"Tag\"]}}}");
    res = result_of(resp);
    assert_int_equal(json_array_size(res), 1);
    row = json_array_get(res, 0);
    assert_true((weft_entity)json_integer_value(json_object_get(row, "entity")) == s->fx.b);
    assert_true(json_number_value(json_object_get(
                    json_object_get(json_object_get(row, "components"), "Position"), "x")) ==
                7.0);
    json_decref(resp);

    /* no params: every entity */
    resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"world.query\"}");
    assert_int_equal(json_array_size(result_of(resp)), 3);
    json_decref(resp);

    /* unknown component: empty when lax, an error when strict */
    resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"world.query\","
                         "\"params\":{\"data\":{\"components\":[\"Nope\"]}}}");
    assert_int_equal(json_array_size(result_of(resp)), 0);
    json_decref(resp);
    resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"world.query\","
                         "\"params\":{\"data\":{\"components\":[\"Nope\"]},\"strict\":true}}");
    assert_int_equal(fx_code(resp), fx_bevy_code(WEFT_ERR_UNKNOWN_COMPONENT, 0));
    json_decref(resp);
    resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"world.query\","
                         "\"params\":{\"data\":{\"components\":\"Position\"}}}");
    assert_int_equal(fx_code(resp), WEFT_REMOTE_INVALID_PARAMS);
    json_decref(resp);
}

static void test_list(void **state)
{
    fx_state *s = *state;
    json_t *resp = fx_call(s->r,
                           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.list_components\"}");
    json_t *res = result_of(resp);
    assert_int_equal(json_array_size(res), 4);
    assert_string_equal(json_string_value(json_array_get(res, 0)), "Position");
    json_decref(resp);
    resp = fx_call(s->r,
                   "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.list_components\","
                   "\"params\":{\"entity\":%llu}}",
                   (unsigned long long)s->fx.b);
    res = result_of(resp);
    assert_int_equal(json_array_size(res), 1);
    assert_string_equal(json_string_value(json_array_get(res, 0)), "Position");
    json_decref(resp);
    int32_t v = 3;
    weft_resource_insert(s->fx.w, s->fx.opaque, &v, sizeof v);
    resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.list_resources\"}");
    res = result_of(resp);
    assert_int_equal(json_array_size(res), 1);
    assert_string_equal(json_string_value(json_array_get(res, 0)), "Opaque");
    json_decref(resp);
}

static void test_writes(void **state)
{
    fx_state *s = *state;
    weft_world *w = s->fx.w;
    json_t *resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.spawn_entity\","
                                 "\"params\":{\"components\":{\"Position\":{\"x\":3,\"y\":4},"
                                 "\"Tag\":{}}}}");
    weft_entity e = (weft_entity)json_integer_value(json_object_get(result_of(resp), "entity"));
    json_decref(resp);
    assert_true(weft_is_alive(w, e));
    const fx_pos *p = weft_get(w, e, s->fx.pos, sizeof *p);
    assert_non_null(p);
    assert_true(p->x == 3.0f && p->y == 4.0f);
    assert_true(weft_has(w, e, s->fx.tag));

    resp = fx_call(s->r,
                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"world.insert_components\","
                   "\"params\":{\"entity\":%llu,\"components\":{\"Health\":{\"hp\":99}}}}",
                   (unsigned long long)e);
    assert_true(json_is_null(result_of(resp)));
    json_decref(resp);
    const fx_health *h = weft_get(w, e, s->fx.health, sizeof *h);
    assert_non_null(h);
    assert_int_equal(h->hp, 99);

    resp = fx_call(s->r,
                   "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"world.mutate_components\","
                   "\"params\":{\"entity\":%llu,\"component\":\"Health\",\"path\":\"slots[1]\","
                   "\"value\":42}}",
                   (unsigned long long)e);
    result_of(resp);
    json_decref(resp);
    h = weft_get(w, e, s->fx.health, sizeof *h);
    assert_int_equal(h->slots[1], 42);
    assert_int_equal(h->hp, 99);
    resp = fx_call(s->r,
                   "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"world.mutate_components\","
                   "\"params\":{\"entity\":%llu,\"component\":\"Position\",\"path\":\".y\","
                   "\"value\":-1.25}}",
                   (unsigned long long)e);
    result_of(resp);
    json_decref(resp);
    p = weft_get(w, e, s->fx.pos, sizeof *p);
    assert_true(p->x == 3.0f && p->y == -1.25f);

    resp = fx_call(s->r,
                   "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"world.remove_components\","
                   "\"params\":{\"entity\":%llu,\"components\":[\"Tag\",\"Health\"]}}",
                   (unsigned long long)e);
    result_of(resp);
    json_decref(resp);
    assert_false(weft_has(w, e, s->fx.tag));
    assert_false(weft_has(w, e, s->fx.health));

    resp = fx_call(s->r,
                   "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"world.reparent_entities\","
                   "\"params\":{\"entities\":[%llu,%llu],\"parent\":%llu}}",
                   (unsigned long long)s->fx.b, (unsigned long long)s->fx.c,
                   (unsigned long long)e);
    result_of(resp);
    json_decref(resp);
    assert_true(weft_parent(w, s->fx.b) == e);
    assert_true(weft_parent(w, s->fx.c) == e);
    /* a relationship source reads as {"target": <entity>} */
    resp = fx_call(s->r,
                   "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"world.get_components\","
                   "\"params\":{\"entity\":%llu,\"components\":[\"weft.ChildOf\"],\"strict\":true}}",
                   (unsigned long long)s->fx.b);
    /* strict: the map itself (bevy_remote's strict answer) */
    assert_true((weft_entity)json_integer_value(json_object_get(
                    json_object_get(result_of(resp), "weft.ChildOf"), "target")) == e);
    json_decref(resp);
    /* a cycle is refused, nothing changes */
    uint64_t before = weft_world_hash(w);
    resp = fx_call(s->r,
                   "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"world.reparent_entities\","
                   "\"params\":{\"entities\":[%llu],\"parent\":%llu}}",
                   (unsigned long long)e, (unsigned long long)s->fx.b);
    assert_int_equal(fx_code(resp), -23404 /* bevy_remote: self reparent */);
    json_decref(resp);
    assert_true(weft_world_hash(w) == before);
    resp = fx_call(s->r,
                   "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"world.reparent_entities\","
                   "\"params\":{\"entities\":[%llu]}}",
                   (unsigned long long)s->fx.c);
    result_of(resp);
    json_decref(resp);
    assert_true(weft_parent(w, s->fx.c) == 0);

    resp = fx_call(s->r,
                   "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"world.despawn_entity\","
                   "\"params\":{\"entity\":%llu}}",
                   (unsigned long long)e);
    result_of(resp);
    json_decref(resp);
    assert_false(weft_is_alive(w, e));
    assert_false(weft_is_alive(w, s->fx.b)); /* despawned with its parent */
    /* stale now */
    resp = fx_call(s->r,
                   "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"world.despawn_entity\","
                   "\"params\":{\"entity\":%llu}}",
                   (unsigned long long)e);
    assert_int_equal(fx_code(resp), fx_bevy_code(WEFT_ERR_STALE_ENTITY, 0));
    json_decref(resp);
}

/* Every refused request leaves the world's hash and entity count as they
 * were. */
static void test_bad_input_changes_nothing(void **state)
{
    fx_state *s = *state;
    weft_world *w = s->fx.w;
    unsigned long long a = (unsigned long long)s->fx.a;
    struct {
        const char *text;
        int code;
    } cases[] = {
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.spawn_entity\",\"params\":"
         "{\"components\":{\"Position\":{\"x\":\"no\"}}}}",
         fx_bevy_code(WEFT_ERR_TYPE_MISMATCH, 0)},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.spawn_entity\",\"params\":"
         "{\"components\":{\"Position\":{},\"Nope\":{}}}}",
         fx_bevy_code(WEFT_ERR_UNKNOWN_COMPONENT, 0)},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.spawn_entity\",\"params\":"
         "{\"components\":[]}}",
         WEFT_REMOTE_INVALID_PARAMS},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.insert_components\",\"params\":"
         "{\"entity\":%llu,\"components\":{\"Health\":{\"hp\":1,\"bogus\":2}}}}",
         -23402 /* an unknown field: a component error */},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.insert_components\",\"params\":"
         "{\"entity\":\"%llu\",\"components\":{}}}",
         WEFT_REMOTE_INVALID_PARAMS},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.remove_components\",\"params\":"
         "{\"entity\":%llu,\"components\":[\"Health\",\"Nope\"]}}",
         fx_bevy_code(WEFT_ERR_UNKNOWN_COMPONENT, 0)},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.mutate_components\",\"params\":"
         "{\"entity\":%llu,\"component\":\"Health\",\"path\":\"slots[3]\",\"value\":1}}",
         fx_bevy_code(WEFT_ERR_CAPACITY, 0)},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.mutate_components\",\"params\":"
         "{\"entity\":%llu,\"component\":\"Health\",\"path\":\"nope\",\"value\":1}}",
         -23402 /* no such field */},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.mutate_components\",\"params\":"
         "{\"entity\":%llu,\"component\":\"Health\",\"path\":\"hp\",\"value\":\"x\"}}",
         fx_bevy_code(WEFT_ERR_TYPE_MISMATCH, 0)},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.despawn_entity\",\"params\":"
         "{\"entity\":123456789}}",
         fx_bevy_code(WEFT_ERR_STALE_ENTITY, 0)},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.despawn_entity\",\"params\":[1]}",
         WEFT_REMOTE_INVALID_PARAMS},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.reparent_entities\",\"params\":"
         "{\"entities\":[%llu,0]}}",
         WEFT_REMOTE_INVALID_PARAMS},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.nope\"}", WEFT_REMOTE_METHOD_NOT_FOUND},
        {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"world.query\"}", WEFT_REMOTE_INVALID_REQUEST},
        {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"world.query\"}",
         WEFT_REMOTE_INVALID_REQUEST},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", WEFT_REMOTE_INVALID_REQUEST},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.query\",\"params\":3}",
         WEFT_REMOTE_INVALID_REQUEST},
        {"[]", WEFT_REMOTE_INVALID_REQUEST},
        {"42", WEFT_REMOTE_INVALID_REQUEST},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.query\"", WEFT_REMOTE_PARSE_ERROR},
        {"", WEFT_REMOTE_PARSE_ERROR},
        /* the parse error quotes raw bytes that are not UTF-8: the answer
         * must still be JSON (found by fuzz_remote) */
        {"\"\\\xdd\x9e\"", WEFT_REMOTE_PARSE_ERROR},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"\\\xc3\"}", WEFT_REMOTE_PARSE_ERROR},
        {"\xff\xfe{}", WEFT_REMOTE_PARSE_ERROR},
        {"{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
         "]]]]]]]]]}",
         WEFT_REMOTE_INVALID_REQUEST},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t hash = weft_world_hash(w);
        weft_world_stats before, after;
        weft_world_get_stats(w, &before);
        json_t *resp = fx_call(s->r, cases[i].text, a);
        assert_non_null(resp);
        if (fx_code(resp) != cases[i].code) {
            fail_msg("case %zu: code %d, expected %d: %s", i, fx_code(resp), cases[i].code,
                     json_dumps(resp, 0));
        }
        assert_non_null(json_string_value(
            json_object_get(json_object_get(resp, "error"), "message")));
        json_decref(resp);
        weft_world_get_stats(w, &after);
        assert_true(weft_world_hash(w) == hash);
        assert_int_equal(before.live_entities, after.live_entities);
        assert_int_equal(before.components, after.components);
    }
}

static void test_resources(void **state)
{
    fx_state *s = *state;
    weft_world *w = s->fx.w;
    json_t *resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                                 "\"world.get_resources\",\"params\":{\"resource\":\"Position\"}}");
    assert_int_equal(fx_code(resp), fx_bevy_code(WEFT_ERR_NOT_FOUND, 1)); /* absent */
    json_decref(resp);
    resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"world.insert_resources\","
                         "\"params\":{\"resource\":\"Position\",\"value\":{\"x\":2,\"y\":3}}}");
    assert_true(json_is_null(result_of(resp)));
    json_decref(resp);
    const fx_pos *p = weft_resource_get(w, s->fx.pos, sizeof *p);
    assert_non_null(p);
    assert_true(p->x == 2.0f && p->y == 3.0f);
    resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"world.mutate_resources\","
                         "\"params\":{\"resource\":\"Position\",\"path\":\".x\",\"value\":9}}");
    result_of(resp);
    json_decref(resp);
    p = weft_resource_get(w, s->fx.pos, sizeof *p);
    assert_true(p->x == 9.0f && p->y == 3.0f);
    resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"world.get_resources\","
                         "\"params\":{\"resource\":\"Position\"}}");
    json_t *value = json_object_get(result_of(resp), "value");
    assert_true(json_number_value(json_object_get(value, "x")) == 9.0);
    assert_true(json_number_value(json_object_get(value, "y")) == 3.0);
    json_decref(resp);
    uint64_t hash = weft_world_hash(w);
    const char *bad[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"world.insert_resources\",\"params\":"
        "{\"resource\":\"Position\",\"value\":{\"x\":\"a\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"world.insert_resources\",\"params\":"
        "{\"resource\":\"Nope\",\"value\":{}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"world.insert_resources\",\"params\":"
        "{\"resource\":\"Position\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"world.mutate_resources\",\"params\":"
        "{\"resource\":\"Position\",\"path\":\"w\",\"value\":1}}",
    };
    int codes[] = {fx_bevy_code(WEFT_ERR_TYPE_MISMATCH, 1),
                   fx_bevy_code(WEFT_ERR_UNKNOWN_COMPONENT, 1), WEFT_REMOTE_INVALID_PARAMS,
                   -23501 /* no such field in the resource */};
    for (int i = 0; i < 4; i++) {
        resp = fx_call(s->r, "%s", bad[i]);
        assert_int_equal(fx_code(resp), codes[i]);
        json_decref(resp);
        assert_true(weft_world_hash(w) == hash);
    }
    resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"world.remove_resources\","
                         "\"params\":{\"resource\":\"Position\"}}");
    result_of(resp);
    json_decref(resp);
    assert_false(weft_resource_has(w, s->fx.pos));
}

/* +watch through weft_remote_handle: {value, etag}, never held. */
static void test_watch_in_process(void **state)
{
    fx_state *s = *state;
    json_t *resp = fx_call(s->r,
                           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.get_components+watch\","
                           "\"params\":{\"entity\":%llu,\"components\":[\"Position\"]}}",
                           (unsigned long long)s->fx.a);
    json_t *res = result_of(resp);
    assert_non_null(json_object_get(json_object_get(json_object_get(res, "value"), "components"),
                                    "Position"));
    char etag[64];
    snprintf(etag, sizeof etag, "%s", json_string_value(json_object_get(res, "etag")));
    assert_int_equal(strlen(etag), 42); /* <tick>.<shape>.<value hash> */
    json_decref(resp);
    /* same value: same etag, answered at once (no hold without the server) */
    resp = fx_call(s->r,
                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"weft.get_components+watch\","
                   "\"params\":{\"entity\":%llu,\"components\":[\"Position\"],\"etag\":\"%s\"}}",
                   (unsigned long long)s->fx.a, etag);
    /* the value's hash (the etag's last part) is the same; its tick moved */
    assert_string_equal(json_string_value(json_object_get(result_of(resp), "etag")) + 26,
                        etag + 26);
    json_decref(resp);
    fx_pos p = {-5.0f, 5.0f};
    assert_int_equal(weft_insert(s->fx.w, s->fx.a, s->fx.pos, &p, sizeof p), WEFT_OK);
    resp = fx_call(s->r,
                   "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"weft.get_components+watch\","
                   "\"params\":{\"entity\":%llu,\"components\":[\"Position\"],\"etag\":\"%s\"}}",
                   (unsigned long long)s->fx.a, etag);
    assert_string_not_equal(json_string_value(json_object_get(result_of(resp), "etag")) + 26,
                            etag + 26);
    json_decref(resp);
    resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"weft.list_components+watch\","
                         "\"params\":{\"etag\":\"0\"}}");
    assert_int_equal(json_array_size(json_object_get(result_of(resp), "value")), 4);
    json_decref(resp);
    /* writing methods have no +watch; the etag must be a string */
    resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"world.spawn_entity+watch\","
                         "\"params\":{\"components\":{}}}");
    assert_int_equal(fx_code(resp), WEFT_REMOTE_METHOD_NOT_FOUND);
    json_decref(resp);
    resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"weft.list_components+watch\","
                         "\"params\":{\"etag\":7}}");
    assert_int_equal(fx_code(resp), WEFT_REMOTE_INVALID_PARAMS);
    json_decref(resp);
}

static void test_batch_and_notifications(void **state)
{
    fx_state *s = *state;
    json_t *resp = fx_call(
        s->r, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.list_components\"},"
              "{\"jsonrpc\":\"2.0\",\"method\":\"world.list_components\"},"
              "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"},"
              "{\"jsonrpc\":\"2.0\",\"method\":\"nope\"},"
              "7]");
    assert_true(json_is_array(resp));
    assert_int_equal(json_array_size(resp), 3); /* no answer to notifications */
    assert_int_equal(fx_code(json_array_get(resp, 0)), 0);
    assert_int_equal(fx_code(json_array_get(resp, 1)), WEFT_REMOTE_METHOD_NOT_FOUND);
    assert_int_equal(fx_code(json_array_get(resp, 2)), WEFT_REMOTE_INVALID_REQUEST);
    assert_true(json_is_null(json_object_get(json_array_get(resp, 2), "id")));
    json_decref(resp);
    /* only notifications: nothing to answer */
    assert_null(fx_call(s->r, "[{\"jsonrpc\":\"2.0\",\"method\":\"world.query\"}]"));
    assert_null(fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"method\":\"world.query\"}"));
    /* a batch over the limit is refused whole */
    char big[8192];
    size_t n = 0;
    big[n++] = '[';
    for (int i = 0; i < 65; i++) {
        n += (size_t)snprintf(big + n, sizeof big - n, "%s{\"jsonrpc\":\"2.0\",\"id\":%d,"
                              "\"method\":\"rpc.discover\"}", i ? "," : "", i);
    }
    big[n++] = ']';
    big[n] = '\0';
    resp = fx_call(s->r, "%s", big);
    assert_false(json_is_array(resp));
    assert_int_equal(fx_code(resp), WEFT_REMOTE_INVALID_REQUEST);
    json_decref(resp);
    int64_t requests = 0, errors = 0;
    assert_int_equal(weft_remote_counts(s->r, &requests, &errors), WEFT_OK);
    assert_true(requests >= 8 && errors >= 3);
}

static void test_discover(void **state)
{
    fx_state *s = *state;
    json_t *resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"rpc.discover\"}");
    json_t *res = result_of(resp);
    assert_string_equal(json_string_value(json_object_get(res, "openrpc")), "1.3.2");
    json_t *methods = json_object_get(res, "methods");
    const char *want[] = {"world.get_components", "world.query", "world.spawn_entity",
                          "world.insert_components", "world.remove_components",
                          "world.despawn_entity", "world.reparent_entities",
                          "world.list_components", "world.mutate_components",
                          "world.get_resources", "world.insert_resources", "rpc.discover"};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        bool found = false;
        size_t i;
        json_t *m;
        json_array_foreach(methods, i, m) {
            found |= strcmp(json_string_value(json_object_get(m, "name")), want[k]) == 0;
        }
        assert_true(found);
    }
    json_decref(resp);
}

static void test_read_only(void **state)
{
    fx_state *s = *state;
    uint64_t hash = weft_world_hash(s->fx.w);
    const char *writes[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.spawn_entity\",\"params\":"
        "{\"components\":{}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.despawn_entity\",\"params\":"
        "{\"entity\":%llu}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.remove_components\",\"params\":"
        "{\"entity\":%llu,\"components\":[\"Tag\"]}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.mutate_components\",\"params\":"
        "{\"entity\":%llu,\"component\":\"Health\",\"path\":\"hp\",\"value\":1}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.insert_resources\",\"params\":"
        "{\"resource\":\"Position\",\"value\":{}}}",
    };
    for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++) {
        json_t *resp = fx_call(s->r, writes[i], (unsigned long long)s->fx.a);
        assert_int_equal(fx_code(resp), WEFT_REMOTE_WEFT_ERROR - WEFT_ERR_ACCESS_VIOLATION);
        json_decref(resp);
    }
    assert_true(weft_world_hash(s->fx.w) == hash);
    json_t *resp = fx_call(s->r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world.query\"}");
    assert_int_equal(fx_code(resp), 0);
    json_decref(resp);
}

static void test_misuse(void **state)
{
    (void)state;
    weft_remote *r = (weft_remote *)0x1;
    weft_remote_desc d = {0};
    assert_int_equal(weft_remote_create(NULL, &r), WEFT_ERR_INVALID_ARG);
    assert_null(r);
    assert_int_equal(weft_remote_create(&d, NULL), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_remote_create(&d, &r), WEFT_ERR_INVALID_HANDLE);
    weft_world *w = weft_world_create(NULL);
    d.world = w;
    d._start_canary = 1;
    assert_int_equal(weft_remote_create(&d, &r), WEFT_ERR_INVALID_ARG);
    d._start_canary = 0;
    d.flags = 1u << 7;
    assert_int_equal(weft_remote_create(&d, &r), WEFT_ERR_INVALID_ARG);
    d.flags = WEFT_REMOTE_NO_SERVER;
    d.bind_address = "not-an-address";
    assert_int_equal(weft_remote_create(&d, &r), WEFT_ERR_INVALID_ARG);
    d.bind_address = NULL;
    d.port = 70000;
    assert_int_equal(weft_remote_create(&d, &r), WEFT_ERR_INVALID_ARG);
    d.port = 0;
    d.max_batch = -1;
    assert_int_equal(weft_remote_create(&d, &r), WEFT_ERR_INVALID_ARG);
    d.max_batch = 0;
    d.token = "";
    assert_int_equal(weft_remote_create(&d, &r), WEFT_ERR_INVALID_ARG);
    d.token = NULL;
    assert_int_equal(weft_remote_create(&d, &r), WEFT_OK);
    assert_int_equal(weft_remote_port(r), 0);
    assert_int_equal(weft_remote_poll(r, 0), -1);
    assert_int_equal(weft_remote_last_status(r), WEFT_ERR_INVALID_ARG);
    assert_true(strlen(weft_remote_last_error(r)) > 0);
    assert_int_equal(weft_remote_poll(r, 4), 0);
    assert_null(weft_remote_handle(r, NULL, 3, NULL));
    assert_int_equal(weft_remote_poll(NULL, 1), -1);
    assert_null(weft_remote_handle(NULL, "{}", 2, NULL));
    assert_int_equal(weft_remote_last_status(NULL), WEFT_ERR_INVALID_HANDLE);
    assert_non_null(weft_remote_last_error(NULL));
    assert_int_equal(weft_remote_counts(NULL, NULL, NULL), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_remote_destroy(NULL), WEFT_OK);
    assert_int_equal(weft_remote_destroy(r), WEFT_OK);
    weft_world_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_get_components, setup_rw, teardown),
        cmocka_unit_test_setup_teardown(test_query, setup_rw, teardown),
        cmocka_unit_test_setup_teardown(test_list, setup_rw, teardown),
        cmocka_unit_test_setup_teardown(test_writes, setup_rw, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input_changes_nothing, setup_rw, teardown),
        cmocka_unit_test_setup_teardown(test_resources, setup_rw, teardown),
        cmocka_unit_test_setup_teardown(test_watch_in_process, setup_rw, teardown),
        cmocka_unit_test_setup_teardown(test_batch_and_notifications, setup_rw, teardown),
        cmocka_unit_test_setup_teardown(test_discover, setup_ro, teardown),
        cmocka_unit_test_setup_teardown(test_read_only, setup_ro, teardown),
        cmocka_unit_test(test_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/api/test_api_json.c - JSON through type descriptions: the exact
// text of a component, entity and query output; lossless round trips of
// random values of every kind (written, read back over the same entities:
// the world hash is unchanged); spawning from JSON; and rejection of
// malformed, deeply nested and mistyped input, unknown fields and
// components, out-of-range numbers and dangling entities, each with its
// status, a message naming the path, and the world unchanged.
// SPDX-License-Identifier: MIT
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_world.h"
#include "weft.h"

typedef struct vec2 {
    float x, y;
} vec2;

typedef struct slot {
    uint16_t item;
    int8_t count;
} slot;

typedef struct body {
    vec2 position;
    slot slots[3];
    char label[10];
    int32_t mood;
    bool alive;
    weft_entity target;
    double mass;
    uint64_t big;
    int64_t neg;
} body;

static const weft_field vec2_fields[] = {
    {.name = "x", .kind = WEFT_KIND_F32, .offset = offsetof(vec2, x)},
    {.name = "y", .kind = WEFT_KIND_F32, .offset = offsetof(vec2, y)},
};
static const weft_type_desc vec2_desc = {"vec2", sizeof(vec2), _Alignof(vec2), vec2_fields, 2};
static const weft_field slot_fields[] = {
    {.name = "item", .kind = WEFT_KIND_U16, .offset = offsetof(slot, item)},
    {.name = "count", .kind = WEFT_KIND_I8, .offset = offsetof(slot, count)},
};
static const weft_type_desc slot_desc = {"slot", sizeof(slot), _Alignof(slot), slot_fields, 2};
static const weft_enum_value moods[] = {{"calm", 0}, {"angry", 7}, {"sleepy", -3}};
static const weft_field body_fields[] = {
    {.name = "position", .kind = WEFT_KIND_STRUCT, .offset = offsetof(body, position),
     .type = &vec2_desc},
    {.name = "slots", .kind = WEFT_KIND_STRUCT, .offset = offsetof(body, slots), .count = 3,
     .type = &slot_desc},
    {.name = "label", .kind = WEFT_KIND_STRING, .offset = offsetof(body, label), .count = 10},
    {.name = "mood", .kind = WEFT_KIND_ENUM, .offset = offsetof(body, mood),
     .enum_values = moods, .enum_count = 3},
    {.name = "alive", .kind = WEFT_KIND_BOOL, .offset = offsetof(body, alive)},
    {.name = "target", .kind = WEFT_KIND_ENTITY, .offset = offsetof(body, target)},
    {.name = "mass", .kind = WEFT_KIND_F64, .offset = offsetof(body, mass)},
    {.name = "big", .kind = WEFT_KIND_U64, .offset = offsetof(body, big)},
    {.name = "neg", .kind = WEFT_KIND_I64, .offset = offsetof(body, neg)},
};
static const weft_type_desc body_desc = {"body", sizeof(body), 0, body_fields, 9};

typedef struct jfix {
    weft_component body, pos, tag, plain;
} jfix;

static jfix jsetup(weft_world *w)
{
    jfix j;
    j.body = tw_comp(w, "body", sizeof(body), _Alignof(body), WEFT_STORAGE_TABLE, 0);
    j.pos = tw_comp(w, "pos", sizeof(vec2), 4, WEFT_STORAGE_SPARSE, 0);
    j.tag = tw_comp(w, "tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    j.plain = tw_comp(w, "plain", 4, 4, WEFT_STORAGE_TABLE, 0);
    assert_int_equal(weft_component_describe(w, j.body, &body_desc), WEFT_OK);
    assert_int_equal(weft_component_describe(w, j.pos, &vec2_desc), WEFT_OK);
    return j;
}

static char *write_entity(weft_world *w, weft_entity e)
{
    size_t need = 0;
    assert_int_equal(weft_json_write_entity(w, e, NULL, 0, &need), WEFT_ERR_CAPACITY);
    char *buf = malloc(need);
    assert_non_null(buf);
    size_t got = 0;
    assert_int_equal(weft_json_write_entity(w, e, buf, need, &got), WEFT_OK);
    assert_int_equal(got, need);
    assert_int_equal(strlen(buf) + 1, need);
    return buf;
}

static void json_writes_exact_text(void **state)
{
    tw_fixture *f = *state;
    jfix j = jsetup(f->w);
    vec2 p = {1.5f, -2.0f};
    int32_t four = 4;
    weft_value vals[3] = {{j.pos, sizeof p, &p}, {j.tag, 0, NULL}, {j.plain, 4, &four}};
    weft_entity e = weft_spawn_with(f->w, vals, 3);
    char buf[256];
    size_t n = 0;
    assert_int_equal(weft_json_write_component(f->w, e, j.pos, buf, sizeof buf, &n), WEFT_OK);
    assert_string_equal(buf, "{\"x\":1.5,\"y\":-2}");
    assert_int_equal(n, strlen(buf) + 1);
    // too small: CAPACITY with the size, nothing written past the buffer
    char small[4] = {'a', 'b', 'c', 'd'};
    assert_int_equal(weft_json_write_component(f->w, e, j.pos, small, sizeof small, &n),
                     WEFT_ERR_CAPACITY);
    assert_int_equal(n, strlen(buf) + 1);
    char *ent = write_entity(f->w, e);
    char want[256];
    snprintf(want, sizeof want,
             "{\"id\":%llu,\"components\":{\"pos\":{\"x\":1.5,\"y\":-2},\"tag\":null}}",
             (unsigned long long)e);
    assert_string_equal(ent, want); // "plain" has no description: left out
    free(ent);
    assert_int_equal(weft_json_write_component(f->w, e, j.plain, buf, sizeof buf, &n),
                     WEFT_ERR_NOT_FOUND);
    assert_int_equal(weft_json_write_component(f->w, e, j.body, buf, sizeof buf, &n),
                     WEFT_ERR_NOT_FOUND);
}

static void json_body_text_and_query(void **state)
{
    tw_fixture *f = *state;
    jfix j = jsetup(f->w);
    body b;
    memset(&b, 0, sizeof b);
    b.position.x = 0.25f;
    b.slots[1].item = 9;
    b.slots[2].count = -5;
    snprintf(b.label, sizeof b.label, "%s", "a\"b\\c");
    b.mood = -3;
    b.alive = true;
    b.mass = 0.1;
    b.big = UINT64_MAX;
    b.neg = INT64_MIN;
    weft_value v = {j.body, sizeof b, &b};
    weft_entity e = weft_spawn_with(f->w, &v, 1);
    char buf[512];
    size_t n;
    assert_int_equal(weft_json_write_component(f->w, e, j.body, buf, sizeof buf, &n), WEFT_OK);
    assert_string_equal(buf, "{\"position\":{\"x\":0.25,\"y\":0},\"slots\":[{\"item\":0,"
                             "\"count\":0},{\"item\":9,\"count\":0},{\"item\":0,\"count\":-5}],"
                             "\"label\":\"a\\\"b\\\\c\",\"mood\":\"sleepy\",\"alive\":true,"
                             "\"target\":0,\"mass\":0.10000000000000001,"
                             "\"big\":\"18446744073709551615\","
                             "\"neg\":-9223372036854775808}");
    weft_entity e2 = weft_spawn_with(f->w, &v, 1);
    weft_spawn(f->w); // no body: not matched
    weft_query_desc qd = {0};
    qd.terms[0].id = j.body;
    qd.term_count = 1;
    weft_query *q = weft_query_create(f->w, &qd);
    uint32_t last = weft_query_last_run(f->w, q);
    size_t need;
    assert_int_equal(weft_json_write_query(f->w, q, NULL, 0, &need), WEFT_ERR_CAPACITY);
    char *all = malloc(need);
    assert_int_equal(weft_json_write_query(f->w, q, all, need, &n), WEFT_OK);
    assert_true(all[0] == '[' && all[strlen(all) - 1] == ']');
    char id1[32], id2[32];
    snprintf(id1, sizeof id1, "{\"id\":%llu,", (unsigned long long)e);
    snprintf(id2, sizeof id2, "{\"id\":%llu,", (unsigned long long)e2);
    assert_true(tw_contains(all, id1) && tw_contains(all, id2));
    assert_true(strstr(all, id1) < strstr(all, id2)); // iteration order
    assert_int_equal(weft_query_last_run(f->w, q), last); // not a run
    free(all);
    // the text reads back to the same bytes
    weft_entity e3 = weft_spawn(f->w);
    assert_int_equal(weft_json_read_component(f->w, e3, j.body, buf, strlen(buf)), WEFT_OK);
    assert_memory_equal(weft_get(f->w, e3, j.body, sizeof b), &b, sizeof b);
}

// Random values of every kind, written and read back over the same
// entities: the world hash must not move.
static void json_round_trip_random_values(void **state)
{
    tw_fixture *f = *state;
    jfix j = jsetup(f->w);
    tw_rng r;
    bool over = false;
    tw_rng_seed(&r, tw_seed_from_env(77, &over));
    weft_entity ents[200];
    for (int i = 0; i < 200; i++) {
        ents[i] = weft_spawn(f->w);
    }
    for (int i = 0; i < 200; i++) {
        body b;
        memset(&b, 0, sizeof b);
        uint32_t fx = (uint32_t)tw_rng_next(&r);
        memcpy(&b.position.x, &fx, 4);
        if (b.position.x != b.position.x || b.position.x - b.position.x != 0) {
            b.position.x = 1.0f; // NaN and infinities are written as null
        }
        b.position.y = (float)(tw_rng_next(&r) % 100000) / 7.0f;
        for (int k = 0; k < 3; k++) {
            b.slots[k].item = (uint16_t)tw_rng_next(&r);
            b.slots[k].count = (int8_t)tw_rng_next(&r);
        }
        uint32_t len = tw_rng_below(&r, 10);
        for (uint32_t k = 0; k < len; k++) {
            b.label[k] = (char)(1 + tw_rng_below(&r, 126)); // control chars too
        }
        b.mood = moods[tw_rng_below(&r, 3)].value;
        b.alive = tw_rng_chance(&r, 50);
        b.target = tw_rng_chance(&r, 50) ? ents[tw_rng_below(&r, 200)] : 0;
        uint64_t bits = tw_rng_next(&r);
        memcpy(&b.mass, &bits, 8);
        if (b.mass != b.mass || b.mass - b.mass != 0) {
            b.mass = -0.0;
        }
        b.big = tw_rng_next(&r);
        b.neg = (int64_t)tw_rng_next(&r);
        vec2 p = {(float)i, -(float)i};
        weft_value vals[3] = {{j.body, sizeof b, &b}, {j.pos, sizeof p, &p}, {j.tag, 0, NULL}};
        assert_int_equal(weft_insert_many(f->w, ents[i], vals, 1 + (int)tw_rng_below(&r, 3)),
                         WEFT_OK);
    }
    uint64_t h = weft_world_hash(f->w);
    for (int i = 0; i < 200; i++) {
        char *text = write_entity(f->w, ents[i]);
        weft_status st = weft_json_read_entity(f->w, ents[i], text, strlen(text));
        if (st != WEFT_OK) {
            fail_msg("entity %d: %s (%s)", i, weft_last_error(f->w), text);
        }
        free(text);
    }
    assert_int_equal(weft_world_hash(f->w), h);
    assert_int_equal(weft_world_check(f->w), WEFT_OK);
}

static void json_spawn_and_partial_update(void **state)
{
    tw_fixture *f = *state;
    jfix j = jsetup(f->w);
    weft_entity target = weft_spawn(f->w);
    char text[256];
    snprintf(text, sizeof text,
             "{\"components\":{\"pos\":{\"x\":3,\"y\":4},\"tag\":{},"
             "\"body\":{\"target\":%llu,\"mood\":\"angry\",\"slots\":[{},{\"count\":2},{}]}}}",
             (unsigned long long)target);
    weft_entity e = weft_json_spawn(f->w, text, strlen(text));
    assert_true(e != 0);
    assert_true(weft_has(f->w, e, j.tag));
    const vec2 *p = weft_get(f->w, e, j.pos, sizeof *p);
    assert_true(p->x == 3.0f && p->y == 4.0f);
    const body *b = weft_get(f->w, e, j.body, sizeof *b);
    assert_true(b->target == target && b->mood == 7 && b->slots[1].count == 2);
    // a partial update keeps the other fields
    const char *upd = "{\"y\":-1}";
    assert_int_equal(weft_json_read_component(f->w, e, j.pos, upd, strlen(upd)), WEFT_OK);
    p = weft_get(f->w, e, j.pos, sizeof *p);
    assert_true(p->x == 3.0f && p->y == -1.0f);
    // relationships as {"target": ...}
    weft_component child_of = weft_child_of(f->w);
    char rel[128];
    snprintf(rel, sizeof rel, "{\"components\":{\"weft.ChildOf\":{\"target\":%llu}}}",
             (unsigned long long)target);
    weft_entity kid = weft_json_spawn(f->w, rel, strlen(rel));
    assert_true(kid != 0);
    assert_true(weft_parent(f->w, kid) == target);
    (void)child_of;
    char *out = write_entity(f->w, kid);
    assert_true(tw_contains(out, "\"weft.ChildOf\":{\"target\":"));
    free(out);
    out = write_entity(f->w, target); // the list is kept by weft: not written
    assert_false(tw_contains(out, "targets"));
    free(out);
}

// Each bad input: status, a message containing `needle`, world unchanged.
static void expect_bad(tw_fixture *f, weft_entity e, weft_component c, const char *text,
                       weft_status st, const char *needle)
{
    tw_snap s = tw_snap_take(f->w);
    weft_status got = c ? weft_json_read_component(f->w, e, c, text, strlen(text))
                        : weft_json_read_entity(f->w, e, text, strlen(text));
    if (got != st) {
        fail_msg("'%s': got %s (%s)", text, weft_status_name(got), weft_last_error(f->w));
    }
    tw_expect_error(f, st, needle);
    tw_snap_expect_same(f->w, &s);
}

static void json_rejects_bad_input(void **state)
{
    tw_fixture *f = *state;
    jfix j = jsetup(f->w);
    body b0;
    memset(&b0, 0, sizeof b0);
    weft_value v = {j.body, sizeof b0, &b0};
    weft_entity e = weft_spawn_with(f->w, &v, 1);
    expect_bad(f, e, j.body, "{\"position\":{\"x\":1", WEFT_ERR_BAD_FORMAT, "line");
    // entity 0 is no entity (reading into it used to spawn, storing the new
    // id through a NULL pointer)
    expect_bad(f, 0, 0, "{\"components\":{\"pos\":{\"x\":1}}}", WEFT_ERR_INVALID_ENTITY,
               NULL);
    expect_bad(f, 0, 0, "{\"components\":{}}", WEFT_ERR_INVALID_ENTITY, NULL);
    expect_bad(f, e, j.body, "", WEFT_ERR_BAD_FORMAT, NULL);
    expect_bad(f, e, j.body, "{} trailing", WEFT_ERR_BAD_FORMAT, NULL);
    expect_bad(f, e, j.body, "{\"mass\":1,\"mass\":2}", WEFT_ERR_BAD_FORMAT, NULL);
    expect_bad(f, e, j.body, "{\"position\":{\"z\":1}}", WEFT_ERR_NOT_FOUND, "body.position.z");
    expect_bad(f, e, j.body, "{\"position\":{\"x\":\"1\"}}", WEFT_ERR_TYPE_MISMATCH,
               "body.position.x");
    expect_bad(f, e, j.body, "{\"slots\":[{},{\"item\":70000},{}]}", WEFT_ERR_TYPE_MISMATCH,
               "body.slots[1].item");
    expect_bad(f, e, j.body, "{\"slots\":[{},{}]}", WEFT_ERR_TYPE_MISMATCH, "body.slots");
    expect_bad(f, e, j.body, "{\"slots\":[{},{\"count\":-129},{}]}", WEFT_ERR_TYPE_MISMATCH,
               "count");
    expect_bad(f, e, j.body, "{\"mood\":\"happy\"}", WEFT_ERR_TYPE_MISMATCH, "body.mood");
    expect_bad(f, e, j.body, "{\"mood\":5}", WEFT_ERR_TYPE_MISMATCH, "body.mood");
    expect_bad(f, e, j.body, "{\"alive\":1}", WEFT_ERR_TYPE_MISMATCH, "body.alive");
    expect_bad(f, e, j.body, "{\"label\":\"0123456789\"}", WEFT_ERR_TYPE_MISMATCH,
               "body.label");
    expect_bad(f, e, j.body, "{\"label\":\"a\\u0000b\"}", WEFT_ERR_BAD_FORMAT, "u0000");
    expect_bad(f, e, j.body, "{\"big\":-1}", WEFT_ERR_TYPE_MISMATCH, "body.big");
    expect_bad(f, e, j.body, "{\"big\":\"18446744073709551616\"}", WEFT_ERR_TYPE_MISMATCH,
               "body.big");
    expect_bad(f, e, j.body, "{\"mass\":null,\"position\":{\"x\":1e39}}",
               WEFT_ERR_TYPE_MISMATCH, "body.position.x");
    expect_bad(f, e, j.body, "[1,2]", WEFT_ERR_TYPE_MISMATCH, "body");
    weft_entity gone = weft_spawn(f->w);
    assert_int_equal(weft_despawn(f->w, gone), WEFT_OK);
    char dangling[64];
    snprintf(dangling, sizeof dangling, "{\"target\":%llu}", (unsigned long long)gone);
    expect_bad(f, e, j.body, dangling, WEFT_ERR_STALE_ENTITY, "body.target");
    expect_bad(f, e, j.body, "{\"target\":12345678}", WEFT_ERR_STALE_ENTITY, "dangling");
    // deeply nested: refused by the parser, no recursion of ours
    size_t depth = 100000;
    char *deep = malloc(2 * depth + 1);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    deep[2 * depth] = '\0';
    expect_bad(f, e, j.body, deep, WEFT_ERR_BAD_FORMAT, NULL);
    memset(deep, 0, 2 * depth + 1);
    for (size_t k = 0; k < 2000; k++) {
        memcpy(deep + k * 7, "{\"a\":[", 6); // nested through objects and arrays
        deep[k * 7 + 6] = ' ';
    }
    expect_bad(f, e, j.body, deep, WEFT_ERR_BAD_FORMAT, NULL);
    free(deep);
    // entity objects
    expect_bad(f, e, 0, "{\"components\":{\"nope\":{}}}", WEFT_ERR_UNKNOWN_COMPONENT, "nope");
    expect_bad(f, e, 0, "{\"components\":{\"plain\":{}}}", WEFT_ERR_INVALID_ARG, "plain");
    expect_bad(f, e, 0, "{\"components\":{\"tag\":{\"a\":1}}}", WEFT_ERR_TYPE_MISMATCH, "tag");
    expect_bad(f, e, 0, "{\"comps\":{}}", WEFT_ERR_NOT_FOUND, "comps");
    expect_bad(f, e, 0, "{\"id\":1}", WEFT_ERR_TYPE_MISMATCH, "components");
    // all or nothing: a good component next to a bad one changes nothing
    expect_bad(f, e, 0, "{\"components\":{\"pos\":{\"x\":1},\"body\":{\"q\":1}}}",
               WEFT_ERR_NOT_FOUND, "body.q");
    assert_false(weft_has(f->w, e, j.pos));
    assert_int_equal(weft_json_spawn(f->w, "{", 1), 0);
    assert_int_equal(weft_last_status(f->w), WEFT_ERR_BAD_FORMAT);
}

// Every allocation of a read fails in turn: OUT_OF_MEMORY and no change,
// or success; nothing leaks.
static void json_read_survives_allocation_failures(void **state)
{
    tw_fixture *f = *state;
    jfix j = jsetup(f->w);
    weft_entity e = weft_spawn(f->w);
    const char *text = "{\"components\":{\"pos\":{\"x\":1},\"tag\":{},"
                       "\"body\":{\"mood\":\"angry\"}}}";
    for (int64_t n = 1;; n++) {
        tw_snap s = tw_snap_take(f->w);
        tw_alloc_fail_nth(&f->alloc, n, false);
        weft_status st = weft_json_read_entity(f->w, e, text, strlen(text));
        bool injected = tw_alloc_injected(&f->alloc) > 0;
        tw_alloc_disarm(&f->alloc);
        if (!injected) {
            assert_int_equal(st, WEFT_OK);
            break;
        }
        assert_int_equal(st, WEFT_ERR_OUT_OF_MEMORY);
        tw_snap_expect_same_content(f->w, &s);
    }
    assert_true(weft_has(f->w, e, j.tag) && weft_has(f->w, e, j.body));
}

// Resources: written and read through the same descriptions; a partial
// read keeps the other fields; a refused read changes nothing.
static void json_resources(void **state)
{
    tw_fixture *f = *state;
    jfix j = jsetup(f->w);
    char buf[256];
    size_t n = 0;
    assert_int_equal(weft_json_write_resource(f->w, j.pos, buf, sizeof buf, &n),
                     WEFT_ERR_NOT_FOUND); // absent
    assert_int_equal(n, 0);
    vec2 p = {1.5f, -2.0f};
    assert_int_equal(weft_resource_insert(f->w, j.pos, &p, sizeof p), WEFT_OK);
    assert_int_equal(weft_json_write_resource(f->w, j.pos, NULL, 0, &n), WEFT_ERR_CAPACITY);
    assert_int_equal(n, strlen("{\"x\":1.5,\"y\":-2}") + 1);
    assert_int_equal(weft_json_write_resource(f->w, j.pos, buf, sizeof buf, &n), WEFT_OK);
    assert_string_equal(buf, "{\"x\":1.5,\"y\":-2}");

    const char *partial = "{\"y\":8}";
    assert_int_equal(weft_json_read_resource(f->w, j.pos, partial, strlen(partial)), WEFT_OK);
    const vec2 *got = weft_resource_get(f->w, j.pos, sizeof *got);
    assert_non_null(got);
    assert_true(got->x == 1.5f && got->y == 8.0f);

    uint64_t hash = weft_world_hash(f->w);
    const char *bad[] = {"{\"y\":\"no\"}", "{\"z\":1}", "[1]", "{\"x\":"};
    weft_status want[] = {WEFT_ERR_TYPE_MISMATCH, WEFT_ERR_NOT_FOUND, WEFT_ERR_TYPE_MISMATCH,
                          WEFT_ERR_BAD_FORMAT};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(weft_json_read_resource(f->w, j.pos, bad[i], strlen(bad[i])), want[i]);
        assert_true(weft_world_hash(f->w) == hash);
    }
    // undescribed, unknown, tag
    int32_t four = 4;
    assert_int_equal(weft_resource_insert(f->w, j.plain, &four, 4), WEFT_OK);
    assert_int_equal(weft_json_write_resource(f->w, j.plain, buf, sizeof buf, &n),
                     WEFT_ERR_NOT_FOUND);
    assert_int_equal(weft_json_read_resource(f->w, j.plain, "{}", 2), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_json_read_resource(f->w, 999, "{}", 2), WEFT_ERR_UNKNOWN_COMPONENT);
    assert_int_equal(weft_json_write_resource(f->w, 999, buf, sizeof buf, &n),
                     WEFT_ERR_UNKNOWN_COMPONENT);
    assert_int_equal(weft_json_read_resource(f->w, j.tag, "{\"a\":1}", 7),
                     WEFT_ERR_TYPE_MISMATCH);
    assert_false(weft_resource_has(f->w, j.tag));
    assert_int_equal(weft_json_read_resource(f->w, j.tag, "{}", 2), WEFT_OK);
    assert_true(weft_resource_has(f->w, j.tag));
    assert_int_equal(weft_json_write_resource(f->w, j.tag, buf, sizeof buf, &n), WEFT_OK);
    assert_string_equal(buf, "null"); // a unit struct
    assert_int_equal(weft_json_read_resource(f->w, j.tag, "null", 4), WEFT_OK);
    // absent resource: the default for the fields left out
    assert_int_equal(weft_resource_remove(f->w, j.pos), WEFT_OK);
    assert_int_equal(weft_json_read_resource(f->w, j.pos, partial, strlen(partial)), WEFT_OK);
    got = weft_resource_get(f->w, j.pos, sizeof *got);
    assert_true(got->x == 0.0f && got->y == 8.0f);
}


// The writer emits only valid UTF-8: a string field holding bytes that
// are not (a stray continuation, an overlong form, a surrogate, a cut
// sequence) is refused with BAD_FORMAT naming the field; valid multi-byte
// text passes and reads back.
static void json_writer_refuses_invalid_utf8(void **state)
{
    tw_fixture *f = *state;
    jfix j = jsetup(f->w);
    body b;
    memset(&b, 0, sizeof b);
    weft_entity e = weft_spawn(f->w);
    static const char *const bad[] = {"a\200b", "\xC0\xAF", "\xED\xA0\x80", "\xE2\x82",
                                      "\xF4\x90\x80\x80", "ok\xFF"};
    char buf[1024];
    size_t n = 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(b.label, 0, sizeof b.label);
        memcpy(b.label, bad[i], strlen(bad[i]));
        assert_int_equal(weft_insert(f->w, e, j.body, &b, sizeof b), WEFT_OK);
        assert_int_equal(weft_json_write_component(f->w, e, j.body, buf, sizeof buf, &n),
                         WEFT_ERR_BAD_FORMAT);
        assert_non_null(strstr(weft_last_error(f->w), "'label'"));
        assert_int_equal(n, 0);
        assert_int_equal(weft_json_write_entity(f->w, e, buf, sizeof buf, &n),
                         WEFT_ERR_BAD_FORMAT);
    }
    memset(b.label, 0, sizeof b.label);
    memcpy(b.label, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 9); /* e-acute, euro, emoji */
    assert_int_equal(weft_insert(f->w, e, j.body, &b, sizeof b), WEFT_OK);
    assert_int_equal(weft_json_write_component(f->w, e, j.body, buf, sizeof buf, &n), WEFT_OK);
    memset(b.label, 'x', sizeof b.label - 1);
    weft_entity e2 = weft_spawn(f->w);
    assert_int_equal(weft_json_read_component(f->w, e2, j.body, buf, n - 1), WEFT_OK);
    const body *got = weft_get(f->w, e2, j.body, sizeof(body));
    assert_memory_equal(got->label, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 10);
}

// Every float reads back bit for bit, -0.0 included (it was written "-0"
// and read back as +0.0); NaN and the infinities are written as the
// strings "NaN", "Infinity", "-Infinity" and read back.
static void json_floats_round_trip_exactly(void **state)
{
    tw_fixture *f = *state;
    jfix j = jsetup(f->w);
    const float fs[] = {-0.0f, 0.0f, 1e-45f, -1.17549435e-38f, 3.40282347e38f, 0.1f,
                        16777217.0f, -123456.789f, (float)INFINITY, -(float)INFINITY};
    const double ds[] = {-0.0, 5e-324, 1.7976931348623157e308, 0.1, 9007199254740993.0,
                         -2.2250738585072014e-308, 1e22, 123456789012345678.0, INFINITY,
                         -INFINITY};
    char buf[1024];
    size_t n = 0;
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++) {
        vec2 p = {fs[i], fs[sizeof fs / sizeof fs[0] - 1 - i]};
        weft_value v = {j.pos, sizeof p, &p};
        weft_entity e = weft_spawn_with(f->w, &v, 1);
        assert_int_equal(weft_json_write_component(f->w, e, j.pos, buf, sizeof buf, &n), WEFT_OK);
        weft_entity e2 = weft_spawn(f->w);
        if (weft_json_read_component(f->w, e2, j.pos, buf, n - 1) != WEFT_OK) {
            fail_msg("%s: %s", buf, weft_last_error(f->w));
        }
        const vec2 *got = weft_get(f->w, e2, j.pos, sizeof(vec2));
        if (memcmp(&got->x, &p.x, 4) != 0 || memcmp(&got->y, &p.y, 4) != 0) {
            fail_msg("f32 %a/%a wrote %s, read back %a/%a", (double)p.x, (double)p.y, buf,
                     (double)got->x, (double)got->y);
        }
    }
    body b;
    memset(&b, 0, sizeof b);
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        b.mass = ds[i];
        weft_value v = {j.body, sizeof b, &b};
        weft_entity e = weft_spawn_with(f->w, &v, 1);
        assert_int_equal(weft_json_write_component(f->w, e, j.body, buf, sizeof buf, &n),
                         WEFT_OK);
        weft_entity e2 = weft_spawn(f->w);
        assert_int_equal(weft_json_read_component(f->w, e2, j.body, buf, n - 1), WEFT_OK);
        const body *got = weft_get(f->w, e2, j.body, sizeof(body));
        if (memcmp(&got->mass, &b.mass, 8) != 0) {
            fail_msg("f64 %a wrote %s, read back %a", b.mass, buf, got->mass);
        }
    }
    vec2 nan2 = {NAN, -0.0f};
    weft_value v = {j.pos, sizeof nan2, &nan2};
    weft_entity e = weft_spawn_with(f->w, &v, 1);
    assert_int_equal(weft_json_write_component(f->w, e, j.pos, buf, sizeof buf, &n), WEFT_OK);
    assert_string_equal(buf, "{\"x\":\"NaN\",\"y\":-0.0}");
    weft_entity e2 = weft_spawn(f->w);
    assert_int_equal(weft_json_read_component(f->w, e2, j.pos, buf, n - 1), WEFT_OK);
    const vec2 *got = weft_get(f->w, e2, j.pos, sizeof(vec2));
    assert_true(isnan(got->x));
    assert_true(signbit(got->y));
    /* another string is still refused */
    static const char word[] = "{\"x\":\"nan\"}";
    assert_int_equal(weft_json_read_component(f->w, e2, j.pos, word, sizeof word - 1),
                     WEFT_ERR_TYPE_MISMATCH);
}

// A NUL byte inside the given length is refused by every reader (it was
// read as the end: {"x":1<NUL>} read as x = 1).
static void json_readers_refuse_nul(void **state)
{
    tw_fixture *f = *state;
    jfix j = jsetup(f->w);
    weft_entity e = weft_spawn(f->w);
    uint64_t before = weft_world_hash(f->w);
    static const char comp[] = "{\"x\":1\0}";
    assert_int_equal(weft_json_read_component(f->w, e, j.pos, comp, sizeof comp - 1),
                     WEFT_ERR_BAD_FORMAT);
    assert_non_null(strstr(weft_last_error(f->w), "NUL"));
    static const char comp2[] = "{\"x\":1}\0junk";
    assert_int_equal(weft_json_read_component(f->w, e, j.pos, comp2, sizeof comp2 - 1),
                     WEFT_ERR_BAD_FORMAT);
    static const char ent[] = "{\"components\":{\"pos\":{\"x\":1}}}\0";
    assert_int_equal(weft_json_read_entity(f->w, e, ent, sizeof ent - 1), WEFT_ERR_BAD_FORMAT);
    assert_int_equal(weft_json_spawn(f->w, ent, sizeof ent - 1), 0);
    assert_int_equal(weft_last_status(f->w), WEFT_ERR_BAD_FORMAT);
    weft_component res = tw_comp(f->w, "res", sizeof(vec2), 4, WEFT_STORAGE_TABLE, 0);
    assert_int_equal(weft_component_describe(f->w, res, &vec2_desc), WEFT_OK);
    assert_int_equal(weft_json_read_resource(f->w, res, comp, sizeof comp - 1),
                     WEFT_ERR_BAD_FORMAT);
    assert_false(weft_resource_has(f->w, res));
    assert_int_equal(weft_world_hash(f->w), before);
    /* without the NUL, the same texts are read */
    assert_int_equal(weft_json_read_component(f->w, e, j.pos, comp2, 7), WEFT_OK);
}

// serde's shapes: a newtype is its inner value, a tuple struct an array,
// an option null or the value, an enum with data "Unit" or
// {"Variant": payload} (newtype, tuple and struct variants); each written
// exactly so and read back; wrong shapes refused naming the path.
typedef struct sh_name {
    char name[24];
} sh_name;
typedef struct sh_pair {
    int32_t a;
    float b;
} sh_pair;
typedef struct sh_opt {
    bool some;
    int32_t value;
} sh_opt;
typedef struct sh_shape {
    int32_t tag; // Circle, Square(f32), Rect(pair as tuple), Poly{n}
    union {
        float side;
        sh_pair rect;
        struct {
            uint16_t n;
        } poly;
    } u;
} sh_shape;
typedef struct sh_all {
    sh_name name;
    sh_pair pair;
    sh_opt opt;
    sh_shape shape;
} sh_all;

static const weft_field sh_name_fields[] = {
    {.name = "name", .kind = WEFT_KIND_STRING, .offset = 0, .count = 24},
    {.name = "_shape", .kind = WEFT_KIND_SHAPE, .count = WEFT_SHAPE_NEWTYPE},
};
static const weft_type_desc sh_name_desc = {.name = "Name", .size = sizeof(sh_name),
                                            .fields = sh_name_fields, .field_count = 2};
static const weft_field sh_pair_fields[] = {
    {.name = "_shape", .kind = WEFT_KIND_SHAPE, .count = WEFT_SHAPE_TUPLE},
    {.name = "a", .kind = WEFT_KIND_I32, .offset = offsetof(sh_pair, a)},
    {.name = "b", .kind = WEFT_KIND_F32, .offset = offsetof(sh_pair, b)},
};
static const weft_type_desc sh_pair_desc = {.name = "Pair", .size = sizeof(sh_pair), .align = _Alignof(sh_pair),
                                            .fields = sh_pair_fields, .field_count = 3};
static const weft_field sh_opt_fields[] = {
    {.name = "some", .kind = WEFT_KIND_BOOL, .offset = offsetof(sh_opt, some)},
    {.name = "value", .kind = WEFT_KIND_I32, .offset = offsetof(sh_opt, value)},
    {.name = "_shape", .kind = WEFT_KIND_SHAPE, .count = WEFT_SHAPE_OPTION},
};
static const weft_type_desc sh_opt_desc = {.name = "Opt", .size = sizeof(sh_opt),
                                           .fields = sh_opt_fields, .field_count = 3};
static const weft_enum_value sh_variants[] = {{"Circle", 0}, {"Square", 1}, {"Rect", 2},
                                              {"Poly", 3}};
static const weft_field sh_poly_fields[] = {
    {.name = "n", .kind = WEFT_KIND_U16, .offset = 0},
};
static const weft_type_desc sh_poly_desc = {.name = "Poly", .size = 2, .fields = sh_poly_fields,
                                            .field_count = 1};
static const weft_field sh_shape_fields[] = {
    {.name = "tag", .kind = WEFT_KIND_ENUM, .offset = offsetof(sh_shape, tag),
     .enum_values = sh_variants, .enum_count = 4},
    {.name = "Square", .kind = WEFT_KIND_F32, .offset = offsetof(sh_shape, u.side)},
    {.name = "Rect", .kind = WEFT_KIND_STRUCT, .offset = offsetof(sh_shape, u.rect),
     .type = &sh_pair_desc},
    {.name = "Poly", .kind = WEFT_KIND_STRUCT, .offset = offsetof(sh_shape, u.poly),
     .type = &sh_poly_desc},
    {.name = "_shape", .kind = WEFT_KIND_SHAPE, .count = WEFT_SHAPE_ENUM},
};
static const weft_type_desc sh_shape_desc = {.name = "Shape", .size = sizeof(sh_shape),
                                             .fields = sh_shape_fields, .field_count = 5};
static const weft_field sh_all_fields[] = {
    {.name = "name", .kind = WEFT_KIND_STRUCT, .offset = offsetof(sh_all, name),
     .type = &sh_name_desc},
    {.name = "pair", .kind = WEFT_KIND_STRUCT, .offset = offsetof(sh_all, pair),
     .type = &sh_pair_desc},
    {.name = "opt", .kind = WEFT_KIND_STRUCT, .offset = offsetof(sh_all, opt),
     .type = &sh_opt_desc},
    {.name = "shape", .kind = WEFT_KIND_STRUCT, .offset = offsetof(sh_all, shape),
     .type = &sh_shape_desc},
};
static const weft_type_desc sh_all_desc = {.name = "All", .size = sizeof(sh_all),
                                           .fields = sh_all_fields, .field_count = 4};

static char *sh_write(weft_world *w, weft_entity e, weft_component c)
{
    size_t need = 0;
    assert_int_equal(weft_json_write_component(w, e, c, NULL, 0, &need), WEFT_ERR_CAPACITY);
    char *buf = malloc(need);
    assert_int_equal(weft_json_write_component(w, e, c, buf, need, &need), WEFT_OK);
    return buf;
}

static void json_serde_shapes(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component name = tw_comp(w, "Name", sizeof(sh_name), 1, WEFT_STORAGE_TABLE, 0);
    weft_component shape = tw_comp(w, "Shape", sizeof(sh_shape), 4, WEFT_STORAGE_TABLE, 0);
    weft_component all = tw_comp(w, "All", sizeof(sh_all), 4, WEFT_STORAGE_TABLE, 0);
    assert_int_equal(weft_component_describe(w, name, &sh_name_desc), WEFT_OK);
    assert_int_equal(weft_component_describe(w, shape, &sh_shape_desc), WEFT_OK);
    assert_int_equal(weft_component_describe(w, all, &sh_all_desc), WEFT_OK);
    weft_entity e = weft_spawn(w);
    // a newtype: the bare string, both ways
    static const char parent[] = "\"Parent Node\"";
    assert_int_equal(weft_json_read_component(w, e, name, parent, sizeof parent - 1), WEFT_OK);
    char *t = sh_write(w, e, name);
    assert_string_equal(t, parent);
    free(t);
    assert_string_equal(((const sh_name *)weft_get(w, e, name, sizeof(sh_name)))->name,
                        "Parent Node");
    // a unit variant: its name
    static const char circle[] = "\"Circle\"";
    assert_int_equal(weft_json_read_component(w, e, shape, circle, sizeof circle - 1), WEFT_OK);
    t = sh_write(w, e, shape);
    assert_string_equal(t, circle);
    free(t);
    // the field paths still name fields
    float side = 2.5f;
    int32_t one = 1;
    assert_int_equal(weft_field_set(w, e, shape, ".tag", WEFT_KIND_ENUM, &one, 4), WEFT_OK);
    assert_int_equal(weft_field_set(w, e, shape, ".Square", WEFT_KIND_F32, &side, 4), WEFT_OK);
    t = sh_write(w, e, shape);
    assert_string_equal(t, "{\"Square\":2.5}"); // a newtype variant
    free(t);
    // a tuple variant, then a struct variant: the other payload's bytes start at zero
    static const char rect[] = "{\"Rect\":[3,-0.5]}";
    assert_int_equal(weft_json_read_component(w, e, shape, rect, sizeof rect - 1), WEFT_OK);
    t = sh_write(w, e, shape);
    assert_string_equal(t, rect);
    free(t);
    static const char poly[] = "{\"Poly\":{\"n\":6}}";
    assert_int_equal(weft_json_read_component(w, e, shape, poly, sizeof poly - 1), WEFT_OK);
    const sh_shape *sp = weft_get(w, e, shape, sizeof(sh_shape));
    assert_int_equal(sp->tag, 3);
    assert_int_equal(sp->u.poly.n, 6);
    assert_int_equal(sp->u.rect.b, 0.0f); // zeroed when the variant changed
    // everything nested, round trip
    static const char whole[] = "{\"name\":\"n\",\"pair\":[7,0.25],\"opt\":null,"
                                "\"shape\":\"Circle\"}";
    assert_int_equal(weft_json_read_component(w, e, all, whole, sizeof whole - 1), WEFT_OK);
    t = sh_write(w, e, all);
    assert_string_equal(t, whole);
    free(t);
    static const char some[] = "{\"opt\":42}";
    assert_int_equal(weft_json_read_component(w, e, all, some, sizeof some - 1), WEFT_OK);
    t = sh_write(w, e, all);
    assert_string_equal(t, "{\"name\":\"n\",\"pair\":[7,0.25],\"opt\":42,\"shape\":\"Circle\"}");
    free(t);
    // wrong shapes, each refused with the path named and nothing changed
    uint64_t hash = weft_world_hash(w);
    static const struct {
        const char *text;
        const char *path;
    } bad[] = {
        {"{\"pair\":{\"a\":1,\"b\":2}}", "All.pair"},
        {"{\"pair\":[1]}", "All.pair"},
        {"{\"name\":{\"name\":\"x\"}}", "All.name"},
        {"{\"shape\":\"Square\"}", "All.shape"},
        {"{\"shape\":{\"Circle\":1}}", "All.shape"},
        {"{\"shape\":{\"Hexagon\":1}}", "All.shape"},
        {"{\"shape\":{\"Rect\":[1,2],\"Poly\":{}}}", "All.shape"},
        {"{\"opt\":\"x\"}", "All.opt"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (weft_json_read_component(w, e, all, bad[i].text, strlen(bad[i].text)) !=
            WEFT_ERR_TYPE_MISMATCH) {
            fail_msg("%s was read: %s", bad[i].text, weft_last_error(w));
        }
        assert_non_null(strstr(weft_last_error(w), bad[i].path));
        assert_int_equal(weft_world_hash(w), hash);
    }
    // the schema names the shape
    size_t need = 0;
    weft_json_write_schema(w, shape, NULL, 0, &need);
    char *sc = malloc(need);
    assert_int_equal(weft_json_write_schema(w, shape, sc, need, &need), WEFT_OK);
    assert_non_null(strstr(sc, "\"shape\":\"enum\""));
    free(sc);
}

// A shape's rules are checked when it is described.
static void json_shape_rules(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component c = tw_comp(w, "Two", 8, 4, WEFT_STORAGE_TABLE, 0);
    weft_field two[3] = {
        {.name = "a", .kind = WEFT_KIND_I32, .offset = 0},
        {.name = "b", .kind = WEFT_KIND_I32, .offset = 4},
        {.name = "_shape", .kind = WEFT_KIND_SHAPE, .count = WEFT_SHAPE_NEWTYPE},
    };
    weft_type_desc d = {.name = "Two", .fields = two, .field_count = 3};
    assert_int_equal(weft_component_describe(w, c, &d), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(weft_last_error(w), "newtype"));
    two[2].count = WEFT_SHAPE_OPTION; // the first field is not a bool
    assert_int_equal(weft_component_describe(w, c, &d), WEFT_ERR_INVALID_ARG);
    two[2].count = WEFT_SHAPE_ENUM; // the first field is not an enum
    assert_int_equal(weft_component_describe(w, c, &d), WEFT_ERR_INVALID_ARG);
    two[2].count = 99;
    assert_int_equal(weft_component_describe(w, c, &d), WEFT_ERR_INVALID_ARG);
    // a payload overlapping the tag, or naming no variant
    weft_component sc = tw_comp(w, "Shape2", sizeof(sh_shape), 4, WEFT_STORAGE_TABLE, 0);
    weft_field sf[5];
    memcpy(sf, sh_shape_fields, sizeof sf);
    weft_type_desc sd = sh_shape_desc;
    sd.fields = sf;
    sf[1].offset = 0; // Square on the tag
    assert_int_equal(weft_component_describe(w, sc, &sd), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(weft_last_error(w), "overlap"));
    sf[1].offset = offsetof(sh_shape, u.side);
    sf[1].name = "Triangle";
    assert_int_equal(weft_component_describe(w, sc, &sd), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(weft_last_error(w), "Triangle"));
    sf[1].name = "Square";
    assert_int_equal(weft_component_describe(w, sc, &sd), WEFT_OK);
    // the shape field is no field for paths
    weft_entity e = weft_spawn(w);
    sh_shape v;
    memset(&v, 0, sizeof v);
    assert_int_equal(weft_insert(w, e, sc, &v, sizeof v), WEFT_OK);
    int32_t x = 0;
    assert_int_equal(weft_field_get(w, e, sc, "_shape", WEFT_KIND_I32, &x, 4),
                     WEFT_ERR_NOT_FOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(json_writes_exact_text, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(json_body_text_and_query, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(json_round_trip_random_values, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(json_spawn_and_partial_update, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(json_rejects_bad_input, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(json_resources, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(json_writer_refuses_invalid_utf8, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(json_floats_round_trip_exactly, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(json_readers_refuse_nul, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(json_serde_shapes, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(json_shape_rules, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(json_read_survives_allocation_failures, tw_setup,
                                        tw_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

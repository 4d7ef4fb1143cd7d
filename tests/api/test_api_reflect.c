// tests/api/test_api_reflect.c - black-box tests of type descriptions and
// field paths: a full description (nested struct, arrays, string, enum,
// entity), the validation vectors (each lie gives its status and a message
// naming the field, and leaves the component undescribed), and get/set by
// path with kind, size, index and value-domain checks, change marking and
// hooks of immutable components.
// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_world.h"
#include "weft.h"

typedef struct vec2 {
    float x, y;
} vec2;

typedef enum mood { MOOD_CALM = 0, MOOD_ANGRY = 7, MOOD_SLEEPY = -3 } mood;

typedef struct slot {
    uint16_t item;
    uint16_t count;
} slot;

typedef struct body {
    vec2 position;
    vec2 velocity;
    slot slots[4];
    char label[12];
    int32_t mood;
    bool alive;
    weft_entity target;
    weft_entity friends[2];
    double mass;
} body;

static const weft_field vec2_fields[] = {
    {.name = "x", .kind = WEFT_KIND_F32, .offset = offsetof(vec2, x)},
    {.name = "y", .kind = WEFT_KIND_F32, .offset = offsetof(vec2, y)},
};
static const weft_type_desc vec2_desc = {"vec2", sizeof(vec2), _Alignof(vec2), vec2_fields, 2};

static const weft_field slot_fields[] = {
    {.name = "item", .kind = WEFT_KIND_U16, .offset = offsetof(slot, item)},
    {.name = "count", .kind = WEFT_KIND_U16, .offset = offsetof(slot, count)},
};
static const weft_type_desc slot_desc = {"slot", sizeof(slot), 0, slot_fields, 2};

static const weft_enum_value mood_values[] = {
    {"calm", MOOD_CALM}, {"angry", MOOD_ANGRY}, {"sleepy", MOOD_SLEEPY}};

static weft_field body_fields[] = {
    {.name = "position", .kind = WEFT_KIND_STRUCT, .offset = offsetof(body, position),
     .type = &vec2_desc},
    {.name = "velocity", .kind = WEFT_KIND_STRUCT, .offset = offsetof(body, velocity),
     .type = &vec2_desc},
    {.name = "slots", .kind = WEFT_KIND_STRUCT, .offset = offsetof(body, slots), .count = 4,
     .type = &slot_desc},
    {.name = "label", .kind = WEFT_KIND_STRING, .offset = offsetof(body, label), .count = 12},
    {.name = "mood", .kind = WEFT_KIND_ENUM, .offset = offsetof(body, mood),
     .enum_values = mood_values, .enum_count = 3},
    {.name = "alive", .kind = WEFT_KIND_BOOL, .offset = offsetof(body, alive)},
    {.name = "target", .kind = WEFT_KIND_ENTITY, .offset = offsetof(body, target)},
    {.name = "friends", .kind = WEFT_KIND_ENTITY, .offset = offsetof(body, friends),
     .count = 2},
    {.name = "mass", .kind = WEFT_KIND_F64, .offset = offsetof(body, mass)},
};
#define BODY_NFIELDS ((int32_t)(sizeof body_fields / sizeof body_fields[0]))

static weft_type_desc body_desc(void)
{
    weft_type_desc d = {"body", sizeof(body), 0, body_fields, BODY_NFIELDS};
    return d;
}

// ---- descriptions ----

static void describe_accepts_full_layout(void **state)
{
    tw_fixture *f = *state;
    weft_component b = tw_comp(f->w, "body", sizeof(body), _Alignof(body), WEFT_STORAGE_TABLE, 0);
    assert_false(weft_component_is_described(f->w, b));
    weft_type_desc d = body_desc();
    assert_int_equal(weft_component_describe(f->w, b, &d), WEFT_OK);
    assert_true(weft_component_is_described(f->w, b));
    // described twice
    assert_int_equal(weft_component_describe(f->w, b, &d), WEFT_ERR_ALREADY_EXISTS);
    assert_string_equal(weft_kind_name(WEFT_KIND_ENTITY), "entity");
    assert_string_equal(weft_kind_name((weft_kind)99), "?");
}

// One validation vector: the field array is body_fields with field `i`
// replaced by `bad`; expects `st` and a message containing `needle`.
static void expect_refused(tw_fixture *f, weft_component c, int i, weft_field bad,
                           weft_status st, const char *needle)
{
    weft_field fields[BODY_NFIELDS];
    memcpy(fields, body_fields, sizeof fields);
    fields[i] = bad;
    weft_type_desc d = {"body", 0, 0, fields, BODY_NFIELDS};
    assert_int_equal(weft_component_describe(f->w, c, &d), st);
    tw_expect_error(f, st, needle);
    assert_false(weft_component_is_described(f->w, c));
}

static void describe_validation_vectors(void **state)
{
    tw_fixture *f = *state;
    weft_component b = tw_comp(f->w, "body", sizeof(body), _Alignof(body), WEFT_STORAGE_TABLE, 0);
    weft_field mass = body_fields[8];

    weft_field w1 = mass;
    w1.offset = sizeof(body); // out of range
    expect_refused(f, b, 8, w1, WEFT_ERR_SIZE_MISMATCH, "body.mass");
    w1.offset = sizeof(body) - 2; // straddles the end (and misaligned)
    expect_refused(f, b, 8, w1, WEFT_ERR_BAD_ALIGNMENT, "body.mass");
    w1.offset = offsetof(body, target); // overlaps target
    expect_refused(f, b, 8, w1, WEFT_ERR_INVALID_ARG, "overlap");
    w1 = mass;
    w1.kind = (weft_kind)77;
    expect_refused(f, b, 8, w1, WEFT_ERR_INVALID_ARG, "unknown kind");
    w1 = mass;
    w1.kind = WEFT_KIND_NONE;
    expect_refused(f, b, 8, w1, WEFT_ERR_INVALID_ARG, "unknown kind");
    w1 = mass;
    w1.name = "target"; // duplicate name
    expect_refused(f, b, 8, w1, WEFT_ERR_INVALID_ARG, "twice");
    w1.name = "a.b"; // not an identifier
    expect_refused(f, b, 8, w1, WEFT_ERR_INVALID_ARG, "name");
    w1.name = NULL;
    expect_refused(f, b, 8, w1, WEFT_ERR_INVALID_ARG, "name");
    w1 = mass;
    w1.count = -1;
    expect_refused(f, b, 8, w1, WEFT_ERR_INVALID_ARG, "count");
    w1 = body_fields[7]; // friends[2] -> friends[3] runs into mass
    w1.count = 3;
    expect_refused(f, b, 7, w1, WEFT_ERR_INVALID_ARG, "overlap");
    w1 = body_fields[3]; // string of 0 bytes
    w1.count = 0;
    expect_refused(f, b, 3, w1, WEFT_ERR_INVALID_ARG, "string");
    w1 = body_fields[3]; // string too long for the struct
    w1.count = 1000;
    expect_refused(f, b, 3, w1, WEFT_ERR_SIZE_MISMATCH, "body.label");

    // enums: value outside the base, duplicate name, no values, bad base
    weft_enum_value big[] = {{"small", 1}, {"huge", 300}};
    w1 = body_fields[4];
    w1.enum_base = WEFT_KIND_U8;
    w1.enum_values = big;
    w1.enum_count = 2;
    expect_refused(f, b, 4, w1, WEFT_ERR_INVALID_ARG, "huge");
    weft_enum_value dup[] = {{"a", 1}, {"a", 2}};
    w1.enum_base = 0;
    w1.enum_values = dup;
    expect_refused(f, b, 4, w1, WEFT_ERR_INVALID_ARG, "twice");
    w1.enum_count = 0;
    expect_refused(f, b, 4, w1, WEFT_ERR_INVALID_ARG, "enum");
    w1 = body_fields[4];
    w1.enum_base = WEFT_KIND_F32;
    expect_refused(f, b, 4, w1, WEFT_ERR_INVALID_ARG, "base");

    // nested: missing type, size 0, wrong alignment, a lie inside it
    w1 = body_fields[0];
    w1.type = NULL;
    expect_refused(f, b, 0, w1, WEFT_ERR_INVALID_ARG, "body.position");
    weft_type_desc v0 = vec2_desc;
    v0.size = 0;
    w1.type = &v0;
    expect_refused(f, b, 0, w1, WEFT_ERR_SIZE_MISMATCH, "nested");
    weft_type_desc v3 = vec2_desc;
    v3.align = 3;
    w1.type = &v3;
    expect_refused(f, b, 0, w1, WEFT_ERR_BAD_ALIGNMENT, "nested");
    weft_field vbad[] = {vec2_fields[0], vec2_fields[1]};
    vbad[1].offset = 6; // misaligned float inside vec2
    weft_type_desc vb = {"vec2", sizeof(vec2), 0, vbad, 2};
    w1.type = &vb;
    expect_refused(f, b, 0, w1, WEFT_ERR_BAD_ALIGNMENT, "body.position.y");
    // a struct containing itself never ends: refused at the depth limit
    static weft_field loop_field;
    static weft_type_desc loop_desc;
    loop_field = (weft_field){.name = "inner", .kind = WEFT_KIND_STRUCT, .type = &loop_desc};
    loop_desc = (weft_type_desc){"loop", sizeof(vec2), 0, &loop_field, 1};
    w1 = body_fields[0];
    w1.type = &loop_desc;
    expect_refused(f, b, 0, w1, WEFT_ERR_INVALID_ARG, "deeper");

    // top level: size and alignment lies, tags, NULL, unknown ids
    weft_type_desc d = body_desc();
    d.size = sizeof(body) + 8;
    assert_int_equal(weft_component_describe(f->w, b, &d), WEFT_ERR_SIZE_MISMATCH);
    d = body_desc();
    d.align = 64;
    assert_int_equal(weft_component_describe(f->w, b, &d), WEFT_ERR_BAD_ALIGNMENT);
    d = body_desc();
    d.field_count = -2;
    assert_int_equal(weft_component_describe(f->w, b, &d), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_component_describe(f->w, b, NULL), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_component_describe(f->w, 999, &d), WEFT_ERR_UNKNOWN_COMPONENT);
    weft_component tag = tw_comp(f->w, "tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    d = body_desc();
    assert_int_equal(weft_component_describe(f->w, tag, &d), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_component_describe(NULL, b, &d), WEFT_ERR_INVALID_HANDLE);
    assert_false(weft_component_is_described(f->w, b));
    // and the honest one still goes through afterwards
    assert_int_equal(weft_component_describe(f->w, b, &d), WEFT_OK);
}

static void describe_message_type(void **state)
{
    tw_fixture *f = *state;
    weft_message_desc md = {0};
    md.name = "hit";
    md.size = sizeof(vec2);
    md.align = _Alignof(vec2);
    weft_message_type t = weft_message_register(f->w, &md);
    assert_true(t != 0);
    assert_int_equal(weft_message_describe(f->w, t, &vec2_desc), WEFT_OK);
    assert_int_equal(weft_message_describe(f->w, t, &vec2_desc), WEFT_ERR_ALREADY_EXISTS);
    assert_int_equal(weft_message_describe(f->w, t + 5, &vec2_desc), WEFT_ERR_NOT_FOUND);
}

// Every allocation of a describe fails in turn: OUT_OF_MEMORY and
// undescribed, or OK; nothing leaks (checked by the teardown).
static void describe_survives_allocation_failures(void **state)
{
    tw_fixture *f = *state;
    weft_component b = tw_comp(f->w, "body", sizeof(body), _Alignof(body), WEFT_STORAGE_TABLE, 0);
    weft_type_desc d = body_desc();
    for (int64_t n = 1;; n++) {
        tw_alloc_fail_nth(&f->alloc, n, false);
        weft_status st = weft_component_describe(f->w, b, &d);
        bool injected = tw_alloc_injected(&f->alloc) > 0;
        tw_alloc_disarm(&f->alloc);
        if (!injected) {
            assert_int_equal(st, WEFT_OK);
            break;
        }
        assert_int_equal(st, WEFT_ERR_OUT_OF_MEMORY);
        assert_false(weft_component_is_described(f->w, b));
    }
    assert_true(weft_component_is_described(f->w, b));
}

// ---- field paths ----

typedef struct path_fixture {
    weft_component b;
    weft_entity e;
} path_fixture;

static path_fixture path_setup(tw_fixture *f, uint32_t flags)
{
    path_fixture p;
    p.b = tw_comp(f->w, "body", sizeof(body), _Alignof(body), WEFT_STORAGE_TABLE, flags);
    weft_type_desc d = body_desc();
    assert_int_equal(weft_component_describe(f->w, p.b, &d), WEFT_OK);
    body v;
    memset(&v, 0, sizeof v);
    v.position.x = 1.5f;
    v.slots[2].count = 9;
    snprintf(v.label, sizeof v.label, "%s", "orc");
    v.mood = MOOD_ANGRY;
    v.mass = 80.0;
    weft_value val = {p.b, sizeof v, &v};
    p.e = weft_spawn_with(f->w, &val, 1);
    assert_true(p.e != 0);
    return p;
}

static void path_get_reads_nested_and_indexed_fields(void **state)
{
    tw_fixture *f = *state;
    path_fixture p = path_setup(f, 0);
    float x = 0;
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".position.x", WEFT_KIND_F32, &x, 4),
                     WEFT_OK);
    assert_true(x == 1.5f);
    x = 0;
    assert_int_equal(weft_field_get(f->w, p.e, p.b, "position.x", WEFT_KIND_F32, &x, 4),
                     WEFT_OK); // the leading dot may be left out
    assert_true(x == 1.5f);
    uint16_t n = 0;
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".slots[2].count", WEFT_KIND_U16, &n, 2),
                     WEFT_OK);
    assert_int_equal(n, 9);
    char label[12];
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".label", WEFT_KIND_STRING, label, 12),
                     WEFT_OK);
    assert_string_equal(label, "orc");
    int32_t m = 0;
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".mood", WEFT_KIND_ENUM, &m, 4), WEFT_OK);
    assert_int_equal(m, MOOD_ANGRY);
    slot s;
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".slots[2]", WEFT_KIND_STRUCT, &s,
                                    sizeof s),
                     WEFT_OK);
    assert_int_equal(s.count, 9);
}

static void path_errors_name_the_path(void **state)
{
    tw_fixture *f = *state;
    path_fixture p = path_setup(f, 0);
    float x;
    uint16_t n;
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".position.z", WEFT_KIND_F32, &x, 4),
                     WEFT_ERR_NOT_FOUND);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "'z'");
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".position", WEFT_KIND_F32, &x, 4),
                     WEFT_ERR_TYPE_MISMATCH);
    tw_expect_error(f, WEFT_ERR_TYPE_MISMATCH, "body.position");
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".mass", WEFT_KIND_F32, &x, 4),
                     WEFT_ERR_TYPE_MISMATCH);
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".position.x", WEFT_KIND_F32, &x, 8),
                     WEFT_ERR_SIZE_MISMATCH);
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".slots[4].count", WEFT_KIND_U16, &n, 2),
                     WEFT_ERR_CAPACITY);
    tw_expect_error(f, WEFT_ERR_CAPACITY, "index 4");
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".slots.count", WEFT_KIND_U16, &n, 2),
                     WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".slots[x]", WEFT_KIND_U16, &n, 2),
                     WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".slots[1", WEFT_KIND_U16, &n, 2),
                     WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".mass[0]", WEFT_KIND_F64, &x, 8),
                     WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_field_get(f->w, p.e, p.b, ".position.x.y", WEFT_KIND_F32, &x, 4),
                     WEFT_ERR_TYPE_MISMATCH);
    assert_int_equal(weft_field_get(f->w, p.e, p.b, "", WEFT_KIND_F32, &x, 4),
                     WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_field_get(f->w, p.e, p.b, "..x", WEFT_KIND_F32, &x, 4),
                     WEFT_ERR_NOT_FOUND);
    assert_int_equal(weft_field_get(f->w, p.e, p.b, NULL, WEFT_KIND_F32, &x, 4),
                     WEFT_ERR_INVALID_ARG);
    // component absent, undescribed, entity stale
    weft_entity bare = weft_spawn(f->w);
    assert_int_equal(weft_field_get(f->w, bare, p.b, ".mass", WEFT_KIND_F64, &x, 8),
                     WEFT_ERR_NOT_FOUND);
    weft_component plain = tw_comp(f->w, "plain", 4, 4, WEFT_STORAGE_TABLE, 0);
    assert_int_equal(weft_field_get(f->w, p.e, plain, ".x", WEFT_KIND_F32, &x, 4),
                     WEFT_ERR_NOT_FOUND);
    assert_int_equal(weft_despawn(f->w, bare), WEFT_OK);
    assert_int_equal(weft_field_get(f->w, bare, p.b, ".mass", WEFT_KIND_F64, &x, 8),
                     WEFT_ERR_STALE_ENTITY);
}

static void path_set_writes_and_marks_changed(void **state)
{
    tw_fixture *f = *state;
    path_fixture p = path_setup(f, 0);
    weft_world_increment_change_tick(f->w);
    weft_world_increment_change_tick(f->w);
    uint32_t now = weft_world_change_tick(f->w);
    weft_ticks t0;
    assert_int_equal(weft_get_ticks(f->w, p.e, p.b, &t0), WEFT_OK);
    assert_true(t0.changed < now);
    uint16_t n = 42;
    assert_int_equal(weft_field_set(f->w, p.e, p.b, ".slots[3].count", WEFT_KIND_U16, &n, 2),
                     WEFT_OK);
    const body *v = weft_get(f->w, p.e, p.b, sizeof(body));
    assert_int_equal(v->slots[3].count, 42);
    assert_int_equal(v->slots[2].count, 9);
    weft_ticks t1;
    assert_int_equal(weft_get_ticks(f->w, p.e, p.b, &t1), WEFT_OK);
    assert_int_equal(t1.changed, now);
    assert_int_equal(t1.added, t0.added);

    // value domains: nothing is written on refusal
    tw_snap s = tw_snap_take(f->w);
    uint8_t two = 2;
    assert_int_equal(weft_field_set(f->w, p.e, p.b, ".alive", WEFT_KIND_BOOL, &two, 1),
                     WEFT_ERR_INVALID_ARG);
    int32_t bad_mood = 5;
    assert_int_equal(weft_field_set(f->w, p.e, p.b, ".mood", WEFT_KIND_ENUM, &bad_mood, 4),
                     WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "enum");
    char unterminated[12];
    memset(unterminated, 'a', sizeof unterminated);
    assert_int_equal(weft_field_set(f->w, p.e, p.b, ".label", WEFT_KIND_STRING, unterminated,
                                    12),
                     WEFT_ERR_INVALID_ARG);
    tw_snap_expect_same(f->w, &s);
    int32_t sleepy = MOOD_SLEEPY;
    assert_int_equal(weft_field_set(f->w, p.e, p.b, ".mood", WEFT_KIND_ENUM, &sleepy, 4),
                     WEFT_OK);
    char label[12] = "goblin";
    assert_int_equal(weft_field_set(f->w, p.e, p.b, ".label", WEFT_KIND_STRING, label, 12),
                     WEFT_OK);
    v = weft_get(f->w, p.e, p.b, sizeof(body));
    assert_int_equal(v->mood, MOOD_SLEEPY);
    assert_string_equal(v->label, "goblin");
    assert_int_equal(weft_field_set(f->w, p.e, p.b, ".label", WEFT_KIND_STRING, NULL, 12),
                     WEFT_ERR_INVALID_ARG);
}

static int g_replaced, g_inserted;
static float g_seen_x;

static void on_replace_count(weft_world *w, weft_entity e, weft_component c, void *user)
{
    (void)user;
    g_replaced++;
    const body *v = weft_get(w, e, c, sizeof(body));
    g_seen_x = v->position.x; // the old value is still visible
}

static void on_insert_count(weft_world *w, weft_entity e, weft_component c, void *user)
{
    (void)w;
    (void)e;
    (void)c;
    (void)user;
    g_inserted++;
}

static void path_set_immutable_reinserts_through_hooks(void **state)
{
    tw_fixture *f = *state;
    weft_component_desc cd = {0};
    cd.name = "frozen";
    cd.size = sizeof(body);
    cd.align = _Alignof(body);
    cd.flags = WEFT_COMPONENT_IMMUTABLE;
    cd.lifecycle.on_replace = on_replace_count;
    cd.lifecycle.on_insert = on_insert_count;
    weft_component c = weft_component_register(f->w, &cd);
    assert_true(c != 0);
    weft_type_desc d = body_desc();
    assert_int_equal(weft_component_describe(f->w, c, &d), WEFT_OK);
    body v;
    memset(&v, 0, sizeof v);
    v.position.x = 3.0f;
    weft_value val = {c, sizeof v, &v};
    weft_entity e = weft_spawn_with(f->w, &val, 1);
    g_replaced = g_inserted = 0;
    assert_null(weft_get_mut(f->w, e, c, sizeof(body)));
    float x = 8.0f;
    assert_int_equal(weft_field_set(f->w, e, c, ".position.x", WEFT_KIND_F32, &x, 4), WEFT_OK);
    assert_int_equal(g_replaced, 1);
    assert_int_equal(g_inserted, 1);
    assert_true(g_seen_x == 3.0f);
    const body *now = weft_get(f->w, e, c, sizeof(body));
    assert_true(now->position.x == 8.0f);
}

static void path_works_on_sparse_storage(void **state)
{
    tw_fixture *f = *state;
    weft_component b = tw_comp(f->w, "body", sizeof(body), _Alignof(body),
                               WEFT_STORAGE_SPARSE, 0);
    weft_type_desc d = body_desc();
    assert_int_equal(weft_component_describe(f->w, b, &d), WEFT_OK);
    weft_entity a = weft_spawn(f->w);
    weft_entity e = weft_spawn(f->w);
    body v;
    memset(&v, 0, sizeof v);
    assert_int_equal(weft_insert(f->w, a, b, &v, sizeof v), WEFT_OK);
    v.target = a;
    assert_int_equal(weft_insert(f->w, e, b, &v, sizeof v), WEFT_OK);
    weft_entity got = 0;
    assert_int_equal(weft_field_get(f->w, e, b, ".target", WEFT_KIND_ENTITY, &got, 8),
                     WEFT_OK);
    assert_true(got == a);
    assert_int_equal(weft_field_set(f->w, e, b, ".friends[1]", WEFT_KIND_ENTITY, &e, 8),
                     WEFT_OK);
    assert_true(((const body *)weft_get(f->w, e, b, sizeof(body)))->friends[1] == e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(describe_accepts_full_layout, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(describe_validation_vectors, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(describe_message_type, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(describe_survives_allocation_failures, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(path_get_reads_nested_and_indexed_fields, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(path_errors_name_the_path, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(path_set_writes_and_marks_changed, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(path_set_immutable_reinserts_through_hooks, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(path_works_on_sparse_storage, tw_setup, tw_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* tests/api/test_api_inspect_schema.c - listing a schedule's sets and
 * their members (weft_schedule_sets, weft_schedule_members) and a
 * component's type description as JSON (weft_json_write_schema).
 * SPDX-License-Identifier: MIT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "weft.h"

static void sys_nop(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
}

static void test_sets_and_members(void **state)
{
    (void)state;
    weft_world *w = weft_world_create(NULL);
    weft_schedule *s = weft_schedule_create(w, "Main");
    assert_non_null(s);
    assert_int_equal(weft_schedule_sets(s, NULL, 0), 0);
    weft_system_desc sd = {0};
    sd.fn = sys_nop;
    sd.name = "a";
    weft_node a = weft_schedule_add_system(s, &sd);
    sd.name = "b";
    weft_node b = weft_schedule_add_system(s, &sd);
    sd.name = "c";
    weft_node c = weft_schedule_add_system(s, &sd);
    weft_node outer = weft_schedule_ensure_set(s, "outer");
    weft_node inner = weft_schedule_ensure_set(s, "inner");
    assert_true(a && b && c && outer && inner);
    assert_int_equal(weft_schedule_add_to_set(s, a, inner), WEFT_OK);
    assert_int_equal(weft_schedule_add_to_set(s, b, inner), WEFT_OK);
    assert_int_equal(weft_schedule_add_to_set(s, a, inner), WEFT_OK); /* again: listed once */
    assert_int_equal(weft_schedule_add_to_set(s, inner, outer), WEFT_OK);
    assert_int_equal(weft_schedule_add_to_set(s, c, outer), WEFT_OK);

    weft_node sets[4] = {0};
    assert_int_equal(weft_schedule_sets(s, sets, 4), 2);
    assert_int_equal(sets[0], outer);
    assert_int_equal(sets[1], inner);
    assert_string_equal(weft_schedule_node_name(s, sets[0]), "outer");
    /* a short buffer: the count, and as many as fit */
    weft_node one[1] = {0};
    assert_int_equal(weft_schedule_sets(s, one, 1), 2);
    assert_int_equal(one[0], outer);

    weft_node m[4] = {0};
    assert_int_equal(weft_schedule_members(s, inner, NULL, 0), 2);
    assert_int_equal(weft_schedule_members(s, inner, m, 4), 2);
    assert_int_equal(m[0], a);
    assert_int_equal(m[1], b);
    assert_int_equal(weft_schedule_members(s, outer, m, 4), 2);
    assert_int_equal(m[0], inner);
    assert_int_equal(m[1], c);

    /* misuse: recorded, -1 */
    assert_int_equal(weft_schedule_members(s, a, m, 4), -1); /* not a set */
    assert_int_equal(weft_last_status(w), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_schedule_members(s, WEFT_NODE_SET | 9, m, 4), -1);
    assert_int_equal(weft_schedule_members(s, inner, NULL, 2), -1);
    assert_int_equal(weft_schedule_sets(s, NULL, 3), -1);
    assert_int_equal(weft_schedule_sets(s, sets, -1), -1);
    assert_int_equal(weft_schedule_sets(NULL, sets, 4), -1);
    assert_int_equal(weft_schedule_members(NULL, inner, m, 4), -1);
    weft_world_destroy(w);
}

typedef struct inner_t {
    float x, y;
} inner_t;

typedef struct body_t {
    int32_t hp;
    uint8_t mode;
    char name[8];
    uint8_t alive;
    inner_t at[2];
    uint64_t id;
} body_t;

static void test_schema_json(void **state)
{
    (void)state;
    weft_world *w = weft_world_create(NULL);
    weft_component_desc cd = {0};
    cd.name = "Body";
    cd.size = sizeof(body_t);
    weft_component body = weft_component_register(w, &cd);
    cd.name = "Plain";
    cd.size = 4;
    weft_component plain = weft_component_register(w, &cd);
    static const weft_field inner_fields[] = {
        {.name = "x", .kind = WEFT_KIND_F32, .offset = offsetof(inner_t, x)},
        {.name = "y", .kind = WEFT_KIND_F32, .offset = offsetof(inner_t, y)},
    };
    static const weft_type_desc inner_desc = {.name = "Vec \"2\"", .size = sizeof(inner_t),
                                              .fields = inner_fields, .field_count = 2};
    static const weft_enum_value modes[] = {{"idle", 0}, {"run", 3}};
    static const weft_field fields[] = {
        {.name = "hp", .kind = WEFT_KIND_I32, .offset = offsetof(body_t, hp)},
        {.name = "mode", .kind = WEFT_KIND_ENUM, .offset = offsetof(body_t, mode),
         .enum_base = WEFT_KIND_U8, .enum_values = modes, .enum_count = 2},
        {.name = "name", .kind = WEFT_KIND_STRING, .offset = offsetof(body_t, name), .count = 8},
        {.name = "alive", .kind = WEFT_KIND_BOOL, .offset = offsetof(body_t, alive)},
        {.name = "at", .kind = WEFT_KIND_STRUCT, .offset = offsetof(body_t, at), .count = 2,
         .type = &inner_desc},
        {.name = "id", .kind = WEFT_KIND_U64, .offset = offsetof(body_t, id)},
    };
    static const weft_type_desc desc = {.name = "Body", .fields = fields, .field_count = 6};
    assert_int_equal(weft_component_describe(w, body, &desc), WEFT_OK);

    size_t need = 0;
    assert_int_equal(weft_json_write_schema(w, body, NULL, 0, &need), WEFT_ERR_CAPACITY);
    assert_int_equal(weft_last_status(w), WEFT_OK); /* a size query records nothing */
    char buf[1024];
    assert_true(need > 10 && need <= sizeof buf);
    char small[8];
    assert_int_equal(weft_json_write_schema(w, body, small, sizeof small, &need),
                     WEFT_ERR_CAPACITY);
    assert_int_equal(weft_json_write_schema(w, body, buf, sizeof buf, &need), WEFT_OK);
    assert_int_equal(strlen(buf) + 1, need);
    char want[1024];
    snprintf(want, sizeof want,
        "{\"name\":\"Body\",\"size\":%zu,\"fields\":["
        "{\"name\":\"hp\",\"kind\":\"i32\"},"
        "{\"name\":\"mode\",\"kind\":\"enum\",\"base\":\"u8\",\"values\":"
        "[{\"name\":\"idle\",\"value\":0},{\"name\":\"run\",\"value\":3}]},"
        "{\"name\":\"name\",\"kind\":\"string\",\"count\":8},"
        "{\"name\":\"alive\",\"kind\":\"bool\"},"
        "{\"name\":\"at\",\"kind\":\"struct\",\"count\":2,\"type\":{\"name\":\"Vec \\\"2\\\"\","
        "\"size\":8,\"fields\":[{\"name\":\"x\",\"kind\":\"f32\"},{\"name\":\"y\",\"kind\":\"f32\"}]}},"
        "{\"name\":\"id\",\"kind\":\"u64\"}]}", sizeof(body_t));
    assert_string_equal(buf, want);

    assert_int_equal(weft_json_write_schema(w, plain, buf, sizeof buf, &need), WEFT_ERR_NOT_FOUND);
    assert_int_equal(need, 0);
    assert_int_equal(weft_json_write_schema(w, 999, buf, sizeof buf, &need),
                     WEFT_ERR_UNKNOWN_COMPONENT);
    assert_int_equal(weft_json_write_schema(w, body, buf, sizeof buf, NULL), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_json_write_schema(NULL, body, buf, sizeof buf, &need),
                     WEFT_ERR_INVALID_HANDLE);
    weft_world_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sets_and_members),
        cmocka_unit_test(test_schema_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

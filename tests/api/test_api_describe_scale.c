// tests/api/test_api_describe_scale.c - weft_component_describe on large
// descriptions: a nested type used by many fields is validated once (it
// was validated at every use: 64 fields of one 4,096-field type took
// 2.5 s), and enum names and field names are checked by sorting (an enum
// of 65,536 values took 6.4 s). The inputs below are larger than those:
// before the change they take minutes; ctest's TIMEOUT (20 s, under ASan
// on a shared machine) is the verdict, and no time is measured here. The
// rules still hold: a repeated name or an overlap is found and named.
// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "weft.h"

#define INNER_FIELDS 4096
#define USES 256
#define ENUM_VALUES 65536
#define ENUM_FIELDS 8

static char g_names[INNER_FIELDS][8];
static weft_field g_inner_fields[INNER_FIELDS];
static weft_type_desc g_inner;

static void make_inner(void)
{
    for (int i = 0; i < INNER_FIELDS; i++) {
        snprintf(g_names[i], sizeof g_names[i], "f%d", i);
        g_inner_fields[i] = (weft_field){.name = g_names[i], .kind = WEFT_KIND_U8,
                                         .offset = (size_t)i};
    }
    g_inner = (weft_type_desc){.name = "wide", .size = INNER_FIELDS, .align = 1,
                               .fields = g_inner_fields, .field_count = INNER_FIELDS};
}

static void test_nested_type_used_many_times(void **state)
{
    (void)state;
    make_inner();
    weft_world *w = weft_world_create(NULL);
    weft_component_desc cd = {0};
    cd.name = "Many";
    cd.size = (size_t)INNER_FIELDS * USES;
    cd.align = 1;
    weft_component c = weft_component_register(w, &cd);
    assert_true(c != 0);
    static char names[USES][8];
    static weft_field outer[USES];
    for (int i = 0; i < USES; i++) {
        snprintf(names[i], sizeof names[i], "u%d", i);
        outer[i] = (weft_field){.name = names[i], .kind = WEFT_KIND_STRUCT,
                                .offset = (size_t)i * INNER_FIELDS, .type = &g_inner};
    }
    weft_type_desc d = {.name = "Many", .fields = outer, .field_count = USES};
    assert_int_equal(weft_component_describe(w, c, &d), WEFT_OK);
    /* the copy works: a field deep in the last use */
    weft_entity e = weft_spawn(w);
    static uint8_t zero[(size_t)INNER_FIELDS * USES];
    assert_int_equal(weft_insert(w, e, c, zero, sizeof zero), WEFT_OK);
    uint8_t v = 7;
    assert_int_equal(weft_field_set(w, e, c, ".u255.f4095", WEFT_KIND_U8, &v, 1), WEFT_OK);
    uint8_t got = 0;
    assert_int_equal(weft_field_get(w, e, c, "u255.f4095", WEFT_KIND_U8, &got, 1), WEFT_OK);
    assert_int_equal(got, 7);
    weft_world_destroy(w);
}

static void test_wide_struct_names_and_overlap(void **state)
{
    (void)state;
    make_inner();
    weft_world *w = weft_world_create(NULL);
    weft_component_desc cd = {0};
    cd.name = "Wide";
    cd.size = INNER_FIELDS;
    cd.align = 1;
    weft_component c = weft_component_register(w, &cd);
    /* a repeated name, far apart */
    g_inner_fields[4000].name = g_names[17];
    assert_int_equal(weft_component_describe(w, c, &g_inner), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(weft_last_error(w), "f17"));
    assert_non_null(strstr(weft_last_error(w), "used twice"));
    g_inner_fields[4000].name = g_names[4000];
    /* an overlap: a u16 at byte 99 covers field 100 */
    g_inner_fields[99].kind = WEFT_KIND_U16;
    g_inner_fields[99].offset = 98;
    assert_int_equal(weft_component_describe(w, c, &g_inner), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(weft_last_error(w), "overlap"));
    g_inner_fields[99].kind = WEFT_KIND_U8;
    g_inner_fields[99].offset = 99;
    assert_int_equal(weft_component_describe(w, c, &g_inner), WEFT_OK);
    weft_world_destroy(w);
}

static void test_enum_of_65536_values(void **state)
{
    (void)state;
    static char names[ENUM_VALUES][8];
    static weft_enum_value vals[ENUM_VALUES];
    for (int i = 0; i < ENUM_VALUES; i++) {
        snprintf(names[i], sizeof names[i], "v%d", i);
        vals[i] = (weft_enum_value){names[i], i};
    }
    weft_world *w = weft_world_create(NULL);
    weft_component_desc cd = {0};
    cd.name = "Enums";
    cd.size = sizeof(int32_t) * ENUM_FIELDS;
    weft_component c = weft_component_register(w, &cd);
    static char fnames[ENUM_FIELDS][8];
    weft_field fields[ENUM_FIELDS];
    for (int i = 0; i < ENUM_FIELDS; i++) {
        snprintf(fnames[i], sizeof fnames[i], "e%d", i);
        fields[i] = (weft_field){.name = fnames[i], .kind = WEFT_KIND_ENUM,
                                 .offset = sizeof(int32_t) * (size_t)i, .enum_values = vals,
                                 .enum_count = ENUM_VALUES};
    }
    weft_type_desc d = {.name = "Enums", .fields = fields, .field_count = ENUM_FIELDS};
    /* a repeated name is still found */
    vals[60000].name = names[3];
    assert_int_equal(weft_component_describe(w, c, &d), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(weft_last_error(w), "'v3' is named twice"));
    vals[60000].name = names[60000];
    assert_int_equal(weft_component_describe(w, c, &d), WEFT_OK);
    weft_world_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nested_type_used_many_times),
        cmocka_unit_test(test_wide_struct_names_and_overlap),
        cmocka_unit_test(test_enum_of_65536_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

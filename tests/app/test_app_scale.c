// tests/app/test_app_scale.c - weft_app_setup on large plugin graphs: a
// dependency chain of 20,000 plugins registered against its order, the
// same chain closed into a cycle, and a wide fan-in. Each must finish well
// inside this test's ctest timeout (60 s; a 4,000-plugin chain took 36 s
// when every round rescanned every plugin's dependencies), in the
// documented order: among the plugins whose dependencies are built, the
// lowest registration index first.
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "weft.h"

enum { N = 20000 };

typedef struct build_log {
    int32_t order[N + 1];
    int32_t n;
} build_log;

static build_log g_log;

static weft_status build_record(weft_app *app, void *user)
{
    (void)app;
    g_log.order[g_log.n++] = (int32_t)(intptr_t)user;
    return WEFT_OK;
}

static char g_names[N + 1][16];

// Adds plugin i, depending on plugin `dep` (or none when dep < 0).
static void add(weft_app *app, int32_t i, int32_t dep)
{
    snprintf(g_names[i], sizeof g_names[i], "p%05d", (int)i);
    const char *deps[1];
    weft_plugin_desc d = {0};
    d.name = g_names[i];
    d.build = build_record;
    d.user = (void *)(intptr_t)i;
    if (dep >= 0) {
        snprintf(g_names[dep], sizeof g_names[dep], "p%05d", (int)dep);
        deps[0] = g_names[dep];
        d.dependencies = deps;
        d.dependency_count = 1;
    }
    assert_int_equal(weft_app_add_plugin(app, &d), WEFT_OK);
}

static weft_app *app_new(void)
{
    weft_app_desc ad = {0};
    weft_app *app = weft_app_create(&ad);
    assert_non_null(app);
    return app;
}

// Plugin i depends on plugin i + 1: the build order is the reverse of the
// registration order.
static void long_chain_against_registration(void **state)
{
    (void)state;
    weft_app *app = app_new();
    for (int32_t i = 0; i < N; i++) {
        add(app, i, i + 1 < N ? i + 1 : -1);
    }
    g_log.n = 0;
    assert_int_equal(weft_app_setup(app), WEFT_OK);
    assert_int_equal(g_log.n, N);
    for (int32_t k = 0; k < N; k++) {
        assert_int_equal(g_log.order[k], N - 1 - k);
    }
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// The same chain with the last plugin depending on the first: refused as a
// cycle whose message names plugins on it, nothing built.
static void long_cycle_reported(void **state)
{
    (void)state;
    weft_app *app = app_new();
    for (int32_t i = 0; i < N; i++) {
        add(app, i, i + 1 < N ? i + 1 : 0);
    }
    g_log.n = 0;
    assert_int_equal(weft_app_setup(app), WEFT_ERR_SCHEDULE_CYCLE);
    assert_int_equal(g_log.n, 0);
    const char *msg = weft_last_error(weft_app_world(app));
    assert_non_null(strstr(msg, "cycle"));
    assert_non_null(strstr(msg, "'p0"));
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// Every plugin but the last depends on the last one (registered last):
// the last is built first, then the rest in registration order.
static void wide_fan_in(void **state)
{
    (void)state;
    weft_app *app = app_new();
    for (int32_t i = 0; i < N; i++) {
        add(app, i, i + 1 < N ? N - 1 : -1);
    }
    g_log.n = 0;
    assert_int_equal(weft_app_setup(app), WEFT_OK);
    assert_int_equal(g_log.n, N);
    assert_int_equal(g_log.order[0], N - 1);
    for (int32_t k = 1; k < N; k++) {
        assert_int_equal(g_log.order[k], k - 1);
    }
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(long_chain_against_registration),
        cmocka_unit_test(long_cycle_reported),
        cmocka_unit_test(wide_fan_in),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

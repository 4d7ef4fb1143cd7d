// tests/app/test_app.c - the app (weft_app): the main schedule order as a
// vector, fixed-step catch-up over a sequence of deltas, schedules inserted
// before and after labels (and moved, and refused when they would form a
// cycle), plugins built in dependency order with finish and cleanup,
// duplicates, repeatable plugins, missing and cyclic dependencies, groups
// with disabled members, runners and exit requests, messages updated in
// First, and bad input: each refused call returns its status with a
// message and leaves the app (its label orders, its plugins) and the world
// unchanged.
// SPDX-License-Identifier: MIT
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "needs_threads.h"

#include "test_world.h"
#include "weft.h"

// ---- a log of schedule runs ----

#define LOG_CAP 4096

typedef struct runlog {
    char text[LOG_CAP]; // labels separated by ' '
    size_t len;
} runlog;

static void log_reset(runlog *l)
{
    l->text[0] = '\0';
    l->len = 0;
}

static void log_add(runlog *l, const char *label)
{
    int n = snprintf(l->text + l->len, LOG_CAP - l->len, "%s%s", l->len ? " " : "", label);
    assert_true(n > 0 && (size_t)n < LOG_CAP - l->len);
    l->len += (size_t)n;
}

// One system per label: logs the label and checks the dt it was given.
typedef struct probe {
    runlog *log;
    const char *label;
    double want_dt; // < 0: any
    int bad_dt;
    int runs;
} probe;

static void sys_probe(weft_system_ctx *ctx, void *user)
{
    probe *p = user;
    p->runs++;
    if (p->want_dt >= 0 && fabs(weft_system_delta(ctx) - p->want_dt) > 1e-12) {
        p->bad_dt++;
    }
    log_add(p->log, p->label);
}

static void add_probe(weft_app *app, const char *label, probe *p, runlog *log, double want_dt)
{
    p->log = log;
    p->label = label;
    p->want_dt = want_dt;
    p->bad_dt = 0;
    p->runs = 0;
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = label;
    d.fn = sys_probe;
    d.user = p;
    assert_int_not_equal(weft_app_add_system(app, label, &d), 0);
}

static weft_app *app_on(tw_fixture *f, double step, double max_delta)
{
    weft_app_desc d;
    memset(&d, 0, sizeof d);
    d.world = f->w;
    d.fixed_step = step;
    d.max_delta = max_delta;
    weft_app *app = weft_app_create(&d);
    assert_non_null(app);
    assert_ptr_equal(weft_app_world(app), f->w);
    return app;
}

// The labels of one order joined by ' '.
static void order_text(weft_app *app, weft_app_order o, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    int32_t n = weft_app_label_count(app, o);
    assert_true(n >= 0);
    for (int32_t i = 0; i < n; i++) {
        const char *l = weft_app_label(app, o, i);
        assert_non_null(l);
        int k = snprintf(buf + len, cap - len, "%s%s", i ? " " : "", l);
        assert_true(k > 0 && (size_t)k < cap - len);
        len += (size_t)k;
    }
}

static void expect_order(weft_app *app, weft_app_order o, const char *want)
{
    char buf[1024];
    order_text(app, o, buf, sizeof buf);
    assert_string_equal(buf, want);
}

// Everything observable of an app's labels and plugins, to assert
// "unchanged".
typedef struct app_snap {
    char orders[3][1024];
    char plugins[1024];
    tw_snap world;
} app_snap;

static void plugins_text(weft_app *app, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    int32_t n = weft_app_plugin_count(app);
    for (int32_t i = 0; i < n; i++) {
        int k = snprintf(buf + len, cap - len, "%s%s", i ? " " : "", weft_app_plugin_name(app, i));
        assert_true(k > 0 && (size_t)k < cap - len);
        len += (size_t)k;
    }
}

static app_snap app_snap_take(weft_app *app)
{
    app_snap s;
    order_text(app, WEFT_APP_ORDER_STARTUP, s.orders[0], sizeof s.orders[0]);
    order_text(app, WEFT_APP_ORDER_MAIN, s.orders[1], sizeof s.orders[1]);
    order_text(app, WEFT_APP_ORDER_FIXED, s.orders[2], sizeof s.orders[2]);
    plugins_text(app, s.plugins, sizeof s.plugins);
    s.world = tw_snap_take(weft_app_world(app));
    return s;
}

static void app_snap_expect_same(weft_app *app, const app_snap *s)
{
    app_snap now = app_snap_take(app);
    for (int o = 0; o < 3; o++) {
        assert_string_equal(now.orders[o], s->orders[o]);
    }
    assert_string_equal(now.plugins, s->plugins);
    tw_snap_expect_same_content(weft_app_world(app), &s->world);
}

static const char *const STARTUP = "PreStartup Startup PostStartup";
static const char *const MAIN =
    "First PreUpdate StateTransition RunFixedMainLoop Update PostUpdate Last";
static const char *const FIXED = "FixedFirst FixedPreUpdate FixedUpdate FixedPostUpdate FixedLast";

// ---- the order and fixed catch-up ----

static const char *const ALL_LABELS[] = {
    WEFT_APP_PRE_STARTUP, WEFT_APP_STARTUP, WEFT_APP_POST_STARTUP,
    WEFT_APP_FIRST, WEFT_APP_PRE_UPDATE, WEFT_APP_STATE_TRANSITION,
    WEFT_APP_RUN_FIXED_MAIN_LOOP, WEFT_APP_UPDATE, WEFT_APP_POST_UPDATE, WEFT_APP_LAST,
    WEFT_APP_FIXED_FIRST, WEFT_APP_FIXED_PRE_UPDATE, WEFT_APP_FIXED_UPDATE,
    WEFT_APP_FIXED_POST_UPDATE, WEFT_APP_FIXED_LAST,
};
#define NLABELS (sizeof ALL_LABELS / sizeof ALL_LABELS[0])

// The expected run log of one update with k fixed steps.
static void expect_update(runlog *want, bool startup, int k)
{
    if (startup) {
        log_add(want, STARTUP);
    }
    log_add(want, "First PreUpdate StateTransition RunFixedMainLoop");
    for (int i = 0; i < k; i++) {
        log_add(want, FIXED);
    }
    log_add(want, "Update PostUpdate Last");
}

static void app_main_order_and_fixed_catch_up(void **state)
{
    tw_fixture *f = *state;
    const double step = 1.0 / 64.0;
    weft_app *app = app_on(f, 0.0, 0.0); // defaults: 1/64 s step, 0.25 s clamp
    assert_true(weft_app_fixed_step(app) == step);
    expect_order(app, WEFT_APP_ORDER_STARTUP, STARTUP);
    expect_order(app, WEFT_APP_ORDER_MAIN, MAIN);
    expect_order(app, WEFT_APP_ORDER_DEFAULT, MAIN);
    expect_order(app, WEFT_APP_ORDER_FIXED, FIXED);

    runlog log;
    log_reset(&log);
    probe p[NLABELS];
    for (size_t i = 0; i < NLABELS; i++) {
        bool fixed = strncmp(ALL_LABELS[i], "Fixed", 5) == 0;
        add_probe(app, ALL_LABELS[i], &p[i], &log, fixed ? step : -1.0);
    }

    // deltas and the fixed steps each must run: the accumulator carries
    // remainders, a huge delta is clamped to 0.25 s (16 steps)
    const double dts[] = {0.0,         step,        3 * step,  step / 4, step / 4,
                          step / 4,    step / 4,    10.0,      2.5 * step, 0.5 * step};
    const int steps[] = {0, 1, 3, 0, 0, 0, 1, 16, 2, 1};
    const double acc[] = {0, 0, 0, step / 4, step / 2, 0.75 * step, 0, 0, step / 2, 0};
    for (size_t u = 0; u < sizeof dts / sizeof dts[0]; u++) {
        log_reset(&log);
        runlog want;
        log_reset(&want);
        expect_update(&want, u == 0, steps[u]);
        assert_int_equal(weft_app_update(app, dts[u]), WEFT_OK);
        assert_string_equal(log.text, want.text);
        assert_int_equal(weft_app_fixed_steps(app), steps[u]);
        assert_true(fabs(weft_app_fixed_accumulator(app) - acc[u]) < 1e-12);
        assert_int_equal(weft_app_update_count(app), (int64_t)u + 1);
    }
    int fixed_total = 0;
    for (size_t u = 0; u < sizeof steps / sizeof steps[0]; u++) {
        fixed_total += steps[u];
    }
    for (size_t i = 0; i < NLABELS; i++) {
        assert_int_equal(p[i].bad_dt, 0);
        if (i < 3) {
            assert_int_equal(p[i].runs, 1); // startup: once
        } else if (strncmp(ALL_LABELS[i], "Fixed", 5) == 0) {
            assert_int_equal(p[i].runs, fixed_total);
        } else {
            assert_int_equal(p[i].runs, 10);
        }
    }

    // a new step applies from the next update; the accumulator keeps its time
    assert_int_equal(weft_app_set_fixed_step(app, 0.125), WEFT_OK);
    for (size_t i = 10; i < NLABELS; i++) {
        p[i].want_dt = 0.125;
    }
    assert_int_equal(weft_app_update(app, 0.25), WEFT_OK);
    assert_int_equal(weft_app_fixed_steps(app), 2);
    for (size_t i = 0; i < NLABELS; i++) {
        assert_int_equal(p[i].bad_dt, 0);
    }
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// Custom step and clamp, and the dt main schedules see (clamped).
static void app_custom_step_and_clamp(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = app_on(f, 0.125, 1.0);
    runlog log;
    log_reset(&log);
    probe up, fx;
    add_probe(app, WEFT_APP_UPDATE, &up, &log, 1.0);
    add_probe(app, WEFT_APP_FIXED_UPDATE, &fx, &log, 0.125);
    assert_int_equal(weft_app_update(app, 5.0), WEFT_OK); // clamped to 1.0: 8 steps
    assert_int_equal(weft_app_fixed_steps(app), 8);
    up.want_dt = 0.4375;
    assert_int_equal(weft_app_update(app, 0.4375), WEFT_OK); // 3 steps, 0.0625 left
    assert_int_equal(weft_app_fixed_steps(app), 3);
    assert_true(fabs(weft_app_fixed_accumulator(app) - 0.0625) < 1e-12);
    assert_int_equal(up.bad_dt, 0);
    assert_int_equal(fx.bad_dt, 0);
    assert_int_equal(fx.runs, 11);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// ---- inserted schedules ----

static void app_insert_before_and_after(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = app_on(f, 0.0, 0.0);
    assert_int_equal(weft_app_insert_schedule(app, "A", WEFT_APP_UPDATE, WEFT_APP_AFTER), WEFT_OK);
    assert_int_equal(weft_app_insert_schedule(app, "B", WEFT_APP_UPDATE, WEFT_APP_BEFORE), WEFT_OK);
    assert_int_equal(weft_app_insert_schedule(app, "C", "A", WEFT_APP_AFTER), WEFT_OK);
    // siblings keep their order of placement on both sides
    assert_int_equal(weft_app_insert_schedule(app, "D", WEFT_APP_UPDATE, WEFT_APP_PLACE_DEFAULT),
                     WEFT_OK);
    assert_int_equal(weft_app_insert_schedule(app, "E", WEFT_APP_UPDATE, WEFT_APP_BEFORE), WEFT_OK);
    assert_int_equal(weft_app_insert_schedule(app, "F", "B", WEFT_APP_BEFORE), WEFT_OK);
    expect_order(app, WEFT_APP_ORDER_MAIN,
                 "First PreUpdate StateTransition RunFixedMainLoop F B E Update A C D "
                 "PostUpdate Last");
    // into the fixed and startup orders
    assert_int_equal(weft_app_insert_schedule(app, "Physics", WEFT_APP_FIXED_UPDATE,
                                              WEFT_APP_AFTER),
                     WEFT_OK);
    assert_int_equal(weft_app_insert_schedule(app, "Load", WEFT_APP_PRE_STARTUP, WEFT_APP_BEFORE),
                     WEFT_OK);
    expect_order(app, WEFT_APP_ORDER_FIXED,
                 "FixedFirst FixedPreUpdate FixedUpdate Physics FixedPostUpdate FixedLast");
    expect_order(app, WEFT_APP_ORDER_STARTUP, "Load PreStartup Startup PostStartup");
    // a move takes the labels placed on it along, across orders too
    assert_int_equal(weft_app_insert_schedule(app, "A", WEFT_APP_FIXED_LAST, WEFT_APP_AFTER),
                     WEFT_OK);
    expect_order(app, WEFT_APP_ORDER_MAIN,
                 "First PreUpdate StateTransition RunFixedMainLoop F B E Update D "
                 "PostUpdate Last");
    expect_order(app, WEFT_APP_ORDER_FIXED,
                 "FixedFirst FixedPreUpdate FixedUpdate Physics FixedPostUpdate FixedLast A C");
    // after RunFixedMainLoop: after the fixed steps
    assert_int_equal(weft_app_insert_schedule(app, "AfterFixed", WEFT_APP_RUN_FIXED_MAIN_LOOP,
                                              WEFT_APP_AFTER),
                     WEFT_OK);
    // the new labels are schedules of the world, run in that order
    assert_non_null(weft_schedule_lookup(f->w, "Physics"));
    assert_ptr_equal(weft_app_schedule(app, "Physics"), weft_schedule_lookup(f->w, "Physics"));
    runlog log;
    log_reset(&log);
    const char *labels[] = {"Load", WEFT_APP_STARTUP, WEFT_APP_FIRST, WEFT_APP_RUN_FIXED_MAIN_LOOP,
                            "AfterFixed", "F", "B", "E", WEFT_APP_UPDATE, "D", "Physics", "A",
                            "C", WEFT_APP_LAST};
    probe p[sizeof labels / sizeof labels[0]];
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++) {
        add_probe(app, labels[i], &p[i], &log, -1.0);
    }
    assert_int_equal(weft_app_update(app, 2.0 / 64.0), WEFT_OK); // two fixed steps
    assert_string_equal(log.text, "Load Startup First RunFixedMainLoop Physics A C Physics A C "
                                  "AfterFixed F B E Update D Last");
    // an app's schedule cannot be destroyed by hand
    weft_clear_error(f->w);
    assert_int_equal(weft_schedule_destroy(weft_app_schedule(app, "D")), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "app");
    assert_int_equal(weft_schedule_destroy(weft_app_schedule(app, WEFT_APP_UPDATE)),
                     WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    // a world given to the app keeps the schedules, now the caller's
    weft_schedule *d = weft_schedule_lookup(f->w, "D");
    assert_non_null(d);
    assert_int_equal(weft_schedule_destroy(d), WEFT_OK);
}

static void app_insert_bad_input(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = app_on(f, 0.0, 0.0);
    assert_int_equal(weft_app_insert_schedule(app, "A", WEFT_APP_UPDATE, WEFT_APP_AFTER), WEFT_OK);
    assert_int_equal(weft_app_insert_schedule(app, "B", "A", WEFT_APP_AFTER), WEFT_OK);
    assert_int_equal(weft_app_insert_schedule(app, "C", "B", WEFT_APP_BEFORE), WEFT_OK);
    assert_non_null(weft_schedule_create(f->w, "Mine")); // not the app's
    app_snap before = app_snap_take(app);

    struct {
        const char *label, *anchor;
        weft_app_place place;
        weft_status want;
        const char *needle;
    } cases[] = {
        {"X", "Nowhere", WEFT_APP_AFTER, WEFT_ERR_NOT_FOUND, "Nowhere"},
        {"A", "A", WEFT_APP_AFTER, WEFT_ERR_SCHEDULE_CYCLE, "itself"},
        {"A", "B", WEFT_APP_AFTER, WEFT_ERR_SCHEDULE_CYCLE, "cycle"},
        {"A", "C", WEFT_APP_BEFORE, WEFT_ERR_SCHEDULE_CYCLE, "cycle"},
        {"B", "C", WEFT_APP_AFTER, WEFT_ERR_SCHEDULE_CYCLE, "cycle"},
        {WEFT_APP_UPDATE, WEFT_APP_FIRST, WEFT_APP_AFTER, WEFT_ERR_INVALID_ARG, "built-in"},
        {"Mine", WEFT_APP_UPDATE, WEFT_APP_AFTER, WEFT_ERR_ALREADY_EXISTS, "Mine"},
        {"", WEFT_APP_UPDATE, WEFT_APP_AFTER, WEFT_ERR_INVALID_ARG, "empty"},
        {"X", "", WEFT_APP_AFTER, WEFT_ERR_INVALID_ARG, "empty"},
        {NULL, WEFT_APP_UPDATE, WEFT_APP_AFTER, WEFT_ERR_INVALID_ARG, "NULL"},
        {"X", NULL, WEFT_APP_AFTER, WEFT_ERR_INVALID_ARG, "NULL"},
        {"X", WEFT_APP_UPDATE, (weft_app_place)7, WEFT_ERR_INVALID_ARG, "place"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        weft_clear_error(f->w);
        assert_int_equal(weft_app_insert_schedule(app, cases[i].label, cases[i].anchor,
                                                  cases[i].place),
                         cases[i].want);
        tw_expect_error(f, cases[i].want, cases[i].needle);
        app_snap_expect_same(app, &before);
    }
    // lookups
    weft_clear_error(f->w);
    assert_null(weft_app_schedule(app, "Mine")); // the world's, not a label
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "Mine");
    assert_null(weft_app_schedule(app, NULL));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    assert_null(weft_app_label(app, WEFT_APP_ORDER_MAIN, 99));
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "99");
    assert_null(weft_app_label(app, (weft_app_order)9, 0));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    assert_int_equal(weft_app_label_count(app, (weft_app_order)9), -1);
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "nowhere";
    sd.fn = sys_probe;
    assert_int_equal(weft_app_add_system(app, "Nowhere", &sd), 0);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "Nowhere");
    app_snap_expect_same(app, &before);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// Placements run out of memory at every allocation in turn: each failure
// is OUT_OF_MEMORY with the app unchanged, and nothing leaks.
static void app_insert_out_of_memory(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = app_on(f, 0.0, 0.0);
    char name[32];
    int failures = 0;
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "S%d", i);
        app_snap before = app_snap_take(app);
        for (int64_t n = 1;; n++) {
            tw_alloc_fail_nth(&f->alloc, n, false);
            weft_status st = weft_app_insert_schedule(app, name, WEFT_APP_UPDATE, WEFT_APP_AFTER);
            bool injected = tw_alloc_injected(&f->alloc) > 0;
            tw_alloc_disarm(&f->alloc);
            if (st == WEFT_OK) {
                break;
            }
            assert_true(injected);
            assert_int_equal(st, WEFT_ERR_OUT_OF_MEMORY);
            app_snap_expect_same(app, &before);
            failures++;
        }
    }
    assert_true(failures >= 40); // at least the schedule and its name each time
    assert_int_equal(weft_app_label_count(app, WEFT_APP_ORDER_MAIN), 7 + 40);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// ---- creation, destruction, updates: bad input ----

static void app_create_bad_input(void **state)
{
    tw_fixture *f = *state;
    tw_snap before = tw_snap_take(f->w);
    weft_app_desc d;
    memset(&d, 0, sizeof d);
    d.world = f->w;
    d._start_canary = 1;
    weft_clear_error(f->w);
    assert_null(weft_app_create(&d));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "canary");
    memset(&d, 0, sizeof d);
    d.world = f->w;
    d.fixed_step = -1.0;
    assert_null(weft_app_create(&d));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "fixed_step");
    d.fixed_step = NAN;
    assert_null(weft_app_create(&d));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "fixed_step");
    d.fixed_step = 0.0;
    d.max_delta = INFINITY;
    assert_null(weft_app_create(&d));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "max_delta");
    d.max_delta = 0.0;
    d.max_fixed_steps = -1;
    assert_null(weft_app_create(&d));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "max_fixed_steps");
    tw_snap_expect_same(f->w, &before);
    // an own world with a bad world desc
    memset(&d, 0, sizeof d);
    d.world_desc._end_canary = 1;
    assert_null(weft_app_create(&d));
    // a schedule of the world named like a built-in label becomes that
    // label's schedule, systems included
    weft_schedule *mine = weft_schedule_create(f->w, WEFT_APP_LAST);
    assert_non_null(mine);
    memset(&d, 0, sizeof d);
    d.world = f->w;
    weft_app *adopt = weft_app_create(&d);
    assert_non_null(adopt);
    assert_ptr_equal(weft_app_schedule(adopt, WEFT_APP_LAST), mine);
    assert_int_equal(weft_app_destroy(adopt), WEFT_OK);
    // a new app on the same world takes the labels' schedules back
    adopt = weft_app_create(&d);
    assert_non_null(adopt);
    assert_ptr_equal(weft_app_schedule(adopt, WEFT_APP_LAST), mine);
    assert_int_equal(weft_app_destroy(adopt), WEFT_OK);
    // one app per world; the world cannot be destroyed under it
    weft_app *app = weft_app_create(&d);
    assert_non_null(app);
    assert_null(weft_app_create(&d));
    tw_expect_error(f, WEFT_ERR_ALREADY_EXISTS, "app");
    assert_int_equal(weft_world_destroy(f->w), WEFT_ERR_WRONG_PHASE);
    tw_expect_error(f, WEFT_ERR_WRONG_PHASE, "weft_app_destroy");
    // updates with a bad dt run nothing
    runlog log;
    log_reset(&log);
    probe p;
    add_probe(app, WEFT_APP_UPDATE, &p, &log, -1.0);
    const double bad_dt[] = {-0.001, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad_dt / sizeof bad_dt[0]; i++) {
        assert_int_equal(weft_app_update(app, bad_dt[i]), WEFT_ERR_INVALID_ARG);
        tw_expect_error(f, WEFT_ERR_INVALID_ARG, "dt");
    }
    assert_int_equal(p.runs, 0);
    assert_int_equal(weft_app_update_count(app), 0);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    assert_int_equal(weft_app_destroy(NULL), WEFT_OK);
    // invalid handles
    assert_int_equal(weft_app_update(NULL, 0.1), WEFT_ERR_INVALID_HANDLE);
    assert_null(weft_app_world(NULL));
    assert_int_equal(weft_app_plugin_count(NULL), -1);
    assert_int_equal(weft_app_fixed_steps(NULL), 0);
    // after the app, the world is destroyable again (by the fixture)
}

// An own world: created and destroyed with the app, through the hooks of
// world_desc (the fixture's counting allocator sees every byte back).
static void app_owns_its_world(void **state)
{
    tw_fixture *f = *state;
    weft_app_desc d;
    memset(&d, 0, sizeof d);
    d.world_desc = tw_fixture_desc(f);
    int64_t live = tw_alloc_live_bytes(&f->alloc);
    weft_app *app = weft_app_create(&d);
    assert_non_null(app);
    weft_world *w = weft_app_world(app);
    assert_true(w != f->w);
    runlog log;
    log_reset(&log);
    probe p;
    add_probe(app, WEFT_APP_UPDATE, &p, &log, -1.0);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(weft_world_destroy(w), WEFT_ERR_WRONG_PHASE);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    assert_int_equal(tw_alloc_live_bytes(&f->alloc), live);
    // out of memory at every allocation of the creation: NULL, nothing kept
    for (int64_t n = 1;; n++) {
        tw_alloc_fail_nth(&f->alloc, n, false);
        app = weft_app_create(&d);
        bool injected = tw_alloc_injected(&f->alloc) > 0;
        tw_alloc_disarm(&f->alloc);
        if (app) {
            break;
        }
        assert_true(injected);
        assert_int_equal(tw_alloc_live_bytes(&f->alloc), live);
    }
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    assert_int_equal(tw_alloc_live_bytes(&f->alloc), live);
}

// A given world: creation failing at every allocation leaves it unchanged.
static void app_create_out_of_memory_on_a_world(void **state)
{
    tw_fixture *f = *state;
    weft_app_desc d;
    memset(&d, 0, sizeof d);
    d.world = f->w;
    tw_snap before = tw_snap_take(f->w);
    weft_app *app = NULL;
    for (int64_t n = 1; !app; n++) {
        tw_alloc_fail_nth(&f->alloc, n, false);
        app = weft_app_create(&d);
        tw_alloc_disarm(&f->alloc);
        if (!app) {
            assert_int_equal(weft_last_status(f->w), WEFT_ERR_OUT_OF_MEMORY);
            tw_snap_expect_same_content(f->w, &before);
            assert_null(weft_schedule_lookup(f->w, WEFT_APP_PRE_STARTUP));
            assert_null(weft_schedule_lookup(f->w, WEFT_APP_FIXED_LAST));
        }
    }
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// Calls that drive the app are refused from inside an update.
typedef struct reentry {
    weft_app *app;
    weft_status update, insert, destroy, setup, run, plugin;
} reentry;

static weft_status runner_noop(weft_app *app, void *user)
{
    (void)app;
    (void)user;
    return WEFT_OK;
}

static weft_status build_noop(weft_app *app, void *user)
{
    (void)app;
    (void)user;
    return WEFT_OK;
}

static void sys_reenter(weft_system_ctx *ctx, void *user)
{
    reentry *r = user;
    (void)ctx;
    r->update = weft_app_update(r->app, 0.1);
    r->insert = weft_app_insert_schedule(r->app, "Late", WEFT_APP_LAST, WEFT_APP_AFTER);
    r->destroy = weft_app_destroy(r->app);
    r->setup = weft_app_setup(r->app);
    r->run = weft_app_run(r->app, runner_noop, NULL);
    weft_plugin_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.name = "late";
    pd.build = build_noop;
    r->plugin = weft_app_add_plugin(r->app, &pd);
}

static void app_refuses_reentry_from_systems(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = app_on(f, 0.0, 0.0);
    reentry r;
    memset(&r, 0, sizeof r);
    r.app = app;
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "reenter";
    sd.fn = sys_reenter;
    sd.user = &r;
    sd.flags = WEFT_SYSTEM_EXCLUSIVE;
    assert_int_not_equal(weft_app_add_system(app, WEFT_APP_UPDATE, &sd), 0);
    // the refused calls fail the system, so the update reports it
    assert_int_equal(weft_app_update(app, 0.1), WEFT_ERR_WRONG_PHASE);
    tw_expect_error(f, WEFT_ERR_WRONG_PHASE, "reenter");
    assert_int_equal(weft_app_update_count(app), 1);
    assert_int_equal(r.update, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(r.insert, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(r.destroy, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(r.setup, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(r.run, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(r.plugin, WEFT_ERR_WRONG_PHASE);
    expect_order(app, WEFT_APP_ORDER_MAIN, MAIN);
    assert_int_equal(weft_app_plugin_count(app), 0);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// ---- runners and exit ----

typedef struct loop_state {
    int updates;
    int max;
    weft_status nested;
} loop_state;

static weft_status runner_loop(weft_app *app, void *user)
{
    loop_state *s = user;
    s->nested = weft_app_run(app, runner_noop, NULL);
    while (!weft_app_exit_requested(app, NULL) && s->updates < s->max) {
        weft_status st = weft_app_update(app, 1.0 / 60.0);
        if (st != WEFT_OK) {
            return st;
        }
        s->updates++;
    }
    return WEFT_OK;
}

typedef struct quitter {
    weft_app *app;
    int runs;
} quitter;

static void sys_quit_on_third(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    quitter *q = user;
    if (++q->runs == 3) {
        weft_app_exit(q->app, 42);
        weft_app_exit(q->app, 7); // the first request wins
    }
}

static void app_runner_and_exit(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = app_on(f, 0.0, 0.0);
    quitter q = {app, 0};
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "quit";
    sd.fn = sys_quit_on_third;
    sd.user = &q;
    assert_int_not_equal(weft_app_add_system(app, WEFT_APP_UPDATE, &sd), 0);
    loop_state ls = {0, 100, WEFT_OK};
    int32_t code = -1;
    assert_false(weft_app_exit_requested(app, &code));
    assert_int_equal(weft_app_run(app, runner_loop, &ls), WEFT_OK);
    assert_int_equal(ls.nested, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(ls.updates, 3);
    assert_true(weft_app_exit_requested(app, &code));
    assert_int_equal(code, 42);
    assert_int_equal(weft_app_run(app, NULL, NULL), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "runner");
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// Exit requests from systems running in parallel on pool workers: the
// first wins, every later one is ignored, the code read is a whole one.
typedef struct exiter {
    weft_app *app;
    int32_t code;
} exiter;

static void sys_exit_code(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    exiter *e = user;
    weft_app_exit(e->app, e->code);
}

static void app_exit_from_worker_threads(void **state)
{
    NEEDS_THREADS("app exit requested from pool workers");
    tw_fixture *f = *state;
    weft_app *app = app_on(f, 0.0, 0.0);
    assert_int_equal(weft_world_set_threads(f->w, 4), WEFT_OK);
    exiter e[8];
    for (int i = 0; i < 8; i++) {
        e[i].app = app;
        e[i].code = 100 + i;
        weft_system_desc sd;
        memset(&sd, 0, sizeof sd);
        char name[16];
        snprintf(name, sizeof name, "exit%d", i);
        sd.name = name;
        sd.fn = sys_exit_code;
        sd.user = &e[i];
        assert_int_not_equal(weft_app_add_system(app, WEFT_APP_UPDATE, &sd), 0);
    }
    assert_int_equal(weft_app_update(app, 0.01), WEFT_OK);
    int32_t code = -1;
    assert_true(weft_app_exit_requested(app, &code));
    assert_true(code >= 100 && code < 108);
    assert_int_equal(weft_app_update(app, 0.01), WEFT_OK);
    int32_t again = -1;
    assert_true(weft_app_exit_requested(app, &again));
    assert_int_equal(again, code);
    assert_int_equal(weft_world_set_threads(f->w, 1), WEFT_OK);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// ---- messages ----

static void app_messages_updated_in_first(void **state)
{
    tw_fixture *f = *state;
    weft_message_desc md;
    memset(&md, 0, sizeof md);
    md.name = "Note";
    md.size = sizeof(int32_t);
    weft_message_type mt = weft_message_register(f->w, &md);
    assert_true(mt != 0);
    int32_t one = 1;
    weft_message_cursor fresh;

    weft_app *app = app_on(f, 0.0, 0.0);
    assert_int_equal(weft_message_write(f->w, mt, &one, sizeof one), WEFT_OK);
    assert_int_equal(weft_app_update(app, 0.01), WEFT_OK);
    memset(&fresh, 0, sizeof fresh);
    assert_int_equal(weft_message_unread(f->w, mt, &fresh), 1); // one swap: still there
    assert_int_equal(weft_app_update(app, 0.01), WEFT_OK);
    memset(&fresh, 0, sizeof fresh);
    assert_int_equal(weft_message_unread(f->w, mt, &fresh), 0); // two swaps: gone
    assert_int_equal(weft_app_destroy(app), WEFT_OK);

    weft_app_desc d;
    memset(&d, 0, sizeof d);
    d.world = f->w;
    d.no_message_update = true;
    app = weft_app_create(&d);
    assert_non_null(app);
    assert_int_equal(weft_message_write(f->w, mt, &one, sizeof one), WEFT_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(weft_app_update(app, 0.01), WEFT_OK);
    }
    memset(&fresh, 0, sizeof fresh);
    assert_int_equal(weft_message_unread(f->w, mt, &fresh), 1);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// ---- plugins ----

typedef struct plog {
    runlog log;
    weft_app *app;
    int freed;
    const char *fail_in; // "build:<name>" etc.
} plog;

typedef struct pctx {
    plog *pl;
    const char *name;
    weft_plugin_desc child; // added by build when child.name is set
} pctx;

static weft_status plugin_cb(pctx *c, const char *what)
{
    char entry[64];
    snprintf(entry, sizeof entry, "%s:%s", what, c->name);
    log_add(&c->pl->log, entry);
    if (c->pl->fail_in && strcmp(c->pl->fail_in, entry) == 0) {
        return WEFT_ERR_NOT_FOUND;
    }
    return WEFT_OK;
}

static weft_status p_build(weft_app *app, void *user)
{
    pctx *c = user;
    weft_status st = plugin_cb(c, "build");
    if (st == WEFT_OK && c->child.name) {
        st = weft_app_add_plugin(app, &c->child);
    }
    // plugins configure the app: a schedule of their own
    char label[64];
    snprintf(label, sizeof label, "plugin.%s", c->name);
    if (st == WEFT_OK && !weft_app_schedule(app, label)) {
        weft_clear_error(weft_app_world(app));
        st = weft_app_insert_schedule(app, label, WEFT_APP_UPDATE, WEFT_APP_AFTER);
    }
    return st;
}

static weft_status p_finish(weft_app *app, void *user)
{
    (void)app;
    return plugin_cb(user, "finish");
}

static weft_status p_cleanup(weft_app *app, void *user)
{
    pctx *c = user;
    weft_plugin_desc late;
    memset(&late, 0, sizeof late);
    late.name = "too-late";
    late.build = p_build;
    if (weft_app_add_plugin(app, &late) != WEFT_ERR_WRONG_PHASE) {
        return WEFT_ERR_INTERNAL;
    }
    return plugin_cb(c, "cleanup");
}

static void p_free(void *user)
{
    pctx *c = user;
    c->pl->freed++;
}

static weft_plugin_desc pdesc(pctx *c, plog *pl, const char *name, const char *const *deps,
                              int32_t ndeps)
{
    memset(c, 0, sizeof *c);
    c->pl = pl;
    c->name = name;
    weft_plugin_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.build = p_build;
    d.finish = p_finish;
    d.cleanup = p_cleanup;
    d.dependencies = deps;
    d.dependency_count = ndeps;
    d.user = c;
    d.free_user = p_free;
    return d;
}

static void app_plugins_in_dependency_order(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = app_on(f, 0.0, 0.0);
    plog pl;
    memset(&pl, 0, sizeof pl);
    log_reset(&pl.log);
    pctx ca, cb, cc, cd, ce;
    const char *dep_b[] = {"B"};
    const char *dep_a[] = {"A"};
    const char *dep_ab[] = {"A", "B"};
    const char *dep_c[] = {"C"};
    weft_plugin_desc c = pdesc(&cc, &pl, "C", dep_ab, 2);
    weft_plugin_desc b = pdesc(&cb, &pl, "B", dep_a, 1);
    weft_plugin_desc a = pdesc(&ca, &pl, "A", NULL, 0);
    weft_plugin_desc d = pdesc(&cd, &pl, "D", NULL, 0);
    // B's build adds E, which depends on C: built in a second round
    cb.child = pdesc(&ce, &pl, "E", dep_c, 1);
    assert_int_equal(weft_app_add_plugin(app, &c), WEFT_OK);
    assert_int_equal(weft_app_add_plugin(app, &b), WEFT_OK);
    assert_int_equal(weft_app_add_plugin(app, &a), WEFT_OK);
    assert_int_equal(weft_app_add_plugin(app, &d), WEFT_OK);
    (void)dep_b;
    assert_true(weft_app_has_plugin(app, "A"));
    assert_false(weft_app_has_plugin(app, "E"));
    assert_int_equal(weft_app_plugin_count(app), 4);
    assert_string_equal(weft_app_plugin_name(app, 0), "C"); // order of addition
    assert_int_equal(weft_app_setup(app), WEFT_OK);
    assert_string_equal(pl.log.text,
                        "build:A build:B build:C build:D build:E "
                        "finish:A finish:B finish:C finish:D finish:E "
                        "cleanup:A cleanup:B cleanup:C cleanup:D cleanup:E");
    char names[256];
    plugins_text(app, names, sizeof names);
    assert_string_equal(names, "A B C D E"); // build order after the setup
    assert_int_equal(weft_app_setup(app), WEFT_OK); // once only
    assert_int_equal(weft_app_add_plugin(app, &a), WEFT_ERR_WRONG_PHASE);
    tw_expect_error(f, WEFT_ERR_WRONG_PHASE, "set up");
    // the plugins' schedules follow Update in build order
    expect_order(app, WEFT_APP_ORDER_MAIN,
                 "First PreUpdate StateTransition RunFixedMainLoop Update plugin.A plugin.B "
                 "plugin.C plugin.D plugin.E PostUpdate Last");
    assert_int_equal(weft_app_update(app, 0.01), WEFT_OK);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    assert_int_equal(pl.freed, 5);
}

static void app_plugin_duplicates_and_repeatable(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = app_on(f, 0.0, 0.0);
    plog pl;
    memset(&pl, 0, sizeof pl);
    log_reset(&pl.log);
    pctx c1, c2, c3;
    weft_plugin_desc a = pdesc(&c1, &pl, "A", NULL, 0);
    assert_int_equal(weft_app_add_plugin(app, &a), WEFT_OK);
    app_snap before = app_snap_take(app);
    weft_clear_error(f->w);
    assert_int_equal(weft_app_add_plugin(app, &a), WEFT_ERR_ALREADY_EXISTS);
    tw_expect_error(f, WEFT_ERR_ALREADY_EXISTS, "'A'");
    a.repeatable = true; // the first one is not
    assert_int_equal(weft_app_add_plugin(app, &a), WEFT_ERR_ALREADY_EXISTS);
    app_snap_expect_same(app, &before);
    // repeatable ones: as often as wanted; a dependent waits for every one
    weft_plugin_desc r1 = pdesc(&c2, &pl, "R", NULL, 0);
    r1.repeatable = true;
    weft_plugin_desc r2 = pdesc(&c3, &pl, "R", NULL, 0);
    r2.repeatable = true;
    c3.name = "R2";
    const char *dep_r[] = {"R"};
    pctx cd;
    weft_plugin_desc d = pdesc(&cd, &pl, "D", dep_r, 1);
    assert_int_equal(weft_app_add_plugin(app, &d), WEFT_OK);
    assert_int_equal(weft_app_add_plugin(app, &r1), WEFT_OK);
    assert_int_equal(weft_app_add_plugin(app, &r2), WEFT_OK);
    assert_int_equal(weft_app_plugin_count(app), 4);
    assert_int_equal(weft_app_update(app, 0.01), WEFT_OK); // sets up first
    assert_true(strncmp(pl.log.text, "build:A build:R build:R2 build:D", 32) == 0);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    assert_int_equal(pl.freed, 4);
}

static void app_plugin_missing_and_cyclic_dependencies(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = app_on(f, 0.0, 0.0);
    plog pl;
    memset(&pl, 0, sizeof pl);
    log_reset(&pl.log);
    pctx ca, cb, cx;
    const char *dep_missing[] = {"Physics"};
    weft_plugin_desc a = pdesc(&ca, &pl, "A", dep_missing, 1);
    assert_int_equal(weft_app_add_plugin(app, &a), WEFT_OK);
    app_snap before = app_snap_take(app);
    weft_clear_error(f->w);
    assert_int_equal(weft_app_setup(app), WEFT_ERR_NOT_FOUND);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "'A' depends on 'Physics'");
    assert_string_equal(pl.log.text, ""); // nothing built
    app_snap_expect_same(app, &before);
    // the update reports the same and runs nothing
    assert_int_equal(weft_app_update(app, 0.01), WEFT_ERR_NOT_FOUND);
    assert_int_equal(weft_app_update_count(app), 0);
    // adding the missing one repairs it
    weft_plugin_desc phys = pdesc(&cx, &pl, "Physics", NULL, 0);
    assert_int_equal(weft_app_add_plugin(app, &phys), WEFT_OK);
    assert_int_equal(weft_app_setup(app), WEFT_OK);
    assert_true(strncmp(pl.log.text, "build:Physics build:A", 21) == 0);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);

    // a cycle X -> Y -> Z -> X behind W: refused, nothing built
    app = app_on(f, 0.0, 0.0);
    log_reset(&pl.log);
    pctx cw, cy, cz;
    const char *dep_y[] = {"Y"};
    const char *dep_z[] = {"Z"};
    const char *dep_x[] = {"X"};
    weft_plugin_desc w = pdesc(&cw, &pl, "W", dep_x, 1);
    weft_plugin_desc x = pdesc(&ca, &pl, "X", dep_y, 1);
    weft_plugin_desc y = pdesc(&cy, &pl, "Y", dep_z, 1);
    weft_plugin_desc z = pdesc(&cz, &pl, "Z", dep_x, 1);
    weft_plugin_desc free_one = pdesc(&cb, &pl, "Free", NULL, 0);
    assert_int_equal(weft_app_add_plugin(app, &free_one), WEFT_OK);
    assert_int_equal(weft_app_add_plugin(app, &w), WEFT_OK);
    assert_int_equal(weft_app_add_plugin(app, &x), WEFT_OK);
    assert_int_equal(weft_app_add_plugin(app, &y), WEFT_OK);
    assert_int_equal(weft_app_add_plugin(app, &z), WEFT_OK);
    before = app_snap_take(app);
    weft_clear_error(f->w);
    assert_int_equal(weft_app_setup(app), WEFT_ERR_SCHEDULE_CYCLE);
    tw_expect_error(f, WEFT_ERR_SCHEDULE_CYCLE, "'X' -> 'Y' -> 'Z' -> 'X'");
    assert_string_equal(pl.log.text, "");
    app_snap_expect_same(app, &before);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);

    // bad descriptors
    app = app_on(f, 0.0, 0.0);
    before = app_snap_take(app);
    const char *self[] = {"S"};
    const char *null_dep[] = {NULL};
    weft_plugin_desc bad = pdesc(&ca, &pl, "S", self, 1);
    assert_int_equal(weft_app_add_plugin(app, &bad), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "itself");
    bad = pdesc(&ca, &pl, "S", null_dep, 1);
    assert_int_equal(weft_app_add_plugin(app, &bad), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "dependency 0");
    bad = pdesc(&ca, &pl, "S", NULL, 2);
    assert_int_equal(weft_app_add_plugin(app, &bad), WEFT_ERR_INVALID_ARG);
    bad = pdesc(&ca, &pl, "S", NULL, -1);
    assert_int_equal(weft_app_add_plugin(app, &bad), WEFT_ERR_INVALID_ARG);
    bad = pdesc(&ca, &pl, "", NULL, 0);
    assert_int_equal(weft_app_add_plugin(app, &bad), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "no name");
    bad = pdesc(&ca, &pl, "S", NULL, 0);
    bad.build = NULL;
    assert_int_equal(weft_app_add_plugin(app, &bad), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "build");
    bad = pdesc(&ca, &pl, "S", NULL, 0);
    bad._end_canary = 1;
    assert_int_equal(weft_app_add_plugin(app, &bad), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "canary");
    app_snap_expect_same(app, &before);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    assert_int_equal(pl.freed, 2 + 5); // only the plugins that were added
}

static void app_plugin_callback_failure(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = app_on(f, 0.0, 0.0);
    plog pl;
    memset(&pl, 0, sizeof pl);
    log_reset(&pl.log);
    pl.fail_in = "finish:B";
    pctx ca, cb;
    weft_plugin_desc a = pdesc(&ca, &pl, "A", NULL, 0);
    weft_plugin_desc b = pdesc(&cb, &pl, "B", NULL, 0);
    assert_int_equal(weft_app_add_plugin(app, &a), WEFT_OK);
    assert_int_equal(weft_app_add_plugin(app, &b), WEFT_OK);
    weft_clear_error(f->w);
    assert_int_equal(weft_app_update(app, 0.01), WEFT_ERR_CALLBACK);
    tw_expect_error(f, WEFT_ERR_CALLBACK, "finish of plugin 'B'");
    assert_string_equal(pl.log.text, "build:A build:B finish:A finish:B");
    assert_int_equal(weft_app_update(app, 0.01), WEFT_ERR_CALLBACK);
    assert_int_equal(weft_app_setup(app), WEFT_ERR_CALLBACK);
    assert_int_equal(weft_app_update_count(app), 0);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    assert_int_equal(pl.freed, 2);
}

static void app_plugin_groups(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = app_on(f, 0.0, 0.0);
    plog pl;
    memset(&pl, 0, sizeof pl);
    log_reset(&pl.log);
    pctx cx[4];
    weft_plugin_desc members[4];
    members[0] = pdesc(&cx[0], &pl, "Time", NULL, 0);
    members[1] = pdesc(&cx[1], &pl, "Audio", NULL, 0);
    members[2] = pdesc(&cx[2], &pl, "Input", NULL, 0);
    members[3] = pdesc(&cx[3], &pl, "Diag", NULL, 0);
    const char *off[] = {"Audio", "Diag"};
    weft_plugin_group_desc g;
    memset(&g, 0, sizeof g);
    g.name = "Defaults";
    g.plugins = members;
    g.plugin_count = 4;
    g.disabled = off;
    g.disabled_count = 2;
    app_snap before = app_snap_take(app);
    // a disabled name that is no member: nothing added
    const char *off_bad[] = {"Audio", "Render"};
    g.disabled = off_bad;
    weft_clear_error(f->w);
    assert_int_equal(weft_app_add_plugin_group(app, &g), WEFT_ERR_NOT_FOUND);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "'Render' is no member of group 'Defaults'");
    app_snap_expect_same(app, &before);
    // a member twice: nothing added
    g.disabled = off;
    g.disabled_count = 1; // Audio only
    members[3].name = "Time";
    assert_int_equal(weft_app_add_plugin_group(app, &g), WEFT_ERR_ALREADY_EXISTS);
    tw_expect_error(f, WEFT_ERR_ALREADY_EXISTS, "'Time' twice");
    app_snap_expect_same(app, &before);
    members[3].name = "Diag";
    g.disabled_count = 2;
    // a member clashing with an added plugin: nothing added
    pctx cy;
    weft_plugin_desc input = pdesc(&cy, &pl, "Input", NULL, 0);
    assert_int_equal(weft_app_add_plugin(app, &input), WEFT_OK);
    before = app_snap_take(app);
    assert_int_equal(weft_app_add_plugin_group(app, &g), WEFT_ERR_ALREADY_EXISTS);
    app_snap_expect_same(app, &before);
    // disabling the clashing member makes it fit
    const char *off2[] = {"Audio", "Diag", "Input"};
    g.disabled = off2;
    g.disabled_count = 3;
    assert_int_equal(weft_app_add_plugin_group(app, &g), WEFT_OK);
    char names[256];
    plugins_text(app, names, sizeof names);
    assert_string_equal(names, "Input Time");
    // bad group descriptors
    g.plugin_count = -1;
    assert_int_equal(weft_app_add_plugin_group(app, &g), WEFT_ERR_INVALID_ARG);
    g.plugin_count = 1;
    g.plugins = NULL;
    assert_int_equal(weft_app_add_plugin_group(app, &g), WEFT_ERR_INVALID_ARG);
    g.plugins = members;
    g.name = NULL;
    assert_int_equal(weft_app_add_plugin_group(app, &g), WEFT_ERR_INVALID_ARG);
    plugins_text(app, names, sizeof names);
    assert_string_equal(names, "Input Time");
    assert_int_equal(weft_app_setup(app), WEFT_OK);
    assert_true(strncmp(pl.log.text, "build:Input build:Time", 22) == 0);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    assert_int_equal(pl.freed, 2);
}

// A snapshot of an app's world carries the fixed-time accumulator: a second
// app restoring it runs the fixed step the first one had half-accumulated.
static void count_runs(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    ++*(int *)user;
}

static weft_app *snapshot_app(tw_fixture *f, int *runs)
{
    weft_app_desc d;
    memset(&d, 0, sizeof d);
    d.world_desc = tw_fixture_desc(f);
    d.fixed_step = 0.125;
    weft_app *app = weft_app_create(&d);
    assert_non_null(app);
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "count";
    sd.fn = count_runs;
    sd.user = runs;
    assert_int_not_equal(weft_app_add_system(app, WEFT_APP_FIXED_UPDATE, &sd), 0);
    return app;
}

static void app_snapshot_carries_the_accumulator(void **state)
{
    tw_fixture *f = *state;
    int runs_a = 0, runs_b = 0;
    weft_app *a = snapshot_app(f, &runs_a);
    assert_int_equal(weft_app_update(a, 0.1875), WEFT_OK); // 1.5 steps
    assert_int_equal(runs_a, 1);
    assert_true(fabs(weft_app_fixed_accumulator(a) - 0.0625) < 1e-12);
    size_t len = 0;
    assert_int_equal(weft_snapshot_write(weft_app_world(a), NULL, 0, &len),
                     WEFT_ERR_CAPACITY);
    unsigned char *buf = test_malloc(len);
    assert_int_equal(weft_snapshot_write(weft_app_world(a), buf, len, &len), WEFT_OK);
    weft_app *b = snapshot_app(f, &runs_b);
    assert_true(weft_app_fixed_accumulator(b) == 0.0);
    assert_int_equal(weft_snapshot_restore(weft_app_world(b), buf, len), WEFT_OK);
    assert_true(fabs(weft_app_fixed_accumulator(b) - 0.0625) < 1e-12);
    // half a step more completes the step both apps had begun
    assert_int_equal(weft_app_update(a, 0.0625), WEFT_OK);
    assert_int_equal(weft_app_update(b, 0.0625), WEFT_OK);
    assert_int_equal(weft_app_fixed_steps(a), 1);
    assert_int_equal(weft_app_fixed_steps(b), 1);
    assert_int_equal(runs_b, 1);
    assert_int_equal(weft_world_hash(weft_app_world(a)), weft_world_hash(weft_app_world(b)));
    test_free(buf);
    assert_int_equal(weft_app_destroy(a), WEFT_OK);
    assert_int_equal(weft_app_destroy(b), WEFT_OK);
}

// Plugins, groups, the setup's ordering and diagnostics run out of memory
// at every allocation in turn: each failure is OUT_OF_MEMORY, leaves the
// app's plugins as they were (no build ran), and leaks nothing.
static void app_plugins_out_of_memory(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = app_on(f, 0.0, 0.0);
    plog pl;
    memset(&pl, 0, sizeof pl);
    log_reset(&pl.log);
    pctx ca, cb, cc;
    const char *dep_a[] = {"A"};
    weft_plugin_desc a = pdesc(&ca, &pl, "A", NULL, 0);
    weft_plugin_desc members[2];
    members[0] = pdesc(&cb, &pl, "B", dep_a, 1);
    members[1] = pdesc(&cc, &pl, "C", dep_a, 1);
    weft_plugin_group_desc g;
    memset(&g, 0, sizeof g);
    g.name = "G";
    g.plugins = members;
    g.plugin_count = 2;
    int failures = 0;
    for (int step = 0; step < 3; step++) {
        app_snap before = app_snap_take(app);
        for (int64_t n = 1;; n++) {
            tw_alloc_fail_nth(&f->alloc, n, false);
            weft_status st = step == 0   ? weft_app_add_plugin(app, &a)
                             : step == 1 ? weft_app_add_plugin_group(app, &g)
                                         : weft_app_setup(app);
            bool injected = tw_alloc_injected(&f->alloc) > 0;
            tw_alloc_disarm(&f->alloc);
            if (st == WEFT_OK) {
                break;
            }
            assert_true(injected);
            if (st == WEFT_ERR_CALLBACK) {
                // the setup got past its own allocations: the first build's
                // schedule could not be made, and the plugin's failure
                // stops the setup (a callback's failure is not undone)
                assert_int_equal(step, 2);
                tw_expect_error(f, WEFT_ERR_CALLBACK,
                                "build of plugin 'A' failed: WEFT_ERR_OUT_OF_MEMORY");
                assert_string_equal(pl.log.text, "build:A");
                break;
            }
            assert_int_equal(st, WEFT_ERR_OUT_OF_MEMORY);
            assert_string_equal(pl.log.text, ""); // no build ran
            app_snap_expect_same(app, &before);
            failures++;
        }
    }
    assert_true(failures >= 3);
    assert_int_equal(weft_app_update(app, 0.01), WEFT_ERR_CALLBACK);
    // a diagnostic, the same way
    weft_diag_desc dd;
    memset(&dd, 0, sizeof dd);
    dd.name = "oom";
    for (int64_t n = 1;; n++) {
        tw_alloc_fail_nth(&f->alloc, n, false);
        weft_status st = weft_diag_add(f->w, &dd);
        tw_alloc_disarm(&f->alloc);
        if (st == WEFT_OK) {
            break;
        }
        assert_int_equal(st, WEFT_ERR_OUT_OF_MEMORY);
        weft_diag_value v;
        assert_int_equal(weft_diag_get(f->w, "oom", &v), WEFT_ERR_NOT_FOUND);
    }
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    assert_int_equal(pl.freed, 3);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tw_setup, tw_teardown)
    const struct CMUnitTest tests[] = {
        T(app_main_order_and_fixed_catch_up),
        T(app_custom_step_and_clamp),
        T(app_insert_before_and_after),
        T(app_insert_bad_input),
        T(app_insert_out_of_memory),
        T(app_create_bad_input),
        T(app_owns_its_world),
        T(app_create_out_of_memory_on_a_world),
        T(app_refuses_reentry_from_systems),
        T(app_runner_and_exit),
        T(app_exit_from_worker_threads),
        T(app_messages_updated_in_first),
        T(app_plugins_in_dependency_order),
        T(app_plugin_duplicates_and_repeatable),
        T(app_plugin_missing_and_cyclic_dependencies),
        T(app_plugin_callback_failure),
        T(app_plugin_groups),
        T(app_plugins_out_of_memory),
        T(app_snapshot_carries_the_accumulator),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

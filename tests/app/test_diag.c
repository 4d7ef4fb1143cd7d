// tests/app/test_diag.c - diagnostics: a series' latest value, history
// mean, min, max and moving average against values computed by hand;
// the history bound; disabled diagnostics; bad input refused with the
// store unchanged; and the diagnostics plugin on an app: frame time, FPS,
// frame count, entity and archetype counts and per-system times each
// update, log reports every interval through the logger hook, and its
// system running while the app's Last schedule is being stepped.
// SPDX-License-Identifier: MIT
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_world.h"
#include "weft.h"

static bool near(double a, double b)
{
    return fabs(a - b) < 1e-9;
}

static void diag_smoothing_against_a_hand_computed_series(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_diag_desc d;
    memset(&d, 0, sizeof d);
    d.name = "x";
    d.suffix = "ms";
    d.history_len = 4;
    d.smoothing = 0.5;
    assert_int_equal(weft_diag_add(w, &d), WEFT_OK);
    weft_diag_value v;
    assert_int_equal(weft_diag_get(w, "x", &v), WEFT_OK);
    assert_int_equal(v.count, 0);
    assert_true(v.value == 0.0 && v.smoothed == 0.0 && v.average == 0.0);
    assert_int_equal(v.history_len, 4);
    assert_string_equal(v.suffix, "ms");

    // time, value; then by hand: alpha = clamp(dt / 0.5, 0, 1),
    // ema += alpha * (value - ema), the first value setting it
    const double t[] = {0.0, 0.25, 0.5, 1.5, 1.75, 1.75};
    const double x[] = {10, 20, 14, 30, 6, 2};
    const double ema[] = {10, 15, 14.5, 30, 18, 18};          // alpha 0 when dt = 0
    const double mean[] = {10, 15, 44.0 / 3, 18.5, 17.5, 13}; // last 4 values
    const double lo[] = {10, 10, 10, 10, 6, 2};
    const double hi[] = {10, 20, 20, 30, 30, 30};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(weft_diag_record(w, "x", t[i], x[i]), WEFT_OK);
        assert_int_equal(weft_diag_get(w, "x", &v), WEFT_OK);
        assert_true(near(v.value, x[i]));
        assert_true(near(v.smoothed, ema[i]));
        assert_true(near(v.average, mean[i]));
        assert_true(near(v.min, lo[i]));
        assert_true(near(v.max, hi[i]));
        assert_true(near(v.time, t[i]));
        assert_int_equal(v.count, i < 4 ? i + 1 : 4);
    }
    double hist[8];
    assert_int_equal(weft_diag_history(w, "x", hist, 8), 4);
    assert_true(near(hist[0], 14) && near(hist[1], 30) && near(hist[2], 6) && near(hist[3], 2));
    assert_int_equal(weft_diag_history(w, "x", NULL, 0), 4);
    assert_int_equal(weft_diag_history(w, "x", hist, 2), 4); // the count, two copied

    // disabled: measurements are ignored
    assert_int_equal(weft_diag_set_enabled(w, "x", false), WEFT_OK);
    assert_int_equal(weft_diag_record(w, "x", 3.0, 1000), WEFT_OK);
    assert_int_equal(weft_diag_get(w, "x", &v), WEFT_OK);
    assert_false(v.enabled);
    assert_true(near(v.value, 2) && near(v.smoothed, 18));
    assert_int_equal(weft_diag_set_enabled(w, "x", true), WEFT_OK);

    // defaults
    memset(&d, 0, sizeof d);
    d.name = "y";
    assert_int_equal(weft_diag_add(w, &d), WEFT_OK);
    assert_int_equal(weft_diag_get(w, "y", &v), WEFT_OK);
    assert_int_equal(v.history_len, WEFT_DIAG_HISTORY);
    assert_string_equal(v.suffix, "");
    assert_int_equal(weft_diag_record(w, "y", 0.0, 1.0), WEFT_OK);
    // dt = WEFT_DIAG_SMOOTHING / 2: half way
    assert_int_equal(weft_diag_record(w, "y", WEFT_DIAG_SMOOTHING / 2, 3.0), WEFT_OK);
    assert_int_equal(weft_diag_get(w, "y", &v), WEFT_OK);
    assert_true(near(v.smoothed, 2.0));
    assert_int_equal(weft_diag_count(w), 2);
    assert_string_equal(weft_diag_name(w, 0), "x");
    assert_string_equal(weft_diag_name(w, 1), "y");
}

static void diag_bad_input(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_diag_desc d;
    memset(&d, 0, sizeof d);
    d.name = "x";
    d.history_len = 3;
    assert_int_equal(weft_diag_add(w, &d), WEFT_OK);
    assert_int_equal(weft_diag_record(w, "x", 1.0, 5.0), WEFT_OK);

    weft_clear_error(w);
    assert_int_equal(weft_diag_add(w, &d), WEFT_ERR_ALREADY_EXISTS);
    tw_expect_error(f, WEFT_ERR_ALREADY_EXISTS, "'x'");
    weft_diag_desc bad = d;
    bad.name = "z";
    bad.history_len = -1;
    assert_int_equal(weft_diag_add(w, &bad), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "history_len");
    bad.history_len = 70000;
    assert_int_equal(weft_diag_add(w, &bad), WEFT_ERR_INVALID_ARG);
    bad.history_len = 0;
    bad.smoothing = NAN;
    assert_int_equal(weft_diag_add(w, &bad), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "smoothing");
    bad.smoothing = -1.0;
    assert_int_equal(weft_diag_add(w, &bad), WEFT_ERR_INVALID_ARG);
    bad.smoothing = 0.0;
    bad._start_canary = 1;
    assert_int_equal(weft_diag_add(w, &bad), WEFT_ERR_INVALID_ARG);
    bad._start_canary = 0;
    bad.name = "";
    assert_int_equal(weft_diag_add(w, &bad), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_diag_count(w), 1);

    assert_int_equal(weft_diag_record(w, "nope", 2.0, 1.0), WEFT_ERR_NOT_FOUND);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "nope");
    assert_int_equal(weft_diag_record(w, "x", NAN, 1.0), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_diag_record(w, "x", 2.0, INFINITY), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "finite");
    assert_int_equal(weft_diag_record(w, "x", 0.5, 1.0), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "before");
    weft_diag_value v;
    assert_int_equal(weft_diag_get(w, "x", &v), WEFT_OK);
    assert_int_equal(v.count, 1); // nothing refused was recorded
    assert_true(near(v.value, 5.0));
    assert_int_equal(weft_diag_get(w, "nope", &v), WEFT_ERR_NOT_FOUND);
    assert_int_equal(weft_diag_get(w, "x", NULL), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_diag_history(w, "x", NULL, 3), -1);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "cap");
    assert_int_equal(weft_diag_history(w, "nope", NULL, 0), -1);
    assert_null(weft_diag_name(w, 5));
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "5");
    assert_int_equal(weft_diag_set_enabled(w, "nope", true), WEFT_ERR_NOT_FOUND);
    assert_int_equal(weft_diag_add(NULL, &d), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_diag_count(NULL), 0);
}

// ---- the plugin ----

static void sys_work(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
}

static int count_logged(tw_fixture *f, int64_t before)
{
    return (int)(f->log.count - before);
}

static void diag_plugin_measures_each_update(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    for (int i = 0; i < 5; i++) {
        assert_int_not_equal(weft_spawn(w), 0);
    }
    weft_app_desc ad;
    memset(&ad, 0, sizeof ad);
    ad.world = w;
    weft_app *app = weft_app_create(&ad);
    assert_non_null(app);
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "work";
    sd.fn = sys_work;
    assert_int_not_equal(weft_app_add_system(app, WEFT_APP_UPDATE, &sd), 0);
    weft_diag_plugin_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.log_interval = 0.5;
    pd.per_system = true;
    pd.history_len = 3;
    assert_int_equal(weft_app_add_diagnostics_plugin(app, &pd), WEFT_OK);
    assert_true(weft_app_has_plugin(app, WEFT_DIAG_PLUGIN));
    assert_int_equal(weft_app_add_diagnostics_plugin(app, &pd), WEFT_ERR_ALREADY_EXISTS);

    int64_t logged0 = f->log.count;
    for (int u = 1; u <= 4; u++) {
        assert_int_equal(weft_app_update(app, 0.25), WEFT_OK);
        weft_diag_value v;
        assert_int_equal(weft_diag_get(w, WEFT_DIAG_FRAME_TIME, &v), WEFT_OK);
        assert_true(near(v.value, 250.0));
        assert_true(near(v.time, 0.25 * u));
        assert_string_equal(v.suffix, "ms");
        assert_int_equal(weft_diag_get(w, WEFT_DIAG_FPS, &v), WEFT_OK);
        assert_true(near(v.value, 4.0));
        assert_int_equal(weft_diag_get(w, WEFT_DIAG_FRAME_COUNT, &v), WEFT_OK);
        assert_true(near(v.value, u));
        assert_int_equal(v.count, u < 3 ? u : 3);
        assert_int_equal(weft_diag_get(w, WEFT_DIAG_ENTITY_COUNT, &v), WEFT_OK);
        assert_true(near(v.value, 5.0));
        weft_world_stats st;
        assert_int_equal(weft_world_get_stats(w, &st), WEFT_OK);
        assert_int_equal(weft_diag_get(w, WEFT_DIAG_ARCHETYPE_COUNT, &v), WEFT_OK);
        assert_true(near(v.value, st.archetypes));
        assert_int_equal(weft_diag_get(w, "system/Update/work", &v), WEFT_OK);
        assert_int_equal(v.count, u < 3 ? u : 3);
        assert_true(v.value >= 0.0);
        // reports at t = 0.5 and 1.0: one INFO line per diagnostic with
        // measurements (5 built-in + 1 per system)
        int want = u < 2 ? 0 : (u < 4 ? 6 : 12);
        assert_int_equal(count_logged(f, logged0), want);
    }
    assert_int_equal(f->log.last_level, WEFT_LOG_INFO);
    assert_true(tw_contains(f->log.last_message, "diagnostic "));
    // a disabled diagnostic is not measured nor reported
    assert_int_equal(weft_diag_set_enabled(w, WEFT_DIAG_FPS, false), WEFT_OK);
    assert_int_equal(weft_app_update(app, 0.25), WEFT_OK); // t = 1.25: no report
    assert_int_equal(count_logged(f, logged0), 12);
    assert_int_equal(weft_app_update(app, 0.25), WEFT_OK); // t = 1.5: a report
    assert_int_equal(count_logged(f, logged0), 12 + 5);
    // stepping Last: the plugin's system is not steppable and still runs
    weft_schedule *last = weft_app_schedule(app, WEFT_APP_LAST);
    assert_int_equal(weft_schedule_set_stepping(last, true), WEFT_OK);
    assert_int_equal(weft_app_update(app, 0.25), WEFT_OK);
    weft_diag_value v;
    assert_int_equal(weft_diag_get(w, WEFT_DIAG_FRAME_COUNT, &v), WEFT_OK);
    assert_true(near(v.value, 7.0));
    assert_int_equal(weft_app_add_diagnostics_plugin(app, NULL), WEFT_ERR_WRONG_PHASE);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

static void diag_plugin_bad_input(void **state)
{
    tw_fixture *f = *state;
    weft_app_desc ad;
    memset(&ad, 0, sizeof ad);
    ad.world = f->w;
    weft_app *app = weft_app_create(&ad);
    assert_non_null(app);
    weft_diag_plugin_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.log_interval = NAN;
    assert_int_equal(weft_app_add_diagnostics_plugin(app, &pd), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "log_interval");
    pd.log_interval = 0.0;
    pd.history_len = -2;
    assert_int_equal(weft_app_add_diagnostics_plugin(app, &pd), WEFT_ERR_INVALID_ARG);
    pd.history_len = 0;
    pd._end_canary = 9;
    assert_int_equal(weft_app_add_diagnostics_plugin(app, &pd), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_app_plugin_count(app), 0);
    // never logging
    pd._end_canary = 0;
    pd.log_interval = -1.0;
    int64_t logged0 = f->log.count;
    assert_int_equal(weft_app_add_diagnostics_plugin(app, &pd), WEFT_OK);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(weft_app_update(app, 0.5), WEFT_OK);
    }
    assert_int_equal(f->log.count, logged0);
    weft_diag_value v;
    assert_int_equal(weft_diag_get(f->w, WEFT_DIAG_FRAME_COUNT, &v), WEFT_OK);
    assert_true(near(v.value, 10.0));
    assert_int_equal(weft_diag_get(f->w, "system/Update/work", &v), WEFT_ERR_NOT_FOUND);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tw_setup, tw_teardown)
    const struct CMUnitTest tests[] = {
        T(diag_smoothing_against_a_hand_computed_series),
        T(diag_bad_input),
        T(diag_plugin_measures_each_update),
        T(diag_plugin_bad_input),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

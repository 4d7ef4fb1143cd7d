// tests/state/test_state_app.c - states on the app (weft.h, "states on an
// app"): the initial OnEnter runs at startup before PreStartup, transitions
// run in StateTransition between PreUpdate and Update, the plugin and
// weft_app_register_state hook the same step once, a state registered after
// startup is entered by the next update, a failing OnEnter system fails the
// update, and bad input leaves the app unchanged.
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

static char g_log[4096];

static void log_sys(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    size_t n = strlen(g_log);
    snprintf(g_log + n, sizeof g_log - n, "%s%s", n ? " " : "", (const char *)user);
}

static void add_logger(weft_schedule *s, const char *label)
{
    assert_non_null(s);
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = label;
    d.fn = log_sys;
    d.user = (void *)(uintptr_t)label;
    assert_int_not_equal(weft_schedule_add_system(s, &d), 0);
}

static const weft_state_value SCREEN_V[] = {{0, "Menu"}, {1, "Game"}};

static weft_state_desc screen_desc(const char *name)
{
    weft_state_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.values = SCREEN_V;
    d.value_count = 2;
    return d;
}

typedef struct setter {
    weft_state s;
    uint32_t value;
    int64_t at;   // the update on which to set it
    int64_t n;
} setter;

static void set_on(weft_system_ctx *ctx, void *user)
{
    setter *st = user;
    if (++st->n == st->at) {
        weft_system_state_set_next(ctx, st->s, st->value);
    }
}

static void app_orders_startup_and_updates(void **state)
{
    (void)state;
    weft_app *app = weft_app_create(NULL);
    assert_non_null(app);
    weft_world *w = weft_app_world(app);
    weft_state_desc d = screen_desc("Screen");
    weft_state s = weft_app_register_state(app, &d);
    assert_int_not_equal(s, 0);
    add_logger(weft_state_on_enter(w, s, 0), "+Menu");
    add_logger(weft_state_on_exit(w, s, 0), "-Menu");
    add_logger(weft_state_on_enter(w, s, 1), "+Game");
    const char *labels[] = {WEFT_APP_PRE_STARTUP, WEFT_APP_STARTUP, WEFT_APP_PRE_UPDATE,
                            WEFT_APP_UPDATE};
    for (int i = 0; i < 4; i++) {
        add_logger(weft_app_schedule(app, labels[i]), labels[i]);
    }
    // the startup order gained the startup transition, right before PreStartup
    assert_string_equal(weft_app_label(app, WEFT_APP_ORDER_STARTUP, 0),
                        "StateTransitionStartup");
    assert_string_equal(weft_app_label(app, WEFT_APP_ORDER_STARTUP, 1),
                        WEFT_APP_PRE_STARTUP);
    // a system in PreUpdate queues Game on the second update
    static setter st;
    st = (setter){s, 1, 2, 0};
    weft_resource_use use = {weft_state_next_resource(w, s), WEFT_ACCESS_WRITE};
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "press-start";
    sd.fn = set_on;
    sd.user = &st;
    sd.resources = &use;
    sd.resource_count = 1;
    assert_int_not_equal(weft_app_add_system(app, WEFT_APP_PRE_UPDATE, &sd), 0);

    g_log[0] = '\0';
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_string_equal(g_log, "+Menu PreStartup Startup PreUpdate Update");
    g_log[0] = '\0';
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    // queued in PreUpdate, applied in StateTransition, before Update
    assert_string_equal(g_log, "PreUpdate -Menu +Game Update");
    uint32_t v = 9;
    assert_int_equal(weft_state_get(w, s, &v), WEFT_OK);
    assert_int_equal(v, 1);

    // registered after startup: entered by the next StateTransition
    weft_state_desc d2 = screen_desc("Late");
    weft_state late = weft_app_register_state(app, &d2);
    assert_int_not_equal(late, 0);
    add_logger(weft_state_on_enter(w, late, 0), "+Late");
    g_log[0] = '\0';
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_string_equal(g_log, "PreUpdate +Late Update");
    // one transition system per schedule, however many states
    weft_schedule *tr = weft_app_schedule(app, WEFT_APP_STATE_TRANSITION);
    assert_int_equal(weft_schedule_node_count(tr), 1);
    assert_string_equal(weft_schedule_node_name(tr, 1), "weft.state_transition");
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

static void plugin_hooks_states_registered_on_the_world(void **state)
{
    (void)state;
    weft_app *app = weft_app_create(NULL);
    weft_world *w = weft_app_world(app);
    assert_int_equal(weft_app_add_states_plugin(app), WEFT_OK);
    assert_int_equal(weft_app_add_states_plugin(app), WEFT_ERR_ALREADY_EXISTS);
    assert_true(weft_app_has_plugin(app, "weft.states"));
    weft_state_desc d = screen_desc("Screen");
    weft_state s = weft_state_register(w, &d); // the plain world call
    assert_int_not_equal(s, 0);
    add_logger(weft_state_on_enter(w, s, 0), "+Menu");
    add_logger(weft_app_schedule(app, WEFT_APP_STARTUP), WEFT_APP_STARTUP);
    g_log[0] = '\0';
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_string_equal(g_log, "+Menu Startup");
    // the plugin and weft_app_register_state together still hook once
    weft_state_desc d2 = screen_desc("Other");
    assert_int_not_equal(weft_app_register_state(app, &d2), 0);
    assert_int_equal(weft_schedule_node_count(weft_app_schedule(app,
                                                                WEFT_APP_STATE_TRANSITION)),
                     1);
    // after the setup no plugin may be added
    assert_int_equal(weft_app_add_states_plugin(app), WEFT_ERR_WRONG_PHASE);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// The transition system is weft's own: stepping the StateTransition
// schedule does not hold transitions back.
static void transitions_run_while_stepping(void **state)
{
    (void)state;
    weft_app *app = weft_app_create(NULL);
    weft_world *w = weft_app_world(app);
    weft_state_desc d = screen_desc("Screen");
    weft_state s = weft_app_register_state(app, &d);
    assert_int_not_equal(s, 0);
    weft_schedule *tr = weft_app_schedule(app, WEFT_APP_STATE_TRANSITION);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(weft_schedule_set_stepping(tr, true), WEFT_OK);
    assert_int_equal(weft_state_set_next(w, s, 1), WEFT_OK);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    uint32_t v = 9;
    assert_int_equal(weft_state_get(w, s, &v), WEFT_OK);
    assert_int_equal(v, 1);
    weft_system_stats st;
    assert_int_equal(weft_schedule_system_stats(tr, 1, &st), WEFT_OK);
    assert_int_equal(st.skipped, 0);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

static void failing(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_system_fail(ctx, WEFT_ERR_CALLBACK, "the menu could not load");
}

static void failing_enter_fails_the_update(void **state)
{
    (void)state;
    weft_app *app = weft_app_create(NULL);
    weft_world *w = weft_app_world(app);
    weft_state_desc d = screen_desc("Screen");
    weft_state s = weft_app_register_state(app, &d);
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "load-menu";
    sd.fn = failing;
    assert_int_not_equal(weft_schedule_add_system(weft_state_on_enter(w, s, 1), &sd), 0);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(weft_state_set_next(w, s, 1), WEFT_OK);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_ERR_CALLBACK);
    const char *msg = weft_last_error(w);
    assert_non_null(strstr(msg, "the menu could not load"));
    // the transition itself happened; the next update is clean
    uint32_t v = 9;
    weft_state_get(w, s, &v);
    assert_int_equal(v, 1);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

static void bad_input_leaves_the_app_unchanged(void **state)
{
    (void)state;
    assert_int_equal(weft_app_register_state(NULL, NULL), 0);
    assert_int_equal(weft_app_add_states_plugin(NULL), WEFT_ERR_INVALID_HANDLE);
    weft_app *app = weft_app_create(NULL);
    weft_world *w = weft_app_world(app);
    int32_t startup_labels = weft_app_label_count(app, WEFT_APP_ORDER_STARTUP);
    uint64_t hash = weft_world_hash(w);
    weft_state_desc d = screen_desc("Screen");
    d.initial = 7; // not a value
    assert_int_equal(weft_app_register_state(app, &d), 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_state_lookup(w, "Screen"), 0);
    d.initial = 0;
    d.kind = WEFT_STATE_KIND_SUB;
    d.source = 5;
    d.source_value = 0;
    assert_int_equal(weft_app_register_state(app, &d), 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_NOT_FOUND);
    // nothing was hooked or registered
    assert_int_equal(weft_app_label_count(app, WEFT_APP_ORDER_STARTUP), startup_labels);
    assert_int_equal(weft_schedule_node_count(weft_app_schedule(app,
                                                                WEFT_APP_STATE_TRANSITION)),
                     0);
    assert_true(weft_world_hash(w) == hash);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// Every allocation of weft_app_register_state may fail: the call returns 0
// with OUT_OF_MEMORY, no state is registered, nothing leaks, and the app
// still updates; the first run without a failure registers and enters it.
static void out_of_memory_registering_on_the_app(void **state)
{
    (void)state;
    bool done = false;
    int failures = 0;
    for (int64_t n = 1; !done && n < 300; n++) {
        tw_fixture *f = tw_fixture_new();
        assert_non_null(f);
        weft_app_desc ad;
        memset(&ad, 0, sizeof ad);
        ad.world = f->w;
        weft_app *app = weft_app_create(&ad);
        assert_non_null(app);
        weft_state_desc d = screen_desc("Screen");
        tw_alloc_fail_nth(&f->alloc, n, false);
        weft_state s = weft_app_register_state(app, &d);
        bool injected = tw_alloc_injected(&f->alloc) > 0;
        tw_alloc_disarm(&f->alloc);
        if (s == 0) {
            failures++;
            assert_true(injected);
            assert_int_equal(weft_last_status(f->w), WEFT_ERR_OUT_OF_MEMORY);
            assert_int_equal(weft_state_lookup(f->w, "Screen"), 0);
        } else {
            done = !injected;
        }
        assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
        if (s != 0) { // entered by the startup transition
            uint32_t v = 9;
            assert_int_equal(weft_state_get(f->w, s, &v), WEFT_OK);
            assert_int_equal(v, 0);
        }
        assert_int_equal(weft_world_check(f->w), WEFT_OK);
        assert_int_equal(weft_app_destroy(app), WEFT_OK);
        tw_fixture_free(f);
    }
    assert_true(done);
    assert_true(failures > 3); // the hooks' and the registration's allocations
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(app_orders_startup_and_updates),
        cmocka_unit_test(plugin_hooks_states_registered_on_the_world),
        cmocka_unit_test(failing_enter_fails_the_update),
        cmocka_unit_test(transitions_run_while_stepping),
        cmocka_unit_test(bad_input_leaves_the_app_unchanged),
        cmocka_unit_test(out_of_memory_registering_on_the_app),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

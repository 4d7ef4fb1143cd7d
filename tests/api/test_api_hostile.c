// tests/api/test_api_hostile.c - regressions for inputs a hostile or careless
// user sends: sizes that wrap, limits skipped, the world destroyed from
// inside its own callbacks, absurd fixed steps of an app, iterators copied or left
// zeroed, change filters next to components without ticks, and hand edits
// of a relationship's target list. Every case must end with a status and a
// message, no crash, and weft_world_check clean.
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L // clock_gettime
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "test_world.h"
#include "weft.h"

static weft_world *W(void **state)
{
    return ((tw_fixture *)*state)->w;
}

static weft_component comp(weft_world *w, const char *name, size_t size, uint32_t flags)
{
    return tw_comp(w, name, size, 0, WEFT_STORAGE_DEFAULT, flags);
}

static void expect_clean(weft_world *w)
{
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- custom command payload sizes ----

static void custom_noop(weft_world *w, void *payload, void *user)
{
    (void)w;
    (void)payload;
    (void)user;
}

// size + record header used to wrap around SIZE_MAX, pass the room check and
// memcpy nearly SIZE_MAX bytes.
static void cmd_custom_payload_size_near_size_max(void **state)
{
    tw_fixture *f = *state;
    weft_commands *cmds = weft_commands_create(f->w);
    assert_non_null(cmds);
    unsigned char payload[64] = {0};
    const size_t sizes[] = {SIZE_MAX, SIZE_MAX - 8, SIZE_MAX - 40, SIZE_MAX - 63,
                            (size_t)UINT32_MAX, (size_t)UINT32_MAX - 40,
                            ((size_t)1 << 30) + 1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        weft_clear_error(f->w);
        assert_int_equal(weft_cmd_custom(cmds, custom_noop, payload, sizes[i], NULL, NULL),
                         WEFT_ERR_CAPACITY);
        tw_expect_error(f, WEFT_ERR_CAPACITY, "exceeds the limit");
        assert_int_equal(weft_commands_count(cmds), 0);
    }
    // a normal payload still records and applies
    assert_int_equal(weft_cmd_custom(cmds, custom_noop, payload, sizeof payload, NULL, NULL),
                     WEFT_OK);
    assert_int_equal(weft_commands_apply(f->w, cmds), WEFT_OK);
    weft_commands_destroy(cmds);
    expect_clean(f->w);
}

// ---- the component limit ----

#define LIMIT 32000 // WF_MAX_COMPONENTS (src/core/config.h)

// Relationships registered their two components without looking at the
// limit, so ids (and table column counts) could pass what the int16
// id-to-column map holds.
static void relationship_register_respects_component_limit(void **state)
{
    tw_fixture *f = *state;
    char name[32];
    weft_world_stats st;
    assert_int_equal(weft_world_get_stats(f->w, &st), WEFT_OK);
    for (int32_t i = st.components; i < LIMIT - 1; i++) {
        snprintf(name, sizeof name, "T%d", (int)i);
        weft_component_desc d = {0};
        d.name = name;
        assert_int_not_equal(weft_component_register(f->w, &d), 0);
    }
    assert_int_equal(weft_world_get_stats(f->w, &st), WEFT_OK);
    assert_int_equal(st.components, LIMIT - 1);
    // one id left: a relationship needs two
    weft_relationship_desc rd = {0};
    rd.name = "Owns";
    weft_clear_error(f->w);
    assert_int_equal(weft_relationship_register(f->w, &rd), 0);
    tw_expect_error(f, WEFT_ERR_CAPACITY, "Owns");
    assert_int_equal(weft_child_of(f->w), 0);
    assert_int_equal(weft_last_status(f->w), WEFT_ERR_CAPACITY);
    assert_int_equal(weft_world_get_stats(f->w, &st), WEFT_OK);
    assert_int_equal(st.components, LIMIT - 1);
    // the last id goes to a plain component, then nothing more fits
    weft_component_desc d = {0};
    d.name = "Last";
    d.size = 4;
    weft_component last = weft_component_register(f->w, &d);
    assert_int_equal(last, LIMIT);
    d.name = "OneTooMany";
    assert_int_equal(weft_component_register(f->w, &d), 0);
    assert_int_equal(weft_last_status(f->w), WEFT_ERR_CAPACITY);
    rd.name = "Owns2";
    assert_int_equal(weft_relationship_register(f->w, &rd), 0);
    assert_int_equal(weft_last_status(f->w), WEFT_ERR_CAPACITY);
    // the highest id still maps to a column
    int v = 7;
    weft_entity e = weft_spawn(f->w);
    assert_int_equal(weft_insert(f->w, e, last, &v, sizeof v), WEFT_OK);
    const int *got = weft_get(f->w, e, last, sizeof v);
    assert_non_null(got);
    assert_int_equal(*got, 7);
    expect_clean(f->w);
}

// ---- destroying the world from inside its callbacks ----

typedef struct destroy_probe {
    weft_world *w;
    int calls;
    weft_status returned; // what weft_world_destroy returned inside
    weft_status slot;     // weft_last_status right after
} destroy_probe;

static destroy_probe g_probe;

static void probe_destroy(weft_world *w)
{
    g_probe.calls++;
    g_probe.returned = weft_world_destroy(w);
    g_probe.slot = weft_last_status(w);
}

static void probe_reset(weft_world *w)
{
    memset(&g_probe, 0, sizeof g_probe);
    g_probe.w = w;
    g_probe.returned = WEFT_OK;
}

static void probe_expect_refused(weft_world *w)
{
    assert_int_equal(g_probe.calls, 1);
    assert_int_equal(g_probe.returned, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(g_probe.slot, WEFT_ERR_WRONG_PHASE);
    // the world is still there and consistent
    expect_clean(w);
    assert_int_not_equal(weft_spawn(w), 0);
}

static void hook_destroy(weft_world *w, weft_entity e, weft_component c, void *user)
{
    (void)e;
    (void)c;
    (void)user;
    probe_destroy(w);
}

static void observer_destroy(weft_world *w, weft_trigger *t, void *user)
{
    (void)t;
    (void)user;
    probe_destroy(w);
}

static void custom_destroy(weft_world *w, void *payload, void *user)
{
    (void)payload;
    (void)user;
    probe_destroy(w);
}

static void drop_destroy(void *payload, void *user)
{
    (void)payload;
    (void)user;
    probe_destroy(g_probe.w);
}

static void system_destroy(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
    probe_destroy(g_probe.w);
}

static void world_destroy_from_hook(void **state)
{
    weft_world *w = W(state);
    weft_component_desc d = {0};
    d.name = "Hooked";
    d.size = 4;
    d.lifecycle.on_add = hook_destroy;
    weft_component c = weft_component_register(w, &d);
    assert_int_not_equal(c, 0);
    probe_reset(w);
    int v = 1;
    weft_entity e = weft_spawn(w);
    assert_int_equal(weft_insert(w, e, c, &v, sizeof v), WEFT_OK);
    probe_expect_refused(w);
    assert_true(weft_has(w, e, c));
}

static void world_destroy_from_observer(void **state)
{
    weft_world *w = W(state);
    weft_component c = comp(w, "Observed", 4, 0);
    weft_observer_desc od = {0};
    od.event = WEFT_EVENT_INSERT;
    od.component = c;
    od.fn = observer_destroy;
    assert_non_null(weft_observer_create(w, &od));
    probe_reset(w);
    int v = 1;
    weft_entity e = weft_spawn_with(w, (weft_value[]){{c, sizeof v, &v}}, 1);
    assert_int_not_equal(e, 0);
    probe_expect_refused(w);
}

static void world_destroy_from_custom_command(void **state)
{
    weft_world *w = W(state);
    weft_commands *cmds = weft_commands_create(w);
    assert_non_null(cmds);
    probe_reset(w);
    assert_int_equal(weft_cmd_custom(cmds, custom_destroy, NULL, 0, NULL, NULL), WEFT_OK);
    assert_int_equal(weft_commands_apply(w, cmds), WEFT_OK);
    probe_expect_refused(w);
    // and from a drop function run by the apply, and by destroying a buffer
    probe_reset(w);
    assert_int_equal(weft_cmd_custom(cmds, custom_noop, NULL, 0, drop_destroy, NULL), WEFT_OK);
    assert_int_equal(weft_commands_apply(w, cmds), WEFT_OK);
    probe_expect_refused(w);
    probe_reset(w);
    assert_int_equal(weft_cmd_custom(cmds, custom_noop, NULL, 0, drop_destroy, NULL), WEFT_OK);
    weft_commands_destroy(cmds);
    probe_expect_refused(w);
}

static void world_destroy_from_message_drop(void **state)
{
    weft_world *w = W(state);
    weft_message_desc md = {0};
    md.name = "Ping";
    md.size = 4;
    md.drop = drop_destroy;
    weft_message_type t = weft_message_register(w, &md);
    assert_int_not_equal(t, 0);
    int v = 1;
    assert_int_equal(weft_message_write(w, t, &v, sizeof v), WEFT_OK);
    probe_reset(w);
    weft_messages_update(w); // the message ages
    weft_messages_update(w); // and is dropped
    probe_expect_refused(w);
}

static void world_destroy_from_system(void **state)
{
    weft_world *w = W(state);
    weft_schedule *s = weft_schedule_create(w, "Update");
    assert_non_null(s);
    weft_system_desc sd = {0};
    sd.name = "destroyer";
    sd.fn = system_destroy;
    assert_int_not_equal(weft_schedule_add_system(s, &sd), 0);
    probe_reset(w);
    weft_status st = weft_schedule_run(s, 0.0);
    assert_int_equal(st, WEFT_ERR_WRONG_PHASE); // the system failed with it
    assert_non_null(strstr(weft_last_error(w), "weft_world_destroy"));
    assert_int_equal(g_probe.calls, 1);
    assert_int_equal(g_probe.returned, WEFT_ERR_WRONG_PHASE);
    expect_clean(w);
}

static void world_destroy_bad_handles(void **state)
{
    (void)state;
    assert_int_equal(weft_world_destroy(NULL), WEFT_OK);
    // a pointer that is not a live world (zeroed memory of the right size
    // class) is refused rather than freed
    static uint64_t not_a_world[64];
    assert_int_equal(weft_world_destroy((weft_world *)(void *)not_a_world),
                     WEFT_ERR_INVALID_HANDLE);
}

// ---- fixed steps ----

static int g_fixed_runs;

static void count_fixed(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
    g_fixed_runs++;
}

// An app on the fixture's world whose FixedUpdate counts its runs.
static weft_app *fixed_app(tw_fixture *f, double step, double max_delta)
{
    weft_app_desc ad = {0};
    ad.world = f->w;
    ad.fixed_step = step;
    ad.max_delta = max_delta;
    weft_app *app = weft_app_create(&ad);
    assert_non_null(app);
    weft_system_desc sd = {0};
    sd.name = "count";
    sd.fn = count_fixed;
    assert_int_not_equal(weft_app_add_system(app, WEFT_APP_FIXED_UPDATE, &sd), 0);
    return app;
}

// Destroys the app and the FixedUpdate schedule it leaves in the world (a
// later app on the world would take it back, counting system included).
static void fixed_app_done(tw_fixture *f, weft_app *app)
{
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    weft_schedule *s = weft_schedule_lookup(f->w, WEFT_APP_FIXED_UPDATE);
    assert_non_null(s);
    assert_int_equal(weft_schedule_destroy(s), WEFT_OK);
}

// A step of 1e-300 made acc / step overflow int32_t (undefined conversion);
// 1e-6 against a 10 s delta ran ten million fixed steps in one update.
static void app_absurd_fixed_steps(void **state)
{
    tw_fixture *f = *state;
    const double bad[] = {1e-300, 1e-12, 5e-7};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        weft_app_desc ad = {0};
        ad.world = f->w;
        ad.fixed_step = bad[i];
        weft_clear_error(f->w);
        assert_null(weft_app_create(&ad));
        tw_expect_error(f, WEFT_ERR_INVALID_ARG, "fixed_step");
    }
    // the smallest step allowed, with a huge clamp: capped per update
    weft_app *app = fixed_app(f, WEFT_APP_MIN_FIXED_STEP, 10.0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        weft_clear_error(f->w);
        assert_int_equal(weft_app_set_fixed_step(app, bad[i]), WEFT_ERR_INVALID_ARG);
        tw_expect_error(f, WEFT_ERR_INVALID_ARG, "minimum");
    }
    g_fixed_runs = 0;
    assert_int_equal(weft_app_update(app, 10.0), WEFT_OK);
    assert_int_equal(weft_app_fixed_steps(app), WEFT_APP_MAX_FIXED_STEPS);
    assert_int_equal(g_fixed_runs, WEFT_APP_MAX_FIXED_STEPS);
    assert_true(weft_app_fixed_accumulator(app) < WEFT_APP_MIN_FIXED_STEP);
    fixed_app_done(f, app);
    // an accumulator far beyond int32_t steps (finite clamp near DBL_MAX)
    app = fixed_app(f, 2e-6, 1e300);
    g_fixed_runs = 0;
    assert_int_equal(weft_app_update(app, 1e300), WEFT_OK);
    assert_int_equal(weft_app_fixed_steps(app), WEFT_APP_MAX_FIXED_STEPS);
    assert_int_equal(g_fixed_runs, WEFT_APP_MAX_FIXED_STEPS);
    // a smaller cap per update
    fixed_app_done(f, app);
    weft_app_desc ad = {0};
    ad.world = f->w;
    ad.fixed_step = 0.001;
    ad.max_fixed_steps = 5;
    app = weft_app_create(&ad);
    assert_non_null(app);
    assert_int_equal(weft_app_update(app, 0.25), WEFT_OK);
    assert_int_equal(weft_app_fixed_steps(app), 5);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    ad.max_fixed_steps = WEFT_APP_MAX_FIXED_STEPS + 1;
    assert_null(weft_app_create(&ad));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "max_fixed_steps");
    // ordinary updates are unchanged: 0.048 s at 0.016 is 3 steps
    app = fixed_app(f, 0.016, 0.0);
    assert_int_equal(weft_app_update(app, 0.048), WEFT_OK);
    assert_int_equal(weft_app_fixed_steps(app), 3);
    fixed_app_done(f, app);
    expect_clean(f->w);
}

// ---- iterators ----

static weft_query *query1(weft_world *w, weft_component c)
{
    weft_query_desc qd = {0};
    qd.terms[0].id = c;
    qd.term_count = 1;
    weft_query *q = weft_query_create(w, &qd);
    assert_non_null(q);
    return q;
}

// Ending an iteration and a copy of it ended it twice: the depth wrapped,
// every later structural call was deferred forever and commands_apply said
// WRONG_PHASE.
static void iter_copy_fini_twice(void **state)
{
    weft_world *w = W(state);
    weft_component c = comp(w, "C", 4, 0);
    int v = 3;
    weft_spawn_with(w, (weft_value[]){{c, sizeof v, &v}}, 1);
    weft_query *q = query1(w, c);

    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    weft_iter copy = it;
    weft_iter_fini(&it);
    weft_iter_fini(&copy);
    weft_entity e = weft_spawn(w); // immediate, not deferred
    assert_true(weft_is_alive(w, e));
    assert_int_equal(weft_commands_apply(w, weft_world_commands(w)), WEFT_OK);
    expect_clean(w);

    // a copy taken mid-iteration stops when the original has ended
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    assert_true(weft_iter_next(&it));
    copy = it;
    while (weft_iter_next(&it)) {
    }
    assert_false(weft_iter_next(&copy));
    weft_iter_fini(&copy);
    weft_iter_fini(&it);
    e = weft_spawn(w);
    assert_true(weft_is_alive(w, e));
    expect_clean(w);

    // a copy ends the iteration it copies; the original then ends nothing
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    copy = it;
    weft_iter_fini(&copy);
    e = weft_spawn(w);
    assert_true(weft_is_alive(w, e));
    assert_false(weft_iter_next(&it));
    weft_iter_fini(&it);
    expect_clean(w);
    assert_int_equal(weft_query_destroy(w, q), WEFT_OK);
}

// Every field accessor on a zeroed iterator (what weft_query_iter leaves when
// it fails) used to dereference its NULL world.
static void iter_zeroed_is_harmless(void **state)
{
    tw_fixture *f = *state;
    weft_iter it;
    memset(&it, 0, sizeof it);
    int v = 5;
    bool changed = true;
    assert_false(weft_iter_next(&it));
    assert_int_equal(weft_iter_count(&it), 0);
    assert_null(weft_iter_entities(&it));
    assert_null(weft_iter_field(&it, 0, 4));
    assert_null(weft_iter_field_mut(&it, 0, 4));
    assert_null(weft_iter_field_mut_nomark(&it, 0, 4));
    assert_false(weft_iter_has(&it, 0));
    assert_null(weft_iter_get(&it, 0, 0, 4));
    assert_null(weft_iter_get_mut(&it, 0, 0, 4));
    assert_int_equal(weft_iter_mark(&it, 0, 0), WEFT_ERR_WRONG_PHASE);
    assert_int_equal(weft_iter_set_if_neq(&it, 0, 0, &v, 4, &changed), WEFT_ERR_WRONG_PHASE);
    assert_false(changed);
    weft_iter_fini(&it);

    // the real thing: weft_query_iter failing for memory while matching a
    // new archetype
    weft_component c = comp(f->w, "C", 4, 0);
    weft_component d = comp(f->w, "D", 4, 0);
    weft_query *q = query1(f->w, c);
    weft_spawn_with(f->w, (weft_value[]){{c, 4, &v}, {d, 4, &v}}, 2);
    weft_status st = WEFT_ERR_OUT_OF_MEMORY;
    for (int64_t n = 1; st == WEFT_ERR_OUT_OF_MEMORY; n++) {
        memset(&it, 0xA5, sizeof it);
        tw_alloc_fail_nth(&f->alloc, n, true);
        st = weft_query_iter(f->w, q, &it);
        tw_alloc_disarm(&f->alloc);
        if (st == WEFT_ERR_OUT_OF_MEMORY) {
            assert_null(weft_iter_field(&it, 0, 4));
            assert_false(weft_iter_next(&it));
            weft_iter_fini(&it);
        }
    }
    assert_int_equal(st, WEFT_OK);
    assert_true(weft_iter_next(&it));
    assert_non_null(weft_iter_field(&it, 0, 4));
    weft_iter_fini(&it);
    expect_clean(f->w);
}

// ---- change filters and components without ticks ----

static void changed_filter_and_no_change_ticks(void **state)
{
    tw_fixture *f = *state;
    weft_component nt = comp(f->w, "NoTicks", 4, WEFT_COMPONENT_NO_CHANGE_TICKS);
    weft_component b = comp(f->w, "B", 4, 0);
    weft_component other = comp(f->w, "Other", 4, 0);
    weft_component sp = tw_comp(f->w, "SparseNoTicks", 4, 0, WEFT_STORAGE_SPARSE,
                                WEFT_COMPONENT_NO_CHANGE_TICKS);
    int v = 1;
    weft_entity e1 = weft_spawn_with(f->w, (weft_value[]){{nt, 4, &v}, {b, 4, &v}}, 2);
    weft_entity e2 = weft_spawn_with(f->w, (weft_value[]){{nt, 4, &v}, {sp, 4, &v}}, 2);
    (void)e2;

    // a filter on the component itself: refused at creation
    weft_query_desc qd = {0};
    qd.terms[0].id = nt;
    qd.terms[0].filter = WEFT_FILTER_CHANGED;
    qd.term_count = 1;
    weft_clear_error(f->w);
    assert_null(weft_query_create(f->w, &qd));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "NO_CHANGE_TICKS");
    qd.terms[0].id = sp;
    qd.terms[0].filter = WEFT_FILTER_ADDED;
    assert_null(weft_query_create(f->w, &qd));
    assert_int_equal(weft_last_status(f->w), WEFT_ERR_INVALID_ARG);

    // an unfiltered OR term on it, next to a filtered one: it only needs
    // presence, never ticks
    weft_component tick_less[2] = {nt, sp};
    for (int k = 0; k < 2; k++) {
        memset(&qd, 0, sizeof qd);
        qd.terms[0].id = tick_less[k];
        qd.terms[0].oper = WEFT_OPER_OR;
        qd.terms[1].id = b;
        qd.terms[1].oper = WEFT_OPER_OR;
        qd.terms[1].filter = WEFT_FILTER_CHANGED;
        qd.term_count = 2;
        weft_query *q = weft_query_create(f->w, &qd);
        assert_non_null(q);
        assert_true(weft_query_matches(f->w, q, e1)); // never run: all is new
        int64_t rows = 0;
        weft_iter it;
        assert_int_equal(weft_query_iter(f->w, q, &it), WEFT_OK);
        while (weft_iter_next(&it)) {
            rows += weft_iter_count(&it);
        }
        assert_true(rows >= 1); // the first run sees everything as changed
        assert_int_equal(weft_query_destroy(f->w, q), WEFT_OK);

        // and the same term in a query with a Changed filter elsewhere
        memset(&qd, 0, sizeof qd);
        qd.terms[0].id = b;
        qd.terms[0].filter = WEFT_FILTER_CHANGED;
        qd.terms[1].id = tick_less[k];
        qd.terms[1].oper = WEFT_OPER_OR;
        qd.terms[1].or_group = 1;
        qd.terms[2].id = other;
        qd.terms[2].oper = WEFT_OPER_OR;
        qd.terms[2].or_group = 1;
        qd.term_count = 3;
        q = weft_query_create(f->w, &qd);
        assert_non_null(q);
        assert_int_equal(weft_query_iter(f->w, q, &it), WEFT_OK);
        while (weft_iter_next(&it)) {
        }
        assert_int_equal(weft_query_destroy(f->w, q), WEFT_OK);
    }
    expect_clean(f->w);
}

// ---- a relationship's target list ----

// Removing the list by hand cut the link: despawning the parent no longer
// despawned the child, which kept a ChildOf naming a dead entity.
static void relationship_target_list_is_not_removable(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component child_of = weft_child_of(w);
    weft_component targets = weft_relationship_targets(w, child_of);
    assert_int_not_equal(targets, 0);
    weft_entity parent = weft_spawn(w);
    weft_entity child = weft_spawn(w);
    assert_int_equal(weft_set_parent(w, child, parent), WEFT_OK);
    assert_true(weft_has(w, parent, targets));

    tw_snap snap = tw_snap_take(w);
    weft_clear_error(w);
    assert_int_equal(weft_remove(w, parent, targets), WEFT_ERR_RELATIONSHIP);
    tw_expect_error(f, WEFT_ERR_RELATIONSHIP, "target list");
    tw_snap_expect_same(w, &snap);

    weft_commands *cmds = weft_commands_create(w);
    assert_non_null(cmds);
    assert_int_equal(weft_cmd_remove(cmds, parent, targets), WEFT_ERR_RELATIONSHIP);
    assert_int_equal(weft_cmd_try_remove(cmds, parent, targets), WEFT_ERR_RELATIONSHIP);
    assert_int_equal(weft_commands_count(cmds), 0);

    // inserting a forged list (its bytes hold a heap pointer) is refused too
    unsigned char forged[64];
    memset(forged, 0x5A, sizeof forged);
    weft_component_info info;
    assert_int_equal(weft_component_info_get(w, targets, &info), WEFT_OK);
    assert_true(info.size <= sizeof forged);
    weft_entity other = weft_spawn(w);
    weft_component needy = comp(w, "Needy", 4, 0);
    snap = tw_snap_take(w);
    assert_int_equal(weft_insert(w, other, targets, forged, info.size), WEFT_ERR_RELATIONSHIP);
    assert_int_equal(weft_insert_many(w, other, (weft_value[]){{targets, info.size, forged}},
                                      1),
                     WEFT_ERR_RELATIONSHIP);
    assert_int_equal(weft_spawn_with(w, (weft_value[]){{targets, info.size, forged}}, 1), 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_RELATIONSHIP);
    assert_int_equal(weft_cmd_insert(cmds, other, targets, forged, info.size),
                     WEFT_ERR_RELATIONSHIP);
    assert_int_equal(weft_resource_insert(w, targets, forged, info.size),
                     WEFT_ERR_RELATIONSHIP);
    weft_require req = {0};
    req.id = targets;
    assert_int_equal(weft_component_require(w, needy, &req, 1), WEFT_ERR_RELATIONSHIP);
    tw_snap_expect_same_content(w, &snap);
    weft_commands_destroy(cmds);

    // while iterating (deferred path) as well
    weft_query *q = query1(w, child_of);
    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    assert_int_equal(weft_remove(w, parent, targets), WEFT_ERR_RELATIONSHIP);
    weft_iter_fini(&it);
    assert_int_equal(weft_query_destroy(w, q), WEFT_OK);

    // the link still works
    assert_int_equal(weft_despawn(w, parent), WEFT_OK);
    assert_false(weft_is_alive(w, child));
    expect_clean(w);
}

// ---- registration limits ----

// A size far above the component limit with its low bits zero: 2^40 on a
// 64-bit size_t (nothing left when truncated to 32 bits), 2^31 on a 32-bit one.
#define HUGE_SIZE ((size_t)1 << (SIZE_MAX > UINT32_MAX ? 40 : 31))

static void component_sizes_and_alignments(void **state)
{
    tw_fixture *f = *state;
    tw_snap snap = tw_snap_take(f->w);
    const struct {
        size_t size, align;
        weft_status expect;
        const char *needle;
    } cases[] = {
        {HUGE_SIZE, 0, WEFT_ERR_INVALID_ARG, "exceeds the limit"},
        {HUGE_SIZE, 8, WEFT_ERR_INVALID_ARG, "exceeds the limit"},
        {SIZE_MAX, 0, WEFT_ERR_INVALID_ARG, "exceeds the limit"},
        {12, 3, WEFT_ERR_BAD_ALIGNMENT, "power of two"},
        {8192, 8192, WEFT_ERR_BAD_ALIGNMENT, "power of two up to 4096"},
        {4, 8, WEFT_ERR_BAD_ALIGNMENT, "multiple of its alignment"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        weft_component_desc d = {0};
        d.name = "Hostile";
        d.size = cases[i].size;
        d.align = cases[i].align;
        weft_clear_error(f->w);
        assert_int_equal(weft_component_register(f->w, &d), 0);
        tw_expect_error(f, cases[i].expect, cases[i].needle);
        d.storage = WEFT_STORAGE_SPARSE;
        assert_int_equal(weft_component_register(f->w, &d), 0);
        assert_int_equal(weft_last_status(f->w), cases[i].expect);
        weft_message_desc md = {0};
        md.name = "HostileMsg";
        md.size = cases[i].size;
        md.align = cases[i].align;
        assert_int_equal(weft_message_register(f->w, &md), 0);
        assert_int_not_equal(weft_last_status(f->w), WEFT_OK);
    }
    tw_snap_expect_same_content(f->w, &snap);
    // alignment 0 means "derived from the size"
    weft_component_desc d = {0};
    d.name = "Derived";
    d.size = 24;
    weft_component c = weft_component_register(f->w, &d);
    assert_int_not_equal(c, 0);
    weft_component_info info;
    assert_int_equal(weft_component_info_get(f->w, c, &info), WEFT_OK);
    assert_int_equal(info.align, 8);
    expect_clean(f->w);
}

// 100,000 archetypes from combinations of 17 tags: every one reachable,
// the check clean, memory reported (and bounded: a few KiB each).
static void hundred_thousand_archetypes(void **state)
{
    tw_fixture *f = *state;
    enum { TAGS = 17, ARCHS = 100000 };
    weft_component tags[TAGS];
    char name[16];
    for (int i = 0; i < TAGS; i++) {
        snprintf(name, sizeof name, "Tag%d", i);
        weft_component_desc d = {0};
        d.name = name;
        tags[i] = weft_component_register(f->w, &d);
        assert_int_not_equal(tags[i], 0);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    weft_value v[TAGS];
    for (int k = 1; k <= ARCHS; k++) {
        int n = 0;
        for (int b = 0; b < TAGS; b++) {
            if (k >> b & 1) {
                v[n++] = (weft_value){tags[b], 0, NULL};
            }
        }
        assert_int_not_equal(weft_spawn_with(f->w, v, n), 0);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    weft_world_stats st;
    assert_int_equal(weft_world_get_stats(f->w, &st), WEFT_OK);
    assert_int_equal(st.archetypes, ARCHS + 1);
    assert_int_equal(st.live_entities, ARCHS);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("100k archetypes: %d archetypes, %d tables, %.1f MiB held (%.0f bytes each), "
           "%.2f s to create\n", st.archetypes, st.tables,
           (double)st.live_bytes / (1024.0 * 1024.0),
           (double)st.live_bytes / (double)st.archetypes, secs);
    assert_true(st.live_bytes / st.archetypes < 8192);
    // a query over one tag visits exactly the archetypes holding it
    weft_query_desc qd = {0};
    qd.terms[0].id = tags[3];
    qd.term_count = 1;
    weft_query *q = weft_query_create(f->w, &qd);
    assert_non_null(q);
    assert_int_equal(weft_query_count(f->w, q), ARCHS / 2);
    assert_int_equal(weft_query_destroy(f->w, q), WEFT_OK);
    expect_clean(f->w);
}

// ---- handles ----

static weft_entity mk(uint32_t index, uint32_t gen)
{
    return ((uint64_t)gen << 32) | index;
}

static void stale_and_forged_handles(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component c = comp(w, "C", 4, 0);
    int v = 1;
    weft_entity e = weft_spawn_with(w, (weft_value[]){{c, 4, &v}}, 1);
    weft_entity old = e;
    assert_int_equal(weft_despawn(w, e), WEFT_OK);
    weft_entity reused = weft_spawn(w); // same index, next generation
    assert_int_equal(weft_entity_index(reused), weft_entity_index(old));
    assert_int_not_equal(weft_child_of(w), 0); // registered before the snapshot
    tw_snap snap = tw_snap_take(w);
    const weft_entity bad[] = {old, mk(weft_entity_index(old), 0), mk(123456, 1),
                               mk(0xFFFFFFFFu, 1), mk(0xFFFFFFFFu, 0xFFFFFFFFu), 0,
                               mk(weft_entity_index(reused), weft_entity_generation(reused) + 1)};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        weft_clear_error(w);
        assert_int_not_equal(weft_despawn(w, bad[i]), WEFT_OK);
        assert_true(weft_last_error(w)[0] != '\0');
        assert_int_not_equal(weft_insert(w, bad[i], c, &v, 4), WEFT_OK);
        assert_int_not_equal(weft_remove(w, bad[i], c), WEFT_OK);
        assert_null(weft_get(w, bad[i], c, 4));
        assert_false(weft_is_alive(w, bad[i]));
        assert_int_not_equal(weft_set_parent(w, reused, bad[i]), WEFT_OK);
        assert_int_not_equal(weft_set_parent(w, bad[i], reused), WEFT_OK);
    }
    tw_snap_expect_same_content(w, &snap);

    // forged object handles: readable memory that is not the object
    static uint64_t junk[256];
    memset(junk, 0x5A, sizeof junk);
    weft_query *fq = (weft_query *)(void *)junk;
    weft_schedule *fs = (weft_schedule *)(void *)junk;
    weft_commands *fc = (weft_commands *)(void *)junk;
    weft_observer *fo = (weft_observer *)(void *)junk;
    weft_world *fw = (weft_world *)(void *)junk;
    weft_iter it;
    assert_int_equal(weft_query_destroy(w, fq), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_query_iter(w, fq, &it), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_observer_destroy(w, fo), WEFT_ERR_INVALID_HANDLE);
    assert_int_not_equal(weft_cmd_despawn(fc, reused), WEFT_OK);
    assert_int_not_equal(weft_commands_apply(w, fc), WEFT_OK);
    assert_int_equal(weft_schedule_run(fs, 0.0), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_world_destroy(fw), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_spawn(fw), 0);
    tw_snap_expect_same_content(w, &snap);
}

static void double_despawn_and_reserved_ids(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_entity e = weft_spawn(w);
    assert_int_equal(weft_despawn(w, e), WEFT_OK);
    weft_clear_error(w);
    assert_int_equal(weft_despawn(w, e), WEFT_ERR_STALE_ENTITY);
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, NULL);
    // a reserved id is not alive until flushed: despawn refuses it, and the
    // flush still makes it live
    weft_entity r = weft_entity_reserve(w);
    assert_int_not_equal(r, 0);
    weft_clear_error(w);
    assert_int_equal(weft_despawn(w, r), WEFT_ERR_STALE_ENTITY);
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, NULL);
    weft_commands *cmds = weft_commands_create(w);
    assert_int_equal(weft_cmd_despawn(cmds, r), WEFT_OK); // checked at apply
    assert_int_equal(weft_entity_flush(w), WEFT_OK);
    assert_true(weft_is_alive(w, r));
    assert_int_equal(weft_commands_apply(w, cmds), WEFT_OK);
    assert_false(weft_is_alive(w, r));
    weft_commands_destroy(cmds);
    // reserved, then despawned through a command before the flush
    weft_entity r2 = weft_entity_reserve(w);
    cmds = weft_commands_create(w);
    assert_int_equal(weft_cmd_despawn(cmds, r2), WEFT_OK);
    weft_clear_error(w);
    weft_status st = weft_commands_apply(w, cmds); // flushes first or refuses
    assert_true(st == WEFT_OK || st == WEFT_ERR_STALE_ENTITY);
    if (st != WEFT_OK) {
        assert_true(weft_last_error(w)[0] != '\0');
    }
    weft_commands_destroy(cmds);
    expect_clean(w);
}

// ---- schedules ----

static void sys_noop(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
}

static void fifty_system_cycle(void **state)
{
    tw_fixture *f = *state;
    weft_schedule *s = weft_schedule_create(f->w, "Cycle");
    weft_node nodes[50];
    char name[16];
    for (int i = 0; i < 50; i++) {
        snprintf(name, sizeof name, "sys%02d", i);
        weft_system_desc sd = {0};
        sd.name = name;
        sd.fn = sys_noop;
        nodes[i] = weft_schedule_add_system(s, &sd);
        assert_int_not_equal(nodes[i], 0);
    }
    for (int i = 0; i < 50; i++) {
        assert_int_equal(weft_schedule_add_order(s, nodes[i], nodes[(i + 1) % 50], 0), WEFT_OK);
    }
    weft_clear_error(f->w);
    assert_int_equal(weft_schedule_build(s), WEFT_ERR_SCHEDULE_CYCLE);
    for (int i = 0; i < 50; i++) {
        snprintf(name, sizeof name, "sys%02d", i);
        assert_non_null(strstr(weft_last_error(f->w), name));
    }
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_ERR_SCHEDULE_CYCLE);
    expect_clean(f->w);
}

typedef struct touch_env {
    weft_world *w;
    weft_component undeclared;
    weft_entity e;
    weft_schedule *other;
    weft_status got;
    bool null_ptr;
} touch_env;

static void sys_touch_undeclared(weft_system_ctx *ctx, void *user)
{
    touch_env *t = user;
    t->null_ptr = weft_system_resource(ctx, t->undeclared, sizeof(int)) == NULL;
    t->got = weft_last_status(t->w);
}

static void system_touching_undeclared(void **state)
{
    tw_fixture *f = *state;
    touch_env t = {f->w, comp(f->w, "Secret", 4, 0), 0, NULL, WEFT_OK, false};
    int v = 3;
    assert_int_equal(weft_resource_insert(f->w, t.undeclared, &v, sizeof v), WEFT_OK);
    weft_schedule *s = weft_schedule_create(f->w, "Touch");
    weft_system_desc sd = {0};
    sd.name = "sneaky";
    sd.fn = sys_touch_undeclared;
    sd.user = &t;
    assert_int_not_equal(weft_schedule_add_system(s, &sd), 0);
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_ERR_ACCESS_VIOLATION);
    assert_non_null(strstr(weft_last_error(f->w), "sneaky"));
    assert_non_null(strstr(weft_last_error(f->w), "Secret"));
    assert_true(t.null_ptr);
    assert_int_equal(t.got, WEFT_ERR_ACCESS_VIOLATION);
    expect_clean(f->w);
}

static void sys_run_other(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    touch_env *t = user;
    t->got = weft_schedule_run(t->other, 0.0);
}

static void sys_spawn_directly(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    touch_env *t = user;
    t->e = weft_spawn(t->w);
    t->got = weft_last_status(t->w);
}

static void sys_write_directly(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    touch_env *t = user;
    t->null_ptr = weft_get_mut(t->w, t->e, t->undeclared, sizeof(int)) == NULL &&
                  weft_resource_get_mut(t->w, t->undeclared, sizeof(int)) == NULL;
    t->got = weft_last_status(t->w);
}

// A parallel system that writes through a captured world pointer (a
// component and a resource it never declared) races the systems that
// read them: refused; an exclusive system may.
static void system_writing_through_the_world(void **state)
{
    tw_fixture *f = *state;
    weft_component c = comp(f->w, "Undeclared", 4, 0);
    int v = 5;
    weft_entity e = weft_spawn_with(f->w, (weft_value[]){{c, 4, &v}}, 1);
    assert_int_equal(weft_resource_insert(f->w, c, &v, sizeof v), WEFT_OK);
    touch_env t = {f->w, c, e, NULL, WEFT_OK, false};
    weft_schedule *s = weft_schedule_create(f->w, "Writer");
    weft_system_desc sd = {0};
    sd.name = "writer";
    sd.fn = sys_write_directly;
    sd.user = &t;
    assert_int_not_equal(weft_schedule_add_system(s, &sd), 0);
    weft_ticks before;
    assert_int_equal(weft_get_ticks(f->w, e, c, &before), WEFT_OK);
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_ERR_WRONG_PHASE);
    assert_true(t.null_ptr);
    assert_int_equal(t.got, WEFT_ERR_WRONG_PHASE);
    assert_non_null(strstr(weft_last_error(f->w), "writer"));
    weft_ticks after;
    assert_int_equal(weft_get_ticks(f->w, e, c, &after), WEFT_OK);
    assert_int_equal(after.changed, before.changed);
    weft_schedule *x = weft_schedule_create(f->w, "ExclusiveWriter");
    sd.name = "exclusive_writer";
    sd.flags = WEFT_SYSTEM_EXCLUSIVE;
    assert_int_not_equal(weft_schedule_add_system(x, &sd), 0);
    assert_int_equal(weft_schedule_run(x, 0.0), WEFT_OK);
    assert_false(t.null_ptr);
    expect_clean(f->w);
}

static void schedule_run_from_inside_a_system(void **state)
{
    tw_fixture *f = *state;
    for (int threads = 1; threads <= 2 && threads <= weft_max_threads(); threads++) {
        assert_int_equal(weft_world_set_threads(f->w, threads), WEFT_OK);
        touch_env t = {f->w, 0, 0, NULL, WEFT_OK, false};
        char name[32];
        snprintf(name, sizeof name, "Other%d", threads);
        t.other = weft_schedule_create(f->w, name);
        weft_system_desc sd = {0};
        sd.name = "inner";
        sd.fn = sys_noop;
        assert_int_not_equal(weft_schedule_add_system(t.other, &sd), 0);
        snprintf(name, sizeof name, "Outer%d", threads);
        weft_schedule *s = weft_schedule_create(f->w, name);
        sd.name = "runner";
        sd.fn = sys_run_other;
        sd.user = &t;
        assert_int_not_equal(weft_schedule_add_system(s, &sd), 0);
        // a parallel system may not run a schedule (or touch the world)
        weft_status st = weft_schedule_run(s, 0.0);
        assert_int_equal(t.got, WEFT_ERR_WRONG_PHASE);
        assert_int_equal(st, WEFT_ERR_WRONG_PHASE);
        assert_non_null(strstr(weft_last_error(f->w), "runner"));
        // nor make structural calls through the world
        snprintf(name, sizeof name, "Spawner%d", threads);
        weft_schedule *s2 = weft_schedule_create(f->w, name);
        sd.name = "spawner";
        sd.fn = sys_spawn_directly;
        assert_int_not_equal(weft_schedule_add_system(s2, &sd), 0);
        weft_world_stats before;
        weft_world_get_stats(f->w, &before);
        st = weft_schedule_run(s2, 0.0);
        assert_int_equal(t.e, 0);
        assert_int_equal(t.got, WEFT_ERR_WRONG_PHASE);
        assert_int_equal(st, WEFT_ERR_WRONG_PHASE);
        weft_world_stats after;
        weft_world_get_stats(f->w, &after);
        assert_int_equal(after.live_entities, before.live_entities);
        expect_clean(f->w);
    }
    assert_int_equal(weft_world_set_threads(f->w, 1), WEFT_OK);
}

// ---- destroying a query from inside a callback ----

typedef struct qd_env {
    weft_query *q;
    weft_status inside_loop;
    weft_status outside_loop;
} qd_env;

static void observer_destroys_query(weft_world *w, weft_trigger *t, void *user)
{
    (void)t;
    qd_env *env = user;
    if (!env->q) {
        return;
    }
    weft_iter it;
    assert_int_equal(weft_query_iter(w, env->q, &it), WEFT_OK);
    env->inside_loop = weft_query_destroy(w, env->q); // it is being iterated
    weft_iter_fini(&it);
    env->outside_loop = weft_query_destroy(w, env->q);
    env->q = NULL;
}

static void query_destroy_from_callback(void **state)
{
    tw_fixture *f = *state;
    weft_component c = comp(f->w, "C", 4, 0);
    qd_env env = {query1(f->w, c), WEFT_OK, WEFT_ERR_INTERNAL};
    weft_observer_desc od = {0};
    od.event = WEFT_EVENT_ADD;
    od.component = c;
    od.fn = observer_destroys_query;
    od.user = &env;
    assert_non_null(weft_observer_create(f->w, &od));
    int v = 1;
    assert_int_not_equal(weft_spawn_with(f->w, (weft_value[]){{c, 4, &v}}, 1), 0);
    assert_int_equal(env.inside_loop, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(env.outside_loop, WEFT_OK);
    assert_null(env.q);
    expect_clean(f->w);
}

// ---- ticks ----

// Four full turns of the 32-bit change tick, in steps the clamp keeps up
// with: Changed and Added stay exact on every turn.
static void tick_wraparound(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component c = comp(w, "C", 4, 0);
    int v = 1;
    weft_entity a = weft_spawn_with(w, (weft_value[]){{c, 4, &v}}, 1);
    weft_entity b = weft_spawn_with(w, (weft_value[]){{c, 4, &v}}, 1);
    weft_query_desc qd = {0};
    qd.terms[0].id = c;
    qd.terms[0].filter = WEFT_FILTER_CHANGED;
    qd.term_count = 1;
    weft_query *q = weft_query_create(w, &qd);
    assert_int_equal(weft_query_count(w, q), 2); // first run: all new
    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
    }
    const uint64_t step = WEFT_CHECK_TICK_THRESHOLD / 2;
    uint64_t total = 0;
    int turns = 0;
    while (total < 4ull * 0x100000000ull) {
        uint32_t now = weft_world_change_tick(w);
        weft_world_set_change_tick(w, (uint32_t)(now + step));
        total += step;
        weft_world_clamp_ticks(w, false);
        bool write_a = (total / step) % 3 == 0;
        if (write_a) {
            int *p = weft_get_mut(w, a, c, sizeof(int));
            assert_non_null(p);
            (*p)++;
        }
        weft_entity seen = 0;
        int64_t rows = 0;
        assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
        while (weft_iter_next(&it)) {
            rows += weft_iter_count(&it);
            seen = weft_iter_entities(&it)[0];
        }
        assert_int_equal(rows, write_a ? 1 : 0);
        if (write_a) {
            assert_true(seen == a);
        }
        if (now > weft_world_change_tick(w)) {
            turns++;
        }
    }
    assert_true(turns >= 4);
    (void)b;
    assert_true(weft_world_clamp_ticks(w, true));
    expect_clean(w);
    assert_int_equal(weft_query_destroy(w, q), WEFT_OK);
}

int main(void)
{
    const char *filter = getenv("WEFT_TEST_FILTER");
    if (filter && filter[0]) {
        cmocka_set_test_filter(filter);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(cmd_custom_payload_size_near_size_max, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(relationship_register_respects_component_limit,
                                        tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(world_destroy_from_hook, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(world_destroy_from_observer, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(world_destroy_from_custom_command, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(world_destroy_from_message_drop, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(world_destroy_from_system, tw_setup, tw_teardown),
        cmocka_unit_test(world_destroy_bad_handles),
        cmocka_unit_test_setup_teardown(app_absurd_fixed_steps, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(iter_copy_fini_twice, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(iter_zeroed_is_harmless, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(changed_filter_and_no_change_ticks, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(relationship_target_list_is_not_removable, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(component_sizes_and_alignments, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(hundred_thousand_archetypes, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(stale_and_forged_handles, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(double_despawn_and_reserved_ids, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(fifty_system_cycle, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(system_touching_undeclared, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(schedule_run_from_inside_a_system, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(system_writing_through_the_world, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(query_destroy_from_callback, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(tick_wraparound, tw_setup, tw_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

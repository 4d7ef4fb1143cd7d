// tests/app/test_stepping.c - stepping a schedule system by system: steps
// visit the steppable systems in schedule order and wrap to the next
// frame, continue stops before breakpoints, NEVER_RUN systems are skipped,
// ALWAYS_RUN and WEFT_SYSTEM_NOT_STEPPABLE systems run on every run,
// skipped systems keep their last-run tick (Changed still sees what they
// missed), a rebuild restarts the cursor, and misuse (stepping off, a
// running schedule, a node that is no system) is refused.
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

typedef struct trail {
    char text[512];
    size_t len;
} trail;

static void trail_reset(trail *t)
{
    t->text[0] = '\0';
    t->len = 0;
}

typedef struct tag {
    trail *t;
    const char *name;
} tag;

static void sys_tag(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    tag *g = user;
    int n = snprintf(g->t->text + g->t->len, sizeof g->t->text - g->t->len, "%s%s",
                     g->t->len ? " " : "", g->name);
    assert_true(n > 0);
    g->t->len += (size_t)n;
}

#define NSYS 5

typedef struct rig {
    weft_app *app;
    weft_schedule *s;
    trail t;
    tag tags[NSYS + 1];
    weft_node nodes[NSYS + 1]; // a..e, then infra
} rig;

// Update holds a -> b -> c -> d -> e (a chain) and "infra", not steppable.
static void rig_init(rig *r, tw_fixture *f)
{
    memset(r, 0, sizeof *r);
    weft_app_desc d;
    memset(&d, 0, sizeof d);
    d.world = f->w;
    r->app = weft_app_create(&d);
    assert_non_null(r->app);
    r->s = weft_app_schedule(r->app, WEFT_APP_UPDATE);
    static const char *const names[NSYS + 1] = {"a", "b", "c", "d", "e", "infra"};
    for (int i = 0; i <= NSYS; i++) {
        r->tags[i].t = &r->t;
        r->tags[i].name = names[i];
        weft_system_desc sd;
        memset(&sd, 0, sizeof sd);
        sd.name = names[i];
        sd.fn = sys_tag;
        sd.user = &r->tags[i];
        sd.flags = i == NSYS ? WEFT_SYSTEM_NOT_STEPPABLE : 0;
        r->nodes[i] = weft_schedule_add_system(r->s, &sd);
        assert_int_not_equal(r->nodes[i], 0);
    }
    assert_int_equal(weft_schedule_add_chain(r->s, r->nodes, NSYS, 0), WEFT_OK);
    // infra first, so every trail starts with it
    assert_int_equal(weft_schedule_add_order(r->s, r->nodes[NSYS], r->nodes[0], 0), WEFT_OK);
    assert_int_equal(weft_schedule_build(r->s), WEFT_OK);
}

// One update; returns the trail of Update's systems.
static const char *rig_update(rig *r)
{
    trail_reset(&r->t);
    assert_int_equal(weft_app_update(r->app, 0.01), WEFT_OK);
    return r->t.text;
}

static void stepping_visits_systems_in_schedule_order(void **state)
{
    tw_fixture *f = *state;
    rig r;
    rig_init(&r, f);
    assert_string_equal(rig_update(&r), "infra a b c d e"); // stepping off
    assert_false(weft_schedule_is_stepping(r.s));
    assert_int_equal(weft_schedule_step_cursor(r.s), 0);
    assert_int_equal(weft_schedule_set_stepping(r.s, true), WEFT_OK);
    assert_true(weft_schedule_is_stepping(r.s));
    assert_int_equal(weft_schedule_step_cursor(r.s), r.nodes[0]);
    // without a request only the non-steppable system runs
    assert_string_equal(rig_update(&r), "infra");
    assert_string_equal(rig_update(&r), "infra");
    // each step runs the next system in schedule order, then wraps
    const char *want[] = {"infra a", "infra b", "infra c", "infra d", "infra e",
                          "infra a", "infra b"};
    int32_t last_pos = -1;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        weft_node next = weft_schedule_step_cursor(r.s);
        assert_int_equal(next, r.nodes[i % NSYS]);
        int32_t pos = weft_schedule_position(r.s, next);
        assert_true(i % NSYS == 0 || pos > last_pos); // ascending within a frame
        last_pos = pos;
        assert_int_equal(weft_schedule_step(r.s), WEFT_OK);
        assert_string_equal(rig_update(&r), want[i]);
        assert_string_equal(rig_update(&r), "infra"); // a step is used once
    }
    // skipped runs are counted as skipped
    weft_system_stats st;
    assert_int_equal(weft_schedule_system_stats(r.s, r.nodes[2], &st), WEFT_OK);
    assert_int_equal(st.runs, 2);     // stepping off, then one step
    assert_int_equal(st.skipped, 15); // every other run while stepping (16)
    // off again: everything runs
    assert_int_equal(weft_schedule_set_stepping(r.s, false), WEFT_OK);
    assert_string_equal(rig_update(&r), "infra a b c d e");
    assert_int_equal(weft_app_destroy(r.app), WEFT_OK);
}

static void stepping_continue_breakpoints_and_skips(void **state)
{
    tw_fixture *f = *state;
    rig r;
    rig_init(&r, f);
    assert_int_equal(weft_schedule_set_stepping(r.s, true), WEFT_OK);
    assert_int_equal(weft_schedule_set_step_behavior(r.s, r.nodes[3], WEFT_STEP_BREAK), WEFT_OK);
    // continue stops before the breakpoint; from it, it runs to the end
    assert_int_equal(weft_schedule_continue(r.s), WEFT_OK);
    assert_string_equal(rig_update(&r), "infra a b c");
    assert_int_equal(weft_schedule_step_cursor(r.s), r.nodes[3]);
    assert_int_equal(weft_schedule_continue(r.s), WEFT_OK);
    assert_string_equal(rig_update(&r), "infra d e");
    assert_int_equal(weft_schedule_step_cursor(r.s), r.nodes[0]);
    // a step, then continue from the middle
    assert_int_equal(weft_schedule_step(r.s), WEFT_OK);
    assert_string_equal(rig_update(&r), "infra a");
    assert_int_equal(weft_schedule_continue(r.s), WEFT_OK);
    assert_string_equal(rig_update(&r), "infra b c");
    // cleared: continue runs the rest of the frame
    assert_int_equal(weft_schedule_set_step_behavior(r.s, r.nodes[3], WEFT_STEP_DEFAULT),
                     WEFT_OK);
    assert_int_equal(weft_schedule_continue(r.s), WEFT_OK);
    assert_string_equal(rig_update(&r), "infra d e");
    // NEVER_RUN: stepped over and never run; ALWAYS_RUN: every run
    assert_int_equal(weft_schedule_set_step_behavior(r.s, r.nodes[2], WEFT_STEP_NEVER_RUN),
                     WEFT_OK);
    assert_int_equal(weft_schedule_set_step_behavior(r.s, r.nodes[4], WEFT_STEP_ALWAYS_RUN),
                     WEFT_OK);
    assert_string_equal(rig_update(&r), "infra e");
    const char *steps[] = {"infra a e", "infra b e", "infra d e", "infra a e"};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        assert_int_equal(weft_schedule_step(r.s), WEFT_OK);
        assert_string_equal(rig_update(&r), steps[i]);
    }
    assert_int_equal(weft_schedule_continue(r.s), WEFT_OK);
    assert_string_equal(rig_update(&r), "infra b d e");
    // a rebuild (a new system) puts the cursor back at the start
    assert_int_equal(weft_schedule_step(r.s), WEFT_OK);
    assert_string_equal(rig_update(&r), "infra a e");
    tag late = {&r.t, "late"};
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "late";
    sd.fn = sys_tag;
    sd.user = &late;
    weft_node ln = weft_schedule_add_system(r.s, &sd);
    assert_int_not_equal(ln, 0);
    assert_int_equal(weft_schedule_add_order(r.s, r.nodes[4], ln, 0), WEFT_OK);
    assert_int_equal(weft_schedule_step_cursor(r.s), 0); // not built
    assert_int_equal(weft_schedule_step(r.s), WEFT_OK);
    assert_string_equal(rig_update(&r), "infra a e");
    assert_int_equal(weft_schedule_continue(r.s), WEFT_OK);
    assert_string_equal(rig_update(&r), "infra b d e late");
    assert_int_equal(weft_app_destroy(r.app), WEFT_OK);
}

// A system skipped by stepping keeps its last-run tick: when it finally
// runs, Changed shows it every change it missed.
typedef struct watcher {
    weft_component c;
    int64_t seen;
} watcher;

static void sys_bump(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    assert_int_equal(weft_system_iter(ctx, 0, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        int32_t *v = weft_iter_field_mut(&it, 0, sizeof(int32_t));
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            v[i]++;
        }
    }
}

static void sys_watch(weft_system_ctx *ctx, void *user)
{
    watcher *w = user;
    weft_iter it;
    assert_int_equal(weft_system_iter(ctx, 0, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        w->seen += weft_iter_count(&it);
    }
}

static void stepping_skipped_systems_keep_their_ticks(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component c = tw_comp(w, "Counter", sizeof(int32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    for (int i = 0; i < 3; i++) {
        int32_t v = 0;
        weft_value val = {c, sizeof v, &v};
        assert_int_not_equal(weft_spawn_with(w, &val, 1), 0);
    }
    weft_schedule *s = weft_schedule_create(w, "steps");
    assert_non_null(s);
    weft_query_desc qw;
    memset(&qw, 0, sizeof qw);
    qw.terms[0].id = c;
    qw.terms[0].access = WEFT_ACCESS_WRITE;
    qw.term_count = 1;
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "bump";
    sd.fn = sys_bump;
    sd.queries = &qw;
    sd.query_count = 1;
    weft_node bump = weft_schedule_add_system(s, &sd);
    weft_query_desc qr = qw;
    qr.terms[0].access = WEFT_ACCESS_READ;
    qr.terms[0].filter = WEFT_FILTER_CHANGED;
    watcher wt = {c, 0};
    memset(&sd, 0, sizeof sd);
    sd.name = "watch";
    sd.fn = sys_watch;
    sd.user = &wt;
    sd.queries = &qr;
    sd.query_count = 1;
    weft_node watch = weft_schedule_add_system(s, &sd);
    assert_int_not_equal(watch, 0);
    assert_int_equal(weft_schedule_add_order(s, bump, watch, 0), WEFT_OK);
    // one ordinary run: watch sees the spawns and bump's writes
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_OK);
    assert_int_equal(wt.seen, 3);
    wt.seen = 0;
    assert_int_equal(weft_schedule_set_stepping(s, true), WEFT_OK);
    assert_int_equal(weft_schedule_set_step_behavior(s, bump, WEFT_STEP_ALWAYS_RUN), WEFT_OK);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(weft_schedule_run(s, 0.0), WEFT_OK); // bump runs, watch skipped
    }
    assert_int_equal(wt.seen, 0);
    // now only watch runs: it sees the writes made while it was skipped
    // (a skip that moved its last run would leave it nothing to see)
    assert_int_equal(weft_schedule_set_step_behavior(s, bump, WEFT_STEP_NEVER_RUN), WEFT_OK);
    assert_int_equal(weft_schedule_step(s), WEFT_OK);
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_OK);
    assert_int_equal(wt.seen, 3);
    wt.seen = 0;
    assert_int_equal(weft_schedule_step(s), WEFT_OK);
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_OK);
    assert_int_equal(wt.seen, 0); // nothing changed since
    assert_int_equal(weft_schedule_destroy(s), WEFT_OK);
}

// Calls on a running schedule and other misuse.
typedef struct meddler {
    weft_schedule *s;
    weft_node node;
    weft_status st[4];
} meddler;

static void sys_meddle(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    meddler *m = user;
    m->st[0] = weft_schedule_step(m->s);
    m->st[1] = weft_schedule_continue(m->s);
    m->st[2] = weft_schedule_set_stepping(m->s, false);
    m->st[3] = weft_schedule_set_step_behavior(m->s, m->node, WEFT_STEP_BREAK);
}

static void stepping_misuse(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_schedule *s = weft_schedule_create(w, "meddle");
    assert_non_null(s);
    meddler m;
    memset(&m, 0, sizeof m);
    m.s = s;
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "meddle";
    sd.fn = sys_meddle;
    sd.user = &m;
    sd.flags = WEFT_SYSTEM_EXCLUSIVE | WEFT_SYSTEM_NOT_STEPPABLE;
    m.node = weft_schedule_add_system(s, &sd);
    assert_int_not_equal(m.node, 0);
    weft_node set = weft_schedule_ensure_set(s, "group");
    // stepping off: step and continue are refused
    weft_clear_error(w);
    assert_int_equal(weft_schedule_step(s), WEFT_ERR_WRONG_PHASE);
    tw_expect_error(f, WEFT_ERR_WRONG_PHASE, "stepping is off");
    assert_int_equal(weft_schedule_continue(s), WEFT_ERR_WRONG_PHASE);
    // bad nodes and behaviors
    assert_int_equal(weft_schedule_set_step_behavior(s, set, WEFT_STEP_BREAK),
                     WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "not a system");
    assert_int_equal(weft_schedule_set_step_behavior(s, 77, WEFT_STEP_BREAK),
                     WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_schedule_set_step_behavior(s, m.node, (weft_step_behavior)9),
                     WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "unknown");
    assert_int_equal(weft_schedule_set_step_behavior(NULL, m.node, WEFT_STEP_BREAK),
                     WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_schedule_set_stepping(NULL, true), WEFT_ERR_INVALID_HANDLE);
    assert_false(weft_schedule_is_stepping(NULL));
    // from inside its own run: WRONG_PHASE, stepping state unchanged (the
    // refusals fail the system, so the run reports WRONG_PHASE too)
    assert_int_equal(weft_schedule_set_stepping(s, true), WEFT_OK);
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_ERR_WRONG_PHASE);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(m.st[i], WEFT_ERR_WRONG_PHASE);
    }
    assert_true(weft_schedule_is_stepping(s));
    assert_int_equal(weft_schedule_destroy(s), WEFT_OK);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tw_setup, tw_teardown)
    const struct CMUnitTest tests[] = {
        T(stepping_visits_systems_in_schedule_order),
        T(stepping_continue_breakpoints_and_skips),
        T(stepping_skipped_systems_keep_their_ticks),
        T(stepping_misuse),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

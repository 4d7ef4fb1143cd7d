// tests/api/test_api_hostile.c - regressions for inputs a hostile or careless
// user sends: sizes that wrap, limits skipped, the world destroyed from
// inside its own callbacks, absurd frame steps, iterators copied or left
// zeroed, change filters next to components without ticks, and hand edits
// of a relationship's target list. Every case must end with a status and a
// message, no crash, and weft_world_check clean.
// SPDX-License-Identifier: MIT
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
    assert_int_not_equal(weft_system_add(s, &sd), 0);
    probe_reset(w);
    weft_status st = weft_schedule_run(w, s, 0.0);
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

static weft_schedule *fixed_schedule(weft_world *w)
{
    weft_schedule *s = weft_schedule_create(w, "Fixed");
    assert_non_null(s);
    weft_system_desc sd = {0};
    sd.name = "count";
    sd.fn = count_fixed;
    assert_int_not_equal(weft_system_add(s, &sd), 0);
    return s;
}

// A step of 1e-300 made acc / step overflow int32_t (undefined conversion);
// 1e-6 against a 10 s delta ran ten million fixed steps in one frame.
static void frame_absurd_fixed_steps(void **state)
{
    tw_fixture *f = *state;
    weft_schedule *fixed = fixed_schedule(f->w);
    weft_frame_desc fd = {0};
    fd.fixed = fixed;
    const double bad[] = {1e-300, 1e-12, 5e-7};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fd.fixed_step = bad[i];
        weft_clear_error(f->w);
        assert_int_equal(weft_frame_configure(f->w, &fd), WEFT_ERR_INVALID_ARG);
        tw_expect_error(f, WEFT_ERR_INVALID_ARG, "minimum");
    }
    // the smallest step allowed, with a huge clamp: capped per frame
    fd.fixed_step = WEFT_FRAME_MIN_STEP;
    fd.max_delta = 10.0;
    assert_int_equal(weft_frame_configure(f->w, &fd), WEFT_OK);
    g_fixed_runs = 0;
    assert_int_equal(weft_frame_run(f->w, 10.0), WEFT_OK);
    assert_int_equal(weft_frame_fixed_steps(f->w), WEFT_FRAME_MAX_FIXED_STEPS);
    assert_int_equal(g_fixed_runs, WEFT_FRAME_MAX_FIXED_STEPS);
    assert_true(weft_frame_accumulator(f->w) < WEFT_FRAME_MIN_STEP);
    // an accumulator far beyond int32_t steps (finite clamp near DBL_MAX)
    fd.fixed_step = 2e-6;
    fd.max_delta = 1e300;
    assert_int_equal(weft_frame_configure(f->w, &fd), WEFT_OK);
    g_fixed_runs = 0;
    assert_int_equal(weft_frame_run(f->w, 1e300), WEFT_OK);
    assert_int_equal(weft_frame_fixed_steps(f->w), WEFT_FRAME_MAX_FIXED_STEPS);
    assert_int_equal(g_fixed_runs, WEFT_FRAME_MAX_FIXED_STEPS);
    // ordinary frames are unchanged: 0.048 s at 1/64... 3 steps of 0.016
    fd.fixed_step = 0.016;
    fd.max_delta = 0.0;
    assert_int_equal(weft_frame_configure(f->w, &fd), WEFT_OK);
    assert_int_equal(weft_frame_run(f->w, 0.048), WEFT_OK);
    assert_int_equal(weft_frame_fixed_steps(f->w), 3);
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
        cmocka_unit_test_setup_teardown(frame_absurd_fixed_steps, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(iter_copy_fini_twice, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(iter_zeroed_is_harmless, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(changed_filter_and_no_change_ticks, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(relationship_target_list_is_not_removable, tw_setup,
                                        tw_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

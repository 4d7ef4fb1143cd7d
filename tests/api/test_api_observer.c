// tests/api/test_api_observer.c - black-box tests of lifecycle hooks and
// observers: the order of hooks and observers for every lifecycle event,
// hook kinds, observer registration and targeting, custom events and their
// propagation; deferral of structural calls made from hooks and observers,
// the cascade and nesting limits.
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

// ---- event log ----

typedef struct ev_rec {
    char who;          // 'h' hook, 'o' observer (tag in user), ...
    int tag;           // observer tag
    weft_event ev;
    weft_component c;
    weft_entity e;
    int32_t val;       // value read at the time (-1: absent)
} ev_rec;

typedef struct ev_log {
    ev_rec r[256];
    int n;
} ev_log;

static ev_log g_log;

static int32_t read_val(weft_world *w, weft_entity e, weft_component c)
{
    if (!weft_has(w, e, c)) {
        return -1;
    }
    const int32_t *p = weft_get(w, e, c, sizeof(int32_t));
    return p ? *p : -2;
}

static void log_push(char who, int tag, weft_event ev, weft_component c, weft_entity e,
                     int32_t val)
{
    assert_true(g_log.n < 256);
    ev_rec *r = &g_log.r[g_log.n++];
    r->who = who;
    r->tag = tag;
    r->ev = ev;
    r->c = c;
    r->e = e;
    r->val = val;
}

#define HOOK(name, EV)                                                                  \
    static void name(weft_world *w, weft_entity e, weft_component c, void *user)        \
    {                                                                                   \
        (void)user;                                                                     \
        log_push('h', 0, EV, c, e, read_val(w, e, c));                                  \
    }
HOOK(h_add, WEFT_EVENT_ADD)
HOOK(h_insert, WEFT_EVENT_INSERT)
HOOK(h_replace, WEFT_EVENT_REPLACE)
HOOK(h_remove, WEFT_EVENT_REMOVE)
HOOK(h_despawn, WEFT_EVENT_DESPAWN)

static weft_component hooked(weft_world *w, const char *name, weft_storage st)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = sizeof(int32_t);
    d.storage = st;
    d.lifecycle.on_add = h_add;
    d.lifecycle.on_insert = h_insert;
    d.lifecycle.on_replace = h_replace;
    d.lifecycle.on_remove = h_remove;
    d.lifecycle.on_despawn = h_despawn;
    weft_component c = weft_component_register(w, &d);
    assert_true(c != 0);
    return c;
}

static void expect(int i, char who, weft_event ev, weft_component c, weft_entity e,
                   int32_t val)
{
    if (i >= g_log.n) {
        fail_msg("log has %d records, expected record %d (ev %u c %u)", g_log.n, i, ev, c);
    }
    const ev_rec *r = &g_log.r[i];
    if (r->who != who || r->ev != ev || r->c != c || r->e != e || r->val != val) {
        fail_msg("record %d: got %c ev %u c %u e %llx val %d; expected %c ev %u c %u e %llx "
                 "val %d",
                 i, r->who, r->ev, r->c, (unsigned long long)r->e, r->val, who, ev, c,
                 (unsigned long long)e, val);
    }
}

#define ADD WEFT_EVENT_ADD
#define INS WEFT_EVENT_INSERT
#define REP WEFT_EVENT_REPLACE
#define REM WEFT_EVENT_REMOVE
#define DES WEFT_EVENT_DESPAWN

// ---- hook and observer order ----

static void hook_order_vectors_storage(weft_world *w, weft_storage st)
{
    memset(&g_log, 0, sizeof g_log);
    weft_component a = hooked(w, st == WEFT_STORAGE_SPARSE ? "As" : "A", st);
    weft_component b = hooked(w, st == WEFT_STORAGE_SPARSE ? "Bs" : "B", st);
    int32_t va = 1, vb = 2;

    // spawn_with in caller order B, A: add B, add A, insert B, insert A
    weft_value vals[] = {{b, sizeof vb, &vb}, {a, sizeof va, &va}};
    weft_entity e = weft_spawn_with(w, vals, 2);
    assert_true(e != 0);
    assert_int_equal(g_log.n, 4);
    expect(0, 'h', ADD, b, e, 2);
    expect(1, 'h', ADD, a, e, 1);
    expect(2, 'h', INS, b, e, 2);
    expect(3, 'h', INS, a, e, 1);

    // insert new: add then insert
    weft_entity g = weft_spawn(w);
    g_log.n = 0;
    int32_t v5 = 5, v6 = 6;
    assert_int_equal(weft_insert(w, g, a, &v5, sizeof v5), WEFT_OK);
    assert_int_equal(g_log.n, 2);
    expect(0, 'h', ADD, a, g, 5);
    expect(1, 'h', INS, a, g, 5);

    // insert existing: replace (old value), then insert (new value); no add
    g_log.n = 0;
    assert_int_equal(weft_insert(w, g, a, &v6, sizeof v6), WEFT_OK);
    assert_int_equal(g_log.n, 2);
    expect(0, 'h', REP, a, g, 5);
    expect(1, 'h', INS, a, g, 6);

    // remove: replace then remove, value visible in both
    g_log.n = 0;
    assert_int_equal(weft_remove(w, g, a), WEFT_OK);
    assert_int_equal(g_log.n, 2);
    expect(0, 'h', REP, a, g, 6);
    expect(1, 'h', REM, a, g, 6);
    // removing an absent component fires nothing
    g_log.n = 0;
    assert_int_equal(weft_remove(w, g, a), WEFT_OK);
    assert_int_equal(g_log.n, 0);

    // insert_many mixing existing A and new B (caller order B, A):
    // replace A (old) before any write, add B, insert B, insert A
    assert_int_equal(weft_insert(w, g, a, &v5, sizeof v5), WEFT_OK);
    g_log.n = 0;
    int32_t va2 = 50, vb2 = 20;
    weft_value mix[] = {{b, sizeof vb2, &vb2}, {a, sizeof va2, &va2}};
    assert_int_equal(weft_insert_many(w, g, mix, 2), WEFT_OK);
    assert_int_equal(g_log.n, 4);
    expect(0, 'h', REP, a, g, 5);
    expect(1, 'h', ADD, b, g, 20);
    expect(2, 'h', INS, b, g, 20);
    expect(3, 'h', INS, a, g, 50);

    // despawn: despawn for all, then replace for all, then remove for all
    // (archetype id order: a < b), values readable
    g_log.n = 0;
    assert_int_equal(weft_despawn(w, e), WEFT_OK);
    assert_int_equal(g_log.n, 6);
    expect(0, 'h', DES, a, e, 1);
    expect(1, 'h', DES, b, e, 2);
    expect(2, 'h', REP, a, e, 1);
    expect(3, 'h', REP, b, e, 2);
    expect(4, 'h', REM, a, e, 1);
    expect(5, 'h', REM, b, e, 2);
    assert_false(weft_is_alive(w, e));
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void hook_order_table(void **state)
{
    tw_fixture *f = *state;
    hook_order_vectors_storage(f->w, WEFT_STORAGE_TABLE);
}

static void hook_order_sparse(void **state)
{
    tw_fixture *f = *state;
    hook_order_vectors_storage(f->w, WEFT_STORAGE_SPARSE);
}

// Mixed table + sparse on one entity, hooks fire for both.
static void hook_order_mixed_storage(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(&g_log, 0, sizeof g_log);
    weft_component a = hooked(w, "A", WEFT_STORAGE_TABLE);
    weft_component s = hooked(w, "S", WEFT_STORAGE_SPARSE);
    int32_t va = 1, vs = 3;
    weft_value vals[] = {{s, sizeof vs, &vs}, {a, sizeof va, &va}};
    weft_entity e = weft_spawn_with(w, vals, 2);
    assert_int_equal(g_log.n, 4);
    expect(0, 'h', ADD, s, e, 3);
    expect(1, 'h', ADD, a, e, 1);
    g_log.n = 0;
    assert_int_equal(weft_despawn(w, e), WEFT_OK);
    assert_int_equal(g_log.n, 6);
    expect(0, 'h', DES, a, e, 1);
    expect(1, 'h', DES, s, e, 3);
    expect(4, 'h', REM, a, e, 1);
    expect(5, 'h', REM, s, e, 3);
}

// ---- observers with hooks ----

static void obs_log(weft_world *w, weft_trigger *t, void *user)
{
    int tag = (int)(intptr_t)user;
    int32_t v = t->component ? read_val(w, t->entity, t->component) : -1;
    if (t->payload && t->payload_size == sizeof(int32_t)) {
        v = *(const int32_t *)t->payload;
    }
    log_push('o', tag, t->event, t->component, t->entity, v);
}

static weft_observer *observe(weft_world *w, weft_event ev, weft_component c,
                              weft_entity target, int tag)
{
    weft_observer_desc d;
    memset(&d, 0, sizeof d);
    d.event = ev;
    d.component = c;
    d.entity = target;
    d.fn = obs_log;
    d.user = (void *)(intptr_t)tag;
    weft_observer *o = weft_observer_create(w, &d);
    if (!o) {
        fail_msg("observer_create failed: %s", weft_last_error(w));
    }
    return o;
}

static void hooks_before_observers(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(&g_log, 0, sizeof g_log);
    weft_component a = hooked(w, "A", WEFT_STORAGE_TABLE);
    for (weft_event ev = ADD; ev <= DES; ev++) {
        observe(w, ev, a, 0, (int)ev);
    }
    weft_entity e = weft_spawn(w);
    int32_t v1 = 1, v2 = 2;
    assert_int_equal(weft_insert(w, e, a, &v1, sizeof v1), WEFT_OK);
    assert_int_equal(g_log.n, 4);
    expect(0, 'h', ADD, a, e, 1);
    expect(1, 'o', ADD, a, e, 1);
    expect(2, 'h', INS, a, e, 1);
    expect(3, 'o', INS, a, e, 1);
    g_log.n = 0;
    assert_int_equal(weft_insert(w, e, a, &v2, sizeof v2), WEFT_OK);
    assert_int_equal(g_log.n, 4);
    expect(0, 'h', REP, a, e, 1);
    expect(1, 'o', REP, a, e, 1); // observer also sees the old value
    expect(2, 'h', INS, a, e, 2);
    expect(3, 'o', INS, a, e, 2);
    g_log.n = 0;
    assert_int_equal(weft_despawn(w, e), WEFT_OK);
    assert_int_equal(g_log.n, 6);
    expect(0, 'h', DES, a, e, 2);
    expect(1, 'o', DES, a, e, 2);
    expect(2, 'h', REP, a, e, 2);
    expect(3, 'o', REP, a, e, 2);
    expect(4, 'h', REM, a, e, 2);
    expect(5, 'o', REM, a, e, 2); // a Remove observer still reads the value
}

// ---- structural calls from hooks ----

typedef struct defer_ctx {
    weft_component a, b;
    weft_entity spawned;
    weft_entity victim;
    bool spawned_alive_inside;
    bool victim_alive_inside;
    bool b_inside;
    weft_status st_spawn_ins;
    int runs;
} defer_ctx;

static defer_ctx g_dc;

static void dc_on_add(weft_world *w, weft_entity e, weft_component c, void *user)
{
    (void)c;
    (void)user;
    g_dc.runs++;
    int32_t v = 77;
    weft_value vals[] = {{g_dc.b, sizeof v, &v}};
    g_dc.spawned = weft_spawn_with(w, vals, 1);
    g_dc.spawned_alive_inside = weft_is_alive(w, g_dc.spawned);
    int32_t bv = 8;
    g_dc.st_spawn_ins = weft_insert(w, e, g_dc.b, &bv, sizeof bv);
    g_dc.b_inside = weft_has(w, e, g_dc.b);
    assert_int_equal(weft_despawn(w, g_dc.victim), WEFT_OK);
    g_dc.victim_alive_inside = weft_is_alive(w, g_dc.victim);
}

static void hook_structural_deferred(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(&g_dc, 0, sizeof g_dc);
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = "A";
    d.size = sizeof(int32_t);
    d.lifecycle.on_add = dc_on_add;
    g_dc.a = weft_component_register(w, &d);
    g_dc.b = tw_comp(w, "B", sizeof(int32_t), 0, WEFT_STORAGE_SPARSE, 0);
    g_dc.victim = weft_spawn(w);
    weft_entity e = weft_spawn(w);
    int32_t v = 1;
    assert_int_equal(weft_insert(w, e, g_dc.a, &v, sizeof v), WEFT_OK);
    assert_int_equal(g_dc.runs, 1);
    assert_true(g_dc.spawned != 0);
    assert_false(g_dc.spawned_alive_inside);
    assert_true(g_dc.victim_alive_inside);
    assert_int_equal(g_dc.st_spawn_ins, WEFT_OK);
    assert_false(g_dc.b_inside);
    // applied once the outer call returned
    assert_true(weft_is_alive(w, g_dc.spawned));
    assert_int_equal(*(const int32_t *)weft_get(w, g_dc.spawned, g_dc.b, 4), 77);
    assert_int_equal(*(const int32_t *)weft_get(w, e, g_dc.b, 4), 8);
    assert_false(weft_is_alive(w, g_dc.victim));
    assert_int_equal(weft_commands_count(weft_world_commands(w)), 0);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// Endless cascade: on_add of C spawns a new entity and inserts C on it.
typedef struct cascade_ctx {
    weft_component c;
    int runs;
    weft_status fail;
} cascade_ctx;

static cascade_ctx g_cc;

static void cascade_on_add(weft_world *w, weft_entity e, weft_component c, void *user)
{
    (void)e;
    (void)c;
    (void)user;
    g_cc.runs++;
    weft_entity x = weft_spawn(w);
    if (!x) {
        g_cc.fail = weft_last_status(w);
        return;
    }
    int32_t v = g_cc.runs;
    weft_status st = weft_insert(w, x, g_cc.c, &v, sizeof v);
    if (st != WEFT_OK) {
        g_cc.fail = st;
    }
    assert_true(g_cc.runs < 100000); // it must stop
}

static void hook_cascade_depth_limit_storage(tw_fixture *f, weft_storage st)
{
    weft_world *w = f->w;
    memset(&g_cc, 0, sizeof g_cc);
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = "C";
    d.size = sizeof(int32_t);
    d.storage = st;
    d.lifecycle.on_add = cascade_on_add;
    g_cc.c = weft_component_register(w, &d);
    assert_true(g_cc.c != 0);
    weft_entity e = weft_spawn(w);
    int32_t v = 0;
    weft_clear_error(w);
    (void)weft_insert(w, e, g_cc.c, &v, sizeof v);
    assert_int_equal(weft_last_status(w), WEFT_ERR_DEPTH_LIMIT);
    assert_int_equal(g_cc.fail, WEFT_ERR_DEPTH_LIMIT);
    assert_true(g_cc.runs >= WEFT_MAX_EVENT_DEPTH);
    assert_true(g_cc.runs <= 4 * WEFT_MAX_EVENT_DEPTH);
    assert_int_equal(weft_commands_count(weft_world_commands(w)), 0);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    // the world is usable afterwards, and a fresh cascade is limited again
    weft_entity g = weft_spawn(w);
    assert_true(weft_is_alive(w, g));
    g_cc.runs = 0;
    g_cc.fail = WEFT_OK;
    (void)weft_insert(w, g, g_cc.c, &v, sizeof v);
    assert_int_equal(g_cc.fail, WEFT_ERR_DEPTH_LIMIT);
    assert_true(g_cc.runs >= WEFT_MAX_EVENT_DEPTH);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void hook_cascade_depth_limit(void **state)
{
    hook_cascade_depth_limit_storage(*state, WEFT_STORAGE_TABLE);
}

static void hook_cascade_depth_limit_sparse(void **state)
{
    hook_cascade_depth_limit_storage(*state, WEFT_STORAGE_SPARSE);
}

// ---- observers ----

static void obs_global_targeted_registration_order(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(&g_log, 0, sizeof g_log);
    weft_component a = tw_comp(w, "A", sizeof(int32_t), 0, WEFT_STORAGE_TABLE, 0);
    weft_entity e1 = weft_spawn(w);
    weft_entity e2 = weft_spawn(w);
    observe(w, INS, a, 0, 1);
    observe(w, INS, a, e1, 2);
    observe(w, INS, a, 0, 3);
    observe(w, INS, a, e2, 4);
    int32_t v = 9;
    assert_int_equal(weft_insert(w, e1, a, &v, sizeof v), WEFT_OK);
    assert_int_equal(g_log.n, 3);
    assert_int_equal(g_log.r[0].tag, 1);
    assert_int_equal(g_log.r[1].tag, 2);
    assert_int_equal(g_log.r[2].tag, 3);
    expect(1, 'o', INS, a, e1, 9);
    g_log.n = 0;
    assert_int_equal(weft_insert(w, e2, a, &v, sizeof v), WEFT_OK);
    assert_int_equal(g_log.n, 3);
    assert_int_equal(g_log.r[0].tag, 1);
    assert_int_equal(g_log.r[1].tag, 3);
    assert_int_equal(g_log.r[2].tag, 4);
}

static void obs_registered_after_archetype_exists(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(&g_log, 0, sizeof g_log);
    weft_component a = tw_comp(w, "A", sizeof(int32_t), 0, WEFT_STORAGE_TABLE, 0);
    weft_component b = tw_comp(w, "B", sizeof(int32_t), 0, WEFT_STORAGE_TABLE, 0);
    weft_component s = tw_comp(w, "S", sizeof(int32_t), 0, WEFT_STORAGE_SPARSE, 0);
    int32_t v = 3;
    weft_value ab[] = {{a, 4, &v}, {b, 4, &v}, {s, 4, &v}};
    weft_entity e = weft_spawn_with(w, ab, 3); // archetype {A,B,S} exists now
    weft_entity e2 = weft_spawn_with(w, ab, 3);
    observe(w, REM, b, 0, 1);
    observe(w, ADD, a, 0, 2);
    observe(w, DES, s, 0, 3);
    assert_int_equal(weft_remove(w, e, b), WEFT_OK);
    assert_int_equal(g_log.n, 1);
    expect(0, 'o', REM, b, e, 3);
    weft_entity e3 = weft_spawn_with(w, ab, 3);
    assert_int_equal(g_log.n, 2);
    expect(1, 'o', ADD, a, e3, 3);
    assert_int_equal(weft_despawn(w, e2), WEFT_OK);
    assert_int_equal(g_log.n, 4); // despawn fires Remove B and Despawn S
    expect(2, 'o', DES, s, e2, 3);
    expect(3, 'o', REM, b, e2, 3);
}

static int g_unrelated_runs;

static void unrelated_fn(weft_world *w, weft_trigger *t, void *user)
{
    (void)w;
    (void)t;
    (void)user;
    g_unrelated_runs++;
}

static void obs_unrelated_never_fires(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    g_unrelated_runs = 0;
    weft_component a = tw_comp(w, "A", sizeof(int32_t), 0, WEFT_STORAGE_TABLE, 0);
    weft_component b = tw_comp(w, "B", sizeof(int32_t), 0, WEFT_STORAGE_TABLE, 0);
    weft_entity other = weft_spawn(w);
    for (weft_event ev = ADD; ev <= DES; ev++) {
        weft_observer_desc d;
        memset(&d, 0, sizeof d);
        d.event = ev;
        d.component = b;
        d.fn = unrelated_fn;
        assert_non_null(weft_observer_create(w, &d));
        d.component = a;
        d.entity = other; // targeted at another entity
        assert_non_null(weft_observer_create(w, &d));
    }
    int32_t v = 1;
    for (int i = 0; i < 50; i++) {
        weft_value va = {a, 4, &v};
        weft_entity e = weft_spawn_with(w, &va, 1);
        assert_int_equal(weft_insert(w, e, a, &v, 4), WEFT_OK);
        assert_int_equal(weft_remove(w, e, a), WEFT_OK);
        assert_int_equal(weft_insert(w, e, a, &v, 4), WEFT_OK);
        assert_int_equal(weft_despawn(w, e), WEFT_OK);
    }
    assert_int_equal(g_unrelated_runs, 0);
}

// Registered during a trigger: does not see it; sees the next one.
typedef struct reg_ctx {
    weft_event ev;
    weft_component c;
    int outer_runs;
    int inner_runs;
    bool registered;
} reg_ctx;

static reg_ctx g_rc;

static void inner_fn(weft_world *w, weft_trigger *t, void *user)
{
    (void)w;
    (void)t;
    (void)user;
    g_rc.inner_runs++;
}

static void registering_fn(weft_world *w, weft_trigger *t, void *user)
{
    (void)user;
    g_rc.outer_runs++;
    if (!g_rc.registered) {
        g_rc.registered = true;
        weft_observer_desc d;
        memset(&d, 0, sizeof d);
        d.event = t->event;
        d.component = t->component;
        d.fn = inner_fn;
        assert_non_null(weft_observer_create(w, &d));
    }
}

static void obs_registered_during_trigger(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(&g_rc, 0, sizeof g_rc);
    weft_event_desc ed;
    memset(&ed, 0, sizeof ed);
    ed.name = "ping";
    weft_event ev = weft_event_register(w, &ed);
    assert_true(ev != 0);
    weft_observer_desc d;
    memset(&d, 0, sizeof d);
    d.event = ev;
    d.fn = registering_fn;
    assert_non_null(weft_observer_create(w, &d));
    assert_int_equal(weft_trigger_event(w, ev, 0, NULL, 0, false), WEFT_OK);
    assert_int_equal(g_rc.outer_runs, 1);
    assert_int_equal(g_rc.inner_runs, 0);
    assert_int_equal(weft_trigger_event(w, ev, 0, NULL, 0, false), WEFT_OK);
    assert_int_equal(g_rc.outer_runs, 2);
    assert_int_equal(g_rc.inner_runs, 1);

    // lifecycle event, with many registrations forcing the list to grow
    memset(&g_rc, 0, sizeof g_rc);
    weft_component a = tw_comp(w, "A", sizeof(int32_t), 0, WEFT_STORAGE_TABLE, 0);
    for (int i = 0; i < 20; i++) {
        observe(w, ADD, a, 0, 100 + i);
    }
    d.event = ADD;
    d.component = a;
    assert_non_null(weft_observer_create(w, &d));
    memset(&g_log, 0, sizeof g_log);
    int32_t v = 1;
    weft_value va = {a, 4, &v};
    weft_entity e = weft_spawn_with(w, &va, 1);
    assert_true(e != 0);
    assert_int_equal(g_rc.outer_runs, 1);
    assert_int_equal(g_rc.inner_runs, 0);
    assert_int_equal(g_log.n, 20);
    (void)weft_spawn_with(w, &va, 1);
    assert_int_equal(g_rc.inner_runs, 1);
}

// Destroying observers during a trigger.
typedef struct kill_ctx {
    weft_observer *victim;
    weft_observer *self;
    int killer_runs;
    int victim_runs;
    int self_runs;
    int frees;
} kill_ctx;

static kill_ctx g_kc;

static void killer_fn(weft_world *w, weft_trigger *t, void *user)
{
    (void)t;
    (void)user;
    g_kc.killer_runs++;
    if (g_kc.victim) {
        assert_int_equal(weft_observer_destroy(w, g_kc.victim), WEFT_OK);
        g_kc.victim = NULL;
    }
}

static void victim_fn(weft_world *w, weft_trigger *t, void *user)
{
    (void)w;
    (void)t;
    (void)user;
    g_kc.victim_runs++;
}

static void self_fn(weft_world *w, weft_trigger *t, void *user)
{
    (void)t;
    (void)user;
    g_kc.self_runs++;
    if (g_kc.self) {
        weft_observer *me = g_kc.self;
        g_kc.self = NULL;
        assert_int_equal(weft_observer_destroy(w, me), WEFT_OK);
    }
}

static void count_free(void *user)
{
    (void)user;
    g_kc.frees++;
}

static void obs_destroy_during_trigger(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(&g_kc, 0, sizeof g_kc);
    weft_component a = tw_comp(w, "A", sizeof(int32_t), 0, WEFT_STORAGE_TABLE, 0);
    weft_observer_desc d;
    memset(&d, 0, sizeof d);
    d.event = INS;
    d.component = a;
    d.free_user = count_free;
    d.fn = self_fn;
    g_kc.self = weft_observer_create(w, &d);
    d.fn = killer_fn;
    assert_non_null(weft_observer_create(w, &d));
    d.fn = victim_fn;
    g_kc.victim = weft_observer_create(w, &d);
    assert_non_null(g_kc.self);
    assert_non_null(g_kc.victim);
    weft_entity e = weft_spawn(w);
    int32_t v = 1;
    assert_int_equal(weft_insert(w, e, a, &v, 4), WEFT_OK);
    assert_int_equal(g_kc.self_runs, 1);
    assert_int_equal(g_kc.killer_runs, 1);
    assert_int_equal(g_kc.victim_runs, 0); // destroyed before its turn
    assert_int_equal(g_kc.frees, 2);       // self + victim, once each
    assert_int_equal(weft_insert(w, e, a, &v, 4), WEFT_OK);
    assert_int_equal(g_kc.self_runs, 1);
    assert_int_equal(g_kc.killer_runs, 2);
    assert_int_equal(g_kc.victim_runs, 0);
    assert_int_equal(g_kc.frees, 2);
}

static void obs_targeted_destroyed_with_entity(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(&g_kc, 0, sizeof g_kc);
    weft_event_desc ed;
    memset(&ed, 0, sizeof ed);
    ed.name = "hit";
    weft_event ev = weft_event_register(w, &ed);
    weft_component a = tw_comp(w, "A", sizeof(int32_t), 0, WEFT_STORAGE_TABLE, 0);
    weft_entity e = weft_spawn(w);
    weft_entity keep = weft_spawn(w);
    weft_observer_desc d;
    memset(&d, 0, sizeof d);
    d.event = ev;
    d.entity = e;
    d.fn = victim_fn;
    d.free_user = count_free;
    assert_non_null(weft_observer_create(w, &d));
    d.event = REM;
    d.component = a;
    assert_non_null(weft_observer_create(w, &d));
    d.event = ev;
    d.component = 0;
    d.entity = keep;
    assert_non_null(weft_observer_create(w, &d));
    assert_int_equal(weft_trigger_event(w, ev, e, NULL, 0, false), WEFT_OK);
    assert_int_equal(g_kc.victim_runs, 1);
    assert_int_equal(weft_despawn(w, e), WEFT_OK);
    assert_int_equal(g_kc.frees, 2);
    // the index is reused by a new entity: the old observers must not fire
    weft_entity n = weft_spawn(w);
    assert_int_equal(weft_entity_index(n), weft_entity_index(e));
    int32_t v = 1;
    assert_int_equal(weft_insert(w, n, a, &v, 4), WEFT_OK);
    assert_int_equal(weft_remove(w, n, a), WEFT_OK);
    assert_int_equal(weft_trigger_event(w, ev, n, NULL, 0, false), WEFT_OK);
    assert_int_equal(g_kc.victim_runs, 1);
    // triggering the dead id: STALE_ENTITY, no observer
    assert_int_equal(weft_trigger_event(w, ev, e, NULL, 0, false), WEFT_ERR_STALE_ENTITY);
    assert_int_equal(g_kc.victim_runs, 1);
    // the observer on `keep` still works
    assert_int_equal(weft_trigger_event(w, ev, keep, NULL, 0, false), WEFT_OK);
    assert_int_equal(g_kc.victim_runs, 2);
    assert_int_equal(g_kc.frees, 2);
}

static void obs_free_user_at_world_destroy(void **state)
{
    (void)state;
    memset(&g_kc, 0, sizeof g_kc);
    tw_fixture *g = tw_fixture_new();
    assert_non_null(g);
    weft_component a = tw_comp(g->w, "A", sizeof(int32_t), 0, WEFT_STORAGE_TABLE, 0);
    weft_entity e = weft_spawn(g->w);
    weft_observer_desc d;
    memset(&d, 0, sizeof d);
    d.event = ADD;
    d.component = a;
    d.fn = victim_fn;
    d.free_user = count_free;
    assert_non_null(weft_observer_create(g->w, &d));
    d.entity = e;
    assert_non_null(weft_observer_create(g->w, &d));
    weft_observer *o3 = weft_observer_create(g->w, &d);
    assert_int_equal(weft_observer_destroy(g->w, o3), WEFT_OK);
    assert_int_equal(g_kc.frees, 1);
    tw_fixture_free(g);
    assert_int_equal(g_kc.frees, 3);
}

// ---- custom events ----

static void custom_event_payload_and_targets(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(&g_log, 0, sizeof g_log);
    weft_event_desc ed;
    memset(&ed, 0, sizeof ed);
    ed.name = "damage";
    ed.payload_size = sizeof(int32_t);
    weft_event ev = weft_event_register(w, &ed);
    assert_true(ev != 0);
    assert_true(ev > WEFT_EVENT_DESPAWN);
    assert_true(weft_event_register(w, &ed) == 0);
    tw_expect_error(f, WEFT_ERR_ALREADY_EXISTS, NULL);
    weft_entity e1 = weft_spawn(w);
    weft_entity e2 = weft_spawn(w);
    observe(w, ev, 0, 0, 1);
    observe(w, ev, 0, e1, 2);
    observe(w, ev, 0, e2, 3);
    int32_t dmg = 12;
    assert_int_equal(weft_trigger_event(w, ev, e1, &dmg, sizeof dmg, false), WEFT_OK);
    assert_int_equal(g_log.n, 2);
    expect(0, 'o', ev, 0, e1, 12);
    expect(1, 'o', ev, 0, e1, 12);
    assert_int_equal(g_log.r[0].tag, 1);
    assert_int_equal(g_log.r[1].tag, 2);
    g_log.n = 0;
    dmg = 4;
    assert_int_equal(weft_trigger_event(w, ev, 0, &dmg, sizeof dmg, false), WEFT_OK);
    assert_int_equal(g_log.n, 1); // untargeted: global only
    expect(0, 'o', ev, 0, 0, 4);
    // payload size checked
    g_log.n = 0;
    int64_t big = 0;
    assert_int_equal(weft_trigger_event(w, ev, e1, &big, sizeof big, false),
                     WEFT_ERR_SIZE_MISMATCH);
    tw_expect_error(f, WEFT_ERR_SIZE_MISMATCH, NULL);
    assert_int_equal(weft_trigger_event(w, ev, e1, NULL, sizeof dmg, false),
                     WEFT_ERR_SIZE_MISMATCH);
    assert_int_equal(weft_trigger_event(w, ev, e1, NULL, 0, false), WEFT_ERR_SIZE_MISMATCH);
    assert_int_equal(weft_trigger_event(w, 999, e1, &dmg, sizeof dmg, false),
                     WEFT_ERR_NOT_FOUND);
    assert_int_equal(weft_trigger_event(w, WEFT_EVENT_ADD, e1, NULL, 0, false),
                     WEFT_ERR_NOT_FOUND);
    assert_int_equal(weft_trigger_event(NULL, ev, e1, &dmg, sizeof dmg, false),
                     WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(g_log.n, 0);
}

// Custom observer sees every trigger field.
static weft_trigger g_seen;

static void capture_fn(weft_world *w, weft_trigger *t, void *user)
{
    (void)w;
    (void)user;
    g_seen = *t;
}

static void custom_event_trigger_fields(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_event_desc ed;
    memset(&ed, 0, sizeof ed);
    ed.name = "e";
    ed.payload_size = 24;
    weft_event ev = weft_event_register(w, &ed);
    weft_observer_desc d;
    memset(&d, 0, sizeof d);
    d.event = ev;
    d.fn = capture_fn;
    assert_non_null(weft_observer_create(w, &d));
    weft_entity e = weft_spawn(w);
    char pl[24] = "abcdefghijklmnopqrstuvw";
    memset(&g_seen, 0, sizeof g_seen);
    assert_int_equal(weft_trigger_event(w, ev, e, pl, sizeof pl, false), WEFT_OK);
    assert_int_equal(g_seen.event, ev);
    assert_int_equal(g_seen.component, 0);
    assert_true(g_seen.entity == e);
    assert_true(g_seen.original == e);
    assert_int_equal(g_seen.payload_size, 24);
    assert_false(g_seen.propagate);
}

// ---- propagation ----

static void custom_event_propagation(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(&g_log, 0, sizeof g_log);
    weft_event_desc ed;
    memset(&ed, 0, sizeof ed);
    ed.name = "click";
    weft_event ev = weft_event_register(w, &ed);
    weft_entity r = weft_spawn(w);
    weft_entity a = weft_spawn(w);
    weft_entity c = weft_spawn(w);
    assert_int_equal(weft_set_parent(w, a, r), WEFT_OK);
    assert_int_equal(weft_set_parent(w, c, a), WEFT_OK);
    observe(w, ev, 0, 0, 9); // global
    observe(w, ev, 0, r, 3);
    observe(w, ev, 0, a, 2);
    observe(w, ev, 0, c, 1);
    assert_int_equal(weft_trigger_event(w, ev, c, NULL, 0, true), WEFT_OK);
    assert_int_equal(g_log.n, 4);
    assert_int_equal(g_log.r[0].tag, 9); // global once
    assert_int_equal(g_log.r[1].tag, 1);
    assert_int_equal(g_log.r[2].tag, 2);
    assert_int_equal(g_log.r[3].tag, 3);
    assert_true(g_log.r[1].e == c);
    assert_true(g_log.r[2].e == a);
    assert_true(g_log.r[3].e == r);
    // without propagation: only the global and c's
    g_log.n = 0;
    assert_int_equal(weft_trigger_event(w, ev, c, NULL, 0, false), WEFT_OK);
    assert_int_equal(g_log.n, 2);
    assert_int_equal(g_log.r[1].tag, 1);
    // starting in the middle
    g_log.n = 0;
    assert_int_equal(weft_trigger_event(w, ev, a, NULL, 0, true), WEFT_OK);
    assert_int_equal(g_log.n, 3);
    assert_int_equal(g_log.r[1].tag, 2);
    assert_int_equal(g_log.r[2].tag, 3);
}

static void stop_fn(weft_world *w, weft_trigger *t, void *user)
{
    obs_log(w, t, user);
    t->propagate = false;
}

static void capture_original(weft_world *w, weft_trigger *t, void *user)
{
    (void)w;
    (void)user;
    if (t->entity != t->original) {
        g_seen = *t;
    }
}

static void custom_event_propagation_stopped(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(&g_log, 0, sizeof g_log);
    weft_event_desc ed;
    memset(&ed, 0, sizeof ed);
    ed.name = "click";
    weft_event ev = weft_event_register(w, &ed);
    weft_entity r = weft_spawn(w);
    weft_entity a = weft_spawn(w);
    weft_entity c = weft_spawn(w);
    assert_int_equal(weft_set_parent(w, a, r), WEFT_OK);
    assert_int_equal(weft_set_parent(w, c, a), WEFT_OK);
    observe(w, ev, 0, c, 1);
    weft_observer_desc d;
    memset(&d, 0, sizeof d);
    d.event = ev;
    d.entity = a;
    d.fn = stop_fn;
    d.user = (void *)(intptr_t)2;
    assert_non_null(weft_observer_create(w, &d));
    d.fn = capture_original;
    assert_non_null(weft_observer_create(w, &d)); // same hop: still runs
    observe(w, ev, 0, r, 3);
    memset(&g_seen, 0, sizeof g_seen);
    assert_int_equal(weft_trigger_event(w, ev, c, NULL, 0, true), WEFT_OK);
    assert_int_equal(g_log.n, 2);
    assert_int_equal(g_log.r[0].tag, 1);
    assert_int_equal(g_log.r[1].tag, 2);
    assert_true(g_seen.entity == a);
    assert_true(g_seen.original == c);
}

// ---- nesting ----

typedef struct nest_ctx {
    weft_event ev;
    int runs;
    int depth_errors;
    weft_status innermost;
} nest_ctx;

static nest_ctx g_nc;

static void nest_fn(weft_world *w, weft_trigger *t, void *user)
{
    (void)t;
    (void)user;
    g_nc.runs++;
    assert_true(g_nc.runs < 1000);
    weft_status st = weft_trigger_event(w, g_nc.ev, 0, NULL, 0, false);
    if (st == WEFT_ERR_DEPTH_LIMIT) {
        g_nc.depth_errors++;
    }
}

static void trigger_nesting_depth_limit(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(&g_nc, 0, sizeof g_nc);
    weft_event_desc ed;
    memset(&ed, 0, sizeof ed);
    ed.name = "recurse";
    g_nc.ev = weft_event_register(w, &ed);
    weft_observer_desc d;
    memset(&d, 0, sizeof d);
    d.event = g_nc.ev;
    d.fn = nest_fn;
    assert_non_null(weft_observer_create(w, &d));
    weft_clear_error(w);
    assert_int_equal(weft_trigger_event(w, g_nc.ev, 0, NULL, 0, false), WEFT_OK);
    assert_int_equal(g_nc.runs, WEFT_MAX_EVENT_DEPTH);
    assert_int_equal(g_nc.depth_errors, 1);
    tw_expect_error(f, WEFT_ERR_DEPTH_LIMIT, NULL);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    // usable again
    g_nc.runs = 0;
    g_nc.depth_errors = 0;
    assert_int_equal(weft_trigger_event(w, g_nc.ev, 0, NULL, 0, false), WEFT_OK);
    assert_int_equal(g_nc.runs, WEFT_MAX_EVENT_DEPTH);
}

// An observer that spawns/inserts: deferred, applied before trigger returns.
typedef struct spawn_obs_ctx {
    weft_component a;
    weft_entity spawned;
    weft_entity target;
    bool alive_inside;
    bool has_inside;
} spawn_obs_ctx;

static spawn_obs_ctx g_so;

static void spawning_obs(weft_world *w, weft_trigger *t, void *user)
{
    (void)t;
    (void)user;
    int32_t v = 31;
    weft_value va = {g_so.a, 4, &v};
    g_so.spawned = weft_spawn_with(w, &va, 1);
    g_so.alive_inside = weft_is_alive(w, g_so.spawned);
    assert_int_equal(weft_insert(w, g_so.target, g_so.a, &v, 4), WEFT_OK);
    g_so.has_inside = weft_has(w, g_so.target, g_so.a);
}

static void observer_structural_deferred(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(&g_so, 0, sizeof g_so);
    g_so.a = tw_comp(w, "A", sizeof(int32_t), 0, WEFT_STORAGE_TABLE, 0);
    g_so.target = weft_spawn(w);
    weft_event_desc ed;
    memset(&ed, 0, sizeof ed);
    ed.name = "go";
    weft_event ev = weft_event_register(w, &ed);
    weft_observer_desc d;
    memset(&d, 0, sizeof d);
    d.event = ev;
    d.fn = spawning_obs;
    assert_non_null(weft_observer_create(w, &d));
    assert_int_equal(weft_trigger_event(w, ev, 0, NULL, 0, false), WEFT_OK);
    assert_false(g_so.alive_inside);
    assert_false(g_so.has_inside);
    assert_true(weft_is_alive(w, g_so.spawned));
    assert_int_equal(*(const int32_t *)weft_get(w, g_so.spawned, g_so.a, 4), 31);
    assert_true(weft_has(w, g_so.target, g_so.a));
    // lifecycle observer doing the same on Add of B
    weft_component b = tw_comp(w, "B", sizeof(int32_t), 0, WEFT_STORAGE_SPARSE, 0);
    d.event = ADD;
    d.component = b;
    assert_non_null(weft_observer_create(w, &d));
    g_so.target = weft_spawn(w);
    int32_t v = 1;
    weft_entity e = weft_spawn(w);
    assert_int_equal(weft_insert(w, e, b, &v, 4), WEFT_OK);
    assert_false(g_so.alive_inside);
    assert_true(weft_is_alive(w, g_so.spawned));
    assert_true(weft_has(w, g_so.target, g_so.a));
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- observer misuse ----

static void observer_misuse(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = tw_comp(w, "A", sizeof(int32_t), 0, WEFT_STORAGE_TABLE, 0);
    weft_event_desc ed;
    memset(&ed, 0, sizeof ed);
    ed.name = "x";
    weft_event ev = weft_event_register(w, &ed);
    weft_observer_desc d;
    memset(&d, 0, sizeof d);
    d.event = ADD;
    d.component = a;
    assert_null(weft_observer_create(w, &d)); // no fn
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    d.fn = victim_fn;
    d.component = 0;
    assert_null(weft_observer_create(w, &d));
    tw_expect_error(f, WEFT_ERR_UNKNOWN_COMPONENT, NULL);
    d.component = 555;
    assert_null(weft_observer_create(w, &d));
    tw_expect_error(f, WEFT_ERR_UNKNOWN_COMPONENT, NULL);
    d.event = ev;
    d.component = a;
    assert_null(weft_observer_create(w, &d));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    d.event = 777;
    d.component = 0;
    assert_null(weft_observer_create(w, &d));
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, NULL);
    weft_entity dead = weft_spawn(w);
    assert_int_equal(weft_despawn(w, dead), WEFT_OK);
    d.event = ev;
    d.entity = dead;
    assert_null(weft_observer_create(w, &d));
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, NULL);
    d.entity = 0;
    d._end_canary = 1;
    assert_null(weft_observer_create(w, &d));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    assert_null(weft_observer_create(w, NULL));
    assert_int_equal(weft_observer_destroy(w, NULL), WEFT_OK);
    memset(&ed, 0, sizeof ed);
    assert_true(weft_event_register(w, &ed) == 0);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tw_setup, tw_teardown)
    const struct CMUnitTest tests[] = {
        T(hook_order_table),
        T(hook_order_sparse),
        T(hook_order_mixed_storage),
        T(hooks_before_observers),
        T(hook_structural_deferred),
        T(hook_cascade_depth_limit),
        T(hook_cascade_depth_limit_sparse),
        T(obs_global_targeted_registration_order),
        T(obs_registered_after_archetype_exists),
        T(obs_unrelated_never_fires),
        T(obs_registered_during_trigger),
        T(obs_destroy_during_trigger),
        T(obs_targeted_destroyed_with_entity),
        T(obs_free_user_at_world_destroy),
        T(custom_event_payload_and_targets),
        T(custom_event_trigger_fields),
        T(custom_event_propagation),
        T(custom_event_propagation_stopped),
        T(trigger_nesting_depth_limit),
        T(observer_structural_deferred),
        T(observer_misuse),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

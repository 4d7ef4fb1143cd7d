// tests/api/test_api_command.c - black-box tests of command buffers
// (weft.h "command buffers"): FIFO order, reserved
// spawn ids, the missing-entity policies, resource and custom commands,
// drop functions and value dtors called exactly once, steady-state reuse,
// apply from the wrong phase, misuse statuses and over-aligned values.
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

static weft_component c_int(weft_world *w, const char *name)
{
    return tw_comp(w, name, sizeof(int32_t), 0, WEFT_STORAGE_TABLE, 0);
}

static int32_t get_i(weft_world *w, weft_entity e, weft_component c)
{
    const int32_t *p = weft_get(w, e, c, sizeof(int32_t));
    assert_non_null(p);
    return *p;
}

// ---- FIFO ----

static void cmd_fifo_within_buffer(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = c_int(w, "A");
    weft_component b = c_int(w, "B");
    weft_entity e = weft_spawn(w);
    weft_commands *cb = weft_commands_create(w);
    assert_non_null(cb);

    int32_t one = 1, two = 2;
    assert_int_equal(weft_cmd_insert(cb, e, a, &one, sizeof one), WEFT_OK);
    assert_int_equal(weft_cmd_insert(cb, e, a, &two, sizeof two), WEFT_OK);
    assert_int_equal(weft_commands_count(cb), 2);
    assert_false(weft_has(w, e, a)); // nothing happens before apply
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    assert_int_equal(weft_commands_count(cb), 0);
    assert_int_equal(get_i(w, e, a), 2);

    // insert then remove -> absent; remove then insert -> present
    assert_int_equal(weft_cmd_insert(cb, e, b, &one, sizeof one), WEFT_OK);
    assert_int_equal(weft_cmd_remove(cb, e, b), WEFT_OK);
    assert_int_equal(weft_cmd_remove(cb, e, a), WEFT_OK);
    assert_int_equal(weft_cmd_insert(cb, e, a, &one, sizeof one), WEFT_OK);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    assert_false(weft_has(w, e, b));
    assert_int_equal(get_i(w, e, a), 1);

    // despawn then insert on the same entity: the insert fails (stale)
    weft_entity g = weft_spawn(w);
    assert_int_equal(weft_cmd_despawn(cb, g), WEFT_OK);
    assert_int_equal(weft_cmd_insert(cb, g, a, &one, sizeof one), WEFT_OK);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_ERR_STALE_ENTITY);
    assert_false(weft_is_alive(w, g));
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_commands_destroy(cb);
}

// A value recorded is the buffer's copy: changing the caller's after
// recording changes nothing.
static void cmd_values_copied_at_record(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = c_int(w, "A");
    weft_entity e = weft_spawn(w);
    weft_commands *cb = weft_commands_create(w);
    int32_t v = 10;
    assert_int_equal(weft_cmd_insert(cb, e, a, &v, sizeof v), WEFT_OK);
    v = 99;
    weft_value sv = {a, sizeof v, &v};
    weft_entity s = weft_cmd_spawn(cb, &sv, 1);
    v = 55;
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    assert_int_equal(get_i(w, e, a), 10);
    assert_int_equal(get_i(w, s, a), 99);
    weft_commands_destroy(cb);
}

// ---- reserved spawn ids ----

static void cmd_spawn_reserved_id(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = c_int(w, "A");
    weft_component b = c_int(w, "B");
    weft_component c = c_int(w, "C");
    weft_commands *b1 = weft_commands_create(w);
    weft_commands *b2 = weft_commands_create(w);

    int32_t va = 7, vb = 3, vc = 4;
    weft_value vals[] = {{a, sizeof va, &va}};
    weft_entity s = weft_cmd_spawn(b1, vals, 1);
    assert_true(s != 0);
    assert_false(weft_is_alive(w, s));
    weft_entity s2 = weft_cmd_spawn(b1, NULL, 0);
    assert_true(s2 != 0 && s2 != s);
    assert_int_equal(weft_cmd_insert(b1, s, b, &vb, sizeof vb), WEFT_OK);
    assert_int_equal(weft_cmd_insert(b2, s, c, &vc, sizeof vc), WEFT_OK);
    // an immediate spawn meanwhile must not hand out the reserved ids
    weft_entity imm = weft_spawn(w);
    // (it may flush the reservations as empty entities, as documented)
    assert_true(imm != 0 && imm != s && imm != s2);

    assert_int_equal(weft_commands_apply(w, b1), WEFT_OK);
    assert_true(weft_is_alive(w, s));
    assert_true(weft_is_alive(w, s2));
    assert_int_equal(get_i(w, s, a), 7);
    assert_int_equal(get_i(w, s, b), 3);
    assert_false(weft_has(w, s, c));
    assert_int_equal(weft_commands_apply(w, b2), WEFT_OK);
    assert_int_equal(get_i(w, s, c), 4);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_commands_destroy(b1);
    weft_commands_destroy(b2);
}

// A spawn recorded in one buffer, used by a second buffer applied first:
// the spawn is not live yet, so that insert fails; the spawn still
// happens when its own buffer is applied.
static void cmd_reserved_used_before_its_spawn(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = c_int(w, "A");
    weft_commands *b1 = weft_commands_create(w);
    weft_commands *b2 = weft_commands_create(w);
    int32_t v = 1;
    weft_entity s = weft_cmd_spawn(b1, NULL, 0);
    assert_int_equal(weft_cmd_insert(b2, s, a, &v, sizeof v), WEFT_OK);
    weft_status st = weft_commands_apply(w, b2);
    // either applied on the flushed id or refused as not yet live; it must
    // never land on a different entity
    if (st == WEFT_OK) {
        assert_true(weft_is_alive(w, s));
    }
    assert_int_equal(weft_commands_apply(w, b1), WEFT_OK);
    assert_true(weft_is_alive(w, s));
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_commands_destroy(b1);
    weft_commands_destroy(b2);
}

// ---- policies ----

static void cmd_dead_entity_policy(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = c_int(w, "A");
    weft_component b = c_int(w, "B");
    weft_entity dead = weft_spawn(w);
    weft_entity live = weft_spawn(w);
    assert_int_equal(weft_despawn(w, dead), WEFT_OK);
    weft_commands *cb = weft_commands_create(w);
    int32_t v = 5;
    assert_int_equal(weft_cmd_insert(cb, dead, a, &v, sizeof v), WEFT_OK);
    assert_int_equal(weft_cmd_insert(cb, live, a, &v, sizeof v), WEFT_OK);
    assert_int_equal(weft_cmd_remove(cb, dead, a), WEFT_OK);
    assert_int_equal(weft_cmd_despawn(cb, dead), WEFT_OK);
    assert_int_equal(weft_cmd_insert(cb, live, b, &v, sizeof v), WEFT_OK);
    weft_clear_error(w);
    int64_t logs = f->log.count;
    assert_int_equal(weft_commands_apply(w, cb), WEFT_ERR_STALE_ENTITY);
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, NULL);
    assert_true(f->log.count >= logs + 3); // each failing command reported
    assert_int_equal(get_i(w, live, a), 5);
    assert_int_equal(get_i(w, live, b), 5);
    assert_false(weft_is_alive(w, dead));
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_commands_destroy(cb);
}

// Each failing command individually, so one that silently succeeds fails.
static void cmd_dead_entity_each_kind(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = c_int(w, "A");
    weft_entity dead = weft_spawn(w);
    assert_int_equal(weft_despawn(w, dead), WEFT_OK);
    weft_commands *cb = weft_commands_create(w);
    int32_t v = 5;
    for (int k = 0; k < 4; k++) {
        switch (k) {
        case 0: assert_int_equal(weft_cmd_insert(cb, dead, a, &v, sizeof v), WEFT_OK); break;
        case 1: assert_int_equal(weft_cmd_remove(cb, dead, a), WEFT_OK); break;
        case 2: assert_int_equal(weft_cmd_despawn(cb, dead), WEFT_OK); break;
        default: {
            weft_value vv = {a, sizeof v, &v};
            assert_int_equal(weft_cmd_insert_many(cb, dead, &vv, 1), WEFT_OK);
        }
        }
        weft_clear_error(w);
        assert_int_equal(weft_commands_apply(w, cb), WEFT_ERR_STALE_ENTITY);
        assert_int_equal(weft_last_status(w), WEFT_ERR_STALE_ENTITY);
    }
    weft_commands_destroy(cb);
}

static void cmd_try_variants_silent(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = c_int(w, "A");
    weft_entity dead = weft_spawn(w);
    weft_entity live = weft_spawn(w);
    assert_int_equal(weft_despawn(w, dead), WEFT_OK);
    weft_commands *cb = weft_commands_create(w);
    int32_t v = 9;
    assert_int_equal(weft_cmd_try_insert(cb, dead, a, &v, sizeof v), WEFT_OK);
    assert_int_equal(weft_cmd_try_remove(cb, dead, a), WEFT_OK);
    assert_int_equal(weft_cmd_try_despawn(cb, dead), WEFT_OK);
    assert_int_equal(weft_cmd_try_insert(cb, live, a, &v, sizeof v), WEFT_OK);
    weft_clear_error(w);
    int64_t logs = f->log.count;
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    assert_int_equal(weft_last_status(w), WEFT_OK);
    assert_int_equal(f->log.count, logs);
    assert_int_equal(get_i(w, live, a), 9); // try_ on a live entity still works
    // try_despawn / try_remove on live ones work as well
    assert_int_equal(weft_cmd_try_remove(cb, live, a), WEFT_OK);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    assert_false(weft_has(w, live, a));
    assert_int_equal(weft_cmd_try_despawn(cb, live), WEFT_OK);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    assert_false(weft_is_alive(w, live));
    weft_commands_destroy(cb);
}

// ---- resources ----

static void cmd_resource_insert_remove(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component r = c_int(w, "R");
    weft_commands *cb = weft_commands_create(w);
    int32_t v = 42;
    assert_int_equal(weft_cmd_resource_insert(cb, r, &v, sizeof v), WEFT_OK);
    v = 0;
    assert_false(weft_resource_has(w, r));
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    const int32_t *p = weft_resource_get(w, r, sizeof(int32_t));
    assert_non_null(p);
    assert_int_equal(*p, 42);
    v = 43;
    assert_int_equal(weft_cmd_resource_insert(cb, r, &v, sizeof v), WEFT_OK);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    assert_int_equal(*(const int32_t *)weft_resource_get(w, r, sizeof(int32_t)), 43);
    assert_int_equal(weft_cmd_resource_remove(cb, r), WEFT_OK);
    assert_true(weft_resource_has(w, r));
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    assert_false(weft_resource_has(w, r));
    // misuse
    assert_int_equal(weft_cmd_resource_insert(cb, r, &v, 2), WEFT_ERR_SIZE_MISMATCH);
    assert_int_equal(weft_cmd_resource_insert(cb, 999, &v, sizeof v),
                     WEFT_ERR_UNKNOWN_COMPONENT);
    assert_int_equal(weft_cmd_resource_remove(cb, 999), WEFT_ERR_UNKNOWN_COMPONENT);
    assert_int_equal(weft_commands_count(cb), 0);
    weft_commands_destroy(cb);
}

// Resource commands on a tracked type: copies destroyed exactly once.
static void cmd_resource_tracked(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component r = tw_tracked_register(w, "TR", WEFT_STORAGE_TABLE, &f->tracker);
    weft_commands *cb = weft_commands_create(w);
    tw_tracked v;
    tw_tracked_make(&v, 1);
    int64_t base = tw_tracker_live(&f->tracker);
    assert_int_equal(weft_cmd_resource_insert(cb, r, &v, sizeof v), WEFT_OK);
    assert_int_equal(weft_cmd_resource_insert(cb, r, &v, sizeof v), WEFT_OK);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    assert_int_equal(tw_tracker_live(&f->tracker), base + 1);
    assert_int_equal(weft_cmd_resource_insert(cb, r, &v, sizeof v), WEFT_OK);
    weft_commands_destroy(cb); // unapplied copy destroyed
    assert_int_equal(tw_tracker_live(&f->tracker), base + 1);
    assert_int_equal(f->tracker.errors, 0);
}

// ---- custom commands ----

typedef struct custom_log {
    int32_t seq[64];
    int n;
    int drops;
    int64_t drop_sum;
    weft_component comp; // component read when the command runs
    weft_entity ent;
    int32_t seen[64];
} custom_log;

typedef struct payload {
    int32_t id;
    char pad[60]; // a payload bigger than one word
} payload;

static void custom_run(weft_world *w, void *p, void *user)
{
    custom_log *l = user;
    const payload *pl = p;
    assert_true(((uintptr_t)p % 16) == 0); // aligned to 16 as documented
    assert_true(l->n < 64);
    l->seq[l->n] = pl->id;
    l->seen[l->n] = -1;
    if (l->comp && weft_has(w, l->ent, l->comp)) {
        l->seen[l->n] = *(const int32_t *)weft_get(w, l->ent, l->comp, sizeof(int32_t));
    }
    l->n++;
}

static void custom_drop(void *p, void *user)
{
    custom_log *l = user;
    const payload *pl = p;
    l->drops++;
    l->drop_sum += pl->id;
}

static void rec_custom(weft_commands *cb, int32_t id, custom_log *l, bool with_drop)
{
    payload p;
    memset(&p, 0, sizeof p);
    p.id = id;
    assert_int_equal(weft_cmd_custom(cb, custom_run, &p, sizeof p,
                                     with_drop ? custom_drop : NULL, l),
                     WEFT_OK);
    p.id = -777; // the buffer must have taken a copy
}

static void cmd_custom_order_payload_drop(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = c_int(w, "A");
    custom_log l;
    memset(&l, 0, sizeof l);
    l.comp = a;
    l.ent = weft_spawn(w);
    weft_commands *cb = weft_commands_create(w);
    int32_t v1 = 100, v2 = 200;
    rec_custom(cb, 1, &l, true);
    assert_int_equal(weft_cmd_insert(cb, l.ent, a, &v1, sizeof v1), WEFT_OK);
    rec_custom(cb, 2, &l, true);
    assert_int_equal(weft_cmd_insert(cb, l.ent, a, &v2, sizeof v2), WEFT_OK);
    rec_custom(cb, 3, &l, false);
    assert_int_equal(l.n, 0);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.seq[0], 1);
    assert_int_equal(l.seq[1], 2);
    assert_int_equal(l.seq[2], 3);
    assert_int_equal(l.seen[0], -1);  // before the first insert
    assert_int_equal(l.seen[1], 100); // between the inserts
    assert_int_equal(l.seen[2], 200);
    assert_int_equal(l.drops, 2); // once each, after running
    assert_int_equal(l.drop_sum, 3);
    // applying again runs nothing and drops nothing
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.drops, 2);
    weft_commands_destroy(cb);
    assert_int_equal(l.drops, 2);
}

static void cmd_custom_drop_on_buffer_destroy(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    custom_log l;
    memset(&l, 0, sizeof l);
    weft_commands *cb = weft_commands_create(w);
    for (int i = 1; i <= 5; i++) {
        rec_custom(cb, i, &l, true);
    }
    weft_commands_destroy(cb);
    assert_int_equal(l.n, 0);
    assert_int_equal(l.drops, 5);
    assert_int_equal(l.drop_sum, 15);
}

static void cmd_custom_drop_on_world_destroy(void **state)
{
    (void)state;
    custom_log l;
    memset(&l, 0, sizeof l);
    tw_fixture *g = tw_fixture_new();
    assert_non_null(g);
    assert_non_null(g->w);
    weft_commands *cb = weft_commands_create(g->w);
    weft_commands *cb2 = weft_commands_create(g->w);
    rec_custom(cb, 7, &l, true);
    rec_custom(cb, 8, &l, true);
    rec_custom(cb2, 9, &l, true);
    rec_custom(weft_world_commands(g->w), 10, &l, true);
    // an applied one, then more recorded into the same buffer
    assert_int_equal(weft_commands_apply(g->w, cb2), WEFT_OK);
    assert_int_equal(l.drops, 2); // cb2's and the world buffer's (applied too)
    rec_custom(cb2, 11, &l, true);
    tw_fixture_free(g); // asserts zero live bytes
    assert_int_equal(l.drops, 5);
    assert_int_equal(l.drop_sum, 7 + 8 + 9 + 10 + 11);
    assert_int_equal(l.n, 2);
}

// A custom command queuing into the world buffer (what a command queues
// runs right after it, before the next one): A enqueues B, C was queued
// after A: applied order A, B, C.
static custom_log *g_chain;

static void chain_b(weft_world *w, void *p, void *user)
{
    (void)w;
    (void)user;
    g_chain->seq[g_chain->n++] = *(const int32_t *)p;
}

static void chain_a(weft_world *w, void *p, void *user)
{
    (void)user;
    g_chain->seq[g_chain->n++] = *(const int32_t *)p;
    int32_t b = 2;
    assert_int_equal(weft_cmd_custom(weft_world_commands(w), chain_b, &b, sizeof b, NULL,
                                     NULL),
                     WEFT_OK);
}

static void cmd_custom_nested_world_buffer_order(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    custom_log l;
    memset(&l, 0, sizeof l);
    g_chain = &l;
    weft_commands *cb = weft_commands_create(w);
    int32_t a = 1, c = 3;
    assert_int_equal(weft_cmd_custom(cb, chain_a, &a, sizeof a, NULL, NULL), WEFT_OK);
    assert_int_equal(weft_cmd_custom(cb, chain_b, &c, sizeof c, NULL, NULL), WEFT_OK);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.seq[0], 1);
    assert_int_equal(l.seq[1], 2);
    assert_int_equal(l.seq[2], 3);
    assert_int_equal(weft_commands_count(weft_world_commands(w)), 0);
    weft_commands_destroy(cb);
}

// ---- tracked values ----

static void cmd_tracked_values_destroyed_once(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component t = tw_tracked_register(w, "T", WEFT_STORAGE_TABLE, &f->tracker);
    weft_component ts = tw_tracked_register(w, "TS", WEFT_STORAGE_SPARSE, &f->tracker);
    tw_tracked v;
    tw_tracked_make(&v, 5);
    int64_t base = tw_tracker_live(&f->tracker);
    weft_entity e = weft_spawn(w);

    // applied: one live value per stored component
    weft_commands *cb = weft_commands_create(w);
    assert_int_equal(weft_cmd_insert(cb, e, t, &v, sizeof v), WEFT_OK);
    assert_int_equal(weft_cmd_insert(cb, e, t, &v, sizeof v), WEFT_OK); // replaces
    assert_int_equal(weft_cmd_insert(cb, e, ts, &v, sizeof v), WEFT_OK);
    weft_value sv[] = {{t, sizeof v, &v}, {ts, sizeof v, &v}};
    weft_entity s = weft_cmd_spawn(cb, sv, 2);
    assert_true(s != 0);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    assert_int_equal(tw_tracker_live(&f->tracker), base + 4);
    const tw_tracked *got = weft_get(w, s, ts, sizeof v);
    assert_non_null(got);
    assert_int_equal(got->payload, 5);

    // a command on a dead entity: its value is still destroyed
    weft_entity dead = weft_spawn(w);
    assert_int_equal(weft_despawn(w, dead), WEFT_OK);
    assert_int_equal(weft_cmd_insert(cb, dead, t, &v, sizeof v), WEFT_OK);
    assert_int_equal(weft_cmd_try_insert(cb, dead, ts, &v, sizeof v), WEFT_OK);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_ERR_STALE_ENTITY);
    assert_int_equal(tw_tracker_live(&f->tracker), base + 4);

    // unapplied, buffer destroyed
    assert_int_equal(weft_cmd_insert(cb, e, t, &v, sizeof v), WEFT_OK);
    assert_true(weft_cmd_spawn(cb, sv, 2) != 0);
    assert_true(tw_tracker_live(&f->tracker) > base + 4);
    weft_commands_destroy(cb);
    assert_int_equal(tw_tracker_live(&f->tracker), base + 4);

    // unapplied, still in a buffer (and the world buffer) at world destroy:
    // the fixture teardown asserts every value was destroyed exactly once
    weft_commands *left = weft_commands_create(w);
    assert_int_equal(weft_cmd_insert(left, e, ts, &v, sizeof v), WEFT_OK);
    assert_true(weft_cmd_spawn(left, sv, 2) != 0);
    assert_int_equal(weft_cmd_insert(weft_world_commands(w), e, t, &v, sizeof v), WEFT_OK);
    assert_int_equal(f->tracker.errors, 0);
}

// ---- reuse ----

static void cmd_buffer_reuse_steady_state(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = c_int(w, "A");
    weft_component b = c_int(w, "B");
    enum { N = 512 };
    weft_entity es[N];
    for (int i = 0; i < N; i++) {
        es[i] = weft_spawn(w);
    }
    weft_commands *cb = weft_commands_create(w);
    int64_t after[6];
    custom_log l;
    memset(&l, 0, sizeof l);
    for (int round = 0; round < 6; round++) {
        for (int i = 0; i < N; i++) {
            int32_t v = i + round;
            assert_int_equal(weft_cmd_insert(cb, es[i], a, &v, sizeof v), WEFT_OK);
            assert_int_equal(weft_cmd_insert(cb, es[i], b, &v, sizeof v), WEFT_OK);
        }
        for (int i = 0; i < N; i++) {
            assert_int_equal(weft_cmd_remove(cb, es[i], b), WEFT_OK);
        }
        l.n = 0;
        rec_custom(cb, round, &l, true);
        weft_entity s = weft_cmd_spawn(cb, NULL, 0);
        assert_int_equal(weft_cmd_despawn(cb, s), WEFT_OK);
        assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
        after[round] = tw_alloc_live_bytes(&f->alloc);
    }
    for (int round = 2; round < 6; round++) {
        if (after[round] != after[1]) {
            fail_msg("live bytes grew in the steady state: round 1 %lld, round %d %lld",
                     (long long)after[1], round, (long long)after[round]);
        }
    }
    assert_int_equal(get_i(w, es[3], a), 3 + 5);
    weft_commands_destroy(cb);
}

// ---- wrong phase ----

typedef struct phase_ctx {
    weft_commands *cb;
    weft_commands *outer;
    weft_status st_hook;
    weft_status st_obs;
    weft_status st_iter;
    weft_status st_world;
    weft_status st_custom;
    int calls;
} phase_ctx;

static phase_ctx g_phase;

static void phase_hook(weft_world *w, weft_entity e, weft_component c, void *user)
{
    (void)e;
    (void)c;
    (void)user;
    g_phase.st_hook = weft_commands_apply(w, g_phase.cb);
    g_phase.st_world = weft_commands_apply(w, weft_world_commands(w));
    g_phase.calls++;
}

static void phase_obs(weft_world *w, weft_trigger *t, void *user)
{
    (void)t;
    (void)user;
    g_phase.st_obs = weft_commands_apply(w, g_phase.cb);
    g_phase.calls++;
}

static void phase_custom(weft_world *w, void *p, void *user)
{
    (void)p;
    (void)user;
    g_phase.st_custom = weft_commands_apply(w, g_phase.outer);
    g_phase.calls++;
}

static void cmd_apply_wrong_phase(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(&g_phase, 0, sizeof g_phase);
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = "H";
    d.size = sizeof(int32_t);
    d.lifecycle.on_add = phase_hook;
    weft_component h = weft_component_register(w, &d);
    assert_true(h != 0);
    weft_component a = c_int(w, "A");
    g_phase.cb = weft_commands_create(w);
    weft_entity e = weft_spawn(w);
    int32_t v = 1;
    // the buffer holds one insert; none of the nested applies may run it
    assert_int_equal(weft_cmd_insert(g_phase.cb, e, a, &v, sizeof v), WEFT_OK);

    assert_int_equal(weft_insert(w, e, h, &v, sizeof v), WEFT_OK);
    assert_int_equal(g_phase.st_hook, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(g_phase.st_world, WEFT_ERR_WRONG_PHASE);
    assert_false(weft_has(w, e, a));

    weft_event_desc ed;
    memset(&ed, 0, sizeof ed);
    ed.name = "ev";
    weft_event ev = weft_event_register(w, &ed);
    weft_observer_desc od;
    memset(&od, 0, sizeof od);
    od.event = ev;
    od.fn = phase_obs;
    assert_non_null(weft_observer_create(w, &od));
    assert_int_equal(weft_trigger_event(w, ev, 0, NULL, 0, false), WEFT_OK);
    assert_int_equal(g_phase.st_obs, WEFT_ERR_WRONG_PHASE);
    assert_false(weft_has(w, e, a));

    weft_query_desc qd;
    memset(&qd, 0, sizeof qd);
    qd.terms[0].id = h;
    qd.term_count = 1;
    weft_query *q = weft_query_create(w, &qd);
    assert_non_null(q);
    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    g_phase.st_iter = WEFT_OK;
    while (weft_iter_next(&it)) {
        g_phase.st_iter = weft_commands_apply(w, g_phase.cb);
    }
    assert_int_equal(g_phase.st_iter, WEFT_ERR_WRONG_PHASE);
    assert_false(weft_has(w, e, a));

    // applying a buffer from one of its own commands
    weft_commands *outer = weft_commands_create(w);
    g_phase.outer = outer;
    assert_int_equal(weft_cmd_custom(outer, phase_custom, NULL, 0, NULL, NULL), WEFT_OK);
    assert_int_equal(weft_commands_apply(w, outer), WEFT_OK);
    assert_int_equal(g_phase.st_custom, WEFT_ERR_WRONG_PHASE);
    assert_false(weft_has(w, e, a));

    // afterwards the buffer applies normally
    assert_int_equal(weft_commands_count(g_phase.cb), 1);
    assert_int_equal(weft_commands_apply(w, g_phase.cb), WEFT_OK);
    assert_int_equal(get_i(w, e, a), 1);
    weft_commands_destroy(outer);
    weft_commands_destroy(g_phase.cb);
    weft_query_destroy(w, q);
}

// ---- misuse ----

static void cmd_misuse_statuses(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = c_int(w, "A");
    weft_component b = c_int(w, "B");
    weft_entity e = weft_spawn(w);
    int32_t v = 1;
    weft_value dup[] = {{a, sizeof v, &v}, {a, sizeof v, &v}};
    weft_value bad[] = {{a, sizeof v, &v}, {b, 2, &v}};
    weft_value unk[] = {{777, sizeof v, &v}};

    // NULL buffer
    assert_int_equal(weft_cmd_insert(NULL, e, a, &v, sizeof v), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_cmd_remove(NULL, e, a), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_cmd_despawn(NULL, e), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_cmd_try_despawn(NULL, e), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_cmd_resource_insert(NULL, a, &v, sizeof v), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_cmd_resource_remove(NULL, a), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_cmd_custom(NULL, custom_run, NULL, 0, NULL, NULL),
                     WEFT_ERR_INVALID_HANDLE);
    assert_true(weft_cmd_spawn(NULL, NULL, 0) == 0);
    assert_int_equal(weft_commands_count(NULL), 0);
    weft_commands_destroy(NULL);
    assert_int_equal(weft_commands_apply(w, NULL), WEFT_ERR_INVALID_HANDLE);
    tw_expect_error(f, WEFT_ERR_INVALID_HANDLE, NULL);
    assert_int_equal(weft_commands_apply(NULL, NULL), WEFT_ERR_INVALID_HANDLE);
    assert_null(weft_commands_create(NULL));
    assert_null(weft_world_commands(NULL));

    weft_commands *cb = weft_commands_create(w);
    assert_int_equal(weft_cmd_insert(cb, e, 777, &v, sizeof v), WEFT_ERR_UNKNOWN_COMPONENT);
    tw_expect_error(f, WEFT_ERR_UNKNOWN_COMPONENT, NULL);
    assert_int_equal(weft_cmd_remove(cb, e, 777), WEFT_ERR_UNKNOWN_COMPONENT);
    assert_int_equal(weft_cmd_try_remove(cb, e, 777), WEFT_ERR_UNKNOWN_COMPONENT);
    assert_int_equal(weft_cmd_insert(cb, e, a, &v, 8), WEFT_ERR_SIZE_MISMATCH);
    tw_expect_error(f, WEFT_ERR_SIZE_MISMATCH, NULL);
    assert_int_equal(weft_cmd_try_insert(cb, e, a, &v, 2), WEFT_ERR_SIZE_MISMATCH);
    assert_int_equal(weft_cmd_insert_many(cb, e, dup, 2), WEFT_ERR_DUPLICATE_COMPONENT);
    tw_expect_error(f, WEFT_ERR_DUPLICATE_COMPONENT, NULL);
    assert_int_equal(weft_cmd_insert_many(cb, e, bad, 2), WEFT_ERR_SIZE_MISMATCH);
    assert_int_equal(weft_cmd_insert_many(cb, e, unk, 1), WEFT_ERR_UNKNOWN_COMPONENT);
    assert_int_equal(weft_cmd_insert_many(cb, e, NULL, 1), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_cmd_insert_many(cb, e, dup, -1), WEFT_ERR_INVALID_ARG);
    assert_true(weft_cmd_spawn(cb, dup, 2) == 0);
    tw_expect_error(f, WEFT_ERR_DUPLICATE_COMPONENT, NULL);
    assert_true(weft_cmd_spawn(cb, bad, 2) == 0);
    tw_expect_error(f, WEFT_ERR_SIZE_MISMATCH, NULL);
    assert_true(weft_cmd_spawn(cb, unk, 1) == 0);
    tw_expect_error(f, WEFT_ERR_UNKNOWN_COMPONENT, NULL);
    assert_true(weft_cmd_spawn(cb, NULL, 2) == 0);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    // entity 0
    assert_int_equal(weft_cmd_insert(cb, 0, a, &v, sizeof v), WEFT_ERR_INVALID_ENTITY);
    tw_expect_error(f, WEFT_ERR_INVALID_ENTITY, NULL);
    assert_int_equal(weft_cmd_remove(cb, 0, a), WEFT_ERR_INVALID_ENTITY);
    assert_int_equal(weft_cmd_despawn(cb, 0), WEFT_ERR_INVALID_ENTITY);
    assert_int_equal(weft_cmd_try_despawn(cb, 0), WEFT_ERR_INVALID_ENTITY);
    // custom without fn / with a size but no payload
    assert_int_equal(weft_cmd_custom(cb, NULL, NULL, 0, NULL, NULL), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_cmd_custom(cb, custom_run, NULL, 8, NULL, NULL),
                     WEFT_ERR_INVALID_ARG);
    // nothing was recorded by any failing call
    assert_int_equal(weft_commands_count(cb), 0);
    tw_snap s = tw_snap_take(w);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    tw_snap_expect_same(w, &s);

    // a buffer of another world
    tw_fixture *g = tw_fixture_new();
    assert_non_null(g);
    weft_commands *foreign = weft_commands_create(g->w);
    assert_int_equal(weft_commands_apply(w, foreign), WEFT_ERR_INVALID_HANDLE);
    weft_commands_destroy(foreign);
    tw_fixture_free(g);
    weft_commands_destroy(cb);
}

// ---- large values ----

typedef struct big64 {
    _Alignas(64) uint8_t b[64];
} big64;

typedef struct page {
    _Alignas(4096) uint8_t b[4096];
} page;

static void cmd_large_aligned_values(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component small = tw_comp(w, "S", 1, 1, WEFT_STORAGE_TABLE, 0);
    weft_component c64 = tw_comp(w, "B64", sizeof(big64), 64, WEFT_STORAGE_TABLE, 0);
    weft_component c4k = tw_comp(w, "P4K", sizeof(page), 4096, WEFT_STORAGE_TABLE, 0);
    weft_component s4k = tw_comp(w, "P4KS", sizeof(page), 4096, WEFT_STORAGE_SPARSE, 0);
    static page pg;
    static big64 bg;
    enum { N = 8 };
    weft_entity es[N];
    weft_commands *cb = weft_commands_create(w);
    for (int i = 0; i < N; i++) {
        uint8_t sv = (uint8_t)i;
        memset(bg.b, 0x40 + i, sizeof bg.b);
        memset(pg.b, 0x10 + i, sizeof pg.b);
        pg.b[0] = (uint8_t)(0xA0 + i);
        pg.b[4095] = (uint8_t)(0xB0 + i);
        // a 1-byte value first so the big ones start misaligned in a naive queue
        weft_value vals[] = {{small, 1, &sv}, {c64, sizeof bg, &bg}, {c4k, sizeof pg, &pg}};
        es[i] = weft_cmd_spawn(cb, vals, 3);
        assert_true(es[i] != 0);
        assert_int_equal(weft_cmd_insert(cb, es[i], small, &sv, 1), WEFT_OK);
        assert_int_equal(weft_cmd_insert(cb, es[i], s4k, &pg, sizeof pg), WEFT_OK);
    }
    memset(&pg, 0, sizeof pg);
    memset(&bg, 0, sizeof bg);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    for (int i = 0; i < N; i++) {
        const big64 *b = weft_get(w, es[i], c64, sizeof(big64));
        const page *p = weft_get(w, es[i], c4k, sizeof(page));
        const page *ps = weft_get(w, es[i], s4k, sizeof(page));
        assert_non_null(b);
        assert_non_null(p);
        assert_non_null(ps);
        assert_true((uintptr_t)b % 64 == 0);
        assert_true((uintptr_t)p % 4096 == 0);
        assert_true((uintptr_t)ps % 4096 == 0);
        for (int k = 0; k < 64; k++) {
            assert_int_equal(b->b[k], 0x40 + i);
        }
        assert_int_equal(p->b[0], 0xA0 + i);
        assert_int_equal(p->b[1], 0x10 + i);
        assert_int_equal(p->b[4094], 0x10 + i);
        assert_int_equal(p->b[4095], 0xB0 + i);
        assert_int_equal(memcmp(p, ps, sizeof(page)), 0);
    }
    // unapplied big values freed with the buffer (teardown checks bytes)
    assert_int_equal(weft_cmd_insert(cb, es[0], c4k, &pg, sizeof pg), WEFT_OK);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_commands_destroy(cb);
}

// A long buffer: thousands of commands of mixed sizes keep FIFO order.
static void cmd_many_commands_fifo(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = c_int(w, "A");
    weft_component big = tw_comp(w, "Big", 256, 16, WEFT_STORAGE_TABLE, 0);
    weft_entity e = weft_spawn(w);
    weft_commands *cb = weft_commands_create(w);
    uint8_t bv[256];
    for (int32_t i = 0; i < 20000; i++) {
        if (i % 3 == 0) {
            memset(bv, i & 0xFF, sizeof bv);
            assert_int_equal(weft_cmd_insert(cb, e, big, bv, sizeof bv), WEFT_OK);
        }
        assert_int_equal(weft_cmd_insert(cb, e, a, &i, sizeof i), WEFT_OK);
    }
    assert_int_equal(weft_commands_count(cb), 20000 + 6667);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    assert_int_equal(get_i(w, e, a), 19999);
    const uint8_t *p = weft_get(w, e, big, 256);
    assert_non_null(p);
    assert_int_equal(p[17], 19998 & 0xFF);
    weft_commands_destroy(cb);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tw_setup, tw_teardown)
    const struct CMUnitTest tests[] = {
        T(cmd_fifo_within_buffer),
        T(cmd_values_copied_at_record),
        T(cmd_spawn_reserved_id),
        T(cmd_reserved_used_before_its_spawn),
        T(cmd_dead_entity_policy),
        T(cmd_dead_entity_each_kind),
        T(cmd_try_variants_silent),
        T(cmd_resource_insert_remove),
        T(cmd_resource_tracked),
        T(cmd_custom_order_payload_drop),
        T(cmd_custom_drop_on_buffer_destroy),
        T(cmd_custom_drop_on_world_destroy),
        T(cmd_custom_nested_world_buffer_order),
        T(cmd_tracked_values_destroyed_once),
        T(cmd_buffer_reuse_steady_state),
        T(cmd_apply_wrong_phase),
        T(cmd_misuse_statuses),
        T(cmd_large_aligned_values),
        T(cmd_many_commands_fifo),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/fault/test_fault_events.c - allocation-failure injection beyond the
// core operations: command buffers (record and apply), observers
// (registration and dispatch, observers issuing commands), relationships
// (register, link, reparent, unlink, linked despawn of a subtree), messages
// (register, write, update, read; removed-component streams) and par_each.
// SPDX-License-Identifier: MIT
//
// The driver is the one of tests/fault/test_fault.c: for N = 1, 2, ... a
// fresh world runs the scenario with allocation N failing (once, then from
// N onwards), until a run no longer reaches allocation N. Every call must
// return WEFT_OK or WEFT_ERR_OUT_OF_MEMORY (0 / NULL with that status
// recorded). Where weft.h promises "nothing happened" on failure (recording
// a command, registering, relating, writing a message...), the step takes a
// snapshot first and the world must equal it afterwards: same hash, same
// live entities, components, resources and pending reservations, and the
// same command count. Steps that may half-succeed by contract (applying a
// buffer: each command on its own; observers' deferred work; a schedule
// run) are checked for consistency instead: weft_world_check, every
// relationship agreeing in both directions, commands applied whole or not
// at all. After a failure the scenario continues without failures and must
// complete; the world is then destroyed and the allocator must see every
// byte back and every tracked value destroyed exactly once.
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "needs_threads.h"

#include "fault.h"
#include "test_world.h"
#include "weft.h"

#define MAX_N 20000
#define NE 64

typedef struct fx {
    tw_fixture *f;
    weft_world *w;
    weft_component pos;   // 8 bytes, table
    weft_component vel;   // 16 bytes align 16, table
    weft_component sp;    // 12 bytes, sparse
    weft_component tag;   // table tag
    weft_component big;   // 4096 bytes align 4096, table (command values
                          // above 64 bytes get their own allocation)
    weft_component trk;   // tracked (ctor/copy/move/dtor hooks), table
    weft_component rel;   // a user relationship (0 until registered)
    weft_component child_of;
    weft_entity e[NE];
    int32_t ne;
    weft_entity spawned[512]; // ids returned by cmd_spawn, in order
    int32_t nspawned;
    weft_commands *cmds;
    weft_message_type msg;
    weft_message_cursor cur;
    int64_t written;      // messages written successfully
    int64_t read;         // messages read, checked in order
    int32_t progress;     // steps of the scenario already done (restartable)
    bool promise;         // the step being run promises "unchanged" on failure
    bool failed;          // some step of this attempt failed
    bool flush_failed;    // cmd_apply: reserved ids were left pending
    tw_snap pre;          // world before the current step
    int32_t pre_count;    // command count before the current step
    const char *scenario;
    int64_t n;
    bool sticky;
    // observer and custom-command bookkeeping
    int64_t custom_runs;
    int64_t custom_drops;
    int64_t obs_calls[8];
    int64_t obs_bad;      // an observer saw a state its event rules out
    weft_event ev;
    weft_schedule *sched;
    atomic_llong chunks;
} fx;

// Snapshot the world before a fallible step; allocations made by the
// snapshot itself neither count nor fail.
static void pre(fx *x, bool promise)
{
    tw_alloc_pause(&x->f->alloc, true);
    x->pre = tw_snap_take(x->w);
    x->pre_count = x->cmds != NULL ? weft_commands_count(x->cmds) : 0;
    x->promise = promise;
    tw_alloc_pause(&x->f->alloc, false);
}

static weft_status handle_status(fx *x, bool ok)
{
    if (ok) {
        return WEFT_OK;
    }
    weft_status st = weft_last_status(x->w);
    return st == WEFT_OK ? WEFT_ERR_INTERNAL : st;
}

static uint64_t val64(int32_t i)
{
    return 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
}

static void register_all(fx *x)
{
    x->pos = tw_comp(x->w, "pos", 8, 8, WEFT_STORAGE_TABLE, 0);
    x->vel = tw_comp(x->w, "vel", 16, 16, WEFT_STORAGE_TABLE, 0);
    x->sp = tw_comp(x->w, "sp", 12, 4, WEFT_STORAGE_SPARSE, 0);
    x->tag = tw_comp(x->w, "tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    x->big = tw_comp(x->w, "big", 4096, 4096, WEFT_STORAGE_TABLE, 0);
    x->trk = tw_tracked_register(x->w, "trk", WEFT_STORAGE_TABLE, &x->f->tracker);
}

static void spawn_plain(fx *x, int32_t count)
{
    for (int32_t i = 0; i < count && x->ne < NE; i++) {
        uint64_t p = val64(x->ne);
        weft_value v = {x->pos, 8, &p};
        x->e[x->ne] = weft_spawn_with(x->w, &v, 1);
        assert_true(x->e[x->ne] != 0);
        x->ne++;
    }
}

// Both directions of a relationship agree: every source's target is alive
// and lists the source exactly once; every listed source points back.
static void expect_relationship_consistent(fx *x, weft_component rel)
{
    if (rel == 0) {
        return;
    }
    weft_component targets = weft_relationship_targets(x->w, rel);
    assert_true(targets != 0);
    for (int pass = 0; pass < 2; pass++) {
        weft_query_desc qd;
        memset(&qd, 0, sizeof qd);
        qd.terms[0].id = pass == 0 ? rel : targets;
        qd.terms[0].access = WEFT_ACCESS_NONE;
        qd.terms[0].oper = WEFT_OPER_WITH;
        qd.term_count = 1;
        tw_alloc_pause(&x->f->alloc, true);
        weft_query *q = weft_query_create(x->w, &qd);
        assert_non_null(q);
        weft_iter it;
        assert_int_equal(weft_query_iter(x->w, q, &it), WEFT_OK);
        while (weft_iter_next(&it)) {
            const weft_entity *es = weft_iter_entities(&it);
            for (int32_t i = 0; i < weft_iter_count(&it); i++) {
                weft_entity e = es[i];
                if (pass == 0) {
                    weft_entity t = weft_related(x->w, e, rel);
                    if (t == 0 || !weft_is_alive(x->w, t)) {
                        fail_msg("%s N=%lld: source %llx points at dead %llx", x->scenario,
                                 (long long)x->n, (unsigned long long)e,
                                 (unsigned long long)t);
                    }
                    int32_t n = 0;
                    const weft_entity *src = weft_related_sources(x->w, t, rel, &n);
                    int32_t seen = 0;
                    for (int32_t k = 0; k < n; k++) {
                        seen += src[k] == e;
                    }
                    if (seen != 1) {
                        fail_msg("%s N=%lld%s: target %llx lists source %llx %d times",
                                 x->scenario, (long long)x->n, x->sticky ? " sticky" : "",
                                 (unsigned long long)t, (unsigned long long)e, (int)seen);
                    }
                } else {
                    int32_t n = 0;
                    const weft_entity *src = weft_related_sources(x->w, e, rel, &n);
                    for (int32_t k = 0; k < n; k++) {
                        if (weft_related(x->w, src[k], rel) != e) {
                            fail_msg("%s N=%lld%s: %llx lists %llx, which points elsewhere",
                                     x->scenario, (long long)x->n, x->sticky ? " sticky" : "",
                                     (unsigned long long)e, (unsigned long long)src[k]);
                        }
                    }
                }
            }
        }
        weft_iter_fini(&it);
        weft_query_destroy(x->w, q);
        tw_alloc_pause(&x->f->alloc, false);
    }
}

// ---- scenarios ----

typedef struct scenario {
    const char *name;
    void (*prepare)(fx *x);
    weft_status (*run)(fx *x);
    void (*verify)(fx *x);
} scenario;

// -- commands: record --

static void custom_fn(weft_world *w, void *payload, void *user)
{
    (void)w;
    fx *x = user;
    const unsigned char *p = payload;
    if (p[0] != 0xAB || p[199] != 0xCD) {
        x->obs_bad++;
    }
    x->custom_runs++;
}

static void custom_drop(void *payload, void *user)
{
    (void)payload;
    fx *x = user;
    x->custom_drops++;
}

static void prep_record(fx *x)
{
    register_all(x);
    spawn_plain(x, 4);
}

static weft_status run_record(fx *x)
{
    enum { SPAWNS = 40, BIGS = 24 };
    weft_status st = WEFT_OK;
    while (st == WEFT_OK && x->progress < 8 + SPAWNS + BIGS) {
        int32_t step = x->progress;
        if (step == 0) {
            pre(x, true);
            x->cmds = weft_commands_create(x->w);
            st = handle_status(x, x->cmds != NULL);
        } else if (step == 1 || (step >= 8 && step < 8 + SPAWNS)) {
            uint64_t p = val64(x->nspawned);
            unsigned char v[16] = {(unsigned char)x->nspawned};
            tw_tracked t;
            tw_tracked_make(&t, (uint64_t)x->nspawned);
            weft_value vals[3] = {{x->pos, 8, &p}, {x->vel, 16, v}, {x->trk, sizeof t, &t}};
            pre(x, true);
            weft_entity e = weft_cmd_spawn(x->cmds, vals, 3);
            st = handle_status(x, e != 0);
            if (e != 0) {
                x->spawned[x->nspawned++] = e;
            }
        } else if (step == 2) {
            pre(x, true);
            st = weft_cmd_insert(x->cmds, x->e[0], x->big, NULL, 4096);
        } else if (step == 3) {
            unsigned char s[12] = {3};
            tw_tracked t;
            tw_tracked_make(&t, 33);
            weft_value many[3] = {{x->tag, 0, NULL}, {x->trk, sizeof t, &t}, {x->sp, 12, s}};
            pre(x, true);
            st = weft_cmd_insert_many(x->cmds, x->e[1], many, 3);
        } else if (step == 4) {
            pre(x, true);
            st = weft_cmd_remove(x->cmds, x->e[2], x->pos);
        } else if (step == 5) {
            pre(x, true);
            st = weft_cmd_despawn(x->cmds, x->e[3]);
        } else if (step == 6) {
            uint64_t r = 77;
            pre(x, true);
            st = weft_cmd_resource_insert(x->cmds, x->pos, &r, 8);
        } else if (step == 7) {
            unsigned char payload[200] = {0};
            payload[0] = 0xAB;
            payload[199] = 0xCD;
            pre(x, true);
            st = weft_cmd_custom(x->cmds, custom_fn, payload, sizeof payload, custom_drop, x);
        } else {
            // values above 64 bytes: one allocation each, and chunk growth
            unsigned char *b = calloc(1, 4096);
            assert_non_null(b);
            b[0] = (unsigned char)step;
            pre(x, true);
            st = weft_cmd_insert(x->cmds, x->e[0], x->big, b, 4096);
            free(b);
        }
        if (st == WEFT_OK) {
            x->progress++;
        }
    }
    return st;
}

static void verify_record(fx *x)
{
    assert_int_equal(weft_commands_count(x->cmds), 8 + 40 + 24 - 1);
    assert_int_equal(weft_commands_apply(x->w, x->cmds), WEFT_OK);
    assert_int_equal(weft_commands_count(x->cmds), 0);
    assert_int_equal(x->nspawned, 41);
    for (int32_t i = 0; i < x->nspawned; i++) {
        const uint64_t *p = weft_get(x->w, x->spawned[i], x->pos, 8);
        assert_non_null(p);
        assert_true(*p == val64(i));
        const tw_tracked *t = weft_get(x->w, x->spawned[i], x->trk, sizeof(tw_tracked));
        assert_non_null(t);
        assert_true(t->self == t && t->payload == (uint64_t)i);
    }
    const unsigned char *b = weft_get(x->w, x->e[0], x->big, 4096);
    assert_non_null(b);
    assert_int_equal(b[0], 8 + 40 + 23); // the last insert wins
    assert_true(weft_has(x->w, x->e[1], x->sp));
    assert_false(weft_has(x->w, x->e[2], x->pos));
    assert_false(weft_is_alive(x->w, x->e[3]));
    const uint64_t *r = weft_resource_get(x->w, x->pos, 8);
    assert_true(r != NULL && *r == 77);
    assert_int_equal(x->custom_runs, 1);
    assert_int_equal(x->custom_drops, 1);
    assert_int_equal(x->obs_bad, 0);
    weft_commands_destroy(x->cmds);
}

// -- commands: apply --

enum { APPLY_SPAWNS = 30 };

static void prep_apply(fx *x)
{
    register_all(x);
    spawn_plain(x, 8);
    x->cmds = weft_commands_create(x->w);
    assert_non_null(x->cmds);
    for (int32_t i = 0; i < APPLY_SPAWNS; i++) {
        uint64_t p = val64(100 + i);
        tw_tracked t;
        tw_tracked_make(&t, (uint64_t)i);
        unsigned char s[12] = {(unsigned char)i};
        weft_value vals[3] = {{x->pos, 8, &p}, {x->trk, sizeof t, &t}, {x->sp, 12, s}};
        x->spawned[x->nspawned] = weft_cmd_spawn(x->cmds, vals, i % 2 ? 3 : 2);
        assert_true(x->spawned[x->nspawned] != 0);
        x->nspawned++;
    }
    for (int32_t i = 0; i < 4; i++) {
        unsigned char v[16] = {(unsigned char)i};
        tw_tracked t;
        tw_tracked_make(&t, 1000u + (uint64_t)i);
        weft_value many[3] = {{x->vel, 16, v}, {x->trk, sizeof t, &t}, {x->tag, 0, NULL}};
        assert_int_equal(weft_cmd_insert_many(x->cmds, x->e[i], many, 3), WEFT_OK);
    }
    assert_int_equal(weft_cmd_insert(x->cmds, x->e[4], x->big, NULL, 4096), WEFT_OK);
    assert_int_equal(weft_cmd_remove(x->cmds, x->e[5], x->pos), WEFT_OK);
    assert_int_equal(weft_cmd_despawn(x->cmds, x->e[6]), WEFT_OK);
    assert_int_equal(weft_cmd_despawn(x->cmds, x->spawned[0]), WEFT_OK);
    uint64_t r = 9;
    assert_int_equal(weft_cmd_resource_insert(x->cmds, x->big, NULL, 4096), WEFT_OK);
    assert_int_equal(weft_cmd_resource_insert(x->cmds, x->pos, &r, 8), WEFT_OK);
    unsigned char payload[200] = {0};
    payload[0] = 0xAB;
    payload[199] = 0xCD;
    assert_int_equal(weft_cmd_custom(x->cmds, custom_fn, payload, sizeof payload, custom_drop,
                                     x),
                     WEFT_OK);
}

// Each applied command took effect whole or not at all. One exception, as
// weft_commands_apply documents: when the flush that makes a spawn's
// reserved id live fails, the id stays reserved and a later flush makes it
// an entity with no components (`flush_failed`).
static void expect_apply_atomic(fx *x, bool flush_failed)
{
    for (int32_t i = 1; i < x->nspawned; i++) {
        weft_entity e = x->spawned[i];
        if (!weft_is_alive(x->w, e)) {
            continue;
        }
        if (flush_failed && !weft_has(x->w, e, x->pos) && !weft_has(x->w, e, x->trk) &&
            !weft_has(x->w, e, x->sp)) {
            continue;
        }
        const uint64_t *p = weft_get(x->w, e, x->pos, 8);
        if (p == NULL || *p != val64(100 + i) || !weft_has(x->w, e, x->trk) ||
            weft_has(x->w, e, x->sp) != (i % 2 == 1)) {
            fail_msg("%s N=%lld%s: spawned entity %d is alive but incomplete", x->scenario,
                     (long long)x->n, x->sticky ? " sticky" : "", (int)i);
        }
    }
    for (int32_t i = 0; i < 4; i++) {
        bool v = weft_has(x->w, x->e[i], x->vel);
        if (weft_has(x->w, x->e[i], x->trk) != v || weft_has(x->w, x->e[i], x->tag) != v) {
            fail_msg("%s N=%lld: insert_many on entity %d applied in part", x->scenario,
                     (long long)x->n, (int)i);
        }
    }
    assert_int_equal(x->custom_drops, 1);
    assert_true(x->custom_runs <= 1);
    assert_int_equal(x->obs_bad, 0);
}

static weft_status run_apply(fx *x)
{
    if (x->progress > 0) {
        return WEFT_OK;
    }
    pre(x, false);
    weft_status st = weft_commands_apply(x->w, x->cmds);
    x->progress++;
    assert_int_equal(weft_commands_count(x->cmds), 0);
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(x->w, &s), WEFT_OK);
    x->flush_failed = s.pending_reserved > 0;
    if (x->flush_failed) {
        assert_int_equal(st, WEFT_ERR_OUT_OF_MEMORY);
    }
    expect_apply_atomic(x, x->flush_failed);
    return st;
}

static void verify_apply(fx *x)
{
    assert_int_equal(weft_entity_flush(x->w), WEFT_OK);
    expect_apply_atomic(x, x->flush_failed);
    if (!x->failed) {
        for (int32_t i = 1; i < x->nspawned; i++) {
            assert_true(weft_is_alive(x->w, x->spawned[i]));
        }
        assert_false(weft_is_alive(x->w, x->spawned[0]));
        assert_false(weft_is_alive(x->w, x->e[6]));
        assert_int_equal(x->custom_runs, 1);
    }
    weft_commands_destroy(x->cmds);
}

// -- observers: registration --

static void obs_count(weft_world *w, weft_trigger *t, void *user)
{
    fx *x = user;
    int slot = t->event == x->ev ? 7 : (int)t->event;
    x->obs_calls[slot]++;
    if (t->event == WEFT_EVENT_ADD && !weft_has(w, t->entity, t->component)) {
        x->obs_bad++;
    }
}

static void prep_obs_register(fx *x)
{
    register_all(x);
    spawn_plain(x, 2);
}

static weft_status run_obs_register(fx *x)
{
    weft_status st = WEFT_OK;
    while (st == WEFT_OK && x->progress < 7) {
        weft_observer_desc d;
        memset(&d, 0, sizeof d);
        d.fn = obs_count;
        d.user = x;
        weft_event_desc ed;
        memset(&ed, 0, sizeof ed);
        ed.name = "ping";
        ed.payload_size = 8;
        pre(x, true);
        switch (x->progress) {
        case 0:
            x->ev = weft_event_register(x->w, &ed);
            st = handle_status(x, x->ev != 0);
            break;
        case 1:
            d.event = WEFT_EVENT_ADD;
            d.component = x->vel;
            st = handle_status(x, weft_observer_create(x->w, &d) != NULL);
            break;
        case 2:
            d.event = WEFT_EVENT_INSERT;
            d.component = x->sp;
            st = handle_status(x, weft_observer_create(x->w, &d) != NULL);
            break;
        case 3:
            d.event = WEFT_EVENT_REMOVE;
            d.component = x->pos;
            st = handle_status(x, weft_observer_create(x->w, &d) != NULL);
            break;
        case 4:
            d.event = WEFT_EVENT_DESPAWN;
            d.component = x->trk;
            st = handle_status(x, weft_observer_create(x->w, &d) != NULL);
            break;
        case 5:
            d.event = x->ev;
            d.entity = x->e[0];
            st = handle_status(x, weft_observer_create(x->w, &d) != NULL);
            break;
        default:
            d.event = x->ev;
            st = handle_status(x, weft_observer_create(x->w, &d) != NULL);
            break;
        }
        if (st == WEFT_OK) {
            x->progress++;
        }
    }
    return st;
}

static void verify_obs_register(fx *x)
{
    // each observer registered exactly once, none half-registered
    unsigned char v[16] = {0};
    unsigned char s[12] = {0};
    tw_tracked t;
    tw_tracked_make(&t, 5);
    weft_value vals[3] = {{x->vel, 16, v}, {x->sp, 12, s}, {x->trk, sizeof t, &t}};
    weft_entity e = weft_spawn_with(x->w, vals, 3);
    assert_true(e != 0);
    assert_int_equal(weft_remove(x->w, x->e[1], x->pos), WEFT_OK);
    assert_int_equal(weft_despawn(x->w, e), WEFT_OK);
    uint64_t p = 1;
    assert_int_equal(weft_trigger_event(x->w, x->ev, x->e[0], &p, 8, false), WEFT_OK);
    assert_int_equal(x->obs_calls[WEFT_EVENT_ADD], 1);
    assert_int_equal(x->obs_calls[WEFT_EVENT_INSERT], 1);
    assert_int_equal(x->obs_calls[WEFT_EVENT_REMOVE], 1);
    assert_int_equal(x->obs_calls[WEFT_EVENT_DESPAWN], 1);
    assert_int_equal(x->obs_calls[7], 2); // every-target + targeted
    assert_int_equal(x->obs_bad, 0);
}

// -- observers: dispatch, observers issuing commands --

// on ADD pos: insert vel (deferred) and a tracked value; on REMOVE pos:
// spawn a marker entity; on DESPAWN trk: despawn the entity's partner
// (stored in pos); custom event: insert sp on the target.
static void obs_add_pos(weft_world *w, weft_trigger *t, void *user)
{
    fx *x = user;
    x->obs_calls[0]++;
    if (!weft_has(w, t->entity, x->pos)) {
        x->obs_bad++;
    }
    unsigned char v[16] = {7};
    tw_tracked tr;
    tw_tracked_make(&tr, 9);
    weft_value many[2] = {{x->vel, 16, v}, {x->trk, sizeof tr, &tr}};
    weft_status st = weft_insert_many(w, t->entity, many, 2);
    if (st != WEFT_OK && st != WEFT_ERR_OUT_OF_MEMORY) {
        x->obs_bad++;
    }
}

static void obs_remove_pos(weft_world *w, weft_trigger *t, void *user)
{
    fx *x = user;
    x->obs_calls[1]++;
    if (!weft_has(w, t->entity, x->pos)) { // the value is still there
        x->obs_bad++;
    }
    weft_value tv = {x->tag, 0, NULL};
    weft_entity m = weft_spawn_with(w, &tv, 1);
    if (m == 0 && weft_last_status(w) != WEFT_ERR_OUT_OF_MEMORY) {
        x->obs_bad++;
    }
}

static void obs_despawn_trk(weft_world *w, weft_trigger *t, void *user)
{
    fx *x = user;
    x->obs_calls[2]++;
    const uint64_t *p = weft_get(w, t->entity, x->pos, 8);
    if (p != NULL && *p != 0 && weft_is_alive(w, (weft_entity)*p)) {
        weft_status st = weft_despawn(w, (weft_entity)*p);
        if (st != WEFT_OK && st != WEFT_ERR_OUT_OF_MEMORY) {
            x->obs_bad++;
        }
    }
}

static void obs_event(weft_world *w, weft_trigger *t, void *user)
{
    fx *x = user;
    x->obs_calls[3]++;
    unsigned char s[12] = {1};
    weft_status st = weft_insert(w, t->entity, x->sp, s, 12);
    if (st != WEFT_OK && st != WEFT_ERR_OUT_OF_MEMORY) {
        x->obs_bad++;
    }
}

static void prep_dispatch(fx *x)
{
    register_all(x);
    weft_event_desc ed;
    memset(&ed, 0, sizeof ed);
    ed.name = "hit";
    x->ev = weft_event_register(x->w, &ed);
    assert_true(x->ev != 0);
    weft_observer_fn fns[4] = {obs_add_pos, obs_remove_pos, obs_despawn_trk, obs_event};
    weft_event evs[4] = {WEFT_EVENT_ADD, WEFT_EVENT_REMOVE, WEFT_EVENT_DESPAWN, x->ev};
    weft_component cs[4] = {x->pos, x->pos, x->trk, 0};
    for (int i = 0; i < 4; i++) {
        weft_observer_desc d;
        memset(&d, 0, sizeof d);
        d.event = evs[i];
        d.component = cs[i];
        d.fn = fns[i];
        d.user = x;
        assert_non_null(weft_observer_create(x->w, &d));
    }
}

static weft_status run_dispatch(fx *x)
{
    enum { SPAWNS = 12 };
    weft_status st = WEFT_OK;
    while (st == WEFT_OK && x->progress < SPAWNS + 8) {
        int32_t step = x->progress;
        pre(x, false);
        if (step < SPAWNS) {
            // spawn with pos (ADD observer inserts vel + trk); the value
            // of pos names the previous entity (the despawn partner)
            uint64_t p = x->ne > 0 ? (uint64_t)x->e[x->ne - 1] : 0;
            weft_value v = {x->pos, 8, &p};
            weft_entity e = weft_spawn_with(x->w, &v, 1);
            st = handle_status(x, e != 0);
            if (e != 0) {
                x->e[x->ne++] = e;
            }
        } else if (step < SPAWNS + 3) {
            st = weft_remove(x->w, x->e[step - SPAWNS], x->pos);
        } else if (step < SPAWNS + 6) {
            st = weft_trigger_event(x->w, x->ev, x->e[step - SPAWNS], NULL, 0, false);
        } else {
            weft_entity e = x->e[x->ne - 1 - (step - SPAWNS - 6) * 3];
            st = weft_is_alive(x->w, e) ? weft_despawn(x->w, e) : WEFT_OK;
        }
        if (st == WEFT_OK) {
            x->progress++;
        } else {
            x->progress++; // the step is done either way: its effects are checked below
            return st;
        }
    }
    return st;
}

static void verify_dispatch(fx *x)
{
    assert_int_equal(x->obs_bad, 0);
    for (int32_t i = 0; i < x->ne; i++) {
        weft_entity e = x->e[i];
        if (!weft_is_alive(x->w, e)) {
            continue;
        }
        // the ADD observer's insert_many is one command: both or neither
        assert_int_equal(weft_has(x->w, e, x->vel), weft_has(x->w, e, x->trk));
    }
}

// -- relationships --

static void prep_rel(fx *x)
{
    register_all(x);
    spawn_plain(x, 30);
}

// Steps: register "likes" and ChildOf; e[2..6] like e[0], e[7] likes e[1];
// a binary tree under e[8] (children of e[k]: e[2k - 7], e[2k - 6], for
// k = 8 .. 28); reparent e[11..13] under the root e[29]; detach e[14];
// unrelate e[3]; e[4] switches to e[1]; despawn e[0] (unlinked target);
// then the linked despawns of the subtrees of e[11], e[29] and e[8].
enum { REL_STEPS = 38, REL_DESPAWNS = 35 };

static weft_status run_rel(fx *x)
{
    weft_status st = WEFT_OK;
    while (st == WEFT_OK && x->progress < REL_STEPS) {
        int32_t step = x->progress;
        pre(x, true);
        if (step == 0) {
            weft_relationship_desc d;
            memset(&d, 0, sizeof d);
            d.name = "likes";
            x->rel = weft_relationship_register(x->w, &d);
            st = handle_status(x, x->rel != 0);
        } else if (step == 1) {
            x->child_of = weft_child_of(x->w);
            st = handle_status(x, x->child_of != 0);
        } else if (step < 8) {
            st = weft_relate(x->w, x->e[step], x->rel, step == 7 ? x->e[1] : x->e[0]);
        } else if (step < 28) {
            int32_t k = step + 1; // 9 .. 28
            int32_t parent = k <= 10 ? 8 : (k - 9) / 2 + 8;
            st = weft_set_parent(x->w, x->e[k], x->e[parent]);
        } else if (step < 31) {
            st = weft_set_parent(x->w, x->e[step - 17], x->e[29]);
        } else if (step == 31) {
            st = weft_remove_parent(x->w, x->e[14]);
        } else if (step == 32) {
            st = weft_unrelate(x->w, x->e[3], x->rel);
        } else if (step == 33) {
            st = weft_relate(x->w, x->e[4], x->rel, x->e[1]); // replace the target
        } else if (step == 34) {
            st = weft_despawn(x->w, x->e[0]);
        } else {
            int32_t root = step == 35 ? 11 : step == 36 ? 29 : 8;
            st = weft_despawn(x->w, x->e[root]);
        }
        if (st == WEFT_OK) {
            x->progress++;
        }
        expect_relationship_consistent(x, x->rel);
        expect_relationship_consistent(x, x->child_of);
    }
    return st;
}

static void verify_rel(fx *x)
{
    expect_relationship_consistent(x, x->rel);
    expect_relationship_consistent(x, x->child_of);
    assert_true(weft_is_alive(x->w, x->e[1]));
    int32_t n = 0;
    weft_related_sources(x->w, x->e[1], x->rel, &n);
    assert_int_equal(n, 2); // e[7], e[4]
    assert_int_equal(weft_related(x->w, x->e[3], x->rel), 0);
    // sources of a dead (unlinked) target lost the relationship
    assert_int_equal(weft_related(x->w, x->e[2], x->rel), 0);
    assert_true(weft_is_alive(x->w, x->e[2]));
    for (int32_t k = 8; k < 30; k++) {
        bool alive = weft_is_alive(x->w, x->e[k]);
        // e[14] was detached with its children e[21], e[22]
        assert_int_equal(alive, k == 14 || k == 21 || k == 22);
    }
    assert_int_equal(weft_parent(x->w, x->e[21]), x->e[14]);
}

// -- linked despawn of a subtree larger than one command chunk --

enum { WIDE = 3000 };

static void prep_wide(fx *x)
{
    register_all(x);
    x->child_of = weft_child_of(x->w);
    assert_true(x->child_of != 0);
    spawn_plain(x, 2);
    for (int32_t i = 0; i < WIDE; i++) {
        uint64_t p = val64(i);
        weft_value v[2] = {{x->pos, 8, &p}, {x->child_of, sizeof(weft_entity), &x->e[0]}};
        weft_entity c = weft_spawn_with(x->w, v, 2);
        assert_true(c != 0);
        if (i < 10) {
            weft_value g[1] = {{x->child_of, sizeof(weft_entity), &c}};
            assert_true(weft_spawn_with(x->w, g, 1) != 0);
        }
    }
    expect_relationship_consistent(x, x->child_of);
}

static weft_status run_wide(fx *x)
{
    for (; x->progress < 1; x->progress++) {
        pre(x, true); // the whole subtree or nothing
        weft_status st = weft_despawn(x->w, x->e[0]);
        expect_relationship_consistent(x, x->child_of);
        if (st != WEFT_OK) {
            return st;
        }
    }
    return WEFT_OK;
}

static void verify_wide(fx *x)
{
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(x->w, &s), WEFT_OK);
    assert_int_equal(s.live_entities, 1); // e[1]
    assert_true(weft_is_alive(x->w, x->e[1]));
}

// -- messages and removed-component streams --

static void prep_msg(fx *x)
{
    register_all(x);
    spawn_plain(x, 40);
}

static weft_status run_msg(fx *x)
{
    weft_status st = WEFT_OK;
    while (st == WEFT_OK && x->progress < 130) {
        int32_t step = x->progress;
        if (step == 0) {
            weft_message_desc d;
            memset(&d, 0, sizeof d);
            d.name = "ping";
            d.size = 24;
            pre(x, true);
            x->msg = weft_message_register(x->w, &d);
            st = handle_status(x, x->msg != 0);
        } else if (step == 1) {
            pre(x, true);
            st = weft_removed_track(x->w, x->pos);
        } else if (step % 10 == 9) {
            // update, then read everything still readable
            pre(x, false);
            weft_messages_update(x->w);
            const uint64_t *m;
            while ((m = weft_message_read(x->w, x->msg, &x->cur, 24)) != NULL) {
                if (m[0] != (uint64_t)x->read || m[2] != val64((int32_t)x->read)) {
                    fail_msg("%s N=%lld: read message %llu, expected %lld", x->scenario,
                             (long long)x->n, (unsigned long long)m[0], (long long)x->read);
                }
                x->read++;
            }
            assert_int_equal(x->cur.missed, 0);
        } else if (step % 10 == 5 && step / 10 < x->ne) {
            pre(x, false); // the removal happens even if its record cannot be stored
            st = weft_remove(x->w, x->e[step / 10], x->pos);
        } else {
            uint64_t m[3] = {(uint64_t)x->written, 0, val64((int32_t)x->written)};
            pre(x, true);
            int64_t unread = weft_message_unread(x->w, x->msg, &x->cur);
            st = weft_message_write(x->w, x->msg, m, sizeof m);
            if (st == WEFT_OK) {
                x->written++;
            } else if (weft_message_unread(x->w, x->msg, &x->cur) != unread) {
                fail_msg("%s N=%lld: a failed write changed the unread count", x->scenario,
                         (long long)x->n);
            }
        }
        if (st == WEFT_OK) {
            x->progress++;
        }
    }
    return st;
}

static void verify_msg(fx *x)
{
    const uint64_t *m;
    while ((m = weft_message_read(x->w, x->msg, &x->cur, 24)) != NULL) {
        assert_true(m[0] == (uint64_t)x->read);
        x->read++;
    }
    assert_int_equal(x->read, x->written);
    assert_int_equal(x->cur.missed, 0);
    weft_message_desc d;
    memset(&d, 0, sizeof d);
    d.name = "pong";
    d.size = 8;
    assert_true(weft_message_register(x->w, &d) != 0);
}

// -- par_each: chunk tasks recording commands --

static void par_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    fx *x = user;
    atomic_fetch_add_explicit(&x->chunks, 1, memory_order_relaxed);
    while (weft_iter_next(it)) {
        const weft_entity *es = weft_iter_entities(it);
        uint64_t *p = weft_iter_field_mut(it, 0, 8);
        for (int32_t i = 0; i < weft_iter_count(it); i++) {
            p[i] += 1;
            if (i % 4 == 0) {
                // failures are the system's to report; a lost insert is
                // redone by the next run
                weft_cmd_insert(cmds, es[i], x->tag, NULL, 0);
            }
        }
    }
}

static void par_system(weft_system_ctx *ctx, void *user)
{
    weft_status st = weft_system_par_each(ctx, 0, par_chunk, user, 64);
    if (st != WEFT_OK) {
        weft_system_fail(ctx, st, "par_each");
    }
}

static void prep_par(fx *x)
{
    register_all(x);
    static uint64_t pv[2000];
    for (int i = 0; i < 2000; i++) {
        pv[i] = 0;
    }
    weft_value cols[1] = {{x->pos, 8, pv}};
    assert_int_equal(weft_spawn_bulk(x->w, cols, 1, 2000, NULL), WEFT_OK);
    atomic_init(&x->chunks, 0);
}

static weft_status run_par(fx *x)
{
    weft_status st = WEFT_OK;
    while (st == WEFT_OK && x->progress < 6) {
        pre(x, x->progress < 3);
        if (x->progress == 0) {
            st = weft_world_set_threads(x->w, 2);
        } else if (x->progress == 1) {
            x->sched = weft_schedule_create(x->w, "par");
            st = handle_status(x, x->sched != NULL);
        } else if (x->progress == 2) {
            weft_query_desc q;
            memset(&q, 0, sizeof q);
            q.terms[0].id = x->pos;
            q.terms[0].access = WEFT_ACCESS_WRITE;
            q.term_count = 1;
            weft_system_desc d;
            memset(&d, 0, sizeof d);
            d.name = "par";
            d.fn = par_system;
            d.user = x;
            d.queries = &q;
            d.query_count = 1;
            st = handle_status(x, weft_schedule_add_system(x->sched, &d) != 0);
        } else {
            st = weft_schedule_run(x->sched, 0.016);
        }
        if (st == WEFT_OK) {
            x->progress++;
        }
    }
    return st;
}

static void verify_par(fx *x)
{
    // one clean run: every fourth row of each chunk gets the tag
    atomic_store(&x->chunks, 0);
    assert_int_equal(weft_schedule_run(x->sched, 0.016), WEFT_OK);
    assert_true(atomic_load(&x->chunks) >= 2); // the rows really split
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(x->w, &s), WEFT_OK);
    assert_int_equal(s.live_entities, 2000);
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0].id = x->tag;
    q.terms[0].oper = WEFT_OPER_WITH;
    q.terms[0].access = WEFT_ACCESS_NONE;
    q.term_count = 1;
    weft_query *qq = weft_query_create(x->w, &q);
    assert_non_null(qq);
    assert_true(weft_query_count(x->w, qq) >= 500);
    weft_query_destroy(x->w, qq);
}

// ---- driver (tests/support/fault.c) ----

static void case_prepare(tw_fault *c)
{
    const scenario *sc = c->user;
    fx *x = calloc(1, sizeof *x);
    assert_non_null(x);
    x->f = tw_fixture_new();
    assert_non_null(x->f);
    assert_non_null(x->f->w);
    x->w = x->f->w;
    x->scenario = sc->name;
    x->n = c->n;
    x->sticky = c->sticky;
    sc->prepare(x);
    c->f = x->f;
    c->state = x;
}

static weft_status case_run(tw_fault *c)
{
    const scenario *sc = c->user;
    return sc->run(c->state);
}

// A step that promises "unchanged" left the world and the buffer as they
// were (a step that may half-succeed can record later errors, e.g. a
// command naming an entity whose spawn failed).
static void case_failed(tw_fault *c)
{
    fx *x = c->state;
    x->failed = true;
    if (!x->promise) {
        return;
    }
    assert_int_equal(weft_last_status(x->w), WEFT_ERR_OUT_OF_MEMORY);
    uint64_t h = weft_world_hash(x->w);
    weft_world_stats now;
    assert_int_equal(weft_world_get_stats(x->w, &now), WEFT_OK);
    if (h != x->pre.hash || now.live_entities != x->pre.stats.live_entities ||
        now.pending_reserved != x->pre.stats.pending_reserved) {
        fail_msg("%s: N=%lld%s: step %d failed but changed the world (hash "
                 "%016llx -> %016llx, live %lld -> %lld, pending %d -> %d)",
                 c->name, (long long)c->n, c->sticky ? " sticky" : "", (int)x->progress,
                 (unsigned long long)x->pre.hash, (unsigned long long)h,
                 (long long)x->pre.stats.live_entities, (long long)now.live_entities,
                 x->pre.stats.pending_reserved, now.pending_reserved);
    }
    tw_snap_expect_same_content(x->w, &x->pre);
    if (x->cmds != NULL && weft_commands_count(x->cmds) != x->pre_count) {
        fail_msg("%s: N=%lld%s: step %d failed but the buffer holds %d commands, %d before",
                 c->name, (long long)c->n, c->sticky ? " sticky" : "", (int)x->progress,
                 (int)weft_commands_count(x->cmds), (int)x->pre_count);
    }
}

static void case_verify(tw_fault *c)
{
    const scenario *sc = c->user;
    fx *x = c->state;
    sc->verify(x);
    assert_int_equal(weft_world_check(x->w), WEFT_OK);
}

static void case_finish(tw_fault *c)
{
    free(c->state); // the fixture goes next: zero live bytes, hook balance, tracked values
}

static const tw_fault_ops case_ops = {case_prepare, case_run, case_failed, case_verify,
                                      case_finish};

static void run_scenario(const scenario *sc, bool sticky)
{
    int64_t allocs = tw_fault_run(sc->name, &case_ops, (void *)sc, sticky, MAX_N);
    print_message("%s%s: %lld allocations, each failed in turn\n", sc->name,
                  sticky ? " (sticky)" : "", (long long)allocs);
}

static const scenario scenarios[] = {
    {"cmd_record", prep_record, run_record, verify_record},
    {"cmd_apply", prep_apply, run_apply, verify_apply},
    {"observer_register", prep_obs_register, run_obs_register, verify_obs_register},
    {"observer_dispatch", prep_dispatch, run_dispatch, verify_dispatch},
    {"relationship", prep_rel, run_rel, verify_rel},
    {"linked_despawn_wide", prep_wide, run_wide, verify_wide},
    {"messages", prep_msg, run_msg, verify_msg},
    {"par_each", prep_par, run_par, verify_par},
};

static void fault_par_each_needs_threads(void)
{
    NEEDS_THREADS("out of memory in chunk tasks, which par_each makes only on several workers");
}

static void fault_scenario(void **state)
{
    const scenario *sc = *state;
    if (sc->run == run_par) {
        fault_par_each_needs_threads();
    }
    run_scenario(sc, false);
    run_scenario(sc, true);
}

int main(void)
{
    enum { NS = sizeof scenarios / sizeof scenarios[0] };
    struct CMUnitTest tests[NS];
    static char names[NS][64];
    for (size_t i = 0; i < NS; i++) {
        snprintf(names[i], sizeof names[i], "fault_%s", scenarios[i].name);
        struct CMUnitTest t = cmocka_unit_test_prestate(fault_scenario, (void *)&scenarios[i]);
        t.name = names[i];
        tests[i] = t;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/api/test_api_relationship_paths.c - every path that stores a
// relationship value admits it first and lands it whole or not at all.
//
// A relationship value can reach storage through weft_insert,
// weft_insert_many, weft_spawn_with, weft_spawn_bulk, weft_relate,
// weft_set_parent, a command buffer's insert and spawn, the world's own
// deferral inside a query iteration, and the JSON readers. Two tables run
// over all of them:
//   - refused values (a dead target, target 0, the entity itself, a
//     descendant: a cycle) change nothing, not even an existing parent,
//     and weft_world_check (INV-12) passes;
//   - with the n-th allocation failing, for every n until the call gets
//     through, the world either holds the relationship from both sides
//     or is as before, and INV-12 holds;
// and a requirement, which would give every entity the same target, is
// refused for relationships.
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

typedef struct pos {
    float x, y;
} pos;

typedef struct ctx {
    weft_world *w;
    weft_component co;  // ChildOf
    weft_component pos;
    weft_query *q;      // over pos: the deferral path iterates it
} ctx;

// One path: stores ChildOf(target) on `c` (or on a new entity when the
// path spawns; *made gets it). Returns what the call (or the apply)
// reported.
typedef weft_status (*path_fn)(ctx *x, weft_entity c, weft_entity target, weft_entity *made);

static weft_status via_insert(ctx *x, weft_entity c, weft_entity t, weft_entity *made)
{
    (void)made;
    return weft_insert(x->w, c, x->co, &t, sizeof t);
}

static weft_status via_insert_many(ctx *x, weft_entity c, weft_entity t, weft_entity *made)
{
    (void)made;
    pos p = {1, 2};
    weft_value v[2] = {{x->pos, sizeof p, &p}, {x->co, sizeof t, &t}};
    return weft_insert_many(x->w, c, v, 2);
}

static weft_status via_relate(ctx *x, weft_entity c, weft_entity t, weft_entity *made)
{
    (void)made;
    return weft_relate(x->w, c, x->co, t);
}

static weft_status via_set_parent(ctx *x, weft_entity c, weft_entity t, weft_entity *made)
{
    (void)made;
    return weft_set_parent(x->w, c, t);
}

static weft_status via_spawn_with(ctx *x, weft_entity c, weft_entity t, weft_entity *made)
{
    (void)c;
    pos p = {1, 2};
    weft_value v[2] = {{x->pos, sizeof p, &p}, {x->co, sizeof t, &t}};
    weft_clear_error(x->w);
    *made = weft_spawn_with(x->w, v, 2);
    return *made ? WEFT_OK : weft_last_status(x->w);
}

static weft_status via_spawn_bulk(ctx *x, weft_entity c, weft_entity t, weft_entity *made)
{
    (void)c;
    weft_entity ts[3] = {t, t, t};
    weft_entity out[3] = {0, 0, 0};
    weft_value v[1] = {{x->co, sizeof t, ts}};
    weft_status st = weft_spawn_bulk(x->w, v, 1, 3, out);
    *made = out[1];
    return st;
}

static weft_status apply_buffer(ctx *x, weft_commands *cb)
{
    weft_clear_error(x->w);
    weft_status st = weft_commands_apply(x->w, cb);
    weft_commands_destroy(cb);
    return st != WEFT_OK ? st : weft_last_status(x->w);
}

static weft_status via_cmd_insert(ctx *x, weft_entity c, weft_entity t, weft_entity *made)
{
    (void)made;
    weft_commands *cb = weft_commands_create(x->w);
    if (!cb) {
        return weft_last_status(x->w);
    }
    weft_status st = weft_cmd_insert(cb, c, x->co, &t, sizeof t);
    if (st != WEFT_OK) {
        weft_commands_destroy(cb);
        return st;
    }
    return apply_buffer(x, cb);
}

static weft_status via_cmd_spawn(ctx *x, weft_entity c, weft_entity t, weft_entity *made)
{
    (void)c;
    weft_commands *cb = weft_commands_create(x->w);
    if (!cb) {
        return weft_last_status(x->w);
    }
    pos p = {1, 2};
    weft_value v[2] = {{x->pos, sizeof p, &p}, {x->co, sizeof t, &t}};
    *made = weft_cmd_spawn(cb, v, 2);
    if (!*made) {
        weft_status st = weft_last_status(x->w);
        weft_commands_destroy(cb);
        return st;
    }
    return apply_buffer(x, cb);
}

// Inside a query iteration the world defers the insert; it lands (or is
// refused) when the iteration ends.
static weft_status via_deferred(ctx *x, weft_entity c, weft_entity t, weft_entity *made)
{
    (void)made;
    weft_iter it;
    weft_status st = weft_query_iter(x->w, x->q, &it);
    if (st != WEFT_OK) {
        return st;
    }
    weft_clear_error(x->w);
    st = weft_insert(x->w, c, x->co, &t, sizeof t);
    weft_iter_fini(&it);
    return st != WEFT_OK ? st : weft_last_status(x->w);
}

static weft_status via_json_entity(ctx *x, weft_entity c, weft_entity t, weft_entity *made)
{
    (void)made;
    char text[128];
    snprintf(text, sizeof text, "{\"components\":{\"weft.ChildOf\":{\"target\":%llu}}}",
             (unsigned long long)t);
    return weft_json_read_entity(x->w, c, text, strlen(text));
}

static weft_status via_json_spawn(ctx *x, weft_entity c, weft_entity t, weft_entity *made)
{
    (void)c;
    char text[128];
    snprintf(text, sizeof text, "{\"components\":{\"weft.ChildOf\":{\"target\":%llu}}}",
             (unsigned long long)t);
    weft_clear_error(x->w);
    *made = weft_json_spawn(x->w, text, strlen(text));
    return *made ? WEFT_OK : weft_last_status(x->w);
}

typedef struct path {
    const char *name;
    path_fn fn;
    bool spawns;   // makes its own source (no self or cycle case)
    bool deferred; // the status comes from an apply, not the call
    bool json;     // needs the JSON readers (built with jansson)
} path;

static const path PATHS[] = {
    {"weft_insert", via_insert, false, false, false},
    {"weft_insert_many", via_insert_many, false, false, false},
    {"weft_relate", via_relate, false, false, false},
    {"weft_set_parent", via_set_parent, false, false, false},
    {"weft_spawn_with", via_spawn_with, true, false, false},
    {"weft_spawn_bulk", via_spawn_bulk, true, false, false},
    {"weft_cmd_insert", via_cmd_insert, false, true, false},
    {"weft_cmd_spawn", via_cmd_spawn, true, true, false},
    {"deferred weft_insert", via_deferred, false, true, false},
    {"weft_json_read_entity", via_json_entity, false, false, true},
    {"weft_json_spawn", via_json_spawn, true, false, true},
};
#define NPATHS ((int)(sizeof PATHS / sizeof PATHS[0]))

static void ctx_init(ctx *x, weft_world *w)
{
    x->w = w;
    x->co = weft_child_of(w);
    x->pos = tw_comp(w, "Pos", sizeof(pos), _Alignof(pos), WEFT_STORAGE_TABLE, 0);
    weft_query_desc qd;
    memset(&qd, 0, sizeof qd);
    qd.terms[0].id = x->pos;
    qd.terms[0].access = WEFT_ACCESS_READ;
    qd.term_count = 1;
    x->q = weft_query_create(w, &qd);
    assert_non_null(x->q);
}

static bool json_available(weft_world *w)
{
    weft_entity e = weft_spawn(w);
    const char *text = "{\"components\":{}}";
    bool ok = weft_json_read_entity(w, e, text, strlen(text)) == WEFT_OK;
    weft_despawn(w, e);
    weft_clear_error(w);
    return ok;
}

// The refused values, per path: the source keeps its old parent, nothing
// else changes, and the call (or its apply) says RELATIONSHIP or, where
// the target handle itself is refused first, INVALID_ENTITY/STALE_ENTITY
// (INVALID_ARG from the JSON reader for target 0).
static void refused_values_change_nothing(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    ctx x;
    ctx_init(&x, w);
    bool json = json_available(w);
    int rows = 0;
    for (int p = 0; p < NPATHS; p++) {
        if (PATHS[p].json && !json) {
            continue;
        }
        for (int kind = 0; kind < 4; kind++) { // dead, 0, self, descendant
            if (PATHS[p].spawns && kind >= 2) {
                continue;
            }
            weft_entity old = weft_spawn(w);
            pos pv = {0, 0};
            weft_entity c = weft_spawn_with(w, &(weft_value){x.pos, sizeof pv, &pv}, 1);
            assert_int_equal(weft_set_parent(w, c, old), WEFT_OK);
            weft_entity kid = weft_spawn(w);
            assert_int_equal(weft_set_parent(w, kid, c), WEFT_OK);
            weft_entity dead = weft_spawn(w);
            assert_int_equal(weft_despawn(w, dead), WEFT_OK);
            weft_entity target = kind == 0 ? dead : kind == 1 ? 0 : kind == 2 ? c : kid;
            tw_snap before = tw_snap_take(w);
            weft_clear_error(w);
            weft_entity made = 0;
            weft_status st = PATHS[p].fn(&x, c, target, &made);
            if (st != WEFT_ERR_RELATIONSHIP && st != WEFT_ERR_STALE_ENTITY &&
                st != WEFT_ERR_INVALID_ENTITY && !(kind == 1 && st == WEFT_ERR_INVALID_ARG)) {
                fail_msg("%s, refused kind %d: answered %s (%s)", PATHS[p].name, kind,
                         weft_status_name(st), weft_last_error(w));
            }
            if (weft_parent(w, c) != old) {
                fail_msg("%s, refused kind %d: the source lost its parent", PATHS[p].name,
                         kind);
            }
            if (made != 0 && weft_is_alive(w, made)) {
                fail_msg("%s, refused kind %d: an entity was spawned", PATHS[p].name, kind);
            }
            tw_snap_expect_same_content(w, &before);
            assert_int_equal(weft_despawn(w, old), WEFT_OK); // takes c and kid along
            rows++;
        }
    }
    assert_true(rows >= 30);
}

// Out of memory at every allocation a path makes: all or nothing, INV-12
// always holds.
static void allocation_failures_land_whole_or_not_at_all(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    ctx x;
    ctx_init(&x, w);
    bool json = json_available(w);
    for (int p = 0; p < NPATHS; p++) {
        if (PATHS[p].json && !json) {
            continue;
        }
        bool landed = false;
        int64_t n = 1;
        for (; !landed && n < 4000; n++) {
            // a fresh target without a list: the path must give it one
            weft_entity target = weft_spawn(w);
            pos pv = {0, 0};
            weft_entity c = weft_spawn_with(w, &(weft_value){x.pos, sizeof pv, &pv}, 1);
            assert_true(target && c);
            tw_snap before = tw_snap_take(w);
            weft_entity made = 0;
            tw_alloc_fail_nth(&f->alloc, n, false);
            weft_status st = PATHS[p].fn(&x, c, target, &made);
            bool injected = tw_alloc_injected(&f->alloc) > 0;
            tw_alloc_disarm(&f->alloc);
            weft_clear_error(w);
            if (weft_world_check(w) != WEFT_OK) {
                fail_msg("%s, allocation %lld failing: %s", PATHS[p].name, (long long)n,
                         weft_last_error(w));
            }
            weft_entity src = PATHS[p].spawns ? made : c;
            bool related = src && weft_is_alive(w, src) && weft_parent(w, src) == target;
            if (st == WEFT_OK && !injected) {
                assert_true(related);
                landed = true;
            } else if (st != WEFT_OK) {
                if (related) {
                    fail_msg("%s, allocation %lld failing: answered %s but related",
                             PATHS[p].name, (long long)n, weft_status_name(st));
                }
                tw_snap_expect_same_content(w, &before);
            }
            assert_int_equal(weft_despawn(w, target), WEFT_OK);
            if (weft_is_alive(w, c)) {
                assert_int_equal(weft_despawn(w, c), WEFT_OK);
            }
            assert_int_equal(weft_world_check(w), WEFT_OK);
        }
        if (!landed) {
            fail_msg("%s never landed", PATHS[p].name);
        }
    }
}

// A requirement gives every entity one default: it cannot name each
// source's own target, so requiring a relationship is refused, at
// registration and afterwards, for a user relationship as well.
static void relationships_cannot_be_required(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_relationship_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.name = "Likes";
    weft_component rels[2] = {weft_child_of(w), weft_relationship_register(w, &rd)};
    weft_component needy = tw_comp(w, "Needy", 4, 4, WEFT_STORAGE_TABLE, 0);
    for (int i = 0; i < 2; i++) {
        weft_entity t = weft_spawn(w);
        weft_require req;
        memset(&req, 0, sizeof req);
        req.id = rels[i];
        req.value = &t;
        req.size = sizeof t;
        weft_component_desc d;
        memset(&d, 0, sizeof d);
        d.name = i ? "NeedsLikes" : "NeedsParent";
        d.size = 4;
        d.align = 4;
        d.required = &req;
        d.required_count = 1;
        assert_int_equal(weft_component_register(w, &d), 0);
        tw_expect_error(f, WEFT_ERR_RELATIONSHIP, "cannot be required");
        assert_int_equal(weft_component_require(w, needy, &req, 1), WEFT_ERR_RELATIONSHIP);
        req.value = NULL;
        req.size = 0;
        assert_int_equal(weft_component_require(w, needy, &req, 1), WEFT_ERR_RELATIONSHIP);
    }
    uint32_t v = 7;
    weft_entity e = weft_spawn_with(w, &(weft_value){needy, sizeof v, &v}, 1);
    assert_true(e != 0);
    assert_int_equal(weft_parent(w, e), 0);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(refused_values_change_nothing, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(allocation_failures_land_whole_or_not_at_all, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(relationships_cannot_be_required, tw_setup, tw_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/api/test_api_require.c - black-box tests of required components
// (Bevy's #[require]): Bevy's Mesh3d example, the three
// default sources, transitive chains, cycles, diamond precedence, supplied
// and present values winning, one move per call, removal keeping what was
// required, hook/observer order, every structural path (spawn_with,
// spawn_bulk, insert, insert_many, command buffers, deferred inserts during
// an iteration), misuse statuses and allocation-failure injection.
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

// ---- helpers ----

typedef struct vec2 {
    float x, y;
} vec2;

static weft_component reg_full(weft_world *w, const char *name, size_t size,
                               weft_storage storage, const weft_type_hooks *hooks,
                               const weft_lifecycle_hooks *life, const weft_require *reqs,
                               int32_t count)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    d.storage = storage;
    if (hooks) {
        d.hooks = *hooks;
    }
    if (life) {
        d.lifecycle = *life;
    }
    d.required = reqs;
    d.required_count = count;
    weft_component c = weft_component_register(w, &d);
    if (c == 0) {
        fail_msg("registering %s failed: %s: %s", name, weft_status_name(weft_last_status(w)),
                 weft_last_error(w));
    }
    return c;
}

static weft_component reg(weft_world *w, const char *name, size_t size,
                          const weft_require *reqs, int32_t count)
{
    return reg_full(w, name, size, WEFT_STORAGE_TABLE, NULL, NULL, reqs, count);
}

static weft_require req_val(weft_component id, const void *value, size_t size)
{
    weft_require r;
    memset(&r, 0, sizeof r);
    r.id = id;
    r.value = value;
    r.size = size;
    return r;
}

static weft_require req_none(weft_component id)
{
    return req_val(id, NULL, 0);
}

static int32_t get_i32(weft_world *w, weft_entity e, weft_component c)
{
    const int32_t *p = weft_get(w, e, c, sizeof(int32_t));
    if (!p) {
        fail_msg("entity lacks component %u (%s)", c, weft_last_error(w));
    }
    return *p;
}

static int32_t component_count(weft_world *w, weft_entity e)
{
    int32_t a = weft_entity_archetype(w, e);
    weft_archetype_info ai;
    assert_int_equal(weft_archetype_info_get(w, a, &ai), WEFT_OK);
    return ai.component_count;
}

static int32_t archetype_count(weft_world *w)
{
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    return s.archetypes;
}

// ctor default: writes *(int32_t *)user into dst and counts calls
typedef struct ctor_user {
    int32_t value;
    int32_t calls;
    void *last_user;
} ctor_user;

static void ctor_i32(void *dst, void *user)
{
    ctor_user *u = user;
    u->calls++;
    u->last_user = user;
    *(int32_t *)dst = u->value;
}

// type hook ctor: fills every int32 with 0x42
static void hook_ctor_42(void *ptr, int32_t count, void *user)
{
    (void)user;
    int32_t *p = ptr;
    for (int32_t i = 0; i < count; i++) {
        p[i] = 0x42;
    }
}

// ---- Bevy's Mesh3d example ----

typedef struct mesh_world {
    weft_component mesh, transform, global, vis, inherited;
    ctor_user global_ctor;
    vec2 transform_default;
    int32_t vis_default;
} mesh_world;

// Transform (value blob {1.5, 2.5}) requires GlobalTransform (ctor callback
// writing 77); Visibility (value 3) requires InheritedVisibility (neither:
// its ctor hook writes 0x42); Mesh3d requires Transform and Visibility.
static void mesh_setup(weft_world *w, mesh_world *m)
{
    memset(m, 0, sizeof *m);
    m->global_ctor.value = 77;
    m->transform_default = (vec2){1.5f, 2.5f};
    m->vis_default = 3;
    m->global = reg(w, "GlobalTransform", 4, NULL, 0);
    weft_type_hooks iv_hooks = {.ctor = hook_ctor_42};
    m->inherited = reg_full(w, "InheritedVisibility", 4, WEFT_STORAGE_TABLE, &iv_hooks, NULL,
                            NULL, 0);
    weft_require tr = {.id = m->global, .ctor = ctor_i32, .user = &m->global_ctor};
    m->transform = reg(w, "Transform", sizeof(vec2), &tr, 1);
    weft_require vr = req_none(m->inherited);
    m->vis = reg_full(w, "Visibility", 4, WEFT_STORAGE_SPARSE, NULL, NULL, &vr, 1);
    weft_require mr[2] = {req_val(m->transform, &m->transform_default, sizeof(vec2)),
                          req_val(m->vis, &m->vis_default, 4)};
    m->mesh = reg(w, "Mesh3d", 4, mr, 2);
}

static void expect_transform(weft_world *w, weft_entity e, weft_component t, float x, float y)
{
    const vec2 *p = weft_get(w, e, t, sizeof(vec2));
    assert_non_null(p);
    assert_true(p->x == x && p->y == y);
}

static void required_spawn_mesh_gets_all_five(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    mesh_world m;
    mesh_setup(w, &m);
    int32_t mv = 9;
    weft_value v = {m.mesh, 4, &mv};
    weft_entity e = weft_spawn_with(w, &v, 1);
    assert_true(e != 0);
    assert_int_equal(component_count(w, e), 5);
    assert_int_equal(get_i32(w, e, m.mesh), 9);
    expect_transform(w, e, m.transform, 1.5f, 2.5f);
    assert_int_equal(get_i32(w, e, m.global), 77);
    assert_int_equal(get_i32(w, e, m.vis), 3);
    assert_int_equal(get_i32(w, e, m.inherited), 0x42);
    assert_int_equal(m.global_ctor.calls, 1);
    assert_ptr_equal(m.global_ctor.last_user, &m.global_ctor);
    // the registration copied the default blobs
    m.transform_default = (vec2){-1.0f, -1.0f};
    m.vis_default = -1;
    weft_entity e2 = weft_spawn_with(w, &v, 1);
    expect_transform(w, e2, m.transform, 1.5f, 2.5f);
    assert_int_equal(get_i32(w, e2, m.vis), 3);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void required_supplied_transform_keeps_value(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    mesh_world m;
    mesh_setup(w, &m);
    vec2 x = {10.0f, 20.0f};
    weft_value v[2] = {{m.mesh, 4, NULL}, {m.transform, sizeof x, &x}};
    weft_entity e = weft_spawn_with(w, v, 2);
    assert_true(e != 0);
    assert_int_equal(component_count(w, e), 5);
    expect_transform(w, e, m.transform, 10.0f, 20.0f);
    // GlobalTransform is required by the supplied Transform: still defaulted
    assert_int_equal(get_i32(w, e, m.global), 77);
    assert_int_equal(get_i32(w, e, m.vis), 3);
    assert_int_equal(get_i32(w, e, m.inherited), 0x42);
    // supplied in the other order too
    weft_value r[2] = {{m.transform, sizeof x, &x}, {m.mesh, 4, NULL}};
    weft_entity e2 = weft_spawn_with(w, r, 2);
    expect_transform(w, e2, m.transform, 10.0f, 20.0f);
    assert_int_equal(component_count(w, e2), 5);
}

static void required_insert_mesh_keeps_present_visibility(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    mesh_world m;
    mesh_setup(w, &m);
    int32_t vis = 1234;
    weft_entity e = weft_spawn(w);
    assert_int_equal(weft_insert(w, e, m.vis, &vis, 4), WEFT_OK);
    // Visibility brought InheritedVisibility; drop it so only Visibility is left
    assert_int_equal(weft_remove(w, e, m.inherited), WEFT_OK);
    assert_int_equal(component_count(w, e), 1);
    weft_ticks t0;
    assert_int_equal(weft_get_ticks(w, e, m.vis, &t0), WEFT_OK);
    uint32_t tick = weft_world_increment_change_tick(w);
    assert_int_equal(weft_insert(w, e, m.mesh, NULL, 4), WEFT_OK);
    assert_int_equal(component_count(w, e), 5);
    assert_int_equal(get_i32(w, e, m.vis), 1234);
    weft_ticks t1;
    assert_int_equal(weft_get_ticks(w, e, m.vis, &t1), WEFT_OK);
    assert_int_equal(t1.added, t0.added);
    assert_int_equal(t1.changed, t0.changed);
    expect_transform(w, e, m.transform, 1.5f, 2.5f);
    assert_int_equal(get_i32(w, e, m.global), 77);
    // required through the present Visibility, and missing: defaulted
    assert_int_equal(get_i32(w, e, m.inherited), 0x42);
    assert_int_equal(weft_get_ticks(w, e, m.transform, &t1), WEFT_OK);
    assert_int_equal(t1.added, tick);
    assert_int_equal(t1.changed, tick);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void required_default_sources(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    // neither a value nor a ctor, and no ctor hook: zeroes
    weft_component z = reg(w, "Zeroed", 16, NULL, 0);
    weft_component tag = reg(w, "Tag", 0, NULL, 0);
    weft_type_hooks hk = {.ctor = hook_ctor_42};
    weft_component h = reg_full(w, "Hooked", 4, WEFT_STORAGE_SPARSE, &hk, NULL, NULL, 0);
    ctor_user cu = {.value = -5};
    weft_component c = reg(w, "Ctored", 4, NULL, 0);
    int32_t blob = 99;
    weft_component b = reg(w, "Blob", 4, NULL, 0);
    // a ctor wins over a value blob when both are given (weft_require doc)
    ctor_user cu2 = {.value = 31};
    int32_t ignored = 1000;
    weft_component both = reg(w, "Both", 4, NULL, 0);
    weft_require r[6] = {req_none(z), req_none(tag), req_none(h),
                         {.id = c, .ctor = ctor_i32, .user = &cu}, req_val(b, &blob, 4),
                         {.id = both, .value = &ignored, .size = 4, .ctor = ctor_i32,
                          .user = &cu2}};
    weft_component a = reg(w, "A", 4, r, 6);
    weft_entity e = weft_spawn_with(w, &(weft_value){a, 4, NULL}, 1);
    assert_int_equal(component_count(w, e), 7);
    const unsigned char *zp = weft_get(w, e, z, 16);
    assert_non_null(zp);
    for (int i = 0; i < 16; i++) {
        assert_int_equal(zp[i], 0);
    }
    assert_true(weft_has(w, e, tag));
    assert_int_equal(get_i32(w, e, h), 0x42);
    assert_int_equal(get_i32(w, e, c), -5);
    assert_int_equal(cu.calls, 1);
    assert_ptr_equal(cu.last_user, &cu);
    assert_int_equal(get_i32(w, e, b), 99);
    assert_int_equal(get_i32(w, e, both), 31);
}

// ---- closure shape ----

static void required_transitive_chain(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    int32_t dv = 4, cv = 3, bv = 2;
    weft_component d = reg(w, "D", 4, NULL, 0);
    weft_require rc = req_val(d, &dv, 4);
    weft_component c = reg(w, "C", 4, &rc, 1);
    weft_require rb = req_val(c, &cv, 4);
    weft_component b = reg(w, "B", 4, &rb, 1);
    weft_require ra = req_val(b, &bv, 4);
    weft_component a = reg(w, "A", 4, &ra, 1);
    weft_entity e = weft_spawn_with(w, &(weft_value){a, 4, NULL}, 1);
    assert_int_equal(component_count(w, e), 4);
    assert_int_equal(get_i32(w, e, b), 2);
    assert_int_equal(get_i32(w, e, c), 3);
    assert_int_equal(get_i32(w, e, d), 4);
    // insert A into an entity holding C(30) only: B added, C kept, D added
    // (C's requirement, missing)
    int32_t c30 = 30;
    weft_entity e2 = weft_spawn(w);
    assert_int_equal(weft_insert(w, e2, c, &c30, 4), WEFT_OK);
    assert_true(weft_has(w, e2, d));
    assert_int_equal(weft_remove(w, e2, d), WEFT_OK);
    assert_int_equal(weft_insert(w, e2, a, NULL, 4), WEFT_OK);
    assert_int_equal(component_count(w, e2), 4);
    assert_int_equal(get_i32(w, e2, b), 2);
    assert_int_equal(get_i32(w, e2, c), 30);
    assert_int_equal(get_i32(w, e2, d), 4);
    // a requirement added later to the end of the chain reaches A's spawns
    int32_t ev = 5;
    weft_component x = reg(w, "E", 4, NULL, 0);
    weft_require re = req_val(x, &ev, 4);
    assert_int_equal(weft_component_require(w, d, &re, 1), WEFT_OK);
    weft_entity e3 = weft_spawn_with(w, &(weft_value){a, 4, NULL}, 1);
    assert_int_equal(component_count(w, e3), 5);
    assert_int_equal(get_i32(w, e3, x), 5);
    // entities that already existed are not touched
    assert_false(weft_has(w, e, x));
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void required_cycles_terminate(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    int32_t av = 11, bv = 22;
    weft_component a = reg(w, "A", 4, NULL, 0);
    weft_require rb = req_val(a, &av, 4);
    weft_component b = reg(w, "B", 4, &rb, 1); // B requires A
    weft_require ra = req_val(b, &bv, 4);
    assert_int_equal(weft_component_require(w, a, &ra, 1), WEFT_OK); // A requires B
    int32_t one = 1;
    weft_entity e1 = weft_spawn_with(w, &(weft_value){a, 4, &one}, 1);
    assert_int_equal(component_count(w, e1), 2);
    assert_int_equal(get_i32(w, e1, a), 1);
    assert_int_equal(get_i32(w, e1, b), 22);
    weft_entity e2 = weft_spawn_with(w, &(weft_value){b, 4, &one}, 1);
    assert_int_equal(component_count(w, e2), 2);
    assert_int_equal(get_i32(w, e2, a), 11);
    assert_int_equal(get_i32(w, e2, b), 1);
    weft_entity e3 = weft_spawn(w);
    assert_int_equal(weft_insert(w, e3, a, NULL, 4), WEFT_OK);
    assert_int_equal(component_count(w, e3), 2);
    assert_int_equal(get_i32(w, e3, b), 22);
    weft_entity e4 = weft_spawn(w);
    assert_int_equal(weft_insert(w, e4, b, NULL, 4), WEFT_OK);
    assert_int_equal(get_i32(w, e4, a), 11);
    // a three-cycle C -> D -> E -> C
    weft_component c = reg(w, "C", 4, NULL, 0);
    weft_require rd = req_none(c);
    weft_component e = reg(w, "E", 4, &rd, 1); // E requires C
    weft_require re = req_none(e);
    weft_component d = reg(w, "D", 4, &re, 1); // D requires E
    weft_require rc = req_none(d);
    assert_int_equal(weft_component_require(w, c, &rc, 1), WEFT_OK); // C requires D
    for (int k = 0; k < 3; k++) {
        weft_component s = k == 0 ? c : k == 1 ? d : e;
        weft_entity x = weft_spawn_with(w, &(weft_value){s, 4, NULL}, 1);
        assert_int_equal(component_count(w, x), 3);
        assert_true(weft_has(w, x, c) && weft_has(w, x, d) && weft_has(w, x, e));
    }
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void required_diamond_precedence(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    int32_t b_direct = 1, b_via_c = 2, b_via_d = 3;
    weft_component b = reg(w, "B", 4, NULL, 0);
    weft_require rc = req_val(b, &b_via_c, 4);
    weft_component c = reg(w, "C", 4, &rc, 1);
    weft_require rd = req_val(b, &b_via_d, 4);
    weft_component d = reg(w, "D", 4, &rd, 1);
    // A requires C, D and (directly) B: the closest requirer (A) wins
    weft_require ra[3] = {req_none(c), req_none(d), req_val(b, &b_direct, 4)};
    weft_component a = reg(w, "A", 4, ra, 3);
    weft_entity e = weft_spawn_with(w, &(weft_value){a, 4, NULL}, 1);
    assert_int_equal(get_i32(w, e, b), 1);
    // X requires C then D: B at depth 2 through both; the first requirer
    // in X's order (C) wins
    weft_require rx[2] = {req_none(c), req_none(d)};
    weft_component x = reg(w, "X", 4, rx, 2);
    e = weft_spawn_with(w, &(weft_value){x, 4, NULL}, 1);
    assert_int_equal(get_i32(w, e, b), 2);
    weft_require ry[2] = {req_none(d), req_none(c)};
    weft_component y = reg(w, "Y", 4, ry, 2);
    e = weft_spawn_with(w, &(weft_value){y, 4, NULL}, 1);
    assert_int_equal(get_i32(w, e, b), 3);
}

// Two supplied components requiring the same component: a tie in depth
// goes to the earlier supplied one.
static void required_precedence_tie_goes_to_earlier_supplied(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    int32_t bp = 100, bq = 200;
    weft_component b = reg(w, "B", 4, NULL, 0);
    weft_require rp = req_val(b, &bp, 4);
    weft_component p = reg(w, "P", 4, &rp, 1);
    weft_require rq = req_val(b, &bq, 4);
    weft_component q = reg(w, "Q", 4, &rq, 1);
    weft_value pq[2] = {{p, 4, NULL}, {q, 4, NULL}};
    weft_entity e = weft_spawn_with(w, pq, 2);
    assert_int_equal(get_i32(w, e, b), 100);
    weft_value qp[2] = {{q, 4, NULL}, {p, 4, NULL}};
    e = weft_spawn_with(w, qp, 2);
    assert_int_equal(get_i32(w, e, b), 200);
    weft_entity e2 = weft_spawn(w);
    assert_int_equal(weft_insert_many(w, e2, qp, 2), WEFT_OK);
    assert_int_equal(get_i32(w, e2, b), 200);
}

// Two supplied components requiring the same component at different
// depths: the closest requirer wins even when it is supplied later (Bevy:
// inheritance depth first, then order).
static void required_precedence_closest_across_supplied(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    int32_t b_from_m = 7, b_from_y = 8;
    weft_component b = reg(w, "B", 4, NULL, 0);
    weft_require rm = req_val(b, &b_from_m, 4);
    weft_component m = reg(w, "M", 4, &rm, 1);
    weft_require rx = req_none(m);
    weft_component x = reg(w, "X", 4, &rx, 1); // X -> M -> B (depth 2)
    weft_require ry = req_val(b, &b_from_y, 4);
    weft_component y = reg(w, "Y", 4, &ry, 1); // Y -> B (depth 1)
    weft_value xy[2] = {{x, 4, NULL}, {y, 4, NULL}};
    weft_entity e = weft_spawn_with(w, xy, 2);
    assert_int_equal(component_count(w, e), 4);
    int32_t got = get_i32(w, e, b);
    if (got != b_from_y) {
        fail_msg("spawn {X, Y} with X->M->B(7) and Y->B(8): B = %d, expected 8 (Y is the "
                 "closest requirer)",
                 got);
    }
}

// ---- supplied and present values ----

static void required_supplied_and_present_values_win(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    int32_t bdef = 5, cdef = 6;
    weft_component b = reg(w, "B", 4, NULL, 0);
    weft_component c = reg_full(w, "C", 4, WEFT_STORAGE_SPARSE, NULL, NULL, NULL, 0);
    weft_require ra[2] = {req_val(b, &bdef, 4), req_val(c, &cdef, 4)};
    weft_component a = reg(w, "A", 4, ra, 2);
    int32_t bv = 50;
    weft_entity e = weft_spawn_with(w, &(weft_value){b, 4, &bv}, 1);
    weft_ticks tb0;
    assert_int_equal(weft_get_ticks(w, e, b, &tb0), WEFT_OK);
    uint32_t t1 = weft_world_increment_change_tick(w);
    assert_int_equal(weft_insert(w, e, a, NULL, 4), WEFT_OK);
    assert_int_equal(get_i32(w, e, b), 50);
    weft_ticks tb1;
    assert_int_equal(weft_get_ticks(w, e, b, &tb1), WEFT_OK);
    assert_int_equal(tb1.added, tb0.added);
    assert_int_equal(tb1.changed, tb0.changed);
    assert_int_equal(get_i32(w, e, c), 6);
    weft_ticks tc;
    assert_int_equal(weft_get_ticks(w, e, c, &tc), WEFT_OK);
    assert_int_equal(tc.added, t1);
    // re-inserting A (present) touches neither B nor C
    int32_t cmod = 61;
    *(int32_t *)weft_get_mut(w, e, c, 4) = cmod;
    weft_world_increment_change_tick(w);
    assert_int_equal(weft_get_ticks(w, e, c, &tc), WEFT_OK);
    assert_int_equal(weft_insert(w, e, a, NULL, 4), WEFT_OK);
    assert_int_equal(get_i32(w, e, c), 61);
    weft_ticks tc2;
    assert_int_equal(weft_get_ticks(w, e, c, &tc2), WEFT_OK);
    assert_int_equal(tc2.changed, tc.changed);
    // insert_many supplying a required one: supplied value wins
    weft_entity e2 = weft_spawn(w);
    int32_t cv = 77;
    weft_value v[2] = {{a, 4, NULL}, {c, 4, &cv}};
    assert_int_equal(weft_insert_many(w, e2, v, 2), WEFT_OK);
    assert_int_equal(get_i32(w, e2, c), 77);
    assert_int_equal(get_i32(w, e2, b), 5);
    // a NULL supplied value is still "supplied": default-construct, not the
    // requirement's default
    weft_entity e3 = weft_spawn(w);
    weft_value v3[2] = {{c, 4, NULL}, {a, 4, NULL}};
    assert_int_equal(weft_insert_many(w, e3, v3, 2), WEFT_OK);
    assert_int_equal(get_i32(w, e3, c), 0);
}

// ---- one move ----

static void required_insert_is_one_move(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component tr = tw_tracked_register(w, "Tracked", WEFT_STORAGE_TABLE, &f->tracker);
    weft_component d = reg(w, "D", 4, NULL, 0);
    weft_require rc = req_none(d);
    weft_component c = reg(w, "C", 8, &rc, 1);
    weft_component s = reg_full(w, "S", 4, WEFT_STORAGE_SPARSE, NULL, NULL, NULL, 0);
    weft_require rb[2] = {req_none(c), req_none(s)};
    weft_component b = reg(w, "B", 4, rb, 2);
    weft_require ra = req_none(b);
    weft_component a = reg(w, "A", 4, &ra, 1);
    tw_tracked tv;
    tw_tracked_make(&tv, 7);
    weft_entity e = weft_spawn_with(w, &(weft_value){tr, sizeof tv, &tv}, 1);
    int32_t arch0 = archetype_count(w);
    int64_t moves0 = f->tracker.moves;
    assert_int_equal(weft_insert(w, e, a, NULL, 4), WEFT_OK);
    assert_int_equal(f->tracker.moves - moves0, 1);
    // only the final archetype was created (no intermediate ones)
    assert_int_equal(archetype_count(w), arch0 + 1);
    assert_int_equal(component_count(w, e), 6);
    // insert_many path
    weft_entity e2 = weft_spawn_with(w, &(weft_value){tr, sizeof tv, &tv}, 1);
    weft_component z = reg(w, "Z", 4, NULL, 0);
    moves0 = f->tracker.moves;
    arch0 = archetype_count(w);
    weft_value v[2] = {{z, 4, NULL}, {a, 4, NULL}};
    assert_int_equal(weft_insert_many(w, e2, v, 2), WEFT_OK);
    assert_int_equal(f->tracker.moves - moves0, 1);
    assert_int_equal(archetype_count(w), arch0 + 1);
    // spawn: one archetype for the whole closure
    arch0 = archetype_count(w);
    weft_entity e3 = weft_spawn_with(w, &(weft_value){a, 4, NULL}, 1);
    assert_int_equal(component_count(w, e3), 5);
    assert_int_equal(archetype_count(w), arch0 + 1);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void required_remove_keeps_required(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    int32_t bdef = 3;
    weft_component b = reg(w, "B", 4, NULL, 0);
    weft_require ra = req_val(b, &bdef, 4);
    weft_component a = reg(w, "A", 4, &ra, 1);
    weft_entity e = weft_spawn_with(w, &(weft_value){a, 4, NULL}, 1);
    assert_int_equal(weft_remove(w, e, a), WEFT_OK);
    assert_false(weft_has(w, e, a));
    assert_true(weft_has(w, e, b));
    assert_int_equal(get_i32(w, e, b), 3);
    // removing the required one leaves the requirer alone too
    weft_entity e2 = weft_spawn_with(w, &(weft_value){a, 4, NULL}, 1);
    assert_int_equal(weft_remove(w, e2, b), WEFT_OK);
    assert_true(weft_has(w, e2, a));
    assert_false(weft_has(w, e2, b));
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- events ----

typedef struct ev_rec {
    char src; // 'h' hook, 'o' observer
    char ev;  // 'A' add, 'I' insert, 'R' replace
    weft_component c;
} ev_rec;

static struct {
    ev_rec r[256];
    int n;
    weft_component b;        // component whose value is checked in its add hook
    int32_t seen_in_add;
} g_ev;

static void ev_push(char src, char ev, weft_component c)
{
    if (g_ev.n < 256) {
        g_ev.r[g_ev.n++] = (ev_rec){src, ev, c};
    }
}

static void hk_add(weft_world *w, weft_entity e, weft_component c, void *u)
{
    (void)u;
    ev_push('h', 'A', c);
    if (c == g_ev.b) {
        const int32_t *p = weft_get(w, e, c, 4);
        g_ev.seen_in_add = p ? *p : -1;
    }
}
static void hk_insert(weft_world *w, weft_entity e, weft_component c, void *u)
{
    (void)w, (void)e, (void)u;
    ev_push('h', 'I', c);
}
static void hk_replace(weft_world *w, weft_entity e, weft_component c, void *u)
{
    (void)w, (void)e, (void)u;
    ev_push('h', 'R', c);
}
static void obs_fn(weft_world *w, weft_trigger *t, void *u)
{
    (void)w, (void)u;
    char ev = t->event == WEFT_EVENT_ADD ? 'A' : t->event == WEFT_EVENT_INSERT ? 'I' : 'R';
    ev_push('o', ev, t->component);
}

static void observe(weft_world *w, weft_component c)
{
    weft_event evs[3] = {WEFT_EVENT_ADD, WEFT_EVENT_INSERT, WEFT_EVENT_REPLACE};
    for (int i = 0; i < 3; i++) {
        weft_observer_desc d;
        memset(&d, 0, sizeof d);
        d.event = evs[i];
        d.component = c;
        d.fn = obs_fn;
        assert_non_null(weft_observer_create(w, &d));
    }
}

static void expect_events(const char *what, const ev_rec *want, int n)
{
    char got[1024] = "", exp[1024] = "";
    for (int i = 0; i < g_ev.n && i < 128; i++) {
        char b[16];
        snprintf(b, sizeof b, "%c%c%u ", g_ev.r[i].src, g_ev.r[i].ev, g_ev.r[i].c);
        strcat(got, b);
    }
    for (int i = 0; i < n; i++) {
        char b[16];
        snprintf(b, sizeof b, "%c%c%u ", want[i].src, want[i].ev, want[i].c);
        strcat(exp, b);
    }
    if (strcmp(got, exp) != 0) {
        fail_msg("%s: events\n  got  %s\n  want %s", what, got, exp);
    }
}

// supplied A and X; A requires B and D, B requires C: breadth first B, D, C
typedef struct ev_world {
    weft_component a, b, c, d, x;
} ev_world;

static void ev_setup(weft_world *w, ev_world *m, weft_storage bs)
{
    weft_lifecycle_hooks lh = {.on_add = hk_add, .on_insert = hk_insert,
                               .on_replace = hk_replace};
    static const int32_t bdef = 42;
    m->c = reg_full(w, "C", 4, WEFT_STORAGE_TABLE, NULL, &lh, NULL, 0);
    m->d = reg_full(w, "D", 4, WEFT_STORAGE_SPARSE, NULL, &lh, NULL, 0);
    weft_require rb = req_none(m->c);
    m->b = reg_full(w, "B", 4, bs, NULL, &lh, &rb, 1);
    weft_require ra[2] = {req_val(m->b, &bdef, 4), req_none(m->d)};
    m->a = reg_full(w, "A", 4, WEFT_STORAGE_TABLE, NULL, &lh, ra, 2);
    m->x = reg_full(w, "X", 4, WEFT_STORAGE_TABLE, NULL, &lh, NULL, 0);
    weft_component all[5] = {m->a, m->b, m->c, m->d, m->x};
    for (int i = 0; i < 5; i++) {
        observe(w, all[i]);
    }
    memset(&g_ev, 0, sizeof g_ev);
    g_ev.b = m->b;
    g_ev.seen_in_add = -2;
}

#define HO(ev, c) {'h', ev, c}, {'o', ev, c}

static void required_events_fire_in_documented_order(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    for (int st = 0; st < 2; st++) {
        ev_world m;
        if (st == 1) {
            // fresh world per storage variant (names are unique per world)
            weft_world_destroy(f->w);
            weft_world_desc d = tw_fixture_desc(f);
            f->w = weft_world_create(&d);
            w = f->w;
        }
        ev_setup(w, &m, st == 0 ? WEFT_STORAGE_TABLE : WEFT_STORAGE_SPARSE);
        // spawn {A, X}
        weft_value v[2] = {{m.a, 4, NULL}, {m.x, 4, NULL}};
        weft_entity e = weft_spawn_with(w, v, 2);
        assert_true(e != 0);
        ev_rec want1[] = {HO('A', m.a), HO('A', m.x), HO('A', m.b), HO('A', m.d), HO('A', m.c),
                          HO('I', m.a), HO('I', m.x), HO('I', m.b), HO('I', m.d),
                          HO('I', m.c)};
        expect_events("spawn {A, X}", want1, (int)(sizeof want1 / sizeof want1[0]));
        // the required value is written before its add hook runs
        assert_int_equal(g_ev.seen_in_add, 42);
        // insert A into an entity that has B: only D and C are added
        weft_entity e2 = weft_spawn_with(w, &(weft_value){m.b, 4, NULL}, 1);
        assert_int_equal(weft_remove(w, e2, m.c), WEFT_OK);
        g_ev.n = 0;
        assert_int_equal(weft_insert(w, e2, m.a, NULL, 4), WEFT_OK);
        ev_rec want2[] = {HO('A', m.a), HO('A', m.d), HO('A', m.c),
                          HO('I', m.a), HO('I', m.d), HO('I', m.c)};
        expect_events("insert A into {B}", want2, (int)(sizeof want2 / sizeof want2[0]));
        // insert_many {X, A} into an empty entity
        weft_entity e3 = weft_spawn(w);
        g_ev.n = 0;
        weft_value v3[2] = {{m.x, 4, NULL}, {m.a, 4, NULL}};
        assert_int_equal(weft_insert_many(w, e3, v3, 2), WEFT_OK);
        ev_rec want3[] = {HO('A', m.x), HO('A', m.a), HO('A', m.b), HO('A', m.d), HO('A', m.c),
                          HO('I', m.x), HO('I', m.a), HO('I', m.b), HO('I', m.d),
                          HO('I', m.c)};
        expect_events("insert_many {X, A}", want3, (int)(sizeof want3 / sizeof want3[0]));
        // re-insert A (present, all required present): replace + insert of A only
        g_ev.n = 0;
        assert_int_equal(weft_insert(w, e3, m.a, NULL, 4), WEFT_OK);
        ev_rec want4[] = {HO('R', m.a), HO('I', m.a)};
        expect_events("re-insert A", want4, (int)(sizeof want4 / sizeof want4[0]));
        // bulk spawn of 3 {A}: per entity, adds then inserts
        g_ev.n = 0;
        weft_entity out[3];
        assert_int_equal(weft_spawn_bulk(w, &(weft_value){m.a, 4, NULL}, 1, 3, out), WEFT_OK);
        ev_rec want5[] = {HO('A', m.a), HO('A', m.b), HO('A', m.d), HO('A', m.c),
                          HO('I', m.a), HO('I', m.b), HO('I', m.d), HO('I', m.c),
                          HO('A', m.a), HO('A', m.b), HO('A', m.d), HO('A', m.c),
                          HO('I', m.a), HO('I', m.b), HO('I', m.d), HO('I', m.c),
                          HO('A', m.a), HO('A', m.b), HO('A', m.d), HO('A', m.c),
                          HO('I', m.a), HO('I', m.b), HO('I', m.d), HO('I', m.c)};
        expect_events("spawn_bulk 3 {A}", want5, (int)(sizeof want5 / sizeof want5[0]));
        assert_int_equal(weft_world_check(w), WEFT_OK);
    }
}

// ---- every path ----

typedef struct path_world {
    weft_component a, b, c, s;
    ctor_user cu;
    int32_t bdef;
} path_world;

// A requires B (value 5) and S (sparse, ctor 9); B requires C (neither)
static void path_setup(weft_world *w, path_world *m)
{
    memset(m, 0, sizeof *m);
    m->bdef = 5;
    m->cu.value = 9;
    m->c = reg(w, "C", 8, NULL, 0);
    weft_require rb = req_none(m->c);
    m->b = reg(w, "B", 4, &rb, 1);
    m->s = reg_full(w, "S", 4, WEFT_STORAGE_SPARSE, NULL, NULL, NULL, 0);
    weft_require ra[2] = {req_val(m->b, &m->bdef, 4),
                          {.id = m->s, .ctor = ctor_i32, .user = &m->cu}};
    m->a = reg(w, "A", 4, ra, 2);
}

static void expect_path_defaults(weft_world *w, const path_world *m, weft_entity e,
                                 int32_t a_val)
{
    assert_true(weft_is_alive(w, e));
    assert_int_equal(component_count(w, e), 4);
    assert_int_equal(get_i32(w, e, m->a), a_val);
    assert_int_equal(get_i32(w, e, m->b), 5);
    assert_int_equal(get_i32(w, e, m->s), 9);
    const int64_t *cp = weft_get(w, e, m->c, 8);
    assert_non_null(cp);
    assert_int_equal(*cp, 0);
}

static void required_spawn_bulk_gives_every_entity_defaults(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    path_world m;
    path_setup(w, &m);
    enum { N = 300 };
    int32_t *avals = malloc(N * sizeof *avals);
    int32_t *bvals = malloc(N * sizeof *bvals);
    weft_entity *out = malloc(N * sizeof *out);
    for (int i = 0; i < N; i++) {
        avals[i] = 1000 + i;
        bvals[i] = 2000 + i;
    }
    assert_int_equal(weft_spawn_bulk(w, &(weft_value){m.a, 4, avals}, 1, N, out), WEFT_OK);
    for (int i = 0; i < N; i++) {
        expect_path_defaults(w, &m, out[i], 1000 + i);
    }
    // explicit B column: per-entity values kept, C still required through B
    weft_value cols[2] = {{m.b, 4, bvals}, {m.a, 4, avals}};
    assert_int_equal(weft_spawn_bulk(w, cols, 2, N, out), WEFT_OK);
    for (int i = 0; i < N; i++) {
        assert_int_equal(get_i32(w, out[i], m.b), 2000 + i);
        assert_int_equal(get_i32(w, out[i], m.s), 9);
        assert_true(weft_has(w, out[i], m.c));
    }
    // NULL column for A
    assert_int_equal(weft_spawn_bulk(w, &(weft_value){m.a, 4, NULL}, 1, N, out), WEFT_OK);
    for (int i = 0; i < N; i++) {
        expect_path_defaults(w, &m, out[i], 0);
    }
    assert_int_equal(weft_world_check(w), WEFT_OK);
    free(avals);
    free(bvals);
    free(out);
}

static void required_insert_and_insert_many(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    path_world m;
    path_setup(w, &m);
    int32_t av = 3;
    weft_entity e = weft_spawn(w);
    assert_int_equal(weft_insert(w, e, m.a, &av, 4), WEFT_OK);
    expect_path_defaults(w, &m, e, 3);
    weft_component z = reg(w, "Z", 4, NULL, 0);
    weft_entity e2 = weft_spawn_with(w, &(weft_value){z, 4, NULL}, 1);
    weft_value v[1] = {{m.a, 4, &av}};
    assert_int_equal(weft_insert_many(w, e2, v, 1), WEFT_OK);
    assert_int_equal(component_count(w, e2), 5);
    assert_int_equal(get_i32(w, e2, m.b), 5);
    assert_int_equal(get_i32(w, e2, m.s), 9);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void required_through_command_buffers(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    path_world m;
    path_setup(w, &m);
    weft_commands *cb = weft_commands_create(w);
    assert_non_null(cb);
    int32_t av = 4;
    weft_entity s1 = weft_cmd_spawn(cb, &(weft_value){m.a, 4, &av}, 1);
    weft_component z = reg(w, "Z", 4, NULL, 0);
    weft_value two[2] = {{z, 4, NULL}, {m.a, 4, &av}};
    weft_entity s2 = weft_cmd_spawn(cb, two, 2);
    weft_entity e3 = weft_spawn(w);
    weft_entity e4 = weft_spawn(w);
    assert_int_equal(weft_cmd_insert(cb, e3, m.a, &av, 4), WEFT_OK);
    assert_int_equal(weft_cmd_insert_many(cb, e4, two, 2), WEFT_OK);
    assert_int_equal(weft_cmd_try_insert(cb, e4, m.a, &av, 4), WEFT_OK);
    assert_true(s1 != 0 && s2 != 0);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    expect_path_defaults(w, &m, s1, 4);
    expect_path_defaults(w, &m, e3, 4);
    assert_int_equal(component_count(w, s2), 5);
    assert_int_equal(get_i32(w, s2, m.b), 5);
    assert_int_equal(component_count(w, e4), 5);
    assert_int_equal(get_i32(w, e4, m.s), 9);
    weft_commands_destroy(cb);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void required_deferred_insert_during_iteration(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    path_world m;
    path_setup(w, &m);
    weft_component z = reg(w, "Z", 4, NULL, 0);
    enum { N = 50 };
    weft_entity es[N];
    for (int i = 0; i < N; i++) {
        int32_t zv = i;
        es[i] = weft_spawn_with(w, &(weft_value){z, 4, &zv}, 1);
    }
    weft_query_desc qd;
    memset(&qd, 0, sizeof qd);
    qd.terms[0].id = z;
    qd.term_count = 1;
    weft_query *q = weft_query_create(w, &qd);
    assert_non_null(q);
    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    int seen = 0;
    while (weft_iter_next(&it)) {
        const weft_entity *ents = weft_iter_entities(&it);
        const int32_t *zs = weft_iter_field(&it, 0, 4);
        for (int32_t r = 0; r < weft_iter_count(&it); r++) {
            int32_t av = 100 + zs[r];
            assert_int_equal(weft_insert(w, ents[r], m.a, &av, 4), WEFT_OK);
            assert_false(weft_has(w, ents[r], m.b)); // still queued
            seen++;
        }
    }
    assert_int_equal(seen, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(component_count(w, es[i]), 5);
        assert_int_equal(get_i32(w, es[i], m.a), 100 + i);
        assert_int_equal(get_i32(w, es[i], m.b), 5);
        assert_int_equal(get_i32(w, es[i], m.s), 9);
    }
    assert_int_equal(weft_query_destroy(w, q), WEFT_OK);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- misuse ----

static void expect_register_refused(tw_fixture *f, const char *name, const weft_require *reqs,
                                    int32_t count, weft_status want)
{
    weft_world *w = f->w;
    tw_snap s0 = tw_snap_take(w);
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = 4;
    d.required = reqs;
    d.required_count = count;
    weft_clear_error(w);
    assert_int_equal(weft_component_register(w, &d), 0);
    tw_expect_error(f, want, NULL);
    tw_snap_expect_same(w, &s0);
    assert_int_equal(weft_component_lookup(w, name), 0);
}

static void required_misuse_at_registration(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component b = reg(w, "B", 4, NULL, 0);
    weft_component c = reg(w, "C", 8, NULL, 0);
    int64_t v8 = 1;
    int32_t v4 = 1;
    weft_require unknown[2] = {req_none(b), req_none(999)};
    expect_register_refused(f, "A", unknown, 2, WEFT_ERR_UNKNOWN_COMPONENT);
    weft_require zero = req_none(0);
    expect_register_refused(f, "A", &zero, 1, WEFT_ERR_UNKNOWN_COMPONENT);
    weft_require size[2] = {req_val(b, &v4, 4), req_val(c, &v8, 4)};
    expect_register_refused(f, "A", size, 2, WEFT_ERR_SIZE_MISMATCH);
    weft_require size2 = req_val(b, &v8, 8);
    expect_register_refused(f, "A", &size2, 1, WEFT_ERR_SIZE_MISMATCH);
    weft_require dup[3] = {req_none(b), req_none(c), req_val(b, &v4, 4)};
    expect_register_refused(f, "A", dup, 3, WEFT_ERR_DUPLICATE_COMPONENT);
    expect_register_refused(f, "A", NULL, 2, WEFT_ERR_INVALID_ARG);
    expect_register_refused(f, "A", size, -1, WEFT_ERR_INVALID_ARG);
    // the name stays free: a valid registration succeeds afterwards
    weft_require ok = req_val(b, &v4, 4);
    weft_component a = reg(w, "A", 4, &ok, 1);
    weft_entity e = weft_spawn_with(w, &(weft_value){a, 4, NULL}, 1);
    assert_int_equal(component_count(w, e), 2);
    // NULL list with count 0 is fine
    assert_true(reg(w, "E", 4, NULL, 0) != 0);
}

static void expect_require_refused(tw_fixture *f, weft_component target,
                                   const weft_require *reqs, int32_t count, weft_status want,
                                   weft_component probe_absent)
{
    weft_world *w = f->w;
    tw_snap s0 = tw_snap_take(w);
    weft_clear_error(w);
    assert_int_equal(weft_component_require(w, target, reqs, count), want);
    tw_expect_error(f, want, NULL);
    tw_snap_expect_same(w, &s0);
    if (probe_absent) {
        // the component is unchanged: spawning it brings nothing new
        weft_entity e = weft_spawn_with(w, &(weft_value){target, 4, NULL}, 1);
        assert_false(weft_has(w, e, probe_absent));
        assert_int_equal(weft_despawn(w, e), WEFT_OK);
    }
}

static void required_misuse_via_component_require(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    int32_t v4 = 1;
    int64_t v8 = 1;
    weft_component b = reg(w, "B", 4, NULL, 0);
    weft_component c = reg(w, "C", 8, NULL, 0);
    weft_component a = reg(w, "A", 4, NULL, 0);
    weft_require unknown[2] = {req_none(b), req_none(777)};
    expect_require_refused(f, a, unknown, 2, WEFT_ERR_UNKNOWN_COMPONENT, b);
    weft_require size[2] = {req_none(b), req_val(c, &v4, 4)};
    expect_require_refused(f, a, size, 2, WEFT_ERR_SIZE_MISMATCH, b);
    weft_require dup[2] = {req_none(c), req_val(c, &v8, 8)};
    expect_require_refused(f, a, dup, 2, WEFT_ERR_DUPLICATE_COMPONENT, c);
    weft_require self[2] = {req_none(b), req_none(a)};
    expect_require_refused(f, a, self, 2, WEFT_ERR_INVALID_ARG, b);
    expect_require_refused(f, a, NULL, 1, WEFT_ERR_INVALID_ARG, 0);
    expect_require_refused(f, a, self, -3, WEFT_ERR_INVALID_ARG, 0);
    // unknown target component
    tw_snap s0 = tw_snap_take(w);
    assert_int_equal(weft_component_require(w, 555, &self[0], 1), WEFT_ERR_UNKNOWN_COMPONENT);
    tw_expect_error(f, WEFT_ERR_UNKNOWN_COMPONENT, NULL);
    tw_snap_expect_same(w, &s0);
    assert_int_equal(weft_component_require(NULL, a, &self[0], 1), WEFT_ERR_INVALID_HANDLE);
    // count 0 is a no-op, NULL list allowed
    assert_int_equal(weft_component_require(w, a, NULL, 0), WEFT_OK);
    // a valid one, then requiring the same id again is refused and A keeps
    // the first default
    weft_require rb = req_val(b, &v4, 4);
    assert_int_equal(weft_component_require(w, a, &rb, 1), WEFT_OK);
    int32_t other = 2;
    weft_require rb2[2] = {req_none(c), req_val(b, &other, 4)};
    expect_require_refused(f, a, rb2, 2, WEFT_ERR_DUPLICATE_COMPONENT, c);
    weft_entity e = weft_spawn_with(w, &(weft_value){a, 4, NULL}, 1);
    assert_int_equal(component_count(w, e), 2);
    assert_int_equal(get_i32(w, e, b), 1);
}

// ---- allocation failure ----

static void required_component_require_oom(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component b = reg(w, "B", 4, NULL, 0);
    weft_component c = reg(w, "C", 8, NULL, 0);
    weft_component a = reg(w, "A", 4, NULL, 0);
    int32_t bv = 12;
    int64_t cv = 13;
    weft_require pre = req_none(c);
    assert_int_equal(weft_component_require(w, b, &pre, 1), WEFT_OK);
    weft_require rs[2] = {req_val(b, &bv, 4), req_val(c, &cv, 8)};
    int failures = 0;
    for (int64_t n = 1; n < 100; n++) {
        tw_snap s0 = tw_snap_take(w);
        tw_alloc_fail_nth(&f->alloc, n, false);
        weft_status st = weft_component_require(w, a, rs, 2);
        int64_t injected = tw_alloc_injected(&f->alloc);
        tw_alloc_disarm(&f->alloc);
        if (st == WEFT_OK) {
            assert_int_equal(injected, 0);
            break;
        }
        failures++;
        assert_int_equal(st, WEFT_ERR_OUT_OF_MEMORY);
        tw_expect_error(f, WEFT_ERR_OUT_OF_MEMORY, NULL);
        tw_snap_expect_same(w, &s0);
        // A unchanged: it requires nothing yet
        weft_entity e = weft_spawn_with(w, &(weft_value){a, 4, NULL}, 1);
        assert_int_equal(component_count(w, e), 1);
        assert_int_equal(weft_despawn(w, e), WEFT_OK);
    }
    assert_true(failures >= 1);
    weft_entity e = weft_spawn_with(w, &(weft_value){a, 4, NULL}, 1);
    assert_int_equal(component_count(w, e), 3);
    assert_int_equal(get_i32(w, e, b), 12);
    const int64_t *cp = weft_get(w, e, c, 8);
    assert_non_null(cp);
    assert_int_equal(*cp, 13);
    // registration with requirements under failure: nothing registered
    for (int64_t n = 1; n < 100; n++) {
        tw_snap s0 = tw_snap_take(w);
        tw_alloc_fail_nth(&f->alloc, n, false);
        weft_component_desc d;
        memset(&d, 0, sizeof d);
        d.name = "R";
        d.size = 4;
        d.storage = WEFT_STORAGE_SPARSE;
        d.required = rs;
        d.required_count = 2;
        weft_component r = weft_component_register(w, &d);
        tw_alloc_disarm(&f->alloc);
        if (r != 0) {
            break;
        }
        tw_expect_error(f, WEFT_ERR_OUT_OF_MEMORY, NULL);
        tw_snap_expect_same_content(w, &s0);
        assert_int_equal(weft_component_lookup(w, "R"), 0);
    }
    assert_true(weft_component_lookup(w, "R") != 0);
}

// A requires 40 components (some through a ctor, some sparse), so the
// expansion outgrows its inline scratch and builds temporaries.
#define WIDE 40

typedef struct wide_world {
    weft_component a, r[WIDE];
    ctor_user cu[WIDE];
} wide_world;

static void wide_setup(weft_world *w, wide_world *m)
{
    memset(m, 0, sizeof *m);
    weft_require reqs[WIDE];
    for (int i = 0; i < WIDE; i++) {
        char name[16];
        snprintf(name, sizeof name, "R%d", i);
        m->r[i] = reg_full(w, name, 4, i % 3 == 0 ? WEFT_STORAGE_SPARSE : WEFT_STORAGE_TABLE,
                           NULL, NULL, NULL, 0);
        m->cu[i].value = 500 + i;
        reqs[i] = (weft_require){.id = m->r[i], .ctor = ctor_i32, .user = &m->cu[i]};
        if (i % 2) {
            reqs[i].ctor = NULL;
            reqs[i].user = NULL;
            reqs[i].value = &m->cu[i].value;
            reqs[i].size = 4;
        }
    }
    m->a = reg(w, "A", 4, NULL, 0);
    // added afterwards so the closure is not yet built when the test starts
    assert_int_equal(weft_component_require(w, m->a, reqs, WIDE), WEFT_OK);
}

static void wide_expect(weft_world *w, const wide_world *m, weft_entity e)
{
    assert_int_equal(component_count(w, e), WIDE + 1);
    for (int i = 0; i < WIDE; i++) {
        assert_int_equal(get_i32(w, e, m->r[i]), 500 + i);
    }
}

typedef enum oom_path { OOM_SPAWN, OOM_BULK, OOM_INSERT, OOM_PATHS } oom_path;

static void required_spawn_closure_oom(void **state)
{
    tw_fixture *f = *state;
    for (int path = 0; path < OOM_PATHS; path++) {
        if (path > 0) {
            weft_world_destroy(f->w);
            weft_world_desc d = tw_fixture_desc(f);
            f->w = weft_world_create(&d);
        }
        weft_world *w = f->w;
        wide_world m;
        wide_setup(w, &m);
        weft_entity target = weft_spawn(w);
        int failures = 0;
        bool done = false;
        for (int64_t n = 1; n < 10000 && !done; n++) {
            tw_snap s0 = tw_snap_take(w);
            tw_alloc_fail_nth(&f->alloc, n, false);
            weft_status st;
            weft_entity out[8];
            int32_t av = 1;
            switch (path) {
            case OOM_SPAWN: {
                weft_entity e = weft_spawn_with(w, &(weft_value){m.a, 4, &av}, 1);
                st = e ? WEFT_OK : weft_last_status(w);
                out[0] = e;
                break;
            }
            case OOM_BULK:
                st = weft_spawn_bulk(w, &(weft_value){m.a, 4, NULL}, 1, 8, out);
                break;
            default:
                st = weft_insert(w, target, m.a, &av, 4);
                out[0] = target;
                break;
            }
            int64_t injected = tw_alloc_injected(&f->alloc);
            tw_alloc_disarm(&f->alloc);
            if (st == WEFT_OK) {
                assert_int_equal(injected, 0);
                int k = path == OOM_BULK ? 8 : 1;
                for (int i = 0; i < k; i++) {
                    wide_expect(w, &m, out[i]);
                }
                done = true;
                break;
            }
            failures++;
            if (st != WEFT_ERR_OUT_OF_MEMORY) {
                fail_msg("path %d, failing allocation %lld: %s, expected OUT_OF_MEMORY", path,
                         (long long)n, weft_status_name(st));
            }
            tw_expect_error(f, WEFT_ERR_OUT_OF_MEMORY, NULL);
            tw_snap_expect_same_content(w, &s0);
            assert_int_equal(component_count(w, target), 0);
        }
        assert_true(done);
        assert_true(failures >= 2);
        // the ctor temporaries were all destroyed/freed: teardown checks bytes
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(required_spawn_mesh_gets_all_five, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(required_supplied_transform_keeps_value, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(required_insert_mesh_keeps_present_visibility, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(required_default_sources, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(required_transitive_chain, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(required_cycles_terminate, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(required_diamond_precedence, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(required_precedence_tie_goes_to_earlier_supplied,
                                        tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(required_precedence_closest_across_supplied, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(required_supplied_and_present_values_win, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(required_insert_is_one_move, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(required_remove_keeps_required, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(required_events_fire_in_documented_order, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(required_spawn_bulk_gives_every_entity_defaults,
                                        tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(required_insert_and_insert_many, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(required_through_command_buffers, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(required_deferred_insert_during_iteration, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(required_misuse_at_registration, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(required_misuse_via_component_require, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(required_component_require_oom, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(required_spawn_closure_oom, tw_setup, tw_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/fault/test_fault_reflect.c - allocation-failure injection for the
// reflection loaders and writers: for each scenario, fail the Nth
// allocation (once, then from N onwards) for N = 1, 2, ... until the
// scenario runs without hitting the injected failure.
// SPDX-License-Identifier: MIT
//
// Scenarios: describing a component, restoring a snapshot, reading JSON
// into an entity and spawning from JSON, setting a field of an immutable
// component (a re-insert), saving a scene, spawning it, cloning a subtree.
// Each failing call must return WEFT_ERR_OUT_OF_MEMORY (or 0 / NULL with
// that status recorded) and leave the world's content as before the call
// (hash, live entities, weft_world_check); running it again without
// failures must then succeed. Every world is destroyed at the end of each
// attempt and the fixture must see zero live bytes (no leak).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fault.h"
#include "test_world.h"
#include "weft.h"

#define MAX_N 5000

typedef struct rec3 {
    float x, y;
    weft_entity peer;
} rec3;

static const weft_enum_value kinds[] = {{"a", 1}, {"b", 2}};
static const weft_field rec3_fields[] = {
    {.name = "x", .kind = WEFT_KIND_F32, .offset = offsetof(rec3, x)},
    {.name = "y", .kind = WEFT_KIND_ENUM, .offset = offsetof(rec3, y), .enum_values = kinds,
     .enum_count = 2},
    {.name = "peer", .kind = WEFT_KIND_ENTITY, .offset = offsetof(rec3, peer)},
};
static const weft_type_desc rec3_desc = {"rec3", sizeof(rec3), 0, rec3_fields, 3};

typedef struct fx {
    tw_fixture *f;
    weft_world *w;
    weft_component rec, frozen, tag, child_of;
    weft_entity root, kids[4];
    void *blob;       // a snapshot of a populated world (for the restore)
    size_t blob_len;
} fx;

static void populate(fx *x, bool describe)
{
    x->rec = tw_comp(x->w, "rec", sizeof(rec3), _Alignof(rec3), WEFT_STORAGE_TABLE, 0);
    x->frozen = tw_comp(x->w, "frozen", sizeof(rec3), _Alignof(rec3), WEFT_STORAGE_SPARSE,
                        WEFT_COMPONENT_IMMUTABLE);
    x->tag = tw_comp(x->w, "tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    x->child_of = weft_child_of(x->w);
    if (describe) {
        assert_int_equal(weft_component_describe(x->w, x->rec, &rec3_desc), WEFT_OK);
        assert_int_equal(weft_component_describe(x->w, x->frozen, &rec3_desc), WEFT_OK);
    }
}

static void build_tree(fx *x)
{
    rec3 v = {1.0f, 0.0f, 0};
    memcpy(&v.y, &(int32_t){2}, 4);
    weft_value vals[3] = {{x->rec, sizeof v, &v}, {x->frozen, sizeof v, &v}, {x->tag, 0, NULL}};
    x->root = weft_spawn_with(x->w, vals, 3);
    for (int i = 0; i < 4; i++) {
        v.peer = x->root;
        x->kids[i] = weft_spawn_with(x->w, vals, 1 + i % 3);
        assert_int_equal(weft_set_parent(x->w, x->kids[i], i ? x->kids[i - 1] : x->root),
                         WEFT_OK);
    }
}

static fx fx_new(bool describe, bool tree)
{
    fx x;
    memset(&x, 0, sizeof x);
    x.f = tw_fixture_new();
    assert_non_null(x.f);
    x.w = x.f->w;
    populate(&x, describe);
    if (tree) {
        build_tree(&x);
    }
    return x;
}

// One scenario call; returns its status (0/NULL returns mapped to the
// recorded status).
typedef weft_status (*scenario_fn)(fx *x, const fx *src);

static weft_status sc_describe(fx *x, const fx *src)
{
    (void)src;
    return weft_component_describe(x->w, x->rec, &rec3_desc);
}

static weft_status sc_restore(fx *x, const fx *src)
{
    return weft_snapshot_restore(x->w, src->blob, src->blob_len);
}

static weft_status sc_json_read(fx *x, const fx *src)
{
    (void)src;
    char text[160];
    snprintf(text, sizeof text,
             "{\"components\":{\"rec\":{\"x\":2,\"y\":\"a\",\"peer\":%llu},\"tag\":{}}}",
             (unsigned long long)x->kids[0]);
    return weft_json_read_entity(x->w, x->kids[3], text, strlen(text));
}

static weft_status sc_json_spawn(fx *x, const fx *src)
{
    (void)src;
    const char *text = "{\"components\":{\"rec\":{\"x\":2},\"frozen\":{\"y\":\"b\"}}}";
    weft_entity e = weft_json_spawn(x->w, text, strlen(text));
    return e ? WEFT_OK : weft_last_status(x->w);
}

static weft_status sc_field_set(fx *x, const fx *src)
{
    (void)src;
    float v = 9.0f;
    return weft_field_set(x->w, x->root, x->frozen, ".x", WEFT_KIND_F32, &v, 4);
}

static weft_status sc_scene_save(fx *x, const fx *src)
{
    (void)src;
    weft_scene *s = weft_scene_from_tree(x->w, x->root);
    if (!s) {
        return weft_last_status(x->w);
    }
    assert_int_equal(weft_scene_count(s), 5);
    weft_scene_destroy(x->w, s);
    return WEFT_OK;
}

static weft_status sc_clone(fx *x, const fx *src)
{
    (void)src;
    weft_entity c = weft_clone(x->w, x->root, true);
    return c ? WEFT_OK : weft_last_status(x->w);
}

// ---- driver (tests/support/fault.c) ----

typedef struct reflect_case {
    scenario_fn fn;
    bool describe, tree;
    const fx *src;
} reflect_case;

typedef struct reflect_state {
    fx x;
    tw_snap before; // the world before the call
} reflect_state;

static void case_prepare(tw_fault *c)
{
    const reflect_case *rc = c->user;
    reflect_state *st = calloc(1, sizeof *st);
    assert_non_null(st);
    st->x = fx_new(rc->describe, rc->tree);
    tw_alloc_pause(&st->x.f->alloc, true);
    st->before = tw_snap_take(st->x.w);
    tw_alloc_pause(&st->x.f->alloc, false);
    c->f = st->x.f;
    c->state = st;
}

static weft_status case_run(tw_fault *c)
{
    const reflect_case *rc = c->user;
    reflect_state *st = c->state;
    return rc->fn(&st->x, rc->src);
}

static void case_failed(tw_fault *c)
{
    reflect_state *st = c->state;
    tw_snap_expect_same_content(st->x.w, &st->before);
}

static void case_finish(tw_fault *c)
{
    free(c->state);
}

static const tw_fault_ops case_ops = {case_prepare, case_run, case_failed, NULL, case_finish};

static void run_scenario(const char *name, scenario_fn fn, bool describe, bool tree,
                         const fx *src)
{
    reflect_case rc = {fn, describe, tree, src};
    tw_fault_run(name, &case_ops, &rc, false, MAX_N);
    tw_fault_run(name, &case_ops, &rc, true, MAX_N);
}

static void fault_describe(void **state)
{
    (void)state;
    run_scenario("describe", sc_describe, false, false, NULL);
}

static void fault_snapshot_restore(void **state)
{
    (void)state;
    fx src = fx_new(true, true);
    assert_int_equal(weft_snapshot_write(src.w, NULL, 0, &src.blob_len), WEFT_ERR_CAPACITY);
    src.blob = malloc(src.blob_len);
    assert_int_equal(weft_snapshot_write(src.w, src.blob, src.blob_len, &src.blob_len),
                     WEFT_OK);
    run_scenario("snapshot restore", sc_restore, true, false, &src);
    free(src.blob);
    tw_fixture_free(src.f);
}

static void fault_json(void **state)
{
    (void)state;
    run_scenario("json read entity", sc_json_read, true, true, NULL);
    run_scenario("json spawn", sc_json_spawn, true, true, NULL);
}

static void fault_field_set_immutable(void **state)
{
    (void)state;
    run_scenario("field set (immutable)", sc_field_set, true, true, NULL);
}

static void fault_scenes(void **state)
{
    (void)state;
    run_scenario("scene save", sc_scene_save, true, true, NULL);
    run_scenario("clone subtree", sc_clone, true, true, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fault_describe),
        cmocka_unit_test(fault_snapshot_restore),
        cmocka_unit_test(fault_json),
        cmocka_unit_test(fault_field_set_immutable),
        cmocka_unit_test(fault_scenes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/api/test_api_resource.c - black-box tests of resources: singletons
// in the component id space with insert/get/get_mut/remove/has, their own
// added/changed ticks, hooks, stats and hash participation.
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

typedef struct game_time {
    double seconds;
    uint64_t frame;
} game_time;

static void resource_insert_get_remove(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component r = tw_comp(w, "time", sizeof(game_time), 0, WEFT_STORAGE_TABLE, 0);
    assert_false(weft_resource_has(w, r));
    weft_clear_error(w);
    assert_null(weft_resource_get(w, r, sizeof(game_time)));
    assert_int_equal(weft_last_status(w), WEFT_OK); // absent: no error

    game_time t = {1.5, 10};
    assert_int_equal(weft_resource_insert(w, r, &t, sizeof t), WEFT_OK);
    assert_true(weft_resource_has(w, r));
    t.frame = 999; // the world keeps a copy
    const game_time *g = weft_resource_get(w, r, sizeof t);
    assert_non_null(g);
    assert_true(g->seconds == 1.5);
    assert_true(g->frame == 10);

    game_time *m = weft_resource_get_mut(w, r, sizeof t);
    assert_non_null(m);
    m->frame = 11;
    g = weft_resource_get(w, r, sizeof t);
    assert_true(g->frame == 11);

    game_time t2 = {2.0, 20};
    assert_int_equal(weft_resource_insert(w, r, &t2, sizeof t2), WEFT_OK); // replace
    g = weft_resource_get(w, r, sizeof t);
    assert_true(g->frame == 20);

    assert_int_equal(weft_resource_remove(w, r), WEFT_OK);
    assert_false(weft_resource_has(w, r));
    assert_null(weft_resource_get(w, r, sizeof t));
    uint64_t h = weft_world_hash(w);
    assert_int_equal(weft_resource_remove(w, r), WEFT_OK); // missing: no-op
    assert_true(weft_world_hash(w) == h);
    assert_false(weft_resource_has(NULL, r));
    assert_false(weft_resource_has(w, 0));
    assert_false(weft_resource_has(w, 777));
}

static void resource_null_value_default_constructs(void **state)
{
    tw_fixture *f = *state;
    weft_component r = tw_comp(f->w, "blob", 48, 16, WEFT_STORAGE_TABLE, 0);
    assert_int_equal(weft_resource_insert(f->w, r, NULL, 48), WEFT_OK);
    const unsigned char *g = weft_resource_get(f->w, r, 48);
    assert_non_null(g);
    unsigned char zero[48] = {0};
    assert_memory_equal(g, zero, 48);
}

static void resource_separate_from_component_values(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    for (int k = 0; k < 2; k++) {
        weft_component c = tw_comp(w, k ? "cs" : "ct", 4, 4,
                                   k ? WEFT_STORAGE_SPARSE : WEFT_STORAGE_TABLE, 0);
        int32_t ev = 1, rv = 2;
        weft_entity e = weft_spawn(w);
        assert_int_equal(weft_insert(w, e, c, &ev, 4), WEFT_OK);
        assert_int_equal(weft_resource_insert(w, c, &rv, 4), WEFT_OK);
        assert_int_equal(*(const int32_t *)weft_get(w, e, c, 4), 1);
        assert_int_equal(*(const int32_t *)weft_resource_get(w, c, 4), 2);
        assert_int_equal(weft_remove(w, e, c), WEFT_OK);
        assert_true(weft_resource_has(w, c));
        assert_int_equal(*(const int32_t *)weft_resource_get(w, c, 4), 2);
        assert_int_equal(weft_insert(w, e, c, &ev, 4), WEFT_OK);
        assert_int_equal(weft_resource_remove(w, c), WEFT_OK);
        assert_true(weft_has(w, e, c));
        assert_int_equal(weft_despawn(w, e), WEFT_OK);
        assert_int_equal(weft_world_check(w), WEFT_OK);
    }
    // A resource does not make an entity or an archetype.
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    assert_int_equal(s.live_entities, 0);
}

static void resource_ticks_added_kept_changed_bumped(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component r = tw_comp(w, "score", 8, 8, WEFT_STORAGE_TABLE, 0);
    weft_world_increment_change_tick(w);
    uint32_t t0 = weft_world_change_tick(w);
    uint64_t v = 1;
    assert_int_equal(weft_resource_insert(w, r, &v, 8), WEFT_OK);
    weft_ticks tk;
    assert_int_equal(weft_resource_get_ticks(w, r, &tk), WEFT_OK);
    assert_int_equal(tk.added, t0);
    assert_int_equal(tk.changed, t0);

    uint32_t t1 = weft_world_increment_change_tick(w);
    assert_non_null(weft_resource_get(w, r, 8)); // get does not stamp
    assert_int_equal(weft_resource_get_ticks(w, r, &tk), WEFT_OK);
    assert_int_equal(tk.changed, t0);
    assert_non_null(weft_resource_get_mut(w, r, 8));
    assert_int_equal(weft_resource_get_ticks(w, r, &tk), WEFT_OK);
    assert_int_equal(tk.added, t0);
    assert_int_equal(tk.changed, t1);

    uint32_t t2 = weft_world_increment_change_tick(w);
    assert_int_equal(weft_resource_insert(w, r, &v, 8), WEFT_OK); // replace
    assert_int_equal(weft_resource_get_ticks(w, r, &tk), WEFT_OK);
    assert_int_equal(tk.added, t0);
    assert_int_equal(tk.changed, t2);

    uint32_t t3 = weft_world_increment_change_tick(w);
    assert_int_equal(weft_resource_remove(w, r), WEFT_OK);
    tw_snap snap = tw_snap_take(w);
    assert_int_equal(weft_resource_get_ticks(w, r, &tk), WEFT_ERR_NOT_FOUND);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, NULL);
    tw_snap_expect_same(w, &snap);
    assert_int_equal(weft_resource_insert(w, r, &v, 8), WEFT_OK);
    assert_int_equal(weft_resource_get_ticks(w, r, &tk), WEFT_OK);
    assert_int_equal(tk.added, t3);
    assert_int_equal(tk.changed, t3);
}

static void resource_hooks_run_once(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    tw_tracker *tr = &f->tracker;
    weft_component r = tw_tracked_register(w, "tracked", WEFT_STORAGE_TABLE, tr);
    tw_tracked v;
    tw_tracked_make(&v, 1);
    assert_int_equal(weft_resource_insert(w, r, &v, sizeof v), WEFT_OK);
    assert_int_equal(tr->copies, 1);
    const tw_tracked *g = weft_resource_get(w, r, sizeof v);
    assert_true(g->self == g);
    tw_tracked_make(&v, 2);
    assert_int_equal(weft_resource_insert(w, r, &v, sizeof v), WEFT_OK);
    assert_int_equal(tr->dtors, 1);
    assert_int_equal(tr->copies, 2);
    g = weft_resource_get(w, r, sizeof v);
    assert_true(g->payload == 2 && g->self == g);
    assert_int_equal(weft_resource_remove(w, r), WEFT_OK);
    assert_int_equal(tr->dtors, 2);
    assert_int_equal(weft_resource_insert(w, r, NULL, sizeof v), WEFT_OK);
    assert_int_equal(tr->ctors, 1);
    assert_int_equal(tw_tracker_live(tr), 1);
    // Other resources coming and going do not relocate it by memcpy.
    for (int i = 0; i < 20; i++) {
        char name[16];
        snprintf(name, sizeof name, "r%d", i);
        weft_component o = tw_comp(w, name, 16, 8, WEFT_STORAGE_TABLE, 0);
        assert_int_equal(weft_resource_insert(w, o, NULL, 16), WEFT_OK);
    }
    g = weft_resource_get(w, r, sizeof v);
    assert_true(g->self == g);
    weft_world_destroy(w);
    f->w = NULL;
    assert_int_equal(tw_tracker_live(tr), 0);
    if (tr->errors) {
        fail_msg("%s", tr->first_error);
    }
}

static void resource_tag_has_no_value(void **state)
{
    tw_fixture *f = *state;
    weft_component tag = tw_comp(f->w, "paused", 0, 0, WEFT_STORAGE_TABLE, 0);
    assert_int_equal(weft_resource_insert(f->w, tag, NULL, 0), WEFT_OK);
    assert_true(weft_resource_has(f->w, tag));
    tw_snap snap = tw_snap_take(f->w);
    weft_clear_error(f->w);
    assert_null(weft_resource_get(f->w, tag, 0));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    tw_snap_expect_same(f->w, &snap);
    assert_int_equal(weft_resource_remove(f->w, tag), WEFT_OK);
    assert_false(weft_resource_has(f->w, tag));
}

static void resource_counted_in_stats_and_hash(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component a = tw_comp(w, "a", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component b = tw_comp(w, "b", 4, 4, WEFT_STORAGE_SPARSE, 0);
    uint64_t h0 = weft_world_hash(w);
    int32_t v = 5;
    assert_int_equal(weft_resource_insert(w, a, &v, 4), WEFT_OK);
    uint64_t h1 = weft_world_hash(w);
    assert_true(h1 != h0);
    assert_int_equal(weft_resource_insert(w, b, &v, 4), WEFT_OK);
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    assert_int_equal(s.resources, 2);
    assert_int_equal(s.live_entities, 0);
    // The value is hashed, not only its presence.
    int32_t *m = weft_resource_get_mut(w, a, 4);
    uint64_t h2 = weft_world_hash(w);
    *m = 6;
    assert_true(weft_world_hash(w) != h2);
    *m = 5;
    assert_true(weft_world_hash(w) == h2);
    // Which id holds the value matters.
    assert_int_equal(weft_resource_remove(w, b), WEFT_OK);
    assert_true(weft_world_hash(w) == h1);
    assert_int_equal(weft_resource_remove(w, a), WEFT_OK);
    assert_int_equal(weft_resource_insert(w, b, &v, 4), WEFT_OK);
    assert_true(weft_world_hash(w) != h1);
    assert_int_equal(weft_world_get_stats(w, &s), WEFT_OK);
    assert_int_equal(s.resources, 1);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void resource_immutable_refuses_get_mut(void **state)
{
    tw_fixture *f = *state;
    weft_component r = tw_comp(f->w, "config", 4, 4, WEFT_STORAGE_TABLE,
                               WEFT_COMPONENT_IMMUTABLE);
    int32_t v = 1, v2 = 2;
    assert_int_equal(weft_resource_insert(f->w, r, &v, 4), WEFT_OK);
    assert_int_equal(weft_resource_insert(f->w, r, &v2, 4), WEFT_OK); // replace ok
    tw_snap snap = tw_snap_take(f->w);
    weft_clear_error(f->w);
    assert_null(weft_resource_get_mut(f->w, r, 4));
    tw_expect_error(f, WEFT_ERR_IMMUTABLE, "config");
    tw_snap_expect_same(f->w, &snap);
    assert_int_equal(*(const int32_t *)weft_resource_get(f->w, r, 4), 2);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tw_setup, tw_teardown)
    const struct CMUnitTest tests[] = {
        T(resource_insert_get_remove),
        T(resource_null_value_default_constructs),
        T(resource_separate_from_component_values),
        T(resource_ticks_added_kept_changed_bumped),
        T(resource_hooks_run_once),
        T(resource_tag_has_no_value),
        T(resource_counted_in_stats_and_hash),
        T(resource_immutable_refuses_get_mut),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/unit/test_inspect.c - weft_world_check catches broken invariants;
// weft_world_hash ignores row order.
// SPDX-License-Identifier: MIT
#include "unit.h"

typedef struct fx {
    weft_world *w;
    weft_component pos, tag;
    weft_entity e[8];
} fx;

static int setup(void **state)
{
    static fx f;
    f.w = weft_world_create(NULL);
    weft_component_desc d = {0};
    d.name = "Pos";
    d.size = 8;
    f.pos = weft_component_register(f.w, &d);
    d.name = "Tag";
    d.size = 4;
    d.storage = WEFT_STORAGE_SPARSE;
    f.tag = weft_component_register(f.w, &d);
    for (int i = 0; i < 8; i++) {
        float v[2] = {(float)i, 0};
        f.e[i] = weft_spawn_with(f.w, (weft_value[]){{f.pos, 8, v}}, 1);
        if (i % 2) {
            weft_insert(f.w, f.e[i], f.tag, &i, 4);
        }
    }
    weft_despawn(f.w, f.e[0]);
    assert_int_equal(weft_world_check(f.w), WEFT_OK);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    weft_world_destroy(f->w);
    return 0;
}

static void expect_corrupt(fx *f, const char *inv)
{
    assert_int_equal(weft_world_check(f->w), WEFT_ERR_CORRUPT);
    assert_int_equal(weft_last_status(f->w), WEFT_ERR_CORRUPT);
    assert_non_null(strstr(weft_last_error(f->w), inv));
}

// An iteration depth that no open iteration or dispatch accounts for (the
// result of ending one iteration twice) defers every structural call
// forever: the checker must see it, and must accept a depth that open
// iterations do hold.
static void check_detects_wrong_iter_depth(void **state)
{
    fx *f = *state;
    weft_query_desc qd = {0};
    qd.terms[0].id = f->pos;
    qd.term_count = 1;
    weft_query *q = weft_query_create(f->w, &qd);
    assert_non_null(q);
    weft_iter it;
    assert_int_equal(weft_query_iter(f->w, q, &it), WEFT_OK);
    assert_int_equal(weft_world_check(f->w), WEFT_OK); // held by the open iteration
    f->w->iter_depth++;
    expect_corrupt(f, "INV-11");
    f->w->iter_depth -= 2;
    expect_corrupt(f, "INV-11");
    f->w->iter_depth++;
    weft_iter_fini(&it);
    assert_int_equal(weft_world_check(f->w), WEFT_OK);
    f->w->iter_depth = UINT32_MAX; // what an underflow leaves
    expect_corrupt(f, "INV-11");
    f->w->iter_depth = 0;
    assert_int_equal(weft_query_destroy(f->w, q), WEFT_OK);
}

// INV-13: a State resource holding none of its state's values (what a
// restore of a forged snapshot left before restore checked the domain).
static void check_detects_state_value_outside_its_state(void **state)
{
    fx *f = *state;
    weft_state_value vals[2] = {{10, "Menu"}, {20, "Game"}};
    weft_state_desc d = {0};
    d.name = "Screen";
    d.values = vals;
    d.value_count = 2;
    d.initial = 10;
    weft_state s = weft_state_register(f->w, &d);
    assert_true(s != 0);
    assert_int_equal(weft_world_check(f->w), WEFT_OK); // no State resource yet
    assert_int_equal(weft_state_transition(f->w), WEFT_OK);
    assert_int_equal(weft_world_check(f->w), WEFT_OK);
    wf_type_info *ti = wf_registry_get(&f->w->registry, weft_state_resource(f->w, s));
    uint32_t bad = 30, good;
    memcpy(&good, ti->res_value, sizeof good);
    assert_int_equal(good, 10);
    memcpy(ti->res_value, &bad, sizeof bad);
    expect_corrupt(f, "INV-13");
    assert_non_null(strstr(weft_last_error(f->w), "State<Screen>"));
    memcpy(ti->res_value, &good, sizeof good);
    assert_int_equal(weft_world_check(f->w), WEFT_OK);
}

static void check_detects_wrong_row(void **state)
{
    fx *f = *state;
    wf_record *r = &f->w->entities.records[(uint32_t)f->e[3]];
    r->row ^= 1;
    expect_corrupt(f, "INV-2");
    r->row ^= 1;
    assert_int_equal(weft_world_check(f->w), WEFT_OK);
}

static void check_detects_missing_sparse_slot(void **state)
{
    fx *f = *state;
    wf_sparse_set *s = wf_registry_get(&f->w->registry, f->tag)->sparse;
    uint32_t idx = (uint32_t)f->e[5];
    uint32_t *slot = &s->pages[idx >> WF_SPARSE_PAGE_BITS][idx & (WF_SPARSE_PAGE_SIZE - 1)];
    uint32_t keep = *slot;
    *slot = WF_SPARSE_EMPTY;
    expect_corrupt(f, "INV-8");
    *slot = keep;
}

static void check_detects_bad_archetype_count(void **state)
{
    fx *f = *state;
    wf_archetype *a = wf_world_archetype(f->w, f->w->entities.records[(uint32_t)f->e[2]].arch);
    a->entity_count++;
    expect_corrupt(f, "INV-6");
    a->entity_count--;
}

static void check_detects_dead_index_lost(void **state)
{
    fx *f = *state;
    f->w->entities.free_len--; // index 0 falls off the free stack
    expect_corrupt(f, "INV-9");
    f->w->entities.free_len++;
}

static void check_detects_wrong_edge(void **state)
{
    fx *f = *state;
    wf_archetype *a = wf_world_archetype(f->w, f->w->entities.records[(uint32_t)f->e[2]].arch);
    assert_true(a->edge_count > 0);
    for (uint32_t j = 0; j < a->edge_cap; j++) {
        if (a->edges[j].key) {
            uint32_t keep = a->edges[j].target;
            a->edges[j].target = 0;
            if (keep != 0) {
                expect_corrupt(f, "INV-7");
            }
            a->edges[j].target = keep;
        }
    }
    assert_int_equal(weft_world_check(f->w), WEFT_OK);
}

// The same entities and values reached through a different archetype
// creation order and row order hash the same.
static void hash_ignores_row_and_archetype_order(void **state)
{
    (void)state;
    uint64_t h[2];
    for (int run = 0; run < 2; run++) {
        weft_world *w = weft_world_create(NULL);
        weft_component_desc d = {0};
        d.name = "A";
        d.size = 4;
        weft_component a = weft_component_register(w, &d);
        d.name = "B";
        weft_component b = weft_component_register(w, &d);
        weft_entity e[4];
        for (int i = 0; i < 4; i++) {
            e[i] = weft_spawn(w);
        }
        int32_t x = 7;
        if (run == 0) {
            for (int i = 0; i < 4; i++) {
                weft_insert(w, e[i], a, &x, 4);
            }
            weft_insert(w, e[1], b, &x, 4);
        } else {
            weft_insert(w, e[1], b, &x, 4); // {B} archetype first
            for (int i = 3; i >= 0; i--) {
                weft_insert(w, e[i], a, &x, 4); // reversed rows
            }
        }
        h[run] = weft_world_hash(w);
        weft_world_destroy(w);
    }
    assert_true(h[0] == h[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(check_detects_wrong_row, setup, teardown),
        cmocka_unit_test_setup_teardown(check_detects_missing_sparse_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(check_detects_bad_archetype_count, setup, teardown),
        cmocka_unit_test_setup_teardown(check_detects_dead_index_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(check_detects_wrong_edge, setup, teardown),
        cmocka_unit_test_setup_teardown(check_detects_wrong_iter_depth, setup, teardown),
        cmocka_unit_test_setup_teardown(check_detects_state_value_outside_its_state, setup,
                                        teardown),
        cmocka_unit_test(hash_ignores_row_and_archetype_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

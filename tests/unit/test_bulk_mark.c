// tests/unit/test_bulk_mark.c - O(1) whole-table change marks: effective
// ticks, materialisation before rows are added, ticks carried by moves.
// SPDX-License-Identifier: MIT
#include "unit.h"

typedef struct fx {
    weft_world *w;
    weft_component pos, hp;
    weft_query *q;
    weft_entity e[4];
} fx;

static int setup(void **state)
{
    static fx f;
    f.w = weft_world_create(NULL);
    weft_component_desc d = {0};
    d.name = "Pos";
    d.size = 8;
    f.pos = weft_component_register(f.w, &d);
    d.name = "Hp";
    d.size = 4;
    f.hp = weft_component_register(f.w, &d);
    float v[2] = {0, 0};
    for (int i = 0; i < 4; i++) {
        f.e[i] = weft_spawn_with(f.w, (weft_value[]){{f.pos, 8, v}}, 1);
    }
    weft_query_desc qd = {0};
    qd.terms[0] = (weft_term){.id = f.pos, .access = WEFT_ACCESS_WRITE};
    qd.term_count = 1;
    f.q = weft_query_create(f.w, &qd);
    assert_non_null(f.q);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    assert_int_equal(weft_world_check(f->w), WEFT_OK);
    weft_world_destroy(f->w);
    return 0;
}

// Marks the whole table through the query; returns the iteration's tick.
static uint32_t mark_all(fx *f)
{
    weft_iter it;
    assert_int_equal(weft_query_iter(f->w, f->q, &it), WEFT_OK);
    uint32_t tick = weft_world_change_tick(f->w) - 1; // this_run
    int chunks = 0;
    while (weft_iter_next(&it)) {
        assert_non_null(weft_iter_field_mut(&it, 0, 8));
        chunks++;
    }
    assert_int_equal(chunks, 1);
    return tick;
}

static wf_column *pos_column(fx *f)
{
    const wf_record *r = &f->w->entities.records[(uint32_t)f->e[0]];
    return wf_table_column(wf_world_archetype(f->w, r->arch)->table, f->pos);
}

static void bulk_mark_is_o1_and_visible(void **state)
{
    fx *f = *state;
    uint32_t before = pos_column(f)->ticks[0].changed;
    uint32_t tick = mark_all(f);
    wf_column *c = pos_column(f);
    assert_true(c->bulk);
    assert_int_equal(c->ticks[0].changed, before); // rows untouched
    weft_ticks t;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(weft_get_ticks(f->w, f->e[i], f->pos, &t), WEFT_OK);
        assert_int_equal(t.changed, tick);
    }
}

static void bulk_mark_materialised_before_append(void **state)
{
    fx *f = *state;
    uint32_t tick = mark_all(f);
    weft_world_increment_change_tick(f->w);
    float v[2] = {1, 1};
    weft_entity late = weft_spawn_with(f->w, (weft_value[]){{f->pos, 8, v}}, 1);
    wf_column *c = pos_column(f);
    assert_false(c->bulk);
    weft_ticks t;
    assert_int_equal(weft_get_ticks(f->w, f->e[2], f->pos, &t), WEFT_OK);
    assert_int_equal(t.changed, tick);
    assert_int_equal(weft_get_ticks(f->w, late, f->pos, &t), WEFT_OK);
    assert_int_equal(t.changed, weft_world_change_tick(f->w));
    assert_int_equal(t.added, weft_world_change_tick(f->w));
}

static void bulk_mark_travels_with_moved_rows(void **state)
{
    fx *f = *state;
    uint32_t tick = mark_all(f);
    int32_t hp = 3;
    weft_world_increment_change_tick(f->w);
    assert_int_equal(weft_insert(f->w, f->e[1], f->hp, &hp, 4), WEFT_OK); // moves the row
    weft_ticks t;
    assert_int_equal(weft_get_ticks(f->w, f->e[1], f->pos, &t), WEFT_OK);
    assert_int_equal(t.changed, tick);
    // the rows left behind still see the mark
    assert_int_equal(weft_get_ticks(f->w, f->e[3], f->pos, &t), WEFT_OK);
    assert_int_equal(t.changed, tick);
}

static void bulk_mark_newer_row_write_wins(void **state)
{
    fx *f = *state;
    uint32_t tick = mark_all(f);
    weft_world_increment_change_tick(f->w);
    weft_world_increment_change_tick(f->w);
    assert_non_null(weft_get_mut(f->w, f->e[0], f->pos, 8));
    weft_ticks t;
    assert_int_equal(weft_get_ticks(f->w, f->e[0], f->pos, &t), WEFT_OK);
    assert_int_equal(t.changed, weft_world_change_tick(f->w));
    assert_int_equal(weft_get_ticks(f->w, f->e[1], f->pos, &t), WEFT_OK);
    assert_int_equal(t.changed, tick);
    // a second query with an old last run sees all four as changed
    weft_query_desc qd = {0};
    qd.terms[0] = (weft_term){.id = f->pos, .filter = WEFT_FILTER_CHANGED};
    qd.term_count = 1;
    weft_query *q2 = weft_query_create(f->w, &qd);
    assert_int_equal(weft_query_set_last_run(f->w, q2, tick - 1), WEFT_OK);
    assert_int_equal(weft_query_count(f->w, q2), 4);
    assert_int_equal(weft_query_set_last_run(f->w, q2, tick), WEFT_OK);
    assert_int_equal(weft_query_count(f->w, q2), 1); // only the later get_mut
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(bulk_mark_is_o1_and_visible, setup, teardown),
        cmocka_unit_test_setup_teardown(bulk_mark_materialised_before_append, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(bulk_mark_travels_with_moved_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(bulk_mark_newer_row_write_wins, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

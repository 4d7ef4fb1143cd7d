// tests/unit/test_archetype_graph.c - archetypes, shared tables, edges,
// migration, through a real world.
// SPDX-License-Identifier: MIT
#include "unit.h"

typedef struct fx {
    weft_world *w;
    weft_component pos, vel, health, tag; // tag is sparse
} fx;

static int setup(void **state)
{
    static fx f;
    f.w = weft_world_create(NULL);
    weft_component_desc d = {0};
    d.name = "Pos";
    d.size = 8;
    f.pos = weft_component_register(f.w, &d);
    d.name = "Vel";
    f.vel = weft_component_register(f.w, &d);
    d.name = "Health";
    d.size = 4;
    f.health = weft_component_register(f.w, &d);
    d.name = "Tag";
    d.size = 0;
    d.storage = WEFT_STORAGE_SPARSE;
    f.tag = weft_component_register(f.w, &d);
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

static wf_archetype *arch_of(fx *f, const weft_component *ids, uint32_t n)
{
    return wf_graph_find(&f->w->graph, ids, n);
}

// wf_graph_add / wf_graph_remove, checking the plan they hand out: one
// exactly when the tables differ, and between those two tables.
static wf_archetype *gstep(wf_graph *g, wf_allocator *a, wf_registry *reg,
                           wf_archetype *from, uint32_t key)
{
    wf_move_plan *plan = (wf_move_plan *)(uintptr_t)1;
    wf_archetype *to = wf_graph_step(g, a, reg, from, key, &plan);
    assert_non_null(to);
    if (to->table == from->table) {
        assert_null(plan);
    } else {
        assert_non_null(plan);
        assert_ptr_equal(plan->src, from->table);
        assert_ptr_equal(plan->dst, to->table);
    }
    return to;
}
#define gadd(g, a, reg, from, c) gstep(g, a, reg, from, c)
#define gremove(g, a, reg, from, c) gstep(g, a, reg, from, (c) | WF_EDGE_REMOVE)

static wf_archetype *edge_to(wf_graph *g, wf_archetype *from, uint32_t key)
{
    const wf_edge *ed = wf_graph_edge(from, key);
    return ed ? g->archetypes[ed->target] : NULL;
}

// Table sharing: a sparse tag changes the archetype, not the row.
static void graph_sparse_tag_shares_table(void **state)
{
    fx *f = *state;
    float v[2] = {1, 2};
    weft_value vals[] = {{f->pos, 8, v}, {f->vel, 8, v}};
    weft_entity e0 = weft_spawn_with(f->w, vals, 2);
    weft_entity e1 = weft_spawn_with(f->w, vals, 2);
    const wf_record *r = &f->w->entities.records[(uint32_t)e1];
    uint32_t arch1 = r->arch;
    uint32_t row = r->row;
    wf_table *table = wf_world_archetype(f->w, arch1)->table;
    assert_int_equal(weft_insert(f->w, e1, f->tag, NULL, 0), WEFT_OK);
    assert_int_not_equal(r->arch, arch1);
    assert_ptr_equal(wf_world_archetype(f->w, r->arch)->table, table);
    assert_int_equal(r->row, row);
    assert_int_equal(table->archetype_count, 2);
    assert_int_equal(weft_remove(f->w, e1, f->tag), WEFT_OK);
    assert_int_equal(r->arch, arch1);
    assert_int_equal(r->row, row);
    (void)e0;
}

// Edge graph: {}+Health+{Pos,Vel} and {}+{Pos,Vel}+Health meet, and the
// second traversal is served by cached edges.
static void graph_two_paths_same_archetype(void **state)
{
    fx *f = *state;
    wf_graph *g = &f->w->graph;
    wf_allocator *a = &f->w->alloc;
    wf_registry *reg = &f->w->registry;
    wf_archetype *a0 = g->archetypes[0];
    wf_archetype *a1 = gadd(g, a, reg, a0, f->health);
    wf_archetype *a3 = gadd(g, a, reg, gadd(g, a, reg, a1, f->pos), f->vel);
    wf_archetype *a2 = gadd(g, a, reg, gadd(g, a, reg, a0, f->pos), f->vel);
    wf_archetype *a3b = gadd(g, a, reg, a2, f->health);
    assert_ptr_equal(a3, a3b);
    weft_component full[] = {f->pos, f->vel, f->health};
    assert_ptr_equal(arch_of(f, full, 3), a3);
    uint32_t before = g->arch_count;
    assert_ptr_equal(edge_to(g, a2, f->health), a3);
    assert_ptr_equal(edge_to(g, a3, f->health | WF_EDGE_REMOVE), a2);
    assert_ptr_equal(gadd(g, a, reg, a2, f->health), a3);
    assert_int_equal(g->arch_count, before);
    // adding a present component or removing an absent one stays put
    assert_ptr_equal(gadd(g, a, reg, a3, f->pos), a3);
    assert_ptr_equal(gremove(g, a, reg, a2, f->health), a2);
}

// Migration: E2 of E0..E3 gains Health; E3 fills row 2.
static void graph_migration_fixes_swapped_entity(void **state)
{
    fx *f = *state;
    float v[2] = {0, 0};
    weft_value vals[] = {{f->pos, 8, v}, {f->vel, 8, v}};
    weft_entity e[4];
    for (int i = 0; i < 4; i++) {
        v[0] = (float)i;
        e[i] = weft_spawn_with(f->w, vals, 2);
    }
    wf_record *rec = f->w->entities.records;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(rec[(uint32_t)e[i]].row, i);
    }
    int32_t hp = 5;
    assert_int_equal(weft_insert(f->w, e[2], f->health, &hp, 4), WEFT_OK);
    assert_int_equal(rec[(uint32_t)e[3]].row, 2);
    assert_int_equal(rec[(uint32_t)e[2]].row, 0);
    assert_int_equal(rec[(uint32_t)e[0]].row, 0);
    assert_int_equal(rec[(uint32_t)e[1]].row, 1);
    const float *p3 = weft_get(f->w, e[3], f->pos, 8);
    assert_true(p3[0] == 3.0f);
    const float *p2 = weft_get(f->w, e[2], f->pos, 8);
    assert_true(p2[0] == 2.0f);
    // Swap-remove of the last row: despawning it moves nobody
    wf_table *t = wf_world_archetype(f->w, rec[(uint32_t)e[1]].arch)->table;
    assert_int_equal(t->count, 3);
    assert_int_equal(t->entities[2], e[3]);
    assert_int_equal(weft_despawn(f->w, e[3]), WEFT_OK);
    assert_int_equal(rec[(uint32_t)e[0]].row, 0);
    assert_int_equal(rec[(uint32_t)e[1]].row, 1);
}

// Values move with their ticks when rows migrate.
static void graph_ticks_travel_with_rows(void **state)
{
    fx *f = *state;
    float v[2] = {1, 1};
    weft_entity e = weft_spawn_with(f->w, (weft_value[]){{f->pos, 8, v}}, 1);
    weft_world_increment_change_tick(f->w);
    weft_world_increment_change_tick(f->w);
    int32_t hp = 1;
    assert_int_equal(weft_insert(f->w, e, f->health, &hp, 4), WEFT_OK);
    weft_ticks tp, th;
    assert_int_equal(weft_get_ticks(f->w, e, f->pos, &tp), WEFT_OK);
    assert_int_equal(weft_get_ticks(f->w, e, f->health, &th), WEFT_OK);
    assert_int_equal(tp.added, 1);
    assert_int_equal(th.added, 3);
    wf_table *t = wf_world_archetype(f->w, f->w->entities.records[(uint32_t)e].arch)->table;
    assert_int_equal(wf_table_column(t, f->pos)->latest_change, 1);
    assert_int_equal(wf_table_column(t, f->health)->latest_change, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(graph_sparse_tag_shares_table, setup, teardown),
        cmocka_unit_test_setup_teardown(graph_two_paths_same_archetype, setup, teardown),
        cmocka_unit_test_setup_teardown(graph_migration_fixes_swapped_entity, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(graph_ticks_travel_with_rows, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

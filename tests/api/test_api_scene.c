// tests/api/test_api_scene.c - scenes and cloning: a hierarchy saved and
// spawned twice gives two disjoint copies whose ChildOf links and entity
// fields point inside their own copy (forward references included) while
// references outside the set are kept; query scenes; weft_clone of one
// entity and of a subtree; a relationship to a vanished outside target is
// dropped; every allocation of a spawn failing in turn leaves the world's
// content as it was.
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

typedef struct link {
    weft_entity peer;     // another entity (inside or outside the set)
    weft_entity pair[2];
    int32_t tag;
} link;

static const weft_field link_fields[] = {
    {.name = "peer", .kind = WEFT_KIND_ENTITY, .offset = offsetof(link, peer)},
    {.name = "pair", .kind = WEFT_KIND_ENTITY, .offset = offsetof(link, pair), .count = 2},
    {.name = "tag", .kind = WEFT_KIND_I32, .offset = offsetof(link, tag)},
};
static const weft_type_desc link_desc = {"link", sizeof(link), 0, link_fields, 3};

typedef struct tree {
    weft_component link, child_of, mark;
    weft_entity outside;
    weft_entity nodes[7]; // root, 2 children, 4 grandchildren (breadth first)
} tree;

static void make_tree(tw_fixture *f, tree *t)
{
    t->link = tw_comp(f->w, "link", sizeof(link), _Alignof(link), WEFT_STORAGE_TABLE, 0);
    t->mark = tw_comp(f->w, "mark", 0, 0, WEFT_STORAGE_SPARSE, 0);
    assert_int_equal(weft_component_describe(f->w, t->link, &link_desc), WEFT_OK);
    t->child_of = weft_child_of(f->w);
    t->outside = weft_spawn(f->w);
    for (int i = 0; i < 7; i++) {
        t->nodes[i] = weft_spawn(f->w);
    }
    for (int i = 1; i < 7; i++) {
        assert_int_equal(weft_set_parent(f->w, t->nodes[i], t->nodes[(i - 1) / 2]), WEFT_OK);
    }
    for (int i = 0; i < 7; i++) {
        link l;
        memset(&l, 0, sizeof l);
        l.peer = t->nodes[(i + 3) % 7]; // forward and backward references
        l.pair[0] = t->outside;
        l.pair[1] = t->nodes[6];        // the root names the last grandchild
        l.tag = i;
        assert_int_equal(weft_insert(f->w, t->nodes[i], t->link, &l, sizeof l), WEFT_OK);
        if (i % 2) {
            assert_int_equal(weft_insert(f->w, t->nodes[i], t->mark, NULL, 0), WEFT_OK);
        }
    }
}

static int index_of(const weft_entity *set, weft_entity e)
{
    for (int i = 0; i < 7; i++) {
        if (set[i] == e) {
            return i;
        }
    }
    return -1;
}

// The copy `c` (in scene order = breadth first, like t->nodes) mirrors the
// original inside itself.
static void expect_copy(tw_fixture *f, const tree *t, const weft_entity *c)
{
    for (int i = 0; i < 7; i++) {
        assert_true(weft_is_alive(f->w, c[i]));
        assert_int_equal(index_of(t->nodes, c[i]), -1);
        weft_entity parent = weft_parent(f->w, c[i]);
        if (i == 0) {
            assert_int_equal(parent, 0);
        } else {
            assert_true(parent == c[(i - 1) / 2]);
        }
        const link *l = weft_get(f->w, c[i], t->link, sizeof *l);
        assert_non_null(l);
        assert_true(l->peer == c[(i + 3) % 7]);
        assert_true(l->pair[0] == t->outside);
        assert_true(l->pair[1] == c[6]);
        assert_int_equal(l->tag, i);
        assert_int_equal(weft_has(f->w, c[i], t->mark), i % 2 == 1);
    }
    int32_t n = 0;
    const weft_entity *kids = weft_children(f->w, c[0], &n);
    assert_int_equal(n, 2);
    assert_true(kids[0] == c[1] && kids[1] == c[2]); // order kept
}

static void scene_spawned_twice_gives_disjoint_remapped_trees(void **state)
{
    tw_fixture *f = *state;
    tree t;
    make_tree(f, &t);
    weft_scene *s = weft_scene_from_tree(f->w, t.nodes[0]);
    assert_non_null(s);
    assert_int_equal(weft_scene_count(s), 7);
    uint64_t before = weft_world_hash(f->w);
    weft_entity a[7], b[7];
    assert_int_equal(weft_scene_spawn(f->w, s, a, 7), WEFT_OK);
    assert_int_equal(weft_scene_spawn(f->w, s, b, 7), WEFT_OK);
    expect_copy(f, &t, a);
    expect_copy(f, &t, b);
    for (int i = 0; i < 7; i++) {
        assert_int_equal(index_of(b, a[i]), -1);
    }
    // the originals are untouched
    for (int i = 1; i < 7; i++) {
        assert_true(weft_parent(f->w, t.nodes[i]) == t.nodes[(i - 1) / 2]);
    }
    assert_true(weft_world_hash(f->w) != before);
    assert_int_equal(weft_world_check(f->w), WEFT_OK);
    // the scene outlives its originals
    assert_int_equal(weft_despawn(f->w, t.nodes[0]), WEFT_OK); // linked: whole tree
    weft_entity c[7];
    assert_int_equal(weft_scene_spawn(f->w, s, c, 7), WEFT_OK);
    expect_copy(f, &t, c);
    assert_int_equal(weft_scene_destroy(f->w, s), WEFT_OK);
    assert_int_equal(weft_scene_destroy(f->w, NULL), WEFT_OK);
}

static void scene_from_query_keeps_outside_links(void **state)
{
    tw_fixture *f = *state;
    tree t;
    make_tree(f, &t);
    // the marked nodes (1, 3, 5): their parents 0, 1, 2 are partly outside
    weft_query_desc qd = {0};
    qd.terms[0].id = t.mark;
    qd.terms[0].oper = WEFT_OPER_WITH;
    qd.term_count = 1;
    weft_query *q = weft_query_create(f->w, &qd);
    weft_scene *s = weft_scene_from_query(f->w, q);
    assert_non_null(s);
    assert_int_equal(weft_scene_count(s), 3);
    weft_entity out[3];
    assert_int_equal(weft_scene_spawn(f->w, s, out, 3), WEFT_OK);
    for (int k = 0; k < 3; k++) {
        const link *l = weft_get(f->w, out[k], t.link, sizeof *l);
        int i = l->tag;
        weft_entity parent = weft_parent(f->w, out[k]);
        int pi = (i - 1) / 2;
        if (pi % 2 == 1) { // parent was saved too: the copy's parent is its copy
            int found = -1;
            for (int j = 0; j < 3; j++) {
                const link *lj = weft_get(f->w, out[j], t.link, sizeof *lj);
                found = lj->tag == pi ? j : found;
            }
            assert_true(found >= 0 && parent == out[found]);
        } else { // kept: the original parent, outside the set
            assert_true(parent == t.nodes[pi]);
        }
    }
    // a vanished outside target drops the relationship
    weft_scene *one = weft_scene_from_tree(f->w, t.nodes[4]); // parent: node 1
    assert_int_equal(weft_remove_parent(f->w, t.nodes[3]), WEFT_OK);
    assert_int_equal(weft_remove_parent(f->w, t.nodes[4]), WEFT_OK);
    assert_int_equal(weft_despawn(f->w, t.nodes[1]), WEFT_OK);
    weft_entity lone = 0;
    assert_int_equal(weft_scene_spawn(f->w, one, &lone, 1), WEFT_OK);
    assert_int_equal(weft_parent(f->w, lone), 0);
    assert_int_equal(weft_scene_destroy(f->w, one), WEFT_OK);
    assert_int_equal(weft_scene_destroy(f->w, s), WEFT_OK);
    assert_int_equal(weft_world_check(f->w), WEFT_OK);
}

static void clone_one_and_subtree(void **state)
{
    tw_fixture *f = *state;
    tree t;
    make_tree(f, &t);
    weft_entity c = weft_clone(f->w, t.nodes[1], false);
    assert_true(c != 0);
    assert_true(weft_parent(f->w, c) == t.nodes[0]); // a sibling of the original
    int32_t n = 0;
    weft_children(f->w, c, &n);
    assert_int_equal(n, 0);
    const link *l = weft_get(f->w, c, t.link, sizeof *l);
    assert_true(l->peer == t.nodes[4]); // outside the one-entity set: kept
    weft_entity r = weft_clone(f->w, t.nodes[0], true);
    assert_true(r != 0);
    assert_int_equal(weft_parent(f->w, r), 0);
    // 6 below the original root, plus the first clone (a child of it)
    assert_int_equal(weft_descendants(f->w, r, t.child_of, NULL, 0), 7);
    const link *rl = weft_get(f->w, r, t.link, sizeof *rl);
    assert_int_equal(index_of(t.nodes, rl->pair[1]), -1); // remapped forward
    assert_true(weft_is_alive(f->w, rl->pair[1]));
    assert_true(weft_parent(f->w, weft_parent(f->w, rl->pair[1])) != 0);
    assert_int_equal(weft_clone(f->w, 0, false), 0);
    assert_int_equal(weft_last_status(f->w), WEFT_ERR_INVALID_ENTITY);
    assert_int_equal(weft_world_check(f->w), WEFT_OK);
}

static void scene_spawn_survives_allocation_failures(void **state)
{
    tw_fixture *f = *state;
    tree t;
    make_tree(f, &t);
    weft_scene *s = weft_scene_from_tree(f->w, t.nodes[0]);
    assert_non_null(s);
    for (int64_t n = 1;; n++) {
        tw_snap before = tw_snap_take(f->w);
        tw_alloc_fail_nth(&f->alloc, n, false);
        weft_entity out[7];
        weft_status st = weft_scene_spawn(f->w, s, out, 7);
        bool injected = tw_alloc_injected(&f->alloc) > 0;
        tw_alloc_disarm(&f->alloc);
        if (!injected) {
            assert_int_equal(st, WEFT_OK);
            expect_copy(f, &t, out);
            break;
        }
        if (st == WEFT_OK) { // a benign failure (an edge cache) was absorbed
            expect_copy(f, &t, out);
            continue;
        }
        assert_int_equal(st, WEFT_ERR_OUT_OF_MEMORY);
        tw_snap_expect_same_content(f->w, &before);
    }
    // and saving under failures: NULL and nothing leaked, or a full scene
    for (int64_t n = 1;; n++) {
        tw_alloc_fail_nth(&f->alloc, n, false);
        weft_scene *x = weft_scene_from_tree(f->w, t.nodes[0]);
        bool injected = tw_alloc_injected(&f->alloc) > 0;
        tw_alloc_disarm(&f->alloc);
        if (x) {
            assert_int_equal(weft_scene_count(x), 7);
            weft_scene_destroy(f->w, x);
        }
        if (!injected) {
            assert_non_null(x);
            break;
        }
    }
    weft_scene_destroy(f->w, s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(scene_spawned_twice_gives_disjoint_remapped_trees,
                                        tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(scene_from_query_keeps_outside_links, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(clone_one_and_subtree, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(scene_spawn_survives_allocation_failures, tw_setup,
                                        tw_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

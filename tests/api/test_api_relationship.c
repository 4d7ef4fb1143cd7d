// tests/api/test_api_relationship.c - black-box tests of relationships and
// the ChildOf hierarchy: relate/unrelate and the target lists, traversal,
// recursive despawn (a 1,000,000-entity chain), refused cycles,
// user relationships with and without LINKED_DESPAWN, deferral inside
// query iterations.
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

#if defined(__SANITIZE_ADDRESS__)
#define TR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TR_ASAN 1
#endif
#endif
#ifndef TR_ASAN
#define TR_ASAN 0
#endif

// Asserts that e's children are exactly kids[0..n) in order.
static void expect_children(weft_world *w, weft_entity e, const weft_entity *kids, int32_t n)
{
    int32_t count = -1;
    const weft_entity *got = weft_children(w, e, &count);
    if (count != n) {
        fail_msg("entity %u has %d children, expected %d", weft_entity_index(e), count, n);
    }
    if (n == 0) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    for (int32_t i = 0; i < n; i++) {
        if (got[i] != kids[i]) {
            fail_msg("child %d of %u is %u, expected %u", i, weft_entity_index(e),
                     weft_entity_index(got[i]), weft_entity_index(kids[i]));
        }
        assert_true(weft_parent(w, kids[i]) == e);
    }
}

// REL tests: set parent, order, reparent, remove parent.
static void rel_children_list_basic(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component co = weft_child_of(w);
    assert_true(co != 0);
    assert_true(weft_child_of(w) == co);
    weft_component kids_c = weft_relationship_targets(w, co);
    assert_true(kids_c != 0 && kids_c != co);
    weft_entity p = weft_spawn(w), q = weft_spawn(w);
    weft_entity c = weft_spawn(w), d = weft_spawn(w);
    expect_children(w, p, NULL, 0);
    assert_true(weft_parent(w, c) == 0);

    assert_int_equal(weft_set_parent(w, c, p), WEFT_OK);
    expect_children(w, p, (weft_entity[]){c}, 1);
    assert_true(weft_has(w, p, kids_c));
    assert_true(weft_has(w, c, co));
    assert_int_equal(weft_set_parent(w, d, p), WEFT_OK);
    expect_children(w, p, (weft_entity[]){c, d}, 2);

    // reparent c to q
    assert_int_equal(weft_set_parent(w, c, q), WEFT_OK);
    expect_children(w, p, (weft_entity[]){d}, 1);
    expect_children(w, q, (weft_entity[]){c}, 1);

    // remove d's parent: p loses its list component
    assert_int_equal(weft_remove_parent(w, d), WEFT_OK);
    expect_children(w, p, NULL, 0);
    assert_false(weft_has(w, p, kids_c));
    assert_false(weft_has(w, d, co));
    assert_true(weft_parent(w, d) == 0);
    // removing an absent parent is a no-op
    assert_int_equal(weft_remove_parent(w, d), WEFT_OK);

    // despawning a child removes it from its parent's list
    assert_int_equal(weft_set_parent(w, d, q), WEFT_OK);
    expect_children(w, q, (weft_entity[]){c, d}, 2);
    assert_int_equal(weft_despawn(w, c), WEFT_OK);
    expect_children(w, q, (weft_entity[]){d}, 1);
    assert_int_equal(weft_despawn(w, d), WEFT_OK);
    expect_children(w, q, NULL, 0);
    assert_false(weft_has(w, q, kids_c));
    assert_true(weft_is_alive(w, q));
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// Re-setting the same parent moves the child to the end (documented).
static void rel_same_parent_again(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_entity p = weft_spawn(w), c = weft_spawn(w), d = weft_spawn(w);
    assert_int_equal(weft_set_parent(w, c, p), WEFT_OK);
    assert_int_equal(weft_set_parent(w, c, p), WEFT_OK); // only child: stays listed
    expect_children(w, p, (weft_entity[]){c}, 1);
    assert_int_equal(weft_set_parent(w, d, p), WEFT_OK);
    assert_int_equal(weft_set_parent(w, c, p), WEFT_OK);
    expect_children(w, p, (weft_entity[]){d, c}, 2);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// Self-parenting and parenting to a descendant: refused, world unchanged.
static void rel_cycles_refused(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    (void)weft_child_of(w);
    weft_entity r = weft_spawn(w), a = weft_spawn(w), c = weft_spawn(w);
    assert_int_equal(weft_set_parent(w, a, r), WEFT_OK);
    assert_int_equal(weft_set_parent(w, c, a), WEFT_OK);
    tw_snap s = tw_snap_take(w);

    assert_int_equal(weft_set_parent(w, c, c), WEFT_ERR_RELATIONSHIP);
    tw_expect_error(f, WEFT_ERR_RELATIONSHIP, NULL);
    tw_snap_expect_same(w, &s);
    assert_int_equal(weft_set_parent(w, r, c), WEFT_ERR_RELATIONSHIP);
    tw_expect_error(f, WEFT_ERR_RELATIONSHIP, NULL);
    tw_snap_expect_same(w, &s);
    assert_int_equal(weft_set_parent(w, r, a), WEFT_ERR_RELATIONSHIP);
    tw_snap_expect_same(w, &s);
    assert_int_equal(weft_set_parent(w, a, a), WEFT_ERR_RELATIONSHIP);
    tw_snap_expect_same(w, &s);
    // a lone root to itself too
    weft_entity lone = weft_spawn(w);
    s = tw_snap_take(w);
    assert_int_equal(weft_set_parent(w, lone, lone), WEFT_ERR_RELATIONSHIP);
    tw_snap_expect_same(w, &s);
    expect_children(w, r, (weft_entity[]){a}, 1);
    expect_children(w, a, (weft_entity[]){c}, 1);
    expect_children(w, c, NULL, 0);
}

// ChildOf inserted directly (bypassing weft_relate) with itself or a dead
// target: the hook refuses it; the child ends without ChildOf and nobody
// gets a Children list.
static void rel_direct_insert_refused(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component co = weft_child_of(w);
    weft_component kids = weft_relationship_targets(w, co);
    weft_entity c = weft_spawn(w);
    weft_entity dead = weft_spawn(w);
    assert_int_equal(weft_despawn(w, dead), WEFT_OK);
    weft_clear_error(w);
    (void)weft_insert(w, c, co, &c, sizeof c);
    assert_false(weft_has(w, c, co));
    assert_false(weft_has(w, c, kids));
    assert_int_equal(weft_last_status(w), WEFT_ERR_RELATIONSHIP);
    (void)weft_insert(w, c, co, &dead, sizeof dead);
    assert_false(weft_has(w, c, co));
    assert_int_equal(weft_world_check(w), WEFT_OK);
    // the relationship component is immutable
    assert_null(weft_get_mut(w, c, co, sizeof(weft_entity)));
    // a direct insert with a valid target works like weft_set_parent
    weft_entity p = weft_spawn(w);
    assert_int_equal(weft_insert(w, c, co, &p, sizeof p), WEFT_OK);
    expect_children(w, p, (weft_entity[]){c}, 1);
}

// Registers a user relationship with LINKED_DESPAWN.
static weft_component register_linked(weft_world *w, const char *name)
{
    weft_relationship_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.flags = WEFT_RELATIONSHIP_LINKED_DESPAWN;
    weft_component rel = weft_relationship_register(w, &d);
    assert_true(rel != 0);
    return rel;
}

// Two linked relationships over the same entities (children that their
// parent also owns): the despawn reaches each child along both, which is
// not a cycle. Before, the despawn's preparation queued every child once
// per path, counted more cascade members than live entities and refused
// the despawn as a cycle (fuzz_relations).
static void rel_two_linked_relationships_share_a_subtree(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component owns = register_linked(w, "Owns");
    weft_entity p = weft_spawn(w);
    weft_entity kids[8];
    for (int i = 0; i < 8; i++) {
        kids[i] = weft_spawn(w);
        assert_int_equal(weft_set_parent(w, kids[i], p), WEFT_OK);
        assert_int_equal(weft_relate(w, kids[i], owns, i ? kids[i - 1] : p), WEFT_OK);
    }
    weft_entity bystander = weft_spawn(w);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    assert_int_equal(weft_despawn(w, p), WEFT_OK);
    for (int i = 0; i < 8; i++) {
        assert_false(weft_is_alive(w, kids[i]));
    }
    assert_true(weft_is_alive(w, bystander));
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// A cascade's members are despawned by records their root queued and
// reserved for; a member's own despawn must not need memory then. With the
// n-th allocation failing, for every n, despawning a root whose children
// own entities through a second linked relationship either takes the whole
// cascade or leaves everything, and no child is left naming a dead parent
// (before, a member's despawn could fail for memory halfway through).
static void rel_cascade_members_do_not_fail(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component owns = register_linked(w, "Owns");
    bool whole = false;
    for (int64_t n = 1; n < 400 && !whole; n++) {
        weft_entity p = weft_spawn(w);
        weft_entity kids[4], owned[4];
        for (int i = 0; i < 4; i++) {
            kids[i] = weft_spawn(w);
            owned[i] = weft_spawn(w);
            assert_int_equal(weft_set_parent(w, kids[i], p), WEFT_OK);
            assert_int_equal(weft_relate(w, owned[i], owns, kids[i]), WEFT_OK);
        }
        tw_alloc_fail_nth(&f->alloc, n, false);
        weft_status st = weft_despawn(w, p);
        tw_alloc_disarm(&f->alloc);
        weft_clear_error(w);
        if (weft_world_check(w) != WEFT_OK) {
            fail_msg("allocation %lld failing: %s", (long long)n, weft_last_error(w));
        }
        int alive = weft_is_alive(w, p);
        for (int i = 0; i < 4; i++) {
            alive += weft_is_alive(w, kids[i]) + weft_is_alive(w, owned[i]);
        }
        if (alive != 0 && alive != 9) {
            fail_msg("allocation %lld failing (%s): %d of 9 entities left", (long long)n,
                     weft_status_name(st), alive);
        }
        whole = st == WEFT_OK && tw_alloc_injected(&f->alloc) == 0;
        if (alive) {
            assert_int_equal(weft_despawn(w, p), WEFT_OK);
        }
    }
    assert_true(whole);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void rel_misuse(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component plain = tw_comp(w, "Plain", 8, 8, WEFT_STORAGE_TABLE, 0);
    weft_entity a = weft_spawn(w), b = weft_spawn(w), dead = weft_spawn(w);
    assert_int_equal(weft_despawn(w, dead), WEFT_OK);
    assert_int_equal(weft_relate(w, a, plain, b), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_relate(w, a, 999, b), WEFT_ERR_UNKNOWN_COMPONENT);
    assert_int_equal(weft_unrelate(w, a, plain), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_set_parent(w, a, dead), WEFT_ERR_STALE_ENTITY);
    assert_int_equal(weft_set_parent(w, dead, a), WEFT_ERR_STALE_ENTITY);
    assert_int_equal(weft_set_parent(w, a, 0), WEFT_ERR_INVALID_ENTITY);
    assert_int_equal(weft_remove_parent(w, dead), WEFT_ERR_STALE_ENTITY);
    assert_int_equal(weft_set_parent(NULL, a, b), WEFT_ERR_INVALID_HANDLE);
    assert_true(weft_related(w, a, plain) == 0);
    int32_t n = 5;
    assert_null(weft_related_sources(w, a, plain, &n));
    assert_int_equal(n, 0);
    assert_true(weft_relationship_targets(w, plain) == 0);
    weft_entity out[4];
    assert_int_equal(weft_ancestors(w, a, plain, out, 4), -1);
    assert_int_equal(weft_descendants(w, a, plain, out, 4), -1);
    assert_int_equal(weft_ancestors(w, dead, weft_child_of(w), out, 4), -1);
    assert_int_equal(weft_descendants(w, a, weft_child_of(w), NULL, 4), -1);
    weft_relationship_desc d;
    memset(&d, 0, sizeof d);
    assert_true(weft_relationship_register(w, &d) == 0);
    d.name = "Plain";
    assert_true(weft_relationship_register(w, &d) == 0);
    tw_expect_error(f, WEFT_ERR_ALREADY_EXISTS, NULL);
    d.name = "Likes";
    d.flags = 0x80;
    assert_true(weft_relationship_register(w, &d) == 0);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    d.flags = 0;
    weft_component likes = weft_relationship_register(w, &d);
    assert_true(likes != 0);
    assert_true(weft_relationship_register(w, &d) == 0);
    tw_expect_error(f, WEFT_ERR_ALREADY_EXISTS, NULL);
    assert_true(weft_component_lookup(w, "Likes") == likes);
    assert_true(weft_component_lookup(w, "Likes.targets") ==
                weft_relationship_targets(w, likes));
}

// Despawning a parent despawns its whole subtree; siblings outside stay.
static void rel_despawn_subtree(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_entity keep = weft_spawn(w);
    weft_entity root = weft_spawn(w);
    assert_int_equal(weft_set_parent(w, root, keep), WEFT_OK);
    enum { N = 1000 };
    weft_entity *all = malloc(N * sizeof *all);
    all[0] = root;
    tw_rng rng;
    tw_rng_seed(&rng, 42);
    for (int i = 1; i < N; i++) {
        all[i] = weft_spawn(w);
        weft_entity parent = all[tw_rng_below(&rng, (uint32_t)i)];
        assert_int_equal(weft_set_parent(w, all[i], parent), WEFT_OK);
    }
    weft_entity other = weft_spawn(w);
    assert_int_equal(weft_set_parent(w, other, keep), WEFT_OK);
    assert_int_equal(weft_descendants(w, root, weft_child_of(w), NULL, 0), N - 1);
    assert_int_equal(weft_despawn(w, root), WEFT_OK);
    for (int i = 0; i < N; i++) {
        assert_false(weft_is_alive(w, all[i]));
    }
    assert_true(weft_is_alive(w, keep));
    assert_true(weft_is_alive(w, other));
    expect_children(w, keep, (weft_entity[]){other}, 1);
    weft_world_stats st;
    assert_int_equal(weft_world_get_stats(w, &st), WEFT_OK);
    assert_int_equal(st.live_entities, 2);
    assert_int_equal(weft_commands_count(weft_world_commands(w)), 0);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    free(all);
}

// A chain despawned from the root: iterative, no stack overflow.
static void rel_despawn_long_chain(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    int32_t n = TR_ASAN ? 200000 : 1000000;
    weft_entity *es = malloc((size_t)n * sizeof *es);
    assert_non_null(es);
    for (int32_t i = 0; i < n; i++) {
        es[i] = weft_spawn(w);
    }
    // bottom-up, so each new parent is still a root (cheap cycle check)
    for (int32_t i = n - 2; i >= 0; i--) {
        assert_int_equal(weft_set_parent(w, es[i + 1], es[i]), WEFT_OK);
    }
    assert_true(weft_parent(w, es[n - 1]) == es[n - 2]);
    weft_entity anc[2];
    assert_int_equal(weft_ancestors(w, es[n - 1], weft_child_of(w), anc, 2), n - 1);
    assert_true(anc[0] == es[n - 2]);
    weft_entity extra = weft_spawn(w);
    assert_int_equal(weft_despawn(w, es[0]), WEFT_OK);
    for (int32_t i = 0; i < n; i++) {
        if (weft_is_alive(w, es[i])) {
            fail_msg("chain entity %d of %d still alive", i, n);
        }
    }
    weft_world_stats st;
    assert_int_equal(weft_world_get_stats(w, &st), WEFT_OK);
    assert_int_equal(st.live_entities, 1);
    assert_true(weft_is_alive(w, extra));
    assert_int_equal(weft_world_check(w), WEFT_OK);
    free(es);
}

// Traversal over R->(A,B), A->(C), B->(D,E).
static void rel_traversal(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component co = weft_child_of(w);
    weft_entity r = weft_spawn(w), a = weft_spawn(w), b = weft_spawn(w);
    weft_entity c = weft_spawn(w), d = weft_spawn(w), e = weft_spawn(w);
    // created in a scrambled order; list order is what counts
    assert_int_equal(weft_set_parent(w, a, r), WEFT_OK);
    assert_int_equal(weft_set_parent(w, d, b), WEFT_OK);
    assert_int_equal(weft_set_parent(w, c, a), WEFT_OK);
    assert_int_equal(weft_set_parent(w, b, r), WEFT_OK);
    assert_int_equal(weft_set_parent(w, e, b), WEFT_OK);
    weft_entity out[8];
    memset(out, 0, sizeof out);
    assert_int_equal(weft_descendants(w, r, co, out, 8), 5);
    weft_entity want[] = {a, b, c, d, e};
    for (int i = 0; i < 5; i++) {
        assert_true(out[i] == want[i]);
    }
    // cap smaller than the count: the count still reported, cap respected
    memset(out, 0, sizeof out);
    assert_int_equal(weft_descendants(w, r, co, out, 2), 5);
    assert_true(out[0] == a && out[1] == b && out[2] == 0);
    assert_int_equal(weft_descendants(w, b, co, out, 8), 2);
    assert_true(out[0] == d && out[1] == e);
    assert_int_equal(weft_descendants(w, c, co, out, 8), 0);
    assert_int_equal(weft_ancestors(w, c, co, out, 8), 2);
    assert_true(out[0] == a && out[1] == r);
    assert_int_equal(weft_ancestors(w, r, co, out, 8), 0);
    assert_int_equal(weft_ancestors(w, e, co, out, 1), 2);
    assert_true(out[0] == b);
    assert_int_equal(weft_ancestors(w, e, co, NULL, 0), 2);
    assert_true(weft_related(w, c, co) == a);
    int32_t n = 0;
    const weft_entity *src = weft_related_sources(w, r, co, &n);
    assert_int_equal(n, 2);
    assert_true(src[0] == a && src[1] == b);
}

// A user relationship without LINKED_DESPAWN.
static void rel_user_unlinked(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_relationship_desc d;
    memset(&d, 0, sizeof d);
    d.name = "Likes";
    weft_component likes = weft_relationship_register(w, &d);
    assert_true(likes != 0);
    weft_component back = weft_relationship_targets(w, likes);
    weft_entity t = weft_spawn(w), t2 = weft_spawn(w);
    weft_entity s1 = weft_spawn(w), s2 = weft_spawn(w), s3 = weft_spawn(w);
    assert_int_equal(weft_relate(w, s1, likes, t), WEFT_OK);
    assert_int_equal(weft_relate(w, s2, likes, t), WEFT_OK);
    assert_int_equal(weft_relate(w, s3, likes, t2), WEFT_OK);
    assert_true(weft_related(w, s1, likes) == t);
    int32_t n = 0;
    const weft_entity *src = weft_related_sources(w, t, likes, &n);
    assert_int_equal(n, 2);
    assert_true(src[0] == s1 && src[1] == s2);
    // independent of ChildOf
    assert_true(weft_parent(w, s1) == 0);
    expect_children(w, t, NULL, 0);
    // cycles are refused for user relationships too
    assert_int_equal(weft_relate(w, t, likes, s1), WEFT_ERR_RELATIONSHIP);
    assert_int_equal(weft_relate(w, s1, likes, s1), WEFT_ERR_RELATIONSHIP);
    // unrelate
    assert_int_equal(weft_unrelate(w, s3, likes), WEFT_OK);
    assert_false(weft_has(w, t2, back));
    assert_true(weft_related(w, s3, likes) == 0);
    // despawning the target: sources stay alive, lose the relationship
    assert_int_equal(weft_despawn(w, t), WEFT_OK);
    assert_true(weft_is_alive(w, s1));
    assert_true(weft_is_alive(w, s2));
    assert_false(weft_has(w, s1, likes));
    assert_false(weft_has(w, s2, likes));
    assert_true(weft_related(w, s1, likes) == 0);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// A user relationship with LINKED_DESPAWN behaves like ChildOf, and two
// relationships on one entity do not interfere.
static void rel_user_linked(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component owned = register_linked(w, "OwnedBy");
    weft_entity owner = weft_spawn(w), item = weft_spawn(w), gem = weft_spawn(w);
    weft_entity p = weft_spawn(w);
    assert_int_equal(weft_relate(w, item, owned, owner), WEFT_OK);
    assert_int_equal(weft_relate(w, gem, owned, item), WEFT_OK);
    assert_int_equal(weft_set_parent(w, item, p), WEFT_OK); // ChildOf too
    assert_int_equal(weft_despawn(w, owner), WEFT_OK);
    assert_false(weft_is_alive(w, item));
    assert_false(weft_is_alive(w, gem));
    assert_true(weft_is_alive(w, p));
    expect_children(w, p, NULL, 0);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// Relationship calls during a query iteration are deferred and consistent
// after it ends.
static void rel_ops_inside_iteration(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component tag = tw_comp(w, "Tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    weft_component co = weft_child_of(w);
    weft_entity p = weft_spawn(w), q = weft_spawn(w);
    enum { N = 10 };
    weft_entity es[N];
    for (int i = 0; i < N; i++) {
        es[i] = weft_spawn_with(w, &(weft_value){tag, 0, NULL}, 1);
    }
    // some already under q
    assert_int_equal(weft_set_parent(w, es[0], q), WEFT_OK);
    assert_int_equal(weft_set_parent(w, es[1], q), WEFT_OK);
    weft_query_desc qd;
    memset(&qd, 0, sizeof qd);
    qd.terms[0].id = tag;
    qd.terms[0].oper = WEFT_OPER_WITH;
    qd.term_count = 1;
    weft_query *qq = weft_query_create(w, &qd);
    assert_non_null(qq);
    weft_iter it;
    weft_entity order[N];
    int seen = 0;
    assert_int_equal(weft_query_iter(w, qq, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        const weft_entity *ents = weft_iter_entities(&it);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            order[seen++] = ents[i];
            assert_int_equal(weft_set_parent(w, ents[i], p), WEFT_OK);
            // not applied yet
            assert_true(weft_parent(w, ents[i]) != p);
        }
    }
    assert_int_equal(seen, N);
    expect_children(w, p, order, N);
    expect_children(w, q, NULL, 0);
    // remove parents and despawn p inside an iteration
    assert_int_equal(weft_query_iter(w, qq, &it), WEFT_OK);
    bool first = true;
    while (weft_iter_next(&it)) {
        const weft_entity *ents = weft_iter_entities(&it);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            if (ents[i] == order[0] || ents[i] == order[1]) {
                assert_int_equal(weft_remove_parent(w, ents[i]), WEFT_OK);
            }
        }
        if (first) {
            assert_int_equal(weft_despawn(w, p), WEFT_OK);
            first = false;
        }
        assert_true(weft_is_alive(w, p));
    }
    assert_false(weft_is_alive(w, p));
    assert_true(weft_is_alive(w, order[0]));
    assert_true(weft_is_alive(w, order[1]));
    assert_false(weft_has(w, order[0], co));
    for (int i = 2; i < N; i++) {
        assert_false(weft_is_alive(w, order[i]));
    }
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_query_destroy(w, qq);
}

// Inside an iteration: relate a->b then b->a. Both pass the immediate
// check; at apply the second is refused. End state acyclic and consistent.
static void rel_deferred_cycle_refused_at_apply(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component tag = tw_comp(w, "Tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    weft_component co = weft_child_of(w);
    weft_entity a = weft_spawn_with(w, &(weft_value){tag, 0, NULL}, 1);
    weft_entity b = weft_spawn(w);
    weft_query_desc qd;
    memset(&qd, 0, sizeof qd);
    qd.terms[0].id = tag;
    qd.terms[0].oper = WEFT_OPER_WITH;
    qd.term_count = 1;
    weft_query *qq = weft_query_create(w, &qd);
    weft_iter it;
    assert_int_equal(weft_query_iter(w, qq, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        assert_int_equal(weft_set_parent(w, a, b), WEFT_OK);
        (void)weft_set_parent(w, b, a);
    }
    assert_true(weft_parent(w, a) == b);
    assert_true(weft_parent(w, b) == 0);
    expect_children(w, b, (weft_entity[]){a}, 1);
    expect_children(w, a, NULL, 0);
    assert_false(weft_has(w, a, weft_relationship_targets(w, co)));
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_query_destroy(w, qq);
}

// Commands: a parent spawned in a buffer used for children in the same
// buffer.
static void rel_through_commands(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component co = weft_child_of(w);
    weft_commands *cb = weft_commands_create(w);
    weft_entity p = weft_cmd_spawn(cb, NULL, 0);
    weft_entity kids[3];
    for (int i = 0; i < 3; i++) {
        weft_value v = {co, sizeof p, &p};
        kids[i] = weft_cmd_spawn(cb, &v, 1);
        assert_true(kids[i] != 0);
    }
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    expect_children(w, p, kids, 3);
    assert_int_equal(weft_cmd_despawn(cb, p), WEFT_OK);
    assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
    for (int i = 0; i < 3; i++) {
        assert_false(weft_is_alive(w, kids[i]));
    }
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_commands_destroy(cb);
}

// A subtree despawn also destroys observers targeted at its
// members (free_user once each), and their ids do not fire on reuse.
static int g_frees, g_runs;

static void t_free(void *u)
{
    (void)u;
    g_frees++;
}

static void t_run(weft_world *w, weft_trigger *t, void *u)
{
    (void)w;
    (void)t;
    (void)u;
    g_runs++;
}

static void rel_subtree_despawn_destroys_targeted_observers(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    g_frees = g_runs = 0;
    weft_event_desc ed;
    memset(&ed, 0, sizeof ed);
    ed.name = "poke";
    weft_event ev = weft_event_register(w, &ed);
    weft_entity r = weft_spawn(w), a = weft_spawn(w), c = weft_spawn(w);
    assert_int_equal(weft_set_parent(w, a, r), WEFT_OK);
    assert_int_equal(weft_set_parent(w, c, a), WEFT_OK);
    weft_observer_desc d;
    memset(&d, 0, sizeof d);
    d.event = ev;
    d.fn = t_run;
    d.free_user = t_free;
    d.entity = c;
    assert_non_null(weft_observer_create(w, &d));
    d.entity = a;
    assert_non_null(weft_observer_create(w, &d));
    assert_int_equal(weft_trigger_event(w, ev, c, NULL, 0, true), WEFT_OK);
    assert_int_equal(g_runs, 2);
    assert_int_equal(weft_despawn(w, r), WEFT_OK);
    assert_int_equal(g_frees, 2);
    weft_entity n1 = weft_spawn(w), n2 = weft_spawn(w), n3 = weft_spawn(w);
    assert_int_equal(weft_trigger_event(w, ev, n1, NULL, 0, false), WEFT_OK);
    assert_int_equal(weft_trigger_event(w, ev, n2, NULL, 0, false), WEFT_OK);
    assert_int_equal(weft_trigger_event(w, ev, n3, NULL, 0, false), WEFT_OK);
    assert_int_equal(g_runs, 2);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

/* Regression: the hash read the children list's heap pointer, so two
 * identical worlds with a hierarchy hashed differently. */
static void rel_hash_ignores_list_addresses(void **state)
{
    (void)state;
    weft_world *w[2];
    for (int k = 0; k < 2; k++) { /* both alive: their lists cannot share addresses */
        weft_world_desc d;
        memset(&d, 0, sizeof d);
        w[k] = weft_world_create(&d);
        assert_non_null(w[k]);
        weft_entity p = weft_spawn(w[k]);
        for (int i = 0; i < 5; i++) {
            weft_entity c = weft_spawn(w[k]);
            assert_int_equal(weft_set_parent(w[k], c, p), WEFT_OK);
        }
    }
    assert_true(weft_world_hash(w[0]) == weft_world_hash(w[1]));
    weft_world_destroy(w[0]);
    weft_world_destroy(w[1]);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tw_setup, tw_teardown)
    const struct CMUnitTest tests[] = {
        T(rel_children_list_basic),
        cmocka_unit_test(rel_hash_ignores_list_addresses),
        T(rel_same_parent_again),
        T(rel_cycles_refused),
        T(rel_direct_insert_refused),
        T(rel_two_linked_relationships_share_a_subtree),
        T(rel_cascade_members_do_not_fail),
        T(rel_misuse),
        T(rel_despawn_subtree),
        T(rel_despawn_long_chain),
        T(rel_traversal),
        T(rel_user_unlinked),
        T(rel_user_linked),
        T(rel_ops_inside_iteration),
        T(rel_deferred_cycle_refused_at_apply),
        T(rel_through_commands),
        T(rel_subtree_despawn_destroys_targeted_observers),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/unit/test_schedule_graph.c - the schedule graph builder, white-box.
// SPDX-License-Identifier: MIT
//
// Toposort (cycles, determinism), conflicts and the ambiguity report (only
// With X against Without X proves disjointness), auto sync points (chains,
// IGNORE_DEFERRED edges, explicit apply points, conditions) and a six-system
// example reproduced edge for edge, plus a random 500-node stress checked against
// an independent conflict function and reachability. Every test ends with
// the allocator's live-byte count back at zero.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "schedule/schedule_graph.h"
#include "test_world.h"

typedef struct fx {
    wf_allocator a;
    wf_sgraph g;
} fx;

static int fx_setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    wf_allocator_init(&f->a, NULL);
    wf_sg_init(&f->g, &f->a);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    fx *f = *state;
    wf_sg_fini(&f->g);
    assert_int_equal(wf_alloc_live(&f->a), 0);
    free(f);
    return 0;
}

#define G (&((fx *)*state)->g)

enum { POS = 1, VEL = 2, ENEMY = 3, PLAYER = 4, AI = 5, RES_TIME = 100 };

static uint32_t node(wf_sgraph *g, const char *name, uint32_t flags)
{
    uint32_t id = wf_sg_add_node(g, name, flags);
    assert_int_not_equal(id, WF_SG_NONE);
    return id;
}

static void acc(wf_sgraph *g, uint32_t n, uint32_t r, uint32_t w, uint32_t with,
                uint32_t without)
{
    wf_sg_access x;
    memset(&x, 0, sizeof x);
    x.reads = &r;
    x.nreads = r ? 1 : 0;
    x.writes = &w;
    x.nwrites = w ? 1 : 0;
    x.with = &with;
    x.nwith = with ? 1 : 0;
    x.without = &without;
    x.nwithout = without ? 1 : 0;
    assert_int_equal(wf_sg_add_access(g, n, &x), WEFT_OK);
}

static void edge(wf_sgraph *g, uint32_t a, uint32_t b, uint32_t flags)
{
    assert_int_equal(wf_sg_order(g, a, b, flags), WEFT_OK);
}

static void build_ok(wf_sgraph *g, const wf_sg_settings *s)
{
    weft_status st = wf_sg_build(g, s);
    if (st != WEFT_OK) {
        print_error("build: %d %s\n", (int)st, g->error ? g->error : "");
    }
    assert_int_equal(st, WEFT_OK);
    assert_true(g->built);
}

static uint32_t pos(const wf_sgraph *g, uint32_t id) { return g->pos_of[id]; }

/* Every CSR successor comes later in the order; predecessor counts match. */
static void check_compiled(const wf_sgraph *g)
{
    uint32_t *cnt = calloc(g->ntotal + 1, sizeof *cnt);
    for (uint32_t p = 0; p < g->ntotal; p++) {
        assert_int_equal(g->pos_of[g->order[p]], p);
        for (uint32_t k = g->succ_off[p]; k < g->succ_off[p + 1]; k++) {
            assert_true(g->succ[k] > p);
            cnt[g->succ[k]]++;
        }
    }
    for (uint32_t p = 0; p < g->ntotal; p++) {
        assert_int_equal(cnt[p], g->pred_count[p]);
    }
    free(cnt);
}

/* ---- toposort ---- */

static void cycle_two_nodes_named(void **state)
{
    wf_sgraph *g = G;
    uint32_t x = node(g, "bystander", 0);
    uint32_t a = node(g, "alpha", 0);
    uint32_t b = node(g, "beta", 0);
    edge(g, x, a, 0);
    edge(g, a, b, 0);
    edge(g, b, a, 0);
    assert_int_equal(wf_sg_build(g, NULL), WEFT_ERR_SCHEDULE_CYCLE);
    assert_false(g->built);
    assert_non_null(g->error);
    assert_non_null(strstr(g->error, "alpha"));
    assert_non_null(strstr(g->error, "beta"));
    assert_null(strstr(g->error, "bystander"));
    assert_string_equal(g->error, "cycle: alpha -> beta -> alpha");
}

static void cycle_three_nodes_named(void **state)
{
    wf_sgraph *g = G;
    uint32_t n[5];
    const char *names[5] = {"n0", "c1", "c2", "c3", "n4"};
    for (int i = 0; i < 5; i++) {
        n[i] = node(g, names[i], 0);
    }
    edge(g, n[0], n[1], 0);
    edge(g, n[1], n[2], 0);
    edge(g, n[2], n[3], 0);
    edge(g, n[3], n[1], 0);
    edge(g, n[3], n[4], 0);
    assert_int_equal(wf_sg_build(g, NULL), WEFT_ERR_SCHEDULE_CYCLE);
    assert_string_equal(g->error, "cycle: c1 -> c2 -> c3 -> c1");
}

static void self_edge_is_error(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "selfish", 0);
    edge(g, a, a, 0);
    assert_int_equal(wf_sg_build(g, NULL), WEFT_ERR_SCHEDULE_CYCLE);
    assert_non_null(strstr(g->error, "self-edge: selfish"));
}

static void set_against_own_member_is_error(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "member", 0);
    uint32_t s = wf_sg_add_set(g, "S", 0);
    assert_int_equal(wf_sg_in_set(g, a, s), WEFT_OK);
    edge(g, a, s, 0);
    assert_int_equal(wf_sg_build(g, NULL), WEFT_ERR_SCHEDULE_CYCLE);
    assert_non_null(strstr(g->error, "member"));
}

static void set_hierarchy_cycle_is_error(void **state)
{
    wf_sgraph *g = G;
    node(g, "a", 0);
    uint32_t s1 = wf_sg_add_set(g, "Outer", 0);
    uint32_t s2 = wf_sg_add_set(g, "Inner", 0);
    assert_int_equal(wf_sg_in_set(g, 0, s2), WEFT_OK);
    assert_int_equal(wf_sg_in_set(g, s2, s1), WEFT_OK);
    assert_int_equal(wf_sg_in_set(g, s1, s2), WEFT_OK);
    assert_int_equal(wf_sg_build(g, NULL), WEFT_ERR_SCHEDULE_CYCLE);
    assert_non_null(strstr(g->error, "Outer"));
    assert_non_null(strstr(g->error, "Inner"));
}

static void cycle_through_sets_is_error(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "a", 0), b = node(g, "b", 0);
    uint32_t s1 = wf_sg_add_set(g, "S1", 0), s2 = wf_sg_add_set(g, "S2", 0);
    assert_int_equal(wf_sg_in_set(g, a, s1), WEFT_OK);
    assert_int_equal(wf_sg_in_set(g, b, s2), WEFT_OK);
    edge(g, s1, s2, 0);
    edge(g, b, a, 0);
    assert_int_equal(wf_sg_build(g, NULL), WEFT_ERR_SCHEDULE_CYCLE);
    assert_non_null(strstr(g->error, "a -> b -> a"));
}

static void fill_det(wf_sgraph *g)
{
    for (int i = 0; i < 40; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "s%d", i);
        uint32_t n = node(g, nm, (i % 7 == 0) ? WF_SG_DEFERRED : 0);
        acc(g, n, (uint32_t)(1 + i % 5), (i % 3 == 0) ? (uint32_t)(1 + i % 4) : 0, 0, 0);
    }
    for (uint32_t i = 3; i < 40; i += 3) {
        uint32_t j = (i * 7) % 40;
        if (j != i) {
            edge(g, j < i ? j : i, j < i ? i : j, 0);
        }
    }
    edge(g, 39, 0, 0);
    edge(g, 20, 5, WF_SG_IGNORE_DEFERRED);
}

static void order_is_deterministic(void **state)
{
    wf_sgraph *g = G;
    fill_det(g);
    build_ok(g, NULL);
    uint32_t nt = g->ntotal;
    uint32_t *first = malloc(nt * sizeof *first);
    memcpy(first, g->order, nt * sizeof *first);
    for (int r = 0; r < 3; r++) {
        build_ok(g, NULL);
        assert_int_equal(g->ntotal, nt);
        assert_memory_equal(g->order, first, nt * sizeof *first);
    }
    /* a fresh graph from the same registration sequence */
    wf_allocator a2;
    wf_allocator_init(&a2, NULL);
    wf_sgraph g2;
    wf_sg_init(&g2, &a2);
    fill_det(&g2);
    build_ok(&g2, NULL);
    assert_int_equal(g2.ntotal, nt);
    assert_memory_equal(g2.order, first, nt * sizeof *first);
    check_compiled(&g2);
    wf_sg_fini(&g2);
    assert_int_equal(wf_alloc_live(&a2), 0);
    free(first);
}

static void unordered_nodes_keep_registration_order(void **state)
{
    wf_sgraph *g = G;
    for (int i = 0; i < 6; i++) {
        node(g, "n", 0);
    }
    edge(g, 4, 1, 0); /* 1 waits for 4 */
    build_ok(g, NULL);
    const uint32_t want[6] = {0, 2, 3, 4, 1, 5};
    assert_memory_equal(g->order, want, sizeof want);
    assert_int_equal(g->pred_count[pos(g, 1)], 1);
    check_compiled(g);
}

static void set_order_orders_members(void **state)
{
    wf_sgraph *g = G;
    uint32_t c = node(g, "c", 0), d = node(g, "d", 0);
    uint32_t a = node(g, "a", 0), b = node(g, "b", 0);
    uint32_t s1 = wf_sg_add_set(g, "First", 0), s2 = wf_sg_add_set(g, "Second", 0);
    uint32_t inner = wf_sg_add_set(g, "Inner", 0);
    assert_int_equal(wf_sg_in_set(g, a, s1), WEFT_OK);
    assert_int_equal(wf_sg_in_set(g, b, inner), WEFT_OK);
    assert_int_equal(wf_sg_in_set(g, inner, s1), WEFT_OK); /* nested */
    assert_int_equal(wf_sg_in_set(g, c, s2), WEFT_OK);
    assert_int_equal(wf_sg_in_set(g, d, s2), WEFT_OK);
    edge(g, s1, s2, 0);
    build_ok(g, NULL);
    const uint32_t want[4] = {a, b, c, d};
    assert_memory_equal(g->order, want, sizeof want);
    assert_true(wf_sg_has_edge(g, a, c) && wf_sg_has_edge(g, a, d));
    assert_true(wf_sg_has_edge(g, b, c) && wf_sg_has_edge(g, b, d));
    check_compiled(g);
}

static void empty_set_passes_ordering_through(void **state)
{
    wf_sgraph *g = G;
    uint32_t b = node(g, "b", 0), a = node(g, "a", WF_SG_DEFERRED);
    uint32_t s = wf_sg_add_set(g, "Empty", 0);
    uint32_t s2 = wf_sg_add_set(g, "Empty2", 0);
    edge(g, a, s, WF_SG_IGNORE_DEFERRED);
    edge(g, s, s2, WF_SG_IGNORE_DEFERRED);
    edge(g, s2, b, 0); /* one edge without the flag: a sync is needed */
    build_ok(g, NULL);
    assert_true(pos(g, a) < pos(g, b));
    assert_int_equal(g->nsync, 1);
    wf_sgraph *h = g;
    wf_sg_fini(h);
    wf_sg_init(h, &((fx *)*state)->a);
    b = node(h, "b", 0);
    a = node(h, "a", WF_SG_DEFERRED);
    s = wf_sg_add_set(h, "Empty", 0);
    edge(h, a, s, WF_SG_IGNORE_DEFERRED);
    edge(h, s, b, WF_SG_IGNORE_DEFERRED); /* both ignore: no sync */
    build_ok(h, NULL);
    assert_true(pos(h, a) < pos(h, b));
    assert_int_equal(h->nsync, 0);
    assert_true(wf_sg_has_edge(h, a, b));
}

/* ---- conflicts and ambiguities ---- */

static bool amb_has(const wf_sgraph *g, uint32_t a, uint32_t b)
{
    for (uint32_t i = 0; i < g->namb; i++) {
        if ((g->amb[i].a == a && g->amb[i].b == b) || (g->amb[i].a == b && g->amb[i].b == a)) {
            return true;
        }
    }
    return false;
}

static void two_writers_reported(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "a", 0), b = node(g, "b", 0);
    acc(g, a, 0, POS, 0, 0);
    acc(g, b, VEL, POS, 0, 0);
    build_ok(g, NULL);
    assert_int_equal(g->namb, 1);
    assert_int_equal(g->amb[0].a, a);
    assert_int_equal(g->amb[0].b, b);
    assert_int_equal(g->amb[0].nids, 1);
    assert_int_equal(g->amb_ids[g->amb[0].first], POS);
    assert_false(g->amb[0].exclusive);
    /* ordered deterministically by an added edge */
    assert_true(wf_sg_has_edge(g, a, b));
    assert_int_equal(g->nsync, 0);
}

static void after_silences(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "a", 0), b = node(g, "b", 0);
    acc(g, a, 0, POS, 0, 0);
    acc(g, b, 0, POS, 0, 0);
    edge(g, b, a, 0); /* a.after(b) */
    build_ok(g, NULL);
    assert_int_equal(g->namb, 0);
    assert_true(pos(g, b) < pos(g, a));
}

static void ignore_list_silences(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "a", 0), b = node(g, "b", 0), c = node(g, "c", 0);
    acc(g, a, 0, POS, 0, 0);
    acc(g, b, 0, POS, 0, 0);
    acc(g, c, POS, VEL, 0, 0);
    acc(g, a, 0, VEL, 0, 0);
    wf_sg_settings s = wf_sg_default_settings();
    const uint32_t ign[1] = {POS};
    s.ignored = ign;
    s.nignored = 1;
    build_ok(g, &s);
    /* a-b only on Pos: silenced; a-c also on Vel: reported with Vel only */
    assert_false(amb_has(g, a, b));
    assert_false(amb_has(g, b, c));
    assert_int_equal(g->namb, 1);
    assert_true(amb_has(g, a, c));
    assert_int_equal(g->amb[0].nids, 1);
    assert_int_equal(g->amb_ids[g->amb[0].first], VEL);
    /* the systems are still kept apart */
    assert_true(wf_sg_has_edge(g, a, b));
    assert_true(wf_sg_has_edge(g, b, c));
}

static void readers_not_reported(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "a", 0), b = node(g, "b", 0);
    acc(g, a, POS, 0, 0, 0);
    acc(g, b, POS, 0, 0, 0);
    acc(g, a, RES_TIME, 0, 0, 0);
    acc(g, b, RES_TIME, 0, 0, 0);
    build_ok(g, NULL);
    assert_int_equal(g->namb, 0);
    assert_false(wf_sg_has_edge(g, a, b));
}

static void resource_read_write_conflicts(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "a", 0), b = node(g, "b", 0);
    acc(g, a, RES_TIME, 0, 0, 0);
    acc(g, b, 0, RES_TIME, 0, 0);
    build_ok(g, NULL);
    assert_int_equal(g->namb, 1);
    assert_int_equal(g->amb_ids[0], RES_TIME);
}

static void with_without_pair_is_disjoint(void **state)
{
    wf_sgraph *g = G;
    uint32_t c = node(g, "c", 0), d = node(g, "d", 0);
    acc(g, c, 0, POS, ENEMY, 0);
    acc(g, d, 0, POS, 0, ENEMY);
    build_ok(g, NULL);
    assert_int_equal(g->namb, 0);
    assert_false(wf_sg_has_edge(g, c, d));
}

static void with_a_with_b_conflicts(void **state)
{
    wf_sgraph *g = G;
    uint32_t c = node(g, "c", 0), d = node(g, "d", 0);
    acc(g, c, 0, POS, ENEMY, 0);
    acc(g, d, 0, POS, PLAYER, 0);
    build_ok(g, NULL);
    assert_int_equal(g->namb, 1);
    assert_true(amb_has(g, c, d));
}

/* The access matrix: With Enemy vs With Player proves nothing (an entity
 * may carry both), so C-D conflicts. */
static void access_matrix(void **state)
{
    wf_sgraph *g = G;
    uint32_t A = node(g, "A", 0), B = node(g, "B", 0);
    uint32_t C = node(g, "C", 0), D = node(g, "D", 0);
    acc(g, A, POS, 0, 0, 0);
    acc(g, B, 0, VEL, 0, 0);
    acc(g, C, 0, POS, ENEMY, 0);
    acc(g, D, 0, POS, PLAYER, 0);
    build_ok(g, NULL);
    assert_false(amb_has(g, A, B));
    assert_true(amb_has(g, A, C));
    assert_true(amb_has(g, A, D));
    assert_false(amb_has(g, B, C));
    assert_false(amb_has(g, B, D));
    assert_true(amb_has(g, C, D));
    assert_int_equal(g->namb, 3);
}

static void exclusive_conflicts_with_everything(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "a", 0), x = node(g, "x", WF_SG_EXCLUSIVE);
    uint32_t b = node(g, "b", 0);
    acc(g, a, POS, 0, 0, 0);
    build_ok(g, NULL);
    assert_int_equal(g->namb, 2);
    assert_true(amb_has(g, a, x));
    assert_true(amb_has(g, x, b));
    assert_true(g->amb[0].exclusive);
    assert_true(wf_sg_has_edge(g, a, x) && wf_sg_has_edge(g, x, b));
    assert_false(wf_sg_has_edge(g, a, b));
}

static void sync_nodes_never_reported(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "a", WF_SG_DEFERRED), b = node(g, "b", 0);
    uint32_t c = node(g, "c", 0), ap = node(g, "apply", WF_SG_APPLY | WF_SG_EXCLUSIVE);
    acc(g, c, 0, POS, 0, 0);
    edge(g, a, b, 0);
    build_ok(g, NULL);
    assert_int_equal(g->nsync, 1);
    for (uint32_t i = 0; i < g->namb; i++) {
        assert_true(g->amb[i].a < g->nnodes && g->amb[i].b < g->nnodes);
        assert_int_not_equal(g->amb[i].a, ap);
        assert_int_not_equal(g->amb[i].b, ap);
    }
    assert_int_equal(g->namb, 0);
}

/* ---- auto sync points ---- */

static void sync_cmd_then_successor(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "A", WF_SG_DEFERRED), b = node(g, "B", 0);
    edge(g, a, b, 0);
    build_ok(g, NULL);
    assert_int_equal(g->nsync, 1);
    uint32_t s = g->sync_nodes[0];
    assert_int_equal(s, 2);
    assert_true(wf_sg_has_edge(g, a, s) && wf_sg_has_edge(g, s, b));
    assert_false(wf_sg_has_edge(g, a, b));
    assert_int_equal(g->nsucc, 2);
    const uint32_t want[3] = {a, s, b};
    assert_memory_equal(g->order, want, sizeof want);
    check_compiled(g);
}

static void sync_shared_by_distance(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "A", WF_SG_DEFERRED), b = node(g, "B", 0), c = node(g, "C", 0);
    edge(g, a, b, 0);
    edge(g, a, c, 0);
    edge(g, b, c, 0);
    build_ok(g, NULL);
    assert_int_equal(g->nsync, 1);
    uint32_t s = g->sync_nodes[0];
    assert_true(wf_sg_has_edge(g, a, s));
    assert_true(wf_sg_has_edge(g, s, b));
    assert_true(wf_sg_has_edge(g, s, c));
    assert_true(wf_sg_has_edge(g, b, c));
    assert_int_equal(g->nsucc, 4);
    assert_true(pos(g, s) < pos(g, c));
}

static void sync_pending_carried_over_ignore(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "A", WF_SG_DEFERRED), b = node(g, "B", 0), c = node(g, "C", 0);
    edge(g, a, b, WF_SG_IGNORE_DEFERRED);
    edge(g, b, c, 0);
    build_ok(g, NULL);
    assert_int_equal(g->nsync, 1);
    uint32_t s = g->sync_nodes[0];
    assert_true(wf_sg_has_edge(g, a, b));
    assert_true(wf_sg_has_edge(g, b, s) && wf_sg_has_edge(g, s, c));
    assert_false(wf_sg_has_edge(g, b, c));
}

static void sync_explicit_apply_reused(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "A", WF_SG_DEFERRED), b = node(g, "B", 0);
    uint32_t x = node(g, "X", WF_SG_APPLY);
    edge(g, a, x, 0);
    edge(g, x, b, 0);
    build_ok(g, NULL);
    assert_int_equal(g->nsync, 0);
    assert_true(wf_sg_has_edge(g, a, x) && wf_sg_has_edge(g, x, b));
    assert_int_equal(g->nsucc, 2);
}

static void sync_conditioned_apply_not_reused(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "A", WF_SG_DEFERRED), b = node(g, "B", 0);
    uint32_t x = node(g, "X", WF_SG_APPLY | WF_SG_CONDITION);
    edge(g, a, x, 0);
    edge(g, x, b, 0);
    edge(g, a, b, 0);
    build_ok(g, NULL);
    assert_int_equal(g->nsync, 1);
    uint32_t s = g->sync_nodes[0];
    assert_true(wf_sg_has_edge(g, a, s) && wf_sg_has_edge(g, s, b));
    assert_true(wf_sg_has_edge(g, a, x) && wf_sg_has_edge(g, x, b));
    assert_false(wf_sg_has_edge(g, a, b));
}

static void sync_apply_in_conditioned_set_not_reused(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "A", WF_SG_DEFERRED), b = node(g, "B", 0);
    uint32_t x = node(g, "X", WF_SG_APPLY);
    uint32_t outer = wf_sg_add_set(g, "Gated", WF_SG_SET_CONDITION);
    uint32_t inner = wf_sg_add_set(g, "Inner", 0);
    assert_int_equal(wf_sg_in_set(g, x, inner), WEFT_OK);
    assert_int_equal(wf_sg_in_set(g, inner, outer), WEFT_OK);
    edge(g, a, x, 0);
    edge(g, x, b, 0);
    edge(g, a, b, 0);
    build_ok(g, NULL);
    assert_int_equal(g->nsync, 1);
}

static void sync_not_needed_without_commands(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "A", 0), b = node(g, "B", 0);
    edge(g, a, b, 0);
    build_ok(g, NULL);
    assert_int_equal(g->nsync, 0);
    assert_true(wf_sg_has_edge(g, a, b));
}

static void sync_disabled_globally(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "A", WF_SG_DEFERRED), b = node(g, "B", 0), c = node(g, "C", 0);
    edge(g, a, b, 0);
    edge(g, b, c, 0);
    wf_sg_settings s = wf_sg_default_settings();
    s.auto_insert_sync = false;
    build_ok(g, &s);
    assert_int_equal(g->nsync, 0);
    assert_int_equal(g->ntotal, 3);
    assert_true(wf_sg_has_edge(g, a, b) && wf_sg_has_edge(g, b, c));
}

static void sync_unordered_commands_get_none(void **state)
{
    wf_sgraph *g = G;
    uint32_t a = node(g, "A", WF_SG_DEFERRED), b = node(g, "B", 0);
    acc(g, a, 0, POS, 0, 0);
    acc(g, b, 0, POS, 0, 0); /* conflict edge a->b, but no declared order */
    build_ok(g, NULL);
    assert_int_equal(g->nsync, 0);
    assert_true(wf_sg_has_edge(g, a, b));
}

/* ---- a six-system example, edge for edge ---- */

typedef struct appb {
    uint32_t A, D, B, E, C, F;
} appb;

static appb appb_graph(wf_sgraph *g)
{
    appb n;
    /* registered in topological order A, D, B, E, C, F */
    n.A = node(g, "A", WF_SG_DEFERRED);
    n.D = node(g, "D", WF_SG_DEFERRED);
    n.B = node(g, "B", 0);
    n.E = node(g, "E", 0);
    n.C = node(g, "C", 0);
    n.F = node(g, "F", 0);
    edge(g, n.A, n.B, 0);
    edge(g, n.A, n.C, 0);
    edge(g, n.B, n.C, 0);
    edge(g, n.D, n.E, WF_SG_IGNORE_DEFERRED);
    edge(g, n.E, n.F, 0);
    return n;
}

static void appendix_b_worked_example(void **state)
{
    wf_sgraph *g = G;
    appb n = appb_graph(g);
    build_ok(g, NULL);
    assert_int_equal(g->nsync, 1);
    uint32_t s1 = g->sync_nodes[0];
    assert_int_equal(g->sync_dist[0], 1);
    /* the exact edge set */
    assert_int_equal(g->nsucc, 7);
    assert_true(wf_sg_has_edge(g, n.A, s1));
    assert_true(wf_sg_has_edge(g, s1, n.B));
    assert_true(wf_sg_has_edge(g, s1, n.C));
    assert_true(wf_sg_has_edge(g, n.B, n.C));
    assert_true(wf_sg_has_edge(g, n.D, n.E));
    assert_true(wf_sg_has_edge(g, n.E, s1));
    assert_true(wf_sg_has_edge(g, s1, n.F));
    /* E does not see D's commands (no sync between), F does */
    assert_true(pos(g, n.E) < pos(g, s1));
    const uint32_t want[7] = {n.A, n.D, n.E, s1, n.B, n.C, n.F};
    assert_memory_equal(g->order, want, sizeof want);
    check_compiled(g);
}

static void appendix_b_explicit_apply(void **state)
{
    wf_sgraph *g = G;
    appb n = appb_graph(g);
    uint32_t x = node(g, "X", WF_SG_APPLY);
    edge(g, n.A, x, 0);
    edge(g, x, n.B, 0);
    build_ok(g, NULL);
    assert_int_equal(g->nsync, 0);
    assert_int_equal(g->nsucc, 7);
    assert_true(wf_sg_has_edge(g, n.A, x));
    assert_true(wf_sg_has_edge(g, x, n.B));
    assert_true(wf_sg_has_edge(g, x, n.C));
    assert_true(wf_sg_has_edge(g, n.B, n.C));
    assert_true(wf_sg_has_edge(g, n.D, n.E));
    assert_true(wf_sg_has_edge(g, n.E, x));
    assert_true(wf_sg_has_edge(g, x, n.F));
}

static void appendix_b_conditioned_apply(void **state)
{
    wf_sgraph *g = G;
    appb n = appb_graph(g);
    uint32_t x = node(g, "X", WF_SG_APPLY | WF_SG_CONDITION);
    edge(g, n.A, x, 0);
    edge(g, x, n.B, 0);
    build_ok(g, NULL);
    assert_int_equal(g->nsync, 1);
    uint32_t s1 = g->sync_nodes[0];
    assert_true(wf_sg_has_edge(g, n.A, s1) && wf_sg_has_edge(g, s1, n.B));
    assert_true(wf_sg_has_edge(g, s1, n.C) && wf_sg_has_edge(g, n.E, s1));
    assert_true(wf_sg_has_edge(g, s1, n.F));
    assert_true(wf_sg_has_edge(g, n.A, x) && wf_sg_has_edge(g, x, n.B));
    assert_int_equal(g->nsucc, 9);
}

static void appendix_b_exclusive_target(void **state)
{
    wf_sgraph *g = G;
    appb n;
    n.A = node(g, "A", WF_SG_DEFERRED);
    n.D = node(g, "D", WF_SG_DEFERRED);
    n.B = node(g, "B", 0);
    n.E = node(g, "E", WF_SG_EXCLUSIVE);
    n.C = node(g, "C", 0);
    n.F = node(g, "F", 0);
    edge(g, n.A, n.B, 0);
    edge(g, n.A, n.C, 0);
    edge(g, n.B, n.C, 0);
    edge(g, n.D, n.E, WF_SG_IGNORE_DEFERRED);
    edge(g, n.E, n.F, 0);
    /* E is exclusive, so it is also ordered against A, B, C by conflict
     * edges; check the sync-related part */
    build_ok(g, NULL);
    assert_int_equal(g->nsync, 1);
    uint32_t s1 = g->sync_nodes[0];
    assert_true(wf_sg_has_edge(g, n.D, s1) && wf_sg_has_edge(g, s1, n.E));
    assert_false(wf_sg_has_edge(g, n.D, n.E));
    assert_true(wf_sg_has_edge(g, n.E, n.F));
    assert_true(wf_sg_has_edge(g, n.A, s1) && wf_sg_has_edge(g, s1, n.B));
    check_compiled(g);
}

static void set_self_edge_is_error(void **state)
{
    wf_sgraph *g = G;
    node(g, "a", 0);
    uint32_t s = wf_sg_add_set(g, "Loner", 0);
    edge(g, s, s, 0);
    assert_int_equal(wf_sg_build(g, NULL), WEFT_ERR_SCHEDULE_CYCLE);
    assert_string_equal(g->error, "self-edge on set: Loner");
}

/* Every allocation of a build fails once in turn: the build reports
 * OUT_OF_MEMORY (or succeeds), leaves no half result, frees every scratch
 * block, and a later build succeeds with the same result. */
static void build_out_of_memory_is_clean(void **state)
{
    (void)state;
    tw_alloc ta;
    tw_alloc_init(&ta);
    weft_allocator hook = tw_alloc_hook(&ta);
    wf_allocator a;
    wf_allocator_init(&a, &hook);
    wf_sgraph g;
    wf_sg_init(&g, &a);
    appb n = appb_graph(&g);
    uint32_t x = node(&g, "X", WF_SG_APPLY);
    edge(&g, n.A, x, 0);
    uint32_t s = wf_sg_add_set(&g, "Set", 0);
    uint32_t e = wf_sg_add_set(&g, "Empty", 0);
    assert_int_equal(wf_sg_in_set(&g, n.B, s), WEFT_OK);
    assert_int_equal(wf_sg_in_set(&g, n.C, s), WEFT_OK);
    edge(&g, n.F, e, 0);
    edge(&g, e, s, 0);
    acc(&g, n.B, 0, POS, 0, 0);
    acc(&g, n.F, POS, 0, 0, 0);
    build_ok(&g, NULL);
    uint32_t nt = g.ntotal;
    uint32_t *want = malloc(nt * sizeof *want);
    memcpy(want, g.order, nt * sizeof *want);
    uint32_t namb = g.namb;
    int64_t base = tw_alloc_live_bytes(&ta);
    bool succeeded = false;
    for (int64_t k = 1; k < 200 && !succeeded; k++) {
        tw_alloc_fail_nth(&ta, k, false);
        weft_status st = wf_sg_build(&g, NULL);
        tw_alloc_disarm(&ta);
        if (st == WEFT_OK) {
            succeeded = true;
        } else {
            assert_int_equal(st, WEFT_ERR_OUT_OF_MEMORY);
            assert_false(g.built);
            assert_true(tw_alloc_live_bytes(&ta) < base); /* result dropped */
            build_ok(&g, NULL);
            assert_int_equal(g.ntotal, nt);
            assert_memory_equal(g.order, want, nt * sizeof *want);
            assert_int_equal(g.namb, namb);
            assert_int_equal(tw_alloc_live_bytes(&ta), base);
        }
    }
    assert_true(succeeded);
    free(want);
    wf_sg_fini(&g);
    assert_int_equal(tw_alloc_live_bytes(&ta), 0);
    tw_alloc_fini(&ta);
}

/* ---- random stress ---- */

#define SN 500
#define SC 24

typedef struct sacc {
    uint32_t r[4], w[3], with, without;
    uint32_t nr, nw;
} sacc;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

static bool in(const uint32_t *v, uint32_t n, uint32_t x)
{
    for (uint32_t i = 0; i < n; i++) {
        if (v[i] == x) {
            return true;
        }
    }
    return false;
}

static bool ref_conflict(const sacc *x, uint32_t nx, const sacc *y, uint32_t ny)
{
    for (uint32_t i = 0; i < nx; i++) {
        for (uint32_t j = 0; j < ny; j++) {
            const sacc *p = &x[i], *q = &y[j];
            bool c = false;
            for (uint32_t k = 0; k < p->nw; k++) {
                c = c || in(q->r, q->nr, p->w[k]) || in(q->w, q->nw, p->w[k]);
            }
            for (uint32_t k = 0; k < q->nw; k++) {
                c = c || in(p->r, p->nr, q->w[k]);
            }
            bool disjoint = (p->with && p->with == q->without) ||
                            (p->without && p->without == q->with);
            if (c && !disjoint) {
                return true;
            }
        }
    }
    return false;
}

static void stress_random_500(void **state)
{
    wf_sgraph *g = G;
    static sacc A[SN][2];
    static uint32_t na[SN], flags[SN], perm[SN];
    static uint64_t ureach[SN][(SN + 63) / 64];
    static uint32_t ef[2000], et[2000], efl[2000];
    for (uint32_t i = 0; i < SN; i++) {
        uint32_t roll = rnd(100);
        flags[i] = roll < 4 ? WF_SG_EXCLUSIVE : roll < 7 ? WF_SG_APPLY : 0;
        if (rnd(100) < 25) {
            flags[i] |= WF_SG_DEFERRED;
        }
        char nm[16];
        snprintf(nm, sizeof nm, "sys%u", i);
        assert_int_equal(node(g, nm, flags[i]), i);
        na[i] = (flags[i] & (WF_SG_EXCLUSIVE | WF_SG_APPLY)) ? 0 : 1 + rnd(2);
        for (uint32_t k = 0; k < na[i]; k++) {
            sacc *s = &A[i][k];
            memset(s, 0, sizeof *s);
            s->nr = rnd(4);
            s->nw = rnd(3);
            for (uint32_t j = 0; j < s->nr; j++) {
                s->r[j] = 1 + rnd(SC);
            }
            for (uint32_t j = 0; j < s->nw; j++) {
                s->w[j] = 1 + rnd(SC);
            }
            uint32_t f = rnd(10);
            if (f < 2) {
                s->with = 100 + rnd(3);
            } else if (f < 4) {
                s->without = 100 + rnd(3);
            }
            wf_sg_access x = {s->r, s->nr, s->w, s->nw, &s->with, s->with ? 1u : 0u,
                              &s->without, s->without ? 1u : 0u};
            assert_int_equal(wf_sg_add_access(g, i, &x), WEFT_OK);
        }
        perm[i] = i;
    }
    for (uint32_t i = SN; i-- > 1;) {
        uint32_t j = rnd(i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    uint32_t ne = 2000;
    for (uint32_t k = 0; k < ne; k++) {
        uint32_t i = rnd(SN - 1);
        uint32_t j = i + 1 + rnd(i + 40 < SN - 1 ? 40 : SN - 1 - i);
        ef[k] = perm[i];
        et[k] = perm[j];
        efl[k] = rnd(100) < 30 ? WF_SG_IGNORE_DEFERRED : 0;
        edge(g, ef[k], et[k], efl[k]);
    }
    build_ok(g, NULL);
    check_compiled(g);
    const uint32_t nt = g->ntotal;
    const uint32_t words = (nt + 63) / 64;
    uint64_t *reach = calloc((size_t)nt * words, sizeof(uint64_t)); /* by position */
    for (uint32_t p = nt; p-- > 0;) {
        uint64_t *r = reach + (size_t)p * words;
        for (uint32_t k = g->succ_off[p]; k < g->succ_off[p + 1]; k++) {
            uint32_t q = g->succ[k];
            r[q / 64] |= 1ull << (q % 64);
            for (uint32_t w = 0; w < words; w++) {
                r[w] |= reach[(size_t)q * words + w];
            }
        }
    }
#define REACH(u, v)                                                          \
    ((reach[(size_t)pos(g, u) * words + pos(g, v) / 64] >> (pos(g, v) % 64)) & 1u)
    /* every user edge respected (possibly through a sync node) */
    for (uint32_t k = 0; k < ne; k++) {
        assert_true(REACH(ef[k], et[k]));
    }
    /* user-graph reachability (independent) to count ambiguities */
    memset(ureach, 0, sizeof ureach);
    for (int iter = SN - 1; iter >= 0; iter--) {
        uint32_t u = perm[iter];
        for (uint32_t k = 0; k < ne; k++) {
            if (ef[k] == u) {
                uint32_t v = et[k];
                ureach[u][v / 64] |= 1ull << (v % 64);
                for (uint32_t w = 0; w < (SN + 63) / 64; w++) {
                    ureach[u][w] |= ureach[v][w];
                }
            }
        }
    }
    uint32_t expect_amb = 0, conflicts = 0;
    for (uint32_t u = 0; u < SN; u++) {
        for (uint32_t v = u + 1; v < SN; v++) {
            bool excl = ((flags[u] | flags[v]) & WF_SG_EXCLUSIVE) != 0;
            if (!excl && !ref_conflict(A[u], na[u], A[v], na[v])) {
                continue;
            }
            conflicts++;
            /* every conflicting pair is ordered in the final graph */
            assert_true(REACH(u, v) || REACH(v, u));
            bool ordered = ((ureach[u][v / 64] >> (v % 64)) & 1u) ||
                           ((ureach[v][u / 64] >> (u % 64)) & 1u);
            if (!ordered && !((flags[u] | flags[v]) & WF_SG_APPLY)) {
                expect_amb++;
                assert_true(amb_has(g, u, v));
            }
        }
    }
    assert_int_equal(g->namb, expect_amb);
    assert_true(conflicts > 1000);
    /* a deferred node's non-ignored edge passes a sync (auto or apply) */
    uint32_t checked = 0;
    for (uint32_t k = 0; k < ne; k++) {
        uint32_t u = ef[k], v = et[k];
        if (!(flags[u] & WF_SG_DEFERRED) || (efl[k] & WF_SG_IGNORE_DEFERRED) ||
            (flags[v] & WF_SG_APPLY) || (flags[u] & WF_SG_APPLY)) {
            continue;
        }
        bool ok = false;
        for (uint32_t s = 0; s < nt && !ok; s++) {
            bool is_sync = s >= SN || (flags[s] & WF_SG_APPLY);
            ok = is_sync && REACH(u, s) && REACH(s, v);
        }
        assert_true(ok);
        checked++;
    }
    assert_true(checked > 50);
    assert_true(g->nsync > 0);
#undef REACH
    free(reach);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
        T(cycle_two_nodes_named),
        T(cycle_three_nodes_named),
        T(self_edge_is_error),
        T(set_against_own_member_is_error),
        T(set_hierarchy_cycle_is_error),
        T(cycle_through_sets_is_error),
        T(order_is_deterministic),
        T(unordered_nodes_keep_registration_order),
        T(set_order_orders_members),
        T(empty_set_passes_ordering_through),
        T(two_writers_reported),
        T(after_silences),
        T(ignore_list_silences),
        T(readers_not_reported),
        T(resource_read_write_conflicts),
        T(with_without_pair_is_disjoint),
        T(with_a_with_b_conflicts),
        T(access_matrix),
        T(exclusive_conflicts_with_everything),
        T(sync_nodes_never_reported),
        T(sync_cmd_then_successor),
        T(sync_shared_by_distance),
        T(sync_pending_carried_over_ignore),
        T(sync_explicit_apply_reused),
        T(sync_conditioned_apply_not_reused),
        T(sync_apply_in_conditioned_set_not_reused),
        T(sync_not_needed_without_commands),
        T(sync_disabled_globally),
        T(sync_unordered_commands_get_none),
        T(appendix_b_worked_example),
        T(appendix_b_explicit_apply),
        T(appendix_b_conditioned_apply),
        T(appendix_b_exclusive_target),
        T(set_self_edge_is_error),
        T(build_out_of_memory_is_clean),
        T(stress_random_500),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/model/test_model_relationship.c - random spawn / set_parent /
// remove_parent / despawn (subtree) sequences over a few hundred entities,
// checked after every operation against a naive reference (child -> parent
// map plus ordered child lists): every child's parent lists it exactly
// once and in the reference order, every listed child points back, no
// cycles, despawned subtrees are gone, weft_world_check passes.
// Fixed seeds; WEFT_TEST_SEED overrides (one run with that seed).
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

enum { SLOTS = 300, OPS = 20000 };

typedef struct model {
    weft_entity id[SLOTS]; // 0: slot empty
    int parent[SLOTS];     // slot of the parent, -1: root
    int kids[SLOTS][SLOTS];
    int nkids[SLOTS];
    int live;
} model;

static void kid_erase(model *m, int p, int c)
{
    for (int i = 0; i < m->nkids[p]; i++) {
        if (m->kids[p][i] == c) {
            memmove(&m->kids[p][i], &m->kids[p][i + 1],
                    (size_t)(m->nkids[p] - i - 1) * sizeof(int));
            m->nkids[p]--;
            return;
        }
    }
    fail_msg("model: %d not listed under %d", c, p);
}

static bool is_ancestor(const model *m, int anc, int x)
{
    for (int p = m->parent[x]; p >= 0; p = m->parent[p]) {
        if (p == anc) {
            return true;
        }
    }
    return false;
}

static int pick_live(const model *m, tw_rng *r)
{
    if (m->live == 0) {
        return -1;
    }
    for (;;) {
        int s = (int)tw_rng_below(r, SLOTS);
        if (m->id[s]) {
            return s;
        }
    }
}

static void model_despawn(model *m, int s)
{
    // subtree, iteratively
    int *stack = malloc(SLOTS * sizeof *stack);
    int top = 0;
    stack[top++] = s;
    if (m->parent[s] >= 0) {
        kid_erase(m, m->parent[s], s);
    }
    while (top) {
        int x = stack[--top];
        for (int i = 0; i < m->nkids[x]; i++) {
            stack[top++] = m->kids[x][i];
        }
        m->nkids[x] = 0;
        m->parent[x] = -1;
        m->id[x] = 0;
        m->live--;
    }
    free(stack);
}

static void check(weft_world *w, const model *m, const weft_entity *dead, int ndead,
                  uint64_t seed, int op)
{
    weft_component co = weft_child_of(w);
    for (int s = 0; s < SLOTS; s++) {
        if (!m->id[s]) {
            continue;
        }
        weft_entity e = m->id[s];
        if (!weft_is_alive(w, e)) {
            fail_msg("seed %llu op %d: slot %d should be alive", (unsigned long long)seed, op,
                     s);
        }
        weft_entity want_p = m->parent[s] >= 0 ? m->id[m->parent[s]] : 0;
        if (weft_parent(w, e) != want_p) {
            fail_msg("seed %llu op %d: slot %d parent mismatch", (unsigned long long)seed, op,
                     s);
        }
        int32_t n = -1;
        const weft_entity *kids = weft_children(w, e, &n);
        if (n != m->nkids[s]) {
            fail_msg("seed %llu op %d: slot %d has %d children, model %d",
                     (unsigned long long)seed, op, s, n, m->nkids[s]);
        }
        if (n == 0 && kids != NULL) {
            fail_msg("seed %llu op %d: empty child list not NULL", (unsigned long long)seed, op);
        }
        if (n == 0 && weft_has(w, e, weft_relationship_targets(w, co))) {
            fail_msg("seed %llu op %d: slot %d keeps an empty Children component",
                     (unsigned long long)seed, op, s);
        }
        for (int32_t i = 0; i < n; i++) {
            if (kids[i] != m->id[m->kids[s][i]]) {
                fail_msg("seed %llu op %d: slot %d child %d differs (order or identity)",
                         (unsigned long long)seed, op, s, i);
            }
            if (weft_parent(w, kids[i]) != e) {
                fail_msg("seed %llu op %d: listed child does not point back",
                         (unsigned long long)seed, op);
            }
        }
        // no cycles: the ancestor walk ends within live entities
        weft_entity anc[4];
        int32_t na = weft_ancestors(w, e, co, anc, 4);
        int depth = 0;
        for (int p = m->parent[s]; p >= 0; p = m->parent[p]) {
            depth++;
        }
        if (na != depth) {
            fail_msg("seed %llu op %d: slot %d ancestors %d, model %d",
                     (unsigned long long)seed, op, s, na, depth);
        }
    }
    for (int i = 0; i < ndead; i++) {
        if (weft_is_alive(w, dead[i])) {
            fail_msg("seed %llu op %d: a despawned entity is alive", (unsigned long long)seed,
                     op);
        }
    }
    weft_world_stats st;
    assert_int_equal(weft_world_get_stats(w, &st), WEFT_OK);
    if (st.live_entities != m->live) {
        fail_msg("seed %llu op %d: %lld live entities, model %d", (unsigned long long)seed, op,
                 (long long)st.live_entities, m->live);
    }
    if (weft_world_check(w) != WEFT_OK) {
        fail_msg("seed %llu op %d: world_check: %s", (unsigned long long)seed, op,
                 weft_last_error(w));
    }
}

static void run_seed(uint64_t seed)
{
    tw_fixture *f = tw_fixture_new();
    assert_non_null(f);
    weft_world *w = f->w;
    (void)weft_child_of(w);
    model *m = calloc(1, sizeof *m);
    for (int s = 0; s < SLOTS; s++) {
        m->parent[s] = -1;
    }
    enum { DEAD_RING = 512 };
    weft_entity dead[DEAD_RING];
    int ndead = 0, dead_pos = 0;
    tw_rng r;
    tw_rng_seed(&r, seed);
    for (int op = 0; op < OPS; op++) {
        uint32_t k = tw_rng_below(&r, 100);
        if (k < 20 || m->live < 2) { // spawn into an empty slot
            int s = (int)tw_rng_below(&r, SLOTS);
            if (m->id[s]) {
                continue;
            }
            m->id[s] = weft_spawn(w);
            assert_true(m->id[s] != 0);
            m->live++;
            // sometimes directly under a parent
            int p = pick_live(m, &r);
            if (p >= 0 && p != s && tw_rng_chance(&r, 50)) {
                assert_int_equal(weft_set_parent(w, m->id[s], m->id[p]), WEFT_OK);
                m->parent[s] = p;
                m->kids[p][m->nkids[p]++] = s;
            }
        } else if (k < 65) { // set parent (reparent, same parent, refused)
            int c = pick_live(m, &r);
            int p = tw_rng_chance(&r, 3) ? c : pick_live(m, &r);
            weft_status st = weft_set_parent(w, m->id[c], m->id[p]);
            if (c == p || is_ancestor(m, c, p)) {
                if (st != WEFT_ERR_RELATIONSHIP) {
                    fail_msg("seed %llu op %d: cycle accepted (%s)", (unsigned long long)seed,
                             op, weft_status_name(st));
                }
            } else {
                assert_int_equal(st, WEFT_OK);
                if (m->parent[c] >= 0) {
                    kid_erase(m, m->parent[c], c);
                }
                m->parent[c] = p;
                m->kids[p][m->nkids[p]++] = c;
            }
        } else if (k < 80) { // remove parent
            int c = pick_live(m, &r);
            assert_int_equal(weft_remove_parent(w, m->id[c]), WEFT_OK);
            if (m->parent[c] >= 0) {
                kid_erase(m, m->parent[c], c);
                m->parent[c] = -1;
            }
        } else { // despawn a subtree
            int s = pick_live(m, &r);
            weft_entity ids[SLOTS];
            int n = 0;
            // collect the subtree's ids before the model forgets them
            int stack[SLOTS], top = 0;
            stack[top++] = s;
            while (top) {
                int x = stack[--top];
                ids[n++] = m->id[x];
                for (int i = 0; i < m->nkids[x]; i++) {
                    stack[top++] = m->kids[x][i];
                }
            }
            assert_int_equal(weft_despawn(w, m->id[s]), WEFT_OK);
            model_despawn(m, s);
            for (int i = 0; i < n; i++) {
                dead[dead_pos] = ids[i];
                dead_pos = (dead_pos + 1) % DEAD_RING;
                if (ndead < DEAD_RING) {
                    ndead++;
                }
            }
        }
        check(w, m, dead, ndead, seed, op);
    }
    free(m);
    tw_fixture_free(f);
}

static void model_relationship_random(void **state)
{
    (void)state;
    bool overridden = false;
    uint64_t seed = tw_seed_from_env(0, &overridden);
    if (overridden) {
        run_seed(seed);
        return;
    }
    const uint64_t seeds[] = {1, 0xC0FFEE};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        run_seed(seeds[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(model_relationship_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/sched/test_sched_api.c - black-box tests of the system/schedule API
// on the single-threaded executor: declared access and the ambiguity report,
// intra-system conflicts, read-only conditions, deterministic order, cycles,
// auto sync points, set and combined run conditions, change detection across
// systems, command order, the final apply,
// messages, failures and context misuse, local state, stats and exports.
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <math.h>
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

typedef struct vec2 {
    int32_t x, y;
} vec2;

// ---- helpers ----

static void term(weft_query_desc *d, weft_component id, weft_access access, weft_oper oper,
                 uint32_t filter)
{
    weft_term *t = &d->terms[d->term_count++];
    t->id = id;
    t->access = access;
    t->oper = oper;
    t->filter = filter;
    t->or_group = 0;
}

// A system (or condition) under construction: the descriptor plus storage
// for its queries, resources and messages.
typedef struct sysb {
    weft_system_desc d;
    weft_query_desc q[8];
    weft_resource_use r[8];
    weft_message_use m[8];
    int nq, nr, nm;
} sysb;

static void sb_init(sysb *b, const char *name, weft_system_fn fn, void *user)
{
    memset(b, 0, sizeof *b);
    b->d.name = name;
    b->d.fn = fn;
    b->d.user = user;
}

// Adds an empty query and returns it (fill it with term()).
static weft_query_desc *sb_query(sysb *b)
{
    return &b->q[b->nq++];
}

// Adds a query of one AND term.
static void sb_q1(sysb *b, weft_component c, weft_access a, uint32_t filter)
{
    term(sb_query(b), c, a, WEFT_OPER_AND, filter);
}

static void sb_res(sysb *b, weft_component r, weft_access a)
{
    b->r[b->nr].id = r;
    b->r[b->nr].access = a;
    b->nr++;
}

static void sb_msg(sysb *b, weft_message_type t, weft_access a)
{
    b->m[b->nm].type = t;
    b->m[b->nm].access = a;
    b->nm++;
}

static void sb_finish(sysb *b)
{
    b->d.queries = b->nq ? b->q : NULL;
    b->d.query_count = b->nq;
    b->d.resources = b->nr ? b->r : NULL;
    b->d.resource_count = b->nr;
    b->d.messages = b->nm ? b->m : NULL;
    b->d.message_count = b->nm;
}

// weft_schedule_add_system without asserting.
static weft_node sb_try(weft_schedule *s, sysb *b)
{
    sb_finish(b);
    return weft_schedule_add_system(s, &b->d);
}

static weft_node sb_add(weft_world *w, weft_schedule *s, sysb *b)
{
    weft_node n = sb_try(s, b);
    if (n == WEFT_NODE_NONE) {
        fail_msg("weft_schedule_add_system(%s): %s: %s", b->d.name,
                 weft_status_name(weft_last_status(w)), weft_last_error(w));
    }
    return n;
}

// A condition from the same builder (fn is a weft_condition_fn).
static weft_condition *sb_cond_try(weft_schedule *s, sysb *b, weft_condition_fn fn)
{
    sb_finish(b);
    weft_condition_desc c;
    memset(&c, 0, sizeof c);
    c.name = b->d.name;
    c.fn = fn;
    c.user = b->d.user;
    c.queries = b->d.queries;
    c.query_count = b->d.query_count;
    c.resources = b->d.resources;
    c.resource_count = b->d.resource_count;
    c.messages = b->d.messages;
    c.message_count = b->d.message_count;
    return weft_condition_create(s, &c);
}

static weft_schedule *mksched(weft_world *w, const char *name)
{
    weft_schedule *s = weft_schedule_create(w, name);
    if (s == NULL) {
        fail_msg("weft_schedule_create(%s): %s: %s", name,
                 weft_status_name(weft_last_status(w)), weft_last_error(w));
    }
    return s;
}

static void expect_ok(weft_world *w, weft_status st, const char *what)
{
    if (st != WEFT_OK) {
        fail_msg("%s: %s: %s", what, weft_status_name(st), weft_last_error(w));
    }
}

static void body_ok(void);

// Runs s, expecting WEFT_OK and no failed check inside a system body.
#define RUN(w, s)                                                                  \
    do {                                                                           \
        expect_ok((w), weft_schedule_run((s), 1.0 / 60.0), "weft_schedule_run"); \
        body_ok();                                                                 \
    } while (0)
#define BUILD(w, s) expect_ok((w), weft_schedule_build((s)), "weft_schedule_build")

// Does the ambiguity report of s contain the pair {a, b} (either order)?
// Returns its index or -1.
static int find_amb(const weft_schedule *s, weft_node a, weft_node b, weft_ambiguity *out)
{
    int32_t n = weft_schedule_ambiguity_count(s);
    for (int32_t i = 0; i < n; i++) {
        weft_ambiguity am;
        assert_int_equal(weft_schedule_ambiguity(s, i, &am), WEFT_OK);
        if ((am.a == a && am.b == b) || (am.a == b && am.b == a)) {
            if (out) {
                *out = am;
            }
            return (int)i;
        }
    }
    return -1;
}

static bool amb_has_component(const weft_ambiguity *am, weft_component c)
{
    for (int32_t i = 0; i < am->component_count; i++) {
        if (am->components[i] == c) {
            return true;
        }
    }
    return false;
}

// Checks inside system bodies must not longjmp through weft: they record
// the first failure here; the fixture's teardown fails the test.
static int g_bad;
static char g_bad_msg[256];

#define BODY_CHECK(cond)                                                           \
    do {                                                                           \
        if (!(cond) && g_bad++ == 0) {                                             \
            snprintf(g_bad_msg, sizeof g_bad_msg, "%s:%d: %s", __FILE__, __LINE__, \
                     #cond);                                                       \
        }                                                                          \
    } while (0)

static void body_ok(void)
{
    if (g_bad) {
        fail_msg("%d check(s) failed inside systems; first: %s", g_bad, g_bad_msg);
    }
}

static int setup(void **state)
{
    g_bad = 0;
    g_bad_msg[0] = '\0';
    return tw_setup(state);
}

static int teardown(void **state)
{
    int r = tw_teardown(state);
    if (g_bad) {
        print_error("%d check(s) failed inside systems; first: %s\n", g_bad, g_bad_msg);
        return -1;
    }
    return r;
}

// Generic bodies.
static void sys_nop(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
}

static void sys_count(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (*(int *)user)++;
}

// A condition counting its calls and returning a fixed answer.
typedef struct cnd {
    int calls;
    bool result;
} cnd;

static bool cond_fixed(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    cnd *c = user;
    c->calls++;
    return c->result;
}

static weft_condition *mkcond(weft_world *w, weft_schedule *s, const char *name, cnd *c)
{
    sysb b;
    sb_init(&b, name, NULL, c);
    weft_condition *k = sb_cond_try(s, &b, cond_fixed);
    if (k == NULL) {
        fail_msg("weft_condition_create(%s): %s: %s", name,
                 weft_status_name(weft_last_status(w)), weft_last_error(w));
    }
    return k;
}

static uint64_t stat_runs(const weft_schedule *s, weft_node n)
{
    weft_system_stats st;
    assert_int_equal(weft_schedule_system_stats(s, n, &st), WEFT_OK);
    return st.runs;
}

static uint64_t stat_skipped(const weft_schedule *s, weft_node n)
{
    weft_system_stats st;
    assert_int_equal(weft_schedule_system_stats(s, n, &st), WEFT_OK);
    return st.skipped;
}

typedef struct comps {
    weft_component pos, vel, enemy, player, mark, health;
} comps;

static comps reg_comps(weft_world *w)
{
    comps c;
    c.pos = tw_comp(w, "Pos", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    c.vel = tw_comp(w, "Vel", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    c.enemy = tw_comp(w, "Enemy", 0, 0, WEFT_STORAGE_DEFAULT, 0);
    c.player = tw_comp(w, "Player", 0, 0, WEFT_STORAGE_DEFAULT, 0);
    c.mark = tw_comp(w, "Mark", sizeof(uint32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    c.health = tw_comp(w, "Health", sizeof(int32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    return c;
}

// ---- access matrix ----

// A = read Pos, B = write Vel, C = write Pos With Enemy, D = write Pos With
// Player. With Enemy vs With Player proves nothing (an entity may carry
// both, so only With X against Without X proves disjointness), so the
// report also lists C-D. With
// C' = write Pos With Enemy Without Player the report is exactly A-C', A-D.
static void access_matrix_ambiguities(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);

    for (int variant = 0; variant < 2; variant++) {
        weft_schedule *s = mksched(w, variant ? "matrix_prime" : "matrix");
        sysb b;
        sb_init(&b, "A", sys_nop, NULL);
        sb_q1(&b, c.pos, WEFT_ACCESS_READ, 0);
        weft_node A = sb_add(w, s, &b);
        sb_init(&b, "B", sys_nop, NULL);
        sb_q1(&b, c.vel, WEFT_ACCESS_WRITE, 0);
        weft_node B = sb_add(w, s, &b);
        sb_init(&b, "C", sys_nop, NULL);
        weft_query_desc *q = sb_query(&b);
        term(q, c.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0);
        term(q, c.enemy, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0);
        if (variant) {
            term(q, c.player, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT, 0);
        }
        weft_node C = sb_add(w, s, &b);
        sb_init(&b, "D", sys_nop, NULL);
        q = sb_query(&b);
        term(q, c.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0);
        term(q, c.player, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0);
        weft_node D = sb_add(w, s, &b);

        BUILD(w, s);
        weft_ambiguity am;
        assert_true(find_amb(s, A, C, &am) >= 0);
        assert_int_equal(am.a, A); // a < b: a runs first (registration order)
        assert_int_equal(am.b, C);
        assert_int_equal(am.component_count, 1);
        assert_int_equal(am.components[0], c.pos);
        assert_true(find_amb(s, A, D, &am) >= 0);
        assert_int_equal(am.component_count, 1);
        assert_int_equal(am.components[0], c.pos);
        assert_int_equal(find_amb(s, A, B, NULL), -1);
        assert_int_equal(find_amb(s, B, C, NULL), -1);
        assert_int_equal(find_amb(s, B, D, NULL), -1);
        if (variant) {
            assert_int_equal(find_amb(s, C, D, NULL), -1);
            assert_int_equal(weft_schedule_ambiguity_count(s), 2);
        } else {
            assert_true(find_amb(s, C, D, &am) >= 0);
            assert_true(amb_has_component(&am, c.pos));
            assert_int_equal(weft_schedule_ambiguity_count(s), 3);
        }
        // Out of range and NULL out.
        assert_int_equal(weft_schedule_ambiguity(s, weft_schedule_ambiguity_count(s), &am),
                         WEFT_ERR_INVALID_ARG);
        assert_int_equal(weft_schedule_ambiguity(s, 0, NULL), WEFT_ERR_INVALID_ARG);
        RUN(w, s);
    }
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- intra-system conflicts ----

static void intra_system_conflicts_refused(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);
    weft_component res = tw_comp(w, "Res", sizeof(int32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_schedule *s = mksched(w, "update");

    // (write Pos) + (read Pos): refused.
    sysb b;
    sb_init(&b, "aliasing", sys_nop, NULL);
    sb_q1(&b, c.pos, WEFT_ACCESS_WRITE, 0);
    sb_q1(&b, c.pos, WEFT_ACCESS_READ, 0);
    assert_int_equal(sb_try(s, &b), WEFT_NODE_NONE);
    tw_expect_error(f, WEFT_ERR_ACCESS_VIOLATION, "aliasing");

    // (write Pos) + (write Pos): refused.
    sb_init(&b, "aliasing2", sys_nop, NULL);
    sb_q1(&b, c.pos, WEFT_ACCESS_WRITE, 0);
    sb_q1(&b, c.pos, WEFT_ACCESS_WRITE, 0);
    assert_int_equal(sb_try(s, &b), WEFT_NODE_NONE);
    tw_expect_error(f, WEFT_ERR_ACCESS_VIOLATION, NULL);

    // (write Pos With Enemy) + (read Pos With Player): not disjoint.
    sb_init(&b, "aliasing3", sys_nop, NULL);
    weft_query_desc *q = sb_query(&b);
    term(q, c.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0);
    term(q, c.enemy, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0);
    q = sb_query(&b);
    term(q, c.pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0);
    term(q, c.player, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0);
    assert_int_equal(sb_try(s, &b), WEFT_NODE_NONE);
    tw_expect_error(f, WEFT_ERR_ACCESS_VIOLATION, NULL);

    // (write Pos With Enemy) + (read Pos Without Enemy): disjoint, accepted.
    sb_init(&b, "disjoint", sys_nop, NULL);
    q = sb_query(&b);
    term(q, c.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0);
    term(q, c.enemy, WEFT_ACCESS_NONE, WEFT_OPER_WITH, 0);
    q = sb_query(&b);
    term(q, c.pos, WEFT_ACCESS_READ, WEFT_OPER_AND, 0);
    term(q, c.enemy, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT, 0);
    weft_node ok = sb_add(w, s, &b);
    assert_true(ok != WEFT_NODE_NONE);

    // Two readers of Pos in one system are fine.
    sb_init(&b, "two_readers", sys_nop, NULL);
    sb_q1(&b, c.pos, WEFT_ACCESS_READ, 0);
    sb_q1(&b, c.pos, WEFT_ACCESS_READ, 0);
    assert_true(sb_add(w, s, &b) != WEFT_NODE_NONE);

    // A resource listed twice is refused (write + read, and read + read).
    sb_init(&b, "res_twice", sys_nop, NULL);
    sb_res(&b, res, WEFT_ACCESS_WRITE);
    sb_res(&b, res, WEFT_ACCESS_READ);
    assert_int_equal(sb_try(s, &b), WEFT_NODE_NONE);
    tw_expect_error(f, WEFT_ERR_ACCESS_VIOLATION, NULL);
    sb_init(&b, "res_twice_read", sys_nop, NULL);
    sb_res(&b, res, WEFT_ACCESS_READ);
    sb_res(&b, res, WEFT_ACCESS_READ);
    assert_int_equal(sb_try(s, &b), WEFT_NODE_NONE);
    assert_true(weft_last_status(w) != WEFT_OK);

    // A message type listed twice is refused.
    weft_message_desc md;
    memset(&md, 0, sizeof md);
    md.name = "Msg";
    md.size = sizeof(int32_t);
    weft_message_type mt = weft_message_register(w, &md);
    assert_true(mt != 0);
    sb_init(&b, "msg_twice", sys_nop, NULL);
    sb_msg(&b, mt, WEFT_ACCESS_WRITE);
    sb_msg(&b, mt, WEFT_ACCESS_READ);
    assert_int_equal(sb_try(s, &b), WEFT_NODE_NONE);
    tw_expect_error(f, WEFT_ERR_ACCESS_VIOLATION, NULL);

    // The refused systems left nothing behind: two nodes, runnable.
    assert_int_equal(weft_schedule_node_count(s), 2);
    RUN(w, s);
    assert_int_equal(stat_runs(s, ok), 1);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- conditions are read-only ----

static bool cond_true(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
    return true;
}

static void condition_write_access_refused(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);
    weft_component res = tw_comp(w, "Res", sizeof(int32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_schedule *s = mksched(w, "update");

    sysb b;
    sb_init(&b, "writes_pos", NULL, NULL);
    sb_q1(&b, c.pos, WEFT_ACCESS_WRITE, 0);
    assert_null(sb_cond_try(s, &b, cond_true));
    tw_expect_error(f, WEFT_ERR_ACCESS_VIOLATION, NULL);

    sb_init(&b, "writes_res", NULL, NULL);
    sb_res(&b, res, WEFT_ACCESS_WRITE);
    assert_null(sb_cond_try(s, &b, cond_true));
    tw_expect_error(f, WEFT_ERR_ACCESS_VIOLATION, NULL);

    // Read-only versions are accepted.
    sb_init(&b, "reads", NULL, NULL);
    sb_q1(&b, c.pos, WEFT_ACCESS_READ, 0);
    sb_res(&b, res, WEFT_ACCESS_READ);
    assert_non_null(sb_cond_try(s, &b, cond_true));
}

// ---- deterministic order ----

// Declares the same 24-node schedule (seeded random access, a few edges, a
// set ordered after a system, an apply point, command systems) in `w` and
// writes every node's built position to pos (nodes 1..n). Returns n.
static int32_t build_sample(weft_world *w, int32_t *pos, int32_t *syncs)
{
    weft_component cs[6];
    static const char *names[6] = {"C0", "C1", "C2", "C3", "C4", "C5"};
    for (int i = 0; i < 6; i++) {
        cs[i] = tw_comp(w, names[i], sizeof(uint32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    }
    weft_schedule *s = mksched(w, "sample");
    static char sysnames[24][16];
    tw_rng r;
    tw_rng_seed(&r, 0x5eedull);
    weft_node nodes[24];
    weft_node set = weft_schedule_ensure_set(s, "late");
    assert_true(set != WEFT_NODE_NONE);
    assert_true((set & WEFT_NODE_SET) != 0);
    for (int i = 0; i < 24; i++) {
        if (i == 12) {
            nodes[i] = weft_schedule_add_apply_point(s, "flush");
            assert_true(nodes[i] != WEFT_NODE_NONE);
            continue;
        }
        snprintf(sysnames[i], sizeof sysnames[i], "sys%d", i);
        sysb b;
        sb_init(&b, sysnames[i], sys_nop, NULL);
        weft_query_desc *q = sb_query(&b);
        uint32_t used = 0;
        int nt = 1 + (int)tw_rng_below(&r, 3);
        for (int t = 0; t < nt; t++) {
            uint32_t k = tw_rng_below(&r, 6);
            if (used & (1u << k)) {
                continue;
            }
            used |= 1u << k;
            term(q, cs[k], tw_rng_chance(&r, 40) ? WEFT_ACCESS_WRITE : WEFT_ACCESS_READ,
                 WEFT_OPER_AND, 0);
        }
        b.d.flags = (i % 5 == 0) ? WEFT_SYSTEM_COMMANDS : 0;
        nodes[i] = sb_add(w, s, &b);
        assert_int_equal(nodes[i], (weft_node)(i + 1)); // nodes count from 1
        if (i >= 16) {
            assert_int_equal(weft_schedule_add_to_set(s, nodes[i], set), WEFT_OK);
        }
    }
    assert_int_equal(weft_schedule_add_order(s, nodes[3], nodes[1], 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, nodes[10], set, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, nodes[5], nodes[12], 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, nodes[12], nodes[6], 0), WEFT_OK);
    weft_node chain[3] = {nodes[9], nodes[8], nodes[7]};
    assert_int_equal(weft_schedule_add_chain(s, chain, 3, 0), WEFT_OK);
    BUILD(w, s);
    int32_t n = weft_schedule_node_count(s);
    assert_int_equal(n, 24);
    for (int32_t i = 1; i <= n; i++) {
        pos[i] = weft_schedule_position(s, (weft_node)i);
        assert_true(pos[i] >= 0);
    }
    // Declared orders hold.
    assert_true(pos[4] < pos[2]);
    for (int i = 16; i < 24; i++) {
        assert_true(pos[11] < pos[i + 1]);
    }
    assert_true(pos[6] < pos[13] && pos[13] < pos[7]);
    assert_true(pos[10] < pos[9] && pos[9] < pos[8]);
    // Positions are distinct.
    for (int32_t i = 1; i <= n; i++) {
        for (int32_t j = i + 1; j <= n; j++) {
            assert_true(pos[i] != pos[j]);
        }
    }
    *syncs = weft_schedule_sync_count(s);
    assert_true(*syncs >= 1);
    RUN(w, s);
    return n;
}

static void order_deterministic_across_worlds(void **state)
{
    tw_fixture *f = *state;
    int32_t p1[32], p2[32], s1, s2;
    int32_t n1 = build_sample(f->w, p1, &s1);
    weft_world *w2 = weft_world_create(NULL);
    assert_non_null(w2);
    int32_t n2 = build_sample(w2, p2, &s2);
    assert_int_equal(n1, n2);
    assert_int_equal(s1, s2);
    for (int32_t i = 1; i <= n1; i++) {
        if (p1[i] != p2[i]) {
            fail_msg("node %d: position %d in world 1, %d in world 2", i, p1[i], p2[i]);
        }
    }
    weft_world_destroy(w2);
}

// ---- cycles ----

static void cycle_and_self_edge_refused(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_schedule *s = mksched(w, "cyc");
    sysb b;
    sb_init(&b, "sys_alpha", sys_nop, NULL);
    weft_node a = sb_add(w, s, &b);
    sb_init(&b, "sys_beta", sys_nop, NULL);
    weft_node bb = sb_add(w, s, &b);
    sb_init(&b, "sys_gamma", sys_nop, NULL);
    weft_node g = sb_add(w, s, &b);
    (void)g;

    // Self edge: refused at once.
    assert_int_equal(weft_schedule_add_order(s, a, a, 0), WEFT_ERR_SCHEDULE_CYCLE);
    tw_expect_error(f, WEFT_ERR_SCHEDULE_CYCLE, NULL);
    // a -> b -> a: accepted edge by edge, refused by the build.
    assert_int_equal(weft_schedule_add_order(s, a, bb, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, bb, a, 0), WEFT_OK);
    assert_int_equal(weft_schedule_build(s), WEFT_ERR_SCHEDULE_CYCLE);
    tw_expect_error(f, WEFT_ERR_SCHEDULE_CYCLE, "sys_alpha");
    tw_expect_error(f, WEFT_ERR_SCHEDULE_CYCLE, "sys_beta");
    // Running builds first and fails the same way; nothing ran.
    weft_clear_error(w);
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_ERR_SCHEDULE_CYCLE);
    tw_expect_error(f, WEFT_ERR_SCHEDULE_CYCLE, "sys_alpha");
    assert_int_equal(weft_world_check(w), WEFT_OK);

    // A longer cycle through a set: x -> S, S contains z, z -> y, y -> x.
    weft_schedule *s2 = mksched(w, "cyc2");
    sb_init(&b, "sys_x", sys_nop, NULL);
    weft_node x = sb_add(w, s2, &b);
    sb_init(&b, "sys_y", sys_nop, NULL);
    weft_node y = sb_add(w, s2, &b);
    sb_init(&b, "sys_z", sys_nop, NULL);
    weft_node z = sb_add(w, s2, &b);
    weft_node set = weft_schedule_ensure_set(s2, "group");
    assert_int_equal(weft_schedule_add_to_set(s2, z, set), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s2, x, set, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s2, z, y, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s2, y, x, 0), WEFT_OK);
    assert_int_equal(weft_schedule_build(s2), WEFT_ERR_SCHEDULE_CYCLE);
    tw_expect_error(f, WEFT_ERR_SCHEDULE_CYCLE, "sys_y");
    // A set into itself.
    assert_int_equal(weft_schedule_add_to_set(s2, set, set), WEFT_ERR_SCHEDULE_CYCLE);
}

// ---- ambiguity report ----

static void ambiguity_report_and_silencing(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);
    sysb b;

    // Two unordered writers of Pos (and Vel): reported with both ids; the
    // order still follows registration.
    weft_schedule *s = mksched(w, "amb");
    sb_init(&b, "w1", sys_nop, NULL);
    weft_query_desc *q = sb_query(&b);
    term(q, c.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0);
    term(q, c.vel, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0);
    weft_node w1 = sb_add(w, s, &b);
    sb_init(&b, "w2", sys_nop, NULL);
    q = sb_query(&b);
    term(q, c.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0);
    term(q, c.vel, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0);
    weft_node w2 = sb_add(w, s, &b);
    sb_init(&b, "r1", sys_nop, NULL);
    sb_q1(&b, c.health, WEFT_ACCESS_READ, 0);
    weft_node r1 = sb_add(w, s, &b);
    sb_init(&b, "r2", sys_nop, NULL);
    sb_q1(&b, c.health, WEFT_ACCESS_READ, 0);
    weft_node r2 = sb_add(w, s, &b);
    BUILD(w, s);
    assert_int_equal(weft_schedule_ambiguity_count(s), 1);
    weft_ambiguity am;
    assert_int_equal(weft_schedule_ambiguity(s, 0, &am), WEFT_OK);
    assert_int_equal(am.a, w1);
    assert_int_equal(am.b, w2);
    assert_int_equal(am.component_count, 2);
    assert_true(amb_has_component(&am, c.pos));
    assert_true(amb_has_component(&am, c.vel));
    assert_true(weft_schedule_position(s, w1) < weft_schedule_position(s, w2));
    // Reader + reader: not reported.
    assert_int_equal(find_amb(s, r1, r2, NULL), -1);
    // Ordering silences it.
    assert_int_equal(weft_schedule_add_order(s, w2, w1, 0), WEFT_OK);
    BUILD(w, s);
    assert_int_equal(weft_schedule_ambiguity_count(s), 0);
    assert_true(weft_schedule_position(s, w2) < weft_schedule_position(s, w1));

    // Ignoring Pos leaves only Vel in the report; ignoring Vel too silences it.
    s = mksched(w, "amb_ignore");
    sb_init(&b, "w1", sys_nop, NULL);
    q = sb_query(&b);
    term(q, c.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0);
    term(q, c.vel, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0);
    w1 = sb_add(w, s, &b);
    sb_init(&b, "w2", sys_nop, NULL);
    q = sb_query(&b);
    term(q, c.pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND, 0);
    term(q, c.vel, WEFT_ACCESS_READ, WEFT_OPER_AND, 0);
    w2 = sb_add(w, s, &b);
    assert_int_equal(weft_schedule_add_ambiguous_component(s, c.pos), WEFT_OK);
    BUILD(w, s);
    assert_int_equal(weft_schedule_ambiguity_count(s), 1);
    assert_int_equal(weft_schedule_ambiguity(s, 0, &am), WEFT_OK);
    assert_int_equal(am.component_count, 1);
    assert_int_equal(am.components[0], c.vel);
    assert_int_equal(weft_schedule_add_ambiguous_component(s, c.vel), WEFT_OK);
    BUILD(w, s);
    assert_int_equal(weft_schedule_ambiguity_count(s), 0);
    // Still ordered (registration): deterministic.
    assert_true(weft_schedule_position(s, w1) < weft_schedule_position(s, w2));

    // ambiguous_with between two systems, and between a set and a system.
    s = mksched(w, "amb_with");
    sb_init(&b, "w1", sys_nop, NULL);
    sb_q1(&b, c.pos, WEFT_ACCESS_WRITE, 0);
    w1 = sb_add(w, s, &b);
    sb_init(&b, "w2", sys_nop, NULL);
    sb_q1(&b, c.pos, WEFT_ACCESS_WRITE, 0);
    w2 = sb_add(w, s, &b);
    sb_init(&b, "w3", sys_nop, NULL);
    sb_q1(&b, c.pos, WEFT_ACCESS_READ, 0);
    weft_node w3 = sb_add(w, s, &b);
    BUILD(w, s);
    assert_int_equal(weft_schedule_ambiguity_count(s), 3);
    assert_int_equal(weft_schedule_add_ambiguous_pair(s, w2, w1), WEFT_OK);
    BUILD(w, s);
    assert_int_equal(weft_schedule_ambiguity_count(s), 2);
    assert_int_equal(find_amb(s, w1, w2, NULL), -1);
    weft_node set = weft_schedule_ensure_set(s, "writers");
    assert_int_equal(weft_schedule_add_to_set(s, w1, set), WEFT_OK);
    assert_int_equal(weft_schedule_add_to_set(s, w2, set), WEFT_OK);
    assert_int_equal(weft_schedule_add_ambiguous_pair(s, w3, set), WEFT_OK);
    BUILD(w, s);
    assert_int_equal(weft_schedule_ambiguity_count(s), 0);
    assert_true(weft_schedule_position(s, w1) < weft_schedule_position(s, w2));
    assert_true(weft_schedule_position(s, w2) < weft_schedule_position(s, w3));
    RUN(w, s);
}

// ---- auto sync points ----

// Spawns n entities carrying component c (values next, next+1, ...).
typedef struct spawner {
    weft_component c;
    int n;
    uint32_t next;
} spawner;

static void sys_spawn(weft_system_ctx *ctx, void *user)
{
    spawner *sp = user;
    weft_commands *cmds = weft_system_commands(ctx);
    BODY_CHECK(cmds != NULL);
    for (int i = 0; i < sp->n; i++) {
        uint32_t v = sp->next++;
        weft_value val = {sp->c, sizeof v, &v};
        BODY_CHECK(weft_cmd_spawn(cmds, &val, 1) != 0);
    }
}

// Records how many entities its query 0 matches.
typedef struct seen {
    int64_t last;
    int runs;
} seen;

static void sys_seen(weft_system_ctx *ctx, void *user)
{
    seen *s = user;
    s->last = weft_system_count(ctx, 0);
    s->runs++;
}

static weft_node add_spawner(weft_world *w, weft_schedule *s, const char *name, spawner *sp)
{
    sysb b;
    sb_init(&b, name, sys_spawn, sp);
    b.d.flags = WEFT_SYSTEM_COMMANDS;
    return sb_add(w, s, &b);
}

static weft_node add_seen(weft_world *w, weft_schedule *s, const char *name, weft_component c,
                          seen *sn)
{
    sysb b;
    sb_init(&b, name, sys_seen, sn);
    sb_q1(&b, c, WEFT_ACCESS_READ, 0);
    return sb_add(w, s, &b);
}

static int64_t count_with(weft_world *w, weft_component c)
{
    weft_query_desc d;
    memset(&d, 0, sizeof d);
    term(&d, c, WEFT_ACCESS_READ, WEFT_OPER_AND, 0);
    d.flags = WEFT_QUERY_UNCACHED;
    weft_query *q = weft_query_create(w, &d);
    assert_non_null(q);
    int64_t n = weft_query_count(w, q);
    assert_int_equal(weft_query_destroy(w, q), WEFT_OK);
    return n;
}

static void auto_sync_basic_and_opt_outs(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);

    // spawner -> counter: one sync; the counter sees the spawns in the same
    // run, on every run.
    weft_schedule *s = mksched(w, "sync_on");
    spawner sp = {c.mark, 3, 0};
    seen sn = {0, 0};
    weft_node a = add_spawner(w, s, "spawner", &sp);
    weft_node bn = add_seen(w, s, "counter", c.mark, &sn);
    assert_int_equal(weft_schedule_add_order(s, a, bn, 0), WEFT_OK);
    RUN(w, s);
    assert_int_equal(weft_schedule_sync_count(s), 1);
    assert_int_equal(sn.last, 3);
    RUN(w, s);
    assert_int_equal(sn.last, 6);
    assert_false(weft_schedule_has_edge(s, a, bn)); // through the sync point
    assert_true(weft_schedule_position(s, a) < weft_schedule_position(s, bn));

    // Auto sync off: the counter does not see them, the final apply does.
    s = mksched(w, "sync_off");
    assert_int_equal(weft_schedule_set_auto_sync(s, false), WEFT_OK);
    a = add_spawner(w, s, "spawner", &sp);
    bn = add_seen(w, s, "counter", c.mark, &sn);
    assert_int_equal(weft_schedule_add_order(s, a, bn, 0), WEFT_OK);
    int64_t before = count_with(w, c.mark);
    RUN(w, s);
    assert_int_equal(weft_schedule_sync_count(s), 0);
    assert_int_equal(sn.last, before);
    assert_int_equal(count_with(w, c.mark), before + 3);
    // Turning it back on rebuilds with the sync point.
    assert_int_equal(weft_schedule_set_auto_sync(s, true), WEFT_OK);
    before = count_with(w, c.mark);
    RUN(w, s);
    assert_int_equal(weft_schedule_sync_count(s), 1);
    assert_int_equal(sn.last, before + 3);

    // WEFT_ORDER_IGNORE_DEFERRED on the edge also suppresses it.
    s = mksched(w, "sync_ignored");
    a = add_spawner(w, s, "spawner", &sp);
    bn = add_seen(w, s, "counter", c.mark, &sn);
    assert_int_equal(weft_schedule_add_order(s, a, bn, WEFT_ORDER_IGNORE_DEFERRED), WEFT_OK);
    before = count_with(w, c.mark);
    RUN(w, s);
    assert_int_equal(weft_schedule_sync_count(s), 0);
    assert_int_equal(sn.last, before);
    assert_int_equal(count_with(w, c.mark), before + 3);
    assert_true(weft_schedule_has_edge(s, a, bn));

    // A system without commands needs no sync point.
    s = mksched(w, "no_cmds");
    int runs = 0;
    sysb b;
    sb_init(&b, "plain", sys_count, &runs);
    a = sb_add(w, s, &b);
    bn = add_seen(w, s, "counter", c.mark, &sn);
    assert_int_equal(weft_schedule_add_order(s, a, bn, 0), WEFT_OK);
    RUN(w, s);
    assert_int_equal(weft_schedule_sync_count(s), 0);
    assert_int_equal(runs, 1);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

static void auto_sync_shared_and_explicit(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);
    weft_component mark2 = tw_comp(w, "Mark2", sizeof(uint32_t), 0, WEFT_STORAGE_DEFAULT, 0);

    // An explicit apply point between them is reused: spawner -> P ->
    // counter plus a direct spawner -> counter edge gives one sync point.
    weft_schedule *s = mksched(w, "explicit");
    spawner sp = {c.mark, 2, 0};
    seen sn = {0, 0};
    weft_node a = add_spawner(w, s, "spawner", &sp);
    weft_node p = weft_schedule_add_apply_point(s, "flush");
    assert_true(p != WEFT_NODE_NONE);
    weft_node bn = add_seen(w, s, "counter", c.mark, &sn);
    weft_node ch[3] = {a, p, bn};
    assert_int_equal(weft_schedule_add_chain(s, ch, 3, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, a, bn, 0), WEFT_OK);
    int64_t before = count_with(w, c.mark);
    RUN(w, s);
    assert_int_equal(weft_schedule_sync_count(s), 1);
    assert_int_equal(sn.last, before + 2);
    assert_true(weft_schedule_position(s, a) < weft_schedule_position(s, p));
    assert_true(weft_schedule_position(s, p) < weft_schedule_position(s, bn));
    assert_string_equal(weft_schedule_node_name(s, p), "flush");

    // An apply point with a run condition is not reused: an auto sync point
    // is added as well.
    s = mksched(w, "explicit_cond");
    a = add_spawner(w, s, "spawner", &sp);
    p = weft_schedule_add_apply_point(s, "flush");
    bn = add_seen(w, s, "counter", c.mark, &sn);
    weft_node ch2[3] = {a, p, bn};
    assert_int_equal(weft_schedule_add_chain(s, ch2, 3, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, a, bn, 0), WEFT_OK);
    cnd pc = {0, false};
    assert_int_equal(weft_schedule_add_condition(s, p, mkcond(w, s, "never", &pc)), WEFT_OK);
    before = count_with(w, c.mark);
    RUN(w, s);
    assert_int_equal(weft_schedule_sync_count(s), 2);
    assert_int_equal(sn.last, before + 2);

    // Spec appendix B: A(cmd) -> B, A -> C, B -> C, D(cmd) -> E ignoring
    // deferred, E -> F: one shared sync point; E does not see D's spawns,
    // F does; B and C see A's.
    s = mksched(w, "appendix_b");
    spawner spa = {c.mark, 1, 100};
    spawner spd = {mark2, 1, 200};
    seen sb_ = {0, 0}, sc = {0, 0}, se = {0, 0}, sf = {0, 0};
    weft_node A = add_spawner(w, s, "A", &spa);
    weft_node B = add_seen(w, s, "B", c.mark, &sb_);
    weft_node C = add_seen(w, s, "C", c.mark, &sc);
    weft_node D = add_spawner(w, s, "D", &spd);
    weft_node E = add_seen(w, s, "E", mark2, &se);
    weft_node F = add_seen(w, s, "F", mark2, &sf);
    assert_int_equal(weft_schedule_add_order(s, A, B, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, A, C, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, B, C, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, D, E, WEFT_ORDER_IGNORE_DEFERRED), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, E, F, 0), WEFT_OK);
    int64_t m1 = count_with(w, c.mark), m2 = count_with(w, mark2);
    RUN(w, s);
    assert_int_equal(weft_schedule_sync_count(s), 1);
    assert_int_equal(sb_.last, m1 + 1);
    assert_int_equal(sc.last, m1 + 1);
    assert_int_equal(se.last, m2);
    assert_int_equal(sf.last, m2 + 1);
    assert_true(weft_schedule_has_edge(s, B, C));
    assert_true(weft_schedule_has_edge(s, D, E));
    assert_false(weft_schedule_has_edge(s, A, B));
    assert_false(weft_schedule_has_edge(s, E, F));
    // Sync points are never reported as ambiguities.
    assert_int_equal(weft_schedule_ambiguity_count(s), 0);

    // IgnoreDeferred is not honoured into an exclusive target.
    s = mksched(w, "ignore_into_exclusive");
    spd.n = 1;
    seen sx = {0, 0};
    D = add_spawner(w, s, "D", &spd);
    sysb b;
    sb_init(&b, "X", sys_seen, &sx);
    sb_q1(&b, mark2, WEFT_ACCESS_READ, 0);
    b.d.flags = WEFT_SYSTEM_EXCLUSIVE;
    weft_node X = sb_add(w, s, &b);
    assert_int_equal(weft_schedule_add_order(s, D, X, WEFT_ORDER_IGNORE_DEFERRED), WEFT_OK);
    m2 = count_with(w, mark2);
    RUN(w, s);
    assert_int_equal(weft_schedule_sync_count(s), 1);
    assert_int_equal(sx.last, m2 + 1);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- set run conditions ----

static void set_condition_skips_members(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);
    weft_schedule *s = mksched(w, "sets");
    weft_node outer = weft_schedule_ensure_set(s, "outer");
    weft_node gated = weft_schedule_ensure_set(s, "gated");
    assert_true(outer != WEFT_NODE_NONE && gated != WEFT_NODE_NONE);
    assert_int_equal(weft_schedule_ensure_set(s, "gated"), gated); // same name, same set
    assert_int_equal(weft_schedule_add_to_set(s, gated, outer), WEFT_OK);

    int r1 = 0, r2 = 0, rx = 0, ry = 0;
    sysb b;
    sb_init(&b, "m1", sys_count, &r1);
    weft_node m1 = sb_add(w, s, &b);
    sb_init(&b, "m2", sys_count, &r2);
    weft_node m2 = sb_add(w, s, &b);
    spawner sp = {c.mark, 1, 0};
    weft_node m3 = add_spawner(w, s, "m3", &sp);
    sb_init(&b, "after_m1", sys_count, &rx);
    weft_node x = sb_add(w, s, &b);
    sb_init(&b, "after_set", sys_count, &ry);
    weft_node y = sb_add(w, s, &b);
    assert_int_equal(weft_schedule_add_to_set(s, m1, gated), WEFT_OK);
    assert_int_equal(weft_schedule_add_to_set(s, m2, gated), WEFT_OK);
    assert_int_equal(weft_schedule_add_to_set(s, m3, gated), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, m1, x, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, gated, y, 0), WEFT_OK);
    cnd setc = {0, false}, own = {0, true}, outc = {0, true};
    assert_int_equal(weft_schedule_add_condition(s, gated, mkcond(w, s, "set_cond", &setc)),
                     WEFT_OK);
    assert_int_equal(weft_schedule_add_condition(s, m2, mkcond(w, s, "own_cond", &own)), WEFT_OK);
    assert_int_equal(weft_schedule_add_condition(s, outer, mkcond(w, s, "outer_cond", &outc)),
                     WEFT_OK);

    for (int run = 1; run <= 3; run++) {
        RUN(w, s);
        assert_int_equal(setc.calls, run); // once per run, 3 members
        assert_int_equal(outc.calls, run);
        assert_int_equal(own.calls, run); // a skipped member's own condition still runs
        assert_int_equal(r1, 0);
        assert_int_equal(r2, 0);
        assert_int_equal(rx, run); // skipped systems release their successors
        assert_int_equal(ry, run);
        assert_int_equal(count_with(w, c.mark), 0); // m3 never recorded anything
        assert_int_equal(stat_skipped(s, m1), (uint64_t)run);
        assert_int_equal(stat_skipped(s, m3), (uint64_t)run);
        assert_int_equal(stat_runs(s, m3), 0);
    }
    // The set condition turns true: every member runs, m3's spawn lands.
    setc.result = true;
    RUN(w, s);
    assert_int_equal(setc.calls, 4);
    assert_int_equal(own.calls, 4);
    assert_int_equal(r1, 1);
    assert_int_equal(r2, 1);
    assert_int_equal(count_with(w, c.mark), 1);
    assert_int_equal(stat_runs(s, m1), 1);
    // The outer set's condition gates the nested set's members too.
    outc.result = false;
    RUN(w, s);
    assert_int_equal(outc.calls, 5);
    assert_int_equal(r1, 1);
    assert_int_equal(r2, 1);
    assert_int_equal(rx, 5);
    assert_int_equal(count_with(w, c.mark), 1);
    // m2's own condition false: only m2 is skipped.
    outc.result = true;
    own.result = false;
    RUN(w, s);
    assert_int_equal(r1, 2);
    assert_int_equal(r2, 1);
    assert_int_equal(own.calls, 6);
    assert_int_equal(stat_skipped(s, m2), 5);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- combined and built-in conditions ----

static weft_node gated_counter(weft_world *w, weft_schedule *s, const char *name, int *runs,
                               weft_condition *cond)
{
    sysb b;
    sb_init(&b, name, sys_count, runs);
    weft_node n = sb_add(w, s, &b);
    assert_non_null(cond);
    assert_int_equal(weft_schedule_add_condition(s, n, cond), WEFT_OK);
    return n;
}

static void condition_combinators(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_schedule *s = mksched(w, "combinators");
    cnd and_a = {0, false}, and_b = {0, true};
    cnd eag_a = {0, false}, eag_b = {0, true};
    cnd or_a = {0, true}, or_b = {0, true};
    cnd not_a = {0, false};
    cnd m1 = {0, false}, m2 = {0, true}, m3 = {0, true};
    int r_and = 0, r_eager = 0, r_or = 0, r_not = 0, r_multi = 0;
    gated_counter(w, s, "and", &r_and,
                  weft_condition_and(s, mkcond(w, s, "and_a", &and_a),
                                     mkcond(w, s, "and_b", &and_b)));
    gated_counter(w, s, "and_eager", &r_eager,
                  weft_condition_and_eager(s, mkcond(w, s, "eag_a", &eag_a),
                                           mkcond(w, s, "eag_b", &eag_b)));
    gated_counter(w, s, "or", &r_or,
                  weft_condition_or(s, mkcond(w, s, "or_a", &or_a), mkcond(w, s, "or_b", &or_b)));
    gated_counter(w, s, "not", &r_not, weft_condition_not(s, mkcond(w, s, "not_a", &not_a)));
    weft_node multi = gated_counter(w, s, "multi", &r_multi, mkcond(w, s, "m1", &m1));
    assert_int_equal(weft_schedule_add_condition(s, multi, mkcond(w, s, "m2", &m2)), WEFT_OK);
    assert_int_equal(weft_schedule_add_condition(s, multi, mkcond(w, s, "m3", &m3)), WEFT_OK);

    RUN(w, s);
    assert_int_equal(and_a.calls, 1);
    assert_int_equal(and_b.calls, 0); // short circuit
    assert_int_equal(r_and, 0);
    assert_int_equal(eag_a.calls, 1);
    assert_int_equal(eag_b.calls, 1); // eager
    assert_int_equal(r_eager, 0);
    assert_int_equal(or_a.calls, 1);
    assert_int_equal(or_b.calls, 0); // short circuit
    assert_int_equal(r_or, 1);
    assert_int_equal(not_a.calls, 1);
    assert_int_equal(r_not, 1);
    assert_int_equal(m1.calls, 1); // every run_if is evaluated
    assert_int_equal(m2.calls, 1);
    assert_int_equal(m3.calls, 1);
    assert_int_equal(r_multi, 0);

    and_a.result = true;
    eag_a.result = true;
    or_a.result = false;
    not_a.result = true;
    m1.result = true;
    RUN(w, s);
    assert_int_equal(and_b.calls, 1);
    assert_int_equal(r_and, 1);
    assert_int_equal(eag_b.calls, 2);
    assert_int_equal(r_eager, 1);
    assert_int_equal(or_b.calls, 1);
    assert_int_equal(r_or, 2);
    assert_int_equal(r_not, 1);
    assert_int_equal(r_multi, 1);
    m3.result = false;
    RUN(w, s);
    assert_int_equal(m1.calls, 3);
    assert_int_equal(m2.calls, 3);
    assert_int_equal(m3.calls, 3);
    assert_int_equal(r_multi, 1);

    // Misuse: a condition attaches once; combinators consume their operands.
    cnd z = {0, true};
    weft_condition *k = mkcond(w, s, "z", &z);
    assert_int_equal(weft_schedule_add_condition(s, multi, k), WEFT_OK);
    assert_int_equal(weft_schedule_add_condition(s, multi, k), WEFT_ERR_ALREADY_EXISTS);
    assert_null(weft_condition_not(s, k));
    cnd z2 = {0, true};
    weft_condition *k2 = mkcond(w, s, "z2", &z2);
    assert_non_null(weft_condition_not(s, k2));
    assert_int_equal(weft_schedule_add_condition(s, multi, k2), WEFT_ERR_ALREADY_EXISTS);
    weft_schedule *other = mksched(w, "other");
    cnd zo = {0, true};
    assert_int_equal(weft_schedule_add_condition(s, multi, mkcond(w, other, "zo", &zo)),
                     WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_schedule_add_condition(s, multi, NULL), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_schedule_add_condition(s, 999, mkcond(w, s, "z3", &zo)),
                     WEFT_ERR_INVALID_ARG);
}

// A system writing resource R (value +1) when *user is true.
static void sys_write_res(weft_system_ctx *ctx, void *user)
{
    bool *on = ((void **)user)[0];
    weft_component r = *(weft_component *)((void **)user)[1];
    if (*on) {
        int32_t *v = weft_system_resource_mut(ctx, r, sizeof(int32_t));
        BODY_CHECK(v != NULL);
        if (v) {
            (*v)++;
        }
    }
}

static void condition_builtins(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component res = tw_comp(w, "Res", sizeof(int32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_component res2 = tw_comp(w, "Res2", sizeof(int32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_message_desc md;
    memset(&md, 0, sizeof md);
    md.name = "Ping";
    md.size = sizeof(int32_t);
    weft_message_type ping = weft_message_register(w, &md);
    assert_true(ping != 0);

    weft_schedule *s = mksched(w, "builtins");
    int r_once = 0, r_changed = 0, r_exists = 0, r_msg = 0;
    gated_counter(w, s, "once", &r_once, weft_condition_run_once(s));
    weft_node gc = gated_counter(w, s, "changed", &r_changed,
                                 weft_condition_resource_changed(s, res));
    gated_counter(w, s, "exists", &r_exists, weft_condition_resource_exists(s, res2));
    gated_counter(w, s, "on_msg", &r_msg, weft_condition_on_message(s, ping));
    bool write_on = false;
    void *wu[2] = {&write_on, &res};
    sysb b;
    sb_init(&b, "writer", sys_write_res, wu);
    sb_res(&b, res, WEFT_ACCESS_WRITE);
    weft_node wr = sb_add(w, s, &b);
    assert_int_equal(weft_schedule_add_order(s, gc, wr, 0), WEFT_OK);

    // Run 1: no resource, no message.
    RUN(w, s);
    assert_int_equal(r_once, 1);
    assert_int_equal(r_changed, 0);
    assert_int_equal(r_exists, 0);
    assert_int_equal(r_msg, 0);
    // Run 2: both resources inserted, one message.
    int32_t zero = 0;
    assert_int_equal(weft_resource_insert(w, res, &zero, sizeof zero), WEFT_OK);
    assert_int_equal(weft_resource_insert(w, res2, &zero, sizeof zero), WEFT_OK);
    assert_int_equal(weft_message_write(w, ping, &zero, sizeof zero), WEFT_OK);
    RUN(w, s);
    assert_int_equal(r_once, 1);
    assert_int_equal(r_changed, 1);
    assert_int_equal(r_exists, 1);
    assert_int_equal(r_msg, 1);
    // Run 3: nothing new (the message was consumed by the condition).
    RUN(w, s);
    assert_int_equal(r_changed, 1);
    assert_int_equal(r_exists, 2);
    assert_int_equal(r_msg, 1);
    // Run 4: written from outside; two messages.
    int32_t *v = weft_resource_get_mut(w, res, sizeof(int32_t));
    assert_non_null(v);
    *v = 5;
    assert_int_equal(weft_message_write(w, ping, &zero, sizeof zero), WEFT_OK);
    assert_int_equal(weft_message_write(w, ping, &zero, sizeof zero), WEFT_OK);
    RUN(w, s);
    assert_int_equal(r_changed, 2);
    assert_int_equal(r_msg, 2);
    // Run 5: the writer system (after the gated one) writes it...
    write_on = true;
    RUN(w, s);
    assert_int_equal(r_changed, 2);
    write_on = false;
    // ... so run 6 sees it changed; run 7 does not.
    RUN(w, s);
    assert_int_equal(r_changed, 3);
    RUN(w, s);
    assert_int_equal(r_changed, 3);
    assert_int_equal(*(const int32_t *)weft_resource_get(w, res, sizeof(int32_t)), 6);
    // Removed: exists turns false.
    assert_int_equal(weft_resource_remove(w, res2), WEFT_OK);
    RUN(w, s);
    assert_int_equal(r_exists, 6); // runs 2..7
    assert_int_equal(r_once, 1);
}

// Counts runs and records the system's last and this run ticks.
typedef struct seen_res {
    int runs;
    uint32_t last_run, this_run;
} seen_res;

static void sys_seen_res(weft_system_ctx *ctx, void *user)
{
    seen_res *sr = user;
    sr->last_run = weft_system_last_run(ctx);
    sr->this_run = weft_system_this_run(ctx);
    sr->runs++;
}

// Did resource r change since the system's recorded last run?
static bool res_newer(weft_world *w, weft_component r, const seen_res *sr)
{
    weft_ticks t;
    assert_int_equal(weft_resource_get_ticks(w, r, &t), WEFT_OK);
    return weft_tick_is_newer(t.changed, sr->last_run, sr->this_run);
}

// The periodic clamp covers the last-run ticks of systems and conditions.
// A resource_changed condition behind a short-circuited AND, and a system
// gated off, wait more than 2^32 ticks; the resource changes shortly before
// the tick counter passes their last run again. Unclamped, the wrapped age
// of their last run looked younger than the change, and both missed it.
static void clamp_covers_system_and_condition_last_runs(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component res = tw_comp(w, "Res", sizeof(int32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    int32_t zero = 0;
    assert_int_equal(weft_resource_insert(w, res, &zero, sizeof zero), WEFT_OK);
    weft_schedule *s = mksched(w, "long_pause");
    cnd gate = {0, true};
    int r_changed = 0;
    gated_counter(w, s, "changed", &r_changed,
                  weft_condition_and(s, mkcond(w, s, "gate", &gate),
                                     weft_condition_resource_changed(s, res)));
    cnd gate2 = {0, true};
    seen_res sr = {0, 0, 0};
    sysb b;
    sb_init(&b, "seen", sys_seen_res, &sr);
    sb_res(&b, res, WEFT_ACCESS_READ);
    weft_node seen_node = sb_add(w, s, &b);
    assert_int_equal(
        weft_schedule_add_condition(s, seen_node, mkcond(w, s, "gate2", &gate2)), WEFT_OK);

    RUN(w, s); // both see the insert
    assert_int_equal(r_changed, 1);
    assert_int_equal(sr.runs, 1);
    assert_true(res_newer(w, res, &sr));
    uint32_t t0 = weft_world_change_tick(w);

    // Gates closed: time passes in clamp-sized steps, the world clamps.
    gate.result = false;
    gate2.result = false;
    for (uint32_t k = 1; k <= 8; k++) {
        weft_world_set_change_tick(w, t0 + k * WEFT_CHECK_TICK_THRESHOLD);
        RUN(w, s);
    }
    // The resource changes 1000 ticks before t0 + 2^32 ...
    weft_world_set_change_tick(w, t0 - 1000u);
    RUN(w, s);
    int32_t *v = weft_resource_get_mut(w, res, sizeof(int32_t));
    assert_non_null(v);
    *v = 1;
    // ... and the gates open 500 ticks after it.
    weft_world_set_change_tick(w, t0 + 500u);
    gate.result = true;
    gate2.result = true;
    RUN(w, s);
    assert_int_equal(r_changed, 2);
    assert_int_equal(sr.runs, 2);
    assert_true(res_newer(w, res, &sr));
    // Nothing changed since: both say so.
    RUN(w, s);
    assert_int_equal(r_changed, 2);
    assert_int_equal(sr.runs, 3);
    assert_false(res_newer(w, res, &sr));
}

// ---- change detection across systems ----

// Counts the rows its query 0 yields (filters applied with this run's
// ticks) and remembers the entities.
typedef struct rows {
    size_t size; // field 0's size (0: vec2)
    int64_t last;
    weft_entity ents[64];
    int runs;
    uint32_t this_run[8], last_run[8];
} rows;

static void sys_rows(weft_system_ctx *ctx, void *user)
{
    rows *r = user;
    if (r->runs < 8) {
        r->this_run[r->runs] = weft_system_this_run(ctx);
        r->last_run[r->runs] = weft_system_last_run(ctx);
    }
    r->runs++;
    weft_iter it;
    BODY_CHECK(weft_system_iter(ctx, 0, &it) == WEFT_OK);
    int64_t n = 0;
    while (weft_iter_next(&it)) {
        const weft_entity *es = weft_iter_entities(&it);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            if (n < 64) {
                r->ents[n] = es[i];
            }
            n++;
        }
        // Reading a field does not mark anything.
        BODY_CHECK(weft_iter_field(&it, 0, r->size ? r->size : sizeof(vec2)) != NULL);
    }
    r->last = n;
}

// Touches entities through query 0 (write Pos): get on `peek`, get_mut on
// `poke` (either may be 0).
typedef struct toucher {
    weft_entity peek, poke;
    uint32_t this_run;
} toucher;

static void sys_touch(weft_system_ctx *ctx, void *user)
{
    toucher *t = user;
    t->this_run = weft_system_this_run(ctx);
    if (t->peek) {
        const vec2 *p = weft_system_get(ctx, 0, t->peek, 0, sizeof(vec2));
        BODY_CHECK(p != NULL);
    }
    if (t->poke) {
        vec2 *p = weft_system_get_mut(ctx, 0, t->poke, 0, sizeof(vec2));
        BODY_CHECK(p != NULL);
        if (p) {
            p->x++;
        }
    }
}

static weft_node add_rows(weft_world *w, weft_schedule *s, const char *name, weft_component c,
                          uint32_t filter, rows *r)
{
    sysb b;
    sb_init(&b, name, sys_rows, r);
    sb_q1(&b, c, WEFT_ACCESS_READ, filter);
    return sb_add(w, s, &b);
}

static void change_detection_across_systems(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);
    weft_entity e[10];
    for (int i = 0; i < 10; i++) {
        vec2 p = {i, 0};
        weft_value v = {c.pos, sizeof p, &p};
        e[i] = weft_spawn_with(w, &v, 1);
        assert_true(e[i] != 0);
    }
    weft_schedule *s = mksched(w, "changes");
    rows added = {0}, before = {0}, after = {0}, gated = {0};
    toucher t = {0, 0, 0};
    weft_node n_added = add_rows(w, s, "added", c.pos, WEFT_FILTER_ADDED, &added);
    weft_node n_before = add_rows(w, s, "changed_before", c.pos, WEFT_FILTER_CHANGED, &before);
    sysb b;
    sb_init(&b, "toucher", sys_touch, &t);
    sb_q1(&b, c.pos, WEFT_ACCESS_WRITE, 0);
    weft_node n_touch = sb_add(w, s, &b);
    weft_node n_after = add_rows(w, s, "changed_after", c.pos, WEFT_FILTER_CHANGED, &after);
    weft_node n_gated = add_rows(w, s, "changed_gated", c.pos, WEFT_FILTER_CHANGED, &gated);
    weft_node ch[3] = {n_before, n_touch, n_after};
    assert_int_equal(weft_schedule_add_chain(s, ch, 3, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, n_touch, n_gated, 0), WEFT_OK);
    (void)n_added;
    cnd gc = {0, true};
    assert_int_equal(weft_schedule_add_condition(s, n_gated, mkcond(w, s, "gate", &gc)), WEFT_OK);

    // Run 1: the first run of every system sees everything as added/changed.
    t.poke = e[3];
    RUN(w, s);
    assert_int_equal(added.last, 10);
    assert_int_equal(before.last, 10);
    assert_int_equal(after.last, 10);
    assert_int_equal(gated.last, 10);
    // Ticks: per system, increasing along the order.
    assert_true(weft_tick_is_newer(t.this_run, before.this_run[0], t.this_run));
    assert_true(weft_tick_is_newer(after.this_run[0], t.this_run, after.this_run[0]));

    // Run 2: the toucher writes e[5] with get_mut and only peeks at e[6].
    // changed_after sees exactly e[5] (a write earlier in the same run);
    // changed_before sees e[3] (last run's write, after it ran).
    t.poke = e[5];
    t.peek = e[6];
    gc.result = false; // changed_gated skipped: keeps its last-run tick
    RUN(w, s);
    assert_int_equal(added.last, 0);
    assert_int_equal(after.last, 1);
    assert_true(after.ents[0] == e[5]);
    assert_int_equal(before.last, 1);
    assert_true(before.ents[0] == e[3]);
    assert_int_equal(gated.runs, 1);
    weft_ticks tk;
    assert_int_equal(weft_get_ticks(w, e[5], c.pos, &tk), WEFT_OK);
    assert_int_equal(tk.changed, t.this_run);
    assert_int_equal(after.last_run[1], after.this_run[0]);

    // Run 3: nothing written; the gated reader, skipped in run 2, now sees
    // the writes of runs 1 (after it ran) and 2: e[3] and e[5]. Two new
    // entities show up as added.
    t.poke = 0;
    t.peek = e[7];
    gc.result = true;
    weft_entity n1 = weft_spawn(w), n2 = weft_spawn(w);
    vec2 p = {0, 0};
    assert_int_equal(weft_insert(w, n1, c.pos, &p, sizeof p), WEFT_OK);
    assert_int_equal(weft_insert(w, n2, c.pos, &p, sizeof p), WEFT_OK);
    RUN(w, s);
    assert_int_equal(after.last, 2); // the two new ones (added counts as changed)
    assert_int_equal(added.last, 2);
    assert_int_equal(before.last, 3); // e[5] (after it ran in run 2), n1, n2
    // gated ran in run 1 after e[3]'s write; it sees e[5], n1 and n2.
    assert_int_equal(gated.last, 3);
    bool saw5 = false, saw_n1 = false, saw_n2 = false;
    for (int i = 0; i < gated.last; i++) {
        assert_true(gated.ents[i] != e[3]);
        saw5 |= gated.ents[i] == e[5];
        saw_n1 |= gated.ents[i] == n1;
        saw_n2 |= gated.ents[i] == n2;
    }
    assert_true(saw5 && saw_n1 && saw_n2);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- command order ----

typedef struct olog {
    int v[64];
    int n;
} olog;

static void cmd_log(weft_world *w, void *payload, void *user)
{
    (void)w;
    olog *l = user;
    if (l->n < 64) {
        l->v[l->n++] = *(const int *)payload;
    }
}

// Records custom commands logging base+1, base+2, ... base+count.
typedef struct recorder {
    olog *log;
    int base, count;
} recorder;

static void sys_record(weft_system_ctx *ctx, void *user)
{
    recorder *r = user;
    weft_commands *cmds = weft_system_commands(ctx);
    for (int i = 1; i <= r->count; i++) {
        int v = r->base + i;
        BODY_CHECK(weft_cmd_custom(cmds, cmd_log, &v, sizeof v, NULL, r->log) == WEFT_OK);
    }
}

static void command_order(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);
    olog log = {{0}, 0};
    recorder r1 = {&log, 10, 3}, r2 = {&log, 20, 2};

    // Unordered: applied in schedule order, FIFO within each.
    weft_schedule *s = mksched(w, "unordered");
    sysb b;
    sb_init(&b, "rec1", sys_record, &r1);
    b.d.flags = WEFT_SYSTEM_COMMANDS;
    weft_node a = sb_add(w, s, &b);
    sb_init(&b, "rec2", sys_record, &r2);
    b.d.flags = WEFT_SYSTEM_COMMANDS;
    weft_node bb = sb_add(w, s, &b);
    RUN(w, s);
    assert_int_equal(log.n, 5);
    static const int fwd[5] = {11, 12, 13, 21, 22}, rev[5] = {21, 22, 11, 12, 13};
    const int *want = weft_schedule_position(s, a) < weft_schedule_position(s, bb) ? fwd : rev;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(log.v[i], want[i]);
    }
    // Ordered the other way: rec2's commands first.
    log.n = 0;
    s = mksched(w, "ordered");
    sb_init(&b, "rec1", sys_record, &r1);
    a = sb_add(w, s, &b);
    sb_init(&b, "rec2", sys_record, &r2);
    bb = sb_add(w, s, &b);
    assert_int_equal(weft_schedule_add_order(s, bb, a, 0), WEFT_OK);
    RUN(w, s);
    assert_int_equal(log.n, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(log.v[i], rev[i]);
    }

    // A spawned entity shows up in a later system's Added query in the same
    // run, after the sync point.
    s = mksched(w, "spawn_added");
    spawner sp = {c.mark, 1, 0};
    rows ad = {0};
    ad.size = sizeof(uint32_t);
    weft_node sn = add_spawner(w, s, "spawner", &sp);
    weft_node rn = add_rows(w, s, "added_marks", c.mark, WEFT_FILTER_ADDED, &ad);
    assert_int_equal(weft_schedule_add_order(s, sn, rn, 0), WEFT_OK);
    RUN(w, s);
    assert_int_equal(ad.last, 1);
    RUN(w, s);
    assert_int_equal(ad.last, 1); // only this run's spawn
    assert_int_equal(count_with(w, c.mark), 2);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- the final apply ----

static void final_apply_and_apply_pending(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);

    // On (default): the last system's commands are visible after the run.
    weft_schedule *s = mksched(w, "final_on");
    spawner sp = {c.mark, 2, 0};
    add_spawner(w, s, "spawner", &sp);
    RUN(w, s);
    assert_int_equal(count_with(w, c.mark), 2);

    // Off: they stay queued until weft_schedule_apply_pending.
    s = mksched(w, "final_off");
    assert_int_equal(weft_schedule_set_apply_final(s, false), WEFT_OK);
    add_spawner(w, s, "spawner", &sp);
    RUN(w, s);
    assert_int_equal(count_with(w, c.mark), 2);
    RUN(w, s);
    assert_int_equal(count_with(w, c.mark), 2);
    assert_int_equal(weft_schedule_apply_pending(s), WEFT_OK);
    assert_int_equal(count_with(w, c.mark), 6);
    assert_int_equal(weft_schedule_apply_pending(s), WEFT_OK); // nothing left
    assert_int_equal(count_with(w, c.mark), 6);

    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// Final apply off, with a sync point: what was recorded after the last sync
// point of run 1 is applied at run 2's first sync point (weft.h,
// weft_schedule_set_apply_final).
static void final_apply_off_carries_to_next_sync(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_schedule *s;
    weft_component m2 = tw_comp(w, "Mark2", sizeof(uint32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    s = mksched(w, "final_off_sync");
    assert_int_equal(weft_schedule_set_apply_final(s, false), WEFT_OK);
    spawner first = {m2, 1, 0}, last = {m2, 1, 1000};
    seen sn = {0, 0};
    weft_node a = add_spawner(w, s, "first", &first);
    weft_node r = add_seen(w, s, "counter", m2, &sn);
    weft_node z = add_spawner(w, s, "last", &last);
    weft_node ch[3] = {a, r, z};
    assert_int_equal(weft_schedule_add_chain(s, ch, 3, WEFT_ORDER_DEFAULT), WEFT_OK);
    RUN(w, s);
    assert_int_equal(sn.last, 1);
    assert_int_equal(count_with(w, m2), 1);
    RUN(w, s);
    if (sn.last != 3) {
        fail_msg("run 2's sync point let the counter see %lld entities, expected 3 (run 1's "
                 "queued \"last\" spawn + both \"first\" spawns)", (long long)sn.last);
    }
    assert_int_equal(count_with(w, m2), 3);
    assert_int_equal(weft_schedule_apply_pending(s), WEFT_OK);
    assert_int_equal(count_with(w, m2), 4);
    // Destroying a schedule discards what is still queued.
    RUN(w, s);
    assert_int_equal(count_with(w, m2), 5); // "last" of run 3 still queued
    assert_int_equal(weft_schedule_destroy(s), WEFT_OK);
    assert_int_equal(count_with(w, m2), 5);
    assert_null(weft_schedule_lookup(w, "final_off_sync"));
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- messages between systems ----

typedef struct msgsys {
    weft_message_type type;
    int32_t next;      // writer: next value
    int per_run;       // writer: messages per run
    int32_t got[128];  // reader: values read, in order
    int ngot;
} msgsys;

static void sys_msg_write(weft_system_ctx *ctx, void *user)
{
    msgsys *m = user;
    for (int i = 0; i < m->per_run; i++) {
        int32_t v = ++m->next;
        BODY_CHECK(weft_system_message_write(ctx, m->type, &v, sizeof v) == WEFT_OK);
    }
}

static void sys_msg_read(weft_system_ctx *ctx, void *user)
{
    msgsys *m = user;
    const int32_t *v;
    while ((v = weft_system_message_read(ctx, m->type, sizeof *v)) != NULL) {
        if (m->ngot < 128) {
            m->got[m->ngot++] = *v;
        }
    }
}

static void messages_between_systems(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_message_desc md;
    memset(&md, 0, sizeof md);
    md.name = "Hit";
    md.size = sizeof(int32_t);
    weft_message_type mt = weft_message_register(w, &md);
    assert_true(mt != 0);

    weft_schedule *s = mksched(w, "msgs");
    msgsys wr = {mt, 0, 3, {0}, 0}, r0 = {mt, 0, 0, {0}, 0};
    msgsys r1 = {mt, 0, 0, {0}, 0}, r2 = {mt, 0, 0, {0}, 0};
    sysb b;
    sb_init(&b, "early_reader", sys_msg_read, &r0);
    sb_msg(&b, mt, WEFT_ACCESS_READ);
    weft_node n0 = sb_add(w, s, &b);
    sb_init(&b, "writer", sys_msg_write, &wr);
    sb_msg(&b, mt, WEFT_ACCESS_WRITE);
    weft_node nw = sb_add(w, s, &b);
    sb_init(&b, "reader1", sys_msg_read, &r1);
    sb_msg(&b, mt, WEFT_ACCESS_READ);
    weft_node n1 = sb_add(w, s, &b);
    sb_init(&b, "reader2", sys_msg_read, &r2);
    sb_msg(&b, mt, WEFT_ACCESS_READ);
    weft_node n2 = sb_add(w, s, &b);
    assert_int_equal(weft_schedule_add_order(s, n0, nw, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, nw, n1, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, nw, n2, 0), WEFT_OK);
    for (int frame = 1; frame <= 5; frame++) {
        weft_messages_update(w); // once per frame, as an app does in First
        expect_ok(w, weft_schedule_run(s, 0.01), "weft_schedule_run");
        assert_int_equal(r1.ngot, 3 * frame);
        assert_int_equal(r2.ngot, 3 * frame);
        assert_int_equal(r0.ngot, 3 * (frame - 1)); // last frame's messages
    }
    for (int i = 0; i < 15; i++) {
        assert_int_equal(r1.got[i], i + 1);
        assert_int_equal(r2.got[i], i + 1);
    }
    for (int i = 0; i < 12; i++) {
        assert_int_equal(r0.got[i], i + 1);
    }
    // The two readers do not conflict with each other (reads only).
    assert_int_equal(find_amb(s, n1, n2, NULL), -1);
}

// ---- failures and context misuse ----

typedef struct failer {
    weft_status st;
    const char *msg;
    bool on;
    int runs;
    weft_component spawn; // also records a spawn of this (0: none)
} failer;

static void sys_fail(weft_system_ctx *ctx, void *user)
{
    failer *fl = user;
    fl->runs++;
    if (fl->spawn) {
        uint32_t v = 7;
        weft_value val = {fl->spawn, sizeof v, &v};
        BODY_CHECK(weft_cmd_spawn(weft_system_commands(ctx), &val, 1) != 0);
    }
    if (fl->on) {
        weft_system_fail(ctx, fl->st, fl->msg);
    }
}

static void system_failure_reported(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);
    weft_schedule *s = mksched(w, "failing");
    int r[4] = {0, 0, 0, 0};
    sysb b;
    sb_init(&b, "ok0", sys_count, &r[0]);
    weft_node n0 = sb_add(w, s, &b);
    failer fl = {WEFT_ERR_NOT_FOUND, "boom 42", true, 0, c.mark};
    sb_init(&b, "exploder", sys_fail, &fl);
    b.d.flags = WEFT_SYSTEM_COMMANDS;
    weft_node nf = sb_add(w, s, &b);
    failer fl2 = {WEFT_ERR_CAPACITY, "second", true, 0, 0};
    sb_init(&b, "exploder2", sys_fail, &fl2);
    weft_node nf2 = sb_add(w, s, &b);
    sb_init(&b, "ok1", sys_count, &r[1]);
    weft_node n1 = sb_add(w, s, &b);
    sb_init(&b, "ok2", sys_count, &r[2]);
    sb_add(w, s, &b);
    assert_int_equal(weft_schedule_add_order(s, n0, nf, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, nf, n1, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, nf, nf2, 0), WEFT_OK);

    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_ERR_NOT_FOUND);
    const char *msg = weft_last_error(w);
    assert_int_equal(weft_last_status(w), WEFT_ERR_NOT_FOUND);
    if (!tw_contains(msg, "exploder") || !tw_contains(msg, "boom 42")) {
        fail_msg("error message \"%s\" should name the system and its message", msg);
    }
    assert_int_equal(r[0], 1);
    assert_int_equal(r[1], 1); // successors of the failing system still run
    assert_int_equal(r[2], 1);
    assert_int_equal(fl.runs, 1);
    assert_int_equal(fl2.runs, 1);
    assert_int_equal(count_with(w, c.mark), 1); // its commands were applied
    weft_system_stats st;
    assert_int_equal(weft_schedule_system_stats(s, nf, &st), WEFT_OK);
    assert_int_equal(st.runs, 1);
    assert_int_equal(st.failures, 1);
    assert_int_equal(weft_schedule_system_stats(s, nf2, &st), WEFT_OK);
    assert_int_equal(st.failures, 1);

    // Recovered: the next run succeeds.
    fl.on = false;
    fl2.on = false;
    weft_clear_error(w);
    RUN(w, s);
    assert_int_equal(r[1], 2);
    assert_int_equal(weft_schedule_system_stats(s, nf, &st), WEFT_OK);
    assert_int_equal(st.failures, 1);
    assert_int_equal(st.runs, 2);
    // A NULL message is allowed.
    fl2.on = true;
    fl2.msg = NULL;
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_ERR_CAPACITY);
    assert_true(tw_contains(weft_last_error(w), "exploder2"));
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

typedef enum misuse_kind {
    MIS_RES_UNDECLARED,
    MIS_RES_MUT_READ,
    MIS_GET_MUT_READ,
    MIS_MSG_UNDECLARED,
    MIS_ITER_RANGE,
} misuse_kind;

typedef struct misuser {
    misuse_kind kind;
    weft_component c;
    weft_message_type mt;
    weft_entity e;
    bool got_null;       // the bad access returned NULL / an error
    weft_status st;
    bool world_null;     // weft_system_world gave NULL
    bool local_null;     // weft_system_local gave NULL
} misuser;

static void sys_misuse(weft_system_ctx *ctx, void *user)
{
    misuser *m = user;
    switch (m->kind) {
    case MIS_RES_UNDECLARED:
        m->got_null = weft_system_resource(ctx, m->c, sizeof(int32_t)) == NULL;
        break;
    case MIS_RES_MUT_READ:
        m->got_null = weft_system_resource_mut(ctx, m->c, sizeof(int32_t)) == NULL;
        break;
    case MIS_GET_MUT_READ:
        m->got_null = weft_system_get_mut(ctx, 0, m->e, 0, sizeof(vec2)) == NULL;
        break;
    case MIS_MSG_UNDECLARED: {
        int32_t v = 1;
        m->st = weft_system_message_write(ctx, m->mt, &v, sizeof v);
        m->got_null = m->st != WEFT_OK;
        break;
    }
    case MIS_ITER_RANGE: {
        weft_iter it;
        m->st = weft_system_iter(ctx, 5, &it);
        m->got_null = m->st != WEFT_OK;
        break;
    }
    }
    m->world_null = weft_system_world(ctx) == NULL;
    m->local_null = weft_system_local(ctx) == NULL;
}

// A context call returns its own status, not an earlier one of the same
// system run: weft_system_world (WRONG_PHASE for a normal system) followed
// by weft_system_iter on a query that does not exist (INVALID_ARG).
typedef struct two_calls {
    bool world_null;
    weft_status iter_st;
    int64_t count;
} two_calls;

static void sys_two_calls(weft_system_ctx *ctx, void *user)
{
    two_calls *t = user;
    t->world_null = weft_system_world(ctx) == NULL;
    weft_iter it;
    t->iter_st = weft_system_iter(ctx, 3, &it);
    t->count = weft_system_count(ctx, 0);
}

static void context_call_returns_its_own_status(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);
    vec2 p = {1, 2};
    weft_value v = {c.pos, sizeof p, &p};
    assert_true(weft_spawn_with(w, &v, 1) != 0);
    weft_schedule *s = mksched(w, "two_calls");
    two_calls t = {false, WEFT_OK, -1};
    sysb b;
    sb_init(&b, "caller", sys_two_calls, &t);
    sb_q1(&b, c.pos, WEFT_ACCESS_READ, 0);
    sb_add(w, s, &b);
    (void)weft_schedule_run(s, 0.0);
    assert_true(t.world_null);
    if (t.iter_st != WEFT_ERR_INVALID_ARG) {
        fail_msg("weft_system_iter(query 3 of 1) returned %s, expected WEFT_ERR_INVALID_ARG",
                 weft_status_name(t.iter_st));
    }
    assert_int_equal(t.count, 1); // the context still works
}

static void context_misuse_fails_the_system(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);
    weft_component secret = tw_comp(w, "Secret", sizeof(int32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_component open = tw_comp(w, "Open", sizeof(int32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    int32_t zero = 0;
    assert_int_equal(weft_resource_insert(w, secret, &zero, sizeof zero), WEFT_OK);
    assert_int_equal(weft_resource_insert(w, open, &zero, sizeof zero), WEFT_OK);
    vec2 p = {1, 2};
    weft_value v = {c.pos, sizeof p, &p};
    weft_entity e = weft_spawn_with(w, &v, 1);
    weft_message_desc md;
    memset(&md, 0, sizeof md);
    md.name = "Undeclared";
    md.size = sizeof(int32_t);
    weft_message_type mt = weft_message_register(w, &md);
    assert_true(mt != 0);

    static const struct {
        misuse_kind kind;
        const char *sys;
        const char *needle; // in the error message besides the system name
        weft_status want;
    } cases[] = {
        {MIS_RES_UNDECLARED, "sneaky_res", "Secret", WEFT_ERR_ACCESS_VIOLATION},
        {MIS_RES_MUT_READ, "sneaky_res_mut", "Open", WEFT_ERR_ACCESS_VIOLATION},
        {MIS_GET_MUT_READ, "sneaky_get_mut", "Pos", WEFT_ERR_ACCESS_VIOLATION},
        {MIS_MSG_UNDECLARED, "sneaky_msg", "message", WEFT_ERR_ACCESS_VIOLATION},
        {MIS_ITER_RANGE, "bad_iter", NULL, WEFT_ERR_INVALID_ARG},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        weft_schedule *s = mksched(w, cases[i].sys);
        misuser m;
        memset(&m, 0, sizeof m);
        m.kind = cases[i].kind;
        m.c = cases[i].kind == MIS_RES_UNDECLARED ? secret : open;
        m.mt = mt;
        m.e = e;
        int after = 0;
        sysb b;
        sb_init(&b, cases[i].sys, sys_misuse, &m);
        sb_q1(&b, c.pos, WEFT_ACCESS_READ, 0);
        sb_res(&b, open, WEFT_ACCESS_READ);
        weft_node n = sb_add(w, s, &b);
        sb_init(&b, "bystander", sys_count, &after);
        weft_node n2 = sb_add(w, s, &b);
        assert_int_equal(weft_schedule_add_order(s, n, n2, 0), WEFT_OK);
        weft_clear_error(w);
        weft_status st = weft_schedule_run(s, 0.0);
        if (cases[i].kind == MIS_ITER_RANGE) {
            // A bad argument is reported to the caller; the run need not fail.
            assert_true(m.got_null);
            assert_int_equal(m.st, WEFT_ERR_INVALID_ARG);
        } else {
            if (st != cases[i].want) {
                fail_msg("%s: run returned %s, expected %s (%s)", cases[i].sys,
                         weft_status_name(st), weft_status_name(cases[i].want),
                         weft_last_error(w));
            }
            assert_true(m.got_null);
            const char *msg = weft_last_error(w);
            if (!tw_contains(msg, cases[i].sys) || !tw_contains(msg, cases[i].needle)) {
                fail_msg("%s: error \"%s\" should name the system and \"%s\"", cases[i].sys,
                         msg, cases[i].needle);
            }
            weft_system_stats sst;
            assert_int_equal(weft_schedule_system_stats(s, n, &sst), WEFT_OK);
            assert_int_equal(sst.failures, 1);
        }
        assert_true(m.world_null); // not exclusive
        assert_true(m.local_null); // no local declared
        assert_int_equal(after, 1);
        assert_int_equal(weft_schedule_destroy(s), WEFT_OK);
    }
    // Nothing was written through the refused pointers.
    assert_int_equal(*(const int32_t *)weft_resource_get(w, secret, sizeof(int32_t)), 0);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// An exclusive system: gets the world, spawns directly; may run another
// schedule but not its own.
typedef struct excl {
    weft_component c;
    weft_world *world;
    weft_schedule *self, *other;
    weft_status self_run, other_run, self_destroy;
    bool world_ok;
    bool nested; // try the nested runs
} excl;

static void sys_exclusive(weft_system_ctx *ctx, void *user)
{
    excl *x = user;
    weft_world *w = weft_system_world(ctx);
    x->world_ok = w == x->world;
    if (!w) {
        return;
    }
    uint32_t v = 99;
    weft_value val = {x->c, sizeof v, &v};
    BODY_CHECK(weft_spawn_with(w, &val, 1) != 0);
    if (!x->nested) {
        return;
    }
    x->self_run = weft_schedule_run(x->self, 0.0);
    x->other_run = weft_schedule_run(x->other, 0.0);
    x->self_destroy = weft_schedule_destroy(x->self);
}

static void exclusive_system_world_access(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);
    weft_schedule *s = mksched(w, "main");
    weft_schedule *o = mksched(w, "nested");
    int nested_runs = 0;
    sysb b;
    sb_init(&b, "nested_counter", sys_count, &nested_runs);
    sb_add(w, o, &b);
    excl x = {c.mark, w, s, o, WEFT_OK, WEFT_ERR_INTERNAL, WEFT_OK, false, false};
    sb_init(&b, "exclusive", sys_exclusive, &x);
    b.d.flags = WEFT_SYSTEM_EXCLUSIVE;
    weft_node ne = sb_add(w, s, &b);
    seen sn = {0, 0};
    weft_node nc = add_seen(w, s, "successor", c.mark, &sn);
    assert_int_equal(weft_schedule_add_order(s, ne, nc, 0), WEFT_OK);
    RUN(w, s);
    assert_true(x.world_ok);
    assert_int_equal(sn.last, 1); // the direct spawn, seen by the successor
    assert_int_equal(nested_runs, 0);
    // Nested: another schedule runs, its own schedule is busy.
    x.nested = true;
    weft_status st = weft_schedule_run(s, 0.0);
    assert_true(st == WEFT_OK || st == WEFT_ERR_WRONG_PHASE);
    assert_int_equal(x.self_run, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(x.other_run, WEFT_OK);
    assert_int_equal(x.self_destroy, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(nested_runs, 1);
    assert_int_equal(sn.last, 2);
    assert_non_null(weft_schedule_lookup(w, "main"));
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- schedule API misuse ----

static void schedule_api_misuse(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);

    assert_null(weft_schedule_create(NULL, "x"));
    assert_null(weft_schedule_create(w, NULL));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    assert_null(weft_schedule_create(w, ""));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    weft_schedule *s = mksched(w, "update");
    assert_null(weft_schedule_create(w, "update"));
    tw_expect_error(f, WEFT_ERR_ALREADY_EXISTS, "update");
    assert_true(weft_schedule_lookup(w, "update") == s);
    assert_null(weft_schedule_lookup(w, "nope"));

    // Not built yet.
    assert_int_equal(weft_schedule_position(s, 1), -1);
    assert_int_equal(weft_schedule_sync_count(s), -1);
    assert_int_equal(weft_schedule_ambiguity_count(s), -1);
    assert_int_equal(weft_schedule_dot(s, NULL, 0), 0);
    assert_int_equal(weft_schedule_build_count(s), 0);

    sysb b;
    sb_init(&b, "sys", sys_nop, NULL);
    assert_int_equal(weft_schedule_add_system(NULL, &b.d), WEFT_NODE_NONE);
    assert_int_equal(weft_schedule_add_system(s, NULL), WEFT_NODE_NONE);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);
    // Each malformed descriptor is INVALID_ARG.
    for (int k = 0; k < 9; k++) {
        sb_init(&b, "sys", sys_nop, NULL);
        switch (k) {
        case 0: b.d._start_canary = 1; break;
        case 1: b.d._end_canary = 1; break;
        case 2: b.d.name = NULL; break;
        case 3: b.d.fn = NULL; break;
        case 4: b.d.flags = 1u << 12; break;
        case 5: b.d.local.size = 8; b.d.local.align = 3; break;
        case 6: sb_res(&b, c.health, WEFT_ACCESS_NUM); break;
        case 7: sb_q1(&b, c.pos, WEFT_ACCESS_READ, 0); break;
        case 8: break;
        }
        sb_finish(&b);
        if (k == 7) {
            b.d.query_count = WEFT_MAX_SYSTEM_QUERIES + 1;
        }
        if (k == 8) {
            b.d.queries = NULL;
            b.d.query_count = 1;
        }
        assert_int_equal(weft_schedule_add_system(s, &b.d), WEFT_NODE_NONE);
        if (weft_last_status(w) != WEFT_ERR_INVALID_ARG) {
            fail_msg("malformed descriptor %d: %s, expected WEFT_ERR_INVALID_ARG", k,
                     weft_status_name(weft_last_status(w)));
        }
    }
    // Unknown ids.
    sb_init(&b, "sys", sys_nop, NULL);
    sb_res(&b, 9999, WEFT_ACCESS_READ);
    assert_int_equal(sb_try(s, &b), WEFT_NODE_NONE);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, NULL);
    sb_init(&b, "sys", sys_nop, NULL);
    sb_msg(&b, 777, WEFT_ACCESS_READ);
    assert_int_equal(sb_try(s, &b), WEFT_NODE_NONE);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, NULL);
    sb_init(&b, "sys", sys_nop, NULL);
    sb_q1(&b, 9999, WEFT_ACCESS_READ, 0);
    assert_int_equal(sb_try(s, &b), WEFT_NODE_NONE);
    tw_expect_error(f, WEFT_ERR_UNKNOWN_COMPONENT, NULL);
    assert_int_equal(weft_schedule_node_count(s), 0);

    sb_init(&b, "a", sys_nop, NULL);
    weft_node a = sb_add(w, s, &b);
    sb_init(&b, "b", sys_nop, NULL);
    weft_node bn = sb_add(w, s, &b);
    weft_node set = weft_schedule_ensure_set(s, "grp");
    weft_status st0;
    assert_int_equal(weft_schedule_ensure_set(s, NULL), WEFT_NODE_NONE);
    assert_int_equal(weft_schedule_ensure_set(NULL, "x"), WEFT_NODE_NONE);
    assert_int_equal(weft_schedule_add_apply_point(NULL, "x"), WEFT_NODE_NONE);
    assert_int_equal(weft_schedule_add_order(s, a, 999, 0), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_schedule_add_order(s, WEFT_NODE_NONE, a, 0), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_schedule_add_order(s, a, WEFT_NODE_SET | 77u, 0), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_schedule_add_order(s, a, bn, 1u << 9), WEFT_ERR_INVALID_ARG);
    st0 = weft_schedule_add_order(NULL, a, bn, 0);
    assert_true(st0 == WEFT_ERR_INVALID_HANDLE || st0 == WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_schedule_add_to_set(s, a, bn), WEFT_ERR_INVALID_ARG); // not a set
    assert_int_equal(weft_schedule_add_to_set(s, 999, set), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_schedule_add_chain(s, NULL, 2, 0), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_schedule_add_ambiguous_pair(s, a, 999), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_schedule_node_name(s, 999), NULL);
    assert_string_equal(weft_schedule_node_name(s, a), "a");
    assert_string_equal(weft_schedule_node_name(s, set), "grp");
    weft_system_stats st;
    assert_int_equal(weft_schedule_system_stats(s, 999, &st), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_schedule_system_stats(s, a, NULL), WEFT_ERR_INVALID_ARG);
    assert_null(weft_condition_create(s, NULL));
    weft_condition_desc cd;
    memset(&cd, 0, sizeof cd);
    assert_null(weft_condition_create(s, &cd)); // no fn
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, NULL);

    // NULL schedule.
    assert_int_equal(weft_schedule_run(NULL, 0.0), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_schedule_build(NULL), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_schedule_apply_pending(NULL), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_schedule_run_skip(NULL, 0.0, NULL, 0), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_schedule_destroy(NULL), WEFT_OK); // NULL is ignored
    assert_int_equal(weft_schedule_node_count(NULL), 0);
    assert_int_equal(weft_schedule_position(NULL, a), -1);
    assert_int_equal(weft_world_set_threads(NULL, 2), WEFT_ERR_INVALID_HANDLE);
    weft_job_system js;
    memset(&js, 0, sizeof js);
    assert_int_equal(weft_world_set_job_system(w, &js), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_world_threads(w), 1);

    // Everything still works afterwards.
    RUN(w, s);
    assert_int_equal(weft_schedule_node_count(s), 2);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- build count ----

static void build_count_and_rebuild(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_schedule *s = mksched(w, "update");
    int r1 = 0, r2 = 0, r3 = 0;
    sysb b;
    sb_init(&b, "one", sys_count, &r1);
    weft_node n1 = sb_add(w, s, &b);
    sb_init(&b, "two", sys_count, &r2);
    weft_node n2 = sb_add(w, s, &b);
    assert_int_equal(weft_schedule_build_count(s), 0);
    RUN(w, s);
    assert_int_equal(weft_schedule_build_count(s), 1);
    RUN(w, s);
    RUN(w, s);
    assert_int_equal(weft_schedule_build_count(s), 1);
    // Adding a system rebuilds once, and the new one runs.
    sb_init(&b, "three", sys_count, &r3);
    weft_node n3 = sb_add(w, s, &b);
    RUN(w, s);
    assert_int_equal(weft_schedule_build_count(s), 2);
    assert_int_equal(r3, 1);
    RUN(w, s);
    assert_int_equal(weft_schedule_build_count(s), 2);
    // An ordering change rebuilds and takes effect.
    assert_int_equal(weft_schedule_add_order(s, n3, n1, 0), WEFT_OK);
    RUN(w, s);
    assert_int_equal(weft_schedule_build_count(s), 3);
    assert_true(weft_schedule_position(s, n3) < weft_schedule_position(s, n1));
    assert_int_equal(r1, 6);
    assert_int_equal(r2, 6);
    assert_int_equal(r3, 3);
    (void)n2;
    assert_int_equal(weft_schedule_build_count(NULL), 0);
}

// ---- local state ----

typedef struct big_local {
    uint64_t counter;
    uint8_t rest[56];
} big_local;

static int g_inits, g_finis, g_init_dirty, g_misaligned;
static uint64_t g_fini_sum;

static void local_init(void *local, void *user)
{
    (void)user;
    g_inits++;
    const uint8_t *p = local;
    for (size_t i = 0; i < sizeof(big_local); i++) {
        if (p[i] != 0) {
            g_init_dirty++;
            break;
        }
    }
    ((big_local *)local)->counter = 1000;
}

static void local_fini(void *local, void *user)
{
    (void)user;
    g_finis++;
    g_fini_sum += ((big_local *)local)->counter;
}

typedef struct local_user {
    size_t align;
} local_user;

static void sys_local(weft_system_ctx *ctx, void *user)
{
    local_user *lu = user;
    big_local *l = weft_system_local(ctx);
    BODY_CHECK(l != NULL);
    if (l) {
        if (((uintptr_t)l & (lu->align - 1)) != 0) {
            g_misaligned++;
        }
        l->counter++;
    }
}

static void add_local_sys(weft_world *w, weft_schedule *s, const char *name, size_t align,
                          local_user *lu)
{
    sysb b;
    sb_init(&b, name, sys_local, lu);
    b.d.local.size = sizeof(big_local);
    b.d.local.align = align;
    b.d.local.init = local_init;
    b.d.local.fini = local_fini;
    sb_add(w, s, &b);
}

static void local_state_lifecycle(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    g_inits = g_finis = g_init_dirty = g_misaligned = 0;
    g_fini_sum = 0;
    weft_schedule *s = mksched(w, "locals");
    local_user l64 = {64}, l16 = {16};
    add_local_sys(w, s, "aligned64", 64, &l64);
    add_local_sys(w, s, "default_align", 0, &l16);
    assert_int_equal(g_inits, 2); // when added, before any run
    for (int i = 0; i < 3; i++) {
        RUN(w, s);
    }
    assert_int_equal(g_inits, 2);
    assert_int_equal(g_finis, 0);
    assert_int_equal(g_init_dirty, 0);
    assert_int_equal(g_misaligned, 0);
    assert_int_equal(weft_schedule_destroy(s), WEFT_OK);
    assert_int_equal(g_finis, 2);
    assert_int_equal(g_fini_sum, 2 * 1003);

    // World destruction runs fini too (and frees everything: the fixture's
    // allocator checks no bytes are left).
    g_inits = g_finis = 0;
    g_fini_sum = 0;
    weft_world *w2 = weft_world_create(NULL);
    assert_non_null(w2);
    weft_schedule *s2 = weft_schedule_create(w2, "locals");
    assert_non_null(s2);
    add_local_sys(w2, s2, "one", 32, &l16);
    expect_ok(w2, weft_schedule_run(s2, 0.0), "run");
    weft_world_destroy(w2);
    assert_int_equal(g_inits, 1);
    assert_int_equal(g_finis, 1);
    assert_int_equal(g_fini_sum, 1001);
}

// An absurd local size is out of memory, not a crash: the default
// allocator rounded SIZE_MAX up to the alignment, wrapped to a zero-byte
// block and the zero-fill then wrote past it. The schedule is unchanged.
static void local_state_absurd_size_is_out_of_memory(void **state)
{
    (void)state;
    weft_world *w = weft_world_create(NULL); // the default allocator
    assert_non_null(w);
    weft_schedule *s = mksched(w, "absurd");
    static const size_t sizes[] = {SIZE_MAX, SIZE_MAX - 100, SIZE_MAX / 2 + 1};
    local_user lu = {16};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        sysb b;
        sb_init(&b, "huge_local", sys_local, &lu);
        b.d.local.size = sizes[i];
        b.d.local.align = 4096;
        assert_int_equal(sb_try(s, &b), WEFT_NODE_NONE);
        assert_int_equal(weft_last_status(w), WEFT_ERR_OUT_OF_MEMORY);
    }
    assert_int_equal(weft_schedule_node_count(s), 0);
    g_inits = 0;
    add_local_sys(w, s, "fits", 0, &lu);
    assert_int_equal(g_inits, 1);
    expect_ok(w, weft_schedule_run(s, 0.0), "run");
    weft_world_destroy(w);
}

// ---- stats, profiling, trace and DOT ----

static void sys_spin(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    volatile uint64_t x = 0;
    for (int i = 0; i < 20000; i++) {
        x += (uint64_t)i;
    }
    (void)x; // read once more: clang's -Wunused-but-set-variable
    if (user) {
        (*(int *)user)++;
    }
}

static void stats_trace_and_dot(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);
    weft_schedule *s = mksched(w, "profiled");
    static const char *names[4] = {"physics_step", "ai_think", "render_prep", "audio_mix"};
    weft_node n[4];
    sysb b;
    for (int i = 0; i < 4; i++) {
        sb_init(&b, names[i], sys_spin, NULL);
        sb_q1(&b, i < 2 ? c.pos : c.vel, i % 2 ? WEFT_ACCESS_WRITE : WEFT_ACCESS_READ, 0);
        n[i] = sb_add(w, s, &b);
    }
    weft_node set = weft_schedule_ensure_set(s, "simulation_set");
    assert_int_equal(weft_schedule_add_to_set(s, n[0], set), WEFT_OK);
    assert_int_equal(weft_schedule_add_to_set(s, n[1], set), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(s, set, n[2], 0), WEFT_OK);
    cnd never = {0, false};
    assert_int_equal(weft_schedule_add_condition(s, n[3], mkcond(w, s, "never", &never)), WEFT_OK);
    assert_int_equal(weft_schedule_set_profiling(s, true), WEFT_OK);
    for (int i = 0; i < 3; i++) {
        RUN(w, s);
    }
    weft_system_stats st;
    assert_int_equal(weft_schedule_system_stats(s, n[0], &st), WEFT_OK);
    assert_int_equal(st.runs, 3);
    assert_int_equal(st.skipped, 0);
    assert_int_equal(st.failures, 0);
    assert_true(st.total_ns > 0);
    assert_true(st.last_ns > 0);
    assert_true(st.last_ns <= st.total_ns);
    assert_int_equal(weft_schedule_system_stats(s, n[3], &st), WEFT_OK);
    assert_int_equal(st.runs, 0);
    assert_int_equal(st.skipped, 3);
    assert_int_equal(weft_schedule_max_concurrency(s), 1); // single-threaded

    // Trace: sized with cap 0, every system that ran named, truncation safe.
    size_t len = weft_schedule_trace_json(s, NULL, 0);
    assert_true(len > 0);
    char *buf = malloc(len + 1);
    assert_non_null(buf);
    assert_int_equal(weft_schedule_trace_json(s, buf, len + 1), len);
    assert_int_equal(strlen(buf), len);
    assert_true(tw_contains(buf, "traceEvents"));
    for (int i = 0; i < 3; i++) {
        if (!tw_contains(buf, names[i])) {
            fail_msg("trace does not name %s: %s", names[i], buf);
        }
    }
    assert_true(buf[0] == '{' || buf[0] == '[');
    char small[16];
    memset(small, 'x', sizeof small);
    assert_int_equal(weft_schedule_trace_json(s, small, 10), len);
    assert_int_equal(strlen(small), 9);
    assert_int_equal(small[10], 'x');
    free(buf);

    // DOT: a digraph naming every node and the set.
    len = weft_schedule_dot(s, NULL, 0);
    assert_true(len > 0);
    buf = malloc(len + 1);
    assert_non_null(buf);
    assert_int_equal(weft_schedule_dot(s, buf, len + 1), len);
    assert_true(tw_contains(buf, "digraph"));
    for (int i = 0; i < 4; i++) {
        if (!tw_contains(buf, names[i])) {
            fail_msg("DOT does not name %s: %s", names[i], buf);
        }
    }
    assert_true(tw_contains(buf, "simulation_set"));
    free(buf);

    // Profiling off: the trace of the next run has no events.
    assert_int_equal(weft_schedule_set_profiling(s, false), WEFT_OK);
    RUN(w, s);
    len = weft_schedule_trace_json(s, NULL, 0);
    buf = malloc(len + 1);
    assert_non_null(buf);
    weft_schedule_trace_json(s, buf, len + 1);
    assert_false(tw_contains(buf, names[0]));
    free(buf);
    assert_int_equal(weft_schedule_system_stats(s, n[0], &st), WEFT_OK);
    assert_int_equal(st.runs, 4);
}

// ---- an unordered exclusive system ----

// An exclusive system conflicts with every other system: unordered, it is
// reported with no component ids (weft_ambiguity: "0: exclusive").
static void exclusive_ambiguity_has_no_components(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    comps c = reg_comps(w);
    weft_schedule *s = mksched(w, "excl_amb");
    int r1 = 0, r2 = 0;
    sysb b;
    sb_init(&b, "plain", sys_count, &r1);
    sb_q1(&b, c.pos, WEFT_ACCESS_READ, 0);
    weft_node a = sb_add(w, s, &b);
    sb_init(&b, "exclusive", sys_count, &r2);
    b.d.flags = WEFT_SYSTEM_EXCLUSIVE;
    weft_node x = sb_add(w, s, &b);
    BUILD(w, s);
    weft_ambiguity am;
    assert_true(find_amb(s, a, x, &am) >= 0);
    assert_int_equal(am.component_count, 0);
    assert_int_equal(weft_schedule_ambiguity_count(s), 1);
    RUN(w, s);
    assert_int_equal(r1, 1);
    assert_int_equal(r2, 1);
    // Silenced by ambiguous_with.
    assert_int_equal(weft_schedule_add_ambiguous_pair(s, x, a), WEFT_OK);
    BUILD(w, s);
    assert_int_equal(weft_schedule_ambiguity_count(s), 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(access_matrix_ambiguities),
        T(intra_system_conflicts_refused),
        T(condition_write_access_refused),
        T(order_deterministic_across_worlds),
        T(cycle_and_self_edge_refused),
        T(ambiguity_report_and_silencing),
        T(auto_sync_basic_and_opt_outs),
        T(auto_sync_shared_and_explicit),
        T(set_condition_skips_members),
        T(condition_combinators),
        T(condition_builtins),
        T(clamp_covers_system_and_condition_last_runs),
        T(change_detection_across_systems),
        T(command_order),
        T(final_apply_and_apply_pending),
        T(final_apply_off_carries_to_next_sync),
        T(messages_between_systems),
        T(system_failure_reported),
        T(context_misuse_fails_the_system),
        T(context_call_returns_its_own_status),
        T(exclusive_system_world_access),
        T(schedule_api_misuse),
        T(build_count_and_rebuild),
        T(local_state_lifecycle),
        T(local_state_absurd_size_is_out_of_memory),
        T(stats_trace_and_dot),
        T(exclusive_ambiguity_has_no_components),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

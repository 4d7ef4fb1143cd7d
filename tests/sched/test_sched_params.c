/* tests/sched/test_sched_params.c - param sets (query groups) and removed
 * components read through systems.
 * SPDX-License-Identifier: MIT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "weft.h"

typedef struct { float v; } Pos;

static weft_world *world_new(weft_component *pos, weft_component *enemy)
{
    weft_world_desc wd;
    memset(&wd, 0, sizeof wd);
    weft_world *w = weft_world_create(&wd);
    assert_non_null(w);
    weft_component_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.name = "Pos";
    cd.size = sizeof(Pos);
    *pos = weft_component_register(w, &cd);
    memset(&cd, 0, sizeof cd);
    cd.name = "Enemy";
    *enemy = weft_component_register(w, &cd);
    assert_int_not_equal(*pos, 0);
    assert_int_not_equal(*enemy, 0);
    return w;
}

static weft_query_desc q_pos(weft_component pos, weft_access access)
{
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.term_count = 1;
    q.terms[0].id = pos;
    q.terms[0].access = access;
    return q;
}

typedef struct param_user {
    int mode; /* 0: one query at a time, 1: both at once */
    float sum;
    weft_status nested;
} param_user;

static void use_param_set(weft_system_ctx *ctx, void *user)
{
    param_user *u = user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        Pos *p = weft_iter_field_mut(&it, 0, sizeof(Pos));
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            p[i].v += 1.0f;
        }
        if (u->mode == 1) {
            weft_iter inner;
            u->nested = weft_system_iter(ctx, 1, &inner); /* same set, still open */
            weft_iter_fini(&inner);
            weft_iter_fini(&it);
            return;
        }
    }
    if (weft_system_iter(ctx, 1, &it) == WEFT_OK) {
        while (weft_iter_next(&it)) {
            const Pos *p = weft_iter_field(&it, 0, sizeof(Pos));
            for (int32_t i = 0; i < weft_iter_count(&it); i++) {
                u->sum += p[i].v;
            }
        }
    }
}

/* Conflicting queries in one system: refused alone, accepted
 * as a param set; one member at a time. */
static void param_set_allows_conflicting_queries(void **state)
{
    (void)state;
    weft_component pos, enemy;
    weft_world *w = world_new(&pos, &enemy);
    for (int i = 0; i < 10; i++) {
        Pos p = {1.0f};
        weft_value v = {pos, sizeof p, &p};
        assert_int_not_equal(weft_spawn_with(w, &v, 1), 0);
    }
    weft_schedule *s = weft_schedule_create(w, "s");
    weft_query_desc qs[2] = {q_pos(pos, WEFT_ACCESS_WRITE), q_pos(pos, WEFT_ACCESS_READ)};
    param_user u = {0, 0.0f, WEFT_OK};
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "param";
    d.fn = use_param_set;
    d.user = &u;
    d.queries = qs;
    d.query_count = 2;
    assert_int_equal(weft_schedule_add_system(s, &d), 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_ACCESS_VIOLATION);
    int32_t groups[2] = {7, 7};
    d.query_groups = groups;
    weft_node n = weft_schedule_add_system(s, &d);
    assert_int_not_equal(n, 0);
    /* the union access: a reader of Pos elsewhere conflicts with it */
    weft_query_desc rq = q_pos(pos, WEFT_ACCESS_READ);
    weft_system_desc r;
    memset(&r, 0, sizeof r);
    r.name = "reader";
    r.fn = use_param_set;
    r.user = &u;
    r.queries = &rq;
    r.query_count = 1;
    weft_node reader = weft_schedule_add_system(s, &r);
    assert_int_not_equal(reader, 0);
    assert_int_equal(weft_schedule_build(s), WEFT_OK);
    assert_int_equal(weft_schedule_ambiguity_count(s), 1);
    weft_ambiguity a;
    assert_int_equal(weft_schedule_ambiguity(s, 0, &a), WEFT_OK);
    assert_int_equal(a.a, n);
    assert_int_equal(a.b, reader);
    weft_schedule_destroy(s);

    /* one member at a time: sequential use works, nesting is refused */
    s = weft_schedule_create(w, "s2");
    param_user ok = {0, 0.0f, WEFT_OK};
    d.user = &ok;
    assert_int_not_equal(weft_schedule_add_system(s, &d), 0);
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_OK);
    assert_true(ok.sum > 19.5f && ok.sum < 20.5f); /* 10 x (1 + 1) */
    param_user bad = {1, 0.0f, WEFT_OK};
    d.name = "nesting";
    d.user = &bad;
    assert_int_not_equal(weft_schedule_add_system(s, &d), 0);
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_ERR_ACCESS_VIOLATION);
    assert_int_equal(bad.nested, WEFT_ERR_ACCESS_VIOLATION);
    assert_non_null(strstr(weft_last_error(w), "nesting"));
    assert_non_null(strstr(weft_last_error(w), "param set"));
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_world_destroy(w);
}

typedef struct removed_user {
    weft_component c;
    int seen;
    weft_entity last;
    int undeclared;
} removed_user;

static void read_removed(weft_system_ctx *ctx, void *user)
{
    removed_user *u = user;
    weft_entity e;
    while ((e = weft_system_removed_read(ctx, u->c)) != 0) {
        u->seen++;
        u->last = e;
    }
}

static void read_undeclared(weft_system_ctx *ctx, void *user)
{
    removed_user *u = user;
    if (weft_system_removed_read(ctx, u->c) == 0) {
        u->undeclared++;
    }
}

/* Removed components read by systems (Bevy's RemovedComponents), each
 * reader with its own cursor, visible for at most two frames. */
static void removed_components_per_system(void **state)
{
    (void)state;
    weft_component pos, enemy;
    weft_world *w = world_new(&pos, &enemy);
    weft_app_desc ad;
    memset(&ad, 0, sizeof ad);
    ad.world = w;
    weft_app *app = weft_app_create(&ad);
    assert_non_null(app);
    weft_schedule *s = weft_app_schedule(app, WEFT_APP_UPDATE);
    removed_user a = {enemy, 0, 0, 0}, b = {enemy, 0, 0, 0};
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "a";
    d.fn = read_removed;
    d.user = &a;
    d.removed = &enemy;
    d.removed_count = 1;
    assert_int_not_equal(weft_schedule_add_system(s, &d), 0);
    d.name = "b";
    d.user = &b;
    assert_int_not_equal(weft_schedule_add_system(s, &d), 0);
    weft_entity e1 = weft_spawn(w);
    weft_entity e2 = weft_spawn(w);
    assert_int_equal(weft_insert(w, e1, enemy, NULL, 0), WEFT_OK);
    assert_int_equal(weft_insert(w, e2, enemy, NULL, 0), WEFT_OK);
    assert_int_equal(weft_remove(w, e1, enemy), WEFT_OK); /* tracked since add */
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(a.seen, 1);
    assert_int_equal(b.seen, 1);
    assert_int_equal(a.last, e1);
    assert_int_equal(weft_despawn(w, e2), WEFT_OK);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(a.seen, 2);
    assert_int_equal(b.seen, 2);
    assert_int_equal(b.last, e2);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(a.seen, 2); /* nothing new, nothing twice */

    /* undeclared: the system fails with ACCESS_VIOLATION */
    weft_schedule *s2 = weft_schedule_create(w, "undeclared");
    removed_user u = {enemy, 0, 0, 0};
    memset(&d, 0, sizeof d);
    d.name = "sneaky";
    d.fn = read_undeclared;
    d.user = &u;
    assert_int_not_equal(weft_schedule_add_system(s2, &d), 0);
    assert_int_equal(weft_schedule_run(s2, 0.0), WEFT_ERR_ACCESS_VIOLATION);
    assert_int_equal(u.undeclared, 1);
    assert_non_null(strstr(weft_last_error(w), "sneaky"));
    assert_non_null(strstr(weft_last_error(w), "Enemy"));

    /* bad descriptors */
    weft_component dup[2] = {enemy, enemy};
    d.removed = dup;
    d.removed_count = 2;
    assert_int_equal(weft_schedule_add_system(s2, &d), 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_DUPLICATE_COMPONENT);
    weft_component unknown = 999;
    d.removed = &unknown;
    d.removed_count = 1;
    assert_int_equal(weft_schedule_add_system(s2, &d), 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_UNKNOWN_COMPONENT);
    d.removed = NULL;
    assert_int_equal(weft_schedule_add_system(s2, &d), 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    weft_world_destroy(w);
}

static int g_single_runs, g_populated_runs;

static void count_single(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
    g_single_runs++;
}

static void count_populated(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
    g_populated_runs++;
}

/* Bevy's Single / Populated as query flags of a system's query: the
 * system is skipped (counted as skipped, last run kept) unless exactly one
 * / at least one entity matches. */
static void single_and_populated_queries(void **state)
{
    (void)state;
    weft_component pos, enemy;
    weft_world *w = world_new(&pos, &enemy);
    weft_schedule *s = weft_schedule_create(w, "s");
    weft_query_desc q = q_pos(enemy, WEFT_ACCESS_NONE);
    q.terms[0].oper = WEFT_OPER_WITH;
    q.flags = WEFT_QUERY_SINGLE;
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "player_only";
    d.fn = count_single;
    d.queries = &q;
    d.query_count = 1;
    weft_node ns = weft_schedule_add_system(s, &d);
    assert_int_not_equal(ns, 0);
    weft_query_desc qp = q;
    qp.flags = WEFT_QUERY_POPULATED;
    d.name = "any_enemy";
    d.fn = count_populated;
    d.queries = &qp;
    weft_node np = weft_schedule_add_system(s, &d);
    assert_int_not_equal(np, 0);
    g_single_runs = g_populated_runs = 0;
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_OK); /* none */
    assert_int_equal(g_single_runs, 0);
    assert_int_equal(g_populated_runs, 0);
    weft_entity e1 = weft_spawn(w);
    assert_int_equal(weft_insert(w, e1, enemy, NULL, 0), WEFT_OK);
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_OK); /* one */
    assert_int_equal(g_single_runs, 1);
    assert_int_equal(g_populated_runs, 1);
    weft_entity e2 = weft_spawn(w);
    assert_int_equal(weft_insert(w, e2, enemy, NULL, 0), WEFT_OK);
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_OK); /* two */
    assert_int_equal(g_single_runs, 1);
    assert_int_equal(g_populated_runs, 2);
    weft_system_stats st;
    assert_int_equal(weft_schedule_system_stats(s, ns, &st), WEFT_OK);
    assert_int_equal(st.runs, 1);
    assert_int_equal(st.skipped, 2);
    /* the flags are accepted on plain queries and change nothing there */
    weft_query *plain = weft_query_create(w, &q);
    assert_non_null(plain);
    assert_int_equal(weft_query_count(w, plain), 2);
    weft_query_destroy(w, plain);
    /* unknown flag bits are still refused */
    q.flags = 1u << 20;
    assert_null(weft_query_create(w, &q));
    assert_int_equal(weft_last_status(w), WEFT_ERR_INVALID_ARG);
    weft_world_destroy(w);
}

/* The stepping hook: listed systems are skipped this once, their
 * successors still run. */
static void run_skip_hook(void **state)
{
    (void)state;
    weft_component pos, enemy;
    weft_world *w = world_new(&pos, &enemy);
    weft_schedule *s = weft_schedule_create(w, "s");
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "a";
    d.fn = count_single;
    weft_node a = weft_schedule_add_system(s, &d);
    d.name = "b";
    d.fn = count_populated;
    weft_node b = weft_schedule_add_system(s, &d);
    assert_int_equal(weft_schedule_add_order(s, a, b, 0), WEFT_OK);
    g_single_runs = g_populated_runs = 0;
    assert_int_equal(weft_schedule_run_skip(s, 0.0, &a, 1), WEFT_OK);
    assert_int_equal(g_single_runs, 0);
    assert_int_equal(g_populated_runs, 1);
    assert_int_equal(weft_schedule_run_skip(s, 0.0, NULL, 0), WEFT_OK);
    assert_int_equal(g_single_runs, 1); /* only once */
    assert_int_equal(g_populated_runs, 2);
    weft_system_stats st;
    assert_int_equal(weft_schedule_system_stats(s, a, &st), WEFT_OK);
    assert_int_equal(st.skipped, 1);
    weft_node set = weft_schedule_ensure_set(s, "set");
    assert_int_equal(weft_schedule_run_skip(s, 0.0, &set, 1), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_schedule_run_skip(s, 0.0, NULL, 1), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_schedule_run_skip(s, 0.0, &a, -1), WEFT_ERR_INVALID_ARG);
    assert_int_equal(g_single_runs, 1); /* refused calls ran nothing */
    weft_world_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(param_set_allows_conflicting_queries),
        cmocka_unit_test(removed_components_per_system),
        cmocka_unit_test(single_and_populated_queries),
        cmocka_unit_test(run_skip_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

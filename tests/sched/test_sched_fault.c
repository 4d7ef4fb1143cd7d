/* tests/sched/test_sched_fault.c - out of memory anywhere in declaring,
 * building and running a schedule: a clean status, no crash, no leak, and
 * a schedule that still works once memory is back.
 * SPDX-License-Identifier: MIT
 *
 * Every allocation of the scenario fails in turn (once, then from that
 * call on). Each call must return WEFT_OK or report WEFT_ERR_OUT_OF_MEMORY
 * (a NULL or 0 result with that status in the error slot, or a run failing
 * with it); destroying the world must give every byte back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_world.h"

typedef struct { float x, y; } V2;

typedef struct scen {
    weft_component pos, vel, tag, res;
    weft_message_type msg;
    int runs_ok;
} scen;

static void move(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        V2 *p = weft_iter_field_mut(&it, 0, sizeof(V2));
        const V2 *v = weft_iter_field(&it, 1, sizeof(V2));
        for (int32_t i = 0; p && v && i < weft_iter_count(&it); i++) {
            p[i].x += v[i].x;
        }
    }
}

static void spawn(weft_system_ctx *ctx, void *user)
{
    scen *s = user;
    V2 a = {1, 2};
    weft_value vals[2] = {{s->pos, sizeof a, &a}, {s->vel, sizeof a, &a}};
    weft_commands *c = weft_system_commands(ctx);
    for (int i = 0; i < 40; i++) {
        weft_entity e = weft_cmd_spawn(c, vals, 2);
        if (e) {
            weft_cmd_insert(c, e, s->tag, NULL, 0);
        }
    }
    int32_t m = 7;
    weft_system_message_write(ctx, s->msg, &m, sizeof m);
}

static void chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    scen *s = user;
    while (weft_iter_next(it)) {
        const weft_entity *e = weft_iter_entities(it);
        for (int32_t i = 0; i < weft_iter_count(it); i++) {
            if ((e[i] & 3) == 0) {
                weft_cmd_remove(cmds, e[i], s->tag);
            }
        }
    }
}

static void par(weft_system_ctx *ctx, void *user)
{
    weft_system_par_each(ctx, 0, chunk, user, 8);
}

static void reader(weft_system_ctx *ctx, void *user)
{
    scen *s = user;
    while (weft_system_message_read(ctx, s->msg, sizeof(int32_t))) {
    }
    while (weft_system_removed_read(ctx, s->tag)) {
    }
}

static bool cond(weft_system_ctx *ctx, void *user)
{
    (void)user;
    return weft_system_count(ctx, 0) >= 0;
}

/* OK, or a failure that says OUT_OF_MEMORY. */
static void expect_ok_or_oom(weft_world *w, weft_status st)
{
    if (st != WEFT_OK && st != WEFT_ERR_OUT_OF_MEMORY) {
        fail_msg("unexpected %s: %s", weft_status_name(st), weft_last_error(w));
    }
}

/* A handle result: non-zero, or OUT_OF_MEMORY recorded. */
static bool got(weft_world *w, bool ok)
{
    if (!ok) {
        expect_ok_or_oom(w, weft_last_status(w));
    }
    return ok;
}

static weft_query_desc qdesc(weft_component a, weft_access aa, weft_component b,
                             weft_access ba)
{
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0].id = a;
    q.terms[0].access = aa;
    q.term_count = 1;
    if (b) {
        q.terms[1].id = b;
        q.terms[1].access = ba;
        q.term_count = 2;
    }
    return q;
}

/* The scenario; returns false where it had to stop (out of memory). */
static bool scenario(weft_world *w, scen *s, int threads)
{
    if (!got(w, weft_world_set_threads(w, threads) == WEFT_OK)) {
        return false;
    }
    weft_schedule *sc = weft_schedule_create(w, "update");
    if (!got(w, sc != NULL)) {
        return false;
    }
    weft_query_desc mq = qdesc(s->pos, WEFT_ACCESS_WRITE, s->vel, WEFT_ACCESS_READ);
    weft_query_desc tq = qdesc(s->tag, WEFT_ACCESS_NONE, 0, 0);
    tq.terms[0].oper = WEFT_OPER_WITH;
    weft_message_use mw = {s->msg, WEFT_ACCESS_WRITE};
    weft_message_use mr = {s->msg, WEFT_ACCESS_READ};
    weft_resource_use ru = {s->res, WEFT_ACCESS_READ};
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "move";
    d.fn = move;
    d.queries = &mq;
    d.query_count = 1;
    d.resources = &ru;
    d.resource_count = 1;
    d.local.size = 64;
    weft_node nmove = weft_schedule_add_system(sc, &d);
    memset(&d, 0, sizeof d);
    d.name = "spawn";
    d.fn = spawn;
    d.user = s;
    d.flags = WEFT_SYSTEM_COMMANDS;
    d.messages = &mw;
    d.message_count = 1;
    weft_node nspawn = weft_schedule_add_system(sc, &d);
    memset(&d, 0, sizeof d);
    d.name = "par";
    d.fn = par;
    d.user = s;
    d.queries = &tq;
    d.query_count = 1;
    weft_node npar = weft_schedule_add_system(sc, &d);
    memset(&d, 0, sizeof d);
    d.name = "reader";
    d.fn = reader;
    d.user = s;
    d.messages = &mr;
    d.message_count = 1;
    d.removed = &s->tag;
    d.removed_count = 1;
    weft_node nread = weft_schedule_add_system(sc, &d);
    if (!got(w, nmove && nspawn && npar && nread)) {
        return false;
    }
    weft_node set = weft_schedule_ensure_set(sc, "sim");
    if (!got(w, set != 0)) {
        return false;
    }
    expect_ok_or_oom(w, weft_schedule_add_to_set(sc, nmove, set));
    expect_ok_or_oom(w, weft_schedule_add_order(sc, nspawn, npar, 0));
    weft_condition_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.name = "has_movers";
    cd.fn = cond;
    cd.queries = &mq;
    cd.query_count = 1;
    mq.terms[0].access = WEFT_ACCESS_READ;
    weft_condition *c = weft_condition_create(sc, &cd);
    if (got(w, c != NULL)) {
        weft_condition *once = weft_condition_run_once(sc);
        weft_condition *both = once ? weft_condition_or(sc, c, once) : NULL;
        if (got(w, both != NULL)) {
            expect_ok_or_oom(w, weft_schedule_add_condition(sc, set, both));
        }
    }
    for (int r = 0; r < 3; r++) {
        weft_status st = weft_schedule_run(sc, 0.016);
        expect_ok_or_oom(w, st);
        if (st != WEFT_OK) {
            return false;
        }
        s->runs_ok++;
    }
    return true;
}

static void world_setup(weft_world *w, scen *s)
{
    memset(s, 0, sizeof *s);
    s->pos = tw_comp(w, "pos", sizeof(V2), 0, WEFT_STORAGE_TABLE, 0);
    s->vel = tw_comp(w, "vel", sizeof(V2), 0, WEFT_STORAGE_TABLE, 0);
    s->tag = tw_comp(w, "tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    s->res = tw_comp(w, "cfg", sizeof(int32_t), 0, WEFT_STORAGE_TABLE, 0);
    int32_t v = 3;
    assert_int_equal(weft_resource_insert(w, s->res, &v, sizeof v), WEFT_OK);
    weft_message_desc md;
    memset(&md, 0, sizeof md);
    md.name = "ping";
    md.size = sizeof(int32_t);
    s->msg = weft_message_register(w, &md);
    assert_int_not_equal(s->msg, 0);
    for (int i = 0; i < 100; i++) {
        V2 a = {(float)i, 1};
        weft_value vals[3] = {{s->pos, sizeof a, &a}, {s->vel, sizeof a, &a}, {s->tag, 0, NULL}};
        assert_int_not_equal(weft_spawn_with(w, vals, 3), 0);
    }
}

static void fault_every_allocation(void **state)
{
    (void)state;
    static const int threads[] = {1, 2};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        if (threads[t] > weft_max_threads()) {
            break; // the build without threads: 1 only
        }
        for (int sticky = 0; sticky < 2; sticky++) {
            int64_t n = 1;
            for (;; n++) {
                tw_alloc al;
                tw_alloc_init(&al);
                weft_world_desc wd;
                memset(&wd, 0, sizeof wd);
                wd.allocator = tw_alloc_hook(&al);
                weft_world *w = weft_world_create(&wd);
                assert_non_null(w);
                scen s;
                world_setup(w, &s);
                tw_alloc_fail_nth(&al, n, sticky != 0);
                bool done = scenario(w, &s, threads[t]);
                bool injected = tw_alloc_injected(&al) > 0;
                tw_alloc_disarm(&al);
                assert_int_equal(weft_world_check(w), WEFT_OK);
                if (!done && !sticky) {
                    /* memory is back: the schedule built so far still runs */
                    weft_schedule *sc = weft_schedule_lookup(w, "update");
                    if (sc) {
                        assert_int_equal(weft_schedule_run(sc, 0.016), WEFT_OK);
                    }
                    assert_int_equal(weft_world_check(w), WEFT_OK);
                }
                weft_world_destroy(w);
                assert_int_equal(tw_alloc_errors(&al), 0);
                if (tw_alloc_live_bytes(&al) != 0) {
                    fail_msg("threads %d, %s failure at allocation %lld: %lld bytes leaked",
                             threads[t], sticky ? "sticky" : "single", (long long)n,
                             (long long)tw_alloc_live_bytes(&al));
                }
                tw_alloc_fini(&al);
                if (!injected) {
                    assert_true(done);
                    break; /* the scenario needs fewer allocations than n */
                }
            }
            assert_true(n > 20); /* the scenario did allocate */
            print_message("threads %d, %s: %lld allocations, each failed in turn\n", threads[t],
                          sticky ? "sticky" : "single", (long long)(n - 1));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fault_every_allocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

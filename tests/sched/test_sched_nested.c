/* tests/sched/test_sched_nested.c - a schedule run from inside an exclusive
 * system of another schedule, on several threads.
 * SPDX-License-Identifier: MIT
 *
 * Regression: the pool tasks that let workers join a run used to live in
 * the world, so the inner run reused them while the outer run's workers
 * might not have started theirs yet (a lost task, an endless wait).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "needs_threads.h"

#include "weft.h"

typedef struct nest {
    weft_world *w;
    weft_schedule *inner;
    int inner_fail;
} nest;

static _Atomic int inner_runs;
static _Atomic int outer_runs;

static void count_inner(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
    inner_runs++;
}

static void count_outer(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
    outer_runs++;
}

static void run_inner(weft_system_ctx *ctx, void *user)
{
    nest *n = user;
    weft_world *w = weft_system_world(ctx);
    if (!w || weft_schedule_run(n->inner, 0.0) != WEFT_OK) {
        n->inner_fail++;
    }
}

static weft_node add(weft_schedule *s, const char *name, weft_system_fn fn, void *user,
                     uint32_t flags)
{
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.fn = fn;
    d.user = user;
    d.flags = flags;
    return weft_schedule_add_system(s, &d);
}

static void nested_runs_on_threads(void **state)
{
    (void)state;
    static const int threads[] = {1, 2, 4};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        if (threads[t] > weft_max_threads()) {
            break; // the build without threads: 1 only
        }
        weft_world_desc wd;
        memset(&wd, 0, sizeof wd);
        weft_world *w = weft_world_create(&wd);
        assert_non_null(w);
        assert_int_equal(weft_world_set_threads(w, threads[t]), WEFT_OK);
        nest n = {w, weft_schedule_create(w, "inner"), 0};
        weft_schedule *outer = weft_schedule_create(w, "outer");
        assert_non_null(n.inner);
        assert_non_null(outer);
        char name[32];
        for (int i = 0; i < 40; i++) {
            snprintf(name, sizeof name, "inner%d", i);
            assert_int_not_equal(add(n.inner, name, count_inner, NULL, 0), 0);
            snprintf(name, sizeof name, "outer%d", i);
            assert_int_not_equal(add(outer, name, count_outer, NULL, 0), 0);
        }
        assert_int_not_equal(add(outer, "run_inner", run_inner, &n, WEFT_SYSTEM_EXCLUSIVE), 0);
        inner_runs = 0;
        outer_runs = 0;
        for (int f = 0; f < 200; f++) {
            assert_int_equal(weft_schedule_run(outer, 0.0), WEFT_OK);
        }
        assert_int_equal(n.inner_fail, 0);
        assert_int_equal(inner_runs, 200 * 40);
        assert_int_equal(outer_runs, 200 * 40);
        weft_world_destroy(w);
    }
}

static void same_schedule_reentry_refused(void **state)
{
    (void)state;
    weft_world_desc wd;
    memset(&wd, 0, sizeof wd);
    weft_world *w = weft_world_create(&wd);
    nest n = {w, weft_schedule_create(w, "self"), 0};
    assert_int_not_equal(add(n.inner, "again", run_inner, &n, WEFT_SYSTEM_EXCLUSIVE), 0);
    /* the inner call fails with WRONG_PHASE, and an error inside a system
     * fails that system, so the run reports it */
    assert_int_equal(weft_schedule_run(n.inner, 0.0), WEFT_ERR_WRONG_PHASE);
    assert_int_equal(n.inner_fail, 1);
    assert_non_null(strstr(weft_last_error(w), "again"));
    weft_world_destroy(w);
}

/* Regression: destroying one world's pool cleared the calling thread's
 * worker index, and the other world's multi-threaded runs then failed
 * with WRONG_THREAD. Runs from a second thread work too. */
static void two_worlds_one_driver(void **state)
{
    (void)state;
    NEEDS_THREADS("two worlds' pools on one driver thread");
    weft_world_desc wd;
    memset(&wd, 0, sizeof wd);
    weft_world *a = weft_world_create(&wd);
    weft_world *b = weft_world_create(&wd);
    assert_int_equal(weft_world_set_threads(a, 2), WEFT_OK);
    assert_int_equal(weft_world_set_threads(b, 2), WEFT_OK);
    weft_schedule *s = weft_schedule_create(b, "b");
    char name[16];
    for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof name, "s%d", i);
        assert_int_not_equal(add(s, name, count_inner, NULL, 0), 0);
    }
    weft_world_destroy(a);
    inner_runs = 0;
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_OK);
    assert_int_equal(inner_runs, 8);
    weft_world_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nested_runs_on_threads),
        cmocka_unit_test(same_schedule_reentry_refused),
        cmocka_unit_test(two_worlds_one_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/task/test_task.c - tasks that span frames (weft_task_*, weft.h):
// spawn, poll, wait, cancel (queued and running), detach, stale handles,
// failures with a message, results through an apply step's commands, spawns
// from systems on worker threads, the pools' thread counts, and world
// destruction with tasks in flight (the fixture's allocator must end at zero
// live bytes; ASan reports any leak). Every world uses the counting
// allocator of tests/support, so each test also proves nothing leaks.
// In the build without threads the same tests run with the tasks executed
// at weft_tasks_tick or inline in weft_task_wait on the calling thread;
// the two tests whose subject is a task running on another thread skip.
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "needs_threads.h"
#include "test_world.h"
#include "weft.h"

#include "task/task.h" // wf_task_default_threads: the sizing rule

#define SPIN_LIMIT_NS (20ll * 1000 * 1000 * 1000) // a hung wait fails the test

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

// ---- task functions ----

typedef struct sum_in {
    int64_t values[8];
    int32_t count;
} sum_in;

static atomic_int g_sum_runs;

static weft_status sum_task(weft_task_ctx *ctx, const void *input, void *result, void *user)
{
    (void)ctx;
    (void)user;
    const sum_in *in = input;
    int64_t s = 0;
    for (int32_t i = 0; i < in->count; i++) {
        s += in->values[i];
    }
    memcpy(result, &s, sizeof s);
    atomic_fetch_add(&g_sum_runs, 1);
    return WEFT_OK;
}

static weft_task spawn_sum(weft_world *w, int32_t n, uint32_t flags, weft_task_apply_fn apply,
                           void *user)
{
    sum_in in;
    memset(&in, 0, sizeof in);
    in.count = n;
    for (int32_t i = 0; i < n; i++) {
        in.values[i] = i + 1;
    }
    weft_task_desc d;
    memset(&d, 0, sizeof d);
    d.fn = sum_task;
    d.user = user;
    d.input = &in;
    d.input_size = sizeof in;
    d.result_size = sizeof(int64_t);
    d.flags = flags;
    d.apply = apply;
    weft_task t = WEFT_TASK_NONE;
    assert_int_equal(weft_task_spawn(w, &d, &t), WEFT_OK);
    assert_true(t != WEFT_TASK_NONE);
    return t;
}

// Polls (ticking in between, which runs queued tasks in the build without
// threads) until the task is final; returns its state.
static weft_task_state poll_until_final(weft_world *w, weft_task t, void *out, size_t size)
{
    int64_t start = now_ns();
    for (;;) {
        weft_task_outcome st;
        weft_status rc = weft_task_poll(w, t, &st, out, size);
        if (st.state != WEFT_TASK_STATE_PENDING) {
            (void)rc;
            return st.state;
        }
        assert_int_equal(weft_tasks_tick(w), WEFT_OK);
        assert_true(now_ns() - start < SPIN_LIMIT_NS);
        sched_yield();
    }
}

// ---- spawn, poll, wait ----

static void test_spawn_wait_poll(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_task a = spawn_sum(w, 4, 0, NULL, NULL);
    int64_t r = 0;
    weft_task_outcome st;
    assert_int_equal(weft_task_wait(w, a, &st, &r, sizeof r), WEFT_OK);
    assert_int_equal(st.state, WEFT_TASK_STATE_READY);
    assert_int_equal(r, 1 + 2 + 3 + 4);
    // the final state was taken: the handle is released
    assert_int_equal(weft_task_poll(w, a, &st, &r, sizeof r), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(st.state, WEFT_TASK_STATE_NONE);
    tw_expect_error(f, WEFT_ERR_INVALID_HANDLE, "not a live task");

    weft_task b = spawn_sum(w, 8, 0, NULL, NULL);
    r = 0;
    assert_int_equal(poll_until_final(w, b, &r, sizeof r), WEFT_TASK_STATE_READY);
    assert_int_equal(r, 36);
    assert_int_equal(weft_world_task_count(w), 0);
}

static weft_status failing_task(weft_task_ctx *ctx, const void *input, void *result,
                                void *user)
{
    (void)input;
    (void)result;
    (void)user;
    return weft_task_fail(ctx, WEFT_ERR_NOT_FOUND, "no path from (0, 0) to (7, 9)");
}

static void test_failure_carries_message(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_task_desc d;
    memset(&d, 0, sizeof d);
    d.fn = failing_task;
    d.result_size = 16;
    d.pool = WEFT_TASK_POOL_IO;
    weft_task t = 0;
    assert_int_equal(weft_task_spawn(w, &d, &t), WEFT_OK);
    unsigned char buf[16];
    memset(buf, 0xAB, sizeof buf);
    weft_task_outcome st;
    // the task's failure is an outcome: the call worked
    assert_int_equal(weft_task_wait(w, t, &st, buf, sizeof buf), WEFT_OK);
    assert_int_equal(st.state, WEFT_TASK_STATE_FAILED);
    assert_int_equal(st.status, WEFT_ERR_NOT_FOUND);
    assert_string_equal(st.message, "no path from (0, 0) to (7, 9)");
    assert_int_equal(weft_last_status(w), WEFT_OK); // nothing recorded
    assert_int_equal(buf[0], 0xAB); // no result copied for a failure
    assert_int_equal(weft_task_poll(w, t, &st, NULL, 0), WEFT_ERR_INVALID_HANDLE);
    // misuse of weft_task_fail: nothing to record it in, INVALID_ARG
    assert_int_equal(weft_task_fail(NULL, WEFT_ERR_NOT_FOUND, "x"), WEFT_ERR_INVALID_ARG);
    assert_false(weft_task_cancelled(NULL));
}

// A system that polls a failed task reads the failure as an outcome: the
// system does not fail, the schedule run returns WEFT_OK.
typedef struct fail_poll {
    weft_world *w;
    weft_task t;
    weft_task_outcome seen;
    int polls;
    weft_status last_rc;
} fail_poll;

static void failed_poller(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    fail_poll *fp = user;
    if (fp->t == 0) {
        return;
    }
    fp->polls++;
    fp->last_rc = weft_task_poll(fp->w, fp->t, &fp->seen, NULL, 0);
    if (fp->seen.state != WEFT_TASK_STATE_PENDING) {
        fp->t = 0;
    }
}

static void test_system_polls_failed_task(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    fail_poll fp;
    memset(&fp, 0, sizeof fp);
    fp.w = w;
    weft_task_desc d;
    memset(&d, 0, sizeof d);
    d.fn = failing_task;
    assert_int_equal(weft_task_spawn(w, &d, &fp.t), WEFT_OK);
    weft_schedule *s = weft_schedule_create(w, "poller");
    assert_non_null(s);
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "failed_poller";
    sd.fn = failed_poller;
    sd.user = &fp;
    assert_int_not_equal(weft_schedule_add_system(s, &sd), 0);
    int64_t start = now_ns();
    while (fp.t != 0) {
        assert_int_equal(weft_schedule_run(s, 0.016), WEFT_OK);
        assert_int_equal(weft_tasks_tick(w), WEFT_OK);
        assert_true(now_ns() - start < SPIN_LIMIT_NS);
        sched_yield();
    }
    assert_int_equal(fp.last_rc, WEFT_OK);
    assert_int_equal(fp.seen.state, WEFT_TASK_STATE_FAILED);
    assert_int_equal(fp.seen.status, WEFT_ERR_NOT_FOUND);
    assert_true(tw_contains(fp.seen.message, "no path"));
}

// ---- handles ----

static void test_stale_and_forged_handles(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_task_outcome st;
    int64_t r;
    // nothing spawned yet: every handle is refused
    assert_int_equal(weft_task_poll(w, 0, &st, NULL, 0), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_task_cancel(w, 1), WEFT_ERR_INVALID_HANDLE);
    weft_task a = spawn_sum(w, 2, 0, NULL, NULL);
    assert_int_equal(weft_task_wait(w, a, &st, &r, sizeof r), WEFT_OK);
    // slots are reused with the next generation: the old handle stays dead
    // however many tasks come after it
    for (int i = 0; i < 8; i++) {
        weft_task x = spawn_sum(w, 1, 0, NULL, NULL);
        assert_true(x != a);
        assert_int_equal(weft_task_wait(w, x, &st, &r, sizeof r), WEFT_OK);
    }
    weft_task b = spawn_sum(w, 3, 0, NULL, NULL);
    assert_true(b != a);
    assert_int_equal(weft_task_poll(w, a, &st, &r, sizeof r), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_task_cancel(w, a), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_task_detach(w, a), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_task_wait(w, a, &st, &r, sizeof r), WEFT_ERR_INVALID_HANDLE);
    // forged: an index never used, and a live index with a wrong generation
    assert_int_equal(weft_task_poll(w, ((weft_task)1 << 32) | 999u, &st, NULL, 0),
                     WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_task_poll(w, b + ((weft_task)7 << 32), &st, NULL, 0),
                     WEFT_ERR_INVALID_HANDLE);
    // a wrong result size is refused and leaves the task alone
    char small[3];
    assert_int_equal(weft_task_wait(w, b, &st, small, sizeof small), WEFT_ERR_SIZE_MISMATCH);
    assert_int_equal(st.state, WEFT_TASK_STATE_NONE);
    assert_int_equal(weft_task_wait(w, b, &st, &r, sizeof r), WEFT_OK);
    assert_int_equal(r, 6);
    // detach twice: the second is refused (a double free, never a crash)
    weft_task c = spawn_sum(w, 1, 0, NULL, NULL);
    assert_int_equal(weft_task_detach(w, c), WEFT_OK);
    assert_int_equal(weft_task_detach(w, c), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_task_poll(w, c, &st, NULL, 0), WEFT_ERR_INVALID_HANDLE);
    // arguments
    assert_int_equal(weft_task_poll(w, b, NULL, NULL, 0), WEFT_ERR_INVALID_ARG);
    weft_task_desc d;
    memset(&d, 0, sizeof d);
    weft_task t = 5;
    assert_int_equal(weft_task_spawn(w, &d, &t), WEFT_ERR_INVALID_ARG);
    assert_int_equal(t, 0);
    d.fn = sum_task;
    d._end_canary = 1;
    assert_int_equal(weft_task_spawn(w, &d, &t), WEFT_ERR_INVALID_ARG);
    d._end_canary = 0;
    d.pool = (weft_task_pool)7;
    assert_int_equal(weft_task_spawn(w, &d, &t), WEFT_ERR_INVALID_ARG);
    d.pool = WEFT_TASK_POOL_IO;
    d.flags = 0x10;
    assert_int_equal(weft_task_spawn(w, &d, &t), WEFT_ERR_INVALID_ARG);
    d.flags = 0;
    d.input_size = 4;
    assert_int_equal(weft_task_spawn(w, &d, &t), WEFT_ERR_INVALID_ARG);
    d.input_size = 0;
    d.result_size = ((size_t)1 << 30) + 1;
    assert_int_equal(weft_task_spawn(w, &d, &t), WEFT_ERR_CAPACITY);
    assert_int_equal(weft_task_spawn(NULL, &d, &t), WEFT_ERR_INVALID_HANDLE);
    // drain the detached task before the fixture checks the bytes
    int64_t start = now_ns();
    while (weft_world_task_count(w) != 0) {
        assert_int_equal(weft_tasks_tick(w), WEFT_OK);
        assert_true(now_ns() - start < SPIN_LIMIT_NS);
        sched_yield();
    }
}

// Out of memory at spawn: every failing allocation is reported as
// OUT_OF_MEMORY with nothing queued and nothing held, and the next spawn
// works.
static void test_spawn_out_of_memory(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_task_outcome st;
    int64_t r;
    // the set and its pools exist, and a live task holds the one record:
    // a spawn needs a new one (the input block, then the record, can fail)
    weft_task first = spawn_sum(w, 2, 0, NULL, NULL);
    int failed = 0;
    for (int64_t n = 1; n < 16; n++) {
        int64_t live = tw_alloc_live_bytes(&f->alloc);
        int32_t count = weft_world_task_count(w);
        sum_in in;
        memset(&in, 0, sizeof in);
        weft_task_desc d;
        memset(&d, 0, sizeof d);
        d.fn = sum_task;
        d.input = &in;
        d.input_size = sizeof in;
        d.result_size = sizeof(int64_t);
        weft_task t = 5;
        tw_alloc_fail_nth(&f->alloc, n, false);
        weft_status rc = weft_task_spawn(w, &d, &t);
        bool injected = tw_alloc_injected(&f->alloc) > 0;
        tw_alloc_disarm(&f->alloc);
        if (!injected) {
            assert_int_equal(rc, WEFT_OK);
            assert_int_equal(weft_task_wait(w, t, &st, &r, sizeof r), WEFT_OK);
            break;
        }
        failed++;
        assert_int_equal(rc, WEFT_ERR_OUT_OF_MEMORY);
        tw_expect_error(f, WEFT_ERR_OUT_OF_MEMORY, "weft_task_spawn");
        assert_int_equal(t, WEFT_TASK_NONE);
        assert_int_equal(weft_world_task_count(w), count);
        assert_int_equal(tw_alloc_live_bytes(&f->alloc), live);
    }
    assert_int_equal(failed, 2); // the block, then the record
    assert_int_equal(weft_task_wait(w, first, &st, &r, sizeof r), WEFT_OK);
    assert_int_equal(r, 1 + 2);
}

// ---- cancel ----

typedef struct gate {
    atomic_int open;     // the blocker returns once set
    atomic_int started;  // set by a task when it starts
    atomic_int runs;     // functions that ran
    atomic_int saw_cancel;
} gate;

static weft_status blocker_task(weft_task_ctx *ctx, const void *input, void *result,
                                void *user)
{
    (void)input;
    (void)result;
    gate *g = user;
    atomic_store(&g->started, 1);
    atomic_fetch_add(&g->runs, 1);
    int64_t start = now_ns();
    while (!atomic_load(&g->open)) {
        if (weft_task_cancelled(ctx)) {
            atomic_store(&g->saw_cancel, 1);
            return WEFT_OK; // ends CANCELLED whatever it returns
        }
        if (now_ns() - start > SPIN_LIMIT_NS) {
            return WEFT_ERR_INTERNAL;
        }
        sched_yield();
    }
    return WEFT_OK;
}

static weft_status count_task(weft_task_ctx *ctx, const void *input, void *result, void *user)
{
    (void)ctx;
    (void)input;
    (void)result;
    gate *g = user;
    atomic_fetch_add(&g->runs, 1);
    return WEFT_OK;
}

static weft_task spawn_fn(weft_world *w, weft_task_fn fn, void *user, weft_task_pool pool)
{
    weft_task_desc d;
    memset(&d, 0, sizeof d);
    d.fn = fn;
    d.user = user;
    d.pool = pool;
    weft_task t = 0;
    assert_int_equal(weft_task_spawn(w, &d, &t), WEFT_OK);
    return t;
}

// A queued task that is cancelled never runs: the pool's one thread is held
// by a blocker while the second task waits in the queue.
static void test_cancel_queued_never_runs(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    gate held = {0}, counted = {0};
#if WEFT_THREADS
    assert_int_equal(weft_world_set_task_threads(w, WEFT_TASK_POOL_ASYNC_COMPUTE, 1), WEFT_OK);
    atomic_store(&held.open, 0);
    weft_task blocker = spawn_fn(w, blocker_task, &held, WEFT_TASK_POOL_ASYNC_COMPUTE);
    int64_t start = now_ns();
    while (!atomic_load(&held.started)) { // the one thread is now busy
        assert_true(now_ns() - start < SPIN_LIMIT_NS);
        sched_yield();
    }
    // a pool with a task running cannot be resized
    assert_int_equal(weft_world_set_task_threads(w, WEFT_TASK_POOL_ASYNC_COMPUTE, 2),
                     WEFT_ERR_WRONG_PHASE);
#else
    atomic_store(&held.open, 1);
    weft_task blocker = spawn_fn(w, blocker_task, &held, WEFT_TASK_POOL_ASYNC_COMPUTE);
#endif
    weft_task queued = spawn_fn(w, count_task, &counted, WEFT_TASK_POOL_ASYNC_COMPUTE);
    assert_int_equal(weft_task_cancel(w, queued), WEFT_OK);
    assert_int_equal(weft_task_cancel(w, queued), WEFT_OK); // again: harmless
    weft_task_outcome st;
    assert_int_equal(weft_task_poll(w, queued, &st, NULL, 0), WEFT_OK);
    assert_int_equal(st.state, WEFT_TASK_STATE_CANCELLED);
    atomic_store(&held.open, 1);
    assert_int_equal(weft_task_wait(w, blocker, &st, NULL, 0), WEFT_OK);
    assert_int_equal(st.state, WEFT_TASK_STATE_READY);
    assert_int_equal(weft_tasks_tick(w), WEFT_OK);
    assert_int_equal(atomic_load(&counted.runs), 0);
    assert_int_equal(weft_world_task_count(w), 0);
}

// A running task sees the cancel flag and ends CANCELLED.
static void test_cancel_running_sees_flag(void **state)
{
    NEEDS_THREADS("the task runs on a pool thread while the driver cancels it");
    tw_fixture *f = *state;
    weft_world *w = f->w;
    gate g = {0};
    weft_task t = spawn_fn(w, blocker_task, &g, WEFT_TASK_POOL_IO);
    int64_t start = now_ns();
    while (!atomic_load(&g.started)) {
        assert_true(now_ns() - start < SPIN_LIMIT_NS);
        sched_yield();
    }
    weft_task_outcome st;
    assert_int_equal(weft_task_poll(w, t, &st, NULL, 0), WEFT_OK);
    assert_int_equal(st.state, WEFT_TASK_STATE_PENDING);
    assert_int_equal(weft_task_cancel(w, t), WEFT_OK);
    assert_int_equal(weft_task_wait(w, t, &st, NULL, 0), WEFT_OK);
    assert_int_equal(st.state, WEFT_TASK_STATE_CANCELLED);
    assert_int_equal(atomic_load(&g.saw_cancel), 1);
}

// ---- detach ----

static void test_detach_reclaims(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    gate g = {0};
    enum { N = 64 };
    for (int i = 0; i < N; i++) {
        weft_task t = spawn_fn(w, count_task, &g,
                               i % 2 ? WEFT_TASK_POOL_IO : WEFT_TASK_POOL_ASYNC_COMPUTE);
        assert_int_equal(weft_task_detach(w, t), WEFT_OK);
    }
    // cancel + detach: dropped entirely, also from the queue
    weft_task gone = spawn_fn(w, count_task, &g, WEFT_TASK_POOL_IO);
    assert_int_equal(weft_task_cancel(w, gone), WEFT_OK);
    assert_int_equal(weft_task_detach(w, gone), WEFT_OK);
    int64_t start = now_ns();
    while (weft_world_task_count(w) != 0) {
        assert_int_equal(weft_tasks_tick(w), WEFT_OK);
        assert_true(now_ns() - start < SPIN_LIMIT_NS);
        sched_yield();
    }
    assert_true(atomic_load(&g.runs) >= N); // the cancelled one may have started
    assert_true(atomic_load(&g.runs) <= N + 1);
}

// ---- results through commands ----

static int64_t live_entities(weft_world *w)
{
    weft_world_stats ws;
    assert_int_equal(weft_world_get_stats(w, &ws), WEFT_OK);
    return ws.live_entities;
}

typedef struct cmd_fix {
    weft_component val;
    weft_entity target;
    int applies;
} cmd_fix;

// Spawns an entity holding the task's result and writes it to the target.
static void sum_apply(weft_world *w, weft_commands *cmds, const void *result, void *user)
{
    cmd_fix *cf = user;
    int64_t v;
    memcpy(&v, result, sizeof v);
    assert_non_null(weft_get(w, cf->target, cf->val, sizeof v)); // may read the world
    weft_value val = {cf->val, sizeof v, &v};
    assert_true(weft_cmd_spawn(cmds, &val, 1) != 0);
    assert_int_equal(weft_cmd_insert(cmds, cf->target, cf->val, &v, sizeof v), WEFT_OK);
    weft_commands_destroy(cmds); // ignored: the buffer is weft's
    cf->applies++;
}

static void test_results_through_commands(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    cmd_fix cf = {0};
    cf.val = tw_comp(w, "task.Val", sizeof(int64_t), 0, WEFT_STORAGE_DEFAULT, 0);
    int64_t zero = 0;
    weft_value v0 = {cf.val, sizeof zero, &zero};
    cf.target = weft_spawn_with(w, &v0, 1);
    int64_t before = live_entities(w);

    // the sync point applies it
    weft_task t = spawn_sum(w, 5, 0, sum_apply, &cf);
    weft_task_outcome st;
    int64_t r = 0;
    int64_t start = now_ns();
    while (cf.applies == 0) {
        assert_int_equal(weft_task_poll(w, t, &st, &r, sizeof r), WEFT_OK);
        assert_int_equal(st.state, WEFT_TASK_STATE_PENDING); // not final before its apply
        assert_int_equal(weft_tasks_tick(w), WEFT_OK);
        assert_true(now_ns() - start < SPIN_LIMIT_NS);
        sched_yield();
    }
    assert_int_equal(weft_task_poll(w, t, &st, &r, sizeof r), WEFT_OK);
    assert_int_equal(st.state, WEFT_TASK_STATE_READY);
    assert_int_equal(r, 15);
    assert_int_equal(live_entities(w), before + 1);
    const int64_t *got = weft_get(w, cf.target, cf.val, sizeof *got);
    assert_non_null(got);
    assert_int_equal(*got, 15);

    // wait on the driver completes it at once (apply and its commands)
    weft_task u = spawn_sum(w, 6, 0, sum_apply, &cf);
    assert_int_equal(weft_task_wait(w, u, &st, &r, sizeof r), WEFT_OK);
    assert_int_equal(st.state, WEFT_TASK_STATE_READY);
    assert_int_equal(cf.applies, 2);
    got = weft_get(w, cf.target, cf.val, sizeof *got);
    assert_int_equal(*got, 21);
    assert_int_equal(live_entities(w), before + 2);

    // a deterministic task cannot be waited for before its sync point
    weft_task d = spawn_sum(w, 1, WEFT_TASK_DETERMINISTIC, sum_apply, &cf);
    assert_int_equal(weft_task_wait(w, d, &st, &r, sizeof r), WEFT_ERR_WRONG_PHASE);
    tw_expect_error(f, WEFT_ERR_WRONG_PHASE, "deterministic");
    assert_int_equal(weft_tasks_tick(w), WEFT_OK); // due after one sync point
    assert_int_equal(weft_task_poll(w, d, &st, &r, sizeof r), WEFT_OK);
    assert_int_equal(st.state, WEFT_TASK_STATE_READY);
    assert_int_equal(cf.applies, 3);

    // a cancelled task's apply step never runs
    weft_task c = spawn_sum(w, 2, WEFT_TASK_DETERMINISTIC, sum_apply, &cf);
    assert_int_equal(weft_task_cancel(w, c), WEFT_OK);
    assert_int_equal(weft_tasks_tick(w), WEFT_OK);
    assert_int_equal(weft_task_poll(w, c, &st, &r, sizeof r), WEFT_OK);
    assert_int_equal(st.state, WEFT_TASK_STATE_CANCELLED);
    assert_int_equal(cf.applies, 3);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- systems spawn and poll ----

#define SYS_COUNT 4
#define SYS_TASKS 6

typedef struct sys_slot {
    weft_world *w; // a parallel system reaches the world through its user data
    weft_task tasks[SYS_TASKS];
    int64_t results[SYS_TASKS];
    int ready;
    bool spawned;
    int spawned_off_driver; // spawns made on a worker other than 0
    int errors;
} sys_slot;

static sys_slot g_slots[SYS_COUNT];

static void spawning_system(weft_system_ctx *ctx, void *user)
{
    sys_slot *s = user;
    weft_world *w = s->w;
    if (!s->spawned) {
        s->spawned = true;
        for (int i = 0; i < SYS_TASKS; i++) {
            sum_in in;
            memset(&in, 0, sizeof in);
            in.count = 1;
            in.values[0] = (int64_t)(s - g_slots) * 100 + i;
            weft_task_desc d;
            memset(&d, 0, sizeof d);
            d.fn = sum_task;
            d.input = &in;
            d.input_size = sizeof in;
            d.result_size = sizeof(int64_t);
            d.pool = i % 2 ? WEFT_TASK_POOL_IO : WEFT_TASK_POOL_ASYNC_COMPUTE;
            if (weft_task_spawn(w, &d, &s->tasks[i]) != WEFT_OK) {
                s->errors++;
            }
        }
        if (weft_system_worker(ctx) > 0) {
            s->spawned_off_driver++;
        }
        // busy a little, so the other systems start on other workers
        int64_t t0 = now_ns();
        while (now_ns() - t0 < 2000000) {
            sched_yield();
        }
        return;
    }
    for (int i = 0; i < SYS_TASKS; i++) {
        if (s->tasks[i] == 0) {
            continue;
        }
        weft_task_outcome st;
        if (weft_task_poll(w, s->tasks[i], &st, &s->results[i], sizeof(int64_t)) != WEFT_OK) {
            s->errors++;
        }
        if (st.state == WEFT_TASK_STATE_READY) {
            s->tasks[i] = 0;
            s->ready++;
        }
    }
}

static void test_spawn_and_poll_from_systems(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    memset(g_slots, 0, sizeof g_slots);
#if WEFT_THREADS
    assert_int_equal(weft_world_set_threads(w, 4), WEFT_OK);
#endif
    weft_schedule *s = weft_schedule_create(w, "tasks");
    assert_non_null(s);
    for (int k = 0; k < SYS_COUNT; k++) {
        char name[32];
        snprintf(name, sizeof name, "spawner%d", k);
        weft_system_desc d;
        memset(&d, 0, sizeof d);
        d.name = name;
        d.fn = spawning_system;
        d.user = &g_slots[k];
        g_slots[k].w = w;
        assert_int_not_equal(weft_schedule_add_system(s, &d), 0);
    }
    int64_t start = now_ns();
    int ready = 0;
    while (ready < SYS_COUNT * SYS_TASKS) {
        assert_int_equal(weft_schedule_run(s, 0.016), WEFT_OK);
        assert_int_equal(weft_tasks_tick(w), WEFT_OK);
        ready = 0;
        for (int k = 0; k < SYS_COUNT; k++) {
            ready += g_slots[k].ready;
        }
        assert_true(now_ns() - start < SPIN_LIMIT_NS);
    }
    int off_driver = 0;
    for (int k = 0; k < SYS_COUNT; k++) {
        assert_int_equal(g_slots[k].errors, 0);
        off_driver += g_slots[k].spawned_off_driver;
        for (int i = 0; i < SYS_TASKS; i++) {
            assert_int_equal(g_slots[k].results[i], k * 100 + i);
        }
    }
#if WEFT_THREADS
    assert_true(off_driver > 0); // some spawns came from worker threads
#else
    assert_int_equal(off_driver, 0);
#endif
    assert_int_equal(weft_world_task_count(w), 0);
}

// ---- pools ----

static void test_pool_sizes(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    // Bevy's TaskPoolOptions defaults: 25% of the CPUs each (IO first),
    // rounded, limited by what remains, clamped to 1..4
    static const uint32_t cpus[] = {1, 2, 3, 4, 6, 8, 12, 16, 64};
    static const uint32_t io[] = {1, 1, 1, 1, 2, 2, 3, 4, 4};
    static const uint32_t ac[] = {1, 1, 1, 1, 2, 2, 3, 4, 4};
    for (size_t i = 0; i < sizeof cpus / sizeof cpus[0]; i++) {
        assert_int_equal(wf_task_default_threads(1, cpus[i]), io[i]);
        assert_int_equal(wf_task_default_threads(0, cpus[i]), ac[i]);
    }
    assert_int_equal(weft_world_set_task_threads(w, WEFT_TASK_POOL_COUNT, 1),
                     WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_world_set_task_threads(w, WEFT_TASK_POOL_IO, -1),
                     WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_world_task_threads(w, WEFT_TASK_POOL_COUNT), 0);
#if WEFT_THREADS
    assert_true(weft_world_task_threads(w, WEFT_TASK_POOL_IO) >= 1);
    assert_int_equal(weft_world_set_task_threads(w, WEFT_TASK_POOL_IO, 3), WEFT_OK);
    assert_int_equal(weft_world_task_threads(w, WEFT_TASK_POOL_IO), 3);
    // the three threads start on the first spawn; then the pool is idle and
    // may be resized again
    weft_task t = spawn_sum(w, 3, 0, NULL, NULL);
    weft_task_outcome st;
    assert_int_equal(weft_task_wait(w, t, &st, NULL, 0), WEFT_OK);
    assert_int_equal(weft_world_set_task_threads(w, WEFT_TASK_POOL_IO, 0), WEFT_OK);
    assert_int_equal(weft_world_task_threads(w, WEFT_TASK_POOL_IO),
                     (int32_t)wf_task_default_threads(1, wf_thread_cpu_count()));
#else
    assert_int_equal(weft_world_set_task_threads(w, WEFT_TASK_POOL_IO, 2),
                     WEFT_ERR_UNSUPPORTED);
    tw_expect_error(f, WEFT_ERR_UNSUPPORTED, "WEFT_THREADS=OFF");
    assert_int_equal(weft_world_set_task_threads(w, WEFT_TASK_POOL_IO, 0), WEFT_OK);
    assert_int_equal(weft_world_task_threads(w, WEFT_TASK_POOL_IO), 0);
#endif
}

// ---- shutdown ----

static gate g_shut;

static weft_status never_task(weft_task_ctx *ctx, const void *input, void *result,
                              void *user)
{
    (void)ctx;
    (void)input;
    (void)result;
    (void)user;
    atomic_fetch_add(&g_shut.runs, 1);
    return WEFT_OK;
}

static void never_apply(weft_world *w, weft_commands *cmds, const void *result, void *user)
{
    (void)w;
    (void)cmds;
    (void)result;
    (void)user;
    fail_msg("an apply step ran during world destruction");
}

// The world is destroyed while tasks run, wait in the queue, are detached
// and have apply steps pending: running ones see the cancel flag and are
// joined, queued ones never run, nothing is applied, and every byte comes
// back (tw_fixture_free asserts zero live bytes; ASan checks the rest).
static void test_destroy_with_tasks_in_flight(void **state)
{
    (void)state;
    tw_fixture *f = tw_fixture_new();
    assert_non_null(f);
    weft_world *w = f->w;
    memset(&g_shut, 0, sizeof g_shut);
#if WEFT_THREADS
    assert_int_equal(weft_world_set_task_threads(w, WEFT_TASK_POOL_ASYNC_COMPUTE, 2), WEFT_OK);
    weft_task r1 = spawn_fn(w, blocker_task, &g_shut, WEFT_TASK_POOL_ASYNC_COMPUTE);
    weft_task r2 = spawn_fn(w, blocker_task, &g_shut, WEFT_TASK_POOL_ASYNC_COMPUTE);
    assert_int_equal(weft_task_detach(w, r2), WEFT_OK);
    (void)r1;
    int64_t start = now_ns();
    while (atomic_load(&g_shut.runs) < 2) { // both threads are busy
        assert_true(now_ns() - start < SPIN_LIMIT_NS);
        sched_yield();
    }
    int before = atomic_load(&g_shut.runs);
#else
    int before = 0;
#endif
    for (int i = 0; i < 16; i++) { // queued behind them (or, single: never ticked)
        weft_task_desc d;
        memset(&d, 0, sizeof d);
        d.fn = never_task;
        d.apply = never_apply;
        d.result_size = 64;
        d.input = &i;
        d.input_size = sizeof i;
        d.flags = i % 2 ? WEFT_TASK_DETERMINISTIC : 0;
        weft_task t = 0;
        assert_int_equal(weft_task_spawn(w, &d, &t), WEFT_OK);
        if (i % 3 == 0) {
            assert_int_equal(weft_task_detach(w, t), WEFT_OK);
        }
    }
    assert_true(weft_world_task_count(w) >= 16);
    tw_fixture_free(f); // destroys the world mid-task; asserts zero live bytes
#if WEFT_THREADS
    assert_int_equal(atomic_load(&g_shut.runs), before); // no queued task ran
    assert_int_equal(atomic_load(&g_shut.saw_cancel), 1);
#else
    assert_int_equal(atomic_load(&g_shut.runs), before);
#endif
}

// A task waits for another task of the same one-thread pool: the waited-for
// task runs inline on the waiting thread instead of deadlocking.
static weft_status outer_task(weft_task_ctx *ctx, const void *input, void *result, void *user)
{
    (void)ctx;
    (void)input;
    weft_world *w = user;
    weft_task inner = spawn_sum(w, 3, 0, NULL, NULL);
    weft_task_outcome st;
    int64_t r = 0;
    weft_status rc = weft_task_wait(w, inner, &st, &r, sizeof r);
    if (rc != WEFT_OK || st.state != WEFT_TASK_STATE_READY) {
        return weft_task_fail(ctx, WEFT_ERR_INTERNAL, "inner task not ready");
    }
    memcpy(result, &r, sizeof r);
    return WEFT_OK;
}

static void test_task_waits_for_task(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
#if WEFT_THREADS
    assert_int_equal(weft_world_set_task_threads(w, WEFT_TASK_POOL_ASYNC_COMPUTE, 1), WEFT_OK);
#endif
    weft_task_desc d;
    memset(&d, 0, sizeof d);
    d.fn = outer_task;
    d.user = w;
    d.result_size = sizeof(int64_t);
    weft_task t = 0;
    assert_int_equal(weft_task_spawn(w, &d, &t), WEFT_OK);
    int64_t r = 0;
    assert_int_equal(poll_until_final(w, t, &r, sizeof r), WEFT_TASK_STATE_READY);
    assert_int_equal(r, 6);
}

// The app ticks the tasks after every update.
static void test_app_ticks_tasks(void **state)
{
    (void)state;
    tw_fixture *f = tw_fixture_new();
    assert_non_null(f);
    weft_app_desc ad;
    memset(&ad, 0, sizeof ad);
    ad.world = f->w;
    weft_app *app = weft_app_create(&ad);
    assert_non_null(app);
    cmd_fix cf = {0};
    cf.val = tw_comp(f->w, "task.AppVal", sizeof(int64_t), 0, WEFT_STORAGE_DEFAULT, 0);
    int64_t zero = 0;
    weft_value v0 = {cf.val, sizeof zero, &zero};
    cf.target = weft_spawn_with(f->w, &v0, 1);
    weft_task t = spawn_sum(f->w, 4, WEFT_TASK_DETERMINISTIC, sum_apply, &cf);
    assert_int_equal(cf.applies, 0);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(cf.applies, 1);
    weft_task_outcome st;
    int64_t r = 0;
    assert_int_equal(weft_task_poll(f->w, t, &st, &r, sizeof r), WEFT_OK);
    assert_int_equal(st.state, WEFT_TASK_STATE_READY);
    assert_int_equal(r, 10);
    weft_app_destroy(app);
    tw_fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_spawn_wait_poll, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(test_failure_carries_message, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(test_system_polls_failed_task, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(test_stale_and_forged_handles, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(test_spawn_out_of_memory, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_queued_never_runs, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_running_sees_flag, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(test_detach_reclaims, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(test_results_through_commands, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(test_spawn_and_poll_from_systems, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(test_pool_sizes, tw_setup, tw_teardown),
        cmocka_unit_test_setup_teardown(test_task_waits_for_task, tw_setup, tw_teardown),
        cmocka_unit_test(test_destroy_with_tasks_in_flight),
        cmocka_unit_test(test_app_ticks_tasks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

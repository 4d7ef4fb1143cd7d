// tests/unit/test_thread_pool.c - the work-stealing pool on 1, 2 and 4 workers.
// SPDX-License-Identifier: MIT
//
// Tasks record what happened in plain arrays (one slot per task, written by
// whichever worker ran it); the group wait makes those writes visible, and
// every assertion runs on the main thread after wait and destroy (join).
// The idle test checks that parked workers cost no CPU.
#define _POSIX_C_SOURCE 200809L // clock_gettime, nanosleep
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "task/thread_pool.h"

#define POOL_TASKS 100000u
#define POOL_GROUPS 10u
#define POOL_PARENTS 200u
#define POOL_CHILDREN 50u

typedef struct slot {
    uint32_t runs;   // times this task ran (must end at 1)
    uint32_t worker; // who ran it
} slot;

static const uint32_t worker_counts[] = {1, 2, 4};

static void count_task(void *arg, uint32_t worker)
{
    slot *s = arg;
    s->runs++;
    s->worker = worker;
}

static void pool_runs_every_task_once(void **state)
{
    (void)state;
    slot *slots = calloc(POOL_TASKS, sizeof *slots);
    wf_task *tasks = calloc(POOL_TASKS, sizeof *tasks);
    assert_non_null(slots);
    assert_non_null(tasks);
    for (size_t c = 0; c < sizeof worker_counts / sizeof worker_counts[0]; c++) {
        uint32_t n = worker_counts[c];
        memset(slots, 0, POOL_TASKS * sizeof *slots);
        wf_allocator a;
        wf_allocator_init(&a, NULL);
        wf_thread_pool *pool = wf_thread_pool_create(&a, n);
        assert_non_null(pool);
        assert_int_equal(wf_thread_pool_worker_count(pool), n);
        wf_task_group groups[POOL_GROUPS];
        for (uint32_t g = 0; g < POOL_GROUPS; g++) {
            wf_task_group_init(&groups[g]);
        }
        // Interleave the groups, then wait for them one by one.
        for (uint32_t i = 0; i < POOL_TASKS; i++) {
            tasks[i] = (wf_task){.fn = count_task, .arg = &slots[i],
                                 .group = &groups[i % POOL_GROUPS]};
            wf_thread_pool_submit(pool, &tasks[i]);
        }
        for (uint32_t g = 0; g < POOL_GROUPS; g++) {
            wf_thread_pool_wait(pool, &groups[g]);
        }
        wf_thread_pool_destroy(pool);
        assert_int_equal(a.live_bytes, 0);
        uint32_t wrong = 0, bad_worker = 0, by_zero = 0;
        for (uint32_t i = 0; i < POOL_TASKS; i++) {
            wrong += slots[i].runs != 1;
            bad_worker += slots[i].worker >= n;
            by_zero += slots[i].worker == 0;
        }
        assert_int_equal(wrong, 0);
        assert_int_equal(bad_worker, 0);
        if (n == 1) {
            assert_int_equal(by_zero, POOL_TASKS);
        }
    }
    free(tasks);
    free(slots);
}

// ---- nested submits and waits from inside tasks ----

typedef struct nest {
    wf_thread_pool *pool;
    wf_task_group *outer;   // group the children join (NULL: parent's own group)
    wf_task *children;      // POOL_CHILDREN task records for this parent
    slot *child_slots;      // POOL_CHILDREN result slots
    slot self;              // the parent's own result
    uint32_t waited_on;     // worker that ran the inner wait
} nest;

static void parent_task(void *arg, uint32_t worker)
{
    nest *ne = arg;
    ne->self.runs++;
    ne->self.worker = worker;
    wf_task_group inner;
    wf_task_group_init(&inner);
    wf_task_group *g = ne->outer ? ne->outer : &inner;
    for (uint32_t k = 0; k < POOL_CHILDREN; k++) {
        ne->children[k] = (wf_task){.fn = count_task, .arg = &ne->child_slots[k],
                                    .group = g};
        wf_thread_pool_submit(ne->pool, &ne->children[k]);
    }
    if (!ne->outer) {
        // A wait from a worker thread, which keeps running tasks meanwhile.
        wf_thread_pool_wait(ne->pool, &inner);
        ne->waited_on = worker;
    }
}

static void pool_nested_submits(void **state)
{
    (void)state;
    nest *nests = calloc(POOL_PARENTS, sizeof *nests);
    wf_task *parents = calloc(POOL_PARENTS, sizeof *parents);
    wf_task *children = calloc(POOL_PARENTS * POOL_CHILDREN, sizeof *children);
    slot *child_slots = calloc(POOL_PARENTS * POOL_CHILDREN, sizeof *child_slots);
    assert_non_null(nests);
    assert_non_null(parents);
    assert_non_null(children);
    assert_non_null(child_slots);
    for (size_t c = 0; c < sizeof worker_counts / sizeof worker_counts[0]; c++) {
        uint32_t n = worker_counts[c];
        for (int mode = 0; mode < 2; mode++) {
            memset(nests, 0, POOL_PARENTS * sizeof *nests);
            memset(child_slots, 0, POOL_PARENTS * POOL_CHILDREN * sizeof *child_slots);
            wf_allocator a;
            wf_allocator_init(&a, NULL);
            wf_thread_pool *pool = wf_thread_pool_create(&a, n);
            assert_non_null(pool);
            wf_task_group group;
            wf_task_group_init(&group);
            for (uint32_t i = 0; i < POOL_PARENTS; i++) {
                // mode 0: children join the outer group (worker 0 waits for
                // all); mode 1: each parent waits for its own children.
                nests[i] = (nest){.pool = pool, .outer = mode == 0 ? &group : NULL,
                                  .children = &children[i * POOL_CHILDREN],
                                  .child_slots = &child_slots[i * POOL_CHILDREN],
                                  .waited_on = UINT32_MAX};
                parents[i] = (wf_task){.fn = parent_task, .arg = &nests[i],
                                       .group = &group};
                wf_thread_pool_submit(pool, &parents[i]);
            }
            wf_thread_pool_wait(pool, &group);
            wf_thread_pool_destroy(pool);
            assert_int_equal(a.live_bytes, 0);
            uint32_t wrong = 0;
            for (uint32_t i = 0; i < POOL_PARENTS; i++) {
                wrong += nests[i].self.runs != 1;
                wrong += nests[i].self.worker >= n;
                if (mode == 1) {
                    wrong += nests[i].waited_on != nests[i].self.worker;
                }
            }
            for (uint32_t i = 0; i < POOL_PARENTS * POOL_CHILDREN; i++) {
                wrong += child_slots[i].runs != 1;
                wrong += child_slots[i].worker >= n;
            }
            assert_int_equal(wrong, 0);
        }
    }
    free(child_slots);
    free(children);
    free(parents);
    free(nests);
}

// ---- lifecycle ----

static void pool_shutdown_with_nothing_queued(void **state)
{
    (void)state;
    for (int round = 0; round < 20; round++) {
        for (size_t c = 0; c < sizeof worker_counts / sizeof worker_counts[0]; c++) {
            wf_allocator a;
            wf_allocator_init(&a, NULL);
            wf_thread_pool *pool = wf_thread_pool_create(&a, worker_counts[c]);
            assert_non_null(pool);
            wf_thread_pool_destroy(pool);
            assert_int_equal(a.live_bytes, 0);
        }
    }
    // 0 means one worker per online CPU.
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    wf_thread_pool *pool = wf_thread_pool_create(&a, 0);
    assert_non_null(pool);
    assert_int_equal(wf_thread_pool_worker_count(pool), wf_thread_cpu_count());
    wf_thread_pool_destroy(pool);
    assert_int_equal(a.live_bytes, 0);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void pool_idle_workers_park(void **state)
{
    (void)state;
    slot slots[64] = {0};
    wf_task tasks[64];
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    wf_thread_pool *pool = wf_thread_pool_create(&a, 4);
    assert_non_null(pool);
    // Wake everyone once, so the workers have been through the spin phase.
    wf_task_group group;
    wf_task_group_init(&group);
    for (uint32_t i = 0; i < 64; i++) {
        tasks[i] = (wf_task){.fn = count_task, .arg = &slots[i], .group = &group};
        wf_thread_pool_submit(pool, &tasks[i]);
    }
    wf_thread_pool_wait(pool, &group);
    for (uint32_t i = 0; i < 64; i++) {
        assert_int_equal(slots[i].runs, 1);
    }
    // With nothing to do, the three started workers end parked on the
    // semaphore (the deadline only bounds a stuck test; no timing is
    // judged), and nothing wakes them while no work comes.
    uint32_t parked = 0;
    for (int waited = 0; waited < 10000 && parked < 3; waited += 5) {
        sleep_ms(5);
        parked = wf_thread_pool_parked(pool);
    }
    assert_int_equal(parked, 3);
    for (int i = 0; i < 10; i++) {
        sleep_ms(10);
        assert_int_equal(wf_thread_pool_parked(pool), 3);
    }
    // Work still runs on them.
    wf_task_group_init(&group);
    for (uint32_t i = 0; i < 64; i++) {
        tasks[i] = (wf_task){.fn = count_task, .arg = &slots[i], .group = &group};
        wf_thread_pool_submit(pool, &tasks[i]);
    }
    wf_thread_pool_wait(pool, &group);
    for (uint32_t i = 0; i < 64; i++) {
        assert_int_equal(slots[i].runs, 2);
    }
    wf_thread_pool_destroy(pool);
}

// ---- worker identity is per pool ----

// Destroying one pool leaves the caller worker 0 of another: the worker
// index used to be one thread-local shared by every pool, and destroy
// reset it, so the next submit to the surviving pool indexed worker -1.
static void pool_destroy_keeps_other_pools_worker0(void **state)
{
    (void)state;
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    wf_thread_pool *pa = wf_thread_pool_create(&a, 2);
    assert_non_null(pa);
    wf_thread_pool *pb = wf_thread_pool_create(&a, 2);
    assert_non_null(pb);
    assert_int_equal(wf_thread_pool_self_index(pa), 0);
    assert_int_equal(wf_thread_pool_self_index(pb), 0);
    wf_thread_pool_destroy(pb);
    assert_int_equal(wf_thread_pool_self_index(pa), 0);
    slot slots[64];
    wf_task tasks[64];
    memset(slots, 0, sizeof slots);
    wf_task_group g;
    wf_task_group_init(&g);
    for (uint32_t i = 0; i < 64; i++) {
        tasks[i] = (wf_task){count_task, &slots[i], &g, false};
        assert_true(wf_thread_pool_submit(pa, &tasks[i]));
    }
    assert_true(wf_thread_pool_wait(pa, &g));
    for (uint32_t i = 0; i < 64; i++) {
        assert_int_equal(slots[i].runs, 1);
    }
    wf_thread_pool_destroy(pa);
    assert_int_equal(wf_alloc_live(&a), 0);
}

typedef struct foreign {
    wf_thread_pool *other;   // a pool the task's thread does not belong to
    int32_t self_in_other;   // its index there (-1 expected)
    bool helped;             // wf_thread_pool_help(other) result
    bool submitted;          // wf_thread_pool_submit(other) result
    bool waited;             // wf_thread_pool_wait(other) result
    uint32_t worker;
} foreign;

static void foreign_task(void *arg, uint32_t worker)
{
    foreign *f = arg;
    wf_task t = {count_task, NULL, NULL, false};
    f->worker = worker;
    f->self_in_other = wf_thread_pool_self_index(f->other);
    f->helped = wf_thread_pool_help(f->other);
    f->submitted = wf_thread_pool_submit(f->other, &t);
    wf_task_group g;
    wf_task_group_init(&g);
    f->waited = wf_thread_pool_wait(f->other, &g);
}

// A worker thread of one pool is not a worker of another: there it gets
// index -1 and every call is refused, instead of indexing the other pool's
// workers with its own index (out of bounds when that pool is smaller).
static void pool_refuses_threads_of_other_pools(void **state)
{
    (void)state;
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    wf_thread_pool *small = wf_thread_pool_create(&a, 1);
    assert_non_null(small);
    wf_thread_pool *big = wf_thread_pool_create(&a, 4);
    assert_non_null(big);
    // the creator is worker 0 of both; make it a stranger to `small`
    wf_thread_pool_leave(small, NULL);
    assert_int_equal(wf_thread_pool_self_index(small), -1);
    wf_task t = {count_task, NULL, NULL, false};
    assert_false(wf_thread_pool_submit(small, &t));
    assert_false(wf_thread_pool_help(small));
    foreign f[256];
    wf_task tasks[256];
    memset(f, 0, sizeof f);
    wf_task_group g;
    wf_task_group_init(&g);
    for (uint32_t i = 0; i < 256; i++) {
        f[i].other = small;
        f[i].self_in_other = 7;
        f[i].helped = f[i].submitted = f[i].waited = true;
        tasks[i] = (wf_task){foreign_task, &f[i], &g, false};
        assert_true(wf_thread_pool_submit(big, &tasks[i]));
    }
    assert_true(wf_thread_pool_wait(big, &g));
    for (uint32_t i = 0; i < 256; i++) {
        assert_int_equal(f[i].self_in_other, -1);
        assert_false(f[i].helped);
        assert_false(f[i].submitted);
        assert_false(f[i].waited);
    }
    // entering binds the caller as worker 0 again; leaving restores
    void *before = wf_thread_pool_enter(small);
    assert_null(before);
    assert_int_equal(wf_thread_pool_self_index(small), 0);
    wf_thread_pool_leave(small, before);
    assert_int_equal(wf_thread_pool_self_index(small), -1);
    wf_thread_pool_destroy(big);
    wf_thread_pool_destroy(small);
    assert_int_equal(wf_alloc_live(&a), 0);
}

// ---- several callers on one pool ----

typedef struct attach_arg {
    wf_thread_pool *pool;
    void *token;
    int32_t index;        // self index while attached
    int32_t after;        // self index after detach
    pthread_barrier_t *hold;
} attach_arg;

static void *attach_thread(void *arg)
{
    attach_arg *a = arg;
    a->token = wf_thread_pool_attach(a->pool);
    a->index = wf_thread_pool_self_index(a->pool);
    pthread_barrier_wait(a->hold); // every thread holds its slot here
    pthread_barrier_wait(a->hold); // the main thread has checked
    wf_thread_pool_detach(a->pool, a->token);
    a->after = wf_thread_pool_self_index(a->pool);
    return NULL;
}

// Outside threads attach as callers with slots of their own (indices
// from the worker count up), at most WF_POOL_MAX_CALLERS at once; the
// next one gets NULL; a member's attach changes nothing.
static void pool_attach_caller_slots(void **state)
{
    (void)state;
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    wf_thread_pool *p = wf_thread_pool_create(&a, 3);
    assert_non_null(p);
    void *mine = wf_thread_pool_attach(p);
    assert_non_null(mine);
    assert_int_equal(wf_thread_pool_self_index(p), 0);
    enum { N = WF_POOL_MAX_CALLERS + 1 };
    pthread_barrier_t hold;
    pthread_barrier_init(&hold, NULL, N + 1);
    attach_arg args[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        args[i] = (attach_arg){p, NULL, -2, -2, &hold};
        assert_int_equal(pthread_create(&th[i], NULL, attach_thread, &args[i]), 0);
    }
    pthread_barrier_wait(&hold);
    int refused = 0;
    uint32_t seen = 0;
    for (int i = 0; i < N; i++) {
        if (!args[i].token) {
            refused++;
            assert_int_equal(args[i].index, -1);
        } else {
            assert_true(args[i].index >= 3 && args[i].index < 3 + (int)WF_POOL_MAX_CALLERS);
            uint32_t bit = 1u << (args[i].index - 3);
            assert_false(seen & bit); // distinct slots
            seen |= bit;
        }
    }
    assert_int_equal(refused, 1);
    pthread_barrier_wait(&hold);
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].after, -1);
    }
    pthread_barrier_destroy(&hold);
    wf_thread_pool_detach(p, mine);
    assert_int_equal(wf_thread_pool_self_index(p), 0); // still worker 0
    wf_thread_pool_destroy(p);
    assert_int_equal(wf_alloc_live(&a), 0);
}

// Two callers each run "runs" the way the executor does: a blocking helper
// task that works until its run is done, then chunk tasks the caller waits
// for. A caller waiting for its chunks must never start the other caller's
// helper (which would wait for the other run, whose caller might likewise
// be stuck in ours): a watchdog turns such a deadlock into a failure.
typedef struct fake_run {
    wf_thread_pool *pool;
    atomic_int done;
    wf_task helper;
    wf_task_group hg;
    wf_task chunks[16];
    slot slots[16];
    uint32_t rounds;
} fake_run;

static void helper_spin(void *arg, uint32_t worker)
{
    (void)worker;
    fake_run *r = arg;
    while (!atomic_load(&r->done)) {
        if (!wf_thread_pool_help(r->pool)) {
            sched_yield();
        }
    }
}

static void *caller_thread(void *arg)
{
    fake_run *r = arg;
    void *token = wf_thread_pool_attach(r->pool);
    if (!token) {
        return NULL; // rounds stays 0: the test fails
    }
    for (uint32_t k = 0; k < 300; k++) {
        atomic_store(&r->done, 0);
        wf_task_group_init(&r->hg);
        r->helper = (wf_task){helper_spin, r, &r->hg, true};
        wf_thread_pool_submit(r->pool, &r->helper);
        wf_task_group cg;
        wf_task_group_init(&cg);
        for (int i = 0; i < 16; i++) {
            r->chunks[i] = (wf_task){count_task, &r->slots[i], &cg, false};
            wf_thread_pool_submit(r->pool, &r->chunks[i]);
        }
        wf_thread_pool_wait(r->pool, &cg);
        atomic_store(&r->done, 1);
        wf_thread_pool_wait(r->pool, &r->hg);
        r->rounds++;
    }
    wf_thread_pool_detach(r->pool, token);
    return NULL;
}

// A thread waiting or helping in a pool never starts a blocking task
// another caller submitted (only started pool threads, at the top of
// their loop, or the submitter itself do), but it does take that
// caller's ordinary tasks.
typedef struct owner_arg {
    wf_thread_pool *pool;
    pthread_barrier_t *step;
    pthread_t ran_blocking;  // who ran the blocking task
    slot plain;
} owner_arg;

static void record_runner(void *arg, uint32_t worker)
{
    (void)worker;
    owner_arg *o = arg;
    o->ran_blocking = pthread_self();
}

static void *owner_thread(void *arg)
{
    owner_arg *o = arg;
    void *token = wf_thread_pool_attach(o->pool);
    wf_task_group g;
    wf_task_group_init(&g);
    wf_task blocking = {record_runner, o, &g, true};
    wf_thread_pool_submit(o->pool, &blocking);
    pthread_barrier_wait(o->step); // 1: submitted
    pthread_barrier_wait(o->step); // 2: the main thread tried to help
    wf_thread_pool_wait(o->pool, &g); // runs it itself
    wf_task plain = {count_task, &o->plain, &g, false};
    wf_thread_pool_submit(o->pool, &plain);
    pthread_barrier_wait(o->step); // 3: submitted
    pthread_barrier_wait(o->step); // 4: the main thread helped
    wf_thread_pool_wait(o->pool, &g);
    wf_thread_pool_detach(o->pool, token);
    return NULL;
}

static void pool_helpers_leave_blocking_tasks(void **state)
{
    (void)state;
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    wf_thread_pool *p = wf_thread_pool_create(&a, 1); // no pool thread
    assert_non_null(p);
    pthread_barrier_t step;
    pthread_barrier_init(&step, NULL, 2);
    static owner_arg o;
    memset(&o, 0, sizeof o);
    o.pool = p;
    o.step = &step;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, owner_thread, &o), 0);
    pthread_barrier_wait(&step); // 1
    for (int i = 0; i < 100; i++) {
        assert_false(wf_thread_pool_help(p)); // the blocking task stays
    }
    wf_task_group none;
    wf_task_group_init(&none);
    assert_true(wf_thread_pool_wait(p, &none));
    pthread_barrier_wait(&step); // 2
    pthread_barrier_wait(&step); // 3
    assert_true(wf_thread_pool_help(p)); // an ordinary task is taken
    pthread_barrier_wait(&step); // 4
    pthread_join(th, NULL);
    assert_true(pthread_equal(o.ran_blocking, th));
    assert_int_equal(o.plain.runs, 1);
    assert_int_equal(o.plain.worker, 0); // the main thread ran it
    pthread_barrier_destroy(&step);
    wf_thread_pool_destroy(p);
    assert_int_equal(wf_alloc_live(&a), 0);
}

static atomic_int g_callers_done;

static void *callers_watchdog(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1200 && !atomic_load(&g_callers_done); i++) {
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
    if (!atomic_load(&g_callers_done)) {
        fprintf(stderr, "watchdog: two callers on one pool deadlocked\n");
        fflush(stderr);
        _exit(3);
    }
    return NULL;
}

static void pool_two_callers_no_deadlock(void **state)
{
    (void)state;
    atomic_store(&g_callers_done, 0);
    pthread_t dog;
    assert_int_equal(pthread_create(&dog, NULL, callers_watchdog, NULL), 0);
    for (uint32_t workers = 1; workers <= 3; workers++) {
        wf_allocator a;
        wf_allocator_init(&a, NULL);
        wf_thread_pool *p = wf_thread_pool_create(&a, workers);
        assert_non_null(p);
        static fake_run runs[2];
        memset(runs, 0, sizeof runs);
        pthread_t th[2];
        for (int i = 0; i < 2; i++) {
            runs[i].pool = p;
            assert_int_equal(pthread_create(&th[i], NULL, caller_thread, &runs[i]), 0);
        }
        for (int i = 0; i < 2; i++) {
            pthread_join(th[i], NULL);
            assert_int_equal(runs[i].rounds, 300);
            for (int k = 0; k < 16; k++) {
                assert_int_equal(runs[i].slots[k].runs, 300);
            }
        }
        wf_thread_pool_destroy(p);
        assert_int_equal(wf_alloc_live(&a), 0);
    }
    atomic_store(&g_callers_done, 1);
    pthread_join(dog, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pool_runs_every_task_once),
        cmocka_unit_test(pool_nested_submits),
        cmocka_unit_test(pool_shutdown_with_nothing_queued),
        cmocka_unit_test(pool_idle_workers_park),
        cmocka_unit_test(pool_destroy_keeps_other_pools_worker0),
        cmocka_unit_test(pool_refuses_threads_of_other_pools),
        cmocka_unit_test(pool_attach_caller_slots),
        cmocka_unit_test(pool_helpers_leave_blocking_tasks),
        cmocka_unit_test(pool_two_callers_no_deadlock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

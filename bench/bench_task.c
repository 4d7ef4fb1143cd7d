/* bench/bench_task.c - the cost of a task that spans frames.
 * SPDX-License-Identifier: MIT
 *
 *  task_spawn_poll  what a task costs the thread that spawns and polls
 *                   it: the driver spawns 10,000 small tasks (a 64-byte
 *                   input copied at spawn, summed into an 8-byte result)
 *                   onto the async compute pool, one thread; once every
 *                   function has run (an untimed wait on a counter the
 *                   functions bump), it polls them in spawn order, taking
 *                   each result. The figure is the driver's CPU time of
 *                   the spawn loop plus the poll loop, per task: the
 *                   handoff to the pool's thread and its wake-ups, which
 *                   on a loaded machine swing by 2x from run to run, are
 *                   left out on both sides. The baseline, in the same run
 *                   and alternated with it, is the same work through a
 *                   hand-written pool a C programmer would write: one
 *                   pthread, a FIFO of malloc'd jobs (input copied) under
 *                   a mutex and a condition variable, a done flag read
 *                   under the mutex, the result copied out and the job
 *                   freed. The ratio is what weft's handles (a slot table
 *                   with generations), states, argument checks and error
 *                   reporting add per task. Every result is checked. In
 *                   the build without threads the weft side's tasks run
 *                   at weft_tasks_tick in the untimed wait.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_world.h"

enum { TK_TASKS = 10000, TK_VALUES = 8 };

static atomic_int tk_ran; /* functions run in this round, both sides */

typedef struct tk_input {
    int64_t v[TK_VALUES];
} tk_input;

static int64_t tk_work(const tk_input *in)
{
    int64_t s = 0;
    for (int i = 0; i < TK_VALUES; i++) {
        s += in->v[i];
    }
    return s;
}

static int64_t tk_expect(int32_t i)
{
    return (int64_t)TK_VALUES * i + (TK_VALUES * (TK_VALUES - 1)) / 2;
}

static void tk_fill(tk_input *in, int32_t i)
{
    for (int k = 0; k < TK_VALUES; k++) {
        in->v[k] = (int64_t)i + k;
    }
}

/* ---- weft ---- */

static weft_status tk_task(weft_task_ctx *ctx, const void *input, void *result, void *user)
{
    (void)ctx;
    (void)user;
    int64_t s = tk_work(input);
    memcpy(result, &s, sizeof s);
    atomic_fetch_add_explicit(&tk_ran, 1, memory_order_release);
    return WEFT_OK;
}

/* Spawns, waits (untimed) and polls every task; returns the driver's CPU
 * ns of the spawn and poll loops. */
static double tk_run_weft(bench_world *b, weft_task *handles)
{
    weft_task_desc d;
    memset(&d, 0, sizeof d);
    d.fn = tk_task;
    d.input_size = sizeof(tk_input);
    d.result_size = sizeof(int64_t);
    tk_input in;
    atomic_store(&tk_ran, 0);
    uint64_t t0 = bench_cpu_ns();
    for (int32_t i = 0; i < TK_TASKS; i++) {
        tk_fill(&in, i);
        d.input = &in;
        bench_world_expect(b, "weft_task_spawn", weft_task_spawn(b->w, &d, &handles[i]));
    }
    uint64_t t1 = bench_cpu_ns();
    while (atomic_load_explicit(&tk_ran, memory_order_acquire) < TK_TASKS) {
        bench_world_expect(b, "weft_tasks_tick", weft_tasks_tick(b->w)); /* no threads: runs them */
        sched_yield();
    }
    uint64_t t2 = bench_cpu_ns();
    int32_t left = TK_TASKS;
    int32_t first = 0; /* every task before it is taken */
    while (left > 0) {
        for (int32_t i = first; i < TK_TASKS; i++) {
            if (!handles[i]) {
                continue;
            }
            weft_task_outcome st;
            int64_t r;
            bench_world_expect(b, "weft_task_poll",
                               weft_task_poll(b->w, handles[i], &st, &r, sizeof r));
            if (st.state == WEFT_TASK_STATE_PENDING) {
                continue; /* its end is being recorded */
            }
            if (st.state != WEFT_TASK_STATE_READY || r != tk_expect(i)) {
                bench_fail(b->scenario, "weft_task_poll", "wrong state or result");
            }
            handles[i] = 0;
            left--;
            if (i == first) {
                first++;
            }
        }
    }
    uint64_t t3 = bench_cpu_ns();
    return (double)(t1 - t0) + (double)(t3 - t2);
}

/* ---- the hand-written pool ---- */

typedef struct tk_job {
    struct tk_job *next;
    tk_input in;
    int64_t result;
    int done;
} tk_job;

typedef struct tk_pool {
    pthread_mutex_t mu;
    pthread_cond_t work;
    tk_job *head, *tail;
    int stop;
    pthread_t thread;
} tk_pool;

static void *tk_pool_main(void *arg)
{
    tk_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stop) {
            pthread_cond_wait(&p->work, &p->mu);
        }
        tk_job *j = p->head;
        if (!j) {
            break;
        }
        p->head = j->next;
        if (!p->head) {
            p->tail = NULL;
        }
        pthread_mutex_unlock(&p->mu);
        int64_t r = tk_work(&j->in);
        atomic_fetch_add_explicit(&tk_ran, 1, memory_order_release);
        pthread_mutex_lock(&p->mu);
        j->result = r;
        j->done = 1;
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* As tk_run_weft, through the hand-written pool. */
static double tk_run_baseline(tk_pool *p, tk_job **jobs)
{
    atomic_store(&tk_ran, 0);
    uint64_t t0 = bench_cpu_ns();
    for (int32_t i = 0; i < TK_TASKS; i++) {
        tk_job *j = bench_xmalloc(sizeof *j);
        tk_fill(&j->in, i);
        j->next = NULL;
        j->done = 0;
        pthread_mutex_lock(&p->mu);
        if (p->tail) {
            p->tail->next = j;
        } else {
            p->head = j;
        }
        p->tail = j;
        pthread_cond_signal(&p->work);
        pthread_mutex_unlock(&p->mu);
        jobs[i] = j;
    }
    uint64_t t1 = bench_cpu_ns();
    while (atomic_load_explicit(&tk_ran, memory_order_acquire) < TK_TASKS) {
        sched_yield();
    }
    uint64_t t2 = bench_cpu_ns();
    int32_t left = TK_TASKS;
    int32_t first = 0;
    while (left > 0) {
        for (int32_t i = first; i < TK_TASKS; i++) {
            tk_job *j = jobs[i];
            if (!j) {
                continue;
            }
            pthread_mutex_lock(&p->mu);
            int done = j->done;
            int64_t r = j->result;
            pthread_mutex_unlock(&p->mu);
            if (!done) {
                continue;
            }
            if (r != tk_expect(i)) {
                bench_fail("task_spawn_poll", "baseline", "wrong result");
            }
            free(j);
            jobs[i] = NULL;
            left--;
            if (i == first) {
                first++;
            }
        }
    }
    uint64_t t3 = bench_cpu_ns();
    return (double)(t1 - t0) + (double)(t3 - t2);
}

void bench_task_spawn_poll(const bench_cfg *cfg, const bench_data *data)
{
    (void)data;
    bench_world b;
    bench_world_init(&b, "task_spawn_poll", 0, WEFT_STORAGE_DEFAULT, NULL);
    if (weft_max_threads() > 1) {
        bench_world_expect(&b, "weft_world_set_task_threads",
                           weft_world_set_task_threads(b.w, WEFT_TASK_POOL_ASYNC_COMPUTE, 1));
    }
    tk_pool p;
    memset(&p, 0, sizeof p);
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.work, NULL);
    if (pthread_create(&p.thread, NULL, tk_pool_main, &p) != 0) {
        bench_fail("task_spawn_poll", "pthread_create", "the baseline's thread");
    }
    weft_task *handles = bench_xmalloc(sizeof *handles * TK_TASKS);
    tk_job **jobs = bench_xmalloc(sizeof *jobs * TK_TASKS);
    int32_t reps = cfg->reps > 0 ? cfg->reps : 1;
    double *vw = bench_xmalloc(sizeof *vw * (size_t)reps);
    double *vb = bench_xmalloc(sizeof *vb * (size_t)reps);
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        double tw = tk_run_weft(&b, handles);
        double tb = tk_run_baseline(&p, jobs);
        if (weft_world_task_count(b.w) != 0) {
            bench_fail("task_spawn_poll", "weft_world_task_count", "tasks left behind");
        }
        if (r >= 0) {
            vw[r] = tw / TK_TASKS;
            vb[r] = tb / TK_TASKS;
            bench_trace(cfg, "task_spawn_poll", "weft", r, vw[r]);
            bench_trace(cfg, "task_spawn_poll", "baseline", r, vb[r]);
        }
    }
    pthread_mutex_lock(&p.mu);
    p.stop = 1;
    pthread_cond_broadcast(&p.work);
    pthread_mutex_unlock(&p.mu);
    pthread_join(p.thread, NULL);
    pthread_cond_destroy(&p.work);
    pthread_mutex_destroy(&p.mu);
    double w = bench_median(vw, reps);
    double base = bench_median(vb, reps);
    bench_report_ratio("task_spawn_poll 10k tasks, 1 thread vs pthread+mutex queue", "ns", w,
                       base, 2.0);
    bench_note("task_spawn_poll: the driver's CPU time to spawn, poll and take one task: %.0f ns "
               "through weft, %.0f ns through a hand-written pthread + mutex queue (ratio %.2f)",
               w, base, base > 0.0 ? w / base : 0.0);
    free(vw);
    free(vb);
    free(handles);
    free(jobs);
    bench_world_fini(&b);
}

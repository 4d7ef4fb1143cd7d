/* src/task/thread_pool.h - work-stealing thread pool; the caller is worker 0.
 * SPDX-License-Identifier: MIT
 *
 * A pool of N workers: N-1 threads it starts plus the thread that created
 * it, which is worker 0 and works only while it is inside
 * wf_thread_pool_wait (enkiTS style); other threads may attach as callers
 * (slots N and above) to submit and wait at the same time as worker 0. Each worker owns one Chase-Lev deque;
 * submit pushes onto the submitting worker's own deque and wakes one parked
 * worker; a worker pops its own deque first, then steals from the others
 * starting at a victim drawn from its private seed. A worker that finds
 * nothing spins a bounded number of rounds, then parks on a semaphore, so an
 * idle pool uses no CPU. Tasks are caller-owned (no allocation per task);
 * a task group counts its unfinished tasks, and waiting on it runs tasks
 * until the count is zero.
 *
 * Threads: create/destroy on the driving thread, which becomes worker 0;
 * submit and wait from worker 0 or from inside a task; never from unrelated
 * threads. Membership is kept per pool: a started worker thread knows its
 * pool worker through thread-local storage (it belongs to one pool for its
 * whole life), and each pool records which thread is its worker 0
 * (wf_thread_pool_enter/leave move that role, e.g. to the thread driving a
 * run). A thread may be worker 0 of several pools; creating or destroying
 * one pool never changes the membership of another. Calls from a thread
 * that is not a worker of the pool are refused (false), never indexed.
 * Memory: all of it
 * comes from the caller's wf_allocator at create, plus rare deque growth on
 * worker threads, which is serialized by the pool's allocation mutex.
 */
#ifndef WF_THREAD_POOL_H
#define WF_THREAD_POOL_H

#include <stdint.h>

#include "core/alloc.h"
#include "core/atomic.h"
#include "core/config.h"
#include "task/deque.h"

/* Empty rounds (own pop + one steal sweep) before an idle worker parks. */
#define WF_POOL_SPIN_ROUNDS 256u

typedef struct wf_thread_pool wf_thread_pool;

/* worker: index of the thread running the task, 0 .. count-1. */
typedef void (*wf_task_fn)(void *arg, uint32_t worker);

/* Counts unfinished tasks. Lives (caller-owned) until wait returns. */
typedef struct wf_task_group {
    _Alignas(WF_CACHE_LINE) wf_atomic_i64 pending; /* submitted, not finished */
} wf_task_group;

/* Caller-owned; must stay valid and unchanged from submit until its fn has
 * started. group may be NULL (fire and forget; nothing can wait for it). */
typedef struct wf_task {
    wf_task_fn fn;        /* the work */
    void *arg;            /* its argument */
    wf_task_group *group; /* decremented after fn returns, or NULL */
    /* fn may wait for work other threads are doing (a schedule run's
     * helper waits for the end of its run). Such a task is started only
     * by a started pool thread at the top of its loop, or by its own
     * submitter: never from inside a wait or help, so no thread waiting
     * on something can end up waiting on another waiter (no deadlock when
     * several callers share the pool). */
    bool blocking;
} wf_task;

/* Starts a pool of `workers` workers (0 = online CPUs), the calling thread
 * being worker 0. NULL on out of memory or if a thread cannot start. */
wf_thread_pool *wf_thread_pool_create(wf_allocator *alloc, uint32_t workers);
/* Sets the stop flag, wakes every worker and joins them; then frees the
 * pool. All submitted tasks must have finished (wait on their groups). */
void wf_thread_pool_destroy(wf_thread_pool *pool);
/* Number of workers including worker 0. */
uint32_t wf_thread_pool_worker_count(const wf_thread_pool *pool);

/* The calling thread's worker index in `pool` (0 .. count-1), or -1 when it
 * is not one of its workers. */
int32_t wf_thread_pool_self_index(const wf_thread_pool *pool);
/* True on a thread a pool started (worker 1 or above of some pool). */
bool wf_thread_pool_on_pool_thread(void);
/* Makes the calling thread worker 0 of `pool` and returns an opaque token
 * naming the previous worker 0 (NULL: none), for wf_thread_pool_leave.
 * Only while no task of the pool runs (between runs, on the driver). */
void *wf_thread_pool_enter(wf_thread_pool *pool);
/* Makes `prev` (a token from enter, or NULL for nobody) worker 0 again. */
void wf_thread_pool_leave(wf_thread_pool *pool, void *prev);

/* Makes the calling thread a caller of `pool` for one run: a token for
 * wf_thread_pool_detach. A thread that is already a worker of the pool
 * (worker 0, a started thread, an attached caller) gets a token that
 * changes nothing. Other threads take one of WF_POOL_MAX_CALLERS caller
 * slots, each with its own deque and worker index (count and above), so
 * several threads can submit and wait on one pool at the same time; NULL
 * when every slot is taken (the caller runs its work alone). */
void *wf_thread_pool_attach(wf_thread_pool *pool);
/* Gives back what attach took. The caller's tasks must all have finished
 * (every group waited on). */
void wf_thread_pool_detach(wf_thread_pool *pool, void *token);

void wf_task_group_init(wf_task_group *group);
/* Queues `task` on the calling worker's deque and wakes one parked worker;
 * if the deque cannot grow, the task runs inline. False, with nothing done,
 * when the calling thread is not a worker of `pool`. */
bool wf_thread_pool_submit(wf_thread_pool *pool, wf_task *task);
/* Runs one task (own deque first, then stolen, never a blocking task of
 * another thread) if there is one; false when none was found or the
 * caller is not a worker of `pool`. For waiters with their own exit
 * condition. */
bool wf_thread_pool_help(wf_thread_pool *pool);
/* Runs tasks (own deque first, then stolen, never a blocking task of
 * another thread) until group has no pending task. Everything the group's tasks wrote is visible on return. False at
 * once, without waiting, when the caller is not a worker of `pool`. */
bool wf_thread_pool_wait(wf_thread_pool *pool, wf_task_group *group);
/* Workers that announced they are going to sleep and were not woken since
 * (a parked worker blocks on the pool's semaphore: it uses no CPU). */
uint32_t wf_thread_pool_parked(wf_thread_pool *pool);

#endif

/* src/task/task.h - tasks that span frames: a task set and its two pools.
 * SPDX-License-Identifier: MIT
 *
 * The runtime behind weft_task (weft.h), with no ECS knowledge: a task set
 * owns task records (addressed by handles with generations) and two FIFO
 * pools of threads, async compute and IO (the model is Bevy's
 * AsyncComputeTaskPool and IoTaskPool; the compute pool of frame work is
 * task/thread_pool.c, which this file does not touch). The owner (the
 * world, world/tasks.c) supplies the runner that calls a task's function
 * and decides what completing a task means; this file keeps the states,
 * the queues, cancellation and the lifetime of records.
 *
 * Life of a task: QUEUED on its pool's FIFO, then RUNNING on a pool thread
 * (or inline on a thread that waits for it, or, in the build without
 * threads, in wf_task_set_run_queued), then ENDED with an outcome (OK,
 * FAILED, CANCELLED). A task is *complete* (poll reports it final) when it
 * has ended and, if it needs the owner's sync point (`needs_sync`), the
 * owner has completed it there; a cancelled task is complete at once. Its
 * record is freed when it is complete or ended, released (its result taken
 * by a final poll/wait, or detached) and off the queue; the record then
 * goes on a free list with its generation bumped, so an old handle is
 * refused.
 *
 * Locking: one mutex per set guards every record field below except
 * `cancel` (atomic: the task's function reads it without the lock), the
 * fields a spawn sets once (fn, user, apply, the blocks' pointers and
 * sizes: read without the lock by whoever the lock handed the task to),
 * and the input/result blocks, which only the running function touches
 * between RUNNING and ENDED (then the owner, after it has ended). Every function here may be called from any thread
 * (the driver, a system on a compute worker, a task's function on a pool
 * thread), except create/destroy (the owner's thread).
 *
 * Build without threads (WEFT_THREADS=0): pools start no thread; queued
 * tasks run when the owner calls wf_task_set_run_queued (between frames) or
 * inline when waited on, on the calling thread.
 */
#ifndef WF_TASK_H
#define WF_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/alloc.h"
#include "core/atomic.h"
#include "core/config.h"
#include "task/thread.h"

#define WF_TASK_POOLS 2u /* WEFT_TASK_POOL_ASYNC_COMPUTE, WEFT_TASK_POOL_IO */
/* Longest failure message kept (longer ones are cut): weft.h's. */
#define WF_TASK_MESSAGE_MAX ((size_t)WEFT_TASK_MESSAGE_MAX)

typedef enum wf_task_phase {
    WF_TASK_QUEUED = 0,
    WF_TASK_RUNNING = 1,
    WF_TASK_ENDED = 2
} wf_task_phase;

typedef enum wf_task_outcome {
    WF_TASK_OK = 0,
    WF_TASK_FAILED = 1,
    WF_TASK_CANCELLED = 2
} wf_task_outcome;

typedef struct wf_task wf_task;
typedef struct wf_task_set wf_task_set;

/* What the task's function sees (weft_task_ctx in weft.h). */
struct weft_task_ctx {
    wf_task *task;
};

struct wf_task {
    wf_task_set *set;        /* the set it belongs to */
    uint32_t index;          /* slot; the handle is (gen << 32) | (index + 1) */
    uint32_t gen;            /* from 1, bumped when the record is freed */
    uint8_t phase;           /* wf_task_phase */
    uint8_t outcome;         /* wf_task_outcome, once ENDED */
    uint8_t pool;            /* 0 .. WF_TASK_POOLS - 1 */
    bool claimed;            /* taken for running (or cancelled) by someone:
                                a pool thread popping it skips it */
    bool in_queue;           /* still linked in its pool's FIFO */
    bool released;           /* the handle was given up (taken, detached) */
    bool completed;          /* final for poll: ended and, when needs_sync,
                                completed by the owner (or cancelled) */
    bool needs_sync;         /* completion waits for the owner's sync point */
    bool live;               /* between spawn and free */
    bool completing;         /* the owner's sync holds it (wf_task_set_due
                                to wf_task_set_complete): not freed, and a
                                cancel once it has ended is too late */
    wf_atomic_u32 cancel;    /* cancel requested (read by the function) */
    weft_task_fn fn;
    void *user;
    void *block;             /* one allocation holding input then result */
    size_t block_size;
    void *input;             /* the copy of the spawn input in block, or NULL */
    size_t input_size;
    void *result;            /* zero-filled result_size bytes in block, or NULL */
    size_t result_size;
    weft_status status;      /* what fn returned (FAILED: not WEFT_OK) */
    char *message;           /* weft_task_fail's message (wf_strdup), or NULL */
    uint64_t seq;            /* spawn sequence number in the set */
    /* The owner's fields (world/tasks.c): stored, never interpreted here. */
    weft_task_apply_fn apply;
    bool deterministic;
    uint64_t due;            /* owner's frame at which it is completed */
    uint64_t order;          /* owner's sort key among tasks due together */
    wf_task *next;           /* pool FIFO link, or free list link */
    weft_task_ctx ctx;
};

/* Calls t's function (t->fn) with whatever the owner wraps around it (its
 * error sink, the callback guard) and returns what it returned (stored in
 * t->status under the lock). Runs on the thread that runs the task,
 * without the set's lock. */
typedef weft_status (*wf_task_runner)(void *owner, wf_task *t);

typedef struct wf_task_pool {
    wf_task_set *set;
    uint32_t kind;           /* index in set->pools */
    uint32_t want;           /* threads to start, 0 = the default share */
    uint32_t started;        /* threads running (0 until the first spawn) */
    wf_thread *threads;      /* [started] */
    uint32_t threads_cap;
    wf_task *head;           /* FIFO of queued tasks (claimed ones are skipped) */
    wf_task *tail;
    uint32_t active;         /* tasks QUEUED (unclaimed) or RUNNING */
    bool stop;               /* threads leave when the queue is empty */
    wf_cond work;            /* signalled on push and stop */
} wf_task_pool;

struct wf_task_set {
    wf_allocator *alloc;
    wf_task_runner runner;
    void *owner;
    wf_mutex lock;
    wf_cond ended;           /* broadcast when a task ends or completes */
    wf_task **slots;         /* [count] records, never moved or freed before
                                the set (a freed record is reused) */
    uint32_t count;
    uint32_t cap;
    wf_task *free;           /* freed records */
    uint64_t next_seq;
    uint32_t live;           /* records between spawn and free */
    bool closing;            /* destroy has begun: spawns are refused */
    wf_task_pool pools[WF_TASK_POOLS];
};

/* What a spawn asks for (validated by the caller). */
typedef struct wf_task_spawn_args {
    weft_task_fn fn;
    void *user;
    const void *input;
    size_t input_size;
    size_t result_size;
    uint32_t pool;
    bool needs_sync;
    weft_task_apply_fn apply;
    bool deterministic;
    uint64_t due;
    uint64_t order;
} wf_task_spawn_args;

/* Creates an empty set (no thread yet). NULL on out of memory or when a
 * mutex or condition variable cannot be made. */
wf_task_set *wf_task_set_create(wf_allocator *alloc, wf_task_runner runner, void *owner);
/* Cancels every task (queued ones never run, running ones see the flag),
 * joins every pool thread (waiting for running functions to return) and
 * frees the set with every record. Owner's thread; not from a task. */
void wf_task_set_destroy(wf_task_set *set);

/* The default thread count of pool `kind` on `cpus` CPUs (Bevy's
 * TaskPoolOptions defaults; docs/tasks.md has the rule). */
uint32_t wf_task_default_threads(uint32_t kind, uint32_t cpus);
/* Threads pool `kind` runs (or will start): its override or the default. */
uint32_t wf_task_pool_threads(wf_task_set *set, uint32_t kind);
/* Sets pool `kind`'s thread count (0 = default). Stops its threads when
 * they are started and idle; false (nothing changed) when the pool has a
 * task queued or running. */
bool wf_task_pool_set_threads(wf_task_set *set, uint32_t kind, uint32_t threads);

/* Queues a task; its handle in *out. WEFT_OK, OUT_OF_MEMORY, CAPACITY (too
 * many records), WRONG_PHASE (the set is being destroyed) or INTERNAL (a
 * pool thread could not start), with nothing queued on failure. */
weft_status wf_task_spawn(wf_task_set *set, const wf_task_spawn_args *args, uint64_t *out);

/* Result of a look at a task. */
typedef struct wf_task_view {
    bool found;              /* the handle names a live, unreleased task */
    bool completed;          /* final: outcome below is valid */
    bool ended;              /* the function has returned (or never will) */
    uint8_t outcome;
    weft_status status;      /* FAILED: what the function returned */
    bool deterministic;
    bool needs_sync;
    size_t result_size;
    char message[WF_TASK_MESSAGE_MAX + 1]; /* FAILED: its message, or "" */
} wf_task_view;

/* Looks at a task; when it is complete and `take` is set, copies its
 * result into `result` (NULL: dropped) and releases the handle. A non-NULL
 * `result` whose `result_size` differs from the task's takes nothing
 * (view->result_size tells the caller). */
void wf_task_poll(wf_task_set *set, uint64_t handle, bool take, void *result,
                  size_t result_size, wf_task_view *view);
/* Blocks until the task's function has ended (running it on the calling
 * thread when nobody has started it), then looks at it like wf_task_poll
 * without taking. view->found false when the handle is not live. */
void wf_task_wait_ended(wf_task_set *set, uint64_t handle, wf_task_view *view);
/* Requests cancellation: a queued task never runs (complete at once, as
 * CANCELLED), a running one sees the flag (weft_task_cancelled) and ends
 * CANCELLED whatever it returns, an ended one waiting for the owner's sync
 * becomes CANCELLED without it; a complete one keeps its outcome. False
 * when the handle is not live. */
bool wf_task_cancel(wf_task_set *set, uint64_t handle);
/* Gives up the handle: the task runs on and its record is freed once it
 * is complete. False when the handle is not live. */
bool wf_task_detach(wf_task_set *set, uint64_t handle);
/* Records the failure message of the running task t (copied, cut at
 * WF_TASK_MESSAGE_MAX bytes). False on out of memory. */
bool wf_task_set_message(wf_task_set *set, wf_task *t, const char *message);
/* Records (not running) in the set. */
uint32_t wf_task_set_live(wf_task_set *set);

/* ---- the owner's sync point ---- */

/* Tasks the owner must complete now, in completion order: every
 * deterministic task due at or before `frame` (by due, order, then spawn
 * sequence), then every other task needing the sync whose function has
 * ended (by spawn sequence). Cancelled and complete tasks are left out.
 * *out (grown with wf_grow, kept by the caller between calls) receives
 * them; returns their number, or -1 on out of memory. */
int32_t wf_task_set_due(wf_task_set *set, uint64_t frame, wf_task ***out, uint32_t *cap);
/* Blocks until t has ended (running it here if nobody has started it). */
void wf_task_set_wait_task(wf_task_set *set, wf_task *t);
/* The task `handle` names when its function has ended and it waits for
 * the owner (needs_sync, not complete, not held): held as by
 * wf_task_set_due, for wf_task_set_complete. NULL otherwise. */
wf_task *wf_task_set_hold(wf_task_set *set, uint64_t handle);
/* t's outcome (read under the lock: a cancel may change it). */
wf_task_outcome wf_task_set_outcome(wf_task_set *set, wf_task *t);
/* Marks t complete after the owner's step (freeing it when released). */
void wf_task_set_complete(wf_task_set *set, wf_task *t);
/* Build without threads: runs, on the calling thread, the tasks queued
 * when it is called (new spawns wait for the next call). Elsewhere a
 * no-op: pool threads run them. */
void wf_task_set_run_queued(wf_task_set *set);

#endif

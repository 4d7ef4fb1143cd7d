/* src/world/tasks.c - a world's tasks: spawn, poll, wait, the sync point.
 * SPDX-License-Identifier: MIT
 *
 * See tasks.h. Thread rules: everything but the sync point, completion
 * inside wait and destruction may run on any thread that runs the world's
 * systems or tasks; it touches the world only through the task set (its
 * own lock), the atomic set pointer and frame counter, and the calling
 * thread's error sink. The sync point runs on the driver.
 */
#include "world/tasks.h"

#include <stdio.h>
#include <string.h>

#include "core/status.h"
#include "task/task.h"
#include "world/defer.h"

/* The world's part around its task set. */
typedef struct wf_world_tasks {
    wf_task_set *set;
    wf_atomic_i64 frame;     /* sync points passed; read by spawns on any
                                thread, written by the driver */
    wf_task **due;           /* scratch of the sync point (driver) */
    uint32_t due_cap;
    weft_commands cmds;      /* apply steps record here (driver) */
    bool ticking;            /* a sync point runs (refuses a nested one) */
} wf_world_tasks;

static wf_world_tasks *tasks_of(const weft_world *w)
{
    /* acquire: pairs with the CAS that published the set (tasks_get) */
    return wf_atomic_load_acquire_ptr(&w->tasks);
}

/* Runs t's function on the calling thread: its own error sink (errors of
 * calls it makes are kept from the world's slot, which belongs to the
 * driver) and the callback guard (the world cannot be destroyed from it). */
static weft_status run_task(void *owner, wf_task *t)
{
    weft_world *w = owner;
    wf_error_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.world = w;
    sink.shared = true;
    wf_error_sink *prev = wf_error_sink_swap(&sink);
    weft_status st;
    WF_CALLBACK(w, st = t->fn(&t->ctx, t->input, t->result, t->user));
    wf_error_sink_swap(prev);
    return st;
}

/* The world's tasks, made on first use (any thread); NULL on failure. */
static wf_world_tasks *tasks_get(weft_world *w)
{
    wf_world_tasks *wt = tasks_of(w);
    if (wt) {
        return wt;
    }
    wt = wf_calloc(&w->alloc, sizeof *wt, _Alignof(wf_world_tasks));
    if (!wt) {
        return NULL;
    }
    wt->set = wf_task_set_create(&w->alloc, run_task, w);
    if (!wt->set) {
        wf_free(&w->alloc, wt, sizeof *wt, _Alignof(wf_world_tasks));
        return NULL;
    }
    wf_atomic_init_i64(&wt->frame, 0);
    wf_cmds_init(&wt->cmds, w, &w->alloc, &w->registry);
    void *expected = NULL;
    /* seq_cst CAS: publishes the set to every thread that loads the
     * pointer with acquire (tasks_of); the loser frees its own and loads
     * the winner's with acquire (a failed CAS reads it relaxed) */
    if (!wf_atomic_cas_seq_cst_ptr(&w->tasks, &expected, wt)) {
        wf_cmds_fini(&wt->cmds);
        wf_task_set_destroy(wt->set);
        wf_free(&w->alloc, wt, sizeof *wt, _Alignof(wf_world_tasks));
        return tasks_of(w);
    }
    return wt;
}

weft_status wf_tasks_spawn(weft_world *w, const weft_task_desc *d, weft_task *out)
{
    wf_world_tasks *wt = tasks_get(w);
    if (!wt) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY,
                        "weft_task_spawn: out of memory (or no mutex) making the task set");
    }
    bool det = (d->flags & WEFT_TASK_DETERMINISTIC) != 0;
    wf_task_spawn_args a;
    memset(&a, 0, sizeof a);
    a.fn = d->fn;
    a.user = d->user;
    a.input = d->input;
    a.input_size = d->input_size;
    a.result_size = d->result_size;
    a.pool = (uint32_t)d->pool;
    a.apply = d->apply;
    a.deterministic = det;
    a.needs_sync = det || d->apply != NULL;
    /* relaxed: the frame only needs to be one the driver published; a
     * spawn racing a sync point may see either side of it (documented:
     * spawns from tasks are not on a fixed frame) */
    uint64_t frame = (uint64_t)wf_atomic_load_relaxed_i64(&wt->frame);
    a.due = frame + (d->apply_delay ? d->apply_delay : 1u);
    a.order = d->order;
    weft_status st = wf_task_spawn(wt->set, &a, out);
    switch (st) {
    case WEFT_OK:
        return WEFT_OK;
    case WEFT_ERR_WRONG_PHASE:
        return wf_error(w, st, "weft_task_spawn: the world is being destroyed");
    case WEFT_ERR_INTERNAL:
        return wf_error(w, st, "weft_task_spawn: no thread of the %s pool could start",
                        d->pool == WEFT_TASK_POOL_IO ? "IO" : "async compute");
    case WEFT_ERR_CAPACITY:
        return wf_error(w, st, "weft_task_spawn: every task slot is in use");
    default:
        return wf_error(w, st, "weft_task_spawn: out of memory (%zu input and %zu result "
                        "bytes)", d->input_size, d->result_size);
    }
}

/* True when the calling thread may complete a task here: the driver, in
 * the world's normal phase. A system or task has a sink for the world on
 * its thread; only the driver has none (other threads may not call). */
static bool may_complete(const weft_world *w)
{
    return !wf_error_sink_for(w) && !wf_world_in_callback(w) && w->iter_depth == 0;
}

/* Completes t (its function has ended, the sync point holds it): its
 * apply step and commands unless it failed or was cancelled. Driver. */
static weft_status complete(weft_world *w, wf_world_tasks *wt, wf_task *t)
{
    weft_status st = WEFT_OK;
    if (t->apply && wf_task_set_outcome(wt->set, t) == WF_TASK_OK) {
        /* applying: weft_commands_destroy leaves the buffer alone */
        wt->cmds.applying = true;
        w->busy++; /* the apply step cannot destroy the world */
        WF_CALLBACK(w, t->apply(w, &wt->cmds, t->result, t->user));
        w->busy--;
        wt->cmds.applying = false;
        if (wt->cmds.count) {
            st = wf_cmds_apply(w, &wt->cmds);
        }
    }
    wf_task_set_complete(wt->set, t);
    return st;
}

static weft_status refuse_handle(const weft_world *w, weft_task task, const char *fn)
{
    return wf_error(w, WEFT_ERR_INVALID_HANDLE,
                    "%s: task %u (generation %u) is not a live task of this world (never "
                    "spawned, its final state already taken, or detached)",
                    fn, (uint32_t)task, (uint32_t)(task >> 32));
}

weft_status wf_tasks_poll(weft_world *w, weft_task task, bool wait, weft_task_outcome *out,
                          void *result, size_t result_size, const char *fn)
{
    wf_world_tasks *wt = tasks_of(w);
    wf_task_view v;
    if (!wt) {
        return refuse_handle(w, task, fn);
    }
    /* a poll looks, and takes a final task, under one lock; a wait looks
     * first (size and phase are refused before blocking) */
    wf_task_poll(wt->set, task, !wait, result, result_size, &v);
    if (!v.found) {
        return refuse_handle(w, task, fn);
    }
    if (result && v.result_size != result_size) {
        return wf_error(w, WEFT_ERR_SIZE_MISMATCH,
                        "%s: result_size %zu differs from the task's %zu bytes", fn,
                        result_size, v.result_size);
    }
    if (wait && !v.completed && v.needs_sync) {
        if (v.deterministic) {
            return wf_error(w, WEFT_ERR_WRONG_PHASE,
                            "%s: a deterministic task completes at its sync point "
                            "(weft_tasks_tick); poll it from then", fn);
        }
        if (!may_complete(w)) {
            return wf_error(w, WEFT_ERR_WRONG_PHASE,
                            "%s: a task with an apply step completes on the driver, outside "
                            "systems, hooks, observers and iterations", fn);
        }
    }
    if (wait) {
        wf_task_wait_ended(wt->set, task, &v);
        if (!v.found) {
            return refuse_handle(w, task, fn); /* detached by someone else meanwhile */
        }
        if (!v.completed && v.needs_sync && !v.deterministic) {
            /* ours to complete, as the sync point would (unless a sync
             * point or a cancel got to it first) */
            wf_task *t = wf_task_set_hold(wt->set, task);
            if (t) {
                complete(w, wt, t);
            }
        }
        wf_task_poll(wt->set, task, true, result, result_size, &v);
        if (!v.found) {
            return refuse_handle(w, task, fn);
        }
    }
    if (!v.completed) {
        out->state = WEFT_TASK_STATE_PENDING;
        return WEFT_OK;
    }
    switch (v.outcome) {
    case WF_TASK_OK:
        out->state = WEFT_TASK_STATE_READY;
        break;
    case WF_TASK_CANCELLED:
        out->state = WEFT_TASK_STATE_CANCELLED;
        break;
    default: /* an outcome, not an error of this call */
        out->state = WEFT_TASK_STATE_FAILED;
        out->status = v.status;
        snprintf(out->message, sizeof out->message, "%s",
                 v.message[0] ? v.message : wf_status_message(v.status));
        break;
    }
    return WEFT_OK;
}

weft_status wf_tasks_cancel(weft_world *w, weft_task task)
{
    wf_world_tasks *wt = tasks_of(w);
    if (!wt || !wf_task_cancel(wt->set, task)) {
        return refuse_handle(w, task, "weft_task_cancel");
    }
    return WEFT_OK;
}

weft_status wf_tasks_detach(weft_world *w, weft_task task)
{
    wf_world_tasks *wt = tasks_of(w);
    if (!wt || !wf_task_detach(wt->set, task)) {
        return refuse_handle(w, task, "weft_task_detach");
    }
    return WEFT_OK;
}

weft_status wf_tasks_tick(weft_world *w)
{
    if (!may_complete(w)) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "weft_tasks_tick: only on the driver, outside schedule runs, hooks, "
                        "observers and iterations");
    }
    wf_world_tasks *wt = tasks_of(w);
    if (!wt) {
        return WEFT_OK; /* no task was ever spawned: nothing to count either */
    }
    if (wt->ticking) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "weft_tasks_tick: called from inside a task's apply step");
    }
    wt->ticking = true;
    wf_task_set_run_queued(wt->set); /* the build without threads runs them here */
    /* relaxed: a counter the driver alone writes; spawns read whichever
     * value they see (see wf_tasks_spawn) */
    int64_t frame = wf_atomic_load_relaxed_i64(&wt->frame) + 1;
    wf_atomic_store_relaxed_i64(&wt->frame, frame);
    weft_status first = WEFT_OK;
    int32_t n = wf_task_set_due(wt->set, (uint64_t)frame, &wt->due, &wt->due_cap);
    if (n < 0) {
        first = wf_error(w, WEFT_ERR_OUT_OF_MEMORY,
                         "weft_tasks_tick: out of memory listing the tasks to complete");
    }
    for (int32_t i = 0; i < n; i++) {
        wf_task *t = wt->due[i];
        wf_task_set_wait_task(wt->set, t); /* a deterministic one may still run */
        weft_status st = complete(w, wt, t);
        if (st != WEFT_OK && first == WEFT_OK) {
            first = st;
        }
    }
    wt->ticking = false;
    return first;
}

weft_status wf_tasks_set_threads(weft_world *w, uint32_t pool, int32_t threads)
{
#if !WEFT_THREADS
    if (threads > 0) {
        return wf_error(w, WEFT_ERR_UNSUPPORTED,
                        "weft_world_set_task_threads: this build has no threads "
                        "(WEFT_THREADS=OFF); tasks run on the driver at weft_tasks_tick");
    }
#endif
    wf_world_tasks *wt = tasks_get(w);
    if (!wt) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY,
                        "weft_world_set_task_threads: out of memory making the task set");
    }
    if (!wf_task_pool_set_threads(wt->set, pool, (uint32_t)threads)) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "weft_world_set_task_threads: a task of the %s pool is queued or "
                        "running", pool == WEFT_TASK_POOL_IO ? "IO" : "async compute");
    }
    return WEFT_OK;
}

int32_t wf_tasks_threads(const weft_world *w, uint32_t pool)
{
#if WEFT_THREADS
    wf_world_tasks *wt = tasks_of(w);
    uint32_t n = wt ? wf_task_pool_threads(wt->set, pool)
                    : wf_task_default_threads(pool, wf_thread_cpu_count());
    return (int32_t)n;
#else
    (void)w;
    (void)pool;
    return 0;
#endif
}

int32_t wf_tasks_count(const weft_world *w)
{
    wf_world_tasks *wt = tasks_of(w);
    return wt ? (int32_t)wf_task_set_live(wt->set) : 0;
}

bool wf_task_ctx_cancelled(const weft_task_ctx *ctx)
{
    /* acquire: pairs with the release store of a cancel (task.c) */
    return wf_atomic_load_acquire_u32(&ctx->task->cancel) != 0;
}

weft_status wf_task_ctx_fail(weft_task_ctx *ctx, weft_status status, const char *message)
{
    wf_task *t = ctx->task;
    (void)wf_task_set_message(t->set, t, message); /* out of memory: no message */
    return status;
}

void wf_tasks_fini(weft_world *w)
{
    wf_world_tasks *wt = tasks_of(w);
    if (!wt) {
        return;
    }
    wf_task_set_destroy(wt->set); /* cancels, then joins every pool thread */
    wf_cmds_fini(&wt->cmds);
    wf_free(&w->alloc, wt->due, (size_t)wt->due_cap * sizeof *wt->due, _Alignof(wf_task *));
    wf_free(&w->alloc, wt, sizeof *wt, _Alignof(wf_world_tasks));
    /* relaxed: destruction runs alone */
    wf_atomic_store_relaxed_ptr(&w->tasks, NULL);
}

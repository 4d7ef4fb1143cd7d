/* src/schedule/executor.c - running a built schedule: one thread, the
 * built-in pool, or a host job system; parallel iteration inside systems.
 * SPDX-License-Identifier: MIT
 *
 * Multi-threaded runs are dependency counting, not a central loop: every
 * step has an atomic count of unfinished predecessors (conflicting
 * systems are ordered by the build, barriers by the plan), so a finishing
 * step decrements its successors and starts those that reach zero: the
 * first one inline on the same worker (no queueing for chains of small
 * systems), the rest through the run's ready queue, which every worker of
 * the run drains in batches; main-thread, exclusive and sync steps go
 * through a small queue only the calling thread drains. The calling
 * thread works too, and one helper task per other pool worker joins the
 * run. Nothing is allocated per run. Parallel iteration inside a system
 * uses the pool's Chase-Lev deques directly (chunk tasks).
 *
 * Memory order: a step's writes reach its successors through the
 * acq_rel decrement of their counts (the last decrementer has acquired
 * every earlier release in the RMW chain), then through the ready queue's
 * release store / acquire load of the slot or the main queue's lock. The
 * calling thread sees every step's writes through the acq_rel
 * subtractions from `left` and its acquire load reading zero.
 */
#include "schedule/schedule.h"
#include "core/guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wf_exec {
    weft_world *w;
    weft_schedule *s;
    wf_sys_world *sw;
    wf_sys_world *ex;             /* the executor: sw, or its lender's */
    uint32_t base;                /* tick(p) = base + 1 + p */
    double dt;
    int32_t workers;
    bool multi;
    _Alignas(WF_CACHE_LINE) wf_atomic_u32 left; /* steps not finished */
    wf_atomic_u32 helpers_live;  /* host helpers still inside the run */
    wf_atomic_u32 failed;        /* some system failed (scan at the end) */
    _Alignas(WF_CACHE_LINE) wf_atomic_u32 rq_tail; /* ready queue: next free slot */
    _Alignas(WF_CACHE_LINE) wf_atomic_u32 rq_head; /* ready queue: next to claim */
    /* pool tasks joining this run; here (not in the world) because a
     * nested run from an exclusive system must not reuse a task the outer
     * run's workers have not started yet */
    wf_task helpers[WF_POOL_MAX_WORKERS];
};

uint64_t wf_now_ns(void)
{
    return wf_os_now_ns(); /* the OS layer's monotonic clock */
}

static inline uint32_t tick_of(const wf_exec *x, uint32_t p)
{
    return x->base + 1u + p;
}

/* Moves the world's change tick forward to t (never back). */
static inline void now_at_least(weft_world *w, uint32_t t)
{
    if ((int32_t)(t - w->change_tick) > 0) {
        w->change_tick = t;
    }
}

/* Host job threads get small stable indices for the trace. */
static _Thread_local int32_t tls_host_worker = -1;
static wf_atomic_u32 host_worker_seq;

static int32_t host_worker(void)
{
    if (tls_host_worker < 0) {
        tls_host_worker = 1 + (int32_t)(wf_atomic_fetch_add_relaxed_u32(&host_worker_seq, 1) %
                                        255u);
    }
    return tls_host_worker;
}

/* ---- failure ---- */

/* ---- applying buffers ---- */

static void apply_buffer(weft_world *w, weft_commands *b)
{
    if (b->count) {
        wf_cmds_apply(w, b);
        wf_world_settle(w);
    }
}

/* Applies the buffers of the steps before position `upto` not yet
 * applied, in order. */
static void apply_upto(weft_world *w, weft_schedule *s, uint32_t upto)
{
    const wf_plan *p = &s->plan;
    for (uint32_t q = s->applied; q < upto && q < p->n; q++) {
        if (s->pending[q]) { /* dense flags: untouched systems cost a byte */
            s->pending[q] = 0;
            apply_buffer(w, p->steps[q].sys->cmds);
        }
    }
    if (upto > s->applied) {
        s->applied = upto;
    }
}

weft_status wf_schedule_apply_pending(weft_world *w, weft_schedule *s)
{
    if (s->built) {
        s->applied = 0;
        apply_upto(w, s, s->plan.n);
    }
    s->carry = false;
    return WEFT_OK;
}

/* ---- conditions ---- */

static bool set_eval(wf_exec *x, uint32_t set, int32_t worker)
{
    weft_schedule *s = x->s;
    wf_atomic_u32 *state = &s->set_state[set];
    uint32_t v = wf_atomic_load_acquire_u32(state);
    if (v >= 2) {
        return v == 2;
    }
    uint32_t expected = 0;
    if (wf_atomic_cas_seq_cst_u32(state, &expected, 1)) {
        weft_system_ctx ctx = {x->w, NULL, &x->failed, tick_of(x, s->plan.set_first[set]),
                               worker, x->dt, false, true};
        bool r = true;
        const wf_conds *c = &s->sets[set].conds;
        for (uint32_t i = 0; i < c->n; i++) {
            r = wf_condition_eval(c->v[i], &ctx) && r; /* all are evaluated */
        }
        wf_atomic_store_release_u32(state, r ? 2u : 3u);
        return r;
    }
    while ((v = wf_atomic_load_acquire_u32(state)) < 2) {
        wf_thread_pause();
    }
    return v == 2;
}

/* ---- one step ---- */

static void run_system(wf_exec *x, const wf_step *st, int32_t worker)
{
    weft_schedule *s = x->s;
    wf_system *sys = st->sys;
    weft_system_ctx ctx = {x->w, sys, &x->failed, tick_of(x, st->pos), worker, x->dt,
                           st->kind == WF_STEP_EXCLUSIVE, false};
    sys->fail_status = WEFT_OK;
    sys->ran = false;
    bool skip = sys->skip_once;
    sys->skip_once = false;
    for (uint32_t i = st->sets0; i < st->sets1; i++) {
        skip |= !set_eval(x, s->plan.sets[i], worker);
    }
    const wf_conds *c = st->conds;
    for (uint32_t i = 0; c && i < c->n; i++) {
        skip |= !wf_condition_eval(c->v[i], &ctx); /* all are evaluated */
    }
    if (!skip && sys->validated) {
        /* Single / Populated queries: an error here (out of memory) fails
         * the system */
        wf_error_sink vs;
        memset(&vs, 0, sizeof vs);
        vs.world = x->w;
        wf_error_sink *prev = wf_error_sink_swap(&vs);
        skip = !wf_system_validate(x->w, sys);
        wf_error_sink_swap(prev);
        if (vs.count) {
            wf_ctx_fail(&ctx, vs.status, vs.message);
        }
    }
    if (skip) {
        sys->stats.skipped++;
        return;
    }
    uint64_t t0 = s->profiling ? wf_now_ns() : 0;
    wf_error_sink sink;
    sink.world = x->w;
    sink.status = WEFT_OK;
    sink.last = WEFT_OK;
    sink.count = 0;
    sink.shared = st->kind != WF_STEP_EXCLUSIVE;
    sink.last_message[0] = '\0';
    wf_error_sink *prev = wf_error_sink_swap(&sink);
    WF_CALLBACK(x->w, sys->fn(&ctx, sys->user));
    wf_error_sink_swap(prev);
    /* iterations the system left open end with it (their iterators were
     * on its stack); an exclusive one's held the world's depth */
    uint32_t held = 0;
    for (int32_t i = 0; i < sys->nqueries; i++) {
        held += wf_query_close_all(sys->queries[i]);
    }
    if (held) {
        x->w->iter_depth -= held;
        wf_world_settle(x->w);
    }
    if (s->profiling) {
        uint64_t t1 = wf_now_ns();
        sys->t_start = t0 - s->run_t0;
        sys->t_end = t1 - s->run_t0;
        sys->stats.last_ns = t1 - t0;
        sys->stats.total_ns += t1 - t0;
    }
    if (sink.count && sys->fail_status == WEFT_OK) {
        sys->fail_status = sink.status;
        memcpy(sys->fail_msg, sink.message, sizeof sys->fail_msg);
        wf_atomic_store_relaxed_u32(&x->failed, 1);
    }
    sys->worker = worker;
    sys->ran = true;
    sys->stats.runs++;
    if (sys->cmds_used) { /* weft_system_commands or par_each was called */
        sys->cmds_used = false;
        if (sys->cmds->count) {
            s->pending[st->pos] = 1;
        }
    }
    if (sys->fail_status != WEFT_OK) {
        sys->stats.failures++;
    }
    wf_system_set_last_run(sys, ctx.this_run);
    if (st->kind == WF_STEP_EXCLUSIVE) {
        s->pending[st->pos] = 0;
        apply_buffer(x->w, sys->cmds); /* exclusive systems apply their own */
    }
}

/* Steps running on this thread (nested when a system waiting for its
 * parallel iteration runs other work meanwhile). */
static _Thread_local uint32_t tls_step_depth;

static void step_run(wf_exec *x, const wf_step *st, int32_t worker)
{
    tls_step_depth++;
    weft_world *w = x->w;
    if (st->kind != WF_STEP_SYSTEM) {
        now_at_least(w, tick_of(x, st->pos));
        if (st->kind == WF_STEP_SYNC) {
            weft_schedule *s = x->s;
            apply_upto(w, s, st->pos);
            if (s->carry) {
                /* the previous run ended without its final apply: the
                 * steps after this point still hold its commands */
                s->carry = false;
                for (uint32_t q = st->pos + 1; q < s->plan.n; q++) {
                    if (s->pending[q]) {
                        s->pending[q] = 0;
                        apply_buffer(w, s->plan.steps[q].sys->cmds);
                    }
                }
            }
        } else {
            run_system(x, st, worker);
        }
        now_at_least(w, tick_of(x, st->seg_end));
    } else {
        run_system(x, st, worker);
    }
    tls_step_depth--;
}

/* ---- multi-threaded dispatch ----
 *
 * Ready steps go to the run's ready queue: an array with one slot per
 * step (each step becomes ready once per run), filled through an atomic
 * tail and drained in batches through an atomic head, so a thousand tiny
 * ready systems cost a thousand slot writes and a few dozen claims, not a
 * thousand deque round trips. Every worker of the run (the caller and one
 * helper task per pool worker) loops: main-thread queue (caller only),
 * ready queue, then the pool's deques (parallel-iteration chunks), until
 * no step is left. */

static void rq_push(wf_exec *x, uint32_t p)
{
    weft_schedule *s = x->s;
    /* Relaxed: the slot index only needs to be unique; publication is the
     * release store of the slot, read by the consumer's acquire load. */
    uint32_t slot = wf_atomic_fetch_add_relaxed_u32(&x->rq_tail, 1);
    wf_atomic_store_release_u32(&s->readyq[slot], p + 1);
}

/* Claims up to `max` ready steps; returns how many were written to out. */
static uint32_t rq_take(wf_exec *x, uint32_t *out, uint32_t max)
{
    weft_schedule *s = x->s;
    for (;;) {
        /* Relaxed head: a guess, validated by the CAS. Acquire tail: pairs
         * with nothing by itself (slots are published one by one), it just
         * bounds the claim. */
        uint32_t h = wf_atomic_load_relaxed_u32(&x->rq_head);
        uint32_t t = wf_atomic_load_acquire_u32(&x->rq_tail);
        if (h >= t) {
            return 0;
        }
        uint32_t avail = t - h;
        uint32_t b = avail / (2u * (uint32_t)x->workers);
        b = b < 1 ? 1 : b > max ? max : b;
        if (wf_atomic_cas_seq_cst_u32(&x->rq_head, &h, h + b)) {
            for (uint32_t i = 0; i < b; i++) {
                uint32_t v;
                /* Acquire: pairs with rq_push's release store; a claimed
                 * slot may still be in the middle of being published. */
                while ((v = wf_atomic_load_acquire_u32(&s->readyq[h + i])) == 0) {
                    wf_thread_pause();
                }
                out[i] = v - 1;
            }
            return b;
        }
    }
}

static void mq_lock(weft_schedule *s)
{
    uint32_t expected = 0;
    while (!wf_atomic_cas_seq_cst_u32(&s->mq_lock, &expected, 1)) {
        expected = 0;
        wf_thread_pause();
    }
}

static void mq_unlock(weft_schedule *s)
{
    wf_atomic_store_release_u32(&s->mq_lock, 0);
}

static void push_main(weft_schedule *s, uint32_t p)
{
    mq_lock(s);
    s->mq[s->mq_tail++ % s->plan.n] = p;
    mq_unlock(s);
}

static bool pop_main(weft_schedule *s, uint32_t *p)
{
    bool got = false;
    mq_lock(s);
    if (s->mq_head != s->mq_tail) {
        *p = s->mq[s->mq_head++ % s->plan.n];
        got = true;
    }
    mq_unlock(s);
    return got;
}

/* Starts a ready step from `worker`: returns it when the caller should
 * run it inline (and has nothing inline yet), else queues it. */
static uint32_t dispatch(wf_exec *x, uint32_t t, int32_t worker, uint32_t inline_next)
{
    const wf_step *st = &x->s->plan.steps[t];
    if (st->main_only && worker != 0) {
        push_main(x->s, t);
        return inline_next;
    }
    if (inline_next == UINT32_MAX) {
        return t;
    }
    if (st->main_only) {
        push_main(x->s, t);
    } else {
        rq_push(x, t);
    }
    return inline_next;
}

/* Runs step p and then, inline, one newly ready successor at a time.
 * Returns the number of steps run (the caller subtracts them from `left`
 * once per batch: one contended atomic per batch, not per step). */
static uint32_t exec_from(wf_exec *x, uint32_t p, int32_t worker)
{
    weft_schedule *s = x->s;
    const wf_plan *plan = &s->plan;
    uint32_t done = 0;
    while (p != UINT32_MAX) {
        const wf_step *st = &plan->steps[p];
        step_run(x, st, worker);
        uint32_t next = UINT32_MAX;
        for (uint32_t k = st->succ0; k < st->succ1; k++) {
            uint32_t t = plan->succ[k];
            if (wf_atomic_fetch_sub_acq_rel_u32(&s->remaining[t], 1) == 1) {
                next = dispatch(x, t, worker, next);
            }
        }
        done++;
        p = next;
    }
    return done;
}

/* Release: publishes the steps' writes to the thread that reads left == 0
 * (acq_rel: the RMW chain carries every earlier release along). */
static void steps_done(wf_exec *x, uint32_t n)
{
    if (n) {
        wf_atomic_fetch_sub_acq_rel_u32(&x->left, n);
    }
}

/* One worker's part of a run; returns when every step has finished, or,
 * when it was entered beneath a running step (a system waiting for its
 * parallel iteration picked up this helper), as soon as there is nothing
 * to do: waiting there for the run to end would wait for itself. */
static void work_loop(wf_exec *x, int32_t worker, bool helper)
{
    weft_schedule *s = x->s;
    uint32_t batch[64];
    uint32_t idle = 0;
    /* the caller's own loop never leaves early (it may itself sit beneath
     * the exclusive step that runs this schedule) */
    bool nested = helper && tls_step_depth > 0;
    /* Acquire: pairs with the acq_rel decrements of left, so every step's
     * writes are visible once it reads 0. */
    while (wf_atomic_load_acquire_u32(&x->left) > 0) {
        uint32_t p;
        if (worker == 0 && pop_main(s, &p)) {
            steps_done(x, exec_from(x, p, 0));
            idle = 0;
            continue;
        }
        uint32_t n = rq_take(x, batch, 64);
        if (n) {
            uint32_t done = 0;
            for (uint32_t i = 0; i < n; i++) {
                done += exec_from(x, batch[i], worker);
            }
            steps_done(x, done);
            idle = 0;
            continue;
        }
        if (nested) {
            return;
        }
        if (x->ex->host) {
            /* helpers are host jobs too: helping lets the host run the
             * chunk jobs of a parallel iteration on their threads */
            WF_CALLBACK(WF_GUARD_ANY, x->ex->jobs.help(x->ex->jobs.user));
        } else if (wf_thread_pool_help(x->ex->pool)) {
            idle = 0;
            continue;
        }
        if (++idle % 64 == 0) {
            wf_thread_yield();
        } else {
            wf_thread_pause();
        }
    }
}

static void helper_pool(void *arg, uint32_t worker)
{
    work_loop(arg, (int32_t)worker, true);
}

static void helper_host(void *arg)
{
    wf_exec *x = arg;
    work_loop(x, host_worker(), true);
    /* Release: the caller's acquire load of helpers_live orders this
     * helper's last reads of x before x goes out of scope. */
    wf_atomic_fetch_sub_acq_rel_u32(&x->helpers_live, 1);
}

static void run_multi(wf_exec *x)
{
    weft_schedule *s = x->s;
    const wf_plan *plan = &s->plan;
    wf_sys_world *sw = x->ex;
    for (uint32_t p = 0; p < plan->n; p++) {
        if (plan->steps[p].pred == 0) {
            if (plan->steps[p].main_only) {
                push_main(s, p);
            } else {
                rq_push(x, p);
            }
        }
    }
    /* never more helpers than steps that could run beside the caller's:
     * a one-step plan (one system splitting a parallel iteration over the
     * pool) pays no fork/join at all */
    uint32_t helpers = (uint32_t)x->workers - 1;
    if (helpers > plan->n - 1) {
        helpers = plan->n - 1;
    }
    wf_task_group group;
    wf_task_group_init(&group);
    wf_atomic_init_u32(&x->helpers_live, helpers);
    for (uint32_t i = 0; i < helpers; i++) {
        if (sw->host) {
            WF_CALLBACK(WF_GUARD_ANY, sw->jobs.submit(sw->jobs.user, helper_host, x));
        } else {
            wf_task *t = &x->helpers[i];
            t->fn = helper_pool;
            t->arg = x;
            t->group = &group;
            /* a helper works until the run ends: only a started pool
             * thread, at the top of its loop, may take it (another
             * thread waiting inside a run of its own would then wait on
             * this run, and this run's caller perhaps on that one) */
            t->blocking = true;
            /* the caller attached to the pool (wf_schedule_run) */
            bool queued = wf_thread_pool_submit(sw->pool, t);
            WF_ASSERT(queued);
            (void)queued;
        }
    }
    work_loop(x, 0, false);
    /* helpers read x until they see no step left: wait for them */
    if (sw->host) {
        while (wf_atomic_load_acquire_u32(&x->helpers_live) > 0) {
            WF_CALLBACK(WF_GUARD_ANY, sw->jobs.help(sw->jobs.user));
        }
    } else {
        bool waited = wf_thread_pool_wait(sw->pool, &group);
        WF_ASSERT(waited);
        (void)waited;
    }
}

/* ---- a run ---- */

/* How a failed system or condition is named in messages. */
static const char *failure_kind(bool condition)
{
    return condition ? "condition '%s' failed (counted as false): %s"
                     : "system '%s' failed: %s";
}

/* Keeps the first failure of a run and logs the later ones. */
static void note_failure(weft_world *w, const wf_system *sys, bool condition,
                         weft_status *first, const wf_system **first_of, bool *first_cond)
{
    if (!sys || sys->fail_status == WEFT_OK) {
        return;
    }
    if (*first == WEFT_OK) {
        *first = sys->fail_status;
        *first_of = sys;
        *first_cond = condition;
    } else if (w->logger.fn) {
        char msg[WF_ERROR_LEN + 64];
        snprintf(msg, sizeof msg, failure_kind(condition), sys->name, sys->fail_msg);
        WF_CALLBACK(w, w->logger.fn(w->logger.user, WEFT_LOG_ERROR, sys->fail_status, msg,
                                    __FILE__, __LINE__));
    }
}

typedef struct overlap_ev {
    uint64_t t;
    int32_t d; /* +1 start, -1 end */
} overlap_ev;

static int overlap_cmp(const void *a, const void *b)
{
    const overlap_ev *x = a, *y = b;
    if (x->t != y->t) {
        return x->t < y->t ? -1 : 1;
    }
    return x->d - y->d; /* an end before a start at the same instant */
}

/* Most systems whose profiled [start, end) intervals overlapped. */
static int32_t max_overlap(weft_schedule *s)
{
    weft_world *w = s->world;
    uint32_t n = 0;
    for (uint32_t k = 0; k < s->nnodes; k++) {
        n += s->nodes[k].sys && s->nodes[k].sys->ran;
    }
    if (n == 0) {
        return 0;
    }
    overlap_ev *ev = wf_alloc(&w->alloc, 2u * n * sizeof *ev, _Alignof(overlap_ev));
    if (!ev) {
        return -1;
    }
    uint32_t m = 0;
    for (uint32_t k = 0; k < s->nnodes; k++) {
        const wf_system *sys = s->nodes[k].sys;
        if (sys && sys->ran) {
            ev[m++] = (overlap_ev){sys->t_start, +1};
            ev[m++] = (overlap_ev){sys->t_end, -1};
        }
    }
    qsort(ev, m, sizeof *ev, overlap_cmp);
    int32_t cur = 0, best = 0;
    for (uint32_t i = 0; i < m; i++) {
        cur += ev[i].d;
        best = cur > best ? cur : best;
    }
    wf_free(&w->alloc, ev, 2u * n * sizeof *ev, _Alignof(overlap_ev));
    return best;
}

static weft_status schedule_run(weft_world *w, weft_schedule *s, double dt)
{
    if (s->running) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "weft_schedule_run: schedule '%s' is already "
                        "running", s->name);
    }
    if (w->iter_depth) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "weft_schedule_run: not allowed while a query "
                        "iteration, hook or observer is open");
    }
    if (s->dirty || !s->built) {
        weft_status st = wf_schedule_build(s);
        if (st != WEFT_OK) {
            return st;
        }
    }
    wf_sys_world *sw = w->sys;
    wf_sys_world *ex = sw->lender ? sw->lender->sys : sw;
    bool multi = (ex->pool || ex->host) && ex->threads > 1 && s->plan.n > 0;
    if (multi && ex->pool && wf_thread_pool_on_pool_thread()) {
        /* a pool worker: it owns a deque somewhere, it cannot be our 0 */
        return wf_error(w, WEFT_ERR_WRONG_THREAD,
                        "weft_schedule_run: not from a worker thread of a thread pool");
    }
    if (s->stepping) {
        wf_stepping_prepare(s); /* through the skip hook: skip_once */
    }
    /* even a one-step plan runs on the pool (multi above): its system
     * may split a parallel iteration over the workers */
    wf_commit_flush(w); /* ids reserved on the driver become live first */
    wf_world_clamp_ticks(w, false);
    const wf_plan *plan = &s->plan;
    wf_exec x;
    memset(&x, 0, sizeof x);
    x.w = w;
    x.s = s;
    x.sw = sw;
    x.ex = ex;
    x.dt = dt;
    /* the calling thread becomes a caller of the pool for the run: worker
     * 0 when it is its driver, else a caller slot of its own (a second
     * world sharing the pool may run at the same time); with every slot
     * taken the run goes on this thread alone (same results) */
    void *pool_token = multi && ex->pool ? wf_thread_pool_attach(ex->pool) : NULL;
    if (multi && ex->pool && !pool_token) {
        multi = false;
    }
    x.multi = multi;
    x.workers = multi ? ex->threads : 1;
    x.base = w->change_tick;
    wf_atomic_init_u32(&x.left, plan->n);
    for (uint32_t p = 0; p < plan->n; p++) {
        wf_atomic_init_u32(&s->remaining[p], plan->steps[p].pred);
        wf_atomic_init_u32(&s->readyq[p], 0);
    }
    for (uint32_t i = 0; i < plan->nset_slots; i++) {
        wf_atomic_init_u32(&s->set_state[i], 0);
    }
    for (weft_condition *c = s->conds; c; c = c->next) {
        if (c->sys) {
            c->sys->fail_status = WEFT_OK;
        }
    }
    s->applied = 0;
    s->mq_head = s->mq_tail = 0;
    s->running = true;
    s->exec = &x;
    sw->depth++;
    s->run_t0 = s->profiling ? wf_now_ns() : 0;
    s->trace_workers = (uint32_t)x.workers;
    if (plan->n) {
        const wf_step *s0 = &plan->steps[0];
        now_at_least(w, tick_of(&x, s0->kind != WF_STEP_SYSTEM ? 0 : s0->seg_end));
    }
    if (multi) {
        run_multi(&x);
        if (pool_token) {
            wf_thread_pool_detach(ex->pool, pool_token);
        }
        s->max_conc = s->profiling ? max_overlap(s) : -1;
    } else {
        for (uint32_t p = 0; p < plan->n; p++) {
            if (p + 4 < plan->n) {
                WF_PREFETCH(plan->steps[p + 4].sys);
            }
            step_run(&x, &plan->steps[p], 0);
        }
        s->max_conc = s->profiling ? max_overlap(s) : -1;
    }
    now_at_least(w, tick_of(&x, plan->n));
    if (s->apply_final) {
        apply_upto(w, s, plan->n);
        s->carry = false;
    } else {
        s->carry = true;
    }
    sw->depth--;
    s->exec = NULL;
    s->running = false;
    /* failures: log each, return the first in schedule order */
    /* failures: systems in schedule order, then conditions (each counted
     * as false); the first is returned and recorded, the others logged */
    weft_status first = WEFT_OK;
    const wf_system *first_of = NULL;
    bool first_cond = false;
    if (wf_atomic_load_relaxed_u32(&x.failed)) {
        for (uint32_t p = 0; p < plan->n; p++) {
            note_failure(w, plan->steps[p].sys, false, &first, &first_of, &first_cond);
        }
        for (weft_condition *c = s->conds; c; c = c->next) {
            note_failure(w, c->sys, true, &first, &first_of, &first_cond);
        }
    }
    if (first_of) {
        char msg[WF_ERROR_LEN + 64];
        snprintf(msg, sizeof msg, failure_kind(first_cond), first_of->name, first_of->fail_msg);
        wf_error(w, first, "schedule '%s': %s", s->name, msg);
    }
    return first;
}

weft_status wf_schedule_run(weft_world *w, weft_schedule *s, double dt)
{
    if (wf_world_refuse_shared(w, "weft_schedule_run")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    w->busy++; /* systems and conditions may not destroy the world */
    weft_status st = schedule_run(w, s, dt);
    w->busy--;
    return st;
}

/* ---- executor configuration ---- */

uint32_t wf_exec_lent(const weft_world *w)
{
    /* Acquire: pairs with the acq_rel updates of lent by the borrowers. */
    return w->sys ? wf_atomic_load_acquire_u32(&w->sys->lent) : 0;
}

bool wf_exec_refuse_change(weft_world *w, const char *fn)
{
    wf_sys_world *sw = w->sys;
    if (!sw) {
        return false;
    }
    /* Acquire: pairs with the acq_rel updates of lent by the borrowers. */
    uint32_t lent = wf_atomic_load_acquire_u32(&sw->lent);
    if (lent) {
        wf_error(w, WEFT_ERR_WRONG_PHASE,
                 "%s: %u other world(s) run on this world's executor "
                 "(weft_world_share_threads); they must stop sharing first",
                 fn, lent);
        return true;
    }
    if (sw->lender) {
        wf_error(w, WEFT_ERR_WRONG_PHASE,
                 "%s: this world runs on another world's executor "
                 "(weft_world_share_threads(world, NULL) first)",
                 fn);
        return true;
    }
    return false;
}

weft_status wf_exec_share(weft_world *w, weft_world *lender)
{
    const char *fn = "weft_world_share_threads";
    wf_sys_world *sw = wf_sys_get(w);
    if (!sw) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    if (sw->depth) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "%s: not allowed while a schedule runs", fn);
    }
    if (lender == w) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: a world cannot borrow its own executor",
                        fn);
    }
    wf_sys_world *lsw = NULL;
    if (lender) {
        lsw = wf_sys_get(lender);
        if (!lsw) {
            return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
        }
        if (lsw->lender) {
            return wf_error(w, WEFT_ERR_INVALID_ARG,
                            "%s: the lender runs on another world's executor itself", fn);
        }
        /* Acquire: pairs with the acq_rel updates of lent. */
        if (wf_atomic_load_acquire_u32(&sw->lent)) {
            return wf_error(w, WEFT_ERR_INVALID_ARG,
                            "%s: other worlds run on this world's executor", fn);
        }
    }
    if (sw->lender == lender && lender) {
        return WEFT_OK;
    }
    wf_exec_release(w); /* its own pool or job system, or the old lender */
    if (lender) {
        /* acq_rel: pairs with the acquire load in wf_exec_refuse_change */
        wf_atomic_fetch_add_acq_rel_u32(&lsw->lent, 1);
        sw->lender = lender;
    }
    return WEFT_OK;
}

void wf_exec_release(weft_world *w)
{
    wf_sys_world *sw = w->sys;
    if (sw->lender) {
        /* acq_rel: pairs with the acquire loads of lent in
         * wf_exec_refuse_change and wf_exec_lent (the lender's driver). */
        wf_atomic_fetch_sub_acq_rel_u32(&sw->lender->sys->lent, 1);
        sw->lender = NULL;
    }
    if (sw->pool) {
        wf_thread_pool_destroy(sw->pool);
        sw->pool = NULL;
    }
    sw->host = false;
    sw->threads = 1;
}

weft_status wf_exec_set_threads(weft_world *w, int32_t threads)
{
    wf_sys_world *sw = wf_sys_get(w);
    if (!sw) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    if (sw->depth) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "weft_world_set_threads: not allowed while a schedule runs");
    }
    if (wf_exec_refuse_change(w, "weft_world_set_threads")) {
        return WEFT_ERR_WRONG_PHASE;
    }
#if !WEFT_THREADS
    if (threads > 1) {
        return wf_error(w, WEFT_ERR_UNSUPPORTED,
                        "weft_world_set_threads: %d threads asked of a build without threads "
                        "(WEFT_THREADS=OFF); only 1, 0 or -1 (all mean the calling thread)",
                        (int)threads);
    }
#endif
    uint32_t n = threads < 0 ? wf_thread_cpu_count() : (uint32_t)(threads ? threads : 1);
    if (n > WF_POOL_MAX_WORKERS) {
        n = WF_POOL_MAX_WORKERS;
    }
    wf_exec_release(w);
    if (n <= 1) {
        return WEFT_OK;
    }
    sw->pool = wf_thread_pool_create(&w->alloc, n);
    if (!sw->pool) {
        wf_exec_release(w);
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY,
                        "weft_world_set_threads: could not start %u workers (out of memory or "
                        "thread creation failed); the executor stays single-threaded", n);
    }
    sw->threads = (int32_t)n;
    return WEFT_OK;
}

weft_status wf_exec_set_jobs(weft_world *w, const weft_job_system *jobs)
{
    wf_sys_world *sw = wf_sys_get(w);
    if (!sw) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    if (sw->depth) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "weft_world_set_job_system: not allowed while a schedule runs");
    }
    if (wf_exec_refuse_change(w, "weft_world_set_job_system")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    if (jobs && (!jobs->submit || !jobs->help || jobs->workers == 0)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_world_set_job_system: submit and help are required and "
                        "workers must be at least 1");
    }
#if !WEFT_THREADS
    if (jobs && jobs->workers > 1) {
        return wf_error(w, WEFT_ERR_UNSUPPORTED,
                        "weft_world_set_job_system: %u workers asked of a build without "
                        "threads (WEFT_THREADS=OFF); only 1", (unsigned)jobs->workers);
    }
#endif
    wf_exec_release(w);
    sw->host = jobs != NULL;
    sw->threads = jobs ? (int32_t)(jobs->workers > WF_POOL_MAX_WORKERS ? WF_POOL_MAX_WORKERS
                                                                        : jobs->workers)
                       : 1;

    if (jobs) {
        sw->jobs = *jobs;
    }
    return WEFT_OK;
}

/* ---- parallel iteration ---- */

typedef struct wf_par_ctx {
    weft_world *w;
    wf_system *sys;
    weft_query *q;
    weft_chunk_fn fn;
    void *user;
    uint32_t this_run;
    wf_atomic_i64 pending;       /* host mode */
} wf_par_ctx;

static void par_task_body(wf_par_task *t)
{
    wf_par_ctx *pc = t->par;
    wf_system *sys = pc->sys;
    memset(&t->sink, 0, sizeof t->sink);
    t->sink.world = pc->w;
    t->sink.shared = true;
    wf_error_sink *prev = wf_error_sink_swap(&t->sink);
    weft_iter it;
    wf_query_env env = wf_world_query_env(pc->w);
    wf_iter *wi = wf_iter_of(&it);
    wf_iter_init(wi, pc->w, pc->q, &env, pc->q->last_run, pc->this_run, false);
    wf_iter_restrict(wi, t->match, t->row, t->row_end);
    WF_CALLBACK(pc->w, pc->fn(&it, sys->chunks[t->buf].cmds, pc->user));
    if (wi->state == WF_ITER_ACTIVE) {
        wf_world_iter_end(wi, false);
    }
    wf_error_sink_swap(prev);
}

static void par_pool_task(void *arg, uint32_t worker)
{
    (void)worker;
    par_task_body(arg);
}

static void par_host_task(void *arg)
{
    wf_par_task *t = arg;
    par_task_body(t);
    wf_atomic_fetch_sub_release_i64(&t->par->pending, 1);
}

/* Payload of the command that applies a parallel iteration's buffers. */
typedef struct par_apply {
    wf_system *sys;
    uint32_t first, count;       /* chunk buffers [first, first + count) */
} par_apply;

static void par_apply_fn(weft_world *w, void *payload, void *user)
{
    (void)user;
    par_apply *pa = payload;
    for (uint32_t i = 0; i < pa->count; i++) {
        wf_chunk_buf *cb = &pa->sys->chunks[pa->first + i];
        if (cb->cmds->count) {
            wf_cmds_apply(w, cb->cmds);
        }
        cb->busy = false;
    }
}

static void par_apply_drop(void *payload, void *user)
{
    (void)user;
    par_apply *pa = payload;
    for (uint32_t i = 0; i < pa->count; i++) {
        wf_chunk_buf *cb = &pa->sys->chunks[pa->first + i];
        weft_world *w = cb->cmds->world;
        wf_cmds_fini(cb->cmds);
        wf_cmds_init(cb->cmds, w, &w->alloc, &w->registry);
        cb->cmds->provisional = true;
        cb->busy = false;
    }
}

/* Finds `count` consecutive free chunk buffers (growing the pool). */
static bool par_buffers(weft_world *w, wf_system *sys, uint32_t count, uint32_t *first)
{
    uint32_t run = 0;
    for (uint32_t i = 0; i < sys->nchunks; i++) {
        run = sys->chunks[i].busy ? 0 : run + 1;
        if (run == count) {
            *first = i + 1 - count;
            return true;
        }
    }
    uint32_t start = sys->nchunks - run;
    uint32_t need = start + count;
    if (!wf_grow(&w->alloc, (void **)&sys->chunks, &sys->cap_chunks, need, sizeof *sys->chunks,
                 _Alignof(wf_chunk_buf))) {
        return false;
    }
    while (sys->nchunks < need) {
        weft_commands *b = wf_alloc(&w->alloc, sizeof *b, _Alignof(weft_commands));
        if (!b) {
            return false;
        }
        wf_cmds_init(b, w, &w->alloc, &w->registry);
        b->provisional = true;
        sys->chunks[sys->nchunks].cmds = b;
        sys->chunks[sys->nchunks].busy = false;
        sys->nchunks++;
    }
    *first = start;
    return true;
}

/* Tasks for a table of `rows` rows with at least `target` rows each. */
static uint32_t par_table_tasks(uint32_t rows, uint64_t target)
{
    if (rows == 0) {
        return 0;
    }
    uint64_t n = rows / target;
    return n ? (uint32_t)n : 1u;
}

/* par_each with one worker, few rows or from a condition: the whole query
 * as one iteration on this thread, into the system's own buffer. */
static weft_status par_inline(weft_system_ctx *ctx, int32_t query, weft_chunk_fn fn,
                              void *user)
{
    wf_system *sys = ctx->sys;
    weft_iter it;
    weft_status st = wf_ctx_iter(ctx, query, &it, "weft_system_par_each");
    if (st != WEFT_OK) {
        return st;
    }
    if (!ctx->condition) {
        sys->cmds_used = true;
    }
    WF_CALLBACK(WF_GUARD_ANY, fn(&it, ctx->condition ? NULL : sys->cmds, user));
    wf_iter *wi = wf_iter_of(&it);
    if (wi->state == WF_ITER_ACTIVE) {
        wf_world_iter_end(wi, false);
    }
    return WEFT_OK;
}

/* Splits the query's tables into tasks of `target` rows (never across a
 * table) with a chunk buffer each; *out_first is the first buffer's index.
 * The task count, or 0 on out of memory (error recorded). */
static uint32_t par_plan_tasks(wf_par_ctx *pc, uint64_t target, uint32_t *out_first)
{
    weft_world *w = pc->w;
    wf_system *sys = pc->sys;
    const weft_query *q = pc->q;
    /* A table of `rows` rows becomes floor(rows / target) tasks (one when
     * it is smaller) of near-equal size: each holds at least target >= min
     * rows, so no short tail is left (weft.h's min_rows promise). */
    uint32_t ntasks = 0;
    for (uint32_t m = 0; m < q->match_count; m++) {
        ntasks += par_table_tasks(q->matches[m].table->count, target);
    }
    if (!wf_grow(&w->alloc, (void **)&sys->tasks, &sys->cap_tasks, ntasks, sizeof *sys->tasks,
                 _Alignof(wf_par_task))) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "weft_system_par_each: out of memory");
        return 0;
    }
    uint32_t first = 0;
    if (!par_buffers(w, sys, ntasks, &first)) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "weft_system_par_each: out of memory");
        return 0;
    }
    uint32_t k = 0;
    for (uint32_t m = 0; m < q->match_count; m++) {
        uint32_t rows = q->matches[m].table->count;
        uint32_t n = par_table_tasks(rows, target);
        for (uint32_t i = 0; i < n; i++) {
            wf_par_task *t = &sys->tasks[k];
            t->par = pc;
            t->match = m;
            t->row = (uint32_t)((uint64_t)rows * i / n);
            t->row_end = (uint32_t)((uint64_t)rows * (i + 1) / n);
            t->buf = first + k;
            sys->chunks[first + k].busy = true;
            k++;
        }
    }
    *out_first = first;
    return ntasks;
}

/* Runs the tasks on the host's job system or the pool, the calling thread
 * taking the first, and returns when all are done. */
static void par_dispatch(wf_sys_world *sw, wf_par_ctx *pc, wf_par_task *tasks, uint32_t ntasks)
{
    if (sw->host) {
        for (uint32_t i = 1; i < ntasks; i++) {
            WF_CALLBACK(WF_GUARD_ANY, sw->jobs.submit(sw->jobs.user, par_host_task, &tasks[i]));
        }
        par_host_task(&tasks[0]);
        while (wf_atomic_load_acquire_i64(&pc->pending) > 0) {
            WF_CALLBACK(WF_GUARD_ANY, sw->jobs.help(sw->jobs.user));
        }
        return;
    }
    wf_task_group group;
    wf_task_group_init(&group);
    for (uint32_t i = 1; i < ntasks; i++) {
        wf_task *t = &tasks[i].task;
        t->fn = par_pool_task;
        t->arg = &tasks[i];
        t->group = &group;
        t->blocking = false; /* a chunk runs to its end without waiting */
        if (!wf_thread_pool_submit(sw->pool, t)) {
            /* not a worker of this pool (a thread the system started
             * itself): it owns no deque there, so run the task here;
             * the buffers still apply in task order */
            par_task_body(&tasks[i]);
        }
    }
    par_task_body(&tasks[0]);
    (void)wf_thread_pool_wait(sw->pool, &group); /* false: nothing queued */
}

/* The shared column summaries the tasks left alone: every written column
 * of every table the tasks covered notes this run. */
static void par_note_columns(const wf_par_ctx *pc, const wf_par_task *tasks, uint32_t ntasks)
{
    const weft_query *q = pc->q;
    uint32_t now = pc->w->change_tick;
    uint32_t last_match = UINT32_MAX;
    for (uint32_t i = 0; i < ntasks; i++) {
        const wf_par_task *t = &tasks[i];
        if (t->match == last_match) {
            continue;
        }
        last_match = t->match;
        const wf_match *m = &q->matches[t->match];
        for (uint32_t ti = 0; ti < q->term_count; ti++) {
            const wf_term *term = &q->terms[ti];
            if (term->access != WEFT_ACCESS_WRITE) {
                continue;
            }
            wf_column *c = NULL;
            if (term->sparse) {
                c = term->ti->sparse ? &term->ti->sparse->dense : NULL;
            } else if (m->cols[ti] >= 0) {
                c = &m->table->cols[m->cols[ti]];
            }
            if (c && c->ticks) {
                wf_column_note(c, pc->this_run, now);
                /* the tasks wrote some rows of it: journaled whole, the
                 * rows' ticks to be checked */
                if (WF_UNLIKELY(pc->w->journal.on)) {
                    wf_journal_add_slow(pc->w, c, 0, WF_JOURNAL_ALL, 0, false);
                }
            }
        }
    }
}

/* The tasks' errors (into the system's sink), then their buffers: queued
 * in the system's own buffer where this call stands, applied in task
 * order. Returns the first task error. */
static weft_status par_finish(weft_world *w, wf_system *sys, uint32_t first, uint32_t ntasks)
{
    weft_status result = WEFT_OK;
    for (uint32_t i = 0; i < ntasks; i++) {
        const wf_error_sink *sk = &sys->tasks[i].sink;
        if (sk->count) {
            wf_error(w, sk->status, "%s", sk->message); /* into the system's sink */
            if (result == WEFT_OK) {
                result = sk->status;
            }
        }
    }
    uint32_t used = 0;
    for (uint32_t i = 0; i < ntasks; i++) {
        used += sys->chunks[first + i].cmds->count > 0;
    }
    if (used == 0) {
        for (uint32_t i = 0; i < ntasks; i++) {
            sys->chunks[first + i].busy = false;
        }
        return result;
    }
    sys->cmds_used = true;
    par_apply pa = {sys, first, ntasks};
    if (!wf_cmds_push_custom(sys->cmds, par_apply_fn, &pa, sizeof pa, par_apply_drop, NULL)) {
        par_apply_drop(&pa, NULL);
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "weft_system_par_each: out of memory "
                        "recording the chunk buffers");
    }
    return result;
}

weft_status wf_par_each(weft_system_ctx *ctx, int32_t query, weft_chunk_fn fn, void *user,
                        int32_t min_rows)
{
    weft_world *w = ctx->world;
    wf_system *sys = ctx->sys;
    weft_query *q = sys->queries[query];
    wf_query_env env = wf_world_query_env(w);
    if (!wf_query_update(q, &env)) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "weft_system_par_each: out of memory "
                        "matching archetypes");
    }
    wf_exec *x = sys->sched ? sys->sched->exec : NULL;
    int32_t workers = x && x->multi ? x->workers : 1;
    uint32_t min = min_rows > 0 ? (uint32_t)min_rows : WF_PAR_EACH_MIN_ROWS;
    uint64_t total = 0;
    for (uint32_t m = 0; m < q->match_count; m++) {
        total += q->matches[m].table->count;
    }
    if (workers <= 1 || total < 2u * (uint64_t)min || ctx->condition) {
        return par_inline(ctx, query, fn, user);
    }
    /* about four tasks per worker, none below min_rows */
    uint64_t target = (total + (uint64_t)workers * 4u - 1u) / ((uint64_t)workers * 4u);
    if (target < min) {
        target = min;
    }
    wf_par_ctx pc;
    pc.w = w;
    pc.sys = sys;
    pc.q = q;
    pc.fn = fn;
    pc.user = user;
    pc.this_run = ctx->this_run;
    uint32_t first = 0;
    uint32_t ntasks = par_plan_tasks(&pc, target, &first);
    if (ntasks == 0) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    wf_atomic_init_i64(&pc.pending, ntasks);
    par_dispatch(x->ex, &pc, sys->tasks, ntasks);
    par_note_columns(&pc, sys->tasks, ntasks);
    return par_finish(w, sys, first, ntasks);
}

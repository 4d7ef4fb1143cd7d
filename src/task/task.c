/* src/task/task.c - task records, their states and two FIFO thread pools.
 * SPDX-License-Identifier: MIT
 *
 * See task.h for the model. A pool is a plain FIFO under the set's mutex
 * with a condition variable per pool: tasks that span frames are few and
 * long (path finding, generation, file and network waits), so a lock per
 * spawn costs nothing next to the work, and FIFO order keeps a burst of IO
 * requests in the order it was made; the work-stealing pool of in-frame
 * work (thread_pool.c) is built for the opposite case. Threads start on
 * the first spawn into their pool, so a world that never spawns a task
 * starts none.
 */
#include "task/task.h"

#include <stddef.h>
#include <string.h>

#include "core/check.h"

#define TASK_ALIGN _Alignof(wf_task)
#define SLOTS_ALIGN _Alignof(wf_task *)

/* ---- thread counts ---- */

uint32_t wf_task_default_threads(uint32_t kind, uint32_t cpus)
{
    /* Bevy's TaskPoolOptions::default (bevy_app's task_pool_plugin.rs):
     * total = the CPUs; IO first, then async compute, each asks for 25% of
     * the total rounded half up, limited by what remains, then clamped to
     * 1..4 (so it may exceed what remains on a machine of 1 or 2 CPUs). */
    uint32_t total = cpus ? cpus : 1u;
    uint32_t share = (total + 2u) / 4u; /* round(total * 0.25) */
    uint32_t remaining = total;
    uint32_t io = share < remaining ? share : remaining;
    io = io < 1u ? 1u : (io > 4u ? 4u : io);
    if (kind == 1u) {
        return io;
    }
    remaining = remaining > io ? remaining - io : 0u;
    uint32_t ac = share < remaining ? share : remaining;
    return ac < 1u ? 1u : (ac > 4u ? 4u : ac);
}

uint32_t wf_task_pool_threads(wf_task_set *set, uint32_t kind)
{
    wf_mutex_lock(&set->lock);
    uint32_t n = set->pools[kind].want;
    wf_mutex_unlock(&set->lock);
    return n ? n : wf_task_default_threads(kind, wf_thread_cpu_count());
}

/* ---- records ---- */

static uint64_t handle_of(const wf_task *t)
{
    return ((uint64_t)t->gen << 32) | (uint64_t)(t->index + 1u);
}

/* The live, unreleased task `h` names, or NULL. Under the lock. */
static wf_task *lookup(wf_task_set *set, uint64_t h)
{
    uint32_t idx = (uint32_t)h;
    uint32_t gen = (uint32_t)(h >> 32);
    if (idx == 0 || idx > set->count) {
        return NULL;
    }
    wf_task *t = set->slots[idx - 1u];
    if (!t->live || t->gen != gen || t->released) {
        return NULL;
    }
    return t;
}

/* Frees what the record owns and puts it on the free list with the next
 * generation. Under the lock. */
static void record_free(wf_task_set *set, wf_task *t)
{
    wf_free(set->alloc, t->block, t->block_size, 16);
    wf_strfree(set->alloc, t->message);
    t->block = NULL;
    t->input = NULL;
    t->result = NULL;
    t->message = NULL;
    t->live = false;
    t->gen = t->gen == UINT32_MAX ? 1u : t->gen + 1u;
    t->next = set->free;
    set->free = t;
    set->live--;
}

/* Frees t when nobody needs it any more. Under the lock. */
static void maybe_free(wf_task_set *set, wf_task *t)
{
    if (t->live && t->released && !t->in_queue && !t->completing &&
        t->phase == WF_TASK_ENDED && t->completed) {
        record_free(set, t);
    }
}

/* t has ended with `outcome` (under the lock): wakes the waiters. */
static void end_task(wf_task_set *set, wf_task *t, wf_task_outcome outcome)
{
    t->phase = WF_TASK_ENDED;
    t->outcome = (uint8_t)outcome;
    if (!t->needs_sync || outcome == WF_TASK_CANCELLED) {
        t->completed = true;
    }
    wf_cond_broadcast(&set->ended);
    maybe_free(set, t);
}

/* Runs claimed task t on the calling thread; takes and gives back the
 * lock. */
static void run_claimed(wf_task_set *set, wf_task *t)
{
    t->phase = WF_TASK_RUNNING;
    wf_mutex_unlock(&set->lock);
    weft_status st = set->runner(set->owner, t); /* the function */
    wf_mutex_lock(&set->lock);
    t->status = st;
    set->pools[t->pool].active--;
    /* acquire: pairs with the release store in wf_task_cancel, so a
     * cancel requested before this point is seen */
    wf_task_outcome o = wf_atomic_load_acquire_u32(&t->cancel)  ? WF_TASK_CANCELLED
                        : t->status == WEFT_OK                  ? WF_TASK_OK
                                                                : WF_TASK_FAILED;
    end_task(set, t, o);
}

/* ---- pools ---- */

#if WEFT_THREADS /* without threads the queues run in wf_task_set_run_queued */
static void pool_main(void *arg)
{
    wf_task_pool *p = arg;
    wf_task_set *set = p->set;
    wf_mutex_lock(&set->lock);
    for (;;) {
        while (!p->head && !p->stop) {
            wf_cond_wait(&p->work, &set->lock);
        }
        wf_task *t = p->head;
        if (!t) {
            break; /* stop, and nothing queued */
        }
        p->head = t->next;
        if (!p->head) {
            p->tail = NULL;
        }
        t->next = NULL;
        t->in_queue = false;
        if (t->claimed) {
            maybe_free(set, t); /* cancelled, or run by a waiter */
            continue;
        }
        t->claimed = true;
        run_claimed(set, t);
    }
    wf_mutex_unlock(&set->lock);
}
#endif

/* Stops pool p's threads and joins them (called with the lock held; gives
 * it up while joining). */
static void pool_stop(wf_task_set *set, wf_task_pool *p)
{
    if (!p->started) {
        return;
    }
    p->stop = true;
    wf_cond_broadcast(&p->work);
    uint32_t n = p->started;
    wf_mutex_unlock(&set->lock);
    for (uint32_t i = 0; i < n; i++) {
        wf_thread_join(&p->threads[i]);
    }
    wf_mutex_lock(&set->lock);
    p->started = 0;
    p->stop = false;
}

/* Starts pool p's threads if none runs (under the lock). False when none
 * could start; the ones that did keep running. */
static bool pool_start(wf_task_set *set, wf_task_pool *p)
{
#if WEFT_THREADS
    if (p->started) {
        return true;
    }
    uint32_t n = p->want ? p->want : wf_task_default_threads(p->kind, wf_thread_cpu_count());
    if (n > WF_TASK_POOL_MAX_THREADS) {
        n = WF_TASK_POOL_MAX_THREADS;
    }
    if (n > p->threads_cap) {
        wf_thread *nt = wf_alloc(set->alloc, (size_t)n * sizeof *nt, _Alignof(wf_thread));
        if (!nt) {
            return false;
        }
        wf_free(set->alloc, p->threads, (size_t)p->threads_cap * sizeof *nt,
                _Alignof(wf_thread));
        p->threads = nt;
        p->threads_cap = n;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!wf_thread_create(&p->threads[i], pool_main, p)) {
            break;
        }
        p->started++;
    }
    return p->started > 0;
#else
    (void)set;
    (void)p;
    return true; /* no thread: wf_task_set_run_queued runs the queue */
#endif
}

bool wf_task_pool_set_threads(wf_task_set *set, uint32_t kind, uint32_t threads)
{
    wf_task_pool *p = &set->pools[kind];
    wf_mutex_lock(&set->lock);
    bool ok = p->active == 0 && !set->closing;
    if (ok) {
        pool_stop(set, p); /* restarted with the new count on the next spawn */
        p->want = threads > WF_TASK_POOL_MAX_THREADS ? WF_TASK_POOL_MAX_THREADS : threads;
        if (p->active) {
            /* a spawn came in while the threads were joined; if none can
             * start now, a waiter or the next spawn runs it */
            (void)pool_start(set, p);
        }
    }
    wf_mutex_unlock(&set->lock);
    return ok;
}

/* ---- set ---- */

wf_task_set *wf_task_set_create(wf_allocator *alloc, wf_task_runner runner, void *owner)
{
    wf_task_set *set = wf_calloc(alloc, sizeof *set, _Alignof(wf_task_set));
    if (!set) {
        return NULL;
    }
    set->alloc = alloc;
    set->runner = runner;
    set->owner = owner;
    uint32_t made = 0;
    if (!wf_mutex_init(&set->lock)) {
        goto fail;
    }
    if (!wf_cond_init(&set->ended)) {
        wf_mutex_fini(&set->lock);
        goto fail;
    }
    for (; made < WF_TASK_POOLS; made++) {
        wf_task_pool *p = &set->pools[made];
        p->set = set;
        p->kind = made;
        if (!wf_cond_init(&p->work)) {
            break;
        }
    }
    if (made < WF_TASK_POOLS) {
        while (made--) {
            wf_cond_fini(&set->pools[made].work);
        }
        wf_cond_fini(&set->ended);
        wf_mutex_fini(&set->lock);
        goto fail;
    }
    return set;
fail:
    wf_free(alloc, set, sizeof *set, _Alignof(wf_task_set));
    return NULL;
}

void wf_task_set_destroy(wf_task_set *set)
{
    wf_mutex_lock(&set->lock);
    set->closing = true;
    for (uint32_t i = 0; i < set->count; i++) {
        wf_task *t = set->slots[i];
        if (!t->live || t->phase == WF_TASK_ENDED) {
            continue;
        }
        /* release: pairs with the acquire load after the function returns
         * (run_claimed) and in weft_task_cancelled */
        wf_atomic_store_release_u32(&t->cancel, 1u);
        if (!t->claimed) { /* queued: it never runs */
            t->claimed = true;
            set->pools[t->pool].active--;
            end_task(set, t, WF_TASK_CANCELLED);
        }
    }
    for (uint32_t k = 0; k < WF_TASK_POOLS; k++) {
        pool_stop(set, &set->pools[k]); /* running functions return first */
    }
    /* A task run inline by a waiter on another thread would still be
     * running here; the owner destroys the set only from its own thread
     * outside every wait (the world refuses destroy inside a callback), so
     * every record has ended now. */
    wf_mutex_unlock(&set->lock);
    for (uint32_t i = 0; i < set->count; i++) {
        wf_task *t = set->slots[i];
        WF_ASSERT(!t->live || t->phase == WF_TASK_ENDED);
        if (t->live) {
            record_free(set, t);
        }
        wf_free(set->alloc, t, sizeof *t, TASK_ALIGN);
    }
    wf_free(set->alloc, set->slots, (size_t)set->cap * sizeof *set->slots, SLOTS_ALIGN);
    for (uint32_t k = 0; k < WF_TASK_POOLS; k++) {
        wf_task_pool *p = &set->pools[k];
        wf_free(set->alloc, p->threads, (size_t)p->threads_cap * sizeof *p->threads,
                _Alignof(wf_thread));
        wf_cond_fini(&p->work);
    }
    wf_cond_fini(&set->ended);
    wf_mutex_fini(&set->lock);
    wf_free(set->alloc, set, sizeof *set, _Alignof(wf_task_set));
}

/* A record to fill (free list or new); NULL on OOM or CAPACITY. Under the
 * lock. */
static wf_task *record_take(wf_task_set *set, weft_status *why)
{
    wf_task *t = set->free;
    if (t) {
        set->free = t->next;
        t->next = NULL;
        return t;
    }
    *why = WEFT_ERR_OUT_OF_MEMORY;
    if (set->count == set->cap) {
        /* indices are 32-bit, handles use index + 1 */
        if (set->count >= UINT32_MAX - 1u) {
            *why = WEFT_ERR_CAPACITY;
            return NULL;
        }
        if (!wf_grow_ex(set->alloc, (void **)&set->slots, &set->cap, (uint64_t)set->count + 1u,
                        16u, UINT32_MAX - 1u, sizeof *set->slots, SLOTS_ALIGN)) {
            return NULL;
        }
    }
    t = wf_calloc(set->alloc, sizeof *t, TASK_ALIGN);
    if (!t) {
        return NULL;
    }
    t->set = set;
    t->index = set->count;
    t->gen = 1;
    set->slots[set->count++] = t;
    return t;
}

weft_status wf_task_spawn(wf_task_set *set, const wf_task_spawn_args *a, uint64_t *out)
{
    /* input and result share one block, made outside the lock (the
     * allocator may be slow); the result part is zero-filled */
    size_t in_bytes = (a->input_size + 15u) & ~(size_t)15u;
    size_t bytes = in_bytes + a->result_size;
    uint8_t *block = NULL;
    if (bytes) {
        block = wf_alloc(set->alloc, bytes, 16);
        if (!block) {
            return WEFT_ERR_OUT_OF_MEMORY;
        }
        if (a->input_size) {
            memcpy(block, a->input, a->input_size);
        }
        if (a->result_size) {
            memset(block + in_bytes, 0, a->result_size);
        }
    }
    weft_status st = WEFT_OK;
    wf_mutex_lock(&set->lock);
    wf_task_pool *p = &set->pools[a->pool];
    wf_task *t = NULL;
    if (set->closing) {
        st = WEFT_ERR_WRONG_PHASE;
    } else if (!pool_start(set, p)) {
        st = WEFT_ERR_INTERNAL;
    } else if (!(t = record_take(set, &st))) {
        /* st says why */
    }
    if (!t) {
        wf_mutex_unlock(&set->lock);
        wf_free(set->alloc, block, bytes, 16);
        return st;
    }
    t->phase = WF_TASK_QUEUED;
    t->outcome = WF_TASK_OK;
    t->pool = (uint8_t)a->pool;
    t->claimed = false;
    t->released = false;
    t->completed = false;
    t->completing = false;
    t->needs_sync = a->needs_sync;
    t->live = true;
    wf_atomic_init_u32(&t->cancel, 0u);
    t->fn = a->fn;
    t->user = a->user;
    t->block = block;
    t->block_size = bytes;
    t->input = a->input_size ? block : NULL;
    t->input_size = a->input_size;
    t->result = a->result_size ? block + in_bytes : NULL;
    t->result_size = a->result_size;
    t->status = WEFT_OK;
    t->message = NULL;
    t->seq = set->next_seq++;
    t->apply = a->apply;
    t->deterministic = a->deterministic;
    t->due = a->due;
    t->order = a->order;
    t->ctx.task = t;
    t->next = NULL;
    t->in_queue = true;
    if (p->tail) {
        p->tail->next = t;
    } else {
        p->head = t;
    }
    p->tail = t;
    p->active++;
    set->live++;
    *out = handle_of(t);
    wf_cond_signal(&p->work);
    wf_mutex_unlock(&set->lock);
    return WEFT_OK;
}

static void fill_view(const wf_task *t, wf_task_view *v)
{
    v->found = true;
    v->completed = t->completed;
    v->ended = t->phase == WF_TASK_ENDED;
    v->outcome = t->outcome;
    v->status = t->status;
    v->deterministic = t->deterministic;
    v->needs_sync = t->needs_sync;
    v->result_size = t->result_size;
    v->message[0] = '\0';
    if (t->completed && t->outcome == WF_TASK_FAILED && t->message) {
        size_t n = strlen(t->message);
        memcpy(v->message, t->message, n + 1u); /* cut at WF_TASK_MESSAGE_MAX when set */
    }
}

void wf_task_poll(wf_task_set *set, uint64_t handle, bool take, void *result,
                  size_t result_size, wf_task_view *view)
{
    memset(view, 0, offsetof(wf_task_view, message));
    view->message[0] = '\0';
    wf_mutex_lock(&set->lock);
    wf_task *t = lookup(set, handle);
    if (t) {
        fill_view(t, view);
        if (t->completed && take && !(result && result_size != t->result_size)) {
            if (result && t->result_size && t->outcome == WF_TASK_OK) {
                memcpy(result, t->result, t->result_size);
            }
            t->released = true;
            maybe_free(set, t);
        }
    }
    wf_mutex_unlock(&set->lock);
}

/* Waits (under the lock) until t has ended, running it here when nobody
 * has claimed it. */
static void wait_ended_locked(wf_task_set *set, wf_task *t)
{
    /* a record freed meanwhile (its handle detached by another thread, or
     * its state taken) may be reused: stop on a generation change too */
    uint32_t gen = t->gen;
    if (t->phase == WF_TASK_QUEUED && !t->claimed) {
        t->claimed = true; /* the pool thread that pops it skips it */
        run_claimed(set, t);
    }
    while (t->phase != WF_TASK_ENDED && t->live && t->gen == gen) {
        wf_cond_wait(&set->ended, &set->lock);
    }
}

void wf_task_wait_ended(wf_task_set *set, uint64_t handle, wf_task_view *view)
{
    memset(view, 0, offsetof(wf_task_view, message));
    view->message[0] = '\0';
    wf_mutex_lock(&set->lock);
    wf_task *t = lookup(set, handle);
    if (t) {
        wait_ended_locked(set, t);
        if (lookup(set, handle) == t) { /* not released meanwhile */
            fill_view(t, view);
        }
    }
    wf_mutex_unlock(&set->lock);
}

bool wf_task_cancel(wf_task_set *set, uint64_t handle)
{
    wf_mutex_lock(&set->lock);
    wf_task *t = lookup(set, handle);
    if (t && !t->completed) {
        /* release: pairs with the acquire loads in run_claimed and
         * weft_task_cancelled */
        wf_atomic_store_release_u32(&t->cancel, 1u);
        if (t->phase == WF_TASK_QUEUED && !t->claimed) {
            t->claimed = true;
            set->pools[t->pool].active--;
            end_task(set, t, WF_TASK_CANCELLED);
        } else if (t->phase == WF_TASK_ENDED && !t->completing) {
            /* ended, waiting for the owner's sync: it is not applied */
            t->outcome = WF_TASK_CANCELLED;
            t->completed = true;
            wf_cond_broadcast(&set->ended);
        }
    }
    wf_mutex_unlock(&set->lock);
    return t != NULL;
}

bool wf_task_detach(wf_task_set *set, uint64_t handle)
{
    wf_mutex_lock(&set->lock);
    wf_task *t = lookup(set, handle);
    if (t) {
        t->released = true;
        maybe_free(set, t);
    }
    wf_mutex_unlock(&set->lock);
    return t != NULL;
}

bool wf_task_set_message(wf_task_set *set, wf_task *t, const char *message)
{
    char cut[WF_TASK_MESSAGE_MAX + 1];
    size_t n = strlen(message);
    if (n > WF_TASK_MESSAGE_MAX) {
        memcpy(cut, message, WF_TASK_MESSAGE_MAX);
        cut[WF_TASK_MESSAGE_MAX] = '\0';
        message = cut;
    }
    char *copy = wf_strdup(set->alloc, message, NULL);
    if (!copy) {
        return false;
    }
    wf_mutex_lock(&set->lock);
    char *old = t->message;
    t->message = copy;
    wf_mutex_unlock(&set->lock);
    wf_strfree(set->alloc, old);
    return true;
}

uint32_t wf_task_set_live(wf_task_set *set)
{
    wf_mutex_lock(&set->lock);
    uint32_t n = set->live;
    wf_mutex_unlock(&set->lock);
    return n;
}

/* ---- the owner's sync point ---- */

static bool due_before(const wf_task *a, const wf_task *b)
{
    if (a->deterministic != b->deterministic) {
        return a->deterministic; /* deterministic ones first */
    }
    if (a->deterministic) {
        if (a->due != b->due) {
            return a->due < b->due;
        }
        if (a->order != b->order) {
            return a->order < b->order;
        }
    }
    return a->seq < b->seq;
}

int32_t wf_task_set_due(wf_task_set *set, uint64_t frame, wf_task ***out, uint32_t *cap)
{
    int32_t n = 0;
    wf_mutex_lock(&set->lock);
    for (uint32_t i = 0; i < set->count; i++) {
        wf_task *t = set->slots[i];
        if (!t->live || !t->needs_sync || t->completed) {
            continue;
        }
        bool due = t->deterministic ? t->due <= frame : t->phase == WF_TASK_ENDED;
        if (!due) {
            continue;
        }
        if ((uint32_t)n == *cap &&
            !wf_grow_ex(set->alloc, (void **)out, cap, (uint64_t)n + 1u, 16u, INT32_MAX,
                        sizeof **out, SLOTS_ALIGN)) {
            n = -1;
            break;
        }
        t->completing = true; /* kept (not freed, not turned CANCELLED once
                                 ended) until wf_task_set_complete */
        (*out)[n++] = t;
    }
    wf_mutex_unlock(&set->lock);
    /* insertion sort: a sync completes a handful of tasks */
    for (int32_t i = 1; i < n; i++) {
        wf_task *t = (*out)[i];
        int32_t j = i;
        while (j > 0 && due_before(t, (*out)[j - 1])) {
            (*out)[j] = (*out)[j - 1];
            j--;
        }
        (*out)[j] = t;
    }
    return n;
}

void wf_task_set_wait_task(wf_task_set *set, wf_task *t)
{
    wf_mutex_lock(&set->lock);
    wait_ended_locked(set, t);
    wf_mutex_unlock(&set->lock);
}

wf_task *wf_task_set_hold(wf_task_set *set, uint64_t handle)
{
    wf_mutex_lock(&set->lock);
    wf_task *t = lookup(set, handle);
    if (t && !(t->needs_sync && t->phase == WF_TASK_ENDED && !t->completed &&
               !t->completing)) {
        t = NULL;
    }
    if (t) {
        t->completing = true;
    }
    wf_mutex_unlock(&set->lock);
    return t;
}

wf_task_outcome wf_task_set_outcome(wf_task_set *set, wf_task *t)
{
    wf_mutex_lock(&set->lock);
    wf_task_outcome o = (wf_task_outcome)t->outcome;
    wf_mutex_unlock(&set->lock);
    return o;
}

void wf_task_set_complete(wf_task_set *set, wf_task *t)
{
    wf_mutex_lock(&set->lock);
    t->completing = false;
    if (!t->completed) {
        t->completed = true;
        wf_cond_broadcast(&set->ended);
    }
    maybe_free(set, t);
    wf_mutex_unlock(&set->lock);
}

void wf_task_set_run_queued(wf_task_set *set)
{
#if WEFT_THREADS
    (void)set;
#else
    wf_mutex_lock(&set->lock);
    for (uint32_t k = 0; k < WF_TASK_POOLS; k++) {
        wf_task_pool *p = &set->pools[k];
        /* only what was queued before this call: a task spawning tasks
         * cannot keep the loop going */
        wf_task *last = p->tail;
        while (last && p->head) {
            wf_task *t = p->head;
            p->head = t->next;
            if (!p->head) {
                p->tail = NULL;
            }
            t->next = NULL;
            t->in_queue = false;
            if (!t->claimed) {
                t->claimed = true;
                run_claimed(set, t);
            } else {
                maybe_free(set, t);
            }
            if (t == last) {
                break;
            }
        }
    }
    wf_mutex_unlock(&set->lock);
#endif
}

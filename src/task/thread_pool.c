/* src/task/thread_pool.c - workers, stealing, parking and task groups.
 * SPDX-License-Identifier: MIT
 *
 * Parking protocol (no lost wake-ups, no busy idle). `parked` counts
 * workers that have announced they are going to sleep and have not been
 * claimed. A parking worker increments it, then re-checks every deque and
 * the stop flag; a submitter pushes, then claims one announced worker by
 * decrementing `parked` with a CAS and posts one semaphore token for it.
 * The seq_cst fence on each side (after the increment, after the push)
 * guarantees that at least one of them sees the other: either the worker's
 * re-check finds the task, or the submitter sees the announcement. A worker
 * whose re-check finds work withdraws its announcement with a CAS; if a
 * submitter claimed it first, it consumes that submitter's token instead,
 * so tokens always equal claims and never pile up. Shutdown stores the stop
 * flag, then posts one token per thread: each worker consumes at most one
 * token after stop is visible to it (it exits right after), so none sleeps
 * forever.
 *
 * Threads: each pool_worker is written by its own thread (seed) and, for its
 * deque, as the deque's owner; other workers only steal. The pool header is
 * written at create and destroy by the driving thread only.
 *
 * Membership (who may use which worker's deque as its owner): a started
 * thread points at its pool_worker from thread-local storage for its whole
 * life. Worker 0 is whichever thread the pool's `owner0` names, by the
 * address of that thread's thread-local `tls_token` (unique among live
 * threads); create names the creator, enter/leave move the role. Nothing
 * global is shared between pools, so one pool's create or destroy cannot
 * change another's membership, and pool_self answers NULL for a thread
 * that is not a worker of the pool instead of indexing its workers.
 */
#include "task/thread_pool.h"

#include "core/check.h"
#include "task/thread.h"

typedef struct pool_worker {
    wf_deque deque;        /* this worker is its owner; everyone may steal */
    wf_atomic_ptr owner;   /* caller slots (index >= count): &tls_token of
                              the attached thread, or NULL when free */
    wf_thread thread;      /* unused for worker 0 (the caller) */
    wf_thread_pool *pool;  /* back pointer for the thread entry */
    uint64_t seed;         /* xorshift state for victim choice; own thread */
    uint32_t index;        /* 0 .. count-1 */
} pool_worker;

struct wf_thread_pool {
    wf_allocator *alloc;   /* caller's allocator; everything below from it */
    wf_atomic_ptr owner0;  /* &tls_token of the thread that is worker 0, or
                              NULL; see the membership note above */
    pool_worker *workers;  /* count + WF_POOL_MAX_CALLERS entries, cache-line
                              aligned: the workers, then the caller slots */
    uint32_t count;        /* workers including worker 0 */
    uint32_t total;        /* count + WF_POOL_MAX_CALLERS: every deque */
    uint32_t started;      /* threads 1..started-1 are running */
    wf_mutex alloc_lock;   /* serializes deque growth on worker threads */
    wf_semaphore wake;     /* one token per claimed park, plus shutdown */
    /* Announced-but-unclaimed parkers; touched by every submit and park. */
    _Alignas(WF_CACHE_LINE) wf_atomic_u32 parked;
    /* 1 once destroy has begun. */
    _Alignas(WF_CACHE_LINE) wf_atomic_u32 stop;
};

/* ---- membership ---- */

/* The worker this thread was started as (NULL on threads no pool started). */
static _Thread_local pool_worker *tls_worker;
/* Only its address is used: a per-thread identity for owner0. */
static _Thread_local char tls_token;

/* The calling thread's worker in p, or NULL when it is not one of them. */
static pool_worker *pool_self(wf_thread_pool *p)
{
    pool_worker *w = tls_worker;
    if (w && w->pool == p) {
        return w;
    }
    /* Relaxed: only the thread named there compares equal, and it wrote the
     * value itself (enter/create); any other thread reads some other
     * address, old or new, and is not worker 0 either way. Pairs with
     * nothing. */
    if (wf_atomic_load_relaxed_ptr(&p->owner0) == (void *)&tls_token) {
        return &p->workers[0];
    }
    for (uint32_t i = p->count; i < p->total; i++) {
        /* Relaxed: as owner0 above; the attaching thread itself stored
         * its token there. */
        if (wf_atomic_load_relaxed_ptr(&p->workers[i].owner) == (void *)&tls_token) {
            return &p->workers[i];
        }
    }
    return NULL;
}

int32_t wf_thread_pool_self_index(const wf_thread_pool *pool)
{
    pool_worker *w = pool_self((wf_thread_pool *)(uintptr_t)pool);
    return w ? (int32_t)w->index : -1;
}

bool wf_thread_pool_on_pool_thread(void)
{
    return tls_worker != NULL;
}

void *wf_thread_pool_enter(wf_thread_pool *pool)
{
    /* Relaxed: the role changes only while no task of the pool runs, on
     * the thread that then submits; the workers learn about tasks through
     * the deques' own release/acquire pairs. Pairs with nothing. */
    void *prev = wf_atomic_load_relaxed_ptr(&pool->owner0);
    wf_atomic_store_relaxed_ptr(&pool->owner0, &tls_token);
    return prev;
}

void wf_thread_pool_leave(wf_thread_pool *pool, void *prev)
{
    /* Relaxed: as in enter. */
    wf_atomic_store_relaxed_ptr(&pool->owner0, prev);
}

/* The token of a thread that was a member already. */
static char attach_member;

void *wf_thread_pool_attach(wf_thread_pool *pool)
{
    if (pool_self(pool)) {
        return &attach_member;
    }
    for (uint32_t i = pool->count; i < pool->total; i++) {
        void *expected = NULL;
        /* seq_cst CAS (acquire part): pairs with the release store of NULL
         * in detach, so the previous holder's last push and pop on this
         * deque happen before our first: the deque changes owner. */
        if (wf_atomic_cas_seq_cst_ptr(&pool->workers[i].owner, &expected, &tls_token)) {
            return &pool->workers[i];
        }
    }
    return NULL;
}

void wf_thread_pool_detach(wf_thread_pool *pool, void *token)
{
    (void)pool;
    if (!token || token == (void *)&attach_member) {
        return;
    }
    pool_worker *w = token;
    WF_ASSERT(wf_deque_size_hint(&w->deque) == 0);
    /* Release: pairs with the CAS in attach (see there). */
    wf_atomic_store_release_ptr(&w->owner, NULL);
}

/* ---- running and finding tasks ----
 *
 * A blocking task (wf_task.blocking) sits in a deque with the low bit of
 * its pointer set (tasks are pointer-aligned), so a thief that may not
 * start one sees that from the slot alone and leaves it, without
 * touching the task (which it does not own until its CAS succeeds). */

static inline void *task_item(wf_task *t)
{
    return t->blocking ? (void *)((uintptr_t)t | 1u) : (void *)t;
}

static inline wf_task *item_task(void *item)
{
    return (wf_task *)((uintptr_t)item & ~(uintptr_t)1u);
}

static void pool_run(pool_worker *w, wf_task *task)
{
    /* Read before fn: the task may be reused by its owner once fn starts. */
    wf_task_group *group = task->group;
    task->fn(task->arg, w->index);
    if (group) {
        /* Release: pairs with the acquire load of pending in
         * wf_thread_pool_wait, publishing what fn wrote. Decrements by
         * other tasks are RMWs, so every earlier release is carried along
         * in the release sequence to the waiter that reads 0. */
        wf_atomic_fetch_sub_release_i64(&group->pending, 1);
    }
}

static uint64_t worker_random(pool_worker *w)
{
    uint64_t x = w->seed;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    w->seed = x;
    return x;
}

/* Own deque first (LIFO, warm; its blocking tasks are the caller's own),
 * then one sweep over the others starting at a random victim (FIFO end:
 * the oldest, usually largest, work), taking a blocking task only when
 * `blocking_ok` (a started thread at the top of its loop). */
static wf_task *pool_find(pool_worker *w, bool blocking_ok)
{
    void *item = wf_deque_pop(&w->deque);
    if (item) {
        return item_task(item);
    }
    wf_thread_pool *p = w->pool;
    if (p->total == 1) {
        return NULL;
    }
    uint32_t start = (uint32_t)(worker_random(w) % p->total);
    for (uint32_t i = 0; i < p->total; i++) {
        uint32_t v = (start + i) % p->total;
        if (v == w->index) {
            continue;
        }
        /* Relaxed: a free caller slot's deque is empty (detach requires
         * it); a stale NULL only skips a slot for one round. Saves the
         * steal's fence on the slots nobody holds. */
        if (v >= p->count && !wf_atomic_load_relaxed_ptr(&p->workers[v].owner)) {
            continue;
        }
        void *out = NULL;
        /* An ABORT means another thread won that item (a SKIP that the
         * oldest item is blocking); the deque may hold more, but the next
         * round will see it, so move on. */
        if (wf_deque_steal_if(&p->workers[v].deque, &out, !blocking_ok) == WF_STEAL_OK) {
            return item_task(out);
        }
    }
    return NULL;
}

static bool pool_any_work(const wf_thread_pool *p)
{
    for (uint32_t i = 0; i < p->total; i++) {
        if (wf_deque_size_hint(&p->workers[i].deque) > 0) {
            return true;
        }
    }
    return false;
}

/* ---- parking ---- */

/* Claims one announced parker, if any, and wakes it. */
static void pool_wake_one(wf_thread_pool *p)
{
    /* seq_cst: pairs with the fence in pool_park. The push before this and
     * the load of parked after it cannot be reordered, so either we see the
     * parker's announcement or its re-check sees our task. */
    wf_atomic_fence_seq_cst();
    /* Relaxed: ordered by the fence above; only a first guess for the CAS,
     * which re-reads it in the same total order as the parkers' updates. */
    uint32_t n = wf_atomic_load_relaxed_u32(&p->parked);
    while (n > 0) {
        /* seq_cst CAS: pairs with the parkers' increment and withdrawal
         * CAS on parked; each success is one claim = one token. */
        if (wf_atomic_cas_seq_cst_u32(&p->parked, &n, n - 1)) {
            wf_semaphore_post(&p->wake, 1);
            return;
        }
    }
}

static void pool_park(wf_thread_pool *p)
{
    /* seq_cst: pairs with the claim CAS in pool_wake_one. */
    wf_atomic_fetch_add_seq_cst_u32(&p->parked, 1);
    /* seq_cst: pairs with the fence in pool_wake_one (see there). */
    wf_atomic_fence_seq_cst();
    /* Acquire: pairs with the release store of stop in destroy. */
    if (wf_atomic_load_acquire_u32(&p->stop) || pool_any_work(p)) {
        /* Relaxed: a first guess for the CAS below, which pairs with the
         * submitters' claim CAS. */
        uint32_t n = wf_atomic_load_relaxed_u32(&p->parked);
        while (n > 0) {
            /* seq_cst CAS: pairs with the submitters' claim CAS; success
             * withdraws our announcement before anyone claimed it. */
            if (wf_atomic_cas_seq_cst_u32(&p->parked, &n, n - 1)) {
                return;
            }
        }
        /* Someone claimed us and posted (or is about to post) a token:
         * take it so tokens keep matching claims. Returns promptly. */
    }
    wf_semaphore_wait(&p->wake);
}

uint32_t wf_thread_pool_parked(wf_thread_pool *pool)
{
    /* Acquire: a count read after the parkers' announcements. */
    return wf_atomic_load_acquire_u32(&pool->parked);
}

static void worker_main(void *arg)
{
    pool_worker *w = arg;
    wf_thread_pool *p = w->pool;
    tls_worker = w; /* for the thread's whole life */
    uint32_t idle = 0;
    /* Acquire: pairs with the release store of stop in destroy. */
    while (!wf_atomic_load_acquire_u32(&p->stop)) {
        wf_task *task = pool_find(w, true);
        if (task) {
            pool_run(w, task);
            idle = 0;
        } else if (++idle < WF_POOL_SPIN_ROUNDS) {
            wf_thread_pause();
        } else {
            idle = 0;
            pool_park(p);
        }
    }
    tls_worker = NULL;
}

/* ---- lifecycle ---- */

static void pool_stop_threads(wf_thread_pool *p)
{
    /* Release: pairs with the acquire loads of stop in worker_main and
     * pool_park. The tokens below are posted under the semaphore's mutex
     * after this store, so a woken worker always sees stop == 1. */
    wf_atomic_store_release_u32(&p->stop, 1);
    if (p->started > 1) {
        wf_semaphore_post(&p->wake, p->started - 1);
    }
    for (uint32_t i = 1; i < p->started; i++) {
        wf_thread_join(&p->workers[i].thread);
    }
}

static void pool_free(wf_thread_pool *p, uint32_t deques)
{
    for (uint32_t i = 0; i < deques; i++) {
        wf_deque_fini(&p->workers[i].deque);
    }
    if (p->workers) {
        wf_free(p->alloc, p->workers, sizeof(pool_worker) * p->total,
                _Alignof(pool_worker));
    }
    wf_semaphore_fini(&p->wake);
    wf_mutex_fini(&p->alloc_lock);
    wf_free(p->alloc, p, sizeof *p, _Alignof(wf_thread_pool));
}

wf_thread_pool *wf_thread_pool_create(wf_allocator *alloc, uint32_t workers)
{
    uint32_t count = workers ? workers : wf_thread_cpu_count();
    if (count > WF_POOL_MAX_WORKERS) {
        count = WF_POOL_MAX_WORKERS;
    }
    wf_thread_pool *p = wf_calloc(alloc, sizeof *p, _Alignof(wf_thread_pool));
    if (!p) {
        return NULL;
    }
    p->alloc = alloc;
    p->count = count;
    p->total = count + WF_POOL_MAX_CALLERS;
    p->started = 1; /* worker 0 is the caller */
    wf_atomic_init_u32(&p->parked, 0);
    wf_atomic_init_u32(&p->stop, 0);
    wf_atomic_init_ptr(&p->owner0, &tls_token); /* the creator is worker 0 */
    if (!wf_mutex_init(&p->alloc_lock)) {
        wf_free(alloc, p, sizeof *p, _Alignof(wf_thread_pool));
        return NULL;
    }
    if (!wf_semaphore_init(&p->wake, 0)) {
        wf_mutex_fini(&p->alloc_lock);
        wf_free(alloc, p, sizeof *p, _Alignof(wf_thread_pool));
        return NULL;
    }
    p->workers = wf_calloc(alloc, sizeof(pool_worker) * p->total, _Alignof(pool_worker));
    if (!p->workers) {
        pool_free(p, 0);
        return NULL;
    }
    for (uint32_t i = 0; i < p->total; i++) {
        pool_worker *w = &p->workers[i];
        w->pool = p;
        w->index = i;
        wf_atomic_init_ptr(&w->owner, NULL);
        w->seed = 0x9E3779B97F4A7C15ull * (i + 1); /* never 0 for xorshift */
        if (!wf_deque_init(&w->deque, alloc, &p->alloc_lock, 256)) {
            pool_free(p, i);
            return NULL;
        }
    }
    for (uint32_t i = 1; i < count; i++) {
        if (!wf_thread_create(&p->workers[i].thread, worker_main, &p->workers[i])) {
            pool_stop_threads(p);
            pool_free(p, count);
            return NULL;
        }
        p->started = i + 1;
    }
    return p;
}

void wf_thread_pool_destroy(wf_thread_pool *pool)
{
    if (!pool) {
        return;
    }
    pool_stop_threads(pool);
    for (uint32_t i = 0; i < pool->total; i++) {
        /* Every group was waited on, so no task is left behind. */
        WF_ASSERT(wf_deque_size_hint(&pool->workers[i].deque) == 0);
    }
    pool_free(pool, pool->total);
}

uint32_t wf_thread_pool_worker_count(const wf_thread_pool *pool)
{
    return pool->count;
}

/* ---- tasks ---- */

void wf_task_group_init(wf_task_group *group)
{
    wf_atomic_init_i64(&group->pending, 0);
}

bool wf_thread_pool_submit(wf_thread_pool *pool, wf_task *task)
{
    pool_worker *w = pool_self(pool);
    if (!w) {
        return false; /* not a worker of this pool: it owns no deque here */
    }
    if (task->group) {
        /* Relaxed: only the count matters here. This increment is
         * sequenced before the push (and, for a nested submit, before the
         * parent's own release decrement), so pending cannot reach 0 while
         * this task is outstanding. */
        wf_atomic_fetch_add_relaxed_i64(&task->group->pending, 1);
    }
    if (!wf_deque_push(&w->deque, task_item(task))) {
        pool_run(w, task); /* benign: out of memory growing the deque */
        return true;
    }
    pool_wake_one(pool);
    return true;
}

bool wf_thread_pool_help(wf_thread_pool *pool)
{
    pool_worker *w = pool_self(pool);
    if (!w) {
        return false;
    }
    wf_task *task = pool_find(w, false);
    if (task) {
        pool_run(w, task);
        return true;
    }
    return false;
}

bool wf_thread_pool_wait(wf_thread_pool *pool, wf_task_group *group)
{
    pool_worker *w = pool_self(pool);
    if (!w) {
        return false;
    }
    uint32_t idle = 0;
    /* Acquire: pairs with the release decrement in pool_run, so the
     * group's results are visible once we read 0. */
    while (wf_atomic_load_acquire_i64(&group->pending) > 0) {
        wf_task *task = pool_find(w, false);
        if (task) {
            pool_run(w, task);
            idle = 0;
        } else if (++idle % 64 == 0) {
            /* The last tasks are running elsewhere; let them have the CPU. */
            wf_thread_yield();
        } else {
            wf_thread_pause();
        }
    }
    return true;
}

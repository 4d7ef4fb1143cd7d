// tests/sched/test_sched_exec.c - the multi-threaded executor (built-in pool
// and a host job system): exclusive and main-thread systems, concurrency of
// independent systems, no overlap of conflicting ones, weft_system_par_each
// (sums, per-chunk commands, hash independent of the thread count) and
// failures on many threads.
// Checks made on worker threads only count violations in atomics; the
// driver asserts after the run. Waits have timeouts, so a broken executor
// fails instead of hanging. Worlds use the default (thread-safe) allocator.
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>

#include "needs_threads.h"

#include "weft.h"

// ---- helpers ----

// Watchdog: a test that deadlocks fails after WATCHDOG_S seconds instead of
// hanging until ctest's timeout. g_watch_* name what was running. The
// limit is generous: under ThreadSanitizer on a loaded 2-core machine a
// single test (20,000 sparse spawns, then two par_each runs) was seen
// getting 5% of a core and needing more than 45 s without being stuck.
#define WATCHDOG_S 240
static const char *volatile g_watch_what = "";
static volatile int g_watch_run = -1;

static void on_alarm(int sig)
{
    (void)sig;
    char buf[256];
    int n = snprintf(buf, sizeof buf,
                     "WATCHDOG: %s did not finish within %d s (schedule run %d): deadlock?\n",
                     g_watch_what, WATCHDOG_S, g_watch_run);
    if (n > 0) {
        (void)!write(2, buf, (size_t)n);
    }
    _exit(1);
}

static int watch_setup(void **state)
{
    (void)state;
    g_watch_what = "a test";
    g_watch_run = -1;
    alarm(WATCHDOG_S);
    return 0;
}

static int watch_teardown(void **state)
{
    (void)state;
    alarm(0);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void spin_us(int us)
{
    double end = now_s() + us * 1e-6;
    while (now_s() < end) {
    }
}

// Spins until *v >= target or `timeout` seconds pass; true if reached.
static bool wait_atleast(atomic_int *v, int target, double timeout)
{
    double end = now_s() + timeout;
    while (atomic_load(v) < target) {
        if (now_s() > end) {
            return false;
        }
        sched_yield();
    }
    return true;
}

static weft_world *mkworld(int32_t threads)
{
    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    // the build without threads runs everything on the calling thread
    if (threads > weft_max_threads()) {
        threads = weft_max_threads();
    }
    weft_status st = weft_world_set_threads(w, threads);
    if (st != WEFT_OK) {
        fail_msg("weft_world_set_threads(%d): %s: %s", threads, weft_status_name(st),
                 weft_last_error(w));
    }
    return w;
}

static weft_component comp(weft_world *w, const char *name, size_t size)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    weft_component c = weft_component_register(w, &d);
    if (c == 0) {
        fail_msg("register %s: %s", name, weft_last_error(w));
    }
    return c;
}

static void term(weft_query_desc *d, weft_component id, weft_access access, weft_oper oper)
{
    weft_term *t = &d->terms[d->term_count++];
    memset(t, 0, sizeof *t);
    t->id = id;
    t->access = access;
    t->oper = oper;
}

typedef struct sysb {
    weft_system_desc d;
    weft_query_desc q[4];
    int nq;
} sysb;

static void sb_init(sysb *b, const char *name, weft_system_fn fn, void *user, uint32_t flags)
{
    memset(b, 0, sizeof *b);
    b->d.name = name;
    b->d.fn = fn;
    b->d.user = user;
    b->d.flags = flags;
}

static weft_query_desc *sb_query(sysb *b)
{
    return &b->q[b->nq++];
}

static weft_node sb_add(weft_world *w, weft_schedule *s, sysb *b)
{
    b->d.queries = b->nq ? b->q : NULL;
    b->d.query_count = b->nq;
    weft_node n = weft_schedule_add_system(s, &b->d);
    if (n == WEFT_NODE_NONE) {
        fail_msg("weft_schedule_add_system(%s): %s: %s", b->d.name,
                 weft_status_name(weft_last_status(w)), weft_last_error(w));
    }
    return n;
}

// A system with one query of one term.
static weft_node add1(weft_world *w, weft_schedule *s, const char *name, weft_system_fn fn,
                      void *user, uint32_t flags, weft_component c, weft_access a)
{
    sysb b;
    sb_init(&b, name, fn, user, flags);
    if (c) {
        term(sb_query(&b), c, a, WEFT_OPER_AND);
    }
    return sb_add(w, s, &b);
}

static void run_ok(weft_world *w, weft_schedule *s)
{
    weft_status st = weft_schedule_run(s, 1.0 / 60.0);
    if (st != WEFT_OK) {
        fail_msg("weft_schedule_run: %s: %s", weft_status_name(st), weft_last_error(w));
    }
}

// ---- exclusive and main-thread systems ----

typedef struct excl_state {
    atomic_int running;      // systems inside their body
    atomic_int excl_inside;  // an exclusive system is inside
    atomic_int main_running; // main-thread systems inside
    atomic_int violations;
    atomic_int wrong_thread;
    atomic_int runs;
    pthread_t main;
} excl_state;

static void sys_normal(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    excl_state *x = user;
    atomic_fetch_add(&x->running, 1);
    atomic_fetch_add(&x->runs, 1);
    if (atomic_load(&x->excl_inside)) {
        atomic_fetch_add(&x->violations, 1);
    }
    spin_us(200);
    if (atomic_load(&x->excl_inside)) {
        atomic_fetch_add(&x->violations, 1);
    }
    atomic_fetch_sub(&x->running, 1);
}

static void sys_excl(weft_system_ctx *ctx, void *user)
{
    excl_state *x = user;
    if (atomic_fetch_add(&x->running, 1) != 0) {
        atomic_fetch_add(&x->violations, 1);
    }
    atomic_fetch_add(&x->runs, 1);
    atomic_store(&x->excl_inside, 1);
    if (!pthread_equal(pthread_self(), x->main) || weft_system_world(ctx) == NULL) {
        atomic_fetch_add(&x->wrong_thread, 1);
    }
    spin_us(300);
    if (atomic_load(&x->running) != 1) {
        atomic_fetch_add(&x->violations, 1);
    }
    atomic_store(&x->excl_inside, 0);
    atomic_fetch_sub(&x->running, 1);
}

static void sys_main_only(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    excl_state *x = user;
    atomic_fetch_add(&x->running, 1);
    atomic_fetch_add(&x->runs, 1);
    if (!pthread_equal(pthread_self(), x->main)) {
        atomic_fetch_add(&x->wrong_thread, 1);
    }
    if (atomic_fetch_add(&x->main_running, 1) != 0 || atomic_load(&x->excl_inside)) {
        atomic_fetch_add(&x->violations, 1);
    }
    spin_us(200);
    atomic_fetch_sub(&x->main_running, 1);
    atomic_fetch_sub(&x->running, 1);
}

static void exclusive_and_main_thread_systems(void **state)
{
    (void)state;
    weft_world *w = mkworld(4);
    assert_int_equal(weft_world_threads(w), weft_max_threads() < 4 ? weft_max_threads() : 4);
    excl_state x;
    memset(&x, 0, sizeof x);
    x.main = pthread_self();
    weft_schedule *s = weft_schedule_create(w, "update");
    assert_non_null(s);
    char names[16][16];
    int k = 0;
    for (int i = 0; i < 12; i++) {
        snprintf(names[k], sizeof names[k], "s%d", i);
        weft_component c = comp(w, names[k], sizeof(uint32_t));
        if (i == 3 || i == 8) {
            add1(w, s, names[k], sys_excl, &x, WEFT_SYSTEM_EXCLUSIVE, c, WEFT_ACCESS_WRITE);
        } else if (i == 5 || i == 10) {
            add1(w, s, names[k], sys_main_only, &x, WEFT_SYSTEM_MAIN_THREAD, c,
                 WEFT_ACCESS_WRITE);
        } else {
            add1(w, s, names[k], sys_normal, &x, 0, c, WEFT_ACCESS_WRITE);
        }
        k++;
    }
    assert_int_equal(weft_schedule_set_profiling(s, true), WEFT_OK); /* max_concurrency */
    for (int r = 0; r < 20; r++) {
        run_ok(w, s);
    }
    assert_int_equal(atomic_load(&x.runs), 20 * 12);
    assert_int_equal(atomic_load(&x.violations), 0);
    assert_int_equal(atomic_load(&x.wrong_thread), 0);
    assert_int_equal(atomic_load(&x.running), 0);
    assert_true(weft_schedule_max_concurrency(s) >= 1);
    weft_world_destroy(w);
}

// ---- independent systems run concurrently ----

typedef struct rendezvous {
    atomic_int started;
    atomic_int timeouts;
    int target;
} rendezvous;

static void sys_rendezvous(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    rendezvous *r = user;
    atomic_fetch_add(&r->started, 1);
    if (!wait_atleast(&r->started, r->target, 5.0)) {
        atomic_fetch_add(&r->timeouts, 1);
    }
}

static void independent_systems_start_together(void **state)
{
    (void)state;
    NEEDS_THREADS("systems starting together on several workers");
    weft_world *w = mkworld(4);
    rendezvous r;
    memset(&r, 0, sizeof r);
    r.target = 4;
    weft_schedule *s = weft_schedule_create(w, "update");
    static const char *names[4] = {"indep0", "indep1", "indep2", "indep3"};
    for (int i = 0; i < 4; i++) {
        weft_component c = comp(w, names[i], sizeof(uint32_t));
        add1(w, s, names[i], sys_rendezvous, &r, 0, c, WEFT_ACCESS_WRITE);
    }
    assert_int_equal(weft_schedule_set_profiling(s, true), WEFT_OK); /* max_concurrency */
    for (int run = 0; run < 3; run++) {
        atomic_store(&r.started, 0);
        run_ok(w, s);
        assert_int_equal(atomic_load(&r.started), 4);
        if (atomic_load(&r.timeouts) != 0) {
            fail_msg("run %d: %d of 4 independent systems waited 5 s for the others: they did "
                     "not run concurrently on 4 threads", run, atomic_load(&r.timeouts));
        }
    }
    assert_true(weft_schedule_max_concurrency(s) >= 4);
    weft_world_destroy(w);
}

// Two writers of Pos never overlap (each other or a reader); two readers do;
// writers made disjoint by With/Without do.
typedef struct overlap {
    atomic_int writers, readers, violations;
    atomic_int readers_arrived, readers_met, disjoint_arrived, disjoint_met;
    atomic_int runs;
    int target; // arrivals expected by the end of this run (2 per run)
} overlap;

static void sys_pos_writer(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    overlap *o = user;
    atomic_fetch_add(&o->runs, 1);
    if (atomic_fetch_add(&o->writers, 1) != 0 || atomic_load(&o->readers) != 0) {
        atomic_fetch_add(&o->violations, 1);
    }
    spin_us(300);
    if (atomic_load(&o->writers) != 1 || atomic_load(&o->readers) != 0) {
        atomic_fetch_add(&o->violations, 1);
    }
    atomic_fetch_sub(&o->writers, 1);
}

static void sys_pos_reader(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    overlap *o = user;
    atomic_fetch_add(&o->runs, 1);
    atomic_fetch_add(&o->readers, 1);
    if (atomic_load(&o->writers) != 0) {
        atomic_fetch_add(&o->violations, 1);
    }
    atomic_fetch_add(&o->readers_arrived, 1);
    if (wait_atleast(&o->readers_arrived, o->target, 2.0)) {
        atomic_fetch_add(&o->readers_met, 1);
    }
    atomic_fetch_sub(&o->readers, 1);
}

static void sys_disjoint_writer(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    overlap *o = user;
    atomic_fetch_add(&o->runs, 1);
    atomic_fetch_add(&o->disjoint_arrived, 1);
    if (wait_atleast(&o->disjoint_arrived, o->target, 2.0)) {
        atomic_fetch_add(&o->disjoint_met, 1);
    }
}

static void conflicting_systems_never_overlap(void **state)
{
    (void)state;
    NEEDS_THREADS("overlap is possible only on several workers");
    weft_world *w = mkworld(4);
    weft_component pos = comp(w, "Pos", 8);
    weft_component vel = comp(w, "Vel", 8);
    weft_component enemy = comp(w, "Enemy", 0);
    overlap o;
    memset(&o, 0, sizeof o);
    weft_schedule *s = weft_schedule_create(w, "update");
    add1(w, s, "writer1", sys_pos_writer, &o, 0, pos, WEFT_ACCESS_WRITE);
    add1(w, s, "writer2", sys_pos_writer, &o, 0, pos, WEFT_ACCESS_WRITE);
    add1(w, s, "reader1", sys_pos_reader, &o, 0, pos, WEFT_ACCESS_READ);
    add1(w, s, "reader2", sys_pos_reader, &o, 0, pos, WEFT_ACCESS_READ);
    sysb b;
    sb_init(&b, "vel_enemies", sys_disjoint_writer, &o, 0);
    weft_query_desc *q = sb_query(&b);
    term(q, vel, WEFT_ACCESS_WRITE, WEFT_OPER_AND);
    term(q, enemy, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    sb_add(w, s, &b);
    sb_init(&b, "vel_others", sys_disjoint_writer, &o, 0);
    q = sb_query(&b);
    term(q, vel, WEFT_ACCESS_WRITE, WEFT_OPER_AND);
    term(q, enemy, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT);
    sb_add(w, s, &b);
    assert_int_equal(weft_schedule_build(s), WEFT_OK);
    int runs = 10;
    for (int r = 0; r < runs; r++) {
        o.target = 2 * (r + 1);
        run_ok(w, s);
    }
    assert_int_equal(atomic_load(&o.runs), 6 * runs);
    assert_int_equal(atomic_load(&o.violations), 0);
    if (atomic_load(&o.readers_met) != 2 * runs) {
        fail_msg("two readers of Pos overlapped in %d of %d system runs", atomic_load(&o.readers_met),
                 2 * runs);
    }
    if (atomic_load(&o.disjoint_met) != 2 * runs) {
        fail_msg("With/Without-disjoint writers overlapped in %d of %d system runs",
                 atomic_load(&o.disjoint_met), 2 * runs);
    }
    weft_world_destroy(w);
}

// ---- par_each: sums, per-chunk commands, hash per thread count ----

#define PAR_N 100000

typedef struct par_world {
    weft_world *w;
    weft_schedule *s;
    weft_component val, a, b, tag7, spawned;
    atomic_uint_fast64_t sum;
    atomic_int chunks;
    atomic_int bad;
    atomic_int max_rows;
    int64_t sum_rows;
} par_world;

static void chunk_sum(weft_iter *it, weft_commands *cmds, void *user)
{
    par_world *p = user;
    uint64_t local = 0;
    int64_t rows = 0;
    atomic_fetch_add(&p->chunks, 1);
    while (weft_iter_next(it)) {
        int32_t n = weft_iter_count(it);
        const uint32_t *v = weft_iter_field(it, 0, sizeof(uint32_t));
        const weft_entity *es = weft_iter_entities(it);
        if (v == NULL || es == NULL) {
            atomic_fetch_add(&p->bad, 1);
            return;
        }
        for (int32_t i = 0; i < n; i++) {
            local += v[i];
            if (v[i] % 7 == 0) {
                if (weft_cmd_insert(cmds, es[i], p->tag7, NULL, 0) != WEFT_OK) {
                    atomic_fetch_add(&p->bad, 1);
                }
            }
            if (v[i] % 1000 == 0 && v[i] < PAR_N) {
                uint32_t nv = v[i] + 10u * PAR_N;
                weft_value vals[2] = {{p->val, sizeof nv, &nv}, {p->spawned, 0, NULL}};
                if (weft_cmd_spawn(cmds, vals, 2) == 0) {
                    atomic_fetch_add(&p->bad, 1);
                }
            }
        }
        rows += n;
    }
    atomic_fetch_add(&p->sum, local);
    (void)rows;
}

static void sys_par_sum(weft_system_ctx *ctx, void *user)
{
    par_world *p = user;
    if (weft_system_par_each(ctx, 0, chunk_sum, p, 1000) != WEFT_OK) {
        atomic_fetch_add(&p->bad, 1);
    }
}

static void chunk_add(weft_iter *it, weft_commands *cmds, void *user)
{
    par_world *p = user;
    (void)cmds;
    while (weft_iter_next(it)) {
        uint32_t *v = weft_iter_field_mut(it, 0, sizeof(uint32_t));
        if (v == NULL) {
            atomic_fetch_add(&p->bad, 1);
            return;
        }
        for (int32_t i = 0; i < weft_iter_count(it); i++) {
            v[i] = v[i] * 3u + 1u;
        }
    }
}

static void sys_par_add(weft_system_ctx *ctx, void *user)
{
    par_world *p = user;
    if (weft_system_par_each(ctx, 0, chunk_add, p, 0) != WEFT_OK) {
        atomic_fetch_add(&p->bad, 1);
    }
}

// Builds the par_each world: PAR_N entities with Val = i over 4 archetypes
// (tags A, B), a summing/recording system and a writer of Val With A.
static void par_setup(par_world *p, weft_world *w)
{
    memset(p, 0, sizeof *p);
    p->w = w;
    p->val = comp(w, "Val", sizeof(uint32_t));
    p->a = comp(w, "A", 0);
    p->b = comp(w, "B", 0);
    p->tag7 = comp(w, "Tag7", 0);
    p->spawned = comp(w, "Spawned", 0);
    uint32_t *vals = malloc(sizeof(uint32_t) * PAR_N);
    assert_non_null(vals);
    for (int g = 0; g < 4; g++) {
        int32_t n = 0;
        for (uint32_t i = (uint32_t)g; i < PAR_N; i += 4) {
            vals[n++] = i;
        }
        weft_value cols[3] = {{p->val, sizeof(uint32_t), vals}, {p->a, 0, NULL}, {p->b, 0, NULL}};
        int32_t nc = 1;
        if (g & 1) {
            cols[nc++] = (weft_value){p->a, 0, NULL};
        }
        if (g & 2) {
            cols[nc++] = (weft_value){p->b, 0, NULL};
        }
        assert_int_equal(weft_spawn_bulk(w, cols, nc, n, NULL), WEFT_OK);
    }
    free(vals);
    p->s = weft_schedule_create(w, "par");
    assert_non_null(p->s);
    sysb b;
    sb_init(&b, "par_sum", sys_par_sum, p, WEFT_SYSTEM_COMMANDS);
    term(sb_query(&b), p->val, WEFT_ACCESS_READ, WEFT_OPER_AND);
    weft_node n1 = sb_add(w, p->s, &b);
    sb_init(&b, "par_add", sys_par_add, p, 0);
    weft_query_desc *q = sb_query(&b);
    term(q, p->val, WEFT_ACCESS_WRITE, WEFT_OPER_AND);
    term(q, p->a, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    weft_node n2 = sb_add(w, p->s, &b);
    assert_int_equal(weft_schedule_add_order(p->s, n1, n2, 0), WEFT_OK);
}

static int64_t count_of(weft_world *w, weft_component c)
{
    weft_query_desc d;
    memset(&d, 0, sizeof d);
    term(&d, c, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    d.flags = WEFT_QUERY_UNCACHED;
    weft_query *q = weft_query_create(w, &d);
    assert_non_null(q);
    int64_t n = weft_query_count(w, q);
    weft_query_destroy(w, q);
    return n;
}

// Runs the par_each schedule twice on `w` (executor already set) and
// returns the world hash after each run in h[0..1].
static void par_run(weft_world *w, uint64_t h[2])
{
    par_world p;
    par_setup(&p, w);
    uint64_t want = (uint64_t)PAR_N * (PAR_N - 1) / 2;
    run_ok(w, p.s);
    assert_int_equal(atomic_load(&p.bad), 0);
    if (atomic_load(&p.sum) != want) {
        fail_msg("par_each sum %llu, expected %llu",
                 (unsigned long long)atomic_load(&p.sum), (unsigned long long)want);
    }
    assert_int_equal(count_of(w, p.tag7), (PAR_N + 6) / 7);
    assert_int_equal(count_of(w, p.spawned), PAR_N / 1000);
    if (weft_world_threads(w) > 1) {
        assert_true(atomic_load(&p.chunks) >= 4); // 4 tables: never across tables
    }
    h[0] = weft_world_hash(w);
    atomic_store(&p.sum, 0);
    run_ok(w, p.s);
    assert_int_equal(atomic_load(&p.bad), 0);
    h[1] = weft_world_hash(w);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- par_each: every task holds at least min_rows rows ----

#define MINROWS 1000
#define MINROWS_TASKS 256

typedef struct minrows {
    atomic_int ntasks;
    atomic_int bad;
    int32_t rows[MINROWS_TASKS]; // rows of task k (slot from ntasks)
    int32_t min_rows;
} minrows;

static void chunk_count(weft_iter *it, weft_commands *cmds, void *user)
{
    minrows *m = user;
    (void)cmds;
    int32_t rows = 0;
    while (weft_iter_next(it)) {
        rows += weft_iter_count(it);
    }
    int k = atomic_fetch_add(&m->ntasks, 1);
    if (k < MINROWS_TASKS) {
        m->rows[k] = rows; // read by the driver after the run
    } else {
        atomic_fetch_add(&m->bad, 1);
    }
}

static void sys_par_count(weft_system_ctx *ctx, void *user)
{
    minrows *m = user;
    if (weft_system_par_each(ctx, 0, chunk_count, m, m->min_rows) != WEFT_OK) {
        atomic_fetch_add(&m->bad, 1);
    }
}

// weft.h: tasks never cross a table and hold at least min_rows rows unless
// a table is smaller. Tables of 2,500, 999, 1,000, 3,001 and 10,000 rows
// with min_rows 1,000 on 4 threads: the split used to end each table with
// a short tail task (2,500 gave 1,094 + 1,094 + 312).
static void par_each_tasks_hold_min_rows(void **state)
{
    (void)state;
    NEEDS_THREADS("par_each splits tables into chunk tasks only on several workers");
    static const int32_t sizes[5] = {2500, 999, 1000, 3001, 10000};
    weft_world *w = mkworld(4);
    weft_component val = comp(w, "Val", sizeof(uint32_t));
    weft_component tags[5];
    static const char *names[5] = {"T0", "T1", "T2", "T3", "T4"};
    int64_t total = 0;
    for (int t = 0; t < 5; t++) {
        tags[t] = comp(w, names[t], 0);
        weft_value cols[2] = {{val, sizeof(uint32_t), NULL}, {tags[t], 0, NULL}};
        assert_int_equal(weft_spawn_bulk(w, cols, 2, sizes[t], NULL), WEFT_OK);
        total += sizes[t];
    }
    minrows *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->min_rows = MINROWS;
    weft_schedule *s = weft_schedule_create(w, "minrows");
    assert_non_null(s);
    add1(w, s, "count", sys_par_count, m, 0, val, WEFT_ACCESS_READ);
    run_ok(w, s);
    assert_int_equal(atomic_load(&m->bad), 0);
    int n = atomic_load(&m->ntasks);
    assert_true(n > 5); // the big tables did split
    int64_t seen = 0;
    for (int k = 0; k < n; k++) {
        seen += m->rows[k];
        if (m->rows[k] < MINROWS && m->rows[k] != 999) {
            fail_msg("a task got %d rows, fewer than min_rows %d", m->rows[k], MINROWS);
        }
    }
    assert_int_equal(seen, total);
    free(m);
    weft_world_destroy(w);
}

static void par_each_same_result_on_any_thread_count(void **state)
{
    (void)state;
    NEEDS_THREADS("compares 1, 2 and 4 workers");
    uint64_t ref[2] = {0, 0};
    static const int32_t threads[3] = {1, 2, 4};
    for (int t = 0; t < 3; t++) {
        weft_world *w = mkworld(threads[t]);
        uint64_t h[2];
        par_run(w, h);
        if (t == 0) {
            ref[0] = h[0];
            ref[1] = h[1];
        } else if (h[0] != ref[0] || h[1] != ref[1]) {
            fail_msg("%d threads: hashes %016llx %016llx differ from 1 thread's %016llx %016llx",
                     threads[t], (unsigned long long)h[0], (unsigned long long)h[1],
                     (unsigned long long)ref[0], (unsigned long long)ref[1]);
        }
        weft_world_destroy(w);
    }
}

// ---- par_each over a sparse field ----

#define SPARSE_N 2000

typedef struct sparse_par {
    weft_component sp;
    atomic_int bad;
    atomic_int rows;
} sparse_par;

static void chunk_sparse_inc(weft_iter *it, weft_commands *cmds, void *user)
{
    sparse_par *p = user;
    (void)cmds;
    while (weft_iter_next(it)) {
        int32_t n = weft_iter_count(it);
        uint32_t *v = weft_iter_field_mut(it, 0, sizeof(uint32_t));
        if (v == NULL) {
            atomic_fetch_add(&p->bad, 1);
            return;
        }
        for (int32_t i = 0; i < n; i++) {
            v[i] += 1u;
        }
        atomic_fetch_add(&p->rows, n);
    }
}

static void sys_sparse_inc(weft_system_ctx *ctx, void *user)
{
    sparse_par *p = user;
    if (weft_system_par_each(ctx, 0, chunk_sparse_inc, p, 64) != WEFT_OK) {
        atomic_fetch_add(&p->bad, 1);
    }
}

// weft_iter_field_mut on a sparse term inside par_each tasks: each task's
// rows are cut into runs of consecutive sparse values (the set is shuffled
// by removals and re-inserts), every value is incremented exactly once, and
// the result does not depend on the thread count.
static void par_each_sparse_field(void **state)
{
    (void)state;
    uint64_t ref = 0;
    static const int32_t threads[2] = {1, 2};
    for (int t = 0; t < 2; t++) {
        weft_world *w = mkworld(threads[t]);
        sparse_par p;
        memset(&p, 0, sizeof p);
        weft_component_desc cd;
        memset(&cd, 0, sizeof cd);
        cd.name = "SpVal";
        cd.size = sizeof(uint32_t);
        cd.storage = WEFT_STORAGE_SPARSE;
        p.sp = weft_component_register(w, &cd);
        assert_true(p.sp != 0);
        weft_component tab = comp(w, "Tab", sizeof(uint32_t));
        weft_entity *es = malloc(sizeof *es * SPARSE_N);
        assert_non_null(es);
        for (uint32_t i = 0; i < SPARSE_N; i++) {
            weft_value vals[2] = {{tab, sizeof i, &i}, {p.sp, sizeof i, &i}};
            es[i] = weft_spawn_with(w, vals, 2);
            assert_true(es[i] != 0);
        }
        for (uint32_t i = 0; i < SPARSE_N; i += 3) {
            assert_int_equal(weft_remove(w, es[i], p.sp), WEFT_OK);
            assert_int_equal(weft_insert(w, es[i], p.sp, &i, sizeof i), WEFT_OK);
        }
        weft_schedule *s = weft_schedule_create(w, "sparse");
        assert_non_null(s);
        sysb b;
        sb_init(&b, "sparse_inc", sys_sparse_inc, &p, 0);
        term(sb_query(&b), p.sp, WEFT_ACCESS_WRITE, WEFT_OPER_AND);
        sb_add(w, s, &b);
        run_ok(w, s);
        run_ok(w, s);
        assert_int_equal(atomic_load(&p.bad), 0);
        assert_int_equal(atomic_load(&p.rows), 2 * SPARSE_N);
        for (uint32_t i = 0; i < SPARSE_N; i++) {
            const uint32_t *v = weft_get(w, es[i], p.sp, sizeof(uint32_t));
            assert_non_null(v);
            assert_int_equal(*v, i + 2u);
        }
        uint64_t h = weft_world_hash(w);
        if (t == 0) {
            ref = h;
        } else {
            assert_true(h == ref);
        }
        assert_int_equal(weft_world_check(w), WEFT_OK);
        free(es);
        weft_world_destroy(w);
    }
}

// ---- a host job system: 2 pthreads and a mutex/condvar queue ----

typedef struct hjob {
    weft_job_fn fn;
    void *arg;
} hjob;

typedef struct host {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    hjob *q;
    size_t head, len, cap;
    bool stop;
    pthread_t th[2];
    atomic_int executed;
    atomic_int helped;
} host;

static bool host_pop(host *h, hjob *out)
{
    if (h->len == 0) {
        return false;
    }
    *out = h->q[h->head];
    h->head = (h->head + 1) % h->cap;
    h->len--;
    return true;
}

static void host_submit(void *user, weft_job_fn fn, void *arg)
{
    host *h = user;
    pthread_mutex_lock(&h->mu);
    if (h->len == h->cap) {
        size_t ncap = h->cap ? h->cap * 2 : 64;
        hjob *nq = malloc(ncap * sizeof *nq);
        if (nq == NULL) {
            abort();
        }
        for (size_t i = 0; i < h->len; i++) {
            nq[i] = h->q[(h->head + i) % h->cap];
        }
        free(h->q);
        h->q = nq;
        h->head = 0;
        h->cap = ncap;
    }
    h->q[(h->head + h->len) % h->cap] = (hjob){fn, arg};
    h->len++;
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

static void host_help(void *user)
{
    host *h = user;
    hjob j = {NULL, NULL};
    pthread_mutex_lock(&h->mu);
    bool got = host_pop(h, &j);
    pthread_mutex_unlock(&h->mu);
    if (got) {
        atomic_fetch_add(&h->helped, 1);
        atomic_fetch_add(&h->executed, 1);
        j.fn(j.arg);
    } else {
        sched_yield();
    }
}

static void *host_thread(void *arg)
{
    host *h = arg;
    for (;;) {
        pthread_mutex_lock(&h->mu);
        while (h->len == 0 && !h->stop) {
            pthread_cond_wait(&h->cv, &h->mu);
        }
        if (h->len == 0 && h->stop) {
            pthread_mutex_unlock(&h->mu);
            return NULL;
        }
        hjob j = {NULL, NULL};
        host_pop(h, &j); /* len > 0: always succeeds */
        pthread_mutex_unlock(&h->mu);
        atomic_fetch_add(&h->executed, 1);
        j.fn(j.arg);
    }
}

static void host_start(host *h)
{
    memset(h, 0, sizeof *h);
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_create(&h->th[i], NULL, host_thread, h), 0);
    }
}

static void host_stop(host *h)
{
    pthread_mutex_lock(&h->mu);
    h->stop = true;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    for (int i = 0; i < 2; i++) {
        pthread_join(h->th[i], NULL);
    }
    free(h->q);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
}

static void host_job_system_same_hash(void **state)
{
    (void)state;
    NEEDS_THREADS("a host job system with several workers");
    uint64_t ref[2], h[2];
    weft_world *w = mkworld(4);
    par_run(w, ref);
    weft_world_destroy(w);

    host hs;
    host_start(&hs);
    w = weft_world_create(NULL);
    assert_non_null(w);
    weft_job_system js;
    memset(&js, 0, sizeof js);
    js.user = &hs;
    js.workers = 2;
    js.submit = host_submit;
    js.help = host_help;
    assert_int_equal(weft_world_set_job_system(w, &js), WEFT_OK);
    assert_true(weft_world_threads(w) >= 2);
    par_run(w, h);
    if (h[0] != ref[0] || h[1] != ref[1]) {
        fail_msg("host job system: hashes %016llx %016llx differ from the pool's %016llx %016llx",
                 (unsigned long long)h[0], (unsigned long long)h[1],
                 (unsigned long long)ref[0], (unsigned long long)ref[1]);
    }
    assert_true(atomic_load(&hs.executed) > 0); // work went through the host
    // Back to single-threaded; the world still runs.
    assert_int_equal(weft_world_set_job_system(w, NULL), WEFT_OK);
    assert_int_equal(weft_world_threads(w), 1);
    weft_world_destroy(w);
    host_stop(&hs);
}

// ---- one failing system among 50, on threads ----

typedef struct fifty {
    atomic_int ran[50];
    int failing;
} fifty;

typedef struct fifty_user {
    fifty *f;
    int index;
} fifty_user;

static void sys_fifty(weft_system_ctx *ctx, void *user)
{
    fifty_user *u = user;
    atomic_fetch_add(&u->f->ran[u->index], 1);
    spin_us(20);
    if (u->index == u->f->failing) {
        weft_system_fail(ctx, WEFT_ERR_NOT_FOUND, "the needle went missing");
    }
}

static void failing_system_among_fifty(void **state)
{
    (void)state;
    weft_world *w = mkworld(4);
    weft_component cs[8];
    char cname[8][8];
    for (int i = 0; i < 8; i++) {
        snprintf(cname[i], sizeof cname[i], "K%d", i);
        cs[i] = comp(w, cname[i], sizeof(uint32_t));
    }
    fifty f;
    memset(&f, 0, sizeof f);
    f.failing = 25;
    fifty_user users[50];
    char names[50][16];
    weft_schedule *s = weft_schedule_create(w, "fifty");
    uint64_t rng = 12345;
    weft_node nodes[50];
    for (int i = 0; i < 50; i++) {
        users[i] = (fifty_user){&f, i};
        snprintf(names[i], sizeof names[i], "sys_%02d", i);
        sysb b;
        sb_init(&b, names[i], sys_fifty, &users[i], 0);
        weft_query_desc *q = sb_query(&b);
        uint32_t used = 0;
        for (int t = 0; t < 2; t++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t k = (uint32_t)(rng >> 33) % 8;
            if (used & (1u << k)) {
                continue;
            }
            used |= 1u << k;
            term(q, cs[k], (rng >> 20) % 3 == 0 ? WEFT_ACCESS_WRITE : WEFT_ACCESS_READ,
                 WEFT_OPER_AND);
        }
        nodes[i] = sb_add(w, s, &b);
        if (i > 0 && i % 7 == 0) {
            assert_int_equal(weft_schedule_add_order(s, nodes[i - 5], nodes[i], 0), WEFT_OK);
        }
    }
    for (int run = 1; run <= 3; run++) {
        weft_status st = weft_schedule_run(s, 0.0);
        assert_int_equal(st, WEFT_ERR_NOT_FOUND);
        const char *msg = weft_last_error(w);
        if (strstr(msg, "sys_25") == NULL || strstr(msg, "the needle went missing") == NULL) {
            fail_msg("error \"%s\" should name sys_25 and its message", msg);
        }
        for (int i = 0; i < 50; i++) {
            if (atomic_load(&f.ran[i]) != run) {
                fail_msg("run %d: %s ran %d times", run, names[i], atomic_load(&f.ran[i]));
            }
        }
    }
    weft_system_stats stt;
    assert_int_equal(weft_schedule_system_stats(s, nodes[25], &stt), WEFT_OK);
    assert_int_equal(stt.failures, 3);
    f.failing = -1;
    run_ok(w, s);
    weft_world_destroy(w);
}

// ---- executor settings ----

static void sys_set_threads(weft_system_ctx *ctx, void *user)
{
    weft_status *out = user;
    *out = weft_world_set_threads(weft_system_world(ctx), 2);
}

static void executor_settings(void **state)
{
    (void)state;
    NEEDS_THREADS("pool sizes; the build without threads is covered by test_os");
    weft_world *w = mkworld(0);
    assert_int_equal(weft_world_threads(w), 1);
    assert_int_equal(weft_world_set_threads(w, 3), WEFT_OK);
    assert_int_equal(weft_world_threads(w), 3);
    assert_int_equal(weft_world_set_threads(w, -1), WEFT_OK);
    assert_true(weft_world_threads(w) >= 1);
    assert_int_equal(weft_world_set_threads(w, 1), WEFT_OK);
    assert_int_equal(weft_world_threads(w), 1);
    assert_int_equal(weft_world_set_threads(w, 4), WEFT_OK);
    // Not during a run.
    weft_status inner = WEFT_OK;
    weft_schedule *s = weft_schedule_create(w, "s");
    add1(w, s, "setter", sys_set_threads, &inner, WEFT_SYSTEM_EXCLUSIVE, 0, WEFT_ACCESS_READ);
    (void)weft_schedule_run(s, 0.0);
    assert_int_equal(inner, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(weft_world_threads(w), 4);
    // Switching executors between runs keeps the world usable.
    for (int t = 1; t <= 4; t++) {
        assert_int_equal(weft_world_set_threads(w, t), WEFT_OK);
        weft_clear_error(w);
        (void)weft_schedule_run(s, 0.0);
    }
    weft_world_destroy(w);
}

// ---- par_each next to other systems (nested waits) ----

// A system waiting for its chunk tasks helps the pool meanwhile; whatever it
// picks up there must not wait for the schedule run it is part of. Runs a
// par_each system next to two independent spinning systems many times,
// with pauses that let pool threads park; a deadlock trips the watchdog.
typedef struct nest {
    atomic_int bad;
} nest;

static void chunk_inc(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    nest *n = user;
    while (weft_iter_next(it)) {
        uint32_t *v = weft_iter_field_mut(it, 0, sizeof(uint32_t));
        if (!v) {
            atomic_fetch_add(&n->bad, 1);
            return;
        }
        for (int32_t i = 0; i < weft_iter_count(it); i++) {
            v[i]++;
        }
    }
}

static void sys_par_inc(weft_system_ctx *ctx, void *user)
{
    if (weft_system_par_each(ctx, 0, chunk_inc, user, 8) != WEFT_OK) {
        atomic_fetch_add(&((nest *)user)->bad, 1);
    }
}

static void sys_spin_short(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
    spin_us(50);
}

static void par_each_next_to_other_systems(weft_world *w, const char *what)
{
    weft_component v = comp(w, "V", sizeof(uint32_t));
    weft_component a = comp(w, "A", sizeof(uint32_t));
    weft_component b = comp(w, "B", sizeof(uint32_t));
    uint32_t zero = 0;
    for (int i = 0; i < 200; i++) {
        weft_value val = {v, sizeof zero, &zero};
        assert_true(weft_spawn_with(w, &val, 1) != 0);
    }
    nest n;
    memset(&n, 0, sizeof n);
    weft_schedule *s = weft_schedule_create(w, "nest");
    add1(w, s, "par", sys_par_inc, &n, 0, v, WEFT_ACCESS_WRITE);
    add1(w, s, "spin_a", sys_spin_short, NULL, 0, a, WEFT_ACCESS_WRITE);
    add1(w, s, "spin_b", sys_spin_short, NULL, 0, b, WEFT_ACCESS_WRITE);
    const int runs = 1500;
    for (int r = 0; r < runs; r++) {
        g_watch_what = what;
        g_watch_run = r;
        run_ok(w, s);
        if (r % 3 == 0) {
            struct timespec ts = {0, 2000000}; // 2 ms: pool threads go idle
            nanosleep(&ts, NULL);
        }
    }
    assert_int_equal(atomic_load(&n.bad), 0);
    // Every entity was incremented once per run.
    weft_query_desc d;
    memset(&d, 0, sizeof d);
    term(&d, v, WEFT_ACCESS_READ, WEFT_OPER_AND);
    weft_query *q = weft_query_create(w, &d);
    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        const uint32_t *vals = weft_iter_field(&it, 0, sizeof(uint32_t));
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            assert_int_equal(vals[i], runs);
        }
    }
}

static void par_each_nested_wait_pool(void **state)
{
    (void)state;
    NEEDS_THREADS("a chunk task waiting on the pool");
    weft_world *w = mkworld(4);
    par_each_next_to_other_systems(w, "par_each_nested_wait_pool");
    weft_world_destroy(w);
}

static void par_each_nested_wait_host(void **state)
{
    (void)state;
    NEEDS_THREADS("a host job system with 2 workers");
    host hs;
    host_start(&hs);
    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    weft_job_system js;
    memset(&js, 0, sizeof js);
    js.user = &hs;
    js.workers = 2;
    js.submit = host_submit;
    js.help = host_help;
    assert_int_equal(weft_world_set_job_system(w, &js), WEFT_OK);
    par_each_next_to_other_systems(w, "par_each_nested_wait_host");
    weft_world_destroy(w);
    host_stop(&hs);
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(exclusive_and_main_thread_systems, watch_setup, watch_teardown),
        cmocka_unit_test_setup_teardown(independent_systems_start_together, watch_setup, watch_teardown),
        cmocka_unit_test_setup_teardown(conflicting_systems_never_overlap, watch_setup, watch_teardown),
        cmocka_unit_test_setup_teardown(par_each_same_result_on_any_thread_count, watch_setup, watch_teardown),
        cmocka_unit_test_setup_teardown(par_each_sparse_field, watch_setup, watch_teardown),
        cmocka_unit_test_setup_teardown(par_each_tasks_hold_min_rows, watch_setup, watch_teardown),
        cmocka_unit_test_setup_teardown(host_job_system_same_hash, watch_setup, watch_teardown),
        cmocka_unit_test_setup_teardown(failing_system_among_fifty, watch_setup, watch_teardown),
        cmocka_unit_test_setup_teardown(executor_settings, watch_setup, watch_teardown),
        cmocka_unit_test_setup_teardown(par_each_nested_wait_pool, watch_setup, watch_teardown),
        cmocka_unit_test_setup_teardown(par_each_nested_wait_host, watch_setup, watch_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

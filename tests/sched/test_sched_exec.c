// tests/sched/test_sched_exec.c - the multi-threaded executor (built-in pool
// and a host job system): exclusive and main-thread systems, concurrency of
// independent systems, no overlap of conflicting ones, weft_system_par_each
// (sums, per-chunk commands, hash independent of the thread count) and
// failures on many threads. spec/schedule.md §7 items 4, 5, 6, 21.
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

#include <cmocka.h>

#include "weft.h"

// ---- helpers ----

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
    weft_node n = weft_system_add(s, &b->d);
    if (n == WEFT_NODE_NONE) {
        fail_msg("weft_system_add(%s): %s: %s", b->d.name,
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
    weft_status st = weft_schedule_run(w, s, 1.0 / 60.0);
    if (st != WEFT_OK) {
        fail_msg("weft_schedule_run: %s: %s", weft_status_name(st), weft_last_error(w));
    }
}

// ---- checklist 4: exclusive and main-thread systems ----

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
    assert_int_equal(weft_world_threads(w), 4);
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

// ---- checklist 5: independent systems run concurrently ----

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
    assert_int_equal(weft_schedule_build(w, s), WEFT_OK);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exclusive_and_main_thread_systems),
        cmocka_unit_test(independent_systems_start_together),
        cmocka_unit_test(conflicting_systems_never_overlap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

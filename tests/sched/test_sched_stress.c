// tests/sched/test_sched_stress.c - 500 systems
// with seeded random access (reads and writes among 32 components, With/
// Without filters on 4 filter tags, resources, a few exclusive, main-thread
// and command systems, a few read-only run conditions) and random edges from
// lower to higher index, run for 50 frames on 4 threads. A shadow checker
// registers every access on system entry and clears it on exit: per
// (component, filter slot) and per resource, atomic reader and writer
// counts; a writer overlapping any reader or writer of an overlapping slot
// is a violation. Slots: 0 = unfiltered, With F_k, Without F_k; With F_k and
// Without F_k are disjoint (the only proof of disjointness), everything else
// overlaps. The systems also really read and write the columns, so TSan sees
// any race the checker misses. WEFT_TEST_SEED overrides the seed.
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "needs_threads.h"

#include "test_world.h"
#include "weft.h"

#define NSYS 500
#define NCOMP 32
#define NFILT 4
#define NSLOT (1 + 2 * NFILT)
#define NRES 8
#define NENT 1024
#define FRAMES 50
#define THREADS 4
#define WATCHDOG_S 240

// One declared component access of a system.
typedef struct acc {
    uint8_t comp;  // 0..NCOMP-1
    uint8_t slot;  // filter slot of its query
    bool write;
    uint8_t query; // which query
    uint8_t term;  // term index in that query
} acc;

typedef struct rsys {
    int index;
    char name[16];
    acc accs[12];
    int naccs;
    int nq;
    uint8_t res[2];
    bool res_write[2];
    int nres;
    uint32_t flags;
    int cond_res;        // resource read by its run condition, or -1
    int toggle_filter;   // COMMANDS systems: filter tag to toggle, else -1
    atomic_int runs;
    weft_node node;
} rsys;

typedef struct shadow {
    atomic_int readers[NCOMP][NSLOT];
    atomic_int writers[NCOMP][NSLOT];
    atomic_int res_readers[NRES];
    atomic_int res_writers[NRES];
    atomic_int running;      // all systems inside their body
    atomic_int excl_running; // exclusive systems inside
    atomic_int violations;
    atomic_int cond_violations;
    atomic_int wrong_thread;
    atomic_int failures;     // context calls that failed
    char first[160];
    atomic_int first_set;
} shadow;

static shadow g_sh;
static rsys g_sys[NSYS];
static weft_component g_comp[NCOMP], g_filt[NFILT], g_res[NRES];
static weft_entity g_ents[NENT];
static pthread_t g_main;

static const char *volatile g_watch_frame_what = "";

static void on_alarm(int sig)
{
    (void)sig;
    char buf[200];
    int n = snprintf(buf, sizeof buf, "WATCHDOG: %s did not finish within %d s: deadlock?\n",
                     g_watch_frame_what, WATCHDOG_S);
    if (n > 0) {
        (void)!write(2, buf, (size_t)n);
    }
    _exit(1);
}

static bool slots_overlap(int s, int t)
{
    if (s == 0 || t == 0) {
        return true;
    }
    int fs = (s - 1) / 2, ft = (t - 1) / 2;
    if (fs != ft) {
        return true;
    }
    return s == t; // same filter: With vs Without are disjoint
}

static void violation(const char *fmt, ...)
{
    atomic_fetch_add(&g_sh.violations, 1);
    if (atomic_exchange(&g_sh.first_set, 1) == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g_sh.first, sizeof g_sh.first, fmt, ap);
        va_end(ap);
    }
}

// Checks every declared access of r against the others registered now.
static void shadow_check(const rsys *r, const char *when)
{
    for (int i = 0; i < r->naccs; i++) {
        const acc *a = &r->accs[i];
        for (int t = 0; t < NSLOT; t++) {
            if (!slots_overlap(a->slot, t)) {
                continue;
            }
            int w = atomic_load(&g_sh.writers[a->comp][t]);
            int rd = atomic_load(&g_sh.readers[a->comp][t]);
            if (t == a->slot) { // our own registration
                if (a->write) {
                    w--;
                } else {
                    rd--;
                }
            }
            if (w > 0 || (a->write && rd > 0)) {
                violation("%s %s: %s C%d slot %d overlaps %d writer(s), %d reader(s) in slot %d",
                          r->name, when, a->write ? "writes" : "reads", a->comp, a->slot, w,
                          rd, t);
                return;
            }
        }
    }
    for (int i = 0; i < r->nres; i++) {
        int k = r->res[i];
        int w = atomic_load(&g_sh.res_writers[k]);
        int rd = atomic_load(&g_sh.res_readers[k]);
        if (r->res_write[i]) {
            w--;
        } else {
            rd--;
        }
        if (w > 0 || (r->res_write[i] && rd > 0)) {
            violation("%s %s: resource R%d overlaps %d writer(s), %d reader(s)", r->name, when,
                      k, w, rd);
            return;
        }
    }
}

static void shadow_enter(const rsys *r)
{
    for (int i = 0; i < r->naccs; i++) {
        const acc *a = &r->accs[i];
        atomic_fetch_add(a->write ? &g_sh.writers[a->comp][a->slot]
                                  : &g_sh.readers[a->comp][a->slot],
                         1);
    }
    for (int i = 0; i < r->nres; i++) {
        atomic_fetch_add(r->res_write[i] ? &g_sh.res_writers[r->res[i]]
                                         : &g_sh.res_readers[r->res[i]],
                         1);
    }
}

static void shadow_exit(const rsys *r)
{
    for (int i = 0; i < r->naccs; i++) {
        const acc *a = &r->accs[i];
        atomic_fetch_sub(a->write ? &g_sh.writers[a->comp][a->slot]
                                  : &g_sh.readers[a->comp][a->slot],
                         1);
    }
    for (int i = 0; i < r->nres; i++) {
        atomic_fetch_sub(r->res_write[i] ? &g_sh.res_writers[r->res[i]]
                                         : &g_sh.res_readers[r->res[i]],
                         1);
    }
}

// ---- the system body ----

static void sys_body(weft_system_ctx *ctx, void *user)
{
    rsys *r = user;
    atomic_fetch_add(&r->runs, 1);
    int running = atomic_fetch_add(&g_sh.running, 1) + 1;
    if (r->flags & WEFT_SYSTEM_EXCLUSIVE) {
        atomic_fetch_add(&g_sh.excl_running, 1);
        if (running != 1) {
            violation("%s (exclusive) started with %d systems running", r->name, running);
        }
    } else if (atomic_load(&g_sh.excl_running) != 0) {
        violation("%s started while an exclusive system runs", r->name);
    }
    if ((r->flags & (WEFT_SYSTEM_EXCLUSIVE | WEFT_SYSTEM_MAIN_THREAD)) &&
        !pthread_equal(pthread_self(), g_main)) {
        atomic_fetch_add(&g_sh.wrong_thread, 1);
    }
    shadow_enter(r);
    shadow_check(r, "on entry");

    // Touch the data for real: read every READ column, bump every WRITE one.
    uint64_t sink = 0;
    for (int q = 0; q < r->nq; q++) {
        weft_iter it;
        if (weft_system_iter(ctx, q, &it) != WEFT_OK) {
            atomic_fetch_add(&g_sh.failures, 1);
            continue;
        }
        while (weft_iter_next(&it)) {
            int32_t n = weft_iter_count(&it);
            for (int i = 0; i < r->naccs; i++) {
                const acc *a = &r->accs[i];
                if (a->query != q) {
                    continue;
                }
                if (a->write) {
                    uint32_t *v = weft_iter_field_mut(&it, a->term, sizeof(uint32_t));
                    if (!v) {
                        atomic_fetch_add(&g_sh.failures, 1);
                        continue;
                    }
                    for (int32_t k = 0; k < n; k++) {
                        v[k] += 1;
                    }
                } else {
                    const uint32_t *v = weft_iter_field(&it, a->term, sizeof(uint32_t));
                    if (!v) {
                        atomic_fetch_add(&g_sh.failures, 1);
                        continue;
                    }
                    for (int32_t k = 0; k < n; k++) {
                        sink += v[k];
                    }
                }
            }
        }
    }
    for (int i = 0; i < r->nres; i++) {
        weft_component rc = g_res[r->res[i]];
        if (r->res_write[i]) {
            uint64_t *v = weft_system_resource_mut(ctx, rc, sizeof(uint64_t));
            if (v) {
                *v += sink | 1u;
            } else {
                atomic_fetch_add(&g_sh.failures, 1);
            }
        } else {
            const uint64_t *v = weft_system_resource(ctx, rc, sizeof(uint64_t));
            if (v) {
                sink += *v;
            } else {
                atomic_fetch_add(&g_sh.failures, 1);
            }
        }
    }
    if (r->toggle_filter >= 0) {
        // Toggle a filter tag on one entity through commands (applied at a
        // sync point, so it never races with the parallel part).
        weft_entity e = g_ents[(uint32_t)(r->index * 7 + atomic_load(&r->runs)) % NENT];
        weft_commands *cmds = weft_system_commands(ctx);
        weft_status st = (atomic_load(&r->runs) & 1)
                             ? weft_cmd_try_insert(cmds, e, g_filt[r->toggle_filter], NULL, 0)
                             : weft_cmd_try_remove(cmds, e, g_filt[r->toggle_filter]);
        if (st != WEFT_OK) {
            atomic_fetch_add(&g_sh.failures, 1);
        }
    }
    for (volatile int spin = 0; spin < 100; spin++) {
    }
    shadow_check(r, "before exit");
    shadow_exit(r);
    if (r->flags & WEFT_SYSTEM_EXCLUSIVE) {
        atomic_fetch_sub(&g_sh.excl_running, 1);
    }
    atomic_fetch_sub(&g_sh.running, 1);
}

// A read-only run condition on resource cond_res: it must never overlap a
// writer of that resource.
static bool cond_body(weft_system_ctx *ctx, void *user)
{
    rsys *r = user;
    int k = r->cond_res;
    atomic_fetch_add(&g_sh.res_readers[k], 1);
    if (atomic_load(&g_sh.res_writers[k]) != 0) {
        atomic_fetch_add(&g_sh.cond_violations, 1);
    }
    const uint64_t *v = weft_system_resource(ctx, g_res[k], sizeof(uint64_t));
    bool run = v ? (*v % 5) != 0 : false;
    if (!v) {
        atomic_fetch_add(&g_sh.failures, 1);
    }
    atomic_fetch_sub(&g_sh.res_readers[k], 1);
    return run;
}

// ---- building the random schedule ----

static void gen_system(rsys *r, int index, tw_rng *rng)
{
    memset(r, 0, sizeof *r);
    r->index = index;
    snprintf(r->name, sizeof r->name, "rs%03d", index);
    r->cond_res = -1;
    r->toggle_filter = -1;
    uint32_t used = 0;
    r->nq = 1 + (int)tw_rng_below(rng, 3);
    for (int q = 0; q < r->nq; q++) {
        int slot = 0;
        if (tw_rng_chance(rng, 40)) {
            int fid = (int)tw_rng_below(rng, NFILT);
            slot = 1 + 2 * fid + (int)tw_rng_below(rng, 2);
        }
        int nt = 1 + (int)tw_rng_below(rng, 3);
        int added = 0;
        for (int t = 0; t < nt && r->naccs < 12; t++) {
            uint32_t c = tw_rng_below(rng, NCOMP);
            if (used & (1u << c)) {
                continue;
            }
            used |= 1u << c;
            acc *a = &r->accs[r->naccs++];
            a->comp = (uint8_t)c;
            a->slot = (uint8_t)slot;
            a->write = tw_rng_chance(rng, 30);
            a->query = (uint8_t)q;
            a->term = (uint8_t)added++;
        }
        if (added == 0) { // every pick was taken: take the first free one
            for (uint32_t c = 0; c < NCOMP; c++) {
                if (!(used & (1u << c))) {
                    used |= 1u << c;
                    acc *a = &r->accs[r->naccs++];
                    a->comp = (uint8_t)c;
                    a->slot = (uint8_t)slot;
                    a->write = false;
                    a->query = (uint8_t)q;
                    a->term = 0;
                    break;
                }
            }
        }
    }
    r->nres = (int)tw_rng_below(rng, 3);
    for (int i = 0; i < r->nres; i++) {
        int k;
        do {
            k = (int)tw_rng_below(rng, NRES);
        } while (i == 1 && k == r->res[0]);
        r->res[i] = (uint8_t)k;
        r->res_write[i] = tw_rng_chance(rng, 30);
    }
    uint32_t roll = tw_rng_below(rng, 100);
    if (roll < 2) {
        r->flags = WEFT_SYSTEM_EXCLUSIVE;
    } else if (roll < 5) {
        r->flags = WEFT_SYSTEM_MAIN_THREAD;
    } else if (roll < 10) {
        r->flags = WEFT_SYSTEM_COMMANDS;
        r->toggle_filter = (int)tw_rng_below(rng, NFILT);
    }
    if (tw_rng_chance(rng, 5)) {
        r->cond_res = (int)tw_rng_below(rng, NRES);
    }
}

static weft_node add_system(weft_world *w, weft_schedule *s, rsys *r)
{
    weft_query_desc qs[3];
    memset(qs, 0, sizeof qs);
    for (int i = 0; i < r->naccs; i++) {
        const acc *a = &r->accs[i];
        weft_term *t = &qs[a->query].terms[a->term];
        t->id = g_comp[a->comp];
        t->access = a->write ? WEFT_ACCESS_WRITE : WEFT_ACCESS_READ;
        t->oper = WEFT_OPER_AND;
        if (qs[a->query].term_count < a->term + 1) {
            qs[a->query].term_count = a->term + 1;
        }
    }
    for (int q = 0; q < r->nq; q++) {
        int slot = -1;
        for (int i = 0; i < r->naccs; i++) {
            if (r->accs[i].query == q) {
                slot = r->accs[i].slot;
            }
        }
        if (slot > 0) {
            weft_term *t = &qs[q].terms[qs[q].term_count++];
            t->id = g_filt[(slot - 1) / 2];
            t->access = WEFT_ACCESS_NONE;
            t->oper = (slot - 1) % 2 == 0 ? WEFT_OPER_WITH : WEFT_OPER_WITHOUT;
        }
    }
    weft_resource_use res[2];
    for (int i = 0; i < r->nres; i++) {
        res[i].id = g_res[r->res[i]];
        res[i].access = r->res_write[i] ? WEFT_ACCESS_WRITE : WEFT_ACCESS_READ;
    }
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = r->name;
    d.fn = sys_body;
    d.user = r;
    d.queries = qs;
    d.query_count = r->nq;
    d.resources = r->nres ? res : NULL;
    d.resource_count = r->nres;
    d.flags = r->flags;
    weft_node n = weft_schedule_add_system(s, &d);
    if (n == WEFT_NODE_NONE) {
        fail_msg("weft_schedule_add_system(%s): %s: %s", r->name,
                 weft_status_name(weft_last_status(w)), weft_last_error(w));
    }
    if (r->cond_res >= 0) {
        weft_condition_desc cd;
        memset(&cd, 0, sizeof cd);
        weft_resource_use cr = {g_res[r->cond_res], WEFT_ACCESS_READ};
        cd.name = r->name;
        cd.fn = cond_body;
        cd.user = r;
        cd.resources = &cr;
        cd.resource_count = 1;
        weft_condition *c = weft_condition_create(s, &cd);
        assert_non_null(c);
        assert_int_equal(weft_schedule_add_condition(s, n, c), WEFT_OK);
    }
    return n;
}

static void stress_500_random_systems(void **state)
{
    (void)state;
    NEEDS_THREADS("random systems racing on several workers");
    bool overridden = false;
    uint64_t seed = tw_seed_from_env(0x5ca1ab1e22ull, &overridden);
    print_message("seed 0x%llx%s\n", (unsigned long long)seed, overridden ? " (WEFT_TEST_SEED)" : "");
    tw_rng rng;
    tw_rng_seed(&rng, seed);
    memset(&g_sh, 0, sizeof g_sh);
    g_main = pthread_self();

    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    assert_int_equal(weft_world_set_threads(w, THREADS), WEFT_OK);
    char name[16];
    for (int i = 0; i < NCOMP; i++) {
        snprintf(name, sizeof name, "C%d", i);
        g_comp[i] = tw_comp(w, name, sizeof(uint32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    }
    for (int i = 0; i < NFILT; i++) {
        snprintf(name, sizeof name, "F%d", i);
        g_filt[i] = tw_comp(w, name, 0, 0, WEFT_STORAGE_DEFAULT, 0);
    }
    for (int i = 0; i < NRES; i++) {
        snprintf(name, sizeof name, "R%d", i);
        g_res[i] = tw_comp(w, name, sizeof(uint64_t), 0, WEFT_STORAGE_DEFAULT, 0);
        uint64_t v = (uint64_t)i + 1;
        assert_int_equal(weft_resource_insert(w, g_res[i], &v, sizeof v), WEFT_OK);
    }
    for (int e = 0; e < NENT; e++) {
        weft_value vals[NCOMP + NFILT];
        uint32_t zero[NCOMP];
        int n = 0;
        for (int c = 0; c < NCOMP; c++) {
            if (tw_rng_chance(&rng, 40)) {
                zero[c] = (uint32_t)e;
                vals[n++] = (weft_value){g_comp[c], sizeof(uint32_t), &zero[c]};
            }
        }
        for (int f = 0; f < NFILT; f++) {
            if (tw_rng_chance(&rng, 50)) {
                vals[n++] = (weft_value){g_filt[f], 0, NULL};
            }
        }
        g_ents[e] = weft_spawn_with(w, vals, n);
        assert_true(g_ents[e] != 0);
    }

    weft_schedule *s = weft_schedule_create(w, "stress");
    assert_non_null(s);
    for (int i = 0; i < NSYS; i++) {
        gen_system(&g_sys[i], i, &rng);
        g_sys[i].node = add_system(w, s, &g_sys[i]);
    }
    int edges = 0;
    for (int i = 0; i < NSYS - 1; i++) {
        int ne = tw_rng_chance(&rng, 40) ? 1 + (int)tw_rng_below(&rng, 2) : 0;
        for (int k = 0; k < ne; k++) {
            int span = NSYS - 1 - i < 40 ? NSYS - 1 - i : 40;
            int j = i + 1 + (int)tw_rng_below(&rng, (uint32_t)span);
            assert_int_equal(weft_schedule_add_order(s, g_sys[i].node, g_sys[j].node, 0), WEFT_OK);
            edges++;
        }
    }
    weft_status st = weft_schedule_build(s);
    if (st != WEFT_OK) {
        fail_msg("build: %s: %s", weft_status_name(st), weft_last_error(w));
    }
    print_message("%d systems, %d edges, %d sync points, %d ambiguities\n", NSYS, edges,
                  weft_schedule_sync_count(s), weft_schedule_ambiguity_count(s));
    // Declared orders hold in the built order.
    for (int i = 0; i < NSYS; i++) {
        assert_true(weft_schedule_position(s, g_sys[i].node) >= 0);
    }

    int32_t max_conc = 0;
    assert_int_equal(weft_schedule_set_profiling(s, true), WEFT_OK); /* max_concurrency */
    for (int f = 0; f < FRAMES; f++) {
        g_watch_frame_what = "a stress frame";
        // re-armed every frame: one alarm for the whole run fired under
        // TSan on a loaded machine while the run was progressing
        alarm(WATCHDOG_S);
        st = weft_schedule_run(s, 1.0 / 60.0);
        if (st != WEFT_OK) {
            fail_msg("frame %d: %s: %s", f, weft_status_name(st), weft_last_error(w));
        }
        if (weft_schedule_max_concurrency(s) > max_conc) {
            max_conc = weft_schedule_max_concurrency(s);
        }
        if (atomic_load(&g_sh.violations)) {
            fail_msg("frame %d: %d overlap violation(s); first: %s", f,
                     atomic_load(&g_sh.violations), g_sh.first);
        }
    }
    assert_int_equal(atomic_load(&g_sh.cond_violations), 0);
    assert_int_equal(atomic_load(&g_sh.wrong_thread), 0);
    assert_int_equal(atomic_load(&g_sh.failures), 0);
    assert_int_equal(atomic_load(&g_sh.running), 0);
    int skipped_total = 0;
    for (int i = 0; i < NSYS; i++) {
        weft_system_stats ss;
        assert_int_equal(weft_schedule_system_stats(s, g_sys[i].node, &ss), WEFT_OK);
        if (ss.runs + ss.skipped != FRAMES || ss.runs != (uint64_t)atomic_load(&g_sys[i].runs)) {
            fail_msg("%s: %llu runs + %llu skipped (body ran %d times), expected %d frames",
                     g_sys[i].name, (unsigned long long)ss.runs, (unsigned long long)ss.skipped,
                     atomic_load(&g_sys[i].runs), FRAMES);
        }
        if (g_sys[i].cond_res < 0) {
            assert_int_equal(ss.skipped, 0);
        }
        skipped_total += (int)ss.skipped;
    }
    print_message("max concurrency %d, %d skipped system runs\n", max_conc, skipped_total);
    assert_true(max_conc >= 2); // independent systems did run side by side
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_world_destroy(w);
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    alarm(WATCHDOG_S);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stress_500_random_systems),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/app/test_subapp_shared_pool.c - a main world and its sub-app on one
// built-in thread pool (weft_sub_app_desc.share_threads, which is
// weft_world_share_threads): the sub-app's pipelined frames overlap the
// main world's next ones on the same pool without deadlock (a watchdog
// fails the test instead of letting it hang), the sub-app's systems still
// run in parallel on the pool (two of them meet at a rendezvous that needs
// two threads at once), both worlds' per-frame hashes equal those of a
// single-threaded run on 2 and 4 threads with parallel iteration on both
// sides, and the sharing rules are enforced (self, chains, a lender's
// executor changed or destroyed while lent).
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L // clock_gettime, pthread_cond_timedwait

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_world.h"
#include "weft.h"

#define FRAMES 120
#define ROWS 2048

// ---- the watchdog: a deadlock fails the test, it does not hang CI ----

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    int seconds;
    const char *what;
    pthread_t thread;
} g_dog = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0, NULL, 0};

static void *dog_main(void *arg)
{
    (void)arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += g_dog.seconds;
    pthread_mutex_lock(&g_dog.mu);
    int rc = 0;
    while (!g_dog.done && rc == 0) {
        rc = pthread_cond_timedwait(&g_dog.cv, &g_dog.mu, &until);
    }
    bool done = g_dog.done;
    pthread_mutex_unlock(&g_dog.mu);
    if (!done) {
        fprintf(stderr, "watchdog: '%s' did not finish within %d s: deadlock\n", g_dog.what,
                g_dog.seconds);
        fflush(stderr);
        _exit(3);
    }
    return NULL;
}

static void dog_start(const char *what, int seconds)
{
    g_dog.done = false;
    g_dog.what = what;
    g_dog.seconds = seconds;
    assert_int_equal(pthread_create(&g_dog.thread, NULL, dog_main, NULL), 0);
}

static void dog_stop(void)
{
    pthread_mutex_lock(&g_dog.mu);
    g_dog.done = true;
    pthread_cond_broadcast(&g_dog.cv);
    pthread_mutex_unlock(&g_dog.mu);
    pthread_join(g_dog.thread, NULL);
}

// ---- the scenario: parallel work on both sides ----

typedef struct v4 {
    float a, b, c, d;
} v4;

typedef struct scene {
    weft_component ma, mb, mc;        // main
    weft_component sa, sb, rc, sum;   // sub
    uint64_t sub_hash[FRAMES];
    uint64_t main_hash[FRAMES];
    int nsub;
    // threads that ran the exclusive systems (which run on the thread
    // running the schedule: the driver, the pipeline thread)
    pthread_t driver, sub_thread;
    int sub_threads_seen;   // hash ran on a thread other than the first
    int main_off_driver;    // main_excl ran off the driver
} scene;

static void chunk_a(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    (void)user;
    while (weft_iter_next(it)) {
        v4 *p = weft_iter_field_mut(it, 0, sizeof(v4));
        for (int32_t i = 0; i < weft_iter_count(it); i++) {
            p[i].a = p[i].a * 0.75f + 1.0f;
            p[i].b += p[i].a * 0.125f;
            p[i].c = (float)((int)(p[i].b * 7.0f) % 13);
        }
    }
}

static void sys_par(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_status st = weft_system_par_each(ctx, 0, chunk_a, NULL, 128);
    if (st != WEFT_OK) {
        weft_system_fail(ctx, st, "par_each");
    }
}

// c = a + b, entity by entity (reads both, writes the third).
static void chunk_mix(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    (void)user;
    while (weft_iter_next(it)) {
        v4 *out = weft_iter_field_mut(it, 0, sizeof(v4));
        const v4 *x = weft_iter_field(it, 1, sizeof(v4));
        const v4 *y = weft_iter_field(it, 2, sizeof(v4));
        const weft_entity *e = weft_iter_entities(it);
        for (int32_t i = 0; i < weft_iter_count(it); i++) {
            out[i].a = x[i].a + y[i].b;
            out[i].b = x[i].c * 0.5f + y[i].a;
            out[i].c = out[i].c * 0.5f + 1.0f;
            out[i].d = (float)(weft_entity_index(e[i]) % 1000u);
        }
    }
}

static void sys_mix(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_status st = weft_system_par_each(ctx, 0, chunk_mix, NULL, 128);
    if (st != WEFT_OK) {
        weft_system_fail(ctx, st, "par_each");
    }
}

// Sub-world: a sequential sum into a resource (fixed order: deterministic).
static void sys_sum(weft_system_ctx *ctx, void *user)
{
    scene *sc = user;
    weft_iter it;
    double s = 0;
    if (weft_system_iter(ctx, 0, &it) == WEFT_OK) {
        while (weft_iter_next(&it)) {
            const v4 *a = weft_iter_field(&it, 0, sizeof(v4));
            const v4 *b = weft_iter_field(&it, 1, sizeof(v4));
            for (int32_t i = 0; i < weft_iter_count(&it); i++) {
                s += a[i].a + 2.0 * b[i].b + a[i].c;
            }
        }
    }
    double *out = weft_system_resource_mut(ctx, sc->sum, sizeof s);
    if (out) {
        *out = s;
    }
}

static void sys_hash(weft_system_ctx *ctx, void *user)
{
    scene *sc = user;
    if (sc->nsub == 0) {
        sc->sub_thread = pthread_self();
    } else if (!pthread_equal(sc->sub_thread, pthread_self())) {
        sc->sub_threads_seen++;
    }
    if (sc->nsub < FRAMES) {
        sc->sub_hash[sc->nsub++] = weft_world_hash(weft_system_world(ctx));
    }
}

// Main world, exclusive, between parallel systems: the driver must run it
// (and be free to: never held inside the sub-app's run).
static void sys_main_excl(weft_system_ctx *ctx, void *user)
{
    scene *sc = user;
    (void)ctx;
    if (!pthread_equal(sc->driver, pthread_self())) {
        sc->main_off_driver++;
    }
}

static weft_node add_query_system(weft_app *app, const char *label, const char *name,
                                  weft_system_fn fn, void *user, const weft_component *ids,
                                  const weft_access *acc, int n, const weft_resource_use *res)
{
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    for (int i = 0; i < n; i++) {
        q.terms[i].id = ids[i];
        q.terms[i].access = acc[i];
    }
    q.term_count = n;
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.fn = fn;
    d.user = user;
    d.queries = &q;
    d.query_count = 1;
    if (res) {
        d.resources = res;
        d.resource_count = 1;
    }
    weft_node node = weft_app_add_system(app, label, &d);
    assert_int_not_equal(node, 0);
    return node;
}

static weft_app *build(tw_fixture *f, scene *sc, weft_app **out_sub, bool pipelined, bool share)
{
    weft_app_desc ad;
    memset(&ad, 0, sizeof ad);
    ad.world = f->w;
    weft_app *app = weft_app_create(&ad);
    assert_non_null(app);
    weft_world *w = f->w;
    sc->ma = tw_comp(w, "MA", sizeof(v4), 0, WEFT_STORAGE_DEFAULT, 0);
    sc->mb = tw_comp(w, "MB", sizeof(v4), 0, WEFT_STORAGE_DEFAULT, 0);
    sc->mc = tw_comp(w, "MC", sizeof(v4), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_sub_app_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "render";
    sd.world_desc = tw_fixture_desc(f);
    sd.pipelined = pipelined;
    sd.share_threads = share;
    weft_app *sub = weft_app_add_sub_app(app, &sd);
    assert_non_null(sub);
    weft_world *sw = weft_app_world(sub);
    sc->sa = tw_comp(sw, "SA", sizeof(v4), 0, WEFT_STORAGE_DEFAULT, 0);
    sc->sb = tw_comp(sw, "SB", sizeof(v4), 0, WEFT_STORAGE_DEFAULT, 0);
    sc->rc = tw_comp(sw, "RC", sizeof(v4), 0, WEFT_STORAGE_DEFAULT, 0);
    sc->sum = tw_comp(sw, "Sum", sizeof(double), 0, WEFT_STORAGE_DEFAULT, 0);
    double zero = 0;
    assert_int_equal(weft_resource_insert(sw, sc->sum, &zero, sizeof zero), WEFT_OK);
    for (int32_t i = 0; i < ROWS; i++) {
        v4 a = {(float)i, 1.0f, 0.0f, 0.0f};
        v4 b = {(float)(i % 17), 0.5f, 2.0f, 0.0f};
        v4 c = {0, 0, 0, 0};
        weft_value vals[4] = {{sc->ma, sizeof a, &a},
                              {sc->mb, sizeof b, &b},
                              {sc->mc, sizeof c, &c},
                              {weft_sub_app_sync_tag(sub), 0, NULL}};
        // every fifth entity stays out of the sub-world
        assert_int_not_equal(weft_spawn_with(w, vals, i % 5 ? 4 : 3), 0);
    }
    // main: two independent parallel iterations, then a mix of both
    weft_access wr[3] = {WEFT_ACCESS_WRITE, WEFT_ACCESS_READ, WEFT_ACCESS_READ};
    add_query_system(app, WEFT_APP_UPDATE, "a", sys_par, NULL, &sc->ma, wr, 1, NULL);
    add_query_system(app, WEFT_APP_UPDATE, "b", sys_par, NULL, &sc->mb, wr, 1, NULL);
    weft_component mix[3] = {sc->mc, sc->ma, sc->mb};
    add_query_system(app, WEFT_APP_POST_UPDATE, "mix", sys_mix, NULL, mix, wr, 3, NULL);
    weft_system_desc xd0;
    memset(&xd0, 0, sizeof xd0);
    xd0.name = "main_excl";
    xd0.fn = sys_main_excl;
    xd0.user = sc;
    xd0.flags = WEFT_SYSTEM_EXCLUSIVE;
    assert_int_not_equal(weft_app_add_system(app, WEFT_APP_UPDATE, &xd0), 0);
    // extraction: three components onto the twins
    weft_component from[3] = {sc->ma, sc->mb, sc->mc};
    weft_component to[3] = {sc->sa, sc->sb, sc->rc};
    for (int i = 0; i < 3; i++) {
        weft_extract_component_desc xd;
        memset(&xd, 0, sizeof xd);
        xd.main_component = from[i];
        xd.sub_component = to[i];
        assert_int_not_equal(weft_sub_app_extract_component(sub, &xd), 0);
    }
    // sub: the same shapes (two independent parallel systems, a mix),
    // then a sum and the hash
    add_query_system(sub, WEFT_APP_UPDATE, "sa", sys_par, NULL, &sc->sa, wr, 1, NULL);
    add_query_system(sub, WEFT_APP_UPDATE, "sb", sys_par, NULL, &sc->sb, wr, 1, NULL);
    weft_component smix[3] = {sc->rc, sc->sa, sc->sb};
    add_query_system(sub, WEFT_APP_POST_UPDATE, "smix", sys_mix, NULL, smix, wr, 3, NULL);
    weft_resource_use su = {sc->sum, WEFT_ACCESS_WRITE};
    weft_component sum_q[2] = {sc->rc, sc->sa};
    weft_access rd[2] = {WEFT_ACCESS_READ, WEFT_ACCESS_READ};
    add_query_system(sub, WEFT_APP_LAST, "sum", sys_sum, sc, sum_q, rd, 2, &su);
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "hash";
    d.fn = sys_hash;
    d.user = sc;
    d.flags = WEFT_SYSTEM_EXCLUSIVE;
    weft_node h = weft_app_add_system(sub, WEFT_APP_LAST, &d);
    assert_int_not_equal(h, 0);
    *out_sub = sub;
    return app;
}

typedef struct run_cfg {
    int threads;     // main world's pool (the sub-app shares it)
    bool pipelined;
    bool share;      // the sub-world on the main world's pool
} run_cfg;

static void run(scene *sc, const run_cfg *cfg)
{
    memset(sc, 0, sizeof *sc);
    sc->driver = pthread_self();
    tw_fixture *f = tw_fixture_new();
    assert_non_null(f);
    assert_int_equal(weft_world_set_threads(f->w, cfg->threads), WEFT_OK);
    weft_app *sub = NULL;
    weft_app *app = build(f, sc, &sub, cfg->pipelined, cfg->share);
    weft_world *sw = weft_app_world(sub);
    assert_int_equal(weft_world_threads(sw), cfg->share ? weft_world_threads(f->w) : 1);
    for (int i = 0; i < FRAMES; i++) {
        weft_status st = weft_app_update(app, 1.0 / 60);
        if (st != WEFT_OK) {
            fail_msg("frame %d: %s", i, weft_last_error(f->w));
        }
        // the main world is the driver's while the sub-app's frame runs
        sc->main_hash[i] = weft_world_hash(f->w);
    }
    assert_int_equal(weft_sub_app_wait(sub), WEFT_OK);
    assert_int_equal(sc->nsub, FRAMES);
    // exclusive systems stayed on their schedules' threads: no thread
    // ran the other world's run
    assert_int_equal(sc->main_off_driver, 0);
    assert_int_equal(sc->sub_threads_seen, 0);
    assert_int_equal(pthread_equal(sc->sub_thread, sc->driver) != 0, !cfg->pipelined);
    const double *sum = weft_resource_get(sw, sc->sum, sizeof(double));
    assert_non_null(sum);
    assert_true(*sum != 0.0);
    weft_world_stats ss;
    assert_int_equal(weft_world_get_stats(sw, &ss), WEFT_OK);
    assert_int_equal(ss.live_entities, ROWS - ROWS / 5 - (ROWS % 5 ? 1 : 0));
    // lent: the main world's executor is fixed until the sub-app goes
    if (cfg->share && cfg->threads > 1) {
        assert_int_equal(weft_world_set_threads(f->w, 1), WEFT_ERR_WRONG_PHASE);
    }
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    assert_int_equal(weft_world_set_threads(f->w, 1), WEFT_OK);
    tw_fixture_free(f);
}

static scene g_ref, g_run;

static void expect_same(const scene *a, const scene *b, const char *what)
{
    for (int i = 0; i < FRAMES; i++) {
        if (a->sub_hash[i] != b->sub_hash[i]) {
            fail_msg("%s: sub-world hash of frame %d differs", what, i);
        }
        if (a->main_hash[i] != b->main_hash[i]) {
            fail_msg("%s: main-world hash of frame %d differs", what, i);
        }
    }
}

static void shared_pool_same_hashes(void **state)
{
    (void)state;
    dog_start("shared_pool_same_hashes", 600);
    run_cfg base = {1, false, false};
    run(&g_ref, &base);
    assert_true(g_ref.sub_hash[0] != g_ref.sub_hash[FRAMES - 1]);
    const run_cfg cfgs[] = {
        {2, true, true}, {4, true, true}, {2, false, true}, {3, true, true},
    };
    for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++) {
        run(&g_run, &cfgs[k]);
        char what[80];
        snprintf(what, sizeof what, "%d threads shared, %s", cfgs[k].threads,
                 cfgs[k].pipelined ? "pipelined" : "not pipelined");
        expect_same(&g_ref, &g_run, what);
    }
    dog_stop();
}

// ---- the sub-app's systems still run in parallel on the shared pool ----

typedef struct meet {
    atomic_int arrived[FRAMES];
    int frame;        // written by the sub-app's frame system only
    int met;          // frames in which both systems were in at once
    atomic_int waits; // rendezvous that gave up
} meet;

// Two systems with nothing in common: each arrives, then waits (bounded)
// for the other. They meet only if two threads run them at once.
static void sys_meet(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    meet *m = user;
    atomic_int *a = &m->arrived[m->frame % FRAMES];
    atomic_fetch_add(a, 1);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (atomic_load(a) < 2) {
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (t1.tv_sec - t0.tv_sec > 20) {
            atomic_fetch_add(&m->waits, 1);
            return;
        }
        sched_yield();
    }
}

static void sys_meet_count(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    meet *m = user;
    if (atomic_load(&m->arrived[m->frame % FRAMES]) == 2) {
        m->met++;
    }
    m->frame++;
}

static void shared_pool_sub_systems_parallel(void **state)
{
    tw_fixture *f = *state;
    dog_start("shared_pool_sub_systems_parallel", 300);
    static meet m;
    memset(&m, 0, sizeof m);
    scene *sc = &g_run;
    memset(sc, 0, sizeof *sc);
    assert_int_equal(weft_world_set_threads(f->w, 2), WEFT_OK);
    weft_app *sub = NULL;
    weft_app *app = build(f, sc, &sub, true, true);
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.fn = sys_meet;
    d.user = &m;
    d.name = "meet1";
    assert_int_not_equal(weft_app_add_system(sub, WEFT_APP_PRE_UPDATE, &d), 0);
    d.name = "meet2";
    assert_int_not_equal(weft_app_add_system(sub, WEFT_APP_PRE_UPDATE, &d), 0);
    d.name = "meet_count";
    d.fn = sys_meet_count;
    d.flags = WEFT_SYSTEM_EXCLUSIVE;
    assert_int_not_equal(weft_app_add_system(sub, WEFT_APP_UPDATE, &d), 0);
    const int frames = 12;
    for (int i = 0; i < frames; i++) {
        assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
    }
    assert_int_equal(weft_sub_app_wait(sub), WEFT_OK);
    // one pool thread besides the main driver and the pipeline thread, and
    // yet every sub-app frame ran its two systems at the same time
    assert_int_equal(atomic_load(&m.waits), 0);
    assert_int_equal(m.met, frames);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    assert_int_equal(weft_world_set_threads(f->w, 1), WEFT_OK);
    dog_stop();
}

// ---- the rules of sharing ----

static void shared_pool_rules(void **state)
{
    tw_fixture *f = *state;
    weft_world *a = f->w;
    weft_world_desc wd = tw_fixture_desc(f);
    weft_world *b = weft_world_create(&wd);
    weft_world *c = weft_world_create(&wd);
    assert_non_null(b);
    assert_non_null(c);
    assert_int_equal(weft_world_set_threads(a, 3), WEFT_OK);
    assert_int_equal(weft_world_share_threads(a, a), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_world_share_threads(b, a), WEFT_OK);
    assert_int_equal(weft_world_share_threads(b, a), WEFT_OK); // again: no change
    assert_int_equal(weft_world_threads(b), 3);
    // no chains: c cannot borrow from a borrower, a lender cannot borrow
    assert_int_equal(weft_world_share_threads(c, b), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_last_status(c), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_world_share_threads(a, c), WEFT_ERR_INVALID_ARG);
    // the lender's executor is fixed while lent, and it stays alive
    assert_int_equal(weft_world_set_threads(a, 2), WEFT_ERR_WRONG_PHASE);
    assert_true(tw_contains(weft_last_error(a), "weft_world_share_threads"));
    assert_int_equal(weft_world_set_job_system(a, NULL), WEFT_ERR_WRONG_PHASE);
    assert_int_equal(weft_world_destroy(a), WEFT_ERR_WRONG_PHASE);
    assert_int_equal(weft_world_threads(a), 3);
    // nor can the borrower set its own without giving the loan back
    assert_int_equal(weft_world_set_threads(b, 2), WEFT_ERR_WRONG_PHASE);
    assert_int_equal(weft_world_share_threads(c, a), WEFT_OK); // two borrowers
    assert_int_equal(weft_world_share_threads(b, NULL), WEFT_OK);
    assert_int_equal(weft_world_threads(b), 1);
    assert_int_equal(weft_world_set_threads(a, 2), WEFT_ERR_WRONG_PHASE); // c still
    // a borrower destroyed gives its loan back
    assert_int_equal(weft_world_destroy(c), WEFT_OK);
    assert_int_equal(weft_world_set_threads(a, 2), WEFT_OK);
    assert_int_equal(weft_world_threads(a), 2);
    // a sub-app cannot share a main world that borrows itself
    assert_int_equal(weft_world_share_threads(a, b), WEFT_OK);
    weft_app_desc ad;
    memset(&ad, 0, sizeof ad);
    ad.world = a;
    weft_app *app = weft_app_create(&ad);
    assert_non_null(app);
    weft_sub_app_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "render";
    sd.world_desc = wd;
    sd.share_threads = true;
    assert_null(weft_app_add_sub_app(app, &sd));
    assert_int_equal(weft_last_status(a), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    assert_int_equal(weft_world_share_threads(a, NULL), WEFT_OK);
    assert_int_equal(weft_world_destroy(b), WEFT_OK);
    assert_int_equal(weft_world_set_threads(a, 1), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shared_pool_same_hashes),
        cmocka_unit_test_setup_teardown(shared_pool_sub_systems_parallel, tw_setup,
                                        tw_teardown),
        cmocka_unit_test_setup_teardown(shared_pool_rules, tw_setup, tw_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

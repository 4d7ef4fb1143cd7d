// tests/app/test_subapp_pipeline.c - pipelined sub-apps: the sub-world's
// per-frame hash sequence over 1,000 frames is the same pipelined or not,
// on 1, 2 and 4 threads, with pipelining switched on and off mid-run, and
// with both worlds sharing one host job system; a frame's failure is
// reported by the next update (or weft_sub_app_wait); destroying the app
// with a frame in flight waits for it and leaks nothing.
// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_world.h"
#include "weft.h"

#define FRAMES 1000
#define UNITS 48

typedef struct vec2 {
    float x, y;
} vec2;

// ---- a small host job system (one pool for both worlds) ----

#define JOBS_CAP 4096

typedef struct job {
    weft_job_fn fn;
    void *arg;
} job;

typedef struct jobsys {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job q[JOBS_CAP];
    uint32_t head, tail; // under mu
    bool quit;           // under mu
    pthread_t threads[3];
    int nthreads;
} jobsys;

static bool js_pop(jobsys *j, job *out)
{
    if (j->head == j->tail) {
        return false;
    }
    *out = j->q[j->head % JOBS_CAP];
    j->head++;
    return true;
}

static void *js_worker(void *arg)
{
    jobsys *j = arg;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        job jb;
        if (js_pop(j, &jb)) {
            pthread_mutex_unlock(&j->mu);
            jb.fn(jb.arg);
            pthread_mutex_lock(&j->mu);
            continue;
        }
        if (j->quit) {
            break;
        }
        pthread_cond_wait(&j->cv, &j->mu);
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

static void js_submit(void *user, weft_job_fn fn, void *arg)
{
    jobsys *j = user;
    pthread_mutex_lock(&j->mu);
    // JOBS_CAP far exceeds what two schedules of a few systems queue
    j->q[j->tail % JOBS_CAP] = (job){fn, arg};
    j->tail++;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

static void js_help(void *user)
{
    jobsys *j = user;
    job jb;
    pthread_mutex_lock(&j->mu);
    bool got = js_pop(j, &jb);
    pthread_mutex_unlock(&j->mu);
    if (got) {
        jb.fn(jb.arg);
    } else {
        sched_yield();
    }
}

static void js_start(jobsys *j, int threads)
{
    memset(j, 0, sizeof *j);
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    j->nthreads = threads;
    for (int i = 0; i < threads; i++) {
        assert_int_equal(pthread_create(&j->threads[i], NULL, js_worker, j), 0);
    }
}

static void js_stop(jobsys *j)
{
    pthread_mutex_lock(&j->mu);
    j->quit = true;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    for (int i = 0; i < j->nthreads; i++) {
        pthread_join(j->threads[i], NULL);
    }
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->mu);
}

// ---- the scenario: units moving and churning in the main world ----

typedef struct scene {
    weft_component pos, vel, rng, score;      // main
    weft_component rpos, rscore, sum, frame;  // sub
    uint64_t hashes[FRAMES];
    int nhash;
    int fail_at;   // sub frame number whose Update system fails (0: none)
    int sub_frames;
    pthread_t driver;     // the thread calling weft_app_update
    int hash_off_driver;  // frames whose Last ran on another thread
} scene;

static uint64_t next_rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void sys_move(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        vec2 *p = weft_iter_field_mut(&it, 0, sizeof(vec2));
        const vec2 *v = weft_iter_field(&it, 1, sizeof(vec2));
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            p[i].x += v[i].x;
            p[i].y += v[i].y;
            if (p[i].x > 100 || p[i].x < -100) {
                p[i].x = 0;
            }
        }
    }
}

// Exclusive: spawns and despawns units from a seeded stream (the pick
// follows the query's order, itself deterministic).
static void sys_churn(weft_system_ctx *ctx, void *user)
{
    scene *sc = user;
    weft_world *w = weft_system_world(ctx);
    uint64_t *rs = weft_resource_get_mut(w, sc->rng, sizeof(uint64_t));
    uint64_t r = next_rng(rs);
    int64_t count = weft_system_count(ctx, 0);
    if (count > 0 && (r & 3) == 0) {
        int64_t target = (int64_t)((r >> 8) % (uint64_t)count);
        weft_entity victim = 0;
        weft_iter it;
        if (weft_system_iter(ctx, 0, &it) == WEFT_OK) {
            while (weft_iter_next(&it)) {
                int32_t n = weft_iter_count(&it);
                if (!victim && target < n) {
                    victim = weft_iter_entities(&it)[target];
                }
                target -= n;
            }
        }
        if (victim) {
            weft_despawn(w, victim);
        }
    }
    if (count < UNITS || (r & 7) == 1) {
        vec2 p = {(float)(r % 50), (float)((r >> 16) % 50)};
        vec2 v = {(float)((int)((r >> 24) % 7) - 3) * 0.5f, 0.25f};
        weft_value vals[2] = {{sc->pos, sizeof p, &p}, {sc->vel, sizeof v, &v}};
        weft_spawn_with(w, vals, 2);
    }
    int32_t *score = weft_resource_get_mut(w, sc->score, sizeof(int32_t));
    if ((r & 15) == 3) {
        *score += (int32_t)(r % 11);
    }
}

// Tags every unit for the sub-app (a main-world PostUpdate system).
typedef struct tagger {
    weft_component tag;
} tagger;

static void sys_tag(weft_system_ctx *ctx, void *user)
{
    tagger *t = user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    weft_commands *cmds = weft_system_commands(ctx);
    while (weft_iter_next(&it)) {
        const weft_entity *e = weft_iter_entities(&it);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            if (weft_entity_index(e[i]) % 4 != 3) { // some stay untagged
                weft_cmd_insert(cmds, e[i], t->tag, NULL, 0);
            }
        }
    }
}

static bool xform(weft_entity e, const void *src, void *dst, void *user)
{
    (void)e;
    (void)user;
    const vec2 *s = src;
    if (s->y > 40) {
        return false; // culled
    }
    vec2 *d = dst;
    d->x = s->x * 10;
    d->y = s->y * 10;
    return true;
}

// Sub-world: sums the extracted positions (a parallel system).
static void sys_sum(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    double sum = 0;
    if (weft_system_iter(ctx, 0, &it) == WEFT_OK) {
        while (weft_iter_next(&it)) {
            const vec2 *p = weft_iter_field(&it, 0, sizeof(vec2));
            for (int32_t i = 0; i < weft_iter_count(&it); i++) {
                sum += p[i].x + 3 * p[i].y;
            }
        }
    }
    double *out = weft_system_resource_mut(ctx, 0 + *(const weft_component *)user, sizeof sum);
    if (out) {
        *out = sum;
    }
}

// A gate the test may close to hold a sub-app frame in flight.
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool closed;
} g_gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};

// Sub-world: counts frames; fails the frame numbered fail_at.
static void sys_frame(weft_system_ctx *ctx, void *user)
{
    scene *sc = user;
    pthread_mutex_lock(&g_gate.mu);
    while (g_gate.closed) {
        pthread_cond_wait(&g_gate.cv, &g_gate.mu);
    }
    pthread_mutex_unlock(&g_gate.mu);
    int64_t *f = weft_system_resource_mut(ctx, sc->frame, sizeof(int64_t));
    if (f) {
        (*f)++;
    }
    sc->sub_frames++;
    if (sc->fail_at && sc->sub_frames == sc->fail_at) {
        weft_system_fail(ctx, WEFT_ERR_CALLBACK, "planned failure");
    }
}

// Sub-world, Last: records the world's hash.
static void sys_hash(weft_system_ctx *ctx, void *user)
{
    scene *sc = user;
    if (sc->nhash < FRAMES) {
        sc->hashes[sc->nhash++] = weft_world_hash(weft_system_world(ctx));
    }
    // an exclusive system runs on the thread running the schedule: the
    // sub-app's own thread when pipelined
    if (!pthread_equal(pthread_self(), sc->driver)) {
        sc->hash_off_driver++;
    }
}

typedef struct run_cfg {
    int threads;
    bool pipelined;
    bool toggle;    // switch pipelining every 100 frames
    bool shared;    // one host job system for both worlds
    int frames;
} run_cfg;

static weft_app *build(tw_fixture *f, scene *sc, tagger *tg, weft_app **out_sub, bool pipelined)
{
    weft_app_desc ad;
    memset(&ad, 0, sizeof ad);
    ad.world = f->w;
    weft_app *app = weft_app_create(&ad);
    assert_non_null(app);
    weft_world *w = f->w;
    sc->pos = tw_comp(w, "Pos", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    sc->vel = tw_comp(w, "Vel", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    sc->rng = tw_comp(w, "Rng", sizeof(uint64_t), 0, WEFT_STORAGE_DEFAULT, 0);
    sc->score = tw_comp(w, "Score", sizeof(int32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    uint64_t seed = 0x18;
    int32_t zero = 0;
    weft_resource_insert(w, sc->rng, &seed, sizeof seed);
    weft_resource_insert(w, sc->score, &zero, sizeof zero);
    weft_sub_app_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "render";
    sd.world_desc = tw_fixture_desc(f);
    sd.pipelined = pipelined;
    weft_app *sub = weft_app_add_sub_app(app, &sd);
    assert_non_null(sub);
    weft_world *sw = weft_app_world(sub);
    sc->rpos = tw_comp(sw, "RPos", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    sc->rscore = tw_comp(sw, "RScore", sizeof(int32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    sc->sum = tw_comp(sw, "Sum", sizeof(double), 0, WEFT_STORAGE_DEFAULT, 0);
    sc->frame = tw_comp(sw, "Frame", sizeof(int64_t), 0, WEFT_STORAGE_DEFAULT, 0);
    double dz = 0;
    int64_t fz = 0;
    weft_resource_insert(sw, sc->sum, &dz, sizeof dz);
    weft_resource_insert(sw, sc->frame, &fz, sizeof fz);
    // main systems
    weft_query_desc mq;
    memset(&mq, 0, sizeof mq);
    mq.terms[0].id = sc->pos;
    mq.terms[0].access = WEFT_ACCESS_WRITE;
    mq.terms[1].id = sc->vel;
    mq.term_count = 2;
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "move";
    d.fn = sys_move;
    d.queries = &mq;
    d.query_count = 1;
    assert_int_not_equal(weft_app_add_system(app, WEFT_APP_UPDATE, &d), 0);
    weft_query_desc cq;
    memset(&cq, 0, sizeof cq);
    cq.terms[0].id = sc->pos;
    cq.term_count = 1;
    memset(&d, 0, sizeof d);
    d.name = "churn";
    d.fn = sys_churn;
    d.user = sc;
    d.queries = &cq;
    d.query_count = 1;
    d.flags = WEFT_SYSTEM_EXCLUSIVE;
    assert_int_not_equal(weft_app_add_system(app, WEFT_APP_PRE_UPDATE, &d), 0);
    tg->tag = weft_sub_app_sync_tag(sub);
    weft_query_desc tq;
    memset(&tq, 0, sizeof tq);
    tq.terms[0].id = sc->pos;
    tq.terms[0].access = WEFT_ACCESS_NONE;
    tq.terms[0].oper = WEFT_OPER_WITH;
    tq.terms[1].id = tg->tag;
    tq.terms[1].oper = WEFT_OPER_WITHOUT;
    tq.term_count = 2;
    memset(&d, 0, sizeof d);
    d.name = "tag";
    d.fn = sys_tag;
    d.user = tg;
    d.queries = &tq;
    d.query_count = 1;
    d.flags = WEFT_SYSTEM_COMMANDS;
    assert_int_not_equal(weft_app_add_system(app, WEFT_APP_POST_UPDATE, &d), 0);
    // extraction
    weft_extract_component_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.main_component = sc->pos;
    cd.sub_component = sc->rpos;
    cd.transform = xform;
    assert_int_not_equal(weft_sub_app_extract_component(sub, &cd), 0);
    weft_extract_resource_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.main_resource = sc->score;
    rd.sub_resource = sc->rscore;
    assert_int_not_equal(weft_sub_app_extract_resource(sub, &rd), 0);
    // sub-world systems
    weft_query_desc sq;
    memset(&sq, 0, sizeof sq);
    sq.terms[0].id = sc->rpos;
    sq.term_count = 1;
    weft_resource_use su = {sc->sum, WEFT_ACCESS_WRITE};
    memset(&d, 0, sizeof d);
    d.name = "sum";
    d.fn = sys_sum;
    d.user = &sc->sum;
    d.queries = &sq;
    d.query_count = 1;
    d.resources = &su;
    d.resource_count = 1;
    assert_int_not_equal(weft_app_add_system(sub, WEFT_APP_UPDATE, &d), 0);
    weft_resource_use fu = {sc->frame, WEFT_ACCESS_WRITE};
    memset(&d, 0, sizeof d);
    d.name = "frame";
    d.fn = sys_frame;
    d.user = sc;
    d.resources = &fu;
    d.resource_count = 1;
    assert_int_not_equal(weft_app_add_system(sub, WEFT_APP_UPDATE, &d), 0);
    memset(&d, 0, sizeof d);
    d.name = "hash";
    d.fn = sys_hash;
    d.user = sc;
    d.flags = WEFT_SYSTEM_EXCLUSIVE;
    assert_int_not_equal(weft_app_add_system(sub, WEFT_APP_LAST, &d), 0);
    *out_sub = sub;
    return app;
}

static void run(tw_fixture *f, scene *sc, const run_cfg *cfg)
{
    memset(sc, 0, sizeof *sc);
    sc->driver = pthread_self();
    tagger tg;
    weft_app *sub = NULL;
    weft_app *app = build(f, sc, &tg, &sub, cfg->pipelined);
    jobsys js;
    if (cfg->shared) {
        js_start(&js, cfg->threads - 1);
        weft_job_system j;
        memset(&j, 0, sizeof j);
        j.user = &js;
        j.workers = (uint32_t)cfg->threads;
        j.submit = js_submit;
        j.help = js_help;
        assert_int_equal(weft_world_set_job_system(f->w, &j), WEFT_OK);
        assert_int_equal(weft_world_set_job_system(weft_app_world(sub), &j), WEFT_OK);
    } else {
        assert_int_equal(weft_world_set_threads(f->w, cfg->threads), WEFT_OK);
        assert_int_equal(weft_world_set_threads(weft_app_world(sub), cfg->threads), WEFT_OK);
    }
    for (int i = 0; i < cfg->frames; i++) {
        if (cfg->toggle && i % 100 == 50) {
            assert_int_equal(weft_sub_app_set_pipelined(sub, (i / 100) % 2 == 0), WEFT_OK);
        }
        assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
    }
    assert_int_equal(weft_sub_app_wait(sub), WEFT_OK);
    assert_int_equal(weft_sub_app_frames(sub), cfg->frames);
    assert_int_equal(sc->nhash, cfg->frames);
    if (cfg->pipelined && !cfg->toggle) {
        assert_int_equal(sc->hash_off_driver, cfg->frames);
    } else if (!cfg->pipelined) {
        assert_int_equal(sc->hash_off_driver, 0);
    }
    // the scenario has substance: twins in the sub-world, extracted values
    weft_world_stats ss;
    assert_int_equal(weft_world_get_stats(weft_app_world(sub), &ss), WEFT_OK);
    assert_true(ss.live_entities > UNITS / 2);
    const double *sum = weft_resource_get(weft_app_world(sub), sc->sum, sizeof(double));
    assert_non_null(sum);
    assert_true(*sum != 0.0);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    if (cfg->shared) {
        assert_int_equal(weft_world_set_job_system(f->w, NULL), WEFT_OK);
        js_stop(&js);
    } else {
        assert_int_equal(weft_world_set_threads(f->w, 1), WEFT_OK);
    }
}

// A fresh fixture per run: the main world's ids and components start over.
static void run_fresh(scene *sc, const run_cfg *cfg)
{
    tw_fixture *f = tw_fixture_new();
    assert_non_null(f);
    run(f, sc, cfg);
    tw_fixture_free(f);
}

static scene ref_scene;
static scene other_scene;

static void expect_same(const scene *a, const scene *b, const char *what)
{
    for (int i = 0; i < a->nhash; i++) {
        if (a->hashes[i] != b->hashes[i]) {
            fail_msg("%s: sub-world hash of frame %d differs", what, i);
        }
    }
}

static void pipeline_same_hashes(void **state)
{
    (void)state;
    run_cfg base = {1, false, false, false, FRAMES};
    run_fresh(&ref_scene, &base);
    // the hashes do move: the scenario is not trivially constant
    assert_true(ref_scene.hashes[0] != ref_scene.hashes[FRAMES - 1]);
    const int threads[3] = {1, 2, 4};
    for (int t = 0; t < 3; t++) {
        for (int p = 0; p < 2; p++) {
            if (t == 0 && p == 0) {
                continue;
            }
            run_cfg cfg = {threads[t], p == 1, false, false, FRAMES};
            run_fresh(&other_scene, &cfg);
            char what[64];
            snprintf(what, sizeof what, "%d threads, %s", threads[t],
                     p ? "pipelined" : "not pipelined");
            assert_int_equal(other_scene.nhash, FRAMES);
            expect_same(&ref_scene, &other_scene, what);
        }
    }
    // switched on and off every 100 frames
    run_cfg tog = {2, true, true, false, FRAMES};
    run_fresh(&other_scene, &tog);
    expect_same(&ref_scene, &other_scene, "toggled");
}

static void pipeline_shared_job_system(void **state)
{
    (void)state;
    run_cfg base = {1, false, false, false, 300};
    run_fresh(&ref_scene, &base);
    for (int t = 2; t <= 4; t += 2) {
        run_cfg cfg = {t, true, false, true, 300};
        run_fresh(&other_scene, &cfg);
        expect_same(&ref_scene, &other_scene, "shared job system");
    }
}

static void pipeline_failure_reported_later(void **state)
{
    tw_fixture *f = *state;
    scene *sc = &other_scene;
    memset(sc, 0, sizeof *sc);
    tagger tg;
    weft_app *sub = NULL;
    weft_app *app = build(f, sc, &tg, &sub, true);
    sc->fail_at = 3;
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    // frame 3 runs in flight; its failure surfaces at the next collection
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_ERR_CALLBACK);
    assert_int_equal(weft_last_status(f->w), WEFT_ERR_CALLBACK);
    assert_true(tw_contains(weft_last_error(f->w), "render"));
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    // not pipelined: the same update reports it
    assert_int_equal(weft_sub_app_set_pipelined(sub, false), WEFT_OK);
    sc->fail_at = sc->sub_frames + 1;
    assert_int_equal(weft_app_update(app, 0.016), WEFT_ERR_CALLBACK);
    // and through weft_sub_app_wait
    assert_int_equal(weft_sub_app_set_pipelined(sub, true), WEFT_OK);
    sc->fail_at = sc->sub_frames + 1;
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(weft_sub_app_wait(sub), WEFT_ERR_CALLBACK);
    assert_int_equal(weft_sub_app_wait(sub), WEFT_OK);
    // with a frame in flight (held at a gate), the mapping is refused
    pthread_mutex_lock(&g_gate.mu);
    g_gate.closed = true;
    pthread_mutex_unlock(&g_gate.mu);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0].id = weft_sub_app_sub_entity(sub);
    q.term_count = 1;
    weft_query *synced = weft_query_create(f->w, &q);
    assert_non_null(synced);
    weft_entity some = 0;
    weft_iter it;
    assert_int_equal(weft_query_iter(f->w, synced, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        some = weft_iter_entities(&it)[0];
    }
    assert_int_not_equal(some, 0);
    assert_int_equal(weft_sub_app_map(sub, some), 0);
    assert_int_equal(weft_last_status(f->w), WEFT_ERR_WRONG_PHASE);
    assert_true(tw_contains(weft_last_error(f->w), "in flight"));
    pthread_mutex_lock(&g_gate.mu);
    g_gate.closed = false;
    pthread_cond_broadcast(&g_gate.cv);
    pthread_mutex_unlock(&g_gate.mu);
    assert_int_equal(weft_sub_app_wait(sub), WEFT_OK);
    assert_int_not_equal(weft_sub_app_map(sub, some), 0);
    weft_query_destroy(f->w, synced);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

static void pipeline_destroy_in_flight(void **state)
{
    tw_fixture *f = *state;
    for (int round = 0; round < 20; round++) {
        scene *sc = &other_scene;
        memset(sc, 0, sizeof *sc);
        tagger tg;
        weft_app *sub = NULL;
        weft_app *app = build(f, sc, &tg, &sub, true);
        assert_int_equal(weft_world_set_threads(weft_app_world(sub), 2), WEFT_OK);
        for (int i = 0; i <= round % 4; i++) {
            assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
        }
        // a frame is (probably) in flight: destroying waits for it
        assert_int_equal(weft_app_destroy(app), WEFT_OK);
        assert_int_equal(sc->sub_frames, round % 4 + 1);
        // the main world keeps the sub-app's components; a new app reuses them
        tw_fixture_free(f);
        f = tw_fixture_new();
        assert_non_null(f);
        *state = f;
    }
}

static int setup(void **state)
{
    return tw_setup(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pipeline_same_hashes),
        cmocka_unit_test(pipeline_shared_job_system),
        cmocka_unit_test_setup_teardown(pipeline_failure_reported_later, setup, tw_teardown),
        cmocka_unit_test_setup_teardown(pipeline_destroy_in_flight, setup, tw_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* examples/12_render_world.c - a render sub-world fed by extraction, pipelined and not.
 * SPDX-License-Identifier: MIT
 *
 * Usage: weft_example_render_world [UNITS [FRAMES [THREADS [WORK]]]]
 *        defaults: 20000 units, 200 frames, 2 threads, 1 (work scale)
 *
 * The main app simulates the flagship's kind of units: two teams flying
 * around a 1000 x 1000 arena, bouncing off its walls, some of them dying
 * and being replaced every frame. Every unit carries the render sub-app's
 * sync tag, so it has a twin in the "render" sub-world. Each frame:
 *
 *   main world     PreUpdate: churn (despawn a few, spawn replacements)
 *                  Update:    movement (parallel chunks)
 *   extraction     Position -> Sprite on the twin (culled outside the
 *                  view, which removes the Sprite), Unit -> Material on
 *                  the twin, the Camera resource only when it moved
 *   render world   Update:    queue (draw records of every visible sprite:
 *                             material, depth, twin), sort (by material,
 *                             then depth, then entity), batch (runs of one
 *                             material) and a checksum of the sorted list
 *                  Last:      the checksum is appended to the frame log
 *
 * The program runs the same simulation three times, the render sub-app
 * synchronous, pipelined (its frame N on its own thread while the main
 * world runs frame N+1) with a thread pool per world, and pipelined with
 * the render world on the main world's pool (share_threads: one pool for
 * both), prints the mean frame times and their ratios, and checks that the
 * per-frame checksums are identical: the pipeline changes when the render
 * world runs, never what it computes.
 * WORK repeats the movement and the sort's comparison work to balance the
 * two worlds' frame times (the ratio only shows overlap when both sides
 * have work). Any failure exits non-zero.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft.h"

typedef struct Position { float x, y; } Position;
typedef struct Velocity { float x, y; } Velocity;
typedef struct Unit { int32_t team, kind; } Unit;
typedef struct Sprite { float x, y; } Sprite;         /* render world: screen position */
typedef struct Material { uint32_t id, pad_; } Material;
typedef struct Camera { float x, y, half_w, half_h; } Camera;
typedef struct Rng { uint64_t state; } Rng;

/* One draw record: what the sort and batch work on. */
typedef struct DrawRecord {
    uint32_t material;
    float depth;
    weft_entity twin;
} DrawRecord;

/* The render world's frame output (a resource). */
typedef struct RenderStats {
    int64_t records, batches;
    uint64_t checksum;
} RenderStats;

#define ARENA 1000.0f

typedef struct render_state {
    weft_component sprite, material, stats, camera;
    DrawRecord *records; /* scratch, owned by the render world's systems */
    DrawRecord *tmp;
    int64_t cap;
    int work;
    uint64_t *log;       /* per-frame checksums */
    int64_t nlog, cap_log;
} render_state;

typedef struct sim_state {
    weft_component pos, vel, unit, rng, camera, tag;
    int64_t units;
    int work;
} sim_state;

static weft_world *g_world;

static void check(weft_status st, const char *what)
{
    if (st != WEFT_OK) {
        fprintf(stderr, "render_world: %s failed: %s: %s\n", what, weft_status_name(st),
                g_world ? weft_last_error(g_world) : "");
        exit(1);
    }
}

static void check_handle(uint64_t h, const char *what)
{
    if (h == 0) {
        check(g_world ? weft_last_status(g_world) : WEFT_ERR_INTERNAL, what);
        check(WEFT_ERR_INTERNAL, what);
    }
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static float rnd(uint64_t *s, float lo, float hi)
{
    return lo + (hi - lo) * (float)(mix(s) >> 40) * (1.0f / 16777216.0f);
}

static weft_component comp(weft_world *w, const char *name, size_t size)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    weft_component c = weft_component_register(w, &d);
    check_handle(c, name);
    return c;
}

/* ---- main world ---- */

static void spawn_unit(weft_world *w, const sim_state *s, uint64_t *rng)
{
    Position p = {rnd(rng, 0, ARENA), rnd(rng, 0, ARENA)};
    Velocity v = {rnd(rng, -40, 40), rnd(rng, -40, 40)};
    Unit u = {(int32_t)(mix(rng) & 1), (int32_t)(mix(rng) % 3)};
    weft_value vals[4] = {{s->pos, sizeof p, &p}, {s->vel, sizeof v, &v},
                          {s->unit, sizeof u, &u}, {s->tag, 0, NULL}};
    check_handle(weft_spawn_with(w, vals, 4), "spawn unit");
}

/* Exclusive: despawns about 1% of the units (the first ones of the query,
 * picked by a seeded stream) and spawns as many; moves the camera now and
 * then (so its extraction happens only on those frames). */
static void sys_churn(weft_system_ctx *ctx, void *user)
{
    sim_state *s = user;
    weft_world *w = weft_system_world(ctx);
    Rng *r = weft_resource_get_mut(w, s->rng, sizeof *r);
    int64_t kill = s->units / 100 + 1;
    weft_entity victims[512];
    int64_t n = 0;
    weft_iter it;
    check(weft_system_iter(ctx, 0, &it), "churn iter");
    while (weft_iter_next(&it)) {
        const weft_entity *e = weft_iter_entities(&it);
        for (int32_t i = 0; i < weft_iter_count(&it) && n < kill && n < 512; i++) {
            if (mix(&r->state) % 64 == 0) {
                victims[n++] = e[i];
            }
        }
    }
    for (int64_t i = 0; i < n; i++) {
        check(weft_despawn(w, victims[i]), "despawn");
    }
    for (int64_t i = 0; i < n; i++) {
        spawn_unit(w, s, &r->state);
    }
    if (mix(&r->state) % 8 == 0) {
        Camera *c = weft_resource_get_mut(w, s->camera, sizeof *c);
        c->x = rnd(&r->state, 300, 700);
        c->y = rnd(&r->state, 300, 700);
    }
}

typedef struct move_args {
    float dt;
    int work;
} move_args;

static void chunk_move(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    const move_args *a = user;
    while (weft_iter_next(it)) {
        Position *p = weft_iter_field_mut(it, 0, sizeof *p);
        Velocity *v = weft_iter_field_mut(it, 1, sizeof *v);
        int32_t n = weft_iter_count(it);
        for (int k = 0; k < a->work; k++) {
            float dt = a->dt / (float)a->work;
            for (int32_t i = 0; i < n; i++) {
                p[i].x += v[i].x * dt;
                p[i].y += v[i].y * dt;
                if (p[i].x < 0 || p[i].x > ARENA) {
                    v[i].x = -v[i].x;
                    p[i].x = p[i].x < 0 ? 0 : ARENA;
                }
                if (p[i].y < 0 || p[i].y > ARENA) {
                    v[i].y = -v[i].y;
                    p[i].y = p[i].y < 0 ? 0 : ARENA;
                }
            }
        }
    }
}

static void sys_move(weft_system_ctx *ctx, void *user)
{
    const sim_state *s = user;
    move_args a = {(float)weft_system_delta(ctx), s->work};
    check(weft_system_par_each(ctx, 0, chunk_move, &a, 2048), "movement");
}

/* ---- extraction transforms ---- */

/* Main Position -> render Sprite; outside the (fixed) arena view: culled. */
static bool to_sprite(weft_entity e, const void *src, void *dst, void *user)
{
    (void)e;
    (void)user;
    const Position *p = src;
    if (p->x < 50 || p->x > ARENA - 50) {
        return false; /* culled: the twin loses its Sprite */
    }
    Sprite *s = dst;
    s->x = p->x;
    s->y = p->y;
    return true;
}

static bool to_material(weft_entity e, const void *src, void *dst, void *user)
{
    (void)e;
    (void)user;
    const Unit *u = src;
    Material *m = dst;
    m->id = (uint32_t)(u->team * 3 + u->kind);
    return true;
}

/* ---- render world ---- */

static int record_less(const DrawRecord *a, const DrawRecord *b)
{
    if (a->material != b->material) {
        return a->material < b->material;
    }
    if (a->depth != b->depth) {
        return a->depth < b->depth;
    }
    return a->twin < b->twin;
}

/* Stable merge sort (deterministic whatever the input order). */
static void sort_records(DrawRecord *v, DrawRecord *tmp, int64_t n)
{
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                tmp[k++] = record_less(&v[j], &v[i]) ? v[j++] : v[i++];
            }
            while (i < mid) {
                tmp[k++] = v[i++];
            }
            while (j < hi) {
                tmp[k++] = v[j++];
            }
        }
        memcpy(v, tmp, (size_t)n * sizeof *v);
    }
}

/* queue + sort + batch + checksum, one exclusive system (its scratch is
 * the render state's). */
static void sys_render(weft_system_ctx *ctx, void *user)
{
    render_state *r = user;
    weft_world *w = weft_system_world(ctx);
    int64_t n = weft_system_count(ctx, 0);
    if (n > r->cap) {
        free(r->records);
        free(r->tmp);
        r->cap = n * 2;
        r->records = malloc((size_t)r->cap * sizeof *r->records);
        r->tmp = malloc((size_t)r->cap * sizeof *r->tmp);
        if (!r->records || !r->tmp) {
            weft_system_fail(ctx, WEFT_ERR_OUT_OF_MEMORY, "draw records");
            return;
        }
    }
    const Camera *cam = weft_resource_get(w, r->camera, sizeof *cam);
    float cy = cam ? cam->y : 0;
    int64_t k = 0;
    weft_iter it;
    check(weft_system_iter(ctx, 0, &it), "render iter");
    while (weft_iter_next(&it)) {
        const Sprite *s = weft_iter_field(&it, 0, sizeof *s);
        const Material *m = weft_iter_field(&it, 1, sizeof *m);
        const weft_entity *e = weft_iter_entities(&it);
        for (int32_t i = 0; i < weft_iter_count(&it) && k < n; i++) {
            r->records[k].material = m[i].id;
            r->records[k].depth = s[i].y - cy;
            r->records[k].twin = e[i];
            k++;
        }
    }
    uint64_t sum = 0;
    int64_t batches = 0;
    for (int rep = 0; rep < r->work; rep++) {
        /* rebuild the unsorted order each repetition so every pass sorts */
        if (rep > 0) {
            for (int64_t i = 0; i + 1 < k; i += 2) {
                DrawRecord t = r->records[i];
                r->records[i] = r->records[i + 1];
                r->records[i + 1] = t;
            }
        }
        sort_records(r->records, r->tmp, k);
    }
    for (int64_t i = 0; i < k; i++) {
        if (i == 0 || r->records[i].material != r->records[i - 1].material) {
            batches++;
        }
        uint32_t depth_bits;
        memcpy(&depth_bits, &r->records[i].depth, sizeof depth_bits);
        uint64_t word = ((uint64_t)r->records[i].material << 32) ^ depth_bits ^
                        (r->records[i].twin * 0x9E3779B97F4A7C15u);
        sum = (sum ^ word) * 0x100000001B3u;
    }
    RenderStats *st = weft_resource_get_mut(w, r->stats, sizeof *st);
    st->records = k;
    st->batches = batches;
    st->checksum = sum;
}

static void sys_log(weft_system_ctx *ctx, void *user)
{
    render_state *r = user;
    weft_world *w = weft_system_world(ctx);
    const RenderStats *st = weft_resource_get(w, r->stats, sizeof *st);
    if (r->nlog < r->cap_log) {
        r->log[r->nlog++] = st->checksum ^ ((uint64_t)st->batches << 48);
    }
}

/* ---- one run ---- */

typedef struct result {
    double mean_ms;
    int64_t records, batches;
} result;

static result run(int64_t units, int frames, int threads, int work, bool pipelined,
                  bool shared, uint64_t *log)
{
    weft_app *app = weft_app_create(NULL);
    check_handle(app != NULL, "app");
    weft_world *w = weft_app_world(app);
    g_world = w;
    check(weft_world_set_threads(w, threads), "threads");
    sim_state sim;
    memset(&sim, 0, sizeof sim);
    sim.units = units;
    sim.work = work;
    sim.pos = comp(w, "Position", sizeof(Position));
    sim.vel = comp(w, "Velocity", sizeof(Velocity));
    sim.unit = comp(w, "Unit", sizeof(Unit));
    sim.rng = comp(w, "Rng", sizeof(Rng));
    sim.camera = comp(w, "Camera", sizeof(Camera));

    weft_sub_app_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "render";
    sd.pipelined = pipelined;
    /* shared: the render world runs on the main world's pool (one set of
     * threads for both, the render frame overlapping the next main one) */
    sd.share_threads = shared;
    weft_app *render = weft_app_add_sub_app(app, &sd);
    check_handle(render != NULL, "render sub-app");
    weft_world *rw = weft_app_world(render);
    if (!shared) {
        check(weft_world_set_threads(rw, threads), "render threads");
    }
    sim.tag = weft_sub_app_sync_tag(render);

    Rng rng = {0x12};
    check(weft_resource_insert(w, sim.rng, &rng, sizeof rng), "rng");
    Camera cam = {500, 500, 400, 300};
    check(weft_resource_insert(w, sim.camera, &cam, sizeof cam), "camera");
    for (int64_t i = 0; i < units; i++) {
        spawn_unit(w, &sim, &rng.state);
    }

    /* main systems */
    weft_query_desc cq;
    memset(&cq, 0, sizeof cq);
    cq.terms[0].id = sim.unit;
    cq.term_count = 1;
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "churn";
    d.fn = sys_churn;
    d.user = &sim;
    d.queries = &cq;
    d.query_count = 1;
    d.flags = WEFT_SYSTEM_EXCLUSIVE;
    check_handle(weft_app_add_system(app, WEFT_APP_PRE_UPDATE, &d), "churn");
    weft_query_desc mq;
    memset(&mq, 0, sizeof mq);
    mq.terms[0].id = sim.pos;
    mq.terms[0].access = WEFT_ACCESS_WRITE;
    mq.terms[1].id = sim.vel;
    mq.terms[1].access = WEFT_ACCESS_WRITE;
    mq.term_count = 2;
    memset(&d, 0, sizeof d);
    d.name = "movement";
    d.fn = sys_move;
    d.user = &sim;
    d.queries = &mq;
    d.query_count = 1;
    check_handle(weft_app_add_system(app, WEFT_APP_UPDATE, &d), "movement");

    /* extraction */
    render_state r;
    memset(&r, 0, sizeof r);
    r.work = work;
    r.log = log;
    r.cap_log = frames;
    r.sprite = comp(rw, "Sprite", sizeof(Sprite));
    r.material = comp(rw, "Material", sizeof(Material));
    r.stats = comp(rw, "RenderStats", sizeof(RenderStats));
    r.camera = comp(rw, "RenderCamera", sizeof(Camera));
    RenderStats zero;
    memset(&zero, 0, sizeof zero);
    check(weft_resource_insert(rw, r.stats, &zero, sizeof zero), "stats");
    weft_extract_component_desc xc;
    memset(&xc, 0, sizeof xc);
    xc.main_component = sim.pos;
    xc.sub_component = r.sprite;
    xc.transform = to_sprite;
    check_handle(weft_sub_app_extract_component(render, &xc), "extract sprites");
    xc.main_component = sim.unit;
    xc.sub_component = r.material;
    xc.transform = to_material;
    xc.changed_only = true; /* a unit's team and kind never change */
    check_handle(weft_sub_app_extract_component(render, &xc), "extract materials");
    weft_extract_resource_desc xr;
    memset(&xr, 0, sizeof xr);
    xr.main_resource = sim.camera;
    xr.sub_resource = r.camera;
    check_handle(weft_sub_app_extract_resource(render, &xr), "extract camera");

    /* render systems */
    weft_query_desc rq;
    memset(&rq, 0, sizeof rq);
    rq.terms[0].id = r.sprite;
    rq.terms[1].id = r.material;
    rq.term_count = 2;
    memset(&d, 0, sizeof d);
    d.name = "queue_sort_batch";
    d.fn = sys_render;
    d.user = &r;
    d.queries = &rq;
    d.query_count = 1;
    d.flags = WEFT_SYSTEM_EXCLUSIVE;
    check_handle(weft_app_add_system(render, WEFT_APP_UPDATE, &d), "render");
    memset(&d, 0, sizeof d);
    d.name = "log";
    d.fn = sys_log;
    d.user = &r;
    d.flags = WEFT_SYSTEM_EXCLUSIVE;
    check_handle(weft_app_add_system(render, WEFT_APP_LAST, &d), "log");

    check(weft_app_update(app, 1.0 / 60), "first update"); /* warm-up */
    uint64_t t0 = now_ns();
    for (int f = 1; f < frames; f++) {
        check(weft_app_update(app, 1.0 / 60), "update");
    }
    check(weft_sub_app_wait(render), "render frame");
    uint64_t t1 = now_ns();
    const RenderStats *st = weft_resource_get(rw, r.stats, sizeof *st);
    result res = {(double)(t1 - t0) / 1e6 / (frames > 1 ? frames - 1 : 1), st->records,
                  st->batches};
    if (r.nlog != frames) {
        fprintf(stderr, "render_world: %lld frames logged, %d expected\n", (long long)r.nlog,
                frames);
        exit(1);
    }
    check(weft_app_destroy(app), "destroy");
    g_world = NULL;
    free(r.records);
    free(r.tmp);
    return res;
}

int main(int argc, char **argv)
{
    int64_t units = argc > 1 ? atoll(argv[1]) : 20000;
    int frames = argc > 2 ? atoi(argv[2]) : 200;
    int threads = argc > 3 ? atoi(argv[3]) : 2;
    int work = argc > 4 ? atoi(argv[4]) : 1;
    if (units < 1 || frames < 2 || work < 1) {
        fprintf(stderr, "usage: %s [UNITS>0 [FRAMES>1 [THREADS [WORK>0]]]]\n", argv[0]);
        return 2;
    }
    uint64_t *sync_log = calloc((size_t)frames, sizeof *sync_log);
    uint64_t *pipe_log = calloc((size_t)frames, sizeof *pipe_log);
    uint64_t *shared_log = calloc((size_t)frames, sizeof *shared_log);
    if (!sync_log || !pipe_log || !shared_log) {
        return 1;
    }
    result a = run(units, frames, threads, work, false, false, sync_log);
    result b = run(units, frames, threads, work, true, false, pipe_log);
    result c = run(units, frames, threads, work, true, true, shared_log);
    for (int f = 0; f < frames; f++) {
        if (sync_log[f] != pipe_log[f] || sync_log[f] != shared_log[f]) {
            fprintf(stderr, "render_world: frame %d: checksum %016llx synchronous, %016llx "
                    "pipelined, %016llx pipelined on one shared pool\n", f,
                    (unsigned long long)sync_log[f], (unsigned long long)pipe_log[f],
                    (unsigned long long)shared_log[f]);
            return 1;
        }
    }
    uint64_t all = 0;
    for (int f = 0; f < frames; f++) {
        all = (all ^ sync_log[f]) * 0x100000001B3u;
    }
    printf("units %lld, frames %d, threads %d, work %d\n", (long long)units, frames, threads,
           work);
    printf("last frame: %lld draw records in %lld batches\n", (long long)a.records,
           (long long)a.batches);
    printf("frame time: synchronous %.3f ms, pipelined %.3f ms, ratio %.2f\n", a.mean_ms,
           b.mean_ms, b.mean_ms / a.mean_ms);
    printf("pipelined on one pool shared by both worlds: %.3f ms, ratio %.2f\n", c.mean_ms,
           c.mean_ms / a.mean_ms);
    printf("checksums: identical over %d frames (%016llx)\n", frames, (unsigned long long)all);
    (void)b.records;
    free(sync_log);
    free(pipe_log);
    free(shared_log);
    return 0;
}

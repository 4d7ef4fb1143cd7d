/* examples/web/arena.c - the web example: an arena simulation stepped one frame at a time, natively or in a browser.
 * SPDX-License-Identifier: MIT
 *
 * Usage (native): weft_example_web [UNITS [FRAMES [THREADS]]]
 *                 defaults: 4000 units, 120 frames, 1 thread
 * prints "frame <n> hash <16 hex digits>" after every frame, then the mean
 * frame time. In the browser (index.html, built with Emscripten) the page
 * calls arena_create once and arena_step once per animation frame, draws
 * the units from arena_draw_buffer on a canvas and shows each frame's
 * world hash and timings: the same C code, so the same hash sequence as
 * the native program (the ctest check_web.py compares them).
 *
 * Red and blue units fly around a 1000 x 1000 arena while a storm bounces
 * across it: red units flee the storm, blue units chase it, and every unit
 * inside it loses health. A unit whose health runs out is despawned through
 * commands and a newcomer takes its place (spawned through commands at a
 * position drawn from a seeded generator), so the population is stable.
 * Systems of one schedule, run once per 1/60 s frame:
 *   storm -> [steer_red, steer_blue] -> move (par_each) -> hurt (commands)
 * The arithmetic is IEEE single precision with + - * / and sqrtf only
 * (correctly rounded everywhere): no libm function whose last bit may
 * differ between C libraries, so native and WebAssembly agree bit for bit.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#define ARENA_EXPORT EMSCRIPTEN_KEEPALIVE
#else
#define ARENA_EXPORT
#endif

/* What the page calls (index.html, through Module.cwrap). */
ARENA_EXPORT int arena_create(int units, int threads);
ARENA_EXPORT int arena_step(void);
ARENA_EXPORT const char *arena_hash_hex(void);
ARENA_EXPORT double arena_step_ms(void);
ARENA_EXPORT int arena_threads(void);
ARENA_EXPORT const char *arena_error(void);
ARENA_EXPORT int arena_draw_fill(void);
ARENA_EXPORT float *arena_draw_buffer(void);
ARENA_EXPORT void arena_destroy(void);

/* ---- components and resources (no padding: weft hashes bytes) ---- */

typedef struct Position { float x, y; } Position;
typedef struct Velocity { float x, y; } Velocity;
typedef struct Health { float hp, max; } Health;
typedef struct Storm { float x, y, vx, vy; } Storm; /* resource */
typedef struct Spawner { uint64_t rng; int64_t born; } Spawner; /* resource */

#define ARENA 1000.0f
#define STORM_RADIUS 110.0f
#define STORM_DPS 45.0f
#define STEER 60.0f
#define MAX_SPEED 80.0f
#define FRAME_DT (1.0 / 60.0)

typedef struct arena {
    weft_world *w;
    weft_schedule *frame;
    weft_component pos, vel, health, red, blue, storm, spawner;
    weft_query *draw[2];   /* Position, Health, With Red / With Blue */
    int32_t units;
    int64_t frames;
    double last_ms, total_ms;
    uint64_t hash;
    float *buf;            /* [3 * cap]: x, y, team + health for the page */
    int32_t buf_cap, buf_count;
    int failed;
} arena;

static arena g; /* one arena per program: the page has one canvas */

static void fail(const char *what)
{
    fprintf(stderr, "arena: %s failed: %s\n", what,
            g.w != NULL ? weft_last_error(g.w) : "no world");
    g.failed = 1;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* splitmix64: deterministic pseudo-random numbers. */
static uint64_t mix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static float rnd(uint64_t *state, float lo, float hi) /* uniform in [lo, hi) */
{
    return lo + (hi - lo) * (float)(mix(state) >> 40) * (1.0f / 16777216.0f);
}

/* A newcomer: position, velocity and health from the generator. */
static void roll(uint64_t *rng, Position *p, Velocity *v, Health *h)
{
    *p = (Position){rnd(rng, 0, ARENA), rnd(rng, 0, ARENA)};
    *v = (Velocity){rnd(rng, -30, 30), rnd(rng, -30, 30)};
    *h = (Health){rnd(rng, 40, 100), 100};
}

#define W(c) {.id = (c), .access = WEFT_ACCESS_WRITE}
#define R(c) {.id = (c), .access = WEFT_ACCESS_READ}
#define WITH(c) {.id = (c), .oper = WEFT_OPER_WITH}
#define WITHOUT(c) {.id = (c), .oper = WEFT_OPER_WITHOUT}

static weft_query_desc query(const weft_term *terms, int32_t count)
{
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    memcpy(q.terms, terms, sizeof *terms * (size_t)count);
    q.term_count = count;
    return q;
}

/* ---- systems ---- */

/* storm: moves and bounces off the walls. */
static void sys_storm(weft_system_ctx *ctx, void *user)
{
    const arena *a = user;
    Storm *s = weft_system_resource_mut(ctx, a->storm, sizeof *s);
    float dt = (float)weft_system_delta(ctx);
    s->x += s->vx * dt;
    s->y += s->vy * dt;
    if (s->x < STORM_RADIUS || s->x > ARENA - STORM_RADIUS) {
        s->vx = -s->vx;
    }
    if (s->y < STORM_RADIUS || s->y > ARENA - STORM_RADIUS) {
        s->vy = -s->vy;
    }
}

/* steer: accelerate away from (sign -1) or toward (+1) the storm. */
static void steer(weft_system_ctx *ctx, const arena *a, float sign)
{
    const Storm *s = weft_system_resource(ctx, a->storm, sizeof *s);
    float dt = (float)weft_system_delta(ctx);
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        weft_system_fail(ctx, weft_last_status(a->w), "steer");
        return;
    }
    while (weft_iter_next(&it)) {
        Velocity *v = weft_iter_field_mut(&it, 0, sizeof *v);
        const Position *p = weft_iter_field(&it, 1, sizeof *p);
        for (int32_t i = 0, n = weft_iter_count(&it); i < n; i++) {
            float dx = s->x - p[i].x, dy = s->y - p[i].y;
            float d = sqrtf(dx * dx + dy * dy) + 1.0f;
            v[i].x += sign * STEER * dt * dx / d;
            v[i].y += sign * STEER * dt * dy / d;
            float sp = sqrtf(v[i].x * v[i].x + v[i].y * v[i].y);
            if (sp > MAX_SPEED) {
                v[i].x *= MAX_SPEED / sp;
                v[i].y *= MAX_SPEED / sp;
            }
        }
    }
}

static void sys_steer_red(weft_system_ctx *ctx, void *user)
{
    steer(ctx, user, -1.0f);
}

static void sys_steer_blue(weft_system_ctx *ctx, void *user)
{
    steer(ctx, user, 1.0f);
}

/* move: p += v * dt, bouncing off the walls; chunks run in parallel. */
static void move_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    float dt = *(const float *)user;
    while (weft_iter_next(it)) {
        Position *p = weft_iter_field_mut(it, 0, sizeof *p);
        Velocity *v = weft_iter_field_mut(it, 1, sizeof *v);
        for (int32_t i = 0, n = weft_iter_count(it); i < n; i++) {
            p[i].x += v[i].x * dt;
            p[i].y += v[i].y * dt;
            if (p[i].x < 0 || p[i].x > ARENA) {
                v[i].x = -v[i].x;
                p[i].x = p[i].x < 0 ? -p[i].x : 2 * ARENA - p[i].x;
            }
            if (p[i].y < 0 || p[i].y > ARENA) {
                v[i].y = -v[i].y;
                p[i].y = p[i].y < 0 ? -p[i].y : 2 * ARENA - p[i].y;
            }
        }
    }
}

static void sys_move(weft_system_ctx *ctx, void *user)
{
    (void)user;
    float dt = (float)weft_system_delta(ctx);
    weft_status st = weft_system_par_each(ctx, 0, move_chunk, &dt, 1024);
    if (st != WEFT_OK) {
        weft_system_fail(ctx, st, "move: par_each");
    }
}

/* hurt: the storm burns; the dead are replaced by newcomers of their team
 * (both through commands, applied after the system). Query 0 holds the red
 * units, query 1 the blue ones. */
static bool hurt_team(weft_system_ctx *ctx, const arena *a, int32_t team)
{
    const Storm *s = weft_system_resource(ctx, a->storm, sizeof *s);
    Spawner *sp = weft_system_resource_mut(ctx, a->spawner, sizeof *sp);
    weft_commands *cmds = weft_system_commands(ctx);
    float burn = STORM_DPS * (float)weft_system_delta(ctx);
    weft_iter it;
    if (weft_system_iter(ctx, team, &it) != WEFT_OK) {
        weft_system_fail(ctx, weft_last_status(a->w), "hurt");
        return false;
    }
    while (weft_iter_next(&it)) {
        Health *h = weft_iter_field_mut(&it, 0, sizeof *h);
        const Position *p = weft_iter_field(&it, 1, sizeof *p);
        const weft_entity *e = weft_iter_entities(&it);
        for (int32_t i = 0, n = weft_iter_count(&it); i < n; i++) {
            float dx = p[i].x - s->x, dy = p[i].y - s->y;
            if (dx * dx + dy * dy >= STORM_RADIUS * STORM_RADIUS) {
                continue;
            }
            h[i].hp -= burn;
            if (h[i].hp > 0) {
                continue;
            }
            Position np;
            Velocity nv;
            Health nh;
            roll(&sp->rng, &np, &nv, &nh);
            weft_value vals[] = {{a->pos, sizeof np, &np},
                                 {a->vel, sizeof nv, &nv},
                                 {a->health, sizeof nh, &nh},
                                 {team == 0 ? a->red : a->blue, 0, NULL}};
            if (weft_cmd_despawn(cmds, e[i]) != WEFT_OK || weft_cmd_spawn(cmds, vals, 4) == 0) {
                weft_iter_fini(&it);
                weft_system_fail(ctx, WEFT_ERR_OUT_OF_MEMORY, "hurt: commands");
                return false;
            }
            sp->born++;
        }
    }
    return true;
}

static void sys_hurt(weft_system_ctx *ctx, void *user)
{
    if (hurt_team(ctx, user, 0)) {
        hurt_team(ctx, user, 1);
    }
}

/* ---- the arena ---- */

static weft_component reg(const char *name, size_t size)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    weft_component c = weft_component_register(g.w, &d);
    if (c == WEFT_COMPONENT_NONE) {
        fail(name);
    }
    return c;
}

static void add(weft_system_desc d, weft_node *out)
{
    *out = weft_schedule_add_system(g.frame, &d);
    if (*out == WEFT_NODE_NONE) {
        fail(d.name);
    }
}

/* Creates the world with `units` units on `threads` threads (1: the
 * calling thread only). 0 on success; the page reads arena_error then. */
ARENA_EXPORT int arena_create(int units, int threads)
{
    memset(&g, 0, sizeof g);
    g.units = units < 2 ? 2 : units;
    g.w = weft_world_create(NULL);
    if (g.w == NULL) {
        fail("weft_world_create");
        return 1;
    }
    g.pos = reg("Position", sizeof(Position));
    g.vel = reg("Velocity", sizeof(Velocity));
    g.health = reg("Health", sizeof(Health));
    g.red = reg("Red", 0);
    g.blue = reg("Blue", 0);
    g.storm = reg("Storm", sizeof(Storm));
    g.spawner = reg("Spawner", sizeof(Spawner));
    Storm storm = {300, 450, 170, 110};
    Spawner sp = {42, 0};
    if (g.failed || weft_resource_insert(g.w, g.storm, &storm, sizeof storm) != WEFT_OK ||
        weft_resource_insert(g.w, g.spawner, &sp, sizeof sp) != WEFT_OK) {
        fail("setup");
        return 1;
    }
    for (int32_t i = 0; i < g.units; i++) {
        Position p;
        Velocity v;
        Health h;
        roll(&sp.rng, &p, &v, &h);
        weft_value vals[] = {{g.pos, sizeof p, &p},
                             {g.vel, sizeof v, &v},
                             {g.health, sizeof h, &h},
                             {i % 2 ? g.blue : g.red, 0, NULL}};
        if (weft_spawn_with(g.w, vals, 4) == 0) {
            fail("weft_spawn_with");
            return 1;
        }
    }
    Spawner *live = weft_resource_get_mut(g.w, g.spawner, sizeof *live);
    if (live == NULL) {
        fail("Spawner");
        return 1;
    }
    live->rng = sp.rng;

    g.frame = weft_schedule_create(g.w, "frame");
    if (g.frame == NULL) {
        fail("weft_schedule_create");
        return 1;
    }
    weft_resource_use storm_w[] = {{g.storm, WEFT_ACCESS_WRITE}};
    weft_resource_use storm_r[] = {{g.storm, WEFT_ACCESS_READ}};
    weft_resource_use hurt_res[] = {{g.storm, WEFT_ACCESS_READ}, {g.spawner, WEFT_ACCESS_WRITE}};
    weft_query_desc q_red = query((const weft_term[]){W(g.vel), R(g.pos), WITH(g.red)}, 3);
    /* Without(Red) on the blue queries makes them provably disjoint from
     * the red ones: steer_red and steer_blue may run at the same time, and
     * hurt may hold both queries */
    weft_query_desc q_blue =
        query((const weft_term[]){W(g.vel), R(g.pos), WITH(g.blue), WITHOUT(g.red)}, 4);
    weft_query_desc q_move = query((const weft_term[]){W(g.pos), W(g.vel)}, 2);
    weft_query_desc q_hurt[] = {
        query((const weft_term[]){W(g.health), R(g.pos), WITH(g.red)}, 3),
        query((const weft_term[]){W(g.health), R(g.pos), WITH(g.blue), WITHOUT(g.red)}, 4)};
    weft_node n_storm, n_red, n_blue, n_move, n_hurt;
    add((weft_system_desc){.name = "storm", .fn = sys_storm, .user = &g, .resources = storm_w,
                           .resource_count = 1},
        &n_storm);
    add((weft_system_desc){.name = "steer_red", .fn = sys_steer_red, .user = &g,
                           .queries = &q_red, .query_count = 1, .resources = storm_r,
                           .resource_count = 1},
        &n_red);
    add((weft_system_desc){.name = "steer_blue", .fn = sys_steer_blue, .user = &g,
                           .queries = &q_blue, .query_count = 1, .resources = storm_r,
                           .resource_count = 1},
        &n_blue);
    add((weft_system_desc){.name = "move", .fn = sys_move, .user = &g, .queries = &q_move,
                           .query_count = 1},
        &n_move);
    add((weft_system_desc){.name = "hurt", .fn = sys_hurt, .user = &g, .queries = q_hurt,
                           .query_count = 2, .resources = hurt_res, .resource_count = 2,
                           .flags = WEFT_SYSTEM_COMMANDS},
        &n_hurt);
    if (g.failed) {
        return 1;
    }
    /* storm, then the two steering systems (side by side), move, hurt */
    if (weft_schedule_add_order(g.frame, n_storm, n_red, 0) != WEFT_OK ||
        weft_schedule_add_order(g.frame, n_storm, n_blue, 0) != WEFT_OK ||
        weft_schedule_add_order(g.frame, n_red, n_move, 0) != WEFT_OK ||
        weft_schedule_add_order(g.frame, n_blue, n_move, 0) != WEFT_OK ||
        weft_schedule_add_order(g.frame, n_move, n_hurt, 0) != WEFT_OK ||
        weft_schedule_build(g.frame) != WEFT_OK) {
        fail("building the schedule");
        return 1;
    }
    if (threads != 1 && weft_world_set_threads(g.w, threads) != WEFT_OK) {
        fail("weft_world_set_threads");
        return 1;
    }
    for (int32_t team = 0; team < 2; team++) {
        weft_query_desc q_draw = query(
            (const weft_term[]){R(g.pos), R(g.health), WITH(team == 0 ? g.red : g.blue)}, 3);
        g.draw[team] = weft_query_create(g.w, &q_draw);
        if (g.draw[team] == NULL) {
            fail("weft_query_create");
            return 1;
        }
    }
    g.hash = weft_world_hash(g.w);
    return 0;
}

/* Runs one frame; returns 0, or 1 after a failure (arena_error). */
ARENA_EXPORT int arena_step(void)
{
    if (g.failed || g.w == NULL) {
        return 1;
    }
    double t0 = now_ms();
    if (weft_schedule_run(g.frame, FRAME_DT) != WEFT_OK) {
        fail("weft_schedule_run");
        return 1;
    }
    g.last_ms = now_ms() - t0;
    g.total_ms += g.last_ms;
    g.frames++;
    g.hash = weft_world_hash(g.w);
    return 0;
}

/* The last frame's world hash as 16 hex digits (static buffer). */
ARENA_EXPORT const char *arena_hash_hex(void)
{
    static char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)g.hash);
    return hex;
}

ARENA_EXPORT double arena_step_ms(void)
{
    return g.last_ms;
}

ARENA_EXPORT int arena_threads(void)
{
    return g.w != NULL ? (int)weft_world_threads(g.w) : 0;
}

ARENA_EXPORT const char *arena_error(void)
{
    return g.w != NULL ? weft_last_error(g.w) : "no world";
}

/* Fills the draw buffer with (x, y, team + health / (max + 1)) per unit,
 * team 0 red and 1 blue; returns the unit count (arena_draw_buffer holds
 * them until the next call). */
ARENA_EXPORT int arena_draw_fill(void)
{
    int32_t need = (int32_t)(weft_query_count(g.w, g.draw[0]) +
                             weft_query_count(g.w, g.draw[1]));
    if (need > g.buf_cap) {
        float *nb = realloc(g.buf, sizeof *nb * 3 * (size_t)need);
        if (nb == NULL) {
            return 0;
        }
        g.buf = nb;
        g.buf_cap = need;
    }
    int32_t k = 0;
    for (int32_t team = 0; team < 2; team++) {
        weft_iter it;
        if (weft_query_iter(g.w, g.draw[team], &it) != WEFT_OK) {
            return 0;
        }
        while (weft_iter_next(&it)) {
            const Position *p = weft_iter_field(&it, 0, sizeof *p);
            const Health *h = weft_iter_field(&it, 1, sizeof *h);
            for (int32_t i = 0, n = weft_iter_count(&it); i < n && k < g.buf_cap; i++, k++) {
                g.buf[3 * k] = p[i].x;
                g.buf[3 * k + 1] = p[i].y;
                g.buf[3 * k + 2] = (float)team + h[i].hp / (h[i].max + 1.0f);
            }
        }
    }
    g.buf_count = k;
    return k;
}

ARENA_EXPORT float *arena_draw_buffer(void)
{
    return g.buf;
}

ARENA_EXPORT void arena_destroy(void)
{
    if (g.w != NULL) {
        weft_world_destroy(g.w);
    }
    free(g.buf);
    memset(&g, 0, sizeof g);
}

static long long arg(int argc, char **argv, int i, long long def, long long lo, long long hi)
{
    if (argc <= i) {
        return def;
    }
    char *end = NULL;
    long long v = strtoll(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "usage: %s [UNITS [FRAMES [THREADS]]]\n", argv[0]);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    int units = (int)arg(argc, argv, 1, 4000, 2, 10000000);
    long long frames = arg(argc, argv, 2, 120, 1, 1000000);
    int threads = (int)arg(argc, argv, 3, 1, -1, 1024);
    if (arena_create(units, threads) != 0) {
        return 1;
    }
    printf("arena: %d units, %d thread(s)\n", units, arena_threads());
    printf("frame 0 hash %s\n", arena_hash_hex());
    for (long long f = 1; f <= frames; f++) {
        if (arena_step() != 0) {
            return 1;
        }
        printf("frame %lld hash %s\n", f, arena_hash_hex());
    }
    if (weft_world_check(g.w) != WEFT_OK) {
        fail("weft_world_check");
        return 1;
    }
    weft_world_stats st;
    const Spawner *sp = weft_resource_get(g.w, g.spawner, sizeof *sp);
    if (weft_world_get_stats(g.w, &st) != WEFT_OK || sp == NULL ||
        st.live_entities != units || arena_draw_fill() != units) {
        fprintf(stderr, "arena: the population drifted\n");
        return 1;
    }
    printf("arena: %lld entities, %lld born; mean frame %.3f ms\n",
           (long long)st.live_entities, (long long)sp->born,
           g.total_ms / (double)g.frames);
    arena_destroy();
    return 0;
}

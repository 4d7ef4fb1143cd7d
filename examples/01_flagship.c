/* examples/01_flagship.c - an arena simulation driven by weft's systems, schedules and app.
 * SPDX-License-Identifier: MIT
 *
 * Usage: weft_example_flagship [UNITS [FRAMES [OUTDIR [THREADS [HASHES]]]]]
 *        defaults: 100000 units, 120 frames, ".", -1 (one worker per CPU);
 *        HASHES: a file to write "frame <n> <weft_world_hash>" to after
 *        every frame (the same in every build and on any thread count)
 *
 * Two teams of units fly around a 1000 x 1000 arena while a storm drifts
 * across it. Every 8th unit leads two drones that orbit it (ChildOf
 * children). Red units flee the storm, blue units chase it; units in the
 * storm take damage (sent as messages), regenerate slowly and age; units
 * that die or grow old are despawned through commands (their drones go with
 * them) and replaced by newcomers, so the population stays stable.
 *
 * Schedules of a weft_app (weft_app_update, 60 frames per simulated second):
 *   FixedUpdate, 120 Hz:   gravity -> movement (parallel chunks)
 *   Update, once a frame:  setup (once) -> clock -> [gameplay] -> [present]
 *     gameplay: hazard, aging, regen, red_steer, blue_steer, orbit,
 *               damage, death, spawner      (only once the Population exists)
 *     present:  propagate -> census -> report (report once a second)
 *
 * Prints the entity count, the mean frame time, how many systems ran at
 * the same time, how many chunk tasks the two par_each systems ran (one per
 * call on one thread; more once rows split across workers), the final
 * state and the world hash (the same for every thread count), and writes the last frame's update run as a Chrome trace (flagship_trace.json:
 * open it in https://ui.perfetto.dev) and the update schedule as Graphviz
 * (flagship_schedule.dot: `dot -Tsvg`). Any failure exits non-zero.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft.h"

/* ---- components, resources and messages (no padding: weft hashes bytes) ---- */

typedef struct Position { float x, y; } Position;
typedef struct Velocity { float x, y; } Velocity;
typedef struct Health { float hp, max; } Health;
typedef struct Age { float t, lifespan; } Age;
typedef struct Unit { int32_t team, drones; } Unit; /* team 0 red, 1 blue */
typedef struct Offset { float x, y; } Offset;       /* a drone's place around its leader */
/* Tags (no value): Alive (units taking part in combat), Red, Blue. */

typedef struct Clock {        /* resource, written by `clock` */
    double t;
    int64_t frame;
    float storm_x, storm_y;
    int32_t new_second, pad_;
} Clock;
typedef struct Population {   /* resource, inserted by `setup` */
    int64_t units, born, died;
} Population;
typedef struct Hud {          /* resource, written by `census` */
    int64_t alive;
    double mean_hp, cx, cy;
} Hud;

typedef struct Damage { weft_entity target; float amount, pad_; } Damage; /* message */
typedef struct Died { int32_t team, drones; } Died;                        /* message */

#define ARENA 1000.0f
#define STORM_RADIUS 90.0f
#define STORM_DPS 60.0f
#define REGEN_PER_S 4.0f
#define FRAME_DT (1.0 / 60.0)
#define FIXED_STEP (1.0 / 120.0)

/* Everything the systems need to know: ids, passed as the `user` pointer. */
typedef struct game {
    weft_component pos, vel, health, age, unit, offset, alive, red, blue, child_of;
    weft_component clock, population, hud;
    weft_message_type damage, died;
    int64_t units; /* population target */
    /* par_each calls and the chunk tasks they ran (on any worker), so a run
     * can show that its parallel systems really split their rows */
    atomic_llong move_calls, move_chunks, age_calls, age_chunks;
} game;

/* What a chunk task gets: the time step and the counter of its system. */
typedef struct chunk_args {
    float dt;
    atomic_llong *chunks;
} chunk_args;

/* ---- error handling: every status is checked ---- */

static weft_world *g_world; /* for error messages only */

static void check(weft_status st, const char *what)
{
    if (st != WEFT_OK) {
        fprintf(stderr, "flagship: %s failed: %s: %s\n", what, weft_status_name(st),
                weft_last_error(g_world));
        exit(1);
    }
}

static void check_handle(uint64_t handle, const char *what)
{
    if (handle == 0) {
        check(weft_last_status(g_world), what);
        check(WEFT_ERR_INTERNAL, what); /* 0 without a recorded error */
    }
}

static void check_ptr(const void *ptr, const char *what)
{
    check_handle(ptr != NULL ? 1u : 0u, what);
}

static void log_to_stderr(void *user, weft_log_level level, weft_status status,
                          const char *message, const char *file, int32_t line)
{
    (void)user;
    (void)level;
    fprintf(stderr, "weft: %s: %s (%s:%d)\n", weft_status_name(status), message,
            file != NULL ? file : "?", (int)line);
}

/* ---- small helpers ---- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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

/* A fresh unit's values. */
static void roll_unit(uint64_t *rng, int32_t team, int32_t drones, Position *p, Velocity *v,
                      Health *h, Age *a, Unit *u)
{
    *p = (Position){rnd(rng, 0, ARENA), rnd(rng, 0, ARENA)};
    *v = (Velocity){rnd(rng, -20, 20), rnd(rng, -20, 20)};
    *h = (Health){rnd(rng, 30, 100), 100};
    *a = (Age){0, rnd(rng, 5, 40)};
    *u = (Unit){team, drones};
}

/* Query terms, spelled like Bevy's Query<(&mut A, &B), With<C>>. */
#define W(c) {.id = (c), .access = WEFT_ACCESS_WRITE}
#define R(c) {.id = (c), .access = WEFT_ACCESS_READ}
#define WITH(c) {.id = (c), .oper = WEFT_OPER_WITH}
#define WITHOUT(c) {.id = (c), .oper = WEFT_OPER_WITHOUT}
#define QUERY(...) \
    make_query((const weft_term[]){__VA_ARGS__}, \
               (int32_t)(sizeof((const weft_term[]){__VA_ARGS__}) / sizeof(weft_term)))

static weft_query_desc make_query(const weft_term *terms, int32_t count)
{
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    memcpy(q.terms, terms, sizeof *terms * (size_t)count);
    q.term_count = count;
    return q;
}

/* Starts a system's query; on failure the run is marked failed. */
static bool sys_iter(weft_system_ctx *ctx, int32_t query, weft_iter *it)
{
    weft_status st = weft_system_iter(ctx, query, it);
    if (st != WEFT_OK) {
        weft_system_fail(ctx, st, weft_system_name(ctx));
    }
    return st == WEFT_OK;
}

static weft_node add_system(weft_schedule *s, const weft_system_desc *desc)
{
    weft_node n = weft_schedule_add_system(s, desc);
    check_handle(n, desc->name);
    return n;
}

/* ======================= fixed_update: physics ======================= */

/* gravity: a pull toward the arena's centre, with drag. */
static void sys_gravity(weft_system_ctx *ctx, void *user)
{
    (void)user;
    float dt = (float)weft_system_delta(ctx);
    weft_iter it;
    if (!sys_iter(ctx, 0, &it)) {
        return;
    }
    while (weft_iter_next(&it)) {
        Velocity *v = weft_iter_field_mut(&it, 0, sizeof *v);
        const Position *p = weft_iter_field(&it, 1, sizeof *p);
        for (int32_t i = 0, n = weft_iter_count(&it); i < n; i++) {
            v[i].x += ((ARENA / 2 - p[i].x) * 0.05f - v[i].x * 0.1f) * dt;
            v[i].y += ((ARENA / 2 - p[i].y) * 0.05f - v[i].y * 0.1f) * dt;
        }
    }
}

/* movement: p += v * dt, wrapped into the arena; chunks run in parallel. */
static float wrap(float x)
{
    return x < 0 ? x + ARENA : x >= ARENA ? x - ARENA : x;
}

static void move_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    const chunk_args *args = user;
    float dt = args->dt;
    atomic_fetch_add_explicit(args->chunks, 1, memory_order_relaxed);
    while (weft_iter_next(it)) {
        Position *p = weft_iter_field_mut(it, 0, sizeof *p);
        const Velocity *v = weft_iter_field(it, 1, sizeof *v);
        for (int32_t i = 0, n = weft_iter_count(it); i < n; i++) {
            p[i].x = wrap(p[i].x + v[i].x * dt);
            p[i].y = wrap(p[i].y + v[i].y * dt);
        }
    }
}

static void sys_movement(weft_system_ctx *ctx, void *user)
{
    game *g = user;
    chunk_args a = {(float)weft_system_delta(ctx), &g->move_chunks};
    atomic_fetch_add_explicit(&g->move_calls, 1, memory_order_relaxed);
    weft_status st = weft_system_par_each(ctx, 0, move_chunk, &a, 4096);
    if (st != WEFT_OK) {
        weft_system_fail(ctx, st, "movement: par_each");
    }
}

/* ======================= update: gameplay ======================= */

/* setup (exclusive, run once): spawns the population with the whole world:
 * one bulk spawn per team, then two drones per leader (every 8th unit). */
static void sys_setup(weft_system_ctx *ctx, void *user)
{
    const game *g = user;
    weft_world *w = weft_system_world(ctx);
    size_t n = (size_t)g->units / 2 + 1;
    Position *p = malloc(sizeof *p * n);
    Velocity *v = malloc(sizeof *v * n);
    Health *h = malloc(sizeof *h * n);
    Age *a = malloc(sizeof *a * n);
    Unit *u = malloc(sizeof *u * n);
    weft_entity *ids = malloc(sizeof *ids * n);
    uint64_t rng = 42;
    for (int32_t team = 0; team < 2 && w != NULL && p && v && h && a && u && ids; team++) {
        int32_t count = 0;
        for (int64_t i = team; i < g->units; i += 2, count++) {
            roll_unit(&rng, team, i % 16 < 2 ? 2 : 0, &p[count], &v[count], &h[count],
                      &a[count], &u[count]);
            a[count].t = rnd(&rng, 0, a[count].lifespan); /* staggered ages */
        }
        weft_value cols[] = {
            {g->pos, sizeof *p, p}, {g->vel, sizeof *v, v}, {g->health, sizeof *h, h},
            {g->age, sizeof *a, a}, {g->unit, sizeof *u, u}, {g->alive, 0, NULL},
            {team == 0 ? g->red : g->blue, 0, NULL},
        };
        check(weft_spawn_bulk(w, cols, 7, count, ids), "setup: weft_spawn_bulk");
        for (int32_t i = 0; i < count; i++) {
            for (int32_t d = 0; d < u[i].drones; d++) {
                Offset off = {d == 0 ? 8.0f : -8.0f, 0};
                weft_value vals[] = {{g->pos, sizeof p[i], &p[i]}, {g->offset, sizeof off, &off}};
                weft_entity drone = weft_spawn_with(w, vals, 2);
                check_handle(drone, "setup: weft_spawn_with");
                check(weft_set_parent(w, drone, ids[i]), "setup: weft_set_parent");
            }
        }
        if (team == 1) {
            Population pop = {g->units, 0, 0};
            check(weft_resource_insert(w, g->population, &pop, sizeof pop), "setup: Population");
        }
    }
    if (!weft_resource_has(w, g->population)) {
        weft_system_fail(ctx, WEFT_ERR_OUT_OF_MEMORY, "setup: no world or out of memory");
    }
    free(p);
    free(v);
    free(h);
    free(a);
    free(u);
    free(ids);
}

/* clock: advances time, moves the storm, flags each new second. */
static void sys_clock(weft_system_ctx *ctx, void *user)
{
    const game *g = user;
    Clock *c = weft_system_resource_mut(ctx, g->clock, sizeof *c);
    double before = c->t;
    c->t += weft_system_delta(ctx);
    c->frame++;
    c->new_second = floor(c->t + 1e-9) != floor(before + 1e-9);
    c->storm_x = (float)(500.0 + 250.0 * cos(c->t * 0.7));
    c->storm_y = (float)(500.0 + 250.0 * sin(c->t * 0.5));
}

static bool in_storm(const Clock *c, Position p, float radius)
{
    float dx = p.x - c->storm_x, dy = p.y - c->storm_y;
    return dx * dx + dy * dy < radius * radius;
}

/* hazard: every unit inside the storm gets a Damage message. */
static void sys_hazard(weft_system_ctx *ctx, void *user)
{
    const game *g = user;
    const Clock *c = weft_system_resource(ctx, g->clock, sizeof *c);
    float amount = STORM_DPS * (float)weft_system_delta(ctx);
    weft_iter it;
    if (!sys_iter(ctx, 0, &it)) {
        return;
    }
    while (weft_iter_next(&it)) {
        const Position *p = weft_iter_field(&it, 0, sizeof *p);
        const weft_entity *e = weft_iter_entities(&it);
        for (int32_t i = 0, n = weft_iter_count(&it); i < n; i++) {
            if (in_storm(c, p[i], STORM_RADIUS)) {
                Damage d = {e[i], amount, 0};
                weft_status st = weft_system_message_write(ctx, g->damage, &d, sizeof d);
                if (st != WEFT_OK) {
                    weft_iter_fini(&it);
                    weft_system_fail(ctx, st, "hazard: message write");
                    return;
                }
            }
        }
    }
}

/* aging: parallel chunks; Age only, With<Alive>. */
static void age_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    const chunk_args *args = user;
    float dt = args->dt;
    atomic_fetch_add_explicit(args->chunks, 1, memory_order_relaxed);
    while (weft_iter_next(it)) {
        Age *a = weft_iter_field_mut(it, 0, sizeof *a);
        for (int32_t i = 0, n = weft_iter_count(it); i < n; i++) {
            a[i].t += dt;
        }
    }
}

static void sys_aging(weft_system_ctx *ctx, void *user)
{
    game *g = user;
    chunk_args a = {(float)weft_system_delta(ctx), &g->age_chunks};
    atomic_fetch_add_explicit(&g->age_calls, 1, memory_order_relaxed);
    weft_status st = weft_system_par_each(ctx, 0, age_chunk, &a, 0);
    if (st != WEFT_OK) {
        weft_system_fail(ctx, st, "aging: par_each");
    }
}

/* regen: Health, With<Alive>. */
static void sys_regen(weft_system_ctx *ctx, void *user)
{
    (void)user;
    float heal = REGEN_PER_S * (float)weft_system_delta(ctx);
    weft_iter it;
    if (!sys_iter(ctx, 0, &it)) {
        return;
    }
    while (weft_iter_next(&it)) {
        Health *h = weft_iter_field_mut(&it, 0, sizeof *h);
        for (int32_t i = 0, n = weft_iter_count(&it); i < n; i++) {
            h[i].hp = h[i].hp + heal < h[i].max ? h[i].hp + heal : h[i].max;
        }
    }
}

/* red_steer / blue_steer: both write Velocity, but With<Red> and
 * With<Blue>, Without<Red> are disjoint, so they may run in parallel.
 * Red units flee the storm, blue units chase it. */
static void steer(weft_system_ctx *ctx, const game *g, float sign)
{
    const Clock *c = weft_system_resource(ctx, g->clock, sizeof *c);
    float k = sign * 30.0f * (float)weft_system_delta(ctx);
    weft_iter it;
    if (!sys_iter(ctx, 0, &it)) {
        return;
    }
    while (weft_iter_next(&it)) {
        Velocity *v = weft_iter_field_mut(&it, 0, sizeof *v);
        const Position *p = weft_iter_field(&it, 1, sizeof *p);
        for (int32_t i = 0, n = weft_iter_count(&it); i < n; i++) {
            if (in_storm(c, p[i], 3 * STORM_RADIUS)) {
                float dx = p[i].x - c->storm_x, dy = p[i].y - c->storm_y;
                float len = sqrtf(dx * dx + dy * dy) + 1e-3f;
                v[i].x += k * dx / len;
                v[i].y += k * dy / len;
            }
        }
    }
}

static void sys_red_steer(weft_system_ctx *ctx, void *user) { steer(ctx, user, 1.0f); }
static void sys_blue_steer(weft_system_ctx *ctx, void *user) { steer(ctx, user, -1.0f); }

/* orbit: drones circle their leader. */
static void sys_orbit(weft_system_ctx *ctx, void *user)
{
    (void)user;
    float ang = 3.0f * (float)weft_system_delta(ctx), cs = cosf(ang), sn = sinf(ang);
    weft_iter it;
    if (!sys_iter(ctx, 0, &it)) {
        return;
    }
    while (weft_iter_next(&it)) {
        Offset *o = weft_iter_field_mut(&it, 0, sizeof *o);
        for (int32_t i = 0, n = weft_iter_count(&it); i < n; i++) {
            o[i] = (Offset){o[i].x * cs - o[i].y * sn, o[i].x * sn + o[i].y * cs};
        }
    }
}

/* damage: applies the Damage messages to Health. */
static void sys_damage(weft_system_ctx *ctx, void *user)
{
    const game *g = user;
    const Damage *d;
    while ((d = weft_system_message_read(ctx, g->damage, sizeof *d)) != NULL) {
        Health *h = weft_system_get_mut(ctx, 0, d->target, 0, sizeof *h);
        if (h != NULL) {
            h->hp -= d->amount;
        }
    }
}

/* death: despawns units out of health or age (drones follow: ChildOf
 * despawns the subtree) through commands, and reports each as a message. */
static void sys_death(weft_system_ctx *ctx, void *user)
{
    const game *g = user;
    weft_commands *cmds = weft_system_commands(ctx);
    Population *pop = weft_system_resource_mut(ctx, g->population, sizeof *pop);
    weft_iter it;
    if (!sys_iter(ctx, 0, &it)) {
        return;
    }
    while (weft_iter_next(&it)) {
        const Health *h = weft_iter_field(&it, 0, sizeof *h);
        const Age *a = weft_iter_field(&it, 1, sizeof *a);
        const Unit *u = weft_iter_field(&it, 2, sizeof *u);
        const weft_entity *e = weft_iter_entities(&it);
        for (int32_t i = 0, n = weft_iter_count(&it); i < n; i++) {
            if (h[i].hp > 0 && a[i].t < a[i].lifespan) {
                continue;
            }
            Died msg = {u[i].team, u[i].drones};
            weft_status st = weft_cmd_despawn(cmds, e[i]);
            if (st == WEFT_OK) {
                st = weft_system_message_write(ctx, g->died, &msg, sizeof msg);
            }
            if (st != WEFT_OK) {
                weft_iter_fini(&it);
                weft_system_fail(ctx, st, "death");
                return;
            }
            pop->units--, pop->died++;
        }
    }
}

/* spawner: replaces each dead unit (and its drones) through commands; the
 * drones name their leader's provisional id in their ChildOf value. */
static void spawner_init(void *local, void *user)
{
    (void)user;
    *(uint64_t *)local = 7; /* the RNG state lives in the system's local */
}

static void sys_spawner(weft_system_ctx *ctx, void *user)
{
    const game *g = user;
    uint64_t *rng = weft_system_local(ctx);
    weft_commands *cmds = weft_system_commands(ctx);
    Population *pop = weft_system_resource_mut(ctx, g->population, sizeof *pop);
    const Died *d;
    while ((d = weft_system_message_read(ctx, g->died, sizeof *d)) != NULL) {
        Position p;
        Velocity v;
        Health h;
        Age a;
        Unit u;
        roll_unit(rng, d->team, d->drones, &p, &v, &h, &a, &u);
        weft_value vals[] = {
            {g->pos, sizeof p, &p}, {g->vel, sizeof v, &v}, {g->health, sizeof h, &h},
            {g->age, sizeof a, &a}, {g->unit, sizeof u, &u}, {g->alive, 0, NULL},
            {d->team == 0 ? g->red : g->blue, 0, NULL},
        };
        weft_entity leader = weft_cmd_spawn(cmds, vals, 7);
        for (int32_t i = 0; i < d->drones && leader != 0; i++) {
            Offset off = {i == 0 ? 8.0f : -8.0f, 0};
            weft_value dv[] = {{g->pos, sizeof p, &p}, {g->offset, sizeof off, &off},
                               {g->child_of, sizeof leader, &leader}};
            if (weft_cmd_spawn(cmds, dv, 3) == 0) {
                leader = 0;
            }
        }
        if (leader == 0) {
            weft_system_fail(ctx, WEFT_ERR_INTERNAL, "spawner: weft_cmd_spawn returned 0");
            return;
        }
        pop->units++, pop->born++;
    }
}

/* ======================= update: present ======================= */

/* propagate: a drone's Position = its leader's Position + its Offset.
 * Query 0 writes Position of ChildOf entities, query 1 reads Position of
 * entities Without<ChildOf>: disjoint, so one system may hold both. */
static void sys_propagate(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    if (!sys_iter(ctx, 0, &it)) {
        return;
    }
    while (weft_iter_next(&it)) {
        Position *p = weft_iter_field_mut(&it, 0, sizeof *p);
        const Offset *o = weft_iter_field(&it, 1, sizeof *o);
        const weft_entity *parent = weft_iter_field(&it, 2, sizeof *parent);
        for (int32_t i = 0, n = weft_iter_count(&it); i < n; i++) {
            const Position *pp = weft_system_get(ctx, 1, parent[i], 0, sizeof *pp);
            if (pp != NULL) {
                p[i] = (Position){pp->x + o[i].x, pp->y + o[i].y};
            }
        }
    }
}

/* census: the "renderer": reads every unit's Position and Health. */
static void sys_census(weft_system_ctx *ctx, void *user)
{
    const game *g = user;
    Hud *hud = weft_system_resource_mut(ctx, g->hud, sizeof *hud);
    int64_t n_all = 0;
    double hp = 0, x = 0, y = 0;
    weft_iter it;
    if (!sys_iter(ctx, 0, &it)) {
        return;
    }
    while (weft_iter_next(&it)) {
        const Position *p = weft_iter_field(&it, 0, sizeof *p);
        const Health *h = weft_iter_field(&it, 1, sizeof *h);
        for (int32_t i = 0, n = weft_iter_count(&it); i < n; i++) {
            hp += (double)h[i].hp, x += (double)p[i].x, y += (double)p[i].y;
        }
        n_all += weft_iter_count(&it);
    }
    double div = n_all > 0 ? (double)n_all : 1.0;
    hud->alive = n_all;
    hud->mean_hp = hp / div, hud->cx = x / div, hud->cy = y / div;
}

/* report: prints a line once per simulated second (main thread). */
static bool every_second(weft_system_ctx *ctx, void *user)
{
    const game *g = user;
    const Clock *c = weft_system_resource(ctx, g->clock, sizeof *c);
    return c->new_second != 0;
}

static void sys_report(weft_system_ctx *ctx, void *user)
{
    const game *g = user;
    const Clock *c = weft_system_resource(ctx, g->clock, sizeof *c);
    const Hud *hud = weft_system_resource(ctx, g->hud, sizeof *hud);
    const Population *pop = weft_system_resource(ctx, g->population, sizeof *pop);
    printf("  t=%4.1fs  units %lld (born %lld, died %lld)  mean hp %5.1f  "
           "centre (%5.1f, %5.1f)\n",
           c->t, (long long)hud->alive, (long long)pop->born, (long long)pop->died,
           hud->mean_hp, hud->cx, hud->cy);
}

/* ======================= building the schedules ======================= */

static void build_fixed(weft_schedule *s, game *g)
{
    weft_query_desc grav = QUERY(W(g->vel), R(g->pos));
    weft_query_desc move = QUERY(W(g->pos), R(g->vel));
    weft_node gravity = add_system(s, &(weft_system_desc){
        .name = "gravity", .fn = sys_gravity, .user = g, .queries = &grav, .query_count = 1});
    weft_node movement = add_system(s, &(weft_system_desc){
        .name = "movement", .fn = sys_movement, .user = g, .queries = &move, .query_count = 1});
    check(weft_schedule_add_order(s, gravity, movement, 0), "order gravity -> movement");
}

static void build_update(weft_schedule *s, game *g)
{
    weft_resource_use clock_w[] = {{g->clock, WEFT_ACCESS_WRITE}};
    weft_resource_use clock_r[] = {{g->clock, WEFT_ACCESS_READ}};
    weft_resource_use pop_w[] = {{g->population, WEFT_ACCESS_WRITE}};
    weft_resource_use hud_w[] = {{g->hud, WEFT_ACCESS_WRITE}};
    weft_resource_use report_r[] = {{g->clock, WEFT_ACCESS_READ},
                                    {g->hud, WEFT_ACCESS_READ},
                                    {g->population, WEFT_ACCESS_READ}};
    weft_message_use damage_w[] = {{g->damage, WEFT_ACCESS_WRITE}};
    weft_message_use damage_r[] = {{g->damage, WEFT_ACCESS_READ}};
    weft_message_use died_w[] = {{g->died, WEFT_ACCESS_WRITE}};
    weft_message_use died_r[] = {{g->died, WEFT_ACCESS_READ}};

    weft_query_desc q_hazard = QUERY(R(g->pos), WITH(g->alive));
    weft_query_desc q_aging = QUERY(W(g->age), WITH(g->alive));
    weft_query_desc q_health = QUERY(W(g->health), WITH(g->alive));
    weft_query_desc q_red = QUERY(W(g->vel), R(g->pos), WITH(g->red));
    weft_query_desc q_blue = QUERY(W(g->vel), R(g->pos), WITH(g->blue), WITHOUT(g->red));
    weft_query_desc q_orbit = QUERY(W(g->offset));
    weft_query_desc q_death = QUERY(R(g->health), R(g->age), R(g->unit), WITH(g->alive));
    weft_query_desc q_prop[] = {QUERY(W(g->pos), R(g->offset), R(g->child_of)),
                                QUERY(R(g->pos), WITHOUT(g->child_of))};
    weft_query_desc q_census = QUERY(R(g->pos), R(g->health), WITH(g->alive));

    weft_node setup = add_system(s, &(weft_system_desc){
        .name = "setup", .fn = sys_setup, .user = g, .flags = WEFT_SYSTEM_EXCLUSIVE});
    weft_node clock = add_system(s, &(weft_system_desc){
        .name = "clock", .fn = sys_clock, .user = g, .resources = clock_w, .resource_count = 1});
    weft_node hazard = add_system(s, &(weft_system_desc){
        .name = "hazard", .fn = sys_hazard, .user = g, .queries = &q_hazard, .query_count = 1,
        .resources = clock_r, .resource_count = 1, .messages = damage_w, .message_count = 1});
    weft_node aging = add_system(s, &(weft_system_desc){
        .name = "aging", .fn = sys_aging, .user = g, .queries = &q_aging, .query_count = 1});
    weft_node regen = add_system(s, &(weft_system_desc){
        .name = "regen", .fn = sys_regen, .user = g, .queries = &q_health, .query_count = 1});
    weft_node red = add_system(s, &(weft_system_desc){
        .name = "red_steer", .fn = sys_red_steer, .user = g, .queries = &q_red,
        .query_count = 1, .resources = clock_r, .resource_count = 1});
    weft_node blue = add_system(s, &(weft_system_desc){
        .name = "blue_steer", .fn = sys_blue_steer, .user = g, .queries = &q_blue,
        .query_count = 1, .resources = clock_r, .resource_count = 1});
    weft_node orbit = add_system(s, &(weft_system_desc){
        .name = "orbit", .fn = sys_orbit, .user = g, .queries = &q_orbit, .query_count = 1});
    weft_node damage = add_system(s, &(weft_system_desc){
        .name = "damage", .fn = sys_damage, .user = g, .queries = &q_health, .query_count = 1,
        .messages = damage_r, .message_count = 1});
    weft_node death = add_system(s, &(weft_system_desc){
        .name = "death", .fn = sys_death, .user = g, .queries = &q_death, .query_count = 1,
        .resources = pop_w, .resource_count = 1, .messages = died_w, .message_count = 1,
        .flags = WEFT_SYSTEM_COMMANDS});
    weft_node spawner = add_system(s, &(weft_system_desc){
        .name = "spawner", .fn = sys_spawner, .user = g, .resources = pop_w,
        .resource_count = 1, .messages = died_r, .message_count = 1,
        .flags = WEFT_SYSTEM_COMMANDS,
        .local = {.size = sizeof(uint64_t), .init = spawner_init}});
    weft_node propagate = add_system(s, &(weft_system_desc){
        .name = "propagate", .fn = sys_propagate, .user = g, .queries = q_prop,
        .query_count = 2});
    weft_node census = add_system(s, &(weft_system_desc){
        .name = "census", .fn = sys_census, .user = g, .queries = &q_census,
        .query_count = 1, .resources = hud_w, .resource_count = 1});
    weft_node report = add_system(s, &(weft_system_desc){
        .name = "report", .fn = sys_report, .user = g, .resources = report_r,
        .resource_count = 3, .flags = WEFT_SYSTEM_MAIN_THREAD});

    /* Sets: gameplay runs only once setup has inserted the Population. */
    weft_node gameplay = weft_schedule_ensure_set(s, "gameplay");
    weft_node present = weft_schedule_ensure_set(s, "present");
    check_handle(gameplay, "weft_schedule_ensure_set");
    check_handle(present, "weft_schedule_ensure_set");
    weft_node members[] = {hazard, aging, regen, red, blue, orbit, damage, death, spawner};
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
        check(weft_schedule_add_to_set(s, members[i], gameplay), "in_set gameplay");
    }
    weft_node shown[] = {propagate, census, report};
    for (size_t i = 0; i < 3; i++) {
        check(weft_schedule_add_to_set(s, shown[i], present), "in_set present");
    }

    /* Order: only what must be ordered; everything else may overlap. */
    weft_node top[] = {setup, clock, gameplay, present};
    check(weft_schedule_add_chain(s, top, 4, 0), "chain setup -> clock -> gameplay -> present");
    check(weft_schedule_add_chain(s, shown, 3, 0), "chain propagate -> census -> report");
    weft_node edges[][2] = {{hazard, damage}, {regen, damage}, {damage, death},
                            {aging, death},   {death, spawner}};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        check(weft_schedule_add_order(s, edges[i][0], edges[i][1], 0), "weft_schedule_add_order");
    }

    /* Run conditions. */
    weft_condition *once = weft_condition_run_once(s);
    weft_condition *has_pop = weft_condition_resource_exists(s, g->population);
    weft_condition *deaths = weft_condition_on_message(s, g->died);
    weft_condition *second = weft_condition_create(s, &(weft_condition_desc){
        .name = "every_second", .fn = every_second, .user = g, .resources = clock_r,
        .resource_count = 1});
    check_ptr(once, "weft_condition_run_once");
    check_ptr(has_pop, "weft_condition_resource_exists");
    check_ptr(deaths, "weft_condition_on_message");
    check_ptr(second, "weft_condition_create");
    check(weft_schedule_add_condition(s, setup, once), "run_if setup");
    check(weft_schedule_add_condition(s, gameplay, has_pop), "run_if gameplay");
    check(weft_schedule_add_condition(s, spawner, deaths), "run_if spawner");
    check(weft_schedule_add_condition(s, report, second), "run_if report");
    /* A set's conditions count as reads of its members, so red_steer,
     * blue_steer and orbit "read" Population, which death and spawner
     * write. Harmless (existence is checked before any member runs):
     * keep it out of the ambiguity report. */
    check(weft_schedule_add_ambiguous_component(s, g->population), "ignore_ambiguity");
}

/* ======================= main ======================= */

static weft_component reg(weft_world *w, const char *name, size_t size)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    weft_component c = weft_component_register(w, &d);
    check_handle(c, name);
    return c;
}

static weft_message_type reg_message(weft_world *w, const char *name, size_t size)
{
    weft_message_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    weft_message_type t = weft_message_register(w, &d);
    check_handle(t, name);
    return t;
}

/* Writes the text that fn produces (sized by a first call) to dir/name. */
static void write_export(const weft_schedule *s, size_t (*fn)(const weft_schedule *, char *, size_t),
                         const char *dir, const char *name)
{
    size_t len = fn(s, NULL, 0);
    char *buf = malloc(len + 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (len == 0 || buf == NULL || f == NULL || fn(s, buf, len + 1) != len ||
        fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "flagship: could not write %s\n", path);
        exit(1);
    }
    free(buf);
    printf("wrote %s (%zu bytes)\n", path, len);
}

static long long arg(int argc, char **argv, int i, long long def, long long lo, long long hi)
{
    if (argc <= i) {
        return def;
    }
    char *end = NULL;
    long long v = strtoll(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "usage: %s [UNITS [FRAMES [OUTDIR [THREADS [HASHES]]]]]\n", argv[0]);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    game g;
    memset(&g, 0, sizeof g);
    atomic_init(&g.move_calls, 0);
    atomic_init(&g.move_chunks, 0);
    atomic_init(&g.age_calls, 0);
    atomic_init(&g.age_chunks, 0);
    g.units = arg(argc, argv, 1, 100000, 16, 50000000);
    int64_t frames = arg(argc, argv, 2, 120, 1, 1000000);
    const char *outdir = argc > 3 ? argv[3] : ".";
    int32_t threads = (int32_t)arg(argc, argv, 4, -1, -1, 1024);
    FILE *hashes = NULL;
    if (argc > 5) {
        hashes = fopen(argv[5], "w");
        if (hashes == NULL) {
            fprintf(stderr, "flagship: cannot write %s\n", argv[5]);
            return 1;
        }
    }

    /* the app creates and owns the world; physics runs at 120 Hz, twice
     * per 1/60 s frame, before Update */
    weft_app_desc ad;
    memset(&ad, 0, sizeof ad);
    ad.world_desc.logger.fn = log_to_stderr;
    ad.fixed_step = FIXED_STEP;
    weft_app *app = weft_app_create(&ad);
    if (app == NULL) {
        fprintf(stderr, "flagship: weft_app_create failed\n");
        return 1;
    }
    weft_world *w = g_world = weft_app_world(app);
    g.pos = reg(w, "Position", sizeof(Position));
    g.vel = reg(w, "Velocity", sizeof(Velocity));
    g.health = reg(w, "Health", sizeof(Health));
    g.age = reg(w, "Age", sizeof(Age));
    g.unit = reg(w, "Unit", sizeof(Unit));
    g.offset = reg(w, "Offset", sizeof(Offset));
    g.alive = reg(w, "Alive", 0);
    g.red = reg(w, "Red", 0);
    g.blue = reg(w, "Blue", 0);
    g.child_of = weft_child_of(w);
    check_handle(g.child_of, "weft_child_of");
    g.clock = reg(w, "Clock", sizeof(Clock));
    g.population = reg(w, "Population", sizeof(Population));
    g.hud = reg(w, "Hud", sizeof(Hud));
    g.damage = reg_message(w, "Damage", sizeof(Damage));
    g.died = reg_message(w, "Died", sizeof(Died));
    check(weft_resource_insert(w, g.clock, NULL, sizeof(Clock)), "insert Clock");
    check(weft_resource_insert(w, g.hud, NULL, sizeof(Hud)), "insert Hud");

    weft_schedule *update = weft_app_schedule(app, WEFT_APP_UPDATE);
    weft_schedule *fixed = weft_app_schedule(app, WEFT_APP_FIXED_UPDATE);
    check_ptr(update, "weft_app_schedule(Update)");
    check_ptr(fixed, "weft_app_schedule(FixedUpdate)");
    build_fixed(fixed, &g);
    build_update(update, &g);
    check(weft_schedule_build(update), "build update");
    check(weft_schedule_build(fixed), "build fixed_update");

    check(weft_world_set_threads(w, threads), "weft_world_set_threads");

    printf("weft %d.%d.%d flagship: %lld units, %lld frames, %d threads\n", WEFT_VERSION_MAJOR,
           WEFT_VERSION_MINOR, WEFT_VERSION_PATCH, (long long)g.units, (long long)frames,
           (int)weft_world_threads(w));
    uint64_t first_ns = 0, rest_ns = 0;
    uint64_t runs_before[64] = {0}; /* per update system, to spot the last frame's */
    for (int64_t f = 0; f < frames; f++) {
        if (f == frames - 1) { /* profile the last frame: stats, trace */
            check(weft_schedule_set_profiling(update, true), "profiling");
            check(weft_schedule_set_profiling(fixed, true), "profiling");
            for (weft_node n = 1; n <= (weft_node)weft_schedule_node_count(update) && n < 64; n++) {
                weft_system_stats ss;
                if (weft_schedule_system_stats(update, n, &ss) == WEFT_OK) {
                    runs_before[n] = ss.runs;
                }
            }
        }
        uint64_t t0 = now_ns();
        check(weft_app_update(app, FRAME_DT), "weft_app_update");
        if (f == 0) {
            first_ns = now_ns() - t0;
        } else {
            rest_ns += now_ns() - t0;
        }
        if (hashes) {
            fprintf(hashes, "frame %lld %016llx\n", (long long)f,
                    (unsigned long long)weft_world_hash(w));
        }
    }
    if (hashes && fclose(hashes) != 0) {
        fprintf(stderr, "flagship: writing %s failed\n", argv[5]);
        return 1;
    }

    /* Results and checks: the population must be exactly stable. */
    weft_world_stats st;
    check(weft_world_get_stats(w, &st), "weft_world_get_stats");
    const Population *pop = weft_resource_get(w, g.population, sizeof *pop);
    int64_t drones = 2 * ((g.units + 15) / 16 + (g.units + 14) / 16);
    if (pop == NULL || pop->units != g.units || st.live_entities != g.units + drones) {
        fprintf(stderr, "flagship: population drifted: %lld live, expected %lld\n",
                (long long)st.live_entities, (long long)(g.units + drones));
        return 1;
    }
    check(weft_world_check(w), "weft_world_check");
    const Hud *hud = weft_resource_get(w, g.hud, sizeof *hud);
    check_ptr(hud, "Hud");
    printf("entities: %lld (%lld units + %lld drones); born %lld, died %lld\n",
           (long long)st.live_entities, (long long)g.units, (long long)drones,
           (long long)pop->born, (long long)pop->died);
    printf("final state: mean hp %.6f, centre (%.6f, %.6f)\n", hud->mean_hp, hud->cx, hud->cy);
    printf("frames: %lld; first (with setup) %.2f ms, mean of the rest %.3f ms\n",
           (long long)frames, (double)first_ns * 1e-6,
           frames > 1 ? (double)rest_ns * 1e-6 / (double)(frames - 1) : 0.0);
    printf("systems: %d update + %d fixed_update, %d sync points, %d ambiguities\n",
           (int)weft_schedule_node_count(update), (int)weft_schedule_node_count(fixed),
           (int)weft_schedule_sync_count(update), (int)weft_schedule_ambiguity_count(update));
    for (int32_t i = 0; i < weft_schedule_ambiguity_count(update); i++) {
        weft_ambiguity amb;
        check(weft_schedule_ambiguity(update, i, &amb), "weft_schedule_ambiguity");
        printf("  ambiguous: %s / %s\n", weft_schedule_node_name(update, amb.a),
               weft_schedule_node_name(update, amb.b));
    }
    printf("ran concurrently (last frame): at most %d systems in update, %d in fixed_update, "
           "on %d threads\n",
           (int)weft_schedule_max_concurrency(update), (int)weft_schedule_max_concurrency(fixed),
           (int)weft_world_threads(w));
    printf("last frame, ms per update system that ran:");
    for (weft_node n = 1; n <= (weft_node)weft_schedule_node_count(update) && n < 64; n++) {
        weft_system_stats ss;
        if (weft_schedule_system_stats(update, n, &ss) == WEFT_OK && ss.runs > runs_before[n]) {
            printf(" %s %.2f", weft_schedule_node_name(update, n), (double)ss.last_ns * 1e-6);
        }
    }
    printf("\npar_each (whole run): movement %lld calls, %lld chunk tasks; "
           "aging %lld calls, %lld chunk tasks\n",
           (long long)atomic_load(&g.move_calls), (long long)atomic_load(&g.move_chunks),
           (long long)atomic_load(&g.age_calls), (long long)atomic_load(&g.age_chunks));
    printf("world hash: %016llx\n", (unsigned long long)weft_world_hash(w));
    write_export(update, weft_schedule_trace_json, outdir, "flagship_trace.json");
    write_export(update, weft_schedule_dot, outdir, "flagship_schedule.dot");

    check(weft_app_destroy(app), "weft_app_destroy"); /* and its world */
    printf("flagship: OK\n");
    return 0;
}

// tests/sched/test_sched_determinism.c - a small game-shaped simulation
// (22k entities, squads with ChildOf children, players shooting bullets,
// damage messages, spawns and despawns through commands - also from inside
// weft_system_par_each - an exclusive system, run conditions and a fixed
// step) run for 30 updates of a weft_app on 1, 2, 4 and 8 threads, a
// fresh world each time: weft_world_hash must be identical after every frame
// (weft_schedule_run in weft.h: "the world after a run
// does not depend on the thread count").
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
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

#include "weft.h"

#define FRAMES 30
#define SQUADS 2000
#define SQUAD_KIDS 4
#define LOOSE 12000
#define PLAYERS 64
#define WORLD_SIZE 4096

typedef struct ivec {
    int32_t x, y;
} ivec;

typedef struct damage_msg {
    weft_entity target;
    int32_t amount;
    int32_t pad; // zeroed
} damage_msg;

typedef struct score {
    int64_t kills;
    int64_t spawned;
    int64_t health_sum;
    int64_t frames;
} score;

typedef struct sim {
    weft_app *app;
    weft_world *w;
    weft_component pos, vel, health, age, offset;
    weft_component enemy, player, bullet, squad, child_of;
    weft_component score_res, frame_res;
    weft_message_type damage;
    weft_schedule *update, *late, *fixed;
    weft_entity *targets; // initial enemies (read-only once running)
    int32_t ntargets;
    atomic_int bad;       // checks that failed on any thread
    atomic_llong health_acc;
    char first_bad[128];
} sim;

static void bad(sim *s, const char *what)
{
    if (atomic_fetch_add(&s->bad, 1) == 0) {
        snprintf(s->first_bad, sizeof s->first_bad, "%s", what);
    }
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int32_t wrap(int32_t v)
{
    v %= WORLD_SIZE;
    return v < 0 ? v + WORLD_SIZE : v;
}

// A deadlocked run fails after WATCHDOG_S seconds without finishing a frame
// instead of hanging until ctest's timeout (the alarm is re-armed at every
// frame, so a slow but progressing run under a sanitizer on a loaded
// machine is not taken for a deadlock); g_watch_* say where.
#define WATCHDOG_S 240
static volatile int g_watch_threads = -1, g_watch_frame = -1;

static void on_alarm(int sig)
{
    (void)sig;
    char buf[200];
    int n = snprintf(buf, sizeof buf,
                     "WATCHDOG: no progress within %d s (%d threads, frame %d): deadlock?\n",
                     WATCHDOG_S, g_watch_threads, g_watch_frame);
    if (n > 0) {
        (void)!write(2, buf, (size_t)n);
    }
    _exit(1);
}

// ---- descriptor helpers ----

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
    weft_resource_use r[4];
    weft_message_use m[2];
    int nq, nr, nm;
} sysb;

static weft_query_desc *sb_init(sysb *b, const char *name, weft_system_fn fn, void *user,
                                uint32_t flags)
{
    memset(b, 0, sizeof *b);
    b->d.name = name;
    b->d.fn = fn;
    b->d.user = user;
    b->d.flags = flags;
    return &b->q[b->nq++];
}

static weft_query_desc *sb_query(sysb *b)
{
    return &b->q[b->nq++];
}

static void sb_res(sysb *b, weft_component r, weft_access a)
{
    b->r[b->nr++] = (weft_resource_use){r, a};
}

static void sb_msg(sysb *b, weft_message_type t, weft_access a)
{
    b->m[b->nm++] = (weft_message_use){t, a};
}

static weft_node sb_add(weft_world *w, weft_schedule *s, sysb *b)
{
    b->d.queries = b->nq ? b->q : NULL;
    b->d.query_count = b->nq;
    b->d.resources = b->nr ? b->r : NULL;
    b->d.resource_count = b->nr;
    b->d.messages = b->nm ? b->m : NULL;
    b->d.message_count = b->nm;
    weft_node n = weft_schedule_add_system(s, &b->d);
    if (n == WEFT_NODE_NONE) {
        fail_msg("weft_schedule_add_system(%s): %s: %s", b->d.name,
                 weft_status_name(weft_last_status(w)), weft_last_error(w));
    }
    return n;
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

// ---- systems ----

// Exclusive: advances the frame counter; every 10th frame despawns the first
// squad (and, through ChildOf, its children) directly.
static void sys_tick(weft_system_ctx *ctx, void *user)
{
    sim *s = user;
    uint32_t *f = weft_system_resource_mut(ctx, s->frame_res, sizeof *f);
    weft_world *w = weft_system_world(ctx);
    if (f == NULL || w == NULL) {
        bad(s, "tick: no frame resource or world");
        return;
    }
    (*f)++;
    if (*f % 10 == 0) {
        weft_iter it;
        weft_entity victim = 0;
        if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
            bad(s, "tick: iter");
            return;
        }
        if (weft_iter_next(&it)) {
            victim = weft_iter_entities(&it)[0];
            weft_iter_fini(&it);
        }
        if (victim && weft_despawn(w, victim) != WEFT_OK) {
            bad(s, "tick: despawn");
        }
    }
}

static void chunk_move(weft_iter *it, weft_commands *cmds, void *user)
{
    sim *s = user;
    (void)cmds;
    while (weft_iter_next(it)) {
        ivec *p = weft_iter_field_mut(it, 0, sizeof(ivec));
        const ivec *v = weft_iter_field(it, 1, sizeof(ivec));
        if (!p || !v) {
            bad(s, "move: fields");
            return;
        }
        for (int32_t i = 0; i < weft_iter_count(it); i++) {
            p[i].x = wrap(p[i].x + v[i].x);
            p[i].y = wrap(p[i].y + v[i].y);
        }
    }
}

static void sys_move(weft_system_ctx *ctx, void *user)
{
    if (weft_system_par_each(ctx, 0, chunk_move, user, 256) != WEFT_OK) {
        bad(user, "move: par_each");
    }
}

// Children follow their squad: pos = parent pos + offset.
static void sys_follow(weft_system_ctx *ctx, void *user)
{
    sim *s = user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        bad(s, "follow: iter");
        return;
    }
    while (weft_iter_next(&it)) {
        ivec *p = weft_iter_field_mut(&it, 0, sizeof(ivec));
        const ivec *off = weft_iter_field(&it, 1, sizeof(ivec));
        const weft_entity *parent = weft_iter_field(&it, 2, sizeof(weft_entity));
        if (!p || !off || !parent) {
            bad(s, "follow: fields");
            weft_iter_fini(&it);
            return;
        }
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            const ivec *pp = weft_system_get(ctx, 1, parent[i], 0, sizeof(ivec));
            if (pp) {
                p[i].x = wrap(pp->x + off[i].x);
                p[i].y = wrap(pp->y + off[i].y);
            }
        }
    }
}

static void chunk_age_bullets(weft_iter *it, weft_commands *cmds, void *user)
{
    sim *s = user;
    while (weft_iter_next(it)) {
        uint32_t *age = weft_iter_field_mut(it, 0, sizeof(uint32_t));
        const weft_entity *es = weft_iter_entities(it);
        if (!age || !es) {
            bad(s, "age_bullets: fields");
            return;
        }
        for (int32_t i = 0; i < weft_iter_count(it); i++) {
            if (++age[i] > 20 && weft_cmd_try_despawn(cmds, es[i]) != WEFT_OK) {
                bad(s, "age_bullets: despawn");
            }
        }
    }
}

static void sys_age_bullets(weft_system_ctx *ctx, void *user)
{
    if (weft_system_par_each(ctx, 0, chunk_age_bullets, user, 64) != WEFT_OK) {
        bad(user, "age_bullets: par_each");
    }
}

// Loose enemies age: some change course (insert replaces Vel), some die,
// some spawn a newcomer - all through the chunk's command buffer.
static void chunk_age_enemies(weft_iter *it, weft_commands *cmds, void *user)
{
    sim *s = user;
    while (weft_iter_next(it)) {
        uint32_t *age = weft_iter_field_mut(it, 0, sizeof(uint32_t));
        const ivec *pos = weft_iter_field(it, 1, sizeof(ivec));
        const weft_entity *es = weft_iter_entities(it);
        if (!age || !pos || !es) {
            bad(s, "age_enemies: fields");
            return;
        }
        for (int32_t i = 0; i < weft_iter_count(it); i++) {
            uint32_t a = ++age[i];
            uint32_t idx = weft_entity_index(es[i]);
            if (a % 16 == idx % 16) {
                uint64_t r = mix(((uint64_t)idx << 32) | a);
                ivec nv = {(int32_t)(r % 9) - 4, (int32_t)((r >> 8) % 9) - 4};
                if (weft_cmd_try_insert(cmds, es[i], s->vel, &nv, sizeof nv) != WEFT_OK) {
                    bad(s, "age_enemies: insert");
                }
            }
            if (a == 25 && idx % 50 == 0 && weft_cmd_try_despawn(cmds, es[i]) != WEFT_OK) {
                bad(s, "age_enemies: despawn");
            }
            if (a % 10 == 0 && idx % 200 == 7) {
                ivec np = pos[i], nv = {1, -1};
                int32_t hp = 30;
                uint32_t na = 0;
                weft_value vals[5] = {{s->enemy, 0, NULL},
                                      {s->pos, sizeof np, &np},
                                      {s->vel, sizeof nv, &nv},
                                      {s->health, sizeof hp, &hp},
                                      {s->age, sizeof na, &na}};
                if (weft_cmd_spawn(cmds, vals, 5) == 0) {
                    bad(s, "age_enemies: spawn");
                }
            }
        }
    }
}

static void sys_age_enemies(weft_system_ctx *ctx, void *user)
{
    if (weft_system_par_each(ctx, 0, chunk_age_enemies, user, 512) != WEFT_OK) {
        bad(user, "age_enemies: par_each");
    }
}

// Players shoot (run condition: every 3rd frame).
static void sys_shoot(weft_system_ctx *ctx, void *user)
{
    sim *s = user;
    weft_commands *cmds = weft_system_commands(ctx);
    weft_iter it;
    if (!cmds || weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        bad(s, "shoot: iter");
        return;
    }
    while (weft_iter_next(&it)) {
        const ivec *p = weft_iter_field(&it, 0, sizeof(ivec));
        const weft_entity *es = weft_iter_entities(&it);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            uint64_t r = mix(es[i] ^ ((uint64_t)p[i].x << 20));
            ivec v = {(int32_t)(r % 31) - 15, (int32_t)((r >> 10) % 31) - 15};
            uint32_t age = 0;
            weft_value vals[4] = {{s->bullet, 0, NULL},
                                  {s->pos, sizeof(ivec), &p[i]},
                                  {s->vel, sizeof v, &v},
                                  {s->age, sizeof age, &age}};
            if (weft_cmd_spawn(cmds, vals, 4) == 0) {
                bad(s, "shoot: spawn");
            }
        }
    }
}

// Bullets pick a target among the initial enemies and send damage.
static void sys_collide(weft_system_ctx *ctx, void *user)
{
    sim *s = user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        bad(s, "collide: iter");
        return;
    }
    while (weft_iter_next(&it)) {
        const ivec *p = weft_iter_field(&it, 0, sizeof(ivec));
        const uint32_t *age = weft_iter_field(&it, 1, sizeof(uint32_t));
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            if (age[i] % 5 != 4) {
                continue;
            }
            uint64_t r = mix(((uint64_t)(uint32_t)p[i].x << 32) | (uint32_t)p[i].y);
            weft_entity t = s->targets[r % (uint64_t)s->ntargets];
            if (weft_system_get(ctx, 1, t, 0, sizeof(int32_t)) != NULL) {
                damage_msg m = {t, 7 + (int32_t)(age[i] % 3), 0};
                if (weft_system_message_write(ctx, s->damage, &m, sizeof m) != WEFT_OK) {
                    bad(s, "collide: message");
                }
            }
        }
    }
}

// Applies damage messages; the dead are despawned through commands.
static void sys_damage(weft_system_ctx *ctx, void *user)
{
    sim *s = user;
    weft_commands *cmds = weft_system_commands(ctx);
    score *sc = weft_system_resource_mut(ctx, s->score_res, sizeof *sc);
    if (!cmds || !sc) {
        bad(s, "damage: commands/score");
        return;
    }
    const damage_msg *m;
    while ((m = weft_system_message_read(ctx, s->damage, sizeof *m)) != NULL) {
        int32_t *h = weft_system_get_mut(ctx, 0, m->target, 0, sizeof(int32_t));
        if (h && *h > 0) {
            *h -= m->amount;
            if (*h <= 0) {
                sc->kills++;
                if (weft_cmd_try_despawn(cmds, m->target) != WEFT_OK) {
                    bad(s, "damage: despawn");
                }
            }
        }
    }
}

static void chunk_regen(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    while (weft_iter_next(it)) {
        int32_t *h = weft_iter_field_mut(it, 0, sizeof(int32_t));
        if (!h) {
            bad(user, "regen: field");
            return;
        }
        for (int32_t i = 0; i < weft_iter_count(it); i++) {
            if (h[i] < 100) {
                h[i]++;
            }
        }
    }
}

static void sys_regen(weft_system_ctx *ctx, void *user)
{
    if (weft_system_par_each(ctx, 0, chunk_regen, user, 16) != WEFT_OK) {
        bad(user, "regen: par_each");
    }
}

// Spawns squads of 3 children, the parent a provisional id used as the
// children's ChildOf target (run condition: every 4th frame).
static void sys_spawn_squads(weft_system_ctx *ctx, void *user)
{
    sim *s = user;
    weft_commands *cmds = weft_system_commands(ctx);
    const uint32_t *f = weft_system_resource(ctx, s->frame_res, sizeof *f);
    if (!cmds || !f) {
        bad(s, "spawn_squads: commands/frame");
        return;
    }
    for (int k = 0; k < 5; k++) {
        uint64_t r = mix(((uint64_t)*f << 8) | (uint64_t)k);
        ivec p = {(int32_t)(r % WORLD_SIZE), (int32_t)((r >> 16) % WORLD_SIZE)};
        ivec v = {(int32_t)((r >> 32) % 5) - 2, (int32_t)((r >> 40) % 5) - 2};
        int32_t hp = 200;
        weft_value pv[4] = {{s->squad, 0, NULL},
                            {s->pos, sizeof p, &p},
                            {s->vel, sizeof v, &v},
                            {s->health, sizeof hp, &hp}};
        weft_entity parent = weft_cmd_spawn(cmds, pv, 4);
        if (parent == 0) {
            bad(s, "spawn_squads: parent");
            return;
        }
        for (int c = 0; c < 3; c++) {
            ivec off = {c * 3 - 3, c};
            int32_t khp = 40;
            weft_value kv[5] = {{s->enemy, 0, NULL},
                                {s->pos, sizeof p, &p},
                                {s->offset, sizeof off, &off},
                                {s->health, sizeof khp, &khp},
                                {s->child_of, sizeof parent, &parent}};
            if (weft_cmd_spawn(cmds, kv, 5) == 0) {
                bad(s, "spawn_squads: child");
            }
        }
    }
}

// Run once: a wave of reinforcements for the players.
static void sys_intro(weft_system_ctx *ctx, void *user)
{
    sim *s = user;
    weft_commands *cmds = weft_system_commands(ctx);
    for (int i = 0; i < 16; i++) {
        ivec p = {i * 200, 100}, v = {0, 1};
        int32_t hp = 50;
        weft_value vals[4] = {{s->player, 0, NULL},
                              {s->pos, sizeof p, &p},
                              {s->vel, sizeof v, &v},
                              {s->health, sizeof hp, &hp}};
        if (weft_cmd_spawn(cmds, vals, 4) == 0) {
            bad(s, "intro: spawn");
        }
    }
}

static void chunk_census(weft_iter *it, weft_commands *cmds, void *user)
{
    sim *s = user;
    (void)cmds;
    int64_t sum = 0;
    while (weft_iter_next(it)) {
        const int32_t *h = weft_iter_field(it, 0, sizeof(int32_t));
        if (!h) {
            bad(s, "census: field");
            return;
        }
        for (int32_t i = 0; i < weft_iter_count(it); i++) {
            sum += h[i];
        }
    }
    atomic_fetch_add(&s->health_acc, sum);
}

// Late: sums every Health into the score resource.
static void sys_census(weft_system_ctx *ctx, void *user)
{
    sim *s = user;
    atomic_store(&s->health_acc, 0);
    if (weft_system_par_each(ctx, 0, chunk_census, s, 1024) != WEFT_OK) {
        bad(s, "census: par_each");
    }
    score *sc = weft_system_resource_mut(ctx, s->score_res, sizeof *sc);
    if (!sc) {
        bad(s, "census: score");
        return;
    }
    sc->health_sum = atomic_load(&s->health_acc);
    sc->frames++;
}

// Late: bullets in the left strip are removed.
static void sys_cleanup(weft_system_ctx *ctx, void *user)
{
    sim *s = user;
    weft_commands *cmds = weft_system_commands(ctx);
    weft_iter it;
    if (!cmds || weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        bad(s, "cleanup: iter");
        return;
    }
    while (weft_iter_next(&it)) {
        const ivec *p = weft_iter_field(&it, 0, sizeof(ivec));
        const weft_entity *es = weft_iter_entities(&it);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            if (p[i].x < 64) {
                weft_cmd_try_despawn(cmds, es[i]);
            }
        }
    }
}

static void chunk_drag(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    (void)user;
    while (weft_iter_next(it)) {
        ivec *v = weft_iter_field_mut(it, 0, sizeof(ivec));
        for (int32_t i = 0; i < weft_iter_count(it); i++) {
            v[i].x = v[i].x * 15 / 16 + 1;
            v[i].y = v[i].y * 15 / 16 - 1;
        }
    }
}

// Fixed step: drag on players, gravity on bullets.
static void sys_drag(weft_system_ctx *ctx, void *user)
{
    if (weft_system_par_each(ctx, 0, chunk_drag, user, 8) != WEFT_OK) {
        bad(user, "drag: par_each");
    }
}

static void sys_gravity(weft_system_ctx *ctx, void *user)
{
    sim *s = user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        bad(s, "gravity: iter");
        return;
    }
    while (weft_iter_next(&it)) {
        ivec *v = weft_iter_field_mut(&it, 0, sizeof(ivec));
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            v[i].y -= 1;
        }
    }
}

// Condition: frame counter divisible by user's modulus (read-only).
typedef struct every {
    sim *s;
    uint32_t mod;
} every;

static bool cond_every(weft_system_ctx *ctx, void *user)
{
    every *e = user;
    const uint32_t *f = weft_system_resource(ctx, e->s->frame_res, sizeof *f);
    return f && *f % e->mod == 0;
}

// ---- world setup ----

static every g_every3, g_every4;

static weft_condition *user_cond(sim *s, weft_schedule *sc, const char *name, every *e)
{
    weft_condition_desc d;
    memset(&d, 0, sizeof d);
    weft_resource_use r = {s->frame_res, WEFT_ACCESS_READ};
    d.name = name;
    d.fn = cond_every;
    d.user = e;
    d.resources = &r;
    d.resource_count = 1;
    weft_condition *c = weft_condition_create(sc, &d);
    if (!c) {
        fail_msg("condition %s: %s", name, weft_last_error(s->w));
    }
    return c;
}

static void sim_build(sim *s, int32_t threads)
{
    memset(s, 0, sizeof *s);
    s->app = weft_app_create(NULL);
    assert_non_null(s->app);
    weft_world *w = weft_app_world(s->app);
    s->w = w;
    assert_int_equal(weft_world_set_threads(w, threads), WEFT_OK);
    s->pos = comp(w, "Pos", sizeof(ivec));
    s->vel = comp(w, "Vel", sizeof(ivec));
    s->health = comp(w, "Health", sizeof(int32_t));
    s->age = comp(w, "Age", sizeof(uint32_t));
    s->offset = comp(w, "Offset", sizeof(ivec));
    s->enemy = comp(w, "Enemy", 0);
    s->player = comp(w, "Player", 0);
    s->bullet = comp(w, "Bullet", 0);
    s->squad = comp(w, "Squad", 0);
    s->child_of = weft_child_of(w);
    assert_true(s->child_of != 0);
    s->score_res = comp(w, "Score", sizeof(score));
    s->frame_res = comp(w, "FrameNo", sizeof(uint32_t));
    weft_message_desc md;
    memset(&md, 0, sizeof md);
    md.name = "Damage";
    md.size = sizeof(damage_msg);
    s->damage = weft_message_register(w, &md);
    assert_true(s->damage != 0);
    score sc0 = {0, 0, 0, 0};
    uint32_t f0 = 0;
    assert_int_equal(weft_resource_insert(w, s->score_res, &sc0, sizeof sc0), WEFT_OK);
    assert_int_equal(weft_resource_insert(w, s->frame_res, &f0, sizeof f0), WEFT_OK);

    // Entities: squads with children, loose enemies, players.
    s->targets = malloc(sizeof(weft_entity) * (SQUADS * SQUAD_KIDS + LOOSE));
    assert_non_null(s->targets);
    uint64_t r = 0x1234;
    for (int i = 0; i < SQUADS; i++) {
        r = mix(r);
        ivec p = {(int32_t)(r % WORLD_SIZE), (int32_t)((r >> 16) % WORLD_SIZE)};
        ivec v = {(int32_t)((r >> 32) % 7) - 3, (int32_t)((r >> 40) % 7) - 3};
        int32_t hp = 200;
        weft_value pv[4] = {{s->squad, 0, NULL},
                            {s->pos, sizeof p, &p},
                            {s->vel, sizeof v, &v},
                            {s->health, sizeof hp, &hp}};
        weft_entity parent = weft_spawn_with(w, pv, 4);
        assert_true(parent != 0);
        for (int c = 0; c < SQUAD_KIDS; c++) {
            ivec off = {c - 2, 2 - c};
            int32_t khp = 20 + c * 10;
            weft_value kv[4] = {{s->enemy, 0, NULL},
                                {s->pos, sizeof p, &p},
                                {s->offset, sizeof off, &off},
                                {s->health, sizeof khp, &khp}};
            weft_entity kid = weft_spawn_with(w, kv, 4);
            assert_true(kid != 0);
            assert_int_equal(weft_set_parent(w, kid, parent), WEFT_OK);
            s->targets[s->ntargets++] = kid;
        }
    }
    for (int i = 0; i < LOOSE; i++) {
        r = mix(r);
        ivec p = {(int32_t)(r % WORLD_SIZE), (int32_t)((r >> 16) % WORLD_SIZE)};
        ivec v = {(int32_t)((r >> 32) % 9) - 4, (int32_t)((r >> 40) % 9) - 4};
        int32_t hp = 10 + (int32_t)((r >> 48) % 40);
        uint32_t age = (uint32_t)((r >> 56) % 16);
        weft_value vals[5] = {{s->enemy, 0, NULL},
                              {s->pos, sizeof p, &p},
                              {s->vel, sizeof v, &v},
                              {s->health, sizeof hp, &hp},
                              {s->age, sizeof age, &age}};
        weft_entity e = weft_spawn_with(w, vals, 5);
        assert_true(e != 0);
        s->targets[s->ntargets++] = e;
    }
    for (int i = 0; i < PLAYERS; i++) {
        ivec p = {i * 64, WORLD_SIZE / 2}, v = {1, 0};
        int32_t hp = 100;
        weft_value vals[4] = {{s->player, 0, NULL},
                              {s->pos, sizeof p, &p},
                              {s->vel, sizeof v, &v},
                              {s->health, sizeof hp, &hp}};
        assert_true(weft_spawn_with(w, vals, 4) != 0);
    }

    // Schedules.
    // the fixed steps run before update and late (after RunFixedMainLoop)
    assert_int_equal(weft_app_insert_schedule(s->app, "update", WEFT_APP_UPDATE, WEFT_APP_AFTER),
                     WEFT_OK);
    assert_int_equal(weft_app_insert_schedule(s->app, "late", "update", WEFT_APP_AFTER), WEFT_OK);
    s->update = weft_app_schedule(s->app, "update");
    s->late = weft_app_schedule(s->app, "late");
    s->fixed = weft_app_schedule(s->app, WEFT_APP_FIXED_UPDATE);
    assert_true(s->update && s->late && s->fixed);
    weft_schedule *u = s->update;
    sysb b;
    weft_query_desc *q;

    q = sb_init(&b, "tick", sys_tick, s, WEFT_SYSTEM_EXCLUSIVE);
    term(q, s->pos, WEFT_ACCESS_READ, WEFT_OPER_AND);
    term(q, s->squad, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    sb_res(&b, s->frame_res, WEFT_ACCESS_WRITE);
    weft_node n_tick = sb_add(w, u, &b);

    q = sb_init(&b, "move", sys_move, s, 0);
    term(q, s->pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND);
    term(q, s->vel, WEFT_ACCESS_READ, WEFT_OPER_AND);
    term(q, s->child_of, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT);
    weft_node n_move = sb_add(w, u, &b);

    q = sb_init(&b, "follow", sys_follow, s, 0);
    term(q, s->pos, WEFT_ACCESS_WRITE, WEFT_OPER_AND);
    term(q, s->offset, WEFT_ACCESS_READ, WEFT_OPER_AND);
    term(q, s->child_of, WEFT_ACCESS_READ, WEFT_OPER_AND);
    term(q, s->squad, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT);
    q = sb_query(&b);
    term(q, s->pos, WEFT_ACCESS_READ, WEFT_OPER_AND);
    term(q, s->squad, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    weft_node n_follow = sb_add(w, u, &b);

    q = sb_init(&b, "age_bullets", sys_age_bullets, s, WEFT_SYSTEM_COMMANDS);
    term(q, s->age, WEFT_ACCESS_WRITE, WEFT_OPER_AND);
    term(q, s->bullet, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    sb_add(w, u, &b);

    q = sb_init(&b, "age_enemies", sys_age_enemies, s, WEFT_SYSTEM_COMMANDS);
    term(q, s->age, WEFT_ACCESS_WRITE, WEFT_OPER_AND);
    term(q, s->pos, WEFT_ACCESS_READ, WEFT_OPER_AND);
    term(q, s->enemy, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    term(q, s->bullet, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT);
    sb_add(w, u, &b);

    q = sb_init(&b, "shoot", sys_shoot, s, WEFT_SYSTEM_COMMANDS);
    term(q, s->pos, WEFT_ACCESS_READ, WEFT_OPER_AND);
    term(q, s->player, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    weft_node n_shoot = sb_add(w, u, &b);
    g_every3 = (every){s, 3};
    assert_int_equal(
        weft_schedule_add_condition(u, n_shoot, user_cond(s, u, "every3", &g_every3)), WEFT_OK);

    q = sb_init(&b, "collide", sys_collide, s, 0);
    term(q, s->pos, WEFT_ACCESS_READ, WEFT_OPER_AND);
    term(q, s->age, WEFT_ACCESS_READ, WEFT_OPER_AND);
    term(q, s->bullet, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    q = sb_query(&b);
    term(q, s->health, WEFT_ACCESS_READ, WEFT_OPER_AND);
    term(q, s->enemy, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    sb_msg(&b, s->damage, WEFT_ACCESS_WRITE);
    weft_node n_collide = sb_add(w, u, &b);

    q = sb_init(&b, "damage", sys_damage, s, WEFT_SYSTEM_COMMANDS);
    term(q, s->health, WEFT_ACCESS_WRITE, WEFT_OPER_AND);
    term(q, s->enemy, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    sb_msg(&b, s->damage, WEFT_ACCESS_READ);
    sb_res(&b, s->score_res, WEFT_ACCESS_WRITE);
    weft_node n_damage = sb_add(w, u, &b);

    q = sb_init(&b, "regen", sys_regen, s, 0);
    term(q, s->health, WEFT_ACCESS_WRITE, WEFT_OPER_AND);
    term(q, s->player, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    term(q, s->enemy, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT);
    sb_add(w, u, &b);

    q = sb_init(&b, "spawn_squads", sys_spawn_squads, s, WEFT_SYSTEM_COMMANDS);
    b.nq = 0; // no query
    sb_res(&b, s->frame_res, WEFT_ACCESS_READ);
    weft_node n_squads = sb_add(w, u, &b);
    g_every4 = (every){s, 4};
    (void)q;

    sb_init(&b, "intro", sys_intro, s, WEFT_SYSTEM_COMMANDS);
    b.nq = 0;
    weft_node n_intro = sb_add(w, u, &b);
    assert_int_equal(weft_schedule_add_condition(u, n_intro, weft_condition_run_once(u)), WEFT_OK);

    // Ordering: tick first; move -> follow; shoot -> collide -> damage in a
    // "combat" set gated by a condition that is always true here.
    weft_node combat = weft_schedule_ensure_set(u, "combat");
    assert_int_equal(weft_schedule_add_to_set(u, n_collide, combat), WEFT_OK);
    assert_int_equal(weft_schedule_add_to_set(u, n_damage, combat), WEFT_OK);
    assert_int_equal(
        weft_schedule_add_condition(u, combat, weft_condition_resource_exists(u, s->score_res)),
        WEFT_OK);
    weft_node ch[3] = {n_shoot, n_collide, n_damage};
    assert_int_equal(weft_schedule_add_chain(u, ch, 3, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(u, n_move, n_follow, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(u, n_tick, n_move, 0), WEFT_OK);
    weft_node spawners = weft_schedule_ensure_set(u, "spawners");
    assert_int_equal(weft_schedule_add_to_set(u, n_squads, spawners), WEFT_OK);
    assert_int_equal(
        weft_schedule_add_condition(u, spawners, user_cond(s, u, "every4", &g_every4)), WEFT_OK);

    q = sb_init(&b, "census", sys_census, s, 0);
    term(q, s->health, WEFT_ACCESS_READ, WEFT_OPER_AND);
    sb_res(&b, s->score_res, WEFT_ACCESS_WRITE);
    sb_add(w, s->late, &b);
    q = sb_init(&b, "cleanup", sys_cleanup, s, WEFT_SYSTEM_COMMANDS);
    term(q, s->pos, WEFT_ACCESS_READ, WEFT_OPER_AND);
    term(q, s->bullet, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    sb_add(w, s->late, &b);

    q = sb_init(&b, "drag", sys_drag, s, 0);
    term(q, s->vel, WEFT_ACCESS_WRITE, WEFT_OPER_AND);
    term(q, s->player, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    term(q, s->bullet, WEFT_ACCESS_NONE, WEFT_OPER_WITHOUT);
    sb_add(w, s->fixed, &b);
    q = sb_init(&b, "gravity", sys_gravity, s, 0);
    term(q, s->vel, WEFT_ACCESS_WRITE, WEFT_OPER_AND);
    term(q, s->bullet, WEFT_ACCESS_NONE, WEFT_OPER_WITH);
    sb_add(w, s->fixed, &b);
}

static void sim_free(sim *s)
{
    assert_int_equal(weft_app_destroy(s->app), WEFT_OK);
    free(s->targets);
}

// ---- a test-side canonical hash ----
// weft_world_hash covers every component's bytes; this one is built from
// public queries only (every component of the simulation, sorted by entity,
// plus each squad's ordered children and the resources). It does not depend
// on how the world stores relationship lists, so it tells a scheduling
// difference from a hashing one.

typedef struct crec {
    weft_entity e;
    uint32_t c;
    uint32_t pad;
    uint64_t v;
} crec;

static int crec_cmp(const void *a, const void *b)
{
    const crec *x = a, *y = b;
    if (x->e != y->e) {
        return x->e < y->e ? -1 : 1;
    }
    return x->c < y->c ? -1 : x->c > y->c;
}

static uint64_t canon_hash(sim *s)
{
    weft_world *w = s->w;
    const weft_component cs[10] = {s->pos,   s->vel,    s->health, s->age,   s->offset,
                                   s->enemy, s->player, s->bullet, s->squad, s->child_of};
    size_t cap = 1u << 16, n = 0;
    crec *recs = malloc(cap * sizeof *recs);
    assert_non_null(recs);
    for (uint32_t k = 0; k < 10; k++) {
        weft_component_info info;
        assert_int_equal(weft_component_info_get(w, cs[k], &info), WEFT_OK);
        weft_query_desc d;
        memset(&d, 0, sizeof d);
        if (info.size) {
            term(&d, cs[k], WEFT_ACCESS_READ, WEFT_OPER_AND);
        } else {
            term(&d, cs[k], WEFT_ACCESS_NONE, WEFT_OPER_WITH);
        }
        d.flags = WEFT_QUERY_UNCACHED;
        weft_query *q = weft_query_create(w, &d);
        assert_non_null(q);
        weft_iter it;
        assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
        while (weft_iter_next(&it)) {
            const weft_entity *es = weft_iter_entities(&it);
            for (int32_t i = 0; i < weft_iter_count(&it); i++) {
                if (n == cap) {
                    cap *= 2;
                    crec *nr = realloc(recs, cap * sizeof *recs);
                    assert_non_null(nr);
                    recs = nr;
                }
                crec r = {es[i], k, 0, 0};
                if (info.size) {
                    const void *v = weft_iter_get(&it, 0, i, info.size);
                    assert_non_null(v);
                    memcpy(&r.v, v, info.size < 8 ? info.size : 8);
                }
                recs[n++] = r;
            }
        }
        assert_int_equal(weft_query_destroy(w, q), WEFT_OK);
    }
    qsort(recs, n, sizeof *recs, crec_cmp);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h = mix(h ^ recs[i].e);
        h = mix(h ^ ((uint64_t)recs[i].c << 32));
        h = mix(h ^ recs[i].v);
        if (recs[i].c == 8) { // a squad: its children, in order
            int32_t nk = 0;
            const weft_entity *kids = weft_children(w, recs[i].e, &nk);
            for (int32_t k = 0; k < nk; k++) {
                h = mix(h ^ kids[k]);
            }
        }
    }
    free(recs);
    const score *sc = weft_resource_get(w, s->score_res, sizeof(score));
    const uint32_t *fr = weft_resource_get(w, s->frame_res, sizeof(uint32_t));
    assert_true(sc && fr);
    h = mix(h ^ (uint64_t)sc->kills) ^ mix((uint64_t)sc->health_sum) ^ mix(*fr);
    return h;
}

// Two worlds built by the same operations, with ChildOf, hash equal
// (weft_world_hash: "two worlds built by the same operations hash equal").
// Both worlds are alive at once, so their heap blocks differ.
static weft_world *small_world(void)
{
    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    weft_component p = comp(w, "P", sizeof(int32_t));
    int32_t v = 5;
    weft_value val = {p, sizeof v, &v};
    weft_entity a = weft_spawn_with(w, &val, 1);
    weft_entity b = weft_spawn_with(w, &val, 1);
    assert_int_equal(weft_set_parent(w, b, a), WEFT_OK);
    return w;
}

static bool world_hash_reproducible(uint64_t *h1, uint64_t *h2)
{
    weft_world *w1 = small_world(), *w2 = small_world();
    *h1 = weft_world_hash(w1);
    *h2 = weft_world_hash(w2);
    weft_world_destroy(w1);
    weft_world_destroy(w2);
    return *h1 == *h2;
}

static void world_hash_reproducible_with_child_of(void **state)
{
    (void)state;
    uint64_t h1, h2;
    if (!world_hash_reproducible(&h1, &h2)) {
        fail_msg("two worlds built by the same operations (2 entities, one ChildOf) hash "
                 "%016llx and %016llx", (unsigned long long)h1, (unsigned long long)h2);
    }
}

// Runs FRAMES frames; hashes[f] after frame f. Also returns live counts.
static void sim_run(int32_t threads, uint64_t *hashes, uint64_t *canon, int64_t *live,
                    int64_t *kills)
{
    sim s;
    sim_build(&s, threads);
    for (int f = 0; f < FRAMES; f++) {
        double dt = (1.0 + (double)(f % 3)) / 64.0 + 0.001;
        g_watch_threads = threads;
        g_watch_frame = f;
        alarm(WATCHDOG_S);
        weft_status st = weft_app_update(s.app, dt);
        if (st != WEFT_OK) {
            fail_msg("%d threads, frame %d: %s: %s", threads, f, weft_status_name(st),
                     weft_last_error(s.w));
        }
        if (atomic_load(&s.bad)) {
            fail_msg("%d threads, frame %d: %d failed checks in systems, first: %s", threads, f,
                     atomic_load(&s.bad), s.first_bad);
        }
        hashes[f] = weft_world_hash(s.w);
        canon[f] = canon_hash(&s);
        weft_world_stats ws;
        assert_int_equal(weft_world_get_stats(s.w, &ws), WEFT_OK);
        live[f] = ws.live_entities;
    }
    const score *sc = weft_resource_get(s.w, s.score_res, sizeof(score));
    assert_non_null(sc);
    *kills = sc->kills;
    assert_int_equal(sc->frames, FRAMES);
    assert_int_equal(weft_world_check(s.w), WEFT_OK);
    sim_free(&s);
}

static void same_hash_every_frame_on_1_2_4_8_threads(void **state)
{
    (void)state;
    NEEDS_THREADS("compares 1, 2, 4 and 8 workers (test_sched_determinism_same_hashes_as_"
                  "threaded compares this build with a threaded one)");
    static const int32_t threads[4] = {1, 2, 4, 8};
    uint64_t ref[FRAMES], h[FRAMES], ref_c[FRAMES], hc[FRAMES];
    int64_t ref_live[FRAMES], live[FRAMES], ref_kills = 0, kills = 0;
    // weft_world_hash is compared when it is reproducible at all; the
    // canonical hash always is.
    uint64_t h1, h2;
    bool use_world_hash = world_hash_reproducible(&h1, &h2);
    if (!use_world_hash) {
        print_message("weft_world_hash is not reproducible across worlds (see "
                      "world_hash_reproducible_with_child_of); comparing the canonical hash "
                      "only\n");
    }
    for (int t = 0; t < 4; t++) {
        bool first = t == 0;
        sim_run(threads[t], first ? ref : h, first ? ref_c : hc, first ? ref_live : live,
                first ? &ref_kills : &kills);
        if (first) {
            // The simulation does something: entities come and go, enemies die.
            int64_t lo = ref_live[0], hi = ref_live[0];
            for (int f = 1; f < FRAMES; f++) {
                lo = ref_live[f] < lo ? ref_live[f] : lo;
                hi = ref_live[f] > hi ? ref_live[f] : hi;
            }
            assert_true(lo >= 20000);
            assert_true(hi > lo);
            assert_true(ref_kills > 0);
            continue;
        }
        for (int f = 0; f < FRAMES; f++) {
            if (hc[f] != ref_c[f] || live[f] != ref_live[f] ||
                (use_world_hash && h[f] != ref[f])) {
                fail_msg("%d threads: frame %d: world hash %016llx, canonical %016llx, "
                         "%lld live; 1 thread: %016llx, %016llx, %lld live",
                         threads[t], f, (unsigned long long)h[f], (unsigned long long)hc[f],
                         (long long)live[f], (unsigned long long)ref[f],
                         (unsigned long long)ref_c[f], (long long)ref_live[f]);
            }
        }
        assert_int_equal(kills, ref_kills);
    }
}

// `test_sched_determinism THREADS FILE`: runs the simulation once on
// THREADS workers and writes "frame <f> <canonical hash> <live>
// [<weft_world_hash>]" per frame and the kills to FILE, instead of the
// cmocka tests. The build without threads compares its run on 1 with a
// threaded build's on 8 this way (examples/same_hashes.cmake, registered
// when WEFT_COMPARE_WITH names that build).
static int write_frame_hashes(int32_t threads, const char *path)
{
    uint64_t h[FRAMES], hc[FRAMES], h1, h2;
    int64_t live[FRAMES], kills = 0;
    bool use_world_hash = world_hash_reproducible(&h1, &h2);
    sim_run(threads, h, hc, live, &kills);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "test_sched_determinism: cannot write %s\n", path);
        return 1;
    }
    for (int i = 0; i < FRAMES; i++) {
        fprintf(f, "frame %d %016llx %lld", i, (unsigned long long)hc[i], (long long)live[i]);
        if (use_world_hash) {
            fprintf(f, " %016llx", (unsigned long long)h[i]);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "kills %lld\n", (long long)kills);
    return fclose(f) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    signal(SIGALRM, on_alarm);
    alarm(WATCHDOG_S);
    if (argc == 3) {
        return write_frame_hashes((int32_t)atoi(argv[1]), argv[2]);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(world_hash_reproducible_with_child_of),
        cmocka_unit_test(same_hash_every_frame_on_1_2_4_8_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

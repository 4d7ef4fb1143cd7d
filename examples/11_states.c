/* examples/11_states.c - a game's screens as states on the app: menu ->
 * game -> pause -> game over -> menu, with state-scoped entities.
 * SPDX-License-Identifier: MIT
 *
 * States (registered with weft_app_register_state, which hooks the
 * transition step into the app's StateTransition label):
 *   Screen  {Menu, Game, GameOver}  freely mutable, starts in Menu
 *   Phase   {Running, Paused}       a sub state: exists only while
 *                                   Screen is Game
 *   Playing {Yes}                   computed from (Screen, Phase): exists
 *                                   while the game runs unpaused
 * Every screen spawns its entities in its OnEnter schedule and tags them
 * DespawnOnExit(that screen), so leaving a screen cleans up after it
 * without a single despawn call in the game code. The game: enemies walk
 * towards the player at the origin (in parallel chunks, only while
 * Playing exists); each one that reaches it costs a hit point and scores;
 * at zero hit points the game is over. The "input" is a script keyed on
 * the frame number, so a run is reproducible: the transitions, the census
 * and weft_world_hash are the same on any thread count (checked by
 * tests/state/test_state_example.c on 1, 2 and 4 threads).
 *
 * Usage: weft_example_states [threads] [frames] [enemies] [hashes]
 *   hashes: a file to write "frame <n> <weft_world_hash>" to after every
 *   update (the same in every build and on any thread count)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft.h"

enum { MENU = 0, GAME = 1, GAME_OVER = 2 };
enum { RUNNING = 0, PAUSED = 1 };
enum { YES = 0 };

typedef struct ipos { int32_t x, y; } ipos;
typedef struct clock_res {
    int64_t frame;        /* updates so far */
    int64_t screen_since; /* frame the current screen was entered */
    int64_t phase_since;  /* frame the current phase was entered */
} clock_res;
typedef struct score_res {
    int32_t hp;           /* the player's */
    int32_t score;        /* enemies that reached the player */
    int32_t games;
    int32_t best;
} score_res;

typedef struct demo {
    weft_app *app;
    weft_world *w;
    FILE *out;            /* transitions and the census go here (or NULL) */
    int32_t enemies;
    weft_state screen, phase, playing;
    weft_component pos, vel, enemy, button, overlay, card;
    weft_component clock, score;
    weft_component screen_exit, phase_exit; /* DespawnOnExit<Screen/Phase> */
    weft_message_type msg[3]; /* StateTransitionEvent of each state */
} demo;

static const char *const STATE_NAMES[3] = {"Screen", "Phase", "Playing"};
static const char *const VALUE_NAMES[3][3] = {
    {"Menu", "Game", "GameOver"}, {"Running", "Paused", "?"}, {"Yes", "?", "?"}};

static const char *value_str(int k, uint32_t v)
{
    return v == WEFT_STATE_VALUE_NONE ? "(none)" : v < 3 ? VALUE_NAMES[k][v] : "?";
}

static weft_component reg(weft_world *w, const char *name, size_t size)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    return weft_component_register(w, &d);
}

/* ---- the script: what the player "presses" ---- */

static void input(weft_system_ctx *ctx, void *user)
{
    demo *d = user;
    clock_res *c = weft_system_resource_mut(ctx, d->clock, sizeof *c);
    const score_res *s = weft_system_resource(ctx, d->score, sizeof *s);
    uint32_t screen = WEFT_STATE_VALUE_NONE;
    uint32_t phase = WEFT_STATE_VALUE_NONE;
    weft_system_state_get(ctx, d->screen, &screen);
    weft_system_state_get(ctx, d->phase, &phase);
    c->frame++;
    int64_t on_screen = c->frame - c->screen_since;
    if (screen == MENU && on_screen == 3) {
        weft_system_state_set_next(ctx, d->screen, GAME); /* "start" */
    } else if (screen == GAME && s->hp <= 0) {
        weft_system_state_set_next(ctx, d->screen, GAME_OVER);
    } else if (screen == GAME && phase == RUNNING && on_screen == 12) {
        weft_system_state_set_next(ctx, d->phase, PAUSED); /* "escape" */
    } else if (screen == GAME && phase == PAUSED && c->frame - c->phase_since == 4) {
        weft_system_state_set_next(ctx, d->phase, RUNNING);
    } else if (screen == GAME_OVER && on_screen == 6) {
        weft_system_state_set_next(ctx, d->screen, MENU);
    }
}

/* ---- OnEnter schedules: each screen spawns what it shows ---- */

static void stamp_screen(weft_system_ctx *ctx, void *user)
{
    demo *d = user;
    clock_res *c = weft_system_resource_mut(ctx, d->clock, sizeof *c);
    c->screen_since = c->frame;
}

static void stamp_phase(weft_system_ctx *ctx, void *user)
{
    demo *d = user;
    clock_res *c = weft_system_resource_mut(ctx, d->clock, sizeof *c);
    c->phase_since = c->frame;
}

static void spawn_menu(weft_system_ctx *ctx, void *user)
{
    demo *d = user;
    uint32_t menu = MENU;
    for (int32_t i = 0; i < 3; i++) { /* play, options, quit */
        weft_value v[2] = {{d->button, sizeof i, &i}, {d->screen_exit, sizeof menu, &menu}};
        weft_cmd_spawn(weft_system_commands(ctx), v, 2);
    }
}

static void spawn_game(weft_system_ctx *ctx, void *user)
{
    demo *d = user;
    score_res *s = weft_system_resource_mut(ctx, d->score, sizeof *s);
    s->hp = 10;
    s->score = 0;
    s->games++;
    uint32_t game = GAME;
    uint64_t seed = 0x5eed0000u + (uint64_t)s->games;
    weft_commands *cmds = weft_system_commands(ctx);
    for (int32_t i = 0; i < d->enemies; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        int32_t a = (int32_t)((seed >> 33) % 2000u) - 1000;
        int32_t b = (int32_t)((seed >> 13) % 2000u) - 1000;
        if (abs(a) + abs(b) < 200) {
            a += a < 0 ? -200 : 200; /* nobody starts next to the player */
        }
        ipos p = {a, b};
        ipos v = {p.x < 0 ? 4 + i % 9 : -4 - i % 9, p.y < 0 ? 4 + i % 7 : -4 - i % 7};
        weft_value vals[4] = {{d->pos, sizeof p, &p}, {d->vel, sizeof v, &v},
                              {d->enemy, 0, NULL}, {d->screen_exit, sizeof game, &game}};
        weft_cmd_spawn(cmds, vals, 4);
    }
}

static void spawn_overlay(weft_system_ctx *ctx, void *user)
{
    demo *d = user;
    uint32_t paused = PAUSED;
    weft_value v[2] = {{d->overlay, 0, NULL}, {d->phase_exit, sizeof paused, &paused}};
    weft_cmd_spawn(weft_system_commands(ctx), v, 2);
}

static void spawn_card(weft_system_ctx *ctx, void *user)
{
    demo *d = user;
    score_res *s = weft_system_resource_mut(ctx, d->score, sizeof *s);
    if (s->score > s->best) {
        s->best = s->score;
    }
    uint32_t over = GAME_OVER;
    int32_t final_score = s->score;
    weft_value v[2] = {{d->card, sizeof final_score, &final_score},
                       {d->screen_exit, sizeof over, &over}};
    weft_cmd_spawn(weft_system_commands(ctx), v, 2);
}

/* ---- Update, while Playing exists ---- */

static void walk_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    (void)user;
    while (weft_iter_next(it)) {
        ipos *p = weft_iter_field_mut(it, 0, sizeof *p);
        const ipos *v = weft_iter_field(it, 1, sizeof *v);
        for (int32_t i = 0; i < weft_iter_count(it); i++) {
            /* towards the origin, never past it */
            p[i].x = p[i].x > 0 ? (p[i].x + v[i].x > 0 ? p[i].x + v[i].x : 0)
                                : (p[i].x + v[i].x < 0 ? p[i].x + v[i].x : 0);
            p[i].y = p[i].y > 0 ? (p[i].y + v[i].y > 0 ? p[i].y + v[i].y : 0)
                                : (p[i].y + v[i].y < 0 ? p[i].y + v[i].y : 0);
        }
    }
}

static void walk(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_system_par_each(ctx, 0, walk_chunk, NULL, 512);
}

static void hit(weft_system_ctx *ctx, void *user)
{
    demo *d = user;
    score_res *s = weft_system_resource_mut(ctx, d->score, sizeof *s);
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        const ipos *p = weft_iter_field(&it, 0, sizeof *p);
        const weft_entity *e = weft_iter_entities(&it);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            if (abs(p[i].x) + abs(p[i].y) < 40 && s->hp > 0) {
                s->hp--;
                s->score++;
                weft_cmd_despawn(weft_system_commands(ctx), e[i]);
            }
        }
    }
}

/* ---- Last: report the transitions of this update ---- */

static void report(weft_system_ctx *ctx, void *user)
{
    demo *d = user;
    const clock_res *c = weft_system_resource(ctx, d->clock, sizeof *c);
    for (int k = 0; k < 3; k++) {
        const weft_state_transition_event *ev;
        while ((ev = weft_system_message_read(ctx, d->msg[k], sizeof *ev)) != NULL) {
            if (d->out) {
                fprintf(d->out, "frame %3" PRId64 ": %-7s %s -> %s\n", c->frame,
                        STATE_NAMES[k], value_str(k, ev->exited), value_str(k, ev->entered));
            }
        }
    }
}

/* ---- setup ---- */

static uint32_t playing_from(const uint32_t *src, int32_t n, void *user)
{
    (void)n;
    (void)user;
    return src[0] == GAME && src[1] == RUNNING ? YES : WEFT_STATE_VALUE_NONE;
}

static void must(bool ok, weft_world *w, const char *what)
{
    if (!ok) {
        fprintf(stderr, "11_states: %s failed: %s\n", what, weft_last_error(w));
        exit(1);
    }
}

static weft_node add(demo *d, weft_schedule *s, const char *name, weft_system_fn fn,
                     const weft_resource_use *res, int32_t nres, const weft_query_desc *q,
                     uint32_t flags)
{
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = name;
    sd.fn = fn;
    sd.user = d;
    sd.resources = res;
    sd.resource_count = nres;
    sd.queries = q;
    sd.query_count = q ? 1 : 0;
    sd.flags = flags;
    weft_node n = s ? weft_schedule_add_system(s, &sd) : 0;
    must(n != 0, d->w, name);
    return n;
}

static weft_state add_state(demo *d, const char *name, weft_state_kind kind,
                            const weft_state_value *values, int32_t count, weft_state source,
                            uint32_t source_value, const weft_state *sources)
{
    weft_state_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = name;
    sd.kind = kind;
    sd.values = values;
    sd.value_count = count;
    sd.source = source;
    sd.source_value = source_value;
    if (kind == WEFT_STATE_KIND_COMPUTED) {
        sd.sources = sources;
        sd.source_count = 2;
        sd.compute = playing_from;
    }
    weft_state s = weft_app_register_state(d->app, &sd);
    must(s != 0, d->w, name);
    return s;
}

static void demo_setup(demo *d, int32_t threads)
{
    d->app = weft_app_create(NULL);
    if (!d->app) {
        fprintf(stderr, "11_states: weft_app_create failed\n");
        exit(1);
    }
    weft_world *w = d->w = weft_app_world(d->app);
    /* a build without threads (weft_max_threads() == 1) runs on this one */
    if (threads > weft_max_threads()) {
        threads = weft_max_threads();
    }
    must(weft_world_set_threads(w, threads) == WEFT_OK, w, "weft_world_set_threads");
    d->pos = reg(w, "Pos", sizeof(ipos));
    d->vel = reg(w, "Vel", sizeof(ipos));
    d->enemy = reg(w, "Enemy", 0);
    d->button = reg(w, "Button", sizeof(int32_t));
    d->overlay = reg(w, "PauseOverlay", 0);
    d->card = reg(w, "ScoreCard", sizeof(int32_t));
    d->clock = reg(w, "Clock", sizeof(clock_res));
    d->score = reg(w, "Score", sizeof(score_res));
    must(d->pos && d->vel && d->enemy && d->button && d->overlay && d->card && d->clock &&
         d->score, w, "weft_component_register");
    must(weft_resource_insert(w, d->clock, NULL, sizeof(clock_res)) == WEFT_OK, w, "clock");
    must(weft_resource_insert(w, d->score, NULL, sizeof(score_res)) == WEFT_OK, w, "score");

    static const weft_state_value screen_v[] = {{MENU, "Menu"}, {GAME, "Game"},
                                                {GAME_OVER, "GameOver"}};
    static const weft_state_value phase_v[] = {{RUNNING, "Running"}, {PAUSED, "Paused"}};
    static const weft_state_value playing_v[] = {{YES, "Yes"}};
    d->screen = add_state(d, "Screen", WEFT_STATE_KIND_DEFAULT, screen_v, 3, 0, 0, NULL);
    d->phase = add_state(d, "Phase", WEFT_STATE_KIND_SUB, phase_v, 2, d->screen, GAME, NULL);
    weft_state sources[2] = {d->screen, d->phase};
    d->playing = add_state(d, "Playing", WEFT_STATE_KIND_COMPUTED, playing_v, 1, 0, 0,
                           sources);
    d->screen_exit = weft_state_despawn_on_exit(w, d->screen);
    d->phase_exit = weft_state_despawn_on_exit(w, d->phase);
    const weft_state all[3] = {d->screen, d->phase, d->playing};
    for (int k = 0; k < 3; k++) {
        d->msg[k] = weft_state_transition_message(w, all[k]);
    }

    /* PreUpdate: the script reads the states and queues transitions */
    weft_resource_use in_res[6] = {
        {d->clock, WEFT_ACCESS_WRITE},
        {d->score, WEFT_ACCESS_READ},
        {weft_state_resource(w, d->screen), WEFT_ACCESS_READ},
        {weft_state_resource(w, d->phase), WEFT_ACCESS_READ},
        {weft_state_next_resource(w, d->screen), WEFT_ACCESS_WRITE},
        {weft_state_next_resource(w, d->phase), WEFT_ACCESS_WRITE}};
    add(d, weft_app_schedule(d->app, WEFT_APP_PRE_UPDATE), "input", input, in_res, 6, NULL, 0);

    /* OnEnter: each screen spawns its entities (tagged DespawnOnExit) */
    weft_resource_use clock_w = {d->clock, WEFT_ACCESS_WRITE};
    weft_resource_use score_w = {d->score, WEFT_ACCESS_WRITE};
    weft_schedule *menu = weft_state_on_enter(w, d->screen, MENU);
    weft_schedule *game = weft_state_on_enter(w, d->screen, GAME);
    weft_schedule *over = weft_state_on_enter(w, d->screen, GAME_OVER);
    weft_schedule *paused = weft_state_on_enter(w, d->phase, PAUSED);
    weft_schedule *running = weft_state_on_enter(w, d->phase, RUNNING);
    add(d, menu, "spawn_menu", spawn_menu, NULL, 0, NULL, WEFT_SYSTEM_COMMANDS);
    add(d, game, "spawn_game", spawn_game, &score_w, 1, NULL, WEFT_SYSTEM_COMMANDS);
    add(d, over, "spawn_card", spawn_card, &score_w, 1, NULL, WEFT_SYSTEM_COMMANDS);
    add(d, paused, "spawn_overlay", spawn_overlay, NULL, 0, NULL, WEFT_SYSTEM_COMMANDS);
    add(d, menu, "stamp_menu", stamp_screen, &clock_w, 1, NULL, 0);
    add(d, game, "stamp_game", stamp_screen, &clock_w, 1, NULL, 0);
    add(d, over, "stamp_over", stamp_screen, &clock_w, 1, NULL, 0);
    add(d, paused, "stamp_paused", stamp_phase, &clock_w, 1, NULL, 0);
    add(d, running, "stamp_running", stamp_phase, &clock_w, 1, NULL, 0);

    /* Update: the game itself, only while Playing exists */
    weft_schedule *upd = weft_app_schedule(d->app, WEFT_APP_UPDATE);
    weft_query_desc walk_q;
    memset(&walk_q, 0, sizeof walk_q);
    walk_q.terms[0] = (weft_term){.id = d->pos, .access = WEFT_ACCESS_WRITE};
    walk_q.terms[1] = (weft_term){.id = d->vel, .access = WEFT_ACCESS_READ};
    walk_q.terms[2] = (weft_term){.id = d->enemy, .oper = WEFT_OPER_WITH};
    walk_q.term_count = 3;
    weft_query_desc hit_q;
    memset(&hit_q, 0, sizeof hit_q);
    hit_q.terms[0] = (weft_term){.id = d->pos, .access = WEFT_ACCESS_READ};
    hit_q.terms[1] = (weft_term){.id = d->enemy, .oper = WEFT_OPER_WITH};
    hit_q.term_count = 2;
    weft_node n_walk = add(d, upd, "walk", walk, NULL, 0, &walk_q, 0);
    weft_node n_hit = add(d, upd, "hit", hit, &score_w, 1, &hit_q, WEFT_SYSTEM_COMMANDS);
    must(weft_schedule_add_order(upd, n_walk, n_hit, 0) == WEFT_OK, w, "order");
    must(weft_schedule_add_condition(upd, n_walk, weft_condition_in_state(upd, d->playing,
                                                                          YES)) == WEFT_OK,
         w, "in_state");
    must(weft_schedule_add_condition(upd, n_hit, weft_condition_in_state(upd, d->playing,
                                                                         YES)) == WEFT_OK,
         w, "in_state");

    /* Last: print this update's transitions */
    weft_message_use msgs[3] = {{d->msg[0], WEFT_ACCESS_READ},
                                {d->msg[1], WEFT_ACCESS_READ},
                                {d->msg[2], WEFT_ACCESS_READ}};
    weft_resource_use clock_r = {d->clock, WEFT_ACCESS_READ};
    weft_system_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.name = "report";
    rd.fn = report;
    rd.user = d;
    rd.resources = &clock_r;
    rd.resource_count = 1;
    rd.messages = msgs;
    rd.message_count = 3;
    rd.flags = WEFT_SYSTEM_MAIN_THREAD;
    must(weft_app_add_system(d->app, WEFT_APP_LAST, &rd) != 0, w, "report");
}

/* Counts the entities holding component c. */
static int64_t census(weft_world *w, weft_component c)
{
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0] = (weft_term){.id = c, .oper = WEFT_OPER_WITH};
    q.term_count = 1;
    weft_query *query = weft_query_create(w, &q);
    int64_t n = query ? weft_query_count(w, query) : -1;
    weft_query_destroy(w, query);
    return n;
}

/* Runs the demo; writes a one-line summary into `summary` and returns
 * weft_world_hash of the final world. */
/* Where states_demo_run writes each frame's world hash (main's 4th
 * argument), or NULL. */
static FILE *states_hashes;

static uint64_t states_demo_run(int32_t threads, int32_t frames, int32_t enemies, FILE *out,
                                char *summary, size_t cap)
{
    demo d;
    memset(&d, 0, sizeof d);
    d.out = out;
    d.enemies = enemies;
    demo_setup(&d, threads);
    for (int32_t f = 0; f < frames; f++) {
        must(weft_app_update(d.app, 1.0 / 60.0) == WEFT_OK, d.w, "weft_app_update");
        if (states_hashes) {
            fprintf(states_hashes, "frame %d %016" PRIx64 "\n", (int)f, weft_world_hash(d.w));
        }
    }
    uint32_t screen = 0;
    weft_state_get(d.w, d.screen, &screen);
    const score_res *s = weft_resource_get(d.w, d.score, sizeof *s);
    snprintf(summary, cap,
             "screen %s, games %d, best %d, hp %d; buttons %" PRId64 ", enemies %" PRId64
             ", overlays %" PRId64 ", score cards %" PRId64,
             value_str(0, screen), s->games, s->best, s->hp, census(d.w, d.button),
             census(d.w, d.enemy), census(d.w, d.overlay), census(d.w, d.card));
    uint64_t hash = weft_world_hash(d.w);
    weft_app_destroy(d.app);
    return hash;
}

#ifndef WEFT_STATES_EXAMPLE_NO_MAIN
int main(int argc, char **argv)
{
    int32_t threads = argc > 1 ? atoi(argv[1]) : 4;
    int32_t frames = argc > 2 ? atoi(argv[2]) : 150;
    int32_t enemies = argc > 3 ? atoi(argv[3]) : 2000;
    if (argc > 4) {
        states_hashes = fopen(argv[4], "w");
        if (states_hashes == NULL) {
            fprintf(stderr, "11_states: cannot write %s\n", argv[4]);
            return 1;
        }
    }
    char summary[256];
    uint64_t hash = states_demo_run(threads, frames, enemies, stdout, summary, sizeof summary);
    if (states_hashes && fclose(states_hashes) != 0) {
        fprintf(stderr, "11_states: writing %s failed\n", argv[4]);
        return 1;
    }
    printf("final state: %s\n", summary);
    printf("world hash: %016" PRIx64 "\n", hash);
    return 0;
}
#endif

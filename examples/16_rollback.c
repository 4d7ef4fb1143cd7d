/* examples/16_rollback.c - two peers of a small arena game in one process,
 * each a weft_app driven by a rollback session (include/weft_rollback.h,
 * docs/rollback.md), linked by a simulated link that loses, delays,
 * reorders and duplicates messages. Each peer feeds its own player's input
 * (input delay 2), sends it with the four previous ones (so a lost message
 * is covered by the next), receives the other's when the link delivers
 * them and exchanges the checksums of confirmed frames. Missing inputs
 * are predicted; a wrong prediction is rolled back and resimulated.
 *
 * Usage: weft_example_rollback [frames] [units] [loss%] [max latency]
 *   frames       frames each peer simulates (default 600, 10 s at 60 Hz)
 *   units        units per player (default 2000)
 *   loss%        messages lost (default 10)
 *   max latency  in frames, 1..N, uniformly (default 6)
 * Prints per peer: rollbacks per simulated second, frames resimulated,
 * the deepest rollback, how many checksums were compared, and whether
 * every confirmed frame's checksum agrees (exit 1 if not).
 * SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft_rollback.h"

#define PLAYERS 2
#define DELAY 2
#define WINDOW 10

typedef struct unit {
    int32_t x, y, vx, vy;
} unit;

typedef struct game {
    weft_app *app;
    weft_world *w;
    weft_component unit, owner, inputs;
    int32_t units;
} game;

/* Startup: each player's units on a grid. */
static void sys_spawn(weft_system_ctx *ctx, void *user)
{
    game *g = user;
    weft_commands *cmds = weft_system_commands(ctx);
    for (int32_t p = 0; p < PLAYERS; p++) {
        for (int32_t i = 0; i < g->units; i++) {
            unit u = {(i % 64) * 16 + p * 2048, (i / 64) * 16, 0, 0};
            weft_value vals[2] = {{g->unit, sizeof u, &u}, {g->owner, sizeof p, &p}};
            weft_cmd_spawn(cmds, vals, 2);
        }
    }
}

/* Update: every unit accelerates toward its player's input direction;
 * the fire bit gives a burst; positions wrap in a 4096 arena. */
static void sys_steer(weft_system_ctx *ctx, void *user)
{
    game *g = user;
    const weft_rollback_inputs *in =
        weft_system_resource(ctx, g->inputs, weft_rollback_inputs_size(PLAYERS, 1));
    weft_iter it;
    if (!in || weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        unit *u = weft_iter_field_mut(&it, 0, sizeof(unit));
        const int32_t *o = weft_iter_field(&it, 1, sizeof(int32_t));
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            const uint8_t *b = weft_rollback_input(in, o[i], NULL);
            int32_t ax = (int32_t)(*b & 3) - 1, ay = (int32_t)((*b >> 2) & 3) - 1;
            int32_t boost = (*b & 16) ? 3 : 1;
            u[i].vx = (u[i].vx * 7) / 8 + ax * boost;
            u[i].vy = (u[i].vy * 7) / 8 + ay * boost;
            u[i].x = (u[i].x + u[i].vx) & 4095;
            u[i].y = (u[i].y + u[i].vy) & 4095;
        }
    }
}

static weft_component reg(weft_world *w, const char *name, size_t size)
{
    weft_component_desc d = {0};
    d.name = name;
    d.size = size;
    return weft_component_register(w, &d);
}

static int game_init(game *g, int32_t units)
{
    memset(g, 0, sizeof *g);
    g->units = units;
    weft_app_desc ad = {0};
    ad.fixed_step = 1.0 / 60;
    g->app = weft_app_create(&ad);
    if (!g->app) {
        return -1;
    }
    g->w = weft_app_world(g->app);
    g->unit = reg(g->w, "unit", sizeof(unit));
    g->owner = reg(g->w, "owner", sizeof(int32_t));
    g->inputs = weft_rollback_inputs_register(g->w, PLAYERS, 1);
    weft_system_desc sd = {0};
    sd.name = "spawn";
    sd.fn = sys_spawn;
    sd.user = g;
    weft_query_desc q = {0};
    q.terms[0] = (weft_term){.id = g->unit, .access = WEFT_ACCESS_WRITE};
    q.terms[1] = (weft_term){.id = g->owner, .access = WEFT_ACCESS_READ};
    q.term_count = 2;
    weft_resource_use ru = {g->inputs, WEFT_ACCESS_READ};
    weft_system_desc md = {0};
    md.name = "steer";
    md.fn = sys_steer;
    md.user = g;
    md.queries = &q;
    md.query_count = 1;
    md.resources = &ru;
    md.resource_count = 1;
    if (!g->unit || !g->owner || !g->inputs ||
        !weft_app_add_system(g->app, WEFT_APP_STARTUP, &sd) ||
        !weft_app_add_system(g->app, WEFT_APP_UPDATE, &md)) {
        fprintf(stderr, "setup: %s\n", weft_last_error(g->w));
        return -1;
    }
    return 0;
}

/* ---- the simulated link ---- */

typedef struct msg {
    int64_t due;
    int32_t to;
    bool checksum;
    int64_t frame;
    uint64_t value;
} msg;

typedef struct link {
    msg *q;
    size_t n, cap;
    uint64_t rng;
    int32_t loss, latency;
    int64_t sent, lost;
} link;

static uint32_t rnd(link *l)
{
    l->rng ^= l->rng << 13;
    l->rng ^= l->rng >> 7;
    l->rng ^= l->rng << 17;
    return (uint32_t)(l->rng >> 11);
}

static void send(link *l, int64_t now, int32_t to, bool checksum, int64_t frame, uint64_t value)
{
    int copies = rnd(l) % 100 < 5 ? 2 : 1; /* duplicates */
    for (int c = 0; c < copies; c++) {
        l->sent++;
        if ((int32_t)(rnd(l) % 100) < l->loss) {
            l->lost++;
            continue;
        }
        if (l->n == l->cap) {
            l->cap = l->cap ? l->cap * 2 : 1024;
            msg *q = realloc(l->q, l->cap * sizeof *q);
            if (!q) {
                abort();
            }
            l->q = q;
        }
        l->q[l->n++] = (msg){now + 1 + (int64_t)(rnd(l) % (uint32_t)l->latency), to, checksum,
                             frame, value};
    }
}

/* ---- a peer ---- */

typedef struct peer {
    game g;
    weft_rollback_session *s;
    int32_t me;
    int64_t last_local, sent_ck;
    int64_t compared, waits;
} peer;

static uint8_t play(int32_t player, int64_t frame)
{
    /* a player who changes direction every few frames, with bursts */
    uint64_t x = (uint64_t)(frame / 5) * 2u + (uint64_t)player;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
    x ^= x >> 31;
    return (uint8_t)(x & 0x1f);
}

static void deliver(link *l, int64_t now, peer *peers)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        msg m = l->q[i];
        if (m.due > now) {
            l->q[k++] = m;
            continue;
        }
        peer *p = &peers[m.to];
        if (m.checksum) {
            if (weft_rollback_add_remote_checksum(p->s, m.frame, m.value) != WEFT_RB_DUPLICATE) {
                p->compared++;
            }
        } else {
            uint8_t b = (uint8_t)m.value;
            weft_rollback_add_remote_input(p->s, 1 - p->me, m.frame, &b, 1);
        }
    }
    l->n = k;
}

static void tick(peer *p, link *l, int64_t now, int64_t frames)
{
    weft_rollback_stats st;
    weft_rollback_get_stats(p->s, &st);
    if (st.frame >= frames) {
        return;
    }
    if (p->last_local < st.frame + DELAY) {
        uint8_t b = play(p->me, p->last_local + 1);
        if (weft_rollback_add_local_input(p->s, p->me, &b, 1, &p->last_local) != WEFT_RB_OK) {
            fprintf(stderr, "local input: %s\n", weft_rollback_last_error(p->s));
            exit(1);
        }
    }
    for (int64_t f = p->last_local - 4; f <= p->last_local; f++) {
        if (f >= DELAY) {
            send(l, now, 1 - p->me, false, f, play(p->me, f));
        }
    }
    weft_rollback_status s = weft_rollback_advance(p->s);
    if (s == WEFT_RB_WINDOW_FULL) {
        p->waits++;
    } else if (s != WEFT_RB_OK) {
        fprintf(stderr, "peer %d: %s\n", (int)p->me, weft_rollback_last_error(p->s));
        exit(1);
    }
    weft_rollback_get_stats(p->s, &st);
    for (int64_t f = p->sent_ck + 1; f <= st.confirmed_frame; f++) {
        uint64_t h;
        weft_rollback_checksum(p->s, f, &h);
        send(l, now, 1 - p->me, true, f, h);
        p->sent_ck = f;
    }
}

int main(int argc, char **argv)
{
    int64_t frames = argc > 1 ? atoll(argv[1]) : 600;
    int32_t units = argc > 2 ? atoi(argv[2]) : 2000;
    link l = {0};
    l.rng = 0x5eed;
    l.loss = argc > 3 ? atoi(argv[3]) : 10;
    l.latency = argc > 4 ? atoi(argv[4]) : 6;
    if (frames < 1 || frames > (1 << 19) || units < 1 || l.loss < 0 || l.loss > 90 || l.latency < 1) {
        fprintf(stderr, "usage: %s [frames] [units] [loss%%] [max latency]\n", argv[0]);
        return 2;
    }
    peer peers[2];
    for (int32_t i = 0; i < 2; i++) {
        peer *p = &peers[i];
        memset(p, 0, sizeof *p);
        p->me = i;
        p->last_local = DELAY - 1;
        p->sent_ck = -1;
        if (game_init(&p->g, units) != 0) {
            return 1;
        }
        weft_rollback_desc d = {0};
        d.app = p->g.app;
        d.players = PLAYERS;
        d.input_size = 1;
        d.local_players = 1u << i;
        d.input_delay = DELAY;
        d.max_rollback = WINDOW;
        /* keep every frame's checksum for the comparison at the end */
        d.checksum_history = (int32_t)(frames < (1 << 19) ? frames + 1024 : 1 << 20);
        weft_rollback_status st;
        p->s = weft_rollback_create(&d, &st);
        if (!p->s) {
            fprintf(stderr, "session: %s\n", weft_rollback_status_name(st));
            return 1;
        }
    }
    clock_t t0 = clock();
    /* run until every frame up to target - 1 is confirmed on both peers;
     * the last frames need the remote inputs of frames past the target, so
     * the peers may run a few frames further (limit) */
    const int64_t target = frames;
    for (int64_t now = 0;; now++) {
        deliver(&l, now, peers);
        tick(&peers[0], &l, now, frames);
        tick(&peers[1], &l, now, frames);
        weft_rollback_stats a, b;
        weft_rollback_get_stats(peers[0].s, &a);
        weft_rollback_get_stats(peers[1].s, &b);
        if (a.confirmed_frame >= target - 1 && b.confirmed_frame >= target - 1) {
            break;
        }
        if (now > target * 50 + 1000) {
            fprintf(stderr, "the peers did not converge\n");
            return 1;
        }
        if (a.frame >= frames && b.frame >= frames) {
            frames++;
        }
    }
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf("link: %lld messages, %lld lost (%d%%), latency 1..%d frames, input delay %d, "
           "window %d\n",
           (long long)l.sent, (long long)l.lost, (int)l.loss, (int)l.latency, DELAY, WINDOW);
    bool agree = true;
    for (int32_t i = 0; i < 2; i++) {
        weft_rollback_stats st;
        weft_rollback_get_stats(peers[i].s, &st);
        double sim_secs = (double)st.frame / 60.0;
        printf("peer %d: %lld frames, %lld rollbacks (%.1f per second), %lld frames "
               "resimulated, deepest %d, %lld waits for the window, %lld checksums compared\n",
               (int)i, (long long)st.frame, (long long)st.rollbacks,
               (double)st.rollbacks / sim_secs, (long long)st.frames_resimulated,
               (int)st.max_rollback_depth, (long long)peers[i].waits,
               (long long)peers[i].compared);
        agree = agree && !weft_rollback_desync_frame(peers[i].s, NULL);
    }
    int64_t upto = target - 1;
    for (int64_t f = 0; f <= upto; f++) {
        uint64_t ha, hb;
        if (weft_rollback_checksum(peers[0].s, f, &ha) != WEFT_RB_OK ||
            weft_rollback_checksum(peers[1].s, f, &hb) != WEFT_RB_OK || ha != hb) {
            agree = false;
            fprintf(stderr, "frame %lld: checksums differ or are missing\n", (long long)f);
            break;
        }
    }
    printf("%d units, %.2f s of CPU for both peers; checksums of frames 0..%lld: %s\n",
           (int)(units * PLAYERS), secs, (long long)upto, agree ? "agree" : "DIFFER");
    for (int32_t i = 0; i < 2; i++) {
        weft_rollback_destroy(peers[i].s);
        weft_app_destroy(peers[i].g.app);
    }
    free(l.q);
    return agree ? 0 : 1;
}

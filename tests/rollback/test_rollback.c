/* tests/rollback/test_rollback.c - the rollback library (weft_rollback,
 * include/weft_rollback.h): two peers over an in-memory transport with
 * latency, reordering and duplicates agree on every confirmed checksum;
 * a late input that differs from its prediction is rolled back to the
 * result of an on-time run; the window refuses to run ahead; the sync test
 * catches state kept outside the world and passes a deterministic app; a
 * desync is reported with its first frame and a diff naming the entity
 * and component; bad arguments are refused; every byte is given back.
 * SPDX-License-Identifier: MIT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "weft_rollback.h"

/* ---- a small deterministic game ---- */

typedef struct pos {
    int32_t x, y;
} pos;

typedef struct bullet {
    int32_t owner, ttl;
} bullet;

typedef struct game {
    weft_app *app;
    weft_world *w;
    weft_component pos, player, bullet, inputs;
    int32_t players;
    int64_t cheat_from; /* >= 0: player 1 moves one more from this frame */
    bool leak;          /* reads a counter kept outside the world */
} game;

static int64_t g_outside_counter; /* state outside the world (the bug) */

static void sys_spawn_players(weft_system_ctx *ctx, void *user)
{
    game *g = user;
    weft_commands *cmds = weft_system_commands(ctx);
    for (int32_t p = 0; p < g->players; p++) {
        pos v = {p * 10, 0};
        weft_value vals[2] = {{g->pos, sizeof v, &v}, {g->player, sizeof p, &p}};
        weft_cmd_spawn(cmds, vals, 2);
    }
}

static void sys_move(weft_system_ctx *ctx, void *user)
{
    game *g = user;
    const weft_rollback_inputs *in =
        weft_system_resource(ctx, g->inputs, weft_rollback_inputs_size(g->players, 1));
    weft_iter it;
    if (!in || weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    weft_commands *cmds = weft_system_commands(ctx);
    while (weft_iter_next(&it)) {
        pos *p = weft_iter_field_mut(&it, 0, sizeof(pos));
        const int32_t *pl = weft_iter_field(&it, 1, sizeof(int32_t));
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            const uint8_t *b = weft_rollback_input(in, pl[i], NULL);
            uint8_t v = b ? *b : 0;
            p[i].x += (int32_t)(v & 3) - 1;
            p[i].y += (int32_t)((v >> 3) & 3) - 1;
            if (g->cheat_from >= 0 && in->frame >= g->cheat_from && pl[i] == 1) {
                p[i].x += 1;
            }
            if (g->leak && in->frame >= 5 && pl[i] == 0) {
                p[i].y += (int32_t)(g_outside_counter++ & 0xffff);
            }
            if (v & 4) {
                bullet bv = {pl[i], 4};
                pos bp = p[i];
                weft_value vals[2] = {{g->bullet, sizeof bv, &bv}, {g->pos, sizeof bp, &bp}};
                weft_cmd_spawn(cmds, vals, 2);
            }
        }
    }
}

static void sys_bullets(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    weft_commands *cmds = weft_system_commands(ctx);
    while (weft_iter_next(&it)) {
        bullet *b = weft_iter_field_mut(&it, 0, sizeof(bullet));
        pos *p = weft_iter_field_mut(&it, 1, sizeof(pos));
        const weft_entity *es = weft_iter_entities(&it);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            p[i].x += 2;
            if (--b[i].ttl <= 0) {
                weft_cmd_despawn(cmds, es[i]);
            }
        }
    }
}

static weft_component reg(weft_world *w, const char *name, size_t size)
{
    weft_component_desc d = {0};
    d.name = name;
    d.size = size;
    weft_component c = weft_component_register(w, &d);
    assert_true(c != 0);
    return c;
}

static game *game_new(int32_t players, int32_t threads)
{
    game *g = calloc(1, sizeof *g);
    assert_non_null(g);
    g->players = players;
    g->cheat_from = -1;
    weft_app_desc ad = {0};
    ad.fixed_step = 1.0 / 60;
    g->app = weft_app_create(&ad);
    assert_non_null(g->app);
    g->w = weft_app_world(g->app);
    if (threads > 1) {
        assert_int_equal(weft_world_set_threads(g->w, threads), WEFT_OK);
    }
    g->pos = reg(g->w, "pos", sizeof(pos));
    g->player = reg(g->w, "player", sizeof(int32_t));
    g->bullet = reg(g->w, "bullet", sizeof(bullet));
    g->inputs = weft_rollback_inputs_register(g->w, players, 1);
    assert_true(g->inputs != 0);

    weft_system_desc sd = {0};
    sd.name = "spawn_players";
    sd.fn = sys_spawn_players;
    sd.user = g;
    assert_true(weft_app_add_system(g->app, WEFT_APP_STARTUP, &sd) != 0);

    weft_query_desc mq = {0};
    mq.terms[0] = (weft_term){.id = g->pos, .access = WEFT_ACCESS_WRITE};
    mq.terms[1] = (weft_term){.id = g->player, .access = WEFT_ACCESS_READ};
    mq.term_count = 2;
    weft_resource_use ru = {g->inputs, WEFT_ACCESS_READ};
    weft_system_desc md = {0};
    md.name = "move";
    md.fn = sys_move;
    md.user = g;
    md.queries = &mq;
    md.query_count = 1;
    md.resources = &ru;
    md.resource_count = 1;
    weft_node n1 = weft_app_add_system(g->app, WEFT_APP_UPDATE, &md);

    weft_query_desc bq = {0};
    bq.terms[0] = (weft_term){.id = g->bullet, .access = WEFT_ACCESS_WRITE};
    bq.terms[1] = (weft_term){.id = g->pos, .access = WEFT_ACCESS_WRITE};
    bq.term_count = 2;
    weft_system_desc bd = {0};
    bd.name = "bullets";
    bd.fn = sys_bullets;
    bd.user = g;
    bd.queries = &bq;
    bd.query_count = 1;
    weft_node n2 = weft_app_add_system(g->app, WEFT_APP_UPDATE, &bd);
    assert_true(n1 && n2);
    weft_node chain[2] = {n1, n2};
    assert_int_equal(weft_schedule_add_chain(weft_app_schedule(g->app, WEFT_APP_UPDATE), chain,
                                             2, 0),
                     WEFT_OK);
    return g;
}

static void game_free(game *g)
{
    assert_int_equal(weft_app_destroy(g->app), WEFT_OK);
    free(g);
}

/* The input script: changes often, so predictions (repeat the last
 * input) are often wrong. */
static uint8_t script(int32_t player, int64_t frame)
{
    uint64_t x = (uint64_t)frame * 0x9E3779B97F4A7C15ull ^ (uint64_t)(player + 1) * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 32;
    return (uint8_t)((frame / 3 + player) % 5 == 0 ? (x & 0x1f) : ((frame / 7) & 0x1b));
}

/* ---- an in-memory transport: latency, reordering, duplicates, loss ---- */

typedef struct msg {
    int64_t due;
    int32_t to;
    bool checksum;
    int32_t player;
    int64_t frame;
    uint64_t value;
} msg;

typedef struct net {
    msg *q;
    size_t n, cap;
    uint64_t rng;
    int32_t max_latency; /* ticks */
    int32_t dup_pct, loss_pct;
    int64_t now;
} net;

static uint32_t rnd(net *n)
{
    n->rng ^= n->rng << 13;
    n->rng ^= n->rng >> 7;
    n->rng ^= n->rng << 17;
    return (uint32_t)(n->rng >> 16);
}

static void net_send(net *n, int32_t to, bool checksum, int32_t player, int64_t frame,
                     uint64_t value)
{
    int copies = 1 + ((int32_t)(rnd(n) % 100) < n->dup_pct);
    for (int c = 0; c < copies; c++) {
        if ((int32_t)(rnd(n) % 100) < n->loss_pct) {
            continue;
        }
        if (n->n == n->cap) {
            n->cap = n->cap ? n->cap * 2 : 256;
            n->q = realloc(n->q, n->cap * sizeof *n->q);
            assert_non_null(n->q);
        }
        int64_t lat = n->max_latency > 0 ? 1 + (int64_t)(rnd(n) % (uint32_t)n->max_latency) : 0;
        n->q[n->n++] = (msg){n->now + lat, to, checksum, player, frame, value};
    }
}

typedef struct peer {
    game *g;
    weft_rollback_session *s;
    int32_t me;             /* its local player */
    int64_t sent_checksum;  /* checksums sent up to this frame */
    int64_t last_local;     /* frame of the last local input added */
    int32_t delay;
    int32_t window_full;    /* advances refused */
    int64_t desync_frame;
    uint8_t *desync_snap;   /* its snapshot of the desync frame */
    size_t desync_len;
} peer;

static void deliver(net *n, peer *peers, bool all)
{
    size_t k = 0;
    for (size_t i = 0; i < n->n; i++) {
        msg m = n->q[i];
        if (!all && m.due > n->now) {
            n->q[k++] = m;
            continue;
        }
        peer *p = &peers[m.to];
        if (m.checksum) {
            weft_rollback_status st = weft_rollback_add_remote_checksum(p->s, m.frame, m.value);
            assert_true(st == WEFT_RB_OK || st == WEFT_RB_DUPLICATE || st == WEFT_RB_DESYNC);
        } else {
            uint8_t b = (uint8_t)m.value;
            weft_rollback_status st = weft_rollback_add_remote_input(p->s, m.player, m.frame, &b, 1);
            if (st != WEFT_RB_OK && st != WEFT_RB_DUPLICATE) {
                fail_msg("remote input refused: %s: %s", weft_rollback_status_name(st),
                         weft_rollback_last_error(p->s));
            }
        }
    }
    n->n = k;
}

static void on_desync(weft_rollback_session *s, const weft_rollback_desync *d, void *user)
{
    peer *p = user;
    if (p->desync_frame >= 0) {
        return;
    }
    p->desync_frame = d->frame;
    const void *data;
    size_t len;
    if (weft_rollback_frame_snapshot(s, d->frame, &data, &len) == WEFT_RB_OK) {
        p->desync_snap = malloc(len);
        assert_non_null(p->desync_snap);
        memcpy(p->desync_snap, data, len);
        p->desync_len = len;
    }
}

static void peer_init(peer *p, int32_t me, int32_t threads, int32_t delay, int32_t window)
{
    memset(p, 0, sizeof *p);
    p->g = game_new(2, threads);
    p->me = me;
    p->sent_checksum = -1;
    p->last_local = delay - 1;
    p->delay = delay;
    p->desync_frame = -1;
    weft_rollback_desc d = {0};
    d.app = p->g->app;
    d.players = 2;
    d.input_size = 1;
    d.local_players = 1u << me;
    d.input_delay = delay;
    d.max_rollback = window;
    d.on_desync = on_desync;
    d.user = p;
    weft_rollback_status st;
    p->s = weft_rollback_create(&d, &st);
    assert_int_equal(st, WEFT_RB_OK);
    assert_non_null(p->s);
}

static void peer_free(peer *p)
{
    weft_rollback_destroy(p->s);
    game_free(p->g);
    free(p->desync_snap);
}

/* One tick of a peer: its local input (once per frame, sent with the
 * previous ones again: a lost or late message is covered by the next),
 * an advance (refused while the window is full), its new checksums. */
static void peer_tick(peer *p, net *n, int64_t max_frame)
{
    weft_rollback_stats st;
    weft_rollback_get_stats(p->s, &st);
    if (st.frame >= max_frame) {
        return;
    }
    if (p->last_local < st.frame + p->delay) {
        uint8_t b = script(p->me, p->last_local + 1);
        int64_t f = -1;
        assert_int_equal(weft_rollback_add_local_input(p->s, p->me, &b, 1, &f), WEFT_RB_OK);
        assert_int_equal(f, p->last_local + 1);
        p->last_local = f;
    }
    for (int64_t f = p->last_local - 4; f <= p->last_local; f++) {
        if (f >= p->delay) { /* frames before the delay are zeros everywhere */
            net_send(n, 1 - p->me, false, p->me, f, script(p->me, f));
        }
    }
    weft_rollback_status s = weft_rollback_advance(p->s);
    if (s == WEFT_RB_WINDOW_FULL) {
        p->window_full++;
    } else if (s != WEFT_RB_OK) {
        fail_msg("advance: %s: %s", weft_rollback_status_name(s), weft_rollback_last_error(p->s));
    }
    weft_rollback_get_stats(p->s, &st);
    for (int64_t f = p->sent_checksum + 1; f <= st.confirmed_frame; f++) {
        uint64_t h;
        assert_int_equal(weft_rollback_checksum(p->s, f, &h), WEFT_RB_OK);
        net_send(n, 1 - p->me, true, 0, f, h);
        p->sent_checksum = f;
    }
}

/* Runs both peers to `frames` frames, then flushes the link and runs one
 * more frame each so that every frame is confirmed. */
static void run_peers(peer *peers, net *n, int64_t frames)
{
    for (int64_t tick = 0; tick < frames * 8; tick++) {
        n->now = tick;
        deliver(n, peers, false);
        peer_tick(&peers[0], n, frames);
        peer_tick(&peers[1], n, frames);
        weft_rollback_stats a, b;
        weft_rollback_get_stats(peers[0].s, &a);
        weft_rollback_get_stats(peers[1].s, &b);
        if (a.frame >= frames && b.frame >= frames) {
            break;
        }
    }
    for (int round = 0; round < 3; round++) {
        deliver(n, peers, true);
        peer_tick(&peers[0], n, frames + 1 + round);
        peer_tick(&peers[1], n, frames + 1 + round);
    }
    deliver(n, peers, true);
}

static void two_peers_agree(void **state)
{
    (void)state;
    enum { FRAMES = 240 };
    net n = {0};
    n.rng = 0x1234567;
    n.max_latency = 4;
    n.dup_pct = 30;
    peer peers[2];
    /* peer 1 on two workers when the build has threads: the same hashes */
    weft_world *probe = weft_world_create(NULL);
    int32_t threads = weft_world_set_threads(probe, 2) == WEFT_OK ? 2 : 1;
    weft_world_destroy(probe);
    peer_init(&peers[0], 0, 1, 2, 8);
    peer_init(&peers[1], 1, threads, 2, 8);
    run_peers(peers, &n, FRAMES);
    weft_rollback_stats a, b;
    weft_rollback_get_stats(peers[0].s, &a);
    weft_rollback_get_stats(peers[1].s, &b);
    assert_true(a.confirmed_frame >= FRAMES);
    assert_true(b.confirmed_frame >= FRAMES);
    assert_true(a.rollbacks > 0 && b.rollbacks > 0);
    assert_true(a.frames_resimulated >= a.rollbacks);
    for (int64_t f = 0; f <= FRAMES; f++) {
        uint64_t ha, hb;
        assert_int_equal(weft_rollback_checksum(peers[0].s, f, &ha), WEFT_RB_OK);
        assert_int_equal(weft_rollback_checksum(peers[1].s, f, &hb), WEFT_RB_OK);
        if (ha != hb) {
            fail_msg("frame %lld: checksums differ", (long long)f);
        }
    }
    assert_int_equal(a.frame, b.frame);
    assert_true(weft_world_hash(peers[0].g->w) == weft_world_hash(peers[1].g->w));
    assert_false(weft_rollback_desync_frame(peers[0].s, NULL));
    assert_false(weft_rollback_desync_frame(peers[1].s, NULL));
    assert_int_equal(weft_world_check(peers[0].g->w), WEFT_OK);
    peer_free(&peers[0]);
    peer_free(&peers[1]);
    free(n.q);
}

/* A reference run: every player local, every input on time. */
static void reference_run(int64_t frames, uint64_t *checksums, uint64_t *final_hash)
{
    game *g = game_new(2, 1);
    weft_rollback_desc d = {0};
    d.app = g->app;
    d.players = 2;
    d.input_size = 1;
    d.local_players = 3;
    weft_rollback_session *s = weft_rollback_create(&d, NULL);
    assert_non_null(s);
    for (int64_t f = 0; f < frames; f++) {
        for (int32_t p = 0; p < 2; p++) {
            uint8_t b = script(p, f);
            assert_int_equal(weft_rollback_add_local_input(s, p, &b, 1, NULL), WEFT_RB_OK);
        }
        assert_int_equal(weft_rollback_advance(s), WEFT_RB_OK);
    }
    weft_rollback_stats st;
    weft_rollback_get_stats(s, &st);
    assert_int_equal(st.rollbacks, 0);
    assert_int_equal(st.predicted_inputs, 0);
    for (int64_t f = 0; f < frames; f++) {
        assert_int_equal(weft_rollback_checksum(s, f, &checksums[f]), WEFT_RB_OK);
    }
    *final_hash = weft_world_hash(g->w);
    weft_rollback_destroy(s);
    game_free(g);
}

static void late_input_rolls_back_to_the_on_time_result(void **state)
{
    (void)state;
    enum { FRAMES = 120, LATE = 5 };
    uint64_t ref[FRAMES], ref_hash;
    reference_run(FRAMES, ref, &ref_hash);

    game *g = game_new(2, 1);
    weft_rollback_desc d = {0};
    d.app = g->app;
    d.players = 2;
    d.input_size = 1;
    d.local_players = 1;
    d.max_rollback = 8;
    weft_rollback_session *s = weft_rollback_create(&d, NULL);
    assert_non_null(s);
    for (int64_t f = 0; f < FRAMES; f++) {
        uint8_t b = script(0, f);
        assert_int_equal(weft_rollback_add_local_input(s, 0, &b, 1, NULL), WEFT_RB_OK);
        if (f >= LATE) { /* player 1's input arrives LATE frames late */
            uint8_t r = script(1, f - LATE);
            assert_int_equal(weft_rollback_add_remote_input(s, 1, f - LATE, &r, 1), WEFT_RB_OK);
        }
        weft_rollback_status st = weft_rollback_advance(s);
        if (st != WEFT_RB_OK) {
            fail_msg("frame %lld: %s", (long long)f, weft_rollback_last_error(s));
        }
    }
    for (int64_t f = FRAMES - LATE; f < FRAMES; f++) {
        uint8_t r = script(1, f);
        assert_int_equal(weft_rollback_add_remote_input(s, 1, f, &r, 1), WEFT_RB_OK);
    }
    /* the world still holds predictions for the last frames: a frame more
     * (with the same inputs as the reference's next frame) settles them */
    weft_rollback_stats st;
    weft_rollback_get_stats(s, &st);
    assert_true(st.rollbacks > 0);
    int64_t resim_before = st.frames_resimulated;
    assert_true(st.confirmed_frame < FRAMES - 1);
    /* an advance rolls back to the first mispredicted frame and resimulates */
    uint8_t b = script(0, FRAMES);
    assert_int_equal(weft_rollback_add_local_input(s, 0, &b, 1, NULL), WEFT_RB_OK);
    uint8_t r = script(1, FRAMES);
    assert_int_equal(weft_rollback_add_remote_input(s, 1, FRAMES, &r, 1), WEFT_RB_OK);
    assert_int_equal(weft_rollback_advance(s), WEFT_RB_OK);
    weft_rollback_get_stats(s, &st);
    assert_true(st.frames_resimulated > resim_before);
    assert_true(st.max_rollback_depth >= LATE - 1);
    assert_int_equal(st.confirmed_frame, FRAMES);
    for (int64_t f = 0; f < FRAMES; f++) {
        uint64_t h;
        assert_int_equal(weft_rollback_checksum(s, f, &h), WEFT_RB_OK);
        if (h != ref[f]) {
            fail_msg("frame %lld: the rolled-back run's checksum differs from the on-time run's",
                     (long long)f);
        }
    }
    /* the reference after FRAMES frames, this session after FRAMES + 1:
     * compare the state after frame FRAMES - 1 through its snapshot */
    const void *data;
    size_t len;
    assert_int_equal(weft_rollback_frame_snapshot(s, FRAMES - 1, &data, &len), WEFT_RB_OK);
    game *probe = game_new(2, 1);
    assert_int_equal(weft_snapshot_restore(probe->w, data, len), WEFT_OK);
    assert_true(weft_world_hash(probe->w) == ref_hash);
    game_free(probe);
    weft_rollback_destroy(s);
    game_free(g);
}

static void window_overflow_is_refused(void **state)
{
    (void)state;
    game *g = game_new(2, 1);
    weft_rollback_desc d = {0};
    d.app = g->app;
    d.players = 2;
    d.input_size = 1;
    d.local_players = 1;
    d.max_rollback = 4;
    weft_rollback_session *s = weft_rollback_create(&d, NULL);
    assert_non_null(s);
    uint8_t b = 1;
    for (int f = 0; f < 4; f++) {
        assert_int_equal(weft_rollback_add_local_input(s, 0, &b, 1, NULL), WEFT_RB_OK);
        assert_int_equal(weft_rollback_advance(s), WEFT_RB_OK);
    }
    assert_int_equal(weft_rollback_add_local_input(s, 0, &b, 1, NULL), WEFT_RB_OK);
    uint64_t before = weft_world_hash(g->w);
    assert_int_equal(weft_rollback_advance(s), WEFT_RB_WINDOW_FULL);
    assert_non_null(strstr(weft_rollback_last_error(s), "wait for remote inputs"));
    assert_true(weft_world_hash(g->w) == before);
    /* the input was kept: adding it again is refused, advancing still is */
    assert_int_equal(weft_rollback_add_local_input(s, 0, &b, 1, NULL), WEFT_RB_ALREADY_ADDED);
    assert_int_equal(weft_rollback_advance(s), WEFT_RB_WINDOW_FULL);
    /* frames beyond the window are refused too */
    assert_int_equal(weft_rollback_add_remote_input(s, 1, 1000, &b, 1), WEFT_RB_TOO_NEW);
    /* one confirmation frees one frame */
    assert_int_equal(weft_rollback_add_remote_input(s, 1, 0, &b, 1), WEFT_RB_OK);
    assert_int_equal(weft_rollback_advance(s), WEFT_RB_OK);
    weft_rollback_stats st;
    weft_rollback_get_stats(s, &st);
    assert_int_equal(st.frame, 5);
    assert_int_equal(st.confirmed_frame, 0);
    /* the prediction for frame 0 (zeros) was wrong: rolled back to the
     * oldest frame of the window, all four frames run again */
    assert_int_equal(st.rollbacks, 1);
    assert_int_equal(st.frames_resimulated, 4);
    assert_int_equal(st.max_rollback_depth, 4);
    weft_rollback_destroy(s);
    game_free(g);
}

static int g_sync_reports;
static int64_t g_sync_frame;
static bool g_sync_named;
static weft_component g_sync_pos;

static void on_sync_desync(weft_rollback_session *s, const weft_rollback_desync *d, void *user)
{
    (void)s;
    game *g = user;
    if (g_sync_reports++ == 0) {
        g_sync_frame = d->frame;
    }
    for (int32_t i = 0; i < d->diff_count; i++) {
        if (d->diff[i].kind == WEFT_RB_DIFF_VALUE && d->diff[i].component == g_sync_pos &&
            weft_has(g->w, d->diff[i].entity, g->player)) {
            const int32_t *pl = weft_get(g->w, d->diff[i].entity, g->player, sizeof(int32_t));
            g_sync_named = g_sync_named || (pl && *pl == 0);
        }
    }
}

static weft_rollback_session *sync_session(game *g, int32_t check)
{
    weft_rollback_desc d = {0};
    d.app = g->app;
    d.players = 2;
    d.input_size = 1;
    d.sync_test = check;
    d.on_desync = on_sync_desync;
    d.user = g;
    weft_rollback_status st;
    weft_rollback_session *s = weft_rollback_create(&d, &st);
    assert_int_equal(st, WEFT_RB_OK);
    return s;
}

static weft_rollback_status sync_frame(weft_rollback_session *s, int64_t f)
{
    for (int32_t p = 0; p < 2; p++) {
        uint8_t b = script(p, f);
        assert_int_equal(weft_rollback_add_local_input(s, p, &b, 1, NULL), WEFT_RB_OK);
    }
    return weft_rollback_advance(s);
}

static void sync_test_passes_a_deterministic_app(void **state)
{
    (void)state;
    game *g = game_new(2, 1);
    g_sync_reports = 0;
    weft_rollback_session *s = sync_session(g, 4);
    for (int64_t f = 0; f < 80; f++) {
        weft_rollback_status st = sync_frame(s, f);
        if (st != WEFT_RB_OK) {
            fail_msg("frame %lld: %s", (long long)f, weft_rollback_last_error(s));
        }
    }
    weft_rollback_stats st;
    weft_rollback_get_stats(s, &st);
    assert_int_equal(st.sync_checks, (80 - 4 + 1) * 4); /* from the advance of frame 3 on */
    assert_int_equal(g_sync_reports, 0);
    assert_false(weft_rollback_desync_frame(s, NULL));
    /* the same hashes as a plain reference run */
    uint64_t ref[80], ref_hash;
    reference_run(80, ref, &ref_hash);
    for (int64_t f = 0; f < 80; f++) {
        uint64_t h;
        assert_int_equal(weft_rollback_checksum(s, f, &h), WEFT_RB_OK);
        assert_true(h == ref[f]);
    }
    assert_true(weft_world_hash(g->w) == ref_hash);
    weft_rollback_destroy(s);
    game_free(g);
}

static void sync_test_catches_state_outside_the_world(void **state)
{
    (void)state;
    game *g = game_new(2, 1);
    g->leak = true;
    g_sync_reports = 0;
    g_sync_named = false;
    g_sync_pos = g->pos;
    weft_rollback_session *s = sync_session(g, 3);
    weft_rollback_status first = WEFT_RB_OK;
    int64_t bad_at = -1;
    char message[512] = "";
    for (int64_t f = 0; f < 20; f++) {
        weft_rollback_status st = sync_frame(s, f);
        if (st != WEFT_RB_OK && first == WEFT_RB_OK) {
            first = st;
            bad_at = f;
            strncpy(message, weft_rollback_last_error(s), sizeof message - 1);
        }
    }
    assert_int_equal(first, WEFT_RB_DESYNC);
    /* frame 5 is the first that reads the counter; the advance of frame 5
     * resimulates frames 3..5 */
    assert_int_equal(bad_at, 5);
    assert_int_equal(g_sync_frame, 5);
    int64_t f;
    assert_true(weft_rollback_desync_frame(s, &f));
    assert_int_equal(f, 5);
    assert_true(g_sync_named); /* the diff names player 0's entity and pos */
    assert_non_null(strstr(message, "frame 5 resimulated"));
    weft_rollback_destroy(s);
    game_free(g);
}

static void desync_is_reported_with_frame_and_diff(void **state)
{
    (void)state;
    enum { FRAMES = 60, CHEAT = 30 };
    net n = {0};
    n.rng = 0xabcdef;
    n.max_latency = 2;
    n.dup_pct = 10;
    peer peers[2];
    peer_init(&peers[0], 0, 1, 1, 16);
    peer_init(&peers[1], 1, 1, 1, 16);
    peers[1].g->cheat_from = CHEAT; /* the other peer's move system differs */
    run_peers(peers, &n, FRAMES);
    for (int i = 0; i < 2; i++) {
        int64_t f;
        assert_true(weft_rollback_desync_frame(peers[i].s, &f));
        assert_int_equal(f, CHEAT);
        assert_int_equal(peers[i].desync_frame, CHEAT);
        assert_non_null(peers[i].desync_snap);
    }
    /* the two peers' snapshots of that frame, diffed in peer 0's live world */
    weft_world *w = peers[0].g->w;
    uint64_t live = weft_world_hash(w);
    weft_rollback_diff_entry out[8];
    int32_t count = 0;
    assert_int_equal(weft_rollback_diff(w, peers[0].desync_snap, peers[0].desync_len,
                                        peers[1].desync_snap, peers[1].desync_len, out, 8,
                                        &count, NULL),
                     WEFT_OK);
    assert_true(weft_world_hash(w) == live); /* the scratch world is back */
    assert_int_equal(count, 1);
    assert_int_equal(out[0].kind, WEFT_RB_DIFF_VALUE);
    assert_int_equal(out[0].component, peers[0].g->pos);
    const int32_t *pl = weft_get(w, out[0].entity, peers[0].g->player, sizeof(int32_t));
    assert_non_null(pl);
    assert_int_equal(*pl, 1);
    assert_string_equal(weft_rollback_diff_kind_name(out[0].kind), "value");
    peer_free(&peers[0]);
    peer_free(&peers[1]);
    free(n.q);
}

/* Diffs of worlds that differ in entities, components and resources. */
static void diff_names_entities_components_and_resources(void **state)
{
    (void)state;
    weft_world *w = weft_world_create(NULL);
    weft_component a = reg(w, "a", 4), b = reg(w, "b", 8), tag = reg(w, "tag", 0);
    weft_component res = reg(w, "res", 4);
    int32_t v = 1;
    uint64_t u = 2;
    weft_entity e1 = weft_spawn(w), e2 = weft_spawn(w), e3 = weft_spawn(w);
    weft_insert(w, e1, a, &v, 4);
    weft_insert(w, e2, a, &v, 4);
    weft_insert(w, e3, b, &u, 8);
    weft_resource_insert(w, res, &v, 4);
    size_t la = 0;
    assert_int_equal(weft_snapshot_write(w, NULL, 0, &la), WEFT_ERR_CAPACITY);
    void *sa = malloc(la);
    assert_int_equal(weft_snapshot_write(w, sa, la, &la), WEFT_OK);
    /* B: e1.a changed, e2 gets the tag and loses a... keeps b; e3 despawned,
     * e4 new, the resource changed */
    v = 7;
    weft_insert(w, e1, a, &v, 4);
    weft_insert(w, e2, tag, NULL, 0);
    weft_remove(w, e2, a);
    weft_insert(w, e2, b, &u, 8);
    weft_despawn(w, e3);
    weft_entity e4 = weft_spawn(w);
    weft_insert(w, e4, a, &v, 4);
    weft_resource_insert(w, res, &v, 4);
    size_t lb = 0;
    weft_snapshot_write(w, NULL, 0, &lb);
    void *sb = malloc(lb);
    assert_int_equal(weft_snapshot_write(w, sb, lb, &lb), WEFT_OK);
    weft_rollback_diff_entry out[16];
    int32_t count = 0;
    assert_int_equal(weft_rollback_diff(w, sa, la, sb, lb, out, 16, &count, NULL), WEFT_OK);
    weft_rollback_diff_entry want[] = {
        {WEFT_RB_DIFF_VALUE, e1, a},         {WEFT_RB_DIFF_ONLY_A, e2, a},
        {WEFT_RB_DIFF_ONLY_B, e2, b},        {WEFT_RB_DIFF_ONLY_B, e2, tag},
        {WEFT_RB_DIFF_ENTITY_ONLY_A, e3, 0}, {WEFT_RB_DIFF_RESOURCE_VALUE, 0, res},
    };
    /* e4 reuses e3's index with a new generation: it sorts after it */
    int32_t nwant = (int32_t)(sizeof want / sizeof want[0]);
    assert_int_equal(count, nwant + 1);
    int32_t k = 0;
    for (int32_t i = 0; i < count; i++) {
        if (out[i].entity == e4) {
            assert_int_equal(out[i].kind, WEFT_RB_DIFF_ENTITY_ONLY_B);
            continue;
        }
        assert_int_equal(out[i].kind, want[k].kind);
        assert_true(out[i].entity == want[k].entity);
        assert_int_equal(out[i].component, want[k].component);
        k++;
    }
    /* identical snapshots: nothing; a small cap still counts everything */
    assert_int_equal(weft_rollback_diff(w, sa, la, sa, la, out, 16, &count, NULL), WEFT_OK);
    assert_int_equal(count, 0);
    assert_int_equal(weft_rollback_diff(w, sa, la, sb, lb, out, 2, &count, NULL), WEFT_OK);
    assert_int_equal(count, nwant + 1);
    /* bad arguments and a corrupt blob */
    assert_int_equal(weft_rollback_diff(NULL, sa, la, sb, lb, out, 2, &count, NULL),
                     WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_rollback_diff(w, NULL, la, sb, lb, out, 2, &count, NULL),
                     WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_rollback_diff(w, sa, la, sb, lb, NULL, 2, &count, NULL),
                     WEFT_ERR_INVALID_ARG);
    uint64_t live = weft_world_hash(w);
    ((unsigned char *)sb)[lb / 2] ^= 0x55;
    assert_int_equal(weft_rollback_diff(w, sa, la, sb, lb, out, 16, &count, NULL),
                     WEFT_ERR_BAD_FORMAT);
    assert_true(weft_world_hash(w) == live);
    free(sa);
    free(sb);
    weft_world_destroy(w);
}

/* ---- bad arguments, statuses, the allocator ---- */

static int64_t g_live_bytes;
static int64_t g_allocs;

static void *count_alloc(size_t size, size_t align, void *user)
{
    (void)align, (void)user;
    g_live_bytes += (int64_t)size;
    g_allocs++;
    return malloc(size);
}

static void count_free(void *p, size_t size, size_t align, void *user)
{
    (void)align, (void)user;
    g_live_bytes -= (int64_t)size;
    free(p);
}

static void bad_arguments_are_refused(void **state)
{
    (void)state;
    game *g = game_new(2, 1);
    weft_rollback_desc d = {0};
    weft_rollback_status st;
    assert_null(weft_rollback_create(NULL, &st));
    assert_int_equal(st, WEFT_RB_INVALID_ARG);
    assert_null(weft_rollback_create(&d, &st)); /* no app */
    d.app = g->app;
    d.players = 2;
    d.input_size = 1;
    weft_rollback_desc bad = d;
    bad.players = 0;
    assert_null(weft_rollback_create(&bad, &st));
    bad = d;
    bad.players = WEFT_ROLLBACK_MAX_PLAYERS + 1;
    assert_null(weft_rollback_create(&bad, &st));
    bad = d;
    bad.input_size = 0;
    assert_null(weft_rollback_create(&bad, &st));
    bad = d;
    bad.local_players = 4; /* player 2 of 2 */
    assert_null(weft_rollback_create(&bad, &st));
    bad = d;
    bad.max_rollback = 4;
    bad.sync_test = 4; /* needs a window above it */
    assert_null(weft_rollback_create(&bad, &st));
    bad = d;
    bad._end_canary = 1;
    assert_null(weft_rollback_create(&bad, &st));
    bad = d;
    bad.allocator.alloc = count_alloc; /* one function only */
    assert_null(weft_rollback_create(&bad, &st));
    assert_int_equal(st, WEFT_RB_INVALID_ARG);
    bad = d;
    bad.input_size = 9; /* the world's inputs resource has another size */
    assert_null(weft_rollback_create(&bad, &st));
    assert_int_equal(st, WEFT_RB_WEFT_ERROR);

    d.local_players = 1;
    d.input_delay = 2;
    d.allocator.alloc = count_alloc;
    d.allocator.free = count_free;
    g_live_bytes = 0;
    g_allocs = 0;
    weft_rollback_session *s = weft_rollback_create(&d, &st);
    assert_int_equal(st, WEFT_RB_OK);
    uint8_t b = 3, two[2] = {0};
    int64_t f;
    assert_int_equal(weft_rollback_add_local_input(NULL, 0, &b, 1, &f), WEFT_RB_INVALID_ARG);
    assert_int_equal(weft_rollback_add_local_input(s, 1, &b, 1, &f), WEFT_RB_INVALID_ARG);
    assert_non_null(strstr(weft_rollback_last_error(s), "not local"));
    assert_int_equal(weft_rollback_add_local_input(s, 0, NULL, 1, &f), WEFT_RB_INVALID_ARG);
    assert_int_equal(weft_rollback_add_local_input(s, 0, two, 2, &f), WEFT_RB_INVALID_ARG);
    assert_int_equal(weft_rollback_add_local_input(s, 5, &b, 1, &f), WEFT_RB_INVALID_ARG);
    /* the delay: frames 0 and 1 are confirmed zeros; the first input is frame 2's */
    assert_int_equal(weft_rollback_add_local_input(s, 0, &b, 1, &f), WEFT_RB_OK);
    assert_int_equal(f, 2);
    assert_int_equal(weft_rollback_add_local_input(s, 0, &b, 1, &f), WEFT_RB_ALREADY_ADDED);
    assert_int_equal(weft_rollback_add_remote_input(s, 0, 3, &b, 1), WEFT_RB_INVALID_ARG);
    assert_int_equal(weft_rollback_add_remote_input(s, 1, -1, &b, 1), WEFT_RB_INVALID_ARG);
    assert_int_equal(weft_rollback_add_remote_input(s, 1, 3, two, 2), WEFT_RB_INVALID_ARG);
    assert_int_equal(weft_rollback_add_remote_input(s, 1, 0, &b, 1), WEFT_RB_CONFLICT);
    uint8_t zero = 0;
    assert_int_equal(weft_rollback_add_remote_input(s, 1, 0, &zero, 1), WEFT_RB_DUPLICATE);
    assert_int_equal(weft_rollback_add_remote_input(s, 1, 2, &b, 1), WEFT_RB_OK);
    assert_int_equal(weft_rollback_add_remote_input(s, 1, 2, &b, 1), WEFT_RB_DUPLICATE);
    uint8_t other = 9;
    assert_int_equal(weft_rollback_add_remote_input(s, 1, 2, &other, 1), WEFT_RB_CONFLICT);
    assert_int_equal(weft_rollback_add_remote_input(s, 1, 1000, &b, 1), WEFT_RB_TOO_NEW);
    uint64_t h;
    assert_int_equal(weft_rollback_checksum(s, 0, &h), WEFT_RB_NOT_FOUND);
    assert_int_equal(weft_rollback_checksum(s, 0, NULL), WEFT_RB_INVALID_ARG);
    assert_int_equal(weft_rollback_advance(s), WEFT_RB_OK);
    assert_int_equal(weft_rollback_checksum(s, 0, &h), WEFT_RB_OK);
    assert_true(h == weft_world_hash(g->w));
    /* frame 1: a local input (for frame 3) must come first */
    assert_int_equal(weft_rollback_advance(s), WEFT_RB_OK); /* frame 1 had its (delay) input */
    assert_int_equal(weft_rollback_advance(s), WEFT_RB_OK); /* frame 2: added above */
    assert_int_equal(weft_rollback_advance(s), WEFT_RB_NEED_LOCAL_INPUT);
    assert_non_null(strstr(weft_rollback_last_error(s), "local player 0"));
    assert_int_equal(weft_rollback_add_remote_checksum(s, -1, 1), WEFT_RB_INVALID_ARG);
    assert_int_equal(weft_rollback_add_remote_checksum(s, 0, h), WEFT_RB_OK);
    assert_int_equal(weft_rollback_add_remote_checksum(s, 0, h), WEFT_RB_DUPLICATE);
    assert_false(weft_rollback_desync_frame(s, NULL));
    assert_int_equal(weft_rollback_add_remote_checksum(s, 1, h ^ 1), WEFT_RB_DESYNC);
    assert_true(weft_rollback_desync_frame(s, &f));
    assert_int_equal(f, 1);
    assert_int_equal(weft_rollback_add_remote_checksum(s, 100000, 1), WEFT_RB_TOO_NEW);
    const void *data;
    size_t len;
    assert_int_equal(weft_rollback_frame_snapshot(s, 0, &data, &len), WEFT_RB_OK);
    assert_int_equal(weft_rollback_frame_snapshot(s, 50, &data, &len), WEFT_RB_NOT_FOUND);
    assert_int_equal(weft_rollback_frame_snapshot(s, 0, NULL, &len), WEFT_RB_INVALID_ARG);
    assert_int_equal(weft_rollback_advance(NULL), WEFT_RB_INVALID_ARG);
    assert_int_equal(weft_rollback_get_stats(s, NULL), WEFT_RB_INVALID_ARG);
    assert_int_equal(weft_rollback_inputs_id(s), g->inputs);
    assert_int_equal(weft_rollback_weft_status(s), WEFT_OK);
    assert_string_equal(weft_rollback_status_name(WEFT_RB_WINDOW_FULL), "WEFT_RB_WINDOW_FULL");
    assert_string_equal(weft_rollback_status_name((weft_rollback_status)99), "WEFT_RB_UNKNOWN");
    assert_true(g_allocs > 0 && g_live_bytes > 0);
    weft_rollback_destroy(s);
    assert_int_equal(g_live_bytes, 0); /* every byte went back through the allocator */
    weft_rollback_destroy(NULL);
    /* the inputs resource helpers */
    assert_int_equal(weft_rollback_inputs_size(0, 1), 0);
    assert_int_equal(weft_rollback_inputs_size(2, 0), 0);
    assert_int_equal(weft_rollback_inputs_register(NULL, 2, 1), 0);
    assert_int_equal(weft_rollback_inputs_register(g->w, 2, 1), g->inputs);
    assert_null(weft_rollback_input(NULL, 0, NULL));
    game_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_peers_agree),
        cmocka_unit_test(late_input_rolls_back_to_the_on_time_result),
        cmocka_unit_test(window_overflow_is_refused),
        cmocka_unit_test(sync_test_passes_a_deterministic_app),
        cmocka_unit_test(sync_test_catches_state_outside_the_world),
        cmocka_unit_test(desync_is_reported_with_frame_and_diff),
        cmocka_unit_test(diff_names_entities_components_and_resources),
        cmocka_unit_test(bad_arguments_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/api/test_api_snapshot.c - binary snapshots: round trips over
// random worlds (hash, invariants, and the same future: the same later
// operations give the same hashes and ids), rollback of a deterministic
// app with systems (300 frames, snapshot at 100, every later frame's hash
// compared), and bad input: truncated, bit-flipped, wrong version, other
// byte order, oversized, lying content with a valid checksum, mismatched
// registrations, non-empty targets; each refused with the target world
// unchanged. Allocation failures at every step of a restore.
// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "test_world.h"
#include "weft.h"

// ---- a world with every kind of state ----

typedef struct ids {
    weft_component pos, vel, hp, tag, stag, child_of, gold;
    weft_message_type hit;
} ids;

typedef struct vec3 {
    float x, y, z;
} vec3;

static ids register_all(weft_world *w)
{
    ids c;
    c.pos = tw_comp(w, "pos", sizeof(vec3), 4, WEFT_STORAGE_TABLE, 0);
    c.vel = tw_comp(w, "vel", 8, 8, WEFT_STORAGE_TABLE, 0);
    c.hp = tw_comp(w, "hp", 4, 4, WEFT_STORAGE_SPARSE, 0);
    c.tag = tw_comp(w, "tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    c.stag = tw_comp(w, "stag", 0, 0, WEFT_STORAGE_SPARSE, 0);
    c.gold = tw_comp(w, "gold", 8, 8, WEFT_STORAGE_TABLE, 0);
    c.child_of = weft_child_of(w);
    assert_true(c.child_of != 0);
    weft_message_desc md = {0};
    md.name = "hit";
    md.size = 8;
    c.hit = weft_message_register(w, &md);
    assert_true(c.hit != 0);
    assert_int_equal(weft_removed_track(w, c.hp), WEFT_OK);
    return c;
}

static weft_entity pick_live(weft_world *w, weft_entity *ents, int n, tw_rng *r)
{
    for (int tries = 0; tries < 8; tries++) {
        weft_entity e = ents[tw_rng_below(r, (uint32_t)n)];
        if (e && weft_is_alive(w, e)) {
            return e;
        }
    }
    return 0;
}

// Applies `steps` random operations; ents[0..n) remembers spawned ids.
static void random_ops(weft_world *w, const ids *c, tw_rng *r, weft_entity *ents, int n,
                       int steps)
{
    for (int s = 0; s < steps; s++) {
        uint32_t op = tw_rng_below(r, 12);
        weft_entity e = pick_live(w, ents, n, r);
        uint64_t v = tw_rng_next(r);
        vec3 p = {(float)(v & 0xFF), (float)((v >> 8) & 0xFF), 1.0f};
        switch (op) {
        case 0:
        case 1: {
            weft_value vals[3] = {{c->pos, sizeof p, &p}, {c->vel, 8, &v}, {c->tag, 0, NULL}};
            int k = 1 + (int)tw_rng_below(r, 3);
            weft_entity x = weft_spawn_with(w, vals, k);
            assert_true(x != 0);
            ents[tw_rng_below(r, (uint32_t)n)] = x;
            break;
        }
        case 2:
            if (e) {
                uint32_t hp = (uint32_t)v;
                assert_int_equal(weft_insert(w, e, c->hp, &hp, 4), WEFT_OK);
            }
            break;
        case 3:
            if (e) {
                assert_int_equal(weft_insert(w, e, c->stag, NULL, 0), WEFT_OK);
            }
            break;
        case 4:
            if (e) {
                assert_int_equal(weft_remove(w, e, tw_rng_chance(r, 50) ? c->hp : c->vel),
                                 WEFT_OK);
            }
            break;
        case 5:
            if (e) {
                assert_int_equal(weft_despawn(w, e), WEFT_OK);
            }
            break;
        case 6: {
            weft_entity parent = pick_live(w, ents, n, r);
            if (e && parent && e != parent) {
                weft_status st = weft_set_parent(w, e, parent);
                assert_true(st == WEFT_OK || st == WEFT_ERR_RELATIONSHIP);
            }
            break;
        }
        case 7:
            if (tw_rng_chance(r, 70)) {
                assert_int_equal(weft_resource_insert(w, c->gold, &v, 8), WEFT_OK);
            } else {
                assert_int_equal(weft_resource_remove(w, c->gold), WEFT_OK);
            }
            break;
        case 8:
            assert_int_equal(weft_message_write(w, c->hit, &v, 8), WEFT_OK);
            break;
        case 9:
            if (tw_rng_chance(r, 30)) {
                weft_messages_update(w);
            }
            break;
        case 10:
            if (e) {
                vec3 *q = weft_get_mut(w, e, c->pos, sizeof *q);
                if (q) {
                    q->x += 1.0f;
                }
            }
            weft_world_increment_change_tick(w);
            break;
        default:
            if (e) {
                assert_int_equal(weft_remove(w, e, c->child_of), WEFT_OK);
            }
            break;
        }
    }
}

static tw_fixture *second_fixture(void)
{
    tw_fixture *f = tw_fixture_new();
    assert_non_null(f);
    return f;
}

static void *take_snapshot(weft_world *w, size_t *len)
{
    size_t need = 0;
    assert_int_equal(weft_snapshot_write(w, NULL, 0, &need), WEFT_ERR_CAPACITY);
    assert_true(need > 64);
    void *buf = malloc(need);
    assert_non_null(buf);
    assert_int_equal(weft_snapshot_write(w, buf, need, len), WEFT_OK);
    assert_int_equal(*len, need);
    return buf;
}

// Order of a Pos query's iteration, hashed: equal iff same order.
static uint64_t iteration_order(weft_world *w, weft_component pos)
{
    weft_query_desc qd = {0};
    qd.terms[0].id = pos;
    qd.term_count = 1;
    weft_query *q = weft_query_create(w, &qd);
    assert_non_null(q);
    weft_iter it;
    uint64_t h = 0;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
        const weft_entity *es = weft_iter_entities(&it);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            h = h * 1000003u ^ es[i];
        }
    }
    assert_int_equal(weft_query_destroy(w, q), WEFT_OK);
    return h;
}

// A world of random content: its fixture, ids and the spawned ids.
static tw_fixture *random_world(uint64_t seed, int steps, ids *c, weft_entity ents[64])
{
    tw_fixture *f = second_fixture();
    *c = register_all(f->w);
    tw_rng r;
    tw_rng_seed(&r, seed);
    memset(ents, 0, 64 * sizeof *ents);
    random_ops(f->w, c, &r, ents, 64, steps);
    return f;
}

// The same random operations (from `seed`) on two worlds that should be
// equal: the same ids and hashes come out.
static void expect_same_future(weft_world *a, const ids *ca, weft_world *b, const ids *cb,
                               const weft_entity ents[64], uint64_t seed, const char *what)
{
    tw_rng ra, rb;
    tw_rng_seed(&ra, seed);
    tw_rng_seed(&rb, seed);
    weft_entity ea[64], eb[64];
    memcpy(ea, ents, sizeof ea);
    memcpy(eb, ents, sizeof eb);
    random_ops(a, ca, &ra, ea, 64, 150);
    random_ops(b, cb, &rb, eb, 64, 150);
    assert_memory_equal(ea, eb, sizeof ea);
    if (weft_world_hash(a) != weft_world_hash(b)) {
        fail_msg("%s: hash differs after the same later operations", what);
    }
}

static void snapshot_round_trip_random_worlds(void **state)
{
    (void)state;
    bool overridden = false;
    uint64_t seed0 = tw_seed_from_env(0x5EED5EEDull, &overridden);
    for (uint64_t round = 0; round < 12; round++) {
        uint64_t seed = seed0 + round;
        ids ca;
        weft_entity ents[64];
        tw_fixture *a = random_world(seed, 200 + (int)(round * 40), &ca, ents);
        size_t len = 0;
        void *blob = take_snapshot(a->w, &len);

        tw_fixture *b = second_fixture();
        ids cb = register_all(b->w);
        assert_int_equal(weft_snapshot_restore(b->w, blob, len), WEFT_OK);
        assert_int_equal(weft_world_check(b->w), WEFT_OK);
        if (weft_world_hash(a->w) != weft_world_hash(b->w)) {
            fail_msg("seed %llu: hash differs after restore", (unsigned long long)seed);
        }
        // a second snapshot of the restored world is byte-identical
        size_t len2 = 0;
        void *blob2 = take_snapshot(b->w, &len2);
        assert_int_equal(len, len2);
        assert_memory_equal(blob, blob2, len);
        free(blob2);
        weft_world_stats sa, sb;
        assert_int_equal(weft_world_get_stats(a->w, &sa), WEFT_OK);
        assert_int_equal(weft_world_get_stats(b->w, &sb), WEFT_OK);
        assert_int_equal(sa.live_entities, sb.live_entities);
        assert_int_equal(iteration_order(a->w, ca.pos), iteration_order(b->w, cb.pos));
        assert_int_equal(weft_world_change_tick(a->w), weft_world_change_tick(b->w));
        // the same future: same ids, same hashes
        expect_same_future(a->w, &ca, b->w, &cb, ents, seed * 31 + 7, "round trip");
        // messages and removals read the same
        weft_message_cursor ka = {0}, kb = {0};
        const uint64_t *ma, *mb;
        while ((ma = weft_message_read(a->w, ca.hit, &ka, 8)) != NULL) {
            mb = weft_message_read(b->w, cb.hit, &kb, 8);
            assert_non_null(mb);
            assert_true(*ma == *mb);
        }
        assert_null(weft_message_read(b->w, cb.hit, &kb, 8));
        free(blob);
        tw_fixture_free(a);
        tw_fixture_free(b);
    }
}

// ---- rollback: a deterministic app with systems ----

typedef struct app {
    tw_fixture *f;
    ids c;
    weft_schedule *sched;
} app;

static void sys_move(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        // only some rows change, so Changed readers depend on their ticks
        vec3 *p = weft_iter_field_mut_nomark(&it, 0, sizeof(vec3));
        const uint64_t *v = weft_iter_field(&it, 1, 8);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            if ((v[i] & 3) == 0) {
                continue;
            }
            p[i].x += (float)(v[i] & 7) * 0.25f;
            p[i].y -= 0.5f;
            weft_iter_mark(&it, 0, i);
        }
    }
}

// Counts Changed<pos> into the gold resource and writes a message per
// changed entity that fell below zero: depends on last-run ticks.
static void sys_watch(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    uint64_t *gold = weft_system_resource_mut(ctx, *(weft_component *)user, 8);
    if (!gold || weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        const vec3 *p = weft_iter_field(&it, 0, sizeof(vec3));
        const weft_entity *es = weft_iter_entities(&it);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            *gold += 1;
            if (p[i].y < 0.0f) {
                weft_commands *cmds = weft_system_commands(ctx);
                weft_cmd_despawn(cmds, es[i]);
            }
        }
    }
}

// Spawns a few entities per frame, deterministic from the gold count.
static void sys_spawn(weft_system_ctx *ctx, void *user)
{
    const ids *c = user;
    const uint64_t *gold = weft_system_resource(ctx, c->gold, 8);
    uint64_t g = gold ? *gold : 0;
    weft_commands *cmds = weft_system_commands(ctx);
    for (uint64_t k = 0; k < 1 + g % 3; k++) {
        vec3 p = {(float)k, (float)(g % 17), 0};
        uint64_t v = g * 7 + k;
        weft_value vals[2] = {{c->pos, sizeof p, &p}, {c->vel, 8, &v}};
        weft_cmd_spawn(cmds, vals, 2);
    }
}

static app app_new(void)
{
    app a;
    a.f = second_fixture();
    a.c = register_all(a.f->w);
    a.sched = weft_schedule_create(a.f->w, "update");
    assert_non_null(a.sched);
    static ids cs; // systems read ids through user pointers
    cs = a.c;
    weft_query_desc mq = {0};
    mq.terms[0] = (weft_term){.id = a.c.pos, .access = WEFT_ACCESS_WRITE};
    mq.terms[1] = (weft_term){.id = a.c.vel, .access = WEFT_ACCESS_READ};
    mq.term_count = 2;
    weft_system_desc d1 = {0};
    d1.name = "move";
    d1.fn = sys_move;
    d1.queries = &mq;
    d1.query_count = 1;
    weft_node n1 = weft_schedule_add_system(a.sched, &d1);
    weft_query_desc wq = {0};
    wq.terms[0] = (weft_term){.id = a.c.pos, .filter = WEFT_FILTER_CHANGED};
    wq.term_count = 1;
    weft_resource_use gold_w = {a.c.gold, WEFT_ACCESS_WRITE};
    weft_system_desc d2 = {0};
    d2.name = "watch";
    d2.fn = sys_watch;
    d2.user = &cs.gold;
    d2.queries = &wq;
    d2.query_count = 1;
    d2.resources = &gold_w;
    d2.resource_count = 1;
    weft_node n2 = weft_schedule_add_system(a.sched, &d2);
    weft_resource_use gold_r = {a.c.gold, WEFT_ACCESS_READ};
    weft_system_desc d3 = {0};
    d3.name = "spawn";
    d3.fn = sys_spawn;
    d3.user = &cs;
    d3.resources = &gold_r;
    d3.resource_count = 1;
    weft_node n3 = weft_schedule_add_system(a.sched, &d3);
    assert_true(n1 && n2 && n3);
    weft_node chain[3] = {n1, n2, n3};
    assert_int_equal(weft_schedule_add_chain(a.sched, chain, 3, 0), WEFT_OK);
    return a;
}

static void app_frame(app *a)
{
    assert_int_equal(weft_schedule_run(a->sched, 1.0 / 60), WEFT_OK);
    weft_messages_update(a->f->w);
}

static void snapshot_rollback_resimulates_every_frame(void **state)
{
    (void)state;
    enum { FRAMES = 300, SNAP_AT = 100 };
    app a = app_new();
    uint64_t g0 = 0;
    assert_int_equal(weft_resource_insert(a.f->w, a.c.gold, &g0, 8), WEFT_OK);
    uint64_t hashes[FRAMES + 1];
    void *blob = NULL;
    size_t len = 0;
    for (int frame = 1; frame <= FRAMES; frame++) {
        app_frame(&a);
        hashes[frame] = weft_world_hash(a.f->w);
        if (frame == SNAP_AT) {
            blob = take_snapshot(a.f->w, &len);
        }
    }
    app b = app_new();
    assert_int_equal(weft_snapshot_restore(b.f->w, blob, len), WEFT_OK);
    assert_int_equal(weft_world_hash(b.f->w), hashes[SNAP_AT]);
    for (int frame = SNAP_AT + 1; frame <= FRAMES; frame++) {
        app_frame(&b);
        if (weft_world_hash(b.f->w) != hashes[frame]) {
            fail_msg("frame %d: the resimulated hash differs", frame);
        }
    }
    // the same snapshot restored into a world without schedules (a tool)
    tw_fixture *tool = second_fixture();
    register_all(tool->w);
    assert_int_equal(weft_snapshot_restore(tool->w, blob, len), WEFT_OK);
    assert_int_equal(weft_world_hash(tool->w), hashes[SNAP_AT]);
    free(blob);
    tw_fixture_free(tool);
    tw_fixture_free(a.f);
    tw_fixture_free(b.f);
}

// ---- deltas ----

static void *take_delta(weft_world *w, uint32_t since, size_t *len)
{
    size_t need = 0;
    assert_int_equal(weft_snapshot_delta_write(w, since, NULL, 0, &need), WEFT_ERR_CAPACITY);
    void *buf = malloc(need);
    assert_non_null(buf);
    assert_int_equal(weft_snapshot_delta_write(w, since, buf, need, len), WEFT_OK);
    return buf;
}

static void *merge_into(weft_world *w, const void *base, size_t blen, const void *d,
                        size_t dlen, size_t *len)
{
    size_t need = 0;
    weft_status st = weft_snapshot_merge(w, base, blen, d, dlen, NULL, 0, &need);
    if (st != WEFT_ERR_CAPACITY) {
        fail_msg("merge: %s", weft_last_error(w));
    }
    void *buf = malloc(need);
    assert_non_null(buf);
    assert_int_equal(weft_snapshot_merge(w, base, blen, d, dlen, buf, need, len), WEFT_OK);
    return buf;
}

// base + d1 + ... + d50 (each merged into the previous result) is byte
// for byte the full snapshot taken with the last delta, at every step.
static void snapshot_delta_chain_equals_full(void **state)
{
    (void)state;
    tw_fixture *a = second_fixture();
    ids c = register_all(a->w);
    tw_rng r;
    tw_rng_seed(&r, 99);
    weft_entity ents[64] = {0};
    random_ops(a->w, &c, &r, ents, 64, 300);
    size_t cur_len = 0;
    void *cur = take_snapshot(a->w, &cur_len);
    uint32_t since = weft_world_change_tick(a->w);
    size_t smallest = SIZE_MAX;
    size_t full_at_smallest = 0;
    for (int k = 1; k <= 50; k++) {
        random_ops(a->w, &c, &r, ents, 64, 1 + (int)tw_rng_below(&r, 30));
        size_t dlen = 0;
        void *d = take_delta(a->w, since, &dlen);
        size_t mlen = 0;
        void *merged = merge_into(a->w, cur, cur_len, d, dlen, &mlen);
        size_t flen = 0;
        void *full = take_snapshot(a->w, &flen);
        if (mlen != flen || memcmp(merged, full, flen) != 0) {
            fail_msg("delta %d: the merged snapshot differs from the full one", k);
        }
        if (dlen < smallest) {
            smallest = dlen;
            full_at_smallest = flen;
        }
        // a delta is not a snapshot, and only fits its own base
        tw_fixture *t = second_fixture();
        register_all(t->w);
        assert_int_equal(weft_snapshot_restore(t->w, d, dlen), WEFT_ERR_BAD_FORMAT);
        size_t n;
        if (k > 1) {
            assert_int_equal(weft_snapshot_merge(t->w, full, flen, d, dlen, NULL, 0, &n),
                             WEFT_ERR_BAD_FORMAT);
        }
        assert_int_equal(weft_snapshot_merge(t->w, cur, cur_len, full, flen, NULL, 0, &n),
                         WEFT_ERR_BAD_FORMAT);
        tw_fixture_free(t);
        free(cur);
        free(d);
        free(full);
        cur = merged;
        cur_len = mlen;
        since = weft_world_change_tick(a->w);
        weft_world_increment_change_tick(a->w);
    }
    assert_true(smallest < full_at_smallest);
    tw_fixture *b = second_fixture();
    register_all(b->w);
    assert_int_equal(weft_snapshot_restore(b->w, cur, cur_len), WEFT_OK);
    assert_int_equal(weft_world_hash(b->w), weft_world_hash(a->w));
    free(cur);
    tw_fixture_free(a);
    tw_fixture_free(b);
}

// ---- bad input ----

static void rechecksum(uint8_t *b, size_t len)
{
    uint8_t h[64];
    memcpy(h, b, 64);
    memset(h + 32, 0, 8);
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, h, 64);
    XXH3_64bits_update(&st, b + 64, len - 64);
    uint64_t sum = XXH3_64bits_digest(&st);
    memcpy(b + 32, &sum, 8);
}

typedef struct bad_fixture {
    tw_fixture *src;
    void *blob;
    size_t len;
} bad_fixture;

static bad_fixture bad_setup(void)
{
    bad_fixture bf;
    bf.src = second_fixture();
    ids c = register_all(bf.src->w);
    tw_rng r;
    tw_rng_seed(&r, 42);
    weft_entity ents[32] = {0};
    random_ops(bf.src->w, &c, &r, ents, 32, 300);
    bf.blob = take_snapshot(bf.src->w, &bf.len);
    return bf;
}

// Restores `data` into a fresh registered world: expects `st` (any error
// when st is -1) and an unchanged, empty, consistent world.
static void expect_rejected(const void *data, size_t len, int st)
{
    tw_fixture *t = second_fixture();
    register_all(t->w);
    tw_snap before = tw_snap_take(t->w);
    weft_status got = weft_snapshot_restore(t->w, data, len);
    if (st >= 0) {
        assert_int_equal(got, st);
    } else {
        assert_true(got != WEFT_OK);
    }
    assert_true(strlen(weft_last_error(t->w)) > 0);
    tw_snap_expect_same_content(t->w, &before);
    weft_world_stats s;
    assert_int_equal(weft_world_get_stats(t->w, &s), WEFT_OK);
    assert_int_equal(s.live_entities, 0);
    tw_fixture_free(t);
}

static void snapshot_rejects_corrupt_input(void **state)
{
    (void)state;
    bad_fixture bf = bad_setup();
    uint8_t *b = malloc(bf.len + 64);
    assert_non_null(b);
    // truncated at many lengths, including inside the header
    for (size_t cut = 0; cut < bf.len; cut += 1 + cut / 7) {
        memcpy(b, bf.blob, bf.len);
        expect_rejected(b, cut, WEFT_ERR_BAD_FORMAT);
    }
    // single bit flips anywhere: the checksum catches them
    tw_rng r;
    tw_rng_seed(&r, 7);
    for (int k = 0; k < 64; k++) {
        memcpy(b, bf.blob, bf.len);
        size_t at = tw_rng_below(&r, (uint32_t)bf.len);
        b[at] ^= (uint8_t)(1u << tw_rng_below(&r, 8));
        expect_rejected(b, bf.len, WEFT_ERR_BAD_FORMAT);
    }
    // oversized: bytes appended
    memcpy(b, bf.blob, bf.len);
    memset(b + bf.len, 0, 64);
    expect_rejected(b, bf.len + 64, WEFT_ERR_BAD_FORMAT);
    // wrong version, even with a valid checksum
    memcpy(b, bf.blob, bf.len);
    uint32_t v = WEFT_SNAPSHOT_VERSION + 1;
    memcpy(b + 8, &v, 4);
    rechecksum(b, bf.len);
    expect_rejected(b, bf.len, WEFT_ERR_BAD_FORMAT);
    // the other byte order
    memcpy(b, bf.blob, bf.len);
    uint32_t bom = 0x04030201u;
    memcpy(b + 12, &bom, 4);
    expect_rejected(b, bf.len, WEFT_ERR_BAD_FORMAT);
    // not a snapshot at all
    memset(b, 'x', bf.len);
    expect_rejected(b, bf.len, WEFT_ERR_BAD_FORMAT);
    // a header announcing a huge payload
    memcpy(b, bf.blob, bf.len);
    uint64_t huge = UINT64_MAX / 2;
    memcpy(b + 24, &huge, 8);
    expect_rejected(b, bf.len, WEFT_ERR_BAD_FORMAT);
    free(b);
    free(bf.blob);
    tw_fixture_free(bf.src);
}

// Lying content with a valid checksum (what a hostile or buggy writer
// produces): every result is a clean error or a consistent world.
// Finds the 8-byte value v at or after `from` (SIZE_MAX when absent).
static size_t find_u64(const uint8_t *b, size_t len, size_t from, uint64_t v)
{
    for (size_t i = from; i + 8 <= len; i++) {
        if (memcmp(b + i, &v, 8) == 0) {
            return i;
        }
    }
    return SIZE_MAX;
}

// A State resource restored with a value that is none of its state's
// values, under a valid checksum: refused (BAD_FORMAT naming the resource)
// before anything changes; before, the world took it and ran transitions
// from a value the state does not have.
static weft_state register_screen(weft_world *w)
{
    static const weft_state_value vals[2] = {{0x5EED0001u, "Menu"}, {0x5EED0002u, "Game"}};
    weft_state_desc d;
    memset(&d, 0, sizeof d);
    d.name = "Screen";
    d.values = vals;
    d.value_count = 2;
    d.initial = 0x5EED0001u;
    weft_state s = weft_state_register(w, &d);
    assert_true(s != 0);
    return s;
}

static void snapshot_refuses_state_value_outside_its_state(void **state)
{
    (void)state;
    tw_fixture *src = second_fixture();
    weft_state s = register_screen(src->w);
    assert_int_equal(weft_state_transition(src->w), WEFT_OK);
    size_t len;
    uint8_t *blob = take_snapshot(src->w, &len);
    uint32_t menu = 0x5EED0001u, other = 0x5EED0003u;
    size_t at = SIZE_MAX;
    for (size_t i = 64; i + 4 <= len && at == SIZE_MAX; i++) {
        if (memcmp(blob + i, &menu, 4) == 0) {
            at = i; // the resources come before the transition message
        }
    }
    assert_true(at != SIZE_MAX);
    memcpy(blob + at, &other, 4);
    rechecksum(blob, len);
    tw_fixture *dst = second_fixture();
    weft_state ds = register_screen(dst->w);
    tw_snap before = tw_snap_take(dst->w);
    weft_status rst = weft_snapshot_restore(dst->w, blob, len);
    if (rst != WEFT_ERR_BAD_FORMAT) {
        fail_msg("restore: %s: %s", weft_status_name(rst), weft_last_error(dst->w));
    }
    assert_non_null(strstr(weft_last_error(dst->w), "State<Screen>"));
    tw_snap_expect_same(dst->w, &before);
    tw_fixture_free(dst);
    // unpatched, the same blob restores with the state where it was
    memcpy(blob + at, &menu, 4);
    rechecksum(blob, len);
    dst = second_fixture();
    ds = register_screen(dst->w);
    assert_int_equal(weft_snapshot_restore(dst->w, blob, len), WEFT_OK);
    uint32_t cur = 0;
    assert_int_equal(weft_state_get(dst->w, ds, &cur), WEFT_OK);
    assert_int_equal(cur, menu);
    (void)s;
    tw_fixture_free(dst);
    tw_fixture_free(src);
    free(blob);
}

// A target list that disagrees with its sources, under a valid checksum:
// p's children list [x, y] patched to [x, z] (z has no parent). Before,
// the restore accepted it: weft_children(p) named z, weft_parent(z) was 0,
// and despawning p killed z and left y naming a dead parent. Now refused
// before anything changes. A fixed-step accumulator that is negative or
// not finite is refused the same way.
static void snapshot_refuses_disagreeing_relationships(void **state)
{
    (void)state;
    tw_fixture *src = second_fixture();
    weft_world *w = src->w;
    weft_entity p = weft_spawn(w), x = weft_spawn(w), y = weft_spawn(w), z = weft_spawn(w);
    assert_int_equal(weft_set_parent(w, x, p), WEFT_OK);
    assert_int_equal(weft_set_parent(w, y, p), WEFT_OK);
    size_t len;
    uint8_t *blob = take_snapshot(w, &len);
    // the counted list: count 2, pad, x, y
    uint8_t pat[32];
    uint32_t two = 2, zero = 0;
    memcpy(pat, &two, 4);
    memcpy(pat + 4, &zero, 4);
    memcpy(pat + 8, &x, 8);
    memcpy(pat + 16, &y, 8);
    size_t at = SIZE_MAX;
    for (size_t i = 64; i + 24 <= len && at == SIZE_MAX; i++) {
        if (memcmp(blob + i, pat, 24) == 0) {
            at = i;
        }
    }
    assert_true(at != SIZE_MAX);
    memcpy(blob + at + 16, &z, 8);
    rechecksum(blob, len);
    tw_fixture *dst = second_fixture();
    assert_int_not_equal(weft_child_of(dst->w), 0);
    weft_status rst = weft_snapshot_restore(dst->w, blob, len);
    if (rst != WEFT_ERR_BAD_FORMAT) {
        fail_msg("restore: %s: %s", weft_status_name(rst), weft_last_error(dst->w));
    }
    assert_non_null(strstr(weft_last_error(dst->w), "does not name it back"));
    weft_world_stats st;
    assert_int_equal(weft_world_get_stats(dst->w, &st), WEFT_OK);
    assert_int_equal(st.entity_records, 0);
    tw_fixture_free(dst);
    // unpatched, the same blob restores and checks
    memcpy(blob + at + 16, &y, 8);
    rechecksum(blob, len);
    dst = second_fixture();
    assert_int_not_equal(weft_child_of(dst->w), 0);
    assert_int_equal(weft_snapshot_restore(dst->w, blob, len), WEFT_OK);
    assert_int_equal(weft_world_check(dst->w), WEFT_OK);
    tw_fixture_free(dst);
    (void)find_u64;
    free(blob);
    tw_fixture_free(src);
}

static void map_u64(uint8_t *at, const uint64_t *from, const uint64_t *to, int n)
{
    uint64_t v;
    memcpy(&v, at, 8);
    for (int i = 0; i < n; i++) {
        if (v == from[i]) {
            memcpy(at, &to[i], 8);
            return;
        }
    }
}

// A ChildOf cycle with both sides agreeing, under a valid checksum:
// A -> R2, B -> R1, L1 -> A, L2 -> B patched into A -> B, B -> A,
// L1 -> R2, L2 -> R1 with every list to match. Before, the restore
// accepted it and weft_despawn(A) never finished, growing memory.
static void snapshot_refuses_child_of_cycle(void **state)
{
    (void)state;
    tw_fixture *src = second_fixture();
    weft_world *w = src->w;
    weft_component cid = weft_child_of(w);
    weft_entity r1 = weft_spawn(w), r2 = weft_spawn(w), a = weft_spawn(w), b = weft_spawn(w);
    weft_entity l1 = weft_spawn(w), l2 = weft_spawn(w);
    assert_int_equal(weft_set_parent(w, a, r2), WEFT_OK);
    assert_int_equal(weft_set_parent(w, b, r1), WEFT_OK);
    assert_int_equal(weft_set_parent(w, l1, a), WEFT_OK);
    assert_int_equal(weft_set_parent(w, l2, b), WEFT_OK);
    // a third root and child, so that no table holds exactly two roots
    // (a table header [2 rows][1 column] would read like a ChildOf column)
    weft_entity r3 = weft_spawn(w), c3 = weft_spawn(w);
    assert_int_equal(weft_set_parent(w, c3, r3), WEFT_OK);
    size_t len;
    uint8_t *blob = take_snapshot(w, &len);
    // ChildOf columns: a header (component id, ticks flag) then the values,
    // in row order (either order is looked for)
    const uint64_t vfrom[4] = {r2, r1, a, b}, vto[4] = {b, a, r2, r1};
    // target lists: (count 1, pad) then the one item
    const uint64_t lfrom[4] = {a, b, l1, l2}, lto[4] = {l1, l2, b, a};
    int values = 0, items = 0;
    const uint64_t pairs[4][2] = {{r2, r1}, {r1, r2}, {a, b}, {b, a}};
    // only inside the tables section (sections: tag, pad, length, body
    // padded to 8;
    // the tables are the fourth)
    size_t t0 = 0, t1 = 0;
    for (size_t off = 64; off + 16 <= len;) {
        uint32_t tag;
        uint64_t slen;
        memcpy(&tag, blob + off, 4);
        memcpy(&slen, blob + off + 8, 8);
        if (tag == 4) {
            t0 = off + 16;
            t1 = t0 + (size_t)slen;
            break;
        }
        off += 16 + (((size_t)slen + 7) & ~(size_t)7);
    }
    assert_true(t1 > t0 && t1 <= len);
    for (size_t i = t0; i + 24 <= t1; i += 8) { // everything is 8-aligned
        uint32_t h0, h1;
        memcpy(&h0, blob + i, 4);
        memcpy(&h1, blob + i + 4, 4);
        uint64_t v0, v1;
        memcpy(&v0, blob + i + 8, 8);
        memcpy(&v1, blob + i + 16, 8);
        if (h0 == cid && h1 == 1) { // ChildOf's column, with ticks
            for (int k = 0; k < 4; k++) {
                if (v0 == pairs[k][0] && v1 == pairs[k][1]) {
                    map_u64(blob + i + 8, vfrom, vto, 4);
                    map_u64(blob + i + 16, vfrom, vto, 4);
                    values += 2;
                    i += 16;
                    break;
                }
            }
        } else if (h0 == 1 && h1 == 0) {
            for (int k = 0; k < 4; k++) {
                if (v0 == lfrom[k]) {
                    map_u64(blob + i + 8, lfrom, lto, 4);
                    items++;
                    i += 8;
                    break;
                }
            }
        }
    }
    assert_int_equal(values, 4);
    assert_int_equal(items, 4);
    rechecksum(blob, len);
    tw_fixture *dst = second_fixture();
    assert_int_not_equal(weft_child_of(dst->w), 0);
    assert_int_equal(weft_snapshot_restore(dst->w, blob, len), WEFT_ERR_BAD_FORMAT);
    assert_non_null(strstr(weft_last_error(dst->w), "cycle"));
    tw_fixture_free(dst);
    free(blob);
    tw_fixture_free(src);
}

// A saved component the target lacks is refused even when no value of it
// was saved (accepted before), as a message type already was.
static void snapshot_refuses_unknown_component_without_values(void **state)
{
    (void)state;
    tw_fixture *src = second_fixture();
    tw_comp(src->w, "Known", 4, 4, WEFT_STORAGE_TABLE, 0);
    tw_comp(src->w, "OnlyThere", 4, 4, WEFT_STORAGE_TABLE, 0);
    size_t len;
    uint8_t *blob = take_snapshot(src->w, &len);
    tw_fixture *dst = second_fixture();
    tw_comp(dst->w, "Known", 4, 4, WEFT_STORAGE_TABLE, 0);
    assert_int_equal(weft_snapshot_restore(dst->w, blob, len), WEFT_ERR_UNKNOWN_COMPONENT);
    assert_non_null(strstr(weft_last_error(dst->w), "OnlyThere"));
    tw_comp(dst->w, "OnlyThere", 4, 4, WEFT_STORAGE_TABLE, 0);
    assert_int_equal(weft_snapshot_restore(dst->w, blob, len), WEFT_OK);
    tw_fixture_free(dst);
    free(blob);
    tw_fixture_free(src);
}

static void snapshot_survives_lies_with_valid_checksum(void **state)
{
    (void)state;
    bad_fixture bf = bad_setup();
    uint8_t *b = malloc(bf.len);
    assert_non_null(b);
    tw_rng r;
    tw_rng_seed(&r, 1234);
    int refused = 0;
    for (int k = 0; k < 600; k++) {
        memcpy(b, bf.blob, bf.len);
        int flips = 1 + (int)tw_rng_below(&r, 3);
        for (int i = 0; i < flips; i++) {
            size_t at = 64 + tw_rng_below(&r, (uint32_t)(bf.len - 64));
            b[at] = (uint8_t)tw_rng_next(&r);
        }
        rechecksum(b, bf.len);
        tw_fixture *t = second_fixture();
        register_all(t->w);
        tw_snap before = tw_snap_take(t->w);
        weft_status st = weft_snapshot_restore(t->w, b, bf.len);
        if (st != WEFT_OK) {
            refused++;
            tw_snap_expect_same_content(t->w, &before);
        } else {
            assert_int_equal(weft_world_check(t->w), WEFT_OK);
        }
        tw_fixture_free(t);
    }
    assert_true(refused > 0);
    free(b);
    free(bf.blob);
    tw_fixture_free(bf.src);
}

static void snapshot_rejects_mismatched_targets(void **state)
{
    (void)state;
    bad_fixture bf = bad_setup();
    // a component registered with another size
    tw_fixture *t = second_fixture();
    tw_comp(t->w, "pos", 16, 4, WEFT_STORAGE_TABLE, 0);
    assert_int_equal(weft_snapshot_restore(t->w, bf.blob, bf.len), WEFT_ERR_SIZE_MISMATCH);
    tw_expect_error(t, WEFT_ERR_SIZE_MISMATCH, "pos");
    tw_fixture_free(t);
    // a component missing
    t = second_fixture();
    tw_comp(t->w, "pos", sizeof(vec3), 4, WEFT_STORAGE_TABLE, 0);
    assert_int_equal(weft_snapshot_restore(t->w, bf.blob, bf.len), WEFT_ERR_UNKNOWN_COMPONENT);
    tw_fixture_free(t);
    // a sparse component registered as a table one
    t = second_fixture();
    tw_comp(t->w, "pos", sizeof(vec3), 4, WEFT_STORAGE_TABLE, 0);
    tw_comp(t->w, "vel", 8, 8, WEFT_STORAGE_TABLE, 0);
    tw_comp(t->w, "hp", 4, 4, WEFT_STORAGE_TABLE, 0);
    assert_int_equal(weft_snapshot_restore(t->w, bf.blob, bf.len), WEFT_ERR_BAD_FORMAT);
    tw_expect_error(t, WEFT_ERR_BAD_FORMAT, "hp");
    tw_fixture_free(t);
    // a target with a reservation pending (a live target is restored in
    // place: see snapshot_restore_in_place_*)
    t = second_fixture();
    register_all(t->w);
    weft_entity e = weft_spawn(t->w);
    assert_true(weft_entity_reserve(t->w) != 0);
    tw_snap pending = tw_snap_take(t->w);
    assert_int_equal(weft_snapshot_restore(t->w, bf.blob, bf.len), WEFT_ERR_WRONG_PHASE);
    tw_expect_error(t, WEFT_ERR_WRONG_PHASE, "reservations");
    tw_snap_expect_same_content(t->w, &pending);
    assert_true(weft_is_alive(t->w, e));
    tw_fixture_free(t);
    // a schedule only the target has is left alone
    t = second_fixture();
    register_all(t->w);
    weft_schedule *s = weft_schedule_create(t->w, "other");
    assert_non_null(s);
    assert_int_equal(weft_snapshot_restore(t->w, bf.blob, bf.len), WEFT_OK);
    tw_fixture_free(t);
    // argument armor
    t = second_fixture();
    size_t n;
    assert_int_equal(weft_snapshot_restore(t->w, NULL, 10), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_snapshot_restore(NULL, bf.blob, bf.len), WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_snapshot_write(t->w, NULL, 0, NULL), WEFT_ERR_INVALID_ARG);
    char small[16];
    assert_int_equal(weft_snapshot_write(t->w, small, sizeof small, &n), WEFT_ERR_CAPACITY);
    assert_true(n > sizeof small);
    tw_fixture_free(t);
    free(bf.blob);
    tw_fixture_free(bf.src);
}

static void snapshot_refuses_owning_components(void **state)
{
    tw_fixture *f = *state;
    weft_component tr = tw_tracked_register(f->w, "tracked", WEFT_STORAGE_TABLE, &f->tracker);
    tw_tracked v;
    tw_tracked_make(&v, 5);
    weft_value val = {tr, sizeof v, &v};
    assert_true(weft_spawn_with(f->w, &val, 1) != 0);
    size_t n;
    assert_int_equal(weft_snapshot_write(f->w, NULL, 0, &n), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "tracked");
}

// Every allocation of a restore fails in turn: OUT_OF_MEMORY with the
// world as it was (empty, or with content of its own when `live`) and
// consistent, then success once memory is back; nothing leaks (each
// fixture's teardown checks).
static void restore_allocation_failures(bool live)
{
    bad_fixture bf = bad_setup();
    uint64_t want = weft_world_hash(bf.src->w);
    for (int64_t n = 1;; n++) {
        tw_fixture *t = second_fixture();
        ids c = register_all(t->w);
        if (live) {
            tw_rng r;
            tw_rng_seed(&r, 7);
            weft_entity ents[32] = {0};
            random_ops(t->w, &c, &r, ents, 32, 150);
        }
        tw_snap before = tw_snap_take(t->w);
        tw_alloc_fail_nth(&t->alloc, n, false);
        weft_status st = weft_snapshot_restore(t->w, bf.blob, bf.len);
        bool injected = tw_alloc_injected(&t->alloc) > 0;
        tw_alloc_disarm(&t->alloc);
        if (!injected) {
            assert_int_equal(st, WEFT_OK);
            assert_int_equal(weft_world_hash(t->w), want);
            tw_fixture_free(t);
            break;
        }
        assert_int_equal(st, WEFT_ERR_OUT_OF_MEMORY);
        tw_snap_expect_same_content(t->w, &before);
        assert_int_equal(weft_world_check(t->w), WEFT_OK);
        // memory is back: the same world takes the snapshot
        assert_int_equal(weft_snapshot_restore(t->w, bf.blob, bf.len), WEFT_OK);
        assert_int_equal(weft_world_hash(t->w), want);
        assert_int_equal(weft_world_check(t->w), WEFT_OK);
        tw_fixture_free(t);
    }
    free(bf.blob);
    tw_fixture_free(bf.src);
}

static void snapshot_restore_survives_allocation_failures(void **state)
{
    (void)state;
    restore_allocation_failures(false);
}

static void snapshot_restore_in_place_survives_allocation_failures(void **state)
{
    (void)state;
    restore_allocation_failures(true);
}

// ---- restoring into a live world (rollback in place) ----

// Random worlds: content A, snapshot, more operations (spawns, despawns,
// resources, messages, reparenting), restore into the same world: the
// hash, a second snapshot (byte for byte), the iteration order and the
// future (the same operations give the same ids and hashes as a fresh
// world restored from the snapshot) are those of the snapshot.
static void snapshot_restore_in_place_random_worlds(void **state)
{
    (void)state;
    bool overridden = false;
    uint64_t seed0 = tw_seed_from_env(0xB0B0ull, &overridden);
    for (uint64_t round = 0; round < 10; round++) {
        uint64_t seed = seed0 + round;
        ids ca;
        weft_entity ents[64];
        tw_fixture *a = random_world(seed, 200 + (int)(round * 30), &ca, ents);
        size_t len = 0;
        void *blob = take_snapshot(a->w, &len);
        uint64_t h = weft_world_hash(a->w);
        uint64_t order = iteration_order(a->w, ca.pos);
        uint32_t tick = weft_world_change_tick(a->w);
        weft_entity saved[64];
        memcpy(saved, ents, sizeof saved);
        bool alive[64];
        for (int i = 0; i < 64; i++) {
            alive[i] = saved[i] && weft_is_alive(a->w, saved[i]);
        }
        tw_rng r;
        tw_rng_seed(&r, seed ^ 0xA5A5u);
        random_ops(a->w, &ca, &r, ents, 64, 300);
        assert_true(weft_world_hash(a->w) != h);
        uint64_t restores = weft_world_restore_count(a->w);
        weft_status rst = weft_snapshot_restore(a->w, blob, len);
        if (rst != WEFT_OK) {
            fail_msg("restore: %s", weft_last_error(a->w));
        }
        assert_int_equal(weft_world_restore_count(a->w), restores + 1);
        assert_int_equal(weft_world_check(a->w), WEFT_OK);
        if (weft_world_hash(a->w) != h) {
            fail_msg("seed %llu: hash differs after the in-place restore",
                     (unsigned long long)seed);
        }
        assert_int_equal(iteration_order(a->w, ca.pos), order);
        assert_int_equal(weft_world_change_tick(a->w), tick);
        // a snapshot of the restored world holds the same content (not
        // the same bytes: the archetypes the world made after the
        // snapshot stay, and snapshots list every archetype)
        size_t len2 = 0;
        void *blob2 = take_snapshot(a->w, &len2);
        tw_fixture *c2 = second_fixture();
        register_all(c2->w);
        assert_int_equal(weft_snapshot_restore(c2->w, blob2, len2), WEFT_OK);
        assert_int_equal(weft_world_hash(c2->w), h);
        tw_fixture_free(c2);
        free(blob2);
        // handles of the snapshot's entities mean them again; the others
        // (spawned after the snapshot) are not alive
        for (int i = 0; i < 64; i++) {
            if (saved[i]) {
                assert_int_equal(weft_is_alive(a->w, saved[i]), alive[i]);
            }
            if (ents[i] && ents[i] != saved[i]) {
                bool was = false;
                for (int k = 0; k < 64; k++) {
                    was = was || (saved[k] == ents[i] && alive[k]);
                }
                assert_int_equal(weft_is_alive(a->w, ents[i]), was);
            }
        }
        // the same future as a fresh world restored from the blob
        tw_fixture *b = second_fixture();
        ids cb = register_all(b->w);
        assert_int_equal(weft_snapshot_restore(b->w, blob, len), WEFT_OK);
        expect_same_future(a->w, &ca, b->w, &cb, saved, seed * 13 + 1, "in place vs fresh");
        free(blob);
        tw_fixture_free(a);
        tw_fixture_free(b);
    }
}

// The deterministic app rolled back in place, several times, to several
// frames: every resimulated frame has the hash of the first run, and the
// schedules, systems and queries registered once keep working.
static void snapshot_rollback_in_place(void **state)
{
    (void)state;
    enum { FRAMES = 200 };
    static const int points[] = {50, 120, 180, 60};
    app a = app_new();
    uint64_t g0 = 0;
    assert_int_equal(weft_resource_insert(a.f->w, a.c.gold, &g0, 8), WEFT_OK);
    uint64_t hashes[FRAMES + 1];
    void *blobs[FRAMES + 1] = {0};
    size_t lens[FRAMES + 1] = {0};
    for (int frame = 1; frame <= FRAMES; frame++) {
        app_frame(&a);
        hashes[frame] = weft_world_hash(a.f->w);
        for (size_t p = 0; p < sizeof points / sizeof points[0]; p++) {
            if (points[p] == frame && !blobs[frame]) {
                blobs[frame] = take_snapshot(a.f->w, &lens[frame]);
            }
        }
    }
    for (size_t p = 0; p < sizeof points / sizeof points[0]; p++) {
        int at = points[p];
        assert_int_equal(weft_snapshot_restore(a.f->w, blobs[at], lens[at]), WEFT_OK);
        assert_int_equal(weft_world_hash(a.f->w), hashes[at]);
        for (int frame = at + 1; frame <= FRAMES; frame++) {
            app_frame(&a);
            if (weft_world_hash(a.f->w) != hashes[frame]) {
                fail_msg("rollback to %d: frame %d resimulated with another hash", at, frame);
            }
        }
    }
    for (int frame = 0; frame <= FRAMES; frame++) {
        free(blobs[frame]);
    }
    tw_fixture_free(a.f);
}

// What the target holds beyond the snapshot goes through its type hooks
// (a component the snapshot does not carry, with a destructor) and drop
// callbacks (queued messages); no observer or lifecycle hook runs.
static int g_dropped, g_removed_seen;
static void count_drop(void *msg, void *user)
{
    (void)msg, (void)user;
    g_dropped++;
}
static void count_remove(weft_world *w, weft_trigger *t, void *user)
{
    (void)w, (void)t, (void)user;
    g_removed_seen++;
}

static void snapshot_restore_in_place_releases_content(void **state)
{
    (void)state;
    bad_fixture bf = bad_setup();
    tw_fixture *t = second_fixture();
    ids c = register_all(t->w);
    weft_component tr = tw_tracked_register(t->w, "tracked", WEFT_STORAGE_TABLE, &t->tracker);
    weft_component trs = tw_tracked_register(t->w, "tracked_s", WEFT_STORAGE_SPARSE, &t->tracker);
    weft_message_desc md = {0};
    md.name = "dropped";
    md.size = 4;
    md.drop = count_drop;
    weft_message_type dm = weft_message_register(t->w, &md);
    assert_true(dm != 0);
    weft_observer_desc od = {0};
    od.event = WEFT_EVENT_REMOVE;
    od.component = c.pos;
    od.fn = count_remove;
    assert_non_null(weft_observer_create(t->w, &od));
    for (int i = 0; i < 20; i++) {
        tw_tracked v;
        tw_tracked_make(&v, i);
        vec3 p = {1, 2, 3};
        weft_value vals[3] = {{tr, sizeof v, &v}, {c.pos, sizeof p, &p}, {trs, sizeof v, &v}};
        assert_true(weft_spawn_with(t->w, vals, 3) != 0);
        int32_t m = i;
        assert_int_equal(weft_message_write(t->w, dm, &m, sizeof m), WEFT_OK);
    }
    uint64_t gold = 5;
    assert_int_equal(weft_resource_insert(t->w, c.gold, &gold, 8), WEFT_OK);
    int64_t dtors = t->tracker.dtors;
    g_dropped = g_removed_seen = 0;
    assert_int_equal(weft_snapshot_restore(t->w, bf.blob, bf.len), WEFT_OK);
    assert_int_equal(t->tracker.dtors - dtors, 40); // 20 table + 20 sparse values
    assert_int_equal(t->tracker.errors, 0);
    assert_int_equal(g_dropped, 20);
    assert_int_equal(g_removed_seen, 0);
    assert_int_equal(weft_world_hash(t->w), weft_world_hash(bf.src->w));
    assert_int_equal(weft_world_check(t->w), WEFT_OK);
    // the registrations stay usable
    tw_tracked v;
    tw_tracked_make(&v, 99);
    weft_value val = {tr, sizeof v, &v};
    assert_true(weft_spawn_with(t->w, &val, 1) != 0);
    free(bf.blob);
    tw_fixture_free(bf.src);
    tw_fixture_free(t);
}

// A failed in-place restore (corrupt blob, wrong phase) leaves the live
// world as it was.
static void snapshot_restore_in_place_refusals_keep_the_world(void **state)
{
    (void)state;
    bad_fixture bf = bad_setup();
    tw_fixture *t = second_fixture();
    ids c = register_all(t->w);
    tw_rng r;
    tw_rng_seed(&r, 99);
    weft_entity ents[32] = {0};
    random_ops(t->w, &c, &r, ents, 32, 200);
    tw_snap before = tw_snap_take(t->w);
    uint8_t *bad = malloc(bf.len);
    assert_non_null(bad);
    memcpy(bad, bf.blob, bf.len);
    bad[bf.len / 2] ^= 0x40;
    assert_int_equal(weft_snapshot_restore(t->w, bad, bf.len), WEFT_ERR_BAD_FORMAT);
    tw_snap_expect_same_content(t->w, &before);
    assert_int_equal(weft_world_restore_count(t->w), 0);
    // while iterating
    weft_query_desc qd = {0};
    qd.terms[0].id = c.pos;
    qd.term_count = 1;
    weft_query *q = weft_query_create(t->w, &qd);
    assert_non_null(q);
    weft_iter it;
    assert_int_equal(weft_query_iter(t->w, q, &it), WEFT_OK);
    assert_int_equal(weft_snapshot_restore(t->w, bf.blob, bf.len), WEFT_ERR_WRONG_PHASE);
    weft_iter_fini(&it);
    assert_int_equal(weft_query_destroy(t->w, q), WEFT_OK);
    tw_snap_expect_same_content(t->w, &before);
    assert_int_equal(weft_world_check(t->w), WEFT_OK);
    free(bad);
    free(bf.blob);
    tw_fixture_free(bf.src);
    tw_fixture_free(t);
}

// An app's startup order is part of the snapshot: restored (into the
// same app or into a fresh one built the same way), an app that had
// started does not run Startup again.
static void count_startup(weft_system_ctx *ctx, void *user)
{
    weft_component res = *(const weft_component *)user;
    int64_t *n = weft_system_resource_mut(ctx, res, sizeof *n);
    if (n) {
        (*n)++;
    }
}

typedef struct started_app {
    weft_app *app;
    weft_world *w;
    weft_component count;
} started_app;

static started_app started_app_new(tw_fixture *f)
{
    static weft_component count_id;
    started_app s;
    weft_app_desc d = {0};
    d.world = f->w;
    s.app = weft_app_create(&d);
    assert_non_null(s.app);
    s.w = f->w;
    s.count = tw_comp(s.w, "startups", 8, 8, WEFT_STORAGE_TABLE, 0);
    count_id = s.count;
    int64_t zero = 0;
    assert_int_equal(weft_resource_insert(s.w, s.count, &zero, 8), WEFT_OK);
    weft_resource_use use = {s.count, WEFT_ACCESS_WRITE};
    weft_system_desc sd = {0};
    sd.name = "count_startup";
    sd.fn = count_startup;
    sd.user = &count_id;
    sd.resources = &use;
    sd.resource_count = 1;
    assert_true(weft_app_add_system(s.app, WEFT_APP_STARTUP, &sd) != 0);
    return s;
}

static int64_t startups(const started_app *s)
{
    const int64_t *n = weft_resource_get(s->w, s->count, 8);
    assert_non_null(n);
    return *n;
}

static void snapshot_restores_the_app_started_flag(void **state)
{
    (void)state;
    tw_fixture *fa = second_fixture();
    started_app a = started_app_new(fa);
    assert_int_equal(weft_app_update(a.app, 1.0 / 60), WEFT_OK);
    assert_int_equal(startups(&a), 1);
    size_t len = 0;
    void *blob = take_snapshot(a.w, &len);
    uint64_t h = weft_world_hash(a.w);
    assert_int_equal(weft_app_update(a.app, 1.0 / 60), WEFT_OK);
    // in place
    assert_int_equal(weft_snapshot_restore(a.w, blob, len), WEFT_OK);
    assert_int_equal(weft_world_hash(a.w), h);
    assert_int_equal(weft_app_update(a.app, 1.0 / 60), WEFT_OK);
    assert_int_equal(startups(&a), 1);
    // into a fresh app that never updated
    tw_fixture *fb = second_fixture();
    started_app b = started_app_new(fb);
    assert_int_equal(weft_snapshot_restore(b.w, blob, len), WEFT_OK);
    assert_int_equal(weft_app_update(b.app, 1.0 / 60), WEFT_OK);
    assert_int_equal(startups(&b), 1);
    assert_int_equal(weft_world_hash(b.w), weft_world_hash(a.w));
    // a snapshot from before the first update: Startup runs after it
    tw_fixture *fc = second_fixture();
    started_app c = started_app_new(fc);
    size_t clen = 0;
    void *cblob = take_snapshot(c.w, &clen);
    assert_int_equal(weft_app_update(c.app, 1.0 / 60), WEFT_OK);
    assert_int_equal(weft_snapshot_restore(c.w, cblob, clen), WEFT_OK);
    assert_int_equal(startups(&c), 0);
    assert_int_equal(weft_app_update(c.app, 1.0 / 60), WEFT_OK);
    assert_int_equal(startups(&c), 1);
    free(blob);
    free(cblob);
    assert_int_equal(weft_app_destroy(a.app), WEFT_OK);
    assert_int_equal(weft_app_destroy(b.app), WEFT_OK);
    assert_int_equal(weft_app_destroy(c.app), WEFT_OK);
    tw_fixture_free(fa);
    tw_fixture_free(fb);
    tw_fixture_free(fc);
}

// ---- zstd ----

static void *take_ex(weft_world *w, uint32_t flags, uint32_t since, size_t *len, size_t *bound)
{
    weft_snapshot_options o = {0};
    o.flags = flags;
    o.since = since;
    size_t need = 0;
    assert_int_equal(weft_snapshot_write_ex(w, &o, NULL, 0, &need), WEFT_ERR_CAPACITY);
    void *buf = malloc(need);
    assert_non_null(buf);
    // one byte short of the bound is refused, untouched
    memset(buf, 0x5A, need);
    size_t got = 0;
    assert_int_equal(weft_snapshot_write_ex(w, &o, buf, need - 1, &got), WEFT_ERR_CAPACITY);
    assert_int_equal(got, need);
    assert_true(((uint8_t *)buf)[0] == 0x5A && ((uint8_t *)buf)[need - 2] == 0x5A);
    assert_int_equal(weft_snapshot_write_ex(w, &o, buf, need, len), WEFT_OK);
    assert_true(*len <= need);
    if (bound) {
        *bound = need;
    }
    return buf;
}

// A compressed snapshot is decompressed within the world's limit: above
// it, refused with CAPACITY before anything is allocated for the output;
// below it, the output buffer grows as bytes arrive (a 4 MiB payload
// crosses several doublings) and the peak stays near the payload's size.
// Before, the announced size was allocated up front whatever it was.
static void snapshot_zstd_bounded_by_limit(void **state)
{
    (void)state;
    if (!weft_snapshot_zstd_available()) {
        skip();
    }
    tw_fixture *src = second_fixture();
    weft_component big = tw_comp(src->w, "Big", 4096, 16, WEFT_STORAGE_TABLE, 0);
    uint8_t zero[4096] = {0};
    for (int i = 0; i < 1024; i++) { // 4 MiB of zeros: compresses to little
        weft_value v = {big, sizeof zero, zero};
        assert_int_not_equal(weft_spawn_with(src->w, &v, 1), 0);
    }
    size_t len;
    uint8_t *blob = take_ex(src->w, WEFT_SNAPSHOT_ZSTD, 0, &len, NULL);
    uint64_t plain;
    memcpy(&plain, blob + 48, 8);
    assert_true(plain > (4u << 20));
    assert_true(len < plain / 50);

    tw_fixture *dst = second_fixture();
    tw_comp(dst->w, "Big", 4096, 16, WEFT_STORAGE_TABLE, 0);
    assert_int_equal(weft_snapshot_limit(dst->w), 256ull << 20);
    assert_int_equal(weft_snapshot_set_limit(dst->w, plain - 1), WEFT_OK);
    int64_t before = dst->alloc.peak_bytes;
    assert_int_equal(weft_snapshot_restore(dst->w, blob, len), WEFT_ERR_BAD_FORMAT);
    assert_non_null(strstr(weft_last_error(dst->w), "weft_snapshot_set_limit"));
    assert_true(dst->alloc.peak_bytes - before < (1 << 20)); // nothing of the payload's size
    assert_int_equal(weft_snapshot_set_limit(dst->w, 0), WEFT_OK);
    assert_int_equal(weft_snapshot_restore(dst->w, blob, len), WEFT_OK);
    assert_int_equal(weft_world_check(dst->w), WEFT_OK);
    tw_fixture_free(dst);
    free(blob);
    tw_fixture_free(src);
}

// Compressed snapshots restore to the same world, merge like plain ones,
// and are smaller for a world of repetitive values.
static void snapshot_zstd_round_trip(void **state)
{
    (void)state;
    if (!weft_snapshot_zstd_available()) {
        skip();
    }
    tw_fixture *a = second_fixture();
    ids c = register_all(a->w);
    tw_rng r;
    tw_rng_seed(&r, 1234);
    weft_entity ents[64] = {0};
    random_ops(a->w, &c, &r, ents, 64, 400);
    for (int i = 0; i < 2000; i++) { // many equal values: compressible
        vec3 p = {1.0f, 2.0f, 3.0f};
        weft_value v = {c.pos, sizeof p, &p};
        assert_int_not_equal(weft_spawn_with(a->w, &v, 1), 0);
    }
    size_t plen = 0;
    void *plain = take_snapshot(a->w, &plen);
    size_t zlen = 0;
    size_t bound = 0;
    void *z = take_ex(a->w, WEFT_SNAPSHOT_ZSTD, 0, &zlen, &bound);
    assert_true(bound > plen - 64);
    if (zlen * 4 > plen) {
        fail_msg("compressed %zu bytes to %zu", plen, zlen);
    }
    // the flag is in the header; restore decompresses
    tw_fixture *b = second_fixture();
    register_all(b->w);
    assert_int_equal(weft_snapshot_restore(b->w, z, zlen), WEFT_OK);
    assert_int_equal(weft_world_check(b->w), WEFT_OK);
    assert_int_equal(weft_world_hash(b->w), weft_world_hash(a->w));
    size_t blen = 0;
    void *again = take_snapshot(b->w, &blen);
    assert_int_equal(blen, plen);
    assert_memory_equal(again, plain, plen);
    free(again);
    // a compressed delta onto a compressed base merges to the plain full one
    uint32_t since = weft_world_change_tick(a->w);
    weft_world_increment_change_tick(a->w);
    random_ops(a->w, &c, &r, ents, 64, 40);
    size_t dlen = 0;
    void *d = take_ex(a->w, WEFT_SNAPSHOT_ZSTD | WEFT_SNAPSHOT_DELTA, since, &dlen, NULL);
    size_t mlen = 0;
    void *merged = merge_into(a->w, z, zlen, d, dlen, &mlen);
    size_t flen = 0;
    void *full = take_snapshot(a->w, &flen);
    assert_int_equal(mlen, flen);
    assert_memory_equal(merged, full, flen);
    // a compressed delta alone is still not a snapshot
    expect_rejected(d, dlen, WEFT_ERR_BAD_FORMAT);
    free(merged);
    free(full);
    free(d);
    // corrupt compressed bytes under a valid checksum: refused with the
    // world unchanged, or (a flipped value) restored consistent
    uint8_t *bad = malloc(zlen);
    assert_non_null(bad);
    int refused = 0;
    for (size_t at = 64; at < zlen; at += 1 + zlen / 97) {
        memcpy(bad, z, zlen);
        bad[at] ^= 0xFF;
        rechecksum(bad, zlen);
        tw_fixture *t = second_fixture();
        register_all(t->w);
        tw_snap before = tw_snap_take(t->w);
        if (weft_snapshot_restore(t->w, bad, zlen) != WEFT_OK) {
            refused++;
            assert_true(strlen(weft_last_error(t->w)) > 0);
            tw_snap_expect_same_content(t->w, &before);
        } else {
            assert_int_equal(weft_world_check(t->w), WEFT_OK);
        }
        tw_fixture_free(t);
    }
    assert_true(refused > 0);
    // a header recording another plain size
    memcpy(bad, z, zlen);
    uint64_t plain_len;
    memcpy(&plain_len, bad + 48, 8);
    assert_int_equal(plain_len, plen - 64);
    const uint64_t lies[] = {0, plain_len - 1, plain_len + 1, UINT64_MAX / 2};
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        memcpy(bad + 48, &lies[i], 8);
        rechecksum(bad, zlen);
        expect_rejected(bad, zlen, -1);
    }
    // truncated compressed payloads
    for (size_t cut = 64; cut < zlen; cut += 1 + cut / 5) {
        memcpy(bad, z, zlen);
        uint64_t pl = cut - 64;
        memcpy(bad + 24, &pl, 8);
        rechecksum(bad, cut);
        expect_rejected(bad, cut, WEFT_ERR_BAD_FORMAT);
    }
    free(bad);
    free(z);
    free(plain);
    tw_fixture_free(a);
    tw_fixture_free(b);
}

static void snapshot_write_ex_checks_options(void **state)
{
    tw_fixture *f = *state;
    register_all(f->w);
    weft_spawn(f->w);
    size_t n = 99;
    weft_snapshot_options o = {0};
    o._start_canary = 1;
    assert_int_equal(weft_snapshot_write_ex(f->w, &o, NULL, 0, &n), WEFT_ERR_INVALID_ARG);
    assert_int_equal(n, 0);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "canary");
    memset(&o, 0, sizeof o);
    o.flags = 1u << 7;
    assert_int_equal(weft_snapshot_write_ex(f->w, &o, NULL, 0, &n), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "flag");
    memset(&o, 0, sizeof o);
    o.flags = WEFT_SNAPSHOT_ZSTD;
    o.zstd_level = 20;
    assert_int_equal(weft_snapshot_write_ex(f->w, &o, NULL, 0, &n), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "level");
    // NULL options and zeroed options: the plain full snapshot, byte for byte
    size_t plen = 0;
    void *plain = take_snapshot(f->w, &plen);
    size_t len = 0;
    void *viaex = take_ex(f->w, 0, 0, &len, NULL);
    assert_int_equal(len, plen);
    assert_memory_equal(viaex, plain, plen);
    size_t need = 0;
    assert_int_equal(weft_snapshot_write_ex(f->w, NULL, NULL, 0, &need), WEFT_ERR_CAPACITY);
    assert_int_equal(need, plen);
    free(viaex);
    free(plain);
}

// Every allocation of a compressed write and of a compressed restore
// (the scratch copy and zstd's own memory go through the hook) fails in
// turn: OUT_OF_MEMORY, nothing leaked, the world unchanged.
static void snapshot_zstd_survives_allocation_failures(void **state)
{
    (void)state;
    if (!weft_snapshot_zstd_available()) {
        skip();
    }
    bad_fixture bf = bad_setup();
    uint64_t want = weft_world_hash(bf.src->w);
    weft_snapshot_options o = {0};
    o.flags = WEFT_SNAPSHOT_ZSTD;
    size_t need = 0;
    assert_int_equal(weft_snapshot_write_ex(bf.src->w, &o, NULL, 0, &need), WEFT_ERR_CAPACITY);
    uint8_t *z = malloc(need);
    assert_non_null(z);
    size_t zlen = 0;
    for (int64_t n = 1;; n++) {
        tw_alloc_fail_nth(&bf.src->alloc, n, false);
        weft_status st = weft_snapshot_write_ex(bf.src->w, &o, z, need, &zlen);
        bool injected = tw_alloc_injected(&bf.src->alloc) > 0;
        tw_alloc_disarm(&bf.src->alloc);
        if (!injected) {
            assert_int_equal(st, WEFT_OK);
            break;
        }
        assert_int_equal(st, WEFT_ERR_OUT_OF_MEMORY);
        assert_int_equal(zlen, 0);
    }
    for (int64_t n = 1;; n++) {
        tw_fixture *t = second_fixture();
        register_all(t->w);
        tw_snap before = tw_snap_take(t->w);
        tw_alloc_fail_nth(&t->alloc, n, false);
        weft_status st = weft_snapshot_restore(t->w, z, zlen);
        bool injected = tw_alloc_injected(&t->alloc) > 0;
        tw_alloc_disarm(&t->alloc);
        if (!injected) {
            assert_int_equal(st, WEFT_OK);
            assert_int_equal(weft_world_hash(t->w), want);
            tw_fixture_free(t);
            break;
        }
        assert_int_equal(st, WEFT_ERR_OUT_OF_MEMORY);
        tw_snap_expect_same_content(t->w, &before);
        tw_fixture_free(t);
    }
    free(z);
    free(bf.blob);
    tw_fixture_free(bf.src);
}

// ---- tracked deltas ----

// Value writes only (no structural change): get_mut of table and sparse
// components, written query terms (chunk marks), single-row marks and
// set_if_neq, resources, messages.
static void value_ops(weft_world *w, const ids *c, tw_rng *r, weft_entity *ents, int n,
                      int steps)
{
    weft_query_desc qd = {0};
    qd.terms[0].id = c->pos;
    qd.terms[0].access = WEFT_ACCESS_WRITE;
    qd.term_count = 1;
    weft_query *q = weft_query_create(w, &qd);
    assert_non_null(q);
    for (int s = 0; s < steps; s++) {
        weft_entity e = pick_live(w, ents, n, r);
        uint64_t v = tw_rng_next(r);
        switch (tw_rng_below(r, 7)) {
        case 0:
            if (e) {
                vec3 *p = weft_get_mut(w, e, c->pos, sizeof *p);
                if (p) {
                    p->y += 1.0f;
                }
            }
            break;
        case 1:
            if (e) {
                uint32_t *hp = weft_get_mut(w, e, c->hp, 4);
                if (hp) {
                    *hp += 1;
                }
                uint64_t *vel = weft_get_mut(w, e, c->vel, 8);
                if (vel) {
                    *vel ^= v;
                }
            }
            break;
        case 2: { // a written term: every chunk, or its first row only
            weft_iter it;
            assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
            int mode = (int)tw_rng_below(r, 3);
            while (weft_iter_next(&it)) {
                if (mode == 0) {
                    vec3 *p = weft_iter_field_mut(&it, 0, sizeof *p);
                    p[0].z += 1.0f;
                } else if (mode == 1) {
                    vec3 *p = weft_iter_field_mut_nomark(&it, 0, sizeof *p);
                    int32_t row = weft_iter_count(&it) - 1;
                    p[row].x -= 1.0f;
                    assert_int_equal(weft_iter_mark(&it, 0, row), WEFT_OK);
                } else {
                    vec3 nv = {(float)(v & 7), 0.0f, 0.0f};
                    bool changed;
                    assert_int_equal(weft_iter_set_if_neq(&it, 0, 0, &nv, sizeof nv, &changed),
                                     WEFT_OK);
                }
            }
            break;
        }
        case 3:
            if (tw_rng_chance(r, 50)) {
                assert_int_equal(weft_resource_insert(w, c->gold, &v, 8), WEFT_OK);
            }
            break;
        case 4:
            assert_int_equal(weft_message_write(w, c->hit, &v, 8), WEFT_OK);
            break;
        default:
            weft_world_increment_change_tick(w);
            break;
        }
    }
    weft_query_destroy(w, q);
}

static uint32_t snap_flags(const void *blob)
{
    uint32_t f;
    memcpy(&f, (const uint8_t *)blob + 20, 4);
    return f;
}

// With tracking on, deltas after frames of value writes are patches
// (flag 4: only changed rows, no index), those after structural frames
// scans; either kind, merged step by step, equals the full snapshot.
static void snapshot_tracked_delta_chain_equals_full(void **state)
{
    (void)state;
    tw_fixture *a = second_fixture();
    ids c = register_all(a->w);
    tw_rng r;
    tw_rng_seed(&r, 4242);
    weft_entity ents[64] = {0};
    random_ops(a->w, &c, &r, ents, 64, 400);
    size_t cur_len = 0;
    void *cur = take_snapshot(a->w, &cur_len);
    uint32_t since = weft_world_change_tick(a->w);
    assert_int_equal(weft_snapshot_track(a->w, true), WEFT_OK);
    weft_world_increment_change_tick(a->w);
    int patches = 0;
    int scans = 0;
    size_t biggest_patch = 0;
    size_t smallest_full = SIZE_MAX;
    for (int k = 1; k <= 60; k++) {
        if (k % 6 == 0) {
            random_ops(a->w, &c, &r, ents, 64, 1 + (int)tw_rng_below(&r, 10));
        } else {
            value_ops(a->w, &c, &r, ents, 64, 1 + (int)tw_rng_below(&r, 12));
        }
        size_t dlen = 0;
        void *d;
        if (k % 4 == 0 && weft_snapshot_zstd_available()) {
            d = take_ex(a->w, WEFT_SNAPSHOT_DELTA | WEFT_SNAPSHOT_ZSTD, since, &dlen, NULL);
        } else {
            d = take_delta(a->w, since, &dlen);
        }
        bool patch = (snap_flags(d) & 4u) != 0;
        size_t mlen = 0;
        void *merged = merge_into(a->w, cur, cur_len, d, dlen, &mlen);
        size_t flen = 0;
        void *full = take_snapshot(a->w, &flen);
        if (mlen != flen || memcmp(merged, full, flen) != 0) {
            fail_msg("delta %d (%s): the merged snapshot differs from the full one", k,
                     patch ? "patch" : "scan");
        }
        if (patch) {
            patches++;
            biggest_patch = dlen > biggest_patch ? dlen : biggest_patch;
        } else {
            scans++;
        }
        smallest_full = flen < smallest_full ? flen : smallest_full;
        // a patch is not a snapshot, and only fits its own base
        tw_fixture *t = second_fixture();
        register_all(t->w);
        assert_int_equal(weft_snapshot_restore(t->w, d, dlen), WEFT_ERR_BAD_FORMAT);
        tw_fixture_free(t);
        free(cur);
        free(d);
        free(full);
        cur = merged;
        cur_len = mlen;
        since = weft_world_change_tick(a->w);
        if (k % 10 == 0) { // a new baseline: tracking restarts
            assert_int_equal(weft_snapshot_track(a->w, true), WEFT_OK);
        }
        weft_world_increment_change_tick(a->w);
    }
    assert_true(patches >= 30);
    assert_true(scans >= 5);
    assert_true(biggest_patch < smallest_full);
    // untracked again: deltas scan, and still merge
    assert_int_equal(weft_snapshot_track(a->w, false), WEFT_OK);
    value_ops(a->w, &c, &r, ents, 64, 5);
    size_t dlen = 0;
    void *d = take_delta(a->w, since, &dlen);
    assert_int_equal(snap_flags(d) & 4u, 0);
    size_t mlen = 0;
    void *merged = merge_into(a->w, cur, cur_len, d, dlen, &mlen);
    tw_fixture *b = second_fixture();
    register_all(b->w);
    assert_int_equal(weft_snapshot_restore(b->w, merged, mlen), WEFT_OK);
    assert_int_equal(weft_world_hash(b->w), weft_world_hash(a->w));
    free(d);
    free(merged);
    free(cur);
    tw_fixture_free(a);
    tw_fixture_free(b);
}

// A patch applied to a base it was not taken from is refused: another
// world's base with the same layout but older values, and a base of
// another shape.
static void snapshot_patch_refuses_other_bases(void **state)
{
    (void)state;
    tw_fixture *a = second_fixture();
    ids c = register_all(a->w);
    tw_rng r;
    tw_rng_seed(&r, 77);
    weft_entity ents[32] = {0};
    random_ops(a->w, &c, &r, ents, 32, 200);
    size_t blen = 0;
    void *base = take_snapshot(a->w, &blen);
    uint32_t since = weft_world_change_tick(a->w);
    assert_int_equal(weft_snapshot_track(a->w, true), WEFT_OK);
    weft_world_increment_change_tick(a->w);
    value_ops(a->w, &c, &r, ents, 32, 20);
    size_t dlen = 0;
    void *d = take_delta(a->w, since, &dlen);
    assert_int_equal(snap_flags(d) & 4u, 4u);
    // a structurally different base at the same tick: refused
    random_ops(a->w, &c, &r, ents, 32, 50);
    size_t olen = 0;
    uint8_t *other = take_snapshot(a->w, &olen);
    size_t n;
    weft_status st = weft_snapshot_merge(a->w, other, olen, d, dlen, NULL, 0, &n);
    assert_int_equal(st, WEFT_ERR_BAD_FORMAT);
    // corrupted patch bytes under a valid checksum: refused or consistent
    uint8_t *bad = malloc(dlen);
    assert_non_null(bad);
    int refused = 0;
    for (size_t at = 64; at < dlen; at += 1 + dlen / 61) {
        memcpy(bad, d, dlen);
        bad[at] ^= 0x5A;
        rechecksum(bad, dlen);
        st = weft_snapshot_merge(a->w, base, blen, bad, dlen, NULL, 0, &n);
        if (st != WEFT_ERR_CAPACITY) {
            refused++;
            assert_true(strlen(weft_last_error(a->w)) > 0);
            continue;
        }
        void *m = malloc(n);
        assert_non_null(m);
        assert_int_equal(weft_snapshot_merge(a->w, base, blen, bad, dlen, m, n, &n), WEFT_OK);
        tw_fixture *t = second_fixture();
        register_all(t->w);
        if (weft_snapshot_restore(t->w, m, n) == WEFT_OK) {
            assert_int_equal(weft_world_check(t->w), WEFT_OK);
        }
        tw_fixture_free(t);
        free(m);
    }
    assert_true(refused > 0);
    free(bad);
    free(other);
    free(d);
    free(base);
    tw_fixture_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(snapshot_round_trip_random_worlds),
        cmocka_unit_test(snapshot_rollback_resimulates_every_frame),
        cmocka_unit_test(snapshot_delta_chain_equals_full),
        cmocka_unit_test(snapshot_tracked_delta_chain_equals_full),
        cmocka_unit_test(snapshot_patch_refuses_other_bases),
        cmocka_unit_test(snapshot_rejects_corrupt_input),
        cmocka_unit_test(snapshot_survives_lies_with_valid_checksum),
        cmocka_unit_test(snapshot_refuses_disagreeing_relationships),
        cmocka_unit_test(snapshot_refuses_state_value_outside_its_state),
        cmocka_unit_test(snapshot_refuses_unknown_component_without_values),
        cmocka_unit_test(snapshot_refuses_child_of_cycle),
        cmocka_unit_test(snapshot_zstd_bounded_by_limit),
        cmocka_unit_test(snapshot_rejects_mismatched_targets),
        cmocka_unit_test_setup_teardown(snapshot_refuses_owning_components, tw_setup,
                                        tw_teardown),
        cmocka_unit_test(snapshot_restore_survives_allocation_failures),
        cmocka_unit_test(snapshot_restore_in_place_survives_allocation_failures),
        cmocka_unit_test(snapshot_restore_in_place_random_worlds),
        cmocka_unit_test(snapshot_rollback_in_place),
        cmocka_unit_test(snapshot_restore_in_place_releases_content),
        cmocka_unit_test(snapshot_restore_in_place_refusals_keep_the_world),
        cmocka_unit_test(snapshot_restores_the_app_started_flag),
        cmocka_unit_test(snapshot_zstd_round_trip),
        cmocka_unit_test_setup_teardown(snapshot_write_ex_checks_options, tw_setup, tw_teardown),
        cmocka_unit_test(snapshot_zstd_survives_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

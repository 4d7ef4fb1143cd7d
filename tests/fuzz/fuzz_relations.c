// tests/fuzz/fuzz_relations.c - libFuzzer target: random relationship
// graphs (ChildOf, a linked "Owns" and a plain "Likes"), changed through
// every path that stores a relationship value, despawned in cascades,
// saved and restored - with weft_world_check (INV-12: both sides agree, no
// linked cycle) after every step and a model of the ChildOf forest as the
// oracle.
//
// The input is a program: one byte picks an operation, the next bytes its
// arguments (reading past the end gives zeroes). Entities live in 32 slots.
// Operations:
//   spawn (plain, with ChildOf, bulk with ChildOf, through a command
//   buffer), weft_set_parent, weft_relate, a raw weft_insert of ChildOf
//   with any handle (dead, 0, itself, a descendant), weft_remove_parent,
//   weft_unrelate, despawn (a cascade), a command buffer mixing these,
//   one failing allocation in the next call, and a snapshot round trip:
//   written, optionally patched (an 8-byte word that holds a live entity
//   id is replaced by another id, 0 or a dead one, and the checksum is
//   recomputed, so the mutation reaches the relationship validation), and
//   restored into a fresh world. A refused restore leaves that world
//   untouched; an accepted one passes weft_world_check, and despawning
//   everything in it terminates and leaves it empty.
// The model: parent[] of each slot. weft_set_parent must succeed exactly
// when the model says the target is live, not the child and not one of
// its descendants; a despawn takes the whole subtree; after every step
// weft_parent of every live slot matches the model (unless an allocation
// failed in that step: then the model is rebuilt from the world, which
// must still pass the check).
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fuzz_common.h"

#define SLOTS 32
#define MAX_OPS 160
#define SNAP_HEADER 64u

typedef struct rworld {
    weft_world *w;
    weft_component child_of, owns, likes, pos;
} rworld;

typedef struct state {
    fz_alloc alloc;
    rworld r;
    weft_entity ids[SLOTS];
    int parent[SLOTS]; // slot of the ChildOf target, -1 none
    bool model_ok;     // false after an allocation failure until rebuilt
    int ops;
    // spawns of a buffer whose flush ran out of memory: their ids stay
    // reserved and a later flush makes them entities (weft_commands_apply)
    weft_entity pending[16];
} state;

static bool rworld_new(rworld *r, fz_alloc *alloc)
{
    weft_world_desc wd;
    memset(&wd, 0, sizeof wd);
    wd.allocator = fz_alloc_hook(alloc);
    r->w = weft_world_create(&wd);
    if (!r->w) {
        return false;
    }
    r->child_of = weft_child_of(r->w);
    weft_relationship_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.name = "Owns";
    rd.flags = WEFT_RELATIONSHIP_LINKED_DESPAWN;
    r->owns = weft_relationship_register(r->w, &rd);
    rd.name = "Likes";
    rd.flags = 0;
    r->likes = weft_relationship_register(r->w, &rd);
    weft_component_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.name = "Pos";
    cd.size = 8;
    cd.align = 4;
    r->pos = weft_component_register(r->w, &cd);
    return r->child_of && r->owns && r->likes && r->pos;
}

static void check(state *st, weft_world *w, const char *where)
{
    fz_alloc_disarm(&st->alloc);
    if (weft_world_check(w) != WEFT_OK) {
        FZ_FAIL("weft_world_check (%s, op %d): %s", where, st->ops, weft_last_error(w));
    }
}

static int slot_of(const state *st, weft_entity e)
{
    for (int i = 0; e && i < SLOTS; i++) {
        if (st->ids[i] == e) {
            return i;
        }
    }
    return -1;
}

static bool live(const state *st, int s)
{
    return s >= 0 && st->ids[s] != 0 && weft_is_alive(st->r.w, st->ids[s]);
}

// Is slot a an ancestor of slot b (or b itself) in the model?
static bool model_above(const state *st, int a, int b)
{
    for (int k = b, steps = 0; k >= 0 && steps <= SLOTS; k = st->parent[k], steps++) {
        if (k == a) {
            return true;
        }
    }
    return false;
}

// Drops dead slots from the model (a cascade took them).
static void model_sweep(state *st)
{
    for (int i = 0; i < SLOTS; i++) {
        if (st->ids[i] && !weft_is_alive(st->r.w, st->ids[i])) {
            st->ids[i] = 0;
        }
    }
    for (int i = 0; i < SLOTS; i++) {
        if (st->parent[i] >= 0 && !st->ids[st->parent[i]]) {
            st->parent[i] = -1;
        }
    }
}

// Every live entity of the world sits in a slot (spawns that find none are
// despawned again), so every parent is a slot's entity.
static void model_rebuild(state *st)
{
    model_sweep(st);
    for (int i = 0; i < SLOTS; i++) {
        weft_entity p = st->ids[i] ? weft_parent(st->r.w, st->ids[i]) : 0;
        st->parent[i] = slot_of(st, p);
        if (p && st->parent[i] < 0) {
            FZ_FAIL("op %d: slot %d has parent %llx, which no slot holds", st->ops, i,
                    (unsigned long long)p);
        }
    }
    st->model_ok = true;
}

static void model_compare(state *st)
{
    weft_world *w = st->r.w;
    for (int i = 0; i < SLOTS; i++) {
        if (!st->ids[i]) {
            continue;
        }
        if (!weft_is_alive(w, st->ids[i])) {
            FZ_FAIL("op %d: slot %d died, the model keeps it", st->ops, i);
        }
        weft_entity want = st->parent[i] >= 0 ? st->ids[st->parent[i]] : 0;
        if (weft_parent(w, st->ids[i]) != want) {
            FZ_FAIL("op %d: slot %d has parent %llx, the model says %llx", st->ops, i,
                    (unsigned long long)weft_parent(w, st->ids[i]), (unsigned long long)want);
        }
    }
}

// A handle for an argument: a slot's entity, 0, a dead one, or garbage.
static weft_entity pick_handle(state *st, fz_in *in, int *slot)
{
    uint8_t k = fz_u8(in);
    *slot = -1;
    weft_entity e;
    if (k < 200) {
        e = st->ids[k % SLOTS];
    } else if (k < 220) {
        e = 0;
    } else if (k < 240) {
        e = ((uint64_t)2 << 32) | (k % SLOTS); // an old (or a later) generation
    } else {
        e = fz_u64(in);
    }
    *slot = slot_of(st, e);
    return e;
}

static int free_slot(state *st, fz_in *in)
{
    int s = (int)fz_below(in, SLOTS);
    for (int k = 0; k < SLOTS; k++) {
        int i = (s + k) % SLOTS;
        if (!st->ids[i]) {
            return i;
        }
    }
    return -1;
}

static void put(state *st, int s, weft_entity e, int parent_slot)
{
    if (s >= 0 && e) {
        st->ids[s] = e;
        st->parent[s] = parent_slot;
    }
}

static void adopt(state *st, fz_in *in, weft_entity *es, int n);

// An entity that finds no slot goes again; when that fails (an allocation
// failure armed for this operation), it waits in `pending` for adopt().
static void drop_entity(state *st, weft_entity e)
{
    if (weft_despawn(st->r.w, e) == WEFT_OK) {
        return;
    }
    for (int k = 0; k < 16; k++) {
        if (!st->pending[k]) {
            st->pending[k] = e;
            return;
        }
    }
    FZ_FAIL("op %d: more than 16 entities wait for a slot", st->ops);
}

// ---- snapshots ----

static uint8_t *snap_take(weft_world *w, size_t *len)
{
    size_t need = 0;
    if (weft_snapshot_write(w, NULL, 0, &need) != WEFT_ERR_CAPACITY) {
        return NULL;
    }
    uint8_t *b = malloc(need);
    if (!b) {
        FZ_FAIL("out of memory");
    }
    if (weft_snapshot_write(w, b, need, len) != WEFT_OK) {
        free(b);
        return NULL;
    }
    return b;
}

static void repair_sum(uint8_t *b, size_t len)
{
    memset(b + 32, 0, 8);
    uint64_t sum = XXH3_64bits(b, len);
    memcpy(b + 32, &sum, 8);
}

// Replaces the n-th 8-byte word (at any offset) of the payload that holds
// a live entity id with `to`; false when there is none.
static bool patch_entity_word(state *st, uint8_t *b, size_t len, uint32_t n, weft_entity to)
{
    uint32_t seen = 0, total = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t at = SNAP_HEADER; at + 8 <= len; at++) {
            weft_entity v;
            memcpy(&v, b + at, 8);
            if (slot_of(st, v) < 0) {
                continue;
            }
            if (pass == 0) {
                total++;
            } else if (seen++ == n % total) {
                memcpy(b + at, &to, 8);
                return true;
            }
        }
        if (total == 0) {
            return false;
        }
    }
    return false;
}

static void op_snapshot(state *st, fz_in *in)
{
    uint8_t k = fz_u8(in);
    size_t len = 0;
    fz_alloc_disarm(&st->alloc);
    // a snapshot refuses reserved ids that are not entities yet (what an
    // out-of-memory flush leaves): make them entities first
    if (weft_entity_flush(st->r.w) != WEFT_OK) {
        FZ_FAIL("op %d: flush failed: %s", st->ops, weft_last_error(st->r.w));
    }
    adopt(st, in, NULL, 0);
    uint8_t *b = snap_take(st->r.w, &len);
    if (!b) {
        FZ_FAIL("op %d: snapshot write failed: %s", st->ops, weft_last_error(st->r.w));
    }
    bool patched = false;
    if ((k & 1) && len > SNAP_HEADER) {
        int s;
        weft_entity to = pick_handle(st, in, &s);
        patched = patch_entity_word(st, b, len, fz_u32(in), to);
        if (patched) {
            repair_sum(b, len);
        }
    }
    fz_alloc side;
    fz_alloc_init(&side);
    rworld t;
    if (!rworld_new(&t, &side)) {
        FZ_FAIL("cannot build a restore target");
    }
    uint64_t empty = weft_world_hash(t.w);
    weft_status rs = weft_snapshot_restore(t.w, b, len);
    check(st, t.w, "after a restore");
    if (rs != WEFT_OK) {
        if (!patched) {
            FZ_FAIL("op %d: an unpatched snapshot was refused: %s", st->ops,
                    weft_last_error(t.w));
        }
        if (weft_world_hash(t.w) != empty) {
            FZ_FAIL("op %d: a refused restore changed the world", st->ops);
        }
    } else {
        if (!patched && weft_world_hash(t.w) != weft_world_hash(st->r.w)) {
            FZ_FAIL("op %d: the restored world differs", st->ops);
        }
        // every entity goes, cascades included, in bounded time
        for (int i = 0; i < SLOTS; i++) {
            if (st->ids[i] && weft_is_alive(t.w, st->ids[i])) {
                (void)weft_despawn(t.w, st->ids[i]);
                check(st, t.w, "despawning a restored world");
            }
        }
        weft_world_stats ws;
        if (!patched && weft_world_get_stats(t.w, &ws) == WEFT_OK && ws.live_entities != 0) {
            FZ_FAIL("op %d: %lld entities outlived despawning every slot of a restored world",
                    st->ops, (long long)ws.live_entities);
        }
    }
    weft_world_destroy(t.w);
    fz_alloc_expect_empty(&side);
    free(b);
}

// ---- operations ----

// Live entities among `es` (and the pending reservations that a later
// flush made live) go into free slots, or are despawned when none is free.
static void adopt(state *st, fz_in *in, weft_entity *es, int n)
{
    weft_world *w = st->r.w;
    for (int i = 0; i < n + 16; i++) {
        weft_entity *e = i < n ? &es[i] : &st->pending[i - n];
        if (!*e || !weft_is_alive(w, *e) || slot_of(st, *e) >= 0) {
            continue;
        }
        int f = free_slot(st, in);
        if (f >= 0) {
            st->ids[f] = *e;
        } else {
            drop_entity(st, *e);
        }
        if (i >= n) {
            *e = 0;
        }
        st->model_ok = false; // rebuilt from the world
    }
}

static void op_commands(state *st, fz_in *in)
{
    weft_world *w = st->r.w;
    weft_commands *cb = weft_commands_create(w);
    if (!cb) {
        st->model_ok = false;
        return;
    }
    weft_entity made[6];
    int nmade = 0;
    int n = 1 + (int)fz_below(in, 6);
    for (int i = 0; i < n; i++) {
        int a, b;
        weft_entity ea = pick_handle(st, in, &a);
        weft_entity eb = pick_handle(st, in, &b);
        switch (fz_below(in, 4)) {
        case 0:
            (void)weft_cmd_insert(cb, ea, st->r.child_of, &eb, sizeof eb);
            break;
        case 1: {
            weft_value v = {st->r.child_of, sizeof eb, &eb};
            if (nmade < 6) {
                made[nmade] = weft_cmd_spawn(cb, &v, 1);
                nmade += made[nmade] != 0;
            }
            break;
        }
        case 2:
            (void)weft_cmd_despawn(cb, ea);
            break;
        default:
            (void)weft_cmd_remove(cb, ea, st->r.child_of);
            break;
        }
    }
    (void)weft_commands_apply(w, cb);
    for (int i = 0; i < nmade; i++) {
        made[i] = weft_commands_resolve(cb, made[i]); // a buffer's spawn may be provisional
    }
    weft_commands_destroy(cb);
    for (int i = 0; i < nmade; i++) {
        if (!made[i]) {
            continue;
        }
        if (!weft_is_alive(w, made[i])) {
            for (int k = 0; k < 16; k++) {
                if (!st->pending[k]) {
                    st->pending[k] = made[i];
                    break;
                }
            }
        }
    }
    adopt(st, in, made, nmade);
    st->model_ok = false; // the buffer's outcome is rebuilt from the world
}

static void op_run(state *st, fz_in *in)
{
    weft_world *w = st->r.w;
    st->ops++;
    uint8_t op = fz_u8(in) % 16;
    if (getenv("FZ_TRACE")) {
        fprintf(stderr, "op %d: %d\n", st->ops, op);
    }
    int a, b;
    switch (op) {
    case 0: { // plain spawn
        int s = free_slot(st, in);
        if (s >= 0) {
            put(st, s, weft_spawn(w), -1);
        }
        break;
    }
    case 1: { // spawn with ChildOf
        int s = free_slot(st, in);
        weft_entity t = pick_handle(st, in, &b);
        weft_value v[2] = {{st->r.child_of, sizeof t, &t}, {st->r.pos, 8, NULL}};
        weft_entity e = weft_spawn_with(w, v, 1 + (int)fz_below(in, 2));
        bool ok = live(st, b);
        if ((e != 0) != ok && st->model_ok) {
            FZ_FAIL("op %d: spawn with ChildOf %s a %s target", st->ops,
                    e ? "accepted" : "refused", ok ? "live" : "bad");
        }
        if (e && s >= 0) {
            put(st, s, e, b);
        } else if (e) {
            drop_entity(st, e);
        }
        break;
    }
    case 2: { // bulk spawn under one or two parents
        weft_entity t0 = pick_handle(st, in, &a);
        weft_entity t1 = pick_handle(st, in, &b);
        weft_entity ts[4] = {t0, t1, t0, t1};
        weft_entity out[4] = {0};
        weft_value v = {st->r.child_of, sizeof t0, ts};
        weft_status s = weft_spawn_bulk(w, &v, 1, 4, out);
        bool ok = live(st, a) && live(st, b);
        if ((s == WEFT_OK) != ok && st->model_ok) {
            FZ_FAIL("op %d: bulk spawn answered %s for %s targets", st->ops,
                    weft_status_name(s), ok ? "live" : "bad");
        }
        for (int i = 0; s == WEFT_OK && i < 4; i++) {
            int f = free_slot(st, in);
            if (f >= 0) {
                put(st, f, out[i], i & 1 ? b : a);
            } else {
                drop_entity(st, out[i]);
            }
        }
        break;
    }
    case 3:
    case 4: { // weft_set_parent, checked against the model
        weft_entity c = pick_handle(st, in, &a);
        weft_entity p = pick_handle(st, in, &b);
        weft_status s = weft_set_parent(w, c, p);
        if (st->model_ok && live(st, a) && live(st, b)) {
            bool ok = !model_above(st, a, b);
            if ((s == WEFT_OK) != ok) {
                FZ_FAIL("op %d: set_parent(%d, %d) answered %s, the model says %s", st->ops,
                        a, b, weft_status_name(s), ok ? "fine" : "a cycle");
            }
        }
        if (s == WEFT_OK && a >= 0) {
            st->parent[a] = b;
        }
        break;
    }
    case 5: { // a raw insert of ChildOf with any handle
        weft_entity c = pick_handle(st, in, &a);
        weft_entity p = pick_handle(st, in, &b);
        weft_status s = weft_insert(w, c, st->r.child_of, &p, sizeof p);
        if (s == WEFT_OK && a >= 0) {
            st->parent[a] = b;
        }
        if (s == WEFT_OK && (b < 0 || !live(st, b) || (st->model_ok && model_above(st, a, b)))) {
            FZ_FAIL("op %d: a raw ChildOf insert accepted a bad target", st->ops);
        }
        break;
    }
    case 6: {
        weft_entity c = pick_handle(st, in, &a);
        if (weft_remove_parent(w, c) == WEFT_OK && a >= 0) {
            st->parent[a] = -1;
        }
        break;
    }
    case 7:
    case 8: { // the other relationships (not modelled: the check covers them)
        weft_entity x = pick_handle(st, in, &a);
        weft_entity y = pick_handle(st, in, &b);
        weft_component rel = op == 7 ? st->r.owns : st->r.likes;
        if (fz_chance(in, 64)) {
            (void)weft_unrelate(w, x, rel);
        } else {
            (void)weft_relate(w, x, rel, y);
        }
        st->model_ok = st->model_ok && op == 8; // Owns despawns take ChildOf subtrees too
        break;
    }
    case 9:
    case 10: { // despawn: the subtree goes
        weft_entity x = pick_handle(st, in, &a);
        bool below[SLOTS] = {false};
        for (int i = 0; a >= 0 && st->model_ok && i < SLOTS; i++) {
            below[i] = st->ids[i] && model_above(st, a, i);
        }
        if (weft_despawn(w, x) == WEFT_OK) {
            for (int i = 0; i < SLOTS; i++) {
                if (below[i] && weft_is_alive(w, st->ids[i])) {
                    FZ_FAIL("op %d: slot %d outlived the despawn of its ancestor %d",
                            st->ops, i, a);
                }
            }
        }
        break;
    }
    case 11:
        op_commands(st, in);
        break;
    case 12:
        fz_alloc_fail_after(&st->alloc, 1 + fz_below(in, 24));
        st->model_ok = false;
        return; // armed for the next operation
    case 13:
        op_snapshot(st, in);
        break;
    case 14: { // the walks
        weft_entity x = pick_handle(st, in, &a);
        weft_entity buf[SLOTS * 8];
        (void)weft_descendants(w, x, st->r.child_of, buf, SLOTS * 8);
        (void)weft_ancestors(w, x, st->r.owns, buf, SLOTS);
        int32_t n = 0;
        const weft_entity *kids = weft_children(w, x, &n);
        for (int32_t i = 0; i < n; i++) {
            if (weft_parent(w, kids[i]) != x) {
                FZ_FAIL("op %d: a child does not name its parent", st->ops);
            }
        }
        break;
    }
    default: { // insert ChildOf among other values
        weft_entity c = pick_handle(st, in, &a);
        weft_entity p = pick_handle(st, in, &b);
        uint64_t pos = fz_u64(in);
        weft_value v[2] = {{st->r.pos, 8, &pos}, {st->r.child_of, sizeof p, &p}};
        if (weft_insert_many(w, c, v, 2) == WEFT_OK && a >= 0) {
            st->parent[a] = b;
        }
        break;
    }
    }
    fz_alloc_disarm(&st->alloc);
    check(st, w, "after an operation");
    // reserved ids left by an out-of-memory flush become entities here,
    // then everything pending finds a slot or goes; what is still not
    // alive after that is gone for good
    if (weft_entity_flush(w) != WEFT_OK) {
        FZ_FAIL("op %d: flush failed: %s", st->ops, weft_last_error(w));
    }
    adopt(st, in, NULL, 0);
    for (int k = 0; k < 16; k++) {
        if (st->pending[k] && !weft_is_alive(w, st->pending[k])) {
            st->pending[k] = 0;
        }
    }
    model_sweep(st);
    // every live entity sits in a slot (the restore checks depend on it)
    weft_world_stats ws;
    int64_t tracked = 0;
    for (int i = 0; i < SLOTS; i++) {
        tracked += st->ids[i] != 0;
    }
    if (weft_world_get_stats(w, &ws) == WEFT_OK && ws.live_entities != tracked) {
        FZ_FAIL("op %d (%d): %lld live entities, %lld in slots", st->ops, op,
                (long long)ws.live_entities, (long long)tracked);
    }
    if (!st->model_ok) {
        model_rebuild(st);
    }
    model_compare(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static state st;
    memset(&st, 0, sizeof st);
    for (int i = 0; i < SLOTS; i++) {
        st.parent[i] = -1;
    }
    st.model_ok = true;
    fz_alloc_init(&st.alloc);
    if (!rworld_new(&st.r, &st.alloc)) {
        FZ_FAIL("cannot build the world");
    }
    fz_in in = {data, size};
    while (fz_more(&in) && st.ops < MAX_OPS) {
        op_run(&st, &in);
    }
    fz_alloc_disarm(&st.alloc);
    check(&st, st.r.w, "end");
    weft_world_destroy(st.r.w);
    fz_alloc_expect_empty(&st.alloc);
    return 0;
}

// tests/fuzz/fuzz_ops.c - libFuzzer target: the input is a program of
// operations on one world.
//
// Each operation starts with one byte choosing what to do; the bytes after
// it choose its arguments (which component, which entity slot, values,
// sizes). Arguments are drawn from small pools (components registered so
// far, 64 entity slots that keep stale handles after a despawn, queries,
// command buffers, observers) and now and then replaced by garbage (a
// random handle, an unknown component id, a wrong size), so both the happy
// paths and the armor are exercised.
//
// What the program can do: register components of mixed storage, size,
// alignment and flags, with type hooks (an "owning" component whose value
// holds a malloc'd block, so a missed dtor leaks and a double dtor is a
// double free under ASan), lifecycle hooks that issue structural calls, and
// requirements; spawn, spawn_with, spawn_bulk, despawn, insert,
// insert_many, remove, get, get_mut; reserve and flush; queries with random
// terms, iterated with structural calls, nested iterations and early exits
// inside; command buffers recorded and applied (including commands on
// entities despawned earlier in the same buffer, and custom commands with
// owning payloads); observers that issue commands or trigger events;
// relationships (ChildOf and a second one) and subtree despawns; messages
// with owning payloads; resources; removed-component streams; change ticks;
// and a one-shot allocation failure.
//
// What it checks: no crash or sanitizer report; weft_world_check every 64
// operations and at the end; every byte allocated through the hook comes
// back when the world is destroyed; every owned block is freed (ASan leaks).
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

#define MAX_COMPS 24
#define MAX_ENTS 64
#define MAX_QUERIES 8
#define MAX_CMDS 4
#define MAX_OBS 12
#define MAX_DEPTH 3
#define MAX_OPS 4096
#define VALUE_CAP 256

// ---- the program's state ----

typedef enum comp_kind {
    CK_PLAIN,   // bytes, no type hooks
    CK_OWNING,  // own_val: a malloc'd block, all four type hooks
    CK_REL,     // a relationship's source component (value: weft_entity)
    CK_TARGETS, // a relationship's target list (managed by weft)
} comp_kind;

typedef struct comp_info {
    weft_component id;
    comp_kind kind;
    size_t size;
    bool immutable;
    bool no_ticks;
    uint8_t hook_mode;  // lifecycle hook behaviour (see run_hook)
    uint8_t hook_arg;   // a component slot the hook uses
} comp_info;

typedef struct obs_info {
    weft_observer *obs;
    uint8_t mode;
    uint8_t arg;
} obs_info;

// Value layout of CK_OWNING components: the block, then free bytes.
typedef struct own_val {
    uint64_t *heap;
    uint64_t tag;
} own_val;

typedef struct query_slot {
    weft_component terms[WEFT_MAX_TERMS];
    bool unfiltered; // no Added/Changed filter on any term
} query_slot;

typedef struct state {
    weft_world *w;
    fz_alloc alloc;
    comp_info comps[MAX_COMPS];
    int ncomps;
    weft_entity ents[MAX_ENTS];
    weft_query *queries[MAX_QUERIES];
    query_slot qslots[MAX_QUERIES];
    weft_commands *cmds[MAX_CMDS];
    obs_info obs[MAX_OBS];
    weft_event events[2];          // [0]: 8-byte payload, [1]: none
    weft_message_type msgs[2];     // [0]: plain 12 bytes, [1]: owning
    weft_message_cursor cursors[2][2];
    weft_message_cursor removed_cursor;
    weft_component rel;            // the second relationship (0 until used)
    int ops;
    int depth;                     // nesting of iterations / sub-operations
    int callback_depth;            // > 0 inside hooks and observers
    int cb_budget;                 // structural actions callbacks may still take
    bool callbacks;                // a hook or observer was ever registered
} state;

static state *g_st; // for hooks, which get no state pointer of ours
static int g_trace = -1; // FZ_TRACE=1: print every step; FZ_TRACE=2: also check after each

#define TRACE(...)                                                     \
    do {                                                               \
        if (g_trace > 0) {                                             \
            fprintf(stderr, __VA_ARGS__);                              \
        }                                                              \
    } while (0)

// ---- owning values ----

static uint64_t *own_block(uint64_t v)
{
    uint64_t *b = malloc(sizeof *b);
    if (b == NULL) {
        abort();
    }
    *b = v;
    return b;
}

static void own_ctor(void *ptr, int32_t count, void *user)
{
    size_t size = (size_t)(uintptr_t)user;
    for (int32_t i = 0; i < count; i++) {
        uint8_t *p = (uint8_t *)ptr + (size_t)i * size;
        memset(p, 0, size);
        own_val v = {own_block(0), 0};
        memcpy(p, &v, sizeof v);
    }
}

static void own_dtor(void *ptr, int32_t count, void *user)
{
    size_t size = (size_t)(uintptr_t)user;
    for (int32_t i = 0; i < count; i++) {
        own_val v;
        memcpy(&v, (uint8_t *)ptr + (size_t)i * size, sizeof v);
        free(v.heap);
    }
}

static void own_move(void *dst, void *src, int32_t count, void *user)
{
    size_t size = (size_t)(uintptr_t)user;
    memmove(dst, src, (size_t)count * size);
}

static void own_copy(void *dst, const void *src, int32_t count, void *user)
{
    size_t size = (size_t)(uintptr_t)user;
    for (int32_t i = 0; i < count; i++) {
        const uint8_t *s = (const uint8_t *)src + (size_t)i * size;
        uint8_t *d = (uint8_t *)dst + (size_t)i * size;
        own_val v;
        memcpy(&v, s, sizeof v);
        memcpy(d, s, size);
        v.heap = own_block(v.heap != NULL ? *v.heap : 0);
        memcpy(d, &v, sizeof v);
    }
}

// ---- argument pickers ----

static comp_info *pick_comp(state *st, fz_in *in)
{
    if (st->ncomps == 0) {
        return NULL;
    }
    return &st->comps[fz_below(in, (uint32_t)st->ncomps)];
}

// A component id: mostly a registered one, sometimes garbage.
static weft_component pick_id(state *st, fz_in *in)
{
    uint8_t b = fz_u8(in);
    if (b >= 248 || st->ncomps == 0) {
        return (weft_component)(b == 255 ? fz_u32(in) : b - 240u);
    }
    return st->comps[b % (uint32_t)st->ncomps].id;
}

static comp_info *find_comp(state *st, weft_component id)
{
    for (int i = 0; i < st->ncomps; i++) {
        if (st->comps[i].id == id) {
            return &st->comps[i];
        }
    }
    return NULL;
}

// An entity: mostly a pool slot (live or stale), sometimes garbage.
static weft_entity pick_ent(state *st, fz_in *in)
{
    uint8_t b = fz_u8(in);
    if (b < 240) {
        return st->ents[b % MAX_ENTS];
    }
    switch (b) {
    case 240:
        return 0;
    case 241:
        return fz_u64(in);
    case 242:
        return (weft_entity)fz_u8(in); // index only, generation 0
    default:
        return st->ents[fz_u8(in) % MAX_ENTS] + ((uint64_t)1 << 32); // future generation
    }
}

static void put_ent(state *st, fz_in *in, weft_entity e)
{
    if (e != 0) {
        st->ents[fz_u8(in) % MAX_ENTS] = e;
    }
}

// Builds a value for component c in buf; returns the pointer to pass (NULL:
// default-construct) and its size (sometimes wrong on purpose). An owning
// value gets its own block: release it with value_fini after the call.
static const void *value_make(state *st, fz_in *in, const comp_info *c, uint8_t *buf,
                              size_t *size)
{
    *size = c ? c->size : 0;
    if (c == NULL) {
        *size = fz_below(in, 17);
        memset(buf, 0, VALUE_CAP);
        return fz_chance(in, 128) ? buf : NULL;
    }
    uint8_t mode = fz_u8(in);
    if (mode < 8) {
        *size = c->size + 1 + (size_t)(mode & 3);
    } else if (mode < 12) {
        *size = c->size == 0 ? 4 : c->size - 1;
    }
    if (mode >= 12 && mode < 40) {
        return NULL;
    }
    if (c->size > VALUE_CAP || *size > VALUE_CAP) {
        return NULL;
    }
    memset(buf, 0, VALUE_CAP);
    switch (c->kind) {
    case CK_PLAIN:
        fz_bytes(in, buf, c->size < 16 ? c->size : 16);
        break;
    case CK_OWNING: {
        own_val v = {own_block(fz_u8(in)), fz_u8(in)};
        memcpy(buf, &v, sizeof v);
        break;
    }
    case CK_REL: {
        weft_entity e = pick_ent(st, in);
        memcpy(buf, &e, sizeof e);
        break;
    }
    case CK_TARGETS:
        return NULL;
    }
    return buf;
}

static void value_fini(const comp_info *c, const void *ptr)
{
    if (c != NULL && c->kind == CK_OWNING && ptr != NULL) {
        own_val v;
        memcpy(&v, ptr, sizeof v);
        free(v.heap);
    }
}

// Writes into a writable value without breaking its type's invariants.
static void value_scribble(const comp_info *c, void *p, uint8_t b)
{
    if (c == NULL || p == NULL || c->size == 0) {
        return;
    }
    switch (c->kind) {
    case CK_PLAIN:
        ((uint8_t *)p)[b % c->size] ^= (uint8_t)(b | 1);
        break;
    case CK_OWNING: {
        own_val v;
        memcpy(&v, p, sizeof v);
        if (v.heap == NULL) {
            FZ_FAIL("owning value without its block");
        }
        (*v.heap)++;
        v.tag += b;
        memcpy(p, &v, sizeof v);
        break;
    }
    case CK_REL:
    case CK_TARGETS:
        break; // immutable or managed by weft
    }
}

// Reads a value the way a user would (catches dangling pointers).
static uint64_t value_touch(const comp_info *c, const void *p)
{
    if (c == NULL || p == NULL) {
        return 0;
    }
    uint64_t acc = 0;
    const uint8_t *b = p;
    size_t n = c->size < 64 ? c->size : 64;
    for (size_t i = 0; i < n; i++) {
        acc = acc * 31 + b[i];
    }
    if (c->kind == CK_OWNING) {
        own_val v;
        memcpy(&v, p, sizeof v);
        if (v.heap == NULL) {
            FZ_FAIL("owning value without its block");
        }
        acc += *v.heap;
    }
    return acc;
}

// Components an operation may insert or remove directly: every kind the
// program registered, relationship target lists included (weft must refuse
// or survive hand edits of those, see tests/api/test_api_hostile.c).
static bool user_touchable(const comp_info *c)
{
    return c != NULL;
}

// ---- hooks and observers ----

static void check_world(state *st, const char *where);
static void op_run(state *st, fz_in *in);

// A pseudo-random choice inside a callback, derived from the program's
// state rather than from the input, so callbacks fire the same way however
// often they run.
static uint32_t cb_mix(state *st, uint64_t a, uint64_t b)
{
    uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + (uint64_t)st->ops);
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    return (uint32_t)(x >> 32);
}

static void callback_action(state *st, weft_world *w, weft_entity e, weft_component c,
                            uint8_t mode, uint8_t arg)
{
    comp_info *other = st->ncomps ? &st->comps[arg % st->ncomps] : NULL;
    comp_info *self = find_comp(st, c);
    if (self != NULL && self->size > 0 && self->kind != CK_TARGETS) {
        (void)value_touch(self, weft_get(w, e, c, self->size));
    }
    // weft bounds a cascade by rounds (WEFT_MAX_EVENT_DEPTH), not by
    // volume: hooks that each queue two commands which fire them again
    // double the work every round, 2^64 in all. Such a program hangs by
    // its own design, so callbacks act only while the operation's budget
    // lasts.
    if (mode % 10 != 0 && st->cb_budget-- <= 0) {
        return;
    }
    switch (mode % 10) {
    case 0:
        break;
    case 1:
        (void)weft_despawn(w, e);
        break;
    case 2:
        if (other != NULL && other->kind != CK_TARGETS && other->kind != CK_REL) {
            (void)weft_insert(w, e, other->id, NULL, other->size);
        }
        break;
    case 3:
        if (user_touchable(other)) {
            (void)weft_remove(w, e, other->id);
        }
        break;
    case 4:
        if (other != NULL && other->kind != CK_TARGETS && other->kind != CK_REL) {
            weft_value v = {other->id, other->size, NULL};
            weft_entity n = weft_spawn_with(w, &v, 1);
            if (n != 0) {
                st->ents[cb_mix(st, e, arg) % MAX_ENTS] = n;
            }
        }
        break;
    case 5: {
        uint64_t payload = e;
        (void)weft_trigger_event(w, st->events[0], e, &payload, sizeof payload,
                                 (arg & 1) != 0);
        break;
    }
    case 6:
        (void)weft_set_parent(w, e, st->ents[cb_mix(st, e, arg) % MAX_ENTS]);
        break;
    case 7: {
        // Apply from inside a callback: refused (WRONG_PHASE), never run.
        weft_status s = weft_commands_apply(w, weft_world_commands(w));
        if (s == WEFT_OK && weft_commands_count(weft_world_commands(w)) > 0) {
            FZ_FAIL("weft_commands_apply ran inside a callback");
        }
        break;
    }
    case 8:
        if (st->queries[arg % MAX_QUERIES] != NULL) {
            (void)weft_query_count(w, st->queries[arg % MAX_QUERIES]);
        }
        break;
    case 9: {
        uint8_t msg[12] = {0};
        memcpy(msg, &e, sizeof e);
        (void)weft_message_write(w, st->msgs[0], msg, sizeof msg);
        break;
    }
    }
}

static void hook_fn(weft_world *w, weft_entity e, weft_component c, void *user)
{
    state *st = g_st;
    comp_info *ci = user;
    if (st == NULL || st->w != w) {
        FZ_FAIL("lifecycle hook called with a foreign world");
    }
    st->callback_depth++;
    TRACE("  hook c%u mode %d on %llx\n", (unsigned)c, ci->hook_mode % 10,
          (unsigned long long)e);
    callback_action(st, w, e, c, ci->hook_mode, ci->hook_arg);
    st->callback_depth--;
}

static void observer_fn(weft_world *w, weft_trigger *t, void *user)
{
    state *st = g_st;
    obs_info *oi = user;
    if (st == NULL || st->w != w) {
        FZ_FAIL("observer called with a foreign world");
    }
    if (t->payload_size > 0 && t->payload == NULL) {
        FZ_FAIL("trigger with a payload size and no payload");
    }
    st->callback_depth++;
    TRACE("  observer ev %u c%u mode %d on %llx\n", (unsigned)t->event, (unsigned)t->component,
          oi->mode, (unsigned long long)t->entity);
    if (oi->mode == 10) {
        // Destroys itself: safe during a trigger.
        weft_observer *self = oi->obs;
        oi->obs = NULL;
        if (self != NULL) {
            (void)weft_observer_destroy(w, self);
        }
    } else {
        if (oi->mode == 11) {
            t->propagate = false;
        }
        callback_action(st, w, t->entity, t->component, oi->mode, oi->arg);
    }
    st->callback_depth--;
}

static void observer_free(void *user)
{
    obs_info *oi = user;
    oi->obs = NULL;
}

static void message_drop(void *msg, void *user)
{
    (void)user;
    own_val v;
    memcpy(&v, msg, sizeof v);
    free(v.heap);
}

// Custom command payload: an owned block plus what to do.
typedef struct custom_payload {
    uint64_t *heap;
    uint8_t mode;
    uint8_t slot;
} custom_payload;

static void custom_fn(weft_world *w, void *payload, void *user)
{
    state *st = user;
    custom_payload p;
    memcpy(&p, payload, sizeof p);
    if (p.heap == NULL) {
        FZ_FAIL("custom payload lost its block");
    }
    (*p.heap)++;
    switch (p.mode % 4) {
    case 0:
        break;
    case 1: {
        weft_entity e = weft_spawn(w);
        if (e != 0) {
            st->ents[p.slot % MAX_ENTS] = e;
        }
        break;
    }
    case 2:
        (void)weft_despawn(w, st->ents[p.slot % MAX_ENTS]);
        break;
    case 3:
        (void)weft_entity_reserve(w);
        break;
    }
}

static void custom_drop(void *payload, void *user)
{
    (void)user;
    custom_payload p;
    memcpy(&p, payload, sizeof p);
    free(p.heap);
}

// ---- operations ----

// True when a direct call on component c at the top level has no effects
// beyond its own: no hook or observer was ever registered, c is a plain or
// owning component (relationship components have weft's own hooks), and
// no allocation failure is armed.
static bool plain_effects(const state *st, const comp_info *c)
{
    // Commands recorded into the world's own buffer at depth 0 are applied
    // when the next structural call ends (weft.h, weft_world_commands), so
    // they count as effects too: ask before that call.
    return st->depth == 0 && st->callback_depth == 0 && !st->callbacks && c != NULL &&
           weft_commands_count(weft_world_commands(st->w)) == 0 &&
           (c->kind == CK_PLAIN || c->kind == CK_OWNING) &&
           atomic_load(&st->alloc.fail_at) == 0;
}

static const size_t k_sizes[] = {0, 1, 2, 3, 4, 8, 12, 16, 24, 40, 64, 100, 128, 256, 4096};
static const size_t k_aligns[] = {0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 3, 8192, 4096};

static void op_register(state *st, fz_in *in)
{
    if (st->ncomps >= MAX_COMPS - 4) {
        return;
    }
    char name[32];
    snprintf(name, sizeof name, "c%d", st->ncomps);
    uint8_t b = fz_u8(in);
    if (b == 0) {
        name[0] = '\0'; // empty name: INVALID_ARG
    } else if (b == 1 && st->ncomps > 0) {
        snprintf(name, sizeof name, "c%d", st->ncomps - 1); // taken (or not)
    }
    comp_info *ci = &st->comps[st->ncomps];
    memset(ci, 0, sizeof *ci);
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    uint8_t kind = fz_u8(in);
    if (kind < 64) {
        ci->kind = CK_OWNING;
        d.size = sizeof(own_val) * (1 + fz_below(in, 3));
        d.hooks.ctor = own_ctor;
        d.hooks.dtor = own_dtor;
        d.hooks.move = own_move;
        d.hooks.copy = own_copy;
        d.hooks.user = (void *)(uintptr_t)d.size;
    } else {
        ci->kind = CK_PLAIN;
        uint8_t s = fz_u8(in);
        // 255: far above the limit, low bits zero (2^40, or 2^31 on 32-bit)
        d.size = s == 255 ? ((size_t)1 << (SIZE_MAX > UINT32_MAX ? 40 : 31))
                          : k_sizes[s % (sizeof k_sizes / sizeof *k_sizes)];
        d.align = k_aligns[fz_below(in, sizeof k_aligns / sizeof *k_aligns)];
    }
    d.storage = (weft_storage)fz_below(in, 4); // 3: invalid
    uint8_t fl = fz_u8(in);
    d.flags = (uint32_t)(fl & 7u);
    if (fl == 255) {
        d.flags |= 1u << 9; // unknown bit: INVALID_ARG
    }
    ci->hook_mode = fz_u8(in);
    ci->hook_arg = fz_u8(in);
    if (ci->hook_mode >= 128) {
        // Which events get the hook: bits of hook_arg.
        if (ci->hook_arg & 1) {
            d.lifecycle.on_add = hook_fn;
        }
        if (ci->hook_arg & 2) {
            d.lifecycle.on_insert = hook_fn;
        }
        if (ci->hook_arg & 4) {
            d.lifecycle.on_replace = hook_fn;
        }
        if (ci->hook_arg & 8) {
            d.lifecycle.on_remove = hook_fn;
        }
        if (ci->hook_arg & 16) {
            d.lifecycle.on_despawn = hook_fn;
        }
        d.lifecycle.user = ci;
        st->callbacks = true;
    }
    weft_require reqs[2];
    uint8_t req_vals[2][16];
    memset(reqs, 0, sizeof reqs);
    memset(req_vals, 0, sizeof req_vals);
    int nreq = (int)fz_below(in, 4);
    nreq = nreq > 2 ? 0 : nreq;
    for (int i = 0; i < nreq; i++) {
        reqs[i].id = pick_id(st, in);
        comp_info *rc = find_comp(st, reqs[i].id);
        if (rc != NULL && rc->kind == CK_PLAIN && rc->size > 0 && rc->size <= 16 &&
            fz_chance(in, 128)) {
            fz_bytes(in, req_vals[i], rc->size);
            reqs[i].value = req_vals[i];
            reqs[i].size = rc->size;
        }
    }
    d.required = nreq ? reqs : NULL;
    d.required_count = nreq;
    weft_component id = weft_component_register(st->w, &d);
    if (id == 0) {
        return;
    }
    ci->id = id;
    ci->size = d.size;
    ci->immutable = (d.flags & WEFT_COMPONENT_IMMUTABLE) != 0;
    ci->no_ticks = (d.flags & WEFT_COMPONENT_NO_CHANGE_TICKS) != 0;
    st->ncomps++;
    // Later requirements can close a cycle (A requires B requires A).
    if (fz_chance(in, 32) && st->ncomps > 1) {
        weft_require r;
        memset(&r, 0, sizeof r);
        r.id = id;
        (void)weft_component_require(st->w, pick_id(st, in), &r, 1);
    }
}

static void add_rel_comps(state *st, weft_component src, bool linked)
{
    (void)linked;
    if (src == 0 || find_comp(st, src) != NULL || st->ncomps > MAX_COMPS - 2) {
        return;
    }
    comp_info *s = &st->comps[st->ncomps++];
    memset(s, 0, sizeof *s);
    s->id = src;
    s->kind = CK_REL;
    s->size = sizeof(weft_entity);
    s->immutable = true;
    weft_component tgt = weft_relationship_targets(st->w, src);
    weft_component_info info;
    if (tgt != 0 && weft_component_info_get(st->w, tgt, &info) == WEFT_OK) {
        comp_info *t = &st->comps[st->ncomps++];
        memset(t, 0, sizeof *t);
        t->id = tgt;
        t->kind = CK_TARGETS;
        t->size = info.size;
        t->immutable = (info.flags & WEFT_COMPONENT_IMMUTABLE) != 0;
        t->no_ticks = (info.flags & WEFT_COMPONENT_NO_CHANGE_TICKS) != 0;
    }
}

// Up to `max` values for a multi-component call; owners[i] is the component
// a value was built for (NULL for garbage), so fini_values releases exactly
// the owning values it made.
static int build_values(state *st, fz_in *in, weft_value *vals, uint8_t (*bufs)[VALUE_CAP],
                        comp_info **owners, int max)
{
    int n = (int)fz_below(in, (uint32_t)max + 1);
    for (int i = 0; i < n; i++) {
        comp_info *c = pick_comp(st, in);
        vals[i].id = c ? c->id : pick_id(st, in);
        vals[i].ptr = value_make(st, in, c, bufs[i], &vals[i].size);
        owners[i] = c;
    }
    return n;
}

static void fini_values(comp_info **owners, const weft_value *vals, int n)
{
    for (int i = 0; i < n; i++) {
        value_fini(owners[i], vals[i].ptr);
    }
}

static void op_spawn_bulk(state *st, fz_in *in)
{
    enum { COLS = 3, ROWS = 40 };
    weft_value cols[COLS];
    int ncols = (int)fz_below(in, COLS + 1);
    int32_t n = (int32_t)fz_below(in, ROWS + 1);
    if (fz_u8(in) == 0) {
        n = -1; // INVALID_ARG
    }
    static uint8_t data[COLS][ROWS * 48];
    comp_info *owners[COLS] = {0};
    for (int i = 0; i < ncols; i++) {
        comp_info *c = pick_comp(st, in);
        if (c == NULL || !user_touchable(c) || c->kind == CK_REL || c->size > 48 ||
            n <= 0) {
            cols[i].id = c ? c->id : pick_id(st, in);
            cols[i].size = c ? c->size : 0;
            cols[i].ptr = NULL;
            continue;
        }
        cols[i].id = c->id;
        cols[i].size = c->size;
        cols[i].ptr = NULL;
        if (fz_chance(in, 160) && c->size > 0) {
            memset(data[i], 0, sizeof data[i]);
            if (c->kind == CK_OWNING) {
                for (int32_t r = 0; r < n; r++) {
                    own_val v = {own_block((uint64_t)r), (uint64_t)r};
                    memcpy(data[i] + (size_t)r * c->size, &v, sizeof v);
                }
                owners[i] = c;
            } else {
                fz_bytes(in, data[i], (size_t)n * c->size < 64 ? (size_t)n * c->size : 64);
            }
            cols[i].ptr = data[i];
        }
    }
    weft_entity out[ROWS];
    weft_status s = weft_spawn_bulk(st->w, ncols ? cols : NULL, ncols, n, out);
    if (s == WEFT_OK) {
        for (int32_t r = 0; r < n; r++) {
            if (r < 8) {
                put_ent(st, in, out[r]);
            }
        }
    }
    for (int i = 0; i < ncols; i++) {
        if (owners[i] != NULL) {
            for (int32_t r = 0; r < n; r++) {
                own_val v;
                memcpy(&v, data[i] + (size_t)r * owners[i]->size, sizeof v);
                free(v.heap);
            }
        }
    }
}

static void op_query_create(state *st, fz_in *in)
{
    int slot = (int)fz_below(in, MAX_QUERIES);
    if (st->queries[slot] != NULL) {
        if (weft_query_destroy(st->w, st->queries[slot]) == WEFT_OK) {
            st->queries[slot] = NULL;
        } else {
            return; // being iterated
        }
    }
    weft_query_desc d;
    memset(&d, 0, sizeof d);
    d.term_count = (int32_t)fz_below(in, 6);
    if (fz_u8(in) == 0) {
        d.term_count = WEFT_MAX_TERMS + 1; // INVALID_ARG
    }
    bool any_filter = false;
    for (int32_t i = 0; i < d.term_count && i < WEFT_MAX_TERMS; i++) {
        weft_term *t = &d.terms[i];
        t->id = pick_id(st, in);
        uint8_t b = fz_u8(in);
        t->access = (weft_access)(b & 3);
        t->oper = (weft_oper)((b >> 2) % 6);
        t->or_group = (int32_t)((b >> 5) & 1);
        uint8_t f = fz_u8(in);
        t->filter = f < 200 ? 0 : (uint32_t)(f & 3);
        if (f == 255) {
            t->filter = 8; // unknown bit
        }
        // Read-only by default for ids the fuzzer may not scribble on.
        comp_info *c = find_comp(st, t->id);
        if (t->access == WEFT_ACCESS_WRITE && c != NULL &&
            (c->kind == CK_REL || c->kind == CK_TARGETS) && !fz_chance(in, 16)) {
            t->access = WEFT_ACCESS_READ;
        }
        any_filter |= t->filter != 0;
    }
    uint8_t fl = fz_u8(in);
    d.flags = fl < 200 ? 0 : (uint32_t)(fl & 3);
    st->queries[slot] = weft_query_create(st->w, &d);
    for (int32_t i = 0; i < WEFT_MAX_TERMS; i++) {
        st->qslots[slot].terms[i] = d.terms[i].id;
    }
    st->qslots[slot].unfiltered = !any_filter;
}

static void iterate(state *st, fz_in *in, int slot)
{
    weft_query *q = st->queries[slot];
    const query_slot *qs = &st->qslots[slot];
    weft_iter it;
    if (weft_query_iter(st->w, q, &it) != WEFT_OK) {
        return;
    }
    int chunks = 0;
    while (weft_iter_next(&it)) {
        int32_t n = weft_iter_count(&it);
        const weft_entity *ents = weft_iter_entities(&it);
        if (n <= 0 || ents == NULL) {
            FZ_FAIL("a chunk with %d rows, entities %p", (int)n, (const void *)ents);
        }
        for (int32_t r = 0; r < n; r++) {
            if (ents[r] == 0) {
                FZ_FAIL("entity 0 in a chunk");
            }
        }
        uint8_t action = fz_u8(in);
        int32_t term = (int32_t)fz_below(in, 6);
        // Mostly the term's own component (right size), now and then another.
        comp_info *tc = term < WEFT_MAX_TERMS ? find_comp(st, qs->terms[term]) : NULL;
        comp_info *c = tc;
        if (c == NULL || fz_u8(in) < 8) {
            c = pick_comp(st, in);
        }
        size_t size = c ? c->size : 4;
        int32_t row = (int32_t)fz_below(in, (uint32_t)n);
        // A field that comes back holds the term's component, whichever
        // component of that size was asked for: read and write it as that
        // one (reading another kind's bytes as an owning pointer is the
        // harness's own fault, not weft's).
        if (tc != NULL && tc->size == size) {
            c = tc;
        }
        switch (action % 8) {
        case 0: {
            const uint8_t *col = weft_iter_field(&it, term, size);
            if (col != NULL) {
                (void)value_touch(c, col + (size_t)row * size);
            }
            break;
        }
        case 1: {
            uint8_t *col = weft_iter_field_mut(&it, term, size);
            if (col != NULL) {
                value_scribble(c, col + (size_t)row * size, action);
            }
            break;
        }
        case 2: {
            void *v = weft_iter_get_mut(&it, term, row, size);
            value_scribble(c, v, action);
            (void)weft_iter_mark(&it, term, row);
            break;
        }
        case 3:
            (void)value_touch(c, weft_iter_get(&it, term, row, size));
            (void)weft_iter_has(&it, term);
            break;
        case 4:
            if (st->depth < MAX_DEPTH) {
                st->depth++;
                op_run(st, in); // structural calls are deferred here
                st->depth--;
            }
            break;
        case 5:
            if (st->depth < MAX_DEPTH) {
                int q2 = (int)fz_below(in, MAX_QUERIES);
                if (st->queries[q2] != NULL) {
                    st->depth++;
                    iterate(st, in, q2);
                    st->depth--;
                }
            }
            break;
        case 6:
            if (c != NULL && c->kind == CK_PLAIN && c->size > 0 && c->size <= VALUE_CAP) {
                uint8_t buf[VALUE_CAP];
                memset(buf, 0, sizeof buf);
                fz_bytes(in, buf, c->size < 8 ? c->size : 8);
                (void)weft_iter_set_if_neq(&it, term, row, buf, c->size, NULL);
            }
            break;
        case 7:
            weft_iter_fini(&it);
            return;
        }
        if (++chunks > 64) {
            weft_iter_fini(&it);
            return;
        }
    }
}

static void op_commands(state *st, fz_in *in)
{
    int slot = (int)fz_below(in, MAX_CMDS + 1);
    weft_commands *cb;
    if (slot == MAX_CMDS) {
        cb = weft_world_commands(st->w);
    } else {
        if (st->cmds[slot] == NULL) {
            st->cmds[slot] = weft_commands_create(st->w);
        }
        cb = st->cmds[slot];
    }
    if (cb == NULL) {
        return;
    }
    int n = (int)fz_below(in, 9);
    for (int i = 0; i < n; i++) {
        uint8_t k = fz_u8(in);
        switch (k % 12) {
        case 0: {
            weft_value vals[3];
            uint8_t bufs[3][VALUE_CAP];
            comp_info *owners[3];
        int nv = build_values(st, in, vals, bufs, owners, 3);
            put_ent(st, in, weft_cmd_spawn(cb, nv ? vals : NULL, nv));
            fini_values(owners, vals, nv);
            break;
        }
        case 1:
        case 2: {
            comp_info *c = pick_comp(st, in);
            if (!user_touchable(c)) {
                break;
            }
            uint8_t buf[VALUE_CAP];
            size_t size;
            const void *p = value_make(st, in, c, buf, &size);
            weft_entity e = pick_ent(st, in);
            if (k % 12 == 1) {
                (void)weft_cmd_insert(cb, e, c->id, p, size);
            } else {
                (void)weft_cmd_try_insert(cb, e, c->id, p, size);
            }
            value_fini(c, p);
            break;
        }
        case 3: {
            weft_value vals[3];
            uint8_t bufs[3][VALUE_CAP];
            comp_info *owners[3];
        int nv = build_values(st, in, vals, bufs, owners, 3);
            (void)weft_cmd_insert_many(cb, pick_ent(st, in), nv ? vals : NULL, nv);
            fini_values(owners, vals, nv);
            break;
        }
        case 4:
        case 5: {
            comp_info *c = pick_comp(st, in);
            if (!user_touchable(c)) {
                break;
            }
            if (k % 12 == 4) {
                (void)weft_cmd_remove(cb, pick_ent(st, in), c->id);
            } else {
                (void)weft_cmd_try_remove(cb, pick_ent(st, in), c->id);
            }
            break;
        }
        case 6:
            (void)weft_cmd_despawn(cb, pick_ent(st, in));
            break;
        case 7:
            (void)weft_cmd_try_despawn(cb, pick_ent(st, in));
            break;
        case 8: {
            comp_info *c = pick_comp(st, in);
            if (c == NULL || c->kind == CK_REL || c->kind == CK_TARGETS) {
                break;
            }
            uint8_t buf[VALUE_CAP];
            size_t size;
            const void *p = value_make(st, in, c, buf, &size);
            (void)weft_cmd_resource_insert(cb, c->id, p, size);
            value_fini(c, p);
            break;
        }
        case 9:
            (void)weft_cmd_resource_remove(cb, pick_id(st, in));
            break;
        case 10: {
            custom_payload p = {own_block(0), fz_u8(in), fz_u8(in)};
            size_t size = sizeof p + fz_below(in, 64);
            uint8_t buf[sizeof p + 64];
            memset(buf, 0, sizeof buf);
            memcpy(buf, &p, sizeof p);
            if (weft_cmd_custom(cb, custom_fn, buf, size, custom_drop, st) != WEFT_OK) {
                free(p.heap);
            }
            break;
        }
        case 11: {
            // Despawn then touch the same entity within one buffer.
            weft_entity e = pick_ent(st, in);
            (void)weft_cmd_despawn(cb, e);
            comp_info *c = pick_comp(st, in);
            if (user_touchable(c) && c->kind != CK_REL) {
                (void)weft_cmd_insert(cb, e, c->id, NULL, c->size);
                (void)weft_cmd_remove(cb, e, c->id);
            }
            (void)weft_cmd_despawn(cb, e);
            break;
        }
        }
    }
    if (fz_chance(in, 160)) {
        (void)weft_commands_apply(st->w, cb);
    }
}

static void op_observer(state *st, fz_in *in)
{
    int slot = (int)fz_below(in, MAX_OBS);
    obs_info *oi = &st->obs[slot];
    if (oi->obs != NULL) {
        weft_observer *o = oi->obs;
        if (weft_observer_destroy(st->w, o) != WEFT_OK) {
            FZ_FAIL("weft_observer_destroy of a live observer: %s", weft_last_error(st->w));
        }
        oi->obs = NULL;
        return;
    }
    weft_observer_desc d;
    memset(&d, 0, sizeof d);
    uint8_t ev = fz_u8(in);
    if (ev < 200) {
        d.event = (weft_event)(1 + ev % 5);
        d.component = pick_id(st, in);
    } else {
        d.event = ev < 250 ? st->events[ev & 1] : (weft_event)fz_u8(in);
    }
    if (fz_chance(in, 48)) {
        d.entity = pick_ent(st, in);
    }
    oi->mode = (uint8_t)fz_below(in, 12);
    oi->arg = fz_u8(in);
    d.fn = observer_fn;
    d.user = oi;
    d.free_user = observer_free;
    st->callbacks = true;
    oi->obs = weft_observer_create(st->w, &d);
}

static void op_relationship(state *st, fz_in *in)
{
    uint8_t k = fz_u8(in);
    weft_component child_of = weft_child_of(st->w);
    add_rel_comps(st, child_of, true);
    if (st->rel == 0 && k >= 240) {
        weft_relationship_desc d;
        memset(&d, 0, sizeof d);
        d.name = "likes";
        d.flags = (k & 1) ? WEFT_RELATIONSHIP_LINKED_DESPAWN : 0;
        st->rel = weft_relationship_register(st->w, &d);
        add_rel_comps(st, st->rel, (k & 1) != 0);
        return;
    }
    weft_component rel = (k & 1) && st->rel ? st->rel : child_of;
    weft_entity a = pick_ent(st, in);
    weft_entity b = pick_ent(st, in);
    weft_entity buf[16];
    int32_t cnt = 0;
    switch ((k >> 1) % 8) {
    case 0:
        (void)weft_set_parent(st->w, a, b);
        break;
    case 1:
        (void)weft_relate(st->w, a, rel, b);
        break;
    case 2:
        (void)weft_remove_parent(st->w, a);
        break;
    case 3:
        (void)weft_unrelate(st->w, a, rel);
        break;
    case 4: {
        const weft_entity *kids = weft_children(st->w, a, &cnt);
        for (int32_t i = 0; i < cnt; i++) {
            if (weft_parent(st->w, kids[i]) != a) {
                FZ_FAIL("child %llx of %llx has parent %llx", (unsigned long long)kids[i],
                        (unsigned long long)a, (unsigned long long)weft_parent(st->w, kids[i]));
            }
        }
        break;
    }
    case 5:
        (void)weft_descendants(st->w, a, rel, buf, (int64_t)fz_below(in, 17));
        break;
    case 6:
        (void)weft_ancestors(st->w, a, rel, buf, (int32_t)fz_below(in, 17));
        (void)weft_related(st->w, a, rel);
        (void)weft_related_sources(st->w, a, rel, &cnt);
        break;
    case 7: {
        // A small subtree under a, despawned (or not) later.
        weft_entity parent = a;
        for (int i = 0; i < 3; i++) {
            weft_entity c = weft_spawn(st->w);
            if (c == 0) {
                break;
            }
            (void)weft_relate(st->w, c, rel, parent);
            put_ent(st, in, c);
            parent = fz_chance(in, 128) ? c : parent;
        }
        break;
    }
    }
}

static void op_messages(state *st, fz_in *in)
{
    uint8_t k = fz_u8(in);
    int t = k & 1;
    switch ((k >> 1) % 6) {
    case 0: {
        uint8_t msg[16];
        memset(msg, 0, sizeof msg);
        if (t == 0) {
            fz_bytes(in, msg, 12);
            (void)weft_message_write(st->w, st->msgs[0], msg, 12);
        } else {
            own_val v = {own_block(fz_u8(in)), 0};
            if (weft_message_write(st->w, st->msgs[1], &v, sizeof v) != WEFT_OK) {
                free(v.heap);
            }
        }
        break;
    }
    case 1:
    case 2: {
        weft_message_cursor *cur = &st->cursors[t][fz_below(in, 2)];
        size_t size = t == 0 ? 12 : sizeof(own_val);
        for (int i = 0; i < 4; i++) {
            const void *m = weft_message_read(st->w, st->msgs[t], cur, size);
            if (m == NULL) {
                break;
            }
            if (t == 1) {
                own_val v;
                memcpy(&v, m, sizeof v);
                if (v.heap == NULL) {
                    FZ_FAIL("message lost its block");
                }
                (void)*v.heap;
            }
        }
        (void)weft_message_unread(st->w, st->msgs[t], cur);
        break;
    }
    case 3:
        weft_messages_update(st->w);
        break;
    case 4:
        (void)weft_message_write(st->w, (weft_message_type)fz_u8(in), NULL, fz_below(in, 20));
        break;
    case 5: {
        comp_info *c = pick_comp(st, in);
        if (c != NULL) {
            if (fz_chance(in, 100)) {
                (void)weft_removed_track(st->w, c->id);
            }
            for (int i = 0; i < 4; i++) {
                weft_entity e = weft_removed_read(st->w, c->id, &st->removed_cursor);
                if (e == 0) {
                    break;
                }
            }
        }
        break;
    }
    }
}

static void op_resource(state *st, fz_in *in)
{
    comp_info *c = pick_comp(st, in);
    if (c == NULL || c->kind == CK_REL || c->kind == CK_TARGETS) {
        return;
    }
    uint8_t k = fz_u8(in);
    switch (k % 4) {
    case 0: {
        uint8_t buf[VALUE_CAP];
        size_t size;
        const void *p = value_make(st, in, c, buf, &size);
        (void)weft_resource_insert(st->w, c->id, p, size);
        value_fini(c, p);
        break;
    }
    case 1:
        (void)weft_resource_remove(st->w, c->id);
        break;
    case 2:
        (void)value_touch(c, weft_resource_get(st->w, c->id, c->size));
        break;
    case 3: {
        value_scribble(c, weft_resource_get_mut(st->w, c->id, c->size), k);
        weft_ticks t;
        (void)weft_resource_get_ticks(st->w, c->id, &t);
        break;
    }
    }
}

static void op_inspect(state *st, fz_in *in)
{
    uint8_t k = fz_u8(in);
    switch (k % 5) {
    case 0: {
        weft_world_stats s;
        if (weft_world_get_stats(st->w, &s) != WEFT_OK) {
            break;
        }
        weft_archetype_info ai;
        (void)weft_archetype_info_get(st->w, (int32_t)fz_below(in, (uint32_t)s.archetypes + 2),
                                      &ai);
        break;
    }
    case 1:
        (void)weft_world_hash(st->w);
        break;
    case 2: {
        weft_ticks t;
        comp_info *c = pick_comp(st, in);
        (void)weft_get_ticks(st->w, pick_ent(st, in), c ? c->id : 0, &t);
        (void)weft_entity_archetype(st->w, pick_ent(st, in));
        break;
    }
    case 3:
        (void)weft_world_increment_change_tick(st->w);
        if (fz_chance(in, 16)) {
            (void)weft_world_clamp_ticks(st->w, true);
        }
        break;
    case 4: {
        weft_component dis = weft_disabled(st->w);
        weft_entity e = pick_ent(st, in);
        if (fz_chance(in, 128)) {
            (void)weft_insert(st->w, e, dis, NULL, 0);
        } else {
            (void)weft_remove(st->w, e, dis);
        }
        break;
    }
    }
}

static void op_run(state *st, fz_in *in)
{
    if (!fz_more(in)) {
        return;
    }
    st->ops++;
    if (st->depth == 0) {
        st->cb_budget = 256;
    }
    uint8_t op = fz_u8(in);
    weft_world *w = st->w;
    TRACE("op %d: %d (depth %d)\n", st->ops, op % 28, st->depth);
    switch (op % 28) {
    case 0:
        if (st->depth == 0) {
            op_register(st, in);
        }
        break;
    case 1:
        put_ent(st, in, weft_spawn(w));
        break;
    case 2:
    case 3: {
        weft_value vals[4];
        uint8_t bufs[4][VALUE_CAP];
        comp_info *owners[4];
        int n = build_values(st, in, vals, bufs, owners, 4);
        put_ent(st, in, weft_spawn_with(w, n ? vals : NULL, n));
        fini_values(owners, vals, n);
        break;
    }
    case 4:
        op_spawn_bulk(st, in);
        break;
    case 5:
    case 6: {
        weft_entity e = pick_ent(st, in);
        weft_status s = weft_despawn(w, e);
        if (s == WEFT_OK && st->depth == 0 && weft_is_alive(w, e)) {
            FZ_FAIL("entity alive after weft_despawn returned OK");
        }
        break;
    }
    case 7:
    case 8: {
        comp_info *c = pick_comp(st, in);
        if (!user_touchable(c)) {
            break;
        }
        uint8_t buf[VALUE_CAP];
        size_t size;
        const void *p = value_make(st, in, c, buf, &size);
        weft_entity e = pick_ent(st, in);
        bool plain = plain_effects(st, c); // before the call: it applies pending commands
        weft_status s = weft_insert(w, e, c->id, p, size);
        if (s == WEFT_OK && plain) {
            // Nothing else can run: the value is there, as given.
            if (!weft_has(w, e, c->id)) {
                FZ_FAIL("weft_insert returned OK but the entity lacks the component");
            }
            if (c->kind == CK_PLAIN && p != NULL && c->size > 0) {
                const void *got = weft_get(w, e, c->id, c->size);
                if (got == NULL || memcmp(got, p, c->size) != 0) {
                    FZ_FAIL("weft_get after weft_insert does not give the inserted value");
                }
            }
        }
        value_fini(c, p);
        break;
    }
    case 9: {
        weft_value vals[4];
        uint8_t bufs[4][VALUE_CAP];
        comp_info *owners[4];
        int n = build_values(st, in, vals, bufs, owners, 4);
        (void)weft_insert_many(w, pick_ent(st, in), n ? vals : NULL, n);
        fini_values(owners, vals, n);
        break;
    }
    case 10: {
        comp_info *c = pick_comp(st, in);
        if (user_touchable(c)) {
            weft_entity e = pick_ent(st, in);
            bool plain = plain_effects(st, c);
            weft_status s = weft_remove(w, e, c->id);
            if (s == WEFT_OK && plain && weft_has(w, e, c->id)) {
                FZ_FAIL("weft_remove returned OK but the entity still has the component");
            }
        } else {
            (void)weft_remove(w, pick_ent(st, in), pick_id(st, in));
        }
        break;
    }
    case 11: {
        comp_info *c = pick_comp(st, in);
        weft_entity e = pick_ent(st, in);
        weft_component id = c ? c->id : pick_id(st, in);
        size_t size = c ? c->size : fz_below(in, 9);
        if (fz_u8(in) < 8) {
            size++;
        }
        if (weft_has(w, e, id) && c != NULL && c->size > 0) {
            (void)value_touch(c, weft_get(w, e, id, size));
        } else {
            (void)weft_get(w, e, id, size);
        }
        break;
    }
    case 12: {
        comp_info *c = pick_comp(st, in);
        if (c == NULL) {
            break;
        }
        uint8_t b = fz_u8(in);
        void *p = weft_get_mut(w, pick_ent(st, in), c->id, c->size);
        value_scribble(c, p, b);
        break;
    }
    case 13: {
        int n = (int)fz_below(in, 5);
        for (int i = 0; i < n; i++) {
            put_ent(st, in, weft_entity_reserve(w));
        }
        if (fz_chance(in, 128)) {
            (void)weft_entity_flush(w);
        }
        break;
    }
    case 14:
        (void)weft_entity_flush(w);
        break;
    case 15:
        if (st->depth == 0) {
            op_query_create(st, in);
        }
        break;
    case 16:
    case 17: {
        int slot = (int)fz_below(in, MAX_QUERIES);
        if (st->queries[slot] != NULL) {
            iterate(st, in, slot);
        }
        break;
    }
    case 18: {
        int slot = (int)fz_below(in, MAX_QUERIES);
        weft_query *q = st->queries[slot];
        if (q == NULL) {
            break;
        }
        weft_entity e = pick_ent(st, in);
        uint8_t k = fz_u8(in);
        switch (k % 5) {
        case 0: {
            int64_t count = weft_query_count(w, q);
            bool empty = weft_query_is_empty(w, q);
            if (count >= 0 && empty != (count == 0)) {
                FZ_FAIL("weft_query_count %lld but weft_query_is_empty %d", (long long)count,
                        (int)empty);
            }
            if (st->depth > 0 || st->callback_depth > 0 || count < 0 ||
                !st->qslots[slot].unfiltered) {
                break;
            }
            // Without filters a full iteration yields exactly count rows,
            // each matching (the last run moves, which nothing here reads).
            weft_iter it;
            if (weft_query_iter(w, q, &it) != WEFT_OK) {
                break;
            }
            int64_t rows = 0;
            while (weft_iter_next(&it)) {
                int32_t n = weft_iter_count(&it);
                const weft_entity *ents = weft_iter_entities(&it);
                rows += n;
                for (int32_t r = 0; r < n; r++) {
                    if (!weft_is_alive(w, ents[r])) {
                        FZ_FAIL("a query yielded a dead entity");
                    }
                }
            }
            if (rows != count) {
                FZ_FAIL("weft_query_count %lld, iteration %lld rows", (long long)count,
                        (long long)rows);
            }
            break;
        }
        case 1:
            (void)weft_query_matches(w, q, e);
            break;
        case 2: {
            comp_info *c = pick_comp(st, in);
            (void)value_touch(c, weft_query_get(w, q, e, (int32_t)fz_below(in, 6),
                                                c ? c->size : 4));
            break;
        }
        case 3: {
            weft_entity out;
            (void)weft_query_single(w, q, &out);
            break;
        }
        case 4:
            (void)weft_query_set_last_run(w, q, weft_world_change_tick(w) - fz_u8(in));
            break;
        }
        break;
    }
    case 19: {
        int slot = (int)fz_below(in, MAX_QUERIES);
        if (st->queries[slot] != NULL && weft_query_destroy(w, st->queries[slot]) == WEFT_OK) {
            st->queries[slot] = NULL;
        }
        break;
    }
    case 20:
    case 21:
        op_commands(st, in);
        break;
    case 22: {
        int slot = (int)fz_below(in, MAX_CMDS);
        weft_commands *cb = st->cmds[slot];
        if (cb == NULL) {
            break;
        }
        if (fz_chance(in, 200)) {
            (void)weft_commands_apply(w, cb);
        } else if (st->depth == 0) {
            weft_commands_destroy(cb);
            st->cmds[slot] = NULL;
        }
        break;
    }
    case 23:
        op_observer(st, in);
        break;
    case 24: {
        uint8_t k = fz_u8(in);
        uint64_t payload = fz_u64(in);
        weft_event ev = k < 250 ? st->events[k & 1] : (weft_event)fz_u8(in);
        size_t size = (k & 1) ? 0 : sizeof payload;
        if (k == 249) {
            size = 4; // SIZE_MISMATCH
        }
        (void)weft_trigger_event(w, ev, pick_ent(st, in), size ? &payload : NULL, size,
                                 (k & 2) != 0);
        break;
    }
    case 25:
        op_relationship(st, in);
        break;
    case 26: {
        uint8_t k = fz_u8(in);
        if (k < 170) {
            op_messages(st, in);
        } else if (k < 240) {
            op_resource(st, in);
        } else {
            op_inspect(st, in);
        }
        break;
    }
    case 27: {
        uint8_t k = fz_u8(in);
        if (k < 16) {
            // One allocation failure somewhere in the next few calls.
            fz_alloc_fail_after(&st->alloc, 1 + fz_below(in, 48));
        } else if (k < 32) {
            check_world(st, "explicit");
        } else {
            op_inspect(st, in);
        }
        break;
    }
    }
    if (st->depth == 0 && (st->ops % 64 == 0 || g_trace > 1)) {
        check_world(st, "every 64 operations (or each, with FZ_TRACE=2)");
    }
}

static void check_world(state *st, const char *where)
{
    if (st->depth > 0 || st->callback_depth > 0) {
        return; // the check walks storage; do it from the normal phase
    }
    fz_alloc_disarm(&st->alloc); // the check may need scratch memory
    weft_status s = weft_world_check(st->w);
    if (s != WEFT_OK && s != WEFT_ERR_POISONED) {
        FZ_FAIL("weft_world_check (%s, after %d operations): %s: %s", where, st->ops,
                weft_status_name(s), weft_last_error(st->w));
    }
}

static void setup(state *st)
{
    weft_event_desc ed;
    memset(&ed, 0, sizeof ed);
    ed.name = "ping";
    ed.payload_size = sizeof(uint64_t);
    st->events[0] = weft_event_register(st->w, &ed);
    ed.name = "pong";
    ed.payload_size = 0;
    st->events[1] = weft_event_register(st->w, &ed);
    weft_message_desc md;
    memset(&md, 0, sizeof md);
    md.name = "plain";
    md.size = 12;
    st->msgs[0] = weft_message_register(st->w, &md);
    md.name = "owning";
    md.size = sizeof(own_val);
    md.drop = message_drop;
    st->msgs[1] = weft_message_register(st->w, &md);
    if (st->events[0] == 0 || st->events[1] == 0 || st->msgs[0] == 0 || st->msgs[1] == 0) {
        FZ_FAIL("setup: %s", weft_last_error(st->w));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static state st;
    memset(&st, 0, sizeof st);
    fz_alloc_init(&st.alloc);
    weft_world_desc wd;
    memset(&wd, 0, sizeof wd);
    wd.allocator = fz_alloc_hook(&st.alloc);
    st.w = weft_world_create(&wd);
    if (st.w == NULL) {
        FZ_FAIL("weft_world_create failed");
    }
    g_st = &st;
    if (g_trace < 0) {
        g_trace = getenv("FZ_TRACE") ? atoi(getenv("FZ_TRACE")) : 0;
    }
    setup(&st);
    fz_in in = {data, size};
    while (fz_more(&in) && st.ops < MAX_OPS) {
        op_run(&st, &in);
    }
    fz_alloc_disarm(&st.alloc);
    // Whatever is still queued gets applied (or dropped with the world).
    if (weft_world_commands(st.w) != NULL) {
        (void)weft_commands_apply(st.w, weft_world_commands(st.w));
    }
    check_world(&st, "end");
    weft_world_destroy(st.w);
    g_st = NULL;
    fz_alloc_expect_empty(&st.alloc);
    return 0;
}

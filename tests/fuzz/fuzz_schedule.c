// tests/fuzz/fuzz_schedule.c - libFuzzer target: the input describes a
// schedule (systems with random queries, resource and message uses, flags
// and behaviours; sets; orderings, chains and apply points, which may form
// cycles; run conditions and their combinators) and a starting world. The
// same description is built twice, on a world running single-threaded and
// on one with two threads, and run a few times.
//
// What it checks: no crash or sanitizer report; building succeeds or fails
// the same way on both worlds; when it succeeds, every run gives the same
// weft_world_hash on both (the scheduler's determinism promise) and the
// same success or failure; weft_world_check passes; every byte comes back
// when the worlds are destroyed.
//
// System bodies touch the world only through their context and only what
// they declared, mixing table and sparse components, chunk-parallel
// iteration (weft_system_par_each), commands (spawn, insert, remove,
// despawn, including on entities another command despawned), messages and
// resources; exclusive systems make structural calls directly and may run
// a second schedule. Values are unsigned 64-bit so that arithmetic wraps
// without undefined behaviour.
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

#define NCOMP 6    // components c0..c5; c4 and c5 sparse
#define NRES 2     // resources r0, r1
#define MAX_SYS 12
#define MAX_SETS 3
#define MAX_NODES (MAX_SYS + 4)
#define MAX_RUNS 4
#define MAX_INIT 64

typedef struct sys_spec {
    int id;           // 1-based, mixed into every value it writes
    uint8_t mode;     // behaviour bits (see sys_body)
    uint8_t k;        // a parameter of the behaviour
    bool exclusive;
    int nq;
    weft_query_desc q[2];
    int nres;
    weft_resource_use res[NRES];
    int nmsg;
    weft_message_use msg[1];
} sys_spec;

typedef struct cond_spec {
    uint8_t mode;
    uint8_t k;
} cond_spec;

// One world built from the description.
typedef struct sim {
    weft_world *w;
    fz_alloc alloc;
    weft_component comp[NCOMP];
    weft_component res[NRES];
    weft_message_type msg;
    weft_schedule *main;
    weft_schedule *second; // run from inside exclusive systems (may be NULL)
    sys_spec sys[MAX_SYS];
    int nsys;
    cond_spec conds[8];
    int nconds;
    weft_node nodes[MAX_NODES];
    int nnodes;
    weft_node sets[MAX_SETS];
    int nsets;
} sim;

static void chunk_fn(weft_iter *it, weft_commands *cmds, void *user);

static int g_trace = -1; // FZ_TRACE=1 in the environment: print the description

#define TRACE(...)                                                     \
    do {                                                               \
        if (g_trace > 0) {                                             \
            fprintf(stderr, __VA_ARGS__);                              \
        }                                                              \
    } while (0)

// ---- system bodies ----

// Folds the chunk's rows: reads every readable term, writes every WRITE
// term, records commands when the behaviour asks; returns a sum over the
// rows. Used by sequential and chunk-parallel iteration alike.
static uint64_t fold_chunk(const sys_spec *s, const sim *sm, weft_iter *it,
                           weft_commands *cmds, const weft_query_desc *q)
{
    uint64_t acc = (uint64_t)s->id;
    int32_t n = weft_iter_count(it);
    const weft_entity *ents = weft_iter_entities(it);
    for (int32_t row = 0; row < n; row++) {
        // Per row, nothing carried over from earlier rows: chunk-parallel
        // iteration splits tables differently on 1 and 2 threads (the
        // order of the recorded commands is what weft keeps the same).
        uint64_t racc = (uint64_t)s->id;
        for (int32_t t = 0; t < q->term_count; t++) {
            const weft_term *term = &q->terms[t];
            if (term->access == WEFT_ACCESS_READ) {
                const uint64_t *p = weft_iter_get(it, t, row, sizeof(uint64_t));
                racc += p ? *p * 7 : 1;
            }
        }
        for (int32_t t = 0; t < q->term_count; t++) {
            const weft_term *term = &q->terms[t];
            if (term->access == WEFT_ACCESS_WRITE) {
                uint64_t *p = weft_iter_get_mut(it, t, row, sizeof(uint64_t));
                if (p != NULL) {
                    *p = *p * 3 + racc;
                }
            }
        }
        acc += racc;
        if (cmds != NULL && (s->mode & 2)) {
            uint64_t h = (ents[row] & 0xFFFFFFFFu) + s->k;
            weft_component c = sm->comp[(h >> 2) % NCOMP];
            uint64_t v = racc;
            if (h % 5 == 0) {
                (void)weft_cmd_insert(cmds, ents[row], c, &v, sizeof v);
            } else if (h % 7 == 0) {
                (void)weft_cmd_despawn(cmds, ents[row]);
                (void)weft_cmd_try_insert(cmds, ents[row], c, &v, sizeof v);
            } else if (h % 11 == 0) {
                weft_value val = {c, sizeof v, &v};
                weft_entity e = weft_cmd_spawn(cmds, &val, 1);
                if (e != 0 && (s->mode & 16)) {
                    (void)weft_cmd_insert(cmds, e, sm->comp[(h >> 5) % NCOMP], &v, sizeof v);
                }
            } else if (h % 13 == 0) {
                (void)weft_cmd_remove(cmds, ents[row], c);
            }
        }
    }
    return acc;
}

typedef struct chunk_ctx {
    const sys_spec *s;
    const sim *sm;
} chunk_ctx;

static void chunk_fn(weft_iter *it, weft_commands *cmds, void *user)
{
    chunk_ctx *cc = user;
    while (weft_iter_next(it)) {
        (void)fold_chunk(cc->s, cc->sm, it, cmds, &cc->s->q[0]);
    }
}

typedef struct sys_user {
    sim *sm;
    int index;
} sys_user;

static void sys_body(weft_system_ctx *ctx, void *user)
{
    sys_user *u = user;
    sim *sm = u->sm;
    const sys_spec *s = &sm->sys[u->index];
    weft_commands *cmds = weft_system_commands(ctx);
    uint64_t acc = (uint64_t)s->id;
    for (int q = 0; q < s->nq; q++) {
        if (q == 0 && (s->mode & 1) && !s->exclusive) {
            chunk_ctx cc = {s, sm};
            (void)weft_system_par_each(ctx, 0, chunk_fn, &cc, 1 + s->k % 8);
            continue;
        }
        weft_iter it;
        if (weft_system_iter(ctx, q, &it) != WEFT_OK) {
            continue;
        }
        while (weft_iter_next(&it)) {
            acc += fold_chunk(s, sm, &it, cmds, &s->q[q]);
        }
        acc += (uint64_t)weft_system_count(ctx, q);
    }
    for (int r = 0; r < s->nres; r++) {
        if (s->res[r].access == WEFT_ACCESS_WRITE) {
            uint64_t *p = weft_system_resource_mut(ctx, s->res[r].id, sizeof *p);
            if (p != NULL) {
                *p = *p * 5 + acc;
            } else if (cmds != NULL && (s->mode & 4)) {
                uint64_t v = acc;
                (void)weft_cmd_resource_insert(cmds, s->res[r].id, &v, sizeof v);
            }
        } else {
            const uint64_t *p = weft_system_resource(ctx, s->res[r].id, sizeof *p);
            acc += p ? *p : 3;
        }
    }
    for (int m = 0; m < s->nmsg; m++) {
        if (s->msg[m].access == WEFT_ACCESS_WRITE) {
            uint64_t v = acc;
            (void)weft_system_message_write(ctx, s->msg[m].type, &v, sizeof v);
        } else {
            const uint64_t *p;
            while ((p = weft_system_message_read(ctx, s->msg[m].type, sizeof *p)) != NULL) {
                acc += *p;
            }
        }
    }
    if (s->exclusive) {
        weft_world *w = weft_system_world(ctx);
        if (w == NULL) {
            FZ_FAIL("an exclusive system got no world");
        }
        uint64_t v = acc;
        weft_value val = {sm->comp[s->k % NCOMP], sizeof v, &v};
        if (s->mode & 8) {
            (void)weft_spawn_with(w, &val, 1);
        }
        if ((s->mode & 32) && sm->second != NULL) {
            (void)weft_schedule_run(sm->second, 0.5);
        }
        if (s->mode & 64) {
            // A structural call during its own query's iteration is deferred.
            weft_iter it;
            if (s->nq > 0 && weft_system_iter(ctx, 0, &it) == WEFT_OK) {
                if (weft_iter_next(&it)) {
                    (void)weft_despawn(w, weft_iter_entities(&it)[0]);
                }
                weft_iter_fini(&it);
            }
        }
    }
    if ((s->mode & 128) && acc % 17 == 0) {
        weft_system_fail(ctx, WEFT_ERR_CALLBACK, "asked to fail");
    }
}

typedef struct cond_user {
    sim *sm;
    int index;
} cond_user;

static bool cond_body(weft_system_ctx *ctx, void *user)
{
    cond_user *u = user;
    const cond_spec *c = &u->sm->conds[u->index];
    const uint64_t *r = weft_system_resource(ctx, u->sm->res[0], sizeof *r);
    int64_t n = weft_system_count(ctx, 0);
    switch (c->mode % 3) {
    case 0:
        return r == NULL || (*r + c->k) % 3 != 0;
    case 1:
        return n > (int64_t)(c->k % 8);
    default:
        return (c->k & 1) != 0;
    }
}

// ---- building the description ----

static void random_query(fz_in *in, const sim *sm, weft_query_desc *q)
{
    memset(q, 0, sizeof *q);
    q->term_count = 1 + (int32_t)fz_below(in, 3);
    for (int32_t t = 0; t < q->term_count; t++) {
        weft_term *term = &q->terms[t];
        term->id = sm->comp[fz_below(in, NCOMP)];
        uint8_t b = fz_u8(in);
        switch (b % 6) {
        case 0:
        case 1:
            term->access = WEFT_ACCESS_READ;
            break;
        case 2:
        case 3:
            term->access = WEFT_ACCESS_WRITE;
            break;
        case 4:
            term->oper = WEFT_OPER_WITH;
            break;
        case 5:
            term->oper = WEFT_OPER_WITHOUT;
            break;
        }
        if (b >= 240 && term->oper == 0) {
            term->oper = WEFT_OPER_OPTIONAL;
        } else if (b >= 224 && term->oper == 0) {
            term->filter = WEFT_FILTER_CHANGED;
        }
    }
}

static weft_node pick_node(fz_in *in, const sim *sm)
{
    uint8_t b = fz_u8(in);
    if (b >= 250) {
        return (weft_node)fz_u32(in); // garbage: INVALID_ARG
    }
    uint32_t total = (uint32_t)(sm->nnodes + sm->nsets);
    if (total == 0) {
        return WEFT_NODE_NONE;
    }
    uint32_t i = b % total;
    return i < (uint32_t)sm->nnodes ? sm->nodes[i] : sm->sets[i - (uint32_t)sm->nnodes];
}

static weft_component reg(sim *sm, const char *name, bool sparse)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = sizeof(uint64_t);
    d.storage = sparse ? WEFT_STORAGE_SPARSE : WEFT_STORAGE_TABLE;
    weft_component c = weft_component_register(sm->w, &d);
    if (c == 0) {
        FZ_FAIL("register %s: %s", name, weft_last_error(sm->w));
    }
    return c;
}

static sys_user g_sys_users[2][MAX_SYS];
static cond_user g_cond_users[2][8];

static weft_node add_system(sim *sm, int which, fz_in *in, weft_schedule *sched, int index)
{
    sys_spec *s = &sm->sys[index];
    memset(s, 0, sizeof *s);
    s->id = index + 1;
    s->mode = fz_u8(in);
    s->k = fz_u8(in);
    uint8_t fl = fz_u8(in);
    uint32_t flags = 0;
    if (fl < 24) {
        flags |= WEFT_SYSTEM_EXCLUSIVE;
        s->exclusive = true;
    }
    if (fl & 32) {
        flags |= WEFT_SYSTEM_COMMANDS;
    }
    if ((fl & 64) && (fl & 128)) {
        flags |= WEFT_SYSTEM_MAIN_THREAD;
    }
    s->nq = (int)fz_below(in, 3);
    for (int q = 0; q < s->nq; q++) {
        random_query(in, sm, &s->q[q]);
    }
    uint8_t rb = fz_u8(in);
    for (int r = 0; r < NRES; r++) {
        uint32_t a = (rb >> (2 * r)) & 3;
        if (a == 1 || a == 2) {
            s->res[s->nres].id = sm->res[r];
            s->res[s->nres].access = (weft_access)a;
            s->nres++;
        }
    }
    uint32_t m = (rb >> 4) & 3;
    if (m == 1 || m == 2) {
        s->msg[0].type = sm->msg;
        s->msg[0].access = (weft_access)m;
        s->nmsg = 1;
    }
    char name[16];
    snprintf(name, sizeof name, "s%d", index);
    sys_user *u = &g_sys_users[which][index];
    u->sm = sm;
    u->index = index;
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.fn = sys_body;
    d.user = u;
    d.queries = s->nq ? s->q : NULL;
    d.query_count = s->nq;
    d.resources = s->nres ? s->res : NULL;
    d.resource_count = s->nres;
    d.messages = s->nmsg ? s->msg : NULL;
    d.message_count = s->nmsg;
    d.flags = flags;
    weft_node node = weft_schedule_add_system(sched, &d);
    TRACE("[%d] system %s node %u: mode %02x k %u flags %x, %d queries, %d resources, "
          "%d messages\n", which, name, (unsigned)node, s->mode, s->k, (unsigned)flags, s->nq,
          s->nres, s->nmsg);
    for (int q = 0; q < s->nq; q++) {
        for (int32_t t = 0; t < s->q[q].term_count; t++) {
            const weft_term *tm = &s->q[q].terms[t];
            TRACE("[%d]   q%d term %d: id %u access %d oper %d filter %u\n", which, q, (int)t,
                  (unsigned)tm->id, (int)tm->access, (int)tm->oper, (unsigned)tm->filter);
        }
    }
    return node;
}

static weft_condition *make_cond(sim *sm, int which, fz_in *in, weft_schedule *sched)
{
    uint8_t k = fz_u8(in);
    switch (k % 6) {
    case 0:
        return weft_condition_run_once(sched);
    case 1:
        return weft_condition_resource_changed(sched, sm->res[k & 1]);
    case 2:
        return weft_condition_on_message(sched, sm->msg);
    default: {
        if (sm->nconds >= 8) {
            return weft_condition_resource_exists(sched, sm->res[1]);
        }
        int i = sm->nconds++;
        sm->conds[i].mode = fz_u8(in);
        sm->conds[i].k = fz_u8(in);
        cond_user *u = &g_cond_users[which][i];
        u->sm = sm;
        u->index = i;
        weft_query_desc q;
        memset(&q, 0, sizeof q);
        q.term_count = 1;
        q.terms[0].id = sm->comp[k % NCOMP];
        weft_resource_use r = {sm->res[0], WEFT_ACCESS_READ};
        weft_condition_desc d;
        memset(&d, 0, sizeof d);
        d.name = "cond";
        d.fn = cond_body;
        d.user = u;
        d.queries = &q;
        d.query_count = 1;
        d.resources = &r;
        d.resource_count = 1;
        weft_condition *c = weft_condition_create(sched, &d);
        if (c != NULL && (k & 0x80)) {
            c = weft_condition_not(sched, c);
        }
        return c;
    }
    }
}

// Builds the world and the schedule from the input. Returns false when the
// description is unusable (then both worlds agree on that anyway).
static void build(sim *sm, int which, fz_in *in)
{
    char name[24];
    for (int i = 0; i < NCOMP; i++) {
        snprintf(name, sizeof name, "c%d", i);
        sm->comp[i] = reg(sm, name, i >= 4);
    }
    for (int i = 0; i < NRES; i++) {
        snprintf(name, sizeof name, "r%d", i);
        sm->res[i] = reg(sm, name, false);
        uint64_t v = fz_u8(in);
        if (v & 1) {
            (void)weft_resource_insert(sm->w, sm->res[i], &v, sizeof v);
        }
    }
    weft_message_desc md;
    memset(&md, 0, sizeof md);
    md.name = "m";
    md.size = sizeof(uint64_t);
    sm->msg = weft_message_register(sm->w, &md);
    // Starting entities.
    int n = (int)fz_below(in, MAX_INIT + 1);
    for (int i = 0; i < n; i++) {
        uint8_t mask = fz_u8(in);
        weft_value vals[NCOMP];
        uint64_t data[NCOMP];
        int nv = 0;
        for (int c = 0; c < NCOMP; c++) {
            if (mask & (1u << c)) {
                data[nv] = (uint64_t)i * 1000 + (uint64_t)c;
                vals[nv].id = sm->comp[c];
                vals[nv].size = sizeof(uint64_t);
                vals[nv].ptr = &data[nv];
                nv++;
            }
        }
        (void)weft_spawn_with(sm->w, nv ? vals : NULL, nv);
    }
    sm->main = weft_schedule_create(sm->w, "main");
    if (fz_chance(in, 64)) {
        sm->second = weft_schedule_create(sm->w, "second");
    }
    if (sm->main == NULL) {
        FZ_FAIL("schedule_create: %s", weft_last_error(sm->w));
    }
    // The program: a sequence of declarations.
    int steps = (int)fz_below(in, 40);
    for (int i = 0; i < steps && fz_more(in); i++) {
        uint8_t op = fz_u8(in);
        TRACE("[%d] step %d: %d\n", which, i, op % 10);
        switch (op % 10) {
        case 0:
        case 1:
        case 2:
            if (sm->nsys < MAX_SYS) {
                int idx = sm->nsys++;
                weft_schedule *target = (op & 0x80) && sm->second ? sm->second : sm->main;
                if (target == sm->second) {
                    // Systems of the second schedule must not run it.
                    weft_node nd = add_system(sm, which, in, target, idx);
                    sm->sys[idx].mode &= (uint8_t)~32u;
                    (void)nd;
                } else {
                    weft_node nd = add_system(sm, which, in, target, idx);
                    if (nd != 0 && sm->nnodes < MAX_NODES) {
                        sm->nodes[sm->nnodes++] = nd;
                    }
                }
            }
            break;
        case 3:
            if (sm->nsets < MAX_SETS) {
                snprintf(name, sizeof name, "set%d", sm->nsets);
                weft_node s = weft_schedule_ensure_set(sm->main, name);
                if (s != 0) {
                    sm->sets[sm->nsets++] = s;
                }
            }
            break;
        case 4:
            if (sm->nsets > 0) {
                (void)weft_schedule_add_to_set(sm->main, pick_node(in, sm),
                                           sm->sets[fz_below(in, (uint32_t)sm->nsets)]);
            }
            break;
        case 5:
        case 6: {
            weft_node a = pick_node(in, sm);
            weft_node b = pick_node(in, sm);
            (void)weft_schedule_add_order(sm->main, a, b,
                                      fz_chance(in, 64) ? WEFT_ORDER_IGNORE_DEFERRED : 0);
            break;
        }
        case 7: {
            weft_node chain[4];
            int cn = (int)fz_below(in, 5);
            for (int c = 0; c < cn; c++) {
                chain[c] = pick_node(in, sm);
            }
            (void)weft_schedule_add_chain(sm->main, cn ? chain : NULL, cn, 0);
            break;
        }
        case 8: {
            weft_condition *c = make_cond(sm, which, in, sm->main);
            if (c != NULL && fz_chance(in, 64)) {
                weft_condition *c2 = make_cond(sm, which, in, sm->main);
                if (c2 != NULL) {
                    c = (op & 0x40) ? weft_condition_or(sm->main, c, c2)
                                    : weft_condition_and(sm->main, c, c2);
                }
            }
            if (c != NULL) {
                (void)weft_schedule_add_condition(sm->main, pick_node(in, sm), c);
            }
            break;
        }
        case 9: {
            uint8_t k = fz_u8(in);
            if (k < 100 && sm->nnodes < MAX_NODES) {
                snprintf(name, sizeof name, "ap%d", sm->nnodes);
                weft_node ap = weft_schedule_add_apply_point(sm->main, name);
                if (ap != 0) {
                    sm->nodes[sm->nnodes++] = ap;
                }
            } else if (k < 150) {
                (void)weft_schedule_set_auto_sync(sm->main, (k & 1) != 0);
            } else if (k < 200) {
                (void)weft_schedule_set_apply_final(sm->main, (k & 1) != 0);
            } else {
                (void)weft_schedule_add_ambiguous_pair(sm->main, pick_node(in, sm),
                                                   pick_node(in, sm));
            }
            break;
        }
        }
    }
}

static void sim_init(sim *sm, int which, const uint8_t *data, size_t size, int32_t threads,
                     fz_in *rest)
{
    memset(sm, 0, sizeof *sm);
    fz_alloc_init(&sm->alloc);
    weft_world_desc wd;
    memset(&wd, 0, sizeof wd);
    wd.allocator = fz_alloc_hook(&sm->alloc);
    sm->w = weft_world_create(&wd);
    if (sm->w == NULL) {
        FZ_FAIL("weft_world_create failed");
    }
    if (threads > weft_max_threads()) {
        // the build without threads: both worlds on the calling thread
        // (identical inputs must still end in identical worlds)
        threads = weft_max_threads();
    }
    if (weft_world_set_threads(sm->w, threads) != WEFT_OK) {
        FZ_FAIL("weft_world_set_threads(%d): %s", (int)threads, weft_last_error(sm->w));
    }
    fz_in in = {data, size};
    build(sm, which, &in);
    *rest = in;
}

static void sim_fini(sim *sm)
{
    weft_status s = weft_world_check(sm->w);
    if (s != WEFT_OK) {
        FZ_FAIL("weft_world_check: %s: %s", weft_status_name(s), weft_last_error(sm->w));
    }
    weft_world_destroy(sm->w);
    fz_alloc_expect_empty(&sm->alloc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sim one;
    static sim two;
    if (g_trace < 0) {
        g_trace = getenv("FZ_TRACE") != NULL;
    }
    fz_in rest1;
    fz_in rest2;
    sim_init(&one, 0, data, size, 1, &rest1);
    sim_init(&two, 1, data, size, 2, &rest2);
    weft_status b1 = weft_schedule_build(one.main);
    weft_status b2 = weft_schedule_build(two.main);
    if (b1 != b2) {
        FZ_FAIL("build: %s on 1 thread, %s on 2", weft_status_name(b1), weft_status_name(b2));
    }
    if (b1 == WEFT_OK) {
        int runs = 1 + (int)fz_below(&rest1, MAX_RUNS);
        for (int r = 0; r < runs; r++) {
            double dt = 1.0 / (1 + fz_below(&rest1, 8));
            weft_status s1 = weft_schedule_run(one.main, dt);
            weft_status s2 = weft_schedule_run(two.main, dt);
            if ((s1 == WEFT_OK) != (s2 == WEFT_OK)) {
                FZ_FAIL("run %d: %s on 1 thread (%s), %s on 2 (%s)", r, weft_status_name(s1),
                        weft_last_error(one.w), weft_status_name(s2), weft_last_error(two.w));
            }
            uint64_t h1 = weft_world_hash(one.w);
            uint64_t h2 = weft_world_hash(two.w);
            if (h1 != h2) {
                FZ_FAIL("run %d: world hash %016llx on 1 thread, %016llx on 2", r,
                        (unsigned long long)h1, (unsigned long long)h2);
            }
            if (fz_chance(&rest1, 64)) {
                weft_messages_update(one.w);
                weft_messages_update(two.w);
            }
        }
    }
    sim_fini(&one);
    sim_fini(&two);
    return 0;
}

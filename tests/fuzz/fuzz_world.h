// tests/fuzz/fuzz_world.h - the world the loader fuzz targets (fuzz_snapshot,
// fuzz_json) load into, and the seed generator (gen_seeds.c) saves from:
// the same registrations every time, so a snapshot written by one world
// restores into another made by fz_world_new.
//
// Registrations: Pos (vec2, table, described), Vel (vec2, sparse,
// described), Hp (i32, table, no change ticks, described), Frozen (tag),
// Label (a string, an enum and an entity field, described), Blob (6 opaque
// bytes, align 2, undescribed: saved only by binary snapshots), ChildOf,
// the resource Score (u64, described), the message type Hit, and the
// schedule "update" with three systems (move: Pos += Vel * dt; heal: Hp
// changes on entities whose Pos changed and writes a Hit; tally: reads
// Hits into Score), so that queries' and systems' tick state is part of every save.
// fz_world_fill spawns a small population from a seed.
// SPDX-License-Identifier: MIT
#ifndef WEFT_FUZZ_WORLD_H
#define WEFT_FUZZ_WORLD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"

typedef struct fz_vec2 {
    float x, y;
} fz_vec2;

typedef struct fz_label {
    char name[12];
    int32_t mood;
    weft_entity target;
} fz_label;

typedef struct fz_world {
    weft_world *w;
    weft_component pos, vel, hp, frozen, label, blob, child_of, score;
    weft_message_type hit;
    weft_schedule *update;
    weft_entity ids[64]; // what fz_world_fill spawned (some despawned again)
    int nids;
} fz_world;

static const weft_field fz_vec2_fields[] = {
    {.name = "x", .kind = WEFT_KIND_F32, .offset = offsetof(fz_vec2, x)},
    {.name = "y", .kind = WEFT_KIND_F32, .offset = offsetof(fz_vec2, y)},
};
static const weft_type_desc fz_vec2_desc = {"vec2", sizeof(fz_vec2), 0, fz_vec2_fields, 2};

static const weft_field fz_hp_fields[] = {
    {.name = "value", .kind = WEFT_KIND_I32, .offset = 0},
};
static const weft_type_desc fz_hp_desc = {"hp", sizeof(int32_t), 0, fz_hp_fields, 1};

static const weft_enum_value fz_moods[] = {{"calm", 0}, {"angry", 1}, {"sleepy", -7}};
static const weft_field fz_label_fields[] = {
    {.name = "name", .kind = WEFT_KIND_STRING, .offset = offsetof(fz_label, name), .count = 12},
    {.name = "mood", .kind = WEFT_KIND_ENUM, .offset = offsetof(fz_label, mood),
     .enum_values = fz_moods, .enum_count = 3},
    {.name = "target", .kind = WEFT_KIND_ENTITY, .offset = offsetof(fz_label, target)},
};
static const weft_type_desc fz_label_desc = {"label", sizeof(fz_label), 0, fz_label_fields, 3};

static const weft_field fz_score_fields[] = {
    {.name = "points", .kind = WEFT_KIND_U64, .offset = 0},
};
static const weft_type_desc fz_score_desc = {"score", sizeof(uint64_t), 0, fz_score_fields, 1};

static void fz_sys_move(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    float dt = (float)weft_system_delta(ctx);
    while (weft_iter_next(&it)) {
        fz_vec2 *p = weft_iter_field_mut(&it, 0, sizeof *p);
        const fz_vec2 *v = weft_iter_field(&it, 1, sizeof *v);
        for (int32_t i = 0; p && v && i < weft_iter_count(&it); i++) {
            p[i].x += v[i].x * dt;
            p[i].y += v[i].y * dt;
        }
    }
}

static void fz_sys_heal(weft_system_ctx *ctx, void *user)
{
    fz_world *fw = user;
    weft_iter it;
    int64_t n = 0;
    if (weft_system_iter(ctx, 0, &it) == WEFT_OK) {
        while (weft_iter_next(&it)) {
            int32_t *hp = weft_iter_field_mut(&it, 0, sizeof *hp);
            for (int32_t i = 0; hp && i < weft_iter_count(&it); i++) {
                hp[i] = (int32_t)((uint32_t)hp[i] + 1u);
                n++;
            }
        }
    }
    uint64_t msg = (uint64_t)n;
    weft_system_message_write(ctx, fw->hit, &msg, sizeof msg);
}

static void fz_sys_tally(weft_system_ctx *ctx, void *user)
{
    fz_world *fw = user;
    uint64_t total = 0;
    const uint64_t *m;
    while ((m = weft_system_message_read(ctx, fw->hit, sizeof *m)) != NULL) {
        total += *m;
    }
    uint64_t *score = weft_system_resource_mut(ctx, fw->score, sizeof *score);
    if (score) {
        *score += total;
    }
}

static weft_component fz_world_comp(weft_world *w, const char *name, size_t size, size_t align,
                                    weft_storage storage, uint32_t flags)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    d.align = align;
    d.storage = storage;
    d.flags = flags;
    return weft_component_register(w, &d);
}

// Creates the world (with `alloc` as its allocator hook; NULL: default).
// with_schedule false gives a "tool world" (no schedule, no query), which
// restore accepts as well. Returns false when anything fails (out of
// memory): the caller destroys fw->w.
static bool fz_world_new(fz_world *fw, fz_alloc *alloc, bool with_schedule)
{
    memset(fw, 0, sizeof *fw);
    weft_world_desc wd;
    memset(&wd, 0, sizeof wd);
    if (alloc) {
        wd.allocator = fz_alloc_hook(alloc);
    }
    fw->w = weft_world_create(&wd);
    if (!fw->w) {
        return false;
    }
    weft_world *w = fw->w;
    fw->pos = fz_world_comp(w, "Pos", sizeof(fz_vec2), 4, WEFT_STORAGE_TABLE, 0);
    fw->vel = fz_world_comp(w, "Vel", sizeof(fz_vec2), 4, WEFT_STORAGE_SPARSE, 0);
    fw->hp = fz_world_comp(w, "Hp", sizeof(int32_t), 4, WEFT_STORAGE_TABLE,
                           WEFT_COMPONENT_NO_CHANGE_TICKS);
    fw->frozen = fz_world_comp(w, "Frozen", 0, 0, WEFT_STORAGE_TABLE, 0);
    fw->label = fz_world_comp(w, "Label", sizeof(fz_label), 8, WEFT_STORAGE_TABLE, 0);
    fw->blob = fz_world_comp(w, "Blob", 6, 2, WEFT_STORAGE_TABLE, 0);
    fw->score = fz_world_comp(w, "Score", sizeof(uint64_t), 8, WEFT_STORAGE_TABLE, 0);
    fw->child_of = weft_child_of(w);
    weft_message_desc md;
    memset(&md, 0, sizeof md);
    md.name = "Hit";
    md.size = sizeof(uint64_t);
    fw->hit = weft_message_register(w, &md);
    if (!fw->pos || !fw->vel || !fw->hp || !fw->frozen || !fw->label || !fw->blob ||
        !fw->score || !fw->child_of || !fw->hit ||
        weft_component_describe(w, fw->pos, &fz_vec2_desc) != WEFT_OK ||
        weft_component_describe(w, fw->vel, &fz_vec2_desc) != WEFT_OK ||
        weft_component_describe(w, fw->hp, &fz_hp_desc) != WEFT_OK ||
        weft_component_describe(w, fw->label, &fz_label_desc) != WEFT_OK ||
        weft_component_describe(w, fw->score, &fz_score_desc) != WEFT_OK) {
        return false;
    }
    if (!with_schedule) {
        return true;
    }
    fw->update = weft_schedule_create(w, "update");
    if (!fw->update) {
        return false;
    }
    weft_query_desc mq;
    memset(&mq, 0, sizeof mq);
    mq.terms[0].id = fw->pos;
    mq.terms[0].access = WEFT_ACCESS_WRITE;
    mq.terms[1].id = fw->vel;
    mq.terms[2].id = fw->frozen;
    mq.terms[2].oper = WEFT_OPER_WITHOUT;
    mq.term_count = 3;
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "move";
    sd.fn = fz_sys_move;
    sd.queries = &mq;
    sd.query_count = 1;
    if (weft_schedule_add_system(fw->update, &sd) == 0) {
        return false;
    }
    weft_query_desc hq;
    memset(&hq, 0, sizeof hq);
    hq.terms[0].id = fw->hp;
    hq.terms[0].access = WEFT_ACCESS_WRITE;
    hq.terms[1].id = fw->pos;
    hq.terms[1].oper = WEFT_OPER_WITH;
    hq.terms[1].filter = WEFT_FILTER_CHANGED;
    hq.term_count = 2;
    weft_message_use mw = {fw->hit, WEFT_ACCESS_WRITE};
    memset(&sd, 0, sizeof sd);
    sd.name = "heal";
    sd.fn = fz_sys_heal;
    sd.user = fw;
    sd.queries = &hq;
    sd.query_count = 1;
    sd.messages = &mw;
    sd.message_count = 1;
    if (weft_schedule_add_system(fw->update, &sd) == 0) {
        return false;
    }
    weft_resource_use ru = {fw->score, WEFT_ACCESS_WRITE};
    weft_message_use mr = {fw->hit, WEFT_ACCESS_READ};
    memset(&sd, 0, sizeof sd);
    sd.name = "tally";
    sd.fn = fz_sys_tally;
    sd.user = fw;
    sd.resources = &ru;
    sd.resource_count = 1;
    sd.messages = &mr;
    sd.message_count = 1;
    return weft_schedule_add_system(fw->update, &sd) != 0;
}

// xorshift32: the population is the same on every machine
static inline uint32_t fz_rnd(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

// A small pseudo-random population from `seed`: entities with every mix
// of the components, a few ChildOf links and entity fields, despawns (so
// the free list is not empty), the Score resource and queued messages.
// Returns false on a failed call.
static bool fz_world_fill(fz_world *fw, uint32_t seed, int n)
{
    weft_world *w = fw->w;
    uint32_t x = seed * 2654435761u + 1u;
    weft_entity *ids = fw->ids;
    if (n > 64) {
        n = 64;
    }
    for (int i = 0; i < n; i++) {
        weft_value vals[6];
        int k = 0;
        // one draw per statement: the order of draws inside an initializer
        // list is unspecified, and the generator and the targets must agree
        fz_vec2 p;
        p.x = (float)(fz_rnd(&x) % 100);
        p.y = (float)(fz_rnd(&x) % 100) * 0.5f;
        fz_vec2 v = {(float)(fz_rnd(&x) % 7) - 3.0f, 1.25f};
        int32_t hp = (int32_t)(fz_rnd(&x) % 200) - 50;
        fz_label lb;
        memset(&lb, 0, sizeof lb);
        snprintf(lb.name, sizeof lb.name, "e%d", i);
        lb.mood = (int32_t)fz_moods[fz_rnd(&x) % 3].value;
        lb.target = i > 0 && fz_rnd(&x) % 2 ? ids[fz_rnd(&x) % (uint32_t)i] : 0;
        uint8_t blob[6] = {1, 2, 3, (uint8_t)i, 5, 6};
        uint32_t mask = fz_rnd(&x);
        if (mask & 1) {
            vals[k++] = (weft_value){fw->pos, sizeof p, &p};
        }
        if (mask & 2) {
            vals[k++] = (weft_value){fw->vel, sizeof v, &v};
        }
        if (mask & 4) {
            vals[k++] = (weft_value){fw->hp, sizeof hp, &hp};
        }
        if (mask & 8) {
            vals[k++] = (weft_value){fw->frozen, 0, NULL};
        }
        if (mask & 16) {
            vals[k++] = (weft_value){fw->label, sizeof lb, &lb};
        }
        if (mask & 32) {
            vals[k++] = (weft_value){fw->blob, sizeof blob, blob};
        }
        ids[i] = weft_spawn_with(w, vals, k);
        if (!ids[i]) {
            return false;
        }
        fw->nids = i + 1;
        if (i > 2 && fz_rnd(&x) % 3 == 0 &&
            weft_set_parent(w, ids[i], ids[fz_rnd(&x) % (uint32_t)i]) != WEFT_OK) {
            return false;
        }
    }
    for (int i = 0; i < n / 8; i++) {
        weft_entity e = ids[fz_rnd(&x) % (uint32_t)n];
        if (weft_is_alive(w, e) && weft_despawn(w, e) != WEFT_OK) {
            return false;
        }
    }
    uint64_t score = fz_rnd(&x);
    if (weft_resource_insert(w, fw->score, &score, sizeof score) != WEFT_OK) {
        return false;
    }
    for (int i = 0; i < 3; i++) {
        uint64_t m = fz_rnd(&x);
        if (weft_message_write(w, fw->hit, &m, sizeof m) != WEFT_OK) {
            return false;
        }
    }
    return true;
}

#endif // WEFT_FUZZ_WORLD_H

/* bench/baseline.c - minimal hand-written ECS store (the bench's floor).
 * SPDX-License-Identifier: MIT
 *
 * See baseline.h for the layout. Invariants: for every live index i,
 * tables[rec[i].table].ent[rec[i].row] has index i; a free record has
 * table == BL_FREE and keeps its (already bumped) generation, with `row`
 * reused as the next link of the free list. `bytes` always equals the sum
 * of the capacities of every array times their element sizes.
 */
#include "baseline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BL_FREE UINT32_MAX
#define BL_NONE UINT32_MAX

enum { BL_T_PV = 0, BL_T_PVH = 1, BL_NTABLES = 2 };
enum { BL_C_POS = 0, BL_C_VEL = 1, BL_C_HP = 2, BL_NCOLS = 3 };

typedef struct bl_record {
    uint32_t gen;   /* bumped at despawn */
    uint32_t table; /* BL_T_*, or BL_FREE */
    uint32_t row;   /* row in the table, or next free index */
} bl_record;

typedef struct bl_table {
    uint32_t count;
    uint32_t cap;
    uint64_t *ent;
    bench_position *pos;
    bench_velocity *vel;
    bench_health *hp;           /* only in BL_T_PVH */
    uint32_t *ticks[BL_NCOLS];  /* [2*row] added, [2*row+1] changed; NULL without ticks */
} bl_table;

struct bl_store {
    bl_record *rec;
    uint32_t rec_count; /* indices handed out so far, including unused index 0 */
    uint32_t rec_cap;
    uint32_t free_head; /* LIFO free list through rec[].row, BL_NONE if empty */
    int64_t live;
    bool ticks;
    uint32_t tick;      /* the stamp written into change ticks */
    bl_table t[BL_NTABLES];
    /* sparse Health */
    uint32_t *sparse;   /* dense index + 1 per entity index, 0 = absent; rec_cap long */
    uint32_t sparse_cap;
    bench_health *dense;
    uint32_t *dense_owner;
    uint32_t *dense_ticks;
    uint32_t dense_count;
    uint32_t dense_cap;
    size_t bytes;
};

/* ---- allocation ---- */

static void *bl_resize(bl_store *s, void *p, size_t elem, uint32_t old_cap,
                       uint32_t new_cap)
{
    void *q = realloc(p, elem * new_cap);
    if (q == NULL) {
        fprintf(stderr, "baseline: out of memory\n");
        exit(1);
    }
    s->bytes += elem * new_cap;
    s->bytes -= elem * old_cap;
    return q;
}

static uint32_t bl_next_cap(uint32_t cap, uint32_t need)
{
    uint32_t c = cap < 64 ? 64 : cap;
    while (c < need) {
        c *= 2;
    }
    return c;
}

/* Grows by doubling; `exact` (bulk spawn) allocates just what is needed. */
static void bl_table_reserve(bl_store *s, bl_table *t, bool has_hp, uint32_t need,
                             bool exact)
{
    if (need <= t->cap) {
        return;
    }
    uint32_t nc = exact ? need : bl_next_cap(t->cap, need);
    t->ent = bl_resize(s, t->ent, sizeof *t->ent, t->cap, nc);
    t->pos = bl_resize(s, t->pos, sizeof *t->pos, t->cap, nc);
    t->vel = bl_resize(s, t->vel, sizeof *t->vel, t->cap, nc);
    if (has_hp) {
        t->hp = bl_resize(s, t->hp, sizeof *t->hp, t->cap, nc);
    }
    if (s->ticks) {
        int ncols = has_hp ? 3 : 2;
        for (int c = 0; c < ncols; c++) {
            t->ticks[c] = bl_resize(s, t->ticks[c], 2 * sizeof(uint32_t), t->cap, nc);
        }
    }
    t->cap = nc;
}

static void bl_records_reserve(bl_store *s, uint32_t need, bool exact)
{
    if (need <= s->rec_cap) {
        return;
    }
    uint32_t nc = exact ? need : bl_next_cap(s->rec_cap, need);
    s->rec = bl_resize(s, s->rec, sizeof *s->rec, s->rec_cap, nc);
    s->rec_cap = nc;
}

/* ---- records ---- */

static inline uint64_t bl_handle(uint32_t idx, uint32_t gen)
{
    return ((uint64_t)gen << 32) | idx;
}

static inline bl_record *bl_lookup(const bl_store *s, uint64_t e)
{
    uint32_t idx = (uint32_t)e;
    if (idx == 0 || idx >= s->rec_count) {
        return NULL;
    }
    bl_record *r = &s->rec[idx];
    if (r->gen != (uint32_t)(e >> 32) || r->table == BL_FREE) {
        return NULL;
    }
    return r;
}

static inline uint32_t bl_alloc_index(bl_store *s)
{
    if (s->free_head != BL_NONE) {
        uint32_t idx = s->free_head;
        s->free_head = s->rec[idx].row;
        return idx;
    }
    bl_records_reserve(s, s->rec_count + 1, false);
    uint32_t idx = s->rec_count++;
    s->rec[idx].gen = 0;
    return idx;
}

/* ---- table rows ---- */

static inline void bl_stamp(uint32_t *ticks, uint32_t row, uint32_t tick)
{
    ticks[2 * row] = tick;
    ticks[2 * row + 1] = tick;
}

/* Swap-removes `row` from `t`, fixing the record of the row moved into it. */
static void bl_table_swap_remove(bl_store *s, bl_table *t, uint32_t row)
{
    uint32_t last = --t->count;
    if (row == last) {
        return;
    }
    t->ent[row] = t->ent[last];
    t->pos[row] = t->pos[last];
    t->vel[row] = t->vel[last];
    if (t->hp != NULL) {
        t->hp[row] = t->hp[last];
    }
    for (int c = 0; c < BL_NCOLS; c++) {
        if (t->ticks[c] != NULL) {
            t->ticks[c][2 * row] = t->ticks[c][2 * last];
            t->ticks[c][2 * row + 1] = t->ticks[c][2 * last + 1];
        }
    }
    s->rec[(uint32_t)t->ent[row]].row = row;
}

/* ---- public ---- */

bl_store *bl_create(bool ticks)
{
    bl_store *s = calloc(1, sizeof *s);
    if (s == NULL) {
        fprintf(stderr, "baseline: out of memory\n");
        exit(1);
    }
    s->ticks = ticks;
    s->tick = 1;
    s->free_head = BL_NONE;
    s->rec_count = 1; /* index 0 is never an entity, so handle 0 is "none" */
    s->bytes = sizeof *s;
    return s;
}

void bl_destroy(bl_store *s)
{
    if (s == NULL) {
        return;
    }
    for (int i = 0; i < BL_NTABLES; i++) {
        bl_table *t = &s->t[i];
        free(t->ent);
        free(t->pos);
        free(t->vel);
        free(t->hp);
        for (int c = 0; c < BL_NCOLS; c++) {
            free(t->ticks[c]);
        }
    }
    free(s->rec);
    free(s->sparse);
    free(s->dense);
    free(s->dense_owner);
    free(s->dense_ticks);
    free(s);
}

uint64_t bl_spawn(bl_store *s, const bench_position *p, const bench_velocity *v)
{
    uint32_t idx = bl_alloc_index(s);
    bl_table *t = &s->t[BL_T_PV];
    bl_table_reserve(s, t, false, t->count + 1, false);
    uint32_t row = t->count++;
    uint64_t e = bl_handle(idx, s->rec[idx].gen);
    t->ent[row] = e;
    t->pos[row] = *p;
    t->vel[row] = *v;
    if (s->ticks) {
        bl_stamp(t->ticks[BL_C_POS], row, s->tick);
        bl_stamp(t->ticks[BL_C_VEL], row, s->tick);
    }
    s->rec[idx].table = BL_T_PV;
    s->rec[idx].row = row;
    s->live++;
    return e;
}

void bl_spawn_bulk(bl_store *s, int32_t n, const bench_position *p,
                   const bench_velocity *v, uint64_t *out)
{
    uint32_t un = (uint32_t)n;
    bl_table *t = &s->t[BL_T_PV];
    bl_table_reserve(s, t, false, t->count + un, true);
    bl_records_reserve(s, s->rec_count + un, true);
    uint32_t row0 = t->count;
    memcpy(t->pos + row0, p, sizeof *p * un);
    memcpy(t->vel + row0, v, sizeof *v * un);
    if (s->ticks) {
        for (uint32_t i = 0; i < 2 * un; i++) {
            t->ticks[BL_C_POS][2 * row0 + i] = s->tick;
            t->ticks[BL_C_VEL][2 * row0 + i] = s->tick;
        }
    }
    for (uint32_t i = 0; i < un; i++) {
        uint32_t idx = bl_alloc_index(s);
        bl_record *r = &s->rec[idx];
        r->table = BL_T_PV;
        r->row = row0 + i;
        uint64_t e = bl_handle(idx, r->gen);
        t->ent[row0 + i] = e;
        if (out != NULL) {
            out[i] = e;
        }
    }
    t->count += un;
    s->live += n;
}

static void bl_sparse_erase(bl_store *s, uint32_t idx)
{
    uint32_t d = s->sparse[idx] - 1;
    uint32_t last = --s->dense_count;
    if (d != last) {
        s->dense[d] = s->dense[last];
        s->dense_owner[d] = s->dense_owner[last];
        if (s->dense_ticks != NULL) {
            s->dense_ticks[2 * d] = s->dense_ticks[2 * last];
            s->dense_ticks[2 * d + 1] = s->dense_ticks[2 * last + 1];
        }
        s->sparse[s->dense_owner[d]] = d + 1;
    }
    s->sparse[idx] = 0;
}

bool bl_despawn(bl_store *s, uint64_t e)
{
    bl_record *r = bl_lookup(s, e);
    if (r == NULL) {
        return false;
    }
    uint32_t idx = (uint32_t)e;
    bl_table_swap_remove(s, &s->t[r->table], r->row);
    if (idx < s->sparse_cap && s->sparse[idx] != 0) {
        bl_sparse_erase(s, idx);
    }
    r->gen++;
    r->table = BL_FREE;
    r->row = s->free_head;
    s->free_head = idx;
    s->live--;
    return true;
}

bool bl_insert_health(bl_store *s, uint64_t e, const bench_health *h)
{
    bl_record *r = bl_lookup(s, e);
    if (r == NULL) {
        return false;
    }
    bl_table *dst = &s->t[BL_T_PVH];
    if (r->table == BL_T_PVH) {
        dst->hp[r->row] = *h;
        if (s->ticks) {
            dst->ticks[BL_C_HP][2 * r->row + 1] = s->tick;
        }
        return true;
    }
    bl_table *src = &s->t[BL_T_PV];
    bl_table_reserve(s, dst, true, dst->count + 1, false);
    uint32_t from = r->row;
    uint32_t to = dst->count++;
    dst->ent[to] = e;
    dst->pos[to] = src->pos[from];
    dst->vel[to] = src->vel[from];
    dst->hp[to] = *h;
    if (s->ticks) {
        for (int c = 0; c < 2; c++) {
            dst->ticks[c][2 * to] = src->ticks[c][2 * from];
            dst->ticks[c][2 * to + 1] = src->ticks[c][2 * from + 1];
        }
        bl_stamp(dst->ticks[BL_C_HP], to, s->tick);
    }
    bl_table_swap_remove(s, src, from);
    r->table = BL_T_PVH;
    r->row = to;
    return true;
}

bool bl_remove_health(bl_store *s, uint64_t e)
{
    bl_record *r = bl_lookup(s, e);
    if (r == NULL) {
        return false;
    }
    if (r->table != BL_T_PVH) {
        return true;
    }
    bl_table *src = &s->t[BL_T_PVH];
    bl_table *dst = &s->t[BL_T_PV];
    bl_table_reserve(s, dst, false, dst->count + 1, false);
    uint32_t from = r->row;
    uint32_t to = dst->count++;
    dst->ent[to] = e;
    dst->pos[to] = src->pos[from];
    dst->vel[to] = src->vel[from];
    if (s->ticks) {
        for (int c = 0; c < 2; c++) {
            dst->ticks[c][2 * to] = src->ticks[c][2 * from];
            dst->ticks[c][2 * to + 1] = src->ticks[c][2 * from + 1];
        }
    }
    bl_table_swap_remove(s, src, from);
    r->table = BL_T_PV;
    r->row = to;
    return true;
}

bool bl_insert_health_sparse(bl_store *s, uint64_t e, const bench_health *h)
{
    if (bl_lookup(s, e) == NULL) {
        return false;
    }
    uint32_t idx = (uint32_t)e;
    if (s->sparse_cap < s->rec_cap) {
        s->sparse = bl_resize(s, s->sparse, sizeof *s->sparse, s->sparse_cap, s->rec_cap);
        memset(s->sparse + s->sparse_cap, 0,
               sizeof *s->sparse * (s->rec_cap - s->sparse_cap));
        s->sparse_cap = s->rec_cap;
    }
    uint32_t d = s->sparse[idx];
    if (d != 0) {
        s->dense[d - 1] = *h;
        if (s->dense_ticks != NULL) {
            s->dense_ticks[2 * (d - 1) + 1] = s->tick;
        }
        return true;
    }
    if (s->dense_count == s->dense_cap) {
        uint32_t nc = bl_next_cap(s->dense_cap, s->dense_count + 1);
        s->dense = bl_resize(s, s->dense, sizeof *s->dense, s->dense_cap, nc);
        s->dense_owner = bl_resize(s, s->dense_owner, sizeof *s->dense_owner,
                                   s->dense_cap, nc);
        if (s->ticks) {
            s->dense_ticks = bl_resize(s, s->dense_ticks, 2 * sizeof(uint32_t),
                                       s->dense_cap, nc);
        }
        s->dense_cap = nc;
    }
    d = s->dense_count++;
    s->dense[d] = *h;
    s->dense_owner[d] = idx;
    if (s->dense_ticks != NULL) {
        bl_stamp(s->dense_ticks, d, s->tick);
    }
    s->sparse[idx] = d + 1;
    return true;
}

bool bl_remove_health_sparse(bl_store *s, uint64_t e)
{
    if (bl_lookup(s, e) == NULL) {
        return false;
    }
    uint32_t idx = (uint32_t)e;
    if (idx < s->sparse_cap && s->sparse[idx] != 0) {
        bl_sparse_erase(s, idx);
    }
    return true;
}

const bench_position *bl_get_pos(const bl_store *s, uint64_t e)
{
    const bl_record *r = bl_lookup(s, e);
    return r != NULL ? &s->t[r->table].pos[r->row] : NULL;
}

const bench_velocity *bl_get_vel(const bl_store *s, uint64_t e)
{
    const bl_record *r = bl_lookup(s, e);
    return r != NULL ? &s->t[r->table].vel[r->row] : NULL;
}

size_t bl_bytes(const bl_store *s)
{
    return s->bytes;
}

int64_t bl_live(const bl_store *s)
{
    return s->live;
}

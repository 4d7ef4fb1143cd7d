/* src/storage/column.h - type-erased value column with change ticks.
 * SPDX-License-Identifier: MIT
 *
 * A column is two allocations: the values (aligned to max(align, 16)) and,
 * unless the type opts out of ticks, the {added, changed} tick pairs. The
 * pair is interleaved so a row move touches one tick cache line per
 * column, not two. Keeping values and ticks apart lets each block grow in
 * place (wf_realloc: the C library extends or remaps it), so growth
 * neither copies the rows nor touches fresh pages for the old ones.
 * Length belongs to the owner (a table or a sparse set), which grows all
 * its columns to the same capacity, so row r of every column belongs to
 * the same entity (INV-7). Each block records the rows it holds: after a
 * growth that failed partway some blocks are larger than the owner's
 * capacity, which is harmless (they are freed with their own size).
 * `latest_change` is the newest tick written to any row: a Changed filter
 * skips the whole column when it is not newer than the query's last run.
 *
 * Bulk mark: writing a whole table's column through a query marks it in
 * O(1): `bulk` says every row is changed at least at `bulk_tick`, and a
 * row's effective changed tick is the newer of its own and bulk_tick
 * (wf_column_ticks). The owning table keeps the invariant that every row
 * present existed when the mark was made: before a row is appended, the
 * mark is written into the rows (wf_table_push). Rows leaving the table
 * take their effective tick with them.
 */
#ifndef WF_COLUMN_H
#define WF_COLUMN_H

#include <string.h>

#include "storage/component_registry.h"

typedef struct wf_column {
    uint8_t *data;          /* values; NULL for tags or cap 0 */
    weft_ticks *ticks;      /* [cap] or NULL when !ti->has_ticks */
    const wf_type_info *ti; /* registry entry (stable pointer) */
    uint32_t size;          /* ti->size, cached for the hot paths */
    uint32_t latest_change; /* newest tick stored in `changed` */
    weft_component id;      /* ti->id */
    bool trivial;           /* ti->trivial: values copy with memcpy */
    bool plain;             /* trivial, has values and ticks: the fast path */
    bool bulk;              /* every row changed at least at bulk_tick */
    uint32_t bulk_tick;
    uint32_t data_cap;      /* rows the value block holds */
    uint32_t ticks_cap;     /* rows the tick block holds */
} wf_column;

void wf_column_init(wf_column *c, const wf_type_info *ti);
/* Bytes of the widest block one row adds to (the value or the tick pair):
 * the element size owners pass to wf_grow_cap, so that no block exceeds
 * WF_ALLOC_MAX. */
static inline size_t wf_column_row_bytes(const wf_type_info *ti)
{
    size_t t = ti->has_ticks ? sizeof(weft_ticks) : 0u;
    return ti->size > t ? (size_t)ti->size : t;
}
/* Alignment of the value block. */
size_t wf_column_block_align(const wf_type_info *ti);
/* Growth in two steps, so that an owner with several columns can make
 * every allocation before it relocates any value through a move hook (a
 * moved value may be observable, e.g. a self pointer, so a failed growth
 * must not have moved one):
 * 1. wf_column_grow_inplace resizes the tick block and, for types without
 *    a move hook, the value block (bytewise relocation, unobservable);
 * 2. a value block that still needs to grow (wf_column_needs_move) is
 *    allocated with wf_column_alloc_block and, once every allocation of
 *    the owner succeeded, taken with wf_column_adopt_block, which moves
 *    the `count` live values through the hook and frees the old block.
 * A step that fails leaves the rows in place; a block that did grow keeps
 * its new size. */
bool wf_column_grow_inplace(wf_column *c, wf_allocator *a, uint32_t cap);
static inline bool wf_column_needs_move(const wf_column *c, uint32_t cap)
{
    return c->size && c->data_cap < cap;
}
void *wf_column_alloc_block(const wf_column *c, wf_allocator *a, uint32_t cap);
void wf_column_free_block(const wf_column *c, wf_allocator *a, void *block, uint32_t cap);
void wf_column_adopt_block(wf_column *c, wf_allocator *a, void *block, uint32_t count,
                           uint32_t cap);
/* Both steps for a lone column (its owner has nothing else to allocate
 * after it). */
bool wf_column_grow(wf_column *c, wf_allocator *a, uint32_t count, uint32_t cap);
/* Destroys `count` values and frees the blocks. */
void wf_column_fini(wf_column *c, wf_allocator *a, uint32_t count);
/* Destroys the first `count` values and forgets the change marks (bulk
 * mark, latest change); the blocks stay for reuse. */
void wf_column_clear(wf_column *c, uint32_t count);

/* memcpy of one value. Small sizes copy two overlapping words, so the
 * only branch is on the size class (a libc call or a jump table would
 * dominate a row move). */
static inline void wf_value_copy(void *dst, const void *src, uint32_t size)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (size >= 8 && size <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + size - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + size - 8, &b, 8);
    } else if (size >= 4 && size < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + size - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + size - 4, &b, 4);
    } else {
        memcpy(d, s, size);
    }
}

static inline void *wf_column_ptr(const wf_column *c, uint32_t row)
{
    return c->data + (size_t)row * c->size;
}

/* Is tick a strictly newer than tick b, seen at `now` (the world's change
 * tick)? Ages are compared, not signed differences: stored ticks may be up
 * to 2^32 - 1 apart (the clamp keeps them within that), and a signed
 * difference is only meaningful within 2^31. */
static inline bool wf_tick_after(uint32_t a, uint32_t b, uint32_t now)
{
    return now - a < now - b;
}

/* Keeps the column summary at least as new as `tick`. */
static inline void wf_column_note(wf_column *c, uint32_t tick, uint32_t now)
{
    if (wf_tick_after(tick, c->latest_change, now)) {
        c->latest_change = tick;
    }
}

/* Effective ticks of a row (the bulk mark applied). */
static inline weft_ticks wf_column_ticks(const wf_column *c, uint32_t row, uint32_t now)
{
    weft_ticks t = c->ticks[row];
    if (c->bulk && wf_tick_after(c->bulk_tick, t.changed, now)) {
        t.changed = c->bulk_tick;
    }
    return t;
}

/* Writes a bulk mark into `count` rows and clears it. */
void wf_column_materialize(wf_column *c, uint32_t count, uint32_t now);

/* Constructs row `row` from src (NULL: default) and stamps added=changed
 * with `tick`, which must be the world's current change tick (the newest). */
static inline void wf_column_construct(wf_column *c, uint32_t row, const void *src,
                                       uint32_t tick)
{
    if (c->data) {
        if (c->trivial && src) {
            wf_value_copy(wf_column_ptr(c, row), src, c->size);
        } else {
            wf_type_construct(c->ti, wf_column_ptr(c, row), src, 1);
        }
    }
    if (c->ticks) {
        c->ticks[row].added = tick;
        c->ticks[row].changed = tick;
        c->latest_change = tick;
    }
}

/* Replaces row `row`: destroys the old value, constructs from src, stamps
 * changed with `tick` (added is kept). */
static inline void wf_column_replace(wf_column *c, uint32_t row, const void *src,
                                     uint32_t tick, uint32_t now)
{
    if (c->data) {
        void *p = wf_column_ptr(c, row);
        wf_type_destroy(c->ti, p, 1);
        wf_type_construct(c->ti, p, src, 1);
    }
    if (c->ticks) {
        c->ticks[row].changed = tick;
        wf_column_note(c, tick, now);
    }
}

static inline void wf_column_mark(wf_column *c, uint32_t row, uint32_t tick, uint32_t now)
{
    if (c->ticks) {
        c->ticks[row].changed = tick;
        wf_column_note(c, tick, now);
    }
}

/* Moves row `src_row` of `src` into raw row `dst_row` of `dst` (same
 * type), ticks included, without touching dst's change summary. */
static inline void wf_column_copy_row(wf_column *dst, uint32_t dst_row,
                                      wf_column *src, uint32_t src_row)
{
    if (src->data) {
        if (src->trivial) {
            wf_value_copy(wf_column_ptr(dst, dst_row), wf_column_ptr(src, src_row), src->size);
        } else {
            wf_type_move(src->ti, wf_column_ptr(dst, dst_row), wf_column_ptr(src, src_row), 1);
        }
    }
    if (dst->ticks) {
        dst->ticks[dst_row] = src->ticks[src_row];
    }
}

/* wf_column_copy_row for `plain` columns (checked by the caller). */
static inline void wf_column_copy_plain(wf_column *dst, uint32_t dst_row,
                                        const wf_column *src, uint32_t src_row)
{
    uint32_t size = src->size;
    wf_value_copy(dst->data + (size_t)dst_row * size, src->data + (size_t)src_row * size,
                  size);
    dst->ticks[dst_row] = src->ticks[src_row];
}

/* As wf_column_copy_row between two columns, keeping dst's summary an
 * upper bound of the ticks it holds. */
static inline void wf_column_move_row(wf_column *dst, uint32_t dst_row,
                                      wf_column *src, uint32_t src_row, uint32_t now)
{
    wf_column_copy_row(dst, dst_row, src, src_row);
    if (dst->ticks) {
        dst->ticks[dst_row] = wf_column_ticks(src, src_row, now);
        wf_column_note(dst, dst->ticks[dst_row].changed, now);
    }
}

#endif

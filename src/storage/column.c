/* src/storage/column.c - column block layout and growth.
 * SPDX-License-Identifier: MIT
 */
#include "storage/column.h"

#include <string.h>

#include "core/config.h"

void wf_column_init(wf_column *c, const wf_type_info *ti)
{
    memset(c, 0, sizeof *c);
    c->ti = ti;
    c->size = ti->size;
    c->trivial = ti->trivial;
    c->plain = ti->trivial && ti->size != 0 && ti->has_ticks;
    c->id = ti->id;
}

size_t wf_column_block_align(const wf_type_info *ti)
{
    return ti->align > WF_COLUMN_MIN_ALIGN ? ti->align : WF_COLUMN_MIN_ALIGN;
}

bool wf_column_grow_inplace(wf_column *c, wf_allocator *a, uint32_t cap)
{
    if (c->ti->has_ticks && c->ticks_cap < cap) {
        weft_ticks *t = wf_realloc(a, c->ticks, (size_t)c->ticks_cap * sizeof *t,
                                   (size_t)cap * sizeof *t, _Alignof(weft_ticks));
        if (!t) {
            return false;
        }
        c->ticks = t;
        c->ticks_cap = cap;
    }
    if (c->size && c->data_cap < cap && c->ti->hooks.move == NULL) {
        size_t align = wf_column_block_align(c->ti);
        uint8_t *d = wf_realloc(a, c->data, (size_t)c->data_cap * c->size,
                                (size_t)cap * c->size, align);
        if (!d) {
            return false;
        }
        c->data = d;
        c->data_cap = cap;
    }
    return true;
}

void *wf_column_alloc_block(const wf_column *c, wf_allocator *a, uint32_t cap)
{
    return wf_alloc(a, (size_t)cap * c->size, wf_column_block_align(c->ti));
}

void wf_column_free_block(const wf_column *c, wf_allocator *a, void *block, uint32_t cap)
{
    wf_free(a, block, (size_t)cap * c->size, wf_column_block_align(c->ti));
}

void wf_column_adopt_block(wf_column *c, wf_allocator *a, void *block, uint32_t count,
                           uint32_t cap)
{
    if (count) {
        wf_type_move(c->ti, block, c->data, (int32_t)count);
    }
    wf_column_free_block(c, a, c->data, c->data_cap);
    c->data = block;
    c->data_cap = cap;
}

bool wf_column_grow(wf_column *c, wf_allocator *a, uint32_t count, uint32_t cap)
{
    if (!wf_column_grow_inplace(c, a, cap)) {
        return false;
    }
    if (wf_column_needs_move(c, cap)) {
        void *block = wf_column_alloc_block(c, a, cap);
        if (!block) {
            return false;
        }
        wf_column_adopt_block(c, a, block, count, cap);
    }
    return true;
}

void wf_column_materialize(wf_column *c, uint32_t count, uint32_t now)
{
    if (!c->bulk) {
        return;
    }
    uint32_t tick = c->bulk_tick;
    for (uint32_t r = 0; r < count; r++) {
        if (wf_tick_after(tick, c->ticks[r].changed, now)) {
            c->ticks[r].changed = tick;
        }
    }
    c->bulk = false;
}

void wf_column_clear(wf_column *c, uint32_t count)
{
    if (c->data) {
        wf_type_destroy(c->ti, c->data, (int32_t)count);
    }
    c->bulk = false;
    c->bulk_tick = 0;
    c->latest_change = 0;
}

void wf_column_fini(wf_column *c, wf_allocator *a, uint32_t count)
{
    if (c->data) {
        wf_type_destroy(c->ti, c->data, (int32_t)count);
        wf_free(a, c->data, (size_t)c->data_cap * c->size, wf_column_block_align(c->ti));
    }
    wf_free(a, c->ticks, (size_t)c->ticks_cap * sizeof *c->ticks, _Alignof(weft_ticks));
    c->data = NULL;
    c->ticks = NULL;
    c->data_cap = 0;
    c->ticks_cap = 0;
}

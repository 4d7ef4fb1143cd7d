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

static bool column_grow_data(wf_column *c, wf_allocator *a, uint32_t count, uint32_t cap)
{
    size_t align = wf_column_block_align(c->ti);
    size_t old_bytes = (size_t)c->data_cap * c->size;
    size_t new_bytes = (size_t)cap * c->size;
    uint8_t *data;
    if (c->ti->hooks.move == NULL) {
        data = wf_realloc(a, c->data, old_bytes, new_bytes, align);
        if (!data) {
            return false;
        }
    } else {
        /* a move hook must see every relocation */
        data = wf_alloc(a, new_bytes, align);
        if (!data) {
            return false;
        }
        if (count) {
            wf_type_move(c->ti, data, c->data, (int32_t)count);
        }
        wf_free(a, c->data, old_bytes, align);
    }
    c->data = data;
    c->data_cap = cap;
    return true;
}

bool wf_column_grow(wf_column *c, wf_allocator *a, uint32_t count, uint32_t cap)
{
    if (c->size && c->data_cap < cap && !column_grow_data(c, a, count, cap)) {
        return false;
    }
    if (c->ti->has_ticks && c->ticks_cap < cap) {
        weft_ticks *t = wf_realloc(a, c->ticks, (size_t)c->ticks_cap * sizeof *t,
                                   (size_t)cap * sizeof *t, _Alignof(weft_ticks));
        if (!t) {
            return false;
        }
        c->ticks = t;
        c->ticks_cap = cap;
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

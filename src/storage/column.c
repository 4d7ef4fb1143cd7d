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

static size_t column_data_bytes(const wf_type_info *ti, uint32_t cap)
{
    size_t bytes = (size_t)ti->size * cap;
    return (bytes + 7u) & ~(size_t)7u; /* tick pairs that follow */
}

size_t wf_column_block_size(const wf_type_info *ti, uint32_t cap)
{
    size_t bytes = column_data_bytes(ti, cap);
    if (ti->has_ticks) {
        bytes += sizeof(weft_ticks) * cap;
    }
    return bytes;
}

size_t wf_column_block_align(const wf_type_info *ti)
{
    return ti->align > WF_COLUMN_MIN_ALIGN ? ti->align : WF_COLUMN_MIN_ALIGN;
}

/* Points data/added/changed into `block` laid out for `cap` rows. */
static void column_layout(wf_column *c, void *block, uint32_t cap)
{
    uint8_t *base = block;
    size_t data_bytes = column_data_bytes(c->ti, cap);
    c->data = (c->ti->size && base) ? base : NULL;
    if (c->ti->has_ticks && base) {
        c->ticks = (weft_ticks *)(void *)(base + data_bytes);
    } else {
        c->ticks = NULL;
    }
}

void wf_column_adopt(wf_column *c, wf_allocator *a, void *block, uint32_t count,
                     uint32_t new_cap)
{
    wf_column old = *c;
    column_layout(c, block, new_cap);
    if (count) {
        if (c->data) {
            wf_type_move(c->ti, c->data, old.data, (int32_t)count);
        }
        if (c->ticks) {
            memcpy(c->ticks, old.ticks, count * sizeof *c->ticks);
        }
    }
    wf_free(a, old.block, old.block_size, wf_column_block_align(c->ti));
    c->block = block;
    c->block_size = wf_column_block_size(c->ti, new_cap);
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
    if (!c->block) {
        return; /* never grown (or a half-built table being undone) */
    }
    if (c->data) {
        wf_type_destroy(c->ti, c->data, (int32_t)count);
    }
    wf_free(a, c->block, c->block_size, wf_column_block_align(c->ti));
    c->block = NULL;
    c->data = NULL;
    c->ticks = NULL;
    c->block_size = 0;
}

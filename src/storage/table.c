/* src/storage/table.c - table creation, growth, delete and move.
 * SPDX-License-Identifier: MIT
 *
 * Growth resizes each block in place where the allocator can (wf_realloc),
 * so the rows are neither copied nor re-touched; a failed growth leaves
 * every row where it was. Capacity doubles (minimum 8 rows), so appends
 * are amortised O(1).
 */
#include "storage/table.h"

#include <string.h>

#include "core/check.h"
#include "core/config.h"

/* col_map holds column numbers as int16_t: a table has at most one column
 * per registered component, and the registry stops there. */
_Static_assert(WF_MAX_COMPONENTS <= INT16_MAX, "column numbers must fit in int16_t");

wf_table *wf_table_create(wf_allocator *a, const wf_registry *reg,
                          const weft_component *ids, uint32_t count, uint64_t hash)
{
    if (count > WF_MAX_COMPONENTS) {
        return NULL;
    }
    wf_table *t = wf_calloc(a, sizeof *t, _Alignof(wf_table));
    if (!t) {
        return NULL;
    }
    t->hash = hash;
    t->col_count = count;
    t->col_map_len = count ? ids[count - 1] + 1 : 0;
    if (count) {
        t->cols = wf_calloc(a, count * sizeof *t->cols, _Alignof(wf_column));
        t->ids = wf_alloc(a, count * sizeof *t->ids, _Alignof(weft_component));
        t->col_map = wf_alloc(a, t->col_map_len * sizeof *t->col_map, _Alignof(int16_t));
        if (!t->cols || !t->ids || !t->col_map) {
            wf_table_destroy(t, a);
            return NULL;
        }
        memcpy(t->ids, ids, count * sizeof *ids);
        memset(t->col_map, 0xFF, t->col_map_len * sizeof *t->col_map);
        t->all_plain = true;
        for (uint32_t i = 0; i < count; i++) {
            wf_column_init(&t->cols[i], wf_registry_get(reg, ids[i]));
            t->col_map[ids[i]] = (int16_t)i;
            t->needs_dtor |= !t->cols[i].trivial;
            t->all_plain &= t->cols[i].plain;
        }
    }
    return t;
}

void wf_table_destroy(wf_table *t, wf_allocator *a)
{
    if (!t) {
        return;
    }
    if (t->cols) {
        for (uint32_t i = 0; i < t->col_count; i++) {
            wf_column_fini(&t->cols[i], a, t->count);
        }
    }
    wf_free(a, t->cols, t->col_count * sizeof *t->cols, _Alignof(wf_column));
    wf_free(a, t->ids, t->col_count * sizeof *t->ids, _Alignof(weft_component));
    wf_free(a, t->col_map, t->col_map_len * sizeof *t->col_map, _Alignof(int16_t));
    for (wf_move_plan *p = t->plans; p;) {
        wf_move_plan *next = p->next;
        wf_free(a, p, sizeof *p + p->n_ops * sizeof p->ops[0], _Alignof(wf_move_plan));
        p = next;
    }
    wf_free(a, t->entities, (size_t)t->ent_cap * sizeof *t->entities, _Alignof(weft_entity));
    wf_free(a, t, sizeof *t, _Alignof(wf_table));
}

void wf_table_clear(wf_table *t)
{
    for (uint32_t i = 0; i < t->col_count; i++) {
        wf_column_clear(&t->cols[i], t->count);
    }
    wf_atomic_store_relaxed_u32(&t->bulk_any, 0);
    t->count = 0;
}

/* Second step of growth: the columns whose values move through a hook
 * (`moving` of them) get every new block, then all move. */
static bool table_grow_moving(wf_table *t, wf_allocator *a, uint32_t cap, uint32_t moving)
{
    void *small[8];
    void **blocks = small;
    if (moving > 8) {
        blocks = wf_alloc(a, moving * sizeof *blocks, _Alignof(void *));
        if (!blocks) {
            return false;
        }
    }
    uint32_t got = 0;
    bool ok = true;
    for (uint32_t i = 0; i < t->col_count && ok; i++) {
        if (wf_column_needs_move(&t->cols[i], cap)) {
            blocks[got] = wf_column_alloc_block(&t->cols[i], a, cap);
            ok = blocks[got] != NULL;
            got += ok;
        }
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < t->col_count && k < got; i++) {
        if (wf_column_needs_move(&t->cols[i], cap)) {
            if (ok) {
                wf_column_adopt_block(&t->cols[i], a, blocks[k], t->count, cap);
            } else {
                wf_column_free_block(&t->cols[i], a, blocks[k], cap);
            }
            k++;
        }
    }
    if (blocks != small) {
        wf_free(a, blocks, moving * sizeof *blocks, _Alignof(void *));
    }
    return ok;
}

bool wf_table_reserve(wf_table *t, wf_allocator *a, uint32_t need)
{
    if (need <= t->cap) {
        return true;
    }
    /* max(need, 2 * cap): amortised O(1) appends, and a bulk reservation
     * gets exactly what it asks for. The widest row of any block bounds
     * the byte size. */
    size_t row = sizeof(weft_entity);
    for (uint32_t i = 0; i < t->col_count; i++) {
        size_t r = wf_column_row_bytes(t->cols[i].ti);
        row = r > row ? r : row;
    }
    uint32_t cap = wf_grow_cap(t->cap, need, 8, WF_MAX_ROWS, row);
    if (cap == 0) {
        return false;
    }
    /* Everything bytewise first (entities, ticks, values without a move
     * hook): a failure leaves every row in place, and blocks that already
     * grew just hold more than `cap` until the next try. Values with a
     * move hook get all their new blocks before any of them moves, so a
     * failed growth never has moved a value. */
    if (t->ent_cap < cap) {
        weft_entity *e = wf_realloc(a, t->entities, (size_t)t->ent_cap * sizeof *e,
                                    (size_t)cap * sizeof *e, _Alignof(weft_entity));
        if (!e) {
            return false;
        }
        t->entities = e;
        t->ent_cap = cap;
    }
    uint32_t moving = 0;
    for (uint32_t i = 0; i < t->col_count; i++) {
        if (!wf_column_grow_inplace(&t->cols[i], a, cap)) {
            return false;
        }
        moving += wf_column_needs_move(&t->cols[i], cap);
    }
    if (moving && !table_grow_moving(t, a, cap, moving)) {
        return false;
    }
    t->cap = cap;
    return true;
}

void wf_table_materialize(wf_table *t, uint32_t now)
{
    for (uint32_t i = 0; i < t->col_count; i++) {
        wf_column_materialize(&t->cols[i], t->count, now);
    }
    wf_atomic_store_relaxed_u32(&t->bulk_any, 0);
}

wf_move_plan *wf_table_plan(wf_table *src, wf_table *dst, wf_allocator *a)
{
    if (src->last_plan && src->last_plan->dst == dst) {
        return src->last_plan;
    }
    wf_move_plan *p = src->plans;
    while (p && p->dst != dst) {
        p = p->next;
    }
    if (!p) {
        uint32_t n = src->col_count;
        p = wf_alloc(a, sizeof *p + n * sizeof p->ops[0], _Alignof(wf_move_plan));
        if (!p) {
            return NULL;
        }
        p->src = src;
        p->dst = dst;
        p->n_ops = n;
        /* three passes over the sorted column lists, one per group */
        uint32_t k = 0;
        for (int group = 0; group < 3; group++) {
            uint32_t j = 0;
            for (uint32_t i = 0; i < n; i++) {
                wf_column *sc = &src->cols[i];
                int g = sc->plain ? 0 : (sc->trivial && !sc->size && sc->ti->has_ticks) ? 1 : 2;
                while (j < dst->col_count && dst->cols[j].id < sc->id) {
                    j++;
                }
                if (g != group) {
                    continue;
                }
                bool shared = j < dst->col_count && dst->cols[j].id == sc->id;
                p->ops[k].src = sc;
                p->ops[k].dst = shared ? &dst->cols[j] : NULL;
                k++;
            }
            if (group == 0) {
                p->n_plain = k;
            } else if (group == 1) {
                p->n_ticks = k;
            }
        }
        /* the destination columns src lacks: `fresh` when exactly one */
        p->fresh = NULL;
        uint32_t missing = 0;
        for (uint32_t j = 0, i = 0; j < dst->col_count; j++) {
            while (i < n && src->cols[i].id < dst->cols[j].id) {
                i++;
            }
            if (i == n || src->cols[i].id != dst->cols[j].id) {
                p->fresh = missing++ ? NULL : &dst->cols[j];
            }
        }
        if (missing > 1) {
            p->fresh = NULL;
        }
        p->next = src->plans;
        src->plans = p;
    }
    src->last_plan = p;
    return p;
}

uint32_t wf_table_move(const wf_move_plan *plan, uint32_t row, weft_entity *out_moved,
                       uint32_t now)
{
    wf_table *src = plan->src;
    uint32_t dst_row = wf_table_push(plan->dst, src->entities[row], now);
    /* One pass over the source columns: each moves its row out and, in
     * the same visit, takes the last row into the hole (swap-remove). */
    uint32_t last = src->count - 1;
    bool fill = row != last;
    bool bulk = wf_atomic_load_relaxed_u32(&src->bulk_any) != 0;
    const wf_move_op *op = plan->ops;
    const wf_move_op *end = op + plan->n_plain;
    for (; op < end; op++) {
        const wf_column *sc = op->src;
        wf_column *dc = op->dst;
        uint32_t size = sc->size;
        uint8_t *data = sc->data;
        weft_ticks *ticks = sc->ticks;
        if (dc) {
            weft_ticks t = WF_UNLIKELY(bulk) ? wf_column_ticks(sc, row, now) : ticks[row];
            wf_value_copy(dc->data + (size_t)dst_row * size, data + (size_t)row * size, size);
            dc->ticks[dst_row] = t;
            wf_column_note(dc, t.changed, now);
        }
        if (fill) {
            wf_value_copy(data + (size_t)row * size, data + (size_t)last * size, size);
            ticks[row] = ticks[last];
        }
    }
    for (end = plan->ops + plan->n_ticks; op < end; op++) {
        const wf_column *sc = op->src;
        wf_column *dc = op->dst;
        weft_ticks *ticks = sc->ticks;
        if (dc) {
            weft_ticks t = WF_UNLIKELY(bulk) ? wf_column_ticks(sc, row, now) : ticks[row];
            dc->ticks[dst_row] = t;
            wf_column_note(dc, t.changed, now);
        }
        if (fill) {
            ticks[row] = ticks[last];
        }
    }
    for (end = plan->ops + plan->n_ops; op < end; op++) {
        wf_column *sc = op->src;
        if (op->dst) {
            wf_column_move_row(op->dst, dst_row, sc, row, now);
        } else if (sc->data && !sc->trivial) {
            wf_type_destroy(sc->ti, wf_column_ptr(sc, row), 1);
        }
        if (fill) {
            wf_column_copy_row(sc, row, sc, last);
        }
    }
    src->count = last;
    weft_entity moved = 0;
    if (fill) {
        moved = src->entities[last];
        src->entities[row] = moved;
    }
    *out_moved = moved;
    return dst_row;
}

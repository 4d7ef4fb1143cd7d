/* src/storage/table.h - archetype table: entity column plus value columns.
 * SPDX-License-Identifier: MIT
 *
 * A table stores every entity whose archetype has exactly this set of
 * table-storage components (archetypes differing only in sparse components
 * share it, INV-4). Rows are dense: row r of `entities` and of every column
 * belong to one entity, rows 0..count-1 are live, and removal is
 * swap-remove, so the caller must fix the record of the entity that moved
 * into the hole. `col_map[id]` gives the column of component `id` or -1;
 * it covers ids up to the largest in the table.
 * Only the driver thread changes a table.
 */
#ifndef WF_TABLE_H
#define WF_TABLE_H

#include "core/atomic.h"
#include "storage/column.h"

typedef struct wf_table {
    uint32_t id;               /* index in the graph's table array */
    uint32_t count;            /* live rows */
    uint32_t cap;              /* rows every block holds (some may hold more
                                  after a growth that failed partway) */
    weft_entity *entities;     /* [ent_cap] owner of each row */
    uint32_t ent_cap;          /* rows `entities` holds, >= cap */
    wf_column *cols;           /* [col_count], sorted by component id */
    uint32_t col_count;
    int16_t *col_map;          /* [col_map_len] component id -> column or -1 */
    uint32_t col_map_len;
    weft_component *ids;       /* [col_count] sorted component ids (the key) */
    uint64_t hash;             /* XXH3 of ids */
    uint32_t archetype_count;  /* archetypes sharing this table */
    bool needs_dtor;           /* some column has a dtor or move hook */
    wf_atomic_u32 bulk_any;    /* some column carries a bulk mark (atomic:
                                  parallel systems writing different columns
                                  of one table may set it together) */
    struct wf_table *move_dst; /* one-entry cache: last table rows moved to */
    int16_t *move_map;         /* [col_count] column in move_dst, or -1 */
} wf_table;

/* New empty table for sorted, table-storage `ids`; NULL when out of memory. */
wf_table *wf_table_create(wf_allocator *a, const wf_registry *reg,
                          const weft_component *ids, uint32_t count, uint64_t hash);
/* Destroys live values, frees everything. */
void wf_table_destroy(wf_table *t, wf_allocator *a);
/* Makes room for at least `need` rows; false (table unchanged) on OOM. */
bool wf_table_reserve(wf_table *t, wf_allocator *a, uint32_t need);
/* Column of component id, or NULL. */
static inline wf_column *wf_table_column(const wf_table *t, weft_component id)
{
    if (id >= t->col_map_len || t->col_map[id] < 0) {
        return NULL;
    }
    return &t->cols[t->col_map[id]];
}
/* Writes every column's bulk mark into its rows (before rows are added).
 * `now` is the world's change tick. */
void wf_table_materialize(wf_table *t, uint32_t now);
/* Appends a row for e (capacity must be reserved); values are unset. */
static inline uint32_t wf_table_push(wf_table *t, weft_entity e, uint32_t now)
{
    if (wf_atomic_load_relaxed_u32(&t->bulk_any)) {
        wf_table_materialize(t, now);
    }
    uint32_t row = t->count++;
    t->entities[row] = e;
    return row;
}
/* Swap-removes `row`, destroying its values. Returns the entity that moved
 * into `row`, or 0 when row was the last one. */
weft_entity wf_table_delete(wf_table *t, uint32_t row);
/* Moves e's row from `src` to a new row of `dst` (capacity reserved):
 * shared columns move, columns dst lacks are destroyed, columns src lacks
 * are left unset for the caller. Swap-removes the source row.
 * *out_moved receives the entity that filled the hole in src (or 0). */
uint32_t wf_table_move(wf_table *dst, wf_table *src, uint32_t row,
                       weft_entity *out_moved, uint32_t now);

#endif

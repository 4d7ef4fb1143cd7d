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
#include "core/check.h"
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
    bool all_plain;            /* every column is `plain` (column.h): a hole
                                  fill is bytewise, with no per-column test */
    wf_atomic_u32 bulk_any;    /* some column carries a bulk mark (atomic:
                                  parallel systems writing different columns
                                  of one table may set it together) */
    struct wf_move_plan *plans; /* plans out of this table (list, owned) */
    struct wf_move_plan *last_plan; /* one-entry cache of wf_table_plan */
} wf_table;

/* A move plan says how a row moves from table `src` to table `dst`, so
 * that a move walks one short array and makes no per-column lookup or
 * classification. Each op names a source column and the destination
 * column of the same component (NULL when dst lacks it: the value is
 * dropped). Ops are grouped by the work they need:
 *   [0, n_plain)        plain columns (trivial values and ticks): a value
 *                       copy and a tick copy;
 *   [n_plain, n_ticks)  tags (ticks, no values): a tick copy;
 *   [n_ticks, n_ops)    anything else (move/drop hooks, no ticks): the
 *                       general per-column code.
 * Every source column has exactly one op, so the same walk also fills the
 * hole the row leaves (swap-remove). `fresh` is the destination column src
 * lacks when there is exactly one (the column an add-one-component move
 * constructs), else NULL. Column pointers are stable: a table's column
 * array never moves while the world lives, only the blocks inside the
 * columns do. A plan is built once per table pair and owned by its source
 * table; archetype edges keep a pointer to it. */
typedef struct wf_move_op {
    wf_column *src;
    wf_column *dst; /* NULL: dst lacks the component */
} wf_move_op;

typedef struct wf_move_plan {
    struct wf_table *src;
    struct wf_table *dst;
    struct wf_move_plan *next; /* next plan of src */
    wf_column *fresh;          /* the one dst column src lacks, or NULL */
    uint32_t n_plain;
    uint32_t n_ticks;
    uint32_t n_ops;            /* == src->col_count */
    wf_move_op ops[];
} wf_move_plan;

/* New empty table for sorted, table-storage `ids`; NULL when out of memory. */
wf_table *wf_table_create(wf_allocator *a, const wf_registry *reg,
                          const weft_component *ids, uint32_t count, uint64_t hash);
/* Destroys live values, frees everything. */
void wf_table_destroy(wf_table *t, wf_allocator *a);
/* Destroys live values and leaves no row; blocks and plans stay. */
void wf_table_clear(wf_table *t);
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
 * into `row`, or 0 when row was the last one. A table of plain columns
 * only (the common case) fills the hole bytewise without a per-column
 * test; otherwise each column is tested and values with hooks are
 * destroyed and moved through them. */
static inline weft_entity wf_table_delete(wf_table *t, uint32_t row)
{
    wf_column *c = t->cols;
    /* an empty archetype's table has no columns (cols NULL): NULL + 0 is
     * undefined behaviour in C, and clang's UBSan reports it */
    wf_column *end = t->col_count ? c + t->col_count : c;
    for (; WF_UNLIKELY(t->needs_dtor) && c < end; c++) {
        if (c->data && !c->trivial) {
            wf_type_destroy(c->ti, wf_column_ptr(c, row), 1);
        }
    }
    uint32_t last = --t->count;
    if (row == last) {
        return 0;
    }
    if (WF_LIKELY(t->all_plain)) {
        for (c = t->cols; c < end; c++) {
            wf_column_copy_plain(c, row, c, last);
        }
    } else {
        for (c = t->cols; c < end; c++) {
            if (c->plain) {
                wf_column_copy_plain(c, row, c, last);
            } else {
                wf_column_copy_row(c, row, c, last);
            }
        }
    }
    weft_entity moved = t->entities[last];
    t->entities[row] = moved;
    return moved;
}
/* The plan for moves from src to dst (src != dst), built on first use;
 * NULL when out of memory (nothing changed). */
wf_move_plan *wf_table_plan(wf_table *src, wf_table *dst, wf_allocator *a);
/* Moves row `row` from plan->src to a new row of plan->dst (capacity
 * reserved): shared columns move, columns dst lacks are destroyed, columns
 * src lacks are left unset for the caller. Swap-removes the source row.
 * *out_moved receives the entity that filled the hole in src (or 0). */
uint32_t wf_table_move(const wf_move_plan *plan, uint32_t row, weft_entity *out_moved,
                       uint32_t now);

#endif

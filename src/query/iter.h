/* src/query/iter.h - chunk iteration over a query's matched tables.
 * SPDX-License-Identifier: MIT
 *
 * A chunk is a run of consecutive rows of one table that all match: whole
 * tables when nothing needs checking per row, otherwise the maximal runs of
 * rows that pass (partial tables, Added/Changed filters). The iterator holds
 * indices, not pointers, into the query's match list, and lives in the
 * caller's weft_iter storage.
 *
 * Per chunk the step computes every field term's pointer once (`ptr`), so
 * a field fetch only compares the size with `fsize` and returns it.
 *
 * Sparse field terms (a sparse component with a value, read or written)
 * get a pointer too: the step cuts the chunk to the longest run of rows
 * whose values sit at consecutive slots of the sparse set's dense array
 * (or that all lack an optional term), so the field is a plain array for
 * the chunk whatever the storage. Values added in row order (spawns,
 * inserts over a table in order) form long runs; a shuffled sparse set
 * gives short chunks, never wrong ones. `fsize`
 * is all zero until the first chunk and again after the end, which sends
 * every fetch outside a chunk to the checking path.
 *
 * Filtered tables with a simple filter set (query.h `filter_simple`) and
 * not partial scan the tick arrays directly (`flt`); the rest goes through
 * wf_query_row_passes.
 */
#ifndef WF_ITER_H
#define WF_ITER_H

#include "query/query.h"

#define WF_ITER_ACTIVE 0x69746572u /* "iter" */
#define WF_ITER_DONE 0x646f6e65u   /* "done" */
#define WF_ITER_FAST_FILTERS 4     /* filtered terms the direct scan handles */

/* Who owns an iteration (what its end touches). */
enum {
    WF_ITER_WORLD = 0,  /* weft_query_iter: world depth, the query's last run */
    WF_ITER_SYSTEM = 1, /* a system's query on a worker: only the query's count */
    WF_ITER_EXCL = 2,   /* an exclusive system's: world depth too (it may make
                           structural calls, which then defer) */
    WF_ITER_TASK = 3    /* one parallel chunk task: rows [row, row_end) of one
                           match; touches nothing shared, marks rows only */
};

/* The iteration state is public only as storage (weft.h: weft_iter_state,
 * held inside weft_iter so that accessing a weft_iter through it is
 * defined); its fields are documented there. */
typedef weft_iter_state wf_iter;

_Static_assert(sizeof(weft_iter) == 512, "weft_iter is 512 bytes (tests/abi)");
_Static_assert(sizeof(wf_iter) <= sizeof(weft_iter), "weft_iter is too small");
_Static_assert(_Alignof(weft_iter) >= _Alignof(wf_iter), "weft_iter is misaligned");
_Static_assert(offsetof(weft_iter, _private.state) == 0, "the state starts the storage");
_Static_assert(WF_ITER_FAST_FILTERS == sizeof(((wf_iter *)0)->flt_col) / sizeof(uint16_t),
               "flt_col holds the direct scan terms");

/* The state inside a user's iterator (NULL stays NULL). */
static inline wf_iter *wf_iter_of(weft_iter *it)
{
    return it ? &it->_private.state : NULL;
}

static inline const wf_iter *wf_iter_of_const(const weft_iter *it)
{
    return it ? &it->_private.state : NULL;
}

/* The user-facing storage holding `it` (chunk callbacks receive it). */
static inline weft_iter *wf_iter_pub(wf_iter *it)
{
    return (weft_iter *)(void *)((char *)it - offsetof(weft_iter, _private.state));
}

/* Sets up an iteration of q (already updated). */
void wf_iter_init(wf_iter *it, weft_world *w, weft_query *q, const wf_query_env *env,
                  uint32_t last_run, uint32_t this_run, bool counts_run);
/* Open iterations. Every iteration that ends through weft_iter_next or
 * weft_iter_fini takes a slot of its query with a fresh serial; the end
 * releases the slot only if it still holds that serial. A copy of an
 * iterator (the user's weft_iter is plain storage) therefore ends nothing
 * twice: the second end finds the slot released or reused, and does
 * nothing. Chunk tasks (WF_ITER_TASK) take no slot. */

/* Takes a slot of it->query (after wf_iter_init); `holds_depth`: the
 * iteration holds the world's iter_depth until it ends. False when
 * WF_QUERY_MAX_OPEN iterations of the query are open. */
bool wf_iter_open(wf_iter *it, bool holds_depth);
/* Does `it` still hold its slot? */
static inline bool wf_iter_is_open(const wf_iter *it)
{
    const weft_query *q = it->query;
    return it->slot < WF_QUERY_MAX_OPEN && (q->open_mask >> it->slot & 1u) &&
           q->slot_serial[it->slot] == it->serial;
}
/* Releases it's slot. False when it did not hold it (nothing to undo);
 * *held_depth tells whether the iteration held the world's iter_depth. */
bool wf_iter_close(wf_iter *it, bool *held_depth);
/* Releases every slot of q (iterations a system left open); returns how
 * many of them held the world's iter_depth. */
uint32_t wf_query_close_all(weft_query *q);
/* Open iterations of q holding the world's iter_depth (the checker). */
uint32_t wf_query_depth_held(const weft_query *q);

/* Moves to the next chunk; false when there is none. */
bool wf_iter_step(wf_iter *it);
/* Restricts a freshly initialised iterator to rows [row, row_end) of
 * match index `match` (WF_ITER_TASK mode). */
void wf_iter_restrict(wf_iter *it, uint32_t match, uint32_t row, uint32_t row_end);
/* The current match (valid after a true wf_iter_step). */
static inline const wf_match *wf_iter_match(const wf_iter *it)
{
    return &it->query->matches[it->match - 1];
}
/* Column of table term `term` in the current table, or NULL. */
static inline wf_column *wf_iter_column(const wf_iter *it, int32_t term)
{
    int16_t col = it->cols[term];
    return col < 0 ? NULL : &it->table->cols[col];
}
/* Column of sparse term `term` (its set's dense values) and the slot of the
 * chunk's first row in *out_start, or NULL when the chunk lacks the term.
 * Valid for sparse field terms after a true wf_iter_step. */
wf_column *wf_iter_sparse_column(const wf_iter *it, int32_t term, uint32_t *out_start);

#endif

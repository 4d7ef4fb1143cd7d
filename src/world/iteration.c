/* src/world/iteration.c - world query iteration behind the public entry
 * points (see iteration.h).
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"
#include "world/iteration.h"

#include <string.h>

weft_status wf_world_query_refresh(weft_world *w, weft_query *q, const char *fn)
{
    wf_query_env env = wf_world_query_env(w);
    if (WF_UNLIKELY(!wf_query_update(q, &env))) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory matching archetypes",
                        fn);
    }
    return WEFT_OK;
}

/* Column of a term's values in the current chunk and the column row of the
 * chunk's first row (*out_start), or NULL when the chunk lacks the term.
 * Sparse terms: their set's dense values, consecutive for the chunk
 * (query/iter.h). */
static wf_column *iter_column(wf_iter *it, int32_t term, const wf_term *t,
                              uint32_t *out_start)
{
    if (t->sparse) {
        return wf_iter_sparse_column(it, term, out_start);
    }
    *out_start = it->start;
    return wf_iter_column(it, term);
}

void wf_iter_mark_chunk(wf_iter *it, wf_column *c, uint32_t start, bool whole)
{
    if (!c->ticks) {
        return;
    }
    uint32_t tick = it->this_run;
    uint32_t now = it->world->change_tick;
    if (it->mode != WF_ITER_TASK) { /* par_each's dispatcher journals tasks */
        wf_journal_add(it->world, c, whole ? 0u : start, whole ? WF_JOURNAL_ALL : it->count,
                       tick);
    }
    if (whole) {
        /* the whole table: O(1) bulk mark (storage/column.h); an identical
         * mark (the same chunk written twice) is left as it is */
        if (!c->bulk || c->bulk_tick != tick) {
            if (c->bulk && wf_tick_after(c->bulk_tick, tick, now)) {
                wf_column_materialize(c, it->table->count, now); /* keep the newer mark */
            }
            if (!c->bulk) {
                /* c->bulk implies bulk_any (table.h) */
                wf_atomic_store_relaxed_u32(&it->table->bulk_any, 1);
            }
            c->bulk = true;
            c->bulk_tick = tick;
        }
    } else {
        weft_ticks *tk = c->ticks + start;
        for (uint32_t r = 0; r < it->count; r++) {
            tk[r].changed = tick;
        }
        if (it->mode == WF_ITER_TASK) {
            return; /* the column summary is shared: par_each notes it after */
        }
    }
    if (c->latest_change != tick) {
        wf_column_note(c, tick, now);
    }
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
void *wf_iter_field_slow(weft_iter *pub, int32_t term, size_t size, bool write, bool mark,
                         const char *fn)
{
    wf_iter *it = wf_iter_of(pub);
    const wf_term *t = pub ? wf_iter_term(it, term, size, write, fn) : NULL;
    uint32_t start = 0;
    wf_column *c = t ? iter_column(it, term, t, &start) : NULL;
    if (!c) {
        return NULL;
    }
    if (mark) {
        wf_iter_mark_chunk(it, c, start, it->whole && !t->sparse);
    }
    return wf_column_ptr(c, start);
}

weft_status wf_world_query_iter(weft_world *w, weft_query *q, weft_iter *it, const char *fn)
{
    wf_world_clamp_ticks(w, false);
    weft_status st = wf_world_query_refresh(w, q, fn);
    if (st != WEFT_OK) {
        memset(it, 0, sizeof *it);
        return st;
    }
    wf_query_env env = wf_world_query_env(w);
    wf_iter_init(wf_iter_of(it), w, q, &env, q->last_run, w->change_tick, true);
    if (!wf_iter_open(wf_iter_of(it), true)) {
        memset(it, 0, sizeof *it);
        return wf_error(w, WEFT_ERR_CAPACITY,
                        "%s: %d iterations of this query are already open (end "
                        "them with weft_iter_fini)", fn, WF_QUERY_MAX_OPEN);
    }
    w->change_tick++;
    w->iter_depth++;
    return WEFT_OK;
}

weft_status wf_world_query_drop(weft_world *w, weft_query *q, const char *fn)
{
    if (!q) {
        return WEFT_OK;
    }
    if (wf_world_refuse_shared(w, fn)) {
        return WEFT_ERR_WRONG_PHASE;
    }
    if (q->iterating) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "%s: the query is being iterated", fn);
    }
    wf_world_query_destroy(w, q);
    return WEFT_OK;
}

/* src/world/iteration.h - world query iteration behind the public entry
 * points: start, step, end, field fetches, and dropping a query.
 * SPDX-License-Identifier: MIT
 *
 * Iteration brackets: wf_world_query_iter raises the world's iteration
 * depth (structural calls then defer) and takes this_run; the iteration's
 * end (wf_world_iter_next returning false, or wf_world_iter_fini) lowers
 * it and, at depth 0, applies the deferred calls (world/defer.c). The
 * weft_query_iter / weft_iter_* entry points and internal code that
 * iterates a world (sub-app sync and extraction) share these. Driver
 * thread only.
 */
#ifndef WF_ITERATION_H
#define WF_ITERATION_H

#include "query/iter.h"
#include "world/defer.h"
#include "world/world.h"

/* Brings q's match cache up to date (OUT_OF_MEMORY recorded naming fn). */
weft_status wf_world_query_refresh(weft_world *w, weft_query *q, const char *fn);

/* Starts a world iteration of q (a query of w) in *it: errors recorded
 * naming fn, *it zeroed on failure. */
weft_status wf_world_query_iter(weft_world *w, weft_query *q, weft_iter *it, const char *fn);

/* Destroys q (a query of w; NULL is fine): refuses a shared world and a
 * query being iterated (WRONG_PHASE naming fn). */
weft_status wf_world_query_drop(weft_world *w, weft_query *q, const char *fn);

/* Steps to the next chunk; false at the end (the iteration is then over). */
static inline bool wf_world_iter_next(weft_iter *pub)
{
    wf_iter *it = wf_iter_of(pub);
    if (!pub || it->state != WF_ITER_ACTIVE) {
        return false;
    }
    if (WF_UNLIKELY(it->mode != WF_ITER_TASK && !wf_iter_is_open(it))) {
        it->state = WF_ITER_DONE; /* a copy of an iterator that has ended */
        return false;
    }
    if (wf_iter_step(it)) {
        return true;
    }
    wf_world_iter_end(it, true);
    return false;
}

/* Ends an iteration before its end (its query's last run stays). */
static inline void wf_world_iter_fini(weft_iter *pub)
{
    wf_iter *it = wf_iter_of(pub);
    if (pub && it->state == WF_ITER_ACTIVE) {
        wf_world_iter_end(it, false);
    }
}

/* Rows of the current chunk (0 without one). */
static inline int32_t wf_world_iter_count(const weft_iter *pub)
{
    const wf_iter *it = wf_iter_of_const(pub);
    return pub && it->state == WF_ITER_ACTIVE && it->match ? (int32_t)it->count : 0;
}

/* Entities of the current chunk (NULL without one). */
static inline const weft_entity *wf_world_iter_entities(const weft_iter *pub)
{
    const wf_iter *it = wf_iter_of_const(pub);
    if (!pub || it->state != WF_ITER_ACTIVE || !it->match) {
        return NULL;
    }
    return it->table->entities + it->start;
}

/* True when `it` was set up by an iteration (running or ended) and so
 * names its world; a zeroed iterator (what a failed weft_query_iter or
 * weft_system_iter leaves) names none, and its errors go unrecorded. */
static inline bool wf_iter_has_world(const wf_iter *it)
{
    return it->state == WF_ITER_ACTIVE || it->state == WF_ITER_DONE;
}

/* Checks a field request; returns the term or NULL (error recorded).
 * Inline: the per-row entry points (weft_iter_get, _get_mut, ...) run it
 * for every call. */
static inline const wf_term *wf_iter_term(const wf_iter *it, int32_t term, size_t size,
                                          bool write, const char *fn)
{
    if (it->state != WF_ITER_ACTIVE || !it->match) {
        if (wf_iter_has_world(it)) {
            wf_error(it->world, WEFT_ERR_WRONG_PHASE, "%s: no current chunk", fn);
        }
        return NULL;
    }
    const weft_query *q = it->query;
    if (term < 0 || (uint32_t)term >= q->term_count) {
        wf_error(it->world, WEFT_ERR_INVALID_ARG, "%s: term %d out of range (query has %u)",
                 fn, term, q->term_count);
        return NULL;
    }
    const wf_term *t = &q->terms[term];
    if (t->access == WEFT_ACCESS_NONE) {
        wf_error(it->world, WEFT_ERR_INVALID_ARG, "%s: term %d ('%s') has no field", fn,
                 term, t->ti->name);
        return NULL;
    }
    if (size != t->size) {
        wf_error(it->world, WEFT_ERR_SIZE_MISMATCH,
                 "%s: term %d component '%s' has size %u but %zu bytes were asked", fn, term,
                 t->ti->name, t->size, size);
        return NULL;
    }
    if (write && t->access != WEFT_ACCESS_WRITE) {
        wf_error(it->world, WEFT_ERR_ACCESS_VIOLATION,
                 "%s: term %d ('%s') is declared read-only", fn, term, t->ti->name);
        return NULL;
    }
    return t;
}

/* Marks the chunk's rows of a written term's column changed at this_run:
 * rows [start, start + count) of column c; `whole` (the whole table) sets
 * the column's bulk mark instead. */
void wf_iter_mark_chunk(wf_iter *it, wf_column *c, uint32_t start, bool whole);

/* The checking paths of the field fetches: every misuse is reported here
 * (naming fn); a valid request returns what the fast path would have. */
void *wf_iter_field_slow(weft_iter *pub, int32_t term, size_t size, bool write, bool mark,
                         const char *fn);

/* Term `term`'s values (size bytes each) in the current chunk, read-only.
 * Fast path: an active iterator with a current chunk (fsize is 0
 * otherwise, query/iter.h), a table term with a field of exactly `size`
 * bytes; the field pointer was computed by the step. */
static inline const void *wf_world_iter_field(weft_iter *pub, int32_t term, size_t size)
{
    const wf_iter *it = wf_iter_of(pub);
    if (WF_LIKELY(pub != NULL && it->state == WF_ITER_ACTIVE &&
                  (uint32_t)term < WEFT_MAX_TERMS && it->fsize[term] == size && size != 0)) {
        return it->ptr[term];
    }
    return wf_iter_field_slow(pub, term, size, false, false, "weft_iter_field");
}

#endif

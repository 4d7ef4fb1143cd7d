/* src/query/iter.h - chunk iteration over a query's matched tables.
 * SPDX-License-Identifier: MIT
 *
 * A chunk is a run of consecutive rows of one table that all match: whole
 * tables when nothing needs checking per row, otherwise the maximal runs of
 * rows that pass (partial tables, Added/Changed filters). The iterator holds
 * indices, not pointers, into the query's match list, and lives in the
 * caller's weft_iter storage.
 */
#ifndef WF_ITER_H
#define WF_ITER_H

#include "query/query.h"

#define WF_ITER_ACTIVE 0x69746572u /* "iter" */
#define WF_ITER_DONE 0x646f6e65u   /* "done" */

typedef struct wf_iter {
    uint32_t state;           /* WF_ITER_ACTIVE, WF_ITER_DONE, or garbage */
    bool counts_run;          /* a real iteration: ends by advancing last_run */
    bool partial;             /* current table: check each row's archetype */
    bool filtered;            /* current table: check each row's ticks */
    weft_world *world;
    weft_query *query;
    wf_query_env env;
    uint32_t this_run;
    uint32_t last_run;
    uint32_t match;           /* index of the current match + 1 (0: none yet) */
    uint32_t row;             /* next row to scan in the current table */
    uint32_t start;           /* current chunk: first row */
    uint32_t count;           /* current chunk: rows */
} wf_iter;

_Static_assert(sizeof(wf_iter) <= sizeof(weft_iter), "weft_iter is too small");

/* Sets up an iteration of q (already updated). */
void wf_iter_init(wf_iter *it, weft_world *w, weft_query *q, const wf_query_env *env,
                  uint32_t last_run, uint32_t this_run, bool counts_run);
/* Moves to the next chunk; false when there is none. */
bool wf_iter_step(wf_iter *it);
/* The current match (valid after a true wf_iter_step). */
static inline const wf_match *wf_iter_match(const wf_iter *it)
{
    return &it->query->matches[it->match - 1];
}

#endif

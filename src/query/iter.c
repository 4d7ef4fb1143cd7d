/* src/query/iter.c - chunk stepping.
 * SPDX-License-Identifier: MIT
 *
 * Cost per matched table is what fragmentation pays: the step reads the
 * match entry (sequential), the table's first line (count, entities, cols)
 * and the column structs of the field terms, and prefetches those of the
 * tables ahead (iter_prefetch) so the misses overlap with the caller's
 * work on the current chunks.
 */
#include "query/iter.h"

#include <string.h>

#include "core/check.h"

void wf_iter_init(wf_iter *it, weft_world *w, weft_query *q, const wf_query_env *env,
                  uint32_t last_run, uint32_t this_run, bool counts_run)
{
    memset(it, 0, sizeof *it);
    it->state = WF_ITER_ACTIVE;
    it->world = w;
    it->query = q;
    it->entities = env->entities;
    it->tick = env->tick;
    it->last_run = last_run;
    it->this_run = this_run;
    it->counts_run = counts_run;
    uint32_t span = this_run - last_run;
    it->span = span > WEFT_MAX_CHANGE_AGE ? WEFT_MAX_CHANGE_AGE : span;
    for (uint32_t i = 0; i < q->term_count; i++) {
        const wf_term *t = &q->terms[i];
        if (t->access == WEFT_ACCESS_NONE) {
            continue;
        }
        if (!t->sparse) {
            it->field_terms[it->nfield++] = (uint8_t)i;
        } else if (t->size) {
            it->sparse_terms[it->nsparse++] = (uint8_t)i;
        }
    }
}

wf_column *wf_iter_sparse_column(const wf_iter *it, int32_t term, uint32_t *out_start)
{
    const wf_sparse_set *s = it->query->terms[term].ti->sparse;
    const uint8_t *p = it->ptr[term];
    if (!s || !p) {
        return NULL;
    }
    *out_start = (uint32_t)((size_t)(p - s->dense.data) / s->dense.size);
    return (wf_column *)(uintptr_t)&s->dense;
}

/* Cuts the chunk [start, start + count) to the longest prefix whose sparse
 * field values are consecutive dense slots (owners[d0 + k] is row k's
 * entity), or absent throughout, and points each sparse field at its
 * first value. The rows cut off are the next step's (it->row). */
static void iter_sparse_runs(wf_iter *it)
{
    const weft_query *q = it->query;
    const weft_entity *ents = it->table->entities + it->start;
    uint32_t len = it->count;
    for (uint32_t k = 0; k < it->nsparse; k++) {
        uint32_t i = it->sparse_terms[k];
        const wf_sparse_set *s = q->terms[i].ti->sparse;
        uint32_t d0 = s ? wf_sparse_find(s, (uint32_t)ents[0]) : WF_SPARSE_EMPTY;
        uint32_t n = 1;
        if (d0 == WF_SPARSE_EMPTY) {
            while (n < len && (!s || wf_sparse_find(s, (uint32_t)ents[n]) == WF_SPARSE_EMPTY)) {
                n++;
            }
            it->ptr[i] = NULL;
        } else {
            uint32_t most = s->count - d0;
            uint32_t lim = len < most ? len : most;
            while (n < lim && s->owners[d0 + n] == ents[n]) {
                n++;
            }
            it->ptr[i] = s->dense.data + (size_t)d0 * s->dense.size;
        }
        len = n < len ? n : len;
    }
    if (len < it->count) {
        it->count = len;
        it->row = it->start + len;
        it->whole = false;
    }
}

static uint32_t iter_bits(uint64_t m)
{
    uint32_t n = 0;
    for (; m; m &= m - 1) {
        n++;
    }
    return n;
}

bool wf_iter_open(wf_iter *it, bool holds_depth)
{
    weft_query *q = it->query;
    if (q->open_mask == UINT64_MAX) {
        return false;
    }
    uint32_t slot = 0;
    while (q->open_mask >> slot & 1u) {
        slot++;
    }
    uint64_t bit = (uint64_t)1 << slot;
    q->open_mask |= bit;
    if (holds_depth) {
        q->open_depth |= bit;
    }
    q->slot_serial[slot] = ++q->open_serial;
    q->iterating++;
    it->slot = slot;
    it->serial = q->open_serial;
    return true;
}

bool wf_iter_close(wf_iter *it, bool *held_depth)
{
    *held_depth = false;
    if (!wf_iter_is_open(it)) {
        return false;
    }
    weft_query *q = it->query;
    uint64_t bit = (uint64_t)1 << it->slot;
    *held_depth = (q->open_depth & bit) != 0;
    q->open_mask &= ~bit;
    q->open_depth &= ~bit;
    q->iterating--;
    return true;
}

uint32_t wf_query_close_all(weft_query *q)
{
    uint32_t held = iter_bits(q->open_depth);
    q->open_mask = 0;
    q->open_depth = 0;
    q->iterating = 0;
    return held;
}

uint32_t wf_query_depth_held(const weft_query *q)
{
    return iter_bits(q->open_depth);
}

/* Enables the field fast path (fsize/wsize stay 0 before the first chunk,
 * so a fetch there takes the checking path and reports it). */
static void iter_arm(wf_iter *it)
{
    const weft_query *q = it->query;
    for (uint32_t k = 0; k < it->nfield; k++) {
        const wf_term *t = &q->terms[it->field_terms[k]];
        it->fsize[it->field_terms[k]] = t->size;
        it->wsize[it->field_terms[k]] = t->access == WEFT_ACCESS_WRITE ? t->size : 0;
    }
    /* sparse fields: reads take the fast path; writes take the checking
     * path, which marks the dense slots (wsize stays 0) */
    for (uint32_t k = 0; k < it->nsparse; k++) {
        it->fsize[it->sparse_terms[k]] = q->terms[it->sparse_terms[k]].size;
    }
}

/* Sets the chunk [start, start + count) and its field pointers. */
static inline void iter_chunk(wf_iter *it, uint32_t start, uint32_t count, uint32_t n)
{
    it->start = start;
    it->count = count;
    it->whole = start == 0 && count == n;
    const wf_column *cols = it->table->cols;
    for (uint32_t k = 0; k < it->nfield; k++) {
        uint32_t i = it->field_terms[k];
        int16_t c = it->cols[i];
        it->ptr[i] = c < 0 ? NULL : cols[c].data + (size_t)start * cols[c].size;
    }
    if (it->nsparse) {
        iter_sparse_runs(it);
    }
}

/* Does table row `row` of the current match pass the per-row checks?
 * (the general path: partial tables, filters on OR or sparse terms) */
static bool iter_row_passes(const wf_iter *it, const wf_match *m, uint32_t row)
{
    weft_entity e = it->table->entities[row];
    if (it->partial) {
        uint32_t arch = it->entities->records[(uint32_t)e].arch;
        if (!wf_query_has_arch(it->query, arch)) {
            return false;
        }
    }
    return !it->filtered ||
           wf_query_row_passes(it->query, m, row, e, it->last_run, it->this_run, *it->tick);
}

/* Direct scan state of one filtered column, read at each step (a nested
 * write may have changed the mark since the table was entered). */
typedef struct iter_scan_col {
    const weft_ticks *ticks;
    uint32_t bulk_tick;
    uint32_t bulk_age; /* now - bulk_tick, or UINT32_MAX: no mark */
    uint32_t filter;
} iter_scan_col;

/* The row test of the direct scan: wf_tick_newer(t, last_run, this_run)
 * is exactly (this_run - t) < span with span = min(this_run - last_run,
 * MAX_CHANGE_AGE), and the effective changed tick is wf_column_ticks'. */
static inline bool iter_scan_pass(const iter_scan_col *s, uint32_t k, uint32_t row,
                                  uint32_t this_run, uint32_t span, uint32_t now)
{
    for (uint32_t j = 0; j < k; j++) {
        weft_ticks tk = s[j].ticks[row];
        if ((s[j].filter & WEFT_FILTER_ADDED) && this_run - tk.added >= span) {
            return false;
        }
        if (s[j].filter & WEFT_FILTER_CHANGED) {
            uint32_t ch = s[j].bulk_age < now - tk.changed ? s[j].bulk_tick : tk.changed;
            if (this_run - ch >= span) {
                return false;
            }
        }
    }
    return true;
}

/* Finds the next run of passing rows in [it->row, n) through the tick
 * arrays; k is a constant at the hot call site. */
static inline bool iter_scan_run(wf_iter *it, const iter_scan_col *s, uint32_t k, uint32_t n,
                                 uint32_t now)
{
    uint32_t this_run = it->this_run;
    uint32_t span = it->span;
    uint32_t r = it->row;
    while (r < n && !iter_scan_pass(s, k, r, this_run, span, now)) {
        r++;
    }
    if (r == n) {
        it->row = n;
        return false;
    }
    uint32_t end = r + 1;
    while (end < n && iter_scan_pass(s, k, end, this_run, span, now)) {
        end++;
    }
    it->row = end;
    iter_chunk(it, r, end - r, n);
    return true;
}

static bool iter_scan_fast(wf_iter *it, uint32_t n)
{
    uint32_t now = *it->tick;
    iter_scan_col s[WF_ITER_FAST_FILTERS];
    uint32_t k = it->nflt;
    for (uint32_t j = 0; j < k; j++) {
        const wf_column *c = &it->table->cols[it->flt_col[j]];
        s[j].ticks = c->ticks;
        s[j].bulk_tick = c->bulk_tick;
        s[j].bulk_age = c->bulk ? now - c->bulk_tick : UINT32_MAX;
        s[j].filter = it->flt_filter[j];
    }
    if (k == 1) {
        return iter_scan_run(it, s, 1, n, now);
    }
    return iter_scan_run(it, s, k, n, now);
}

/* Sets up the direct scan of a non-partial table for a simple filter set.
 * A Changed term whose column carries a bulk mark equal to its summary
 * (an upper bound of every tick in it) has bulk_tick as every row's
 * effective changed tick: it is decided once here. False when no row can
 * pass. */
static bool iter_scan_setup(wf_iter *it, const wf_match *m)
{
    const weft_query *q = it->query;
    const wf_table *t = m->table;
    uint32_t k = 0;
    for (uint32_t i = 0; i < q->term_count; i++) {
        uint32_t filter = q->terms[i].filter;
        if (!filter) {
            continue;
        }
        /* filter_simple: a table AND/WITH term, present in every matched table */
        const wf_column *c = &t->cols[m->cols[i]];
        if ((filter & WEFT_FILTER_CHANGED) && c->bulk && c->latest_change == c->bulk_tick) {
            if (it->this_run - c->bulk_tick >= it->span) {
                return false;
            }
            filter &= ~(uint32_t)WEFT_FILTER_CHANGED;
        }
        if (!filter) {
            continue;
        }
        if (k == WF_ITER_FAST_FILTERS) {
            it->nflt = UINT32_MAX; /* too many: the general path */
            return true;
        }
        it->flt_col[k] = (uint16_t)m->cols[i];
        it->flt_filter[k] = (uint16_t)filter;
        k++;
    }
    it->nflt = k;
    if (k == 0) {
        it->filtered = false; /* every row passes */
    }
    return true;
}

/* Prefetches what entering the tables ahead of match index `next` reads:
 * the table struct WF_ITER_AHEAD_TABLE entries ahead, the field columns
 * of the one WF_ITER_AHEAD_COLS ahead (its table line was asked for
 * earlier). */
#define WF_ITER_AHEAD_TABLE 4u
#define WF_ITER_AHEAD_COLS 2u
static inline void iter_prefetch(const wf_iter *it, const weft_query *q, uint32_t next)
{
    uint32_t mc = q->match_count;
    if (next + WF_ITER_AHEAD_TABLE < mc) {
        WF_PREFETCH(q->matches[next + WF_ITER_AHEAD_TABLE].table);
    }
    if (next + WF_ITER_AHEAD_COLS < mc) {
        const wf_match *m = &q->matches[next + WF_ITER_AHEAD_COLS];
        const wf_column *cols = m->table->cols;
        for (uint32_t k = 0; k < it->nfield; k++) {
            int16_t c = m->cols[it->field_terms[k]];
            if (c >= 0) {
                WF_PREFETCH(cols + c);
            }
        }
    }
}

/* The rows path: the current table needs per-row checks. */
static bool iter_rows(wf_iter *it, uint32_t n)
{
    if (!it->partial && it->nflt != UINT32_MAX) {
        return iter_scan_fast(it, n);
    }
    const wf_match *m = wf_iter_match(it);
    uint32_t r = it->row;
    while (r < n && !iter_row_passes(it, m, r)) {
        r++;
    }
    if (r < n) {
        uint32_t end = r + 1;
        while (end < n && iter_row_passes(it, m, end)) {
            end++;
        }
        it->row = end;
        iter_chunk(it, r, end - r, n);
        return true;
    }
    it->row = n;
    return false;
}

void wf_iter_restrict(wf_iter *it, uint32_t match, uint32_t row, uint32_t row_end)
{
    it->mode = WF_ITER_TASK;
    it->match = match; /* entered by the first step */
    it->row = row;
    it->row_end = row_end;
}

/* The step of a chunk task: the rows of one match, never a whole table
 * (so writes mark rows, not the column: other tasks share the column). */
static bool iter_step_task(wf_iter *it)
{
    const weft_query *q = it->query;
    if (!it->table) {
        const wf_match *m = &q->matches[it->match];
        it->match++;
        iter_arm(it);
        it->table = m->table;
        it->partial = m->partial;
        it->filtered = q->row_filters;
        it->nflt = UINT32_MAX;
        memcpy(it->cols, m->cols, sizeof it->cols);
        uint32_t n = m->table->count;
        if (it->row_end > n) {
            it->row_end = n;
        }
        if (it->filtered && (!wf_query_table_may_pass(q, m, it->last_run, *it->tick) ||
                             (!it->partial && q->filter_simple && !iter_scan_setup(it, m)))) {
            it->row = it->row_end;
        }
        if (!it->partial && !it->filtered) {
            if (it->row >= it->row_end) {
                return false;
            }
            uint32_t r = it->row;
            it->row = it->row_end;
            iter_chunk(it, r, it->row_end - r, UINT32_MAX);
            return true;
        }
    }
    if (it->row >= it->row_end) {
        return false;
    }
    if (!it->partial && !it->filtered) {
        /* what a sparse run cut off the previous chunk */
        uint32_t r = it->row;
        it->row = it->row_end;
        iter_chunk(it, r, it->row_end - r, UINT32_MAX);
        return true;
    }
    bool got = iter_rows(it, it->row_end);
    it->whole = false;
    return got;
}

bool wf_iter_step(wf_iter *it)
{
    const weft_query *q = it->query;
    if (it->mode == WF_ITER_TASK) {
        return iter_step_task(it);
    }
    if (it->match) {
        /* rows left in the current table (a checked table, or rows added
         * after a whole chunk, which deferral normally rules out) */
        uint32_t n = it->table->count;
        if (WF_UNLIKELY(it->row < n)) {
            if (!it->partial && !it->filtered) {
                uint32_t r = it->row;
                it->row = n;
                iter_chunk(it, r, n - r, n);
                return true;
            }
            if (iter_rows(it, n)) {
                return true;
            }
        }
    } else if (q->match_count) {
        iter_arm(it);
    }
    uint32_t mc = q->match_count;
    while (it->match < mc) {
        const wf_match *m = &q->matches[it->match++];
        iter_prefetch(it, q, it->match);
        wf_table *t = m->table;
        uint32_t n = t->count;
        it->table = t;
        it->row = 0;
        it->partial = m->partial;
        it->filtered = q->row_filters;
        memcpy(it->cols, m->cols, sizeof it->cols);
        if (n == 0) {
            continue;
        }
        if (!it->partial && !it->filtered) {
            /* the common case: the whole table, one chunk */
            it->row = n;
            it->start = 0;
            it->count = n;
            it->whole = true;
            const wf_column *cols = t->cols;
            for (uint32_t k = 0; k < it->nfield; k++) {
                uint32_t i = it->field_terms[k];
                int16_t c = it->cols[i];
                it->ptr[i] = c < 0 ? NULL : cols[c].data;
            }
            if (it->nsparse) {
                iter_sparse_runs(it);
            }
            return true;
        }
        it->nflt = UINT32_MAX;
        if (it->filtered) {
            if (!wf_query_table_may_pass(q, m, it->last_run, *it->tick) ||
                (!it->partial && q->filter_simple && !iter_scan_setup(it, m))) {
                it->row = n; /* nothing here: move on */
                continue;
            }
        }
        if (it->filtered || it->partial) {
            if (iter_rows(it, n)) {
                return true;
            }
        } else {
            /* the scan setup found every row passing */
            it->row = n;
            iter_chunk(it, 0, n, n);
            return true;
        }
    }
    return false;
}

/* src/world/journal.h - the change journal behind fast delta snapshots.
 * SPDX-License-Identifier: MIT
 *
 * While a delta baseline is tracked (weft_snapshot_track), every write
 * that marks values changed without a structural change also records
 * where it wrote: {column, first row, row count, tick} (count
 * WF_JOURNAL_ALL: the whole column; tick: every row of the entry was marked
 * at it or later, unless the entry is "unsure"). The writes are get_mut (world and system), a written
 * query term (per chunk or the whole table), weft_iter_mark and
 * set_if_neq, field paths and scene fix-ups; chunk tasks of par_each
 * leave it to their dispatcher, which records their written columns
 * whole, unsure. A sure entry whose tick is at or after a delta's base
 * tick needs no look at the rows' ticks; the others are candidates: the
 * delta writer keeps a row only if its change tick is at or after the
 * base tick, so stale or repeated entries cost time, never correctness.
 *
 * What the journal does not see is structural: spawn, despawn, insert
 * (including a replacing insert), remove, flush, restore. Those only
 * stamp `struct_tick`; a delta whose base tick is not strictly after it
 * is written by the full scan instead (src/reflect/snapshot_write.c). So a
 * journal entry's (column, row) still names the same entity whenever the
 * journal is used: no row moved since the base.
 *
 * Writes may come from systems running in parallel on several threads;
 * appends take a spin lock (only while tracking: the untracked cost is
 * one predictable branch). Past WF_JOURNAL_MAX entries, or when growing
 * fails, the journal overflows: deltas fall back to the scan until the
 * next weft_snapshot_track.
 */
#ifndef WF_JOURNAL_H
#define WF_JOURNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/atomic.h"
#include "core/check.h"
#include "core/config.h"

struct wf_column;
struct weft_world;

#define WF_JOURNAL_ALL UINT32_MAX

typedef struct wf_jentry {
    const struct wf_column *col;
    uint32_t row;
    uint32_t count;           /* rows from `row`; WF_JOURNAL_ALL: whole column */
    uint32_t tick;            /* every row was marked changed at this tick or
                                 later (sure), or WF_JOURNAL_UNSURE: some
                                 rows were, check each row's tick */
    uint32_t sure;            /* 1: `tick` holds; 0: check the rows */
} wf_jentry;

typedef struct wf_journal {
    bool on;                  /* tracking */
    bool overflow;            /* entries were lost: deltas scan */
    bool structural;          /* a structural change happened while on */
    bool sorted;              /* entries sorted and disjoint (sort not needed) */
    uint32_t since;           /* change tick tracking started at */
    uint32_t struct_tick;     /* tick of the last structural change */
    wf_atomic_u32 lock;       /* guards items/count/cap/overflow appends */
    wf_jentry *items;
    uint32_t count, cap;
} wf_journal;

/* (Re)starts tracking at the world's change tick, dropping old entries. */
void wf_journal_start(struct weft_world *w);
/* Stops tracking and frees the entries. */
void wf_journal_stop(struct weft_world *w);
/* Appends an entry (thread-safe): rows marked changed at `tick` (sure),
 * or, sure false, rows some of which were. */
void wf_journal_add_slow(struct weft_world *w, const struct wf_column *c, uint32_t row,
                         uint32_t count, uint32_t tick, bool sure);
/* Sorts the entries by column then row and merges duplicates. Driver
 * thread, no system running. */
void wf_journal_sort(struct weft_world *w);
/* Can a delta since tick `since` (seen at `now`) be written from the
 * journal? Tracking since at or before it, no overflow, and no
 * structural change at or after it. */
bool wf_journal_covers(const struct weft_world *w, uint32_t since, uint32_t now);

#endif

/* src/world/journal.c - the change journal behind fast delta snapshots
 * (see journal.h).
 * SPDX-License-Identifier: MIT
 */
#include "world/journal.h"

#include <stdlib.h>

#include "storage/column.h"
#include "world/world.h"

static void journal_free(weft_world *w)
{
    wf_journal *j = &w->journal;
    if (j->items) {
        wf_free(&w->alloc, j->items, (size_t)j->cap * sizeof *j->items, _Alignof(wf_jentry));
    }
    j->items = NULL;
    j->count = 0;
    j->cap = 0;
}

void wf_journal_start(weft_world *w)
{
    wf_journal *j = &w->journal;
    j->count = 0;
    j->overflow = false;
    j->structural = false;
    j->sorted = true;
    j->since = w->change_tick;
    j->struct_tick = 0;
    wf_atomic_store_relaxed_u32(&j->lock, 0);
    j->on = true;
}

void wf_journal_stop(weft_world *w)
{
    journal_free(w);
    w->journal.on = false;
    w->journal.overflow = false;
    w->journal.structural = false;
}

static void journal_lock(wf_journal *j)
{
    for (;;) {
        uint32_t expected = 0;
        if (wf_atomic_cas_seq_cst_u32(&j->lock, &expected, 1)) {
            return;
        }
        while (wf_atomic_load_relaxed_u32(&j->lock)) {
            /* spin: appends are a few stores long */
        }
    }
}

static void journal_unlock(wf_journal *j)
{
    wf_atomic_store_release_u32(&j->lock, 0);
}

void wf_journal_add_slow(weft_world *w, const wf_column *c, uint32_t row, uint32_t count,
                         uint32_t tick, bool sure)
{
    wf_journal *j = &w->journal;
    journal_lock(j);
    if (!j->overflow) {
        wf_jentry *last = j->count ? &j->items[j->count - 1] : NULL;
        if (last && last->col == c && last->row == row && last->count == count &&
            last->sure >= (uint32_t)sure) {
            /* the same write again (a system marking its column every run):
             * the older tick is kept, which the rows' ticks are not before */
        } else if (j->count >= WF_JOURNAL_MAX) {
            j->overflow = true;
        } else {
            if (j->count == j->cap) {
                void *data = j->items;
                uint32_t cap = j->cap;
                if (!wf_grow(&w->alloc, &data, &cap, (uint64_t)j->count + 1, sizeof *j->items,
                             _Alignof(wf_jentry))) {
                    j->overflow = true;
                    journal_unlock(j);
                    return;
                }
                j->items = data;
                j->cap = cap;
                last = j->count ? &j->items[j->count - 1] : NULL; /* moved with it */
            }
            /* still sorted and disjoint when it comes after the last one
             * (a loop over rows in order): the delta writer's sort is free */
            if (last && j->sorted &&
                ((uintptr_t)last->col > (uintptr_t)c ||
                 (last->col == c &&
                  (last->count == WF_JOURNAL_ALL || (uint64_t)last->row + last->count >= row)))) {
                j->sorted = false;
            }
            j->items[j->count++] = (wf_jentry){c, row, count, sure ? tick : 0u,
                                               sure ? 1u : 0u};
        }
    }
    journal_unlock(j);
}

static int jentry_cmp(const void *a, const void *b)
{
    const wf_jentry *x = a;
    const wf_jentry *y = b;
    if (x->col != y->col) {
        return (uintptr_t)x->col < (uintptr_t)y->col ? -1 : 1;
    }
    if (x->row != y->row) {
        return x->row < y->row ? -1 : 1;
    }
    if (x->count != y->count) {
        return x->count < y->count ? -1 : 1;
    }
    if (x->sure != y->sure) {
        return x->sure < y->sure ? -1 : 1;
    }
    return x->tick < y->tick ? -1 : x->tick > y->tick;
}

void wf_journal_sort(weft_world *w)
{
    wf_journal *j = &w->journal;
    uint32_t now = w->change_tick;
    if (j->count < 2 || j->sorted) {
        return;
    }
    /* appends are often in order already (a loop over entities, a delta
     * written twice): then only the merge below runs */
    bool sorted = true;
    for (uint32_t i = 1; i < j->count && sorted; i++) {
        sorted = jentry_cmp(&j->items[i - 1], &j->items[i]) <= 0;
    }
    if (!sorted) {
        qsort(j->items, j->count, sizeof *j->items, jentry_cmp);
    }
    /* merge entries of one column that overlap or touch */
    uint32_t out = 0;
    for (uint32_t i = 0; i < j->count; i++) {
        wf_jentry e = j->items[i];
        if (out > 0) {
            wf_jentry *p = &j->items[out - 1];
            uint64_t pend = p->count == WF_JOURNAL_ALL ? UINT64_MAX
                                                       : (uint64_t)p->row + p->count;
            if (p->col == e.col && (uint64_t)e.row <= pend) {
                uint64_t eend = e.count == WF_JOURNAL_ALL ? UINT64_MAX
                                                          : (uint64_t)e.row + e.count;
                if (eend > pend) {
                    p->count = eend == UINT64_MAX || eend - p->row >= WF_JOURNAL_ALL
                                   ? WF_JOURNAL_ALL
                                   : (uint32_t)(eend - p->row);
                }
                /* sure only if both were, from the older of the two ticks */
                if (!e.sure) {
                    p->sure = 0;
                    p->tick = 0;
                } else if (p->sure && wf_tick_after(p->tick, e.tick, now)) {
                    p->tick = e.tick;
                }
                continue;
            }
        }
        j->items[out++] = e;
    }
    j->count = out;
    j->sorted = true;
}

bool wf_journal_covers(const weft_world *w, uint32_t since, uint32_t now)
{
    const wf_journal *j = &w->journal;
    if (!j->on || j->overflow || wf_tick_after(j->since, since, now)) {
        return false; /* not tracking since then */
    }
    /* a structural change at or after `since` moved rows */
    return !j->structural || wf_tick_after(since, j->struct_tick, now);
}

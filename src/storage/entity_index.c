/* src/storage/entity_index.c - record array growth, release, reservation.
 * SPDX-License-Identifier: MIT
 */
#include "storage/entity_index.h"

#include <string.h>

void wf_entities_init(wf_entity_index *ix)
{
    memset(ix, 0, sizeof *ix);
    wf_atomic_init_i64(&ix->cursor, 0);
}

void wf_entities_clear(wf_entity_index *ix)
{
    ix->count = 0;
    ix->free_len = 0;
    ix->retired = 0;
    ix->later_len = 0;
    ix->live = 0;
    wf_atomic_store_relaxed_i64(&ix->cursor, 0);
}

void wf_entities_fini(wf_entity_index *ix, wf_allocator *a)
{
    wf_free(a, ix->records, (size_t)ix->cap * sizeof *ix->records, _Alignof(wf_record));
    wf_free(a, ix->free_stack, (size_t)ix->free_cap * sizeof *ix->free_stack,
            _Alignof(uint32_t));
    wf_free(a, ix->later, (size_t)ix->later_cap * sizeof *ix->later, _Alignof(uint32_t));
    ix->later = NULL;
    ix->later_len = ix->later_cap = 0;
    ix->records = NULL;
    ix->free_stack = NULL;
    ix->cap = 0;
    ix->free_cap = 0;
}

bool wf_entities_reserve(wf_entity_index *ix, wf_allocator *a, uint32_t extra)
{
    if (extra > WF_MAX_ENTITIES - ix->count) {
        return false;
    }
    uint32_t need = ix->count + extra;
    if (need <= ix->cap) {
        return true;
    }
    /* max(need, 2 * cap): a bulk reservation gets exactly what it asks. */
    uint32_t cap = wf_grow_cap(ix->cap, need, 64, WF_MAX_ENTITIES, sizeof(wf_record));
    if (cap == 0) {
        return false;
    }
    wf_record *records = wf_realloc(a, ix->records, (size_t)ix->cap * sizeof *records,
                                    (size_t)cap * sizeof *records, _Alignof(wf_record));
    if (!records) {
        return false;
    }
    ix->records = records;
    ix->cap = cap;
    return true;
}

void wf_entities_pending(const wf_entity_index *ix, uint32_t *out_free,
                         uint32_t *out_fresh)
{
    /* relaxed: driver only, while no reservation runs (file comment) */
    int64_t c = wf_atomic_load_relaxed_i64(&ix->cursor);
    int64_t lo = c > 0 ? c : 0;
    *out_free = (uint32_t)((int64_t)ix->free_len - lo);
    *out_fresh = c < 0 ? (uint32_t)(-c) : 0;
}

/* Appends idx to a growable index list; false (nothing changed) on OOM. */
static bool entities_push(uint32_t **list, uint32_t *len, uint32_t *cap, wf_allocator *a,
                          uint32_t idx)
{
    if (*len == *cap && !wf_grow_ex(a, (void **)list, cap, (uint64_t)*len + 1, 64,
                                    UINT32_MAX, sizeof **list, _Alignof(uint32_t))) {
        return false;
    }
    (*list)[(*len)++] = idx;
    return true;
}

void wf_entities_release_push(wf_entity_index *ix, wf_allocator *a, uint32_t idx)
{
    /* relaxed: driver only, while no reservation runs (file comment) */
    int64_t cursor = wf_atomic_load_relaxed_i64(&ix->cursor);
    if (cursor != (int64_t)ix->free_len) {
        /* reservations point at the top of the stack: keep it still */
        if (!entities_push(&ix->later, &ix->later_len, &ix->later_cap, a, idx)) {
            ix->retired++; /* benign: the index is simply not reused */
        }
        return;
    }
    if (!entities_push(&ix->free_stack, &ix->free_len, &ix->free_cap, a, idx)) {
        ix->retired++; /* benign */
        return;
    }
    /* relaxed: driver only, outside reservation windows (file comment) */
    wf_atomic_store_relaxed_i64(&ix->cursor, (int64_t)ix->free_len);
}

void wf_entities_release_later(wf_entity_index *ix, wf_allocator *a)
{
    for (uint32_t i = 0; i < ix->later_len; i++) {
        if (!entities_push(&ix->free_stack, &ix->free_len, &ix->free_cap, a,
                           ix->later[i])) {
            ix->retired++; /* benign */
        }
    }
    ix->later_len = 0;
    /* relaxed: driver only, outside reservation windows (file comment) */
    wf_atomic_store_relaxed_i64(&ix->cursor, (int64_t)ix->free_len);
}

weft_entity wf_entities_reserve_id(wf_entity_index *ix)
{
    /* relaxed: the counter only hands out distinct slots; the arrays read
     * below are not written while reservations may run (file comment). */
    int64_t n = wf_atomic_fetch_sub_relaxed_i64(&ix->cursor, 1);
    if (n > 0) {
        uint32_t idx = ix->free_stack[n - 1];
        return wf_make_entity(idx, ix->records[idx].gen);
    }
    int64_t fresh = (int64_t)ix->count - n;
    if (fresh >= (int64_t)WF_MAX_ENTITIES) {
        /* exhausted: give the slot back so flush never sees it */
        /* relaxed: as the fetch_sub above; pairs with nothing */
        wf_atomic_fetch_add_relaxed_i64(&ix->cursor, 1);
        return 0;
    }
    return wf_make_entity((uint32_t)fresh, WF_FIRST_GENERATION);
}

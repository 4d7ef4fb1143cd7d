/* src/storage/sparse_set.h - paged sparse set for non-fragmenting components.
 * SPDX-License-Identifier: MIT
 *
 * One set per sparse component. `pages[i >> PAGE_BITS][i & PAGE_MASK]`
 * holds the dense slot of entity index i, or WF_SPARSE_EMPTY; pages are
 * allocated on first use, so memory follows the highest index that ever
 * held the component in 16 KiB steps, not the number of entities. The dense
 * side is an owner array plus a column (values and ticks), kept packed by
 * swap-remove. INV-8: pages[idx(e)] == d  <=>  owners[d] == e.
 * Keys are entity indices; the entity layer checks generations first.
 * Driver thread only.
 */
#ifndef WF_SPARSE_SET_H
#define WF_SPARSE_SET_H

#include "core/config.h"
#include "storage/column.h"

#define WF_SPARSE_EMPTY 0xFFFFFFFFu

struct wf_sparse_set {
    uint32_t **pages;    /* [page_count] or NULL pages */
    uint32_t page_count;
    weft_entity *owners; /* [owner_cap] entity of each dense slot */
    uint32_t owner_cap;  /* slots `owners` holds, >= cap */
    wf_column dense;     /* values and ticks, [cap] */
    uint32_t count;
    uint32_t cap;
};

wf_sparse_set *wf_sparse_create(wf_allocator *a, const wf_type_info *ti);
/* Destroys the values and frees everything. */
void wf_sparse_destroy(wf_sparse_set *s, wf_allocator *a);
/* Destroys every value and leaves the set empty; pages and blocks stay. */
void wf_sparse_clear(wf_sparse_set *s);

/* Dense slot of entity index idx, or WF_SPARSE_EMPTY. */
static inline uint32_t wf_sparse_find(const wf_sparse_set *s, uint32_t idx)
{
    uint32_t page = idx >> WF_SPARSE_PAGE_BITS;
    if (page >= s->page_count || !s->pages[page]) {
        return WF_SPARSE_EMPTY;
    }
    return s->pages[page][idx & (WF_SPARSE_PAGE_SIZE - 1)];
}
/* Slow halves of the two reservations below. */
bool wf_sparse_grow_pages(wf_sparse_set *s, wf_allocator *a, uint32_t idx);
bool wf_sparse_grow_dense(wf_sparse_set *s, wf_allocator *a, uint32_t extra);

/* Makes sure the page holding entity index idx exists. False on OOM (the
 * set is unchanged but for an unused page table growth). */
static inline bool wf_sparse_reserve_page(wf_sparse_set *s, wf_allocator *a, uint32_t idx)
{
    uint32_t page = idx >> WF_SPARSE_PAGE_BITS;
    if (page < s->page_count && s->pages[page]) {
        return true;
    }
    return wf_sparse_grow_pages(s, a, idx);
}
/* Makes room for `extra` more dense slots. False (unchanged) on OOM. */
static inline bool wf_sparse_reserve_dense(wf_sparse_set *s, wf_allocator *a,
                                           uint32_t extra)
{
    return s->count + extra <= s->cap || wf_sparse_grow_dense(s, a, extra);
}
/* Adds e (absent, space reserved) with a value from src (NULL: default);
 * returns its dense slot. */
static inline uint32_t wf_sparse_insert(wf_sparse_set *s, weft_entity e, const void *src,
                                        uint32_t tick)
{
    uint32_t idx = (uint32_t)e;
    uint32_t d = s->count++;
    s->owners[d] = e;
    s->pages[idx >> WF_SPARSE_PAGE_BITS][idx & (WF_SPARSE_PAGE_SIZE - 1)] = d;
    wf_column_construct(&s->dense, d, src, tick);
    return d;
}
/* Removes entity index idx (present), destroying its value. */
void wf_sparse_remove(wf_sparse_set *s, uint32_t idx);

#endif

/* src/storage/sparse_set.c - sparse set pages, dense growth, swap-remove.
 * SPDX-License-Identifier: MIT
 */
#include "storage/sparse_set.h"

#include <string.h>

wf_sparse_set *wf_sparse_create(wf_allocator *a, const wf_type_info *ti)
{
    wf_sparse_set *s = wf_calloc(a, sizeof *s, _Alignof(wf_sparse_set));
    if (s) {
        wf_column_init(&s->dense, ti);
    }
    return s;
}

void wf_sparse_destroy(wf_sparse_set *s, wf_allocator *a)
{
    if (!s) {
        return;
    }
    wf_column_fini(&s->dense, a, s->count);
    for (uint32_t p = 0; p < s->page_count; p++) {
        wf_free(a, s->pages[p], WF_SPARSE_PAGE_SIZE * sizeof(uint32_t), _Alignof(uint32_t));
    }
    wf_free(a, s->pages, (size_t)s->page_count * sizeof *s->pages, _Alignof(uint32_t *));
    wf_free(a, s->owners, (size_t)s->owner_cap * sizeof *s->owners, _Alignof(weft_entity));
    wf_free(a, s, sizeof *s, _Alignof(wf_sparse_set));
}

void wf_sparse_clear(wf_sparse_set *s)
{
    if (!s) {
        return;
    }
    for (uint32_t d = 0; d < s->count; d++) {
        uint32_t idx = (uint32_t)s->owners[d];
        s->pages[idx >> WF_SPARSE_PAGE_BITS][idx & (WF_SPARSE_PAGE_SIZE - 1)] = WF_SPARSE_EMPTY;
    }
    wf_column_clear(&s->dense, s->count);
    s->count = 0;
}

bool wf_sparse_grow_pages(wf_sparse_set *s, wf_allocator *a, uint32_t idx)
{
    uint32_t page = idx >> WF_SPARSE_PAGE_BITS;
    if (page >= s->page_count) {
        uint32_t old = s->page_count;
        if (!wf_grow_ex(a, (void **)&s->pages, &s->page_count, (uint64_t)page + 1, 4,
                        UINT32_MAX, sizeof *s->pages, _Alignof(uint32_t *))) {
            return false;
        }
        memset(s->pages + old, 0, (size_t)(s->page_count - old) * sizeof *s->pages);
    }
    if (!s->pages[page]) {
        uint32_t *p = wf_alloc(a, WF_SPARSE_PAGE_SIZE * sizeof(uint32_t), _Alignof(uint32_t));
        if (!p) {
            return false;
        }
        memset(p, 0xFF, WF_SPARSE_PAGE_SIZE * sizeof(uint32_t));
        s->pages[page] = p;
    }
    return true;
}

bool wf_sparse_grow_dense(wf_sparse_set *s, wf_allocator *a, uint32_t extra)
{
    uint64_t need = (uint64_t)s->count + extra;
    if (need > s->cap) {
        size_t row = wf_column_row_bytes(s->dense.ti);
        uint32_t cap = wf_grow_cap(s->cap, need, 8, WF_MAX_ENTITIES,
                                   row > sizeof(weft_entity) ? row : sizeof(weft_entity));
        if (cap == 0) {
            return false;
        }
        /* as wf_table_reserve: bytewise growth first, the value block (which
         * may move through a hook) last, so a failure has moved nothing */
        if (s->owner_cap < cap) {
            weft_entity *owners =
                wf_realloc(a, s->owners, (size_t)s->owner_cap * sizeof *owners,
                           (size_t)cap * sizeof *owners, _Alignof(weft_entity));
            if (!owners) {
                return false;
            }
            s->owners = owners;
            s->owner_cap = cap;
        }
        if (!wf_column_grow(&s->dense, a, s->count, cap)) {
            return false;
        }
        s->cap = cap;
    }
    return true;
}

void wf_sparse_remove(wf_sparse_set *s, uint32_t idx)
{
    uint32_t *slot = &s->pages[idx >> WF_SPARSE_PAGE_BITS][idx & (WF_SPARSE_PAGE_SIZE - 1)];
    uint32_t d = *slot;
    wf_column *c = &s->dense;
    if (c->data) {
        wf_type_destroy(c->ti, wf_column_ptr(c, d), 1);
    }
    *slot = WF_SPARSE_EMPTY;
    uint32_t last = --s->count;
    if (d != last) {
        wf_column_copy_row(c, d, c, last);
        weft_entity moved = s->owners[last];
        s->owners[d] = moved;
        uint32_t mi = (uint32_t)moved;
        s->pages[mi >> WF_SPARSE_PAGE_BITS][mi & (WF_SPARSE_PAGE_SIZE - 1)] = d;
    }
}

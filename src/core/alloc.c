/* src/core/alloc.c - allocator hook dispatch and live-byte accounting.
 * SPDX-License-Identifier: MIT
 *
 * The only file in src/ that calls the C library's allocator. The default
 * hook uses malloc for alignments malloc already guarantees (max_align_t)
 * and aligned_alloc, with the size rounded up to a multiple of the
 * alignment as it requires, only above that. Blocks of the default hook
 * grow with realloc (wf_realloc), which lets the C library extend a block
 * in place or remap a large one instead of copying it and touching fresh
 * pages; user hooks have no realloc, so their blocks grow by allocate,
 * copy, free.
 */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise and MADV_HUGEPAGE */
#endif

#include "core/alloc.h"

#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

/* Large blocks ask the kernel for transparent huge pages, so that their
 * first touch costs one fault per 2 MiB instead of one per 4 KiB. The
 * advice covers the whole pages of the block: advising only its aligned
 * middle would split the mapping, and realloc could no longer remap it. */
static void alloc_advise(void *p, size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    enum { PAGE = 4096u, HUGE = 2u << 20 };
    if (p == NULL || size < 2u * HUGE) {
        return;
    }
    uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + size + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
    (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* a hint: failure is benign */
#else
    (void)p;
    (void)size;
#endif
}

static void *alloc_default(size_t size, size_t align, void *user)
{
    (void)user;
    if (align <= _Alignof(max_align_t)) {
        void *p = malloc(size);
        alloc_advise(p, size);
        return p;
    }
    if (align < sizeof(void *)) {
        align = sizeof(void *);
    }
    if (size > SIZE_MAX - (align - 1)) {
        return NULL; /* the rounding below would wrap to a tiny block */
    }
    size_t rounded = (size + align - 1) & ~(align - 1);
    return aligned_alloc(align, rounded);
}

static void free_default(void *ptr, size_t size, size_t align, void *user)
{
    (void)size;
    (void)align;
    (void)user;
    free(ptr);
}

void wf_allocator_init(wf_allocator *a, const weft_allocator *hook)
{
    if (hook && hook->alloc && hook->free) {
        a->hook = *hook;
    } else {
        a->hook.alloc = alloc_default;
        a->hook.free = free_default;
        a->hook.user = NULL;
    }
    wf_atomic_init_i64(&a->live_bytes, 0);
}

void *wf_alloc(wf_allocator *a, size_t size, size_t align)
{
    if (size > WF_ALLOC_MAX) {
        return NULL;
    }
    void *p = a->hook.alloc(size, align, a->hook.user);
    if (p) {
        /* relaxed: a statistic, pairs with nothing (alloc.h) */
        wf_atomic_fetch_add_relaxed_i64(&a->live_bytes, (int64_t)size);
    }
    return p;
}

void *wf_calloc(wf_allocator *a, size_t size, size_t align)
{
    void *p = wf_alloc(a, size, align);
    if (p) {
        memset(p, 0, size);
    }
    return p;
}

uint32_t wf_grow_cap(uint32_t cap, uint64_t need, uint32_t first, uint32_t limit,
                     size_t elem)
{
    if (need <= cap) {
        return cap;
    }
    uint64_t max = limit;
    if (elem > 0 && WF_ALLOC_MAX / elem < max) {
        max = WF_ALLOC_MAX / elem;
    }
    if (need > max) {
        return 0;
    }
    /* 64-bit arithmetic: 2 * cap cannot wrap */
    uint64_t n = cap ? (uint64_t)cap * 2u : first;
    if (n < need) {
        n = need;
    }
    if (n > max) {
        n = max;
    }
    return (uint32_t)n;
}

uint32_t wf_grow_cap_pow2(uint32_t cap, uint64_t need, uint32_t first, size_t elem)
{
    if (need <= cap) {
        return cap;
    }
    uint64_t max = UINT32_MAX;
    if (elem > 0 && WF_ALLOC_MAX / elem < max) {
        max = WF_ALLOC_MAX / elem;
    }
    if (need > max) {
        return 0;
    }
    uint64_t n = cap ? cap : (first ? first : 1u);
    while (n < need) {
        n *= 2u; /* need < 2^32, so n stays below 2^33 */
    }
    return n > max ? 0 : (uint32_t)n;
}

bool wf_grow_ex(wf_allocator *a, void **data, uint32_t *cap, uint64_t need, uint32_t first,
                uint32_t limit, size_t elem, size_t align)
{
    if (need <= *cap) {
        return true;
    }
    uint32_t ncap = wf_grow_cap(*cap, need, first, limit, elem);
    if (ncap == 0) {
        return false;
    }
    void *nd = wf_realloc(a, *data, (size_t)*cap * elem, (size_t)ncap * elem, align);
    if (nd == NULL) {
        return false;
    }
    *data = nd;
    *cap = ncap;
    return true;
}

/* realloc keeps only the alignment malloc guarantees, and only blocks of
 * the default hook came from the C library. */
static bool alloc_can_realloc(const wf_allocator *a, size_t align)
{
    return a->hook.alloc == alloc_default && align <= _Alignof(max_align_t);
}

void *wf_realloc(wf_allocator *a, void *ptr, size_t old_size, size_t new_size, size_t align)
{
    if (ptr == NULL) {
        return wf_alloc(a, new_size, align);
    }
    if (new_size > WF_ALLOC_MAX) {
        return NULL;
    }
    if (alloc_can_realloc(a, align)) {
        void *p = realloc(ptr, new_size);
        alloc_advise(p, new_size);
        if (p) {
            /* relaxed: a statistic, pairs with nothing (alloc.h) */
            wf_atomic_fetch_add_relaxed_i64(&a->live_bytes,
                                            (int64_t)new_size - (int64_t)old_size);
        }
        return p;
    }
    void *p = wf_alloc(a, new_size, align);
    if (p) {
        memcpy(p, ptr, old_size < new_size ? old_size : new_size);
        wf_free(a, ptr, old_size, align);
    }
    return p;
}

void wf_free(wf_allocator *a, void *ptr, size_t size, size_t align)
{
    if (!ptr) {
        return;
    }
    /* relaxed: a statistic, pairs with nothing (alloc.h) */
    wf_atomic_fetch_sub_relaxed_i64(&a->live_bytes, (int64_t)size);
    a->hook.free(ptr, size, align, a->hook.user);
}

char *wf_strdup(wf_allocator *a, const char *s, size_t *out_len)
{
    size_t len = strlen(s);
    char *copy = wf_alloc(a, len + 1, 1);
    if (copy) {
        memcpy(copy, s, len + 1);
        *out_len = len;
    }
    return copy;
}

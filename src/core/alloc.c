/* src/core/alloc.c - allocator hook dispatch and live-byte accounting.
 * SPDX-License-Identifier: MIT
 *
 * The only file in src/ that calls the C library's allocator. The default
 * hook maps blocks of 1 MiB and more itself (Linux; see alloc_mapped),
 * uses malloc for alignments malloc already guarantees (max_align_t) and
 * aligned_alloc, with the size rounded up to a multiple of the alignment
 * as it requires, only above that. Blocks of the default hook grow in
 * place where they can (wf_realloc: mremap for mapped blocks, realloc for
 * malloc'd ones) instead of being copied onto fresh pages; user hooks have
 * no realloc, so their blocks grow by allocate, copy, free.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* mremap; madvise and MADV_HUGEPAGE */
#endif

#include "core/alloc.h"
#include "core/guard.h"

#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__linux__) && defined(MREMAP_MAYMOVE)
#define ALLOC_MAPS 1
#else
#define ALLOC_MAPS 0
#endif

enum { ALLOC_PAGE = 4096u, ALLOC_HUGE = 2u << 20, ALLOC_MAP_MIN = 1u << 20 };

#if ALLOC_MAPS
/* Large blocks ask the kernel for transparent huge pages, so that their
 * first touch costs one fault per 2 MiB instead of one per 4 KiB. The
 * advice covers the whole pages of the block: advising only its aligned
 * middle would split the mapping, and it could no longer be remapped. */
static void alloc_advise(void *p, size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p == NULL || size < 2u * ALLOC_HUGE) {
        return;
    }
    uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(ALLOC_PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + size + ALLOC_PAGE - 1) & ~(uintptr_t)(ALLOC_PAGE - 1);
    (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* a hint: failure is benign */
#else
    (void)p;
    (void)size;
#endif
}

/* Blocks of ALLOC_MAP_MIN bytes and more (alignment up to a page) are
 * anonymous mappings of their own: growing one remaps it (mremap), which
 * never copies and never touches the old pages again, and freeing one
 * gives its pages back. The C library does the same only below its
 * adaptive threshold, which rises once a large block was freed, after
 * which large blocks grow by copying. Whether a block is mapped follows
 * from its size and alignment alone, which every free and resize is told. */
static bool alloc_mapped(size_t size, size_t align)
{
    return ALLOC_MAPS && size >= ALLOC_MAP_MIN && align <= ALLOC_PAGE;
}

static size_t alloc_map_bytes(size_t size)
{
    return (size + ALLOC_PAGE - 1) & ~(size_t)(ALLOC_PAGE - 1); /* size <= WF_ALLOC_MAX */
}
#endif

static void *alloc_default(size_t size, size_t align, void *user)
{
    (void)user;
#if ALLOC_MAPS
    if (alloc_mapped(size, align)) {
        if (size > WF_ALLOC_MAX) {
            return NULL;
        }
        void *p = mmap(NULL, alloc_map_bytes(size), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            return NULL;
        }
        alloc_advise(p, size);
        return p;
    }
#endif
    if (align <= _Alignof(max_align_t)) {
        return malloc(size);
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
    (void)user;
#if ALLOC_MAPS
    if (alloc_mapped(size, align)) {
        (void)munmap(ptr, alloc_map_bytes(size));
        return;
    }
#else
    (void)size;
    (void)align;
#endif
    free(ptr);
}

/* Resize in place for blocks of the default hook: remap a mapped block,
 * realloc a malloc'd one. NULL (old block intact) when neither applies:
 * the block changes kind, or its alignment is beyond malloc's. */
static void *realloc_default(void *ptr, size_t old_size, size_t new_size, size_t align)
{
    if (new_size == 0) {
        return NULL; /* realloc(p, 0) may free p: take the copying path */
    }
#if ALLOC_MAPS
    bool was = alloc_mapped(old_size, align);
    bool will = alloc_mapped(new_size, align);
    if (was != will) {
        return NULL;
    }
    if (was) {
        void *p = mremap(ptr, alloc_map_bytes(old_size), alloc_map_bytes(new_size),
                         MREMAP_MAYMOVE);
        if (p == MAP_FAILED) {
            return NULL;
        }
        alloc_advise(p, new_size);
        return p;
    }
#else
    (void)old_size;
#endif
    if (align > _Alignof(max_align_t)) {
        return NULL;
    }
    return realloc(ptr, new_size);
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
    void *p;
    if (a->hook.alloc == alloc_default) {
        p = alloc_default(size, align, NULL);
    } else {
        WF_CALLBACK(a, p = a->hook.alloc(size, align, a->hook.user));
    }
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

void *wf_realloc(wf_allocator *a, void *ptr, size_t old_size, size_t new_size, size_t align)
{
    if (ptr == NULL) {
        return wf_alloc(a, new_size, align);
    }
    if (new_size > WF_ALLOC_MAX) {
        return NULL;
    }
    if (a->hook.alloc == alloc_default) {
        void *p = realloc_default(ptr, old_size, new_size, align);
        if (p) {
            /* relaxed: a statistic, pairs with nothing (alloc.h) */
            wf_atomic_fetch_add_relaxed_i64(&a->live_bytes,
                                            (int64_t)new_size - (int64_t)old_size);
            return p;
        }
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
    if (a->hook.free == free_default) {
        free_default(ptr, size, align, NULL);
    } else {
        WF_CALLBACK(a, a->hook.free(ptr, size, align, a->hook.user));
    }
}

char *wf_strdup(wf_allocator *a, const char *s, size_t *out_len)
{
    size_t len = strlen(s);
    char *copy = wf_alloc(a, len + 1, 1);
    if (copy) {
        memcpy(copy, s, len + 1);
        if (out_len) {
            *out_len = len;
        }
    }
    return copy;
}

void wf_strfree(wf_allocator *a, char *s)
{
    if (s) {
        wf_free(a, s, strlen(s) + 1, 1);
    }
}

/* src/core/alloc.h - the one allocation path of a world.
 * SPDX-License-Identifier: MIT
 *
 * Every byte a world owns is obtained with wf_alloc and returned with
 * wf_free, which forward to the user's hook (or to aligned malloc) and keep
 * a live-byte count. Callers always pass back the size and alignment they
 * allocated with, so hooks need no headers. Hooks have no realloc;
 * wf_realloc uses the C library's realloc for blocks of the default hook
 * and allocate-new, copy, free-old otherwise. Either way a failed growth
 * leaves the old block untouched (the basis of "out of memory leaves the
 * world unchanged").
 */
#ifndef WF_ALLOC_H
#define WF_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "core/atomic.h"
#include "weft.h"

typedef struct wf_allocator {
    weft_allocator hook; /* user hook, or the defaults below */
    wf_atomic_i64 live_bytes; /* bytes currently held; worker threads may
                                   allocate too (thread pool rings), so it is
                                   counted atomically (relaxed: a statistic,
                                   no ordering hangs on it) */
} wf_allocator;

/* Installs `hook` (both functions set) or the malloc defaults (both NULL). */
void wf_allocator_init(wf_allocator *a, const weft_allocator *hook);
/* size > 0, align a power of two. NULL when the hook fails. */
void *wf_alloc(wf_allocator *a, size_t size, size_t align);
/* Zero-filled wf_alloc. */
void *wf_calloc(wf_allocator *a, size_t size, size_t align);
/* Resizes a block of old_size bytes (allocated with `align`) to new_size
 * bytes, keeping the first min(old_size, new_size) bytes; ptr NULL is
 * wf_alloc. Returns the block (possibly moved), or NULL with the old block
 * unchanged and still owned by the caller. Values are moved bytewise:
 * only for bitwise-relocatable contents. */
void *wf_realloc(wf_allocator *a, void *ptr, size_t old_size, size_t new_size, size_t align);
/* ptr may be NULL (ignored); size/align as given to wf_alloc. */
void wf_free(wf_allocator *a, void *ptr, size_t size, size_t align);
/* Largest byte count of one allocation: C objects must stay below
 * PTRDIFF_MAX so that pointer differences inside them are defined. Larger
 * requests fail like an exhausted allocator (the hook is not called). */
#define WF_ALLOC_MAX ((size_t)PTRDIFF_MAX)

/* The one growth policy for arrays, with every overflow checked. Returns
 * the capacity an array of `elem`-byte elements that holds `cap` should
 * grow to so that it holds `need`: `first` when it is empty, otherwise
 * twice `cap`, and never less than `need`. The result is clamped to
 * `limit` elements (the largest count the caller's index type can hold)
 * and to WF_ALLOC_MAX bytes, so `result * elem` never wraps a size_t,
 * even a 32-bit one. Returns `cap` when need <= cap, and 0 when `need`
 * cannot be held: callers report that as out of memory. `need` is 64-bit
 * so that callers compute `count + 1` or `2 * used` without wrapping. */
uint32_t wf_grow_cap(uint32_t cap, uint64_t need, uint32_t first, uint32_t limit,
                     size_t elem);
/* Like wf_grow_cap for open-addressing tables, whose capacity must stay a
 * power of two: doubles from `first` (a power of two) until it holds
 * `need`. 0 when no power of two within the limits holds it. */
uint32_t wf_grow_cap_pow2(uint32_t cap, uint64_t need, uint32_t first, size_t elem);
/* Grows the array *data of *cap elements of `elem` bytes (allocated with
 * `align`) to hold at least `need` (capacity from wf_grow_cap with the
 * given `first` and `limit`) with wf_realloc: the old elements are kept,
 * the new ones are left unset. False on overflow or out of memory, with the array
 * unchanged. */
bool wf_grow_ex(wf_allocator *a, void **data, uint32_t *cap, uint64_t need, uint32_t first,
                uint32_t limit, size_t elem, size_t align);
/* wf_grow_ex starting at 8 elements, limited by the uint32_t capacity. */
static inline bool wf_grow(wf_allocator *a, void **data, uint32_t *cap, uint64_t need,
                           size_t elem, size_t align)
{
    return wf_grow_ex(a, data, cap, need, 8u, UINT32_MAX, elem, align);
}
/* Default alignment of a value type: the largest power of two dividing
 * its size, at most 16 (1 for size 0). */
static inline size_t wf_default_align(size_t size)
{
    size_t align = 1;
    while (align < 16 && size != 0 && size % (align * 2) == 0) {
        align *= 2;
    }
    return align;
}

/* Bytes currently held. */
static inline int64_t wf_alloc_live(const wf_allocator *a)
{
    /* relaxed: a statistic; pairs with nothing (see live_bytes) */
    return wf_atomic_load_relaxed_i64(&a->live_bytes);
}

/* Copy of a NUL-terminated string, or NULL; *out_len (when not NULL) gets
 * its length. Free with wf_strfree (or wf_free(len + 1, 1)). */
char *wf_strdup(wf_allocator *a, const char *s, size_t *out_len);
/* Frees a wf_strdup copy (NULL: nothing). */
void wf_strfree(wf_allocator *a, char *s);

#endif

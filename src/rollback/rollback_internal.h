/* src/rollback/rollback_internal.h - private declarations of the
 * weft_rollback library (include/weft_rollback.h; docs/rollback.md).
 * The library is built on weft.h only, as weft_transform is.
 * SPDX-License-Identifier: MIT */
#ifndef WEFT_ROLLBACK_INTERNAL_H
#define WEFT_ROLLBACK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "weft_rollback.h"

/* The allocator of a session or a diff: the user's hook when both its
 * functions are given, else malloc/free (alloc.c). */
typedef struct wrb_alloc {
    weft_allocator hook;
    bool user;
} wrb_alloc;

void wrb_alloc_init(wrb_alloc *a, const weft_allocator *hook);
void *wrb_malloc(const wrb_alloc *a, size_t size);
void *wrb_calloc(const wrb_alloc *a, size_t count, size_t size);
void wrb_free(const wrb_alloc *a, void *p, size_t size);
/* Grows *buf (of *cap bytes) to at least `need` bytes; contents are not
 * kept. False when memory runs out (the old buffer stays). */
bool wrb_reserve(const wrb_alloc *a, void **buf, size_t *cap, size_t need);

/* 64-bit FNV-1a over bytes, continuing from `h` (diff.c). */
uint64_t wrb_hash_bytes(uint64_t h, const void *p, size_t n);

/* The diff with a caller's allocator (diff.c): as weft_rollback_diff. */
weft_status wrb_diff(weft_world *w, const wrb_alloc *al, const void *a, size_t a_len,
                     const void *b, size_t b_len, weft_rollback_diff_entry *out, int32_t cap,
                     int32_t *out_count);

#endif

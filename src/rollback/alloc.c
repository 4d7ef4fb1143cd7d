/* src/rollback/alloc.c - the rollback library's one allocation path: the
 * user's allocator hook when given, else malloc/free.
 * SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "rollback_internal.h"

#define WRB_ALIGN 16

void wrb_alloc_init(wrb_alloc *a, const weft_allocator *hook)
{
    memset(a, 0, sizeof *a);
    if (hook && hook->alloc && hook->free) {
        a->hook = *hook;
        a->user = true;
    }
}

void *wrb_malloc(const wrb_alloc *a, size_t size)
{
    if (size == 0) {
        size = 1;
    }
    if (a->user) {
        return a->hook.alloc(size, WRB_ALIGN, a->hook.user);
    }
    return malloc(size);
}

void *wrb_calloc(const wrb_alloc *a, size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size) {
        return NULL;
    }
    size_t n = count * size;
    void *p = wrb_malloc(a, n);
    if (p) {
        memset(p, 0, n > 0 ? n : 1);
    }
    return p;
}

void wrb_free(const wrb_alloc *a, void *p, size_t size)
{
    if (!p) {
        return;
    }
    if (size == 0) {
        size = 1;
    }
    if (a->user) {
        a->hook.free(p, size, WRB_ALIGN, a->hook.user);
    } else {
        free(p);
    }
}

bool wrb_reserve(const wrb_alloc *a, void **buf, size_t *cap, size_t need)
{
    if (*buf && *cap >= need) {
        return true;
    }
    size_t n = *cap ? *cap : 4096;
    while (n < need) {
        n = n > SIZE_MAX / 2 ? need : n * 2;
    }
    void *p = wrb_malloc(a, n);
    if (!p) {
        return false;
    }
    wrb_free(a, *buf, *cap);
    *buf = p;
    *cap = n;
    return true;
}

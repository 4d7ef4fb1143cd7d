/* src/reflect/compress.c - zstd compression of snapshot payloads.
 * SPDX-License-Identifier: MIT
 *
 * The only file that includes zstd.h (libzstd, when built with WEFT_ZSTD).
 * zstd's working memory goes through the world's allocator hook, so
 * allocation failures reach it like any other: each block carries its size
 * in a 16-byte prefix, since zstd's free callback does not pass one. Built
 * without zstd, wf_zstd_available() is false and the callers report
 * UNSUPPORTED; wf_zstd_simulate_absent lets tests take that path in a
 * build that has zstd.
 */
#include "reflect/reflect.h"

#include <string.h>

#include "core/config.h"

#ifdef WEFT_HAVE_ZSTD
/* ZSTD_customMem and the *_advanced constructors are in zstd's
 * "experimental" section, unchanged since zstd 1.0 and exported by
 * Debian's libzstd.so.1; they are what routes zstd's memory through the
 * allocator hook. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>
#endif

static bool zstd_absent;

void wf_zstd_simulate_absent(bool absent)
{
    zstd_absent = absent;
}

bool wf_zstd_available(void)
{
#ifdef WEFT_HAVE_ZSTD
    return !zstd_absent;
#else
    return false;
#endif
}

#ifdef WEFT_HAVE_ZSTD

#define ZPREFIX 16u

static void *zalloc(void *opaque, size_t size)
{
    wf_allocator *a = opaque;
    if (size > SIZE_MAX - ZPREFIX) {
        return NULL;
    }
    uint8_t *p = wf_alloc(a, size + ZPREFIX, 16);
    if (!p) {
        return NULL;
    }
    memcpy(p, &size, sizeof size);
    return p + ZPREFIX;
}

static void zfree(void *opaque, void *address)
{
    if (!address) {
        return;
    }
    uint8_t *p = (uint8_t *)address - ZPREFIX;
    size_t size;
    memcpy(&size, p, sizeof size);
    wf_free((wf_allocator *)opaque, p, size + ZPREFIX, 16);
}

size_t wf_zstd_bound(size_t n)
{
    size_t b = ZSTD_compressBound(n);
    return ZSTD_isError(b) ? 0 : b;
}

weft_status wf_zstd_compress(weft_world *w, void *dst, size_t cap, const void *src, size_t n,
                             int level, size_t *out)
{
    ZSTD_customMem mem = {zalloc, zfree, &w->alloc};
    ZSTD_CCtx *cx = ZSTD_createCCtx_advanced(mem);
    if (!cx) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "snapshot: out of memory for zstd");
    }
    size_t r = ZSTD_compressCCtx(cx, dst, cap, src, n, level);
    ZSTD_freeCCtx(cx);
    if (ZSTD_isError(r)) {
        /* the buffer holds the bound, so only memory can be short */
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "snapshot: zstd failed: %s",
                        ZSTD_getErrorName(r));
    }
    *out = r;
    return WEFT_OK;
}

weft_status wf_zstd_check_size(weft_world *w, uint64_t n, const void *src, size_t m)
{
    unsigned long long want = ZSTD_getFrameContentSize(src, m);
    if (want != (unsigned long long)n) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "snapshot: the compressed payload does not announce the %llu bytes "
                        "the header records",
                        (unsigned long long)n);
    }
    /* every block has a 3-byte header and holds at most 128 KiB (RFC 8878,
     * Block_Maximum_Size): a frame of m bytes cannot hold more */
    if (n / ZSTD_BLOCKSIZE_MAX > m / 3 + 1) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "snapshot: %zu compressed bytes cannot hold the %llu bytes announced",
                        m, (unsigned long long)n);
    }
    return WEFT_OK;
}

/* Grows *buf (16-aligned, *cap bytes, `used` of them kept) to `want`. */
static bool inflate_grow(weft_world *w, uint8_t **buf, size_t *cap, size_t used, size_t want)
{
    uint8_t *nb = wf_alloc(&w->alloc, want, 16);
    if (!nb) {
        return false;
    }
    if (*buf) {
        memcpy(nb, *buf, used);
        wf_free(&w->alloc, *buf, *cap, 16);
    }
    *buf = nb;
    *cap = want;
    return true;
}

weft_status wf_zstd_inflate(weft_world *w, const void *src, size_t m, size_t n, uint8_t **out)
{
    *out = NULL;
    weft_status st = wf_zstd_check_size(w, n, src, m);
    if (st != WEFT_OK) {
        return st;
    }
    ZSTD_customMem mem = {zalloc, zfree, &w->alloc};
    ZSTD_DCtx *dx = ZSTD_createDCtx_advanced(mem);
    if (!dx) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "snapshot: out of memory for zstd");
    }
    uint8_t *buf = NULL;
    size_t cap = 0;
    ZSTD_inBuffer in = {src, m, 0};
    ZSTD_outBuffer ob = {NULL, 0, 0};
    size_t first = n < WF_SNAPSHOT_INFLATE_FIRST ? n : WF_SNAPSHOT_INFLATE_FIRST;
    if (!inflate_grow(w, &buf, &cap, 0, first ? first : 1)) {
        st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "snapshot: out of memory decompressing");
    }
    while (st == WEFT_OK) {
        ob.dst = buf;
        ob.size = cap;
        size_t r = ZSTD_decompressStream(dx, &ob, &in);
        if (ZSTD_isError(r)) {
            st = ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation
                     ? wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "snapshot: out of memory for zstd")
                     : wf_error(w, WEFT_ERR_BAD_FORMAT,
                                "snapshot: the compressed payload is corrupt (zstd: %s)",
                                ZSTD_getErrorName(r));
            break;
        }
        if (r == 0) { /* the frame is complete */
            if (ob.pos != n || in.pos != m) {
                st = wf_error(w, WEFT_ERR_BAD_FORMAT,
                              "snapshot: the compressed payload holds %zu bytes, the header "
                              "records %zu",
                              ob.pos, n);
            }
            break;
        }
        if (ob.pos < cap) {
            if (in.pos == m) { /* input exhausted, frame not complete */
                st = wf_error(w, WEFT_ERR_BAD_FORMAT,
                              "snapshot: the compressed payload is truncated");
            }
            continue;
        }
        if (cap >= n) { /* full, and the frame wants to say more */
            st = wf_error(w, WEFT_ERR_BAD_FORMAT,
                          "snapshot: the compressed payload holds more than the %zu bytes the "
                          "header records",
                          n);
            break;
        }
        size_t want = cap > n / 2 ? n : cap * 2;
        if (!inflate_grow(w, &buf, &cap, ob.pos, want)) {
            st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "snapshot: out of memory decompressing");
        }
    }
    ZSTD_freeDCtx(dx);
    if (st == WEFT_OK && cap != n) {
        /* a frame shorter than announced cannot end OK; cap == n here */
        st = wf_error(w, WEFT_ERR_INTERNAL, "snapshot: decompression buffer mismatch");
    }
    if (st != WEFT_OK) {
        if (buf) {
            wf_free(&w->alloc, buf, cap, 16);
        }
        return st;
    }
    *out = buf;
    return WEFT_OK;
}

#else /* !WEFT_HAVE_ZSTD: never called (wf_zstd_available() is false) */

size_t wf_zstd_bound(size_t n)
{
    (void)n;
    return 0;
}

weft_status wf_zstd_compress(weft_world *w, void *dst, size_t cap, const void *src, size_t n,
                             int level, size_t *out)
{
    (void)dst;
    (void)cap;
    (void)src;
    (void)n;
    (void)level;
    *out = 0;
    return wf_error(w, WEFT_ERR_UNSUPPORTED, "snapshot: weft was built without zstd");
}

weft_status wf_zstd_check_size(weft_world *w, uint64_t n, const void *src, size_t m)
{
    (void)n;
    (void)src;
    (void)m;
    return wf_error(w, WEFT_ERR_UNSUPPORTED, "snapshot: weft was built without zstd");
}

weft_status wf_zstd_inflate(weft_world *w, const void *src, size_t m, size_t n, uint8_t **out)
{
    (void)src;
    (void)m;
    (void)n;
    *out = NULL;
    return wf_error(w, WEFT_ERR_UNSUPPORTED, "snapshot: weft was built without zstd");
}

#endif

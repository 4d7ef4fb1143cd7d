// tests/fuzz/fuzz_common.h - what every fuzz target shares: a reader that
// turns the input bytes into numbers (reading past the end gives zeroes, so
// every input is a valid program), and a counting allocator hook.
//
// The allocator counts live bytes and blocks with atomics (hooks may run on
// worker threads) and can fail one chosen allocation: fz_alloc_fail_after(a,
// n) makes the n-th call from now return NULL, once. Requests above
// FZ_ALLOC_CAP bytes return NULL instead of reaching the system allocator,
// which under ASan would abort on absurd sizes (a component of 2^40 bytes
// must come back as OUT_OF_MEMORY, not as a crash of the fuzzer).
// SPDX-License-Identifier: MIT
#ifndef WEFT_FUZZ_COMMON_H
#define WEFT_FUZZ_COMMON_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft.h"

// ---- input reader ----

typedef struct fz_in {
    const uint8_t *p;
    size_t n;
} fz_in;

static inline bool fz_more(const fz_in *in)
{
    return in->n > 0;
}

static inline uint8_t fz_u8(fz_in *in)
{
    if (in->n == 0) {
        return 0;
    }
    in->n--;
    return *in->p++;
}

static inline uint16_t fz_u16(fz_in *in)
{
    uint16_t lo = fz_u8(in);
    return (uint16_t)(lo | (uint16_t)(fz_u8(in) << 8));
}

static inline uint32_t fz_u32(fz_in *in)
{
    uint32_t lo = fz_u16(in);
    return lo | ((uint32_t)fz_u16(in) << 16);
}

static inline uint64_t fz_u64(fz_in *in)
{
    uint64_t lo = fz_u32(in);
    return lo | ((uint64_t)fz_u32(in) << 32);
}

// A number in [0, n) from one byte (n <= 256); 0 when n == 0.
static inline uint32_t fz_below(fz_in *in, uint32_t n)
{
    return n == 0 ? 0 : (uint32_t)fz_u8(in) % n;
}

// True with probability about num/256.
static inline bool fz_chance(fz_in *in, uint32_t num)
{
    return fz_u8(in) < num;
}

static inline void fz_bytes(fz_in *in, void *dst, size_t n)
{
    uint8_t *d = dst;
    for (size_t i = 0; i < n; i++) {
        d[i] = fz_u8(in);
    }
}

// ---- failure reporting ----

// A broken promise of weft: print and abort, so libFuzzer (or the replay
// driver, or ctest) records a crash with this message.
#define FZ_FAIL(...)                                                   \
    do {                                                               \
        fprintf(stderr, "fuzz: %s:%d: ", __FILE__, __LINE__);          \
        fprintf(stderr, __VA_ARGS__);                                  \
        fprintf(stderr, "\n");                                         \
        abort();                                                       \
    } while (0)

// ---- counting allocator ----

#define FZ_ALLOC_CAP ((size_t)1 << 28)

typedef struct fz_alloc {
    atomic_llong live_bytes;
    atomic_llong live_blocks;
    atomic_llong calls;    // alloc calls so far
    atomic_llong fail_at;  // call number to fail (0: none)
    atomic_llong bad_free; // frees with a NULL pointer or an impossible size
} fz_alloc;

static void *fz_alloc_fn(size_t size, size_t align, void *user)
{
    fz_alloc *a = user;
    long long call = atomic_fetch_add(&a->calls, 1) + 1;
    long long fail = atomic_load(&a->fail_at);
    if (fail != 0 && call == fail) {
        atomic_store(&a->fail_at, 0);
        return NULL;
    }
    if (size > FZ_ALLOC_CAP || align == 0 || (align & (align - 1)) != 0) {
        return NULL;
    }
    void *p = NULL;
    size_t al = align < sizeof(void *) ? sizeof(void *) : align;
    if (posix_memalign(&p, al, size == 0 ? 1 : size) != 0) {
        return NULL;
    }
    atomic_fetch_add(&a->live_bytes, (long long)size);
    atomic_fetch_add(&a->live_blocks, 1);
    return p;
}

static void fz_free_fn(void *ptr, size_t size, size_t align, void *user)
{
    fz_alloc *a = user;
    (void)align;
    if (ptr == NULL || size > FZ_ALLOC_CAP) {
        atomic_fetch_add(&a->bad_free, 1);
        return;
    }
    atomic_fetch_sub(&a->live_bytes, (long long)size);
    atomic_fetch_sub(&a->live_blocks, 1);
    free(ptr);
}

static inline void fz_alloc_init(fz_alloc *a)
{
    atomic_init(&a->live_bytes, 0);
    atomic_init(&a->live_blocks, 0);
    atomic_init(&a->calls, 0);
    atomic_init(&a->fail_at, 0);
    atomic_init(&a->bad_free, 0);
}

static inline weft_allocator fz_alloc_hook(fz_alloc *a)
{
    weft_allocator h = {fz_alloc_fn, fz_free_fn, a};
    return h;
}

// Fails the n-th allocation call from now (n >= 1), once.
static inline void fz_alloc_fail_after(fz_alloc *a, long long n)
{
    atomic_store(&a->fail_at, atomic_load(&a->calls) + n);
}

static inline void fz_alloc_disarm(fz_alloc *a)
{
    atomic_store(&a->fail_at, 0);
}

// After weft_world_destroy: every byte and block handed out came back.
static inline void fz_alloc_expect_empty(fz_alloc *a)
{
    long long bytes = atomic_load(&a->live_bytes);
    long long blocks = atomic_load(&a->live_blocks);
    long long bad = atomic_load(&a->bad_free);
    if (bytes != 0 || blocks != 0 || bad != 0) {
        FZ_FAIL("world destroyed with %lld live bytes in %lld blocks, %lld bad frees",
                bytes, blocks, bad);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif // WEFT_FUZZ_COMMON_H

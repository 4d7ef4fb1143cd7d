/* src/core/atomic.h - C11 atomics with the memory order in the name.
 * SPDX-License-Identifier: MIT
 *
 * Every atomic access in src/ goes through these wrappers so that the order
 * is visible at the call site and can be grepped (mimalloc's atomic.h does
 * the same). Each wrapper
 * is a one-line forward to <stdatomic.h>; there is no hidden fence. Only the
 * combinations weft actually uses are defined: add one when a call site needs
 * it, and comment that call site with the operation it pairs with. The
 * wrappers are safe from any thread; what they order is the caller's
 * business, documented where they are used.
 */
#ifndef WF_ATOMIC_H
#define WF_ATOMIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef _Atomic(uint32_t) wf_atomic_u32;
typedef _Atomic(int64_t) wf_atomic_i64;
typedef _Atomic(void *) wf_atomic_ptr;

/* ---- initialization (no ordering: the object is not yet shared) ---- */

static inline void wf_atomic_init_u32(wf_atomic_u32 *a, uint32_t v) { atomic_init(a, v); }
static inline void wf_atomic_init_i64(wf_atomic_i64 *a, int64_t v) { atomic_init(a, v); }
static inline void wf_atomic_init_ptr(wf_atomic_ptr *a, void *v) { atomic_init(a, v); }

/* ---- u32 ---- */

static inline uint32_t wf_atomic_load_relaxed_u32(const wf_atomic_u32 *a)
{
    return atomic_load_explicit((wf_atomic_u32 *)(uintptr_t)a, memory_order_relaxed);
}
static inline uint32_t wf_atomic_load_acquire_u32(const wf_atomic_u32 *a)
{
    return atomic_load_explicit((wf_atomic_u32 *)(uintptr_t)a, memory_order_acquire);
}
static inline void wf_atomic_store_relaxed_u32(wf_atomic_u32 *a, uint32_t v)
{
    atomic_store_explicit(a, v, memory_order_relaxed);
}
static inline uint32_t wf_atomic_fetch_sub_acq_rel_u32(wf_atomic_u32 *a, uint32_t v)
{
    return atomic_fetch_sub_explicit(a, v, memory_order_acq_rel);
}
static inline uint32_t wf_atomic_fetch_add_acq_rel_u32(wf_atomic_u32 *a, uint32_t v)
{
    return atomic_fetch_add_explicit(a, v, memory_order_acq_rel);
}
static inline uint32_t wf_atomic_fetch_add_relaxed_u32(wf_atomic_u32 *a, uint32_t v)
{
    return atomic_fetch_add_explicit(a, v, memory_order_relaxed);
}
static inline void wf_atomic_store_release_u32(wf_atomic_u32 *a, uint32_t v)
{
    atomic_store_explicit(a, v, memory_order_release);
}
static inline uint32_t wf_atomic_fetch_add_seq_cst_u32(wf_atomic_u32 *a, uint32_t v)
{
    return atomic_fetch_add_explicit(a, v, memory_order_seq_cst);
}
static inline bool wf_atomic_cas_seq_cst_u32(wf_atomic_u32 *a, uint32_t *expected,
                                             uint32_t desired)
{
    return atomic_compare_exchange_strong_explicit(a, expected, desired,
                                                   memory_order_seq_cst,
                                                   memory_order_relaxed);
}

/* ---- i64 ---- */

static inline int64_t wf_atomic_load_relaxed_i64(const wf_atomic_i64 *a)
{
    return atomic_load_explicit((wf_atomic_i64 *)(uintptr_t)a, memory_order_relaxed);
}
static inline int64_t wf_atomic_load_acquire_i64(const wf_atomic_i64 *a)
{
    return atomic_load_explicit((wf_atomic_i64 *)(uintptr_t)a, memory_order_acquire);
}
static inline void wf_atomic_store_relaxed_i64(wf_atomic_i64 *a, int64_t v)
{
    atomic_store_explicit(a, v, memory_order_relaxed);
}
static inline void wf_atomic_store_release_i64(wf_atomic_i64 *a, int64_t v)
{
    atomic_store_explicit(a, v, memory_order_release);
}
static inline int64_t wf_atomic_fetch_add_relaxed_i64(wf_atomic_i64 *a, int64_t v)
{
    return atomic_fetch_add_explicit(a, v, memory_order_relaxed);
}
static inline int64_t wf_atomic_fetch_sub_relaxed_i64(wf_atomic_i64 *a, int64_t v)
{
    return atomic_fetch_sub_explicit(a, v, memory_order_relaxed);
}
static inline int64_t wf_atomic_fetch_sub_release_i64(wf_atomic_i64 *a, int64_t v)
{
    return atomic_fetch_sub_explicit(a, v, memory_order_release);
}
/* Strong CAS; on failure *expected receives the current value (relaxed). */
static inline bool wf_atomic_cas_seq_cst_i64(wf_atomic_i64 *a, int64_t *expected,
                                             int64_t desired)
{
    return atomic_compare_exchange_strong_explicit(a, expected, desired,
                                                   memory_order_seq_cst,
                                                   memory_order_relaxed);
}

/* ---- pointers ---- */

static inline void *wf_atomic_load_relaxed_ptr(const wf_atomic_ptr *a)
{
    return atomic_load_explicit((wf_atomic_ptr *)(uintptr_t)a, memory_order_relaxed);
}
/* C11 consume is promoted to acquire by every compiler weft targets; we
 * spell it acquire rather than pretend. */
static inline void *wf_atomic_load_acquire_ptr(const wf_atomic_ptr *a)
{
    return atomic_load_explicit((wf_atomic_ptr *)(uintptr_t)a, memory_order_acquire);
}
static inline void wf_atomic_store_relaxed_ptr(wf_atomic_ptr *a, void *v)
{
    atomic_store_explicit(a, v, memory_order_relaxed);
}
static inline void wf_atomic_store_release_ptr(wf_atomic_ptr *a, void *v)
{
    atomic_store_explicit(a, v, memory_order_release);
}
static inline bool wf_atomic_cas_seq_cst_ptr(wf_atomic_ptr *a, void **expected, void *desired)
{
    return atomic_compare_exchange_strong_explicit(a, expected, desired,
                                                   memory_order_seq_cst,
                                                   memory_order_relaxed);
}

/* ---- fences ---- */

static inline void wf_atomic_fence_seq_cst(void)
{
    atomic_thread_fence(memory_order_seq_cst);
}

#endif

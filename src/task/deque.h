/* src/task/deque.h - Chase-Lev work-stealing deque of task pointers.
 * SPDX-License-Identifier: MIT
 *
 * One owner thread pushes and pops at the bottom (LIFO, cache-warm work);
 * any number of thieves steal from the top (FIFO, the oldest and usually
 * largest work) with a CAS on `top`. The items live in a power-of-two ring
 * indexed by the unbounded int64 counters top <= bottom; the live items are
 * ring[top .. bottom-1] (mod capacity). Only the owner grows the ring: it
 * copies the live range into a ring twice as big and publishes it with a
 * release store. A thief may still be reading the old ring, so the old ring
 * is retired onto an owner-private list and freed only by wf_deque_fini or
 * wf_deque_reclaim, both of which require that no steal is in progress.
 * Memory orders follow Le, Pop, Cohen and Zappa Nardelli, "Correct and
 * efficient work-stealing for weak memory models" (PPoPP 2013); each site
 * in deque.c names its partner.
 *
 * Threads: init/fini/reclaim with no concurrent access; push and pop from
 * the owner only; steal and wf_deque_size_hint from any thread.
 */
#ifndef WF_DEQUE_H
#define WF_DEQUE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/alloc.h"
#include "core/atomic.h"
#include "task/thread.h"

#define WF_CACHE_LINE 64

typedef struct wf_deque_ring {
    int64_t mask;                        /* capacity - 1; capacity a power of two */
    struct wf_deque_ring *retired_next;  /* owner-private list of outgrown rings */
    wf_atomic_ptr slots[];               /* items; atomic because a thief may read
                                            a slot the owner is overwriting */
} wf_deque_ring;

typedef struct wf_deque {
    /* Written by thieves (CAS) and the owner (last-item race). */
    _Alignas(WF_CACHE_LINE) wf_atomic_i64 top;
    /* Written by the owner only, read by thieves. */
    _Alignas(WF_CACHE_LINE) wf_atomic_i64 bottom;
    wf_atomic_ptr ring;          /* current wf_deque_ring; replaced by owner only */
    wf_deque_ring *retired;      /* outgrown rings; owner only */
    wf_allocator *alloc;         /* all rings come from here */
    wf_mutex *alloc_lock;        /* serializes wf_alloc/wf_free with other
                                    threads sharing `alloc`; may be NULL */
} wf_deque;

typedef enum wf_steal_result {
    WF_STEAL_OK = 0,   /* *out holds the stolen item */
    WF_STEAL_EMPTY,    /* the deque looked empty */
    WF_STEAL_ABORT,    /* lost a race with another thief or the owner: retry */
    WF_STEAL_SKIP      /* the oldest item is tagged and the thief left it */
} wf_steal_result;

/* capacity: initial ring size, rounded up to a power of two (>= 2).
 * alloc_lock may be NULL when only one thread ever uses `alloc`.
 * false on out of memory (nothing allocated). */
bool wf_deque_init(wf_deque *d, wf_allocator *alloc, wf_mutex *alloc_lock,
                   int64_t capacity);
/* Frees every ring. No concurrent access; items left inside are dropped. */
void wf_deque_fini(wf_deque *d);
/* Owner only. item != NULL. false only when the ring was full and growing
 * it ran out of memory (benign for callers that can run the item inline);
 * the deque is unchanged then. */
bool wf_deque_push(wf_deque *d, void *item);
/* Owner only. The most recently pushed item, or NULL when empty. */
void *wf_deque_pop(wf_deque *d);
/* Any thread. The oldest item on WF_STEAL_OK. */
wf_steal_result wf_deque_steal(wf_deque *d, void **out);
/* wf_deque_steal, but when `skip_tagged` and the oldest item's pointer has
 * its low bit set, nothing is taken (WF_STEAL_SKIP). */
wf_steal_result wf_deque_steal_if(wf_deque *d, void **out, bool skip_tagged);
/* Any thread. bottom - top at some recent instant (may be stale or, under
 * races, transiently negative: clamped to 0). For parking decisions only. */
int64_t wf_deque_size_hint(const wf_deque *d);
/* Current ring capacity (owner or quiescent). */
int64_t wf_deque_capacity(const wf_deque *d);
/* Frees outgrown rings. Requires that no thief is inside wf_deque_steal. */
void wf_deque_reclaim(wf_deque *d);

#endif

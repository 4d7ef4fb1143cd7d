/* src/task/deque.c - Chase-Lev work-stealing deque (Le et al. 2013 orders).
 * SPDX-License-Identifier: MIT
 *
 * Invariants: top only increases, and only by a successful CAS; bottom is
 * written only by the owner; the live items are ring[top .. bottom-1]. The
 * owner and a thief can both want the last item (top == bottom - 1): the
 * owner's pop then also CASes top, so exactly one of them wins. The two
 * seq_cst fences (pop: after lowering bottom, steal: between reading top and
 * bottom) make "owner lowers bottom, then reads top" and "thief reads top,
 * then bottom" impossible to both miss each other; acquire/release alone
 * cannot order a store before a later load.
 *
 * One deliberate deviation from the paper: push publishes bottom with a
 * release store instead of "release fence; relaxed store". For the only
 * reader that needs it (steal's acquire load of bottom) it is the same
 * pairing, it is no slower on x86 or ARMv8 (stlr), and ThreadSanitizer,
 * which does not model fences, can then see the happens-before edge from
 * the item's contents to the thief. Later relaxed stores to bottom by the
 * owner (pop) continue that release sequence (C11 5.1.2.4), so a thief that
 * reads them still synchronizes with every earlier push.
 */
#include "task/deque.h"

#include "core/check.h"

/* ---- rings ---- */

/* Ring capacities come from wf_grow_cap_pow2 with the slot size, so the
 * byte count below cannot wrap a size_t (32-bit ones included). */
static size_t ring_bytes(int64_t capacity)
{
    return sizeof(wf_deque_ring) + (size_t)capacity * sizeof(wf_atomic_ptr);
}

static wf_deque_ring *ring_create(wf_deque *d, int64_t capacity)
{
    if (d->alloc_lock) {
        wf_mutex_lock(d->alloc_lock);
    }
    wf_deque_ring *r = wf_alloc(d->alloc, ring_bytes(capacity), _Alignof(wf_deque_ring));
    if (d->alloc_lock) {
        wf_mutex_unlock(d->alloc_lock);
    }
    if (!r) {
        return NULL;
    }
    r->mask = capacity - 1;
    r->retired_next = NULL;
    for (int64_t i = 0; i < capacity; i++) {
        wf_atomic_init_ptr(&r->slots[i], NULL);
    }
    return r;
}

static void ring_destroy(wf_deque *d, wf_deque_ring *r)
{
    if (d->alloc_lock) {
        wf_mutex_lock(d->alloc_lock);
    }
    wf_free(d->alloc, r, ring_bytes(r->mask + 1), _Alignof(wf_deque_ring));
    if (d->alloc_lock) {
        wf_mutex_unlock(d->alloc_lock);
    }
}

/* ---- lifecycle ---- */

bool wf_deque_init(wf_deque *d, wf_allocator *alloc, wf_mutex *alloc_lock,
                   int64_t capacity)
{
    uint32_t cap = wf_grow_cap_pow2(0, capacity > 2 ? (uint64_t)capacity : 2u, 2,
                                    sizeof(wf_atomic_ptr));
    if (cap == 0) {
        return false;
    }
    d->alloc = alloc;
    d->alloc_lock = alloc_lock;
    d->retired = NULL;
    wf_atomic_init_i64(&d->top, 0);
    wf_atomic_init_i64(&d->bottom, 0);
    wf_deque_ring *r = ring_create(d, cap);
    if (!r) {
        return false;
    }
    wf_atomic_init_ptr(&d->ring, r);
    return true;
}

void wf_deque_reclaim(wf_deque *d)
{
    wf_deque_ring *r = d->retired;
    while (r) {
        wf_deque_ring *next = r->retired_next;
        ring_destroy(d, r);
        r = next;
    }
    d->retired = NULL;
}

void wf_deque_fini(wf_deque *d)
{
    wf_deque_reclaim(d);
    /* Quiescent by contract: relaxed is enough. */
    wf_deque_ring *r = wf_atomic_load_relaxed_ptr(&d->ring);
    if (r) {
        ring_destroy(d, r);
    }
    wf_atomic_init_ptr(&d->ring, NULL);
}

/* ---- owner end ---- */

/* Owner only: doubles the ring, keeping items top..bottom-1 at the same
 * logical indices. NULL (and nothing changed) on out of memory. */
static wf_deque_ring *deque_grow(wf_deque *d, wf_deque_ring *old, int64_t top,
                                 int64_t bottom)
{
    uint64_t old_cap = (uint64_t)old->mask + 1;
    uint32_t cap = wf_grow_cap_pow2((uint32_t)old_cap, old_cap + 1, 2, sizeof(wf_atomic_ptr));
    wf_deque_ring *r = cap ? ring_create(d, cap) : NULL;
    if (!r) {
        return NULL; /* benign: push reports it and the caller runs inline */
    }
    for (int64_t i = top; i < bottom; i++) {
        /* Relaxed: the owner wrote these slots itself; thieves get them
         * through the release store of the ring below. */
        void *item = wf_atomic_load_relaxed_ptr(&old->slots[i & old->mask]);
        wf_atomic_store_relaxed_ptr(&r->slots[i & r->mask], item);
    }
    /* Release: pairs with the acquire load of `ring` in wf_deque_steal, so
     * a thief that sees the new ring sees the copied slots. The old ring
     * stays readable (and still holds the same items) for thieves that
     * loaded it earlier; it is freed only when no steal can be running. */
    wf_atomic_store_release_ptr(&d->ring, r);
    old->retired_next = d->retired;
    d->retired = old;
    return r;
}

bool wf_deque_push(wf_deque *d, void *item)
{
    WF_ASSERT(item != NULL);
    /* Relaxed: bottom is written only by this thread. */
    int64_t b = wf_atomic_load_relaxed_i64(&d->bottom);
    /* Acquire: pairs with the seq_cst (release) CAS on top in steal and pop,
     * so a slot is reused only after the thief that took it has read it. */
    int64_t t = wf_atomic_load_acquire_i64(&d->top);
    /* Relaxed: only this thread replaces the ring. */
    wf_deque_ring *r = wf_atomic_load_relaxed_ptr(&d->ring);
    if (b - t > r->mask) {
        r = deque_grow(d, r, t, b);
        if (!r) {
            return false;
        }
    }
    /* Relaxed: published by the release store of bottom just below. */
    wf_atomic_store_relaxed_ptr(&r->slots[b & r->mask], item);
    /* Release: pairs with the acquire load of bottom in wf_deque_steal; the
     * thief that sees b + 1 sees the slot and everything the pusher wrote
     * into the item before pushing it. (Paper: release fence + relaxed.) */
    wf_atomic_store_release_i64(&d->bottom, b + 1);
    return true;
}

void *wf_deque_pop(wf_deque *d)
{
    /* Relaxed: owner-private values. */
    int64_t b = wf_atomic_load_relaxed_i64(&d->bottom) - 1;
    wf_deque_ring *r = wf_atomic_load_relaxed_ptr(&d->ring);
    /* Relaxed store, ordered before the load of top by the fence below:
     * reserving slot b before looking at what thieves have taken. */
    wf_atomic_store_relaxed_i64(&d->bottom, b);
    /* seq_cst: pairs with the seq_cst fence in wf_deque_steal. Either this
     * load of top sees a thief's increment, or that thief's load of bottom
     * sees our decrement; without it both could take item b. */
    wf_atomic_fence_seq_cst();
    int64_t t = wf_atomic_load_relaxed_i64(&d->top);
    void *item = NULL;
    if (t <= b) {
        /* Relaxed: the owner wrote this slot. */
        item = wf_atomic_load_relaxed_ptr(&r->slots[b & r->mask]);
        if (t == b) {
            /* Last item: race the thieves for it. seq_cst CAS pairs with the
             * thieves' CAS on top (one total order decides the winner);
             * relaxed on failure because then we take nothing. */
            if (!wf_atomic_cas_seq_cst_i64(&d->top, &t, t + 1)) {
                item = NULL;
            }
            /* Relaxed: the deque is empty either way (top == bottom). */
            wf_atomic_store_relaxed_i64(&d->bottom, b + 1);
        }
    } else {
        /* Was already empty: undo the reservation. Relaxed: no data. */
        wf_atomic_store_relaxed_i64(&d->bottom, b + 1);
    }
    return item;
}

/* ---- thief end ---- */

wf_steal_result wf_deque_steal(wf_deque *d, void **out)
{
    return wf_deque_steal_if(d, out, false);
}

wf_steal_result wf_deque_steal_if(wf_deque *d, void **out, bool skip_tagged)
{
    /* Acquire: pairs with the seq_cst CAS on top by other thieves and the
     * owner, so the slot we read below was not already consumed. */
    int64_t t = wf_atomic_load_acquire_i64(&d->top);
    /* seq_cst: pairs with the seq_cst fence in wf_deque_pop (see there). */
    wf_atomic_fence_seq_cst();
    /* Acquire: pairs with the release store of bottom in wf_deque_push. */
    int64_t b = wf_atomic_load_acquire_i64(&d->bottom);
    if (t >= b) {
        return WF_STEAL_EMPTY;
    }
    /* Acquire (the paper's consume): pairs with the release store of the
     * ring in deque_grow, so a new ring's copied slots are visible. */
    wf_deque_ring *r = wf_atomic_load_acquire_ptr(&d->ring);
    /* Relaxed: ordered by the acquire of bottom above; if the owner has
     * since reused the slot, the CAS below fails and we discard it. */
    void *item = wf_atomic_load_relaxed_ptr(&r->slots[t & r->mask]);
    if (skip_tagged && ((uintptr_t)item & 1u)) {
        /* Left alone before the CAS: a stale slot only makes us skip an
         * item we could have taken (the next round looks again). */
        return WF_STEAL_SKIP;
    }
    /* seq_cst: pairs with the other thieves' CAS and pop's last-item CAS;
     * success is the moment item t becomes ours. */
    if (!wf_atomic_cas_seq_cst_i64(&d->top, &t, t + 1)) {
        return WF_STEAL_ABORT;
    }
    *out = item;
    return WF_STEAL_OK;
}

int64_t wf_deque_size_hint(const wf_deque *d)
{
    /* Acquire on both: pair with push's release of bottom and the CASes on
     * top; the result is a hint, callers re-check by popping or stealing. */
    int64_t b = wf_atomic_load_acquire_i64(&d->bottom);
    int64_t t = wf_atomic_load_acquire_i64(&d->top);
    return b > t ? b - t : 0;
}

int64_t wf_deque_capacity(const wf_deque *d)
{
    /* Relaxed: owner or quiescent by contract. */
    const wf_deque_ring *r = wf_atomic_load_relaxed_ptr(&d->ring);
    return r->mask + 1;
}

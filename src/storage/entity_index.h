/* src/storage/entity_index.h - entity ids: records, generations, free list,
 * lock-free reservation.
 * SPDX-License-Identifier: MIT
 *
 * records[i] describes index i: its current generation and, when live, the
 * archetype and table row holding it (12 bytes per index). A dead index has
 * arch == WF_ARCH_DEAD and a generation already bumped at despawn, so every
 * old handle fails the generation check at once. Freed indices go on
 * `free_stack` and are reused last-in-first-out.
 *
 * Reservation (any thread): `cursor` starts equal to free_len. A reserver
 * does n = fetch_sub(cursor, 1): n > 0 takes free_stack[n - 1] with its
 * current generation; n <= 0 takes the fresh index count + (-n) with
 * generation 1. Reservers only read free_stack and records, which the
 * driver does not change while reservations may run (weft.h contract), so
 * relaxed ordering is enough: the atomic only hands out distinct slots, and
 * no access to it pairs with another; what publishes the arrays to the
 * reserving threads is whatever the host used to start them (thread
 * creation, a job queue), not this counter.
 * wf_entities_flush (driver) turns every reserved id into a live entity and
 * re-synchronises cursor with free_len. Outside reservation windows
 * cursor == free_len.
 */
#ifndef WF_ENTITY_INDEX_H
#define WF_ENTITY_INDEX_H

#include "core/alloc.h"
#include "core/atomic.h"
#include "core/check.h"
#include "core/config.h"

#define WF_ARCH_DEAD 0xFFFFFFFFu
#define WF_FIRST_GENERATION 1u
/* Live generations stay below 2^31: the top bit marks the provisional
 * handles of command buffers (command_buffer.h), which must never name a
 * live entity. After WF_GENERATION_MAX an index starts again at
 * WF_FIRST_GENERATION. */
#define WF_GENERATION_MAX 0x7FFFFFFFu

typedef struct wf_record {
    uint32_t gen;  /* generation of the index's current or next entity */
    uint32_t arch; /* archetype id, or WF_ARCH_DEAD */
    uint32_t row;  /* table row when live */
} wf_record;

typedef struct wf_entity_index {
    wf_record *records;      /* [cap] */
    uint32_t count;          /* indices ever allocated */
    uint32_t cap;            /* records capacity */
    uint32_t *free_stack;    /* [free_cap] freed indices, top = free_len - 1 */
    uint32_t free_len;
    uint32_t free_cap;
    uint32_t retired;        /* dead indices never reused (free-stack growth
                                failed at despawn: benign) */
    uint32_t *later;         /* [later_cap] indices freed while reservations
                                were pending; pushed at the next flush */
    uint32_t later_len;
    uint32_t later_cap;
    wf_atomic_i64 cursor;    /* reservation cursor, see file comment */
    int64_t live;            /* live entities */
} wf_entity_index;

static inline weft_entity wf_make_entity(uint32_t index, uint32_t gen)
{
    return ((weft_entity)gen << 32) | index;
}

void wf_entities_init(wf_entity_index *ix);
void wf_entities_fini(wf_entity_index *ix, wf_allocator *a);
/* Forgets every index (no live entity, nothing free, nothing pending);
 * the blocks stay. The caller has emptied the storage the records name. */
void wf_entities_clear(wf_entity_index *ix);
/* Ensures room for `extra` more fresh indices. False on OOM or CAPACITY. */
bool wf_entities_reserve(wf_entity_index *ix, wf_allocator *a, uint32_t extra);
/* Reserved ids not yet flushed: (free taken, fresh taken). */
void wf_entities_pending(const wf_entity_index *ix, uint32_t *out_free,
                         uint32_t *out_fresh);
/* Takes an index for a new live entity (room reserved, no pending
 * reservations): pops the free stack or appends. The record's arch/row are
 * set by the caller. */
static inline weft_entity wf_entities_take(wf_entity_index *ix)
{
    uint32_t idx;
    if (ix->free_len) {
        idx = ix->free_stack[--ix->free_len];
    } else {
        idx = ix->count++;
        ix->records[idx].gen = WF_FIRST_GENERATION;
    }
    /* relaxed: driver only, outside reservation windows (file comment) */
    wf_atomic_store_relaxed_i64(&ix->cursor, (int64_t)ix->free_len);
    ix->live++;
    return wf_make_entity(idx, ix->records[idx].gen);
}
/* Marks index dead, bumps its generation (skipping 0) and pushes it on the
 * free stack, or, while reservations are pending (they point into the
 * stack), on the `later` list. Never fails: if a list cannot grow, the
 * index is retired instead of reused. */
/* The push half of wf_entities_release (record already marked dead). */
void wf_entities_release_push(wf_entity_index *ix, wf_allocator *a, uint32_t idx);
static inline void wf_entities_release(wf_entity_index *ix, wf_allocator *a, uint32_t idx)
{
    wf_record *r = &ix->records[idx];
    r->gen = r->gen >= WF_GENERATION_MAX ? WF_FIRST_GENERATION : r->gen + 1;
    r->arch = WF_ARCH_DEAD;
    r->row = 0;
    ix->live--;
    /* the common case inline: no reservation pending (relaxed: driver
     * only, see the file comment) and room on the stack */
    if (WF_LIKELY(wf_atomic_load_relaxed_i64(&ix->cursor) == (int64_t)ix->free_len &&
                  ix->free_len < ix->free_cap)) {
        ix->free_stack[ix->free_len++] = idx;
        wf_atomic_store_relaxed_i64(&ix->cursor, (int64_t)ix->free_len);
        return;
    }
    wf_entities_release_push(ix, a, idx);
}
/* Moves the `later` list onto the free stack (no reservation pending). */
void wf_entities_release_later(wf_entity_index *ix, wf_allocator *a);
/* Thread-safe reservation; 0 when the index space is exhausted. */
weft_entity wf_entities_reserve_id(wf_entity_index *ix);

#endif

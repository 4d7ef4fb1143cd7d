/* src/world/entity.h - the entity operations behind the public entry
 * points: spawn, despawn, insert, remove, get, with their phase rules.
 * SPDX-License-Identifier: MIT
 *
 * What weft_spawn_with, weft_despawn, weft_insert, weft_remove, weft_get
 * and weft_get_mut do once their world handle is checked: refuse a call
 * that changes a shared world (a parallel system's, or one a sub-app
 * extracts from), defer while an iteration, hook or observer runs
 * (iter_depth > 0: checked now, applied when the outermost operation
 * ends), else commit (world/commit.c) and apply what hooks and observers
 * deferred. `fn` names the entry point in messages. The api layer and
 * internal code (sub-apps, relationships) call these, never the public
 * functions. Driver thread only.
 */
#ifndef WF_ENTITY_H
#define WF_ENTITY_H

#include "world/defer.h"
#include "world/world.h"

/* A handle's index and generation (weft_entity_index, _generation). */
static inline uint32_t wf_handle_index(weft_entity e)
{
    return (uint32_t)e;
}

static inline uint32_t wf_handle_gen(weft_entity e)
{
    return (uint32_t)(e >> 32);
}

/* Is e a live entity of w (0 never is)? Records nothing. */
static inline bool wf_entity_alive(const weft_world *w, weft_entity e)
{
    return e != 0 && wf_entity_live(w, e) != NULL;
}

/* Ends a structural call: what hooks and observers deferred is applied
 * now (unless the call itself ran deferred). Returns st. */
static inline weft_status wf_entity_done(weft_world *w, weft_status st)
{
    if (WF_UNLIKELY(w->cmds.count || w->events.has_dead)) {
        wf_world_settle(w);
    }
    return st;
}

/* Spawn while deferring: a reserved id now, the entity at the end (0 with
 * the error recorded). */
weft_entity wf_entity_defer_spawn(weft_world *w, const weft_value *values, int32_t count);
/* While deferring: e must be live or a reserved id (error recorded). */
weft_status wf_entity_defer_check(weft_world *w, weft_entity e, const char *fn);

/* The new entity with `values` (checked here), or 0 (error recorded);
 * while deferring, a reserved id that becomes the entity at the end. */
weft_entity wf_entity_spawn_with(weft_world *w, const weft_value *values, int32_t count,
                                 const char *fn);
weft_status wf_entity_despawn(weft_world *w, weft_entity e, const char *fn);
weft_status wf_entity_insert(weft_world *w, weft_entity e, weft_component c, const void *value,
                             size_t size, const char *fn);
weft_status wf_entity_remove(weft_world *w, weft_entity e, weft_component c, const char *fn);

/* Locates e's value of c: its column and row, or NULL when e lacks c.
 * Records errors for misuse (stale entity, unknown component, size not
 * the component's); *status tells which. */
wf_column *wf_entity_locate(const weft_world *w, weft_entity e, weft_component c,
                             size_t size, const char *fn, uint32_t *out_row,
                             weft_status *status);
/* weft_get past its fast path: sparse components, absence, misuse. */
const void *wf_entity_get_slow(const weft_world *w, weft_entity e, weft_component c,
                               size_t size);
/* e's value of c for writing (marked changed now), or NULL: absent, or
 * misuse recorded naming weft_get_mut. */
void *wf_entity_get_mut(weft_world *w, weft_entity e, weft_component c, size_t size);

/* e's value of c (size bytes), or NULL: absent (nothing recorded), or
 * misuse (recorded, naming weft_get). Fast path: a live entity holding c
 * in its table, right size; it never touches the registry (the column
 * knows its size) and ends in a tail call otherwise. w is a valid world. */
static inline const void *wf_entity_get(const weft_world *w, weft_entity e, weft_component c,
                                        size_t size)
{
    const wf_record *r = wf_entity_live(w, e);
    if (WF_LIKELY(r != NULL)) {
        const wf_archetype *arch = wf_world_archetype(w, r->arch);
        if (WF_LIKELY(c < arch->col_map_len && arch->col_map[c] >= 0)) {
            const wf_column *col = &arch->cols[arch->col_map[c]];
            if (WF_LIKELY(col->size == size && size != 0)) {
                return wf_column_ptr(col, r->row);
            }
        }
    }
    return wf_entity_get_slow(w, e, c, size);
}

#endif

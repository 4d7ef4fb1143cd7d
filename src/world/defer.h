/* src/world/defer.h - structural calls deferred while an iteration is open.
 * SPDX-License-Identifier: MIT
 *
 * While any query iteration is open, spawn/insert/remove/despawn/flush are
 * validated at call time and recorded here; the outermost iteration's end
 * applies them in call order. Each value is copied (copy hook) into its own
 * allocation so the queue array holds only plain records and can grow with
 * memcpy. Spawns get a reserved id at call time. Failures at apply time go
 * to the error slot; the remaining operations still run.
 * Driver thread only.
 */
#ifndef WF_DEFER_H
#define WF_DEFER_H

#include "world/world.h"

typedef enum wf_defer_kind {
    WF_DEFER_SPAWN = 1,   /* e reserved; `count` VALUE records follow */
    WF_DEFER_INSERT = 2,  /* `count` VALUE records follow */
    WF_DEFER_REMOVE = 3,  /* c */
    WF_DEFER_DESPAWN = 4,
    WF_DEFER_FLUSH = 5,
    WF_DEFER_VALUE = 6    /* c, value (owned copy or NULL = default) */
} wf_defer_kind;

typedef struct wf_deferred {
    uint32_t kind;
    int32_t count;
    weft_entity e;
    weft_component c;
    void *value;
} wf_deferred;

/* Records an operation with `count` values (copied). For WF_DEFER_SPAWN the
 * entity id is reserved here, once nothing else can fail, and returned in
 * *out_spawned; on failure nothing is recorded or reserved. */
weft_status wf_defer_push(weft_world *w, wf_defer_kind kind, weft_entity e,
                          weft_component c, const weft_value *values, int32_t count,
                          weft_entity *out_spawned);
/* Applies and empties the queue (the world must not be iterating). */
void wf_defer_apply(weft_world *w);
/* Drops the queue without applying it (world destruction). */
void wf_defer_fini(weft_world *w);
/* True when e may be the subject of a deferred operation: live, or a
 * reserved id waiting for its flush. */
bool wf_defer_entity_ok(const weft_world *w, weft_entity e);

#endif

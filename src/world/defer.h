/* src/world/defer.h - deferral into the world buffer, and command apply.
 * SPDX-License-Identifier: MIT
 *
 * While a query iteration is open or a hook/observer runs (iter_depth > 0),
 * structural calls are validated at call time and recorded in the world's
 * command buffer; spawns get a reserved id. When the outermost operation
 * ends, wf_world_settle applies the world buffer in FIFO order; commands
 * recorded by hooks while it is applied join the same pass, one
 * generation later, and a record whose generation would exceed
 * WEFT_MAX_EVENT_DEPTH is refused (an endless cascade of hooks).
 * User buffers apply the same way, settling the world buffer after each
 * command. Driver thread only.
 */
#ifndef WF_DEFER_H
#define WF_DEFER_H

#include "query/iter.h"
#include "world/world.h"

/* Records a deferred structural call in the world buffer. For WF_CMD_SPAWN
 * the id is reserved once nothing else can fail and returned in
 * *out_spawned. */
weft_status wf_defer_push(weft_world *w, wf_cmd_op op, weft_entity e, weft_component c,
                          const weft_value *values, int32_t count,
                          weft_entity *out_spawned);
/* Records into buffer b (user or world), with the cascade check. */
weft_status wf_cmds_record(weft_world *w, weft_commands *b, wf_cmd_op op, uint8_t flags,
                           weft_entity e, weft_component c, const weft_value *values,
                           int32_t count, weft_entity *out_spawned);
/* wf_cmds_record for one trivially copyable value of at most 8-byte
 * alignment (ti != NULL) or none (ti == NULL, not for spawns). */
static inline weft_status wf_cmds_record_small(weft_world *w, weft_commands *b, wf_cmd_op op,
                                               uint8_t flags, weft_entity e, weft_component c,
                                               const wf_type_info *ti, const void *value)
{
    if (WF_UNLIKELY(b->gen > WEFT_MAX_EVENT_DEPTH)) {
        return wf_cmds_record(w, b, op, flags, e, c, NULL, 0, NULL); /* reports it */
    }
    if (WF_UNLIKELY(!wf_cmds_push_small(b, op, flags, e, c, ti, value))) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory recording a command");
    }
    return WEFT_OK;
}

/* Applies buffer b (FIFO) and empties it; returns the first failure. */
weft_status wf_cmds_apply(weft_world *w, weft_commands *b);
/* Applies the world buffer if nothing is deferring and it holds records. */
void wf_world_settle(weft_world *w);
/* Ends an active iteration; `completed` advances the query's last run
 * (world iterations only). The outermost end of a world or exclusive
 * iteration settles what it deferred. */
void wf_world_iter_end(wf_iter *it, bool completed);
/* True when e may be the subject of a deferred command: live, or a
 * reserved id waiting for its flush. */
bool wf_defer_entity_ok(const weft_world *w, weft_entity e);
/* Releases the world buffer and every user buffer (world destruction). */
void wf_defer_fini(weft_world *w);

#endif

/* src/world/commit.h - the structural-change choke point.
 * SPDX-License-Identifier: MIT
 *
 * Every change of an entity's archetype (spawn, insert, remove, despawn,
 * flush of reserved ids) goes through this module. Each operation runs in
 * two steps: first it resolves the target archetype and reserves every
 * byte it will need (records, table rows, sparse pages and slots), which is
 * where OUT_OF_MEMORY can happen and leaves the world unchanged; then it
 * commits, which cannot fail. Inputs are validated by the API layer.
 * Driver thread only.
 */
#ifndef WF_COMMIT_H
#define WF_COMMIT_H

#include "world/world.h"

/* Turns every reserved id into a live, empty entity. */
weft_status wf_commit_flush(weft_world *w);
/* Spawns one entity with `values` (validated: registered, sized, unique). */
weft_status wf_commit_spawn(weft_world *w, const weft_value *values, int32_t count,
                            weft_entity *out);
/* Does the spawn cache vouch for `values`: the ids of the last spawn, in
 * the same order, each with its column's size, and no requirements to
 * expand? Then wf_values_check would pass and the spawn's archetype is
 * the cached one, so wf_commit_spawn_cached may run without either.
 * Sizes are compared with the columns, which a layout migration updates;
 * a cached id cannot be unregistered (its archetype holds it) and a
 * component never becomes managed after its registration. */
static inline bool wf_spawn_cache_vouches(const weft_world *w, const weft_value *values,
                                          int32_t count)
{
    const wf_spawn_cache *sc = &w->spawn_cache;
    if (!sc->vouch || sc->count != count || !values || w->req_gen) {
        return false;
    }
    const wf_column *cols = sc->arch->table->cols;
    for (int32_t i = 0; i < count; i++) {
        if (values[i].id != sc->ids[i] || values[i].size != cols[sc->cols[i]].size) {
            return false;
        }
    }
    return true;
}
/* wf_commit_spawn for values the spawn cache vouches for. */
weft_status wf_commit_spawn_cached(weft_world *w, const weft_value *values, int32_t count,
                                   weft_entity *out);
/* Spawns n entities; columns[i].ptr is an array of n values or NULL. */
weft_status wf_commit_spawn_bulk(weft_world *w, const weft_value *columns,
                                 int32_t count, uint32_t n, weft_entity *out);
/* Inserts or replaces `values` on a live entity with at most one move. */
weft_status wf_commit_insert(weft_world *w, weft_entity e, wf_record *rec,
                             const weft_value *values, int32_t count);
/* wf_commit_insert for values whose relationship values the caller has
 * admitted and prepared already (weft_relate: wf_rel_admit's checks and
 * wf_rel_prepare_relate): the same placement without doing that again. */
weft_status wf_commit_insert_admitted(weft_world *w, weft_entity e, const weft_value *values,
                                      int32_t count);
/* Inserts or replaces one component (validated) on a live entity. */
weft_status wf_commit_insert_one(weft_world *w, weft_entity e, wf_record *rec,
                                 const wf_type_info *ti, const void *value);
/* Removes a registered component (present or not) from a live entity. */
weft_status wf_commit_remove(weft_world *w, weft_entity e, wf_record *rec,
                             const wf_type_info *ti);
/* Despawns a live entity, destroying its values. Fails only with
 * OUT_OF_MEMORY, before anything happens, when the records its
 * relationship hooks will queue (a linked subtree) cannot be reserved. */
weft_status wf_commit_despawn(weft_world *w, weft_entity e, wf_record *rec);

#endif

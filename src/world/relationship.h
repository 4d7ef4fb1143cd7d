/* src/world/relationship.h - one-to-many relationships kept by hooks.
 * SPDX-License-Identifier: MIT
 *
 * A relationship is a pair of components. The source component (on each
 * source entity, immutable) holds the target entity and is the truth; the
 * target component (on the target) holds the ordered list of its sources
 * and is maintained by the source's hooks:
 *   on_insert  (source)  append the source to the target's list; a target
 *                        without a list gets one through a deferred command
 *   on_replace (source)  remove the source from the old target's list, and
 *                        the list itself (deferred) once it is empty
 *   on_despawn (target)  LINKED_DESPAWN: despawn the whole subtree, gathered
 *                        breadth first into one round of deferred despawns;
 *                        otherwise remove the relationship from every source
 * The invariant (every source is listed once by its live target, every
 * listed source points back) holds whenever the world buffer is empty.
 * Driver thread only.
 */
#ifndef WF_RELATIONSHIP_H
#define WF_RELATIONSHIP_H

#include "world/world.h"

/* Value of a target component: the sources, in insertion order. */
typedef struct wf_rel_list {
    weft_entity *items; /* world allocator */
    int32_t count;
    int32_t cap;
} wf_rel_list;

/* Registers the two components of a relationship; returns the source id. */
weft_component wf_relationship_register(weft_world *w, const char *name, uint32_t flags);
/* The built-in ChildOf relationship, registered on first use (0 with the
 * error recorded). */
weft_component wf_child_of(weft_world *w);
/* The source component of relationship rel, or NULL when rel is none
 * (nothing recorded). */
const wf_type_info *wf_rel_info(const weft_world *w, weft_component rel);
/* The sources of `target` through rel (NULL, *out_count untouched, when
 * none or rel is NULL); *out_count (when not NULL) gets their number. */
const weft_entity *wf_rel_sources(const weft_world *w, weft_entity target,
                                  const wf_type_info *rel, int32_t *out_count);
/* Relates source to target through rel (what weft_relate does past its
 * handle and relationship checks): target live, no self-relation, no
 * cycle; deferred as an insert while iterating; both directions or
 * neither. */
weft_status wf_relate(weft_world *w, weft_entity source, const wf_type_info *rel,
                      weft_entity target);
/* Target of `source` through rel (0 when none). */
weft_entity wf_rel_target(const weft_world *w, weft_entity source, const wf_type_info *rel);
/* The list of sources of `target` (NULL when none). */
const wf_rel_list *wf_rel_list_of(const weft_world *w, weft_entity target,
                                  const wf_type_info *rel);
/* Would source -> target create a cycle (target is source or a descendant
 * of it)? */
bool wf_rel_would_cycle(const weft_world *w, weft_entity source, const wf_type_info *rel,
                        weft_entity target);

/* Is source -> target admissible: target live, not source itself, and no
 * cycle (source 0: a spawn, which has no descendants yet)? RELATIONSHIP
 * with a message naming both when not; nothing changes either way. */
weft_status wf_rel_admit(weft_world *w, weft_entity source, const wf_type_info *rel,
                         weft_entity target);
/* Before relating `more` sources to `target` (not deferred): gives the
 * target its list (*added tells) with room for them, and the world buffer
 * room for the hooks' deferred steps, so the hooks of the insert that
 * follows cannot fail for memory. OUT_OF_MEMORY: nothing changed. */
weft_status wf_rel_prepare_relate(weft_world *w, const wf_type_info *rel, weft_entity target,
                                  uint32_t more, bool *added);
/* Undoes wf_rel_prepare_relate after the insert failed (the list is still
 * empty): removes the list again when it was added. */
void wf_rel_unprepare_relate(weft_world *w, const wf_type_info *rel, weft_entity target,
                             bool added);
/* Before despawning e (in archetype arch) outside a cascade: reserves the
 * world-buffer records its relationship hooks will queue (the whole linked
 * subtree), so the despawn either fails first with OUT_OF_MEMORY or queues
 * every record. */
weft_status wf_rel_prepare_despawn(weft_world *w, weft_entity e, const wf_archetype *arch);

#endif

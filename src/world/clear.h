/* src/world/clear.h - emptying a world's content while its registrations stay.
 * SPDX-License-Identifier: MIT
 */
#ifndef WF_CLEAR_H
#define WF_CLEAR_H

#include "world/world.h"

/* Empties the world's content: every entity (records, table rows, sparse
 * values, relationship lists), every resource, every message queue and
 * removal stream. Values are destroyed through their type hooks and
 * message drop callbacks; no lifecycle hook or observer runs (the content
 * is replaced wholesale, not despawned). Registrations (components,
 * message types, observers, queries, schedules, systems) and archetypes
 * stay, with their blocks, so refilling reuses the memory. Cannot fail;
 * allocates nothing. The caller has checked the phase: no iteration, no
 * schedule run, no pending command, reservation or deferred call. What
 * follows is an in-place restore (reflect/snapshot_restore.c), which
 * refills the entity index, rows, resources, streams and ticks. */
void wf_world_clear_content(weft_world *w);

#endif

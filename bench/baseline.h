/* bench/baseline.h - the hand-written minimal ECS store weft is measured against.
 * SPDX-License-Identifier: MIT
 *
 * The floor for every scenario: the least a correct store must do for the
 * same operation, written directly over plain C arrays for the three known
 * components and nothing else.
 *  - Entity handles: 32-bit index (0 unused) + 32-bit generation; a record
 *    {generation, table, row} per index; despawned indices reused LIFO
 *    through an intrusive free list; stale handles are rejected.
 *  - Two fixed tables, {Position, Velocity} and {Position, Velocity,
 *    Health}, each a set of struct arrays plus an entity column, grown by
 *    doubling, rows removed by swap-remove with the moved record fixed.
 *  - Optional change ticks (added, changed: uint32 each per component per
 *    row), stamped exactly where weft stamps them.
 *  - A sparse set for the sparse flavour of Health: a flat sparse array
 *    indexed by entity index, dense values and owners.
 * It lives in its own translation unit, so like weft it is reached through
 * real calls; there is no registry, no type erasure and no error slot, which
 * is the overhead a general library adds on top.
 */
#ifndef WEFT_BENCH_BASELINE_H
#define WEFT_BENCH_BASELINE_H

#include "bench.h"

typedef struct bl_store bl_store;

/* Creates an empty store; `ticks` adds the change-tick arrays. */
bl_store *bl_create(bool ticks);
void bl_destroy(bl_store *s);

/* Spawns one entity with Position+Velocity. */
uint64_t bl_spawn(bl_store *s, const bench_position *p, const bench_velocity *v);

/* Spawns n entities with Position+Velocity from value arrays. */
void bl_spawn_bulk(bl_store *s, int32_t n, const bench_position *p,
                   const bench_velocity *v, uint64_t *out);

/* Despawns; returns false for a stale handle. */
bool bl_despawn(bl_store *s, uint64_t e);

/* Adds (or replaces) Health stored in the third table: one row move. */
bool bl_insert_health(bl_store *s, uint64_t e, const bench_health *h);
/* Removes table Health: one row move back. */
bool bl_remove_health(bl_store *s, uint64_t e);

/* The same with Health in the sparse set: no row moves. */
bool bl_insert_health_sparse(bl_store *s, uint64_t e, const bench_health *h);
bool bl_remove_health_sparse(bl_store *s, uint64_t e);

/* Component pointers by handle, NULL for a stale handle. */
const bench_position *bl_get_pos(const bl_store *s, uint64_t e);
const bench_velocity *bl_get_vel(const bl_store *s, uint64_t e);

/* Bytes currently allocated by the store, and live entities. */
size_t bl_bytes(const bl_store *s);
int64_t bl_live(const bl_store *s);

#endif /* WEFT_BENCH_BASELINE_H */

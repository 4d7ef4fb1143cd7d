/* bench/bench_world.h - a weft world with the bench's components, shared by the scenario files.
 * SPDX-License-Identifier: MIT
 *
 * Every helper fails the whole bench (bench_fail) on an unexpected status,
 * naming the scenario, the call and the world's error message.
 */
#ifndef WEFT_BENCH_WORLD_H
#define WEFT_BENCH_WORLD_H

#include "bench.h"
#include "weft.h"

typedef struct bench_world {
    weft_world *w;
    weft_component pos;
    weft_component vel;
    weft_component hp;
    const char *scenario; /* for failure messages */
} bench_world;

/* Registers a component; size 0 makes a tag. */
weft_component bench_register(bench_world *b, const char *name, size_t size,
                              weft_storage storage, uint32_t flags);

/* Creates a world with Position and Velocity (flags `pv_flags`) and Health
 * stored as `hp_storage`. `alloc` may be NULL (default allocator). */
void bench_world_init(bench_world *b, const char *scenario, uint32_t pv_flags,
                      weft_storage hp_storage, const weft_allocator *alloc);

void bench_world_fini(bench_world *b);

/* Fails the bench unless st is WEFT_OK. */
void bench_world_expect(const bench_world *b, const char *what, weft_status st);

/* Full verification: live count and the world's own invariant walk. */
void bench_world_verify(const bench_world *b, int64_t live);

/* Spawns n Position+Velocity entities from the data arrays in one call. */
void bench_world_spawn_bulk(bench_world *b, const bench_data *d, int32_t n,
                            weft_entity *out);

#endif /* WEFT_BENCH_WORLD_H */

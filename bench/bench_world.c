/* bench/bench_world.c - the bench's weft world: registration, checks, bulk spawn.
 * SPDX-License-Identifier: MIT
 */
#include "bench_world.h"

#include <stdio.h>
#include <string.h>

weft_component bench_register(bench_world *b, const char *name, size_t size,
                              weft_storage storage, uint32_t flags)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    d.storage = storage;
    d.flags = flags;
    weft_component c = weft_component_register(b->w, &d);
    if (c == WEFT_COMPONENT_NONE) {
        bench_fail(b->scenario, "weft_component_register", weft_last_error(b->w));
    }
    return c;
}

void bench_world_init(bench_world *b, const char *scenario, uint32_t pv_flags,
                      weft_storage hp_storage, const weft_allocator *alloc)
{
    weft_world_desc desc;
    memset(&desc, 0, sizeof desc);
    if (alloc != NULL) {
        desc.allocator = *alloc;
    }
    b->scenario = scenario;
    b->w = weft_world_create(&desc);
    if (b->w == NULL) {
        bench_fail(scenario, "weft_world_create", "returned NULL");
    }
    b->pos = bench_register(b, "Position", sizeof(bench_position),
                            WEFT_STORAGE_DEFAULT, pv_flags);
    b->vel = bench_register(b, "Velocity", sizeof(bench_velocity),
                            WEFT_STORAGE_DEFAULT, pv_flags);
    b->hp = bench_register(b, "Health", sizeof(bench_health), hp_storage, 0);
}

void bench_world_fini(bench_world *b)
{
    weft_world_destroy(b->w);
    b->w = NULL;
}

void bench_world_expect(const bench_world *b, const char *what, weft_status st)
{
    if (st != WEFT_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s: %s", weft_status_name(st),
                 weft_last_error(b->w));
        bench_fail(b->scenario, what, detail);
    }
}

void bench_world_verify(const bench_world *b, int64_t live)
{
    weft_world_stats st;
    bench_world_expect(b, "weft_world_get_stats", weft_world_get_stats(b->w, &st));
    if (st.live_entities != live) {
        char detail[128];
        snprintf(detail, sizeof detail, "live_entities = %lld, expected %lld",
                 (long long)st.live_entities, (long long)live);
        bench_fail(b->scenario, "entity count", detail);
    }
    bench_world_expect(b, "weft_world_check", weft_world_check(b->w));
}

void bench_world_spawn_bulk(bench_world *b, const bench_data *d, int32_t n,
                            weft_entity *out)
{
    weft_value cols[2] = {
        {b->pos, sizeof(bench_position), d->pos},
        {b->vel, sizeof(bench_velocity), d->vel},
    };
    bench_world_expect(b, "weft_spawn_bulk", weft_spawn_bulk(b->w, cols, 2, n, out));
}

/* examples/08_custom_allocator.c - an allocator hook that counts every byte the world holds.
 * SPDX-License-Identifier: MIT
 *
 * Every byte a world owns goes through its allocator hook, from any thread
 * (the executor's workers allocate too), so the counters are atomic. After
 * weft_world_destroy the live count is back to 0.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft.h"

typedef struct counting {
    atomic_llong live, peak, allocs, frees;
} counting;

static void *count_alloc(size_t size, size_t align, void *user)
{
    counting *c = user;
    /* aligned_alloc wants a size that is a multiple of the alignment, and
     * some C libraries (Emscripten's) refuse alignments below a pointer's. */
    if (align < sizeof(void *)) {
        align = sizeof(void *);
    }
    void *p = aligned_alloc(align, (size + align - 1) / align * align);
    if (p != NULL) {
        long long now = atomic_fetch_add(&c->live, (long long)size) + (long long)size;
        long long peak = atomic_load(&c->peak);
        while (now > peak && !atomic_compare_exchange_weak(&c->peak, &peak, now)) {
        }
        atomic_fetch_add(&c->allocs, 1);
    }
    return p;
}

static void count_free(void *ptr, size_t size, size_t align, void *user)
{
    counting *c = user;
    (void)align;
    atomic_fetch_sub(&c->live, (long long)size); /* weft passes the size it asked for */
    atomic_fetch_add(&c->frees, 1);
    free(ptr);
}

static void noop(weft_system_ctx *ctx, void *user)
{
    (void)ctx, (void)user;
}

int main(void)
{
    static counting c; /* zero-initialised */
    weft_world_desc wd;
    memset(&wd, 0, sizeof wd);
    wd.allocator.alloc = count_alloc;
    wd.allocator.free = count_free;
    wd.allocator.user = &c;
    weft_world *w = weft_world_create(&wd);
    if (w == NULL) {
        return 1;
    }

    /* Some work: components, 10k entities, a query, a threaded schedule. */
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = "Payload";
    d.size = 64;
    weft_component payload = weft_component_register(w, &d);
    weft_value col = {payload, 64, NULL};
    weft_query_desc qd;
    memset(&qd, 0, sizeof qd);
    qd.terms[0] = (weft_term){.id = payload};
    qd.term_count = 1;
    weft_schedule *s = weft_schedule_create(w, "update");
    if (payload == 0 || weft_spawn_bulk(w, &col, 1, 10000, NULL) != WEFT_OK || s == NULL ||
        weft_schedule_add_system(s, &(weft_system_desc){.name = "noop", .fn = noop, .queries = &qd,
                                               .query_count = 1}) == 0 ||
        weft_world_set_threads(w, weft_max_threads() < 2 ? 1 : 2) != WEFT_OK ||
        weft_schedule_run(s, 0.0) != WEFT_OK) {
        fprintf(stderr, "work: %s\n", weft_last_error(w));
        return 1;
    }

    weft_world_stats st;
    if (weft_world_get_stats(w, &st) != WEFT_OK) {
        return 1;
    }
    printf("world holds %lld bytes (the hook counted %lld) for %lld entities\n",
           (long long)st.live_bytes, (long long)atomic_load(&c.live),
           (long long)st.live_entities);
    int ok = st.live_bytes == atomic_load(&c.live);

    weft_world_destroy(w);
    printf("after destroy: %lld live bytes, %lld allocations, %lld frees, peak %lld bytes\n",
           (long long)atomic_load(&c.live), (long long)atomic_load(&c.allocs),
           (long long)atomic_load(&c.frees), (long long)atomic_load(&c.peak));
    ok = ok && atomic_load(&c.live) == 0 && atomic_load(&c.allocs) == atomic_load(&c.frees);
    return ok ? 0 : 1;
}

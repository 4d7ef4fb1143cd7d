// tests/unit/test_entity_index.c - ids, generations, LIFO reuse, reservation.
// SPDX-License-Identifier: MIT
#include <pthread.h>

#include "unit.h"

static wf_allocator g_alloc;

static int setup(void **state)
{
    (void)state;
    wf_allocator_init(&g_alloc, NULL);
    return 0;
}

static weft_entity take(wf_entity_index *ix)
{
    assert_true(wf_entities_reserve(ix, &g_alloc, 1));
    weft_entity e = wf_entities_take(ix);
    ix->records[(uint32_t)e].arch = 0;
    return e;
}

// {index, generation}: A{0,1}, B{1,1}, despawn A, C{0,2} (LIFO reuse).
static void entity_index_alloc_trace(void **state)
{
    (void)state;
    wf_entity_index ix;
    wf_entities_init(&ix);
    weft_entity a = take(&ix);
    weft_entity b = take(&ix);
    assert_int_equal(a, wf_make_entity(0, 1));
    assert_int_equal(b, wf_make_entity(1, 1));
    wf_entities_release(&ix, &g_alloc, 0);
    assert_int_equal(ix.records[0].gen, 2); // bumped at free, not at reuse
    assert_int_equal(ix.records[0].arch, WF_ARCH_DEAD);
    weft_entity c = take(&ix);
    assert_int_equal(c, wf_make_entity(0, 2));
    assert_int_equal(ix.live, 2);
    wf_entities_fini(&ix, &g_alloc);
    assert_int_equal(g_alloc.live_bytes, 0);
}

static void entity_index_reuse_is_lifo(void **state)
{
    (void)state;
    wf_entity_index ix;
    wf_entities_init(&ix);
    for (int i = 0; i < 5; i++) {
        take(&ix);
    }
    wf_entities_release(&ix, &g_alloc, 1);
    wf_entities_release(&ix, &g_alloc, 3);
    assert_int_equal((uint32_t)take(&ix), 3);
    assert_int_equal((uint32_t)take(&ix), 1);
    assert_int_equal((uint32_t)take(&ix), 5);
    wf_entities_fini(&ix, &g_alloc);
}

static void entity_index_generation_wraps_past_zero(void **state)
{
    (void)state;
    wf_entity_index ix;
    wf_entities_init(&ix);
    take(&ix);
    ix.records[0].gen = 0xFFFFFFFFu;
    wf_entities_release(&ix, &g_alloc, 0);
    assert_int_equal(ix.records[0].gen, WF_FIRST_GENERATION);
    wf_entities_fini(&ix, &g_alloc);
}

// Reservation takes the free stack from the top, then fresh indices.
static void entity_index_reserve_order(void **state)
{
    (void)state;
    wf_entity_index ix;
    wf_entities_init(&ix);
    for (int i = 0; i < 4; i++) {
        take(&ix);
    }
    wf_entities_release(&ix, &g_alloc, 2);
    wf_entities_release(&ix, &g_alloc, 0);
    assert_int_equal(wf_entities_reserve_id(&ix), wf_make_entity(0, 2));
    assert_int_equal(wf_entities_reserve_id(&ix), wf_make_entity(2, 2));
    assert_int_equal(wf_entities_reserve_id(&ix), wf_make_entity(4, 1));
    assert_int_equal(wf_entities_reserve_id(&ix), wf_make_entity(5, 1));
    uint32_t from_free, fresh;
    wf_entities_pending(&ix, &from_free, &fresh);
    assert_int_equal(from_free, 2);
    assert_int_equal(fresh, 2);
    wf_entities_fini(&ix, &g_alloc);
}

typedef struct reserver {
    wf_entity_index *ix;
    weft_entity got[2000];
} reserver;

static void *reserve_many(void *arg)
{
    reserver *r = arg;
    for (int i = 0; i < 2000; i++) {
        r->got[i] = wf_entities_reserve_id(r->ix);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

// Concurrent reservations hand out distinct ids, free ones first.
static void entity_index_reserve_threads_distinct(void **state)
{
    (void)state;
    wf_entity_index ix;
    wf_entities_init(&ix);
    for (int i = 0; i < 100; i++) {
        take(&ix);
    }
    for (uint32_t i = 0; i < 100; i += 2) {
        wf_entities_release(&ix, &g_alloc, i);
    }
    static reserver rs[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        rs[t].ix = &ix;
        assert_int_equal(pthread_create(&th[t], NULL, reserve_many, &rs[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
    }
    static uint64_t all[8000];
    for (int t = 0; t < 4; t++) {
        memcpy(all + t * 2000, rs[t].got, sizeof rs[t].got);
    }
    qsort(all, 8000, sizeof all[0], cmp_u64);
    uint32_t reused = 0;
    for (int i = 0; i < 8000; i++) {
        assert_int_not_equal(all[i], 0);
        if (i) {
            assert_true(all[i] != all[i - 1]);
        }
        reused += (uint32_t)(all[i] >> 32) == 2; // freed ones carry gen 2
    }
    assert_int_equal(reused, 50);
    uint32_t from_free, fresh;
    wf_entities_pending(&ix, &from_free, &fresh);
    assert_int_equal(from_free, 50);
    assert_int_equal(fresh, 8000 - 50);
    wf_entities_fini(&ix, &g_alloc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(entity_index_alloc_trace, setup),
        cmocka_unit_test_setup(entity_index_reuse_is_lifo, setup),
        cmocka_unit_test_setup(entity_index_generation_wraps_past_zero, setup),
        cmocka_unit_test_setup(entity_index_reserve_order, setup),
        cmocka_unit_test_setup(entity_index_reserve_threads_distinct, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

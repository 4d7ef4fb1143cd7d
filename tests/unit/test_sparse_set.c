// tests/unit/test_sparse_set.c - paged sparse set: lookup, swap-remove, pages.
// SPDX-License-Identifier: MIT
#include "unit.h"

static wf_allocator g_alloc;

static int setup(void **state)
{
    (void)state;
    wf_allocator_init(&g_alloc, NULL);
    return 0;
}

static wf_sparse_set *make_set(wf_type_info *ti)
{
    unit_type(ti, 1, 4, 4, WEFT_STORAGE_SPARSE);
    wf_sparse_set *s = wf_sparse_create(&g_alloc, ti);
    assert_non_null(s);
    return s;
}

static void put(wf_sparse_set *s, uint32_t idx, int32_t v)
{
    assert_true(wf_sparse_reserve_page(s, &g_alloc, idx));
    assert_true(wf_sparse_reserve_dense(s, &g_alloc, 1));
    // a 16-byte buffer: the inlined copy has (dead) wide branches that
    // -Warray-bounds would otherwise flag for a lone int32_t
    int32_t buf[4] = {v, 0, 0, 0};
    wf_sparse_insert(s, wf_make_entity(idx, 1), buf, 7);
}

static int32_t value_of(wf_sparse_set *s, uint32_t idx)
{
    uint32_t d = wf_sparse_find(s, idx);
    assert_int_not_equal(d, WF_SPARSE_EMPTY);
    int32_t v;
    memcpy(&v, wf_column_ptr(&s->dense, d), sizeof v);
    return v;
}

// Lookup: owners E2, E4, E7; E4 -> slot 1; E3 -> none.
static void sparse_lookup_vector(void **state)
{
    (void)state;
    wf_type_info ti;
    wf_sparse_set *s = make_set(&ti);
    put(s, 2, 20);
    put(s, 4, 40);
    put(s, 7, 70);
    assert_int_equal(wf_sparse_find(s, 4), 1);
    assert_int_equal(value_of(s, 4), 40);
    assert_int_equal(wf_sparse_find(s, 3), WF_SPARSE_EMPTY);
    assert_int_equal(s->dense.ticks[1].added, 7);
    wf_sparse_destroy(s, &g_alloc);
    assert_int_equal(g_alloc.live_bytes, 0);
}

// Swap-remove: removing E4 moves E7 into slot 1.
static void sparse_swap_remove_vector(void **state)
{
    (void)state;
    wf_type_info ti;
    wf_sparse_set *s = make_set(&ti);
    put(s, 2, 20);
    put(s, 4, 40);
    put(s, 7, 70);
    wf_sparse_remove(s, 4);
    assert_int_equal(s->count, 2);
    assert_int_equal(wf_sparse_find(s, 4), WF_SPARSE_EMPTY);
    assert_int_equal(wf_sparse_find(s, 7), 1);
    assert_int_equal(s->owners[0], wf_make_entity(2, 1));
    assert_int_equal(s->owners[1], wf_make_entity(7, 1));
    assert_int_equal(value_of(s, 7), 70);
    assert_int_equal(value_of(s, 2), 20);
    wf_sparse_remove(s, 7); // last slot: nothing moves
    assert_int_equal(s->count, 1);
    assert_int_equal(wf_sparse_find(s, 2), 0);
    wf_sparse_destroy(s, &g_alloc);
}

// Pages are allocated only where indices live: a far index costs one page.
static void sparse_pages_follow_indices(void **state)
{
    (void)state;
    wf_type_info ti;
    wf_sparse_set *s = make_set(&ti);
    put(s, 5u * WF_SPARSE_PAGE_SIZE + 3u, 1);
    uint32_t pages = 0;
    for (uint32_t p = 0; p < s->page_count; p++) {
        pages += s->pages[p] != NULL;
    }
    assert_int_equal(pages, 1);
    assert_int_equal(wf_sparse_find(s, 3), WF_SPARSE_EMPTY);
    assert_int_equal(wf_sparse_find(s, 1000u * WF_SPARSE_PAGE_SIZE), WF_SPARSE_EMPTY);
    assert_int_equal(value_of(s, 5u * WF_SPARSE_PAGE_SIZE + 3u), 1);
    wf_sparse_destroy(s, &g_alloc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(sparse_lookup_vector, setup),
        cmocka_unit_test_setup(sparse_swap_remove_vector, setup),
        cmocka_unit_test_setup(sparse_pages_follow_indices, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

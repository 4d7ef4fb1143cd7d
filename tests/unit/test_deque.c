// tests/unit/test_deque.c - single-threaded semantics of the Chase-Lev deque.
// SPDX-License-Identifier: MIT
//
// The owner end is LIFO, the thief end FIFO, an empty deque says so at both
// ends, and growth keeps every item in place. Concurrency is covered by
// tests/stress/test_stress_deque.c (one owner, three thieves).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "task/deque.h"

// Items are small non-NULL integers disguised as pointers.
static void *item(uintptr_t i) { return (void *)(i + 1); }
static uintptr_t index_of(void *p) { return (uintptr_t)p - 1; }

static void deque_pop_is_lifo(void **state)
{
    (void)state;
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    wf_deque d;
    assert_true(wf_deque_init(&d, &a, NULL, 8));
    for (uintptr_t i = 0; i < 5; i++) {
        assert_true(wf_deque_push(&d, item(i)));
    }
    assert_int_equal(wf_deque_size_hint(&d), 5);
    for (uintptr_t i = 5; i-- > 0;) {
        assert_int_equal(index_of(wf_deque_pop(&d)), i);
    }
    assert_null(wf_deque_pop(&d));
    wf_deque_fini(&d);
    assert_int_equal(a.live_bytes, 0);
}

static void deque_steal_is_fifo(void **state)
{
    (void)state;
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    wf_deque d;
    assert_true(wf_deque_init(&d, &a, NULL, 8));
    for (uintptr_t i = 0; i < 6; i++) {
        assert_true(wf_deque_push(&d, item(i)));
    }
    void *out = NULL;
    for (uintptr_t i = 0; i < 3; i++) {
        assert_int_equal(wf_deque_steal(&d, &out), WF_STEAL_OK);
        assert_int_equal(index_of(out), i);
    }
    // Both ends meet in the middle: owner takes 5, 4; thief takes 3.
    assert_int_equal(index_of(wf_deque_pop(&d)), 5);
    assert_int_equal(index_of(wf_deque_pop(&d)), 4);
    assert_int_equal(wf_deque_steal(&d, &out), WF_STEAL_OK);
    assert_int_equal(index_of(out), 3);
    assert_int_equal(wf_deque_steal(&d, &out), WF_STEAL_EMPTY);
    assert_null(wf_deque_pop(&d));
    wf_deque_fini(&d);
}

static void deque_empty_at_both_ends(void **state)
{
    (void)state;
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    wf_deque d;
    assert_true(wf_deque_init(&d, &a, NULL, 1));
    assert_int_equal(wf_deque_capacity(&d), 2);
    void *out = item(99);
    assert_null(wf_deque_pop(&d));
    assert_int_equal(wf_deque_steal(&d, &out), WF_STEAL_EMPTY);
    assert_ptr_equal(out, item(99)); // untouched on EMPTY
    assert_int_equal(wf_deque_size_hint(&d), 0);
    // A popped-empty deque still works (bottom was restored).
    assert_true(wf_deque_push(&d, item(7)));
    assert_int_equal(index_of(wf_deque_pop(&d)), 7);
    assert_null(wf_deque_pop(&d));
    assert_true(wf_deque_push(&d, item(8)));
    assert_int_equal(wf_deque_steal(&d, &out), WF_STEAL_OK);
    assert_int_equal(index_of(out), 8);
    assert_null(wf_deque_pop(&d));
    wf_deque_fini(&d);
}

static void deque_grows_and_keeps_order(void **state)
{
    (void)state;
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    wf_deque d;
    assert_true(wf_deque_init(&d, &a, NULL, 4));
    assert_int_equal(wf_deque_capacity(&d), 4);
    // Advance top first so the live range wraps around the ring when growing.
    for (uintptr_t i = 0; i < 3; i++) {
        assert_true(wf_deque_push(&d, item(1000 + i)));
    }
    void *out = NULL;
    for (uintptr_t i = 0; i < 3; i++) {
        assert_int_equal(wf_deque_steal(&d, &out), WF_STEAL_OK);
    }
    const uintptr_t n = 1000;
    for (uintptr_t i = 0; i < n; i++) {
        assert_true(wf_deque_push(&d, item(i)));
    }
    assert_int_equal(wf_deque_capacity(&d), 1024);
    assert_int_equal(wf_deque_size_hint(&d), (int64_t)n);
    // FIFO from the top for the first half, LIFO from the bottom for the rest.
    for (uintptr_t i = 0; i < n / 2; i++) {
        assert_int_equal(wf_deque_steal(&d, &out), WF_STEAL_OK);
        assert_int_equal(index_of(out), i);
    }
    for (uintptr_t i = n; i-- > n / 2;) {
        assert_int_equal(index_of(wf_deque_pop(&d)), i);
    }
    assert_null(wf_deque_pop(&d));
    // Outgrown rings are kept until reclaim; reclaim when quiescent frees them.
    assert_non_null(d.retired);
    int64_t before = a.live_bytes;
    wf_deque_reclaim(&d);
    assert_null(d.retired);
    assert_true(a.live_bytes < before);
    wf_deque_fini(&d);
    assert_int_equal(a.live_bytes, 0);
}

// Growth that runs out of memory leaves the deque as it was.
static int fail_alloc_after;
static void *counting_alloc(size_t size, size_t align, void *user)
{
    (void)user;
    if (fail_alloc_after-- <= 0) {
        return NULL;
    }
    return test_malloc((size + align - 1) & ~(align - 1));
}
static void counting_free(void *p, size_t size, size_t align, void *user)
{
    (void)size;
    (void)align;
    (void)user;
    test_free(p);
}

static void deque_growth_out_of_memory_is_benign(void **state)
{
    (void)state;
    weft_allocator hook = {.alloc = counting_alloc, .free = counting_free, .user = NULL};
    wf_allocator a;
    wf_allocator_init(&a, &hook);
    fail_alloc_after = 1; // the initial ring only
    wf_deque d;
    assert_true(wf_deque_init(&d, &a, NULL, 2));
    assert_true(wf_deque_push(&d, item(0)));
    assert_true(wf_deque_push(&d, item(1)));
    assert_false(wf_deque_push(&d, item(2)));
    assert_int_equal(wf_deque_size_hint(&d), 2);
    assert_int_equal(index_of(wf_deque_pop(&d)), 1);
    assert_int_equal(index_of(wf_deque_pop(&d)), 0);
    wf_deque_fini(&d);
    fail_alloc_after = 0;
    assert_false(wf_deque_init(&d, &a, NULL, 2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deque_pop_is_lifo),
        cmocka_unit_test(deque_steal_is_fifo),
        cmocka_unit_test(deque_empty_at_both_ends),
        cmocka_unit_test(deque_grows_and_keeps_order),
        cmocka_unit_test(deque_growth_out_of_memory_is_benign),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/unit/test_alloc.c - the allocation path and the one growth policy:
// every capacity computation is checked at the edges of uint32_t and size_t.
// SPDX-License-Identifier: MIT
#include "unit.h"

// An allocator that refuses every block above `limit` bytes and records
// the largest request, so tests can ask for absurd capacities safely.
typedef struct capped {
    size_t limit;
    size_t largest;
    int64_t calls;
} capped;

static void *capped_alloc(size_t size, size_t align, void *user)
{
    capped *c = user;
    c->calls++;
    if (size > c->largest) {
        c->largest = size;
    }
    if (size > c->limit || size == 0) {
        return NULL;
    }
    if (align < sizeof(void *)) {
        align = sizeof(void *);
    }
    return aligned_alloc(align, (size + align - 1) & ~(align - 1));
}

static void capped_free(void *ptr, size_t size, size_t align, void *user)
{
    (void)size;
    (void)align;
    (void)user;
    free(ptr);
}

static wf_allocator capped_allocator(capped *c, size_t limit)
{
    memset(c, 0, sizeof *c);
    c->limit = limit;
    weft_allocator hook = {.alloc = capped_alloc, .free = capped_free, .user = c};
    wf_allocator a;
    wf_allocator_init(&a, &hook);
    return a;
}

// The policy: first, then doubling, never below need.
static void alloc_grow_cap_policy(void **state)
{
    (void)state;
    assert_int_equal(wf_grow_cap(0, 1, 8, UINT32_MAX, 4), 8);
    assert_int_equal(wf_grow_cap(0, 100, 8, UINT32_MAX, 4), 100);
    assert_int_equal(wf_grow_cap(8, 9, 8, UINT32_MAX, 4), 16);
    assert_int_equal(wf_grow_cap(8, 40, 8, UINT32_MAX, 4), 40);
    assert_int_equal(wf_grow_cap(16, 16, 8, UINT32_MAX, 4), 16); // no growth needed
    assert_int_equal(wf_grow_cap(0, 0, 8, UINT32_MAX, 4), 0);    // nothing needed
}

// Doubling past 2^31 saturates at the limit instead of wrapping to 0. With
// 1-byte elements the limit is the uint32_t count on a 64-bit size_t, and
// WF_ALLOC_MAX (2^31 - 1 bytes) on a 32-bit one.
static void alloc_grow_cap_saturates_at_uint32(void **state)
{
    (void)state;
    uint32_t half = 0x80000000u;
#if SIZE_MAX > UINT32_MAX
    assert_int_equal(wf_grow_cap(half, (uint64_t)half + 1, 8, UINT32_MAX, 1), UINT32_MAX);
    assert_int_equal(wf_grow_cap(UINT32_MAX - 1, UINT32_MAX, 8, UINT32_MAX, 1), UINT32_MAX);
#else
    uint32_t quarter = 0x40000000u;
    assert_int_equal(wf_grow_cap(quarter, (uint64_t)quarter + 1, 8, UINT32_MAX, 1),
                     WF_ALLOC_MAX);
    assert_int_equal(wf_grow_cap(half - 2, half - 1, 8, UINT32_MAX, 1), WF_ALLOC_MAX);
    // 2^31 bytes do not fit below PTRDIFF_MAX: refused, not wrapped
    assert_int_equal(wf_grow_cap(half - 1, half, 8, UINT32_MAX, 1), 0);
#endif
    assert_int_equal(wf_grow_cap(UINT32_MAX, (uint64_t)UINT32_MAX + 1, 8, UINT32_MAX, 1), 0);
    assert_int_equal(wf_grow_cap(0, UINT64_MAX, 8, UINT32_MAX, 1), 0);
}

// A signed index type sets a lower limit; need above it fails.
static void alloc_grow_cap_respects_limit(void **state)
{
    (void)state;
    uint32_t lim = INT32_MAX;
    // 8-byte elements: the limit binds only where 2^31 of them fit a size_t
#if SIZE_MAX > UINT32_MAX
    assert_int_equal(wf_grow_cap(0x40000000u, 0x40000001u, 4, lim, 8), lim);
#else
    assert_int_equal(wf_grow_cap(0x08000000u, 0x08000001u, 4, lim, 8), WF_ALLOC_MAX / 8);
#endif
    assert_int_equal(wf_grow_cap(0x04000000u, 0x04000001u, 4, lim, 1), 0x08000000u);
    assert_int_equal(wf_grow_cap(0x40000000u, 0x40000001u, 4, lim, 1), lim);
    assert_int_equal(wf_grow_cap(lim, (uint64_t)lim + 1, 4, lim, 8), 0);
    assert_int_equal(wf_grow_cap(0, 100, 4096, 64, 8), 0);
    assert_int_equal(wf_grow_cap(0, 10, 4096, 64, 8), 64); // first clamped to the limit
}

// The byte count never exceeds WF_ALLOC_MAX, so cap * elem cannot wrap a
// size_t: with a large element (as on a 32-bit size_t) the capacity is
// clamped to what fits, and a need beyond that fails.
static void alloc_grow_cap_bounds_bytes(void **state)
{
    (void)state;
    size_t elem = WF_ALLOC_MAX / 1000u;
    assert_int_equal(wf_grow_cap(600, 601, 8, UINT32_MAX, elem), 1000);
    assert_true((size_t)wf_grow_cap(600, 601, 8, UINT32_MAX, elem) * elem <= WF_ALLOC_MAX);
    assert_int_equal(wf_grow_cap(1000, 1001, 8, UINT32_MAX, elem), 0);
    assert_int_equal(wf_grow_cap(0, 1, 8, UINT32_MAX, WF_ALLOC_MAX), 1);
    assert_int_equal(wf_grow_cap(0, 2, 8, UINT32_MAX, WF_ALLOC_MAX), 0);
    assert_int_equal(wf_grow_cap(0, 1, 8, UINT32_MAX, SIZE_MAX), 0);
}

static void alloc_grow_cap_pow2_edges(void **state)
{
    (void)state;
    assert_int_equal(wf_grow_cap_pow2(0, 1, 64, 16), 64);
    assert_int_equal(wf_grow_cap_pow2(64, 65, 64, 16), 128);
    assert_int_equal(wf_grow_cap_pow2(64, 1000, 64, 16), 1024);
#if SIZE_MAX > UINT32_MAX
    assert_int_equal(wf_grow_cap_pow2(0x40000000u, 0x40000001u, 64, 1), 0x80000000u);
#else
    // 2^31 bytes exceed WF_ALLOC_MAX on a 32-bit size_t
    assert_int_equal(wf_grow_cap_pow2(0x40000000u, 0x40000001u, 64, 1), 0);
    assert_int_equal(wf_grow_cap_pow2(0x20000000u, 0x20000001u, 64, 1), 0x40000000u);
#endif
    // the next power of two, 2^32, does not fit a uint32_t capacity
    assert_int_equal(wf_grow_cap_pow2(0x80000000u, 0x80000001u, 64, 1), 0);
    assert_int_equal(wf_grow_cap_pow2(0, UINT64_MAX, 64, 1), 0);
    // bounded by bytes as well
    assert_int_equal(wf_grow_cap_pow2(0, 5, 4, WF_ALLOC_MAX / 4), 0);
    assert_int_equal(wf_grow_cap_pow2(0, 3, 4, WF_ALLOC_MAX / 4), 4);
}

// A need above 2^31 used to double the capacity to 0 and loop for ever;
// now it asks for the saturated capacity once, and the refusal leaves the
// array as it was.
static void alloc_grow_huge_need_fails_cleanly(void **state)
{
    (void)state;
    capped c;
    wf_allocator a = capped_allocator(&c, 1u << 20);
    uint32_t *data = NULL;
    uint32_t cap = 0;
    assert_true(wf_grow(&a, (void **)&data, &cap, 5, sizeof *data, _Alignof(uint32_t)));
    assert_int_equal(cap, 8);
    data[0] = 42;
    assert_false(wf_grow(&a, (void **)&data, &cap, 0x80000001u, sizeof *data,
                         _Alignof(uint32_t)));
    assert_int_equal(cap, 8);
    assert_int_equal(data[0], 42);
    assert_true(c.largest >= (size_t)0x80000001u * sizeof *data);
    assert_false(
        wf_grow(&a, (void **)&data, &cap, UINT32_MAX, sizeof *data, _Alignof(uint32_t)));
    assert_int_equal(cap, 8);
    wf_free(&a, data, cap * sizeof *data, _Alignof(uint32_t));
    assert_int_equal(wf_alloc_live(&a), 0);
}

// The default allocator rounds sizes up to the alignment; a size near
// SIZE_MAX used to wrap to a zero-byte block that the caller then wrote.
static void alloc_default_refuses_wrapping_sizes(void **state)
{
    (void)state;
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    assert_null(wf_alloc(&a, SIZE_MAX, 16));
    assert_null(wf_alloc(&a, SIZE_MAX - 3, 64));
    assert_null(wf_alloc(&a, WF_ALLOC_MAX + 1, 8));
    assert_int_equal(wf_alloc_live(&a), 0);
}

// The entity free stack at 2^31 entries: growth used to compute a
// capacity of 0, allocate nothing and copy 8 GiB into it. Now the index
// asks for the saturated size, is refused, and retires the index (benign).
static void alloc_entity_free_stack_growth_at_2_31(void **state)
{
    (void)state;
    capped c;
    wf_allocator a = capped_allocator(&c, 1u << 20);
    wf_entity_index ix;
    wf_entities_init(&ix);
    assert_true(wf_entities_reserve(&ix, &a, 4));
    weft_entity e = wf_entities_take(&ix);
    assert_true(e != 0);
    ix.records[(uint32_t)e].arch = 0;
    // pretend the stack is full at 2^31 entries (never read: only the
    // growth path runs, and it is refused)
    uint32_t fake_slot = 0;
    ix.free_stack = &fake_slot;
    ix.free_len = 0x80000000u;
    ix.free_cap = 0x80000000u;
    wf_atomic_store_relaxed_i64(&ix.cursor, (int64_t)ix.free_len);
    uint32_t retired = ix.retired;
    wf_entities_release(&ix, &a, (uint32_t)e);
    assert_int_equal(ix.retired, retired + 1);
    assert_int_equal(ix.free_len, 0x80000000u);
    assert_ptr_equal(ix.free_stack, &fake_slot);
    assert_true(c.largest >= (size_t)0x80000001u * sizeof(uint32_t));
    ix.free_stack = NULL;
    ix.free_len = ix.free_cap = 0;
    wf_entities_fini(&ix, &a);
    assert_int_equal(wf_alloc_live(&a), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(alloc_grow_cap_policy),
        cmocka_unit_test(alloc_grow_cap_saturates_at_uint32),
        cmocka_unit_test(alloc_grow_cap_respects_limit),
        cmocka_unit_test(alloc_grow_cap_bounds_bytes),
        cmocka_unit_test(alloc_grow_cap_pow2_edges),
        cmocka_unit_test(alloc_grow_huge_need_fails_cleanly),
        cmocka_unit_test(alloc_default_refuses_wrapping_sizes),
        cmocka_unit_test(alloc_entity_free_stack_growth_at_2_31),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

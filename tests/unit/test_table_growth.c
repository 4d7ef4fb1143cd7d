// tests/unit/test_table_growth.c - table and column growth through
// wf_realloc: rows survive every growth path, a growth that fails partway
// leaves the table unchanged and leaks nothing, and move hooks still see
// every relocation.
// SPDX-License-Identifier: MIT
#include "unit.h"

// Counting allocator that refuses the allocation numbered `fail_at`
// (1-based; 0 never) and every block above `limit` bytes.
typedef struct counting {
    int64_t calls;
    int64_t fail_at;
    int64_t live_blocks;
} counting;

static void *counting_alloc(size_t size, size_t align, void *user)
{
    counting *c = user;
    c->calls++;
    if (c->calls == c->fail_at) {
        return NULL;
    }
    if (align < sizeof(void *)) {
        align = sizeof(void *);
    }
    void *p = aligned_alloc(align, (size + align - 1) & ~(align - 1));
    c->live_blocks += p != NULL;
    return p;
}

static void counting_free(void *ptr, size_t size, size_t align, void *user)
{
    (void)size;
    (void)align;
    counting *c = user;
    c->live_blocks--;
    free(ptr);
}

// Three columns (8 B, 4 B, tag with ticks) holding `rows` rows whose values
// are derived from the row number.
typedef struct grow_fx {
    wf_type_info ti[3];
    wf_type_info *infos[4];
    wf_registry reg;
    wf_table *t;
} grow_fx;

static void grow_fx_init(grow_fx *g, wf_allocator *a)
{
    unit_type(&g->ti[0], 1, 8, 8, WEFT_STORAGE_TABLE);
    unit_type(&g->ti[1], 2, 4, 4, WEFT_STORAGE_TABLE);
    unit_type(&g->ti[2], 3, 0, 1, WEFT_STORAGE_TABLE);
    g->infos[0] = NULL;
    for (int i = 0; i < 3; i++) {
        g->infos[i + 1] = &g->ti[i];
    }
    memset(&g->reg, 0, sizeof g->reg);
    g->reg.infos = g->infos;
    g->reg.count = 3;
    weft_component ids[3] = {1, 2, 3};
    g->t = wf_table_create(a, &g->reg, ids, 3, 0);
    assert_non_null(g->t);
}

static void grow_fx_push(grow_fx *g, uint32_t rows)
{
    for (uint32_t r = g->t->count; r < rows; r++) {
        uint32_t row = wf_table_push(g->t, wf_make_entity(r + 1, 1), 7);
        // 16-byte sources: the inlined copy reads by size class, and the
        // compiler cannot see that column 1 copies only 4 of them
        uint64_t v8[2] = {1000u + r, 0};
        uint32_t v4[4] = {2000u + r, 0, 0, 0};
        wf_column_construct(&g->t->cols[0], row, v8, 5 + r);
        wf_column_construct(&g->t->cols[1], row, v4, 5 + r);
        wf_column_construct(&g->t->cols[2], row, NULL, 5 + r);
    }
}

static void grow_fx_verify(const grow_fx *g, uint32_t rows)
{
    assert_int_equal(g->t->count, rows);
    for (uint32_t r = 0; r < rows; r++) {
        uint64_t v8;
        uint32_t v4;
        memcpy(&v8, wf_column_ptr(&g->t->cols[0], r), 8);
        memcpy(&v4, wf_column_ptr(&g->t->cols[1], r), 4);
        assert_int_equal(v8, 1000u + r);
        assert_int_equal(v4, 2000u + r);
        assert_int_equal(g->t->entities[r], wf_make_entity(r + 1, 1));
        for (int c = 0; c < 3; c++) {
            assert_int_equal(g->t->cols[c].ticks[r].added, 5 + r);
        }
    }
}

// The default allocator grows blocks with the C library's realloc; a
// large table (several MiB per block) keeps every row across doublings,
// and the live-byte count follows the resizes.
static void growth_default_allocator_keeps_rows(void **state)
{
    (void)state;
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    grow_fx g;
    grow_fx_init(&g, &a);
    uint32_t rows = 1u << 20;
    for (uint32_t n = 1; n <= rows; n *= 4) {
        assert_true(wf_table_reserve(g.t, &a, n));
        grow_fx_push(&g, n);
    }
    grow_fx_verify(&g, rows);
    assert_true(wf_alloc_live(&a) >= (int64_t)rows * (8 + 4 + 3 * 8 + 8));
    wf_table_destroy(g.t, &a);
    assert_int_equal(wf_alloc_live(&a), 0);
}

// With a user hook (no realloc) growth allocates, copies and frees. Each
// allocation of a growth is made to fail in turn: the table keeps its
// rows and capacity, blocks that did grow are kept (and freed later), and
// the next growth succeeds.
static void growth_failing_partway_leaves_table_unchanged(void **state)
{
    (void)state;
    for (int64_t k = 1; k <= 7; k++) {
        counting c = {0};
        weft_allocator hook = {.alloc = counting_alloc, .free = counting_free, .user = &c};
        wf_allocator a;
        wf_allocator_init(&a, &hook);
        grow_fx g;
        grow_fx_init(&g, &a);
        assert_true(wf_table_reserve(g.t, &a, 100));
        grow_fx_push(&g, 100);
        uint32_t cap = g.t->cap;
        c.fail_at = c.calls + k;
        bool grown = wf_table_reserve(g.t, &a, 1000);
        if (!grown) {
            assert_int_equal(g.t->cap, cap);
        }
        grow_fx_verify(&g, 100);
        c.fail_at = 0;
        assert_true(wf_table_reserve(g.t, &a, 1000));
        assert_true(g.t->cap >= 1000);
        grow_fx_push(&g, 1000);
        grow_fx_verify(&g, 1000);
        wf_table_destroy(g.t, &a);
        assert_int_equal(wf_alloc_live(&a), 0);
        assert_int_equal(c.live_blocks, 0);
    }
}

// wf_realloc through a hook copies min(old, new) bytes and frees the old
// block; a refused resize returns NULL and leaves the old block owned.
static void realloc_hook_copies_and_fails_cleanly(void **state)
{
    (void)state;
    counting c = {0};
    weft_allocator hook = {.alloc = counting_alloc, .free = counting_free, .user = &c};
    wf_allocator a;
    wf_allocator_init(&a, &hook);
    uint8_t *p = wf_realloc(&a, NULL, 0, 64, 16);
    assert_non_null(p);
    for (int i = 0; i < 64; i++) {
        p[i] = (uint8_t)i;
    }
    c.fail_at = c.calls + 1;
    assert_null(wf_realloc(&a, p, 64, 4096, 16));
    assert_int_equal(wf_alloc_live(&a), 64);
    uint8_t *q = wf_realloc(&a, p, 64, 4096, 16);
    assert_non_null(q);
    assert_int_equal(wf_alloc_live(&a), 4096);
    for (int i = 0; i < 64; i++) {
        assert_int_equal(q[i], i);
    }
    q = wf_realloc(&a, q, 4096, 32, 16); // shrink keeps the prefix
    assert_non_null(q);
    assert_int_equal(q[31], 31);
    wf_free(&a, q, 32, 16);
    assert_int_equal(wf_alloc_live(&a), 0);
    assert_int_equal(c.live_blocks, 0);
}

// Over-aligned blocks never go through the C library's realloc (it keeps
// only malloc's alignment): the resized block keeps its alignment.
static void realloc_default_keeps_large_alignment(void **state)
{
    (void)state;
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    uint8_t *p = wf_alloc(&a, 256, 256);
    assert_non_null(p);
    p[0] = 9;
    size_t size = 256;
    while (size < (8u << 20)) {
        p = wf_realloc(&a, p, size, size * 8, 256);
        size *= 8;
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 256, 0);
        assert_int_equal(p[0], 9);
    }
    wf_free(&a, p, size, 256);
    assert_int_equal(wf_alloc_live(&a), 0);
}

// The default allocator gives large blocks mappings of their own and
// resizes them in place; a block crossing that size, up or down, changes
// kind by copying. Contents survive every step, alignment up to a page
// holds, and the live-byte count follows.
static void realloc_default_across_the_mapping_size(void **state)
{
    (void)state;
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    static const size_t sizes[] = {4000, 3u << 20, 100000, 9u << 20, 24u << 20, 2u << 20, 64};
    static const size_t aligns[] = {8, 64, 4096};
    for (int k = 0; k < 3; k++) {
        size_t align = aligns[k];
        size_t cur = 64;
        uint8_t *p = wf_alloc(&a, cur, align);
        assert_non_null(p);
        for (size_t i = 0; i < cur; i++) {
            p[i] = (uint8_t)(i * 7);
        }
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t next = sizes[s];
            p = wf_realloc(&a, p, cur, next, align);
            assert_non_null(p);
            assert_int_equal((uintptr_t)p % align, 0);
            size_t keep = cur < next ? cur : next;
            for (size_t i = 0; i < keep; i += 997) {
                assert_int_equal(p[i], (uint8_t)(i * 7));
            }
            for (size_t i = keep; i < next; i++) {
                p[i] = (uint8_t)(i * 7);
            }
            cur = next;
            assert_int_equal(wf_alloc_live(&a), (int64_t)cur);
        }
        wf_free(&a, p, cur, align);
        assert_int_equal(wf_alloc_live(&a), 0);
    }
}

// A type with a move hook is relocated through it on growth, never by
// realloc: the hook sees every row it moves.
static int32_t g_moved;
static void counting_move(void *dst, void *src, int32_t count, void *user)
{
    (void)user;
    memcpy(dst, src, (size_t)count * 8);
    g_moved += count;
}

static void growth_uses_move_hook(void **state)
{
    (void)state;
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    grow_fx g;
    grow_fx_init(&g, &a);
    wf_table_destroy(g.t, &a);
    g.ti[0].trivial = false;
    g.ti[0].hooks.move = counting_move;
    weft_component ids[3] = {1, 2, 3};
    g.t = wf_table_create(&a, &g.reg, ids, 3, 0);
    assert_non_null(g.t);
    g_moved = 0;
    assert_true(wf_table_reserve(g.t, &a, 8));
    grow_fx_push(&g, 8);
    assert_true(wf_table_reserve(g.t, &a, 9));
    assert_int_equal(g_moved, 8);
    grow_fx_push(&g, 9);
    grow_fx_verify(&g, 9);
    wf_table_destroy(g.t, &a);
    assert_int_equal(wf_alloc_live(&a), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(growth_default_allocator_keeps_rows),
        cmocka_unit_test(growth_failing_partway_leaves_table_unchanged),
        cmocka_unit_test(realloc_hook_copies_and_fails_cleanly),
        cmocka_unit_test(realloc_default_keeps_large_alignment),
        cmocka_unit_test(realloc_default_across_the_mapping_size),
        cmocka_unit_test(growth_uses_move_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

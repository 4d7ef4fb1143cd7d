// tests/unit/test_deque_stress.c - one owner and three thieves race over 1M items.
// SPDX-License-Identifier: MIT
//
// The main thread owns the deque: it pushes random-sized batches (starting
// from a tiny ring, so growth happens while thieves are stealing) and pops a
// random part of each batch back, which keeps hitting the last-item race
// between pop and steal. Three thief threads steal until the owner says it
// is done. Every taker records itself in taken_by[item]; all assertions run
// on the main thread after the joins: each item was taken exactly once, and
// the thieves did get some.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "task/deque.h"

// 1M items take ~3 s under TSan on 2 cores, so no sanitizer scaling is needed.
#define STRESS_ITEMS 1000000u
#define STRESS_THIEVES 3

typedef struct thief {
    wf_thread thread;
    wf_deque *deque;
    wf_atomic_u32 *done;
    uint8_t *taken_by;   // shared; each slot written by its one taker
    uint32_t id;         // 2.. (1 is the owner)
    uint64_t stolen;     // this thief's count; read after join
    uint64_t aborts;
} thief;

static void *item(uint32_t i) { return (void *)((uintptr_t)i + 1); }
static uint32_t index_of(void *p) { return (uint32_t)((uintptr_t)p - 1); }

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void thief_main(void *arg)
{
    thief *t = arg;
    for (;;) {
        // Acquire: pairs with the owner's release store of done, after its
        // last pop found the deque empty.
        uint32_t done = wf_atomic_load_acquire_u32(t->done);
        void *out = NULL;
        wf_steal_result r = wf_deque_steal(t->deque, &out);
        if (r == WF_STEAL_OK) {
            uint32_t i = index_of(out);
            t->taken_by[i] = (uint8_t)(t->taken_by[i] ? 0xFF : t->id);
            t->stolen++;
        } else if (r == WF_STEAL_ABORT) {
            t->aborts++;
        } else if (done) {
            return;
        }
    }
}

static void deque_one_owner_three_thieves(void **state)
{
    (void)state;
    wf_allocator a;
    wf_allocator_init(&a, NULL);
    wf_deque d;
    assert_true(wf_deque_init(&d, &a, NULL, 2));
    wf_atomic_u32 done;
    wf_atomic_init_u32(&done, 0);
    uint8_t *taken_by = calloc(STRESS_ITEMS, 1);
    assert_non_null(taken_by);

    thief thieves[STRESS_THIEVES];
    for (uint32_t k = 0; k < STRESS_THIEVES; k++) {
        thieves[k] = (thief){.deque = &d, .done = &done, .taken_by = taken_by,
                             .id = k + 2};
        assert_true(wf_thread_create(&thieves[k].thread, thief_main, &thieves[k]));
    }

    uint64_t rng = 42, popped = 0;
    uint32_t next = 0;
    while (next < STRESS_ITEMS) {
        uint32_t batch = 1 + (uint32_t)(splitmix(&rng) % 64);
        for (uint32_t k = 0; k < batch && next < STRESS_ITEMS; k++) {
            if (!wf_deque_push(&d, item(next++))) {
                fail_msg("push ran out of memory");
            }
        }
        uint32_t pops = (uint32_t)(splitmix(&rng) % (batch + 1));
        for (uint32_t k = 0; k < pops; k++) {
            void *p = wf_deque_pop(&d);
            if (!p) {
                break;
            }
            uint32_t i = index_of(p);
            taken_by[i] = (uint8_t)(taken_by[i] ? 0xFF : 1);
            popped++;
        }
    }
    // Drain what the thieves left, then tell them to stop.
    for (void *p; (p = wf_deque_pop(&d)) != NULL;) {
        uint32_t i = index_of(p);
        taken_by[i] = (uint8_t)(taken_by[i] ? 0xFF : 1);
        popped++;
    }
    // Release: pairs with the thieves' acquire load of done.
    wf_atomic_store_release_u32(&done, 1);

    uint64_t stolen = 0;
    for (uint32_t k = 0; k < STRESS_THIEVES; k++) {
        wf_thread_join(&thieves[k].thread);
        stolen += thieves[k].stolen;
    }
    assert_int_equal(popped + stolen, STRESS_ITEMS);
    uint32_t missing = 0, twice = 0;
    for (uint32_t i = 0; i < STRESS_ITEMS; i++) {
        missing += taken_by[i] == 0;
        twice += taken_by[i] == 0xFF;
    }
    assert_int_equal(missing, 0);
    assert_int_equal(twice, 0);
    assert_true(stolen > 0);
    assert_true(wf_deque_capacity(&d) > 2); // it grew while being stolen from
    free(taken_by);
    wf_deque_fini(&d);
    assert_int_equal(a.live_bytes, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deque_one_owner_three_thieves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

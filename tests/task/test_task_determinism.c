// tests/task/test_task_determinism.c - WEFT_TASK_DETERMINISTIC (weft.h,
// docs/tasks.md): four parallel systems spawn tasks every frame from
// whichever worker runs them; each task hashes its input for a
// data-dependent time (with yields, so tasks finish in a different order on
// every run) and its apply step writes the result back and sometimes spawns
// an entity (entity ids depend on the order of the spawns, so the world
// hash depends on the order the apply steps run in). Run with 1, 2 and 4
// schedule workers and async compute threads, a fresh world each time: the
// world hash after every frame must be the same. The apply count must equal
// the spawn count (each task applied exactly once), and every result must
// be the value its input gives (the apply step recomputes it on the
// driver). Were the apply steps run in completion order, the spawned
// entities' ids, and so the hashes, would follow the scheduling.
// In the build without threads only the 1-thread run is made (the tasks
// then run at weft_tasks_tick on the calling thread) and its own checks.
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "needs_threads.h"
#include "test_world.h"
#include "weft.h"

#define ENTITIES 512
#define SYSTEMS 4
#define FRAMES 24
#define DRAIN 4 // frames after the last spawn: every task is due by then

typedef struct task_in {
    weft_entity e;
    int64_t val;
    int64_t frame;
} task_in;

typedef struct sim {
    weft_world *w;
    weft_component val;
    weft_component born; // tag-like: the frame an applied task spawned it
    atomic_int spawned;
    atomic_int applied;
    atomic_int bad;
    int64_t frame;
} sim;

typedef struct sys_user {
    sim *s;
    int k;
} sys_user;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int64_t expected_result(const task_in *in)
{
    uint64_t h = (uint64_t)in->val * 31u + (uint64_t)in->frame;
    int rounds = (int)(mix(h) % 3000u);
    for (int i = 0; i < rounds; i++) {
        h = mix(h);
    }
    return (int64_t)(h % 1000000u);
}

// The result block: the value and the input it came from.
typedef struct task_out {
    int64_t value;
    task_in in;
} task_out;

static weft_status hash_task(weft_task_ctx *ctx, const void *input, void *result, void *user)
{
    (void)ctx;
    (void)user;
    task_out out;
    memcpy(&out.in, input, sizeof out.in);
    if (mix((uint64_t)out.in.val) % 3u == 0) {
        sched_yield(); // jitter: completion order differs run to run
    }
    out.value = expected_result(&out.in);
    memcpy(result, &out, sizeof out);
    return WEFT_OK;
}

// Writes the result back to its entity and, for one result in five, spawns
// an entity (whose id depends on the order apply steps run in).
static void apply_out(weft_world *w, weft_commands *cmds, const void *result, void *user)
{
    sim *s = user;
    task_out out;
    memcpy(&out, result, sizeof out);
    atomic_fetch_add(&s->applied, 1);
    if (out.value != expected_result(&out.in) || !weft_get(w, out.in.e, s->val, sizeof(int64_t))) {
        atomic_fetch_add(&s->bad, 1); // a wrong result, or its entity is gone
        return;
    }
    if (weft_cmd_insert(cmds, out.in.e, s->val, &out.value, sizeof out.value) != WEFT_OK) {
        atomic_fetch_add(&s->bad, 1);
    }
    if (out.value % 5 == 0) {
        int64_t v = out.value % 1000;
        weft_value vals[2] = {{s->val, sizeof v, &v}, {s->born, sizeof out.in.frame, &out.in.frame}};
        if (weft_cmd_spawn(cmds, vals, 2) == 0) {
            atomic_fetch_add(&s->bad, 1);
        }
    }
}

static void spawner(weft_system_ctx *ctx, void *user)
{
    sys_user *u = user;
    sim *s = u->s;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        atomic_fetch_add(&s->bad, 1);
        return;
    }
    while (weft_iter_next(&it)) {
        const weft_entity *es = weft_iter_entities(&it);
        const int64_t *vals = weft_iter_field(&it, 0, sizeof(int64_t));
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            uint32_t idx = weft_entity_index(es[i]);
            if ((int)(idx % SYSTEMS) != u->k || (mix(idx + (uint64_t)s->frame * 7919u) % 6u)) {
                continue; // this system's entities, about one in six per frame
            }
            task_in in = {es[i], vals[i], s->frame};
            weft_task_desc d;
            memset(&d, 0, sizeof d);
            d.fn = hash_task;
            d.user = s;
            d.input = &in;
            d.input_size = sizeof in;
            d.result_size = sizeof(task_out);
            d.flags = WEFT_TASK_DETERMINISTIC;
            d.apply = apply_out;
            d.apply_delay = 1u + idx % 3u;
            // unique among tasks due together: entity index and spawn frame
            d.order = ((uint64_t)idx << 20) | (uint64_t)s->frame;
            weft_task t = 0;
            if (weft_task_spawn(s->w, &d, &t) != WEFT_OK ||
                weft_task_detach(s->w, t) != WEFT_OK) {
                atomic_fetch_add(&s->bad, 1);
                continue;
            }
            atomic_fetch_add(&s->spawned, 1);
        }
    }
}

// Runs the simulation on `threads` workers and task threads; hashes[f] is
// the world hash after frame f.
static void run_sim(int32_t threads, uint64_t *hashes)
{
    tw_fixture *f = tw_fixture_new();
    assert_non_null(f);
    sim s;
    memset(&s, 0, sizeof s);
    s.w = f->w;
    if (threads > 1) {
        assert_int_equal(weft_world_set_threads(s.w, threads), WEFT_OK);
        assert_int_equal(weft_world_set_task_threads(s.w, WEFT_TASK_POOL_ASYNC_COMPUTE, threads),
                         WEFT_OK);
    }
    s.val = tw_comp(s.w, "det.Val", sizeof(int64_t), 0, WEFT_STORAGE_DEFAULT, 0);
    s.born = tw_comp(s.w, "det.Born", sizeof(int64_t), 0, WEFT_STORAGE_DEFAULT, 0);
    for (int64_t i = 0; i < ENTITIES; i++) {
        int64_t v = i * 17;
        weft_value val = {s.val, sizeof v, &v};
        assert_int_not_equal(weft_spawn_with(s.w, &val, 1), 0);
    }
    weft_schedule *sched = weft_schedule_create(s.w, "det");
    assert_non_null(sched);
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0].id = s.val;
    q.terms[0].access = WEFT_ACCESS_READ;
    q.term_count = 1;
    sys_user users[SYSTEMS];
    for (int k = 0; k < SYSTEMS; k++) {
        users[k].s = &s;
        users[k].k = k;
        char name[16];
        snprintf(name, sizeof name, "spawner%d", k);
        weft_system_desc d;
        memset(&d, 0, sizeof d);
        d.name = name;
        d.fn = spawner;
        d.user = &users[k];
        d.queries = &q;
        d.query_count = 1;
        assert_int_not_equal(weft_schedule_add_system(sched, &d), 0);
    }
    for (int frame = 0; frame < FRAMES + DRAIN; frame++) {
        s.frame = frame;
        if (frame < FRAMES) {
            assert_int_equal(weft_schedule_run(sched, 0.016), WEFT_OK);
        }
        assert_int_equal(weft_tasks_tick(s.w), WEFT_OK);
        hashes[frame] = weft_world_hash(s.w);
    }
    assert_int_equal(atomic_load(&s.bad), 0);
    assert_true(atomic_load(&s.spawned) > 100);
    assert_int_equal(atomic_load(&s.applied), atomic_load(&s.spawned));
    assert_int_equal(weft_world_task_count(s.w), 0); // detached: reclaimed
    assert_int_equal(weft_world_check(s.w), WEFT_OK);
    tw_fixture_free(f);
}

static void test_hash_same_on_1_2_4_threads(void **state)
{
    (void)state;
    uint64_t one[FRAMES + DRAIN];
    run_sim(1, one);
#if !defined(WEFT_THREADS) || WEFT_THREADS
    static const int32_t counts[] = {2, 4};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        uint64_t other[FRAMES + DRAIN];
        run_sim(counts[c], other);
        for (int f = 0; f < FRAMES + DRAIN; f++) {
            if (one[f] != other[f]) {
                fail_msg("frame %d: hash %016llx on 1 thread, %016llx on %d", f,
                         (unsigned long long)one[f], (unsigned long long)other[f],
                         counts[c]);
            }
        }
    }
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_same_on_1_2_4_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

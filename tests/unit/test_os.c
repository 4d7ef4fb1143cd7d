// tests/unit/test_os.c - the OS layer (weft_os_api): a counting table sees
// every thread, lock and clock call of a multi-threaded schedule run; bad
// tables and late replacement are refused with a status and a message; the
// build without threads (WEFT_THREADS=OFF) refuses what needs threads.
// Black box: weft.h only. (That nothing bypasses the table is also checked
// statically: tests/layering/check_os_layer.sh over the objects and src/.)
// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "weft.h"

// ---- the counting table: forwards to the built-in one ----

static weft_os_api real;
static atomic_long n_create, n_join, n_yield, n_cpu, n_mutex_init, n_mutex_fini, n_lock,
    n_unlock, n_cond_init, n_cond_fini, n_wait, n_signal, n_broadcast, n_now, n_log;
static char last_log[512];

static bool c_create(weft_os_object *t, void (*fn)(void *), void *arg, void *user)
{
    atomic_fetch_add(&n_create, 1);
    return real.thread_create(t, fn, arg, user);
}
static void c_join(weft_os_object *t, void *user)
{
    atomic_fetch_add(&n_join, 1);
    real.thread_join(t, user);
}
static void c_yield(void *user)
{
    atomic_fetch_add(&n_yield, 1);
    real.thread_yield(user);
}
static uint32_t c_cpu(void *user)
{
    atomic_fetch_add(&n_cpu, 1);
    return real.cpu_count(user);
}
static bool c_mutex_init(weft_os_object *m, void *user)
{
    atomic_fetch_add(&n_mutex_init, 1);
    return real.mutex_init(m, user);
}
static void c_mutex_fini(weft_os_object *m, void *user)
{
    atomic_fetch_add(&n_mutex_fini, 1);
    real.mutex_fini(m, user);
}
static void c_lock(weft_os_object *m, void *user)
{
    atomic_fetch_add(&n_lock, 1);
    real.mutex_lock(m, user);
}
static void c_unlock(weft_os_object *m, void *user)
{
    atomic_fetch_add(&n_unlock, 1);
    real.mutex_unlock(m, user);
}
static bool c_cond_init(weft_os_object *c, void *user)
{
    atomic_fetch_add(&n_cond_init, 1);
    return real.cond_init(c, user);
}
static void c_cond_fini(weft_os_object *c, void *user)
{
    atomic_fetch_add(&n_cond_fini, 1);
    real.cond_fini(c, user);
}
static void c_wait(weft_os_object *c, weft_os_object *m, void *user)
{
    atomic_fetch_add(&n_wait, 1);
    real.cond_wait(c, m, user);
}
static void c_signal(weft_os_object *c, void *user)
{
    atomic_fetch_add(&n_signal, 1);
    real.cond_signal(c, user);
}
static void c_broadcast(weft_os_object *c, void *user)
{
    atomic_fetch_add(&n_broadcast, 1);
    real.cond_broadcast(c, user);
}
static uint64_t c_now(void *user)
{
    atomic_fetch_add(&n_now, 1);
    return real.now_ns(user);
}
// Only ever called on the test thread here (set_os_api failures).
static void c_log(weft_log_level level, const char *message, void *user)
{
    (void)level;
    (void)user;
    atomic_fetch_add(&n_log, 1);
    snprintf(last_log, sizeof last_log, "%s", message);
}

static weft_os_api counting_table(void)
{
    weft_os_api_defaults(&real);
    weft_os_api t;
    memset(&t, 0, sizeof t);
    // in the build without threads the thread half of the built-in table is
    // NULL; forwarding to NULL would crash, so those stay NULL too
    if (real.thread_create) {
        t.thread_create = c_create;
        t.thread_join = c_join;
        t.mutex_init = c_mutex_init;
        t.mutex_fini = c_mutex_fini;
        t.mutex_lock = c_lock;
        t.mutex_unlock = c_unlock;
        t.cond_init = c_cond_init;
        t.cond_fini = c_cond_fini;
        t.cond_wait = c_wait;
        t.cond_signal = c_signal;
        t.cond_broadcast = c_broadcast;
    }
    t.thread_yield = c_yield;
    t.cpu_count = c_cpu;
    t.now_ns = c_now;
    t.log = c_log;
    return t;
}

static int reset(void **state)
{
    (void)state;
    atomic_store(&n_create, 0);
    atomic_store(&n_join, 0);
    atomic_store(&n_yield, 0);
    atomic_store(&n_cpu, 0);
    atomic_store(&n_mutex_init, 0);
    atomic_store(&n_mutex_fini, 0);
    atomic_store(&n_lock, 0);
    atomic_store(&n_unlock, 0);
    atomic_store(&n_cond_init, 0);
    atomic_store(&n_cond_fini, 0);
    atomic_store(&n_wait, 0);
    atomic_store(&n_signal, 0);
    atomic_store(&n_broadcast, 0);
    atomic_store(&n_now, 0);
    atomic_store(&n_log, 0);
    last_log[0] = '\0';
    weft_os_api t = counting_table();
    assert_int_equal(weft_set_os_api(&t), WEFT_OK);
    return 0;
}

static int restore(void **state)
{
    (void)state;
    assert_int_equal(weft_set_os_api(NULL), WEFT_OK);
    return 0;
}

// ---- a schedule with parallel work ----

typedef struct pos {
    int64_t x, v;
} pos;

static void move_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    (void)user;
    while (weft_iter_next(it)) {
        pos *p = weft_iter_field_mut(it, 0, sizeof *p);
        for (int32_t i = 0; i < weft_iter_count(it); i++) {
            p[i].x += p[i].v;
        }
    }
}

static void sys_move(weft_system_ctx *ctx, void *user)
{
    weft_status st = weft_system_par_each(ctx, 0, move_chunk, user, 256);
    if (st != WEFT_OK) {
        weft_system_fail(ctx, st, "par_each");
    }
}

static void sys_touch(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        int64_t *h = weft_iter_field_mut(&it, 0, sizeof *h);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            h[i]++;
        }
    }
}

// Runs a schedule of two independent systems (one splitting its rows into
// chunk tasks) for a few frames on `threads` workers, with profiling on
// (which reads the clock). Returns the world hash.
static uint64_t run_world(int32_t threads)
{
    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    assert_int_equal(weft_world_set_threads(w, threads), WEFT_OK);
    weft_component_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.name = "Pos";
    cd.size = sizeof(pos);
    weft_component cp = weft_component_register(w, &cd);
    cd.name = "Heat";
    cd.size = sizeof(int64_t);
    weft_component ch = weft_component_register(w, &cd);
    assert_true(cp && ch);
    for (int64_t i = 0; i < 8192; i++) {
        pos p = {i, i % 7};
        int64_t h = i;
        weft_value vals[2] = {{cp, sizeof p, &p}, {ch, sizeof h, &h}};
        assert_int_not_equal(weft_spawn_with(w, vals, 1 + (int32_t)(i % 2)), 0);
    }
    weft_schedule *s = weft_schedule_create(w, "update");
    assert_non_null(s);
    weft_query_desc qm;
    memset(&qm, 0, sizeof qm);
    qm.terms[0].id = cp;
    qm.terms[0].access = WEFT_ACCESS_WRITE;
    qm.term_count = 1;
    weft_query_desc qh = qm;
    qh.terms[0].id = ch;
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "move";
    sd.fn = sys_move;
    sd.queries = &qm;
    sd.query_count = 1;
    assert_int_not_equal(weft_schedule_add_system(s, &sd), 0);
    sd.name = "touch";
    sd.fn = sys_touch;
    sd.queries = &qh;
    assert_int_not_equal(weft_schedule_add_system(s, &sd), 0);
    assert_int_equal(weft_schedule_set_profiling(s, true), WEFT_OK);
    for (int f = 0; f < 20; f++) {
        assert_int_equal(weft_schedule_run(s, 1.0 / 60.0), WEFT_OK);
    }
    uint64_t h = weft_world_hash(w);
    assert_int_equal(weft_world_destroy(w), WEFT_OK);
    return h;
}

static void os_counting_table_sees_threads_locks_and_time(void **state)
{
    (void)state;
    uint64_t one = run_world(1);
    assert_true(atomic_load(&n_now) > 0); // profiling read the clock through the table
    assert_int_equal(atomic_load(&n_create), 0); // one worker: no thread
    if (weft_max_threads() < 4) {
        // the build without threads: nothing ever reaches the thread half
        assert_int_equal(atomic_load(&n_lock), 0);
        assert_int_equal(atomic_load(&n_mutex_init), 0);
        return;
    }
    uint64_t four = run_world(4);
    assert_true(four == one); // and the same world on 4 workers
    // the pool started 3 threads and joined them, all through the table
    assert_int_equal(atomic_load(&n_create), 3);
    assert_int_equal(atomic_load(&n_join), 3);
    // its locks and condition variables too (made, used, destroyed in pairs)
    assert_true(atomic_load(&n_mutex_init) > 0);
    assert_int_equal(atomic_load(&n_mutex_init), atomic_load(&n_mutex_fini));
    assert_true(atomic_load(&n_cond_init) > 0);
    assert_int_equal(atomic_load(&n_cond_init), atomic_load(&n_cond_fini));
    assert_true(atomic_load(&n_lock) > 0);
    assert_int_equal(atomic_load(&n_lock), atomic_load(&n_unlock));
    assert_true(atomic_load(&n_signal) + atomic_load(&n_broadcast) > 0);
    // threads = -1 asks the table for the CPU count
    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    long before = atomic_load(&n_cpu);
    assert_int_equal(weft_world_set_threads(w, -1), WEFT_OK);
    assert_true(atomic_load(&n_cpu) > before);
    assert_int_equal(weft_world_destroy(w), WEFT_OK);
    assert_int_equal(atomic_load(&n_log), 0); // nothing went wrong
}

static void os_replacing_while_a_world_exists_is_refused(void **state)
{
    (void)state;
    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    weft_os_api t = counting_table();
    assert_int_equal(weft_set_os_api(&t), WEFT_ERR_WRONG_PHASE);
    assert_int_equal(atomic_load(&n_log), 1);
    assert_non_null(strstr(last_log, "weft_set_os_api"));
    assert_non_null(strstr(last_log, "1 world(s) exist"));
    assert_int_equal(weft_set_os_api(NULL), WEFT_ERR_WRONG_PHASE);
    // the world still works with the table it was made with
    weft_component_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.name = "A";
    cd.size = 4;
    assert_int_not_equal(weft_component_register(w, &cd), 0);
    assert_int_equal(weft_world_destroy(w), WEFT_OK);
    // once it is gone the table may change again
    assert_int_equal(weft_set_os_api(&t), WEFT_OK);
}

static void os_table_with_a_missing_entry_is_refused(void **state)
{
    (void)state;
    weft_os_api t = counting_table();
    t.now_ns = NULL;
    assert_int_equal(weft_set_os_api(&t), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(last_log, "no now_ns"));
    t = counting_table();
    t.cpu_count = NULL;
    assert_int_equal(weft_set_os_api(&t), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(last_log, "no cpu_count"));
    t = counting_table();
    t._end_canary = 1;
    assert_int_equal(weft_set_os_api(&t), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(last_log, "canary"));
    t = counting_table();
    t.mutex_lock = NULL;
    if (weft_max_threads() > 1) {
        assert_int_equal(weft_set_os_api(&t), WEFT_ERR_INVALID_ARG);
        assert_non_null(strstr(last_log, "no mutex_lock"));
    } else {
        // no thread entry is ever called in the build without threads
        assert_int_equal(weft_set_os_api(&t), WEFT_OK);
    }
    // log is optional: a table without one is accepted (messages dropped)
    t = counting_table();
    t.log = NULL;
    assert_int_equal(weft_set_os_api(&t), WEFT_OK);
    long logged = atomic_load(&n_log);
    t.now_ns = NULL;
    assert_int_equal(weft_set_os_api(&t), WEFT_ERR_INVALID_ARG);
    assert_int_equal(atomic_load(&n_log), logged);
    // every refusal left the table as it was: the clock still counts
    weft_os_api ok = counting_table();
    assert_int_equal(weft_set_os_api(&ok), WEFT_OK);
    long now = atomic_load(&n_now);
    run_world(1);
    assert_true(atomic_load(&n_now) > now);
}

static void no_submit(void *user, weft_job_fn fn, void *arg)
{
    (void)user;
    fn(arg);
}

static void no_help(void *user)
{
    (void)user;
}

// What needs threads, in each build: the build without them refuses it
// with UNSUPPORTED and a message, and leaves the world as it was.
static void os_thread_only_calls_in_each_build(void **state)
{
    (void)state;
    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    weft_os_api defaults;
    weft_os_api_defaults(&defaults);
    if (weft_max_threads() > 1) {
        assert_non_null(defaults.thread_create);
        assert_int_equal(weft_world_set_threads(w, 2), WEFT_OK);
        assert_int_equal(weft_world_threads(w), 2);
        assert_int_equal(weft_world_destroy(w), WEFT_OK);
        return;
    }
    assert_null(defaults.thread_create);
    assert_null(defaults.mutex_lock);
    assert_non_null(defaults.now_ns);
    assert_int_equal(weft_world_set_threads(w, 2), WEFT_ERR_UNSUPPORTED);
    assert_non_null(strstr(weft_last_error(w), "WEFT_THREADS=OFF"));
    assert_int_equal(weft_world_threads(w), 1);
    // 1, 0 and -1 all mean the calling thread
    assert_int_equal(weft_world_set_threads(w, -1), WEFT_OK);
    assert_int_equal(weft_world_threads(w), 1);
    assert_int_equal(weft_world_set_threads(w, 0), WEFT_OK);
    assert_int_equal(weft_world_set_threads(w, 1), WEFT_OK);
    weft_job_system js;
    memset(&js, 0, sizeof js);
    js.workers = 2;
    js.submit = no_submit;
    js.help = no_help;
    assert_int_equal(weft_world_set_job_system(w, &js), WEFT_ERR_UNSUPPORTED);
    assert_non_null(strstr(weft_last_error(w), "WEFT_THREADS=OFF"));
    assert_int_equal(weft_world_threads(w), 1);
    assert_int_equal(weft_world_destroy(w), WEFT_OK);

    weft_app *app = weft_app_create(NULL);
    assert_non_null(app);
    weft_sub_app_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "render";
    sd.pipelined = true;
    assert_null(weft_app_add_sub_app(app, &sd));
    assert_int_equal(weft_last_status(weft_app_world(app)), WEFT_ERR_UNSUPPORTED);
    assert_null(weft_app_sub_app(app, "render"));
    sd.pipelined = false;
    weft_app *sub = weft_app_add_sub_app(app, &sd);
    assert_non_null(sub);
    assert_int_equal(weft_sub_app_set_pipelined(sub, true), WEFT_ERR_UNSUPPORTED);
    assert_non_null(strstr(weft_last_error(weft_app_world(app)), "WEFT_THREADS=OFF"));
    assert_int_equal(weft_app_update(app, 1.0 / 60.0), WEFT_OK); // still runs, in step
    assert_int_equal(weft_sub_app_frames(sub), 1);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(os_counting_table_sees_threads_locks_and_time, reset,
                                        restore),
        cmocka_unit_test_setup_teardown(os_replacing_while_a_world_exists_is_refused, reset,
                                        restore),
        cmocka_unit_test_setup_teardown(os_table_with_a_missing_entry_is_refused, reset,
                                        restore),
        cmocka_unit_test_setup_teardown(os_thread_only_calls_in_each_build, reset, restore),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

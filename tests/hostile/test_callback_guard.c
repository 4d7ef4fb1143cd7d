// tests/hostile/test_callback_guard.c - every kind of user callback weft.h
// declares, called by weft, tries the calls that must not run under a
// callback of the world (destroying the world, destroying or updating its
// app): each is refused with WRONG_PHASE, and the world goes on. The table
// below names each kind as weft.h spells it; check_callback_kinds.py fails
// when weft.h declares a kind this table does not name.
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "needs_threads.h"
#include "weft.h"

// ---- the probe: what each callback does ----

static weft_world *g_world; // the world whose callbacks run
static weft_app *g_app;     // its app, when the case has one
static pthread_t g_driver;
static bool g_armed;        // probes count only while armed
static int g_probes;        // probes made
static int g_wrong;         // refused calls that were not refused as WRONG_PHASE
static bool g_in_probe;

static void probe(void)
{
    if (!g_armed || g_in_probe || !g_world || !pthread_equal(pthread_self(), g_driver)) {
        return; // one probe at a time, on the driver (worker-side hooks see the same guard)
    }
    g_in_probe = true;
    g_probes++;
    if (weft_world_destroy(g_world) != WEFT_ERR_WRONG_PHASE) {
        g_wrong++;
    }
    if (g_app) {
        if (weft_app_destroy(g_app) != WEFT_ERR_WRONG_PHASE) {
            g_wrong++;
        }
        if (weft_app_update(g_app, 0.0) != WEFT_ERR_WRONG_PHASE) {
            g_wrong++;
        }
    }
    g_in_probe = false;
}

// ---- callbacks of every kind ----

static void *cb_alloc(size_t size, size_t align, void *user)
{
    (void)user;
    probe();
    size_t a = align < sizeof(void *) ? sizeof(void *) : align;
    return aligned_alloc(a, (size + a - 1) / a * a);
}
static void cb_free(void *p, size_t size, size_t align, void *user)
{
    (void)size;
    (void)align;
    (void)user;
    probe();
    free(p);
}
static void cb_log(void *user, weft_log_level level, weft_status status, const char *message,
                   const char *file, int32_t line)
{
    (void)user, (void)level, (void)status, (void)message, (void)file, (void)line;
    probe();
}
static void cb_ctor(void *p, int32_t n, void *user)
{
    (void)user;
    memset(p, 0, (size_t)n * sizeof(int32_t));
    probe();
}
static void cb_dtor(void *p, int32_t n, void *user)
{
    (void)p, (void)n, (void)user;
    probe();
}
static void cb_move(void *dst, void *src, int32_t n, void *user)
{
    (void)user;
    memcpy(dst, src, (size_t)n * sizeof(int32_t));
    probe();
}
static void cb_copy(void *dst, const void *src, int32_t n, void *user)
{
    (void)user;
    memcpy(dst, src, (size_t)n * sizeof(int32_t));
    probe();
}
static void cb_hook(weft_world *w, weft_entity e, weft_component c, void *user)
{
    (void)w, (void)e, (void)c, (void)user;
    probe();
}
static void cb_req_ctor(void *dst, void *user)
{
    (void)user;
    memset(dst, 0, sizeof(int32_t));
    probe();
}
static void cb_observer(weft_world *w, weft_trigger *t, void *user)
{
    (void)w, (void)t, (void)user;
    probe();
}
static void cb_free_user(void *user)
{
    (void)user;
    probe();
}
static void cb_command(weft_world *w, void *payload, void *user)
{
    (void)w, (void)payload, (void)user;
    probe();
}
static void cb_command_drop(void *payload, void *user)
{
    (void)payload, (void)user;
    probe();
}
static void cb_msg_drop(void *msg, void *user)
{
    (void)msg, (void)user;
    probe();
}
static void cb_system_noop(weft_system_ctx *ctx, void *user)
{
    (void)ctx, (void)user;
}
static void cb_system(weft_system_ctx *ctx, void *user)
{
    (void)ctx, (void)user;
    probe();
}
static bool cb_condition(weft_system_ctx *ctx, void *user)
{
    (void)ctx, (void)user;
    probe();
    return true;
}
static void cb_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds, (void)user;
    while (weft_iter_next(it)) {
    }
    probe();
}
static void cb_par_system(weft_system_ctx *ctx, void *user)
{
    assert_int_equal(weft_system_par_each(ctx, 0, cb_chunk, user, 1), WEFT_OK);
}
static void cb_local_init(void *local, void *user)
{
    (void)local, (void)user;
    probe();
}
static void cb_local_fini(void *local, void *user)
{
    (void)local, (void)user;
    probe();
}
static weft_status cb_plugin(weft_app *app, void *user)
{
    (void)app, (void)user;
    probe();
    return WEFT_OK;
}
static weft_status cb_plugin_quiet(weft_app *app, void *user)
{
    (void)app, (void)user;
    return WEFT_OK;
}
// The runner is the app's callback, not its world's: it may update the
// app (that is its purpose) but not destroy the app or the world.
static weft_status cb_runner_probe(weft_app *app, void *user)
{
    (void)user;
    g_probes++;
    if (weft_world_destroy(g_world) != WEFT_ERR_WRONG_PHASE) {
        g_wrong++;
    }
    if (weft_app_destroy(app) != WEFT_ERR_WRONG_PHASE) {
        g_wrong++;
    }
    return weft_app_update(app, 0.0);
}
static uint32_t cb_compute(const uint32_t *sources, int32_t count, void *user)
{
    (void)sources, (void)count, (void)user;
    probe();
    return 1;
}
static bool cb_extract(weft_entity e, const void *src, void *dst, void *user)
{
    (void)e, (void)user;
    memcpy(dst, src, sizeof(int32_t));
    probe();
    return true;
}
static void cb_submit(void *user, weft_job_fn fn, void *arg)
{
    (void)user;
    probe();
    fn(arg); // run the job inline
}
static void cb_help(void *user)
{
    (void)user;
    probe();
}

// ---- fixtures ----

static void arm(weft_world *w, weft_app *app)
{
    g_world = w;
    g_app = app;
    g_driver = pthread_self();
    g_probes = 0;
    g_wrong = 0;
    g_armed = true;
}

// Disarms and checks that the callback ran and every refused call was
// refused; the world still answers.
static void disarm_and_check(void)
{
    g_armed = false;
    assert_true(g_probes > 0);
    assert_int_equal(g_wrong, 0);
    assert_int_equal(weft_world_check(g_world), WEFT_OK);
}

static weft_world *world_new(void)
{
    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    return w;
}

// Ends a case: the probes made while armed were all refused as they
// should be, then the world goes.
static void world_done(weft_world *w)
{
    disarm_and_check();
    assert_int_equal(weft_world_destroy(w), WEFT_OK);
}

static weft_component comp_i32(weft_world *w, const char *name, const weft_type_hooks *hooks,
                               const weft_lifecycle_hooks *lc)
{
    weft_component_desc d = {0};
    d.name = name;
    d.size = sizeof(int32_t);
    if (hooks) {
        d.hooks = *hooks;
    }
    if (lc) {
        d.lifecycle = *lc;
    }
    weft_component c = weft_component_register(w, &d);
    assert_int_not_equal(c, 0);
    return c;
}

static weft_entity spawn1(weft_world *w, weft_component c, int32_t v)
{
    weft_value val = {c, sizeof v, &v};
    weft_entity e = weft_spawn_with(w, &val, 1);
    assert_int_not_equal(e, 0);
    return e;
}

static void run_system(weft_world *w, weft_system_desc *d, weft_condition_fn cond)
{
    weft_schedule *s = weft_schedule_create(w, "s");
    assert_non_null(s);
    weft_node n = weft_schedule_add_system(s, d);
    assert_int_not_equal(n, 0);
    if (cond) {
        weft_condition_desc cd = {0};
        cd.fn = cond;
        weft_condition *c = weft_condition_create(s, &cd);
        assert_non_null(c);
        assert_int_equal(weft_schedule_add_condition(s, n, c), WEFT_OK);
    }
    arm(w, NULL);
    (void)weft_schedule_run(s, 0.0);
    g_armed = false;
    assert_int_equal(weft_schedule_destroy(s), WEFT_OK);
}

// ---- one case per callback kind ----

static void case_allocator_alloc(void)
{
    weft_world_desc wd = {0};
    wd.allocator.alloc = cb_alloc;
    wd.allocator.free = cb_free;
    weft_world *w = weft_world_create(&wd);
    assert_non_null(w);
    weft_component c = comp_i32(w, "A", NULL, NULL);
    arm(w, NULL);
    for (int i = 0; i < 100; i++) {
        spawn1(w, c, i);
    }
    world_done(w);
}

static void case_allocator_free(void)
{
    weft_world_desc wd = {0};
    wd.allocator.alloc = cb_alloc;
    wd.allocator.free = cb_free;
    weft_world *w = weft_world_create(&wd);
    assert_non_null(w);
    weft_component c = comp_i32(w, "A", NULL, NULL);
    weft_entity e = spawn1(w, c, 1);
    weft_commands *cb = weft_commands_create(w);
    assert_non_null(cb);
    arm(w, NULL);
    weft_commands_destroy(cb); // frees the buffer through the hook
    assert_int_equal(weft_despawn(w, e), WEFT_OK);
    world_done(w);
}

static void case_logger(void)
{
    weft_world_desc wd = {0};
    wd.logger.fn = cb_log;
    weft_world *w = weft_world_create(&wd);
    assert_non_null(w);
    arm(w, NULL);
    assert_int_not_equal(weft_insert(w, 12345, 999, NULL, 0), WEFT_OK); // logged
    world_done(w);
}

static void case_type_hook(const char *which)
{
    weft_world *w = world_new();
    weft_type_hooks h = {0};
    if (!strcmp(which, "ctor")) {
        h.ctor = cb_ctor;
    } else if (!strcmp(which, "dtor")) {
        h.dtor = cb_dtor;
    } else if (!strcmp(which, "move")) {
        h.move = cb_move;
    } else {
        h.copy = cb_copy;
    }
    weft_component c = comp_i32(w, "H", &h, NULL);
    weft_component other = comp_i32(w, "O", NULL, NULL);
    arm(w, NULL);
    weft_entity e = weft_spawn(w);
    assert_int_equal(weft_insert(w, e, c, NULL, sizeof(int32_t)), WEFT_OK); // ctor
    int32_t v = 3;
    assert_int_equal(weft_insert(w, e, c, &v, sizeof v), WEFT_OK); // copy + dtor
    assert_int_equal(weft_insert(w, e, other, &v, sizeof v), WEFT_OK); // move
    assert_int_equal(weft_remove(w, e, c), WEFT_OK); // dtor
    world_done(w);
}
static void case_type_ctor(void) { case_type_hook("ctor"); }
static void case_type_dtor(void) { case_type_hook("dtor"); }
static void case_type_move(void) { case_type_hook("move"); }
static void case_type_copy(void) { case_type_hook("copy"); }

static void case_lifecycle_hook(void)
{
    weft_world *w = world_new();
    weft_lifecycle_hooks lc = {0};
    lc.on_add = cb_hook;
    lc.on_insert = cb_hook;
    lc.on_replace = cb_hook;
    lc.on_remove = cb_hook;
    lc.on_despawn = cb_hook;
    weft_component c = comp_i32(w, "L", NULL, &lc);
    arm(w, NULL);
    weft_entity e = spawn1(w, c, 1);
    assert_int_equal(weft_despawn(w, e), WEFT_OK);
    world_done(w);
}

static void case_require_ctor(void)
{
    weft_world *w = world_new();
    weft_component b = comp_i32(w, "B", NULL, NULL);
    weft_component a = comp_i32(w, "A", NULL, NULL);
    weft_require r = {0};
    r.id = b;
    r.ctor = cb_req_ctor;
    assert_int_equal(weft_component_require(w, a, &r, 1), WEFT_OK);
    arm(w, NULL);
    spawn1(w, a, 1);
    world_done(w);
}

static void case_observer(bool free_user)
{
    weft_world *w = world_new();
    weft_component c = comp_i32(w, "C", NULL, NULL);
    weft_observer_desc od = {0};
    od.event = WEFT_EVENT_ADD;
    od.component = c;
    od.fn = cb_observer;
    od.free_user = free_user ? cb_free_user : NULL;
    weft_observer *o = weft_observer_create(w, &od);
    assert_non_null(o);
    arm(w, NULL);
    if (free_user) {
        assert_int_equal(weft_observer_destroy(w, o), WEFT_OK);
        spawn1(w, c, 1); // the observer's removal completes at the next operation
    } else {
        spawn1(w, c, 1);
    }
    world_done(w);
}
static void case_observer_fn(void) { case_observer(false); }
static void case_observer_free_user(void) { case_observer(true); }

static void case_command(bool drop_only)
{
    weft_world *w = world_new();
    weft_commands *cb = weft_commands_create(w);
    assert_non_null(cb);
    int payload = 1;
    assert_int_equal(weft_cmd_custom(cb, cb_command, &payload, sizeof payload,
                                     cb_command_drop, NULL),
                     WEFT_OK);
    arm(w, NULL);
    if (drop_only) {
        weft_commands_destroy(cb);
    } else {
        assert_int_equal(weft_commands_apply(w, cb), WEFT_OK);
        weft_commands_destroy(cb);
    }
    world_done(w);
}
static void case_command_fn(void) { case_command(false); }
static void case_command_drop(void) { case_command(true); }

static void case_message_drop(void)
{
    weft_world *w = world_new();
    weft_message_desc md = {0};
    md.name = "M";
    md.size = sizeof(int32_t);
    md.drop = cb_msg_drop;
    weft_message_type t = weft_message_register(w, &md);
    assert_int_not_equal(t, 0);
    int32_t m = 1;
    assert_int_equal(weft_message_write(w, t, &m, sizeof m), WEFT_OK);
    arm(w, NULL);
    weft_messages_update(w);
    weft_messages_update(w); // expires it: drop
    world_done(w);
}

static void case_system_with(weft_system_fn fn, weft_condition_fn cond)
{
    weft_world *w = world_new();
    weft_system_desc d = {0};
    d.name = "sys";
    d.fn = fn;
    run_system(w, &d, cond);
    world_done(w);
}
static void case_system(void) { case_system_with(cb_system, NULL); }
static void case_condition(void) { case_system_with(cb_system_noop, cb_condition); }

static void case_chunk(void)
{
    weft_world *w = world_new();
    weft_component c = comp_i32(w, "C", NULL, NULL);
    for (int i = 0; i < 64; i++) {
        spawn1(w, c, i);
    }
    weft_query_desc q = {0};
    q.terms[0].id = c;
    q.terms[0].access = WEFT_ACCESS_WRITE;
    q.term_count = 1;
    weft_system_desc d = {0};
    d.name = "par";
    d.fn = cb_par_system;
    d.queries = &q;
    d.query_count = 1;
    run_system(w, &d, NULL);
    world_done(w);
}

static void case_local(bool fini)
{
    weft_world *w = world_new();
    weft_system_desc d = {0};
    d.name = "local";
    d.fn = cb_system_noop;
    d.local.size = 8;
    d.local.init = fini ? NULL : cb_local_init;
    d.local.fini = fini ? cb_local_fini : NULL;
    weft_schedule *s = weft_schedule_create(w, "s");
    assert_non_null(s);
    arm(w, NULL);
    assert_int_not_equal(weft_schedule_add_system(s, &d), 0); // init
    assert_int_equal(weft_schedule_destroy(s), WEFT_OK);      // fini
    world_done(w);
}
static void case_local_init(void) { case_local(false); }
static void case_local_fini(void) { case_local(true); }

static void case_job_system(void)
{
    NEEDS_THREADS("a host job system runs systems on other threads");
    weft_world *w = world_new();
    weft_job_system js = {0};
    js.workers = 2;
    js.submit = cb_submit;
    js.help = cb_help;
    assert_int_equal(weft_world_set_job_system(w, &js), WEFT_OK);
    weft_component c = comp_i32(w, "C", NULL, NULL);
    for (int i = 0; i < 64; i++) {
        spawn1(w, c, i);
    }
    // two systems that may run at the same time: the executor hands one
    // to a host job
    weft_query_desc q = {0};
    q.terms[0].id = c;
    q.terms[0].access = WEFT_ACCESS_READ;
    q.term_count = 1;
    weft_schedule *s = weft_schedule_create(w, "s");
    assert_non_null(s);
    for (int i = 0; i < 2; i++) {
        weft_system_desc d = {0};
        d.name = i ? "b" : "a";
        d.fn = cb_system_noop;
        d.queries = &q;
        d.query_count = 1;
        assert_int_not_equal(weft_schedule_add_system(s, &d), 0);
    }
    arm(w, NULL);
    assert_int_equal(weft_schedule_run(s, 0.0), WEFT_OK);
    disarm_and_check();
    assert_int_equal(weft_schedule_destroy(s), WEFT_OK);
    assert_int_equal(weft_world_destroy(w), WEFT_OK);
}

// ---- the app's callbacks ----

static weft_app *app_new(void)
{
    weft_app_desc ad = {0};
    weft_app *app = weft_app_create(&ad);
    assert_non_null(app);
    return app;
}

static void app_done(weft_app *app)
{
    g_armed = false;
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    g_app = NULL;
}

static void case_plugin(int which)
{
    weft_app *app = app_new();
    weft_plugin_desc pd = {0};
    pd.name = "p";
    pd.build = which == 0 ? cb_plugin : cb_plugin_quiet;
    pd.finish = which == 1 ? cb_plugin : NULL;
    pd.cleanup = which == 2 ? cb_plugin : NULL;
    assert_int_equal(weft_app_add_plugin(app, &pd), WEFT_OK);
    arm(weft_app_world(app), app);
    assert_int_equal(weft_app_setup(app), WEFT_OK);
    disarm_and_check();
    app_done(app);
}

// free_user runs inside weft_app_destroy, after the app's world is gone:
// destroying the app again from it is refused, not a double free.
static weft_app *g_dying_app;
static int g_dying_calls, g_dying_ok;
static void cb_free_user_dying(void *user)
{
    (void)user;
    g_dying_calls++;
    if (weft_app_destroy(g_dying_app) == WEFT_OK) {
        g_dying_ok++;
    }
}

static void case_plugin_free_user(void)
{
    weft_app *app = app_new();
    weft_plugin_desc pd = {0};
    pd.name = "p";
    pd.build = cb_plugin_quiet;
    pd.free_user = cb_free_user_dying;
    assert_int_equal(weft_app_add_plugin(app, &pd), WEFT_OK);
    assert_int_equal(weft_app_setup(app), WEFT_OK);
    g_dying_app = app;
    g_dying_calls = g_dying_ok = 0;
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    assert_int_equal(g_dying_calls, 1);
    assert_int_equal(g_dying_ok, 0);
}
static void case_plugin_build(void) { case_plugin(0); }
static void case_plugin_finish(void) { case_plugin(1); }
static void case_plugin_cleanup(void) { case_plugin(2); }

static void case_runner(void)
{
    weft_app *app = app_new();
    arm(weft_app_world(app), app);
    // the runner is a callback of the app: destroying the app or its
    // world from it is refused; updating is what it is for
    g_in_probe = false;
    assert_int_equal(weft_app_run(app, cb_runner_probe, NULL), WEFT_OK);
    disarm_and_check();
    app_done(app);
}

static void case_state_compute(void)
{
    weft_app *app = app_new();
    weft_world *w = weft_app_world(app);
    weft_state_value vals[2] = {{1, "A"}, {2, "B"}};
    weft_state_desc sd = {0};
    sd.name = "S";
    sd.values = vals;
    sd.value_count = 2;
    sd.initial = 1;
    weft_state src = weft_state_register(w, &sd);
    assert_int_not_equal(src, 0);
    weft_state_desc cd = {0};
    cd.name = "C";
    cd.kind = WEFT_STATE_KIND_COMPUTED;
    cd.values = vals;
    cd.value_count = 2;
    cd.sources = &src;
    cd.source_count = 1;
    cd.compute = cb_compute;
    assert_int_not_equal(weft_state_register(w, &cd), 0);
    arm(w, app);
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    disarm_and_check();
    app_done(app);
}

static void case_extract(void)
{
    weft_app *app = app_new();
    weft_world *w = weft_app_world(app);
    weft_component c = comp_i32(w, "C", NULL, NULL);
    weft_sub_app_desc sd = {0};
    sd.name = "render";
    weft_app *sub = weft_app_add_sub_app(app, &sd);
    assert_non_null(sub);
    weft_component sc = comp_i32(weft_app_world(sub), "SC", NULL, NULL);
    weft_extract_component_desc xd = {0};
    xd.main_component = c;
    xd.sub_component = sc;
    xd.transform = cb_extract;
    assert_int_not_equal(weft_sub_app_extract_component(sub, &xd), 0);
    weft_entity e = spawn1(w, c, 5);
    assert_int_equal(weft_insert(w, e, weft_sub_app_sync_tag(sub), NULL, 0), WEFT_OK);
    arm(w, app);
    assert_int_equal(weft_app_update(app, 0.0), WEFT_OK);
    disarm_and_check();
    app_done(app);
}

// ---- the OS layer's hooks (process-wide: installed while no world exists) ----

static weft_os_api g_def; // the built-in table the wrappers forward to
static int g_os_hits[16];
enum {
    OS_THREAD_CREATE, OS_THREAD_JOIN, OS_THREAD_YIELD, OS_CPU_COUNT, OS_MUTEX_INIT,
    OS_MUTEX_FINI, OS_MUTEX_LOCK, OS_MUTEX_UNLOCK, OS_COND_INIT, OS_COND_FINI, OS_COND_WAIT,
    OS_COND_SIGNAL, OS_COND_BROADCAST, OS_NOW_NS, OS_LOG
};
static void os_hit(int i)
{
    g_os_hits[i]++;
    probe();
}
// A wrapper that counts and probes, then forwards to the built-in entry.
#define OS_FWD(idx, name, params, args)                                                          \
    static void os_##name params                                                                 \
    {                                                                                            \
        os_hit(idx);                                                                             \
        g_def.name args;                                                                         \
    }
#define OS_FWD_R(idx, ret, name, params, args)                                                   \
    static ret os_##name params                                                                  \
    {                                                                                            \
        os_hit(idx);                                                                             \
        return g_def.name args;                                                                  \
    }
static bool os_thread_create(weft_os_object *t, void (*fn)(void *), void *arg, void *u)
{
    os_hit(OS_THREAD_CREATE);
    return g_def.thread_create(t, fn, arg, u);
}
OS_FWD(OS_THREAD_JOIN, thread_join, (weft_os_object *t, void *u), (t, u))
OS_FWD(OS_THREAD_YIELD, thread_yield, (void *u), (u))
OS_FWD_R(OS_CPU_COUNT, uint32_t, cpu_count, (void *u), (u))
OS_FWD_R(OS_MUTEX_INIT, bool, mutex_init, (weft_os_object *m, void *u), (m, u))
OS_FWD(OS_MUTEX_FINI, mutex_fini, (weft_os_object *m, void *u), (m, u))
OS_FWD(OS_MUTEX_LOCK, mutex_lock, (weft_os_object *m, void *u), (m, u))
static void os_mutex_unlock(weft_os_object *m, void *u)
{
    g_def.mutex_unlock(m, u);
    os_hit(OS_MUTEX_UNLOCK);
}
OS_FWD_R(OS_COND_INIT, bool, cond_init, (weft_os_object *c, void *u), (c, u))
OS_FWD(OS_COND_FINI, cond_fini, (weft_os_object *c, void *u), (c, u))
static void os_cond_wait(weft_os_object *c, weft_os_object *m, void *u)
{
    g_os_hits[OS_COND_WAIT]++; // holds the mutex: no probe that could log under it
    g_def.cond_wait(c, m, u);
}
static void os_cond_signal(weft_os_object *c, void *u)
{
    g_os_hits[OS_COND_SIGNAL]++;
    g_def.cond_signal(c, u);
}
static void os_cond_broadcast(weft_os_object *c, void *u)
{
    g_os_hits[OS_COND_BROADCAST]++;
    g_def.cond_broadcast(c, u);
}
OS_FWD_R(OS_NOW_NS, uint64_t, now_ns, (void *u), (u))
static void os_log(weft_log_level level, const char *message, void *u)
{
    (void)u, (void)level, (void)message;
    os_hit(OS_LOG);
}

static void sys_noop2(weft_system_ctx *ctx, void *user)
{
    (void)ctx, (void)user;
}

// Installs the wrapping table, drives a threaded world through every
// entry, and checks that entry `which` ran with every refused call
// refused. Entries that run holding a mutex (cond wait, signal and
// broadcast) count without probing.
static void case_os(int which)
{
    NEEDS_THREADS("the thread, mutex and condition entries are NULL without threads");
    weft_os_api_defaults(&g_def);
    weft_os_api api = g_def;
    api.thread_create = os_thread_create;
    api.thread_join = os_thread_join;
    api.thread_yield = os_thread_yield;
    api.cpu_count = os_cpu_count;
    api.mutex_init = os_mutex_init;
    api.mutex_fini = os_mutex_fini;
    api.mutex_lock = os_mutex_lock;
    api.mutex_unlock = os_mutex_unlock;
    api.cond_init = os_cond_init;
    api.cond_fini = os_cond_fini;
    api.cond_wait = os_cond_wait;
    api.cond_signal = os_cond_signal;
    api.cond_broadcast = os_cond_broadcast;
    api.now_ns = os_now_ns;
    api.log = os_log;
    assert_int_equal(weft_set_os_api(&api), WEFT_OK);
    memset(g_os_hits, 0, sizeof g_os_hits);
    weft_world *w = world_new();
    arm(w, NULL);
    assert_int_equal(weft_set_os_api(&api), WEFT_ERR_WRONG_PHASE); // logged through log
    assert_int_equal(weft_world_set_threads(w, 0), WEFT_OK); // every CPU (cpu_count)
    assert_int_equal(weft_world_set_threads(w, 3), WEFT_OK);
    weft_schedule *s = weft_schedule_create(w, "s");
    assert_non_null(s);
    for (int i = 0; i < 4; i++) {
        weft_system_desc d = {0};
        char name[8];
        snprintf(name, sizeof name, "s%d", i);
        d.name = name;
        d.fn = sys_noop2;
        assert_int_not_equal(weft_schedule_add_system(s, &d), 0);
    }
    for (int r = 0; r < 20; r++) {
        assert_int_equal(weft_schedule_run(s, 0.0), WEFT_OK);
    }
    weft_world_stats st;
    (void)weft_world_get_stats(w, &st);
    assert_int_equal(weft_schedule_destroy(s), WEFT_OK);
    assert_int_equal(weft_world_set_threads(w, 1), WEFT_OK); // joins
    g_armed = false;
    assert_int_equal(g_wrong, 0);
    assert_int_equal(weft_world_destroy(w), WEFT_OK);
    assert_int_equal(weft_set_os_api(NULL), WEFT_OK);
    if (which != OS_THREAD_YIELD && which != OS_COND_WAIT && which != OS_COND_SIGNAL &&
        which != OS_CPU_COUNT && which != OS_NOW_NS) {
        // yield, wait and signal happen only when a thread finds nothing to
        // do, cpu_count is read once per process, now_ns only for timings:
        // when they run they are probed as the rest
        assert_true(g_os_hits[which] > 0);
    }
}

// Tasks: the function runs here on the driver, inline in weft_task_wait
// (the async pool's one thread is held by a blocker, so nobody else starts
// it); the apply step runs on the driver at weft_tasks_tick.
#if !defined(WEFT_THREADS) || WEFT_THREADS // the build with threads
static _Atomic int g_task_hold;

static weft_status task_blocker(weft_task_ctx *ctx, const void *in, void *out, void *user)
{
    (void)in;
    (void)out;
    (void)user;
    atomic_store(&g_task_hold, 2); // holding the thread
    while (atomic_load(&g_task_hold) != 0 && !weft_task_cancelled(ctx)) {
        sched_yield();
    }
    return WEFT_OK;
}
#endif

static weft_status cb_task(weft_task_ctx *ctx, const void *in, void *out, void *user)
{
    (void)ctx;
    (void)in;
    (void)out;
    (void)user;
    probe();
    return WEFT_OK;
}

static void cb_task_apply(weft_world *w, weft_commands *cmds, const void *result, void *user)
{
    (void)w;
    (void)cmds;
    (void)result;
    (void)user;
    probe();
}

static void case_task_fn(void)
{
    weft_world *w = world_new();
    weft_task_desc d = {0};
    weft_task blocker = 0;
#if !defined(WEFT_THREADS) || WEFT_THREADS // hold the pool's one thread
    assert_int_equal(weft_world_set_task_threads(w, WEFT_TASK_POOL_ASYNC_COMPUTE, 1), WEFT_OK);
    atomic_store(&g_task_hold, 1);
    d.fn = task_blocker;
    assert_int_equal(weft_task_spawn(w, &d, &blocker), WEFT_OK);
    while (atomic_load(&g_task_hold) != 2) {
        sched_yield();
    }
#endif
    d.fn = cb_task;
    weft_task t = 0;
    assert_int_equal(weft_task_spawn(w, &d, &t), WEFT_OK);
    arm(w, NULL);
    weft_task_outcome st;
    assert_int_equal(weft_task_wait(w, t, &st, NULL, 0), WEFT_OK);
    assert_int_equal(st.state, WEFT_TASK_STATE_READY);
    g_armed = false;
#if !defined(WEFT_THREADS) || WEFT_THREADS
    atomic_store(&g_task_hold, 0);
#endif
    if (blocker) {
        assert_int_equal(weft_task_wait(w, blocker, &st, NULL, 0), WEFT_OK);
    }
    world_done(w);
}

static void case_task_apply(void)
{
    weft_world *w = world_new();
    weft_task_desc d = {0};
    d.fn = cb_task;
    d.apply = cb_task_apply;
    d.flags = WEFT_TASK_DETERMINISTIC;
    weft_task t = 0;
    assert_int_equal(weft_task_spawn(w, &d, &t), WEFT_OK);
    arm(w, NULL);
    assert_int_equal(weft_tasks_tick(w), WEFT_OK); // waits for it, then applies
    world_done(w);
}

// ---- the table ----

typedef struct guard_case {
    const char *kind; // as weft.h names it: a typedef, or struct.member
    void (*run)(void);
    int os;           // without run: case_os of this entry
} guard_case;

static const guard_case cases[] = {
    {"weft_allocator.alloc", case_allocator_alloc, 0},
    {"weft_allocator.free", case_allocator_free, 0},
    {"weft_logger.fn", case_logger, 0},
    {"weft_type_hooks.ctor", case_type_ctor, 0},
    {"weft_type_hooks.dtor", case_type_dtor, 0},
    {"weft_type_hooks.move", case_type_move, 0},
    {"weft_type_hooks.copy", case_type_copy, 0},
    {"weft_hook_fn", case_lifecycle_hook, 0},
    {"weft_require.ctor", case_require_ctor, 0},
    {"weft_observer_fn", case_observer_fn, 0},
    {"weft_observer_desc.free_user", case_observer_free_user, 0},
    {"weft_command_fn", case_command_fn, 0},
    {"weft_command_drop_fn", case_command_drop, 0},
    {"weft_message_desc.drop", case_message_drop, 0},
    {"weft_system_fn", case_system, 0},
    {"weft_condition_fn", case_condition, 0},
    {"weft_chunk_fn", case_chunk, 0},
    {"weft_local_desc.init", case_local_init, 0},
    {"weft_local_desc.fini", case_local_fini, 0},
    {"weft_job_system.submit", case_job_system, 0},
    {"weft_job_system.help", case_job_system, 0},
    {"weft_plugin_fn", case_plugin_build, 0},
    {"weft_plugin_desc.finish", case_plugin_finish, 0},
    {"weft_plugin_desc.cleanup", case_plugin_cleanup, 0},
    {"weft_plugin_desc.free_user", case_plugin_free_user, 0},
    {"weft_app_runner_fn", case_runner, 0},
    {"weft_state_compute_fn", case_state_compute, 0},
    {"weft_extract_fn", case_extract, 0},
    {"weft_task_fn", case_task_fn, 0},
    {"weft_task_apply_fn", case_task_apply, 0},
    {"weft_os_api.thread_create", NULL, OS_THREAD_CREATE},
    {"weft_os_api.thread_join", NULL, OS_THREAD_JOIN},
    {"weft_os_api.thread_yield", NULL, OS_THREAD_YIELD},
    {"weft_os_api.cpu_count", NULL, OS_CPU_COUNT},
    {"weft_os_api.mutex_init", NULL, OS_MUTEX_INIT},
    {"weft_os_api.mutex_fini", NULL, OS_MUTEX_FINI},
    {"weft_os_api.mutex_lock", NULL, OS_MUTEX_LOCK},
    {"weft_os_api.mutex_unlock", NULL, OS_MUTEX_UNLOCK},
    {"weft_os_api.cond_init", NULL, OS_COND_INIT},
    {"weft_os_api.cond_fini", NULL, OS_COND_FINI},
    {"weft_os_api.cond_wait", NULL, OS_COND_WAIT},
    {"weft_os_api.cond_signal", NULL, OS_COND_SIGNAL},
    {"weft_os_api.cond_broadcast", NULL, OS_COND_BROADCAST},
    {"weft_os_api.now_ns", NULL, OS_NOW_NS},
    {"weft_os_api.log", NULL, OS_LOG},
};

static void run_case(void **state)
{
    const guard_case *c = *state;
    if (c->run) {
        c->run();
    } else {
        case_os(c->os);
    }
}

int main(void)
{
    enum { N = sizeof cases / sizeof cases[0] };
    struct CMUnitTest tests[N];
    for (int i = 0; i < N; i++) {
        tests[i] = (struct CMUnitTest){cases[i].kind, run_case, NULL, NULL, (void *)&cases[i]};
    }
    return _cmocka_run_group_tests("callback_guard", tests, N, NULL, NULL);
}

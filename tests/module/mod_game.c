/* tests/module/mod_game.c - a small reloadable module, compiled in several
 * variants (MOD_VARIANT) that the module tests swap between.
 * SPDX-License-Identifier: MIT
 *
 * Resources the host registers (looked up by name during the build):
 * "Counter" (int64_t: `count` adds MOD_STEP a run), "Ticks" (int64_t:
 * `ticker` stores its local run counter) and "Extra" (two int64_t: the
 * variant's extra system bumps one of them), "ObsLog" (two int64: the
 * observer of Marker's add bumps [0] in A's code, [1] in B's) and "Gated"
 * (int64: the system `gated` bumps it when its run condition "gate" lets
 * it: always in A's code, never in B's; OBS has no condition).
 * Message types every build registers: "ModMsg" (int64), and FAIL's
 * "FailMsg" before it fails.
 */
#include "weft.h"

#include <stdint.h>

#define VARIANT_A 1       /* count +1, extra system only_a (local with fini) */
#define VARIANT_B 2       /* count +10, extra system only_b */
#define VARIANT_FAIL 3    /* adds a new system, then its build fails */
#define VARIANT_ABI 4     /* another module ABI version */
#define VARIANT_NOENTRY 5 /* exports no entry point */
#define VARIANT_LOCAL 6   /* ticker's local state changes size */
#define VARIANT_DUP 7     /* adds `count` twice */
#define VARIANT_OBS 8     /* as A, without the observer */
#define VARIANT_QUERY 9   /* as A; count also counts Marker entities (a new
                             query), ticker also writes Seen (new access) */
#define VARIANT_MSGSIZE 11 /* as A; its ModMsg has another size (refused) */
#define VARIANT_ONCE 10   /* as A; gated also needs and(gate2, not(not(run_once))):
                             combinators and a built-in condition every build
                             makes anew, combining the named gate2 again */

#if MOD_VARIANT == VARIANT_B
#  define MOD_STEP 10
#else
#  define MOD_STEP 1
#endif

/* counts the fini calls of only_a's local (defined by the test program) */
extern int mod_test_fini_count;

static weft_component res_id(weft_app *app, const char *name)
{
    return weft_component_lookup(weft_app_world(app), name);
}

static void count_run(weft_system_ctx *ctx, void *user)
{
    weft_component c = (weft_component)(uintptr_t)user;
    int64_t *v = weft_system_resource_mut(ctx, c, sizeof *v);
    if (v) {
        *v += MOD_STEP;
    }
#if MOD_VARIANT == VARIANT_QUERY
    weft_iter it;
    if (v && weft_system_iter(ctx, 0, &it) == WEFT_OK) {
        while (weft_iter_next(&it)) {
            *v += 1000 * (int64_t)weft_iter_count(&it);
        }
    }
#endif
}

static void ticker_run(weft_system_ctx *ctx, void *user)
{
    weft_component c = (weft_component)(uintptr_t)user;
    int64_t *local = weft_system_local(ctx);
    int64_t *v = weft_system_resource_mut(ctx, c, sizeof *v);
    if (local && v) {
        *local += 1;
        *v = *local;
    }
}

/* Sums the payloads of the "Ping" messages it has not read yet into
 * Seen[1]; its cursor must survive a reload (no message read twice). */
static void reader_run(weft_system_ctx *ctx, void *user)
{
    weft_component seen = (weft_component)(uintptr_t)user;
    int64_t *v = weft_system_resource_mut(ctx, seen, 2 * sizeof *v);
    if (!v) {
        return;
    }
    const int64_t *ping;
    while ((ping = weft_system_message_read(ctx, (weft_message_type)v[0], sizeof *ping))) {
        v[1] += *ping;
    }
}

static void extra_run(weft_system_ctx *ctx, void *user)
{
    weft_component c = (weft_component)(uintptr_t)user;
    int64_t *v = weft_system_resource_mut(ctx, c, 2 * sizeof *v);
    if (v) {
        v[MOD_VARIANT == VARIANT_B ? 1 : 0] += 1;
    }
}

#if MOD_VARIANT != VARIANT_B
static void extra_fini(void *local, void *user)
{
    (void)local;
    (void)user;
    mod_test_fini_count++;
}
#endif

#if MOD_VARIANT != VARIANT_OBS
static void on_marker(weft_world *world, weft_trigger *trigger, void *user)
{
    (void)trigger;
    weft_component log = (weft_component)(uintptr_t)user;
    int64_t *v = weft_resource_get_mut(world, log, 2 * sizeof *v);
    if (v) {
        v[MOD_VARIANT == VARIANT_B ? 1 : 0] += 1;
    }
}
#endif

static void gated_run(weft_system_ctx *ctx, void *user)
{
    weft_component c = (weft_component)(uintptr_t)user;
    int64_t *v = weft_system_resource_mut(ctx, c, sizeof *v);
    if (v) {
        *v += 1;
    }
}

#if MOD_VARIANT != VARIANT_OBS
static bool gate(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
    return MOD_VARIANT != VARIANT_B;
}
#endif

static weft_node add(weft_app *app, const char *name, weft_system_fn fn, const char *res,
                     size_t local_size, void (*fini)(void *, void *))
{
    weft_component c = res_id(app, res);
    weft_resource_use use[2] = {{c, WEFT_ACCESS_WRITE}, {0, WEFT_ACCESS_WRITE}};
    weft_system_desc d = {0};
    d.name = name;
    d.fn = fn;
    d.user = (void *)(uintptr_t)c;
    d.resources = use;
    d.resource_count = 1;
#if MOD_VARIANT == VARIANT_QUERY
    weft_query_desc q = {0};
    if (fn == count_run) {
        q.terms[0].id = res_id(app, "Marker");
        q.terms[0].oper = WEFT_OPER_WITH;
        q.term_count = 1;
        d.queries = &q;
        d.query_count = 1;
    }
    if (fn == ticker_run) {
        use[1].id = res_id(app, "Seen"); /* conflicts with reader now */
        d.resource_count = 2;
    }
#endif
    d.local.size = local_size;
    d.local.fini = fini;
    return weft_app_add_system(app, "Update", &d);
}

static weft_status build(weft_app *app, void *user)
{
    (void)user;
    weft_schedule *upd = weft_app_schedule(app, "Update");
    weft_node count = add(app, "count", count_run, "Counter", 0, NULL);
    if (!count) {
        return weft_last_status(weft_app_world(app));
    }
    size_t ticker_local = MOD_VARIANT == VARIANT_LOCAL ? 2 * sizeof(int64_t) : sizeof(int64_t);
    weft_node ticker = add(app, "ticker", ticker_run, "Ticks", ticker_local, NULL);
    if (!ticker) {
        return weft_last_status(weft_app_world(app));
    }
    weft_world *w = weft_app_world(app);
    /* every build registers its message type: the same type again after
     * a reload (FAIL also registers one, then fails) */
    weft_message_desc md = {0};
    md.name = "ModMsg";
    md.size = MOD_VARIANT == VARIANT_MSGSIZE ? 2 * sizeof(int64_t) : sizeof(int64_t);
    if (!weft_message_register(w, &md)) {
        return weft_last_status(w);
    }
#if MOD_VARIANT == VARIANT_FAIL
    md.name = "FailMsg";
    if (!weft_message_register(w, &md)) {
        return weft_last_status(w);
    }
#endif
    weft_component seen = res_id(app, "Seen");
    const int64_t *seen_v = weft_resource_get(w, seen, 2 * sizeof(int64_t));
    if (!seen_v) {
        return WEFT_ERR_NOT_FOUND;
    }
    weft_resource_use seen_use = {seen, WEFT_ACCESS_WRITE};
    weft_message_use ping_use = {(weft_message_type)seen_v[0], WEFT_ACCESS_READ};
    weft_system_desc rd = {0};
    rd.name = "reader";
    rd.fn = reader_run;
    rd.user = (void *)(uintptr_t)seen;
    rd.resources = &seen_use;
    rd.resource_count = 1;
    rd.messages = &ping_use;
    rd.message_count = 1;
    if (!weft_app_add_system(app, "Update", &rd)) {
        return weft_last_status(w);
    }
    weft_node gated = add(app, "gated", gated_run, "Gated", 0, NULL);
    if (!gated) {
        return weft_last_status(w);
    }
#if MOD_VARIANT != VARIANT_OBS
    /* rebound by name; attaching it again adds nothing */
    weft_condition_desc cd = {0};
    cd.name = "gate";
    cd.fn = gate;
    weft_condition *g = weft_condition_create(upd, &cd);
    if (!g) {
        return weft_last_status(w);
    }
    weft_status cst = weft_schedule_add_condition(upd, gated, g);
    if (cst != WEFT_OK) {
        return cst;
    }
#endif
#if MOD_VARIANT == VARIANT_ONCE
    /* new objects every build: a reload replaces the last build's, so
     * gated runs once more after each reload; gate2 is rebound and
     * combined again */
    weft_condition_desc cd2 = {0};
    cd2.name = "gate2";
    cd2.fn = gate;
    weft_condition *g2 = weft_condition_create(upd, &cd2);
    weft_condition *once = weft_condition_and(
        upd, g2, weft_condition_not(upd, weft_condition_not(upd, weft_condition_run_once(upd))));
    if (!once) {
        return weft_last_status(w);
    }
    cst = weft_schedule_add_condition(upd, gated, once);
    if (cst != WEFT_OK) {
        return cst;
    }
#endif
    /* declared again by every build (a repeated pair adds nothing) */
    weft_status st = weft_schedule_add_order(upd, count, ticker, 0);
    if (st != WEFT_OK) {
        return st;
    }
#if MOD_VARIANT != VARIANT_OBS
    /* rebound by every reload (the same event and component) */
    weft_observer_desc od = {0};
    od.event = WEFT_EVENT_ADD;
    od.component = res_id(app, "Marker");
    od.fn = on_marker;
    od.user = (void *)(uintptr_t)res_id(app, "ObsLog");
    if (!weft_observer_create(w, &od)) {
        return weft_last_status(w);
    }
#endif
#if MOD_VARIANT == VARIANT_B
    if (!add(app, "only_b", extra_run, "Extra", 0, NULL)) {
        return weft_last_status(weft_app_world(app));
    }
#else
    if (!add(app, "only_a", extra_run, "Extra", sizeof(int64_t), extra_fini)) {
        return weft_last_status(weft_app_world(app));
    }
#endif
#if MOD_VARIANT == VARIANT_FAIL
    /* the opposite order: kept after the failure, it would make a cycle */
    st = weft_schedule_add_order(upd, ticker, count, 0);
    if (st != WEFT_OK) {
        return st;
    }
    if (!add(app, "fresh", extra_run, "Extra", 0, NULL)) {
        return weft_last_status(weft_app_world(app));
    }
    return WEFT_ERR_CALLBACK;
#elif MOD_VARIANT == VARIANT_DUP
    if (!add(app, "count", count_run, "Counter", 0, NULL)) {
        return weft_last_status(weft_app_world(app));
    }
#endif
    return WEFT_OK;
}

static const weft_module_def def = {
#if MOD_VARIANT == VARIANT_ABI
    WEFT_MODULE_ABI_VERSION + 1,
#else
    WEFT_MODULE_ABI_VERSION,
#endif
    "game",
    build,
    NULL,
};

#if MOD_VARIANT == VARIANT_NOENTRY
WEFT_MODULE_EXPORT const weft_module_def *not_the_entry(void);
WEFT_MODULE_EXPORT const weft_module_def *not_the_entry(void)
#else
WEFT_MODULE_EXPORT const weft_module_def *weft_module_entry(void);
WEFT_MODULE_EXPORT const weft_module_def *weft_module_entry(void)
#endif
{
    return &def;
}

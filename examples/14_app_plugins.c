/* examples/14_app_plugins.c - an app assembled from plugins, stepped system
 * by system, with diagnostics logged through the logger hook.
 * SPDX-License-Identifier: MIT
 *
 * Three plugins make a tiny particle toy: "time" keeps a Clock resource,
 * "physics" (depending on time) integrates particles in FixedUpdate at
 * 30 Hz, and "spawner" (depending on physics) adds particles in Startup and
 * counts them in Update, asking the runner to stop after two simulated
 * seconds. They are added as one group with a fourth plugin, "audio",
 * disabled. The diagnostics plugin logs frame time, FPS and the entity
 * count every simulated second. Then Update is stepped: with stepping on,
 * each update runs one system (in schedule order) while the diagnostics
 * system, which is not steppable, keeps measuring. Prints what happens;
 * exits non-zero on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft.h"

typedef struct Clock { double t; int64_t updates; } Clock;
typedef struct Particle { float x, v; } Particle;

typedef struct game {
    weft_app *app;
    weft_component clock, particle;
    int64_t census;
} game;

static void check(weft_status st, const char *what)
{
    if (st != WEFT_OK) {
        fprintf(stderr, "app_plugins: %s: %s\n", what, weft_status_name(st));
        exit(1);
    }
}

static void log_info(void *user, weft_log_level level, weft_status status, const char *message,
                     const char *file, int32_t line)
{
    (void)user;
    (void)file;
    (void)line;
    if (level == WEFT_LOG_INFO) {
        printf("  log: %s\n", message);
    } else {
        fprintf(stderr, "  error %s: %s\n", weft_status_name(status), message);
    }
}

/* ---- systems ---- */

static void tick(weft_system_ctx *ctx, void *user)
{
    game *g = user;
    Clock *c = weft_system_resource_mut(ctx, g->clock, sizeof *c);
    c->t += weft_system_delta(ctx);
    c->updates++;
}

static void integrate(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    weft_system_iter(ctx, 0, &it);
    float dt = (float)weft_system_delta(ctx);
    while (weft_iter_next(&it)) {
        Particle *p = weft_iter_field_mut(&it, 0, sizeof *p);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            p[i].x += p[i].v * dt;
        }
    }
}

static void spawn(weft_system_ctx *ctx, void *user)
{
    game *g = user;
    weft_commands *cmds = weft_system_commands(ctx);
    for (int i = 0; i < 100; i++) {
        Particle p = {0.0f, (float)(i % 10) - 4.5f};
        weft_value v = {g->particle, sizeof p, &p};
        weft_cmd_spawn(cmds, &v, 1);
    }
}

static void count(weft_system_ctx *ctx, void *user)
{
    game *g = user;
    g->census = weft_system_count(ctx, 0);
    const Clock *c = weft_system_resource(ctx, g->clock, sizeof *c);
    if (c && c->t >= 2.0) {
        weft_app_exit(g->app, 0);
    }
}

static weft_system_desc system_desc(const char *name, weft_system_fn fn, game *g)
{
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.fn = fn;
    d.user = g;
    return d;
}

/* ---- plugins ---- */

static weft_status time_build(weft_app *app, void *user)
{
    game *g = user;
    weft_world *w = weft_app_world(app);
    weft_component_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.name = "Clock";
    cd.size = sizeof(Clock);
    g->clock = weft_component_register(w, &cd);
    if (!g->clock) {
        return weft_last_status(w);
    }
    weft_status st = weft_resource_insert(w, g->clock, NULL, sizeof(Clock));
    if (st != WEFT_OK) {
        return st;
    }
    weft_resource_use r = {g->clock, WEFT_ACCESS_WRITE};
    weft_system_desc d = system_desc("tick", tick, g);
    d.resources = &r;
    d.resource_count = 1;
    return weft_app_add_system(app, WEFT_APP_FIRST, &d) ? WEFT_OK : weft_last_status(w);
}

static weft_status physics_build(weft_app *app, void *user)
{
    game *g = user;
    weft_world *w = weft_app_world(app);
    weft_component_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.name = "Particle";
    cd.size = sizeof(Particle);
    g->particle = weft_component_register(w, &cd);
    if (!g->particle) {
        return weft_last_status(w);
    }
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0].id = g->particle;
    q.terms[0].access = WEFT_ACCESS_WRITE;
    q.term_count = 1;
    weft_system_desc d = system_desc("integrate", integrate, g);
    d.queries = &q;
    d.query_count = 1;
    return weft_app_add_system(app, WEFT_APP_FIXED_UPDATE, &d) ? WEFT_OK : weft_last_status(w);
}

static weft_status spawner_build(weft_app *app, void *user)
{
    game *g = user;
    weft_world *w = weft_app_world(app);
    weft_system_desc d = system_desc("spawn", spawn, g);
    d.flags = WEFT_SYSTEM_COMMANDS;
    if (!weft_app_add_system(app, WEFT_APP_STARTUP, &d)) {
        return weft_last_status(w);
    }
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0].id = g->particle;
    q.terms[0].access = WEFT_ACCESS_READ;
    q.term_count = 1;
    weft_resource_use r = {g->clock, WEFT_ACCESS_READ};
    d = system_desc("count", count, g);
    d.queries = &q;
    d.query_count = 1;
    d.resources = &r;
    d.resource_count = 1;
    return weft_app_add_system(app, WEFT_APP_UPDATE, &d) ? WEFT_OK : weft_last_status(w);
}

static weft_status audio_build(weft_app *app, void *user)
{
    (void)app;
    (void)user;
    fprintf(stderr, "app_plugins: the disabled audio plugin was built\n");
    return WEFT_ERR_INTERNAL;
}

/* ---- the runner ---- */

static weft_status run_until_exit(weft_app *app, void *user)
{
    game *g = user;
    while (!weft_app_exit_requested(app, NULL)) {
        weft_status st = weft_app_update(app, 1.0 / 60.0);
        if (st != WEFT_OK) {
            return st;
        }
    }
    printf("runner: stopped after %lld updates, %lld particles\n",
           (long long)weft_app_update_count(app), (long long)g->census);
    return WEFT_OK;
}

int main(void)
{
    game g;
    memset(&g, 0, sizeof g);
    weft_app_desc ad;
    memset(&ad, 0, sizeof ad);
    ad.world_desc.logger.fn = log_info;
    ad.fixed_step = 1.0 / 30.0;
    weft_app *app = g.app = weft_app_create(&ad);
    if (!app) {
        fprintf(stderr, "app_plugins: weft_app_create failed\n");
        return 1;
    }
    weft_world *w = weft_app_world(app);

    static const char *const needs_time[] = {"time"};
    static const char *const needs_physics[] = {"physics"};
    weft_plugin_desc members[4];
    memset(members, 0, sizeof members);
    members[0].name = "spawner"; /* listed first, built last */
    members[0].build = spawner_build;
    members[0].dependencies = needs_physics;
    members[0].dependency_count = 1;
    members[1].name = "physics";
    members[1].build = physics_build;
    members[1].dependencies = needs_time;
    members[1].dependency_count = 1;
    members[2].name = "time";
    members[2].build = time_build;
    members[3].name = "audio";
    members[3].build = audio_build;
    for (int i = 0; i < 4; i++) {
        members[i].user = &g;
    }
    static const char *const off[] = {"audio"};
    weft_plugin_group_desc group;
    memset(&group, 0, sizeof group);
    group.name = "toy";
    group.plugins = members;
    group.plugin_count = 4;
    group.disabled = off;
    group.disabled_count = 1;
    check(weft_app_add_plugin_group(app, &group), "weft_app_add_plugin_group");
    weft_diag_plugin_desc dd;
    memset(&dd, 0, sizeof dd);
    dd.log_interval = 1.0;
    check(weft_app_add_diagnostics_plugin(app, &dd), "weft_app_add_diagnostics_plugin");

    check(weft_app_setup(app), "weft_app_setup");
    printf("plugins in build order:");
    for (int32_t i = 0; i < weft_app_plugin_count(app); i++) {
        printf(" %s", weft_app_plugin_name(app, i));
    }
    printf("\nmain order:");
    for (int32_t i = 0; i < weft_app_label_count(app, WEFT_APP_ORDER_MAIN); i++) {
        printf(" %s", weft_app_label(app, WEFT_APP_ORDER_MAIN, i));
    }
    printf("\n");

    check(weft_app_run(app, run_until_exit, &g), "weft_app_run");
    const Clock *c = weft_resource_get(w, g.clock, sizeof *c);
    printf("clock: %.3f s over %lld updates; fixed steps in the last update: %d\n", c->t,
           (long long)c->updates, (int)weft_app_fixed_steps(app));

    /* stepping Update: one system per update, diagnostics still measured */
    weft_schedule *update = weft_app_schedule(app, WEFT_APP_UPDATE);
    weft_diag_value before, after;
    check(weft_diag_get(w, WEFT_DIAG_FRAME_COUNT, &before), "weft_diag_get");
    check(weft_schedule_set_stepping(update, true), "weft_schedule_set_stepping");
    check(weft_app_update(app, 1.0 / 60.0), "weft_app_update");
    int64_t census = g.census;
    g.census = -1;
    check(weft_app_update(app, 1.0 / 60.0), "weft_app_update");
    printf("stepping on, no step: count ran: %s\n", g.census == -1 ? "no" : "yes");
    weft_node next = weft_schedule_step_cursor(update);
    printf("next step: %s\n", weft_schedule_node_name(update, next));
    check(weft_schedule_step(update), "weft_schedule_step");
    check(weft_app_update(app, 1.0 / 60.0), "weft_app_update");
    printf("after one step: count ran: %s (%lld particles)\n", g.census == census ? "yes" : "no",
           (long long)g.census);
    check(weft_diag_get(w, WEFT_DIAG_FRAME_COUNT, &after), "weft_diag_get");
    printf("diagnostics kept measuring: frame_count %.0f -> %.0f\n", before.value, after.value);
    if (g.census != census || after.value != before.value + 3.0) {
        fprintf(stderr, "app_plugins: stepping did not behave\n");
        return 1;
    }
    check(weft_app_destroy(app), "weft_app_destroy");
    printf("app_plugins: OK\n");
    return 0;
}

/* examples/07_parallel_systems.c - systems, sets, ordering, run conditions, threads, ambiguities.
 * SPDX-License-Identifier: MIT
 *
 * Five systems over 50,000 entities on a 4-thread executor. Two of them
 * write the same component without an order: the build reports that
 * ambiguity (weft still orders them, by registration, so runs stay
 * deterministic); ordering them explicitly clears the report.
 */
#include <stdio.h>
#include <string.h>

#include "weft.h"

typedef struct Vec { float x, y; } Vec;

static weft_component g_pos, g_vel, g_heat, g_paused;

static void integrate(weft_system_ctx *ctx, void *user) /* pos += vel */
{
    (void)user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        Vec *p = weft_iter_field_mut(&it, 0, sizeof *p);
        const Vec *v = weft_iter_field(&it, 1, sizeof *v);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            p[i].x += v[i].x;
            p[i].y += v[i].y;
        }
    }
}

/* Shared body of the systems that touch one float column: user = op. */
static void heat_op(weft_system_ctx *ctx, void *user)
{
    char op = *(const char *)user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        float *h = weft_iter_field_mut(&it, 0, sizeof *h);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            h[i] = op == '+' ? h[i] + 1.0f : op == '*' ? h[i] * 0.5f : (h[i] > 8 ? 8 : h[i]);
        }
    }
}

static weft_component reg(weft_world *w, const char *name, size_t size)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    return weft_component_register(w, &d);
}

static weft_node add(weft_schedule *s, const char *name, weft_system_fn fn, void *user,
                     weft_component write, weft_component read)
{
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0] = (weft_term){.id = write, .access = WEFT_ACCESS_WRITE};
    q.terms[1] = (weft_term){.id = read, .access = WEFT_ACCESS_READ};
    q.term_count = read != 0 ? 2 : 1;
    return weft_schedule_add_system(s, &(weft_system_desc){
        .name = name, .fn = fn, .user = user, .queries = &q, .query_count = 1});
}

static void report(const weft_world *w, const weft_schedule *s)
{
    int32_t n = weft_schedule_ambiguity_count(s);
    printf("build %u: %d ambiguities\n", (unsigned)weft_schedule_build_count(s), (int)n);
    for (int32_t i = 0; i < n; i++) {
        weft_ambiguity a;
        weft_component_info ci;
        if (weft_schedule_ambiguity(s, i, &a) == WEFT_OK && a.component_count > 0 &&
            weft_component_info_get(w, a.components[0], &ci) == WEFT_OK) {
            printf("  %s and %s both write %s; %s runs first\n",
                   weft_schedule_node_name(s, a.a), weft_schedule_node_name(s, a.b), ci.name,
                   weft_schedule_node_name(s, a.a));
        }
    }
}

int main(void)
{
    weft_world *w = weft_world_create(NULL);
    g_pos = reg(w, "Position", sizeof(Vec));
    g_vel = reg(w, "Velocity", sizeof(Vec));
    g_heat = reg(w, "Heat", sizeof(float));
    g_paused = reg(w, "Paused", 0); /* a tag resource */
    weft_value cols[] = {{g_pos, sizeof(Vec), NULL}, {g_vel, sizeof(Vec), NULL},
                         {g_heat, sizeof(float), NULL}};
    if (g_paused == 0 || weft_spawn_bulk(w, cols, 3, 50000, NULL) != WEFT_OK ||
        /* 4 workers, or the calling thread alone in a build without threads */
        weft_world_set_threads(w, weft_max_threads() < 4 ? 1 : 4) != WEFT_OK) {
        fprintf(stderr, "setup: %s\n", weft_last_error(w));
        return 1;
    }

    static const char plus = '+', half = '*', clamp = 'c';
    weft_schedule *s = weft_schedule_create(w, "update");
    weft_node move = add(s, "integrate", integrate, NULL, g_pos, g_vel);
    weft_node warm = add(s, "warm", heat_op, (void *)&plus, g_heat, 0);
    weft_node cool = add(s, "cool", heat_op, (void *)&half, g_heat, 0);
    weft_node cap = add(s, "cap", heat_op, (void *)&clamp, g_heat, 0);
    weft_node sim = weft_schedule_ensure_set(s, "simulation");
    if (!move || !warm || !cool || !cap || !sim) {
        fprintf(stderr, "systems: %s\n", weft_last_error(w));
        return 1;
    }
    /* integrate and warm form a set that pauses while the Paused resource
     * exists; warm runs before cap; cool is left unordered against both. */
    weft_condition *running = weft_condition_not(s, weft_condition_resource_exists(s, g_paused));
    if (weft_schedule_add_to_set(s, move, sim) != WEFT_OK ||
            weft_schedule_add_to_set(s, warm, sim) != WEFT_OK ||
            weft_schedule_add_condition(s, sim, running) != WEFT_OK ||
            weft_schedule_add_order(s, warm, cap, 0) != WEFT_OK ||
            weft_schedule_build(s) != WEFT_OK) {
        fprintf(stderr, "schedule: %s\n", weft_last_error(w));
        return 1;
    }
    report(w, s); /* warm/cool and cool/cap: both write Heat, no order */

    /* Fix it: cool after warm, before cap. The next run rebuilds. */
    weft_node chain[] = {warm, cool, cap};
    if (weft_schedule_add_chain(s, chain, 3, 0) != WEFT_OK || weft_schedule_build(s) != WEFT_OK) {
        return 1;
    }
    report(w, s);

    weft_schedule_set_profiling(s, true);
    for (int frame = 0; frame < 10; frame++) {
        /* Paused for runs 4..6: the simulation set is skipped. */
        if ((frame == 4 && weft_resource_insert(w, g_paused, NULL, 0) != WEFT_OK) ||
            (frame == 7 && weft_resource_remove(w, g_paused) != WEFT_OK)) {
            return 1;
        }
        if (weft_schedule_run(s, 1.0 / 60.0) != WEFT_OK) {
            fprintf(stderr, "run: %s\n", weft_last_error(w));
            return 1;
        }
    }
    printf("order:");
    for (weft_node n = 1; n <= (weft_node)weft_schedule_node_count(s); n++) {
        printf(" %d:%s", (int)weft_schedule_position(s, n), weft_schedule_node_name(s, n));
    }
    printf("\n%d threads, up to %d systems at once in the last run\n", (int)weft_world_threads(w),
           (int)weft_schedule_max_concurrency(s));
    weft_system_stats st_move, st_cap;
    weft_schedule_system_stats(s, move, &st_move);
    weft_schedule_system_stats(s, cap, &st_cap);
    printf("integrate ran %llu times (skipped %llu while paused), cap ran %llu times\n",
           (unsigned long long)st_move.runs, (unsigned long long)st_move.skipped,
           (unsigned long long)st_cap.runs);
    int ok = st_move.runs == 7 && st_move.skipped == 3 && st_cap.runs == 10 &&
             weft_schedule_ambiguity_count(s) == 0;
    weft_world_destroy(w);
    return ok ? 0 : 1;
}

/* examples/09_errors.c - error handling: statuses, the error slot, the logger hook.
 * SPDX-License-Identifier: MIT
 *
 * weft never aborts on bad input: every call returns a weft_status (or 0 /
 * NULL), records the failure in the world's error slot (weft_last_status,
 * weft_last_error) and passes it to the logger hook. This provokes a few
 * failures on purpose and checks each status.
 */
#include <stdio.h>
#include <string.h>

#include "weft.h"

static int g_logged;

static void logger(void *user, weft_log_level level, weft_status status, const char *message,
                   const char *file, int32_t line)
{
    (void)user, (void)level, (void)status, (void)message, (void)file, (void)line;
    g_logged++; /* a real host would forward to its own log */
}

static int g_failures;

/* Prints what the world recorded and checks it is the expected status. */
static void expect(const weft_world *w, const char *what, weft_status got, weft_status want)
{
    int match = got == want && weft_last_status(w) == want;
    printf("%-36s -> %-26s %s\n", what, weft_status_name(got), match ? "" : "(UNEXPECTED)");
    printf("%-36s    \"%s\"\n", "", weft_last_error(w));
    g_failures += !match;
}

static void reads_undeclared(weft_system_ctx *ctx, void *user)
{
    /* Hp was not declared in this system's resources: ACCESS_VIOLATION,
     * and the system's run fails. */
    (void)weft_system_resource(ctx, *(const weft_component *)user, sizeof(int32_t));
}

static void nothing(weft_system_ctx *ctx, void *user)
{
    (void)ctx, (void)user;
}

int main(void)
{
    weft_world_desc wd;
    memset(&wd, 0, sizeof wd);
    wd.logger.fn = logger;
    weft_world *w = weft_world_create(&wd);
    if (w == NULL) {
        return 1;
    }
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = "Hp";
    d.size = sizeof(int32_t);
    weft_component hp = weft_component_register(w, &d);
    int32_t v = 10;

    /* Registering the same name twice. */
    expect(w, "register \"Hp\" again", weft_component_register(w, &d) == 0 ? weft_last_status(w)
                                                                           : WEFT_OK,
           WEFT_ERR_ALREADY_EXISTS);
    /* A value of the wrong size. */
    weft_entity e = weft_spawn(w);
    expect(w, "insert with a wrong size", weft_insert(w, e, hp, &v, sizeof(int64_t)),
           WEFT_ERR_SIZE_MISMATCH);
    /* A component id that was never registered. */
    expect(w, "insert an unknown component", weft_insert(w, e, 999, &v, sizeof v),
           WEFT_ERR_UNKNOWN_COMPONENT);
    /* A stale handle: the entity was despawned. */
    if (weft_despawn(w, e) != WEFT_OK) {
        return 1;
    }
    expect(w, "insert into a despawned entity", weft_insert(w, e, hp, &v, sizeof v),
           WEFT_ERR_STALE_ENTITY);
    /* Functions returning pointers return NULL and record the reason. */
    weft_clear_error(w);
    const void *p = weft_get(w, e, hp, sizeof v);
    expect(w, "get from a despawned entity", p == NULL ? weft_last_status(w) : WEFT_OK,
           WEFT_ERR_STALE_ENTITY);
    /* A NULL argument. */
    expect(w, "weft_world_get_stats(w, NULL)", weft_world_get_stats(w, NULL),
           WEFT_ERR_INVALID_ARG);

    /* Schedules: a cycle is reported by the build, naming the nodes. */
    weft_schedule *s = weft_schedule_create(w, "cyclic");
    weft_node a = weft_schedule_add_system(s, &(weft_system_desc){.name = "a", .fn = nothing});
    weft_node b = weft_schedule_add_system(s, &(weft_system_desc){.name = "b", .fn = nothing});
    if (s == NULL || a == 0 || b == 0 || weft_schedule_add_order(s, a, b, 0) != WEFT_OK ||
            weft_schedule_add_order(s, b, a, 0) != WEFT_OK) {
        return 1;
    }
    expect(w, "build a -> b -> a", weft_schedule_build(s), WEFT_ERR_SCHEDULE_CYCLE);

    /* A system touching what it did not declare fails its run; the rest of
     * the schedule still runs and the first failure is returned. */
    weft_schedule *s2 = weft_schedule_create(w, "sloppy");
    if (s2 == NULL || weft_schedule_add_system(s2, &(weft_system_desc){.name = "sloppy",
                                                               .fn = reads_undeclared,
                                                               .user = &hp}) == 0) {
        return 1;
    }
    expect(w, "system reads an undeclared resource", weft_schedule_run(s2, 0.0),
           WEFT_ERR_ACCESS_VIOLATION);

    /* Names and descriptions are static strings, for any value. */
    printf("weft_status_str(WEFT_ERR_CAPACITY): %s\n", weft_status_str(WEFT_ERR_CAPACITY));
    printf("weft_status_name(1234): %s\n", weft_status_name((weft_status)1234));
    weft_clear_error(w);
    printf("after weft_clear_error: %s, \"%s\"; the logger saw %d errors\n",
           weft_status_name(weft_last_status(w)), weft_last_error(w), g_logged);
    int ok = g_failures == 0 && g_logged >= 8 && weft_last_status(w) == WEFT_OK;
    weft_world_destroy(w);
    return ok ? 0 : 1;
}

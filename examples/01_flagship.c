/* examples/01_flagship.c - the core world end to end: spawn, move, despawn, verify.
 * SPDX-License-Identifier: MIT
 *
 * Usage: weft_example_flagship [N]        (N defaults to 1,000,000)
 *
 * Spawns N entities with Position and Velocity (half one by one, half in one
 * weft_spawn_bulk call), integrates positions through a cached query (and
 * reads them by handle for comparison), adds a Health component to every
 * 4th entity and removes it again from every 8th, despawns every 3rd, then
 * prints entity and archetype counts,
 * live bytes and the cost of each phase in ns per operation. Every value is
 * then checked against what the phases should have produced, stale handles
 * are checked to be rejected, and weft_world_check walks the storage
 * invariants. Any failure prints the world's error and exits 1.
 *
 * Finally squads (a leader with eight ChildOf members) are spawned through
 * one command buffer while an observer counts Health additions, and half
 * of them are disbanded by despawning their leaders (whole subtrees).
 * The parallel scheduler comes with a later issue.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft.h"

typedef struct Position {
    float x;
    float y;
} Position;

typedef struct Velocity {
    float x;
    float y;
} Velocity;

typedef struct Health {
    int32_t hp;
} Health;

/* ---- helpers ---- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static _Noreturn void fail(const weft_world *w, const char *what, weft_status st)
{
    fprintf(stderr, "flagship: %s failed: %s (%s): %s\n", what, weft_status_name(st),
            weft_status_str(st), w != NULL ? weft_last_error(w) : "no world");
    exit(1);
}

/* Observer: counts Health additions into *user. */
static void count_health(weft_world *w, weft_trigger *t, void *user)
{
    (void)w;
    (void)t;
    (*(int64_t *)user)++;
}

static void expect_ok(const weft_world *w, const char *what, weft_status st)
{
    if (st != WEFT_OK) {
        fail(w, what, st);
    }
}

static _Noreturn void fail_check(const char *what, int64_t i)
{
    fprintf(stderr, "flagship: verification failed: %s (entity #%lld)\n", what,
            (long long)i);
    exit(1);
}

/* The logger hook: weft is silent without one. `user` points at a flag set
 * while the example provokes errors on purpose. */
static void log_to_stderr(void *user, weft_log_level level, weft_status status,
                          const char *message, const char *file, int32_t line)
{
    if (*(const bool *)user) {
        return;
    }
    fprintf(stderr, "weft[%s] %s: %s (%s:%d)\n",
            level == WEFT_LOG_WARN ? "warn" : level == WEFT_LOG_INFO ? "info" : "error",
            weft_status_name(status), message, file != NULL ? file : "?", (int)line);
}

static weft_component register_component(weft_world *w, const char *name, size_t size)
{
    weft_component_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.name = name;
    desc.size = size;
    weft_component c = weft_component_register(w, &desc);
    if (c == WEFT_COMPONENT_NONE) {
        fail(w, "weft_component_register", weft_last_status(w));
    }
    return c;
}

/* The values entity #i starts with: small integers, exact in float. */
static Position initial_position(int64_t i)
{
    Position p = {(float)(i % 1000), (float)(i / 1000)};
    return p;
}

static Velocity initial_velocity(int64_t i)
{
    Velocity v = {1.0f, (float)(i % 7)};
    return v;
}

/* ---- phase timing table ---- */

typedef struct phase {
    const char *name;
    int64_t ops;
    uint64_t ns;
} phase;

enum { MAX_PHASES = 16 };
static phase g_phases[MAX_PHASES];
static int g_phase_count;

static void record_phase(const char *name, int64_t ops, uint64_t t0, uint64_t t1)
{
    if (g_phase_count < MAX_PHASES) {
        g_phases[g_phase_count].name = name;
        g_phases[g_phase_count].ops = ops;
        g_phases[g_phase_count].ns = t1 - t0;
        g_phase_count++;
    }
}

static void print_stats(const weft_world *w, int64_t n)
{
    weft_world_stats st;
    expect_ok(w, "weft_world_get_stats", weft_world_get_stats(w, &st));
    printf("world: %lld live entities, %d archetypes, %d tables, %d components, "
           "%d entity records\n",
           (long long)st.live_entities, (int)st.archetypes, (int)st.tables,
           (int)st.components, (int)st.entity_records);
    printf("live bytes: %lld (%.1f per live entity, %.1f per spawned entity)\n",
           (long long)st.live_bytes,
           st.live_entities > 0 ? (double)st.live_bytes / (double)st.live_entities : 0.0,
           (double)st.live_bytes / (double)n);
    for (int32_t a = 0; a < st.archetypes; a++) {
        weft_archetype_info info;
        expect_ok(w, "weft_archetype_info_get", weft_archetype_info_get(w, a, &info));
        printf("  archetype %d: %8d entities, table %d, {", (int)a,
               (int)info.entity_count, (int)info.table);
        for (int32_t c = 0; c < info.component_count; c++) {
            weft_component_info ci;
            expect_ok(w, "weft_component_info_get",
                      weft_component_info_get(w, info.components[c], &ci));
            printf("%s%s", c > 0 ? ", " : "", ci.name);
        }
        printf("}\n");
    }
}

int main(int argc, char **argv)
{
    int64_t n = 1000000;
    if (argc > 1) {
        char *end = NULL;
        long long v = strtoll(argv[1], &end, 10);
        if (end == argv[1] || *end != '\0' || v < 8 || v > 100000000) {
            fprintf(stderr, "usage: %s [N]   (8 <= N <= 100000000)\n", argv[0]);
            return 2;
        }
        n = v;
    }
    if (weft_abi_version() != WEFT_VERSION) {
        fprintf(stderr, "flagship: header is %d but library is %d\n", WEFT_VERSION,
                (int)weft_abi_version());
        return 1;
    }

    weft_world_desc desc;
    memset(&desc, 0, sizeof desc);
    bool expecting_errors = false;
    desc.logger.fn = log_to_stderr;
    desc.logger.user = &expecting_errors;
    weft_world *w = weft_world_create(&desc);
    if (w == NULL) {
        fprintf(stderr, "flagship: weft_world_create returned NULL\n");
        return 1;
    }
    weft_component pos = register_component(w, "Position", sizeof(Position));
    weft_component vel = register_component(w, "Velocity", sizeof(Velocity));
    weft_component hp = register_component(w, "Health", sizeof(Health));

    weft_entity *ents = malloc(sizeof *ents * (size_t)n);
    Position *pos_in = malloc(sizeof *pos_in * (size_t)n);
    Velocity *vel_in = malloc(sizeof *vel_in * (size_t)n);
    if (ents == NULL || pos_in == NULL || vel_in == NULL) {
        fprintf(stderr, "flagship: out of memory for %lld entities\n", (long long)n);
        return 1;
    }
    for (int64_t i = 0; i < n; i++) {
        pos_in[i] = initial_position(i);
        vel_in[i] = initial_velocity(i);
    }
    int64_t half = n / 2;
    printf("weft %d.%d.%d flagship: N = %lld (%lld one by one, %lld in one bulk call)\n",
           WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR, WEFT_VERSION_PATCH, (long long)n,
           (long long)half, (long long)(n - half));

    /* Phase 1: one by one, each landing directly in {Position, Velocity}. */
    uint64_t t0 = now_ns();
    for (int64_t i = 0; i < half; i++) {
        weft_value values[2] = {
            {pos, sizeof(Position), &pos_in[i]},
            {vel, sizeof(Velocity), &vel_in[i]},
        };
        ents[i] = weft_spawn_with(w, values, 2);
        if (ents[i] == WEFT_ENTITY_NONE) {
            fail(w, "weft_spawn_with", weft_last_status(w));
        }
    }
    uint64_t t1 = now_ns();
    record_phase("spawn one by one (Position+Velocity)", half, t0, t1);

    /* Phase 2: the rest in one call, straight from the value arrays. */
    weft_value columns[2] = {
        {pos, sizeof(Position), &pos_in[half]},
        {vel, sizeof(Velocity), &vel_in[half]},
    };
    t0 = now_ns();
    expect_ok(w, "weft_spawn_bulk",
              weft_spawn_bulk(w, columns, 2, (int32_t)(n - half), &ents[half]));
    t1 = now_ns();
    record_phase("spawn bulk (Position+Velocity)", n - half, t0, t1);

    /* Phase 3: integrate once through a cached query, chunk by chunk. */
    weft_query_desc qd;
    memset(&qd, 0, sizeof qd);
    qd.terms[0].id = pos;
    qd.terms[0].access = WEFT_ACCESS_WRITE;
    qd.terms[1].id = vel;
    qd.term_count = 2;
    weft_query *move = weft_query_create(w, &qd);
    if (move == NULL) {
        fail(w, "weft_query_create", weft_last_status(w));
    }
    t0 = now_ns();
    weft_iter it;
    expect_ok(w, "weft_query_iter", weft_query_iter(w, move, &it));
    int64_t moved = 0;
    while (weft_iter_next(&it)) {
        Position *p = weft_iter_field_mut(&it, 0, sizeof *p);
        const Velocity *v = weft_iter_field(&it, 1, sizeof *v);
        int32_t count = weft_iter_count(&it);
        for (int32_t i = 0; i < count; i++) {
            p[i].x += v[i].x;
            p[i].y += v[i].y;
        }
        moved += count;
    }
    t1 = now_ns();
    if (moved != n) {
        fail_check("entities moved by the query", moved);
    }
    record_phase("query p += v", n, t0, t1);

    /* The same access through handles, for comparison: get_mut + get of
     * every entity (values are left as they are). */
    t0 = now_ns();
    double sink = 0.0;
    for (int64_t i = 0; i < n; i++) {
        Position *p = weft_get_mut(w, ents[i], pos, sizeof *p);
        const Velocity *v = weft_get(w, ents[i], vel, sizeof *v);
        if (p == NULL || v == NULL) {
            fail(w, "weft_get_mut/weft_get", weft_last_status(w));
        }
        sink += (double)p->x + (double)v->y;
    }
    t1 = now_ns();
    record_phase("get_mut+get by handle", n, t0, t1);
    if (sink != sink) {
        fail_check("finite positions", 0);
    }

    /* Phase 4: every 4th entity gains Health (one row move each). */
    int64_t added = 0;
    t0 = now_ns();
    for (int64_t i = 0; i < n; i += 4) {
        Health h = {(int32_t)i};
        expect_ok(w, "weft_insert(Health)", weft_insert(w, ents[i], hp, &h, sizeof h));
        added++;
    }
    t1 = now_ns();
    record_phase("insert Health (every 4th)", added, t0, t1);

    /* Phase 5: every 8th loses it again. */
    int64_t removed = 0;
    t0 = now_ns();
    for (int64_t i = 0; i < n; i += 8) {
        expect_ok(w, "weft_remove(Health)", weft_remove(w, ents[i], hp));
        removed++;
    }
    t1 = now_ns();
    record_phase("remove Health (every 8th)", removed, t0, t1);

    /* Phase 6: every 3rd entity is despawned. */
    int64_t despawned = 0;
    t0 = now_ns();
    for (int64_t i = 0; i < n; i += 3) {
        expect_ok(w, "weft_despawn", weft_despawn(w, ents[i]));
        despawned++;
    }
    t1 = now_ns();
    record_phase("despawn (every 3rd)", despawned, t0, t1);

    printf("\n%-40s %10s %12s %10s\n", "phase", "ops", "total ms", "ns/op");
    for (int i = 0; i < g_phase_count; i++) {
        const phase *ph = &g_phases[i];
        printf("%-40s %10lld %12.3f %10.2f\n", ph->name, (long long)ph->ops,
               (double)ph->ns * 1e-6,
               ph->ops > 0 ? (double)ph->ns / (double)ph->ops : 0.0);
    }
    printf("\n");
    print_stats(w, n);

    /* Verification: every value is what the phases should have produced. */
    t0 = now_ns();
    int64_t expect_live = n - despawned;
    weft_world_stats st;
    expect_ok(w, "weft_world_get_stats", weft_world_get_stats(w, &st));
    if (st.live_entities != expect_live) {
        fail_check("live entity count", st.live_entities);
    }
    int64_t with_health = 0;
    for (int64_t i = 0; i < n; i++) {
        weft_entity e = ents[i];
        bool should_live = i % 3 != 0;
        if (weft_is_alive(w, e) != should_live) {
            fail_check("weft_is_alive", i);
        }
        if (!should_live) {
            continue;
        }
        const Position *p = weft_get(w, e, pos, sizeof *p);
        const Velocity *v = weft_get(w, e, vel, sizeof *v);
        if (p == NULL || v == NULL) {
            fail_check("Position/Velocity present", i);
        }
        Position p0 = initial_position(i);
        Velocity v0 = initial_velocity(i);
        if (p->x != p0.x + v0.x || p->y != p0.y + v0.y || v->x != v0.x ||
            v->y != v0.y) {
            fail_check("Position/Velocity values", i);
        }
        bool should_have_hp = i % 8 == 4;
        if (weft_has(w, e, hp) != should_have_hp) {
            fail_check("Health presence", i);
        }
        if (should_have_hp) {
            const Health *h = weft_get(w, e, hp, sizeof *h);
            if (h == NULL || h->hp != (int32_t)i) {
                fail_check("Health value", i);
            }
            with_health++;
        }
    }
    /* A despawned handle must be rejected, and the rejection recorded. */
    expecting_errors = true;
    weft_clear_error(w);
    if (weft_get(w, ents[0], pos, sizeof(Position)) != NULL ||
        weft_last_status(w) != WEFT_ERR_STALE_ENTITY) {
        fail_check("stale handle rejected with WEFT_ERR_STALE_ENTITY", 0);
    }
    weft_clear_error(w);
    /* So must a wrong size, without touching the world. */
    if (weft_get(w, ents[1], pos, sizeof(Position) + 1) != NULL ||
        weft_last_status(w) != WEFT_ERR_SIZE_MISMATCH) {
        fail_check("size mismatch rejected with WEFT_ERR_SIZE_MISMATCH", 1);
    }
    weft_clear_error(w);
    expecting_errors = false;
    expect_ok(w, "weft_world_check", weft_world_check(w));
    uint64_t hash = weft_world_hash(w);
    t1 = now_ns();
    printf("\nverified %lld live entities (%lld with Health), world check OK, "
           "hash %016llx (%.1f ms)\n",
           (long long)expect_live, (long long)with_health, (unsigned long long)hash,
           (double)(t1 - t0) * 1e-6);

    /* Phase 7: squads through a command buffer. Each squad is a leader
     * with 8 members parented to it (ChildOf); an observer counts Health
     * additions; disbanding half the squads despawns each whole subtree. */
    int64_t squads = n / 1000 > 0 ? n / 1000 : 1;
    weft_component child_of = weft_child_of(w);
    int64_t health_added = 0;
    weft_observer_desc od;
    memset(&od, 0, sizeof od);
    od.event = WEFT_EVENT_ADD;
    od.component = hp;
    od.fn = count_health;
    od.user = &health_added;
    if (child_of == 0 || weft_observer_create(w, &od) == NULL) {
        fail(w, "weft_child_of/weft_observer_create", weft_last_status(w));
    }
    weft_commands *cmds = weft_commands_create(w);
    weft_entity *leaders = malloc(sizeof *leaders * (size_t)squads);
    if (cmds == NULL || leaders == NULL) {
        fail(w, "weft_commands_create", weft_last_status(w));
    }
    t0 = now_ns();
    for (int64_t q = 0; q < squads; q++) {
        Health h = {100};
        weft_value lead[] = {{hp, sizeof h, &h}};
        leaders[q] = weft_cmd_spawn(cmds, lead, 1);
        for (int m = 0; m < 8; m++) {
            Position p = {(float)q, (float)m};
            weft_value member[] = {{pos, sizeof p, &p}, {child_of, sizeof leaders[q],
                                                        &leaders[q]}};
            if (weft_cmd_spawn(cmds, member, 2) == 0) {
                fail(w, "weft_cmd_spawn", weft_last_status(w));
            }
        }
    }
    expect_ok(w, "weft_commands_apply", weft_commands_apply(w, cmds));
    t1 = now_ns();
    int64_t spawned = squads * 9;
    printf("\nsquads: %lld leaders + %lld members through one command buffer: "
           "%.1f ns per entity\n",
           (long long)squads, (long long)squads * 8, (double)(t1 - t0) / (double)spawned);
    int32_t members = 0;
    if (weft_children(w, leaders[0], &members) == NULL || members != 8 ||
        health_added != squads) {
        fail_check("squad members / observed Health additions", members);
    }
    t0 = now_ns();
    for (int64_t q = 0; q < squads; q += 2) {
        expect_ok(w, "weft_despawn(leader)", weft_despawn(w, leaders[q]));
    }
    t1 = now_ns();
    int64_t disbanded = (squads + 1) / 2;
    expect_ok(w, "weft_world_get_stats", weft_world_get_stats(w, &st));
    if (st.live_entities != expect_live + (squads - disbanded) * 9) {
        fail_check("live entities after disbanding", st.live_entities);
    }
    expect_ok(w, "weft_world_check", weft_world_check(w));
    printf("disbanded %lld squads (leader + subtree): %.1f ns per entity; "
           "world check OK\n",
           (long long)disbanded, (double)(t1 - t0) / (double)(disbanded * 9));
    weft_commands_destroy(cmds);
    free(leaders);

    weft_world_destroy(w);
    free(ents);
    free(pos_in);
    free(vel_in);
    printf("flagship: OK\n");
    return 0;
}

/* bench/peers/peer_flecs.c - flecs in the peer comparison (C API, flecs 4).
 * SPDX-License-Identifier: MIT
 *
 * Idiomatic flecs 4 C calls, each its fastest public form for the job:
 * ecs_insert (entity created with both values in one call), ecs_bulk_init,
 * ecs_delete, ecs_set/ecs_remove, ecs_add_id/ecs_remove_id for the tag,
 * ecs_get, and a cached query walked with ecs_query_next/ecs_field. The
 * world is ecs_mini() (no addons imported). Build with -DNDEBUG, or flecs
 * runs its debug checks.
 */
#define _POSIX_C_SOURCE 200809L

#include "peer_common.h"
#include "flecs.h"

typedef peer_pos Position;
typedef peer_vel Velocity;
typedef peer_health Health;

ECS_COMPONENT_DECLARE(Position);
ECS_COMPONENT_DECLARE(Velocity);
ECS_COMPONENT_DECLARE(Health);
static ecs_entity_t Tag;
/* For the "_toggle" scenarios: a Health-sized component and a tag with the
 * DontFragment trait (flecs 4.1's storage outside the table type: adding
 * one moves no row). */
static ecs_entity_t HealthT, TagT;

static ecs_world_t *fl_init(void)
{
    ecs_world_t *w = ecs_mini();
    if (w == NULL) {
        peer_fail("flecs", "ecs_mini failed");
    }
    ECS_COMPONENT_DEFINE(w, Position);
    ECS_COMPONENT_DEFINE(w, Velocity);
    ECS_COMPONENT_DEFINE(w, Health);
    Tag = ecs_new(w);
    HealthT = ecs_component_init(
        w, &(ecs_component_desc_t){.entity = ecs_entity(w, {.name = "HealthT"}),
                                   .type = {.size = sizeof(Health), .alignment = ECS_ALIGNOF(Health)}});
    ecs_add_id(w, HealthT, EcsDontFragment);
    TagT = ecs_new(w);
    ecs_add_id(w, TagT, EcsDontFragment);
    return w;
}

static ecs_entity_t *fl_spawn_all(ecs_world_t *w, uint32_t n, int with_hp)
{
    ecs_entity_t *e = malloc(sizeof *e * n);
    if (e == NULL) {
        peer_fail("flecs", "out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        peer_pos p = peer_pos_of(i);
        peer_vel v = peer_vel_of(i);
        if (with_hp) {
            peer_health h = peer_health_of(i);
            e[i] = ecs_insert(w, {ecs_id(Position), &p}, {ecs_id(Velocity), &v},
                              {ecs_id(Health), &h});
        } else {
            e[i] = ecs_insert(w, {ecs_id(Position), &p}, {ecs_id(Velocity), &v});
        }
    }
    return e;
}

static uint64_t fl_sum_all(ecs_world_t *w, const ecs_entity_t *e, uint32_t n)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        const Position *p = ecs_get(w, e[i], Position);
        const Velocity *v = ecs_get(w, e[i], Velocity);
        if (p == NULL || v == NULL) {
            peer_fail("flecs", "entity lost");
        }
        sum += peer_sum_pos(p) + peer_sum_vel(v);
    }
    return sum;
}

static int run(const char *sc, uint32_t n, double *ns, uint64_t *sum)
{
    ecs_world_t *w = fl_init();
    uint64_t t0 = 0;
    uint64_t t1 = 0;
    int toggle = 0;
    ecs_entity_t *e = NULL;
    if (strcmp(sc, "create") == 0) {
        e = malloc(sizeof *e * n);
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            peer_pos p = peer_pos_of(i);
            peer_vel v = peer_vel_of(i);
            e[i] = ecs_insert(w, {ecs_id(Position), &p}, {ecs_id(Velocity), &v});
        }
        t1 = peer_now_ns();
        *sum = fl_sum_all(w, e, n);
    } else if (strcmp(sc, "create_bulk") == 0) {
        peer_pos *p = malloc(sizeof *p * n);
        peer_vel *v = malloc(sizeof *v * n);
        e = malloc(sizeof *e * n);
        for (uint32_t i = 0; i < n; i++) {
            p[i] = peer_pos_of(i);
            v[i] = peer_vel_of(i);
        }
        void *data[2] = {p, v};
        ecs_bulk_desc_t bd;
        memset(&bd, 0, sizeof bd);
        bd.count = (int32_t)n;
        bd.ids[0] = ecs_id(Position);
        bd.ids[1] = ecs_id(Velocity);
        bd.data = data;
        t0 = peer_now_ns();
        const ecs_entity_t *got = ecs_bulk_init(w, &bd);
        t1 = peer_now_ns();
        memcpy(e, got, sizeof *e * n);
        *sum = fl_sum_all(w, e, n);
        free(p);
        free(v);
    } else if (strcmp(sc, "destroy") == 0) {
        e = fl_spawn_all(w, n, 0);
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            ecs_delete(w, e[i]);
        }
        t1 = peer_now_ns();
        uint64_t alive = 0;
        for (uint32_t i = 0; i < n; i++) {
            alive += ecs_is_alive(w, e[i]);
        }
        *sum = (uint64_t)n * 1000u + alive;
    } else if (peer_addrem_kind(sc, &toggle) != 0) {
        int tag = peer_addrem_kind(sc, &toggle) == 2;
        ecs_id_t c = tag ? (toggle ? TagT : Tag) : (toggle ? HealthT : ecs_id(Health));
        e = fl_spawn_all(w, n, 0);
        t0 = peer_now_ns();
        if (tag) {
            for (uint32_t i = 0; i < n; i++) {
                ecs_add_id(w, e[i], c);
            }
        } else {
            for (uint32_t i = 0; i < n; i++) {
                peer_health h = peer_health_of(i);
                ecs_set_id(w, e[i], c, sizeof h, &h);
            }
        }
        uint64_t mid0 = peer_now_ns();
        uint64_t with = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (tag) {
                with += ecs_has_id(w, e[i], c);
            } else {
                const Health *h = (const Health *)ecs_get_id(w, e[i], c);
                with += h ? peer_sum_health(h) : 0u;
            }
        }
        uint64_t mid1 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            ecs_remove_id(w, e[i], c);
        }
        t1 = peer_now_ns();
        t1 -= mid1 - mid0;
        uint64_t left = 0;
        for (uint32_t i = 0; i < n; i++) {
            left += ecs_has_id(w, e[i], c);
        }
        *sum = with + 1000003u * left + fl_sum_all(w, e, n);
    } else if (strncmp(sc, "get", 3) == 0) {
        int k = sc[3] - '0';
        uint32_t *order = strstr(sc, "_shuf") ? peer_shuffled_order(n) : NULL;
        e = fl_spawn_all(w, n, 1);
        uint64_t acc = 0;
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            ecs_entity_t h = e[order ? order[i] : i];
            acc += peer_sum_pos(ecs_get(w, h, Position));
            if (k >= 2) {
                acc += peer_sum_vel(ecs_get(w, h, Velocity));
            }
            if (k >= 3) {
                acc += peer_sum_health(ecs_get(w, h, Health));
            }
        }
        t1 = peer_now_ns();
        *sum = acc;
        free(order);
    } else if (strcmp(sc, "iterate") == 0) {
        e = fl_spawn_all(w, n, 0);
        ecs_query_desc_t qd;
        memset(&qd, 0, sizeof qd);
        qd.terms[0].id = ecs_id(Position);
        qd.terms[0].inout = EcsInOut;
        qd.terms[1].id = ecs_id(Velocity);
        qd.terms[1].inout = EcsIn;
        qd.cache_kind = EcsQueryCacheAuto;
        ecs_query_t *q = ecs_query_init(w, &qd);
        uint64_t best = UINT64_MAX;
        for (int pass = 0; pass < 10; pass++) {
            uint64_t a = peer_now_ns();
            ecs_iter_t it = ecs_query_iter(w, q);
            while (ecs_query_next(&it)) {
                Position *p = ecs_field(&it, Position, 0);
                const Velocity *v = ecs_field(&it, Velocity, 1);
                for (int32_t i = 0; i < it.count; i++) {
                    p[i].x += v[i].x;
                    p[i].y += v[i].y;
                }
            }
            uint64_t c = peer_now_ns();
            best = c - a < best ? c - a : best;
        }
        t1 = best;
        ecs_query_fini(q);
        *sum = fl_sum_all(w, e, n);
    } else if (strcmp(sc, "bytes") == 0 || strcmp(sc, "bytes_noticks") == 0) {
        e = malloc(sizeof *e * n);
        memset(e, 0, sizeof *e * n); /* the caller's handles: not counted */
        uint64_t r0 = peer_rss_bytes();
        for (uint32_t i = 0; i < n; i++) {
            peer_pos p = peer_pos_of(i);
            peer_vel v = peer_vel_of(i);
            e[i] = ecs_insert(w, {ecs_id(Position), &p}, {ecs_id(Velocity), &v});
        }
        uint64_t r1 = peer_rss_bytes();
        t1 = r1 > r0 ? r1 - r0 : 0;
        *sum = fl_sum_all(w, e, n);
    } else {
        ecs_fini(w);
        return -1;
    }
    free(e);
    ecs_fini(w);
    *ns = (double)(t1 - t0) / (double)n;
    return 0;
}

int main(int argc, char **argv)
{
    const char *sc;
    uint32_t n;
    if (!peer_args(argc, argv, &sc, &n)) {
        return 2;
    }
    for (int round = 0; round < 2; round++) {
        double ns;
        uint64_t sum;
        if (run(sc, n, &ns, &sum) < 0) {
            fprintf(stderr, "peer_flecs: unknown scenario %s\n", sc);
            return 2;
        }
        peer_report(sc, "flecs", round, ns, sum);
    }
    return 0;
}

/* bench/peers/peer_pico.c - pico_ecs in the peer comparison.
 * SPDX-License-Identifier: MIT
 *
 * Idiomatic pico_ecs: ecs_create + ecs_set per component, ecs_destroy,
 * ecs_set/ecs_remove, ecs_get, and a system requiring Position and Velocity
 * whose callback walks its entity array with ecs_get (pico_ecs has no other
 * iteration). It has no bulk creation and no zero-sized components: the tag
 * is a 1-byte component. Its handles carry no generation (ecs_get does not
 * check a stale handle). The context starts with room for 1,024 entities,
 * as the other libraries start empty and grow.
 */
#define _POSIX_C_SOURCE 200809L

#include "peer_common.h"

#define PICO_ECS_IMPLEMENTATION
#include "pico_ecs.h"

typedef struct pb {
    ecs_t *ecs;
    ecs_comp_t pos, vel, hp, tag;
} pb;

static void pb_init(pb *b)
{
    b->ecs = ecs_new(1024, NULL);
    if (b->ecs == NULL) {
        peer_fail("pico", "ecs_new failed");
    }
    b->pos = ecs_define_component(b->ecs, sizeof(peer_pos), NULL);
    b->vel = ecs_define_component(b->ecs, sizeof(peer_vel), NULL);
    b->hp = ecs_define_component(b->ecs, sizeof(peer_health), NULL);
    b->tag = ecs_define_component(b->ecs, 1, NULL);
}

static ecs_entity_t *pb_spawn_all(pb *b, uint32_t n, int with_hp)
{
    ecs_entity_t *e = malloc(sizeof *e * n);
    if (e == NULL) {
        peer_fail("pico", "out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        peer_pos p = peer_pos_of(i);
        peer_vel v = peer_vel_of(i);
        e[i] = ecs_create(b->ecs);
        ecs_set(b->ecs, e[i], b->pos, &p);
        ecs_set(b->ecs, e[i], b->vel, &v);
        if (with_hp) {
            peer_health h = peer_health_of(i);
            ecs_set(b->ecs, e[i], b->hp, &h);
        }
    }
    return e;
}

static uint64_t pb_sum_all(pb *b, const ecs_entity_t *e, uint32_t n)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!ecs_has(b->ecs, e[i], b->pos) || !ecs_has(b->ecs, e[i], b->vel)) {
            peer_fail("pico", "entity lost");
        }
        sum += peer_sum_pos(ecs_get(b->ecs, e[i], b->pos)) +
               peer_sum_vel(ecs_get(b->ecs, e[i], b->vel));
    }
    return sum;
}

static ecs_ret_t pb_move(ecs_t *ecs, ecs_entity_t *entities, size_t count, void *udata)
{
    const pb *b = udata;
    for (size_t i = 0; i < count; i++) {
        peer_pos *p = ecs_get(ecs, entities[i], b->pos);
        const peer_vel *v = ecs_get(ecs, entities[i], b->vel);
        p->x += v->x;
        p->y += v->y;
    }
    return 0;
}

static int run(const char *sc, uint32_t n, double *ns, uint64_t *sum)
{
    pb b;
    pb_init(&b);
    uint64_t t0 = 0;
    uint64_t t1 = 0;
    int toggle = 0; /* one storage for every component: the toggle variants run as usual */
    ecs_entity_t *e = NULL;
    int missing = 0;
    if (strcmp(sc, "create") == 0) {
        e = malloc(sizeof *e * n);
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            peer_pos p = peer_pos_of(i);
            peer_vel v = peer_vel_of(i);
            e[i] = ecs_create(b.ecs);
            ecs_set(b.ecs, e[i], b.pos, &p);
            ecs_set(b.ecs, e[i], b.vel, &v);
        }
        t1 = peer_now_ns();
        *sum = pb_sum_all(&b, e, n);
    } else if (strcmp(sc, "create_bulk") == 0) {
        missing = 1;
    } else if (strcmp(sc, "destroy") == 0) {
        e = pb_spawn_all(&b, n, 0);
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            ecs_destroy(b.ecs, e[i]);
        }
        t1 = peer_now_ns();
        uint64_t alive = 0;
        for (uint32_t i = 0; i < n; i++) {
            alive += ecs_is_ready(b.ecs, e[i]);
        }
        *sum = (uint64_t)n * 1000u + alive;
    } else if (peer_addrem_kind(sc, &toggle) != 0) {
        int tag = peer_addrem_kind(sc, &toggle) == 2;
        ecs_comp_t c = tag ? b.tag : b.hp;
        e = pb_spawn_all(&b, n, 0);
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            if (tag) {
                ecs_add(b.ecs, e[i], c, NULL);
            } else {
                peer_health h = peer_health_of(i);
                ecs_set(b.ecs, e[i], c, &h);
            }
        }
        uint64_t mid0 = peer_now_ns();
        uint64_t with = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (tag) {
                with += ecs_has(b.ecs, e[i], c);
            } else if (ecs_has(b.ecs, e[i], c)) {
                with += peer_sum_health(ecs_get(b.ecs, e[i], c));
            }
        }
        uint64_t mid1 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            ecs_remove(b.ecs, e[i], c);
        }
        t1 = peer_now_ns();
        t1 -= mid1 - mid0;
        uint64_t left = 0;
        for (uint32_t i = 0; i < n; i++) {
            left += ecs_has(b.ecs, e[i], c);
        }
        *sum = with + 1000003u * left + pb_sum_all(&b, e, n);
    } else if (strncmp(sc, "get", 3) == 0) {
        int k = sc[3] - '0';
        uint32_t *order = strstr(sc, "_shuf") ? peer_shuffled_order(n) : NULL;
        e = pb_spawn_all(&b, n, 1);
        uint64_t acc = 0;
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            ecs_entity_t h = e[order ? order[i] : i];
            acc += peer_sum_pos(ecs_get(b.ecs, h, b.pos));
            if (k >= 2) {
                acc += peer_sum_vel(ecs_get(b.ecs, h, b.vel));
            }
            if (k >= 3) {
                acc += peer_sum_health(ecs_get(b.ecs, h, b.hp));
            }
        }
        t1 = peer_now_ns();
        *sum = acc;
        free(order);
    } else if (strcmp(sc, "iterate") == 0) {
        ecs_sys_desc_t sd;
        memset(&sd, 0, sizeof sd);
        sd.udata = &b;
        ecs_system_t sys = ecs_define_system(b.ecs, pb_move, &sd);
        ecs_require(b.ecs, sys, b.pos);
        ecs_require(b.ecs, sys, b.vel);
        e = pb_spawn_all(&b, n, 0);
        uint64_t best = UINT64_MAX;
        for (int pass = 0; pass < 10; pass++) {
            uint64_t a = peer_now_ns();
            ecs_run_system(b.ecs, sys, 0);
            uint64_t c = peer_now_ns();
            best = c - a < best ? c - a : best;
        }
        t1 = best;
        *sum = pb_sum_all(&b, e, n);
    } else if (strcmp(sc, "bytes") == 0 || strcmp(sc, "bytes_noticks") == 0) {
        e = malloc(sizeof *e * n);
        memset(e, 0, sizeof *e * n); /* the caller's handles: not counted */
        uint64_t r0 = peer_rss_bytes();
        for (uint32_t i = 0; i < n; i++) {
            peer_pos p = peer_pos_of(i);
            peer_vel v = peer_vel_of(i);
            e[i] = ecs_create(b.ecs);
            ecs_set(b.ecs, e[i], b.pos, &p);
            ecs_set(b.ecs, e[i], b.vel, &v);
        }
        uint64_t r1 = peer_rss_bytes();
        t1 = r1 > r0 ? r1 - r0 : 0;
        *sum = pb_sum_all(&b, e, n);
    } else {
        ecs_free(b.ecs);
        return -1;
    }
    free(e);
    ecs_free(b.ecs);
    if (missing) {
        return 1;
    }
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
        int r = run(sc, n, &ns, &sum);
        if (r < 0) {
            fprintf(stderr, "peer_pico: unknown scenario %s\n", sc);
            return 2;
        }
        if (r > 0) {
            peer_report_missing(sc, "pico");
            return 0;
        }
        peer_report(sc, "pico", round, ns, sum);
    }
    return 0;
}

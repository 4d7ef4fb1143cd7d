/* bench/peers/peer_weft.c - weft in the peer comparison, through weft.h only.
 * SPDX-License-Identifier: MIT
 *
 * The calls a weft user writes: weft_spawn_with for one-by-one creation,
 * weft_spawn_bulk, weft_despawn, weft_insert/weft_remove, weft_get, and a
 * cached query whose chunks are walked by a plain loop (no restrict, no
 * out-of-line kernel). Every round uses a new world with default settings.
 */
#define _POSIX_C_SOURCE 200809L

#include "peer_common.h"
#include "weft.h"

typedef struct wb {
    weft_world *w;
    weft_component pos, vel, hp, tag;
    weft_component hp_sparse, tag_sparse; /* the "_toggle" scenarios' storage */
} wb;

static void wb_check(const wb *b, weft_status st, const char *what)
{
    if (st != WEFT_OK) {
        fprintf(stderr, "peer_weft: %s: %s\n", what, weft_last_error(b->w));
        exit(1);
    }
}

static weft_component wb_register(wb *b, const char *name, size_t size, uint32_t flags,
                                  weft_storage storage)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    d.flags = flags;
    d.storage = storage;
    weft_component c = weft_component_register(b->w, &d);
    if (c == WEFT_COMPONENT_NONE) {
        peer_fail("weft", weft_last_error(b->w));
    }
    return c;
}

static void wb_init(wb *b, uint32_t flags)
{
    b->w = weft_world_create(NULL);
    if (b->w == NULL) {
        peer_fail("weft", "weft_world_create failed");
    }
    b->pos = wb_register(b, "Position", sizeof(peer_pos), flags, WEFT_STORAGE_DEFAULT);
    b->vel = wb_register(b, "Velocity", sizeof(peer_vel), flags, WEFT_STORAGE_DEFAULT);
    b->hp = wb_register(b, "Health", sizeof(peer_health), flags, WEFT_STORAGE_DEFAULT);
    b->tag = wb_register(b, "Tag", 0, 0, WEFT_STORAGE_DEFAULT);
    b->hp_sparse = wb_register(b, "HealthSparse", sizeof(peer_health), 0, WEFT_STORAGE_SPARSE);
    b->tag_sparse = wb_register(b, "TagSparse", 0, 0, WEFT_STORAGE_SPARSE);
}

static weft_entity *wb_spawn_all(wb *b, uint32_t n, int with_hp)
{
    weft_entity *e = malloc(sizeof *e * n);
    if (e == NULL) {
        peer_fail("weft", "out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        peer_pos p = peer_pos_of(i);
        peer_vel v = peer_vel_of(i);
        peer_health h = peer_health_of(i);
        weft_value vals[3] = {{b->pos, sizeof p, &p}, {b->vel, sizeof v, &v},
                              {b->hp, sizeof h, &h}};
        e[i] = weft_spawn_with(b->w, vals, with_hp ? 3 : 2);
        if (e[i] == WEFT_ENTITY_NONE) {
            wb_check(b, weft_last_status(b->w), "weft_spawn_with");
        }
    }
    return e;
}

static uint64_t wb_sum_all(const wb *b, const weft_entity *e, uint32_t n)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        const peer_pos *p = weft_get(b->w, e[i], b->pos, sizeof *p);
        const peer_vel *v = weft_get(b->w, e[i], b->vel, sizeof *v);
        if (p == NULL || v == NULL) {
            peer_fail("weft", "entity lost");
        }
        sum += peer_sum_pos(p) + peer_sum_vel(v);
    }
    return sum;
}

static int run(const char *sc, uint32_t n, double *ns, uint64_t *sum)
{
    wb b;
    wb_init(&b, strcmp(sc, "bytes_noticks") == 0 ? WEFT_COMPONENT_NO_CHANGE_TICKS : 0u);
    uint64_t t0 = 0;
    uint64_t t1 = 0;
    int toggle = 0;
    weft_entity *e = NULL;
    if (strcmp(sc, "create") == 0) {
        e = malloc(sizeof *e * n);
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            peer_pos p = peer_pos_of(i);
            peer_vel v = peer_vel_of(i);
            weft_value vals[2] = {{b.pos, sizeof p, &p}, {b.vel, sizeof v, &v}};
            e[i] = weft_spawn_with(b.w, vals, 2);
        }
        t1 = peer_now_ns();
        *sum = wb_sum_all(&b, e, n);
    } else if (strcmp(sc, "create_bulk") == 0) {
        peer_pos *p = malloc(sizeof *p * n);
        peer_vel *v = malloc(sizeof *v * n);
        e = malloc(sizeof *e * n);
        for (uint32_t i = 0; i < n; i++) {
            p[i] = peer_pos_of(i);
            v[i] = peer_vel_of(i);
        }
        weft_value cols[2] = {{b.pos, sizeof *p, p}, {b.vel, sizeof *v, v}};
        t0 = peer_now_ns();
        weft_status st = weft_spawn_bulk(b.w, cols, 2, (int32_t)n, e);
        t1 = peer_now_ns();
        wb_check(&b, st, "weft_spawn_bulk");
        *sum = wb_sum_all(&b, e, n);
        free(p);
        free(v);
    } else if (strcmp(sc, "destroy") == 0) {
        e = wb_spawn_all(&b, n, 0);
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            weft_despawn(b.w, e[i]);
        }
        t1 = peer_now_ns();
        uint64_t alive = 0;
        for (uint32_t i = 0; i < n; i++) {
            alive += weft_is_alive(b.w, e[i]);
        }
        *sum = (uint64_t)n * 1000u + alive;
    } else if (peer_addrem_kind(sc, &toggle) != 0) {
        int tag = peer_addrem_kind(sc, &toggle) == 2;
        weft_component c = tag ? (toggle ? b.tag_sparse : b.tag) : (toggle ? b.hp_sparse : b.hp);
        e = wb_spawn_all(&b, n, 0);
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            peer_health h = peer_health_of(i);
            weft_insert(b.w, e[i], c, tag ? NULL : &h, tag ? 0 : sizeof h);
        }
        uint64_t mid0 = peer_now_ns();
        uint64_t with = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (tag) {
                with += weft_has(b.w, e[i], c);
            } else {
                const peer_health *h = weft_get(b.w, e[i], c, sizeof *h);
                with += h ? peer_sum_health(h) : 0u;
            }
        }
        uint64_t mid1 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            weft_remove(b.w, e[i], c);
        }
        t1 = peer_now_ns();
        t1 -= mid1 - mid0;
        uint64_t left = 0;
        for (uint32_t i = 0; i < n; i++) {
            left += weft_has(b.w, e[i], c);
        }
        *sum = with + 1000003u * left + wb_sum_all(&b, e, n);
    } else if (strncmp(sc, "get", 3) == 0) {
        int k = sc[3] - '0';
        uint32_t *order = strstr(sc, "_shuf") ? peer_shuffled_order(n) : NULL;
        e = wb_spawn_all(&b, n, 1);
        uint64_t acc = 0;
        if (strstr(sc, "_many")) {
            /* the handles are gathered from e[order[i]] inside the timed
             * region, as the other libraries' loops read them */
            enum { BATCH = 256 };
            weft_entity h[BATCH];
            const void *pp[BATCH], *pv[BATCH], *ph[BATCH];
            t0 = peer_now_ns();
            for (uint32_t s0 = 0; s0 < n; s0 += BATCH) {
                int32_t m = (int32_t)(n - s0 < BATCH ? n - s0 : BATCH);
                for (int32_t i = 0; i < m; i++) {
                    h[i] = e[order[s0 + (uint32_t)i]];
                }
                weft_get_many(b.w, h, m, b.pos, sizeof(peer_pos), pp);
                if (k >= 2) {
                    weft_get_many(b.w, h, m, b.vel, sizeof(peer_vel), pv);
                }
                if (k >= 3) {
                    weft_get_many(b.w, h, m, b.hp, sizeof(peer_health), ph);
                }
                for (int32_t i = 0; i < m; i++) {
                    acc += peer_sum_pos(pp[i]);
                    if (k >= 2) {
                        acc += peer_sum_vel(pv[i]);
                    }
                    if (k >= 3) {
                        acc += peer_sum_health(ph[i]);
                    }
                }
            }
            t1 = peer_now_ns();
            *sum = acc;
            free(order);
            goto done;
        }
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            weft_entity h = e[order ? order[i] : i];
            acc += peer_sum_pos(weft_get(b.w, h, b.pos, sizeof(peer_pos)));
            if (k >= 2) {
                acc += peer_sum_vel(weft_get(b.w, h, b.vel, sizeof(peer_vel)));
            }
            if (k >= 3) {
                acc += peer_sum_health(weft_get(b.w, h, b.hp, sizeof(peer_health)));
            }
        }
        t1 = peer_now_ns();
        *sum = acc;
        free(order);
    } else if (strcmp(sc, "iterate") == 0) {
        e = wb_spawn_all(&b, n, 0);
        weft_query_desc qd;
        memset(&qd, 0, sizeof qd);
        qd.terms[0].id = b.pos;
        qd.terms[0].access = WEFT_ACCESS_WRITE;
        qd.terms[1].id = b.vel;
        qd.term_count = 2;
        weft_query *q = weft_query_create(b.w, &qd);
        if (q == NULL) {
            peer_fail("weft", weft_last_error(b.w));
        }
        uint64_t best = UINT64_MAX;
        for (int pass = 0; pass < 10; pass++) {
            uint64_t a = peer_now_ns();
            weft_iter it;
            wb_check(&b, weft_query_iter(b.w, q, &it), "weft_query_iter");
            while (weft_iter_next(&it)) {
                int32_t count = weft_iter_count(&it);
                peer_pos *p = weft_iter_field_mut(&it, 0, sizeof *p);
                const peer_vel *v = weft_iter_field(&it, 1, sizeof *v);
                for (int32_t i = 0; i < count; i++) {
                    p[i].x += v[i].x;
                    p[i].y += v[i].y;
                }
            }
            uint64_t c = peer_now_ns();
            best = c - a < best ? c - a : best;
        }
        t1 = best;
        *sum = wb_sum_all(&b, e, n);
    } else if (strcmp(sc, "bytes") == 0 || strcmp(sc, "bytes_noticks") == 0) {
        e = malloc(sizeof *e * n);
        memset(e, 0, sizeof *e * n); /* the caller's handles: not counted */
        uint64_t r0 = peer_rss_bytes();
        for (uint32_t i = 0; i < n; i++) {
            peer_pos p = peer_pos_of(i);
            peer_vel v = peer_vel_of(i);
            weft_value vals[2] = {{b.pos, sizeof p, &p}, {b.vel, sizeof v, &v}};
            e[i] = weft_spawn_with(b.w, vals, 2);
        }
        uint64_t r1 = peer_rss_bytes();
        t1 = r1 > r0 ? r1 - r0 : 0;
        *sum = wb_sum_all(&b, e, n);
    } else {
        weft_world_destroy(b.w);
        return -1;
    }
done:
    free(e);
    weft_world_destroy(b.w);
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
            fprintf(stderr, "peer_weft: unknown scenario %s\n", sc);
            return 2;
        }
        peer_report(sc, "weft", round, ns, sum);
    }
    return 0;
}

/* bench/peers/peer_plain.c - the plain C floor for the peer comparison.
 * SPDX-License-Identifier: MIT
 *
 * What a C programmer writes without an ECS: one array per component
 * indexed by entity index, a generation per index (so stale handles are
 * rejected, as every library here except pico_ecs does), a free list, and
 * presence flags for the optional Health and tag. Arrays grow by doubling
 * with realloc. Nothing moves on add/remove, so these rows are a floor, not
 * a competitor.
 */
#define _POSIX_C_SOURCE 200809L

#include "peer_common.h"

typedef struct plain_store {
    uint32_t count; /* indices ever used */
    uint32_t cap;
    peer_pos *pos;
    peer_vel *vel;
    peer_health *hp;
    uint8_t *flags; /* bit 0 alive, bit 1 has Health, bit 2 tagged */
    uint32_t *gen;
    uint32_t *free_list;
    uint32_t free_len;
} plain_store;

enum { PLAIN_ALIVE = 1, PLAIN_HP = 2, PLAIN_TAG = 4 };

static void *plain_grow(void *p, size_t elem, uint32_t cap)
{
    void *q = realloc(p, elem * cap);
    if (q == NULL) {
        peer_fail("plain", "out of memory");
    }
    return q;
}

static void plain_reserve(plain_store *s, uint32_t need)
{
    if (need <= s->cap) {
        return;
    }
    uint32_t cap = s->cap ? s->cap * 2u : 64u;
    if (cap < need) {
        cap = need;
    }
    s->pos = plain_grow(s->pos, sizeof *s->pos, cap);
    s->vel = plain_grow(s->vel, sizeof *s->vel, cap);
    s->hp = plain_grow(s->hp, sizeof *s->hp, cap);
    s->flags = plain_grow(s->flags, sizeof *s->flags, cap);
    s->gen = plain_grow(s->gen, sizeof *s->gen, cap);
    s->free_list = plain_grow(s->free_list, sizeof *s->free_list, cap);
    s->cap = cap;
}

static void plain_fini(plain_store *s)
{
    free(s->pos);
    free(s->vel);
    free(s->hp);
    free(s->flags);
    free(s->gen);
    free(s->free_list);
    memset(s, 0, sizeof *s);
}

static uint64_t plain_spawn(plain_store *s, const peer_pos *p, const peer_vel *v)
{
    uint32_t idx;
    if (s->free_len) {
        idx = s->free_list[--s->free_len];
    } else {
        plain_reserve(s, s->count + 1u);
        idx = s->count++;
        s->gen[idx] = 1;
    }
    s->pos[idx] = *p;
    s->vel[idx] = *v;
    s->flags[idx] = PLAIN_ALIVE;
    return ((uint64_t)s->gen[idx] << 32) | idx;
}

static inline uint32_t plain_live(const plain_store *s, uint64_t e)
{
    uint32_t idx = (uint32_t)e;
    if (idx >= s->count || s->gen[idx] != (uint32_t)(e >> 32) ||
        !(s->flags[idx] & PLAIN_ALIVE)) {
        return UINT32_MAX;
    }
    return idx;
}

static void plain_despawn(plain_store *s, uint64_t e)
{
    uint32_t idx = plain_live(s, e);
    if (idx == UINT32_MAX) {
        return;
    }
    s->flags[idx] = 0;
    s->gen[idx]++;
    s->free_list[s->free_len++] = idx;
}

static uint64_t *plain_spawn_all(plain_store *s, uint32_t n, int with_hp)
{
    uint64_t *e = malloc(sizeof *e * n);
    if (e == NULL) {
        peer_fail("plain", "out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        peer_pos p = peer_pos_of(i);
        peer_vel v = peer_vel_of(i);
        e[i] = plain_spawn(s, &p, &v);
        if (with_hp) {
            s->hp[i] = peer_health_of(i);
            s->flags[i] |= PLAIN_HP;
        }
    }
    return e;
}

static uint64_t plain_sum_all(const plain_store *s, const uint64_t *e, uint32_t n)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t idx = plain_live(s, e[i]);
        if (idx == UINT32_MAX) {
            peer_fail("plain", "entity lost");
        }
        sum += peer_sum_pos(&s->pos[idx]) + peer_sum_vel(&s->vel[idx]);
    }
    return sum;
}

static int run(const char *sc, uint32_t n, double *ns, uint64_t *sum)
{
    plain_store s;
    memset(&s, 0, sizeof s);
    uint64_t t0 = 0;
    uint64_t t1 = 0;
    int toggle = 0; /* one storage for every component: the toggle variants run as usual */
    if (strcmp(sc, "create") == 0) {
        uint64_t *e = malloc(sizeof *e * n);
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            peer_pos p = peer_pos_of(i);
            peer_vel v = peer_vel_of(i);
            e[i] = plain_spawn(&s, &p, &v);
        }
        t1 = peer_now_ns();
        *sum = plain_sum_all(&s, e, n);
        free(e);
    } else if (strcmp(sc, "create_bulk") == 0) {
        peer_pos *p = malloc(sizeof *p * n);
        peer_vel *v = malloc(sizeof *v * n);
        uint64_t *e = malloc(sizeof *e * n);
        for (uint32_t i = 0; i < n; i++) {
            p[i] = peer_pos_of(i);
            v[i] = peer_vel_of(i);
        }
        t0 = peer_now_ns();
        plain_reserve(&s, n);
        memcpy(s.pos, p, sizeof *p * n);
        memcpy(s.vel, v, sizeof *v * n);
        memset(s.flags, PLAIN_ALIVE, n);
        for (uint32_t i = 0; i < n; i++) {
            s.gen[i] = 1;
            e[i] = ((uint64_t)1 << 32) | i;
        }
        s.count = n;
        t1 = peer_now_ns();
        *sum = plain_sum_all(&s, e, n);
        free(p);
        free(v);
        free(e);
    } else if (strcmp(sc, "destroy") == 0) {
        uint64_t *e = plain_spawn_all(&s, n, 0);
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            plain_despawn(&s, e[i]);
        }
        t1 = peer_now_ns();
        uint64_t alive = 0;
        for (uint32_t i = 0; i < n; i++) {
            alive += plain_live(&s, e[i]) != UINT32_MAX;
        }
        *sum = (uint64_t)n * 1000u + alive;
        free(e);
    } else if (peer_addrem_kind(sc, &toggle) != 0) {
        int tag = peer_addrem_kind(sc, &toggle) == 2;
        uint8_t bit = tag ? PLAIN_TAG : PLAIN_HP;
        uint64_t *e = plain_spawn_all(&s, n, 0);
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            uint32_t idx = plain_live(&s, e[i]);
            if (!tag) {
                s.hp[idx] = peer_health_of(i);
            }
            s.flags[idx] |= bit;
        }
        uint64_t mid0 = peer_now_ns();
        uint64_t with = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t idx = plain_live(&s, e[i]);
            if (s.flags[idx] & bit) {
                with += tag ? 1u : peer_sum_health(&s.hp[idx]);
            }
        }
        uint64_t mid1 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            uint32_t idx = plain_live(&s, e[i]);
            s.flags[idx] &= (uint8_t)~bit;
        }
        t1 = peer_now_ns();
        t1 -= mid1 - mid0;
        uint64_t left = 0;
        for (uint32_t i = 0; i < n; i++) {
            left += (s.flags[plain_live(&s, e[i])] & bit) != 0;
        }
        *sum = with + 1000003u * left + plain_sum_all(&s, e, n);
        free(e);
    } else if (strncmp(sc, "get", 3) == 0) {
        int k = sc[3] - '0';
        int shuf = strstr(sc, "_shuf") != NULL;
        uint64_t *e = plain_spawn_all(&s, n, 1);
        uint32_t *order = shuf ? peer_shuffled_order(n) : NULL;
        uint64_t acc = 0;
        t0 = peer_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            uint64_t h = e[order ? order[i] : i];
            uint32_t idx = plain_live(&s, h);
            acc += peer_sum_pos(&s.pos[idx]);
            if (k >= 2) {
                uint32_t i2 = plain_live(&s, h);
                acc += peer_sum_vel(&s.vel[i2]);
            }
            if (k >= 3) {
                uint32_t i3 = plain_live(&s, h);
                acc += peer_sum_health(&s.hp[i3]);
            }
        }
        t1 = peer_now_ns();
        *sum = acc;
        free(order);
        free(e);
    } else if (strcmp(sc, "iterate") == 0) {
        uint64_t *e = plain_spawn_all(&s, n, 0);
        uint64_t best = UINT64_MAX;
        for (int pass = 0; pass < 10; pass++) {
            uint64_t a = peer_now_ns();
            peer_pos *p = s.pos;
            const peer_vel *v = s.vel;
            uint32_t count = s.count;
            for (uint32_t i = 0; i < count; i++) {
                p[i].x += v[i].x;
                p[i].y += v[i].y;
            }
            uint64_t b = peer_now_ns();
            best = b - a < best ? b - a : best;
        }
        t0 = 0;
        t1 = best;
        *sum = plain_sum_all(&s, e, n);
        free(e);
    } else if (strcmp(sc, "bytes") == 0 || strcmp(sc, "bytes_noticks") == 0) {
        uint64_t *e = malloc(sizeof *e * n);
        memset(e, 0, sizeof *e * n); /* the caller's handles: not counted */
        uint64_t r0 = peer_rss_bytes();
        for (uint32_t i = 0; i < n; i++) {
            peer_pos p = peer_pos_of(i);
            peer_vel v = peer_vel_of(i);
            e[i] = plain_spawn(&s, &p, &v);
        }
        uint64_t r1 = peer_rss_bytes();
        t0 = 0;
        t1 = r1 > r0 ? r1 - r0 : 0;
        *sum = plain_sum_all(&s, e, n);
        free(e);
    } else {
        plain_fini(&s);
        return -1;
    }
    plain_fini(&s);
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
            fprintf(stderr, "peer_plain: unknown scenario %s\n", sc);
            return 2;
        }
        peer_report(sc, "plain", round, ns, sum);
    }
    return 0;
}

/* bench/peers/peer_common.h - what every peer-comparison program shares.
 * SPDX-License-Identifier: MIT
 *
 * One program per library (plain C, weft, flecs, EnTT, pico_ecs) runs one
 * scenario over N entities in a fresh process:
 *     peer_<lib> <scenario> <N>
 * and prints one line per round:
 *     R <scenario> <lib> <cold|warm> <ns per entity> <checksum>
 * or "R <scenario> <lib> - - -" when the library has no such operation.
 * The cold round runs on the untouched heap of a new process; the warm
 * round repeats the scenario after the library's world was destroyed and
 * a new one created, so its allocations come from memory the process
 * already touched. Setup (spawning the entities a scenario reads) is never
 * timed. The checksum is derived from component values read back through
 * the library, so the libraries must agree on it; peer_driver checks that.
 * The "batched" get rows let a library use a lookup of many handles at
 * once where it has one (weft_get_many); a library without one runs its
 * one-handle get, its fastest way to do the same work.
 *
 * The data, the shuffle and the checksum rules live here so that the
 * programs differ only in their calls into the library. This header is
 * compiled as C11 and as C++17 (EnTT).
 */
#ifndef PEER_COMMON_H
#define PEER_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct peer_pos {
    float x, y;
} peer_pos;
typedef struct peer_vel {
    float x, y;
} peer_vel;
typedef struct peer_health {
    int32_t hp;
} peer_health;

/* Scenario names (argv[1]); the driver runs them in this order. */
#define PEER_SCENARIOS(X)                                                       \
    X(create, "create one by one (Pos+Vel)")                                   \
    X(create_bulk, "create in bulk (Pos+Vel)")                                 \
    X(destroy, "destroy all (creation order)")                                 \
    X(addrem, "add+remove a 4-byte table component")                           \
    X(addrem_tag, "add+remove a tag")                                          \
    X(addrem_toggle, "add+remove a 4-byte component, storage for toggling")    \
    X(addrem_tag_toggle, "add+remove a tag, storage for toggling")             \
    X(get1, "get 1 component (creation order)")                                \
    X(get2, "get 2 components (creation order)")                               \
    X(get3, "get 3 components (creation order)")                               \
    X(get1_shuf, "get 1 component (shuffled)")                                 \
    X(get2_shuf, "get 2 components (shuffled)")                                \
    X(get3_shuf, "get 3 components (shuffled)")                                \
    X(get1_shuf_many, "get 1 component (shuffled, batched)")                   \
    X(get2_shuf_many, "get 2 components (shuffled, batched)")                  \
    X(get3_shuf_many, "get 3 components (shuffled, batched)")                  \
    X(iterate, "iterate p += v (best of 10 passes)")                           \
    X(bytes, "resident bytes per entity (Pos+Vel)")                            \
    X(bytes_noticks, "resident bytes per entity (Pos+Vel, no change ticks)")

/* The add+remove scenarios: 0 for another scenario, else 1 + (tag).
 * *toggle is set for the "_toggle" variants, which let a library store the
 * component the way it offers for one added and removed often (weft:
 * sparse storage; flecs: the DontFragment trait); a library that stores
 * every component one way (EnTT, pico_ecs, plain C) runs its usual calls. */
static inline int peer_addrem_kind(const char *sc, int *toggle)
{
    *toggle = strstr(sc, "_toggle") != NULL;
    if (strncmp(sc, "addrem", 6) != 0) {
        return 0;
    }
    return strncmp(sc, "addrem_tag", 10) == 0 ? 2 : 1;
}

/* Timed regions read the process's CPU clock (user + system time, page
 * faults included): every program is single-threaded, and on a shared
 * machine the wall clock would also count the time spent waiting for a
 * core, which is noise, not cost. */
static inline uint64_t peer_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Values are small integers stored in floats, so every sum below is exact
 * and independent of the order a library visits its entities in. */
static inline peer_pos peer_pos_of(uint32_t i)
{
    peer_pos p = {(float)(i % 1000u), (float)(i % 777u)};
    return p;
}
static inline peer_vel peer_vel_of(uint32_t i)
{
    peer_vel v = {(float)(i % 3u), 1.0f};
    return v;
}
static inline peer_health peer_health_of(uint32_t i)
{
    peer_health h = {(int32_t)(i % 100u)};
    return h;
}

/* Checksum contributions of one entity's values. */
static inline uint64_t peer_sum_pos(const peer_pos *p)
{
    return (uint64_t)(int64_t)p->x + 3u * (uint64_t)(int64_t)p->y;
}
static inline uint64_t peer_sum_vel(const peer_vel *v)
{
    return 5u * (uint64_t)(int64_t)v->x + 7u * (uint64_t)(int64_t)v->y;
}
static inline uint64_t peer_sum_health(const peer_health *h)
{
    return 11u * (uint64_t)h->hp;
}

/* The shuffled visiting order of the get scenarios: positions 0..n-1 in
 * a Fisher-Yates order from splitmix64 with a fixed seed. */
static inline uint32_t *peer_shuffled_order(uint32_t n)
{
    uint32_t *order = (uint32_t *)malloc(sizeof *order * (n ? n : 1u));
    if (order == NULL) {
        fprintf(stderr, "peer: out of memory\n");
        exit(1);
    }
    for (uint32_t i = 0; i < n; i++) {
        order[i] = i;
    }
    uint64_t s = 0x5eedf00dull;
    for (uint32_t i = n; i > 1; i--) {
        s += 0x9e3779b97f4a7c15ull;
        uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        uint32_t j = (uint32_t)(z % i);
        uint32_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    return order;
}

/* Resident set size of this process in bytes (Linux /proc; 0 elsewhere). */
static inline uint64_t peer_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL) {
        return 0;
    }
    unsigned long long size = 0;
    unsigned long long resident = 0;
    int got = fscanf(f, "%llu %llu", &size, &resident);
    fclose(f);
    return got == 2 ? (uint64_t)resident * 4096u : 0u;
}

static inline void peer_report(const char *scenario, const char *lib, int round,
                               double ns_per_entity, uint64_t checksum)
{
    printf("R %s %s %s %.4f %llu\n", scenario, lib, round == 0 ? "cold" : "warm",
           ns_per_entity, (unsigned long long)checksum);
    fflush(stdout);
}

static inline void peer_report_missing(const char *scenario, const char *lib)
{
    printf("R %s %s - - -\n", scenario, lib);
    fflush(stdout);
}

static inline void peer_fail(const char *lib, const char *what)
{
    fprintf(stderr, "peer_%s: %s\n", lib, what);
    exit(1);
}

/* argv parsing shared by the programs: <scenario> <N>. */
static inline int peer_args(int argc, char **argv, const char **scenario, uint32_t *n)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s <scenario> <N>\n", argc > 0 ? argv[0] : "peer");
        return 0;
    }
    *scenario = argv[1];
    char *end = NULL;
    unsigned long v = strtoul(argv[2], &end, 10);
    if (end == argv[2] || *end != '\0' || v == 0 || v > 16000000ul) {
        fprintf(stderr, "%s: N must be 1..16000000\n", argv[0]);
        return 0;
    }
    *n = (uint32_t)v;
    return 1;
}

#endif

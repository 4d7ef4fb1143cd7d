/* bench/bench_web.c - weft_bench_web: spawn and iteration, each beside a plain-C baseline, for comparing WebAssembly with native.
 * SPDX-License-Identifier: MIT
 *
 * Usage: weft_bench_web [N [REPS]]   (defaults: 1,000,000 entities, 7 reps)
 * Built natively and with Emscripten from the same source (the web build
 * runs under node: `node --no-experimental-fetch weft_bench_web.js`);
 * bench/web_vs_native.sh runs both and prints the ratios side by side.
 *
 * Scenarios (median ns per entity over REPS runs):
 *   spawn  N entities with Position+Velocity one by one (weft_spawn_with)
 *          vs appending them to two plain arrays
 *   iter   one query pass p += v * dt over N entities (one table)
 *          vs the same loop over the two plain arrays
 * The baseline in the same run is what makes the figure mean something:
 * "weft / plain" says what weft adds on this engine, and the web/native
 * ratio of the plain loops says what the engine itself costs.
 * Output: one line per scenario, "bench <name> weft <ns> plain <ns> ratio
 * <weft/plain>", which web_vs_native.sh parses.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft.h"

typedef struct Position { float x, y; } Position;
typedef struct Velocity { float x, y; } Velocity;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static void die(const char *what)
{
    fprintf(stderr, "weft_bench_web: %s failed\n", what);
    exit(1);
}

static weft_component reg(weft_world *w, const char *name, size_t size)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    weft_component c = weft_component_register(w, &d);
    if (c == WEFT_COMPONENT_NONE) {
        die(name);
    }
    return c;
}

/* Keeps the compiler from dropping the baseline loops. */
static volatile float g_sink;

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000000;
    int reps = argc > 2 ? atoi(argv[2]) : 7;
    if (n < 1 || reps < 1 || reps > 64) {
        fprintf(stderr, "usage: weft_bench_web [N [REPS]]\n");
        return 2;
    }
    double spawn_w[64], spawn_p[64], iter_w[64], iter_p[64];
    for (int r = 0; r < reps; r++) {
        weft_world *w = weft_world_create(NULL);
        if (w == NULL) {
            die("weft_world_create");
        }
        weft_component pos = reg(w, "Position", sizeof(Position));
        weft_component vel = reg(w, "Velocity", sizeof(Velocity));
        double t0 = now_ns();
        for (int i = 0; i < n; i++) {
            Position p = {(float)i, 0};
            Velocity v = {1, (float)(i & 7)};
            weft_value vals[] = {{pos, sizeof p, &p}, {vel, sizeof v, &v}};
            if (weft_spawn_with(w, vals, 2) == 0) {
                die("weft_spawn_with");
            }
        }
        spawn_w[r] = (now_ns() - t0) / n;

        /* baseline: two arrays grown by doubling, like a column */
        t0 = now_ns();
        size_t cap = 0;
        Position *pa = NULL;
        Velocity *va = NULL;
        for (int i = 0; i < n; i++) {
            if ((size_t)i == cap) {
                cap = cap ? cap * 2 : 8;
                Position *np = realloc(pa, cap * sizeof *pa);
                Velocity *nv = realloc(va, cap * sizeof *va);
                if (np == NULL || nv == NULL) {
                    die("realloc");
                }
                pa = np;
                va = nv;
            }
            pa[i] = (Position){(float)i, 0};
            va[i] = (Velocity){1, (float)(i & 7)};
        }
        spawn_p[r] = (now_ns() - t0) / n;

        weft_query_desc qd;
        memset(&qd, 0, sizeof qd);
        qd.terms[0] = (weft_term){.id = pos, .access = WEFT_ACCESS_WRITE};
        qd.terms[1] = (weft_term){.id = vel, .access = WEFT_ACCESS_READ};
        qd.term_count = 2;
        weft_query *q = weft_query_create(w, &qd);
        if (q == NULL) {
            die("weft_query_create");
        }
        const float dt = 1.0f / 60.0f;
        t0 = now_ns();
        weft_iter it;
        if (weft_query_iter(w, q, &it) != WEFT_OK) {
            die("weft_query_iter");
        }
        while (weft_iter_next(&it)) {
            Position *p = weft_iter_field_mut(&it, 0, sizeof *p);
            const Velocity *v = weft_iter_field(&it, 1, sizeof *v);
            for (int32_t i = 0, m = weft_iter_count(&it); i < m; i++) {
                p[i].x += v[i].x * dt;
                p[i].y += v[i].y * dt;
            }
        }
        iter_w[r] = (now_ns() - t0) / n;

        t0 = now_ns();
        for (int i = 0; i < n; i++) {
            pa[i].x += va[i].x * dt;
            pa[i].y += va[i].y * dt;
        }
        iter_p[r] = (now_ns() - t0) / n;
        g_sink = pa[n / 2].x + pa[n - 1].y;
        free(pa);
        free(va);
        weft_world_destroy(w);
    }
    double sw = median(spawn_w, reps), sp = median(spawn_p, reps);
    double iw = median(iter_w, reps), ip = median(iter_p, reps);
#ifdef __EMSCRIPTEN__
    const char *engine = "wasm32 (Emscripten)";
#else
    const char *engine = "native";
#endif
    printf("weft_bench_web: %s, N = %d, median of %d\n", engine, n, reps);
    printf("bench spawn weft %.3f plain %.3f ratio %.2f\n", sw, sp, sw / sp);
    printf("bench iter weft %.3f plain %.3f ratio %.2f\n", iw, ip, iw / ip);
    return 0;
}

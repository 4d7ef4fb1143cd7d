/* bench/scenarios_field.c - one loop over a field whatever its storage.
 * SPDX-License-Identifier: MIT
 *
 * weft_iter_field hands out a sparse term's values as a plain array too
 * (the chunk is cut where they stop being consecutive in the sparse set),
 * so switching Health between table and sparse storage leaves the loop
 * `hp[i] += (int32_t)pos[i].x` as it is. Rows, each against the same loop
 * over two plain C arrays in the same run:
 *  - Health in a table column, read and written through weft_iter_field /
 *    weft_iter_field_mut: the column speed (target: ratio <= 1.1);
 *  - Health sparse, inserted in spawn order, the same loop (one run per
 *    table: the values are consecutive);
 *  - Health sparse, the old per-row way (weft_iter_get_mut per row).
 * N = min(--n, 2^20); four passes per sample.
 */
#include "bench_world.h"

#include <stdlib.h>
#include <string.h>

static double field_ns(uint64_t t0, uint64_t t1, int64_t count)
{
    return count > 0 ? (double)(t1 - t0) / (double)count : 0.0;
}

/* One pass of the weft side; per_row: weft_iter_get_mut per row instead of
 * the field arrays. Returns the rows visited. */
static int64_t field_pass(bench_world *b, weft_query *q, bool per_row)
{
    weft_iter it;
    int64_t rows = 0;
    bench_world_expect(b, "weft_query_iter", weft_query_iter(b->w, q, &it));
    while (weft_iter_next(&it)) {
        int32_t c = weft_iter_count(&it);
        const bench_position *p = weft_iter_field(&it, 0, sizeof *p);
        if (per_row) {
            for (int32_t i = 0; i < c; i++) {
                bench_health *h = weft_iter_get_mut(&it, 1, i, sizeof *h);
                h->hp += (int32_t)p[i].x;
            }
        } else {
            bench_health *h = weft_iter_field_mut(&it, 1, sizeof *h);
            for (int32_t i = 0; i < c; i++) {
                h[i].hp += (int32_t)p[i].x;
            }
        }
        rows += c;
    }
    return rows;
}

void bench_field(const bench_cfg *cfg, const bench_data *d)
{
    int32_t n = cfg->n < (1 << 20) ? cfg->n : (1 << 20);
    static const char *const names[3] = {
        "field loop: table Health vs plain arrays",
        "field loop: sparse Health vs plain arrays",
        "per-row get_mut: sparse Health vs plain arrays"};
    bench_position *ppos = bench_xmalloc(sizeof *ppos * (size_t)n);
    bench_health *php = bench_xmalloc(sizeof *php * (size_t)n);
    memcpy(ppos, d->pos, sizeof *ppos * (size_t)n);
    memset(php, 0, sizeof *php * (size_t)n);
    const int32_t frames = 4;
    int32_t reps = cfg->reps < 64 ? cfg->reps : 63;
    for (int kind = 0; kind < 3; kind++) {
        bench_world b;
        bench_world_init(&b, "field", 0, kind == 0 ? WEFT_STORAGE_TABLE : WEFT_STORAGE_SPARSE,
                         NULL);
        weft_entity *ents = bench_xmalloc(sizeof *ents * (size_t)n);
        bench_world_spawn_bulk(&b, d, n, ents);
        for (int32_t i = 0; i < n; i++) {
            bench_health h = {0};
            bench_world_expect(&b, "weft_insert", weft_insert(b.w, ents[i], b.hp, &h, sizeof h));
        }
        weft_query_desc qd;
        memset(&qd, 0, sizeof qd);
        qd.terms[0].id = b.pos;
        qd.terms[0].access = WEFT_ACCESS_READ;
        qd.terms[1].id = b.hp;
        qd.terms[1].access = WEFT_ACCESS_WRITE;
        qd.term_count = 2;
        weft_query *q = weft_query_create(b.w, &qd);
        if (!q) {
            bench_fail("field", "weft_query_create", weft_last_error(b.w));
        }
        double wv[64];
        double bv[64];
        for (int32_t r = -cfg->warmup; r < reps; r++) {
            int64_t rows = 0;
            uint64_t t0 = bench_now_ns();
            for (int32_t f = 0; f < frames; f++) {
                rows += field_pass(&b, q, kind == 2);
            }
            uint64_t t1 = bench_now_ns();
            for (int32_t f = 0; f < frames; f++) {
                for (int32_t i = 0; i < n; i++) {
                    php[i].hp += (int32_t)ppos[i].x;
                }
                __asm__ volatile("" : : "r"(php) : "memory");
            }
            uint64_t t2 = bench_now_ns();
            if (rows != (int64_t)n * frames) {
                bench_fail("field", "row count", "the query did not visit every entity once");
            }
            if (r >= 0) {
                wv[r] = field_ns(t0, t1, (int64_t)n * frames);
                bv[r] = field_ns(t1, t2, (int64_t)n * frames);
            }
        }
        bench_report_param(names[kind], n, "ns", bench_median(wv, reps),
                           bench_median(bv, reps), kind == 0 ? 1.1 : 0.0);
        /* same result as the plain loop: every Health saw every pass */
        for (int32_t i = 0; i < n; i += n / 64 + 1) {
            const bench_health *h = weft_get(b.w, ents[i], b.hp, sizeof *h);
            uint32_t passes = (uint32_t)(reps + cfg->warmup) * (uint32_t)frames;
            uint32_t want = passes * (uint32_t)(int32_t)d->pos[i].x; /* wraps as hp does */
            if (!h || (uint32_t)h->hp != want) {
                bench_fail("field", "result", "a Health value differs from the plain loop's");
            }
        }
        weft_query_destroy(b.w, q);
        free(ents);
        bench_world_fini(&b);
        memset(php, 0, sizeof *php * (size_t)n);
    }
    bench_note("field: N = %d, %d passes per sample; sparse Health inserted in spawn "
               "order (its values are consecutive per table)", (int)n, frames);
    free(ppos);
    free(php);
}

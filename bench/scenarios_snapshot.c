/* bench/scenarios_snapshot.c - binary snapshot scenarios: snapshot, restore.
 * SPDX-License-Identifier: MIT
 *
 * A world of N Position+Velocity entities (bulk spawned). Each repetition
 * times, on the thread's CPU clock and in alternating order:
 *  - snapshot: weft_snapshot_write of the whole world into a buffer that
 *    was written once before (no first-touch page faults);
 *  - restore:  weft_snapshot_restore of that blob into a fresh world with
 *    the same registrations (creation and destruction not timed);
 *  - the baselines: one memcpy of as many bytes as the snapshot holds
 *    (entity ids, records, both columns and their ticks: the live bytes
 *    the snapshot copies, plus its few headers). For the write, between
 *    two buffers written once before (the caller owns the snapshot's
 *    buffer, so neither side pays first-touch page faults). For the
 *    restore, into a freshly malloc'd buffer (freed after the timing): a
 *    restore must fill the new world's fresh storage, so both sides pay
 *    the first touch of that memory, which on a virtual machine costs
 *    more than the copy itself. The write's pre-touched memcpy is
 *    printed in the note for the restore too.
 * Rows report ns per entity and the ratio to the memcpy; targets: snapshot
 * at least 0.5x memcpy speed (ratio <= 2.0), restore at least 0.3x
 * (ratio <= 3.33). The first repetition verifies that the restored world's
 * weft_world_hash equals the original's. Figures are medians.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_world.h"
#include "weft.h"

static double snap_per(uint64_t t0, uint64_t t1, int32_t n)
{
    return (double)(t1 - t0) / (double)(n > 0 ? n : 1);
}

void bench_snapshot(const bench_cfg *cfg, const bench_data *data)
{
    const char *name = "snapshot";
    bench_world b;
    bench_world_init(&b, name, 0, WEFT_STORAGE_DEFAULT, NULL);
    bench_world_spawn_bulk(&b, data, cfg->n, NULL);
    size_t len = 0;
    if (weft_snapshot_write(b.w, NULL, 0, &len) != WEFT_ERR_CAPACITY) {
        bench_fail(name, "weft_snapshot_write", "no size for a NULL buffer");
    }
    uint8_t *blob = bench_xmalloc(len);
    uint8_t *src = bench_xmalloc(len);
    uint8_t *dst = bench_xmalloc(len);
    memset(blob, 1, len);
    memset(src, 2, len);
    memset(dst, 3, len);
    uint64_t want = weft_world_hash(b.w);
    int32_t reps = cfg->reps;
    double *vs = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *vr = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *vm = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *vf = bench_xmalloc(sizeof(double) * (size_t)reps);
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        bench_world t;
        bench_world_init(&t, name, 0, WEFT_STORAGE_DEFAULT, NULL);
        size_t got = 0;
        double dm = 0.0;
        double ds = 0.0;
        for (int32_t k = 0; k < 2; k++) {
            if ((k ^ (r & 1)) == 0) {
                uint64_t t0 = bench_cpu_ns();
                memcpy(dst, src, len);
                dm = snap_per(t0, bench_cpu_ns(), cfg->n);
            } else {
                uint64_t t0 = bench_cpu_ns();
                bench_world_expect(&b, "weft_snapshot_write",
                                   weft_snapshot_write(b.w, blob, len, &got));
                ds = snap_per(t0, bench_cpu_ns(), cfg->n);
            }
        }
        uint64_t tf = bench_cpu_ns();
        uint8_t *fresh = bench_xmalloc(len);
        memcpy(fresh, blob, len);
        double df = snap_per(tf, bench_cpu_ns(), cfg->n);
        if (fresh[len / 3] != blob[len / 3]) {
            bench_fail(name, "memcpy", "the baseline copy did not happen");
        }
        free(fresh);
        uint64_t t3 = bench_cpu_ns();
        bench_world_expect(&t, "weft_snapshot_restore", weft_snapshot_restore(t.w, blob, len));
        double dr = snap_per(t3, bench_cpu_ns(), cfg->n);
        if (r == -cfg->warmup && weft_world_hash(t.w) != want) {
            bench_fail(name, "weft_world_hash", "the restored world differs");
        }
        bench_world_fini(&t);
        if (r >= 0) {
            vm[r] = dm;
            vs[r] = ds;
            vr[r] = dr;
            vf[r] = df;
        }
        if (dst[len / 2] != src[len / 2]) {
            bench_fail(name, "memcpy", "the baseline copy did not happen");
        }
    }
    double m = bench_median(vm, reps);
    double s = bench_median(vs, reps);
    double rs = bench_median(vr, reps);
    double f = bench_median(vf, reps);
    bench_report_ratio("snapshot write (Pos+Vel) vs memcpy", "ns", s, m, 2.0);
    bench_report_ratio("snapshot restore (Pos+Vel) vs malloc+memcpy", "ns", rs, f, 1.0 / 0.3);
    bench_note("snapshot restore vs a memcpy into pre-touched memory: %.2fx", rs / m);
    bench_note("snapshot: %zu bytes for %d entities (%.1f B each); memcpy %.2f GB/s, "
               "write %.2f GB/s, restore %.2f GB/s",
               len, (int)cfg->n, (double)len / (double)(cfg->n > 0 ? cfg->n : 1),
               (double)len / (m * cfg->n), (double)len / (s * cfg->n),
               (double)len / (rs * cfg->n));
    free(vs);
    free(vr);
    free(vm);
    free(vf);
    free(blob);
    free(src);
    free(dst);
    bench_world_fini(&b);
}

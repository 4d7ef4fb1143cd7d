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
 * delta: after one full snapshot, with weft_snapshot_track on from its
 * tick, 1% of the entities (spread evenly) get a new Position through
 * weft_get_mut; weft_snapshot_delta_write since the snapshot's tick vs
 * the full weft_snapshot_write of the same world (target: <= 5% of the
 * time), with the delta's size in the note; the delta is merged onto the
 * base once and checked against the full snapshot.
 * json: weft_json_write_query of min(N, 100,000) described Pos+Vel entities
 * (ids and both components) vs a hand-written snprintf loop printing the
 * same text from plain arrays; ns per entity, and MB/s in the note.
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
    weft_world_increment_change_tick(b.w); /* the frame that spawned them ended */
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
    /* delta after 1% changed, with the changes tracked since the base
     * (weft_snapshot_track: the delta visits only the journaled rows) */
    uint32_t since = weft_world_change_tick(b.w);
    uint8_t *base = bench_xmalloc(len); /* the base: the world as it is now */
    {
        size_t got = 0;
        bench_world_expect(&b, "weft_snapshot_write", weft_snapshot_write(b.w, base, len, &got));
    }
    bench_world_expect(&b, "weft_snapshot_track", weft_snapshot_track(b.w, true));
    weft_world_increment_change_tick(b.w);
    weft_entity *ids = bench_xmalloc(sizeof(weft_entity) * (size_t)cfg->n);
    {
        weft_query_desc qd;
        memset(&qd, 0, sizeof qd);
        qd.terms[0].id = b.pos;
        qd.term_count = 1;
        weft_query *q = weft_query_create(b.w, &qd);
        weft_iter it;
        int32_t k = 0;
        bench_world_expect(&b, "weft_query_iter", weft_query_iter(b.w, q, &it));
        while (weft_iter_next(&it)) {
            const weft_entity *es = weft_iter_entities(&it);
            for (int32_t i = 0; i < weft_iter_count(&it) && k < cfg->n; i++) {
                ids[k++] = es[i];
            }
        }
        weft_query_destroy(b.w, q);
        for (int32_t i = 0; i < k; i += 100) {
            bench_position *p = weft_get_mut(b.w, ids[i], b.pos, sizeof *p);
            p->x += 1.0f;
        }
    }
    size_t dlen = 0;
    weft_snapshot_delta_write(b.w, since, NULL, 0, &dlen);
    uint8_t *dbuf = bench_xmalloc(dlen);
    memset(dbuf, 1, dlen);
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        size_t got = 0;
        uint64_t t0 = bench_cpu_ns();
        bench_world_expect(&b, "weft_snapshot_delta_write",
                           weft_snapshot_delta_write(b.w, since, dbuf, dlen, &got));
        uint64_t t1 = bench_cpu_ns();
        bench_world_expect(&b, "weft_snapshot_write", weft_snapshot_write(b.w, blob, len, &got));
        uint64_t t2 = bench_cpu_ns();
        if (r >= 0) {
            vs[r] = snap_per(t0, t1, cfg->n);
            vm[r] = snap_per(t1, t2, cfg->n);
        }
    }
    {
        /* the delta is right: base + delta == the full snapshot */
        size_t got = 0;
        bench_world_expect(&b, "weft_snapshot_delta_write",
                           weft_snapshot_delta_write(b.w, since, dbuf, dlen, &got));
        size_t mlen = 0;
        if (weft_snapshot_merge(b.w, base, len, dbuf, got, NULL, 0, &mlen) !=
                WEFT_ERR_CAPACITY || mlen != len) {
            bench_fail(name, "weft_snapshot_merge", "the merged size differs");
        }
        uint8_t *merged = bench_xmalloc(mlen);
        bench_world_expect(&b, "weft_snapshot_merge",
                           weft_snapshot_merge(b.w, base, len, dbuf, got, merged, mlen, &mlen));
        bench_world_expect(&b, "weft_snapshot_write", weft_snapshot_write(b.w, blob, len, &got));
        if (memcmp(merged, blob, len) != 0) {
            bench_fail(name, "weft_snapshot_merge", "base + delta differs from the full one");
        }
        free(merged);
    }
    double dd = bench_median(vs, reps);
    double df2 = bench_median(vm, reps);
    bench_report_ratio("snapshot delta (1% changed) vs full write", "ns", dd, df2, 0.05);
    bench_note("snapshot delta: %zu bytes (%.1f%% of the full %zu)", dlen,
               100.0 * (double)dlen / (double)len, len);
    free(ids);
    free(base);
    free(dbuf);
    free(vs);
    free(vr);
    free(vm);
    free(vf);
    free(blob);
    free(src);
    free(dst);
    bench_world_fini(&b);
}

static const weft_field xy_fields[] = {
    {.name = "x", .kind = WEFT_KIND_F32, .offset = 0},
    {.name = "y", .kind = WEFT_KIND_F32, .offset = 4},
};
static const weft_type_desc xy_desc = {"xy", 8, 0, xy_fields, 2};

/* The baseline: the same JSON text from plain arrays. */
static size_t json_by_hand(char *buf, size_t cap, const weft_entity *ids,
                           const bench_position *p, const bench_velocity *v, int32_t n)
{
    size_t len = 0;
    buf[len++] = '[';
    for (int32_t i = 0; i < n && len + 160 < cap; i++) {
        int k = snprintf(buf + len, cap - len,
                         "%s{\"id\":%llu,\"components\":{\"Position\":{\"x\":%.9g,"
                         "\"y\":%.9g},\"Velocity\":{\"x\":%.9g,\"y\":%.9g}}}",
                         i ? "," : "", (unsigned long long)ids[i], (double)p[i].x,
                         (double)p[i].y, (double)v[i].x, (double)v[i].y);
        len += (size_t)(k > 0 ? k : 0);
    }
    buf[len++] = ']';
    buf[len] = '\0';
    return len;
}

void bench_json(const bench_cfg *cfg, const bench_data *data)
{
    const char *name = "json";
    int32_t n = cfg->n < 100000 ? cfg->n : 100000;
    bench_world b;
    bench_world_init(&b, name, 0, WEFT_STORAGE_DEFAULT, NULL);
    bench_world_expect(&b, "weft_component_describe", weft_component_describe(b.w, b.pos, &xy_desc));
    bench_world_expect(&b, "weft_component_describe", weft_component_describe(b.w, b.vel, &xy_desc));
    weft_entity *ids = bench_xmalloc(sizeof(weft_entity) * (size_t)n);
    bench_world_spawn_bulk(&b, data, n, ids);
    weft_query_desc qd;
    memset(&qd, 0, sizeof qd);
    qd.terms[0].id = b.pos;
    qd.terms[1].id = b.vel;
    qd.term_count = 2;
    weft_query *q = weft_query_create(b.w, &qd);
    size_t len = 0;
    if (!q || weft_json_write_query(b.w, q, NULL, 0, &len) != WEFT_ERR_CAPACITY) {
        bench_fail(name, "weft_json_write_query", "no size");
    }
    char *out = bench_xmalloc(len + 1024);
    char *hand = bench_xmalloc(len + 1024);
    memset(out, 1, len + 1024);
    memset(hand, 1, len + 1024);
    int32_t reps = cfg->reps;
    double *vw = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *vh = bench_xmalloc(sizeof(double) * (size_t)reps);
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        size_t got = 0;
        uint64_t t0 = bench_cpu_ns();
        bench_world_expect(&b, "weft_json_write_query",
                           weft_json_write_query(b.w, q, out, len + 1024, &got));
        uint64_t t1 = bench_cpu_ns();
        size_t hl = json_by_hand(hand, len + 1024, ids, data->pos, data->vel, n);
        uint64_t t2 = bench_cpu_ns();
        if (r == -cfg->warmup && (hl + 1 != got || memcmp(out, hand, hl) != 0)) {
            bench_fail(name, "weft_json_write_query", "text differs from the hand-written one");
        }
        if (r >= 0) {
            vw[r] = snap_per(t0, t1, n);
            vh[r] = snap_per(t1, t2, n);
        }
    }
    double w = bench_median(vw, reps);
    double h = bench_median(vh, reps);
    bench_report("json write of Pos+Vel entities vs snprintf by hand", "ns", w, h, 0.0);
    bench_note("json: %d entities, %zu bytes of text; weft %.1f MB/s, by hand %.1f MB/s", (int)n,
               len, (double)len / (w * n) * 1e3, (double)len / (h * n) * 1e3);
    free(vw);
    free(vh);
    free(out);
    free(hand);
    free(ids);
    weft_query_destroy(b.w, q);
    bench_world_fini(&b);
}

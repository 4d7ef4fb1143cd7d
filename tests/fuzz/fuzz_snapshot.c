// tests/fuzz/fuzz_snapshot.c - libFuzzer target: the input is a binary
// snapshot, or a delta snapshot on top of a fixed base, loaded into a world
// with the registrations it was written with (tests/fuzz/fuzz_world.h).
//
// Input: one control byte, one argument byte, then the blob.
//   control bit 0: the blob is a delta: weft_snapshot_merge with the base
//                  (fz_world_fill(seed 1) saved at its change tick), and
//                  the merged snapshot restored;
//   control bit 1: repair the header (magic, version, byte-order mark,
//                  header size, flags, payload length, the delta's base
//                  tick), so mutations reach the payload parsers;
//   control bit 2: repair the XXH3 checksum (recomputed over the header and
//                  payload as weft.h's format describes), for the same
//                  reason;
//   control bit 3: fail one allocation of the restore (the argument byte
//                  picks which call, 1..256);
//   control bit 4: restore into a tool world (no schedule, no query).
// Seeds (corpus/fuzz_snapshot/) are real snapshots and deltas written by
// gen_seeds.c.
//
// Checks: restore and merge either fail with a status (and a message), and
// then the target world is exactly as before (same weft_world_hash, still
// empty, weft_world_check clean), or succeed, and then the world passes
// weft_world_check, writes a snapshot that restores into a fresh world with
// the same hash and writes the same bytes again, and both worlds run one
// frame of the schedule to the same hash; every byte allocated through the
// hook comes back when the worlds are destroyed.
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fuzz_common.h"
#include "fuzz_world.h"

#define SNAP_HEADER 64u

enum {
    CTL_DELTA = 1,
    CTL_REPAIR_HEADER = 2,
    CTL_REPAIR_SUM = 4,
    CTL_FAIL_ALLOC = 8,
    CTL_TOOL_WORLD = 16,
};

// Writes a snapshot of w into a malloc'd buffer (NULL when the world
// refuses: then the status is returned in *st).
static uint8_t *snap_take(weft_world *w, size_t *len, weft_status *st)
{
    size_t need = 0;
    *st = weft_snapshot_write(w, NULL, 0, &need);
    if (*st != WEFT_ERR_CAPACITY) {
        return NULL;
    }
    uint8_t *buf = malloc(need);
    if (!buf) {
        FZ_FAIL("out of memory");
    }
    *st = weft_snapshot_write(w, buf, need, len);
    if (*st != WEFT_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void repair_header(uint8_t *b, size_t len, bool delta, uint64_t since)
{
    if (len < SNAP_HEADER) {
        return;
    }
    uint32_t v;
    memcpy(b, "WEFTSNAP", 8);
    v = WEFT_SNAPSHOT_VERSION;
    memcpy(b + 8, &v, 4);
    v = 0x01020304u;
    memcpy(b + 12, &v, 4);
    v = SNAP_HEADER;
    memcpy(b + 16, &v, 4);
    uint32_t flags;
    memcpy(&flags, b + 20, 4);
    flags = (flags & ~1u & 0x7u) | (delta ? 1u : 0u); // keep the other known bits
    memcpy(b + 20, &flags, 4);
    uint64_t plen = len - SNAP_HEADER;
    memcpy(b + 24, &plen, 8);
    if (delta) {
        memcpy(b + 40, &since, 8);
    }
}

static void repair_sum(uint8_t *b, size_t len)
{
    if (len < SNAP_HEADER) {
        return;
    }
    memset(b + 32, 0, 8);
    XXH3_state_t hs;
    XXH3_64bits_reset(&hs);
    XXH3_64bits_update(&hs, b, len);
    uint64_t sum = XXH3_64bits_digest(&hs);
    memcpy(b + 32, &sum, 8);
}

// The base of the deltas: the same every run.
static uint8_t *make_base(size_t *len, uint32_t *since)
{
    fz_world g;
    if (!fz_world_new(&g, NULL, true) || !fz_world_fill(&g, 1, 24)) {
        FZ_FAIL("cannot build the base world: %s", weft_last_error(g.w));
    }
    weft_world_increment_change_tick(g.w);
    *since = weft_world_change_tick(g.w);
    weft_status st;
    uint8_t *b = snap_take(g.w, len, &st);
    if (!b) {
        FZ_FAIL("cannot write the base: %s", weft_status_name(st));
    }
    weft_world_destroy(g.w);
    return b;
}

// A world that restored `blob` successfully: checks everything the
// restore promises.
static void check_restored(fz_world *t, fz_alloc *alloc, bool tool)
{
    if (weft_world_check(t->w) != WEFT_OK) {
        FZ_FAIL("restored world fails the check: %s", weft_last_error(t->w));
    }
    uint64_t h1 = weft_world_hash(t->w);
    weft_status st;
    size_t l2 = 0;
    uint8_t *s2 = snap_take(t->w, &l2, &st);
    if (!s2) {
        FZ_FAIL("a restored world cannot be saved again: %s (%s)", weft_status_name(st),
                weft_last_error(t->w));
    }
    fz_world u;
    if (!fz_world_new(&u, alloc, !tool)) {
        FZ_FAIL("cannot build the second world");
    }
    st = weft_snapshot_restore(u.w, s2, l2);
    if (st != WEFT_OK) {
        FZ_FAIL("a restored world's snapshot does not restore: %s (%s)", weft_status_name(st),
                weft_last_error(u.w));
    }
    if (weft_world_hash(u.w) != h1) {
        FZ_FAIL("the re-restored world hashes differently");
    }
    if (weft_world_check(u.w) != WEFT_OK) {
        FZ_FAIL("re-restored world fails the check: %s", weft_last_error(u.w));
    }
    size_t l3 = 0;
    uint8_t *s3 = snap_take(u.w, &l3, &st);
    if (!s3 || l3 != l2 || memcmp(s2, s3, l2) != 0) {
        FZ_FAIL("a save of the re-restored world differs from the one it came from");
    }
    if (!tool) {
        weft_status a = weft_schedule_run(t->update, 0.25);
        weft_status b = weft_schedule_run(u.update, 0.25);
        if (a != b) {
            FZ_FAIL("one frame: %s vs %s", weft_status_name(a), weft_status_name(b));
        }
        if (weft_world_hash(t->w) != weft_world_hash(u.w)) {
            FZ_FAIL("one frame after restoring, the two worlds hash differently");
        }
        if (weft_world_check(t->w) != WEFT_OK) {
            FZ_FAIL("restored world fails the check after a frame: %s",
                    weft_last_error(t->w));
        }
    }
    free(s2);
    free(s3);
    weft_world_destroy(u.w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *base;
    static size_t base_len;
    static uint32_t base_since;
    if (!base) {
        base = make_base(&base_len, &base_since);
    }
    if (size < 2) {
        return 0;
    }
    uint8_t ctl = data[0];
    uint8_t arg = data[1];
    bool delta = ctl & CTL_DELTA;
    bool tool = ctl & CTL_TOOL_WORLD;
    size_t len = size - 2;
    uint8_t *blob = malloc(len ? len : 1);
    if (!blob) {
        return 0;
    }
    memcpy(blob, data + 2, len);
    if (ctl & CTL_REPAIR_HEADER) {
        repair_header(blob, len, delta, base_since);
    }
    if (ctl & CTL_REPAIR_SUM) {
        repair_sum(blob, len);
    }

    fz_alloc alloc;
    fz_alloc_init(&alloc);
    fz_world t;
    if (!fz_world_new(&t, &alloc, !tool)) {
        FZ_FAIL("cannot build the target world");
    }
    uint8_t *snap = blob;
    size_t snap_len = len;
    uint8_t *merged = NULL;
    weft_status st = WEFT_OK;
    if (delta) {
        size_t need = 0;
        st = weft_snapshot_merge(t.w, base, base_len, blob, len, NULL, 0, &need);
        if (st == WEFT_ERR_CAPACITY) {
            merged = malloc(need);
            if (!merged) {
                FZ_FAIL("out of memory");
            }
            size_t got = 0;
            st = weft_snapshot_merge(t.w, base, base_len, blob, len, merged, need, &got);
            if (st != WEFT_OK || got != need) {
                FZ_FAIL("merge measured %zu bytes, then gave %s with %zu", need,
                        weft_status_name(st), got);
            }
            snap = merged;
            snap_len = need;
        } else if (st == WEFT_OK) {
            FZ_FAIL("merge into a NULL buffer returned OK");
        } else if (!weft_last_error(t.w)[0]) {
            FZ_FAIL("merge failed (%s) without a message", weft_status_name(st));
        }
    }
    if (st == WEFT_OK) {
        uint64_t h0 = weft_world_hash(t.w);
        if (ctl & CTL_FAIL_ALLOC) {
            fz_alloc_fail_after(&alloc, (long long)arg + 1);
        }
        st = weft_snapshot_restore(t.w, snap, snap_len);
        fz_alloc_disarm(&alloc);
        if (st == WEFT_OK) {
            check_restored(&t, &alloc, tool);
        } else {
            if (!weft_last_error(t.w)[0]) {
                FZ_FAIL("restore failed (%s) without a message", weft_status_name(st));
            }
            if (weft_world_hash(t.w) != h0) {
                FZ_FAIL("a failed restore (%s: %s) changed the world", weft_status_name(st),
                        weft_last_error(t.w));
            }
            if (weft_world_check(t.w) != WEFT_OK) {
                FZ_FAIL("a failed restore left the world inconsistent: %s",
                        weft_last_error(t.w));
            }
            // still empty: a valid snapshot restores into it
            fz_world g;
            if (!fz_world_new(&g, NULL, !tool) || !fz_world_fill(&g, 3, 8)) {
                FZ_FAIL("cannot build a source world");
            }
            size_t gl = 0;
            weft_status gs;
            uint8_t *gb = snap_take(g.w, &gl, &gs);
            if (!gb) {
                FZ_FAIL("cannot save the source world: %s", weft_status_name(gs));
            }
            gs = weft_snapshot_restore(t.w, gb, gl);
            if (gs != WEFT_OK || weft_world_hash(t.w) != weft_world_hash(g.w)) {
                FZ_FAIL("after a failed restore, a valid one gives %s (%s)",
                        weft_status_name(gs), weft_last_error(t.w));
            }
            free(gb);
            weft_world_destroy(g.w);
        }
    }
    weft_world_destroy(t.w);
    fz_alloc_expect_empty(&alloc);
    free(merged);
    free(blob);
    return 0;
}

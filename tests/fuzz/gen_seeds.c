// tests/fuzz/gen_seeds.c - writes the seed corpora of the loader fuzz
// targets from real worlds (tests/fuzz/fuzz_world.h):
//   <dir>/fuzz_snapshot/: full snapshots (control byte 0, with and without
//     header/checksum repair, for a tool world, with an allocation failure)
//     and deltas on the base fuzz_snapshot.c uses (control bit 0), plain
//     and compressed with zstd;
//   <dir>/fuzz_json/: the JSON weft_json_write_component and
//     weft_json_write_entity write for the world fuzz_json.c reads into,
//     each behind the three control bytes that send it to a reader.
// Usage: fuzz_gen_seeds <corpus dir>   (tests/fuzz/corpus; the files are
// committed, so run it again only when the formats or the world change).
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "fuzz_world.h"

static int seq[2];

static void put(const char *dir, int target, const uint8_t *head, size_t hl, const void *body,
                size_t bl)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/seed%02d", dir, target ? "fuzz_json" : "fuzz_snapshot",
             seq[target]++);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(head, 1, hl, f) != hl || fwrite(body, 1, bl, f) != bl || fclose(f) != 0) {
        FZ_FAIL("cannot write %s", path);
    }
}

static uint8_t *take(weft_world *w, bool delta, uint32_t since, size_t *len, bool zstd)
{
    weft_snapshot_options o;
    memset(&o, 0, sizeof o);
    o.flags = (delta ? WEFT_SNAPSHOT_DELTA : 0u) | (zstd ? WEFT_SNAPSHOT_ZSTD : 0u);
    o.since = since;
    size_t need = 0;
    weft_status st = weft_snapshot_write_ex(w, &o, NULL, 0, &need);
    uint8_t *b = st == WEFT_ERR_CAPACITY ? malloc(need) : NULL;
    if (!b) {
        FZ_FAIL("cannot measure a snapshot: %s", weft_last_error(w));
    }
    st = weft_snapshot_write_ex(w, &o, b, need, len);
    if (st != WEFT_OK) {
        FZ_FAIL("cannot write a snapshot: %s", weft_last_error(w));
    }
    return b;
}

static void snapshot_seeds(const char *dir)
{
    // full snapshots of a few worlds, some after frames of the schedule
    for (uint32_t seed = 3; seed < 7; seed++) {
        fz_world fw;
        if (!fz_world_new(&fw, NULL, true) || !fz_world_fill(&fw, seed, 4 + (int)seed * 3)) {
            FZ_FAIL("cannot build world %u", seed);
        }
        for (uint32_t f = 0; f < seed - 3; f++) {
            weft_schedule_run(fw.update, 0.125);
        }
        size_t len = 0;
        uint8_t *b = take(fw.w, false, 0, &len, false);
        const uint8_t heads[4][2] = {{0, 0}, {6, 0}, {16 | 6, 0}, {8 | 6, (uint8_t)(seed * 9)}};
        for (int h = 0; h < 4; h++) {
            put(dir, 0, heads[h], 2, b, len);
        }
        free(b);
        if (weft_snapshot_zstd_available()) { // compressed: plain and with a failure
            b = take(fw.w, false, 0, &len, true);
            put(dir, 0, heads[1], 2, b, len);
            put(dir, 0, heads[3], 2, b, len);
            free(b);
        }
        weft_world_destroy(fw.w);
    }
    // deltas on fuzz_snapshot.c's base: fz_world_fill(seed 1, 24) saved at
    // its change tick, then changed in several ways
    for (int variant = 0; variant < 4; variant++) {
        fz_world g;
        if (!fz_world_new(&g, NULL, true) || !fz_world_fill(&g, 1, 24)) {
            FZ_FAIL("cannot build the base world");
        }
        weft_world_increment_change_tick(g.w);
        uint32_t since = weft_world_change_tick(g.w);
        weft_snapshot_track(g.w, true); /* value-only variant 0: a patch delta */
        weft_world_increment_change_tick(g.w);
        for (int i = 0; i < g.nids; i += 3) {
            if (!weft_is_alive(g.w, g.ids[i])) {
                continue;
            }
            fz_vec2 *p = weft_get_mut(g.w, g.ids[i], g.pos, sizeof *p);
            if (p) {
                p->x += 1.0f;
            }
            if (variant >= 1 && i % 2 == 0) {
                weft_despawn(g.w, g.ids[i]);
            }
        }
        if (variant >= 2) {
            fz_world_fill(&g, 9, 6);
            uint64_t score = 77;
            weft_resource_insert(g.w, g.score, &score, sizeof score);
        }
        if (variant >= 3) {
            weft_schedule_run(g.update, 0.5);
        }
        const uint8_t heads[2][2] = {{1, 0}, {1 | 6, 0}};
        for (int z = 0; z < (weft_snapshot_zstd_available() ? 2 : 1); z++) {
            size_t len = 0;
            uint8_t *b = take(g.w, true, since, &len, z == 1);
            for (int h = z; h < 2; h++) {
                put(dir, 0, heads[h], 2, b, len);
            }
            free(b);
        }
        weft_world_destroy(g.w);
    }
}

static void json_seeds(const char *dir)
{
    fz_world fw;
    if (!fz_world_new(&fw, NULL, false) || !fz_world_fill(&fw, 2, 16)) {
        FZ_FAIL("cannot build the JSON world");
    }
    const weft_component comps[8] = {fw.pos,   fw.vel,    fw.hp,   fw.label,
                                     fw.score, fw.frozen, fw.blob, fw.child_of};
    int nlive = 0;
    for (int i = 0; i < fw.nids; i++) {
        weft_entity e = fw.ids[i];
        if (!weft_is_alive(fw.w, e)) {
            continue;
        }
        uint8_t pick = (uint8_t)nlive++;
        if (pick > 30) {
            break;
        }
        for (int k = 0; k < 4; k++) {
            if (!weft_has(fw.w, e, comps[k])) {
                continue;
            }
            size_t need = 0;
            weft_json_write_component(fw.w, e, comps[k], NULL, 0, &need);
            char *t = malloc(need);
            size_t len = 0;
            if (!t || weft_json_write_component(fw.w, e, comps[k], t, need, &len) != WEFT_OK) {
                FZ_FAIL("cannot write a component");
            }
            // read into the same entity (it has the component) and into
            // the next one
            uint8_t head[3] = {0, (uint8_t)(k | (pick << 3)), 0};
            put(dir, 1, head, 3, t, len - 1);
            free(t);
        }
        size_t need = 0;
        weft_json_write_entity(fw.w, e, NULL, 0, &need);
        char *t = malloc(need);
        size_t len = 0;
        if (!t || weft_json_write_entity(fw.w, e, t, need, &len) != WEFT_OK) {
            FZ_FAIL("cannot write an entity");
        }
        if (nlive <= 6) {
            uint8_t head[3] = {1, (uint8_t)((pick + 1) << 3), 0};
            put(dir, 1, head, 3, t, len - 1);
            uint8_t spawn[3] = {2, 0, 0};
            put(dir, 1, spawn, 3, t, len - 1);
            uint8_t failing[3] = {0x80 | 2, 0, (uint8_t)(nlive * 5)};
            put(dir, 1, failing, 3, t, len - 1);
        }
        free(t);
    }
    weft_world_destroy(fw.w);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_gen_seeds <corpus dir>\n");
        return 2;
    }
    snapshot_seeds(argv[1]);
    json_seeds(argv[1]);
    printf("gen_seeds: %d snapshot seeds, %d JSON seeds\n", seq[0], seq[1]);
    return 0;
}

// tests/fuzz/fuzz_json.c - libFuzzer target: the input is JSON text read as a
// component, an entity or a new entity (weft_json_read_component,
// weft_json_read_entity, weft_json_spawn) into a populated world
// (tests/fuzz/fuzz_world.h, fz_world_fill(seed 2)).
//
// Input: three control bytes, then the text.
//   byte 0: the call (mod 3: component, entity, spawn) and, bit 7, fail one
//           allocation of the call (byte 2 picks which, 1..256);
//   byte 1: the component (mod 8: Pos, Vel, Hp, Label, Score, Frozen, Blob,
//           ChildOf) and, bits 3..7, the entity (one of the live ones, or a
//           despawned one, or 0);
//   byte 2: the allocation to fail.
// Seeds (corpus/fuzz_json/) are the JSON that weft_json_write_* writes for
// such a world (gen_seeds.c); the dictionary fuzz_json.dict holds the
// component, field and enum names and JSON tokens.
//
// Checks: a failed read gives a status and a message, leaves the world
// exactly as it was (same weft_world_hash) and consistent; a successful
// one leaves it consistent, and the entity it wrote writes JSON that spawns
// an entity with the same described components (text equal field for
// field), and clones (weft_clone, the scene path) into a consistent world;
// every byte allocated through the hook comes back at the end.
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

static char *json_of(weft_world *w, weft_entity e, weft_component c, size_t *len)
{
    size_t need = 0;
    weft_status st = c ? weft_json_write_component(w, e, c, NULL, 0, &need)
                       : weft_json_write_entity(w, e, NULL, 0, &need);
    if (st != WEFT_ERR_CAPACITY) {
        FZ_FAIL("cannot measure the JSON of %llu: %s (%s)", (unsigned long long)e,
                weft_status_name(st), weft_last_error(w));
    }
    char *buf = malloc(need);
    if (!buf) {
        FZ_FAIL("out of memory");
    }
    st = c ? weft_json_write_component(w, e, c, buf, need, len)
           : weft_json_write_entity(w, e, buf, need, len);
    if (st != WEFT_OK || *len != need || strlen(buf) + 1 != need) {
        FZ_FAIL("JSON of %llu: %s", (unsigned long long)e, weft_status_name(st));
    }
    return buf;
}

// The entity `e` a read wrote: its JSON spawns an equal entity, it clones.
static void check_written(fz_world *fw, weft_entity e)
{
    weft_world *w = fw->w;
    size_t len = 0;
    char *text = json_of(w, e, 0, &len);
    weft_entity copy = weft_json_spawn(w, text, len - 1);
    if (!copy) {
        FZ_FAIL("the JSON of an entity does not spawn: %s\n%s", weft_last_error(w), text);
    }
    const weft_component described[] = {fw->pos, fw->vel, fw->hp, fw->label};
    for (size_t i = 0; i < sizeof described / sizeof described[0]; i++) {
        weft_component c = described[i];
        if (weft_has(w, e, c) != weft_has(w, copy, c)) {
            FZ_FAIL("the spawned copy differs in having component %u", c);
        }
        if (!weft_has(w, e, c)) {
            continue;
        }
        size_t la = 0;
        size_t lb = 0;
        char *a = json_of(w, e, c, &la);
        char *b = json_of(w, copy, c, &lb);
        if (la != lb || memcmp(a, b, la) != 0) {
            FZ_FAIL("component %u reads back as %s, was %s", c, b, a);
        }
        free(a);
        free(b);
    }
    free(text);
    if (weft_has(w, e, fw->frozen) != weft_has(w, copy, fw->frozen) ||
        weft_has(w, e, fw->child_of) != weft_has(w, copy, fw->child_of)) {
        FZ_FAIL("the spawned copy differs in its tag or relationship");
    }
    weft_entity clone = weft_clone(w, e, true);
    if (!clone) {
        FZ_FAIL("the entity does not clone: %s", weft_last_error(w));
    }
    if (weft_world_check(w) != WEFT_OK) {
        FZ_FAIL("world inconsistent after the copy and the clone: %s", weft_last_error(w));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) {
        return 0;
    }
    uint8_t op = data[0];
    uint8_t sel = data[1];
    uint8_t fail_at = data[2];
    const char *text = (const char *)data + 3;
    size_t len = size - 3;

    fz_alloc alloc;
    fz_alloc_init(&alloc);
    fz_world fw;
    if (!fz_world_new(&fw, &alloc, false) || !fz_world_fill(&fw, 2, 16)) {
        FZ_FAIL("cannot build the world");
    }
    weft_world *w = fw.w;
    // entity candidates: the live ones the fill spawned, a dead one, 0
    weft_entity live[64];
    int nlive = 0;
    weft_entity dead = weft_spawn(w);
    weft_despawn(w, dead);
    for (int i = 0; i < fw.nids; i++) {
        if (weft_is_alive(w, fw.ids[i])) {
            live[nlive++] = fw.ids[i];
        }
    }
    if (nlive == 0) {
        FZ_FAIL("the world has no entity");
    }
    const weft_component comps[8] = {fw.pos,   fw.vel,    fw.hp,   fw.label,
                                      fw.score, fw.frozen, fw.blob, fw.child_of};
    weft_component c = comps[sel & 7];
    uint32_t pick = sel >> 3;
    weft_entity e = pick < (uint32_t)nlive ? live[pick] : pick == 31 ? 0 : dead;
    uint64_t h0 = weft_world_hash(w);
    int kind = op % 3;
    weft_status st;
    weft_entity spawned = 0;
    weft_clear_error(w);
    if (op & 0x80) {
        fz_alloc_fail_after(&alloc, (long long)fail_at + 1);
    }
    switch (kind) {
    case 0:
        st = weft_json_read_component(w, e, c, text, len);
        break;
    case 1:
        st = weft_json_read_entity(w, e, text, len);
        break;
    default:
        spawned = weft_json_spawn(w, text, len);
        st = spawned ? WEFT_OK : weft_last_status(w);
        if (!spawned && st == WEFT_OK) {
            FZ_FAIL("weft_json_spawn failed without a status");
        }
        break;
    }
    fz_alloc_disarm(&alloc);
    if (st != WEFT_OK) {
        if (!weft_last_error(w)[0]) {
            FZ_FAIL("a JSON read failed (%s) without a message", weft_status_name(st));
        }
        if (weft_world_hash(w) != h0) {
            FZ_FAIL("a failed JSON read (%s: %s) changed the world", weft_status_name(st),
                    weft_last_error(w));
        }
        if (weft_world_check(w) != WEFT_OK) {
            FZ_FAIL("a failed JSON read left the world inconsistent: %s", weft_last_error(w));
        }
    } else {
        weft_status ck = weft_world_check(w);
        if (ck != WEFT_OK) {
            FZ_FAIL("a JSON read left the world inconsistent: %s", weft_last_error(w));
        }
        weft_entity target = kind == 2 ? spawned : e;
        if (!weft_is_alive(w, target)) {
            FZ_FAIL("a successful JSON read on a dead entity");
        }
        check_written(&fw, target);
    }
    weft_world_destroy(w);
    fz_alloc_expect_empty(&alloc);
    return 0;
}

// tests/fuzz/fuzz_remote.c - libFuzzer target: the input is the body of an
// HTTP request to weft_remote (include/weft_remote.h), answered by
// weft_remote_handle against a populated world (tests/fuzz/fuzz_world.h,
// fz_world_fill(seed 3)) with writes enabled and small limits (depth 16,
// batch 8), so that every method, every parameter check and the limits are
// reachable.
//
// Input: one control byte, then the text.
//   byte 0: bit 0 read-only (writes refused), bits 1..7 ignored.
// Seeds (corpus/fuzz_remote/) are one request per method and a few batches;
// the dictionary fuzz_remote.dict holds the method names, member names and
// the world's component names.
//
// Checks: every input gets an answer that is valid JSON (or none, for
// notifications only), with "jsonrpc":"2.0" and a result or an error
// object; an answer that is an error changed nothing (same
// weft_world_hash and entity count), unless it is a batch (its other
// members may have succeeded); the world stays consistent
// (weft_world_check); every byte allocated through the hook comes back.
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "fuzz_world.h"
#include "weft_remote.h"

static void check_one(const json_t *o)
{
    if (!json_is_object(o)) {
        FZ_FAIL("an answer is not an object");
    }
    const json_t *v = json_object_get(o, "jsonrpc");
    if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0) {
        FZ_FAIL("an answer lacks \"jsonrpc\":\"2.0\"");
    }
    const json_t *err = json_object_get(o, "error");
    if (!json_object_get(o, "result") == !err) {
        FZ_FAIL("an answer needs exactly one of result and error");
    }
    if (err && (!json_is_integer(json_object_get(err, "code")) ||
                !json_is_string(json_object_get(err, "message")))) {
        FZ_FAIL("an error without an integer code and a message");
    }
    if (!json_object_get(o, "id")) {
        FZ_FAIL("an answer without an id");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    bool read_only = data[0] & 1;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;

    fz_alloc alloc;
    fz_alloc_init(&alloc);
    fz_world fw;
    if (!fz_world_new(&fw, &alloc, true) || !fz_world_fill(&fw, 3, 24)) {
        FZ_FAIL("cannot build the world");
    }
    weft_world *w = fw.w;
    weft_remote_desc d;
    memset(&d, 0, sizeof d);
    d.world = w;
    d.flags = WEFT_REMOTE_NO_SERVER | (read_only ? 0u : WEFT_REMOTE_ALLOW_WRITES);
    d.max_depth = 16;
    d.max_batch = 8;
    weft_remote *r = NULL;
    if (weft_remote_create(&d, &r) != WEFT_OK) {
        FZ_FAIL("weft_remote_create failed");
    }
    uint64_t hash = weft_world_hash(w);
    weft_world_stats before;
    weft_world_get_stats(w, &before);

    size_t out_len = 0;
    const char *out = weft_remote_handle(r, text, len, &out_len);
    if (out) {
        json_error_t jerr;
        json_t *doc = json_loadb(out, out_len, 0, &jerr);
        if (!doc) {
            FZ_FAIL("the answer is not JSON: %s", jerr.text);
        }
        if (json_is_array(doc)) {
            if (json_array_size(doc) == 0) {
                FZ_FAIL("an empty batch answer");
            }
            size_t i;
            json_t *o;
            json_array_foreach(doc, i, o) {
                check_one(o);
            }
        } else {
            check_one(doc);
            weft_world_stats after;
            weft_world_get_stats(w, &after);
            if (json_object_get(doc, "error") &&
                (weft_world_hash(w) != hash || after.live_entities != before.live_entities)) {
                FZ_FAIL("a refused request changed the world: %.*s", (int)out_len, out);
            }
        }
        json_decref(doc);
    } else if (weft_remote_last_status(r) != WEFT_OK) {
        FZ_FAIL("weft_remote_handle failed: %s", weft_remote_last_error(r));
    }
    if (read_only && (weft_world_hash(w) != hash)) {
        FZ_FAIL("a read-only remote changed the world");
    }
    if (weft_world_check(w) != WEFT_OK) {
        FZ_FAIL("inconsistent world: %s", weft_last_error(w));
    }
    weft_remote_destroy(r);
    if (weft_world_destroy(w) != WEFT_OK) {
        FZ_FAIL("weft_world_destroy failed");
    }
    fz_alloc_expect_empty(&alloc);
    return 0;
}

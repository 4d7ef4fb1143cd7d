// tests/unit/test_snapshot_zstd.c - snapshots in a build without zstd: asking
// for compression, restoring or merging a compressed snapshot each give
// WEFT_ERR_UNSUPPORTED with a message naming zstd, and leave the world as
// it was. In a build with zstd the same path is taken through
// wf_zstd_simulate_absent; in one without, it is the real one.
// SPDX-License-Identifier: MIT
#include <stdlib.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "reflect/reflect.h"
#include "unit.h"

static weft_world *world_with_one(weft_component *c)
{
    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = "v";
    d.size = 8;
    *c = weft_component_register(w, &d);
    assert_int_not_equal(*c, 0);
    return w;
}

// A plain snapshot turned into one that claims a compressed payload (the
// flag and a plain length in the header, a valid checksum): what a build
// without zstd receives from one with it. The status comes before any
// decompression, so the payload need not be real zstd.
static uint8_t *forged_compressed(weft_world *w, uint32_t delta_flag, uint32_t since,
                                  size_t *len)
{
    size_t need = 0;
    weft_status st = delta_flag ? weft_snapshot_delta_write(w, since, NULL, 0, &need)
                                : weft_snapshot_write(w, NULL, 0, &need);
    assert_int_equal(st, WEFT_ERR_CAPACITY);
    uint8_t *b = malloc(need);
    assert_non_null(b);
    st = delta_flag ? weft_snapshot_delta_write(w, since, b, need, len)
                    : weft_snapshot_write(w, b, need, len);
    assert_int_equal(st, WEFT_OK);
    uint32_t flags = delta_flag | 2u;
    memcpy(b + 20, &flags, 4);
    uint64_t plain = *len - 64;
    memcpy(b + 48, &plain, 8);
    memset(b + 32, 0, 8);
    uint64_t sum = XXH3_64bits(b, *len);
    memcpy(b + 32, &sum, 8);
    return b;
}

static void zstd_absent_gives_unsupported(void **state)
{
    (void)state;
    bool built_with_zstd = weft_snapshot_zstd_available();
    if (built_with_zstd) {
        wf_zstd_simulate_absent(true);
    }
    assert_false(weft_snapshot_zstd_available());
    weft_component c;
    weft_world *w = world_with_one(&c);
    uint64_t v = 42;
    weft_value val = {c, 8, &v};
    assert_int_not_equal(weft_spawn_with(w, &val, 1), 0);

    // asking for compression
    weft_snapshot_options o;
    memset(&o, 0, sizeof o);
    o.flags = WEFT_SNAPSHOT_ZSTD;
    size_t n = 77;
    assert_int_equal(weft_snapshot_write_ex(w, &o, NULL, 0, &n), WEFT_ERR_UNSUPPORTED);
    assert_int_equal(n, 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_UNSUPPORTED);
    assert_non_null(strstr(weft_last_error(w), "zstd"));
    // a plain snapshot still works
    assert_int_equal(weft_snapshot_write_ex(w, NULL, NULL, 0, &n), WEFT_ERR_CAPACITY);
    assert_true(n > 64);

    // restoring a compressed snapshot: refused, the world untouched
    size_t zlen = 0;
    uint8_t *z = forged_compressed(w, 0, 0, &zlen);
    weft_component c2;
    weft_world *t = world_with_one(&c2);
    uint64_t h = weft_world_hash(t);
    weft_clear_error(t);
    assert_int_equal(weft_snapshot_restore(t, z, zlen), WEFT_ERR_UNSUPPORTED);
    assert_non_null(strstr(weft_last_error(t), "zstd"));
    assert_int_equal(weft_world_hash(t), h);
    assert_int_equal(weft_world_check(t), WEFT_OK);

    // merging with a compressed base or delta: refused
    size_t plen = 0;
    assert_int_equal(weft_snapshot_write(w, NULL, 0, &plen), WEFT_ERR_CAPACITY);
    uint8_t *plain = malloc(plen);
    assert_non_null(plain);
    assert_int_equal(weft_snapshot_write(w, plain, plen, &plen), WEFT_OK);
    uint32_t since = weft_world_change_tick(w);
    weft_world_increment_change_tick(w);
    size_t dlen = 0;
    uint8_t *zd = forged_compressed(w, 1, since, &dlen);
    assert_int_equal(weft_snapshot_merge(w, z, zlen, zd, dlen, NULL, 0, &n),
                     WEFT_ERR_UNSUPPORTED);
    assert_int_equal(weft_snapshot_merge(w, plain, plen, zd, dlen, NULL, 0, &n),
                     WEFT_ERR_UNSUPPORTED);
    assert_int_equal(n, 0);

    // the real snapshot, uncompressed, restores into the untouched world
    assert_int_equal(weft_snapshot_restore(t, plain, plen), WEFT_OK);
    assert_int_equal(weft_world_hash(t), weft_world_hash(w));
    free(plain);
    free(z);
    free(zd);
    weft_world_destroy(t);
    weft_world_destroy(w);
    if (built_with_zstd) {
        wf_zstd_simulate_absent(false);
        assert_true(weft_snapshot_zstd_available());
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zstd_absent_gives_unsupported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

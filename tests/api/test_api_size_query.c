// tests/api/test_api_size_query.c - the buffer rules shared by every writer
// that fills a caller buffer and reports the size it needs (full and delta
// snapshots, snapshot merge, JSON of a component, an entity, a query):
//  - a NULL buffer (whatever cap says) is a size query: CAPACITY, the size
//    in *out_len, nothing recorded in the error slot;
//  - a buffer one byte short: CAPACITY, the size in *out_len, the buffer
//    untouched (not a byte written), the error recorded with a message;
//  - a buffer of exactly the size: OK, the same size in *out_len;
//  - any other error: its status, and *out_len is 0.
// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_world.h"
#include "weft.h"

typedef struct vec2 {
    float x, y;
} vec2;

static const weft_field vec2_fields[] = {
    {.name = "x", .kind = WEFT_KIND_F32, .offset = offsetof(vec2, x)},
    {.name = "y", .kind = WEFT_KIND_F32, .offset = offsetof(vec2, y)},
};
static const weft_type_desc vec2_desc = {"vec2", sizeof(vec2), 0, vec2_fields, 2};

// The world every writer reads, and what the writers need.
typedef struct sq {
    tw_fixture *f;
    weft_world *w;
    weft_component pos;
    weft_entity e;
    weft_entity dead;     // a despawned entity: a stale handle
    weft_query *q;
    uint32_t since;       // change tick of `base`
    void *base;
    size_t base_len;
    void *delta;
    size_t delta_len;
} sq;

typedef enum sq_writer {
    SQ_SNAPSHOT,
    SQ_DELTA,
    SQ_MERGE,
    SQ_JSON_COMPONENT,
    SQ_JSON_ENTITY,
    SQ_JSON_QUERY,
    SQ_WRITERS
} sq_writer;

static const char *const sq_names[SQ_WRITERS] = {
    "weft_snapshot_write",       "weft_snapshot_delta_write", "weft_snapshot_merge",
    "weft_json_write_component", "weft_json_write_entity",    "weft_json_write_query",
};

// Calls writer `k`; `broken` makes the call fail for another reason than
// the buffer (a stale entity, a corrupt delta, a query being iterated...).
static weft_status sq_call(sq *s, sq_writer k, bool broken, void *buf, size_t cap,
                           size_t *out_len)
{
    weft_iter it;
    weft_status st = WEFT_OK;
    switch (k) {
    case SQ_SNAPSHOT:
    case SQ_DELTA:
        if (broken) { // writers refuse while an iteration is open
            assert_int_equal(weft_query_iter(s->w, s->q, &it), WEFT_OK);
        }
        st = k == SQ_SNAPSHOT ? weft_snapshot_write(s->w, buf, cap, out_len)
                              : weft_snapshot_delta_write(s->w, s->since, buf, cap, out_len);
        if (broken) {
            weft_iter_fini(&it);
        }
        return st;
    case SQ_MERGE:
        // broken: the base given as the delta
        return weft_snapshot_merge(s->w, s->base, s->base_len, broken ? s->base : s->delta,
                                   broken ? s->base_len : s->delta_len, buf, cap, out_len);
    case SQ_JSON_COMPONENT:
        return weft_json_write_component(s->w, broken ? s->dead : s->e, s->pos, buf, cap,
                                         out_len);
    case SQ_JSON_ENTITY:
        return weft_json_write_entity(s->w, broken ? s->dead : s->e, buf, cap, out_len);
    case SQ_JSON_QUERY:
        if (broken) {
            assert_int_equal(weft_query_iter(s->w, s->q, &it), WEFT_OK);
        }
        st = weft_json_write_query(s->w, s->q, buf, cap, out_len);
        if (broken) {
            weft_iter_fini(&it);
        }
        return st;
    default:
        fail();
        return WEFT_ERR_INVALID_ARG;
    }
}

static void *sq_take(weft_world *w, bool delta, uint32_t since, size_t *len)
{
    size_t need = 0;
    weft_status st = delta ? weft_snapshot_delta_write(w, since, NULL, 0, &need)
                           : weft_snapshot_write(w, NULL, 0, &need);
    assert_int_equal(st, WEFT_ERR_CAPACITY);
    void *buf = malloc(need);
    assert_non_null(buf);
    st = delta ? weft_snapshot_delta_write(w, since, buf, need, len)
               : weft_snapshot_write(w, buf, need, len);
    assert_int_equal(st, WEFT_OK);
    return buf;
}

static int sq_setup(void **state)
{
    sq *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->f = tw_fixture_new();
    assert_non_null(s->f);
    s->w = s->f->w;
    s->pos = tw_comp(s->w, "pos", sizeof(vec2), 4, WEFT_STORAGE_TABLE, 0);
    assert_int_equal(weft_component_describe(s->w, s->pos, &vec2_desc), WEFT_OK);
    for (int i = 0; i < 20; i++) {
        vec2 v = {(float)i, 0.5f};
        weft_value val = {s->pos, sizeof v, &v};
        weft_entity e = weft_spawn_with(s->w, &val, 1);
        assert_int_not_equal(e, 0);
        if (i == 3) {
            s->e = e;
        }
    }
    s->dead = weft_spawn(s->w);
    assert_int_equal(weft_despawn(s->w, s->dead), WEFT_OK);
    weft_query_desc qd = {0};
    qd.terms[0].id = s->pos;
    qd.term_count = 1;
    s->q = weft_query_create(s->w, &qd);
    assert_non_null(s->q);
    weft_world_increment_change_tick(s->w);
    s->since = weft_world_change_tick(s->w);
    s->base = sq_take(s->w, false, 0, &s->base_len);
    weft_world_increment_change_tick(s->w);
    vec2 *p = weft_get_mut(s->w, s->e, s->pos, sizeof *p);
    assert_non_null(p);
    p->y = 7.0f;
    s->delta = sq_take(s->w, true, s->since, &s->delta_len);
    *state = s;
    return 0;
}

static int sq_teardown(void **state)
{
    sq *s = *state;
    free(s->base);
    free(s->delta);
    tw_fixture_free(s->f);
    free(s);
    return 0;
}

static void size_query_null_buffer_is_an_answer(void **state)
{
    sq *s = *state;
    for (int k = 0; k < SQ_WRITERS; k++) {
        for (int c = 0; c < 2; c++) {
            size_t cap = c ? 1u << 20 : 0; // cap does not matter when buf is NULL
            size_t need = 12345;
            weft_clear_error(s->w);
            assert_int_equal(sq_call(s, (sq_writer)k, false, NULL, cap, &need),
                             WEFT_ERR_CAPACITY);
            assert_true(need > 1 && need != 12345);
            if (weft_last_status(s->w) != WEFT_OK) {
                fail_msg("%s: a size query recorded '%s'", sq_names[k], weft_last_error(s->w));
            }
        }
    }
    assert_int_equal(weft_world_check(s->w), WEFT_OK);
}

static void size_query_short_buffer_is_left_untouched(void **state)
{
    sq *s = *state;
    for (int k = 0; k < SQ_WRITERS; k++) {
        size_t need = 0;
        assert_int_equal(sq_call(s, (sq_writer)k, false, NULL, 0, &need), WEFT_ERR_CAPACITY);
        unsigned char *buf = malloc(need);
        unsigned char *copy = malloc(need);
        assert_true(buf && copy);
        for (size_t i = 0; i < need; i++) {
            buf[i] = (unsigned char)(0xA5 ^ i);
        }
        memcpy(copy, buf, need);
        size_t got = 0;
        weft_clear_error(s->w);
        assert_int_equal(sq_call(s, (sq_writer)k, false, buf, need - 1, &got),
                         WEFT_ERR_CAPACITY);
        assert_int_equal(got, need);
        if (memcmp(buf, copy, need) != 0) {
            fail_msg("%s wrote into a buffer one byte short", sq_names[k]);
        }
        assert_int_equal(weft_last_status(s->w), WEFT_ERR_CAPACITY);
        assert_true(tw_contains(weft_last_error(s->w), "needs"));
        // the exact size fits
        got = 0;
        assert_int_equal(sq_call(s, (sq_writer)k, false, buf, need, &got), WEFT_OK);
        assert_int_equal(got, need);
        if (k >= SQ_JSON_COMPONENT) {
            assert_int_equal(strlen((const char *)buf) + 1, need);
        }
        free(buf);
        free(copy);
    }
    assert_int_equal(weft_world_check(s->w), WEFT_OK);
}

static void size_query_other_errors_report_zero(void **state)
{
    sq *s = *state;
    char buf[4096];
    for (int k = 0; k < SQ_WRITERS; k++) {
        for (int b = 0; b < 2; b++) { // with a NULL buffer and with a big one
            size_t got = 777;
            weft_clear_error(s->w);
            weft_status st = sq_call(s, (sq_writer)k, true, b ? buf : NULL, b ? sizeof buf : 0,
                                     &got);
            assert_int_not_equal(st, WEFT_OK);
            assert_int_not_equal(st, WEFT_ERR_CAPACITY);
            assert_int_equal(weft_last_status(s->w), st);
            if (got != 0) {
                fail_msg("%s failed with %s but reported %zu bytes", sq_names[k],
                         weft_status_name(st), got);
            }
        }
    }
    assert_int_equal(weft_world_check(s->w), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(size_query_null_buffer_is_an_answer, sq_setup,
                                        sq_teardown),
        cmocka_unit_test_setup_teardown(size_query_short_buffer_is_left_untouched, sq_setup,
                                        sq_teardown),
        cmocka_unit_test_setup_teardown(size_query_other_errors_report_zero, sq_setup,
                                        sq_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

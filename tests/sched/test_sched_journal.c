/* tests/sched/test_sched_journal.c - tracked delta snapshots of a world
 * written by systems on two threads: parallel systems writing through
 * system get_mut and written query terms, and a par_each system whose
 * chunk tasks write from the workers, all journaled while other threads
 * run (the journal's appends are locked; ThreadSanitizer runs this test).
 * Every frame's delta, merged onto the previous snapshot, equals the full
 * snapshot, and value-only frames give patch deltas.
 * SPDX-License-Identifier: MIT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "weft.h"

typedef struct jw {
    weft_world *w;
    weft_component pos, vel, hp;
    weft_entity ents[3000];
    int n;
} jw;

static weft_component reg(weft_world *w, const char *name, size_t size, weft_storage st)
{
    weft_component_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.name = name;
    cd.size = size;
    cd.storage = st;
    weft_component c = weft_component_register(w, &cd);
    assert_int_not_equal(c, 0);
    return c;
}

static void sys_pos(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    uint32_t run = weft_system_this_run(ctx);
    while (weft_iter_next(&it)) {
        if (run % 2) { /* every other run: one row per chunk */
            int64_t *p = weft_iter_field_mut_nomark(&it, 0, sizeof *p);
            p[0] += 1;
            weft_iter_mark(&it, 0, 0);
        } else {
            int64_t *p = weft_iter_field_mut(&it, 0, sizeof *p);
            for (int32_t i = 0; i < weft_iter_count(&it); i++) {
                p[i] += i;
            }
        }
    }
}

static void sys_hp(weft_system_ctx *ctx, void *user)
{
    jw *j = user;
    uint32_t run = weft_system_this_run(ctx);
    for (int i = (int)(run % 7); i < j->n; i += 97) {
        int32_t *hp = weft_system_get_mut(ctx, 0, j->ents[i], 0, sizeof *hp);
        if (hp) {
            *hp -= 1;
        }
    }
}

static void vel_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)cmds;
    (void)user;
    while (weft_iter_next(it)) {
        int64_t *v = weft_iter_field_mut(it, 0, sizeof *v);
        for (int32_t i = 0; i < weft_iter_count(it); i += 5) {
            v[i] ^= 3;
        }
    }
}

static void sys_vel(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_system_par_each(ctx, 0, vel_chunk, NULL, 64);
}

static void *take(weft_world *w, bool delta, uint32_t since, size_t *len)
{
    size_t need = 0;
    weft_status st = delta ? weft_snapshot_delta_write(w, since, NULL, 0, &need)
                           : weft_snapshot_write(w, NULL, 0, &need);
    assert_int_equal(st, WEFT_ERR_CAPACITY);
    void *b = malloc(need);
    assert_non_null(b);
    st = delta ? weft_snapshot_delta_write(w, since, b, need, len)
               : weft_snapshot_write(w, b, need, len);
    assert_int_equal(st, WEFT_OK);
    return b;
}

static void journal_parallel_systems(void **state)
{
    (void)state;
    jw j;
    memset(&j, 0, sizeof j);
    j.w = weft_world_create(NULL);
    assert_non_null(j.w);
    j.pos = reg(j.w, "pos", 8, WEFT_STORAGE_TABLE);
    j.vel = reg(j.w, "vel", 8, WEFT_STORAGE_TABLE);
    j.hp = reg(j.w, "hp", 4, WEFT_STORAGE_SPARSE);
    j.n = 3000;
    for (int i = 0; i < j.n; i++) {
        int64_t p = i;
        int64_t v = -i;
        int32_t hp = 100;
        weft_value vals[3] = {{j.pos, 8, &p}, {j.vel, 8, &v}, {j.hp, 4, &hp}};
        j.ents[i] = weft_spawn_with(j.w, vals, 1 + (i % 3));
        assert_int_not_equal(j.ents[i], 0);
    }
    assert_int_equal(weft_world_set_threads(j.w, weft_max_threads() < 2 ? 1 : 2), WEFT_OK);
    weft_schedule *s = weft_schedule_create(j.w, "update");
    assert_non_null(s);
    weft_query_desc qp;
    memset(&qp, 0, sizeof qp);
    qp.terms[0].id = j.pos;
    qp.terms[0].access = WEFT_ACCESS_WRITE;
    qp.term_count = 1;
    weft_query_desc qh = qp;
    qh.terms[0].id = j.hp;
    weft_query_desc qv = qp;
    qv.terms[0].id = j.vel;
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "pos";
    sd.fn = sys_pos;
    sd.queries = &qp;
    sd.query_count = 1;
    assert_int_not_equal(weft_schedule_add_system(s, &sd), 0);
    sd.name = "hp";
    sd.fn = sys_hp;
    sd.user = &j;
    sd.queries = &qh;
    assert_int_not_equal(weft_schedule_add_system(s, &sd), 0);
    sd.name = "vel";
    sd.fn = sys_vel;
    sd.user = NULL;
    sd.queries = &qv;
    assert_int_not_equal(weft_schedule_add_system(s, &sd), 0);

    assert_int_equal(weft_schedule_run(s, 0.016), WEFT_OK);
    size_t cur_len = 0;
    void *cur = take(j.w, false, 0, &cur_len);
    uint32_t since = weft_world_change_tick(j.w);
    assert_int_equal(weft_snapshot_track(j.w, true), WEFT_OK);
    int patches = 0;
    for (int frame = 0; frame < 24; frame++) {
        assert_int_equal(weft_schedule_run(s, 0.016), WEFT_OK);
        if (frame % 8 == 7) { /* a structural frame now and then */
            assert_int_equal(weft_despawn(j.w, j.ents[frame]), WEFT_OK);
        }
        size_t dlen = 0;
        uint8_t *d = take(j.w, true, since, &dlen);
        uint32_t flags;
        memcpy(&flags, d + 20, 4);
        patches += (flags & 4u) ? 1 : 0;
        size_t need = 0;
        assert_int_equal(weft_snapshot_merge(j.w, cur, cur_len, d, dlen, NULL, 0, &need),
                         WEFT_ERR_CAPACITY);
        void *merged = malloc(need);
        assert_non_null(merged);
        size_t mlen = 0;
        assert_int_equal(weft_snapshot_merge(j.w, cur, cur_len, d, dlen, merged, need, &mlen),
                         WEFT_OK);
        size_t flen = 0;
        void *full = take(j.w, false, 0, &flen);
        if (mlen != flen || memcmp(merged, full, flen) != 0) {
            fail_msg("frame %d (%s): the merged snapshot differs from the full one", frame,
                     (flags & 4u) ? "patch" : "scan");
        }
        free(full);
        free(d);
        free(cur);
        cur = merged;
        cur_len = mlen;
        since = weft_world_change_tick(j.w);
    }
    assert_true(patches >= 18);
    free(cur);
    assert_int_equal(weft_world_destroy(j.w), WEFT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(journal_parallel_systems),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

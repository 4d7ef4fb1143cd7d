/* bench/scenarios_rollback.c - the cost of a rollback (weft_rollback,
 * docs/rollback.md): one advance that restores the snapshot of 8 frames
 * ago in place and resimulates those 8 frames before running the new one,
 * against 9 plain weft_app_update calls of an identical app, in one run.
 * The world: N/10 entities with a position and a velocity moved by one
 * system in Update, steered by the player's input. The ratio includes
 * what rollback costs beyond the updates: the restore, a snapshot per
 * resimulated frame and a weft_world_hash per frame.
 * SPDX-License-Identifier: MIT */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft_rollback.h"

/* Registered in bench/harness.c's scenario table. */
void bench_rollback(const bench_cfg *cfg, const bench_data *data);

enum { RB_DEPTH = 8 };

typedef struct rb_app {
    weft_app *app;
    weft_world *w;
    weft_component pos, vel, inputs;
} rb_app;

static void rb_move(weft_system_ctx *ctx, void *user)
{
    rb_app *a = user;
    const weft_rollback_inputs *in =
        weft_system_resource(ctx, a->inputs, weft_rollback_inputs_size(2, 1));
    const uint8_t *b = in ? weft_rollback_input(in, 1, NULL) : NULL;
    float steer = b ? (float)(*b & 7) * 0.01f : 0.0f;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        bench_position *p = weft_iter_field_mut(&it, 0, sizeof *p);
        const bench_velocity *v = weft_iter_field(&it, 1, sizeof *v);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            p[i].x += v[i].x + steer;
            p[i].y += v[i].y;
        }
    }
}

static void rb_app_make(rb_app *a, const bench_data *data, int32_t n)
{
    weft_app_desc ad = {0};
    ad.fixed_step = 1.0 / 60;
    a->app = weft_app_create(&ad);
    a->w = weft_app_world(a->app);
    weft_component_desc cd = {0};
    cd.name = "pos";
    cd.size = sizeof(bench_position);
    a->pos = weft_component_register(a->w, &cd);
    cd.name = "vel";
    cd.size = sizeof(bench_velocity);
    a->vel = weft_component_register(a->w, &cd);
    a->inputs = weft_rollback_inputs_register(a->w, 2, 1);
    if (!a->pos || !a->vel || !a->inputs) {
        bench_fail("rollback", "setup", weft_last_error(a->w));
    }
    for (int32_t i = 0; i < n; i++) {
        weft_value vals[2] = {{a->pos, sizeof(bench_position), &data->pos[i]},
                              {a->vel, sizeof(bench_velocity), &data->vel[i]}};
        weft_spawn_with(a->w, vals, 2);
    }
    weft_query_desc q = {0};
    q.terms[0] = (weft_term){.id = a->pos, .access = WEFT_ACCESS_WRITE};
    q.terms[1] = (weft_term){.id = a->vel, .access = WEFT_ACCESS_READ};
    q.term_count = 2;
    weft_resource_use ru = {a->inputs, WEFT_ACCESS_READ};
    weft_system_desc sd = {0};
    sd.name = "move";
    sd.fn = rb_move;
    sd.user = a;
    sd.queries = &q;
    sd.query_count = 1;
    sd.resources = &ru;
    sd.resource_count = 1;
    if (!weft_app_add_system(a->app, WEFT_APP_UPDATE, &sd)) {
        bench_fail("rollback", "add_system", weft_last_error(a->w));
    }
}

static void rb_check(weft_rollback_session *s, weft_rollback_status st, const char *what)
{
    if (st != WEFT_RB_OK) {
        bench_fail("rollback", what, weft_rollback_last_error(s));
    }
}

void bench_rollback(const bench_cfg *cfg, const bench_data *data)
{
    int32_t n = cfg->n / 10 > 0 ? cfg->n / 10 : 1;
    int32_t reps = cfg->reps < 5 ? 5 : cfg->reps;
    rb_app ra, pa;
    rb_app_make(&ra, data, n);
    rb_app_make(&pa, data, n);
    /* the rolled-back app: player 0 local, player 1 remote and late */
    weft_rollback_desc d = {0};
    d.app = ra.app;
    d.players = 2;
    d.input_size = 1;
    d.local_players = 1;
    d.max_rollback = 2 * RB_DEPTH;
    weft_rollback_session *s = weft_rollback_create(&d, NULL);
    if (!s) {
        bench_fail("rollback", "weft_rollback_create", weft_last_error(ra.w));
    }
    double *wv = bench_xmalloc((size_t)reps * sizeof *wv);
    double *bv = bench_xmalloc((size_t)reps * sizeof *bv);
    uint8_t zero = 0;
    int64_t frame = 0;
    for (int32_t k = -cfg->warmup; k < reps; k++) {
        /* RB_DEPTH frames predicted (player 1's last confirmed input) */
        int64_t first = frame;
        for (int32_t i = 0; i < RB_DEPTH; i++, frame++) {
            rb_check(s, weft_rollback_add_local_input(s, 0, &zero, 1, NULL), "local input");
            rb_check(s, weft_rollback_advance(s), "advance");
        }
        /* their real inputs (2 and 5 in turn from repetition to repetition)
         * differ from the prediction from the first frame on: one advance
         * rolls back RB_DEPTH frames, resimulates them and runs the new one */
        for (int64_t f = first; f <= frame; f++) {
            uint8_t b = (k & 1) ? 2 : 5;
            rb_check(s, weft_rollback_add_remote_input(s, 1, f, &b, 1), "remote input");
        }
        rb_check(s, weft_rollback_add_local_input(s, 0, &zero, 1, NULL), "local input");
        uint64_t t0 = bench_now_ns();
        rb_check(s, weft_rollback_advance(s), "the rollback's advance");
        double w = (double)(bench_now_ns() - t0);
        frame++;
        t0 = bench_now_ns();
        for (int32_t i = 0; i <= RB_DEPTH; i++) {
            weft_app_update(pa.app, 1.0 / 60);
        }
        double b = (double)(bench_now_ns() - t0);
        if (k >= 0) {
            wv[k] = w;
            bv[k] = b;
            bench_trace(cfg, "rollback", "weft", k, w);
            bench_trace(cfg, "rollback", "plain", k, b);
        }
    }
    weft_rollback_stats st;
    weft_rollback_get_stats(s, &st);
    if (st.max_rollback_depth != RB_DEPTH) {
        bench_fail("rollback", "depth", "the advance did not roll back 8 frames");
    }
    /* the parts a frame adds beyond its update, on the plain app's world */
    double th = 0, tw = 0, tr = 0;
    size_t len = 0;
    weft_snapshot_write(pa.w, NULL, 0, &len);
    void *blob = bench_xmalloc(len);
    for (int32_t k = 0; k < reps; k++) {
        uint64_t t0 = bench_now_ns();
        volatile uint64_t h = weft_world_hash(pa.w);
        (void)h;
        uint64_t t1 = bench_now_ns();
        weft_snapshot_write(pa.w, blob, len, &len);
        uint64_t t2 = bench_now_ns();
        weft_snapshot_restore(pa.w, blob, len);
        uint64_t t3 = bench_now_ns();
        th += (double)(t1 - t0);
        tw += (double)(t2 - t1);
        tr += (double)(t3 - t2);
    }
    free(blob);
    bench_note("rollback: per frame, weft_world_hash %.0f us, weft_snapshot_write %.0f us; "
               "weft_snapshot_restore %.0f us (%zu bytes)",
               th / reps / 1e3, tw / reps / 1e3, tr / reps / 1e3, len);
    double w = bench_median(wv, reps), b = bench_median(bv, reps);
    static char label[128];
    snprintf(label, sizeof label,
             "rollback of %d frames + 1 (restore, resimulate) vs %d updates, %d entities (us)",
             RB_DEPTH, RB_DEPTH + 1, (int)n);
    bench_report_ratio(label, "us", w / 1e3, b / 1e3, 0);
    bench_note("rollback: %.0f us for a rollback of %d frames and the new frame, %.0f us for %d "
               "plain updates (%.2fx); %lld rollbacks, %lld frames resimulated",
               w / 1e3, RB_DEPTH, b / 1e3, RB_DEPTH + 1, w / b, (long long)st.rollbacks,
               (long long)st.frames_resimulated);
    free(wv);
    free(bv);
    weft_rollback_destroy(s);
    weft_app_destroy(ra.app);
    weft_app_destroy(pa.app);
}

/* bench/bench_app.c - the app's own cost: an update of an app with empty
 * schedules vs running the same schedules directly.
 * SPDX-License-Identifier: MIT
 *
 *  app_frame  An app whose 15 built-in schedules are empty (one fixed step
 *             per update: dt = the step), one weft_app_update per sample
 *             element, vs the same work by hand on a second world: one
 *             weft_messages_update, then weft_schedule_run of the 7 main
 *             and the 5 fixed schedules in order. Both sides run the same
 *             executor (single-threaded). Target: the app within 1.05x of
 *             the direct runs plus 1 us per update, reported as a budget
 *             row (baseline = 1.05 x direct + 1,000 ns, ratio target 1.0).
 *             Blocks of updates alternate between the two sides so drift
 *             hits both; each figure is the median ns per update.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "weft.h"

enum { APP_PER_SAMPLE = 200, APP_SAMPLES = 20 };

static const char *const g_main[] = {
    WEFT_APP_FIRST, WEFT_APP_PRE_UPDATE, WEFT_APP_STATE_TRANSITION,
    WEFT_APP_RUN_FIXED_MAIN_LOOP, WEFT_APP_UPDATE, WEFT_APP_POST_UPDATE, WEFT_APP_LAST,
};
static const char *const g_fixed[] = {
    WEFT_APP_FIXED_FIRST, WEFT_APP_FIXED_PRE_UPDATE, WEFT_APP_FIXED_UPDATE,
    WEFT_APP_FIXED_POST_UPDATE, WEFT_APP_FIXED_LAST,
};
#define APP_NMAIN ((int)(sizeof g_main / sizeof g_main[0]))
#define APP_NFIXED ((int)(sizeof g_fixed / sizeof g_fixed[0]))

static void app_expect(const char *what, weft_status st)
{
    if (st != WEFT_OK) {
        bench_fail("app_frame", what, weft_status_name(st));
    }
}

typedef struct app_direct {
    weft_world *w;
    weft_schedule *main[APP_NMAIN];
    weft_schedule *fixed[APP_NFIXED];
} app_direct;

static void app_direct_update(app_direct *d, double dt, double step)
{
    weft_messages_update(d->w);
    for (int i = 0; i < APP_NMAIN; i++) {
        app_expect("weft_schedule_run", weft_schedule_run(d->main[i], dt));
        if (i == 3) { /* RunFixedMainLoop: one fixed step */
            for (int k = 0; k < APP_NFIXED; k++) {
                app_expect("weft_schedule_run", weft_schedule_run(d->fixed[k], step));
            }
        }
    }
}

void bench_app_frame(const bench_cfg *cfg, const bench_data *data)
{
    (void)data;
    const double step = 1.0 / 64.0;
    weft_app_desc ad;
    memset(&ad, 0, sizeof ad);
    ad.fixed_step = step;
    weft_app *app = weft_app_create(&ad);
    if (!app) {
        bench_fail("app_frame", "weft_app_create", "NULL");
    }
    app_direct d;
    d.w = weft_world_create(NULL);
    if (!d.w) {
        bench_fail("app_frame", "weft_world_create", "NULL");
    }
    for (int i = 0; i < APP_NMAIN; i++) {
        d.main[i] = weft_schedule_create(d.w, g_main[i]);
    }
    for (int i = 0; i < APP_NFIXED; i++) {
        d.fixed[i] = weft_schedule_create(d.w, g_fixed[i]);
    }
    int32_t reps = cfg->reps < 32 ? cfg->reps : 32;
    int32_t total = reps * APP_SAMPLES;
    double *va = bench_xmalloc(sizeof *va * (size_t)total);
    double *vd = bench_xmalloc(sizeof *vd * (size_t)total);
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        for (int32_t k = 0; k < APP_SAMPLES; k++) {
            uint64_t t0 = bench_now_ns();
            for (int32_t i = 0; i < APP_PER_SAMPLE; i++) {
                app_expect("weft_app_update", weft_app_update(app, step));
            }
            uint64_t t1 = bench_now_ns();
            for (int32_t i = 0; i < APP_PER_SAMPLE; i++) {
                app_direct_update(&d, step, step);
            }
            uint64_t t2 = bench_now_ns();
            if (r >= 0) {
                va[r * APP_SAMPLES + k] = (double)(t1 - t0) / APP_PER_SAMPLE;
                vd[r * APP_SAMPLES + k] = (double)(t2 - t1) / APP_PER_SAMPLE;
            }
        }
    }
    /* the app really ran one fixed step per update */
    if (weft_app_fixed_steps(app) != 1) {
        bench_fail("app_frame", "weft_app_fixed_steps", "not one step per update");
    }
    double a = bench_median(va, total);
    double base = bench_median(vd, total);
    free(va);
    free(vd);
    app_expect("weft_app_destroy", weft_app_destroy(app));
    app_expect("weft_world_destroy", weft_world_destroy(d.w));
    bench_report("app_frame empty schedules, app update (ns/update)", "ns", a, base, 0.0);
    bench_report_ratio("app_frame empty schedules vs direct runs (1.05x + 1 us)", "ns", a,
                       1.05 * base + 1000.0, 1.0);
    bench_note("app_frame: one update of an app with 15 empty schedules (one fixed step) "
               "%.0f ns vs the same 12 schedule runs and a message update by hand %.0f ns: "
               "%.3fx, %+.0f ns",
               a, base, base > 0 ? a / base : 0.0, a - base);
}

/* bench/bench_module.c - reloadable modules (hot reload).
 * SPDX-License-Identifier: MIT
 *
 *  module_reload  weft_module_reload of a module with 100 systems (all
 *                 rebound by name), vs the part no reload can avoid:
 *                 copying the file, dlopen and dlclose of the copy. The
 *                 ratio is what the diff and rebind add on top.
 *  module_watch   one update of an app running the module's 100 empty
 *                 systems with the file watcher on (inotify) vs off.
 *                 Blocks alternate between the two sides; medians.
 *                 Target: within 1% plus 250 ns, the one non-blocking
 *                 read(2) of the inotify descriptor a frame costs (an
 *                 update of 100 empty systems is ~1.5 us, so the read is
 *                 ~10% of it; of a real frame, well under 1%). Reported
 *                 as a budget row.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "weft.h"

static void mod_expect(const char *what, weft_status st)
{
    if (st != WEFT_OK) {
        bench_fail("module", what, weft_status_name(st));
    }
}

/* The unavoidable part of a reload: copy the file, dlopen, dlclose. */
static void copy_open_close(const char *path)
{
    char tmp[] = "/tmp/weft-bench-module-XXXXXX";
    int out = mkstemp(tmp);
    FILE *in = fopen(path, "rb");
    if (out < 0 || !in) {
        bench_fail("module_reload", "copy", path);
    }
    char buf[16384];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        if (write(out, buf, n) != (ssize_t)n) {
            bench_fail("module_reload", "copy", "short write");
        }
    }
    fclose(in);
    close(out);
    void *h = dlopen(tmp, RTLD_NOW | RTLD_LOCAL);
    unlink(tmp);
    if (!h) {
        bench_fail("module_reload", "dlopen", dlerror());
    }
    dlclose(h);
}

void bench_module(const bench_cfg *cfg, const bench_data *data)
{
    (void)data;
    weft_app *app = weft_app_create(NULL);
    if (!app) {
        bench_fail("module", "weft_app_create", "NULL");
    }
    mod_expect("weft_app_setup", weft_app_setup(app));
    weft_module *m = weft_module_load(app, WEFT_BENCH_MODULE);
    if (!m) {
        bench_fail("module", "weft_module_load", weft_last_error(weft_app_world(app)));
    }
    int32_t reps = cfg->reps < 20 ? cfg->reps : 20;
    double *vr = bench_xmalloc(sizeof *vr * (size_t)reps);
    double *vb = bench_xmalloc(sizeof *vb * (size_t)reps);
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        uint64_t t0 = bench_now_ns();
        mod_expect("weft_module_reload", weft_module_reload(m));
        uint64_t t1 = bench_now_ns();
        copy_open_close(WEFT_BENCH_MODULE);
        uint64_t t2 = bench_now_ns();
        if (r >= 0) {
            vr[r] = (double)(t1 - t0);
            vb[r] = (double)(t2 - t1);
        }
    }
    if (weft_module_system_count(m) != 100) {
        bench_fail("module_reload", "systems", "not 100 after the reloads");
    }
    double rl = bench_median(vr, reps);
    double rb = bench_median(vb, reps);
    bench_report("module_reload 100 systems vs copy+dlopen+dlclose (ns)", "ns", rl, rb, 0.0);
    bench_note("module_reload: %.3f ms a reload of 100 systems, %.3f ms of it at least for "
               "copy + dlopen + dlclose: %.2fx",
               rl / 1e6, rb / 1e6, rb > 0 ? rl / rb : 0.0);

    enum { PER = 200, SAMPLES = 20 };
    int32_t total = reps * SAMPLES;
    double *von = bench_xmalloc(sizeof *von * (size_t)total);
    double *voff = bench_xmalloc(sizeof *voff * (size_t)total);
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        for (int32_t k = 0; k < SAMPLES; k++) {
            mod_expect("weft_module_watch", weft_module_watch(m, true, false));
            uint64_t t0 = bench_now_ns();
            for (int32_t i = 0; i < PER; i++) {
                mod_expect("weft_app_update", weft_app_update(app, 1.0 / 60.0));
            }
            uint64_t t1w = bench_now_ns();
            /* closing an inotify descriptor is slow (the kernel waits for
             * a grace period): outside the timed blocks */
            mod_expect("weft_module_watch", weft_module_watch(m, false, false));
            uint64_t t1 = bench_now_ns();
            for (int32_t i = 0; i < PER; i++) {
                mod_expect("weft_app_update", weft_app_update(app, 1.0 / 60.0));
            }
            uint64_t t2 = bench_now_ns();
            if (r >= 0) {
                von[r * SAMPLES + k] = (double)(t1w - t0) / PER;
                voff[r * SAMPLES + k] = (double)(t2 - t1) / PER;
            }
        }
    }
    double on = bench_median(von, total);
    double off = bench_median(voff, total);
    bench_report_ratio("module_watch update, watcher on vs off (1.01x + 250 ns)", "ns", on,
                       1.01 * off + 250.0, 1.0);
    bench_note("module_watch: an update running 100 module systems %.0f ns with the file "
               "watcher on, %.0f ns off: %.4fx",
               on, off, off > 0 ? on / off : 0.0);
    free(vr);
    free(vb);
    free(von);
    free(voff);
    mod_expect("weft_app_destroy", weft_app_destroy(app));
}

/* bench/bench_module.c - reloadable modules (hot reload).
 * SPDX-License-Identifier: MIT
 *
 *  module_reload  weft_module_reload of a module with 100 systems (all
 *                 rebound by name) and 20 described components (declared
 *                 again, layout unchanged), vs the part no reload can avoid:
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
 *  module_migrate a reload that migrates 1,000,000 values of a module's
 *                 component from {f32 x, y; i32 hp} (12 B) to {f64 y, x;
 *                 i64 hp; f32 z = 1} (32 B) through their type
 *                 descriptions (bench_module_layout.c), vs a hand-written
 *                 loop converting the same array into a new one (the
 *                 least any migration does; target 5x). The memcpy of
 *                 the same 12 MB is reported beside it.
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

typedef struct mig1 {
    float x, y;
    int32_t hp;
} mig1;

typedef struct mig2 {
    double y, x;
    int64_t hp;
    float z;
} mig2;

static void copy_path(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    FILE *out = fopen(to, "wb");
    if (!in || !out) {
        bench_fail("module_migrate", "copy", from);
    }
    char buf[16384];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        if (fwrite(buf, 1, n, out) != n) {
            bench_fail("module_migrate", "copy", "short write");
        }
    }
    fclose(in);
    if (fclose(out) != 0) {
        bench_fail("module_migrate", "copy", to);
    }
}

static void bench_migrate(const bench_cfg *cfg)
{
    enum { N = 1000000 };
    char work[] = "/tmp/weft-bench-layout-XXXXXX";
    int fd = mkstemp(work);
    if (fd < 0) {
        bench_fail("module_migrate", "mkstemp", work);
    }
    close(fd);
    mig1 *src = bench_xmalloc(sizeof *src * N);
    for (int32_t i = 0; i < N; i++) {
        src[i].x = (float)i * 0.5f;
        src[i].y = -(float)i;
        src[i].hp = i - N / 2;
    }
    int32_t reps = cfg->reps < 5 ? cfg->reps : 5;
    double *vm = bench_xmalloc(sizeof *vm * (size_t)reps);
    double *vc = bench_xmalloc(sizeof *vc * (size_t)reps);
    double *vp = bench_xmalloc(sizeof *vp * (size_t)reps);
    double sink = 0.0;
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        weft_app *app = weft_app_create(NULL);
        if (!app) {
            bench_fail("module_migrate", "weft_app_create", "NULL");
        }
        weft_world *w = weft_app_world(app);
        mod_expect("weft_app_setup", weft_app_setup(app));
        copy_path(WEFT_BENCH_LAYOUT1, work);
        weft_module *m = weft_module_load(app, work);
        if (!m) {
            bench_fail("module_migrate", "weft_module_load", weft_last_error(w));
        }
        weft_component c = weft_component_lookup(w, "MigBody");
        weft_value col = {c, sizeof *src, src};
        mod_expect("weft_spawn_bulk", weft_spawn_bulk(w, &col, 1, N, NULL));
        copy_path(WEFT_BENCH_LAYOUT2, work);
        uint64_t t0 = bench_now_ns();
        weft_status st = weft_module_reload(m);
        uint64_t t1 = bench_now_ns();
        if (st != WEFT_OK) {
            bench_fail("module_migrate", "weft_module_reload", weft_last_error(w));
        }
        weft_component_info info;
        mod_expect("weft_component_info_get", weft_component_info_get(w, c, &info));
        if (info.size != sizeof(mig2)) {
            bench_fail("module_migrate", "layout", "not migrated");
        }
        mod_expect("weft_app_destroy", weft_app_destroy(app));
        /* the baseline: the same conversion by hand into a new array */
        uint64_t t2 = bench_now_ns();
        mig2 *dst = malloc(sizeof *dst * N);
        if (!dst) {
            bench_fail("module_migrate", "malloc", "baseline");
        }
        for (int32_t i = 0; i < N; i++) {
            dst[i].y = (double)src[i].y;
            dst[i].x = (double)src[i].x;
            dst[i].hp = (int64_t)src[i].hp;
            dst[i].z = 1.0f;
        }
        uint64_t t3 = bench_now_ns();
        sink += dst[r >= 0 ? r : 0].x;
        free(dst);
        uint64_t t4 = bench_now_ns();
        mig1 *cp = malloc(sizeof *cp * N);
        if (!cp) {
            bench_fail("module_migrate", "malloc", "memcpy");
        }
        memcpy(cp, src, sizeof *cp * N);
        uint64_t t5 = bench_now_ns();
        sink += (double)cp[N - 1].y;
        free(cp);
        if (r >= 0) {
            vm[r] = (double)(t1 - t0);
            vc[r] = (double)(t3 - t2);
            vp[r] = (double)(t5 - t4);
        }
    }
    unlink(work);
    double mg = bench_median(vm, reps);
    double cv = bench_median(vc, reps);
    double cp = bench_median(vp, reps);
    bench_report_ratio("module_migrate 1M entities 12 B -> 32 B vs hand-written convert loop",
                       "ns", mg, cv, 5.0);
    bench_note("module_migrate: a reload migrating 1M values %.2f ms (%.1f ns an entity); the "
               "hand-written conversion %.2f ms (%.1f ns): %.2fx; a memcpy of the same 12 MB "
               "%.2f ms (%.1f ns): %.2fx%s",
               mg / 1e6, mg / N, cv / 1e6, cv / N, cv > 0 ? mg / cv : 0.0, cp / 1e6, cp / N,
               cp > 0 ? mg / cp : 0.0, sink == 12345.678 ? " " : "");
    free(vm);
    free(vc);
    free(vp);
    free(src);
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
    bench_report("module_reload 100 systems, 20 components vs copy+dlopen+dlclose (ns)", "ns",
                 rl, rb, 0.0);
    bench_note("module_reload: %.3f ms a reload of 100 systems and 20 components, %.3f ms of "
               "it at least for "
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
    bench_migrate(cfg);
}

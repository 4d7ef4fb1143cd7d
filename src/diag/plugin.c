/* src/diag/plugin.c - the diagnostics plugin: measures frame time, FPS,
 * frame count, entity and archetype counts (and, optionally, every
 * system's time) each update, and logs them every few seconds.
 * SPDX-License-Identifier: MIT
 *
 * Its build adds the built-in diagnostics and one exclusive, not
 * steppable system to Last. App time is the sum of the update dts the
 * system sees (Last runs once per update with the update's clamped dt), so
 * measurements and log reports follow the simulation, not the wall clock,
 * and a test can predict them. Per-system measurements: the finish
 * callback (after every plugin has built) turns profiling on for every
 * label's schedule and lists their systems once; each update a system
 * whose run count moved records its last run time under
 * "system/<schedule>/<system>".
 *
 * The plugin's state holds a copy of the app's allocator hook, since its
 * free_user runs after an owned world is gone.
 */
#include "diag/diag.h"

#include <stdio.h>
#include <string.h>

#define DP_ALIGN _Alignof(uint64_t)

typedef struct diag_track {
    wf_system *sys;
    int32_t diag;              /* store index */
    uint64_t runs;             /* stats.runs at the last measurement */
} diag_track;

typedef struct diag_plugin {
    wf_allocator alloc;        /* the app's hook */
    double log_interval;       /* < 0: never */
    bool per_system;
    int32_t history;
    double t;                  /* app time, seconds */
    double next_log;
    int32_t d_time, d_fps, d_count, d_entities, d_archetypes;
    diag_track *tracks;
    uint32_t ntracks, cap_tracks;
} diag_plugin;

static void dp_free(void *user)
{
    diag_plugin *p = user;
    wf_allocator alloc = p->alloc;
    wf_free(&alloc, p->tracks, (size_t)p->cap_tracks * sizeof *p->tracks, DP_ALIGN);
    wf_free(&alloc, p, sizeof *p, _Alignof(diag_plugin));
}

/* The entry of `name`, added when missing (an earlier app on the world may
 * have added it); -1 with the error recorded. */
static int32_t ensure(weft_world *w, const char *name, const char *suffix, int32_t history)
{
    int32_t i = wf_diag_find(w, name);
    return i >= 0 ? i
                  : wf_diag_add(w, name, suffix, history, WEFT_DIAG_SMOOTHING,
                                "weft.diagnostics");
}

static void log_report(weft_world *w)
{
    const wf_diag *d = w->diag;
    for (uint32_t i = 0; i < d->n; i++) {
        const wf_diag_entry *e = &d->v[i];
        if (!e->enabled || e->count == 0) {
            continue;
        }
        double mean, lo, hi;
        wf_diag_summary(e, &mean, &lo, &hi);
        wf_log(w, WEFT_LOG_INFO, "diagnostic %s: %.6g%s%s (average %.6g, smoothed %.6g)",
               e->name, e->last_value, e->suffix[0] ? " " : "", e->suffix, mean, e->ema);
    }
}

static void dp_system(weft_system_ctx *ctx, void *user)
{
    diag_plugin *p = user;
    weft_world *w = ctx->world;
    double dt = ctx->dt;
    p->t += dt;
    wf_diag_record(w, p->d_time, p->t, dt * 1000.0);
    if (dt > 0.0) {
        wf_diag_record(w, p->d_fps, p->t, 1.0 / dt);
    }
    wf_diag_entry *fc = wf_diag_entry_at(w, p->d_count);
    wf_diag_record(w, p->d_count, p->t, fc->count ? fc->last_value + 1.0 : 1.0);
    wf_diag_record(w, p->d_entities, p->t, (double)w->entities.live);
    wf_diag_record(w, p->d_archetypes, p->t, (double)w->graph.arch_count);
    for (uint32_t k = 0; k < p->ntracks; k++) {
        diag_track *tr = &p->tracks[k];
        if (tr->sys->stats.runs != tr->runs) {
            tr->runs = tr->sys->stats.runs;
            wf_diag_record(w, tr->diag, p->t, (double)tr->sys->stats.last_ns * 1e-6);
        }
    }
    if (p->log_interval >= 0.0 && p->t + 1e-9 >= p->next_log) {
        log_report(w);
        while (p->next_log <= p->t + 1e-9) {
            p->next_log += p->log_interval;
        }
    }
}

static weft_status dp_build(weft_app *a, void *user)
{
    diag_plugin *p = user;
    weft_world *w = a->world;
    int32_t h = p->history;
    p->d_time = ensure(w, WEFT_DIAG_FRAME_TIME, "ms", h);
    p->d_fps = ensure(w, WEFT_DIAG_FPS, "", h);
    p->d_count = ensure(w, WEFT_DIAG_FRAME_COUNT, "", h);
    p->d_entities = ensure(w, WEFT_DIAG_ENTITY_COUNT, "", h);
    p->d_archetypes = ensure(w, WEFT_DIAG_ARCHETYPE_COUNT, "", h);
    if (p->d_time < 0 || p->d_fps < 0 || p->d_count < 0 || p->d_entities < 0 ||
        p->d_archetypes < 0) {
        return wf_error_last(w);
    }
    weft_schedule *last = wf_app_schedule(a, WEFT_APP_LAST, "weft.diagnostics");
    if (!last) {
        return wf_error_last(w);
    }
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = WEFT_DIAG_PLUGIN;
    sd.fn = dp_system;
    sd.user = p;
    sd.flags = WEFT_SYSTEM_EXCLUSIVE | WEFT_SYSTEM_NOT_STEPPABLE;
    return wf_schedule_add_system(last, &sd) ? WEFT_OK : wf_error_last(w);
}

static weft_status dp_finish(weft_app *a, void *user)
{
    diag_plugin *p = user;
    if (!p->per_system) {
        return WEFT_OK;
    }
    weft_world *w = a->world;
    for (uint32_t i = 0; i < a->nlabels; i++) {
        weft_schedule *s = a->labels[i].sched;
        s->profiling = true;
        for (uint32_t k = 0; k < s->nnodes; k++) {
            wf_system *sys = s->nodes[k].sys;
            if (!sys || sys->fn == dp_system) {
                continue;
            }
            char name[WF_ERROR_LEN];
            snprintf(name, sizeof name, "%s%s/%s", WEFT_DIAG_SYSTEM_PREFIX, s->name, sys->name);
            int32_t di = ensure(w, name, "ms", p->history);
            if (di < 0) {
                return wf_error_last(w);
            }
            void *v = p->tracks;
            uint32_t cap = p->cap_tracks;
            if (!wf_grow(&p->alloc, &v, &cap, (uint64_t)p->ntracks + 1, sizeof *p->tracks,
                         DP_ALIGN)) {
                return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "weft.diagnostics: out of memory");
            }
            p->tracks = v;
            p->cap_tracks = cap;
            p->tracks[p->ntracks++] = (diag_track){sys, di, sys->stats.runs};
        }
    }
    return WEFT_OK;
}

weft_status wf_diag_plugin_add(weft_app *a, double log_interval, bool per_system,
                               int32_t history_len)
{
    diag_plugin *p = wf_calloc(&a->alloc, sizeof *p, _Alignof(diag_plugin));
    if (!p) {
        return wf_error(a->world, WEFT_ERR_OUT_OF_MEMORY,
                        "weft_app_add_diagnostics_plugin: out of memory");
    }
    wf_allocator_init(&p->alloc, &a->alloc.hook);
    p->log_interval = log_interval;
    p->next_log = log_interval;
    p->per_system = per_system;
    p->history = history_len;
    p->d_time = p->d_fps = p->d_count = p->d_entities = p->d_archetypes = -1;
    weft_plugin_desc d;
    memset(&d, 0, sizeof d);
    d.name = WEFT_DIAG_PLUGIN;
    d.build = dp_build;
    d.finish = dp_finish;
    d.user = p;
    d.free_user = dp_free;
    weft_status st = wf_plugin_desc_check(a, &d, "weft_app_add_diagnostics_plugin", NULL);
    if (st == WEFT_OK) {
        st = wf_app_add_plugin(a, &d);
    }
    if (st != WEFT_OK) {
        dp_free(p);
    }
    return st;
}

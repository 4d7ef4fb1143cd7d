/* src/diag/diag.h - diagnostics: a per-world store of named measurement
 * series (Bevy's DiagnosticsStore) and the plugin that fills it.
 * SPDX-License-Identifier: MIT
 *
 * Each diagnostic keeps its last `cap` values in a ring (oldest at
 * `head`), the time and value of the latest measurement, and an
 * exponential moving average updated per measurement with
 * alpha = clamp((t - t_prev) / smoothing, 0, 1), the first measurement
 * setting it (Bevy's Diagnostic::add_measurement). The mean, min and max
 * are computed over the ring when asked. Entries are found by name
 * (linear: stores hold tens of entries); their index is stable, so the
 * plugin keeps indices instead of names.
 *
 * Threads: the driver only (systems record from exclusive systems).
 */
#ifndef WF_DIAG_H
#define WF_DIAG_H

#include "app/app.h"

typedef struct wf_diag_entry {
    char *name;                /* owned */
    char *suffix;              /* owned, "" when none */
    double *ring;              /* [cap] values */
    int32_t cap, count, head;  /* head: oldest value */
    double smoothing;          /* seconds */
    double ema;
    double last_time, last_value;
    bool enabled;
} wf_diag_entry;

typedef struct wf_diag {
    wf_diag_entry *v;
    uint32_t n, cap;
} wf_diag;

/* ---- store.c ---- */
/* The entry of `name`, or -1. */
int32_t wf_diag_find(const weft_world *w, const char *name);
/* Adds an entry (desc checked); its index, or -1 with the error recorded. */
int32_t wf_diag_add(weft_world *w, const char *name, const char *suffix, int32_t history_len,
                    double smoothing, const char *fn);
/* Records a measurement in entry i (time checked by the caller). */
void wf_diag_record(weft_world *w, int32_t i, double time, double value);
/* The entry at index i (valid index). */
wf_diag_entry *wf_diag_entry_at(const weft_world *w, int32_t i);
/* Mean, min and max of entry e's ring (0 when empty). */
void wf_diag_summary(const wf_diag_entry *e, double *mean, double *min, double *max);

/* ---- plugin.c ---- */
weft_status wf_diag_plugin_add(weft_app *a, double log_interval, bool per_system,
                               int32_t history_len);

#endif

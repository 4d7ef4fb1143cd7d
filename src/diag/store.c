/* src/diag/store.c - the world's diagnostics store: entries, rings,
 * moving averages.
 * SPDX-License-Identifier: MIT
 *
 * See diag.h. The store is created with the first diagnostic and freed
 * with the world (diag_fini hook); all memory goes through the world's
 * allocator.
 */
#include "diag/diag.h"

#include <string.h>

#define DIAG_ALIGN _Alignof(double)

static void entry_fini(weft_world *w, wf_diag_entry *e)
{
    wf_strfree(&w->alloc, e->name);
    wf_strfree(&w->alloc, e->suffix);
    wf_free(&w->alloc, e->ring, (size_t)e->cap * sizeof *e->ring, DIAG_ALIGN);
}

static void diag_fini(weft_world *w)
{
    wf_diag *d = w->diag;
    for (uint32_t i = 0; i < d->n; i++) {
        entry_fini(w, &d->v[i]);
    }
    wf_free(&w->alloc, d->v, (size_t)d->cap * sizeof *d->v, DIAG_ALIGN);
    wf_free(&w->alloc, d, sizeof *d, _Alignof(wf_diag));
    w->diag = NULL;
    w->diag_fini = NULL;
}

int32_t wf_diag_find(const weft_world *w, const char *name)
{
    const wf_diag *d = w->diag;
    for (uint32_t i = 0; d && i < d->n; i++) {
        if (strcmp(d->v[i].name, name) == 0) {
            return (int32_t)i;
        }
    }
    return -1;
}

wf_diag_entry *wf_diag_entry_at(const weft_world *w, int32_t i)
{
    return &w->diag->v[i];
}

int32_t wf_diag_add(weft_world *w, const char *name, const char *suffix, int32_t history_len,
                    double smoothing, const char *fn)
{
    if (wf_diag_find(w, name) >= 0) {
        wf_error(w, WEFT_ERR_ALREADY_EXISTS, "%s: a diagnostic named '%s' exists", fn, name);
        return -1;
    }
    if (!w->diag) {
        wf_diag *d = wf_calloc(&w->alloc, sizeof *d, _Alignof(wf_diag));
        if (!d) {
            wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
            return -1;
        }
        w->diag = d;
        w->diag_fini = diag_fini;
    }
    wf_diag *d = w->diag;
    void *v = d->v;
    uint32_t cap = d->cap;
    if (!wf_grow(&w->alloc, &v, &cap, (uint64_t)d->n + 1, sizeof *d->v, DIAG_ALIGN)) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory adding '%s'", fn, name);
        return -1;
    }
    d->v = v;
    d->cap = cap;
    wf_diag_entry e;
    memset(&e, 0, sizeof e);
    e.name = wf_strdup(&w->alloc, name, NULL);
    e.suffix = wf_strdup(&w->alloc, suffix ? suffix : "", NULL);
    e.cap = history_len;
    e.ring = wf_alloc(&w->alloc, (size_t)history_len * sizeof *e.ring, DIAG_ALIGN);
    if (!e.name || !e.suffix || !e.ring) {
        entry_fini(w, &e);
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory adding '%s'", fn, name);
        return -1;
    }
    e.smoothing = smoothing;
    e.enabled = true;
    d->v[d->n] = e;
    return (int32_t)d->n++;
}

void wf_diag_record(weft_world *w, int32_t i, double time, double value)
{
    wf_diag_entry *e = &w->diag->v[i];
    if (!e->enabled) {
        return;
    }
    if (e->count == 0) { /* the count never falls: this is the first */
        e->ema = value;
    } else {
        double alpha = e->smoothing > 0.0 ? (time - e->last_time) / e->smoothing : 1.0;
        alpha = alpha < 0.0 ? 0.0 : (alpha > 1.0 ? 1.0 : alpha);
        e->ema += alpha * (value - e->ema);
    }
    if (e->count < e->cap) {
        e->ring[(e->head + e->count) % e->cap] = value;
        e->count++;
    } else {
        e->ring[e->head] = value;
        e->head = (e->head + 1) % e->cap;
    }
    e->last_time = time;
    e->last_value = value;
}

void wf_diag_summary(const wf_diag_entry *e, double *mean, double *min, double *max)
{
    double sum = 0.0, lo = 0.0, hi = 0.0;
    for (int32_t k = 0; k < e->count; k++) {
        double x = e->ring[(e->head + k) % e->cap];
        sum += x;
        lo = k == 0 || x < lo ? x : lo;
        hi = k == 0 || x > hi ? x : hi;
    }
    *mean = e->count ? sum / e->count : 0.0;
    *min = lo;
    *max = hi;
}

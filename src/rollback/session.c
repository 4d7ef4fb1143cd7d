/* src/rollback/session.c - the rollback session (include/weft_rollback.h,
 * docs/rollback.md): inputs in a ring of frames, prediction, snapshots of
 * the window, rollback and resimulation, confirmed checksums, the sync
 * test. The shape follows GGPO's and ggrs' sessions (save a state per
 * frame, load the first mispredicted one, advance again); the state is a
 * weft snapshot restored in place.
 *
 * Frames: frame f is one weft_app_update that reads the inputs of f.
 * S_f is the world before frame f (after frames 0..f-1): the snapshot ring
 * holds S_f in slot f % (window + 1), S_frame saved after each frame. The
 * checksum of frame f hashes S_{f+1}.
 * SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rollback_internal.h"

#define WRB_DEFAULT_WINDOW 8
#define WRB_DEFAULT_HISTORY 256
#define WRB_MAX_HISTORY (1 << 20)
#define WRB_DIFF_CAP 64

typedef struct snap {
    void *buf;
    size_t cap, len;
    int64_t frame; /* the S_f it holds, -1: none */
} snap;

typedef struct ck {
    int64_t frame; /* -1: empty */
    uint64_t local, remote;
    bool has_local, has_remote;
} ck;

struct weft_rollback_session {
    wrb_alloc al;
    weft_app *app;
    weft_world *w;
    int32_t players, isize;
    uint32_t local;
    int32_t delay, window, sync;
    double dt;
    weft_component inputs_id;
    size_t res_size;
    weft_rollback_desync_fn on_desync;
    void *user;

    int64_t frame;     /* F: frames simulated; the next frame to run */
    int64_t done;      /* frames <= done ran with confirmed inputs (checksummed) */

    /* the input ring: R frames, slot f % R */
    int32_t ring;
    int64_t *in_frame;    /* [R] frame the slot holds, -1: none */
    uint8_t *in_bytes;    /* [R][players][isize] confirmed inputs */
    uint8_t *in_known;    /* [R][players] 1: confirmed */
    uint8_t *used_bytes;  /* [R][players][isize] what the frame last ran with */
    uint64_t *hash_after; /* [R] weft_world_hash after the frame's last run */
    int64_t next_local[WEFT_ROLLBACK_MAX_PLAYERS]; /* next frame a local input fills */
    int64_t contig[WEFT_ROLLBACK_MAX_PLAYERS];     /* frames <= it confirmed */
    uint8_t *last;        /* [players][isize] input at contig (prediction) */

    snap *snaps;          /* [nsnaps = window + 1], S_f in slot f % nsnaps */
    int32_t nsnaps;
    bool current_saved;   /* the ring holds S_frame (saved after each frame) */

    int32_t history;
    ck *cks;              /* [history] slot f % history */
    int64_t desync;       /* first diverging frame, -1: none */

    uint8_t *res;         /* scratch value of the inputs resource */
    void *scratch;        /* scratch snapshot (sync test diff) */
    size_t scratch_cap;
    weft_rollback_diff_entry diff[WRB_DIFF_CAP];

    weft_rollback_stats stats;
    weft_status weft_err;
    char err[512];
};

static weft_rollback_status fail(weft_rollback_session *s, weft_rollback_status st,
                                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return st;
}

static weft_rollback_status fail_weft(weft_rollback_session *s, weft_status ws, const char *what)
{
    s->weft_err = ws;
    if (ws == WEFT_ERR_OUT_OF_MEMORY) {
        return fail(s, WEFT_RB_OUT_OF_MEMORY, "%s: out of memory (%s)", what,
                    weft_last_error(s->w));
    }
    return fail(s, WEFT_RB_WEFT_ERROR, "%s failed: %s: %s", what, weft_status_name(ws),
                weft_last_error(s->w));
}

static void clear_err(weft_rollback_session *s)
{
    s->err[0] = '\0';
    s->weft_err = WEFT_OK;
}

const char *weft_rollback_status_name(weft_rollback_status status)
{
    static const char *const names[] = {
        "WEFT_RB_OK", "WEFT_RB_INVALID_ARG", "WEFT_RB_DUPLICATE", "WEFT_RB_CONFLICT",
        "WEFT_RB_TOO_OLD", "WEFT_RB_TOO_NEW", "WEFT_RB_WINDOW_FULL",
        "WEFT_RB_NEED_LOCAL_INPUT", "WEFT_RB_ALREADY_ADDED", "WEFT_RB_DESYNC",
        "WEFT_RB_WEFT_ERROR", "WEFT_RB_OUT_OF_MEMORY", "WEFT_RB_NOT_FOUND",
    };
    if ((unsigned)status >= sizeof names / sizeof names[0]) {
        return "WEFT_RB_UNKNOWN";
    }
    return names[status];
}

/* ---- the inputs resource ---- */

size_t weft_rollback_inputs_size(int32_t players, int32_t input_size)
{
    if (players < 1 || players > WEFT_ROLLBACK_MAX_PLAYERS || input_size < 1 ||
        input_size > WEFT_ROLLBACK_MAX_INPUT) {
        return 0;
    }
    size_t n = sizeof(weft_rollback_inputs) + (size_t)players * (size_t)input_size;
    return (n + 7) & ~(size_t)7;
}

weft_component weft_rollback_inputs_register(weft_world *world, int32_t players,
                                             int32_t input_size)
{
    size_t size = weft_rollback_inputs_size(players, input_size);
    if (!world || size == 0) {
        return 0;
    }
    weft_component c = weft_component_lookup(world, WEFT_ROLLBACK_INPUTS_NAME);
    if (c) {
        weft_component_info info;
        if (weft_component_info_get(world, c, &info) != WEFT_OK || info.size != size) {
            return 0;
        }
        return c;
    }
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = WEFT_ROLLBACK_INPUTS_NAME;
    d.size = size;
    d.align = 8;
    return weft_component_register(world, &d);
}

const void *weft_rollback_input(const weft_rollback_inputs *inputs, int32_t player,
                                bool *confirmed)
{
    if (confirmed) {
        *confirmed = false;
    }
    if (!inputs || player < 0 || player >= inputs->players || inputs->input_size < 1) {
        return NULL;
    }
    if (confirmed) {
        *confirmed = (inputs->confirmed >> player) & 1u;
    }
    return (const uint8_t *)(inputs + 1) + (size_t)player * (size_t)inputs->input_size;
}

/* ---- rings ---- */

static size_t pslot(const weft_rollback_session *s, int32_t slot, int32_t p)
{
    return ((size_t)slot * (size_t)s->players + (size_t)p) * (size_t)s->isize;
}

/* The input slot of frame f, reset when it held an older frame. Frames
 * before the delay have all-zero, confirmed inputs. */
static int32_t in_slot(weft_rollback_session *s, int64_t f)
{
    int32_t slot = (int32_t)(f % s->ring);
    if (s->in_frame[slot] != f) {
        s->in_frame[slot] = f;
        memset(s->in_bytes + pslot(s, slot, 0), 0, (size_t)s->players * (size_t)s->isize);
        memset(s->used_bytes + pslot(s, slot, 0), 0, (size_t)s->players * (size_t)s->isize);
        memset(s->in_known + (size_t)slot * (size_t)s->players, f < s->delay ? 1 : 0,
               (size_t)s->players);
        s->hash_after[slot] = 0;
    }
    return slot;
}

static bool known(const weft_rollback_session *s, int32_t slot, int32_t p)
{
    return s->in_known[(size_t)slot * (size_t)s->players + (size_t)p] != 0;
}

/* Moves player p's contiguous confirmed frame on as far as it goes. */
static void advance_contig(weft_rollback_session *s, int32_t p)
{
    for (;;) {
        int64_t f = s->contig[p] + 1;
        int32_t slot = (int32_t)(f % s->ring);
        if (s->in_frame[slot] != f || !known(s, slot, p)) {
            return;
        }
        memcpy(s->last + (size_t)p * (size_t)s->isize, s->in_bytes + pslot(s, slot, p),
               (size_t)s->isize);
        s->contig[p] = f;
    }
}

static int64_t min_contig(const weft_rollback_session *s)
{
    int64_t m = INT64_MAX;
    for (int32_t p = 0; p < s->players; p++) {
        if (s->contig[p] < m) {
            m = s->contig[p];
        }
    }
    return m;
}

/* The input player p has for frame f now: confirmed, or predicted (the
 * input of the player's last contiguous confirmed frame). */
static const uint8_t *desired(weft_rollback_session *s, int64_t f, int32_t p, bool *conf)
{
    int32_t slot = in_slot(s, f);
    *conf = known(s, slot, p);
    return *conf ? s->in_bytes + pslot(s, slot, p) : s->last + (size_t)p * (size_t)s->isize;
}

/* ---- snapshots ---- */

static weft_rollback_status save_state(weft_rollback_session *s, int64_t f)
{
    snap *sn = &s->snaps[f % s->nsnaps];
    size_t need = 0;
    weft_status ws = weft_snapshot_write(s->w, NULL, 0, &need);
    if (ws != WEFT_ERR_CAPACITY) {
        return fail_weft(s, ws == WEFT_OK ? WEFT_ERR_INTERNAL : ws, "weft_snapshot_write");
    }
    if (!wrb_reserve(&s->al, &sn->buf, &sn->cap, need)) {
        sn->frame = -1;
        return fail(s, WEFT_RB_OUT_OF_MEMORY, "a snapshot of %zu bytes: out of memory", need);
    }
    ws = weft_snapshot_write(s->w, sn->buf, sn->cap, &sn->len);
    if (ws != WEFT_OK) {
        sn->frame = -1;
        return fail_weft(s, ws, "weft_snapshot_write");
    }
    sn->frame = f;
    return WEFT_RB_OK;
}

static const snap *held(const weft_rollback_session *s, int64_t f)
{
    if (f < 0) {
        return NULL;
    }
    const snap *sn = &s->snaps[f % s->nsnaps];
    return sn->frame == f ? sn : NULL;
}

static weft_rollback_status load_state(weft_rollback_session *s, int64_t f)
{
    const snap *sn = held(s, f);
    if (!sn) {
        return fail(s, WEFT_RB_NOT_FOUND, "no snapshot of frame %lld", (long long)f);
    }
    weft_status ws = weft_snapshot_restore(s->w, sn->buf, sn->len);
    if (ws != WEFT_OK) {
        return fail_weft(s, ws, "weft_snapshot_restore");
    }
    return WEFT_RB_OK;
}

/* ---- one frame ---- */

/* Runs frame f from the state S_f the world holds: the inputs resource
 * carries f's inputs during the update and is zeroed after it. */
static weft_rollback_status run_frame(weft_rollback_session *s, int64_t f)
{
    int32_t slot = in_slot(s, f);
    weft_rollback_inputs *hdr = (weft_rollback_inputs *)(void *)s->res;
    memset(s->res, 0, s->res_size);
    hdr->frame = f;
    hdr->players = s->players;
    hdr->input_size = s->isize;
    uint8_t *dst = s->res + sizeof *hdr;
    for (int32_t p = 0; p < s->players; p++) {
        bool conf;
        const uint8_t *in = desired(s, f, p, &conf);
        memcpy(dst + (size_t)p * (size_t)s->isize, in, (size_t)s->isize);
        memcpy(s->used_bytes + pslot(s, slot, p), in, (size_t)s->isize);
        if (conf) {
            hdr->confirmed |= 1u << p;
        } else {
            s->stats.predicted_inputs++;
        }
    }
    weft_status ws = weft_resource_insert(s->w, s->inputs_id, s->res, s->res_size);
    if (ws != WEFT_OK) {
        return fail_weft(s, ws, "inserting the inputs resource");
    }
    ws = weft_app_update(s->app, s->dt);
    if (ws != WEFT_OK) {
        return fail_weft(s, ws, "weft_app_update");
    }
    void *v = weft_resource_get_mut(s->w, s->inputs_id, s->res_size);
    if (!v) {
        return fail_weft(s, weft_last_status(s->w), "the inputs resource after the update");
    }
    memset(v, 0, s->res_size);
    s->hash_after[slot] = weft_world_hash(s->w);
    s->current_saved = false;
    return WEFT_RB_OK;
}

/* The earliest simulated frame after `done` whose inputs differ from what
 * it ran with, or -1. */
static int64_t first_mismatch(weft_rollback_session *s)
{
    for (int64_t f = s->done + 1; f < s->frame; f++) {
        int32_t slot = in_slot(s, f);
        for (int32_t p = 0; p < s->players; p++) {
            bool conf;
            const uint8_t *in = desired(s, f, p, &conf);
            if (memcmp(in, s->used_bytes + pslot(s, slot, p), (size_t)s->isize) != 0) {
                return f;
            }
        }
    }
    return -1;
}

/* ---- checksums ---- */

static void report(weft_rollback_session *s, int64_t f, uint64_t local, uint64_t remote,
                   const weft_rollback_diff_entry *diff, int32_t count, int32_t total)
{
    if (s->desync < 0 || f < s->desync) {
        s->desync = f;
    }
    if (s->on_desync) {
        weft_rollback_desync d = {f, local, remote, diff, count, total};
        s->on_desync(s, &d, s->user);
    }
}

static ck *ck_slot(weft_rollback_session *s, int64_t f)
{
    ck *c = &s->cks[f % s->history];
    if (c->frame != f) {
        memset(c, 0, sizeof *c);
        c->frame = f;
    }
    return c;
}

/* Compares once both sides are known; true on a mismatch. */
static bool ck_compare(weft_rollback_session *s, ck *c)
{
    if (!c->has_local || !c->has_remote || c->local == c->remote) {
        return false;
    }
    report(s, c->frame, c->local, c->remote, NULL, 0, 0);
    return true;
}

static void record_confirmed(weft_rollback_session *s)
{
    int64_t upto = min_contig(s);
    if (upto > s->frame - 1) {
        upto = s->frame - 1;
    }
    for (int64_t f = s->done + 1; f <= upto; f++) {
        ck *c = ck_slot(s, f);
        c->local = s->hash_after[in_slot(s, f)];
        c->has_local = true;
        ck_compare(s, c);
    }
    if (upto > s->done) {
        s->done = upto;
    }
    s->stats.confirmed_frame = s->done;
}

/* ---- the sync test ---- */

static weft_rollback_status sync_mismatch(weft_rollback_session *s, int64_t f, uint64_t first,
                                          uint64_t again)
{
    /* A = the first run's S_{f+1} (in the ring), B = the resimulated world */
    const snap *a = held(s, f + 1);
    int32_t total = 0;
    weft_status ws = WEFT_OK;
    size_t need = 0;
    if (a) {
        ws = weft_snapshot_write(s->w, NULL, 0, &need);
        if (ws == WEFT_ERR_CAPACITY && wrb_reserve(&s->al, &s->scratch, &s->scratch_cap, need)) {
            ws = weft_snapshot_write(s->w, s->scratch, s->scratch_cap, &need);
            if (ws == WEFT_OK) {
                ws = wrb_diff(s->w, &s->al, a->buf, a->len, s->scratch, need, s->diff,
                              WRB_DIFF_CAP, &total);
            }
        } else if (ws == WEFT_ERR_CAPACITY) {
            ws = WEFT_ERR_OUT_OF_MEMORY;
        }
    }
    int32_t shown = total < WRB_DIFF_CAP ? total : WRB_DIFF_CAP;
    report(s, f, first, again, s->diff, ws == WEFT_OK ? shown : 0, ws == WEFT_OK ? total : 0);
    /* continue from the first run's state */
    weft_rollback_status st = load_state(s, s->frame);
    if (st != WEFT_RB_OK) {
        return st;
    }
    s->current_saved = true;
    return fail(s, WEFT_RB_DESYNC,
                "sync test: frame %lld resimulated to checksum %016llx, the first run had "
                "%016llx (%d differences)",
                (long long)f, (unsigned long long)again, (unsigned long long)first, (int)total);
}

static weft_rollback_status sync_test(weft_rollback_session *s)
{
    int64_t from = s->frame - s->sync;
    if (from < 0) {
        return WEFT_RB_OK;
    }
    /* the first run's current state S_frame is in the ring (advance saved it) */
    weft_rollback_status st;
    uint64_t first[WEFT_ROLLBACK_MAX_WINDOW];
    for (int64_t f = from; f < s->frame; f++) {
        first[f - from] = s->hash_after[in_slot(s, f)];
    }
    st = load_state(s, from);
    if (st != WEFT_RB_OK) {
        return st;
    }
    for (int64_t f = from; f < s->frame; f++) {
        st = run_frame(s, f);
        if (st != WEFT_RB_OK) {
            return st;
        }
        s->stats.sync_checks++;
        uint64_t again = s->hash_after[in_slot(s, f)];
        if (again != first[f - from]) {
            s->hash_after[in_slot(s, f)] = first[f - from];
            return sync_mismatch(s, f, first[f - from], again);
        }
    }
    s->current_saved = true; /* the world is S_frame again, as saved */
    return WEFT_RB_OK;
}

/* ---- the public calls ---- */

static void session_free(weft_rollback_session *s)
{
    const wrb_alloc al = s->al;
    size_t r = (size_t)s->ring, pl = (size_t)s->players, is = (size_t)s->isize;
    wrb_free(&al, s->in_frame, r * sizeof *s->in_frame);
    wrb_free(&al, s->in_bytes, r * pl * is);
    wrb_free(&al, s->in_known, r * pl);
    wrb_free(&al, s->used_bytes, r * pl * is);
    wrb_free(&al, s->hash_after, r * sizeof *s->hash_after);
    wrb_free(&al, s->last, pl * is);
    if (s->snaps) {
        for (int32_t i = 0; i < s->nsnaps; i++) {
            wrb_free(&al, s->snaps[i].buf, s->snaps[i].cap);
        }
    }
    wrb_free(&al, s->snaps, (size_t)s->nsnaps * sizeof *s->snaps);
    wrb_free(&al, s->cks, (size_t)s->history * sizeof *s->cks);
    wrb_free(&al, s->res, s->res_size);
    wrb_free(&al, s->scratch, s->scratch_cap);
    wrb_free(&al, s, sizeof *s);
}

weft_rollback_session *weft_rollback_create(const weft_rollback_desc *d,
                                            weft_rollback_status *out_status)
{
    weft_rollback_status dummy;
    weft_rollback_status *st = out_status ? out_status : &dummy;
    *st = WEFT_RB_INVALID_ARG;
    if (!d || d->_start_canary || d->_end_canary || !d->app || d->players < 1 ||
        d->players > WEFT_ROLLBACK_MAX_PLAYERS || d->input_size < 1 ||
        d->input_size > WEFT_ROLLBACK_MAX_INPUT || d->input_delay < 0 ||
        d->input_delay > WEFT_ROLLBACK_MAX_DELAY || d->max_rollback < 0 ||
        d->max_rollback > WEFT_ROLLBACK_MAX_WINDOW || d->sync_test < 0 ||
        d->checksum_history < 0 || d->checksum_history > WRB_MAX_HISTORY ||
        !(d->frame_dt >= 0.0) || d->frame_dt > 1e9 ||
        (d->players < 32 && (d->local_players >> d->players) != 0) ||
        (!d->allocator.alloc != !d->allocator.free)) {
        return NULL;
    }
    int32_t window = d->max_rollback ? d->max_rollback : WRB_DEFAULT_WINDOW;
    if (d->sync_test > 0) {
        if (d->max_rollback == 0) {
            window = d->sync_test + 1;
        }
        if (d->sync_test >= window || window > WEFT_ROLLBACK_MAX_WINDOW) {
            return NULL;
        }
    }
    weft_world *w = weft_app_world(d->app);
    if (!w) {
        return NULL;
    }
    wrb_alloc al;
    wrb_alloc_init(&al, &d->allocator);
    weft_rollback_session *s = wrb_calloc(&al, 1, sizeof *s);
    if (!s) {
        *st = WEFT_RB_OUT_OF_MEMORY;
        return NULL;
    }
    s->al = al;
    s->app = d->app;
    s->w = w;
    s->players = d->players;
    s->isize = d->input_size;
    s->sync = d->sync_test;
    s->local = d->sync_test > 0 ? (d->players == 32 ? UINT32_MAX : (1u << d->players) - 1u)
                                : d->local_players;
    s->delay = d->input_delay;
    s->window = window;
    s->nsnaps = window + 1;
    s->on_desync = d->on_desync;
    s->user = d->user;
    s->history = d->checksum_history ? d->checksum_history : WRB_DEFAULT_HISTORY;
    s->ring = 2 * window + 2 * s->delay + 4;
    s->done = -1;
    s->desync = -1;
    s->stats.confirmed_frame = -1;
    size_t r = (size_t)s->ring, pl = (size_t)s->players, is = (size_t)s->isize;
    s->res_size = weft_rollback_inputs_size(s->players, s->isize);
    s->in_frame = wrb_malloc(&al, r * sizeof *s->in_frame);
    s->in_bytes = wrb_calloc(&al, r * pl, is);
    s->in_known = wrb_calloc(&al, r, pl);
    s->used_bytes = wrb_calloc(&al, r * pl, is);
    s->hash_after = wrb_calloc(&al, r, sizeof *s->hash_after);
    s->last = wrb_calloc(&al, pl, is);
    s->snaps = wrb_calloc(&al, (size_t)s->nsnaps, sizeof *s->snaps);
    s->cks = wrb_calloc(&al, (size_t)s->history, sizeof *s->cks);
    s->res = wrb_calloc(&al, 1, s->res_size);
    if (!s->in_frame || !s->in_bytes || !s->in_known || !s->used_bytes || !s->hash_after ||
        !s->last || !s->snaps || !s->cks || !s->res) {
        session_free(s);
        *st = WEFT_RB_OUT_OF_MEMORY;
        return NULL;
    }
    for (size_t i = 0; i < r; i++) {
        s->in_frame[i] = -1;
    }
    for (int32_t i = 0; i < s->nsnaps; i++) {
        s->snaps[i].frame = -1;
    }
    for (int32_t i = 0; i < s->history; i++) {
        s->cks[i].frame = -1;
    }
    for (int32_t p = 0; p < s->players; p++) {
        s->contig[p] = s->delay - 1;
        s->next_local[p] = s->delay;
    }
    s->dt = d->frame_dt > 0.0 ? d->frame_dt : weft_app_fixed_step(d->app);
    weft_status ws = weft_app_setup(d->app);
    if (ws == WEFT_OK) {
        s->inputs_id = weft_rollback_inputs_register(w, s->players, s->isize);
        ws = s->inputs_id ? weft_resource_insert(w, s->inputs_id, s->res, s->res_size)
                          : (weft_last_status(w) != WEFT_OK ? weft_last_status(w)
                                                            : WEFT_ERR_SIZE_MISMATCH);
    }
    if (ws != WEFT_OK) {
        session_free(s);
        *st = ws == WEFT_ERR_OUT_OF_MEMORY ? WEFT_RB_OUT_OF_MEMORY : WEFT_RB_WEFT_ERROR;
        return NULL;
    }
    *st = WEFT_RB_OK;
    return s;
}

void weft_rollback_destroy(weft_rollback_session *s)
{
    if (s) {
        session_free(s);
    }
}

static bool bad_player(const weft_rollback_session *s, int32_t player)
{
    return player < 0 || player >= s->players;
}

weft_rollback_status weft_rollback_add_local_input(weft_rollback_session *s, int32_t player,
                                                   const void *input, size_t size,
                                                   int64_t *out_frame)
{
    if (out_frame) {
        *out_frame = -1;
    }
    if (!s) {
        return WEFT_RB_INVALID_ARG;
    }
    clear_err(s);
    if (!input || bad_player(s, player) || !((s->local >> player) & 1u)) {
        return fail(s, WEFT_RB_INVALID_ARG, "local input: %s",
                    !input ? "input is NULL"
                           : bad_player(s, player) ? "no such player" : "the player is not local");
    }
    if (size != (size_t)s->isize) {
        return fail(s, WEFT_RB_INVALID_ARG, "local input: %zu bytes, the session's inputs have %d",
                    size, (int)s->isize);
    }
    int64_t f = s->frame + s->delay;
    if (s->next_local[player] > f) {
        return fail(s, WEFT_RB_ALREADY_ADDED,
                    "local input: player %d already has its input for frame %lld", (int)player,
                    (long long)f);
    }
    int32_t slot = in_slot(s, f);
    memcpy(s->in_bytes + pslot(s, slot, player), input, size);
    s->in_known[(size_t)slot * (size_t)s->players + (size_t)player] = 1;
    s->next_local[player] = f + 1;
    advance_contig(s, player);
    if (out_frame) {
        *out_frame = f;
    }
    return WEFT_RB_OK;
}

weft_rollback_status weft_rollback_add_remote_input(weft_rollback_session *s, int32_t player,
                                                    int64_t frame, const void *input,
                                                    size_t size)
{
    if (!s) {
        return WEFT_RB_INVALID_ARG;
    }
    clear_err(s);
    if (!input || bad_player(s, player) || ((s->local >> player) & 1u) || frame < 0 ||
        size != (size_t)s->isize) {
        return fail(s, WEFT_RB_INVALID_ARG, "remote input: %s",
                    !input                     ? "input is NULL"
                    : bad_player(s, player)    ? "no such player"
                    : (s->local >> player) & 1u ? "the player is local"
                    : frame < 0                ? "negative frame"
                                               : "size differs from the session's input size");
    }
    if (frame <= s->contig[player]) {
        /* confirmed before: compare while the ring still holds it (frames
         * before the delay are zeros) */
        int32_t slot = (int32_t)(frame % s->ring);
        bool differs = false;
        if (frame < s->delay) {
            for (size_t i = 0; i < size; i++) {
                differs = differs || ((const uint8_t *)input)[i] != 0;
            }
        } else if (s->in_frame[slot] == frame) {
            differs = memcmp(s->in_bytes + pslot(s, slot, player), input, size) != 0;
        }
        if (differs) {
            return fail(s, WEFT_RB_CONFLICT,
                        "remote input: player %d's input for frame %lld was confirmed with "
                        "other bytes",
                        (int)player, (long long)frame);
        }
        return WEFT_RB_DUPLICATE;
    }
    int64_t lowest = s->frame - s->window - 1;
    int64_t highest = lowest + s->ring - 1;
    if (frame > highest) {
        return fail(s, WEFT_RB_TOO_NEW,
                    "remote input: frame %lld is beyond the window (current frame %lld, "
                    "at most %lld)",
                    (long long)frame, (long long)s->frame, (long long)highest);
    }
    if (frame < lowest) {
        return fail(s, WEFT_RB_TOO_OLD, "remote input: frame %lld left the window",
                    (long long)frame);
    }
    int32_t slot = in_slot(s, frame);
    if (known(s, slot, player)) {
        if (memcmp(s->in_bytes + pslot(s, slot, player), input, size) != 0) {
            return fail(s, WEFT_RB_CONFLICT,
                        "remote input: player %d's input for frame %lld was confirmed with "
                        "other bytes",
                        (int)player, (long long)frame);
        }
        return WEFT_RB_DUPLICATE;
    }
    memcpy(s->in_bytes + pslot(s, slot, player), input, size);
    s->in_known[(size_t)slot * (size_t)s->players + (size_t)player] = 1;
    advance_contig(s, player);
    return WEFT_RB_OK;
}

weft_rollback_status weft_rollback_advance(weft_rollback_session *s)
{
    if (!s) {
        return WEFT_RB_INVALID_ARG;
    }
    clear_err(s);
    for (int32_t p = 0; p < s->players; p++) {
        if (((s->local >> p) & 1u) && s->next_local[p] <= s->frame) {
            return fail(s, WEFT_RB_NEED_LOCAL_INPUT,
                        "advance: local player %d has no input for frame %lld "
                        "(weft_rollback_add_local_input)",
                        (int)p, (long long)s->frame);
        }
    }
    int64_t c = min_contig(s);
    if (s->frame - c > s->window) {
        return fail(s, WEFT_RB_WINDOW_FULL,
                    "advance: frames %lld..%lld would be unconfirmed, more than the window of "
                    "%d: wait for remote inputs",
                    (long long)(c + 1), (long long)s->frame, (int)s->window);
    }
    weft_rollback_status st;
    int64_t r = first_mismatch(s);
    if (r >= 0) {
        st = load_state(s, r);
        if (st != WEFT_RB_OK) {
            return st;
        }
        s->stats.rollbacks++;
        int32_t depth = (int32_t)(s->frame - r);
        if (depth > s->stats.max_rollback_depth) {
            s->stats.max_rollback_depth = depth;
        }
        for (int64_t f = r; f < s->frame; f++) {
            if (f > r) {
                st = save_state(s, f);
                if (st != WEFT_RB_OK) {
                    return st;
                }
            }
            st = run_frame(s, f);
            if (st != WEFT_RB_OK) {
                return st;
            }
            s->stats.frames_resimulated++;
        }
    }
    if (!s->current_saved) {
        st = save_state(s, s->frame);
        if (st != WEFT_RB_OK) {
            return st;
        }
    }
    st = run_frame(s, s->frame);
    if (st != WEFT_RB_OK) {
        return st;
    }
    s->frame++;
    s->stats.frame = s->frame;
    /* S_frame now, so that the state after every simulated frame is held
     * (weft_rollback_frame_snapshot, the sync test) */
    st = save_state(s, s->frame);
    if (st != WEFT_RB_OK) {
        return st;
    }
    s->current_saved = true;
    record_confirmed(s);
    if (s->sync > 0) {
        return sync_test(s);
    }
    return WEFT_RB_OK;
}

weft_rollback_status weft_rollback_checksum(const weft_rollback_session *s, int64_t frame,
                                            uint64_t *out)
{
    if (!s || !out || frame < 0) {
        return WEFT_RB_INVALID_ARG;
    }
    *out = 0;
    if (frame > s->done) {
        return WEFT_RB_NOT_FOUND;
    }
    const ck *c = &s->cks[frame % s->history];
    if (c->frame != frame || !c->has_local) {
        return WEFT_RB_TOO_OLD;
    }
    *out = c->local;
    return WEFT_RB_OK;
}

weft_rollback_status weft_rollback_add_remote_checksum(weft_rollback_session *s, int64_t frame,
                                                       uint64_t checksum)
{
    if (!s) {
        return WEFT_RB_INVALID_ARG;
    }
    clear_err(s);
    if (frame < 0) {
        return fail(s, WEFT_RB_INVALID_ARG, "remote checksum: negative frame");
    }
    if (frame <= s->done - s->history) {
        return fail(s, WEFT_RB_TOO_OLD,
                    "remote checksum: frame %lld left the checksum history (%d frames)",
                    (long long)frame, (int)s->history);
    }
    if (frame > s->done + s->history) {
        return fail(s, WEFT_RB_TOO_NEW, "remote checksum: frame %lld is too far ahead",
                    (long long)frame);
    }
    ck *c = &s->cks[frame % s->history];
    if (c->frame != frame) {
        if (c->frame > s->done && c->has_remote) {
            /* a pending remote checksum of a frame not confirmed yet */
            return fail(s, WEFT_RB_TOO_NEW, "remote checksum: frame %lld is too far ahead",
                        (long long)frame);
        }
        c = ck_slot(s, frame);
    }
    if (c->has_remote && c->remote == checksum) {
        return WEFT_RB_DUPLICATE;
    }
    c->remote = checksum;
    c->has_remote = true;
    if (ck_compare(s, c)) {
        return fail(s, WEFT_RB_DESYNC,
                    "desync at frame %lld: local checksum %016llx, remote %016llx",
                    (long long)frame, (unsigned long long)c->local,
                    (unsigned long long)checksum);
    }
    return WEFT_RB_OK;
}

bool weft_rollback_desync_frame(const weft_rollback_session *s, int64_t *out_frame)
{
    if (out_frame) {
        *out_frame = -1;
    }
    if (!s || s->desync < 0) {
        return false;
    }
    if (out_frame) {
        *out_frame = s->desync;
    }
    return true;
}

weft_rollback_status weft_rollback_frame_snapshot(const weft_rollback_session *s, int64_t frame,
                                                  const void **out_data, size_t *out_len)
{
    if (out_data) {
        *out_data = NULL;
    }
    if (out_len) {
        *out_len = 0;
    }
    if (!s || !out_data || !out_len || frame < 0) {
        return WEFT_RB_INVALID_ARG;
    }
    const snap *sn = frame + 1 <= s->frame ? held(s, frame + 1) : NULL;
    if (!sn) {
        return WEFT_RB_NOT_FOUND;
    }
    *out_data = sn->buf;
    *out_len = sn->len;
    return WEFT_RB_OK;
}

weft_rollback_status weft_rollback_get_stats(const weft_rollback_session *s,
                                             weft_rollback_stats *out)
{
    if (!s || !out) {
        return WEFT_RB_INVALID_ARG;
    }
    *out = s->stats;
    return WEFT_RB_OK;
}

weft_component weft_rollback_inputs_id(const weft_rollback_session *s)
{
    return s ? s->inputs_id : 0;
}

const char *weft_rollback_last_error(const weft_rollback_session *s)
{
    return s ? s->err : "no session (NULL)";
}

weft_status weft_rollback_weft_status(const weft_rollback_session *s)
{
    return s ? s->weft_err : WEFT_ERR_INVALID_HANDLE;
}

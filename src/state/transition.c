/* src/state/transition.c - the transition step: queued values, derived
 * states, transition messages, OnExit/OnTransition/OnEnter and
 * state-scoped despawns.
 * SPDX-License-Identifier: MIT
 *
 * One step has four passes over the state table (ids ascending are root
 * to leaf, see state.h):
 *   1. apply, root to leaf: each state's new value is decided from its
 *      queued NextState and, for sub and computed states, from what its
 *      sources did earlier in this same pass; the State resources are
 *      written at once and one message per changed state is written;
 *   2. exit, leaf to root: OnExit(exited), then the DespawnOnExit sweep;
 *   3. transition, root to leaf: OnTransition(exited, entered);
 *   4. enter, root to leaf: the DespawnOnEnter sweep, then OnEnter(entered).
 * Deciding everything before running any schedule means every OnExit,
 * OnTransition and OnEnter system of the step sees the final values of
 * every state, and a value queued by one of them waits for the next step
 * (as in Bevy, where the exit/enter schedules run after the dependent
 * transitions of the whole tree).
 *
 * The sweeps are driven by the state's messages, not by pass 1 directly:
 * before pass 2 each state reads its message stream through its own
 * cursor and keeps the last message, so a transition message written by
 * hand triggers the same cleanup. Tables are scanned in creation order and
 * rows in order, and the despawns are made after the scan, so the result
 * does not depend on the thread count.
 */
#include "state/state.h"
#include "core/guard.h"

#include "world/messages.h"

#include <string.h>

typedef struct step_ctx {
    weft_world *w;
    weft_status first;         /* first failure of the step */
} step_ctx;

static void step_fail(step_ctx *x, weft_status st)
{
    if (st != WEFT_OK && x->first == WEFT_OK) {
        x->first = st;
    }
}

/* The cached value follows the State resource, which a snapshot restore
 * (or a user removing it) may have changed since the last step. */
static void sync_from_world(weft_world *w, wf_state_type *t)
{
    const wf_type_info *ti = wf_registry_get(&w->registry, t->res_state);
    t->present = ti->res_present;
    t->cur = WEFT_STATE_VALUE_NONE;
    if (t->present) {
        memcpy(&t->cur, ti->res_value, sizeof t->cur);
    }
}

/* Takes t's queued value (clearing it): true when one was queued. */
static bool take_next(weft_world *w, wf_state_type *t, uint32_t *out)
{
    wf_type_info *ti = wf_registry_get(&w->registry, t->res_next);
    if (!ti || !ti->res_present) {
        return false;
    }
    weft_next_state next;
    memcpy(&next, ti->res_value, sizeof next);
    if (!next.pending) {
        return false;
    }
    next.pending = 0;
    memcpy(ti->res_value, &next, sizeof next);
    *out = next.value;
    return true;
}

/* Moves t to `v` (NONE: t stops existing) and records the transition.
 * `explicit_set`: a queued value, which is a transition even when it
 * equals the current one. */
static void state_apply(step_ctx *x, wf_state_type *t, uint32_t v, bool explicit_set)
{
    weft_world *w = x->w;
    wf_type_info *ti = wf_registry_get(&w->registry, t->res_state);
    uint32_t old = t->present ? t->cur : WEFT_STATE_VALUE_NONE;
    if (v == old && (!explicit_set || v == WEFT_STATE_VALUE_NONE)) {
        return;
    }
    if (v == WEFT_STATE_VALUE_NONE) {
        wf_resource_remove(w, ti);
    } else if (!ti->res_present) {
        weft_status st = wf_resource_insert(w, ti, &v);
        if (st != WEFT_OK) {
            step_fail(x, st); /* t stays absent; no transition */
            return;
        }
    } else if (v != old) {
        memcpy(ti->res_value, &v, sizeof v);
        ti->res_ticks.changed = w->change_tick;
    }
    t->present = v != WEFT_STATE_VALUE_NONE;
    t->cur = v;
    t->ev.any = true;
    t->ev.same = v == old;
    t->ev.exited = old;
    t->ev.entered = v;
}

static void apply_default(step_ctx *x, wf_state_type *t)
{
    uint32_t next;
    bool queued = take_next(x->w, t, &next);
    if (queued && wf_state_value_index(t, next) < 0) {
        step_fail(x, wf_error(x->w, WEFT_ERR_NOT_FOUND,
                              "weft_state_transition: %u queued for state '%s' is not one of "
                              "its values (dropped)", next, t->name));
        queued = false;
    }
    if (t->dirty && !t->present) {
        /* the first step enters the initial value, or the queued one; a
         * world restored from a snapshot already has its State and enters
         * nothing */
        state_apply(x, t, queued ? next : t->initial, false);
        return;
    }
    if (queued && t->present) {
        state_apply(x, t, next, true);
    }
    /* a freely mutable state without its State resource (removed by
     * hand) has nothing to leave: the queued value is dropped */
}

/* Freely mutable and sub states always have a NextState resource from
 * their first step on (systems write it in place); false when it could
 * not be inserted (recorded). */
static bool ensure_next(step_ctx *x, wf_state_type *t)
{
    wf_type_info *ti = wf_registry_get(&x->w->registry, t->res_next);
    if (ti->res_present) {
        return true;
    }
    weft_next_state none = {0, 0};
    weft_status st = wf_resource_insert(x->w, ti, &none);
    step_fail(x, st);
    return st == WEFT_OK;
}

static void apply_sub(step_ctx *x, wf_state_type *t)
{
    const wf_state_type *src = wf_state_get(x->w, t->source);
    uint32_t next;
    bool queued = take_next(x->w, t, &next);
    if (queued && wf_state_value_index(t, next) < 0) {
        step_fail(x, wf_error(x->w, WEFT_ERR_NOT_FOUND,
                              "weft_state_transition: %u queued for state '%s' is not one of "
                              "its values (dropped)", next, t->name));
        queued = false;
    }
    bool source_changed = src->ev.any || t->dirty;
    if (!source_changed && !queued) {
        return;
    }
    uint32_t base;
    if (source_changed) {
        bool should = src->present && src->cur == t->source_value;
        base = should ? t->initial : WEFT_STATE_VALUE_NONE;
    } else {
        base = t->present ? t->cur : WEFT_STATE_VALUE_NONE;
    }
    uint32_t v = WEFT_STATE_VALUE_NONE;
    if (base != WEFT_STATE_VALUE_NONE) {
        v = queued ? next : (t->present ? t->cur : base);
    }
    state_apply(x, t, v, queued && v != WEFT_STATE_VALUE_NONE);
}

static void apply_computed(step_ctx *x, wf_state_type *t)
{
    bool source_changed = t->dirty;
    uint32_t vals[WEFT_MAX_STATE_SOURCES];
    for (int32_t i = 0; i < t->nsources; i++) {
        const wf_state_type *src = wf_state_get(x->w, t->sources[i]);
        source_changed |= src->ev.any;
        vals[i] = src->present ? src->cur : WEFT_STATE_VALUE_NONE;
    }
    if (!source_changed) {
        return;
    }
    uint32_t v;
    WF_CALLBACK(x->w, v = t->compute(vals, t->nsources, t->user));
    if (v != WEFT_STATE_VALUE_NONE && wf_state_value_index(t, v) < 0) {
        step_fail(x, wf_error(x->w, WEFT_ERR_CALLBACK,
                              "weft_state_transition: the compute callback of state '%s' "
                              "returned %u, which is not one of its values (the state "
                              "stays)", t->name, v));
        return;
    }
    state_apply(x, t, v, false);
}

/* ---- schedules and sweeps ---- */

static void run_owned(step_ctx *x, wf_state_type *t, uint8_t kind, uint32_t from,
                      uint32_t to)
{
    weft_schedule *s = wf_state_schedule_find(t, kind, from, to);
    if (s) {
        step_fail(x, wf_schedule_run(x->w, s, 0.0));
    }
}

/* Does a transition (exited -> entered) run exit/enter work at all? */
static bool ev_moves(const wf_state_ev *ev)
{
    return ev->any && (ev->exited != ev->entered || ev->same);
}

/* Despawns every entity whose component c (a uint32_t) equals value. */
static void sweep(step_ctx *x, weft_component c, uint32_t value)
{
    weft_world *w = x->w;
    weft_entity *list = NULL;
    uint32_t n = 0;
    uint32_t cap = 0;
    for (uint32_t i = 0; i < w->graph.table_count; i++) {
        const wf_table *tb = w->graph.tables[i];
        const wf_column *col = wf_table_column(tb, c);
        if (!col || !tb->count) {
            continue;
        }
        for (uint32_t r = 0; r < tb->count; r++) {
            uint32_t v;
            memcpy(&v, col->data + (size_t)r * col->size, sizeof v);
            if (v != value) {
                continue;
            }
            if (!wf_grow(&w->alloc, (void **)&list, &cap, (uint64_t)n + 1, sizeof *list,
                         _Alignof(weft_entity))) {
                step_fail(x, wf_error(w, WEFT_ERR_OUT_OF_MEMORY,
                                      "weft_state_transition: out of memory collecting "
                                      "entities of '%s'", wf_component_name(w, c)));
                goto done;
            }
            list[n++] = tb->entities[r];
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        /* an earlier despawn may have taken this one with it (linked
         * relationships): only live entities are despawned */
        wf_record *rec = wf_entity_live(w, list[i]);
        if (rec) {
            step_fail(x, wf_commit_despawn(w, list[i], rec));
        }
    }
    if (w->cmds.count || w->events.has_dead) {
        wf_world_settle(w); /* what despawn hooks and observers queued */
    }
done:
    if (list) {
        wf_free(&w->alloc, list, (size_t)cap * sizeof *list, _Alignof(weft_entity));
    }
}

/* The last transition message of t since the previous step (the sweeps'
 * input); out->any is false when there is none. */
static void read_last(weft_world *w, wf_state_type *t, wf_state_ev *out)
{
    memset(out, 0, sizeof *out);
    const wf_msg_stream *s = wf_messages_type(w, t->msg);
    const weft_state_transition_event *m;
    while ((m = wf_stream_read(s, &t->cursor)) != NULL) {
        out->any = true;
        out->exited = m->exited;
        out->entered = m->entered;
        out->same = m->same != 0;
    }
}

weft_status wf_state_transition(weft_world *w)
{
    wf_states *st = w->states;
    if (!st || st->count == 0) {
        return WEFT_OK;
    }
    if (st->in_transition) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "weft_state_transition: a transition step "
                        "is already running (called from an OnExit, OnTransition or OnEnter "
                        "system?)");
    }
    if (w->iter_depth) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "weft_state_transition: not allowed while a "
                        "query iteration, hook or observer is open");
    }
    step_ctx x = {w, WEFT_OK};
    st->in_transition = true;
    w->busy++; /* schedules and callbacks below may not destroy the world */
    uint32_t n = st->count;
    /* The sweeps read what was written since the previous step. A cursor
     * outside the retained ids means the stream was replaced (a snapshot
     * restore) or the reader fell behind: it restarts at the end, so no
     * earlier transition is swept twice and none of this step's is lost. */
    for (uint32_t i = 0; i < n; i++) {
        wf_state_type *t = st->types[i];
        const wf_msg_stream *s = wf_messages_type(w, t->msg);
        uint64_t end = s->b.first + s->b.count;
        if (t->cursor.next < s->a.first || t->cursor.next > end) {
            t->cursor.next = end;
        }
    }
    /* 1. apply, root to leaf */
    for (uint32_t i = 0; i < n; i++) {
        wf_state_type *t = st->types[i];
        memset(&t->ev, 0, sizeof t->ev);
        sync_from_world(w, t);
        bool ok = true;
        switch (t->kind) {
        case WEFT_STATE_KIND_SUB:
            apply_sub(&x, t);
            ok = ensure_next(&x, t);
            break;
        case WEFT_STATE_KIND_COMPUTED:
            apply_computed(&x, t);
            break;
        default:
            apply_default(&x, t);
            /* an initial enter that ran out of memory is tried again */
            ok = ensure_next(&x, t) && t->present;
            break;
        }
        if (ok) {
            t->dirty = false; /* else the next step tries again */
        }
        if (t->ev.any) {
            weft_state_transition_event m = {t->id, t->ev.exited, t->ev.entered,
                                             t->ev.same ? 1u : 0u};
            if (!wf_stream_write(&w->alloc, wf_messages_type(w, t->msg), &m)) {
                step_fail(&x, wf_error(w, WEFT_ERR_OUT_OF_MEMORY,
                                       "weft_state_transition: out of memory writing the "
                                       "transition message of '%s'", t->name));
            }
        }
    }
    /* the sweeps' input: the last message of each state */
    for (uint32_t i = 0; i < n; i++) {
        read_last(w, st->types[i], &st->types[i]->swept);
    }
    /* 2. exit, leaf to root */
    for (uint32_t i = n; i-- > 0;) {
        wf_state_type *t = st->types[i];
        if (ev_moves(&t->ev) && t->ev.exited != WEFT_STATE_VALUE_NONE) {
            run_owned(&x, t, WF_STATE_EXIT, t->ev.exited, 0);
        }
        if (ev_moves(&t->swept) && t->swept.exited != WEFT_STATE_VALUE_NONE) {
            sweep(&x, t->on_exit, t->swept.exited);
        }
    }
    /* 3. transition, root to leaf */
    for (uint32_t i = 0; i < n; i++) {
        wf_state_type *t = st->types[i];
        if (ev_moves(&t->ev) && t->ev.exited != WEFT_STATE_VALUE_NONE &&
            t->ev.entered != WEFT_STATE_VALUE_NONE) {
            run_owned(&x, t, WF_STATE_TRANS, t->ev.exited, t->ev.entered);
        }
    }
    /* 4. enter, root to leaf */
    for (uint32_t i = 0; i < n; i++) {
        wf_state_type *t = st->types[i];
        if (ev_moves(&t->swept) && t->swept.entered != WEFT_STATE_VALUE_NONE) {
            sweep(&x, t->on_enter, t->swept.entered);
        }
        if (ev_moves(&t->ev) && t->ev.entered != WEFT_STATE_VALUE_NONE) {
            run_owned(&x, t, WF_STATE_ENTER, t->ev.entered, 0);
        }
    }
    w->busy--;
    st->in_transition = false;
    return x.first;
}

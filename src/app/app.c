/* src/app/app.c - the app's labels, their run order, fixed time and the
 * update loop.
 * SPDX-License-Identifier: MIT
 *
 * See app.h for how labels are ordered. An update runs the startup order
 * once (first update only), then the main order; the fixed order runs
 * right after the RunFixedMainLoop schedule, floor(acc / step) times. The
 * accumulator lives in the world's system state (wf_sys_world.acc) so a
 * snapshot of the world carries it. The step count is computed in double
 * and bounded before it becomes an integer: at most max_steps per update,
 * the time beyond them dropped (a simulation that cannot keep up slows
 * down instead of falling further behind every update).
 */
#include "app/app.h"
#include "world/tasks.h"

#include <string.h>

#define APP_ALIGN _Alignof(uint64_t)

static const char *const builtin_names[WF_APP_BUILTINS] = {
    WEFT_APP_PRE_STARTUP, WEFT_APP_STARTUP, WEFT_APP_POST_STARTUP,
    WEFT_APP_FIRST, WEFT_APP_PRE_UPDATE, WEFT_APP_STATE_TRANSITION,
    WEFT_APP_RUN_FIXED_MAIN_LOOP, WEFT_APP_UPDATE, WEFT_APP_POST_UPDATE, WEFT_APP_LAST,
    WEFT_APP_FIXED_FIRST, WEFT_APP_FIXED_PRE_UPDATE, WEFT_APP_FIXED_UPDATE,
    WEFT_APP_FIXED_POST_UPDATE, WEFT_APP_FIXED_LAST,
};
static const uint8_t builtin_orders[WF_APP_BUILTINS] = {
    WF_APP_STARTUP, WF_APP_STARTUP, WF_APP_STARTUP,
    WF_APP_MAIN, WF_APP_MAIN, WF_APP_MAIN, WF_APP_MAIN, WF_APP_MAIN, WF_APP_MAIN, WF_APP_MAIN,
    WF_APP_FIXED, WF_APP_FIXED, WF_APP_FIXED, WF_APP_FIXED, WF_APP_FIXED,
};
/* Indices of the built-in labels the update loop treats specially. */
#define APP_FIRST 3u
#define APP_RUN_FIXED 6u

/* ---- labels and their order ---- */

int32_t wf_app_find(const weft_app *a, const char *label)
{
    for (uint32_t i = 0; i < a->nlabels; i++) {
        if (strcmp(a->labels[i].sched->name, label) == 0) {
            return (int32_t)i;
        }
    }
    return -1;
}

uint8_t wf_app_label_order(const weft_app *a, uint32_t idx)
{
    while (!a->labels[idx].builtin) {
        idx = a->labels[idx].anchor;
    }
    return a->labels[idx].order;
}

/* Appends idx's subtree to flat[o]: before-children, idx, after-children,
 * siblings by ascending seq (selected one by one: labels are few). */
static void flatten(weft_app *a, uint32_t o, uint32_t idx)
{
    for (int side = 0; side < 2; side++) {
        uint8_t place = side == 0 ? WEFT_APP_BEFORE : WEFT_APP_AFTER;
        if (side == 1) {
            a->flat[o][a->nflat[o]++] = idx;
        }
        uint32_t last = 0;
        bool any = false;
        for (;;) {
            uint32_t best = UINT32_MAX;
            for (uint32_t i = WF_APP_BUILTINS; i < a->nlabels; i++) {
                const wf_app_label *l = &a->labels[i];
                if (l->anchor == idx && l->place == place && (!any || l->seq > last) &&
                    (best == UINT32_MAX || l->seq < a->labels[best].seq)) {
                    best = i;
                }
            }
            if (best == UINT32_MAX) {
                break;
            }
            flatten(a, o, best);
            last = a->labels[best].seq;
            any = true;
        }
    }
}

/* Recomputes every order's run sequence; never fails (flat arrays have
 * the capacity of `labels`). */
static void reflatten(weft_app *a)
{
    for (uint32_t o = 0; o < WF_APP_ORDERS; o++) {
        a->nflat[o] = 0;
    }
    for (uint32_t i = 0; i < WF_APP_BUILTINS; i++) {
        flatten(a, a->labels[i].order, i);
    }
}

/* Grows `labels` and the flat arrays to hold `need` labels: all new
 * blocks are allocated before any old one is released, so on failure the
 * app is untouched. */
static bool reserve_labels(weft_app *a, uint64_t need)
{
    if (need <= a->cap_labels) {
        return true;
    }
    uint32_t cap = wf_grow_cap(a->cap_labels, need, 32u, UINT32_MAX / 2, sizeof *a->labels);
    if (cap == 0) {
        return false;
    }
    wf_app_label *labels = wf_alloc(&a->alloc, (size_t)cap * sizeof *labels, APP_ALIGN);
    uint32_t *flat[WF_APP_ORDERS] = {NULL, NULL, NULL};
    bool ok = labels != NULL;
    for (uint32_t o = 0; ok && o < WF_APP_ORDERS; o++) {
        flat[o] = wf_alloc(&a->alloc, (size_t)cap * sizeof(uint32_t), APP_ALIGN);
        ok = flat[o] != NULL;
    }
    if (!ok) {
        for (uint32_t o = 0; o < WF_APP_ORDERS; o++) {
            wf_free(&a->alloc, flat[o], (size_t)cap * sizeof(uint32_t), APP_ALIGN);
        }
        wf_free(&a->alloc, labels, (size_t)cap * sizeof *labels, APP_ALIGN);
        return false;
    }
    if (a->nlabels) {
        memcpy(labels, a->labels, (size_t)a->nlabels * sizeof *labels);
    }
    wf_free(&a->alloc, a->labels, (size_t)a->cap_labels * sizeof *a->labels, APP_ALIGN);
    a->labels = labels;
    for (uint32_t o = 0; o < WF_APP_ORDERS; o++) {
        if (a->nflat[o]) {
            memcpy(flat[o], a->flat[o], (size_t)a->nflat[o] * sizeof(uint32_t));
        }
        wf_free(&a->alloc, a->flat[o], (size_t)a->cap_labels * sizeof(uint32_t), APP_ALIGN);
        a->flat[o] = flat[o];
    }
    a->cap_labels = cap;
    return true;
}

weft_schedule *wf_app_schedule(weft_app *a, const char *label, const char *fn)
{
    int32_t i = wf_app_find(a, label);
    if (i < 0) {
        wf_error(a->world, WEFT_ERR_NOT_FOUND, "%s: '%s' is no label of the app", fn, label);
        return NULL;
    }
    return a->labels[i].sched;
}

weft_status wf_app_insert(weft_app *a, const char *label, const char *anchor,
                          weft_app_place place)
{
    weft_world *w = a->world;
    int32_t ai = wf_app_find(a, anchor);
    if (ai < 0) {
        return wf_error(w, WEFT_ERR_NOT_FOUND,
                        "weft_app_insert_schedule: anchor '%s' is no label of the app", anchor);
    }
    int32_t li = wf_app_find(a, label);
    if (li >= 0 && a->labels[li].builtin) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_app_insert_schedule: '%s' is a built-in label; its place is fixed",
                        label);
    }
    if (li == ai) {
        return wf_error(w, WEFT_ERR_SCHEDULE_CYCLE,
                        "weft_app_insert_schedule: '%s' cannot be placed relative to itself",
                        label);
    }
    if (li >= 0) {
        /* a move: the anchor may not hang (transitively) on the label */
        for (uint32_t k = (uint32_t)ai; !a->labels[k].builtin; k = a->labels[k].anchor) {
            if (a->labels[k].anchor == (uint32_t)li) {
                return wf_error(w, WEFT_ERR_SCHEDULE_CYCLE,
                                "weft_app_insert_schedule: placing '%s' relative to '%s' "
                                "forms a cycle: '%s' is placed relative to '%s'",
                                label, anchor, anchor, label);
            }
        }
        wf_app_label *l = &a->labels[li];
        l->anchor = (uint32_t)ai;
        l->place = (uint8_t)place;
        l->seq = a->seq++;
        reflatten(a);
        return WEFT_OK;
    }
    if (wf_schedule_find(w, label)) {
        return wf_error(w, WEFT_ERR_ALREADY_EXISTS,
                        "weft_app_insert_schedule: the world has a schedule named '%s' that "
                        "is no label of the app",
                        label);
    }
    if (!reserve_labels(a, (uint64_t)a->nlabels + 1)) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY,
                        "weft_app_insert_schedule: out of memory placing '%s'", label);
    }
    weft_schedule *s = wf_schedule_create(w, label, "weft_app_insert_schedule");
    if (!s) {
        return wf_error_last(w);
    }
    s->app_owned = true;
    wf_app_label *l = &a->labels[a->nlabels++];
    memset(l, 0, sizeof *l);
    l->sched = s;
    l->anchor = (uint32_t)ai;
    l->place = (uint8_t)place;
    l->seq = a->seq++;
    reflatten(a);
    return WEFT_OK;
}

void wf_app_restore_labels(weft_app *a, const wf_app_label *saved, uint32_t n, uint32_t seq)
{
    if (n > a->nlabels) {
        return; /* labels are never removed otherwise: nothing to restore */
    }
    if (n > 0) {
        memcpy(a->labels, saved, (size_t)n * sizeof *a->labels);
    }
    a->nlabels = n;
    a->seq = seq;
    reflatten(a);
}

/* ---- lifecycle ---- */

weft_app *wf_app_create(weft_world *world, bool owns_world, double step, double max_delta,
                        int32_t max_steps, bool no_msg_update)
{
    if (world->app_attached) {
        wf_error(world, WEFT_ERR_ALREADY_EXISTS, "weft_app_create: an app drives this world");
        return NULL;
    }
    wf_allocator alloc;
    wf_allocator_init(&alloc, &world->alloc.hook);
    weft_app *a = wf_calloc(&alloc, sizeof *a, _Alignof(weft_app));
    if (!a) {
        wf_error(world, WEFT_ERR_OUT_OF_MEMORY, "weft_app_create: out of memory");
        return NULL;
    }
    wf_allocator_init(&a->alloc, &world->alloc.hook);
    a->world = world;
    a->owns_world = owns_world;
    a->step = step;
    a->max_delta = max_delta;
    a->max_steps = max_steps;
    a->no_msg_update = no_msg_update;
    wf_atomic_init_u32(&a->exit_state, 0);
    weft_schedule *made[WF_APP_BUILTINS] = {NULL};
    if (!reserve_labels(a, WF_APP_BUILTINS) || !wf_sys_get(world)) {
        goto oom;
    }
    weft_schedule *found[WF_APP_BUILTINS] = {NULL};
    for (uint32_t i = 0; i < WF_APP_BUILTINS; i++) {
        /* a schedule of that name (the user's, or one an earlier app on
         * this world left) becomes the label's */
        found[i] = wf_schedule_find(world, builtin_names[i]);
        if (!found[i]) {
            found[i] = made[i] = wf_schedule_create(world, builtin_names[i], "weft_app_create");
            if (!made[i]) {
                goto oom;
            }
        }
    }
    for (uint32_t i = 0; i < WF_APP_BUILTINS; i++) {
        found[i]->app_owned = true;
        wf_app_label *l = &a->labels[i];
        memset(l, 0, sizeof *l);
        l->sched = found[i];
        l->builtin = true;
        l->order = builtin_orders[i];
    }
    a->nlabels = WF_APP_BUILTINS;
    reflatten(a);
    world->app_attached = true;
    a->magic = WF_APP_MAGIC;
    return a;
oom:
    /* schedules are pushed at the head of the world's list: unlink the
     * ones made here (newest first) and free them */
    for (uint32_t i = WF_APP_BUILTINS; i-- > 0;) {
        if (made[i]) {
            world->sys->schedules = made[i]->next;
            wf_schedule_free(world, made[i]);
        }
    }
    for (uint32_t o = 0; o < WF_APP_ORDERS; o++) {
        wf_free(&a->alloc, a->flat[o], (size_t)a->cap_labels * sizeof(uint32_t), APP_ALIGN);
    }
    wf_free(&a->alloc, a->labels, (size_t)a->cap_labels * sizeof *a->labels, APP_ALIGN);
    wf_free(&alloc, a, sizeof *a, _Alignof(weft_app));
    wf_error(world, WEFT_ERR_OUT_OF_MEMORY, "weft_app_create: out of memory");
    return NULL;
}

void wf_app_destroy(weft_app *a)
{
    if (a->subs_fini) {
        a->subs_fini(a);
    }
    if (a->modules_fini) {
        a->modules_fini(a);
    }
    weft_world *w = a->world;
    w->app_attached = false;
    for (uint32_t i = 0; i < a->nlabels; i++) {
        a->labels[i].sched->app_owned = false;
    }
    if (a->owns_world) {
        wf_world_destroy(w);
    }
    a->world = NULL;
    a->magic = 0;
    wf_app_plugins_free(a);
    for (uint32_t o = 0; o < WF_APP_ORDERS; o++) {
        wf_free(&a->alloc, a->flat[o], (size_t)a->cap_labels * sizeof(uint32_t), APP_ALIGN);
    }
    wf_free(&a->alloc, a->labels, (size_t)a->cap_labels * sizeof *a->labels, APP_ALIGN);
    wf_allocator alloc = a->alloc;
    wf_free(&alloc, a, sizeof *a, _Alignof(weft_app));
}

/* ---- the update ---- */

static void keep_first(weft_status *first, weft_status st)
{
    if (*first == WEFT_OK && st != WEFT_OK) {
        *first = st;
    }
}

/* Runs every label of order o (dt each); the main order also runs the
 * fixed loop after RunFixedMainLoop and updates messages before First. */
static void run_order(weft_app *a, uint32_t o, double dt, int32_t steps, weft_status *first)
{
    weft_world *w = a->world;
    for (uint32_t k = 0; k < a->nflat[o]; k++) {
        uint32_t idx = a->flat[o][k];
        if (idx == APP_FIRST && !a->no_msg_update) {
            wf_messages_update(w);
        }
        keep_first(first, wf_schedule_run(w, a->labels[idx].sched, dt));
        if (idx == APP_RUN_FIXED) {
            for (int32_t s = 0; s < steps; s++) {
                run_order(a, WF_APP_FIXED, a->step, 0, first);
            }
        }
    }
}

weft_status wf_app_update(weft_app *a, double dt)
{
    weft_world *w = a->world;
    wf_sys_world *sw = w->sys;
    if (sw->depth) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "weft_app_update: a schedule of the app's world is running");
    }
    if (a->phase != WF_APP_READY) {
        weft_status st = wf_app_setup(a);
        if (st != WEFT_OK) {
            return st;
        }
    }
    if (a->modules_poll) {
        a->modules_poll(a); /* between frames: a safe point for new code */
    }
    a->updating = true;
    a->updates++;
    weft_status first = WEFT_OK;
    if (!sw->app_started) {
        sw->app_started = true;
        run_order(a, WF_APP_STARTUP, 0.0, 0, &first);
    }
    if (dt > a->max_delta) {
        dt = a->max_delta;
    }
    sw->acc += dt;
    /* the epsilon keeps 0.048 / 0.016 (2.9999...) at 3 steps; the bound
     * comes before the conversion, which is undefined for values out of
     * int32_t's range (n >= 0: the conversion is the floor) */
    double n = sw->acc / a->step + 1e-9;
    int32_t steps;
    if (!(n < (double)a->max_steps)) {
        steps = a->max_steps;
        sw->acc = 0.0; /* what the capped steps could not run is dropped */
    } else {
        steps = (int32_t)n;
        sw->acc -= steps * a->step;
    }
    if (sw->acc < 0.0) {
        sw->acc = 0.0;
    }
    a->fixed_steps = steps;
    run_order(a, WF_APP_MAIN, dt, steps, &first);
    /* the task sync point of the frame, after Last (as Bevy ticks its
     * task pools in Last): apply steps of finished tasks and the
     * deterministic tasks due now (world/tasks.h) */
    keep_first(&first, wf_tasks_tick(w));
    if (a->subs_update) {
        keep_first(&first, a->subs_update(a, dt));
    }
    a->updating = false;
    return first;
}

/* ---- exit requests ---- */

void wf_app_exit(weft_app *a, int32_t code)
{
    uint32_t expected = 0;
    /* seq_cst: the one CAS of the exit protocol, claiming the slot; the
     * code is then published by the release store below, which pairs with
     * the acquire load in wf_app_exit_requested */
    if (wf_atomic_cas_seq_cst_u32(&a->exit_state, &expected, 1)) {
        a->exit_code = code;
        wf_atomic_store_release_u32(&a->exit_state, 2);
    }
}

bool wf_app_exit_requested(const weft_app *a, int32_t *out_code)
{
    /* acquire: pairs with the release store in wf_app_exit, so the code
     * read below is the published one */
    if (wf_atomic_load_acquire_u32(&a->exit_state) != 2) {
        return false; /* none, or claimed and not yet published */
    }
    if (out_code) {
        *out_code = a->exit_code;
    }
    return true;
}

weft_app *wf_app_new(weft_world *given, const weft_app_desc *d)
{
    weft_world *w = given;
    if (!w) {
        w = wf_world_create(&d->world_desc);
        if (!w) {
            return NULL;
        }
    } else if (wf_world_refuse_shared(w, "weft_app_create")) {
        return NULL;
    } else if (w->sys && w->sys->depth) {
        wf_error(w, WEFT_ERR_WRONG_PHASE, "weft_app_create: a schedule of the world is running");
        return NULL;
    }
    weft_app *a = wf_app_create(w, given == NULL,
                                d->fixed_step > 0.0 ? d->fixed_step : 1.0 / 64.0,
                                d->max_delta > 0.0 ? d->max_delta : 0.25,
                                d->max_fixed_steps > 0 ? d->max_fixed_steps
                                                       : WEFT_APP_MAX_FIXED_STEPS,
                                d->no_message_update);
    if (!a && !given) {
        wf_world_destroy(w);
    }
    return a;
}

/* src/app/app.h - the app: a world driven through ordered schedules, with
 * fixed time and plugins (Bevy's App, Main and FixedMain schedules).
 * SPDX-License-Identifier: MIT
 *
 * Labels. Every label is a schedule of the app's world (the schedule's
 * name is the label) flagged app_owned. The built-in labels are the first
 * WF_APP_BUILTINS entries of `labels`, in run order within their order
 * (startup, main, fixed). A user label is placed before or after an
 * anchor label; the anchors form a forest whose roots are built-in labels,
 * so the order a user label runs in is that of its root. The run order of
 * each order is the flattening of that forest: for every built-in label
 * in sequence, its before-children, itself, its after-children, each
 * child flattened the same way and siblings in placement order (`seq`).
 * `flat` holds that result and is recomputed after every placement; it
 * never allocates (its capacity grows with `labels`), so a placement that
 * succeeds up to the recomputation cannot fail after changing the app.
 *
 * Plugins are records added before the setup. The setup builds them in
 * rounds: each round takes every plugin not built yet, checks that every
 * dependency names an added plugin and orders them topologically (ties in
 * order of addition) before calling any build, so a missing or cyclic
 * dependency leaves the round untouched. Builds may add plugins, which
 * form the next round. Then every finish and every cleanup runs in build
 * order.
 *
 * Threads: everything on the driver thread of the world, except the exit
 * request (an atomic, any thread).
 */
#ifndef WF_APP_H
#define WF_APP_H

#include "internal.h"
#include "schedule/schedule.h"

#define WF_APP_MAGIC 0x61707031u /* "app1" */

enum wf_app_order { WF_APP_STARTUP = 0, WF_APP_MAIN = 1, WF_APP_FIXED = 2, WF_APP_ORDERS = 3 };

/* Built-in labels: 3 startup + 7 main + 5 fixed. */
#define WF_APP_BUILTINS 15u

typedef struct wf_app_label {
    weft_schedule *sched;      /* its schedule; sched->name is the label */
    uint8_t order;             /* built-in labels: wf_app_order */
    bool builtin;
    uint8_t place;             /* user labels: WEFT_APP_BEFORE / WEFT_APP_AFTER */
    uint32_t anchor;           /* user labels: index of the anchor label */
    uint32_t seq;              /* placement number: order among siblings */
} wf_app_label;

enum wf_plugin_state { WF_PLUGIN_ADDED = 0, WF_PLUGIN_BUILT = 1 };

typedef struct wf_plugin {
    char *name;                /* owned */
    weft_plugin_fn build, finish, cleanup;
    char **deps;               /* owned names, ndeps of them */
    int32_t ndeps;
    bool repeatable;
    uint8_t state;             /* wf_plugin_state */
    uint32_t rank;             /* built: position in build order */
    void *user;
    void (*free_user)(void *user);
} wf_plugin;

enum wf_app_phase {
    WF_APP_ADDING = 0,         /* plugins may be added */
    WF_APP_BUILDING = 1,       /* the setup calls builds (which may add) */
    WF_APP_FINISHING = 2,      /* finish and cleanup callbacks */
    WF_APP_READY = 3,          /* set up: no plugin may be added */
    WF_APP_FAILED = 4          /* a plugin callback failed */
};

struct weft_app {
    uint32_t magic;            /* WF_APP_MAGIC while alive */
    weft_world *world;
    bool owns_world;           /* created by the app, destroyed with it */
    wf_allocator alloc;        /* the world's hook: the app's bookkeeping
                                  outlives an owned world's destruction */
    wf_app_label *labels;      /* built-ins first (WF_APP_BUILTINS) */
    uint32_t nlabels, cap_labels;
    uint32_t *flat[WF_APP_ORDERS]; /* run order: label indices, capacity
                                      cap_labels each */
    uint32_t nflat[WF_APP_ORDERS];
    uint32_t seq;              /* next placement number */
    wf_plugin *plugins;        /* in order of addition (build order once
                                  the setup is done) */
    uint32_t nplugins, cap_plugins;
    uint32_t *name_slots;      /* open addressing over plugin names: the
                                  first record of a name, as index + 1;
                                  0 empty. name_cap slots, a power of two
                                  at least twice nplugins (plugin.c) */
    uint32_t name_cap;
    uint32_t built;            /* plugins built so far (next rank) */
    uint8_t phase;             /* wf_app_phase */
    bool in_callback;          /* a plugin callback is running */
    bool updating;             /* inside wf_app_update */
    bool in_runner;            /* inside weft_app_run */
    bool no_msg_update;
    double step;               /* fixed step, seconds */
    double max_delta;          /* dt clamp, seconds */
    int32_t max_steps;         /* fixed steps per update at most */
    int32_t fixed_steps;       /* run by the last update */
    int64_t updates;
    wf_atomic_u32 exit_state;  /* 0 none; 1 claimed; 2 code published */
    int32_t exit_code;         /* written once between 1 and 2 */
    /* ---- sub-apps (src/app/subapp.c) ---- */
    weft_app *parent;          /* set on a sub-app: the app that drives it
                                  (its update, run and destroy are refused) */
    void *subs;                /* the app's sub-app records, or NULL */
    weft_status (*subs_update)(weft_app *a, double dt); /* extracts into and
                                  updates every sub-app, after the main
                                  order (set with `subs`) */
    void (*subs_fini)(weft_app *a); /* stops and destroys the sub-apps,
                                  while the world is still alive */
    /* ---- reloadable modules (src/module/) ---- */
    void *modules;             /* the app's module records, or NULL */
    void (*modules_fini)(weft_app *a); /* removes every module's systems and
                                  unloads the modules, while the world is
                                  still alive (set with `modules`) */
    void (*modules_poll)(weft_app *a); /* reloads watched modules whose file
                                  changed: called by every update before
                                  anything runs (set while one is watched) */
};

static inline bool wf_app_ok(const weft_app *a)
{
    return a && a->magic == WF_APP_MAGIC && wf_world_ok(a->world);
}

/* ---- app.c ---- */
/* A new app on `world` (owned: destroyed with the app); the settings are
 * already checked. NULL with the error recorded in the world. */
weft_app *wf_app_create(weft_world *world, bool owns_world, double step, double max_delta,
                        int32_t max_steps, bool no_msg_update);
/* What weft_app_create does past its checks: the app on `given`, or on a
 * world made from d->world_desc (checked) and owned by the app; zero
 * settings take their defaults. Refuses a given world that is shared or
 * runs a schedule. NULL with the error recorded in a given world. */
weft_app *wf_app_new(weft_world *given, const weft_app_desc *d);
/* Frees the app; destroys an owned world (plugin free_user after it). */
void wf_app_destroy(weft_app *a);
/* The label's index, or -1. */
int32_t wf_app_find(const weft_app *a, const char *label);
/* The schedule of `label`, or NULL (NOT_FOUND recorded, `fn` in the
 * message). */
weft_schedule *wf_app_schedule(weft_app *a, const char *label, const char *fn);
/* Places `label` (checked: not NULL or empty) relative to `anchor`. */
weft_status wf_app_insert(weft_app *a, const char *label, const char *anchor,
                          weft_app_place place);
/* Puts the labels back as `saved` (the first n labels and the placement
 * counter taken earlier): labels added since are dropped (their schedules
 * are the caller's to free), moved ones go back. Never fails. */
void wf_app_restore_labels(weft_app *a, const wf_app_label *saved, uint32_t n, uint32_t seq);
/* The order a label runs in (that of its root built-in label). */
uint8_t wf_app_label_order(const weft_app *a, uint32_t idx);
/* One update (see weft_app_update); dt checked. */
weft_status wf_app_update(weft_app *a, double dt);
/* Records the exit request (first one wins). */
void wf_app_exit(weft_app *a, int32_t code);
bool wf_app_exit_requested(const weft_app *a, int32_t *out_code);

/* ---- plugin.c ---- */
/* Adds one plugin (desc checked by the caller except duplicates). */
weft_status wf_app_add_plugin(weft_app *a, const weft_plugin_desc *d);
/* Adds the enabled members of a group, all or none. */
weft_status wf_app_add_group(weft_app *a, const weft_plugin_group_desc *g);
/* Builds, finishes and cleans up the plugins (see weft_app_setup). */
weft_status wf_app_setup(weft_app *a);
/* Plugin index by name, or -1. */
int32_t wf_app_plugin_find(const weft_app *a, const char *name);
/* Calls every free_user and frees the records. */
void wf_app_plugins_free(weft_app *a);
/* Checks one plugin descriptor's fields (not duplicates); `fn` and the
 * group name (or NULL) go into the message. */
weft_status wf_plugin_desc_check(weft_app *a, const weft_plugin_desc *d, const char *fn,
                                 const char *group);

#endif

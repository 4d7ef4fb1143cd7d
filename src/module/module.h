/* src/module/module.h - reloadable modules: shared libraries whose plugin
 * adds systems to an app, loaded, reloaded and unloaded at safe points.
 * SPDX-License-Identifier: MIT
 *
 * A module record keeps the loader handle of the temporary copy it runs
 * and the systems its build added, as (schedule, system) pairs: the system
 * pointer is the identity (a node number shifts when an earlier node is
 * removed). Only app labels' schedules are accepted, which the app never
 * destroys while it lives, so the pairs never dangle.
 *
 * A build runs with the schedule layer's add hook set (wf_sys_world): in
 * a first load every system is created and tracked; in a reload a name
 * the module already has in that schedule is recorded as a rebind (fn,
 * user, local init/fini) and applied only when the whole build succeeded,
 * while a new name is created at once and removed again on failure. So a
 * failed reload leaves every old system exactly as it was.
 *
 * Threads: the driver thread of the app's world.
 */
#ifndef WF_MODULE_H
#define WF_MODULE_H

#include "app/app.h"

#define WF_MODULE_MAGIC 0x6d6f6431u /* "mod1" */

typedef struct wf_mod_sys {
    weft_schedule *sched;
    wf_system *sys;
} wf_mod_sys;

struct weft_module {
    uint32_t magic;            /* WF_MODULE_MAGIC while loaded */
    weft_app *app;
    char *path;                /* owned: the file reloads read */
    char *name;                /* owned: from the def, or the path */
    void *handle;              /* loader handle of the running copy */
    wf_mod_sys *systems;
    uint32_t nsystems, cap_systems;
    weft_component *comps;     /* components a build of the module
                                  registered first (its own) */
    uint32_t ncomps, cap_comps;
    weft_observer **obs;       /* observers its builds created, in order */
    uint32_t nobs, cap_obs;
    weft_condition **conds;    /* named user run conditions its builds created */
    uint32_t nconds, cap_conds;
    weft_message_type *msgs;   /* message types its builds registered first */
    uint32_t nmsgs, cap_msgs;
    weft_condition **made;     /* built-in conditions and combinators its
                                  last build made (new objects every build) */
    uint32_t nmade, cap_made;
    uint32_t reloads;
    /* watching (weft_module_watch) */
    bool watched;
    bool polling;              /* no inotify: size and mtime, twice alike */
    bool pending;              /* a change seen, not loaded yet */
    int wd_fd;                 /* inotify descriptor, or -1 */
    char *base;                /* owned: the file's name inside its directory */
    int64_t seen_size, seen_mtime_ns;   /* the last look (polling) */
    weft_status watch_status;  /* the last watched reload's result */
};

/* The app's modules (app->modules). */
typedef struct wf_modules {
    weft_module **v;
    uint32_t n, cap;
    weft_message_type msg;     /* weft.ModuleReloaded, once registered */
    weft_component res;        /* weft.ModuleReloads, once registered */
    uint32_t reloads;          /* successful reloads of every module */
    weft_component *orphans;   /* components of unloaded modules: the next
                                  module registering one adopts it */
    uint32_t norphans, cap_orphans;
    weft_message_type *msg_orphans; /* message types of unloaded modules:
                                       the next module registering one
                                       adopts it */
    uint32_t nmsg_orphans, cap_msg_orphans;
} wf_modules;

/* Is the app at a safe point for loading code? WEFT_OK, or WRONG_PHASE
 * recorded with `fn` in the message. */
weft_status wf_module_safe_point(weft_app *a, const char *fn);
/* weft_module_load, with the app and path checked. */
weft_module *wf_module_load(weft_app *a, const char *path);
weft_status wf_module_reload(weft_module *m);
void wf_module_unload(weft_module *m);
weft_message_type wf_module_message(weft_app *a);
weft_component wf_module_resource(weft_app *a);
/* During a module's build (w->module_stage set): a registration of a
 * component the module registered before. Returns false when it is not
 * one (the caller goes on as usual); else records the new declaration
 * (size, alignment, lifecycle hooks) for the commit, sets *out to the
 * existing id (0 and the error recorded when refused) and returns true. */
bool wf_module_redeclare(weft_world *w, const weft_component_desc *desc, uint32_t size,
                         uint32_t align, weft_storage storage, weft_component *out);
/* During a module's build: a description of a component the build
 * declared again. Returns false when it is not one; else compiles it
 * against the new layout for the commit and sets *out. */
bool wf_module_describe(weft_world *w, weft_component c, const weft_type_desc *desc,
                        weft_status *out);
/* weft_component_migration_defaults inside a module's build (world and
 * value checked). */
weft_status wf_module_defaults(weft_world *w, weft_component c, const void *value,
                               size_t size);
/* During a module's build, before weft_observer_create makes one: in a
 * reload, an observer of the module with the same event, component and
 * rank among those (the k-th such observer of the build matches the k-th
 * of the module) is rebound instead: returns true with *out = it (the new
 * fn, user and free_user applied at the commit). False: create it. */
bool wf_module_observer(weft_world *w, const weft_observer_desc *desc, weft_observer **out);
/* Tracks an observer the build created (destroyed if the build fails).
 * False on OOM (error recorded; the caller destroys it). */
bool wf_module_observer_added(weft_world *w, weft_observer *o);
/* During a module's build, before weft_condition_create makes a user
 * condition: an unnamed one is refused (false with *out NULL and the
 * error recorded... returned as true); in a reload, the module's condition
 * of that name in that schedule is rebound instead (true, *out = it; the
 * new fn, user and declaration applied at the commit). False: create it. */
bool wf_module_condition(weft_world *w, weft_schedule *s, const weft_condition_desc *desc,
                         weft_condition **out);
/* Tracks a user condition the build created. False on OOM (recorded). */
bool wf_module_condition_added(weft_world *w, weft_condition *c);
/* Notes a built-in condition or combinator made while a module builds:
 * the commit of the module's next build (or its unload) takes it off the
 * nodes and sets it was attached to, so that reloads do not pile them up.
 * Returns false (the build failing) when out of memory. */
bool wf_module_condition_made(weft_world *w, weft_condition *c);
/* During a module's build, before weft_message_register registers `name`
 * anew: *out = the type when the module registered it in an earlier build,
 * or an unloaded module did (adopted at the commit), with the same size
 * and alignment (WEFT_OK: the caller returns it, its stream and readers
 * kept); WEFT_ERR_NOT_FOUND when it is not the
 * module's (the caller reports ALREADY_EXISTS); another status, recorded,
 * refuses it (another size or alignment). */
weft_status wf_module_message_again(weft_world *w, weft_message_type type, size_t size,
                                    size_t align, weft_message_type *out);
/* During a module's build: room to note one more new message type (false
 * on OOM, recorded), then the note of the type registered (cannot fail).
 * A failed build unregisters the types it registered; the module keeps
 * those of its committed builds. */
bool wf_module_message_reserve(weft_world *w);
void wf_module_message_added(weft_world *w, weft_message_type type);
/* Starts (on; `polling` skips inotify) or stops watching m's file. */
weft_status wf_module_watch(weft_module *m, bool on, bool polling);

static inline bool wf_module_ok(const weft_module *m)
{
    return m && m->magic == WF_MODULE_MAGIC && wf_app_ok(m->app);
}

#endif

/* src/module/module_internal.h - what the module files share.
 * SPDX-License-Identifier: MIT
 *
 * The module code is four files over the contract of module.h:
 *   module.c          the room's only platform code (POSIX): a build's
 *                     file copied and loaded (dlopen), and the file
 *                     watched (inotify, or polling its size and mtime)
 *   module_load.c     the app's module list and its signals; load,
 *                     reload and unload
 *   module_stage.c    the staged build: systems added or rebound, and the
 *                     rollback of a failed build
 *   module_rebind.c   what a build registers again (components, observers,
 *                     conditions, message types): staged, reserved, then
 *                     committed
 * (migrate.c plans the layout migrations module_rebind.c commits.)
 * Here: the staging of one build (wf_mod_stage) and the functions one
 * file gives another.
 */
#ifndef WF_MODULE_INTERNAL_H
#define WF_MODULE_INTERNAL_H

#include "module/migrate.h"
#include "core/guard.h"
#include "module/module.h"
#include "query/query.h"
#include "storage/sparse_set.h"
#include "world/lifecycle.h"
#include "world/messages.h"
#include "world/resource.h"

#include <string.h>

#define WF_MOD_ALIGN _Alignof(void *)

typedef struct wf_mod_rebind {
    wf_system *sys;
    weft_system_fn fn;
    void *user;
    void (*init)(void *local, void *user);
    void (*fini)(void *local, void *user);
    wf_system *decl;           /* the new declaration when it differs (its
                                  queries compiled), else NULL */
} wf_mod_rebind;

/* A schedule's declaration counts before a build: pairs are only ever
 * appended, so truncating to them undoes what a failed build declared. */
typedef struct wf_mod_mark {
    weft_schedule *sched;
    uint32_t nmembers, nedges, namb_ok;
    uint32_t nnodes, nsets;
    uint32_t *conds;           /* [nnodes + nsets] conditions of each node
                                  and set (lists only grow in a build) */
} wf_mod_mark;

/* A user condition of the module the build created again. */
typedef struct wf_mod_cond_rebind {
    weft_condition *c;
    weft_condition_fn fn;
    void *user;
    wf_system *decl;           /* the new declaration when it differs */
} wf_mod_cond_rebind;

/* An observer of the module the build created again: its new code. */
typedef struct wf_mod_obs_rebind {
    weft_observer *o;
    weft_observer_fn fn;
    void *user;
    void (*free_user)(void *user);
} wf_mod_obs_rebind;

/* A component the module registered before, registered again by the
 * build: its new declaration, applied by the commit. */
enum { WF_MOD_KEEP = 0, WF_MOD_DESCRIBE = 1, WF_MOD_MIGRATE = 2 };

typedef struct wf_mod_redecl {
    weft_component id;
    bool adopt;                /* an unloaded module's: this one takes it */
    uint32_t size, align;
    weft_lifecycle_hooks lifecycle;
    wf_rdesc *rd;              /* the new description (owned until installed) */
    uint8_t *defaults;         /* [size] from the new description, or NULL */
    wf_mig_plan plan;          /* MOD_MIGRATE */
    uint8_t action;
} wf_mod_redecl;

typedef struct wf_mod_stage {
    wf_mod_mark *marks;
    uint32_t nmarks;
    uint32_t nsched;           /* schedules marked (nmarks may be 1 for 0) */
    wf_mod_redecl *redecls;
    uint32_t nredecls, cap_redecls;
    uint32_t reg0, reg1;       /* component count before and after the build */
    wf_app_label *labels0;     /* the app's labels before the build */
    uint32_t nlabels0, cap_labels0, seq0;
    bool build_failed;         /* the failure is the build's own */
    bool ran;                  /* the build ran (every mark was taken) */
    wf_mod_obs_rebind *obs_rebinds;
    uint32_t nobs_rebinds, cap_obs_rebinds;
    wf_mod_cond_rebind *cond_rebinds;
    uint32_t ncond_rebinds, cap_cond_rebinds;
    weft_condition **conds_added;
    uint32_t nconds_added, cap_conds_added;
    weft_condition **made;     /* built-in conditions and combinators made */
    uint32_t nmade, cap_made;
    weft_message_type *msgs;   /* message types the build registered anew */
    uint32_t nmsgs, cap_msgs;
    weft_message_type *adopted; /* unloaded modules' types it registered */
    uint32_t nadopted, cap_adopted;
    weft_observer **obs_added;
    uint32_t nobs_added, cap_obs_added;
    weft_module *m;
    const char *fn;
    wf_mod_sys *added;
    uint32_t nadded, cap_added;
    wf_mod_rebind *rebinds;
    uint32_t nrebinds, cap_rebinds;
    weft_status fail;          /* first failure seen by the hook */
} wf_mod_stage;

/* ---- module.c ---- */

/* Loads a fresh copy of `path` and checks its entry point. */
weft_status wf_mod_load_copy(weft_world *w, const char *path, void **out_handle,
                             const weft_module_def **out_def, const char *fn);
/* Unloads a copy wf_mod_load_copy loaded. */
void wf_mod_code_close(void *handle);
/* Stops watching m's file (nothing when it is not watched). */
void wf_mod_watch_stop(weft_module *m);

/* ---- module_stage.c ---- */

/* The build itself, its rollback and the helpers the other files reuse
 * (see each definition). */
weft_node wf_mod_stage_fail(wf_mod_stage *g, weft_status st);
void wf_mod_remove_sys(weft_schedule *s, wf_system *sys);
void wf_mod_stage_free(weft_world *w, wf_mod_stage *g);
void wf_mod_cond_unlist(weft_condition *c);
void wf_mod_retire_made(weft_condition **made, uint32_t n);
bool wf_mod_made_by(const weft_module *m, const weft_condition *c);
weft_status wf_mod_stage_build(weft_app *a, wf_mod_stage *g, const weft_module_def *def);
weft_status wf_mod_stage_undo(weft_app *a, wf_mod_stage *g, weft_status st);

/* ---- module_rebind.c ---- */

/* Per kind (components, observers, conditions, message types): staged
 * during the build, reserved (the only failures), then committed. */
void wf_mod_prune_observers(weft_module *m);
bool wf_mod_reserve_msgs(weft_world *w, weft_module *m, const wf_mod_stage *g);
void wf_mod_commit_msgs(weft_module *m, wf_mod_stage *g);
weft_status wf_mod_check_conditions(weft_world *w, const weft_module *m, const wf_mod_stage *g);
void wf_mod_cond_detach(weft_condition *c);
bool wf_mod_reserve_conds(weft_world *w, weft_module *m, const wf_mod_stage *g);
void wf_mod_commit_conditions(weft_module *m, wf_mod_stage *g);
bool wf_mod_reserve_obs(weft_world *w, weft_module *m, const wf_mod_stage *g);
void wf_mod_commit_observers(weft_world *w, weft_module *m, wf_mod_stage *g);
weft_status wf_mod_stage_layouts(weft_world *w, wf_mod_stage *g);
void wf_mod_set_lifecycle(weft_world *w, weft_component id, const weft_lifecycle_hooks *h);
void wf_mod_commit_components(weft_world *w, weft_module *m, wf_mod_stage *g);
bool wf_mod_reserve_comps(weft_world *w, weft_module *m, const wf_mod_stage *g);
void wf_mod_adopt_comps(weft_module *m, const wf_mod_stage *g);

#endif

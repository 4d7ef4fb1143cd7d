/* src/module/module_load.c - loading, reloading and unloading modules
 * (see module.h), and the app's module list and reload signals.
 * SPDX-License-Identifier: MIT
 */
#include "module/module_internal.h"

static const char MSG_NAME[] = "weft.ModuleReloaded";
static const char RES_NAME[] = "weft.ModuleReloads";

weft_status wf_module_safe_point(weft_app *a, const char *fn)
{
    weft_world *w = a->world;
    if (a->updating || a->in_callback) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "%s: called during an update or a plugin "
                        "callback; modules change only between frames", fn);
    }
    if ((w->sys && w->sys->depth > 0) || w->iter_depth > 0) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "%s: called while a schedule, hook or observer "
                        "runs; modules change only between frames", fn);
    }
    return WEFT_OK;
}

/* ---- the app's module list and signals ---- */

static void modules_fini(weft_app *a);

static wf_modules *modules_get(weft_app *a)
{
    if (!a->modules) {
        wf_modules *ms = wf_calloc(&a->alloc, sizeof *ms, _Alignof(wf_modules));
        if (!ms) {
            return NULL;
        }
        a->modules = ms;
        a->modules_fini = modules_fini;
    }
    return a->modules;
}

weft_message_type wf_module_message(weft_app *a)
{
    weft_world *w = a->world;
    weft_message_type t = wf_messages_lookup(w, MSG_NAME);
    if (t) {
        const wf_msg_stream *s = wf_messages_type(w, t);
        if (s->size < sizeof(weft_module_reloaded)) {
            wf_error(w, WEFT_ERR_ALREADY_EXISTS, "message type '%s' exists with another size",
                     MSG_NAME);
            return 0;
        }
        return t;
    }
    t = wf_messages_register(w, MSG_NAME, sizeof(weft_module_reloaded),
                             _Alignof(weft_module_reloaded), NULL, NULL);
    if (!t) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory registering '%s'", MSG_NAME);
    }
    return t;
}

weft_component wf_module_resource(weft_app *a)
{
    weft_world *w = a->world;
    weft_component c = wf_registry_lookup(&w->registry, RES_NAME);
    if (c) {
        const wf_type_info *ti = wf_registry_get(&w->registry, c);
        if (ti->size != sizeof(weft_module_reloads)) {
            wf_error(w, WEFT_ERR_ALREADY_EXISTS, "component '%s' exists with another size",
                     RES_NAME);
            return 0;
        }
        return c;
    }
    weft_component_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.name = RES_NAME;
    cd.size = sizeof(weft_module_reloads);
    cd.align = _Alignof(weft_module_reloads);
    wf_type_info *ti = wf_registry_add(&w->registry, &w->alloc, &cd,
                                       (uint32_t)sizeof(weft_module_reloads),
                                       (uint32_t)_Alignof(weft_module_reloads),
                                       WEFT_STORAGE_TABLE);
    if (!ti) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory registering '%s'", RES_NAME);
        return 0;
    }
    return ti->id;
}

/* Applies the commands every schedule still holds (a run that skipped its
 * final apply), so no buffer of a system about to change is left. */
static void apply_pending(weft_world *w)
{
    for (weft_schedule *s = w->sys ? w->sys->schedules : NULL; s; s = s->next) {
        wf_schedule_apply_pending(w, s);
    }
}

static void module_free(weft_module *m)
{
    wf_mod_watch_stop(m);
    wf_allocator *al = &m->app->alloc;
    weft_world *w = m->app->world;
    if (m->systems) {
        wf_free(&w->alloc, m->systems, m->cap_systems * sizeof *m->systems, WF_MOD_ALIGN);
    }
    if (m->comps) {
        wf_free(&w->alloc, m->comps, m->cap_comps * sizeof *m->comps, WF_MOD_ALIGN);
    }
    if (m->obs) {
        wf_free(&w->alloc, m->obs, m->cap_obs * sizeof *m->obs, WF_MOD_ALIGN);
    }
    if (m->conds) {
        wf_free(&w->alloc, m->conds, m->cap_conds * sizeof *m->conds, WF_MOD_ALIGN);
    }
    if (m->made) {
        wf_free(&w->alloc, m->made, m->cap_made * sizeof *m->made, WF_MOD_ALIGN);
    }
    if (m->msgs) {
        wf_free(&w->alloc, m->msgs, m->cap_msgs * sizeof *m->msgs, WF_MOD_ALIGN);
    }
    wf_strfree(al, m->path);
    wf_strfree(al, m->name);
    m->magic = 0;
    wf_free(al, m, sizeof *m, _Alignof(weft_module));
}

/* Removes the module's systems, newest first, and unloads its code. */
static void module_drop(weft_module *m)
{
    weft_world *w = m->app->world;
    apply_pending(w);
    for (uint32_t i = m->nsystems; i-- > 0;) {
        wf_mod_remove_sys(m->systems[i].sched, m->systems[i].sys);
    }
    m->nsystems = 0;
    /* the components stay (their values too); hooks into the code go */
    static const weft_lifecycle_hooks none;
    for (uint32_t i = 0; i < m->ncomps; i++) {
        wf_mod_set_lifecycle(w, m->comps[i], &none);
    }
    for (uint32_t i = 0; i < m->nconds; i++) {
        wf_mod_cond_detach(m->conds[i]);
    }
    m->nconds = 0;
    wf_mod_retire_made(m->made, m->nmade);
    m->nmade = 0;
    wf_mod_prune_observers(m);
    for (uint32_t i = 0; i < m->nobs; i++) {
        wf_events_kill(&w->events, m->obs[i]);
    }
    m->nobs = 0;
    wf_events_sweep(&w->events, &w->alloc);
    if (m->handle) {
        wf_mod_code_close(m->handle);
        m->handle = NULL;
    }
}

static void modules_fini(weft_app *a)
{
    wf_modules *ms = a->modules;
    for (uint32_t i = ms->n; i-- > 0;) {
        module_drop(ms->v[i]);
        module_free(ms->v[i]);
    }
    if (ms->v) {
        wf_free(&a->alloc, ms->v, ms->cap * sizeof *ms->v, WF_MOD_ALIGN);
    }
    if (ms->orphans) {
        wf_free(&a->alloc, ms->orphans, ms->cap_orphans * sizeof *ms->orphans, WF_MOD_ALIGN);
    }
    if (ms->msg_orphans) {
        wf_free(&a->alloc, ms->msg_orphans, ms->cap_msg_orphans * sizeof *ms->msg_orphans,
                WF_MOD_ALIGN);
    }
    wf_free(&a->alloc, ms, sizeof *ms, _Alignof(wf_modules));
    a->modules = NULL;
    a->modules_fini = NULL;
}

/* ---- load, reload, unload ---- */

weft_module *wf_module_load(weft_app *a, const char *path)
{
    static const char fn[] = "weft_module_load";
    weft_world *w = a->world;
    if (wf_module_safe_point(a, fn) != WEFT_OK) {
        return NULL;
    }
    wf_modules *ms = modules_get(a);
    weft_module *m = ms ? wf_calloc(&a->alloc, sizeof *m, _Alignof(weft_module)) : NULL;
    if (m) {
        m->app = a;
        m->wd_fd = -1;
        m->path = wf_strdup(&a->alloc, path, NULL);
        m->name = wf_strdup(&a->alloc, path, NULL);
    }
    if (!m || !m->path || !m->name ||
        !wf_grow(&a->alloc, (void **)&ms->v, &ms->cap, (uint64_t)ms->n + 1, sizeof *ms->v,
                 WF_MOD_ALIGN)) {
        if (m) {
            module_free(m);
        }
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
        return NULL;
    }
    apply_pending(w);
    void *h = NULL;
    const weft_module_def *def = NULL;
    if (wf_mod_load_copy(w, path, &h, &def, fn) != WEFT_OK) {
        module_free(m);
        return NULL;
    }
    if (def->name && def->name[0]) {
        char *nm = wf_strdup(&a->alloc, def->name, NULL);
        if (!nm) {
            wf_mod_code_close(h);
            module_free(m);
            wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
            return NULL;
        }
        wf_strfree(&a->alloc, m->name);
        m->name = nm;
    }
    wf_mod_stage g;
    memset(&g, 0, sizeof g);
    g.m = m;
    g.fn = fn;
    weft_status st = wf_mod_stage_build(a, &g, def);
    if (st == WEFT_OK) {
        st = wf_mod_stage_layouts(w, &g); /* an unloaded module's components */
    }
    if (st == WEFT_OK &&
        (!wf_mod_reserve_comps(w, m, &g) || !wf_mod_reserve_obs(w, m, &g) ||
         !wf_mod_reserve_conds(w, m, &g) || !wf_mod_reserve_msgs(w, m, &g))) {
        st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    if (st != WEFT_OK) {
        wf_mod_stage_undo(a, &g, st);
        wf_mod_stage_free(w, &g);
        wf_mod_code_close(h);
        module_free(m);
        return NULL;
    }
    wf_mod_commit_components(w, m, &g);
    wf_mod_adopt_comps(m, &g);
    wf_mod_commit_observers(w, m, &g);
    wf_mod_commit_conditions(m, &g);
    wf_mod_commit_msgs(m, &g);
    /* a first build only adds: its systems become the module's */
    m->systems = g.added;
    m->nsystems = g.nadded;
    m->cap_systems = g.cap_added;
    g.added = NULL;
    wf_mod_stage_free(w, &g);
    m->handle = h;
    m->magic = WF_MODULE_MAGIC;
    ms->v[ms->n++] = m;
    return m;
}

static bool rebound(const wf_mod_stage *g, const wf_system *sys)
{
    for (uint32_t i = 0; i < g->nrebinds; i++) {
        if (g->rebinds[i].sys == sys) {
            return true;
        }
    }
    return false;
}

/* A reload's systems: vanished ones go (their fini runs with the old code,
 * still loaded), rebound ones get the new code, added ones join; `list`,
 * with room for `keep`, becomes the module's list. ev->removed counts the
 * vanished ones. */
static void commit_systems(weft_world *w, weft_module *m, wf_mod_stage *g, wf_mod_sys *list,
                           uint32_t keep, weft_module_reloaded *ev)
{
    uint32_t n = 0;
    for (uint32_t i = m->nsystems; i-- > 0;) {
        if (!rebound(g, m->systems[i].sys)) {
            wf_mod_remove_sys(m->systems[i].sched, m->systems[i].sys);
            ev->removed++;
        }
    }
    for (uint32_t i = 0; i < m->nsystems; i++) {
        /* kept in their old order; the removed ones are gone from the
         * schedules but their stale pointers are skipped by `rebound` */
        for (uint32_t r = 0; r < g->nrebinds; r++) {
            if (g->rebinds[r].sys == m->systems[i].sys) {
                list[n++] = m->systems[i];
                break;
            }
        }
    }
    for (uint32_t r = 0; r < g->nrebinds; r++) {
        wf_system *sys = g->rebinds[r].sys;
        sys->fn = g->rebinds[r].fn;
        sys->user = g->rebinds[r].user;
        sys->local_desc.init = g->rebinds[r].init;
        sys->local_desc.fini = g->rebinds[r].fini;
        if (g->rebinds[r].decl) {
            /* new queries or access: the graph is rebuilt (and its
             * ambiguities found again) before the schedule runs next */
            wf_system_swap_decl(sys, g->rebinds[r].decl);
            wf_system_destroy(w, g->rebinds[r].decl);
            g->rebinds[r].decl = NULL;
            sys->sched->dirty = true;
        }
    }
    for (uint32_t i = 0; i < g->nadded; i++) {
        list[n++] = g->added[i];
    }
    if (m->systems) {
        wf_free(&w->alloc, m->systems, m->cap_systems * sizeof *m->systems, WF_MOD_ALIGN);
    }
    m->systems = list;
    m->nsystems = n;
    m->cap_systems = keep ? keep : 1;
}

/* A reload's signals: the resource (its changed tick marks the reload)
 * and the message. */
static weft_status signal_reload(weft_world *w, wf_modules *ms, weft_component res,
                                 weft_message_type msg, const weft_module_reloaded *ev,
                                 const char *fn)
{
    weft_module_reloads value = {ms->reloads};
    weft_status st = wf_resource_insert(w, wf_registry_get(&w->registry, res), &value);
    wf_msg_stream *s = wf_messages_type(w, msg);
    if (!wf_stream_write(&w->alloc, s, ev) && st == WEFT_OK) {
        st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: reloaded, but out of memory writing the "
                      "message '%s'", fn, MSG_NAME);
    }
    return st;
}

weft_status wf_module_reload(weft_module *m)
{
    static const char fn[] = "weft_module_reload";
    weft_app *a = m->app;
    weft_world *w = a->world;
    wf_modules *ms = a->modules;
    weft_status st = wf_module_safe_point(a, fn);
    if (st != WEFT_OK) {
        return st;
    }
    apply_pending(w);
    wf_mod_prune_observers(m);
    void *h = NULL;
    const weft_module_def *def = NULL;
    st = wf_mod_load_copy(w, m->path, &h, &def, fn);
    if (st != WEFT_OK) {
        return st;
    }
    wf_mod_stage g;
    memset(&g, 0, sizeof g);
    g.m = m;
    g.fn = fn;
    st = wf_mod_stage_build(a, &g, def);
    /* everything that can fail comes before the first change: the layouts'
     * plans and blocks, the new lists' room and the signals' registration */
    if (st == WEFT_OK) {
        st = wf_mod_stage_layouts(w, &g);
    }
    if (st == WEFT_OK) {
        st = wf_mod_check_conditions(w, m, &g);
    }
    if (st == WEFT_OK &&
        (!wf_mod_reserve_comps(w, m, &g) || !wf_mod_reserve_obs(w, m, &g) ||
         !wf_mod_reserve_conds(w, m, &g) || !wf_mod_reserve_msgs(w, m, &g))) {
        st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    uint32_t keep = g.nrebinds + g.nadded;
    wf_mod_sys *list = NULL;
    weft_message_type msg = 0;
    weft_component res = 0;
    if (st == WEFT_OK) {
        list = wf_alloc(&w->alloc, (keep ? keep : 1) * sizeof *list, WF_MOD_ALIGN);
        msg = list ? wf_module_message(a) : 0;
        res = msg ? wf_module_resource(a) : 0;
        if (!list || !msg || !res) {
            st = list ? wf_error_last(w)
                      : wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
        }
    }
    if (st != WEFT_OK) {
        if (list) {
            wf_free(&w->alloc, list, (keep ? keep : 1) * sizeof *list, WF_MOD_ALIGN);
        }
        wf_mod_stage_undo(a, &g, st);
        wf_mod_stage_free(w, &g);
        wf_mod_code_close(h);
        return st;
    }
    wf_mod_commit_components(w, m, &g);
    wf_mod_adopt_comps(m, &g);
    wf_mod_commit_observers(w, m, &g);
    wf_mod_commit_conditions(m, &g);
    wf_mod_commit_msgs(m, &g);
    weft_module_reloaded ev = {0, (int32_t)g.nrebinds, (int32_t)g.nadded, 0};
    commit_systems(w, m, &g, list, keep, &ev);
    wf_mod_stage_free(w, &g);
    wf_mod_code_close(m->handle);
    m->handle = h;
    m->reloads++;
    ms->reloads++;
    ev.reloads = m->reloads;
    return signal_reload(w, ms, res, msg, &ev, fn);
}

void wf_module_unload(weft_module *m)
{
    weft_app *a = m->app;
    wf_modules *ms = a->modules;
    module_drop(m);
    /* its components stay; the next module registering one adopts it
     * (without room, a component is just no module's any more) */
    if (m->ncomps &&
        wf_grow(&a->alloc, (void **)&ms->orphans, &ms->cap_orphans,
                (uint64_t)ms->norphans + m->ncomps, sizeof *ms->orphans, WF_MOD_ALIGN)) {
        memcpy(ms->orphans + ms->norphans, m->comps, m->ncomps * sizeof *m->comps);
        ms->norphans += m->ncomps;
    }
    /* so do its message types */
    if (m->nmsgs &&
        wf_grow(&a->alloc, (void **)&ms->msg_orphans, &ms->cap_msg_orphans,
                (uint64_t)ms->nmsg_orphans + m->nmsgs, sizeof *ms->msg_orphans, WF_MOD_ALIGN)) {
        memcpy(ms->msg_orphans + ms->nmsg_orphans, m->msgs, m->nmsgs * sizeof *m->msgs);
        ms->nmsg_orphans += m->nmsgs;
    }
    for (uint32_t i = 0; i < ms->n; i++) {
        if (ms->v[i] == m) {
            memmove(&ms->v[i], &ms->v[i + 1], (ms->n - i - 1) * sizeof *ms->v);
            ms->n--;
            break;
        }
    }
    module_free(m);
}

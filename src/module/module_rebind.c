/* src/module/module_rebind.c - what a module's build registers again.
 * SPDX-License-Identifier: MIT
 *
 * Components (a new declaration, description or layout, migrated at the
 * commit), observers, user run conditions and message types that a
 * module registered in an earlier build are rebound instead of created:
 * staged during the build, reserved, then committed, so a failed reload
 * leaves the old ones as they were.
 */
#include "module/module_internal.h"

/* ---- components a build registers again ---- */

static bool module_owns(const weft_module *m, weft_component id)
{
    for (uint32_t i = 0; i < m->ncomps; i++) {
        if (m->comps[i] == id) {
            return true;
        }
    }
    return false;
}

static bool orphaned(const weft_app *a, weft_component id)
{
    const wf_modules *ms = a->modules;
    for (uint32_t i = 0; ms && i < ms->norphans; i++) {
        if (ms->orphans[i] == id) {
            return true;
        }
    }
    return false;
}

static wf_mod_redecl *find_redecl(wf_mod_stage *g, weft_component id)
{
    for (uint32_t i = 0; i < g->nredecls; i++) {
        if (g->redecls[i].id == id) {
            return &g->redecls[i];
        }
    }
    return NULL;
}

bool wf_module_redeclare(weft_world *w, const weft_component_desc *desc, uint32_t size,
                         uint32_t align, weft_storage storage, weft_component *out)
{
    wf_mod_stage *g = w->module_stage;
    weft_component id = g ? wf_registry_lookup(&w->registry, desc->name) : 0;
    bool adopt = id && !module_owns(g->m, id) && orphaned(g->m->app, id);
    if (!id || (!adopt && !module_owns(g->m, id))) {
        return false;
    }
    const wf_type_info *ti = wf_registry_get(&w->registry, id);
    weft_module *m = g->m;
    *out = 0;
    if (find_redecl(g, id)) {
        wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_ALREADY_EXISTS, "%s: module '%s' registers "
                               "component '%s' twice", g->fn, m->name, ti->name));
        return true;
    }
    const char *what = NULL;
    if (storage != ti->storage) {
        what = "its storage";
    } else if (desc->flags != ti->flags) {
        what = "its flags";
    } else if ((size == 0) != (ti->size == 0)) {
        what = "between a tag and a value";
    }
    if (what) {
        wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_UNSUPPORTED, "%s: module '%s' changes %s of "
                               "component '%s'; only its layout (through type descriptions) "
                               "and its hooks can change across a reload", g->fn, m->name,
                               what, ti->name));
        return true;
    }
    if (!wf_grow(&w->alloc, (void **)&g->redecls, &g->cap_redecls, (uint64_t)g->nredecls + 1,
                 sizeof *g->redecls, WF_MOD_ALIGN)) {
        wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
        return true;
    }
    wf_mod_redecl *r = &g->redecls[g->nredecls++];
    memset(r, 0, sizeof *r);
    r->id = id;
    r->adopt = adopt;
    r->size = size;
    r->align = align;
    r->lifecycle = desc->lifecycle;
    *out = id;
    return true;
}

bool wf_module_describe(weft_world *w, weft_component c, const weft_type_desc *desc,
                        weft_status *out)
{
    wf_mod_stage *g = w->module_stage;
    wf_mod_redecl *r = g ? find_redecl(g, c) : NULL;
    if (!r) {
        return false;
    }
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (r->rd) {
        *out = wf_error(w, WEFT_ERR_ALREADY_EXISTS, "%s: module '%s' describes component "
                        "'%s' twice", g->fn, g->m->name, ti->name);
        wf_mod_stage_fail(g, *out);
        return true;
    }
    weft_status st = WEFT_OK;
    wf_rdesc *d = wf_rdesc_compile(w, desc, r->size, r->align, ti->name, &st);
    if (!d) {
        wf_mod_stage_fail(g, st);
        *out = st;
        return true;
    }
    r->rd = d;
    *out = WEFT_OK;
    return true;
}

/* Drops from m->obs the observers the host destroyed meanwhile. */
void wf_mod_prune_observers(weft_module *m)
{
    weft_world *w = m->app->world;
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nobs; i++) {
        bool alive = false;
        for (const weft_observer *o = w->events.all; o && !alive; o = o->next) {
            alive = o == m->obs[i] && !o->dead;
        }
        if (alive) {
            m->obs[n++] = m->obs[i];
        }
    }
    m->nobs = n;
}

static bool obs_rebound(const wf_mod_stage *g, const weft_observer *o)
{
    for (uint32_t i = 0; i < g->nobs_rebinds; i++) {
        if (g->obs_rebinds[i].o == o) {
            return true;
        }
    }
    return false;
}

bool wf_module_observer(weft_world *w, const weft_observer_desc *desc, weft_observer **out)
{
    wf_mod_stage *g = w->module_stage;
    if (!g) {
        return false;
    }
    weft_module *m = g->m;
    for (uint32_t i = 0; i < m->nobs; i++) {
        weft_observer *o = m->obs[i];
        bool lifecycle = desc->event >= WEFT_EVENT_ADD && desc->event <= WEFT_EVENT_DESPAWN;
        if (o->event != desc->event || o->component != (lifecycle ? desc->component : 0) ||
            obs_rebound(g, o)) {
            continue;
        }
        if (!wf_grow(&w->alloc, (void **)&g->obs_rebinds, &g->cap_obs_rebinds,
                     (uint64_t)g->nobs_rebinds + 1, sizeof *g->obs_rebinds, WF_MOD_ALIGN)) {
            wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
            *out = NULL;
            return true;
        }
        wf_mod_obs_rebind *r = &g->obs_rebinds[g->nobs_rebinds++];
        r->o = o;
        r->fn = desc->fn;
        r->user = desc->user;
        r->free_user = desc->free_user;
        *out = o;
        return true;
    }
    return false;
}

bool wf_module_observer_added(weft_world *w, weft_observer *o)
{
    wf_mod_stage *g = w->module_stage;
    if (!g) {
        return true;
    }
    if (!wf_grow(&w->alloc, (void **)&g->obs_added, &g->cap_obs_added,
                 (uint64_t)g->nobs_added + 1, sizeof *g->obs_added, WF_MOD_ALIGN)) {
        wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
        return false;
    }
    g->obs_added[g->nobs_added++] = o;
    return true;
}

static bool cond_rebound(const wf_mod_stage *g, const weft_condition *c)
{
    for (uint32_t i = 0; i < g->ncond_rebinds; i++) {
        if (g->cond_rebinds[i].c == c) {
            return true;
        }
    }
    return false;
}

bool wf_module_condition(weft_world *w, weft_schedule *s, const weft_condition_desc *desc,
                         weft_condition **out)
{
    wf_mod_stage *g = w->module_stage;
    if (!g) {
        return false;
    }
    weft_module *m = g->m;
    *out = NULL;
    if (!desc->name || !desc->name[0]) {
        wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_UNSUPPORTED, "weft_condition_create: module '%s' "
                               "creates a user condition without a name; a reload rebinds "
                               "conditions by name, so name it", m->name));
        return true;
    }
    for (uint32_t i = 0; i < m->nconds; i++) {
        weft_condition *c = m->conds[i];
        if (c->sched != s || !c->sys->name || strcmp(c->sys->name, desc->name) != 0) {
            continue;
        }
        if (cond_rebound(g, c)) {
            break; /* twice in one build */
        }
        weft_condition_desc nd = *desc;
        wf_system *decl = wf_system_create(w, s, NULL, &nd);
        if (!decl) {
            wf_mod_stage_fail(g, wf_error_last(w));
            return true;
        }
        if (wf_system_same_decl(c->sys, decl)) {
            wf_system_destroy(w, decl);
            decl = NULL;
        }
        if (!wf_grow(&w->alloc, (void **)&g->cond_rebinds, &g->cap_cond_rebinds,
                     (uint64_t)g->ncond_rebinds + 1, sizeof *g->cond_rebinds, WF_MOD_ALIGN)) {
            wf_system_destroy(w, decl);
            wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
            return true;
        }
        wf_mod_cond_rebind *r = &g->cond_rebinds[g->ncond_rebinds++];
        r->c = c;
        r->fn = desc->fn;
        r->user = desc->user;
        r->decl = decl;
        *out = c;
        return true;
    }
    for (uint32_t i = 0; i < g->nconds_added; i++) {
        weft_condition *c = g->conds_added[i];
        if (c->sched == s && strcmp(c->sys->name, desc->name) == 0) {
            wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_ALREADY_EXISTS, "%s: module '%s' creates the "
                                   "condition '%s' twice in schedule '%s'", g->fn, m->name,
                                   desc->name, s->name));
            return true;
        }
    }
    for (uint32_t i = 0; i < g->ncond_rebinds; i++) {
        weft_condition *c = g->cond_rebinds[i].c;
        if (c->sched == s && strcmp(c->sys->name, desc->name) == 0) {
            wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_ALREADY_EXISTS, "%s: module '%s' creates the "
                                   "condition '%s' twice in schedule '%s'", g->fn, m->name,
                                   desc->name, s->name));
            return true;
        }
    }
    return false;
}

weft_status wf_module_message_again(weft_world *w, weft_message_type type, size_t size,
                                    size_t align, weft_message_type *out)
{
    wf_mod_stage *g = w->module_stage;
    if (!g) {
        return WEFT_ERR_NOT_FOUND;
    }
    const weft_module *m = g->m;
    const wf_modules *ms = m->app->modules;
    bool own = false;
    bool orphan = false;
    for (uint32_t i = 0; i < m->nmsgs && !own; i++) {
        own = m->msgs[i] == type;
    }
    for (uint32_t i = 0; ms && !own && i < ms->nmsg_orphans && !orphan; i++) {
        orphan = ms->msg_orphans[i] == type;
    }
    for (uint32_t i = 0; i < g->nadopted; i++) {
        if (g->adopted[i] == type) {
            orphan = false; /* twice in one build */
        }
    }
    if (!own && !orphan) {
        return WEFT_ERR_NOT_FOUND;
    }
    const wf_msg_stream *s = wf_messages_type(w, type);
    if (s->size != size || s->align != align) {
        weft_status st = wf_error(w, WEFT_ERR_UNSUPPORTED,
                                  "%s: module '%s' registers message type '%s' with size %zu "
                                  "and alignment %zu, but its messages have size %zu and "
                                  "alignment %zu; a message type's layout cannot change",
                                  g->fn, m->name, s->name, size, align, s->size, s->align);
        wf_mod_stage_fail(g, st);
        return st;
    }
    if (orphan) {
        if (!wf_grow(&w->alloc, (void **)&g->adopted, &g->cap_adopted,
                     (uint64_t)g->nadopted + 1, sizeof *g->adopted, WF_MOD_ALIGN)) {
            weft_status st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn);
            wf_mod_stage_fail(g, st);
            return st;
        }
        g->adopted[g->nadopted++] = type;
    }
    *out = type;
    return WEFT_OK;
}

bool wf_module_message_reserve(weft_world *w)
{
    wf_mod_stage *g = w->module_stage;
    if (!g) {
        return true;
    }
    if (!wf_grow(&w->alloc, (void **)&g->msgs, &g->cap_msgs, (uint64_t)g->nmsgs + 1,
                 sizeof *g->msgs, WF_MOD_ALIGN)) {
        wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
        return false;
    }
    return true;
}

void wf_module_message_added(weft_world *w, weft_message_type type)
{
    wf_mod_stage *g = w->module_stage;
    if (g && g->nmsgs < g->cap_msgs) {
        g->msgs[g->nmsgs++] = type;
    }
}

/* Room for the module's message types after the commit. */
bool wf_mod_reserve_msgs(weft_world *w, weft_module *m, const wf_mod_stage *g)
{
    return wf_grow(&w->alloc, (void **)&m->msgs, &m->cap_msgs,
                   (uint64_t)m->nmsgs + g->nmsgs + g->nadopted + 1, sizeof *m->msgs,
                   WF_MOD_ALIGN);
}

/* The build's new message types, and the unloaded modules' ones it
 * registered again, become the module's (room reserved). */
void wf_mod_commit_msgs(weft_module *m, wf_mod_stage *g)
{
    for (uint32_t i = 0; i < g->nmsgs; i++) {
        m->msgs[m->nmsgs++] = g->msgs[i];
    }
    g->nmsgs = 0;
    wf_modules *ms = m->app->modules;
    for (uint32_t i = 0; i < g->nadopted; i++) {
        m->msgs[m->nmsgs++] = g->adopted[i];
        for (uint32_t k = 0; k < ms->nmsg_orphans; k++) {
            if (ms->msg_orphans[k] == g->adopted[i]) {
                ms->msg_orphans[k] = ms->msg_orphans[--ms->nmsg_orphans];
                break;
            }
        }
    }
    g->nadopted = 0;
}

bool wf_module_condition_made(weft_world *w, weft_condition *c)
{
    wf_mod_stage *g = w->module_stage;
    if (!g) {
        return true;
    }
    if (!wf_grow(&w->alloc, (void **)&g->made, &g->cap_made, (uint64_t)g->nmade + 1,
                 sizeof *g->made, WF_MOD_ALIGN)) {
        wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
        return false;
    }
    g->made[g->nmade++] = c;
    return true;
}

bool wf_module_condition_added(weft_world *w, weft_condition *c)
{
    wf_mod_stage *g = w->module_stage;
    if (!g) {
        return true;
    }
    if (!wf_grow(&w->alloc, (void **)&g->conds_added, &g->cap_conds_added,
                 (uint64_t)g->nconds_added + 1, sizeof *g->conds_added, WF_MOD_ALIGN)) {
        wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn));
        return false;
    }
    g->conds_added[g->nconds_added++] = c;
    return true;
}

/* Is condition c an operand of a combinator of its schedule that stays
 * (not retired, not one of m's last build, which the commit retires)? */
static const weft_condition *cond_user_of(const weft_module *m, const weft_condition *c)
{
    for (const weft_condition *k = c->sched->conds; k; k = k->next) {
        if (!k->retired && (k->a == c || k->b == c) && !wf_mod_made_by(m, k)) {
            return k;
        }
    }
    return NULL;
}

/* Refuses a reload that drops a condition of the module still used by a
 * combinator (the combinator would run code about to be unloaded). */
weft_status wf_mod_check_conditions(weft_world *w, const weft_module *m, const wf_mod_stage *g)
{
    for (uint32_t i = 0; i < m->nconds; i++) {
        const weft_condition *c = m->conds[i];
        if (!cond_rebound(g, c) && cond_user_of(m, c)) {
            return wf_error(w, WEFT_ERR_UNSUPPORTED, "%s: module '%s' no longer creates the "
                            "condition '%s', which a combined condition still uses; nothing "
                            "changed", g->fn, m->name, c->sys->name);
        }
    }
    return WEFT_OK;
}

/* Takes user condition c off every node and set, with no code left. */
void wf_mod_cond_detach(weft_condition *c)
{
    wf_mod_cond_unlist(c);
    c->sys->cond_fn = NULL;
}

bool wf_mod_reserve_conds(weft_world *w, weft_module *m, const wf_mod_stage *g)
{
    return wf_grow(&w->alloc, (void **)&m->conds, &m->cap_conds,
                   (uint64_t)m->nconds + g->nconds_added + 1, sizeof *m->conds, WF_MOD_ALIGN);
}

/* Rebinds the conditions the build created again, detaches the others
 * (left in their schedule with no code), keeps the new ones. */
void wf_mod_commit_conditions(weft_module *m, wf_mod_stage *g)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nconds; i++) {
        weft_condition *c = m->conds[i];
        wf_mod_cond_rebind *r = NULL;
        for (uint32_t k = 0; k < g->ncond_rebinds && !r; k++) {
            r = g->cond_rebinds[k].c == c ? &g->cond_rebinds[k] : NULL;
        }
        if (!r) {
            wf_mod_cond_detach(c);
            continue;
        }
        c->sys->cond_fn = r->fn;
        c->sys->user = r->user;
        if (r->decl) {
            wf_system_swap_decl(c->sys, r->decl);
            wf_system_destroy(c->sched->world, r->decl);
            r->decl = NULL;
            c->sched->dirty = true;
        }
        m->conds[n++] = c;
    }
    for (uint32_t i = 0; i < g->nconds_added; i++) {
        m->conds[n++] = g->conds_added[i];
    }
    m->nconds = n;
    g->nconds_added = 0;
    /* the new build's built-in conditions and combinators replace the
     * last one's (the arrays trade places, so nothing is allocated) */
    wf_mod_retire_made(m->made, m->nmade);
    weft_condition **old = m->made;
    uint32_t cap = m->cap_made;
    m->made = g->made;
    m->nmade = g->nmade;
    m->cap_made = g->cap_made;
    g->made = old;
    g->nmade = 0;
    g->cap_made = cap;
}

/* Room for the module's observers after the commit. */
bool wf_mod_reserve_obs(weft_world *w, weft_module *m, const wf_mod_stage *g)
{
    return wf_grow(&w->alloc, (void **)&m->obs, &m->cap_obs,
                   (uint64_t)m->nobs + g->nobs_added + 1, sizeof *m->obs, WF_MOD_ALIGN);
}

/* Rebinds the observers the build created again, destroys the module's
 * others (their free_user runs with the old code, still loaded), keeps
 * the new ones. Cannot fail (room reserved). */
void wf_mod_commit_observers(weft_world *w, weft_module *m, wf_mod_stage *g)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nobs; i++) {
        weft_observer *o = m->obs[i];
        const wf_mod_obs_rebind *r = NULL;
        for (uint32_t k = 0; k < g->nobs_rebinds && !r; k++) {
            r = g->obs_rebinds[k].o == o ? &g->obs_rebinds[k] : NULL;
        }
        if (!r) {
            wf_events_kill(&w->events, o);
            continue;
        }
        if (o->free_user && o->user != r->user) {
            WF_CALLBACK(w, o->free_user(o->user));
        }
        o->fn = r->fn;
        o->user = r->user;
        o->free_user = r->free_user;
        m->obs[n++] = o;
    }
    for (uint32_t i = 0; i < g->nobs_added; i++) {
        m->obs[n++] = g->obs_added[i];
    }
    m->nobs = n;
    g->nobs_added = 0;
    wf_events_sweep(&w->events, &w->alloc);
}

weft_status wf_module_defaults(weft_world *w, weft_component c, const void *value,
                               size_t size)
{
    static const char fn[] = "weft_component_migration_defaults";
    wf_mod_stage *g = w->module_stage;
    wf_mod_redecl *r = g ? find_redecl(g, c) : NULL;
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (!r && g && ti && c > g->reg0) {
        /* registered first by this build: nothing to migrate */
        if (size != ti->size) {
            return wf_error(w, WEFT_ERR_SIZE_MISMATCH, "%s: component '%s' has %u bytes, "
                            "the defaults have %zu", fn, ti->name, ti->size, size);
        }
        return WEFT_OK;
    }
    if (!r) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: component id %u was not registered by "
                        "this build of the module", fn, c);
    }
    if (size != r->size) {
        return wf_error(w, WEFT_ERR_SIZE_MISMATCH, "%s: component '%s' is declared with %u "
                        "bytes, the defaults have %zu", fn, ti->name, r->size, size);
    }
    if (r->defaults) {
        return wf_error(w, WEFT_ERR_ALREADY_EXISTS, "%s: component '%s' has defaults already",
                        fn, ti->name);
    }
    r->defaults = wf_alloc(&w->alloc, r->size ? r->size : 1, 1);
    if (!r->defaults) {
        weft_status st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
        wf_mod_stage_fail(g, st);
        return st;
    }
    memcpy(r->defaults, value, r->size);
    return WEFT_OK;
}

/* Is component id required, with a default value, by another one? Such a
 * default has the old layout. */
static const char *required_with_value(const weft_world *w, weft_component id)
{
    for (uint32_t c = 1; c <= w->registry.count; c++) {
        const wf_type_info *ti = w->registry.infos[c];
        for (uint32_t k = 0; k < ti->req_count; k++) {
            if (ti->reqs[k].id == id && ti->reqs[k].value) {
                return ti->name;
            }
        }
    }
    return NULL;
}

/* Decides, for every component the build declared again, what the commit
 * does with it, and allocates all it needs: nothing changes here. */
weft_status wf_mod_stage_layouts(weft_world *w, wf_mod_stage *g)
{
    const char *fn = g->fn;
    for (uint32_t i = 0; i < g->nredecls; i++) {
        wf_mod_redecl *r = &g->redecls[i];
        const wf_type_info *ti = wf_registry_get(&w->registry, r->id);
        const wf_rdesc *old = wf_reflect_component(w, r->id);
        bool same = r->size == ti->size && r->align == ti->align;
        if (!r->rd || !old) {
            if (!same) {
                return wf_error(w, WEFT_ERR_SIZE_MISMATCH,
                                "%s: module '%s' changes the layout of component '%s' (%u to "
                                "%u bytes, align %u to %u) without type descriptions of both "
                                "layouts (weft_component_describe in every build); nothing "
                                "changed", fn, g->m->name, ti->name, ti->size, r->size,
                                ti->align, r->align);
            }
            r->action = r->rd ? WF_MOD_DESCRIBE : WF_MOD_KEEP;
            if (r->rd && !wf_reflect_install(w, false, r->id, NULL)) {
                return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
            }
            continue;
        }
        const char *req = required_with_value(w, r->id);
        const char *no = ti->rel_targets || ti->rel_source ? "it is part of a relationship"
                         : !ti->trivial ? "it has type hooks"
                         : req ? "another component requires it with a default value"
                               : NULL;
        if (no) {
            return wf_error(w, WEFT_ERR_UNSUPPORTED, "%s: module '%s' changes the layout of "
                            "component '%s', which cannot be migrated: %s%s%s; nothing changed",
                            fn, g->m->name, ti->name, no, req ? ": " : "", req ? req : "");
        }
        r->action = WF_MOD_MIGRATE;
        char who[160];
        snprintf(who, sizeof who, "%s: module '%s'", fn, g->m->name);
        weft_status st = wf_mig_plan_build(w, ti, old, r->rd, r->size, r->align, r->defaults,
                                           &r->plan, who);
        if (st == WEFT_OK) {
            st = wf_mig_prepare(w, &r->plan, who);
        }
        if (st != WEFT_OK) {
            return st;
        }
    }
    return WEFT_OK;
}

/* Sets a component's lifecycle hooks (the new code's, or none). */
void wf_mod_set_lifecycle(weft_world *w, weft_component id, const weft_lifecycle_hooks *h)
{
    wf_type_info *ti = wf_registry_get(&w->registry, id);
    ti->lifecycle = *h;
    const void *fns[5] = {(const void *)(uintptr_t)h->on_add,
                          (const void *)(uintptr_t)h->on_insert,
                          (const void *)(uintptr_t)h->on_replace,
                          (const void *)(uintptr_t)h->on_remove,
                          (const void *)(uintptr_t)h->on_despawn};
    static const weft_event evs[5] = {WEFT_EVENT_ADD, WEFT_EVENT_INSERT, WEFT_EVENT_REPLACE,
                                      WEFT_EVENT_REMOVE, WEFT_EVENT_DESPAWN};
    for (int k = 0; k < 5; k++) {
        if (fns[k]) {
            wf_listen(w, id, wf_event_bit(evs[k]));
        }
    }
}

/* Applies the new declarations (cannot fail): migrates layouts, installs
 * descriptions, rebinds lifecycle hooks, drops the hooks of the module's
 * components the build did not declare again. */
void wf_mod_commit_components(weft_world *w, weft_module *m, wf_mod_stage *g)
{
    for (uint32_t i = 0; i < g->nredecls; i++) {
        wf_mod_redecl *r = &g->redecls[i];
        if (r->action == WF_MOD_MIGRATE) {
            wf_mig_commit(w, &r->plan);
        }
        if (r->action != WF_MOD_KEEP) {
            wf_rdesc_free(w, w->reflect->comps[r->id]);
            w->reflect->comps[r->id] = r->rd;
            r->rd = NULL;
        }
        wf_mod_set_lifecycle(w, r->id, &r->lifecycle);
    }
    static const weft_lifecycle_hooks none;
    for (uint32_t i = 0; i < m->ncomps; i++) {
        if (!find_redecl(g, m->comps[i])) {
            wf_mod_set_lifecycle(w, m->comps[i], &none);
        }
    }
}

/* Room in m->comps for the components the build registered first. */
bool wf_mod_reserve_comps(weft_world *w, weft_module *m, const wf_mod_stage *g)
{
    return wf_grow(&w->alloc, (void **)&m->comps, &m->cap_comps,
                   (uint64_t)m->ncomps + (g->reg1 - g->reg0) + g->nredecls + 1,
                   sizeof *m->comps, WF_MOD_ALIGN);
}

/* The components the build registered first, and the unloaded modules'
 * ones it registered again, become the module's. */
void wf_mod_adopt_comps(weft_module *m, const wf_mod_stage *g)
{
    for (weft_component id = g->reg0 + 1; id <= g->reg1; id++) {
        m->comps[m->ncomps++] = id;
    }
    wf_modules *ms = m->app->modules;
    for (uint32_t i = 0; i < g->nredecls; i++) {
        if (!g->redecls[i].adopt) {
            continue;
        }
        m->comps[m->ncomps++] = g->redecls[i].id;
        for (uint32_t k = 0; k < ms->norphans; k++) {
            if (ms->orphans[k] == g->redecls[i].id) {
                ms->orphans[k] = ms->orphans[--ms->norphans];
                break;
            }
        }
    }
}

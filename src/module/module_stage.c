/* src/module/module_stage.c - a module's staged build.
 * SPDX-License-Identifier: MIT
 *
 * A build runs with the schedule layer's add hook set (module.h): new
 * systems are created and tracked, a name the module already has in a
 * schedule is recorded as a rebind; every schedule's declaration counts
 * are marked first, so that a failed build is undone by truncating to
 * them.
 */
#include "module/module_internal.h"

static bool same_name(const wf_system *sys, const char *name)
{
    return sys->name && name && strcmp(sys->name, name) == 0;
}

weft_node wf_mod_stage_fail(wf_mod_stage *g, weft_status st)
{
    if (g->fail == WEFT_OK) {
        g->fail = st;
    }
    return 0;
}

static weft_node stage_add(void *ctx, weft_schedule *s, const weft_system_desc *desc)
{
    wf_mod_stage *g = ctx;
    weft_module *m = g->m;
    weft_world *w = s->world;
    if (g->fail != WEFT_OK) {
        return 0;
    }
    if (!s->app_owned || s->world != m->app->world) {
        return wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_UNSUPPORTED,
                                      "%s: module '%s' added system '%s' to schedule '%s', "
                                      "which is no label of the module's app", g->fn, m->name,
                                      desc->name ? desc->name : "", s->name));
    }
    for (uint32_t i = 0; i < g->nadded; i++) {
        if (g->added[i].sched == s && same_name(g->added[i].sys, desc->name)) {
            goto dup;
        }
    }
    for (uint32_t i = 0; i < g->nrebinds; i++) {
        if (g->rebinds[i].sys->sched == s && same_name(g->rebinds[i].sys, desc->name)) {
            goto dup;
        }
    }
    for (uint32_t i = 0; i < m->nsystems; i++) {
        wf_system *sys = m->systems[i].sys;
        if (m->systems[i].sched != s || !same_name(sys, desc->name)) {
            continue;
        }
        if (sys->local_desc.size != desc->local.size ||
            sys->local_desc.align != desc->local.align) {
            return wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_INVALID_ARG,
                                          "%s: module '%s': the local state of system '%s' "
                                          "changed from %zu to %zu bytes (align %zu to %zu); "
                                          "it cannot be kept across a reload", g->fn, m->name,
                                          desc->name, sys->local_desc.size, desc->local.size,
                                          sys->local_desc.align, desc->local.align));
        }
        if (!wf_grow(&w->alloc, (void **)&g->rebinds, &g->cap_rebinds,
                     (uint64_t)g->nrebinds + 1, sizeof *g->rebinds, WF_MOD_ALIGN)) {
            return wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY,
                                          "%s: out of memory", g->fn));
        }
        /* the new declaration, compiled (and so checked) now; kept only
         * when it differs from the running one (no local: it is kept) */
        weft_system_desc nd = *desc;
        memset(&nd.local, 0, sizeof nd.local);
        wf_system *decl = wf_system_create(w, s, &nd, NULL);
        if (!decl) {
            return wf_mod_stage_fail(g, wf_error_last(w));
        }
        if (wf_system_same_decl(sys, decl)) {
            wf_system_destroy(w, decl);
            decl = NULL;
        }
        wf_mod_rebind *r = &g->rebinds[g->nrebinds++];
        r->sys = sys;
        r->fn = desc->fn;
        r->user = desc->user;
        r->init = desc->local.init;
        r->fini = desc->local.fini;
        r->decl = decl;
        return sys->node;
    }
    if (!wf_grow(&w->alloc, (void **)&g->added, &g->cap_added, (uint64_t)g->nadded + 1,
                 sizeof *g->added, WF_MOD_ALIGN)) {
        return wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory",
                                             g->fn));
    }
    weft_node n = wf_schedule_add_system_now(s, desc);
    if (!n) {
        return wf_mod_stage_fail(g, wf_error_last(w));
    }
    g->added[g->nadded].sched = s;
    g->added[g->nadded].sys = s->nodes[n - 1].sys;
    g->nadded++;
    return n;
dup:
    return wf_mod_stage_fail(g, wf_error(w, WEFT_ERR_ALREADY_EXISTS,
                                  "%s: module '%s' adds system '%s' to schedule '%s' twice",
                                  g->fn, m->name, desc->name, s->name));
}

void wf_mod_remove_sys(weft_schedule *s, wf_system *sys)
{
    wf_schedule_remove_system(s, sys->node);
}

void wf_mod_stage_free(weft_world *w, wf_mod_stage *g)
{
    for (uint32_t i = 0; i < g->nredecls; i++) {
        wf_mod_redecl *r = &g->redecls[i];
        wf_rdesc_free(w, r->rd);
        if (r->defaults) {
            wf_free(&w->alloc, r->defaults, r->size ? r->size : 1, 1);
        }
        wf_mig_free(w, &r->plan);
    }
    if (g->redecls) {
        wf_free(&w->alloc, g->redecls, g->cap_redecls * sizeof *g->redecls, WF_MOD_ALIGN);
    }
    if (g->labels0) {
        wf_free(&w->alloc, g->labels0, g->cap_labels0 * sizeof *g->labels0, WF_MOD_ALIGN);
    }
    if (g->obs_rebinds) {
        wf_free(&w->alloc, g->obs_rebinds, g->cap_obs_rebinds * sizeof *g->obs_rebinds,
                WF_MOD_ALIGN);
    }
    if (g->obs_added) {
        wf_free(&w->alloc, g->obs_added, g->cap_obs_added * sizeof *g->obs_added, WF_MOD_ALIGN);
    }
    for (uint32_t i = 0; i < g->ncond_rebinds; i++) {
        wf_system_destroy(w, g->cond_rebinds[i].decl);
    }
    if (g->cond_rebinds) {
        wf_free(&w->alloc, g->cond_rebinds, g->cap_cond_rebinds * sizeof *g->cond_rebinds,
                WF_MOD_ALIGN);
    }
    if (g->conds_added) {
        wf_free(&w->alloc, g->conds_added, g->cap_conds_added * sizeof *g->conds_added,
                WF_MOD_ALIGN);
    }
    if (g->made) {
        wf_free(&w->alloc, g->made, g->cap_made * sizeof *g->made, WF_MOD_ALIGN);
    }
    if (g->msgs) {
        wf_free(&w->alloc, g->msgs, g->cap_msgs * sizeof *g->msgs, WF_MOD_ALIGN);
    }
    if (g->adopted) {
        wf_free(&w->alloc, g->adopted, g->cap_adopted * sizeof *g->adopted, WF_MOD_ALIGN);
    }
    for (uint32_t i = 0; g->marks && i < g->nsched; i++) {
        wf_mod_mark *k = &g->marks[i];
        if (k->conds) {
            wf_free(&w->alloc, k->conds, (k->nnodes + k->nsets) * sizeof *k->conds, WF_MOD_ALIGN);
        }
    }
    if (g->marks) {
        wf_free(&w->alloc, g->marks, g->nmarks * sizeof *g->marks, WF_MOD_ALIGN);
    }
    if (g->added) {
        wf_free(&w->alloc, g->added, g->cap_added * sizeof *g->added, WF_MOD_ALIGN);
    }
    for (uint32_t i = 0; i < g->nrebinds; i++) {
        wf_system_destroy(w, g->rebinds[i].decl);
    }
    if (g->rebinds) {
        wf_free(&w->alloc, g->rebinds, g->cap_rebinds * sizeof *g->rebinds, WF_MOD_ALIGN);
    }
}

/* Is component id still referenced by something a failed build may have
 * left (a query, another component's requirement)? Then it stays. */
static bool comp_referenced(const weft_world *w, weft_component id)
{
    for (const weft_query *q = w->queries; q; q = q->next) {
        for (uint32_t t = 0; t < q->term_count; t++) {
            if (q->terms[t].id == id) {
                return true;
            }
        }
    }
    for (uint32_t c = 1; c <= w->registry.count; c++) {
        const wf_type_info *ti = w->registry.infos[c];
        for (uint32_t k = 0; k < ti->req_count; k++) {
            if (ti->reqs[k].id == id) {
                return true;
            }
        }
    }
    return false;
}

/* Unregisters the components registered since `reg0`, newest first, as
 * long as nothing uses them: no archetype holds one (archetypes are never
 * deleted), no query or requirement names one. */
static void pop_components(weft_world *w, uint32_t reg0)
{
    while (w->registry.count > reg0) {
        weft_component id = w->registry.count;
        wf_type_info *ti = w->registry.infos[id];
        if (ti->arch_count || ti->req_count || ti->removed_stream || ti->rel_targets ||
            ti->rel_source || comp_referenced(w, id)) {
            return;
        }
        wf_resource_remove(w, ti);
        wf_sparse_destroy(ti->sparse, &w->alloc);
        ti->sparse = NULL;
        if (w->reflect && id < w->reflect->comp_cap && w->reflect->comps[id]) {
            wf_rdesc_free(w, w->reflect->comps[id]);
            w->reflect->comps[id] = NULL;
        }
        if (ti->archs) {
            wf_free(&w->alloc, ti->archs, ti->arch_cap * sizeof *ti->archs, _Alignof(uint32_t));
            ti->archs = NULL;
        }
        wf_registry_pop(&w->registry, &w->alloc);
    }
}

/* Takes condition c off every node and set of its schedule. */
void wf_mod_cond_unlist(weft_condition *c)
{
    weft_schedule *s = c->sched;
    for (uint32_t n = 0; n < s->nnodes + s->nsets; n++) {
        wf_conds *l = n < s->nnodes ? &s->nodes[n].conds : &s->sets[n - s->nnodes].conds;
        for (uint32_t k = 0; k < l->n;) {
            if (l->v[k] == c) {
                memmove(&l->v[k], &l->v[k + 1], (l->n - k - 1) * sizeof *l->v);
                l->n--;
                s->dirty = true;
            } else {
                k++;
            }
        }
    }
    c->attached = false;
}

/* Retires the built-in conditions and combinators a build made: off every
 * node and set. They stay in their schedule's list, which owns them, and
 * still evaluate (weft's own code) should something hold one. */
void wf_mod_retire_made(weft_condition **made, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        weft_condition *c = made[i];
        wf_mod_cond_unlist(c);
        c->retired = true;
    }
}

/* The module's named user conditions that are operands of the
 * combinators its last build made: `attached` set to `taken`. A condition
 * has one user (a node, a set or a combinator), so a build combining one
 * again finds it free: the build releases them before it runs, a failed
 * build gives them back to the old combinators, and a committed one
 * retires those combinators and leaves them to the new build (taken or
 * free). */
static void made_operands(const weft_module *m, bool taken)
{
    for (uint32_t i = 0; i < m->nmade; i++) {
        weft_condition *ops[2] = {m->made[i]->a, m->made[i]->b};
        for (int k = 0; k < 2; k++) {
            if (ops[k] && ops[k]->kind == WF_COND_USER) {
                ops[k]->attached = taken;
            }
        }
    }
}

/* Is c one of the conditions the module's last build made? */
bool wf_mod_made_by(const weft_module *m, const weft_condition *c)
{
    for (uint32_t i = 0; i < m->nmade; i++) {
        if (m->made[i] == c) {
            return true;
        }
    }
    return false;
}

/* Unregisters the message types the failed build registered, newest
 * first, as long as the newest type is one of them (a type registered
 * after the build by something else stays, and so do those below it). */
static void pop_messages(weft_world *w, wf_mod_stage *g)
{
    while (g->nmsgs > 0 && w->messages &&
           w->messages->type_count == g->msgs[g->nmsgs - 1]) {
        wf_messages_pop(w);
        g->nmsgs--;
    }
}

/* Runs def's build with the add hook set and records what the build did
 * besides systems (components, labels). Undo with stage_undo. */
weft_status wf_mod_stage_build(weft_app *a, wf_mod_stage *g, const weft_module_def *def)
{
    weft_world *w = a->world;
    wf_sys_world *sw = wf_sys_get(w);
    if (!sw) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn);
    }
    uint32_t ns = 0;
    for (weft_schedule *s = sw->schedules; s; s = s->next) {
        ns++;
    }
    g->marks = wf_calloc(&w->alloc, (ns ? ns : 1) * sizeof *g->marks, WF_MOD_ALIGN);
    g->nmarks = g->marks ? (ns ? ns : 1) : 0;
    g->labels0 = wf_alloc(&w->alloc, (a->nlabels ? a->nlabels : 1) * sizeof *g->labels0,
                          WF_MOD_ALIGN);
    g->cap_labels0 = g->labels0 ? (a->nlabels ? a->nlabels : 1) : 0;
    if (!g->marks || !g->labels0) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn);
    }
    g->nsched = ns;
    uint32_t k = 0;
    for (weft_schedule *s = sw->schedules; s; s = s->next, k++) {
        wf_mod_mark *mk = &g->marks[k];
        memset(mk, 0, sizeof *mk);
        mk->sched = s;
        mk->nmembers = s->nmembers;
        mk->nedges = s->nedges;
        mk->namb_ok = s->namb_ok;
        if (s->nnodes + s->nsets > 0) {
            mk->conds = wf_alloc(&w->alloc, (s->nnodes + s->nsets) * sizeof *mk->conds,
                                 WF_MOD_ALIGN);
            if (!mk->conds) {
                g->nsched = k; /* the marks taken so far are freed */
                return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", g->fn);
            }
            mk->nnodes = s->nnodes;
            mk->nsets = s->nsets;
            for (uint32_t n = 0; n < s->nnodes; n++) {
                mk->conds[n] = s->nodes[n].conds.n;
            }
            for (uint32_t n = 0; n < s->nsets; n++) {
                mk->conds[s->nnodes + n] = s->sets[n].conds.n;
            }
        }
    }
    if (a->nlabels) {
        memcpy(g->labels0, a->labels, a->nlabels * sizeof *g->labels0);
    }
    g->nlabels0 = a->nlabels;
    g->seq0 = a->seq;
    g->reg0 = w->registry.count;
    made_operands(g->m, false);
    g->ran = true;
    sw->add_hook = stage_add;
    sw->add_hook_ctx = g;
    a->in_callback = true;
    w->module_build = true;
    w->module_stage = g;
    weft_status st;
    WF_CALLBACK(w, st = def->build(a, def->user));
    w->module_stage = NULL;
    w->module_build = false;
    a->in_callback = false;
    sw->add_hook = NULL;
    sw->add_hook_ctx = NULL;
    g->reg1 = w->registry.count;
    if (st == WEFT_OK && g->fail != WEFT_OK) {
        st = g->fail; /* the build went on after a refused system */
    }
    g->build_failed = st != WEFT_OK;
    return st;
}

static bool marked(const wf_mod_stage *g, const weft_schedule *s)
{
    for (uint32_t i = 0; i < g->nsched; i++) {
        if (g->marks[i].sched == s) {
            return true;
        }
    }
    return false;
}

/* Undoes everything the build did (newest first): its orderings and set
 * memberships, its new systems, the schedules and labels it created or
 * moved, the components it registered. A failure of the build itself
 * gets a message naming the module; a later refusal keeps its own. */
weft_status wf_mod_stage_undo(weft_app *a, wf_mod_stage *g, weft_status st)
{
    weft_world *w = a->world;
    char why[WF_ERROR_LEN];
    snprintf(why, sizeof why, "%s", w->last_status != WEFT_OK ? w->last_error : "");
    if (!g->ran) {
        return st; /* refused before the build ran: nothing to undo */
    }
    for (uint32_t i = 0; i < g->nsched; i++) {
        weft_schedule *s = g->marks[i].sched;
        if (s->nmembers > g->marks[i].nmembers || s->nedges > g->marks[i].nedges ||
            s->namb_ok > g->marks[i].namb_ok) {
            s->nmembers = g->marks[i].nmembers;
            s->nedges = g->marks[i].nedges;
            s->namb_ok = g->marks[i].namb_ok;
            s->dirty = true;
        }
    }
    for (uint32_t i = 0; i < g->nsched; i++) {
        const wf_mod_mark *mk = &g->marks[i];
        weft_schedule *s = mk->sched;
        for (uint32_t n = 0; n < mk->nnodes + mk->nsets; n++) {
            wf_conds *l = n < mk->nnodes ? &s->nodes[n].conds : &s->sets[n - mk->nnodes].conds;
            while (l->n > mk->conds[n]) {
                l->v[--l->n]->attached = false;
                s->dirty = true;
            }
        }
    }
    for (uint32_t i = 0; i < g->nconds_added; i++) {
        /* stays in its schedule's list, detached, with no code */
        g->conds_added[i]->attached = false;
        g->conds_added[i]->sys->cond_fn = NULL;
    }
    g->nconds_added = 0;
    wf_mod_retire_made(g->made, g->nmade);
    g->nmade = 0;
    made_operands(g->m, true);
    for (uint32_t i = g->nadded; i-- > 0;) {
        wf_mod_remove_sys(g->added[i].sched, g->added[i].sys);
    }
    g->nadded = 0;
    if (g->labels0) {
        wf_app_restore_labels(a, g->labels0, g->nlabels0, g->seq0);
    }
    wf_sys_world *sw = w->sys;
    for (weft_schedule **pp = sw ? &sw->schedules : NULL; pp && *pp;) {
        weft_schedule *s = *pp;
        if (g->marks && !marked(g, s)) {
            *pp = s->next; /* created by the build */
            wf_schedule_free(w, s);
        } else {
            pp = &s->next;
        }
    }
    for (uint32_t i = 0; i < g->nobs_added; i++) {
        wf_events_kill(&w->events, g->obs_added[i]);
    }
    g->nobs_added = 0;
    wf_events_sweep(&w->events, &w->alloc);
    pop_messages(w, g);
    pop_components(w, g->reg0);
    if (g->build_failed) {
        wf_error(w, st, "%s: the build of module '%s' failed (%s)%s%s; nothing changed", g->fn,
                 g->m->name, wf_status_name(st), why[0] ? ": " : "", why);
    } else {
        wf_error(w, st, "%s", why);
    }
    return st;
}

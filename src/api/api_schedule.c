/* src/api/api_schedule.c - schedules: declaration, conditions, build, run,
 * diagnostics and executor choice.
 * SPDX-License-Identifier: MIT
 */
#include "module/module.h"
#include "schedule/schedule.h"

#include <string.h>

#define SCHED_ALIGN _Alignof(uint64_t)

static bool sched_ok(const weft_schedule *s)
{
    return s && s->magic == WF_SCHEDULE_MAGIC && wf_world_ok(s->world);
}

/* Armor for declaration calls: valid, not running. */
static weft_status sched_decl(weft_schedule *s, const char *fn)
{
    if (!sched_ok(s)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_schedule_refuse_running(s, fn);
}

static bool grow(weft_world *w, void **v, uint32_t *cap, uint32_t need, size_t elem)
{
    return wf_grow(&w->alloc, v, cap, need, elem, SCHED_ALIGN);
}

/* ---- schedules ---- */

WEFT_API weft_schedule *weft_schedule_create(weft_world *world, const char *name)
{
    if (!wf_world_ok(world)) {
        return NULL;
    }
    if (!name || !name[0]) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_schedule_create: name is NULL or empty");
        return NULL;
    }
    return wf_schedule_create(world, name, "weft_schedule_create");
}

WEFT_API weft_schedule *weft_schedule_lookup(const weft_world *world, const char *name)
{
    if (!wf_world_ok(world)) {
        return NULL;
    }
    if (!name) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_schedule_lookup: name is NULL");
        return NULL;
    }
    return wf_schedule_find(world, name);
}

WEFT_API weft_status weft_schedule_destroy(weft_schedule *schedule)
{
    if (!schedule) {
        return WEFT_OK;
    }
    if (!sched_ok(schedule)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_world *world = schedule->world;
    if (schedule->state_owned) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_schedule_destroy: schedule '%s' belongs to a state, which "
                        "owns it for the world's lifetime", schedule->name);
    }
    if (schedule->running) {
        return wf_error(world, WEFT_ERR_WRONG_PHASE,
                        "weft_schedule_destroy: schedule '%s' is running", schedule->name);
    }
    if (schedule->app_owned) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_schedule_destroy: schedule '%s' is a label of an app, which "
                        "owns it", schedule->name);
    }
    wf_sys_world *sw = world->sys;
    for (weft_schedule **pp = &sw->schedules; *pp; pp = &(*pp)->next) {
        if (*pp == schedule) {
            *pp = schedule->next;
            break;
        }
    }
    wf_schedule_free(world, schedule);
    return WEFT_OK;
}

/* ---- nodes ---- */

WEFT_API weft_node weft_schedule_add_system(weft_schedule *schedule, const weft_system_desc *desc)
{
    if (sched_decl(schedule, "weft_schedule_add_system") != WEFT_OK) {
        return 0;
    }
    if (wf_system_desc_check(schedule->world, desc) != WEFT_OK) {
        return 0;
    }
    return wf_schedule_add_system(schedule, desc);
}

WEFT_API weft_node weft_schedule_add_apply_point(weft_schedule *schedule, const char *name)
{
    if (sched_decl(schedule, "weft_schedule_add_apply_point") != WEFT_OK) {
        return 0;
    }
    return wf_schedule_add_node(schedule, NULL, name && name[0] ? name : "apply");
}

WEFT_API weft_node weft_schedule_ensure_set(weft_schedule *schedule, const char *name)
{
    if (sched_decl(schedule, "weft_schedule_ensure_set") != WEFT_OK) {
        return 0;
    }
    weft_world *w = schedule->world;
    if (!name || !name[0]) {
        wf_error(w, WEFT_ERR_INVALID_ARG, "weft_schedule_ensure_set: name is NULL or empty");
        return 0;
    }
    for (uint32_t i = 0; i < schedule->nsets; i++) {
        if (strcmp(schedule->sets[i].name, name) == 0) {
            return WEFT_NODE_SET | (i + 1);
        }
    }
    if (!grow(w, (void **)&schedule->sets, &schedule->cap_sets, schedule->nsets + 1,
              sizeof *schedule->sets)) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory adding set '%s'", name);
        return 0;
    }
    wf_decl_set *d = &schedule->sets[schedule->nsets];
    memset(d, 0, sizeof *d);
    d->name = wf_strdup(&w->alloc, name, NULL);
    if (!d->name) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory adding set '%s'", name);
        return 0;
    }
    schedule->nsets++;
    schedule->dirty = true;
    return WEFT_NODE_SET | schedule->nsets;
}

static weft_status push_pair(weft_schedule *s, wf_decl_edge **v, uint32_t *n, uint32_t *cap,
                             weft_node a, weft_node b, uint32_t flags)
{
    /* a pair declared again adds nothing (a reloaded module's build
     * declares its orderings again on every reload) */
    for (uint32_t i = 0; i < *n; i++) {
        if ((*v)[i].a == a && (*v)[i].b == b && (*v)[i].flags == flags) {
            return WEFT_OK;
        }
    }
    if (!grow(s->world, (void **)v, cap, *n + 1, sizeof **v)) {
        return wf_error(s->world, WEFT_ERR_OUT_OF_MEMORY, "out of memory in schedule '%s'",
                        s->name);
    }
    (*v)[*n].a = a;
    (*v)[*n].b = b;
    (*v)[*n].flags = flags;
    (*n)++;
    s->dirty = true;
    return WEFT_OK;
}

WEFT_API weft_status weft_schedule_add_to_set(weft_schedule *schedule, weft_node node,
                                              weft_node set)
{
    weft_status st = sched_decl(schedule, "weft_schedule_add_to_set");
    if (st != WEFT_OK) {
        return st;
    }
    weft_world *w = schedule->world;
    if (!wf_schedule_node_ok(schedule, node, true) || !(set & WEFT_NODE_SET) ||
        !wf_schedule_node_ok(schedule, set, true)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_schedule_add_to_set: node 0x%x or set 0x%x is not in schedule '%s'",
                        node, set, schedule->name);
    }
    if (node == set) {
        return wf_error(w, WEFT_ERR_SCHEDULE_CYCLE, "weft_schedule_add_to_set: set '%s' cannot "
                        "contain itself", schedule->sets[(set & ~WEFT_NODE_SET) - 1].name);
    }
    return push_pair(schedule, &schedule->members, &schedule->nmembers, &schedule->cap_members,
                     node, set, 0);
}

/* Checks and records one ordering (weft_schedule_add_order's messages,
 * for every pair of a chain too); the schedule is valid. */
static weft_status add_order(weft_schedule *schedule, weft_node before, weft_node after,
                             uint32_t flags)
{
    weft_status st = wf_schedule_refuse_running(schedule, "weft_schedule_add_order");
    if (st != WEFT_OK) {
        return st;
    }
    weft_world *w = schedule->world;
    if (!wf_schedule_node_ok(schedule, before, true) ||
        !wf_schedule_node_ok(schedule, after, true) ||
        (flags & ~(uint32_t)WEFT_ORDER_IGNORE_DEFERRED)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_schedule_add_order: unknown node (0x%x, 0x%x) or flags 0x%x in "
                        "schedule '%s'", before, after, flags, schedule->name);
    }
    if (before == after) {
        return wf_error(w, WEFT_ERR_SCHEDULE_CYCLE,
                        "weft_schedule_add_order: '%s' cannot run before itself",
                        wf_schedule_node_name(schedule, before));
    }
    return push_pair(schedule, &schedule->edges, &schedule->nedges, &schedule->cap_edges,
                     before, after, flags);
}

WEFT_API weft_status weft_schedule_add_order(weft_schedule *schedule, weft_node before,
                                             weft_node after, uint32_t flags)
{
    if (!sched_ok(schedule)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return add_order(schedule, before, after, flags);
}

WEFT_API weft_status weft_schedule_add_chain(weft_schedule *schedule, const weft_node *nodes,
                                             int32_t count, uint32_t flags)
{
    weft_status st = sched_decl(schedule, "weft_schedule_add_chain");
    if (st != WEFT_OK) {
        return st;
    }
    if (count < 0 || (count > 0 && !nodes)) {
        return wf_error(schedule->world, WEFT_ERR_INVALID_ARG,
                        "weft_schedule_add_chain: nodes NULL or count %d negative", count);
    }
    for (int32_t i = 0; i < count; i++) {
        if (!wf_schedule_node_ok(schedule, nodes[i], true)) {
            return wf_error(schedule->world, WEFT_ERR_INVALID_ARG,
                            "weft_schedule_add_chain: node %d (0x%x) is not in schedule '%s'", i,
                            nodes[i], schedule->name);
        }
    }
    for (int32_t i = 0; i + 1 < count; i++) {
        st = add_order(schedule, nodes[i], nodes[i + 1], flags);
        if (st != WEFT_OK) {
            return st;
        }
    }
    return WEFT_OK;
}

WEFT_API weft_status weft_schedule_add_ambiguous_pair(weft_schedule *schedule, weft_node a,
                                                      weft_node b)
{
    weft_status st = sched_decl(schedule, "weft_schedule_add_ambiguous_pair");
    if (st != WEFT_OK) {
        return st;
    }
    if (!wf_schedule_node_ok(schedule, a, true) || !wf_schedule_node_ok(schedule, b, true)) {
        return wf_error(schedule->world, WEFT_ERR_INVALID_ARG,
                        "weft_schedule_add_ambiguous_pair: unknown node in schedule '%s'",
                        schedule->name);
    }
    return push_pair(schedule, &schedule->amb_ok, &schedule->namb_ok, &schedule->cap_amb_ok, a,
                     b, 0);
}

WEFT_API weft_status weft_schedule_add_ambiguous_component(weft_schedule *schedule,
                                                           weft_component c)
{
    weft_status st = sched_decl(schedule, "weft_schedule_add_ambiguous_component");
    if (st != WEFT_OK) {
        return st;
    }
    weft_world *w = schedule->world;
    if (!grow(w, (void **)&schedule->ignored, &schedule->cap_ignored, schedule->nignored + 1,
              sizeof *schedule->ignored)) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory in schedule '%s'",
                        schedule->name);
    }
    schedule->ignored[schedule->nignored++] = c;
    schedule->dirty = true;
    return WEFT_OK;
}

WEFT_API weft_status weft_schedule_set_auto_sync(weft_schedule *schedule, bool on)
{
    weft_status st = sched_decl(schedule, "weft_schedule_set_auto_sync");
    if (st == WEFT_OK && schedule->auto_sync != on) {
        schedule->auto_sync = on;
        schedule->dirty = true;
    }
    return st;
}

WEFT_API weft_status weft_schedule_set_apply_final(weft_schedule *schedule, bool on)
{
    weft_status st = sched_decl(schedule, "weft_schedule_set_apply_final");
    if (st == WEFT_OK) {
        schedule->apply_final = on;
    }
    return st;
}

WEFT_API weft_status weft_schedule_set_profiling(weft_schedule *schedule, bool on)
{
    weft_status st = sched_decl(schedule, "weft_schedule_set_profiling");
    if (st == WEFT_OK) {
        schedule->profiling = on;
    }
    return st;
}

WEFT_API weft_status weft_schedule_apply_pending(weft_schedule *schedule)
{
    if (!sched_ok(schedule)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_world *world = schedule->world;
    if (schedule->running || world->iter_depth) {
        return wf_error(world, WEFT_ERR_WRONG_PHASE,
                        "weft_schedule_apply_pending: not while the schedule runs or an "
                        "iteration is open");
    }
    return wf_schedule_apply_pending(world, schedule);
}

/* ---- conditions ---- */

static weft_condition *cond_new(weft_schedule *s, uint8_t kind)
{
    weft_condition *c = wf_condition_new(s, kind);
    if (c && kind != WF_COND_USER && s->world->module_build &&
        !wf_module_condition_made(s->world, c)) {
        return NULL; /* stays in the schedule's list, unattached */
    }
    return c;
}

WEFT_API weft_condition *weft_condition_create(weft_schedule *schedule,
                                               const weft_condition_desc *desc)
{
    if (sched_decl(schedule, "weft_condition_create") != WEFT_OK) {
        return NULL;
    }
    weft_world *w = schedule->world;
    if (!desc || desc->_start_canary || desc->_end_canary || !desc->fn) {
        wf_error(w, WEFT_ERR_INVALID_ARG,
                 "weft_condition_create: desc NULL, canary not 0 or fn missing");
        return NULL;
    }
    weft_condition *again;
    if (w->module_build && wf_module_condition(w, schedule, desc, &again)) {
        return again; /* the module's condition, rebound when the reload commits */
    }
    wf_system *sys = wf_system_create(schedule->world, schedule, NULL, desc);
    if (!sys) {
        return NULL;
    }
    weft_condition *c = cond_new(schedule, WF_COND_USER);
    if (!c) {
        wf_system_destroy(w, sys);
        return NULL;
    }
    c->sys = sys;
    if (w->module_build && !wf_module_condition_added(w, c)) {
        c->sys->cond_fn = NULL; /* stays in the schedule's list, never attached */
        return NULL;
    }
    return c;
}

static bool cond_take(weft_schedule *s, weft_condition *c, const char *fn)
{
    if (!c || c->sched != s) {
        wf_error(s->world, WEFT_ERR_INVALID_ARG,
                 "%s: condition NULL or of another schedule", fn);
        return false;
    }
    if (c->attached) {
        wf_error(s->world, WEFT_ERR_ALREADY_EXISTS, "%s: the condition is already attached",
                 fn);
        return false;
    }
    return true;
}

static weft_condition *combine(weft_schedule *s, uint8_t kind, weft_condition *a,
                               weft_condition *b, const char *fn)
{
    if (sched_decl(s, fn) != WEFT_OK || !cond_take(s, a, fn) ||
        (kind != WF_COND_NOT && (!cond_take(s, b, fn) || a == b))) {
        if (sched_ok(s) && a && a == b) {
            wf_error(s->world, WEFT_ERR_INVALID_ARG, "%s: both operands are one condition",
                     fn);
        }
        return NULL;
    }
    weft_condition *c = cond_new(s, kind);
    if (c) {
        c->a = a;
        c->b = b;
        a->attached = true;
        if (b) {
            b->attached = true;
        }
    }
    return c;
}

WEFT_API weft_condition *weft_condition_and(weft_schedule *schedule, weft_condition *a,
                                            weft_condition *b)
{
    return combine(schedule, WF_COND_AND, a, b, "weft_condition_and");
}

WEFT_API weft_condition *weft_condition_and_eager(weft_schedule *schedule, weft_condition *a,
                                                  weft_condition *b)
{
    return combine(schedule, WF_COND_AND_EAGER, a, b, "weft_condition_and_eager");
}

WEFT_API weft_condition *weft_condition_or(weft_schedule *schedule, weft_condition *a,
                                           weft_condition *b)
{
    return combine(schedule, WF_COND_OR, a, b, "weft_condition_or");
}

WEFT_API weft_condition *weft_condition_not(weft_schedule *schedule, weft_condition *a)
{
    return combine(schedule, WF_COND_NOT, a, NULL, "weft_condition_not");
}

WEFT_API weft_condition *weft_condition_run_once(weft_schedule *schedule)
{
    if (sched_decl(schedule, "weft_condition_run_once") != WEFT_OK) {
        return NULL;
    }
    return cond_new(schedule, WF_COND_RUN_ONCE);
}

static weft_condition *res_cond(weft_schedule *s, weft_component r, uint8_t kind,
                                const char *fn)
{
    if (sched_decl(s, fn) != WEFT_OK) {
        return NULL;
    }
    if (!wf_registry_get(&s->world->registry, r)) {
        wf_error(s->world, WEFT_ERR_NOT_FOUND, "%s: resource id %u is not registered", fn, r);
        return NULL;
    }
    weft_condition *c = cond_new(s, kind);
    if (c) {
        c->res = r;
    }
    return c;
}

WEFT_API weft_condition *weft_condition_resource_changed(weft_schedule *schedule,
                                                         weft_component r)
{
    return res_cond(schedule, r, WF_COND_RES_CHANGED, "weft_condition_resource_changed");
}

WEFT_API weft_condition *weft_condition_resource_exists(weft_schedule *schedule,
                                                        weft_component r)
{
    return res_cond(schedule, r, WF_COND_RES_EXISTS, "weft_condition_resource_exists");
}

WEFT_API weft_condition *weft_condition_on_message(weft_schedule *schedule,
                                                   weft_message_type type)
{
    if (sched_decl(schedule, "weft_condition_on_message") != WEFT_OK) {
        return NULL;
    }
    if (!wf_messages_type(schedule->world, type)) {
        wf_error(schedule->world, WEFT_ERR_NOT_FOUND,
                 "weft_condition_on_message: message type %u is not registered", type);
        return NULL;
    }
    weft_condition *c = cond_new(schedule, WF_COND_ON_MESSAGE);
    if (c) {
        c->msg = type;
    }
    return c;
}

WEFT_API weft_status weft_schedule_add_condition(weft_schedule *schedule, weft_node node,
                                                 weft_condition *cond)
{
    weft_status st = sched_decl(schedule, "weft_schedule_add_condition");
    if (st != WEFT_OK) {
        return st;
    }
    weft_world *w = schedule->world;
    if (!wf_schedule_node_ok(schedule, node, true)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_schedule_add_condition: node 0x%x is not in schedule "
                        "'%s'", node, schedule->name);
    }
    wf_conds *list = (node & WEFT_NODE_SET) ? &schedule->sets[(node & ~WEFT_NODE_SET) - 1].conds
                                            : &schedule->nodes[node - 1].conds;
    if (w->module_build && cond && cond->attached) {
        for (uint32_t i = 0; i < list->n; i++) {
            if (list->v[i] == cond) {
                return WEFT_OK; /* a reloaded module declares it again */
            }
        }
    }
    if (!cond_take(schedule, cond, "weft_schedule_add_condition")) {
        return wf_error_last(w);
    }
    if (!wf_conds_push(w, list, cond)) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory attaching a condition");
    }
    cond->attached = true;
    schedule->dirty = true;
    return WEFT_OK;
}

/* ---- build, run ---- */

WEFT_API weft_status weft_schedule_build(weft_schedule *schedule)
{
    if (!sched_ok(schedule)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_schedule_build(schedule);
}

WEFT_API uint32_t weft_schedule_build_count(const weft_schedule *schedule)
{
    return sched_ok(schedule) ? schedule->builds : 0;
}

WEFT_API weft_status weft_schedule_run(weft_schedule *schedule, double dt)
{
    if (!sched_ok(schedule)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_world *world = schedule->world;
    return wf_schedule_run(world, schedule, dt);
}

WEFT_API weft_status weft_schedule_run_skip(weft_schedule *schedule,
                                            double dt, const weft_node *skip,
                                            int32_t count)
{
    if (!sched_ok(schedule)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_world *world = schedule->world;
    if (count < 0 || (count > 0 && !skip)) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_schedule_run_skip: skip NULL or count %d negative", count);
    }
    if (schedule->running) {
        return wf_error(world, WEFT_ERR_WRONG_PHASE,
                        "weft_schedule_run_skip: schedule '%s' is already running",
                        schedule->name);
    }
    for (int32_t i = 0; i < count; i++) {
        if (!wf_schedule_node_ok(schedule, skip[i], false) ||
            !schedule->nodes[skip[i] - 1].sys) {
            return wf_error(world, WEFT_ERR_INVALID_ARG,
                            "weft_schedule_run_skip: node 0x%x is not a system of '%s'",
                            skip[i], schedule->name);
        }
    }
    for (int32_t i = 0; i < count; i++) {
        schedule->nodes[skip[i] - 1].sys->skip_once = true;
    }
    weft_status st = wf_schedule_run(world, schedule, dt);
    for (int32_t i = 0; i < count; i++) {
        schedule->nodes[skip[i] - 1].sys->skip_once = false; /* a refused run */
    }
    return st;
}

/* ---- stepping ---- */

/* Armor for stepping calls: valid and not running. */
static weft_status step_armor(weft_schedule *s, const char *fn, bool need_on)
{
    weft_status st = sched_decl(s, fn);
    if (st != WEFT_OK) {
        return st;
    }
    if (need_on && !s->stepping) {
        return wf_error(s->world, WEFT_ERR_WRONG_PHASE,
                        "%s: stepping is off for schedule '%s' (weft_schedule_set_stepping)", fn,
                        s->name);
    }
    return WEFT_OK;
}

WEFT_API weft_status weft_schedule_set_stepping(weft_schedule *schedule, bool on)
{
    weft_status st = step_armor(schedule, "weft_schedule_set_stepping", false);
    if (st != WEFT_OK) {
        return st;
    }
    if (on != schedule->stepping) {
        schedule->stepping = on;
        schedule->step_action = WF_STEP_WAIT;
        schedule->step_cursor = 0;
        schedule->step_builds = schedule->builds;
    }
    return WEFT_OK;
}

WEFT_API bool weft_schedule_is_stepping(const weft_schedule *schedule)
{
    return sched_ok(schedule) && schedule->stepping;
}

WEFT_API weft_status weft_schedule_step(weft_schedule *schedule)
{
    weft_status st = step_armor(schedule, "weft_schedule_step", true);
    if (st == WEFT_OK) {
        schedule->step_action = WF_STEP_ONE;
    }
    return st;
}

WEFT_API weft_status weft_schedule_continue(weft_schedule *schedule)
{
    weft_status st = step_armor(schedule, "weft_schedule_continue", true);
    if (st == WEFT_OK) {
        schedule->step_action = WF_STEP_CONTINUE;
    }
    return st;
}

WEFT_API weft_status weft_schedule_set_step_behavior(weft_schedule *schedule, weft_node node,
                                                     weft_step_behavior behavior)
{
    weft_status st = step_armor(schedule, "weft_schedule_set_step_behavior", false);
    if (st != WEFT_OK) {
        return st;
    }
    if (!wf_schedule_node_ok(schedule, node, false) || !schedule->nodes[node - 1].sys) {
        return wf_error(schedule->world, WEFT_ERR_INVALID_ARG,
                        "weft_schedule_set_step_behavior: node 0x%x is not a system of '%s'",
                        node, schedule->name);
    }
    if ((uint32_t)behavior > (uint32_t)WEFT_STEP_BREAK) {
        return wf_error(schedule->world, WEFT_ERR_INVALID_ARG,
                        "weft_schedule_set_step_behavior: behavior %d is unknown", (int)behavior);
    }
    schedule->nodes[node - 1].step = (uint8_t)behavior;
    return WEFT_OK;
}

WEFT_API weft_step_behavior weft_schedule_step_behavior(const weft_schedule *schedule,
                                                        weft_node node)
{
    if (!sched_ok(schedule)) {
        return WEFT_STEP_DEFAULT;
    }
    if (!wf_schedule_node_ok(schedule, node, false)) {
        wf_error(schedule->world, WEFT_ERR_INVALID_ARG,
                 "weft_schedule_step_behavior: node 0x%x is not a node of '%s'", node,
                 schedule->name);
        return WEFT_STEP_DEFAULT;
    }
    const wf_decl_node *n = &schedule->nodes[node - 1];
    return n->sys ? (weft_step_behavior)n->step : WEFT_STEP_ALWAYS_RUN;
}

WEFT_API weft_node weft_schedule_step_cursor(const weft_schedule *schedule)
{
    if (!sched_ok(schedule) || !schedule->stepping || !schedule->built || schedule->dirty) {
        return 0;
    }
    uint32_t p = wf_stepping_next(schedule);
    return p < schedule->plan.n ? schedule->plan.steps[p].sys->node : 0;
}

/* ---- diagnostics ---- */

WEFT_API int32_t weft_schedule_node_count(const weft_schedule *schedule)
{
    return sched_ok(schedule) ? (int32_t)schedule->nnodes : 0;
}

WEFT_API const char *weft_schedule_node_name(const weft_schedule *schedule, weft_node node)
{
    if (!sched_ok(schedule) || !wf_schedule_node_ok(schedule, node, true)) {
        return NULL;
    }
    return wf_schedule_node_name(schedule, node);
}

WEFT_API int32_t weft_schedule_position(const weft_schedule *schedule, weft_node node)
{
    if (!sched_ok(schedule) || !schedule->built || (node & WEFT_NODE_SET) ||
        !wf_schedule_node_ok(schedule, node, false)) {
        return -1;
    }
    return (int32_t)schedule->graph.pos_of[node - 1];
}

WEFT_API int32_t weft_schedule_sync_count(const weft_schedule *schedule)
{
    return sched_ok(schedule) && schedule->built ? (int32_t)schedule->plan.nsync : -1;
}

WEFT_API bool weft_schedule_has_edge(const weft_schedule *schedule, weft_node before,
                                     weft_node after)
{
    if (!sched_ok(schedule) || !schedule->built || !wf_schedule_node_ok(schedule, before, false) ||
        !wf_schedule_node_ok(schedule, after, false)) {
        return false;
    }
    return wf_sg_has_edge(&schedule->graph, before - 1, after - 1);
}

WEFT_API int32_t weft_schedule_ambiguity_count(const weft_schedule *schedule)
{
    return sched_ok(schedule) && schedule->built ? (int32_t)schedule->plan.namb : -1;
}

WEFT_API weft_status weft_schedule_ambiguity(const weft_schedule *schedule, int32_t i,
                                             weft_ambiguity *out)
{
    if (!sched_ok(schedule)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out || !schedule->built || i < 0 || (uint32_t)i >= schedule->plan.namb) {
        return wf_error(schedule->world, WEFT_ERR_INVALID_ARG,
                        "weft_schedule_ambiguity: index %d out of range or out NULL", i);
    }
    *out = schedule->plan.amb[i];
    return WEFT_OK;
}

WEFT_API weft_status weft_schedule_system_stats(const weft_schedule *schedule, weft_node node,
                                                weft_system_stats *out)
{
    if (!sched_ok(schedule)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out || !wf_schedule_node_ok(schedule, node, false) ||
        !schedule->nodes[node - 1].sys) {
        return wf_error(schedule->world, WEFT_ERR_INVALID_ARG,
                        "weft_schedule_system_stats: node 0x%x is not a system of '%s' or out "
                        "is NULL", node, schedule->name);
    }
    *out = schedule->nodes[node - 1].sys->stats;
    return WEFT_OK;
}

WEFT_API int32_t weft_schedule_max_concurrency(const weft_schedule *schedule)
{
    return sched_ok(schedule) ? schedule->max_conc : 0;
}

WEFT_API size_t weft_schedule_trace_json(const weft_schedule *schedule, char *buf, size_t cap)
{
    return sched_ok(schedule) ? wf_schedule_trace(schedule, buf, cap) : 0;
}

WEFT_API size_t weft_schedule_dot(const weft_schedule *schedule, char *buf, size_t cap)
{
    return sched_ok(schedule) && schedule->built ? wf_schedule_dot(schedule, buf, cap) : 0;
}

/* ---- executors ---- */

WEFT_API weft_status weft_world_set_threads(weft_world *world, int32_t threads)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_exec_set_threads(world, threads);
}

WEFT_API weft_status weft_world_set_job_system(weft_world *world, const weft_job_system *jobs)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_exec_set_jobs(world, jobs);
}

WEFT_API weft_status weft_world_share_threads(weft_world *world, weft_world *lender)
{
    if (!wf_world_ok(world) || (lender && !wf_world_ok(lender))) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_world_share_threads")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    return wf_exec_share(world, lender);
}

WEFT_API int32_t weft_world_threads(const weft_world *world)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    if (!world->sys) {
        return 1;
    }
    return world->sys->lender ? world->sys->lender->sys->threads : world->sys->threads;
}

WEFT_API int32_t weft_max_threads(void)
{
#if WEFT_THREADS
    return (int32_t)WF_POOL_MAX_WORKERS;
#else
    return 1;
#endif
}

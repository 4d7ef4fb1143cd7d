/* src/schedule/schedule.c - building a schedule into a plan.
 * SPDX-License-Identifier: MIT
 *
 * A build starts from the declarations each time (they are small): it
 * feeds a fresh schedule graph with one node per system or apply point
 * (its access: the system's own plus that of its conditions and of the
 * conditions of every set above it, all as reads), the sets, memberships
 * and orderings, and lets the graph order conflicting pairs, report
 * ambiguities and insert sync points. The plan then turns the graph's
 * topological order into steps and adds the barrier edges that make sync
 * points and exclusive systems run alone (see schedule.h).
 */
#include "schedule/schedule.h"

#include <string.h>

/* ---- the world's system state ---- */

static void sys_world_fini(weft_world *w)
{
    wf_sys_world *sw = w->sys;
    while (sw->schedules) {
        weft_schedule *s = sw->schedules;
        sw->schedules = s->next;
        wf_schedule_free(w, s);
    }
    wf_exec_release(w);
    wf_free(&w->alloc, sw, sizeof *sw, _Alignof(wf_sys_world));
    w->sys = NULL;
    w->sys_fini = NULL;
    w->sys_clamp = NULL;
}

/* The world's tick clamp reaches the ticks kept here through this hook:
 * every system's and condition's last run (a system's queries are world
 * queries, clamped by the world itself). */
static void sys_world_clamp(weft_world *w, uint32_t now)
{
    for (weft_schedule *s = w->sys->schedules; s; s = s->next) {
        for (uint32_t i = 0; i < s->nnodes; i++) {
            if (s->nodes[i].sys) {
                wf_tick_clamp(&s->nodes[i].sys->last_run, now);
            }
        }
        for (weft_condition *c = s->conds; c; c = c->next) {
            wf_tick_clamp(&c->last_run, now);
            if (c->sys) {
                wf_tick_clamp(&c->sys->last_run, now);
            }
        }
    }
}

wf_sys_world *wf_sys_get(weft_world *w)
{
    if (!w->sys) {
        wf_sys_world *sw = wf_calloc(&w->alloc, sizeof *sw, _Alignof(wf_sys_world));
        if (!sw) {
            wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory creating scheduler state");
            return NULL;
        }
        sw->threads = 1;
        w->sys = sw;
        w->sys_fini = sys_world_fini;
        w->sys_clamp = sys_world_clamp;
    }
    return w->sys;
}

weft_schedule *wf_schedule_find(const weft_world *w, const char *name)
{
    for (weft_schedule *s = w->sys ? w->sys->schedules : NULL; s; s = s->next) {
        if (strcmp(s->name, name) == 0) {
            return s;
        }
    }
    return NULL;
}

weft_schedule *wf_schedule_create(weft_world *w, const char *name, const char *fn)
{
    wf_sys_world *sw = wf_sys_get(w);
    if (!sw) {
        return NULL;
    }
    if (wf_schedule_find(w, name)) {
        wf_error(w, WEFT_ERR_ALREADY_EXISTS, "%s: a schedule named '%s' exists", fn, name);
        return NULL;
    }
    size_t n = strlen(name);
    weft_schedule *s = wf_calloc(&w->alloc, sizeof *s, _Alignof(weft_schedule));
    char *nm = s ? wf_alloc(&w->alloc, n + 1, 1) : NULL;
    if (!nm) {
        if (s) {
            wf_free(&w->alloc, s, sizeof *s, _Alignof(weft_schedule));
        }
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory creating schedule '%s'", fn,
                 name);
        return NULL;
    }
    memcpy(nm, name, n + 1);
    s->magic = WF_SCHEDULE_MAGIC;
    s->world = w;
    s->name = nm;
    s->auto_sync = true;
    s->apply_final = true;
    s->dirty = true;
    s->next = sw->schedules;
    sw->schedules = s;
    return s;
}

weft_node wf_schedule_add_node(weft_schedule *s, wf_system *sys, const char *name)
{
    weft_world *w = s->world;
    if (!wf_grow(&w->alloc, (void **)&s->nodes, &s->cap_nodes, (uint64_t)s->nnodes + 1,
                 sizeof *s->nodes, _Alignof(uint64_t))) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory adding to schedule '%s'", s->name);
        return 0;
    }
    wf_decl_node *d = &s->nodes[s->nnodes];
    memset(d, 0, sizeof *d);
    d->sys = sys;
    if (!sys) {
        const char *nm = name ? name : "apply";
        size_t n = strlen(nm);
        d->name = wf_alloc(&w->alloc, n + 1, 1);
        if (!d->name) {
            wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory adding to schedule '%s'",
                     s->name);
            return 0;
        }
        memcpy(d->name, nm, n + 1);
    }
    s->nnodes++;
    s->dirty = true;
    if (sys) {
        sys->node = s->nnodes;
    }
    return s->nnodes;
}

weft_node wf_schedule_add_system(weft_schedule *s, const weft_system_desc *desc)
{
    wf_sys_world *sw = s->world->sys;
    if (sw && sw->add_hook) {
        return sw->add_hook(sw->add_hook_ctx, s, desc);
    }
    return wf_schedule_add_system_now(s, desc);
}

static void plan_free(weft_world *w, weft_schedule *s);
static void conds_free(weft_world *w, wf_conds *c);

/* Drops the pairs of `v` that name node n and moves later nodes down. */
static uint32_t edges_remove_node(wf_decl_edge *v, uint32_t count, weft_node n)
{
    uint32_t out = 0;
    for (uint32_t i = 0; i < count; i++) {
        wf_decl_edge e = v[i];
        if (e.a == n || e.b == n) {
            continue;
        }
        if (!(e.a & WEFT_NODE_SET) && e.a > n) {
            e.a--;
        }
        if (!(e.b & WEFT_NODE_SET) && e.b > n) {
            e.b--;
        }
        v[out++] = e;
    }
    return out;
}

void wf_schedule_remove_system(weft_schedule *s, weft_node n)
{
    weft_world *w = s->world;
    uint32_t k = n - 1;
    wf_decl_node *d = &s->nodes[k];
    plan_free(w, s);
    for (uint32_t c = 0; c < d->conds.n; c++) {
        d->conds.v[c]->attached = false;
    }
    conds_free(w, &d->conds);
    wf_system_destroy(w, d->sys);
    memmove(&s->nodes[k], &s->nodes[k + 1], (size_t)(s->nnodes - k - 1) * sizeof *s->nodes);
    s->nnodes--;
    for (uint32_t i = k; i < s->nnodes; i++) {
        if (s->nodes[i].sys) {
            s->nodes[i].sys->node = i + 1;
        }
    }
    s->nmembers = edges_remove_node(s->members, s->nmembers, n);
    s->nedges = edges_remove_node(s->edges, s->nedges, n);
    s->namb_ok = edges_remove_node(s->amb_ok, s->namb_ok, n);
    s->dirty = true;
}

weft_node wf_schedule_add_system_now(weft_schedule *s, const weft_system_desc *desc)
{
    wf_system *sys = wf_system_create(s->world, s, desc, NULL);
    if (!sys) {
        return 0;
    }
    weft_node n = wf_schedule_add_node(s, sys, NULL);
    if (!n) {
        wf_system_destroy(s->world, sys);
    }
    return n;
}

weft_condition *wf_condition_new(weft_schedule *s, uint8_t kind)
{
    weft_world *w = s->world;
    weft_condition *c = wf_calloc(&w->alloc, sizeof *c, _Alignof(weft_condition));
    if (!c) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory creating a condition");
        return NULL;
    }
    c->sched = s;
    c->kind = kind;
    c->last_run = w->change_tick - WEFT_MAX_CHANGE_AGE;
    c->next = s->conds;
    s->conds = c;
    return c;
}

/* Appends the system's access blocks (queries, resources, messages) to
 * node `node` of g; `reads_only` turns writes into reads (conditions). */
static weft_status system_access(const wf_system *sys, wf_sgraph *g, uint32_t node,
                                 bool reads_only)
{
    for (int32_t i = 0; i < sys->nqueries; i++) {
        wf_qacc a;
        wf_query_access(sys->queries[i], &a);
        uint32_t reads[2 * WEFT_MAX_TERMS];
        uint32_t nr = a.nr;
        memcpy(reads, a.reads, nr * sizeof *reads);
        if (reads_only) {
            memcpy(reads + nr, a.writes, a.nw * sizeof *reads);
            nr += a.nw;
        }
        wf_sg_access acc = {reads, nr, a.writes, reads_only ? 0 : a.nw,
                            a.with, a.nwith, a.without, a.nwithout};
        weft_status st = wf_sg_add_access(g, node, &acc);
        if (st != WEFT_OK) {
            return st;
        }
    }
    uint32_t n = (uint32_t)(sys->nres + sys->nmsgs);
    if (n == 0) {
        return WEFT_OK;
    }
    uint32_t ids_r[WEFT_MAX_SYSTEM_RESOURCES + WEFT_MAX_SYSTEM_MESSAGES];
    uint32_t ids_w[WEFT_MAX_SYSTEM_RESOURCES + WEFT_MAX_SYSTEM_MESSAGES];
    uint32_t nr = 0, nw = 0;
    for (int32_t i = 0; i < sys->nres; i++) {
        if (sys->res[i].access == WEFT_ACCESS_WRITE && !reads_only) {
            ids_w[nw++] = sys->res[i].id;
        } else {
            ids_r[nr++] = sys->res[i].id;
        }
    }
    for (int32_t i = 0; i < sys->nmsgs; i++) {
        uint32_t id = WF_MSG_ACCESS(sys->msgs[i].type);
        /* a reader advances only its own cursor: reading a message type is
         * a read of the queue */
        if (sys->msgs[i].access == WEFT_ACCESS_WRITE && !reads_only) {
            ids_w[nw++] = id;
        } else {
            ids_r[nr++] = id;
        }
    }
    wf_sg_access acc = {ids_r, nr, ids_w, nw, NULL, 0, NULL, 0};
    return wf_sg_add_access(g, node, &acc);
}


#define SCHED_ALIGN _Alignof(uint64_t)

bool wf_conds_push(weft_world *w, wf_conds *c, weft_condition *cond)
{
    if (!wf_grow(&w->alloc, (void **)&c->v, &c->cap, c->n + 1, sizeof *c->v,
                 _Alignof(weft_condition *))) {
        return false;
    }
    c->v[c->n++] = cond;
    return true;
}

static void conds_free(weft_world *w, wf_conds *c)
{
    if (c->v) {
        wf_free(&w->alloc, c->v, c->cap * sizeof *c->v, _Alignof(weft_condition *));
    }
    memset(c, 0, sizeof *c);
}

bool wf_schedule_node_ok(const weft_schedule *s, weft_node n, bool sets_ok)
{
    if (n & WEFT_NODE_SET) {
        uint32_t i = n & ~WEFT_NODE_SET;
        return sets_ok && i >= 1 && i <= s->nsets;
    }
    return n >= 1 && n <= s->nnodes;
}

const char *wf_schedule_node_name(const weft_schedule *s, weft_node n)
{
    if (n & WEFT_NODE_SET) {
        return s->sets[(n & ~WEFT_NODE_SET) - 1].name;
    }
    const wf_decl_node *d = &s->nodes[n - 1];
    return d->sys ? d->sys->name : d->name;
}

weft_status wf_schedule_refuse_running(const weft_schedule *s, const char *fn)
{
    if (s->running) {
        return wf_error(s->world, WEFT_ERR_WRONG_PHASE, "%s: schedule '%s' is running", fn,
                        s->name);
    }
    return WEFT_OK;
}

weft_status wf_system_desc_check(weft_world *w, const weft_system_desc *desc)
{
    if (!desc) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "weft_schedule_add_system: desc is NULL");
    }
    if (desc->_start_canary || desc->_end_canary) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_schedule_add_system: descriptor canary is not 0 (zero-initialise "
                        "it)");
    }
    if (!desc->fn) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_schedule_add_system: system '%s' has no fn",
                        desc->name ? desc->name : "");
    }
    return WEFT_OK;
}

static uint32_t sg_ref(weft_node n)
{
    return (n & WEFT_NODE_SET) ? WF_SG_SET_REF((n & ~WEFT_NODE_SET) - 1) : n - 1;
}

/* ---- plan ---- */

static void plan_free(weft_world *w, weft_schedule *s)
{
    wf_plan *p = &s->plan;
    wf_allocator *a = &w->alloc;
    uint32_t n1 = p->n ? p->n : 1;
    if (p->steps) {
        wf_free(a, p->steps, n1 * sizeof *p->steps, SCHED_ALIGN);
    }
    if (p->succ) {
        wf_free(a, p->succ, (p->nsucc ? p->nsucc : 1) * sizeof *p->succ, SCHED_ALIGN);
    }
    if (p->sets) {
        wf_free(a, p->sets, (p->nsets_ref ? p->nsets_ref : 1) * sizeof *p->sets, SCHED_ALIGN);
    }
    if (p->set_first) {
        wf_free(a, p->set_first, (p->nset_slots ? p->nset_slots : 1) * sizeof *p->set_first,
                SCHED_ALIGN);
    }
    if (p->amb) {
        wf_free(a, p->amb, (p->namb ? p->namb : 1) * sizeof *p->amb, SCHED_ALIGN);
    }
    if (p->amb_ids) {
        wf_free(a, p->amb_ids, (p->namb_ids ? p->namb_ids : 1) * sizeof *p->amb_ids,
                SCHED_ALIGN);
    }
    if (s->remaining) {
        wf_free(a, s->remaining, n1 * sizeof *s->remaining, WF_CACHE_LINE);
    }
    if (s->set_state) {
        wf_free(a, s->set_state, (p->nset_slots ? p->nset_slots : 1) * sizeof *s->set_state,
                SCHED_ALIGN);
    }
    if (s->readyq) {
        wf_free(a, s->readyq, n1 * sizeof *s->readyq, SCHED_ALIGN);
    }
    if (s->mq) {
        wf_free(a, s->mq, n1 * sizeof *s->mq, SCHED_ALIGN);
    }
    s->mq = NULL;
    if (s->pending) {
        wf_free(a, s->pending, n1, 1);
    }
    s->pending = NULL;
    memset(p, 0, sizeof *p);
    s->remaining = NULL;
    s->set_state = NULL;
    s->readyq = NULL;
    if (s->built) {
        wf_sg_fini(&s->graph);
    }
    s->built = false;
}

/* Sets above node `child` (a weft_node), transitively, as a bitmap over
 * set indices (`mark` has nsets bytes, cleared by the caller). */
static void sets_above(const weft_schedule *s, weft_node child, uint8_t *mark)
{
    for (uint32_t i = 0; i < s->nmembers; i++) {
        if (s->members[i].a == child) {
            uint32_t set = (s->members[i].b & ~WEFT_NODE_SET) - 1;
            if (!mark[set]) {
                mark[set] = 1;
                sets_above(s, s->members[i].b, mark);
            }
        }
    }
}

/* Adds the read access of a condition tree to graph node `node`. */
static weft_status cond_access(weft_condition *c, wf_sgraph *g, uint32_t node)
{
    if (!c) {
        return WEFT_OK;
    }
    switch (c->kind) {
    case WF_COND_USER:
        return system_access(c->sys, g, node, true);
    case WF_COND_RES_CHANGED:
    case WF_COND_RES_EXISTS:
    case WF_COND_RES_U32_EQ: {
        uint32_t id = c->res;
        wf_sg_access acc = {&id, 1, NULL, 0, NULL, 0, NULL, 0};
        return wf_sg_add_access(g, node, &acc);
    }
    case WF_COND_ON_MESSAGE: {
        uint32_t id = WF_MSG_ACCESS(c->msg);
        wf_sg_access acc = {&id, 1, NULL, 0, NULL, 0, NULL, 0};
        return wf_sg_add_access(g, node, &acc);
    }
    default: {
        weft_status st = cond_access(c->a, g, node);
        return st != WEFT_OK ? st : cond_access(c->b, g, node);
    }
    }
}

/* Fills graph g from the declarations. */
static weft_status feed_graph(weft_schedule *s, wf_sgraph *g, uint8_t *mark)
{
    weft_status st = WEFT_OK;
    for (uint32_t k = 0; k < s->nnodes && st == WEFT_OK; k++) {
        const wf_decl_node *d = &s->nodes[k];
        memset(mark, 0, s->nsets ? s->nsets : 1);
        sets_above(s, k + 1, mark);
        bool under_cond = d->conds.n > 0;
        for (uint32_t i = 0; i < s->nsets; i++) {
            under_cond |= mark[i] && s->sets[i].conds.n > 0;
        }
        uint32_t flags = under_cond ? WF_SG_CONDITION : 0;
        if (d->sys) {
            flags |= (d->sys->flags & WEFT_SYSTEM_EXCLUSIVE) ? WF_SG_EXCLUSIVE : 0;
            flags |= (d->sys->flags & WEFT_SYSTEM_COMMANDS) ? WF_SG_DEFERRED : 0;
        } else {
            flags |= WF_SG_APPLY;
        }
        uint32_t id = wf_sg_add_node(g, d->sys ? d->sys->name : d->name, flags);
        if (id == WF_SG_NONE) {
            return WEFT_ERR_OUT_OF_MEMORY;
        }
        if (d->sys) {
            st = system_access(d->sys, g, id, false);
        }
        for (uint32_t c = 0; c < d->conds.n && st == WEFT_OK; c++) {
            st = cond_access(d->conds.v[c], g, id);
        }
        for (uint32_t i = 0; i < s->nsets && st == WEFT_OK; i++) {
            for (uint32_t c = 0; mark[i] && c < s->sets[i].conds.n && st == WEFT_OK; c++) {
                st = cond_access(s->sets[i].conds.v[c], g, id);
            }
        }
    }
    for (uint32_t i = 0; i < s->nsets && st == WEFT_OK; i++) {
        uint32_t flags = s->sets[i].conds.n ? WF_SG_SET_CONDITION : 0;
        if (wf_sg_add_set(g, s->sets[i].name, flags) == WF_SG_NONE) {
            return WEFT_ERR_OUT_OF_MEMORY;
        }
    }
    for (uint32_t i = 0; i < s->nmembers && st == WEFT_OK; i++) {
        st = wf_sg_in_set(g, sg_ref(s->members[i].a), sg_ref(s->members[i].b));
    }
    for (uint32_t i = 0; i < s->nedges && st == WEFT_OK; i++) {
        uint32_t f = (s->edges[i].flags & WEFT_ORDER_IGNORE_DEFERRED) ? WF_SG_IGNORE_DEFERRED
                                                                      : 0;
        st = wf_sg_order(g, sg_ref(s->edges[i].a), sg_ref(s->edges[i].b), f);
    }
    return st;
}

/* Does declaration node x (a system node or a set) cover graph node n? */
static bool covers(const weft_schedule *s, weft_node x, uint32_t n, uint8_t *mark)
{
    if (!(x & WEFT_NODE_SET)) {
        return x == n + 1;
    }
    memset(mark, 0, s->nsets ? s->nsets : 1);
    sets_above(s, n + 1, mark);
    return mark[(x & ~WEFT_NODE_SET) - 1] != 0;
}

static bool amb_excused(const weft_schedule *s, uint32_t a, uint32_t b, uint8_t *mark)
{
    for (uint32_t i = 0; i < s->namb_ok; i++) {
        weft_node x = s->amb_ok[i].a, y = s->amb_ok[i].b;
        if ((covers(s, x, a, mark) && covers(s, y, b, mark)) ||
            (covers(s, x, b, mark) && covers(s, y, a, mark))) {
            return true;
        }
    }
    return false;
}

/* Plan arrays sized by the built graph: the steps, the run state the
 * executor reuses every run, and the first-member slots of the sets. */
static weft_status plan_alloc(weft_schedule *s)
{
    wf_allocator *al = &s->world->alloc;
    wf_plan *p = &s->plan;
    uint32_t n = s->graph.ntotal;
    uint32_t n1 = n ? n : 1;
    uint32_t nsets1 = s->nsets ? s->nsets : 1;
    p->n = n;
    p->nset_slots = s->nsets;
    p->steps = wf_calloc(al, n1 * sizeof *p->steps, SCHED_ALIGN);
    s->remaining = wf_calloc(al, n1 * sizeof *s->remaining, WF_CACHE_LINE);
    s->readyq = wf_calloc(al, n1 * sizeof *s->readyq, SCHED_ALIGN);
    s->mq = wf_calloc(al, n1 * sizeof *s->mq, SCHED_ALIGN);
    s->pending = wf_calloc(al, n1, 1);
    s->set_state = wf_calloc(al, nsets1 * sizeof *s->set_state, SCHED_ALIGN);
    p->set_first = wf_alloc(al, nsets1 * sizeof *p->set_first, SCHED_ALIGN);
    if (!p->steps || !s->remaining || !s->readyq || !s->mq || !s->pending ||
        !s->set_state || !p->set_first) {
        return WEFT_ERR_OUT_OF_MEMORY; /* the caller frees the plan */
    }
    return WEFT_OK;
}

/* One step per position of the order: its system (or a sync point), how
 * it runs, and the next barrier after it (seg_end). */
static void plan_steps(weft_schedule *s)
{
    const wf_sgraph *g = &s->graph;
    wf_plan *p = &s->plan;
    uint32_t n = p->n;
    for (uint32_t q = 0; q < n; q++) {
        wf_step *st = &p->steps[q];
        uint32_t node = g->order[q];
        st->node = node;
        st->sched = s;
        st->pos = q;
        if (node < s->nnodes && s->nodes[node].sys) {
            wf_system *sys = s->nodes[node].sys;
            st->sys = sys;
            st->kind = (sys->flags & WEFT_SYSTEM_EXCLUSIVE) ? WF_STEP_EXCLUSIVE : WF_STEP_SYSTEM;
            st->main_only = st->kind == WF_STEP_EXCLUSIVE ||
                            (sys->flags & WEFT_SYSTEM_MAIN_THREAD) != 0;
            st->conds = s->nodes[node].conds.n ? &s->nodes[node].conds : NULL;
            s->pending[q] = sys->cmds->count > 0; /* left by a run before the rebuild */
        } else {
            st->kind = WF_STEP_SYNC;
            st->main_only = true;
            st->conds = NULL; /* apply points ignore conditions */
            p->nsync++;
        }
    }
    uint32_t next = n;
    for (uint32_t q = n; q-- > 0;) {
        p->steps[q].seg_end = next;
        if (p->steps[q].kind != WF_STEP_SYSTEM) {
            next = q;
        }
    }
}

/* Successors of every step: the graph's plus the barrier edges (a barrier
 * precedes every step up to and including the next barrier; a step
 * precedes the next barrier), de-duplicated; predecessor counts. */
static weft_status plan_successors(weft_schedule *s)
{
    wf_allocator *al = &s->world->alloc;
    const wf_sgraph *g = &s->graph;
    wf_plan *p = &s->plan;
    uint32_t n = p->n;
    uint32_t n1 = n ? n : 1;
    /* graph edges plus barrier edges: the barriers' segments cover each
     * step at most once (n), and every other step adds one (n) */
    uint32_t cap_succ = g->nsucc + 2 * n + 1;
    uint32_t *succ = wf_alloc(al, cap_succ * sizeof *succ, SCHED_ALIGN);
    uint32_t *seen = wf_calloc(al, n1 * sizeof *seen, SCHED_ALIGN);
    if (!succ || !seen) {
        if (succ) {
            wf_free(al, succ, cap_succ * sizeof *succ, SCHED_ALIGN);
        }
        if (seen) {
            wf_free(al, seen, n1 * sizeof *seen, SCHED_ALIGN);
        }
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    uint32_t ns = 0;
    for (uint32_t q = 0; q < n; q++) {
        wf_step *st = &p->steps[q];
        uint32_t stamp = q + 1;
        st->succ0 = ns;
        for (uint32_t k = g->succ_off[q]; k < g->succ_off[q + 1]; k++) {
            uint32_t t = g->succ[k];
            if (seen[t] != stamp) {
                seen[t] = stamp;
                succ[ns++] = t;
            }
        }
        uint32_t end = st->seg_end;
        if (st->kind != WF_STEP_SYSTEM) {
            uint32_t last = end < n ? end : n - 1;
            for (uint32_t t = q + 1; t <= last && t < n; t++) {
                if (seen[t] != stamp) {
                    if (ns == cap_succ) {
                        break; /* cannot happen: bounded above */
                    }
                    seen[t] = stamp;
                    succ[ns++] = t;
                }
            }
        } else if (end < n && seen[end] != stamp) {
            seen[end] = stamp;
            succ[ns++] = end;
        }
        st->succ1 = ns;
    }
    wf_free(al, seen, n1 * sizeof *seen, SCHED_ALIGN);
    p->succ = wf_alloc(al, (ns ? ns : 1) * sizeof *succ, SCHED_ALIGN);
    if (p->succ) {
        memcpy(p->succ, succ, ns * sizeof *succ);
        p->nsucc = ns;
    }
    wf_free(al, succ, cap_succ * sizeof *succ, SCHED_ALIGN);
    if (!p->succ) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t k = 0; k < ns; k++) {
        p->steps[p->succ[k]].pred++;
    }
    return WEFT_OK;
}

/* The conditioned sets above each system step (plan.sets[sets0 .. sets1))
 * and the first member position of each set; `mark` is scratch of nsets. */
static weft_status plan_sets(weft_schedule *s, uint8_t *mark)
{
    wf_plan *p = &s->plan;
    uint32_t n = p->n;
    for (uint32_t i = 0; i < s->nsets; i++) {
        p->set_first[i] = UINT32_MAX;
    }
    uint32_t nref = 0;
    for (uint32_t q = 0; q < n; q++) {
        uint32_t node = p->steps[q].node;
        if (node >= s->nnodes || !p->steps[q].sys) {
            continue;
        }
        memset(mark, 0, s->nsets ? s->nsets : 1);
        sets_above(s, node + 1, mark);
        for (uint32_t i = 0; i < s->nsets; i++) {
            nref += mark[i] && s->sets[i].conds.n;
        }
    }
    p->sets = wf_alloc(&s->world->alloc, (nref ? nref : 1) * sizeof *p->sets, SCHED_ALIGN);
    if (!p->sets) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    p->nsets_ref = nref;
    nref = 0;
    for (uint32_t q = 0; q < n; q++) {
        wf_step *st = &p->steps[q];
        st->sets0 = st->sets1 = nref;
        if (st->node >= s->nnodes || !st->sys) {
            continue;
        }
        memset(mark, 0, s->nsets ? s->nsets : 1);
        sets_above(s, st->node + 1, mark);
        for (uint32_t i = 0; i < s->nsets; i++) {
            if (mark[i] && s->sets[i].conds.n) {
                p->sets[nref++] = i;
                if (p->set_first[i] == UINT32_MAX) {
                    p->set_first[i] = q;
                }
            }
        }
        st->sets1 = nref;
    }
    return WEFT_OK;
}

/* The graph's ambiguity report minus the pairs declared ambiguous, as the
 * public weft_ambiguity records (nodes counted from 1). */
static weft_status plan_ambiguities(weft_schedule *s, uint8_t *mark)
{
    wf_allocator *al = &s->world->alloc;
    const wf_sgraph *g = &s->graph;
    wf_plan *p = &s->plan;
    uint32_t namb = 0, nids = 0;
    for (uint32_t i = 0; i < g->namb; i++) {
        if (!amb_excused(s, g->amb[i].a, g->amb[i].b, mark)) {
            namb++;
            nids += g->amb[i].nids;
        }
    }
    p->amb = wf_calloc(al, (namb ? namb : 1) * sizeof *p->amb, SCHED_ALIGN);
    p->amb_ids = wf_alloc(al, (nids ? nids : 1) * sizeof *p->amb_ids, SCHED_ALIGN);
    if (!p->amb || !p->amb_ids) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < g->namb; i++) {
        const wf_sg_ambiguity *am = &g->amb[i];
        if (amb_excused(s, am->a, am->b, mark)) {
            continue;
        }
        weft_ambiguity *o = &p->amb[p->namb++];
        o->a = am->a + 1;
        o->b = am->b + 1;
        o->component_count = (int32_t)am->nids;
        if (am->nids) {
            memcpy(p->amb_ids + p->namb_ids, g->amb_ids + am->first,
                   am->nids * sizeof(uint32_t));
        }
        p->namb_ids += am->nids;
    }
    uint32_t off = 0;
    for (uint32_t i = 0; i < p->namb; i++) {
        p->amb[i].components = p->amb_ids + off;
        off += (uint32_t)p->amb[i].component_count;
    }
    return WEFT_OK;
}

/* Turns the built graph into the plan the executor runs. */
static weft_status compile_plan(weft_schedule *s, uint8_t *mark)
{
    weft_status st = plan_alloc(s);
    if (st != WEFT_OK) {
        return st;
    }
    plan_steps(s);
    st = plan_successors(s);
    if (st == WEFT_OK) {
        st = plan_sets(s, mark);
    }
    if (st == WEFT_OK) {
        st = plan_ambiguities(s, mark);
    }
    return st;
}

weft_status wf_schedule_build(weft_schedule *s)
{
    weft_world *w = s->world;
    if (s->running) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "weft_schedule_build: schedule '%s' is running",
                        s->name);
    }
    plan_free(w, s);
    uint8_t *mark = wf_calloc(&w->alloc, s->nsets ? s->nsets : 1, 1);
    if (!mark) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory building schedule '%s'",
                        s->name);
    }
    wf_sg_init(&s->graph, &w->alloc);
    weft_status st = feed_graph(s, &s->graph, mark);
    if (st == WEFT_OK) {
        wf_sg_settings set = wf_sg_default_settings();
        set.auto_insert_sync = s->auto_sync;
        set.ignored = s->ignored;
        set.nignored = s->nignored;
        st = wf_sg_build(&s->graph, &set);
    }
    if (st == WEFT_OK) {
        s->built = true;
        st = compile_plan(s, mark);
    }
    wf_free(&w->alloc, mark, s->nsets ? s->nsets : 1, 1);
    if (st != WEFT_OK) {
        if (st == WEFT_ERR_SCHEDULE_CYCLE && s->graph.error) {
            wf_error(w, st, "schedule '%s': %s", s->name, s->graph.error);
        } else if (st == WEFT_ERR_OUT_OF_MEMORY) {
            wf_error(w, st, "out of memory building schedule '%s'", s->name);
        } else {
            wf_error(w, st, "schedule '%s': build failed%s%s", s->name,
                     s->graph.error ? ": " : "", s->graph.error ? s->graph.error : "");
        }
        if (!s->built) {
            wf_sg_fini(&s->graph);
        }
        plan_free(w, s);
        return st;
    }
    s->dirty = false;
    s->builds++;
    return WEFT_OK;
}

weft_node wf_schedule_add_system_node(weft_schedule *s, wf_system *sys)
{
    weft_world *w = s->world;
    if (!wf_grow(&w->alloc, (void **)&s->nodes, &s->cap_nodes, (uint64_t)s->nnodes + 1,
                 sizeof *s->nodes, SCHED_ALIGN)) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory adding to schedule '%s'", s->name);
        return 0;
    }
    wf_decl_node *d = &s->nodes[s->nnodes];
    memset(d, 0, sizeof *d);
    d->sys = sys;
    s->nnodes++;
    s->dirty = true;
    sys->node = s->nnodes;
    return s->nnodes;
}

void wf_schedule_free(weft_world *w, weft_schedule *s)
{
    s->magic = 0;
    plan_free(w, s);
    for (uint32_t k = 0; k < s->nnodes; k++) {
        wf_system_destroy(w, s->nodes[k].sys);
        if (s->nodes[k].name) {
            wf_free(&w->alloc, s->nodes[k].name, strlen(s->nodes[k].name) + 1, 1);
        }
        conds_free(w, &s->nodes[k].conds);
    }
    for (uint32_t i = 0; i < s->nsets; i++) {
        wf_free(&w->alloc, s->sets[i].name, strlen(s->sets[i].name) + 1, 1);
        conds_free(w, &s->sets[i].conds);
    }
    while (s->conds) {
        weft_condition *c = s->conds;
        s->conds = c->next;
        wf_condition_free(w, c);
    }
    wf_allocator *a = &w->alloc;
    if (s->nodes) {
        wf_free(a, s->nodes, s->cap_nodes * sizeof *s->nodes, SCHED_ALIGN);
    }
    if (s->sets) {
        wf_free(a, s->sets, s->cap_sets * sizeof *s->sets, SCHED_ALIGN);
    }
    if (s->members) {
        wf_free(a, s->members, s->cap_members * sizeof *s->members, SCHED_ALIGN);
    }
    if (s->edges) {
        wf_free(a, s->edges, s->cap_edges * sizeof *s->edges, SCHED_ALIGN);
    }
    if (s->amb_ok) {
        wf_free(a, s->amb_ok, s->cap_amb_ok * sizeof *s->amb_ok, SCHED_ALIGN);
    }
    if (s->ignored) {
        wf_free(a, s->ignored, s->cap_ignored * sizeof *s->ignored, SCHED_ALIGN);
    }
    wf_free(a, s->name, strlen(s->name) + 1, 1);
    wf_free(a, s, sizeof *s, _Alignof(weft_schedule));
}

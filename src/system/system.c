/* src/system/system.c - system registration: descriptors, declared access,
 * the intra-system conflict check, local state.
 * SPDX-License-Identifier: MIT
 *
 * A system's access is what its descriptor declares: per query, the
 * components its terms read (READ fields and Added/Changed filters) or
 * write, plus the With/Without components that restrict it; then its
 * resources and message types (message type t is access id
 * WF_MSG_ACCESS(t)). Two uses inside one system conflict like two systems
 * would (Bevy refuses such a system too): one writes what the other touches and no
 * With/Without pair on one component separates them.
 */
#include "system/system.h"
#include "core/guard.h"

#include <string.h>

/* ---- access of one query ---- */

void wf_query_access(const weft_query *q, wf_qacc *a)
{
    memset(a, 0, sizeof *a);
    for (uint32_t i = 0; i < q->term_count; i++) {
        const wf_term *t = &q->terms[i];
        if (t->access == WEFT_ACCESS_WRITE) {
            a->writes[a->nw++] = t->id;
        } else if (t->access == WEFT_ACCESS_READ || t->filter) {
            a->reads[a->nr++] = t->id;
        }
        if (t->group < 0 && (t->oper == WEFT_OPER_AND || t->oper == WEFT_OPER_WITH)) {
            a->with[a->nwith++] = t->id;
        } else if (t->oper == WEFT_OPER_WITHOUT) {
            a->without[a->nwithout++] = t->id;
        }
    }
}

static bool ids_meet(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb,
                     uint32_t *out)
{
    for (uint32_t i = 0; i < na; i++) {
        for (uint32_t j = 0; j < nb; j++) {
            if (a[i] == b[j]) {
                *out = a[i];
                return true;
            }
        }
    }
    return false;
}

/* Do two queries provably match disjoint entities? */
static bool qacc_disjoint(const wf_qacc *x, const wf_qacc *y)
{
    uint32_t id;
    return ids_meet(x->with, x->nwith, y->without, y->nwithout, &id) ||
           ids_meet(x->without, x->nwithout, y->with, y->nwith, &id);
}

/* A component both touch with at least one write, or 0. */
static uint32_t qacc_conflict(const wf_qacc *x, const wf_qacc *y)
{
    uint32_t id = 0;
    if (ids_meet(x->writes, x->nw, y->writes, y->nw, &id) ||
        ids_meet(x->writes, x->nw, y->reads, y->nr, &id) ||
        ids_meet(x->reads, x->nr, y->writes, y->nw, &id)) {
        return id;
    }
    return 0;
}

int64_t wf_system_query_count(const weft_world *w, const weft_query *q)
{
    int64_t n = 0;
    const wf_entity_index *ix = &w->entities;
    for (uint32_t m = 0; m < q->match_count; m++) {
        const wf_match *mt = &q->matches[m];
        if (!mt->partial) {
            n += mt->table->count;
            continue;
        }
        for (uint32_t r = 0; r < mt->table->count; r++) {
            uint32_t arch = ix->records[(uint32_t)mt->table->entities[r]].arch;
            n += wf_query_has_arch(q, arch);
        }
    }
    return n;
}

bool wf_system_validate(weft_world *w, wf_system *sys)
{
    for (int32_t i = 0; i < sys->nqueries; i++) {
        weft_query *q = sys->queries[i];
        uint32_t f = q->flags & (WEFT_QUERY_SINGLE | WEFT_QUERY_POPULATED);
        if (!f) {
            continue;
        }
        wf_query_env env = wf_world_query_env(w);
        if (!wf_query_update(q, &env)) {
            wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "system '%s': out of memory matching "
                     "archetypes", sys->name);
            return false;
        }
        int64_t n = wf_system_query_count(w, q);
        if ((f & WEFT_QUERY_SINGLE) ? n != 1 : n < 1) {
            return false;
        }
    }
    return true;
}

void wf_system_set_last_run(wf_system *sys, uint32_t tick)
{
    sys->last_run = tick;
    for (int32_t i = 0; i < sys->nqueries; i++) {
        sys->queries[i]->last_run = tick;
    }
}

/* ---- create / destroy ---- */

typedef struct sys_args {
    const char *name;
    const weft_query_desc *queries;
    int32_t nq;
    const weft_resource_use *res;
    int32_t nres;
    const weft_message_use *msgs;
    int32_t nmsgs;
    uint32_t flags;
    weft_local_desc local;
    const int32_t *groups;
    const weft_component *removed;
    int32_t nremoved;
    bool condition;
} sys_args;

static const char *sys_label(const sys_args *a)
{
    return a->condition ? "weft_condition_create" : "weft_schedule_add_system";
}

/* Checks everything that needs no allocation. */
static weft_status sys_validate(weft_world *w, const sys_args *a)
{
    const char *fn = sys_label(a);
    if (!a->condition && (!a->name || !a->name[0])) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: the system needs a name", fn);
    }
    if (a->nq < 0 || a->nq > WEFT_MAX_SYSTEM_QUERIES || (a->nq && !a->queries)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s '%s': query_count %d out of range 0..%d "
                        "or queries NULL", fn, a->name ? a->name : "", a->nq,
                        WEFT_MAX_SYSTEM_QUERIES);
    }
    if (a->nres < 0 || a->nres > WEFT_MAX_SYSTEM_RESOURCES || (a->nres && !a->res)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s '%s': resource_count %d out of range "
                        "0..%d or resources NULL", fn, a->name ? a->name : "", a->nres,
                        WEFT_MAX_SYSTEM_RESOURCES);
    }
    if (a->nmsgs < 0 || a->nmsgs > WEFT_MAX_SYSTEM_MESSAGES || (a->nmsgs && !a->msgs)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s '%s': message_count %d out of range "
                        "0..%d or messages NULL", fn, a->name ? a->name : "", a->nmsgs,
                        WEFT_MAX_SYSTEM_MESSAGES);
    }
    if (a->flags & ~(uint32_t)(WEFT_SYSTEM_EXCLUSIVE | WEFT_SYSTEM_MAIN_THREAD |
                               WEFT_SYSTEM_COMMANDS | WEFT_SYSTEM_NOT_STEPPABLE)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s '%s': unknown flag bits 0x%x", fn,
                        a->name, a->flags);
    }
    if (a->nremoved < 0 || a->nremoved > WEFT_MAX_SYSTEM_RESOURCES ||
        (a->nremoved && !a->removed)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s '%s': removed_count %d out of range "
                        "0..%d or removed NULL", fn, a->name ? a->name : "", a->nremoved,
                        WEFT_MAX_SYSTEM_RESOURCES);
    }
    for (int32_t i = 0; i < a->nremoved; i++) {
        if (!wf_registry_get(&w->registry, a->removed[i])) {
            return wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT,
                            "%s '%s': removed component %d (id %u) is not registered", fn,
                            a->name ? a->name : "", i, a->removed[i]);
        }
        for (int32_t j = 0; j < i; j++) {
            if (a->removed[j] == a->removed[i]) {
                return wf_error(w, WEFT_ERR_DUPLICATE_COMPONENT,
                                "%s '%s': removed component '%s' is listed twice", fn,
                                a->name ? a->name : "", wf_component_name(w, a->removed[i]));
            }
        }
    }
    size_t al = a->local.align;
    if (al & (al - 1)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "%s '%s': local align %zu is not a power of two", fn, a->name, al);
    }
    for (int32_t i = 0; i < a->nres; i++) {
        weft_access acc = a->res[i].access;
        if (acc != WEFT_ACCESS_READ && acc != WEFT_ACCESS_WRITE) {
            return wf_error(w, WEFT_ERR_INVALID_ARG,
                            "%s '%s': resource %d: access must be READ or WRITE", fn,
                            a->name ? a->name : "", i);
        }
        const wf_type_info *ti = wf_registry_get(&w->registry, a->res[i].id);
        if (!ti) {
            return wf_error(w, WEFT_ERR_NOT_FOUND, "%s '%s': resource id %u is not registered",
                            fn, a->name ? a->name : "", a->res[i].id);
        }
        if (acc == WEFT_ACCESS_WRITE && a->condition) {
            return wf_error(w, WEFT_ERR_ACCESS_VIOLATION,
                            "%s '%s': conditions are read-only, resource '%s' is declared "
                            "WRITE", fn, a->name ? a->name : "", ti->name);
        }
        if (acc == WEFT_ACCESS_WRITE && (ti->flags & WEFT_COMPONENT_IMMUTABLE)) {
            return wf_error(w, WEFT_ERR_IMMUTABLE, "%s '%s': resource '%s' is immutable", fn,
                            a->name ? a->name : "", ti->name);
        }
        for (int32_t j = 0; j < i; j++) {
            if (a->res[j].id == a->res[i].id) {
                return wf_error(w, WEFT_ERR_ACCESS_VIOLATION,
                                "%s '%s': resource '%s' is listed twice", fn,
                                a->name ? a->name : "", ti->name);
            }
        }
    }
    for (int32_t i = 0; i < a->nmsgs; i++) {
        weft_access acc = a->msgs[i].access;
        if (acc != WEFT_ACCESS_READ && acc != WEFT_ACCESS_WRITE) {
            return wf_error(w, WEFT_ERR_INVALID_ARG,
                            "%s '%s': message %d: access must be READ or WRITE", fn,
                            a->name ? a->name : "", i);
        }
        if (!wf_messages_type(w, a->msgs[i].type)) {
            return wf_error(w, WEFT_ERR_NOT_FOUND,
                            "%s '%s': message type %u is not registered", fn,
                            a->name ? a->name : "", a->msgs[i].type);
        }
        if (acc == WEFT_ACCESS_WRITE && a->condition) {
            return wf_error(w, WEFT_ERR_ACCESS_VIOLATION,
                            "%s: conditions are read-only, message type %u is declared WRITE",
                            fn, a->msgs[i].type);
        }
        for (int32_t j = 0; j < i; j++) {
            if (a->msgs[j].type == a->msgs[i].type) {
                return wf_error(w, WEFT_ERR_ACCESS_VIOLATION,
                                "%s '%s': message type %u is listed twice", fn,
                                a->name ? a->name : "", a->msgs[i].type);
            }
        }
    }
    return WEFT_OK;
}

/* The intra-system conflict check over compiled queries. */
static weft_status sys_check_queries(weft_world *w, const sys_args *a, weft_query **qs)
{
    const char *fn = sys_label(a);
    for (int32_t i = 0; i < a->nq; i++) {
        wf_qacc x;
        wf_query_access(qs[i], &x);
        if (a->condition && x.nw) {
            return wf_error(w, WEFT_ERR_ACCESS_VIOLATION,
                            "%s '%s': conditions are read-only, query %d writes '%s'", fn,
                            a->name ? a->name : "", i, wf_component_name(w, x.writes[0]));
        }
        for (int32_t j = 0; j < i; j++) {
            wf_qacc y;
            wf_query_access(qs[j], &y);
            uint32_t id = qacc_conflict(&x, &y);
            bool same_set = a->groups && a->groups[i] != 0 && a->groups[i] == a->groups[j];
            if (id && !qacc_disjoint(&x, &y) && !same_set) {
                return wf_error(w, WEFT_ERR_ACCESS_VIOLATION,
                                "%s '%s': queries %d and %d both touch '%s' and one writes "
                                "it (make them disjoint with With/Without, or merge them)",
                                fn, a->name, j, i, wf_component_name(w, id));
            }
        }
        for (int32_t r = 0; r < a->nres; r++) {
            uint32_t id = a->res[r].id;
            bool rw = a->res[r].access == WEFT_ACCESS_WRITE;
            uint32_t hit;
            if (ids_meet(&id, 1, x.writes, x.nw, &hit) ||
                (rw && ids_meet(&id, 1, x.reads, x.nr, &hit))) {
                return wf_error(w, WEFT_ERR_ACCESS_VIOLATION,
                                "%s '%s': '%s' is used both as a resource and by query %d "
                                "with a write", fn, a->name ? a->name : "",
                                wf_component_name(w, id), i);
            }
        }
    }
    return WEFT_OK;
}

static size_t local_align(const weft_local_desc *l)
{
    return l->align ? l->align : 16;
}

void wf_system_destroy(weft_world *w, wf_system *sys)
{
    if (!sys) {
        return;
    }
    for (int32_t i = 0; i < sys->nqueries; i++) {
        if (sys->queries[i]) {
            wf_world_query_destroy(w, sys->queries[i]);
        }
    }
    if (sys->queries) {
        wf_free(&w->alloc, sys->queries, (size_t)sys->nqueries * sizeof *sys->queries,
                _Alignof(weft_query *));
    }
    if (sys->res) {
        wf_free(&w->alloc, sys->res, (size_t)sys->nres * sizeof *sys->res,
                _Alignof(weft_resource_use));
    }
    if (sys->msgs) {
        wf_free(&w->alloc, sys->msgs, (size_t)sys->nmsgs * sizeof *sys->msgs,
                _Alignof(weft_message_use));
    }
    if (sys->cursors) {
        wf_free(&w->alloc, sys->cursors, (size_t)sys->nmsgs * sizeof *sys->cursors,
                _Alignof(weft_message_cursor));
    }
    if (sys->local) {
        if (sys->local_desc.fini) {
            WF_CALLBACK(w, sys->local_desc.fini(sys->local, sys->user));
        }
        wf_free(&w->alloc, sys->local, sys->local_desc.size, local_align(&sys->local_desc));
    }
    if (sys->cmds) {
        wf_cmds_fini(sys->cmds);
        wf_free(&w->alloc, sys->cmds, sizeof *sys->cmds, _Alignof(weft_commands));
    }
    for (uint32_t i = 0; i < sys->nchunks; i++) {
        wf_cmds_fini(sys->chunks[i].cmds);
        wf_free(&w->alloc, sys->chunks[i].cmds, sizeof(weft_commands),
                _Alignof(weft_commands));
    }
    if (sys->chunks) {
        wf_free(&w->alloc, sys->chunks, (size_t)sys->cap_chunks * sizeof *sys->chunks,
                _Alignof(wf_chunk_buf));
    }
    if (sys->tasks) {
        wf_free(&w->alloc, sys->tasks, (size_t)sys->cap_tasks * sizeof *sys->tasks,
                _Alignof(wf_par_task));
    }
    if (sys->groups) {
        wf_free(&w->alloc, sys->groups, (size_t)sys->nqueries * sizeof *sys->groups,
                _Alignof(int32_t));
    }
    if (sys->removed) {
        wf_free(&w->alloc, sys->removed, (size_t)sys->nremoved * sizeof *sys->removed,
                _Alignof(weft_component));
    }
    if (sys->rcursors) {
        wf_free(&w->alloc, sys->rcursors, (size_t)sys->nremoved * sizeof *sys->rcursors,
                _Alignof(weft_message_cursor));
    }
    if (sys->name) {
        wf_free(&w->alloc, sys->name, sys->name_len + 1, 1);
    }
    wf_free(&w->alloc, sys, sizeof *sys, _Alignof(wf_system));
}

static bool same_query(const weft_query *a, const weft_query *b)
{
    if (a->term_count != b->term_count || a->flags != b->flags ||
        a->group_count != b->group_count) {
        return false;
    }
    for (uint32_t i = 0; i < a->term_count; i++) {
        const wf_term *x = &a->terms[i], *y = &b->terms[i];
        if (x->id != y->id || x->oper != y->oper || x->access != y->access ||
            x->filter != y->filter || x->group != y->group) {
            return false;
        }
    }
    return true;
}

bool wf_system_same_decl(const wf_system *a, const wf_system *b)
{
    if (a->flags != b->flags || a->nqueries != b->nqueries || a->nres != b->nres ||
        a->nmsgs != b->nmsgs || a->nremoved != b->nremoved) {
        return false;
    }
    for (int32_t i = 0; i < a->nqueries; i++) {
        if (!same_query(a->queries[i], b->queries[i]) ||
            (a->groups ? a->groups[i] : -1) != (b->groups ? b->groups[i] : -1)) {
            return false;
        }
    }
    for (int32_t i = 0; i < a->nres; i++) {
        if (a->res[i].id != b->res[i].id || a->res[i].access != b->res[i].access) {
            return false;
        }
    }
    for (int32_t i = 0; i < a->nmsgs; i++) {
        if (a->msgs[i].type != b->msgs[i].type || a->msgs[i].access != b->msgs[i].access) {
            return false;
        }
    }
    for (int32_t i = 0; i < a->nremoved; i++) {
        if (a->removed[i] != b->removed[i]) {
            return false;
        }
    }
    return true;
}

#define SWAP(T, x, y)                                                         \
    do {                                                                      \
        T swap_tmp_ = (x);                                                    \
        (x) = (y);                                                            \
        (y) = swap_tmp_;                                                      \
    } while (0)

void wf_system_swap_decl(wf_system *to, wf_system *from)
{
    SWAP(uint32_t, to->flags, from->flags);
    SWAP(weft_query **, to->queries, from->queries);
    SWAP(int32_t, to->nqueries, from->nqueries);
    SWAP(int32_t *, to->groups, from->groups);
    SWAP(bool, to->validated, from->validated);
    SWAP(weft_resource_use *, to->res, from->res);
    SWAP(int32_t, to->nres, from->nres);
    SWAP(weft_message_use *, to->msgs, from->msgs);
    SWAP(weft_message_cursor *, to->cursors, from->cursors);
    SWAP(int32_t, to->nmsgs, from->nmsgs);
    SWAP(weft_component *, to->removed, from->removed);
    SWAP(weft_message_cursor *, to->rcursors, from->rcursors);
    SWAP(int32_t, to->nremoved, from->nremoved);
    /* `from` now holds the old declaration: keep the shared cursors */
    for (int32_t i = 0; i < to->nmsgs; i++) {
        for (int32_t k = 0; k < from->nmsgs; k++) {
            if (from->msgs[k].type == to->msgs[i].type) {
                to->cursors[i] = from->cursors[k];
                break;
            }
        }
    }
    for (int32_t i = 0; i < to->nremoved; i++) {
        for (int32_t k = 0; k < from->nremoved; k++) {
            if (from->removed[k] == to->removed[i]) {
                to->rcursors[i] = from->rcursors[k];
                break;
            }
        }
    }
    wf_system_set_last_run(to, to->last_run);
}

#undef SWAP

/* How a step of wf_system_create ended: done, out of memory (reported by
 * the caller), or refused with the error already recorded. */
typedef enum sys_step { SYS_DONE = 0, SYS_OOM, SYS_REFUSED } sys_step;

/* The parts of a system or condition descriptor a system is built from. */
static void sys_args_read(const weft_system_desc *desc, const weft_condition_desc *cdesc,
                          sys_args *a)
{
    memset(a, 0, sizeof *a);
    if (desc) {
        a->name = desc->name;
        a->queries = desc->queries;
        a->nq = desc->query_count;
        a->res = desc->resources;
        a->nres = desc->resource_count;
        a->msgs = desc->messages;
        a->nmsgs = desc->message_count;
        a->flags = desc->flags;
        a->local = desc->local;
        a->groups = desc->query_groups;
        a->removed = desc->removed;
        a->nremoved = desc->removed_count;
    } else {
        a->name = cdesc->name ? cdesc->name : "condition";
        a->queries = cdesc->queries;
        a->nq = cdesc->query_count;
        a->res = cdesc->resources;
        a->nres = cdesc->resource_count;
        a->msgs = cdesc->messages;
        a->nmsgs = cdesc->message_count;
        a->condition = true;
    }
}

/* Compiles the system's queries, then checks them against each other
 * (aliasing writes inside one system are refused). */
static sys_step sys_add_queries(weft_world *w, wf_system *sys, const sys_args *a)
{
    if (a->nq) {
        sys->queries = wf_calloc(&w->alloc, (size_t)a->nq * sizeof *sys->queries,
                                 _Alignof(weft_query *));
        if (!sys->queries) {
            return SYS_OOM;
        }
        sys->nqueries = a->nq;
        for (int32_t i = 0; i < a->nq; i++) {
            sys->queries[i] = wf_world_query_create(w, &a->queries[i], "weft_query_create");
            if (!sys->queries[i]) {
                return SYS_REFUSED; /* the query's error stays recorded */
            }
        }
    }
    return SYS_DONE;
}

/* Copies the resource uses and the param-set groups. */
static sys_step sys_add_uses(weft_world *w, wf_system *sys, const sys_args *a)
{
    if (a->nres) {
        sys->res = wf_alloc(&w->alloc, (size_t)a->nres * sizeof *sys->res,
                            _Alignof(weft_resource_use));
        if (!sys->res) {
            return SYS_OOM;
        }
        memcpy(sys->res, a->res, (size_t)a->nres * sizeof *sys->res);
        sys->nres = a->nres;
    }
    if (a->groups && a->nq) {
        sys->groups = wf_alloc(&w->alloc, (size_t)a->nq * sizeof *sys->groups, _Alignof(int32_t));
        if (!sys->groups) {
            return SYS_OOM;
        }
        memcpy(sys->groups, a->groups, (size_t)a->nq * sizeof *sys->groups);
    }
    return SYS_DONE;
}

/* The removal streams the system reads, each with its own cursor;
 * tracking starts now. */
static sys_step sys_add_removed(weft_world *w, wf_system *sys, const sys_args *a)
{
    if (!a->nremoved) {
        return SYS_DONE;
    }
    sys->nremoved = a->nremoved; /* sizes the arrays for destroy */
    sys->removed = wf_alloc(&w->alloc, (size_t)a->nremoved * sizeof *sys->removed,
                            _Alignof(weft_component));
    sys->rcursors = wf_calloc(&w->alloc, (size_t)a->nremoved * sizeof *sys->rcursors,
                              _Alignof(weft_message_cursor));
    if (!sys->removed || !sys->rcursors) {
        return SYS_OOM;
    }
    memcpy(sys->removed, a->removed, (size_t)a->nremoved * sizeof *sys->removed);
    for (int32_t i = 0; i < a->nremoved; i++) {
        if (wf_removed_track(w, wf_registry_get(&w->registry, a->removed[i])) != WEFT_OK) {
            return SYS_REFUSED; /* OUT_OF_MEMORY recorded */
        }
    }
    return SYS_DONE;
}

/* Message uses with a cursor each, the command buffer (systems only) and
 * the local state (its init runs last, once nothing else can fail). */
static sys_step sys_add_state(weft_world *w, wf_system *sys, const sys_args *a)
{
    if (a->nmsgs) {
        sys->nmsgs = a->nmsgs; /* sizes the arrays for destroy */
        sys->msgs = wf_alloc(&w->alloc, (size_t)a->nmsgs * sizeof *sys->msgs,
                             _Alignof(weft_message_use));
        sys->cursors = wf_calloc(&w->alloc, (size_t)a->nmsgs * sizeof *sys->cursors,
                                 _Alignof(weft_message_cursor));
        if (!sys->msgs || !sys->cursors) {
            return SYS_OOM;
        }
        memcpy(sys->msgs, a->msgs, (size_t)a->nmsgs * sizeof *sys->msgs);
    }
    if (!a->condition) {
        sys->cmds = wf_alloc(&w->alloc, sizeof *sys->cmds, _Alignof(weft_commands));
        if (!sys->cmds) {
            return SYS_OOM;
        }
        wf_cmds_init(sys->cmds, w, &w->alloc, &w->registry);
        /* exclusive systems run alone on the driver: real ids are
         * deterministic there */
        sys->cmds->provisional = !(a->flags & WEFT_SYSTEM_EXCLUSIVE);
    }
    if (a->local.size) {
        sys->local = wf_calloc(&w->alloc, a->local.size, local_align(&a->local));
        if (!sys->local) {
            return SYS_OOM;
        }
        if (a->local.init) {
            WF_CALLBACK(w, a->local.init(sys->local, sys->user));
        }
    } else {
        sys->local_desc.fini = NULL;
    }
    return SYS_DONE;
}

wf_system *wf_system_create(weft_world *w, weft_schedule *s, const weft_system_desc *desc,
                            const weft_condition_desc *cdesc)
{
    sys_args a;
    sys_args_read(desc, cdesc, &a);
    if (sys_validate(w, &a) != WEFT_OK) {
        return NULL;
    }
    wf_system *sys = wf_calloc(&w->alloc, sizeof *sys, _Alignof(wf_system));
    if (!sys) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory adding a system");
        return NULL;
    }
    sys->sched = s;
    sys->flags = a.flags;
    sys->fn = desc ? desc->fn : NULL;
    sys->cond_fn = cdesc ? cdesc->fn : NULL;
    sys->user = desc ? desc->user : cdesc->user;
    sys->local_desc = a.local;
    sys->name = wf_strdup(&w->alloc, a.name, &sys->name_len);
    sys_step step = sys->name ? SYS_DONE : SYS_OOM;
    if (step == SYS_DONE) {
        step = sys_add_queries(w, sys, &a);
    }
    if (step == SYS_DONE) {
        step = sys_add_uses(w, sys, &a);
    }
    if (step == SYS_DONE) {
        step = sys_add_removed(w, sys, &a);
    }
    if (step == SYS_DONE) {
        for (int32_t i = 0; i < sys->nqueries; i++) {
            sys->validated |= (sys->queries[i]->flags &
                               (WEFT_QUERY_SINGLE | WEFT_QUERY_POPULATED)) != 0;
        }
        step = sys_check_queries(w, &a, sys->queries) == WEFT_OK ? SYS_DONE : SYS_REFUSED;
    }
    if (step == SYS_DONE) {
        step = sys_add_state(w, sys, &a);
    }
    if (step != SYS_DONE) {
        sys->local_desc.fini = NULL; /* init never ran: it is the last step */
        wf_system_destroy(w, sys);
        if (step == SYS_OOM) {
            wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory adding system '%s'", a.name);
        }
        return NULL;
    }
    /* "minus infinity": the first run sees everything as added */
    wf_system_set_last_run(sys, w->change_tick - WEFT_MAX_CHANGE_AGE);
    return sys;
}

/* src/app/plugin.c - plugins: records, groups, and the setup that builds
 * them in dependency order.
 * SPDX-License-Identifier: MIT
 *
 * See app.h for the setup's rounds. A dependency names a plugin; with
 * repeatable plugins a name may stand for several records, and a
 * dependent waits for all of them. Within a round, a plugin is ready when
 * every record its dependencies name is built or placed earlier in the
 * round; the round places, repeatedly, the first ready plugin in order of
 * addition (Kahn's algorithm with that tie rule). Plugins left over when
 * none is ready are stuck on a cycle, or behind one; the message follows
 * unsatisfied dependencies from a stuck plugin until a name repeats and
 * prints that loop.
 */
#include "app/app.h"
#include "core/guard.h"

#include <stdio.h>
#include <string.h>

#define PLUGIN_ALIGN _Alignof(uint64_t)

static char *dup_name(weft_app *a, const char *s)
{
    size_t n = strlen(s);
    char *p = wf_alloc(&a->alloc, n + 1, 1);
    if (p) {
        memcpy(p, s, n + 1);
    }
    return p;
}

static void free_name(weft_app *a, char *s)
{
    if (s) {
        wf_free(&a->alloc, s, strlen(s) + 1, 1);
    }
}

int32_t wf_app_plugin_find(const weft_app *a, const char *name)
{
    for (uint32_t i = 0; i < a->nplugins; i++) {
        if (strcmp(a->plugins[i].name, name) == 0) {
            return (int32_t)i;
        }
    }
    return -1;
}

static void plugin_fini(weft_app *a, wf_plugin *p)
{
    free_name(a, p->name);
    for (int32_t k = 0; k < p->ndeps; k++) {
        free_name(a, p->deps[k]);
    }
    if (p->deps) {
        wf_free(&a->alloc, p->deps, (size_t)p->ndeps * sizeof *p->deps, PLUGIN_ALIGN);
    }
}

void wf_app_plugins_free(weft_app *a)
{
    for (uint32_t i = a->nplugins; i-- > 0;) {
        wf_plugin *p = &a->plugins[i];
        if (p->free_user) {
            WF_CALLBACK(a, p->free_user(p->user)); /* the world may be gone */
        }
        plugin_fini(a, p);
    }
    wf_free(&a->alloc, a->plugins, (size_t)a->cap_plugins * sizeof *a->plugins, PLUGIN_ALIGN);
    a->plugins = NULL;
    a->nplugins = a->cap_plugins = 0;
}

/* ---- adding ---- */

weft_status wf_plugin_desc_check(weft_app *a, const weft_plugin_desc *d, const char *fn,
                                 const char *group)
{
    weft_world *w = a->world;
    const char *g = group ? group : "";
    const char *gs = group ? " of group " : "";
    if (d->_start_canary || d->_end_canary) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: plugin desc%s%s canary not 0", fn, gs, g);
    }
    if (!d->name || !d->name[0]) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: a plugin%s%s has no name", fn, gs, g);
    }
    if (!d->build) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: plugin '%s' has no build callback", fn,
                        d->name);
    }
    if (d->dependency_count < 0 || (d->dependency_count > 0 && !d->dependencies)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "%s: plugin '%s': dependency_count %d negative or dependencies NULL",
                        fn, d->name, d->dependency_count);
    }
    for (int32_t k = 0; k < d->dependency_count; k++) {
        const char *dep = d->dependencies[k];
        if (!dep || !dep[0]) {
            return wf_error(w, WEFT_ERR_INVALID_ARG,
                            "%s: plugin '%s': dependency %d is NULL or empty", fn, d->name, k);
        }
        if (strcmp(dep, d->name) == 0) {
            return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: plugin '%s' depends on itself", fn,
                            d->name);
        }
    }
    return WEFT_OK;
}

/* ALREADY_EXISTS unless both are repeatable. */
static weft_status check_duplicate(weft_app *a, const weft_plugin_desc *d, const char *fn)
{
    int32_t i = wf_app_plugin_find(a, d->name);
    if (i >= 0 && !(d->repeatable && a->plugins[i].repeatable)) {
        return wf_error(a->world, WEFT_ERR_ALREADY_EXISTS,
                        "%s: plugin '%s' was already added (and is not repeatable)", fn,
                        d->name);
    }
    return WEFT_OK;
}

/* Fills a record from d (names copied); false when out of memory, with
 * nothing left allocated. */
static bool plugin_init(weft_app *a, wf_plugin *p, const weft_plugin_desc *d)
{
    memset(p, 0, sizeof *p);
    p->name = dup_name(a, d->name);
    if (!p->name) {
        return false;
    }
    if (d->dependency_count > 0) {
        p->deps = wf_calloc(&a->alloc, (size_t)d->dependency_count * sizeof *p->deps,
                            PLUGIN_ALIGN);
        if (!p->deps) {
            plugin_fini(a, p);
            return false;
        }
        p->ndeps = d->dependency_count;
        for (int32_t k = 0; k < d->dependency_count; k++) {
            p->deps[k] = dup_name(a, d->dependencies[k]);
            if (!p->deps[k]) {
                plugin_fini(a, p);
                return false;
            }
        }
    }
    p->build = d->build;
    p->finish = d->finish;
    p->cleanup = d->cleanup;
    p->repeatable = d->repeatable;
    p->user = d->user;
    p->free_user = d->free_user;
    p->state = WF_PLUGIN_ADDED;
    return true;
}

static bool reserve_plugins(weft_app *a, uint64_t need)
{
    void *p = a->plugins;
    uint32_t cap = a->cap_plugins;
    if (!wf_grow(&a->alloc, &p, &cap, need, sizeof *a->plugins, PLUGIN_ALIGN)) {
        return false;
    }
    a->plugins = p;
    a->cap_plugins = cap;
    return true;
}

weft_status wf_app_add_plugin(weft_app *a, const weft_plugin_desc *d)
{
    weft_status st = check_duplicate(a, d, "weft_app_add_plugin");
    if (st != WEFT_OK) {
        return st;
    }
    if (!reserve_plugins(a, (uint64_t)a->nplugins + 1) ||
        !plugin_init(a, &a->plugins[a->nplugins], d)) {
        return wf_error(a->world, WEFT_ERR_OUT_OF_MEMORY,
                        "weft_app_add_plugin: out of memory adding plugin '%s'", d->name);
    }
    a->nplugins++;
    return WEFT_OK;
}

static bool group_disabled(const weft_plugin_group_desc *g, const char *name)
{
    for (int32_t k = 0; k < g->disabled_count; k++) {
        if (strcmp(g->disabled[k], name) == 0) {
            return true;
        }
    }
    return false;
}

weft_status wf_app_add_group(weft_app *a, const weft_plugin_group_desc *g)
{
    static const char fn[] = "weft_app_add_plugin_group";
    weft_world *w = a->world;
    for (int32_t i = 0; i < g->plugin_count; i++) {
        weft_status st = wf_plugin_desc_check(a, &g->plugins[i], fn, g->name);
        if (st != WEFT_OK) {
            return st;
        }
    }
    for (int32_t k = 0; k < g->disabled_count; k++) {
        const char *name = g->disabled[k];
        bool member = false;
        for (int32_t i = 0; name && i < g->plugin_count && !member; i++) {
            member = strcmp(g->plugins[i].name, name) == 0;
        }
        if (!member) {
            return wf_error(w, WEFT_ERR_NOT_FOUND,
                            "%s: disabled plugin '%s' is no member of group '%s'", fn,
                            name ? name : "(null)", g->name);
        }
    }
    uint32_t add = 0;
    for (int32_t i = 0; i < g->plugin_count; i++) {
        const weft_plugin_desc *d = &g->plugins[i];
        if (group_disabled(g, d->name)) {
            continue;
        }
        weft_status st = check_duplicate(a, d, fn);
        if (st != WEFT_OK) {
            return st;
        }
        for (int32_t j = 0; j < i; j++) {
            const weft_plugin_desc *e = &g->plugins[j];
            if (!group_disabled(g, e->name) && strcmp(e->name, d->name) == 0 &&
                !(d->repeatable && e->repeatable)) {
                return wf_error(w, WEFT_ERR_ALREADY_EXISTS,
                                "%s: group '%s' holds plugin '%s' twice (and it is not "
                                "repeatable)",
                                fn, g->name, d->name);
            }
        }
        add++;
    }
    if (!reserve_plugins(a, (uint64_t)a->nplugins + add)) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory adding group '%s'", fn,
                        g->name);
    }
    uint32_t done = 0;
    for (int32_t i = 0; i < g->plugin_count; i++) {
        const weft_plugin_desc *d = &g->plugins[i];
        if (group_disabled(g, d->name)) {
            continue;
        }
        if (!plugin_init(a, &a->plugins[a->nplugins + done], d)) {
            for (uint32_t k = 0; k < done; k++) {
                plugin_fini(a, &a->plugins[a->nplugins + k]);
            }
            return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory adding group '%s'",
                            fn, g->name);
        }
        done++;
    }
    a->nplugins += done;
    return WEFT_OK;
}

/* ---- setup ---- */

/* Whether every record named by p's dependencies is built or placed
 * (placed[i] != 0). */
static bool deps_ready(const weft_app *a, const wf_plugin *p, const uint8_t *placed)
{
    for (int32_t k = 0; k < p->ndeps; k++) {
        for (uint32_t j = 0; j < a->nplugins; j++) {
            const wf_plugin *q = &a->plugins[j];
            if (strcmp(q->name, p->deps[k]) == 0 && q->state != WF_PLUGIN_BUILT && !placed[j]) {
                return false;
            }
        }
    }
    return true;
}

/* NOT_FOUND naming the first dependency of a pending plugin that names
 * no added plugin, or WEFT_OK. */
static weft_status check_missing(weft_app *a)
{
    for (uint32_t i = 0; i < a->nplugins; i++) {
        const wf_plugin *p = &a->plugins[i];
        if (p->state == WF_PLUGIN_BUILT) {
            continue;
        }
        for (int32_t k = 0; k < p->ndeps; k++) {
            if (wf_app_plugin_find(a, p->deps[k]) < 0) {
                return wf_error(a->world, WEFT_ERR_NOT_FOUND,
                                "weft_app_setup: plugin '%s' depends on '%s', which was not "
                                "added",
                                p->name, p->deps[k]);
            }
        }
    }
    return WEFT_OK;
}

/* SCHEDULE_CYCLE naming a loop among the stuck plugins. */
static weft_status report_cycle(weft_app *a, const uint8_t *placed)
{
    uint32_t n = a->nplugins;
    uint32_t cur = 0;
    while (cur < n && (a->plugins[cur].state == WF_PLUGIN_BUILT || placed[cur])) {
        cur++;
    }
    /* walk: from a stuck plugin to a stuck record one of its dependencies
     * names; after n steps the walk is inside a loop */
    uint32_t *path = wf_alloc(&a->alloc, (size_t)(n + 1) * sizeof *path, PLUGIN_ALIGN);
    if (!path) {
        return wf_error(a->world, WEFT_ERR_SCHEDULE_CYCLE,
                        "weft_app_setup: the dependencies of plugin '%s' form a cycle",
                        a->plugins[cur].name);
    }
    uint32_t len = 0;
    int32_t loop_start = -1;
    while (loop_start < 0 && len <= n) {
        for (uint32_t k = 0; k < len; k++) {
            if (path[k] == cur) {
                loop_start = (int32_t)k;
            }
        }
        if (loop_start >= 0) {
            break;
        }
        path[len++] = cur;
        const wf_plugin *p = &a->plugins[cur];
        uint32_t next = cur;
        for (int32_t k = 0; k < p->ndeps && next == cur; k++) {
            for (uint32_t j = 0; j < n; j++) {
                const wf_plugin *q = &a->plugins[j];
                if (strcmp(q->name, p->deps[k]) == 0 && q->state != WF_PLUGIN_BUILT &&
                    !placed[j]) {
                    next = j;
                    break;
                }
            }
        }
        cur = next;
    }
    char msg[WF_ERROR_LEN];
    size_t off = 0;
    for (uint32_t k = loop_start < 0 ? 0 : (uint32_t)loop_start; k < len && off < sizeof msg;
         k++) {
        int m = snprintf(msg + off, sizeof msg - off, "'%s' -> ", a->plugins[path[k]].name);
        off = m < 0 ? sizeof msg : off + (size_t)m;
    }
    if (off < sizeof msg) {
        snprintf(msg + off, sizeof msg - off, "'%s'", a->plugins[cur].name);
    }
    wf_free(&a->alloc, path, (size_t)(n + 1) * sizeof *path, PLUGIN_ALIGN);
    return wf_error(a->world, WEFT_ERR_SCHEDULE_CYCLE,
                    "weft_app_setup: plugin dependencies form a cycle: %s", msg);
}

static weft_status callback_failed(weft_app *a, const char *what, uint32_t i, weft_status st)
{
    a->phase = WF_APP_FAILED;
    return wf_error(a->world, WEFT_ERR_CALLBACK, "weft_app_setup: %s of plugin '%s' failed: %s",
                    what, a->plugins[i].name, wf_status_name(st));
}

/* One round: orders the pending plugins, then builds them. */
static weft_status setup_round(weft_app *a)
{
    uint32_t n = a->nplugins;
    uint32_t pending = n - a->built;
    weft_status st = check_missing(a);
    if (st != WEFT_OK) {
        return st;
    }
    uint8_t *placed = wf_calloc(&a->alloc, n, 1);
    uint32_t *order = wf_alloc(&a->alloc, (size_t)pending * sizeof *order, PLUGIN_ALIGN);
    if (!placed || !order) {
        wf_free(&a->alloc, placed, n, 1);
        wf_free(&a->alloc, order, (size_t)pending * sizeof *order, PLUGIN_ALIGN);
        return wf_error(a->world, WEFT_ERR_OUT_OF_MEMORY, "weft_app_setup: out of memory");
    }
    uint32_t norder = 0;
    while (norder < pending) {
        uint32_t pick = n;
        for (uint32_t i = 0; i < n && pick == n; i++) {
            if (a->plugins[i].state != WF_PLUGIN_BUILT && !placed[i] &&
                deps_ready(a, &a->plugins[i], placed)) {
                pick = i;
            }
        }
        if (pick == n) {
            st = report_cycle(a, placed);
            wf_free(&a->alloc, placed, n, 1);
            wf_free(&a->alloc, order, (size_t)pending * sizeof *order, PLUGIN_ALIGN);
            return st;
        }
        placed[pick] = 1;
        order[norder++] = pick;
    }
    wf_free(&a->alloc, placed, n, 1);
    /* builds may add plugins (appended: indices stay valid, pointers do
     * not, so records are re-read after each call) */
    a->phase = WF_APP_BUILDING;
    for (uint32_t k = 0; k < norder && st == WEFT_OK; k++) {
        uint32_t i = order[k];
        a->plugins[i].state = WF_PLUGIN_BUILT;
        a->plugins[i].rank = a->built++;
        a->in_callback = true;
        weft_status cb;
        WF_CALLBACK(a->world, cb = a->plugins[i].build(a, a->plugins[i].user));
        a->in_callback = false;
        if (cb != WEFT_OK) {
            st = callback_failed(a, "build", i, cb);
        }
    }
    wf_free(&a->alloc, order, (size_t)pending * sizeof *order, PLUGIN_ALIGN);
    if (st == WEFT_OK) {
        a->phase = WF_APP_ADDING;
    }
    return st;
}

/* Sorts the records by build rank (insertion sort: plugins are few). */
static void sort_by_rank(weft_app *a)
{
    for (uint32_t i = 1; i < a->nplugins; i++) {
        wf_plugin p = a->plugins[i];
        uint32_t j = i;
        while (j > 0 && a->plugins[j - 1].rank > p.rank) {
            a->plugins[j] = a->plugins[j - 1];
            j--;
        }
        a->plugins[j] = p;
    }
}

weft_status wf_app_setup(weft_app *a)
{
    if (a->phase == WF_APP_READY) {
        return WEFT_OK;
    }
    if (a->phase == WF_APP_FAILED) {
        return wf_error(a->world, WEFT_ERR_CALLBACK,
                        "weft_app_setup: an earlier plugin callback failed");
    }
    while (a->built < a->nplugins) {
        weft_status st = setup_round(a);
        if (st != WEFT_OK) {
            return st;
        }
    }
    sort_by_rank(a);
    a->phase = WF_APP_FINISHING;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < a->nplugins; i++) {
            weft_plugin_fn fn = pass == 0 ? a->plugins[i].finish : a->plugins[i].cleanup;
            if (!fn) {
                continue;
            }
            a->in_callback = true;
            weft_status cb;
            WF_CALLBACK(a->world, cb = fn(a, a->plugins[i].user));
            a->in_callback = false;
            if (cb != WEFT_OK) {
                return callback_failed(a, pass == 0 ? "finish" : "cleanup", i, cb);
            }
        }
    }
    a->phase = WF_APP_READY;
    return WEFT_OK;
}

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
#include "core/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLUGIN_ALIGN _Alignof(uint64_t)

static char *dup_name(weft_app *a, const char *s)
{
    return wf_strdup(&a->alloc, s, NULL);
}

static void free_name(weft_app *a, char *s)
{
    wf_strfree(&a->alloc, s);
}

/* ---- the name index: O(1) lookups, so adding n plugins is O(n) ---- */

static uint32_t name_home(const weft_app *a, const char *name)
{
    return (uint32_t)wf_hash_bytes(name, strlen(name)) & (a->name_cap - 1);
}

int32_t wf_app_plugin_find(const weft_app *a, const char *name)
{
    if (!a->name_cap) {
        return -1;
    }
    for (uint32_t h = name_home(a, name);; h = (h + 1) & (a->name_cap - 1)) {
        uint32_t s = a->name_slots[h];
        if (s == 0) {
            return -1;
        }
        if (strcmp(a->plugins[s - 1].name, name) == 0) {
            return (int32_t)(s - 1);
        }
    }
}

/* Lists record i unless an earlier record has its name (the index keeps
 * the first). Room must exist (names_reserve). */
static void names_insert(weft_app *a, uint32_t i)
{
    const char *name = a->plugins[i].name;
    for (uint32_t h = name_home(a, name);; h = (h + 1) & (a->name_cap - 1)) {
        uint32_t s = a->name_slots[h];
        if (s == 0) {
            a->name_slots[h] = i + 1;
            return;
        }
        if (strcmp(a->plugins[s - 1].name, name) == 0) {
            if (i < s - 1) {
                a->name_slots[h] = i + 1;
            }
            return;
        }
    }
}

/* Lists every current record again in the (cleared) index. */
static void names_relist(weft_app *a)
{
    memset(a->name_slots, 0, (size_t)a->name_cap * sizeof *a->name_slots);
    for (uint32_t i = 0; i < a->nplugins; i++) {
        names_insert(a, i);
    }
}

/* Rebuilds the index over the current records with `cap` slots. */
static bool names_rebuild(weft_app *a, uint32_t cap)
{
    uint32_t *slots = wf_calloc(&a->alloc, (size_t)cap * sizeof *slots, PLUGIN_ALIGN);
    if (!slots) {
        return false;
    }
    wf_free(&a->alloc, a->name_slots, (size_t)a->name_cap * sizeof *slots, PLUGIN_ALIGN);
    a->name_slots = slots;
    a->name_cap = cap;
    names_relist(a);
    return true;
}

/* Room in the index for `need` records (load at most one half). */
static bool names_reserve(weft_app *a, uint64_t need)
{
    if (need * 2 <= a->name_cap) {
        return true;
    }
    uint64_t cap = a->name_cap ? a->name_cap : 64;
    while (cap < need * 2) {
        cap *= 2;
    }
    return cap <= UINT32_MAX / 2 && names_rebuild(a, (uint32_t)cap);
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
    wf_free(&a->alloc, a->name_slots, (size_t)a->name_cap * sizeof *a->name_slots,
            PLUGIN_ALIGN);
    a->name_slots = NULL;
    a->name_cap = 0;
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
        !names_reserve(a, (uint64_t)a->nplugins + 1) ||
        !plugin_init(a, &a->plugins[a->nplugins], d)) {
        return wf_error(a->world, WEFT_ERR_OUT_OF_MEMORY,
                        "weft_app_add_plugin: out of memory adding plugin '%s'", d->name);
    }
    names_insert(a, a->nplugins++);
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
    if (!reserve_plugins(a, (uint64_t)a->nplugins + add) ||
        !names_reserve(a, (uint64_t)a->nplugins + add)) {
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
    for (uint32_t k = 0; k < done; k++) {
        names_insert(a, a->nplugins++);
    }
    return WEFT_OK;
}

/* ---- setup ---- */

/* The pending plugins' dependency graph, resolved once per round:
 * in-edges per plugin (the pending records its dependency names match,
 * one per match and per listing) in CSR form, and the out-edges derived
 * from them. Names are matched through a sorted index, so a round costs
 * O((n + e) log n) for n records and e dependency matches; the order is
 * the old one: among the plugins whose dependencies are all built, the
 * lowest index first (Kahn's algorithm with a min-heap). */
typedef struct name_ix {
    const char *name;
    uint32_t i;
} name_ix;

typedef struct dep_graph {
    name_ix *names;   /* [n] sorted by name, then index */
    uint32_t *in0;    /* [n + 1] in-edge offsets */
    uint32_t *in;     /* [e] the dependency each in-edge comes from */
    uint32_t *out0;   /* [n + 1] out-edge offsets */
    uint32_t *out;    /* [e] the dependant each out-edge goes to */
    uint32_t *indeg;  /* [n] in-edges not yet satisfied */
    uint32_t *heap;   /* [n] ready plugins, a min-heap of indices */
    uint32_t n, e;
} dep_graph;

static int name_ix_cmp(const void *x, const void *y)
{
    const name_ix *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* First position in g->names whose name is `name` (g->n when none). */
static uint32_t name_first(const dep_graph *g, const char *name)
{
    uint32_t lo = 0, hi = g->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (strcmp(g->names[mid].name, name) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < g->n && strcmp(g->names[lo].name, name) == 0 ? lo : g->n;
}

static void graph_free(weft_app *a, dep_graph *g)
{
    wf_free(&a->alloc, g->names, (size_t)g->n * sizeof *g->names, PLUGIN_ALIGN);
    wf_free(&a->alloc, g->in0, ((size_t)g->n + 1) * sizeof *g->in0, PLUGIN_ALIGN);
    wf_free(&a->alloc, g->out0, ((size_t)g->n + 1) * sizeof *g->out0, PLUGIN_ALIGN);
    wf_free(&a->alloc, g->indeg, (size_t)g->n * sizeof *g->indeg, PLUGIN_ALIGN);
    wf_free(&a->alloc, g->heap, (size_t)g->n * sizeof *g->heap, PLUGIN_ALIGN);
    wf_free(&a->alloc, g->in, (size_t)g->e * sizeof *g->in, PLUGIN_ALIGN);
    wf_free(&a->alloc, g->out, (size_t)g->e * sizeof *g->out, PLUGIN_ALIGN);
    memset(g, 0, sizeof *g);
}

static bool pending(const wf_plugin *p)
{
    return p->state != WF_PLUGIN_BUILT;
}

/* Builds g for the pending plugins of a; NOT_FOUND names the first
 * dependency that names no added plugin. */
static weft_status graph_build(weft_app *a, dep_graph *g)
{
    uint32_t n = a->nplugins;
    memset(g, 0, sizeof *g);
    g->n = n;
    g->names = wf_alloc(&a->alloc, (size_t)n * sizeof *g->names, PLUGIN_ALIGN);
    g->in0 = wf_calloc(&a->alloc, ((size_t)n + 1) * sizeof *g->in0, PLUGIN_ALIGN);
    g->out0 = wf_calloc(&a->alloc, ((size_t)n + 1) * sizeof *g->out0, PLUGIN_ALIGN);
    g->indeg = wf_calloc(&a->alloc, (size_t)n * sizeof *g->indeg, PLUGIN_ALIGN);
    g->heap = wf_alloc(&a->alloc, (size_t)n * sizeof *g->heap, PLUGIN_ALIGN);
    if (!g->names || !g->in0 || !g->out0 || !g->indeg || !g->heap) {
        return wf_error(a->world, WEFT_ERR_OUT_OF_MEMORY, "weft_app_setup: out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        g->names[i].name = a->plugins[i].name;
        g->names[i].i = i;
    }
    qsort(g->names, n, sizeof *g->names, name_ix_cmp);
    /* count the in-edges; a dependency naming nobody is NOT_FOUND */
    uint64_t e = 0;
    for (uint32_t i = 0; i < n; i++) {
        const wf_plugin *p = &a->plugins[i];
        for (int32_t k = 0; pending(p) && k < p->ndeps; k++) {
            uint32_t at = name_first(g, p->deps[k]);
            if (at == n) {
                return wf_error(a->world, WEFT_ERR_NOT_FOUND,
                                "weft_app_setup: plugin '%s' depends on '%s', which was not "
                                "added",
                                p->name, p->deps[k]);
            }
            for (; at < n && strcmp(g->names[at].name, p->deps[k]) == 0; at++) {
                if (pending(&a->plugins[g->names[at].i])) {
                    g->in0[i + 1]++;
                    g->out0[g->names[at].i + 1]++;
                    e++;
                }
            }
        }
    }
    if (e > UINT32_MAX) {
        return wf_error(a->world, WEFT_ERR_CAPACITY, "weft_app_setup: too many dependencies");
    }
    g->e = e ? (uint32_t)e : 1u; /* arrays of at least one element */
    for (uint32_t i = 0; i < n; i++) {
        g->in0[i + 1] += g->in0[i];
        g->out0[i + 1] += g->out0[i];
    }
    g->in = wf_alloc(&a->alloc, (size_t)g->e * sizeof *g->in, PLUGIN_ALIGN);
    g->out = wf_alloc(&a->alloc, (size_t)g->e * sizeof *g->out, PLUGIN_ALIGN);
    if (!g->in || !g->out) {
        return wf_error(a->world, WEFT_ERR_OUT_OF_MEMORY, "weft_app_setup: out of memory");
    }
    /* fill: indeg doubles as the in-edge cursor, heap as the out one */
    memset(g->heap, 0, (size_t)n * sizeof *g->heap);
    for (uint32_t i = 0; i < n; i++) {
        const wf_plugin *p = &a->plugins[i];
        for (int32_t k = 0; pending(p) && k < p->ndeps; k++) {
            for (uint32_t at = name_first(g, p->deps[k]);
                 at < n && strcmp(g->names[at].name, p->deps[k]) == 0; at++) {
                uint32_t j = g->names[at].i;
                if (pending(&a->plugins[j])) {
                    g->in[g->in0[i] + g->indeg[i]++] = j;
                    g->out[g->out0[j] + g->heap[j]++] = i;
                }
            }
        }
    }
    return WEFT_OK;
}

static void heap_push(uint32_t *h, uint32_t *len, uint32_t v)
{
    uint32_t k = (*len)++;
    while (k > 0 && h[(k - 1) / 2] > v) {
        h[k] = h[(k - 1) / 2];
        k = (k - 1) / 2;
    }
    h[k] = v;
}

static uint32_t heap_pop(uint32_t *h, uint32_t *len)
{
    uint32_t top = h[0];
    uint32_t v = h[--(*len)];
    uint32_t k = 0;
    for (;;) {
        uint32_t c = 2 * k + 1;
        if (c >= *len) {
            break;
        }
        if (c + 1 < *len && h[c + 1] < h[c]) {
            c++;
        }
        if (h[c] >= v) {
            break;
        }
        h[k] = h[c];
        k = c;
    }
    if (*len) {
        h[k] = v;
    }
    return top;
}

/* SCHEDULE_CYCLE naming a loop among the stuck plugins (those left with
 * unsatisfied in-edges): from one, follow an in-edge to a stuck
 * dependency until a plugin comes back; O(n) with a position per plugin
 * (g->heap, free now, holds it). */
static weft_status report_cycle(weft_app *a, dep_graph *g)
{
    uint32_t n = g->n;
    uint32_t cur = 0;
    while (cur < n && (!pending(&a->plugins[cur]) || g->indeg[cur] == 0)) {
        cur++;
    }
    uint32_t *pos = g->heap; /* UINT32_MAX: not on the path */
    for (uint32_t i = 0; i < n; i++) {
        pos[i] = UINT32_MAX;
    }
    uint32_t *path = wf_alloc(&a->alloc, (size_t)(n + 1) * sizeof *path, PLUGIN_ALIGN);
    if (!path || cur == n) {
        wf_free(&a->alloc, path, (size_t)(n + 1) * sizeof *path, PLUGIN_ALIGN);
        return wf_error(a->world, WEFT_ERR_SCHEDULE_CYCLE,
                        "weft_app_setup: the dependencies of plugin '%s' form a cycle",
                        a->plugins[cur < n ? cur : 0].name);
    }
    uint32_t len = 0;
    while (pos[cur] == UINT32_MAX && len <= n) {
        pos[cur] = len;
        path[len++] = cur;
        uint32_t next = cur;
        for (uint32_t k = g->in0[cur]; k < g->in0[cur + 1]; k++) {
            uint32_t j = g->in[k];
            if (g->indeg[j] > 0) { /* a stuck dependency */
                next = j;
                break;
            }
        }
        cur = next;
    }
    char msg[WF_ERROR_LEN];
    size_t off = 0;
    for (uint32_t k = pos[cur] < len ? pos[cur] : 0; k < len && off < sizeof msg; k++) {
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
    uint32_t npending = n - a->built;
    dep_graph g;
    weft_status st = graph_build(a, &g);
    uint32_t *order = st == WEFT_OK
                          ? wf_alloc(&a->alloc, (size_t)npending * sizeof *order, PLUGIN_ALIGN)
                          : NULL;
    if (st == WEFT_OK && !order) {
        st = wf_error(a->world, WEFT_ERR_OUT_OF_MEMORY, "weft_app_setup: out of memory");
    }
    if (st != WEFT_OK) {
        graph_free(a, &g);
        return st;
    }
    uint32_t hlen = 0;
    for (uint32_t i = 0; i < n; i++) {
        g.indeg[i] = g.in0[i + 1] - g.in0[i];
        if (pending(&a->plugins[i]) && g.indeg[i] == 0) {
            heap_push(g.heap, &hlen, i);
        }
    }
    uint32_t norder = 0;
    while (hlen) {
        uint32_t pick = heap_pop(g.heap, &hlen);
        order[norder++] = pick;
        for (uint32_t k = g.out0[pick]; k < g.out0[pick + 1]; k++) {
            if (--g.indeg[g.out[k]] == 0) {
                heap_push(g.heap, &hlen, g.out[k]);
            }
        }
    }
    if (norder < npending) {
        st = report_cycle(a, &g);
        graph_free(a, &g);
        wf_free(&a->alloc, order, (size_t)npending * sizeof *order, PLUGIN_ALIGN);
        return st;
    }
    graph_free(a, &g);
    uint32_t pending_n = npending;
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
    wf_free(&a->alloc, order, (size_t)pending_n * sizeof *order, PLUGIN_ALIGN);
    if (st == WEFT_OK) {
        a->phase = WF_APP_ADDING;
    }
    return st;
}

static int rank_cmp(const void *x, const void *y)
{
    const wf_plugin *a = x, *b = y;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

/* Sorts the records by build rank (every record is built here, and ranks
 * are distinct). */
static void sort_by_rank(weft_app *a)
{
    if (a->nplugins > 1) {
        qsort(a->plugins, a->nplugins, sizeof *a->plugins, rank_cmp);
    }
    /* the index names records by position: list them again in place */
    if (a->name_cap) {
        names_relist(a);
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

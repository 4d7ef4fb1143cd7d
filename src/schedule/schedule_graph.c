/* src/schedule/schedule_graph.c - flatten, sort, detect conflicts, insert syncs.
 * SPDX-License-Identifier: MIT
 *
 * wf_sg_build runs these passes, one function each (sg_pass_*), handing
 * results on through an sg_build context:
 *
 * 1. Hierarchy. Each set's descendant nodes become a bitset (DFS over the
 *    membership graph; a set reachable from itself is a cycle error). A node
 *    is "under a condition" if it or any ancestor set has a run condition.
 * 2. Flatten. Edges that touch a set with no descendant nodes are bridged
 *    first, one empty set at a time: (a->S, S->b) becomes a->b, carrying
 *    IGNORE_DEFERRED only if both edges had it (so chains of empty sets
 *    work). Every remaining edge expands to desc(before) x desc(after). A
 *    node ordered against itself (directly or through a set containing it)
 *    is a self-edge error. Duplicate edges merge; the merged edge ignores
 *    deferred only if every copy did (the conservative choice).
 * 3. Toposort: Kahn's algorithm with a min-heap on registration index, so
 *    the order is deterministic and stable under additions. If nodes are
 *    left over, each of them has a left-over predecessor; walking
 *    "first left-over predecessor" from the smallest one must repeat a node,
 *    and the repeated stretch, rotated to start at its smallest id, is
 *    reported as "cycle: a -> b -> a".
 * 4. Conflicts. A reachability bitset matrix (V x V bits, filled in reverse
 *    topological order) says which pairs are ordered. For every unordered
 *    pair that conflicts (write/write or read/write on one id in two access
 *    blocks, unless one block has With X and the other Without X - the only
 *    proof of disjointness: two With filters on different components do not
 *    keep an entity out of either; an exclusive node conflicts with
 *    everything) an edge is added from the earlier to the later node of the
 *    deterministic order of pass 3. Orienting by that order (not raw
 *    registration index) is what keeps the graph acyclic when user edges
 *    point from later to earlier registrations. The pair is reported as an
 *    ambiguity unless every conflicting id is in the ignore list, or one
 *    side is an apply point (apply points, like auto sync nodes, are
 *    ambiguous with everything). Conflict edges are kept even when the
 *    report is silenced: they are what keeps the systems apart at run time.
 * 5. Sync points, as Bevy's AutoInsertApplyDeferredPass
 *    (bevy_ecs/src/schedule/auto_insert_apply_deferred.rs):
 *    per node in topological order (dist, pending); a valid explicit apply
 *    point (APPLY, no condition on it or an ancestor set) records
 *    explicit[dist] and clears needs; otherwise needs = pending ||
 *    DEFERRED. Per out-edge: an IGNORE_DEFERRED edge into a non-exclusive
 *    target moves the need into pending[target]; weight 1 if the edge still
 *    needs a sync or the target is a valid explicit apply point; dist[t] =
 *    max(dist[t], dist[n] + w). Then every edge n->t with dist[n] != dist[t]
 *    and t not an apply point is replaced by n->sp->t, sp being
 *    explicit[dist[t]] or the one auto sync node for that distance.
 *    Extension: conflict edges (pass 4) carry weight 0 and no pending,
 *    because the user did not order those systems and Bevy would insert
 *    nothing between them; they still take part so distances stay monotone
 *    along every edge, which is what makes the rewrite acyclic.
 * 6. The final graph (user nodes + sync nodes) is sorted again by the same
 *    Kahn pass and compiled: order, pos_of, predecessor counts, CSR
 *    successors by position. Edges are not transitively reduced.
 *
 * Left to the executor: auto sync nodes and apply points are barriers that
 * must run alone, but the graph orders them only against the nodes whose
 * edges they were inserted on (Bevy does the same and relies on its
 * executor's exclusive admission test). An access block carries one
 * With/Without conjunct; an Or query is given as one block per DNF conjunct,
 * each with the query's reads and writes, which is exactly Bevy's "every
 * pair of clauses disjoint" rule.
 *
 * Memory: every byte through g->alloc. Build scratch is tracked in a small
 * table and freed before wf_sg_build returns; results live until the next
 * build or wf_sg_fini. Threads: driver thread only.
 */
#include "schedule/schedule_graph.h"

#include <stdlib.h>
#include <string.h>

#define SG_ALIGN 16u

/* ---- growable arrays on the allocator ---- */

static bool sg_grow(wf_allocator *a, void **data, uint32_t *cap, uint32_t need,
                    size_t elem)
{
    return wf_grow(a, data, cap, need, elem, SG_ALIGN);
}

static int sg_cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* Sorts and de-duplicates v[0..n); returns the new length. */
static int sg_cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static uint32_t sg_sort_unique(uint32_t *v, uint32_t n)
{
    if (n == 0) {
        return 0;
    }
    qsort(v, n, sizeof *v, sg_cmp_u32);
    uint32_t k = 1;
    for (uint32_t i = 1; i < n; i++) {
        if (v[i] != v[k - 1]) {
            v[k++] = v[i];
        }
    }
    return k;
}

/* ---- input ---- */

void wf_sg_init(wf_sgraph *g, wf_allocator *alloc)
{
    memset(g, 0, sizeof *g);
    g->alloc = alloc;
}

wf_sg_settings wf_sg_default_settings(void)
{
    wf_sg_settings s;
    s.auto_insert_sync = true;
    s.ignored = NULL;
    s.nignored = 0;
    return s;
}

/* Result arrays are allocated with at least one element. */
static size_t sg_n1(uint32_t n)
{
    return n ? (size_t)n : 1u;
}

static void sg_free_result(wf_sgraph *g)
{
    wf_allocator *a = g->alloc;
    size_t n = sg_n1(g->ntotal);
    wf_free(a, g->order, n * sizeof(uint32_t), SG_ALIGN);
    wf_free(a, g->pos_of, n * sizeof(uint32_t), SG_ALIGN);
    wf_free(a, g->pred_count, n * sizeof(uint32_t), SG_ALIGN);
    wf_free(a, g->succ_off, ((size_t)g->ntotal + 1) * sizeof(uint32_t), SG_ALIGN);
    wf_free(a, g->succ, sg_n1(g->nsucc) * sizeof(uint32_t), SG_ALIGN);
    wf_free(a, g->sync_nodes, sg_n1(g->nsync) * sizeof(uint32_t), SG_ALIGN);
    wf_free(a, g->sync_dist, sg_n1(g->nsync) * sizeof(uint32_t), SG_ALIGN);
    wf_free(a, g->amb, (size_t)g->cap_amb * sizeof(wf_sg_ambiguity), SG_ALIGN);
    wf_free(a, g->amb_ids, (size_t)g->cap_amb_ids * sizeof(uint32_t), SG_ALIGN);
    g->cap_amb = g->cap_amb_ids = 0;
    wf_free(a, g->error, g->error_len + 1, 1);
    g->order = g->pos_of = g->pred_count = g->succ_off = g->succ = NULL;
    g->sync_nodes = g->sync_dist = g->amb_ids = NULL;
    g->amb = NULL;
    g->error = NULL;
    g->ntotal = g->nsucc = g->nsync = g->namb = g->namb_ids = 0;
    g->error_len = 0;
    g->built = false;
}

void wf_sg_fini(wf_sgraph *g)
{
    wf_allocator *a = g->alloc;
    sg_free_result(g);
    for (uint32_t i = 0; i < g->nnodes; i++) {
        wf_sg_node *n = &g->nodes[i];
        for (uint32_t k = 0; k < n->nacc; k++) {
            wf_sg_acc *c = &n->acc[k];
            wf_free(a, c->ids, (size_t)c->alloc_len * sizeof(uint32_t), SG_ALIGN);
        }
        wf_free(a, n->acc, (size_t)n->cap_acc * sizeof(wf_sg_acc), SG_ALIGN);
        wf_free(a, n->name, n->name_len + 1, 1);
    }
    for (uint32_t i = 0; i < g->nsets; i++) {
        wf_free(a, g->sets[i].name, g->sets[i].name_len + 1, 1);
    }
    wf_free(a, g->nodes, (size_t)g->cap_nodes * sizeof(wf_sg_node), SG_ALIGN);
    wf_free(a, g->sets, (size_t)g->cap_sets * sizeof(wf_sg_set), SG_ALIGN);
    wf_free(a, g->members, (size_t)g->cap_members * sizeof(wf_sg_edge), SG_ALIGN);
    wf_free(a, g->edges, (size_t)g->cap_edges * sizeof(wf_sg_edge), SG_ALIGN);
    memset(g, 0, sizeof *g);
}

uint32_t wf_sg_add_node(wf_sgraph *g, const char *name, uint32_t flags)
{
    if (!sg_grow(g->alloc, (void **)&g->nodes, &g->cap_nodes, g->nnodes + 1,
                 sizeof(wf_sg_node))) {
        return WF_SG_NONE;
    }
    wf_sg_node *n = &g->nodes[g->nnodes];
    memset(n, 0, sizeof *n);
    n->name = wf_strdup(g->alloc, name ? name : "?", &n->name_len);
    if (n->name == NULL) {
        return WF_SG_NONE;
    }
    n->flags = flags & ~WF_SG_AUTO_SYNC;
    return g->nnodes++;
}

weft_status wf_sg_add_access(wf_sgraph *g, uint32_t node, const wf_sg_access *acc)
{
    if (node >= g->nnodes || acc == NULL) {
        return WEFT_ERR_INVALID_ARG;
    }
    wf_sg_node *n = &g->nodes[node];
    if (!sg_grow(g->alloc, (void **)&n->acc, &n->cap_acc, n->nacc + 1,
                 sizeof(wf_sg_acc))) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    size_t len = (size_t)acc->nreads + acc->nwrites + acc->nwith + acc->nwithout;
    wf_sg_acc c;
    memset(&c, 0, sizeof c);
    if (len) {
        c.ids = wf_alloc(g->alloc, len * sizeof(uint32_t), SG_ALIGN);
        if (c.ids == NULL) {
            return WEFT_ERR_OUT_OF_MEMORY;
        }
        uint32_t *p = c.ids;
        const uint32_t *src[4] = {acc->reads, acc->writes, acc->with, acc->without};
        uint32_t cnt[4] = {acc->nreads, acc->nwrites, acc->nwith, acc->nwithout};
        uint32_t out[4];
        for (int k = 0; k < 4; k++) {
            if (cnt[k]) {
                memcpy(p, src[k], (size_t)cnt[k] * sizeof(uint32_t));
            }
            out[k] = sg_sort_unique(p, cnt[k]);
            p += out[k]; /* each part sorted and unique, packed */
        }
        c.nreads = out[0];
        c.nwrites = out[1];
        c.nwith = out[2];
        c.nwithout = out[3];
        c.alloc_len = (uint32_t)len;
    }
    n->acc[n->nacc++] = c;
    return WEFT_OK;
}

uint32_t wf_sg_add_set(wf_sgraph *g, const char *name, uint32_t flags)
{
    if (!sg_grow(g->alloc, (void **)&g->sets, &g->cap_sets, g->nsets + 1,
                 sizeof(wf_sg_set))) {
        return WF_SG_NONE;
    }
    wf_sg_set *s = &g->sets[g->nsets];
    s->name = wf_strdup(g->alloc, name ? name : "?", &s->name_len);
    if (s->name == NULL) {
        return WF_SG_NONE;
    }
    s->flags = flags;
    return WF_SG_SET_REF(g->nsets++);
}

static bool sg_ref_valid(const wf_sgraph *g, uint32_t r)
{
    return WF_SG_IS_SET(r) ? (r & ~WF_SG_SET_BIT) < g->nsets : r < g->nnodes;
}

weft_status wf_sg_in_set(wf_sgraph *g, uint32_t child, uint32_t set)
{
    if (!sg_ref_valid(g, child) || !WF_SG_IS_SET(set) || !sg_ref_valid(g, set)) {
        return WEFT_ERR_INVALID_ARG;
    }
    if (!sg_grow(g->alloc, (void **)&g->members, &g->cap_members, g->nmembers + 1,
                 sizeof(wf_sg_edge))) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    g->members[g->nmembers].from = child;
    g->members[g->nmembers].to = set & ~WF_SG_SET_BIT;
    g->members[g->nmembers].flags = 0;
    g->nmembers++;
    return WEFT_OK;
}

weft_status wf_sg_order(wf_sgraph *g, uint32_t before, uint32_t after, uint32_t flags)
{
    if (!sg_ref_valid(g, before) || !sg_ref_valid(g, after)) {
        return WEFT_ERR_INVALID_ARG;
    }
    if (!sg_grow(g->alloc, (void **)&g->edges, &g->cap_edges, g->nedges + 1,
                 sizeof(wf_sg_edge))) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    g->edges[g->nedges].from = before;
    g->edges[g->nedges].to = after;
    g->edges[g->nedges].flags = flags & WF_SG_IGNORE_DEFERRED;
    g->nedges++;
    return WEFT_OK;
}

const char *wf_sg_name(const wf_sgraph *g, uint32_t node)
{
    return node < g->nnodes ? g->nodes[node].name : "sync";
}

/* ---- build scratch ---- */

#define SG_MAX_TMP 48

typedef struct sg_build {
    wf_sgraph *g;
    const wf_sg_settings *set;
    void *tmp[SG_MAX_TMP];
    size_t tmp_size[SG_MAX_TMP];
    uint32_t ntmp;
    /* edge lists (grown) */
    wf_sg_edge *e;
    uint32_t ne, cap_e;
    /* what the passes hand on to the later ones */
    uint32_t nn, ns;           /* nodes and sets declared */
    uint32_t words;            /* uint64_t words of one node bitset */
    uint64_t *desc;            /* pass 1: [ns][words] node members of each set */
    uint8_t *under_cond;       /* pass 1: [nn] node is (or is under) a conditioned set */
    uint32_t *off;             /* pass 3: [nmax + 1] CSR offsets of the sorted edges */
    uint32_t *indeg, *heap;    /* pass 3: [nmax] Kahn scratch */
    uint32_t *order, *pos;     /* pass 3: [nmax] topological order and its inverse */
    uint32_t nsync;            /* pass 5: sync nodes inserted */
    uint32_t *sync_dist;       /* pass 5: [nn + 1] distance of each sync node */
} sg_build;

static void *sg_tmp(sg_build *b, size_t size)
{
    if (b->ntmp == SG_MAX_TMP) {
        return NULL;
    }
    if (size == 0) {
        size = 1;
    }
    void *p = wf_calloc(b->g->alloc, size, SG_ALIGN);
    if (p != NULL) {
        b->tmp[b->ntmp] = p;
        b->tmp_size[b->ntmp++] = size;
    }
    return p;
}

static void sg_tmp_free_all(sg_build *b)
{
    for (uint32_t i = 0; i < b->ntmp; i++) {
        wf_free(b->g->alloc, b->tmp[i], b->tmp_size[i], SG_ALIGN);
    }
    b->ntmp = 0;
    wf_free(b->g->alloc, b->e, (size_t)b->cap_e * sizeof(wf_sg_edge), SG_ALIGN);
    b->e = NULL;
    b->ne = b->cap_e = 0;
}

static bool sg_push_edge(sg_build *b, uint32_t from, uint32_t to, uint32_t flags)
{
    if (!sg_grow(b->g->alloc, (void **)&b->e, &b->cap_e, b->ne + 1, sizeof(wf_sg_edge))) {
        return false;
    }
    b->e[b->ne].from = from;
    b->e[b->ne].to = to;
    b->e[b->ne].flags = flags;
    b->ne++;
    return true;
}

static int sg_cmp_edge(const void *x, const void *y)
{
    const wf_sg_edge *a = x, *b = y;
    if (a->from != b->from) {
        return a->from < b->from ? -1 : 1;
    }
    return (a->to > b->to) - (a->to < b->to);
}

/* Sorts b->e by (from, to) and merges duplicates: IGNORE_DEFERRED and
 * CONFLICT survive only if every copy had them. */
static void sg_sort_edges(sg_build *b)
{
    if (b->ne == 0) {
        return;
    }
    qsort(b->e, b->ne, sizeof *b->e, sg_cmp_edge);
    uint32_t k = 1;
    for (uint32_t i = 1; i < b->ne; i++) {
        wf_sg_edge *last = &b->e[k - 1];
        if (b->e[i].from == last->from && b->e[i].to == last->to) {
            last->flags &= b->e[i].flags;
        } else {
            b->e[k++] = b->e[i];
        }
    }
    b->ne = k;
}

/* Error message: "<prefix><n0> -> <n1> -> ... -> <n0>" (or just the names
 * joined when close is false). */
static weft_status sg_error(sg_build *b, weft_status st, const char *prefix,
                            const uint32_t *ids, uint32_t n, bool close)
{
    wf_sgraph *g = b->g;
    size_t len = strlen(prefix);
    uint32_t total = close ? n + 1 : n;
    for (uint32_t i = 0; i < total; i++) {
        len += strlen(wf_sg_name(g, ids[i % n])) + (i ? 4 : 0);
    }
    char *m = wf_alloc(g->alloc, len + 1, 1);
    if (m == NULL) {
        return st;
    }
    size_t at = 0;
    memcpy(m, prefix, strlen(prefix));
    at += strlen(prefix);
    for (uint32_t i = 0; i < total; i++) {
        if (i) {
            memcpy(m + at, " -> ", 4);
            at += 4;
        }
        const char *s = wf_sg_name(g, ids[i % n]);
        memcpy(m + at, s, strlen(s));
        at += strlen(s);
    }
    m[at] = '\0';
    g->error = m;
    g->error_len = len;
    return st;
}

/* ---- bitsets ---- */

static inline void bit_set(uint64_t *w, uint32_t i) { w[i >> 6] |= (uint64_t)1 << (i & 63); }
static inline bool bit_get(const uint64_t *w, uint32_t i)
{
    return (w[i >> 6] >> (i & 63)) & 1u;
}

/* ---- pass 1: hierarchy ---- */

/* state: 0 new, 1 on stack, 2 done. Returns false on a membership cycle,
 * leaving the cycle's set indexes in stack[0..*depth). */
static bool sg_desc(const wf_sgraph *g, uint32_t s, uint8_t *state, uint64_t *desc,
                    uint32_t words, const uint32_t *kids_off, const uint32_t *kids,
                    uint32_t *stack, uint32_t *depth)
{
    if (state[s] == 2) {
        return true;
    }
    if (state[s] == 1) {
        /* trim the stack to the cycle starting at s */
        uint32_t i = 0;
        while (stack[i] != s) {
            i++;
        }
        memmove(stack, stack + i, (size_t)(*depth - i) * sizeof(uint32_t));
        *depth -= i;
        return false;
    }
    state[s] = 1;
    stack[(*depth)++] = s;
    uint64_t *d = desc + (size_t)s * words;
    for (uint32_t k = kids_off[s]; k < kids_off[s + 1]; k++) {
        uint32_t c = kids[k];
        if (WF_SG_IS_SET(c)) {
            uint32_t cs = c & ~WF_SG_SET_BIT;
            if (!sg_desc(g, cs, state, desc, words, kids_off, kids, stack, depth)) {
                return false;
            }
            const uint64_t *cd = desc + (size_t)cs * words;
            for (uint32_t w = 0; w < words; w++) {
                d[w] |= cd[w];
            }
        } else {
            bit_set(d, c);
        }
    }
    state[s] = 2;
    (*depth)--;
    return true;
}

/* ---- pass 3: Kahn with a min-heap ---- */

static void heap_push(uint32_t *h, uint32_t *n, uint32_t v)
{
    uint32_t i = (*n)++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (h[p] <= v) {
            break;
        }
        h[i] = h[p];
        i = p;
    }
    h[i] = v;
}

static uint32_t heap_pop(uint32_t *h, uint32_t *n)
{
    uint32_t top = h[0];
    uint32_t v = h[--(*n)];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1;
        if (l >= *n) {
            break;
        }
        uint32_t c = (l + 1 < *n && h[l + 1] < h[l]) ? l + 1 : l;
        if (h[c] >= v) {
            break;
        }
        h[i] = h[c];
        i = c;
    }
    if (*n > 0) {
        h[i] = v;
    }
    return top;
}

/* Sorts the nv-node graph of the sorted edge list b->e into order[].
 * off[] (nv + 1) gets the CSR offsets into b->e by `from`. Returns the
 * number of nodes emitted (nv unless there is a cycle). */
static uint32_t sg_kahn(sg_build *b, uint32_t nv, uint32_t *off, uint32_t *indeg,
                        uint32_t *heap, uint32_t *order)
{
    memset(off, 0, (size_t)(nv + 1) * sizeof(uint32_t));
    memset(indeg, 0, (size_t)nv * sizeof(uint32_t));
    for (uint32_t i = 0; i < b->ne; i++) {
        off[b->e[i].from + 1]++;
        indeg[b->e[i].to]++;
    }
    for (uint32_t v = 0; v < nv; v++) {
        off[v + 1] += off[v];
    }
    uint32_t nh = 0, no = 0;
    for (uint32_t v = 0; v < nv; v++) {
        if (indeg[v] == 0) {
            heap_push(heap, &nh, v);
        }
    }
    while (nh > 0) {
        uint32_t v = heap_pop(heap, &nh);
        order[no++] = v;
        for (uint32_t k = off[v]; k < off[v + 1]; k++) {
            uint32_t t = b->e[k].to;
            if (--indeg[t] == 0) {
                heap_push(heap, &nh, t);
            }
        }
    }
    return no;
}

/* ---- pass 4: access conflicts ---- */

/* Appends a ∩ b (both sorted) to out; returns the count appended. */
static uint32_t sg_isect(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb,
                         uint32_t *out)
{
    uint32_t i = 0, j = 0, k = 0;
    while (i < na && j < nb) {
        if (a[i] < b[j]) {
            i++;
        } else if (a[i] > b[j]) {
            j++;
        } else {
            if (out) {
                out[k] = a[i];
            }
            k++;
            i++;
            j++;
        }
    }
    return k;
}

#define ACC_R(c) ((c)->ids)
#define ACC_W(c) ((c)->ids + (c)->nreads)
#define ACC_WITH(c) ((c)->ids + (c)->nreads + (c)->nwrites)
#define ACC_WITHOUT(c) ((c)->ids + (c)->nreads + (c)->nwrites + (c)->nwith)

static bool sg_disjoint(const wf_sg_acc *x, const wf_sg_acc *y)
{
    return sg_isect(ACC_WITH(x), x->nwith, ACC_WITHOUT(y), y->nwithout, NULL) != 0 ||
           sg_isect(ACC_WITHOUT(x), x->nwithout, ACC_WITH(y), y->nwith, NULL) != 0;
}

/* Writes the ids u and v conflict on into out (capacity enough for every
 * id of both nodes, duplicates possible) and returns the count. */
static uint32_t sg_conflict_ids(const wf_sg_node *u, const wf_sg_node *v, uint32_t *out)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < u->nacc; i++) {
        const wf_sg_acc *x = &u->acc[i];
        for (uint32_t j = 0; j < v->nacc; j++) {
            const wf_sg_acc *y = &v->acc[j];
            if (x->nwrites == 0 && y->nwrites == 0) {
                continue;
            }
            uint32_t at = k;
            k += sg_isect(ACC_W(x), x->nwrites, ACC_R(y), y->nreads, out + k);
            k += sg_isect(ACC_W(x), x->nwrites, ACC_W(y), y->nwrites, out + k);
            k += sg_isect(ACC_R(x), x->nreads, ACC_W(y), y->nwrites, out + k);
            if (k != at && sg_disjoint(x, y)) {
                k = at;
            }
        }
    }
    return k;
}

static uint32_t sg_node_ids(const wf_sg_node *n)
{
    uint32_t t = 0;
    for (uint32_t i = 0; i < n->nacc; i++) {
        t += n->acc[i].nreads + n->acc[i].nwrites;
    }
    return t;
}

static bool sg_is_ignored(const wf_sg_settings *s, uint32_t id)
{
    for (uint32_t i = 0; i < s->nignored; i++) {
        if (s->ignored[i] == id) {
            return true;
        }
    }
    return false;
}

/* Node ids of a ref (itself, or a set's descendants ascending) into out. */
static uint32_t sg_members(uint32_t ref, const uint64_t *desc, uint32_t words, uint32_t *out)
{
    if (!WF_SG_IS_SET(ref)) {
        out[0] = ref;
        return 1;
    }
    const uint64_t *d = desc + (size_t)(ref & ~WF_SG_SET_BIT) * words;
    uint32_t n = 0;
    for (uint32_t wi = 0; wi < words; wi++) {
        uint64_t x = d[wi];
        for (uint32_t bit = 0; x != 0; bit++, x >>= 1) { /* zero words skip */
            if (x & 1u) {
                out[n++] = wi * 64 + bit;
            }
        }
    }
    return n;
}

/* ---- build ---- */

/* Inside a pass: give up on a failed allocation (wf_sg_build frees every
 * sg_tmp block). */
#define SG_TRY(p)                                                            \
    do {                                                                     \
        if ((p) == NULL) {                                                   \
            return WEFT_ERR_OUT_OF_MEMORY;                                   \
        }                                                                    \
    } while (0)
#define SG_TRYB(c)                                                           \
    do {                                                                     \
        if (!(c)) {                                                          \
            return WEFT_ERR_OUT_OF_MEMORY;                                   \
        }                                                                    \
    } while (0)

/* Records "set hierarchy cycle: a -> b -> a" from the cycle sg_desc left in
 * stack[0 .. depth). */
static weft_status sg_set_cycle_error(sg_build *b, const uint32_t *stack, uint32_t depth)
{
    wf_sgraph *g = b->g;
    const char *pre = "set hierarchy cycle: ";
    size_t len = strlen(pre);
    for (uint32_t i = 0; i <= depth; i++) {
        len += g->sets[stack[i % depth]].name_len + (i ? 4 : 0);
    }
    char *m = wf_alloc(g->alloc, len + 1, 1);
    if (m != NULL) {
        size_t at = strlen(pre);
        memcpy(m, pre, at);
        for (uint32_t i = 0; i <= depth; i++) {
            const wf_sg_set *ss = &g->sets[stack[i % depth]];
            if (i) {
                memcpy(m + at, " -> ", 4);
                at += 4;
            }
            memcpy(m + at, ss->name, ss->name_len);
            at += ss->name_len;
        }
        m[at] = '\0';
        g->error = m;
        g->error_len = len;
    }
    return WEFT_ERR_SCHEDULE_CYCLE;
}

/* Pass 1: each set's member nodes (b->desc, transitively), membership
 * cycles, and which nodes sit under a conditioned set (b->under_cond). */
static weft_status sg_pass_hierarchy(sg_build *b)
{
    const wf_sgraph *g = b->g;
    const uint32_t nn = b->nn, ns = b->ns, words = b->words;
    uint32_t *kids_off = sg_tmp(b, (size_t)(ns + 1) * sizeof(uint32_t));
    uint32_t *kids = sg_tmp(b, (size_t)g->nmembers * sizeof(uint32_t));
    uint32_t *fill = sg_tmp(b, (size_t)(ns + 1) * sizeof(uint32_t));
    uint8_t *sstate = sg_tmp(b, ns);
    uint32_t *stack = sg_tmp(b, (size_t)(ns + 1) * sizeof(uint32_t));
    b->desc = sg_tmp(b, (size_t)ns * words * sizeof(uint64_t));
    b->under_cond = sg_tmp(b, nn);
    SG_TRY(kids_off);
    SG_TRY(kids);
    SG_TRY(fill);
    SG_TRY(sstate);
    SG_TRY(stack);
    SG_TRY(b->desc);
    SG_TRY(b->under_cond);
    for (uint32_t i = 0; i < g->nmembers; i++) {
        kids_off[g->members[i].to + 1]++;
    }
    for (uint32_t s = 0; s < ns; s++) {
        kids_off[s + 1] += kids_off[s];
    }
    memcpy(fill, kids_off, (size_t)(ns + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < g->nmembers; i++) {
        kids[fill[g->members[i].to]++] = g->members[i].from;
    }
    for (uint32_t s = 0; s < ns; s++) {
        uint32_t depth = 0;
        if (!sg_desc(g, s, sstate, b->desc, words, kids_off, kids, stack, &depth)) {
            return sg_set_cycle_error(b, stack, depth);
        }
    }
    for (uint32_t v = 0; v < nn; v++) {
        b->under_cond[v] = (g->nodes[v].flags & WF_SG_CONDITION) != 0;
    }
    for (uint32_t s = 0; s < ns; s++) {
        if (g->sets[s].flags & WF_SG_SET_CONDITION) {
            const uint64_t *d = b->desc + (size_t)s * words;
            for (uint32_t v = 0; v < nn; v++) {
                if (bit_get(d, v)) {
                    b->under_cond[v] = 1;
                }
            }
        }
    }
    return WEFT_OK;
}

/* Pass 2, first half: an empty set is bridged (every edge into it joins
 * every edge out of it, flags intersected) and dropped. Works on the
 * ref-level copy *w of *ne edges (capacity *cap); reports a set ordered
 * against itself in *self_set. False on out of memory. */
static bool sg_bridge_empty_sets(sg_build *b, wf_sg_edge **w, uint32_t *ne, uint32_t *cap,
                                 uint32_t *self_set)
{
    for (uint32_t s = 0; s < b->ns; s++) {
        const uint64_t *d = b->desc + (size_t)s * b->words;
        bool empty = true;
        for (uint32_t k = 0; k < b->words; k++) {
            empty = empty && d[k] == 0;
        }
        if (!empty) {
            continue;
        }
        uint32_t ref = WF_SG_SET_REF(s);
        for (uint32_t i = 0; i < *ne; i++) {
            if ((*w)[i].from == ref && (*w)[i].to == ref) {
                *self_set = s;
            }
        }
        uint32_t before = *ne;
        for (uint32_t i = 0; i < before; i++) {
            if ((*w)[i].to != ref || (*w)[i].from == ref) {
                continue;
            }
            for (uint32_t j = 0; j < before; j++) {
                if ((*w)[j].from != ref || (*w)[j].to == ref) {
                    continue;
                }
                if (!sg_grow(b->g->alloc, (void **)w, cap, *ne + 1, sizeof **w)) {
                    return false;
                }
                (*w)[*ne].from = (*w)[i].from;
                (*w)[*ne].to = (*w)[j].to;
                (*w)[*ne].flags = (*w)[i].flags & (*w)[j].flags;
                (*ne)++;
            }
        }
        /* drop every edge touching s */
        uint32_t k = 0;
        for (uint32_t i = 0; i < *ne; i++) {
            if ((*w)[i].from != ref && (*w)[i].to != ref) {
                (*w)[k++] = (*w)[i];
            }
        }
        *ne = k;
    }
    return true;
}

/* Pass 2, second half: every ref-level edge becomes node-level edges
 * between the members of its ends (member lists gathered from the bitsets
 * word by word); a node ordered against itself is reported in *self.
 * False on out of memory. */
static bool sg_expand_edges(sg_build *b, const wf_sg_edge *w, uint32_t ne, uint32_t *self)
{
    uint32_t *xs = sg_tmp(b, (size_t)(b->nn ? b->nn : 1) * sizeof(uint32_t));
    uint32_t *ys = sg_tmp(b, (size_t)(b->nn ? b->nn : 1) * sizeof(uint32_t));
    if (xs == NULL || ys == NULL) {
        return false;
    }
    for (uint32_t i = 0; i < ne && *self == WF_SG_NONE; i++) {
        uint32_t nx = sg_members(w[i].from, b->desc, b->words, xs);
        uint32_t ny = sg_members(w[i].to, b->desc, b->words, ys);
        for (uint32_t ix = 0; ix < nx && *self == WF_SG_NONE; ix++) {
            for (uint32_t iy = 0; iy < ny; iy++) {
                if (xs[ix] == ys[iy]) {
                    *self = xs[ix];
                    break;
                }
                if (!sg_push_edge(b, xs[ix], ys[iy], w[i].flags & WF_SG_IGNORE_DEFERRED)) {
                    return false;
                }
            }
        }
    }
    return true;
}

/* Pass 2: flattens the declared edges (between nodes and sets) into the
 * sorted node-level edge list b->e. */
static weft_status sg_pass_flatten(sg_build *b)
{
    wf_sgraph *g = b->g;
    wf_allocator *a = g->alloc;
    /* working copy of the ref-level edges */
    uint32_t ne = g->nedges, cap = ne;
    wf_sg_edge *w = NULL;
    if (ne) {
        w = wf_alloc(a, (size_t)ne * sizeof *w, SG_ALIGN);
        if (w == NULL) {
            return WEFT_ERR_OUT_OF_MEMORY;
        }
        memcpy(w, g->edges, (size_t)ne * sizeof *w);
    }
    uint32_t self_set = WF_SG_NONE;
    uint32_t self = WF_SG_NONE;
    bool ok = sg_bridge_empty_sets(b, &w, &ne, &cap, &self_set) &&
              sg_expand_edges(b, w, ne, &self);
    wf_free(a, w, (size_t)cap * sizeof *w, SG_ALIGN);
    if (!ok) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    if (self_set != WF_SG_NONE) {
        const char *pre = "self-edge on set: ";
        size_t len = strlen(pre) + g->sets[self_set].name_len;
        char *m = wf_alloc(a, len + 1, 1);
        if (m != NULL) {
            memcpy(m, pre, strlen(pre));
            memcpy(m + strlen(pre), g->sets[self_set].name, g->sets[self_set].name_len + 1);
            g->error = m;
            g->error_len = len;
        }
        return WEFT_ERR_SCHEDULE_CYCLE;
    }
    if (self != WF_SG_NONE) {
        return sg_error(b, WEFT_ERR_SCHEDULE_CYCLE, "self-edge: ", &self, 1, true);
    }
    sg_sort_edges(b);
    return WEFT_OK;
}

/* After a Kahn pass that left nodes over (indeg > 0 marks them; each has a
 * left-over predecessor): walks predecessors until a node repeats and
 * reports that cycle, rotated to start at its smallest id so the message
 * is stable. */
static weft_status sg_cycle_error(sg_build *b)
{
    const uint32_t nn = b->nn;
    const uint32_t *indeg = b->indeg;
    uint32_t *pred1 = sg_tmp(b, (size_t)nn * sizeof(uint32_t));
    uint32_t *seen = sg_tmp(b, (size_t)nn * sizeof(uint32_t));
    uint32_t *path = sg_tmp(b, (size_t)(nn + 1) * sizeof(uint32_t));
    SG_TRY(pred1);
    SG_TRY(seen);
    SG_TRY(path);
    for (uint32_t v = 0; v < nn; v++) {
        pred1[v] = WF_SG_NONE;
        seen[v] = WF_SG_NONE;
    }
    for (uint32_t i = 0; i < b->ne; i++) {
        uint32_t f = b->e[i].from, t = b->e[i].to;
        if (indeg[f] > 0 && indeg[t] > 0 && pred1[t] == WF_SG_NONE) {
            pred1[t] = f;
        }
    }
    uint32_t v = 0;
    while (indeg[v] == 0) {
        v++;
    }
    uint32_t np = 0;
    while (seen[v] == WF_SG_NONE) {
        seen[v] = np;
        path[np++] = v;
        v = pred1[v];
    }
    /* path[seen[v] .. np) walks predecessors; reverse for forward order */
    uint32_t first = seen[v], len = np - first;
    for (uint32_t i = 0; i < len / 2; i++) {
        uint32_t tmp = path[first + i];
        path[first + i] = path[np - 1 - i];
        path[np - 1 - i] = tmp;
    }
    uint32_t *cyc = path + first, lo = 0;
    for (uint32_t i = 1; i < len; i++) {
        lo = cyc[i] < cyc[lo] ? i : lo;
    }
    for (uint32_t i = 0; i < len; i++) {
        b->heap[i] = cyc[(lo + i) % len];
    }
    return sg_error(b, WEFT_ERR_SCHEDULE_CYCLE, "cycle: ", b->heap, len, true);
}

/* Pass 3: the deterministic topological order (b->order, b->pos), or the
 * cycle that prevents one. */
static weft_status sg_pass_toposort(sg_build *b)
{
    const uint32_t nn = b->nn;
    /* sized for the final graph too: at most nn sync nodes (distances) */
    const uint32_t nmax = 2 * nn + 1;
    b->off = sg_tmp(b, (size_t)(nmax + 1) * sizeof(uint32_t));
    b->indeg = sg_tmp(b, (size_t)nmax * sizeof(uint32_t));
    b->heap = sg_tmp(b, (size_t)nmax * sizeof(uint32_t));
    b->order = sg_tmp(b, (size_t)nmax * sizeof(uint32_t));
    b->pos = sg_tmp(b, (size_t)nmax * sizeof(uint32_t));
    SG_TRY(b->off);
    SG_TRY(b->indeg);
    SG_TRY(b->heap);
    SG_TRY(b->order);
    SG_TRY(b->pos);
    if (sg_kahn(b, nn, b->off, b->indeg, b->heap, b->order) < nn) {
        return sg_cycle_error(b);
    }
    for (uint32_t p = 0; p < nn; p++) {
        b->pos[b->order[p]] = p;
    }
    return WEFT_OK;
}

/* Declared reachability: row v of *out holds every node after v through
 * declared edges. */
static weft_status sg_reachability(sg_build *b, uint64_t **out)
{
    const uint32_t nn = b->nn, words = b->words;
    uint64_t *reach = sg_tmp(b, (size_t)nn * words * sizeof(uint64_t));
    SG_TRY(reach);
    for (uint32_t p = nn; p-- > 0;) {
        uint32_t v = b->order[p];
        uint64_t *r = reach + (size_t)v * words;
        for (uint32_t k = b->off[v]; k < b->off[v + 1]; k++) {
            uint32_t t = b->e[k].to;
            const uint64_t *rt = reach + (size_t)t * words;
            bit_set(r, t);
            for (uint32_t w = 0; w < words; w++) {
                r[w] |= rt[w];
            }
        }
    }
    *out = reach;
    return WEFT_OK;
}

/* Candidate pairs (positions p < q) that may conflict: pairs sharing an id
 * that one of them writes, and every pair with an exclusive node. Pairs
 * outside the list share nothing written, so the exact test would find no
 * conflict: skipping them turns the all-pairs scan (O(n^2) even for n
 * disjoint systems) into work proportional to the real contention. When
 * the list would be dense, every pair is a candidate instead (*all_pairs,
 * no memory). Keys are (lo << 32 | hi), sorted and unique. */
static weft_status sg_candidate_pairs(sg_build *b, uint64_t **out_keys, uint32_t *out_nkeys,
                                      bool *all_pairs)
{
    const wf_sgraph *g = b->g;
    const uint32_t nn = b->nn;
    const uint32_t *pos = b->pos;
    *out_keys = NULL;
    *out_nkeys = 0;
    *all_pairs = false;
    uint32_t nent = 0;
    for (uint32_t v = 0; v < nn; v++) {
        nent += sg_node_ids(&g->nodes[v]);
    }
    uint64_t *ent = sg_tmp(b, (size_t)(nent ? nent : 1) * sizeof(uint64_t));
    SG_TRY(ent);
    /* (id << 32 | pos << 1 | write) */
    uint32_t m = 0;
    for (uint32_t v = 0; v < nn; v++) {
        const wf_sg_node *nv = &g->nodes[v];
        for (uint32_t i = 0; i < nv->nacc; i++) {
            const wf_sg_acc *c = &nv->acc[i];
            for (uint32_t k = 0; k < c->nreads + c->nwrites; k++) {
                uint64_t wbit = k >= c->nreads ? 1u : 0u;
                ent[m++] = ((uint64_t)c->ids[k] << 32) | ((uint64_t)pos[v] << 1) | wbit;
            }
        }
    }
    qsort(ent, m, sizeof *ent, sg_cmp_u64);
    /* one entry per (id, pos), write if any block writes */
    uint32_t u = 0;
    for (uint32_t i = 0; i < m; i++) {
        if (u && (ent[u - 1] >> 1) == (ent[i] >> 1)) {
            ent[u - 1] |= ent[i] & 1u;
        } else {
            ent[u++] = ent[i];
        }
    }
    m = u;
    uint64_t total = 0;
    uint32_t nexcl = 0;
    for (uint32_t v = 0; v < nn; v++) {
        nexcl += (g->nodes[v].flags & WF_SG_EXCLUSIVE) != 0;
    }
    total += (uint64_t)nexcl * nn;
    for (uint32_t i = 0; i < m;) {
        uint32_t j = i, writers = 0;
        while (j < m && (ent[j] >> 32) == (ent[i] >> 32)) {
            writers += (uint32_t)(ent[j] & 1u);
            j++;
        }
        total += (uint64_t)writers * (j - i);
        i = j;
    }
    if (total > (uint64_t)nn * nn / 4 || total > (1u << 24)) {
        *all_pairs = true;
        return WEFT_OK;
    }
    uint64_t *keys = sg_tmp(b, (size_t)(total ? total : 1) * sizeof(uint64_t));
    SG_TRY(keys);
    uint32_t nkeys = 0;
    for (uint32_t i = 0; i < m;) {
        uint32_t j = i;
        while (j < m && (ent[j] >> 32) == (ent[i] >> 32)) {
            j++;
        }
        for (uint32_t x = i; x < j; x++) {
            if (!(ent[x] & 1u)) {
                continue;
            }
            uint32_t px = (uint32_t)(ent[x] & 0xFFFFFFFFu) >> 1;
            for (uint32_t y = i; y < j; y++) {
                uint32_t py = (uint32_t)(ent[y] & 0xFFFFFFFFu) >> 1;
                if (px != py) {
                    uint32_t lo = px < py ? px : py, hi = px < py ? py : px;
                    keys[nkeys++] = ((uint64_t)lo << 32) | hi;
                }
            }
        }
        i = j;
    }
    for (uint32_t v = 0; v < nn; v++) {
        if (!(g->nodes[v].flags & WF_SG_EXCLUSIVE)) {
            continue;
        }
        for (uint32_t q = 0; q < nn; q++) {
            if (q != pos[v]) {
                uint32_t lo = q < pos[v] ? q : pos[v], hi = q < pos[v] ? pos[v] : q;
                keys[nkeys++] = ((uint64_t)lo << 32) | hi;
            }
        }
    }
    qsort(keys, nkeys, sizeof *keys, sg_cmp_u64);
    uint32_t k = 0;
    for (uint32_t i = 0; i < nkeys; i++) {
        if (k == 0 || keys[k - 1] != keys[i]) {
            keys[k++] = keys[i];
        }
    }
    *out_keys = keys;
    *out_nkeys = k;
    return WEFT_OK;
}

/* Appends the ambiguity of nodes u and v (conflicting on ids[0 .. k), k
 * not yet sorted; excl: one of them is exclusive) unless every id is
 * ignored. */
static weft_status sg_add_ambiguity(sg_build *b, uint32_t u, uint32_t v, uint32_t *ids,
                                    uint32_t k, bool excl)
{
    wf_sgraph *g = b->g;
    wf_allocator *a = g->alloc;
    k = sg_sort_unique(ids, k);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (!sg_is_ignored(b->set, ids[i])) {
            ids[kept++] = ids[i];
        }
    }
    if (!excl && kept == 0) {
        return WEFT_OK;
    }
    SG_TRYB(sg_grow(a, (void **)&g->amb, &g->cap_amb, g->namb + 1, sizeof(wf_sg_ambiguity)));
    if (kept) {
        SG_TRYB(sg_grow(a, (void **)&g->amb_ids, &g->cap_amb_ids, g->namb_ids + kept,
                        sizeof(uint32_t)));
        memcpy(g->amb_ids + g->namb_ids, ids, (size_t)kept * sizeof(uint32_t));
    }
    wf_sg_ambiguity *am = &g->amb[g->namb++];
    am->a = u < v ? u : v;
    am->b = u < v ? v : u;
    am->first = g->namb_ids;
    am->nids = kept;
    am->exclusive = excl;
    g->namb_ids += kept;
    return WEFT_OK;
}

/* Puts the ambiguities found from index amb0 on in report order: the
 * earlier node's position, then the later one's (the conflict pass visits
 * positions backwards). */
static weft_status sg_sort_ambiguities(sg_build *b, uint32_t amb0)
{
    wf_sgraph *g = b->g;
    if (g->namb - amb0 <= 1) {
        return WEFT_OK;
    }
    uint32_t na = g->namb - amb0;
    uint64_t *ord = sg_tmp(b, (size_t)na * 2 * sizeof(uint64_t));
    wf_sg_ambiguity *tmp = sg_tmp(b, (size_t)na * sizeof(wf_sg_ambiguity));
    SG_TRY(ord);
    SG_TRY(tmp);
    for (uint32_t i = 0; i < na; i++) {
        const wf_sg_ambiguity *am = &g->amb[amb0 + i];
        uint32_t pa = b->pos[am->a], pb = b->pos[am->b];
        uint32_t lo = pa < pb ? pa : pb, hi = pa < pb ? pb : pa;
        ord[2 * i] = ((uint64_t)lo << 32) | hi;
        ord[2 * i + 1] = i;
    }
    qsort(ord, na, 2 * sizeof(uint64_t), sg_cmp_u64);
    for (uint32_t i = 0; i < na; i++) {
        tmp[i] = g->amb[amb0 + (uint32_t)ord[2 * i + 1]];
    }
    memcpy(g->amb + amb0, tmp, (size_t)na * sizeof *tmp);
    return WEFT_OK;
}

/* Pass 4: orders every conflicting pair that no declared edge orders (a
 * conflict edge, in topological order) and reports the ones not excused as
 * ambiguities. Conflict edges are appended to b->e (re-sorted after). */
static weft_status sg_pass_conflicts(sg_build *b)
{
    const wf_sgraph *g = b->g;
    const uint32_t nn = b->nn, words = b->words;
    const uint32_t *order = b->order;
    uint64_t *reach;
    weft_status st = sg_reachability(b, &reach);
    if (st != WEFT_OK) {
        return st;
    }
    uint32_t maxids = 0;
    uint32_t maxacc = 0;
    for (uint32_t v = 0; v < nn; v++) {
        uint32_t c = sg_node_ids(&g->nodes[v]);
        maxids = c > maxids ? c : maxids;
        maxacc = g->nodes[v].nacc > maxacc ? g->nodes[v].nacc : maxacc;
    }
    /* each access pair contributes at most |x| + |y| ids */
    size_t scratch_n = (size_t)2 * maxids * (maxacc ? maxacc : 1) + 1;
    uint32_t *ids = sg_tmp(b, scratch_n * sizeof(uint32_t));
    SG_TRY(ids);
    uint32_t base_ne = b->ne;
    uint64_t *keys;
    uint32_t nkeys;
    bool all_pairs;
    st = sg_candidate_pairs(b, &keys, &nkeys, &all_pairs);
    if (st != WEFT_OK) {
        return st;
    }
    /* Reverse topological order: a node's successors have final rows in
     * `areach` (declared and conflict edges), so a conflict edge already
     * implied by earlier ones is not added (a transitive reduction of
     * conflict edges: n writers of one component cost n - 1 edges, not
     * n(n-1)/2). Ambiguities still follow the declared reachability
     * (`reach`), as Bevy's ambiguity checker reports them. */
    uint64_t *areach = sg_tmp(b, (size_t)nn * words * sizeof(uint64_t));
    SG_TRY(areach);
    uint32_t kend = nkeys;
    uint32_t amb0 = g->namb;
    for (uint32_t p = nn; p-- > 0;) {
        uint32_t u = order[p];
        const wf_sg_node *nu = &g->nodes[u];
        const uint64_t *ru = reach + (size_t)u * words;
        uint64_t *ar = areach + (size_t)u * words;
        for (uint32_t k = b->off[u]; k < b->off[u + 1]; k++) {
            uint32_t t = b->e[k].to;
            const uint64_t *rt = areach + (size_t)t * words;
            bit_set(ar, t);
            for (uint32_t w = 0; w < words; w++) {
                ar[w] |= rt[w];
            }
        }
        uint32_t kbeg = kend;
        while (kbeg > 0 && (uint32_t)(keys[kbeg - 1] >> 32) == p) {
            kbeg--;
        }
        uint32_t count = all_pairs ? nn - p - 1 : kend - kbeg;
        for (uint32_t i = 0; i < count; i++) {
            uint32_t q = all_pairs ? p + 1 + i : (uint32_t)(keys[kbeg + i] & 0xFFFFFFFFu);
            uint32_t v = order[q];
            if (bit_get(ru, v)) {
                continue;
            }
            const wf_sg_node *nv = &g->nodes[v];
            bool excl = ((nu->flags | nv->flags) & WF_SG_EXCLUSIVE) != 0;
            uint32_t k = excl ? 0 : sg_conflict_ids(nu, nv, ids);
            if (!excl && k == 0) {
                continue;
            }
            if (!bit_get(ar, v)) {
                SG_TRYB(sg_push_edge(b, u, v, WF_SG_EDGE_CONFLICT | WF_SG_IGNORE_DEFERRED));
                const uint64_t *rv = areach + (size_t)v * words;
                bit_set(ar, v);
                for (uint32_t w = 0; w < words; w++) {
                    ar[w] |= rv[w];
                }
            }
            if ((nu->flags | nv->flags) & WF_SG_APPLY) {
                continue;
            }
            st = sg_add_ambiguity(b, u, v, ids, k, excl);
            if (st != WEFT_OK) {
                return st;
            }
        }
        kend = kbeg;
    }
    st = sg_sort_ambiguities(b, amb0);
    if (st == WEFT_OK && b->ne != base_ne) {
        sg_sort_edges(b);
    }
    return st;
}

/* Pass 5 (auto sync points), first half: the longest-path distance of
 * every node in sync points, where an edge out of a command-emitting node
 * (or one that inherited pending commands through an IGNORE_DEFERRED edge)
 * and an edge into an apply point weigh 1; explicit_at[d] is the valid
 * apply point at distance d, if any. b->off must hold the CSR offsets of
 * b->e. */
static void sg_sync_distances(sg_build *b, uint32_t *dist, uint8_t *pending,
                              uint32_t *explicit_at)
{
    const wf_sgraph *g = b->g;
    const uint8_t *under_cond = b->under_cond;
#define SG_VALID_APPLY(v) ((g->nodes[v].flags & WF_SG_APPLY) && !under_cond[v])
    /* conflict edges were appended in topological order, so `order` is
     * still a topological order of the augmented graph */
    for (uint32_t p = 0; p < b->nn; p++) {
        uint32_t n = b->order[p];
        bool needs;
        if (SG_VALID_APPLY(n)) {
            explicit_at[dist[n]] = n;
            needs = false;
        } else {
            needs = pending[n] || (g->nodes[n].flags & WF_SG_DEFERRED);
        }
        for (uint32_t k = b->off[n]; k < b->off[n + 1]; k++) {
            const wf_sg_edge *e = &b->e[k];
            uint32_t t = e->to;
            bool edge_needs = needs;
            if (e->flags & WF_SG_EDGE_CONFLICT) {
                edge_needs = false; /* extension: see file header */
            } else if (needs && !(g->nodes[t].flags & WF_SG_EXCLUSIVE) &&
                       (e->flags & WF_SG_IGNORE_DEFERRED)) {
                pending[t] = 1;
                edge_needs = false;
            }
            uint32_t wgt = (edge_needs || SG_VALID_APPLY(t)) ? 1u : 0u;
            if (dist[n] + wgt > dist[t]) {
                dist[t] = dist[n] + wgt;
            }
        }
    }
#undef SG_VALID_APPLY
}

/* Pass 5: routes every edge that crosses a distance through the sync point
 * of its target's distance (the explicit apply point there, or one
 * inserted: node nn + i, its distance in b->sync_dist[i]). */
static weft_status sg_pass_sync(sg_build *b)
{
    const wf_sgraph *g = b->g;
    const uint32_t nn = b->nn;
    b->nsync = 0;
    b->sync_dist = sg_tmp(b, (size_t)(nn + 1) * sizeof(uint32_t));
    SG_TRY(b->sync_dist);
    if (!b->set->auto_insert_sync || nn == 0) {
        return WEFT_OK;
    }
    /* CSR of the (sorted) edge list with conflict edges included */
    uint32_t *off = b->off;
    memset(off, 0, (size_t)(nn + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < b->ne; i++) {
        off[b->e[i].from + 1]++;
    }
    for (uint32_t v = 0; v < nn; v++) {
        off[v + 1] += off[v];
    }
    uint32_t *dist = sg_tmp(b, (size_t)nn * sizeof(uint32_t));
    uint8_t *pending = sg_tmp(b, nn);
    uint32_t *explicit_at = sg_tmp(b, (size_t)(nn + 1) * sizeof(uint32_t));
    uint32_t *auto_at = sg_tmp(b, (size_t)(nn + 1) * sizeof(uint32_t));
    SG_TRY(dist);
    SG_TRY(pending);
    SG_TRY(explicit_at);
    SG_TRY(auto_at);
    for (uint32_t d = 0; d <= nn; d++) {
        explicit_at[d] = WF_SG_NONE;
        auto_at[d] = WF_SG_NONE;
    }
    sg_sync_distances(b, dist, pending, explicit_at);
    uint32_t base = b->ne;
    for (uint32_t i = 0; i < base; i++) {
        wf_sg_edge e = b->e[i];
        uint32_t n = e.from, t = e.to;
        if (dist[n] == dist[t] || (g->nodes[t].flags & WF_SG_APPLY)) {
            continue;
        }
        uint32_t d = dist[t];
        uint32_t sp = explicit_at[d];
        if (sp == WF_SG_NONE) {
            if (auto_at[d] == WF_SG_NONE) {
                auto_at[d] = nn + b->nsync;
                b->sync_dist[b->nsync++] = d;
            }
            sp = auto_at[d];
        }
        b->e[i].from = WF_SG_NONE; /* removed */
        SG_TRYB(sg_push_edge(b, n, sp, 0));
        SG_TRYB(sg_push_edge(b, sp, t, 0));
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < b->ne; i++) {
        if (b->e[i].from != WF_SG_NONE) {
            b->e[k++] = b->e[i];
        }
    }
    b->ne = k;
    sg_sort_edges(b);
    return WEFT_OK;
}

/* Pass 6: the final order over nodes and sync points, and the result
 * arrays (successors by position, predecessor counts). */
static weft_status sg_pass_compile(sg_build *b)
{
    wf_sgraph *g = b->g;
    wf_allocator *a = g->alloc;
    const uint32_t nn = b->nn, nsync = b->nsync;
    const uint32_t nt = nn + nsync;
    uint32_t *order = b->order;
    uint32_t *indeg = b->indeg;
    if (sg_kahn(b, nt, b->off, indeg, b->heap, order) != nt) {
        return WEFT_ERR_INTERNAL;
    }
    g->ntotal = nt; /* counts first: sg_free_result frees by them */
    g->nsucc = b->ne;
    g->nsync = nsync;
    g->order = wf_alloc(a, sg_n1(nt) * sizeof(uint32_t), SG_ALIGN);
    g->pos_of = wf_alloc(a, sg_n1(nt) * sizeof(uint32_t), SG_ALIGN);
    g->pred_count = wf_calloc(a, sg_n1(nt) * sizeof(uint32_t), SG_ALIGN);
    g->succ_off = wf_calloc(a, ((size_t)nt + 1) * sizeof(uint32_t), SG_ALIGN);
    g->succ = wf_alloc(a, sg_n1(b->ne) * sizeof(uint32_t), SG_ALIGN);
    g->sync_nodes = wf_alloc(a, sg_n1(nsync) * sizeof(uint32_t), SG_ALIGN);
    g->sync_dist = wf_alloc(a, sg_n1(nsync) * sizeof(uint32_t), SG_ALIGN);
    if (!g->order || !g->pos_of || !g->pred_count || !g->succ_off || !g->succ ||
        !g->sync_nodes || !g->sync_dist) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    memcpy(g->order, order, (size_t)nt * sizeof(uint32_t));
    for (uint32_t p = 0; p < nt; p++) {
        g->pos_of[order[p]] = p;
    }
    for (uint32_t i = 0; i < b->ne; i++) {
        g->succ_off[g->pos_of[b->e[i].from] + 1]++;
        g->pred_count[g->pos_of[b->e[i].to]]++;
    }
    for (uint32_t p = 0; p < nt; p++) {
        g->succ_off[p + 1] += g->succ_off[p];
    }
    memcpy(indeg, g->succ_off, (size_t)nt * sizeof(uint32_t));
    for (uint32_t i = 0; i < b->ne; i++) {
        g->succ[indeg[g->pos_of[b->e[i].from]]++] = g->pos_of[b->e[i].to];
    }
    for (uint32_t p = 0; p < nt; p++) {
        uint32_t s0 = g->succ_off[p], s1 = g->succ_off[p + 1];
        qsort(g->succ + s0, s1 - s0, sizeof(uint32_t), sg_cmp_u32);
    }
    for (uint32_t i = 0; i < nsync; i++) {
        g->sync_nodes[i] = nn + i;
        g->sync_dist[i] = b->sync_dist[i];
    }
    g->built = true;
    return WEFT_OK;
}

#undef SG_TRY
#undef SG_TRYB

weft_status wf_sg_build(wf_sgraph *g, const wf_sg_settings *settings)
{
    wf_sg_settings defaults = wf_sg_default_settings();
    if (settings == NULL) {
        settings = &defaults;
    }
    sg_free_result(g);
    sg_build b;
    memset(&b, 0, sizeof b);
    b.g = g;
    b.set = settings;
    b.nn = g->nnodes;
    b.ns = g->nsets;
    b.words = (b.nn + 63) / 64 ? (b.nn + 63) / 64 : 1;
    weft_status st = sg_pass_hierarchy(&b);
    if (st == WEFT_OK) {
        st = sg_pass_flatten(&b);
    }
    if (st == WEFT_OK) {
        st = sg_pass_toposort(&b);
    }
    if (st == WEFT_OK) {
        st = sg_pass_conflicts(&b);
    }
    if (st == WEFT_OK) {
        st = sg_pass_sync(&b);
    }
    if (st == WEFT_OK) {
        st = sg_pass_compile(&b);
    }
    sg_tmp_free_all(&b);
    if (st != WEFT_OK) {
        char *keep = g->error;
        size_t keep_len = g->error_len;
        g->error = NULL;
        g->error_len = 0;
        sg_free_result(g);
        g->error = keep;
        g->error_len = keep_len;
    }
    return st;
}

bool wf_sg_has_edge(const wf_sgraph *g, uint32_t from, uint32_t to)
{
    if (!g->built || from >= g->ntotal || to >= g->ntotal) {
        return false;
    }
    uint32_t pf = g->pos_of[from], pt = g->pos_of[to];
    for (uint32_t k = g->succ_off[pf]; k < g->succ_off[pf + 1]; k++) {
        if (g->succ[k] == pt) {
            return true;
        }
    }
    return false;
}

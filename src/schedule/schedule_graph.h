/* src/schedule/schedule_graph.h - the pure graph-building layer of a schedule.
 * SPDX-License-Identifier: MIT
 *
 * A wf_sgraph holds what the public schedule API will collect: nodes
 * (systems and user-added apply points) with declared access, sets (nested,
 * possibly conditioned) and before/after edges between nodes or sets. Build
 * turns that into the arrays an executor needs:
 * a deterministic topological order, predecessor counts, CSR successor
 * lists and the list of auto-inserted sync nodes, plus an ambiguity report
 * (pairs in conflict that nothing orders). Nothing here runs a system; see schedule_graph.c for the algorithm.
 *
 * Ids: a node is its registration index (0, 1, ...), a set is
 * WF_SG_SET_REF(index). Auto sync nodes created by a build get ids
 * nnodes, nnodes + 1, ... (valid until the next build).
 *
 * Threads: driver thread only; no internal locking.
 */
#ifndef WF_SCHEDULE_GRAPH_H
#define WF_SCHEDULE_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/alloc.h"

/* Node flags. */
#define WF_SG_EXCLUSIVE 0x01u /* runs alone; conflicts with every node */
#define WF_SG_DEFERRED 0x02u  /* emits commands (has_deferred) */
#define WF_SG_APPLY 0x04u     /* a user-added apply point (ApplyDeferred) */
#define WF_SG_CONDITION 0x08u /* has its own run condition(s) */
#define WF_SG_AUTO_SYNC 0x10u /* set by build on auto-inserted sync nodes */

/* Set flags. */
#define WF_SG_SET_CONDITION 0x01u /* the set has run condition(s) */

/* Edge flags. */
#define WF_SG_IGNORE_DEFERRED 0x01u /* this ordering needs no sync point */
#define WF_SG_EDGE_CONFLICT 0x02u   /* internal: added for a conflicting pair */

#define WF_SG_SET_BIT 0x80000000u
#define WF_SG_SET_REF(i) (WF_SG_SET_BIT | (uint32_t)(i))
#define WF_SG_IS_SET(r) (((r) & WF_SG_SET_BIT) != 0)
#define WF_SG_NONE UINT32_MAX

/* One access block: a query (its component reads/writes and one With/Without
 * conjunct of filters) or a system's resource uses (no filters). Ids need
 * not be sorted; the graph keeps sorted, de-duplicated copies. */
typedef struct wf_sg_access {
    const uint32_t *reads;
    uint32_t nreads;
    const uint32_t *writes;
    uint32_t nwrites;
    const uint32_t *with;
    uint32_t nwith;
    const uint32_t *without;
    uint32_t nwithout;
} wf_sg_access;

typedef struct wf_sg_settings {
    bool auto_insert_sync;   /* default true */
    const uint32_t *ignored; /* ids whose conflicts are not reported */
    uint32_t nignored;
} wf_sg_settings;

/* One reported ambiguity: nodes a < b (registration index), the ids they
 * conflict on are amb_ids[first .. first + nids); exclusive pairs have none. */
typedef struct wf_sg_ambiguity {
    uint32_t a, b;
    uint32_t first, nids;
    bool exclusive;
} wf_sg_ambiguity;

/* Internal: a stored access block, ids laid out reads|writes|with|without. */
typedef struct wf_sg_acc {
    uint32_t *ids;
    uint32_t nreads, nwrites, nwith, nwithout;
    uint32_t alloc_len; /* ids allocated (before de-duplication) */
} wf_sg_acc;

typedef struct wf_sg_node {
    char *name;
    size_t name_len;
    uint32_t flags;
    uint32_t nacc, cap_acc;
    wf_sg_acc *acc;
} wf_sg_node;

typedef struct wf_sg_set {
    char *name;
    size_t name_len;
    uint32_t flags;
} wf_sg_set;

typedef struct wf_sg_edge {
    uint32_t from, to, flags;
} wf_sg_edge;

typedef struct wf_sgraph {
    wf_allocator *alloc;
    /* ---- input ---- */
    wf_sg_node *nodes;
    uint32_t nnodes, cap_nodes;
    wf_sg_set *sets;
    uint32_t nsets, cap_sets;
    wf_sg_edge *members; /* (child ref, set index, 0) */
    uint32_t nmembers, cap_members;
    wf_sg_edge *edges; /* (before ref, after ref, flags) */
    uint32_t nedges, cap_edges;
    /* ---- result of the last successful build ---- */
    bool built;
    uint32_t ntotal;       /* nnodes + nsync */
    uint32_t *order;       /* [ntotal] node id at each topological position */
    uint32_t *pos_of;      /* [ntotal] position of each node id */
    uint32_t *pred_count;  /* [ntotal] by position */
    uint32_t *succ_off;    /* [ntotal + 1] CSR offsets by position */
    uint32_t *succ;        /* [nsucc] successor positions, ascending */
    uint32_t nsucc;
    uint32_t *sync_nodes;  /* [nsync] ids of auto sync nodes, by distance */
    uint32_t *sync_dist;   /* [nsync] distance each one serves */
    uint32_t nsync;
    wf_sg_ambiguity *amb;
    uint32_t namb, cap_amb;
    uint32_t *amb_ids;
    uint32_t namb_ids, cap_amb_ids;
    /* ---- last build error message (NULL if none) ---- */
    char *error;
    size_t error_len;
} wf_sgraph;

void wf_sg_init(wf_sgraph *g, wf_allocator *alloc);
void wf_sg_fini(wf_sgraph *g);
wf_sg_settings wf_sg_default_settings(void);

/* Returns the new node id, or WF_SG_NONE on out of memory. */
uint32_t wf_sg_add_node(wf_sgraph *g, const char *name, uint32_t flags);
/* Appends one access block to a node. */
weft_status wf_sg_add_access(wf_sgraph *g, uint32_t node, const wf_sg_access *acc);
/* Returns WF_SG_SET_REF(index), or WF_SG_NONE on out of memory. */
uint32_t wf_sg_add_set(wf_sgraph *g, const char *name, uint32_t flags);
/* child: a node id or a set ref; set: a set ref. */
weft_status wf_sg_in_set(wf_sgraph *g, uint32_t child, uint32_t set);
/* before runs before after; either may be a node id or a set ref. */
weft_status wf_sg_order(wf_sgraph *g, uint32_t before, uint32_t after, uint32_t flags);

/* Builds the compiled arrays. WEFT_ERR_SCHEDULE_CYCLE on a self-edge or a
 * cycle (message in g->error names every node of one cycle),
 * WEFT_ERR_OUT_OF_MEMORY, WEFT_ERR_INVALID_ARG. On failure the previous
 * result is gone (g->built false). */
weft_status wf_sg_build(wf_sgraph *g, const wf_sg_settings *settings);

/* After a build: is there a direct edge from node id `from` to `to`? */
bool wf_sg_has_edge(const wf_sgraph *g, uint32_t from, uint32_t to);
/* Name of a node id (auto sync nodes: "sync"). */
const char *wf_sg_name(const wf_sgraph *g, uint32_t node);

#endif

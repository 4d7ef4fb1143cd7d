/* src/storage/archetype_graph.h - archetypes, tables and the migration graph.
 * SPDX-License-Identifier: MIT
 *
 * An archetype is a unique sorted set of component ids (INV-5); archetype 0
 * is the empty set and table 0 the empty table. Archetypes and tables are
 * append-only and never deleted while the world lives (INV-6), so their ids
 * index the arrays below and pointers to them stay valid. Each archetype's
 * table holds exactly its table-storage ids (INV-3, INV-4): archetypes that
 * differ only in sparse components share one table.
 *
 * Two hash maps (open addressing over XXH3 of the sorted ids) find an
 * archetype by its full set and a table by its table set. Each archetype
 * caches its edges: "add c" and "remove c" -> archetype id, in a small
 * open-addressing map, so a repeated migration does no set hashing. An
 * edge between archetypes of different tables also holds the move plan
 * (table.h) of their tables, built when the edge is created, so the move
 * itself makes no lookup.
 * Creation allocates everything first: on OOM nothing is changed.
 * Driver thread only.
 */
#ifndef WF_ARCHETYPE_GRAPH_H
#define WF_ARCHETYPE_GRAPH_H

#include "core/check.h"
#include "storage/table.h"

#define WF_EDGE_REMOVE 0x80000000u

typedef struct wf_edge {
    uint32_t key;    /* component id (add) or id | WF_EDGE_REMOVE; 0 = empty */
    uint32_t target; /* archetype id */
    wf_move_plan *plan; /* row move between the two tables (owned by the
                           source table), NULL when they share a table */
} wf_edge;

static inline uint32_t wf_edge_slot(uint32_t key, uint32_t mask)
{
    return ((key * 0x9E3779B1u) >> 16) & mask;
}

typedef struct wf_archetype {
    uint32_t id;
    wf_table *table;          /* table holding the table-storage ids */
    const int16_t *col_map;   /* table->col_map, copied to save a hop */
    uint32_t col_map_len;     /* table->col_map_len */
    wf_column *cols;          /* table->cols */
    uint32_t last_key;        /* one-entry cache of the edge map: the key
                                 last looked up (0: none; keys are never 0) */
    struct wf_archetype *last_to; /* its target: an edge's target never
                                 changes and archetypes are never freed */
    wf_move_plan *last_plan;  /* its plan (NULL: same table) */
    weft_component *ids;      /* [id_count] sorted, all storages */
    uint32_t id_count;
    weft_component *sparse_ids; /* [sparse_count] the sparse subset, sorted */
    uint32_t sparse_count;
    uint64_t hash;            /* XXH3 of ids */
    int32_t entity_count;     /* live entities in this archetype */
    uint8_t event_mask;       /* OR of its components' event masks */
    wf_edge *edges;           /* [edge_cap] open addressing, or NULL */
    uint32_t edge_cap;        /* power of two or 0 */
    uint32_t edge_count;
} wf_archetype;

typedef struct wf_slot {
    uint64_t hash;
    uint32_t id;   /* archetype or table id + 1; 0 = empty */
} wf_slot;

typedef struct wf_graph {
    wf_archetype **archetypes; /* [arch_count] */
    uint32_t arch_count;
    uint32_t arch_cap;
    wf_table **tables;         /* [table_count] */
    uint32_t table_count;
    uint32_t table_cap;
    wf_slot *arch_map;         /* [arch_map_cap] */
    uint32_t arch_map_cap;
    wf_slot *table_map;        /* [table_map_cap] */
    uint32_t table_map_cap;
} wf_graph;

/* Creates archetype 0 / table 0. False on OOM. */
bool wf_graph_init(wf_graph *g, wf_allocator *a, wf_registry *reg);
/* Destroys every table (running dtors) and archetype. */
void wf_graph_fini(wf_graph *g, wf_allocator *a);
/* Archetype with exactly the sorted, unique `ids`, created when missing;
 * NULL on OOM. */
wf_archetype *wf_graph_ensure(wf_graph *g, wf_allocator *a, wf_registry *reg,
                              const weft_component *ids, uint32_t count);
/* Existing archetype with the sorted `ids`, or NULL. */
wf_archetype *wf_graph_find(const wf_graph *g, const weft_component *ids,
                            uint32_t count);
/* Cached edge or NULL. */
static inline const wf_edge *wf_graph_edge(const wf_archetype *from, uint32_t key)
{
    if (!from->edge_cap) {
        return NULL;
    }
    uint32_t mask = from->edge_cap - 1;
    for (uint32_t j = wf_edge_slot(key, mask); from->edges[j].key; j = (j + 1) & mask) {
        if (from->edges[j].key == key) {
            return &from->edges[j];
        }
    }
    return NULL;
}
/* Uncached half of wf_graph_add / wf_graph_remove (key as in wf_edge). */
wf_archetype *wf_graph_step_slow(wf_graph *g, wf_allocator *a, wf_registry *reg,
                                 wf_archetype *from, uint32_t key, wf_move_plan **out_plan);
/* Target of adding (key = c) or removing (key = c | WF_EDGE_REMOVE) a
 * component: itself when c is already present / absent. *out_plan gets
 * the plan moving a row between their tables, NULL when they share one.
 * NULL on OOM (an archetype created on the way stays; nothing else
 * changed). Cached as an edge on first use. The last edge taken from each
 * archetype is also kept in the archetype (last_key/last_to/last_plan): an
 * entity toggling a component crosses the same two edges again and again,
 * and a hit then costs loads from the archetype alone. */
static inline wf_archetype *wf_graph_step(wf_graph *g, wf_allocator *a, wf_registry *reg,
                                          wf_archetype *from, uint32_t key,
                                          wf_move_plan **out_plan)
{
    if (WF_LIKELY(from->last_key == key)) {
        *out_plan = from->last_plan;
        return from->last_to;
    }
    const wf_edge *ed = wf_graph_edge(from, key);
    if (ed) {
        wf_archetype *to = g->archetypes[ed->target];
        from->last_key = key;
        from->last_to = to;
        from->last_plan = ed->plan;
        *out_plan = ed->plan;
        return to;
    }
    return wf_graph_step_slow(g, a, reg, from, key, out_plan);
}
static inline wf_archetype *wf_graph_add(wf_graph *g, wf_allocator *a, wf_registry *reg,
                                         wf_archetype *from, weft_component c,
                                         wf_move_plan **out_plan)
{
    return wf_graph_step(g, a, reg, from, c, out_plan);
}
static inline wf_archetype *wf_graph_remove(wf_graph *g, wf_allocator *a,
                                            wf_registry *reg, wf_archetype *from,
                                            weft_component c, wf_move_plan **out_plan)
{
    return wf_graph_step(g, a, reg, from, c | WF_EDGE_REMOVE, out_plan);
}
/* Binary search: does the archetype contain c? */
bool wf_archetype_has(const wf_archetype *arch, weft_component c);

#endif

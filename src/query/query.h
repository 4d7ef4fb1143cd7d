/* src/query/query.h - compiled queries, archetype matching, row filters.
 * SPDX-License-Identifier: MIT
 *
 * A query is compiled once from its descriptor into terms. Matching is
 * decided per archetype (component presence, WITH/WITHOUT, or-groups, the
 * Disabled rule) and recorded per table: a cached query keeps one wf_match
 * per table that holds at least one matching archetype, with the column of
 * every term in that table, and a bitset of matching archetypes. Archetypes
 * are tested once each: the query remembers how many it has seen
 * (`arch_gen`) and tests only newer ones (INV-11). The first update walks
 * the component index of the rarest required component instead of every
 * archetype.
 *
 * A table is "partial" when only some of its archetypes match (they differ
 * in sparse components); its rows are then filtered one by one through the
 * entity records, which is exact for sparse WITH/WITHOUT. Added/Changed
 * filters are evaluated per row too, after a per-column summary check that
 * skips whole tables with nothing new.
 *
 * The match entry caches `partial` so iteration never reads the table's
 * cold archetype_count: a table's archetype_count grows only when an
 * archetype is created, every update tests every new archetype, and an
 * update recomputes the flag of the table of every archetype it tests
 * (matching or not) whose table is matched. So after an update, for every
 * match, partial == (arch_count < table->archetype_count).
 *
 * The module works on storage only (graph, registry, entity records, tick);
 * the world layer handles phases and deferred structural changes.
 * Driver thread only.
 */
#ifndef WF_QUERY_H
#define WF_QUERY_H

#include "storage/archetype_graph.h"
#include "storage/entity_index.h"
#include "storage/sparse_set.h"

#if defined(__GNUC__)
#define WF_PREFETCH(p) __builtin_prefetch(p)
#else
#define WF_PREFETCH(p) ((void)(p))
#endif


/* Storage a query reads; filled by the world layer. */
typedef struct wf_query_env {
    wf_graph *graph;
    wf_registry *registry;
    wf_entity_index *entities;
    wf_allocator *alloc;
    weft_component disabled; /* the Disabled tag, or 0 if not registered */
    const uint32_t *tick;    /* the world's change tick ("now" for ages) */
} wf_query_env;

typedef struct wf_term {
    weft_component id;
    uint8_t oper;              /* weft_oper, resolved (never DEFAULT) */
    uint8_t access;            /* weft_access, resolved (never DEFAULT) */
    uint8_t filter;            /* weft_filter bits */
    bool sparse;               /* the component uses sparse storage */
    int8_t group;              /* or-group index, or -1 */
    uint32_t size;             /* component size */
    const wf_type_info *ti;
} wf_term;

typedef struct wf_match {
    wf_table *table;
    uint32_t arch_count;          /* matching archetypes of this table */
    bool partial;                 /* arch_count < table->archetype_count */
    int16_t cols[WEFT_MAX_TERMS]; /* column of each term in the table, or -1 */
} wf_match;

/* Per-term data of the weft_query_get fast path: `size` is the term's
 * component size when a plain table lookup answers the call (cached
 * query, no row filters, a table term with a field), else 0. */
typedef struct wf_get_term {
    uint32_t size;
    weft_component id;
} wf_get_term;

struct weft_query {
    /* hot fields of the per-entity fast paths first (one or two lines) */
    weft_world *world;         /* owner; identity check only */
    uint32_t arch_gen;         /* archetypes tested so far */
    uint32_t arch_words;
    uint64_t *arch_bits;       /* [arch_words] matching archetypes */
    bool fast_ok;              /* cached and no row filters: a matching
                                  archetype is a matching entity */
    bool row_filters;          /* some term filters on added/changed ticks */
    bool filter_simple;        /* every filtered term is a table AND/WITH term */
    bool allow_disabled;       /* flag set or Disabled mentioned */
    uint32_t term_count;
    wf_get_term get[WEFT_MAX_TERMS];
    wf_term terms[WEFT_MAX_TERMS];
    uint32_t group_count;      /* or-groups */
    uint32_t flags;            /* weft_query_flags */
    int32_t index_term;        /* required term whose index starts matching, or -1 */
    uint32_t last_run;
    uint32_t iterating;        /* open iterations: popcount(open_mask) */
    /* match cache */
    wf_match *matches;
    uint32_t match_count;
    uint32_t match_cap;
    int32_t *table_match;      /* [table_match_len] table id -> match or -1 */
    uint32_t table_match_len;
    struct weft_query *next;   /* world's list of queries */
    struct weft_query *prev;
    /* open iterations (query/iter.h: wf_iter_open) */
    uint64_t open_mask;        /* slots in use */
    uint64_t open_depth;       /* slots whose iteration holds the world's
                                  iter_depth (weft_query_iter, exclusive
                                  systems) */
    uint64_t open_serial;      /* last serial handed out */
    uint64_t slot_serial[WF_QUERY_MAX_OPEN]; /* serial of each slot's iteration */
};

/* Checks a descriptor and fills q's terms. Returns WEFT_OK or a status;
 * `*bad_term` receives the offending term index (or -1) and `*why` a
 * static reason for the message. */
weft_status wf_query_compile(weft_query *q, const wf_query_env *env,
                             const weft_query_desc *desc, int32_t *bad_term,
                             const char **why);
/* Frees the match cache. */
void wf_query_fini(weft_query *q, wf_allocator *a);
/* Does archetype `arch` match (archetype-level terms only)? */
bool wf_query_match_archetype(const weft_query *q, const wf_query_env *env,
                              const wf_archetype *arch);
/* Tests every archetype created since the last update (uncached queries:
 * rebuilds from scratch). False on OOM (the cache stays as it was, and the
 * untested archetypes are retried next time). */
bool wf_query_update(weft_query *q, const wf_query_env *env);
/* Is the archetype in the match set? (after an update) */
static inline bool wf_query_has_arch(const weft_query *q, uint32_t arch)
{
    return (arch >> 6) < q->arch_words && (q->arch_bits[arch >> 6] >> (arch & 63)) & 1u;
}
/* Match entry of a table, or NULL. */
static inline const wf_match *wf_query_table_match(const weft_query *q,
                                                   const wf_table *t)
{
    if (t->id >= q->table_match_len || q->table_match[t->id] < 0) {
        return NULL;
    }
    return &q->matches[q->table_match[t->id]];
}
/* Do the row's ticks pass the query's filters? (table row of match m) */
bool wf_query_row_passes(const weft_query *q, const wf_match *m, uint32_t row,
                         weft_entity e, uint32_t last_run, uint32_t this_run, uint32_t now);
/* Can some row of the table pass the filters? False when a filtered
 * table column's change summary is not after last_run (ages seen from
 * `now`, the world's change tick: a summary newer than the iteration's
 * this_run may hide older changes, so it never skips). */
bool wf_query_table_may_pass(const weft_query *q, const wf_match *m,
                             uint32_t last_run, uint32_t now);

/* The wrapping tick comparison every change filter uses: a tick is newer
 * than last_run when it is closer to this_run, counting backwards modulo
 * 2^32 (Bevy's Tick::is_newer_than). */
static inline bool wf_tick_newer(uint32_t tick, uint32_t last_run, uint32_t this_run)
{
    uint32_t since_insert = this_run - tick;
    uint32_t since_system = this_run - last_run;
    if (since_insert > WEFT_MAX_CHANGE_AGE) {
        since_insert = WEFT_MAX_CHANGE_AGE;
    }
    if (since_system > WEFT_MAX_CHANGE_AGE) {
        since_system = WEFT_MAX_CHANGE_AGE;
    }
    return since_system > since_insert;
}

#endif

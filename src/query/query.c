/* src/query/query.c - query compilation, archetype matching, row filters.
 * SPDX-License-Identifier: MIT
 *
 * Matching state grows only: archetypes are never deleted, so a match once
 * recorded stays true. Growth of the cache arrays happens before anything is
 * recorded for an archetype, so a failed update leaves the cache as it was
 * (the archetype is retried next time).
 */
#include "query/query.h"

#include <string.h>

#include "core/check.h"

/* ---- compile ---- */

static bool term_has_field_oper(uint8_t oper)
{
    return oper == WEFT_OPER_AND || oper == WEFT_OPER_OPTIONAL || oper == WEFT_OPER_OR;
}

weft_status wf_query_compile(weft_query *q, const wf_query_env *env,
                             const weft_query_desc *desc, int32_t *bad_term,
                             const char **why)
{
    *bad_term = -1;
    if (desc->_start_canary || desc->_end_canary) {
        *why = "descriptor canary is not 0 (was the desc zero-initialised?)";
        return WEFT_ERR_INVALID_ARG;
    }
    if (desc->term_count < 1 || desc->term_count > WEFT_MAX_TERMS) {
        *why = "term_count must be 1 .. WEFT_MAX_TERMS";
        return WEFT_ERR_INVALID_ARG;
    }
    if (desc->flags & ~(uint32_t)(WEFT_QUERY_MATCH_DISABLED | WEFT_QUERY_UNCACHED |
                                  WEFT_QUERY_SINGLE | WEFT_QUERY_POPULATED)) {
        *why = "unknown flag bits";
        return WEFT_ERR_INVALID_ARG;
    }
    q->term_count = (uint32_t)desc->term_count;
    q->flags = desc->flags;
    q->allow_disabled = (desc->flags & WEFT_QUERY_MATCH_DISABLED) != 0;
    q->group_count = 0;
    q->row_filters = false;
    q->index_term = -1;
    int32_t group_keys[WEFT_MAX_TERMS];
    uint32_t best = UINT32_MAX;
    for (int32_t i = 0; i < desc->term_count; i++) {
        const weft_term *src = &desc->terms[i];
        wf_term *t = &q->terms[i];
        *bad_term = i;
        const wf_type_info *ti = wf_registry_get(env->registry, src->id);
        if (!ti) {
            *why = "component id is not registered in this world";
            return WEFT_ERR_UNKNOWN_COMPONENT;
        }
        if ((unsigned)src->access >= (unsigned)WEFT_ACCESS_NUM ||
            (unsigned)src->oper >= (unsigned)WEFT_OPER_NUM) {
            *why = "unknown access or operator";
            return WEFT_ERR_INVALID_ARG;
        }
        if (src->filter & ~(uint32_t)(WEFT_FILTER_ADDED | WEFT_FILTER_CHANGED)) {
            *why = "unknown filter bits";
            return WEFT_ERR_INVALID_ARG;
        }
        uint8_t oper = src->oper == WEFT_OPER_DEFAULT ? WEFT_OPER_AND : (uint8_t)src->oper;
        uint8_t access = (uint8_t)src->access;
        if (access == WEFT_ACCESS_DEFAULT) {
            access = term_has_field_oper(oper) && ti->size ? WEFT_ACCESS_READ
                                                           : WEFT_ACCESS_NONE;
        }
        if (!term_has_field_oper(oper) && access != WEFT_ACCESS_NONE) {
            *why = "WITH and WITHOUT terms have no field: use access NONE";
            return WEFT_ERR_INVALID_ARG;
        }
        if (ti->size == 0 && access != WEFT_ACCESS_NONE) {
            *why = "a tag has no value to read or write: use access NONE";
            return WEFT_ERR_INVALID_ARG;
        }
        if (src->filter && (oper == WEFT_OPER_OPTIONAL || oper == WEFT_OPER_WITHOUT)) {
            *why = "filters are allowed on AND, WITH and OR terms only";
            return WEFT_ERR_INVALID_ARG;
        }
        if (src->filter && !ti->has_ticks) {
            *why = "the component stores no change ticks (NO_CHANGE_TICKS)";
            return WEFT_ERR_INVALID_ARG;
        }
        if (access == WEFT_ACCESS_WRITE && (ti->flags & WEFT_COMPONENT_IMMUTABLE)) {
            *why = "write access to an immutable component";
            return WEFT_ERR_IMMUTABLE;
        }
        for (int32_t j = 0; j < i; j++) {
            if (q->terms[j].id == src->id) {
                *why = access == WEFT_ACCESS_WRITE || q->terms[j].access == WEFT_ACCESS_WRITE
                           ? "the component is written twice, or written and read"
                           : "the component is listed twice";
                return WEFT_ERR_DUPLICATE_COMPONENT;
            }
        }
        t->id = src->id;
        t->oper = oper;
        t->access = access;
        t->filter = (uint8_t)src->filter;
        t->sparse = ti->storage == WEFT_STORAGE_SPARSE;
        t->size = ti->size;
        t->ti = ti;
        t->group = -1;
        if (oper == WEFT_OPER_OR) {
            uint32_t g = 0;
            while (g < q->group_count && group_keys[g] != src->or_group) {
                g++;
            }
            if (g == q->group_count) {
                group_keys[q->group_count++] = src->or_group;
            }
            t->group = (int8_t)g;
        }
        q->row_filters |= t->filter != 0;
        if (env->disabled && src->id == env->disabled) {
            q->allow_disabled = true;
        }
        if ((oper == WEFT_OPER_AND || oper == WEFT_OPER_WITH) && ti->arch_count < best) {
            best = ti->arch_count;
            q->index_term = i;
        }
    }
    *bad_term = -1;
    q->fast_ok = !q->row_filters && !(q->flags & WEFT_QUERY_UNCACHED);
    q->filter_simple = true;
    for (uint32_t i = 0; i < q->term_count; i++) {
        const wf_term *t = &q->terms[i];
        if (t->filter &&
            (t->sparse || (t->oper != WEFT_OPER_AND && t->oper != WEFT_OPER_WITH))) {
            q->filter_simple = false;
        }
        bool plain = q->fast_ok && !t->sparse && t->access != WEFT_ACCESS_NONE;
        q->get[i].size = plain ? t->size : 0;
        q->get[i].id = t->id;
    }
    return WEFT_OK;
}

void wf_query_fini(weft_query *q, wf_allocator *a)
{
    wf_free(a, q->matches, q->match_cap * sizeof *q->matches, _Alignof(wf_match));
    wf_free(a, q->table_match, q->table_match_len * sizeof *q->table_match,
            _Alignof(int32_t));
    wf_free(a, q->arch_bits, q->arch_words * sizeof *q->arch_bits, _Alignof(uint64_t));
    q->matches = NULL;
    q->table_match = NULL;
    q->arch_bits = NULL;
    q->match_count = q->match_cap = q->table_match_len = q->arch_words = 0;
}

/* ---- matching ---- */

bool wf_query_match_archetype(const weft_query *q, const wf_query_env *env,
                              const wf_archetype *arch)
{
    if (!q->allow_disabled && env->disabled && wf_archetype_has(arch, env->disabled)) {
        return false;
    }
    uint32_t groups_seen = 0; /* bit g: or-group g has a member present */
    for (uint32_t i = 0; i < q->term_count; i++) {
        const wf_term *t = &q->terms[i];
        bool has = wf_archetype_has(arch, t->id);
        switch (t->oper) {
        case WEFT_OPER_AND:
        case WEFT_OPER_WITH:
            if (!has) {
                return false;
            }
            break;
        case WEFT_OPER_WITHOUT:
            if (has) {
                return false;
            }
            break;
        case WEFT_OPER_OR:
            if (has) {
                groups_seen |= 1u << t->group;
            }
            break;
        default:
            break;
        }
    }
    return groups_seen == (1u << q->group_count) - 1u;
}

/* Grows the cache arrays to hold archetype ids below `archs`, table ids
 * below `tables` and `matches` match entries. Sizes grow geometrically, so
 * a stream of new archetypes costs amortised O(1) each. False on OOM; the
 * cache is unchanged apart from arrays already grown (contents kept). */
static bool query_reserve(weft_query *q, wf_allocator *a, uint32_t archs, uint32_t tables,
                          uint32_t matches)
{
    uint32_t words = (uint32_t)(((uint64_t)archs + 63) >> 6);
    if (words > q->arch_words) {
        uint32_t old = q->arch_words;
        if (!wf_grow_ex(a, (void **)&q->arch_bits, &q->arch_words, words, 4, UINT32_MAX,
                        sizeof *q->arch_bits, _Alignof(uint64_t))) {
            return false;
        }
        memset(q->arch_bits + old, 0, (size_t)(q->arch_words - old) * sizeof *q->arch_bits);
    }
    if (tables > q->table_match_len) {
        uint32_t old = q->table_match_len;
        if (!wf_grow_ex(a, (void **)&q->table_match, &q->table_match_len, tables, 16,
                        UINT32_MAX, sizeof *q->table_match, _Alignof(int32_t))) {
            return false;
        }
        memset(q->table_match + old, 0xFF,
               (size_t)(q->table_match_len - old) * sizeof *q->table_match);
    }
    /* table_match stores match indices as int32_t: at most INT32_MAX matches */
    if (matches > q->match_cap &&
        !wf_grow_ex(a, (void **)&q->matches, &q->match_cap, matches, 8, INT32_MAX,
                    sizeof *q->matches, _Alignof(wf_match))) {
        return false;
    }
    return true;
}

/* Records a matching archetype; the arrays must have room (query_reserve).
 * Keeps the table's `partial` flag exact (query.h). */
static void query_record(weft_query *q, const wf_archetype *arch)
{
    wf_table *t = arch->table;
    q->arch_bits[arch->id >> 6] |= 1ull << (arch->id & 63);
    int32_t at = q->table_match[t->id];
    if (at >= 0) {
        wf_match *m = &q->matches[at];
        m->arch_count++;
        m->partial = m->arch_count < t->archetype_count;
        return;
    }
    wf_match *m = &q->matches[q->match_count];
    m->table = t;
    m->arch_count = 1;
    m->partial = 1 < t->archetype_count;
    for (uint32_t i = 0; i < WEFT_MAX_TERMS; i++) {
        m->cols[i] = -1;
    }
    /* arch->col_map is the table's, copied into the archetype (one hop less) */
    for (uint32_t i = 0; i < q->term_count; i++) {
        const wf_term *term = &q->terms[i];
        if (!term->sparse && term->id < arch->col_map_len) {
            m->cols[i] = arch->col_map[term->id];
        }
    }
    q->table_match[t->id] = (int32_t)q->match_count++;
}

/* Tests one archetype and records it. False on OOM (nothing recorded). */
static bool query_consider(weft_query *q, const wf_query_env *env, const wf_archetype *arch)
{
    wf_table *t = arch->table;
    if (!wf_query_match_archetype(q, env, arch)) {
        /* a new archetype of a matched table makes that table partial */
        if (t->id < q->table_match_len && q->table_match[t->id] >= 0) {
            wf_match *m = &q->matches[q->table_match[t->id]];
            m->partial = m->arch_count < t->archetype_count;
        }
        return true;
    }
    if (!query_reserve(q, env->alloc, arch->id + 1, t->id + 1, q->match_count + 1)) {
        return false;
    }
    query_record(q, arch);
    return true;
}

/* First index in list[from, n) with list[i] >= key (galloping: the
 * candidates of a merge rise, so cursors only move forward). */
static uint32_t query_seek(const uint32_t *list, uint32_t n, uint32_t from, uint32_t key)
{
    uint32_t step = 1;
    uint32_t lo = from;
    uint32_t hi = from;
    while (hi < n && list[hi] < key) {
        lo = hi + 1;
        hi += step;
        step *= 2;
    }
    if (hi > n) {
        hi = n;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (list[mid] < key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Does sorted `list` hold key? Advances *pos (see query_seek). */
static bool query_list_has(const wf_type_info *ti, uint32_t *pos, uint32_t key)
{
    *pos = query_seek(ti->archs, ti->arch_count, *pos, key);
    return *pos < ti->arch_count && ti->archs[*pos] == key;
}

/* First update: the archetypes of the rarest required id, filtered by a
 * merge of the other terms' component indexes (each ti->archs lists
 * archetype ids in creation order, i.e. ascending), so no archetype is
 * touched before it is known to match. The matching ones are then recorded
 * with their archetype and table structs prefetched a few entries ahead.
 * False on OOM (nothing recorded). */
static bool query_first_update(weft_query *q, const wf_query_env *env)
{
    const wf_graph *g = env->graph;
    const wf_type_info *idx = q->terms[q->index_term].ti;
    uint32_t n = idx->arch_count;
    uint32_t *cand = n ? wf_alloc(env->alloc, n * sizeof *cand, _Alignof(uint32_t)) : NULL;
    if (n && !cand) {
        return false;
    }
    const wf_type_info *dis = NULL;
    if (!q->allow_disabled && env->disabled) {
        dis = wf_registry_get(env->registry, env->disabled);
    }
    uint32_t pos[WEFT_MAX_TERMS] = {0};
    uint32_t dis_pos = 0;
    uint32_t all_groups = (1u << q->group_count) - 1u;
    uint32_t c = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t a = idx->archs[k];
        if (a >= g->arch_count) {
            break; /* cannot happen: the index lists existing archetypes */
        }
        if (dis && query_list_has(dis, &dis_pos, a)) {
            continue;
        }
        bool ok = true;
        uint32_t groups = 0;
        for (uint32_t i = 0; i < q->term_count && ok; i++) {
            const wf_term *t = &q->terms[i];
            if ((int32_t)i == q->index_term || t->oper == WEFT_OPER_OPTIONAL) {
                continue;
            }
            bool has = query_list_has(t->ti, &pos[i], a);
            switch (t->oper) {
            case WEFT_OPER_AND:
            case WEFT_OPER_WITH:
                ok = has;
                break;
            case WEFT_OPER_WITHOUT:
                ok = !has;
                break;
            case WEFT_OPER_OR:
                groups |= has ? 1u << t->group : 0u;
                break;
            default:
                break;
            }
        }
        if (ok && groups == all_groups) {
            cand[c++] = a;
        }
    }
    /* pre-sized: no growth while recording */
    bool room = query_reserve(q, env->alloc, g->arch_count, g->table_count, q->match_count + c);
    if (room) {
        enum { AHEAD = 8 };
        for (uint32_t k = 0; k < c; k++) {
            if (k + 2 * AHEAD < c) {
                WF_PREFETCH(g->archetypes[cand[k + 2 * AHEAD]]);
            }
            if (k + AHEAD < c) {
                const wf_archetype *next = g->archetypes[cand[k + AHEAD]];
                WF_PREFETCH(next->table);
                WF_PREFETCH((const char *)next->table + 64);
                if (q->terms[0].id < next->col_map_len) {
                    WF_PREFETCH(next->col_map + q->terms[0].id);
                }
            }
            query_record(q, g->archetypes[cand[k]]);
        }
    }
    wf_free(env->alloc, cand, n * sizeof *cand, _Alignof(uint32_t));
    return room;
}

bool wf_query_update(weft_query *q, const wf_query_env *env)
{
    const wf_graph *g = env->graph;
    if (q->flags & WEFT_QUERY_UNCACHED) {
        /* no incremental state: forget and rebuild */
        q->match_count = 0;
        if (q->table_match) {
            memset(q->table_match, 0xFF, q->table_match_len * sizeof *q->table_match);
        }
        if (q->arch_bits) {
            memset(q->arch_bits, 0, q->arch_words * sizeof *q->arch_bits);
        }
        q->arch_gen = 0;
    }
    if (q->arch_gen == g->arch_count) {
        return true;
    }
    if (q->arch_gen == 0 && q->index_term >= 0) {
        if (!query_first_update(q, env)) {
            return false; /* nothing recorded: retried next time */
        }
        q->arch_gen = g->arch_count;
        return true;
    }
    for (; q->arch_gen < g->arch_count; q->arch_gen++) {
        if (!query_consider(q, env, g->archetypes[q->arch_gen])) {
            return false;
        }
    }
    return true;
}

/* ---- row filters ---- */

/* Effective ticks of term t at a table row / for an entity into *out
 * (NULL: presence only, for unfiltered OR terms, whose component may store
 * no ticks); false when the component is absent. */
static bool query_ticks(const wf_term *t, const wf_match *m, uint32_t row, weft_entity e,
                        int32_t col, uint32_t now, weft_ticks *out)
{
    if (t->sparse) {
        const wf_sparse_set *s = t->ti->sparse;
        uint32_t d = wf_sparse_find(s, (uint32_t)e);
        if (d == WF_SPARSE_EMPTY) {
            return false;
        }
        if (out) {
            *out = wf_column_ticks(&s->dense, d, now);
        }
        return true;
    }
    if (col < 0) {
        return false;
    }
    if (out) {
        *out = wf_column_ticks(&m->table->cols[col], row, now);
    }
    return true;
}

static bool query_filter_passes(uint8_t filter, const weft_ticks *tk, uint32_t last_run,
                                uint32_t this_run)
{
    if ((filter & WEFT_FILTER_ADDED) && !wf_tick_newer(tk->added, last_run, this_run)) {
        return false;
    }
    if ((filter & WEFT_FILTER_CHANGED) && !wf_tick_newer(tk->changed, last_run, this_run)) {
        return false;
    }
    return true;
}

bool wf_query_row_passes(const weft_query *q, const wf_match *m, uint32_t row,
                         weft_entity e, uint32_t last_run, uint32_t this_run, uint32_t now)
{
    uint32_t group_filtered = 0; /* groups with a filter on some member */
    uint32_t group_passed = 0;
    for (uint32_t i = 0; i < q->term_count; i++) {
        const wf_term *t = &q->terms[i];
        if (t->oper == WEFT_OPER_OR) {
            weft_ticks tk;
            bool present = query_ticks(t, m, row, e, m->cols[i], now, t->filter ? &tk : NULL);
            if (t->filter) {
                group_filtered |= 1u << t->group;
            }
            if (present &&
                (!t->filter || query_filter_passes(t->filter, &tk, last_run, this_run))) {
                group_passed |= 1u << t->group;
            }
            continue;
        }
        if (!t->filter) {
            continue;
        }
        weft_ticks tk;
        if (!query_ticks(t, m, row, e, m->cols[i], now, &tk) ||
            !query_filter_passes(t->filter, &tk, last_run, this_run)) {
            return false;
        }
    }
    return (group_filtered & ~group_passed) == 0;
}

bool wf_query_table_may_pass(const weft_query *q, const wf_match *m, uint32_t last_run,
                             uint32_t now)
{
    for (uint32_t i = 0; i < q->term_count; i++) {
        const wf_term *t = &q->terms[i];
        if (!t->filter || t->oper == WEFT_OPER_OR || t->sparse) {
            continue;
        }
        const wf_column *c = &m->table->cols[m->cols[i]];
        /* the summary bounds every added and changed tick in the column */
        if (!wf_tick_after(c->latest_change, last_run, now)) {
            return false;
        }
    }
    return true;
}

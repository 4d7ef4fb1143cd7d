/* src/api/api_query.c - queries, iteration, change-tick entry points.
 * SPDX-License-Identifier: MIT
 *
 * Iteration brackets: weft_query_iter raises the world's iteration depth
 * (structural calls then defer) and takes this_run; the iteration's end
 * (weft_iter_next returning false, or weft_iter_fini) lowers it and, at
 * depth 0, applies the deferred calls.
 */
#include "internal.h"
#include "world/component.h"
#include "world/iteration.h"

#include <string.h>

/* Armor shared by the query entry points. */
static weft_status query_armor(weft_world *w, const weft_query *q, const char *fn)
{
    if (!wf_world_ok(w)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!q) {
        return wf_error(w, WEFT_ERR_INVALID_HANDLE, "%s: query is NULL", fn);
    }
    if (q->world != w) {
        return wf_error(w, WEFT_ERR_INVALID_HANDLE,
                        "%s: the query belongs to another world", fn);
    }
    return WEFT_OK;
}


WEFT_API weft_component weft_disabled(weft_world *world)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    if (!world->disabled) {
        weft_component_desc d;
        memset(&d, 0, sizeof d);
        d.name = "weft.Disabled";
        world->disabled = wf_component_register(world, &d);
    }
    return world->disabled;
}

WEFT_API weft_query *weft_query_create(weft_world *world, const weft_query_desc *desc)
{
    if (!wf_world_ok(world)) {
        return NULL;
    }
    if (wf_world_refuse_shared(world, "weft_query_create")) {
        return NULL;
    }
    if (!desc) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_query_create: desc is NULL");
        return NULL;
    }
    return wf_world_query_create(world, desc, "weft_query_create");
}

WEFT_API weft_status weft_query_destroy(weft_world *world, weft_query *query)
{
    if (!query && wf_world_ok(world)) {
        return WEFT_OK;
    }
    weft_status st = query_armor(world, query, "weft_query_destroy");
    if (st != WEFT_OK) {
        return st;
    }
    return wf_world_query_drop(world, query, "weft_query_destroy");
}

WEFT_API uint32_t weft_query_last_run(const weft_world *world, const weft_query *query)
{
    if (!wf_world_ok(world) || !query || query->world != world) {
        return 0;
    }
    return query->last_run;
}

WEFT_API weft_status weft_query_set_last_run(weft_world *world, weft_query *query,
                                             uint32_t tick)
{
    weft_status st = query_armor(world, query, "weft_query_set_last_run");
    if (st == WEFT_OK) {
        query->last_run = tick;
    }
    return st;
}

/* ---- iteration ---- */


WEFT_API weft_status weft_query_iter(weft_world *world, weft_query *query, weft_iter *it)
{
    weft_status st = query_armor(world, query, "weft_query_iter");
    if (st != WEFT_OK) {
        return st;
    }
    if (!it) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_query_iter: it is NULL");
    }
    return wf_world_query_iter(world, query, it, "weft_query_iter");
}

WEFT_API bool weft_iter_next(weft_iter *pub)
{
    return wf_world_iter_next(pub);
}

WEFT_API void weft_iter_fini(weft_iter *pub)
{
    wf_world_iter_fini(pub);
}

WEFT_API int32_t weft_iter_count(const weft_iter *pub)
{
    return wf_world_iter_count(pub);
}

WEFT_API const weft_entity *weft_iter_entities(const weft_iter *pub)
{
    return wf_world_iter_entities(pub);
}


/* The status of a failed iterator call: the one recorded, or WRONG_PHASE
 * for an iterator that names no world. */
static weft_status iter_failed(const wf_iter *it)
{
    return wf_iter_has_world(it) ? wf_error_last(it->world) : WEFT_ERR_WRONG_PHASE;
}





/* Fast paths: an active iterator with a current chunk (fsize/wsize are 0
 * otherwise, query/iter.h), a table term with a field of exactly `size`
 * bytes. The field pointer was computed by the step. */
WEFT_API const void *weft_iter_field(weft_iter *pub, int32_t term, size_t size)
{
    return wf_world_iter_field(pub, term, size);
}

WEFT_API void *weft_iter_field_mut(weft_iter *pub, int32_t term, size_t size)
{
    wf_iter *it = wf_iter_of(pub);
    if (WF_LIKELY(pub != NULL && it->state == WF_ITER_ACTIVE &&
                  (uint32_t)term < WEFT_MAX_TERMS && it->wsize[term] == size && size != 0)) {
        void *p = it->ptr[term];
        wf_column *c = wf_iter_column(it, term);
        /* the usual case inline: a whole table whose column already carries
         * an older bulk mark (a system writing it every run) */
        if (WF_LIKELY(p && c->ticks && it->whole && c->bulk)) {
            uint32_t tick = it->this_run;
            uint32_t now = it->world->change_tick;
            if (WF_LIKELY(!wf_tick_after(c->bulk_tick, tick, now))) {
                c->bulk_tick = tick;
                wf_column_note(c, tick, now);
                wf_journal_add(it->world, c, 0, WF_JOURNAL_ALL, tick);
                return p;
            }
        }
        if (p) {
            wf_iter_mark_chunk(it, c, it->start, it->whole);
        }
        return p;
    }
    return wf_iter_field_slow(pub, term, size, true, true, "weft_iter_field_mut");
}

WEFT_API void *weft_iter_field_mut_nomark(weft_iter *pub, int32_t term, size_t size)
{
    wf_iter *it = wf_iter_of(pub);
    if (WF_LIKELY(pub != NULL && it->state == WF_ITER_ACTIVE &&
                  (uint32_t)term < WEFT_MAX_TERMS && it->wsize[term] == size && size != 0)) {
        return it->ptr[term];
    }
    return wf_iter_field_slow(pub, term, size, true, false, "weft_iter_field_mut_nomark");
}

WEFT_API bool weft_iter_has(const weft_iter *pub, int32_t term)
{
    const wf_iter *it = wf_iter_of_const(pub);
    if (!pub || it->state != WF_ITER_ACTIVE || !it->match || term < 0 ||
        (uint32_t)term >= it->query->term_count) {
        return false;
    }
    const wf_term *t = &it->query->terms[term];
    if (t->oper == WEFT_OPER_WITHOUT) {
        return false;
    }
    if (t->oper == WEFT_OPER_AND || t->oper == WEFT_OPER_WITH) {
        return true;
    }
    if (t->sparse) {
        /* a sparse field is present or absent for the whole chunk
         * (query/iter.h); a sparse tag only per row */
        return t->size && t->access != WEFT_ACCESS_NONE && it->ptr[term] != NULL;
    }
    return it->cols[term] >= 0;
}

/* Locates term `term` at chunk row `row`: column and column row, or NULL. */
static wf_column *iter_locate(wf_iter *it, int32_t term, const wf_term *t, int32_t row,
                              uint32_t *out_row, const char *fn)
{
    if (row < 0 || (uint32_t)row >= it->count) {
        wf_error(it->world, WEFT_ERR_INVALID_ARG, "%s: row %d out of range (chunk has %u)",
                 fn, row, it->count);
        return NULL;
    }
    uint32_t trow = it->start + (uint32_t)row;
    if (t->sparse) {
        wf_sparse_set *s = t->ti->sparse;
        uint32_t d = wf_sparse_find(s, (uint32_t)it->table->entities[trow]);
        if (d == WF_SPARSE_EMPTY) {
            return NULL;
        }
        *out_row = d;
        return &s->dense;
    }
    *out_row = trow;
    return wf_iter_column(it, term);
}

WEFT_API const void *weft_iter_get(weft_iter *pub, int32_t term, int32_t row, size_t size)
{
    wf_iter *it = wf_iter_of(pub);
    const wf_term *t = pub ? wf_iter_term(it, term, size, false, "weft_iter_get") : NULL;
    uint32_t r = 0;
    wf_column *c = t ? iter_locate(it, term, t, row, &r, "weft_iter_get") : NULL;
    return c ? wf_column_ptr(c, r) : NULL;
}

/* Marks one row changed; a chunk task leaves the shared column summary to
 * its dispatcher (see iter_mark_chunk). */
static void iter_row_mark(wf_iter *it, wf_column *c, uint32_t r)
{
    if (it->mode == WF_ITER_TASK) {
        if (c->ticks) {
            c->ticks[r].changed = it->this_run;
        }
        return;
    }
    wf_column_mark(c, r, it->this_run, it->world->change_tick);
    wf_journal_add(it->world, c, r, 1, it->this_run);
}

WEFT_API void *weft_iter_get_mut(weft_iter *pub, int32_t term, int32_t row, size_t size)
{
    wf_iter *it = wf_iter_of(pub);
    const wf_term *t = pub ? wf_iter_term(it, term, size, true, "weft_iter_get_mut") : NULL;
    uint32_t r = 0;
    wf_column *c = t ? iter_locate(it, term, t, row, &r, "weft_iter_get_mut") : NULL;
    if (!c) {
        return NULL;
    }
    iter_row_mark(it, c, r);
    return wf_column_ptr(c, r);
}

WEFT_API weft_status weft_iter_mark(weft_iter *pub, int32_t term, int32_t row)
{
    wf_iter *it = wf_iter_of(pub);
    if (!pub) {
        return WEFT_ERR_INVALID_ARG;
    }
    size_t size = (term >= 0 && it->state == WF_ITER_ACTIVE &&
                   (uint32_t)term < it->query->term_count)
                      ? it->query->terms[term].size
                      : 0;
    const wf_term *t = wf_iter_term(it, term, size, true, "weft_iter_mark");
    if (!t) {
        return iter_failed(it);
    }
    uint32_t r = 0;
    wf_column *c = iter_locate(it, term, t, row, &r, "weft_iter_mark");
    if (!c) {
        return row < 0 || (uint32_t)row >= it->count
                   ? WEFT_ERR_INVALID_ARG
                   : wf_error(it->world, WEFT_ERR_NOT_FOUND,
                              "weft_iter_mark: term %d is absent at row %d", term, row);
    }
    iter_row_mark(it, c, r);
    return WEFT_OK;
}

WEFT_API weft_status weft_iter_set_if_neq(weft_iter *pub, int32_t term, int32_t row,
                                          const void *value, size_t size,
                                          bool *out_changed)
{
    wf_iter *it = wf_iter_of(pub);
    if (out_changed) {
        *out_changed = false;
    }
    if (!pub) {
        return WEFT_ERR_INVALID_ARG;
    }
    const wf_term *t = wf_iter_term(it, term, size, true, "weft_iter_set_if_neq");
    if (!t) {
        return iter_failed(it);
    }
    if (!value) {
        return wf_error(it->world, WEFT_ERR_INVALID_ARG, "weft_iter_set_if_neq: value is NULL");
    }
    uint32_t r = 0;
    wf_column *c = iter_locate(it, term, t, row, &r, "weft_iter_set_if_neq");
    if (!c) {
        return row < 0 || (uint32_t)row >= it->count
                   ? WEFT_ERR_INVALID_ARG
                   : wf_error(it->world, WEFT_ERR_NOT_FOUND,
                              "weft_iter_set_if_neq: term %d is absent at row %d", term, row);
    }
    void *p = wf_column_ptr(c, r);
    if (memcmp(p, value, size) != 0) {
        if (it->mode == WF_ITER_TASK) {
            if (c->data) {
                wf_type_destroy(c->ti, p, 1);
                wf_type_construct(c->ti, p, value, 1);
            }
            iter_row_mark(it, c, r);
        } else {
            wf_column_replace(c, r, value, it->this_run, it->world->change_tick);
            if (it->mode != WF_ITER_TASK) { /* par_each's dispatcher journals tasks */
                wf_journal_add(it->world, c, r, 1, it->this_run);
            }
        }
        if (out_changed) {
            *out_changed = true;
        }
    }
    return WEFT_OK;
}

/* ---- per entity ---- */

/* Match entry and table row of e, or NULL when e does not match now. */
static const wf_match *query_entity(weft_world *w, weft_query *q, weft_entity e,
                                    uint32_t *out_row)
{
    const wf_record *r = wf_entity_live(w, e);
    if (!r || !wf_query_has_arch(q, r->arch)) {
        return NULL;
    }
    const wf_match *m = wf_query_table_match(q, wf_world_archetype(w, r->arch)->table);
    if (q->row_filters &&
        !wf_query_row_passes(q, m, r->row, e, q->last_run, w->change_tick,
                             w->change_tick)) {
        return NULL;
    }
    *out_row = r->row;
    return m;
}

/* The checking paths of weft_query_matches / weft_query_get: armor, cache
 * refresh, row filters, sparse terms and misuse. Out of line so the fast
 * paths need no register spills. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static bool query_matches_slow(weft_world *world, weft_query *query, weft_entity e)
{
    if (query_armor(world, query, "weft_query_matches") != WEFT_OK ||
        wf_world_query_refresh(world, query, "weft_query_matches") != WEFT_OK) {
        return false;
    }
    uint32_t row;
    return query_entity(world, query, e, &row) != NULL;
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static const void *query_get_slow(weft_world *world, weft_query *query, weft_entity e,
                                  int32_t term, size_t size)
{
    if (query_armor(world, query, "weft_query_get") != WEFT_OK ||
        wf_world_query_refresh(world, query, "weft_query_get") != WEFT_OK) {
        return NULL;
    }
    if (term < 0 || (uint32_t)term >= query->term_count) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_query_get: term %d out of range", term);
        return NULL;
    }
    const wf_term *t = &query->terms[term];
    if (t->access == WEFT_ACCESS_NONE) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_query_get: term %d has no field", term);
        return NULL;
    }
    if (size != t->size) {
        wf_error(world, WEFT_ERR_SIZE_MISMATCH,
                 "weft_query_get: term %d component '%s' has size %u but %zu bytes were "
                 "asked",
                 term, t->ti->name, t->size, size);
        return NULL;
    }
    uint32_t row;
    const wf_match *m = query_entity(world, query, e, &row);
    if (!m) {
        return NULL;
    }
    if (t->sparse) {
        uint32_t d = wf_sparse_find(t->ti->sparse, (uint32_t)e);
        return d == WF_SPARSE_EMPTY ? NULL : wf_column_ptr(&t->ti->sparse->dense, d);
    }
    int16_t col = m->cols[term];
    return col < 0 ? NULL : wf_column_ptr(&m->table->cols[col], row);
}

/* Fast paths: a valid world and query whose cache is current (no new
 * archetype since the last update: nothing to refresh), a cached query
 * without row filters (fast_ok: matching is decided by the archetype
 * alone), then the same lookup as weft_get through the archetype's copy of
 * the column map, with no table-match indirection. Anything else, including
 * every error, takes the slow path. */
WEFT_API bool weft_query_matches(weft_world *world, weft_query *query, weft_entity e)
{
    if (WF_LIKELY(world != NULL && world->magic == WF_WORLD_MAGIC && query != NULL &&
                  query->world == world && query->fast_ok &&
                  query->arch_gen == world->graph.arch_count)) {
        const wf_record *r = wf_entity_live(world, e);
        return r != NULL && wf_query_has_arch(query, r->arch);
    }
    return query_matches_slow(world, query, e);
}

WEFT_API const void *weft_query_get(weft_world *world, weft_query *query, weft_entity e,
                                    int32_t term, size_t size)
{
    if (WF_LIKELY(world != NULL && world->magic == WF_WORLD_MAGIC && query != NULL &&
                  query->world == world && query->arch_gen == world->graph.arch_count &&
                  (uint32_t)term < WEFT_MAX_TERMS && query->get[term].size == size &&
                  size != 0)) {
        /* get[term].size != 0: fast_ok, a table term with a field */
        const wf_record *r = wf_entity_live(world, e);
        if (WF_LIKELY(r != NULL && wf_query_has_arch(query, r->arch))) {
            const wf_archetype *arch = wf_world_archetype(world, r->arch);
            weft_component id = query->get[term].id;
            if (WF_LIKELY(id < arch->col_map_len && arch->col_map[id] >= 0)) {
                return wf_column_ptr(&arch->cols[arch->col_map[id]], r->row);
            }
        }
    }
    return query_get_slow(world, query, e, term, size);
}

/* Counts what an iteration would yield now, stopping past `limit`. */
static int64_t query_count(weft_world *w, weft_query *q, int64_t limit, weft_entity *first)
{
    wf_iter it;
    wf_query_env env = wf_world_query_env(w);
    wf_iter_init(&it, w, q, &env, q->last_run, w->change_tick, false);
    it.nfield = 0; /* counting fetches no field: leave the column structs cold */
    int64_t n = 0;
    while (n < limit && wf_iter_step(&it)) {
        if (n == 0 && first) {
            *first = it.table->entities[it.start];
        }
        n += it.count;
    }
    return n;
}

WEFT_API int64_t weft_query_count(weft_world *world, weft_query *query)
{
    if (query_armor(world, query, "weft_query_count") != WEFT_OK ||
        wf_world_query_refresh(world, query, "weft_query_count") != WEFT_OK) {
        return -1;
    }
    return query_count(world, query, INT64_MAX, NULL);
}

WEFT_API bool weft_query_is_empty(weft_world *world, weft_query *query)
{
    if (query_armor(world, query, "weft_query_is_empty") != WEFT_OK ||
        wf_world_query_refresh(world, query, "weft_query_is_empty") != WEFT_OK) {
        return true;
    }
    return query_count(world, query, 1, NULL) == 0;
}

WEFT_API weft_status weft_query_single(weft_world *world, weft_query *query,
                                       weft_entity *out)
{
    weft_status st = query_armor(world, query, "weft_query_single");
    if (st != WEFT_OK) {
        return st;
    }
    if (!out) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_query_single: out is NULL");
    }
    st = wf_world_query_refresh(world, query, "weft_query_single");
    if (st != WEFT_OK) {
        return st;
    }
    *out = 0;
    weft_entity first = 0;
    int64_t n = query_count(world, query, 2, &first);
    if (n == 0) {
        return wf_error(world, WEFT_ERR_NOT_FOUND, "weft_query_single: no entity matches");
    }
    if (n > 1) {
        return wf_error(world, WEFT_ERR_NOT_UNIQUE,
                        "weft_query_single: more than one entity matches");
    }
    *out = first;
    return WEFT_OK;
}

/* ---- change ticks ---- */

WEFT_API bool weft_world_clamp_ticks(weft_world *world, bool force)
{
    return wf_world_ok(world) && wf_world_clamp_ticks(world, force);
}

WEFT_API void weft_world_set_change_tick(weft_world *world, uint32_t tick)
{
    if (wf_world_ok(world)) {
        world->change_tick = tick;
    }
}

WEFT_API bool weft_tick_is_newer(uint32_t tick, uint32_t last_run, uint32_t this_run)
{
    return wf_tick_newer(tick, last_run, this_run);
}

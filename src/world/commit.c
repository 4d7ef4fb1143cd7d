/* src/world/commit.c - spawn, insert, remove, despawn, flush.
 * SPDX-License-Identifier: MIT
 *
 * Invariants kept here (checked by weft_world_check):
 * - a live entity's record names its archetype and its row in that
 *   archetype's table, and table->entities[row] is the entity (INV-1/2);
 * - for every sparse component of its archetype, the entity has a slot in
 *   that component's sparse set, and no other slots (INV-8);
 * - archetype entity counts sum to the live entity count.
 */
#include "world/commit.h"

#include "core/check.h"
#include "world/lifecycle.h"
#include "world/messages.h"
#include "world/relationship.h"
#include "world/require.h"

#include <stdlib.h>
#include <string.h>

static weft_status commit_oom(weft_world *w, const char *what)
{
    return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory while %s", what);
}

/* Index the (ahead+1)-th wf_entities_take will return once pending
 * reservations are flushed (room reserved). */
static uint32_t commit_peek_index(const wf_entity_index *ix, uint32_t ahead)
{
    uint32_t from_free, fresh;
    wf_entities_pending(ix, &from_free, &fresh);
    uint32_t free_len = ix->free_len - from_free;
    if (ahead < free_len) {
        return ix->free_stack[free_len - 1 - ahead];
    }
    return ix->count + fresh + (ahead - free_len);
}

/* Reserves room for flushing the pending reservations and then taking
 * `new_ids` more ids whose rows go to table t (`rows` of them). Nothing
 * observable changes; after WEFT_OK, commit_flush_apply and the caller's
 * commit cannot fail. */
static weft_status commit_prepare(weft_world *w, uint32_t new_ids, wf_table *t,
                                  uint32_t rows)
{
    wf_entity_index *ix = &w->entities;
    uint32_t from_free, fresh;
    wf_entities_pending(ix, &from_free, &fresh);
    if (!wf_entities_reserve(ix, &w->alloc, fresh + new_ids)) {
        if ((uint64_t)fresh + new_ids > WF_MAX_ENTITIES - ix->count) {
            return wf_error(w, WEFT_ERR_CAPACITY,
                            "entity index space exhausted (%u indices in use)", ix->count);
        }
        return commit_oom(w, "growing the entity index");
    }
    wf_table *t0 = w->graph.archetypes[0]->table;
    uint32_t flush_rows = from_free + fresh;
    if (flush_rows) {
        uint64_t need = (uint64_t)t0->count + flush_rows + (t == t0 ? rows : 0u);
        if (need > WF_MAX_ROWS) {
            return wf_error(w, WEFT_ERR_CAPACITY, "a table holds at most %u rows",
                            WF_MAX_ROWS);
        }
        if (!wf_table_reserve(t0, &w->alloc, (uint32_t)need)) {
            return commit_oom(w, "flushing reserved entities");
        }
    }
    if (t && rows && (t != t0 || !flush_rows)) {
        if ((uint64_t)t->count + rows > WF_MAX_ROWS) {
            return wf_error(w, WEFT_ERR_CAPACITY, "a table holds at most %u rows",
                            WF_MAX_ROWS);
        }
        if (t->count + rows > t->cap && !wf_table_reserve(t, &w->alloc, t->count + rows)) {
            return commit_oom(w, "growing a table");
        }
    }
    return WEFT_OK;
}

static bool commit_pending(const weft_world *w)
{
    /* relaxed: the driver calls this while no reservation runs (weft.h);
     * pairs with nothing (entity_index.h) */
    return wf_atomic_load_relaxed_i64(&w->entities.cursor) != (int64_t)w->entities.free_len;
}

/* Makes every reserved id live in the empty archetype (room prepared). */
static void commit_flush_apply(weft_world *w)
{
    wf_entity_index *ix = &w->entities;
    uint32_t from_free, fresh;
    wf_entities_pending(ix, &from_free, &fresh);
    if (from_free + fresh == 0) {
        return;
    }
    wf_archetype *empty = w->graph.archetypes[0];
    wf_table *t0 = empty->table;
    /* Free-stack ids were handed out from the top down; fresh ids upward. */
    uint32_t lo = ix->free_len - from_free;
    for (uint32_t k = ix->free_len; k-- > lo;) {
        uint32_t idx = ix->free_stack[k];
        wf_record *r = &ix->records[idx];
        r->arch = 0;
        r->row = wf_table_push(t0, wf_make_entity(idx, r->gen), w->change_tick);
    }
    ix->free_len = lo;
    for (uint32_t j = 0; j < fresh; j++) {
        uint32_t idx = ix->count + j;
        wf_record *r = &ix->records[idx];
        r->gen = WF_FIRST_GENERATION;
        r->arch = 0;
        r->row = wf_table_push(t0, wf_make_entity(idx, r->gen), w->change_tick);
    }
    ix->count += fresh;
    ix->live += from_free + fresh;
    empty->entity_count += (int32_t)(from_free + fresh);
    /* relaxed: no reservation runs during a flush; pairs with nothing */
    wf_atomic_store_relaxed_i64(&ix->cursor, (int64_t)ix->free_len);
    if (ix->later_len) {
        wf_entities_release_later(ix, &w->alloc);
    }
}

weft_status wf_commit_flush(weft_world *w)
{
    if (commit_pending(w)) {
        wf_journal_structural(w); /* reserved ids become live */
    }
    weft_status st = commit_prepare(w, 0, NULL, 0);
    if (st == WEFT_OK) {
        commit_flush_apply(w);
    }
    return st;
}

/* Archetype holding from's components plus every id in values: one set
 * lookup (no intermediate archetypes are created). Spawns start from the
 * empty archetype; the last spawned list is remembered, so a spawn loop
 * resolves its archetype with one comparison. */
static wf_archetype *commit_target(weft_world *w, wf_archetype *from,
                                   const weft_value *values, int32_t count)
{
    if (count == 1) {
        wf_move_plan *plan;
        return wf_graph_add(&w->graph, &w->alloc, &w->registry, from, values[0].id, &plan);
    }
    wf_spawn_cache *sc = &w->spawn_cache;
    bool cacheable = from->id == 0 && count <= WF_SPAWN_CACHE_IDS;
    if (cacheable && sc->arch && sc->count == count) {
        int32_t i = 0;
        while (i < count && sc->ids[i] == values[i].id) {
            i++;
        }
        if (i == count) {
            return sc->arch;
        }
    }
    /* sorted union of from->ids and the (unique) value ids */
    uint32_t n = from->id_count + (uint32_t)count;
    weft_component small[64];
    weft_component *ids = small;
    if (n > 64) {
        ids = wf_alloc(&w->alloc, n * sizeof *ids, _Alignof(weft_component));
        if (!ids) {
            return NULL;
        }
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < from->id_count; i++) {
        ids[k++] = from->ids[i];
    }
    for (int32_t i = 0; i < count; i++) {
        weft_component c = values[i].id;
        uint32_t j = k;
        while (j > 0 && ids[j - 1] > c) {
            j--;
        }
        if (j > 0 && ids[j - 1] == c) {
            continue; /* already in from */
        }
        memmove(ids + j + 1, ids + j, (k - j) * sizeof *ids);
        ids[j] = c;
        k++;
    }
    wf_archetype *arch = wf_graph_ensure(&w->graph, &w->alloc, &w->registry, ids, k);
    if (ids != small) {
        wf_free(&w->alloc, ids, n * sizeof *ids, _Alignof(weft_component));
    }
    if (cacheable && arch) {
        sc->direct = true;
        bool vouch = true;
        for (int32_t i = 0; i < count; i++) {
            weft_component c = values[i].id;
            sc->ids[i] = c;
            sc->cols[i] = c < arch->col_map_len ? arch->col_map[c] : (int16_t)-1;
            sc->direct &= sc->cols[i] >= 0;
            const wf_type_info *cti = wf_registry_get(&w->registry, c);
            /* a relationship value takes wf_commit_spawn: its target's list
             * is prepared there (commit_rel_prepare) */
            vouch &= !wf_type_managed(cti) && !cti->rel_targets;
            for (int32_t j = 0; j < i; j++) {
                vouch &= values[j].id != c;
            }
        }
        sc->count = count;
        sc->arch = arch;
        sc->vouch = vouch && sc->direct;
    }
    return arch;
}

/* Reserves a sparse slot for entity index idx in every sparse component of
 * `values` that the entity does not have yet. */
static bool commit_reserve_sparse(weft_world *w, const weft_value *values,
                                  int32_t count, uint32_t idx, uint32_t extra)
{
    for (int32_t i = 0; i < count; i++) {
        const wf_type_info *ti = wf_registry_get(&w->registry, values[i].id);
        if (ti->storage != WEFT_STORAGE_SPARSE) {
            continue;
        }
        if (!wf_sparse_reserve_page(ti->sparse, &w->alloc, idx) ||
            !wf_sparse_reserve_dense(ti->sparse, &w->alloc, extra)) {
            return false;
        }
    }
    return true;
}

/* Spawns one entity with `values` into `arch` (their archetype). */
static inline weft_status commit_spawn_into(weft_world *w, wf_archetype *arch,
                                            const weft_value *values, int32_t count,
                                            weft_entity *out)
{
    wf_table *t = arch->table;
    if (WF_UNLIKELY(commit_pending(w)) || w->entities.count == w->entities.cap ||
        t->count == t->cap) {
        weft_status st = commit_prepare(w, 1, t, 1);
        if (st != WEFT_OK) {
            return st;
        }
    }
    if (arch->sparse_count &&
        !commit_reserve_sparse(w, values, count, commit_peek_index(&w->entities, 0), 1)) {
        return commit_oom(w, "growing a sparse set for spawn");
    }
    /* commit */
    if (WF_UNLIKELY(commit_pending(w))) {
        commit_flush_apply(w);
    }
    weft_entity e = wf_entities_take(&w->entities);
    uint32_t row = wf_table_push(t, e, w->change_tick);
    wf_record *rec = &w->entities.records[(uint32_t)e];
    rec->arch = arch->id;
    rec->row = row;
    arch->entity_count++;
    uint32_t tick = w->change_tick;
    const wf_spawn_cache *sc = &w->spawn_cache;
    if (count > 1 && sc->arch == arch && sc->count == count && sc->direct) {
        /* commit_target left the cache describing exactly these values,
         * in this order (a hit compares them, a miss stores them) */
        for (int32_t i = 0; i < count; i++) {
            wf_column_construct(&t->cols[sc->cols[i]], row, values[i].ptr, tick);
        }
    } else {
        for (int32_t i = 0; i < count; i++) {
            const wf_type_info *ti = wf_registry_get(&w->registry, values[i].id);
            if (ti->storage == WEFT_STORAGE_SPARSE) {
                wf_sparse_insert(ti->sparse, e, values[i].ptr, tick);
            } else {
                wf_column_construct(wf_table_column(t, values[i].id), row, values[i].ptr,
                                    tick);
            }
        }
    }
    *out = e;
    if (WF_UNLIKELY(arch->event_mask)) {
        wf_fire_values(w, WEFT_EVENT_ADD, values, count, e);
        wf_fire_values(w, WEFT_EVENT_INSERT, values, count, e);
    }
    return WEFT_OK;
}

static weft_status commit_spawn_raw(weft_world *w, const weft_value *values, int32_t count,
                                    weft_entity *out)
{
    wf_archetype *arch = commit_target(w, w->graph.archetypes[0], values, count);
    if (!arch) {
        return commit_oom(w, "creating an archetype for spawn");
    }
    return commit_spawn_into(w, arch, values, count, out);
}

/* columns [explicit_count, count) hold one value each, given to every
 * entity (required defaults). */
static weft_status commit_spawn_bulk_raw(weft_world *w, const weft_value *columns,
                                         int32_t count, int32_t explicit_count, uint32_t n,
                                         weft_entity *out)
{
    wf_archetype *arch = commit_target(w, w->graph.archetypes[0], columns, count);
    if (!arch) {
        return commit_oom(w, "creating an archetype for spawn");
    }
    wf_table *t = arch->table;
    weft_status st = commit_prepare(w, n, t, n);
    if (st != WEFT_OK) {
        return st;
    }
    if (arch->sparse_count) {
        for (uint32_t k = 0; k < n; k++) {
            uint32_t idx = commit_peek_index(&w->entities, k);
            if (!commit_reserve_sparse(w, columns, count, idx, n)) {
                return commit_oom(w, "growing a sparse set for bulk spawn");
            }
        }
    }
    commit_flush_apply(w);
    if (n == 0) {
        return WEFT_OK;
    }
    /* commit */
    wf_entity_index *ix = &w->entities;
    if (wf_atomic_load_relaxed_u32(&t->bulk_any)) {
        wf_table_materialize(t, w->change_tick);
    }
    uint32_t base = t->count;
    for (uint32_t k = 0; k < n; k++) {
        weft_entity e = wf_entities_take(ix);
        wf_record *rec = &ix->records[(uint32_t)e];
        rec->arch = arch->id;
        rec->row = base + k;
        t->entities[base + k] = e;
        if (out) {
            out[k] = e;
        }
    }
    t->count += n;
    arch->entity_count += (int32_t)n;
    uint32_t tick = w->change_tick;
    for (int32_t i = 0; i < count; i++) {
        const wf_type_info *ti = wf_registry_get(&w->registry, columns[i].id);
        const uint8_t *src = columns[i].ptr;
        size_t stride = i < explicit_count ? ti->size : 0; /* 0: one shared value */
        if (ti->storage == WEFT_STORAGE_SPARSE) {
            for (uint32_t k = 0; k < n; k++) {
                wf_sparse_insert(ti->sparse, t->entities[base + k],
                                 src ? src + (size_t)k * stride : NULL, tick);
            }
            continue;
        }
        wf_column *c = wf_table_column(t, columns[i].id);
        if (c->data && (stride || !src)) {
            wf_type_construct(ti, wf_column_ptr(c, base), src, (int32_t)n);
        } else if (c->data && ti->trivial) {
            /* one shared value: place it once, then double the filled run */
            uint8_t *dst = wf_column_ptr(c, base);
            size_t filled = ti->size;
            size_t total = (size_t)n * ti->size;
            memcpy(dst, src, ti->size);
            while (filled < total) {
                size_t step = filled < total - filled ? filled : total - filled;
                memcpy(dst + filled, dst, step);
                filled += step;
            }
        } else if (c->data) {
            for (uint32_t k = 0; k < n; k++) {
                wf_type_construct(ti, wf_column_ptr(c, base + k), src, 1);
            }
        }
        if (c->ticks) {
            weft_ticks stamp = {tick, tick};
            for (uint32_t k = 0; k < n; k++) {
                c->ticks[base + k] = stamp;
            }
            c->latest_change = tick;
        }
    }
    if (WF_UNLIKELY(arch->event_mask)) {
        for (uint32_t k = 0; k < n; k++) {
            weft_entity e = t->entities[base + k];
            wf_fire_values(w, WEFT_EVENT_ADD, columns, count, e);
            wf_fire_values(w, WEFT_EVENT_INSERT, columns, count, e);
        }
    }
    return WEFT_OK;
}

/* Moves e from its archetype to `dst` (table reserved by the caller)
 * along `plan` (NULL when both share a table). Table values dst lacks are
 * destroyed; sparse values are the caller's. */
static inline void commit_move(weft_world *w, wf_record *rec, wf_archetype *src,
                               wf_archetype *dst, const wf_move_plan *plan)
{
    if (plan) {
        weft_entity moved;
        uint32_t row = wf_table_move(plan, rec->row, &moved, w->change_tick);
        if (moved) {
            w->entities.records[(uint32_t)moved].row = rec->row;
        }
        rec->row = row;
    }
    src->entity_count--;
    dst->entity_count++;
    rec->arch = dst->id;
}

static inline bool commit_reserve_row(wf_table *t, wf_allocator *a)
{
    return t->count < t->cap || wf_table_reserve(t, a, t->count + 1);
}

/* The entity's current value of a component it has. */
static wf_column *commit_locate(weft_world *w, weft_entity e, const wf_type_info *ti,
                                uint32_t *out_row)
{
    if (ti->storage == WEFT_STORAGE_SPARSE) {
        *out_row = wf_sparse_find(ti->sparse, (uint32_t)e);
        return &ti->sparse->dense;
    }
    const wf_record *r = &w->entities.records[(uint32_t)e];
    *out_row = r->row;
    return wf_table_column(wf_world_archetype(w, r->arch)->table, ti->id);
}

/* Replace with events: on_replace (old value visible), write, on_insert.
 * Hooks cannot move the entity (structural calls are deferred), so the
 * value is found again after them only for clarity. */
static weft_status commit_replace_fired(weft_world *w, weft_entity e, const wf_type_info *ti,
                                        const void *value)
{
    if (ti->event_mask & wf_event_bit(WEFT_EVENT_REPLACE)) {
        wf_fire(w, WEFT_EVENT_REPLACE, ti, e);
    }
    uint32_t row;
    wf_column *col = commit_locate(w, e, ti, &row);
    wf_column_replace(col, row, value, w->change_tick, w->change_tick);
    if (ti->event_mask & wf_event_bit(WEFT_EVENT_INSERT)) {
        wf_fire(w, WEFT_EVENT_INSERT, ti, e);
    }
    return WEFT_OK;
}

/* Events after a component was added: on_add, then on_insert. */
static void commit_added_fired(weft_world *w, weft_entity e, const wf_type_info *ti)
{
    if (ti->event_mask & wf_event_bit(WEFT_EVENT_ADD)) {
        wf_fire(w, WEFT_EVENT_ADD, ti, e);
    }
    if (ti->event_mask & wf_event_bit(WEFT_EVENT_INSERT)) {
        wf_fire(w, WEFT_EVENT_INSERT, ti, e);
    }
}

weft_status wf_commit_insert_one(weft_world *w, weft_entity e, wf_record *rec,
                                 const wf_type_info *ti, const void *value)
{
    wf_journal_structural(w); /* rows move: deltas since before this scan */
    if (WF_UNLIKELY((ti->req_count && w->req_gen) || ti->rel_targets)) {
        weft_value v = {ti->id, ti->size, value};
        return wf_commit_insert(w, e, rec, &v, 1);
    }
    wf_archetype *src = wf_world_archetype(w, rec->arch);
    uint32_t tick = w->change_tick;
    weft_component c = ti->id;
    if (ti->storage == WEFT_STORAGE_SPARSE) {
        wf_sparse_set *s = ti->sparse;
        uint32_t d = wf_sparse_find(s, (uint32_t)e);
        if (d != WF_SPARSE_EMPTY) {
            if (WF_UNLIKELY(ti->event_mask)) {
                return commit_replace_fired(w, e, ti, value);
            }
            wf_column_replace(&s->dense, d, value, tick, tick);
            return WEFT_OK;
        }
        wf_move_plan *plan; /* NULL: a sparse component moves no row */
        wf_archetype *dst = wf_graph_add(&w->graph, &w->alloc, &w->registry, src, c, &plan);
        if (!dst) {
            return commit_oom(w, "creating an archetype for insert");
        }
        if (!wf_sparse_reserve_page(s, &w->alloc, (uint32_t)e) ||
            !wf_sparse_reserve_dense(s, &w->alloc, 1)) {
            return commit_oom(w, "growing a sparse set for insert");
        }
        src->entity_count--;
        dst->entity_count++;
        rec->arch = dst->id;
        wf_sparse_insert(s, e, value, tick);
        if (WF_UNLIKELY(ti->event_mask)) {
            commit_added_fired(w, e, ti);
        }
        return WEFT_OK;
    }
    /* the edge first: when it is cached (a toggled component), presence
     * and the target come from the archetype alone */
    wf_move_plan *plan;
    wf_archetype *dst = wf_graph_add(&w->graph, &w->alloc, &w->registry, src, c, &plan);
    if (!dst) {
        return commit_oom(w, "creating an archetype for insert");
    }
    if (dst == src) { /* present: replace */
        if (WF_UNLIKELY(ti->event_mask)) {
            return commit_replace_fired(w, e, ti, value);
        }
        wf_column_replace(&src->cols[src->col_map[c]], rec->row, value, tick, tick);
        return WEFT_OK;
    }
    wf_table *t = plan->dst;
    if (WF_UNLIKELY(t->count == t->cap) && !wf_table_reserve(t, &w->alloc, t->count + 1)) {
        return commit_oom(w, "growing a table for insert");
    }
    commit_move(w, rec, src, dst, plan);
    wf_column_construct(plan->fresh, rec->row, value, tick);
    if (WF_UNLIKELY(ti->event_mask)) {
        commit_added_fired(w, e, ti);
    }
    return WEFT_OK;
}

static weft_status commit_insert_raw(weft_world *w, weft_entity e, wf_record *rec,
                                     const weft_value *values, int32_t count)
{
    wf_archetype *src = wf_world_archetype(w, rec->arch);
    wf_archetype *dst = commit_target(w, src, values, count);
    if (!dst) {
        return commit_oom(w, "creating an archetype for insert");
    }
    wf_move_plan *plan = NULL;
    if (dst->table != src->table) {
        plan = wf_table_plan(src->table, dst->table, &w->alloc);
        if (!plan) {
            return commit_oom(w, "planning a row move for insert");
        }
        if (!commit_reserve_row(dst->table, &w->alloc)) {
            return commit_oom(w, "growing a table for insert");
        }
    }
    if (dst->sparse_count != src->sparse_count &&
        !commit_reserve_sparse(w, values, count, (uint32_t)e, 1)) {
        return commit_oom(w, "growing a sparse set for insert");
    }
    bool events = (src->event_mask | dst->event_mask) != 0;
    if (WF_UNLIKELY(events)) {
        /* on_replace for the present ones, before any write */
        for (int32_t i = 0; i < count; i++) {
            const wf_type_info *ti = wf_registry_get(&w->registry, values[i].id);
            if ((ti->event_mask & wf_event_bit(WEFT_EVENT_REPLACE)) &&
                wf_archetype_has(src, ti->id)) {
                wf_fire(w, WEFT_EVENT_REPLACE, ti, e);
            }
        }
    }
    /* commit */
    if (dst != src) {
        commit_move(w, rec, src, dst, plan);
    }
    uint32_t tick = w->change_tick;
    for (int32_t i = 0; i < count; i++) {
        weft_component id = values[i].id;
        const wf_type_info *ti = wf_registry_get(&w->registry, id);
        bool existed = src == dst || wf_archetype_has(src, id);
        if (ti->storage == WEFT_STORAGE_SPARSE) {
            wf_sparse_set *s = ti->sparse;
            if (existed) {
                wf_column_replace(&s->dense, wf_sparse_find(s, (uint32_t)e), values[i].ptr,
                                  tick, tick);
            } else {
                wf_sparse_insert(s, e, values[i].ptr, tick);
            }
        } else {
            wf_column *c = wf_table_column(dst->table, id);
            if (existed) {
                wf_column_replace(c, rec->row, values[i].ptr, tick, tick);
            } else {
                wf_column_construct(c, rec->row, values[i].ptr, tick);
            }
        }
    }
    if (WF_UNLIKELY(events)) {
        for (int32_t i = 0; i < count; i++) {
            const wf_type_info *ti = wf_registry_get(&w->registry, values[i].id);
            if ((ti->event_mask & wf_event_bit(WEFT_EVENT_ADD)) &&
                !wf_archetype_has(src, ti->id)) {
                wf_fire(w, WEFT_EVENT_ADD, ti, e);
            }
        }
        wf_fire_values(w, WEFT_EVENT_INSERT, values, count, e);
    }
    return WEFT_OK;
}

weft_status wf_commit_remove(weft_world *w, weft_entity e, wf_record *rec,
                             const wf_type_info *ti)
{
    wf_journal_structural(w); /* rows move: deltas since before this scan */
    wf_archetype *src = wf_world_archetype(w, rec->arch);
    weft_component c = ti->id;
    if (ti->storage == WEFT_STORAGE_SPARSE) {
        if (wf_sparse_find(ti->sparse, (uint32_t)e) == WF_SPARSE_EMPTY) {
            return WEFT_OK;
        }
    }
    wf_move_plan *plan;
    wf_archetype *dst = wf_graph_remove(&w->graph, &w->alloc, &w->registry, src, c, &plan);
    if (!dst) {
        return commit_oom(w, "creating an archetype for remove");
    }
    if (dst == src) {
        return WEFT_OK; /* absent: nothing to do */
    }
    if (plan && plan->dst->count == plan->dst->cap &&
        !wf_table_reserve(plan->dst, &w->alloc, plan->dst->count + 1)) {
        return commit_oom(w, "growing a table for remove");
    }
    if (WF_UNLIKELY(ti->event_mask)) {
        /* on_replace, then on_remove, the value still readable */
        if (ti->event_mask & wf_event_bit(WEFT_EVENT_REPLACE)) {
            wf_fire(w, WEFT_EVENT_REPLACE, ti, e);
        }
        if (ti->event_mask & wf_event_bit(WEFT_EVENT_REMOVE)) {
            wf_fire(w, WEFT_EVENT_REMOVE, ti, e);
        }
    }
    if (WF_UNLIKELY(ti->removed_stream)) {
        wf_removed_push(w, c, e);
    }
    if (ti->storage == WEFT_STORAGE_SPARSE) {
        wf_sparse_remove(ti->sparse, (uint32_t)e);
    }
    commit_move(w, rec, src, dst, plan);
    return WEFT_OK;
}

weft_status wf_commit_despawn(weft_world *w, weft_entity e, wf_record *rec)
{
    wf_journal_structural(w); /* rows move: deltas since before this scan */
    uint32_t idx = (uint32_t)e;
    wf_archetype *arch = wf_world_archetype(w, rec->arch);
    if (WF_UNLIKELY(arch->event_mask)) {
        /* the only step that can fail: room for the relationship hooks'
         * records (a linked subtree is queued whole or not at all) */
        weft_status st = wf_rel_prepare_despawn(w, e, arch);
        if (st != WEFT_OK) {
            return st;
        }
        /* despawn for every component, then replace, then remove: values are
         * readable throughout; structural calls from hooks are deferred */
        wf_fire_archetype(w, WEFT_EVENT_DESPAWN, arch, e);
        wf_fire_archetype(w, WEFT_EVENT_REPLACE, arch, e);
        wf_fire_archetype(w, WEFT_EVENT_REMOVE, arch, e);
    }
    if (WF_UNLIKELY(w->targeted_observers)) {
        wf_observers_forget(w, e);
    }
    for (uint32_t i = 0; i < arch->sparse_count; i++) {
        wf_type_info *ti = wf_registry_get(&w->registry, arch->sparse_ids[i]);
        if (ti->removed_stream) {
            wf_removed_push(w, ti->id, e);
        }
        wf_sparse_remove(ti->sparse, idx);
    }
    wf_table *t = arch->table;
    /* removal streams exist only once messages are set up: without them
     * no column's type info needs to be read */
    for (uint32_t i = 0; WF_UNLIKELY(w->messages != NULL) && i < t->col_count; i++) {
        const wf_type_info *ti = t->cols[i].ti;
        if (WF_UNLIKELY(ti->removed_stream)) {
            wf_removed_push(w, ti->id, e);
        }
    }
    weft_entity moved = wf_table_delete(t, rec->row);
    if (moved) {
        w->entities.records[(uint32_t)moved].row = rec->row;
    }
    arch->entity_count--;
    wf_entities_release(&w->entities, &w->alloc, idx);
    return WEFT_OK;
}

/* ---- entry points: requirements expanded, then the single-move paths ---- */

/* After a failed commit (or preparation) of values[0..count): the lists
 * the preparation gave their targets go again where they are still empty
 * (an empty list is never kept: the hooks prune it). */
static void commit_rel_undo(weft_world *w, const weft_value *values, int32_t count)
{
    for (int32_t i = count; i-- > 0;) {
        const wf_type_info *ti = wf_registry_get(&w->registry, values[i].id);
        if (WF_LIKELY(!ti->rel_targets) || !values[i].ptr) {
            continue;
        }
        weft_entity t;
        memcpy(&t, values[i].ptr, sizeof t);
        if (wf_entity_live(w, t)) {
            wf_rel_unprepare_relate(w, ti, t, true);
        }
    }
}

/* Relationship values among `values` (for entity e; 0 for a spawn): each
 * is admitted first (a live target, not e, no cycle: wf_rel_admit), then
 * each target's list gets room for one more source before anything moves,
 * so the source hook appends and cannot fail. A refusal or a failure
 * leaves nothing changed. */
static weft_status commit_rel_prepare(weft_world *w, weft_entity e, const weft_value *values,
                                      int32_t count)
{
    bool any = false;
    for (int32_t i = 0; i < count; i++) {
        const wf_type_info *ti = wf_registry_get(&w->registry, values[i].id);
        if (WF_LIKELY(!ti->rel_targets)) {
            continue;
        }
        weft_entity t = 0;
        if (values[i].ptr) {
            memcpy(&t, values[i].ptr, sizeof t);
        }
        weft_status st = wf_rel_admit(w, e, ti, t);
        if (st != WEFT_OK) {
            return st;
        }
        any = true;
    }
    for (int32_t i = 0; any && i < count; i++) {
        const wf_type_info *ti = wf_registry_get(&w->registry, values[i].id);
        if (WF_LIKELY(!ti->rel_targets)) {
            continue;
        }
        weft_entity t;
        memcpy(&t, values[i].ptr, sizeof t);
        bool added = false;
        weft_status st = wf_rel_prepare_relate(w, ti, t, 1, &added);
        if (st != WEFT_OK) {
            commit_rel_undo(w, values, i);
            return st;
        }
    }
    return WEFT_OK;
}

static weft_status commit_spawn_values(weft_world *w, const weft_value *values, int32_t count,
                                      weft_entity *out)
{
    if (WF_LIKELY(!w->req_gen)) {
        return commit_spawn_raw(w, values, count, out);
    }
    wf_req_scratch s;
    const weft_value *v;
    int32_t n;
    weft_status st = wf_require_expand(w, w->graph.archetypes[0], values, count, &s, &v, &n);
    if (st == WEFT_OK) {
        st = commit_spawn_raw(w, v, n, out);
    }
    wf_require_done(w, &s);
    return st;
}

weft_status wf_commit_spawn(weft_world *w, const weft_value *values, int32_t count,
                            weft_entity *out)
{
    wf_journal_structural(w); /* rows move: deltas since before this scan */
    weft_status st = commit_rel_prepare(w, 0, values, count);
    if (st != WEFT_OK) {
        return st;
    }
    st = commit_spawn_values(w, values, count, out);
    if (WF_UNLIKELY(st != WEFT_OK)) {
        commit_rel_undo(w, values, count);
    }
    return st;
}

static int commit_entity_cmp(const void *a, const void *b)
{
    weft_entity x = *(const weft_entity *)a, y = *(const weft_entity *)b;
    return (x > y) - (x < y);
}

/* commit_rel_undo over the n rows of each relationship column. */
static void commit_rel_undo_bulk(weft_world *w, const weft_value *columns, int32_t count,
                                 uint32_t n)
{
    for (int32_t i = 0; i < count; i++) {
        const wf_type_info *ti = wf_registry_get(&w->registry, columns[i].id);
        for (uint32_t k = 0; ti->rel_targets && columns[i].ptr && k < n; k++) {
            const uint8_t *row = (const uint8_t *)columns[i].ptr + (size_t)k * ti->size;
            weft_value v = {ti->id, ti->size, row};
            commit_rel_undo(w, &v, 1);
        }
    }
}

/* commit_rel_prepare for a bulk spawn of n rows: every row's target is
 * admitted, then each distinct target gets room for all the rows naming
 * it (targets sorted in a scratch copy: O(n log n)). */
static weft_status commit_rel_prepare_bulk(weft_world *w, const weft_value *columns,
                                           int32_t count, uint32_t n)
{
    for (int32_t i = 0; i < count; i++) {
        const wf_type_info *ti = wf_registry_get(&w->registry, columns[i].id);
        if (WF_LIKELY(!ti->rel_targets) || n == 0) {
            continue;
        }
        const uint8_t *src = columns[i].ptr;
        weft_entity *t = wf_alloc(&w->alloc, (size_t)n * sizeof *t, _Alignof(weft_entity));
        if (!t) {
            commit_rel_undo_bulk(w, columns, i, n);
            return commit_oom(w, "sorting the targets of a bulk spawn");
        }
        weft_status st = WEFT_OK;
        for (uint32_t k = 0; k < n && st == WEFT_OK; k++) {
            t[k] = 0;
            if (src) {
                memcpy(&t[k], src + (size_t)k * sizeof t[k], sizeof t[k]);
            }
            st = wf_rel_admit(w, 0, ti, t[k]);
        }
        if (st == WEFT_OK) {
            qsort(t, n, sizeof *t, commit_entity_cmp);
        }
        for (uint32_t k = 0, run; k < n && st == WEFT_OK; k += run) {
            for (run = 1; k + run < n && t[k + run] == t[k]; run++) {
            }
            bool added;
            st = wf_rel_prepare_relate(w, ti, t[k], run, &added);
        }
        wf_free(&w->alloc, t, (size_t)n * sizeof *t, _Alignof(weft_entity));
        if (st != WEFT_OK) {
            commit_rel_undo_bulk(w, columns, i + 1, n);
            return st;
        }
    }
    return WEFT_OK;
}

weft_status wf_commit_spawn_cached(weft_world *w, const weft_value *values, int32_t count,
                                   weft_entity *out)
{
    wf_journal_structural(w); /* rows move: deltas since before this scan */
    return commit_spawn_into(w, w->spawn_cache.arch, values, count, out);
}

weft_status wf_commit_spawn_bulk(weft_world *w, const weft_value *columns, int32_t count,
                                 uint32_t n, weft_entity *out)
{
    wf_journal_structural(w); /* rows move: deltas since before this scan */
    weft_status st = commit_rel_prepare_bulk(w, columns, count, n);
    if (st != WEFT_OK) {
        return st;
    }
    if (WF_LIKELY(!w->req_gen)) {
        st = commit_spawn_bulk_raw(w, columns, count, count, n, out);
    } else {
        wf_req_scratch s;
        const weft_value *v;
        int32_t k;
        st = wf_require_expand(w, w->graph.archetypes[0], columns, count, &s, &v, &k);
        if (st == WEFT_OK) {
            st = commit_spawn_bulk_raw(w, v, k, count, n, out);
        }
        wf_require_done(w, &s);
    }
    if (WF_UNLIKELY(st != WEFT_OK)) {
        commit_rel_undo_bulk(w, columns, count, n);
    }
    return st;
}

static weft_status commit_insert_values(weft_world *w, weft_entity e, wf_record *rec,
                                       const weft_value *values, int32_t count)
{
    if (WF_LIKELY(!w->req_gen)) {
        return commit_insert_raw(w, e, rec, values, count);
    }
    wf_req_scratch s;
    const weft_value *v;
    int32_t n;
    weft_status st = wf_require_expand(w, wf_world_archetype(w, rec->arch), values, count, &s,
                                       &v, &n);
    if (st == WEFT_OK) {
        st = commit_insert_raw(w, e, rec, v, n);
    }
    wf_require_done(w, &s);
    return st;
}

weft_status wf_commit_insert(weft_world *w, weft_entity e, wf_record *rec,
                             const weft_value *values, int32_t count)
{
    wf_journal_structural(w); /* rows move: deltas since before this scan */
    weft_status st = commit_rel_prepare(w, e, values, count);
    if (st != WEFT_OK) {
        return st;
    }
    rec = wf_entity_live(w, e); /* a preparation may have moved e (its own list) */
    if (!rec) {
        return WEFT_ERR_STALE_ENTITY;
    }
    st = commit_insert_values(w, e, rec, values, count);
    if (WF_UNLIKELY(st != WEFT_OK)) {
        commit_rel_undo(w, values, count);
    }
    return st;
}

weft_status wf_commit_insert_admitted(weft_world *w, weft_entity e, const weft_value *values,
                                      int32_t count)
{
    wf_journal_structural(w); /* rows move: deltas since before this scan */
    wf_record *rec = wf_entity_live(w, e); /* the preparation may have moved e */
    if (!rec) {
        return WEFT_ERR_STALE_ENTITY;
    }
    return commit_insert_values(w, e, rec, values, count);
}

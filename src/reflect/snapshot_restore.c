/* src/reflect/snapshot_restore.c - a validated snapshot into the world.
 * SPDX-License-Identifier: MIT
 *
 * After validation (snapshot_validate.c), restore reserves every byte it
 * needs (archetypes, records, table rows, sparse pages, relationship
 * lists, resource and message blocks: the only failures, after which the
 * world is as it was but for capacity and archetypes), then commits, which
 * cannot fail. Table rows are appended in saved order, so every entity
 * gets back its row and queries iterate in the same order as in the saved
 * world.
 */
#include "reflect/snapshot_internal.h"

#include "schedule/schedule.h"
#include "world/clear.h"
#include "world/messages.h"
#include "world/relationship.h"

/* ---- reserve: every allocation of the commit, or none ---- */

static void release_reserved(wf_restore *r)
{
    wf_allocator *a = &r->w->alloc;
    for (uint32_t i = 0; r->lists && i < r->nlists; i++) {
        if (r->lists[i]) {
            wf_free(a, r->lists[i], (size_t)r->list_cap[i] * sizeof(weft_entity),
                    _Alignof(weft_entity));
        }
    }
    for (uint32_t k = 0; r->res && k < r->nres; k++) {
        if (r->res[k].block) {
            wf_free(a, r->res[k].block, r->res[k].ti->size, r->res[k].ti->align);
        }
    }
    for (uint32_t k = 0; r->streams && k < r->nstreams; k++) {
        wf_stage_stream *x = &r->streams[k];
        if (x->block_a) {
            wf_free(a, x->block_a, (size_t)x->na * x->dst->size, x->dst->align);
        }
        if (x->block_b) {
            wf_free(a, x->block_b, (size_t)x->nb * x->dst->size, x->dst->align);
        }
    }
}

static bool reserve(wf_restore *r)
{
    weft_world *w = r->w;
    wf_allocator *a = &w->alloc;
    wf_entity_index *ix = &w->entities;
    if (!wf_entities_reserve(ix, a, r->count)) {
        return wf_snap_bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for %u entity records",
                           r->count);
    }
    if (r->free_len > ix->free_cap) {
        void *data = ix->free_stack;
        if (!wf_grow(a, &data, &ix->free_cap, r->free_len, sizeof(uint32_t),
                     _Alignof(uint32_t))) {
            return wf_snap_bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for the free stack");
        }
        ix->free_stack = data;
    }
    for (uint32_t t = 0; t < r->ntables; t++) {
        if (!wf_table_reserve(r->tables[t].dst, a, r->tables[t].rows)) {
            return wf_snap_bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for table rows");
        }
    }
    for (uint32_t k = 0; k < r->nsparse; k++) {
        wf_stage_sparse *sp = &r->sparse[k];
        wf_sparse_set *set = sp->ti->sparse;
        if (!wf_sparse_reserve_dense(set, a, sp->count)) {
            return wf_snap_bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for sparse '%s'",
                               sp->ti->name);
        }
        for (uint32_t d = 0; d < sp->count; d++) {
            uint64_t e;
            memcpy(&e, sp->owners + (size_t)d * 8, 8);
            if (!wf_sparse_reserve_page(set, a, (uint32_t)e)) {
                return wf_snap_bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for sparse '%s'",
                                   sp->ti->name);
            }
        }
    }
    if (r->nlists) {
        r->lists = wf_snap_scratch(r, r->nlists, sizeof *r->lists);
        r->list_cap = wf_snap_scratch(r, r->nlists, sizeof *r->list_cap);
        if (!r->lists || !r->list_cap) {
            return false;
        }
        uint32_t li = 0;
        for (uint32_t t = 0; t < r->ntables; t++) {
            const wf_stage_table *tb = &r->tables[t];
            for (uint32_t i = 0; i < tb->ncols; i++) {
                if (!r->cols[tb->col0 + i].ti->rel_source) {
                    continue;
                }
                wf_sr v = {r->cols[tb->col0 + i].vals,
                           SIZE_MAX - (size_t)(uintptr_t)r->cols[tb->col0 + i].vals, 0};
                for (uint32_t row = 0; row < tb->rows; row++) {
                    uint32_t cnt = 0;
                    uint32_t zero = 0;
                    wf_sr_u32(&v, &cnt);
                    wf_sr_u32(&v, &zero);
                    wf_sr_take(&v, (size_t)cnt * 8);
                    if (!cnt) {
                        continue;
                    }
                    r->lists[li] = wf_alloc(a, (size_t)cnt * sizeof(weft_entity),
                                            _Alignof(weft_entity));
                    if (!r->lists[li]) {
                        return wf_snap_bad(r, WEFT_ERR_OUT_OF_MEMORY,
                                           "out of memory for relationship lists");
                    }
                    r->list_cap[li++] = cnt;
                }
            }
        }
    }
    for (uint32_t k = 0; k < r->nres; k++) {
        wf_stage_res *x = &r->res[k];
        if (x->ti->size) {
            x->block = wf_alloc(a, x->ti->size, x->ti->align);
            if (!x->block) {
                return wf_snap_bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for resources");
            }
        }
    }
    for (uint32_t k = 0; k < r->nstreams; k++) {
        wf_stage_stream *x = &r->streams[k];
        if (x->track) {
            /* benign if a later step fails: tracking is invisible to content */
            if (wf_removed_track(w, x->track) != WEFT_OK) {
                return wf_snap_bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for removal tracking");
            }
            x->dst = wf_removed_stream(w, x->track);
            x->track = NULL;
        }
        if (x->na && !(x->block_a = wf_alloc(a, (size_t)x->na * x->dst->size, x->dst->align))) {
            return wf_snap_bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for messages");
        }
        if (x->nb && !(x->block_b = wf_alloc(a, (size_t)x->nb * x->dst->size, x->dst->align))) {
            return wf_snap_bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for messages");
        }
    }
    return true;
}

/* ---- commit: cannot fail ---- */

/* Newest changed tick of n rows (seen from `now`), at least `floor`. */
static uint32_t latest_of(const weft_ticks *t, uint32_t n, uint32_t floor, uint32_t now)
{
    uint32_t best = floor;
    for (uint32_t i = 0; i < n; i++) {
        if (wf_tick_after(t[i].changed, best, now)) {
            best = t[i].changed;
        }
    }
    return best;
}

/* Fills rows [0, n) of column c from saved values and ticks. */
static void fill_column(wf_restore *r, wf_column *c, const wf_stage_col *sc, uint32_t n,
                        uint32_t *li)
{
    const wf_type_info *ti = sc->ti;
    if (ti->size) {
        if (ti->rel_source) {
            const uint8_t *p = sc->vals;
            for (uint32_t row = 0; row < n; row++) {
                uint32_t cnt = 0;
                memcpy(&cnt, p, 4);
                p += 8;
                wf_rel_list l = {NULL, (int32_t)cnt, (int32_t)cnt};
                if (cnt) {
                    l.items = r->lists[*li];
                    memcpy(l.items, p, (size_t)cnt * 8);
                    r->lists[(*li)++] = NULL; /* owned by the world now */
                    p += (size_t)cnt * 8;
                }
                memcpy(wf_column_ptr(c, row), &l, sizeof l);
            }
        } else {
            memcpy(c->data, sc->vals, (size_t)n * ti->size);
        }
    }
    c->bulk = false;
    if (c->ticks) {
        memcpy(c->ticks, sc->ticks, (size_t)n * sizeof(weft_ticks));
        c->latest_change = latest_of(c->ticks, n, c->latest_change, r->change_tick);
    }
}

/* The entity index and the archetypes' live counts. */
static void commit_entities(wf_restore *r)
{
    weft_world *w = r->w;
    wf_entity_index *ix = &w->entities;
    w->change_tick = r->change_tick;
    w->last_check_tick = r->last_check_tick;
    for (uint32_t i = 0; i < r->count; i++) {
        wf_record rec = wf_snap_rec_at(r, i);
        if (rec.arch != WF_ARCH_DEAD) {
            rec.arch = r->arch_dst[rec.arch]->id;
        }
        ix->records[i] = rec;
    }
    ix->count = r->count;
    if (r->free_len) {
        memcpy(ix->free_stack, r->free_stack, (size_t)r->free_len * 4);
    }
    ix->free_len = r->free_len;
    ix->retired = r->retired;
    ix->live = r->live;
    wf_atomic_store_relaxed_i64(&ix->cursor, (int64_t)ix->free_len);
    for (uint32_t a = 0; a < r->narch; a++) {
        r->arch_dst[a]->entity_count += (int32_t)r->arch_live[a];
    }
}

/* Table rows and sparse sets, values and ticks; relationship lists take
 * the reserved item arrays in order. */
static void commit_rows(wf_restore *r)
{
    uint32_t li = 0;
    for (uint32_t t = 0; t < r->ntables; t++) {
        const wf_stage_table *tb = &r->tables[t];
        wf_table *dst = tb->dst;
        wf_atomic_store_relaxed_u32(&dst->bulk_any, 0);
        memcpy(dst->entities, tb->ents, (size_t)tb->rows * 8);
        dst->count = tb->rows;
        for (uint32_t i = 0; i < tb->ncols; i++) {
            const wf_stage_col *sc = &r->cols[tb->col0 + i];
            fill_column(r, wf_table_column(dst, sc->ti->id), sc, tb->rows, &li);
        }
    }
    for (uint32_t k = 0; k < r->nsparse; k++) {
        const wf_stage_sparse *sp = &r->sparse[k];
        wf_sparse_set *set = sp->ti->sparse;
        memcpy(set->owners, sp->owners, (size_t)sp->count * 8);
        for (uint32_t d = 0; d < sp->count; d++) {
            uint32_t idx = (uint32_t)set->owners[d];
            set->pages[idx >> WF_SPARSE_PAGE_BITS][idx & (WF_SPARSE_PAGE_SIZE - 1)] = d;
        }
        set->count = sp->count;
        wf_stage_col sc = {sp->ti, sp->vals, sp->ticks};
        fill_column(r, &set->dense, &sc, sp->count, &li);
    }
}

static void commit_resources(wf_restore *r)
{
    weft_world *w = r->w;
    for (uint32_t k = 0; k < r->nres; k++) {
        wf_stage_res *x = &r->res[k];
        if (x->ti->size) {
            memcpy(x->block, x->val, x->ti->size);
            x->ti->res_value = x->block;
            x->block = NULL;
        }
        x->ti->res_ticks = x->ticks;
        x->ti->res_present = true;
        w->registry.resources++;
    }
}

static void commit_streams(wf_restore *r)
{
    weft_world *w = r->w;
    for (uint32_t k = 0; k < r->nstreams; k++) {
        wf_stage_stream *x = &r->streams[k];
        wf_msg_stream *s = x->dst;
        if (x->na) {
            wf_free(&w->alloc, s->a.data, (size_t)s->a.cap * s->size, s->align);
            memcpy(x->block_a, x->a, (size_t)x->na * s->size);
            s->a.data = x->block_a;
            s->a.cap = x->na;
            x->block_a = NULL;
        }
        if (x->nb) {
            wf_free(&w->alloc, s->b.data, (size_t)s->b.cap * s->size, s->align);
            memcpy(x->block_b, x->b, (size_t)x->nb * s->size);
            s->b.data = x->block_b;
            s->b.cap = x->nb;
            x->block_b = NULL;
        }
        s->a.count = x->na;
        s->a.first = x->first;
        s->b.count = x->nb;
        s->b.first = x->first + x->na;
    }
}

static void commit_queries(wf_restore *r)
{
    weft_world *w = r->w;
    if (r->apply_queries) {
        wf_sr q = r->queries;
        for (weft_query *x = w->queries; x; x = x->next) {
            uint32_t last = 0;
            wf_sr_u32(&q, &last);
            wf_sr_take(&q, 12);
            x->last_run = last;
        }
    }
}

/* One saved schedule (validated: it exists, with as many systems and
 * conditions): its systems' last runs and cursors, its conditions' state. */
static void commit_schedule(wf_sys_world *sw, wf_sr *in)
{
    wf_sr s = *in;
    const char *name = NULL;
    uint32_t len = 0;
    uint32_t nsys = 0;
    uint32_t ncond = 0;
    wf_sr_str(&s, &name, &len);
    wf_sr_u32(&s, &nsys);
    wf_sr_u32(&s, &ncond);
    weft_schedule *sc = NULL;
    for (weft_schedule *x = sw->schedules; x; x = x->next) {
        if (strlen(x->name) == len && memcmp(x->name, name, len) == 0) {
            sc = x;
        }
    }
    uint32_t node = 0;
    for (uint32_t i = 0; i < nsys; i++) {
        const char *sname = NULL;
        uint32_t slen = 0;
        uint32_t f[4] = {0, 0, 0, 0};
        wf_sr_str(&s, &sname, &slen);
        for (int j = 0; j < 4; j++) {
            wf_sr_u32(&s, &f[j]);
        }
        while (!sc->nodes[node].sys) {
            node++;
        }
        wf_system *sys = sc->nodes[node++].sys;
        sys->last_run = f[0];
        const uint8_t *cur = wf_sr_take(&s, (size_t)f[1] * sizeof(weft_message_cursor));
        if (f[1]) {
            memcpy(sys->cursors, cur, (size_t)f[1] * sizeof(weft_message_cursor));
        }
        cur = wf_sr_take(&s, (size_t)f[2] * sizeof(weft_message_cursor));
        if (f[2]) {
            memcpy(sys->rcursors, cur, (size_t)f[2] * sizeof(weft_message_cursor));
        }
    }
    weft_condition *c = sc->conds;
    for (uint32_t i = 0; i < ncond; i++, c = c->next) {
        uint32_t f[4] = {0, 0, 0, 0};
        for (int j = 0; j < 4; j++) {
            wf_sr_u32(&s, &f[j]);
        }
        c->fired = f[1] != 0;
        c->last_run = f[2];
        if (c->sys) {
            c->sys->last_run = f[3];
        }
        memcpy(&c->cursor, wf_sr_take(&s, sizeof c->cursor), sizeof c->cursor);
    }
    *in = s;
}

static void commit_schedules(wf_restore *r)
{
    wf_sys_world *sw = r->w->sys;
    if (r->apply_scheds) {
        wf_sr s = r->scheds;
        uint32_t n = 0;
        wf_sr_u32(&s, &n);
        wf_sr_take(&s, 12);
        sw->acc = r->acc;
        sw->app_started = r->app_started;
        for (uint32_t k = 0; k < n; k++) {
            commit_schedule(sw, &s);
        }
    }
}

static void commit(wf_restore *r)
{
    wf_journal_structural(r->w); /* the whole world arrives */
    commit_entities(r);
    commit_rows(r);
    commit_resources(r);
    commit_streams(r);
    commit_queries(r);
    commit_schedules(r);
}

static void restore_free(wf_restore *r)
{
    release_reserved(r);
    wf_snap_scratch_free(r, r->comps, (size_t)r->ncomps + 1, sizeof *r->comps);
    wf_snap_scratch_free(r, r->state, r->count, 1);
    wf_snap_scratch_free(r, r->arch_ids, r->narch, sizeof *r->arch_ids);
    wf_snap_scratch_free(r, r->arch_n, r->narch, sizeof *r->arch_n);
    wf_snap_scratch_free(r, r->arch_dst, r->narch, sizeof *r->arch_dst);
    wf_snap_scratch_free(r, r->arch_live, r->narch, sizeof *r->arch_live);
    wf_snap_scratch_free(r, r->scratch, WF_MAX_COMPONENTS, sizeof *r->scratch);
    wf_snap_scratch_free(r, r->tables, r->ntables, sizeof *r->tables);
    wf_snap_scratch_free(r, r->table_seen, r->ntable_seen, 1);
    wf_snap_scratch_free(r, r->cols, r->ncols, sizeof *r->cols);
    wf_snap_scratch_free(r, r->sparse, r->nsparse, sizeof *r->sparse);
    wf_snap_scratch_free(r, r->res, r->nres, sizeof *r->res);
    wf_snap_scratch_free(r, r->streams, r->nstreams, sizeof *r->streams);
    wf_snap_scratch_free(r, r->lists, r->nlists, sizeof *r->lists);
    wf_snap_scratch_free(r, r->list_cap, r->nlists, sizeof *r->list_cap);
}

weft_status wf_snapshot_restore(weft_world *w, const void *data, size_t len)
{
    if (w->iter_depth || w->settling || (w->sys && w->sys->depth) || w->cmds.count) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "snapshot restore: the world is iterating, running or has commands "
                        "pending");
    }
    uint32_t free_taken;
    uint32_t fresh_taken;
    wf_entities_pending(&w->entities, &free_taken, &fresh_taken);
    if (free_taken || fresh_taken || w->rel_attach_pending) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "snapshot restore: entity reservations are pending (flush first)");
    }
    uint64_t since = 0;
    wf_snap_payload pl;
    weft_status st = wf_snap_check_header(w, data, len, 0, &since);
    if (st != WEFT_OK || (st = wf_snap_payload_open(w, data, len, &pl)) != WEFT_OK) {
        return st;
    }
    wf_restore r;
    memset(&r, 0, sizeof r);
    r.w = w;
    r.st = WEFT_OK;
    bool ok = wf_snap_validate(&r, pl.p, pl.n);
    ok = ok && reserve(&r);
    if (ok) {
        /* A live world's content goes first (nothing can fail from here):
         * the commit below fills an empty world. */
        wf_world_clear_content(w);
        commit(&r);
        w->restores++;
    }
    restore_free(&r);
    wf_snap_payload_close(w, &pl);
    return ok ? WEFT_OK : r.st;
}

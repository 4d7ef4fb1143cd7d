/* src/reflect/snapshot_write.c - full and delta snapshots of a world.
 * SPDX-License-Identifier: MIT
 *
 * write_all emits the sections of snapshot_format.h, one writer per
 * section; it runs twice, measuring then writing (snapshot_internal.h).
 * A delta writes only the rows changed since its base tick, found either
 * by scanning every column's ticks or, when nothing structural happened
 * and the change journal saw every write, from the journal (a patch).
 */
#include "reflect/snapshot_internal.h"

#include "schedule/schedule.h"
#include "world/messages.h"
#include "world/relationship.h"

static void put_zero(wf_sw *o, size_t n)
{
    static const uint8_t zero[64];
    while (n) {
        size_t k = n < sizeof zero ? n : sizeof zero;
        wf_sw_put(o, zero, k);
        n -= k;
    }
}

static void put_str(wf_sw *o, const char *s, size_t len)
{
    wf_sw_u32(o, (uint32_t)len);
    wf_sw_put(o, s, len);
    wf_sw_pad(o);
}

/* Values of rows [0, n) of column c (type ti): bytes, or for a
 * relationship list the counted entity arrays. */
static void put_values(wf_sw *o, const wf_type_info *ti, const wf_column *c, uint32_t n)
{
    if (!ti->size || !n) {
        return;
    }
    if (ti->rel_source) {
        for (uint32_t r = 0; r < n; r++) {
            const wf_rel_list *l = (const wf_rel_list *)(const void *)wf_column_ptr(c, r);
            wf_sw_u32(o, (uint32_t)l->count);
            wf_sw_u32(o, 0);
            if (l->count > 0) {
                wf_sw_put(o, l->items, (size_t)l->count * sizeof(weft_entity));
            }
        }
        return;
    }
    wf_sw_put(o, c->data, (size_t)n * ti->size);
    wf_sw_pad(o);
}

static void put_ticks(wf_sw *o, const wf_column *c, uint32_t n, uint32_t now)
{
    if (!c->ticks || !n) {
        return;
    }
    if (!c->bulk) {
        wf_sw_put(o, c->ticks, (size_t)n * sizeof(weft_ticks));
        return;
    }
    weft_ticks tmp[512];
    for (uint32_t r = 0; r < n;) {
        uint32_t k = n - r < 512u ? n - r : 512u;
        for (uint32_t i = 0; i < k; i++) {
            tmp[i] = wf_column_ticks(c, r + i, now);
        }
        wf_sw_put(o, tmp, (size_t)k * sizeof tmp[0]);
        r += k;
    }
}

/* Delta: did row r of column c change since o->since? Columns without
 * ticks and relationship lists are always written whole. */
static bool row_changed(const wf_sw *o, const wf_column *c, uint32_t r, uint32_t now)
{
    if (o->all || !c->ticks || c->ti->rel_source) {
        return true;
    }
    if (!c->bulk) {
        weft_ticks t = c->ticks[r];
        return now - t.changed <= now - o->since || now - t.added <= now - o->since;
    }
    /* at or after `since`: a write at the very tick the base was taken
     * may follow it, so such rows are included too */
    weft_ticks t = wf_column_ticks(c, r, now);
    return !wf_tick_after(o->since, t.changed, now) || !wf_tick_after(o->since, t.added, now);
}

/* One column's rows: whole (full snapshot), or in a delta an inclusion
 * bitmap (64 rows per word) followed by the changed rows' values and
 * ticks. */
static void put_column(wf_sw *o, const wf_column *c, uint32_t n, uint32_t now)
{
    if (!o->delta) {
        put_values(o, c->ti, c, n);
        put_ticks(o, c, n, now);
        return;
    }
    if (c->ti->rel_source) {
        for (uint32_t r0 = 0; r0 < n; r0 += 64) {
            wf_sw_u64(o, n - r0 >= 64 ? UINT64_MAX : (UINT64_C(1) << (n - r0)) - 1u);
        }
        put_values(o, c->ti, c, n);
        put_ticks(o, c, n, now);
        return;
    }
    size_t words = ((size_t)n + 63) / 64;
    if (!o->buf) {
        /* measuring: only the count of changed rows matters */
        size_t changed = 0;
        for (uint32_t r = 0; r < n; r++) {
            changed += row_changed(o, c, r, now) ? 1u : 0u;
        }
        o->len += words * 8 + changed * c->size;
        wf_sw_pad(o);
        o->len += c->ticks ? changed * sizeof(weft_ticks) : 0u;
        return;
    }
    /* the bitmap is computed once, then read back from the output */
    const uint8_t *bm = o->buf + o->len;
    for (uint32_t r0 = 0; r0 < n; r0 += 64) {
        uint64_t word = 0;
        for (uint32_t r = r0; r < n && r < r0 + 64; r++) {
            word |= (uint64_t)row_changed(o, c, r, now) << (r - r0);
        }
        wf_sw_u64(o, word);
    }
    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 0 && !c->size) || (pass == 1 && !c->ticks)) {
            if (pass == 0) {
                wf_sw_pad(o);
            }
            continue;
        }
        uint32_t r = 0;
        while (r < n) {
            uint64_t word;
            memcpy(&word, bm + (r / 64) * 8, 8);
            word >>= r % 64;
            if (!word) {
                r = (r / 64 + 1) * 64;
                continue;
            }
            while (!(word & 1u)) { /* word != 0: ends within this word */
                word >>= 1;
                r++;
            }
            uint32_t end = r + 1;
            while (end < n) {
                uint64_t w2;
                memcpy(&w2, bm + (end / 64) * 8, 8);
                if (!((w2 >> (end % 64)) & 1u)) {
                    break;
                }
                end++;
            }
            if (pass == 0) {
                wf_sw_put(o, c->data + (size_t)r * c->size, (size_t)(end - r) * c->size);
            } else if (!c->bulk) {
                wf_sw_put(o, c->ticks + r, (size_t)(end - r) * sizeof(weft_ticks));
            } else {
                for (uint32_t k = r; k < end; k++) {
                    weft_ticks t = wf_column_ticks(c, k, now);
                    wf_sw_put(o, &t, sizeof t);
                }
            }
            r = end;
        }
        if (pass == 0) {
            wf_sw_pad(o);
        }
    }
}

/* Patch delta: the journal's entries of column c, [*first, *end). */
static void journal_range(const wf_sw *o, const wf_column *c, uint32_t *first, uint32_t *end)
{
    uint32_t lo = 0;
    uint32_t hi = o->jn;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)o->jl[mid].col < (uintptr_t)c) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *first = lo;
    while (hi < o->jn && o->jl[hi].col == c) {
        hi++;
    }
    *end = hi;
}

/* Patch delta: the number of rows of column c (n rows) that the journal
 * names and that changed at or after o->since (the sorted journal's
 * ranges do not overlap). */
static uint32_t patch_count(const wf_sw *o, const wf_column *c, uint32_t n, uint32_t now)
{
    uint32_t first;
    uint32_t end;
    journal_range(o, c, &first, &end);
    uint32_t count = 0;
    for (uint32_t k = first; k < end; k++) {
        const wf_jentry *e = &o->jl[k];
        uint64_t stop = e->count == WF_JOURNAL_ALL ? n : (uint64_t)e->row + e->count;
        if (stop > n) {
            stop = n;
        }
        /* a sure entry marked at or after `since`: its rows changed, no
         * need to look at their ticks */
        if (e->sure && !wf_tick_after(o->since, e->tick, now)) {
            count += e->row < stop ? (uint32_t)(stop - e->row) : 0u;
            continue;
        }
        for (uint32_t r = e->row; r < stop; r++) {
            count += row_changed(o, c, r, now) ? 1u : 0u;
        }
    }
    return count;
}

/* One column of a patch delta: {npatch, 0}, then the changed rows'
 * numbers, values and ticks. Columns without ticks are given whole
 * (npatch WF_SNAP_PATCH_WHOLE, their changes cannot be told), relationship
 * lists not at all (they change only structurally). */
static void put_patch_column(wf_sw *o, const wf_column *c, uint32_t n, uint32_t now)
{
    if (c->ti->rel_source) {
        wf_sw_u32(o, 0);
        wf_sw_u32(o, 0);
        return;
    }
    if (!c->ticks) {
        wf_sw_u32(o, WF_SNAP_PATCH_WHOLE);
        wf_sw_u32(o, 0);
        put_values(o, c->ti, c, n);
        return;
    }
    uint32_t k = patch_count(o, c, n, now);
    wf_sw_u32(o, k);
    wf_sw_u32(o, 0);
    if (!k) {
        return;
    }
    if (!o->buf) { /* measuring: the sizes follow from the count */
        wf_sw_put(o, NULL, (size_t)k * 4);
        wf_sw_pad(o);
        if (c->size) {
            wf_sw_put(o, NULL, (size_t)k * c->size);
            wf_sw_pad(o);
        }
        wf_sw_put(o, NULL, (size_t)k * sizeof(weft_ticks));
        return;
    }
    /* writing: the row numbers, values and ticks go straight to their
     * places in one pass over the rows (a row's value and ticks are
     * fetched together), then the region is hashed in order */
    size_t rb = (size_t)k * 4;
    size_t rpad = (8 - (rb & 7)) & 7;
    size_t vb = (size_t)k * c->size;
    size_t vpad = (8 - (vb & 7)) & 7;
    size_t total = rb + rpad + vb + vpad + (size_t)k * sizeof(weft_ticks);
    uint8_t *rows = o->buf + o->len;
    uint8_t *vals = rows + rb + rpad;
    uint8_t *tks = vals + vb + vpad;
    memset(rows + rb, 0, rpad);
    memset(vals + vb, 0, vpad);
    uint32_t first;
    uint32_t end;
    journal_range(o, c, &first, &end);
    uint32_t i = 0;
    for (uint32_t j = first; j < end && i < k; j++) {
        const wf_jentry *e = &o->jl[j];
#if defined(__GNUC__)
        /* rows named by the journal are scattered: ask a few entries ahead */
        if (j + 16 < end && o->jl[j + 16].row < n) {
            __builtin_prefetch(wf_column_ptr(c, o->jl[j + 16].row));
            __builtin_prefetch(c->ticks + o->jl[j + 16].row);
        }
#endif
        uint64_t stop = e->count == WF_JOURNAL_ALL ? n : (uint64_t)e->row + e->count;
        if (stop > n) {
            stop = n;
        }
        bool sure = e->sure && !wf_tick_after(o->since, e->tick, now);
        for (uint32_t r = e->row; r < stop && i < k; r++) {
            if (!sure && !row_changed(o, c, r, now)) {
                continue;
            }
            memcpy(rows + (size_t)i * 4, &r, 4);
            if (c->size) {
                wf_value_copy(vals + (size_t)i * c->size, wf_column_ptr(c, r), c->size);
            }
            weft_ticks t = wf_column_ticks(c, r, now);
            memcpy(tks + (size_t)i * sizeof t, &t, sizeof t);
            i++;
        }
    }
    for (size_t at = 0; at < total; at += WF_SNAP_CHUNK) {
        size_t piece = total - at < WF_SNAP_CHUNK ? total - at : WF_SNAP_CHUNK;
        XXH3_64bits_update(&o->hs, rows + at, piece);
    }
    o->len += total;
}

static void put_stream(wf_sw *o, const wf_msg_stream *s)
{
    wf_sw_u64(o, s->size);
    wf_sw_u64(o, s->a.first);
    wf_sw_u32(o, s->a.count);
    wf_sw_u32(o, s->b.count);
    if (s->a.count) {
        wf_sw_put(o, s->a.data, (size_t)s->a.count * s->size);
    }
    if (s->b.count) {
        wf_sw_put(o, s->b.data, (size_t)s->b.count * s->size);
    }
    wf_sw_pad(o);
}

/* Signature of a query's terms, independent of component ids. */
uint64_t wf_snap_query_sig(const weft_world *w, const weft_query *q)
{
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, &q->term_count, sizeof q->term_count);
    XXH3_64bits_update(&st, &q->flags, sizeof q->flags);
    for (uint32_t i = 0; i < q->term_count; i++) {
        const wf_term *t = &q->terms[i];
        const char *name = wf_component_name(w, t->id);
        XXH3_64bits_update(&st, name, strlen(name));
        uint8_t b[3] = {t->oper, t->access, t->filter};
        XXH3_64bits_update(&st, b, sizeof b);
    }
    return XXH3_64bits_digest(&st);
}

uint32_t wf_snap_count_sys_nodes(const weft_schedule *s)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nnodes; i++) {
        n += s->nodes[i].sys ? 1u : 0u;
    }
    return n;
}

uint32_t wf_snap_count_conds(const weft_schedule *s)
{
    uint32_t n = 0;
    for (const weft_condition *c = s->conds; c; c = c->next) {
        n++;
    }
    return n;
}

static void write_comps(const weft_world *w, wf_sw *o)
{
    const wf_registry *reg = &w->registry;
    wf_sw_sec_begin(o, WF_SNAP_SEC_COMP);
    wf_sw_u32(o, reg->count);
    wf_sw_u32(o, 0);
    for (uint32_t id = 1; id <= reg->count; id++) {
        const wf_type_info *ti = reg->infos[id];
        uint32_t role = ti->rel_source
                            ? WF_SNAP_ROLE_REL_LIST
                            : (ti->rel_targets ? WF_SNAP_ROLE_REL_SOURCE : WF_SNAP_ROLE_PLAIN);
        wf_sw_u32(o, id);
        wf_sw_u32(o, ti->size);
        wf_sw_u32(o, ti->align);
        wf_sw_u32(o, (uint32_t)ti->storage);
        wf_sw_u32(o, ti->flags);
        wf_sw_u32(o, role);
        put_str(o, ti->name, ti->name_len);
    }
    wf_sw_sec_end(o);
}

static void write_ents(const weft_world *w, wf_sw *o)
{
    const wf_entity_index *ix = &w->entities;
    wf_sw_sec_begin(o, WF_SNAP_SEC_ENTS);
    wf_sw_u32(o, ix->count);
    wf_sw_u32(o, ix->free_len);
    wf_sw_u32(o, ix->retired);
    wf_sw_u32(o, 0);
    if (o->patch) { /* unchanged since the base: the counts check the match */
        wf_sw_sec_end(o);
        return;
    }
    wf_sw_put(o, ix->records, (size_t)ix->count * sizeof(wf_record));
    wf_sw_pad(o);
    wf_sw_put(o, ix->free_stack, (size_t)ix->free_len * sizeof(uint32_t));
    wf_sw_sec_end(o);
}

static void write_archs(const weft_world *w, wf_sw *o)
{
    const wf_graph *g = &w->graph;
    wf_sw_sec_begin(o, WF_SNAP_SEC_ARCH);
    wf_sw_u32(o, g->arch_count);
    wf_sw_u32(o, 0);
    for (uint32_t a = 0; a < g->arch_count; a++) {
        const wf_archetype *arch = g->archetypes[a];
        wf_sw_u32(o, arch->id_count);
        wf_sw_put(o, arch->ids, (size_t)arch->id_count * sizeof(weft_component));
    }
    wf_sw_sec_end(o);
}

static void write_tables(const weft_world *w, wf_sw *o)
{
    const wf_graph *g = &w->graph;
    uint32_t now = w->change_tick;
    wf_sw_sec_begin(o, WF_SNAP_SEC_TABL);
    uint32_t ntables = 0;
    for (uint32_t t = 0; t < g->table_count; t++) {
        ntables += g->tables[t]->count ? 1u : 0u;
    }
    wf_sw_u32(o, ntables);
    wf_sw_u32(o, 0);
    for (uint32_t t = 0; t < g->table_count; t++) {
        const wf_table *tb = g->tables[t];
        if (!tb->count) {
            continue;
        }
        wf_sw_u32(o, tb->count);
        wf_sw_u32(o, tb->col_count);
        if (!o->patch) {
            wf_sw_put(o, tb->entities, (size_t)tb->count * sizeof(weft_entity));
        }
        for (uint32_t i = 0; i < tb->col_count; i++) {
            const wf_column *c = &tb->cols[i];
            wf_sw_u32(o, c->id);
            wf_sw_u32(o, c->ticks ? 1u : 0u);
            if (o->patch) {
                put_patch_column(o, c, tb->count, now);
            } else {
                put_column(o, c, tb->count, now);
            }
        }
    }
    wf_sw_sec_end(o);
}

static void write_sparse(const weft_world *w, wf_sw *o)
{
    const wf_registry *reg = &w->registry;
    uint32_t now = w->change_tick;
    wf_sw_sec_begin(o, WF_SNAP_SEC_SPRS);
    uint32_t nsparse = 0;
    for (uint32_t id = 1; id <= reg->count; id++) {
        const wf_sparse_set *s = reg->infos[id]->sparse;
        nsparse += (s && s->count) ? 1u : 0u;
    }
    wf_sw_u32(o, nsparse);
    wf_sw_u32(o, 0);
    for (uint32_t id = 1; id <= reg->count; id++) {
        const wf_type_info *ti = reg->infos[id];
        const wf_sparse_set *s = ti->sparse;
        if (!s || !s->count) {
            continue;
        }
        wf_sw_u32(o, id);
        wf_sw_u32(o, s->count);
        if (o->patch) {
            put_patch_column(o, &s->dense, s->count, now);
            continue;
        }
        wf_sw_put(o, s->owners, (size_t)s->count * sizeof(weft_entity));
        put_column(o, &s->dense, s->count, now);
    }
    wf_sw_sec_end(o);
}

static void write_resources(const weft_world *w, wf_sw *o)
{
    const wf_registry *reg = &w->registry;
    uint32_t now = w->change_tick;
    wf_sw_sec_begin(o, WF_SNAP_SEC_RESO);
    wf_sw_u32(o, (uint32_t)reg->resources);
    wf_sw_u32(o, 0);
    for (uint32_t id = 1; id <= reg->count; id++) {
        const wf_type_info *ti = reg->infos[id];
        if (!ti->res_present) {
            continue;
        }
        /* a delta leaves out unchanged values: flag 1 = take the base's */
        bool keep = o->delta && !o->all && !o->patch &&
                    wf_tick_after(o->since, ti->res_ticks.changed, now) &&
                    wf_tick_after(o->since, ti->res_ticks.added, now);
        wf_sw_u32(o, id);
        wf_sw_u32(o, keep ? 1u : 0u);
        if (keep) {
            continue;
        }
        wf_sw_put(o, &ti->res_ticks, sizeof ti->res_ticks);
        if (ti->size && ti->save_zeroed) {
            put_zero(o, ti->size); /* pointers would dangle once restored */
            wf_sw_pad(o);
        } else if (ti->size) {
            wf_sw_put(o, ti->res_value, ti->size);
            wf_sw_pad(o);
        }
    }
    wf_sw_sec_end(o);
}

static void write_messages(const weft_world *w, wf_sw *o)
{
    wf_sw_sec_begin(o, WF_SNAP_SEC_MSGS);
    const wf_messages *m = w->messages;
    wf_sw_u32(o, m ? m->type_count : 0u);
    wf_sw_u32(o, m ? m->removed_count : 0u);
    for (uint32_t i = 0; m && i < m->type_count; i++) {
        put_str(o, m->types[i]->name, m->types[i]->name_len);
        put_stream(o, m->types[i]);
    }
    for (uint32_t i = 0; m && i < m->removed_count; i++) {
        wf_sw_u32(o, m->removed[i]->component);
        wf_sw_u32(o, 0);
        put_stream(o, m->removed[i]);
    }
    wf_sw_sec_end(o);
}

static void write_ticks_and_queries(const weft_world *w, wf_sw *o)
{
    wf_sw_sec_begin(o, WF_SNAP_SEC_TICK);
    wf_sw_u32(o, w->change_tick);
    wf_sw_u32(o, w->last_check_tick);
    wf_sw_sec_end(o);

    wf_sw_sec_begin(o, WF_SNAP_SEC_QRYS);
    uint32_t nq = 0;
    for (const weft_query *q = w->queries; q; q = q->next) {
        nq++;
    }
    wf_sw_u32(o, nq);
    wf_sw_u32(o, 0);
    for (const weft_query *q = w->queries; q; q = q->next) {
        wf_sw_u32(o, q->last_run);
        wf_sw_u32(o, q->term_count);
        wf_sw_u64(o, wf_snap_query_sig(w, q));
    }
    wf_sw_sec_end(o);
}

/* One schedule: per system its last run and message cursors, per run
 * condition its state. */
static void write_schedule(wf_sw *o, const weft_schedule *s)
{
    put_str(o, s->name, strlen(s->name));
    wf_sw_u32(o, wf_snap_count_sys_nodes(s));
    wf_sw_u32(o, wf_snap_count_conds(s));
    for (uint32_t i = 0; i < s->nnodes; i++) {
        const wf_system *sys = s->nodes[i].sys;
        if (!sys) {
            continue;
        }
        put_str(o, sys->name, sys->name_len);
        wf_sw_u32(o, sys->last_run);
        wf_sw_u32(o, (uint32_t)sys->nmsgs);
        wf_sw_u32(o, (uint32_t)sys->nremoved);
        wf_sw_u32(o, 0);
        wf_sw_put(o, sys->cursors, (size_t)sys->nmsgs * sizeof(weft_message_cursor));
        wf_sw_put(o, sys->rcursors, (size_t)sys->nremoved * sizeof(weft_message_cursor));
    }
    for (const weft_condition *c = s->conds; c; c = c->next) {
        wf_sw_u32(o, c->kind);
        wf_sw_u32(o, c->fired ? 1u : 0u);
        wf_sw_u32(o, c->last_run);
        wf_sw_u32(o, c->sys ? c->sys->last_run : 0u);
        wf_sw_put(o, &c->cursor, sizeof c->cursor);
    }
}

static void write_schedules(const weft_world *w, wf_sw *o)
{
    wf_sw_sec_begin(o, WF_SNAP_SEC_SCHD);
    const wf_sys_world *sw = w->sys;
    uint32_t nsched = 0;
    for (const weft_schedule *s = sw ? sw->schedules : NULL; s; s = s->next) {
        nsched++;
    }
    wf_sw_u32(o, nsched);
    wf_sw_u32(o, sw && sw->app_started ? WF_SNAP_SCHD_APP_STARTED : 0u);
    double acc = sw ? sw->acc : 0.0;
    wf_sw_put(o, &acc, sizeof acc);
    for (const weft_schedule *s = sw ? sw->schedules : NULL; s; s = s->next) {
        write_schedule(o, s);
    }
    wf_sw_sec_end(o);
}

/* Every section, in the order of snapshot_format.h. */
static void write_all(weft_world *w, wf_sw *o)
{
    o->nsec = 0;
    write_comps(w, o);
    write_ents(w, o);
    write_archs(w, o);
    write_tables(w, o);
    write_sparse(w, o);
    write_resources(w, o);
    write_messages(w, o);
    write_ticks_and_queries(w, o);
    write_schedules(w, o);
}

/* Can the world be saved as it is? */
static weft_status snapshot_check(weft_world *w)
{
    if (w->iter_depth || w->settling) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "snapshot: a query iteration or hook is running");
    }
    if (w->sys && w->sys->depth) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "snapshot: a schedule is running");
    }
    if (w->cmds.count || w->rel_attach_pending) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "snapshot: deferred commands are pending");
    }
    uint32_t free_taken;
    uint32_t fresh_taken;
    wf_entities_pending(&w->entities, &free_taken, &fresh_taken);
    if (free_taken || fresh_taken || w->entities.later_len) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "snapshot: reserved entity ids are pending (weft_entity_flush)");
    }
    for (uint32_t id = 1; id <= w->registry.count; id++) {
        const wf_type_info *ti = w->registry.infos[id];
        bool held = ti->arch_count > 0 || ti->res_present;
        if (held && !ti->rel_source &&
            (ti->hooks.copy || ti->hooks.move || ti->hooks.dtor)) {
            return wf_error(w, WEFT_ERR_INVALID_ARG,
                            "snapshot: component '%s' has copy, move or dtor hooks; its "
                            "bytes cannot be saved",
                            ti->name);
        }
    }
    const wf_messages *m = w->messages;
    for (uint32_t i = 0; m && i < m->type_count; i++) {
        const wf_msg_stream *s = m->types[i];
        if (s->drop && (s->a.count || s->b.count)) {
            return wf_error(w, WEFT_ERR_INVALID_ARG,
                            "snapshot: message type '%s' has a drop callback and buffered "
                            "messages; their bytes cannot be saved",
                            s->name);
        }
    }
    return WEFT_OK;
}

void wf_snap_write_header(uint8_t *h, size_t payload, uint64_t checksum, uint32_t flags,
                          uint64_t since, uint64_t plain_len)
{
    memset(h, 0, WF_SNAP_HEADER);
    memcpy(h + WF_SNAP_OFF_PLAIN, &plain_len, 8);
    memcpy(h + WF_SNAP_OFF_FLAGS, &flags, 4);
    memcpy(h + WF_SNAP_OFF_SINCE, &since, 8);
    memcpy(h, WF_SNAP_MAGIC, 8);
    uint32_t v = WEFT_SNAPSHOT_VERSION;
    memcpy(h + WF_SNAP_OFF_VERSION, &v, 4);
    v = WF_SNAP_BOM;
    memcpy(h + WF_SNAP_OFF_BOM, &v, 4);
    v = WF_SNAP_HEADER;
    memcpy(h + WF_SNAP_OFF_HSIZE, &v, 4);
    uint64_t len = payload;
    memcpy(h + WF_SNAP_OFF_PAYLOAD, &len, 8);
    memcpy(h + WF_SNAP_OFF_CHECKSUM, &checksum, 8);
}

/* Full snapshot (delta false) or delta since `since`, compressed when
 * `zstd` is true. */
static weft_status snapshot_write(weft_world *w, bool delta, uint32_t since, bool zstd,
                                  int level, void *buf, size_t cap, size_t *out_len)
{
    weft_status st = snapshot_check(w);
    if (st != WEFT_OK) {
        return st;
    }
    if (zstd && !wf_zstd_available()) {
        return wf_error(w, WEFT_ERR_UNSUPPORTED, "snapshot: compression asked for, but this "
                        "build of weft has no zstd (WEFT_ZSTD)");
    }
    wf_sw o;
    memset(&o, 0, sizeof o);
    o.delta = delta;
    o.since = since;
    /* a tick clamp since `since` rewrote old ticks: every row counts */
    o.all = delta && !wf_tick_after(since, w->last_check_tick, w->change_tick);
    /* nothing structural since `since` and the journal saw every write:
     * only the journaled rows are visited (world/journal.h) */
    o.patch = delta && !o.all && wf_journal_covers(w, since, w->change_tick);
    if (o.patch) {
        wf_journal_sort(w);
        o.jl = w->journal.items;
        o.jn = w->journal.count;
    }
    write_all(w, &o);
    size_t payload = o.len;
    uint32_t flags = delta ? WF_SNAP_FLAG_DELTA : 0u;
    if (o.patch) {
        flags |= WF_SNAP_FLAG_PATCH;
    }
    size_t total = WF_SNAP_HEADER + payload;
    if (zstd) {
        size_t bound = wf_zstd_bound(payload);
        if (bound == 0 || bound > SIZE_MAX - WF_SNAP_HEADER) {
            return wf_error(w, WEFT_ERR_CAPACITY, "snapshot: %zu bytes are too many to "
                            "compress", payload);
        }
        total = WF_SNAP_HEADER + bound;
        flags |= WF_SNAP_FLAG_ZSTD;
    }
    *out_len = total;
    if (!buf) {
        return WEFT_ERR_CAPACITY;
    }
    if (cap < total) {
        return wf_error(w, WEFT_ERR_CAPACITY, "snapshot: needs %zu bytes, the buffer has %zu",
                        total, cap);
    }
    uint8_t *b = buf;
    if (!zstd) {
        wf_snap_write_header(b, payload, 0, flags, delta ? since : 0u, 0);
        XXH3_64bits_reset(&o.hs);
        XXH3_64bits_update(&o.hs, b, WF_SNAP_HEADER);
        o.buf = b + WF_SNAP_HEADER;
        o.len = 0;
        write_all(w, &o);
        uint64_t sum = XXH3_64bits_digest(&o.hs);
        memcpy(b + WF_SNAP_OFF_CHECKSUM, &sum, 8);
        return WEFT_OK;
    }
    /* the plain payload into scratch, compressed into the caller's buffer */
    uint8_t *plain = wf_alloc(&w->alloc, payload ? payload : 1, 16);
    if (!plain) {
        *out_len = 0;
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "snapshot: out of memory for the %zu "
                        "bytes to compress", payload);
    }
    XXH3_64bits_reset(&o.hs);
    o.buf = plain;
    o.len = 0;
    write_all(w, &o);
    size_t packed = 0;
    st = wf_zstd_compress(w, b + WF_SNAP_HEADER, cap - WF_SNAP_HEADER, plain, payload, level,
                          &packed);
    wf_free(&w->alloc, plain, payload ? payload : 1, 16);
    if (st != WEFT_OK) {
        *out_len = 0;
        return st;
    }
    wf_snap_write_header(b, packed, 0, flags, delta ? since : 0u, payload);
    XXH3_state_t hs;
    XXH3_64bits_reset(&hs);
    XXH3_64bits_update(&hs, b, WF_SNAP_HEADER + packed);
    uint64_t sum = XXH3_64bits_digest(&hs);
    memcpy(b + WF_SNAP_OFF_CHECKSUM, &sum, 8);
    *out_len = WF_SNAP_HEADER + packed;
    return WEFT_OK;
}

weft_status wf_snapshot_write(weft_world *w, void *buf, size_t cap, size_t *out_len)
{
    return snapshot_write(w, false, 0, false, 0, buf, cap, out_len);
}

weft_status wf_snapshot_delta_write(weft_world *w, uint32_t since, void *buf, size_t cap,
                                    size_t *out_len)
{
    return snapshot_write(w, true, since, false, 0, buf, cap, out_len);
}

weft_status wf_snapshot_write_ex(weft_world *w, bool delta, uint32_t since, bool zstd,
                                 int level, void *buf, size_t cap, size_t *out_len)
{
    return snapshot_write(w, delta, since, zstd, level, buf, cap, out_len);
}

/* src/reflect/snapshot.c - binary world snapshots: write and restore.
 * SPDX-License-Identifier: MIT
 *
 * Format (all integers in the writer's byte order, which the header's
 * byte-order mark lets a reader detect):
 *   header, 64 bytes: magic "WEFTSNAP", version, byte-order mark
 *   0x01020304, header size, flags (1 delta, 2 zstd), payload length,
 *   XXH3-64 checksum (over the header with this field zeroed, then the
 *   payload as stored), the delta's base tick, the plain payload length
 *   when the payload is compressed (else 0), then zeroes;
 *   payload: sections in a fixed order, each {u32 tag, u32 0, u64 length}
 *   followed by `length` bytes padded to 8:
 *     COMP  every registered component: id, size, align, storage, flags,
 *           relationship role, name (restore matches them by name)
 *     ENTS  entity index: count, free-stack length, retired count, the
 *           raw records {generation, archetype, row}, the free stack
 *     ARCH  every archetype's sorted component ids, in creation order
 *     TABL  every non-empty table: entities, then per column its values
 *           (relationship lists as counted entity arrays) and ticks
 *     SPRS  every non-empty sparse set: owners, values, ticks
 *     RESO  present resources: ticks and value
 *     MSGS  message streams (by name) and removal streams (by component)
 *     TICK  the change tick and the last tick-clamp tick
 *     QRYS  every query's last run with a signature of its terms
 *     SCHD  per schedule, per system: last run and message cursors; per
 *           condition its state; the frame accumulator
 * The writer runs its code twice, measuring then writing, so the caller
 * supplies the buffer and nothing is allocated; the checksum is computed
 * while writing, 64 KiB at a time, so each piece is hashed while cached.
 *
 * Restore validates the whole blob against itself and the target world
 * before changing anything (staging), then reserves every byte it needs
 * (archetypes, records, table rows, sparse pages, relationship lists,
 * resource and message blocks: the only failures, after which the world is
 * as it was but for capacity and archetypes), then commits, which cannot
 * fail. Table rows are appended in saved order, so every entity gets back
 * its row and queries iterate in the same order as in the saved world.
 */
#include "reflect/reflect.h"

#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

#include "core/hash.h"
#include "schedule/schedule.h"
#include "world/messages.h"
#include "world/relationship.h"

#define SNAP_HEADER 64u
#define SNAP_BOM 0x01020304u
#define SNAP_CHUNK 65536u
#define SNAP_SECTIONS 10u
#define SNAP_FLAG_DELTA 1u
#define SNAP_FLAG_ZSTD 2u
#define SNAP_FLAG_PATCH 4u  /* a delta written from the change journal */
#define SNAP_PATCH_WHOLE UINT32_MAX /* a patched column given whole */

static const char snap_magic[8] = {'W', 'E', 'F', 'T', 'S', 'N', 'A', 'P'};

enum {
    SEC_COMP = 1,
    SEC_ENTS,
    SEC_ARCH,
    SEC_TABL,
    SEC_SPRS,
    SEC_RESO,
    SEC_MSGS,
    SEC_TICK,
    SEC_QRYS,
    SEC_SCHD
};

/* Relationship role of a component (COMP section). */
enum { ROLE_PLAIN = 0, ROLE_REL_SOURCE = 1, ROLE_REL_LIST = 2 };

/* ==================================================================== */
/* ---- writer ---- */

typedef struct wr {
    uint8_t *buf;             /* NULL while measuring */
    size_t len;
    XXH3_state_t hs;
    uint64_t sec_len[SNAP_SECTIONS]; /* measured section lengths */
    uint32_t nsec;
    size_t sec_start;
    bool delta;               /* write only what changed since `since` */
    bool all;                 /* delta: every row counts as changed */
    bool patch;               /* delta from the journal (no structural change) */
    uint32_t since;
    const wf_jentry *jl;      /* patch: the sorted journal */
    uint32_t jn;
} wr;

static void put(wr *o, const void *src, size_t n)
{
    if (o->buf) {
        const uint8_t *s = src;
        while (n) {
            size_t k = n < SNAP_CHUNK ? n : SNAP_CHUNK;
            memcpy(o->buf + o->len, s, k);
            XXH3_64bits_update(&o->hs, o->buf + o->len, k);
            o->len += k;
            s += k;
            n -= k;
        }
    } else {
        o->len += n;
    }
}

static void put_u32(wr *o, uint32_t v)
{
    put(o, &v, 4);
}

static void put_u64(wr *o, uint64_t v)
{
    put(o, &v, 8);
}

static void put_zero(wr *o, size_t n)
{
    static const uint8_t zero[64];
    while (n) {
        size_t k = n < sizeof zero ? n : sizeof zero;
        put(o, zero, k);
        n -= k;
    }
}

static void put_pad(wr *o)
{
    static const uint8_t zero[8];
    size_t pad = (8 - (o->len & 7)) & 7;
    if (pad) {
        put(o, zero, pad);
    }
}

static void put_str(wr *o, const char *s, size_t len)
{
    put_u32(o, (uint32_t)len);
    put(o, s, len);
    put_pad(o);
}

static void sec_begin(wr *o, uint32_t tag)
{
    put_u32(o, tag);
    put_u32(o, 0);
    put_u64(o, o->buf ? o->sec_len[o->nsec] : 0);
    o->sec_start = o->len;
}

static void sec_end(wr *o)
{
    put_pad(o);
    if (!o->buf) {
        o->sec_len[o->nsec] = o->len - o->sec_start;
    }
    o->nsec++;
}

/* Values of rows [0, n) of column c (type ti): bytes, or for a
 * relationship list the counted entity arrays. */
static void put_values(wr *o, const wf_type_info *ti, const wf_column *c, uint32_t n)
{
    if (!ti->size || !n) {
        return;
    }
    if (ti->rel_source) {
        for (uint32_t r = 0; r < n; r++) {
            const wf_rel_list *l = (const wf_rel_list *)(const void *)wf_column_ptr(c, r);
            put_u32(o, (uint32_t)l->count);
            put_u32(o, 0);
            if (l->count > 0) {
                put(o, l->items, (size_t)l->count * sizeof(weft_entity));
            }
        }
        return;
    }
    put(o, c->data, (size_t)n * ti->size);
    put_pad(o);
}

static void put_ticks(wr *o, const wf_column *c, uint32_t n, uint32_t now)
{
    if (!c->ticks || !n) {
        return;
    }
    if (!c->bulk) {
        put(o, c->ticks, (size_t)n * sizeof(weft_ticks));
        return;
    }
    weft_ticks tmp[512];
    for (uint32_t r = 0; r < n;) {
        uint32_t k = n - r < 512u ? n - r : 512u;
        for (uint32_t i = 0; i < k; i++) {
            tmp[i] = wf_column_ticks(c, r + i, now);
        }
        put(o, tmp, (size_t)k * sizeof tmp[0]);
        r += k;
    }
}

/* Delta: did row r of column c change since o->since? Columns without
 * ticks and relationship lists are always written whole. */
static bool row_changed(const wr *o, const wf_column *c, uint32_t r, uint32_t now)
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
static void put_column(wr *o, const wf_column *c, uint32_t n, uint32_t now)
{
    if (!o->delta) {
        put_values(o, c->ti, c, n);
        put_ticks(o, c, n, now);
        return;
    }
    if (c->ti->rel_source) {
        for (uint32_t r0 = 0; r0 < n; r0 += 64) {
            put_u64(o, n - r0 >= 64 ? UINT64_MAX : (UINT64_C(1) << (n - r0)) - 1u);
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
        put_pad(o);
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
        put_u64(o, word);
    }
    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 0 && !c->size) || (pass == 1 && !c->ticks)) {
            if (pass == 0) {
                put_pad(o);
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
                put(o, c->data + (size_t)r * c->size, (size_t)(end - r) * c->size);
            } else if (!c->bulk) {
                put(o, c->ticks + r, (size_t)(end - r) * sizeof(weft_ticks));
            } else {
                for (uint32_t k = r; k < end; k++) {
                    weft_ticks t = wf_column_ticks(c, k, now);
                    put(o, &t, sizeof t);
                }
            }
            r = end;
        }
        if (pass == 0) {
            put_pad(o);
        }
    }
}

/* Patch delta: the journal's entries of column c, [*first, *end). */
static void journal_range(const wr *o, const wf_column *c, uint32_t *first, uint32_t *end)
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
static uint32_t patch_count(const wr *o, const wf_column *c, uint32_t n, uint32_t now)
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
 * (npatch SNAP_PATCH_WHOLE, their changes cannot be told), relationship
 * lists not at all (they change only structurally). */
static void put_patch_column(wr *o, const wf_column *c, uint32_t n, uint32_t now)
{
    if (c->ti->rel_source) {
        put_u32(o, 0);
        put_u32(o, 0);
        return;
    }
    if (!c->ticks) {
        put_u32(o, SNAP_PATCH_WHOLE);
        put_u32(o, 0);
        put_values(o, c->ti, c, n);
        return;
    }
    uint32_t k = patch_count(o, c, n, now);
    put_u32(o, k);
    put_u32(o, 0);
    if (!k) {
        return;
    }
    if (!o->buf) { /* measuring: the sizes follow from the count */
        put(o, NULL, (size_t)k * 4);
        put_pad(o);
        if (c->size) {
            put(o, NULL, (size_t)k * c->size);
            put_pad(o);
        }
        put(o, NULL, (size_t)k * sizeof(weft_ticks));
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
    for (size_t at = 0; at < total; at += SNAP_CHUNK) {
        size_t piece = total - at < SNAP_CHUNK ? total - at : SNAP_CHUNK;
        XXH3_64bits_update(&o->hs, rows + at, piece);
    }
    o->len += total;
}

static void put_stream(wr *o, const wf_msg_stream *s)
{
    put_u64(o, s->size);
    put_u64(o, s->a.first);
    put_u32(o, s->a.count);
    put_u32(o, s->b.count);
    if (s->a.count) {
        put(o, s->a.data, (size_t)s->a.count * s->size);
    }
    if (s->b.count) {
        put(o, s->b.data, (size_t)s->b.count * s->size);
    }
    put_pad(o);
}

/* Signature of a query's terms, independent of component ids. */
static uint64_t query_sig(const weft_world *w, const weft_query *q)
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

static uint32_t count_sys_nodes(const weft_schedule *s)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nnodes; i++) {
        n += s->nodes[i].sys ? 1u : 0u;
    }
    return n;
}

static uint32_t count_conds(const weft_schedule *s)
{
    uint32_t n = 0;
    for (const weft_condition *c = s->conds; c; c = c->next) {
        n++;
    }
    return n;
}

static void write_all(weft_world *w, wr *o)
{
    const wf_registry *reg = &w->registry;
    const wf_entity_index *ix = &w->entities;
    const wf_graph *g = &w->graph;
    uint32_t now = w->change_tick;
    o->nsec = 0;

    sec_begin(o, SEC_COMP);
    put_u32(o, reg->count);
    put_u32(o, 0);
    for (uint32_t id = 1; id <= reg->count; id++) {
        const wf_type_info *ti = reg->infos[id];
        uint32_t role = ti->rel_source ? ROLE_REL_LIST
                                       : (ti->rel_targets ? ROLE_REL_SOURCE : ROLE_PLAIN);
        put_u32(o, id);
        put_u32(o, ti->size);
        put_u32(o, ti->align);
        put_u32(o, (uint32_t)ti->storage);
        put_u32(o, ti->flags);
        put_u32(o, role);
        put_str(o, ti->name, ti->name_len);
    }
    sec_end(o);

    sec_begin(o, SEC_ENTS);
    put_u32(o, ix->count);
    put_u32(o, ix->free_len);
    put_u32(o, ix->retired);
    put_u32(o, 0);
    if (o->patch) { /* unchanged since the base: the counts check the match */
        sec_end(o);
        goto arch;
    }
    put(o, ix->records, (size_t)ix->count * sizeof(wf_record));
    put_pad(o);
    put(o, ix->free_stack, (size_t)ix->free_len * sizeof(uint32_t));
    sec_end(o);

arch:
    sec_begin(o, SEC_ARCH);
    put_u32(o, g->arch_count);
    put_u32(o, 0);
    for (uint32_t a = 0; a < g->arch_count; a++) {
        const wf_archetype *arch = g->archetypes[a];
        put_u32(o, arch->id_count);
        put(o, arch->ids, (size_t)arch->id_count * sizeof(weft_component));
    }
    sec_end(o);

    sec_begin(o, SEC_TABL);
    uint32_t ntables = 0;
    for (uint32_t t = 0; t < g->table_count; t++) {
        ntables += g->tables[t]->count ? 1u : 0u;
    }
    put_u32(o, ntables);
    put_u32(o, 0);
    for (uint32_t t = 0; t < g->table_count; t++) {
        const wf_table *tb = g->tables[t];
        if (!tb->count) {
            continue;
        }
        put_u32(o, tb->count);
        put_u32(o, tb->col_count);
        if (!o->patch) {
            put(o, tb->entities, (size_t)tb->count * sizeof(weft_entity));
        }
        for (uint32_t i = 0; i < tb->col_count; i++) {
            const wf_column *c = &tb->cols[i];
            put_u32(o, c->id);
            put_u32(o, c->ticks ? 1u : 0u);
            if (o->patch) {
                put_patch_column(o, c, tb->count, now);
            } else {
                put_column(o, c, tb->count, now);
            }
        }
    }
    sec_end(o);

    sec_begin(o, SEC_SPRS);
    uint32_t nsparse = 0;
    for (uint32_t id = 1; id <= reg->count; id++) {
        const wf_sparse_set *s = reg->infos[id]->sparse;
        nsparse += (s && s->count) ? 1u : 0u;
    }
    put_u32(o, nsparse);
    put_u32(o, 0);
    for (uint32_t id = 1; id <= reg->count; id++) {
        const wf_type_info *ti = reg->infos[id];
        const wf_sparse_set *s = ti->sparse;
        if (!s || !s->count) {
            continue;
        }
        put_u32(o, id);
        put_u32(o, s->count);
        if (o->patch) {
            put_patch_column(o, &s->dense, s->count, now);
            continue;
        }
        put(o, s->owners, (size_t)s->count * sizeof(weft_entity));
        put_column(o, &s->dense, s->count, now);
    }
    sec_end(o);

    sec_begin(o, SEC_RESO);
    put_u32(o, (uint32_t)reg->resources);
    put_u32(o, 0);
    for (uint32_t id = 1; id <= reg->count; id++) {
        const wf_type_info *ti = reg->infos[id];
        if (!ti->res_present) {
            continue;
        }
        /* a delta leaves out unchanged values: flag 1 = take the base's */
        bool keep = o->delta && !o->all && !o->patch &&
                    wf_tick_after(o->since, ti->res_ticks.changed, now) &&
                    wf_tick_after(o->since, ti->res_ticks.added, now);
        put_u32(o, id);
        put_u32(o, keep ? 1u : 0u);
        if (keep) {
            continue;
        }
        put(o, &ti->res_ticks, sizeof ti->res_ticks);
        if (ti->size && ti->save_zeroed) {
            put_zero(o, ti->size); /* pointers would dangle once restored */
            put_pad(o);
        } else if (ti->size) {
            put(o, ti->res_value, ti->size);
            put_pad(o);
        }
    }
    sec_end(o);

    sec_begin(o, SEC_MSGS);
    const wf_messages *m = w->messages;
    put_u32(o, m ? m->type_count : 0u);
    put_u32(o, m ? m->removed_count : 0u);
    for (uint32_t i = 0; m && i < m->type_count; i++) {
        put_str(o, m->types[i]->name, m->types[i]->name_len);
        put_stream(o, m->types[i]);
    }
    for (uint32_t i = 0; m && i < m->removed_count; i++) {
        put_u32(o, m->removed[i]->component);
        put_u32(o, 0);
        put_stream(o, m->removed[i]);
    }
    sec_end(o);

    sec_begin(o, SEC_TICK);
    put_u32(o, w->change_tick);
    put_u32(o, w->last_check_tick);
    sec_end(o);

    sec_begin(o, SEC_QRYS);
    uint32_t nq = 0;
    for (const weft_query *q = w->queries; q; q = q->next) {
        nq++;
    }
    put_u32(o, nq);
    put_u32(o, 0);
    for (const weft_query *q = w->queries; q; q = q->next) {
        put_u32(o, q->last_run);
        put_u32(o, q->term_count);
        put_u64(o, query_sig(w, q));
    }
    sec_end(o);

    sec_begin(o, SEC_SCHD);
    const wf_sys_world *sw = w->sys;
    uint32_t nsched = 0;
    for (const weft_schedule *s = sw ? sw->schedules : NULL; s; s = s->next) {
        nsched++;
    }
    put_u32(o, nsched);
    put_u32(o, 0);
    double acc = sw ? sw->acc : 0.0;
    put(o, &acc, sizeof acc);
    for (const weft_schedule *s = sw ? sw->schedules : NULL; s; s = s->next) {
        put_str(o, s->name, strlen(s->name));
        put_u32(o, count_sys_nodes(s));
        put_u32(o, count_conds(s));
        for (uint32_t i = 0; i < s->nnodes; i++) {
            const wf_system *sys = s->nodes[i].sys;
            if (!sys) {
                continue;
            }
            put_str(o, sys->name, sys->name_len);
            put_u32(o, sys->last_run);
            put_u32(o, (uint32_t)sys->nmsgs);
            put_u32(o, (uint32_t)sys->nremoved);
            put_u32(o, 0);
            put(o, sys->cursors, (size_t)sys->nmsgs * sizeof(weft_message_cursor));
            put(o, sys->rcursors, (size_t)sys->nremoved * sizeof(weft_message_cursor));
        }
        for (const weft_condition *c = s->conds; c; c = c->next) {
            put_u32(o, c->kind);
            put_u32(o, c->fired ? 1u : 0u);
            put_u32(o, c->last_run);
            put_u32(o, c->sys ? c->sys->last_run : 0u);
            put(o, &c->cursor, sizeof c->cursor);
        }
    }
    sec_end(o);
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

static void write_header(uint8_t *h, size_t payload, uint64_t checksum, uint32_t flags,
                         uint64_t since, uint64_t plain_len)
{
    memset(h, 0, SNAP_HEADER);
    memcpy(h + 48, &plain_len, 8);
    memcpy(h + 20, &flags, 4);
    memcpy(h + 40, &since, 8);
    memcpy(h, snap_magic, 8);
    uint32_t v = WEFT_SNAPSHOT_VERSION;
    memcpy(h + 8, &v, 4);
    v = SNAP_BOM;
    memcpy(h + 12, &v, 4);
    v = SNAP_HEADER;
    memcpy(h + 16, &v, 4);
    uint64_t len = payload;
    memcpy(h + 24, &len, 8);
    memcpy(h + 32, &checksum, 8);
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
    wr o;
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
    uint32_t flags = delta ? SNAP_FLAG_DELTA : 0u;
    if (o.patch) {
        flags |= SNAP_FLAG_PATCH;
    }
    size_t total = SNAP_HEADER + payload;
    if (zstd) {
        size_t bound = wf_zstd_bound(payload);
        if (bound == 0 || bound > SIZE_MAX - SNAP_HEADER) {
            return wf_error(w, WEFT_ERR_CAPACITY, "snapshot: %zu bytes are too many to "
                            "compress", payload);
        }
        total = SNAP_HEADER + bound;
        flags |= SNAP_FLAG_ZSTD;
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
        write_header(b, payload, 0, flags, delta ? since : 0u, 0);
        XXH3_64bits_reset(&o.hs);
        XXH3_64bits_update(&o.hs, b, SNAP_HEADER);
        o.buf = b + SNAP_HEADER;
        o.len = 0;
        write_all(w, &o);
        uint64_t sum = XXH3_64bits_digest(&o.hs);
        memcpy(b + 32, &sum, 8);
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
    st = wf_zstd_compress(w, b + SNAP_HEADER, cap - SNAP_HEADER, plain, payload, level,
                          &packed);
    wf_free(&w->alloc, plain, payload ? payload : 1, 16);
    if (st != WEFT_OK) {
        *out_len = 0;
        return st;
    }
    write_header(b, packed, 0, flags, delta ? since : 0u, payload);
    XXH3_state_t hs;
    XXH3_64bits_reset(&hs);
    XXH3_64bits_update(&hs, b, SNAP_HEADER + packed);
    uint64_t sum = XXH3_64bits_digest(&hs);
    memcpy(b + 32, &sum, 8);
    *out_len = SNAP_HEADER + packed;
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

/* ==================================================================== */
/* ---- reader ---- */

typedef struct rd {
    const uint8_t *p;
    size_t len;
    size_t pos;
} rd;

static const uint8_t *rd_take(rd *r, size_t n)
{
    if (n > r->len - r->pos) {
        return NULL;
    }
    const uint8_t *p = r->p + r->pos;
    r->pos += n;
    return p;
}

static bool rd_u32(rd *r, uint32_t *v)
{
    const uint8_t *p = rd_take(r, 4);
    if (p) {
        memcpy(v, p, 4);
    }
    return p != NULL;
}

static bool rd_u64(rd *r, uint64_t *v)
{
    const uint8_t *p = rd_take(r, 8);
    if (p) {
        memcpy(v, p, 8);
    }
    return p != NULL;
}

static bool rd_pad(rd *r)
{
    size_t pad = (8 - (r->pos & 7)) & 7;
    return rd_take(r, pad) != NULL;
}

/* Bytes of n elements of `size`, NULL when they do not fit. */
static const uint8_t *rd_array(rd *r, uint64_t n, uint64_t size)
{
    if (size && n > (r->len - r->pos) / size) {
        return NULL;
    }
    return rd_take(r, (size_t)(n * size));
}

static bool rd_str(rd *r, const char **s, uint32_t *len)
{
    if (!rd_u32(r, len) || *len > 4096u) {
        return false;
    }
    *s = (const char *)rd_take(r, *len);
    return *s != NULL && rd_pad(r);
}

/* ---- restore staging ---- */

typedef struct st_comp {
    weft_component dst;       /* 0: not registered in the target */
    uint32_t size;
    uint32_t role;
    const char *name;
    uint32_t name_len;
} st_comp;

typedef struct st_col {
    const wf_type_info *ti;   /* target component */
    const uint8_t *vals;      /* values, or the first counted list */
    const uint8_t *ticks;     /* NULL without ticks */
} st_col;

typedef struct st_table {
    uint32_t rows;
    uint32_t ncols;
    const uint8_t *ents;      /* rows * 8 */
    wf_table *dst;            /* target table */
    uint32_t col0;            /* first column in restore.cols */
} st_table;

typedef struct st_sparse {
    wf_type_info *ti;
    uint32_t count;
    const uint8_t *owners;
    const uint8_t *vals;
    const uint8_t *ticks;
} st_sparse;

typedef struct st_res {
    wf_type_info *ti;
    weft_ticks ticks;
    const uint8_t *val;
    void *block;              /* reserved value block */
} st_res;

typedef struct st_stream {
    wf_msg_stream *dst;
    uint64_t first;
    uint32_t na, nb;
    const uint8_t *a, *b;
    void *block_a, *block_b;  /* reserved */
    wf_type_info *track;      /* removed stream to turn on, or NULL */
} st_stream;

typedef struct restore {
    weft_world *w;
    weft_status st;
    /* COMP */
    st_comp *comps;           /* [ncomps + 1] by saved id */
    uint32_t ncomps;
    /* ENTS */
    uint32_t count, free_len, retired;
    const uint8_t *records;   /* count * sizeof(wf_record) */
    const uint8_t *free_stack;
    uint8_t *state;           /* [count] 0 live-or-unknown, 1 free, 2 placed */
    int64_t live;
    /* ARCH */
    uint32_t narch;
    const uint8_t **arch_ids; /* [narch] saved id lists */
    uint32_t *arch_n;         /* [narch] */
    wf_archetype **arch_dst;  /* [narch] */
    uint32_t *arch_live;      /* [narch] live entities per saved archetype */
    weft_component *scratch;  /* [WF_MAX_COMPONENTS] sorted mapped ids */
    /* TABL, SPRS, RESO, MSGS */
    st_table *tables;
    uint32_t ntables;
    uint8_t *table_seen;      /* [ntable_seen] target table already used */
    uint32_t ntable_seen;
    st_col *cols;             /* [ncols capacity] columns of every table */
    uint32_t ncols;
    st_sparse *sparse;
    uint32_t nsparse;
    st_res *res;
    uint32_t nres;
    st_stream *streams;
    uint32_t nstreams;
    void **lists;             /* reserved relationship item arrays */
    uint32_t *list_cap;       /* their capacities */
    uint32_t nlists;
    /* TICK */
    uint32_t change_tick, last_check_tick;
    /* QRYS, SCHD */
    rd queries;
    bool apply_queries;
    rd scheds;
    bool apply_scheds;
    double acc;
} restore;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static bool bad(restore *r, weft_status st, const char *fmt, ...);

static bool bad(restore *r, weft_status st, const char *fmt, ...)
{
    char msg[WF_ERROR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->st = st;
    wf_error(r->w, st, "snapshot: %s", msg);
    return false;
}

#define TRUNC(r, what) bad((r), WEFT_ERR_BAD_FORMAT, "truncated or inconsistent %s", (what))

static void *scratch(restore *r, size_t n, size_t size)
{
    if (!n) {
        return NULL;
    }
    void *p = wf_calloc(&r->w->alloc, n * size, 16);
    if (!p) {
        bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory staging the snapshot");
    }
    return p;
}

static void scratch_free(restore *r, void *p, size_t n, size_t size)
{
    if (p) {
        wf_free(&r->w->alloc, p, n * size, 16);
    }
}

static bool section(restore *r, rd *in, uint32_t tag, rd *out)
{
    uint32_t t;
    uint32_t zero;
    uint64_t len;
    if (!rd_u32(in, &t) || !rd_u32(in, &zero) || !rd_u64(in, &len)) {
        return TRUNC(r, "section header");
    }
    if (t != tag || zero != 0) {
        return bad(r, WEFT_ERR_BAD_FORMAT, "expected section %u, found %u", tag, t);
    }
    const uint8_t *p = rd_take(in, len > SIZE_MAX ? SIZE_MAX : (size_t)len);
    if (!p || (len & 7)) {
        return bad(r, WEFT_ERR_BAD_FORMAT, "section %u of %llu bytes overruns the payload",
                   tag, (unsigned long long)len);
    }
    out->p = p;
    out->len = (size_t)len;
    out->pos = 0;
    return true;
}

static bool section_done(restore *r, rd *s, uint32_t tag)
{
    if (s->len - s->pos >= 8) {
        return bad(r, WEFT_ERR_BAD_FORMAT, "section %u has %zu unread bytes", tag,
                   s->len - s->pos);
    }
    return true;
}

/* Saved component id -> target type, or NULL with the error recorded. */
static wf_type_info *comp_of(restore *r, uint32_t id)
{
    if (id == 0 || id > r->ncomps) {
        bad(r, WEFT_ERR_BAD_FORMAT, "component id %u is not in the component table", id);
        return NULL;
    }
    if (!r->comps[id].dst) {
        bad(r, WEFT_ERR_UNKNOWN_COMPONENT,
            "component '%.*s' is not registered in this world (register it, and call "
            "weft_child_of for the built-in hierarchy, before restoring)",
            (int)r->comps[id].name_len, r->comps[id].name);
        return NULL;
    }
    return wf_registry_get(&r->w->registry, r->comps[id].dst);
}

static bool parse_comps(restore *r, rd *s)
{
    uint32_t n;
    uint32_t zero;
    if (!rd_u32(s, &n) || !rd_u32(s, &zero) || n > WF_MAX_COMPONENTS || n > s->len / 32) {
        return TRUNC(r, "component table");
    }
    r->ncomps = n;
    r->comps = scratch(r, (size_t)n + 1, sizeof *r->comps);
    if (!r->comps) {
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t f[6];
        const char *name;
        uint32_t len;
        for (int k = 0; k < 6; k++) {
            if (!rd_u32(s, &f[k])) {
                return TRUNC(r, "component table");
            }
        }
        if (!rd_str(s, &name, &len) || f[0] != i + 1) {
            return TRUNC(r, "component table");
        }
        char buf[WF_ERROR_LEN];
        if (len == 0 || len >= sizeof buf) {
            return bad(r, WEFT_ERR_BAD_FORMAT, "component %u has a bad name length %u", f[0],
                       len);
        }
        memcpy(buf, name, len);
        buf[len] = '\0';
        st_comp *c = &r->comps[f[0]];
        c->name = name;
        c->name_len = len;
        c->size = f[1];
        c->role = f[5];
        weft_component dst = wf_registry_lookup(&r->w->registry, buf);
        if (!dst) {
            /* as weft.h promises, and as for message types: whether or not
             * a value of it was saved */
            return bad(r, WEFT_ERR_UNKNOWN_COMPONENT,
                       "snapshot: component '%s' is not registered in this world (register "
                       "it, and call weft_child_of for the built-in hierarchy, before "
                       "restoring)",
                       buf);
        }
        const wf_type_info *ti = wf_registry_get(&r->w->registry, dst);
        uint32_t role = ti->rel_source ? ROLE_REL_LIST
                                       : (ti->rel_targets ? ROLE_REL_SOURCE : ROLE_PLAIN);
        if (ti->size != f[1] || ti->align != f[2]) {
            return bad(r, WEFT_ERR_SIZE_MISMATCH,
                       "component '%s' is %u bytes aligned to %u here, %u aligned to %u in "
                       "the snapshot",
                       buf, ti->size, ti->align, f[1], f[2]);
        }
        if ((uint32_t)ti->storage != f[3] || role != f[5] ||
            (ti->flags & WEFT_COMPONENT_NO_CHANGE_TICKS) !=
                (f[4] & WEFT_COMPONENT_NO_CHANGE_TICKS)) {
            return bad(r, WEFT_ERR_BAD_FORMAT,
                       "component '%s' differs in storage, change ticks or relationship "
                       "role from the snapshot's",
                       buf);
        }
        c->dst = dst;
    }
    return section_done(r, s, SEC_COMP);
}

static bool parse_ents(restore *r, rd *s)
{
    uint32_t zero;
    if (!rd_u32(s, &r->count) || !rd_u32(s, &r->free_len) || !rd_u32(s, &r->retired) ||
        !rd_u32(s, &zero) || r->count > WF_MAX_ENTITIES || r->free_len > r->count ||
        r->retired > r->count) {
        return TRUNC(r, "entity index");
    }
    r->records = rd_array(s, r->count, sizeof(wf_record));
    if (!r->records || !rd_pad(s)) {
        return TRUNC(r, "entity records");
    }
    r->free_stack = rd_array(s, r->free_len, sizeof(uint32_t));
    if (!r->free_stack || !rd_pad(s)) {
        return TRUNC(r, "free stack");
    }
    r->state = scratch(r, r->count, 1);
    if (r->count && !r->state) {
        return false;
    }
    for (uint32_t k = 0; k < r->free_len; k++) {
        uint32_t idx;
        memcpy(&idx, r->free_stack + (size_t)k * 4, 4);
        if (idx >= r->count || r->state[idx]) {
            return bad(r, WEFT_ERR_BAD_FORMAT, "free-stack entry %u (index %u) is invalid", k,
                       idx);
        }
        r->state[idx] = 1;
    }
    uint32_t dead_off_stack = 0;
    for (uint32_t i = 0; i < r->count; i++) {
        wf_record rec;
        memcpy(&rec, r->records + (size_t)i * sizeof rec, sizeof rec);
        if (rec.gen == 0 || rec.gen > WF_GENERATION_MAX) {
            return bad(r, WEFT_ERR_BAD_FORMAT,
                       "entity index %u has generation %u (live generations are 1 .. %u)", i,
                       rec.gen, WF_GENERATION_MAX);
        }
        if (rec.arch == WF_ARCH_DEAD) {
            dead_off_stack += r->state[i] ? 0u : 1u;
            continue;
        }
        if (r->state[i]) {
            return bad(r, WEFT_ERR_BAD_FORMAT, "live entity index %u is on the free stack", i);
        }
        r->live++;
    }
    if (dead_off_stack != r->retired) {
        return bad(r, WEFT_ERR_BAD_FORMAT, "%u dead indices are off the free stack, %u retired",
                   dead_off_stack, r->retired);
    }
    return section_done(r, s, SEC_ENTS);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a;
    uint32_t y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static bool parse_arch(restore *r, rd *s)
{
    uint32_t zero;
    if (!rd_u32(s, &r->narch) || !rd_u32(s, &zero) || r->narch == 0 ||
        r->narch > s->len / 4) {
        return TRUNC(r, "archetype list");
    }
    r->arch_ids = scratch(r, r->narch, sizeof *r->arch_ids);
    r->arch_n = scratch(r, r->narch, sizeof *r->arch_n);
    r->arch_dst = scratch(r, r->narch, sizeof *r->arch_dst);
    if (!r->arch_ids || !r->arch_n || !r->arch_dst) {
        return false;
    }
    for (uint32_t a = 0; a < r->narch; a++) {
        uint32_t n;
        if (!rd_u32(s, &n) || n > r->ncomps) {
            return TRUNC(r, "archetype list");
        }
        const uint8_t *ids = rd_array(s, n, 4);
        if (!ids) {
            return TRUNC(r, "archetype list");
        }
        if (a == 0 && n != 0) {
            return bad(r, WEFT_ERR_BAD_FORMAT, "archetype 0 is not the empty set");
        }
        uint32_t prev = 0;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t id;
            memcpy(&id, ids + (size_t)k * 4, 4);
            if (id <= prev) {
                return bad(r, WEFT_ERR_BAD_FORMAT, "archetype %u ids are not sorted", a);
            }
            prev = id;
        }
        r->arch_ids[a] = ids;
        r->arch_n[a] = n;
    }
    if (!rd_pad(s)) {
        return TRUNC(r, "archetype list");
    }
    return section_done(r, s, SEC_ARCH);
}

/* Does saved archetype a hold saved component id c? */
static bool arch_has(const restore *r, uint32_t a, uint32_t c)
{
    uint32_t lo = 0;
    uint32_t hi = r->arch_n[a];
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        uint32_t id;
        memcpy(&id, r->arch_ids[a] + (size_t)mid * 4, 4);
        if (id == c) {
            return true;
        }
        if (id < c) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return false;
}

static wf_record rec_at(const restore *r, uint32_t idx)
{
    wf_record rec;
    memcpy(&rec, r->records + (size_t)idx * sizeof rec, sizeof rec);
    return rec;
}

/* Checks entity e is live in the saved index; returns its record. */
static bool live_entity(restore *r, uint64_t e, wf_record *out, const char *what)
{
    uint32_t idx = (uint32_t)e;
    if (idx >= r->count) {
        return bad(r, WEFT_ERR_BAD_FORMAT, "%s: entity index %u is out of range", what, idx);
    }
    wf_record rec = rec_at(r, idx);
    if (rec.arch == WF_ARCH_DEAD || rec.gen != (uint32_t)(e >> 32)) {
        return bad(r, WEFT_ERR_BAD_FORMAT, "%s: entity %u:%u is not live", what, idx,
                   (uint32_t)(e >> 32));
    }
    if (rec.arch >= r->narch) {
        return bad(r, WEFT_ERR_BAD_FORMAT, "entity %u names archetype %u of %u", idx, rec.arch,
                   r->narch);
    }
    *out = rec;
    return true;
}

/* Reads the values of n rows of a saved column of type ti: checks their
 * length (and, for relationship lists, their entities); *out points at
 * the first. */
static bool column_values(restore *r, rd *s, const wf_type_info *ti, uint32_t n,
                          const uint8_t **out)
{
    *out = s->p + s->pos;
    if (!ti->size || !n) {
        return true;
    }
    if (!ti->rel_source) {
        if (!rd_array(s, n, ti->size) || !rd_pad(s)) {
            return TRUNC(r, "column values");
        }
        return true;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t cnt;
        uint32_t zero;
        if (!rd_u32(s, &cnt) || !rd_u32(s, &zero) || cnt > INT32_MAX) {
            return TRUNC(r, "relationship list");
        }
        const uint8_t *items = rd_array(s, cnt, 8);
        if (!items) {
            return TRUNC(r, "relationship list");
        }
        for (uint32_t i = 0; i < cnt; i++) {
            uint64_t e;
            wf_record rec;
            memcpy(&e, items + (size_t)i * 8, 8);
            if (!live_entity(r, e, &rec, "relationship list")) {
                return false;
            }
        }
        r->nlists += cnt ? 1u : 0u;
    }
    return true;
}

static bool column_ticks(restore *r, rd *s, uint32_t has, const wf_type_info *ti, uint32_t n,
                         const uint8_t **out)
{
    bool want = ti->has_ticks;
    if ((has != 0) != want) {
        return bad(r, WEFT_ERR_BAD_FORMAT, "column '%s' change ticks do not match", ti->name);
    }
    *out = NULL;
    if (want && n) {
        *out = rd_array(s, n, sizeof(weft_ticks));
        if (!*out) {
            return TRUNC(r, "column ticks");
        }
    }
    return true;
}

/* Archetypes: map each saved set, then (in creation order) find or create
 * it in the target. Creation is the one change this makes before commit
 * (as any failed structural call may leave an archetype behind). */
static bool ensure_archetypes(restore *r)
{
    weft_world *w = r->w;
    for (uint32_t a = 0; a < r->narch; a++) {
        uint32_t n = r->arch_n[a];
        for (uint32_t k = 0; k < n; k++) {
            uint32_t id;
            memcpy(&id, r->arch_ids[a] + (size_t)k * 4, 4);
            const wf_type_info *ti = comp_of(r, id);
            if (!ti) {
                return false;
            }
            r->scratch[k] = ti->id;
        }
        qsort(r->scratch, n, sizeof *r->scratch, cmp_u32);
        wf_archetype *arch = wf_graph_ensure(&w->graph, &w->alloc, &w->registry, r->scratch, n);
        if (!arch) {
            return bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory creating archetypes");
        }
        r->arch_dst[a] = arch;
    }
    return true;
}

static bool parse_tables(restore *r, rd *s)
{
    uint32_t zero;
    if (!rd_u32(s, &r->ntables) || !rd_u32(s, &zero) || r->ntables > s->len / 16) {
        return TRUNC(r, "table list");
    }
    r->tables = scratch(r, r->ntables, sizeof *r->tables);
    r->ntable_seen = r->w->graph.table_count;
    r->table_seen = scratch(r, r->ntable_seen, 1);
    r->arch_live = scratch(r, r->narch, sizeof *r->arch_live);
    if ((r->ntables && !r->tables) || !r->table_seen || !r->arch_live) {
        return false;
    }
    uint32_t col_used = 0;
    int64_t placed = 0;
    for (uint32_t t = 0; t < r->ntables; t++) {
        st_table *tb = &r->tables[t];
        if (!rd_u32(s, &tb->rows) || !rd_u32(s, &tb->ncols) || tb->rows == 0 ||
            tb->ncols > r->ncomps || tb->ncols > (s->len - s->pos) / 8) {
            return TRUNC(r, "table header");
        }
        tb->ents = rd_array(s, tb->rows, 8);
        if (!tb->ents) {
            return TRUNC(r, "table entities");
        }
        if (col_used + tb->ncols > r->ncols) {
            void *data = r->cols;
            uint32_t old = r->ncols;
            if (!wf_grow(&r->w->alloc, &data, &r->ncols, col_used + tb->ncols, sizeof *r->cols,
                         16)) {
                return bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory staging the snapshot");
            }
            r->cols = data;
            (void)old;
        }
        tb->col0 = col_used;
        col_used += tb->ncols;
        /* every row's entity is live, has this row, and an archetype whose
         * table is this one */
        wf_table *dst = NULL;
        for (uint32_t row = 0; row < tb->rows; row++) {
            uint64_t e;
            wf_record rec;
            memcpy(&e, tb->ents + (size_t)row * 8, 8);
            if (!live_entity(r, e, &rec, "table row")) {
                return false;
            }
            if (rec.row != row || r->state[(uint32_t)e] == 2) {
                return bad(r, WEFT_ERR_BAD_FORMAT,
                           "entity %u is listed at table row %u but its record says row %u",
                           (uint32_t)e, row, rec.row);
            }
            r->state[(uint32_t)e] = 2;
            r->arch_live[rec.arch]++;
            wf_table *at = r->arch_dst[rec.arch]->table;
            if (dst && at != dst) {
                return bad(r, WEFT_ERR_BAD_FORMAT, "table %u mixes entities of other tables",
                           t);
            }
            dst = at;
        }
        if (r->table_seen[dst->id]) {
            return bad(r, WEFT_ERR_BAD_FORMAT, "two saved tables map to one table");
        }
        r->table_seen[dst->id] = 1;
        tb->dst = dst;
        placed += tb->rows;
        if (tb->ncols != dst->col_count) {
            return bad(r, WEFT_ERR_BAD_FORMAT, "table %u has %u columns, its archetype %u", t,
                       tb->ncols, dst->col_count);
        }
        for (uint32_t i = 0; i < tb->ncols; i++) {
            uint32_t id;
            uint32_t has;
            if (!rd_u32(s, &id) || !rd_u32(s, &has)) {
                return TRUNC(r, "column header");
            }
            const wf_type_info *ti = comp_of(r, id);
            if (!ti) {
                return false;
            }
            if (!wf_table_column(dst, ti->id)) {
                return bad(r, WEFT_ERR_BAD_FORMAT, "table %u has a column '%s' its archetype "
                           "lacks", t, ti->name);
            }
            for (uint32_t k = 0; k < i; k++) {
                if (r->cols[tb->col0 + k].ti == ti) {
                    return bad(r, WEFT_ERR_BAD_FORMAT, "table %u lists '%s' twice", t,
                               ti->name);
                }
            }
            st_col *c = &r->cols[tb->col0 + i];
            c->ti = ti;
            if (!column_values(r, s, ti, tb->rows, &c->vals) ||
                !column_ticks(r, s, has, ti, tb->rows, &c->ticks)) {
                return false;
            }
            for (uint32_t row = 0; ti->rel_targets && row < tb->rows; row++) {
                /* a relationship source names a live target holding the list */
                uint64_t target;
                wf_record rec;
                memcpy(&target, c->vals + (size_t)row * 8, 8);
                if (!live_entity(r, target, &rec, "relationship target")) {
                    return false;
                }
                if (!wf_archetype_has(r->arch_dst[rec.arch], ti->rel_targets)) {
                    return bad(r, WEFT_ERR_BAD_FORMAT,
                               "'%s' names entity %u, which holds no list of it", ti->name,
                               (uint32_t)target);
                }
            }
        }
    }
    if (placed != r->live) {
        return bad(r, WEFT_ERR_BAD_FORMAT, "tables hold %lld rows for %lld live entities",
                   (long long)placed, (long long)r->live);
    }
    return section_done(r, s, SEC_TABL);
}

static bool parse_sparse(restore *r, rd *s)
{
    uint32_t zero;
    if (!rd_u32(s, &r->nsparse) || !rd_u32(s, &zero) || r->nsparse > s->len / 16) {
        return TRUNC(r, "sparse list");
    }
    r->sparse = scratch(r, r->nsparse, sizeof *r->sparse);
    if (r->nsparse && !r->sparse) {
        return false;
    }
    for (uint32_t k = 0; k < r->nsparse; k++) {
        st_sparse *sp = &r->sparse[k];
        uint32_t id;
        if (!rd_u32(s, &id) || !rd_u32(s, &sp->count) || sp->count == 0) {
            return TRUNC(r, "sparse header");
        }
        wf_type_info *ti = comp_of(r, id);
        if (!ti) {
            return false;
        }
        if (ti->storage != WEFT_STORAGE_SPARSE) {
            return bad(r, WEFT_ERR_BAD_FORMAT, "'%s' is not a sparse component", ti->name);
        }
        for (uint32_t j = 0; j < k; j++) {
            if (r->sparse[j].ti == ti) {
                return bad(r, WEFT_ERR_BAD_FORMAT, "sparse set '%s' appears twice", ti->name);
            }
        }
        sp->ti = ti;
        sp->owners = rd_array(s, sp->count, 8);
        if (!sp->owners) {
            return TRUNC(r, "sparse owners");
        }
        /* each owner is live, holds the component, and is listed once;
         * state 3 + k marks "seen in set k" (state is a byte: reset after) */
        for (uint32_t d = 0; d < sp->count; d++) {
            uint64_t e;
            wf_record rec;
            memcpy(&e, sp->owners + (size_t)d * 8, 8);
            if (!live_entity(r, e, &rec, "sparse owner")) {
                return false;
            }
            if (!arch_has(r, rec.arch, id) || r->state[(uint32_t)e] == 3) {
                return bad(r, WEFT_ERR_BAD_FORMAT,
                           "sparse '%s' slot %u: entity %u lacks the component or is listed "
                           "twice",
                           ti->name, d, (uint32_t)e);
            }
            r->state[(uint32_t)e] = 3;
        }
        for (uint32_t d = 0; d < sp->count; d++) {
            uint64_t e;
            memcpy(&e, sp->owners + (size_t)d * 8, 8);
            r->state[(uint32_t)e] = 2;
        }
        uint64_t held = 0;
        for (uint32_t a = 0; a < r->narch; a++) {
            held += arch_has(r, a, id) ? r->arch_live[a] : 0u;
        }
        if (held != sp->count) {
            return bad(r, WEFT_ERR_BAD_FORMAT, "sparse '%s' holds %u values for %llu entities",
                       ti->name, sp->count, (unsigned long long)held);
        }
        if (!rd_pad(s) || !column_values(r, s, ti, sp->count, &sp->vals) ||
            !column_ticks(r, s, ti->has_ticks ? 1u : 0u, ti, sp->count, &sp->ticks)) {
            return false;
        }
    }
    /* every sparse component of a populated archetype has its set */
    for (uint32_t a = 0; a < r->narch; a++) {
        if (!r->arch_live[a]) {
            continue;
        }
        const wf_archetype *arch = r->arch_dst[a];
        for (uint32_t k = 0; k < arch->sparse_count; k++) {
            bool found = false;
            for (uint32_t j = 0; j < r->nsparse && !found; j++) {
                found = r->sparse[j].ti->id == arch->sparse_ids[k];
            }
            if (!found) {
                return bad(r, WEFT_ERR_BAD_FORMAT, "sparse '%s' has entities but no set",
                           wf_component_name(r->w, arch->sparse_ids[k]));
            }
        }
    }
    return section_done(r, s, SEC_SPRS);
}

/* ---- relationships: both sides agree, linked ones are acyclic ---- */

/* Adds the (source, target) pairs of relationship `rel` held by n rows
 * (entities at ents, values at vals) to tgt[] (target by source index). */
static void rel_pairs(const uint8_t *ents, const uint8_t *vals, uint32_t n, uint64_t *tgt)
{
    for (uint32_t k = 0; k < n; k++) {
        uint64_t e, t;
        memcpy(&e, ents + (size_t)k * 8, 8);
        memcpy(&t, vals + (size_t)k * 8, 8);
        tgt[(uint32_t)e] = t;
    }
}

/* Checks the target lists of relationship `rel` held by n rows (owners at
 * ents, counted lists from vals) against tgt[]; counts each item in seen[]. */
static bool rel_lists(restore *r, const wf_type_info *rel, const uint8_t *ents,
                      const uint8_t *vals, uint32_t n, const uint64_t *tgt, uint8_t *seen)
{
    const uint8_t *p = vals;
    for (uint32_t k = 0; k < n; k++) {
        uint64_t owner;
        uint32_t cnt;
        memcpy(&owner, ents + (size_t)k * 8, 8);
        memcpy(&cnt, p, 4);
        p += 8;
        for (uint32_t i = 0; i < cnt; i++, p += 8) {
            uint64_t x;
            memcpy(&x, p, 8);
            if (tgt[(uint32_t)x] != owner || seen[(uint32_t)x]) {
                return bad(r, WEFT_ERR_BAD_FORMAT,
                           "the '%s' list of entity %u names entity %u, which does not name "
                           "it back (or is listed twice)",
                           rel->name, (uint32_t)owner, (uint32_t)x);
            }
            seen[(uint32_t)x] = 1;
        }
    }
    return true;
}

/* Before anything changes: for every relationship, each source is listed
 * exactly once, by its target, and every list item names its owner; a
 * LINKED_DESPAWN relationship (ChildOf) has no cycle, so the despawn
 * cascade of the restored world ends. O(entities) per relationship. */
static bool check_rel_graph(restore *r)
{
    const wf_registry *reg = &r->w->registry;
    bool ok = true;
    uint64_t *tgt = NULL;
    uint8_t *seen = NULL;
    for (uint32_t id = 1; ok && id <= reg->count && r->count; id++) {
        const wf_type_info *rel = reg->infos[id];
        if (!rel->rel_targets) {
            continue;
        }
        if (!tgt) {
            tgt = scratch(r, r->count, sizeof *tgt);
            seen = scratch(r, r->count, 1);
            if (!tgt || !seen) {
                ok = false;
                break;
            }
        }
        memset(tgt, 0, (size_t)r->count * sizeof *tgt);
        memset(seen, 0, r->count);
        for (uint32_t t = 0; t < r->ntables; t++) {
            const st_table *tb = &r->tables[t];
            for (uint32_t i = 0; i < tb->ncols; i++) {
                if (r->cols[tb->col0 + i].ti == rel) {
                    rel_pairs(tb->ents, r->cols[tb->col0 + i].vals, tb->rows, tgt);
                }
            }
        }
        for (uint32_t k = 0; k < r->nsparse; k++) {
            if (r->sparse[k].ti == rel) {
                rel_pairs(r->sparse[k].owners, r->sparse[k].vals, r->sparse[k].count, tgt);
            }
        }
        const wf_type_info *list = reg->infos[rel->rel_targets];
        for (uint32_t t = 0; ok && t < r->ntables; t++) {
            const st_table *tb = &r->tables[t];
            for (uint32_t i = 0; ok && i < tb->ncols; i++) {
                if (r->cols[tb->col0 + i].ti == list) {
                    ok = rel_lists(r, rel, tb->ents, r->cols[tb->col0 + i].vals, tb->rows, tgt,
                                   seen);
                }
            }
        }
        for (uint32_t k = 0; ok && k < r->nsparse; k++) {
            if (r->sparse[k].ti == list) {
                ok = rel_lists(r, rel, r->sparse[k].owners, r->sparse[k].vals,
                               r->sparse[k].count, tgt, seen);
            }
        }
        for (uint32_t i = 0; ok && i < r->count; i++) {
            if (tgt[i] && !seen[i]) {
                ok = bad(r, WEFT_ERR_BAD_FORMAT,
                         "entity %u has '%s' naming entity %u, whose list does not name it", i,
                         rel->name, (uint32_t)tgt[i]);
            }
        }
        if (!ok || !(rel->rel_flags & WEFT_RELATIONSHIP_LINKED_DESPAWN)) {
            continue;
        }
        /* seen[] again as colours: 0 unseen, 1 on the current chain, 2 ends */
        memset(seen, 0, r->count);
        for (uint32_t i = 0; ok && i < r->count; i++) {
            uint32_t at = i;
            while (seen[at] == 0 && tgt[at]) {
                seen[at] = 1;
                at = (uint32_t)tgt[at];
            }
            if (seen[at] == 1) {
                ok = bad(r, WEFT_ERR_BAD_FORMAT, "'%s' forms a cycle through entity %u",
                         rel->name, at);
                break;
            }
            for (uint32_t k = i; seen[k] == 1; k = (uint32_t)tgt[k]) {
                seen[k] = 2;
            }
            seen[at] = 2;
        }
    }
    if (tgt) {
        scratch_free(r, tgt, r->count, sizeof *tgt);
    }
    if (seen) {
        scratch_free(r, seen, r->count, 1);
    }
    return ok;
}

static bool parse_res(restore *r, rd *s)
{
    uint32_t zero;
    if (!rd_u32(s, &r->nres) || !rd_u32(s, &zero) || r->nres > s->len / 16) {
        return TRUNC(r, "resource list");
    }
    r->res = scratch(r, r->nres, sizeof *r->res);
    if (r->nres && !r->res) {
        return false;
    }
    for (uint32_t k = 0; k < r->nres; k++) {
        st_res *x = &r->res[k];
        uint32_t id;
        const uint8_t *t;
        if (!rd_u32(s, &id) || !rd_u32(s, &zero) || !(t = rd_take(s, sizeof x->ticks))) {
            return TRUNC(r, "resource");
        }
        x->ti = comp_of(r, id);
        if (!x->ti) {
            return false;
        }
        if (x->ti->rel_source || x->ti->hooks.copy || x->ti->hooks.move || x->ti->hooks.dtor) {
            return bad(r, WEFT_ERR_BAD_FORMAT, "resource '%s' cannot be restored from bytes",
                       x->ti->name);
        }
        for (uint32_t j = 0; j < k; j++) {
            if (r->res[j].ti == x->ti) {
                return bad(r, WEFT_ERR_BAD_FORMAT, "resource '%s' appears twice", x->ti->name);
            }
        }
        memcpy(&x->ticks, t, sizeof x->ticks);
        if (x->ti->size) {
            x->val = rd_take(s, x->ti->size);
            if (!x->val || !rd_pad(s)) {
                return TRUNC(r, "resource value");
            }
            const char *why = x->ti->value_check ? x->ti->value_check(x->val, x->ti->check_user)
                                                 : NULL;
            if (why) {
                return bad(r, WEFT_ERR_BAD_FORMAT, "resource '%s': %s", x->ti->name, why);
            }
        }
    }
    return section_done(r, s, SEC_RESO);
}

static bool parse_stream(restore *r, rd *s, st_stream *x, size_t size, const char *what)
{
    uint64_t saved_size;
    if (!rd_u64(s, &saved_size) || !rd_u64(s, &x->first) || !rd_u32(s, &x->na) ||
        !rd_u32(s, &x->nb)) {
        return TRUNC(r, "message stream");
    }
    if (saved_size != size) {
        return bad(r, WEFT_ERR_SIZE_MISMATCH, "messages of '%s' are %llu bytes, here %zu",
                   what, (unsigned long long)saved_size, size);
    }
    if (x->first == 0 || x->first > UINT64_MAX / 2) {
        return bad(r, WEFT_ERR_BAD_FORMAT, "message stream '%s' starts at id %llu", what,
                   (unsigned long long)x->first);
    }
    x->a = rd_array(s, x->na, size);
    x->b = x->a ? rd_array(s, x->nb, size) : NULL;
    if (!x->a || !x->b || !rd_pad(s)) {
        return TRUNC(r, "message stream");
    }
    if (x->dst && (x->dst->a.count || x->dst->b.count)) {
        return bad(r, WEFT_ERR_WRONG_PHASE, "message stream '%s' of this world is not empty",
                   what);
    }
    return true;
}

static bool parse_msgs(restore *r, rd *s)
{
    uint32_t ntypes;
    uint32_t nremoved;
    if (!rd_u32(s, &ntypes) || !rd_u32(s, &nremoved) || ntypes > s->len / 16 ||
        nremoved > s->len / 16) {
        return TRUNC(r, "message list");
    }
    r->nstreams = ntypes + nremoved;
    r->streams = scratch(r, r->nstreams, sizeof *r->streams);
    if (r->nstreams && !r->streams) {
        return false;
    }
    for (uint32_t k = 0; k < ntypes; k++) {
        const char *name;
        uint32_t len;
        char buf[WF_ERROR_LEN];
        if (!rd_str(s, &name, &len) || len == 0 || len >= sizeof buf) {
            return TRUNC(r, "message type name");
        }
        memcpy(buf, name, len);
        buf[len] = '\0';
        weft_message_type t = wf_messages_lookup(r->w, buf);
        if (!t) {
            return bad(r, WEFT_ERR_NOT_FOUND, "message type '%s' is not registered", buf);
        }
        st_stream *x = &r->streams[k];
        x->dst = wf_messages_type(r->w, t);
        if (!parse_stream(r, s, x, x->dst->size, buf)) {
            return false;
        }
        if (x->dst->drop && (x->na || x->nb)) {
            return bad(r, WEFT_ERR_BAD_FORMAT, "message type '%s' has a drop callback", buf);
        }
    }
    for (uint32_t k = 0; k < nremoved; k++) {
        uint32_t id;
        uint32_t zero;
        if (!rd_u32(s, &id) || !rd_u32(s, &zero)) {
            return TRUNC(r, "removed stream");
        }
        wf_type_info *ti = comp_of(r, id);
        if (!ti) {
            return false;
        }
        st_stream *x = &r->streams[ntypes + k];
        x->dst = wf_removed_stream(r->w, ti);
        x->track = x->dst ? NULL : ti;
        for (uint32_t j = ntypes; j < ntypes + k; j++) {
            if ((x->track && r->streams[j].track == ti) ||
                (x->dst && r->streams[j].dst == x->dst)) {
                return bad(r, WEFT_ERR_BAD_FORMAT, "removed stream of '%s' appears twice",
                           ti->name);
            }
        }
        if (!parse_stream(r, s, x, sizeof(weft_entity), ti->name)) {
            return false;
        }
    }
    return section_done(r, s, SEC_MSGS);
}

/* Queries and schedules of the target must be the saved ones (same
 * count, signatures and names, in order), or absent altogether. */
static bool parse_queries(restore *r, rd *s)
{
    uint32_t n;
    uint32_t zero;
    if (!rd_u32(s, &n) || !rd_u32(s, &zero) || n > s->len / 16) {
        return TRUNC(r, "query list");
    }
    uint32_t have = 0;
    for (const weft_query *q = r->w->queries; q; q = q->next) {
        have++;
    }
    r->queries = *s;
    r->apply_queries = have > 0;
    if (have && have != n) {
        return bad(r, WEFT_ERR_NOT_FOUND, "the snapshot has %u queries, this world %u", n,
                   have);
    }
    const weft_query *q = r->w->queries;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t last;
        uint32_t terms;
        uint64_t sig;
        if (!rd_u32(s, &last) || !rd_u32(s, &terms) || !rd_u64(s, &sig)) {
            return TRUNC(r, "query list");
        }
        if (q) {
            if (q->term_count != terms || query_sig(r->w, q) != sig) {
                return bad(r, WEFT_ERR_NOT_FOUND,
                           "query %u of this world differs from the snapshot's", k);
            }
            q = q->next;
        }
    }
    return section_done(r, s, SEC_QRYS);
}

static bool parse_scheds(restore *r, rd *s)
{
    uint32_t n;
    uint32_t zero;
    const uint8_t *acc;
    r->scheds = *s;
    if (!rd_u32(s, &n) || !rd_u32(s, &zero) || !(acc = rd_take(s, 8)) || n > s->len / 8) {
        return TRUNC(r, "schedule list");
    }
    memcpy(&r->acc, acc, 8);
    if (!isfinite(r->acc) || r->acc < 0.0) {
        return bad(r, WEFT_ERR_BAD_FORMAT,
                   "the fixed-step accumulator is %g seconds (it must be finite and >= 0)",
                   r->acc);
    }
    const wf_sys_world *sw = r->w->sys;
    r->apply_scheds = sw && sw->schedules;
    for (uint32_t k = 0; k < n; k++) {
        const char *name;
        uint32_t len;
        uint32_t nsys;
        uint32_t ncond;
        if (!rd_str(s, &name, &len) || !rd_u32(s, &nsys) || !rd_u32(s, &ncond)) {
            return TRUNC(r, "schedule");
        }
        const weft_schedule *sc = NULL;
        for (const weft_schedule *x = r->apply_scheds ? sw->schedules : NULL; x; x = x->next) {
            if (strlen(x->name) == len && memcmp(x->name, name, len) == 0) {
                sc = x;
            }
        }
        if (r->apply_scheds && (!sc || count_sys_nodes(sc) != nsys ||
                                count_conds(sc) != ncond)) {
            return bad(r, WEFT_ERR_NOT_FOUND,
                       "schedule '%.*s' is missing here or has other systems or conditions",
                       (int)len, name);
        }
        uint32_t node = 0;
        for (uint32_t i = 0; i < nsys; i++) {
            const char *sname;
            uint32_t slen;
            uint32_t f[4];
            if (!rd_str(s, &sname, &slen)) {
                return TRUNC(r, "system");
            }
            for (int j = 0; j < 4; j++) {
                if (!rd_u32(s, &f[j])) {
                    return TRUNC(r, "system");
                }
            }
            if (!rd_array(s, (uint64_t)f[1] + f[2], sizeof(weft_message_cursor))) {
                return TRUNC(r, "system cursors");
            }
            if (!sc) {
                continue;
            }
            while (!sc->nodes[node].sys) {
                node++;
            }
            const wf_system *sys = sc->nodes[node++].sys;
            if (sys->name_len != slen || memcmp(sys->name, sname, slen) != 0 ||
                (uint32_t)sys->nmsgs != f[1] || (uint32_t)sys->nremoved != f[2]) {
                return bad(r, WEFT_ERR_NOT_FOUND,
                           "system '%.*s' of schedule '%.*s' does not match this world's",
                           (int)slen, sname, (int)len, name);
            }
        }
        const weft_condition *c = sc ? sc->conds : NULL;
        for (uint32_t i = 0; i < ncond; i++) {
            uint32_t kind;
            if (!rd_u32(s, &kind) || !rd_array(s, 3 * 4 + sizeof(weft_message_cursor), 1)) {
                return TRUNC(r, "condition");
            }
            if (c) {
                if (c->kind != kind) {
                    return bad(r, WEFT_ERR_NOT_FOUND,
                               "a condition of schedule '%.*s' differs", (int)len, name);
                }
                c = c->next;
            }
        }
    }
    return section_done(r, s, SEC_SCHD);
}

static bool parse_tick(restore *r, rd *s)
{
    if (!rd_u32(s, &r->change_tick) || !rd_u32(s, &r->last_check_tick)) {
        return TRUNC(r, "tick state");
    }
    return section_done(r, s, SEC_TICK);
}

/* ---- reserve: every allocation of the commit, or none ---- */

static void release_reserved(restore *r)
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
        st_stream *x = &r->streams[k];
        if (x->block_a) {
            wf_free(a, x->block_a, (size_t)x->na * x->dst->size, x->dst->align);
        }
        if (x->block_b) {
            wf_free(a, x->block_b, (size_t)x->nb * x->dst->size, x->dst->align);
        }
    }
}

static bool reserve(restore *r)
{
    weft_world *w = r->w;
    wf_allocator *a = &w->alloc;
    wf_entity_index *ix = &w->entities;
    if (!wf_entities_reserve(ix, a, r->count)) {
        return bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for %u entity records", r->count);
    }
    if (r->free_len > ix->free_cap) {
        void *data = ix->free_stack;
        if (!wf_grow(a, &data, &ix->free_cap, r->free_len, sizeof(uint32_t),
                     _Alignof(uint32_t))) {
            return bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for the free stack");
        }
        ix->free_stack = data;
    }
    for (uint32_t t = 0; t < r->ntables; t++) {
        if (!wf_table_reserve(r->tables[t].dst, a, r->tables[t].rows)) {
            return bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for table rows");
        }
    }
    for (uint32_t k = 0; k < r->nsparse; k++) {
        st_sparse *sp = &r->sparse[k];
        wf_sparse_set *set = sp->ti->sparse;
        if (!wf_sparse_reserve_dense(set, a, sp->count)) {
            return bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for sparse '%s'",
                       sp->ti->name);
        }
        for (uint32_t d = 0; d < sp->count; d++) {
            uint64_t e;
            memcpy(&e, sp->owners + (size_t)d * 8, 8);
            if (!wf_sparse_reserve_page(set, a, (uint32_t)e)) {
                return bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for sparse '%s'",
                           sp->ti->name);
            }
        }
    }
    if (r->nlists) {
        r->lists = scratch(r, r->nlists, sizeof *r->lists);
        r->list_cap = scratch(r, r->nlists, sizeof *r->list_cap);
        if (!r->lists || !r->list_cap) {
            return false;
        }
        uint32_t li = 0;
        for (uint32_t t = 0; t < r->ntables; t++) {
            const st_table *tb = &r->tables[t];
            for (uint32_t i = 0; i < tb->ncols; i++) {
                if (!r->cols[tb->col0 + i].ti->rel_source) {
                    continue;
                }
                rd v = {r->cols[tb->col0 + i].vals, SIZE_MAX - (size_t)(uintptr_t)r->cols[tb->col0 + i].vals, 0};
                for (uint32_t row = 0; row < tb->rows; row++) {
                    uint32_t cnt = 0;
                    uint32_t zero = 0;
                    rd_u32(&v, &cnt);
                    rd_u32(&v, &zero);
                    rd_take(&v, (size_t)cnt * 8);
                    if (!cnt) {
                        continue;
                    }
                    r->lists[li] = wf_alloc(a, (size_t)cnt * sizeof(weft_entity),
                                            _Alignof(weft_entity));
                    if (!r->lists[li]) {
                        return bad(r, WEFT_ERR_OUT_OF_MEMORY,
                                   "out of memory for relationship lists");
                    }
                    r->list_cap[li++] = cnt;
                }
            }
        }
    }
    for (uint32_t k = 0; k < r->nres; k++) {
        st_res *x = &r->res[k];
        if (x->ti->size) {
            x->block = wf_alloc(a, x->ti->size, x->ti->align);
            if (!x->block) {
                return bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for resources");
            }
        }
    }
    for (uint32_t k = 0; k < r->nstreams; k++) {
        st_stream *x = &r->streams[k];
        if (x->track) {
            /* benign if a later step fails: tracking is invisible to content */
            if (wf_removed_track(w, x->track) != WEFT_OK) {
                return bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for removal tracking");
            }
            x->dst = wf_removed_stream(w, x->track);
            x->track = NULL;
        }
        if (x->na && !(x->block_a = wf_alloc(a, (size_t)x->na * x->dst->size, x->dst->align))) {
            return bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for messages");
        }
        if (x->nb && !(x->block_b = wf_alloc(a, (size_t)x->nb * x->dst->size, x->dst->align))) {
            return bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory for messages");
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
static void fill_column(restore *r, wf_column *c, const st_col *sc, uint32_t n, uint32_t *li)
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

static void commit(restore *r)
{
    wf_journal_structural(r->w); /* the whole world arrives */
    weft_world *w = r->w;
    wf_entity_index *ix = &w->entities;
    w->change_tick = r->change_tick;
    w->last_check_tick = r->last_check_tick;
    for (uint32_t i = 0; i < r->count; i++) {
        wf_record rec = rec_at(r, i);
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
    uint32_t li = 0;
    for (uint32_t t = 0; t < r->ntables; t++) {
        const st_table *tb = &r->tables[t];
        wf_table *dst = tb->dst;
        wf_atomic_store_relaxed_u32(&dst->bulk_any, 0);
        memcpy(dst->entities, tb->ents, (size_t)tb->rows * 8);
        dst->count = tb->rows;
        for (uint32_t i = 0; i < tb->ncols; i++) {
            fill_column(r, wf_table_column(dst, r->cols[tb->col0 + i].ti->id), &r->cols[tb->col0 + i], tb->rows,
                        &li);
        }
    }
    for (uint32_t k = 0; k < r->nsparse; k++) {
        const st_sparse *sp = &r->sparse[k];
        wf_sparse_set *set = sp->ti->sparse;
        memcpy(set->owners, sp->owners, (size_t)sp->count * 8);
        for (uint32_t d = 0; d < sp->count; d++) {
            uint32_t idx = (uint32_t)set->owners[d];
            set->pages[idx >> WF_SPARSE_PAGE_BITS][idx & (WF_SPARSE_PAGE_SIZE - 1)] = d;
        }
        set->count = sp->count;
        st_col sc = {sp->ti, sp->vals, sp->ticks};
        fill_column(r, &set->dense, &sc, sp->count, &li);
    }
    for (uint32_t k = 0; k < r->nres; k++) {
        st_res *x = &r->res[k];
        if (x->ti->size) {
            memcpy(x->block, x->val, x->ti->size);
            x->ti->res_value = x->block;
            x->block = NULL;
        }
        x->ti->res_ticks = x->ticks;
        x->ti->res_present = true;
        w->registry.resources++;
    }
    for (uint32_t k = 0; k < r->nstreams; k++) {
        st_stream *x = &r->streams[k];
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
    if (r->apply_queries) {
        rd q = r->queries;
        for (weft_query *x = w->queries; x; x = x->next) {
            uint32_t last = 0;
            rd_u32(&q, &last);
            rd_take(&q, 12);
            x->last_run = last;
        }
    }
    wf_sys_world *sw = w->sys;
    if (r->apply_scheds) {
        rd s = r->scheds;
        uint32_t n = 0;
        rd_u32(&s, &n);
        rd_take(&s, 12);
        sw->acc = r->acc;
        for (uint32_t k = 0; k < n; k++) {
            const char *name = NULL;
            uint32_t len = 0;
            uint32_t nsys = 0;
            uint32_t ncond = 0;
            rd_str(&s, &name, &len);
            rd_u32(&s, &nsys);
            rd_u32(&s, &ncond);
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
                rd_str(&s, &sname, &slen);
                for (int j = 0; j < 4; j++) {
                    rd_u32(&s, &f[j]);
                }
                while (!sc->nodes[node].sys) {
                    node++;
                }
                wf_system *sys = sc->nodes[node++].sys;
                sys->last_run = f[0];
                const uint8_t *cur = rd_take(&s, (size_t)f[1] * sizeof(weft_message_cursor));
                if (f[1]) {
                    memcpy(sys->cursors, cur, (size_t)f[1] * sizeof(weft_message_cursor));
                }
                cur = rd_take(&s, (size_t)f[2] * sizeof(weft_message_cursor));
                if (f[2]) {
                    memcpy(sys->rcursors, cur, (size_t)f[2] * sizeof(weft_message_cursor));
                }
            }
            weft_condition *c = sc->conds;
            for (uint32_t i = 0; i < ncond; i++, c = c->next) {
                uint32_t f[4] = {0, 0, 0, 0};
                for (int j = 0; j < 4; j++) {
                    rd_u32(&s, &f[j]);
                }
                c->fired = f[1] != 0;
                c->last_run = f[2];
                if (c->sys) {
                    c->sys->last_run = f[3];
                }
                memcpy(&c->cursor, rd_take(&s, sizeof c->cursor), sizeof c->cursor);
            }
        }
    }
}

static void restore_free(restore *r)
{
    release_reserved(r);
    scratch_free(r, r->comps, (size_t)r->ncomps + 1, sizeof *r->comps);
    scratch_free(r, r->state, r->count, 1);
    scratch_free(r, r->arch_ids, r->narch, sizeof *r->arch_ids);
    scratch_free(r, r->arch_n, r->narch, sizeof *r->arch_n);
    scratch_free(r, r->arch_dst, r->narch, sizeof *r->arch_dst);
    scratch_free(r, r->arch_live, r->narch, sizeof *r->arch_live);
    scratch_free(r, r->scratch, WF_MAX_COMPONENTS, sizeof *r->scratch);
    scratch_free(r, r->tables, r->ntables, sizeof *r->tables);
    scratch_free(r, r->table_seen, r->ntable_seen, 1);
    scratch_free(r, r->cols, r->ncols, sizeof *r->cols);
    scratch_free(r, r->sparse, r->nsparse, sizeof *r->sparse);
    scratch_free(r, r->res, r->nres, sizeof *r->res);
    scratch_free(r, r->streams, r->nstreams, sizeof *r->streams);
    scratch_free(r, r->lists, r->nlists, sizeof *r->lists);
    scratch_free(r, r->list_cap, r->nlists, sizeof *r->list_cap);
}

/* Checks the header and the checksum over header and payload. */
static weft_status check_header(weft_world *w, const uint8_t *b, size_t len,
                                uint32_t want_flags, uint64_t *since)
{
    if (len < SNAP_HEADER) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "snapshot restore: %zu bytes is shorter than the header", len);
    }
    if (memcmp(b, snap_magic, 8) != 0) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT, "snapshot restore: not a weft snapshot");
    }
    uint32_t version;
    uint32_t bom;
    uint32_t hsize;
    uint32_t flags;
    uint64_t plen;
    uint64_t sum;
    memcpy(&version, b + 8, 4);
    memcpy(&bom, b + 12, 4);
    memcpy(&hsize, b + 16, 4);
    memcpy(&flags, b + 20, 4);
    memcpy(&plen, b + 24, 8);
    memcpy(&sum, b + 32, 8);
    if (bom != SNAP_BOM) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        bom == 0x04030201u
                            ? "snapshot restore: written with the other byte order"
                            : "snapshot restore: bad byte-order mark 0x%08x",
                        bom);
    }
    if (version != WEFT_SNAPSHOT_VERSION) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "snapshot restore: format version %u, this library reads %u", version,
                        WEFT_SNAPSHOT_VERSION);
    }
    if (hsize != SNAP_HEADER ||
        (flags & ~(SNAP_FLAG_DELTA | SNAP_FLAG_ZSTD | SNAP_FLAG_PATCH)) != 0 ||
        ((flags & SNAP_FLAG_PATCH) && !(flags & SNAP_FLAG_DELTA))) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "snapshot restore: header size %u or flags 0x%x not understood", hsize,
                        flags);
    }
    if ((flags & SNAP_FLAG_DELTA) != want_flags) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        want_flags ? "snapshot: a full snapshot where a delta was expected"
                                   : "snapshot: a delta cannot be restored alone; merge it "
                                     "into its base (weft_snapshot_merge)");
    }
    memcpy(since, b + 40, 8);
    if (plen != len - SNAP_HEADER) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "snapshot restore: the header announces %llu payload bytes, %zu given"
                        " (truncated or oversized)",
                        (unsigned long long)plen, len - SNAP_HEADER);
    }
    uint8_t h[SNAP_HEADER];
    memcpy(h, b, SNAP_HEADER);
    memset(h + 32, 0, 8);
    XXH3_state_t hs;
    XXH3_64bits_reset(&hs);
    XXH3_64bits_update(&hs, h, SNAP_HEADER);
    XXH3_64bits_update(&hs, b + SNAP_HEADER, len - SNAP_HEADER);
    if (XXH3_64bits_digest(&hs) != sum) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "snapshot restore: checksum mismatch (the data is corrupt)");
    }
    return WEFT_OK;
}

/* The payload of a snapshot whose header check_header accepted: in
 * place, or decompressed into scratch memory (freed by payload_close). */
typedef struct snap_payload {
    const uint8_t *p;
    size_t n;
    uint8_t *owned;
} snap_payload;

static weft_status payload_open(weft_world *w, const uint8_t *b, size_t len,
                                snap_payload *out)
{
    uint32_t flags;
    uint64_t plain;
    memcpy(&flags, b + 20, 4);
    memcpy(&plain, b + 48, 8);
    out->p = b + SNAP_HEADER;
    out->n = len - SNAP_HEADER;
    out->owned = NULL;
    if (!(flags & SNAP_FLAG_ZSTD)) {
        return WEFT_OK;
    }
    if (!wf_zstd_available()) {
        return wf_error(w, WEFT_ERR_UNSUPPORTED, "snapshot: compressed with zstd, and this "
                        "build of weft has no zstd (WEFT_ZSTD)");
    }
    if (plain == 0) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT, "snapshot: the header records no plain "
                        "length for a compressed payload");
    }
    uint64_t max = w->snapshot_max ? w->snapshot_max : WF_SNAPSHOT_MAX_DEFAULT;
    if (plain > max || (uint64_t)(size_t)plain != plain) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "snapshot: the compressed payload announces %llu bytes, above this "
                        "world's limit of %llu (weft_snapshot_set_limit)",
                        (unsigned long long)plain, (unsigned long long)max);
    }
    uint8_t *buf;
    weft_status st = wf_zstd_inflate(w, out->p, out->n, (size_t)plain, &buf);
    if (st != WEFT_OK) {
        return st;
    }
    out->p = buf;
    out->n = (size_t)plain;
    out->owned = buf;
    return WEFT_OK;
}

static void payload_close(weft_world *w, snap_payload *pl)
{
    if (pl->owned) {
        wf_free(&w->alloc, pl->owned, pl->n, 16);
        pl->owned = NULL;
    }
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
    if (w->entities.count || free_taken || fresh_taken || w->registry.resources) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "snapshot restore: the world must be empty (no entity ever spawned or "
                        "reserved, no resource)");
    }
    uint64_t since = 0;
    snap_payload pl;
    weft_status st = check_header(w, data, len, 0, &since);
    if (st != WEFT_OK || (st = payload_open(w, data, len, &pl)) != WEFT_OK) {
        return st;
    }
    restore r;
    memset(&r, 0, sizeof r);
    r.w = w;
    r.st = WEFT_OK;
    rd in = {pl.p, pl.n, 0};
    rd s;
    bool ok = section(&r, &in, SEC_COMP, &s) && parse_comps(&r, &s) &&
              section(&r, &in, SEC_ENTS, &s) && parse_ents(&r, &s) &&
              section(&r, &in, SEC_ARCH, &s) && parse_arch(&r, &s);
    if (ok) {
        r.scratch = scratch(&r, WF_MAX_COMPONENTS, sizeof *r.scratch);
        ok = r.scratch && ensure_archetypes(&r);
    }
    ok = ok && section(&r, &in, SEC_TABL, &s) && parse_tables(&r, &s) &&
         section(&r, &in, SEC_SPRS, &s) && parse_sparse(&r, &s) && check_rel_graph(&r) &&
         section(&r, &in, SEC_RESO, &s) && parse_res(&r, &s) &&
         section(&r, &in, SEC_MSGS, &s) && parse_msgs(&r, &s) &&
         section(&r, &in, SEC_TICK, &s) && parse_tick(&r, &s) &&
         section(&r, &in, SEC_QRYS, &s) && parse_queries(&r, &s) &&
         section(&r, &in, SEC_SCHD, &s) && parse_scheds(&r, &s);
    if (ok && in.pos != in.len) {
        ok = bad(&r, WEFT_ERR_BAD_FORMAT, "%zu bytes follow the last section",
                 in.len - in.pos);
    }
    ok = ok && reserve(&r);
    if (ok) {
        commit(&r);
    }
    restore_free(&r);
    payload_close(w, &pl);
    return ok ? WEFT_OK : r.st;
}

/* ==================================================================== */
/* ---- merging a delta into its base ---- */

static const uint32_t sec_tags[SNAP_SECTIONS] = {SEC_COMP, SEC_ENTS, SEC_ARCH, SEC_TABL,
                                                 SEC_SPRS, SEC_RESO, SEC_MSGS, SEC_TICK,
                                                 SEC_QRYS, SEC_SCHD};

/* The ten sections of a payload. */
typedef struct view {
    rd sec[SNAP_SECTIONS];
} view;

static bool view_open(restore *r, const uint8_t *payload, size_t len, view *v)
{
    rd in = {payload, len, 0};
    for (uint32_t k = 0; k < SNAP_SECTIONS; k++) {
        if (!section(r, &in, sec_tags[k], &v->sec[k])) {
            return false;
        }
    }
    if (in.pos != in.len) {
        return bad(r, WEFT_ERR_BAD_FORMAT, "%zu bytes follow the last section",
                   in.len - in.pos);
    }
    return true;
}

/* A column of a base table section. */
typedef struct mcol {
    uint32_t id;
    const uint8_t *vals;      /* NULL for relationship lists (never needed) */
    const uint8_t *ticks;
    const uint8_t *raw;       /* the values as stored, padding included */
    size_t raw_len;
} mcol;

typedef struct mtab {
    uint32_t rows;
    uint32_t ncols;
    const uint8_t *ents;
    uint32_t col0;
} mtab;

typedef struct merge {
    restore r;                /* error slot and scratch allocator */
    view b, d;
    uint32_t ncomps;          /* delta's component table */
    uint32_t *size;           /* [ncomps + 1] bytes per value */
    uint8_t *role;            /* [ncomps + 1] */
    uint32_t *bsize;          /* [nb + 1] the base's sizes */
    uint32_t nb;
    uint32_t bcount;          /* base entity indices */
    uint32_t *loc_tab;        /* [bcount] base table section + 1 of each entity */
    uint32_t *loc_row;        /* [bcount] its row there */
    mtab *tabs;
    uint32_t ntabs;
    mcol *cols;
    uint32_t ncols, cap_cols;
    uint32_t *slot;           /* [bcount] scratch: base sparse slot by index */
    uint64_t since;
    /* the output run being coalesced */
    const uint8_t *run;
    size_t run_len;
} merge;

static void run_put(wr *o, merge *m, const uint8_t *p, size_t n)
{
    if (m->run && m->run + m->run_len == p) {
        m->run_len += n;
        return;
    }
    if (m->run_len) {
        put(o, m->run, m->run_len);
    }
    m->run = p;
    m->run_len = n;
}

static void run_flush(wr *o, merge *m)
{
    if (m->run_len) {
        put(o, m->run, m->run_len);
    }
    m->run = NULL;
    m->run_len = 0;
}

/* Reads a component table: sizes and roles by id. */
static bool merge_comps(merge *m, rd s, uint32_t **size, uint8_t **role, uint32_t *n)
{
    uint32_t zero;
    if (!rd_u32(&s, n) || !rd_u32(&s, &zero) || *n > WF_MAX_COMPONENTS || *n > s.len / 32) {
        return TRUNC(&m->r, "component table");
    }
    *size = scratch(&m->r, (size_t)*n + 1, sizeof **size);
    if (role) {
        *role = scratch(&m->r, (size_t)*n + 1, 1);
    }
    if (!*size || (role && !*role)) {
        return false;
    }
    for (uint32_t i = 0; i < *n; i++) {
        uint32_t f[6];
        const char *name;
        uint32_t len;
        for (int k = 0; k < 6; k++) {
            if (!rd_u32(&s, &f[k])) {
                return TRUNC(&m->r, "component table");
            }
        }
        if (!rd_str(&s, &name, &len) || f[0] != i + 1 || f[1] > WF_MAX_COMPONENT_SIZE) {
            return TRUNC(&m->r, "component table");
        }
        (*size)[f[0]] = f[1];
        if (role) {
            (*role)[f[0]] = (uint8_t)(f[5] == ROLE_REL_LIST);
        }
    }
    return true;
}

/* Skips one column's values in a full section (relationship lists are
 * walked). */
static bool skip_values(merge *m, rd *s, uint32_t size, bool rel, uint32_t rows,
                        const uint8_t **vals)
{
    *vals = s->p + s->pos;
    if (rel) {
        *vals = NULL;
        for (uint32_t k = 0; k < rows; k++) {
            uint32_t cnt;
            uint32_t zero;
            if (!rd_u32(s, &cnt) || !rd_u32(s, &zero) || !rd_array(s, cnt, 8)) {
                return TRUNC(&m->r, "relationship list");
            }
        }
        return true;
    }
    if (size && rows && (!rd_array(s, rows, size) || !rd_pad(s))) {
        return TRUNC(&m->r, "column values");
    }
    return true;
}

/* Indexes the base's tables: where each live entity's row is. */
static bool merge_index_base(merge *m)
{
    rd e = m->b.sec[1];
    uint32_t free_len;
    uint32_t retired;
    uint32_t zero;
    if (!rd_u32(&e, &m->bcount) || !rd_u32(&e, &free_len) || !rd_u32(&e, &retired) ||
        !rd_u32(&e, &zero) || m->bcount > e.len / sizeof(wf_record)) {
        return TRUNC(&m->r, "base entity index");
    }
    m->loc_tab = scratch(&m->r, m->bcount, sizeof *m->loc_tab);
    m->loc_row = scratch(&m->r, m->bcount, sizeof *m->loc_row);
    m->slot = scratch(&m->r, m->bcount, sizeof *m->slot);
    if (m->bcount && (!m->loc_tab || !m->loc_row || !m->slot)) {
        return false;
    }
    rd s = m->b.sec[3];
    if (!rd_u32(&s, &m->ntabs) || !rd_u32(&s, &zero) || m->ntabs > s.len / 16) {
        return TRUNC(&m->r, "base tables");
    }
    m->tabs = scratch(&m->r, m->ntabs, sizeof *m->tabs);
    if (m->ntabs && !m->tabs) {
        return false;
    }
    for (uint32_t t = 0; t < m->ntabs; t++) {
        mtab *tb = &m->tabs[t];
        if (!rd_u32(&s, &tb->rows) || !rd_u32(&s, &tb->ncols) ||
            !(tb->ents = rd_array(&s, tb->rows, 8)) || tb->ncols > m->nb) {
            return TRUNC(&m->r, "base table");
        }
        for (uint32_t row = 0; row < tb->rows; row++) {
            uint64_t ent;
            memcpy(&ent, tb->ents + (size_t)row * 8, 8);
            if ((uint32_t)ent >= m->bcount) {
                return bad(&m->r, WEFT_ERR_BAD_FORMAT, "base table row names index %u",
                           (uint32_t)ent);
            }
            m->loc_tab[(uint32_t)ent] = t + 1;
            m->loc_row[(uint32_t)ent] = row;
        }
        if (m->ncols + tb->ncols > m->cap_cols) {
            void *data = m->cols;
            uint32_t cap = m->cap_cols;
            if (!wf_grow(&m->r.w->alloc, &data, &cap, m->ncols + tb->ncols, sizeof *m->cols,
                         16)) {
                return bad(&m->r, WEFT_ERR_OUT_OF_MEMORY, "out of memory merging");
            }
            m->cols = data;
            m->cap_cols = cap;
        }
        tb->col0 = m->ncols;
        for (uint32_t i = 0; i < tb->ncols; i++) {
            mcol *c = &m->cols[m->ncols++];
            uint32_t has;
            if (!rd_u32(&s, &c->id) || !rd_u32(&s, &has) || c->id == 0 || c->id > m->nb) {
                return TRUNC(&m->r, "base column");
            }
            bool rel = c->id <= m->ncomps && (m->role[c->id] & 1u);
            c->raw = s.p + s.pos;
            if (!skip_values(m, &s, m->bsize[c->id], rel, tb->rows, &c->vals)) {
                return false;
            }
            c->raw_len = (size_t)(s.p + s.pos - c->raw);
            c->ticks = has ? rd_array(&s, tb->rows, sizeof(weft_ticks)) : NULL;
            if (has && !c->ticks) {
                return TRUNC(&m->r, "base ticks");
            }
        }
    }
    return true;
}

/* The base's value (or ticks) of component id for entity e, or NULL. */
static const uint8_t *base_cell(merge *m, uint64_t e, uint32_t id, bool ticks)
{
    uint32_t idx = (uint32_t)e;
    if (idx >= m->bcount || !m->loc_tab[idx]) {
        return NULL;
    }
    const mtab *tb = &m->tabs[m->loc_tab[idx] - 1];
    uint32_t row = m->loc_row[idx];
    uint64_t there;
    memcpy(&there, tb->ents + (size_t)row * 8, 8);
    if (there != e) {
        return NULL; /* another generation of the index */
    }
    for (uint32_t i = 0; i < tb->ncols; i++) {
        const mcol *c = &m->cols[tb->col0 + i];
        if (c->id == id) {
            const uint8_t *p = ticks ? c->ticks : c->vals;
            size_t w = ticks ? sizeof(weft_ticks) : m->bsize[id];
            return p ? p + (size_t)row * w : NULL;
        }
    }
    return NULL;
}

/* Writes one delta column as a full one: changed rows from the delta,
 * the others from `from_base(k)`. */
typedef const uint8_t *(*base_fn)(merge *m, void *ctx, uint32_t row, bool ticks);

static bool bit_at(const uint8_t *bits, uint32_t r)
{
    return ((unsigned)bits[r / 8] >> (r % 8)) & 1u;
}

static bool merge_column(wr *o, merge *m, rd *s, uint32_t id, uint32_t has, uint32_t rows,
                         base_fn from_base, void *ctx)
{
    if (id == 0 || id > m->ncomps) {
        return TRUNC(&m->r, "delta column");
    }
    uint32_t size = m->size[id];
    const uint8_t *bits = rd_array(s, ((uint64_t)rows + 63) / 64, 8);
    if (!bits) {
        return TRUNC(&m->r, "delta bitmap");
    }
    if (m->role[id] & 1u) { /* relationship lists: always whole */
        const uint8_t *start = s->p + s->pos;
        const uint8_t *vals;
        if (!skip_values(m, s, size, true, rows, &vals)) {
            return false;
        }
        put(o, start, (size_t)(s->p + s->pos - start));
        if (has) {
            const uint8_t *t = rd_array(s, rows, sizeof(weft_ticks));
            if (!t) {
                return TRUNC(&m->r, "delta ticks");
            }
            put(o, t, (size_t)rows * sizeof(weft_ticks));
        }
        return true;
    }
    uint32_t changed = 0;
    for (uint32_t r = 0; r < rows; r++) {
        changed += bit_at(bits, r) ? 1u : 0u;
    }
    const uint8_t *dv = rd_array(s, changed, size);
    if (!dv || !rd_pad(s)) {
        return TRUNC(&m->r, "delta values");
    }
    const uint8_t *dt = has ? rd_array(s, changed, sizeof(weft_ticks)) : NULL;
    if (has && !dt) {
        return TRUNC(&m->r, "delta ticks");
    }
    for (int pass = 0; pass < 2; pass++) {
        size_t w = pass == 0 ? size : sizeof(weft_ticks);
        const uint8_t *next = pass == 0 ? dv : dt;
        if ((pass == 0 && !size) || (pass == 1 && !has)) {
            continue;
        }
        for (uint32_t r = 0; r < rows; r++) {
            if (bit_at(bits, r)) {
                run_put(o, m, next, w);
                next += w;
                continue;
            }
            const uint8_t *p = from_base(m, ctx, r, pass == 1);
            if (!p) {
                return bad(&m->r, WEFT_ERR_BAD_FORMAT,
                           "the delta keeps a value of component %u its base lacks (a delta "
                           "of another base?)",
                           id);
            }
            run_put(o, m, p, w);
        }
        run_flush(o, m);
        if (pass == 0) {
            put_pad(o);
        }
    }
    return true;
}

typedef struct tab_ctx {
    const uint8_t *ents;
    uint32_t id;
} tab_ctx;

static const uint8_t *from_base_table(merge *m, void *ctx, uint32_t row, bool ticks)
{
    const tab_ctx *c = ctx;
    uint64_t e;
    memcpy(&e, c->ents + (size_t)row * 8, 8);
    return base_cell(m, e, c->id, ticks);
}

typedef struct sparse_ctx {
    const uint8_t *owners;    /* delta owners */
    const uint8_t *bowners;   /* base owners */
    uint32_t bcount;
    const uint8_t *bvals, *bticks;
    uint32_t size;
} sparse_ctx;

static const uint8_t *from_base_sparse(merge *m, void *ctx, uint32_t row, bool ticks)
{
    const sparse_ctx *c = ctx;
    uint64_t e;
    memcpy(&e, c->owners + (size_t)row * 8, 8);
    uint32_t idx = (uint32_t)e;
    if (!c->bowners || idx >= m->bcount || m->slot[idx] >= c->bcount) {
        return NULL;
    }
    uint32_t d = m->slot[idx];
    uint64_t there;
    memcpy(&there, c->bowners + (size_t)d * 8, 8);
    if (there != e) {
        return NULL;
    }
    if (ticks) {
        return c->bticks ? c->bticks + (size_t)d * sizeof(weft_ticks) : NULL;
    }
    return c->bvals + (size_t)d * c->size;
}

static void put_raw_section(wr *o, uint32_t tag, const rd *s)
{
    sec_begin(o, tag);
    put(o, s->p, s->len);
    sec_end(o);
}

/* Finds the base's sparse set of component id. */
static bool base_sparse(merge *m, uint32_t id, sparse_ctx *c)
{
    rd s = m->b.sec[4];
    uint32_t n;
    uint32_t zero;
    c->bowners = NULL;
    c->bcount = 0;
    if (!rd_u32(&s, &n) || !rd_u32(&s, &zero)) {
        return TRUNC(&m->r, "base sparse list");
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t sid;
        uint32_t cnt;
        if (!rd_u32(&s, &sid) || !rd_u32(&s, &cnt) || sid == 0 || sid > m->nb) {
            return TRUNC(&m->r, "base sparse set");
        }
        const uint8_t *owners = rd_array(&s, cnt, 8);
        const uint8_t *vals;
        if (!owners || !rd_pad(&s) || !skip_values(m, &s, m->bsize[sid], false, cnt, &vals)) {
            return TRUNC(&m->r, "base sparse set");
        }
        /* sparse sets carry ticks unless the component has none */
        const uint8_t *ticks = NULL;
        if (!(m->role[sid] & 2u)) {
            ticks = rd_array(&s, cnt, sizeof(weft_ticks));
            if (!ticks) {
                return TRUNC(&m->r, "base sparse ticks");
            }
        }
        if (sid == id) {
            c->bowners = owners;
            c->bcount = cnt;
            c->bvals = vals;
            c->bticks = ticks;
            for (uint32_t d = 0; d < cnt; d++) {
                uint64_t e;
                memcpy(&e, owners + (size_t)d * 8, 8);
                if ((uint32_t)e < m->bcount) {
                    m->slot[(uint32_t)e] = d;
                }
            }
            return true;
        }
    }
    return true;
}

/* Patch delta: one column's values and ticks rebuilt from the base's
 * (bvals, bticks; rows rows) with the delta's changed rows. */
static bool merge_patch_column(wr *o, merge *m, rd *s, uint32_t id, uint32_t has,
                               uint32_t rows, const uint8_t *bvals, const uint8_t *bticks,
                               const uint8_t *braw, size_t braw_len)
{
    uint32_t np;
    uint32_t zero;
    if (!rd_u32(s, &np) || !rd_u32(s, &zero) || zero != 0) {
        return TRUNC(&m->r, "patch column");
    }
    uint32_t size = m->size[id];
    if (m->role[id] & 1u) { /* relationship lists change only structurally */
        if (np != 0) {
            return bad(&m->r, WEFT_ERR_BAD_FORMAT, "a patch of relationship list %u", id);
        }
        put(o, braw, braw_len);
        if (has) {
            put(o, bticks, (size_t)rows * sizeof(weft_ticks));
        }
        return true;
    }
    if (np == SNAP_PATCH_WHOLE) {
        const uint8_t *vals;
        const uint8_t *start = s->p + s->pos;
        if (has || !skip_values(m, s, size, false, rows, &vals)) {
            return has ? bad(&m->r, WEFT_ERR_BAD_FORMAT, "a whole patch of a column with "
                             "ticks") : false;
        }
        put(o, start, (size_t)(s->p + s->pos - start));
        return true;
    }
    if (np > rows) {
        return bad(&m->r, WEFT_ERR_BAD_FORMAT, "a patch of %u rows in a column of %u", np,
                   rows);
    }
    const uint8_t *idx = np ? rd_array(s, np, 4) : NULL;
    if (np && (!idx || !rd_pad(s))) {
        return TRUNC(&m->r, "patch rows");
    }
    const uint8_t *dv = np && size ? rd_array(s, np, size) : NULL;
    if (np && size && (!dv || !rd_pad(s))) {
        return TRUNC(&m->r, "patch values");
    }
    const uint8_t *dt = np && has ? rd_array(s, np, sizeof(weft_ticks)) : NULL;
    if (np && has && !dt) {
        return TRUNC(&m->r, "patch ticks");
    }
    uint32_t prev = 0;
    for (uint32_t k = 0; k < np; k++) {
        uint32_t r;
        memcpy(&r, idx + (size_t)k * 4, 4);
        if (r >= rows || (k > 0 && r <= prev)) {
            return bad(&m->r, WEFT_ERR_BAD_FORMAT, "patch row %u out of order or range", r);
        }
        prev = r;
    }
    for (int pass = 0; pass < 2; pass++) {
        size_t w = pass == 0 ? size : sizeof(weft_ticks);
        const uint8_t *b = pass == 0 ? bvals : bticks;
        const uint8_t *d = pass == 0 ? dv : dt;
        if ((pass == 0 && !size) || (pass == 1 && !has)) {
            continue;
        }
        uint32_t cur = 0;
        for (uint32_t k = 0; k < np; k++) {
            uint32_t r;
            memcpy(&r, idx + (size_t)k * 4, 4);
            if (r > cur) {
                run_put(o, m, b + (size_t)cur * w, (size_t)(r - cur) * w);
            }
            run_put(o, m, d + (size_t)k * w, w);
            cur = r + 1;
        }
        if (rows > cur) {
            run_put(o, m, b + (size_t)cur * w, (size_t)(rows - cur) * w);
        }
        run_flush(o, m);
        if (pass == 0) {
            put_pad(o);
        }
    }
    return true;
}

/* A patch delta onto its base: the base's index and layout, the delta's
 * component and archetype tables, changed rows, resources, messages and
 * tick state. */
static bool merge_write_patch(wr *o, merge *m)
{
    o->nsec = 0;
    put_raw_section(o, SEC_COMP, &m->d.sec[0]);
    rd de = m->d.sec[1];
    rd be = m->b.sec[1];
    const uint8_t *dh = rd_take(&de, 16);
    const uint8_t *bh = rd_take(&be, 16);
    if (!dh || !bh || memcmp(dh, bh, 16) != 0 || de.pos != de.len) {
        return bad(&m->r, WEFT_ERR_BAD_FORMAT,
                   "the patch delta's entity index does not match its base");
    }
    put_raw_section(o, SEC_ENTS, &m->b.sec[1]);
    put_raw_section(o, SEC_ARCH, &m->d.sec[2]);
    /* tables: the base's, in its order */
    rd s = m->d.sec[3];
    uint32_t n;
    uint32_t zero;
    if (!rd_u32(&s, &n) || !rd_u32(&s, &zero) || n != m->ntabs) {
        return bad(&m->r, WEFT_ERR_BAD_FORMAT, "the patch delta's tables differ from its "
                   "base's");
    }
    sec_begin(o, SEC_TABL);
    put_u32(o, n);
    put_u32(o, 0);
    for (uint32_t t = 0; t < n; t++) {
        const mtab *tb = &m->tabs[t];
        uint32_t rows;
        uint32_t ncols;
        if (!rd_u32(&s, &rows) || !rd_u32(&s, &ncols)) {
            return TRUNC(&m->r, "patch table");
        }
        if (rows != tb->rows || ncols != tb->ncols) {
            return bad(&m->r, WEFT_ERR_BAD_FORMAT, "patch table %u differs from its base's",
                       t);
        }
        put_u32(o, rows);
        put_u32(o, ncols);
        put(o, tb->ents, (size_t)rows * 8);
        for (uint32_t i = 0; i < ncols; i++) {
            const mcol *c = &m->cols[tb->col0 + i];
            uint32_t id;
            uint32_t has;
            if (!rd_u32(&s, &id) || !rd_u32(&s, &has)) {
                return TRUNC(&m->r, "patch column");
            }
            if (id != c->id || id > m->ncomps || has != (c->ticks != NULL) ||
                m->size[id] != m->bsize[id]) {
                return bad(&m->r, WEFT_ERR_BAD_FORMAT,
                           "patch column %u differs from its base's", id);
            }
            put_u32(o, id);
            put_u32(o, has);
            if (!merge_patch_column(o, m, &s, id, has, rows, c->vals, c->ticks, c->raw,
                                    c->raw_len)) {
                return false;
            }
        }
    }
    if (s.pos != s.len) {
        return bad(&m->r, WEFT_ERR_BAD_FORMAT, "bytes follow the patch tables");
    }
    sec_end(o);
    /* sparse sets: the base's, in its order */
    s = m->d.sec[4];
    rd b = m->b.sec[4];
    uint32_t bn;
    if (!rd_u32(&s, &n) || !rd_u32(&s, &zero) || !rd_u32(&b, &bn) || !rd_u32(&b, &zero) ||
        n != bn) {
        return bad(&m->r, WEFT_ERR_BAD_FORMAT, "the patch delta's sparse sets differ from "
                   "its base's");
    }
    sec_begin(o, SEC_SPRS);
    put_u32(o, n);
    put_u32(o, 0);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t id;
        uint32_t cnt;
        uint32_t bid;
        uint32_t bcnt;
        const uint8_t *owners;
        const uint8_t *vals;
        if (!rd_u32(&s, &id) || !rd_u32(&s, &cnt) || !rd_u32(&b, &bid) || !rd_u32(&b, &bcnt) ||
            bid == 0 || bid > m->nb || !(owners = rd_array(&b, bcnt, 8)) || !rd_pad(&b)) {
            return TRUNC(&m->r, "patch sparse set");
        }
        if (id != bid || cnt != bcnt || id > m->ncomps || m->size[id] != m->bsize[id]) {
            return bad(&m->r, WEFT_ERR_BAD_FORMAT, "patch sparse set %u differs from its "
                       "base's", id);
        }
        const uint8_t *raw = b.p + b.pos;
        if (!skip_values(m, &b, m->bsize[bid], false, bcnt, &vals)) {
            return false;
        }
        size_t raw_len = (size_t)(b.p + b.pos - raw);
        uint32_t has = m->role[id] & 2u ? 0u : 1u;
        const uint8_t *ticks = has ? rd_array(&b, bcnt, sizeof(weft_ticks)) : NULL;
        if (has && !ticks) {
            return TRUNC(&m->r, "base sparse ticks");
        }
        put_u32(o, id);
        put_u32(o, cnt);
        put(o, owners, (size_t)cnt * 8);
        if (!merge_patch_column(o, m, &s, id, has, cnt, vals, ticks, raw, raw_len)) {
            return false;
        }
    }
    if (s.pos != s.len) {
        return bad(&m->r, WEFT_ERR_BAD_FORMAT, "bytes follow the patch sparse sets");
    }
    sec_end(o);
    for (uint32_t k = 5; k < SNAP_SECTIONS; k++) {
        put_raw_section(o, sec_tags[k], &m->d.sec[k]);
    }
    return true;
}

static bool merge_write(wr *o, merge *m)
{
    o->nsec = 0;
    for (uint32_t k = 0; k < 3; k++) {
        put_raw_section(o, sec_tags[k], &m->d.sec[k]);
    }
    /* tables */
    rd s = m->d.sec[3];
    uint32_t n;
    uint32_t zero;
    if (!rd_u32(&s, &n) || !rd_u32(&s, &zero) || n > s.len / 16) {
        return TRUNC(&m->r, "delta tables");
    }
    sec_begin(o, SEC_TABL);
    put_u32(o, n);
    put_u32(o, 0);
    for (uint32_t t = 0; t < n; t++) {
        uint32_t rows;
        uint32_t ncols;
        const uint8_t *ents;
        if (!rd_u32(&s, &rows) || !rd_u32(&s, &ncols) || !(ents = rd_array(&s, rows, 8)) ||
            ncols > m->ncomps) {
            return TRUNC(&m->r, "delta table");
        }
        put_u32(o, rows);
        put_u32(o, ncols);
        put(o, ents, (size_t)rows * 8);
        for (uint32_t i = 0; i < ncols; i++) {
            uint32_t id;
            uint32_t has;
            if (!rd_u32(&s, &id) || !rd_u32(&s, &has)) {
                return TRUNC(&m->r, "delta column");
            }
            put_u32(o, id);
            put_u32(o, has);
            tab_ctx c = {ents, id};
            if (!merge_column(o, m, &s, id, has, rows, from_base_table, &c)) {
                return false;
            }
        }
    }
    sec_end(o);
    /* sparse sets */
    s = m->d.sec[4];
    if (!rd_u32(&s, &n) || !rd_u32(&s, &zero) || n > s.len / 16) {
        return TRUNC(&m->r, "delta sparse list");
    }
    sec_begin(o, SEC_SPRS);
    put_u32(o, n);
    put_u32(o, 0);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t id;
        uint32_t cnt;
        const uint8_t *owners;
        if (!rd_u32(&s, &id) || !rd_u32(&s, &cnt) || !(owners = rd_array(&s, cnt, 8)) ||
            !rd_pad(&s) || id == 0 || id > m->ncomps || id > m->nb) {
            return TRUNC(&m->r, "delta sparse set");
        }
        put_u32(o, id);
        put_u32(o, cnt);
        put(o, owners, (size_t)cnt * 8);
        /* whether the set carries ticks follows from the component's
         * NO_CHANGE_TICKS flag (role bit 2) */
        sparse_ctx c;
        memset(&c, 0, sizeof c);
        c.owners = owners;
        c.size = m->size[id];
        uint32_t has = m->role[id] & 2u ? 0u : 1u;
        if (!base_sparse(m, id, &c)) {
            return false;
        }
        if (!merge_column(o, m, &s, id, has, cnt, from_base_sparse, &c)) {
            return false;
        }
    }
    sec_end(o);
    /* resources */
    s = m->d.sec[5];
    if (!rd_u32(&s, &n) || !rd_u32(&s, &zero) || n > s.len / 8) {
        return TRUNC(&m->r, "delta resources");
    }
    sec_begin(o, SEC_RESO);
    put_u32(o, n);
    put_u32(o, 0);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t id;
        uint32_t keep;
        if (!rd_u32(&s, &id) || !rd_u32(&s, &keep) || id == 0 || id > m->ncomps) {
            return TRUNC(&m->r, "delta resource");
        }
        uint32_t size = m->size[id];
        const uint8_t *ticks = NULL;
        const uint8_t *val = NULL;
        if (!keep) {
            ticks = rd_take(&s, sizeof(weft_ticks));
            val = size ? rd_take(&s, size) : NULL;
            if (!ticks || (size && (!val || !rd_pad(&s)))) {
                return TRUNC(&m->r, "delta resource");
            }
        } else {
            rd b = m->b.sec[5];
            uint32_t bn;
            if (!rd_u32(&b, &bn) || !rd_u32(&b, &zero)) {
                return TRUNC(&m->r, "base resources");
            }
            for (uint32_t j = 0; j < bn && !ticks; j++) {
                uint32_t bid;
                uint32_t flag;
                const uint8_t *bt;
                if (!rd_u32(&b, &bid) || !rd_u32(&b, &flag) || flag != 0 || bid == 0 ||
                    bid > m->nb || !(bt = rd_take(&b, sizeof(weft_ticks)))) {
                    return TRUNC(&m->r, "base resource");
                }
                const uint8_t *bv = m->bsize[bid] ? rd_take(&b, m->bsize[bid]) : NULL;
                if (m->bsize[bid] && (!bv || !rd_pad(&b))) {
                    return TRUNC(&m->r, "base resource");
                }
                if (bid == id && m->bsize[bid] == size) {
                    ticks = bt;
                    val = bv;
                }
            }
            if (!ticks) {
                return bad(&m->r, WEFT_ERR_BAD_FORMAT,
                           "the delta keeps resource %u, which its base lacks", id);
            }
        }
        put_u32(o, id);
        put_u32(o, 0);
        put(o, ticks, sizeof(weft_ticks));
        if (size) {
            put(o, val, size);
            put_pad(o);
        }
    }
    sec_end(o);
    for (uint32_t k = 6; k < SNAP_SECTIONS; k++) {
        put_raw_section(o, sec_tags[k], &m->d.sec[k]);
    }
    return true;
}

weft_status wf_snapshot_merge(weft_world *w, const void *base, size_t base_len,
                              const void *delta, size_t delta_len, void *buf, size_t cap,
                              size_t *out_len)
{
    uint64_t bsince = 0;
    uint64_t since = 0;
    snap_payload bp = {NULL, 0, NULL};
    snap_payload dp = {NULL, 0, NULL};
    weft_status st = check_header(w, base, base_len, 0, &bsince);
    if (st != WEFT_OK || (st = check_header(w, delta, delta_len, SNAP_FLAG_DELTA, &since)) !=
                             WEFT_OK) {
        return st;
    }
    if ((st = payload_open(w, base, base_len, &bp)) != WEFT_OK ||
        (st = payload_open(w, delta, delta_len, &dp)) != WEFT_OK) {
        payload_close(w, &bp);
        return st;
    }
    merge m;
    memset(&m, 0, sizeof m);
    m.r.w = w;
    m.since = since;
    bool ok = view_open(&m.r, bp.p, bp.n, &m.b) && view_open(&m.r, dp.p, dp.n, &m.d) &&
              merge_comps(&m, m.d.sec[0], &m.size, &m.role, &m.ncomps) &&
              merge_comps(&m, m.b.sec[0], &m.bsize, NULL, &m.nb);
    if (ok) {
        /* the base's change tick is what the delta counts from */
        rd t = m.b.sec[7];
        uint32_t tick = 0;
        if (!rd_u32(&t, &tick) || tick != since) {
            ok = bad(&m.r, WEFT_ERR_BAD_FORMAT,
                     "the delta counts from tick %llu, its base was taken at tick %u",
                     (unsigned long long)since, tick);
        }
    }
    if (ok && m.nb > m.ncomps) {
        ok = bad(&m.r, WEFT_ERR_BAD_FORMAT, "the base knows more components than the delta");
    }
    for (uint32_t id = 1; ok && id <= m.nb; id++) {
        if (m.bsize[id] != m.size[id]) {
            ok = bad(&m.r, WEFT_ERR_BAD_FORMAT, "component %u changed size between base and "
                     "delta", id);
        }
    }
    /* flags of the delta's components: NO_CHANGE_TICKS tells whether a
     * sparse set carries ticks (role bit 2) */
    if (ok) {
        rd s = m.d.sec[0];
        uint32_t n = 0;
        uint32_t zero = 0;
        rd_u32(&s, &n);
        rd_u32(&s, &zero);
        for (uint32_t i = 0; i < n && i < m.ncomps; i++) {
            uint32_t f[6] = {0, 0, 0, 0, 0, 0};
            const char *name = NULL;
            uint32_t len = 0;
            for (int k = 0; k < 6; k++) {
                rd_u32(&s, &f[k]);
            }
            rd_str(&s, &name, &len);
            if (f[4] & WEFT_COMPONENT_NO_CHANGE_TICKS) {
                m.role[i + 1] |= 2u;
            }
        }
    }
    ok = ok && merge_index_base(&m);
    uint32_t dflags;
    memcpy(&dflags, (const uint8_t *)delta + 20, 4);
    bool patch = (dflags & SNAP_FLAG_PATCH) != 0;
    wr o;
    memset(&o, 0, sizeof o);
    ok = ok && (patch ? merge_write_patch(&o, &m) : merge_write(&o, &m));
    if (ok) {
        size_t total = SNAP_HEADER + o.len;
        *out_len = total;
        if (!buf) {
            st = WEFT_ERR_CAPACITY;
        } else if (cap < total) {
            st = wf_error(w, WEFT_ERR_CAPACITY, "snapshot merge: needs %zu bytes, the buffer "
                          "has %zu", total, cap);
        } else {
            uint8_t *b = buf;
            size_t payload = o.len;
            write_header(b, payload, 0, 0, 0, 0);
            XXH3_64bits_reset(&o.hs);
            XXH3_64bits_update(&o.hs, b, SNAP_HEADER);
            o.buf = b + SNAP_HEADER;
            o.len = 0;
            /* the measuring pass checked everything */
            if (patch) {
                merge_write_patch(&o, &m);
            } else {
                merge_write(&o, &m);
            }
            uint64_t sum = XXH3_64bits_digest(&o.hs);
            memcpy(b + 32, &sum, 8);
        }
    } else {
        st = m.r.st;
    }
    scratch_free(&m.r, m.size, (size_t)m.ncomps + 1, sizeof *m.size);
    scratch_free(&m.r, m.role, (size_t)m.ncomps + 1, 1);
    scratch_free(&m.r, m.bsize, (size_t)m.nb + 1, sizeof *m.bsize);
    scratch_free(&m.r, m.loc_tab, m.bcount, sizeof *m.loc_tab);
    scratch_free(&m.r, m.loc_row, m.bcount, sizeof *m.loc_row);
    scratch_free(&m.r, m.slot, m.bcount, sizeof *m.slot);
    scratch_free(&m.r, m.tabs, m.ntabs, sizeof *m.tabs);
    if (m.cols) {
        wf_free(&w->alloc, m.cols, (size_t)m.cap_cols * sizeof *m.cols, 16);
    }
    payload_close(w, &bp);
    payload_close(w, &dp);
    return st;
}

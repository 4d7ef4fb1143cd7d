/* src/reflect/snapshot_merge.c - a delta snapshot folded into its base.
 * SPDX-License-Identifier: MIT
 *
 * The merge reads both payloads as sections (their headers checked by
 * snapshot_validate.c) and writes a full snapshot: the delta's rows where
 * it has them, the base's elsewhere. A patch delta (written from the
 * change journal) names rows of unchanged tables; any other delta
 * carries whole tables with an inclusion bitmap per column.
 */
#include "reflect/snapshot_internal.h"

static const uint32_t sec_tags[WF_SNAP_SECTIONS] = {
    WF_SNAP_SEC_COMP, WF_SNAP_SEC_ENTS, WF_SNAP_SEC_ARCH, WF_SNAP_SEC_TABL, WF_SNAP_SEC_SPRS,
    WF_SNAP_SEC_RESO, WF_SNAP_SEC_MSGS, WF_SNAP_SEC_TICK, WF_SNAP_SEC_QRYS, WF_SNAP_SEC_SCHD};

/* The ten sections of a payload. */
typedef struct view {
    wf_sr sec[WF_SNAP_SECTIONS];
} view;

static bool view_open(wf_restore *r, const uint8_t *payload, size_t len, view *v)
{
    wf_sr in = {payload, len, 0};
    for (uint32_t k = 0; k < WF_SNAP_SECTIONS; k++) {
        if (!wf_snap_section(r, &in, sec_tags[k], &v->sec[k])) {
            return false;
        }
    }
    if (in.pos != in.len) {
        return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "%zu bytes follow the last section",
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
    wf_restore r;             /* error slot and scratch allocator */
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

static void run_put(wf_sw *o, merge *m, const uint8_t *p, size_t n)
{
    if (m->run && m->run + m->run_len == p) {
        m->run_len += n;
        return;
    }
    if (m->run_len) {
        wf_sw_put(o, m->run, m->run_len);
    }
    m->run = p;
    m->run_len = n;
}

static void run_flush(wf_sw *o, merge *m)
{
    if (m->run_len) {
        wf_sw_put(o, m->run, m->run_len);
    }
    m->run = NULL;
    m->run_len = 0;
}

/* Reads a component table: sizes and roles by id. */
static bool merge_comps(merge *m, wf_sr s, uint32_t **size, uint8_t **role, uint32_t *n)
{
    uint32_t zero;
    if (!wf_sr_u32(&s, n) || !wf_sr_u32(&s, &zero) || *n > WF_MAX_COMPONENTS || *n > s.len / 32) {
        return WF_SNAP_TRUNC(&m->r, "component table");
    }
    *size = wf_snap_scratch(&m->r, (size_t)*n + 1, sizeof **size);
    if (role) {
        *role = wf_snap_scratch(&m->r, (size_t)*n + 1, 1);
    }
    if (!*size || (role && !*role)) {
        return false;
    }
    for (uint32_t i = 0; i < *n; i++) {
        uint32_t f[6];
        const char *name;
        uint32_t len;
        for (int k = 0; k < 6; k++) {
            if (!wf_sr_u32(&s, &f[k])) {
                return WF_SNAP_TRUNC(&m->r, "component table");
            }
        }
        if (!wf_sr_str(&s, &name, &len) || f[0] != i + 1 || f[1] > WF_MAX_COMPONENT_SIZE) {
            return WF_SNAP_TRUNC(&m->r, "component table");
        }
        (*size)[f[0]] = f[1];
        if (role) {
            (*role)[f[0]] = (uint8_t)(f[5] == WF_SNAP_ROLE_REL_LIST);
        }
    }
    return true;
}

/* Skips one column's values in a full section (relationship lists are
 * walked). */
static bool skip_values(merge *m, wf_sr *s, uint32_t size, bool rel, uint32_t rows,
                        const uint8_t **vals)
{
    *vals = s->p + s->pos;
    if (rel) {
        *vals = NULL;
        for (uint32_t k = 0; k < rows; k++) {
            uint32_t cnt;
            uint32_t zero;
            if (!wf_sr_u32(s, &cnt) || !wf_sr_u32(s, &zero) || !wf_sr_array(s, cnt, 8)) {
                return WF_SNAP_TRUNC(&m->r, "relationship list");
            }
        }
        return true;
    }
    if (size && rows && (!wf_sr_array(s, rows, size) || !wf_sr_pad(s))) {
        return WF_SNAP_TRUNC(&m->r, "column values");
    }
    return true;
}

/* Indexes the base's tables: where each live entity's row is. */
static bool merge_index_base(merge *m)
{
    wf_sr e = m->b.sec[1];
    uint32_t free_len;
    uint32_t retired;
    uint32_t zero;
    if (!wf_sr_u32(&e, &m->bcount) || !wf_sr_u32(&e, &free_len) || !wf_sr_u32(&e, &retired) ||
        !wf_sr_u32(&e, &zero) || m->bcount > e.len / sizeof(wf_record)) {
        return WF_SNAP_TRUNC(&m->r, "base entity index");
    }
    m->loc_tab = wf_snap_scratch(&m->r, m->bcount, sizeof *m->loc_tab);
    m->loc_row = wf_snap_scratch(&m->r, m->bcount, sizeof *m->loc_row);
    m->slot = wf_snap_scratch(&m->r, m->bcount, sizeof *m->slot);
    if (m->bcount && (!m->loc_tab || !m->loc_row || !m->slot)) {
        return false;
    }
    wf_sr s = m->b.sec[3];
    if (!wf_sr_u32(&s, &m->ntabs) || !wf_sr_u32(&s, &zero) || m->ntabs > s.len / 16) {
        return WF_SNAP_TRUNC(&m->r, "base tables");
    }
    m->tabs = wf_snap_scratch(&m->r, m->ntabs, sizeof *m->tabs);
    if (m->ntabs && !m->tabs) {
        return false;
    }
    for (uint32_t t = 0; t < m->ntabs; t++) {
        mtab *tb = &m->tabs[t];
        if (!wf_sr_u32(&s, &tb->rows) || !wf_sr_u32(&s, &tb->ncols) ||
            !(tb->ents = wf_sr_array(&s, tb->rows, 8)) || tb->ncols > m->nb) {
            return WF_SNAP_TRUNC(&m->r, "base table");
        }
        for (uint32_t row = 0; row < tb->rows; row++) {
            uint64_t ent;
            memcpy(&ent, tb->ents + (size_t)row * 8, 8);
            if ((uint32_t)ent >= m->bcount) {
                return wf_snap_bad(&m->r, WEFT_ERR_BAD_FORMAT, "base table row names index %u",
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
                return wf_snap_bad(&m->r, WEFT_ERR_OUT_OF_MEMORY, "out of memory merging");
            }
            m->cols = data;
            m->cap_cols = cap;
        }
        tb->col0 = m->ncols;
        for (uint32_t i = 0; i < tb->ncols; i++) {
            mcol *c = &m->cols[m->ncols++];
            uint32_t has;
            if (!wf_sr_u32(&s, &c->id) || !wf_sr_u32(&s, &has) || c->id == 0 || c->id > m->nb) {
                return WF_SNAP_TRUNC(&m->r, "base column");
            }
            bool rel = c->id <= m->ncomps && (m->role[c->id] & 1u);
            c->raw = s.p + s.pos;
            if (!skip_values(m, &s, m->bsize[c->id], rel, tb->rows, &c->vals)) {
                return false;
            }
            c->raw_len = (size_t)(s.p + s.pos - c->raw);
            c->ticks = has ? wf_sr_array(&s, tb->rows, sizeof(weft_ticks)) : NULL;
            if (has && !c->ticks) {
                return WF_SNAP_TRUNC(&m->r, "base ticks");
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

static bool merge_column(wf_sw *o, merge *m, wf_sr *s, uint32_t id, uint32_t has, uint32_t rows,
                         base_fn from_base, void *ctx)
{
    if (id == 0 || id > m->ncomps) {
        return WF_SNAP_TRUNC(&m->r, "delta column");
    }
    uint32_t size = m->size[id];
    const uint8_t *bits = wf_sr_array(s, ((uint64_t)rows + 63) / 64, 8);
    if (!bits) {
        return WF_SNAP_TRUNC(&m->r, "delta bitmap");
    }
    if (m->role[id] & 1u) { /* relationship lists: always whole */
        const uint8_t *start = s->p + s->pos;
        const uint8_t *vals;
        if (!skip_values(m, s, size, true, rows, &vals)) {
            return false;
        }
        wf_sw_put(o, start, (size_t)(s->p + s->pos - start));
        if (has) {
            const uint8_t *t = wf_sr_array(s, rows, sizeof(weft_ticks));
            if (!t) {
                return WF_SNAP_TRUNC(&m->r, "delta ticks");
            }
            wf_sw_put(o, t, (size_t)rows * sizeof(weft_ticks));
        }
        return true;
    }
    uint32_t changed = 0;
    for (uint32_t r = 0; r < rows; r++) {
        changed += bit_at(bits, r) ? 1u : 0u;
    }
    const uint8_t *dv = wf_sr_array(s, changed, size);
    if (!dv || !wf_sr_pad(s)) {
        return WF_SNAP_TRUNC(&m->r, "delta values");
    }
    const uint8_t *dt = has ? wf_sr_array(s, changed, sizeof(weft_ticks)) : NULL;
    if (has && !dt) {
        return WF_SNAP_TRUNC(&m->r, "delta ticks");
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
                return wf_snap_bad(
                    &m->r, WEFT_ERR_BAD_FORMAT,
                    "the delta keeps a value of component %u its base lacks (a delta "
                    "of another base?)",
                    id);
            }
            run_put(o, m, p, w);
        }
        run_flush(o, m);
        if (pass == 0) {
            wf_sw_pad(o);
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

static void put_raw_section(wf_sw *o, uint32_t tag, const wf_sr *s)
{
    wf_sw_sec_begin(o, tag);
    wf_sw_put(o, s->p, s->len);
    wf_sw_sec_end(o);
}

/* Finds the base's sparse set of component id. */
static bool base_sparse(merge *m, uint32_t id, sparse_ctx *c)
{
    wf_sr s = m->b.sec[4];
    uint32_t n;
    uint32_t zero;
    c->bowners = NULL;
    c->bcount = 0;
    if (!wf_sr_u32(&s, &n) || !wf_sr_u32(&s, &zero)) {
        return WF_SNAP_TRUNC(&m->r, "base sparse list");
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t sid;
        uint32_t cnt;
        if (!wf_sr_u32(&s, &sid) || !wf_sr_u32(&s, &cnt) || sid == 0 || sid > m->nb) {
            return WF_SNAP_TRUNC(&m->r, "base sparse set");
        }
        const uint8_t *owners = wf_sr_array(&s, cnt, 8);
        const uint8_t *vals;
        if (!owners || !wf_sr_pad(&s) || !skip_values(m, &s, m->bsize[sid], false, cnt, &vals)) {
            return WF_SNAP_TRUNC(&m->r, "base sparse set");
        }
        /* sparse sets carry ticks unless the component has none */
        const uint8_t *ticks = NULL;
        if (!(m->role[sid] & 2u)) {
            ticks = wf_sr_array(&s, cnt, sizeof(weft_ticks));
            if (!ticks) {
                return WF_SNAP_TRUNC(&m->r, "base sparse ticks");
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
static bool merge_patch_column(wf_sw *o, merge *m, wf_sr *s, uint32_t id, uint32_t has,
                               uint32_t rows, const uint8_t *bvals, const uint8_t *bticks,
                               const uint8_t *braw, size_t braw_len)
{
    uint32_t np;
    uint32_t zero;
    if (!wf_sr_u32(s, &np) || !wf_sr_u32(s, &zero) || zero != 0) {
        return WF_SNAP_TRUNC(&m->r, "patch column");
    }
    uint32_t size = m->size[id];
    if (m->role[id] & 1u) { /* relationship lists change only structurally */
        if (np != 0) {
            return wf_snap_bad(&m->r, WEFT_ERR_BAD_FORMAT, "a patch of relationship list %u", id);
        }
        wf_sw_put(o, braw, braw_len);
        if (has) {
            wf_sw_put(o, bticks, (size_t)rows * sizeof(weft_ticks));
        }
        return true;
    }
    if (np == WF_SNAP_PATCH_WHOLE) {
        const uint8_t *vals;
        const uint8_t *start = s->p + s->pos;
        if (has || !skip_values(m, s, size, false, rows, &vals)) {
            return has ? wf_snap_bad(&m->r, WEFT_ERR_BAD_FORMAT,
                                     "a whole patch of a column with "
                                     "ticks")
                       : false;
        }
        wf_sw_put(o, start, (size_t)(s->p + s->pos - start));
        return true;
    }
    if (np > rows) {
        return wf_snap_bad(&m->r, WEFT_ERR_BAD_FORMAT, "a patch of %u rows in a column of %u", np,
                           rows);
    }
    const uint8_t *idx = np ? wf_sr_array(s, np, 4) : NULL;
    if (np && (!idx || !wf_sr_pad(s))) {
        return WF_SNAP_TRUNC(&m->r, "patch rows");
    }
    const uint8_t *dv = np && size ? wf_sr_array(s, np, size) : NULL;
    if (np && size && (!dv || !wf_sr_pad(s))) {
        return WF_SNAP_TRUNC(&m->r, "patch values");
    }
    const uint8_t *dt = np && has ? wf_sr_array(s, np, sizeof(weft_ticks)) : NULL;
    if (np && has && !dt) {
        return WF_SNAP_TRUNC(&m->r, "patch ticks");
    }
    uint32_t prev = 0;
    for (uint32_t k = 0; k < np; k++) {
        uint32_t r;
        memcpy(&r, idx + (size_t)k * 4, 4);
        if (r >= rows || (k > 0 && r <= prev)) {
            return wf_snap_bad(&m->r, WEFT_ERR_BAD_FORMAT, "patch row %u out of order or range", r);
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
            wf_sw_pad(o);
        }
    }
    return true;
}

/* A patch delta onto its base: the base's index and layout, the delta's
 * component and archetype tables, changed rows, resources, messages and
 * tick state. */
static bool merge_write_patch(wf_sw *o, merge *m)
{
    o->nsec = 0;
    put_raw_section(o, WF_SNAP_SEC_COMP, &m->d.sec[0]);
    wf_sr de = m->d.sec[1];
    wf_sr be = m->b.sec[1];
    const uint8_t *dh = wf_sr_take(&de, 16);
    const uint8_t *bh = wf_sr_take(&be, 16);
    if (!dh || !bh || memcmp(dh, bh, 16) != 0 || de.pos != de.len) {
        return wf_snap_bad(&m->r, WEFT_ERR_BAD_FORMAT,
                           "the patch delta's entity index does not match its base");
    }
    put_raw_section(o, WF_SNAP_SEC_ENTS, &m->b.sec[1]);
    put_raw_section(o, WF_SNAP_SEC_ARCH, &m->d.sec[2]);
    /* tables: the base's, in its order */
    wf_sr s = m->d.sec[3];
    uint32_t n;
    uint32_t zero;
    if (!wf_sr_u32(&s, &n) || !wf_sr_u32(&s, &zero) || n != m->ntabs) {
        return wf_snap_bad(&m->r, WEFT_ERR_BAD_FORMAT,
                           "the patch delta's tables differ from its "
                           "base's");
    }
    wf_sw_sec_begin(o, WF_SNAP_SEC_TABL);
    wf_sw_u32(o, n);
    wf_sw_u32(o, 0);
    for (uint32_t t = 0; t < n; t++) {
        const mtab *tb = &m->tabs[t];
        uint32_t rows;
        uint32_t ncols;
        if (!wf_sr_u32(&s, &rows) || !wf_sr_u32(&s, &ncols)) {
            return WF_SNAP_TRUNC(&m->r, "patch table");
        }
        if (rows != tb->rows || ncols != tb->ncols) {
            return wf_snap_bad(&m->r, WEFT_ERR_BAD_FORMAT, "patch table %u differs from its base's",
                               t);
        }
        wf_sw_u32(o, rows);
        wf_sw_u32(o, ncols);
        wf_sw_put(o, tb->ents, (size_t)rows * 8);
        for (uint32_t i = 0; i < ncols; i++) {
            const mcol *c = &m->cols[tb->col0 + i];
            uint32_t id;
            uint32_t has;
            if (!wf_sr_u32(&s, &id) || !wf_sr_u32(&s, &has)) {
                return WF_SNAP_TRUNC(&m->r, "patch column");
            }
            if (id != c->id || id > m->ncomps || has != (c->ticks != NULL) ||
                m->size[id] != m->bsize[id]) {
                return wf_snap_bad(&m->r, WEFT_ERR_BAD_FORMAT,
                                   "patch column %u differs from its base's", id);
            }
            wf_sw_u32(o, id);
            wf_sw_u32(o, has);
            if (!merge_patch_column(o, m, &s, id, has, rows, c->vals, c->ticks, c->raw,
                                    c->raw_len)) {
                return false;
            }
        }
    }
    if (s.pos != s.len) {
        return wf_snap_bad(&m->r, WEFT_ERR_BAD_FORMAT, "bytes follow the patch tables");
    }
    wf_sw_sec_end(o);
    /* sparse sets: the base's, in its order */
    s = m->d.sec[4];
    wf_sr b = m->b.sec[4];
    uint32_t bn;
    if (!wf_sr_u32(&s, &n) || !wf_sr_u32(&s, &zero) || !wf_sr_u32(&b, &bn) ||
        !wf_sr_u32(&b, &zero) || n != bn) {
        return wf_snap_bad(&m->r, WEFT_ERR_BAD_FORMAT,
                           "the patch delta's sparse sets differ from "
                           "its base's");
    }
    wf_sw_sec_begin(o, WF_SNAP_SEC_SPRS);
    wf_sw_u32(o, n);
    wf_sw_u32(o, 0);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t id;
        uint32_t cnt;
        uint32_t bid;
        uint32_t bcnt;
        const uint8_t *owners;
        const uint8_t *vals;
        if (!wf_sr_u32(&s, &id) || !wf_sr_u32(&s, &cnt) || !wf_sr_u32(&b, &bid) ||
            !wf_sr_u32(&b, &bcnt) || bid == 0 || bid > m->nb ||
            !(owners = wf_sr_array(&b, bcnt, 8)) || !wf_sr_pad(&b)) {
            return WF_SNAP_TRUNC(&m->r, "patch sparse set");
        }
        if (id != bid || cnt != bcnt || id > m->ncomps || m->size[id] != m->bsize[id]) {
            return wf_snap_bad(&m->r, WEFT_ERR_BAD_FORMAT,
                               "patch sparse set %u differs from its "
                               "base's",
                               id);
        }
        const uint8_t *raw = b.p + b.pos;
        if (!skip_values(m, &b, m->bsize[bid], false, bcnt, &vals)) {
            return false;
        }
        size_t raw_len = (size_t)(b.p + b.pos - raw);
        uint32_t has = m->role[id] & 2u ? 0u : 1u;
        const uint8_t *ticks = has ? wf_sr_array(&b, bcnt, sizeof(weft_ticks)) : NULL;
        if (has && !ticks) {
            return WF_SNAP_TRUNC(&m->r, "base sparse ticks");
        }
        wf_sw_u32(o, id);
        wf_sw_u32(o, cnt);
        wf_sw_put(o, owners, (size_t)cnt * 8);
        if (!merge_patch_column(o, m, &s, id, has, cnt, vals, ticks, raw, raw_len)) {
            return false;
        }
    }
    if (s.pos != s.len) {
        return wf_snap_bad(&m->r, WEFT_ERR_BAD_FORMAT, "bytes follow the patch sparse sets");
    }
    wf_sw_sec_end(o);
    for (uint32_t k = 5; k < WF_SNAP_SECTIONS; k++) {
        put_raw_section(o, sec_tags[k], &m->d.sec[k]);
    }
    return true;
}

/* The delta's tables, each column's rows merged with its base's. */
static bool merge_tables(wf_sw *o, merge *m)
{
    wf_sr s = m->d.sec[3];
    uint32_t n;
    uint32_t zero;
    if (!wf_sr_u32(&s, &n) || !wf_sr_u32(&s, &zero) || n > s.len / 16) {
        return WF_SNAP_TRUNC(&m->r, "delta tables");
    }
    wf_sw_sec_begin(o, WF_SNAP_SEC_TABL);
    wf_sw_u32(o, n);
    wf_sw_u32(o, 0);
    for (uint32_t t = 0; t < n; t++) {
        uint32_t rows;
        uint32_t ncols;
        const uint8_t *ents;
        if (!wf_sr_u32(&s, &rows) || !wf_sr_u32(&s, &ncols) ||
            !(ents = wf_sr_array(&s, rows, 8)) || ncols > m->ncomps) {
            return WF_SNAP_TRUNC(&m->r, "delta table");
        }
        wf_sw_u32(o, rows);
        wf_sw_u32(o, ncols);
        wf_sw_put(o, ents, (size_t)rows * 8);
        for (uint32_t i = 0; i < ncols; i++) {
            uint32_t id;
            uint32_t has;
            if (!wf_sr_u32(&s, &id) || !wf_sr_u32(&s, &has)) {
                return WF_SNAP_TRUNC(&m->r, "delta column");
            }
            wf_sw_u32(o, id);
            wf_sw_u32(o, has);
            tab_ctx c = {ents, id};
            if (!merge_column(o, m, &s, id, has, rows, from_base_table, &c)) {
                return false;
            }
        }
    }
    wf_sw_sec_end(o);
    return true;
}

/* The delta's sparse sets, each merged with the base's set. */
static bool merge_sparse(wf_sw *o, merge *m)
{
    wf_sr s = m->d.sec[4];
    uint32_t n;
    uint32_t zero;
    if (!wf_sr_u32(&s, &n) || !wf_sr_u32(&s, &zero) || n > s.len / 16) {
        return WF_SNAP_TRUNC(&m->r, "delta sparse list");
    }
    wf_sw_sec_begin(o, WF_SNAP_SEC_SPRS);
    wf_sw_u32(o, n);
    wf_sw_u32(o, 0);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t id;
        uint32_t cnt;
        const uint8_t *owners;
        if (!wf_sr_u32(&s, &id) || !wf_sr_u32(&s, &cnt) ||
            !(owners = wf_sr_array(&s, cnt, 8)) || !wf_sr_pad(&s) || id == 0 ||
            id > m->ncomps || id > m->nb) {
            return WF_SNAP_TRUNC(&m->r, "delta sparse set");
        }
        wf_sw_u32(o, id);
        wf_sw_u32(o, cnt);
        wf_sw_put(o, owners, (size_t)cnt * 8);
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
    wf_sw_sec_end(o);
    return true;
}

/* The base's ticks and value of resource `id` of `size` bytes, which the
 * delta keeps. */
static bool base_resource(merge *m, uint32_t id, uint32_t size, const uint8_t **ticks,
                          const uint8_t **val)
{
    wf_sr b = m->b.sec[5];
    uint32_t bn;
    uint32_t zero;
    if (!wf_sr_u32(&b, &bn) || !wf_sr_u32(&b, &zero)) {
        return WF_SNAP_TRUNC(&m->r, "base resources");
    }
    for (uint32_t j = 0; j < bn && !*ticks; j++) {
        uint32_t bid;
        uint32_t flag;
        const uint8_t *bt;
        if (!wf_sr_u32(&b, &bid) || !wf_sr_u32(&b, &flag) || flag != 0 || bid == 0 ||
            bid > m->nb || !(bt = wf_sr_take(&b, sizeof(weft_ticks)))) {
            return WF_SNAP_TRUNC(&m->r, "base resource");
        }
        const uint8_t *bv = m->bsize[bid] ? wf_sr_take(&b, m->bsize[bid]) : NULL;
        if (m->bsize[bid] && (!bv || !wf_sr_pad(&b))) {
            return WF_SNAP_TRUNC(&m->r, "base resource");
        }
        if (bid == id && m->bsize[bid] == size) {
            *ticks = bt;
            *val = bv;
        }
    }
    if (!*ticks) {
        return wf_snap_bad(&m->r, WEFT_ERR_BAD_FORMAT,
                           "the delta keeps resource %u, which its base lacks", id);
    }
    return true;
}

/* The delta's resources; those it keeps (flag 1) come from the base. */
static bool merge_resources(wf_sw *o, merge *m)
{
    wf_sr s = m->d.sec[5];
    uint32_t n;
    uint32_t zero;
    if (!wf_sr_u32(&s, &n) || !wf_sr_u32(&s, &zero) || n > s.len / 8) {
        return WF_SNAP_TRUNC(&m->r, "delta resources");
    }
    wf_sw_sec_begin(o, WF_SNAP_SEC_RESO);
    wf_sw_u32(o, n);
    wf_sw_u32(o, 0);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t id;
        uint32_t keep;
        if (!wf_sr_u32(&s, &id) || !wf_sr_u32(&s, &keep) || id == 0 || id > m->ncomps) {
            return WF_SNAP_TRUNC(&m->r, "delta resource");
        }
        uint32_t size = m->size[id];
        const uint8_t *ticks = NULL;
        const uint8_t *val = NULL;
        if (!keep) {
            ticks = wf_sr_take(&s, sizeof(weft_ticks));
            val = size ? wf_sr_take(&s, size) : NULL;
            if (!ticks || (size && (!val || !wf_sr_pad(&s)))) {
                return WF_SNAP_TRUNC(&m->r, "delta resource");
            }
        } else if (!base_resource(m, id, size, &ticks, &val)) {
            return false;
        }
        wf_sw_u32(o, id);
        wf_sw_u32(o, 0);
        wf_sw_put(o, ticks, sizeof(weft_ticks));
        if (size) {
            wf_sw_put(o, val, size);
            wf_sw_pad(o);
        }
    }
    wf_sw_sec_end(o);
    return true;
}

/* A full snapshot from a (non-patch) delta and its base: the delta's
 * component, entity and archetype sections and those after the resources
 * as they are; tables, sparse sets and resources merged. */
static bool merge_write(wf_sw *o, merge *m)
{
    o->nsec = 0;
    for (uint32_t k = 0; k < 3; k++) {
        put_raw_section(o, sec_tags[k], &m->d.sec[k]);
    }
    if (!merge_tables(o, m) || !merge_sparse(o, m) || !merge_resources(o, m)) {
        return false;
    }
    for (uint32_t k = 6; k < WF_SNAP_SECTIONS; k++) {
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
    wf_snap_payload bp = {NULL, 0, NULL};
    wf_snap_payload dp = {NULL, 0, NULL};
    weft_status st = wf_snap_check_header(w, base, base_len, 0, &bsince);
    if (st != WEFT_OK ||
        (st = wf_snap_check_header(w, delta, delta_len, WF_SNAP_FLAG_DELTA, &since)) != WEFT_OK) {
        return st;
    }
    if ((st = wf_snap_payload_open(w, base, base_len, &bp)) != WEFT_OK ||
        (st = wf_snap_payload_open(w, delta, delta_len, &dp)) != WEFT_OK) {
        wf_snap_payload_close(w, &bp);
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
        wf_sr t = m.b.sec[7];
        uint32_t tick = 0;
        if (!wf_sr_u32(&t, &tick) || tick != since) {
            ok = wf_snap_bad(&m.r, WEFT_ERR_BAD_FORMAT,
                             "the delta counts from tick %llu, its base was taken at tick %u",
                             (unsigned long long)since, tick);
        }
    }
    if (ok && m.nb > m.ncomps) {
        ok =
            wf_snap_bad(&m.r, WEFT_ERR_BAD_FORMAT, "the base knows more components than the delta");
    }
    for (uint32_t id = 1; ok && id <= m.nb; id++) {
        if (m.bsize[id] != m.size[id]) {
            ok = wf_snap_bad(&m.r, WEFT_ERR_BAD_FORMAT,
                             "component %u changed size between base and "
                             "delta",
                             id);
        }
    }
    /* flags of the delta's components: NO_CHANGE_TICKS tells whether a
     * sparse set carries ticks (role bit 2) */
    if (ok) {
        wf_sr s = m.d.sec[0];
        uint32_t n = 0;
        uint32_t zero = 0;
        wf_sr_u32(&s, &n);
        wf_sr_u32(&s, &zero);
        for (uint32_t i = 0; i < n && i < m.ncomps; i++) {
            uint32_t f[6] = {0, 0, 0, 0, 0, 0};
            const char *name = NULL;
            uint32_t len = 0;
            for (int k = 0; k < 6; k++) {
                wf_sr_u32(&s, &f[k]);
            }
            wf_sr_str(&s, &name, &len);
            if (f[4] & WEFT_COMPONENT_NO_CHANGE_TICKS) {
                m.role[i + 1] |= 2u;
            }
        }
    }
    ok = ok && merge_index_base(&m);
    uint32_t dflags;
    memcpy(&dflags, (const uint8_t *)delta + WF_SNAP_OFF_FLAGS, 4);
    bool patch = (dflags & WF_SNAP_FLAG_PATCH) != 0;
    wf_sw o;
    memset(&o, 0, sizeof o);
    ok = ok && (patch ? merge_write_patch(&o, &m) : merge_write(&o, &m));
    if (ok) {
        size_t total = WF_SNAP_HEADER + o.len;
        *out_len = total;
        if (!buf) {
            st = WEFT_ERR_CAPACITY;
        } else if (cap < total) {
            st = wf_error(w, WEFT_ERR_CAPACITY, "snapshot merge: needs %zu bytes, the buffer "
                          "has %zu", total, cap);
        } else {
            uint8_t *b = buf;
            size_t payload = o.len;
            wf_snap_write_header(b, payload, 0, 0, 0, 0);
            XXH3_64bits_reset(&o.hs);
            XXH3_64bits_update(&o.hs, b, WF_SNAP_HEADER);
            o.buf = b + WF_SNAP_HEADER;
            o.len = 0;
            /* the measuring pass checked everything */
            if (patch) {
                merge_write_patch(&o, &m);
            } else {
                merge_write(&o, &m);
            }
            uint64_t sum = XXH3_64bits_digest(&o.hs);
            memcpy(b + WF_SNAP_OFF_CHECKSUM, &sum, 8);
        }
    } else {
        st = m.r.st;
    }
    wf_snap_scratch_free(&m.r, m.size, (size_t)m.ncomps + 1, sizeof *m.size);
    wf_snap_scratch_free(&m.r, m.role, (size_t)m.ncomps + 1, 1);
    wf_snap_scratch_free(&m.r, m.bsize, (size_t)m.nb + 1, sizeof *m.bsize);
    wf_snap_scratch_free(&m.r, m.loc_tab, m.bcount, sizeof *m.loc_tab);
    wf_snap_scratch_free(&m.r, m.loc_row, m.bcount, sizeof *m.loc_row);
    wf_snap_scratch_free(&m.r, m.slot, m.bcount, sizeof *m.slot);
    wf_snap_scratch_free(&m.r, m.tabs, m.ntabs, sizeof *m.tabs);
    if (m.cols) {
        wf_free(&w->alloc, m.cols, (size_t)m.cap_cols * sizeof *m.cols, 16);
    }
    wf_snap_payload_close(w, &bp);
    wf_snap_payload_close(w, &dp);
    return st;
}

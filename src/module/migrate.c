/* src/module/migrate.c - layout migration through type descriptions (see
 * migrate.h).
 * SPDX-License-Identifier: MIT
 */
#include "module/migrate.h"
#include "query/query.h"
#include "storage/sparse_set.h"
#include "storage/table.h"

#include <stdio.h>
#include <string.h>

#define MIG_ALIGN _Alignof(void *)

/* ---- which conversions widen ---- */

static bool kind_signed(weft_kind k)
{
    return k >= WEFT_KIND_I8 && k <= WEFT_KIND_I64;
}

static bool kind_unsigned(weft_kind k)
{
    return k >= WEFT_KIND_U8 && k <= WEFT_KIND_U64;
}

bool wf_mig_widens(weft_kind from, weft_kind to)
{
    uint32_t fs = wf_kind_size(from), ts = wf_kind_size(to);
    if (from == to) {
        return from != WEFT_KIND_NONE && from != WEFT_KIND_STRUCT;
    }
    if (from == WEFT_KIND_BOOL) {
        return kind_signed(to) || kind_unsigned(to);
    }
    if (kind_signed(from)) {
        /* floats hold integers of up to 24 (f32) and 53 (f64) bits exactly */
        return (kind_signed(to) && ts > fs) || (to == WEFT_KIND_F32 && fs <= 2) ||
               (to == WEFT_KIND_F64 && fs <= 4);
    }
    if (kind_unsigned(from)) {
        return ((kind_unsigned(to) || kind_signed(to)) && ts > fs) ||
               (to == WEFT_KIND_F32 && fs <= 2) || (to == WEFT_KIND_F64 && fs <= 4);
    }
    return from == WEFT_KIND_F32 && to == WEFT_KIND_F64;
}

/* ---- the plan ---- */

typedef struct mig_ctx {
    weft_world *w;
    const wf_type_info *ti;
    wf_mig_plan *p;
    const char *who;
    char path[WF_REFLECT_MAX_PATH];
    weft_status st;
} mig_ctx;

static bool refuse(mig_ctx *x, weft_status st, const char *fmt, const char *a, const char *b)
{
    char why[160];
    snprintf(why, sizeof why, fmt, a, b);
    x->st = wf_error(x->w, st, "%s: component '%s' cannot be migrated to its new layout: "
                     "field '%s' %s", x->who, x->ti->name, x->path, why);
    return false;
}

static bool add_op(mig_ctx *x, uint32_t so, uint32_t dof, uint32_t count, uint32_t bytes,
                   weft_kind sk, weft_kind dk)
{
    wf_mig_plan *p = x->p;
    if (sk == WEFT_KIND_NONE && p->nops > 0) {
        wf_mig_op *last = &p->ops[p->nops - 1];
        if (last->src_kind == WEFT_KIND_NONE && last->src_off + last->bytes == so &&
            last->dst_off + last->bytes == dof) {
            last->bytes += bytes; /* contiguous on both sides: one copy */
            return true;
        }
    }
    if (!wf_grow(&x->w->alloc, (void **)&p->ops, &p->cap_ops, (uint64_t)p->nops + 1,
                 sizeof *p->ops, MIG_ALIGN)) {
        x->st = wf_error(x->w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", x->who);
        return false;
    }
    wf_mig_op *op = &p->ops[p->nops++];
    op->src_off = so;
    op->dst_off = dof;
    op->count = count;
    op->bytes = bytes;
    op->src_kind = sk;
    op->dst_kind = dk;
    return true;
}

static bool plan_type(mig_ctx *x, const wf_rtype *ot, const wf_rtype *nt, uint32_t ob,
                      uint32_t nb);

static bool enum_kept(const wf_rfield *of, const wf_rfield *nf, const char **missing)
{
    for (uint32_t i = 0; i < of->enum_count; i++) {
        bool found = false;
        for (uint32_t j = 0; j < nf->enum_count && !found; j++) {
            found = strcmp(of->enums[i].name, nf->enums[j].name) == 0 &&
                    of->enums[i].value == nf->enums[j].value;
        }
        if (!found) {
            *missing = of->enums[i].name;
            return false;
        }
    }
    return true;
}

static bool plan_field(mig_ctx *x, const wf_rfield *of, const wf_rfield *nf, uint32_t ob,
                       uint32_t nb)
{
    uint32_t so = ob + of->offset, dof = nb + nf->offset;
    char a[32], b[32];
    if (of->kind == WEFT_KIND_STRING || nf->kind == WEFT_KIND_STRING) {
        if (of->kind != nf->kind) {
            return refuse(x, WEFT_ERR_UNSUPPORTED, "changes from %s to %s (only widening "
                          "numeric conversions are migrated)", wf_kind_name(of->kind),
                          wf_kind_name(nf->kind));
        }
        if (nf->elem_size < of->elem_size) {
            snprintf(a, sizeof a, "%u", of->elem_size);
            snprintf(b, sizeof b, "%u", nf->elem_size);
            return refuse(x, WEFT_ERR_UNSUPPORTED, "shrinks from %s to %s bytes", a, b);
        }
        return add_op(x, so, dof, 1, of->elem_size, WEFT_KIND_NONE, WEFT_KIND_NONE);
    }
    if (nf->count < of->count) {
        snprintf(a, sizeof a, "%u", of->count);
        snprintf(b, sizeof b, "%u", nf->count);
        return refuse(x, WEFT_ERR_UNSUPPORTED, "shrinks from %s to %s elements", a, b);
    }
    uint32_t n = of->count; /* a longer array: its new elements keep the default */
    if (of->kind == WEFT_KIND_STRUCT || nf->kind == WEFT_KIND_STRUCT) {
        if (of->kind != nf->kind) {
            return refuse(x, WEFT_ERR_UNSUPPORTED, "changes from %s to %s (only widening "
                          "numeric conversions are migrated)", wf_kind_name(of->kind),
                          wf_kind_name(nf->kind));
        }
        size_t len = strlen(x->path);
        for (uint32_t i = 0; i < n; i++) {
            if (of->count > 1) {
                snprintf(x->path + len, sizeof x->path - len, "[%u]", i);
            }
            if (!plan_type(x, of->sub, nf->sub, so + i * of->elem_size,
                           dof + i * nf->elem_size)) {
                return false;
            }
            x->path[len] = '\0';
        }
        return true;
    }
    weft_kind sk = of->kind, dk = nf->kind;
    if (sk == WEFT_KIND_ENUM || dk == WEFT_KIND_ENUM) {
        const char *missing = NULL;
        if (sk != dk) {
            return refuse(x, WEFT_ERR_UNSUPPORTED, "changes from %s to %s (only widening "
                          "numeric conversions are migrated)", wf_kind_name(sk),
                          wf_kind_name(dk));
        }
        if (!enum_kept(of, nf, &missing)) {
            return refuse(x, WEFT_ERR_UNSUPPORTED, "loses the enum value '%s'%s", missing, "");
        }
        sk = of->base;
        dk = nf->base;
    }
    if (sk == dk) {
        return add_op(x, so, dof, n, n * of->elem_size, WEFT_KIND_NONE, WEFT_KIND_NONE);
    }
    if (!wf_mig_widens(sk, dk)) {
        return refuse(x, WEFT_ERR_UNSUPPORTED, "changes from %s to %s (only widening numeric "
                      "conversions are migrated)", wf_kind_name(sk), wf_kind_name(dk));
    }
    return add_op(x, so, dof, n, 0, sk, dk);
}

static bool plan_type(mig_ctx *x, const wf_rtype *ot, const wf_rtype *nt, uint32_t ob,
                      uint32_t nb)
{
    size_t len = strlen(x->path);
    for (uint32_t j = 0; j < nt->field_count; j++) {
        const wf_rfield *nf = &nt->fields[j];
        const wf_rfield *of = NULL;
        for (uint32_t i = 0; i < ot->field_count && !of; i++) {
            if (strcmp(ot->fields[i].name, nf->name) == 0) {
                of = &ot->fields[i];
            }
        }
        if (!of) {
            continue; /* a new field: the default */
        }
        snprintf(x->path + len, sizeof x->path - len, "%s%s", len ? "." : "", nf->name);
        if (!plan_field(x, of, nf, ob, nb)) {
            return false;
        }
        x->path[len] = '\0';
    }
    return true;
}

weft_status wf_mig_plan_build(weft_world *w, const wf_type_info *ti, const wf_rdesc *old,
                              const wf_rdesc *nw, uint32_t new_size, uint32_t new_align,
                              const uint8_t *defaults, wf_mig_plan *p, const char *who)
{
    p->id = ti->id;
    p->old_size = ti->size;
    p->old_align = ti->align;
    p->new_size = new_size;
    p->new_align = new_align;
    p->defaults = defaults;
    mig_ctx x;
    memset(&x, 0, sizeof x);
    x.w = w;
    x.ti = ti;
    x.p = p;
    x.who = who;
    if (!plan_type(&x, old->root, nw->root, 0, 0)) {
        return x.st;
    }
    return WEFT_OK;
}

/* ---- blocks ---- */

static size_t block_align(uint32_t align)
{
    return align > WF_COLUMN_MIN_ALIGN ? align : WF_COLUMN_MIN_ALIGN;
}

static bool add_block(weft_world *w, wf_mig_plan *p, wf_column *col, uint32_t cap,
                      uint32_t rows)
{
    if (!wf_grow(&w->alloc, (void **)&p->blocks, &p->cap_blocks, (uint64_t)p->nblocks + 1,
                 sizeof *p->blocks, MIG_ALIGN)) {
        return false;
    }
    void *data = NULL;
    if (cap > 0) {
        if ((uint64_t)cap * p->new_size > WF_ALLOC_MAX) {
            return false;
        }
        data = col ? wf_alloc(&w->alloc, (size_t)cap * p->new_size, block_align(p->new_align))
                   : wf_alloc(&w->alloc, p->new_size, p->new_align);
        if (!data) {
            return false;
        }
    }
    wf_mig_block *b = &p->blocks[p->nblocks++];
    b->col = col;
    b->data = data;
    b->cap = cap;
    b->rows = rows;
    return true;
}

weft_status wf_mig_prepare(weft_world *w, wf_mig_plan *p, const char *who)
{
    wf_type_info *ti = wf_registry_get(&w->registry, p->id);
    bool ok = true;
    for (uint32_t t = 0; ok && t < w->graph.table_count; t++) {
        wf_table *tb = w->graph.tables[t];
        wf_column *c = wf_table_column(tb, p->id);
        if (c) {
            ok = add_block(w, p, c, c->data_cap, tb->count);
        }
    }
    if (ok && ti->sparse) {
        ok = add_block(w, p, &ti->sparse->dense, ti->sparse->dense.data_cap, ti->sparse->count);
    }
    if (ok && ti->res_value) {
        ok = add_block(w, p, NULL, 1, 1);
    }
    if (!ok) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory migrating component '%s'",
                        who, ti->name);
    }
    return WEFT_OK;
}

/* ---- conversion ---- */

/* Converts `count` values per row for `rows` rows: src row stride ss,
 * dst row stride ds. One loop per (source, destination) type pair. */
#define MIG_LOOP(ST, DT)                                                              \
    for (uint32_t r = 0; r < rows; r++) {                                             \
        const uint8_t *s = src + (size_t)r * ss;                                      \
        uint8_t *d = dst + (size_t)r * ds;                                            \
        for (uint32_t k = 0; k < count; k++) {                                        \
            ST v;                                                                     \
            memcpy(&v, s + k * sizeof(ST), sizeof v);                                 \
            DT o = (DT)v;                                                             \
            memcpy(d + k * sizeof(DT), &o, sizeof o);                                 \
        }                                                                             \
    }

#define MIG_DST(ST)                                                                   \
    switch (dk) {                                                                     \
    case WEFT_KIND_I8: MIG_LOOP(ST, int8_t) break;                                    \
    case WEFT_KIND_I16: MIG_LOOP(ST, int16_t) break;                                  \
    case WEFT_KIND_I32: MIG_LOOP(ST, int32_t) break;                                  \
    case WEFT_KIND_I64: MIG_LOOP(ST, int64_t) break;                                  \
    case WEFT_KIND_U8: MIG_LOOP(ST, uint8_t) break;                                   \
    case WEFT_KIND_U16: MIG_LOOP(ST, uint16_t) break;                                 \
    case WEFT_KIND_U32: MIG_LOOP(ST, uint32_t) break;                                 \
    case WEFT_KIND_U64: MIG_LOOP(ST, uint64_t) break;                                 \
    case WEFT_KIND_F32: MIG_LOOP(ST, float) break;                                    \
    case WEFT_KIND_F64: MIG_LOOP(ST, double) break;                                   \
    default: break;                                                                   \
    }

static void convert(const uint8_t *src, uint32_t ss, uint8_t *dst, uint32_t ds, uint32_t rows,
                    uint32_t count, weft_kind sk, weft_kind dk)
{
    switch (sk) {
    case WEFT_KIND_BOOL:
    case WEFT_KIND_U8: MIG_DST(uint8_t) break;
    case WEFT_KIND_I8: MIG_DST(int8_t) break;
    case WEFT_KIND_I16: MIG_DST(int16_t) break;
    case WEFT_KIND_I32: MIG_DST(int32_t) break;
    case WEFT_KIND_U16: MIG_DST(uint16_t) break;
    case WEFT_KIND_U32: MIG_DST(uint32_t) break;
    case WEFT_KIND_F32:
        if (dk == WEFT_KIND_F64) {
            MIG_LOOP(float, double)
        }
        break;
    default: break; /* 64-bit sources only copy (no wider kind) */
    }
}

/* Rows converted together: every op walks one block while it is in the
 * cache (the values are read and written once, not once per op). */
#define MIG_BLOCK_ROWS 256u

static void migrate_block(const wf_mig_plan *p, const uint8_t *src, uint8_t *dst,
                          uint32_t rows)
{
    uint32_t ss = p->old_size, ds = p->new_size;
    if (p->defaults) {
        for (uint32_t r = 0; r < rows; r++) {
            memcpy(dst + (size_t)r * ds, p->defaults, ds);
        }
    } else {
        memset(dst, 0, (size_t)rows * ds);
    }
    for (uint32_t i = 0; i < p->nops; i++) {
        const wf_mig_op *op = &p->ops[i];
        const uint8_t *s = src + op->src_off;
        uint8_t *d = dst + op->dst_off;
        if (op->src_kind == WEFT_KIND_NONE) {
            for (uint32_t r = 0; r < rows; r++) {
                memcpy(d + (size_t)r * ds, s + (size_t)r * ss, op->bytes);
            }
        } else {
            convert(s, ss, d, ds, rows, op->count, op->src_kind, op->dst_kind);
        }
    }
}

static void migrate_rows(const wf_mig_plan *p, const uint8_t *src, uint8_t *dst, uint32_t rows)
{
    for (uint32_t r = 0; r < rows; r += MIG_BLOCK_ROWS) {
        uint32_t n = rows - r < MIG_BLOCK_ROWS ? rows - r : MIG_BLOCK_ROWS;
        migrate_block(p, src + (size_t)r * p->old_size, dst + (size_t)r * p->new_size, n);
    }
}

void wf_mig_commit(weft_world *w, wf_mig_plan *p)
{
    wf_type_info *ti = wf_registry_get(&w->registry, p->id);
    for (uint32_t i = 0; i < p->nblocks; i++) {
        wf_mig_block *b = &p->blocks[i];
        if (b->col) {
            wf_column *c = b->col;
            if (c->data) {
                migrate_rows(p, c->data, b->data, b->rows);
                wf_free(&w->alloc, c->data, (size_t)c->data_cap * p->old_size,
                        block_align(p->old_align));
            }
            c->data = b->data;
            c->data_cap = b->cap;
            c->size = p->new_size;
        } else {
            migrate_rows(p, ti->res_value, b->data, 1);
            wf_free(&w->alloc, ti->res_value, p->old_size, p->old_align);
            ti->res_value = b->data;
        }
        p->rows += b->rows;
        b->data = NULL;
    }
    ti->size = p->new_size;
    ti->align = p->new_align;
    for (weft_query *q = w->queries; q; q = q->next) {
        for (uint32_t t = 0; t < q->term_count; t++) {
            if (q->terms[t].id == p->id) {
                q->terms[t].size = p->new_size;
            }
            if (q->get[t].id == p->id && q->get[t].size) {
                q->get[t].size = p->new_size;
            }
        }
    }
    if (w->journal.on) {
        /* values changed under every row: a delta must not trust entries */
        w->journal.structural = true;
        w->journal.struct_tick = w->change_tick;
    }
}

void wf_mig_free(weft_world *w, wf_mig_plan *p)
{
    for (uint32_t i = 0; i < p->nblocks; i++) {
        wf_mig_block *b = &p->blocks[i];
        if (b->data) {
            if (b->col) {
                wf_free(&w->alloc, b->data, (size_t)b->cap * p->new_size,
                        block_align(p->new_align));
            } else {
                wf_free(&w->alloc, b->data, p->new_size, p->new_align);
            }
        }
    }
    if (p->blocks) {
        wf_free(&w->alloc, p->blocks, p->cap_blocks * sizeof *p->blocks, MIG_ALIGN);
    }
    if (p->ops) {
        wf_free(&w->alloc, p->ops, p->cap_ops * sizeof *p->ops, MIG_ALIGN);
    }
    memset(p, 0, sizeof *p);
}

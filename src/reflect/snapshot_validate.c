/* src/reflect/snapshot_validate.c - a snapshot checked before anything
 * changes.
 * SPDX-License-Identifier: MIT
 *
 * Restore validates the whole blob against itself and the target world
 * before changing anything: each section is parsed into the staging of
 * snapshot_internal.h (wf_restore), which snapshot_restore.c then
 * reserves and commits. The header check and the payload (decompressed
 * when it is compressed) serve the merge of a delta too.
 */
#include "reflect/snapshot_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <math.h>

#include "schedule/schedule.h"
#include "world/messages.h"
#include "world/relationship.h"

bool wf_snap_bad(wf_restore *r, weft_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r->st = wf_error_va(r->w, st, "snapshot: ", fmt, ap);
    va_end(ap);
    return false;
}

void *wf_snap_scratch(wf_restore *r, size_t n, size_t size)
{
    if (!n) {
        return NULL;
    }
    void *p = wf_calloc(&r->w->alloc, n * size, 16);
    if (!p) {
        wf_snap_bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory staging the snapshot");
    }
    return p;
}

void wf_snap_scratch_free(wf_restore *r, void *p, size_t n, size_t size)
{
    if (p) {
        wf_free(&r->w->alloc, p, n * size, 16);
    }
}

bool wf_snap_section(wf_restore *r, wf_sr *in, uint32_t tag, wf_sr *out)
{
    uint32_t t;
    uint32_t zero;
    uint64_t len;
    if (!wf_sr_u32(in, &t) || !wf_sr_u32(in, &zero) || !wf_sr_u64(in, &len)) {
        return WF_SNAP_TRUNC(r, "section header");
    }
    if (t != tag || zero != 0) {
        return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "expected section %u, found %u", tag, t);
    }
    const uint8_t *p = wf_sr_take(in, len > SIZE_MAX ? SIZE_MAX : (size_t)len);
    if (!p || (len & 7)) {
        return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "section %u of %llu bytes overruns the payload",
                           tag, (unsigned long long)len);
    }
    out->p = p;
    out->len = (size_t)len;
    out->pos = 0;
    return true;
}

static bool section_done(wf_restore *r, wf_sr *s, uint32_t tag)
{
    if (s->len - s->pos >= 8) {
        return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "section %u has %zu unread bytes", tag,
                           s->len - s->pos);
    }
    return true;
}

/* Saved component id -> target type, or NULL with the error recorded. */
static wf_type_info *comp_of(wf_restore *r, uint32_t id)
{
    if (id == 0 || id > r->ncomps) {
        wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "component id %u is not in the component table", id);
        return NULL;
    }
    if (!r->comps[id].dst) {
        wf_snap_bad(r, WEFT_ERR_UNKNOWN_COMPONENT,
                    "component '%.*s' is not registered in this world (register it, and call "
                    "weft_child_of for the built-in hierarchy, before restoring)",
                    (int)r->comps[id].name_len, r->comps[id].name);
        return NULL;
    }
    return wf_registry_get(&r->w->registry, r->comps[id].dst);
}

static bool parse_comps(wf_restore *r, wf_sr *s)
{
    uint32_t n;
    uint32_t zero;
    if (!wf_sr_u32(s, &n) || !wf_sr_u32(s, &zero) || n > WF_MAX_COMPONENTS || n > s->len / 32) {
        return WF_SNAP_TRUNC(r, "component table");
    }
    r->ncomps = n;
    r->comps = wf_snap_scratch(r, (size_t)n + 1, sizeof *r->comps);
    if (!r->comps) {
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t f[6];
        const char *name;
        uint32_t len;
        for (int k = 0; k < 6; k++) {
            if (!wf_sr_u32(s, &f[k])) {
                return WF_SNAP_TRUNC(r, "component table");
            }
        }
        if (!wf_sr_str(s, &name, &len) || f[0] != i + 1) {
            return WF_SNAP_TRUNC(r, "component table");
        }
        char buf[WF_ERROR_LEN];
        if (len == 0 || len >= sizeof buf) {
            return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "component %u has a bad name length %u",
                               f[0], len);
        }
        memcpy(buf, name, len);
        buf[len] = '\0';
        wf_stage_comp *c = &r->comps[f[0]];
        c->name = name;
        c->name_len = len;
        c->size = f[1];
        c->role = f[5];
        weft_component dst = wf_registry_lookup(&r->w->registry, buf);
        if (!dst) {
            /* as weft.h promises, and as for message types: whether or not
             * a value of it was saved */
            return wf_snap_bad(r, WEFT_ERR_UNKNOWN_COMPONENT,
                               "snapshot: component '%s' is not registered in this world (register "
                               "it, and call weft_child_of for the built-in hierarchy, before "
                               "restoring)",
                               buf);
        }
        const wf_type_info *ti = wf_registry_get(&r->w->registry, dst);
        uint32_t role = ti->rel_source
                            ? WF_SNAP_ROLE_REL_LIST
                            : (ti->rel_targets ? WF_SNAP_ROLE_REL_SOURCE : WF_SNAP_ROLE_PLAIN);
        if (ti->size != f[1] || ti->align != f[2]) {
            return wf_snap_bad(r, WEFT_ERR_SIZE_MISMATCH,
                               "component '%s' is %u bytes aligned to %u here, %u aligned to %u in "
                               "the snapshot",
                               buf, ti->size, ti->align, f[1], f[2]);
        }
        if ((uint32_t)ti->storage != f[3] || role != f[5] ||
            (ti->flags & WEFT_COMPONENT_NO_CHANGE_TICKS) !=
                (f[4] & WEFT_COMPONENT_NO_CHANGE_TICKS)) {
            return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT,
                               "component '%s' differs in storage, change ticks or relationship "
                               "role from the snapshot's",
                               buf);
        }
        c->dst = dst;
    }
    return section_done(r, s, WF_SNAP_SEC_COMP);
}

static bool parse_ents(wf_restore *r, wf_sr *s)
{
    uint32_t zero;
    if (!wf_sr_u32(s, &r->count) || !wf_sr_u32(s, &r->free_len) || !wf_sr_u32(s, &r->retired) ||
        !wf_sr_u32(s, &zero) || r->count > WF_MAX_ENTITIES || r->free_len > r->count ||
        r->retired > r->count) {
        return WF_SNAP_TRUNC(r, "entity index");
    }
    r->records = wf_sr_array(s, r->count, sizeof(wf_record));
    if (!r->records || !wf_sr_pad(s)) {
        return WF_SNAP_TRUNC(r, "entity records");
    }
    r->free_stack = wf_sr_array(s, r->free_len, sizeof(uint32_t));
    if (!r->free_stack || !wf_sr_pad(s)) {
        return WF_SNAP_TRUNC(r, "free stack");
    }
    r->state = wf_snap_scratch(r, r->count, 1);
    if (r->count && !r->state) {
        return false;
    }
    for (uint32_t k = 0; k < r->free_len; k++) {
        uint32_t idx;
        memcpy(&idx, r->free_stack + (size_t)k * 4, 4);
        if (idx >= r->count || r->state[idx]) {
            return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "free-stack entry %u (index %u) is invalid",
                               k, idx);
        }
        r->state[idx] = 1;
    }
    uint32_t dead_off_stack = 0;
    for (uint32_t i = 0; i < r->count; i++) {
        wf_record rec;
        memcpy(&rec, r->records + (size_t)i * sizeof rec, sizeof rec);
        if (rec.gen == 0 || rec.gen > WF_GENERATION_MAX) {
            return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT,
                               "entity index %u has generation %u (live generations are 1 .. %u)",
                               i, rec.gen, WF_GENERATION_MAX);
        }
        if (rec.arch == WF_ARCH_DEAD) {
            dead_off_stack += r->state[i] ? 0u : 1u;
            continue;
        }
        if (r->state[i]) {
            return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "live entity index %u is on the free stack",
                               i);
        }
        r->live++;
    }
    if (dead_off_stack != r->retired) {
        return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT,
                           "%u dead indices are off the free stack, %u retired", dead_off_stack,
                           r->retired);
    }
    return section_done(r, s, WF_SNAP_SEC_ENTS);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a;
    uint32_t y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static bool parse_arch(wf_restore *r, wf_sr *s)
{
    uint32_t zero;
    if (!wf_sr_u32(s, &r->narch) || !wf_sr_u32(s, &zero) || r->narch == 0 ||
        r->narch > s->len / 4) {
        return WF_SNAP_TRUNC(r, "archetype list");
    }
    r->arch_ids = wf_snap_scratch(r, r->narch, sizeof *r->arch_ids);
    r->arch_n = wf_snap_scratch(r, r->narch, sizeof *r->arch_n);
    r->arch_dst = wf_snap_scratch(r, r->narch, sizeof *r->arch_dst);
    if (!r->arch_ids || !r->arch_n || !r->arch_dst) {
        return false;
    }
    for (uint32_t a = 0; a < r->narch; a++) {
        uint32_t n;
        if (!wf_sr_u32(s, &n) || n > r->ncomps) {
            return WF_SNAP_TRUNC(r, "archetype list");
        }
        const uint8_t *ids = wf_sr_array(s, n, 4);
        if (!ids) {
            return WF_SNAP_TRUNC(r, "archetype list");
        }
        if (a == 0 && n != 0) {
            return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "archetype 0 is not the empty set");
        }
        uint32_t prev = 0;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t id;
            memcpy(&id, ids + (size_t)k * 4, 4);
            if (id <= prev) {
                return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "archetype %u ids are not sorted", a);
            }
            prev = id;
        }
        r->arch_ids[a] = ids;
        r->arch_n[a] = n;
    }
    if (!wf_sr_pad(s)) {
        return WF_SNAP_TRUNC(r, "archetype list");
    }
    return section_done(r, s, WF_SNAP_SEC_ARCH);
}

/* Does saved archetype a hold saved component id c? */
static bool arch_has(const wf_restore *r, uint32_t a, uint32_t c)
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
/* Checks entity e is live in the saved index; returns its record. */
static bool live_entity(wf_restore *r, uint64_t e, wf_record *out, const char *what)
{
    uint32_t idx = (uint32_t)e;
    if (idx >= r->count) {
        return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "%s: entity index %u is out of range", what,
                           idx);
    }
    wf_record rec = wf_snap_rec_at(r, idx);
    if (rec.arch == WF_ARCH_DEAD || rec.gen != (uint32_t)(e >> 32)) {
        return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "%s: entity %u:%u is not live", what, idx,
                           (uint32_t)(e >> 32));
    }
    if (rec.arch >= r->narch) {
        return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "entity %u names archetype %u of %u", idx,
                           rec.arch, r->narch);
    }
    *out = rec;
    return true;
}

/* Reads the values of n rows of a saved column of type ti: checks their
 * length (and, for relationship lists, their entities); *out points at
 * the first. */
static bool column_values(wf_restore *r, wf_sr *s, const wf_type_info *ti, uint32_t n,
                          const uint8_t **out)
{
    *out = s->p + s->pos;
    if (!ti->size || !n) {
        return true;
    }
    if (!ti->rel_source) {
        if (!wf_sr_array(s, n, ti->size) || !wf_sr_pad(s)) {
            return WF_SNAP_TRUNC(r, "column values");
        }
        return true;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t cnt;
        uint32_t zero;
        if (!wf_sr_u32(s, &cnt) || !wf_sr_u32(s, &zero) || cnt > INT32_MAX) {
            return WF_SNAP_TRUNC(r, "relationship list");
        }
        const uint8_t *items = wf_sr_array(s, cnt, 8);
        if (!items) {
            return WF_SNAP_TRUNC(r, "relationship list");
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

static bool column_ticks(wf_restore *r, wf_sr *s, uint32_t has, const wf_type_info *ti, uint32_t n,
                         const uint8_t **out)
{
    bool want = ti->has_ticks;
    if ((has != 0) != want) {
        return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "column '%s' change ticks do not match",
                           ti->name);
    }
    *out = NULL;
    if (want && n) {
        *out = wf_sr_array(s, n, sizeof(weft_ticks));
        if (!*out) {
            return WF_SNAP_TRUNC(r, "column ticks");
        }
    }
    return true;
}

/* Archetypes: map each saved set, then (in creation order) find or create
 * it in the target. Creation is the one change this makes before commit
 * (as any failed structural call may leave an archetype behind). */
static bool ensure_archetypes(wf_restore *r)
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
            return wf_snap_bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory creating archetypes");
        }
        r->arch_dst[a] = arch;
    }
    return true;
}

static bool parse_tables(wf_restore *r, wf_sr *s)
{
    uint32_t zero;
    if (!wf_sr_u32(s, &r->ntables) || !wf_sr_u32(s, &zero) || r->ntables > s->len / 16) {
        return WF_SNAP_TRUNC(r, "table list");
    }
    r->tables = wf_snap_scratch(r, r->ntables, sizeof *r->tables);
    r->ntable_seen = r->w->graph.table_count;
    r->table_seen = wf_snap_scratch(r, r->ntable_seen, 1);
    r->arch_live = wf_snap_scratch(r, r->narch, sizeof *r->arch_live);
    if ((r->ntables && !r->tables) || !r->table_seen || !r->arch_live) {
        return false;
    }
    uint32_t col_used = 0;
    int64_t placed = 0;
    for (uint32_t t = 0; t < r->ntables; t++) {
        wf_stage_table *tb = &r->tables[t];
        if (!wf_sr_u32(s, &tb->rows) || !wf_sr_u32(s, &tb->ncols) || tb->rows == 0 ||
            tb->ncols > r->ncomps || tb->ncols > (s->len - s->pos) / 8) {
            return WF_SNAP_TRUNC(r, "table header");
        }
        tb->ents = wf_sr_array(s, tb->rows, 8);
        if (!tb->ents) {
            return WF_SNAP_TRUNC(r, "table entities");
        }
        if (col_used + tb->ncols > r->ncols) {
            void *data = r->cols;
            uint32_t old = r->ncols;
            if (!wf_grow(&r->w->alloc, &data, &r->ncols, col_used + tb->ncols, sizeof *r->cols,
                         16)) {
                return wf_snap_bad(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory staging the snapshot");
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
                return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT,
                                   "entity %u is listed at table row %u but its record says row %u",
                                   (uint32_t)e, row, rec.row);
            }
            r->state[(uint32_t)e] = 2;
            r->arch_live[rec.arch]++;
            wf_table *at = r->arch_dst[rec.arch]->table;
            if (dst && at != dst) {
                return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT,
                                   "table %u mixes entities of other tables", t);
            }
            dst = at;
        }
        if (r->table_seen[dst->id]) {
            return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "two saved tables map to one table");
        }
        r->table_seen[dst->id] = 1;
        tb->dst = dst;
        placed += tb->rows;
        if (tb->ncols != dst->col_count) {
            return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "table %u has %u columns, its archetype %u",
                               t, tb->ncols, dst->col_count);
        }
        for (uint32_t i = 0; i < tb->ncols; i++) {
            uint32_t id;
            uint32_t has;
            if (!wf_sr_u32(s, &id) || !wf_sr_u32(s, &has)) {
                return WF_SNAP_TRUNC(r, "column header");
            }
            const wf_type_info *ti = comp_of(r, id);
            if (!ti) {
                return false;
            }
            if (!wf_table_column(dst, ti->id)) {
                return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT,
                                   "table %u has a column '%s' its archetype "
                                   "lacks",
                                   t, ti->name);
            }
            for (uint32_t k = 0; k < i; k++) {
                if (r->cols[tb->col0 + k].ti == ti) {
                    return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "table %u lists '%s' twice", t,
                                       ti->name);
                }
            }
            wf_stage_col *c = &r->cols[tb->col0 + i];
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
                    return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT,
                                       "'%s' names entity %u, which holds no list of it", ti->name,
                                       (uint32_t)target);
                }
            }
        }
    }
    if (placed != r->live) {
        return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "tables hold %lld rows for %lld live entities",
                           (long long)placed, (long long)r->live);
    }
    return section_done(r, s, WF_SNAP_SEC_TABL);
}

static bool parse_sparse(wf_restore *r, wf_sr *s)
{
    uint32_t zero;
    if (!wf_sr_u32(s, &r->nsparse) || !wf_sr_u32(s, &zero) || r->nsparse > s->len / 16) {
        return WF_SNAP_TRUNC(r, "sparse list");
    }
    r->sparse = wf_snap_scratch(r, r->nsparse, sizeof *r->sparse);
    if (r->nsparse && !r->sparse) {
        return false;
    }
    for (uint32_t k = 0; k < r->nsparse; k++) {
        wf_stage_sparse *sp = &r->sparse[k];
        uint32_t id;
        if (!wf_sr_u32(s, &id) || !wf_sr_u32(s, &sp->count) || sp->count == 0) {
            return WF_SNAP_TRUNC(r, "sparse header");
        }
        wf_type_info *ti = comp_of(r, id);
        if (!ti) {
            return false;
        }
        if (ti->storage != WEFT_STORAGE_SPARSE) {
            return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "'%s' is not a sparse component", ti->name);
        }
        for (uint32_t j = 0; j < k; j++) {
            if (r->sparse[j].ti == ti) {
                return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "sparse set '%s' appears twice",
                                   ti->name);
            }
        }
        sp->ti = ti;
        sp->owners = wf_sr_array(s, sp->count, 8);
        if (!sp->owners) {
            return WF_SNAP_TRUNC(r, "sparse owners");
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
                return wf_snap_bad(
                    r, WEFT_ERR_BAD_FORMAT,
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
            return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT,
                               "sparse '%s' holds %u values for %llu entities", ti->name, sp->count,
                               (unsigned long long)held);
        }
        if (!wf_sr_pad(s) || !column_values(r, s, ti, sp->count, &sp->vals) ||
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
                return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "sparse '%s' has entities but no set",
                                   wf_component_name(r->w, arch->sparse_ids[k]));
            }
        }
    }
    return section_done(r, s, WF_SNAP_SEC_SPRS);
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
static bool rel_lists(wf_restore *r, const wf_type_info *rel, const uint8_t *ents,
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
                return wf_snap_bad(
                    r, WEFT_ERR_BAD_FORMAT,
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
static bool check_rel_graph(wf_restore *r)
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
            tgt = wf_snap_scratch(r, r->count, sizeof *tgt);
            seen = wf_snap_scratch(r, r->count, 1);
            if (!tgt || !seen) {
                ok = false;
                break;
            }
        }
        memset(tgt, 0, (size_t)r->count * sizeof *tgt);
        memset(seen, 0, r->count);
        for (uint32_t t = 0; t < r->ntables; t++) {
            const wf_stage_table *tb = &r->tables[t];
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
            const wf_stage_table *tb = &r->tables[t];
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
                ok = wf_snap_bad(r, WEFT_ERR_BAD_FORMAT,
                                 "entity %u has '%s' naming entity %u, whose list does not name it",
                                 i, rel->name, (uint32_t)tgt[i]);
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
                ok = wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "'%s' forms a cycle through entity %u",
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
        wf_snap_scratch_free(r, tgt, r->count, sizeof *tgt);
    }
    if (seen) {
        wf_snap_scratch_free(r, seen, r->count, 1);
    }
    return ok;
}

static bool parse_res(wf_restore *r, wf_sr *s)
{
    uint32_t zero;
    if (!wf_sr_u32(s, &r->nres) || !wf_sr_u32(s, &zero) || r->nres > s->len / 16) {
        return WF_SNAP_TRUNC(r, "resource list");
    }
    r->res = wf_snap_scratch(r, r->nres, sizeof *r->res);
    if (r->nres && !r->res) {
        return false;
    }
    for (uint32_t k = 0; k < r->nres; k++) {
        wf_stage_res *x = &r->res[k];
        uint32_t id;
        const uint8_t *t;
        if (!wf_sr_u32(s, &id) || !wf_sr_u32(s, &zero) || !(t = wf_sr_take(s, sizeof x->ticks))) {
            return WF_SNAP_TRUNC(r, "resource");
        }
        x->ti = comp_of(r, id);
        if (!x->ti) {
            return false;
        }
        if (x->ti->rel_source || x->ti->hooks.copy || x->ti->hooks.move || x->ti->hooks.dtor) {
            return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT,
                               "resource '%s' cannot be restored from bytes", x->ti->name);
        }
        for (uint32_t j = 0; j < k; j++) {
            if (r->res[j].ti == x->ti) {
                return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "resource '%s' appears twice",
                                   x->ti->name);
            }
        }
        memcpy(&x->ticks, t, sizeof x->ticks);
        if (x->ti->size) {
            x->val = wf_sr_take(s, x->ti->size);
            if (!x->val || !wf_sr_pad(s)) {
                return WF_SNAP_TRUNC(r, "resource value");
            }
            const char *why = x->ti->value_check ? x->ti->value_check(x->val, x->ti->check_user)
                                                 : NULL;
            if (why) {
                return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "resource '%s': %s", x->ti->name, why);
            }
        }
    }
    return section_done(r, s, WF_SNAP_SEC_RESO);
}

static bool parse_stream(wf_restore *r, wf_sr *s, wf_stage_stream *x, size_t size, const char *what)
{
    uint64_t saved_size;
    if (!wf_sr_u64(s, &saved_size) || !wf_sr_u64(s, &x->first) || !wf_sr_u32(s, &x->na) ||
        !wf_sr_u32(s, &x->nb)) {
        return WF_SNAP_TRUNC(r, "message stream");
    }
    if (saved_size != size) {
        return wf_snap_bad(r, WEFT_ERR_SIZE_MISMATCH, "messages of '%s' are %llu bytes, here %zu",
                           what, (unsigned long long)saved_size, size);
    }
    if (x->first == 0 || x->first > UINT64_MAX / 2) {
        return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "message stream '%s' starts at id %llu", what,
                           (unsigned long long)x->first);
    }
    x->a = wf_sr_array(s, x->na, size);
    x->b = x->a ? wf_sr_array(s, x->nb, size) : NULL;
    if (!x->a || !x->b || !wf_sr_pad(s)) {
        return WF_SNAP_TRUNC(r, "message stream");
    }
    return true;
}

static bool parse_msgs(wf_restore *r, wf_sr *s)
{
    uint32_t ntypes;
    uint32_t nremoved;
    if (!wf_sr_u32(s, &ntypes) || !wf_sr_u32(s, &nremoved) || ntypes > s->len / 16 ||
        nremoved > s->len / 16) {
        return WF_SNAP_TRUNC(r, "message list");
    }
    r->nstreams = ntypes + nremoved;
    r->streams = wf_snap_scratch(r, r->nstreams, sizeof *r->streams);
    if (r->nstreams && !r->streams) {
        return false;
    }
    for (uint32_t k = 0; k < ntypes; k++) {
        const char *name;
        uint32_t len;
        char buf[WF_ERROR_LEN];
        if (!wf_sr_str(s, &name, &len) || len == 0 || len >= sizeof buf) {
            return WF_SNAP_TRUNC(r, "message type name");
        }
        memcpy(buf, name, len);
        buf[len] = '\0';
        weft_message_type t = wf_messages_lookup(r->w, buf);
        if (!t) {
            return wf_snap_bad(r, WEFT_ERR_NOT_FOUND, "message type '%s' is not registered", buf);
        }
        wf_stage_stream *x = &r->streams[k];
        x->dst = wf_messages_type(r->w, t);
        if (!parse_stream(r, s, x, x->dst->size, buf)) {
            return false;
        }
        if (x->dst->drop && (x->na || x->nb)) {
            return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "message type '%s' has a drop callback",
                               buf);
        }
    }
    for (uint32_t k = 0; k < nremoved; k++) {
        uint32_t id;
        uint32_t zero;
        if (!wf_sr_u32(s, &id) || !wf_sr_u32(s, &zero)) {
            return WF_SNAP_TRUNC(r, "removed stream");
        }
        wf_type_info *ti = comp_of(r, id);
        if (!ti) {
            return false;
        }
        wf_stage_stream *x = &r->streams[ntypes + k];
        x->dst = wf_removed_stream(r->w, ti);
        x->track = x->dst ? NULL : ti;
        for (uint32_t j = ntypes; j < ntypes + k; j++) {
            if ((x->track && r->streams[j].track == ti) ||
                (x->dst && r->streams[j].dst == x->dst)) {
                return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "removed stream of '%s' appears twice",
                                   ti->name);
            }
        }
        if (!parse_stream(r, s, x, sizeof(weft_entity), ti->name)) {
            return false;
        }
    }
    return section_done(r, s, WF_SNAP_SEC_MSGS);
}

/* Queries and schedules of the target must be the saved ones (same
 * count, signatures and names, in order), or absent altogether. */
static bool parse_queries(wf_restore *r, wf_sr *s)
{
    uint32_t n;
    uint32_t zero;
    if (!wf_sr_u32(s, &n) || !wf_sr_u32(s, &zero) || n > s->len / 16) {
        return WF_SNAP_TRUNC(r, "query list");
    }
    uint32_t have = 0;
    for (const weft_query *q = r->w->queries; q; q = q->next) {
        have++;
    }
    r->queries = *s;
    r->apply_queries = have > 0;
    if (have && have != n) {
        return wf_snap_bad(r, WEFT_ERR_NOT_FOUND, "the snapshot has %u queries, this world %u", n,
                           have);
    }
    const weft_query *q = r->w->queries;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t last;
        uint32_t terms;
        uint64_t sig;
        if (!wf_sr_u32(s, &last) || !wf_sr_u32(s, &terms) || !wf_sr_u64(s, &sig)) {
            return WF_SNAP_TRUNC(r, "query list");
        }
        if (q) {
            if (q->term_count != terms || wf_snap_query_sig(r->w, q) != sig) {
                return wf_snap_bad(r, WEFT_ERR_NOT_FOUND,
                                   "query %u of this world differs from the snapshot's", k);
            }
            q = q->next;
        }
    }
    return section_done(r, s, WF_SNAP_SEC_QRYS);
}

static bool parse_scheds(wf_restore *r, wf_sr *s)
{
    uint32_t n;
    uint32_t zero; /* the schedule-state flags (WF_SNAP_SCHD_*) */
    const uint8_t *acc;
    r->scheds = *s;
    if (!wf_sr_u32(s, &n) || !wf_sr_u32(s, &zero) || !(acc = wf_sr_take(s, 8)) || n > s->len / 8) {
        return WF_SNAP_TRUNC(r, "schedule list");
    }
    memcpy(&r->acc, acc, 8);
    if (zero & ~(uint32_t)WF_SNAP_SCHD_APP_STARTED) {
        return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "unknown schedule-state flags 0x%x",
                           (unsigned)zero);
    }
    r->app_started = (zero & WF_SNAP_SCHD_APP_STARTED) != 0;
    if (!isfinite(r->acc) || r->acc < 0.0) {
        return wf_snap_bad(r, WEFT_ERR_BAD_FORMAT,
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
        if (!wf_sr_str(s, &name, &len) || !wf_sr_u32(s, &nsys) || !wf_sr_u32(s, &ncond)) {
            return WF_SNAP_TRUNC(r, "schedule");
        }
        const weft_schedule *sc = NULL;
        for (const weft_schedule *x = r->apply_scheds ? sw->schedules : NULL; x; x = x->next) {
            if (strlen(x->name) == len && memcmp(x->name, name, len) == 0) {
                sc = x;
            }
        }
        if (r->apply_scheds &&
            (!sc || wf_snap_count_sys_nodes(sc) != nsys || wf_snap_count_conds(sc) != ncond)) {
            return wf_snap_bad(r, WEFT_ERR_NOT_FOUND,
                               "schedule '%.*s' is missing here or has other systems or conditions",
                               (int)len, name);
        }
        uint32_t node = 0;
        for (uint32_t i = 0; i < nsys; i++) {
            const char *sname;
            uint32_t slen;
            uint32_t f[4];
            if (!wf_sr_str(s, &sname, &slen)) {
                return WF_SNAP_TRUNC(r, "system");
            }
            for (int j = 0; j < 4; j++) {
                if (!wf_sr_u32(s, &f[j])) {
                    return WF_SNAP_TRUNC(r, "system");
                }
            }
            if (!wf_sr_array(s, (uint64_t)f[1] + f[2], sizeof(weft_message_cursor))) {
                return WF_SNAP_TRUNC(r, "system cursors");
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
                return wf_snap_bad(r, WEFT_ERR_NOT_FOUND,
                                   "system '%.*s' of schedule '%.*s' does not match this world's",
                                   (int)slen, sname, (int)len, name);
            }
        }
        const weft_condition *c = sc ? sc->conds : NULL;
        for (uint32_t i = 0; i < ncond; i++) {
            uint32_t kind;
            if (!wf_sr_u32(s, &kind) || !wf_sr_array(s, 3 * 4 + sizeof(weft_message_cursor), 1)) {
                return WF_SNAP_TRUNC(r, "condition");
            }
            if (c) {
                if (c->kind != kind) {
                    return wf_snap_bad(r, WEFT_ERR_NOT_FOUND,
                                       "a condition of schedule '%.*s' differs", (int)len, name);
                }
                c = c->next;
            }
        }
    }
    return section_done(r, s, WF_SNAP_SEC_SCHD);
}

static bool parse_tick(wf_restore *r, wf_sr *s)
{
    if (!wf_sr_u32(s, &r->change_tick) || !wf_sr_u32(s, &r->last_check_tick)) {
        return WF_SNAP_TRUNC(r, "tick state");
    }
    return section_done(r, s, WF_SNAP_SEC_TICK);
}

bool wf_snap_validate(wf_restore *r, const uint8_t *payload, size_t len)
{
    wf_sr in = {payload, len, 0};
    wf_sr s;
    bool ok = wf_snap_section(r, &in, WF_SNAP_SEC_COMP, &s) && parse_comps(r, &s) &&
              wf_snap_section(r, &in, WF_SNAP_SEC_ENTS, &s) && parse_ents(r, &s) &&
              wf_snap_section(r, &in, WF_SNAP_SEC_ARCH, &s) && parse_arch(r, &s);
    if (ok) {
        r->scratch = wf_snap_scratch(r, WF_MAX_COMPONENTS, sizeof *r->scratch);
        ok = r->scratch && ensure_archetypes(r);
    }
    ok = ok && wf_snap_section(r, &in, WF_SNAP_SEC_TABL, &s) && parse_tables(r, &s) &&
         wf_snap_section(r, &in, WF_SNAP_SEC_SPRS, &s) && parse_sparse(r, &s) &&
         check_rel_graph(r) && wf_snap_section(r, &in, WF_SNAP_SEC_RESO, &s) && parse_res(r, &s) &&
         wf_snap_section(r, &in, WF_SNAP_SEC_MSGS, &s) && parse_msgs(r, &s) &&
         wf_snap_section(r, &in, WF_SNAP_SEC_TICK, &s) && parse_tick(r, &s) &&
         wf_snap_section(r, &in, WF_SNAP_SEC_QRYS, &s) && parse_queries(r, &s) &&
         wf_snap_section(r, &in, WF_SNAP_SEC_SCHD, &s) && parse_scheds(r, &s);
    if (ok && in.pos != in.len) {
        ok = wf_snap_bad(r, WEFT_ERR_BAD_FORMAT, "%zu bytes follow the last section",
                         in.len - in.pos);
    }
    return ok;
}

/* Checks the header and the checksum over header and payload. */
weft_status wf_snap_check_header(weft_world *w, const uint8_t *b, size_t len,
                                uint32_t want_flags, uint64_t *since)
{
    if (len < WF_SNAP_HEADER) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "snapshot restore: %zu bytes is shorter than the header", len);
    }
    if (memcmp(b, WF_SNAP_MAGIC, 8) != 0) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT, "snapshot restore: not a weft snapshot");
    }
    uint32_t version;
    uint32_t bom;
    uint32_t hsize;
    uint32_t flags;
    uint64_t plen;
    uint64_t sum;
    memcpy(&version, b + WF_SNAP_OFF_VERSION, 4);
    memcpy(&bom, b + WF_SNAP_OFF_BOM, 4);
    memcpy(&hsize, b + WF_SNAP_OFF_HSIZE, 4);
    memcpy(&flags, b + WF_SNAP_OFF_FLAGS, 4);
    memcpy(&plen, b + WF_SNAP_OFF_PAYLOAD, 8);
    memcpy(&sum, b + WF_SNAP_OFF_CHECKSUM, 8);
    if (bom != WF_SNAP_BOM) {
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
    if (hsize != WF_SNAP_HEADER ||
        (flags & ~(WF_SNAP_FLAG_DELTA | WF_SNAP_FLAG_ZSTD | WF_SNAP_FLAG_PATCH)) != 0 ||
        ((flags & WF_SNAP_FLAG_PATCH) && !(flags & WF_SNAP_FLAG_DELTA))) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "snapshot restore: header size %u or flags 0x%x not understood", hsize,
                        flags);
    }
    if ((flags & WF_SNAP_FLAG_DELTA) != want_flags) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        want_flags ? "snapshot: a full snapshot where a delta was expected"
                                   : "snapshot: a delta cannot be restored alone; merge it "
                                     "into its base (weft_snapshot_merge)");
    }
    memcpy(since, b + WF_SNAP_OFF_SINCE, 8);
    if (plen != len - WF_SNAP_HEADER) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "snapshot restore: the header announces %llu payload bytes, %zu given"
                        " (truncated or oversized)",
                        (unsigned long long)plen, len - WF_SNAP_HEADER);
    }
    uint8_t h[WF_SNAP_HEADER];
    memcpy(h, b, WF_SNAP_HEADER);
    memset(h + WF_SNAP_OFF_CHECKSUM, 0, 8);
    XXH3_state_t hs;
    XXH3_64bits_reset(&hs);
    XXH3_64bits_update(&hs, h, WF_SNAP_HEADER);
    XXH3_64bits_update(&hs, b + WF_SNAP_HEADER, len - WF_SNAP_HEADER);
    if (XXH3_64bits_digest(&hs) != sum) {
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "snapshot restore: checksum mismatch (the data is corrupt)");
    }
    return WEFT_OK;
}

weft_status wf_snap_payload_open(weft_world *w, const uint8_t *b, size_t len,
                                wf_snap_payload *out)
{
    uint32_t flags;
    uint64_t plain;
    memcpy(&flags, b + WF_SNAP_OFF_FLAGS, 4);
    memcpy(&plain, b + WF_SNAP_OFF_PLAIN, 8);
    out->p = b + WF_SNAP_HEADER;
    out->n = len - WF_SNAP_HEADER;
    out->owned = NULL;
    if (!(flags & WF_SNAP_FLAG_ZSTD)) {
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

void wf_snap_payload_close(weft_world *w, wf_snap_payload *pl)
{
    if (pl->owned) {
        wf_free(&w->alloc, pl->owned, pl->n, 16);
        pl->owned = NULL;
    }
}

/* src/reflect/path.c - field paths: ".position.x", "slots[2].count".
 * SPDX-License-Identifier: MIT
 *
 * A path is a sequence of segments: ".name" selects a field of the current
 * struct (the leading dot may be left out), "[i]" an element of the current
 * array field. Resolution walks the compiled description and yields a
 * place: kind, byte offset and byte size of one value. A path must end on
 * one value: an array field left unindexed is refused, so a caller never
 * receives a differently sized blob than it asked for.
 *
 * Writing respects the component's rules: a mutable component is written
 * in place and marked changed (like weft_get_mut); an immutable one is
 * copied, edited and re-inserted through the commit path, so its
 * on_replace/on_insert hooks, observers and relationship bookkeeping run
 * (like weft_insert). Values are checked against their kind's domain
 * before anything is written.
 */
#include "reflect/reflect.h"

#include <string.h>

#include "world/defer.h"

static const wf_rfield *find_field(const wf_rtype *t, const char *name, size_t len)
{
    for (uint32_t i = 0; i < t->field_count; i++) {
        const wf_rfield *f = &t->fields[i];
        if (strncmp(f->name, name, len) == 0 && f->name[len] == '\0') {
            return f;
        }
    }
    return NULL;
}

weft_status wf_path_resolve(const weft_world *w, const wf_rtype *root, const char *what,
                            const char *path, wf_rplace *out)
{
    const wf_rtype *t = root;
    const wf_rfield *f = NULL;
    bool indexed = false;
    uint32_t offset = 0;
    const char *p = path;
    if (strlen(path) >= WF_REFLECT_MAX_PATH) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "field path of '%s' is longer than %u", what,
                        WF_REFLECT_MAX_PATH - 1);
    }
    if (*p == '\0') {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "empty field path for '%s'", what);
    }
    while (*p) {
        if (*p == '[') {
            if (!f || f->count <= 1 || indexed) {
                return wf_error(w, WEFT_ERR_INVALID_ARG,
                                "'%s%s': '[' follows something that is not an array at "
                                "column %d",
                                what, path, (int)(p - path));
            }
            p++;
            uint64_t idx = 0;
            const char *digits = p;
            while (*p >= '0' && *p <= '9' && idx <= WF_REFLECT_MAX_COUNT) {
                idx = idx * 10u + (uint64_t)(*p - '0');
                p++;
            }
            if (p == digits || *p != ']') {
                return wf_error(w, WEFT_ERR_INVALID_ARG,
                                "'%s%s': expected a decimal index and ']' at column %d", what,
                                path, (int)(p - path));
            }
            p++;
            if (idx >= f->count) {
                return wf_error(w, WEFT_ERR_CAPACITY,
                                "'%s%s': index %llu is out of range (the array holds %u)",
                                what, path, (unsigned long long)idx, f->count);
            }
            offset += (uint32_t)idx * f->elem_size;
            indexed = true;
            continue;
        }
        if (*p == '.') {
            p++;
        } else if (p != path) {
            return wf_error(w, WEFT_ERR_INVALID_ARG, "'%s%s': expected '.' or '[' at column %d",
                            what, path, (int)(p - path));
        }
        if (f) {
            if (f->count > 1 && !indexed) {
                return wf_error(w, WEFT_ERR_INVALID_ARG,
                                "'%s%s': array field '%s' needs an index before '.'", what,
                                path, f->name);
            }
            if (f->kind != WEFT_KIND_STRUCT) {
                return wf_error(w, WEFT_ERR_TYPE_MISMATCH,
                                "'%s%s': field '%s' is a %s, not a struct", what, path,
                                f->name, wf_kind_name(f->kind));
            }
            t = f->sub;
        }
        const char *name = p;
        while (*p && *p != '.' && *p != '[') {
            p++;
        }
        size_t len = (size_t)(p - name);
        const wf_rfield *nf = len ? find_field(t, name, len) : NULL;
        if (!nf) {
            return wf_error(w, WEFT_ERR_NOT_FOUND, "'%s%s': no field '%.*s' in '%s'", what,
                            path, (int)len, name, t->name[0] ? t->name : what);
        }
        f = nf;
        offset += f->offset;
        indexed = false;
    }
    if (f->count > 1 && !indexed) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "'%s%s': array field '%s' of %u needs an index", what, path, f->name,
                        f->count);
    }
    out->kind = f->kind;
    out->offset = offset;
    out->size = f->elem_size;
    out->field = f;
    return WEFT_OK;
}

weft_status wf_place_check_value(const weft_world *w, const wf_rplace *pl, const char *path,
                                 const void *value)
{
    const uint8_t *b = value;
    switch (pl->kind) {
    case WEFT_KIND_BOOL:
        if (b[0] > 1) {
            return wf_error(w, WEFT_ERR_INVALID_ARG, "'%s': a bool must be 0 or 1, not %u",
                            path, b[0]);
        }
        return WEFT_OK;
    case WEFT_KIND_STRING:
        if (!memchr(b, 0, pl->size)) {
            return wf_error(w, WEFT_ERR_INVALID_ARG,
                            "'%s': the string is not NUL-terminated within its %u bytes",
                            path, pl->size);
        }
        return WEFT_OK;
    case WEFT_KIND_ENUM: {
        const wf_rfield *f = pl->field;
        int64_t v = 0;
        switch (f->base) {
        case WEFT_KIND_I8: { int8_t x; memcpy(&x, b, 1); v = x; break; }
        case WEFT_KIND_I16: { int16_t x; memcpy(&x, b, 2); v = x; break; }
        case WEFT_KIND_I32: { int32_t x; memcpy(&x, b, 4); v = x; break; }
        case WEFT_KIND_U8: v = b[0]; break;
        case WEFT_KIND_U16: { uint16_t x; memcpy(&x, b, 2); v = x; break; }
        case WEFT_KIND_U32: { uint32_t x; memcpy(&x, b, 4); v = x; break; }
        default: memcpy(&v, b, 8); break;
        }
        for (uint32_t i = 0; i < f->enum_count; i++) {
            if (f->enums[i].value == v) {
                return WEFT_OK;
            }
        }
        return wf_error(w, WEFT_ERR_INVALID_ARG, "'%s': %lld is not a value of enum '%s'",
                        path, (long long)v, f->name);
    }
    case WEFT_KIND_STRUCT:
        /* every nested value checked field by field would need a walk; the
         * bytes of a whole struct are taken as the caller's layout */
        return WEFT_OK;
    default:
        return WEFT_OK;
    }
}

/* Common checks of get and set: entity, component, description, path,
 * kind and size. Returns the value pointer of the component on e. */
static weft_status locate(const weft_world *w, weft_entity e, weft_component c,
                          const char *path, weft_kind kind, size_t size, wf_rplace *pl,
                          wf_record **out_rec, const wf_type_info **out_ti, uint8_t **out_ptr,
                          wf_column **out_col, uint32_t *out_row)
{
    if (!path) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "field path is NULL");
    }
    wf_record *rec;
    weft_status st = wf_entity_check(w, e, &rec);
    if (st != WEFT_OK) {
        return st;
    }
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (!ti) {
        return wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT, "component id %u is not registered",
                        c);
    }
    const wf_rdesc *d = wf_reflect_component(w, c);
    if (!d) {
        return wf_error(w, WEFT_ERR_NOT_FOUND, "component '%s' has no description",
                        ti->name);
    }
    st = wf_path_resolve(w, d->root, ti->name, path, pl);
    if (st != WEFT_OK) {
        return st;
    }
    if (kind != pl->kind) {
        return wf_error(w, WEFT_ERR_TYPE_MISMATCH, "'%s%s' is a %s, not a %s", ti->name, path,
                        wf_kind_name(pl->kind), wf_kind_name(kind));
    }
    if (size != pl->size) {
        return wf_error(w, WEFT_ERR_SIZE_MISMATCH, "'%s%s' has %u bytes, not %zu", ti->name,
                        path, pl->size, size);
    }
    const wf_archetype *arch = wf_world_archetype(w, rec->arch);
    if (!wf_archetype_has(arch, c)) {
        return wf_error(w, WEFT_ERR_NOT_FOUND, "entity %u:%u has no '%s'", (uint32_t)e,
                        (uint32_t)(e >> 32), ti->name);
    }
    wf_column *col;
    uint32_t row;
    if (ti->storage == WEFT_STORAGE_SPARSE) {
        col = &ti->sparse->dense;
        row = wf_sparse_find(ti->sparse, (uint32_t)e);
    } else {
        col = wf_table_column(arch->table, c);
        row = rec->row;
    }
    *out_rec = rec;
    *out_ti = ti;
    *out_ptr = wf_column_ptr(col, row);
    *out_col = col;
    *out_row = row;
    return WEFT_OK;
}

weft_status wf_field_get(const weft_world *w, weft_entity e, weft_component c,
                         const char *path, weft_kind kind, void *out, size_t size)
{
    if (!out) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "weft_field_get: out is NULL");
    }
    wf_rplace pl;
    wf_record *rec = NULL;
    const wf_type_info *ti = NULL;
    uint8_t *ptr = NULL;
    wf_column *col = NULL;
    uint32_t row = 0;
    weft_status st = locate(w, e, c, path, kind, size, &pl, &rec, &ti, &ptr, &col, &row);
    if (st == WEFT_OK) {
        memcpy(out, ptr + pl.offset, pl.size);
    }
    return st;
}

weft_status wf_field_set(weft_world *w, weft_entity e, weft_component c, const char *path,
                         weft_kind kind, const void *value, size_t size)
{
    if (!value) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "weft_field_set: value is NULL");
    }
    wf_rplace pl;
    wf_record *rec = NULL;
    const wf_type_info *ti = NULL;
    uint8_t *ptr = NULL;
    wf_column *col = NULL;
    uint32_t row = 0;
    weft_status st = locate(w, e, c, path, kind, size, &pl, &rec, &ti, &ptr, &col, &row);
    if (st != WEFT_OK) {
        return st;
    }
    st = wf_place_check_value(w, &pl, path, value);
    if (st != WEFT_OK) {
        return st;
    }
    if (!(ti->flags & WEFT_COMPONENT_IMMUTABLE)) {
        memmove(ptr + pl.offset, value, pl.size);
        wf_column_mark(col, row, w->change_tick, w->change_tick);
        wf_journal_add(w, col, row, 1, w->change_tick);
        return WEFT_OK;
    }
    /* Immutable: a copy with the field changed replaces the value through
     * the insert path, which runs the replace/insert hooks. */
    uint8_t *tmp = wf_alloc(&w->alloc, ti->size, ti->align);
    if (!tmp) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory setting '%s%s'", ti->name,
                        path);
    }
    wf_type_construct(ti, tmp, ptr, 1);
    memcpy(tmp + pl.offset, value, pl.size);
    if (w->iter_depth) {
        weft_value v = {c, ti->size, tmp};
        st = wf_defer_push(w, WF_CMD_INSERT, e, 0, &v, 1, NULL);
    } else {
        st = wf_commit_insert_one(w, e, rec, ti, tmp);
        if (w->cmds.count || w->events.has_dead) {
            wf_world_settle(w);
        }
    }
    wf_type_destroy(ti, tmp, 1);
    wf_free(&w->alloc, tmp, ti->size, ti->align);
    return st;
}

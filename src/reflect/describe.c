/* src/reflect/describe.c - validating and compiling type descriptions.
 * SPDX-License-Identifier: MIT
 *
 * A description is checked and copied in two passes over the same code.
 * The measuring pass (c->base == NULL) validates everything and adds up
 * the bytes of the compiled tree; the filling pass writes the tree into
 * one block of that size and cannot fail. Validation rules: a field lies
 * inside its struct, is aligned for its element, overlaps no other field,
 * has a unique identifier-like name and a known kind; nested structs are
 * checked the same way up to WF_REFLECT_MAX_DEPTH levels; enum values fit
 * their base integer and have unique names. Every error message carries
 * the path of the field at fault ("Body.slots.count").
 */
#include "reflect/reflect.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- kinds ---- */

uint32_t wf_kind_size(weft_kind k)
{
    switch (k) {
    case WEFT_KIND_BOOL:
    case WEFT_KIND_I8:
    case WEFT_KIND_U8:
        return 1;
    case WEFT_KIND_I16:
    case WEFT_KIND_U16:
        return 2;
    case WEFT_KIND_I32:
    case WEFT_KIND_U32:
    case WEFT_KIND_F32:
        return 4;
    case WEFT_KIND_I64:
    case WEFT_KIND_U64:
    case WEFT_KIND_F64:
    case WEFT_KIND_ENTITY:
        return 8;
    default:
        return 0;
    }
}

/* Alignment of a C type as a struct member: i386's System V ABI aligns
 * 64-bit integers and doubles to 4 inside structs, so the member offset is
 * measured rather than taken to be the size. */
typedef struct kind_probe_u64 {
    char c;
    uint64_t v;
} kind_probe_u64;
typedef struct kind_probe_f64 {
    char c;
    double v;
} kind_probe_f64;

uint32_t wf_kind_align(weft_kind k)
{
    switch (k) {
    case WEFT_KIND_I64:
    case WEFT_KIND_U64:
    case WEFT_KIND_ENTITY:
        return (uint32_t)offsetof(kind_probe_u64, v);
    case WEFT_KIND_F64:
        return (uint32_t)offsetof(kind_probe_f64, v);
    default:
        return wf_kind_size(k);
    }
}

const char *wf_kind_name(weft_kind k)
{
    static const char *const names[WEFT_KIND_NUM] = {
        "none", "bool", "i8",  "i16", "i32",    "i64",    "u8",     "u16",
        "u32",  "u64",  "f32", "f64", "entity", "string", "struct", "enum", "shape"};
    return (unsigned)k < (unsigned)WEFT_KIND_NUM ? names[k] : "?";
}

static bool kind_is_int(weft_kind k)
{
    return k >= WEFT_KIND_I8 && k <= WEFT_KIND_U64;
}

/* Does v fit integer kind k? */
static bool int_fits(weft_kind k, int64_t v)
{
    switch (k) {
    case WEFT_KIND_I8:
        return v >= INT8_MIN && v <= INT8_MAX;
    case WEFT_KIND_I16:
        return v >= INT16_MIN && v <= INT16_MAX;
    case WEFT_KIND_I32:
        return v >= INT32_MIN && v <= INT32_MAX;
    case WEFT_KIND_U8:
        return v >= 0 && v <= UINT8_MAX;
    case WEFT_KIND_U16:
        return v >= 0 && v <= UINT16_MAX;
    case WEFT_KIND_U32:
        return v >= 0 && v <= (int64_t)UINT32_MAX;
    case WEFT_KIND_U64:
        return v >= 0;
    default:
        return true;
    }
}

/* ---- the two-pass compiler ---- */

/* A nested type compiled once per description and shared by every field
 * that uses it: validated on its first use only (the same description
 * pointer is the same type), so a 4096-field type used by 64 fields costs
 * one validation, not 64. */
typedef struct memo_entry {
    const weft_type_desc *key;
    const wf_rtype *type;     /* NULL while measuring */
    uint64_t ents;            /* entity values it holds */
    uint32_t height;          /* its nesting levels, itself included */
} memo_entry;

typedef struct compiler {
    weft_world *w;
    uint8_t *base;            /* NULL while measuring */
    size_t used;              /* bytes taken so far */
    weft_status st;
    char path[WF_REFLECT_MAX_PATH];
    size_t path_len;
    memo_entry *memo;         /* nested types compiled in this pass */
    uint32_t memo_n, memo_cap;
    uint32_t height;          /* set by compile_type: the type's nesting levels */
} compiler;

static void *take(compiler *c, size_t size, size_t align)
{
    c->used = (c->used + align - 1) & ~(align - 1);
    void *p = c->base ? c->base + c->used : NULL;
    c->used += size;
    return p;
}

static const char *copy_str(compiler *c, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = take(c, n, 1);
    if (p) {
        memcpy(p, s, n);
    }
    return p;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static bool fail(compiler *c, weft_status st, const char *fmt, ...);

static bool fail(compiler *c, weft_status st, const char *fmt, ...)
{
    char msg[WF_ERROR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->st = st;
    wf_error(c->w, st, "description of '%s': %s", c->path, msg);
    return false;
}

/* Appends ".name" to the path; returns the old length to restore. */
static size_t path_push(compiler *c, const char *name)
{
    size_t old = c->path_len;
    int n = snprintf(c->path + old, sizeof c->path - old, ".%s", name);
    if (n > 0) {
        c->path_len = old + (size_t)n < sizeof c->path ? old + (size_t)n
                                                        : sizeof c->path - 1;
    }
    return old;
}

static void path_pop(compiler *c, size_t old)
{
    c->path_len = old;
    c->path[old] = '\0';
}

static bool name_ok(const char *s)
{
    if (!s || !s[0]) {
        return false;
    }
    size_t n = 0;
    for (; s[n]; n++) {
        char ch = s[n];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
                  (n > 0 && ch >= '0' && ch <= '9');
        if (!ok || n >= 63) {
            return false;
        }
    }
    return true;
}

static bool compile_type(compiler *c, const weft_type_desc *d, uint32_t size, uint32_t align,
                         uint32_t depth, const wf_rtype **out, uint64_t *ents);

static void *scratch_alloc(compiler *c, size_t bytes)
{
    return wf_alloc(&c->w->alloc, bytes ? bytes : 1, _Alignof(max_align_t));
}

static void scratch_free(compiler *c, void *p, size_t bytes)
{
    wf_free(&c->w->alloc, p, bytes ? bytes : 1, _Alignof(max_align_t));
}

static int cmp_name_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Is a name used twice among n records of `stride` bytes whose name
 * pointer sits at `name_off`? Sorted, so O(n log n). *dup receives one
 * repeated name (NULL: none). False only when out of memory. */
static bool dup_names(compiler *c, uint32_t n, const void *recs, size_t stride, size_t name_off,
                      const char **dup)
{
    *dup = NULL;
    if (n < 2) {
        return true;
    }
    const char **names = scratch_alloc(c, n * sizeof *names);
    if (!names) {
        return fail(c, WEFT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        memcpy(&names[i], (const uint8_t *)recs + (size_t)i * stride + name_off, sizeof *names);
    }
    qsort(names, n, sizeof *names, cmp_name_ptr);
    for (uint32_t i = 1; i < n && !*dup; i++) {
        if (strcmp(names[i - 1], names[i]) == 0) {
            *dup = names[i];
        }
    }
    scratch_free(c, names, n * sizeof *names);
    return true;
}

static bool compile_enum(compiler *c, const weft_field *f, weft_kind base, wf_rfield *rf)
{
    if (f->enum_count <= 0 || !f->enum_values ||
        (uint32_t)f->enum_count > WF_REFLECT_MAX_ENUM_VALUES) {
        return fail(c, WEFT_ERR_INVALID_ARG, "an enum needs 1 to %u named values",
                    WF_REFLECT_MAX_ENUM_VALUES);
    }
    uint32_t n = (uint32_t)f->enum_count;
    wf_renum *vals = take(c, n * sizeof *vals, _Alignof(wf_renum));
    for (uint32_t i = 0; i < n; i++) {
        const weft_enum_value *v = &f->enum_values[i];
        if (!c->base) {
            if (!name_ok(v->name)) {
                return fail(c, WEFT_ERR_INVALID_ARG, "enum value %u has no valid name", i);
            }
            if (!int_fits(base, v->value)) {
                return fail(c, WEFT_ERR_INVALID_ARG,
                            "enum value '%s' = %lld does not fit its base %s", v->name,
                            (long long)v->value, wf_kind_name(base));
            }
        }
        const char *name = copy_str(c, v->name);
        if (vals) {
            vals[i].name = name;
            vals[i].value = v->value;
        }
    }
    if (!c->base) {
        const char *dup = NULL;
        if (!dup_names(c, n, f->enum_values, sizeof *f->enum_values,
                       offsetof(weft_enum_value, name), &dup)) {
            return false;
        }
        if (dup) {
            return fail(c, WEFT_ERR_INVALID_ARG, "enum value '%s' is named twice", dup);
        }
    }
    if (rf) {
        rf->enums = vals;
        rf->enum_count = n;
    }
    return true;
}

/* Element alignment of a nested struct description (validated). */
static uint32_t desc_align(const weft_type_desc *d)
{
    return (uint32_t)(d->align ? d->align : wf_default_align(d->size));
}

/* Validates (measuring) or writes (filling) one field; *ents receives the
 * entity values it holds. */
static bool compile_field(compiler *c, const weft_field *f, uint32_t struct_size,
                          uint32_t depth, wf_rfield *rf, uint64_t *ents)
{
    weft_kind kind = f->kind;
    *ents = 0;
    if ((unsigned)kind == 0 || (unsigned)kind >= (unsigned)WEFT_KIND_NUM) {
        return fail(c, WEFT_ERR_INVALID_ARG, "unknown kind %u", (unsigned)kind);
    }
    if (f->count < 0 || (uint32_t)f->count > WF_REFLECT_MAX_COUNT) {
        return fail(c, WEFT_ERR_INVALID_ARG, "count %d is out of range 0..%u", f->count,
                    WF_REFLECT_MAX_COUNT);
    }
    uint32_t count = f->count > 1 ? (uint32_t)f->count : 1u;
    uint32_t elem = wf_kind_size(kind);
    uint32_t align = wf_kind_align(kind);
    weft_kind base = WEFT_KIND_NONE;
    const wf_rtype *sub = NULL;
    if (kind == WEFT_KIND_STRING) {
        if (f->count < 1) {
            return fail(c, WEFT_ERR_INVALID_ARG,
                        "a string field needs count = its buffer's bytes (>= 1)");
        }
        elem = count;
        count = 1;
        align = 1;
    } else if (kind == WEFT_KIND_STRUCT) {
        if (!f->type) {
            return fail(c, WEFT_ERR_INVALID_ARG, "a struct field needs its type description");
        }
        uint64_t sub_ents = 0;
        const memo_entry *m = NULL;
        for (uint32_t i = 0; i < c->memo_n; i++) {
            if (c->memo[i].key == f->type) {
                m = &c->memo[i];
                break;
            }
        }
        if (m) {
            if (!c->base && depth + m->height > WF_REFLECT_MAX_DEPTH) {
                return fail(c, WEFT_ERR_INVALID_ARG, "structs nest deeper than %u levels",
                            WF_REFLECT_MAX_DEPTH);
            }
            sub = m->type;
            sub_ents = m->ents;
            c->height = m->height;
        } else {
            if (!compile_type(c, f->type, 0, 0, depth + 1, &sub, &sub_ents)) {
                return false;
            }
            if (c->memo_n == c->memo_cap) {
                uint32_t cap = c->memo_cap ? c->memo_cap * 2 : 16;
                memo_entry *nm = scratch_alloc(c, cap * sizeof *nm);
                if (!nm) {
                    return fail(c, WEFT_ERR_OUT_OF_MEMORY, "out of memory");
                }
                if (c->memo_n) {
                    memcpy(nm, c->memo, c->memo_n * sizeof *nm);
                    scratch_free(c, c->memo, c->memo_cap * sizeof *nm);
                }
                c->memo = nm;
                c->memo_cap = cap;
            }
            c->memo[c->memo_n++] = (memo_entry){f->type, sub, sub_ents, c->height};
        }
        elem = (uint32_t)f->type->size; /* validated by compile_type */
        align = desc_align(f->type);
        *ents = sub_ents * count;
    } else if (kind == WEFT_KIND_ENUM) {
        base = f->enum_base ? f->enum_base : WEFT_KIND_I32;
        if (!kind_is_int(base)) {
            return fail(c, WEFT_ERR_INVALID_ARG, "enum base %s is not an integer kind",
                        wf_kind_name(base));
        }
        elem = wf_kind_size(base);
        align = wf_kind_align(base);
    } else if (kind == WEFT_KIND_ENTITY) {
        *ents = count;
    }
    if (!c->base) {
        if (f->offset % align != 0) {
            return fail(c, WEFT_ERR_BAD_ALIGNMENT,
                        "offset %zu is not a multiple of the %s's alignment %u", f->offset,
                        wf_kind_name(kind), align);
        }
        uint64_t end = (uint64_t)elem * count + f->offset;
        if (f->offset > struct_size || end > struct_size) {
            return fail(c, WEFT_ERR_SIZE_MISMATCH,
                        "bytes %zu..%llu lie outside the %u-byte struct", f->offset,
                        (unsigned long long)end, struct_size);
        }
    }
    if (kind == WEFT_KIND_ENUM && !compile_enum(c, f, base, rf)) {
        return false;
    }
    if (rf) {
        rf->kind = kind;
        rf->offset = (uint32_t)f->offset;
        rf->count = count;
        rf->elem_size = elem;
        rf->base = base;
        rf->sub = sub;
    }
    return true;
}

/* Bytes covered by a validated field. */
static uint64_t field_bytes(const weft_field *f)
{
    uint64_t count = f->count > 1 ? (uint64_t)f->count : 1u;
    switch (f->kind) {
    case WEFT_KIND_SHAPE:
        return 0;
    case WEFT_KIND_STRING:
        return (uint64_t)f->count;
    case WEFT_KIND_STRUCT:
        return f->type->size * count;
    case WEFT_KIND_ENUM:
        return wf_kind_size(f->enum_base ? f->enum_base : WEFT_KIND_I32) * count;
    default:
        return wf_kind_size(f->kind) * count;
    }
}

static _Thread_local const weft_field *g_sort_fields;

static int cmp_field_offset(const void *a, const void *b)
{
    const weft_field *x = &g_sort_fields[*(const uint32_t *)a];
    const weft_field *y = &g_sort_fields[*(const uint32_t *)b];
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Names used once, fields overlapping none: both by sorting (a struct has
 * at most 4096 fields; every pair would be 8 million comparisons). */
static bool check_fields(compiler *c, const weft_type_desc *d, weft_shape shape)
{
    uint32_t n = (uint32_t)d->field_count;
    const char *dup = NULL;
    if (!dup_names(c, n, d->fields, sizeof *d->fields, offsetof(weft_field, name), &dup)) {
        return false;
    }
    if (dup) {
        size_t old = path_push(c, dup);
        fail(c, WEFT_ERR_INVALID_ARG, "field name used twice");
        path_pop(c, old);
        return false;
    }
    if (n < 2) {
        return true;
    }
    if (shape == WEFT_SHAPE_ENUM) {
        /* a tagged union: the payloads share their bytes, never the tag's
         * (the tag is the first value field; check_shape checks it is one) */
        const weft_field *tag = NULL;
        for (uint32_t i = 0; i < n && !tag; i++) {
            if (d->fields[i].kind != WEFT_KIND_SHAPE) {
                tag = &d->fields[i];
            }
        }
        uint64_t t_end = tag->offset + field_bytes(tag);
        for (uint32_t i = 0; i < n; i++) {
            const weft_field *f = &d->fields[i];
            uint64_t f_end = f->offset + field_bytes(f);
            if (f != tag && field_bytes(f) && f->offset < t_end && tag->offset < f_end) {
                return fail(c, WEFT_ERR_INVALID_ARG, "fields '%s' and '%s' overlap",
                            tag->name, f->name);
            }
        }
        return true;
    }
    uint32_t *idx = scratch_alloc(c, n * sizeof *idx);
    if (!idx) {
        return fail(c, WEFT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        idx[i] = i;
    }
    g_sort_fields = d->fields;
    qsort(idx, n, sizeof *idx, cmp_field_offset);
    /* sorted by start: a field overlaps an earlier one when it starts
     * before the furthest end so far (zero-byte fields overlap nothing) */
    uint64_t end = 0;
    uint32_t end_of = 0;
    bool ok = true;
    for (uint32_t k = 0; k < n && ok; k++) {
        const weft_field *f = &d->fields[idx[k]];
        uint64_t bytes = field_bytes(f);
        if (bytes && f->offset < end) {
            const weft_field *g = &d->fields[end_of];
            /* report in description order, as before */
            const weft_field *a = end_of < idx[k] ? g : f, *b = end_of < idx[k] ? f : g;
            ok = fail(c, WEFT_ERR_INVALID_ARG, "fields '%s' and '%s' overlap", a->name,
                      b->name);
        }
        if (f->offset + bytes > end) {
            end = f->offset + bytes;
            end_of = idx[k];
        }
    }
    scratch_free(c, idx, n * sizeof *idx);
    return ok;
}

/* The fields a shape needs (WEFT_KIND_SHAPE fields aside). */
static bool check_shape(compiler *c, const weft_type_desc *d, weft_shape shape)
{
    const weft_field *v[2] = {NULL, NULL};
    uint32_t nv = 0;
    for (int32_t i = 0; i < d->field_count; i++) {
        if (d->fields[i].kind != WEFT_KIND_SHAPE) {
            if (nv < 2) {
                v[nv] = &d->fields[i];
            }
            nv++;
        }
    }
    switch (shape) {
    case WEFT_SHAPE_NEWTYPE:
        if (nv != 1) {
            return fail(c, WEFT_ERR_INVALID_ARG, "a newtype needs exactly one field, not %u", nv);
        }
        return true;
    case WEFT_SHAPE_OPTION:
        if (nv != 2 || v[0]->kind != WEFT_KIND_BOOL || v[0]->count > 1) {
            return fail(c, WEFT_ERR_INVALID_ARG,
                        "an option needs two fields: a bool (is there a value), then the value");
        }
        return true;
    case WEFT_SHAPE_ENUM: {
        if (nv < 1 || v[0]->kind != WEFT_KIND_ENUM || v[0]->count > 1) {
            return fail(c, WEFT_ERR_INVALID_ARG,
                        "an enum with data needs an enum field first (the tag)");
        }
        const weft_field *tag = v[0];
        for (int32_t i = 0; i < d->field_count; i++) {
            const weft_field *f = &d->fields[i];
            if (f == tag || f->kind == WEFT_KIND_SHAPE) {
                continue;
            }
            bool named = false;
            for (int32_t k = 0; k < tag->enum_count && !named; k++) {
                named = strcmp(tag->enum_values[k].name, f->name) == 0;
            }
            if (!named) {
                return fail(c, WEFT_ERR_INVALID_ARG,
                            "payload field '%s' names no variant of the tag '%s'", f->name,
                            tag->name);
            }
        }
        return true;
    }
    default:
        return true;
    }
}

/* Validates or writes a struct type. Top level: size/align are the
 * component's (non-zero); nested: 0, taken from the description. */
static bool compile_type(compiler *c, const weft_type_desc *d, uint32_t size, uint32_t align,
                         uint32_t depth, const wf_rtype **out, uint64_t *ents)
{
    *ents = 0;
    if (!c->base) {
        if (depth > WF_REFLECT_MAX_DEPTH) {
            return fail(c, WEFT_ERR_INVALID_ARG, "structs nest deeper than %u levels",
                        WF_REFLECT_MAX_DEPTH);
        }
        if (d->field_count < 0 || (uint32_t)d->field_count > WF_REFLECT_MAX_FIELDS ||
            (d->field_count > 0 && !d->fields)) {
            return fail(c, WEFT_ERR_INVALID_ARG, "field_count %d with fields %s",
                        d->field_count, d->fields ? "set" : "NULL");
        }
        if (size == 0) {
            size_t a = d->align ? d->align : wf_default_align(d->size);
            if (d->size == 0 || d->size > WF_MAX_COMPONENT_SIZE) {
                return fail(c, WEFT_ERR_SIZE_MISMATCH,
                            "a nested struct needs a size of 1..%u bytes",
                            WF_MAX_COMPONENT_SIZE);
            }
            if ((a & (a - 1)) != 0 || a > WF_MAX_ALIGN || d->size % a != 0) {
                return fail(c, WEFT_ERR_BAD_ALIGNMENT,
                            "nested alignment %zu does not suit size %zu", a, d->size);
            }
        } else {
            if (d->size && d->size != size) {
                return fail(c, WEFT_ERR_SIZE_MISMATCH,
                            "described size %zu differs from the registered %u", d->size,
                            size);
            }
            if (d->align && d->align != align) {
                return fail(c, WEFT_ERR_BAD_ALIGNMENT,
                            "described alignment %zu differs from the registered %u",
                            d->align, align);
            }
        }
    }
    if (size == 0) {
        size = (uint32_t)d->size;
        align = desc_align(d);
    }
    uint32_t n = (uint32_t)d->field_count;
    /* WEFT_KIND_SHAPE fields set the shape and are left out of the tree */
    weft_shape shape = WEFT_SHAPE_STRUCT;
    uint32_t shapes = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (d->fields[i].kind == WEFT_KIND_SHAPE) {
            shapes++;
            shape = (weft_shape)d->fields[i].count;
        }
    }
    if (!c->base && shapes > 1) {
        return fail(c, WEFT_ERR_INVALID_ARG, "more than one shape field");
    }
    if (!c->base && ((unsigned)shape >= (unsigned)WEFT_SHAPE_NUM)) {
        return fail(c, WEFT_ERR_INVALID_ARG, "unknown shape %d", (int)shape);
    }
    wf_rtype *t = take(c, sizeof *t, _Alignof(wf_rtype));
    wf_rfield *fields = take(c, (n - shapes) * sizeof *fields, _Alignof(wf_rfield));
    const char *tname = copy_str(c, d->name ? d->name : "");
    uint32_t height = 0;
    uint32_t nf = 0;
    for (uint32_t i = 0; i < n; i++) {
        const weft_field *f = &d->fields[i];
        if (!c->base && !name_ok(f->name)) {
            return fail(c, WEFT_ERR_INVALID_ARG,
                        "field %u needs a name of letters, digits and '_' (at most 63)", i);
        }
        if (f->kind == WEFT_KIND_SHAPE) {
            continue;
        }
        size_t old = path_push(c, f->name);
        wf_rfield *rf = fields ? &fields[nf] : NULL;
        nf++;
        if (rf) {
            memset(rf, 0, sizeof *rf);
            rf->name = copy_str(c, f->name);
        } else {
            copy_str(c, f->name);
        }
        uint64_t fe = 0;
        c->height = 0;
        if (!compile_field(c, f, size, depth, rf, &fe)) {
            return false;
        }
        if (c->height > height) {
            height = c->height;
        }
        *ents += fe;
        if (!c->base && *ents > WF_REFLECT_MAX_COUNT) {
            return fail(c, WEFT_ERR_INVALID_ARG, "more than %u entity values",
                        WF_REFLECT_MAX_COUNT);
        }
        path_pop(c, old);
    }
    if (!c->base && (!check_fields(c, d, shape) || !check_shape(c, d, shape))) {
        return false;
    }
    c->height = height + 1;
    if (t) {
        t->name = tname;
        t->size = size;
        t->align = align;
        t->fields = fields;
        t->field_count = nf;
        t->shape = shape;
    }
    *out = t;
    return true;
}

static void memo_free(compiler *c)
{
    if (c->memo) {
        scratch_free(c, c->memo, c->memo_cap * sizeof *c->memo);
    }
    c->memo = NULL;
    c->memo_n = c->memo_cap = 0;
}

/* Appends the offsets of every entity value of `t` placed at `at`. */
static uint32_t gather_entities(const wf_rtype *t, uint32_t at, uint32_t *offs, uint32_t n)
{
    for (uint32_t i = 0; i < t->field_count; i++) {
        const wf_rfield *f = &t->fields[i];
        for (uint32_t k = 0; k < f->count; k++) {
            uint32_t off = at + f->offset + k * f->elem_size;
            if (f->kind == WEFT_KIND_ENTITY) {
                offs[n++] = off;
            } else if (f->kind == WEFT_KIND_STRUCT) {
                n = gather_entities(f->sub, off, offs, n);
            }
        }
    }
    return n;
}

wf_rdesc *wf_rdesc_compile(weft_world *w, const weft_type_desc *desc, uint32_t size,
                           uint32_t align, const char *what, weft_status *out_status)
{
    compiler c;
    memset(&c, 0, sizeof c);
    c.w = w;
    snprintf(c.path, sizeof c.path, "%s", what);
    c.path_len = strlen(c.path);
    const wf_rtype *root = NULL;
    uint64_t ents = 0;
    /* measuring pass: rdesc header and entity offsets first, then the tree */
    take(&c, sizeof(wf_rdesc), _Alignof(wf_rdesc));
    bool ok = compile_type(&c, desc, size, align, 0, &root, &ents);
    memo_free(&c);
    if (!ok) {
        *out_status = c.st;
        return NULL;
    }
    size_t tree = c.used;
    /* ents <= WF_REFLECT_MAX_COUNT (checked while measuring): fits size_t */
    size_t total = tree + 8 + (size_t)ents * sizeof(uint32_t);
    uint8_t *block = wf_alloc(&w->alloc, total, _Alignof(max_align_t));
    if (!block) {
        *out_status = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory describing '%s'",
                               what);
        return NULL;
    }
    memset(&c, 0, sizeof c);
    c.w = w;
    c.base = block;
    wf_rdesc *d = take(&c, sizeof *d, _Alignof(wf_rdesc));
    /* validated: only the memo's allocation can fail */
    ok = compile_type(&c, desc, size, align, 0, &root, &ents);
    memo_free(&c);
    if (!ok) {
        wf_free(&w->alloc, block, total, _Alignof(max_align_t));
        *out_status = c.st;
        return NULL;
    }
    d->root = root;
    d->block = block;
    d->block_size = total;
    uint32_t *offs = (uint32_t *)(void *)(block + ((tree + 7) & ~(size_t)7));
    d->entity_offs = offs;
    d->entity_count = gather_entities(root, 0, offs, 0);
    *out_status = WEFT_OK;
    return d;
}

void wf_rdesc_free(weft_world *w, wf_rdesc *d)
{
    if (d) {
        wf_free(&w->alloc, d->block, d->block_size, _Alignof(max_align_t));
    }
}

/* ---- the per-world table ---- */

static void reflect_fini(weft_world *w)
{
    wf_reflect *r = w->reflect;
    for (uint32_t i = 0; i < r->comp_cap; i++) {
        wf_rdesc_free(w, r->comps[i]);
    }
    for (uint32_t i = 0; i < r->msg_cap; i++) {
        wf_rdesc_free(w, r->msgs[i]);
    }
    wf_free(&w->alloc, r->comps, r->comp_cap * sizeof *r->comps, _Alignof(wf_rdesc *));
    wf_free(&w->alloc, r->msgs, r->msg_cap * sizeof *r->msgs, _Alignof(wf_rdesc *));
    wf_free(&w->alloc, r, sizeof *r, _Alignof(wf_reflect));
    w->reflect = NULL;
    w->reflect_fini = NULL;
}

const wf_rdesc *wf_reflect_component(const weft_world *w, weft_component c)
{
    const wf_reflect *r = w->reflect;
    return r && c < r->comp_cap ? r->comps[c] : NULL;
}

const wf_rdesc *wf_reflect_message(const weft_world *w, weft_message_type t)
{
    const wf_reflect *r = w->reflect;
    return r && t < r->msg_cap ? r->msgs[t] : NULL;
}

bool wf_reflect_install(weft_world *w, bool msg, uint32_t id, wf_rdesc *d)
{
    if (!w->reflect) {
        wf_reflect *r = wf_calloc(&w->alloc, sizeof *r, _Alignof(wf_reflect));
        if (!r) {
            wf_rdesc_free(w, d);
            return false;
        }
        w->reflect = r;
        w->reflect_fini = reflect_fini;
    }
    wf_reflect *r = w->reflect;
    wf_rdesc ***table = msg ? &r->msgs : &r->comps;
    uint32_t *cap = msg ? &r->msg_cap : &r->comp_cap;
    if (id >= *cap) {
        uint32_t old = *cap;
        void *data = *table;
        if (!wf_grow(&w->alloc, &data, cap, id + 1, sizeof(wf_rdesc *),
                     _Alignof(wf_rdesc *))) {
            wf_rdesc_free(w, d);
            return false;
        }
        *table = data;
        memset(*table + old, 0, (*cap - old) * sizeof **table);
    }
    (*table)[id] = d;
    return true;
}

/* src/reflect/json.c - JSON through type descriptions: write and read.
 * SPDX-License-Identifier: MIT
 *
 * Writing needs no library: values are emitted from their descriptions
 * into the caller's buffer (measure with a NULL buffer first), so nothing
 * is allocated. Shapes:
 *   component  an object with the described fields in description order;
 *              arrays as JSON arrays, enums by name, strings as strings,
 *              entities as numbers, nested structs as objects;
 *   entity     {"id": <entity>, "components": {"<name>": <component>, ...}}
 *              with every described component and every tag ({}), in
 *              archetype order; undescribed components are left out;
 *   query      [<entity>, ...] for the entities the query matches.
 * Numbers: integers exactly (a u64 above INT64_MAX is written as a decimal
 * string, which the reader accepts, since a JSON reader may hold integers
 * in 64 signed bits); floats with enough digits to read back the same
 * value (f32 %.9g, f64 %.17g); NaN and infinities as null.
 *
 * Reading parses with jansson (Debian's libjansson: small, stable, strict
 * RFC 8259 parser with a nesting limit; its scratch memory comes from
 * jansson's own allocator and is released before the call returns) and
 * walks the tree against the description. Every field of the value must
 * be known and of the right JSON type and range; missing fields keep the
 * entity's current value (or the default for a new component); entity
 * fields must be 0 or a live entity. Errors name the path
 * ("body.slots[2].count: expected an integer"). Values are decoded into
 * scratch copies and inserted in one structural step per entity only when
 * everything decoded, so a failed read changes nothing. Without jansson
 * (WEFT_HAVE_JANSSON undefined) the readers report INVALID_ARG.
 */
#include "reflect/jwrite.h"
#include "reflect/reflect.h"
#include "world/resource.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#ifdef WEFT_HAVE_JANSSON
#include <jansson.h>
#endif

/* ==================================================================== */
/* ---- writer (the text primitives are in reflect/jwrite.h) ---- */

static int64_t load_int(weft_kind k, const uint8_t *p)
{
    switch (k) {
    case WEFT_KIND_I8: { int8_t v; memcpy(&v, p, 1); return v; }
    case WEFT_KIND_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case WEFT_KIND_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case WEFT_KIND_I64: { int64_t v; memcpy(&v, p, 8); return v; }
    case WEFT_KIND_U8: return p[0];
    case WEFT_KIND_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case WEFT_KIND_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { int64_t v; memcpy(&v, p, 8); return v; }
    }
}

static void jw_type(wf_jw *o, const wf_rtype *t, const uint8_t *p);

/* A float with the digits that read back the same value: -0.0 keeps its
 * sign and a fraction ("-0.0": a reader takes "-0" for the integer 0).
 * NaN and the infinities have no JSON number: they are written as the
 * strings "NaN", "Infinity" and "-Infinity", which the reader takes back
 * (docs/reflection.md; any NaN reads back as the quiet NaN). */
static void jw_float(wf_jw *o, double v, int digits)
{
    if (isnan(v) || isinf(v)) {
        wf_jw_lit(o, isnan(v) ? "\"NaN\"" : v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
        return;
    }
    if (v == 0 && signbit(v)) {
        wf_jw_lit(o, "-0.0");
        return;
    }
    wf_jw_fmt(o, "%.*g", digits, v);
}

static void jw_elem(wf_jw *o, const wf_rfield *f, const uint8_t *p)
{
    switch (f->kind) {
    case WEFT_KIND_BOOL:
        wf_jw_lit(o, p[0] ? "true" : "false");
        break;
    case WEFT_KIND_I8:
    case WEFT_KIND_I16:
    case WEFT_KIND_I32:
    case WEFT_KIND_I64:
    case WEFT_KIND_U8:
    case WEFT_KIND_U16:
    case WEFT_KIND_U32:
        wf_jw_fmt(o, "%lld", (long long)load_int(f->kind, p));
        break;
    case WEFT_KIND_U64:
    case WEFT_KIND_ENTITY: {
        uint64_t v;
        memcpy(&v, p, 8);
        wf_jw_fmt(o, v > (uint64_t)INT64_MAX ? "\"%llu\"" : "%llu", (unsigned long long)v);
        break;
    }
    case WEFT_KIND_F32: {
        float v;
        memcpy(&v, p, 4);
        jw_float(o, (double)v, 9);
        break;
    }
    case WEFT_KIND_F64: {
        double v;
        memcpy(&v, p, 8);
        jw_float(o, v, 17);
        break;
    }
    case WEFT_KIND_STRING: {
        bool was = o->bad;
        wf_jw_str(o, (const char *)p, f->elem_size);
        if (o->bad && !was && !o->bad_field) {
            o->bad_field = f->name;
        }
        break;
    }
    case WEFT_KIND_STRUCT:
        jw_type(o, f->sub, p);
        break;
    case WEFT_KIND_ENUM: {
        int64_t v = load_int(f->base, p);
        for (uint32_t i = 0; i < f->enum_count; i++) {
            if (f->enums[i].value == v) {
                wf_jw_str(o, f->enums[i].name, SIZE_MAX);
                return;
            }
        }
        wf_jw_fmt(o, "%lld", (long long)v); /* a value without a name */
        break;
    }
    default:
        wf_jw_lit(o, "null");
        break;
    }
}

/* One field's value: its element, or the array of its elements. */
static void jw_value(wf_jw *o, const wf_rfield *f, const uint8_t *p)
{
    if (f->count > 1) {
        wf_jw_raw(o, "[", 1);
        for (uint32_t k = 0; k < f->count; k++) {
            if (k) {
                wf_jw_raw(o, ",", 1);
            }
            jw_elem(o, f, p + f->offset + (size_t)k * f->elem_size);
        }
        wf_jw_raw(o, "]", 1);
    } else {
        jw_elem(o, f, p + f->offset);
    }
}

/* The payload field of variant `name` of a WEFT_SHAPE_ENUM type (NULL: a
 * unit variant). */
static const wf_rfield *variant_payload(const wf_rtype *t, const char *name)
{
    for (uint32_t i = 1; i < t->field_count; i++) {
        if (strcmp(t->fields[i].name, name) == 0) {
            return &t->fields[i];
        }
    }
    return NULL;
}

static void jw_type(wf_jw *o, const wf_rtype *t, const uint8_t *p)
{
    switch (t->shape) {
    case WEFT_SHAPE_NEWTYPE:
        jw_value(o, &t->fields[0], p);
        return;
    case WEFT_SHAPE_OPTION:
        if (p[t->fields[0].offset]) {
            jw_value(o, &t->fields[1], p);
        } else {
            wf_jw_lit(o, "null");
        }
        return;
    case WEFT_SHAPE_ENUM: {
        const wf_rfield *tag = &t->fields[0];
        int64_t v = load_int(tag->base, p + tag->offset);
        for (uint32_t i = 0; i < tag->enum_count; i++) {
            if (tag->enums[i].value == v) {
                const wf_rfield *pay = variant_payload(t, tag->enums[i].name);
                if (!pay) {
                    wf_jw_str(o, tag->enums[i].name, SIZE_MAX); /* a unit variant */
                    return;
                }
                wf_jw_raw(o, "{", 1);
                wf_jw_str(o, tag->enums[i].name, SIZE_MAX);
                wf_jw_raw(o, ":", 1);
                jw_value(o, pay, p);
                wf_jw_raw(o, "}", 1);
                return;
            }
        }
        wf_jw_fmt(o, "%lld", (long long)v); /* a tag without a name */
        return;
    }
    case WEFT_SHAPE_TUPLE:
        wf_jw_raw(o, "[", 1);
        for (uint32_t i = 0; i < t->field_count; i++) {
            if (i) {
                wf_jw_raw(o, ",", 1);
            }
            jw_value(o, &t->fields[i], p);
        }
        wf_jw_raw(o, "]", 1);
        return;
    default:
        break;
    }
    wf_jw_raw(o, "{", 1);
    for (uint32_t i = 0; i < t->field_count; i++) {
        const wf_rfield *f = &t->fields[i];
        if (i) {
            wf_jw_raw(o, ",", 1);
        }
        wf_jw_str(o, f->name, SIZE_MAX);
        wf_jw_raw(o, ":", 1);
        jw_value(o, f, p);
    }
    wf_jw_raw(o, "}", 1);
}

/* Value pointer of component c on a live entity (NULL for tags). */
static const uint8_t *value_of(const weft_world *w, const wf_record *rec, weft_entity e,
                               const wf_type_info *ti)
{
    if (!ti->size) {
        return NULL;
    }
    if (ti->storage == WEFT_STORAGE_SPARSE) {
        return wf_column_ptr(&ti->sparse->dense, wf_sparse_find(ti->sparse, (uint32_t)e));
    }
    const wf_archetype *arch = wf_world_archetype(w, rec->arch);
    return wf_column_ptr(wf_table_column(arch->table, ti->id), rec->row);
}

static void jw_entity(wf_jw *o, const weft_world *w, weft_entity e, const wf_record *rec)
{
    wf_jw_fmt(o, "{\"id\":%llu,\"components\":{", (unsigned long long)e);
    const wf_archetype *arch = wf_world_archetype(w, rec->arch);
    bool first = true;
    for (uint32_t i = 0; i < arch->id_count; i++) {
        const wf_type_info *ti = wf_registry_get(&w->registry, arch->ids[i]);
        const wf_rdesc *d = wf_reflect_component(w, ti->id);
        if ((ti->size && !d && !ti->rel_targets) || ti->rel_source) {
            continue; /* undescribed, or a relationship list (derived) */
        }
        if (!first) {
            wf_jw_raw(o, ",", 1);
        }
        first = false;
        wf_jw_str(o, ti->name, ti->name_len);
        wf_jw_raw(o, ":", 1);
        if (d) {
            jw_type(o, d->root, value_of(w, rec, e, ti));
        } else if (ti->rel_targets) {
            weft_entity target;
            memcpy(&target, value_of(w, rec, e, ti), sizeof target);
            wf_jw_fmt(o, "{\"target\":%llu}", (unsigned long long)target);
        } else {
            wf_jw_lit(o, "null"); /* a tag: a unit struct */
        }
    }
    wf_jw_raw(o, "}}", 2);
}

/* Runs `emit` once to measure, then, when the text and its NUL fit, once
 * more into the buffer: a NULL or too small buffer is left untouched. */
typedef void (*jw_emit_fn)(wf_jw *o, const void *ctx);

static weft_status jw_run(const weft_world *w, jw_emit_fn emit, const void *ctx, char *buf,
                          size_t cap, size_t *out_len, const char *fn)
{
    wf_jw m = {NULL, 0, 0, false, NULL};
    emit(&m, ctx);
    *out_len = m.len + 1;
    if (m.bad) {
        *out_len = 0;
        return wf_error(w, WEFT_ERR_BAD_FORMAT,
                        "%s: field '%s' holds a string that is not valid UTF-8", fn,
                        m.bad_field ? m.bad_field : "(a name)");
    }
    if (!buf) {
        return WEFT_ERR_CAPACITY;
    }
    if (m.len + 1 > cap) {
        return wf_error(w, WEFT_ERR_CAPACITY, "%s: needs %zu bytes, the buffer has %zu", fn,
                        m.len + 1, cap);
    }
    wf_jw o = {buf, cap, 0, false, NULL};
    emit(&o, ctx);
    o.buf[o.len] = '\0';
    return WEFT_OK;
}

typedef struct jw_comp_ctx {
    const wf_rtype *root;
    const uint8_t *value;
} jw_comp_ctx;

static void jw_emit_component(wf_jw *o, const void *ctx)
{
    const jw_comp_ctx *c = ctx;
    jw_type(o, c->root, c->value);
}

weft_status wf_json_write_component(const weft_world *w, weft_entity e, weft_component c,
                                    char *buf, size_t cap, size_t *out_len)
{
    wf_record *rec;
    weft_status st = wf_entity_check(w, e, &rec);
    if (st != WEFT_OK) {
        return st;
    }
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (!ti) {
        return wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT, "component id %u is not registered", c);
    }
    const wf_rdesc *d = wf_reflect_component(w, c);
    if (!d) {
        return wf_error(w, WEFT_ERR_NOT_FOUND, "component '%s' has no description", ti->name);
    }
    if (!wf_archetype_has(wf_world_archetype(w, rec->arch), c)) {
        return wf_error(w, WEFT_ERR_NOT_FOUND, "entity %u:%u has no '%s'", (uint32_t)e,
                        (uint32_t)(e >> 32), ti->name);
    }
    jw_comp_ctx ctx = {d->root, value_of(w, rec, e, ti)};
    return jw_run(w, jw_emit_component, &ctx, buf, cap, out_len, "weft_json_write_component");
}

static void jw_emit_empty(wf_jw *o, const void *ctx)
{
    (void)ctx;
    wf_jw_lit(o, "null"); /* a tag resource: a unit struct */
}

weft_status wf_json_write_resource(const weft_world *w, weft_component r, char *buf, size_t cap,
                                   size_t *out_len)
{
    const wf_type_info *ti = wf_registry_get(&w->registry, r);
    if (!ti) {
        return wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT, "resource id %u is not registered", r);
    }
    if (!ti->res_present) {
        return wf_error(w, WEFT_ERR_NOT_FOUND, "resource '%s' is not present", ti->name);
    }
    if (!ti->size) {
        return jw_run(w, jw_emit_empty, NULL, buf, cap, out_len, "weft_json_write_resource");
    }
    const wf_rdesc *d = wf_reflect_component(w, r);
    if (!d) {
        return wf_error(w, WEFT_ERR_NOT_FOUND, "resource '%s' has no description", ti->name);
    }
    jw_comp_ctx ctx = {d->root, ti->res_value};
    return jw_run(w, jw_emit_component, &ctx, buf, cap, out_len, "weft_json_write_resource");
}

typedef struct jw_entity_ctx {
    const weft_world *w;
    weft_entity e;
    const wf_record *rec;
} jw_entity_ctx;

static void jw_emit_entity(wf_jw *o, const void *ctx)
{
    const jw_entity_ctx *c = ctx;
    jw_entity(o, c->w, c->e, c->rec);
}

weft_status wf_json_write_entity(const weft_world *w, weft_entity e, char *buf, size_t cap,
                                 size_t *out_len)
{
    wf_record *rec;
    weft_status st = wf_entity_check(w, e, &rec);
    if (st != WEFT_OK) {
        return st;
    }
    jw_entity_ctx ctx = {w, e, rec};
    return jw_run(w, jw_emit_entity, &ctx, buf, cap, out_len, "weft_json_write_entity");
}

typedef struct jw_query_ctx {
    weft_world *w;
    weft_query *q;
    wf_query_env env;
} jw_query_ctx;

/* An iteration that does not count as a run: last_run stays. */
static void jw_emit_query(wf_jw *o, const void *ctx)
{
    const jw_query_ctx *c = ctx;
    weft_world *w = c->w;
    weft_query *q = c->q;
    wf_iter it;
    wf_iter_init(&it, w, q, &c->env, q->last_run, w->change_tick, false);
    q->iterating++;
    w->iter_depth++;
    wf_jw_raw(o, "[", 1);
    bool first = true;
    while (wf_iter_step(&it)) {
        const weft_entity *es = it.table->entities + it.start;
        for (uint32_t i = 0; i < it.count; i++) {
            if (!first) {
                wf_jw_raw(o, ",", 1);
            }
            first = false;
            jw_entity(o, w, es[i], &w->entities.records[(uint32_t)es[i]]);
        }
    }
    wf_jw_raw(o, "]", 1);
    it.state = WF_ITER_DONE;
    q->iterating--;
    w->iter_depth--;
}

weft_status wf_json_write_query(weft_world *w, weft_query *q, char *buf, size_t cap,
                                size_t *out_len)
{
    jw_query_ctx ctx = {w, q, wf_world_query_env(w)};
    if (!wf_query_update(q, &ctx.env)) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "weft_json_write_query: out of memory "
                        "matching archetypes");
    }
    return jw_run(w, jw_emit_query, &ctx, buf, cap, out_len, "weft_json_write_query");
}

/* ==================================================================== */
/* ---- reader ---- */

#ifdef WEFT_HAVE_JANSSON

typedef struct jr {
    weft_world *w;
    weft_status st;
    char path[WF_REFLECT_MAX_PATH];
    size_t path_len;
} jr;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static bool jr_fail(jr *r, weft_status st, const char *fmt, ...);

static bool jr_fail(jr *r, weft_status st, const char *fmt, ...)
{
    char prefix[WF_REFLECT_MAX_PATH + 16];
    snprintf(prefix, sizeof prefix, "JSON %s: ", r->path);
    va_list ap;
    va_start(ap, fmt);
    r->st = wf_error_va(r->w, st, prefix, fmt, ap);
    va_end(ap);
    return false;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static size_t jr_push(jr *r, const char *fmt, ...);

static size_t jr_push(jr *r, const char *fmt, ...)
{
    size_t old = r->path_len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->path + old, sizeof r->path - old, fmt, ap);
    va_end(ap);
    if (n > 0) {
        r->path_len = old + (size_t)n < sizeof r->path ? old + (size_t)n : sizeof r->path - 1;
    }
    return old;
}

static void jr_pop(jr *r, size_t old)
{
    r->path_len = old;
    r->path[old] = '\0';
}

static const char *jr_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* A u64 from an integer >= 0 or a decimal string. */
static bool jr_u64(jr *r, const json_t *v, uint64_t *out)
{
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x < 0) {
            return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "%lld is negative", (long long)x);
        }
        *out = (uint64_t)x;
        return true;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t n = json_string_length(v);
        uint64_t x = 0;
        if (n == 0 || n > 20) {
            return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "expected a decimal number string");
        }
        for (size_t i = 0; i < n; i++) {
            if (s[i] < '0' || s[i] > '9' || x > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10u) {
                return jr_fail(r, WEFT_ERR_TYPE_MISMATCH,
                               "expected a decimal number string up to 2^64-1");
            }
            x = x * 10u + (uint64_t)(s[i] - '0');
        }
        *out = x;
        return true;
    }
    return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "expected an unsigned integer, got %s",
                   jr_kind(v));
}

static void store_int(weft_kind k, uint8_t *p, int64_t v)
{
    switch (k) {
    case WEFT_KIND_I8: { int8_t x = (int8_t)v; memcpy(p, &x, 1); break; }
    case WEFT_KIND_I16: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
    case WEFT_KIND_I32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
    case WEFT_KIND_U8: p[0] = (uint8_t)v; break;
    case WEFT_KIND_U16: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case WEFT_KIND_U32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    default: memcpy(p, &v, 8); break;
    }
}

static bool int_in_range(weft_kind k, int64_t v)
{
    switch (k) {
    case WEFT_KIND_I8: return v >= INT8_MIN && v <= INT8_MAX;
    case WEFT_KIND_I16: return v >= INT16_MIN && v <= INT16_MAX;
    case WEFT_KIND_I32: return v >= INT32_MIN && v <= INT32_MAX;
    case WEFT_KIND_U8: return v >= 0 && v <= UINT8_MAX;
    case WEFT_KIND_U16: return v >= 0 && v <= UINT16_MAX;
    case WEFT_KIND_U32: return v >= 0 && v <= (int64_t)UINT32_MAX;
    default: return true;
    }
}

static bool jr_entity(jr *r, const json_t *v, uint8_t *p)
{
    uint64_t e = 0;
    if (!jr_u64(r, v, &e)) {
        return false;
    }
    if (e != 0 && !wf_entity_live(r->w, e)) {
        return jr_fail(r, WEFT_ERR_STALE_ENTITY, "entity %u:%u is not alive (dangling)",
                       (uint32_t)e, (uint32_t)(e >> 32));
    }
    memcpy(p, &e, 8);
    return true;
}

static bool jr_type(jr *r, const wf_rtype *t, const json_t *obj, uint8_t *p);

static bool jr_elem(jr *r, const wf_rfield *f, const json_t *v, uint8_t *p)
{
    switch (f->kind) {
    case WEFT_KIND_BOOL:
        if (!json_is_boolean(v)) {
            return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "expected a boolean, got %s",
                           jr_kind(v));
        }
        p[0] = json_is_true(v) ? 1u : 0u;
        return true;
    case WEFT_KIND_I8:
    case WEFT_KIND_I16:
    case WEFT_KIND_I32:
    case WEFT_KIND_I64:
    case WEFT_KIND_U8:
    case WEFT_KIND_U16:
    case WEFT_KIND_U32: {
        if (!json_is_integer(v)) {
            return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "expected an integer, got %s",
                           jr_kind(v));
        }
        int64_t x = (int64_t)json_integer_value(v);
        if (!int_in_range(f->kind, x)) {
            return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "%lld does not fit a %s", (long long)x,
                           wf_kind_name(f->kind));
        }
        store_int(f->kind, p, x);
        return true;
    }
    case WEFT_KIND_U64: {
        uint64_t x = 0;
        if (!jr_u64(r, v, &x)) {
            return false;
        }
        memcpy(p, &x, 8);
        return true;
    }
    case WEFT_KIND_ENTITY:
        return jr_entity(r, v, p);
    case WEFT_KIND_F32:
    case WEFT_KIND_F64: {
        double x;
        if (json_is_null(v)) {
            x = (double)NAN; /* what weft wrote for NaN before */
        } else if (json_is_number(v)) {
            x = json_number_value(v);
        } else if (json_is_string(v) && strcmp(json_string_value(v), "NaN") == 0) {
            x = (double)NAN;
        } else if (json_is_string(v) && strcmp(json_string_value(v), "Infinity") == 0) {
            x = (double)INFINITY;
        } else if (json_is_string(v) && strcmp(json_string_value(v), "-Infinity") == 0) {
            x = -(double)INFINITY;
        } else {
            return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "expected a number, got %s", jr_kind(v));
        }
        if (f->kind == WEFT_KIND_F32) {
            /* doubles below FLT_MAX plus half its ulp round to a finite
             * float (the shortest text of FLT_MAX, 3.40282347e38, is
             * above FLT_MAX itself) */
            if (isfinite(x) && fabs(x) >= 0x1.ffffffp127) {
                return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "%g does not fit an f32", x);
            }
            float y = (float)x;
            memcpy(p, &y, 4);
        } else {
            memcpy(p, &x, 8);
        }
        return true;
    }
    case WEFT_KIND_STRING: {
        if (!json_is_string(v)) {
            return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "expected a string, got %s", jr_kind(v));
        }
        size_t n = json_string_length(v);
        const char *s = json_string_value(v);
        if (n >= f->elem_size || memchr(s, 0, n)) {
            return jr_fail(r, WEFT_ERR_TYPE_MISMATCH,
                           "a string of %zu bytes does not fit %u bytes with its NUL", n,
                           f->elem_size);
        }
        memset(p, 0, f->elem_size);
        memcpy(p, s, n);
        return true;
    }
    case WEFT_KIND_STRUCT:
        return jr_type(r, f->sub, v, p);
    case WEFT_KIND_ENUM: {
        if (json_is_string(v)) {
            const char *s = json_string_value(v);
            for (uint32_t i = 0; i < f->enum_count; i++) {
                if (strcmp(f->enums[i].name, s) == 0) {
                    store_int(f->base, p, f->enums[i].value);
                    return true;
                }
            }
            return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "'%s' is not a value of enum '%s'", s,
                           f->name);
        }
        if (json_is_integer(v)) {
            int64_t x = (int64_t)json_integer_value(v);
            for (uint32_t i = 0; i < f->enum_count; i++) {
                if (f->enums[i].value == x) {
                    store_int(f->base, p, x);
                    return true;
                }
            }
            return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "%lld is not a value of enum '%s'",
                           (long long)x, f->name);
        }
        return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "expected an enum name, got %s",
                       jr_kind(v));
    }
    default:
        return jr_fail(r, WEFT_ERR_INTERNAL, "field of unknown kind");
    }
}

static const wf_rfield *jr_field(const wf_rtype *t, const char *name)
{
    for (uint32_t i = 0; i < t->field_count; i++) {
        if (strcmp(t->fields[i].name, name) == 0) {
            return &t->fields[i];
        }
    }
    return NULL;
}

/* One field's value: its element, or the array of exactly its count. */
static bool jr_value(jr *r, const wf_rfield *f, const json_t *v, uint8_t *p)
{
    if (f->count > 1) {
        if (!json_is_array(v) || json_array_size(v) != f->count) {
            return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "expected an array of %u, got %s",
                           f->count, jr_kind(v));
        }
        for (uint32_t k = 0; k < f->count; k++) {
            size_t o2 = jr_push(r, "[%u]", k);
            if (!jr_elem(r, f, json_array_get(v, k), p + f->offset + (size_t)k * f->elem_size)) {
                return false;
            }
            jr_pop(r, o2);
        }
        return true;
    }
    return jr_elem(r, f, v, p + f->offset);
}

static uint32_t field_bytes(const wf_rfield *f)
{
    return f->count * f->elem_size;
}

/* A WEFT_SHAPE_ENUM value: "Unit" or {"Variant": payload}. */
static bool jr_variant(jr *r, const wf_rtype *t, const json_t *v, uint8_t *p)
{
    const wf_rfield *tag = &t->fields[0];
    const char *name = NULL;
    const json_t *payload = NULL;
    if (json_is_string(v)) {
        name = json_string_value(v);
    } else if (json_is_object(v) && json_object_size(v) == 1) {
        void *it = json_object_iter((json_t *)v);
        name = json_object_iter_key(it);
        payload = json_object_iter_value(it);
    } else {
        return jr_fail(r, WEFT_ERR_TYPE_MISMATCH,
                       "expected a variant name or {\"Variant\": value}, got %s", jr_kind(v));
    }
    const wf_renum *var = NULL;
    for (uint32_t i = 0; i < tag->enum_count && !var; i++) {
        if (strcmp(tag->enums[i].name, name) == 0) {
            var = &tag->enums[i];
        }
    }
    if (!var) {
        return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "'%s' is not a variant of '%s'", name,
                       t->name[0] ? t->name : tag->name);
    }
    const wf_rfield *pay = variant_payload(t, var->name);
    if (!pay && payload) {
        return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "'%s' is a unit variant: write \"%s\"",
                       var->name, var->name);
    }
    if (pay && !payload) {
        return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "variant '%s' holds a value: write "
                       "{\"%s\": value}", var->name, var->name);
    }
    if (load_int(tag->base, p + tag->offset) != var->value) {
        /* another variant: its payload starts from zero bytes */
        for (uint32_t i = 1; i < t->field_count; i++) {
            memset(p + t->fields[i].offset, 0, field_bytes(&t->fields[i]));
        }
    }
    store_int(tag->base, p + tag->offset, var->value);
    if (!pay) {
        return true;
    }
    size_t old = jr_push(r, ".%s", var->name);
    if (!jr_value(r, pay, payload, p)) {
        return false;
    }
    jr_pop(r, old);
    return true;
}

static bool jr_type(jr *r, const wf_rtype *t, const json_t *obj, uint8_t *p)
{
    switch (t->shape) {
    case WEFT_SHAPE_NEWTYPE:
        return jr_value(r, &t->fields[0], obj, p);
    case WEFT_SHAPE_OPTION:
        if (json_is_null(obj)) {
            p[t->fields[0].offset] = 0;
            memset(p + t->fields[1].offset, 0, field_bytes(&t->fields[1]));
            return true;
        }
        p[t->fields[0].offset] = 1;
        return jr_value(r, &t->fields[1], obj, p);
    case WEFT_SHAPE_ENUM:
        return jr_variant(r, t, obj, p);
    case WEFT_SHAPE_TUPLE:
        if (!json_is_array(obj) || json_array_size(obj) != t->field_count) {
            return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "expected an array of %u, got %s",
                           t->field_count, jr_kind(obj));
        }
        for (uint32_t i = 0; i < t->field_count; i++) {
            size_t old = jr_push(r, "[%u]", i);
            if (!jr_value(r, &t->fields[i], json_array_get(obj, i), p)) {
                return false;
            }
            jr_pop(r, old);
        }
        return true;
    default:
        break;
    }
    if (!json_is_object(obj)) {
        return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "expected an object, got %s", jr_kind(obj));
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        const wf_rfield *f = jr_field(t, key);
        size_t old = jr_push(r, ".%s", key);
        if (!f) {
            return jr_fail(r, WEFT_ERR_NOT_FOUND, "unknown field");
        }
        if (!jr_value(r, f, v, p)) {
            return false;
        }
        jr_pop(r, old);
    }
    return true;
}

static json_t *jr_parse(jr *r, const char *text, size_t len)
{
    /* JSON text holds no NUL byte (RFC 8259: control characters only
     * escaped inside strings); a parser stopping at one would read a
     * prefix as the whole */
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        jr_fail(r, WEFT_ERR_BAD_FORMAT, "byte %zu of %zu is a NUL", (size_t)(nul - text), len);
        return NULL;
    }
    json_error_t err;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
                              &err);
    if (!root) {
        jr_fail(r, WEFT_ERR_BAD_FORMAT, "line %d column %d: %s", err.line, err.column,
                err.text);
    }
    return root;
}

/* One decoded component value: a scratch copy to insert. */
typedef struct jr_val {
    const wf_type_info *ti;
    void *block;              /* NULL for tags */
} jr_val;

static void jr_vals_free(weft_world *w, jr_val *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (v[i].block) {
            wf_type_destroy(v[i].ti, v[i].block, 1);
            wf_free(&w->alloc, v[i].block, v[i].ti->size, v[i].ti->align);
        }
    }
}

/* Decodes `val` for component ti on e (0: a new entity) into *out. */
static bool jr_component(jr *r, weft_entity e, const wf_type_info *ti, const json_t *val,
                         jr_val *out)
{
    weft_world *w = r->w;
    out->ti = ti;
    out->block = NULL;
    const wf_rdesc *d = wf_reflect_component(w, ti->id);
    if (ti->rel_source) {
        return jr_fail(r, WEFT_ERR_INVALID_ARG, "'%s' is kept by weft and cannot be read",
                       ti->name);
    }
    if (!ti->size) {
        /* a tag is a unit struct: null (weft wrote {} before; still read) */
        if (!json_is_null(val) && (!json_is_object(val) || json_object_size(val) != 0)) {
            return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "a tag takes null, got %s", jr_kind(val));
        }
        return true;
    }
    if (!d && !ti->rel_targets) {
        return jr_fail(r, WEFT_ERR_INVALID_ARG, "component '%s' has no description",
                       ti->name);
    }
    uint8_t *tmp = wf_alloc(&w->alloc, ti->size, ti->align);
    if (!tmp) {
        return jr_fail(r, WEFT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    wf_record *rec = e ? wf_entity_live(w, e) : NULL;
    if (rec && wf_archetype_has(wf_world_archetype(w, rec->arch), ti->id)) {
        wf_type_construct(ti, tmp, value_of(w, rec, e, ti), 1);
    } else {
        wf_type_construct(ti, tmp, NULL, 1);
    }
    out->block = tmp;
    if (d) {
        return jr_type(r, d->root, val, tmp);
    }
    /* a relationship source: {"target": <entity>} */
    const json_t *t = json_is_object(val) ? json_object_get(val, "target") : NULL;
    if (!t || json_object_size(val) != 1) {
        return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "expected {\"target\": <entity>}");
    }
    size_t old = jr_push(r, ".target");
    if (!jr_entity(r, t, tmp)) {
        return false;
    }
    jr_pop(r, old);
    weft_entity target;
    memcpy(&target, tmp, 8);
    if (target == 0) {
        return jr_fail(r, WEFT_ERR_INVALID_ARG, "a relationship needs a target");
    }
    return true;
}

static weft_status jr_phase(weft_world *w, const char *fn)
{
    if (w->iter_depth || w->settling) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "%s: not while iterating or in a hook", fn);
    }
    return WEFT_OK;
}

weft_status wf_json_read_component(weft_world *w, weft_entity e, weft_component c,
                                   const char *text, size_t len)
{
    weft_status st = jr_phase(w, "weft_json_read_component");
    wf_record *rec;
    if (st != WEFT_OK || (st = wf_entity_check(w, e, &rec)) != WEFT_OK) {
        return st;
    }
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (!ti) {
        return wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT, "component id %u is not registered", c);
    }
    jr r;
    memset(&r, 0, sizeof r);
    r.w = w;
    r.path_len = (size_t)snprintf(r.path, sizeof r.path, "%s", ti->name);
    json_t *root = jr_parse(&r, text, len);
    if (!root) {
        return r.st;
    }
    jr_val v;
    bool ok = jr_component(&r, e, ti, root, &v);
    json_decref(root);
    if (ok) {
        st = wf_commit_insert_one(w, e, rec, ti, v.block);
        if (w->cmds.count || w->events.has_dead) {
            wf_world_settle(w);
        }
    } else {
        st = r.st;
    }
    jr_vals_free(w, &v, 1);
    return st;
}


static bool jr_entity_obj(jr *r, weft_entity e, const json_t *root, jr_val *vals,
                          uint32_t *n)
{
    *n = 0;
    if (!json_is_object(root)) {
        return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "expected an entity object, got %s",
                       jr_kind(root));
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)root, key, v) {
        if (strcmp(key, "id") != 0 && strcmp(key, "components") != 0) {
            jr_push(r, "%s", key);
            return jr_fail(r, WEFT_ERR_NOT_FOUND, "unknown member of an entity");
        }
    }
    const json_t *comps = json_object_get(root, "components");
    if (!json_is_object(comps)) {
        return jr_fail(r, WEFT_ERR_TYPE_MISMATCH, "an entity needs a \"components\" object");
    }
    json_object_foreach((json_t *)comps, key, v) {
        size_t old = jr_push(r, "%s", key);
        weft_component c = wf_registry_lookup(&r->w->registry, key);
        if (!c) {
            return jr_fail(r, WEFT_ERR_UNKNOWN_COMPONENT, "no component of this name");
        }
        if (*n >= WF_JSON_MAX_COMPONENTS) {
            return jr_fail(r, WEFT_ERR_CAPACITY, "more than %u components",
                           WF_JSON_MAX_COMPONENTS);
        }
        /* counted even on failure: a scratch value may need freeing */
        bool ok = jr_component(r, e, wf_registry_get(&r->w->registry, c), v, &vals[*n]);
        (*n)++;
        if (!ok) {
            return false;
        }
        jr_pop(r, old);
    }
    return true;
}

static weft_status jr_entity_common(weft_world *w, weft_entity e, const char *text,
                                    size_t len, weft_entity *out_spawned, const char *fn)
{
    weft_status st = jr_phase(w, fn);
    wf_record *rec = NULL;
    /* out_spawned tells a spawn from a read into e: entity 0 is not a
     * request to spawn */
    if (st != WEFT_OK || (!out_spawned && (st = wf_entity_check(w, e, &rec)) != WEFT_OK)) {
        return st;
    }
    jr r;
    memset(&r, 0, sizeof r);
    r.w = w;
    json_t *root = jr_parse(&r, text, len);
    if (!root) {
        return r.st;
    }
    jr_val *vals = wf_alloc(&w->alloc, WF_JSON_MAX_COMPONENTS * sizeof *vals, _Alignof(jr_val));
    weft_value *wv = wf_alloc(&w->alloc, WF_JSON_MAX_COMPONENTS * sizeof *wv,
                              _Alignof(weft_value));
    uint32_t n = 0;
    bool ok = vals && wv;
    if (!ok) {
        st = wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    } else if (!jr_entity_obj(&r, e, root, vals, &n)) {
        ok = false;
        st = r.st;
    }
    json_decref(root);
    if (ok) {
        for (uint32_t i = 0; i < n; i++) {
            wv[i].id = vals[i].ti->id;
            wv[i].size = vals[i].ti->size;
            wv[i].ptr = vals[i].block;
        }
        if (!out_spawned) {
            st = n ? wf_commit_insert(w, e, rec, wv, (int32_t)n) : WEFT_OK;
        } else {
            st = wf_commit_spawn(w, wv, (int32_t)n, out_spawned);
        }
        if (w->cmds.count || w->events.has_dead) {
            wf_world_settle(w);
        }
    }
    if (vals) {
        jr_vals_free(w, vals, n);
    }
    wf_free(&w->alloc, vals, WF_JSON_MAX_COMPONENTS * sizeof *vals, _Alignof(jr_val));
    wf_free(&w->alloc, wv, WF_JSON_MAX_COMPONENTS * sizeof *wv, _Alignof(weft_value));
    return st;
}

weft_status wf_json_read_entity(weft_world *w, weft_entity e, const char *text, size_t len)
{
    return jr_entity_common(w, e, text, len, NULL, "weft_json_read_entity");
}

weft_status wf_json_spawn(weft_world *w, const char *text, size_t len, weft_entity *out)
{
    *out = 0;
    return jr_entity_common(w, 0, text, len, out, "weft_json_spawn");
}

weft_status wf_json_read_resource(weft_world *w, weft_component res, const char *text,
                                  size_t len)
{
    weft_status st = jr_phase(w, "weft_json_read_resource");
    if (st != WEFT_OK) {
        return st;
    }
    wf_type_info *ti = wf_registry_get(&w->registry, res);
    if (!ti) {
        return wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT, "resource id %u is not registered", res);
    }
    if (wf_type_managed(ti)) {
        return wf_managed_refuse(w, ti, "weft_json_read_resource");
    }
    const wf_rdesc *d = wf_reflect_component(w, res);
    if (ti->size && !d) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "resource '%s' has no description", ti->name);
    }
    jr r;
    memset(&r, 0, sizeof r);
    r.w = w;
    r.path_len = (size_t)snprintf(r.path, sizeof r.path, "%s", ti->name);
    json_t *root = jr_parse(&r, text, len);
    if (!root) {
        return r.st;
    }
    if (!ti->size) {
        /* a unit struct: null ({} as weft wrote it before is still read) */
        bool empty = json_is_null(root) ||
                     (json_is_object(root) && json_object_size(root) == 0);
        if (!empty) {
            jr_fail(&r, WEFT_ERR_TYPE_MISMATCH, "a tag takes null, got %s", jr_kind(root));
        }
        json_decref(root);
        return empty ? wf_resource_insert(w, ti, NULL) : r.st;
    }
    uint8_t *tmp = wf_alloc(&w->alloc, ti->size, ti->align);
    if (!tmp) {
        json_decref(root);
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "weft_json_read_resource: out of memory");
    }
    /* Members left out keep the present value (or the default). */
    wf_type_construct(ti, tmp, ti->res_present ? ti->res_value : NULL, 1);
    bool ok = jr_type(&r, d->root, root, tmp);
    json_decref(root);
    st = ok ? wf_resource_insert(w, ti, tmp) : r.st;
    wf_type_destroy(ti, tmp, 1);
    wf_free(&w->alloc, tmp, ti->size, ti->align);
    return st;
}

#else /* !WEFT_HAVE_JANSSON */

static weft_status no_json(const weft_world *w, const char *fn)
{
    return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: weft was built without JSON reading "
                    "(libjansson was not found)", fn);
}

weft_status wf_json_read_component(weft_world *w, weft_entity e, weft_component c,
                                   const char *text, size_t len)
{
    (void)e;
    (void)c;
    (void)text;
    (void)len;
    return no_json(w, "weft_json_read_component");
}

weft_status wf_json_read_entity(weft_world *w, weft_entity e, const char *text, size_t len)
{
    (void)e;
    (void)text;
    (void)len;
    return no_json(w, "weft_json_read_entity");
}

weft_status wf_json_spawn(weft_world *w, const char *text, size_t len, weft_entity *out)
{
    (void)text;
    (void)len;
    *out = 0;
    return no_json(w, "weft_json_spawn");
}

weft_status wf_json_read_resource(weft_world *w, weft_component res, const char *text,
                                  size_t len)
{
    (void)res;
    (void)text;
    (void)len;
    return no_json(w, "weft_json_read_resource");
}

#endif

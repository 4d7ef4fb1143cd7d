/* src/reflect/schema.c - a component's type description as JSON, so that
 * tools (the remote inspector's per-field editors) can build inputs for
 * its fields without the C declaration. Shape:
 *   {"name": <type name>, "size": <bytes>, "fields": [<field>, ...]}
 *   field: {"name", "kind" (weft_kind_name), "count"? (arrays: elements;
 *           strings: buffer bytes), "type"? (struct: a nested type object),
 *           "base"? and "values"? (enum: storing kind, [{name, value}])}
 * Written like the JSON values (src/reflect/json.c): measured, then
 * written into the caller's buffer; nothing is allocated.
 * SPDX-License-Identifier: MIT
 */
#include "reflect/reflect.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct sw {
    char *buf;                /* NULL while measuring */
    size_t cap;
    size_t len;
} sw;

static void sw_raw(sw *o, const char *s, size_t n)
{
    if (o->buf && o->len + n <= o->cap) {
        memcpy(o->buf + o->len, s, n);
    }
    o->len += n;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void sw_fmt(sw *o, const char *fmt, ...);

static void sw_fmt(sw *o, const char *fmt, ...)
{
    char tmp[96];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) {
        sw_raw(o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
    }
}

/* Names in descriptions are letters, digits and '_' (validated), type
 * and enum names may hold anything: escaped. */
static void sw_str(sw *o, const char *s)
{
    sw_raw(o, "\"", 1);
    for (size_t i = 0; s[i]; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            char esc[2] = {'\\', (char)ch};
            sw_raw(o, esc, 2);
        } else if (ch < 0x20) {
            sw_fmt(o, "\\u%04x", ch);
        } else {
            sw_raw(o, (const char *)&s[i], 1);
        }
    }
    sw_raw(o, "\"", 1);
}

static void sw_type(sw *o, const wf_rtype *t)
{
    sw_raw(o, "{\"name\":", 8);
    sw_str(o, t->name ? t->name : "");
    sw_fmt(o, ",\"size\":%u,\"fields\":[", (unsigned)t->size);
    for (uint32_t i = 0; i < t->field_count; i++) {
        const wf_rfield *f = &t->fields[i];
        if (i) {
            sw_raw(o, ",", 1);
        }
        sw_raw(o, "{\"name\":", 8);
        sw_str(o, f->name);
        sw_raw(o, ",\"kind\":", 8);
        sw_str(o, wf_kind_name(f->kind));
        if (f->kind == WEFT_KIND_STRING) {
            sw_fmt(o, ",\"count\":%u", (unsigned)f->elem_size);
        } else if (f->count > 1) {
            sw_fmt(o, ",\"count\":%u", (unsigned)f->count);
        }
        if (f->kind == WEFT_KIND_STRUCT && f->sub) {
            sw_raw(o, ",\"type\":", 8);
            sw_type(o, f->sub);
        }
        if (f->kind == WEFT_KIND_ENUM) {
            sw_raw(o, ",\"base\":", 8);
            sw_str(o, wf_kind_name(f->base));
            sw_raw(o, ",\"values\":[", 11);
            for (uint32_t k = 0; k < f->enum_count; k++) {
                sw_raw(o, k ? ",{\"name\":" : "{\"name\":", k ? 9 : 8);
                sw_str(o, f->enums[k].name);
                sw_fmt(o, ",\"value\":%lld}", (long long)f->enums[k].value);
            }
            sw_raw(o, "]", 1);
        }
        sw_raw(o, "}", 1);
    }
    sw_raw(o, "]}", 2);
}

weft_status wf_json_write_schema(const weft_world *w, weft_component c, char *buf, size_t cap,
                                 size_t *out_len)
{
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (!ti) {
        return wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT, "component id %u is not registered", c);
    }
    const wf_rdesc *d = wf_reflect_component(w, c);
    if (!d) {
        return wf_error(w, WEFT_ERR_NOT_FOUND, "component '%s' has no description", ti->name);
    }
    sw m = {NULL, 0, 0};
    sw_type(&m, d->root);
    *out_len = m.len + 1;
    if (!buf) {
        return WEFT_ERR_CAPACITY;
    }
    if (m.len + 1 > cap) {
        return wf_error(w, WEFT_ERR_CAPACITY,
                        "weft_json_write_schema: needs %zu bytes, the buffer has %zu", m.len + 1,
                        cap);
    }
    sw o = {buf, cap, 0};
    sw_type(&o, d->root);
    o.buf[o.len] = '\0';
    return WEFT_OK;
}

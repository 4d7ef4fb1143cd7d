/* src/reflect/schema.c - a component's type description as JSON, so that
 * tools (the remote inspector's per-field editors) can build inputs for
 * its fields without the C declaration. Shape:
 *   {"name": <type name>, "size": <bytes>, "fields": [<field>, ...]}
 *   field: {"name", "kind" (weft_kind_name), "count"? (arrays: elements;
 *           strings: buffer bytes), "type"? (struct: a nested type object),
 *           "base"? and "values"? (enum: storing kind, [{name, value}])}
 * Written like the JSON values (src/reflect/json.c), with the same
 * measuring writer (reflect/jwrite.h): measured, then written into the
 * caller's buffer; nothing is allocated.
 * SPDX-License-Identifier: MIT
 */
#include "reflect/jwrite.h"
#include "reflect/reflect.h"

#include <stdint.h>
#include <string.h>

static void sw_type(wf_jw *o, const wf_rtype *t)
{
    wf_jw_raw(o, "{\"name\":", 8);
    wf_jw_str(o, t->name ? t->name : "", SIZE_MAX);
    static const char *const shapes[WEFT_SHAPE_NUM] = {"struct", "tuple", "newtype", "option",
                                                       "enum"};
    if (t->shape != WEFT_SHAPE_STRUCT && (unsigned)t->shape < (unsigned)WEFT_SHAPE_NUM) {
        wf_jw_raw(o, ",\"shape\":", 9);
        wf_jw_str(o, shapes[t->shape], SIZE_MAX);
    }
    wf_jw_fmt(o, ",\"size\":%u,\"fields\":[", (unsigned)t->size);
    for (uint32_t i = 0; i < t->field_count; i++) {
        const wf_rfield *f = &t->fields[i];
        if (i) {
            wf_jw_raw(o, ",", 1);
        }
        wf_jw_raw(o, "{\"name\":", 8);
        wf_jw_str(o, f->name, SIZE_MAX);
        wf_jw_raw(o, ",\"kind\":", 8);
        wf_jw_str(o, wf_kind_name(f->kind), SIZE_MAX);
        if (f->kind == WEFT_KIND_STRING) {
            wf_jw_fmt(o, ",\"count\":%u", (unsigned)f->elem_size);
        } else if (f->count > 1) {
            wf_jw_fmt(o, ",\"count\":%u", (unsigned)f->count);
        }
        if (f->kind == WEFT_KIND_STRUCT && f->sub) {
            wf_jw_raw(o, ",\"type\":", 8);
            sw_type(o, f->sub);
        }
        if (f->kind == WEFT_KIND_ENUM) {
            wf_jw_raw(o, ",\"base\":", 8);
            wf_jw_str(o, wf_kind_name(f->base), SIZE_MAX);
            wf_jw_raw(o, ",\"values\":[", 11);
            for (uint32_t k = 0; k < f->enum_count; k++) {
                wf_jw_raw(o, k ? ",{\"name\":" : "{\"name\":", k ? 9 : 8);
                wf_jw_str(o, f->enums[k].name, SIZE_MAX);
                wf_jw_fmt(o, ",\"value\":%lld}", (long long)f->enums[k].value);
            }
            wf_jw_raw(o, "]", 1);
        }
        wf_jw_raw(o, "}", 1);
    }
    wf_jw_raw(o, "]}", 2);
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
    wf_jw m = {NULL, 0, 0, false, NULL};
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
    wf_jw o = {buf, cap, 0, false, NULL};
    sw_type(&o, d->root);
    o.buf[o.len] = '\0';
    return WEFT_OK;
}

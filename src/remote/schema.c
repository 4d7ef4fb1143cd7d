/* src/remote/schema.c - registry.schema: the registered, described types
 * as the JSON-schema-like objects of bevy_remote 0.17
 * (crates/bevy_remote/src/schemas/json_schema.rs, JsonSchemaBevyType, and
 * export_registry_types in builtin_methods.rs): a map from type path to
 * {shortPath, typePath, modulePath?, crateName?, reflectTypes?, kind,
 * type, additionalProperties?, properties?, required?, oneOf?,
 * prefixItems?, items?}, fields referring to other entries as
 * {"type": {"$ref": "#/$defs/<typePath>"}}.
 *
 * weft's types come from their descriptions (weft_json_write_schema, which
 * names each field's kind and nested descriptions and gives a struct's
 * weft_shape): a described component is an entry under its registered
 * name, and every type its fields use gets one too (the numbers, String,
 * Entity, fixed arrays "[T; N]", nested structs under their description's
 * name or "<owner>::<field>", a C enum field under "<owner>::<field>"), so
 * that every $ref resolves in the answer. Driver thread only.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote_inspect.h"

#define BS_PATH_MAX 512

#define BS_STRING_PATH "alloc::string::String"
#define BS_ENTITY_PATH "bevy_ecs::entity::Entity"

static json_t *bs_params_error(wr_err *err, const char *msg)
{
    err->code = WEFT_REMOTE_INVALID_PARAMS;
    err->status = WEFT_OK;
    snprintf(err->msg, sizeof err->msg, "%s", msg);
    return NULL;
}

/* Bevy's short path: every path segment inside the text without its
 * module prefix ("core::option::Option<alloc::string::String>" ->
 * "Option<String>"), as TypePath::short_type_path does. */
static void bs_short_path(const char *path, char *out, size_t cap)
{
    size_t n = 0, seg = 0;
    for (const char *p = path; *p && n + 1 < cap; p++) {
        if (p[0] == ':' && p[1] == ':') {
            n = seg;
            p++;
            continue;
        }
        out[n++] = *p;
        if (strchr("<>,; []()&", *p)) {
            seg = n;
        }
    }
    out[n] = '\0';
}

/* A new entry for `path` with Bevy's path fields; crateName and modulePath
 * only when the path (before any generic argument) has a "::". */
static json_t *bs_entry(const char *path, const char *kind, const char *type)
{
    char short_path[BS_PATH_MAX];
    bs_short_path(path, short_path, sizeof short_path);
    json_t *e = json_pack("{s:s,s:s,s:s,s:s}", "shortPath", short_path, "typePath", path, "kind",
                          kind, "type", type);
    if (!e) {
        return NULL;
    }
    size_t head = strcspn(path, "<[(");
    const char *first = NULL, *last = NULL;
    for (const char *p = path; p + 1 < path + head; p++) {
        if (p[0] == ':' && p[1] == ':') {
            first = first ? first : p;
            last = p;
        }
    }
    if (first) {
        json_object_set_new(e, "crateName", json_stringn(path, (size_t)(first - path)));
        json_object_set_new(e, "modulePath", json_stringn(path, (size_t)(last - path)));
    }
    return e;
}

static json_t *bs_ref(const char *path)
{
    char ref[BS_PATH_MAX + 16];
    snprintf(ref, sizeof ref, "#/$defs/%s", path);
    return json_pack("{s:{s:s}}", "type", "$ref", ref);
}

/* The reflect type data every described value has in weft: it is read
 * and written as JSON, and default-constructed (zeroes or its ctor hook). */
static json_t *bs_value_reflect(void)
{
    return json_pack("[s,s,s]", "Default", "Serialize", "Deserialize");
}

typedef struct bs_ctx {
    weft_remote *r;
    json_t *defs; /* typePath -> entry */
    bool oom;
} bs_ctx;

static void bs_put(bs_ctx *x, const char *path, json_t *entry)
{
    if (!entry) {
        x->oom = true;
        return;
    }
    if (json_object_get(x->defs, path)) {
        json_decref(entry); /* the first definition of a path stands */
        return;
    }
    if (json_object_set_new(x->defs, path, entry) != 0) {
        x->oom = true;
    }
}

static const char *bs_type_path(bs_ctx *x, const char *owner, json_t *field, char *buf,
                                size_t cap);

/* A scalar kind's Bevy type (a primitive is an opaque Value whose type
 * maps from its path, SchemaJsonType::map_json_type). */
static const char *bs_scalar(bs_ctx *x, const char *kind)
{
    static const struct {
        const char *kind, *path, *type;
    } map[] = {
        {"bool", "bool", "boolean"}, {"i8", "i8", "int"},   {"i16", "i16", "int"},
        {"i32", "i32", "int"},       {"i64", "i64", "int"}, {"u8", "u8", "uint"},
        {"u16", "u16", "uint"},      {"u32", "u32", "uint"}, {"u64", "u64", "uint"},
        {"f32", "f32", "float"},     {"f64", "f64", "float"},
        {"string", BS_STRING_PATH, "string"},
        /* an opaque type whose path is not a primitive's maps to "object"
         * in Bevy, Entity included (it is written as an integer) */
        {"entity", BS_ENTITY_PATH, "object"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (strcmp(kind, map[i].kind) == 0) {
            if (!json_object_get(x->defs, map[i].path)) {
                json_t *e = bs_entry(map[i].path, "Value", map[i].type);
                if (e) {
                    json_object_set_new(e, "reflectTypes",
                                        strcmp(kind, "entity") == 0
                                            ? json_pack("[s,s]", "Serialize", "Deserialize")
                                            : bs_value_reflect());
                }
                bs_put(x, map[i].path, e);
            }
            return map[i].path;
        }
    }
    return NULL;
}

/* An enum field's names as a unit-only enum (a string, one of them). */
static json_t *bs_unit_enum(const char *path, json_t *values)
{
    json_t *e = bs_entry(path, "Enum", "string");
    json_t *names = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(values, i, v) {
        json_array_append(names, json_object_get(v, "name"));
    }
    json_object_set_new(e, "oneOf", names);
    json_object_set_new(e, "reflectTypes", bs_value_reflect());
    return e;
}

static bool bs_is_option(json_t *field)
{
    json_t *t = json_object_get(field, "type");
    const char *shape = json_string_value(json_object_get(t, "shape"));
    return shape && strcmp(shape, "option") == 0;
}

/* {type: $ref} per field, in order (a tuple's prefixItems). */
static json_t *bs_prefix_items(bs_ctx *x, const char *path, json_t *fields)
{
    json_t *items = json_array();
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f) {
        char buf[BS_PATH_MAX];
        const char *tp = bs_type_path(x, path, f, buf, sizeof buf);
        json_array_append_new(items, bs_ref(tp ? tp : "?"));
    }
    return items;
}

/* properties and required of a struct's fields (required: all but the
 * option-shaped ones, as Bevy leaves out Option fields); `named`: each
 * property also carries "typePath": the field's name (Bevy's NamedField
 * reference, used for struct variants). */
static void bs_struct_fields(bs_ctx *x, const char *path, json_t *fields, json_t *into, bool named)
{
    json_t *props = json_object();
    json_t *req = json_array();
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f) {
        const char *fname = json_string_value(json_object_get(f, "name"));
        char buf[BS_PATH_MAX];
        const char *tp = bs_type_path(x, path, f, buf, sizeof buf);
        json_t *ref = bs_ref(tp ? tp : "?");
        if (named && ref) {
            json_object_set_new(ref, "typePath", json_string(fname));
        }
        json_object_set_new(props, fname, ref);
        if (!bs_is_option(f)) {
            json_array_append_new(req, json_string(fname));
        }
    }
    if (json_object_size(props)) {
        json_object_set(into, "properties", props);
    }
    if (json_array_size(req)) {
        json_object_set(into, "required", req);
    }
    json_decref(props);
    json_decref(req);
    json_object_set_new(into, "additionalProperties", json_false());
}

/* The entry of a described struct `t` (weft_json_write_schema's object)
 * under `path`, by its shape. */
static json_t *bs_struct_entry(bs_ctx *x, const char *path, json_t *t)
{
    const char *shape = json_string_value(json_object_get(t, "shape"));
    json_t *fields = json_object_get(t, "fields");
    json_t *e = NULL;
    if (!shape || strcmp(shape, "struct") == 0) {
        e = bs_entry(path, "Struct", "object");
        if (e) {
            bs_struct_fields(x, path, fields, e, false);
        }
    } else if (strcmp(shape, "tuple") == 0 ||
               (strcmp(shape, "newtype") == 0 &&
                strcmp(json_string_value(json_object_get(json_array_get(fields, 0), "kind")),
                       "enum") != 0)) {
        /* a tuple struct; a newtype too (Bevy describes `struct N(T)` as a
         * TupleStruct, though serde writes it as the bare T) */
        e = bs_entry(path, "TupleStruct", "array");
        if (e) {
            json_object_set_new(e, "prefixItems", bs_prefix_items(x, path, fields));
            json_object_set_new(e, "items", json_false());
        }
    } else if (strcmp(shape, "newtype") == 0) {
        /* a newtype over a C enum field: its JSON is a unit variant's name,
         * as a Rust unit-only enum's */
        e = bs_unit_enum(path, json_object_get(json_array_get(fields, 0), "values"));
    } else if (strcmp(shape, "option") == 0) {
        /* Bevy's Option<T>: an enum of None (unit) and Some (a tuple) */
        char buf[BS_PATH_MAX], some[BS_PATH_MAX + 8], none[BS_PATH_MAX + 8];
        const char *tp = bs_type_path(x, path, json_array_get(fields, 1), buf, sizeof buf);
        snprintf(some, sizeof some, "%s::Some", path);
        snprintf(none, sizeof none, "%s::None", path);
        e = bs_entry(path, "Enum", "object");
        if (e) {
            json_object_set_new(
                e, "oneOf",
                json_pack("[{s:s,s:s},{s:s,s:s,s:s,s:s,s:[o],s:b}]", "typePath", none,
                          "shortPath", "None", "type", "array", "kind", "Tuple", "typePath",
                          some, "shortPath", "Some", "prefixItems", bs_ref(tp ? tp : "?"),
                          "items", 0));
        }
    } else if (strcmp(shape, "enum") == 0) {
        /* field 0 is the tag, whose value names are the variants; the
         * other fields are payloads, named after their variant */
        json_t *tag = json_array_get(fields, 0);
        json_t *variants = json_object_get(tag, "values");
        bool unit_only = json_array_size(fields) == 1;
        if (unit_only) {
            e = bs_unit_enum(path, variants);
            json_object_del(e, "reflectTypes");
        } else {
            e = bs_entry(path, "Enum", "object");
            json_t *one_of = json_array();
            size_t i;
            json_t *v;
            json_array_foreach(variants, i, v) {
                const char *vn = json_string_value(json_object_get(v, "name"));
                char vpath[BS_PATH_MAX + 64];
                snprintf(vpath, sizeof vpath, "%s::%s", path, vn);
                json_t *payload = NULL;
                for (size_t k = 1; k < json_array_size(fields); k++) {
                    json_t *f = json_array_get(fields, k);
                    if (strcmp(json_string_value(json_object_get(f, "name")), vn) == 0) {
                        payload = f;
                    }
                }
                json_t *ve;
                json_t *pt = json_object_get(payload, "type");
                const char *ps = json_string_value(json_object_get(pt, "shape"));
                bool is_struct = payload &&
                                 strcmp(json_string_value(json_object_get(payload, "kind")),
                                        "struct") == 0 &&
                                 !json_object_get(payload, "count");
                if (!payload) {
                    ve = json_pack("{s:s,s:s}", "typePath", vpath, "shortPath", vn);
                } else if (is_struct && (!ps || strcmp(ps, "struct") == 0)) {
                    ve = json_pack("{s:s,s:s,s:s,s:s}", "type", "object", "kind", "Struct",
                                   "typePath", vpath, "shortPath", vn);
                    bs_struct_fields(x, vpath, json_object_get(pt, "fields"), ve, true);
                } else {
                    /* a tuple variant; a newtype variant is one of one */
                    json_t *items;
                    if (is_struct && strcmp(ps, "tuple") == 0) {
                        items = bs_prefix_items(x, vpath, json_object_get(pt, "fields"));
                    } else {
                        char buf[BS_PATH_MAX];
                        const char *tp = bs_type_path(x, path, payload, buf, sizeof buf);
                        items = json_pack("[o]", bs_ref(tp ? tp : "?"));
                    }
                    ve = json_pack("{s:s,s:s,s:s,s:s,s:o,s:b}", "type", "array", "kind", "Tuple",
                                   "typePath", vpath, "shortPath", vn, "prefixItems", items,
                                   "items", 0);
                }
                json_array_append_new(one_of, ve);
            }
            json_object_set_new(e, "oneOf", one_of);
        }
    }
    return e;
}

/* The type path of a field's type, defining its entry when new: scalars,
 * String, Entity; "[T; N]" for a fixed array; a nested struct under its
 * description's name (else "<owner>::<field>", or for an option
 * "core::option::Option<T>"); an enum field as "<owner>::<field>". */
static const char *bs_type_path(bs_ctx *x, const char *owner, json_t *field, char *buf,
                                size_t cap)
{
    const char *kind = json_string_value(json_object_get(field, "kind"));
    const char *fname = json_string_value(json_object_get(field, "name"));
    if (!kind || !fname) {
        return NULL;
    }
    json_int_t count = json_integer_value(json_object_get(field, "count"));
    if (count > 1 && strcmp(kind, "string") != 0) {
        json_t *one = json_deep_copy(field);
        json_object_del(one, "count");
        char elem[BS_PATH_MAX];
        const char *ep = bs_type_path(x, owner, one, elem, sizeof elem);
        json_decref(one);
        if (!ep) {
            return NULL;
        }
        snprintf(buf, cap, "[%s; %lld]", ep, (long long)count);
        if (!json_object_get(x->defs, buf)) {
            json_t *e = bs_entry(buf, "Array", "array");
            if (e) {
                json_object_set_new(e, "items", bs_ref(ep));
                json_object_set_new(e, "reflectTypes", bs_value_reflect());
            }
            bs_put(x, buf, e);
        }
        return buf;
    }
    if (strcmp(kind, "enum") == 0) {
        snprintf(buf, cap, "%s::%s", owner, fname);
        if (!json_object_get(x->defs, buf)) {
            bs_put(x, buf, bs_unit_enum(buf, json_object_get(field, "values")));
        }
        return buf;
    }
    if (strcmp(kind, "struct") == 0) {
        json_t *t = json_object_get(field, "type");
        const char *tname = json_string_value(json_object_get(t, "name"));
        if (tname && *tname) {
            snprintf(buf, cap, "%s", tname);
        } else if (bs_is_option(field)) {
            char inner[BS_PATH_MAX];
            const char *ip = bs_type_path(x, owner, json_array_get(json_object_get(t, "fields"), 1),
                                          inner, sizeof inner);
            snprintf(buf, cap, "core::option::Option<%s>", ip ? ip : "?");
        } else {
            snprintf(buf, cap, "%s::%s", owner, fname);
        }
        if (!json_object_get(x->defs, buf)) {
            /* reserve the path first: a description cannot contain itself,
             * but two fields may share one */
            json_object_set_new(x->defs, buf, json_null());
            json_t *e = bs_struct_entry(x, buf, t);
            if (e) {
                json_object_set_new(e, "reflectTypes", bs_value_reflect());
            }
            json_object_del(x->defs, buf);
            bs_put(x, buf, e);
        }
        return buf;
    }
    return bs_scalar(x, kind);
}

/* One registered component's entry: a tag as a unit struct, a
 * relationship source as {target: Entity}, a described one from its
 * description; NULL for the others (undescribed, relationship target
 * lists: weft keeps those), which cannot be read or written as JSON. */
static json_t *bs_component(bs_ctx *x, weft_component c, const char *name)
{
    weft_component_info info;
    if (weft_component_info_get(x->r->world, c, &info) != WEFT_OK) {
        return NULL;
    }
    json_t *e = NULL;
    if (info.size == 0) {
        e = bs_entry(name, "Struct", "object");
        json_object_set_new(e, "additionalProperties", json_false());
    } else if (weft_relationship_targets(x->r->world, c)) {
        const char *tp = bs_scalar(x, "entity");
        e = bs_entry(name, "Struct", "object");
        if (e) {
            json_object_set_new(e, "properties", json_pack("{s:o}", "target", bs_ref(tp)));
            json_object_set_new(e, "required", json_pack("[s]", "target"));
            json_object_set_new(e, "additionalProperties", json_false());
        }
    } else if (weft_component_is_described(x->r->world, c)) {
        size_t need = 0;
        weft_json_write_schema(x->r->world, c, NULL, 0, &need);
        char *text = need ? malloc(need) : NULL;
        json_t *t = NULL;
        if (text && weft_json_write_schema(x->r->world, c, text, need, &need) == WEFT_OK) {
            json_error_t jerr;
            t = json_loads(text, 0, &jerr);
        }
        free(text);
        if (!t) {
            x->oom = true;
            return NULL;
        }
        e = bs_struct_entry(x, name, t);
        json_decref(t);
    } else {
        return NULL;
    }
    if (!e) {
        x->oom = true;
        return NULL;
    }
    /* weft has one registry: every type is a component, and a resource
     * when one is present in the world now; every value but a
     * relationship source (its target must be given) has a default */
    json_t *rt = json_pack("[s]", "Component");
    if (weft_resource_has(x->r->world, c)) {
        json_array_append_new(rt, json_string("Resource"));
    }
    if (!weft_relationship_targets(x->r->world, c)) {
        json_array_append_new(rt, json_string("Default"));
    }
    json_array_append_new(rt, json_string("Serialize"));
    json_array_append_new(rt, json_string("Deserialize"));
    json_object_set_new(e, "reflectTypes", rt);
    return e;
}

/* An optional array of strings in `obj` (NULL when absent). */
static bool bs_names(json_t *obj, const char *key, json_t **out, wr_err *err)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v)) {
        return true;
    }
    char msg[128];
    snprintf(msg, sizeof msg, "'%s' must be an array of strings", key);
    if (!json_is_array(v)) {
        bs_params_error(err, msg);
        return false;
    }
    size_t i;
    json_t *s;
    json_array_foreach(v, i, s) {
        if (!json_is_string(s)) {
            bs_params_error(err, msg);
            return false;
        }
    }
    *out = json_array_size(v) ? v : NULL;
    return true;
}

static bool bs_any_in(json_t *names, json_t *list)
{
    size_t i, k;
    json_t *a, *b;
    json_array_foreach(names, i, a) {
        json_array_foreach(list, k, b) {
            if (json_equal(a, b)) {
                return true;
            }
        }
    }
    return false;
}

/* registry.schema: params none/null or {with_crates?, without_crates?,
 * type_limit?: {with?, without?}} (BrpJsonSchemaQueryFilter); the
 * result is {typePath: schema}. A type whose path has no crate (no "::")
 * passes the crate filters, as in Bevy; type_limit compares reflectTypes. */
json_t *wi_registry_schema(weft_remote *r, json_t *params, wr_err *err)
{
    if (params && !json_is_null(params) && !json_is_object(params)) {
        return bs_params_error(err, "params must be an object (BrpJsonSchemaQueryFilter)");
    }
    json_t *with_crates = NULL, *without_crates = NULL, *with = NULL, *without = NULL;
    json_t *limit = json_is_object(params) ? json_object_get(params, "type_limit") : NULL;
    if (limit && !json_is_null(limit) && !json_is_object(limit)) {
        return bs_params_error(err, "'type_limit' must be an object {with?, without?}");
    }
    if (json_is_object(params) && (!bs_names(params, "with_crates", &with_crates, err) ||
                                   !bs_names(params, "without_crates", &without_crates, err))) {
        return NULL;
    }
    if (json_is_object(limit) &&
        (!bs_names(limit, "with", &with, err) || !bs_names(limit, "without", &without, err))) {
        return NULL;
    }
    bs_ctx x = {r, json_object(), false};
    if (!x.defs) {
        err->code = WEFT_REMOTE_INTERNAL_ERROR;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return NULL;
    }
    weft_world_stats s;
    weft_world_get_stats(r->world, &s);
    /* components first, so that a nested description named like a
     * component refers to the component's entry */
    for (int32_t id = 1; id <= s.components && !x.oom; id++) {
        weft_component_info info;
        if (weft_component_info_get(r->world, (weft_component)id, &info) != WEFT_OK) {
            continue;
        }
        if (json_object_get(x.defs, info.name)) {
            json_object_del(x.defs, info.name);
        }
        json_t *e = bs_component(&x, (weft_component)id, info.name);
        if (e && json_object_set_new(x.defs, info.name, e) != 0) {
            x.oom = true;
        }
    }
    if (x.oom) {
        json_decref(x.defs);
        err->code = WEFT_REMOTE_INTERNAL_ERROR;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return NULL;
    }
    const char *key;
    json_t *e, *tmp;
    json_object_foreach_safe(x.defs, tmp, key, e) {
        json_t *crate = json_object_get(e, "crateName");
        json_t *rt = json_object_get(e, "reflectTypes");
        bool drop = false;
        if (crate) {
            json_t *one = json_pack("[O]", crate);
            drop |= with_crates && !bs_any_in(one, with_crates);
            drop |= without_crates && bs_any_in(one, without_crates);
            json_decref(one);
        }
        drop |= with && (!rt || !bs_any_in(with, rt));
        drop |= without && rt && bs_any_in(without, rt);
        if (drop) {
            json_object_del(x.defs, key);
        }
    }
    return x.defs;
}

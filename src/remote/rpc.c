/* src/remote/rpc.c - JSON-RPC 2.0 requests answered against the world.
 * SPDX-License-Identifier: MIT
 *
 * Method names and parameter shapes follow bevy_remote's where it has
 * them (crates/bevy_remote/src/builtin_methods.rs in Bevy); the values
 * are weft's JSON of type descriptions (weft_json_write_component). Every
 * method validates all of its parameters before it changes anything, so a
 * request that fails leaves the world as it was; the world calls it makes
 * are themselves all-or-nothing (weft_json_spawn, weft_json_read_entity,
 * weft_json_read_component). Driver thread only.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote_inspect.h"

typedef json_t *(*wr_method_fn)(weft_remote *r, json_t *params, wr_err *err);

typedef struct wr_method {
    const char *name;
    wr_method_fn fn;
    bool writes;
    const char *summary;
} wr_method;

/* ---- errors ---- */

static json_t *wr_fail_code(wr_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static json_t *wr_fail_code(wr_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    err->code = code;
    err->status = WEFT_OK;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return NULL;
}

static json_t *wr_fail_weft(wr_err *err, weft_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static json_t *wr_fail_weft(wr_err *err, weft_status st, const char *fmt, ...)
{
    va_list ap;
    err->code = WEFT_REMOTE_WEFT_ERROR - (int)st;
    err->status = st;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return NULL;
}

/* A failed weft call: its status and the world's message. */
static json_t *wr_fail_world(weft_remote *r, wr_err *err, weft_status st)
{
    if (st == WEFT_OK) {
        st = WEFT_ERR_INTERNAL;
    }
    return wr_fail_weft(err, st, "%s", weft_last_error(r->world));
}

static json_t *wr_oom(wr_err *err)
{
    return wr_fail_code(err, WEFT_REMOTE_INTERNAL_ERROR, "out of memory");
}

/* ---- parameters ---- */

static bool wr_get_entity(weft_remote *r, json_t *v, const char *what, weft_entity *out,
                          wr_err *err)
{
    if (!json_is_integer(v) || json_integer_value(v) <= 0) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "%s must be an entity (a positive integer)",
                     what);
        return false;
    }
    weft_entity e = (weft_entity)json_integer_value(v);
    if (!weft_is_alive(r->world, e)) {
        wr_fail_weft(err, WEFT_ERR_STALE_ENTITY, "%s %llu is not alive", what,
                     (unsigned long long)e);
        return false;
    }
    *out = e;
    return true;
}

static bool wr_get_component(weft_remote *r, json_t *v, const char *what, weft_component *out,
                             wr_err *err)
{
    if (!json_is_string(v)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "%s must be a component name (a string)",
                     what);
        return false;
    }
    weft_component c = weft_component_lookup(r->world, json_string_value(v));
    if (!c) {
        wr_fail_weft(err, WEFT_ERR_UNKNOWN_COMPONENT, "unknown component '%s'",
                     json_string_value(v));
        return false;
    }
    *out = c;
    return true;
}

/* An optional array of strings: NULL when absent. */
static bool wr_get_names(json_t *params, const char *key, json_t **out, wr_err *err)
{
    json_t *v = json_object_get(params, key);
    *out = NULL;
    if (!v || json_is_null(v)) {
        return true;
    }
    if (!json_is_array(v)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'%s' must be an array of names", key);
        return false;
    }
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x) {
        if (!json_is_string(x)) {
            wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'%s'[%zu] must be a string", key, i);
            return false;
        }
    }
    *out = v;
    return true;
}

static bool wr_get_bool(json_t *params, const char *key, bool *out, wr_err *err)
{
    json_t *v = json_object_get(params, key);
    *out = false;
    if (!v || json_is_null(v)) {
        return true;
    }
    if (!json_is_boolean(v)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'%s' must be a boolean", key);
        return false;
    }
    *out = json_is_true(v);
    return true;
}

static bool wr_require_object(json_t *params, wr_err *err)
{
    if (!json_is_object(params)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "params must be an object");
        return false;
    }
    return true;
}

/* ---- values ---- */

static const char *wr_component_name(weft_remote *r, weft_component c)
{
    weft_component_info info;
    return weft_component_info_get(r->world, c, &info) == WEFT_OK ? info.name : "?";
}

/* Component c of e as JSON: {} for a tag, the description's JSON
 * otherwise. NULL with err set when e lacks c or c is not described. */
static json_t *wr_component_value(weft_remote *r, weft_entity e, weft_component c, wr_err *err)
{
    weft_component_info info;
    weft_status st = weft_component_info_get(r->world, c, &info);
    if (st != WEFT_OK) {
        return wr_fail_world(r, err, st);
    }
    if (!weft_has(r->world, e, c)) {
        return wr_fail_weft(err, WEFT_ERR_NOT_FOUND, "entity %llu has no component '%s'",
                            (unsigned long long)e, info.name);
    }
    if (info.size == 0) {
        json_t *o = json_object();
        return o ? o : wr_oom(err);
    }
    if (weft_relationship_targets(r->world, c)) {
        /* a relationship source (ChildOf...): its target, as
         * weft_json_write_entity writes it */
        const weft_entity *t = weft_get(r->world, e, c, sizeof *t);
        json_t *o = t ? json_pack("{s:I}", "target", (json_int_t)*t) : NULL;
        return o ? o : wr_oom(err);
    }
    size_t need = 0;
    st = weft_json_write_component(r->world, e, c, r->scratch, r->scratch_cap, &need);
    if (st == WEFT_ERR_CAPACITY) {
        char *nb = realloc(r->scratch, need);
        if (!nb) {
            return wr_oom(err);
        }
        r->scratch = nb;
        r->scratch_cap = need;
        st = weft_json_write_component(r->world, e, c, r->scratch, r->scratch_cap, &need);
    }
    if (st != WEFT_OK) {
        return wr_fail_world(r, err, st);
    }
    json_error_t jerr;
    json_t *v = json_loadb(r->scratch, need ? need - 1 : 0, JSON_DECODE_ANY, &jerr);
    return v ? v : wr_fail_code(err, WEFT_REMOTE_INTERNAL_ERROR,
                                "component '%s' wrote unreadable JSON", info.name);
}

static json_t *wr_error_object(const wr_err *err)
{
    json_t *o = json_pack("{s:i,s:s}", "code", err->code, "message", err->msg);
    if (o && err->status != WEFT_OK) {
        json_object_set_new(o, "data",
                            json_pack("{s:s,s:i}", "status", weft_status_name(err->status),
                                      "status_code", (int)err->status));
    }
    return o;
}

/* Dumps `o` (stolen) to a malloc'ed string. */
static char *wr_dump(json_t *o, size_t *out_len)
{
    if (!o) {
        return NULL;
    }
    char *s = json_dumps(o, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(o);
    if (s && out_len) {
        *out_len = strlen(s);
    }
    return s;
}

/* ---- world.* methods ---- */

static json_t *m_get_components(weft_remote *r, json_t *params, wr_err *err)
{
    weft_entity e;
    json_t *names;
    bool strict;
    if (!wr_require_object(params, err) ||
        !wr_get_entity(r, json_object_get(params, "entity"), "entity", &e, err) ||
        !wr_get_names(params, "components", &names, err) || !wr_get_bool(params, "strict", &strict, err)) {
        return NULL;
    }
    if (!names) {
        return wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'components' is required");
    }
    json_t *comps = json_object(), *errors = json_object();
    json_t *result = json_pack("{s:o,s:o}", "components", comps, "errors", errors);
    if (!result) {
        return wr_oom(err);
    }
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n) {
        weft_component c;
        json_t *v = NULL;
        wr_err one = {0};
        if (wr_get_component(r, n, "component", &c, &one)) {
            v = wr_component_value(r, e, c, &one);
        }
        if (v) {
            json_object_set_new(comps, json_string_value(n), v);
            continue;
        }
        if (strict) {
            *err = one;
            json_decref(result);
            return NULL;
        }
        json_object_set_new(errors, json_string_value(n), wr_error_object(&one));
    }
    return result;
}

static bool wr_is_relationship_list(weft_remote *r, weft_component c)
{
    weft_world_stats stats;
    if (weft_world_get_stats(r->world, &stats) != WEFT_OK) {
        return false;
    }
    for (int32_t id = 1; id <= stats.components; id++) {
        if (weft_relationship_targets(r->world, (weft_component)id) == c) {
            return true;
        }
    }
    return false;
}

/* Every component of e that can be written as JSON, by name. */
static bool wr_all_components(weft_remote *r, weft_entity e, json_t *into, wr_err *err)
{
    int32_t arch = weft_entity_archetype(r->world, e);
    weft_archetype_info ai;
    if (arch < 0 || weft_archetype_info_get(r->world, arch, &ai) != WEFT_OK) {
        return true;
    }
    for (int32_t k = 0; k < ai.component_count; k++) {
        wr_err skip = {0};
        json_t *v = wr_component_value(r, e, ai.components[k], &skip);
        if (v) {
            json_object_set_new(into, wr_component_name(r, ai.components[k]), v);
        } else if (skip.code == WEFT_REMOTE_INTERNAL_ERROR) {
            *err = skip;
            return false;
        }
    }
    return true;
}

static json_t *m_query(weft_remote *r, json_t *params, wr_err *err)
{
    json_t *empty = NULL;
    if (!params || json_is_null(params)) {
        params = empty = json_object();
        if (!params) {
            return wr_oom(err);
        }
    }
    json_t *result = NULL;
    weft_query *q = NULL;
    weft_entity *ents = NULL;
    if (!wr_require_object(params, err)) {
        goto done;
    }
    json_t *data = json_object_get(params, "data");
    json_t *filter = json_object_get(params, "filter");
    if (data && !json_is_object(data) && !json_is_null(data)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'data' must be an object");
        goto done;
    }
    if (filter && !json_is_object(filter) && !json_is_null(filter)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'filter' must be an object");
        goto done;
    }
    json_t *comps = NULL, *option = NULL, *has = NULL, *with = NULL, *without = NULL;
    bool option_all = false, strict = false;
    if (!wr_get_bool(params, "strict", &strict, err)) {
        goto done;
    }
    if (json_is_object(data)) {
        json_t *opt = json_object_get(data, "option");
        if (json_is_string(opt) && strcmp(json_string_value(opt), "all") == 0) {
            option_all = true;
        } else if (!wr_get_names(data, "option", &option, err)) {
            goto done;
        }
        if (!wr_get_names(data, "components", &comps, err) ||
            !wr_get_names(data, "has", &has, err)) {
            goto done;
        }
    }
    if (json_is_object(filter) && (!wr_get_names(filter, "with", &with, err) ||
                                   !wr_get_names(filter, "without", &without, err))) {
        goto done;
    }
    /* Terms: components (AND), with (WITH), without (WITHOUT). Unknown
     * names are an error when strict; otherwise an unknown required
     * component matches nothing and an unknown optional or excluded one
     * is ignored. */
    weft_query_desc qd = {0};
    bool matches_nothing = false;
    json_t *lists[3] = {comps, with, without};
    weft_oper opers[3] = {WEFT_OPER_AND, WEFT_OPER_WITH, WEFT_OPER_WITHOUT};
    for (int l = 0; l < 3; l++) {
        size_t i;
        json_t *n;
        json_array_foreach(lists[l], i, n) {
            weft_component c = weft_component_lookup(r->world, json_string_value(n));
            if (!c) {
                if (strict) {
                    wr_fail_weft(err, WEFT_ERR_UNKNOWN_COMPONENT, "unknown component '%s'",
                                 json_string_value(n));
                    goto done;
                }
                matches_nothing |= l < 2;
                continue;
            }
            if (qd.term_count == WEFT_MAX_TERMS) {
                wr_fail_weft(err, WEFT_ERR_CAPACITY, "a query has at most %d terms",
                             WEFT_MAX_TERMS);
                goto done;
            }
            weft_component_info info;
            weft_component_info_get(r->world, c, &info);
            weft_term *t = &qd.terms[qd.term_count++];
            t->id = c;
            t->oper = (opers[l] == WEFT_OPER_AND && info.size == 0) ? WEFT_OPER_WITH : opers[l];
            t->access = t->oper == WEFT_OPER_AND ? WEFT_ACCESS_READ : WEFT_ACCESS_NONE;
        }
    }
    json_t *lists2[2] = {option, has};
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *n;
        json_array_foreach(lists2[l], i, n) {
            if (strict && !weft_component_lookup(r->world, json_string_value(n))) {
                wr_fail_weft(err, WEFT_ERR_UNKNOWN_COMPONENT, "unknown component '%s'",
                             json_string_value(n));
                goto done;
            }
        }
    }
    result = json_array();
    if (!result) {
        wr_oom(err);
        goto done;
    }
    if (matches_nothing) {
        goto done;
    }
    if (qd.term_count == 0) {
        /* Every entity: one optional term on any registered component. */
        weft_world_stats stats;
        weft_world_get_stats(r->world, &stats);
        if (stats.components == 0) {
            goto done;
        }
        qd.terms[0].id = 1;
        qd.terms[0].oper = WEFT_OPER_OPTIONAL;
        qd.terms[0].access = WEFT_ACCESS_NONE;
        qd.term_count = 1;
    }
    qd.flags = WEFT_QUERY_UNCACHED;
    q = weft_query_create(r->world, &qd);
    if (!q) {
        wr_fail_world(r, err, weft_last_status(r->world));
        goto fail;
    }
    size_t count = 0, cap = 0;
    weft_iter it;
    weft_status st = weft_query_iter(r->world, q, &it);
    if (st != WEFT_OK) {
        wr_fail_world(r, err, st);
        goto fail;
    }
    while (weft_iter_next(&it)) {
        int32_t n = weft_iter_count(&it);
        const weft_entity *es = weft_iter_entities(&it);
        if (count + (size_t)n > cap) {
            size_t ncap = cap ? cap : 256;
            while (ncap < count + (size_t)n) {
                ncap *= 2;
            }
            weft_entity *ne = realloc(ents, ncap * sizeof *ne);
            if (!ne) {
                weft_iter_fini(&it);
                wr_oom(err);
                goto fail;
            }
            ents = ne;
            cap = ncap;
        }
        memcpy(ents + count, es, (size_t)n * sizeof *es);
        count += (size_t)n;
    }
    for (size_t k = 0; k < count; k++) {
        weft_entity e = ents[k];
        json_t *cv = json_object();
        json_t *row = json_pack("{s:I,s:o}", "entity", (json_int_t)e, "components", cv);
        if (!row || json_array_append_new(result, row) != 0) {
            wr_oom(err);
            goto fail;
        }
        if (option_all) {
            if (!wr_all_components(r, e, cv, err)) {
                goto fail;
            }
        }
        json_t *wanted[2] = {comps, option};
        for (int l = 0; l < 2; l++) {
            size_t i;
            json_t *n;
            json_array_foreach(wanted[l], i, n) {
                weft_component c = weft_component_lookup(r->world, json_string_value(n));
                if (!c || !weft_has(r->world, e, c)) {
                    continue;
                }
                wr_err one = {0};
                json_t *v = wr_component_value(r, e, c, &one);
                if (!v) {
                    if (strict || one.code == WEFT_REMOTE_INTERNAL_ERROR) {
                        *err = one;
                        goto fail;
                    }
                    continue;
                }
                json_object_set_new(cv, json_string_value(n), v);
            }
        }
        if (has) {
            json_t *hv = json_object();
            json_object_set_new(row, "has", hv);
            size_t i;
            json_t *n;
            json_array_foreach(has, i, n) {
                weft_component c = weft_component_lookup(r->world, json_string_value(n));
                json_object_set_new(hv, json_string_value(n),
                                    json_boolean(c && weft_has(r->world, e, c)));
            }
        }
    }
    goto done;
fail:
    json_decref(result);
    result = NULL;
done:
    if (q) {
        weft_query_destroy(r->world, q);
    }
    free(ents);
    json_decref(empty);
    return result;
}

/* {"components": <object>} as text for the weft_json_* readers. */
static char *wr_entity_text(json_t *components, size_t *len)
{
    json_t *o = json_pack("{s:O}", "components", components);
    return wr_dump(o, len);
}

static bool wr_get_components_object(json_t *params, json_t **out, wr_err *err)
{
    json_t *v = json_object_get(params, "components");
    if (!json_is_object(v)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS,
                     "'components' must be an object of component values by name");
        return false;
    }
    *out = v;
    return true;
}

static json_t *m_spawn_entity(weft_remote *r, json_t *params, wr_err *err)
{
    json_t *comps;
    if (!wr_require_object(params, err) || !wr_get_components_object(params, &comps, err)) {
        return NULL;
    }
    size_t len = 0;
    char *text = wr_entity_text(comps, &len);
    if (!text) {
        return wr_oom(err);
    }
    weft_entity e = weft_json_spawn(r->world, text, len);
    free(text);
    if (!e) {
        return wr_fail_world(r, err, weft_last_status(r->world));
    }
    json_t *res = json_pack("{s:I}", "entity", (json_int_t)e);
    return res ? res : wr_oom(err);
}

static json_t *m_insert_components(weft_remote *r, json_t *params, wr_err *err)
{
    weft_entity e;
    json_t *comps;
    if (!wr_require_object(params, err) ||
        !wr_get_entity(r, json_object_get(params, "entity"), "entity", &e, err) ||
        !wr_get_components_object(params, &comps, err)) {
        return NULL;
    }
    size_t len = 0;
    char *text = wr_entity_text(comps, &len);
    if (!text) {
        return wr_oom(err);
    }
    weft_status st = weft_json_read_entity(r->world, e, text, len);
    free(text);
    return st == WEFT_OK ? json_null() : wr_fail_world(r, err, st);
}

static json_t *m_remove_components(weft_remote *r, json_t *params, wr_err *err)
{
    weft_entity e;
    json_t *names;
    if (!wr_require_object(params, err) ||
        !wr_get_entity(r, json_object_get(params, "entity"), "entity", &e, err) ||
        !wr_get_names(params, "components", &names, err)) {
        return NULL;
    }
    if (!names) {
        return wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'components' is required");
    }
    size_t n = json_array_size(names);
    weft_component *ids = calloc(n ? n : 1, sizeof *ids);
    if (!ids) {
        return wr_oom(err);
    }
    /* All checked before the first removal. */
    for (size_t i = 0; i < n; i++) {
        if (!wr_get_component(r, json_array_get(names, i), "component", &ids[i], err)) {
            free(ids);
            return NULL;
        }
        if (wr_is_relationship_list(r, ids[i])) {
            free(ids);
            return wr_fail_weft(err, WEFT_ERR_RELATIONSHIP,
                                "'%s' is a relationship's target list, kept by weft",
                                json_string_value(json_array_get(names, i)));
        }
    }
    for (size_t i = 0; i < n; i++) {
        weft_status st = weft_remove(r->world, e, ids[i]);
        if (st != WEFT_OK) {
            free(ids);
            return wr_fail_world(r, err, st);
        }
    }
    free(ids);
    return json_null();
}

static json_t *m_despawn_entity(weft_remote *r, json_t *params, wr_err *err)
{
    weft_entity e;
    if (!wr_require_object(params, err) ||
        !wr_get_entity(r, json_object_get(params, "entity"), "entity", &e, err)) {
        return NULL;
    }
    weft_status st = weft_despawn(r->world, e);
    return st == WEFT_OK ? json_null() : wr_fail_world(r, err, st);
}

static json_t *m_reparent_entities(weft_remote *r, json_t *params, wr_err *err)
{
    if (!wr_require_object(params, err)) {
        return NULL;
    }
    json_t *list = json_object_get(params, "entities");
    if (!json_is_array(list)) {
        return wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'entities' must be an array");
    }
    weft_entity parent = 0;
    json_t *pv = json_object_get(params, "parent");
    if (pv && !json_is_null(pv) && !wr_get_entity(r, pv, "parent", &parent, err)) {
        return NULL;
    }
    size_t n = json_array_size(list);
    weft_entity *kids = calloc(n ? n : 1, sizeof *kids);
    if (!kids) {
        return wr_oom(err);
    }
    for (size_t i = 0; i < n; i++) {
        if (!wr_get_entity(r, json_array_get(list, i), "entities[i]", &kids[i], err)) {
            free(kids);
            return NULL;
        }
    }
    weft_component child_of = weft_child_of(r->world);
    if (!child_of) {
        free(kids);
        return wr_fail_world(r, err, weft_last_status(r->world));
    }
    if (parent) {
        /* A child may not be the parent or one of its ancestors. */
        int32_t na = weft_ancestors(r->world, parent, child_of, NULL, 0);
        weft_entity *anc = calloc((size_t)(na > 0 ? na : 1), sizeof *anc);
        if (!anc) {
            free(kids);
            return wr_oom(err);
        }
        if (na > 0) {
            weft_ancestors(r->world, parent, child_of, anc, na);
        }
        for (size_t i = 0; i < n; i++) {
            bool bad = kids[i] == parent;
            for (int32_t k = 0; k < na && !bad; k++) {
                bad = anc[k] == kids[i];
            }
            if (bad) {
                wr_fail_weft(err, WEFT_ERR_RELATIONSHIP,
                             "entity %llu cannot become a child of %llu: it would be "
                             "its own ancestor",
                             (unsigned long long)kids[i], (unsigned long long)parent);
                free(anc);
                free(kids);
                return NULL;
            }
        }
        free(anc);
    }
    for (size_t i = 0; i < n; i++) {
        weft_status st = parent ? weft_set_parent(r->world, kids[i], parent)
                                : weft_remove_parent(r->world, kids[i]);
        if (st != WEFT_OK) {
            free(kids);
            return wr_fail_world(r, err, st);
        }
    }
    free(kids);
    return json_null();
}

static json_t *m_list_components(weft_remote *r, json_t *params, wr_err *err)
{
    json_t *out = json_array();
    if (!out) {
        return wr_oom(err);
    }
    if (params && !json_is_null(params) &&
        (!json_is_object(params) || json_object_get(params, "entity"))) {
        weft_entity e;
        if (!wr_require_object(params, err) ||
            !wr_get_entity(r, json_object_get(params, "entity"), "entity", &e, err)) {
            json_decref(out);
            return NULL;
        }
        weft_archetype_info ai;
        int32_t arch = weft_entity_archetype(r->world, e);
        if (arch >= 0 && weft_archetype_info_get(r->world, arch, &ai) == WEFT_OK) {
            for (int32_t k = 0; k < ai.component_count; k++) {
                json_array_append_new(out, json_string(wr_component_name(r, ai.components[k])));
            }
        }
        return out;
    }
    weft_world_stats stats;
    weft_world_get_stats(r->world, &stats);
    for (int32_t id = 1; id <= stats.components; id++) {
        json_array_append_new(out, json_string(wr_component_name(r, (weft_component)id)));
    }
    return out;
}

static json_t *m_list_resources(weft_remote *r, json_t *params, wr_err *err)
{
    (void)params;
    json_t *out = json_array();
    if (!out) {
        return wr_oom(err);
    }
    weft_world_stats stats;
    weft_world_get_stats(r->world, &stats);
    for (int32_t id = 1; id <= stats.components; id++) {
        if (weft_resource_has(r->world, (weft_component)id)) {
            json_array_append_new(out, json_string(wr_component_name(r, (weft_component)id)));
        }
    }
    return out;
}

/* Finds the JSON value at `path` (".a.b[2].c", the first dot optional,
 * "" for the whole value) inside root; sets *slot_parent and the key or
 * index to replace. */
static bool wr_path_set(json_t *root, const char *path, json_t *value, json_t **out_root,
                        wr_err *err)
{
    const char *p = path;
    if (*p == '\0') {
        *out_root = json_incref(value);
        return true;
    }
    json_t *cur = root;
    json_t *parent = NULL;
    char key[128];
    size_t index = 0;
    bool is_index = false;
    while (*p) {
        parent = cur;
        if (*p == '[') {
            char *end;
            unsigned long long v = strtoull(p + 1, &end, 10);
            if (end == p + 1 || *end != ']') {
                wr_fail_weft(err, WEFT_ERR_INVALID_ARG, "path '%s': bad index", path);
                return false;
            }
            if (!json_is_array(cur) || v >= json_array_size(cur)) {
                wr_fail_weft(err, WEFT_ERR_CAPACITY, "path '%s': index %llu out of range", path,
                             v);
                return false;
            }
            index = (size_t)v;
            is_index = true;
            cur = json_array_get(cur, index);
            p = end + 1;
            continue;
        }
        if (*p == '.') {
            p++;
        }
        size_t k = 0;
        while (*p && *p != '.' && *p != '[') {
            if (k + 1 >= sizeof key) {
                wr_fail_weft(err, WEFT_ERR_INVALID_ARG, "path '%s': name too long", path);
                return false;
            }
            key[k++] = *p++;
        }
        key[k] = '\0';
        if (k == 0) {
            wr_fail_weft(err, WEFT_ERR_INVALID_ARG, "path '%s': empty field name", path);
            return false;
        }
        if (!json_is_object(cur) || !json_object_get(cur, key)) {
            wr_fail_weft(err, WEFT_ERR_NOT_FOUND, "path '%s': no field '%s'", path, key);
            return false;
        }
        is_index = false;
        cur = json_object_get(cur, key);
    }
    int rc = is_index ? json_array_set(parent, index, value) : json_object_set(parent, key, value);
    if (rc != 0) {
        wr_oom(err);
        return false;
    }
    *out_root = json_incref(root);
    return true;
}

static json_t *m_mutate_components(weft_remote *r, json_t *params, wr_err *err)
{
    weft_entity e;
    weft_component c;
    if (!wr_require_object(params, err) ||
        !wr_get_entity(r, json_object_get(params, "entity"), "entity", &e, err) ||
        !wr_get_component(r, json_object_get(params, "component"), "component", &c, err)) {
        return NULL;
    }
    json_t *path = json_object_get(params, "path");
    json_t *value = json_object_get(params, "value");
    if (!json_is_string(path)) {
        return wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'path' must be a string");
    }
    if (!value) {
        return wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'value' is required");
    }
    json_t *cur = wr_component_value(r, e, c, err);
    if (!cur) {
        return NULL;
    }
    json_t *next = NULL;
    bool ok = wr_path_set(cur, json_string_value(path), value, &next, err);
    json_decref(cur);
    if (!ok) {
        return NULL;
    }
    size_t len = 0;
    char *text = wr_dump(next, &len);
    if (!text) {
        return wr_oom(err);
    }
    weft_status st = weft_json_read_component(r->world, e, c, text, len);
    free(text);
    return st == WEFT_OK ? json_null() : wr_fail_world(r, err, st);
}

static json_t *m_discover(weft_remote *r, json_t *params, wr_err *err);
/* ---- resources ---- */

static bool wr_get_resource(weft_remote *r, json_t *params, weft_component *out, wr_err *err)
{
    return wr_require_object(params, err) &&
           wr_get_component(r, json_object_get(params, "resource"), "resource", out, err);
}

static json_t *wr_resource_value(weft_remote *r, weft_component c, wr_err *err)
{
    size_t need = 0;
    weft_status st = weft_json_write_resource(r->world, c, r->scratch, r->scratch_cap, &need);
    if (st == WEFT_ERR_CAPACITY) {
        char *nb = realloc(r->scratch, need);
        if (!nb) {
            return wr_oom(err);
        }
        r->scratch = nb;
        r->scratch_cap = need;
        st = weft_json_write_resource(r->world, c, r->scratch, r->scratch_cap, &need);
    }
    if (st != WEFT_OK) {
        return wr_fail_world(r, err, st);
    }
    json_error_t jerr;
    json_t *v = json_loadb(r->scratch, need ? need - 1 : 0, JSON_DECODE_ANY, &jerr);
    return v ? v : wr_fail_code(err, WEFT_REMOTE_INTERNAL_ERROR, "unreadable resource JSON");
}

static json_t *m_get_resources(weft_remote *r, json_t *params, wr_err *err)
{
    weft_component c;
    if (!wr_get_resource(r, params, &c, err)) {
        return NULL;
    }
    json_t *v = wr_resource_value(r, c, err);
    return v ? json_pack("{s:o}", "value", v) : NULL;
}

static json_t *wr_write_resource(weft_remote *r, weft_component c, json_t *value, wr_err *err)
{
    char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text) {
        return wr_oom(err);
    }
    weft_status st = weft_json_read_resource(r->world, c, text, strlen(text));
    free(text);
    return st == WEFT_OK ? json_null() : wr_fail_world(r, err, st);
}

static json_t *m_insert_resources(weft_remote *r, json_t *params, wr_err *err)
{
    weft_component c;
    if (!wr_get_resource(r, params, &c, err)) {
        return NULL;
    }
    json_t *value = json_object_get(params, "value");
    if (!value) {
        return wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'value' is required");
    }
    return wr_write_resource(r, c, value, err);
}

static json_t *m_remove_resources(weft_remote *r, json_t *params, wr_err *err)
{
    weft_component c;
    if (!wr_get_resource(r, params, &c, err)) {
        return NULL;
    }
    weft_status st = weft_resource_remove(r->world, c);
    return st == WEFT_OK ? json_null() : wr_fail_world(r, err, st);
}

static json_t *m_mutate_resources(weft_remote *r, json_t *params, wr_err *err)
{
    weft_component c;
    if (!wr_get_resource(r, params, &c, err)) {
        return NULL;
    }
    json_t *path = json_object_get(params, "path");
    json_t *value = json_object_get(params, "value");
    if (!json_is_string(path)) {
        return wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'path' must be a string");
    }
    if (!value) {
        return wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'value' is required");
    }
    json_t *cur = wr_resource_value(r, c, err);
    if (!cur) {
        return NULL;
    }
    json_t *next = NULL;
    bool ok = wr_path_set(cur, json_string_value(path), value, &next, err);
    json_decref(cur);
    if (!ok) {
        return NULL;
    }
    json_t *res = wr_write_resource(r, c, next, err);
    json_decref(next);
    return res;
}


static const wr_method wr_methods[] = {
    {"world.get_components", m_get_components, false,
     "{entity, components: [name], strict?} -> {components: {name: value}, errors: {name: error}}"},
    {"world.query", m_query, false,
     "{data?: {components?, option?: [name] | \"all\", has?}, filter?: {with?, without?}, "
     "strict?} -> [{entity, components, has?}]"},
    {"world.spawn_entity", m_spawn_entity, true, "{components: {name: value}} -> {entity}"},
    {"world.insert_components", m_insert_components, true,
     "{entity, components: {name: value}} -> null"},
    {"world.remove_components", m_remove_components, true, "{entity, components: [name]} -> null"},
    {"world.despawn_entity", m_despawn_entity, true, "{entity} -> null"},
    {"world.reparent_entities", m_reparent_entities, true,
     "{entities: [entity], parent?: entity} -> null"},
    {"world.list_components", m_list_components, false, "{entity}? -> [name]"},
    {"world.mutate_components", m_mutate_components, true,
     "{entity, component, path, value} -> null"},
    {"world.get_resources", m_get_resources, false, "{resource} -> {value}"},
    {"world.insert_resources", m_insert_resources, true, "{resource, value} -> null"},
    {"world.remove_resources", m_remove_resources, true, "{resource} -> null"},
    {"world.mutate_resources", m_mutate_resources, true, "{resource, path, value} -> null"},
    {"world.list_resources", m_list_resources, false, "-> [name]"},
    {"weft.world_stats", wi_world_stats, false, "-> world counters and the change tick"},
    {"weft.archetypes", wi_archetypes, false,
     "-> {archetypes: [{index, entities, table, components}], summary}"},
    {"weft.schedules", wi_schedules, false, "{names?: [name]} -> [{name, order?, systems}]"},
    {"weft.schedule", wi_schedule_info, false,
     "{schedule} -> {systems, edges, ambiguities, sync_points, step_cursor, dot}"},
    {"weft.trace", wi_trace, false, "{schedule, profile?} -> {trace, max_concurrency}"},
    {"weft.diagnostics", wi_diagnostics, false, "-> [{name, value, average, smoothed, ...}]"},
    {"weft.states", wi_states, false, "-> [{name, exists, value, value_name}]"},
    {"weft.stepping", wi_stepping, true,
     "{schedule, action: on|off|step|continue} -> {stepping, cursor}"},
    {"rpc.discover", m_discover, false, "-> OpenRPC document"},
};
#define WR_METHOD_COUNT (sizeof wr_methods / sizeof wr_methods[0])

static json_t *m_discover(weft_remote *r, json_t *params, wr_err *err)
{
    (void)params;
    json_t *methods = json_array();
    json_t *doc = json_pack("{s:s,s:{s:s,s:s},s:o}", "openrpc", "1.3.2", "info", "title",
                            "weft remote", "version", "0.3.0", "methods", methods);
    if (!doc) {
        return wr_oom(err);
    }
    for (size_t i = 0; i < WR_METHOD_COUNT; i++) {
        json_array_append_new(
            methods, json_pack("{s:s,s:s,s:b,s:[]}", "name", wr_methods[i].name, "summary",
                               wr_methods[i].summary, "x-writes", wr_methods[i].writes,
                               "params"));
    }
    if (r->port) {
        json_object_set_new(doc, "servers",
                            json_pack("[{s:s,s:s}]", "name", "weft", "url",
                                      "http://127.0.0.1/"));
    }
    return doc;
}

/* ---- requests ---- */

/* Nesting depth of JSON text, scanning brackets outside strings; stops
 * counting past `limit`. */
static int wr_depth(const char *s, size_t len, int limit)
{
    int depth = 0, max = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (in_str) {
            if (ch == '\\') {
                i++;
            } else if (ch == '"') {
                in_str = false;
            }
        } else if (ch == '"') {
            in_str = true;
        } else if (ch == '[' || ch == '{') {
            if (++depth > max) {
                max = depth;
                if (max > limit) {
                    return max;
                }
            }
        } else if (ch == ']' || ch == '}') {
            depth--;
        }
    }
    return max;
}

static json_t *wr_response_error(json_t *id, const wr_err *err)
{
    json_t *eo = wr_error_object(err);
    if (!eo) {
        return NULL;
    }
    return json_pack("{s:s,s:o,s:O}", "jsonrpc", "2.0", "error", eo, "id",
                     id ? id : json_null());
}

/* Answers one request object; NULL for a notification (or OOM: *oom). */
/* FNV-1a 64 of a result's canonical text: the etag of a +watch answer. */
static bool wr_etag(json_t *result, char out[17])
{
    char *text = json_dumps(result, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!text) {
        return false;
    }
    uint64_t h = 1469598103934665603ull;
    for (const char *p = text; *p; p++) {
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    }
    free(text);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
    return true;
}

static json_t *wr_one(weft_remote *r, json_t *req, bool may_hold, int *hold, int *oom)
{
    wr_err err = {0};
    json_t *id = NULL;
    json_t *out = NULL;
    r->requests++;
    if (!json_is_object(req)) {
        wr_fail_code(&err, WEFT_REMOTE_INVALID_REQUEST, "a request must be an object");
        goto error;
    }
    id = json_object_get(req, "id");
    bool notification = id == NULL;
    if (id && !json_is_string(id) && !json_is_number(id) && !json_is_null(id)) {
        id = NULL;
        wr_fail_code(&err, WEFT_REMOTE_INVALID_REQUEST, "'id' must be a string, number or null");
        goto error;
    }
    json_t *ver = json_object_get(req, "jsonrpc");
    if (!json_is_string(ver) || strcmp(json_string_value(ver), "2.0") != 0) {
        wr_fail_code(&err, WEFT_REMOTE_INVALID_REQUEST, "'jsonrpc' must be \"2.0\"");
        goto error;
    }
    json_t *method = json_object_get(req, "method");
    if (!json_is_string(method)) {
        wr_fail_code(&err, WEFT_REMOTE_INVALID_REQUEST, "'method' must be a string");
        goto error;
    }
    json_t *params = json_object_get(req, "params");
    if (params && !json_is_object(params) && !json_is_array(params) && !json_is_null(params)) {
        wr_fail_code(&err, WEFT_REMOTE_INVALID_REQUEST, "'params' must be an object or array");
        goto error;
    }
    /* "<method>+watch" (a reading method): the answer is {value, etag};
     * given the etag of the previous answer, the request is held (long
     * poll) until the value differs or the hold time passes. */
    const char *mname = json_string_value(method);
    size_t mlen = strlen(mname);
    bool watch = mlen > 6 && strcmp(mname + mlen - 6, "+watch") == 0;
    if (watch) {
        mlen -= 6;
    }
    const wr_method *m = NULL;
    for (size_t i = 0; i < WR_METHOD_COUNT; i++) {
        if (strlen(wr_methods[i].name) == mlen && strncmp(wr_methods[i].name, mname, mlen) == 0 &&
            !(watch && wr_methods[i].writes)) {
            m = &wr_methods[i];
            break;
        }
    }
    if (!m) {
        wr_fail_code(&err, WEFT_REMOTE_METHOD_NOT_FOUND, "no method '%s'",
                     json_string_value(method));
        goto error;
    }
    if (m->writes && !(r->flags & WEFT_REMOTE_ALLOW_WRITES)) {
        wr_fail_weft(&err, WEFT_ERR_ACCESS_VIOLATION,
                     "%s changes the world and this remote is read-only "
                     "(WEFT_REMOTE_ALLOW_WRITES)",
                     m->name);
        goto error;
    }
    json_t *etag_in = NULL;
    json_t *base_params = params;
    if (watch && json_is_object(params)) {
        etag_in = json_object_get(params, "etag");
        if (etag_in && !json_is_string(etag_in)) {
            wr_fail_code(&err, WEFT_REMOTE_INVALID_PARAMS, "'etag' must be a string");
            goto error;
        }
        base_params = json_copy(params);
        if (!base_params) {
            *oom = 1;
            return NULL;
        }
        json_object_del(base_params, "etag");
    }
    json_t *result = m->fn(r, base_params, &err);
    if (base_params != params) {
        json_decref(base_params);
    }
    if (!result) {
        goto error;
    }
    if (watch) {
        char etag[17];
        if (!wr_etag(result, etag)) {
            json_decref(result);
            *oom = 1;
            return NULL;
        }
        if (may_hold && etag_in && strcmp(json_string_value(etag_in), etag) == 0) {
            json_decref(result);
            r->requests--; /* counted when it is answered */
            *hold = 1;
            return NULL;
        }
        result = json_pack("{s:o,s:s}", "value", result, "etag", etag);
        if (!result) {
            *oom = 1;
            return NULL;
        }
    }
    if (notification) {
        json_decref(result);
        return NULL;
    }
    out = json_pack("{s:s,s:o,s:O}", "jsonrpc", "2.0", "result", result, "id", id);
    if (!out) {
        *oom = 1;
    }
    return out;
error:
    r->errors++;
    if (id == NULL && json_is_object(req) && json_object_get(req, "id") == NULL &&
        err.code != WEFT_REMOTE_INVALID_REQUEST) {
        return NULL; /* a notification's error is not answered */
    }
    out = wr_response_error(id, &err);
    if (!out) {
        *oom = 1;
    }
    return out;
}

char *wr_rpc_error_text(int code, const char *message, size_t *out_len)
{
    wr_err err = {0};
    err.code = code;
    snprintf(err.msg, sizeof err.msg, "%s", message);
    return wr_dump(wr_response_error(NULL, &err), out_len);
}

char *wr_rpc_handle(weft_remote *r, const char *text, size_t len, bool may_hold, int *hold,
                    size_t *out_len, int *oom)
{
    *oom = 0;
    *hold = 0;
    *out_len = 0;
    if (len > (size_t)r->max_request_bytes) {
        r->requests++;
        r->errors++;
        char *s = wr_rpc_error_text(WEFT_REMOTE_INVALID_REQUEST,
                                    "request body exceeds the size limit", out_len);
        *oom = !s;
        return s;
    }
    if (wr_depth(text, len, r->max_depth) > r->max_depth) {
        r->requests++;
        r->errors++;
        char msg[96];
        snprintf(msg, sizeof msg, "JSON nested deeper than %d levels", (int)r->max_depth);
        char *s = wr_rpc_error_text(WEFT_REMOTE_INVALID_REQUEST, msg, out_len);
        *oom = !s;
        return s;
    }
    json_error_t jerr;
    json_t *doc = json_loadb(text, len, JSON_DECODE_ANY, &jerr);
    if (!doc) {
        r->requests++;
        r->errors++;
        char msg[256];
        snprintf(msg, sizeof msg, "parse error: %s (line %d, column %d)", jerr.text, jerr.line,
                 jerr.column);
        char *s = wr_rpc_error_text(WEFT_REMOTE_PARSE_ERROR, msg, out_len);
        *oom = !s;
        return s;
    }
    json_t *out = NULL;
    if (json_is_array(doc)) {
        size_t n = json_array_size(doc);
        if (n == 0 || n > (size_t)r->max_batch) {
            r->requests++;
            r->errors++;
            json_decref(doc);
            char msg[96];
            snprintf(msg, sizeof msg, n ? "a batch holds at most %d requests" : "empty batch",
                     (int)r->max_batch);
            char *s = wr_rpc_error_text(WEFT_REMOTE_INVALID_REQUEST, msg, out_len);
            *oom = !s;
            return s;
        }
        out = json_array();
        if (!out) {
            json_decref(doc);
            *oom = 1;
            return NULL;
        }
        for (size_t i = 0; i < n && !*oom; i++) {
            int ignore = 0;
            json_t *one = wr_one(r, json_array_get(doc, i), false, &ignore, oom);
            if (one) {
                json_array_append_new(out, one);
            }
        }
        if (json_array_size(out) == 0) {
            json_decref(out);
            out = NULL;
        }
    } else {
        out = wr_one(r, doc, may_hold, hold, oom);
    }
    json_decref(doc);
    if (*oom) {
        json_decref(out);
        return NULL;
    }
    if (!out) {
        return NULL;
    }
    char *s = wr_dump(out, out_len);
    *oom = !s;
    return s;
}

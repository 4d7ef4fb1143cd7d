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

/* Bevy's type paths of the built-in hierarchy (bevy_ecs 0.16 and later):
 * ChildOf is a newtype of the parent entity, Children a list of entities.
 * They name weft's ChildOf and its target list, shown in Bevy's shapes. */
#define WR_BEVY_CHILD_OF "bevy_ecs::hierarchy::ChildOf"
#define WR_BEVY_CHILDREN "bevy_ecs::hierarchy::Children"

enum { WR_ALIAS_NONE = 0, WR_ALIAS_CHILD_OF = 1, WR_ALIAS_CHILDREN = 2 };

/* A component by name, Bevy's hierarchy paths included (0: unknown);
 * *alias (may be NULL) says which shape the name asks for. */
static weft_component wr_lookup(weft_remote *r, const char *name, int *alias)
{
    if (alias) {
        *alias = WR_ALIAS_NONE;
    }
    if (strcmp(name, WR_BEVY_CHILD_OF) == 0 || strcmp(name, WR_BEVY_CHILDREN) == 0) {
        weft_component child_of = weft_child_of(r->world);
        bool kids = name[sizeof "bevy_ecs::hierarchy::" - 1] == 'C' &&
                    strcmp(name, WR_BEVY_CHILDREN) == 0;
        if (alias) {
            *alias = kids ? WR_ALIAS_CHILDREN : WR_ALIAS_CHILD_OF;
        }
        return kids ? weft_relationship_targets(r->world, child_of) : child_of;
    }
    return weft_component_lookup(r->world, name);
}

static bool wr_get_component(weft_remote *r, json_t *v, const char *what, weft_component *out,
                             wr_err *err)
{
    if (!json_is_string(v)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "%s must be a component name (a string)",
                     what);
        return false;
    }
    weft_component c = wr_lookup(r, json_string_value(v), NULL);
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

static weft_component wr_list_relationship(weft_remote *r, weft_component c);
static void wr_bevy_code(wr_err *err, const char *method);
static json_t *wr_value_as(weft_remote *r, weft_entity e, weft_component c, int alias,
                           wr_err *err);

/* Component c of e as JSON: null for a tag (a unit struct), the sources
 * for a relationship's target list (an array of entities), the
 * description's JSON otherwise. NULL with err set when e lacks c or c is
 * not described. */
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
        return json_null();
    }
    weft_component rel = wr_list_relationship(r, c);
    if (rel) {
        int32_t n = 0;
        const weft_entity *src = weft_related_sources(r->world, e, rel, &n);
        json_t *a = json_array();
        for (int32_t i = 0; a && i < n; i++) {
            if (json_array_append_new(a, json_integer((json_int_t)src[i])) != 0) {
                json_decref(a);
                a = NULL;
            }
        }
        return a ? a : wr_oom(err);
    }
    if (weft_relationship_targets(r->world, c)) {
        /* a relationship source (ChildOf...): its target, as
         * weft_json_write_entity writes it */
        const weft_entity *t = weft_get(r->world, e, c, sizeof *t);
        json_t *o = t ? json_pack("{s:I}", "target", (json_int_t)*t) : NULL;
        return o ? o : wr_oom(err);
    }
    /* measured first: a NULL buffer is a size query, which records no
     * error (a too small buffer would, in the world's slot or, inside the
     * plugin's system, as the system's failure) */
    size_t need = 0;
    st = weft_json_write_component(r->world, e, c, NULL, 0, &need);
    if (st == WEFT_ERR_CAPACITY && need > r->scratch_cap) {
        char *nb = realloc(r->scratch, need);
        if (!nb) {
            return wr_oom(err);
        }
        r->scratch = nb;
        r->scratch_cap = need;
    }
    if (st == WEFT_ERR_CAPACITY) {
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

/* Bytes of the UTF-8 sequence starting at p (RFC 3629: no overlong forms,
 * no surrogates, nothing above U+10FFFF), or 0 when it is not one. Stops
 * at the terminating NUL, which is never a continuation byte. */
static size_t wr_utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    if (c < 0x80) {
        return 1;
    }
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c == 0xE0) {
        n = 3;
        lo = 0xA0;
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
        n = 3;
    } else if (c == 0xED) {
        n = 3;
        hi = 0x9F;
    } else if (c == 0xF0) {
        n = 4;
        lo = 0x90;
    } else if (c >= 0xF1 && c <= 0xF3) {
        n = 4;
    } else if (c == 0xF4) {
        n = 4;
        hi = 0x8F;
    } else {
        return 0;
    }
    if (p[1] < lo || p[1] > hi) {
        return 0;
    }
    for (size_t i = 2; i < n; i++) {
        if (p[i] < 0x80 || p[i] > 0xBF) {
            return 0;
        }
    }
    return n;
}

/* An error message quotes the client's bytes (a parse error's "near
 * '...'") and names, and a fixed buffer may cut it inside a character;
 * JSON strings must be UTF-8 (jansson refuses others, and the answer
 * would be lost), so each byte that does not start a whole UTF-8
 * character becomes '?'. */
static void wr_utf8_clean(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        size_t n = wr_utf8_len(p);
        if (n == 0) {
            *p++ = '?';
        } else {
            p += n;
        }
    }
}

static json_t *wr_error_object(const wr_err *err)
{
    char msg[sizeof err->msg];
    memcpy(msg, err->msg, sizeof msg);
    msg[sizeof msg - 1] = '\0';
    wr_utf8_clean(msg);
    json_t *o = json_pack("{s:i,s:s}", "code", err->code, "message", msg);
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
            int alias = 0;
            wr_lookup(r, json_string_value(n), &alias);
            v = wr_value_as(r, e, c, alias, &one);
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
        wr_bevy_code(&one, "world.get_components");
        json_object_set_new(errors, json_string_value(n), wr_error_object(&one));
    }
    if (strict) {
        /* bevy_remote: a strict answer is the map itself */
        json_t *bare = json_incref(comps);
        json_decref(result);
        return bare;
    }
    return result;
}

/* The relationship whose target list c is (0: c is not one). */
static weft_component wr_list_relationship(weft_remote *r, weft_component c)
{
    weft_world_stats stats;
    if (weft_world_get_stats(r->world, &stats) != WEFT_OK) {
        return 0;
    }
    for (int32_t id = 1; id <= stats.components; id++) {
        if (weft_relationship_targets(r->world, (weft_component)id) == c) {
            return (weft_component)id;
        }
    }
    return 0;
}

static bool wr_is_relationship_list(weft_remote *r, weft_component c)
{
    return wr_list_relationship(r, c) != 0;
}

/* Component c of e as JSON in the shape its name asks for: Bevy's ChildOf
 * is the parent entity itself (weft's is {"target": e}). */
static json_t *wr_value_as(weft_remote *r, weft_entity e, weft_component c, int alias,
                           wr_err *err)
{
    if (alias == WR_ALIAS_CHILD_OF) {
        weft_entity parent = weft_parent(r->world, e);
        if (!parent) {
            return wr_fail_weft(err, WEFT_ERR_NOT_FOUND, "entity %llu has no component '%s'",
                                (unsigned long long)e, WR_BEVY_CHILD_OF);
        }
        return json_integer((json_int_t)parent);
    }
    return wr_component_value(r, e, c, err);
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

/* What a world.query asks for, checked: its terms and name lists. */
typedef struct wr_qplan {
    weft_query_desc qd;
    bool matches_nothing, option_all, strict;
    json_t *comps, *option, *has, *with, *without; /* borrowed from params */
} wr_qplan;

/* Checks world.query's params (an object) and builds its terms:
 * components (AND), with (WITH), without (WITHOUT). Unknown names are an
 * error when strict; otherwise an unknown required component matches
 * nothing and an unknown optional or excluded one is ignored. */
static bool wr_query_plan(weft_remote *r, json_t *params, wr_qplan *p, wr_err *err)
{
    memset(p, 0, sizeof *p);
    if (!wr_require_object(params, err)) {
        return false;
    }
    json_t *data = json_object_get(params, "data");
    json_t *filter = json_object_get(params, "filter");
    if (data && !json_is_object(data) && !json_is_null(data)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'data' must be an object");
        return false;
    }
    if (filter && !json_is_object(filter) && !json_is_null(filter)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'filter' must be an object");
        return false;
    }
    if (!wr_get_bool(params, "strict", &p->strict, err)) {
        return false;
    }
    if (json_is_object(data)) {
        json_t *opt = json_object_get(data, "option");
        if (json_is_string(opt) && strcmp(json_string_value(opt), "all") == 0) {
            p->option_all = true;
        } else if (!wr_get_names(data, "option", &p->option, err)) {
            return false;
        }
        if (!wr_get_names(data, "components", &p->comps, err) ||
            !wr_get_names(data, "has", &p->has, err)) {
            return false;
        }
    }
    if (json_is_object(filter) && (!wr_get_names(filter, "with", &p->with, err) ||
                                   !wr_get_names(filter, "without", &p->without, err))) {
        return false;
    }
    weft_query_desc *qd = &p->qd;
    json_t *lists[3] = {p->comps, p->with, p->without};
    weft_oper opers[3] = {WEFT_OPER_AND, WEFT_OPER_WITH, WEFT_OPER_WITHOUT};
    for (int l = 0; l < 3; l++) {
        size_t i;
        json_t *n;
        json_array_foreach(lists[l], i, n) {
            weft_component c = wr_lookup(r, json_string_value(n), NULL);
            if (!c) {
                if (p->strict) {
                    wr_fail_weft(err, WEFT_ERR_UNKNOWN_COMPONENT, "unknown component '%s'",
                                 json_string_value(n));
                    return false;
                }
                p->matches_nothing |= l < 2;
                continue;
            }
            if (qd->term_count == WEFT_MAX_TERMS) {
                wr_fail_weft(err, WEFT_ERR_CAPACITY, "a query has at most %d terms",
                             WEFT_MAX_TERMS);
                return false;
            }
            weft_component_info info;
            weft_component_info_get(r->world, c, &info);
            weft_term *t = &qd->terms[qd->term_count++];
            t->id = c;
            t->oper = (opers[l] == WEFT_OPER_AND && info.size == 0) ? WEFT_OPER_WITH : opers[l];
            t->access = t->oper == WEFT_OPER_AND ? WEFT_ACCESS_READ : WEFT_ACCESS_NONE;
        }
    }
    json_t *lists2[2] = {p->option, p->has};
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *n;
        json_array_foreach(lists2[l], i, n) {
            if (p->strict && !wr_lookup(r, json_string_value(n), NULL)) {
                wr_fail_weft(err, WEFT_ERR_UNKNOWN_COMPONENT, "unknown component '%s'",
                             json_string_value(n));
                return false;
            }
        }
    }
    if (!p->matches_nothing && qd->term_count == 0) {
        /* Every entity: one optional term on any registered component. */
        weft_world_stats stats;
        weft_world_get_stats(r->world, &stats);
        if (stats.components == 0) {
            p->matches_nothing = true;
        } else {
            qd->terms[0].id = 1;
            qd->terms[0].oper = WEFT_OPER_OPTIONAL;
            qd->terms[0].access = WEFT_ACCESS_NONE;
            qd->term_count = 1;
        }
    }
    qd->flags = WEFT_QUERY_UNCACHED;
    return true;
}

/* The entities a plan matches, in iteration order (malloc'ed; *count). */
static weft_entity *wr_query_entities(weft_remote *r, const wr_qplan *p, size_t *out_count,
                                      wr_err *err)
{
    *out_count = 0;
    weft_query *q = weft_query_create(r->world, &p->qd);
    if (!q) {
        wr_fail_world(r, err, weft_last_status(r->world));
        return NULL;
    }
    weft_entity *ents = NULL;
    size_t count = 0, cap = 0;
    weft_iter it;
    weft_status st = weft_query_iter(r->world, q, &it);
    if (st != WEFT_OK) {
        weft_query_destroy(r->world, q);
        wr_fail_world(r, err, st);
        return NULL;
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
                weft_query_destroy(r->world, q);
                free(ents);
                wr_oom(err);
                return NULL;
            }
            ents = ne;
            cap = ncap;
        }
        memcpy(ents + count, es, (size_t)n * sizeof *es);
        count += (size_t)n;
    }
    weft_query_destroy(r->world, q);
    if (!ents) {
        ents = malloc(sizeof *ents); /* a valid pointer for an empty answer */
        if (!ents) {
            wr_oom(err);
            return NULL;
        }
    }
    *out_count = count;
    return ents;
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
    weft_entity *ents = NULL;
    size_t count = 0;
    wr_qplan plan;
    if (!wr_query_plan(r, params, &plan, err)) {
        goto done;
    }
    json_t *comps = plan.comps, *option = plan.option, *has = plan.has;
    bool option_all = plan.option_all, strict = plan.strict;
    result = json_array();
    if (!result) {
        wr_oom(err);
        goto done;
    }
    if (plan.matches_nothing) {
        goto done;
    }
    ents = wr_query_entities(r, &plan, &count, err);
    if (!ents) {
        goto fail;
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
                int alias = 0;
                weft_component c = wr_lookup(r, json_string_value(n), &alias);
                if (!c || !weft_has(r->world, e, c)) {
                    continue;
                }
                wr_err one = {0};
                json_t *v = wr_value_as(r, e, c, alias, &one);
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
                weft_component c = wr_lookup(r, json_string_value(n), NULL);
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

/* Bevy's hierarchy in a components object (bevy_ecs::hierarchy::ChildOf:
 * the parent entity; ::Children: the children, in order). They are taken
 * out of the object (the rest goes to weft's JSON reader), checked before
 * anything changes, and applied after the rest was read. */
typedef struct wr_hier {
    bool set_parent, set_children;
    weft_entity parent;
    weft_entity *kids;
    size_t nkids;
} wr_hier;

static void wr_hier_free(wr_hier *h)
{
    free(h->kids);
    h->kids = NULL;
}

/* *rest: comps without Bevy's hierarchy names (a new reference). e: the
 * entity written (0: one about to be spawned). */
static bool wr_hier_take(weft_remote *r, weft_entity e, json_t *comps, json_t **rest,
                         wr_hier *h, wr_err *err)
{
    memset(h, 0, sizeof *h);
    json_t *cv = json_object_get(comps, WR_BEVY_CHILD_OF);
    json_t *kv = json_object_get(comps, WR_BEVY_CHILDREN);
    if (!cv && !kv) {
        *rest = json_incref(comps);
        return true;
    }
    if (cv && !wr_get_entity(r, cv, WR_BEVY_CHILD_OF, &h->parent, err)) {
        return false;
    }
    h->set_parent = cv != NULL;
    if (kv) {
        if (!json_is_array(kv)) {
            wr_fail_weft(err, WEFT_ERR_TYPE_MISMATCH, "%s: expected an array of entities",
                         WR_BEVY_CHILDREN);
            return false;
        }
        h->set_children = true;
        h->nkids = json_array_size(kv);
        h->kids = calloc(h->nkids ? h->nkids : 1, sizeof *h->kids);
        if (!h->kids) {
            wr_oom(err);
            return false;
        }
        for (size_t i = 0; i < h->nkids; i++) {
            if (!wr_get_entity(r, json_array_get(kv, i), WR_BEVY_CHILDREN, &h->kids[i], err)) {
                wr_hier_free(h);
                return false;
            }
        }
    }
    /* no cycle: e's parent is not e nor below it; no child is e, the new
     * parent, or above it */
    weft_component child_of = weft_child_of(r->world);
    weft_entity top = h->set_parent ? h->parent : (e ? weft_parent(r->world, e) : 0);
    int32_t na = top ? weft_ancestors(r->world, top, child_of, NULL, 0) : 0;
    weft_entity *anc = calloc((size_t)(na > 0 ? na : 0) + 1, sizeof *anc);
    if (!anc) {
        wr_hier_free(h);
        wr_oom(err);
        return false;
    }
    if (na > 0) {
        weft_ancestors(r->world, top, child_of, anc, na);
    }
    bool bad = false;
    for (int32_t k = 0; k < na && h->set_parent && e && !bad; k++) {
        bad = anc[k] == e;
    }
    bad |= h->set_parent && e && h->parent == e;
    for (size_t i = 0; i < h->nkids && !bad; i++) {
        bad = h->kids[i] == e || (top && h->kids[i] == top);
        for (int32_t k = 0; k < na && !bad; k++) {
            bad = anc[k] == h->kids[i];
        }
    }
    free(anc);
    if (bad) {
        wr_hier_free(h);
        wr_fail_weft(err, WEFT_ERR_RELATIONSHIP,
                     "the hierarchy asked for would make an entity its own ancestor");
        return false;
    }
    *rest = json_copy(comps);
    if (!*rest) {
        wr_hier_free(h);
        wr_oom(err);
        return false;
    }
    json_object_del(*rest, WR_BEVY_CHILD_OF);
    json_object_del(*rest, WR_BEVY_CHILDREN);
    return true;
}

static json_t *wr_hier_apply(weft_remote *r, weft_entity e, wr_hier *h, wr_err *err)
{
    weft_status st = WEFT_OK;
    if (h->set_parent) {
        st = weft_set_parent(r->world, e, h->parent);
    }
    if (st == WEFT_OK && h->set_children) {
        /* the list becomes e's children, in its order */
        int32_t n = 0;
        const weft_entity *cur = weft_children(r->world, e, &n);
        weft_entity *old = calloc((size_t)n + 1, sizeof *old);
        if (!old) {
            wr_hier_free(h);
            return wr_oom(err);
        }
        if (n) {
            memcpy(old, cur, (size_t)n * sizeof *old);
        }
        for (int32_t i = 0; i < n && st == WEFT_OK; i++) {
            st = weft_remove_parent(r->world, old[i]);
        }
        free(old);
        for (size_t i = 0; i < h->nkids && st == WEFT_OK; i++) {
            st = weft_set_parent(r->world, h->kids[i], e);
        }
    }
    wr_hier_free(h);
    return st == WEFT_OK ? json_null() : wr_fail_world(r, err, st);
}

static json_t *m_spawn_entity(weft_remote *r, json_t *params, wr_err *err)
{
    json_t *comps, *rest;
    wr_hier h;
    if (!wr_require_object(params, err) || !wr_get_components_object(params, &comps, err) ||
        !wr_hier_take(r, 0, comps, &rest, &h, err)) {
        return NULL;
    }
    size_t len = 0;
    char *text = wr_entity_text(rest, &len);
    json_decref(rest);
    if (!text) {
        wr_hier_free(&h);
        return wr_oom(err);
    }
    weft_entity e = weft_json_spawn(r->world, text, len);
    free(text);
    if (!e) {
        wr_hier_free(&h);
        return wr_fail_world(r, err, weft_last_status(r->world));
    }
    if (!wr_hier_apply(r, e, &h, err)) {
        return NULL;
    }
    json_t *res = json_pack("{s:I}", "entity", (json_int_t)e);
    return res ? res : wr_oom(err);
}

static json_t *m_insert_components(weft_remote *r, json_t *params, wr_err *err)
{
    weft_entity e;
    json_t *comps, *rest;
    wr_hier h;
    if (!wr_require_object(params, err) ||
        !wr_get_entity(r, json_object_get(params, "entity"), "entity", &e, err) ||
        !wr_get_components_object(params, &comps, err) ||
        !wr_hier_take(r, e, comps, &rest, &h, err)) {
        return NULL;
    }
    size_t len = 0;
    char *text = wr_entity_text(rest, &len);
    json_decref(rest);
    if (!text) {
        wr_hier_free(&h);
        return wr_oom(err);
    }
    weft_status st = weft_json_read_entity(r->world, e, text, len);
    free(text);
    if (st != WEFT_OK) {
        wr_hier_free(&h);
        return wr_fail_world(r, err, st);
    }
    return wr_hier_apply(r, e, &h, err);
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
        if (wr_is_relationship_list(r, ids[i]) &&
            strcmp(json_string_value(json_array_get(names, i)), WR_BEVY_CHILDREN) != 0) {
            free(ids);
            return wr_fail_weft(err, WEFT_ERR_RELATIONSHIP,
                                "'%s' is a relationship's target list, kept by weft",
                                json_string_value(json_array_get(names, i)));
        }
    }
    for (size_t i = 0; i < n; i++) {
        weft_status st = WEFT_OK;
        if (strcmp(json_string_value(json_array_get(names, i)), WR_BEVY_CHILDREN) == 0) {
            /* Bevy's Children removed: the children lose their parent */
            int32_t nk = 0;
            const weft_entity *cur = weft_children(r->world, e, &nk);
            weft_entity *old = calloc((size_t)nk + 1, sizeof *old);
            if (!old) {
                free(ids);
                return wr_oom(err);
            }
            if (nk) {
                memcpy(old, cur, (size_t)nk * sizeof *old);
            }
            for (int32_t k = 0; k < nk && st == WEFT_OK; k++) {
                st = weft_remove_parent(r->world, old[k]);
            }
            free(old);
        } else if (weft_has(r->world, e, ids[i])) {
            st = weft_remove(r->world, e, ids[i]);
        }
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
    size_t need = 0; /* measured first, as in wr_component_value */
    weft_status st = weft_json_write_resource(r->world, c, NULL, 0, &need);
    if (st == WEFT_ERR_CAPACITY && need > r->scratch_cap) {
        char *nb = realloc(r->scratch, need);
        if (!nb) {
            return wr_oom(err);
        }
        r->scratch = nb;
        r->scratch_cap = need;
    }
    if (st == WEFT_ERR_CAPACITY) {
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
     "-> {archetypes: [{index, entities, table, components, row_bytes, bytes}], summary}"},
    {"weft.schedules", wi_schedules, false, "{names?: [name]} -> [{name, order?, systems}]"},
    {"weft.schedule", wi_schedule_info, false,
     "{schedule} -> {systems, edges, sets, ambiguities, sync_points, step_cursor, dot}"},
    {"weft.trace", wi_trace, false, "{schedule, profile?} -> {trace, max_concurrency}"},
    {"weft.schema", wi_schema, false,
     "{components?: [name]} -> {name: {name, size, fields: [{name, kind, count?, type?, "
     "values?}]}}"},
    {"weft.diagnostics", wi_diagnostics, false, "-> [{name, value, average, smoothed, ...}]"},
    {"weft.states", wi_states, false, "-> [{name, exists, value, value_name, values}]"},
    {"weft.set_state", wi_set_state, true, "{state, value: name or number} -> null"},
    {"weft.stepping", wi_stepping, true,
     "{schedule, action: on|off|step|continue} -> {stepping, cursor}"},
    {"weft.step_systems", wi_step_systems, false,
     "{schedule} -> {stepping, cursor, systems: [{node, name, position, behavior}]}"},
    {"weft.set_step_behavior", wi_set_step_behavior, true,
     "{schedule, system: node or name, behavior: default|always_run|never_run|break} -> "
     "as weft.step_systems"},
    {"registry.schema", wi_registry_schema, false,
     "{with_crates?, without_crates?, type_limit?: {with?, without?}} -> {typePath: schema}"},
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

/* What the text would build, found by one scan of its bytes before any of
 * it is parsed (parsing builds a tree in memory: checking limits on the
 * tree would come too late). Brackets and commas outside strings are
 * counted: the nesting depth, the elements of a top-level array (the
 * batch) and the cost of the values (a container weighs WR_COST_CONTAINER,
 * any other value 1). The scan stops as soon as a limit is passed. */
#define WR_COST_CONTAINER 4
#define WR_COST_MAX (1 << 17)

typedef struct wr_scan {
    int depth;        /* deepest nesting seen (past the limit: stopped) */
    size_t batch;     /* top-level array: its elements (0: empty or not an array) */
    bool is_array;
    size_t cost;
} wr_scan;

static void wr_prescan(const char *s, size_t len, int max_depth, size_t max_batch,
                       wr_scan *out)
{
    memset(out, 0, sizeof *out);
    int depth = 0;
    bool in_str = false, any = false; /* any: a value began in the current top array */
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) {
        i++;
    }
    out->is_array = i < len && s[i] == '[';
    for (; i < len; i++) {
        char ch = s[i];
        if (in_str) {
            if (ch == '\\') {
                i++;
            } else if (ch == '"') {
                in_str = false;
            }
            continue;
        }
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
            continue;
        }
        if (depth == 1 && out->is_array && ch != ']' && ch != ',' && !any) {
            any = true;
            if (++out->batch > max_batch) {
                return;
            }
        }
        if (ch == ',' && depth == 1) {
            any = false;
        }
        if (ch == '"') {
            in_str = true;
            out->cost++;
        } else if (ch == '[' || ch == '{') {
            out->cost += WR_COST_CONTAINER;
            if (++depth > out->depth) {
                out->depth = depth;
                if (depth > max_depth) {
                    return;
                }
            }
        } else if (ch == ']' || ch == '}') {
            depth--;
        } else if (ch == ',' || ch == ':') {
            continue;
        } else if (i == 0 || strchr(",:[{ \t\n\r", s[i - 1])) {
            out->cost++; /* a number or a literal begins */
        }
        if (out->cost > WR_COST_MAX) {
            return;
        }
    }
}

/* The scan's verdict: NULL, or the message refusing the text. */
static const char *wr_scan_refusal(const weft_remote *r, const wr_scan *sc, char *msg, size_t cap)
{
    if (sc->depth > r->max_depth) {
        snprintf(msg, cap, "JSON nested deeper than %d levels", (int)r->max_depth);
    } else if (sc->is_array && sc->batch > (size_t)r->max_batch) {
        snprintf(msg, cap, "a batch holds at most %d requests", (int)r->max_batch);
    } else if (sc->cost > WR_COST_MAX) {
        snprintf(msg, cap, "a request holds at most %d JSON values (%d per object or array)",
                 WR_COST_MAX, WR_COST_CONTAINER);
    } else {
        return NULL;
    }
    return msg;
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

/* ---- +watch: change ticks ----
 *
 * A watch remembers (in its etag, or in its stream) the change tick its
 * value was read at, a hash of the structure the value depends on (its
 * "shape": which entities, in which archetypes, which names resolve) and
 * a hash of the value. Before evaluating a held watch again, its probe
 * looks at change ticks only: nothing the value reads was written after
 * `since` and the shape is the same, so the value is the same and is not
 * recomputed. Otherwise the value is recomputed and compared with the
 * hash: an equal value (a write of the same bytes) is no event. Methods
 * without a probe (the weft.* ones: counters, schedules, traces) are
 * recomputed at every check. */

static uint64_t wr_mix(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h = (h ^ (uint8_t)(v >> (8 * i))) * 1099511628211ull;
    }
    return h;
}

#define WR_HASH_SEED 1469598103934665603ull

/* How the probe treats a component's values. */
enum {
    WR_PK_UNSEEN = 0,
    WR_PK_TICKS,   /* compare its changed/added ticks */
    WR_PK_TAG,     /* no value: presence is in the archetype */
    WR_PK_SOURCE,  /* a relationship source: its target goes into the shape */
    WR_PK_ALWAYS,  /* no ticks (NO_CHANGE_TICKS, a relationship's list): recompute */
    WR_PK_SKIP,    /* undescribed: never part of a value */
};

typedef struct wr_probe {
    weft_remote *r;
    uint32_t since, now;
    uint64_t shape;
    bool dirty;
    uint8_t *kinds;   /* [ncomp + 1] */
    int32_t ncomp;
} wr_probe;

static bool wr_probe_init(wr_probe *p, weft_remote *r, uint32_t since)
{
    memset(p, 0, sizeof *p);
    p->r = r;
    p->since = since;
    p->now = weft_world_change_tick(r->world);
    p->shape = WR_HASH_SEED;
    weft_world_stats st;
    weft_world_get_stats(r->world, &st);
    p->ncomp = st.components;
    p->shape = wr_mix(p->shape, (uint64_t)st.components); /* names that resolve */
    p->kinds = calloc((size_t)st.components + 1, 1);
    return p->kinds != NULL;
}

static uint8_t wr_probe_kind(wr_probe *p, weft_component c)
{
    if ((int32_t)c < 1 || (int32_t)c > p->ncomp) {
        return WR_PK_SKIP;
    }
    if (p->kinds[c] != WR_PK_UNSEEN) {
        return p->kinds[c];
    }
    weft_component_info info;
    uint8_t k = WR_PK_TICKS;
    if (weft_component_info_get(p->r->world, c, &info) != WEFT_OK) {
        k = WR_PK_SKIP;
    } else if (info.size == 0) {
        k = WR_PK_TAG;
    } else if (weft_relationship_targets(p->r->world, c)) {
        k = WR_PK_SOURCE;
    } else if (wr_is_relationship_list(p->r, c) ||
               (info.flags & WEFT_COMPONENT_NO_CHANGE_TICKS)) {
        k = WR_PK_ALWAYS;
    } else if (!weft_component_is_described(p->r->world, c)) {
        k = WR_PK_SKIP;
    }
    p->kinds[c] = k;
    return k;
}

/* e's c as the value would read it: newer ticks make the probe dirty. */
static void wr_probe_value(wr_probe *p, weft_entity e, weft_component c)
{
    switch (wr_probe_kind(p, c)) {
    case WR_PK_TICKS: {
        weft_ticks t;
        if (weft_get_ticks(p->r->world, e, c, &t) != WEFT_OK ||
            weft_tick_is_newer(t.changed, p->since, p->now) ||
            weft_tick_is_newer(t.added, p->since, p->now)) {
            p->dirty = true;
        }
        break;
    }
    case WR_PK_SOURCE: {
        const weft_entity *t = weft_get(p->r->world, e, c, sizeof *t);
        p->shape = wr_mix(p->shape, t ? *t : 0);
        break;
    }
    case WR_PK_ALWAYS:
        p->dirty = true;
        break;
    default:
        break;
    }
}

/* e itself: alive, and its archetype (what it has). */
static void wr_probe_entity(wr_probe *p, weft_entity e)
{
    int32_t arch = weft_entity_archetype(p->r->world, e);
    p->shape = wr_mix(wr_mix(p->shape, e), (uint64_t)(int64_t)arch);
}

static bool wr_probe_get_components(wr_probe *p, json_t *params)
{
    json_t *ev = json_object_get(params, "entity");
    json_t *names = json_object_get(params, "components");
    if (!json_is_integer(ev) || !json_is_array(names)) {
        return false; /* let the method report it */
    }
    weft_entity e = (weft_entity)json_integer_value(ev);
    wr_probe_entity(p, e);
    if (!weft_is_alive(p->r->world, e)) {
        return true;
    }
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n) {
        weft_component c = json_is_string(n)
                               ? wr_lookup(p->r, json_string_value(n), NULL)
                               : 0;
        if (c && weft_has(p->r->world, e, c)) {
            wr_probe_value(p, e, c);
        }
    }
    return true;
}

static bool wr_probe_query(wr_probe *p, json_t *params)
{
    json_t *empty = NULL;
    if (!params || json_is_null(params)) {
        params = empty = json_object();
    }
    wr_qplan plan;
    wr_err err = {0};
    bool ok = params && wr_query_plan(p->r, params, &plan, &err);
    if (!ok || plan.matches_nothing) {
        json_decref(empty);
        return ok;
    }
    size_t count = 0;
    weft_entity *ents = wr_query_entities(p->r, &plan, &count, &err);
    if (!ents) {
        json_decref(empty);
        return false;
    }
    weft_component named[2 * WEFT_MAX_TERMS + 32];
    int32_t nnamed = 0;
    json_t *wanted[2] = {plan.comps, plan.option};
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *n;
        json_array_foreach(wanted[l], i, n) {
            weft_component c = wr_lookup(p->r, json_string_value(n), NULL);
            if (c && nnamed < (int32_t)(sizeof named / sizeof named[0])) {
                named[nnamed++] = c;
            } else if (c) {
                p->dirty = true; /* more names than tracked: recompute */
            }
        }
    }
    p->shape = wr_mix(p->shape, count);
    for (size_t k = 0; k < count && !p->dirty; k++) {
        weft_entity e = ents[k];
        wr_probe_entity(p, e);
        if (plan.option_all) {
            weft_archetype_info ai;
            int32_t arch = weft_entity_archetype(p->r->world, e);
            if (arch >= 0 && weft_archetype_info_get(p->r->world, arch, &ai) == WEFT_OK) {
                for (int32_t j = 0; j < ai.component_count; j++) {
                    wr_probe_value(p, e, ai.components[j]);
                }
            }
        }
        for (int32_t j = 0; j < nnamed; j++) {
            if (weft_has(p->r->world, e, named[j])) {
                wr_probe_value(p, e, named[j]);
            }
        }
    }
    free(ents);
    json_decref(empty);
    return true;
}

static bool wr_probe_list_components(wr_probe *p, json_t *params)
{
    json_t *ev = json_is_object(params) ? json_object_get(params, "entity") : NULL;
    if (ev) {
        if (!json_is_integer(ev)) {
            return false;
        }
        wr_probe_entity(p, (weft_entity)json_integer_value(ev));
    }
    return true; /* names only change through registration (in the shape) */
}

static bool wr_probe_resources(wr_probe *p, json_t *params)
{
    json_t *name = json_is_object(params) ? json_object_get(params, "resource") : NULL;
    for (int32_t id = 1; id <= p->ncomp; id++) {
        weft_component c = (weft_component)id;
        bool has = weft_resource_has(p->r->world, c);
        p->shape = wr_mix(p->shape, has ? (uint64_t)id : 0u);
        if (!has || !name) {
            continue;
        }
        if (!json_is_string(name)) {
            return false;
        }
        if (wr_lookup(p->r, json_string_value(name), NULL) != c) {
            continue;
        }
        weft_ticks t;
        if (weft_resource_get_ticks(p->r->world, c, &t) != WEFT_OK ||
            weft_tick_is_newer(t.changed, p->since, p->now) ||
            weft_tick_is_newer(t.added, p->since, p->now)) {
            p->dirty = true;
        }
    }
    return true;
}

typedef bool (*wr_probe_fn)(wr_probe *p, json_t *params);

/* The probe of a reading method, NULL when it has none. */
static wr_probe_fn wr_probe_of(const char *method)
{
    static const struct {
        const char *name;
        wr_probe_fn fn;
    } probes[] = {
        {"world.get_components", wr_probe_get_components},
        {"world.query", wr_probe_query},
        {"world.list_components", wr_probe_list_components},
        {"world.get_resources", wr_probe_resources},
        {"world.list_resources", wr_probe_resources},
    };
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        if (strcmp(probes[i].name, method) == 0) {
            return probes[i].fn;
        }
    }
    return NULL;
}

/* Runs the probe of `method`: true when the value must be recomputed;
 * *shape gets the structure hash (0 without a probe). */
static bool wr_watch_probe(weft_remote *r, const char *method, json_t *params, uint32_t since,
                           uint64_t *shape)
{
    *shape = 0;
    wr_probe_fn fn = wr_probe_of(method);
    if (!fn) {
        return true;
    }
    wr_probe p;
    if (!wr_probe_init(&p, r, since)) {
        return true;
    }
    r->watch_checks++;
    bool ok = fn(&p, params);
    free(p.kinds);
    *shape = p.shape;
    return !ok || p.dirty;
}

/* FNV-1a 64 of a value's canonical text. */
static bool wr_value_hash(json_t *v, uint64_t *out)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!text) {
        return false;
    }
    uint64_t h = WR_HASH_SEED;
    for (const char *p = text; *p; p++) {
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    }
    free(text);
    *out = h;
    return true;
}

/* etag: "<since>.<shape>.<hash>" in hex (8, 16, 16 digits). */
static void wr_etag_format(const wr_watch *w, char out[48])
{
    snprintf(out, 48, "%08x.%016llx.%016llx", (unsigned)w->since,
             (unsigned long long)w->shape, (unsigned long long)w->hash);
}

static bool wr_etag_parse(const char *s, wr_watch *w)
{
    if (strlen(s) != 42 || s[8] != '.' || s[25] != '.') {
        return false;
    }
    for (int i = 0; i < 42; i++) {
        if (i != 8 && i != 25 && !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
            return false;
        }
    }
    unsigned since;
    unsigned long long shape, hash;
    if (sscanf(s, "%8x.%16llx.%16llx", &since, &shape, &hash) != 3) {
        return false;
    }
    w->since = since;
    w->shape = shape;
    w->hash = hash;
    return true;
}

/* ---- bevy_remote's watches ----
 *
 * world.get_components+watch and world.list_components+watch answer, as
 * bevy_remote does, with what changed since the previous answer, streamed:
 * get_components: {components: {name: value} (added or changed), removed:
 * [name], errors: {name: error}} ({components, removed} when strict);
 * list_components: {added: [name], removed: [name]}. Judged by change
 * ticks as change detection judges them (a write of the same bytes is a
 * change); nothing new: no answer. The first answer holds everything
 * present. */

static bool wr_newer(weft_remote *r, uint32_t tick, uint32_t since)
{
    return weft_tick_is_newer(tick, since, weft_world_change_tick(r->world));
}

static json_t *wr_watch_get_components(weft_remote *r, json_t *params, wr_watch *ws,
                                       bool *nothing, wr_err *err)
{
    weft_entity e;
    json_t *names;
    bool strict;
    if (!wr_require_object(params, err) ||
        !wr_get_entity(r, json_object_get(params, "entity"), "entity", &e, err) ||
        !wr_get_names(params, "components", &names, err) ||
        !wr_get_bool(params, "strict", &strict, err)) {
        return NULL;
    }
    if (!names) {
        return wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'components' is required");
    }
    json_t *comps = json_object(), *removed = json_array(), *errors = json_object();
    json_t *result = strict ? json_pack("{s:O,s:O}", "components", comps, "removed", removed)
                            : json_pack("{s:O,s:O,s:O}", "components", comps, "removed",
                                        removed, "errors", errors);
    json_decref(comps);
    json_decref(removed);
    json_decref(errors);
    if (!result) {
        return wr_oom(err);
    }
    uint64_t bits = 0;
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n) {
        const char *name = json_string_value(n);
        int alias = 0;
        weft_component c = wr_lookup(r, name, &alias);
        if (!c) {
            wr_err one = {0};
            wr_fail_weft(&one, WEFT_ERR_UNKNOWN_COMPONENT, "unknown component '%s'", name);
            if (strict) {
                json_decref(result);
                *err = one;
                return NULL;
            }
            wr_bevy_code(&one, "world.get_components");
            json_object_set_new(errors, name, wr_error_object(&one));
            continue;
        }
        bool present = alias == WR_ALIAS_CHILD_OF ? weft_parent(r->world, e) != 0
                                                  : weft_has(r->world, e, c);
        uint64_t bit = i < 64 ? 1ull << i : 0;
        if (!present) {
            if (ws->primed && (ws->present_bits & bit)) {
                json_array_append_new(removed, json_string(name));
            }
            continue;
        }
        bits |= bit;
        weft_ticks t;
        bool changed = !ws->primed || !(ws->present_bits & bit) ||
                       weft_get_ticks(r->world, e, c, &t) != WEFT_OK ||
                       wr_newer(r, t.changed, ws->since) || wr_newer(r, t.added, ws->since);
        if (!changed) {
            continue;
        }
        wr_err one = {0};
        json_t *v = wr_value_as(r, e, c, alias, &one);
        if (!v) {
            if (strict || one.code == WEFT_REMOTE_INTERNAL_ERROR) {
                json_decref(result);
                *err = one;
                return NULL;
            }
            wr_bevy_code(&one, "world.get_components");
            json_object_set_new(errors, name, wr_error_object(&one));
            continue;
        }
        json_object_set_new(comps, name, v);
    }
    ws->present_bits = bits;
    *nothing = json_object_size(comps) == 0 && json_array_size(removed) == 0;
    return result;
}

static int wr_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static json_t *wr_watch_list_components(weft_remote *r, json_t *params, wr_watch *ws,
                                        bool *nothing, wr_err *err)
{
    weft_entity e;
    if (!wr_require_object(params, err) ||
        !wr_get_entity(r, json_object_get(params, "entity"), "entity", &e, err)) {
        return NULL;
    }
    json_t *added = json_array(), *removed = json_array();
    json_t *result = json_pack("{s:O,s:O}", "added", added, "removed", removed);
    json_decref(added);
    json_decref(removed);
    if (!result) {
        return wr_oom(err);
    }
    weft_archetype_info ai;
    memset(&ai, 0, sizeof ai);
    int32_t arch = weft_entity_archetype(r->world, e);
    int32_t n = 0;
    if (arch >= 0 && weft_archetype_info_get(r->world, arch, &ai) == WEFT_OK) {
        n = ai.component_count;
    }
    uint32_t *now = malloc(((size_t)n + 1) * sizeof *now);
    if (!now) {
        json_decref(result);
        return wr_oom(err);
    }
    for (int32_t k = 0; k < n; k++) {
        weft_component c = ai.components[k];
        now[k] = (uint32_t)c;
        weft_ticks t;
        bool was = ws->primed && ws->prev_ids &&
                   bsearch(&now[k], ws->prev_ids, (size_t)ws->prev_n, sizeof *now, wr_cmp_u32);
        if (!was || (weft_get_ticks(r->world, e, c, &t) == WEFT_OK &&
                     wr_newer(r, t.added, ws->since))) {
            json_array_append_new(added, json_string(wr_component_name(r, c)));
        }
    }
    qsort(now, (size_t)n, sizeof *now, wr_cmp_u32);
    for (int32_t k = 0; ws->primed && k < ws->prev_n; k++) {
        if (!bsearch(&ws->prev_ids[k], now, (size_t)n, sizeof *now, wr_cmp_u32)) {
            json_array_append_new(
                removed, json_string(wr_component_name(r, (weft_component)ws->prev_ids[k])));
        }
    }
    free(ws->prev_ids);
    ws->prev_ids = now;
    ws->prev_n = n;
    *nothing = json_array_size(added) == 0 && json_array_size(removed) == 0;
    return result;
}

static bool wr_is_bevy_watch(const char *name)
{
    return strcmp(name, "world.get_components+watch") == 0 ||
           strcmp(name, "world.list_components+watch") == 0;
}

/* bevy_remote's error codes for its world.* methods (data keeps weft's
 * status): -23401 entity not found, -23402 component error, -23403
 * component not present, -23404 self reparent, -23501 resource error,
 * -23502 resource not present. A write to a read-only remote keeps weft's
 * code. */
static void wr_bevy_code(wr_err *err, const char *method)
{
    if (err->status == WEFT_OK || err->status == WEFT_ERR_ACCESS_VIOLATION) {
        return;
    }
    bool res = strstr(method, "_resources") != NULL;
    switch (err->status) {
    case WEFT_ERR_STALE_ENTITY:
    case WEFT_ERR_INVALID_ENTITY:
        err->code = res ? -23501 : -23401;
        break;
    case WEFT_ERR_NOT_FOUND:
        /* absent ("... has no ...", "... is not present") or a bad name
         * inside a value or path (a component error) */
        if (strstr(err->msg, " has no ") || strstr(err->msg, "not present")) {
            err->code = res ? -23502 : -23403;
        } else {
            err->code = res ? -23501 : -23402;
        }
        break;
    case WEFT_ERR_RELATIONSHIP:
        err->code = strncmp(method, "world.reparent_entities", 23) == 0 ? -23404 : -23402;
        break;
    default:
        err->code = res ? -23501 : -23402;
        break;
    }
}

/* Answers one request object; NULL for a notification (or OOM: *oom).
 * `ws` is the +watch state of a held request or a stream (NULL: read
 * from the etag param each time). */
static json_t *wr_one(weft_remote *r, json_t *req, bool may_hold, wr_watch *ws, int *hold,
                      int *oom)
{
    wr_err err = {0};
    json_t *id = NULL;
    json_t *out = NULL;
    wr_watch local = {0};
    const char *called = NULL; /* the method asked for (error codes) */
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
     * poll, or a stream) until the value changes. */
    const char *mname = json_string_value(method);
    called = mname;
    size_t mlen = strlen(mname);
    bool watch = mlen > 6 && strcmp(mname + mlen - 6, "+watch") == 0;
    bool bevy_watch = watch && wr_is_bevy_watch(mname);
    if (watch) {
        mlen -= 6;
    }
    /* weft's etag watches are weft.<method>+watch: weft's own reading
     * methods, and world.<method> as weft.<method> (weft.query+watch);
     * the world.*+watch names are bevy_remote's (two of them) */
    char alias[64];
    if (watch && !bevy_watch && strncmp(mname, "weft.", 5) == 0 && mlen - 5 < 40) {
        snprintf(alias, sizeof alias, "world.%.*s", (int)(mlen - 5), mname + 5);
    } else {
        alias[0] = '\0';
    }
    const wr_method *m = NULL;
    for (size_t i = 0; i < WR_METHOD_COUNT; i++) {
        const char *mn = wr_methods[i].name;
        if (((strlen(mn) == mlen && strncmp(mn, mname, mlen) == 0) ||
             (alias[0] && strcmp(mn, alias) == 0)) &&
            !(watch && wr_methods[i].writes) &&
            !(watch && !bevy_watch && strncmp(mname, "world.", 6) == 0)) {
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
    if (bevy_watch) {
        if (r->in_batch) {
            wr_fail_code(&err, WEFT_REMOTE_INVALID_REQUEST,
                         "%s is a stream and cannot be part of a batch", mname);
            goto error;
        }
        if (!ws) {
            ws = &local;
        }
        uint32_t since = wr_watch_since(r);
        bool nothing = false;
        json_t *result = strcmp(mname, "world.get_components+watch") == 0
                             ? wr_watch_get_components(r, params, ws, &nothing, &err)
                             : wr_watch_list_components(r, params, ws, &nothing, &err);
        free(local.prev_ids);
        r->watch_evals++;
        if (!result) {
            /* an error is news once, until the answer changes */
            json_t *eo = wr_error_object(&err);
            uint64_t h = 0;
            bool hashed = eo && wr_value_hash(eo, &h);
            json_decref(eo);
            bool again = ws->failed && hashed && h == ws->hash;
            ws->failed = true;
            ws->hash = h;
            if (may_hold && again) {
                r->requests--;
                *hold = 1;
                return NULL;
            }
            goto error;
        }
        ws->failed = false;
        ws->since = since;
        ws->primed = true;
        if (may_hold && nothing) {
            json_decref(result);
            r->requests--;
            *hold = 1;
            return NULL;
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
    }
    json_t *base_params = params;
    if (watch) {
        if (!ws) {
            ws = &local;
        }
        json_t *etag_in = json_is_object(params) ? json_object_get(params, "etag") : NULL;
        if (etag_in && !json_is_string(etag_in)) {
            wr_fail_code(&err, WEFT_REMOTE_INVALID_PARAMS, "'etag' must be a string");
            goto error;
        }
        if (!ws->loaded) {
            ws->loaded = true;
            /* an etag that is not one of ours: answer at once */
            ws->primed = etag_in && wr_etag_parse(json_string_value(etag_in), ws);
        }
        if (etag_in) {
            base_params = json_copy(params);
            if (!base_params) {
                *oom = 1;
                return NULL;
            }
            json_object_del(base_params, "etag");
        }
    }
    uint32_t since = 0;
    uint64_t shape = 0;
    if (watch) {
        since = wr_watch_since(r);
        bool dirty = wr_watch_probe(r, m->name, base_params, ws->since, &shape);
        bool same = !dirty && shape == ws->shape;
        if (may_hold && ws->primed && (same || r->eval_left <= 0)) {
            /* nothing it reads was written since: the same value; or
             * this poll's re-evaluations are spent: checked next poll */
            if (base_params != params) {
                json_decref(base_params);
            }
            r->requests--; /* counted when it is answered */
            *hold = 1;
            return NULL;
        }
        if (may_hold && ws->primed) {
            r->eval_left--;
        }
        r->watch_evals++;
    }
    json_t *result = m->fn(r, base_params, &err);
    if (base_params != params) {
        json_decref(base_params);
    }
    if (watch) {
        /* the value (or the error) decides whether there is news */
        json_t *eo = result ? NULL : wr_error_object(&err);
        uint64_t h = 0;
        bool hashed = wr_value_hash(result ? result : eo, &h);
        json_decref(eo);
        if (!hashed) {
            json_decref(result);
            *oom = 1;
            return NULL;
        }
        bool same = ws->primed && h == ws->hash;
        ws->since = since;
        ws->shape = shape;
        ws->hash = h;
        ws->primed = true;
        if (may_hold && same) {
            json_decref(result);
            r->requests--;
            *hold = 1;
            return NULL;
        }
    }
    if (!result) {
        goto error;
    }
    if (watch) {
        char etag[48];
        wr_etag_format(ws, etag);
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
    if (called && strncmp(called, "world.", 6) == 0) {
        wr_bevy_code(&err, called);
    }
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
                    size_t *out_len, int *oom, wr_watch *watch)
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
    if (memchr(text, '\0', len)) {
        r->requests++;
        r->errors++;
        char *s = wr_rpc_error_text(WEFT_REMOTE_PARSE_ERROR, "parse error: a NUL byte in the text",
                                    out_len);
        *oom = !s;
        return s;
    }
    wr_scan sc;
    wr_prescan(text, len, r->max_depth, (size_t)r->max_batch, &sc);
    char why[128];
    if (wr_scan_refusal(r, &sc, why, sizeof why)) {
        r->requests++;
        r->errors++;
        char *s = wr_rpc_error_text(WEFT_REMOTE_INVALID_REQUEST, why, out_len);
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
        r->in_batch = true;
        for (size_t i = 0; i < n && !*oom; i++) {
            int ignore = 0;
            json_t *one = wr_one(r, json_array_get(doc, i), false, NULL, &ignore, oom);
            if (one) {
                json_array_append_new(out, one);
            }
        }
        r->in_batch = false;
        if (json_array_size(out) == 0) {
            json_decref(out);
            out = NULL;
        }
    } else {
        out = wr_one(r, doc, may_hold, watch, hold, oom);
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

char *wr_rpc_stream(weft_remote *r, wr_stream *st, size_t *out_len, bool *ends, int *oom)
{
    *ends = false;
    *oom = 0;
    *out_len = 0;
    bool single_watch = false;
    wr_scan sc;
    char msg[128];
    if (st->len <= (size_t)r->max_request_bytes &&
        (wr_prescan(st->body, st->len, r->max_depth, (size_t)r->max_batch, &sc),
         !wr_scan_refusal(r, &sc, msg, sizeof msg))) {
        json_error_t jerr;
        json_t *doc = json_loadb(st->body, st->len, 0, &jerr);
        json_t *m = json_is_object(doc) ? json_object_get(doc, "method") : NULL;
        if (json_is_string(m) && json_object_get(doc, "id")) {
            const char *name = json_string_value(m);
            size_t n = strlen(name);
            single_watch = n > 6 && strcmp(name + n - 6, "+watch") == 0;
        }
        json_decref(doc);
    }
    int hold = 0;
    /* held only once the client has a value (an etag, or an event) */
    char *text = wr_rpc_handle(r, st->body, st->len, single_watch, &hold,
                               out_len, oom, single_watch ? &st->watch : NULL);
    if (hold || *oom) {
        return NULL;
    }
    /* Anything but a +watch with an id (an error, a batch, a plain
     * method) is answered once and ends the stream; so does a watch whose
     * answer is an error that is not about the world (bad params). */
    if (!single_watch || !text) {
        *ends = true;
    } else {
        /* jansson keeps insertion order: an error response starts so */
        static const char prefix[] = "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-326";
        *ends = strncmp(text, prefix, sizeof prefix - 1) == 0;
    }
    return text;
}

/* src/remote/rpc_common.c - what every JSON-RPC method uses: errors,
 * parameters, component values, the response text.
 * SPDX-License-Identifier: MIT
 */
#include "rpc_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ---- */

json_t *wr_fail_code(wr_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    err->code = code;
    err->status = WEFT_OK;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return NULL;
}

json_t *wr_fail_weft(wr_err *err, weft_status st, const char *fmt, ...)
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
json_t *wr_fail_world(weft_remote *r, wr_err *err, weft_status st)
{
    if (st == WEFT_OK) {
        st = WEFT_ERR_INTERNAL;
    }
    return wr_fail_weft(err, st, "%s", weft_last_error(r->world));
}

json_t *wr_oom(wr_err *err)
{
    return wr_fail_code(err, WEFT_REMOTE_INTERNAL_ERROR, "out of memory");
}

/* ---- parameters ---- */

bool wr_get_entity(weft_remote *r, json_t *v, const char *what, weft_entity *out,
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

/* A component by name, Bevy's hierarchy paths included (0: unknown);
 * *alias (may be NULL) says which shape the name asks for. */
weft_component wr_lookup(weft_remote *r, const char *name, int *alias)
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

bool wr_get_component(weft_remote *r, json_t *v, const char *what, weft_component *out,
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
bool wr_get_names(json_t *params, const char *key, json_t **out, wr_err *err)
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

bool wr_get_bool(json_t *params, const char *key, bool *out, wr_err *err)
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

bool wr_require_object(json_t *params, wr_err *err)
{
    if (!json_is_object(params)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "params must be an object");
        return false;
    }
    return true;
}

/* ---- values ---- */

const char *wr_component_name(weft_remote *r, weft_component c)
{
    weft_component_info info;
    return weft_component_info_get(r->world, c, &info) == WEFT_OK ? info.name : "?";
}


/* Component c of e as JSON: null for a tag (a unit struct), the sources
 * for a relationship's target list (an array of entities), the
 * description's JSON otherwise. NULL with err set when e lacks c or c is
 * not described. */
json_t *wr_component_value(weft_remote *r, weft_entity e, weft_component c, wr_err *err)
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

json_t *wr_error_object(const wr_err *err)
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
char *wr_dump(json_t *o, size_t *out_len)
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

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
#include "rpc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef json_t *(*wr_method_fn)(weft_remote *r, json_t *params, wr_err *err);

typedef struct wr_method {
    const char *name;
    wr_method_fn fn;
    bool writes;
    const char *summary;
} wr_method;

static json_t *m_discover(weft_remote *r, json_t *params, wr_err *err);

static const wr_method wr_methods[] = {
    {"world.get_components", wr_world_get_components, false,
     "{entity, components: [name], strict?} -> {components: {name: value}, errors: {name: error}}"},
    {"world.query", wr_world_query, false,
     "{data?: {components?, option?: [name] | \"all\", has?}, filter?: {with?, without?}, "
     "strict?} -> [{entity, components, has?}]"},
    {"world.spawn_entity", wr_world_spawn_entity, true, "{components: {name: value}} -> {entity}"},
    {"world.insert_components", wr_world_insert_components, true,
     "{entity, components: {name: value}} -> null"},
    {"world.remove_components", wr_world_remove_components, true,
     "{entity, components: [name]} -> null"},
    {"world.despawn_entity", wr_world_despawn_entity, true, "{entity} -> null"},
    {"world.reparent_entities", wr_world_reparent_entities, true,
     "{entities: [entity], parent?: entity} -> null"},
    {"world.list_components", wr_world_list_components, false, "{entity}? -> [name]"},
    {"world.mutate_components", wr_world_mutate_components, true,
     "{entity, component, path, value} -> null"},
    {"world.get_resources", wr_world_get_resources, false, "{resource} -> {value}"},
    {"world.insert_resources", wr_world_insert_resources, true, "{resource, value} -> null"},
    {"world.remove_resources", wr_world_remove_resources, true, "{resource} -> null"},
    {"world.mutate_resources", wr_world_mutate_resources, true, "{resource, path, value} -> null"},
    {"world.list_resources", wr_world_list_resources, false, "-> [name]"},
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

/* The outcome of one step of wr_one. */
enum { WR_GO = 0, WR_HOLD, WR_ERROR, WR_OOM };

/* The request object's members: jsonrpc "2.0", a string method, an id
 * (string, number or null; absent: a notification) and params (object,
 * array or null, or absent). False with err set (and *id NULL when it is
 * the id that is wrong). */
static bool wr_check_envelope(json_t *req, json_t **id, json_t **method, json_t **params,
                              wr_err *err)
{
    if (!json_is_object(req)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_REQUEST, "a request must be an object");
        return false;
    }
    *id = json_object_get(req, "id");
    if (*id && !json_is_string(*id) && !json_is_number(*id) && !json_is_null(*id)) {
        *id = NULL;
        wr_fail_code(err, WEFT_REMOTE_INVALID_REQUEST, "'id' must be a string, number or null");
        return false;
    }
    json_t *ver = json_object_get(req, "jsonrpc");
    if (!json_is_string(ver) || strcmp(json_string_value(ver), "2.0") != 0) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_REQUEST, "'jsonrpc' must be \"2.0\"");
        return false;
    }
    *method = json_object_get(req, "method");
    if (!json_is_string(*method)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_REQUEST, "'method' must be a string");
        return false;
    }
    *params = json_object_get(req, "params");
    if (*params && !json_is_object(*params) && !json_is_array(*params) &&
        !json_is_null(*params)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_REQUEST, "'params' must be an object or array");
        return false;
    }
    return true;
}

/* The method `mname` asks for, NULL when there is none. "<method>+watch"
 * (a reading method) sets *out_watch: the answer is {value, etag}, and
 * given the etag of the previous answer the request is held (long poll,
 * or a stream) until the value changes; *out_bevy_watch for the two
 * world.*+watch streams of bevy_remote. */
static const wr_method *wr_find_method(const char *mname, bool *out_watch,
                                       bool *out_bevy_watch)
{
    size_t mlen = strlen(mname);
    bool watch = mlen > 6 && strcmp(mname + mlen - 6, "+watch") == 0;
    bool bevy_watch = watch && wr_is_bevy_watch(mname);
    if (watch) {
        mlen -= 6;
    }
    *out_watch = watch;
    *out_bevy_watch = bevy_watch;
    /* weft's etag watches are weft.<method>+watch: weft's own reading
     * methods, and world.<method> as weft.<method> (weft.query+watch);
     * the world.*+watch names are bevy_remote's (two of them) */
    char alias[64];
    if (watch && !bevy_watch && strncmp(mname, "weft.", 5) == 0 && mlen - 5 < 40) {
        snprintf(alias, sizeof alias, "world.%.*s", (int)(mlen - 5), mname + 5);
    } else {
        alias[0] = '\0';
    }
    for (size_t i = 0; i < WR_METHOD_COUNT; i++) {
        const char *mn = wr_methods[i].name;
        if (((strlen(mn) == mlen && strncmp(mn, mname, mlen) == 0) ||
             (alias[0] && strcmp(mn, alias) == 0)) &&
            !(watch && wr_methods[i].writes) &&
            !(watch && !bevy_watch && strncmp(mname, "world.", 6) == 0)) {
            return &wr_methods[i];
        }
    }
    return NULL;
}

/* One evaluation of a bevy_remote watch (world.get_components+watch,
 * world.list_components+watch): WR_GO with *out the news, WR_HOLD when
 * there is none (or the same error as last time), WR_ERROR. */
static int wr_bevy_watch_eval(weft_remote *r, const char *mname, json_t *params, bool may_hold,
                              wr_watch *ws, json_t **out, wr_err *err)
{
    uint32_t since = wr_watch_since(r);
    bool nothing = false;
    json_t *result = strcmp(mname, "world.get_components+watch") == 0
                         ? wr_watch_get_components(r, params, ws, &nothing, err)
                         : wr_watch_list_components(r, params, ws, &nothing, err);
    r->watch_evals++;
    if (!result) {
        /* an error is news once, until the answer changes */
        json_t *eo = wr_error_object(err);
        uint64_t h = 0;
        bool hashed = eo && wr_value_hash(eo, &h);
        json_decref(eo);
        bool again = ws->failed && hashed && h == ws->hash;
        ws->failed = true;
        ws->hash = h;
        return may_hold && again ? WR_HOLD : WR_ERROR;
    }
    ws->failed = false;
    ws->since = since;
    ws->primed = true;
    if (may_hold && nothing) {
        json_decref(result);
        return WR_HOLD;
    }
    *out = result;
    return WR_GO;
}

/* A weft "+watch": the params without their "etag" (*base: a copy when
 * there was one, else params itself) and the watch loaded from that etag
 * on first sight. WR_GO, WR_ERROR or WR_OOM. */
static int wr_watch_params(json_t *params, wr_watch *ws, json_t **base, wr_err *err)
{
    json_t *etag_in = json_is_object(params) ? json_object_get(params, "etag") : NULL;
    if (etag_in && !json_is_string(etag_in)) {
        wr_fail_code(err, WEFT_REMOTE_INVALID_PARAMS, "'etag' must be a string");
        return WR_ERROR;
    }
    if (!ws->loaded) {
        ws->loaded = true;
        /* an etag that is not one of ours: answer at once */
        ws->primed = etag_in && wr_etag_parse(json_string_value(etag_in), ws);
    }
    if (etag_in) {
        *base = json_copy(params);
        if (!*base) {
            return WR_OOM;
        }
        json_object_del(*base, "etag");
    }
    return WR_GO;
}

/* Before a weft "+watch" evaluates its method: WR_HOLD when nothing it
 * reads was written since the last answer (the same value), or when this
 * poll's re-evaluations are spent (checked next poll); else WR_GO with
 * the tick and shape the value is read at. */
static int wr_watch_before(weft_remote *r, const wr_method *m, json_t *params, bool may_hold,
                           wr_watch *ws, uint32_t *since, uint64_t *shape)
{
    *since = wr_watch_since(r);
    bool dirty = wr_watch_probe(r, m->name, params, ws->since, shape);
    bool same = !dirty && *shape == ws->shape;
    if (may_hold && ws->primed && (same || r->eval_left <= 0)) {
        return WR_HOLD;
    }
    if (may_hold && ws->primed) {
        r->eval_left--;
    }
    r->watch_evals++;
    return WR_GO;
}

/* After a weft "+watch" evaluated its method: the value (or the error)
 * decides whether there is news. WR_HOLD when it is the last answer's,
 * WR_OOM, else WR_GO with the watch at this value. */
static int wr_watch_after(json_t *result, const wr_err *err, bool may_hold, wr_watch *ws,
                          uint32_t since, uint64_t shape)
{
    json_t *eo = result ? NULL : wr_error_object(err);
    uint64_t h = 0;
    bool hashed = wr_value_hash(result ? result : eo, &h);
    json_decref(eo);
    if (!hashed) {
        return WR_OOM;
    }
    bool same = ws->primed && h == ws->hash;
    ws->since = since;
    ws->shape = shape;
    ws->hash = h;
    ws->primed = true;
    return may_hold && same ? WR_HOLD : WR_GO;
}

/* The success response carrying `result` (taken); NULL for a
 * notification, or out of memory (*oom). */
static json_t *wr_response_result(json_t *result, json_t *id, bool notification, int *oom)
{
    if (notification) {
        json_decref(result);
        return NULL;
    }
    json_t *out = json_pack("{s:s,s:o,s:O}", "jsonrpc", "2.0", "result", result, "id", id);
    if (!out) {
        *oom = 1;
    }
    return out;
}

/* Answers one request object; NULL for a notification (or OOM: *oom).
 * `ws` is the +watch state of a held request or a stream (NULL: read
 * from the etag param each time). */
static json_t *wr_one(weft_remote *r, json_t *req, bool may_hold, wr_watch *ws, int *hold,
                      int *oom)
{
    wr_err err = {0};
    json_t *id = NULL;
    json_t *method = NULL;
    json_t *params = NULL;
    json_t *out = NULL;
    wr_watch local = {0};
    const char *called = NULL; /* the method asked for (error codes) */
    r->requests++;
    if (!wr_check_envelope(req, &id, &method, &params, &err)) {
        goto error;
    }
    bool notification = id == NULL;
    const char *mname = json_string_value(method);
    called = mname;
    bool watch;
    bool bevy_watch;
    const wr_method *m = wr_find_method(mname, &watch, &bevy_watch);
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
    if (watch && !ws) {
        ws = &local;
    }
    if (bevy_watch) {
        if (r->in_batch) {
            wr_fail_code(&err, WEFT_REMOTE_INVALID_REQUEST,
                         "%s is a stream and cannot be part of a batch", mname);
            goto error;
        }
        json_t *result = NULL;
        int step = wr_bevy_watch_eval(r, mname, params, may_hold, ws, &result, &err);
        free(local.prev_ids);
        if (step == WR_HOLD) {
            r->requests--;
            *hold = 1;
            return NULL;
        }
        if (step == WR_ERROR) {
            goto error;
        }
        return wr_response_result(result, id, notification, oom);
    }
    json_t *base_params = params;
    uint32_t since = 0;
    uint64_t shape = 0;
    if (watch) {
        int step = wr_watch_params(params, ws, &base_params, &err);
        if (step == WR_ERROR) {
            goto error;
        }
        if (step == WR_OOM) {
            *oom = 1;
            return NULL;
        }
        if (wr_watch_before(r, m, base_params, may_hold, ws, &since, &shape) == WR_HOLD) {
            if (base_params != params) {
                json_decref(base_params);
            }
            r->requests--; /* counted when it is answered */
            *hold = 1;
            return NULL;
        }
    }
    json_t *result = m->fn(r, base_params, &err);
    if (base_params != params) {
        json_decref(base_params);
    }
    if (watch) {
        int step = wr_watch_after(result, &err, may_hold, ws, since, shape);
        if (step != WR_GO) {
            json_decref(result);
            if (step == WR_OOM) {
                *oom = 1;
            } else {
                r->requests--;
                *hold = 1;
            }
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
    return wr_response_result(result, id, notification, oom);
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

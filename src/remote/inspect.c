/* src/remote/inspect.c - weft's own remote methods ("weft." prefix): world
 * counters, archetypes and fragmentation, schedules with their systems,
 * edges, ambiguities and timings, the last run's trace, diagnostics,
 * states and stepping control. Everything goes through weft.h's
 * inspection calls. Driver thread only.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote_inspect.h"

static json_t *wi_params_error(wr_err *err, const char *msg)
{
    err->code = WEFT_REMOTE_INVALID_PARAMS;
    err->status = WEFT_OK;
    snprintf(err->msg, sizeof err->msg, "%s", msg);
    return NULL;
}

static json_t *wi_weft_error(wr_err *err, weft_status st, const char *msg, const char *name)
{
    err->code = WEFT_REMOTE_WEFT_ERROR - (int)st;
    err->status = st;
    snprintf(err->msg, sizeof err->msg, msg, name);
    return NULL;
}

static const char *wi_comp_name(weft_remote *r, weft_component c)
{
    weft_component_info info;
    return weft_component_info_get(r->world, c, &info) == WEFT_OK ? info.name : "?";
}

json_t *wi_world_stats(weft_remote *r, json_t *params, wr_err *err)
{
    (void)params;
    (void)err;
    weft_world_stats s;
    weft_world_get_stats(r->world, &s);
    return json_pack("{s:I,s:I,s:i,s:i,s:i,s:i,s:i,s:i,s:I}", "live_entities",
                     (json_int_t)s.live_entities, "live_bytes", (json_int_t)s.live_bytes,
                     "archetypes", s.archetypes, "tables", s.tables, "components", s.components,
                     "resources", s.resources, "entity_records", s.entity_records,
                     "pending_reserved", s.pending_reserved, "change_tick",
                     (json_int_t)weft_world_change_tick(r->world));
}

/* Every archetype with its entity count and component names, and a
 * fragmentation summary: how many archetypes hold few entities. */
json_t *wi_archetypes(weft_remote *r, json_t *params, wr_err *err)
{
    (void)params;
    (void)err;
    weft_world_stats s;
    weft_world_get_stats(r->world, &s);
    json_t *list = json_array();
    int32_t empty = 0, small = 0;
    for (int32_t i = 0; i < s.archetypes; i++) {
        weft_archetype_info ai;
        if (weft_archetype_info_get(r->world, i, &ai) != WEFT_OK) {
            continue;
        }
        json_t *names = json_array();
        size_t row = 0; /* component bytes of one entity */
        for (int32_t k = 0; k < ai.component_count; k++) {
            json_array_append_new(names, json_string(wi_comp_name(r, ai.components[k])));
            weft_component_info info;
            if (weft_component_info_get(r->world, ai.components[k], &info) == WEFT_OK) {
                row += info.size;
            }
        }
        empty += ai.entity_count == 0;
        small += ai.entity_count > 0 && ai.entity_count < 8;
        json_array_append_new(list, json_pack("{s:i,s:i,s:i,s:o,s:I,s:I}", "index", i,
                                              "entities", ai.entity_count, "table", ai.table,
                                              "components", names, "row_bytes",
                                              (json_int_t)row, "bytes",
                                              (json_int_t)(row * (size_t)ai.entity_count)));
    }
    return json_pack("{s:o,s:{s:i,s:i,s:i,s:I}}", "archetypes", list, "summary", "count",
                     s.archetypes, "empty", empty, "below_8_entities", small, "entities",
                     (json_int_t)s.live_entities);
}

/* The schedules the remote knows: the app's labels in run order, or the
 * names given in params.names. */
json_t *wi_schedules(weft_remote *r, json_t *params, wr_err *err)
{
    json_t *out = json_array();
    json_t *names = json_is_object(params) ? json_object_get(params, "names") : NULL;
    if (names) {
        if (!json_is_array(names)) {
            json_decref(out);
            return wi_params_error(err, "'names' must be an array of schedule names");
        }
        size_t i;
        json_t *n;
        json_array_foreach(names, i, n) {
            if (json_is_string(n) && weft_schedule_lookup(r->world, json_string_value(n))) {
                json_array_append_new(out, json_pack("{s:s}", "name", json_string_value(n)));
            }
        }
        return out;
    }
    if (!r->app) {
        return out;
    }
    static const struct {
        weft_app_order order;
        const char *name;
    } orders[] = {{WEFT_APP_ORDER_STARTUP, "startup"},
                  {WEFT_APP_ORDER_MAIN, "main"},
                  {WEFT_APP_ORDER_FIXED, "fixed"}};
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        int32_t n = weft_app_label_count(r->app, orders[o].order);
        for (int32_t i = 0; i < n; i++) {
            const char *label = weft_app_label(r->app, orders[o].order, i);
            weft_schedule *s = label ? weft_schedule_lookup(r->world, label) : NULL;
            if (!s) {
                continue;
            }
            json_array_append_new(out, json_pack("{s:s,s:s,s:i,s:b}", "name", label, "order",
                                                 orders[o].name, "systems",
                                                 weft_schedule_node_count(s), "stepping",
                                                 weft_schedule_is_stepping(s)));
        }
    }
    return out;
}

static weft_schedule *wi_schedule(weft_remote *r, json_t *params, wr_err *err)
{
    json_t *name = json_is_object(params) ? json_object_get(params, "schedule") : NULL;
    if (!json_is_string(name)) {
        wi_params_error(err, "'schedule' must be a schedule name");
        return NULL;
    }
    weft_schedule *s = weft_schedule_lookup(r->world, json_string_value(name));
    if (!s) {
        wi_weft_error(err, WEFT_ERR_NOT_FOUND, "no schedule '%s'", json_string_value(name));
    }
    return s;
}

/* One schedule: systems in built order with their stats, direct edges,
 * ambiguities, sync points, and its Graphviz DOT (sets as clusters). */
json_t *wi_schedule_info(weft_remote *r, json_t *params, wr_err *err)
{
    weft_schedule *s = wi_schedule(r, params, err);
    if (!s) {
        return NULL;
    }
    int32_t n = weft_schedule_node_count(s);
    json_t *systems = json_array();
    json_t *edges = json_array();
    for (weft_node a = 1; a <= (weft_node)n; a++) {
        weft_system_stats st;
        memset(&st, 0, sizeof st);
        weft_schedule_system_stats(s, a, &st);
        json_array_append_new(
            systems, json_pack("{s:i,s:s?,s:i,s:I,s:I,s:I,s:I,s:I}", "node", (int)a, "name",
                               weft_schedule_node_name(s, a), "position",
                               weft_schedule_position(s, a), "runs", (json_int_t)st.runs,
                               "skipped", (json_int_t)st.skipped, "failures",
                               (json_int_t)st.failures, "total_ns", (json_int_t)st.total_ns,
                               "last_ns", (json_int_t)st.last_ns));
        for (weft_node b = 1; b <= (weft_node)n; b++) {
            if (a != b && weft_schedule_has_edge(s, a, b)) {
                json_array_append_new(edges, json_pack("[i,i]", (int)a, (int)b));
            }
        }
    }
    json_t *amb = json_array();
    int32_t na = weft_schedule_ambiguity_count(s);
    for (int32_t i = 0; i < na; i++) {
        weft_ambiguity a;
        if (weft_schedule_ambiguity(s, i, &a) != WEFT_OK) {
            continue;
        }
        json_t *comps = json_array();
        for (int32_t k = 0; k < a.component_count; k++) {
            json_array_append_new(comps, json_string(wi_comp_name(r, a.components[k])));
        }
        json_array_append_new(amb, json_pack("{s:i,s:i,s:o}", "a", (int)a.a, "b", (int)a.b,
                                             "components", comps));
    }
    /* sets: [{node, name, members: [node]}] (members: systems, apply
     * points and nested sets, by node) */
    json_t *sets = json_array();
    int32_t nsets = weft_schedule_sets(s, NULL, 0);
    for (int32_t i = 0; i < nsets; i++) {
        weft_node set = WEFT_NODE_SET | (weft_node)(i + 1);
        json_t *members = json_array();
        int32_t nm = weft_schedule_members(s, set, NULL, 0);
        weft_node *m = nm > 0 ? calloc((size_t)nm, sizeof *m) : NULL;
        if (m && weft_schedule_members(s, set, m, nm) == nm) {
            for (int32_t k = 0; k < nm; k++) {
                json_array_append_new(members, json_integer((json_int_t)m[k]));
            }
        }
        free(m);
        json_array_append_new(sets, json_pack("{s:I,s:s?,s:o}", "node", (json_int_t)set, "name",
                                              weft_schedule_node_name(s, set), "members",
                                              members));
    }
    size_t dot_len = weft_schedule_dot(s, NULL, 0);
    char *dot = dot_len ? malloc(dot_len + 1) : NULL;
    if (dot) {
        weft_schedule_dot(s, dot, dot_len + 1);
    }
    json_t *out = json_pack("{s:o,s:o,s:o,s:o,s:i,s:b,s:i,s:s?}", "systems", systems, "edges",
                            edges, "sets", sets, "ambiguities", amb, "sync_points",
                            weft_schedule_sync_count(s),
                            "built", weft_schedule_position(s, 1) >= 0 || n == 0, "step_cursor",
                            (int)weft_schedule_step_cursor(s), "dot", dot);
    free(dot);
    return out;
}

/* The last run's Chrome trace (needs profiling on for that run). */
json_t *wi_trace(weft_remote *r, json_t *params, wr_err *err)
{
    weft_schedule *s = wi_schedule(r, params, err);
    if (!s) {
        return NULL;
    }
    json_t *profile = json_object_get(params, "profile");
    if (json_is_boolean(profile)) {
        /* turning profiling on takes effect from the next run */
        weft_schedule_set_profiling(s, json_is_true(profile));
    }
    size_t len = weft_schedule_trace_json(s, NULL, 0);
    char *text = malloc(len + 1);
    if (!text) {
        err->code = WEFT_REMOTE_INTERNAL_ERROR;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return NULL;
    }
    weft_schedule_trace_json(s, text, len + 1);
    json_error_t jerr;
    json_t *trace = json_loadb(text, len, JSON_DECODE_ANY, &jerr);
    free(text);
    if (!trace) {
        err->code = WEFT_REMOTE_INTERNAL_ERROR;
        snprintf(err->msg, sizeof err->msg, "the trace is not JSON: %s", jerr.text);
        return NULL;
    }
    return json_pack("{s:o,s:i}", "trace", trace, "max_concurrency",
                     weft_schedule_max_concurrency(s));
}

json_t *wi_diagnostics(weft_remote *r, json_t *params, wr_err *err)
{
    (void)params;
    (void)err;
    json_t *out = json_array();
    int32_t n = weft_diag_count(r->world);
    for (int32_t i = 0; i < n; i++) {
        const char *name = weft_diag_name(r->world, i);
        weft_diag_value v;
        if (!name || weft_diag_get(r->world, name, &v) != WEFT_OK) {
            continue;
        }
        json_array_append_new(out, json_pack("{s:s,s:f,s:f,s:f,s:f,s:f,s:i,s:b,s:s}", "name",
                                             name, "value", v.value, "average", v.average,
                                             "smoothed", v.smoothed, "min", v.min, "max", v.max,
                                             "count", v.count, "enabled", v.enabled, "suffix",
                                             v.suffix ? v.suffix : ""));
    }
    return out;
}

/* States, found through their State<name> resources' component names. */
json_t *wi_states(weft_remote *r, json_t *params, wr_err *err)
{
    (void)params;
    (void)err;
    json_t *out = json_array();
    weft_world_stats s;
    weft_world_get_stats(r->world, &s);
    for (int32_t id = 1; id <= s.components; id++) {
        const char *cname = wi_comp_name(r, (weft_component)id);
        size_t len = strlen(cname);
        if (strncmp(cname, "State<", 6) != 0 || len < 8 || cname[len - 1] != '>') {
            continue;
        }
        char name[256];
        if (len - 7 >= sizeof name) {
            continue;
        }
        memcpy(name, cname + 6, len - 7);
        name[len - 7] = '\0';
        weft_state st = weft_state_lookup(r->world, name);
        if (!st || weft_state_resource(r->world, st) != (weft_component)id) {
            continue;
        }
        uint32_t value = WEFT_STATE_VALUE_NONE;
        weft_state_get(r->world, st, &value);
        bool exists = value != WEFT_STATE_VALUE_NONE;
        /* the state's value names, for a client offering the next one
         * (values are numbered from 0; the first without a name ends them) */
        json_t *values = json_array();
        for (uint32_t v = 0; v < 256; v++) {
            const char *vn = weft_state_value_name(r->world, st, v);
            if (!vn) {
                break;
            }
            json_array_append_new(values, json_string(vn));
        }
        json_array_append_new(
            out, json_pack("{s:s,s:b,s:o,s:o,s:o}", "name", name, "exists", exists, "value",
                           exists ? json_integer((json_int_t)value) : json_null(), "value_name",
                           exists ? json_string(weft_state_value_name(r->world, st, value))
                                  : json_null(),
                           "values", values));
    }
    return out;
}

/* Queues a state's next value: {state, value: name or number}. */
json_t *wi_set_state(weft_remote *r, json_t *params, wr_err *err)
{
    json_t *sv = json_is_object(params) ? json_object_get(params, "state") : NULL;
    json_t *vv = json_is_object(params) ? json_object_get(params, "value") : NULL;
    if (!json_is_string(sv) || (!json_is_string(vv) && !json_is_integer(vv))) {
        return wi_params_error(err, "params must be {state: name, value: name or number}");
    }
    weft_state st = weft_state_lookup(r->world, json_string_value(sv));
    if (!st) {
        return wi_weft_error(err, WEFT_ERR_NOT_FOUND, "no state '%s'", json_string_value(sv));
    }
    uint32_t value = UINT32_MAX;
    if (json_is_integer(vv)) {
        json_int_t x = json_integer_value(vv);
        value = x >= 0 && x < 256 ? (uint32_t)x : UINT32_MAX;
    } else {
        for (uint32_t v = 0; v < 256; v++) {
            const char *vn = weft_state_value_name(r->world, st, v);
            if (!vn) {
                break;
            }
            if (strcmp(vn, json_string_value(vv)) == 0) {
                value = v;
                break;
            }
        }
    }
    if (value == UINT32_MAX) {
        return wi_weft_error(err, WEFT_ERR_INVALID_ARG, "'%s' has no such value",
                             json_string_value(sv));
    }
    weft_status rs = weft_state_set_next(r->world, st, value);
    if (rs != WEFT_OK) {
        return wi_weft_error(err, rs, "%s", weft_last_error(r->world));
    }
    return json_null();
}

/* Stepping control: {schedule, action: "on"|"off"|"step"|"continue"}. */
json_t *wi_stepping(weft_remote *r, json_t *params, wr_err *err)
{
    weft_schedule *s = wi_schedule(r, params, err);
    if (!s) {
        return NULL;
    }
    json_t *action = json_object_get(params, "action");
    if (!json_is_string(action)) {
        return wi_params_error(err, "'action' must be \"on\", \"off\", \"step\" or \"continue\"");
    }
    const char *a = json_string_value(action);
    weft_status st;
    if (strcmp(a, "on") == 0 || strcmp(a, "off") == 0) {
        st = weft_schedule_set_stepping(s, a[1] == 'n');
    } else if (strcmp(a, "step") == 0) {
        st = weft_schedule_step(s);
    } else if (strcmp(a, "continue") == 0) {
        st = weft_schedule_continue(s);
    } else {
        return wi_params_error(err, "'action' must be \"on\", \"off\", \"step\" or \"continue\"");
    }
    if (st != WEFT_OK) {
        return wi_weft_error(err, st, "%s", weft_last_error(r->world));
    }
    return json_pack("{s:b,s:i}", "stepping", weft_schedule_is_stepping(s), "cursor",
                     (int)weft_schedule_step_cursor(s));
}

/* ---- breakpoints: per-system step behaviors ---- */

static const char *const wi_behaviors[] = {"default", "always_run", "never_run", "break"};

/* A system and its place in the built order, for sorting. */
typedef struct wi_placed {
    int32_t pos; /* -1: not built (sorted last) */
    weft_node node;
} wi_placed;

static int wi_placed_cmp(const void *x, const void *y)
{
    const wi_placed *a = x, *b = y;
    uint32_t pa = (uint32_t)a->pos, pb = (uint32_t)b->pos; /* -1 sorts last */
    if (pa != pb) {
        return pa < pb ? -1 : 1;
    }
    return (a->node > b->node) - (a->node < b->node);
}

/* {stepping, cursor, systems: [{node, name, position, behavior}]} in
 * built order (nodes not yet built last, by node). */
static json_t *wi_step_list(weft_remote *r, weft_schedule *s)
{
    (void)r;
    int32_t n = weft_schedule_node_count(s);
    json_t *systems = json_array();
    wi_placed *order = n > 0 ? malloc((size_t)n * sizeof *order) : NULL;
    if (!systems || (n > 0 && !order)) {
        json_decref(systems);
        free(order);
        return NULL;
    }
    int32_t k = 0;
    for (weft_node a = 1; a <= (weft_node)n; a++) {
        order[k].pos = weft_schedule_position(s, a);
        order[k++].node = a;
    }
    if (k > 1) {
        qsort(order, (size_t)k, sizeof *order, wi_placed_cmp);
    }
    for (int32_t i = 0; i < k; i++) {
        weft_node a = order[i].node;
        weft_step_behavior b = weft_schedule_step_behavior(s, a);
        json_array_append_new(systems,
                              json_pack("{s:i,s:s?,s:i,s:s}", "node", (int)a, "name",
                                        weft_schedule_node_name(s, a), "position",
                                        (int)order[i].pos, "behavior", wi_behaviors[b]));
    }
    free(order);
    return json_pack("{s:b,s:i,s:o}", "stepping", weft_schedule_is_stepping(s), "cursor",
                     (int)weft_schedule_step_cursor(s), "systems", systems);
}

/* weft.step_systems: {schedule} -> the nodes with their step behaviors
 * (weft_schedule_step_behavior: apply points "always_run"). */
json_t *wi_step_systems(weft_remote *r, json_t *params, wr_err *err)
{
    weft_schedule *s = wi_schedule(r, params, err);
    if (!s) {
        return NULL;
    }
    return wi_step_list(r, s);
}

/* weft.set_step_behavior: {schedule, system: node or name, behavior:
 * "default" | "always_run" | "never_run" | "break"} ->
 * as weft.step_systems. weft_schedule_set_step_behavior checks the node
 * (a system of this schedule) and the phase; nothing changes on error. */
json_t *wi_set_step_behavior(weft_remote *r, json_t *params, wr_err *err)
{
    weft_schedule *s = wi_schedule(r, params, err);
    if (!s) {
        return NULL;
    }
    json_t *sys = json_object_get(params, "system");
    weft_node node = 0;
    int32_t n = weft_schedule_node_count(s);
    if (json_is_integer(sys)) {
        json_int_t v = json_integer_value(sys);
        if (v < 1 || v > n) {
            char num[32];
            snprintf(num, sizeof num, "%lld", (long long)v);
            return wi_weft_error(err, WEFT_ERR_INVALID_ARG, "no node %s in this schedule", num);
        }
        node = (weft_node)v;
    } else if (json_is_string(sys)) {
        for (weft_node a = 1; a <= (weft_node)n && !node; a++) {
            const char *nm = weft_schedule_node_name(s, a);
            if (nm && strcmp(nm, json_string_value(sys)) == 0) {
                node = a;
            }
        }
        if (!node) {
            return wi_weft_error(err, WEFT_ERR_NOT_FOUND, "no system '%s' in this schedule",
                                 json_string_value(sys));
        }
    } else {
        return wi_params_error(err, "'system' must be a node number or a system name");
    }
    json_t *bv = json_object_get(params, "behavior");
    int32_t behavior = -1;
    for (int32_t i = 0; json_is_string(bv) && i < 4; i++) {
        if (strcmp(json_string_value(bv), wi_behaviors[i]) == 0) {
            behavior = i;
        }
    }
    if (behavior < 0) {
        return wi_params_error(
            err, "'behavior' must be \"default\", \"always_run\", \"never_run\" or \"break\"");
    }
    weft_status st = weft_schedule_set_step_behavior(s, node, (weft_step_behavior)behavior);
    if (st != WEFT_OK) {
        return wi_weft_error(err, st, "%s", weft_last_error(r->world));
    }
    return wi_step_list(r, s);
}

/* Type descriptions of components, for editors: {name: schema} for the
 * named components (params.components) or every described one. A tag's
 * schema is {"tag": true}; a relationship source's a "target" entity
 * field. Names that are unknown or undescribed are left out. */
json_t *wi_schema(weft_remote *r, json_t *params, wr_err *err)
{
    json_t *names = json_is_object(params) ? json_object_get(params, "components") : NULL;
    if (names && !json_is_array(names)) {
        return wi_params_error(err, "'components' must be an array of component names");
    }
    json_t *out = json_object();
    weft_world_stats s;
    weft_world_get_stats(r->world, &s);
    for (int32_t id = 1; id <= s.components; id++) {
        weft_component c = (weft_component)id;
        const char *name = wi_comp_name(r, c);
        if (names) {
            bool wanted = false;
            size_t i;
            json_t *n;
            json_array_foreach(names, i, n) {
                wanted |= json_is_string(n) && strcmp(json_string_value(n), name) == 0;
            }
            if (!wanted) {
                continue;
            }
        }
        weft_component_info info;
        weft_component_info_get(r->world, c, &info);
        json_t *schema = NULL;
        if (info.size == 0) {
            schema = json_pack("{s:s,s:I,s:b,s:[]}", "name", name, "size", (json_int_t)0, "tag",
                               1, "fields");
        } else if (weft_relationship_targets(r->world, c)) {
            schema = json_pack("{s:s,s:I,s:b,s:[{s:s,s:s}]}", "name", name, "size",
                               (json_int_t)info.size, "relationship", 1, "fields", "name",
                               "target", "kind", "entity");
        } else if (weft_component_is_described(r->world, c)) {
            size_t need = 0;
            weft_json_write_schema(r->world, c, NULL, 0, &need);
            char *text = need ? malloc(need) : NULL;
            if (text && weft_json_write_schema(r->world, c, text, need, &need) == WEFT_OK) {
                json_error_t jerr;
                schema = json_loads(text, 0, &jerr);
            }
            free(text);
        }
        if (schema) {
            json_object_set_new(out, name, schema);
        }
    }
    return out;
}

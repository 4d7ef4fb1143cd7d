/* src/remote/rpc_resource.c - the world.* methods on resources.
 * SPDX-License-Identifier: MIT
 */
#include "rpc_internal.h"

#include <stdlib.h>
#include <string.h>

json_t *wr_world_list_resources(weft_remote *r, json_t *params, wr_err *err)
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

json_t *wr_world_get_resources(weft_remote *r, json_t *params, wr_err *err)
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

json_t *wr_world_insert_resources(weft_remote *r, json_t *params, wr_err *err)
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

json_t *wr_world_remove_resources(weft_remote *r, json_t *params, wr_err *err)
{
    weft_component c;
    if (!wr_get_resource(r, params, &c, err)) {
        return NULL;
    }
    weft_status st = weft_resource_remove(r->world, c);
    return st == WEFT_OK ? json_null() : wr_fail_world(r, err, st);
}

json_t *wr_world_mutate_resources(weft_remote *r, json_t *params, wr_err *err)
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

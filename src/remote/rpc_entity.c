/* src/remote/rpc_entity.c - the world.* methods on entities and
 * their components (get, spawn, insert, remove, despawn, reparent, list,
 * mutate).
 * SPDX-License-Identifier: MIT
 */
#include "rpc_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- world.* methods ---- */

json_t *wr_world_get_components(weft_remote *r, json_t *params, wr_err *err)
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
weft_component wr_list_relationship(weft_remote *r, weft_component c)
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

bool wr_is_relationship_list(weft_remote *r, weft_component c)
{
    return wr_list_relationship(r, c) != 0;
}

/* Component c of e as JSON in the shape its name asks for: Bevy's ChildOf
 * is the parent entity itself (weft's is {"target": e}). */
json_t *wr_value_as(weft_remote *r, weft_entity e, weft_component c, int alias,
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
bool wr_all_components(weft_remote *r, weft_entity e, json_t *into, wr_err *err)
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

json_t *wr_world_spawn_entity(weft_remote *r, json_t *params, wr_err *err)
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

json_t *wr_world_insert_components(weft_remote *r, json_t *params, wr_err *err)
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

json_t *wr_world_remove_components(weft_remote *r, json_t *params, wr_err *err)
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

json_t *wr_world_despawn_entity(weft_remote *r, json_t *params, wr_err *err)
{
    weft_entity e;
    if (!wr_require_object(params, err) ||
        !wr_get_entity(r, json_object_get(params, "entity"), "entity", &e, err)) {
        return NULL;
    }
    weft_status st = weft_despawn(r->world, e);
    return st == WEFT_OK ? json_null() : wr_fail_world(r, err, st);
}

json_t *wr_world_reparent_entities(weft_remote *r, json_t *params, wr_err *err)
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

json_t *wr_world_list_components(weft_remote *r, json_t *params, wr_err *err)
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


/* Finds the JSON value at `path` (".a.b[2].c", the first dot optional,
 * "" for the whole value) inside root; sets *slot_parent and the key or
 * index to replace. */
bool wr_path_set(json_t *root, const char *path, json_t *value, json_t **out_root,
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

json_t *wr_world_mutate_components(weft_remote *r, json_t *params, wr_err *err)
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

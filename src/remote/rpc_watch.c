/* src/remote/rpc_watch.c - watching a reading method: the change
 * probes and etags of weft's +watch, and bevy_remote's streaming watches.
 * SPDX-License-Identifier: MIT
 */
#include "rpc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
bool wr_watch_probe(weft_remote *r, const char *method, json_t *params, uint32_t since,
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
bool wr_value_hash(json_t *v, uint64_t *out)
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
void wr_etag_format(const wr_watch *w, char out[48])
{
    snprintf(out, 48, "%08x.%016llx.%016llx", (unsigned)w->since,
             (unsigned long long)w->shape, (unsigned long long)w->hash);
}

bool wr_etag_parse(const char *s, wr_watch *w)
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

json_t *wr_watch_get_components(weft_remote *r, json_t *params, wr_watch *ws,
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

json_t *wr_watch_list_components(weft_remote *r, json_t *params, wr_watch *ws,
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

bool wr_is_bevy_watch(const char *name)
{
    return strcmp(name, "world.get_components+watch") == 0 ||
           strcmp(name, "world.list_components+watch") == 0;
}

/* bevy_remote's error codes for its world.* methods (data keeps weft's
 * status): -23401 entity not found, -23402 component error, -23403
 * component not present, -23404 self reparent, -23501 resource error,
 * -23502 resource not present. A write to a read-only remote keeps weft's
 * code. */
void wr_bevy_code(wr_err *err, const char *method)
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

/* src/remote/rpc_query.c - world.query: its plan (terms and name
 * lists checked), the matching entities, the rows.
 * SPDX-License-Identifier: MIT
 */
#include "rpc_internal.h"

#include <stdlib.h>
#include <string.h>

/* Checks world.query's params (an object) and builds its terms:
 * components (AND), with (WITH), without (WITHOUT). Unknown names are an
 * error when strict; otherwise an unknown required component matches
 * nothing and an unknown optional or excluded one is ignored. */
bool wr_query_plan(weft_remote *r, json_t *params, wr_qplan *p, wr_err *err)
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
weft_entity *wr_query_entities(weft_remote *r, const wr_qplan *p, size_t *out_count,
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

json_t *wr_world_query(weft_remote *r, json_t *params, wr_err *err)
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

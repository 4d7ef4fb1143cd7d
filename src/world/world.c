/* src/world/world.c - world create/destroy and the error slot.
 * SPDX-License-Identifier: MIT
 */
#include "world/world.h"
#include "world/tasks.h"
#include "core/guard.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/os.h"
#include "core/status.h"
#include "query/query.h"
#include "world/defer.h"
#include "world/messages.h"
#include "world/require.h"

static _Thread_local wf_error_sink *tls_sink;

/* Formats a message; one that does not fit ends in "..." so the cut shows. */
static void error_format(char *dst, size_t cap, const char *fmt, va_list ap)
{
    int n = vsnprintf(dst, cap, fmt, ap);
    if (n >= 0 && (size_t)n >= cap && cap > 4) {
        memcpy(dst + cap - 4, "...", 4);
    }
}

wf_error_sink *wf_error_sink_swap(wf_error_sink *sink)
{
    wf_error_sink *old = tls_sink;
    tls_sink = sink;
    return old;
}

wf_error_sink *wf_error_sink_for(const weft_world *w)
{
    wf_error_sink *sink = tls_sink;
    return sink && sink->world == w ? sink : NULL;
}

bool wf_world_shared_slow(const weft_world *w, const char *fn)
{
    if (w->read_only) {
        wf_error(w, WEFT_ERR_WRONG_PHASE,
                 "%s: the world is read-only while a sub-app extracts from it (extract "
                 "systems write only the sub-world)", fn);
        return true;
    }
    wf_error_sink *sink = tls_sink;
    if (!sink || sink->world != w || !sink->shared) {
        return false;
    }
    wf_error(w, WEFT_ERR_WRONG_PHASE,
             "%s: not allowed from a parallel system, run condition or chunk task (the "
             "world is shared with the other systems of the run): record commands, or "
             "make the system exclusive", fn);
    return true;
}

weft_status wf_error_last(const weft_world *w)
{
    wf_error_sink *sink = tls_sink;
    return sink && sink->world == w ? sink->last : w->last_status;
}

const char *wf_error_last_message(const weft_world *w)
{
    wf_error_sink *sink = tls_sink;
    if (sink && sink->world == w) {
        return sink->last == WEFT_OK ? "" : sink->last_message;
    }
    return w->last_error;
}

weft_status wf_error(const weft_world *cw, weft_status status, const char *fmt, ...)
{
    wf_error_sink *sink = tls_sink;
    if (sink && sink->world == cw) {
        va_list ap;
        va_start(ap, fmt);
        error_format(sink->last_message, sizeof sink->last_message, fmt, ap);
        va_end(ap);
        sink->last = status;
        if (sink->count++ == 0) {
            memcpy(sink->message, sink->last_message, sizeof sink->message);
            sink->status = status;
        }
        return status;
    }
    /* The error slot is diagnostic state and may be written through const
     * getters (weft_get); the world's content is untouched. */
    weft_world *w = (weft_world *)(uintptr_t)cw;
    va_list ap;
    va_start(ap, fmt);
    error_format(w->last_error, sizeof w->last_error, fmt, ap);
    va_end(ap);
    w->last_status = status;
    if (w->logger.fn) {
        WF_CALLBACK(w, w->logger.fn(w->logger.user, WEFT_LOG_ERROR, status, w->last_error,
                                    __FILE__, __LINE__));
    }
    return status;
}

weft_status wf_error_va(const weft_world *w, weft_status status, const char *prefix,
                        const char *fmt, va_list ap)
{
    char msg[WF_ERROR_LEN];
    error_format(msg, sizeof msg, fmt, ap);
    return wf_error(w, status, "%s%s", prefix, msg);
}

void wf_log(const weft_world *w, weft_log_level level, const char *fmt, ...)
{
    if (!w->logger.fn) {
        return;
    }
    char msg[WF_ERROR_LEN];
    va_list ap;
    va_start(ap, fmt);
    error_format(msg, sizeof msg, fmt, ap);
    va_end(ap);
    WF_CALLBACK(w, w->logger.fn(w->logger.user, level, WEFT_OK, msg, __FILE__, __LINE__));
}

const char *wf_component_name(const weft_world *w, weft_component c)
{
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    return ti ? ti->name : "(unregistered)";
}

weft_status wf_entity_check_slow(const weft_world *w, weft_entity e, wf_record **out)
{
    uint32_t idx = (uint32_t)e;
    uint32_t gen = (uint32_t)(e >> 32);
    if (e == 0) {
        return wf_error(w, WEFT_ERR_INVALID_ENTITY, "entity 0 is the null handle");
    }
    if (gen > WF_GENERATION_MAX) {
        return wf_error(w, WEFT_ERR_STALE_ENTITY,
                        "entity %u:%u is a provisional handle of a system's command buffer: "
                        "it names an entity only in later commands of the same buffer round "
                        "(weft_commands_resolve gives the real id after the apply)",
                        idx, gen);
    }
    if (idx >= w->entities.count) {
        uint32_t pf, pn;
        wf_entities_pending(&w->entities, &pf, &pn);
        if (idx < w->entities.count + pn) {
            return wf_error(w, WEFT_ERR_STALE_ENTITY,
                            "entity %u:%u is reserved but not flushed yet", idx, gen);
        }
        return wf_error(w, WEFT_ERR_INVALID_ENTITY,
                        "entity %u:%u: index was never allocated in this world", idx, gen);
    }
    wf_record *r = &w->entities.records[idx];
    if (r->gen != gen) {
        return wf_error(w, WEFT_ERR_STALE_ENTITY,
                        "entity %u:%u is stale (index %u is at generation %u)", idx, gen,
                        idx, r->gen);
    }
    if (r->arch == WF_ARCH_DEAD) {
        return wf_error(w, WEFT_ERR_STALE_ENTITY,
                        "entity %u:%u is not alive (despawned or reserved and not "
                        "flushed)", idx, gen);
    }
    *out = r;
    return WEFT_OK;
}

weft_world *wf_world_create(const weft_world_desc *desc)
{
    wf_allocator alloc;
    wf_allocator_init(&alloc, &desc->allocator);
    weft_world *w = alloc.hook.alloc(sizeof *w, _Alignof(weft_world), alloc.hook.user);
    if (!w) {
        return NULL;
    }
    memset(w, 0, sizeof *w);
    wf_atomic_init_ptr(&w->tasks, NULL);
    w->alloc = alloc;
    /* relaxed: the world is not shared yet; pairs with nothing */
    wf_atomic_store_relaxed_i64(&w->alloc.live_bytes, (int64_t)sizeof *w);
    w->logger = desc->logger;
    w->change_tick = 1;
    wf_registry_init(&w->registry);
    wf_entities_init(&w->entities);
    wf_events_init(&w->events);
    wf_cmds_init(&w->cmds, w, &w->alloc, &w->registry);
    if (!wf_graph_init(&w->graph, &w->alloc, &w->registry)) {
        goto fail;
    }
    if (desc->entity_capacity_hint > 0 &&
        !wf_entities_reserve(&w->entities, &w->alloc,
                             (uint32_t)desc->entity_capacity_hint)) {
        goto fail;
    }
    w->magic = WF_WORLD_MAGIC;
    wf_os_world_created(); /* the OS layer stays fixed while it lives */
    return w;
fail:
    wf_entities_fini(&w->entities, &w->alloc);
    wf_graph_fini(&w->graph, &w->alloc);
    alloc.hook.free(w, sizeof *w, _Alignof(weft_world), alloc.hook.user);
    return NULL;
}

void wf_world_destroy(weft_world *w)
{
    w->busy++; /* callbacks run by the teardown cannot destroy it again */
    /* tasks first: cancelled, then joined, while everything they or a
     * waiter could touch still exists */
    wf_tasks_fini(w);
    if (w->states_fini) {
        w->states_fini(w); /* its schedules are freed with the others below */
    }
    if (w->sys_fini) {
        w->sys_fini(w); /* schedules own queries and buffers: first */
    }
    if (w->scenes_fini) {
        w->scenes_fini(w); /* scene values run their type hooks */
    }
    if (w->reflect_fini) {
        w->reflect_fini(w);
    }
    if (w->diag_fini) {
        w->diag_fini(w);
    }
    wf_journal_stop(w);
    w->magic = 0;
    wf_os_world_destroyed();
    wf_defer_fini(w);
    wf_events_fini(&w->events, &w->alloc);
    while (w->queries) {
        weft_query *q = w->queries;
        w->queries = q->next;
        wf_query_fini(q, &w->alloc);
        wf_free(&w->alloc, q, sizeof *q, _Alignof(weft_query));
    }
    /* Tables run the dtors of every table value; sparse sets and resources
     * hold the rest. */
    wf_graph_fini(&w->graph, &w->alloc);
    for (uint32_t id = 1; id <= w->registry.count; id++) {
        wf_type_info *ti = w->registry.infos[id];
        wf_sparse_destroy(ti->sparse, &w->alloc);
        ti->sparse = NULL;
        if (ti->res_present && ti->res_value) {
            wf_type_destroy(ti, ti->res_value, 1);
            wf_free(&w->alloc, ti->res_value, ti->size, ti->align);
        }
    }
    wf_messages_fini(w);
    wf_require_fini(w);
    wf_registry_fini(&w->registry, &w->alloc);
    wf_entities_fini(&w->entities, &w->alloc);
    weft_allocator hook = w->alloc.hook;
    hook.free(w, sizeof *w, _Alignof(weft_world), hook.user);
}

weft_status wf_managed_refuse(const weft_world *w, const wf_type_info *ti, const char *fn)
{
    const wf_type_info *rel = wf_registry_get(&w->registry, ti->rel_source);
    return wf_error(w, WEFT_ERR_RELATIONSHIP,
                    "%s: '%s' is the target list of relationship '%s' and is kept by weft: "
                    "relate or unrelate the sources instead", fn, ti->name,
                    rel ? rel->name : "?");
}

/* Validates a (component, size, ptr) list: registered ids, exact sizes, no
 * duplicates (quadratic: lists are short), no weft-managed component. */
int32_t wf_world_get_many(const weft_world *w, const weft_entity *es, int32_t n,
                          const wf_type_info *ti, const void **out)
{
    /* A lookup is two dependent misses (record, then value) when handles
     * come in random order. Asking for a whole group's records first, then
     * for its values, lets the misses of a group overlap; 32 handles keep
     * the requests within what the core can have in flight. */
    enum { GROUP = 32 };
    const wf_entity_index *ix = &w->entities;
    weft_component c = ti->id;
    bool table = ti->storage == WEFT_STORAGE_TABLE;
    int32_t found = 0;
    for (int32_t b = 0; b < n; b += GROUP) {
        int32_t m = n - b < GROUP ? n - b : GROUP;
        const weft_entity *g = es + b;
        for (int32_t i = 0; i < m; i++) {
            uint32_t idx = (uint32_t)g[i];
            if (idx < ix->count) {
                WF_PREFETCH(&ix->records[idx]);
            }
        }
        for (int32_t i = 0; i < m; i++) {
            const wf_record *r = wf_entity_live(w, g[i]);
            const void *p = NULL;
            if (r && table) {
                const wf_archetype *arch = wf_world_archetype(w, r->arch);
                if (c < arch->col_map_len && arch->col_map[c] >= 0) {
                    p = wf_column_ptr(&arch->cols[arch->col_map[c]], r->row);
                    WF_PREFETCH(p);
                }
            } else if (r) {
                uint32_t d = wf_sparse_find(ti->sparse, (uint32_t)g[i]);
                p = d == WF_SPARSE_EMPTY ? NULL : wf_column_ptr(&ti->sparse->dense, d);
            }
            out[b + i] = p;
            found += p != NULL;
        }
    }
    return found;
}

weft_status wf_values_check(const weft_world *w, const weft_value *values, int32_t count,
                            const char *fn)
{
    if (count < 0) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: count %d is negative", fn, count);
    }
    if (count > 0 && !values) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: values is NULL with count %d", fn,
                        count);
    }
    for (int32_t i = 0; i < count; i++) {
        const wf_type_info *ti = wf_registry_get(&w->registry, values[i].id);
        if (!ti) {
            return wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT,
                            "%s: component id %u is not registered in this world", fn,
                            values[i].id);
        }
        if (values[i].size != ti->size) {
            return wf_error(w, WEFT_ERR_SIZE_MISMATCH,
                            "%s: component '%s' has size %u but %zu bytes were passed", fn,
                            ti->name, ti->size, values[i].size);
        }
        if (wf_type_managed(ti)) {
            return wf_managed_refuse(w, ti, fn);
        }
        for (int32_t j = 0; j < i; j++) {
            if (values[j].id == values[i].id) {
                return wf_error(w, WEFT_ERR_DUPLICATE_COMPONENT,
                                "%s: component '%s' appears twice", fn, ti->name);
            }
        }
    }
    return WEFT_OK;
}

/* ---- queries ---- */

weft_query *wf_world_query_create(weft_world *world, const weft_query_desc *desc,
                                  const char *fn)
{
    weft_query *q = wf_calloc(&world->alloc, sizeof *q, _Alignof(weft_query));
    if (!q) {
        wf_error(world, WEFT_ERR_OUT_OF_MEMORY, "out of memory creating a query");
        return NULL;
    }
    wf_query_env env = wf_world_query_env(world);
    int32_t bad = -1;
    const char *why = "";
    weft_status st = wf_query_compile(q, &env, desc, &bad, &why);
    if (st != WEFT_OK) {
        wf_free(&world->alloc, q, sizeof *q, _Alignof(weft_query));
        if (bad >= 0) {
            wf_error(world, st, "%s: term %d (component id %u, '%s'): %s", fn, bad,
                     desc->terms[bad].id, wf_component_name(world, desc->terms[bad].id), why);
        } else {
            wf_error(world, st, "%s: %s", fn, why);
        }
        return NULL;
    }
    q->world = world;
    /* "minus infinity": the first run sees everything as added and changed */
    q->last_run = world->change_tick - WEFT_MAX_CHANGE_AGE;
    q->next = world->queries;
    if (world->queries) {
        world->queries->prev = q;
    }
    world->queries = q;
    return q;
}

void wf_world_query_destroy(weft_world *world, weft_query *query)
{
    if (query->prev) {
        query->prev->next = query->next;
    } else {
        world->queries = query->next;
    }
    if (query->next) {
        query->next->prev = query->prev;
    }
    wf_query_fini(query, &world->alloc);
    wf_free(&world->alloc, query, sizeof *query, _Alignof(weft_query));
}

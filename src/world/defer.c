/* src/world/defer.c - recording into and applying command buffers.
 * SPDX-License-Identifier: MIT
 */
#include "world/defer.h"
#include "core/guard.h"

#include <string.h>

#include "core/check.h"

#include "world/commit.h"
#include "world/lifecycle.h"
#include "world/resource.h"

weft_status wf_cmds_record(weft_world *w, weft_commands *b, wf_cmd_op op, uint8_t flags,
                           weft_entity e, weft_component c, const weft_value *values,
                           int32_t count, weft_entity *out_spawned)
{
    if (b->gen > WEFT_MAX_EVENT_DEPTH) {
        return wf_error(w, WEFT_ERR_DEPTH_LIMIT,
                        "hooks and observers kept queuing commands for more than %u "
                        "rounds (an endless cascade?)",
                        WEFT_MAX_EVENT_DEPTH);
    }
    wf_cmd *cmd = wf_cmds_push(b, op, flags, e, c, values, count);
    if (!cmd) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory recording a command");
    }
    if (op == WF_CMD_SPAWN && b->provisional) {
        if (b->prov_count == b->prov_cap &&
            !wf_grow_ex(b->alloc, (void **)&b->prov_map, &b->prov_cap,
                        (uint64_t)b->prov_count + 1, 64, UINT32_MAX, sizeof *b->prov_map,
                        _Alignof(weft_entity))) {
            wf_cmd_release(b, cmd);
            return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory recording a spawn");
        }
        b->prov_map[b->prov_count] = 0;
        cmd->e = WF_CMD_PROV(b->prov_tag, ++b->prov_count);
        *out_spawned = cmd->e;
    } else if (op == WF_CMD_SPAWN) {
        cmd->e = wf_entities_reserve_id(&w->entities);
        if (!cmd->e) {
            wf_cmd_release(b, cmd); /* stays in the buffer as a done record */
            return wf_error(w, WEFT_ERR_CAPACITY, "entity index space exhausted");
        }
        *out_spawned = cmd->e;
    }
    return WEFT_OK;
}

weft_status wf_defer_push(weft_world *w, wf_cmd_op op, weft_entity e, weft_component c,
                          const weft_value *values, int32_t count,
                          weft_entity *out_spawned)
{
    return wf_cmds_record(w, &w->cmds, op, 0, e, c, values, count, out_spawned);
}

bool wf_defer_entity_ok(const weft_world *w, weft_entity e)
{
    const wf_entity_index *ix = &w->entities;
    uint32_t idx = (uint32_t)e;
    uint32_t gen = (uint32_t)(e >> 32);
    if (e == 0) {
        return false;
    }
    if (idx < ix->count) {
        /* live, or a dead record whose next generation was handed out by a
         * reservation */
        return ix->records[idx].gen == gen;
    }
    uint32_t from_free, fresh;
    wf_entities_pending(ix, &from_free, &fresh);
    return idx < ix->count + fresh && gen == WF_FIRST_GENERATION;
}

/* Entity of a record, live now; silent for TRY records. */
static weft_status apply_entity(weft_world *w, const wf_cmd *cmd, wf_record **rec)
{
    wf_record *r = wf_entity_live(w, cmd->e);
    if (r) {
        *rec = r;
        return WEFT_OK;
    }
    if (cmd->flags & WF_CMD_TRY) {
        return WEFT_ERR_STALE_ENTITY; /* silent */
    }
    return wf_entity_check_slow(w, cmd->e, rec);
}

/* The real id of a provisional handle of b's current round (0 when this
 * round never gave it out or its spawn has not been applied). */
static weft_entity prov_resolve(const weft_commands *b, weft_entity e)
{
    uint32_t k = (uint32_t)e;
    if (WF_CMD_PROV_TAG(e) != b->prov_tag || k == 0 || k > b->prov_count) {
        return 0;
    }
    return b->prov_map[k - 1];
}

/* The error for a provisional handle b cannot map. */
static weft_status prov_refuse(weft_world *w, const weft_commands *b, weft_entity e)
{
    if (WF_CMD_PROV_TAG(e) == b->prov_tag) {
        return wf_error(w, WEFT_ERR_STALE_ENTITY,
                        "provisional entity %u of this command buffer is used before the "
                        "command that spawns it",
                        (uint32_t)e);
    }
    return wf_error(w, WEFT_ERR_STALE_ENTITY,
                    "provisional entity %u was handed out by another command buffer or an "
                    "earlier, already applied round of this one; a provisional handle names "
                    "an entity only in later commands of its own round "
                    "(weft_commands_resolve gives the real id after the apply)",
                    (uint32_t)e);
}

/* Turns the provisional handles of a record of b into real ids: its
 * entity (a spawn gets a fresh one, in record order) and relationship
 * values naming a target. */
static weft_status prov_map_record(weft_world *w, weft_commands *b, wf_cmd *cmd)
{
    if (WF_CMD_IS_PROV(cmd->e)) {
        uint32_t k = (uint32_t)cmd->e;
        if (cmd->op == WF_CMD_SPAWN && WF_CMD_PROV_TAG(cmd->e) == b->prov_tag && k >= 1 &&
            k <= b->prov_count) {
            weft_entity real = wf_entities_reserve_id(&w->entities);
            if (!real) {
                return wf_error(w, WEFT_ERR_CAPACITY, "entity index space exhausted");
            }
            b->prov_map[k - 1] = real;
            cmd->e = real;
        } else {
            weft_entity real = prov_resolve(b, cmd->e);
            if (!real) {
                return (cmd->flags & WF_CMD_TRY) ? WEFT_ERR_STALE_ENTITY
                                                 : prov_refuse(w, b, cmd->e);
            }
            cmd->e = real;
        }
    }
    if (cmd->op == WF_CMD_SPAWN || cmd->op == WF_CMD_INSERT) {
        wf_cmd_value *cv = wf_cmd_values(cmd);
        for (int32_t i = 0; i < cmd->count; i++) {
            const wf_type_info *ti = wf_registry_get(&w->registry, cv[i].id);
            void *p = wf_cmd_value_ptr(cmd, &cv[i]);
            if (ti->rel_targets && p && ti->size == sizeof(weft_entity)) {
                weft_entity t;
                memcpy(&t, p, sizeof t);
                if (WF_CMD_IS_PROV(t)) {
                    weft_entity real = prov_resolve(b, t);
                    if (!real) {
                        return prov_refuse(w, b, t);
                    }
                    memcpy(p, &real, sizeof real);
                }
            }
        }
    }
    return WEFT_OK;
}

/* Inserts the values of a spawn or insert record on its live entity: one
 * placement, so it lands whole or (failing) not at all. */
static weft_status apply_insert(weft_world *w, wf_cmd *cmd)
{
    wf_record *rec = NULL;
    weft_value small[16];
    weft_value *vals = small;
    weft_status st = apply_entity(w, cmd, &rec);
    if (st != WEFT_OK) {
        return (cmd->flags & WF_CMD_TRY) ? WEFT_OK : st;
    }
    if (cmd->count == 1) {
        const wf_cmd_value *v = wf_cmd_values(cmd);
        return wf_commit_insert_one(w, cmd->e, rec, wf_registry_get(&w->registry, v->id),
                                    wf_cmd_value_ptr(cmd, v));
    }
    if (cmd->count > 16) {
        vals = wf_alloc(&w->alloc, (size_t)cmd->count * sizeof *vals, _Alignof(weft_value));
        if (!vals) {
            return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory applying an insert");
        }
    }
    const wf_cmd_value *cv = wf_cmd_values(cmd);
    for (int32_t i = 0; i < cmd->count; i++) {
        vals[i].id = cv[i].id;
        vals[i].size = wf_registry_get(&w->registry, cv[i].id)->size;
        vals[i].ptr = wf_cmd_value_ptr(cmd, &cv[i]);
    }
    st = wf_commit_insert(w, cmd->e, rec, vals, cmd->count);
    if (vals != small) {
        wf_free(&w->alloc, vals, (size_t)cmd->count * sizeof *vals, _Alignof(weft_value));
    }
    return st;
}

/* Runs one record. */
static weft_status apply_one(weft_world *w, weft_commands *b, wf_cmd *cmd)
{
    wf_record *rec = NULL;
    weft_status st = WEFT_OK;
    if (b->provisional && (st = prov_map_record(w, b, cmd)) != WEFT_OK) {
        /* a try_ command whose provisional entity is not this round's is
         * as silent as one whose entity is gone */
        return (cmd->flags & WF_CMD_TRY) && st == WEFT_ERR_STALE_ENTITY ? WEFT_OK : st;
    }
    switch (cmd->op) {
    case WF_CMD_SPAWN:
        st = wf_commit_flush(w);
        if (st != WEFT_OK || cmd->count == 0) {
            break;
        }
        /* The flush made the id live and empty; should its values fail to
         * land, the spawn is undone (an empty entity fires nothing and its
         * despawn cannot fail), so a spawn command applies whole or not at
         * all and its handle turns stale. */
        st = apply_insert(w, cmd);
        if (st != WEFT_OK && (rec = wf_entity_live(w, cmd->e)) != NULL &&
            wf_commit_despawn(w, cmd->e, rec) != WEFT_OK) {
            st = wf_error(w, WEFT_ERR_INTERNAL, "could not undo a failed spawn command");
        }
        break;
    case WF_CMD_INSERT:
        st = apply_insert(w, cmd);
        break;
    case WF_CMD_REMOVE:
        st = apply_entity(w, cmd, &rec);
        if (st == WEFT_OK) {
            st = wf_commit_remove(w, cmd->e, rec, wf_registry_get(&w->registry, cmd->c));
        } else if (cmd->flags & WF_CMD_TRY) {
            st = WEFT_OK;
        }
        break;
    case WF_CMD_DESPAWN:
        st = apply_entity(w, cmd, &rec);
        if (st == WEFT_OK) {
            st = wf_commit_despawn(w, cmd->e, rec);
        } else if (cmd->flags & WF_CMD_TRY) {
            st = WEFT_OK;
        }
        break;
    case WF_CMD_RES_INSERT:
        st = wf_resource_insert(w, wf_registry_get(&w->registry, wf_cmd_values(cmd)[0].id),
                                wf_cmd_value_ptr(cmd, &wf_cmd_values(cmd)[0]));
        break;
    case WF_CMD_RES_REMOVE:
        wf_resource_remove(w, wf_registry_get(&w->registry, cmd->c));
        break;
    case WF_CMD_CUSTOM: {
        wf_cmd_custom *cu = wf_cmd_custom_of(cmd);
        WF_CALLBACK(w, cu->fn(w, wf_cmd_payload(cmd), cu->user));
        break;
    }
    case WF_CMD_FLUSH:
        st = wf_commit_flush(w);
        break;
    default:
        break;
    }
    return st;
}

/* Batching: at the start of a run of single-component inserts or removes of
 * one component, reserve the destination table of the first entity's move
 * for the whole run, so the run's moves append without regrowing. Benign
 * when it fails or when the entities sit in different archetypes. */
static void apply_reserve_run(weft_world *w, const wf_cmd_chunk *k, uint32_t off,
                              const wf_cmd *first)
{
    if (first->op != WF_CMD_INSERT && first->op != WF_CMD_REMOVE) {
        return;
    }
    weft_component c = first->op == WF_CMD_INSERT ? wf_cmd_values((wf_cmd *)first)[0].id
                                                  : first->c;
    if (first->op == WF_CMD_INSERT && first->count != 1) {
        return;
    }
    uint32_t run = 0;
    for (; k && run < (1u << 20); k = k->next, off = 0) {
        bool same = true;
        while (off < k->used && same) {
            const wf_cmd *cmd = (const wf_cmd *)(const void *)(k->data + off);
            off += cmd->size;
            weft_component cc = cmd->op == WF_CMD_INSERT && cmd->count == 1
                                    ? wf_cmd_values((wf_cmd *)cmd)[0].id
                                    : cmd->c;
            same = cmd->op == first->op && cc == c && !(cmd->flags & WF_CMD_DONE);
            run += same;
        }
        if (!same) {
            break;
        }
    }
    const wf_record *r = wf_entity_live(w, first->e);
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (run < 16 || !r || !ti || ti->storage != WEFT_STORAGE_TABLE) {
        return;
    }
    wf_archetype *src = wf_world_archetype(w, r->arch);
    wf_move_plan *plan;
    wf_archetype *dst = first->op == WF_CMD_INSERT
                            ? wf_graph_add(&w->graph, &w->alloc, &w->registry, src, c, &plan)
                            : wf_graph_remove(&w->graph, &w->alloc, &w->registry, src, c, &plan);
    if (dst && dst->table != src->table) {
        wf_table_reserve(dst->table, &w->alloc, dst->table->count + run); /* benign */
    }
}

weft_status wf_cmds_apply(weft_world *w, weft_commands *b)
{
    weft_status first = WEFT_OK;
    bool world_buffer = b == &w->cmds;
    uint8_t prev_op = 0;
    weft_component prev_c = 0;
    b->applying = true;
    w->busy++; /* custom commands, drops, hooks and observers run below */
    /* Chunks are walked live: records appended while applying (hooks into
     * the world buffer) are reached in the same pass. */
    for (wf_cmd_chunk *k = b->head; k; k = k->next) {
        for (uint32_t off = 0; off < k->used;) {
            wf_cmd *cmd = (wf_cmd *)(void *)(k->data + off);
            off += cmd->size;
            if (cmd->flags & WF_CMD_DONE) {
                continue;
            }
            /* what hooks record while this runs belongs to the next round */
            w->cmds.gen = world_buffer ? cmd->gen + 1 : 1;
            weft_component key = cmd->op == WF_CMD_INSERT && cmd->count == 1
                                     ? wf_cmd_values(cmd)[0].id
                                     : cmd->c;
            if (cmd->op != prev_op || key != prev_c) {
                apply_reserve_run(w, k, off - cmd->size, cmd);
            }
            prev_op = cmd->op;
            prev_c = key;
            weft_status st = apply_one(w, b, cmd);
            if (cmd->flags & WF_CMD_PLAIN) {
                cmd->flags |= WF_CMD_DONE; /* nothing to release */
            } else {
                wf_cmd_release(b, cmd);
            }
            if (st != WEFT_OK && first == WEFT_OK) {
                first = st;
            }
            if (!world_buffer && (w->cmds.count || w->events.has_dead)) {
                wf_world_settle(w);
            }
        }
    }
    wf_cmds_reset(b);
    b->applying = false;
    w->busy--;
    if (world_buffer) {
        w->cmds.gen = 0;
    }
    return first;
}

void wf_world_settle(weft_world *w)
{
    if (w->iter_depth || w->settling) {
        return;
    }
    if (w->cmds.count) {
        w->settling = true;
        wf_cmds_apply(w, &w->cmds);
        w->settling = false;
    }
    if (w->events.has_dead) {
        wf_events_sweep(&w->events, &w->alloc);
    }
}

void wf_defer_fini(weft_world *w)
{
    while (w->buffers) {
        weft_commands *b = w->buffers;
        w->buffers = b->next;
        wf_cmds_fini(b);
        wf_free(&w->alloc, b, sizeof *b, _Alignof(weft_commands));
    }
    wf_cmds_fini(&w->cmds);
}

void wf_world_iter_end(wf_iter *it, bool completed)
{
    weft_world *w = it->world;
    weft_query *q = it->query;
    it->state = WF_ITER_DONE;
    if (it->mode == WF_ITER_TASK) {
        return; /* the dispatching system owns the query's state */
    }
    /* an iteration that no longer holds its slot (a copy of an iterator
     * ended already, or one a system left open) ends nothing more */
    bool held_depth;
    if (!wf_iter_close(it, &held_depth)) {
        return;
    }
    if (completed && it->mode == WF_ITER_WORLD) {
        q->last_run = it->this_run;
    }
    if (held_depth && --w->iter_depth == 0) {
        wf_world_settle(w); /* what the iteration deferred */
    }
}

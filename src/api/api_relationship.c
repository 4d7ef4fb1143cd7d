/* src/api/api_relationship.c - relationships, ChildOf, traversal.
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

#include <string.h>

#include "world/entity.h"
#include "world/relationship.h"

/* The source component of relationship `rel`, or NULL (error recorded). */
static const wf_type_info *rel_info(const weft_world *w, weft_component rel, const char *fn)
{
    const wf_type_info *ti = wf_registry_get(&w->registry, rel);
    if (!ti) {
        wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT, "%s: component id %u is not registered", fn,
                 rel);
        return NULL;
    }
    if (!ti->rel_targets) {
        wf_error(w, WEFT_ERR_INVALID_ARG, "%s: component '%s' is not a relationship", fn,
                 ti->name);
        return NULL;
    }
    return ti;
}

WEFT_API weft_component weft_relationship_register(weft_world *world,
                                                   const weft_relationship_desc *desc)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    if (!desc || desc->_start_canary || desc->_end_canary || !desc->name ||
        !desc->name[0] || (desc->flags & ~(uint32_t)WEFT_RELATIONSHIP_LINKED_DESPAWN)) {
        wf_error(world, WEFT_ERR_INVALID_ARG,
                 "weft_relationship_register: desc is NULL, has a canary set, no name, or "
                 "unknown flags");
        return 0;
    }
    return wf_relationship_register(world, desc->name, desc->flags);
}

WEFT_API weft_component weft_relationship_targets(const weft_world *world, weft_component rel)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    const wf_type_info *ti = wf_registry_get(&world->registry, rel);
    return ti ? ti->rel_targets : 0;
}

WEFT_API weft_component weft_child_of(weft_world *world)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    return wf_child_of(world);
}

WEFT_API weft_status weft_relate(weft_world *world, weft_entity source, weft_component rel,
                                 weft_entity target)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    const wf_type_info *ti = rel_info(world, rel, "weft_relate");
    if (!ti) {
        return world->last_status;
    }
    return wf_relate(world, source, ti, target);
}

WEFT_API weft_status weft_unrelate(weft_world *world, weft_entity source, weft_component rel)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!rel_info(world, rel, "weft_unrelate")) {
        return world->last_status;
    }
    return wf_entity_remove(world, source, rel, "weft_remove");
}

WEFT_API weft_entity weft_related(const weft_world *world, weft_entity source,
                                  weft_component rel)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    const wf_type_info *ti = wf_rel_info(world, rel);
    return ti ? wf_rel_target(world, source, ti) : 0;
}

WEFT_API const weft_entity *weft_related_sources(const weft_world *world, weft_entity target,
                                                 weft_component rel, int32_t *out_count)
{
    if (out_count) {
        *out_count = 0;
    }
    if (!wf_world_ok(world)) {
        return NULL;
    }
    return wf_rel_sources(world, target, wf_rel_info(world, rel), out_count);
}

WEFT_API weft_status weft_set_parent(weft_world *world, weft_entity child, weft_entity parent)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    weft_component c = wf_child_of(world);
    return c ? wf_relate(world, child, wf_registry_get(&world->registry, c), parent)
             : world->last_status;
}

WEFT_API weft_status weft_remove_parent(weft_world *world, weft_entity child)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!world->child_of) {
        wf_record *rec;
        return wf_entity_check(world, child, &rec);
    }
    return wf_entity_remove(world, child, world->child_of, "weft_remove");
}

WEFT_API weft_entity weft_parent(const weft_world *world, weft_entity e)
{
    if (!wf_world_ok(world) || !world->child_of) {
        return 0;
    }
    const wf_type_info *ti = wf_rel_info(world, world->child_of);
    return ti ? wf_rel_target(world, e, ti) : 0;
}

WEFT_API const weft_entity *weft_children(const weft_world *world, weft_entity e,
                                          int32_t *out_count)
{
    if (!wf_world_ok(world) || !world->child_of) {
        if (out_count) {
            *out_count = 0;
        }
        return NULL;
    }
    if (out_count) {
        *out_count = 0;
    }
    return wf_rel_sources(world, e, wf_rel_info(world, world->child_of), out_count);
}

WEFT_API int32_t weft_ancestors(const weft_world *world, weft_entity e, weft_component rel,
                                weft_entity *out, int32_t cap)
{
    if (!wf_world_ok(world)) {
        return -1;
    }
    const wf_type_info *ti = rel_info(world, rel, "weft_ancestors");
    wf_record *rec;
    if (!ti || wf_entity_check(world, e, &rec) != WEFT_OK || cap < 0 || (cap && !out)) {
        return -1;
    }
    int32_t n = 0;
    int64_t steps = world->entities.live;
    for (weft_entity p = wf_rel_target(world, e, ti); p && p != e && steps-- > 0;
         p = wf_rel_target(world, p, ti)) {
        if (n < cap) {
            out[n] = p;
        }
        n++;
    }
    return n;
}

WEFT_API int64_t weft_descendants(weft_world *world, weft_entity e, weft_component rel,
                                  weft_entity *out, int64_t cap)
{
    if (!wf_world_ok(world)) {
        return -1;
    }
    const wf_type_info *ti = rel_info(world, rel, "weft_descendants");
    wf_record *rec;
    if (!ti || wf_entity_check(world, e, &rec) != WEFT_OK || cap < 0 || (cap && !out)) {
        return -1;
    }
    /* breadth first over a scratch queue from the world's allocator */
    uint32_t qcap = 0;
    uint32_t qlen = 0;
    uint32_t head = 0;
    weft_entity *queue = NULL;
    if (!wf_grow_ex(&world->alloc, (void **)&queue, &qcap, 1, 64, UINT32_MAX, sizeof *queue,
                    _Alignof(weft_entity))) {
        wf_error(world, WEFT_ERR_OUT_OF_MEMORY, "weft_descendants: no scratch memory");
        return -1;
    }
    queue[qlen++] = e;
    int64_t n = 0;
    while (head < qlen) {
        weft_entity cur = queue[head++];
        const wf_rel_list *l = wf_rel_list_of(world, cur, ti);
        for (int32_t i = 0; l && i < l->count; i++) {
            weft_entity child = l->items[i];
            if (child == e) {
                continue; /* a cycle back to the start */
            }
            if (n < cap) {
                out[n] = child;
            }
            n++;
            if (n > world->entities.live) {
                wf_free(&world->alloc, queue, qcap * sizeof *queue, _Alignof(weft_entity));
                wf_error(world, WEFT_ERR_RELATIONSHIP, "weft_descendants: '%s' forms a cycle",
                         ti->name);
                return -1;
            }
            if (qlen == qcap &&
                !wf_grow_ex(&world->alloc, (void **)&queue, &qcap, (uint64_t)qlen + 1, 64,
                            UINT32_MAX, sizeof *queue, _Alignof(weft_entity))) {
                wf_free(&world->alloc, queue, qcap * sizeof *queue, _Alignof(weft_entity));
                wf_error(world, WEFT_ERR_OUT_OF_MEMORY, "weft_descendants: no scratch memory");
                return -1;
            }
            queue[qlen++] = child;
        }
    }
    wf_free(&world->alloc, queue, qcap * sizeof *queue, _Alignof(weft_entity));
    return n;
}

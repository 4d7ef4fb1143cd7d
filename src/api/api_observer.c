/* src/api/api_observer.c - custom events, observers, triggers.
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"
#include "module/module.h"

WEFT_API weft_event weft_event_register(weft_world *world, const weft_event_desc *desc)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    if (!desc || desc->_start_canary || desc->_end_canary || !desc->name ||
        !desc->name[0]) {
        wf_error(world, WEFT_ERR_INVALID_ARG,
                 "weft_event_register: desc is NULL, has a canary set, or no name");
        return 0;
    }
    if (wf_events_lookup(&world->events, desc->name)) {
        wf_error(world, WEFT_ERR_ALREADY_EXISTS, "event '%s' is already registered",
                 desc->name);
        return 0;
    }
    weft_event id = wf_events_register(&world->events, &world->alloc, desc->name,
                                       desc->payload_size);
    if (!id) {
        wf_error(world, WEFT_ERR_OUT_OF_MEMORY, "out of memory registering event '%s'",
                 desc->name);
    }
    return id;
}

WEFT_API weft_observer *weft_observer_create(weft_world *world,
                                             const weft_observer_desc *desc)
{
    if (!wf_world_ok(world)) {
        return NULL;
    }
    if (wf_world_refuse_shared(world, "weft_observer_create")) {
        return NULL;
    }
    if (!desc || desc->_start_canary || desc->_end_canary || !desc->fn) {
        wf_error(world, WEFT_ERR_INVALID_ARG,
                 "weft_observer_create: desc is NULL, has a canary set, or no fn");
        return NULL;
    }
    bool lifecycle = desc->event >= WEFT_EVENT_ADD && desc->event <= WEFT_EVENT_DESPAWN;
    if (lifecycle) {
        if (!wf_registry_get(&world->registry, desc->component)) {
            wf_error(world, WEFT_ERR_UNKNOWN_COMPONENT,
                     "weft_observer_create: lifecycle observers need a registered "
                     "component (got id %u)",
                     desc->component);
            return NULL;
        }
    } else if (!wf_events_type(&world->events, desc->event)) {
        wf_error(world, WEFT_ERR_NOT_FOUND, "weft_observer_create: unknown event id %u",
                 desc->event);
        return NULL;
    } else if (desc->component) {
        wf_error(world, WEFT_ERR_INVALID_ARG,
                 "weft_observer_create: custom event observers take no component");
        return NULL;
    }
    if (desc->entity) {
        wf_record *rec;
        if (wf_entity_check(world, desc->entity, &rec) != WEFT_OK) {
            return NULL;
        }
    }
    if (world->module_build) {
        if (desc->entity) {
            wf_error(world, WEFT_ERR_UNSUPPORTED,
                     "weft_observer_create: an observer of one entity from a reloadable "
                     "module's build (it would go with its entity, behind the module's "
                     "back); observe every target, or create it in the host");
            return NULL;
        }
        weft_observer *again;
        if (wf_module_observer(world, desc, &again)) {
            return again; /* the module's observer, rebound when the reload commits */
        }
    }
    weft_observer *o = wf_observer_add(world, desc);
    if (!o) {
        return NULL;
    }
    if (world->module_build && !wf_module_observer_added(world, o)) {
        o->free_user = NULL; /* not created: the caller keeps its user */
        wf_events_kill(&world->events, o);
        wf_events_sweep(&world->events, &world->alloc);
        return NULL;
    }
    return o;
}

WEFT_API weft_status weft_observer_destroy(weft_world *world, weft_observer *observer)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_observer_destroy")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    if (!observer) {
        return WEFT_OK;
    }
    return wf_observer_remove(world, observer);
}

WEFT_API weft_status weft_trigger_event(weft_world *world, weft_event event,
                                        weft_entity target, const void *payload,
                                        size_t size, bool propagate)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (wf_world_refuse_shared(world, "weft_trigger_event")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    wf_event_type *t = wf_events_type(&world->events, event);
    if (!t) {
        return wf_error(world, WEFT_ERR_NOT_FOUND,
                        "weft_trigger_event: unknown event id %u (lifecycle events are "
                        "triggered by the world itself)",
                        event);
    }
    if (size != t->payload_size || (size && !payload)) {
        return wf_error(world, WEFT_ERR_SIZE_MISMATCH,
                        "weft_trigger_event: event '%s' carries %zu payload bytes but %zu "
                        "were passed",
                        t->name, t->payload_size, size);
    }
    if (target) {
        wf_record *rec;
        weft_status st = wf_entity_check(world, target, &rec);
        if (st != WEFT_OK) {
            return st;
        }
    }
    weft_status st = wf_trigger(world, event, target, payload, size, propagate);
    wf_world_settle(world);
    return st;
}

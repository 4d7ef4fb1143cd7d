/* src/world/lifecycle.c - hook and observer dispatch, custom triggers.
 * SPDX-License-Identifier: MIT
 *
 * Dispatch re-reads the observer list by index on every step and stops at
 * the length it had when the dispatch began: callbacks may register
 * observers (the list may be reallocated) and destroy them (they are only
 * marked dead), and neither disturbs the walk.
 */
#include "world/lifecycle.h"
#include "core/guard.h"

#include <string.h>

static weft_hook_fn lifecycle_hook(const wf_type_info *ti, weft_event event)
{
    switch (event) {
    case WEFT_EVENT_ADD:
        return ti->lifecycle.on_add;
    case WEFT_EVENT_INSERT:
        return ti->lifecycle.on_insert;
    case WEFT_EVENT_REPLACE:
        return ti->lifecycle.on_replace;
    case WEFT_EVENT_REMOVE:
        return ti->lifecycle.on_remove;
    case WEFT_EVENT_DESPAWN:
        return ti->lifecycle.on_despawn;
    default:
        return NULL;
    }
}

/* Runs observers of (event, c) bound to nobody or to `e`; `only_bound`
 * skips the unbound ones (propagation hops). */
static void lifecycle_observers(weft_world *w, weft_trigger *t, weft_component c,
                                bool only_bound)
{
    wf_obs_list *l = wf_events_list(&w->events, t->event, c);
    if (!l) {
        return;
    }
    uint32_t n = l->count;
    for (uint32_t i = 0; i < n; i++) {
        l = wf_events_list(&w->events, t->event, c); /* may have moved */
        weft_observer *o = l->items[i];
        if (o->dead) {
            continue;
        }
        if (o->entity ? o->entity != t->entity : only_bound) {
            continue;
        }
        WF_CALLBACK(w, o->fn(w, t, o->user));
    }
}

void wf_fire(weft_world *w, weft_event event, const wf_type_info *ti, weft_entity e)
{
    w->iter_depth++;
    w->busy++;
    w->events.dispatching++;
    weft_hook_fn hook = lifecycle_hook(ti, event);
    if (hook) {
        WF_CALLBACK(w, hook(w, e, ti->id, ti->lifecycle.user));
    }
    weft_trigger t;
    t.event = event;
    t.component = ti->id;
    t.entity = e;
    t.original = e;
    t.payload = NULL;
    t.payload_size = 0;
    t.propagate = false;
    lifecycle_observers(w, &t, ti->id, false);
    w->events.dispatching--;
    w->busy--;
    w->iter_depth--;
}

void wf_fire_archetype(weft_world *w, weft_event event, const wf_archetype *arch,
                       weft_entity e)
{
    uint8_t bit = wf_event_bit(event);
    if (!(arch->event_mask & bit)) {
        return;
    }
    for (uint32_t i = 0; i < arch->id_count; i++) {
        const wf_type_info *ti = wf_registry_get(&w->registry, arch->ids[i]);
        if (ti->event_mask & bit) {
            wf_fire(w, event, ti, e);
        }
    }
}

weft_status wf_trigger(weft_world *w, weft_event event, weft_entity target,
                       const void *payload, size_t size, bool propagate)
{
    if (w->trigger_depth >= WEFT_MAX_EVENT_DEPTH) {
        return wf_error(w, WEFT_ERR_DEPTH_LIMIT,
                        "weft_trigger_event: triggers nested deeper than %u",
                        WEFT_MAX_EVENT_DEPTH);
    }
    w->trigger_depth++;
    w->iter_depth++;
    w->busy++;
    w->events.dispatching++;
    weft_trigger t;
    t.event = event;
    t.component = 0;
    t.entity = target;
    t.original = target;
    t.payload = payload;
    t.payload_size = size;
    t.propagate = propagate;
    /* every-target observers once, then the targeted ones hop by hop */
    lifecycle_observers(w, &t, 0, false);
    uint32_t hops = 0;
    weft_component child_of = w->child_of;
    /* a chain of parents is at most as long as there are entities: a walk
     * beyond that is going round a cycle (which restore and relate refuse
     * to make), and stops there */
    int64_t max_hops = w->entities.live + 1;
    while (t.propagate && target && child_of && (int64_t)hops < max_hops) {
        const wf_record *r = wf_entity_live(w, target);
        if (!r) {
            break;
        }
        const wf_column *col =
            wf_table_column(wf_world_archetype(w, r->arch)->table, child_of);
        if (!col) {
            break; /* a root */
        }
        weft_entity parent;
        memcpy(&parent, wf_column_ptr(col, r->row), sizeof parent);
        if (!wf_entity_live(w, parent) || parent == t.original) {
            break;
        }
        target = parent;
        t.entity = parent;
        lifecycle_observers(w, &t, 0, true);
        hops++;
    }
    w->events.dispatching--;
    w->busy--;
    w->iter_depth--;
    w->trigger_depth--;
    return WEFT_OK;
}

void wf_observers_forget(weft_world *w, weft_entity e)
{
    for (weft_observer *o = w->events.all; o; o = o->next) {
        if (o->entity == e && !o->dead) {
            wf_events_kill(&w->events, o);
            w->targeted_observers--;
        }
    }
}

void wf_listen(weft_world *w, weft_component c, uint8_t bit)
{
    wf_type_info *ti = wf_registry_get(&w->registry, c);
    if ((ti->event_mask & bit) == bit) {
        return;
    }
    ti->event_mask |= bit;
    for (uint32_t k = 0; k < ti->arch_count; k++) {
        w->graph.archetypes[ti->archs[k]]->event_mask |= bit;
    }
}

weft_observer *wf_observer_add(weft_world *w, const weft_observer_desc *desc)
{
    bool lifecycle = desc->event >= WEFT_EVENT_ADD && desc->event <= WEFT_EVENT_DESPAWN;
    weft_observer *o = wf_calloc(&w->alloc, sizeof *o, _Alignof(weft_observer));
    if (!o) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory creating an observer");
        return NULL;
    }
    o->event = desc->event;
    o->component = lifecycle ? desc->component : 0;
    o->entity = desc->entity;
    o->fn = desc->fn;
    o->user = desc->user;
    o->free_user = desc->free_user;
    if (!wf_events_add(&w->events, &w->alloc, o)) {
        wf_free(&w->alloc, o, sizeof *o, _Alignof(weft_observer));
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory creating an observer");
        return NULL;
    }
    if (lifecycle) {
        /* archetypes that exist already learn that this event is observed */
        wf_listen(w, desc->component, wf_event_bit(desc->event));
    }
    if (o->entity) {
        w->targeted_observers++;
    }
    return o;
}

weft_status wf_observer_remove(weft_world *w, weft_observer *observer)
{
    bool found = false;
    for (weft_observer *o = w->events.all; o && !found; o = o->next) {
        found = o == observer;
    }
    if (!found) {
        return wf_error(w, WEFT_ERR_INVALID_HANDLE,
                        "weft_observer_destroy: not an observer of this world");
    }
    if (!observer->dead) {
        wf_events_kill(&w->events, observer);
        if (observer->entity) {
            w->targeted_observers--;
        }
    }
    wf_events_sweep(&w->events, &w->alloc);
    return WEFT_OK;
}

/* src/world/lifecycle.h - dispatch of lifecycle events and custom triggers.
 * SPDX-License-Identifier: MIT
 *
 * A lifecycle event for (event, component, entity) runs the component's hook
 * and then the observers of that event and component, in registration
 * order, with the world deferring structural calls (iter_depth raised).
 * The structural paths test the component's or archetype's event_mask
 * before calling in here, so unobserved components cost one test.
 * Driver thread only.
 */
#ifndef WF_LIFECYCLE_H
#define WF_LIFECYCLE_H

#include "world/world.h"

/* Runs the hook and observers of lifecycle `event` for component ti on e. */
void wf_fire(weft_world *w, weft_event event, const wf_type_info *ti, weft_entity e);

/* Fires `event` for every value in `values` whose component listens. */
static inline void wf_fire_values(weft_world *w, weft_event event, const weft_value *values,
                                  int32_t count, weft_entity e)
{
    uint8_t bit = wf_event_bit(event);
    for (int32_t i = 0; i < count; i++) {
        const wf_type_info *ti = wf_registry_get(&w->registry, values[i].id);
        if (ti->event_mask & bit) {
            wf_fire(w, event, ti, e);
        }
    }
}

/* Fires `event` for every component of archetype `arch` that listens. */
void wf_fire_archetype(weft_world *w, weft_event event, const wf_archetype *arch,
                       weft_entity e);

/* Runs a custom trigger (validated); see weft_trigger_event. */
weft_status wf_trigger(weft_world *w, weft_event event, weft_entity target,
                       const void *payload, size_t size, bool propagate);

/* Marks every observer bound to e dead (e is being despawned). */
void wf_observers_forget(weft_world *w, weft_entity e);

/* Sets `bit` on component c and on every archetype holding it (a hook or
 * observer now listens). */
void wf_listen(weft_world *w, weft_component c, uint8_t bit);

/* Creates an observer from a checked descriptor (fn set; a lifecycle
 * event's component registered, a custom event's type known; entity 0 or
 * live): what weft_observer_create does past its checks and a reloadable
 * module's bookkeeping. NULL with OUT_OF_MEMORY recorded. */
weft_observer *wf_observer_add(weft_world *w, const weft_observer_desc *desc);
/* Destroys an observer of w (INVALID_HANDLE recorded when it is none). */
weft_status wf_observer_remove(weft_world *w, weft_observer *observer);

#endif

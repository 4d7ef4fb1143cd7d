/* src/events/observer.h - observer registry and custom event types.
 * SPDX-License-Identifier: MIT
 *
 * Observers are kept in lists, one per (lifecycle event, component) and one
 * per custom event, in registration order. A list is dispatched by index up
 * to the length it had when dispatch began, so an observer registered
 * during a trigger does not see it. Destroying an observer during a
 * dispatch only marks it dead; dead observers are unlinked when no dispatch
 * is running. Each component also carries an `event_mask` (one bit per
 * lifecycle event with a hook or an observer), copied into the archetypes
 * holding it, so the structural paths skip all event work with one test
 * when nobody listens. Driver thread only.
 */
#ifndef WF_OBSERVER_H
#define WF_OBSERVER_H

#include "storage/archetype_graph.h"

#define WF_LIFECYCLE_EVENTS 5u

struct weft_observer {
    weft_event event;
    weft_component component; /* lifecycle: the component; custom: 0 */
    weft_entity entity;       /* 0: any target */
    weft_observer_fn fn;
    void *user;
    void (*free_user)(void *user);
    bool dead;
    struct weft_observer *next; /* every observer of the world */
};

typedef struct wf_obs_list {
    weft_observer **items;
    uint32_t count;
    uint32_t cap;
} wf_obs_list;

typedef struct wf_event_type {
    char *name;
    size_t name_len;
    size_t payload_size;
    wf_obs_list observers;
} wf_event_type;

typedef struct wf_events {
    wf_obs_list *lifecycle;   /* [lifecycle_cap * 5]: component id * 5 + event - 1 */
    uint32_t lifecycle_cap;   /* components covered */
    wf_event_type *types;     /* [type_count] custom events; id = index + 16 */
    uint32_t type_count;
    uint32_t type_cap;
    weft_observer *all;       /* every observer (for teardown) */
    uint32_t dispatching;     /* dispatches in progress */
    bool has_dead;            /* some observer is marked dead */
} wf_events;

/* Custom event ids start here (1..5 are lifecycle). */
#define WF_EVENT_CUSTOM_BASE 16u

void wf_events_init(wf_events *ev);
void wf_events_fini(wf_events *ev, wf_allocator *a);
/* Registers a custom event; 0 on OOM. Name uniqueness is the caller's. */
weft_event wf_events_register(wf_events *ev, wf_allocator *a, const char *name,
                              size_t payload_size);
/* Custom event by id, or NULL. */
wf_event_type *wf_events_type(wf_events *ev, weft_event id);
/* Custom event by name, or 0. */
weft_event wf_events_lookup(const wf_events *ev, const char *name);
/* The list for a lifecycle (event, component) or custom event; NULL when
 * nothing was ever registered there. */
wf_obs_list *wf_events_list(wf_events *ev, weft_event event, weft_component c);
/* Adds an observer (fields filled by the caller) to its list; false on OOM
 * (nothing changed). */
bool wf_events_add(wf_events *ev, wf_allocator *a, weft_observer *o);
/* Marks an observer dead (unlinked later by wf_events_sweep). */
void wf_events_kill(wf_events *ev, weft_observer *o);
/* Unlinks and frees dead observers; only when nothing is dispatching. */
void wf_events_sweep(wf_events *ev, wf_allocator *a);
/* Bit of a lifecycle event in event masks. */
static inline uint8_t wf_event_bit(weft_event event)
{
    return (uint8_t)(1u << (event - 1u));
}

#endif

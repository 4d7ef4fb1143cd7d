/* src/events/observer.c - observer lists and custom event types.
 * SPDX-License-Identifier: MIT
 */
#include "events/observer.h"
#include "core/guard.h"

#include <string.h>

void wf_events_init(wf_events *ev)
{
    memset(ev, 0, sizeof *ev);
}

static void obs_list_free(wf_obs_list *l, wf_allocator *a)
{
    wf_free(a, l->items, l->cap * sizeof *l->items, _Alignof(weft_observer *));
    l->items = NULL;
    l->count = l->cap = 0;
}

void wf_events_fini(wf_events *ev, wf_allocator *a)
{
    while (ev->all) {
        weft_observer *o = ev->all;
        ev->all = o->next;
        if (o->free_user) {
            WF_CALLBACK(ev, o->free_user(o->user));
        }
        wf_free(a, o, sizeof *o, _Alignof(weft_observer));
    }
    for (uint32_t i = 0; i < ev->lifecycle_cap * WF_LIFECYCLE_EVENTS; i++) {
        obs_list_free(&ev->lifecycle[i], a);
    }
    wf_free(a, ev->lifecycle,
            (size_t)ev->lifecycle_cap * WF_LIFECYCLE_EVENTS * sizeof(wf_obs_list),
            _Alignof(wf_obs_list));
    for (uint32_t i = 0; i < ev->type_count; i++) {
        obs_list_free(&ev->types[i].observers, a);
        wf_free(a, ev->types[i].name, ev->types[i].name_len + 1, 1);
    }
    wf_free(a, ev->types, ev->type_cap * sizeof *ev->types, _Alignof(wf_event_type));
    memset(ev, 0, sizeof *ev);
}

weft_event wf_events_register(wf_events *ev, wf_allocator *a, const char *name,
                              size_t payload_size)
{
    /* event ids are WF_EVENT_CUSTOM_BASE + index: the limit keeps them in range */
    if (ev->type_count == ev->type_cap &&
        !wf_grow_ex(a, (void **)&ev->types, &ev->type_cap, (uint64_t)ev->type_count + 1, 8,
                    UINT32_MAX - WF_EVENT_CUSTOM_BASE, sizeof *ev->types,
                    _Alignof(wf_event_type))) {
        return 0;
    }
    wf_event_type *t = &ev->types[ev->type_count];
    memset(t, 0, sizeof *t);
    t->name = wf_strdup(a, name, &t->name_len);
    if (!t->name) {
        return 0;
    }
    t->payload_size = payload_size;
    return WF_EVENT_CUSTOM_BASE + ev->type_count++;
}

wf_event_type *wf_events_type(wf_events *ev, weft_event id)
{
    if (id < WF_EVENT_CUSTOM_BASE || id - WF_EVENT_CUSTOM_BASE >= ev->type_count) {
        return NULL;
    }
    return &ev->types[id - WF_EVENT_CUSTOM_BASE];
}

weft_event wf_events_lookup(const wf_events *ev, const char *name)
{
    for (uint32_t i = 0; i < ev->type_count; i++) {
        if (strcmp(ev->types[i].name, name) == 0) {
            return WF_EVENT_CUSTOM_BASE + i;
        }
    }
    return 0;
}

wf_obs_list *wf_events_list(wf_events *ev, weft_event event, weft_component c)
{
    if (event >= WEFT_EVENT_ADD && event <= WEFT_EVENT_DESPAWN) {
        if (c >= ev->lifecycle_cap) {
            return NULL;
        }
        return &ev->lifecycle[c * WF_LIFECYCLE_EVENTS + event - 1];
    }
    wf_event_type *t = wf_events_type(ev, event);
    return t ? &t->observers : NULL;
}

/* Grows the lifecycle table to cover component c. */
static bool events_cover(wf_events *ev, wf_allocator *a, weft_component c)
{
    if (c < ev->lifecycle_cap) {
        return true;
    }
    uint32_t cap = wf_grow_cap(ev->lifecycle_cap, (uint64_t)c + 1, 16, UINT32_MAX,
                               WF_LIFECYCLE_EVENTS * sizeof(wf_obs_list));
    if (cap == 0) {
        return false;
    }
    size_t n = (size_t)cap * WF_LIFECYCLE_EVENTS;
    wf_obs_list *l = wf_calloc(a, n * sizeof *l, _Alignof(wf_obs_list));
    if (!l) {
        return false;
    }
    size_t old = (size_t)ev->lifecycle_cap * WF_LIFECYCLE_EVENTS;
    if (old) {
        memcpy(l, ev->lifecycle, old * sizeof *l);
    }
    wf_free(a, ev->lifecycle, old * sizeof *l, _Alignof(wf_obs_list));
    ev->lifecycle = l;
    ev->lifecycle_cap = cap;
    return true;
}

bool wf_events_add(wf_events *ev, wf_allocator *a, weft_observer *o)
{
    bool lifecycle = o->event >= WEFT_EVENT_ADD && o->event <= WEFT_EVENT_DESPAWN;
    if (lifecycle && !events_cover(ev, a, o->component)) {
        return false;
    }
    wf_obs_list *l = wf_events_list(ev, o->event, o->component);
    if (!l) {
        return false;
    }
    if (l->count == l->cap &&
        !wf_grow_ex(a, (void **)&l->items, &l->cap, (uint64_t)l->count + 1, 4, UINT32_MAX,
                    sizeof *l->items, _Alignof(weft_observer *))) {
        return false;
    }
    l->items[l->count++] = o;
    o->next = ev->all;
    ev->all = o;
    return true;
}

void wf_events_kill(wf_events *ev, weft_observer *o)
{
    o->dead = true;
    ev->has_dead = true;
}

void wf_events_sweep(wf_events *ev, wf_allocator *a)
{
    if (!ev->has_dead || ev->dispatching) {
        return;
    }
    weft_observer **link = &ev->all;
    while (*link) {
        weft_observer *o = *link;
        if (!o->dead) {
            link = &o->next;
            continue;
        }
        wf_obs_list *l = wf_events_list(ev, o->event, o->component);
        uint32_t k = 0;
        for (uint32_t i = 0; i < l->count; i++) {
            if (l->items[i] != o) {
                l->items[k++] = l->items[i];
            }
        }
        l->count = k;
        *link = o->next;
        if (o->free_user) {
            WF_CALLBACK(ev, o->free_user(o->user));
        }
        wf_free(a, o, sizeof *o, _Alignof(weft_observer));
    }
    ev->has_dead = false;
}

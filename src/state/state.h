/* src/state/state.h - finite state machines built from resources,
 * messages and schedules.
 * SPDX-License-Identifier: MIT
 *
 * The state layer sits above the schedule layer and below the API (and
 * the App). A state type is a record in the world's state table
 * (weft_world.states, created on first registration, freed through
 * weft_world.states_fini): its values sorted by value, the ids of the
 * components, resources and message type registered for it, and the
 * OnEnter/OnExit/OnTransition schedules created on demand. Records are
 * allocated one by one and never move, so a pointer to one stays valid
 * while the table grows; ids count from 1 in registration order, and a
 * state's sources always have smaller ids (they must exist first), so
 * id order is a topological order of the dependency DAG: ascending is
 * root to leaf, descending leaf to root.
 *
 * Invariants between transition steps, for every state type t:
 *   - t->present == the State resource is present, and when present its
 *     value == t->cur (the resource is written only by this layer: it is
 *     immutable to users);
 *   - a freely mutable state is present from its first transition step on
 *     (nothing is inserted at registration, so a world with states and no
 *     step is still a valid snapshot restore target); a sub state is
 *     present only if its source is present with source_value; a computed
 *     state is present iff its last computation returned a value;
 *   - the schedules in t->scheds are owned (weft_schedule.owned) and
 *     freed by the system layer with every other schedule of the world.
 *
 * Threads: everything here runs on the driver thread, or inside an
 * exclusive system (transitions, which run schedules); systems touch
 * states only through their declared resources.
 */
#ifndef WF_STATE_H
#define WF_STATE_H

#include "schedule/schedule.h"

/* What an owned schedule of a state runs on. */
enum wf_state_sched_kind { WF_STATE_ENTER = 0, WF_STATE_EXIT = 1, WF_STATE_TRANS = 2 };

typedef struct wf_state_sched {
    uint8_t kind;              /* wf_state_sched_kind */
    uint32_t from;             /* ENTER/EXIT: the value; TRANS: exited */
    uint32_t to;               /* TRANS: entered */
    weft_schedule *sched;      /* owned by the world's schedule list */
} wf_state_sched;

/* One transition of a state within a step (also its message). */
typedef struct wf_state_ev {
    bool any;                  /* the state changed this step */
    bool same;                 /* set to its own value: exit/enter run again */
    uint32_t exited, entered;  /* WEFT_STATE_VALUE_NONE: absent */
} wf_state_ev;

typedef struct wf_state_type {
    weft_state id;
    char *name;                /* owned */
    size_t name_len;
    weft_state_kind kind;
    weft_state_value *values;  /* [nvalues] sorted by value; names owned */
    int32_t nvalues;
    uint32_t initial;
    weft_state source;         /* SUB */
    uint32_t source_value;     /* SUB */
    weft_state *sources;       /* COMPUTED: [nsources] */
    int32_t nsources;
    weft_state_compute_fn compute;
    void *user;
    weft_component res_state;  /* State<name> */
    weft_component res_next;   /* NextState<name>; 0 for computed states */
    weft_component on_exit;    /* DespawnOnExit<name> */
    weft_component on_enter;   /* DespawnOnEnter<name> */
    weft_message_type msg;     /* StateTransitionEvent<name> */
    weft_message_cursor cursor; /* the despawn reader's position in msg */
    bool present;              /* see the invariants above */
    uint32_t cur;              /* current value when present */
    bool dirty;                /* not stepped yet: a freely mutable state
                                  without State enters its initial value,
                                  sub and computed states are evaluated */
    wf_state_ev ev;            /* this step's transition (scratch) */
    wf_state_ev swept;         /* the last message read by the despawn
                                  sweeps this step (scratch) */
    wf_state_sched *scheds;    /* [nscheds] created on demand */
    uint32_t nscheds, cap_scheds;
} wf_state_type;

typedef struct wf_states {
    wf_state_type **types;     /* [count]: id i at types[i - 1] */
    uint32_t count, cap;
    bool in_transition;        /* weft_state_transition is running */
} wf_states;

/* ---- state.c ---- */
/* The state with id `s`, or NULL (nothing recorded). */
wf_state_type *wf_state_get(const weft_world *w, weft_state s);
/* The state with id `s`, or NULL with NOT_FOUND recorded naming fn. */
wf_state_type *wf_state_find(const weft_world *w, weft_state s, const char *fn);
/* The state named `name`, or 0. */
weft_state wf_state_lookup(const weft_world *w, const char *name);
/* Index of `value` in t->values, or -1. */
int32_t wf_state_value_index(const wf_state_type *t, uint32_t value);
/* Name of `value` ("?" when it is none of t's values, "none" for NONE). */
const char *wf_state_value_str(const wf_state_type *t, uint32_t value);
/* Validates and registers a state type; 0 on failure (recorded, world
 * unchanged). */
weft_state wf_state_register(weft_world *w, const weft_state_desc *desc);
/* The validation of wf_state_register alone (recorded; nothing changes). */
weft_status wf_state_register_check(weft_world *w, const weft_state_desc *desc);
/* The owned schedule (kind, from, to) of t, created on first use; NULL on
 * failure (recorded). */
weft_schedule *wf_state_schedule(weft_world *w, wf_state_type *t, uint8_t kind,
                                 uint32_t from, uint32_t to);
/* The owned schedule (kind, from, to) of t if it was created, else NULL. */
weft_schedule *wf_state_schedule_find(const wf_state_type *t, uint8_t kind, uint32_t from,
                                      uint32_t to);
/* Queues `value` (validated by the caller) in t's NextState resource. */
weft_status wf_state_queue(weft_world *w, wf_state_type *t, uint32_t value);

/* ---- transition.c ---- */
/* Runs one transition step (weft_state_transition). */
weft_status wf_state_transition(weft_world *w);

#endif

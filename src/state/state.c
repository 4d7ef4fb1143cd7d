/* src/state/state.c - state types: registration, lookup, queued values and
 * the schedules owned by each state.
 * SPDX-License-Identifier: MIT
 *
 * Registration validates the whole descriptor before it changes anything,
 * then allocates the record, then registers the derived components
 * (State, NextState, DespawnOnExit, DespawnOnEnter), inserts the initial
 * resources and registers the message type last: every step before the
 * message type can be undone (components are popped newest first), and
 * the message type, which cannot be unregistered, is the one step after
 * which nothing can fail. So a failed registration leaves the world as it
 * was. See state.h for the table and its invariants.
 */
#include "state/state.h"

#include "world/messages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATE_ALIGN _Alignof(max_align_t)

/* ---- the table ---- */

static void type_free(weft_world *w, wf_state_type *t)
{
    for (int32_t i = 0; i < t->nvalues; i++) {
        const char *nm = t->values[i].name;
        if (nm) {
            wf_free(&w->alloc, (void *)(uintptr_t)nm, strlen(nm) + 1, 1);
        }
    }
    if (t->values) {
        wf_free(&w->alloc, t->values, (size_t)t->nvalues * sizeof *t->values,
                _Alignof(weft_state_value));
    }
    if (t->sources) {
        wf_free(&w->alloc, t->sources, (size_t)t->nsources * sizeof *t->sources,
                _Alignof(weft_state));
    }
    if (t->scheds) {
        wf_free(&w->alloc, t->scheds, (size_t)t->cap_scheds * sizeof *t->scheds,
                STATE_ALIGN);
    }
    if (t->name) {
        wf_free(&w->alloc, t->name, t->name_len + 1, 1);
    }
    wf_free(&w->alloc, t, sizeof *t, _Alignof(wf_state_type));
}

/* The schedules themselves belong to the world's schedule list and are
 * freed with it. */
static void states_fini(weft_world *w)
{
    wf_states *st = w->states;
    for (uint32_t i = 0; i < st->count; i++) {
        type_free(w, st->types[i]);
    }
    if (st->types) {
        wf_free(&w->alloc, st->types, (size_t)st->cap * sizeof *st->types,
                _Alignof(wf_state_type *));
    }
    wf_free(&w->alloc, st, sizeof *st, _Alignof(wf_states));
    w->states = NULL;
    w->states_fini = NULL;
}

wf_state_type *wf_state_get(const weft_world *w, weft_state s)
{
    const wf_states *st = w->states;
    return st && s - 1u < st->count ? st->types[s - 1u] : NULL;
}

wf_state_type *wf_state_find(const weft_world *w, weft_state s, const char *fn)
{
    wf_state_type *t = wf_state_get(w, s);
    if (!t) {
        wf_error(w, WEFT_ERR_NOT_FOUND, "%s: state id %u is not registered", fn, s);
    }
    return t;
}

weft_state wf_state_lookup(const weft_world *w, const char *name)
{
    const wf_states *st = w->states;
    for (uint32_t i = 0; st && i < st->count; i++) {
        if (strcmp(st->types[i]->name, name) == 0) {
            return st->types[i]->id;
        }
    }
    return 0;
}

int32_t wf_state_value_index(const wf_state_type *t, uint32_t value)
{
    int32_t lo = 0;
    int32_t hi = t->nvalues - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        uint32_t v = t->values[mid].value;
        if (v == value) {
            return mid;
        }
        if (v < value) {
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return -1;
}

const char *wf_state_value_str(const wf_state_type *t, uint32_t value)
{
    if (value == WEFT_STATE_VALUE_NONE) {
        return "none";
    }
    int32_t i = wf_state_value_index(t, value);
    return i < 0 ? "?" : t->values[i].name;
}

/* ---- registration ---- */

static int cmp_value(const void *a, const void *b)
{
    uint32_t x = ((const weft_state_value *)a)->value;
    uint32_t y = ((const weft_state_value *)b)->value;
    return (x > y) - (x < y);
}

/* Validates everything that does not depend on the world's contents. */
static weft_status desc_check(weft_world *w, const weft_state_desc *d)
{
    const char *fn = "weft_state_register";
    if (!d) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: desc is NULL", fn);
    }
    if (d->_start_canary || d->_end_canary) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "%s: descriptor canary is not 0 (was the desc zero-initialised?)", fn);
    }
    if (!d->name || !d->name[0]) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "%s: a state needs a non-empty name", fn);
    }
    const char *nm = d->name;
    if (strlen(nm) > 200) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "state '%.40s...': the name is longer than "
                        "200 bytes", nm);
    }
    if ((uint32_t)d->kind >= (uint32_t)WEFT_STATE_KIND_NUM) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "state '%s': unknown kind %u", nm,
                        (unsigned)d->kind);
    }
    if (!d->values || d->value_count < 1 || d->value_count > WEFT_MAX_STATE_VALUES) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "state '%s': values NULL or value_count %d not in 1..%d", nm,
                        d->value_count, WEFT_MAX_STATE_VALUES);
    }
    bool initial_ok = false;
    for (int32_t i = 0; i < d->value_count; i++) {
        const weft_state_value *v = &d->values[i];
        if (v->value == WEFT_STATE_VALUE_NONE) {
            return wf_error(w, WEFT_ERR_INVALID_ARG,
                            "state '%s': value %d is WEFT_STATE_VALUE_NONE, which means "
                            "'does not exist'", nm, i);
        }
        if (!v->name || !v->name[0] || strlen(v->name) > 200) {
            return wf_error(w, WEFT_ERR_INVALID_ARG,
                            "state '%s': value %u needs a name of 1..200 bytes", nm, v->value);
        }
        for (int32_t j = 0; j < i; j++) {
            if (d->values[j].value == v->value) {
                return wf_error(w, WEFT_ERR_INVALID_ARG, "state '%s': value %u is listed "
                                "twice", nm, v->value);
            }
            if (strcmp(d->values[j].name, v->name) == 0) {
                return wf_error(w, WEFT_ERR_INVALID_ARG, "state '%s': two values are named "
                                "'%s'", nm, v->name);
            }
        }
        initial_ok |= v->value == d->initial;
    }
    bool sub = d->kind == WEFT_STATE_KIND_SUB;
    bool computed = d->kind == WEFT_STATE_KIND_COMPUTED;
    if (!computed && !initial_ok) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "state '%s': initial value %u is not one of "
                        "its values", nm, d->initial);
    }
    if (!sub && (d->source || d->source_value)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "state '%s': source/source_value are for "
                        "sub states (kind WEFT_STATE_KIND_SUB)", nm);
    }
    if (!computed && (d->sources || d->source_count || d->compute || d->user)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "state '%s': sources/compute/user are for "
                        "computed states (kind WEFT_STATE_KIND_COMPUTED)", nm);
    }
    if (sub && !d->source) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "state '%s': a sub state needs a source", nm);
    }
    if (computed) {
        if (!d->compute) {
            return wf_error(w, WEFT_ERR_INVALID_ARG, "state '%s': a computed state needs a "
                            "compute callback", nm);
        }
        if (!d->sources || d->source_count < 1 ||
            d->source_count > WEFT_MAX_STATE_SOURCES) {
            return wf_error(w, WEFT_ERR_INVALID_ARG,
                            "state '%s': sources NULL or source_count %d not in 1..%d", nm,
                            d->source_count, WEFT_MAX_STATE_SOURCES);
        }
        for (int32_t i = 0; i < d->source_count; i++) {
            for (int32_t j = 0; j < i; j++) {
                if (d->sources[i] == d->sources[j]) {
                    return wf_error(w, WEFT_ERR_INVALID_ARG, "state '%s': source %u is "
                                    "listed twice", nm, d->sources[i]);
                }
            }
        }
    }
    return WEFT_OK;
}

/* Validates what depends on the world: sources and names. */
static weft_status world_check(weft_world *w, const weft_state_desc *d, char names[5][256])
{
    const char *nm = d->name;
    if (wf_state_lookup(w, nm)) {
        return wf_error(w, WEFT_ERR_ALREADY_EXISTS, "state '%s' is already registered", nm);
    }
    if (d->kind == WEFT_STATE_KIND_SUB) {
        const wf_state_type *src = wf_state_get(w, d->source);
        if (!src) {
            return wf_error(w, WEFT_ERR_NOT_FOUND, "sub state '%s': source state id %u is "
                            "not registered", nm, d->source);
        }
        if (wf_state_value_index(src, d->source_value) < 0) {
            return wf_error(w, WEFT_ERR_NOT_FOUND,
                            "sub state '%s': %u is not a value of its source '%s', so it "
                            "could never exist", nm, d->source_value, src->name);
        }
    }
    for (int32_t i = 0; d->kind == WEFT_STATE_KIND_COMPUTED && i < d->source_count; i++) {
        if (!wf_state_get(w, d->sources[i])) {
            return wf_error(w, WEFT_ERR_NOT_FOUND, "computed state '%s': source state id %u "
                            "is not registered", nm, d->sources[i]);
        }
    }
    snprintf(names[0], 256, "State<%s>", nm);
    snprintf(names[1], 256, "NextState<%s>", nm);
    snprintf(names[2], 256, "DespawnOnExit<%s>", nm);
    snprintf(names[3], 256, "DespawnOnEnter<%s>", nm);
    snprintf(names[4], 256, "StateTransitionEvent<%s>", nm);
    for (int i = 0; i < 4; i++) {
        if (wf_registry_lookup(&w->registry, names[i])) {
            return wf_error(w, WEFT_ERR_ALREADY_EXISTS, "state '%s': a component named '%s' "
                            "exists", nm, names[i]);
        }
    }
    if (wf_messages_lookup(w, names[4])) {
        return wf_error(w, WEFT_ERR_ALREADY_EXISTS, "state '%s': a message type named '%s' "
                        "exists", nm, names[4]);
    }
    if (w->registry.count + 4u > WF_MAX_COMPONENTS) {
        return wf_error(w, WEFT_ERR_CAPACITY, "state '%s': the world has %u components and "
                        "a state takes four more (limit %u)", nm, w->registry.count,
                        WF_MAX_COMPONENTS);
    }
    return WEFT_OK;
}

/* The record, filled from a validated descriptor (no world change). */
static wf_state_type *type_build(weft_world *w, const weft_state_desc *d)
{
    wf_state_type *t = wf_calloc(&w->alloc, sizeof *t, _Alignof(wf_state_type));
    if (!t) {
        return NULL;
    }
    t->name = wf_strdup(&w->alloc, d->name, &t->name_len);
    t->values = wf_calloc(&w->alloc, (size_t)d->value_count * sizeof *t->values,
                          _Alignof(weft_state_value));
    if (t->values) {
        t->nvalues = d->value_count; /* names NULL until copied */
    }
    if (!t->name || !t->values) {
        type_free(w, t);
        return NULL;
    }
    for (int32_t i = 0; i < d->value_count; i++) {
        t->values[i].value = d->values[i].value;
        size_t len;
        t->values[i].name = wf_strdup(&w->alloc, d->values[i].name, &len);
        if (!t->values[i].name) {
            type_free(w, t);
            return NULL;
        }
    }
    qsort(t->values, (size_t)t->nvalues, sizeof *t->values, cmp_value);
    if (d->kind == WEFT_STATE_KIND_COMPUTED) {
        t->sources = wf_alloc(&w->alloc, (size_t)d->source_count * sizeof *t->sources,
                              _Alignof(weft_state));
        if (!t->sources) {
            type_free(w, t);
            return NULL;
        }
        memcpy(t->sources, d->sources, (size_t)d->source_count * sizeof *t->sources);
        t->nsources = d->source_count;
    }
    t->kind = d->kind;
    t->initial = d->kind == WEFT_STATE_KIND_COMPUTED ? WEFT_STATE_VALUE_NONE : d->initial;
    t->source = d->source;
    t->source_value = d->source_value;
    t->compute = d->compute;
    t->user = d->user;
    t->cur = WEFT_STATE_VALUE_NONE;
    t->dirty = true;
    return t;
}

/* Registers one derived component (the caller checked the name is free
 * and that the registry has room). */
/* State<S>'s domain: one of S's values (a restore must not bring another). */
static const char *state_value_check(const void *value, const void *user)
{
    const wf_state_type *t = user;
    uint32_t v;
    memcpy(&v, value, sizeof v);
    return wf_state_value_index(t, v) < 0 ? "the value is none of the state's values" : NULL;
}

static weft_component add_component(weft_world *w, const char *name, size_t size,
                                    size_t align, uint32_t flags)
{
    weft_component_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.name = name;
    cd.size = size;
    cd.align = align;
    cd.flags = flags;
    wf_type_info *ti = wf_registry_add(&w->registry, &w->alloc, &cd, (uint32_t)size,
                                       (uint32_t)align, WEFT_STORAGE_TABLE);
    return ti ? ti->id : 0;
}

weft_status wf_state_register_check(weft_world *w, const weft_state_desc *d)
{
    char names[5][256];
    weft_status st = desc_check(w, d);
    return st != WEFT_OK ? st : world_check(w, d, names);
}

weft_state wf_state_register(weft_world *w, const weft_state_desc *d)
{
    if (desc_check(w, d) != WEFT_OK) {
        return 0;
    }
    char names[5][256];
    if (world_check(w, d, names) != WEFT_OK) {
        return 0;
    }
    const char *nm = d->name;
    bool fresh = w->states == NULL;
    if (fresh) {
        wf_states *st = wf_calloc(&w->alloc, sizeof *st, _Alignof(wf_states));
        if (!st) {
            wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory registering state '%s'", nm);
            return 0;
        }
        w->states = st;
        w->states_fini = states_fini;
    }
    wf_states *st = w->states;
    wf_state_type *t = NULL;
    uint32_t first = w->registry.count + 1;
    uint32_t added = 0;
    if (!wf_grow(&w->alloc, (void **)&st->types, &st->cap, (uint64_t)st->count + 1,
                 sizeof *st->types, _Alignof(wf_state_type *))) {
        goto oom;
    }
    t = type_build(w, d);
    if (!t) {
        goto oom;
    }
    /* components, in id order; popped newest first on failure */
    bool mutable_state = d->kind != WEFT_STATE_KIND_COMPUTED;
    t->res_state = add_component(w, names[0], sizeof(uint32_t), _Alignof(uint32_t),
                                 WEFT_COMPONENT_IMMUTABLE);
    if (!t->res_state) {
        goto oom;
    }
    added++;
    {
        wf_type_info *rti = wf_registry_get(&w->registry, t->res_state);
        rti->value_check = state_value_check;
        rti->check_user = t;
    }
    if (mutable_state) {
        t->res_next = add_component(w, names[1], sizeof(weft_next_state),
                                    _Alignof(weft_next_state), 0);
        if (!t->res_next) {
            goto oom;
        }
        added++;
    }
    t->on_exit = add_component(w, names[2], sizeof(uint32_t), _Alignof(uint32_t), 0);
    if (!t->on_exit) {
        goto oom;
    }
    added++;
    t->on_enter = add_component(w, names[3], sizeof(uint32_t), _Alignof(uint32_t), 0);
    if (!t->on_enter) {
        goto oom;
    }
    added++;
    /* No resource yet: the first transition step inserts State and
     * NextState (entering the initial value), so a world whose states are
     * registered but never stepped is still empty, as a snapshot restore
     * target must be. */
    t->msg = wf_messages_register(w, names[4], sizeof(weft_state_transition_event),
                                  _Alignof(weft_state_transition_event), NULL, NULL);
    if (!t->msg) {
        goto oom;
    }
    t->id = st->count + 1;
    st->types[st->count++] = t;
    return t->id;
oom:
    wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory registering state '%s'", nm);
    for (uint32_t id = first + added; id-- > first;) {
        wf_registry_pop(&w->registry, &w->alloc);
    }
    if (t) {
        type_free(w, t);
    }
    if (fresh) {
        states_fini(w); /* back to "no state table" */
    }
    return 0;
}

/* ---- owned schedules ---- */

weft_schedule *wf_state_schedule_find(const wf_state_type *t, uint8_t kind, uint32_t from,
                                      uint32_t to)
{
    for (uint32_t i = 0; i < t->nscheds; i++) {
        const wf_state_sched *ss = &t->scheds[i];
        if (ss->kind == kind && ss->from == from && (kind != WF_STATE_TRANS || ss->to == to)) {
            return ss->sched;
        }
    }
    return NULL;
}

weft_schedule *wf_state_schedule(weft_world *w, wf_state_type *t, uint8_t kind,
                                 uint32_t from, uint32_t to)
{
    weft_schedule *s = wf_state_schedule_find(t, kind, from, to);
    if (s) {
        return s;
    }
    static const char *const fns[] = {"weft_state_on_enter", "weft_state_on_exit",
                                      "weft_state_on_transition"};
    char name[1024];
    if (kind == WF_STATE_TRANS) {
        snprintf(name, sizeof name, "OnTransition(%s::%s -> %s::%s)", t->name,
                 wf_state_value_str(t, from), t->name, wf_state_value_str(t, to));
    } else {
        snprintf(name, sizeof name, "%s(%s::%s)", kind == WF_STATE_ENTER ? "OnEnter" : "OnExit",
                 t->name, wf_state_value_str(t, from));
    }
    if (!wf_grow(&w->alloc, (void **)&t->scheds, &t->cap_scheds, (uint64_t)t->nscheds + 1,
                 sizeof *t->scheds, STATE_ALIGN)) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory", fns[kind]);
        return NULL;
    }
    s = wf_schedule_create(w, name, fns[kind]);
    if (!s) {
        return NULL;
    }
    s->state_owned = true;
    wf_state_sched *ss = &t->scheds[t->nscheds++];
    ss->kind = kind;
    ss->from = from;
    ss->to = to;
    ss->sched = s;
    return s;
}

weft_status wf_state_queue(weft_world *w, wf_state_type *t, uint32_t value)
{
    wf_type_info *ti = wf_registry_get(&w->registry, t->res_next);
    weft_next_state next = {value, 1};
    if (ti->res_present) {
        /* replace in place: the last write wins */
        memcpy(ti->res_value, &next, sizeof next);
        ti->res_ticks.changed = w->change_tick;
        return WEFT_OK;
    }
    return wf_resource_insert(w, ti, &next);
}

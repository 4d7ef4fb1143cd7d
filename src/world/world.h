/* src/world/world.h - struct weft_world, its lifecycle and error slot.
 * SPDX-License-Identifier: MIT
 *
 * The world is the one object behind the API: allocator, registry, entity
 * index and archetype graph, plus the change tick and the error slot.
 * Every field is owned by the driver thread except the reservation cursor
 * inside `entities` (see storage/entity_index.h).
 */
#ifndef WF_WORLD_H
#define WF_WORLD_H

#include <stdarg.h>

#include "core/check.h"
#include "core/guard.h"
#include "core/config.h"
#include "command/command_buffer.h"
#include "events/observer.h"
#include "query/query.h"
#include "storage/archetype_graph.h"
#include "storage/entity_index.h"
#include "storage/sparse_set.h"
#include "world/journal.h"

#define WF_WORLD_MAGIC 0x77656674u /* "weft" */

#define WF_SPAWN_CACHE_IDS 8
#define WF_REQ_PLAN_LINKS 16

/* The last requirement expansion: for this source archetype, supplied id
 * list and requirement generation, these links were appended. */
typedef struct wf_req_plan {
    weft_component ids[WF_SPAWN_CACHE_IDS]; /* supplied ids, call order */
    int32_t count;                          /* 0: empty plan */
    uint32_t src;                           /* source archetype id */
    uint32_t gen;                           /* req_gen it was made for */
    int32_t link_count;
    bool any_ctor;                          /* some default needs its ctor run */
    const wf_req_link *links[WF_REQ_PLAN_LINKS];
    weft_value vals[WF_REQ_PLAN_LINKS];     /* (id, size, default blob or NULL) */
} wf_req_plan;

/* The component list of the last spawn and its archetype (archetypes are
 * never deleted, so the pointer stays valid). */
typedef struct wf_spawn_cache {
    weft_component ids[WF_SPAWN_CACHE_IDS]; /* in the caller's order */
    int32_t count;
    wf_archetype *arch;                     /* NULL: empty cache */
    int16_t cols[WF_SPAWN_CACHE_IDS];       /* column of ids[i] in arch's
                                               table (tables never change
                                               their columns) */
    bool direct;                            /* every id has a column: a
                                               spawn writes cols[] without
                                               looking components up */
    bool vouch;                             /* direct, and the ids are
                                               distinct and none is managed:
                                               a list equal to ids[] with
                                               its columns' sizes passes
                                               wf_values_check */
} wf_spawn_cache;

/* Message types and removed-component streams (world/messages.h). */
typedef struct wf_messages wf_messages;
/* Schedules and executors (system/system.h); the world only frees it. */
typedef struct wf_sys_world wf_sys_world;

struct weft_world {
    uint32_t magic;              /* WF_WORLD_MAGIC while alive */
    wf_allocator alloc;
    weft_logger logger;
    uint32_t change_tick;        /* stamped on writes; starts at 1 */
    wf_registry registry;
    wf_entity_index entities;
    wf_graph graph;
    wf_spawn_cache spawn_cache;
    uint32_t iter_depth;         /* open query iterations + running hooks and
                                    observers: structural calls defer while
                                    it is non-zero (world/defer.h) */
    weft_commands cmds;          /* the world buffer deferred calls go to */
    weft_commands *buffers;      /* user command buffers (list) */
    bool settling;               /* the world buffer is being applied */
    uint32_t busy;               /* operations running user callbacks (hooks,
                                    observers, triggers, command applies,
                                    schedule runs, message updates) or the
                                    destruction itself: the world may not
                                    be destroyed under them */
    uint32_t trigger_depth;      /* nested custom triggers */
    wf_events events;            /* observers and custom events */
    uint32_t targeted_observers; /* observers bound to one entity */
    weft_component child_of;     /* built-in ChildOf, 0 until first use */
    uint32_t rel_attach_pending; /* queued relationship list attachments */
    uint32_t req_gen;            /* bumped when requirements change; 0: none
                                    exist, so no call needs expanding */
    wf_req_plan req_plan;        /* last expansion (world/require.h) */
    weft_query *queries;         /* every live query (list) */
    weft_component disabled;     /* the Disabled tag, 0 until first use */
    uint32_t last_check_tick;    /* change tick of the last tick clamp */
    wf_messages *messages;       /* NULL until the first message type or
                                    removal tracking */
    wf_sys_world *sys;           /* NULL until the first schedule */
    bool module_build;           /* a reloadable module's plugin build runs
                                    (src/module/): code pointers from it are
                                    accepted only for systems and lifecycle
                                    hooks, the ones a reload rebinds */
    void *module_stage;          /* the module layer's record of that build
                                    (src/module/module_stage.c), or NULL */
    bool app_attached;           /* an app (src/app/) drives this world:
                                    weft_world_destroy is refused */
    bool read_only;              /* a sub-app extracts from it (with `busy`
                                    raised): calls that change it are
                                    refused (wf_world_refuse_shared) */
    void (*sys_fini)(weft_world *w); /* frees `sys` (set with it) */
    void (*sys_clamp)(weft_world *w, uint32_t now); /* clamps the ticks
                                    the system layer stores (set with it) */
    struct wf_reflect *reflect;  /* type descriptions (src/reflect), NULL
                                    until the first one */
    void (*reflect_fini)(weft_world *w); /* frees `reflect` (set with it) */
    struct wf_diag *diag;        /* diagnostics store (src/diag), NULL until
                                    the first diagnostic */
    void (*diag_fini)(weft_world *w); /* frees `diag` (set with it) */
    wf_journal journal;          /* changes for fast deltas (world/journal.h) */
    struct wf_states *states;    /* state types (src/state), NULL until the
                                    first one */
    void (*states_fini)(weft_world *w); /* frees `states` (set with it) */
    weft_scene *scenes;          /* live scenes (src/reflect/scene.c) */
    void (*scenes_fini)(weft_world *w); /* destroys `scenes` (set with it) */
    wf_atomic_ptr tasks;         /* the world's tasks (world/tasks.c), NULL
                                    until the first spawn; made and read
                                    from any thread (published by CAS) */
    uint64_t snapshot_max;       /* decompressed snapshot bound, bytes; 0:
                                    WF_SNAPSHOT_MAX_DEFAULT */
    uint64_t restores;           /* snapshots restored (weft_world_restore_count) */
    weft_status last_status;     /* error slot */
    char last_error[WF_ERROR_LEN];
};

static inline bool wf_world_ok(const weft_world *w)
{
    return w && w->magic == WF_WORLD_MAGIC;
}

/* A value write without a structural change, marked at `tick`:
 * journaled while tracking. */
static inline void wf_journal_add(weft_world *w, const struct wf_column *c, uint32_t row,
                                  uint32_t count, uint32_t tick)
{
    if (WF_UNLIKELY(w->journal.on)) {
        wf_journal_add_slow(w, c, row, count, tick, true);
    }
}

/* A structural change (driver thread): deltas since an earlier tick scan. */
static inline void wf_journal_structural(weft_world *w)
{
    if (WF_UNLIKELY(w->journal.on)) {
        w->journal.structural = true;
        w->journal.struct_tick = w->change_tick;
    }
}

/* Records status + formatted message in the slot and logs it. Returns
 * status so callers can `return wf_error(...)`. Accepts a const world: the
 * slot is diagnostic state, not world content. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
weft_status wf_error(const weft_world *w, weft_status status, const char *fmt, ...);
/* wf_error with the message `prefix` + the formatted text (the readers'
 * failure helpers: "JSON .path: ...", "snapshot: ..."). */
weft_status wf_error_va(const weft_world *w, weft_status status, const char *prefix,
                        const char *fmt, va_list ap);

/* Where errors go while a system runs: the run's own slot instead of the
 * world's (systems run on several threads at once). The system layer sets
 * it on the running thread around each system call; wf_error then records
 * there (first error kept, none logged) when the world matches. */
typedef struct wf_error_sink {
    const weft_world *world;
    weft_status status;          /* first error, WEFT_OK if none */
    weft_status last;            /* latest error (what a failing call returns) */
    uint32_t count;              /* errors recorded (weft_clear_error: 0) */
    bool shared;                 /* a parallel system, condition or chunk
                                    task: other threads use the world, so
                                    calls that change it are refused */
    char message[WF_ERROR_LEN];  /* of the first error */
    char last_message[WF_ERROR_LEN]; /* of the latest (weft_last_error) */
} wf_error_sink;

/* True while the calling thread runs a user callback of w (core/guard.h),
 * or an operation of w that runs callbacks is in progress (`busy`): the
 * calls that would free what that operation uses (destroying the world or
 * its app, re-entering an update) refuse then. */
static inline bool wf_world_in_callback(const weft_world *w)
{
    return w->busy != 0 || wf_guard_inside(w, sizeof *w);
}

/* Refuses (WRONG_PHASE naming fn, true) a call that changes the world made
 * from a parallel system, condition or chunk task of a schedule run: the
 * world is shared with the other threads of the run, and only exclusive
 * systems may change it directly. Also refuses every such call while a
 * sub-app extracts from the world (`read_only`). The test costs one load
 * outside runs (`busy` is zero then). */
bool wf_world_shared_slow(const weft_world *w, const char *fn);
static inline bool wf_world_refuse_shared(const weft_world *w, const char *fn)
{
    return WF_UNLIKELY(w->busy != 0) && wf_world_shared_slow(w, fn);
}

/* The calling thread's sink (NULL: errors go to the world). */
wf_error_sink *wf_error_sink_swap(wf_error_sink *sink);

/* The status of the last error recorded for w on this thread's path. */
weft_status wf_error_last(const weft_world *w);
/* Its message ("" when a running system has recorded none). */
const char *wf_error_last_message(const weft_world *w);
/* Sends a message to the logger hook at `level` (no error recorded);
 * nothing without a logger. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void wf_log(const weft_world *w, weft_log_level level, const char *fmt, ...);
/* The sink installed on this thread for w, or NULL. */
wf_error_sink *wf_error_sink_for(const weft_world *w);

weft_world *wf_world_create(const weft_world_desc *desc);
void wf_world_destroy(weft_world *w);

/* Compiles desc into a query owned by the world (errors recorded, their
 * messages prefixed with `fn`); NULL on failure. */
weft_query *wf_world_query_create(weft_world *world, const weft_query_desc *desc,
                                  const char *fn);
/* Unlinks and frees a query that is not being iterated. */
void wf_world_query_destroy(weft_world *world, weft_query *query);

/* Name of component c for messages ("#<id>" when unknown). */
const char *wf_component_name(const weft_world *w, weft_component c);

/* Refuses a component that only weft may add or remove (a relationship's
 * target list, which must stay consistent with its sources): records
 * RELATIONSHIP naming `fn`. */
weft_status wf_managed_refuse(const weft_world *w, const wf_type_info *ti, const char *fn);

static inline bool wf_type_managed(const wf_type_info *ti)
{
    return ti->rel_source != 0;
}

/* Validates a (component, size, ptr) list: registered ids, exact sizes, no
 * duplicates. Records the error naming `fn`. */
weft_status wf_values_check(const weft_world *w, const weft_value *values, int32_t count,
                            const char *fn);

/* Pointers to component ti's value of each of n entities (NULL when the
 * handle is not live or the entity lacks it); records and values are
 * prefetched a group at a time. Returns the number found. ti has a value
 * (size > 0); es and out hold n entries. */
int32_t wf_world_get_many(const weft_world *w, const weft_entity *es, int32_t n,
                          const wf_type_info *ti, const void **out);

/* Slow half of wf_entity_check: classifies the failure and records it. */
weft_status wf_entity_check_slow(const weft_world *w, weft_entity e, wf_record **out);

/* Record of a live entity or NULL (no error recorded): the fast path. */
static inline wf_record *wf_entity_live(const weft_world *w, weft_entity e)
{
    uint32_t idx = (uint32_t)e;
    if (idx >= w->entities.count) {
        return NULL;
    }
    wf_record *r = &w->entities.records[idx];
    if (r->gen != (uint32_t)(e >> 32) || r->arch == WF_ARCH_DEAD) {
        return NULL;
    }
    return r;
}

/* Validates a live handle; records INVALID_ENTITY / STALE_ENTITY. */
static inline weft_status wf_entity_check(const weft_world *w, weft_entity e,
                                          wf_record **out)
{
    wf_record *r = wf_entity_live(w, e);
    if (WF_LIKELY(r != NULL)) {
        *out = r;
        return WEFT_OK;
    }
    return wf_entity_check_slow(w, e, out);
}

/* The storage a query reads, from the world. */
static inline wf_query_env wf_world_query_env(weft_world *w)
{
    wf_query_env env;
    env.graph = &w->graph;
    env.registry = &w->registry;
    env.entities = &w->entities;
    env.alloc = &w->alloc;
    env.disabled = w->disabled;
    env.tick = &w->change_tick;
    return env;
}

static inline wf_archetype *wf_world_archetype(const weft_world *w, uint32_t id)
{
    return w->graph.archetypes[id];
}

#endif

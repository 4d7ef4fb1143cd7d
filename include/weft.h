/* include/weft.h - the whole public C ABI of weft, an embeddable ECS runtime.
 * SPDX-License-Identifier: MIT
 *
 * weft stores entities in archetype tables (one column per component, rows
 * moved by swap-remove) and in paged sparse sets for components that come and
 * go often. Everything the library owns belongs to a world; a world is driven
 * by one thread at a time (the "driver thread"). Functions return a
 * weft_status (0 = WEFT_OK) or a handle where 0/NULL means failure; every
 * failure also lands in the world's error slot (weft_last_status,
 * weft_last_error) and goes to the logger hook if one is installed. One
 * answer is not a failure: the writers that fill a caller buffer and report
 * the size they need (snapshots, JSON) answer a size query (a NULL buffer)
 * with WEFT_ERR_CAPACITY and the size, and record nothing.
 *
 * Conventions used in every doc comment below:
 *   Thread:   who may call it. "driver" = the one thread driving the world.
 *   Lifetime: how long a returned pointer stays valid.
 *   Errors:   the statuses the call can record.
 *
 * Components must be bitwise relocatable unless they give a move hook: weft
 * moves values with memcpy when rows migrate or swap.
 */
#ifndef WEFT_H
#define WEFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(WEFT_SHARED)
#  if defined(WEFT_BUILDING)
#    define WEFT_API __declspec(dllexport)
#  else
#    define WEFT_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define WEFT_API __attribute__((visibility("default")))
#else
#  define WEFT_API
#endif

/* ---- version ---- */

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 3
#define WEFT_VERSION_PATCH 0
/** Encoded version: major * 10000 + minor * 100 + patch. */
#define WEFT_VERSION \
    (WEFT_VERSION_MAJOR * 10000 + WEFT_VERSION_MINOR * 100 + WEFT_VERSION_PATCH)

/** The library's WEFT_VERSION, so a binding can refuse a mismatched build.
 *  Thread: any. Returns: WEFT_VERSION of the compiled library. */
WEFT_API int32_t weft_abi_version(void);

/* ---- status ---- */

/** Result of every mutating call. Values are never renumbered; new ones are
 *  appended. */
typedef enum weft_status {
    WEFT_OK = 0,
    WEFT_ERR_INVALID_ARG = 1,       /**< NULL pointer, negative count, bad flag */
    WEFT_ERR_INVALID_HANDLE = 2,    /**< NULL, destroyed or foreign world */
    WEFT_ERR_STALE_ENTITY = 3,      /**< entity was despawned or is not yet live */
    WEFT_ERR_SIZE_MISMATCH = 4,     /**< caller's size differs from the component's */
    WEFT_ERR_OUT_OF_MEMORY = 5,     /**< allocator hook returned NULL */
    WEFT_ERR_CAPACITY = 6,          /**< a fixed limit was reached */
    WEFT_ERR_ALREADY_EXISTS = 7,    /**< duplicate name or registration */
    WEFT_ERR_NOT_FOUND = 8,         /**< the thing asked for is absent */
    WEFT_ERR_WRONG_THREAD = 9,      /**< called from a thread that may not */
    WEFT_ERR_WRONG_PHASE = 10,      /**< not allowed in the world's current phase */
    WEFT_ERR_ACCESS_VIOLATION = 11, /**< touched what was not declared */
    WEFT_ERR_SCHEDULE_CYCLE = 12,   /**< ordering constraints form a cycle */
    WEFT_ERR_POISONED = 13,         /**< an earlier fatal failure left the world unusable */
    WEFT_ERR_INTERNAL = 14,         /**< a bug in weft */
    WEFT_ERR_INVALID_ENTITY = 15,   /**< 0 or an index that was never allocated */
    WEFT_ERR_UNKNOWN_COMPONENT = 16,/**< component id not registered in this world */
    WEFT_ERR_IMMUTABLE = 17,        /**< mutable access to an immutable component */
    WEFT_ERR_BAD_ALIGNMENT = 18,    /**< alignment not a power of two <= 4096, or
                                         size not a multiple of it */
    WEFT_ERR_DUPLICATE_COMPONENT = 19, /**< the same component twice in one call */
    WEFT_ERR_CORRUPT = 20,          /**< weft_world_check found a broken invariant */
    WEFT_ERR_NOT_UNIQUE = 21,       /**< more than one match where one was expected */
    WEFT_ERR_DEPTH_LIMIT = 22,      /**< hooks/observers/triggers nested or cascaded
                                         deeper than WEFT_MAX_EVENT_DEPTH */
    WEFT_ERR_RELATIONSHIP = 23,     /**< a relationship would point at itself or
                                         form a cycle */
    WEFT_ERR_CALLBACK = 24,         /**< a user callback (system, condition, job)
                                         failed, e.g. a binding's exception */
    WEFT_ERR_BAD_FORMAT = 25,       /**< input data (snapshot, JSON) is malformed,
                                         corrupt, truncated or of another version */
    WEFT_ERR_TYPE_MISMATCH = 26,    /**< a value's kind differs from the described
                                         field's */
    WEFT_ERR_UNSUPPORTED = 27,      /**< needs an optional part this build of weft
                                         was made without (e.g. zstd) */
    WEFT_STATUS_NUM,
    WEFT_STATUS_FORCE_U32 = 0x7FFFFFFF
} weft_status;

/** Static name of a status, e.g. "WEFT_ERR_STALE_ENTITY"; "WEFT_UNKNOWN" for
 *  values outside the enum. Thread: any. Lifetime: static. */
WEFT_API const char *weft_status_name(weft_status status);

/** Static one-sentence description of a status. Thread: any.
 *  Lifetime: static. Returns "unknown status" for values outside the enum. */
WEFT_API const char *weft_status_str(weft_status status);

/* ---- handles ---- */

/** Entity handle: index in the low 32 bits, generation in the high 32 bits.
 *  0 is never a live entity ("none"). Live generations run from 1 to
 *  2^31 - 1 and then start again at 1; a generation with the top bit set
 *  marks a provisional handle (see weft_commands_resolve). */
typedef uint64_t weft_entity;

/** Component (and resource) id: dense per world, starting at 1. 0 = none. */
typedef uint32_t weft_component;

/** Opaque world. */
typedef struct weft_world weft_world;

#define WEFT_ENTITY_NONE ((weft_entity)0)
#define WEFT_COMPONENT_NONE ((weft_component)0)

/** Index part of an entity handle. Thread: any. */
WEFT_API uint32_t weft_entity_index(weft_entity e);
/** Generation part of an entity handle. Thread: any. */
WEFT_API uint32_t weft_entity_generation(weft_entity e);

/* ---- allocation and logging hooks ---- */

/** Allocator hook. Give both functions or neither (then malloc-based
 *  defaults are used). alloc returns memory aligned to `align` (a power of
 *  two) or NULL; free receives the same size and align that alloc got.
 *  Hooks may later be called from worker threads and must be thread-safe. */
typedef struct weft_allocator {
    void *(*alloc)(size_t size, size_t align, void *user);
    void (*free)(void *ptr, size_t size, size_t align, void *user);
    void *user;
} weft_allocator;

typedef enum weft_log_level {
    WEFT_LOG_DEFAULT = 0, /**< same as WEFT_LOG_ERROR */
    WEFT_LOG_ERROR = 1,
    WEFT_LOG_WARN = 2,
    WEFT_LOG_INFO = 3,
    WEFT_LOG_LEVEL_FORCE_U32 = 0x7FFFFFFF
} weft_log_level;

/** Logger hook: receives every recorded error (level ERROR) and warnings.
 *  `message` is valid only during the call. Without a logger weft is silent. */
typedef struct weft_logger {
    void (*fn)(void *user, weft_log_level level, weft_status status,
               const char *message, const char *file, int32_t line);
    void *user;
} weft_logger;

/* ---- OS layer ---- */

/** Storage for one OS object (a thread, mutex or condition variable) that
 *  the OS layer initialises in place: weft embeds these in its own
 *  structures and never allocates them. An implementation whose objects
 *  do not fit may store a pointer to its own allocation here. */
typedef struct weft_os_object {
    uint64_t opaque[8];
} weft_os_object;

/** The OS layer: every thread, lock, condition variable, clock and
 *  last-resort log call weft makes goes through this one process-wide
 *  table (the allocator, per world, is weft_world_desc.allocator). The
 *  built-in table uses POSIX (pthreads, clock_gettime(CLOCK_MONOTONIC),
 *  sched_yield, stderr); a host with its own threads and clocks (a console
 *  SDK, an engine's job system, a test that counts calls) replaces it with
 *  weft_set_os_api before it creates its first world. Every entry except
 *  `log` is required; in a build without threads (WEFT_THREADS=OFF, see
 *  weft_max_threads) the thread, mutex and condition entries are never
 *  called and may be NULL. Each function receives `user`. Functions may
 *  be called from any thread weft runs on, concurrently.
 *  - thread_create starts fn(arg) on a new thread and returns true, or
 *    returns false (nothing started); thread_join waits for it, once.
 *  - thread_yield gives up the rest of the time slice (spinning waits).
 *  - cpu_count: processors available, at least 1 (threads = -1).
 *  - mutex_* and cond_*: a plain (non-recursive) mutex and a condition
 *    variable; init returns false when the object cannot be made;
 *    cond_wait releases the mutex, waits and locks it again, and may wake
 *    spuriously. Lock, unlock, wait, signal and fini cannot fail.
 *  - now_ns: a monotonic clock in nanoseconds (profiling, traces).
 *  - log: messages that have no world to go to (a failed weft_set_os_api,
 *    an internal assertion about to abort a debug build). NULL: dropped.
 *    The built-in one writes a line to stderr. */
typedef struct weft_os_api {
    uint32_t _start_canary; /**< must be 0 */
    bool (*thread_create)(weft_os_object *thread, void (*fn)(void *arg), void *arg,
                          void *user);
    void (*thread_join)(weft_os_object *thread, void *user);
    void (*thread_yield)(void *user);
    uint32_t (*cpu_count)(void *user);
    bool (*mutex_init)(weft_os_object *mutex, void *user);
    void (*mutex_fini)(weft_os_object *mutex, void *user);
    void (*mutex_lock)(weft_os_object *mutex, void *user);
    void (*mutex_unlock)(weft_os_object *mutex, void *user);
    bool (*cond_init)(weft_os_object *cond, void *user);
    void (*cond_fini)(weft_os_object *cond, void *user);
    void (*cond_wait)(weft_os_object *cond, weft_os_object *mutex, void *user);
    void (*cond_signal)(weft_os_object *cond, void *user);
    void (*cond_broadcast)(weft_os_object *cond, void *user);
    uint64_t (*now_ns)(void *user);
    void (*log)(weft_log_level level, const char *message, void *user);
    void *user;
    uint32_t _end_canary; /**< must be 0 */
} weft_os_api;

/** Writes the built-in OS table (POSIX) to *out, e.g. for a wrapper that
 *  forwards to it. In a build without threads its thread, mutex and
 *  condition entries are NULL. Thread: any. */
WEFT_API void weft_os_api_defaults(weft_os_api *out);

/** Replaces the process-wide OS layer with a copy of *api (NULL: back to
 *  the built-in table). Only while no world exists (before the first one
 *  is created, or after every world was destroyed): weft embeds OS
 *  objects of the current table in its worlds. On failure the table stays
 *  as it was and the message goes to the current table's log.
 *  Thread: any, but not concurrently with weft_world_create or another
 *  weft_set_os_api.
 *  Errors: WRONG_PHASE (a world exists), INVALID_ARG (a canary is set, or a
 *  required entry is NULL: the message names it). */
WEFT_API weft_status weft_set_os_api(const weft_os_api *api);

/** The most worker threads weft_world_set_threads accepts: 1 when weft was
 *  built without threads (WEFT_THREADS=OFF), otherwise the pool's limit.
 *  Thread: any. */
WEFT_API int32_t weft_max_threads(void);

/* ---- world ---- */

/** World descriptor. Zero-initialise it; zero fields mean defaults. */
typedef struct weft_world_desc {
    uint32_t _start_canary;       /**< must be 0 */
    weft_allocator allocator;     /**< every byte the world owns goes through it */
    weft_logger logger;
    int32_t entity_capacity_hint; /**< entity records to reserve up front (0: none) */
    uint32_t _end_canary;         /**< must be 0 */
} weft_world_desc;

/** Creates a world. `desc` may be NULL (all defaults).
 *  Thread: any; the calling thread becomes the driver.
 *  Returns: the world, or NULL when the descriptor is invalid (canary set,
 *  only one allocator function given) or the first allocation fails.
 *  Lifetime: until weft_world_destroy. */
WEFT_API weft_world *weft_world_create(const weft_world_desc *desc);

/** Destroys a world: runs the dtor hook of every live component value and of
 *  every resource, then frees all memory through the allocator hook.
 *  NULL is ignored (WEFT_OK). Refused while the calling thread is inside
 *  any callback of this world, of every kind this header declares (hooks,
 *  observers, systems, conditions, chunk functions, commands and drops,
 *  the allocator, the logger, type hooks, requirement constructors, local
 *  init/fini, free_user, plugins, state compute, extract functions, the
 *  job system's submit/help; the process-wide OS hooks count as inside
 *  every world), or while an app (weft_app) drives it: the world stays as
 *  it is and the call returns WRONG_PHASE. weft_app_destroy and
 *  weft_app_update are refused the same way (a runner may update its app).
 *  Thread: driver.
 *  Errors: INVALID_HANDLE (destroyed or foreign pointer), WRONG_PHASE. */
WEFT_API weft_status weft_world_destroy(weft_world *world);

/** Status of the world's most recent failure (WEFT_OK if none yet).
 *  A NULL world gives WEFT_ERR_INVALID_HANDLE. Thread: driver. */
WEFT_API weft_status weft_last_status(const weft_world *world);

/** Message of the world's most recent failure, naming what was wrong
 *  ("" if none; at most 1023 bytes, a longer one cut to end in "..."). Thread: driver. Lifetime: until the next failure recorded
 *  in this world, or its destruction. A NULL world gives a static message. */
WEFT_API const char *weft_last_error(const weft_world *world);

/** Clears the error slot back to WEFT_OK / "". Thread: driver. */
WEFT_API void weft_clear_error(weft_world *world);

/** Current change tick: the tick stamped on component writes. Starts at 1.
 *  Returns 0 for an invalid world. Thread: driver. */
WEFT_API uint32_t weft_world_change_tick(const weft_world *world);

/** How many snapshots have been restored into this world
 *  (weft_snapshot_restore), 0 for an invalid world. A restore replaces
 *  the content wholesale without running hooks or observers, so a cache
 *  keyed on entities (a plugin's hierarchy, a host's lookup table) is
 *  rebuilt when this number changes. Thread: driver. */
WEFT_API uint64_t weft_world_restore_count(const weft_world *world);

/** Advances the change tick by one and returns the new value (0 on an
 *  invalid world). The scheduler does this per system run; call it yourself
 *  between frames when driving the world by hand. Thread: driver. */
WEFT_API uint32_t weft_world_increment_change_tick(weft_world *world);

/** Counters for diagnosing a world. */
typedef struct weft_world_stats {
    int64_t live_entities;    /**< spawned and not despawned */
    int64_t live_bytes;       /**< bytes currently held through the allocator */
    int32_t archetypes;       /**< including the empty archetype */
    int32_t tables;           /**< including the empty table */
    int32_t components;       /**< registered components */
    int32_t resources;        /**< resources currently present */
    int32_t entity_records;   /**< allocated entity indices, live or free */
    int32_t pending_reserved; /**< reserved ids waiting for weft_entity_flush */
} weft_world_stats;

/** Fills `out` with the world's counters. Thread: driver.
 *  Errors: INVALID_HANDLE, INVALID_ARG (out NULL). */
WEFT_API weft_status weft_world_get_stats(const weft_world *world,
                                          weft_world_stats *out);

/** One archetype, as reported by weft_archetype_info. */
typedef struct weft_archetype_info {
    int32_t entity_count;              /**< live entities in this archetype */
    int32_t table;                     /**< index of its table */
    int32_t component_count;           /**< length of `components` */
    const weft_component *components;  /**< sorted ids (table and sparse) */
} weft_archetype_info;

/** Describes archetype `index` (0 .. stats.archetypes-1; 0 is the empty
 *  archetype). Use it to find fragmentation: many archetypes with few
 *  entities each. Thread: driver. Lifetime: `components` lives as long as
 *  the world (archetypes are never deleted).
 *  Errors: INVALID_HANDLE, INVALID_ARG (out NULL), NOT_FOUND (index). */
WEFT_API weft_status weft_archetype_info_get(const weft_world *world,
                                             int32_t index,
                                             weft_archetype_info *out);

/** Archetype index of a live entity, or -1 (no error recorded) if it is not
 *  alive. Thread: driver. */
WEFT_API int32_t weft_entity_archetype(const weft_world *world, weft_entity e);

/** Canonical 64-bit hash of the world: every live entity id, in index order,
 *  with the ids and bytes of all its components in id order. Independent of
 *  table row order and of archetype creation order, so two worlds built by
 *  the same operations hash equal however rows were shuffled. Component
 *  padding bytes are hashed too: keep them zeroed. Resources are included.
 *  Returns 0 for an invalid world. Thread: driver. */
WEFT_API uint64_t weft_world_hash(const weft_world *world);

/** Walks entity records, tables, archetypes, edges and sparse sets and
 *  verifies the invariants (docs/architecture.md, INV-1..INV-11).
 *  Returns WEFT_OK, or WEFT_ERR_CORRUPT with a message in the error slot
 *  naming the first broken invariant. O(everything); for tests and
 *  debugging. Thread: driver. Errors: INVALID_HANDLE, CORRUPT,
 *  OUT_OF_MEMORY (scratch space). */
WEFT_API weft_status weft_world_check(weft_world *world);

/* ---- components ---- */

typedef enum weft_storage {
    WEFT_STORAGE_DEFAULT = 0, /**< table storage */
    WEFT_STORAGE_TABLE = 1,   /**< archetype table column: fastest iteration */
    WEFT_STORAGE_SPARSE = 2,  /**< paged sparse set: adding/removing moves no row */
    WEFT_STORAGE_NUM,
    WEFT_STORAGE_FORCE_U32 = 0x7FFFFFFF
} weft_storage;

/** Component flags (bits of weft_component_desc.flags). */
typedef enum weft_component_flags {
    WEFT_COMPONENT_FLAGS_DEFAULT = 0,
    WEFT_COMPONENT_IMMUTABLE = 1u << 0,       /**< no get_mut; insert may replace */
    WEFT_COMPONENT_MAIN_THREAD = 1u << 1,     /**< only touched on the driver thread */
    WEFT_COMPONENT_NO_CHANGE_TICKS = 1u << 2, /**< store no added/changed ticks */
    WEFT_COMPONENT_FLAGS_FORCE_U32 = 0x7FFFFFFF
} weft_component_flags;

/** Type hooks; all optional. `count` values at `ptr` are processed.
 *  - ctor: default-construct raw memory (without it: zero-fill).
 *  - dtor: destroy values (without it: nothing).
 *  - move: construct dst from src; src is then dead and is not destroyed
 *    (without it: memcpy).
 *  - copy: construct raw dst as a copy of src (without it: memcpy).
 *  Hooks must not call back into the world and must not unwind. */
typedef struct weft_type_hooks {
    void (*ctor)(void *ptr, int32_t count, void *user);
    void (*dtor)(void *ptr, int32_t count, void *user);
    void (*move)(void *dst, void *src, int32_t count, void *user);
    void (*copy)(void *dst, const void *src, int32_t count, void *user);
    void *user;
} weft_type_hooks;

/** Lifecycle hook: called with the world (in its deferred phase: structural
 *  calls made here are queued and applied after the outer operation), the
 *  entity and the component. Reads and writes of component values are
 *  allowed. Must not unwind. */
typedef void (*weft_hook_fn)(weft_world *world, weft_entity e, weft_component c,
                             void *user);

/** Per-component lifecycle hooks; all optional. Order for one component:
 *  hooks run before observers of the same event.
 *  - on_add: the component was added (not present before); value written.
 *  - on_insert: after every insert (new or replacing); new value visible.
 *  - on_replace: before a value is replaced or removed; old value visible.
 *  - on_remove: the component is being removed; value still visible.
 *  - on_despawn: the entity is being despawned; value still visible.
 *  Spawn/insert of several components fires on_replace for the present ones
 *  (before any write), then on_add for the new ones, then on_insert for all,
 *  each group in the caller's order. Despawn fires on_despawn for every
 *  component, then on_replace for every one, then on_remove for every one
 *  (archetype id order), then frees the entity. */
typedef struct weft_lifecycle_hooks {
    weft_hook_fn on_add;
    weft_hook_fn on_insert;
    weft_hook_fn on_replace;
    weft_hook_fn on_remove;
    weft_hook_fn on_despawn;
    void *user;
} weft_lifecycle_hooks;

/** A required component: whenever the requiring component is added, `id`
 *  is added too unless the entity already has it or the same call supplies
 *  it. Its value comes from `ctor` (called on raw memory) if given, else a
 *  copy of `value` (`size` bytes, which must equal the component's size),
 *  else the component's default construction (its ctor hook, else zeroes).
 *  Requirements are transitive; cycles are allowed. */
typedef struct weft_require {
    weft_component id;
    const void *value;                      /**< copied at registration */
    size_t size;                            /**< bytes of value (0 without value) */
    void (*ctor)(void *dst, void *user);    /**< optional default constructor */
    void *user;
} weft_require;

/** Component descriptor. Zero-initialise; zero fields mean defaults. */
typedef struct weft_component_desc {
    uint32_t _start_canary; /**< must be 0 */
    const char *name;       /**< required, unique per world; copied */
    size_t size;            /**< bytes; 0 = tag (no value) */
    size_t align;           /**< power of two <= 4096; 0 = derived from size
                                 (largest power of two dividing it, max 16) */
    weft_type_hooks hooks;
    weft_lifecycle_hooks lifecycle;
    weft_storage storage;
    uint32_t flags;         /**< weft_component_flags bits */
    const weft_require *required; /**< components this one requires (copied) */
    int32_t required_count;
    uint32_t _end_canary;   /**< must be 0 */
} weft_component_desc;

/** Registers a component (also usable as a resource id).
 *  Thread: driver. Returns: the new id, or 0 on failure.
 *  Required components (desc->required) are checked as by
 *  weft_component_require and refused with the same statuses.
 *  Errors: INVALID_HANDLE, INVALID_ARG (desc/name NULL, empty name, bad
 *  storage, unknown flag bits, canary), BAD_ALIGNMENT (align not a power of
 *  two, above 4096, or size not a multiple of align), ALREADY_EXISTS
 *  (name taken), CAPACITY (32,000 components, resources and relationship
 *  halves registered, built-ins included: ids run from 1 to 32,000),
 *  UNKNOWN_COMPONENT, SIZE_MISMATCH, DUPLICATE_COMPONENT, RELATIONSHIP
 *  (requirements),
 *  OUT_OF_MEMORY.
 *  In a reloadable module's build (weft_module_load, weft_module_reload):
 *  type hooks are refused (UNSUPPORTED), and registering again a component
 *  an earlier build of the same module registered returns its id and
 *  declares its new layout and lifecycle hooks, applied (migrated) when the
 *  reload commits (docs/hot-reload.md). */
WEFT_API weft_component weft_component_register(weft_world *world,
                                                const weft_component_desc *desc);

/** Adds requirements to an already registered component `c` (this is how
 *  cycles are formed: A requires B, then B requires A). They apply to every
 *  later insert of c; components already on entities are not touched.
 *  Removing a component never removes what it required (as in Bevy).
 *  Thread: driver. Errors: INVALID_HANDLE, UNKNOWN_COMPONENT (c or a
 *  required id), INVALID_ARG (reqs NULL with count > 0, c requiring
 *  itself), SIZE_MISMATCH (default value size), DUPLICATE_COMPONENT (the
 *  same id required twice), RELATIONSHIP (a relationship's source or
 *  target component: each source names its own target), OUT_OF_MEMORY;
 *  the component is unchanged on error. */
WEFT_API weft_status weft_component_require(weft_world *world, weft_component c,
                                           const weft_require *reqs, int32_t count);

/** Finds a component by name. Returns 0 if there is none (no error is
 *  recorded: absence is an answer) or on misuse (INVALID_ARG: name NULL,
 *  recorded). Thread: driver. */
WEFT_API weft_component weft_component_lookup(const weft_world *world,
                                              const char *name);

/** What the world knows about one component. */
typedef struct weft_component_info {
    const char *name;     /**< owned by the world, lives as long as it */
    size_t size;
    size_t align;
    weft_storage storage; /**< TABLE or SPARSE (never DEFAULT) */
    uint32_t flags;
} weft_component_info;

/** Describes a registered component. Thread: driver.
 *  Errors: INVALID_HANDLE, INVALID_ARG (out NULL), UNKNOWN_COMPONENT. */
WEFT_API weft_status weft_component_info_get(const weft_world *world,
                                             weft_component component,
                                             weft_component_info *out);

/* ---- entities ---- */

/** One (component, value) pair for multi-component calls. `ptr` points at
 *  `size` bytes (or, for weft_spawn_bulk, at an array of values); NULL means
 *  default-construct (ctor hook, else zeroes). Tags use size 0.
 *  Value pointers passed to any weft call must not point into the world's
 *  own storage (e.g. a pointer from weft_get): the call may grow and free
 *  that storage before copying. Copy such a value out first. */
typedef struct weft_value {
    weft_component id;
    size_t size;
    const void *ptr;
} weft_value;

/** Spawns an entity with no components. Thread: driver.
 *  Returns the entity or 0. Errors: INVALID_HANDLE, CAPACITY (2^32-1
 *  indices), OUT_OF_MEMORY. */
WEFT_API weft_entity weft_spawn(weft_world *world);

/** Spawns an entity with `count` components in one placement: it lands
 *  directly in its final archetype, values copied in (copy hook or memcpy).
 *  Components required by these (transitively) and not supplied are added
 *  in the same placement with their defaults; lifecycle events fire for the
 *  supplied components in call order, then for the required ones in
 *  breadth-first requirement order (the same holds for every insert).
 *  Thread: driver. Returns the entity or 0 (world unchanged).
 *  Errors: INVALID_HANDLE, INVALID_ARG (values NULL with count > 0, count
 *  < 0), UNKNOWN_COMPONENT, SIZE_MISMATCH, DUPLICATE_COMPONENT, CAPACITY,
 *  RELATIONSHIP (a relationship value naming 0 or a dead entity; see
 *  weft_relationship_register), OUT_OF_MEMORY. */
WEFT_API weft_entity weft_spawn_with(weft_world *world, const weft_value *values,
                                     int32_t count);

/** Spawns `n` entities with the same component set. columns[i].ptr points
 *  at an array of n values of columns[i].size bytes (NULL: default-construct
 *  all n). Ids are written to out_entities (may be NULL if not wanted).
 *  Thread: driver. Errors: as weft_spawn_with, plus WRONG_PHASE while a
 *  query iteration, hook or observer is running; on failure nothing is
 *  spawned. */
WEFT_API weft_status weft_spawn_bulk(weft_world *world, const weft_value *columns,
                                     int32_t column_count, int32_t n,
                                     weft_entity *out_entities);

/** Despawns an entity: fires on_despawn, then on_replace, then on_remove
 *  for its components (hooks, then observers), runs the dtor hook of each
 *  value and frees the index. Its generation is bumped, so every copy of
 *  the handle becomes stale, and its index is reused last-in-first-out.
 *  Deferred while an iteration, hook or observer is running.
 *  Thread: driver.
 *  Errors: INVALID_HANDLE, INVALID_ENTITY, STALE_ENTITY (also when
 *  despawned twice), OUT_OF_MEMORY (only for a relationship target: the
 *  records of its cascade, such as a LINKED_DESPAWN subtree, are reserved
 *  first; on failure nothing is despawned). */
WEFT_API weft_status weft_despawn(weft_world *world, weft_entity e);

/** True if `e` is live in this world (false for 0, stale handles, reserved
 *  ids not yet flushed, and invalid worlds). Thread: driver. */
WEFT_API bool weft_is_alive(const weft_world *world, weft_entity e);

/** Reserves an entity id without touching storage. The id is not alive
 *  until weft_entity_flush makes it a live entity with no components.
 *  Thread: any thread, lock-free, concurrently with other reserve calls and
 *  with read-only calls; never concurrently with structural calls (spawn,
 *  despawn, flush, insert, remove) on the driver. Returns 0 on an invalid
 *  world or when the index space is exhausted (no error is recorded from a
 *  non-driver thread). */
WEFT_API weft_entity weft_entity_reserve(weft_world *world);

/** Makes every reserved id a live, empty entity. Spawning calls it
 *  implicitly when reservations are pending; indices freed while
 *  reservations are pending are reused only after the flush. Thread: driver.
 *  Errors: INVALID_HANDLE, CAPACITY, OUT_OF_MEMORY (no id is lost: the
 *  flush can be retried). */
WEFT_API weft_status weft_entity_flush(weft_world *world);

/* ---- component access ---- */

/** Adds component `c` with a copy of `value` (NULL: default-construct), or
 *  replaces the value if the entity already has it (old value destroyed,
 *  changed tick stamped, added tick kept). Adding a table component moves
 *  the entity's row; adding a sparse one moves nothing. Allowed for
 *  immutable components. Thread: driver.
 *  Errors: INVALID_HANDLE, INVALID_ENTITY, STALE_ENTITY, UNKNOWN_COMPONENT,
 *  SIZE_MISMATCH, RELATIONSHIP (a relationship value naming 0, a dead
 *  entity, e itself or a descendant of e; see weft_relationship_register),
 *  OUT_OF_MEMORY (world unchanged on every error). */
WEFT_API weft_status weft_insert(weft_world *world, weft_entity e, weft_component c,
                                 const void *value, size_t size);

/** Inserts several components with at most one row move. Errors: as
 *  weft_insert plus INVALID_ARG and DUPLICATE_COMPONENT. Thread: driver. */
WEFT_API weft_status weft_insert_many(weft_world *world, weft_entity e,
                                      const weft_value *values, int32_t count);

/** Removes component `c` (destroying its value). Removing a component the
 *  entity does not have is a no-op returning WEFT_OK. Thread: driver.
 *  Errors: INVALID_HANDLE, INVALID_ENTITY, STALE_ENTITY, UNKNOWN_COMPONENT. */
WEFT_API weft_status weft_remove(weft_world *world, weft_entity e, weft_component c);

/** True if the live entity `e` has component `c`; false otherwise (also for
 *  dead entities and unknown ids, without recording an error).
 *  Thread: driver. */
WEFT_API bool weft_has(const weft_world *world, weft_entity e, weft_component c);

/** Read-only pointer to `e`'s value of `c`, or NULL when the entity lacks
 *  it (no error recorded) or on misuse (error recorded: INVALID_HANDLE,
 *  INVALID_ENTITY, STALE_ENTITY, UNKNOWN_COMPONENT, SIZE_MISMATCH; tags have
 *  no value and give NULL with INVALID_ARG). `size` must equal the
 *  component's size. Thread: driver. Lifetime: until the next structural
 *  change (spawn, despawn, insert, remove, flush) in this world. */
WEFT_API const void *weft_get(const weft_world *world, weft_entity e,
                              weft_component c, size_t size);

/** weft_get for many handles at once: out[i] receives what
 *  weft_get(world, entities[i], c, size) returns, for i in 0..count-1,
 *  except that a null, dead or stale handle, or an entity without `c`,
 *  gives NULL without recording an error. The lookups are overlapped:
 *  each group of handles has its entity records, then its values,
 *  prefetched before they are read, so handles in random order cost a
 *  fraction of as many weft_get calls (each of those waits for its record
 *  before it can ask for the value). Thread: driver. Lifetime: each
 *  pointer as weft_get's.
 *  Returns: how many pointers are non-NULL, or -1 on misuse with the error
 *  recorded and `out` untouched: INVALID_HANDLE (world), INVALID_ARG
 *  (count negative, entities or out NULL while count > 0, `c` is a tag),
 *  UNKNOWN_COMPONENT, SIZE_MISMATCH. */
WEFT_API int32_t weft_get_many(const weft_world *world, const weft_entity *entities,
                               int32_t count, weft_component c, size_t size,
                               const void **out);

/** Like weft_get but writable; stamps the value's changed tick with the
 *  current change tick. Errors: as weft_get plus IMMUTABLE. Thread: driver. */
WEFT_API void *weft_get_mut(weft_world *world, weft_entity e, weft_component c,
                            size_t size);

/** Change ticks of one component value. */
typedef struct weft_ticks {
    uint32_t added;   /**< tick when the value was first added */
    uint32_t changed; /**< tick of the last insert, replace or get_mut */
} weft_ticks;

/** Reads the change ticks of `e`'s `c`. Thread: driver.
 *  Errors: INVALID_HANDLE, INVALID_ENTITY, STALE_ENTITY, UNKNOWN_COMPONENT,
 *  INVALID_ARG (out NULL, or the component has NO_CHANGE_TICKS), NOT_FOUND
 *  (entity lacks c). */
WEFT_API weft_status weft_get_ticks(const weft_world *world, weft_entity e,
                                    weft_component c, weft_ticks *out);

/* ---- resources ---- */

/** Inserts or replaces the resource `r` (a registered component id used as
 *  a singleton). The value is copied in (NULL: default-construct); a
 *  replaced value is destroyed first. Sets added (when new) and changed
 *  ticks. Thread: driver. Errors: INVALID_HANDLE, UNKNOWN_COMPONENT,
 *  SIZE_MISMATCH, OUT_OF_MEMORY. */
WEFT_API weft_status weft_resource_insert(weft_world *world, weft_component r,
                                          const void *value, size_t size);

/** Removes resource `r`, destroying its value. A missing resource is a
 *  no-op returning WEFT_OK. Thread: driver.
 *  Errors: INVALID_HANDLE, UNKNOWN_COMPONENT. */
WEFT_API weft_status weft_resource_remove(weft_world *world, weft_component r);

/** True if resource `r` is present. Thread: driver. */
WEFT_API bool weft_resource_has(const weft_world *world, weft_component r);

/** Read-only pointer to resource `r`, NULL when absent (no error) or on
 *  misuse (INVALID_HANDLE, UNKNOWN_COMPONENT, SIZE_MISMATCH; a tag resource
 *  has no value: INVALID_ARG). Thread: driver. Lifetime: until the resource
 *  is removed or replaced, or the world destroyed. */
WEFT_API const void *weft_resource_get(const weft_world *world, weft_component r,
                                       size_t size);

/** Writable pointer to resource `r`; stamps its changed tick. Errors: as
 *  weft_resource_get plus IMMUTABLE. Thread: driver. */
WEFT_API void *weft_resource_get_mut(weft_world *world, weft_component r,
                                     size_t size);

/** Reads resource `r`'s change ticks. Errors: INVALID_HANDLE,
 *  UNKNOWN_COMPONENT, INVALID_ARG (out NULL), NOT_FOUND (absent).
 *  Thread: driver. */
WEFT_API weft_status weft_resource_get_ticks(const weft_world *world,
                                             weft_component r, weft_ticks *out);

/* ---- queries ---- */

/** Most terms one query may have. */
#define WEFT_MAX_TERMS 16

/** Opaque query, owned by its world. */
typedef struct weft_query weft_query;

/** How a term touches its component. */
typedef enum weft_access {
    WEFT_ACCESS_DEFAULT = 0, /**< READ for AND/OPTIONAL/OR, NONE for WITH/WITHOUT */
    WEFT_ACCESS_READ = 1,    /**< fields are read-only */
    WEFT_ACCESS_WRITE = 2,   /**< fields are writable (refused for immutable ids) */
    WEFT_ACCESS_NONE = 3,    /**< a pure filter: no field */
    WEFT_ACCESS_NUM,
    WEFT_ACCESS_FORCE_U32 = 0x7FFFFFFF
} weft_access;

/** How a term decides whether an entity matches. */
typedef enum weft_oper {
    WEFT_OPER_DEFAULT = 0,  /**< AND */
    WEFT_OPER_AND = 1,      /**< must have the component; has a field */
    WEFT_OPER_OPTIONAL = 2, /**< field when present; never excludes */
    WEFT_OPER_WITH = 3,     /**< must have it; no field */
    WEFT_OPER_WITHOUT = 4,  /**< must not have it; no field */
    WEFT_OPER_OR = 5,       /**< OR terms with the same or_group: at least one
                                 must be present; each is like OPTIONAL */
    WEFT_OPER_NUM,
    WEFT_OPER_FORCE_U32 = 0x7FFFFFFF
} weft_oper;

/** Term filters (bits of weft_term.filter); allowed on AND, WITH and OR
 *  terms. A row passes when the term's component was added (ADDED) or
 *  changed (CHANGED: written, inserted or replaced; added counts as
 *  changed) after the query's last run. In an or-group a row passes when
 *  any member is present and passes its own filter. */
typedef enum weft_filter {
    WEFT_FILTER_NONE = 0,
    WEFT_FILTER_ADDED = 1u << 0,
    WEFT_FILTER_CHANGED = 1u << 1,
    WEFT_FILTER_FORCE_U32 = 0x7FFFFFFF
} weft_filter;

/** One query term. */
typedef struct weft_term {
    weft_component id;
    weft_access access;
    weft_oper oper;
    uint32_t filter;  /**< weft_filter bits */
    int32_t or_group; /**< groups OR terms; any value, same value = same group */
} weft_term;

/** Query flags (bits of weft_query_desc.flags). */
typedef enum weft_query_flags {
    WEFT_QUERY_FLAGS_DEFAULT = 0,
    WEFT_QUERY_MATCH_DISABLED = 1u << 0, /**< also match Disabled entities */
    WEFT_QUERY_UNCACHED = 1u << 1,       /**< keep no match cache: for one-off use */
    /** As a system's query: the system runs only when exactly one entity
     *  matches (Bevy's Single); otherwise it is skipped like a false run
     *  condition. Counted at archetype level: Added/Changed filters do not
     *  count. No effect on queries used outside systems. */
    WEFT_QUERY_SINGLE = 1u << 2,
    /** As a system's query: the system runs only when at least one entity
     *  matches (Bevy's Populated); counted like WEFT_QUERY_SINGLE. */
    WEFT_QUERY_POPULATED = 1u << 3,
    WEFT_QUERY_FLAGS_FORCE_U32 = 0x7FFFFFFF
} weft_query_flags;

/** Query descriptor. Zero-initialise; zero fields mean defaults. */
typedef struct weft_query_desc {
    uint32_t _start_canary;            /**< must be 0 */
    weft_term terms[WEFT_MAX_TERMS];
    int32_t term_count;                /**< 1 .. WEFT_MAX_TERMS */
    uint32_t flags;                    /**< weft_query_flags bits */
    uint32_t _end_canary;              /**< must be 0 */
} weft_query_desc;

/** Id of the built-in Disabled tag (table storage, name "weft.Disabled"),
 *  registered on first use. Entities carrying it are skipped by every query
 *  unless the query mentions Disabled in a term or sets
 *  WEFT_QUERY_MATCH_DISABLED; their components stay readable through
 *  weft_get. Returns 0 on an invalid world or when out of memory.
 *  Thread: driver. */
WEFT_API weft_component weft_disabled(weft_world *world);

/** Compiles a query. A cached query (the default) keeps the list of matching
 *  tables and brings it up to date incrementally: every archetype is tested
 *  once, when the query first runs after the archetype was created.
 *  Thread: driver. Lifetime: until weft_query_destroy or world destruction.
 *  Returns NULL on failure. Errors: INVALID_HANDLE, INVALID_ARG (desc NULL,
 *  canary, term_count out of range, unknown access/oper/filter/flag bits, a
 *  field access on WITH/WITHOUT, a filter on OPTIONAL/WITHOUT),
 *  UNKNOWN_COMPONENT, IMMUTABLE (write access to an immutable component),
 *  DUPLICATE_COMPONENT (a component written twice, or written and read, or
 *  listed twice), OUT_OF_MEMORY. */
WEFT_API weft_query *weft_query_create(weft_world *world, const weft_query_desc *desc);

/** Destroys a query. NULL is ignored. Must not be called while the query is
 *  being iterated. Thread: driver. Errors: INVALID_HANDLE (query of another
 *  world), WRONG_PHASE (iteration open on it). */
WEFT_API weft_status weft_query_destroy(weft_world *world, weft_query *query);

/** The query's last-run tick: Added/Changed compare against it. It starts
 *  "infinitely old" (the first run sees as added and changed every tick
 *  younger than WEFT_MAX_CHANGE_AGE, i.e. everything not yet clamped) and
 *  advances when an iteration completes. Thread: driver. */
WEFT_API uint32_t weft_query_last_run(const weft_world *world, const weft_query *query);

/** Sets the last-run tick (schedulers and tests). Thread: driver. */
WEFT_API weft_status weft_query_set_last_run(weft_world *world, weft_query *query,
                                             uint32_t tick);

/* Library-internal types the iteration state points at (never complete
 * here). */
struct wf_table;
struct wf_entity_index;

/** The state of one iteration. It is defined in this header only so that
 *  weft_iter can hold it as a member: the library accesses iterator storage
 *  through this type, which C's aliasing rules allow only when the storage
 *  contains it. Every field is private to the library and may change with
 *  the ABI version; never read or write them. */
typedef struct weft_iter_state {
    uint32_t state;           /* WF_ITER_ACTIVE, WF_ITER_DONE, or garbage */
    uint32_t slot;            /* the query's iteration slot */
    uint64_t serial;          /* the slot's serial when this iteration took it */
    bool counts_run;          /* a real iteration: ends by advancing last_run */
    uint8_t mode;             /* who owns the iteration */
    uint32_t row_end;         /* chunk tasks: end of the task's rows */
    bool partial;             /* current table: check each row's archetype */
    bool filtered;            /* current table: check each row's ticks */
    bool whole;               /* current chunk: the whole table */
    weft_world *world;
    weft_query *query;
    const struct wf_entity_index *entities;
    const uint32_t *tick;     /* the world's change tick */
    uint32_t this_run;
    uint32_t last_run;
    uint32_t span;            /* min(this_run - last_run, MAX_CHANGE_AGE) */
    uint32_t match;           /* index of the current match + 1 (0: none yet) */
    uint32_t row;             /* next row to scan in the current table */
    uint32_t start;           /* current chunk: first row */
    uint32_t count;           /* current chunk: rows */
    uint32_t nflt;            /* direct scan terms, or UINT32_MAX */
    uint32_t nfield;          /* entries of field_terms */
    uint32_t nsparse;         /* entries of sparse_terms */
    struct wf_table *table;   /* current table */
    uint8_t field_terms[WEFT_MAX_TERMS]; /* table terms with a field */
    uint8_t sparse_terms[WEFT_MAX_TERMS]; /* sparse terms with a field */
    uint32_t fsize[WEFT_MAX_TERMS];      /* fast field sizes; 0: none */
    uint32_t wsize[WEFT_MAX_TERMS];      /* as fsize, write terms only */
    int16_t cols[WEFT_MAX_TERMS];        /* current table: column or -1 */
    void *ptr[WEFT_MAX_TERMS];           /* current chunk: field or NULL */
    uint16_t flt_col[4];      /* direct scan: column of each filtered term */
    uint16_t flt_filter[4];   /* direct scan: filter bits still checked */
} weft_iter_state;

/** Iterator storage. Put it on the stack; its content is private. It is
 *  512 bytes with the alignment of uint64_t and pointers on every target
 *  (`_reserved` fixes both; the library asserts the state fits). */
typedef struct weft_iter {
    union {
        weft_iter_state state;
        uint64_t _reserved[64];
    } _private;
} weft_iter;

/** Starts iterating `query`. Iteration moves chunk by chunk with
 *  weft_iter_next; a chunk is a run of rows of one table that all match.
 *  The iteration takes this_run = the world's change tick and then advances
 *  the world's change tick by one, so later writes are newer than this run.
 *  While any iteration is open, structural calls (spawn, insert, remove,
 *  despawn, flush) are queued and applied, in call order, when the
 *  outermost iteration ends; they return WEFT_OK once queued and report
 *  apply-time failures through the error slot. Bulk spawn is refused
 *  (WRONG_PHASE) while iterating.
 *  The iteration ends when weft_iter_next returns false or weft_iter_fini
 *  is called; an iteration that ends by reaching its last chunk sets the
 *  query's last run to this_run. Stopping early without weft_iter_fini
 *  leaves the world deferring structural calls.
 *  On failure `it` is zeroed: every weft_iter_* call on it is harmless.
 *  Thread: driver. Errors: INVALID_HANDLE (NULL world/query, query of
 *  another world), INVALID_ARG (it NULL), OUT_OF_MEMORY (matching new
 *  archetypes), CAPACITY (64 iterations of this query already open). */
WEFT_API weft_status weft_query_iter(weft_world *world, weft_query *query,
                                     weft_iter *it);

/** Moves to the next chunk. Returns false (and ends the iteration) when
 *  there is none. Thread: driver. */
WEFT_API bool weft_iter_next(weft_iter *it);

/** Ends an iteration early; harmless after weft_iter_next returned false
 *  (then it does nothing). The query's last run is not advanced. A copy of
 *  an iterator is the same iteration: whichever of them ends first ends
 *  it, and the other then does nothing (weft_iter_next returns false).
 *  Thread: driver. */
WEFT_API void weft_iter_fini(weft_iter *it);

/** Rows in the current chunk (0 before the first weft_iter_next or after
 *  the end). Thread: driver. */
WEFT_API int32_t weft_iter_count(const weft_iter *it);

/** Entities of the current chunk (count of them), or NULL outside a chunk.
 *  Thread: driver. Lifetime: until the next weft_iter_next. */
WEFT_API const weft_entity *weft_iter_entities(const weft_iter *it);

/** Read-only values of term `term` for the chunk: count values of `size`
 *  bytes, contiguous, whatever the component's storage, so one loop serves
 *  a component stored in tables or sparse. A table term gives its column
 *  (no copy, no per-row work); a sparse term gives its values in the
 *  sparse set, and chunks of a query with sparse fields end where those
 *  values stop being consecutive (values added in row order give one chunk
 *  per table; a shuffled set gives shorter chunks). NULL when the term is
 *  absent from the chunk (OPTIONAL/OR; for a sparse term the whole chunk
 *  has it or lacks it) or on misuse (error recorded): term out of range, a
 *  term without field (WITH/WITHOUT/NONE), a tag, or `size` differing
 *  from the component's (SIZE_MISMATCH).
 *  Lifetime: until the next weft_iter_next.
 *  Thread: driver (or the system's thread, see weft_system_iter). */
WEFT_API const void *weft_iter_field(weft_iter *it, int32_t term, size_t size);

/** Writable column of a WRITE term; stamps every row of the chunk changed
 *  at this_run. Errors: as weft_iter_field plus ACCESS_VIOLATION (not a
 *  WRITE term). Thread: driver (or the system's thread, see weft_system_iter). */
WEFT_API void *weft_iter_field_mut(weft_iter *it, int32_t term, size_t size);

/** As weft_iter_field_mut without stamping anything: for writes that must
 *  not count as changes.
 *  Thread: driver (or the system's thread, see weft_system_iter). */
WEFT_API void *weft_iter_field_mut_nomark(weft_iter *it, int32_t term, size_t size);

/** True when term `term` is present in the current chunk: always for AND,
 *  per chunk for OPTIONAL/OR terms with a field (table or sparse); for a
 *  sparse tag use weft_iter_get, which answers per row.
 *  Thread: driver (or the system's thread, see weft_system_iter). */
WEFT_API bool weft_iter_has(const weft_iter *it, int32_t term);

/** Value of term `term` at chunk row `row` (0 .. count-1), table or sparse;
 *  NULL when absent. Errors as weft_iter_field, plus INVALID_ARG (row).
 *  Thread: driver (or the system's thread, see weft_system_iter). */
WEFT_API const void *weft_iter_get(weft_iter *it, int32_t term, int32_t row, size_t size);

/** Writable value at `row` of a WRITE term; stamps that row changed.
 *  Thread: driver (or the system's thread, see weft_system_iter). */
WEFT_API void *weft_iter_get_mut(weft_iter *it, int32_t term, int32_t row, size_t size);

/** Stamps row `row` of a WRITE term changed at this_run (after a write
 *  through weft_iter_field_mut_nomark).
 *  Thread: driver (or the system's thread, see weft_system_iter). */
WEFT_API weft_status weft_iter_mark(weft_iter *it, int32_t term, int32_t row);

/** Compares `value` with the row's value of a WRITE term; when they differ,
 *  copies it in (dtor + copy hooks) and stamps the row changed. Bytes are
 *  compared with memcmp. *out_changed (may be NULL) tells which happened.
 *  Thread: driver (or the system's thread, see weft_system_iter). */
WEFT_API weft_status weft_iter_set_if_neq(weft_iter *it, int32_t term, int32_t row,
                                          const void *value, size_t size,
                                          bool *out_changed);

/** True when the live entity `e` matches the query now (filters included,
 *  judged against the query's last run, which is not advanced).
 *  Thread: driver. */
WEFT_API bool weft_query_matches(weft_world *world, weft_query *query, weft_entity e);

/** Field `term` of entity `e` through the query: NULL when e does not match
 *  or the term is absent (no error), or on misuse (error recorded). A WRITE
 *  term's value is returned writable (cast) and is NOT stamped; use
 *  weft_get_mut to stamp. Lifetime: until the next structural change.
 *  Thread: driver. */
WEFT_API const void *weft_query_get(weft_world *world, weft_query *query, weft_entity e,
                                    int32_t term, size_t size);

/** Number of entities the query would yield now (filters judged against
 *  the last run, which is not advanced). -1 on misuse. Thread: driver. */
WEFT_API int64_t weft_query_count(weft_world *world, weft_query *query);

/** True when the query would yield nothing now; also true on misuse
 *  (error recorded as for weft_query_count). Thread: driver. */
WEFT_API bool weft_query_is_empty(weft_world *world, weft_query *query);

/** The one entity the query matches. Errors: NOT_FOUND (none),
 *  NOT_UNIQUE (more than one), INVALID_HANDLE, INVALID_ARG. Thread: driver. */
WEFT_API weft_status weft_query_single(weft_world *world, weft_query *query,
                                       weft_entity *out);

/* ---- change ticks ---- */

/** Every this many ticks the stored ticks are clamped so none is older than
 *  WEFT_MAX_CHANGE_AGE (the values and the rule are Bevy's
 *  CHECK_TICK_THRESHOLD and MAX_CHANGE_AGE). */
#define WEFT_CHECK_TICK_THRESHOLD 518400000u
/** Oldest age a stored tick can have: u32 max - (2 * threshold - 1). */
#define WEFT_MAX_CHANGE_AGE (0xFFFFFFFFu - (2u * WEFT_CHECK_TICK_THRESHOLD - 1u))

/** Clamps every stored tick (columns, sparse sets, resources, the last
 *  runs of queries, systems and run conditions) older than
 *  WEFT_MAX_CHANGE_AGE to change_tick - MAX_CHANGE_AGE.
 *  Without `force` it only runs when WEFT_CHECK_TICK_THRESHOLD ticks have
 *  passed since the last clamp (query iteration calls it that way).
 *  Returns true when it ran. Thread: driver. */
WEFT_API bool weft_world_clamp_ticks(weft_world *world, bool force);

/** Sets the world's change tick (tests of wrap-around). Thread: driver. */
WEFT_API void weft_world_set_change_tick(weft_world *world, uint32_t tick);

/** The normative comparison: true when `tick` is newer than `last_run` as
 *  seen at `this_run`, with wrapping and the MAX_CHANGE_AGE clamp.
 *  Thread: any. */
WEFT_API bool weft_tick_is_newer(uint32_t tick, uint32_t last_run, uint32_t this_run);

/* ---- command buffers ---- */

/** Opaque command buffer: a dense byte queue of recorded structural calls,
 *  applied later in FIFO order. Memory is kept between applies, so
 *  recording allocates nothing in the steady state. */
typedef struct weft_commands weft_commands;

/** Custom command: runs at apply time on the driver thread with the
 *  world in its normal phase. `payload` is the buffer's copy. */
typedef void (*weft_command_fn)(weft_world *world, void *payload, void *user);
/** Releases a custom payload that is never run (buffer destroyed or reset,
 *  world destroyed); also called after the command ran if given. */
typedef void (*weft_command_drop_fn)(void *payload, void *user);

/** Creates an empty command buffer owned by the world. Thread: driver.
 *  Lifetime: until weft_commands_destroy or world destruction. NULL on
 *  failure (INVALID_HANDLE, OUT_OF_MEMORY). */
WEFT_API weft_commands *weft_commands_create(weft_world *world);

/** Destroys a buffer; unapplied commands are dropped (values destroyed,
 *  drop functions called). NULL, the world's own buffer and a buffer being
 *  applied are ignored. Thread: driver. */
WEFT_API void weft_commands_destroy(weft_commands *cmds);

/** The world's own buffer: hooks, observers and query iterations defer
 *  structural calls into it; it is applied when the outermost operation
 *  ends. Recording into it yourself is allowed. NULL for an invalid world,
 *  and (WRONG_PHASE recorded) while a sub-app extracts from the world.
 *  Thread: driver. */
WEFT_API weft_commands *weft_world_commands(weft_world *world);

/** Number of recorded, unapplied commands.
 *  Thread: the thread recording into the buffer, or the driver. */
WEFT_API int32_t weft_commands_count(const weft_commands *cmds);

/** The real entity of a handle weft_cmd_spawn returned on `cmds`.
 *  Spawns recorded into a system's buffer (see weft_system_commands) hand
 *  out provisional handles: their generation has the top bit set, which no
 *  live entity's has, so every world call refuses them (STALE_ENTITY), and
 *  each is tied to one round of one buffer (the commands recorded between
 *  two applies), so a later command of another round or another buffer
 *  refuses it too: a provisional handle never names another entity. Once
 *  the round is applied, this call maps its handles to the spawned
 *  entities, until the buffer's next round with spawns is applied. A
 *  system typically resolves, at the start of its next run, the handles it
 *  kept from the last one.
 *  Returns: e itself when it is not provisional (buffers outside systems
 *  hand out real ids); the real id; or 0 with WRONG_PHASE (the handle's
 *  round is not applied yet) or STALE_ENTITY (another buffer's or an older
 *  round's handle, or its spawn failed at apply). 0 for an invalid buffer.
 *  Thread: the driver, or the thread running the system that owns the
 *  buffer, during its call; errors from a non-driver thread are not
 *  recorded in the error slot. */
WEFT_API weft_entity weft_commands_resolve(const weft_commands *cmds, weft_entity e);

/** Records a spawn; returns the reserved id at once (usable by later
 *  commands in any buffer), live after apply. Values are copied now.
 *  Thread: one thread per buffer at a time; may run concurrently with
 *  other buffers and with read-only world calls, not with structural calls.
 *  Returns 0 on failure (UNKNOWN_COMPONENT, SIZE_MISMATCH,
 *  DUPLICATE_COMPONENT, INVALID_ARG, OUT_OF_MEMORY, CAPACITY); errors from
 *  a non-driver thread are not recorded in the error slot. */
WEFT_API weft_entity weft_cmd_spawn(weft_commands *cmds, const weft_value *values,
                                    int32_t count);

/** Records an insert of one component (value copied now; NULL = default).
 *  The entity is checked at apply: a dead entity is an error reported to
 *  the world (STALE_ENTITY) and the remaining commands still run.
 *  Thread: as weft_cmd_spawn (one thread per buffer at a time). */
WEFT_API weft_status weft_cmd_insert(weft_commands *cmds, weft_entity e,
                                     weft_component c, const void *value, size_t size);
/** Records an insert of several components (one move at apply).
 *  Thread: as weft_cmd_spawn (one thread per buffer at a time). */
WEFT_API weft_status weft_cmd_insert_many(weft_commands *cmds, weft_entity e,
                                          const weft_value *values, int32_t count);
/** Records a remove.
 *  Thread: as weft_cmd_spawn (one thread per buffer at a time). */
WEFT_API weft_status weft_cmd_remove(weft_commands *cmds, weft_entity e, weft_component c);
/** Records a despawn.
 *  Thread: as weft_cmd_spawn (one thread per buffer at a time). */
WEFT_API weft_status weft_cmd_despawn(weft_commands *cmds, weft_entity e);
/** As weft_cmd_insert, silent at apply when the entity is gone.
 *  Thread: as weft_cmd_spawn (one thread per buffer at a time). */
WEFT_API weft_status weft_cmd_try_insert(weft_commands *cmds, weft_entity e,
                                         weft_component c, const void *value, size_t size);
/** As weft_cmd_remove, silent at apply when the entity is gone.
 *  Thread: as weft_cmd_spawn (one thread per buffer at a time). */
WEFT_API weft_status weft_cmd_try_remove(weft_commands *cmds, weft_entity e,
                                         weft_component c);
/** As weft_cmd_despawn, silent at apply when the entity is gone.
 *  Thread: as weft_cmd_spawn (one thread per buffer at a time). */
WEFT_API weft_status weft_cmd_try_despawn(weft_commands *cmds, weft_entity e);
/** Records a resource insert (value copied now).
 *  Thread: as weft_cmd_spawn (one thread per buffer at a time). */
WEFT_API weft_status weft_cmd_resource_insert(weft_commands *cmds, weft_component r,
                                              const void *value, size_t size);
/** Records a resource removal.
 *  Thread: as weft_cmd_spawn (one thread per buffer at a time). */
WEFT_API weft_status weft_cmd_resource_remove(weft_commands *cmds, weft_component r);
/** Records a custom command: `size` payload bytes are copied (aligned to
 *  16), `fn` runs at apply, `drop` (optional) runs once afterwards or
 *  when the command is discarded. Errors: INVALID_HANDLE, INVALID_ARG (fn
 *  NULL, or payload NULL with a size), CAPACITY (size above 1 GiB),
 *  DEPTH_LIMIT, OUT_OF_MEMORY; on failure nothing is recorded and `drop`
 *  is not called.
 *  Thread: as weft_cmd_spawn (one thread per buffer at a time). */
WEFT_API weft_status weft_cmd_custom(weft_commands *cmds, weft_command_fn fn,
                                     const void *payload, size_t size,
                                     weft_command_drop_fn drop, void *user);

/** Applies the buffer's commands in FIFO order and empties it. Hooks and
 *  observers run as for immediate calls; what they defer is applied before
 *  this returns. Thread: driver. Errors: INVALID_HANDLE, WRONG_PHASE
 *  (called from inside a hook, observer or query iteration: apply only from
 *  the normal phase). Per-command failures are reported through the error
 *  slot and do not stop the rest; the call then returns the first such
 *  status. Each command applies whole or not at all: a spawn whose values
 *  cannot be placed is undone (its id turns stale). One exception: when
 *  the flush that makes a spawn's reserved id live runs out of memory, the
 *  id stays reserved, and a later flush makes it an entity with no
 *  components. */
WEFT_API weft_status weft_commands_apply(weft_world *world, weft_commands *cmds);

/* ---- events and observers ---- */

/** Most nested hook/observer/trigger calls, and most rounds of commands
 *  queued by hooks while applying (a cascade), before WEFT_ERR_DEPTH_LIMIT. */
#define WEFT_MAX_EVENT_DEPTH 64

/** Event id. 1..5 are the lifecycle events; custom events are registered. */
typedef uint32_t weft_event;

#define WEFT_EVENT_ADD ((weft_event)1)
#define WEFT_EVENT_INSERT ((weft_event)2)
#define WEFT_EVENT_REPLACE ((weft_event)3)
#define WEFT_EVENT_REMOVE ((weft_event)4)
#define WEFT_EVENT_DESPAWN ((weft_event)5)

/** Custom event descriptor. */
typedef struct weft_event_desc {
    uint32_t _start_canary; /**< must be 0 */
    const char *name;       /**< required, unique among events; copied */
    size_t payload_size;    /**< bytes every trigger must pass (0: none) */
    uint32_t _end_canary;   /**< must be 0 */
} weft_event_desc;

/** Registers a custom event. Thread: driver. Returns the id or 0
 *  (INVALID_ARG, ALREADY_EXISTS, OUT_OF_MEMORY). */
WEFT_API weft_event weft_event_register(weft_world *world, const weft_event_desc *desc);

/** What an observer receives. */
typedef struct weft_trigger {
    weft_event event;
    weft_component component; /**< lifecycle events: the component; else 0 */
    weft_entity entity;       /**< current target (0 for untargeted triggers) */
    weft_entity original;     /**< first target of a propagating trigger */
    const void *payload;      /**< custom events: the payload; valid during the call */
    size_t payload_size;
    bool propagate;           /**< set false to stop propagation up ChildOf */
} weft_trigger;

/** Observer callback. Runs synchronously inside the triggering call, in the
 *  deferred phase (structural calls are queued). Must not unwind. */
typedef void (*weft_observer_fn)(weft_world *world, weft_trigger *trigger, void *user);

/** Observer descriptor. */
typedef struct weft_observer_desc {
    uint32_t _start_canary;       /**< must be 0 */
    weft_event event;             /**< lifecycle or custom event */
    weft_component component;     /**< lifecycle: required; custom: must be 0 */
    weft_entity entity;           /**< 0 = every target; else only this entity */
    weft_observer_fn fn;          /**< required */
    void *user;
    void (*free_user)(void *user); /**< called when the observer is destroyed */
    uint32_t _end_canary;         /**< must be 0 */
} weft_observer_desc;

/** Opaque observer handle, owned by the world. */
typedef struct weft_observer weft_observer;

/** Registers an observer. Observers of one event run in registration
 *  order, after the component's hook; an observer registered during a
 *  trigger does not see that trigger. Entity-targeted observers are
 *  destroyed with their entity. Thread: driver. Returns NULL on failure
 *  (INVALID_ARG, UNKNOWN_COMPONENT, STALE_ENTITY, NOT_FOUND for an unknown
 *  event, OUT_OF_MEMORY). Lifetime: until weft_observer_destroy, the
 *  target's despawn, or world destruction. In a reloadable module's
 *  build the observer belongs to the module: a reload rebinds it (the
 *  same handle is returned) or destroys it, and so does the unload; one
 *  entity's observer is refused there (UNSUPPORTED). */
WEFT_API weft_observer *weft_observer_create(weft_world *world,
                                             const weft_observer_desc *desc);

/** Destroys an observer (safe during a trigger: it will not run again).
 *  NULL is ignored. Thread: driver. Errors: INVALID_HANDLE (world, or
 *  not an observer of this world). */
WEFT_API weft_status weft_observer_destroy(weft_world *world, weft_observer *observer);

/** Triggers a custom event synchronously: observers of `event` registered
 *  for every target, then those registered for `target` (if non-zero).
 *  With `propagate`, the trigger then moves to the target's ChildOf parent
 *  and runs that entity's targeted observers, and so on up to the root,
 *  until an observer clears weft_trigger.propagate. Structural calls made
 *  by observers are applied before this returns (unless called from a
 *  hook/observer/iteration, then after the outer operation).
 *  Thread: driver. Errors: INVALID_HANDLE, NOT_FOUND (event),
 *  SIZE_MISMATCH (payload), STALE_ENTITY, DEPTH_LIMIT. */
WEFT_API weft_status weft_trigger_event(weft_world *world, weft_event event,
                                        weft_entity target, const void *payload,
                                        size_t size, bool propagate);

/* ---- messages ---- */

/** Message type id (per world, from 1). */
typedef uint32_t weft_message_type;

/** Message type descriptor. */
typedef struct weft_message_desc {
    uint32_t _start_canary;                 /**< must be 0 */
    const char *name;                       /**< required, unique; copied */
    size_t size;                            /**< bytes per message, > 0 */
    size_t align;                           /**< 0 = derived as for components */
    void (*drop)(void *msg, void *user);    /**< called once per message when it
                                                 expires or the world dies */
    void *user;
    uint32_t _end_canary;                   /**< must be 0 */
} weft_message_desc;

/** Registers a message type. Thread: driver. Returns 0 on failure
 *  (INVALID_ARG: NULL desc, canary, empty name, size 0 or above the
 *  component size limit; BAD_ALIGNMENT, ALREADY_EXISTS, OUT_OF_MEMORY).
 *  In a module's build (weft_module_load, weft_module_reload), a type the
 *  module registered in an earlier build is returned again when the size
 *  and alignment are the same (its buffered messages, readers, drop and
 *  user kept; another layout: UNSUPPORTED), and the types a failed build
 *  registered are unregistered with it. */
WEFT_API weft_message_type weft_message_register(weft_world *world,
                                                 const weft_message_desc *desc);

/** Finds a message type by name. Returns 0 if there is none (no error is
 *  recorded: absence is an answer) or on misuse (INVALID_ARG: name NULL,
 *  recorded). Thread: driver. */
WEFT_API weft_message_type weft_message_lookup(const weft_world *world, const char *name);

/** Appends a copy of `msg` (memcpy). Messages are double-buffered: a
 *  message written between two weft_messages_update calls is readable
 *  until the second update after it, then dropped. Thread: driver.
 *  Errors: INVALID_HANDLE, NOT_FOUND (type), SIZE_MISMATCH, INVALID_ARG
 *  (msg NULL), OUT_OF_MEMORY (nothing written). */
WEFT_API weft_status weft_message_write(weft_world *world, weft_message_type type,
                                        const void *msg, size_t size);

/** A reader's position; zero-initialise (a new reader sees every message
 *  still buffered, and nothing that expired before its first read counts
 *  as missed). Message ids start at 1 per type, so next == 0 marks a new
 *  reader. One cursor per reader and per message type or removed stream. */
typedef struct weft_message_cursor {
    uint64_t next;   /**< id of the next message to read */
    uint64_t missed; /**< messages that expired before this reader saw them
                          (accumulates; clear it yourself) */
} weft_message_cursor;

/** Returns the next unread message of `type` for `cursor` and advances it,
 *  or NULL when the reader is up to date (no error) or on misuse (error
 *  recorded: INVALID_HANDLE, NOT_FOUND, SIZE_MISMATCH, INVALID_ARG).
 *  Messages come in write order. Lifetime: until the next write or update
 *  of that type. Thread: driver. */
WEFT_API const void *weft_message_read(weft_world *world, weft_message_type type,
                                       weft_message_cursor *cursor, size_t size);

/** Unread messages for `cursor` (no side effects on the cursor), or -1 on
 *  misuse (error recorded: INVALID_HANDLE, NOT_FOUND, INVALID_ARG).
 *  Thread: driver. */
WEFT_API int64_t weft_message_unread(const weft_world *world, weft_message_type type,
                                     const weft_message_cursor *cursor);

/** Swaps every message type's buffers: messages written two updates ago
 *  are dropped. Call once per frame. Also ages the removed-component
 *  streams. Thread: driver. */
WEFT_API void weft_messages_update(weft_world *world);

/** Starts recording which entities lose component `c` (remove or despawn).
 *  Removals before the first call are not recorded; calling it again is a
 *  no-op. Should storing a record run out of memory, the removal still
 *  happens, readers do not see that entity, and OUT_OF_MEMORY is recorded
 *  in the error slot. Thread: driver.
 *  Errors: INVALID_HANDLE, UNKNOWN_COMPONENT, OUT_OF_MEMORY. */
WEFT_API weft_status weft_removed_track(weft_world *world, weft_component c);

/** Next entity that lost `c` for this cursor (0 when up to date); the same
 *  two-update lifetime and cursor rules as messages. Tracking starts on
 *  first use. Thread: driver. Errors (0 returned): INVALID_HANDLE,
 *  INVALID_ARG (cursor NULL), UNKNOWN_COMPONENT, OUT_OF_MEMORY. */
WEFT_API weft_entity weft_removed_read(weft_world *world, weft_component c,
                                       weft_message_cursor *cursor);

/* ---- relationships and hierarchy ---- */

/** Relationship flags (weft_relationship_desc.flags). */
typedef enum weft_relationship_flags {
    WEFT_RELATIONSHIP_FLAGS_DEFAULT = 0,
    WEFT_RELATIONSHIP_LINKED_DESPAWN = 1u << 0, /**< despawning a target despawns
                                                     all its sources (subtree) */
    WEFT_RELATIONSHIP_FLAGS_FORCE_U32 = 0x7FFFFFFF
} weft_relationship_flags;

/** A one-to-many relationship: the source component (on each source
 *  entity, holding one target entity) and the target component (on the
 *  target, an ordered list of sources), kept consistent by hooks. */
typedef struct weft_relationship_desc {
    uint32_t _start_canary; /**< must be 0 */
    const char *name;       /**< source component name; the target component
                                 is named "<name>.targets"; copied */
    uint32_t flags;         /**< weft_relationship_flags */
    uint32_t _end_canary;   /**< must be 0 */
} weft_relationship_desc;

/** Registers a relationship; returns the source component id (its value is
 *  a weft_entity, immutable: change it with weft_relate). A source value
 *  stored by any call (weft_insert, weft_insert_many, weft_spawn_with,
 *  weft_spawn_bulk, commands, JSON, scenes) is checked first like
 *  weft_relate's: a target that is 0, dead, the entity itself or one of
 *  its descendants is refused with RELATIONSHIP and the call changes
 *  nothing (a refused command is reported by its apply). The target
 *  component id is weft_relationship_targets(world, rel). The target
 *  component belongs to weft: inserting, removing or requiring it by hand
 *  (entity calls, commands, resources) is refused with RELATIONSHIP; it
 *  goes when its last source does or with its entity.
 *  Thread: driver. 0 on failure: INVALID_HANDLE, INVALID_ARG (desc),
 *  ALREADY_EXISTS (name), CAPACITY (the two components would pass the
 *  component limit), OUT_OF_MEMORY. */
WEFT_API weft_component weft_relationship_register(weft_world *world,
                                                   const weft_relationship_desc *desc);

/** Target component of a relationship (0 if `rel` is not one). Thread: driver. */
WEFT_API weft_component weft_relationship_targets(const weft_world *world,
                                                  weft_component rel);

/** Built-in ChildOf (LINKED_DESPAWN): registered on first use. Thread: driver. */
WEFT_API weft_component weft_child_of(weft_world *world);

/** Makes `source` point at `target` through `rel` (replacing a previous
 *  target: the source moves to the end of the new target's list).
 *  Errors: INVALID_HANDLE, UNKNOWN_COMPONENT/INVALID_ARG (not a
 *  relationship), STALE_ENTITY, RELATIONSHIP (source == target, or target
 *  is a descendant of source through rel), OUT_OF_MEMORY (nothing changed:
 *  the target's source list is grown before the source changes). Deferred
 *  like other structural calls when called from hooks, observers or
 *  iterations. Thread: driver. */
WEFT_API weft_status weft_relate(weft_world *world, weft_entity source, weft_component rel,
                                 weft_entity target);

/** Removes `source`'s relationship `rel` (no-op when absent). Thread: driver. */
WEFT_API weft_status weft_unrelate(weft_world *world, weft_entity source,
                                   weft_component rel);

/** Target of `source` through `rel`, or 0. Thread: driver. */
WEFT_API weft_entity weft_related(const weft_world *world, weft_entity source,
                                  weft_component rel);

/** Sources pointing at `target` through `rel`, in order; *out_count gets
 *  their number (0 and NULL when none). Lifetime: until the next
 *  structural change. Thread: driver. */
WEFT_API const weft_entity *weft_related_sources(const weft_world *world, weft_entity target,
                                                 weft_component rel, int32_t *out_count);

/** weft_relate through the built-in ChildOf (registered on first use):
 *  makes `child` a child of `parent`, appended to the parent's children.
 *  Despawning the parent later despawns the child's whole subtree.
 *  Thread: driver. Errors: as weft_relate, plus OUT_OF_MEMORY when ChildOf
 *  cannot be registered. */
WEFT_API weft_status weft_set_parent(weft_world *world, weft_entity child,
                                     weft_entity parent);
/** Removes `child`'s ChildOf (no-op when it has none); the parent drops it
 *  from its children. Thread: driver. Errors: INVALID_HANDLE,
 *  INVALID_ENTITY, STALE_ENTITY. */
WEFT_API weft_status weft_remove_parent(weft_world *world, weft_entity child);
/** Parent of `e` through ChildOf, or 0 (no parent, dead entity, or ChildOf
 *  never used). Records no error. Thread: driver. */
WEFT_API weft_entity weft_parent(const weft_world *world, weft_entity e);
/** Children of `e` in order; *out_count (may be NULL) gets their number.
 *  NULL and 0 when there are none. Records no error. Thread: driver.
 *  Lifetime: until the next structural change. */
WEFT_API const weft_entity *weft_children(const weft_world *world, weft_entity e,
                                          int32_t *out_count);

/** Ancestors of e through rel (parent first, root last), up to `cap`
 *  written to out; returns how many exist (may exceed cap), -1 on misuse.
 *  Thread: driver. */
WEFT_API int32_t weft_ancestors(const weft_world *world, weft_entity e, weft_component rel,
                                weft_entity *out, int32_t cap);

/** Descendants of e through rel, breadth first (e excluded), up to `cap`
 *  written to out; returns how many exist, -1 on misuse (or OUT_OF_MEMORY
 *  for scratch). Thread: driver. */
WEFT_API int64_t weft_descendants(weft_world *world, weft_entity e, weft_component rel,
                                  weft_entity *out, int64_t cap);

/* ---- systems and schedules ----
 *
 * Names: a schedule is created from its world (weft_schedule_create) and
 * afterwards knows it, so no schedule call takes the world again. Calls
 * that declare something are weft_schedule_add_<what> (system, apply
 * point, order, chain, node to set, condition to node, ambiguity
 * exemptions), weft_schedule_ensure_set (get or create a set) and
 * weft_schedule_set_<option> (setters). Conditions are built by
 * weft_condition_<kind>(schedule, ...) and attached with
 * weft_schedule_add_condition. Inspection calls are named by what they
 * return (weft_schedule_node_count). weft_system_<verb>(ctx, ...) are the
 * calls a running system makes through its context. */

/** A named, ordered collection of systems (owned by the world). */
typedef struct weft_schedule weft_schedule;
/** What a running system or condition sees; valid only during the call. */
typedef struct weft_system_ctx weft_system_ctx;
/** A system, set or apply point of one schedule; 0 is "none". Systems and
 *  apply points count from 1 in the order they were added; sets have the
 *  WEFT_NODE_SET bit. */
typedef uint32_t weft_node;
/** Run conditions of one schedule (see weft_condition_create). */
typedef struct weft_condition weft_condition;

#define WEFT_NODE_NONE ((weft_node)0)
#define WEFT_NODE_SET 0x80000000u

/** A system body. `user` is the descriptor's user pointer. Report failure
 *  with weft_system_fail; returning is the only way to end a run. Must not
 *  unwind (longjmp, C++ exceptions) through weft. A system that is not
 *  exclusive (and every run condition and par_each chunk) shares the world
 *  with the other systems of the run: world calls that change it made
 *  through a captured weft_world pointer (spawn, insert, remove, despawn,
 *  flush, get_mut, resource insert/remove/get_mut, commands_apply,
 *  registration, query and observer create/destroy, triggers, schedule
 *  runs, weft_world_destroy) are refused with WRONG_PHASE and fail the
 *  system; record commands instead, or make the system exclusive. */
typedef void (*weft_system_fn)(weft_system_ctx *ctx, void *user);
/** A run condition body: read-only, returns whether to run. */
typedef bool (*weft_condition_fn)(weft_system_ctx *ctx, void *user);

/** One resource a system reads (WEFT_ACCESS_READ) or writes
 *  (WEFT_ACCESS_WRITE). */
typedef struct weft_resource_use {
    weft_component id;
    weft_access access;
} weft_resource_use;

/** One message type a system reads (its own cursor) or writes. */
typedef struct weft_message_use {
    weft_message_type type;
    weft_access access;
} weft_message_use;

typedef enum weft_system_flags {
    WEFT_SYSTEM_FLAGS_DEFAULT = 0,
    /** Runs alone, on the thread that runs the schedule, and may use the
     *  whole world through weft_system_world (structural calls included);
     *  its commands are applied right after it returns. */
    WEFT_SYSTEM_EXCLUSIVE = 1u << 0,
    /** Runs only on the thread that called weft_schedule_run. */
    WEFT_SYSTEM_MAIN_THREAD = 1u << 1,
    /** Records commands: a sync point is inserted before its declared
     *  successors (Bevy's has_deferred). Without the flag its commands are
     *  still applied, at the next sync point or the end of the run. */
    WEFT_SYSTEM_COMMANDS = 1u << 2,
    /** Runs on every run of its schedule even while the schedule is being
     *  stepped (weft_schedule_set_stepping): for infrastructure, such as
     *  weft's own diagnostics systems, that a debugger should not stop. */
    WEFT_SYSTEM_NOT_STEPPABLE = 1u << 3,
    WEFT_SYSTEM_FLAGS_FORCE_U32 = 0x7FFFFFFF
} weft_system_flags;

/** Private per-system state: `size` bytes aligned to `align` (0: 16),
 *  zeroed, then init(local, user) once when the system is added;
 *  fini(local, user) when the schedule or world is destroyed. */
typedef struct weft_local_desc {
    size_t size;
    size_t align;
    void (*init)(void *local, void *user);
    void (*fini)(void *local, void *user);
} weft_local_desc;

/** System descriptor. Zero-initialise. Every array is copied. */
typedef struct weft_system_desc {
    uint32_t _start_canary;             /**< must be 0 */
    const char *name;                   /**< required; copied */
    weft_system_fn fn;                  /**< required */
    void *user;
    const weft_query_desc *queries;     /**< the system's queries, by index */
    int32_t query_count;                /**< 0 .. WEFT_MAX_SYSTEM_QUERIES */
    const weft_resource_use *resources;
    int32_t resource_count;             /**< 0 .. WEFT_MAX_SYSTEM_RESOURCES */
    const weft_message_use *messages;
    int32_t message_count;              /**< 0 .. WEFT_MAX_SYSTEM_MESSAGES */
    uint32_t flags;                     /**< weft_system_flags bits */
    weft_local_desc local;
    /** Optional, [query_count]: queries with the same non-zero group form a
     *  param set (Bevy's ParamSet): they may conflict with each other, the
     *  system's access is their union, and only one of them may be iterated
     *  at a time (ACCESS_VIOLATION otherwise). */
    const int32_t *query_groups;
    /** Components whose removals the system reads with
     *  weft_system_removed_read (its own cursor each); tracking starts when
     *  the system is added. */
    const weft_component *removed;
    int32_t removed_count;              /**< 0 .. WEFT_MAX_SYSTEM_RESOURCES */
    uint32_t _end_canary;               /**< must be 0 */
} weft_system_desc;

#define WEFT_MAX_SYSTEM_QUERIES 16
#define WEFT_MAX_SYSTEM_RESOURCES 32
#define WEFT_MAX_SYSTEM_MESSAGES 16

/** Creates an empty schedule named `name` (copied). Thread: driver.
 *  Lifetime: until weft_schedule_destroy or world destruction. NULL on
 *  failure: INVALID_HANDLE, INVALID_ARG (name NULL or empty),
 *  ALREADY_EXISTS (the name is taken), OUT_OF_MEMORY. */
WEFT_API weft_schedule *weft_schedule_create(weft_world *world, const char *name);

/** The schedule named `name`, or NULL (no error recorded; a NULL name is
 *  INVALID_ARG, recorded). Thread: driver. */
WEFT_API weft_schedule *weft_schedule_lookup(const weft_world *world, const char *name);

/** Destroys a schedule: its systems' queries, local state (fini hooks),
 *  command buffers (unapplied commands are discarded) and conditions.
 *  NULL is ignored. Thread: driver. Errors: INVALID_HANDLE (its world
 *  was destroyed), WRONG_PHASE (it is running). */
WEFT_API weft_status weft_schedule_destroy(weft_schedule *schedule);

/** Adds a system. Its queries are compiled now; their terms give the
 *  system's component reads and writes, its resource and message uses the
 *  rest. Two uses inside one system that would alias a write (the same
 *  component written by one query and read or written by another, unless
 *  a With/Without pair makes them disjoint; a resource or message type
 *  listed twice) are refused. Thread: driver, not while the schedule runs.
 *  Returns the node or 0. Errors: INVALID_HANDLE, INVALID_ARG (desc NULL,
 *  canary, no name or fn, counts out of range, arrays NULL, bad access or
 *  flag bits, local align not a power of two), WRONG_PHASE, query errors
 *  (see weft_query_create), NOT_FOUND (resource or message type not
 *  registered), ACCESS_VIOLATION (conflicting uses inside the system),
 *  OUT_OF_MEMORY. Systems are not removed one by one through this API (a
 *  schedule is rebuilt from scratch by destroying and re-creating it),
 *  except those of a reloadable module (weft_module_reload,
 *  weft_module_unload), which shifts the handles of later nodes down. */
WEFT_API weft_node weft_schedule_add_system(weft_schedule *schedule, const weft_system_desc *desc);

/** Adds an explicit apply point (Bevy's ApplyDeferred): when it runs, the
 *  commands of every system before it are applied. Auto sync points reuse
 *  it (weft_schedule_build). `name` is optional (NULL or "": "apply").
 *  Returns the node or 0 (INVALID_ARG, OUT_OF_MEMORY, WRONG_PHASE).
 *  Thread: driver. */
WEFT_API weft_node weft_schedule_add_apply_point(weft_schedule *schedule, const char *name);

/** The set named `name`, created on first use (name copied). Sets carry
 *  ordering and run conditions for all their members and may nest.
 *  Returns the node or 0 (INVALID_ARG, OUT_OF_MEMORY, WRONG_PHASE).
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_node weft_schedule_ensure_set(weft_schedule *schedule, const char *name);

/** Puts a system, apply point or set into a set. Errors: INVALID_ARG
 *  (unknown node, `set` not a set), SCHEDULE_CYCLE (a set into itself),
 *  WRONG_PHASE, OUT_OF_MEMORY. Membership cycles are reported by the
 *  build. Thread: driver, not while the schedule runs. */
WEFT_API weft_status weft_schedule_add_to_set(weft_schedule *schedule, weft_node node,
                                              weft_node set);

/** Ordering flags. */
typedef enum weft_order_flags {
    WEFT_ORDER_DEFAULT = 0,
    WEFT_ORDER_IGNORE_DEFERRED = 1u << 0, /**< this edge needs no sync point */
    WEFT_ORDER_FLAGS_FORCE_U32 = 0x7FFFFFFF
} weft_order_flags;

/** `before` (a node) finishes before `after` starts. Either may be a set:
 *  the order then holds for every member. Errors: INVALID_ARG (unknown
 *  node, bad flags), SCHEDULE_CYCLE (a node before itself), WRONG_PHASE,
 *  OUT_OF_MEMORY. Cycles through several edges are reported by the build.
 *  Declaring the same pair with the same flags again adds nothing.
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_status weft_schedule_add_order(weft_schedule *schedule, weft_node before,
                                             weft_node after, uint32_t flags);

/** Orders nodes[0] before nodes[1] before ... (weft_schedule_add_order on each
     *  adjacent pair, with `flags`). Thread: driver, not while the schedule runs. */
WEFT_API weft_status weft_schedule_add_chain(weft_schedule *schedule, const weft_node *nodes,
                                             int32_t count, uint32_t flags);

/** Declares that `a` and `b` (systems or sets) may run in either order:
 *  their conflicts are left out of the ambiguity report. They are still
 *  ordered, by registration, so runs stay deterministic.
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_status weft_schedule_add_ambiguous_pair(weft_schedule *schedule, weft_node a,
                                                      weft_node b);

/** Leaves component or resource `c` out of the ambiguity report.
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_status weft_schedule_add_ambiguous_component(weft_schedule *schedule,
                                                           weft_component c);

/** Turns automatic sync points on (default) or off.
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_status weft_schedule_set_auto_sync(weft_schedule *schedule, bool on);

/** Turns the final apply at the end of each run on (default) or off. With
 *  it off, commands recorded after the last sync point stay queued until
 *  the next run's first sync point (or weft_schedule_apply_pending).
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_status weft_schedule_set_apply_final(weft_schedule *schedule, bool on);

/** Applies every queued command of the schedule's systems, in schedule
 *  order. Thread: driver, not while it runs. Returns the first failure. */
WEFT_API weft_status weft_schedule_apply_pending(weft_schedule *schedule);

/** Records start/end times of every system run (per-system time in the
 *  stats, the trace export). Off by default: it costs two clock reads per
 *  system. Run counts are kept either way.
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_status weft_schedule_set_profiling(weft_schedule *schedule, bool on);

/* -- run conditions -- */

/** Condition descriptor: like a system's, but read-only. */
typedef struct weft_condition_desc {
    uint32_t _start_canary;             /**< must be 0 */
    const char *name;                   /**< optional; copied */
    weft_condition_fn fn;               /**< required */
    void *user;
    const weft_query_desc *queries;
    int32_t query_count;
    const weft_resource_use *resources;
    int32_t resource_count;
    const weft_message_use *messages;
    int32_t message_count;
    uint32_t _end_canary;               /**< must be 0 */
} weft_condition_desc;

/** Creates a condition owned by the schedule. Its queries, resources and
 *  messages must be read-only: a write is refused (ACCESS_VIOLATION).
 *  Returns NULL on failure (as weft_schedule_add_system). A condition is attached
 *  once: to one node by weft_schedule_add_condition or to one combinator.
 *  In a reloadable module's build a condition needs a name (else
 *  UNSUPPORTED) and belongs to the module: a reload that creates it again
 *  returns the same handle with the new code (attaching it again to the
 *  same node or set is then a no-op), one that does not detaches it.
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_condition *weft_condition_create(weft_schedule *schedule,
                                               const weft_condition_desc *desc);
/** a AND b; b is evaluated only when a is true (short circuit).
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_condition *weft_condition_and(weft_schedule *schedule, weft_condition *a,
                                            weft_condition *b);
/** a AND b; both are always evaluated.
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_condition *weft_condition_and_eager(weft_schedule *schedule, weft_condition *a,
                                                  weft_condition *b);
/** a OR b; b is evaluated only when a is false.
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_condition *weft_condition_or(weft_schedule *schedule, weft_condition *a,
                                           weft_condition *b);
/** NOT a. Thread: driver, not while the schedule runs. */
WEFT_API weft_condition *weft_condition_not(weft_schedule *schedule, weft_condition *a);
/** True the first time it is evaluated, false after.
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_condition *weft_condition_run_once(weft_schedule *schedule);
/** True when resource r exists and was inserted or written since this
 *  condition last evaluated (the first evaluation counts an existing one).
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_condition *weft_condition_resource_changed(weft_schedule *schedule,
                                                         weft_component r);
/** True when resource r exists. Thread: driver, not while the schedule runs. */
WEFT_API weft_condition *weft_condition_resource_exists(weft_schedule *schedule,
                                                        weft_component r);
/** True when messages of `type` arrived that this condition has not seen
 *  (it consumes them from its own cursor).
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_condition *weft_condition_on_message(weft_schedule *schedule,
                                                   weft_message_type type);

/** Attaches `cond` to a system or set. A node may have several conditions;
 *  all are evaluated (no short circuit between them) and must all be true.
 *  A set's conditions are evaluated once per run, when its first member is
 *  about to run; a false one skips every member. A skipped system's own
 *  conditions are still evaluated; it releases its successors, keeps its
 *  last-run tick and has no commands to apply. Errors: INVALID_ARG (NULL,
 *  unknown node, a condition of another schedule), ALREADY_EXISTS (cond
 *  already attached), WRONG_PHASE, OUT_OF_MEMORY.
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_status weft_schedule_add_condition(weft_schedule *schedule, weft_node node,
                                                 weft_condition *cond);

/* -- build and run -- */

/** Builds the schedule now (weft_schedule_run builds when something
 *  changed): flattens sets, orders every pair of conflicting systems with
 *  no declared order by registration order (and reports them as
 *  ambiguities), inserts sync points, computes the order. Errors:
 *  SCHEDULE_CYCLE (the message names every node of one cycle),
 *  OUT_OF_MEMORY, WRONG_PHASE. Thread: driver. */
WEFT_API weft_status weft_schedule_build(weft_schedule *schedule);

/** Times the schedule was built (a run without changes does not rebuild).
 *  Thread: driver. */
WEFT_API uint32_t weft_schedule_build_count(const weft_schedule *schedule);

/** Runs every system once, on the world's executor (weft_world_set_threads
 *  or weft_world_set_job_system), building first if needed. `dt` is the
 *  delta time systems read with weft_system_delta. Each system run gets its
 *  own change tick (deterministic: from its place in the order), sees
 *  Added/Changed since its own previous run, and records commands into its
 *  own buffer; buffers are applied at sync points and at the end in
 *  (schedule order, chunk index) order, so the world after a run does not
 *  depend on the thread count. A failing system does not stop the run:
 *  the rest complete, and the first failure is returned (message in the
 *  world's error slot). Thread: driver; not re-entrant for one schedule
 *  (WRONG_PHASE), but an exclusive system may run another schedule.
 *  Errors: build errors, a system's failure status, WRONG_PHASE. */
WEFT_API weft_status weft_schedule_run(weft_schedule *schedule, double dt);

/** As weft_schedule_run, skipping the listed systems this once (the hook a
 *  stepping debugger needs): they count as skipped, release their
 *  successors and keep their last-run tick. Errors: as weft_schedule_run,
 *  plus INVALID_ARG (count < 0, skip NULL with count > 0, a node that is
 *  not a system of this schedule). Thread: as weft_schedule_run. */
WEFT_API weft_status weft_schedule_run_skip(weft_schedule *schedule,
                                            double dt, const weft_node *skip,
                                            int32_t count);

/* -- stepping (a system-level debugger, after Bevy's Stepping) -- */

/** How a system behaves while its schedule is being stepped. */
typedef enum weft_step_behavior {
    WEFT_STEP_DEFAULT = 0,    /**< runs when a step or continue reaches it */
    WEFT_STEP_ALWAYS_RUN = 1, /**< runs on every run (as WEFT_SYSTEM_NOT_STEPPABLE) */
    WEFT_STEP_NEVER_RUN = 2,  /**< skipped on every run */
    WEFT_STEP_BREAK = 3,      /**< a breakpoint: weft_schedule_continue stops
                                   before it */
    WEFT_STEP_BEHAVIOR_FORCE_U32 = 0x7FFFFFFF
} weft_step_behavior;

/** Turns stepping on or off. While it is on, a run of the schedule runs
 *  only the systems flagged WEFT_SYSTEM_NOT_STEPPABLE or set to
 *  WEFT_STEP_ALWAYS_RUN, plus what the last weft_schedule_step or
 *  weft_schedule_continue asked for; every other system is skipped as by
 *  weft_schedule_run_skip (it counts as skipped, releases its successors
 *  and keeps its last-run tick). Sync points and apply points always run.
 *  Turning it on puts the cursor at the first system; turning it off
 *  forgets a pending request. Errors: INVALID_HANDLE, WRONG_PHASE (the
 *  schedule is running). Thread: driver. */
WEFT_API weft_status weft_schedule_set_stepping(weft_schedule *schedule, bool on);

/** Whether stepping is on. Thread: driver. */
WEFT_API bool weft_schedule_is_stepping(const weft_schedule *schedule);

/** Asks the next run to run one system: the first steppable system at or
 *  after the cursor in the built order (from the start when none is left),
 *  which then moves past it. Errors: INVALID_HANDLE, WRONG_PHASE (stepping
 *  off, or the schedule is running). Thread: driver. */
WEFT_API weft_status weft_schedule_step(weft_schedule *schedule);

/** Asks the next run to run the steppable systems from the cursor to the
 *  end of the schedule, stopping before the next breakpoint
 *  (WEFT_STEP_BREAK; one at the cursor itself runs). The cursor moves to
 *  that breakpoint, or back to the start when the end was reached.
 *  Errors: as weft_schedule_step. Thread: driver. */
WEFT_API weft_status weft_schedule_continue(weft_schedule *schedule);

/** Sets how system `node` behaves while stepping (WEFT_STEP_DEFAULT clears
 *  a breakpoint or skip). Errors: INVALID_HANDLE, INVALID_ARG (not a
 *  system of this schedule, unknown behavior), WRONG_PHASE (the schedule
 *  is running). Thread: driver. */
WEFT_API weft_status weft_schedule_set_step_behavior(weft_schedule *schedule, weft_node node,
                                                     weft_step_behavior behavior);

/** How node `node` behaves while stepping: for a system, as last set with
 *  weft_schedule_set_step_behavior (WEFT_STEP_DEFAULT when never set); for
 *  an apply point, WEFT_STEP_ALWAYS_RUN (apply points always run).
 *  Errors (WEFT_STEP_DEFAULT returned, the status recorded):
 *  INVALID_HANDLE, INVALID_ARG (no such node: 0, a set, out of range).
 *  Thread: driver. */
WEFT_API weft_step_behavior weft_schedule_step_behavior(const weft_schedule *schedule,
                                                        weft_node node);

/** The system the next step would run (the first steppable system at or
 *  after the cursor), or 0 when stepping is off, the schedule is not built
 *  or no steppable system is left before the end. A rebuild (after a
 *  declaration changed) puts the cursor back at the start. Thread: driver. */
WEFT_API weft_node weft_schedule_step_cursor(const weft_schedule *schedule);


/** Number of systems and apply points added (nodes 1 .. count). Thread: driver. */
WEFT_API int32_t weft_schedule_node_count(const weft_schedule *schedule);
/** Name of a node (system, apply point or set), or NULL. Lifetime: the
 *  schedule's. Thread: driver. */
WEFT_API const char *weft_schedule_node_name(const weft_schedule *schedule, weft_node node);
/** Position of a system or apply point in the built order (0-based), or -1
 *  (not built, unknown node). Thread: driver. */
WEFT_API int32_t weft_schedule_position(const weft_schedule *schedule, weft_node node);
/** Sync points (automatic and explicit) in the built schedule, or -1.
 *  Thread: driver. */
WEFT_API int32_t weft_schedule_sync_count(const weft_schedule *schedule);
/** Is there a direct edge from `before` to `after` in the built graph
 *  (declared, conflict or through an inserted sync point counts as not
 *  direct)? Thread: driver. */
WEFT_API bool weft_schedule_has_edge(const weft_schedule *schedule, weft_node before,
                                     weft_node after);

/** One pair of conflicting systems with no declared order. */
typedef struct weft_ambiguity {
    weft_node a, b;                   /**< a < b: a runs first */
    int32_t component_count;          /**< ids they conflict on (0: exclusive) */
    const weft_component *components; /**< valid until the next build */
} weft_ambiguity;

/** Ambiguities found by the last build, or -1 when not built. Thread: driver. */
WEFT_API int32_t weft_schedule_ambiguity_count(const weft_schedule *schedule);
/** The i-th ambiguity. Errors: INVALID_ARG (i out of range, out NULL).
 *  Thread: driver. */
WEFT_API weft_status weft_schedule_ambiguity(const weft_schedule *schedule, int32_t i,
                                             weft_ambiguity *out);

/** Per-system counters. */
typedef struct weft_system_stats {
    uint64_t runs;        /**< times the body ran */
    uint64_t skipped;     /**< times a condition skipped it */
    uint64_t failures;    /**< runs that reported failure */
    uint64_t total_ns;    /**< time in the body (profiling on) */
    uint64_t last_ns;     /**< last run's time (profiling on) */
} weft_system_stats;

/** Counters of one system. Errors: INVALID_ARG (unknown node, out NULL).
 *  Thread: driver. */
WEFT_API weft_status weft_schedule_system_stats(const weft_schedule *schedule, weft_node node,
                                                weft_system_stats *out);

/** Most systems seen running at the same time during the last run, from
 *  its profile (weft_schedule_set_profiling); -1 when the last run was not
 *  profiled. Thread: driver. */
WEFT_API int32_t weft_schedule_max_concurrency(const weft_schedule *schedule);

/** Writes the last run as Chrome trace-event JSON (one track per worker;
 *  loads in Perfetto and chrome://tracing) into buf (cap bytes, NUL
 *  terminated when cap > 0). Returns the full length (excluding the NUL);
 *  call with cap 0 or buf NULL to size the buffer. Needs profiling on for
 *  the last run (otherwise the trace has no events). Thread: driver. */
WEFT_API size_t weft_schedule_trace_json(const weft_schedule *schedule, char *buf, size_t cap);

/** Writes the built schedule as Graphviz DOT (systems, sets as clusters,
 *  edges, sync points), like weft_schedule_trace_json. Returns 0 when the
 *  schedule is not built. Thread: driver. */
WEFT_API size_t weft_schedule_dot(const weft_schedule *schedule, char *buf, size_t cap);

/** The schedule's sets (nodes with WEFT_NODE_SET, in creation order; name
 *  each with weft_schedule_node_name): writes up to `cap` of them to `out`
 *  and returns how many there are (call with cap 0, out NULL to count).
 *  -1 for an invalid schedule, or (recorded) INVALID_ARG: cap < 0, out
 *  NULL with cap > 0. Thread: driver. */
WEFT_API int32_t weft_schedule_sets(const weft_schedule *schedule, weft_node *out,
                                    int32_t cap);

/** The direct members of `set` (systems, apply points and nested sets put
 *  into it with weft_schedule_add_to_set, in declaration order, each
 *  once): writes up to `cap` of them to `out` and returns how many there
 *  are (cap 0, out NULL counts). -1 for an invalid schedule, or
 *  (recorded) INVALID_ARG: `set` not a set of this schedule, cap < 0, out
 *  NULL with cap > 0. Thread: driver. */
WEFT_API int32_t weft_schedule_members(const weft_schedule *schedule, weft_node set,
                                       weft_node *out, int32_t cap);

/* -- executors -- */

/** A job for a host job system. */
typedef void (*weft_job_fn)(void *arg);

/** A host job system (one thread pool for the engine and weft). */
typedef struct weft_job_system {
    void *user;
    /** Worker threads the host runs jobs on (>= 1); sizes parallel work. */
    uint32_t workers;
    /** Runs fn(arg) once, soon, on any thread. Called from the thread
     *  running the schedule and from inside jobs. Must not fail. */
    void (*submit)(void *user, weft_job_fn fn, void *arg);
    /** Called in a loop by a thread that waits inside weft (the thread
     *  running the schedule, or a job of weft's waiting for other jobs):
     *  run one pending job if there is one, otherwise yield or sleep
     *  briefly, then return. Must be callable from job threads. */
    void (*help)(void *user);
} weft_job_system;

/** Sets the executor: threads == 0 or 1 runs schedules single-threaded on
 *  the calling thread; threads > 1 starts a pool of threads - 1 workers
 *  (the caller is the last worker); threads < 0 uses one worker per online
 *  CPU. Idle pool threads sleep. In a build without threads
 *  (WEFT_THREADS=OFF) only 1, 0 and -1 are accepted and all mean the
 *  calling thread. Thread: driver, not during a run.
 *  Errors: INVALID_HANDLE, WRONG_PHASE (also while the world lends its
 *  executor or borrows another's: weft_world_share_threads), OUT_OF_MEMORY
 *  / INTERNAL (a thread could not start; the executor is left
 *  single-threaded), UNSUPPORTED (threads > 1 in a build without threads;
 *  the executor is unchanged). */
WEFT_API weft_status weft_world_set_threads(weft_world *world, int32_t threads);

/** Uses the host's job system (copied) instead of the built-in pool; NULL
 *  returns to single-threaded. Errors: INVALID_HANDLE, INVALID_ARG (no
 *  submit or help, workers 0), WRONG_PHASE (as weft_world_set_threads),
 *  UNSUPPORTED (workers > 1 in a build without threads).
 *  Thread: driver, not during a run. */
WEFT_API weft_status weft_world_set_job_system(weft_world *world, const weft_job_system *jobs);

/** Runs `world`'s schedules on the executor of `lender` (its built-in pool
 *  of weft_world_set_threads, or its host job system) instead of one of its
 *  own, which is stopped; `lender` NULL stops borrowing (single-threaded
 *  again). The two worlds may run schedules at the same time on different
 *  threads (a pipelined sub-app's thread and the main driver): the pool
 *  takes each running thread as a caller with a deque of its own (up to 8
 *  besides its driver; beyond that a run goes single-threaded), both runs
 *  spread their systems and parallel iterations over the pool's workers,
 *  and a thread that waits inside a run never starts the other run's
 *  long-lived helper tasks, so neither can wait on the other (no
 *  deadlock). Results do not depend on it. While it lends, the lender's
 *  executor cannot change and the lender cannot be destroyed (WRONG_PHASE):
 *  a borrower stops borrowing when it is destroyed. Errors: INVALID_HANDLE,
 *  INVALID_ARG (lender == world, the lender borrows itself, world lends to
 *  others), WRONG_PHASE (a schedule of world runs, or it is extracted
 *  from), OUT_OF_MEMORY. Thread: driver of world, not during a run; the
 *  lender's driver must not change its executor meanwhile. */
WEFT_API weft_status weft_world_share_threads(weft_world *world, weft_world *lender);

/** Workers of the current executor (1: single-threaded), the lender's when
 *  the world borrows one. Thread: driver. */
WEFT_API int32_t weft_world_threads(const weft_world *world);

/* -- the system context -- */

/** The system's name.
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API const char *weft_system_name(const weft_system_ctx *ctx);
/** The delta time passed to the run (the fixed step inside an app's
 *  fixed schedules, see weft_app_update).
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API double weft_system_delta(const weft_system_ctx *ctx);
/** This run's change tick.
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API uint32_t weft_system_this_run(const weft_system_ctx *ctx);
/** The system's previous run tick (what Added/Changed compare against).
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API uint32_t weft_system_last_run(const weft_system_ctx *ctx);
/** The worker running the call (0 .. threads - 1).
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API int32_t weft_system_worker(const weft_system_ctx *ctx);
/** The system's local state (NULL when it declared none).
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API void *weft_system_local(weft_system_ctx *ctx);
/** The world, for exclusive systems only; others get NULL (WRONG_PHASE
 *  recorded): they touch the world through the context.
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API weft_world *weft_system_world(weft_system_ctx *ctx);
/** The system's command buffer (NULL for conditions). Applied at the next
 *  sync point. Inside parallel systems, an entity returned by
 *  weft_cmd_spawn is provisional: use it in later commands of the same
 *  buffer round (including as a ChildOf/relationship target); the apply
 *  gives it a real id, which weft_commands_resolve returns afterwards.
 *  Used anywhere else (a world call, another buffer, a later round) it is
 *  refused with STALE_ENTITY; it never names another entity. Handles inside
 *  custom-command payloads or other component values are not translated.
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API weft_commands *weft_system_commands(weft_system_ctx *ctx);

/** Starts iterating the system's query number `query` with this run's
 *  ticks (Added/Changed since the system's last run). Use weft_iter_next,
 *  weft_iter_field* as for weft_query_iter; writing a read-only term is an
 *  ACCESS_VIOLATION. The weft_iter_* calls on such an iterator (and on the
 *  ones weft_system_par_each hands out) may be made on the thread running
 *  the system, whatever their "Thread: driver" note says. Ending the
 *  iteration does not move the query's own last run; the system's does,
 *  after the run. Errors: INVALID_ARG (query out of range, it NULL),
 *  OUT_OF_MEMORY. */
WEFT_API weft_status weft_system_iter(weft_system_ctx *ctx, int32_t query, weft_iter *it);

/** Entities matched by query number `query` (filters ignored), -1 on
 *  misuse. Thread: the thread running the system or condition, during its call. */
WEFT_API int64_t weft_system_count(weft_system_ctx *ctx, int32_t query);

/** Term `term` of entity e through query number `query` (as
 *  weft_query_get): NULL when e does not match. Errors: INVALID_ARG,
 *  SIZE_MISMATCH, ACCESS_VIOLATION (a NONE term).
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API const void *weft_system_get(weft_system_ctx *ctx, int32_t query, weft_entity e,
                                     int32_t term, size_t size);
/** As weft_system_get for a WRITE term; marks it changed at this run.
 *  ACCESS_VIOLATION (and the system fails) for a term not declared WRITE.
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API void *weft_system_get_mut(weft_system_ctx *ctx, int32_t query, weft_entity e,
                                   int32_t term, size_t size);

/** Resource r, declared READ or WRITE; NULL when absent. ACCESS_VIOLATION
 *  (and the system fails) when not declared.
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API const void *weft_system_resource(weft_system_ctx *ctx, weft_component r,
                                          size_t size);
/** Resource r, declared WRITE; marks it changed.
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API void *weft_system_resource_mut(weft_system_ctx *ctx, weft_component r, size_t size);

/** Writes a message of a type declared WRITE.
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API weft_status weft_system_message_write(weft_system_ctx *ctx, weft_message_type type,
                                               const void *msg, size_t size);
/** Next unread message of a type declared READ (the system's own cursor),
 *  or NULL. Thread: the thread running the system or condition, during its call. */
WEFT_API const void *weft_system_message_read(weft_system_ctx *ctx, weft_message_type type,
                                              size_t size);

/** Next entity that lost component `c` (declared in the descriptor's
 *  `removed`) since this system last read it, or 0. Same two-update
 *  lifetime as messages. ACCESS_VIOLATION (and the system fails) when `c`
 *  was not declared.
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API weft_entity weft_system_removed_read(weft_system_ctx *ctx, weft_component c);

/** Marks the run failed with `status` (not WEFT_OK) and a message (copied;
 *  may be NULL). The first failure of a schedule run is what
 *  weft_schedule_run returns. The system's commands are still applied.
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API void weft_system_fail(weft_system_ctx *ctx, weft_status status, const char *message);

/** A parallel-iteration body: `it` holds one chunk task's rows (step it
 *  with weft_iter_next); `cmds` is the task's own command buffer. */
typedef void (*weft_chunk_fn)(weft_iter *it, weft_commands *cmds, void *user);

/** Runs fn over query number `query` split into chunk tasks on the
 *  executor's workers, and returns when all are done. Tasks never cross a
 *  table and hold at least `min_rows` rows (0: 1024) unless a table is
 *  smaller; with few rows or one worker it runs inline. Each task's
 *  commands go to its own buffer; buffers are applied in (system order,
 *  task index) order, which is the order a single loop would record them
 *  in. Structural changes and world calls are not allowed in fn. Errors:
 *  INVALID_ARG, OUT_OF_MEMORY.
 *  Thread: the thread running the system, during its call (not from fn). */
WEFT_API weft_status weft_system_par_each(weft_system_ctx *ctx, int32_t query,
                                          weft_chunk_fn fn, void *user, int32_t min_rows);

/* ==================================================================== */
/* ---- tasks: work that spans frames (async compute and IO pools) ----
 *
 * After Bevy's bevy_tasks (AsyncComputeTaskPool, IoTaskPool): a system or
 * the driver spawns a task (a function, user data, an input copied at
 * spawn and a result block), keeps its handle, and polls it in later
 * frames. Tasks run on one of two pools of threads the world starts on its
 * first spawn into each: ASYNC_COMPUTE for work longer than a frame (path
 * finding, procedural generation) and IO for waits on files and the
 * network; the compute pool of in-frame work (weft_world_set_threads) is
 * separate and unchanged. A task's function never touches the world: it
 * reads its input and writes its result. What reaches the world does so
 * on the driver at the world's task sync point (weft_tasks_tick, which a
 * weft_app runs at the end of every update): a task's `apply` step runs
 * there, on the driver, and the commands it records are applied at once.
 * docs/tasks.md explains the model, pool sizes, thread rules, determinism
 * and shutdown. */

/** Task handle: slot index + 1 in the low 32 bits, generation in the
 *  high 32. A
 *  handle is valid from weft_task_spawn until a poll or wait reports a
 *  final state (the result is taken and the handle released) or until
 *  weft_task_detach; afterwards every call refuses it (INVALID_HANDLE),
 *  whatever happens to the slot. 0 is never a task. */
typedef uint64_t weft_task;

#define WEFT_TASK_NONE ((weft_task)0)

/** The pool a task runs on. */
typedef enum weft_task_pool {
    /** Work spanning frames: by default 25% of the CPUs, 1 to 4 threads. */
    WEFT_TASK_POOL_ASYNC_COMPUTE = 0,
    /** Blocking waits (files, network): by default 25% of the CPUs, 1 to 4
     *  threads. */
    WEFT_TASK_POOL_IO = 1,
    WEFT_TASK_POOL_COUNT = 2,
    WEFT_TASK_POOL_FORCE_U32 = 0x7FFFFFFF
} weft_task_pool;

/** What a poll or wait sees. */
typedef enum weft_task_state {
    WEFT_TASK_STATE_NONE = 0,      /**< the call failed: no task was looked at */
    WEFT_TASK_STATE_PENDING = 1,   /**< queued, running, or waiting for its sync point */
    WEFT_TASK_STATE_READY = 2,     /**< done: its result was copied out */
    WEFT_TASK_STATE_FAILED = 3,    /**< its function returned an error (see
                                        weft_task_outcome.status, .message) */
    WEFT_TASK_STATE_CANCELLED = 4, /**< cancelled: it never ran, or its result
                                        was discarded and nothing applied */
    WEFT_TASK_STATE_FORCE_U32 = 0x7FFFFFFF
} weft_task_state;

/** Longest failure message a task keeps (weft_task_fail), in bytes. */
#define WEFT_TASK_MESSAGE_MAX 255

/** What a poll or wait found (written by weft_task_poll / weft_task_wait). */
typedef struct weft_task_outcome {
    weft_task_state state;   /**< NONE when the call failed */
    /** FAILED: the status the task's function returned; WEFT_OK otherwise. */
    weft_status status;
    /** FAILED: its message (weft_task_fail's, else the status text);
     *  "" otherwise. */
    char message[WEFT_TASK_MESSAGE_MAX + 1];
} weft_task_outcome;

/** What a running task sees of itself (opaque; valid during its call). */
typedef struct weft_task_ctx weft_task_ctx;

/** A task's function: runs once on a pool thread (or, see weft_task_wait
 *  and the build without threads, on a thread that runs it inline).
 *  `input` is the task's copy of the spawn input (NULL when none),
 *  `result` its zero-filled block of result_size bytes (NULL when 0).
 *  Returns WEFT_OK, or an error that makes the task FAILED (see
 *  weft_task_fail for a message). It may poll weft_task_cancelled, spawn,
 *  poll, wait for, cancel and detach other tasks of the same world, and
 *  must call no other function of the world: the driver runs frames
 *  meanwhile. */
typedef weft_status (*weft_task_fn)(weft_task_ctx *ctx, const void *input, void *result,
                                    void *user);

/** A task's apply step: runs on the driver thread at the sync point that
 *  completes the task (weft_tasks_tick, or a weft_task_wait on the driver
 *  for a task without WEFT_TASK_DETERMINISTIC), once, only when its
 *  function returned WEFT_OK and it was not cancelled. It may read the world and
 *  `result`; the structural changes it records into `cmds` (valid during
 *  the call) are applied right after it returns, before the next task's
 *  apply step. */
typedef void (*weft_task_apply_fn)(weft_world *world, weft_commands *cmds,
                                   const void *result, void *user);

/** The task's apply step, and its commands, run at a fixed sync point in a
 *  fixed order (see weft_task_desc.apply_delay): same world on any thread
 *  count. */
#define WEFT_TASK_DETERMINISTIC 0x1u

/** Describes a task (copied at spawn; `input` bytes copied too). */
typedef struct weft_task_desc {
    uint32_t _start_canary;     /**< must be 0 */
    weft_task_pool pool;        /**< WEFT_TASK_POOL_ASYNC_COMPUTE (0) or IO */
    weft_task_fn fn;            /**< required */
    void *user;                 /**< passed to fn and apply; the caller's */
    const void *input;          /**< copied at spawn (NULL when input_size is 0) */
    size_t input_size;          /**< at most 1 GiB */
    size_t result_size;         /**< bytes of the result block, at most 1 GiB */
    weft_task_apply_fn apply;   /**< optional step on the driver at the sync point */
    /** WEFT_TASK_DETERMINISTIC: tasks completing at the same sync point
     *  complete by (order, spawn order). Spawn order is a fixed order only
     *  when the spawns are (the driver, one system, ordered systems); tasks
     *  spawned by systems that may run at the same time need distinct
     *  order keys. Ignored otherwise. */
    uint64_t order;
    uint32_t flags;             /**< WEFT_TASK_DETERMINISTIC or 0 */
    /** WEFT_TASK_DETERMINISTIC: the task completes at the apply_delay-th
     *  sync point after its spawn (1 or more; 0 means 1), waiting there for
     *  its function if it has not ended. Ignored otherwise. */
    uint32_t apply_delay;
    uint32_t _end_canary;       /**< must be 0 */
} weft_task_desc;

/** Spawns a task onto its pool (the pool's threads start on its first
 *  spawn). *out_task receives the handle (0 on failure). A task with
 *  neither `apply` nor WEFT_TASK_DETERMINISTIC is final as soon as its
 *  function returns; with either, it is final once the sync point has
 *  completed it. Thread: the driver, a system (any worker, also parallel
 *  ones), or a task's function. Errors: INVALID_HANDLE, INVALID_ARG (NULL
 *  desc or out_task, a canary set, no fn, input NULL with a size, unknown
 *  pool or flag),
 *  CAPACITY (input or result above 1 GiB), WRONG_PHASE (the world is being
 *  destroyed), OUT_OF_MEMORY, INTERNAL (no pool thread could start); from
 *  a system or task the error goes to its error slot. */
WEFT_API weft_status weft_task_spawn(weft_world *world, const weft_task_desc *desc,
                                     weft_task *out_task);

/** Looks at a task without blocking and fills *out. out->state: PENDING
 *  (nothing else done), or a final state, in which case the handle is
 *  released (the next call with it is refused) and, for READY, the result
 *  is copied into `result` (NULL: dropped; otherwise `result_size` must be
 *  the task's result size); for FAILED, out->status and out->message say
 *  why. A task's failure is an outcome, not an error of the call: the call
 *  returns WEFT_OK whenever it looked at the task, so a system polling a
 *  failed task does not fail. Thread: as weft_task_spawn. Errors
 *  (out->state NONE, nothing changed; from a system or task the error goes
 *  to its own slot): INVALID_HANDLE (bad world; 0, forged, stale, taken or
 *  detached handle), INVALID_ARG (out NULL), SIZE_MISMATCH (result_size
 *  differs from the task's, with a non-NULL result). */
WEFT_API weft_status weft_task_poll(weft_world *world, weft_task task, weft_task_outcome *out,
                                    void *result, size_t result_size);

/** As weft_task_poll, but first blocks until the task's function has
 *  ended; a task nobody has started yet runs on the calling thread. A task
 *  with an apply step is completed here (apply and its commands) when
 *  called on the driver outside systems, hooks, observers and iterations;
 *  elsewhere, and for a WEFT_TASK_DETERMINISTIC task before its sync point,
 *  the call is refused with WRONG_PHASE before blocking (poll it after
 *  its sync point instead). Waiting from a system holds its worker.
 *  Thread: as weft_task_spawn. Errors: as weft_task_poll, and WRONG_PHASE. */
WEFT_API weft_status weft_task_wait(weft_world *world, weft_task task, weft_task_outcome *out,
                                    void *result, size_t result_size);

/** Requests cancellation; the handle stays valid (poll or detach it). A
 *  task that has not started never runs; a running one sees
 *  weft_task_cancelled and ends CANCELLED whatever it returns; an ended one
 *  waiting for its sync point is not applied. In every case its apply step
 *  does not run, and the next poll reports CANCELLED. A task already final
 *  (or being applied at this moment) keeps its outcome. Thread: as
 *  weft_task_spawn. Errors: INVALID_HANDLE. */
WEFT_API weft_status weft_task_cancel(weft_world *world, weft_task task);

/** Gives up the handle (fire and forget): the task runs on, its apply step
 *  (if any) still runs at its sync point, its result is dropped, and its
 *  storage is reclaimed when it is final. Detach after cancel to drop a
 *  task entirely. Thread: as weft_task_spawn. Errors: INVALID_HANDLE. */
WEFT_API weft_status weft_task_detach(weft_world *world, weft_task task);

/** True when cancellation of the running task was requested (the world is
 *  being destroyed, or weft_task_cancel): a long function should poll it
 *  and return. False for NULL. Thread: the task's own, during its call. */
WEFT_API bool weft_task_cancelled(const weft_task_ctx *ctx);

/** Records why the running task fails and returns `status`, so a function
 *  can end with `return weft_task_fail(ctx, status, "why");`. The message
 *  is copied (cut at WEFT_TASK_MESSAGE_MAX bytes; dropped when out of
 *  memory, the status
 *  still returned). Errors: INVALID_ARG (ctx or message NULL, status
 *  WEFT_OK or unknown; then nothing is recorded).
 *  Thread: the task's own, during its call. */
WEFT_API weft_status weft_task_fail(weft_task_ctx *ctx, weft_status status,
                                    const char *message);

/** The world's task sync point, one per frame: in the build without
 *  threads it first runs every task queued before the call, on the calling
 *  thread; then it advances the world's task frame by one and completes,
 *  in this order, every WEFT_TASK_DETERMINISTIC task due at this frame (by
 *  order key, then spawn order; waiting for each one's function if needed)
 *  and every other task with an apply step whose function has ended (by
 *  spawn order): its apply step runs and its commands are applied. A
 *  weft_app calls it at the end of every update, after the main schedule
 *  order; a host driving schedules itself calls it once per frame. Returns
 *  the first failure of an applied command (the rest still run).
 *  Thread: driver, outside schedule runs, hooks, observers and iterations.
 *  Errors: INVALID_HANDLE, WRONG_PHASE, OUT_OF_MEMORY (nothing completed;
 *  the frame still advanced). */
WEFT_API weft_status weft_tasks_tick(weft_world *world);

/** Sets how many threads pool `pool` runs: threads > 0 that many (at most
 *  64), 0 the default share of the CPUs (docs/tasks.md). Started threads of
 *  an idle pool stop, and the new count starts on its next spawn.
 *  Per world: each world owns its pools. Thread: driver.
 *  Errors: INVALID_HANDLE, INVALID_ARG (unknown pool, threads < 0),
 *  WRONG_PHASE (a task of that pool is queued or running),
 *  OUT_OF_MEMORY, UNSUPPORTED (threads > 0 in a build without threads,
 *  where tasks run on the driver at weft_tasks_tick). */
WEFT_API weft_status weft_world_set_task_threads(weft_world *world, weft_task_pool pool,
                                                 int32_t threads);

/** Threads pool `pool` runs or will start (its setting or the default
 *  share); 0 in a build without threads, for an unknown pool or an
 *  invalid world. Thread: driver. */
WEFT_API int32_t weft_world_task_threads(const weft_world *world, weft_task_pool pool);

/** Tasks the world holds: spawned and not yet reclaimed (detached ones
 *  until they are final). Thread: any of weft_task_spawn's. */
WEFT_API int32_t weft_world_task_count(const weft_world *world);

/* ---- reflection: type descriptions, field paths, snapshots ----      */
/* (src/reflect/; entry points in src/api/api_reflect.c)                */
/* ==================================================================== */

/** Kind of a described field. Integers and floats are stored in the host's
 *  byte order; ENTITY is a weft_entity (8 bytes); STRING is a fixed buffer
 *  of `count` chars holding a NUL-terminated string; STRUCT is a nested
 *  described struct; ENUM is an integer (`enum_base`, default I32) whose
 *  values have names. */
typedef enum weft_kind {
    WEFT_KIND_NONE = 0,
    WEFT_KIND_BOOL = 1,   /**< 1 byte, 0 or 1 */
    WEFT_KIND_I8 = 2,
    WEFT_KIND_I16 = 3,
    WEFT_KIND_I32 = 4,
    WEFT_KIND_I64 = 5,
    WEFT_KIND_U8 = 6,
    WEFT_KIND_U16 = 7,
    WEFT_KIND_U32 = 8,
    WEFT_KIND_U64 = 9,
    WEFT_KIND_F32 = 10,
    WEFT_KIND_F64 = 11,
    WEFT_KIND_ENTITY = 12,
    WEFT_KIND_STRING = 13,
    WEFT_KIND_STRUCT = 14,
    WEFT_KIND_ENUM = 15,
    /** Not a value: a field of this kind sets the JSON shape of the struct
     *  it is listed in (weft_shape, given in `count`) and holds no bytes
     *  (its offset is ignored; its name must be valid and unique like any
     *  field's, e.g. "_shape"). At most one per struct; without one the
     *  shape is WEFT_SHAPE_STRUCT. It is not a field for anything else:
     *  paths, schemas and the shape's own rules see the other fields. */
    WEFT_KIND_SHAPE = 16,
    WEFT_KIND_NUM,
    WEFT_KIND_FORCE_U32 = 0x7FFFFFFF
} weft_kind;

/** One named value of an enum field. */
typedef struct weft_enum_value {
    const char *name;   /**< non-empty, unique within the enum; copied */
    int64_t value;      /**< must fit the enum's base kind */
} weft_enum_value;

typedef struct weft_type_desc weft_type_desc;

/** One field of a described struct. */
typedef struct weft_field {
    const char *name;      /**< non-empty, unique in its struct, made of
                                letters, digits and '_'; copied */
    weft_kind kind;
    size_t offset;         /**< bytes from the start of the struct */
    int32_t count;         /**< 0 or 1: one value; n > 1: fixed array of n.
                                STRING: the buffer's bytes (>= 1) */
    const weft_type_desc *type;          /**< STRUCT: its description (copied) */
    weft_kind enum_base;                 /**< ENUM: I8..U64 storing it; 0: I32 */
    const weft_enum_value *enum_values;  /**< ENUM: its names (copied) */
    int32_t enum_count;
} weft_field;

/** How JSON (weft_json_* and the remote) shows a described struct (set
 *  with a WEFT_KIND_SHAPE field in its description): the shapes serde's data model distinguishes, as far
 *  as a C layout can hold them. The field paths of weft_field_get and
 *  weft_field_set do not depend on the shape (fields are always named).
 *  A unit struct is a component of size 0 (a tag), written as null. C
 *  layouts have no growable sequences or maps: sequences are fixed arrays
 *  (a field's `count`), written as JSON arrays. */
typedef enum weft_shape {
    /** An object of the named fields, {"x": 1, "y": 2} (0, the default). */
    WEFT_SHAPE_STRUCT = 0,
    /** A tuple struct: an array of the fields' values in description
     *  order, [1, 2]; reading needs every element. */
    WEFT_SHAPE_TUPLE = 1,
    /** A newtype: exactly one field, shown as that field's value itself
     *  ("Parent Node" for a name held in one string field; an array field
     *  is its array). */
    WEFT_SHAPE_NEWTYPE = 2,
    /** An option: exactly two fields, a BOOL saying whether there is a
     *  value, then the value; null when the BOOL is false, else the
     *  value's JSON (reading null clears the BOOL and zeroes the value). */
    WEFT_SHAPE_OPTION = 3,
    /** An enum with data (a tagged union): field 0 is an ENUM field whose
     *  value names are the variant names (the tag); every other field is
     *  the payload of the variant of the same name, and payloads may
     *  overlap each other (a union), never the tag. A variant without a
     *  payload field is a unit variant, shown as its name, "Circle"; one
     *  with a payload is {"Name": payload}, the payload shown by its own
     *  kind and shape (a STRUCT payload with WEFT_SHAPE_TUPLE is a tuple
     *  variant [..], with WEFT_SHAPE_STRUCT a struct variant {..}, any
     *  other field a newtype variant). Reading a variant other than the
     *  current one zeroes the bytes of every payload first. */
    WEFT_SHAPE_ENUM = 4,
    WEFT_SHAPE_NUM,
    WEFT_SHAPE_FORCE_U32 = 0x7FFFFFFF
} weft_shape;

/** A struct layout: the component's (top level) or a nested one. */
struct weft_type_desc {
    const char *name;          /**< optional, used in messages; copied */
    size_t size;               /**< bytes; top level: 0 or the component's size */
    size_t align;              /**< 0: derived from size as for components */
    const weft_field *fields;  /**< must not overlap (but see WEFT_SHAPE_ENUM);
                                    gaps (padding) are fine */
    int32_t field_count;
};

/** Describes the layout of component (or resource) `c` so that field
 *  paths, JSON and scenes can read and write it. Opt-in: undescribed
 *  components keep working and are saved as opaque bytes by binary
 *  snapshots. The description is validated against the component's size
 *  and alignment and copied: every field lies inside the struct, is
 *  aligned for its kind, overlaps no other field, and nested structs are
 *  validated the same way (at most 16 levels deep); a shape's rules
 *  (weft_shape) are checked too. A nested description used by several
 *  fields (the same pointer) is validated once. Entity fields are
 *  recorded so that loaders can remap them.
 *  Thread: driver. Errors: INVALID_HANDLE, INVALID_ARG (desc NULL, a tag,
 *  a relationship's target list, bad field name, unknown kind, negative or
 *  huge count, nesting too deep, bad enum, unknown shape or a shape's
 *  fields not as it needs), UNKNOWN_COMPONENT,
 *  SIZE_MISMATCH (desc->size differs, or a field lies outside),
 *  BAD_ALIGNMENT (misaligned field or bad nested alignment),
 *  ALREADY_EXISTS (already described), INVALID_ARG (overlapping fields),
 *  OUT_OF_MEMORY. The message names the offending field path. In a
 *  reloadable module's build, a component the build registered again is
 *  described against its new layout and the description applied when the
 *  reload commits (the old one is replaced, values migrated). */
WEFT_API weft_status weft_component_describe(weft_world *world, weft_component c,
                                             const weft_type_desc *desc);

/** During a reloadable module's build (docs/hot-reload.md): the default
 *  field values a layout migration of component `c` gives to the fields
 *  its old layout lacks (without them: zeroes). `value` is one value of
 *  the layout the build declares for c (`size` bytes, copied). c must be
 *  a component this build registered: again (a reload: the defaults are
 *  kept for the migration) or first (nothing to migrate: only the size is
 *  checked), so a build may always make the call.
 *  Thread: driver, inside the build. Errors: INVALID_HANDLE,
 *  INVALID_ARG (value NULL, c not registered by this build),
 *  SIZE_MISMATCH (size is not the declared size), WRONG_PHASE (not in a
 *  module's build), ALREADY_EXISTS (given twice), OUT_OF_MEMORY. */
WEFT_API weft_status weft_component_migration_defaults(weft_world *world, weft_component c,
                                                       const void *value, size_t size);

/** Describes message type `type` (same rules as weft_component_describe).
 *  Thread: driver. Errors: as weft_component_describe, NOT_FOUND (no such
 *  message type). */
WEFT_API weft_status weft_message_describe(weft_world *world, weft_message_type type,
                                           const weft_type_desc *desc);

/** True when component c has a description. Thread: driver. */
WEFT_API bool weft_component_is_described(const weft_world *world, weft_component c);

/** Static name of a kind ("i32", "entity", ...; "?" when unknown).
 *  Thread: any. Lifetime: static. */
WEFT_API const char *weft_kind_name(weft_kind kind);

/** Reads one field of component c on entity e by path: `.name` selects a
 *  field (the first dot may be left out), `[i]` an element of an array
 *  field, e.g. ".position.x" or "slots[2].count". The path must end on one
 *  value (an array field must be indexed). `kind` and `size` must match
 *  the field: its kind (ENUM for enums, STRUCT for nested structs) and its
 *  byte size (STRING: the buffer's bytes). Copies the bytes to `out`.
 *  Thread: driver. Errors: INVALID_HANDLE, INVALID_ARG (NULLs, bad path
 *  syntax), INVALID_ENTITY, STALE_ENTITY, UNKNOWN_COMPONENT, NOT_FOUND
 *  (component absent from e, or no such field), CAPACITY (index out of
 *  range), TYPE_MISMATCH (kind differs), SIZE_MISMATCH; the message
 *  names the path. */
WEFT_API weft_status weft_field_get(const weft_world *world, weft_entity e, weft_component c,
                                    const char *path, weft_kind kind, void *out,
                                    size_t size);

/** Writes one field by path (same path and type rules as weft_field_get).
 *  The value is checked first: a BOOL must be 0 or 1, an ENUM one of its
 *  named values, a STRING NUL-terminated within its buffer. A mutable
 *  component is written in place and marked changed (as weft_get_mut).
 *  An immutable one is re-inserted with the new field (as weft_insert:
 *  on_replace and on_insert hooks and observers run, relationships
 *  follow); while an iteration is open that insert is deferred.
 *  Thread: driver. Errors: as weft_field_get, INVALID_ARG (value out of
 *  the kind's domain), OUT_OF_MEMORY. On error nothing is written. */
WEFT_API weft_status weft_field_set(weft_world *world, weft_entity e, weft_component c,
                                    const char *path, weft_kind kind, const void *value,
                                    size_t size);

/* -- binary snapshots -- */

/** Snapshot format version written by this library; restore accepts only
 *  this version. */
#define WEFT_SNAPSHOT_VERSION 1u

/** Writes the whole world into `buf` as a binary snapshot: every entity
 *  index with its generation, the free list, every component value
 *  (described or not, as bytes) with its change ticks, in table and row
 *  order, sparse sets in slot order, relationship lists, resources, the
 *  message queues and removal streams, the change tick, every query's last
 *  run and the tick state of every schedule (system and condition last
 *  runs, message cursors, the fixed-time accumulator of an app (weft_app)
 *  and whether it ran its startup order). The blob starts with a
 *  header (magic, version, byte-order mark, sizes) and carries an XXH3-64
 *  checksum over header and payload. Components with copy, move or dtor
 *  hooks (other than relationship lists) and message types with a drop
 *  callback cannot be saved: their bytes own something.
 *  When `buf` is NULL or `cap` is too small nothing is written, *out_len
 *  receives the size needed and CAPACITY is returned (no error recorded
 *  when buf is NULL: that is a size query); on any other error *out_len
 *  is 0. Nothing is allocated.
 *  Thread: driver, outside schedule runs and iterations. Errors:
 *  INVALID_HANDLE, INVALID_ARG (out_len NULL, unsavable component or
 *  message type), WRONG_PHASE (iterating, commands or reservations
 *  pending), CAPACITY. */
WEFT_API weft_status weft_snapshot_write(weft_world *world, void *buf, size_t cap,
                                         size_t *out_len);

/** Bits of weft_snapshot_options.flags. */
typedef enum weft_snapshot_flags {
    WEFT_SNAPSHOT_FLAGS_DEFAULT = 0,
    /** A delta since options->since (as weft_snapshot_delta_write). */
    WEFT_SNAPSHOT_DELTA = 1u << 0,
    /** Compress the payload with zstd (the header stays plain and records
     *  the flag and the payload's uncompressed size; the checksum covers
     *  the compressed bytes). Needs a build with zstd
     *  (weft_snapshot_zstd_available). */
    WEFT_SNAPSHOT_ZSTD = 1u << 1,
    WEFT_SNAPSHOT_FLAGS_FORCE_U32 = 0x7FFFFFFF
} weft_snapshot_flags;

/** How weft_snapshot_write_ex writes. Zero-initialize, then set fields. */
typedef struct weft_snapshot_options {
    uint32_t _start_canary; /**< must be 0 */
    uint32_t flags;         /**< weft_snapshot_flags bits */
    uint32_t since;         /**< DELTA: the base's change tick */
    int32_t zstd_level;     /**< ZSTD: 1..19; 0 means 3 */
    uint32_t _end_canary;   /**< must be 0 */
} weft_snapshot_options;

/** Writes a full or delta snapshot as weft_snapshot_write and
 *  weft_snapshot_delta_write do, optionally compressed with zstd
 *  (WEFT_SNAPSHOT_ZSTD). `options` NULL means a full, uncompressed
 *  snapshot. Restore and merge read compressed and plain snapshots alike
 *  (merge writes a plain one). Buffer rules as weft_snapshot_write, except
 *  that when compressing the size a query reports is an upper bound (the
 *  header plus zstd's bound for the payload) and a buffer must hold that
 *  bound; *out_len then receives the size actually written. Compressing
 *  allocates a scratch copy of the plain payload and zstd's state through
 *  the world's allocator (freed before returning).
 *  Thread: driver, outside schedule runs and iterations. Errors: as
 *  weft_snapshot_write, INVALID_ARG (canary, unknown flag bits, a level
 *  outside 0..19), UNSUPPORTED (ZSTD asked of a build without zstd),
 *  OUT_OF_MEMORY (compressing). */
WEFT_API weft_status weft_snapshot_write_ex(weft_world *world,
                                            const weft_snapshot_options *options, void *buf,
                                            size_t cap, size_t *out_len);

/** True when this build of weft compresses and decompresses snapshots
 *  with zstd (built with WEFT_ZSTD and libzstd found). Thread: any. */
WEFT_API bool weft_snapshot_zstd_available(void);

/** Restores a snapshot into `world`: a fresh world, or a live one rolled
 *  back in place. In place, the world's content (entities, component
 *  values, resources, queued messages and removals) is replaced wholesale:
 *  what it held is destroyed through type hooks and message drop callbacks,
 *  no lifecycle hook or observer runs, and its registrations, schedules,
 *  systems, queries, observers and archetypes stay valid. The cost is
 *  O(world bytes). Entity handles are restored exactly as saved (the
 *  entity index with its generations and free list): a handle of an entity
 *  alive at the snapshot names that entity again; a handle made after the
 *  snapshot is not alive after the restore, and the same later operations
 *  hand out the same ids as before (so a resimulation reproduces the
 *  world hash frame after frame; a handle kept outside the world across a
 *  rollback may then name the entity that reused its slot). Caches keyed
 *  on entities outside the world rebuild when weft_world_restore_count
 *  changes. The app driving the world keeps its place: the snapshot holds
 *  whether its startup order ran and its fixed-time accumulator.
 *  The world needs the same
 *  registrations as the saved world: components and message types are
 *  matched by name and must have the same size, alignment and storage;
 *  schedules are matched by name and must have the same systems. Saved
 *  schedules or queries the target lacks are an error unless the target
 *  has no schedule or query at all (a tool world), in which case their
 *  state is skipped. No hook or observer runs. Running the same schedules
 *  afterwards gives, frame after frame, the same weft_world_hash as the
 *  saved world (rollback). The whole blob is validated before anything
 *  changes; on any error the world is left as it was (archetypes created
 *  on the way may remain, as after any failed call).
 *  `data` is read only during the call.
 *  Thread: driver. Errors: INVALID_HANDLE, INVALID_ARG (NULL data),
 *  WRONG_PHASE (iterating, a schedule running, commands or entity
 *  reservations pending), BAD_FORMAT (bad magic,
 *  version, byte order, checksum, truncated or inconsistent content,
 *  a compressed payload that does not decompress to its recorded size),
 *  UNSUPPORTED (compressed with zstd, and this build has no zstd),
 *  UNKNOWN_COMPONENT / NOT_FOUND (a saved component, message type,
 *  schedule or system the world lacks), SIZE_MISMATCH, BAD_FORMAT also for
 *  a compressed payload above weft_snapshot_limit, OUT_OF_MEMORY (also for
 *  the scratch copy a compressed snapshot is decompressed into). Besides
 *  the structure, the meaning is checked before anything changes: the
 *  relationships agree from both sides (every source listed once by its
 *  target, every list item naming its owner), ChildOf and other
 *  LINKED_DESPAWN relationships have no cycle, and the fixed-step
 *  accumulator is finite and >= 0; a blob breaking any of them is
 *  BAD_FORMAT. */
WEFT_API weft_status weft_snapshot_restore(weft_world *world, const void *data, size_t len);

/** Bounds the decompressed size of the compressed snapshots and deltas
 *  this world restores and merges: a blob announcing more is refused with
 *  BAD_FORMAT (naming the limit; CAPACITY stays the answer of a merge's
 *  size query) before anything is allocated, and the output buffer grows only
 *  as decompressed bytes arrive (a blob producing more or fewer than it
 *  announces is BAD_FORMAT too). `max_bytes` 0 restores the default,
 *  256 MiB.
 *  Plain (uncompressed) blobs are read in place and need no bound.
 *  Thread: driver. Errors: INVALID_HANDLE. */
WEFT_API weft_status weft_snapshot_set_limit(weft_world *world, uint64_t max_bytes);

/** The world's current bound (see weft_snapshot_set_limit); 0 for an
 *  invalid world. Thread: driver. */
WEFT_API uint64_t weft_snapshot_limit(const weft_world *world);


/** Writes a delta snapshot: what changed since change tick `since` (the
 *  world's weft_world_change_tick when the base snapshot was written).
 *  Same sections as a full snapshot, but for every column only the rows
 *  whose values were added or changed after `since` (an inclusion bitmap
 *  per column), and only the resources that changed; the entity index,
 *  table row order (so spawns, despawns and moves), messages and tick
 *  state are always whole. Relationship lists and columns without change
 *  ticks are written whole. A delta is not restored by itself: merge it
 *  into its base with weft_snapshot_merge. Values written through
 *  pointers without a change mark (weft_iter_field_mut_nomark without
 *  weft_iter_mark) are invisible to deltas. After a tick clamp since
 *  `since` every row counts as changed. With weft_snapshot_track on since
 *  `since` or earlier and no structural change since, the delta is a
 *  patch (only the changed rows, the entity index and row order taken
 *  from the base at merge) written without visiting unchanged rows.
 *  Buffer rules, thread and errors as weft_snapshot_write. */
WEFT_API weft_status weft_snapshot_delta_write(weft_world *world, uint32_t since, void *buf,
                                               size_t cap, size_t *out_len);

/** Starts (on = true) or stops tracking changes for delta snapshots.
 *  Starting (again) drops what was tracked and tracks from the world's
 *  current change tick on: call it right after writing the base snapshot.
 *  While tracking, every value write that marks a row changed (weft_get_mut,
 *  written query terms, weft_iter_mark, weft_iter_set_if_neq, system
 *  get_mut, field paths) also records where it wrote, in memory from the
 *  world's allocator (one entry per write; a system writing a whole table
 *  is one entry per run). A delta since a tick at or after the start is
 *  then written from that record in time proportional to the changes,
 *  when nothing structural happened at or after its `since` (spawn,
 *  despawn, insert, remove, flush, restore); otherwise, and past
 *  4,194,304 entries or when memory for them runs out, deltas scan every
 *  row as they do untracked. Both kinds merge and chain alike.
 *  Stopping frees the record. Untracked, a write costs one predictable
 *  branch more. Thread: driver, outside schedule runs.
 *  Errors: INVALID_HANDLE, WRONG_PHASE (a schedule is running). */
WEFT_API weft_status weft_snapshot_track(weft_world *world, bool on);

/** Applies a delta to its base: writes into `buf` the full snapshot equal
 *  to one written when the delta was (byte for byte). The base is a full
 *  snapshot whose change tick is the delta's `since` (so deltas chain:
 *  merge the next delta into the result). `world` only provides the error
 *  slot and scratch memory (it is not changed). Buffer rules as
 *  weft_snapshot_write (a NULL buf measures). Both inputs are read only
 *  during the call. Thread: driver. Errors: INVALID_HANDLE, INVALID_ARG
 *  (NULL inputs or out_len), BAD_FORMAT (either input corrupt, of another
 *  version, a full snapshot given as delta or the reverse, a delta of
 *  another base), UNSUPPORTED (an input compressed with zstd, and this
 *  build has no zstd), CAPACITY, OUT_OF_MEMORY. Compressed inputs are
 *  decompressed into scratch memory; the result is never compressed. */
WEFT_API weft_status weft_snapshot_merge(weft_world *world, const void *base, size_t base_len,
                                         const void *delta, size_t delta_len, void *buf,
                                         size_t cap, size_t *out_len);

/* -- JSON -- */

/** Writes component c of entity e as JSON through its description, in
 *  the shape the description gives (weft_shape: serde_json's shapes; by
 *  default an object of the described fields; docs/remote.md, "JSON
 *  values") (arrays as arrays, enums by name,
 *  strings as strings, nested structs as objects, entities as numbers; a
 *  u64 above INT64_MAX as a decimal string). Floats are written with the
 *  digits that read back the same value, -0.0 as "-0.0"; NaN and the
 *  infinities, which JSON numbers cannot carry, as the strings "NaN",
 *  "Infinity" and "-Infinity" (read back by the readers; any NaN reads
 *  back as the quiet NaN). Only valid UTF-8 is written: a string field
 *  holding bytes that are not is refused (BAD_FORMAT naming the field).
 *  The text is NUL-terminated; *out_len receives its size including the
 *  NUL. When `buf` is NULL or `cap` is too small nothing is written,
 *  *out_len receives the size needed and CAPACITY is returned (no error
 *  recorded when buf is NULL: that is a size query); on any other error
 *  *out_len is 0. Allocates nothing. Thread: driver. Errors: INVALID_HANDLE, INVALID_ARG (out_len
 *  NULL), INVALID_ENTITY, STALE_ENTITY, UNKNOWN_COMPONENT, NOT_FOUND (no
 *  description, or e lacks c), BAD_FORMAT (a string that is not UTF-8),
 *  CAPACITY. */
WEFT_API weft_status weft_json_write_component(const weft_world *world, weft_entity e,
                                               weft_component c, char *buf, size_t cap,
                                               size_t *out_len);

/** Writes entity e as {"id": <e>, "components": {"<name>": <value>, ...}}
 *  with every described component, every tag (as null) and relationship
 *  sources (as {"target": <entity>}), in archetype order; undescribed
 *  components and relationship lists (kept by weft) are left out. Buffer
 *  rules as weft_json_write_component. Thread: driver. Errors:
 *  INVALID_HANDLE, INVALID_ARG, INVALID_ENTITY, STALE_ENTITY, CAPACITY. */
WEFT_API weft_status weft_json_write_entity(const weft_world *world, weft_entity e, char *buf,
                                            size_t cap, size_t *out_len);

/** Writes the entities `query` matches as a JSON array of entity objects
 *  (as weft_json_write_entity), in iteration order. Does not count as a
 *  run of the query (its last run is unchanged). Buffer rules as
 *  weft_json_write_component. Thread: driver, not while the query is
 *  iterated. Errors: INVALID_HANDLE, INVALID_ARG, WRONG_PHASE,
 *  OUT_OF_MEMORY (matching archetypes), CAPACITY. */
WEFT_API weft_status weft_json_write_query(weft_world *world, weft_query *query, char *buf,
                                           size_t cap, size_t *out_len);

/** Reads component c of entity e from JSON (`len` bytes of text, no NUL
 *  needed; a NUL byte within the `len` bytes is refused, BAD_FORMAT, as
 *  by every JSON reader): in the description's shape (weft_shape); for a
 *  struct, an object with any subset of the described fields; the others
 *  keep the entity's current value (or the default when e lacks c). Every
 *  member must be a known field of the right JSON type and range; enums
 *  by name (or a named value's number); entity fields 0 or a live entity.
 *  The value is then inserted as by weft_insert (hooks and observers
 *  run). On error nothing changes and the message names the path
 *  ("body.slots[2].count: ..."). Parsed with jansson; without it (see
 *  docs/architecture.md) every reader returns INVALID_ARG.
 *  Thread: driver, not while iterating. Errors: INVALID_HANDLE,
 *  INVALID_ARG (NULL text, undescribed component), INVALID_ENTITY,
 *  STALE_ENTITY (e, or a dangling entity field), UNKNOWN_COMPONENT,
 *  WRONG_PHASE, BAD_FORMAT (malformed or too deeply nested JSON, a NUL
 *  byte), NOT_FOUND (unknown field), TYPE_MISMATCH, OUT_OF_MEMORY. */
WEFT_API weft_status weft_json_read_component(weft_world *world, weft_entity e,
                                              weft_component c, const char *text, size_t len);

/** Reads an entity object ({"components": {...}}, an "id" member is
 *  ignored) and inserts every listed component on e in one structural
 *  step (as weft_insert_many); fields rules as weft_json_read_component,
 *  tags as null (or {}), relationship sources as {"target": <entity>}. All or
 *  nothing. Thread: driver, not while iterating. Errors: as
 *  weft_json_read_component, CAPACITY (more than 256 components). */
WEFT_API weft_status weft_json_read_entity(weft_world *world, weft_entity e, const char *text,
                                           size_t len);

/** Spawns an entity from an entity object (as weft_json_read_entity) in
 *  one structural step. Returns the entity, or 0 on error (nothing
 *  spawned). Thread: driver, not while iterating. Errors: as
 *  weft_json_read_entity. */
WEFT_API weft_entity weft_json_spawn(weft_world *world, const char *text, size_t len);

/** Writes resource r as JSON through its description (the rules of
 *  weft_json_write_component; a tag resource as null). Buffer rules as
 *  weft_json_write_component. Thread: driver. Errors: INVALID_HANDLE,
 *  INVALID_ARG (out_len NULL), UNKNOWN_COMPONENT, NOT_FOUND (the resource
 *  is not present, or has no description), CAPACITY. */
WEFT_API weft_status weft_json_write_resource(const weft_world *world, weft_component r,
                                              char *buf, size_t cap, size_t *out_len);

/** Writes component (or resource) c's type description as JSON, for tools
 *  that build editors from it: {"name", "size", "fields": [{"name",
 *  "kind" (weft_kind_name), "count"? (array elements; a string's buffer
 *  bytes), "type"? (struct: the nested description, same shape),
 *  "base"? and "values"? (enum: the storing kind and [{"name",
 *  "value"}])}]} in description order. Buffer rules as
 *  weft_json_write_component. Thread: driver. Errors: INVALID_HANDLE,
 *  INVALID_ARG (out_len NULL), UNKNOWN_COMPONENT, NOT_FOUND (no
 *  description), CAPACITY. */
WEFT_API weft_status weft_json_write_schema(const weft_world *world, weft_component c,
                                            char *buf, size_t cap, size_t *out_len);

/** Reads resource r from JSON: an object with any subset of the described
 *  fields (rules of weft_json_read_component); the others keep the
 *  present value, or the default when the resource is absent. The value
 *  is then inserted as by weft_resource_insert (present or not). A tag
 *  resource takes null (or {}). On error nothing changes. Thread: driver, not while
 *  iterating. Errors: INVALID_HANDLE, INVALID_ARG (NULL text, undescribed
 *  resource, no jansson), RELATIONSHIP (a relationship component, kept
 *  by weft), UNKNOWN_COMPONENT,
 *  WRONG_PHASE, BAD_FORMAT, NOT_FOUND (unknown field), TYPE_MISMATCH,
 *  STALE_ENTITY (a dangling entity field), OUT_OF_MEMORY. */
WEFT_API weft_status weft_json_read_resource(weft_world *world, weft_component r,
                                             const char *text, size_t len);

/* -- scenes and cloning -- */

/** A saved set of entities: copies of their components (made with the
 *  copy hooks; relationship lists left out, they follow from the
 *  sources), owned by the scene, in the world that made it. */
typedef struct weft_scene weft_scene;

/** Saves the entities `query` matches, in iteration order (not counted
 *  as a run of the query). Returns the scene, or NULL.
 *  Thread: driver, not while the query is iterated. Lifetime: until
 *  weft_scene_destroy or the world's destruction. Errors: INVALID_HANDLE,
 *  INVALID_ARG (query NULL or of another world), WRONG_PHASE,
 *  OUT_OF_MEMORY. */
WEFT_API weft_scene *weft_scene_from_query(weft_world *world, weft_query *query);

/** Saves `root` and every entity below it through ChildOf, breadth first
 *  (root first). Returns the scene, or NULL. Thread: driver. Lifetime: as
 *  weft_scene_from_query. Errors: INVALID_HANDLE, INVALID_ENTITY,
 *  STALE_ENTITY, OUT_OF_MEMORY. */
WEFT_API weft_scene *weft_scene_from_tree(weft_world *world, weft_entity root);

/** Number of entities in a scene (0 for NULL). Thread: driver. */
WEFT_API int32_t weft_scene_count(const weft_scene *scene);

/** Spawns the scene once more: one new entity per saved one, each in one
 *  structural step with all its components (hooks and observers run as
 *  for weft_spawn_with). Every reference into the saved set is remapped
 *  to the new entities: relationship sources (ChildOf and others) and the
 *  entity fields of described components; references to entities outside
 *  the set are kept, and a relationship whose outside target is gone is
 *  dropped. Relationship targets are spawned before their sources; an
 *  entity field naming a set member spawned later is written in place
 *  right after that member exists (and marked changed). Entity fields of
 *  undescribed components are copied unchanged. `out` (may be NULL)
 *  receives up to `out_cap` new ids, in scene order. On error the
 *  entities spawned so far are despawned again.
 *  Thread: driver, not while iterating. Errors: INVALID_HANDLE,
 *  INVALID_ARG (scene NULL or of another world, out_cap < 0),
 *  WRONG_PHASE, CAPACITY, OUT_OF_MEMORY. */
WEFT_API weft_status weft_scene_spawn(weft_world *world, const weft_scene *scene,
                                      weft_entity *out, int32_t out_cap);

/** Destroys a scene and the values it holds. NULL is ignored.
 *  Thread: driver. Errors: INVALID_HANDLE, INVALID_ARG (another world's
 *  scene). */
WEFT_API weft_status weft_scene_destroy(weft_world *world, weft_scene *scene);

/** Clones entity e (recursive = false) or e and every entity below it
 *  through ChildOf (recursive = true): a scene of them spawned once and
 *  dropped. The clone of e keeps e's own relationships to entities
 *  outside the subtree (a clone of a child is a sibling of it); inside the
 *  subtree references are remapped as by weft_scene_spawn. Returns the
 *  clone of e, or 0. Thread: driver, not while iterating. Errors:
 *  INVALID_HANDLE, INVALID_ENTITY, STALE_ENTITY, WRONG_PHASE, CAPACITY,
 *  OUT_OF_MEMORY. */
WEFT_API weft_entity weft_clone(weft_world *world, weft_entity e, bool recursive);

/* ==================================================================== */
/* ---- app: the main schedule order, fixed time and plugins ----       */
/* (src/app/; entry points in src/api/api_app.c)                        */
/* ==================================================================== */

/* An app drives one world through an ordered set of schedules, the way
 * Bevy's App and Main schedule do (docs/architecture.md, "The app"):
 *
 *   once, on the first update:  PreStartup, Startup, PostStartup
 *   every update:               First (messages are updated as it starts),
 *                               PreUpdate, StateTransition,
 *                               RunFixedMainLoop (then the fixed order
 *                               FixedFirst, FixedPreUpdate, FixedUpdate,
 *                               FixedPostUpdate, FixedLast 0..k times),
 *                               Update, PostUpdate, Last
 *
 * Every label is the name of a weft_schedule of the app's world, created
 * with the app: weft_app_schedule gives it, and every weft_schedule_* call
 * works on it (add systems, sets, orderings, conditions). Users insert
 * their own schedules before or after any label. StateTransition is empty
 * until a plugin (states) adds its work there.
 *
 * Plugins are descriptors added before the first update; they are built
 * in dependency order by weft_app_setup (which the first update or
 * weft_app_run calls when the caller did not), then finished, then
 * cleaned up.
 *
 * Errors of weft_app_* calls go to the error slot of the app's world
 * (weft_last_status(weft_app_world(app))); an invalid app handle gives
 * INVALID_HANDLE and records nothing. Every call is for the driver thread
 * of the app's world, outside schedule runs unless noted. */

/** Opaque app. */
typedef struct weft_app weft_app;

/** Built-in labels (schedule names) of the startup order. */
#define WEFT_APP_PRE_STARTUP "PreStartup"
#define WEFT_APP_STARTUP "Startup"
#define WEFT_APP_POST_STARTUP "PostStartup"
/** Built-in labels of the main (per-update) order. */
#define WEFT_APP_FIRST "First"
#define WEFT_APP_PRE_UPDATE "PreUpdate"
#define WEFT_APP_STATE_TRANSITION "StateTransition"
#define WEFT_APP_RUN_FIXED_MAIN_LOOP "RunFixedMainLoop"
#define WEFT_APP_UPDATE "Update"
#define WEFT_APP_POST_UPDATE "PostUpdate"
#define WEFT_APP_LAST "Last"
/** Built-in labels of the fixed order, run 0..k times per update. */
#define WEFT_APP_FIXED_FIRST "FixedFirst"
#define WEFT_APP_FIXED_PRE_UPDATE "FixedPreUpdate"
#define WEFT_APP_FIXED_UPDATE "FixedUpdate"
#define WEFT_APP_FIXED_POST_UPDATE "FixedPostUpdate"
#define WEFT_APP_FIXED_LAST "FixedLast"

/** Smallest fixed step an app accepts, seconds. */
#define WEFT_APP_MIN_FIXED_STEP 1e-6
/** Default (and largest accepted) number of fixed steps one update runs.
 *  An update that would need more runs this many and drops the rest of
 *  its accumulated time, so a simulation that cannot keep up slows down
 *  instead of falling further behind with every update. */
#define WEFT_APP_MAX_FIXED_STEPS 1024

/** App descriptor. Zero-initialise it; zero fields mean defaults. */
typedef struct weft_app_desc {
    uint32_t _start_canary;      /**< must be 0 */
    /** The world to drive, or NULL: the app creates one from world_desc
     *  and destroys it with the app. A world given here stays the
     *  caller's: destroy the app first (weft_world_destroy refuses a
     *  world an app uses); its schedules stay in the world. */
    weft_world *world;
    weft_world_desc world_desc;  /**< used when `world` is NULL */
    double fixed_step;           /**< seconds per fixed step; 0: 1/64 */
    double max_delta;            /**< an update's dt is clamped to this,
                                      seconds; 0: 0.25 */
    int32_t max_fixed_steps;     /**< fixed steps per update at most;
                                      0: WEFT_APP_MAX_FIXED_STEPS */
    bool no_message_update;      /**< do not call weft_messages_update at
                                      the start of First */
    uint32_t _end_canary;        /**< must be 0 */
} weft_app_desc;

/** Creates an app (NULL desc: all defaults, a new world) and the
 *  schedules of every built-in label in its world; a schedule the world
 *  already has under such a name (made by the caller, or left by an
 *  earlier app) becomes that label's, systems included. Returns NULL when
 *  the descriptor is invalid (canary set, negative or non-finite step or
 *  clamp, a step below WEFT_APP_MIN_FIXED_STEP, max_fixed_steps < 0 or
 *  above WEFT_APP_MAX_FIXED_STEPS, an invalid world), when the given world
 *  already has an app, or when memory runs out; with a given world the error is recorded in its slot
 *  and the world is unchanged. Thread: the driver of the world.
 *  Lifetime: until weft_app_destroy. */
WEFT_API weft_app *weft_app_create(const weft_app_desc *desc);

/** Destroys an app: calls every plugin's free_user (in reverse order of
 *  addition), frees the app and, when the app created its world, destroys
 *  the world (after which free_user runs, so systems' fini hooks still see
 *  plugin data). A world given to weft_app_create keeps its schedules.
 *  NULL is ignored. Errors: INVALID_HANDLE, WRONG_PHASE (called from
 *  inside an update, a runner or a plugin callback; nothing is freed). */
WEFT_API weft_status weft_app_destroy(weft_app *app);

/** The app's world (NULL for an invalid app). Lifetime: the app's (or the
 *  caller's, for a world given at creation). */
WEFT_API weft_world *weft_app_world(weft_app *app);

/** The schedule of `label` in the app's orders (built-in or inserted), or
 *  NULL: NOT_FOUND when no order of the app has that label, INVALID_ARG
 *  when label is NULL. Every weft_schedule_* call works on it, except
 *  weft_schedule_destroy (refused: the app owns it). Lifetime: the app's.
 *  Thread: driver. */
WEFT_API weft_schedule *weft_app_schedule(weft_app *app, const char *label);

/** Adds a system to the schedule of `label`: weft_app_schedule followed by
 *  weft_schedule_add_system. Returns the node, or 0 with the error of
 *  either step. Thread: driver, not while that schedule runs. */
WEFT_API weft_node weft_app_add_system(weft_app *app, const char *label,
                                       const weft_system_desc *desc);

/** Where weft_app_insert_schedule puts a label relative to its anchor. */
typedef enum weft_app_place {
    WEFT_APP_PLACE_DEFAULT = 0, /**< same as WEFT_APP_AFTER */
    WEFT_APP_BEFORE = 1,
    WEFT_APP_AFTER = 2,
    WEFT_APP_PLACE_FORCE_U32 = 0x7FFFFFFF
} weft_app_place;

/** Inserts the schedule `label` right before or after `anchor`, in the
 *  anchor's order (startup, main or fixed): a new label gets a new
 *  schedule of that name in the app's world; a label inserted earlier
 *  moves (with every label anchored on it). Several labels placed on the
 *  same side of one anchor keep the order of their placement: after X,
 *  the first placed runs first; before X, the last placed runs right
 *  before X. A label placed after RunFixedMainLoop runs after the fixed
 *  steps. Errors: INVALID_ARG (NULL or empty label or anchor, bad
 *  `place`, `label` is a built-in label), NOT_FOUND (the anchor is no
 *  label of the app), SCHEDULE_CYCLE (`label` is the anchor, or the
 *  anchor is placed, directly or through others, relative to `label`),
 *  ALREADY_EXISTS (the world has a schedule named `label` the app does
 *  not order), WRONG_PHASE (during an update), OUT_OF_MEMORY; the app is
 *  unchanged on error. Thread: driver. */
WEFT_API weft_status weft_app_insert_schedule(weft_app *app, const char *label,
                                              const char *anchor, weft_app_place place);

/** The orders an app runs. */
typedef enum weft_app_order {
    WEFT_APP_ORDER_DEFAULT = 0, /**< same as WEFT_APP_ORDER_MAIN */
    WEFT_APP_ORDER_STARTUP = 1, /**< once, on the first update */
    WEFT_APP_ORDER_MAIN = 2,    /**< every update */
    WEFT_APP_ORDER_FIXED = 3,   /**< 0..k times per update */
    WEFT_APP_ORDER_FORCE_U32 = 0x7FFFFFFF
} weft_app_order;

/** Labels in `order`, or -1 (invalid app or order). Thread: driver. */
WEFT_API int32_t weft_app_label_count(const weft_app *app, weft_app_order order);

/** Label `index` of `order`, in run order, or NULL (NOT_FOUND recorded for
 *  an index out of range, INVALID_ARG for a bad order). Lifetime: until
 *  the app is destroyed. Thread: driver. */
WEFT_API const char *weft_app_label(const weft_app *app, weft_app_order order, int32_t index);

/** Runs one update of `dt` seconds. The first call (and only it) first
 *  sets up the plugins (weft_app_setup, when not done) and runs the
 *  startup order with dt = 0. Then: dt is clamped to max_delta and added
 *  to the fixed accumulator; the main order runs, the message buffers
 *  being swapped (weft_messages_update) as First starts; after
 *  RunFixedMainLoop the fixed order runs floor(acc / step) times, each
 *  time with dt = step, and the remainder stays for the next update; at
 *  most max_fixed_steps times (then the accumulator is emptied). Every
 *  schedule runs even when an earlier one failed; returns the first
 *  failure. Errors: INVALID_HANDLE, INVALID_ARG (dt negative, infinite or
 *  NaN), WRONG_PHASE (inside an update or a schedule run of the world),
 *  the setup's errors (then nothing ran), and those of weft_schedule_run.
 *  Thread: driver. */
WEFT_API weft_status weft_app_update(weft_app *app, double dt);

/** A runner owns the loop: it calls weft_app_update until it decides to
 *  stop (weft_app_exit_requested tells whether something asked it to),
 *  and returns the status weft_app_run returns. */
typedef weft_status (*weft_app_runner_fn)(weft_app *app, void *user);

/** Sets the plugins up (weft_app_setup) and hands the app to `runner`.
 *  Returns the setup's error or the runner's status. Errors:
 *  INVALID_HANDLE, INVALID_ARG (runner NULL), WRONG_PHASE (already
 *  running, or inside an update). Thread: driver. */
WEFT_API weft_status weft_app_run(weft_app *app, weft_app_runner_fn runner, void *user);

/** Asks the app's runner to stop with `code`; the first request wins.
 *  Thread: any (the flag is atomic): a system may call it. Errors:
 *  INVALID_HANDLE. */
WEFT_API weft_status weft_app_exit(weft_app *app, int32_t code);

/** Whether weft_app_exit was called; stores its code in *out_code when
 *  out_code is not NULL. Thread: any. */
WEFT_API bool weft_app_exit_requested(const weft_app *app, int32_t *out_code);

/** Updates run so far (the one in progress included). Thread: driver. */
WEFT_API int64_t weft_app_update_count(const weft_app *app);

/** Fixed steps run by the last update (0 for an invalid app). Thread: driver. */
WEFT_API int32_t weft_app_fixed_steps(const weft_app *app);

/** Time left in the fixed accumulator, seconds (0 for an invalid app).
 *  Thread: driver. */
WEFT_API double weft_app_fixed_accumulator(const weft_app *app);

/** The fixed step, seconds (0 for an invalid app). Thread: driver. */
WEFT_API double weft_app_fixed_step(const weft_app *app);

/** Changes the fixed step from the next update on; the accumulator keeps
 *  its time. Errors: INVALID_HANDLE, INVALID_ARG (not finite, below
 *  WEFT_APP_MIN_FIXED_STEP), WRONG_PHASE (during an update). Thread: driver. */
WEFT_API weft_status weft_app_set_fixed_step(weft_app *app, double step);

/* -- plugins -- */

/** A plugin callback: build, finish or cleanup. A status other than
 *  WEFT_OK stops the setup, which returns WEFT_ERR_CALLBACK naming the
 *  plugin. */
typedef weft_status (*weft_plugin_fn)(weft_app *app, void *user);

/** Plugin descriptor. Zero-initialise it; zero fields mean defaults. */
typedef struct weft_plugin_desc {
    uint32_t _start_canary;           /**< must be 0 */
    const char *name;                 /**< unique per app (copied); required */
    weft_plugin_fn build;             /**< adds schedules, systems, resources,
                                           other plugins; required */
    weft_plugin_fn finish;            /**< optional: after every build */
    weft_plugin_fn cleanup;           /**< optional: after every finish */
    /** Names of plugins built before this one (copied). Each must be added
     *  by the time the setup runs. */
    const char *const *dependencies;
    int32_t dependency_count;
    /** May be added more than once (every instance must say so). */
    bool repeatable;
    void *user;                       /**< passed to the callbacks */
    void (*free_user)(void *user);    /**< optional: at weft_app_destroy */
    uint32_t _end_canary;             /**< must be 0 */
} weft_plugin_desc;

/** Adds a plugin (copied; `user` is kept). It is built by weft_app_setup;
 *  a plugin's build may add more plugins, which the same setup builds.
 *  On failure the app is unchanged and free_user is not called. Errors:
 *  INVALID_HANDLE, INVALID_ARG (canary, no name or build, negative
 *  dependency_count, dependencies NULL with a count, a NULL or empty
 *  dependency name, a plugin depending on itself), ALREADY_EXISTS (a
 *  plugin of that name was added and not both are repeatable),
 *  WRONG_PHASE (the setup is past building), OUT_OF_MEMORY.
 *  Thread: driver. */
WEFT_API weft_status weft_app_add_plugin(weft_app *app, const weft_plugin_desc *desc);

/** A group of plugins added together, with some members left out. */
typedef struct weft_plugin_group_desc {
    uint32_t _start_canary;           /**< must be 0 */
    const char *name;                 /**< for messages; required */
    const weft_plugin_desc *plugins;  /**< added in this order */
    int32_t plugin_count;
    /** Names of members not to add (each must be a member). */
    const char *const *disabled;
    int32_t disabled_count;
    uint32_t _end_canary;             /**< must be 0 */
} weft_plugin_group_desc;

/** Adds every member of a group that is not disabled, all or none: on
 *  failure the app is unchanged. Errors: as weft_app_add_plugin for each
 *  member (two members of one name count as a duplicate), plus
 *  INVALID_ARG (canary, no name, negative counts, NULL arrays with a
 *  count) and NOT_FOUND (a disabled name is no member). Thread: driver. */
WEFT_API weft_status weft_app_add_plugin_group(weft_app *app,
                                               const weft_plugin_group_desc *desc);

/** Builds every plugin not built yet, each after its dependencies (ties:
 *  in order of addition), then calls every finish and every cleanup in
 *  build order. Nothing is built when a dependency is missing or the
 *  dependencies form a cycle: the app is unchanged and plugins may still
 *  be added. After a successful setup no plugin may be added; a second
 *  call does nothing. Errors: INVALID_HANDLE, NOT_FOUND (missing
 *  dependency, naming both), SCHEDULE_CYCLE (naming the plugins on the
 *  cycle), CALLBACK (a callback failed: the app stays half set up and
 *  every later weft_app_setup, weft_app_update or weft_app_run returns
 *  CALLBACK), WRONG_PHASE (called from a plugin callback or an update).
 *  Thread: driver. */
WEFT_API weft_status weft_app_setup(weft_app *app);

/** Whether a plugin named `name` was added. False for an invalid app, and
 *  for a NULL name (INVALID_ARG recorded). Thread: driver. */
WEFT_API bool weft_app_has_plugin(const weft_app *app, const char *name);

/** Plugins added, or -1 for an invalid app. Thread: driver. */
WEFT_API int32_t weft_app_plugin_count(const weft_app *app);

/** Name of plugin `index`: in order of addition until the setup, in build
 *  order after it; NULL (NOT_FOUND recorded) when out of range.
 *  Lifetime: the app's. Thread: driver. */
WEFT_API const char *weft_app_plugin_name(const weft_app *app, int32_t index);

/* ==================================================================== */
/* ---- diagnostics: named measurements with history and smoothing ---- */
/* (src/diag/; entry points in src/api/api_diag.c)                      */
/* ==================================================================== */

/* A world keeps a store of diagnostics (Bevy's DiagnosticsStore): each is
 * a named series of measurements (time, value) with a bounded history, the
 * mean of that history and an exponential moving average. Measurements
 * come from your code (weft_diag_record) or from the diagnostics plugin
 * (weft_app_add_diagnostics_plugin), which measures the built-in ones
 * below every update and can log them every few seconds through the
 * world's logger hook. Every call is for the driver thread; systems record
 * from exclusive systems (weft_system_world). */

/** Default number of measurements a diagnostic keeps. */
#define WEFT_DIAG_HISTORY 120
/** Default smoothing time constant, seconds (see weft_diag_desc). */
#define WEFT_DIAG_SMOOTHING (2.0 / 21.0)

/** Built-in diagnostics measured by the diagnostics plugin. */
#define WEFT_DIAG_FRAME_TIME "frame_time"           /**< ms: the update's dt */
#define WEFT_DIAG_FPS "fps"                         /**< 1 / dt (updates with dt > 0) */
#define WEFT_DIAG_FRAME_COUNT "frame_count"         /**< updates so far */
#define WEFT_DIAG_ENTITY_COUNT "entity_count"       /**< live entities */
#define WEFT_DIAG_ARCHETYPE_COUNT "archetype_count" /**< archetypes */
/** Per-system diagnostics are named "system/<schedule>/<system>", in ms. */
#define WEFT_DIAG_SYSTEM_PREFIX "system/"

/** Diagnostic descriptor. Zero-initialise it; zero fields mean defaults. */
typedef struct weft_diag_desc {
    uint32_t _start_canary;  /**< must be 0 */
    const char *name;        /**< unique path, e.g. "fps" or "net/rtt" (copied) */
    const char *suffix;      /**< unit printed after values, e.g. "ms"
                                  (copied; NULL: none) */
    int32_t history_len;     /**< measurements kept, 1..65536; 0: WEFT_DIAG_HISTORY */
    /** Time constant of the moving average, seconds: each measurement
     *  moves it by alpha = clamp((t - t_prev) / smoothing, 0, 1) of the
     *  way to the new value (the first measurement sets it). 0:
     *  WEFT_DIAG_SMOOTHING. */
    double smoothing;
    uint32_t _end_canary;    /**< must be 0 */
} weft_diag_desc;

/** Adds a diagnostic. Errors: INVALID_HANDLE, INVALID_ARG (canary, no
 *  name, history_len out of range, smoothing negative or not finite),
 *  ALREADY_EXISTS (the name is taken), OUT_OF_MEMORY. Thread: driver. */
WEFT_API weft_status weft_diag_add(weft_world *world, const weft_diag_desc *desc);

/** Records `value` measured at `time` (seconds on any clock that does not
 *  go backwards for this diagnostic). The oldest measurement leaves when
 *  the history is full. Ignored (WEFT_OK) while the diagnostic is
 *  disabled. Errors: INVALID_HANDLE, INVALID_ARG (name NULL, value or time
 *  not finite, time earlier than the last measurement's), NOT_FOUND.
 *  Thread: driver. */
WEFT_API weft_status weft_diag_record(weft_world *world, const char *name, double time,
                                      double value);

/** What weft_diag_get reports. With no measurement yet every number is 0. */
typedef struct weft_diag_value {
    double value;         /**< the latest measurement */
    double average;       /**< mean of the history */
    double smoothed;      /**< exponential moving average (see weft_diag_desc) */
    double min, max;      /**< over the history */
    double time;          /**< time of the latest measurement */
    int32_t count;        /**< measurements in the history */
    int32_t history_len;  /**< its capacity */
    bool enabled;
    const char *suffix;   /**< "" when none; lives as long as the world */
} weft_diag_value;

/** Fills `out` for the diagnostic `name`. Errors: INVALID_HANDLE,
 *  INVALID_ARG (name or out NULL), NOT_FOUND. Thread: driver. */
WEFT_API weft_status weft_diag_get(const weft_world *world, const char *name,
                                   weft_diag_value *out);

/** Copies up to `cap` values of the history, oldest first, into `out`
 *  (NULL with cap 0 asks for the count). Returns the number of values in
 *  the history, or -1 (INVALID_ARG, NOT_FOUND recorded). Thread: driver. */
WEFT_API int32_t weft_diag_history(const weft_world *world, const char *name, double *out,
                                   int32_t cap);

/** Enables or disables a diagnostic (disabled ones ignore measurements
 *  and are not logged). Errors: INVALID_HANDLE, INVALID_ARG, NOT_FOUND.
 *  Thread: driver. */
WEFT_API weft_status weft_diag_set_enabled(weft_world *world, const char *name, bool on);

/** Diagnostics in the store (0 for an invalid world). Thread: driver. */
WEFT_API int32_t weft_diag_count(const weft_world *world);

/** Name of diagnostic `index`, in order of addition, or NULL (NOT_FOUND
 *  recorded). Lifetime: the world's. Thread: driver. */
WEFT_API const char *weft_diag_name(const weft_world *world, int32_t index);

/** Settings of the diagnostics plugin. Zero means default. */
typedef struct weft_diag_plugin_desc {
    uint32_t _start_canary;  /**< must be 0 */
    /** Seconds of app time (the sum of update dts) between two log
     *  reports, each one line per enabled diagnostic at WEFT_LOG_INFO
     *  through the world's logger hook; 0: 1 second; negative: never. */
    double log_interval;
    /** Also measure every system of the app's labels (their schedules'
     *  profiling is turned on when the plugin finishes; labels inserted
     *  later are not measured). */
    bool per_system;
    int32_t history_len;     /**< of the built-in diagnostics; 0: default */
    uint32_t _end_canary;    /**< must be 0 */
} weft_diag_plugin_desc;

/** Name of the diagnostics plugin. */
#define WEFT_DIAG_PLUGIN "weft.diagnostics"

/** Adds the diagnostics plugin (named WEFT_DIAG_PLUGIN; desc copied, NULL:
 *  defaults). Its build adds the built-in diagnostics and an exclusive,
 *  not steppable system "weft.diagnostics" to Last that measures them
 *  every update and logs them every log_interval seconds. Errors: as
 *  weft_app_add_plugin, plus INVALID_ARG (canary, log_interval not finite,
 *  history_len out of range). Thread: driver. */
WEFT_API weft_status weft_app_add_diagnostics_plugin(weft_app *app,
                                                     const weft_diag_plugin_desc *desc);

/* ==================================================================== */
/* ---- states: finite state machines on resources and schedules ----  */
/* (src/state/; entry points in src/api/api_state.c)                   */
/* ==================================================================== */

/* A state type has a fixed set of values (uint32_t, each with a name).
 * Its current value is the resource State<name> (a uint32_t, immutable:
 * it changes only through transitions); a freely mutable or sub state
 * also has the resource NextState<name> (weft_next_state), where a system
 * or the driver queues the value to go to. weft_state_transition applies
 * the queued values and runs the OnExit, OnTransition and OnEnter
 * schedules of every state type that changed (see there). Sub states
 * exist only while their source state has one value; computed states are
 * derived from their sources by a callback and cannot be set. A state's
 * resources exist exactly while the state does.
 *
 * Nothing here needs an App: a program can register states on a world and
 * call weft_state_transition from its own loop. */

/** State type id (per world, from 1). 0 is "none". */
typedef uint32_t weft_state;

/** The value of a state that does not exist (a sub state whose source
 *  has another value, a computed state whose callback returned none). It
 *  can never be registered as a value. */
#define WEFT_STATE_VALUE_NONE ((uint32_t)0xFFFFFFFFu)
/** Most values one state type may have. */
#define WEFT_MAX_STATE_VALUES 1024
/** Most sources of one computed state. */
#define WEFT_MAX_STATE_SOURCES 8

/** One value of a state type. */
typedef struct weft_state_value {
    uint32_t value;      /**< any but WEFT_STATE_VALUE_NONE; unique */
    const char *name;    /**< required, unique within the type; copied */
} weft_state_value;

/** What kind of state a descriptor registers. */
typedef enum weft_state_kind {
    /** Freely mutable (Bevy's States): exists from the first transition
     *  step on. */
    WEFT_STATE_KIND_DEFAULT = 0,
    /** Exists while `source` has the value `source_value`; mutable while
     *  it exists (Bevy's SubStates). */
    WEFT_STATE_KIND_SUB = 1,
    /** Derived from `sources` by `compute`; cannot be set (Bevy's
     *  ComputedStates). */
    WEFT_STATE_KIND_COMPUTED = 2,
    WEFT_STATE_KIND_NUM,
    WEFT_STATE_KIND_FORCE_U32 = 0x7FFFFFFF
} weft_state_kind;

/** Computes a computed state from its sources' current values
 *  (sources[i] is WEFT_STATE_VALUE_NONE when source i does not exist).
 *  Returns one of the state's values, or WEFT_STATE_VALUE_NONE for "the
 *  state does not exist". Must be a pure function of its arguments: it is
 *  called on the driver thread inside weft_state_transition, whenever a
 *  source had a transition. */
typedef uint32_t (*weft_state_compute_fn)(const uint32_t *sources, int32_t count,
                                          void *user);

/** State type descriptor. Zero-initialise. */
typedef struct weft_state_desc {
    uint32_t _start_canary;              /**< must be 0 */
    const char *name;                    /**< required, unique; copied */
    weft_state_kind kind;
    const weft_state_value *values;      /**< [value_count]; copied */
    int32_t value_count;                 /**< 1 .. WEFT_MAX_STATE_VALUES */
    /** DEFAULT: the value entered at the first transition step. SUB: the
     *  value taken each time the state comes into existence. COMPUTED:
     *  ignored. Must be one of `values`. */
    uint32_t initial;
    weft_state source;                   /**< SUB: the source state */
    uint32_t source_value;               /**< SUB: one of the source's values */
    const weft_state *sources;           /**< COMPUTED: [source_count], copied */
    int32_t source_count;                /**< COMPUTED: 1 .. WEFT_MAX_STATE_SOURCES */
    weft_state_compute_fn compute;       /**< COMPUTED: required */
    void *user;                          /**< passed to compute */
    uint32_t _end_canary;                /**< must be 0 */
} weft_state_desc;

/** The NextState<name> resource: a queued transition. Writing it directly
 *  (a system declaring WRITE on weft_state_next_resource) is the same as
 *  weft_state_set_next: set value and pending = 1. */
typedef struct weft_next_state {
    uint32_t value;      /**< the value to go to (when pending) */
    uint32_t pending;    /**< 1: a transition is queued; 0: none */
} weft_next_state;

/** What a transition writes to the state's message type
 *  (weft_state_transition_message), one per state that changed in a
 *  transition step. */
typedef struct weft_state_transition_event {
    weft_state state;    /**< the state type */
    uint32_t exited;     /**< the old value, or WEFT_STATE_VALUE_NONE (it did
                              not exist) */
    uint32_t entered;    /**< the new value, or WEFT_STATE_VALUE_NONE (it no
                              longer exists) */
    uint32_t same;       /**< 1: an explicit set to the current value (its
                              OnExit and OnEnter run again) */
} weft_state_transition_event;

/** Registers a state type. Registers four components and a message type
 *  named after it: the resources State<name> (uint32_t, immutable) and
 *  NextState<name> (weft_next_state; none for a computed state), the
 *  components DespawnOnExit<name> and DespawnOnEnter<name> (uint32_t: an
 *  entity holding DespawnOnExit<name> = v is despawned when the state
 *  exits v), and StateTransitionEvent<name> (weft_state_transition_event).
 *  Registration inserts no resource: the next weft_state_transition
 *  inserts State and NextState and enters a DEFAULT state's initial value
 *  (or the value queued before it), and evaluates sub and computed
 *  states. Until then the state does not exist (weft_state_get gives
 *  WEFT_STATE_VALUE_NONE), so a world whose states are registered but
 *  never stepped is still empty: a valid weft_snapshot_restore target. A
 *  restored world keeps the saved values and enters nothing again. Sources
 *  must be registered first, so state types form a tree (a DAG with
 *  computed states) in registration order.
 *  Thread: driver, not inside weft_state_transition.
 *  Returns the id, or 0. Errors: INVALID_HANDLE; INVALID_ARG (desc NULL,
 *  canary, no name, bad kind, values NULL, value_count out of range, a
 *  value WEFT_STATE_VALUE_NONE or twice, a value without a name or a name
 *  twice, `initial` not a value, fields of another kind set, compute
 *  missing, source_count out of range, a source twice); NOT_FOUND (the
 *  source state is not registered, or `source_value` is not one of its
 *  values, so the sub state could never exist); ALREADY_EXISTS (the name,
 *  or one of the derived component or message names, is taken);
 *  WRONG_PHASE (inside a transition, or from a parallel system);
 *  CAPACITY; OUT_OF_MEMORY. On failure the world is unchanged. */
WEFT_API weft_state weft_state_register(weft_world *world, const weft_state_desc *desc);

/** The state registered under `name`, or 0 (no error recorded; a NULL
 *  name is INVALID_ARG, recorded). Thread: driver. */
WEFT_API weft_state weft_state_lookup(const weft_world *world, const char *name);

/** The state's name, or NULL (NOT_FOUND recorded). Thread: driver.
 *  Lifetime: the world's. */
WEFT_API const char *weft_state_name(const weft_world *world, weft_state state);

/** The name of one of the state's values, or NULL (NOT_FOUND: unknown
 *  state; INVALID_ARG: not one of its values). Thread: driver.
 *  Lifetime: the world's. */
WEFT_API const char *weft_state_value_name(const weft_world *world, weft_state state,
                                           uint32_t value);

/** Writes the state's current value to *out: WEFT_STATE_VALUE_NONE when
 *  the state does not exist (then WEFT_OK too). Thread: driver. Errors:
 *  INVALID_HANDLE, INVALID_ARG (out NULL), NOT_FOUND (unknown state). */
WEFT_API weft_status weft_state_get(const weft_world *world, weft_state state,
                                    uint32_t *out);

/** Does the state exist now (its State resource is present)? False for an
 *  unknown state (NOT_FOUND recorded). Thread: driver. */
WEFT_API bool weft_state_exists(const weft_world *world, weft_state state);

/** Queues a transition to `value`, applied by the next
 *  weft_state_transition. Several calls before it: the last one wins.
 *  Setting the current value is a transition too (its OnExit and OnEnter
 *  run again). A sub state may be set while it does not exist: the value
 *  is used if the same step brings it into existence, otherwise dropped.
 *  Thread: driver (systems use weft_system_state_set_next). Errors:
 *  INVALID_HANDLE, NOT_FOUND (unknown state), INVALID_ARG (not one of its
 *  values), IMMUTABLE (a computed state), WRONG_PHASE (from a parallel
 *  system). On failure nothing is queued and a queued value stays. */
WEFT_API weft_status weft_state_set_next(weft_world *world, weft_state state, uint32_t value);

/** Runs one transition step for every state type of the world:
 *  1. in registration order (sources before what depends on them): a
 *     DEFAULT state enters its initial value (first step, when it has no
 *     State yet) or applies its queued NextState; a sub state appears (with its queued value or
 *     `initial`), disappears or applies its queued value, as its source
 *     allows; a computed state whose source changed is recomputed. State
 *     resources are inserted, replaced or removed now, so every schedule
 *     below sees the new values. Each state that changed (or was set to
 *     its own value) writes one weft_state_transition_event to its
 *     message type;
 *  2. OnExit(exited) of the states that changed, leaf to root (reverse
 *     registration order), each followed by despawning the entities whose
 *     DespawnOnExit<name> equals the exited value;
 *  3. OnTransition(exited, entered) where both exist, root to leaf;
 *  4. for each state, root to leaf: despawning the entities whose
 *     DespawnOnEnter<name> equals the entered value, then OnEnter(entered).
 *  A derived change that keeps the value (a sub state whose source was
 *  re-entered) is no transition. The despawns are driven by the last
 *  StateTransitionEvent<name> message since the previous step (read
 *  through the state's own cursor), so a message written by hand acts the
 *  same. Schedules run with dt 0; queued values set during the step are
 *  applied by the next one. Thread: driver, or an exclusive system.
 *  Returns WEFT_OK or the first failure; every schedule still runs.
 *  Errors: INVALID_HANDLE; WRONG_PHASE (inside a transition, from a
 *  parallel system, while a query iteration is open); NOT_FOUND (a queued
 *  value that is not one of the state's values, e.g. written directly to
 *  NextState: it is dropped and the state stays); CALLBACK (a compute
 *  callback returned a value that is not the state's: the state stays);
 *  OUT_OF_MEMORY; a failure of an OnExit/OnTransition/OnEnter schedule. */
WEFT_API weft_status weft_state_transition(weft_world *world);

/** The OnEnter(value) schedule of the state, created (empty) on first use
 *  and named "OnEnter(<state>::<value>)". Add systems to it with the
 *  weft_schedule_* calls. It belongs to the state machinery:
 *  weft_schedule_destroy refuses it, the world frees it.
 *  Thread: driver, not while it runs. Lifetime: the world's.
 *  Returns NULL on failure: INVALID_HANDLE, NOT_FOUND (unknown state),
 *  INVALID_ARG (not one of its values), ALREADY_EXISTS (a schedule of
 *  that name was created by hand), OUT_OF_MEMORY. */
WEFT_API weft_schedule *weft_state_on_enter(weft_world *world, weft_state state,
                                            uint32_t value);
/** The OnExit(value) schedule, as weft_state_on_enter. */
WEFT_API weft_schedule *weft_state_on_exit(weft_world *world, weft_state state,
                                           uint32_t value);
/** The OnTransition(from, to) schedule, named
 *  "OnTransition(<state>::<from> -> <state>::<to>)", as
 *  weft_state_on_enter; run when the state goes from `from` to `to`
 *  (from == to: when it is set to its own value). */
WEFT_API weft_schedule *weft_state_on_transition(weft_world *world, weft_state state,
                                                 uint32_t from, uint32_t to);

/** The State<name> resource (uint32_t), for declaring READ access in
 *  system descriptors; 0 on failure (INVALID_HANDLE, NOT_FOUND).
 *  Thread: driver. */
WEFT_API weft_component weft_state_resource(const weft_world *world, weft_state state);
/** The NextState<name> resource (weft_next_state), for declaring WRITE
 *  access; 0 on failure (INVALID_HANDLE, NOT_FOUND, IMMUTABLE: a computed
 *  state has none). Thread: driver. */
WEFT_API weft_component weft_state_next_resource(const weft_world *world, weft_state state);
/** The DespawnOnExit<name> component (uint32_t value); 0 on failure
 *  (INVALID_HANDLE, NOT_FOUND). Thread: driver. */
WEFT_API weft_component weft_state_despawn_on_exit(const weft_world *world, weft_state state);
/** The DespawnOnEnter<name> component (uint32_t value); 0 on failure
 *  (INVALID_HANDLE, NOT_FOUND). Thread: driver. */
WEFT_API weft_component weft_state_despawn_on_enter(const weft_world *world,
                                                    weft_state state);
/** The StateTransitionEvent<name> message type
 *  (weft_state_transition_event); 0 on failure (INVALID_HANDLE,
 *  NOT_FOUND). Thread: driver. */
WEFT_API weft_message_type weft_state_transition_message(const weft_world *world,
                                                         weft_state state);

/** Inside a system that declared READ (or WRITE) on
 *  weft_state_resource(state): writes the current value to *out
 *  (WEFT_STATE_VALUE_NONE when the state does not exist).
 *  Errors: INVALID_ARG (ctx or out NULL), NOT_FOUND (unknown state),
 *  ACCESS_VIOLATION (not declared; the system fails).
 *  Thread: the thread running the system or condition, during its call. */
WEFT_API weft_status weft_system_state_get(weft_system_ctx *ctx, weft_state state,
                                           uint32_t *out);
/** Inside a system that declared WRITE on weft_state_next_resource(state):
 *  queues a transition, as weft_state_set_next. Errors: INVALID_ARG (ctx
 *  NULL, not one of the values, from a condition), NOT_FOUND (unknown
 *  state), IMMUTABLE (a computed state), ACCESS_VIOLATION (not declared;
 *  the system fails). Thread: the thread running the system, during its
 *  call. */
WEFT_API weft_status weft_system_state_set_next(weft_system_ctx *ctx, weft_state state,
                                                uint32_t value);

/** Run condition: the state exists and has `value` (Bevy's in_state).
 *  Reads State<name>. Returns NULL on failure (as
 *  weft_condition_resource_exists, plus NOT_FOUND for an unknown state
 *  and INVALID_ARG for a value that is not one of its values).
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_condition *weft_condition_in_state(weft_schedule *schedule, weft_state state,
                                                 uint32_t value);
/** Run condition: the state exists (Bevy's state_exists).
 *  Thread: driver, not while the schedule runs. */
WEFT_API weft_condition *weft_condition_state_exists(weft_schedule *schedule,
                                                     weft_state state);
/** Run condition: the state exists and its value changed (or it came into
 *  existence) since this condition last evaluated; the first evaluation
 *  counts an existing state (Bevy's state_changed). A set to the current
 *  value is no change. Thread: driver, not while the schedule runs. */
WEFT_API weft_condition *weft_condition_state_changed(weft_schedule *schedule,
                                                      weft_state state);

/* -- states on an app -- */

/** Adds the plugin "weft.states" to an app. Its build makes the app run
 *  weft_state_transition of its world: every update in the
 *  StateTransition label (after PreUpdate, before the fixed loop and
 *  Update), through an exclusive system "weft.state_transition", and once
 *  at startup in a label "StateTransitionStartup" placed before
 *  PreStartup, so initial states are entered (their OnEnter run) before
 *  any startup system. The system is WEFT_SYSTEM_NOT_STEPPABLE: stepping
 *  StateTransition does not hold transitions back. A failing step (a failing OnEnter system, a bad
 *  queued value) fails that system, so weft_app_update reports it. States
 *  registered on the app's world with weft_state_register are then
 *  driven too. Errors: as weft_app_add_plugin (ALREADY_EXISTS: added
 *  before). Thread: driver. */
WEFT_API weft_status weft_app_add_states_plugin(weft_app *app);

/** Registers a state on the app's world (as weft_state_register) after
 *  making sure the app runs the transition step: the same hooks as the
 *  states plugin's build, made now, so it works with or without the
 *  plugin and also after the setup. A state registered after the startup
 *  order ran is entered by the next StateTransition. Returns the id, or 0
 *  with the error in the world's slot: INVALID_HANDLE (invalid app),
 *  WRONG_PHASE (while the app's StateTransition runs), OUT_OF_MEMORY, and
 *  weft_state_register's errors. Bad input is refused before anything
 *  changes; should memory run out after the hooks were made, they stay (a
 *  transition step without states does nothing). Thread: driver. */
WEFT_API weft_state weft_app_register_state(weft_app *app, const weft_state_desc *desc);

/* ==================================================================== */
/* ---- sub-apps: sub-worlds fed by extraction, optionally pipelined -- */
/* (src/app/subapp.c, src/app/extract.c; entry points in src/api/)     */
/* ==================================================================== */

/* A sub-app is a second app with its own world and schedules that its app
 * (the "main" app) drives, the way Bevy's render SubApp is driven by its
 * App (docs/architecture.md, "Sub-apps"). After the main order of every
 * weft_app_update, each sub-app (in order of addition) is
 *
 *   1. synced: main entities carrying its sync tag get a twin entity in
 *      the sub-world; each side holds the other's id (the main entity gets
 *      the sub-app's SubEntity component, the twin a MainEntity); the
 *      twins of main entities that were despawned or lost the tag are
 *      despawned. With clear_every_frame, every sub-world entity is
 *      despawned first and every synced main entity gets a fresh twin;
 *   2. extracted: the sub-world's Extract schedule runs on the calling
 *      thread. Its systems (weft_sub_app_add_extract and the three
 *      extraction forms) read the main world, which is read-only while
 *      they run (every call that would change it returns WRONG_PHASE),
 *      and write the sub-world;
 *   3. updated: the sub-app's own orders run (startup on its first frame,
 *      then its main order, with the same dt) as weft_app_update runs them.
 *
 * A sub-app is itself a weft_app: every weft_app_* call that builds an app
 * (weft_app_schedule, weft_app_add_system, weft_app_insert_schedule,
 * plugins, weft_app_world) works on it. weft_app_update, weft_app_run and
 * weft_app_destroy are refused on it (WRONG_PHASE): its app drives it and
 * destroys it, first of all its parts.
 *
 * Pipelined mode: step 3 runs on a thread of the sub-app's own while the
 * caller returns and simulates the next frame: frame N of the sub-app
 * overlaps frame N+1 of the main world. The next update waits for the
 * frame in flight before it extracts, so extraction never overlaps either
 * world's schedules, and the sub-world sees the same sequence of
 * extractions as without pipelining. While a frame is in flight, the
 * sub-app and its world belong to that thread: call weft_sub_app_wait
 * before touching them from the driver. Each world keeps its executor:
 * the sub-world's systems run in parallel on the executor set on it
 * (weft_world_set_threads or weft_world_set_job_system), or on the main
 * world's with share_threads (weft_world_share_threads): one built-in
 * pool for both worlds, whose pipelined frames overlap on it without
 * deadlock. */

/** Sub-app descriptor. Zero-initialise it; zero fields mean defaults. */
typedef struct weft_sub_app_desc {
    uint32_t _start_canary;      /**< must be 0 */
    const char *name;            /**< required, unique among the app's
                                      sub-apps; copied. Also prefixes the
                                      main-world components it registers:
                                      "<name>.Sync", "<name>.SubEntity" */
    weft_world_desc world_desc;  /**< the sub-world's (allocator, logger) */
    bool pipelined;              /**< run its frames on its own thread */
    bool clear_every_frame;      /**< despawn every sub-world entity before
                                      each extraction (twins are made anew);
                                      otherwise sub-world entities are kept */
    bool share_threads;          /**< the sub-world runs on the main world's
                                      executor (weft_world_share_threads):
                                      one built-in pool for both, pipelined
                                      or not. Set the main world's threads
                                      first: while lent, its executor is
                                      fixed (WRONG_PHASE) */
    uint32_t _end_canary;        /**< must be 0 */
} weft_sub_app_desc;

/** Creates a sub-app of `app` with a new world, its built-in labels (as
 *  weft_app_create) and an empty Extract schedule; registers its sync tag
 *  and SubEntity component in the main world (reused when a component of
 *  that name and shape exists, e.g. from an earlier app on a given world)
 *  and MainEntity in the sub-world. Returns the sub-app, or NULL with the
 *  error in the main world's slot: INVALID_HANDLE, INVALID_ARG (desc NULL,
 *  canary, no name, bad world_desc, `app` is a sub-app itself),
 *  ALREADY_EXISTS (a sub-app of that name, or a main-world component of
 *  that name with another shape), WRONG_PHASE (during an update),
 *  OUT_OF_MEMORY, UNSUPPORTED (`pipelined` in a build without threads,
 *  WEFT_THREADS=OFF); the app is unchanged on error. Lifetime: the app's.
 *  Thread: driver of the app's world. */
WEFT_API weft_app *weft_app_add_sub_app(weft_app *app, const weft_sub_app_desc *desc);

/** The sub-app named `name`, or NULL (NOT_FOUND recorded; INVALID_ARG for
 *  a NULL name). Thread: driver. */
WEFT_API weft_app *weft_app_sub_app(weft_app *app, const char *name);

/** The app driving `sub`, or NULL when `sub` is no sub-app (or invalid).
 *  Thread: any. */
WEFT_API weft_app *weft_sub_app_parent(weft_app *sub);

/** Waits until the sub-app has no frame in flight and returns that
 *  frame's status (WEFT_OK when none was in flight or it succeeded; a
 *  frame's failure is returned once, by this call or by the next
 *  weft_app_update). Errors: INVALID_HANDLE, INVALID_ARG (not a sub-app).
 *  Thread: driver of the main world. */
WEFT_API weft_status weft_sub_app_wait(weft_app *sub);

/** Turns pipelined mode on or off from the next update on (turning it off
 *  waits for the frame in flight and returns its status). Errors:
 *  INVALID_HANDLE, INVALID_ARG (not a sub-app), WRONG_PHASE (during an
 *  update), INTERNAL (the thread could not start; the mode stays off),
 *  UNSUPPORTED (turning it on in a build without threads, WEFT_THREADS=OFF:
 *  the mode stays off). Thread: driver of the main world. */
WEFT_API weft_status weft_sub_app_set_pipelined(weft_app *sub, bool on);

/** Frames the sub-app has completed (extracted and updated). Thread:
 *  driver of the main world, after weft_sub_app_wait when pipelined. */
WEFT_API int64_t weft_sub_app_frames(const weft_app *sub);

/** The main-world tag that marks entities to sync into `sub` (0 on
 *  misuse). Thread: driver. */
WEFT_API weft_component weft_sub_app_sync_tag(const weft_app *sub);
/** The main-world component (a weft_entity) holding a synced entity's
 *  twin in `sub`'s world (Bevy's RenderEntity). Managed by the sub-app:
 *  written at sync, removed when the tag goes. 0 on misuse. Thread: driver. */
WEFT_API weft_component weft_sub_app_sub_entity(const weft_app *sub);
/** The sub-world component (a weft_entity) holding a twin's main entity
 *  (Bevy's MainEntity). 0 on misuse. Thread: driver. */
WEFT_API weft_component weft_sub_app_main_entity(const weft_app *sub);

/** The twin of main entity `main_e` in `sub`'s world, or 0 with the error
 *  in the main world's slot: INVALID_HANDLE, INVALID_ENTITY or
 *  STALE_ENTITY (`main_e` is not alive), NOT_FOUND (not synced yet: the
 *  next extraction syncs it), STALE_ENTITY (its twin was despawned in the
 *  sub-world by someone else), WRONG_PHASE (a pipelined frame of `sub` is
 *  in flight). Thread: driver. */
WEFT_API weft_entity weft_sub_app_map(weft_app *sub, weft_entity main_e);

/* -- extract systems -- */

/** An extract system: a system of the sub-world's Extract schedule (the
 *  `system` part: its queries, resources and messages are the
 *  sub-world's, it records commands or, when EXCLUSIVE, writes the
 *  sub-world directly) that also reads the main world through the
 *  `main_*` parts. Every main query must be read-only (no WRITE term).
 *  Extract systems always run on the thread running the extraction (the
 *  MAIN_THREAD flag is forced), one at a time. */
typedef struct weft_extract_desc {
    uint32_t _start_canary;                  /**< must be 0 */
    weft_system_desc system;                 /**< the sub-world side */
    const weft_query_desc *main_queries;     /**< main-world queries, by index */
    int32_t main_query_count;                /**< 0 .. WEFT_MAX_SYSTEM_QUERIES */
    const weft_component *main_resources;    /**< main resources it reads */
    int32_t main_resource_count;             /**< 0 .. WEFT_MAX_SYSTEM_RESOURCES */
    const weft_message_type *main_messages;  /**< main message types it reads */
    int32_t main_message_count;              /**< 0 .. WEFT_MAX_SYSTEM_MESSAGES */
    uint32_t _end_canary;                    /**< must be 0 */
} weft_extract_desc;

/** Adds an extract system to `sub`. Its main queries are created in the
 *  main world now (change filters compare against this system's previous
 *  extraction). Returns its node in the Extract schedule, or 0 with the
 *  error in the sub-world's slot: INVALID_HANDLE, INVALID_ARG (not a
 *  sub-app, desc NULL, canary, counts out of range, NULL arrays),
 *  ACCESS_VIOLATION (a main query writes), NOT_FOUND (an unknown main
 *  resource or message type), WRONG_PHASE (during an update or with a
 *  frame in flight), the errors of weft_query_create (recorded in the main
 *  world) and weft_schedule_add_system, OUT_OF_MEMORY; nothing is added
 *  on error. Thread: driver of the main world. */
WEFT_API weft_node weft_sub_app_add_extract(weft_app *sub, const weft_extract_desc *desc);

/** The main world, read-only, for the extract system running with `ctx`
 *  (weft_get, weft_has, weft_query_get on the system's main queries, ...;
 *  calls that change it return WRONG_PHASE). NULL with WRONG_PHASE
 *  recorded when `ctx` is not an extract system's during an extraction.
 *  Lifetime: the call. Thread: the extract system's. */
WEFT_API const weft_world *weft_extract_main(weft_system_ctx *ctx);

/** Starts iterating main query number `query` of the running extract
 *  system (then weft_iter_next, weft_iter_field; writing is refused).
 *  Added/Changed filters see what changed since this system's previous
 *  extraction. Errors: WRONG_PHASE (not an extract system), INVALID_ARG
 *  (query out of range, it NULL), weft_query_iter's.
 *  Thread: the extract system's. */
WEFT_API weft_status weft_extract_iter(weft_system_ctx *ctx, int32_t query, weft_iter *it);

/** A main resource the extract system declared, read-only; NULL when
 *  absent (no error) or on misuse (WRONG_PHASE, ACCESS_VIOLATION: not
 *  declared, SIZE_MISMATCH). Thread: the extract system's. */
WEFT_API const void *weft_extract_resource(weft_system_ctx *ctx, weft_component r,
                                           size_t size);

/** True when the declared main resource `r` exists and was inserted or
 *  written since this sub-app's previous extraction (always true at its
 *  first). False when absent or on misuse (as weft_extract_resource).
 *  Thread: the extract system's. */
WEFT_API bool weft_extract_resource_changed(weft_system_ctx *ctx, weft_component r);

/** Next unread main message of a declared type (the system's own cursor,
 *  so every message is seen by one extraction), or NULL. Errors (NULL):
 *  WRONG_PHASE, ACCESS_VIOLATION (not declared), SIZE_MISMATCH.
 *  Thread: the extract system's. */
WEFT_API const void *weft_extract_message_read(weft_system_ctx *ctx, weft_message_type type,
                                               size_t size);

/** The twin of main entity `main_e` in the sub-world (as
 *  weft_sub_app_map; errors recorded in the sub-world's run slot, so the
 *  system fails). Thread: the extract system's. */
WEFT_API weft_entity weft_extract_sub_entity(weft_system_ctx *ctx, weft_entity main_e);

/* -- the three extraction forms -- */

/** Transforms one extracted value: reads `src` (the main world's value;
 *  NULL for a tag) and writes `dst` (zeroed, of the target's size).
 *  `main_e` is the main entity (0 for resources). Returns false to
 *  extract nothing: the target is then removed (component, resource) or
 *  left out (instance). Runs on the extraction thread; must not call
 *  weft. */
typedef bool (*weft_extract_fn)(weft_entity main_e, const void *src, void *dst, void *user);

/** Component extraction: for every synced main entity with `main_component`,
 *  the transformed value is written as `sub_component` on its twin. */
typedef struct weft_extract_component_desc {
    uint32_t _start_canary;          /**< must be 0 */
    const char *name;                /**< system name; NULL: "extract.<component>" */
    weft_component main_component;   /**< read in the main world */
    weft_component sub_component;    /**< written in the sub-world */
    weft_extract_fn transform;       /**< NULL: copy (sizes must be equal) */
    void *user;                      /**< passed to transform */
    /** Only entities whose main component changed (or that were synced)
     *  since the previous extraction; otherwise every entity every frame. */
    bool changed_only;
    uint32_t _end_canary;            /**< must be 0 */
} weft_extract_component_desc;

/** Adds a component extraction to `sub` (an exclusive extract system).
 *  A twin whose main entity lost `main_component` keeps its last value
 *  until removed by the caller or the twin is despawned. Errors (0):
 *  INVALID_HANDLE, INVALID_ARG (canary, not a sub-app), UNKNOWN_COMPONENT
 *  (either id), SIZE_MISMATCH (no transform and different sizes), those
 *  of weft_sub_app_add_extract. While extracting, a twin despawned by
 *  someone else fails the system with STALE_ENTITY naming both entities.
 *  Thread: driver. */
WEFT_API weft_node weft_sub_app_extract_component(weft_app *sub,
                                                  const weft_extract_component_desc *desc);

/** Resource extraction: `main_resource` is copied (or transformed) into
 *  `sub_resource` only when it changed since the previous extraction or
 *  the sub-world lacks it; a removed main resource removes it. */
typedef struct weft_extract_resource_desc {
    uint32_t _start_canary;          /**< must be 0 */
    const char *name;                /**< system name; NULL: "extract.<resource>" */
    weft_component main_resource;
    weft_component sub_resource;
    weft_extract_fn transform;       /**< NULL: copy (sizes must be equal) */
    void *user;
    uint32_t _end_canary;            /**< must be 0 */
} weft_extract_resource_desc;

/** Adds a resource extraction to `sub`. Errors: as
 *  weft_sub_app_extract_component. Thread: driver. */
WEFT_API weft_node weft_sub_app_extract_resource(weft_app *sub,
                                                 const weft_extract_resource_desc *desc);

/** The value of an instance map resource: every extracted instance keyed
 *  by main entity, keys ascending, no sub-world entities involved. The
 *  arrays belong to the sub-app and are rebuilt by each extraction.
 *  weft_world_hash hashes the entries (not the arrays' addresses); a
 *  snapshot stores the map empty (all zero), as the arrays cannot travel
 *  with it: after a restore it reads empty until the next extraction. */
typedef struct weft_instance_map {
    int32_t count;                /**< instances */
    uint32_t _pad;                /**< 0 */
    size_t instance_size;         /**< bytes per instance */
    const weft_entity *keys;      /**< [count] main entities, ascending */
    const void *values;           /**< [count] instances, instance_size each */
} weft_instance_map;

/** Instance extraction: for every main entity with `main_component` (synced
 *  or not), the transformed value of `instance_size` bytes goes into a map
 *  keyed by the main entity: the sub-world resource `map_name` (registered
 *  by this call, a weft_instance_map). */
typedef struct weft_extract_instances_desc {
    uint32_t _start_canary;          /**< must be 0 */
    const char *map_name;            /**< required: the map resource's name */
    weft_component main_component;
    size_t instance_size;            /**< > 0 */
    weft_extract_fn extract;         /**< NULL: copy (sizes must be equal) */
    void *user;
    uint32_t _end_canary;            /**< must be 0 */
} weft_extract_instances_desc;

/** Adds an instance extraction; returns the map resource's id in the
 *  sub-world (read it with weft_resource_get or a system's resource), or
 *  0: errors as weft_sub_app_extract_component plus INVALID_ARG (no
 *  map_name, instance_size 0) and ALREADY_EXISTS (map_name taken).
 *  Lifetime of the map's arrays: until the next extraction. Thread: driver. */
WEFT_API weft_component weft_sub_app_extract_instances(weft_app *sub,
                                                       const weft_extract_instances_desc *desc);

/** The instance of main entity `main_e` in `map` (binary search), or NULL.
 *  Thread: any thread that may read the map. */
WEFT_API const void *weft_instance_map_get(const weft_instance_map *map, weft_entity main_e);

/* ---- reloadable modules (hot reload) ----
 *
 * A module is a shared library holding gameplay code: it exports one
 * function, WEFT_MODULE_ENTRY_NAME (declare it with WEFT_MODULE_EXPORT),
 * returning a weft_module_def whose abi_version is WEFT_MODULE_ABI_VERSION
 * and whose build callback is a plugin build: it adds systems to the
 * app's labels (weft_app_add_system, weft_schedule_add_system on an app
 * label's schedule) and may look up or register components, resources and
 * message types as any code can.
 *
 * weft_module_load copies the file to a unique temporary file and loads
 * that copy (so the dynamic loader's cache and a build being written never
 * interfere), runs build, and tracks every system it added as the
 * module's. weft_module_reload does the same with the file's current
 * contents at a safe point (no schedule running, no update, no plugin
 * callback or system): it applies every schedule's pending commands, runs
 * the new build against the live app while recording instead of
 * applying, and then commits: a system the new build adds under the name
 * of one of the module's systems in the same schedule keeps its identity
 * (node, local state, last-run ticks, message and removal cursors,
 * statistics, sets, orderings and conditions) and only its fn, user and
 * local init/fini change; new names are new systems; the module's systems
 * the new build no longer adds are removed (their local's fini runs with
 * the old code), and the old copy is unloaded. Components a build of the
 * module registered first are the module's own: registered again by a
 * later build they keep their id, get the new lifecycle hooks and, when
 * their layout changed, every value is migrated through the old and new
 * type descriptions (fields matched by name, new ones from
 * weft_component_migration_defaults or zero, removed ones dropped,
 * widening numeric conversions; anything else refused naming the
 * component and field).
 * When anything fails the new copy is unloaded, everything the build did
 * (systems, orderings, labels, schedules, components) is undone and the
 * module keeps running its old code.
 *
 * Each successful reload writes a weft_module_reloaded message (type
 * weft_module_reloaded_message) and inserts the resource
 * weft_module_reloads_resource, so its changed tick marks the reload.
 *
 * A rebound system whose queries or access changed gets the new
 * declaration (its schedule rebuilt). Observers the build creates are
 * rebound by (event, component, rank), named user run conditions by name;
 * those a new build no longer creates are removed. Observers of one
 * entity, unnamed user conditions and components with type hooks are
 * refused (UNSUPPORTED) while a module's build runs; message drop
 * functions and code pointers handed over later, from a running system,
 * are not checked and must not come from a module. See
 * docs/hot-reload.md.
 *
 * Threads: every weft_module_* call on the driver thread of the app's world. */

/** Version of weft_module_def and of the reload contract; a module built
 *  against another version is refused. */
#define WEFT_MODULE_ABI_VERSION 1u

/** Name of the function a module exports (a weft_module_entry_fn). */
#define WEFT_MODULE_ENTRY_NAME "weft_module_entry"

/** Marks the entry point exported from a module built with
 *  -fvisibility=hidden. */
#if defined(_WIN32)
#  define WEFT_MODULE_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#  define WEFT_MODULE_EXPORT __attribute__((visibility("default")))
#else
#  define WEFT_MODULE_EXPORT
#endif

/** What a module's entry point returns; static storage in the module. */
typedef struct weft_module_def {
    uint32_t abi_version;             /**< WEFT_MODULE_ABI_VERSION */
    const char *name;                 /**< optional, for messages; copied */
    weft_plugin_fn build;             /**< required: adds the module's systems */
    void *user;                       /**< passed to build */
} weft_module_def;

/** Signature of WEFT_MODULE_ENTRY_NAME. */
typedef const weft_module_def *(*weft_module_entry_fn)(void);

/** A loaded module, owned by its app. */
typedef struct weft_module weft_module;

/** Payload of the message written by each successful reload. */
typedef struct weft_module_reloaded {
    uint32_t reloads;                 /**< the module's reload count */
    int32_t rebound;                  /**< systems that kept their identity */
    int32_t added;                    /**< systems new in this build */
    int32_t removed;                  /**< systems gone from this build */
} weft_module_reloaded;

/** Value of the resource inserted by each successful reload. */
typedef struct weft_module_reloads {
    uint32_t count;                   /**< successful reloads of every module */
} weft_module_reloads;

/** Loads the module at `path` (copied to a unique temporary file first),
 *  checks its entry point and ABI version and runs its build. Call it
 *  after weft_app_setup or before; not during an update, a plugin callback
 *  or a schedule run. Returns the module or NULL; errors in the app
 *  world's slot: INVALID_HANDLE, INVALID_ARG (path NULL or empty),
 *  NOT_FOUND (no such file, or a symlink loop), BAD_FORMAT (not a
 *  regular file: a directory, FIFO or device is refused without blocking;
 *  above 1 GiB; not a loadable shared library, e.g. truncated; no
 *  WEFT_MODULE_ENTRY_NAME; no build), UNSUPPORTED
 *  (another WEFT_MODULE_ABI_VERSION; or weft was built without modules,
 *  CMake -DWEFT_MODULES=OFF, the default off Linux), WRONG_PHASE, ALREADY_EXISTS (the
 *  build added two systems of one name to one schedule), whatever the
 *  build returned (its systems are removed again), OUT_OF_MEMORY. The
 *  world is unchanged on error (apart from what the build itself did
 *  besides adding systems). Lifetime: until weft_module_unload or
 *  weft_app_destroy. */
WEFT_API weft_module *weft_module_load(weft_app *app, const char *path);

/** Reloads the module from its path (see above). Errors (the module keeps
 *  its old code, the world is unchanged): INVALID_HANDLE, WRONG_PHASE
 *  (a schedule is running, e.g. called from a system; during an update or
 *  plugin callback), the load errors of weft_module_load, INVALID_ARG (a
 *  rebound system's local size or alignment changed), OUT_OF_MEMORY. */
WEFT_API weft_status weft_module_reload(weft_module *module);

/** Removes the module's systems (their locals' fini run) and unloads it;
 *  the handle is invalid afterwards. Errors: INVALID_HANDLE, WRONG_PHASE
 *  (as weft_module_reload). */
WEFT_API weft_status weft_module_unload(weft_module *module);

/** Watches the module's file (on) or stops (off). While watched, every
 *  weft_app_update first looks at the file, before anything runs: once a
 *  new build has been written completely (inotify on Linux reports that a
 *  writer closed the file or a build was renamed over it; with `polling`,
 *  or where inotify is unavailable, the file's size and modification time
 *  changed and then stayed the same for one more update), the module is
 *  reloaded as by weft_module_reload. A refused reload (e.g. a file
 *  closed half written) is logged at WEFT_LOG_WARN, recorded in the error
 *  slot and in weft_module_watch_status, and the old code keeps running
 *  until the file changes again. Errors: INVALID_HANDLE, WRONG_PHASE (as
 *  weft_module_reload), OUT_OF_MEMORY. */
WEFT_API weft_status weft_module_watch(weft_module *module, bool on, bool polling);

/** The result of the last reload the watch made (WEFT_OK when none
 *  failed; INVALID_HANDLE for an invalid handle). */
WEFT_API weft_status weft_module_watch_status(const weft_module *module);

/** Successful reloads of this module (0 for an invalid handle). */
WEFT_API int32_t weft_module_reload_count(const weft_module *module);

/** Systems the module currently owns (0 for an invalid handle). */
WEFT_API int32_t weft_module_system_count(const weft_module *module);

/** The message type of weft_module_reloaded ("weft.ModuleReloaded"),
 *  registered on first use. 0 on error (INVALID_HANDLE, OUT_OF_MEMORY,
 *  UNSUPPORTED: built with WEFT_MODULES=OFF). Thread: driver. */
WEFT_API weft_message_type weft_module_reloaded_message(weft_app *app);

/** The resource id of weft_module_reloads ("weft.ModuleReloads"),
 *  registered on first use (inserted by the first reload). 0 on error
 *  (INVALID_HANDLE, ALREADY_EXISTS: the name has another size,
 *  OUT_OF_MEMORY, UNSUPPORTED: built with WEFT_MODULES=OFF). Thread: driver. */
WEFT_API weft_component weft_module_reloads_resource(weft_app *app);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_H */

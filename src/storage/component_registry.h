/* src/storage/component_registry.h - component id -> type information.
 * SPDX-License-Identifier: MIT
 *
 * Ids are dense from 1 in registration order; id 0 is "none". Each entry is
 * allocated on its own so pointers to it stay valid while the registry
 * grows (columns keep a pointer to their type). A name index (open
 * addressing over XXH3 of the name) gives lookup by name. A component id is
 * also a resource id: the entry holds the resource slot.
 */
#ifndef WF_COMPONENT_REGISTRY_H
#define WF_COMPONENT_REGISTRY_H

#include "core/alloc.h"

typedef struct wf_sparse_set wf_sparse_set;

/* One requirement of a component (weft_require, owned copy). */
typedef struct wf_require {
    weft_component id;
    void *value;                          /* owned default blob, or NULL */
    void (*ctor)(void *dst, void *user);  /* default constructor, or NULL */
    void *user;
} wf_require;

/* One entry of a component's transitive requirement closure. */
typedef struct wf_req_link {
    weft_component id;
    uint32_t depth;                       /* 1: required directly */
    const wf_require *def;                /* the requirement giving the default */
} wf_req_link;

/* Feeds `n` bytes into a running hash (world/inspect.c's). */
typedef void (*wf_hash_feed_fn)(void *state, const void *bytes, size_t n);
/* Hashes a value by what it means rather than its bytes (a value holding
 * pointers): feeds its contents through `feed`. */
typedef void (*wf_value_hash_fn)(const void *value, wf_hash_feed_fn feed, void *state);

/* Checks a value against its type's domain: NULL when it is valid, else a
 * reason (static text). */
typedef const char *(*wf_value_check_fn)(const void *value, const void *user);

typedef struct wf_type_info {
    weft_component id;
    uint32_t size;          /* bytes; 0 = tag */
    uint32_t align;         /* power of two */
    uint32_t flags;         /* weft_component_flags */
    weft_storage storage;   /* TABLE or SPARSE, never DEFAULT */
    bool has_ticks;         /* !(flags & NO_CHANGE_TICKS) */
    bool trivial;           /* no hooks at all: memcpy/memset paths */
    weft_type_hooks hooks;
    weft_lifecycle_hooks lifecycle;
    uint8_t event_mask;     /* bit (event - 1): a hook or observer listens to
                               that lifecycle event of this component */
    weft_component rel_targets; /* relationship source: its target component */
    weft_component rel_source;  /* relationship target: its source component */
    uint32_t rel_flags;         /* weft_relationship_flags (source component) */
    char *name;             /* owned copy */
    size_t name_len;
    uint64_t name_hash;
    wf_sparse_set *sparse;  /* storage == SPARSE: the entity -> value set */
    uint32_t *archs;        /* component index: archetypes holding this id,
                               in creation order */
    uint32_t arch_count;
    uint32_t arch_cap;
    void *res_value;        /* resource value (NULL for tags or absent) */
    weft_ticks res_ticks;
    bool res_present;
    wf_require *reqs;       /* direct requirements [req_count] */
    uint32_t req_count;
    wf_req_link *closure;   /* transitive, breadth first [closure_count] */
    uint32_t closure_count;
    uint32_t closure_cap;
    uint32_t closure_gen;   /* world req_gen the closure was built for */
    uint32_t removed_stream; /* removal tracking: index + 1 of the removed
                                stream (world/messages.h); 0 = not tracked */
    wf_value_hash_fn hash_value; /* NULL: weft_world_hash hashes the bytes;
                                    else the contents (set by the owner of a
                                    value holding pointers, e.g. an instance
                                    map resource) */
    wf_value_check_fn value_check; /* NULL: every value of the size is valid;
                                      else the domain (set by the type's owner,
                                      e.g. a State resource: one of the state's
                                      values), checked by snapshot restore and
                                      weft_world_check (INV-13) */
    const void *check_user;
    bool save_zeroed;       /* snapshots store its value as zeros (its bytes
                               are pointers into memory a snapshot cannot
                               carry, e.g. an instance map, rebuilt by the
                               next extraction) */
    bool no_clone;          /* weft_clone and scenes leave it out (a link
                               owned by someone else, e.g. a sub-app's
                               SubEntity / MainEntity) */
} wf_type_info;

typedef struct wf_registry {
    wf_type_info **infos;  /* [id] for id in 1..count; [0] unused */
    uint32_t count;        /* highest registered id */
    uint32_t cap;          /* slots in infos */
    uint32_t *name_slots;  /* open addressing: component id or 0 */
    uint32_t name_cap;     /* power of two, or 0 */
    int32_t resources;     /* resources currently present */
    uint32_t linked_rels;  /* relationships with LINKED_DESPAWN (kept by
                              wf_registry_mark_linked and wf_registry_pop) */
} wf_registry;

void wf_registry_init(wf_registry *r);
/* Frees entries and tables; values (sparse sets, resources) must already be
 * destroyed by the caller. */
void wf_registry_fini(wf_registry *r, wf_allocator *a);
/* The entry for id, or NULL when id is not registered. */
static inline wf_type_info *wf_registry_get(const wf_registry *r, weft_component id)
{
    return (id - 1u < r->count) ? r->infos[id] : NULL;
}
/* Id registered under `name`, or 0. */
weft_component wf_registry_lookup(const wf_registry *r, const char *name);
/* Adds a validated descriptor (size/align/storage resolved by the caller).
 * Returns the new entry, or NULL when out of memory (registry unchanged). */
wf_type_info *wf_registry_add(wf_registry *r, wf_allocator *a,
                              const weft_component_desc *desc, uint32_t size,
                              uint32_t align, weft_storage storage);

/* Unregisters the newest entry (undo of a registration whose later step
 * failed). */
void wf_registry_pop(wf_registry *r, wf_allocator *a);
/* Records that relationship source `src` despawns its sources with their
 * target (WEFT_RELATIONSHIP_LINKED_DESPAWN), so a despawn learns how many
 * such relationships exist without scanning the registry. */
void wf_registry_mark_linked(wf_registry *r, wf_type_info *src);

/* ---- value helpers honouring the type hooks ---- */

/* Constructs `count` values at dst from src (copy hook or memcpy), or
 * default-constructs them when src is NULL (ctor hook or zero-fill). */
void wf_type_construct(const wf_type_info *ti, void *dst, const void *src,
                       int32_t count);
/* Destroys `count` values (dtor hook; nothing without one). */
void wf_type_destroy(const wf_type_info *ti, void *ptr, int32_t count);
/* Moves `count` values from src to raw dst; src is dead afterwards. */
void wf_type_move(const wf_type_info *ti, void *dst, void *src, int32_t count);

#endif

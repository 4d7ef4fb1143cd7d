/* src/reflect/reflect.h - type descriptions, field paths and snapshots.
 * SPDX-License-Identifier: MIT
 *
 * The reflection layer sits above the world and the system layer (it reads
 * schedule tick state for snapshots) and below the API. A description
 * (weft_type_desc) is validated once and compiled into one allocation
 * holding a tree of wf_rtype/wf_rfield nodes, their names and enum tables,
 * plus the flattened byte offsets of every entity field (for remapping).
 * Compilation runs twice over the same code: a measuring pass that
 * validates and counts bytes, then a filling pass into the block, so a
 * description costs one allocation and frees with one call.
 *
 * The per-world state (weft_world.reflect) maps component ids and message
 * type ids to their compiled descriptions. It is created on first use and
 * freed through weft_world.reflect_fini. Driver thread only.
 */
#ifndef WF_REFLECT_H
#define WF_REFLECT_H

#include "internal.h"


typedef struct wf_rtype wf_rtype;

typedef struct wf_renum {
    const char *name;         /* in the description block */
    int64_t value;
} wf_renum;

typedef struct wf_rfield {
    const char *name;         /* in the block, NUL-terminated */
    weft_kind kind;
    uint32_t offset;          /* bytes from the struct's start */
    uint32_t count;           /* elements, >= 1 (STRING: 1) */
    uint32_t elem_size;       /* bytes per element (STRING: the buffer) */
    weft_kind base;           /* ENUM: the storing integer kind */
    const wf_rtype *sub;      /* STRUCT: the element type */
    const wf_renum *enums;    /* ENUM: [enum_count] */
    uint32_t enum_count;
} wf_rfield;

struct wf_rtype {
    const char *name;         /* "" when unnamed */
    uint32_t size;
    uint32_t align;
    const wf_rfield *fields;  /* [field_count], in description order
                                 (WEFT_KIND_SHAPE fields left out) */
    uint32_t field_count;
    weft_shape shape;         /* how JSON shows it (WEFT_SHAPE_STRUCT: an object) */
};

/* One compiled description: everything lives in `block`. */
typedef struct wf_rdesc {
    const wf_rtype *root;
    const uint32_t *entity_offs; /* [entity_count] byte offsets of every
                                    entity value, in field order */
    uint32_t entity_count;
    void *block;
    size_t block_size;
} wf_rdesc;

typedef struct wf_reflect {
    wf_rdesc **comps;         /* [comp_cap] by component id, NULL: none */
    uint32_t comp_cap;
    wf_rdesc **msgs;          /* [msg_cap] by message type id */
    uint32_t msg_cap;
} wf_reflect;

/* ---- describe.c ---- */

/* Bytes of one value of a scalar kind (0 for STRING/STRUCT/NONE). */
uint32_t wf_kind_size(weft_kind k);
/* Alignment a field of a scalar kind needs in a C struct on this target
 * (4 for the 64-bit kinds on i386, their size elsewhere). */
uint32_t wf_kind_align(weft_kind k);
/* Static name of a kind. */
const char *wf_kind_name(weft_kind k);
/* Validates `desc` for a value of `size` bytes aligned to `align` and
 * compiles it. `what` names the component or message for messages. On
 * failure records the error and returns NULL. */
wf_rdesc *wf_rdesc_compile(weft_world *w, const weft_type_desc *desc, uint32_t size,
                           uint32_t align, const char *what, weft_status *out_status);
void wf_rdesc_free(weft_world *w, wf_rdesc *d);
/* Description of component c, or NULL. */
const wf_rdesc *wf_reflect_component(const weft_world *w, weft_component c);
/* Description of message type t, or NULL. */
const wf_rdesc *wf_reflect_message(const weft_world *w, weft_message_type t);
/* Installs a compiled description (takes ownership; false on OOM, d
 * freed). `msg` selects the message table. */
bool wf_reflect_install(weft_world *w, bool msg, uint32_t id, wf_rdesc *d);

/* ---- path.c ---- */

/* Where a path leads inside a described value. */
typedef struct wf_rplace {
    weft_kind kind;
    uint32_t offset;          /* bytes from the value's start */
    uint32_t size;            /* bytes of the addressed value */
    const wf_rfield *field;   /* the field it belongs to */
} wf_rplace;

/* Resolves `path` in `root`. Records the error (naming the path) and
 * returns its status on failure. */
weft_status wf_path_resolve(const weft_world *w, const wf_rtype *root, const char *what,
                            const char *path, wf_rplace *out);
/* Checks that `value` is in the domain of the place (bool 0/1, a named
 * enum value, a terminated string). */
weft_status wf_place_check_value(const weft_world *w, const wf_rplace *pl, const char *path,
                                 const void *value);
weft_status wf_field_get(const weft_world *w, weft_entity e, weft_component c,
                         const char *path, weft_kind kind, void *out, size_t size);
weft_status wf_field_set(weft_world *w, weft_entity e, weft_component c, const char *path,
                         weft_kind kind, const void *value, size_t size);

/* ---- snapshot_write.c, snapshot_merge.c, snapshot_restore.c ---- */

/* Writes the world into buf (NULL or too small: *out_len = size needed,
 * CAPACITY). Allocates nothing. */
weft_status wf_snapshot_write(weft_world *w, void *buf, size_t cap, size_t *out_len);
/* Writes only what changed since tick `since` (a delta). */
weft_status wf_snapshot_delta_write(weft_world *w, uint32_t since, void *buf, size_t cap,
                                    size_t *out_len);
/* Either of them, compressed with zstd at `level` (1..19) when zstd is
 * true (then *out_len of a size query is an upper bound, and a scratch
 * copy of the payload is allocated). */
weft_status wf_snapshot_write_ex(weft_world *w, bool delta, uint32_t since, bool zstd,
                                 int level, void *buf, size_t cap, size_t *out_len);
/* Full snapshot = base + delta (w: error slot and scratch memory only). */
weft_status wf_snapshot_merge(weft_world *w, const void *base, size_t base_len,
                              const void *delta, size_t delta_len, void *buf, size_t cap,
                              size_t *out_len);
/* Validates a snapshot completely, then restores it into an empty world;
 * on error the world is unchanged (archetypes aside). */
weft_status wf_snapshot_restore(weft_world *w, const void *data, size_t len);

/* ---- compress.c ---- */

/* True when zstd is compiled in (and not hidden by the test switch). */
bool wf_zstd_available(void);
/* Tests only: makes wf_zstd_available() false, to take the path of a
 * build without zstd. Driver thread; not for concurrent worlds. */
void wf_zstd_simulate_absent(bool absent);
/* Largest compressed size of n bytes (0 without zstd). */
size_t wf_zstd_bound(size_t n);
/* Compresses n bytes of src into dst (cap >= wf_zstd_bound(n)); zstd's
 * memory comes from w's allocator. OUT_OF_MEMORY, recorded. */
weft_status wf_zstd_compress(weft_world *w, void *dst, size_t cap, const void *src, size_t n,
                             int level, size_t *out);
/* Checks, before anything is allocated, that a frame of m bytes announces
 * exactly n plain bytes and could hold them (BAD_FORMAT, recorded). */
weft_status wf_zstd_check_size(weft_world *w, uint64_t n, const void *src, size_t m);
/* Decompresses the m bytes at src, which announce n plain bytes, into a
 * buffer it allocates (*out, 16-aligned, exactly n bytes on success): the
 * output buffer starts small and doubles as output arrives, so a frame
 * that lies about its size costs what it really produces. BAD_FORMAT when
 * the frame produces more or fewer than n bytes or is corrupt. */
weft_status wf_zstd_inflate(weft_world *w, const void *src, size_t m, size_t n, uint8_t **out);

/* ---- json.c ---- */

/* Writers: into buf (NULL or too small: *out_len = size needed with the
 * NUL, CAPACITY). Allocate nothing. */
weft_status wf_json_write_component(const weft_world *w, weft_entity e, weft_component c,
                                    char *buf, size_t cap, size_t *out_len);
weft_status wf_json_write_entity(const weft_world *w, weft_entity e, char *buf, size_t cap,
                                 size_t *out_len);
/* Entities the query matches (an iteration that is not a run). */
weft_status wf_json_write_query(weft_world *w, weft_query *q, char *buf, size_t cap,
                                size_t *out_len);
/* Resource r's value (a tag's as {}). */
weft_status wf_json_write_resource(const weft_world *w, weft_component r, char *buf, size_t cap,
                                   size_t *out_len);
/* schema.c: the description of component c as JSON (weft_json_write_schema). */
weft_status wf_json_write_schema(const weft_world *w, weft_component c, char *buf, size_t cap,
                                 size_t *out_len);
/* Readers (jansson): decode fully, then one insert or spawn. */
weft_status wf_json_read_component(weft_world *w, weft_entity e, weft_component c,
                                   const char *text, size_t len);
weft_status wf_json_read_entity(weft_world *w, weft_entity e, const char *text, size_t len);
weft_status wf_json_spawn(weft_world *w, const char *text, size_t len, weft_entity *out);
/* Resource r from an object of any subset of its fields (the others keep
 * the present value or the default), then one resource insert. */
weft_status wf_json_read_resource(weft_world *w, weft_component r, const char *text, size_t len);

/* ---- scene.c ---- */

/* Copies of the entities q matches (an iteration that is not a run), or
 * NULL (error recorded). */
weft_scene *wf_scene_from_query(weft_world *w, weft_query *q);
/* Copies of root and, when recursive, its ChildOf descendants breadth
 * first; root must be live. */
weft_scene *wf_scene_from_tree(weft_world *w, weft_entity root, bool recursive);
uint32_t wf_scene_count(const weft_scene *s);
/* The world that made the scene. */
weft_world *wf_scene_world(const weft_scene *s);
/* Spawns one new entity per saved one, references into the set remapped;
 * out (may be NULL) receives the new ids in scene order. */
weft_status wf_scene_spawn(weft_world *w, const weft_scene *s, weft_entity *out,
                           uint32_t out_cap);
void wf_scene_destroy(weft_world *w, weft_scene *s);

#endif

/* src/command/command_buffer.h - dense command byte queue.
 * SPDX-License-Identifier: MIT
 *
 * A command buffer is a list of chunks (64 KiB, or larger for one big
 * record) holding records back to back, each 8-byte aligned: a header,
 * then for value-carrying commands a table of (component, size, pointer)
 * entries, then the values themselves, each aligned to its component's
 * alignment (chunk data is 64-byte aligned; larger alignments get their own
 * allocation). Chunks never move once allocated, so value pointers stay
 * valid, and a value is constructed in place with the copy hook at record
 * time and destroyed after apply (or when discarded). After an apply the
 * chunks are kept for reuse: recording allocates nothing in the steady
 * state. One thread records into a buffer at a time.
 */
#ifndef WF_COMMAND_BUFFER_H
#define WF_COMMAND_BUFFER_H

#include <string.h>

#include "core/config.h"
#include "storage/column.h"

#define WF_CMD_CHUNK_SIZE (64u * 1024u)

typedef enum wf_cmd_op {
    WF_CMD_SPAWN = 1,      /* e reserved; values */
    WF_CMD_INSERT = 2,     /* values */
    WF_CMD_REMOVE = 3,     /* c */
    WF_CMD_DESPAWN = 4,
    WF_CMD_RES_INSERT = 5, /* one value */
    WF_CMD_RES_REMOVE = 6, /* c */
    WF_CMD_CUSTOM = 7,     /* fn, drop, user, payload */
    WF_CMD_FLUSH = 8       /* make reserved ids live */
} wf_cmd_op;

#define WF_CMD_TRY 1u      /* silent when the entity is gone */
#define WF_CMD_DONE 2u     /* applied or discarded: values already released */
#define WF_CMD_PLAIN 4u    /* no value needs a dtor or a free: release is a no-op */

#define WF_CMD_EXTERNAL 0x80000000u

/* A provisional entity: index k (1, 2, ...) and, as its generation, the
 * tag of the buffer round that gave it out. Tags have the top bit set and
 * live generations never do (entity_index.h: WF_GENERATION_MAX), so a
 * provisional handle is never a live entity; and as every round of every
 * buffer takes a fresh tag, a handle kept past its round, or carried into
 * another buffer, is recognised as such instead of naming that buffer's
 * spawn k. */
#define WF_CMD_PROV_BIT 0x80000000u
#define WF_CMD_PROV(tag, k) (((weft_entity)(tag) << 32) | (uint32_t)(k))
#define WF_CMD_IS_PROV(e) ((uint32_t)((e) >> 32) >= WF_CMD_PROV_BIT)
#define WF_CMD_PROV_TAG(e) ((uint32_t)((e) >> 32))

typedef struct wf_cmd_value {
    weft_component id;
    uint32_t off;          /* offset of the value from the record, 0 = none
                              (default / tag); with WF_CMD_EXTERNAL the offset
                              holds a pointer to the value's own allocation */
} wf_cmd_value;

typedef struct wf_cmd {
    uint8_t op;            /* wf_cmd_op */
    uint8_t flags;         /* WF_CMD_* */
    uint16_t gen;          /* cascade generation (world buffer) */
    uint32_t size;         /* bytes of this record, a multiple of 8 */
    weft_entity e;
    weft_component c;      /* REMOVE / RES_REMOVE */
    int32_t count;         /* value entries that follow the header */
    /* CUSTOM: fn, drop, user, payload follow in wf_cmd_custom */
} wf_cmd;

typedef struct wf_cmd_custom {
    weft_command_fn fn;
    weft_command_drop_fn drop;
    void *user;
    size_t size;
} wf_cmd_custom;

typedef struct wf_cmd_chunk {
    struct wf_cmd_chunk *next;
    uint32_t cap;          /* bytes in data */
    uint32_t used;
    uint8_t pad[48];       /* data starts 64-byte aligned */
    uint8_t data[];
} wf_cmd_chunk;

/* First word of a live buffer: a forged or destroyed handle is refused
 * before anything else of it is read. */
#define WF_CMDS_MAGIC 0x636d6473u /* "cmds" */

struct weft_commands {
    uint32_t magic;        /* WF_CMDS_MAGIC while alive */
    weft_world *world;     /* owner */
    wf_allocator *alloc;
    wf_registry *registry;
    wf_cmd_chunk *head;    /* chunks in use, in order */
    wf_cmd_chunk *tail;
    wf_cmd_chunk *spare;   /* emptied chunks kept for reuse */
    int32_t count;         /* unapplied records */
    uint32_t gen;          /* generation stamped on new records */
    bool applying;
    /* Provisional spawns (system buffers, which record on worker threads
     * where reserving real ids would make them depend on timing): spawn
     * hands out WF_CMD_PROV(prov_tag, k), k = 1, 2, ...; the apply gives
     * spawn k a real id in record order and maps later uses of the handle.
     * The map of the last applied round stays (prev_*) so that
     * weft_commands_resolve can answer until the next round is applied. */
    bool provisional;
    uint32_t prov_tag;     /* tag of the round being recorded */
    uint32_t prov_count;   /* handles given out since the last apply */
    uint32_t prov_cap;
    weft_entity *prov_map; /* [prov_cap] real id of handle k at k - 1 */
    uint32_t prev_tag;     /* tag of the last applied round with spawns, 0 = none */
    uint32_t prev_count;
    uint32_t prev_cap;
    weft_entity *prev_map; /* [prev_cap] real ids of that round (0 = not spawned) */
    struct weft_commands *next; /* world's list */
    struct weft_commands *prev;
};

void wf_cmds_init(weft_commands *b, weft_world *w, wf_allocator *a, wf_registry *reg);
/* Discards every record (values destroyed, drops called) and frees all
 * chunks. */
void wf_cmds_fini(weft_commands *b);
/* Appends a record with `count` values copied in (validated by the
 * caller). Returns it, or NULL on OOM (nothing recorded). */
wf_cmd *wf_cmds_push(weft_commands *b, wf_cmd_op op, uint8_t flags, weft_entity e,
                     weft_component c, const weft_value *values, int32_t count);
/* Fast path of wf_cmds_push for a trivially copyable value (or none):
 * returns the record or NULL (OOM). ti may be NULL for value-less ops. */
static inline wf_cmd *wf_cmds_push_small(weft_commands *b, wf_cmd_op op, uint8_t flags,
                                         weft_entity e, weft_component c,
                                         const wf_type_info *ti, const void *value);
/* Appends a custom command; NULL on OOM. */
wf_cmd *wf_cmds_push_custom(weft_commands *b, weft_command_fn fn, const void *payload,
                            size_t size, weft_command_drop_fn drop, void *user);
/* The value table of a record. */
static inline wf_cmd_value *wf_cmd_values(wf_cmd *c)
{
    return (wf_cmd_value *)(void *)(c + 1);
}
/* The constructed value of entry v of record c, or NULL. */
static inline void *wf_cmd_value_ptr(wf_cmd *c, const wf_cmd_value *v)
{
    if (!v->off) {
        return NULL;
    }
    uint8_t *p = (uint8_t *)c + (v->off & ~WF_CMD_EXTERNAL);
    if (v->off & WF_CMD_EXTERNAL) {
        void *q;
        memcpy(&q, p, sizeof q);
        return q;
    }
    return p;
}

/* The custom part of a CUSTOM record and its payload. */
static inline wf_cmd_custom *wf_cmd_custom_of(wf_cmd *c)
{
    return (wf_cmd_custom *)(void *)(c + 1);
}
static inline void *wf_cmd_payload(wf_cmd *c)
{
    uintptr_t p = (uintptr_t)((uint8_t *)(c + 1) + sizeof(wf_cmd_custom));
    return (void *)((p + 15u) & ~(uintptr_t)15u); /* 16-byte aligned */
}
/* Releases what a record owns (values, custom payload via drop) and marks
 * it done. */
void wf_cmd_release(weft_commands *b, wf_cmd *c);
/* Empties the buffer after an apply: chunks go to the spare list. Every
 * record must be done. */
void wf_cmds_reset(weft_commands *b);
/* The real id of provisional handle e of b's last applied round with
 * spawns; 0 when e is of another buffer or round, or its spawn failed. */
weft_entity wf_cmds_resolved(const weft_commands *b, weft_entity e);

/* Room for `bytes` (a multiple of 8) at the tail; NULL on OOM. */
uint8_t *wf_cmds_room_slow(weft_commands *b, size_t bytes);

/* Bytes of a record without values (despawn, remove, flush). */
#define WF_CMD_PLAIN_BYTES ((sizeof(wf_cmd) + 7u) & ~(size_t)7u)

/* Makes sure `records` more records of at most `rec_bytes` bytes each (a
 * multiple of 8, at most WF_CMD_CHUNK_SIZE) can be appended without
 * allocating, adding spare chunks as needed; false on OOM (the chunks
 * added so far stay as spares: benign). A caller that must not fail
 * halfway reserves first, then records. */
bool wf_cmds_reserve(weft_commands *b, uint64_t records, size_t rec_bytes);

static inline wf_cmd *wf_cmds_push_small(weft_commands *b, wf_cmd_op op, uint8_t flags,
                                         weft_entity e, weft_component c,
                                         const wf_type_info *ti, const void *value)
{
    /* header [+ one entry + the value, 8-aligned; align <= 8 only] */
    uint32_t vsize = ti ? (ti->size + 7u) & ~7u : 0u;
    uint32_t bytes = (uint32_t)sizeof(wf_cmd) + (ti ? (uint32_t)sizeof(wf_cmd_value) : 0u) +
                     vsize;
    wf_cmd_chunk *t = b->tail;
    uint8_t *base;
    if (t && t->cap - t->used >= bytes) {
        base = t->data + t->used;
    } else {
        base = wf_cmds_room_slow(b, bytes);
        if (!base) {
            return NULL;
        }
        t = b->tail;
    }
    wf_cmd *cmd = (wf_cmd *)(void *)base;
    cmd->op = (uint8_t)op;
    cmd->flags = (uint8_t)(flags | WF_CMD_PLAIN);
    cmd->gen = (uint16_t)b->gen;
    cmd->size = bytes;
    cmd->e = e;
    cmd->c = c;
    cmd->count = ti ? 1 : 0;
    if (ti) {
        wf_cmd_value *v = wf_cmd_values(cmd);
        v->id = ti->id;
        v->off = 0;
        if (ti->size) {
            uint8_t *dst = (uint8_t *)(v + 1);
            if (value) {
                wf_value_copy(dst, value, ti->size);
            } else {
                memset(dst, 0, ti->size);
            }
            v->off = (uint32_t)(dst - base);
        }
    }
    t->used += bytes;
    b->count++;
    return cmd;
}

#endif

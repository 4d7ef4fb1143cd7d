/* src/command/command_buffer.h - dense command byte queue.
 * SPDX-License-Identifier: MIT
 *
 * A command buffer is a list of chunks (64 KiB, or larger for one big
 * record) holding records back to back, each 16-byte aligned: a header,
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

#include "storage/component_registry.h"

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

typedef struct wf_cmd_value {
    weft_component id;
    uint32_t external;     /* 1: ptr is its own allocation */
    void *ptr;             /* constructed value, or NULL (default / tag) */
} wf_cmd_value;

typedef struct wf_cmd {
    uint16_t op;           /* wf_cmd_op */
    uint16_t flags;        /* WF_CMD_* */
    uint32_t size;         /* bytes of this record, a multiple of 16 */
    weft_entity e;
    weft_component c;      /* REMOVE / RES_REMOVE */
    int32_t count;         /* value entries that follow the header */
    uint32_t gen;          /* cascade generation (world buffer) */
    uint32_t pad;
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

struct weft_commands {
    weft_world *world;     /* owner */
    wf_allocator *alloc;
    wf_registry *registry;
    wf_cmd_chunk *head;    /* chunks in use, in order */
    wf_cmd_chunk *tail;
    wf_cmd_chunk *spare;   /* emptied chunks kept for reuse */
    int32_t count;         /* unapplied records */
    uint32_t gen;          /* generation stamped on new records */
    bool applying;
    struct weft_commands *next; /* world's list */
    struct weft_commands *prev;
};

void wf_cmds_init(weft_commands *b, weft_world *w, wf_allocator *a, wf_registry *reg);
/* Discards every record (values destroyed, drops called) and frees all
 * chunks. */
void wf_cmds_fini(weft_commands *b);
/* Appends a record with `count` values copied in (validated by the
 * caller). Returns it, or NULL on OOM (nothing recorded). */
wf_cmd *wf_cmds_push(weft_commands *b, wf_cmd_op op, uint16_t flags, weft_entity e,
                     weft_component c, const weft_value *values, int32_t count);
/* Appends a custom command; NULL on OOM. */
wf_cmd *wf_cmds_push_custom(weft_commands *b, weft_command_fn fn, const void *payload,
                            size_t size, weft_command_drop_fn drop, void *user);
/* The value table of a record. */
static inline wf_cmd_value *wf_cmd_values(wf_cmd *c)
{
    return (wf_cmd_value *)(void *)(c + 1);
}
/* The custom part of a CUSTOM record and its payload. */
static inline wf_cmd_custom *wf_cmd_custom_of(wf_cmd *c)
{
    return (wf_cmd_custom *)(void *)(c + 1);
}
static inline void *wf_cmd_payload(wf_cmd *c)
{
    return (uint8_t *)(c + 1) + ((sizeof(wf_cmd_custom) + 15u) & ~(size_t)15u);
}
/* Releases what a record owns (values, custom payload via drop) and marks
 * it done. */
void wf_cmd_release(weft_commands *b, wf_cmd *c);
/* Empties the buffer after an apply: chunks go to the spare list. Every
 * record must be done. */
void wf_cmds_reset(weft_commands *b);

#endif

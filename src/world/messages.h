/* src/world/messages.h - double-buffered message streams and removal tracking.
 * SPDX-License-Identifier: MIT
 *
 * A stream is a sequence of fixed-size records with ids 1, 2, 3, ... in
 * write order, held in two buffers: `a` (written before the last update)
 * and `b` (written since). Invariants, for every stream:
 *   - a.first + a.count == b.first, and next id == b.first + b.count;
 *   - the retained ids are exactly [a.first, b.first + b.count);
 *   - ids never repeat and never go backwards, so a reader's cursor is just
 *     the id of the next record it wants; a cursor below a.first has missed
 *     (a.first - cursor) records, and cursor 0 means "new reader" (it starts
 *     at a.first without counting anything as missed).
 * An update drops a's records (the type's drop callback per message), then
 * swaps: a takes b's block, b takes a's old block with count 0, so the steady
 * state allocates nothing. A record therefore lives through the update after
 * its write and dies at the second one.
 *
 * Two kinds of stream share this machinery: message types (registered by
 * name, ids 1..n) and removed-component streams (one per tracked component,
 * records are weft_entity, found in O(1) through wf_type_info.removed_stream).
 * The whole state hangs off weft_world.messages, allocated on first use; all
 * memory goes through the world allocator.
 */
#ifndef WF_MESSAGES_H
#define WF_MESSAGES_H

#include "world/world.h"

/* One buffer of a stream: `count` records of the stream's stride. */
typedef struct wf_msg_buf {
    unsigned char *data; /* cap * stride bytes, or NULL */
    uint32_t count;
    uint32_t cap;
    uint64_t first;      /* id of data[0] */
} wf_msg_buf;

typedef struct wf_msg_stream {
    char *name;          /* owned copy (message types); NULL for removed */
    size_t name_len;
    size_t size;         /* bytes per record, a multiple of align */
    size_t align;
    void (*drop)(void *msg, void *user);
    void *user;
    weft_component component; /* removed streams: the tracked component */
    wf_msg_buf a;        /* older: written before the last update */
    wf_msg_buf b;        /* newer: written since the last update */
} wf_msg_stream;

struct wf_messages {
    wf_msg_stream **types;   /* [type - 1], individually allocated */
    uint32_t type_count;
    uint32_t type_cap;
    wf_msg_stream **removed; /* [wf_type_info.removed_stream - 1] */
    uint32_t removed_count;
    uint32_t removed_cap;
};

/* The world's message state, allocating it on first use (NULL: out of
 * memory, nothing recorded). */
wf_messages *wf_messages_get(weft_world *w);
/* Drops every retained message (oldest first) and frees everything. */
void wf_messages_fini(weft_world *w);

/* Stream of message type `type`, or NULL when not registered. */
wf_msg_stream *wf_messages_type(const weft_world *w, weft_message_type type);
/* The stream of message type `type` of `size` bytes, or NULL with
 * NOT_FOUND or SIZE_MISMATCH recorded naming fn. */
wf_msg_stream *wf_message_stream(const weft_world *w, weft_message_type type, size_t size,
                                 const char *fn);
/* Id of the message type registered under `name`, or 0. */
weft_message_type wf_messages_lookup(const weft_world *w, const char *name);
/* Registers a validated type. Returns its id, or 0 when out of memory
 * (world unchanged). */
weft_message_type wf_messages_register(weft_world *w, const char *name, size_t size,
                                       size_t align, void (*drop)(void *, void *),
                                       void *user);
/* Unregisters the newest message type: its buffered messages are dropped
 * (the type's drop runs) and its stream freed; its id is free again. For
 * undoing a failed module build, which must be the last to register. */
void wf_messages_pop(weft_world *w);

/* Appends a copy of `rec` (stream->size bytes) to b. False when out of
 * memory (stream unchanged). */
bool wf_stream_write(wf_allocator *a, wf_msg_stream *s, const void *rec);
/* Next unread record for `cursor` (advancing it and adding any expired gap
 * to cursor->missed), or NULL when up to date. */
const void *wf_stream_read(const wf_msg_stream *s, weft_message_cursor *cursor);
/* Records not yet read through `cursor` (no side effects). */
int64_t wf_stream_unread(const wf_msg_stream *s, const weft_message_cursor *cursor);

/* Drops a's records and swaps the buffers of every stream. Never fails. */
void wf_messages_update(weft_world *w);
/* Empties every message queue and removal stream (drop callbacks run);
 * ids go on from where they were. Blocks stay. */
void wf_messages_clear(weft_world *w);

/* Turns on removal tracking for registered component c (idempotent).
 * WEFT_OK or WEFT_ERR_OUT_OF_MEMORY (nothing recorded, world unchanged). */
weft_status wf_removed_track(weft_world *w, wf_type_info *ti);
/* Removed stream of a tracked component, or NULL. */
wf_msg_stream *wf_removed_stream(const weft_world *w, const wf_type_info *ti);
/* Appends e to the removed stream of component c when c is tracked (call
 * it whenever e loses c by remove or despawn; callers test
 * `ti->removed_stream` first to skip the call). Out of memory loses the
 * record and is reported in the error slot; the removal itself stands. */
void wf_removed_push(weft_world *w, weft_component c, weft_entity e);

#endif

/* src/api/api_message.c - messages and removed-component tracking.
 * SPDX-License-Identifier: MIT
 *
 * Thin entry points over world/messages.h: armor (world magic, descriptor
 * canaries, ids, sizes), then one call. Message types and removed streams
 * are double-buffered streams with ids from 1; a cursor holds the next id it
 * wants (0 = new reader), so any number of readers read independently and a
 * reader that falls more than two updates behind learns how many records
 * expired unseen (cursor.missed).
 */
#include "internal.h"

#include "module/module.h"
#include "world/messages.h"

WEFT_API weft_message_type weft_message_register(weft_world *world,
                                                 const weft_message_desc *desc)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    if (!desc) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_message_register: desc is NULL");
        return 0;
    }
    if (desc->_start_canary || desc->_end_canary) {
        wf_error(world, WEFT_ERR_INVALID_ARG,
                 "weft_message_register: descriptor canary is not 0 (was the desc "
                 "zero-initialised?)");
        return 0;
    }
    if (!desc->name || !desc->name[0]) {
        wf_error(world, WEFT_ERR_INVALID_ARG,
                 "weft_message_register: a message type needs a non-empty name");
        return 0;
    }
    const char *name = desc->name;
    if (desc->size == 0 || desc->size > WF_MAX_COMPONENT_SIZE) {
        wf_error(world, WEFT_ERR_INVALID_ARG,
                 "message type '%s': size %zu is not in 1..%u bytes", name, desc->size,
                 WF_MAX_COMPONENT_SIZE);
        return 0;
    }
    size_t align = desc->align ? desc->align : wf_default_align(desc->size);
    if ((align & (align - 1)) != 0 || align > WF_MAX_ALIGN) {
        wf_error(world, WEFT_ERR_BAD_ALIGNMENT,
                 "message type '%s': alignment %zu is not a power of two up to %u", name,
                 align, WF_MAX_ALIGN);
        return 0;
    }
    if (desc->size % align != 0) {
        wf_error(world, WEFT_ERR_BAD_ALIGNMENT,
                 "message type '%s': size %zu is not a multiple of its alignment %zu",
                 name, desc->size, align);
        return 0;
    }
    weft_message_type dup = wf_messages_lookup(world, name);
    if (dup && world->module_build) {
        /* a module's build registering its type again (every reload) */
        weft_message_type again = 0;
        weft_status st = wf_module_message_again(world, dup, desc->size, align, &again);
        if (st == WEFT_OK) {
            return again;
        }
        if (st != WEFT_ERR_NOT_FOUND) {
            return 0;
        }
    }
    if (dup) {
        wf_error(world, WEFT_ERR_ALREADY_EXISTS,
                 "message type '%s' is already registered (id %u)", name, dup);
        return 0;
    }
    if (world->module_build && !wf_module_message_reserve(world)) {
        return 0;
    }
    weft_message_type t =
        wf_messages_register(world, name, desc->size, align, desc->drop, desc->user);
    if (!t) {
        wf_error(world, WEFT_ERR_OUT_OF_MEMORY,
                 "out of memory registering message type '%s'", name);
    } else if (world->module_build) {
        wf_module_message_added(world, t);
    }
    return t;
}

WEFT_API weft_message_type weft_message_lookup(const weft_world *world, const char *name)
{
    if (!wf_world_ok(world)) {
        return 0;
    }
    if (!name) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_message_lookup: name is NULL");
        return 0;
    }
    return wf_messages_lookup(world, name);
}

WEFT_API weft_status weft_message_write(weft_world *world, weft_message_type type,
                                        const void *msg, size_t size)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (world->read_only && wf_world_refuse_shared(world, "weft_message_write")) {
        return WEFT_ERR_WRONG_PHASE; /* a sub-app extracts from this world */
    }
    wf_msg_stream *s = wf_message_stream(world, type, size, "weft_message_write");
    if (!s) {
        return world->last_status;
    }
    if (!msg) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_message_write: message of type '%s' is NULL", s->name);
    }
    if (!wf_stream_write(&world->alloc, s, msg)) {
        return wf_error(world, WEFT_ERR_OUT_OF_MEMORY,
                        "out of memory writing a message of type '%s'", s->name);
    }
    return WEFT_OK;
}

WEFT_API const void *weft_message_read(weft_world *world, weft_message_type type,
                                       weft_message_cursor *cursor, size_t size)
{
    if (!wf_world_ok(world)) {
        return NULL;
    }
    if (!cursor) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_message_read: cursor is NULL");
        return NULL;
    }
    const wf_msg_stream *s = wf_message_stream(world, type, size, "weft_message_read");
    return s ? wf_stream_read(s, cursor) : NULL;
}

WEFT_API int64_t weft_message_unread(const weft_world *world, weft_message_type type,
                                     const weft_message_cursor *cursor)
{
    if (!wf_world_ok(world)) {
        return -1;
    }
    if (!cursor) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_message_unread: cursor is NULL");
        return -1;
    }
    const wf_msg_stream *s = wf_messages_type(world, type);
    if (!s) {
        wf_error(world, WEFT_ERR_NOT_FOUND,
                 "weft_message_unread: message type %u is not registered in this world",
                 type);
        return -1;
    }
    return wf_stream_unread(s, cursor);
}

WEFT_API void weft_messages_update(weft_world *world)
{
    if (wf_world_ok(world)) {
        wf_messages_update(world);
    }
}

static wf_type_info *removed_info(weft_world *w, weft_component c, const char *fn)
{
    wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (!ti) {
        wf_error(w, WEFT_ERR_UNKNOWN_COMPONENT,
                 "%s: component id %u is not registered in this world", fn, c);
        return NULL;
    }
    if (wf_removed_track(w, ti) != WEFT_OK) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY,
                 "%s: out of memory starting removal tracking of '%s'", fn, ti->name);
        return NULL;
    }
    return ti;
}

WEFT_API weft_status weft_removed_track(weft_world *world, weft_component c)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return removed_info(world, c, "weft_removed_track") ? WEFT_OK : world->last_status;
}

WEFT_API weft_entity weft_removed_read(weft_world *world, weft_component c,
                                       weft_message_cursor *cursor)
{
    if (!wf_world_ok(world)) {
        return WEFT_ENTITY_NONE;
    }
    if (!cursor) {
        wf_error(world, WEFT_ERR_INVALID_ARG, "weft_removed_read: cursor is NULL");
        return WEFT_ENTITY_NONE;
    }
    const wf_type_info *ti = removed_info(world, c, "weft_removed_read");
    if (!ti) {
        return WEFT_ENTITY_NONE;
    }
    const weft_entity *e = wf_stream_read(wf_removed_stream(world, ti), cursor);
    return e ? *e : WEFT_ENTITY_NONE;
}

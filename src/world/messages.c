/* src/world/messages.c - double-buffered message streams and removal tracking.
 * SPDX-License-Identifier: MIT
 *
 * See messages.h for the stream invariants (contiguous ids across the two
 * buffers, cursor = next id, 0 = new reader). Buffers grow by doubling with
 * allocate-copy-free, so a failed growth leaves the stream as it was; an
 * update only swaps blocks and never allocates. Name lookup is a linear
 * scan: message types are few and registered once.
 */
#include "world/messages.h"
#include "core/guard.h"

#include <string.h>

#include "storage/component_registry.h"

#define WF_MSG_MIN_CAP 16u
#define WF_REMOVED_INITIAL_CAP 64u

wf_messages *wf_messages_get(weft_world *w)
{
    if (!w->messages) {
        w->messages = wf_calloc(&w->alloc, sizeof *w->messages, _Alignof(wf_messages));
    }
    return w->messages;
}

/* ---- streams ---- */

static void stream_buf_init(wf_msg_buf *b)
{
    b->data = NULL;
    b->count = 0;
    b->cap = 0;
    b->first = 1;
}

static void stream_drop_buf(wf_msg_stream *s, wf_msg_buf *b)
{
    if (s->drop) {
        for (uint32_t i = 0; i < b->count; i++) {
            WF_CALLBACK(WF_GUARD_ANY, s->drop(b->data + (size_t)i * s->size, s->user));
        }
    }
}

static void stream_free(wf_allocator *a, wf_msg_stream *s)
{
    wf_free(a, s->a.data, (size_t)s->a.cap * s->size, s->align);
    wf_free(a, s->b.data, (size_t)s->b.cap * s->size, s->align);
    wf_free(a, s->name, s->name_len + 1, 1);
    wf_free(a, s, sizeof *s, _Alignof(wf_msg_stream));
}

static wf_msg_stream *stream_create(wf_allocator *a, size_t size, size_t align)
{
    wf_msg_stream *s = wf_calloc(a, sizeof *s, _Alignof(wf_msg_stream));
    if (s) {
        s->size = size;
        s->align = align;
        stream_buf_init(&s->a);
        stream_buf_init(&s->b);
    }
    return s;
}

/* Makes room for at least `want` records in b (want > b.cap). */
static bool stream_grow(wf_allocator *a, wf_msg_stream *s, uint32_t want)
{
    uint32_t cap = wf_grow_cap(s->b.cap, want, WF_MSG_MIN_CAP, UINT32_MAX, s->size);
    if (cap == 0) {
        return false;
    }
    unsigned char *data = wf_alloc(a, (size_t)cap * s->size, s->align);
    if (!data) {
        return false;
    }
    if (s->b.count) {
        memcpy(data, s->b.data, (size_t)s->b.count * s->size);
    }
    wf_free(a, s->b.data, (size_t)s->b.cap * s->size, s->align);
    s->b.data = data;
    s->b.cap = cap;
    return true;
}

bool wf_stream_write(wf_allocator *a, wf_msg_stream *s, const void *rec)
{
    if (s->b.count == s->b.cap) {
        if (s->b.count == UINT32_MAX || !stream_grow(a, s, s->b.count + 1)) {
            return false;
        }
    }
    memcpy(s->b.data + (size_t)s->b.count * s->size, rec, s->size);
    s->b.count++;
    return true;
}

/* Oldest retained id and one past the newest. */
static uint64_t stream_oldest(const wf_msg_stream *s)
{
    return s->a.first;
}

static uint64_t stream_end(const wf_msg_stream *s)
{
    return s->b.first + s->b.count;
}

const void *wf_stream_read(const wf_msg_stream *s, weft_message_cursor *cursor)
{
    uint64_t oldest = stream_oldest(s);
    if (cursor->next == 0) {
        cursor->next = oldest; /* new reader: everything retained is unread */
    } else if (cursor->next < oldest) {
        cursor->missed += oldest - cursor->next;
        cursor->next = oldest;
    }
    uint64_t id = cursor->next;
    if (id >= stream_end(s)) {
        return NULL;
    }
    cursor->next = id + 1;
    if (id < s->b.first) {
        return s->a.data + (size_t)(id - s->a.first) * s->size;
    }
    return s->b.data + (size_t)(id - s->b.first) * s->size;
}

int64_t wf_stream_unread(const wf_msg_stream *s, const weft_message_cursor *cursor)
{
    uint64_t from = cursor->next < stream_oldest(s) ? stream_oldest(s) : cursor->next;
    uint64_t end = stream_end(s);
    return from < end ? (int64_t)(end - from) : 0;
}

/* Drops a, then a := b and b := a's old block, emptied. The drop callbacks
 * run before any pointer of the stream changes, so a callback that writes
 * to this very type appends to b, which then ages normally. */
static void stream_update(wf_msg_stream *s)
{
    stream_drop_buf(s, &s->a);
    wf_msg_buf old = s->a;
    s->a = s->b;
    s->b.data = old.data;
    s->b.cap = old.cap;
    s->b.count = 0;
    s->b.first = s->a.first + s->a.count;
}

/* Appends a stream pointer to a growable array. */
static bool stream_list_push(wf_allocator *a, wf_msg_stream ***list, uint32_t *count,
                             uint32_t *cap, wf_msg_stream *s)
{
    if (*count == *cap && !wf_grow(a, (void **)list, cap, (uint64_t)*count + 1, sizeof **list,
                                   _Alignof(wf_msg_stream *))) {
        return false;
    }
    (*list)[(*count)++] = s;
    return true;
}

/* ---- message types ---- */

wf_msg_stream *wf_messages_type(const weft_world *w, weft_message_type type)
{
    const wf_messages *m = w->messages;
    if (!m || type - 1u >= m->type_count) {
        return NULL;
    }
    return m->types[type - 1u];
}

weft_message_type wf_messages_lookup(const weft_world *w, const char *name)
{
    const wf_messages *m = w->messages;
    if (!m) {
        return 0;
    }
    size_t len = strlen(name);
    for (uint32_t i = 0; i < m->type_count; i++) {
        const wf_msg_stream *s = m->types[i];
        if (s->name_len == len && memcmp(s->name, name, len) == 0) {
            return i + 1u;
        }
    }
    return 0;
}

weft_message_type wf_messages_register(weft_world *w, const char *name, size_t size,
                                       size_t align, void (*drop)(void *, void *),
                                       void *user)
{
    bool fresh = w->messages == NULL;
    wf_messages *m = wf_messages_get(w);
    if (!m) {
        return 0;
    }
    wf_msg_stream *s = stream_create(&w->alloc, size, align);
    if (s) {
        s->name = wf_strdup(&w->alloc, name, &s->name_len);
    }
    if (!s || !s->name ||
        !stream_list_push(&w->alloc, &m->types, &m->type_count, &m->type_cap, s)) {
        if (s) {
            stream_free(&w->alloc, s);
        }
        if (fresh) {
            /* Back to "no message state" so the world is exactly as before. */
            wf_free(&w->alloc, m, sizeof *m, _Alignof(wf_messages));
            w->messages = NULL;
        }
        return 0;
    }
    s->drop = drop;
    s->user = user;
    return m->type_count;
}

void wf_messages_pop(weft_world *w)
{
    wf_messages *m = w->messages;
    if (!m || m->type_count == 0) {
        return;
    }
    wf_msg_stream *s = m->types[--m->type_count];
    stream_drop_buf(s, &s->a);
    stream_drop_buf(s, &s->b);
    stream_free(&w->alloc, s);
}

/* ---- removed-component streams ---- */

wf_msg_stream *wf_removed_stream(const weft_world *w, const wf_type_info *ti)
{
    if (!ti->removed_stream) {
        return NULL;
    }
    return w->messages->removed[ti->removed_stream - 1u];
}

weft_status wf_removed_track(weft_world *w, wf_type_info *ti)
{
    if (ti->removed_stream) {
        return WEFT_OK;
    }
    bool fresh = w->messages == NULL;
    wf_messages *m = wf_messages_get(w);
    if (!m) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    wf_msg_stream *s = stream_create(&w->alloc, sizeof(weft_entity), _Alignof(weft_entity));
    /* Room up front so removals rarely allocate: after the first update the
     * two blocks are recycled. */
    if (!s || !stream_grow(&w->alloc, s, WF_REMOVED_INITIAL_CAP) ||
        !stream_list_push(&w->alloc, &m->removed, &m->removed_count, &m->removed_cap, s)) {
        if (s) {
            stream_free(&w->alloc, s);
        }
        if (fresh) {
            wf_free(&w->alloc, m, sizeof *m, _Alignof(wf_messages));
            w->messages = NULL;
        }
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    s->component = ti->id;
    ti->removed_stream = m->removed_count;
    return WEFT_OK;
}

void wf_removed_push(weft_world *w, weft_component c, weft_entity e)
{
    const wf_type_info *ti = wf_registry_get(&w->registry, c);
    if (!ti || !ti->removed_stream) {
        return;
    }
    wf_msg_stream *s = wf_removed_stream(w, ti);
    if (!wf_stream_write(&w->alloc, s, &e)) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY,
                 "out of memory recording that entity %u:%u lost '%s' (removed-"
                 "component readers will not see it)",
                 (uint32_t)e, (uint32_t)(e >> 32), ti->name);
    }
}

/* ---- world-wide ---- */

void wf_messages_update(weft_world *w)
{
    wf_messages *m = w->messages;
    if (!m) {
        return;
    }
    /* Re-read the counts each step: a drop callback may register a type. */
    w->busy++;
    for (uint32_t i = 0; i < m->type_count; i++) {
        stream_update(m->types[i]);
    }
    for (uint32_t i = 0; i < m->removed_count; i++) {
        stream_update(m->removed[i]);
    }
    w->busy--;
}

static void stream_clear(wf_msg_stream *s)
{
    stream_drop_buf(s, &s->a);
    stream_drop_buf(s, &s->b);
    uint64_t next = s->b.first + s->b.count; /* the id the next message gets */
    s->a.count = 0;
    s->b.count = 0;
    s->a.first = next;
    s->b.first = next;
}

void wf_messages_clear(weft_world *w)
{
    wf_messages *m = w->messages;
    if (!m) {
        return;
    }
    w->busy++; /* drop callbacks cannot change the world under the loop */
    for (uint32_t i = 0; i < m->type_count; i++) {
        stream_clear(m->types[i]);
    }
    for (uint32_t i = 0; i < m->removed_count; i++) {
        stream_clear(m->removed[i]);
    }
    w->busy--;
}

void wf_messages_fini(weft_world *w)
{
    wf_messages *m = w->messages;
    if (!m) {
        return;
    }
    for (uint32_t i = 0; i < m->type_count; i++) {
        wf_msg_stream *s = m->types[i];
        stream_drop_buf(s, &s->a);
        stream_drop_buf(s, &s->b);
        stream_free(&w->alloc, s);
    }
    for (uint32_t i = 0; i < m->removed_count; i++) {
        stream_free(&w->alloc, m->removed[i]);
    }
    wf_free(&w->alloc, m->types, m->type_cap * sizeof *m->types,
            _Alignof(wf_msg_stream *));
    wf_free(&w->alloc, m->removed, m->removed_cap * sizeof *m->removed,
            _Alignof(wf_msg_stream *));
    wf_free(&w->alloc, m, sizeof *m, _Alignof(wf_messages));
    w->messages = NULL;
}

wf_msg_stream *wf_message_stream(const weft_world *w, weft_message_type type, size_t size,
                                 const char *fn)
{
    wf_msg_stream *s = wf_messages_type(w, type);
    if (!s) {
        wf_error(w, WEFT_ERR_NOT_FOUND, "%s: message type %u is not registered in this "
                 "world", fn, type);
        return NULL;
    }
    if (size != s->size) {
        wf_error(w, WEFT_ERR_SIZE_MISMATCH,
                 "%s: message type '%s' has size %zu but %zu bytes were passed", fn,
                 s->name, s->size, size);
        return NULL;
    }
    return s;
}

/* src/command/command_buffer.c - recording, releasing and recycling records.
 * SPDX-License-Identifier: MIT
 */
#include "command/command_buffer.h"
#include "core/guard.h"

#include <string.h>

#include "core/atomic.h"

/* Round tags, process-wide so that a provisional handle of one buffer (or
 * world) is never taken for another's: 2^31 rounds pass before a tag comes
 * back. Only uniqueness matters, so the order in which threads take them
 * is irrelevant (tags never reach world state: a spawn's real id comes from
 * the apply, in record order). */
static wf_atomic_u32 cmds_tags;

static uint32_t cmds_next_tag(void)
{
    return WF_CMD_PROV_BIT | (wf_atomic_fetch_add_relaxed_u32(&cmds_tags, 1) & ~WF_CMD_PROV_BIT);
}

void wf_cmds_init(weft_commands *b, weft_world *w, wf_allocator *a, wf_registry *reg)
{
    memset(b, 0, sizeof *b);
    b->magic = WF_CMDS_MAGIC;
    b->world = w;
    b->alloc = a;
    b->registry = reg;
    b->prov_tag = cmds_next_tag();
}

static size_t cmds_chunk_bytes(const wf_cmd_chunk *k)
{
    return sizeof *k + k->cap;
}

static void cmds_free_list(weft_commands *b, wf_cmd_chunk *k)
{
    while (k) {
        wf_cmd_chunk *next = k->next;
        wf_free(b->alloc, k, cmds_chunk_bytes(k), 64);
        k = next;
    }
}

void wf_cmds_fini(weft_commands *b)
{
    for (wf_cmd_chunk *k = b->head; k; k = k->next) {
        for (uint32_t off = 0; off < k->used;) {
            wf_cmd *c = (wf_cmd *)(void *)(k->data + off);
            off += c->size;
            wf_cmd_release(b, c);
        }
    }
    cmds_free_list(b, b->head);
    cmds_free_list(b, b->spare);
    b->head = b->tail = b->spare = NULL;
    b->count = 0;
    if (b->prov_map) {
        wf_free(b->alloc, b->prov_map, (size_t)b->prov_cap * sizeof *b->prov_map,
                _Alignof(weft_entity));
    }
    if (b->prev_map) {
        wf_free(b->alloc, b->prev_map, (size_t)b->prev_cap * sizeof *b->prev_map,
                _Alignof(weft_entity));
    }
    b->prov_map = b->prev_map = NULL;
    b->prov_cap = b->prov_count = b->prev_cap = b->prev_count = 0;
    b->magic = 0;
}

static size_t cmds_align(size_t x, size_t a)
{
    return (x + a - 1) & ~(a - 1);
}

uint8_t *wf_cmds_room_slow(weft_commands *b, size_t bytes)
{
    wf_cmd_chunk *t = b->tail;
    if (t && t->cap - t->used >= bytes) {
        return t->data + t->used;
    }
    wf_cmd_chunk *k = NULL;
    if (b->spare && b->spare->cap >= bytes) {
        k = b->spare;
        b->spare = k->next;
    } else {
        size_t cap = bytes > WF_CMD_CHUNK_SIZE ? bytes : WF_CMD_CHUNK_SIZE;
        if (cap > UINT32_MAX - 64u) {
            return NULL;
        }
        k = wf_alloc(b->alloc, sizeof *k + cap, 64);
        if (!k) {
            return NULL;
        }
        k->cap = (uint32_t)cap;
    }
    k->next = NULL;
    k->used = 0;
    if (t) {
        t->next = k;
    } else {
        b->head = k;
    }
    b->tail = k;
    return k->data;
}

bool wf_cmds_reserve(weft_commands *b, uint64_t records, size_t rec_bytes)
{
    /* room_slow moves to the next chunk when a record does not fit the
     * tail, so each chunk holds floor(free / rec_bytes) such records */
    uint64_t fit = b->tail ? (b->tail->cap - b->tail->used) / rec_bytes : 0;
    for (wf_cmd_chunk *k = b->spare; k && fit < records; k = k->next) {
        fit += k->cap / rec_bytes;
    }
    while (fit < records) {
        wf_cmd_chunk *k = wf_alloc(b->alloc, sizeof *k + WF_CMD_CHUNK_SIZE, 64);
        if (!k) {
            return false;
        }
        k->cap = WF_CMD_CHUNK_SIZE;
        k->used = 0;
        k->next = b->spare;
        b->spare = k;
        fit += k->cap / rec_bytes;
    }
    return true;
}

static void cmds_drop_values(weft_commands *b, wf_cmd *cmd, int32_t n)
{
    wf_cmd_value *vals = wf_cmd_values(cmd);
    for (int32_t j = 0; j < n; j++) {
        void *p = wf_cmd_value_ptr(cmd, &vals[j]);
        if (!p) {
            continue;
        }
        const wf_type_info *tj = wf_registry_get(b->registry, vals[j].id);
        wf_type_destroy(tj, p, 1);
        if (vals[j].off & WF_CMD_EXTERNAL) {
            wf_free(b->alloc, p, tj->size, tj->align);
        }
        vals[j].off = 0;
    }
}

wf_cmd *wf_cmds_push(weft_commands *b, wf_cmd_op op, uint8_t flags, weft_entity e,
                     weft_component c, const weft_value *values, int32_t count)
{
    /* Upper bound first (worst-case alignment padding), exact layout once
     * the record's address is known. Values aligned beyond 64 bytes get
     * their own allocation, whose pointer sits in the record. */
    size_t head = sizeof(wf_cmd) + (size_t)count * sizeof(wf_cmd_value);
    size_t need = head;
    for (int32_t i = 0; i < count; i++) {
        const wf_type_info *ti = wf_registry_get(b->registry, values[i].id);
        if (ti->size) {
            need += ti->align <= 64 ? ti->size + ti->align - 1 : sizeof(void *) + 7u;
        }
    }
    need = cmds_align(need, 8);
    if (need > UINT32_MAX / 2u) {
        return NULL;
    }
    uint8_t *base = wf_cmds_room_slow(b, need);
    if (!base) {
        return NULL;
    }
    wf_cmd *cmd = (wf_cmd *)(void *)base;
    cmd->op = (uint8_t)op;
    cmd->flags = flags;
    cmd->gen = (uint16_t)b->gen;
    cmd->size = 0;
    cmd->e = e;
    cmd->c = c;
    cmd->count = count;
    wf_cmd_value *vals = wf_cmd_values(cmd);
    uintptr_t at = (uintptr_t)base + head;
    bool plain = true;
    for (int32_t i = 0; i < count; i++) {
        const wf_type_info *ti = wf_registry_get(b->registry, values[i].id);
        vals[i].id = values[i].id;
        vals[i].off = 0;
        if (!ti->size) {
            continue;
        }
        plain &= ti->hooks.dtor == NULL && ti->align <= 64;
        if (ti->align <= 64) {
            at = (at + ti->align - 1) & ~(uintptr_t)(ti->align - 1);
            void *dst = (void *)at;
            if (ti->trivial && values[i].ptr) {
                wf_value_copy(dst, values[i].ptr, ti->size);
            } else {
                wf_type_construct(ti, dst, values[i].ptr, 1);
            }
            vals[i].off = (uint32_t)(at - (uintptr_t)base);
            at += ti->size;
            continue;
        }
        void *dst = wf_alloc(b->alloc, ti->size, ti->align);
        if (!dst) {
            cmds_drop_values(b, cmd, i);
            return NULL;
        }
        wf_type_construct(ti, dst, values[i].ptr, 1);
        at = (at + 7u) & ~(uintptr_t)7u;
        memcpy((void *)at, &dst, sizeof dst);
        vals[i].off = (uint32_t)(at - (uintptr_t)base) | WF_CMD_EXTERNAL;
        at += sizeof dst;
    }
    size_t bytes = cmds_align((size_t)(at - (uintptr_t)base), 8);
    cmd->size = (uint32_t)bytes;
    if (plain) {
        cmd->flags |= WF_CMD_PLAIN;
    }
    b->tail->used += (uint32_t)bytes;
    b->count++;
    return cmd;
}

wf_cmd *wf_cmds_push_custom(weft_commands *b, weft_command_fn fn, const void *payload,
                            size_t size, weft_command_drop_fn drop, void *user)
{
    /* header, custom part, up to 8 bytes to 16-align the payload, payload;
     * the size is bounded first so that the sum cannot wrap */
    if (size > WF_CMD_PAYLOAD_MAX) {
        return NULL;
    }
    size_t need = cmds_align(sizeof(wf_cmd) + sizeof(wf_cmd_custom) + 8u + size, 8);
    uint8_t *at = wf_cmds_room_slow(b, need);
    if (!at) {
        return NULL;
    }
    wf_cmd *cmd = (wf_cmd *)(void *)at;
    memset(cmd, 0, sizeof *cmd);
    cmd->op = WF_CMD_CUSTOM;
    cmd->gen = (uint16_t)b->gen;
    wf_cmd_custom *cu = wf_cmd_custom_of(cmd);
    cu->fn = fn;
    cu->drop = drop;
    cu->user = user;
    cu->size = size;
    uint8_t *p = wf_cmd_payload(cmd);
    if (size) {
        memcpy(p, payload, size);
    }
    size_t bytes = cmds_align((size_t)(p + size - at), 8);
    cmd->size = (uint32_t)bytes;
    b->tail->used += (uint32_t)bytes;
    b->count++;
    return cmd;
}

void wf_cmd_release(weft_commands *b, wf_cmd *c)
{
    if (c->flags & WF_CMD_DONE) {
        return;
    }
    c->flags |= WF_CMD_DONE;
    if (c->flags & WF_CMD_PLAIN) {
        return;
    }
    if (c->op == WF_CMD_CUSTOM) {
        wf_cmd_custom *cu = wf_cmd_custom_of(c);
        if (cu->drop) {
            WF_CALLBACK(b->world, cu->drop(wf_cmd_payload(c), cu->user));
        }
        return;
    }
    cmds_drop_values(b, c, c->count);
}

void wf_cmds_reset(weft_commands *b)
{
    if (b->tail) {
        b->tail->next = b->spare;
        b->spare = b->head;
    }
    b->head = b->tail = NULL;
    b->count = 0;
    if (b->prov_count) {
        /* the round's map becomes the resolvable one; its handles are now
         * outside their round, so the next round takes a fresh tag */
        weft_entity *m = b->prev_map;
        uint32_t cap = b->prev_cap;
        b->prev_map = b->prov_map;
        b->prev_cap = b->prov_cap;
        b->prev_count = b->prov_count;
        b->prev_tag = b->prov_tag;
        b->prov_map = m;
        b->prov_cap = cap;
        b->prov_count = 0;
        b->prov_tag = cmds_next_tag();
    }
}

weft_entity wf_cmds_resolved(const weft_commands *b, weft_entity e)
{
    uint32_t k = (uint32_t)e;
    if (WF_CMD_PROV_TAG(e) != b->prev_tag || k == 0 || k > b->prev_count) {
        return 0;
    }
    return b->prev_map[k - 1];
}

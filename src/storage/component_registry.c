/* src/storage/component_registry.c - component registration and name index.
 * SPDX-License-Identifier: MIT
 *
 * The name index is a linear-probing table of ids with load factor <= 1/2;
 * it is rebuilt into a new array before an insertion would exceed that, so
 * a failed growth leaves the registry unchanged.
 */
#include "storage/component_registry.h"
#include "core/guard.h"

#include <string.h>

#include "core/config.h"
#include "core/hash.h"

void wf_registry_init(wf_registry *r)
{
    memset(r, 0, sizeof *r);
}

void wf_registry_fini(wf_registry *r, wf_allocator *a)
{
    for (uint32_t id = 1; id <= r->count; id++) {
        wf_type_info *ti = r->infos[id];
        wf_free(a, ti->archs, ti->arch_cap * sizeof *ti->archs, _Alignof(uint32_t));
        wf_free(a, ti->name, ti->name_len + 1, 1);
        wf_free(a, ti, sizeof *ti, _Alignof(wf_type_info));
    }
    wf_free(a, r->infos, r->cap * sizeof(wf_type_info *), _Alignof(wf_type_info *));
    wf_free(a, r->name_slots, r->name_cap * sizeof(uint32_t), _Alignof(uint32_t));
    memset(r, 0, sizeof *r);
}

static uint32_t registry_probe(const wf_registry *r, const char *name, size_t len,
                               uint64_t hash)
{
    uint32_t mask = r->name_cap - 1;
    uint32_t i = (uint32_t)hash & mask;
    for (;;) {
        uint32_t id = r->name_slots[i];
        if (id == 0) {
            return i;
        }
        const wf_type_info *ti = r->infos[id];
        if (ti->name_hash == hash && ti->name_len == len &&
            memcmp(ti->name, name, len) == 0) {
            return i;
        }
        i = (i + 1) & mask;
    }
}

weft_component wf_registry_lookup(const wf_registry *r, const char *name)
{
    if (r->name_cap == 0) {
        return 0;
    }
    size_t len = strlen(name);
    uint64_t hash = wf_hash_bytes(name, len);
    return r->name_slots[registry_probe(r, name, len, hash)];
}

/* Rebuilds the name index with `cap` slots. */
static bool registry_rehash(wf_registry *r, wf_allocator *a, uint32_t cap)
{
    uint32_t *slots = wf_calloc(a, cap * sizeof(uint32_t), _Alignof(uint32_t));
    if (!slots) {
        return false;
    }
    uint32_t *old = r->name_slots;
    uint32_t old_cap = r->name_cap;
    r->name_slots = slots;
    r->name_cap = cap;
    for (uint32_t id = 1; id <= r->count; id++) {
        const wf_type_info *ti = r->infos[id];
        slots[registry_probe(r, ti->name, ti->name_len, ti->name_hash)] = id;
    }
    wf_free(a, old, old_cap * sizeof(uint32_t), _Alignof(uint32_t));
    return true;
}

wf_type_info *wf_registry_add(wf_registry *r, wf_allocator *a,
                              const weft_component_desc *desc, uint32_t size,
                              uint32_t align, weft_storage storage)
{
    /* Callers report the limit (CAPACITY); this is the last line that keeps
     * every id, and so every table's column count, below it. */
    if (r->count >= WF_MAX_COMPONENTS) {
        return NULL;
    }
    /* Grow every container first: after this point nothing can fail. */
    uint32_t id = r->count + 1;
    if (id >= r->cap) {
        uint32_t old = r->cap;
        if (!wf_grow_ex(a, (void **)&r->infos, &r->cap, (uint64_t)id + 1, 16, UINT32_MAX,
                        sizeof *r->infos, _Alignof(wf_type_info *))) {
            return NULL;
        }
        memset(r->infos + old, 0, (size_t)(r->cap - old) * sizeof *r->infos);
    }
    uint64_t name_need = ((uint64_t)r->count + 1) * 2; /* load at most one half */
    if (name_need > r->name_cap) {
        uint32_t cap = wf_grow_cap_pow2(r->name_cap, name_need, 32, sizeof(uint32_t));
        if (cap == 0 || !registry_rehash(r, a, cap)) {
            return NULL;
        }
    }
    wf_type_info *ti = wf_calloc(a, sizeof *ti, _Alignof(wf_type_info));
    if (!ti) {
        return NULL;
    }
    ti->name = wf_strdup(a, desc->name, &ti->name_len);
    if (!ti->name) {
        wf_free(a, ti, sizeof *ti, _Alignof(wf_type_info));
        return NULL;
    }
    ti->id = id;
    ti->size = size;
    ti->align = align;
    ti->flags = desc->flags;
    ti->storage = storage;
    ti->has_ticks = (desc->flags & WEFT_COMPONENT_NO_CHANGE_TICKS) == 0;
    ti->hooks = desc->hooks;
    ti->lifecycle = desc->lifecycle;
    ti->event_mask = (uint8_t)((desc->lifecycle.on_add ? 1u << 0 : 0u) |
                               (desc->lifecycle.on_insert ? 1u << 1 : 0u) |
                               (desc->lifecycle.on_replace ? 1u << 2 : 0u) |
                               (desc->lifecycle.on_remove ? 1u << 3 : 0u) |
                               (desc->lifecycle.on_despawn ? 1u << 4 : 0u));
    ti->trivial = !desc->hooks.ctor && !desc->hooks.dtor && !desc->hooks.move &&
                  !desc->hooks.copy;
    ti->name_hash = wf_hash_bytes(ti->name, ti->name_len);
    r->infos[id] = ti;
    r->count = id;
    r->name_slots[registry_probe(r, ti->name, ti->name_len, ti->name_hash)] = id;
    return ti;
}

void wf_registry_pop(wf_registry *r, wf_allocator *a)
{
    wf_type_info *ti = r->infos[r->count];
    r->infos[r->count] = NULL;
    r->count--;
    if (ti->rel_targets && (ti->rel_flags & WEFT_RELATIONSHIP_LINKED_DESPAWN)) {
        r->linked_rels--;
    }
    /* rebuild the probe sequence without the entry (cannot fail: same size) */
    memset(r->name_slots, 0, r->name_cap * sizeof(uint32_t));
    for (uint32_t id = 1; id <= r->count; id++) {
        const wf_type_info *t = r->infos[id];
        r->name_slots[registry_probe(r, t->name, t->name_len, t->name_hash)] = id;
    }
    wf_free(a, ti->name, ti->name_len + 1, 1);
    wf_free(a, ti, sizeof *ti, _Alignof(wf_type_info));
}

void wf_registry_mark_linked(wf_registry *r, wf_type_info *src)
{
    src->rel_flags |= WEFT_RELATIONSHIP_LINKED_DESPAWN;
    r->linked_rels++;
}

void wf_type_construct(const wf_type_info *ti, void *dst, const void *src,
                       int32_t count)
{
    if (ti->size == 0 || count <= 0) {
        return;
    }
    if (src) {
        if (ti->hooks.copy) {
            WF_CALLBACK(WF_GUARD_ANY, ti->hooks.copy(dst, src, count, ti->hooks.user));
        } else {
            memcpy(dst, src, (size_t)ti->size * (size_t)count);
        }
    } else if (ti->hooks.ctor) {
        WF_CALLBACK(WF_GUARD_ANY, ti->hooks.ctor(dst, count, ti->hooks.user));
    } else {
        memset(dst, 0, (size_t)ti->size * (size_t)count);
    }
}

void wf_type_destroy(const wf_type_info *ti, void *ptr, int32_t count)
{
    if (ti->hooks.dtor && ti->size != 0 && count > 0) {
        WF_CALLBACK(WF_GUARD_ANY, ti->hooks.dtor(ptr, count, ti->hooks.user));
    }
}

void wf_type_move(const wf_type_info *ti, void *dst, void *src, int32_t count)
{
    if (ti->size == 0 || count <= 0) {
        return;
    }
    if (ti->hooks.move) {
        WF_CALLBACK(WF_GUARD_ANY, ti->hooks.move(dst, src, count, ti->hooks.user));
    } else {
        memcpy(dst, src, (size_t)ti->size * (size_t)count);
    }
}

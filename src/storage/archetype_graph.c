/* src/storage/archetype_graph.c - archetype/table maps and edge caches.
 * SPDX-License-Identifier: MIT
 *
 * Both maps use linear probing with load factor <= 1/2 and store hash + id,
 * so a lookup compares full id lists only on hash equality. Edge maps use
 * the same probing keyed by the component id (multiplicative hash). A
 * failed edge insertion is benign: the edge is recomputed next time.
 */
#include "storage/archetype_graph.h"

#include <string.h>

#include "core/hash.h"

/* ---- id-set maps ---- */

/* Keeps the load at most one half after one more entry. */
static bool map_grow(wf_slot **map, uint32_t *cap, wf_allocator *a, uint32_t used)
{
    uint64_t need = ((uint64_t)used + 1) * 2;
    if (need <= *cap) {
        return true;
    }
    uint32_t ncap = wf_grow_cap_pow2(*cap, need, 64, sizeof(wf_slot));
    if (ncap == 0) {
        return false;
    }
    wf_slot *slots = wf_calloc(a, (size_t)ncap * sizeof *slots, _Alignof(wf_slot));
    if (!slots) {
        return false;
    }
    for (uint32_t i = 0; i < *cap; i++) {
        if ((*map)[i].id) {
            uint32_t j = (uint32_t)(*map)[i].hash & (ncap - 1);
            while (slots[j].id) {
                j = (j + 1) & (ncap - 1);
            }
            slots[j] = (*map)[i];
        }
    }
    wf_free(a, *map, (size_t)*cap * sizeof **map, _Alignof(wf_slot));
    *map = slots;
    *cap = ncap;
    return true;
}

static void map_put(wf_slot *map, uint32_t cap, uint64_t hash, uint32_t id)
{
    uint32_t j = (uint32_t)hash & (cap - 1);
    while (map[j].id) {
        j = (j + 1) & (cap - 1);
    }
    map[j].hash = hash;
    map[j].id = id + 1;
}

static bool ids_equal(const weft_component *x, uint32_t nx, const weft_component *y,
                      uint32_t ny)
{
    return nx == ny && (nx == 0 || memcmp(x, y, nx * sizeof *x) == 0);
}

wf_archetype *wf_graph_find(const wf_graph *g, const weft_component *ids,
                            uint32_t count)
{
    uint64_t hash = wf_hash_ids(ids, (int32_t)count);
    uint32_t mask = g->arch_map_cap - 1;
    for (uint32_t j = (uint32_t)hash & mask; g->arch_map[j].id; j = (j + 1) & mask) {
        if (g->arch_map[j].hash == hash) {
            wf_archetype *arch = g->archetypes[g->arch_map[j].id - 1];
            if (ids_equal(arch->ids, arch->id_count, ids, count)) {
                return arch;
            }
        }
    }
    return NULL;
}

static wf_table *graph_find_table(const wf_graph *g, const weft_component *ids,
                                  uint32_t count, uint64_t hash)
{
    uint32_t mask = g->table_map_cap - 1;
    for (uint32_t j = (uint32_t)hash & mask; g->table_map[j].id; j = (j + 1) & mask) {
        if (g->table_map[j].hash == hash) {
            wf_table *t = g->tables[g->table_map[j].id - 1];
            if (ids_equal(t->ids, t->col_count, ids, count)) {
                return t;
            }
        }
    }
    return NULL;
}

static bool grow_ptr_array(void ***arr, uint32_t *cap, wf_allocator *a, uint32_t used)
{
    return used < *cap || wf_grow_ex(a, (void **)arr, cap, (uint64_t)used + 1, 16, UINT32_MAX,
                                     sizeof **arr, _Alignof(void *));
}

static void archetype_free(wf_archetype *arch, wf_allocator *a)
{
    if (!arch) {
        return;
    }
    wf_free(a, arch->ids, arch->id_count * sizeof *arch->ids, _Alignof(weft_component));
    wf_free(a, arch->sparse_ids, arch->sparse_count * sizeof *arch->sparse_ids,
            _Alignof(weft_component));
    wf_free(a, arch->edges, arch->edge_cap * sizeof *arch->edges, _Alignof(wf_edge));
    wf_free(a, arch, sizeof *arch, _Alignof(wf_archetype));
}

wf_archetype *wf_graph_ensure(wf_graph *g, wf_allocator *a, wf_registry *reg,
                              const weft_component *ids, uint32_t count)
{
    wf_archetype *found = g->arch_map_cap ? wf_graph_find(g, ids, count) : NULL;
    if (found) {
        return found;
    }
    /* Split into table and sparse ids, in a scratch array on the archetype. */
    wf_archetype *arch = wf_calloc(a, sizeof *arch, _Alignof(wf_archetype));
    if (!arch) {
        return NULL;
    }
    uint32_t nsparse = 0;
    for (uint32_t i = 0; i < count; i++) {
        nsparse += wf_registry_get(reg, ids[i])->storage == WEFT_STORAGE_SPARSE;
    }
    arch->id_count = count;
    arch->sparse_count = nsparse;
    if (count) {
        arch->ids = wf_alloc(a, count * sizeof *ids, _Alignof(weft_component));
        if (!arch->ids) {
            goto fail;
        }
        memcpy(arch->ids, ids, count * sizeof *ids);
    }
    if (nsparse) {
        arch->sparse_ids = wf_alloc(a, nsparse * sizeof *ids, _Alignof(weft_component));
        if (!arch->sparse_ids) {
            goto fail;
        }
    }
    /* Table ids: count - nsparse entries; reuse a stack buffer when small. */
    uint32_t ntable = count - nsparse;
    weft_component tbuf_small[32];
    weft_component *tbuf = tbuf_small;
    if (ntable > 32) {
        tbuf = wf_alloc(a, ntable * sizeof *tbuf, _Alignof(weft_component));
        if (!tbuf) {
            goto fail;
        }
    }
    for (uint32_t i = 0, t = 0, s = 0; i < count; i++) {
        if (wf_registry_get(reg, ids[i])->storage == WEFT_STORAGE_SPARSE) {
            arch->sparse_ids[s++] = ids[i];
        } else {
            tbuf[t++] = ids[i];
        }
    }
    uint64_t thash = wf_hash_ids(tbuf, (int32_t)ntable);
    wf_table *table = g->table_map_cap ? graph_find_table(g, tbuf, ntable, thash) : NULL;
    bool new_table = table == NULL;
    bool ok = true;
    if (new_table) {
        ok = grow_ptr_array((void ***)&g->tables, &g->table_cap, a, g->table_count) &&
             map_grow(&g->table_map, &g->table_map_cap, a, g->table_count);
        if (ok) {
            table = wf_table_create(a, reg, tbuf, ntable, thash);
            ok = table != NULL;
        }
    }
    if (tbuf != tbuf_small) {
        wf_free(a, tbuf, ntable * sizeof *tbuf, _Alignof(weft_component));
    }
    if (!ok) {
        goto fail;
    }
    bool index_ok = true;
    for (uint32_t i = 0; i < count && index_ok; i++) {
        /* component index growth; benign if a later step fails */
        wf_type_info *ti = wf_registry_get(reg, ids[i]);
        if (ti->arch_count == ti->arch_cap) {
            index_ok = wf_grow(a, (void **)&ti->archs, &ti->arch_cap, (uint64_t)ti->arch_count + 1,
                               sizeof *ti->archs, _Alignof(uint32_t));
        }
    }
    if (!index_ok ||
        !grow_ptr_array((void ***)&g->archetypes, &g->arch_cap, a, g->arch_count) ||
        !map_grow(&g->arch_map, &g->arch_map_cap, a, g->arch_count)) {
        if (new_table) {
            wf_table_destroy(table, a);
        }
        goto fail;
    }
    /* Commit: nothing below can fail. */
    if (new_table) {
        table->id = g->table_count;
        g->tables[g->table_count++] = table;
        map_put(g->table_map, g->table_map_cap, thash, table->id);
    }
    for (uint32_t i = 0; i < count; i++) {
        arch->event_mask |= wf_registry_get(reg, ids[i])->event_mask;
    }
    arch->table = table;
    arch->col_map = table->col_map;
    arch->col_map_len = table->col_map_len;
    arch->cols = table->cols;
    table->archetype_count++;
    arch->hash = wf_hash_ids(ids, (int32_t)count);
    arch->id = g->arch_count;
    g->archetypes[g->arch_count++] = arch;
    for (uint32_t i = 0; i < count; i++) {
        wf_type_info *ti = wf_registry_get(reg, ids[i]);
        ti->archs[ti->arch_count++] = arch->id;
    }
    map_put(g->arch_map, g->arch_map_cap, arch->hash, arch->id);
    return arch;
fail:
    archetype_free(arch, a);
    return NULL;
}

bool wf_graph_init(wf_graph *g, wf_allocator *a, wf_registry *reg)
{
    memset(g, 0, sizeof *g);
    return wf_graph_ensure(g, a, reg, NULL, 0) != NULL;
}

void wf_graph_fini(wf_graph *g, wf_allocator *a)
{
    for (uint32_t i = 0; i < g->table_count; i++) {
        wf_table_destroy(g->tables[i], a);
    }
    for (uint32_t i = 0; i < g->arch_count; i++) {
        archetype_free(g->archetypes[i], a);
    }
    wf_free(a, g->tables, g->table_cap * sizeof *g->tables, _Alignof(void *));
    wf_free(a, g->archetypes, g->arch_cap * sizeof *g->archetypes, _Alignof(void *));
    wf_free(a, g->arch_map, g->arch_map_cap * sizeof *g->arch_map, _Alignof(wf_slot));
    wf_free(a, g->table_map, g->table_map_cap * sizeof *g->table_map, _Alignof(wf_slot));
    memset(g, 0, sizeof *g);
}

bool wf_archetype_has(const wf_archetype *arch, weft_component c)
{
    uint32_t lo = 0;
    uint32_t hi = arch->id_count;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (arch->ids[mid] < c) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < arch->id_count && arch->ids[lo] == c;
}

/* ---- edges ---- */

/* Caches from --key--> target. Benign on OOM: the edge is simply not kept. */
static void edge_put(wf_archetype *from, wf_allocator *a, uint32_t key, uint32_t target,
                     wf_move_plan *plan)
{
    uint64_t need = ((uint64_t)from->edge_count + 1) * 2;
    if (need > from->edge_cap) {
        uint32_t ncap = wf_grow_cap_pow2(from->edge_cap, need, 8, sizeof(wf_edge));
        wf_edge *edges =
            ncap ? wf_calloc(a, (size_t)ncap * sizeof *edges, _Alignof(wf_edge)) : NULL;
        if (!edges) {
            return; /* benign */
        }
        for (uint32_t i = 0; i < from->edge_cap; i++) {
            if (from->edges[i].key) {
                uint32_t j = wf_edge_slot(from->edges[i].key, ncap - 1);
                while (edges[j].key) {
                    j = (j + 1) & (ncap - 1);
                }
                edges[j] = from->edges[i];
            }
        }
        wf_free(a, from->edges, from->edge_cap * sizeof *from->edges, _Alignof(wf_edge));
        from->edges = edges;
        from->edge_cap = ncap;
    }
    uint32_t j = wf_edge_slot(key, from->edge_cap - 1);
    while (from->edges[j].key) {
        if (from->edges[j].key == key) {
            from->edges[j].target = target;
            from->edges[j].plan = plan;
            return;
        }
        j = (j + 1) & (from->edge_cap - 1);
    }
    from->edges[j].key = key;
    from->edges[j].target = target;
    from->edges[j].plan = plan;
    from->edge_count++;
}

/* Builds from's set plus or minus c into buf and ensures its archetype;
 * then the plans both ways between their tables and the two edges. The
 * forward plan is needed for the move about to happen: without it the
 * step fails (OOM). The backward edge is a courtesy: without its plan it
 * is simply not cached. */
static wf_archetype *graph_step(wf_graph *g, wf_allocator *a, wf_registry *reg,
                                wf_archetype *from, weft_component c, bool add,
                                wf_move_plan **out_plan)
{
    uint32_t n = from->id_count + (add ? 1u : 0u);
    weft_component small[64];
    weft_component *buf = small;
    if (n > 64) {
        buf = wf_alloc(a, n * sizeof *buf, _Alignof(weft_component));
        if (!buf) {
            return NULL;
        }
    }
    uint32_t k = 0;
    bool placed = !add;
    for (uint32_t i = 0; i < from->id_count; i++) {
        weft_component id = from->ids[i];
        if (!placed && c < id) {
            buf[k++] = c;
            placed = true;
        }
        if (add || id != c) {
            buf[k++] = id;
        }
    }
    if (!placed) {
        buf[k++] = c;
    }
    wf_archetype *to = wf_graph_ensure(g, a, reg, buf, k);
    if (buf != small) {
        wf_free(a, buf, n * sizeof *buf, _Alignof(weft_component));
    }
    if (!to) {
        return NULL;
    }
    wf_move_plan *fwd = NULL;
    wf_move_plan *back = NULL;
    bool back_ok = true;
    if (to->table != from->table) {
        fwd = wf_table_plan(from->table, to->table, a);
        if (!fwd) {
            return NULL;
        }
        back = wf_table_plan(to->table, from->table, a);
        back_ok = back != NULL;
    }
    uint32_t key = add ? c : (c | WF_EDGE_REMOVE);
    edge_put(from, a, key, to->id, fwd);
    if (back_ok) {
        edge_put(to, a, key ^ WF_EDGE_REMOVE, from->id, back);
    }
    from->last_key = key;
    from->last_to = to;
    from->last_plan = fwd;
    *out_plan = fwd;
    return to;
}

wf_archetype *wf_graph_step_slow(wf_graph *g, wf_allocator *a, wf_registry *reg,
                                 wf_archetype *from, uint32_t key, wf_move_plan **out_plan)
{
    weft_component c = key & ~WF_EDGE_REMOVE;
    bool add = (key & WF_EDGE_REMOVE) == 0;
    if (wf_archetype_has(from, c) == add) {
        /* already present (add) or absent (remove): no move */
        from->last_key = key;
        from->last_to = from;
        from->last_plan = NULL;
        *out_plan = NULL;
        return from;
    }
    return graph_step(g, a, reg, from, c, add, out_plan);
}

/* src/world/inspect.c - canonical world hash and the invariant checker.
 * SPDX-License-Identifier: MIT
 *
 * The hash visits entity indices in ascending order, so it does not depend
 * on table row order or on the order in which archetypes were created;
 * within an entity, components are visited in ascending id order (the
 * archetype's sorted set). Resources follow, in id order. Values are
 * hashed as bytes, except a relationship target's source list, which is
 * hashed as its entities (the bytes hold a heap pointer), and a value
 * whose type has a hash_value hook (it holds pointers: the hook feeds
 * what they point to), so the hash never depends on where memory lies.
 *
 * The checker walks every structure and stops at the first violation:
 *   INV-1 a live record names an existing archetype and a row < table count
 *   INV-2 table->entities[row] is the entity named by the record
 *   INV-3 every table row holds a live entity whose record points back
 *   INV-4 an archetype's table holds exactly its table-storage ids
 *   INV-5 archetype sets are sorted, unique, and found again by lookup
 *   INV-6 archetype entity counts sum to the live count; per-archetype
 *         counts match the records
 *   INV-7 cached edges lead to the set plus/minus exactly that component
 *   INV-8 sparse slots and owners agree, owners are live and their
 *         archetypes contain the component; every entity of a sparse
 *         archetype has its slot
 *   INV-9 dead records are on the free stack exactly once, with no
 *         duplicate; free-stack entries are dead
 *   INV-10 the component index lists, for each component, exactly the
 *         archetypes holding it, in creation order
 *   INV-11 the world's iteration depth counts exactly the hook, observer
 *         and trigger dispatches running and the open iterations that
 *         hold it (a wrong depth defers structural calls forever)
 *   INV-12 relationships agree from both sides; linked ones form no cycle
 *   INV-13 every present resource whose type has a domain check passes it
 *          (a State resource holds one of its state's values)
 */
#include "world/inspect.h"

#include <string.h>

#include "core/ds.h"
#include "core/hash.h"
#include "query/iter.h"
#include "world/relationship.h"

static void hash_feed(void *state, const void *bytes, size_t n)
{
    if (n > 0) {
        XXH3_64bits_update(state, bytes, n);
    }
}

uint64_t wf_world_hash(const weft_world *w)
{
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    const wf_entity_index *ix = &w->entities;
    for (uint32_t idx = 0; idx < ix->count; idx++) {
        const wf_record *r = &ix->records[idx];
        if (r->arch == WF_ARCH_DEAD) {
            continue;
        }
        weft_entity e = wf_make_entity(idx, r->gen);
        XXH3_64bits_update(&state, &e, sizeof e);
        const wf_archetype *arch = w->graph.archetypes[r->arch];
        for (uint32_t i = 0; i < arch->id_count; i++) {
            weft_component c = arch->ids[i];
            const wf_type_info *ti = wf_registry_get(&w->registry, c);
            XXH3_64bits_update(&state, &c, sizeof c);
            if (ti->size == 0) {
                continue;
            }
            const void *p;
            if (ti->storage == WEFT_STORAGE_SPARSE) {
                p = wf_column_ptr(&ti->sparse->dense, wf_sparse_find(ti->sparse, idx));
            } else {
                p = wf_column_ptr(wf_table_column(arch->table, c), r->row);
            }
            if (ti->rel_source) {
                /* a relationship target's source list: its entities, not
                 * the heap pointer that holds them */
                const wf_rel_list *l = p;
                XXH3_64bits_update(&state, &l->count, sizeof l->count);
                if (l->count > 0) {
                    XXH3_64bits_update(&state, l->items, (size_t)l->count * sizeof *l->items);
                }
                continue;
            }
            if (ti->hash_value) {
                ti->hash_value(p, hash_feed, &state);
                continue;
            }
            XXH3_64bits_update(&state, p, ti->size);
        }
    }
    for (uint32_t id = 1; id <= w->registry.count; id++) {
        const wf_type_info *ti = w->registry.infos[id];
        if (ti->res_present) {
            uint32_t tag = 0x52455330u ^ id; /* "RES0" ^ id: apart from entities */
            XXH3_64bits_update(&state, &tag, sizeof tag);
            if (ti->res_value && ti->hash_value) {
                ti->hash_value(ti->res_value, hash_feed, &state);
            } else if (ti->res_value) {
                XXH3_64bits_update(&state, ti->res_value, ti->size);
            }
        }
    }
    return XXH3_64bits_digest(&state);
}

/* Each check returns WEFT_ERR_CORRUPT (message recorded, naming the
 * invariant of docs/architecture.md it breaks) at the first violation. */
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            return wf_error(w, WEFT_ERR_CORRUPT, __VA_ARGS__);             \
        }                                                                  \
    } while (0)

/* INV-11: the iteration depth is exactly what running dispatches and open
 * iterations hold. */
static weft_status check_iter_depth(weft_world *w)
{
    uint64_t depth = w->events.dispatching;
    for (const weft_query *q = w->queries; q; q = q->next) {
        depth += wf_query_depth_held(q);
    }
    CHECK(depth == w->iter_depth,
          "INV-11: iteration depth is %u but %u dispatches and open iterations hold it",
          w->iter_depth, (uint32_t)depth);
    return WEFT_OK;
}

/* INV-9: the free stack and the later-free list hold dead, distinct
 * indices; marks them in on_free. */
static weft_status check_free_lists(weft_world *w, uint8_t *on_free)
{
    const wf_entity_index *ix = &w->entities;
    CHECK(ix->free_len <= ix->count && ix->count <= ix->cap,
          "INV-9: free stack %u / records %u / capacity %u out of order", ix->free_len,
          ix->count, ix->cap);
    for (uint32_t k = 0; k < ix->free_len; k++) {
        uint32_t idx = ix->free_stack[k];
        CHECK(idx < ix->count, "INV-9: free stack entry %u holds index %u >= %u", k, idx,
              ix->count);
        CHECK(!on_free[idx], "INV-9: index %u is on the free stack twice", idx);
        CHECK(ix->records[idx].arch == WF_ARCH_DEAD,
              "INV-9: index %u is on the free stack but alive", idx);
        on_free[idx] = 1;
    }
    for (uint32_t k = 0; k < ix->later_len; k++) {
        uint32_t idx = ix->later[k];
        CHECK(idx < ix->count && !on_free[idx] && ix->records[idx].arch == WF_ARCH_DEAD,
              "INV-9: later-free entry %u (index %u) is wrong", k, idx);
        on_free[idx] = 1;
    }
    return WEFT_OK;
}

/* INV-1, 2, 6, 8, 9 from the records' side: every live record points at a
 * row holding its entity and at its sparse slots; counts live entities per
 * archetype into arch_counts and in total into *out_live. */
static weft_status check_records(weft_world *w, const uint8_t *on_free, int32_t *arch_counts,
                                 int64_t *out_live)
{
    const wf_entity_index *ix = &w->entities;
    const wf_graph *g = &w->graph;
    int64_t live = 0;
    uint32_t retired = 0;
    for (uint32_t idx = 0; idx < ix->count; idx++) {
        const wf_record *r = &ix->records[idx];
        if (r->arch == WF_ARCH_DEAD) {
            retired += on_free[idx] ? 0u : 1u;
            continue;
        }
        live++;
        CHECK(r->gen != 0, "INV-1: live index %u has generation 0", idx);
        CHECK(r->arch < g->arch_count, "INV-1: entity %u names archetype %u of %u", idx,
              r->arch, g->arch_count);
        const wf_archetype *arch = g->archetypes[r->arch];
        CHECK(r->row < arch->table->count, "INV-1: entity %u row %u >= table count %u",
              idx, r->row, arch->table->count);
        CHECK(arch->table->entities[r->row] == wf_make_entity(idx, r->gen),
              "INV-2: table %u row %u holds another entity than %u", arch->table->id,
              r->row, idx);
        arch_counts[r->arch]++;
        for (uint32_t i = 0; i < arch->sparse_count; i++) {
            const wf_sparse_set *s =
                wf_registry_get(&w->registry, arch->sparse_ids[i])->sparse;
            uint32_t d = wf_sparse_find(s, idx);
            CHECK(d != WF_SPARSE_EMPTY && d < s->count,
                  "INV-8: entity %u lacks its slot in sparse component '%s'", idx,
                  wf_component_name(w, arch->sparse_ids[i]));
        }
    }
    CHECK(retired == ix->retired,
          "INV-9: %u dead indices are not on the free stack, %u were retired", retired,
          ix->retired);
    CHECK(live == ix->live, "INV-6: %lld live records but the counter says %lld",
          (long long)live, (long long)ix->live);
    *out_live = live;
    return WEFT_OK;
}

/* INV-3, 4, 6 from the tables' side: every row's entity points back, the
 * column map is right, the rows add up to the live entities. */
static weft_status check_tables(weft_world *w, int64_t live)
{
    const wf_entity_index *ix = &w->entities;
    const wf_graph *g = &w->graph;
    int64_t table_rows = 0;
    for (uint32_t t = 0; t < g->table_count; t++) {
        const wf_table *tb = g->tables[t];
        CHECK(tb->id == t, "INV-3: table %u stores id %u", t, tb->id);
        CHECK(tb->count <= tb->cap, "INV-3: table %u count %u > cap %u", t, tb->count,
              tb->cap);
        table_rows += tb->count;
        for (uint32_t row = 0; row < tb->count; row++) {
            weft_entity e = tb->entities[row];
            uint32_t idx = (uint32_t)e;
            CHECK(idx < ix->count && ix->records[idx].arch != WF_ARCH_DEAD &&
                      ix->records[idx].gen == (uint32_t)(e >> 32) &&
                      ix->records[idx].row == row &&
                      g->archetypes[ix->records[idx].arch]->table == tb,
                  "INV-3: table %u row %u holds entity %u:%u whose record does not "
                  "point back",
                  t, row, idx, (uint32_t)(e >> 32));
        }
        for (uint32_t i = 0; i < tb->col_count; i++) {
            CHECK(i == 0 || tb->ids[i - 1] < tb->ids[i], "INV-4: table %u ids not sorted",
                  t);
            CHECK(wf_table_column(tb, tb->ids[i]) == &tb->cols[i],
                  "INV-4: table %u column map is wrong for '%s'", t,
                  wf_component_name(w, tb->ids[i]));
        }
    }
    CHECK(table_rows == live, "INV-6: tables hold %lld rows for %lld live entities",
          (long long)table_rows, (long long)live);
    return WEFT_OK;
}

/* INV-4, 5, 6, 7: archetype ids, counts, component sets matching their
 * tables, and add/remove edges leading to the right sets. */
static weft_status check_archetypes(weft_world *w, const int32_t *arch_counts)
{
    const wf_graph *g = &w->graph;
    for (uint32_t a = 0; a < g->arch_count; a++) {
        const wf_archetype *arch = g->archetypes[a];
        CHECK(arch->id == a, "INV-5: archetype %u stores id %u", a, arch->id);
        CHECK(arch->entity_count == arch_counts[a],
              "INV-6: archetype %u counts %d entities, records say %d", a,
              arch->entity_count, arch_counts[a]);
        CHECK(wf_graph_find(g, arch->ids, arch->id_count) == arch,
              "INV-5: archetype %u is not found by its own component set", a);
        uint32_t ntable = 0;
        uint32_t nsparse = 0;
        for (uint32_t i = 0; i < arch->id_count; i++) {
            weft_component c = arch->ids[i];
            CHECK(i == 0 || arch->ids[i - 1] < c,
                  "INV-5: archetype %u ids not sorted and unique", a);
            const wf_type_info *ti = wf_registry_get(&w->registry, c);
            CHECK(ti, "INV-5: archetype %u holds unregistered id %u", a, c);
            if (ti->storage == WEFT_STORAGE_SPARSE) {
                CHECK(nsparse < arch->sparse_count && arch->sparse_ids[nsparse] == c,
                      "INV-4: archetype %u sparse list misses '%s'", a, ti->name);
                nsparse++;
            } else {
                CHECK(ntable < arch->table->col_count && arch->table->ids[ntable] == c,
                      "INV-4: archetype %u table %u does not match at '%s'", a,
                      arch->table->id, ti->name);
                ntable++;
            }
        }
        CHECK(ntable == arch->table->col_count && nsparse == arch->sparse_count,
              "INV-4: archetype %u and its table %u disagree on the component set", a,
              arch->table->id);
        for (uint32_t j = 0; j < arch->edge_cap; j++) {
            const wf_edge *ed = &arch->edges[j];
            if (!ed->key) {
                continue;
            }
            CHECK(ed->target < g->arch_count, "INV-7: archetype %u edge to %u", a,
                  ed->target);
            weft_component c = ed->key & ~WF_EDGE_REMOVE;
            bool add = (ed->key & WF_EDGE_REMOVE) == 0;
            const wf_archetype *to = g->archetypes[ed->target];
            bool ok = to->id_count == arch->id_count + (add ? 1u : 0u) - (add ? 0u : 1u) &&
                      wf_archetype_has(to, c) == add && wf_archetype_has(arch, c) != add;
            for (uint32_t i = 0; ok && i < arch->id_count; i++) {
                ok = arch->ids[i] == c || wf_archetype_has(to, arch->ids[i]);
            }
            CHECK(ok, "INV-7: edge %s '%s' from archetype %u leads to the wrong set %u",
                  add ? "add" : "remove", wf_component_name(w, c), a, ed->target);
            /* its move plan: present exactly when the tables differ, and
             * mapping every source column to the same id in the target */
            const wf_move_plan *p = ed->plan;
            ok = (p != NULL) == (to->table != arch->table);
            if (p) {
                ok = p->src == arch->table && p->dst == to->table &&
                     p->n_ops == p->src->col_count && p->n_plain <= p->n_ticks &&
                     p->n_ticks <= p->n_ops;
                for (uint32_t i = 0; ok && i < p->n_ops; i++) {
                    const wf_column *sc = p->ops[i].src;
                    ok = sc >= p->src->cols && sc < p->src->cols + p->src->col_count &&
                         p->ops[i].dst == wf_table_column(p->dst, sc->id) &&
                         (i < p->n_plain) == sc->plain;
                    for (uint32_t k = 0; ok && k < i; k++) {
                        ok = p->ops[k].src != sc;
                    }
                }
            }
            CHECK(ok, "INV-7: the move plan of edge %s '%s' from archetype %u does not match "
                      "its tables",
                  add ? "add" : "remove", wf_component_name(w, c), a);
        }
    }
    return WEFT_OK;
}

/* INV-10: the per-component archetype index lists exactly the archetypes
 * holding each component. */
static weft_status check_component_index(weft_world *w)
{
    const wf_graph *g = &w->graph;
    uint64_t indexed = 0;
    uint64_t held = 0;
    for (uint32_t a = 0; a < g->arch_count; a++) {
        held += g->archetypes[a]->id_count;
    }
    for (uint32_t id = 1; id <= w->registry.count; id++) {
        const wf_type_info *ti = w->registry.infos[id];
        for (uint32_t k = 0; k < ti->arch_count; k++) {
            uint32_t a = ti->archs[k];
            CHECK(a < g->arch_count && (k == 0 || ti->archs[k - 1] < a) &&
                      wf_archetype_has(g->archetypes[a], id),
                  "INV-10: component index of '%s' lists archetype %u wrongly", ti->name, a);
        }
        indexed += ti->arch_count;
    }
    CHECK(indexed == held, "INV-10: the component index lists %llu entries for %llu",
          (unsigned long long)indexed, (unsigned long long)held);
    return WEFT_OK;
}

/* INV-8 from the sparse sets' side: every slot maps back and belongs to a
 * live entity whose archetype has the component. */
static weft_status check_sparse_sets(weft_world *w)
{
    const wf_entity_index *ix = &w->entities;
    const wf_graph *g = &w->graph;
    for (uint32_t id = 1; id <= w->registry.count; id++) {
        const wf_type_info *ti = w->registry.infos[id];
        if (ti->storage != WEFT_STORAGE_SPARSE) {
            continue;
        }
        const wf_sparse_set *s = ti->sparse;
        CHECK(s && s->count <= s->cap, "INV-8: sparse set of '%s' is malformed", ti->name);
        for (uint32_t d = 0; d < s->count; d++) {
            weft_entity e = s->owners[d];
            uint32_t idx = (uint32_t)e;
            CHECK(wf_sparse_find(s, idx) == d,
                  "INV-8: sparse '%s' slot %u owner %u does not map back", ti->name, d,
                  idx);
            CHECK(idx < ix->count && ix->records[idx].arch != WF_ARCH_DEAD &&
                      ix->records[idx].gen == (uint32_t)(e >> 32) &&
                      wf_archetype_has(g->archetypes[ix->records[idx].arch], id),
                  "INV-8: sparse '%s' slot %u belongs to entity %u which is dead or "
                  "lacks the component",
                  ti->name, d, idx);
        }
    }
    return WEFT_OK;
}

/* INV-13: every present resource with a domain check passes it. */
static weft_status check_resource_domains(weft_world *w)
{
    for (uint32_t id = 1; id <= w->registry.count; id++) {
        const wf_type_info *ti = w->registry.infos[id];
        const char *why = ti->res_present && ti->res_value && ti->value_check
                              ? ti->value_check(ti->res_value, ti->check_user)
                              : NULL;
        CHECK(!why, "INV-13: resource '%s': %s", ti->name, why);
    }
    return WEFT_OK;
}

/* INV-12: relationships agree from both sides and linked ones form no
 * cycle. For every source entity S of relationship R naming T: T is live,
 * holds R's target list, and the list names S once; every list item names
 * the list's owner back; and following a LINKED_DESPAWN relationship from
 * any entity never comes back to it (colour marking, O(entities)). */
static weft_status check_relationships(weft_world *w, uint8_t *colour)
{
    const wf_entity_index *ix = &w->entities;
    const wf_graph *g = &w->graph;
    for (uint32_t id = 1; id <= w->registry.count; id++) {
        const wf_type_info *rel = w->registry.infos[id];
        if (!rel->rel_targets) {
            continue;
        }
        int64_t sources = 0, items = 0;
        for (uint32_t i = 0; i < ix->count; i++) {
            const wf_record *r = &ix->records[i];
            if (r->arch == WF_ARCH_DEAD) {
                continue;
            }
            weft_entity e = wf_make_entity(i, r->gen);
            const wf_archetype *a = g->archetypes[r->arch];
            if (wf_archetype_has(a, id)) {
                sources++;
                weft_entity t = wf_rel_target(w, e, rel);
                const wf_rel_list *l = wf_entity_live(w, t) ? wf_rel_list_of(w, t, rel) : NULL;
                int32_t seen = 0;
                for (int32_t k = 0; l && k < l->count; k++) {
                    seen += l->items[k] == e;
                }
                CHECK(seen == 1,
                      "INV-12: entity %u has '%s' naming %u:%u, whose list names it %d times "
                      "(or the target is dead)",
                      i, rel->name, (uint32_t)t, (uint32_t)(t >> 32), (int)seen);
            }
            if (wf_archetype_has(a, rel->rel_targets)) {
                const wf_rel_list *l = wf_rel_list_of(w, e, rel);
                for (int32_t k = 0; l && k < l->count; k++) {
                    weft_entity src = l->items[k];
                    CHECK(wf_entity_live(w, src) && wf_rel_target(w, src, rel) == e,
                          "INV-12: the '%s' list of entity %u names %u:%u, which does not "
                          "name it back",
                          rel->name, i, (uint32_t)src, (uint32_t)(src >> 32));
                }
                items += l ? l->count : 0;
            }
        }
        CHECK(items == sources, "INV-12: '%s' has %lld sources but its lists hold %lld items",
              rel->name, (long long)sources, (long long)items);
        if (!(rel->rel_flags & WEFT_RELATIONSHIP_LINKED_DESPAWN) || !colour) {
            continue;
        }
        /* 0 unseen, 1 on the current chain, 2 known to end */
        memset(colour, 0, ix->count);
        for (uint32_t i = 0; i < ix->count; i++) {
            uint32_t at = i;
            while (colour[at] == 0 && ix->records[at].arch != WF_ARCH_DEAD &&
                   wf_archetype_has(g->archetypes[ix->records[at].arch], id) &&
                   wf_entity_live(w, wf_rel_target(w, wf_make_entity(at, ix->records[at].gen),
                                                   rel))) {
                colour[at] = 1;
                at = (uint32_t)wf_rel_target(w, wf_make_entity(at, ix->records[at].gen), rel);
            }
            CHECK(colour[at] != 1, "INV-12: '%s' forms a cycle through entity %u", rel->name,
                  at);
            for (uint32_t k = i; colour[k] == 1;) {
                colour[k] = 2;
                k = (uint32_t)wf_rel_target(w, wf_make_entity(k, ix->records[k].gen), rel);
            }
            colour[at] = 2;
        }
    }
    return WEFT_OK;
}

#undef CHECK

weft_status wf_world_check(weft_world *w)
{
    const wf_entity_index *ix = &w->entities;
    const wf_graph *g = &w->graph;
    /* plain blocks of the stb_ds allocator (core/ds.h), not stb_ds arrays:
     * its header macros cast these element types to a more aligned header,
     * which clang's -Wcast-align reports */
    int32_t *arch_counts = NULL;
    uint8_t *on_free = NULL;
    if (g->arch_count) {
        arch_counts = wf_ds_realloc(NULL, g->arch_count * sizeof *arch_counts);
    }
    if (ix->count) {
        on_free = wf_ds_realloc(NULL, ix->count);
    }
    if ((g->arch_count && !arch_counts) || (ix->count && !on_free)) {
        wf_ds_free(arch_counts);
        wf_ds_free(on_free);
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "no scratch memory for the check");
    }
    if (g->arch_count) {
        memset(arch_counts, 0, g->arch_count * sizeof *arch_counts);
    }
    if (ix->count) {
        memset(on_free, 0, ix->count);
    }
    int64_t live = 0;
    weft_status st = check_iter_depth(w);
    if (st == WEFT_OK) {
        st = check_free_lists(w, on_free);
    }
    if (st == WEFT_OK) {
        st = check_records(w, on_free, arch_counts, &live);
    }
    if (st == WEFT_OK) {
        st = check_tables(w, live);
    }
    if (st == WEFT_OK) {
        st = check_archetypes(w, arch_counts);
    }
    if (st == WEFT_OK) {
        st = check_component_index(w);
    }
    if (st == WEFT_OK) {
        st = check_sparse_sets(w);
    }
    if (st == WEFT_OK) {
        st = check_relationships(w, on_free); /* on_free is free scratch now */
    }
    if (st == WEFT_OK) {
        st = check_resource_domains(w);
    }
    wf_ds_free(arch_counts);
    wf_ds_free(on_free);
    return st;
}

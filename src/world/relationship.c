/* src/world/relationship.c - relationship hooks and lookups.
 * SPDX-License-Identifier: MIT
 *
 * Hooks run with the world deferring structural calls; list edits are value
 * edits and happen at once, component additions and removals go through
 * custom commands that re-check the situation when they run (the world may
 * have changed in between).
 */
#include "world/relationship.h"
#include "world/commit.h"
#include "world/entity.h"

#include <string.h>

#include "world/commit.h"
#include "world/defer.h"

/* ---- lookups ---- */

static void *rel_value(const weft_world *w, weft_entity e, const wf_type_info *ti)
{
    const wf_record *r = wf_entity_live(w, e);
    if (!r) {
        return NULL;
    }
    const wf_column *col = wf_table_column(wf_world_archetype(w, r->arch)->table, ti->id);
    return col ? wf_column_ptr(col, r->row) : NULL;
}

weft_entity wf_rel_target(const weft_world *w, weft_entity source, const wf_type_info *rel)
{
    const weft_entity *t = rel_value(w, source, rel);
    return t ? *t : 0;
}

const wf_rel_list *wf_rel_list_of(const weft_world *w, weft_entity target,
                                  const wf_type_info *rel)
{
    return rel_value(w, target, wf_registry_get(&w->registry, rel->rel_targets));
}

bool wf_rel_would_cycle(const weft_world *w, weft_entity source, const wf_type_info *rel,
                        weft_entity target)
{
    if (source == target) {
        return true;
    }
    const wf_rel_list *own = wf_rel_list_of(w, source, rel);
    if ((!own || own->count == 0) && w->rel_attach_pending == 0) {
        /* nothing lists source as its target, and no attachment is queued
         * that could: source has no descendants to close a loop with */
        return false;
    }
    int64_t steps = w->entities.live + 1;
    for (weft_entity t = target; t && steps-- > 0; t = wf_rel_target(w, t, rel)) {
        if (t == source) {
            return true;
        }
    }
    return steps < 0; /* an existing cycle: refuse to extend it */
}

/* ---- list editing ---- */

/* Room for `more` sources without allocating at append time. */
static bool rel_list_reserve(weft_world *w, wf_rel_list *l, uint32_t more)
{
    uint64_t need = (uint64_t)l->count + more;
    if (need <= (uint64_t)l->cap) {
        return true;
    }
    /* int32_t counts: the growth is limited to INT32_MAX */
    uint32_t cap = wf_grow_cap((uint32_t)l->cap, need, 4, INT32_MAX, sizeof(weft_entity));
    if (cap == 0) {
        return false;
    }
    weft_entity *n = wf_alloc(&w->alloc, (size_t)cap * sizeof *n, _Alignof(weft_entity));
    if (!n) {
        return false;
    }
    if (l->count) {
        memcpy(n, l->items, (size_t)l->count * sizeof *n);
    }
    wf_free(&w->alloc, l->items, (size_t)l->cap * sizeof *n, _Alignof(weft_entity));
    l->items = n;
    l->cap = (int32_t)cap;
    return true;
}

/* Appends e; `dedup` first looks for it (only the deferred attach can meet
 * a source twice: the direct path runs right after on_replace erased it). */
static bool rel_list_append(weft_world *w, wf_rel_list *l, weft_entity e, bool dedup)
{
    for (int32_t i = 0; dedup && i < l->count; i++) {
        if (l->items[i] == e) {
            return true;
        }
    }
    if (!rel_list_reserve(w, l, 1)) {
        return false;
    }
    l->items[l->count++] = e;
    return true;
}

static void rel_list_erase(wf_rel_list *l, weft_entity e)
{
    for (int32_t i = 0; i < l->count; i++) {
        if (l->items[i] == e) {
            /* keep the order of the others */
            memmove(l->items + i, l->items + i + 1,
                    (size_t)(l->count - i - 1) * sizeof *l->items);
            l->count--;
            return;
        }
    }
}

/* ---- target component type hooks ---- */

static void rel_list_dtor(void *ptr, int32_t count, void *user)
{
    weft_world *w = user;
    wf_rel_list *l = ptr;
    for (int32_t i = 0; i < count; i++) {
        wf_free(&w->alloc, l[i].items, (size_t)l[i].cap * sizeof *l[i].items,
                _Alignof(weft_entity));
    }
}

/* Lists are owned by the relationship: a copy starts empty (the hooks
 * fill it), so a target value can never list sources twice. */
static void rel_list_copy(void *dst, const void *src, int32_t count, void *user)
{
    (void)src;
    (void)user;
    memset(dst, 0, (size_t)count * sizeof(wf_rel_list));
}

static void rel_list_ctor(void *ptr, int32_t count, void *user)
{
    (void)user;
    memset(ptr, 0, (size_t)count * sizeof(wf_rel_list));
}

/* ---- deferred steps ---- */

typedef struct rel_step {
    weft_component rel;
    weft_entity source;
    weft_entity target;
} rel_step;

/* Gives `target` a list and appends `source`, if source still points there. */
static void rel_attach(weft_world *w, void *payload, void *user)
{
    (void)user;
    const rel_step *s = payload;
    const wf_type_info *rel = wf_registry_get(&w->registry, s->rel);
    if (wf_rel_target(w, s->source, rel) != s->target || !wf_entity_live(w, s->target)) {
        return;
    }
    wf_rel_list *l = (wf_rel_list *)wf_rel_list_of(w, s->target, rel);
    if (!l) {
        wf_record *rec = wf_entity_live(w, s->target);
        const wf_type_info *tt = wf_registry_get(&w->registry, rel->rel_targets);
        if (wf_commit_insert_one(w, s->target, rec, tt, NULL) != WEFT_OK) {
            return; /* out of memory: reported; the source stays unlisted */
        }
        l = (wf_rel_list *)wf_rel_list_of(w, s->target, rel);
    }
    if (!rel_list_append(w, l, s->source, true)) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory listing a relationship source");
    }
}

/* Removes `target`'s list if it is (still) empty. */
static void rel_prune(weft_world *w, void *payload, void *user)
{
    (void)user;
    const rel_step *s = payload;
    const wf_type_info *rel = wf_registry_get(&w->registry, s->rel);
    const wf_rel_list *l = wf_rel_list_of(w, s->target, rel);
    if (l && l->count == 0) {
        wf_record *rec = wf_entity_live(w, s->target);
        wf_commit_remove(w, s->target, rec, wf_registry_get(&w->registry, rel->rel_targets));
    }
}

/* Runs after a queued attachment ran or was discarded. */
static void rel_attach_done(void *payload, void *user)
{
    (void)payload;
    weft_world *w = user;
    w->rel_attach_pending--;
}

static void rel_defer(weft_world *w, weft_command_fn fn, weft_component rel,
                      weft_entity source, weft_entity target)
{
    rel_step s = {rel, source, target};
    bool attach = fn == rel_attach;
    if (w->cmds.gen > WEFT_MAX_EVENT_DEPTH ||
        !wf_cmds_push_custom(&w->cmds, fn, &s, sizeof s, attach ? rel_attach_done : NULL,
                             w)) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "could not queue a relationship update");
        return;
    }
    if (attach) {
        w->rel_attach_pending++;
    }
}

/* ---- source hooks ---- */

static void rel_on_insert(weft_world *w, weft_entity e, weft_component c, void *user)
{
    (void)user;
    const wf_type_info *rel = wf_registry_get(&w->registry, c);
    weft_entity target = wf_rel_target(w, e, rel);
    if (target == e || !wf_entity_live(w, target) ||
        wf_rel_would_cycle(w, e, rel, target)) {
        /* Every path that stores a relationship value admits it first
         * (wf_rel_admit, from the commit's preparation), so this is a
         * bug: report it and take the value out again. */
        wf_error(w, WEFT_ERR_INTERNAL,
                 "relationship '%s' of entity %u:%u to %u:%u reached storage unchecked "
                 "(self, dead target or cycle); it is removed",
                 rel->name, (uint32_t)e, (uint32_t)(e >> 32), (uint32_t)target,
                 (uint32_t)(target >> 32));
        wf_defer_push(w, WF_CMD_REMOVE, e, c, NULL, 0, NULL);
        return;
    }
    wf_rel_list *l = (wf_rel_list *)wf_rel_list_of(w, target, rel);
    if (l) {
        if (!rel_list_append(w, l, e, false)) {
            wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory listing a relationship source");
        }
    } else {
        rel_defer(w, rel_attach, c, e, target);
    }
}

static void rel_on_replace(weft_world *w, weft_entity e, weft_component c, void *user)
{
    (void)user;
    const wf_type_info *rel = wf_registry_get(&w->registry, c);
    weft_entity old = wf_rel_target(w, e, rel);
    wf_rel_list *l = old ? (wf_rel_list *)wf_rel_list_of(w, old, rel) : NULL;
    if (!l) {
        return; /* target gone or never listed */
    }
    rel_list_erase(l, e);
    if (l->count == 0) {
        rel_defer(w, rel_prune, c, e, old);
    }
}

/* ---- target hook ---- */

static void rel_on_despawn(weft_world *w, weft_entity t, weft_component c, void *user)
{
    (void)user;
    const wf_type_info *targets = wf_registry_get(&w->registry, c);
    const wf_type_info *rel = wf_registry_get(&w->registry, targets->rel_source);
    const wf_rel_list *l = wf_rel_list_of(w, t, rel);
    if (!l || l->count == 0) {
        return;
    }
    if (!(rel->rel_flags & WEFT_RELATIONSHIP_LINKED_DESPAWN)) {
        for (int32_t i = 0; i < l->count; i++) {
            wf_cmds_record(w, &w->cmds, WF_CMD_REMOVE, WF_CMD_TRY, l->items[i], rel->id,
                           NULL, 0, NULL);
        }
        return;
    }
    /* Part of an ancestor's cascade? Then that ancestor queued us all. */
    weft_entity parent = wf_rel_target(w, t, rel);
    if (parent && !wf_entity_live(w, parent)) {
        return;
    }
    /* Breadth first over the subtree, iteratively: each level's sources are
     * queued (in order) and then visited. The queue lives in the world
     * buffer itself: records are walked as they are appended. */
    weft_entity cur = t;
    const wf_rel_list *cl = l;
    wf_cmd_chunk *chunk = w->cmds.tail;
    uint32_t off = chunk ? chunk->used : 0;
    for (;;) {
        for (int32_t i = 0; cl && i < cl->count; i++) {
            if (wf_cmds_record(w, &w->cmds, WF_CMD_DESPAWN, WF_CMD_TRY, cl->items[i], 0, NULL,
                               0, NULL) != WEFT_OK) {
                return;
            }
        }
        /* next queued despawn to expand */
        if (!chunk) {
            chunk = w->cmds.head;
            off = 0;
        }
        wf_cmd *next = NULL;
        while (chunk && !next) {
            if (off < chunk->used) {
                wf_cmd *cmd = (wf_cmd *)(void *)(chunk->data + off);
                off += cmd->size;
                if (cmd->op == WF_CMD_DESPAWN && !(cmd->flags & WF_CMD_DONE)) {
                    next = cmd;
                }
            } else {
                chunk = chunk->next;
                off = 0;
            }
        }
        if (!next) {
            return;
        }
        cur = next->e;
        cl = wf_rel_list_of(w, cur, rel);
    }
}

/* ---- preparation: what the hooks will need, reserved before a change ---- */

/* Bytes of a deferred relationship step (a custom record of a rel_step). */
#define REL_STEP_BYTES 128u

weft_status wf_rel_admit(weft_world *w, weft_entity source, const wf_type_info *rel,
                         weft_entity target)
{
    const char *why = NULL;
    if (!wf_entity_live(w, target)) {
        why = "the target is not a live entity";
    } else if (target == source) {
        why = "an entity cannot name itself";
    } else if (source && wf_rel_would_cycle(w, source, rel, target)) {
        why = "the source is an ancestor of the target: it would close a cycle";
    }
    if (!why) {
        return WEFT_OK;
    }
    return wf_error(w, WEFT_ERR_RELATIONSHIP,
                    "relationship '%s' of entity %u:%u to %u:%u is refused: %s", rel->name,
                    (uint32_t)source, (uint32_t)(source >> 32), (uint32_t)target,
                    (uint32_t)(target >> 32), why);
}

weft_status wf_rel_prepare_relate(weft_world *w, const wf_type_info *rel, weft_entity target,
                                  uint32_t more, bool *added)
{
    *added = false;
    /* on_replace of an old target may queue a prune (a small record) */
    if (!wf_cmds_reserve(&w->cmds, 2, REL_STEP_BYTES)) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory preparing a relationship");
    }
    wf_rel_list *l = (wf_rel_list *)wf_rel_list_of(w, target, rel);
    if (!l) {
        wf_record *rec = wf_entity_live(w, target);
        const wf_type_info *tt = wf_registry_get(&w->registry, rel->rel_targets);
        weft_status st = wf_commit_insert_one(w, target, rec, tt, NULL);
        if (st != WEFT_OK) {
            return st;
        }
        *added = true;
        l = (wf_rel_list *)wf_rel_list_of(w, target, rel);
    }
    if (!rel_list_reserve(w, l, more)) {
        wf_rel_unprepare_relate(w, rel, target, *added);
        *added = false;
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory listing a relationship source");
    }
    return WEFT_OK;
}

void wf_rel_unprepare_relate(weft_world *w, const wf_type_info *rel, weft_entity target,
                             bool added)
{
    const wf_rel_list *l = wf_rel_list_of(w, target, rel);
    if (!added || !l || l->count != 0) {
        return;
    }
    /* The target goes back to the table it just left, which still has the
     * row's capacity, through a cached edge: this move allocates nothing. */
    wf_record *rec = wf_entity_live(w, target);
    if (wf_commit_remove(w, target, rec, wf_registry_get(&w->registry, rel->rel_targets)) !=
        WEFT_OK) {
        wf_error(w, WEFT_ERR_INTERNAL, "could not undo a relationship preparation");
    }
}

/* An entity set for the walk below: open addressing over a power-of-two
 * array in the world's allocator, 0 for an empty slot, at most half full. */
typedef struct rel_seen {
    weft_entity *slots;
    uint32_t cap, used;
} rel_seen;

static void rel_seen_free(weft_world *w, rel_seen *set)
{
    wf_free(&w->alloc, set->slots, (size_t)set->cap * sizeof *set->slots,
            _Alignof(weft_entity));
    set->slots = NULL;
    set->cap = set->used = 0;
}

/* Puts e in the set: 1 when it was not there, 0 when it was, -1 out of
 * memory. */
static int rel_seen_add(weft_world *w, rel_seen *set, weft_entity e)
{
    if ((uint64_t)(set->used + 1) * 2 > set->cap) {
        uint32_t cap = wf_grow_cap_pow2(set->cap, (uint64_t)(set->used + 1) * 2, 64,
                                        sizeof(weft_entity));
        weft_entity *n = cap ? wf_calloc(&w->alloc, (size_t)cap * sizeof *n,
                                         _Alignof(weft_entity))
                             : NULL;
        if (!n) {
            return -1;
        }
        rel_seen old = *set;
        set->slots = n;
        set->cap = cap;
        set->used = 0;
        for (uint32_t i = 0; i < old.cap; i++) {
            if (old.slots[i]) {
                (void)rel_seen_add(w, set, old.slots[i]); /* room: cannot fail */
            }
        }
        rel_seen_free(w, &old);
    }
    uint32_t mask = set->cap - 1;
    for (uint32_t h = (uint32_t)((e * 0x9E3779B97F4A7C15ull) >> 32) & mask;; h = (h + 1) & mask) {
        if (set->slots[h] == e) {
            return 0;
        }
        if (set->slots[h] == 0) {
            set->slots[h] = e;
            set->used++;
            return 1;
        }
    }
}

/* Appends the sources in `l` to the scratch queue (grown in the world's
 * allocator). With `seen` (several linked relationships: an entity may be
 * reached along more than one), those already queued are left out. */
static bool rel_queue_push(weft_world *w, weft_entity **q, uint32_t *cap, uint32_t *len,
                           const wf_rel_list *l, rel_seen *seen)
{
    if ((uint64_t)*len + (uint64_t)l->count > UINT32_MAX) {
        return false;
    }
    if (!wf_grow(&w->alloc, (void **)q, cap, *len + (uint32_t)l->count, sizeof **q,
                 _Alignof(weft_entity))) {
        return false;
    }
    if (!seen) {
        memcpy(*q + *len, l->items, (size_t)l->count * sizeof **q);
        *len += (uint32_t)l->count;
        return true;
    }
    for (int32_t i = 0; i < l->count; i++) {
        int fresh = rel_seen_add(w, seen, l->items[i]);
        if (fresh < 0) {
            return false;
        }
        if (fresh) {
            (*q)[(*len)++] = l->items[i];
        }
    }
    return true;
}

/* How many LINKED_DESPAWN relationships the world has, up to 2. */
/* Is e part of a cascade: does one of its linked relationships name a
 * dead target (whose despawn queued e's)? In a consistent world a live
 * source names a dead linked target only then. */
static bool rel_cascade_member(const weft_world *w, weft_entity e, const wf_archetype *arch)
{
    for (uint32_t i = 0; arch && i < arch->id_count; i++) {
        const wf_type_info *ti = wf_registry_get(&w->registry, arch->ids[i]);
        if (ti->rel_targets && (ti->rel_flags & WEFT_RELATIONSHIP_LINKED_DESPAWN)) {
            weft_entity t = wf_rel_target(w, e, ti);
            if (t && !wf_entity_live(w, t)) {
                return true;
            }
        }
    }
    return false;
}

weft_status wf_rel_prepare_despawn(weft_world *w, weft_entity e, const wf_archetype *arch)
{
    /* Records the target hooks will queue: a try-remove per source of a
     * plain relationship, a try-despawn per node of a linked subtree (and
     * the try-removes of the subtree's own plain lists), over every linked
     * relationship of every node reached. A cascade member's despawn
     * needs nothing: the cascade's root reserved for its whole subtree,
     * and the member must not fail now (an allocation here could, and
     * would leave it naming its dead parent). Walked breadth first with a
     * scratch queue. */
    if (rel_cascade_member(w, e, arch)) {
        return WEFT_OK;
    }
    uint64_t records = 0;
    weft_entity *q = NULL;
    uint32_t cap = 0;
    uint32_t len = 0;
    bool ok = true;
    /* With one linked relationship the subtree is a tree: every node is
     * reached once. With several, a node can be reached along each (a
     * child that its parent also owns): a set keeps it queued once, else
     * such shapes would be walked once per path. */
    rel_seen seen = {NULL, 0, 0};
    bool dedupe = w->registry.linked_rels > 1;
    weft_entity node = e;
    const wf_archetype *na = arch;
    for (uint32_t next = 0; ok;) {
        for (uint32_t i = 0; na && i < na->id_count && ok; i++) {
            const wf_type_info *tt = wf_registry_get(&w->registry, na->ids[i]);
            if (!tt->rel_source) {
                continue;
            }
            const wf_type_info *rel = wf_registry_get(&w->registry, tt->rel_source);
            const wf_rel_list *l = wf_rel_list_of(w, node, rel);
            if (!l || l->count == 0) {
                continue;
            }
            records += (uint64_t)l->count;
            if (rel->rel_flags & WEFT_RELATIONSHIP_LINKED_DESPAWN) {
                /* the set starts with the root, at the first push */
                ok = !dedupe || seen.used > 0 || rel_seen_add(w, &seen, e) > 0;
                ok = ok && rel_queue_push(w, &q, &cap, &len, l, dedupe ? &seen : NULL);
            }
        }
        if (next == len) {
            break;
        }
        if ((int64_t)len > w->entities.live) {
            /* more cascade members than entities: a cycle (restore and
             * relate refuse to make one); stop instead of growing forever */
            if (q) {
                wf_free(&w->alloc, q, (size_t)cap * sizeof *q, _Alignof(weft_entity));
            }
            rel_seen_free(w, &seen);
            return wf_error(w, WEFT_ERR_RELATIONSHIP,
                            "despawn of entity %u:%u: a linked relationship forms a cycle "
                            "(weft_world_check, INV-12, names it)",
                            (uint32_t)e, (uint32_t)(e >> 32));
        }
        node = q[next++];
        const wf_record *r = wf_entity_live(w, node);
        na = r ? wf_world_archetype(w, r->arch) : NULL;
    }
    if (q) {
        wf_free(&w->alloc, q, (size_t)cap * sizeof *q, _Alignof(weft_entity));
    }
    rel_seen_free(w, &seen);
    if (!ok || (records && !wf_cmds_reserve(&w->cmds, records, WF_CMD_PLAIN_BYTES))) {
        return wf_error(w, WEFT_ERR_OUT_OF_MEMORY,
                        "out of memory preparing the despawn of entity %u:%u (relationship "
                        "cascade)",
                        (uint32_t)e, (uint32_t)(e >> 32));
    }
    return WEFT_OK;
}

/* ---- registration ---- */

weft_component wf_relationship_register(weft_world *w, const char *name, uint32_t flags)
{
    size_t len = strlen(name);
    char tname[WF_ERROR_LEN];
    if (len + sizeof ".targets" > sizeof tname) {
        wf_error(w, WEFT_ERR_INVALID_ARG, "relationship name '%s' is too long", name);
        return 0;
    }
    memcpy(tname, name, len);
    memcpy(tname + len, ".targets", sizeof ".targets");
    if (wf_registry_lookup(&w->registry, name) || wf_registry_lookup(&w->registry, tname)) {
        wf_error(w, WEFT_ERR_ALREADY_EXISTS, "relationship '%s' is already registered", name);
        return 0;
    }
    if (w->registry.count + 2u > WF_MAX_COMPONENTS) {
        /* a relationship is two components: both must fit */
        wf_error(w, WEFT_ERR_CAPACITY,
                 "relationship '%s': the world has %u components and the limit is %u "
                 "(a relationship takes two)", name, w->registry.count, WF_MAX_COMPONENTS);
        return 0;
    }
    weft_component_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = name;
    sd.size = sizeof(weft_entity);
    sd.align = _Alignof(weft_entity);
    sd.flags = WEFT_COMPONENT_IMMUTABLE;
    sd.lifecycle.on_insert = rel_on_insert;
    sd.lifecycle.on_replace = rel_on_replace;
    weft_component_desc td;
    memset(&td, 0, sizeof td);
    td.name = tname;
    td.size = sizeof(wf_rel_list);
    td.align = _Alignof(wf_rel_list);
    td.flags = WEFT_COMPONENT_IMMUTABLE;
    td.hooks.ctor = rel_list_ctor;
    td.hooks.dtor = rel_list_dtor;
    td.hooks.copy = rel_list_copy;
    td.hooks.user = w;
    td.lifecycle.on_despawn = rel_on_despawn;
    wf_type_info *src = wf_registry_add(&w->registry, &w->alloc, &sd, (uint32_t)sd.size,
                                        (uint32_t)sd.align, WEFT_STORAGE_TABLE);
    if (!src) {
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory registering '%s'", name);
        return 0;
    }
    wf_type_info *tgt = wf_registry_add(&w->registry, &w->alloc, &td, (uint32_t)td.size,
                                        (uint32_t)td.align, WEFT_STORAGE_TABLE);
    if (!tgt) {
        wf_registry_pop(&w->registry, &w->alloc);
        wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory registering '%s'", tname);
        return 0;
    }
    src->rel_targets = tgt->id;
    src->rel_flags = flags & ~(uint32_t)WEFT_RELATIONSHIP_LINKED_DESPAWN;
    if (flags & WEFT_RELATIONSHIP_LINKED_DESPAWN) {
        wf_registry_mark_linked(&w->registry, src);
    }
    tgt->rel_source = src->id;
    return src->id;
}

weft_component wf_child_of(weft_world *w)
{
    if (!w->child_of) {
        w->child_of = wf_relationship_register(w, "weft.ChildOf",
                                               WEFT_RELATIONSHIP_LINKED_DESPAWN);
    }
    return w->child_of;
}

const wf_type_info *wf_rel_info(const weft_world *w, weft_component rel)
{
    const wf_type_info *ti = wf_registry_get(&w->registry, rel);
    return ti && ti->rel_targets ? ti : NULL;
}

const weft_entity *wf_rel_sources(const weft_world *w, weft_entity target,
                                  const wf_type_info *rel, int32_t *out_count)
{
    const wf_rel_list *l = rel ? wf_rel_list_of(w, target, rel) : NULL;
    if (!l || l->count == 0) {
        return NULL;
    }
    if (out_count) {
        *out_count = l->count;
    }
    return l->items;
}

weft_status wf_relate(weft_world *w, weft_entity source, const wf_type_info *rel,
                      weft_entity target)
{
    wf_record *rec;
    weft_status st = wf_entity_check(w, target, &rec);
    if (st != WEFT_OK) {
        return st;
    }
    if (source == target) {
        return wf_error(w, WEFT_ERR_RELATIONSHIP,
                        "weft_relate: entity %u:%u cannot be related to itself through '%s'",
                        (uint32_t)source, (uint32_t)(source >> 32), rel->name);
    }
    if (wf_rel_would_cycle(w, source, rel, target)) {
        return wf_error(w, WEFT_ERR_RELATIONSHIP,
                        "weft_relate: entity %u:%u is an ancestor of %u:%u through '%s': "
                        "relating them would form a cycle",
                        (uint32_t)source, (uint32_t)(source >> 32), (uint32_t)target,
                        (uint32_t)(target >> 32), rel->name);
    }
    if (w->iter_depth) {
        /* deferred: recorded as the insert of the source component */
        return wf_entity_insert(w, source, rel->id, &target, sizeof target, "weft_insert");
    }
    if (wf_world_refuse_shared(w, "weft_relate")) {
        return WEFT_ERR_WRONG_PHASE;
    }
    wf_record *srec;
    st = wf_entity_check(w, source, &srec);
    if (st != WEFT_OK) {
        return st;
    }
    /* The target's list and the hooks' records are reserved first, so the
     * relationship lands in both directions or not at all; admitted and
     * prepared here, the insert does not do either again. */
    bool added = false;
    st = wf_rel_prepare_relate(w, rel, target, 1, &added);
    if (st != WEFT_OK) {
        return st;
    }
    weft_value v = {rel->id, sizeof target, &target};
    st = wf_commit_insert_admitted(w, source, &v, 1);
    if (st != WEFT_OK) {
        wf_rel_unprepare_relate(w, rel, target, added);
    }
    if (WF_UNLIKELY(w->cmds.count || w->events.has_dead)) {
        wf_world_settle(w); /* what the hooks deferred (as every structural call) */
    }
    return st;
}

/* src/app/subapp.c - sub-apps: creation, the per-update extraction and
 * update, entity sync between the worlds, and the pipeline thread.
 * SPDX-License-Identifier: MIT
 *
 * See subapp.h for the records; the entry points (src/api/api_subapp.c)
 * check their arguments and call in here. One update of the parent runs,
 * for each sub-app in order of addition (sub_frame): collect the frame in
 * flight (pipelined), sync entities, run the Extract schedule with the
 * main world read-only, then update the sub-app inline or hand it to its
 * thread. Extraction is therefore the one place where both worlds are
 * touched, and it is ordered after the sub-app's previous frame (the
 * wait) and before its next one (the hand-off): pipelined or not, the
 * sub-world sees the same extractions in the same order, which is what
 * makes its per-frame results identical.
 *
 * Entity sync (sync): twins of main entities whose SubEntity went (an
 * observer of its removal queues them, so despawning a main entity is
 * enough) are despawned; main entities that lost the sync tag lose
 * SubEntity; tagged entities without SubEntity get a twin. Candidates are
 * collected before any change, in query order, which follows from the
 * main world's own deterministic order.
 */
#include "app/subapp.h"
#include "world/component.h"
#include "world/entity.h"
#include "world/iteration.h"

#include <stdio.h>
#include <string.h>

#define SUB_ALIGN _Alignof(uint64_t)

/* ---- records ---- */

static wf_subs *subs_of(const weft_app *a)
{
    return (wf_subs *)a->subs;
}

wf_sub *wf_sub_of(const weft_app *sub)
{
    if (!sub->parent || !wf_app_ok(sub->parent)) {
        return NULL;
    }
    wf_subs *l = subs_of(sub->parent);
    for (uint32_t i = 0; l && i < l->n; i++) {
        if (l->v[i]->app == sub) {
            return l->v[i];
        }
    }
    return NULL;
}

static bool grow_entities(wf_allocator *a, weft_entity **v, uint32_t *cap, uint64_t need)
{
    if (need <= *cap) {
        return true;
    }
    uint32_t nc = wf_grow_cap(*cap, need, 64u, UINT32_MAX / 2, sizeof **v);
    if (nc == 0) {
        return false;
    }
    weft_entity *nv = wf_alloc(a, (size_t)nc * sizeof *nv, SUB_ALIGN);
    if (!nv) {
        return false;
    }
    if (*cap) {
        memcpy(nv, *v, (size_t)*cap * sizeof *nv);
    }
    wf_free(a, *v, (size_t)*cap * sizeof **v, SUB_ALIGN);
    *v = nv;
    *cap = nc;
    return true;
}

/* ---- entity sync ---- */

/* Observer of SubEntity's removal in the main world (remove, despawn):
 * the twin is queued, despawned at the next sync (the sub-world may be
 * busy with a pipelined frame now). */
static void sub_entity_removed(weft_world *world, weft_trigger *trigger, void *user)
{
    wf_sub *s = user;
    const weft_entity *twin =
        wf_entity_get(world, trigger->entity, s->sub_entity, sizeof(weft_entity));
    if (!twin || *twin == 0) {
        return;
    }
    if (!grow_entities(&s->parent->alloc, &s->dead, &s->cap_dead, (uint64_t)s->ndead + 1)) {
        wf_error(world, WEFT_ERR_OUT_OF_MEMORY,
                 "sub-app '%s': out of memory queueing the despawn of a twin", s->name);
        return;
    }
    s->dead[s->ndead++] = *twin;
}

/* Scratch list of main entities collected from a query before changes. */
typedef struct ent_list {
    weft_entity *v;
    uint32_t n, cap;
} ent_list;

static weft_status collect(wf_sub *s, weft_query *q, ent_list *out)
{
    weft_world *main = s->parent->world;
    out->n = 0;
    weft_iter it;
    weft_status st = wf_world_query_iter(main, q, &it, "weft_query_iter");
    if (st != WEFT_OK) {
        return st;
    }
    while (wf_world_iter_next(&it)) {
        int32_t n = wf_world_iter_count(&it);
        const weft_entity *ents = wf_world_iter_entities(&it);
        if (!grow_entities(&s->parent->alloc, &out->v, &out->cap, (uint64_t)out->n + (uint64_t)n)) {
            wf_world_iter_fini(&it);
            return wf_error(main, WEFT_ERR_OUT_OF_MEMORY,
                            "sub-app '%s': out of memory syncing entities", s->name);
        }
        memcpy(out->v + out->n, ents, (size_t)n * sizeof *ents);
        out->n += (uint32_t)n;
    }
    return WEFT_OK;
}

static void list_free(wf_sub *s, ent_list *l)
{
    wf_free(&s->parent->alloc, l->v, (size_t)l->cap * sizeof *l->v, SUB_ALIGN);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* Despawns every entity of world w (clear_every_frame). */
static weft_status clear_world(weft_world *w)
{
    weft_status first = WEFT_OK;
    for (uint32_t i = w->entities.count; i-- > 0;) {
        const wf_record *r = &w->entities.records[i];
        if (r->arch == WF_ARCH_DEAD) {
            continue;
        }
        weft_entity e = ((uint64_t)r->gen << 32) | i;
        if (!wf_entity_alive(w, e)) {
            continue; /* reserved, not yet live */
        }
        weft_status st = wf_entity_despawn(w, e, "weft_despawn");
        if (first == WEFT_OK) {
            first = st;
        }
    }
    return first;
}

/* Gives each entity of `l` a new twin and points its SubEntity at it. */
static weft_status make_twins(wf_sub *s, const ent_list *l)
{
    weft_world *main = s->parent->world;
    weft_world *sw = s->app->world;
    for (uint32_t i = 0; i < l->n; i++) {
        weft_entity m = l->v[i];
        weft_value v = {s->main_entity, sizeof m, &m};
        weft_entity twin = wf_entity_spawn_with(sw, &v, 1, "weft_spawn_with");
        if (!twin) {
            return wf_error(main, wf_error_last(sw),
                            "sub-app '%s': cannot spawn the twin of %u:%u: %s", s->name,
                            wf_handle_index(m), wf_handle_gen(m),
                            wf_error_last_message(sw));
        }
        weft_status st =
            wf_entity_insert(main, m, s->sub_entity, &twin, sizeof twin, "weft_insert");
        if (st != WEFT_OK) {
            wf_entity_despawn(sw, twin, "weft_despawn");
            return st;
        }
    }
    return WEFT_OK;
}

static weft_status sync(wf_sub *s)
{
    weft_world *main = s->parent->world;
    weft_world *sw = s->app->world;
    ent_list l = {NULL, 0, 0};
    weft_status st = WEFT_OK;
    if (s->clear) {
        st = clear_world(sw);
        s->ndead = 0; /* every twin went with the world's entities */
        if (st == WEFT_OK) {
            st = collect(s, s->q_all, &l);
        }
        if (st == WEFT_OK) {
            st = make_twins(s, &l);
        }
    }
    if (st == WEFT_OK) {
        st = collect(s, s->q_gone, &l);
    }
    for (uint32_t i = 0; st == WEFT_OK && i < l.n; i++) {
        /* the observer queues the twin */
        st = wf_entity_remove(main, l.v[i], s->sub_entity, "weft_remove");
    }
    for (uint32_t i = 0; st == WEFT_OK && i < s->ndead; i++) {
        if (wf_entity_alive(sw, s->dead[i])) {
            st = wf_entity_despawn(sw, s->dead[i], "weft_despawn");
        }
    }
    if (st == WEFT_OK) {
        s->ndead = 0;
        st = collect(s, s->q_new, &l);
    }
    if (st == WEFT_OK) {
        st = make_twins(s, &l);
    }
    list_free(s, &l);
    return st;
}

/* ---- frames and the pipeline ---- */

static void keep_first(weft_status *first, weft_status st)
{
    if (*first == WEFT_OK && st != WEFT_OK) {
        *first = st;
    }
}

static void sub_thread(void *arg)
{
    wf_sub *s = arg;
    wf_mutex_lock(&s->mu);
    for (;;) {
        while (s->state != WF_SUB_QUEUED && !s->quit) {
            wf_cond_wait(&s->cv, &s->mu);
        }
        if (s->state != WF_SUB_QUEUED) {
            break;
        }
        double dt = s->dt;
        wf_mutex_unlock(&s->mu);
        /* the sub-app and its world are this thread's until DONE */
        weft_status st = wf_app_update(s->app, dt);
        wf_mutex_lock(&s->mu);
        s->frame_status = st;
        s->state = WF_SUB_DONE;
        wf_cond_broadcast(&s->cv);
    }
    wf_mutex_unlock(&s->mu);
}

weft_status wf_sub_wait(wf_sub *s)
{
    if (!s->thread_up) {
        return WEFT_OK;
    }
    wf_mutex_lock(&s->mu);
    while (s->state == WF_SUB_QUEUED) {
        wf_cond_wait(&s->cv, &s->mu);
    }
    bool done = s->state == WF_SUB_DONE;
    weft_status st = done ? s->frame_status : WEFT_OK;
    s->state = WF_SUB_IDLE;
    s->frame_status = WEFT_OK;
    wf_mutex_unlock(&s->mu);
    if (done) {
        s->frames++;
    }
    if (st != WEFT_OK) {
        wf_error(s->parent->world, st, "sub-app '%s': %s", s->name,
                 wf_error_last_message(s->app->world));
    }
    return st;
}

static bool thread_start(wf_sub *s)
{
    if (s->thread_up) {
        return true;
    }
    s->state = WF_SUB_IDLE;
    s->quit = false;
    if (!wf_thread_create(&s->thread, sub_thread, s)) {
        return false;
    }
    s->thread_up = true;
    return true;
}

static void thread_stop(wf_sub *s)
{
    if (!s->thread_up) {
        return;
    }
    wf_sub_wait(s);
    wf_mutex_lock(&s->mu);
    s->quit = true;
    wf_cond_broadcast(&s->cv);
    wf_mutex_unlock(&s->mu);
    wf_thread_join(&s->thread);
    s->thread_up = false;
}

/* Runs the Extract schedule with the main world read-only. */
static weft_status extract(wf_sub *s, double dt)
{
    weft_world *main = s->parent->world;
    /* a fresh tick: what was written before this extraction is older than
     * now_tick, and the tick taken after it makes what is written later
     * newer, so each change is seen by exactly one extraction */
    s->now_tick = ++main->change_tick;
    main->read_only = true;
    main->busy++;
    s->extracting = true;
    weft_status st = wf_schedule_run(s->app->world, s->extract, dt);
    s->extracting = false;
    main->busy--;
    main->read_only = false;
    s->last_tick = s->now_tick;
    s->ever_extracted = true;
    ++main->change_tick;
    return st;
}

/* Keeps the first failure of a frame and copies the sub-world's message
 * for it into the main world's slot (where weft_app_update's errors go). */
static void note(wf_sub *s, weft_status *first, weft_status st, const char *what)
{
    if (st != WEFT_OK && *first == WEFT_OK) {
        *first = st;
        wf_error(s->parent->world, st, "sub-app '%s': %s%s", s->name, what,
                 wf_error_last_message(s->app->world));
    }
}

static weft_status sub_frame(wf_sub *s, double dt)
{
    weft_status first = wf_sub_wait(s);
    keep_first(&first, sync(s)); /* its errors are the main world's already */
    note(s, &first, extract(s, dt), "extraction: ");
    if (s->app->phase != WF_APP_READY) {
        /* plugins are set up on the driver, never on the pipeline thread */
        weft_status st = wf_app_setup(s->app);
        if (st != WEFT_OK) {
            note(s, &first, st, "setup: ");
            return first;
        }
    }
    if (s->pipelined && thread_start(s)) {
        wf_mutex_lock(&s->mu);
        s->dt = dt;
        s->state = WF_SUB_QUEUED;
        wf_cond_broadcast(&s->cv);
        wf_mutex_unlock(&s->mu);
        return first;
    }
    note(s, &first, wf_app_update(s->app, dt), "");
    s->frames++;
    return first;
}

static weft_status subs_update(weft_app *a, double dt)
{
    wf_subs *l = subs_of(a);
    weft_status first = WEFT_OK;
    for (uint32_t i = 0; i < l->n; i++) {
        keep_first(&first, sub_frame(l->v[i], dt));
    }
    return first;
}

static void sub_free(wf_sub *s)
{
    weft_app *parent = s->parent;
    weft_world *main = parent->world;
    thread_stop(s);
    if (s->obs) {
        wf_observer_remove(main, s->obs);
    }
    wf_world_query_drop(main, s->q_new, "weft_query_destroy");
    wf_world_query_drop(main, s->q_gone, "weft_query_destroy");
    wf_world_query_drop(main, s->q_all, "weft_query_destroy");
    while (s->extracts) {
        wf_extract *x = s->extracts;
        s->extracts = x->next;
        wf_extract_free(s, x);
    }
    if (s->app) {
        wf_app_destroy(s->app);
    }
    wf_free(&parent->alloc, s->dead, (size_t)s->cap_dead * sizeof *s->dead, SUB_ALIGN);
    if (s->name) {
        wf_strfree(&parent->alloc, s->name);
    }
    wf_cond_fini(&s->cv);
    wf_mutex_fini(&s->mu);
    wf_free(&parent->alloc, s, sizeof *s, _Alignof(wf_sub));
}

static void subs_fini(weft_app *a)
{
    wf_subs *l = subs_of(a);
    /* the pipelines first: no frame may run while another sub-app goes */
    for (uint32_t i = 0; i < l->n; i++) {
        thread_stop(l->v[i]);
    }
    for (uint32_t i = l->n; i-- > 0;) {
        sub_free(l->v[i]);
    }
    wf_free(&a->alloc, l->v, (size_t)l->cap * sizeof *l->v, SUB_ALIGN);
    wf_free(&a->alloc, l, sizeof *l, _Alignof(wf_subs));
    a->subs = NULL;
    a->subs_update = NULL;
    a->subs_fini = NULL;
}

/* ---- creation ---- */

/* The main-world component `name` of `size` bytes: found (same shape) or
 * registered. 0 with the error recorded. */
static weft_component main_component(weft_world *w, const char *name, size_t size)
{
    weft_component c = wf_registry_lookup(&w->registry, name);
    if (c) {
        const wf_type_info *ti = wf_component_known(w, c);
        if (!ti || ti->size != size) {
            wf_error(w, WEFT_ERR_ALREADY_EXISTS,
                     "weft_app_add_sub_app: the world has a component '%s' of another size",
                     name);
            return 0;
        }
        return c;
    }
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    return wf_component_register(w, &d);
}

static weft_query *make_query(weft_world *w, weft_component a, weft_oper oa, weft_component b,
                              weft_oper ob)
{
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0].id = a;
    q.terms[0].oper = oa;
    q.terms[1].id = b;
    q.terms[1].oper = ob;
    q.term_count = 2;
    return wf_world_query_create(w, &q, "weft_query_create");
}

weft_app *wf_sub_app_add(weft_app *app, const weft_sub_app_desc *desc)
{
    weft_world *main = app->world;
    const char *fn = "weft_app_add_sub_app";
    const weft_world_desc *wd = &desc->world_desc;
    wf_subs *l = subs_of(app);
    for (uint32_t i = 0; l && i < l->n; i++) {
        if (strcmp(l->v[i]->name, desc->name) == 0) {
            wf_error(main, WEFT_ERR_ALREADY_EXISTS, "%s: the app already has a sub-app '%s'",
                     fn, desc->name);
            return NULL;
        }
    }
    char cname[256];
    snprintf(cname, sizeof cname, "%s.Sync", desc->name);
    weft_component sync_tag = main_component(main, cname, 0);
    snprintf(cname, sizeof cname, "%s.SubEntity", desc->name);
    weft_component sub_entity = sync_tag ? main_component(main, cname, sizeof(weft_entity)) : 0;
    if (!sub_entity) {
        return NULL;
    }
    /* a clone (weft_clone, a scene) gets its own twin at the next sync
     * instead of sharing this one */
    wf_registry_get(&main->registry, sub_entity)->no_clone = true;
    /* everything below is undone on failure */
    if (!l) {
        l = wf_calloc(&app->alloc, sizeof *l, _Alignof(wf_subs));
        if (!l) {
            goto oom;
        }
        app->subs = l;
    }
    if (l->n == l->cap) {
        uint32_t nc = wf_grow_cap(l->cap, (uint64_t)l->n + 1, 4u, UINT32_MAX / 2, sizeof *l->v);
        wf_sub **nv = nc ? wf_alloc(&app->alloc, (size_t)nc * sizeof *nv, SUB_ALIGN) : NULL;
        if (!nv) {
            goto oom;
        }
        if (l->n) {
            memcpy(nv, l->v, (size_t)l->n * sizeof *nv);
        }
        wf_free(&app->alloc, l->v, (size_t)l->cap * sizeof *l->v, SUB_ALIGN);
        l->v = nv;
        l->cap = nc;
    }
    wf_sub *s = wf_calloc(&app->alloc, sizeof *s, _Alignof(wf_sub));
    if (!s) {
        goto oom;
    }
    if (!wf_mutex_init(&s->mu)) {
        wf_free(&app->alloc, s, sizeof *s, _Alignof(wf_sub));
        goto oom;
    }
    if (!wf_cond_init(&s->cv)) {
        wf_mutex_fini(&s->mu);
        wf_free(&app->alloc, s, sizeof *s, _Alignof(wf_sub));
        goto oom;
    }
    s->parent = app;
    s->sync = sync_tag;
    s->sub_entity = sub_entity;
    s->clear = desc->clear_every_frame;
    s->pipelined = desc->pipelined;
    s->name = wf_strdup(&app->alloc, desc->name, NULL);
    weft_app_desc ad;
    memset(&ad, 0, sizeof ad);
    ad.world_desc = *wd;
    s->app = s->name ? wf_app_new(NULL, &ad) : NULL;
    if (s->app) {
        s->app->parent = app;
        weft_world *sw = s->app->world;
        weft_component_desc md;
        memset(&md, 0, sizeof md);
        md.name = "MainEntity";
        md.size = sizeof(weft_entity);
        s->main_entity = wf_component_register(sw, &md);
        if (s->main_entity) {
            /* a cloned twin must not claim its original's main entity */
            wf_registry_get(&sw->registry, s->main_entity)->no_clone = true;
        }
        s->extract =
            s->main_entity ? wf_schedule_create(sw, "Extract", "weft_schedule_create") : NULL;
        if (s->extract && desc->share_threads &&
            wf_exec_share(sw, main) != WEFT_OK) {
            s->extract = NULL; /* out of memory (the schedule goes with the world) */
        }
    }
    if (s->extract) {
        s->q_new = make_query(main, sync_tag, WEFT_OPER_WITH, sub_entity, WEFT_OPER_WITHOUT);
        s->q_gone = make_query(main, sub_entity, WEFT_OPER_WITH, sync_tag, WEFT_OPER_WITHOUT);
        s->q_all = make_query(main, sync_tag, WEFT_OPER_WITH, sub_entity, WEFT_OPER_WITH);
    }
    if (s->q_new && s->q_gone && s->q_all) {
        weft_observer_desc od;
        memset(&od, 0, sizeof od);
        od.event = WEFT_EVENT_REMOVE;
        od.component = sub_entity;
        od.fn = sub_entity_removed;
        od.user = s;
        s->obs = wf_observer_add(main, &od);
    }
    if (!s->obs) {
        sub_free(s);
        goto oom;
    }
    l->v[l->n++] = s;
    app->subs_update = subs_update;
    app->subs_fini = subs_fini;
    return s->app;
oom:
    if (l && l->n == 0) {
        wf_free(&app->alloc, l->v, (size_t)l->cap * sizeof *l->v, SUB_ALIGN);
        wf_free(&app->alloc, l, sizeof *l, _Alignof(wf_subs));
        app->subs = NULL;
    }
    wf_error(main, WEFT_ERR_OUT_OF_MEMORY, "%s: out of memory creating sub-app '%s'", fn,
             desc->name);
    return NULL;
}

/* ---- lookups and control ---- */

weft_app *wf_sub_app_find(weft_app *app, const char *name)
{
    wf_subs *l = subs_of(app);
    for (uint32_t i = 0; l && i < l->n; i++) {
        if (strcmp(l->v[i]->name, name) == 0) {
            return l->v[i]->app;
        }
    }
    wf_error(app->world, WEFT_ERR_NOT_FOUND, "weft_app_sub_app: no sub-app named '%s'", name);
    return NULL;
}

bool wf_sub_busy(wf_sub *s)
{
    if (!s->thread_up) {
        return false;
    }
    wf_mutex_lock(&s->mu);
    bool busy = s->state == WF_SUB_QUEUED;
    wf_mutex_unlock(&s->mu);
    return busy;
}

weft_status wf_sub_set_pipelined(wf_sub *s, bool on)
{
    if (s->parent->updating) {
        return wf_error(s->parent->world, WEFT_ERR_WRONG_PHASE,
                        "weft_sub_app_set_pipelined: called during an update");
    }
    if (on) {
#if !WEFT_THREADS
        return wf_error(s->parent->world, WEFT_ERR_UNSUPPORTED,
                        "weft_sub_app_set_pipelined: a pipelined sub-app needs its own thread, "
                        "and this build has no threads (WEFT_THREADS=OFF)");
#else
        if (!thread_start(s)) {
            return wf_error(s->parent->world, WEFT_ERR_INTERNAL,
                            "weft_sub_app_set_pipelined: the sub-app's thread could not start");
        }
        s->pipelined = true;
        return WEFT_OK;
#endif
    }
    s->pipelined = false;
    weft_status st = wf_sub_wait(s);
    thread_stop(s);
    return st;
}

weft_entity wf_sub_map(wf_sub *s, weft_entity main_e, const weft_world *rec, const char *fn)
{
    weft_world *main = s->parent->world;
    weft_world *sw = s->app->world;
    if (!wf_entity_alive(main, main_e)) {
        wf_error(rec, main_e ? WEFT_ERR_STALE_ENTITY : WEFT_ERR_INVALID_ENTITY,
                 "%s: main entity %u:%u is not alive", fn, wf_handle_index(main_e),
                 wf_handle_gen(main_e));
        return 0;
    }
    const weft_entity *twin = wf_entity_get(main, main_e, s->sub_entity, sizeof(weft_entity));
    if (!twin) {
        wf_error(rec, WEFT_ERR_NOT_FOUND,
                 "%s: main entity %u:%u has no twin in sub-app '%s' (not tagged, or not "
                 "synced yet)",
                 fn, wf_handle_index(main_e), wf_handle_gen(main_e), s->name);
        return 0;
    }
    if (!wf_entity_alive(sw, *twin)) {
        wf_error(rec, WEFT_ERR_STALE_ENTITY,
                 "%s: the twin %u:%u of main entity %u:%u in sub-app '%s' was despawned", fn,
                 wf_handle_index(*twin), wf_handle_gen(*twin),
                 wf_handle_index(main_e), wf_handle_gen(main_e), s->name);
        return 0;
    }
    return *twin;
}

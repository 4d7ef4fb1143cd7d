/* src/api/api_subapp.c - sub-apps: creation, the per-update extraction
 * and update, entity sync between the worlds, and the pipeline thread.
 * SPDX-License-Identifier: MIT
 *
 * See src/app/subapp.h for the records. One update of the parent runs,
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

#include <stdio.h>
#include <string.h>

#define SUB_ALIGN _Alignof(uint64_t)

/* ---- records ---- */

static wf_subs *subs_of(const weft_app *a)
{
    return (wf_subs *)a->subs;
}

/* The record of sub-app `sub`, or NULL when it is none. */
static wf_sub *sub_record(const weft_app *sub)
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
    const weft_entity *twin = weft_get(world, trigger->entity, s->sub_entity,
                                       sizeof(weft_entity));
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
    weft_status st = weft_query_iter(main, q, &it);
    if (st != WEFT_OK) {
        return st;
    }
    while (weft_iter_next(&it)) {
        int32_t n = weft_iter_count(&it);
        const weft_entity *ents = weft_iter_entities(&it);
        if (!grow_entities(&s->parent->alloc, &out->v, &out->cap, (uint64_t)out->n + (uint64_t)n)) {
            weft_iter_fini(&it);
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
        if (!weft_is_alive(w, e)) {
            continue; /* reserved, not yet live */
        }
        weft_status st = weft_despawn(w, e);
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
        weft_entity twin = weft_spawn_with(sw, &v, 1);
        if (!twin) {
            return wf_error(main, weft_last_status(sw),
                            "sub-app '%s': cannot spawn the twin of %u:%u: %s", s->name,
                            weft_entity_index(m), weft_entity_generation(m),
                            weft_last_error(sw));
        }
        weft_status st = weft_insert(main, m, s->sub_entity, &twin, sizeof twin);
        if (st != WEFT_OK) {
            weft_despawn(sw, twin);
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
        st = weft_remove(main, l.v[i], s->sub_entity); /* the observer queues the twin */
    }
    for (uint32_t i = 0; st == WEFT_OK && i < s->ndead; i++) {
        if (weft_is_alive(sw, s->dead[i])) {
            st = weft_despawn(sw, s->dead[i]);
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

/* Waits for the frame in flight and collects its status (copied into the
 * main world's slot with the sub-app's name when it failed). */
static weft_status sub_wait(wf_sub *s)
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
                 weft_last_error(s->app->world));
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
    sub_wait(s);
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
    s->now_tick = weft_world_increment_change_tick(main);
    main->read_only = true;
    main->busy++;
    s->extracting = true;
    weft_status st = weft_schedule_run(s->extract, dt);
    s->extracting = false;
    main->busy--;
    main->read_only = false;
    s->last_tick = s->now_tick;
    s->ever_extracted = true;
    weft_world_increment_change_tick(main);
    return st;
}

/* Keeps the first failure of a frame and copies the sub-world's message
 * for it into the main world's slot (where weft_app_update's errors go). */
static void note(wf_sub *s, weft_status *first, weft_status st, const char *what)
{
    if (st != WEFT_OK && *first == WEFT_OK) {
        *first = st;
        wf_error(s->parent->world, st, "sub-app '%s': %s%s", s->name, what,
                 weft_last_error(s->app->world));
    }
}

static weft_status sub_frame(wf_sub *s, double dt)
{
    weft_status first = sub_wait(s);
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
        weft_observer_destroy(main, s->obs);
    }
    weft_query_destroy(main, s->q_new);
    weft_query_destroy(main, s->q_gone);
    weft_query_destroy(main, s->q_all);
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
    weft_component c = weft_component_lookup(w, name);
    if (c) {
        weft_component_info info;
        if (weft_component_info_get(w, c, &info) != WEFT_OK || info.size != size) {
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
    return weft_component_register(w, &d);
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
    return weft_query_create(w, &q);
}

WEFT_API weft_app *weft_app_add_sub_app(weft_app *app, const weft_sub_app_desc *desc)
{
    if (!wf_app_ok(app)) {
        return NULL;
    }
    weft_world *main = app->world;
    const char *fn = "weft_app_add_sub_app";
    if (wf_world_refuse_shared(main, fn)) {
        return NULL;
    }
    if (app->updating) {
        wf_error(main, WEFT_ERR_WRONG_PHASE, "%s: called during an update", fn);
        return NULL;
    }
    if (app->parent) {
        wf_error(main, WEFT_ERR_INVALID_ARG, "%s: a sub-app cannot have sub-apps", fn);
        return NULL;
    }
#if !WEFT_THREADS
    if (desc && desc->pipelined) {
        wf_error(main, WEFT_ERR_UNSUPPORTED, "%s: a pipelined sub-app needs its own thread, "
                 "and this build has no threads (WEFT_THREADS=OFF)", fn);
        return NULL;
    }
#endif
    if (!desc || desc->_start_canary || desc->_end_canary || !desc->name || !desc->name[0]) {
        wf_error(main, WEFT_ERR_INVALID_ARG, "%s: desc NULL, canary not 0 or no name", fn);
        return NULL;
    }
    const weft_world_desc *wd = &desc->world_desc;
    if (wd->_start_canary || wd->_end_canary || wd->entity_capacity_hint < 0 ||
        (wd->allocator.alloc == NULL) != (wd->allocator.free == NULL)) {
        wf_error(main, WEFT_ERR_INVALID_ARG, "%s: sub-app '%s': invalid world_desc", fn,
                 desc->name);
        return NULL;
    }
    if (desc->share_threads && main->sys && main->sys->lender) {
        wf_error(main, WEFT_ERR_INVALID_ARG,
                 "%s: share_threads, but the main world runs on another world's executor", fn);
        return NULL;
    }
    size_t nlen = strlen(desc->name);
    if (nlen > 200) {
        wf_error(main, WEFT_ERR_INVALID_ARG, "%s: name longer than 200 bytes", fn);
        return NULL;
    }
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
        uint32_t nc = l->cap ? l->cap * 2 : 4;
        wf_sub **nv = wf_alloc(&app->alloc, (size_t)nc * sizeof *nv, SUB_ALIGN);
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
    s->app = s->name ? weft_app_create(&ad) : NULL;
    if (s->app) {
        s->app->parent = app;
        weft_world *sw = s->app->world;
        weft_component_desc md;
        memset(&md, 0, sizeof md);
        md.name = "MainEntity";
        md.size = sizeof(weft_entity);
        s->main_entity = weft_component_register(sw, &md);
        if (s->main_entity) {
            /* a cloned twin must not claim its original's main entity */
            wf_registry_get(&sw->registry, s->main_entity)->no_clone = true;
        }
        s->extract = s->main_entity ? weft_schedule_create(sw, "Extract") : NULL;
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
        s->obs = weft_observer_create(main, &od);
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

WEFT_API weft_app *weft_app_sub_app(weft_app *app, const char *name)
{
    if (!wf_app_ok(app)) {
        return NULL;
    }
    if (!name) {
        wf_error(app->world, WEFT_ERR_INVALID_ARG, "weft_app_sub_app: name is NULL");
        return NULL;
    }
    wf_subs *l = subs_of(app);
    for (uint32_t i = 0; l && i < l->n; i++) {
        if (strcmp(l->v[i]->name, name) == 0) {
            return l->v[i]->app;
        }
    }
    wf_error(app->world, WEFT_ERR_NOT_FOUND, "weft_app_sub_app: no sub-app named '%s'", name);
    return NULL;
}

WEFT_API weft_app *weft_sub_app_parent(weft_app *sub)
{
    return wf_app_ok(sub) ? sub->parent : NULL;
}

/* The record of a sub-app argument, or NULL (INVALID_ARG recorded in its
 * world when it is an app but no sub-app). */
static wf_sub *sub_arg(const weft_app *sub, const char *fn)
{
    if (!wf_app_ok(sub)) {
        return NULL;
    }
    wf_sub *s = sub_record(sub);
    if (!s) {
        wf_error(sub->world, WEFT_ERR_INVALID_ARG, "%s: the app is no sub-app", fn);
    }
    return s;
}

WEFT_API weft_status weft_sub_app_wait(weft_app *sub)
{
    if (!wf_app_ok(sub)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    wf_sub *s = sub_arg(sub, "weft_sub_app_wait");
    if (!s) {
        return WEFT_ERR_INVALID_ARG;
    }
    return sub_wait(s);
}

WEFT_API weft_status weft_sub_app_set_pipelined(weft_app *sub, bool on)
{
    if (!wf_app_ok(sub)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    wf_sub *s = sub_arg(sub, "weft_sub_app_set_pipelined");
    if (!s) {
        return WEFT_ERR_INVALID_ARG;
    }
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
    weft_status st = sub_wait(s);
    thread_stop(s);
    return st;
}

WEFT_API int64_t weft_sub_app_frames(const weft_app *sub)
{
    wf_sub *s = wf_app_ok(sub) ? sub_record(sub) : NULL;
    return s ? s->frames : 0;
}

WEFT_API weft_component weft_sub_app_sync_tag(const weft_app *sub)
{
    wf_sub *s = sub_arg(sub, "weft_sub_app_sync_tag");
    return s ? s->sync : 0;
}

WEFT_API weft_component weft_sub_app_sub_entity(const weft_app *sub)
{
    wf_sub *s = sub_arg(sub, "weft_sub_app_sub_entity");
    return s ? s->sub_entity : 0;
}

WEFT_API weft_component weft_sub_app_main_entity(const weft_app *sub)
{
    wf_sub *s = sub_arg(sub, "weft_sub_app_main_entity");
    return s ? s->main_entity : 0;
}

/* The twin of main_e, or 0 with the error recorded in `rec` (the main
 * world, or the sub-world inside an extract system). */
weft_entity wf_sub_map(wf_sub *s, weft_entity main_e, const weft_world *rec, const char *fn)
{
    weft_world *main = s->parent->world;
    weft_world *sw = s->app->world;
    if (!weft_is_alive(main, main_e)) {
        wf_error(rec, main_e ? WEFT_ERR_STALE_ENTITY : WEFT_ERR_INVALID_ENTITY,
                 "%s: main entity %u:%u is not alive", fn, weft_entity_index(main_e),
                 weft_entity_generation(main_e));
        return 0;
    }
    const weft_entity *twin = weft_get(main, main_e, s->sub_entity, sizeof(weft_entity));
    if (!twin) {
        wf_error(rec, WEFT_ERR_NOT_FOUND,
                 "%s: main entity %u:%u has no twin in sub-app '%s' (not tagged, or not "
                 "synced yet)",
                 fn, weft_entity_index(main_e), weft_entity_generation(main_e), s->name);
        return 0;
    }
    if (!weft_is_alive(sw, *twin)) {
        wf_error(rec, WEFT_ERR_STALE_ENTITY,
                 "%s: the twin %u:%u of main entity %u:%u in sub-app '%s' was despawned", fn,
                 weft_entity_index(*twin), weft_entity_generation(*twin),
                 weft_entity_index(main_e), weft_entity_generation(main_e), s->name);
        return 0;
    }
    return *twin;
}

WEFT_API weft_entity weft_sub_app_map(weft_app *sub, weft_entity main_e)
{
    wf_sub *s = sub_arg(sub, "weft_sub_app_map");
    if (!s) {
        return 0;
    }
    if (s->thread_up) {
        wf_mutex_lock(&s->mu);
        bool busy = s->state == WF_SUB_QUEUED;
        wf_mutex_unlock(&s->mu);
        if (busy) {
            /* the twin's liveness is the sub-world's, which the frame owns */
            wf_error(s->parent->world, WEFT_ERR_WRONG_PHASE,
                     "weft_sub_app_map: a pipelined frame of '%s' is in flight "
                     "(weft_sub_app_wait first)",
                     s->name);
            return 0;
        }
    }
    return wf_sub_map(s, main_e, s->parent->world, "weft_sub_app_map");
}

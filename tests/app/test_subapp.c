// tests/app/test_subapp.c - sub-apps (weft_app_add_sub_app): the update
// order (main schedules, extraction, sub-app schedules), the three
// extraction forms as vectors (component with a dropping transform and
// change-only mode, resource extracted only when changed, instances in a
// map keyed by main entity, hashed by contents), a user extract system reading main queries,
// resources and messages, entity mapping under random spawn/despawn/tag
// churn against a reference map (retained, cleared and pipelined), and
// bad input: writes to the main world from extraction, a main query that
// writes, a sub-app name used twice, mapping a despawned entity, driving a
// sub-app directly. weft_clone of a synced entity gets a twin of its own.
// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "needs_threads.h"

#include "test_world.h"
#include "weft.h"

typedef struct vec2 {
    float x, y;
} vec2;

// ---- helpers ----

static weft_app *main_app(tw_fixture *f)
{
    weft_app_desc d;
    memset(&d, 0, sizeof d);
    d.world = f->w;
    weft_app *app = weft_app_create(&d);
    assert_non_null(app);
    return app;
}

static weft_app *add_sub(tw_fixture *f, weft_app *app, const char *name, bool clear,
                         bool pipelined)
{
    weft_sub_app_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.world_desc = tw_fixture_desc(f);
    d.clear_every_frame = clear;
    d.pipelined = pipelined;
    weft_app *sub = weft_app_add_sub_app(app, &d);
    assert_non_null(sub);
    assert_ptr_equal(weft_sub_app_parent(sub), app);
    return sub;
}

static weft_entity spawn_synced(weft_world *w, weft_app *sub, weft_component pos, vec2 v)
{
    weft_value vals[2] = {{pos, sizeof v, &v}, {weft_sub_app_sync_tag(sub), 0, NULL}};
    weft_entity e = weft_spawn_with(w, vals, 2);
    assert_int_not_equal(e, 0);
    return e;
}

// ---- the update order ----

typedef struct trace {
    char text[512];
} trace;

static void trace_add(trace *t, const char *s)
{
    size_t n = strlen(t->text);
    snprintf(t->text + n, sizeof t->text - n, "%s%s", n ? " " : "", s);
}

typedef struct trace_tag {
    trace *t;
    const char *name;
} trace_tag;

static void sys_trace(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    trace_tag *g = user;
    trace_add(g->t, g->name);
}

static void add_trace(weft_app *app, const char *label, trace_tag *g)
{
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = g->name;
    d.fn = sys_trace;
    d.user = g;
    assert_int_not_equal(weft_app_add_system(app, label, &d), 0);
}

static void subapp_update_order(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = main_app(f);
    weft_app *a = add_sub(f, app, "a", false, false);
    weft_app *b = add_sub(f, app, "b", false, false);
    trace t = {{0}};
    trace_tag g[6] = {{&t, "main.Update"}, {&t, "main.Last"}, {&t, "a.extract"},
                   {&t, "a.Update"},    {&t, "b.extract"}, {&t, "b.Startup"}};
    add_trace(app, WEFT_APP_UPDATE, &g[0]);
    add_trace(app, WEFT_APP_LAST, &g[1]);
    weft_extract_desc x;
    memset(&x, 0, sizeof x);
    x.system.name = "a.extract";
    x.system.fn = sys_trace;
    x.system.user = &g[2];
    assert_int_not_equal(weft_sub_app_add_extract(a, &x), 0);
    add_trace(a, WEFT_APP_UPDATE, &g[3]);
    x.system.name = "b.extract";
    x.system.user = &g[4];
    assert_int_not_equal(weft_sub_app_add_extract(b, &x), 0);
    add_trace(b, WEFT_APP_STARTUP, &g[5]);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_string_equal(t.text,
                        "main.Update main.Last a.extract a.Update b.extract b.Startup");
    t.text[0] = '\0';
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_string_equal(t.text, "main.Update main.Last a.extract a.Update b.extract");
    assert_int_equal(weft_sub_app_frames(a), 2);
    assert_ptr_equal(weft_app_sub_app(app, "b"), b);
    assert_null(weft_app_sub_app(app, "c"));
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "'c'");
    assert_null(weft_sub_app_parent(app));
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// ---- component extraction ----

typedef struct xform_stats {
    int calls;
} xform_stats;

// Doubles x; drops entities with x < 0.
static bool xform_pos(weft_entity e, const void *src, void *dst, void *user)
{
    (void)e;
    ((xform_stats *)user)->calls++;
    const vec2 *s = src;
    if (s->x < 0) {
        return false;
    }
    vec2 *d = dst;
    d->x = s->x * 2;
    d->y = s->y;
    return true;
}

static void extract_component_vector(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = main_app(f);
    weft_app *sub = add_sub(f, app, "render", false, false);
    weft_world *sw = weft_app_world(sub);
    weft_component pos = tw_comp(f->w, "Pos", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_component rpos = tw_comp(sw, "RPos", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    xform_stats st = {0};
    weft_extract_component_desc d;
    memset(&d, 0, sizeof d);
    d.main_component = pos;
    d.sub_component = rpos;
    d.transform = xform_pos;
    d.user = &st;
    assert_int_not_equal(weft_sub_app_extract_component(sub, &d), 0);
    weft_entity e1 = spawn_synced(f->w, sub, pos, (vec2){1, 2});
    weft_entity e2 = spawn_synced(f->w, sub, pos, (vec2){-1, 5});
    vec2 v3 = {3, 3};
    weft_entity e3 = weft_spawn_with(f->w, &(weft_value){pos, sizeof v3, &v3}, 1); // not tagged
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    weft_entity t1 = weft_sub_app_map(sub, e1);
    weft_entity t2 = weft_sub_app_map(sub, e2);
    assert_true(weft_is_alive(sw, t1) && weft_is_alive(sw, t2) && t1 != t2);
    assert_int_equal(weft_sub_app_map(sub, e3), 0);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "no twin");
    // each side holds the other's id
    const weft_entity *m1 = weft_get(sw, t1, weft_sub_app_main_entity(sub), sizeof(weft_entity));
    assert_non_null(m1);
    assert_int_equal(*m1, e1);
    const weft_entity *r1 = weft_get(f->w, e1, weft_sub_app_sub_entity(sub), sizeof(weft_entity));
    assert_non_null(r1);
    assert_int_equal(*r1, t1);
    const vec2 *p1 = weft_get(sw, t1, rpos, sizeof(vec2));
    assert_non_null(p1);
    assert_true(p1->x == 2.0f && p1->y == 2.0f);
    assert_false(weft_has(sw, t2, rpos)); // dropped by the transform
    assert_int_equal(st.calls, 2);
    weft_world_stats ss;
    weft_world_get_stats(sw, &ss);
    assert_int_equal(ss.live_entities, 2);
    // every frame re-extracts every entity (not change-only)
    vec2 *w1 = weft_get_mut(f->w, e1, pos, sizeof(vec2));
    w1->x = -4;
    vec2 *w2 = weft_get_mut(f->w, e2, pos, sizeof(vec2));
    w2->x = 7;
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(st.calls, 4);
    assert_false(weft_has(sw, t1, rpos)); // removed: the transform dropped it
    const vec2 *p2 = weft_get(sw, t2, rpos, sizeof(vec2));
    assert_non_null(p2);
    assert_true(p2->x == 14.0f && p2->y == 5.0f);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(st.calls, 6);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

static void extract_component_changed_only(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = main_app(f);
    weft_app *sub = add_sub(f, app, "render", false, false);
    weft_world *sw = weft_app_world(sub);
    weft_component pos = tw_comp(f->w, "Pos", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_component rpos = tw_comp(sw, "RPos", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    xform_stats st = {0};
    weft_extract_component_desc d;
    memset(&d, 0, sizeof d);
    d.main_component = pos;
    d.sub_component = rpos;
    d.transform = xform_pos;
    d.user = &st;
    d.changed_only = true;
    assert_int_not_equal(weft_sub_app_extract_component(sub, &d), 0);
    weft_entity e[4];
    for (int i = 0; i < 4; i++) {
        e[i] = spawn_synced(f->w, sub, pos, (vec2){(float)i, 0});
    }
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    // new twins: every one extracted (some twice: changed and newly synced)
    assert_true(st.calls >= 4);
    st.calls = 0;
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(st.calls, 0); // nothing changed
    vec2 *w = weft_get_mut(f->w, e[2], pos, sizeof(vec2));
    w->x = 10;
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(st.calls, 1);
    const vec2 *p = weft_get(sw, weft_sub_app_map(sub, e[2]), rpos, sizeof(vec2));
    assert_non_null(p);
    assert_true(p->x == 20.0f);
    // an entity tagged late, with an old value, is still extracted
    vec2 v = {5, 5};
    weft_entity late = weft_spawn_with(f->w, &(weft_value){pos, sizeof v, &v}, 1);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    st.calls = 0;
    assert_int_equal(weft_insert(f->w, late, weft_sub_app_sync_tag(sub), NULL, 0), WEFT_OK);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(st.calls, 1);
    p = weft_get(sw, weft_sub_app_map(sub, late), rpos, sizeof(vec2));
    assert_non_null(p);
    assert_true(p->x == 10.0f);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// ---- resource extraction ----

typedef struct settings {
    int32_t quality;
    int32_t version;
} settings;

static bool xform_settings(weft_entity e, const void *src, void *dst, void *user)
{
    assert_int_equal(e, 0);
    ((xform_stats *)user)->calls++;
    const settings *s = src;
    if (s->quality < 0) {
        return false;
    }
    *(settings *)dst = *s;
    ((settings *)dst)->version = 100 + s->quality;
    return true;
}

static void extract_resource_when_changed(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = main_app(f);
    weft_app *sub = add_sub(f, app, "render", false, false);
    weft_world *sw = weft_app_world(sub);
    weft_component ms = tw_comp(f->w, "Settings", sizeof(settings), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_component rs = tw_comp(sw, "RSettings", sizeof(settings), 0, WEFT_STORAGE_DEFAULT, 0);
    xform_stats st = {0};
    weft_extract_resource_desc d;
    memset(&d, 0, sizeof d);
    d.main_resource = ms;
    d.sub_resource = rs;
    d.transform = xform_settings;
    d.user = &st;
    assert_int_not_equal(weft_sub_app_extract_resource(sub, &d), 0);
    // absent in main: nothing
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(st.calls, 0);
    assert_false(weft_resource_has(sw, rs));
    settings s = {3, 0};
    assert_int_equal(weft_resource_insert(f->w, ms, &s, sizeof s), WEFT_OK);
    // the vector: (main action, expected calls after the update, value)
    struct {
        int action; // 0 none, 1 get_mut to quality q, 2 insert quality q, 3 remove
        int32_t q;
        int calls;
        int32_t version; // -1: absent in the sub-world
    } steps[] = {
        {0, 0, 1, 103},  {0, 0, 1, 103},  {1, 4, 2, 104}, {0, 0, 2, 104},
        {2, 4, 3, 104},  {1, -1, 4, -1},
        // dropped: while the sub-world lacks it, every extraction retries
        {0, 0, 5, -1},   {1, 6, 6, 106},  {0, 0, 6, 106},
        {3, 0, 6, -1},   {0, 0, 6, -1},   {2, 9, 7, 109}, {0, 0, 7, 109},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (steps[i].action == 1) {
            settings *p = weft_resource_get_mut(f->w, ms, sizeof *p);
            assert_non_null(p);
            p->quality = steps[i].q;
        } else if (steps[i].action == 2) {
            settings v = {steps[i].q, 0};
            assert_int_equal(weft_resource_insert(f->w, ms, &v, sizeof v), WEFT_OK);
        } else if (steps[i].action == 3) {
            assert_int_equal(weft_resource_remove(f->w, ms), WEFT_OK);
        }
        assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
        assert_int_equal(st.calls, steps[i].calls);
        if (steps[i].version < 0) {
            assert_false(weft_resource_has(sw, rs));
        } else {
            const settings *r = weft_resource_get(sw, rs, sizeof *r);
            assert_non_null(r);
            assert_int_equal(r->version, steps[i].version);
        }
    }
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// ---- instance extraction ----

static bool xform_instance(weft_entity e, const void *src, void *dst, void *user)
{
    (void)e;
    (void)user;
    const vec2 *s = src;
    if ((int)s->x % 2) {
        return false;
    }
    *(float *)dst = s->x + s->y;
    return true;
}

static void extract_instances_map(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = main_app(f);
    weft_app *sub = add_sub(f, app, "render", false, false);
    weft_world *sw = weft_app_world(sub);
    weft_component pos = tw_comp(f->w, "Pos", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_component tag = tw_comp(f->w, "Other", 0, 0, WEFT_STORAGE_DEFAULT, 0);
    weft_extract_instances_desc d;
    memset(&d, 0, sizeof d);
    d.map_name = "Instances";
    d.main_component = pos;
    d.instance_size = sizeof(float);
    d.extract = xform_instance;
    weft_component map = weft_sub_app_extract_instances(sub, &d);
    assert_int_not_equal(map, 0);
    weft_entity e[20];
    for (int i = 0; i < 20; i++) {
        vec2 v = {(float)i, 0.5f};
        weft_value vals[2] = {{pos, sizeof v, &v}, {tag, 0, NULL}};
        // two archetypes, so query order is not entity order
        e[i] = weft_spawn_with(f->w, vals, i % 3 ? 1 : 2);
    }
    assert_int_equal(weft_despawn(f->w, e[4]), WEFT_OK);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    const weft_instance_map *m = weft_resource_get(sw, map, sizeof *m);
    assert_non_null(m);
    assert_int_equal(m->count, 9); // even x, e[4] despawned
    assert_int_equal(m->instance_size, sizeof(float));
    for (int32_t i = 1; i < m->count; i++) {
        assert_true(m->keys[i - 1] < m->keys[i]);
    }
    for (int i = 0; i < 20; i++) {
        const float *v = weft_instance_map_get(m, e[i]);
        if (i % 2 || i == 4) {
            assert_null(v);
        } else {
            assert_non_null(v);
            assert_true(*v == (float)i + 0.5f);
        }
    }
    weft_world_stats ss;
    weft_world_get_stats(sw, &ss);
    assert_int_equal(ss.live_entities, 0); // no sub-world entities
    assert_int_equal(weft_despawn(f->w, e[0]), WEFT_OK);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    m = weft_resource_get(sw, map, sizeof *m);
    assert_int_equal(m->count, 8);
    assert_null(weft_instance_map_get(m, e[0]));
    assert_null(weft_instance_map_get(NULL, e[2]));
    // a second map of the same name is refused
    assert_int_equal(weft_sub_app_extract_instances(sub, &d), 0);
    assert_int_equal(weft_last_status(sw), WEFT_ERR_ALREADY_EXISTS);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// An instance map holds pointers to arrays the sub-app allocates; the
// world hash must follow the entries, not where the arrays happen to lie.
// Two apps built by the same calls (so the same ids) hash equal although
// their maps live at different addresses, and a changed value changes it.
static weft_app *instance_setup(tw_fixture *f, weft_world *w, weft_app **out_sub,
                                weft_component *out_pos, weft_entity *ents, int n)
{
    weft_app_desc ad;
    memset(&ad, 0, sizeof ad);
    ad.world = w;
    weft_app *app = weft_app_create(&ad);
    assert_non_null(app);
    weft_app *sub = add_sub(f, app, "render", false, false);
    weft_component pos = tw_comp(w, "Pos", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_extract_instances_desc d;
    memset(&d, 0, sizeof d);
    d.map_name = "Instances";
    d.main_component = pos;
    d.instance_size = sizeof(vec2);
    assert_int_not_equal(weft_sub_app_extract_instances(sub, &d), 0);
    for (int i = 0; i < n; i++) {
        vec2 v = {(float)i, 2.0f * (float)i};
        ents[i] = weft_spawn_with(w, &(weft_value){pos, sizeof v, &v}, 1);
        assert_int_not_equal(ents[i], 0);
    }
    *out_sub = sub;
    *out_pos = pos;
    return app;
}

static void instance_map_hash_by_contents(void **state)
{
    tw_fixture *f = *state;
    weft_world *w2 = weft_world_create(NULL);
    assert_non_null(w2);
    weft_app *sub1, *sub2;
    weft_component pos1, pos2;
    weft_entity e1[40], e2[40];
    weft_app *a1 = instance_setup(f, f->w, &sub1, &pos1, e1, 40);
    // shift the second app's allocations: its map's arrays land elsewhere
    void *spacer = test_malloc(4096);
    weft_app *a2 = instance_setup(f, w2, &sub2, &pos2, e2, 40);
    for (int frame = 0; frame < 3; frame++) {
        assert_int_equal(weft_app_update(a1, 0.016), WEFT_OK);
        assert_int_equal(weft_app_update(a2, 0.016), WEFT_OK);
        const weft_instance_map *m1 =
            weft_resource_get(weft_app_world(sub1), weft_component_lookup(weft_app_world(sub1),
                                                                          "Instances"),
                              sizeof *m1);
        const weft_instance_map *m2 =
            weft_resource_get(weft_app_world(sub2), weft_component_lookup(weft_app_world(sub2),
                                                                          "Instances"),
                              sizeof *m2);
        assert_non_null(m1);
        assert_non_null(m2);
        assert_int_equal(m1->count, 40);
        assert_ptr_not_equal(m1->keys, m2->keys);
        assert_int_equal(weft_world_hash(weft_app_world(sub1)),
                         weft_world_hash(weft_app_world(sub2)));
    }
    // the contents count: one changed instance changes the hash
    vec2 *p = weft_get_mut(w2, e2[7], pos2, sizeof(vec2));
    assert_non_null(p);
    p->y += 1.0f;
    assert_int_equal(weft_app_update(a1, 0.016), WEFT_OK);
    assert_int_equal(weft_app_update(a2, 0.016), WEFT_OK);
    assert_int_not_equal(weft_world_hash(weft_app_world(sub1)),
                         weft_world_hash(weft_app_world(sub2)));
    test_free(spacer);
    assert_int_equal(weft_app_destroy(a1), WEFT_OK);
    assert_int_equal(weft_app_destroy(a2), WEFT_OK);
    weft_world_destroy(w2);
}

// A snapshot cannot carry the map's arrays: it stores the map empty, so a
// restore (here into another sub-world, whose own sub-app then goes) never
// leaves a map pointing at memory that is gone.
static void instance_map_snapshot_empty(void **state)
{
    tw_fixture *f = *state;
    weft_app *sub1;
    weft_component pos1;
    weft_entity e1[12];
    weft_app *a1 = instance_setup(f, f->w, &sub1, &pos1, e1, 12);
    assert_int_equal(weft_app_update(a1, 0.016), WEFT_OK);
    weft_world *sw1 = weft_app_world(sub1);
    weft_component map1 = weft_component_lookup(sw1, "Instances");
    size_t len = 0;
    assert_int_equal(weft_snapshot_write(sw1, NULL, 0, &len), WEFT_ERR_CAPACITY);
    void *buf = test_malloc(len);
    assert_int_equal(weft_snapshot_write(sw1, buf, len, &len), WEFT_OK);
    // a second app whose sub-world registers the same ids
    weft_world *w2 = weft_world_create(NULL);
    assert_non_null(w2);
    weft_app *sub2;
    weft_component pos2;
    weft_entity e2[12];
    weft_app *a2 = instance_setup(f, w2, &sub2, &pos2, e2, 12);
    weft_world *sw2 = weft_app_world(sub2);
    assert_int_equal(weft_snapshot_restore(sw2, buf, len), WEFT_OK);
    assert_int_equal(weft_app_destroy(a1), WEFT_OK); // its map's arrays go
    const weft_instance_map *m =
        weft_resource_get(sw2, weft_component_lookup(sw2, "Instances"), sizeof *m);
    assert_non_null(m);
    assert_int_equal(m->count, 0);
    assert_null(m->keys);
    assert_null(weft_instance_map_get(m, e2[0]));
    (void)map1;
    // the next extraction fills it again
    assert_int_equal(weft_app_update(a2, 0.016), WEFT_OK);
    m = weft_resource_get(sw2, weft_component_lookup(sw2, "Instances"), sizeof *m);
    assert_int_equal(m->count, 12);
    test_free(buf);
    assert_int_equal(weft_app_destroy(a2), WEFT_OK);
    weft_world_destroy(w2);
}

// ---- cloning a synced entity ----

// weft_clone (and scenes) leave the sub-app's SubEntity link out: a clone
// keeps the sync tag and gets a twin of its own at the next sync, never
// its original's; cloning a twin leaves its MainEntity out likewise.
static void clone_gets_own_twin(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = main_app(f);
    weft_app *sub = add_sub(f, app, "render", false, false);
    weft_world *sw = weft_app_world(sub);
    weft_component pos = tw_comp(f->w, "Pos", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_component link = weft_sub_app_sub_entity(sub);
    weft_component back = weft_sub_app_main_entity(sub);
    weft_entity e = spawn_synced(f->w, sub, pos, (vec2){1, 2});
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    weft_entity t = weft_sub_app_map(sub, e);
    assert_int_not_equal(t, 0);
    weft_entity c = weft_clone(f->w, e, false);
    assert_int_not_equal(c, 0);
    assert_true(weft_has(f->w, c, weft_sub_app_sync_tag(sub)));
    assert_true(weft_has(f->w, c, pos));
    assert_false(weft_has(f->w, c, link)); // not the original's twin
    assert_int_equal(weft_sub_app_map(sub, c), 0);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "no twin");
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    weft_entity tc = weft_sub_app_map(sub, c);
    assert_int_not_equal(tc, 0);
    assert_int_not_equal(tc, t);
    const weft_entity *mc = weft_get(sw, tc, back, sizeof(weft_entity));
    assert_non_null(mc);
    assert_int_equal(*mc, c);
    // despawning the clone takes its own twin only
    assert_int_equal(weft_despawn(f->w, c), WEFT_OK);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_false(weft_is_alive(sw, tc));
    assert_true(weft_is_alive(sw, t));
    assert_int_equal(weft_sub_app_map(sub, e), t);
    // a cloned twin does not claim the main entity
    weft_entity tt = weft_clone(sw, t, false);
    assert_int_not_equal(tt, 0);
    assert_false(weft_has(sw, tt, back));
    weft_world_stats ss;
    weft_world_get_stats(sw, &ss);
    assert_int_equal(ss.live_entities, 2);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// ---- a user extract system: queries, resources, messages ----

typedef struct user_x {
    weft_component pos, score, rsum;
    weft_message_type msg;
    int messages;
    int msg_sum;
    int changed_seen;
    int score_changed;
    int runs;
} user_x;

static void sys_user_extract(weft_system_ctx *ctx, void *user)
{
    user_x *u = user;
    u->runs++;
    weft_iter it;
    float sum = 0;
    int changed = 0;
    if (weft_extract_iter(ctx, 0, &it) == WEFT_OK) {
        while (weft_iter_next(&it)) {
            const vec2 *p = weft_iter_field(&it, 0, sizeof(vec2));
            for (int32_t i = 0; i < weft_iter_count(&it); i++) {
                sum += p[i].x;
            }
        }
    }
    if (weft_extract_iter(ctx, 1, &it) == WEFT_OK) {
        while (weft_iter_next(&it)) {
            changed += weft_iter_count(&it);
        }
    }
    u->changed_seen += changed;
    const int32_t *score = weft_extract_resource(ctx, u->score, sizeof(int32_t));
    if (weft_extract_resource_changed(ctx, u->score)) {
        u->score_changed++;
    }
    const int32_t *m;
    while ((m = weft_extract_message_read(ctx, u->msg, sizeof *m)) != NULL) {
        u->messages++;
        u->msg_sum += *m;
    }
    float out = sum + (score ? (float)*score : 0.0f);
    weft_cmd_resource_insert(weft_system_commands(ctx), u->rsum, &out, sizeof out);
    // the main world is readable through weft_extract_main
    const weft_world *mw = weft_extract_main(ctx);
    if (!mw) {
        weft_system_fail(ctx, WEFT_ERR_INTERNAL, "no main world");
    }
}

static void extract_user_system(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = main_app(f);
    weft_app *sub = add_sub(f, app, "render", false, false);
    weft_world *sw = weft_app_world(sub);
    user_x u;
    memset(&u, 0, sizeof u);
    u.pos = tw_comp(f->w, "Pos", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    u.score = tw_comp(f->w, "Score", sizeof(int32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    u.rsum = tw_comp(sw, "Sum", sizeof(float), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_message_desc md;
    memset(&md, 0, sizeof md);
    md.name = "Hit";
    md.size = sizeof(int32_t);
    u.msg = weft_message_register(f->w, &md);
    assert_int_not_equal(u.msg, 0);
    weft_query_desc q[2];
    memset(q, 0, sizeof q);
    q[0].terms[0].id = u.pos;
    q[0].term_count = 1;
    q[1].terms[0].id = u.pos;
    q[1].terms[0].filter = WEFT_FILTER_CHANGED;
    q[1].term_count = 1;
    weft_resource_use ru = {u.rsum, WEFT_ACCESS_WRITE};
    weft_extract_desc x;
    memset(&x, 0, sizeof x);
    x.system.name = "user_extract";
    x.system.fn = sys_user_extract;
    x.system.user = &u;
    x.system.resources = &ru;
    x.system.resource_count = 1;
    x.system.flags = WEFT_SYSTEM_COMMANDS;
    x.main_queries = q;
    x.main_query_count = 2;
    x.main_resources = &u.score;
    x.main_resource_count = 1;
    x.main_messages = &u.msg;
    x.main_message_count = 1;
    assert_int_not_equal(weft_sub_app_add_extract(sub, &x), 0);
    weft_entity e[3];
    for (int i = 0; i < 3; i++) {
        vec2 v = {(float)(i + 1), 0};
        e[i] = weft_spawn_with(f->w, &(weft_value){u.pos, sizeof v, &v}, 1);
    }
    int32_t score = 10;
    assert_int_equal(weft_resource_insert(f->w, u.score, &score, sizeof score), WEFT_OK);
    int32_t hit = 5;
    assert_int_equal(weft_message_write(f->w, u.msg, &hit, sizeof hit), WEFT_OK);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(u.runs, 1);
    assert_int_equal(u.changed_seen, 3);
    assert_int_equal(u.score_changed, 1);
    assert_int_equal(u.messages, 1);
    const float *sum = weft_resource_get(sw, u.rsum, sizeof(float));
    assert_non_null(sum);
    assert_true(*sum == 16.0f);
    // nothing changed: no changed rows, the score unchanged, no message
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(u.changed_seen, 3);
    assert_int_equal(u.score_changed, 1);
    assert_int_equal(u.messages, 1);
    vec2 *p = weft_get_mut(f->w, e[1], u.pos, sizeof(vec2));
    p->x = 20;
    hit = 7;
    weft_message_write(f->w, u.msg, &hit, sizeof hit);
    weft_message_write(f->w, u.msg, &hit, sizeof hit);
    int32_t *sc = weft_resource_get_mut(f->w, u.score, sizeof *sc);
    *sc = 1;
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(u.changed_seen, 4);
    assert_int_equal(u.score_changed, 2);
    assert_int_equal(u.messages, 3);
    assert_int_equal(u.msg_sum, 19);
    sum = weft_resource_get(sw, u.rsum, sizeof(float));
    assert_true(*sum == 1.0f + 20.0f + 3.0f + 1.0f);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// ---- entity mapping under churn, against a reference map ----

#define MODEL_N 96

typedef struct model_ent {
    weft_entity e;   // 0: slot free
    bool tagged;
    weft_entity twin; // the reference: the twin seen after the last update
} model_ent;

static void check_mapping(tw_fixture *f, weft_app *sub, model_ent *m, bool clear)
{
    weft_world *sw = weft_app_world(sub);
    weft_component se = weft_sub_app_sub_entity(sub);
    weft_component me = weft_sub_app_main_entity(sub);
    int64_t tagged = 0;
    for (int i = 0; i < MODEL_N; i++) {
        if (!m[i].e) {
            continue;
        }
        assert_true(weft_is_alive(f->w, m[i].e));
        if (!m[i].tagged) {
            assert_false(weft_has(f->w, m[i].e, se));
            m[i].twin = 0;
            continue;
        }
        tagged++;
        const weft_entity *t = weft_get(f->w, m[i].e, se, sizeof(weft_entity));
        assert_non_null(t);
        assert_true(weft_is_alive(sw, *t));
        const weft_entity *back = weft_get(sw, *t, me, sizeof(weft_entity));
        assert_non_null(back);
        assert_int_equal(*back, m[i].e);
        assert_int_equal(weft_sub_app_map(sub, m[i].e), *t);
        if (m[i].twin && !clear) {
            assert_int_equal(*t, m[i].twin); // retained: twins are stable
        }
        m[i].twin = *t;
    }
    weft_world_stats ss;
    assert_int_equal(weft_world_get_stats(sw, &ss), WEFT_OK);
    assert_int_equal(ss.live_entities, tagged); // no twin outlives its main side
    assert_int_equal(weft_world_check(sw), WEFT_OK);
}

static void mapping_churn(tw_fixture *f, bool clear, bool pipelined, uint64_t seed)
{
    weft_app *app = main_app(f);
    weft_app *sub = add_sub(f, app, "render", clear, pipelined);
    weft_component tag = weft_sub_app_sync_tag(sub);
    weft_component filler = tw_comp(f->w, "Filler", sizeof(uint32_t), 0, WEFT_STORAGE_DEFAULT, 0);
    tw_rng rng;
    tw_rng_seed(&rng, seed);
    model_ent m[MODEL_N];
    memset(m, 0, sizeof m);
    weft_entity gone[MODEL_N];
    int ngone = 0;
    for (int frame = 0; frame < 150; frame++) {
        int ops = (int)tw_rng_below(&rng, 12);
        for (int k = 0; k < ops; k++) {
            int i = (int)tw_rng_below(&rng, MODEL_N);
            uint32_t op = tw_rng_below(&rng, 4);
            if (!m[i].e) {
                uint32_t v = tw_rng_below(&rng, 1000);
                weft_value vals[2] = {{filler, sizeof v, &v}, {tag, 0, NULL}};
                bool tagged = tw_rng_chance(&rng, 70);
                m[i].e = weft_spawn_with(f->w, vals, tagged ? 2 : 1);
                assert_int_not_equal(m[i].e, 0);
                m[i].tagged = tagged;
                m[i].twin = 0;
            } else if (op == 0) {
                assert_int_equal(weft_despawn(f->w, m[i].e), WEFT_OK);
                if (ngone < MODEL_N) {
                    gone[ngone++] = m[i].e;
                }
                m[i].e = 0;
            } else if (op == 1 && m[i].tagged) {
                assert_int_equal(weft_remove(f->w, m[i].e, tag), WEFT_OK);
                m[i].tagged = false;
            } else if (op == 2 && !m[i].tagged) {
                assert_int_equal(weft_insert(f->w, m[i].e, tag, NULL, 0), WEFT_OK);
                m[i].tagged = true;
                m[i].twin = 0;
            }
        }
        assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
        assert_int_equal(weft_sub_app_wait(sub), WEFT_OK); // (pipelined: the frame)
        check_mapping(f, sub, m, clear);
    }
    // mapping a despawned main entity is refused with a message
    assert_true(ngone > 0);
    assert_int_equal(weft_sub_app_map(sub, gone[0]), 0);
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, "not alive");
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

static void mapping_churn_retained(void **state)
{
    bool over = false;
    mapping_churn(*state, false, false, tw_seed_from_env(0x5eed18, &over));
}

static void mapping_churn_cleared(void **state)
{
    bool over = false;
    mapping_churn(*state, true, false, tw_seed_from_env(0xc1ea7, &over));
}

// The same churn with the sub-app pipelined: syncing happens between its
// frames, so the reference map holds after each collected frame.
static void mapping_churn_pipelined(void **state)
{
    NEEDS_THREADS("a pipelined sub-app runs on its own thread");
    bool over = false;
    mapping_churn(*state, false, true, tw_seed_from_env(0x919e, &over));
}

// ---- bad input ----

typedef struct writer {
    weft_world *main;
    weft_component pos;
    weft_message_type msg;
    weft_status spawn_st, insert_st, mut_st, res_st, field_st, msg_st;
    bool wcmds_null;
    bool mut_null;
    int runs;
} writer;

static void sys_writer(weft_system_ctx *ctx, void *user)
{
    writer *w = user;
    w->runs++;
    w->spawn_st = weft_spawn(w->main) ? WEFT_OK : weft_last_status(w->main);
    vec2 v = {9, 9};
    w->insert_st = weft_insert(w->main, 1, w->pos, &v, sizeof v);
    w->mut_null = weft_get_mut(w->main, 1, w->pos, sizeof v) == NULL;
    w->mut_st = weft_last_status(w->main);
    w->res_st = weft_resource_insert(w->main, w->pos, &v, sizeof v);
    int32_t m = 1;
    w->msg_st = weft_message_write(w->main, w->msg, &m, sizeof m);
    // the world buffer would be applied when a main iteration ends
    w->wcmds_null = weft_world_commands(w->main) == NULL;
    weft_iter it;
    if (weft_extract_iter(ctx, 0, &it) == WEFT_OK) {
        while (weft_iter_next(&it)) {
            if (!weft_iter_field_mut(&it, 0, sizeof(vec2))) {
                w->field_st = WEFT_ERR_ACCESS_VIOLATION;
            }
        }
    }
}

typedef struct misuse {
    weft_status main_st, iter_st;
    bool res_null;
} misuse;

// A plain sub-world system calling the extract API.
static void sys_misuse(weft_system_ctx *ctx, void *user)
{
    misuse *m = user;
    m->main_st = weft_extract_main(ctx) ? WEFT_OK : WEFT_ERR_WRONG_PHASE;
    weft_iter it;
    m->iter_st = weft_extract_iter(ctx, 0, &it);
    m->res_null = weft_extract_resource(ctx, 1, 4) == NULL;
}

static void subapp_bad_input(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = main_app(f);
    weft_app *sub = add_sub(f, app, "render", false, false);
    weft_world *sw = weft_app_world(sub);
    weft_component pos = tw_comp(f->w, "Pos", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_entity e = spawn_synced(f->w, sub, pos, (vec2){1, 1});
    // a name used twice
    weft_sub_app_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "render";
    assert_null(weft_app_add_sub_app(app, &sd));
    tw_expect_error(f, WEFT_ERR_ALREADY_EXISTS, "'render'");
    sd.name = "";
    assert_null(weft_app_add_sub_app(app, &sd));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "name");
    sd.name = "nested";
    assert_null(weft_app_add_sub_app(sub, &sd));
    assert_int_equal(weft_last_status(sw), WEFT_ERR_INVALID_ARG);
    // driving a sub-app directly
    assert_int_equal(weft_app_update(sub, 0.016), WEFT_ERR_WRONG_PHASE);
    assert_true(tw_contains(weft_last_error(sw), "sub-app"));
    assert_int_equal(weft_app_destroy(sub), WEFT_ERR_WRONG_PHASE);
    // the sub-app functions on an app that is none
    assert_int_equal(weft_sub_app_wait(app), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "no sub-app");
    assert_int_equal(weft_sub_app_sync_tag(app), 0);
    // a main query that writes
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0].id = pos;
    q.terms[0].access = WEFT_ACCESS_WRITE;
    q.term_count = 1;
    writer w;
    memset(&w, 0, sizeof w);
    w.main = f->w;
    w.pos = pos;
    weft_message_desc msgd;
    memset(&msgd, 0, sizeof msgd);
    msgd.name = "Note";
    msgd.size = sizeof(int32_t);
    w.msg = weft_message_register(f->w, &msgd);
    assert_int_not_equal(w.msg, 0);
    weft_extract_desc x;
    memset(&x, 0, sizeof x);
    x.system.name = "writer";
    x.system.fn = sys_writer;
    x.system.user = &w;
    x.main_queries = &q;
    x.main_query_count = 1;
    assert_int_equal(weft_sub_app_add_extract(sub, &x), 0);
    assert_int_equal(weft_last_status(sw), WEFT_ERR_ACCESS_VIOLATION);
    assert_true(tw_contains(weft_last_error(sw), "read-only"));
    weft_resource_use bad_res = {9999, WEFT_ACCESS_READ};
    (void)bad_res;
    weft_component missing = 9999;
    x.main_queries = NULL;
    x.main_query_count = 0;
    x.main_resources = &missing;
    x.main_resource_count = 1;
    assert_int_equal(weft_sub_app_add_extract(sub, &x), 0);
    assert_int_equal(weft_last_status(sw), WEFT_ERR_NOT_FOUND);
    // an extract system writing the main world: refused, main unchanged
    q.terms[0].access = WEFT_ACCESS_READ;
    x.main_queries = &q;
    x.main_query_count = 1;
    x.main_resources = NULL;
    x.main_resource_count = 0;
    assert_int_not_equal(weft_sub_app_add_extract(sub, &x), 0);
    misuse mu;
    memset(&mu, 0, sizeof mu);
    weft_system_desc md;
    memset(&md, 0, sizeof md);
    md.name = "misuse";
    md.fn = sys_misuse;
    md.user = &mu;
    assert_int_not_equal(weft_app_add_system(sub, WEFT_APP_UPDATE, &md), 0);
    w.main = f->w;
    weft_world_stats before;
    weft_world_get_stats(f->w, &before);
    // the misuse system fails each update (its calls record WRONG_PHASE)
    assert_int_equal(weft_app_update(app, 0.016), WEFT_ERR_WRONG_PHASE); // syncs e
    tw_expect_error(f, WEFT_ERR_WRONG_PHASE, "only an extract system");
    uint64_t h = weft_world_hash(f->w);
    weft_world_get_stats(f->w, &before);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_ERR_WRONG_PHASE);
    assert_int_equal(w.runs, 2);
    assert_int_equal(w.spawn_st, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(w.insert_st, WEFT_ERR_WRONG_PHASE);
    assert_true(w.mut_null);
    assert_int_equal(w.mut_st, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(w.res_st, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(w.msg_st, WEFT_ERR_WRONG_PHASE);
    assert_true(w.wcmds_null);
    assert_non_null(weft_world_commands(f->w)); // outside extraction: allowed
    weft_message_cursor cur;
    memset(&cur, 0, sizeof cur);
    assert_int_equal(weft_message_unread(f->w, w.msg, &cur), 0); // nothing was written
    assert_int_equal(w.field_st, WEFT_ERR_ACCESS_VIOLATION);
    assert_int_equal(weft_world_hash(f->w), h);
    weft_world_stats after;
    weft_world_get_stats(f->w, &after);
    assert_int_equal(after.live_entities, before.live_entities);
    // after the extraction the main world is writable again
    assert_int_not_equal(weft_spawn(f->w), 0);
    // the extract API outside an extract system
    assert_int_equal(mu.main_st, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(mu.iter_st, WEFT_ERR_WRONG_PHASE);
    assert_true(mu.res_null);
    // mapping onto a twin someone despawned
    weft_entity twin = weft_sub_app_map(sub, e);
    assert_int_not_equal(twin, 0);
    assert_int_equal(weft_despawn(sw, twin), WEFT_OK);
    assert_int_equal(weft_sub_app_map(sub, e), 0);
    tw_expect_error(f, WEFT_ERR_STALE_ENTITY, "was despawned");
    assert_int_equal(weft_sub_app_map(sub, 0), 0);
    tw_expect_error(f, WEFT_ERR_INVALID_ENTITY, "not alive");
    // a component extraction onto that twin fails the update with a message
    // (the misuse system stays out of it: the sub-app gets a fresh look)
    mu.main_st = WEFT_OK;
    weft_component rpos = tw_comp(sw, "RPos", sizeof(vec2), 0, WEFT_STORAGE_DEFAULT, 0);
    weft_extract_component_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.main_component = pos;
    cd.sub_component = rpos;
    assert_int_not_equal(weft_sub_app_extract_component(sub, &cd), 0);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_ERR_STALE_ENTITY);
    // (the fixture's logger also hears the sub-world, whose misuse system
    // failed later: check the main world's slot itself)
    assert_int_equal(weft_last_status(f->w), WEFT_ERR_STALE_ENTITY);
    assert_true(tw_contains(weft_last_error(f->w), "extraction: "));
    assert_true(tw_contains(weft_last_error(f->w), "despawned"));
    // sizes must match without a transform
    weft_component small = tw_comp(sw, "Small", sizeof(float), 0, WEFT_STORAGE_DEFAULT, 0);
    cd.sub_component = small;
    assert_int_equal(weft_sub_app_extract_component(sub, &cd), 0);
    assert_int_equal(weft_last_status(sw), WEFT_ERR_SIZE_MISMATCH);
    cd.sub_component = 777;
    assert_int_equal(weft_sub_app_extract_component(sub, &cd), 0);
    assert_int_equal(weft_last_status(sw), WEFT_ERR_UNKNOWN_COMPONENT);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

// Creating a sub-app while out of memory: every failure point returns
// OUT_OF_MEMORY, leaks nothing, and a later attempt succeeds.
static void subapp_out_of_memory(void **state)
{
    tw_fixture *f = *state;
    weft_app *app = main_app(f);
    weft_sub_app_desc d;
    memset(&d, 0, sizeof d);
    d.name = "render";
    d.world_desc = tw_fixture_desc(f);
    weft_app *sub = NULL;
    for (int64_t n = 1; n < 400 && !sub; n++) {
        tw_alloc_fail_nth(&f->alloc, n, false);
        sub = weft_app_add_sub_app(app, &d);
        bool injected = tw_alloc_injected(&f->alloc) > 0;
        tw_alloc_disarm(&f->alloc);
        if (!sub) {
            assert_true(injected);
            assert_int_equal(weft_last_status(f->w), WEFT_ERR_OUT_OF_MEMORY);
            assert_null(weft_app_sub_app(app, "render"));
        }
    }
    assert_non_null(sub);
    assert_int_equal(weft_app_update(app, 0.016), WEFT_OK);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tw_setup, tw_teardown)
    const struct CMUnitTest tests[] = {
        T(subapp_update_order),
        T(extract_component_vector),
        T(extract_component_changed_only),
        T(extract_resource_when_changed),
        T(extract_instances_map),
        T(instance_map_hash_by_contents),
        T(instance_map_snapshot_empty),
        T(clone_gets_own_twin),
        T(extract_user_system),
        T(mapping_churn_retained),
        T(mapping_churn_cleared),
        T(mapping_churn_pipelined),
        T(subapp_bad_input),
        T(subapp_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

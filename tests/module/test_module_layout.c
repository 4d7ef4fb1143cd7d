// tests/module/test_module_layout.c - a module's own components across a
// reload (mod_layout.c in several variants): layout migration vectors
// (fields added with a default or zeroed, removed, reordered, widened, in
// nested structs, arrays and strings, in a table, a sparse set and a
// resource) keeping entities, ticks and the values of untouched
// components, with weft_world_check clean; refused migrations (narrowing,
// another kind, no description) leaving the world hash and layout
// unchanged; lifecycle hooks rebound to the new code or removed with it
// (the old copy is unmapped, so a stale hook would crash); and a failing
// build's components, labels and schedules rolled back.
// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mod_layout.h"
#include "test_world.h"
#include "weft.h"

#define N_ENT 1000

typedef struct lenv {
    tw_fixture *f;
    weft_app *app;
    weft_component log, sum, other;
    weft_entity ents[N_ENT];
    char work[512];
} lenv;

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    assert_non_null(in);
    FILE *out = fopen(to, "wb");
    assert_non_null(out);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        assert_int_equal(fwrite(buf, 1, n, out), n);
    }
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static void lenv_init(lenv *e, void **state, const char *name)
{
    memset(e, 0, sizeof *e);
    e->f = *state;
    weft_world *w = e->f->w;
    weft_app_desc d = {0};
    d.world = w;
    e->app = weft_app_create(&d);
    assert_non_null(e->app);
    e->log = tw_comp(w, "HookLog", 2 * sizeof(int64_t), 0, WEFT_STORAGE_DEFAULT, 0);
    e->sum = tw_comp(w, "HpSum", sizeof(int64_t), 0, WEFT_STORAGE_DEFAULT, 0);
    e->other = tw_comp(w, "Other", sizeof(int64_t), 0, WEFT_STORAGE_DEFAULT, 0);
    int64_t zero[2] = {0, 0};
    assert_int_equal(weft_resource_insert(w, e->log, zero, 16), WEFT_OK);
    assert_int_equal(weft_resource_insert(w, e->sum, zero, 8), WEFT_OK);
    snprintf(e->work, sizeof e->work, "%s/layout_%s.so", MOD_WORK_DIR, name);
}

static void lenv_fini(lenv *e)
{
    assert_int_equal(weft_app_destroy(e->app), WEFT_OK);
    remove(e->work);
}

static int64_t res_i64(lenv *e, weft_component c, int idx)
{
    const int64_t *v = weft_resource_get(e->f->w, c, c == e->log ? 16 : 8);
    assert_non_null(v);
    return v[idx];
}

static weft_component comp(lenv *e, const char *name)
{
    weft_component c = weft_component_lookup(e->f->w, name);
    assert_int_not_equal(c, 0);
    return c;
}

static lay_body1 body1_of(int i)
{
    lay_body1 b;
    memset(&b, 0, sizeof b);
    b.hp = i - 500;
    b.x = (float)i * 0.5f;
    b.y = -(float)i;
    b.flags = (uint8_t)(i & 0xff);
    snprintf(b.name, sizeof b.name, "e%d", i);
    b.rot.a = (float)i;
    b.rot.b = (float)i + 0.25f;
    return b;
}

static int64_t expected_sum(void)
{
    int64_t s = 0;
    for (int i = 0; i < N_ENT; i++) {
        s += i - 500;
    }
    return s;
}

// Loads `path` (a V1-like layout) and spawns N_ENT entities with Body and
// Other, every third one with Spark too.
static weft_module *load_and_fill(lenv *e, const char *path)
{
    copy_file(path, e->work);
    weft_module *m = weft_module_load(e->app, e->work);
    assert_non_null(m);
    weft_world *w = e->f->w;
    weft_component body = comp(e, "Body"), spark = comp(e, "Spark");
    for (int i = 0; i < N_ENT; i++) {
        lay_body1 b = body1_of(i);
        int64_t o = (int64_t)i * 7;
        lay_spark1 s = {(int16_t)(-i)};
        weft_value v[3] = {{body, sizeof b, &b}, {e->other, sizeof o, &o}, {spark, sizeof s, &s}};
        e->ents[i] = weft_spawn_with(w, v, i % 3 == 0 ? 3 : 2);
        assert_int_not_equal(e->ents[i], 0);
    }
    assert_int_equal(weft_app_update(e->app, 1.0 / 60.0), WEFT_OK);
    assert_int_equal(res_i64(e, e->sum, 0), expected_sum());
    return m;
}

static void reload_ok(lenv *e, weft_module *m)
{
    weft_status st = weft_module_reload(m);
    if (st != WEFT_OK) {
        print_error("reload: %s\n", weft_last_error(e->f->w));
    }
    assert_int_equal(st, WEFT_OK);
}

static uint64_t other_checksum(lenv *e)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < N_ENT; i++) {
        const int64_t *o = weft_get(e->f->w, e->ents[i], e->other, sizeof *o);
        assert_non_null(o);
        h = (h ^ (uint64_t)*o) * 1099511628211ull;
    }
    return h;
}

static void migrate_add_remove_reorder_widen(void **state)
{
    lenv e;
    lenv_init(&e, state, "v2");
    weft_world *w = e.f->w;
    weft_module *m = load_and_fill(&e, MOD_LAY_V1);
    weft_component body = comp(&e, "Body"), spark = comp(&e, "Spark"), score = comp(&e, "Score");
    assert_int_equal(res_i64(&e, e.log, 0), N_ENT); // V1's on_add ran per spawn
    weft_ticks before[N_ENT];
    for (int i = 0; i < N_ENT; i++) {
        assert_int_equal(weft_get_ticks(w, e.ents[i], body, &before[i]), WEFT_OK);
    }
    uint64_t other = other_checksum(&e);
    weft_world_stats st0;
    assert_int_equal(weft_world_get_stats(w, &st0), WEFT_OK);

    copy_file(MOD_LAY_V2, e.work);
    reload_ok(&e, m);
    weft_component_info info;
    assert_int_equal(weft_component_info_get(w, body, &info), WEFT_OK);
    assert_int_equal(info.size, sizeof(lay_body2));
    assert_int_equal(info.align, _Alignof(lay_body2));
    weft_world_stats st1;
    assert_int_equal(weft_world_get_stats(w, &st1), WEFT_OK);
    assert_int_equal(st1.live_entities, st0.live_entities);
    // one more: the reload signal's resource, registered by the first reload
    assert_int_equal(st1.components, st0.components + 1);
    for (int i = 0; i < N_ENT; i++) {
        lay_body1 o = body1_of(i);
        const lay_body2 *b = weft_get(w, e.ents[i], body, sizeof *b);
        assert_non_null(b);
        assert_true(b->x == (double)o.x);
        assert_true(b->y == (double)o.y);
        assert_int_equal(b->hp, (int64_t)(i - 500));
        assert_string_equal(b->name, o.name);
        assert_int_equal(b->armor, 100);        // the default value
        assert_int_equal(b->slots[0], 1);       // a new array: defaults
        assert_int_equal(b->slots[2], 3);
        assert_true(b->rot.a == (double)o.rot.a); // nested, reordered
        assert_true(b->rot.b == (double)o.rot.b);
        weft_ticks t;
        assert_int_equal(weft_get_ticks(w, e.ents[i], body, &t), WEFT_OK);
        assert_int_equal(t.added, before[i].added);
        assert_int_equal(t.changed, before[i].changed);
        const lay_spark2 *s = weft_get(w, e.ents[i], spark, sizeof *s);
        if (i % 3 == 0) {
            assert_non_null(s);
            assert_int_equal(s->v, -i);
            assert_int_equal(s->pad, 0);         // new, no default: zero
        } else {
            assert_null(s);
        }
    }
    const lay_score2 *sc = weft_resource_get(w, score, sizeof *sc);
    assert_non_null(sc);
    assert_int_equal(sc->points, 7);
    assert_true(sc->ratio == 0.5);
    assert_int_equal(other_checksum(&e), other);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    // the description is the new one
    int32_t armor = 0;
    assert_int_equal(weft_field_get(w, e.ents[5], body, ".armor", WEFT_KIND_I32, &armor,
                                     sizeof armor), WEFT_OK);
    assert_int_equal(armor, 100);
    assert_int_not_equal(weft_field_get(w, e.ents[5], body, ".flags", WEFT_KIND_U8, &armor, 1),
                         WEFT_OK);
    // the kept system's query follows the new size
    int64_t zero = 0;
    assert_int_equal(weft_resource_insert(w, e.sum, &zero, sizeof zero), WEFT_OK);
    assert_int_equal(weft_app_update(e.app, 1.0 / 60.0), WEFT_OK);
    assert_int_equal(res_i64(&e, e.sum, 0), expected_sum());
    // the hook is the new code's (V2 bumps the second counter)
    lay_body2 nb;
    memset(&nb, 0, sizeof nb);
    nb.hp = 1;
    weft_value v = {body, sizeof nb, &nb};
    assert_int_not_equal(weft_spawn_with(w, &v, 1), 0);
    assert_int_equal(res_i64(&e, e.log, 0), N_ENT);
    assert_int_equal(res_i64(&e, e.log, 1), 1);
    // the old layout's size is refused now
    lay_body1 ob = body1_of(1);
    weft_value v1 = {body, sizeof ob, &ob};
    assert_int_equal(weft_spawn_with(w, &v1, 1), 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_SIZE_MISMATCH);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    lenv_fini(&e);
}

static void migrate_new_field_zeroed_hook_removed(void **state)
{
    lenv e;
    lenv_init(&e, state, "zero");
    weft_world *w = e.f->w;
    weft_module *m = load_and_fill(&e, MOD_LAY_V1);
    weft_component body = comp(&e, "Body");
    copy_file(MOD_LAY_ZERO, e.work);
    assert_int_equal(weft_module_reload(m), WEFT_OK);
    for (int i = 0; i < N_ENT; i++) {
        lay_body1 o = body1_of(i);
        const lay_body3 *b = weft_get(w, e.ents[i], body, sizeof *b);
        assert_non_null(b);
        assert_int_equal(b->hp, o.hp);
        assert_int_equal(b->flags, o.flags);
        assert_string_equal(b->name, o.name);
        assert_int_equal(b->mana, 0);
    }
    // ZERO has no hook: V1's is gone with its code (unmapped: calling it
    // would crash), so an add fires nothing
    lay_body3 nb;
    memset(&nb, 0, sizeof nb);
    weft_value v = {body, sizeof nb, &nb};
    assert_int_not_equal(weft_spawn_with(w, &v, 1), 0);
    assert_int_equal(res_i64(&e, e.log, 0), N_ENT);
    assert_int_equal(res_i64(&e, e.log, 1), 0);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    lenv_fini(&e);
}

static void same_layout_rebinds_hook(void **state)
{
    lenv e;
    lenv_init(&e, state, "same");
    weft_world *w = e.f->w;
    weft_module *m = load_and_fill(&e, MOD_LAY_V1);
    weft_component body = comp(&e, "Body");
    copy_file(MOD_LAY_SAME, e.work);
    assert_int_equal(weft_module_reload(m), WEFT_OK);
    // no migration: every value is where it was
    for (int i = 0; i < N_ENT; i++) {
        lay_body1 o = body1_of(i);
        const lay_body1 *b = weft_get(w, e.ents[i], body, sizeof *b);
        assert_non_null(b);
        assert_memory_equal(b, &o, sizeof o);
    }
    lay_body1 nb = body1_of(3);
    weft_value v = {body, sizeof nb, &nb};
    assert_int_not_equal(weft_spawn_with(w, &v, 1), 0);
    assert_int_equal(res_i64(&e, e.log, 1), 10); // SAME's hook
    assert_int_equal(res_i64(&e, e.log, 0), N_ENT);
    // and back to V1
    copy_file(MOD_LAY_V1, e.work);
    assert_int_equal(weft_module_reload(m), WEFT_OK);
    assert_int_not_equal(weft_spawn_with(w, &v, 1), 0);
    assert_int_equal(res_i64(&e, e.log, 0), N_ENT + 1);
    // unloading removes the hook: the component and its values stay
    assert_int_equal(weft_module_unload(m), WEFT_OK);
    assert_int_not_equal(weft_spawn_with(w, &v, 1), 0);
    assert_int_equal(res_i64(&e, e.log, 0), N_ENT + 1);
    assert_int_equal(res_i64(&e, e.log, 1), 10);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    // a module loaded later adopts the components (here migrating them)
    copy_file(MOD_LAY_V2, e.work);
    weft_module *m2 = weft_module_load(e.app, e.work);
    if (!m2) {
        print_error("load: %s\n", weft_last_error(w));
    }
    assert_non_null(m2);
    const lay_body2 *b2 = weft_get(w, e.ents[7], body, sizeof *b2);
    assert_non_null(b2);
    assert_int_equal(b2->hp, 7 - 500);
    assert_int_equal(b2->armor, 100);
    lay_body2 nb2;
    memset(&nb2, 0, sizeof nb2);
    weft_value v2 = {body, sizeof nb2, &nb2};
    assert_int_not_equal(weft_spawn_with(w, &v2, 1), 0);
    assert_int_equal(res_i64(&e, e.log, 1), 11); // V2's hook
    assert_int_equal(weft_world_check(w), WEFT_OK);
    lenv_fini(&e);
}

typedef struct refusal {
    const char *what;
    const char **path;
    weft_status status;
    const char *needle;
} refusal;

static const char *lay_narrow = MOD_LAY_NARROW;
static const char *lay_kind = MOD_LAY_KIND;
static const char *lay_nodesc = MOD_LAY_NODESC;
static const char *lay_failreg = MOD_LAY_FAILREG;
static const char *lay_dup = MOD_LAY_DUP;

static void refused_migrations_change_nothing(void **state)
{
    static const refusal cases[] = {
        {"narrowing", &lay_narrow, WEFT_ERR_UNSUPPORTED, "field 'hp' changes from i32 to i16"},
        {"other kind", &lay_kind, WEFT_ERR_UNSUPPORTED, "field 'x' changes from f32 to i32"},
        {"no description", &lay_nodesc, WEFT_ERR_SIZE_MISMATCH, "without type descriptions"},
        {"failing build", &lay_failreg, WEFT_ERR_CALLBACK, "failed"},
        {"component twice", &lay_dup, WEFT_ERR_ALREADY_EXISTS, "registers component 'Body' twice"},
    };
    lenv e;
    lenv_init(&e, state, "refused");
    weft_world *w = e.f->w;
    weft_module *m = load_and_fill(&e, MOD_LAY_V1);
    weft_component body = comp(&e, "Body");
    int64_t log0 = res_i64(&e, e.log, 0);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint64_t hash = weft_world_hash(w);
        weft_world_stats st0;
        assert_int_equal(weft_world_get_stats(w, &st0), WEFT_OK);
        int32_t labels = weft_app_label_count(e.app, WEFT_APP_ORDER_MAIN);
        copy_file(*cases[k].path, e.work);
        weft_status st = weft_module_reload(m);
        if (st != cases[k].status) {
            print_error("case '%s': %s\n", cases[k].what, weft_last_error(w));
        }
        assert_int_equal(st, cases[k].status);
        tw_expect_error(e.f, cases[k].status, cases[k].needle);
        if (k < 3) {
            assert_non_null(strstr(weft_last_error(w), "'Body'"));
        }
        assert_int_equal(weft_world_hash(w), hash);
        weft_world_stats st1;
        assert_int_equal(weft_world_get_stats(w, &st1), WEFT_OK);
        assert_int_equal(st1.components, st0.components);
        assert_int_equal(st1.archetypes, st0.archetypes);
        assert_int_equal(weft_component_lookup(w, "Fresh"), 0);
        assert_int_equal(weft_app_label_count(e.app, WEFT_APP_ORDER_MAIN), labels);
        assert_null(weft_app_schedule(e.app, "ModLabel"));
        weft_component_info info;
        assert_int_equal(weft_component_info_get(w, body, &info), WEFT_OK);
        assert_int_equal(info.size, sizeof(lay_body1));
        assert_int_equal(weft_module_reload_count(m), 0);
        assert_int_equal(weft_world_check(w), WEFT_OK);
        // the old code keeps running: its system and its hook
        int64_t zero = 0;
        assert_int_equal(weft_resource_insert(w, e.sum, &zero, sizeof zero), WEFT_OK);
        assert_int_equal(weft_app_update(e.app, 1.0 / 60.0), WEFT_OK);
        assert_int_equal(res_i64(&e, e.sum, 0), expected_sum());
        lay_body1 nb = body1_of(0);
        nb.hp = 0;
        weft_value v = {body, sizeof nb, &nb};
        assert_int_not_equal(weft_spawn_with(w, &v, 1), 0);
        log0++;
        assert_int_equal(res_i64(&e, e.log, 0), log0);
    }
    // a fixed build goes through afterwards
    copy_file(MOD_LAY_V2, e.work);
    reload_ok(&e, m);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    lenv_fini(&e);
}

// A first load whose build fails leaves no component, resource,
// description, label or schedule behind.
static void failed_load_rolls_back_components(void **state)
{
    lenv e;
    lenv_init(&e, state, "failload");
    weft_world *w = e.f->w;
    uint64_t hash = weft_world_hash(w);
    weft_world_stats st0;
    assert_int_equal(weft_world_get_stats(w, &st0), WEFT_OK);
    int32_t labels = weft_app_label_count(e.app, WEFT_APP_ORDER_MAIN);
    copy_file(MOD_LAY_FAILREG, e.work);
    assert_null(weft_module_load(e.app, e.work));
    tw_expect_error(e.f, WEFT_ERR_CALLBACK, "failed");
    assert_int_equal(weft_world_hash(w), hash);
    weft_world_stats st1;
    assert_int_equal(weft_world_get_stats(w, &st1), WEFT_OK);
    assert_int_equal(st1.components, st0.components);
    assert_int_equal(st1.resources, st0.resources);
    assert_int_equal(weft_component_lookup(w, "Body"), 0);
    assert_int_equal(weft_component_lookup(w, "Score"), 0);
    assert_int_equal(weft_component_lookup(w, "Fresh"), 0);
    assert_int_equal(weft_app_label_count(e.app, WEFT_APP_ORDER_MAIN), labels);
    assert_null(weft_app_schedule(e.app, "ModLabel"));
    assert_int_equal(weft_world_check(w), WEFT_OK);
    // the same names register cleanly afterwards
    weft_module *m = load_and_fill(&e, MOD_LAY_V1);
    assert_non_null(m);
    lenv_fini(&e);
}

// Every allocation of a migrating reload failed in turn: each failure
// leaves the world as it was (hash, components, layout, the old code
// running) until the reload goes through; then the values are migrated.
static void migration_out_of_memory(void **state)
{
    lenv e;
    lenv_init(&e, state, "oom");
    weft_world *w = e.f->w;
    weft_module *m = load_and_fill(&e, MOD_LAY_V1);
    weft_component body = comp(&e, "Body");
    copy_file(MOD_LAY_V2, e.work);
    int64_t n = 1;
    for (;; n++) {
        assert_true(n < 100000);
        uint64_t hash = weft_world_hash(w);
        weft_world_stats st0;
        assert_int_equal(weft_world_get_stats(w, &st0), WEFT_OK);
        tw_alloc_fail_nth(&e.f->alloc, n, false);
        weft_status st = weft_module_reload(m);
        tw_alloc_disarm(&e.f->alloc);
        if (weft_module_reload_count(m) == 1) {
            break; /* committed (a failure after the commit only lost a signal) */
        }
        assert_int_not_equal(st, WEFT_OK);
        assert_int_equal(weft_world_hash(w), hash);
        weft_world_stats st1;
        assert_int_equal(weft_world_get_stats(w, &st1), WEFT_OK);
        assert_int_equal(st1.components, st0.components);
        weft_component_info info;
        assert_int_equal(weft_component_info_get(w, body, &info), WEFT_OK);
        assert_int_equal(info.size, sizeof(lay_body1));
        assert_int_equal(weft_world_check(w), WEFT_OK);
    }
    assert_true(n > 5); // the loop did inject failures
    for (int i = 0; i < N_ENT; i += 97) {
        const lay_body2 *b = weft_get(w, e.ents[i], body, sizeof *b);
        assert_non_null(b);
        assert_int_equal(b->hp, (int64_t)(i - 500));
        assert_int_equal(b->armor, 100);
    }
    assert_int_equal(weft_app_update(e.app, 1.0 / 60.0), WEFT_OK);
    assert_int_equal(res_i64(&e, e.sum, 0), expected_sum());
    assert_int_equal(weft_world_check(w), WEFT_OK);
    lenv_fini(&e);
}

static void migration_defaults_misuse(void **state)
{
    lenv e;
    lenv_init(&e, state, "misuse");
    weft_world *w = e.f->w;
    int64_t v = 0;
    // outside a module's build
    assert_int_equal(weft_component_migration_defaults(w, e.sum, &v, sizeof v),
                     WEFT_ERR_WRONG_PHASE);
    assert_int_equal(weft_component_migration_defaults(w, e.sum, NULL, sizeof v),
                     WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_component_migration_defaults(NULL, e.sum, &v, sizeof v),
                     WEFT_ERR_INVALID_HANDLE);
    lenv_fini(&e);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tw_setup, tw_teardown)
    const struct CMUnitTest tests[] = {
        T(migrate_add_remove_reorder_widen),
        T(migrate_new_field_zeroed_hook_removed),
        T(same_layout_rebinds_hook),
        T(refused_migrations_change_nothing),
        T(failed_load_rolls_back_components),
        T(migration_out_of_memory),
        T(migration_defaults_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* tests/module/mod_layout.c - a reloadable module that owns its
 * components, compiled in several variants (LAY_VARIANT, mod_layout.h)
 * whose layouts differ: test_module_layout.c loads one and reloads
 * another over a world full of values.
 * SPDX-License-Identifier: MIT
 *
 * Every build registers and describes "Body" (table), "Spark" (sparse)
 * and "Score" (a resource it inserts when absent), and adds the system
 * `sum_hp`, which sums Body.hp into the host's resource "HpSum" (int64)
 * through a query: the query's cached component size must follow a
 * migration. Body's on_add hook (where the variant has one) bumps one of
 * the host's "HookLog" counters (two int64).
 */
#include "mod_layout.h"
#include "weft.h"

#include <stddef.h>
#include <string.h>

#if LAY_VARIANT == LAY_V2
typedef lay_body2 body_t;
typedef lay_spark2 spark_t;
typedef lay_score2 score_t;
#elif LAY_VARIANT == LAY_ZERO
typedef lay_body3 body_t;
typedef lay_spark1 spark_t;
typedef lay_score1 score_t;
#elif LAY_VARIANT == LAY_NARROW
typedef lay_body_narrow body_t;
typedef lay_spark1 spark_t;
typedef lay_score1 score_t;
#elif LAY_VARIANT == LAY_KIND
typedef lay_body_kind body_t;
typedef lay_spark1 spark_t;
typedef lay_score1 score_t;
#elif LAY_VARIANT == LAY_NODESC
typedef lay_body3 body_t;
typedef lay_spark1 spark_t;
typedef lay_score1 score_t;
#else
typedef lay_body1 body_t;
typedef lay_spark1 spark_t;
typedef lay_score1 score_t;
#endif

#if LAY_VARIANT == LAY_V1 || LAY_VARIANT == LAY_V2 || LAY_VARIANT == LAY_SAME
#  define LAY_HOOK 1
static void on_add(weft_world *world, weft_entity e, weft_component c, void *user)
{
    (void)e;
    (void)c;
    weft_component log = (weft_component)(uintptr_t)user;
    int64_t *v = weft_resource_get_mut(world, log, 2 * sizeof *v);
    if (v) {
        v[LAY_VARIANT == LAY_V1 ? 0 : 1] += LAY_VARIANT == LAY_SAME ? 10 : 1;
    }
}
#endif

static void sum_hp(weft_system_ctx *ctx, void *user)
{
    weft_component sum = (weft_component)(uintptr_t)user;
    int64_t *out = weft_system_resource_mut(ctx, sum, sizeof *out);
    weft_iter it;
    if (!out || weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    int64_t total = 0;
    while (weft_iter_next(&it)) {
        const body_t *b = weft_iter_field(&it, 0, sizeof *b);
        if (!b) {
            *out = -1; /* a stale size: the test sees it */
            return;
        }
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            total += (int64_t)b[i].hp;
        }
    }
    *out = total;
}

#define F(kind_, type_, field_, n_)                                                      \
    {#field_, kind_, offsetof(type_, field_), n_, NULL, WEFT_KIND_NONE, NULL, 0}

static weft_status describe_all(weft_world *w, weft_component body, weft_component spark,
                                weft_component score)
{
#if LAY_VARIANT == LAY_NODESC
    (void)w;
    (void)body;
    (void)spark;
    (void)score;
    return WEFT_OK;
#else
#  if LAY_VARIANT == LAY_V2
    static const weft_field rot_f[] = {F(WEFT_KIND_F64, lay_rot2, b, 0),
                                       F(WEFT_KIND_F64, lay_rot2, a, 0)};
    static const weft_type_desc rot_d = {"Rot", sizeof(lay_rot2),
                                         _Alignof(lay_rot2), rot_f, 2};
    static const weft_field body_f[] = {
        F(WEFT_KIND_F64, lay_body2, y, 0),     F(WEFT_KIND_F64, lay_body2, x, 0),
        F(WEFT_KIND_I64, lay_body2, hp, 0),    F(WEFT_KIND_STRING, lay_body2, name, 16),
        F(WEFT_KIND_I32, lay_body2, armor, 0), F(WEFT_KIND_U16, lay_body2, slots, 3),
        {"rot", WEFT_KIND_STRUCT, offsetof(lay_body2, rot), 0, &rot_d, WEFT_KIND_NONE, NULL,
         0},
    };
    static const lay_body2 body_def = {0.0, 0.0, 0, "", 100, {1, 2, 3}, {0.0, 0.0}};
    static const weft_type_desc body_d = {"Body", sizeof(lay_body2), 0, body_f, 7};
    static const weft_field spark_f[] = {F(WEFT_KIND_U8, lay_spark2, pad, 0),
                                         F(WEFT_KIND_I32, lay_spark2, v, 0)};
    static const weft_type_desc spark_d = {"Spark", sizeof(lay_spark2), 0, spark_f, 2};
    static const weft_field score_f[] = {F(WEFT_KIND_U64, lay_score2, points, 0),
                                         F(WEFT_KIND_F64, lay_score2, ratio, 0)};
    static const lay_score2 score_def = {0, 0.5};
    static const weft_type_desc score_d = {"Score", sizeof(lay_score2), 0, score_f, 2};
#  else
    static const weft_field rot_f[] = {F(WEFT_KIND_F32, lay_rot1, a, 0),
                                       F(WEFT_KIND_F32, lay_rot1, b, 0)};
    static const weft_type_desc rot_d = {"Rot", sizeof(lay_rot1),
                                         _Alignof(lay_rot1), rot_f, 2};
#    if LAY_VARIANT == LAY_NARROW
#      define HP_KIND WEFT_KIND_I16
#    else
#      define HP_KIND WEFT_KIND_I32
#    endif
#    if LAY_VARIANT == LAY_KIND
#      define X_KIND WEFT_KIND_I32
#    else
#      define X_KIND WEFT_KIND_F32
#    endif
    static const weft_field body_f[] = {
        F(HP_KIND, body_t, hp, 0),           F(X_KIND, body_t, x, 0),
        F(WEFT_KIND_F32, body_t, y, 0),      F(WEFT_KIND_U8, body_t, flags, 0),
        F(WEFT_KIND_STRING, body_t, name, 8),
        {"rot", WEFT_KIND_STRUCT, offsetof(body_t, rot), 0, &rot_d, WEFT_KIND_NONE, NULL, 0},
#    if LAY_VARIANT == LAY_ZERO
        F(WEFT_KIND_I32, body_t, mana, 0),
#    endif
    };
    static const weft_type_desc body_d = {"Body", sizeof(body_t), 0, body_f,
                                          (int32_t)(sizeof body_f / sizeof body_f[0])};
    static const weft_field spark_f[] = {F(WEFT_KIND_I16, lay_spark1, v, 0)};
    static const weft_type_desc spark_d = {"Spark", sizeof(lay_spark1), 0, spark_f, 1};
    static const weft_field score_f[] = {F(WEFT_KIND_U32, lay_score1, points, 0)};
    static const weft_type_desc score_d = {"Score", sizeof(lay_score1), 0, score_f, 1};
#  endif
    weft_status st = weft_component_describe(w, body, &body_d);
    if (st == WEFT_OK) {
        st = weft_component_describe(w, spark, &spark_d);
    }
    if (st == WEFT_OK) {
        st = weft_component_describe(w, score, &score_d);
    }
#  if LAY_VARIANT == LAY_V2
    /* on a first load only the size is checked; a reload keeps them */
    if (st == WEFT_OK) {
        st = weft_component_migration_defaults(w, body, &body_def, sizeof body_def);
    }
    if (st == WEFT_OK) {
        st = weft_component_migration_defaults(w, score, &score_def, sizeof score_def);
    }
#  endif
    return st;
#endif
}

static weft_component reg(weft_world *w, const char *name, size_t size, size_t align,
                          weft_storage storage, const weft_lifecycle_hooks *hooks)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    d.align = align;
    d.storage = storage;
    if (hooks) {
        d.lifecycle = *hooks;
    }
    return weft_component_register(w, &d);
}

static weft_status build(weft_app *app, void *user)
{
    (void)user;
    weft_world *w = weft_app_world(app);
    weft_component log = weft_component_lookup(w, "HookLog");
    weft_component sum = weft_component_lookup(w, "HpSum");
    if (!log || !sum) {
        return WEFT_ERR_NOT_FOUND;
    }
    weft_lifecycle_hooks hooks;
    memset(&hooks, 0, sizeof hooks);
#ifdef LAY_HOOK
    hooks.on_add = on_add;
    hooks.user = (void *)(uintptr_t)log;
#endif
    weft_component body = reg(w, "Body", sizeof(body_t), _Alignof(body_t), WEFT_STORAGE_TABLE,
                              &hooks);
    weft_component spark = reg(w, "Spark", sizeof(spark_t), _Alignof(spark_t),
                               WEFT_STORAGE_SPARSE, NULL);
    weft_component score = reg(w, "Score", sizeof(score_t), _Alignof(score_t),
                               WEFT_STORAGE_TABLE, NULL);
    if (!body || !spark || !score) {
        return weft_last_status(w);
    }
#if LAY_VARIANT == LAY_DUP
    if (!reg(w, "Body", sizeof(body_t), _Alignof(body_t), WEFT_STORAGE_TABLE, &hooks)) {
        return weft_last_status(w);
    }
#endif
    weft_status st = describe_all(w, body, spark, score);
    if (st != WEFT_OK) {
        return st;
    }
    if (!weft_resource_has(w, score)) {
        score_t s;
        memset(&s, 0, sizeof s);
        s.points = 7;
        st = weft_resource_insert(w, score, &s, sizeof s);
        if (st != WEFT_OK) {
            return st;
        }
    }
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0].id = body;
    q.terms[0].access = WEFT_ACCESS_READ;
    q.term_count = 1;
    weft_resource_use use = {sum, WEFT_ACCESS_WRITE};
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "sum_hp";
    d.fn = sum_hp;
    d.user = (void *)(uintptr_t)sum;
    d.queries = &q;
    d.query_count = 1;
    d.resources = &use;
    d.resource_count = 1;
    if (!weft_app_add_system(app, "Update", &d)) {
        return weft_last_status(w);
    }
#if LAY_VARIANT == LAY_FAILREG
    /* everything below must vanish with the failure */
    if (!reg(w, "Fresh", 8, 8, WEFT_STORAGE_TABLE, NULL)) {
        return weft_last_status(w);
    }
    st = weft_app_insert_schedule(app, "ModLabel", "Update", WEFT_APP_AFTER);
    if (st != WEFT_OK) {
        return st;
    }
    d.name = "in_label";
    if (!weft_app_add_system(app, "ModLabel", &d)) {
        return weft_last_status(w);
    }
    if (!weft_schedule_create(w, "ModPlain")) {
        return weft_last_status(w);
    }
    return WEFT_ERR_CALLBACK;
#else
    return WEFT_OK;
#endif
}

static const weft_module_def def = {WEFT_MODULE_ABI_VERSION, "layout", build, NULL};

WEFT_MODULE_EXPORT const weft_module_def *weft_module_entry(void);
WEFT_MODULE_EXPORT const weft_module_def *weft_module_entry(void)
{
    return &def;
}

/* tests/transform/test_transform.c - the transform plugin (weft_transform,
 * include/weft_transform.h): math, propagation against a double-precision
 * reference, change skipping, reparenting, despawn, bad input, a
 * 100,000-deep chain, on-demand propagation, the app plugin.
 * SPDX-License-Identifier: MIT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "weft_transform.h"

/* Tolerance against the double reference: absolute, scaled by the value's
 * magnitude (float has 24 bits; a depth-8 product of unit-ish matrices
 * keeps the error a few ulps per level). */
#define XF_TOL 1e-4

typedef struct fixture {
    weft_world *w;
    weft_schedule *s;
    weft_transform_ids ids;
} fixture;

/* Does this build run worker threads (weft_world_set_threads(2) works)? */
static bool has_threads(void)
{
    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    bool ok = weft_world_set_threads(w, 2) == WEFT_OK;
    weft_world_destroy(w);
    return ok;
}

static void fx_init(fixture *f, int32_t threads)
{
    f->w = weft_world_create(NULL);
    assert_non_null(f->w);
    weft_status st = weft_world_set_threads(f->w, threads);
    if (st == WEFT_ERR_UNSUPPORTED && threads > 1) {
        /* the build without threads (WEFT_THREADS=OFF): one thread; the
         * tests about thread counts skip there (has_threads) */
        weft_clear_error(f->w);
        st = weft_world_set_threads(f->w, 1);
    }
    assert_int_equal(st, WEFT_OK);
    f->s = weft_schedule_create(f->w, "post");
    assert_non_null(f->s);
    assert_int_equal(weft_transform_add_systems(f->w, f->s, NULL), WEFT_OK);
    assert_int_equal(weft_transform_register(f->w, &f->ids), WEFT_OK);
}

static void fx_fini(fixture *f)
{
    assert_int_equal(weft_world_destroy(f->w), WEFT_OK);
}

static void fx_run(fixture *f)
{
    weft_status st = weft_schedule_run(f->s, 0.0);
    if (st != WEFT_OK) {
        print_error("run: %s: %s\n", weft_status_name(st), weft_last_error(f->w));
    }
    assert_int_equal(st, WEFT_OK);
}

static weft_entity spawn_xf(fixture *f, const weft_transform *t, weft_entity parent)
{
    weft_value v = {f->ids.transform, sizeof *t, t};
    weft_entity e = weft_spawn_with(f->w, &v, 1);
    assert_true(e != 0);
    if (parent) {
        assert_int_equal(weft_set_parent(f->w, e, parent), WEFT_OK);
    }
    return e;
}

static const weft_affine *global_of(fixture *f, weft_entity e)
{
    const weft_affine *g = weft_get(f->w, e, f->ids.global, sizeof(weft_affine));
    assert_non_null(g);
    return g;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float rnd(uint64_t *s, float lo, float hi)
{
    return lo + (hi - lo) * (float)((rng_next(s) >> 11) * (1.0 / 9007199254740992.0));
}

static weft_transform random_xf(uint64_t *s)
{
    weft_transform t;
    for (int i = 0; i < 3; i++) {
        t.translation[i] = rnd(s, -5.0f, 5.0f);
        t.scale[i] = rnd(s, 0.5f, 1.5f);
    }
    float n = 0;
    for (int i = 0; i < 4; i++) {
        t.rotation[i] = rnd(s, -1.0f, 1.0f);
        n += t.rotation[i] * t.rotation[i];
    }
    n = sqrtf(n);
    for (int i = 0; i < 4; i++) {
        t.rotation[i] /= n;
    }
    return t;
}

/* ---- double-precision reference ---- */

typedef struct dmat {
    double m[12];
} dmat;

static dmat d_local(const weft_transform *t)
{
    double x = t->rotation[0], y = t->rotation[1], z = t->rotation[2], w = t->rotation[3];
    double n = sqrt(x * x + y * y + z * z + w * w);
    x /= n, y /= n, z /= n, w /= n;
    double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y),
                   2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x),
                   2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)};
    dmat d;
    for (int i = 0; i < 3; i++) {
        d.m[i] = r[i] * t->scale[0];
        d.m[3 + i] = r[3 + i] * t->scale[1];
        d.m[6 + i] = r[6 + i] * t->scale[2];
        d.m[9 + i] = t->translation[i];
    }
    return d;
}

static dmat d_mul(const dmat *a, const dmat *b)
{
    dmat r;
    for (int col = 0; col < 4; col++) {
        for (int row = 0; row < 3; row++) {
            double v = a->m[row] * b->m[col * 3] + a->m[3 + row] * b->m[col * 3 + 1] +
                       a->m[6 + row] * b->m[col * 3 + 2];
            if (col == 3) {
                v += a->m[9 + row];
            }
            r.m[col * 3 + row] = v;
        }
    }
    return r;
}

static void assert_close(const weft_affine *g, const dmat *ref)
{
    for (int i = 0; i < 12; i++) {
        double tol = XF_TOL * (1.0 + fabs(ref->m[i]));
        if (!(fabs(g->m[i] - ref->m[i]) <= tol)) {
            print_error("element %d: %.9g vs reference %.9g\n", i, (double)g->m[i], ref->m[i]);
            fail();
        }
    }
}

/* ---- math ---- */

static void test_math(void **state)
{
    (void)state;
    uint64_t s = 7;
    for (int k = 0; k < 200; k++) {
        weft_transform t = random_xf(&s);
        weft_affine a, inv, id;
        weft_transform_to_affine(&t, &a);
        dmat ref = d_local(&t);
        assert_close(&a, &ref);
        assert_int_equal(weft_affine_inverse(&a, &inv), WEFT_OK);
        weft_affine_mul(&a, &inv, &id);
        weft_affine e = weft_affine_identity();
        for (int i = 0; i < 12; i++) {
            assert_true(fabsf(id.m[i] - e.m[i]) < 1e-4f);
        }
        float p[3] = {1, 2, 3}, q[3], back[3];
        weft_affine_mul_point(&a, p, q);
        weft_affine_mul_point(&inv, q, back);
        for (int i = 0; i < 3; i++) {
            assert_true(fabsf(back[i] - p[i]) < 1e-4f);
        }
        float m4[16];
        weft_affine b;
        weft_affine_to_mat4(&a, m4);
        assert_true(m4[3] == 0 && m4[7] == 0 && m4[11] == 0 && m4[15] == 1);
        assert_int_equal(weft_affine_from_mat4(m4, &b), WEFT_OK);
        assert_memory_equal(&a, &b, sizeof a);
        weft_transform t2;
        assert_int_equal(weft_affine_to_transform(&a, &t2), WEFT_OK);
        weft_affine a2;
        weft_transform_to_affine(&t2, &a2);
        for (int i = 0; i < 12; i++) {
            assert_true(fabsf(a2.m[i] - a.m[i]) < 1e-4f * (1 + fabsf(a.m[i])));
        }
    }
    /* a projective 4x4 is refused, *out untouched */
    float proj[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, -1, 0, 0, 0, 1};
    weft_affine keep = weft_affine_identity(), before = keep;
    assert_int_equal(weft_affine_from_mat4(proj, &keep), WEFT_ERR_INVALID_ARG);
    assert_memory_equal(&keep, &before, sizeof keep);
    /* look_at: forward (-Z) towards the target, up kept */
    weft_transform t = weft_transform_identity();
    t.translation[0] = 1;
    float target[3] = {1, 0, -10}, up[3] = {0, 1, 0}, fwd_local[3] = {0, 0, -1}, fwd[3];
    assert_int_equal(weft_transform_look_at(&t, target, up), WEFT_OK);
    weft_affine a;
    weft_transform_to_affine(&t, &a);
    weft_affine_mul_vector(&a, fwd_local, fwd);
    assert_true(fabsf(fwd[2] + 1) < 1e-5f && fabsf(fwd[0]) < 1e-5f);
    float target2[3] = {4, 0, 1}; /* to +X from (1, 0, 1)... */
    t.translation[2] = 1;
    assert_int_equal(weft_transform_look_at(&t, target2, up), WEFT_OK);
    weft_transform_to_affine(&t, &a);
    weft_affine_mul_vector(&a, fwd_local, fwd);
    assert_true(fabsf(fwd[0] - 1) < 1e-5f && fabsf(fwd[1]) < 1e-5f);
    /* degenerate look_at: target at the eye, up parallel: refused, unchanged */
    weft_transform keep_t = t;
    assert_int_equal(weft_transform_look_at(&t, t.translation, up), WEFT_ERR_INVALID_ARG);
    float above[3] = {1, 5, 1};
    assert_int_equal(weft_transform_look_at(&t, above, up), WEFT_ERR_INVALID_ARG);
    assert_memory_equal(&t, &keep_t, sizeof t);
    assert_int_equal(weft_affine_inverse(NULL, &a), WEFT_ERR_INVALID_ARG);
}

static void test_validate_and_bad_math(void **state)
{
    (void)state;
    const char *why = NULL;
    weft_transform t = weft_transform_identity();
    assert_int_equal(weft_transform_validate(&t, &why), WEFT_OK);
    t.scale[1] = 0;
    assert_int_equal(weft_transform_validate(&t, &why), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(why, "zero"));
    weft_affine a, inv;
    weft_transform_to_affine(&t, &a);
    assert_int_equal(weft_affine_inverse(&a, &inv), WEFT_ERR_INVALID_ARG);
    t = weft_transform_identity();
    t.scale[0] = NAN;
    assert_int_equal(weft_transform_validate(&t, &why), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(why, "scale"));
    t = weft_transform_identity();
    t.rotation[3] = 2.0f;
    assert_int_equal(weft_transform_validate(&t, &why), WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(why, "unit"));
    /* used normalized: (0, 0, 0, 2) is the identity rotation */
    weft_transform_to_affine(&t, &a);
    weft_affine id = weft_affine_identity();
    assert_memory_equal(&a, &id, sizeof a);
    /* a zero quaternion is replaced by the identity */
    t.rotation[3] = 0.0f;
    weft_transform_to_affine(&t, &a);
    assert_memory_equal(&a, &id, sizeof a);
    assert_int_equal(weft_transform_validate(NULL, &why), WEFT_ERR_INVALID_ARG);
}

/* ---- propagation ---- */

/* A random forest: node k > 0 has parent (k - 1) / branching or none. */
typedef struct forest {
    int32_t n;
    weft_entity *e;
    int32_t *parent;
    weft_transform *t;
} forest;

static void forest_make(fixture *f, forest *fo, int32_t n, uint64_t seed)
{
    uint64_t s = seed;
    fo->n = n;
    fo->e = calloc((size_t)n, sizeof *fo->e);
    fo->parent = calloc((size_t)n, sizeof *fo->parent);
    fo->t = calloc((size_t)n, sizeof *fo->t);
    for (int32_t k = 0; k < n; k++) {
        fo->t[k] = random_xf(&s);
        /* every 50th node starts a new tree; others hang under an earlier one */
        fo->parent[k] = (k % 50 == 0) ? -1 : (int32_t)(rng_next(&s) % (uint64_t)k);
        fo->e[k] = spawn_xf(f, &fo->t[k], fo->parent[k] >= 0 ? fo->e[fo->parent[k]] : 0);
    }
}

static void forest_free(forest *fo)
{
    free(fo->e);
    free(fo->parent);
    free(fo->t);
}

static void forest_check(fixture *f, const forest *fo)
{
    dmat *ref = calloc((size_t)fo->n, sizeof *ref);
    for (int32_t k = 0; k < fo->n; k++) { /* parents come first */
        dmat l = d_local(&fo->t[k]);
        ref[k] = fo->parent[k] >= 0 ? d_mul(&ref[fo->parent[k]], &l) : l;
        assert_close(global_of(f, fo->e[k]), &ref[k]);
    }
    free(ref);
}

static void test_matches_reference(void **state)
{
    (void)state;
    fixture f;
    fx_init(&f, 2);
    forest fo;
    forest_make(&f, &fo, 3000, 11);
    fx_run(&f);
    forest_check(&f, &fo);
    /* move 30 nodes (roots and inner ones), run, check everything again */
    uint64_t s = 99;
    for (int k = 0; k < 30; k++) {
        int32_t i = (int32_t)(rng_next(&s) % (uint64_t)fo.n);
        fo.t[i] = random_xf(&s);
        weft_transform *t = weft_get_mut(f.w, fo.e[i], f.ids.transform, sizeof *t);
        assert_non_null(t);
        *t = fo.t[i];
    }
    fx_run(&f);
    forest_check(&f, &fo);
    forest_free(&fo);
    fx_fini(&f);
}

/* The same frames on 1, 2 and 4 threads: the same world hash each frame. */
static uint64_t run_frames(int32_t threads, uint64_t *hashes, int frames)
{
    fixture f;
    fx_init(&f, threads);
    forest fo;
    forest_make(&f, &fo, 20000, 5);
    uint64_t s = 1234;
    for (int fr = 0; fr < frames; fr++) {
        int moves = fr == 0 ? 0 : (fr % 2 ? 2000 : 20);
        for (int k = 0; k < moves; k++) {
            int32_t i = (int32_t)(rng_next(&s) % (uint64_t)fo.n);
            weft_transform *t = weft_get_mut(f.w, fo.e[i], f.ids.transform, sizeof *t);
            *t = random_xf(&s);
        }
        if (fr == 3) { /* reparent a few nodes to earlier ones */
            for (int k = 0; k < 10; k++) {
                int32_t i = 100 + k * 97;
                assert_int_equal(weft_set_parent(f.w, fo.e[i], fo.e[i % 50 == 0 ? 1 : 0]),
                                 WEFT_OK);
            }
        }
        fx_run(&f);
        hashes[fr] = weft_world_hash(f.w);
    }
    uint64_t h = weft_world_hash(f.w);
    forest_free(&fo);
    fx_fini(&f);
    return h;
}

static void test_same_hash_any_thread_count(void **state)
{
    (void)state;
    enum { FRAMES = 6 };
    uint64_t h1[FRAMES], h2[FRAMES], h4[FRAMES];
    run_frames(1, h1, FRAMES);
    if (has_threads()) { /* else the build without threads: one count only */
        run_frames(2, h2, FRAMES);
        run_frames(4, h4, FRAMES);
        for (int k = 0; k < FRAMES; k++) {
            assert_true(h1[k] == h2[k]);
            assert_true(h1[k] == h4[k]);
        }
    }
    for (int k = 1; k < FRAMES; k++) {
        assert_true(h1[k] != h1[k - 1]); /* every frame moved something */
    }
}

/* Nothing moved: no GlobalTransform is written (changed ticks stay). One
 * leaf moved: only it is written. */
static void test_static_skips(void **state)
{
    (void)state;
    fixture f;
    fx_init(&f, 2);
    weft_transform t = weft_transform_identity();
    t.translation[0] = 1;
    weft_entity root = spawn_xf(&f, &t, 0);
    weft_entity a = spawn_xf(&f, &t, root);
    weft_entity b = spawn_xf(&f, &t, root);
    weft_entity a1 = spawn_xf(&f, &t, a);
    weft_entity b1 = spawn_xf(&f, &t, b);
    fx_run(&f);
    assert_true(global_of(&f, a1)->m[9] == 3.0f);
    weft_entity all[5] = {root, a, b, a1, b1};
    weft_ticks before[5], after[5];
    for (int k = 0; k < 5; k++) {
        assert_int_equal(weft_get_ticks(f.w, all[k], f.ids.global, &before[k]), WEFT_OK);
    }
    fx_run(&f);
    for (int k = 0; k < 5; k++) {
        assert_int_equal(weft_get_ticks(f.w, all[k], f.ids.global, &after[k]), WEFT_OK);
        assert_int_equal(after[k].changed, before[k].changed);
    }
    weft_transform *tm = weft_get_mut(f.w, b1, f.ids.transform, sizeof *tm);
    tm->translation[1] = 5;
    fx_run(&f);
    for (int k = 0; k < 5; k++) {
        assert_int_equal(weft_get_ticks(f.w, all[k], f.ids.global, &after[k]), WEFT_OK);
        if (all[k] == b1) {
            assert_true(after[k].changed != before[k].changed);
        } else {
            assert_int_equal(after[k].changed, before[k].changed);
        }
    }
    assert_true(global_of(&f, b1)->m[10] == 5.0f && global_of(&f, b1)->m[9] == 3.0f);
    /* moving an inner node moves its subtree only */
    tm = weft_get_mut(f.w, a, f.ids.transform, sizeof *tm);
    tm->translation[2] = 2;
    fx_run(&f);
    assert_true(global_of(&f, a1)->m[11] == 2.0f);
    assert_true(global_of(&f, b1)->m[11] == 0.0f);
    fx_fini(&f);
}

static void test_reparent_orphan_despawn(void **state)
{
    (void)state;
    fixture f;
    fx_init(&f, 2);
    weft_transform t = weft_transform_identity();
    t.translation[0] = 10;
    weft_entity p1 = spawn_xf(&f, &t, 0);
    t.translation[0] = 0;
    t.translation[1] = 20;
    weft_entity p2 = spawn_xf(&f, &t, 0);
    t.translation[1] = 0;
    t.translation[2] = 1;
    weft_entity c = spawn_xf(&f, &t, p1);
    weft_entity gc = spawn_xf(&f, &t, c);
    fx_run(&f);
    assert_true(global_of(&f, gc)->m[9] == 10.0f && global_of(&f, gc)->m[11] == 2.0f);
    /* reparent between frames: c and its subtree follow p2 */
    assert_int_equal(weft_set_parent(f.w, c, p2), WEFT_OK);
    fx_run(&f);
    assert_true(global_of(&f, gc)->m[9] == 0.0f && global_of(&f, gc)->m[10] == 20.0f);
    /* orphan: c becomes a root; its global is its own transform */
    assert_int_equal(weft_remove_parent(f.w, c), WEFT_OK);
    fx_run(&f);
    assert_true(global_of(&f, c)->m[10] == 0.0f && global_of(&f, c)->m[11] == 1.0f);
    assert_true(global_of(&f, gc)->m[11] == 2.0f && global_of(&f, gc)->m[10] == 0.0f);
    /* despawn a subtree: c and gc go, the rest keeps propagating */
    assert_int_equal(weft_set_parent(f.w, c, p1), WEFT_OK);
    fx_run(&f);
    assert_int_equal(weft_despawn(f.w, p1), WEFT_OK);
    assert_false(weft_is_alive(f.w, gc));
    weft_transform *tm = weft_get_mut(f.w, p2, f.ids.transform, sizeof *tm);
    tm->translation[1] = 21;
    fx_run(&f);
    assert_true(global_of(&f, p2)->m[10] == 21.0f);
    assert_int_equal(weft_world_check(f.w), WEFT_OK);
    fx_fini(&f);
}

/* Reparenting from a system mid-frame (commands applied before PostUpdate)
 * is seen by the same frame's propagation. */
typedef struct reparent_ctx {
    weft_entity child, parent;
    bool done;
} reparent_ctx;

static void reparent_sys(weft_system_ctx *ctx, void *user)
{
    reparent_ctx *r = user;
    if (r->done) {
        return;
    }
    weft_component child_of = 0;
    weft_world *w = weft_system_world(ctx);
    child_of = weft_child_of(w);
    weft_value v = {child_of, sizeof r->parent, &r->parent};
    assert_int_equal(weft_cmd_insert_many(weft_system_commands(ctx), r->child, &v, 1),
                     WEFT_OK);
    r->done = true;
}

static void test_app_plugin_reparent_mid_frame(void **state)
{
    (void)state;
    weft_app *app = weft_app_create(NULL);
    assert_non_null(app);
    weft_world *w = weft_app_world(app);
    assert_int_equal(weft_world_set_threads(w, has_threads() ? 2 : 1), WEFT_OK);
    assert_int_equal(weft_transform_add_plugin(app), WEFT_OK);
    assert_int_equal(weft_app_setup(app), WEFT_OK);
    assert_true(weft_app_has_plugin(app, WEFT_TRANSFORM_PLUGIN));
    weft_transform_ids ids;
    assert_int_equal(weft_transform_register(w, &ids), WEFT_OK);
    weft_transform t = weft_transform_identity();
    t.translation[0] = 3;
    weft_value v = {ids.transform, sizeof t, &t};
    weft_entity p = weft_spawn_with(w, &v, 1);
    weft_entity c = weft_spawn_with(w, &v, 1);
    assert_int_equal(weft_app_update(app, 0.01), WEFT_OK);
    const weft_affine *g = weft_get(w, c, ids.global, sizeof *g);
    assert_true(g->m[9] == 3.0f);
    reparent_ctx r = {c, p, false};
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "reparent";
    d.fn = reparent_sys;
    d.user = &r;
    d.flags = WEFT_SYSTEM_EXCLUSIVE;
    assert_true(weft_app_add_system(app, WEFT_APP_UPDATE, &d) != 0);
    assert_int_equal(weft_app_update(app, 0.01), WEFT_OK);
    assert_true(r.done);
    g = weft_get(w, c, ids.global, sizeof *g);
    assert_true(g->m[9] == 6.0f);
    /* the set is in PostUpdate and can be ordered against */
    weft_schedule *post = weft_app_schedule(app, WEFT_APP_POST_UPDATE);
    weft_node set = weft_schedule_ensure_set(post, WEFT_TRANSFORM_SET_PROPAGATE);
    assert_true(weft_schedule_members(post, set, NULL, 0) == 1);
    assert_int_equal(weft_transform_add_systems(w, post, NULL), WEFT_ERR_ALREADY_EXISTS);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
}

static void test_bad_input_propagates_safely(void **state)
{
    (void)state;
    fixture f;
    fx_init(&f, 2);
    weft_transform t = weft_transform_identity();
    weft_entity root = spawn_xf(&f, &t, 0);
    weft_transform z = t;
    z.scale[0] = 0;
    weft_entity zero = spawn_xf(&f, &z, root);
    weft_transform nn = t;
    nn.scale[1] = NAN;
    weft_entity nan_e = spawn_xf(&f, &nn, root);
    t.translation[0] = 1;
    weft_entity under_zero = spawn_xf(&f, &t, zero);
    weft_entity under_nan = spawn_xf(&f, &t, nan_e);
    weft_transform un = t;
    un.rotation[3] = 3.0f; /* not normalized: used normalized */
    weft_entity unnorm = spawn_xf(&f, &un, root);
    weft_entity sibling = spawn_xf(&f, &t, root);
    fx_run(&f);
    /* zero scale: the child's x collapses to 0, singular (inverse refused) */
    const weft_affine *g = global_of(&f, under_zero);
    assert_true(g->m[9] == 0.0f);
    weft_affine inv;
    assert_int_equal(weft_affine_inverse(g, &inv), WEFT_ERR_INVALID_ARG);
    /* NaN scale: NaN in the subtree, nowhere else */
    assert_true(isnan(global_of(&f, under_nan)->m[4]));
    assert_false(isnan(global_of(&f, sibling)->m[4]));
    assert_true(global_of(&f, sibling)->m[9] == 1.0f);
    /* the non-normalized rotation: the identity rotation */
    const weft_affine *gu = global_of(&f, unnorm);
    assert_true(gu->m[0] == 1.0f && gu->m[4] == 1.0f && gu->m[8] == 1.0f);
    fx_run(&f); /* and the next frame runs as well */
    fx_fini(&f);
}

static void test_deep_chain_100k(void **state)
{
    (void)state;
    fixture f;
    fx_init(&f, 2);
    enum { DEPTH = 100000 };
    weft_transform t = weft_transform_identity();
    t.translation[0] = 1;
    weft_entity *e = malloc(DEPTH * sizeof *e);
    for (int32_t k = 0; k < DEPTH; k++) {
        e[k] = spawn_xf(&f, &t, k ? e[k - 1] : 0);
    }
    fx_run(&f);
    assert_true(global_of(&f, e[DEPTH - 1])->m[9] == (float)DEPTH);
    /* move the root: the whole chain follows */
    weft_transform *tm = weft_get_mut(f.w, e[0], f.ids.transform, sizeof *tm);
    tm->translation[1] = 2;
    fx_run(&f);
    assert_true(global_of(&f, e[DEPTH - 1])->m[10] == 2.0f);
    /* move the leaf: marking walks 100,000 ancestors, iteratively */
    tm = weft_get_mut(f.w, e[DEPTH - 1], f.ids.transform, sizeof *tm);
    tm->translation[2] = 7;
    fx_run(&f);
    assert_true(global_of(&f, e[DEPTH - 1])->m[11] == 7.0f);
    weft_affine out;
    assert_int_equal(weft_transform_compute_global(f.w, e[DEPTH - 1], &out), WEFT_OK);
    assert_memory_equal(&out, global_of(&f, e[DEPTH - 1]), sizeof out);
    free(e);
    fx_fini(&f);
}

static void test_on_demand(void **state)
{
    (void)state;
    fixture f;
    fx_init(&f, 1);
    uint64_t s = 3;
    weft_transform t[4];
    weft_entity e[4];
    for (int k = 0; k < 4; k++) {
        t[k] = random_xf(&s);
        e[k] = spawn_xf(&f, &t[k], k ? e[k - 1] : 0);
    }
    fx_run(&f);
    /* change the root and read the leaf fresh without running the schedule */
    t[0] = random_xf(&s);
    weft_transform *tm = weft_get_mut(f.w, e[0], f.ids.transform, sizeof *tm);
    *tm = t[0];
    weft_affine fresh;
    assert_int_equal(weft_transform_compute_global(f.w, e[3], &fresh), WEFT_OK);
    dmat ref = d_local(&t[0]);
    for (int k = 1; k < 4; k++) {
        dmat l = d_local(&t[k]);
        ref = d_mul(&ref, &l);
    }
    assert_close(&fresh, &ref);
    assert_false(memcmp(&fresh, global_of(&f, e[3]), sizeof fresh) == 0);
    assert_int_equal(weft_transform_propagate_for(f.w, e[3]), WEFT_OK);
    assert_memory_equal(&fresh, global_of(&f, e[3]), sizeof fresh);
    /* then the schedule gives the same bits */
    fx_run(&f);
    assert_memory_equal(&fresh, global_of(&f, e[3]), sizeof fresh);
    /* errors */
    weft_entity plain = weft_spawn(f.w);
    assert_int_equal(weft_transform_compute_global(f.w, plain, &fresh), WEFT_ERR_NOT_FOUND);
    assert_int_equal(weft_despawn(f.w, plain), WEFT_OK);
    assert_int_equal(weft_transform_compute_global(f.w, plain, &fresh), WEFT_ERR_STALE_ENTITY);
    assert_int_equal(weft_transform_compute_global(f.w, e[0], NULL), WEFT_ERR_INVALID_ARG);
    assert_int_equal(weft_transform_compute_global(NULL, e[0], &fresh),
                     WEFT_ERR_INVALID_HANDLE);
    assert_int_equal(weft_transform_register(f.w, NULL), WEFT_ERR_INVALID_ARG);
    fx_fini(&f);
}

/* The plugin keeps the hierarchy flattened between frames and patches or
 * rebuilds it on structural changes (src/transform/propagate.c). Random
 * frames of every such change: new roots (appended), new children,
 * despawned leaves and subtrees (holes), reparenting, orphaning, Disabled
 * added and removed, Transform removed and inserted again. After each
 * frame every entity whose ancestors all have Transform and none is
 * disabled holds exactly the bits weft_transform_compute_global gives. */
typedef struct churn {
    weft_entity *e;
    int32_t n, cap;
} churn;

static void churn_add(churn *c, weft_entity e)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 256;
        c->e = realloc(c->e, (size_t)c->cap * sizeof *c->e);
        assert_non_null(c->e);
    }
    c->e[c->n++] = e;
}

/* True when e and all its ancestors have Transform and none is disabled. */
static bool propagated(fixture *f, weft_entity e)
{
    weft_component dis = weft_disabled(f->w);
    for (weft_entity x = e; x; x = weft_parent(f->w, x)) {
        if (!weft_has(f->w, x, f->ids.transform) || !weft_has(f->w, x, f->ids.global) ||
            weft_has(f->w, x, dis)) {
            return false;
        }
    }
    return true;
}

static int32_t churn_check(fixture *f, churn *c)
{
    int32_t checked = 0;
    for (int32_t k = 0; k < c->n; k++) {
        weft_entity e = c->e[k];
        if (!weft_is_alive(f->w, e) || !propagated(f, e)) {
            continue;
        }
        weft_affine want;
        assert_int_equal(weft_transform_compute_global(f->w, e, &want), WEFT_OK);
        const weft_affine *g = global_of(f, e);
        if (memcmp(g, &want, sizeof want) != 0) {
            print_error("entity %d (parent %d): m[9..11] %g %g %g, want %g %g %g\n", (int)(uint32_t)e,
                        (int)(uint32_t)weft_parent(f->w, e), (double)g->m[9], (double)g->m[10],
                        (double)g->m[11], (double)want.m[9], (double)want.m[10],
                        (double)want.m[11]);
            fail();
        }
        checked++;
    }
    return checked;
}

static uint64_t churn_run(int32_t threads)
{
    fixture f;
    fx_init(&f, threads);
    churn c = {NULL, 0, 0};
    uint64_t s = 77;
    weft_component dis = weft_disabled(f.w);
    for (int32_t k = 0; k < 2000; k++) {
        weft_transform t = random_xf(&s);
        weft_entity parent = k >= 10 && rng_next(&s) % 8 ? c.e[rng_next(&s) % (uint64_t)c.n] : 0;
        churn_add(&c, spawn_xf(&f, &t, parent));
    }
    fx_run(&f);
    assert_true(churn_check(&f, &c) > 1000);
    for (int frame = 0; frame < 40; frame++) {
        int kind = frame % 8;
        for (int k = 0; k < 1 + (int)(rng_next(&s) % 6); k++) {
            weft_entity e = c.e[rng_next(&s) % (uint64_t)c.n];
            weft_entity o = c.e[rng_next(&s) % (uint64_t)c.n];
            if (!weft_is_alive(f.w, e)) {
                continue;
            }
            weft_transform t = random_xf(&s);
            switch (kind) {
            case 0: /* new childless roots: appended to the cache */
                churn_add(&c, spawn_xf(&f, &t, 0));
                break;
            case 1: /* new children */
                churn_add(&c, spawn_xf(&f, &t, e));
                break;
            case 2: /* despawn (a leaf or a whole subtree) */
                assert_int_equal(weft_despawn(f.w, e), WEFT_OK);
                break;
            case 3: /* reparent, unless o is in e's subtree */
                if (weft_is_alive(f.w, o) && o != e) {
                    bool below = false;
                    for (weft_entity x = o; x && !below; x = weft_parent(f.w, x)) {
                        below = x == e;
                    }
                    if (!below) {
                        assert_int_equal(weft_set_parent(f.w, e, o), WEFT_OK);
                    }
                }
                break;
            case 4: /* orphan */
                assert_int_equal(weft_remove_parent(f.w, e), WEFT_OK);
                break;
            case 5: /* disable, or enable again */
                if (weft_has(f.w, e, dis)) {
                    assert_int_equal(weft_remove(f.w, e, dis), WEFT_OK);
                } else {
                    assert_int_equal(weft_insert(f.w, e, dis, NULL, 0), WEFT_OK);
                }
                break;
            case 6: /* Transform removed, or inserted again */
                if (weft_has(f.w, e, f.ids.transform)) {
                    assert_int_equal(weft_remove(f.w, e, f.ids.transform), WEFT_OK);
                } else {
                    assert_int_equal(weft_insert(f.w, e, f.ids.transform, &t, sizeof t),
                                     WEFT_OK);
                }
                break;
            default: { /* moves only */
                weft_transform *tm = weft_get_mut(f.w, e, f.ids.transform, sizeof *tm);
                if (tm) {
                    *tm = t;
                }
                break;
            }
            }
        }
        /* and some moves every frame */
        for (int k = 0; k < 20; k++) {
            weft_entity e = c.e[rng_next(&s) % (uint64_t)c.n];
            weft_transform *tm = weft_is_alive(f.w, e)
                                     ? weft_get_mut(f.w, e, f.ids.transform, sizeof *tm)
                                     : NULL;
            if (tm) {
                *tm = random_xf(&s);
            }
        }
        fx_run(&f);
        assert_true(churn_check(&f, &c) > 100);
    }
    /* despawn most of the roots' subtrees at once: holes, then a compaction */
    int32_t gone = 0;
    for (int32_t k = 0; k < c.n && gone < 1500; k++) {
        if (weft_is_alive(f.w, c.e[k]) && !weft_parent(f.w, c.e[k]) && k % 5 != 0) {
            assert_int_equal(weft_despawn(f.w, c.e[k]), WEFT_OK);
            gone++;
        }
    }
    fx_run(&f);
    churn_check(&f, &c);
    for (int32_t k = 0; k < c.n; k++) {
        weft_transform *tm = weft_is_alive(f.w, c.e[k])
                                 ? weft_get_mut(f.w, c.e[k], f.ids.transform, sizeof *tm)
                                 : NULL;
        if (tm) {
            tm->translation[0] += 1.0f;
        }
    }
    fx_run(&f);
    churn_check(&f, &c);
    assert_int_equal(weft_world_check(f.w), WEFT_OK);
    uint64_t h = weft_world_hash(f.w);
    free(c.e);
    fx_fini(&f);
    return h;
}

static void test_structural_churn(void **state)
{
    (void)state;
    uint64_t h1 = churn_run(1);
    if (has_threads()) {
        assert_true(churn_run(2) == h1);
        assert_true(churn_run(4) == h1);
    }
}

/* The k-th entity (modulo their number) with a Transform, in query
 * order: a choice that depends only on the world. */
static weft_entity nth_xf(fixture *f, weft_query *q, uint64_t k)
{
    int32_t n = weft_query_count(f->w, q);
    assert_true(n > 0);
    int32_t want = (int32_t)(k % (uint64_t)n);
    weft_iter it;
    assert_int_equal(weft_query_iter(f->w, q, &it), WEFT_OK);
    weft_entity e = 0;
    while (!e && weft_iter_next(&it)) {
        if (want < weft_iter_count(&it)) {
            e = weft_iter_entities(&it)[want];
        }
        want -= weft_iter_count(&it);
    }
    weft_iter_fini(&it);
    return e;
}

/* One frame of structural and value changes drawn from `frame` and the
 * world alone (so a resimulation repeats it), then the propagation. */
static void rollback_frame(fixture *f, weft_query *q, int frame)
{
    uint64_t s = 0x9E37u + (uint64_t)frame * 7919u;
    for (int k = 0; k < 40; k++) {
        weft_entity e = nth_xf(f, q, rng_next(&s));
        weft_transform *t = weft_get_mut(f->w, e, f->ids.transform, sizeof *t);
        assert_non_null(t);
        *t = random_xf(&s);
    }
    if (frame % 10 == 9) { /* values only: nothing tells the plugin a restore happened */
        fx_run(f);
        return;
    }
    weft_transform t = random_xf(&s);
    spawn_xf(f, &t, nth_xf(f, q, rng_next(&s)));
    spawn_xf(f, &t, 0);
    weft_entity e = nth_xf(f, q, rng_next(&s));
    weft_entity o = nth_xf(f, q, rng_next(&s));
    switch (frame % 4) {
    case 0:
        assert_int_equal(weft_despawn(f->w, e), WEFT_OK);
        break;
    case 1: {
        bool below = false;
        for (weft_entity x = o; x && !below; x = weft_parent(f->w, x)) {
            below = x == e;
        }
        if (!below) {
            assert_int_equal(weft_set_parent(f->w, e, o), WEFT_OK);
        }
        break;
    }
    case 2:
        assert_int_equal(weft_remove_parent(f->w, e), WEFT_OK);
        break;
    default:
        break;
    }
    fx_run(f);
}

/* A world with the plugin rolled back in place (weft_snapshot_restore
 * into the live world) and resimulated: the plugin sees the restore
 * (weft_world_restore_count) and rebuilds its hierarchy cache, so every
 * resimulated frame has the hash of the first run and every node the
 * GlobalTransform its ancestors give. */
static void test_rollback_in_place(void **state)
{
    (void)state;
    enum { FRAMES = 24, SNAP_AT = 8 };
    fixture f;
    fx_init(&f, 2);
    uint64_t s = 99;
    weft_entity parents[64];
    for (int i = 0; i < 600; i++) {
        weft_transform t = random_xf(&s);
        weft_entity p = i < 64 ? 0 : parents[rng_next(&s) % 64];
        weft_entity e = spawn_xf(&f, &t, p);
        if (i < 64 || rng_next(&s) % 4 == 0) {
            parents[i % 64] = e;
        }
    }
    weft_query_desc qd = {0};
    qd.terms[0].id = f.ids.transform;
    qd.term_count = 1;
    weft_query *q = weft_query_create(f.w, &qd);
    assert_non_null(q);
    fx_run(&f);
    uint64_t hashes[FRAMES + 1];
    void *blob = NULL;
    size_t len = 0;
    for (int frame = 1; frame <= FRAMES; frame++) {
        rollback_frame(&f, q, frame);
        hashes[frame] = weft_world_hash(f.w);
        if (frame == SNAP_AT) {
            assert_int_equal(weft_snapshot_write(f.w, NULL, 0, &len), WEFT_ERR_CAPACITY);
            blob = malloc(len);
            assert_non_null(blob);
            assert_int_equal(weft_snapshot_write(f.w, blob, len, &len), WEFT_OK);
        }
    }
    for (int round = 0; round < 2; round++) {
        assert_int_equal(weft_snapshot_restore(f.w, blob, len), WEFT_OK);
        assert_int_equal(weft_world_hash(f.w), hashes[SNAP_AT]);
        for (int frame = SNAP_AT + 1; frame <= FRAMES; frame++) {
            rollback_frame(&f, q, frame);
            if (weft_world_hash(f.w) != hashes[frame]) {
                fail_msg("round %d, frame %d: the resimulated hash differs", round, frame);
            }
        }
        /* every node agrees with its ancestors */
        weft_iter it;
        assert_int_equal(weft_query_iter(f.w, q, &it), WEFT_OK);
        while (weft_iter_next(&it)) {
            const weft_entity *es = weft_iter_entities(&it);
            for (int32_t i = 0; i < weft_iter_count(&it); i++) {
                weft_affine want;
                assert_int_equal(weft_transform_compute_global(f.w, es[i], &want), WEFT_OK);
                assert_memory_equal(global_of(&f, es[i]), &want, sizeof want);
            }
        }
    }
    free(blob);
    assert_int_equal(weft_query_destroy(f.w, q), WEFT_OK);
    fx_fini(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_math),
        cmocka_unit_test(test_validate_and_bad_math),
        cmocka_unit_test(test_matches_reference),
        cmocka_unit_test(test_same_hash_any_thread_count),
        cmocka_unit_test(test_static_skips),
        cmocka_unit_test(test_reparent_orphan_despawn),
        cmocka_unit_test(test_app_plugin_reparent_mid_frame),
        cmocka_unit_test(test_bad_input_propagates_safely),
        cmocka_unit_test(test_deep_chain_100k),
        cmocka_unit_test(test_on_demand),
        cmocka_unit_test(test_structural_churn),
        cmocka_unit_test(test_rollback_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

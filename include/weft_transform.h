/* weft_transform.h - the optional transform plugin: Transform ->
 * GlobalTransform over the ChildOf hierarchy (library weft_transform,
 * src/transform/; docs/transform.md). SPDX-License-Identifier: MIT
 *
 * The model is Bevy's bevy_transform (crates/bevy_transform/src/systems.rs:
 * mark_dirty_trees, sync_simple_transforms, propagate_parent_transforms):
 * users write Transform, the plugin writes GlobalTransform in PostUpdate,
 * and only the subtrees below a changed Transform are recomputed. The library is built on the
 * public API of weft.h only.
 *
 * Conventions (all single precision, plain C, no dependency):
 * - Vectors are float[3] (x, y, z). Right-handed; "forward" is -Z and "up"
 *   is +Y, as in Bevy (look_at).
 * - Quaternions are float[4] in the order (x, y, z, w), w the scalar part,
 *   as Bevy's glam Quat. A unit quaternion rotates; propagation normalizes
 *   what it is given (see weft_transform_to_affine).
 * - An affine transform (weft_affine, the GlobalTransform value) is a 3x4
 *   matrix stored column-major: m[0..2] the image of the x axis, m[3..5]
 *   of y, m[6..8] of z, m[9..11] the translation. A point p maps to
 *   M * (p, 1). A 4x4 matrix (weft_affine_to_mat4) is column-major too,
 *   m[col * 4 + row], last row (0, 0, 0, 1).
 * - Multiplication order: weft_affine_mul(a, b) = a * b applies b first,
 *   then a. A child's GlobalTransform is parent_global * child_local, and a
 *   Transform's matrix is T * R * S (scale first, then rotate, then
 *   translate), as Bevy's Transform::compute_affine.
 *
 * Threads: the math functions are pure and callable from any thread. The
 * registration and plugin calls are driver-thread calls, as the weft.h
 * calls they make. Pointers given to a function are read during the call
 * only and never kept. */
#ifndef WEFT_TRANSFORM_H
#define WEFT_TRANSFORM_H

#include "weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Local transform of an entity relative to its parent (or the world for a
 *  root). Written by users. 40 bytes. */
typedef struct weft_transform {
    float translation[3];
    float rotation[4]; /**< quaternion (x, y, z, w) */
    float scale[3];
} weft_transform;

/** Affine 3x4 transform, column-major (see the header comment). 48 bytes.
 *  The value of GlobalTransform, which only the plugin writes. */
typedef struct weft_affine {
    float m[12];
} weft_affine;

/** Component names registered by weft_transform_register. */
#define WEFT_TRANSFORM_NAME "weft.Transform"
#define WEFT_GLOBAL_TRANSFORM_NAME "weft.GlobalTransform"
#define WEFT_TRANSFORM_TREE_CHANGED_NAME "weft.TransformTreeChanged"
/** Plugin name (weft_app_has_plugin). */
#define WEFT_TRANSFORM_PLUGIN "weft.transform"
/** The system set holding the propagation systems, in PostUpdate (and in
 *  PostStartup, as Bevy does); order your systems before or after it. */
#define WEFT_TRANSFORM_SET_PROPAGATE "weft.TransformPropagate"

/** Component ids of the transform plugin in one world. */
typedef struct weft_transform_ids {
    weft_component transform;    /**< weft_transform */
    weft_component global;       /**< weft_affine (GlobalTransform) */
    weft_component tree_changed; /**< one byte; only its changed tick is used */
    weft_component child_of;     /**< weft_child_of(world) */
} weft_transform_ids;

/* ---- math (pure; any thread) ---- */

/** The identity transform (no translation, rotation (0, 0, 0, 1), scale 1). */
WEFT_API weft_transform weft_transform_identity(void);

/** The identity affine transform. */
WEFT_API weft_affine weft_affine_identity(void);

/** Checks a transform: every component finite, rotation of length 1 within
 *  1e-3, no scale component 0. Returns WEFT_OK or WEFT_ERR_INVALID_ARG
 *  (also for t NULL) with *why (may be NULL) set to a static message
 *  naming the problem. Propagation does not call it: it uses a transform
 *  as weft_transform_to_affine does. */
WEFT_API weft_status weft_transform_validate(const weft_transform *t, const char **why);

/** The matrix T * R * S of `t`. The rotation is normalized first; a
 *  rotation whose length is 0 or not finite is replaced by the identity.
 *  Translation and scale are used as given: a zero scale gives a singular
 *  matrix (its inverse fails), a NaN or infinity gives a matrix holding
 *  NaN or infinity, and every descendant inherits it. Writes *out; does
 *  nothing when t or out is NULL. */
WEFT_API void weft_transform_to_affine(const weft_transform *t, weft_affine *out);

/** *out = a * b (b applied first). `out` may alias a or b. NULL arguments:
 *  nothing is written. */
WEFT_API void weft_affine_mul(const weft_affine *a, const weft_affine *b, weft_affine *out);

/** *out = a * (p, 1): the point p transformed. NULL arguments: nothing. */
WEFT_API void weft_affine_mul_point(const weft_affine *a, const float p[3], float out[3]);

/** *out = a's linear part applied to v (a direction: no translation). */
WEFT_API void weft_affine_mul_vector(const weft_affine *a, const float v[3], float out[3]);

/** Inverse of `a` in *out. Errors: INVALID_ARG when a or out is NULL, or
 *  when `a` is singular (|det| below 1e-20) or not finite; *out is then
 *  untouched. */
WEFT_API weft_status weft_affine_inverse(const weft_affine *a, weft_affine *out);

/** Column-major 4x4 (m[col * 4 + row], last row 0 0 0 1). */
WEFT_API void weft_affine_to_mat4(const weft_affine *a, float out[16]);

/** From a column-major 4x4. INVALID_ARG when a pointer is NULL, or when the
 *  last row is not (0, 0, 0, 1) within 1e-6 (a projective matrix is no
 *  affine transform); *out is then untouched. */
WEFT_API weft_status weft_affine_from_mat4(const float m[16], weft_affine *out);

/** Splits `a` into translation, rotation and scale (scale from the column
 *  lengths, negative x scale when the determinant is negative; rotation
 *  from the normalized columns). INVALID_ARG when a pointer is NULL or a
 *  column has length 0 (no rotation to recover); *out is then untouched. */
WEFT_API weft_status weft_affine_to_transform(const weft_affine *a, weft_transform *out);

/** Rotates `t` so that its forward (-Z) points from its translation at
 *  `target`, with its +Y as close to `up` as possible (Bevy's
 *  Transform::look_at). INVALID_ARG when a pointer is NULL, the target is
 *  the translation, `up` is zero, parallel to the direction, or a value is
 *  not finite; t is then unchanged. */
WEFT_API weft_status weft_transform_look_at(weft_transform *t, const float target[3],
                                            const float up[3]);

/* ---- components and plugin (driver thread) ---- */

/** Registers Transform, GlobalTransform and TransformTreeChanged in
 *  `world` (or finds them, when already registered under their names) and
 *  fills *out. Transform requires the other two: inserting it adds
 *  GlobalTransform (identity) and TransformTreeChanged. Thread: driver.
 *  Errors: INVALID_HANDLE (world), INVALID_ARG (out NULL),
 *  SIZE_MISMATCH (a component of that name exists with another size), and
 *  weft_component_register's. */
WEFT_API weft_status weft_transform_register(weft_world *world, weft_transform_ids *out);

/** Adds the propagation system (weft.transform.propagate) to `schedule`
 *  in the set WEFT_TRANSFORM_SET_PROPAGATE (returned in *out_set, may be
 *  NULL). It keeps the hierarchy flattened between runs (rebuilt only when
 *  ChildOf, Disabled or the transform components change structurally) and
 *  recomputes only the subtrees below a changed Transform, in parallel
 *  subtree runs (docs/transform.md). Use it without an app;
 *  weft_transform_add_plugin calls it for PostStartup and PostUpdate.
 *  Registers the components. Thread: driver, not while the schedule runs.
 *  Errors: INVALID_HANDLE (schedule or world), ALREADY_EXISTS (the set is
 *  already in the schedule), and those of weft_schedule_add_system /
 *  weft_transform_register. At run time the system fails the run with
 *  OUT_OF_MEMORY, or RELATIONSHIP when an entity is reached twice from
 *  the roots (a corrupted hierarchy; nothing is propagated then). */
WEFT_API weft_status weft_transform_add_systems(weft_world *world, weft_schedule *schedule,
                                                weft_node *out_set);

/** Adds the plugin WEFT_TRANSFORM_PLUGIN to `app`: at setup it registers
 *  the components and adds the systems to PostStartup and PostUpdate.
 *  Thread: driver. Errors: as weft_app_add_plugin. */
WEFT_API weft_status weft_transform_add_plugin(weft_app *app);

/** Computes e's GlobalTransform now from its Transform and its ancestors'
 *  (Bevy's TransformHelper::compute_global_transform), for code that needs
 *  a fresh value mid-frame; writes nothing to the world. An ancestor
 *  without Transform counts as the identity. Thread: driver, or a
 *  system's own thread when the system declared reads of Transform and
 *  ChildOf (it reads through weft_get on `world`). Errors: INVALID_HANDLE,
 *  INVALID_ARG (out NULL), STALE_ENTITY (e not alive), NOT_FOUND (e has no
 *  Transform, or the components are not registered), RELATIONSHIP (the
 *  parent chain is longer than the live entity count: a corrupted
 *  world). */
WEFT_API weft_status weft_transform_compute_global(const weft_world *world, weft_entity e,
                                                   weft_affine *out);

/** weft_transform_compute_global, then writes the result into e's
 *  GlobalTransform (stamped changed) and each ancestor's, so a system
 *  running later in the frame reads them fresh (Bevy's
 *  propagate_transforms_for). Thread: driver, or an exclusive system.
 *  Errors: as weft_transform_compute_global, plus those of weft_get_mut. */
WEFT_API weft_status weft_transform_propagate_for(weft_world *world, weft_entity e);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_TRANSFORM_H */

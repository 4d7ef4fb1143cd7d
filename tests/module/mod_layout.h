/* tests/module/mod_layout.h - the layouts of mod_layout.c's components,
 * one per variant, shared with test_module_layout.c (which writes values
 * in the old layout and checks them in the new one).
 * SPDX-License-Identifier: MIT
 */
#ifndef MOD_LAYOUT_H
#define MOD_LAYOUT_H

#include <stdint.h>

#define LAY_V1 1       /* the first layout; on_add bumps HookLog[0] */
#define LAY_V2 2       /* add, remove, reorder, widen; on_add bumps HookLog[1] */
#define LAY_ZERO 3     /* V1 + a new field, no defaults; no hook at all */
#define LAY_NARROW 4   /* hp i32 -> i16: refused */
#define LAY_KIND 5     /* x f32 -> i32: refused */
#define LAY_NODESC 6   /* Body grows without a description: refused */
#define LAY_FAILREG 7  /* registers a component, a label and a system, then fails */
#define LAY_SAME 8     /* V1's layout, described again, a new hook: no migration */
#define LAY_DUP 9      /* V1 registering Body twice: refused */

typedef struct lay_rot1 {
    float a, b;
} lay_rot1;

typedef struct lay_body1 {
    int32_t hp;
    float x, y;
    uint8_t flags;     /* dropped by V2 */
    char name[8];
    lay_rot1 rot;
} lay_body1;

typedef struct lay_rot2 {
    double b, a;       /* reordered and widened */
} lay_rot2;

typedef struct lay_body2 {
    double y, x;       /* reordered and widened */
    int64_t hp;        /* widened */
    char name[16];     /* longer buffer */
    int32_t armor;     /* new: 100 by default */
    uint16_t slots[3]; /* new: default {1, 2, 3} */
    lay_rot2 rot;
} lay_body2;

typedef struct lay_body3 {
    int32_t hp;
    float x, y;
    uint8_t flags;
    char name[8];
    lay_rot1 rot;
    int32_t mana;      /* new, no defaults: zero */
} lay_body3;

typedef struct lay_body_narrow {
    int16_t hp;
    float x, y;
    uint8_t flags;
    char name[8];
    lay_rot1 rot;
} lay_body_narrow;

typedef struct lay_body_kind {
    int32_t hp;
    int32_t x;
    float y;
    uint8_t flags;
    char name[8];
    lay_rot1 rot;
} lay_body_kind;

/* Spark: a sparse component; Score: a resource. */
typedef struct lay_spark1 {
    int16_t v;
} lay_spark1;

typedef struct lay_spark2 {
    uint8_t pad;       /* new */
    int32_t v;         /* widened */
} lay_spark2;

typedef struct lay_score1 {
    uint32_t points;
} lay_score1;

typedef struct lay_score2 {
    uint64_t points;   /* widened */
    double ratio;      /* new: 0.5 by default */
} lay_score2;

#endif

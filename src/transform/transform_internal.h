/* src/transform/transform_internal.h - private declarations of the
 * weft_transform library (include/weft_transform.h; docs/transform.md).
 * The library is built on weft.h only, as weft_remote is.
 * SPDX-License-Identifier: MIT */
#ifndef WEFT_TRANSFORM_INTERNAL_H
#define WEFT_TRANSFORM_INTERNAL_H

#include <math.h>

#include "weft_transform.h"

/* The math the propagation inlines into its loops; math.c's public
 * functions and the on-demand path call the same code, so every path
 * gives the same bits. */

/* Rotation matrix columns of the normalized quaternion q (x, y, z, w);
 * identity when q's length is 0 or not finite. */
static inline void wxf_quat_to_cols(const float q_in[4], float c[9])
{
    float x = q_in[0], y = q_in[1], z = q_in[2], w = q_in[3];
    float n2 = x * x + y * y + z * z + w * w;
    if (!(n2 > 0.0f) || !isfinite(n2)) {
        x = y = z = 0.0f;
        w = 1.0f;
    } else if (n2 != 1.0f) {
        float inv = 1.0f / sqrtf(n2);
        x *= inv;
        y *= inv;
        z *= inv;
        w *= inv;
    }
    float x2 = x + x, y2 = y + y, z2 = z + z;
    float xx = x * x2, xy = x * y2, xz = x * z2;
    float yy = y * y2, yz = y * z2, zz = z * z2;
    float wx = w * x2, wy = w * y2, wz = w * z2;
    c[0] = 1.0f - (yy + zz);
    c[1] = xy + wz;
    c[2] = xz - wy;
    c[3] = xy - wz;
    c[4] = 1.0f - (xx + zz);
    c[5] = yz + wx;
    c[6] = xz + wy;
    c[7] = yz - wx;
    c[8] = 1.0f - (xx + yy);
}

/* *out = T * R * S of t (weft_transform_to_affine). */
static inline void wxf_to_affine(const weft_transform *t, weft_affine *out)
{
    float c[9];
    wxf_quat_to_cols(t->rotation, c);
    for (int i = 0; i < 3; i++) {
        out->m[i] = c[i] * t->scale[0];
        out->m[3 + i] = c[3 + i] * t->scale[1];
        out->m[6 + i] = c[6 + i] * t->scale[2];
        out->m[9 + i] = t->translation[i];
    }
}

/* *out = a * b (weft_affine_mul); out may alias a or b. */
static inline void wxf_mul(const weft_affine *a, const weft_affine *b, weft_affine *out)
{
    weft_affine r;
    const float *A = a->m, *B = b->m;
    for (int col = 0; col < 4; col++) {
        const float *bc = B + col * 3;
        for (int row = 0; row < 3; row++) {
            float v = A[row] * bc[0] + A[3 + row] * bc[1] + A[6 + row] * bc[2];
            if (col == 3) {
                v += A[9 + row];
            }
            r.m[col * 3 + row] = v;
        }
    }
    *out = r;
}

#endif

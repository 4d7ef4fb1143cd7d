/* src/transform/math.c - the transform plugin's plain C math: transforms,
 * 3x4 affine matrices (column-major), quaternions (x, y, z, w).
 * Conventions in include/weft_transform.h; model: Bevy's Transform and
 * GlobalTransform (crates/bevy_transform/src/components/).
 * SPDX-License-Identifier: MIT */
#include "transform_internal.h"

#include <math.h>
#include <string.h>

WEFT_API weft_transform weft_transform_identity(void)
{
    weft_transform t = {{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}, {1.0f, 1.0f, 1.0f}};
    return t;
}

WEFT_API weft_affine weft_affine_identity(void)
{
    weft_affine a = {{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}};
    return a;
}

WEFT_API weft_status weft_transform_validate(const weft_transform *t, const char **why)
{
    const char *msg = NULL;
    if (!t) {
        msg = "transform is NULL";
    } else {
        for (int i = 0; i < 3 && !msg; i++) {
            if (!isfinite(t->translation[i])) {
                msg = "translation is not finite";
            } else if (!isfinite(t->scale[i])) {
                msg = "scale is not finite";
            } else if (t->scale[i] == 0.0f) {
                msg = "scale has a zero component (singular GlobalTransform)";
            }
        }
        float n2 = 0.0f;
        for (int i = 0; i < 4 && !msg; i++) {
            if (!isfinite(t->rotation[i])) {
                msg = "rotation is not finite";
            }
            n2 += t->rotation[i] * t->rotation[i];
        }
        if (!msg && fabsf(sqrtf(n2) - 1.0f) > 1e-3f) {
            msg = "rotation is not a unit quaternion (length differs from 1 by more than 1e-3)";
        }
    }
    if (why) {
        *why = msg ? msg : "ok";
    }
    return msg ? WEFT_ERR_INVALID_ARG : WEFT_OK;
}

/* Quaternion (x, y, z, w) of an orthonormal rotation given as columns. */
static void cols_to_quat(const float c[9], float q[4])
{
    float m00 = c[0], m10 = c[1], m20 = c[2];
    float m01 = c[3], m11 = c[4], m21 = c[5];
    float m02 = c[6], m12 = c[7], m22 = c[8];
    float tr = m00 + m11 + m22;
    if (tr > 0.0f) {
        float s = sqrtf(tr + 1.0f) * 2.0f;
        q[3] = 0.25f * s;
        q[0] = (m21 - m12) / s;
        q[1] = (m02 - m20) / s;
        q[2] = (m10 - m01) / s;
    } else if (m00 > m11 && m00 > m22) {
        float s = sqrtf(1.0f + m00 - m11 - m22) * 2.0f;
        q[3] = (m21 - m12) / s;
        q[0] = 0.25f * s;
        q[1] = (m01 + m10) / s;
        q[2] = (m02 + m20) / s;
    } else if (m11 > m22) {
        float s = sqrtf(1.0f + m11 - m00 - m22) * 2.0f;
        q[3] = (m02 - m20) / s;
        q[0] = (m01 + m10) / s;
        q[1] = 0.25f * s;
        q[2] = (m12 + m21) / s;
    } else {
        float s = sqrtf(1.0f + m22 - m00 - m11) * 2.0f;
        q[3] = (m10 - m01) / s;
        q[0] = (m02 + m20) / s;
        q[1] = (m12 + m21) / s;
        q[2] = 0.25f * s;
    }
    float n = sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int i = 0; i < 4; i++) {
        q[i] /= n;
    }
}

WEFT_API void weft_transform_to_affine(const weft_transform *t, weft_affine *out)
{
    if (t && out) {
        wxf_to_affine(t, out);
    }
}

WEFT_API void weft_affine_mul(const weft_affine *a, const weft_affine *b, weft_affine *out)
{
    if (a && b && out) {
        wxf_mul(a, b, out);
    }
}

WEFT_API void weft_affine_mul_point(const weft_affine *a, const float p[3], float out[3])
{
    if (!a || !p || !out) {
        return;
    }
    float r[3];
    for (int i = 0; i < 3; i++) {
        r[i] = a->m[i] * p[0] + a->m[3 + i] * p[1] + a->m[6 + i] * p[2] + a->m[9 + i];
    }
    memcpy(out, r, sizeof r);
}

WEFT_API void weft_affine_mul_vector(const weft_affine *a, const float v[3], float out[3])
{
    if (!a || !v || !out) {
        return;
    }
    float r[3];
    for (int i = 0; i < 3; i++) {
        r[i] = a->m[i] * v[0] + a->m[3 + i] * v[1] + a->m[6 + i] * v[2];
    }
    memcpy(out, r, sizeof r);
}

WEFT_API weft_status weft_affine_inverse(const weft_affine *a, weft_affine *out)
{
    if (!a || !out) {
        return WEFT_ERR_INVALID_ARG;
    }
    const float *m = a->m;
    for (int i = 0; i < 12; i++) {
        if (!isfinite(m[i])) {
            return WEFT_ERR_INVALID_ARG;
        }
    }
    /* Cofactors in double: the inverse of a float matrix, rounded once. */
    double a00 = m[0], a10 = m[1], a20 = m[2];
    double a01 = m[3], a11 = m[4], a21 = m[5];
    double a02 = m[6], a12 = m[7], a22 = m[8];
    double c00 = a11 * a22 - a12 * a21;
    double c01 = a02 * a21 - a01 * a22;
    double c02 = a01 * a12 - a02 * a11;
    double det = a00 * c00 + a10 * c01 + a20 * c02;
    if (!(fabs(det) > 1e-20) || !isfinite(det)) {
        return WEFT_ERR_INVALID_ARG;
    }
    double id = 1.0 / det;
    double i00 = c00 * id, i01 = c01 * id, i02 = c02 * id;
    double i10 = (a12 * a20 - a10 * a22) * id;
    double i11 = (a00 * a22 - a02 * a20) * id;
    double i12 = (a02 * a10 - a00 * a12) * id;
    double i20 = (a10 * a21 - a11 * a20) * id;
    double i21 = (a01 * a20 - a00 * a21) * id;
    double i22 = (a00 * a11 - a01 * a10) * id;
    double tx = m[9], ty = m[10], tz = m[11];
    weft_affine r;
    r.m[0] = (float)i00;
    r.m[1] = (float)i10;
    r.m[2] = (float)i20;
    r.m[3] = (float)i01;
    r.m[4] = (float)i11;
    r.m[5] = (float)i21;
    r.m[6] = (float)i02;
    r.m[7] = (float)i12;
    r.m[8] = (float)i22;
    r.m[9] = (float)-(i00 * tx + i01 * ty + i02 * tz);
    r.m[10] = (float)-(i10 * tx + i11 * ty + i12 * tz);
    r.m[11] = (float)-(i20 * tx + i21 * ty + i22 * tz);
    *out = r;
    return WEFT_OK;
}

WEFT_API void weft_affine_to_mat4(const weft_affine *a, float out[16])
{
    if (!a || !out) {
        return;
    }
    for (int col = 0; col < 4; col++) {
        for (int row = 0; row < 3; row++) {
            out[col * 4 + row] = a->m[col * 3 + row];
        }
        out[col * 4 + 3] = col == 3 ? 1.0f : 0.0f;
    }
}

WEFT_API weft_status weft_affine_from_mat4(const float m[16], weft_affine *out)
{
    if (!m || !out) {
        return WEFT_ERR_INVALID_ARG;
    }
    if (fabsf(m[3]) > 1e-6f || fabsf(m[7]) > 1e-6f || fabsf(m[11]) > 1e-6f ||
        fabsf(m[15] - 1.0f) > 1e-6f) {
        return WEFT_ERR_INVALID_ARG;
    }
    for (int col = 0; col < 4; col++) {
        for (int row = 0; row < 3; row++) {
            out->m[col * 3 + row] = m[col * 4 + row];
        }
    }
    return WEFT_OK;
}

WEFT_API weft_status weft_affine_to_transform(const weft_affine *a, weft_transform *out)
{
    if (!a || !out) {
        return WEFT_ERR_INVALID_ARG;
    }
    float s[3], c[9];
    for (int k = 0; k < 3; k++) {
        const float *col = a->m + 3 * k;
        s[k] = sqrtf(col[0] * col[0] + col[1] * col[1] + col[2] * col[2]);
        if (!(s[k] > 0.0f) || !isfinite(s[k])) {
            return WEFT_ERR_INVALID_ARG;
        }
    }
    const float *m = a->m;
    float det = m[0] * (m[4] * m[8] - m[7] * m[5]) - m[3] * (m[1] * m[8] - m[7] * m[2]) +
                m[6] * (m[1] * m[5] - m[4] * m[2]);
    if (det < 0.0f) {
        s[0] = -s[0];
    }
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 3; i++) {
            c[3 * k + i] = a->m[3 * k + i] / s[k];
        }
    }
    cols_to_quat(c, out->rotation);
    for (int i = 0; i < 3; i++) {
        out->scale[i] = s[i];
        out->translation[i] = a->m[9 + i];
    }
    return WEFT_OK;
}

static void cross(const float a[3], const float b[3], float out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

WEFT_API weft_status weft_transform_look_at(weft_transform *t, const float target[3],
                                            const float up[3])
{
    if (!t || !target || !up) {
        return WEFT_ERR_INVALID_ARG;
    }
    /* back (+Z) points from the target to the eye; right = up x back. */
    float back[3], right[3], up2[3];
    for (int i = 0; i < 3; i++) {
        back[i] = t->translation[i] - target[i];
    }
    float bl = sqrtf(back[0] * back[0] + back[1] * back[1] + back[2] * back[2]);
    if (!(bl > 0.0f) || !isfinite(bl)) {
        return WEFT_ERR_INVALID_ARG;
    }
    for (int i = 0; i < 3; i++) {
        back[i] /= bl;
    }
    cross(up, back, right);
    float rl = sqrtf(right[0] * right[0] + right[1] * right[1] + right[2] * right[2]);
    if (!(rl > 1e-12f) || !isfinite(rl)) {
        return WEFT_ERR_INVALID_ARG;
    }
    for (int i = 0; i < 3; i++) {
        right[i] /= rl;
    }
    cross(back, right, up2);
    float c[9] = {right[0], right[1], right[2], up2[0], up2[1], up2[2],
                  back[0],  back[1],  back[2]};
    cols_to_quat(c, t->rotation);
    return WEFT_OK;
}

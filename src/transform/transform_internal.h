/* src/transform/transform_internal.h - private declarations of the
 * weft_transform library (include/weft_transform.h; docs/transform.md).
 * The library is built on weft.h only, as weft_remote is.
 * SPDX-License-Identifier: MIT */
#ifndef WEFT_TRANSFORM_INTERNAL_H
#define WEFT_TRANSFORM_INTERNAL_H

#include "weft_transform.h"

/* The math the propagation inlines into its walk (math.c). */
void wxf_to_affine(const weft_transform *t, weft_affine *out);
void wxf_mul(const weft_affine *a, const weft_affine *b, weft_affine *out);

#endif

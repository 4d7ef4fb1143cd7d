/* bench/py_columns_system.c - the C side of bench/python_columns.py: the
 * system the Python systems are measured against, p += v over the chunks
 * of its query 0 (write Position, read Velocity). Built as a module with the
 * bench (-O2, like weft_bench) and linked to libweft.so, so loading it into
 * a Python process that already loaded the same libweft reuses that copy.
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>

#include "weft.h"

typedef struct bench_vec2 {
    float x, y;
} bench_vec2;

__attribute__((visibility("default"))) void bench_py_move(weft_system_ctx *ctx, void *user);

/* A weft_system_fn: for every chunk, p[i] += v[i]. `user` is unused. */
void bench_py_move(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return; /* weft records the failure as the system's */
    }
    while (weft_iter_next(&it)) {
        int32_t n = weft_iter_count(&it);
        bench_vec2 *p = weft_iter_field_mut(&it, 0, sizeof *p);
        const bench_vec2 *v = weft_iter_field(&it, 1, sizeof *v);
        if (p == NULL || v == NULL) {
            weft_iter_fini(&it);
            weft_system_fail(ctx, WEFT_ERR_INTERNAL, "bench_py_move: a column is missing");
            return;
        }
        for (int32_t i = 0; i < n; ++i) {
            p[i].x += v[i].x;
            p[i].y += v[i].y;
        }
    }
}

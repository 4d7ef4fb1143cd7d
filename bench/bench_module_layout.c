/* bench/bench_module_layout.c - the reloadable module of the layout
 * migration bench (bench_module.c), built twice: BENCH_LAYOUT 1 registers
 * "MigBody" as {f32 x, f32 y, i32 hp} (12 bytes), BENCH_LAYOUT 2 as
 * {f64 y, f64 x, i64 hp, f32 z = 1.0} (32 bytes): a reload from the first
 * to the second migrates every value (two widened floats, one widened
 * integer, a reordered pair and a new field set from its default).
 * SPDX-License-Identifier: MIT
 */
#include "weft.h"

#include <stddef.h>
#include <string.h>

#if BENCH_LAYOUT == 2
typedef struct mig_body {
    double y, x;
    int64_t hp;
    float z;
} mig_body;
static const weft_field fields[] = {
    {"y", WEFT_KIND_F64, offsetof(mig_body, y), 0, NULL, WEFT_KIND_NONE, NULL, 0},
    {"x", WEFT_KIND_F64, offsetof(mig_body, x), 0, NULL, WEFT_KIND_NONE, NULL, 0},
    {"hp", WEFT_KIND_I64, offsetof(mig_body, hp), 0, NULL, WEFT_KIND_NONE, NULL, 0},
    {"z", WEFT_KIND_F32, offsetof(mig_body, z), 0, NULL, WEFT_KIND_NONE, NULL, 0},
};
static const mig_body defaults = {0.0, 0.0, 0, 1.0f};
static const weft_type_desc desc = {"MigBody", sizeof(mig_body), 0, fields, 4};
#else
typedef struct mig_body {
    float x, y;
    int32_t hp;
} mig_body;
static const weft_field fields[] = {
    {"x", WEFT_KIND_F32, offsetof(mig_body, x), 0, NULL, WEFT_KIND_NONE, NULL, 0},
    {"y", WEFT_KIND_F32, offsetof(mig_body, y), 0, NULL, WEFT_KIND_NONE, NULL, 0},
    {"hp", WEFT_KIND_I32, offsetof(mig_body, hp), 0, NULL, WEFT_KIND_NONE, NULL, 0},
};
static const weft_type_desc desc = {"MigBody", sizeof(mig_body), 0, fields, 3};
#endif

static weft_status build(weft_app *app, void *user)
{
    (void)user;
    weft_world *w = weft_app_world(app);
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = "MigBody";
    d.size = sizeof(mig_body);
    d.align = _Alignof(mig_body);
    weft_component c = weft_component_register(w, &d);
    if (!c) {
        return weft_last_status(w);
    }
    weft_status st = weft_component_describe(w, c, &desc);
#if BENCH_LAYOUT == 2
    if (st == WEFT_OK) {
        st = weft_component_migration_defaults(w, c, &defaults, sizeof defaults);
    }
#endif
    return st;
}

static const weft_module_def layout_def = {WEFT_MODULE_ABI_VERSION, "bench_layout", build,
                                           NULL};

WEFT_MODULE_EXPORT const weft_module_def *weft_module_entry(void);
WEFT_MODULE_EXPORT const weft_module_def *weft_module_entry(void)
{
    return &layout_def;
}

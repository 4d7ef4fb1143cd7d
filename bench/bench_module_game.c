/* bench/bench_module_game.c - the reloadable module bench_module.c loads:
 * 100 empty systems in Update and 20 components of its own, registered
 * and described by every build (so a reload declares them again).
 * SPDX-License-Identifier: MIT
 */
#include "weft.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef struct bench_pair {
    double a, b;
} bench_pair;

static const weft_field pair_fields[] = {
    {"a", WEFT_KIND_F64, offsetof(bench_pair, a), 0, NULL, WEFT_KIND_NONE, NULL, 0},
    {"b", WEFT_KIND_F64, offsetof(bench_pair, b), 0, NULL, WEFT_KIND_NONE, NULL, 0},
};
static const weft_type_desc pair_desc = {"Pair", sizeof(bench_pair), 0, pair_fields, 2};

static void empty(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
}

static weft_status build(weft_app *app, void *user)
{
    (void)user;
    weft_world *w = weft_app_world(app);
    for (int i = 0; i < 20; i++) {
        char name[32];
        snprintf(name, sizeof name, "bcomp%02d", i);
        weft_component_desc cd;
        memset(&cd, 0, sizeof cd);
        cd.name = name;
        cd.size = sizeof(bench_pair);
        weft_component c = weft_component_register(w, &cd);
        if (!c) {
            return weft_last_status(w);
        }
        weft_status st = weft_component_describe(w, c, &pair_desc);
        if (st != WEFT_OK) {
            return st;
        }
    }
    for (int i = 0; i < 100; i++) {
        char name[32];
        snprintf(name, sizeof name, "sys%03d", i);
        weft_system_desc d;
        memset(&d, 0, sizeof d);
        d.name = name;
        d.fn = empty;
        if (!weft_app_add_system(app, "Update", &d)) {
            return weft_last_status(weft_app_world(app));
        }
    }
    return WEFT_OK;
}

static const weft_module_def bench_def = {WEFT_MODULE_ABI_VERSION, "bench", build, NULL};

WEFT_MODULE_EXPORT const weft_module_def *weft_module_entry(void);
WEFT_MODULE_EXPORT const weft_module_def *weft_module_entry(void)
{
    return &bench_def;
}

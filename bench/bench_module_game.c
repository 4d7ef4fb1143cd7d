/* bench/bench_module_game.c - the reloadable module bench_module.c loads:
 * 100 empty systems in Update.
 * SPDX-License-Identifier: MIT
 */
#include "weft.h"

#include <stdio.h>
#include <string.h>

static void empty(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
}

static weft_status build(weft_app *app, void *user)
{
    (void)user;
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

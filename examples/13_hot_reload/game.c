/* examples/13_hot_reload/game.c - the gameplay module of the hot-reload
 * example: one system moving every Position by GAME_SPEED a frame. The
 * host edits GAME_SPEED in a copy of this file, rebuilds it and reloads it
 * while the world keeps running.
 * SPDX-License-Identifier: MIT
 */
#include "weft.h"

#include <stdint.h>
#include <string.h>

#define GAME_SPEED 1

typedef struct Position {
    int64_t x;
} Position;

static void move(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        Position *p = weft_iter_field_mut(&it, 0, sizeof *p);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            p[i].x += GAME_SPEED;
        }
    }
}

static weft_status build(weft_app *app, void *user)
{
    (void)user;
    weft_world *w = weft_app_world(app);
    /* the host owns the component: the module only looks it up, so its
     * layout never depends on which copy of the module runs */
    weft_component pos = weft_component_lookup(w, "Position");
    if (!pos) {
        return weft_last_status(w) != WEFT_OK ? weft_last_status(w) : WEFT_ERR_NOT_FOUND;
    }
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0].id = pos;
    q.terms[0].access = WEFT_ACCESS_WRITE;
    q.term_count = 1;
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "move";
    d.fn = move;
    d.queries = &q;
    d.query_count = 1;
    return weft_app_add_system(app, "Update", &d) ? WEFT_OK : weft_last_status(w);
}

static const weft_module_def game_def = {WEFT_MODULE_ABI_VERSION, "game", build, NULL};

WEFT_MODULE_EXPORT const weft_module_def *weft_module_entry(void);
WEFT_MODULE_EXPORT const weft_module_def *weft_module_entry(void)
{
    return &game_def;
}

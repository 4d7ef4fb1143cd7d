/* tests/remote/remote_fixture.h - a small described world for the
 * weft_remote tests, and helpers to send requests and read answers.
 * SPDX-License-Identifier: MIT
 */
#ifndef WEFT_REMOTE_FIXTURE_H
#define WEFT_REMOTE_FIXTURE_H

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "weft_remote.h"

typedef struct fx_pos {
    float x, y;
} fx_pos;

typedef struct fx_health {
    int32_t hp;
    int32_t slots[3];
} fx_health;

typedef struct fx_world {
    weft_world *w;
    weft_component pos, health, tag, opaque;
    weft_entity a, b, c; /* a: pos+health+tag, b: pos, c: opaque */
} fx_world;

static inline void fx_make(fx_world *fx)
{
    memset(fx, 0, sizeof *fx);
    fx->w = weft_world_create(NULL);
    weft_component_desc d = {0};
    d.name = "Position";
    d.size = sizeof(fx_pos);
    fx->pos = weft_component_register(fx->w, &d);
    d.name = "Health";
    d.size = sizeof(fx_health);
    fx->health = weft_component_register(fx->w, &d);
    d.name = "Tag";
    d.size = 0;
    fx->tag = weft_component_register(fx->w, &d);
    d.name = "Opaque";
    d.size = sizeof(int32_t);
    fx->opaque = weft_component_register(fx->w, &d);
    static const weft_field pos_fields[] = {
        {.name = "x", .kind = WEFT_KIND_F32, .offset = offsetof(fx_pos, x)},
        {.name = "y", .kind = WEFT_KIND_F32, .offset = offsetof(fx_pos, y)},
    };
    static const weft_type_desc pos_desc = {.name = "Position", .fields = pos_fields,
                                            .field_count = 2};
    static const weft_field health_fields[] = {
        {.name = "hp", .kind = WEFT_KIND_I32, .offset = offsetof(fx_health, hp)},
        {.name = "slots", .kind = WEFT_KIND_I32, .offset = offsetof(fx_health, slots),
         .count = 3},
    };
    static const weft_type_desc health_desc = {.name = "Health", .fields = health_fields,
                                               .field_count = 2};
    weft_component_describe(fx->w, fx->pos, &pos_desc);
    weft_component_describe(fx->w, fx->health, &health_desc);
    fx_pos p = {1.5f, 2.0f};
    fx_health h = {10, {1, 2, 3}};
    weft_value va[3] = {{fx->pos, sizeof p, &p}, {fx->health, sizeof h, &h}, {fx->tag, 0, NULL}};
    fx->a = weft_spawn_with(fx->w, va, 3);
    p.x = 7.0f;
    fx->b = weft_spawn_with(fx->w, va, 1);
    int32_t o = 5;
    weft_value vo = {fx->opaque, sizeof o, &o};
    fx->c = weft_spawn_with(fx->w, &vo, 1);
}

/* Sends `fmt` (printf-style) through weft_remote_handle and parses the
 * answer; NULL when there is none. */
static inline json_t *fx_call(weft_remote *r, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t len = 0;
    const char *resp = weft_remote_handle(r, buf, strlen(buf), &len);
    if (!resp) {
        return NULL;
    }
    json_error_t err;
    return json_loadb(resp, len, 0, &err);
}

/* The error code of a response, 0 when it has none. */
/* bevy_remote's error code for a weft status from a world.* method
 * (docs/remote.md): the resource methods' or the others'. */
static inline int fx_bevy_code(weft_status st, int resource)
{
    switch (st) {
    case WEFT_ERR_STALE_ENTITY:
    case WEFT_ERR_INVALID_ENTITY:
        return resource ? -23501 : -23401;
    case WEFT_ERR_NOT_FOUND:
        return resource ? -23502 : -23403;
    default:
        return resource ? -23501 : -23402;
    }
}

static inline int fx_code(json_t *resp)
{
    json_t *e = json_object_get(resp, "error");
    return e ? (int)json_integer_value(json_object_get(e, "code")) : 0;
}

#endif

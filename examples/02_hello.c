/* examples/02_hello.c - the smallest weft program: a world, a component, an entity.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "weft.h"

typedef struct Position {
    float x, y;
} Position;

int main(void)
{
    weft_world *w = weft_world_create(NULL); /* NULL: default allocator, no logger */
    if (w == NULL) {
        return 1;
    }

    /* Components are registered at run time, by name and size. */
    weft_component_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.name = "Position";
    desc.size = sizeof(Position);
    weft_component pos = weft_component_register(w, &desc);
    if (pos == WEFT_COMPONENT_NONE) {
        fprintf(stderr, "register: %s\n", weft_last_error(w));
        return 1;
    }

    /* Spawn an entity that has a Position, then read it back. */
    Position start = {1.0f, 2.0f};
    weft_value values[] = {{pos, sizeof start, &start}};
    weft_entity e = weft_spawn_with(w, values, 1);
    if (e == WEFT_ENTITY_NONE) {
        fprintf(stderr, "spawn: %s\n", weft_last_error(w));
        return 1;
    }

    /* get_mut gives a writable pointer (and marks the value changed). */
    Position *p = weft_get_mut(w, e, pos, sizeof *p);
    if (p == NULL) {
        return 1;
    }
    p->x += 10.0f;

    const Position *q = weft_get(w, e, pos, sizeof *q);
    printf("hello: entity %u (generation %u) is at (%.1f, %.1f)\n",
           (unsigned)weft_entity_index(e), (unsigned)weft_entity_generation(e),
           (double)q->x, (double)q->y);
    int ok = q->x == 11.0f && q->y == 2.0f;

    weft_world_destroy(w);
    return ok ? 0 : 1;
}

/* .ci/consumer/consumer.c - out-of-tree program built against an installed weft (CI install check).
 * SPDX-License-Identifier: MIT
 *
 * Spawns an entity, inserts a component, reads it back, checks it and
 * exits 0; any failure prints the world's error and exits 1.
 */
#include <stdio.h>
#include <string.h>

#include <weft.h>

typedef struct Position {
    float x;
    float y;
} Position;

int main(void)
{
    if (weft_abi_version() != WEFT_VERSION) {
        fprintf(stderr, "consumer: header %d, library %d\n", WEFT_VERSION,
                (int)weft_abi_version());
        return 1;
    }
    weft_world *w = weft_world_create(NULL);
    if (w == NULL) {
        fprintf(stderr, "consumer: weft_world_create failed\n");
        return 1;
    }
    weft_component_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.name = "Position";
    desc.size = sizeof(Position);
    weft_component pos = weft_component_register(w, &desc);
    weft_entity e = weft_spawn(w);
    Position in = {1.5f, -2.0f};
    weft_status st = (pos != 0 && e != 0) ? weft_insert(w, e, pos, &in, sizeof in)
                                          : weft_last_status(w);
    const Position *out = st == WEFT_OK ? weft_get(w, e, pos, sizeof *out) : NULL;
    int ok = out != NULL && out->x == in.x && out->y == in.y && weft_has(w, e, pos);
    if (!ok) {
        fprintf(stderr, "consumer: failed: %s: %s\n",
                weft_status_name(weft_last_status(w)), weft_last_error(w));
    } else {
        printf("consumer: weft %d, entity %u/%u has Position {%g, %g}\n",
               (int)weft_abi_version(), weft_entity_index(e), weft_entity_generation(e),
               (double)out->x, (double)out->y);
    }
    weft_world_destroy(w);
    return ok ? 0 : 1;
}

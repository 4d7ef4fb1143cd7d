/* examples/05_commands.c - command buffers: deferred spawns, inserts and despawns, applied later.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "weft.h"

typedef struct Health { int32_t hp; } Health;

static int64_t live(const weft_world *w)
{
    weft_world_stats st;
    return weft_world_get_stats(w, &st) == WEFT_OK ? st.live_entities : -1;
}

/* A custom command: runs at apply time, in order with the others. */
static void announce(weft_world *w, void *payload, void *user)
{
    (void)user;
    printf("  custom command: %lld entities live at this point of the apply\n",
           (long long)live(w));
    *(int *)payload = 1; /* the payload is the buffer's own copy */
}

int main(void)
{
    weft_world *w = weft_world_create(NULL);
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = "Health";
    d.size = sizeof(Health);
    weft_component hp = weft_component_register(w, &d);
    if (hp == 0) {
        return 1;
    }
    weft_entity old[4];
    for (int i = 0; i < 4; i++) {
        Health h = {i * 10}; /* hp 0, 10, 20, 30 */
        weft_value v[] = {{hp, sizeof h, &h}};
        old[i] = weft_spawn_with(w, v, 1);
    }

    /* 1. Record now, apply later. A spawn returns its id at once: later
     *    commands (in any buffer) may already use it. */
    weft_commands *cmds = weft_commands_create(w);
    if (cmds == NULL) {
        return 1;
    }
    weft_entity fresh[3];
    for (int i = 0; i < 3; i++) {
        fresh[i] = weft_cmd_spawn(cmds, NULL, 0); /* an empty entity */
    }
    Health full = {100};
    int flag = 0;
    weft_status st = weft_cmd_insert(cmds, fresh[0], hp, &full, sizeof full);
    if (st == WEFT_OK) {
        st = weft_cmd_despawn(cmds, old[3]);
    }
    if (st == WEFT_OK) {
        st = weft_cmd_custom(cmds, announce, &flag, sizeof flag, NULL, NULL);
    }
    if (st == WEFT_OK) {
        st = weft_cmd_try_despawn(cmds, old[3]); /* already gone then: silently skipped */
    }
    printf("recorded %d commands; live entities still %lld, fresh[0] alive: %s\n",
           (int)weft_commands_count(cmds), (long long)live(w),
           weft_is_alive(w, fresh[0]) ? "yes" : "no");
    if (st != WEFT_OK || weft_commands_apply(w, cmds) != WEFT_OK) {
        fprintf(stderr, "commands: %s\n", weft_last_error(w));
        return 1;
    }
    const Health *h0 = weft_get(w, fresh[0], hp, sizeof *h0);
    printf("applied: live entities %lld, fresh[0] alive with hp %d, old[3] alive: %s\n",
           (long long)live(w), h0 != NULL ? (int)h0->hp : -1,
           weft_is_alive(w, old[3]) ? "yes" : "no");
    int ok = live(w) == 6 && h0 != NULL && h0->hp == 100 && !weft_is_alive(w, old[3]) &&
             flag == 0; /* the custom command changed its own copy only */

    /* 2. Structural calls made while a query iterates are deferred into the
     *    world's own buffer and applied when the iteration ends. */
    weft_query_desc qd;
    memset(&qd, 0, sizeof qd);
    qd.terms[0] = (weft_term){.id = hp};
    qd.term_count = 1;
    weft_query *q = weft_query_create(w, &qd);
    weft_iter it;
    if (q == NULL || weft_query_iter(w, q, &it) != WEFT_OK) {
        return 1;
    }
    int32_t killed = 0;
    while (weft_iter_next(&it)) {
        const Health *h = weft_iter_field(&it, 0, sizeof *h);
        const weft_entity *e = weft_iter_entities(&it);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            if (h[i].hp < 15 && weft_despawn(w, e[i]) == WEFT_OK) { /* queued */
                killed++;
            }
        }
        ok = ok && live(w) == 6; /* nothing applied yet */
    }
    printf("despawned %d during an iteration; live entities after it: %lld\n", (int)killed,
           (long long)live(w));
    ok = ok && killed == 2 && live(w) == 4 && weft_world_check(w) == WEFT_OK;
    weft_commands_destroy(cmds);
    weft_world_destroy(w);
    printf("commands: %s\n", ok ? "ok" : "UNEXPECTED");
    return ok ? 0 : 1;
}

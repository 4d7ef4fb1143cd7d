/* examples/04_change_detection.c - Added / Changed filters seen by systems across schedule runs.
 * SPDX-License-Identifier: MIT
 *
 * Each system sees what was added or changed since its own previous run,
 * whoever made the change: another system (poison) or the host between
 * runs (spawn, weft_get_mut). Prints one line per run.
 */
#include <stdio.h>
#include <string.h>

#include "weft.h"

typedef struct Health { int32_t hp; } Health;

typedef struct seen { int32_t count; uint32_t bits; } seen; /* entity indices seen */

static weft_component hp_id, poisoned_id;

/* poison: every poisoned entity loses 1 hp per run (marks it changed). */
static void poison(weft_system_ctx *ctx, void *user)
{
    (void)user;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        Health *h = weft_iter_field_mut(&it, 0, sizeof *h);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            h[i].hp -= 1;
        }
    }
}

/* detect: records the entities its query (Added or Changed) yields. */
static void detect(weft_system_ctx *ctx, void *user)
{
    seen *s = user;
    s->count = 0;
    s->bits = 0;
    weft_iter it;
    if (weft_system_iter(ctx, 0, &it) != WEFT_OK) {
        return;
    }
    while (weft_iter_next(&it)) {
        const weft_entity *e = weft_iter_entities(&it);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            s->count++;
            s->bits |= 1u << weft_entity_index(e[i]);
        }
    }
}

static weft_entity spawn(weft_world *w, int32_t hp, bool poisoned)
{
    Health h = {hp};
    weft_value vals[] = {{hp_id, sizeof h, &h}, {poisoned_id, 0, NULL}};
    return weft_spawn_with(w, vals, poisoned ? 2 : 1);
}

static void print_set(const char *what, const seen *s)
{
    printf("  %s {", what);
    for (uint32_t i = 0, first = 1; i < 32; i++) {
        if (s->bits & (1u << i)) {
            printf(first ? "%u" : ",%u", (unsigned)i);
            first = 0;
        }
    }
    printf("}");
}

int main(void)
{
    weft_world *w = weft_world_create(NULL);
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = "Health";
    d.size = sizeof(Health);
    hp_id = weft_component_register(w, &d);
    d.name = "Poisoned";
    d.size = 0;
    poisoned_id = weft_component_register(w, &d);

    weft_query_desc q_poison, q_added, q_changed;
    memset(&q_poison, 0, sizeof q_poison);
    q_poison.terms[0] = (weft_term){.id = hp_id, .access = WEFT_ACCESS_WRITE};
    q_poison.terms[1] = (weft_term){.id = poisoned_id, .oper = WEFT_OPER_WITH};
    q_poison.term_count = 2;
    memset(&q_added, 0, sizeof q_added);
    q_added.terms[0] = (weft_term){.id = hp_id, .filter = WEFT_FILTER_ADDED};
    q_added.term_count = 1;
    q_changed = q_added;
    q_changed.terms[0].filter = WEFT_FILTER_CHANGED;

    seen added = {0, 0}, changed = {0, 0};
    weft_schedule *s = weft_schedule_create(w, "main");
    weft_node n_poison = weft_schedule_add_system(s, &(weft_system_desc){
        .name = "poison", .fn = poison, .queries = &q_poison, .query_count = 1});
    weft_node n_added = weft_schedule_add_system(s, &(weft_system_desc){
        .name = "detect_added", .fn = detect, .user = &added, .queries = &q_added,
        .query_count = 1});
    weft_node n_changed = weft_schedule_add_system(s, &(weft_system_desc){
        .name = "detect_changed", .fn = detect, .user = &changed, .queries = &q_changed,
        .query_count = 1});
    if (n_poison == 0 || n_added == 0 || n_changed == 0 ||
        weft_schedule_add_order(s, n_poison, n_added, 0) != WEFT_OK ||
        weft_schedule_add_order(s, n_poison, n_changed, 0) != WEFT_OK) {
        fprintf(stderr, "setup: %s\n", weft_last_error(w));
        return 1;
    }

    /* What each run should report: {added bits, changed bits}. */
    static const uint32_t expect[4][2] = {{0x7, 0x7}, {0x0, 0x2}, {0x8, 0xE}, {0x0, 0x0}};
    weft_entity a = spawn(w, 10, false), b = spawn(w, 10, true), c = spawn(w, 10, false);
    int ok = a != 0 && b != 0 && c != 0;
    for (int run = 0; run < 4 && ok; run++) {
        const char *host = "";
        if (run == 2) { /* the host changes c and spawns d between runs */
            Health *h = weft_get_mut(w, c, hp_id, sizeof *h);
            ok = h != NULL && spawn(w, 5, false) != 0;
            host = "  (host: get_mut #2, spawn #3)";
        } else if (run == 3) { /* b is cured: nothing writes Health now */
            ok = weft_remove(w, b, poisoned_id) == WEFT_OK;
            host = "  (host: #1 cured)";
        }
        if (!ok || weft_schedule_run(s, 1.0 / 60.0) != WEFT_OK) {
            fprintf(stderr, "run %d: %s\n", run, weft_last_error(w));
            return 1;
        }
        printf("run %d:", run);
        print_set("added", &added);
        print_set("changed", &changed);
        printf("%s\n", host);
        ok = added.bits == expect[run][0] && changed.bits == expect[run][1];
    }
    const Health *hb = weft_get(w, b, hp_id, sizeof *hb);
    ok = ok && hb != NULL && hb->hp == 7; /* poisoned for three runs */
    printf("change detection: %s\n", ok ? "as expected" : "UNEXPECTED");
    weft_world_destroy(w);
    return ok ? 0 : 1;
}

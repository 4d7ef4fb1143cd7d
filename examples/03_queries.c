/* examples/03_queries.c - queries: AND, With, Without, Optional terms and the Changed filter.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "weft.h"

typedef struct Position { float x, y; } Position;
typedef struct Velocity { float x, y; } Velocity;

static weft_component reg(weft_world *w, const char *name, size_t size)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size; /* 0: a tag, no value */
    return weft_component_register(w, &d);
}

/* Runs a query to the end and returns how many rows it yielded. */
static int64_t count_rows(weft_world *w, weft_query *q)
{
    weft_iter it;
    int64_t n = 0;
    if (weft_query_iter(w, q, &it) != WEFT_OK) {
        return -1;
    }
    while (weft_iter_next(&it)) {
        n += weft_iter_count(&it);
    }
    return n;
}

int main(void)
{
    weft_world *w = weft_world_create(NULL);
    weft_component pos = reg(w, "Position", sizeof(Position));
    weft_component vel = reg(w, "Velocity", sizeof(Velocity));
    weft_component frozen = reg(w, "Frozen", 0);
    if (pos == 0 || vel == 0 || frozen == 0) {
        return 1;
    }

    /* 10 movers, 3 of them frozen, and 5 static props (no Velocity). */
    for (int i = 0; i < 15; i++) {
        Position p = {(float)i, 0};
        Velocity v = {1, 0.5f};
        weft_value vals[] = {{pos, sizeof p, &p}, {vel, sizeof v, &v}, {frozen, 0, NULL}};
        int count = i < 10 ? (i < 3 ? 3 : 2) : 1;
        if (weft_spawn_with(w, vals, count) == 0) {
            return 1;
        }
    }

    /* Movement: write Position, read Velocity, skip Frozen. */
    weft_query_desc qd;
    memset(&qd, 0, sizeof qd);
    qd.terms[0] = (weft_term){.id = pos, .access = WEFT_ACCESS_WRITE};
    qd.terms[1] = (weft_term){.id = vel, .access = WEFT_ACCESS_READ};
    qd.terms[2] = (weft_term){.id = frozen, .oper = WEFT_OPER_WITHOUT};
    qd.term_count = 3;
    weft_query *move = weft_query_create(w, &qd);

    /* Everything with a Position, Velocity if it has one. */
    memset(&qd, 0, sizeof qd);
    qd.terms[0] = (weft_term){.id = pos};
    qd.terms[1] = (weft_term){.id = vel, .oper = WEFT_OPER_OPTIONAL};
    qd.term_count = 2;
    weft_query *all = weft_query_create(w, &qd);

    /* Frozen things only (With: a filter without a field). */
    memset(&qd, 0, sizeof qd);
    qd.terms[0] = (weft_term){.id = pos};
    qd.terms[1] = (weft_term){.id = frozen, .oper = WEFT_OPER_WITH};
    qd.term_count = 2;
    weft_query *ice = weft_query_create(w, &qd);

    /* Positions changed since this query's previous run. */
    memset(&qd, 0, sizeof qd);
    qd.terms[0] = (weft_term){.id = pos, .filter = WEFT_FILTER_CHANGED};
    qd.term_count = 1;
    weft_query *changed = weft_query_create(w, &qd);
    if (move == NULL || all == NULL || ice == NULL || changed == NULL) {
        fprintf(stderr, "query: %s\n", weft_last_error(w));
        return 1;
    }
    int64_t first_changed = count_rows(w, changed); /* first run: all are new */

    weft_iter it;
    if (weft_query_iter(w, move, &it) != WEFT_OK) {
        return 1;
    }
    while (weft_iter_next(&it)) {
        Position *p = weft_iter_field_mut(&it, 0, sizeof *p); /* marks rows changed */
        const Velocity *v = weft_iter_field(&it, 1, sizeof *v);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            p[i].x += v[i].x;
            p[i].y += v[i].y;
        }
    }

    int64_t with_vel = 0, rows = 0;
    if (weft_query_iter(w, all, &it) != WEFT_OK) {
        return 1;
    }
    while (weft_iter_next(&it)) {
        rows += weft_iter_count(&it);
        if (weft_iter_has(&it, 1)) { /* Optional: present per chunk */
            with_vel += weft_iter_count(&it);
        }
    }
    int64_t moved = count_rows(w, changed);
    int64_t again = count_rows(w, changed); /* nothing changed since */
    printf("queries: %lld with Position (%lld with Velocity), %lld frozen, "
           "changed: %lld at first, %lld after moving, %lld after that\n",
           (long long)rows, (long long)with_vel, (long long)weft_query_count(w, ice),
           (long long)first_changed, (long long)moved, (long long)again);
    int ok = rows == 15 && with_vel == 10 && weft_query_count(w, ice) == 3 &&
             first_changed == 15 && moved == 7 && again == 0;
    weft_world_destroy(w); /* destroys the queries too */
    return ok ? 0 : 1;
}

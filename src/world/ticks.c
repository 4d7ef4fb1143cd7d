/* src/world/ticks.c - the periodic change-tick clamp (Bevy's
 * check_change_ticks; docs/architecture.md, Queries).
 * SPDX-License-Identifier: MIT
 *
 * Stored ticks are compared with wrapping arithmetic, which is only sound
 * while no tick is more than 2^32 - 1 ticks old. Every
 * WEFT_CHECK_TICK_THRESHOLD ticks this walk moves every tick older than
 * WEFT_MAX_CHANGE_AGE up to exactly that age: such a change can no longer be
 * detected, but it can never look new. It covers table columns (rows and
 * summaries), sparse sets, resources and query last runs.
 */
#include "world/ticks.h"

#include "query/query.h"

static inline bool ticks_clamp(uint32_t *t, uint32_t now)
{
    if (now - *t > WEFT_MAX_CHANGE_AGE) {
        *t = now - WEFT_MAX_CHANGE_AGE;
        return true;
    }
    return false;
}

static void ticks_clamp_column(wf_column *c, uint32_t rows, uint32_t now)
{
    if (!c->ticks) {
        return;
    }
    for (uint32_t r = 0; r < rows; r++) {
        ticks_clamp(&c->ticks[r].added, now);
        ticks_clamp(&c->ticks[r].changed, now);
    }
    ticks_clamp(&c->latest_change, now);
    if (c->bulk) {
        ticks_clamp(&c->bulk_tick, now);
    }
}

bool wf_world_clamp_ticks(weft_world *w, bool force)
{
    uint32_t now = w->change_tick;
    if (!force && now - w->last_check_tick < WEFT_CHECK_TICK_THRESHOLD) {
        return false;
    }
    w->last_check_tick = now;
    for (uint32_t t = 0; t < w->graph.table_count; t++) {
        wf_table *tb = w->graph.tables[t];
        for (uint32_t i = 0; i < tb->col_count; i++) {
            ticks_clamp_column(&tb->cols[i], tb->count, now);
        }
    }
    for (uint32_t id = 1; id <= w->registry.count; id++) {
        wf_type_info *ti = w->registry.infos[id];
        if (ti->sparse) {
            ticks_clamp_column(&ti->sparse->dense, ti->sparse->count, now);
        }
        if (ti->res_present) {
            ticks_clamp(&ti->res_ticks.added, now);
            ticks_clamp(&ti->res_ticks.changed, now);
        }
    }
    for (weft_query *q = w->queries; q; q = q->next) {
        ticks_clamp(&q->last_run, now);
    }
    return true;
}

/* src/world/ticks.c - the periodic change-tick clamp (Bevy's
 * check_change_ticks; docs/architecture.md, Queries).
 * SPDX-License-Identifier: MIT
 *
 * Stored ticks are compared with wrapping arithmetic, which is only sound
 * while no tick is more than 2^32 - 1 ticks old. Every
 * WEFT_CHECK_TICK_THRESHOLD ticks this walk moves every tick older than
 * WEFT_MAX_CHANGE_AGE up to exactly that age: such a change can no longer be
 * detected, but it can never look new. It covers table columns (rows and
 * summaries), sparse sets, resources and query last runs here, and through
 * the world's sys_clamp hook the last runs the system layer keeps (systems,
 * user conditions, resource_changed conditions), which this layer cannot
 * see. A tick left out would, once more than 2^32 ticks old, wrap around
 * and look younger than changes made after it.
 */
#include "world/ticks.h"

#include "query/query.h"

static void ticks_clamp_column(wf_column *c, uint32_t rows, uint32_t now)
{
    if (!c->ticks) {
        return;
    }
    for (uint32_t r = 0; r < rows; r++) {
        wf_tick_clamp(&c->ticks[r].added, now);
        wf_tick_clamp(&c->ticks[r].changed, now);
    }
    wf_tick_clamp(&c->latest_change, now);
    if (c->bulk) {
        wf_tick_clamp(&c->bulk_tick, now);
    }
}

bool wf_world_clamp_ticks(weft_world *w, bool force)
{
    uint32_t now = w->change_tick;
    if (!force && now - w->last_check_tick < WEFT_CHECK_TICK_THRESHOLD) {
        return false;
    }
    w->last_check_tick = now;
    if (w->journal.on) {
        w->journal.overflow = true; /* the journal's ticks were not rewritten */
    }
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
            wf_tick_clamp(&ti->res_ticks.added, now);
            wf_tick_clamp(&ti->res_ticks.changed, now);
        }
    }
    for (weft_query *q = w->queries; q; q = q->next) {
        wf_tick_clamp(&q->last_run, now);
    }
    if (w->sys_clamp) {
        w->sys_clamp(w, now); /* systems' and conditions' last runs */
    }
    return true;
}

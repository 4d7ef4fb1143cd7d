/* src/world/clear.c - emptying a world's content while its registrations stay.
 * SPDX-License-Identifier: MIT
 */
#include "world/clear.h"

#include "world/messages.h"

void wf_world_clear_content(weft_world *w)
{
    w->busy++; /* type hooks and drop callbacks cannot reenter the world */
    wf_graph *g = &w->graph;
    for (uint32_t t = 0; t < g->table_count; t++) {
        wf_table_clear(g->tables[t]);
    }
    for (uint32_t a = 0; a < g->arch_count; a++) {
        g->archetypes[a]->entity_count = 0;
    }
    for (uint32_t id = 1; id <= w->registry.count; id++) {
        wf_type_info *ti = w->registry.infos[id];
        wf_sparse_clear(ti->sparse);
        if (ti->res_present) {
            if (ti->res_value) {
                wf_type_destroy(ti, ti->res_value, 1);
                wf_free(&w->alloc, ti->res_value, ti->size, ti->align);
                ti->res_value = NULL;
            }
            ti->res_present = false;
            memset(&ti->res_ticks, 0, sizeof ti->res_ticks);
        }
    }
    w->registry.resources = 0;
    wf_entities_clear(&w->entities);
    wf_messages_clear(w);
    w->busy--;
}

/* src/query/iter.c - chunk stepping.
 * SPDX-License-Identifier: MIT
 */
#include "query/iter.h"

#include <string.h>

void wf_iter_init(wf_iter *it, weft_world *w, weft_query *q, const wf_query_env *env,
                  uint32_t last_run, uint32_t this_run, bool counts_run)
{
    memset(it, 0, sizeof *it);
    it->state = WF_ITER_ACTIVE;
    it->world = w;
    it->query = q;
    it->env = *env;
    it->last_run = last_run;
    it->this_run = this_run;
    it->counts_run = counts_run;
}

/* Does table row `row` of the current match pass the per-row checks? */
static bool iter_row_passes(const wf_iter *it, const wf_match *m, uint32_t row)
{
    weft_entity e = m->table->entities[row];
    if (it->partial) {
        uint32_t arch = it->env.entities->records[(uint32_t)e].arch;
        if (!wf_query_has_arch(it->query, arch)) {
            return false;
        }
    }
    return !it->filtered ||
           wf_query_row_passes(it->query, m, row, e, it->last_run, it->this_run,
                               *it->env.tick);
}

bool wf_iter_step(wf_iter *it)
{
    const weft_query *q = it->query;
    for (;;) {
        if (it->match) {
            const wf_match *m = wf_iter_match(it);
            uint32_t n = m->table->count;
            if (!it->partial && !it->filtered) {
                if (it->row < n) {
                    it->start = it->row;
                    it->count = n - it->row;
                    it->row = n;
                    return true;
                }
            } else {
                uint32_t r = it->row;
                while (r < n && !iter_row_passes(it, m, r)) {
                    r++;
                }
                if (r < n) {
                    uint32_t end = r + 1;
                    while (end < n && iter_row_passes(it, m, end)) {
                        end++;
                    }
                    it->start = r;
                    it->count = end - r;
                    it->row = end;
                    return true;
                }
                it->row = n;
            }
        }
        if (it->match >= q->match_count) {
            return false;
        }
        it->match++;
        const wf_match *m = wf_iter_match(it);
        it->row = 0;
        it->partial = m->arch_count < m->table->archetype_count;
        it->filtered = q->row_filters;
        if (m->table->count == 0 ||
            (it->filtered && !wf_query_table_may_pass(q, m, it->last_run, *it->env.tick))) {
            it->row = m->table->count; /* nothing here: move on */
        }
    }
}

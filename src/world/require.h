/* src/world/require.h - required components.
 * SPDX-License-Identifier: MIT
 *
 * A component may require others (weft_require). Each component caches the
 * transitive closure of its requirements, breadth first with duplicates and
 * itself dropped (so cycles terminate), rebuilt lazily when the world's
 * requirement generation moves. A structural call expands its value list
 * once: for each supplied component in call order, each closure entry the
 * entity lacks and the call does not supply is appended with its default
 * (the closest requirer's default wins; ties go to the earlier supplied
 * component). The expanded list then takes the normal single-move path.
 * Driver thread only.
 */
#ifndef WF_REQUIRE_H
#define WF_REQUIRE_H

#include "world/world.h"

/* Scratch for one expansion: the value list and temporaries built by
 * requirement constructors (destroyed by wf_require_done). */
typedef struct wf_req_scratch {
    weft_value small[32];
    weft_value *vals;          /* small or allocated */
    int32_t cap;
    int32_t count;
    int32_t temp_from;         /* vals[temp_from..count) may own temps */
    bool *owned;               /* [cap] value is a temporary to destroy */
    bool owned_small[32];
    bool any_owned;            /* some value is a temporary */
} wf_req_scratch;

/* Adds validated requirements to ti (copies defaults). OOM: unchanged. */
weft_status wf_require_add(weft_world *w, wf_type_info *ti, const weft_require *reqs,
                           int32_t count);
/* Checks a requirement list for ti (registered ids, sizes, duplicates,
 * self); records the error. */
weft_status wf_require_check(weft_world *w, weft_component self, const char *name,
                             const weft_require *reqs, int32_t count);
/* The general half of wf_require_expand. */
weft_status wf_require_expand_slow(weft_world *w, const wf_archetype *src,
                                   const weft_value *values, int32_t count,
                                   wf_req_scratch *s, const weft_value **out,
                                   int32_t *out_count);

/* Expands values for an entity in `src`: *out is values itself when
 * nothing is required, else the scratch list. Returns OUT_OF_MEMORY (error
 * recorded) or OK. Call wf_require_done afterwards in every case. The fast
 * path replays the last plan when the source and supplied ids repeat and
 * every default is a plain value. */
static inline weft_status wf_require_expand(weft_world *w, const wf_archetype *src,
                                            const weft_value *values, int32_t count,
                                            wf_req_scratch *s, const weft_value **out,
                                            int32_t *out_count)
{
    const wf_req_plan *p = &w->req_plan;
    s->vals = s->small;
    s->owned = s->owned_small;
    s->cap = 32;
    s->count = 0;
    s->any_owned = false;
    if (p->count == count && p->src == src->id && p->gen == w->req_gen && !p->any_ctor &&
        count + p->link_count <= 32) {
        int32_t i = 0;
        while (i < count && p->ids[i] == values[i].id) {
            i++;
        }
        if (i == count) {
            for (i = 0; i < count; i++) {
                s->vals[i] = values[i];
            }
            for (int32_t k = 0; k < p->link_count; k++) {
                s->vals[count + k] = p->vals[k];
            }
            s->count = count + p->link_count;
            *out = s->count > count ? s->vals : values;
            *out_count = s->count > count ? s->count : count;
            return WEFT_OK;
        }
    }
    return wf_require_expand_slow(w, src, values, count, s, out, out_count);
}
/* Slow half of wf_require_done. */
void wf_require_release(weft_world *w, wf_req_scratch *s);
/* Destroys constructor temporaries and frees the scratch. */
static inline void wf_require_done(weft_world *w, wf_req_scratch *s)
{
    if (s->any_owned || s->vals != s->small) {
        wf_require_release(w, s);
    }
}
/* Frees every requirement and closure (world destruction). */
void wf_require_fini(weft_world *w);

#endif

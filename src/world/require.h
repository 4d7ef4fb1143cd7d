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
} wf_req_scratch;

/* Adds validated requirements to ti (copies defaults). OOM: unchanged. */
weft_status wf_require_add(weft_world *w, wf_type_info *ti, const weft_require *reqs,
                           int32_t count);
/* Checks a requirement list for ti (registered ids, sizes, duplicates,
 * self); records the error. */
weft_status wf_require_check(weft_world *w, weft_component self, const char *name,
                             const weft_require *reqs, int32_t count);
/* Expands values for an entity in `src`: *out is values itself when
 * nothing is required, else the scratch list. Returns OUT_OF_MEMORY (error
 * recorded) or OK. Call wf_require_done afterwards in every case. */
weft_status wf_require_expand(weft_world *w, const wf_archetype *src,
                              const weft_value *values, int32_t count,
                              wf_req_scratch *s, const weft_value **out, int32_t *out_count);
/* Destroys constructor temporaries and frees the scratch. */
void wf_require_done(weft_world *w, wf_req_scratch *s);
/* Frees every requirement and closure (world destruction). */
void wf_require_fini(weft_world *w);

#endif

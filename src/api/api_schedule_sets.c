/* src/api/api_schedule_sets.c - listing a schedule's sets and their
 * members (inspection for tools such as the remote inspector's graph).
 * SPDX-License-Identifier: MIT
 */
#include "schedule/schedule.h"

static bool sets_sched_ok(const weft_schedule *s)
{
    return s && s->magic == WF_SCHEDULE_MAGIC && wf_world_ok(s->world);
}

WEFT_API int32_t weft_schedule_sets(const weft_schedule *schedule, weft_node *out, int32_t cap)
{
    if (!sets_sched_ok(schedule)) {
        return -1;
    }
    if (cap < 0 || (!out && cap > 0)) {
        wf_error(schedule->world, WEFT_ERR_INVALID_ARG,
                 "weft_schedule_sets: out is NULL with cap %d, or cap < 0", (int)cap);
        return -1;
    }
    for (uint32_t i = 0; i < schedule->nsets && (int64_t)i < cap; i++) {
        out[i] = WEFT_NODE_SET | (i + 1);
    }
    return (int32_t)schedule->nsets;
}

WEFT_API int32_t weft_schedule_members(const weft_schedule *schedule, weft_node set,
                                       weft_node *out, int32_t cap)
{
    if (!sets_sched_ok(schedule)) {
        return -1;
    }
    if (cap < 0 || (!out && cap > 0)) {
        wf_error(schedule->world, WEFT_ERR_INVALID_ARG,
                 "weft_schedule_members: out is NULL with cap %d, or cap < 0", (int)cap);
        return -1;
    }
    if (!(set & WEFT_NODE_SET) || !wf_schedule_node_ok(schedule, set, true)) {
        wf_error(schedule->world, WEFT_ERR_INVALID_ARG,
                 "weft_schedule_members: node %#x is not a set of schedule '%s'", set,
                 schedule->name);
        return -1;
    }
    int32_t n = 0;
    for (uint32_t i = 0; i < schedule->nmembers; i++) {
        if (schedule->members[i].b != set) {
            continue;
        }
        weft_node child = schedule->members[i].a;
        bool seen = false; /* a node put into the same set twice is listed once */
        for (uint32_t k = 0; k < i && !seen; k++) {
            seen = schedule->members[k].b == set && schedule->members[k].a == child;
        }
        if (seen) {
            continue;
        }
        if (n < cap) {
            out[n] = child;
        }
        n++;
    }
    return n;
}

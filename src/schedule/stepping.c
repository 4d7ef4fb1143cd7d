/* src/schedule/stepping.c - stepping a schedule system by system (after
 * Bevy's Stepping), built on the executor's skip hook.
 * SPDX-License-Identifier: MIT
 *
 * While stepping is on, every run first decides which systems it skips
 * (wf_system.skip_once, the flag weft_schedule_run_skip sets), then runs
 * as usual, so skipped systems release their successors, keep their
 * last-run tick and never see a half-run schedule. The cursor is a
 * position of the built plan: the systems before it ran earlier in the
 * same "frame" of the debugger. A system is steppable unless it is flagged
 * WEFT_SYSTEM_NOT_STEPPABLE or its behavior is ALWAYS_RUN or NEVER_RUN.
 * A rebuild may reorder the plan, so the cursor belongs to one build
 * (step_builds) and starts over after another.
 *
 * Thread: the driver, before a run starts (no worker reads skip_once
 * before the run publishes its first step).
 */
#include "schedule/schedule.h"

static uint8_t behavior_of(const weft_schedule *s, const wf_system *sys)
{
    if (sys->flags & WEFT_SYSTEM_NOT_STEPPABLE) {
        return WEFT_STEP_ALWAYS_RUN;
    }
    return s->nodes[sys->node - 1].step;
}

static bool steppable(const weft_schedule *s, const wf_step *st)
{
    if (!st->sys) {
        return false;
    }
    uint8_t b = behavior_of(s, st->sys);
    return b == WEFT_STEP_DEFAULT || b == WEFT_STEP_BREAK;
}

static uint32_t cursor_of(const weft_schedule *s)
{
    return s->step_builds == s->builds && s->step_cursor < s->plan.n ? s->step_cursor : 0;
}

/* First steppable position at or after `from`, or n. */
static uint32_t next_from(const weft_schedule *s, uint32_t from)
{
    for (uint32_t p = from; p < s->plan.n; p++) {
        if (steppable(s, &s->plan.steps[p])) {
            return p;
        }
    }
    return s->plan.n;
}

uint32_t wf_stepping_next(const weft_schedule *s)
{
    return next_from(s, cursor_of(s));
}

void wf_stepping_prepare(weft_schedule *s)
{
    const wf_plan *plan = &s->plan;
    uint32_t n = plan->n;
    uint32_t cursor = cursor_of(s);
    uint8_t action = s->step_action;
    s->step_action = WF_STEP_WAIT;
    /* [run0, run1): the steppable positions this run may run */
    uint32_t run0 = n, run1 = n;
    if (action == WF_STEP_ONE) {
        uint32_t q = next_from(s, cursor);
        if (q == n) {
            q = next_from(s, 0); /* past the end: the next frame starts */
        }
        run0 = q;
        run1 = q < n ? q + 1 : n;
        cursor = run1 < n ? run1 : 0;
    } else if (action == WF_STEP_CONTINUE) {
        run0 = cursor;
        run1 = n;
        for (uint32_t p = cursor; p < n; p++) {
            const wf_step *st = &plan->steps[p];
            if (p > cursor && steppable(s, st) &&
                behavior_of(s, st->sys) == WEFT_STEP_BREAK) {
                run1 = p;
                break;
            }
        }
        cursor = run1 < n ? run1 : 0;
    }
    for (uint32_t p = 0; p < n; p++) {
        const wf_step *st = &plan->steps[p];
        if (!st->sys) {
            continue; /* sync points always run */
        }
        uint8_t b = behavior_of(s, st->sys);
        bool run = b == WEFT_STEP_ALWAYS_RUN ||
                   (b != WEFT_STEP_NEVER_RUN && p >= run0 && p < run1);
        if (!run) {
            st->sys->skip_once = true;
        }
    }
    s->step_cursor = cursor;
    s->step_builds = s->builds;
}

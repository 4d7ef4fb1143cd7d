/* src/schedule/frame.c - the frame helper: an ordered list of schedules and
 * a fixed-timestep schedule driven by an accumulator (as Bevy's
 * FixedMain and Time<Fixed>).
 * SPDX-License-Identifier: MIT
 *
 * Per frame: messages are updated once, dt is clamped to max_delta and
 * added to the accumulator, then the schedules run in order with the
 * fixed one run floor(acc / step) times at its place (each run sees
 * dt = step), keeping the remainder for the next frame.
 *
 * The step count is computed in double and bounded before it becomes an
 * integer: at most WEFT_FRAME_MAX_FIXED_STEPS per frame, the time beyond
 * them dropped (a simulation that cannot keep up slows down instead of
 * falling further behind every frame). Steps below WEFT_FRAME_MIN_STEP
 * are refused at configuration.
 */
#include "schedule/schedule.h"

#include <math.h>
#include <string.h>

weft_status wf_frame_configure(weft_world *w, const weft_frame_desc *d)
{
    if (!d || d->_start_canary || d->_end_canary) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_frame_configure: desc NULL or canary not 0");
    }
    if (d->schedule_count < 0 || (d->schedule_count && !d->schedules)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_frame_configure: schedule_count %d negative or schedules NULL",
                        d->schedule_count);
    }
    if (d->fixed && (d->fixed_before < 0 || d->fixed_before > d->schedule_count)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_frame_configure: fixed_before %d out of range 0..%d",
                        d->fixed_before, d->schedule_count);
    }
    if (!(d->fixed_step >= 0.0) || !(d->max_delta >= 0.0) || isinf(d->fixed_step) ||
        isinf(d->max_delta)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_frame_configure: fixed_step and max_delta must be finite and >= 0");
    }
    if (d->fixed_step != 0.0 && d->fixed_step < WEFT_FRAME_MIN_STEP) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_frame_configure: fixed_step %g s is below the minimum of %g s",
                        d->fixed_step, WEFT_FRAME_MIN_STEP);
    }
    for (int32_t i = 0; i < d->schedule_count; i++) {
        if (!d->schedules[i] || d->schedules[i]->world != w) {
            return wf_error(w, WEFT_ERR_INVALID_ARG,
                            "weft_frame_configure: schedule %d is NULL or of another world", i);
        }
    }
    if (d->fixed && d->fixed->world != w) {
        return wf_error(w, WEFT_ERR_INVALID_ARG,
                        "weft_frame_configure: the fixed schedule belongs to another world");
    }
    wf_sys_world *sw = wf_sys_get(w);
    if (!sw) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    if (sw->depth) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE,
                        "weft_frame_configure: not allowed while a schedule runs");
    }
    weft_schedule **list = NULL;
    if (d->schedule_count) {
        list = wf_alloc(&w->alloc, (size_t)d->schedule_count * sizeof *list,
                        _Alignof(weft_schedule *));
        if (!list) {
            return wf_error(w, WEFT_ERR_OUT_OF_MEMORY, "out of memory configuring frames");
        }
        memcpy(list, d->schedules, (size_t)d->schedule_count * sizeof *list);
    }
    if (sw->frame) {
        wf_free(&w->alloc, sw->frame, (size_t)sw->nframe * sizeof *sw->frame,
                _Alignof(weft_schedule *));
    }
    sw->frame = list;
    sw->nframe = d->schedule_count;
    sw->fixed = d->fixed;
    sw->fixed_before = d->fixed ? d->fixed_before : 0;
    sw->step = d->fixed_step > 0.0 ? d->fixed_step : 1.0 / 64.0;
    sw->max_delta = d->max_delta > 0.0 ? d->max_delta : 0.25;
    sw->no_msg_update = d->no_message_update;
    sw->acc = 0.0;
    sw->fixed_steps = 0;
    return WEFT_OK;
}

static void keep_first(weft_status *first, weft_status st)
{
    if (*first == WEFT_OK) {
        *first = st;
    }
}

weft_status wf_frame_run(weft_world *w, double dt)
{
    wf_sys_world *sw = wf_sys_get(w);
    if (!sw) {
        return WEFT_ERR_OUT_OF_MEMORY;
    }
    if (!(dt >= 0.0) || isinf(dt)) {
        return wf_error(w, WEFT_ERR_INVALID_ARG, "weft_frame_run: dt must be finite and >= 0");
    }
    if (sw->depth) {
        return wf_error(w, WEFT_ERR_WRONG_PHASE, "weft_frame_run: a schedule is running");
    }
    if (!sw->no_msg_update) {
        wf_messages_update(w);
    }
    if (dt > sw->max_delta) {
        dt = sw->max_delta;
    }
    int32_t steps = 0;
    if (sw->fixed) {
        sw->acc += dt;
        /* the epsilon keeps 0.048 / 0.016 (2.9999...) at 3 steps; the
         * bound comes before the conversion, which is undefined for values
         * out of int32_t's range (n >= 0: the conversion is the floor) */
        double n = sw->acc / sw->step + 1e-9;
        if (!(n < (double)WEFT_FRAME_MAX_FIXED_STEPS)) {
            steps = WEFT_FRAME_MAX_FIXED_STEPS;
            sw->acc = 0.0; /* what the capped steps could not run is dropped */
        } else {
            steps = (int32_t)n;
            sw->acc -= steps * sw->step;
        }
        if (sw->acc < 0.0) {
            sw->acc = 0.0;
        }
    }
    sw->fixed_steps = steps;
    weft_status first = WEFT_OK;
    for (int32_t i = 0; i <= sw->nframe; i++) {
        if (sw->fixed && i == sw->fixed_before) {
            for (int32_t k = 0; k < steps; k++) {
                weft_status st = wf_schedule_run(w, sw->fixed, sw->step);
                if (st != WEFT_OK) {
                    keep_first(&first, st);
                }
            }
        }
        if (i < sw->nframe && sw->frame[i]) {
            weft_status st = wf_schedule_run(w, sw->frame[i], dt);
            if (st != WEFT_OK) {
                keep_first(&first, st);
            }
        }
    }
    return first;
}

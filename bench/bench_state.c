/* bench/bench_state.c - the cost of a state transition.
 * SPDX-License-Identifier: MIT
 *
 *  state_transition  a freely mutable state with two values A and B;
 *                    OnExit(A), OnEnter(B), OnExit(B) and OnEnter(A) hold
 *                    50 systems each, so every transition (A -> B, then
 *                    B -> A) runs 100 enter/exit systems, through
 *                    weft_state_set_next + weft_state_transition. The
 *                    baseline, measured in the same run and alternated
 *                    with it, runs the same 100 system bodies in one plain
 *                    schedule (weft_schedule_run), so the ratio is what the
 *                    state machinery adds on top of running the systems:
 *                    queuing, the apply pass, the message, the sweeps and
 *                    the second schedule run. Each system adds one to its
 *                    own counter (a resource it declares WRITE), which the
 *                    bench checks after the last run. One thread.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_world.h"

enum { ST_PER_SCHEDULE = 50, ST_SYSTEMS = 2 * ST_PER_SCHEDULE, ST_SAMPLES = 25,
       ST_PER_SAMPLE = 40 };

enum { ST_A = 0, ST_B = 1 };

typedef struct st_bench {
    bench_world b;
    weft_state s;
    weft_schedule *plain;
    weft_component counters[2 * ST_SYSTEMS]; /* one per transition system */
    weft_component plain_counters[ST_SYSTEMS];
} st_bench;

static void st_count(weft_system_ctx *ctx, void *user)
{
    weft_component r = *(const weft_component *)user;
    int64_t *v = weft_system_resource_mut(ctx, r, sizeof *v);
    if (v) {
        (*v)++;
    }
}

static void st_add(st_bench *x, weft_schedule *s, weft_component *r, const char *name)
{
    weft_resource_use use = {*r, WEFT_ACCESS_WRITE};
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.fn = st_count;
    d.user = r;
    d.resources = &use;
    d.resource_count = 1;
    if (weft_schedule_add_system(s, &d) == 0) {
        bench_fail(x->b.scenario, "weft_schedule_add_system", weft_last_error(x->b.w));
    }
}

static weft_component st_counter(st_bench *x, const char *name)
{
    weft_component r = bench_register(&x->b, name, sizeof(int64_t), WEFT_STORAGE_DEFAULT, 0);
    int64_t zero = 0;
    bench_world_expect(&x->b, "weft_resource_insert",
                       weft_resource_insert(x->b.w, r, &zero, sizeof zero));
    return r;
}

static void st_make(st_bench *x)
{
    bench_world_init(&x->b, "state_transition", 0, WEFT_STORAGE_DEFAULT, NULL);
    static const weft_state_value values[2] = {{ST_A, "A"}, {ST_B, "B"}};
    weft_state_desc d;
    memset(&d, 0, sizeof d);
    d.name = "BenchState";
    d.values = values;
    d.value_count = 2;
    d.initial = ST_A;
    x->s = weft_state_register(x->b.w, &d);
    if (!x->s) {
        bench_fail(x->b.scenario, "weft_state_register", weft_last_error(x->b.w));
    }
    weft_schedule *sched[4] = {
        weft_state_on_exit(x->b.w, x->s, ST_A), weft_state_on_enter(x->b.w, x->s, ST_B),
        weft_state_on_exit(x->b.w, x->s, ST_B), weft_state_on_enter(x->b.w, x->s, ST_A)};
    char name[32];
    for (int k = 0; k < 4; k++) {
        if (!sched[k]) {
            bench_fail(x->b.scenario, "weft_state_on_enter/exit", weft_last_error(x->b.w));
        }
        for (int i = 0; i < ST_PER_SCHEDULE; i++) {
            int idx = k * ST_PER_SCHEDULE + i;
            snprintf(name, sizeof name, "T%d", idx);
            x->counters[idx] = st_counter(x, name);
            snprintf(name, sizeof name, "sys%d", idx);
            st_add(x, sched[k], &x->counters[idx], name);
        }
    }
    x->plain = weft_schedule_create(x->b.w, "plain");
    if (!x->plain) {
        bench_fail(x->b.scenario, "weft_schedule_create", weft_last_error(x->b.w));
    }
    for (int i = 0; i < ST_SYSTEMS; i++) {
        snprintf(name, sizeof name, "P%d", i);
        x->plain_counters[i] = st_counter(x, name);
        snprintf(name, sizeof name, "plain%d", i);
        st_add(x, x->plain, &x->plain_counters[i], name);
    }
    /* the initial enter, and every schedule built once */
    bench_world_expect(&x->b, "weft_state_transition", weft_state_transition(x->b.w));
    for (int k = 0; k < 4; k++) {
        bench_world_expect(&x->b, "weft_schedule_build", weft_schedule_build(sched[k]));
    }
    bench_world_expect(&x->b, "weft_schedule_build", weft_schedule_build(x->plain));
}

static int64_t st_value(const st_bench *x, weft_component r)
{
    const int64_t *v = weft_resource_get(x->b.w, r, sizeof *v);
    return v ? *v : -1;
}

/* One transition: A -> B on even calls, B -> A on odd ones. */
static void st_transition(st_bench *x, int64_t i)
{
    bench_world_expect(&x->b, "weft_state_set_next",
                       weft_state_set_next(x->b.w, x->s, (i & 1) ? ST_A : ST_B));
    bench_world_expect(&x->b, "weft_state_transition", weft_state_transition(x->b.w));
}

void bench_state_transition(const bench_cfg *cfg, const bench_data *data)
{
    (void)data;
    st_bench *x = bench_xmalloc(sizeof *x);
    memset(x, 0, sizeof *x);
    st_make(x);
    int32_t reps = cfg->reps > 0 ? cfg->reps : 1;
    int32_t total = reps * ST_SAMPLES;
    double *vt = bench_xmalloc(sizeof *vt * (size_t)total);
    double *vp = bench_xmalloc(sizeof *vp * (size_t)total);
    int64_t transitions = 0;
    int64_t plain_runs = 0;
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        for (int32_t k = 0; k < ST_SAMPLES; k++) {
            uint64_t t0 = bench_now_ns();
            for (int32_t i = 0; i < ST_PER_SAMPLE; i++) {
                st_transition(x, transitions++);
            }
            uint64_t t1 = bench_now_ns();
            for (int32_t i = 0; i < ST_PER_SAMPLE; i++) {
                bench_world_expect(&x->b, "weft_schedule_run", weft_schedule_run(x->plain, 0.0));
            }
            uint64_t t2 = bench_now_ns();
            plain_runs += ST_PER_SAMPLE;
            if (r >= 0) {
                vt[r * ST_SAMPLES + k] = (double)(t1 - t0) / ST_PER_SAMPLE;
                vp[r * ST_SAMPLES + k] = (double)(t2 - t1) / ST_PER_SAMPLE;
            }
        }
    }
    /* every transition ran its 100 systems: A -> B runs the first two
     * blocks, B -> A the last two, once per two transitions each */
    int64_t half = transitions / 2;
    for (int i = 0; i < 2 * ST_SYSTEMS; i++) {
        int64_t want = i < ST_SYSTEMS ? transitions - half : half;
        if (i >= 3 * ST_PER_SCHEDULE) {
            want += 1; /* OnEnter(A) also ran at the initial enter */
        }
        if (st_value(x, x->counters[i]) != want) {
            bench_fail(x->b.scenario, "counters", "a transition system missed a run");
        }
    }
    for (int i = 0; i < ST_SYSTEMS; i++) {
        if (st_value(x, x->plain_counters[i]) != plain_runs) {
            bench_fail(x->b.scenario, "counters", "a plain system missed a run");
        }
    }
    double t = bench_median(vt, total);
    double p = bench_median(vp, total);
    bench_report_ratio("state_transition 100 enter/exit systems vs plain schedule", "ns", t, p,
                       1.5);
    bench_note("state_transition: one transition running 100 OnExit/OnEnter systems takes "
               "%.2f us; the same 100 systems in one plain schedule %.2f us (ratio %.2f)",
               t / 1000.0, p / 1000.0, p > 0.0 ? t / p : 0.0);
    free(vt);
    free(vp);
    bench_world_fini(&x->b);
    free(x);
}

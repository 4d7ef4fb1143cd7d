/* bench/bench.h - shared harness of weft_bench: config, timer, RNG, reporting.
 * SPDX-License-Identifier: MIT
 *
 * weft_bench measures every scenario twice in the same run: once through
 * weft's public API and once through the hand-written baseline store
 * (baseline.h), on the same data, alternating weft and baseline repetitions
 * so drift of the machine hits both. Each figure is the median of `reps`
 * repetitions after `warmup` discarded ones. Scenarios report rows; the
 * harness prints them as one table at the end.
 */
#ifndef WEFT_BENCH_H
#define WEFT_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the components every scenario uses ---- */

typedef struct bench_position {
    float x;
    float y;
} bench_position;

typedef struct bench_velocity {
    float x;
    float y;
} bench_velocity;

typedef struct bench_health {
    int32_t hp;
} bench_health;

/* ---- configuration ---- */

typedef struct bench_cfg {
    int32_t n;       /* entities per scenario */
    int32_t reps;    /* measured repetitions; the median is reported */
    int32_t warmup;  /* discarded repetitions before measuring */
    uint64_t seed;   /* fixed seed for values and shuffles */
    bool verbose;    /* print every repetition */
} bench_cfg;

/* Input data shared by all scenarios, generated once from cfg.seed. */
typedef struct bench_data {
    bench_position *pos; /* n values */
    bench_velocity *vel; /* n values */
    int32_t *perm;       /* a shuffled permutation of 0..n-1 */
} bench_data;

/* ---- timer, RNG, statistics ---- */

/* Monotonic clock in nanoseconds. */
uint64_t bench_now_ns(void);

/* CPU time of the calling thread in nanoseconds: time the thread spends
 * preempted by other load on the machine is not counted. */
uint64_t bench_cpu_ns(void);

/* splitmix64 step: deterministic, good enough to shuffle. */
uint64_t bench_rng_next(uint64_t *state);

/* Median of `count` values (sorts `values` in place). */
double bench_median(double *values, int32_t count);

/* Allocation that never fails (the bench exits instead). */
void *bench_xmalloc(size_t size);

/* Prints a message and exits with status 1. */
_Noreturn void bench_fail(const char *scenario, const char *what, const char *detail);

/* ---- reporting ---- */

/* Records one table row. `target` is the upper bound weft should meet
 * (<= 0: no target); `unit` is "ns" or "B". */
void bench_report(const char *scenario, const char *unit, double weft,
                  double baseline, double target);

/* Records a row whose target bounds the ratio weft / baseline. */
void bench_report_ratio(const char *scenario, const char *unit, double weft,
                        double baseline, double max_ratio);

/* Records a row for one value of a swept parameter (N, archetypes, percent);
 * param < 0 means the harness's current sweep N (or none). max_ratio <= 0:
 * no target. */
void bench_report_param(const char *scenario, int64_t param, const char *unit,
                        double weft, double baseline, double max_ratio);

/* Marks the row just reported INVALID with a reason: the run could not
 * measure what the target needs (e.g. the machine cannot overlap two
 * threads now). It neither passes nor misses: the table says INVALID,
 * --strict counts it as a miss and --check as a failure of its own kind. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
void bench_invalidate_last(const char *fmt, ...);

/* Adds a line printed under the table (formulas, derived figures). */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
void bench_note(const char *fmt, ...);

/* Prints progress of a single repetition when cfg.verbose is set. */
void bench_trace(const bench_cfg *cfg, const char *scenario, const char *side,
                 int32_t rep, double value);

/* ---- scenarios (scenarios_field.c) ---- */

void bench_field(const bench_cfg *cfg, const bench_data *data);

/* ---- scenarios (scenarios_core.c) ---- */

void bench_spawn(const bench_cfg *cfg, const bench_data *data);
void bench_spawn_bulk(const bench_cfg *cfg, const bench_data *data);
void bench_add_remove_table(const bench_cfg *cfg, const bench_data *data);
void bench_add_remove_sparse(const bench_cfg *cfg, const bench_data *data);
void bench_despawn(const bench_cfg *cfg, const bench_data *data);
void bench_get(const bench_cfg *cfg, const bench_data *data);
void bench_memory(const bench_cfg *cfg, const bench_data *data);

/* ---- query scenarios (scenarios_query.c) ---- */

void bench_query_iter(const bench_cfg *cfg, const bench_data *data);
void bench_query_frag(const bench_cfg *cfg, const bench_data *data);
void bench_query_changed(const bench_cfg *cfg, const bench_data *data);
void bench_query_match(const bench_cfg *cfg, const bench_data *data);
void bench_query_get(const bench_cfg *cfg, const bench_data *data);

/* ---- command, observer and hierarchy scenarios (scenarios_events.c) ---- */

void bench_events_cmd(const bench_cfg *cfg, const bench_data *data);
void bench_events_cmdspawn(const bench_cfg *cfg, const bench_data *data);
void bench_events_observer(const bench_cfg *cfg, const bench_data *data);
void bench_events_tree(const bench_cfg *cfg, const bench_data *data);

/* ---- required components (scenarios_require.c) ---- */

void bench_require(const bench_cfg *cfg, const bench_data *data);

/* ---- the peer-comparable suite (scenarios_suite.c) ---- */

void bench_suite_create(const bench_cfg *cfg, const bench_data *data);
void bench_suite_destroy(const bench_cfg *cfg, const bench_data *data);
void bench_suite_addrem(const bench_cfg *cfg, const bench_data *data);
void bench_suite_get1(const bench_cfg *cfg, const bench_data *data);
void bench_suite_get2(const bench_cfg *cfg, const bench_data *data);
void bench_suite_get3(const bench_cfg *cfg, const bench_data *data);
void bench_suite_update2(const bench_cfg *cfg, const bench_data *data);
void bench_suite_update7(const bench_cfg *cfg, const bench_data *data);
void bench_suite_aos(const bench_cfg *cfg, const bench_data *data);
void bench_suite_toggle(const bench_cfg *cfg, const bench_data *data);
void bench_suite_spawnset(const bench_cfg *cfg, const bench_data *data);
void bench_suite_fragsweep(const bench_cfg *cfg, const bench_data *data);
void bench_suite_changedpct(const bench_cfg *cfg, const bench_data *data);
void bench_suite_memsets(const bench_cfg *cfg, const bench_data *data);

/* ---- snapshots (scenarios_snapshot.c) ---- */

void bench_snapshot(const bench_cfg *cfg, const bench_data *data);
void bench_json(const bench_cfg *cfg, const bench_data *data);

/* ---- scheduler (bench_sched.c) ---- */

void bench_sched_empty(const bench_cfg *cfg, const bench_data *data);
void bench_sched_heavy2(const bench_cfg *cfg, const bench_data *data);
void bench_sched_par_iter(const bench_cfg *cfg, const bench_data *data);
void bench_sched_par_sweep(const bench_cfg *cfg, const bench_data *data);
void bench_sched_overhead(const bench_cfg *cfg, const bench_data *data);
void bench_sched_sync(const bench_cfg *cfg, const bench_data *data);
void bench_sched_build(const bench_cfg *cfg, const bench_data *data);

/* ---- the app (bench_app.c) ---- */

void bench_app_frame(const bench_cfg *cfg, const bench_data *data);

/* ---- reloadable modules (bench_module.c) ---- */
/* Reload latency of 100 systems; frame cost of the file watcher. */
void bench_module(const bench_cfg *cfg, const bench_data *data);

/* ---- sub-apps (bench_subapp.c) ---- */
/* Frame time pipelined vs not, balanced main and render work. */
void bench_subapp_pipeline(const bench_cfg *cfg, const bench_data *data);
/* Component extraction per entity vs a memcpy of the extracted bytes. */
void bench_subapp_extract(const bench_cfg *cfg, const bench_data *data);

/* ---- states (bench_state.c) ---- */

void bench_state_transition(const bench_cfg *cfg, const bench_data *data);

/* ---- tasks that span frames (bench_task.c) ---- */

void bench_task_spawn_poll(const bench_cfg *cfg, const bench_data *data);

#endif /* WEFT_BENCH_H */

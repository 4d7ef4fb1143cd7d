/* bench/harness.c - weft_bench entry point: argv, data, scenario table, report.
 * SPDX-License-Identifier: MIT
 *
 * Usage: weft_bench [--quick] [--n N] [--reps K] [--warmup W] [--seed S]
 *                   [--cold] [--markdown] [--strict] [--verbose] [--list]
 *                   [scenario...]
 * With no scenario names every scenario runs. Rows are collected while the
 * scenarios run and printed as one table at the end: scenario, weft,
 * baseline, ratio (weft / baseline), target and PASS/MISS against the
 * target. A target is either an upper bound on the weft figure ("<= 20 ns")
 * or on the ratio ("<= 1.05x"). A row whose scenario found that the
 * machine could not measure what its target needs says INVALID instead of
 * PASS/MISS. Notes (formulas, derived figures) follow the table. The exit
 * status is 0 unless a call failed (1), a usage error (2), --strict was
 * given and a target was missed or invalid (3), or --check failed (4: a
 * missed or invalid target, a malformed line, or a target that matches no
 * row).
 *
 * Warm heap (the default on glibc): the process keeps freed memory (no
 * trimming, no per-allocation mmap), so after the warm-up repetition both
 * weft and the baseline build on pages already faulted in, and the figures
 * measure the store rather than the kernel's first-touch page faults (about
 * 13,000 faults per million Position+Velocity entities). --cold measures
 * with the allocator's defaults instead.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif

#include "weft.h"

#ifndef WEFT_BENCH_FLAGS
#define WEFT_BENCH_FLAGS "unknown"
#endif
#ifndef WEFT_BENCH_BUILD_TYPE
#define WEFT_BENCH_BUILD_TYPE "unknown"
#endif

/* ---- timer, RNG, statistics ---- */

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bench_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bench_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *values, int32_t count)
{
    if (count <= 0) {
        return 0.0;
    }
    qsort(values, (size_t)count, sizeof *values, bench_cmp_double);
    if (count % 2 == 1) {
        return values[count / 2];
    }
    return 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

void *bench_xmalloc(size_t size)
{
    void *p = malloc(size == 0 ? 1 : size);
    if (p == NULL) {
        fprintf(stderr, "weft_bench: out of memory (%zu bytes)\n", size);
        exit(1);
    }
    return p;
}

_Noreturn void bench_fail(const char *scenario, const char *what, const char *detail)
{
    fprintf(stderr, "weft_bench: %s: %s failed: %s\n", scenario, what,
            detail != NULL ? detail : "");
    exit(1);
}

/* ---- reporting ---- */

enum { BENCH_MAX_NOTES = 64, BENCH_NOTE_LEN = 480 };

typedef struct bench_row {
    const char *scenario;
    const char *unit;
    double weft;
    double baseline;
    double target;
    bool ratio_target; /* target bounds weft / baseline, not weft */
    int64_t param;     /* swept N or scenario parameter; -1: none */
    char invalid[160]; /* non-empty: the measurement cannot judge the target
                          (bench_invalidate_last), and why */
} bench_row;

static bench_row *g_rows;
static int32_t g_row_count;
static int32_t g_row_cap;
static int64_t g_sweep_n = -1; /* the N of the sweep step running, -1 outside */
static char g_notes[BENCH_MAX_NOTES][BENCH_NOTE_LEN];
static int32_t g_note_count;

static void bench_add_row(const char *scenario, const char *unit, double weft,
                          double baseline, double target, bool ratio_target)
{
    if (g_row_count == g_row_cap) {
        int32_t cap = g_row_cap > 0 ? g_row_cap * 2 : 256;
        bench_row *rows = realloc(g_rows, sizeof *rows * (size_t)cap);
        if (rows == NULL) {
            bench_fail(scenario, "report", "out of memory");
        }
        g_rows = rows;
        g_row_cap = cap;
    }
    bench_row *r = &g_rows[g_row_count++];
    r->scenario = scenario;
    r->unit = unit;
    r->weft = weft;
    r->baseline = baseline;
    r->target = target;
    r->ratio_target = ratio_target;
    r->param = g_sweep_n;
    r->invalid[0] = '\0';
    /* A progress line per row, so a long run shows it is alive. */
    fprintf(stderr, "  %-36s weft %9.3f %-2s  baseline %9.3f %-2s\n", scenario,
            weft, unit, baseline, unit);
}

void bench_report(const char *scenario, const char *unit, double weft,
                  double baseline, double target)
{
    bench_add_row(scenario, unit, weft, baseline, target, false);
}

void bench_report_ratio(const char *scenario, const char *unit, double weft,
                        double baseline, double max_ratio)
{
    bench_add_row(scenario, unit, weft, baseline, max_ratio, true);
}

void bench_report_param(const char *scenario, int64_t param, const char *unit,
                        double weft, double baseline, double max_ratio)
{
    bench_add_row(scenario, unit, weft, baseline, max_ratio, true);
    if (param >= 0) {
        g_rows[g_row_count - 1].param = param;
    }
}

void bench_invalidate_last(const char *fmt, ...)
{
    if (g_row_count == 0) {
        return;
    }
    bench_row *r = &g_rows[g_row_count - 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->invalid, sizeof r->invalid, fmt, ap);
    va_end(ap);
    if (r->invalid[0] == '\0') {
        snprintf(r->invalid, sizeof r->invalid, "invalid");
    }
    fprintf(stderr, "  %-36s INVALID: %s\n", r->scenario, r->invalid);
}

void bench_note(const char *fmt, ...)
{
    if (g_note_count == BENCH_MAX_NOTES) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_notes[g_note_count++], BENCH_NOTE_LEN, fmt, ap);
    va_end(ap);
}

void bench_trace(const bench_cfg *cfg, const char *scenario, const char *side,
                 int32_t rep, double value)
{
    if (cfg->verbose) {
        fprintf(stderr, "    %s [%s] rep %d: %.3f\n", scenario, side, (int)rep, value);
    }
}

/* Byte rows are judged at the 0.1 B precision their targets are stated in,
 * so the world's fixed per-table metadata, spread over N, cannot flip one.
 * An invalid row never passes (nor is it a plain miss: see row_result). */
static bool bench_row_pass(const bench_row *r)
{
    if (r->invalid[0]) {
        return false;
    }
    if (r->target <= 0.0) {
        return true;
    }
    if (r->ratio_target) {
        return r->baseline > 0.0 && r->weft / r->baseline <= r->target;
    }
    double v = r->weft;
    if (strcmp(r->unit, "B") == 0) {
        v = (double)(long long)(v * 10.0 + 0.5) / 10.0;
    }
    return v <= r->target;
}

static int32_t bench_print_table(bool markdown)
{
    int32_t misses = 0;
    if (markdown) {
        printf("| scenario | weft | baseline | ratio | target | result |\n");
        printf("|---|---:|---:|---:|---:|---|\n");
    } else {
        printf("%-36s %12s %12s %8s %10s  %s\n", "scenario", "weft", "baseline",
               "ratio", "target", "result");
        printf("%-36s %12s %12s %8s %10s  %s\n", "--------", "----", "--------",
               "-----", "------", "------");
    }
    for (int32_t i = 0; i < g_row_count; i++) {
        const bench_row *r = &g_rows[i];
        bool pass = bench_row_pass(r);
        misses += pass ? 0 : 1;
        double ratio = r->baseline > 0.0 ? r->weft / r->baseline : 0.0;
        char target[32];
        if (r->target > 0.0 && r->ratio_target) {
            snprintf(target, sizeof target, "<= %gx", r->target);
        } else if (r->target > 0.0) {
            snprintf(target, sizeof target, "<= %g %s", r->target, r->unit);
        } else {
            snprintf(target, sizeof target, "-");
        }
        const char *result = r->invalid[0]  ? "INVALID"
                             : r->target > 0.0 ? (pass ? "PASS" : "MISS")
                                               : "-";
        char label[160];
        if (r->param >= 0) {
            snprintf(label, sizeof label, "%s [%lld]", r->scenario, (long long)r->param);
        } else {
            snprintf(label, sizeof label, "%s", r->scenario);
        }
        if (markdown) {
            printf("| %s | %.3f %s | %.3f %s | %.2f | %s | %s |\n", label,
                   r->weft, r->unit, r->baseline, r->unit, ratio, target, result);
        } else {
            printf("%-36s %9.3f %-2s %9.3f %-2s %8.2f %10s  %s\n", label,
                   r->weft, r->unit, r->baseline, r->unit, ratio, target, result);
        }
        if (r->invalid[0]) {
            printf(markdown ? "| (invalid: %s) | | | | | |\n" : "    (invalid: %s)\n",
                   r->invalid);
        }
    }
    return misses;
}

/* ---- scenarios ---- */

typedef struct bench_scenario {
    const char *name;
    const char *about;
    void (*run)(const bench_cfg *cfg, const bench_data *data);
} bench_scenario;

/* bench/scenarios_transform.c (built when WEFT_TRANSFORM is on) */
#ifdef WEFT_BENCH_TRANSFORM
void bench_transform(const bench_cfg *cfg, const bench_data *data);
#endif
/* bench/scenarios_rollback.c (built when WEFT_ROLLBACK is on) */
#ifdef WEFT_BENCH_ROLLBACK
void bench_rollback(const bench_cfg *cfg, const bench_data *data);
#endif

static const bench_scenario g_scenarios[] = {
    {"spawn", "spawn one by one with Position+Velocity", bench_spawn},
    {"bulk", "spawn all N in one weft_spawn_bulk call", bench_spawn_bulk},
    {"table", "insert then remove a table Health on all (two row moves)",
     bench_add_remove_table},
    {"sparse", "insert then remove a sparse Health on all (no row moves)",
     bench_add_remove_sparse},
    {"despawn", "despawn all, in spawn order", bench_despawn},
    {"get", "get 1 and 2 components by handle in shuffled order", bench_get},
    {"memory", "live bytes per entity, with and without change ticks",
     bench_memory},
    {"iter", "query iteration over N: 1, 2 (+ no-mark) and 3 components",
     bench_query_iter},
    {"frag", "100k entities over 1 .. 10,000 archetypes, one query",
     bench_query_frag},
    {"changed", "Changed query, 1% changed in 2 of 100 tables, vs full",
     bench_query_changed},
    {"match", "query create + match in 10,000 archetypes; per new archetype",
     bench_query_match},
    {"qget", "weft_query_get per entity, shuffled and sequential",
     bench_query_get},
    {"cmd", "insert+remove Health through a command buffer vs immediate",
     bench_events_cmd},
    {"cmdspawn", "spawn Pos+Vel through a command buffer vs spawn_with",
     bench_events_cmdspawn},
    {"observer", "spawn with an observer on an unrelated component vs none",
     bench_events_observer},
    {"tree", "despawn 1k-node trees (wide, deep); 10k children under one parent",
     bench_events_tree},
    {"require", "spawn Pos requiring Vel+Hp vs all three given (spawn_with, bulk)",
     bench_require},
    {"create", "suite: spawn Pos+Vel one by one (abeimler create)", bench_suite_create},
    {"destroy", "suite: despawn all (abeimler destroy)", bench_suite_destroy},
    {"get1", "suite: get 1 component by entity, in order and shuffled", bench_suite_get1},
    {"get2", "suite: get 2 components by entity, in order and shuffled", bench_suite_get2},
    {"get3", "suite: get 3 components by entity, in order and shuffled", bench_suite_get3},
    {"addrem", "suite: remove then add a table component (abeimler)", bench_suite_addrem},
    {"update2", "suite: 2 systems (movement, data), plain and mixed", bench_suite_update2},
    {"update7", "suite: 7 systems (abeimler), plain and mixed", bench_suite_update7},
    {"aos", "N1/N2: p += v over weft vs AoS pointer array / contiguous AoS",
     bench_suite_aos},
    {"toggle", "N9: marker toggled per frame: table vs sparse vs bool field",
     bench_suite_toggle},
    {"spawnset", "N10/N11: full set vs incremental inserts; bulk vs one by one",
     bench_suite_spawnset},
    {"fragsweep", "N13: 100k entities over 1 .. 10,000 archetypes; 500 x 3",
     bench_suite_fragsweep},
    {"changedpct", "N15: Changed pass with 1%, 10%, 100% changed vs full pass",
     bench_suite_changedpct},
    {"memsets", "live bytes per entity for typical sets, with/without ticks",
     bench_suite_memsets},
    {"field", "one loop over a table or sparse field vs plain arrays", bench_field},
    {"snapshot", "binary snapshot write and restore of N Pos+Vel vs memcpy",
     bench_snapshot},
    {"json", "JSON text of 100k described Pos+Vel entities vs snprintf by hand",
     bench_json},
    {"sched_empty", "1,000 / 6,000 empty systems per run, 1 and 2 threads", bench_sched_empty},
    {"sched_heavy2", "two independent ~1.5 ms systems, 2 threads vs 1", bench_sched_heavy2},
    {"par_iter", "par_each of a sqrt/sin kernel over 1M and 4,096 entities", bench_sched_par_iter},
    {"par_sweep", "N26: par_each 2 vs 1 thread over N x kernel weight", bench_sched_par_sweep},
    {"sched_overhead", "N25: ns per empty system, 10 .. 6,000 systems", bench_sched_overhead},
    {"sched_sync", "N24: interleaved vs grouped command systems (sync points)", bench_sched_sync},
    {"sched_build", "weft_schedule_build for 100 / 500 / 2,000 random systems", bench_sched_build},
    {"app_frame", "app update with empty schedules vs the same schedule runs", bench_app_frame},
    {"module", "hot reload: reload latency of 100 systems, file watcher frame cost", bench_module},
    {"state_transition", "a state transition running 100 OnExit/OnEnter systems vs them in a plain schedule",
     bench_state_transition},
    {"task_spawn_poll", "spawn + poll 10k small tasks (1 thread) vs a pthread + mutex queue",
     bench_task_spawn_poll},
    {"subapp_pipeline", "sub-app frames pipelined vs synchronous, balanced work, 2 threads",
     bench_subapp_pipeline},
    {"extract_entity", "component extraction into a sub-world per entity vs memcpy",
     bench_subapp_extract},
#ifdef WEFT_BENCH_TRANSFORM
    {"transform", "transform propagation (wide, humanoids, large static/1%, chains) vs plain C",
     bench_transform},
#endif
#ifdef WEFT_BENCH_ROLLBACK
    {"rollback", "restore + resimulate 8 frames (rollback session) vs 9 plain app updates",
     bench_rollback},
#endif
};
enum { BENCH_SCENARIO_COUNT = (int)(sizeof g_scenarios / sizeof g_scenarios[0]) };

/* The scenarios --sweep runs at every N (the others run once, at --n). */
static bool bench_is_sweep(const char *name)
{
    static const char *const names[] = {"create", "destroy", "get1", "get2",
                                        "get3", "addrem", "update2", "update7"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i]) == 0) {
            return true;
        }
    }
    return false;
}

static void bench_usage(FILE *f)
{
    fprintf(f,
            "usage: weft_bench [options] [scenario...]\n"
            "  --quick       N = 100000 (default N = 1000000); sweep up to 2^17\n"
            "  --sweep       run the sweepable scenarios at N = 1, 2, 4 .. 2^21\n"
            "                (the others once at --n)\n"
            "  --sweep-max L largest sweep N = 2^L (default 21, 17 with --quick)\n"
            "  --csv FILE    write every row as CSV (with compiler, flags, CPU, date)\n"
            "  --json FILE   the same as JSON\n"
            "  --check FILE  compare ratios with a targets file (bench/targets.txt);\n"
            "                exit 4 on a miss, a malformed line or a target that\n"
            "                matches no row of the run\n"
            "  --n N         entities per scenario\n"
            "  --reps K      measured repetitions, median reported (default 5)\n"
            "  --warmup W    discarded repetitions first (default 1)\n"
            "  --seed S      seed for values and shuffles (default 0x5eedf00d)\n"
            "  --cold        keep malloc defaults: first-touch page faults count\n"
            "  --markdown    print the table as markdown\n"
            "  --strict      exit 3 when a target is missed\n"
            "  --verbose     print every repetition\n"
            "  --list        list scenarios and exit\n"
            "scenarios:\n");
    for (int i = 0; i < BENCH_SCENARIO_COUNT; i++) {
        fprintf(f, "  %-10s %s\n", g_scenarios[i].name, g_scenarios[i].about);
    }
}

static bool bench_parse_i32(const char *s, int32_t lo, int32_t *out)
{
    char *end = NULL;
    long long v = strtoll(s, &end, 0);
    if (end == s || *end != '\0' || v < lo || v > INT32_MAX) {
        return false;
    }
    *out = (int32_t)v;
    return true;
}

static void bench_make_data(const bench_cfg *cfg, bench_data *d)
{
    size_t n = (size_t)cfg->n;
    d->pos = bench_xmalloc(sizeof *d->pos * n);
    d->vel = bench_xmalloc(sizeof *d->vel * n);
    d->perm = bench_xmalloc(sizeof *d->perm * n);
    uint64_t rng = cfg->seed;
    for (size_t i = 0; i < n; i++) {
        /* Small integers: exactly representable, so sums compare exactly. */
        d->pos[i].x = (float)(bench_rng_next(&rng) % 1024u);
        d->pos[i].y = (float)(bench_rng_next(&rng) % 1024u);
        d->vel[i].x = (float)(bench_rng_next(&rng) % 16u);
        d->vel[i].y = (float)(bench_rng_next(&rng) % 16u);
        d->perm[i] = (int32_t)i;
    }
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(bench_rng_next(&rng) % i);
        int32_t t = d->perm[i - 1];
        d->perm[i - 1] = d->perm[j];
        d->perm[j] = t;
    }
}

/* ---- machine-readable output and the target check ---- */

static void bench_cpu_model(char *out, size_t cap)
{
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) {
        return;
    }
    char line[512];
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *v = strchr(line, ':');
            if (v != NULL) {
                v++;
                while (*v == ' ' || *v == '\t') {
                    v++;
                }
                snprintf(out, cap, "%s", v);
                out[strcspn(out, "\r\n")] = '\0';
            }
            break;
        }
    }
    fclose(f);
}

static void bench_date(char *out, size_t cap)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* JSON string body: quotes and backslashes escaped, control bytes dropped. */
static void bench_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\') {
            fputc('\\', f);
            fputc(*s, f);
        } else if ((unsigned char)*s >= 0x20) {
            fputc(*s, f);
        }
    }
    fputc('"', f);
}

static bool bench_write_results(const char *path, bool json, const bench_cfg *cfg,
                                const char *cpu, const char *date)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "weft_bench: cannot write %s\n", path);
        return false;
    }
    if (json) {
        fprintf(f, "{\n  \"compiler\": ");
        bench_json_str(f, __VERSION__);
        fprintf(f, ",\n  \"build_type\": ");
        bench_json_str(f, WEFT_BENCH_BUILD_TYPE);
        fprintf(f, ",\n  \"flags\": ");
        bench_json_str(f, WEFT_BENCH_FLAGS);
        fprintf(f, ",\n  \"cpu\": ");
        bench_json_str(f, cpu);
        fprintf(f, ",\n  \"date\": ");
        bench_json_str(f, date);
        fprintf(f, ",\n  \"n\": %d, \"reps\": %d, \"warmup\": %d, \"seed\": %llu,\n",
                (int)cfg->n, (int)cfg->reps, (int)cfg->warmup,
                (unsigned long long)cfg->seed);
        fprintf(f, "  \"rows\": [\n");
    } else {
        fprintf(f, "# compiler: %s\n# build_type: %s\n# flags: %s\n# cpu: %s\n# date: %s\n",
                __VERSION__, WEFT_BENCH_BUILD_TYPE, WEFT_BENCH_FLAGS, cpu, date);
        fprintf(f, "# n: %d, reps: %d, warmup: %d, seed: %llu\n", (int)cfg->n,
                (int)cfg->reps, (int)cfg->warmup, (unsigned long long)cfg->seed);
        fprintf(f, "scenario,param,unit,weft,baseline,ratio,target,target_kind,result\n");
    }
    for (int32_t i = 0; i < g_row_count; i++) {
        const bench_row *r = &g_rows[i];
        double ratio = r->baseline > 0.0 ? r->weft / r->baseline : 0.0;
        const char *kind = r->target <= 0.0 ? "none" : (r->ratio_target ? "ratio" : "abs");
        const char *result = r->invalid[0]    ? "INVALID"
                             : r->target <= 0.0 ? "-"
                                                : (bench_row_pass(r) ? "PASS" : "MISS");
        if (json) {
            fprintf(f, "    {\"scenario\": ");
            bench_json_str(f, r->scenario);
            fprintf(f,
                    ", \"param\": %lld, \"unit\": \"%s\", \"weft\": %.6g, "
                    "\"baseline\": %.6g, \"ratio\": %.6g, \"target\": %.6g, "
                    "\"target_kind\": \"%s\", \"result\": \"%s\"}%s\n",
                    (long long)r->param, r->unit, r->weft, r->baseline, ratio, r->target,
                    kind, result, i + 1 < g_row_count ? "," : "");
        } else {
            fprintf(f, "\"%s\",%lld,%s,%.6g,%.6g,%.6g,%.6g,%s,%s\n", r->scenario,
                    (long long)r->param, r->unit, r->weft, r->baseline, ratio, r->target,
                    kind, result);
        }
    }
    if (json) {
        fprintf(f, "  ]\n}\n");
    }
    return fclose(f) == 0;
}

/* Targets file: one line per scenario, "name, max ratio" (the last comma
 * splits); "name @ param, max ratio" limits a line to one swept value.
 * '#' starts a comment; blank lines and lines starting "peers:" (checked
 * by weft_peers against the peer libraries) are skipped. Every matching row must
 * have weft / baseline at or below the max ratio. A line that cannot be
 * parsed, or that matches no row of this run (a renamed or removed
 * scenario, or one that was not run), is a failure, not a skip: a target
 * nobody checks would read as met. Returns the number of failures (misses,
 * dead and malformed lines), or -1 if the file cannot be read. */
static int32_t bench_check_targets(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "weft_bench: cannot read %s\n", path);
        return -1;
    }
    char line[512];
    int32_t targets = 0;
    int32_t misses = 0;
    int32_t dead = 0;
    int32_t malformed = 0;
    int32_t invalid = 0;
    int32_t rows_checked = 0;
    int32_t lineno = 0;
    printf("\ncheck against %s:\n", path);
    while (fgets(line, sizeof line, f) != NULL) {
        lineno++;
        line[strcspn(line, "#\r\n")] = '\0';
        char *name = line;
        while (*name == ' ' || *name == '\t') {
            name++;
        }
        if (*name == '\0' || strncmp(name, "peers:", 6) == 0) {
            continue; /* "peers:" lines are weft_peers' (bench/peers) */
        }
        char *comma = strrchr(name, ',');
        char *end = NULL;
        double max_ratio = 0.0;
        if (comma != NULL) {
            *comma = '\0';
            max_ratio = strtod(comma + 1, &end);
            while (end != NULL && (*end == ' ' || *end == '\t')) {
                end++;
            }
        }
        long long param = -1;
        bool bad_param = false;
        char *at = comma != NULL ? strchr(name, '@') : NULL;
        if (at != NULL) {
            char *pend = NULL;
            param = strtoll(at + 1, &pend, 0);
            while (pend != NULL && (*pend == ' ' || *pend == '\t')) {
                pend++;
            }
            bad_param = pend == at + 1 || pend == NULL || *pend != '\0' || param < 0;
            *at = '\0';
        }
        size_t len = strlen(name);
        while (len > 0 && (name[len - 1] == ' ' || name[len - 1] == '\t')) {
            name[--len] = '\0';
        }
        if (comma == NULL || end == comma + 1 || end == NULL || *end != '\0' ||
            !(max_ratio > 0.0) || bad_param || len == 0) {
            malformed++;
            printf("  BAD  %s:%d: not \"name [@ param], max ratio\"\n", path, (int)lineno);
            continue;
        }
        targets++;
        int32_t matched = 0;
        for (int32_t i = 0; i < g_row_count; i++) {
            const bench_row *r = &g_rows[i];
            if (strcmp(r->scenario, name) != 0 || (param >= 0 && r->param != param)) {
                continue;
            }
            double ratio = r->baseline > 0.0 ? r->weft / r->baseline : 0.0;
            bool ok = r->baseline > 0.0 && ratio <= max_ratio;
            matched++;
            if (r->invalid[0]) {
                /* neither met nor missed: the run could not tell */
                invalid++;
                printf("  INVALID %s [%lld]: %.3f vs %.3f not judged: %s\n", r->scenario,
                       (long long)r->param, ratio, max_ratio, r->invalid);
            } else if (!ok) {
                misses++;
                printf("  MISS %s [%lld]: %.3f > %.3f\n", r->scenario, (long long)r->param,
                       ratio, max_ratio);
            }
        }
        if (matched == 0) {
            dead++;
            if (param >= 0) {
                printf("  DEAD %s:%d: no row \"%s\" at %lld in this run\n", path, (int)lineno,
                       name, param);
            } else {
                printf("  DEAD %s:%d: no row \"%s\" in this run\n", path, (int)lineno, name);
            }
        }
        rows_checked += matched;
    }
    fclose(f);
    printf("  %d target(s) checked against %d row(s): %d miss(es), %d invalid, "
           "%d without a row, %d malformed\n",
           (int)targets, (int)rows_checked, (int)misses, (int)invalid, (int)dead,
           (int)malformed);
    return misses + invalid + dead + malformed;
}

int main(int argc, char **argv)
{
    bench_cfg cfg = {.n = 1000000, .reps = 5, .warmup = 1, .seed = 0x5eedf00du};
    bool markdown = false;
    bool strict = false;
    bool cold = false;
    bool sweep = false;
    bool quick = false;
    int32_t sweep_max = -1;
    const char *csv_path = NULL;
    const char *json_path = NULL;
    const char *check_path = NULL;
    bool selected[BENCH_SCENARIO_COUNT] = {false};
    bool any_selected = false;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        if (strcmp(a, "--quick") == 0) {
            cfg.n = 100000;
            quick = true;
        } else if (strcmp(a, "--sweep") == 0) {
            sweep = true;
        } else if (strcmp(a, "--sweep-max") == 0 && has_next) {
            if (!bench_parse_i32(argv[++i], 0, &sweep_max) || sweep_max > 26) {
                fprintf(stderr, "weft_bench: bad --sweep-max (0 .. 26)\n");
                return 2;
            }
        } else if (strcmp(a, "--csv") == 0 && has_next) {
            csv_path = argv[++i];
        } else if (strcmp(a, "--json") == 0 && has_next) {
            json_path = argv[++i];
        } else if (strcmp(a, "--check") == 0 && has_next) {
            check_path = argv[++i];
        } else if (strcmp(a, "--n") == 0 && has_next) {
            if (!bench_parse_i32(argv[++i], 1, &cfg.n)) {
                fprintf(stderr, "weft_bench: bad --n\n");
                return 2;
            }
        } else if (strcmp(a, "--reps") == 0 && has_next) {
            if (!bench_parse_i32(argv[++i], 1, &cfg.reps)) {
                fprintf(stderr, "weft_bench: bad --reps\n");
                return 2;
            }
        } else if (strcmp(a, "--warmup") == 0 && has_next) {
            if (!bench_parse_i32(argv[++i], 0, &cfg.warmup)) {
                fprintf(stderr, "weft_bench: bad --warmup\n");
                return 2;
            }
        } else if (strcmp(a, "--seed") == 0 && has_next) {
            cfg.seed = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(a, "--cold") == 0) {
            cold = true;
        } else if (strcmp(a, "--markdown") == 0) {
            markdown = true;
        } else if (strcmp(a, "--strict") == 0) {
            strict = true;
        } else if (strcmp(a, "--verbose") == 0) {
            cfg.verbose = true;
        } else if (strcmp(a, "--list") == 0 || strcmp(a, "--help") == 0 ||
                   strcmp(a, "-h") == 0) {
            bench_usage(stdout);
            return 0;
        } else {
            bool found = false;
            for (int s = 0; s < BENCH_SCENARIO_COUNT; s++) {
                if (strcmp(a, g_scenarios[s].name) == 0) {
                    selected[s] = true;
                    any_selected = true;
                    found = true;
                }
            }
            if (!found) {
                fprintf(stderr, "weft_bench: unknown argument '%s'\n", a);
                bench_usage(stderr);
                return 2;
            }
        }
    }
    const char *heap = "cold (allocator defaults)";
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    if (!cold) {
        mallopt(M_MMAP_THRESHOLD, 1 << 30);
        mallopt(M_TRIM_THRESHOLD, -1);
        heap = "warm (glibc: no trim, no mmap per allocation)";
    }
#else
    (void)cold;
#endif

    printf("weft_bench: weft %d.%d.%d (library reports %d), N = %d, median of %d "
           "after %d warm-up, seed 0x%llx\n",
           WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR, WEFT_VERSION_PATCH,
           (int)weft_abi_version(), (int)cfg.n, (int)cfg.reps, (int)cfg.warmup,
           (unsigned long long)cfg.seed);
    printf("build: %s, bench flags: %s, compiler: %s, heap: %s\n",
           WEFT_BENCH_BUILD_TYPE, WEFT_BENCH_FLAGS, __VERSION__, heap);
    printf("units: ns per entity (total time of the operation over all N / N), "
           "B = bytes per entity; ratio = weft / baseline\n");
    if (strcmp(WEFT_BENCH_BUILD_TYPE, "Release") != 0) {
        printf("warning: not a Release build; figures are not representative\n");
    }
    fflush(stdout);

    bench_data data;
    bench_make_data(&cfg, &data);
    uint64_t t0 = bench_now_ns();
    for (int s = 0; s < BENCH_SCENARIO_COUNT; s++) {
        if ((any_selected && !selected[s]) || (sweep && bench_is_sweep(g_scenarios[s].name))) {
            continue;
        }
        fprintf(stderr, "[%s] %s\n", g_scenarios[s].name, g_scenarios[s].about);
        g_scenarios[s].run(&cfg, &data);
    }
    if (sweep) {
        if (sweep_max < 0) {
            sweep_max = quick ? 17 : 21;
        }
        for (int s = 0; s < BENCH_SCENARIO_COUNT; s++) {
            if ((any_selected && !selected[s]) || !bench_is_sweep(g_scenarios[s].name)) {
                continue;
            }
            for (int32_t l = 0; l <= sweep_max; l++) {
                bench_cfg sc = cfg;
                sc.n = (int32_t)1 << l;
                bench_data sd;
                bench_make_data(&sc, &sd);
                g_sweep_n = sc.n;
                fprintf(stderr, "[%s] N = %d\n", g_scenarios[s].name, (int)sc.n);
                g_scenarios[s].run(&sc, &sd);
                g_sweep_n = -1;
                free(sd.pos);
                free(sd.vel);
                free(sd.perm);
            }
        }
    }
    double secs = (double)(bench_now_ns() - t0) * 1e-9;
    printf("\n");
    int32_t misses = bench_print_table(markdown);
    if (g_note_count > 0) {
        printf("\nnotes:\n");
        for (int32_t i = 0; i < g_note_count; i++) {
            printf("  %s\n", g_notes[i]);
        }
    }
    printf("\n%d row(s), %d target(s) missed, %.1f s\n", (int)g_row_count,
           (int)misses, secs);
    char cpu[256];
    char date[64];
    bench_cpu_model(cpu, sizeof cpu);
    bench_date(date, sizeof date);
    printf("cpu: %s, date: %s\n", cpu, date);
    int status = strict && misses > 0 ? 3 : 0;
    if (csv_path != NULL && !bench_write_results(csv_path, false, &cfg, cpu, date)) {
        status = 1;
    }
    if (json_path != NULL && !bench_write_results(json_path, true, &cfg, cpu, date)) {
        status = 1;
    }
    if (check_path != NULL) {
        int32_t cm = bench_check_targets(check_path);
        if (cm < 0) {
            status = 1;
        } else if (cm > 0 && status == 0) {
            status = 4;
        }
    }
    free(data.pos);
    free(data.vel);
    free(data.perm);
    free(g_rows);
    return status;
}

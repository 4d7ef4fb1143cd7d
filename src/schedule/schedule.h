/* src/schedule/schedule.h - schedules: declarations, the built plan, the
 * executor that runs it, frames and exports.
 * SPDX-License-Identifier: MIT
 *
 * A schedule keeps what the user declared (systems, apply points, sets,
 * orderings, conditions) and, after a build, a plan: one step per position
 * of the topological order computed by the schedule graph
 * (schedule/schedule_graph.h), with successor lists and predecessor
 * counts. Sync points and exclusive systems are barriers in the plan:
 * every earlier step finishes before one starts and no later step starts
 * before it ends, so a sync point applies exactly the buffers of the steps
 * before it, in order, and the result of a run never depends on the
 * thread count.
 *
 * Ticks: a run reserves one tick per position, tick(p) = base + 1 + p, so
 * each system's this_run is fixed by its place in the order. The world's
 * change tick ("now" for tick ages) is held at the tick of the next
 * barrier while a segment runs, and set to tick(p) during barrier p, so it
 * never runs behind a stamped tick and commands applied at a sync point
 * are stamped before every later system's this_run (seen as Added/Changed
 * in the same run).
 *
 * Threads: declaration and build on the driver thread. During a run,
 * steps execute on pool workers (or host jobs); main-thread systems,
 * exclusive systems and sync points only on the thread that called
 * weft_schedule_run.
 */
#ifndef WF_SCHEDULE_H
#define WF_SCHEDULE_H

#include "system/system.h"
#include "schedule/schedule_graph.h"
#include "task/thread_pool.h"

typedef struct wf_exec wf_exec;

typedef struct wf_decl_node {
    wf_system *sys;            /* NULL: an apply point */
    char *name;                /* apply points */
    wf_conds conds;
    uint8_t step;              /* systems: weft_step_behavior while stepping */
} wf_decl_node;

typedef struct wf_decl_set {
    char *name;
    wf_conds conds;
} wf_decl_set;

typedef struct wf_decl_edge {
    weft_node a, b;
    uint32_t flags;
} wf_decl_edge;

enum wf_step_kind { WF_STEP_SYSTEM = 0, WF_STEP_SYNC = 1, WF_STEP_EXCLUSIVE = 2 };

/* One position of the built order. */
typedef struct wf_step {
    weft_schedule *sched;
    uint32_t pos;              /* this step's position */
    wf_system *sys;            /* NULL for sync points */
    uint8_t kind;              /* wf_step_kind */
    bool main_only;            /* runs on the calling thread */
    uint32_t node;             /* schedule-graph node id */
    uint32_t pred;             /* predecessors (barrier edges included) */
    uint32_t succ0, succ1;     /* successors: plan.succ[succ0 .. succ1) */
    uint32_t sets0, sets1;     /* conditioned sets: plan.sets[sets0 .. sets1) */
    uint32_t seg_end;          /* position of the next barrier, or n */
    const wf_conds *conds;     /* own conditions, or NULL when none */
} wf_step;

typedef struct wf_plan {
    uint32_t n;
    wf_step *steps;
    uint32_t *succ;
    uint32_t nsucc;
    uint32_t *sets;            /* conditioned set indices per step */
    uint32_t nsets_ref;
    uint32_t *set_first;       /* [nset_slots] first member position of each set */
    uint32_t nset_slots;       /* sets when built */
    uint32_t nsync;
    /* ambiguity report (after filtering) */
    weft_ambiguity *amb;
    uint32_t namb;
    weft_component *amb_ids;
    uint32_t namb_ids;
} wf_plan;

/* First word of a live schedule (a forged handle is refused before
 * anything else of it is read). */
#define WF_SCHEDULE_MAGIC 0x73636864u /* "schd" */

struct weft_schedule {
    uint32_t magic;            /* WF_SCHEDULE_MAGIC while alive */
    weft_world *world;
    char *name;
    wf_decl_node *nodes;
    uint32_t nnodes, cap_nodes;
    wf_decl_set *sets;
    uint32_t nsets, cap_sets;
    wf_decl_edge *members;     /* (child, set) */
    uint32_t nmembers, cap_members;
    wf_decl_edge *edges;       /* (before, after, flags) */
    uint32_t nedges, cap_edges;
    wf_decl_edge *amb_ok;      /* ambiguous_with pairs */
    uint32_t namb_ok, cap_amb_ok;
    weft_component *ignored;
    uint32_t nignored, cap_ignored;
    weft_condition *conds;     /* every condition (list) */
    bool auto_sync;
    bool apply_final;
    bool profiling;
    bool dirty;                /* declarations changed since the last build */
    bool running;
    bool app_owned;            /* an app's label: weft_schedule_destroy
                                  refuses it while the app lives */
    bool stepping;             /* weft_schedule_set_stepping */
    uint8_t step_action;       /* wf_step_action the next run performs */
    uint32_t step_cursor;      /* plan position the next step starts at */
    uint32_t step_builds;      /* `builds` the cursor belongs to */
    uint32_t builds;
    wf_sgraph graph;           /* the last successful build's graph */
    bool built;
    bool state_owned;          /* an OnEnter/OnExit/OnTransition schedule of
                                  a state (src/state/): weft_schedule_destroy
                                  refuses it, the world frees it */
    wf_plan plan;
    /* run state, sized by the plan */
    wf_atomic_u32 *remaining;  /* [n] */
    wf_atomic_u32 *set_state;  /* [nsets]: 0 unevaluated, 1 busy, 2 true, 3 false */
    wf_atomic_u32 *readyq;     /* [n] ready steps of a run: position + 1,
                                  0 until published (each step enters once) */
    uint32_t *mq;              /* [n] main-thread queue (ring) */
    uint8_t *pending;          /* [n] the step's buffer holds commands */
    wf_atomic_u32 mq_lock;     /* spin lock of mq */
    uint32_t mq_head, mq_tail;
    wf_exec *exec;             /* the run in progress, or NULL */
    uint32_t applied;          /* positions whose buffers are applied */
    bool carry;                /* the last run skipped its final apply: the
                                  next sync point applies every buffer */
    int32_t max_conc;
    uint64_t run_t0;           /* profiling: clock at the run's start */
    uint32_t trace_workers;
    struct weft_schedule *next; /* world's list */
};

/* The world's system-layer state (w->sys). */
typedef struct wf_sys_world {
    weft_schedule *schedules;
    int32_t threads;           /* workers of the executor (1: single) */
    wf_thread_pool *pool;
    bool host;
    weft_job_system jobs;
    /* weft_world_share_threads: the world whose executor (threads, pool,
     * host, jobs above) runs this world's schedules, or NULL. Its
     * executor cannot change while it lends (lent > 0). */
    weft_world *lender;
    wf_atomic_u32 lent;        /* worlds borrowing this world's executor;
                                  written by their drivers (borrow/return) */
    int32_t depth;             /* schedules running (nested runs) */
    double acc;                /* fixed-time accumulator, seconds, of the app
                                  driving the world (src/app/), kept here
                                  so snapshots save and restore it */
    bool app_started;          /* that app ran its startup order (kept here
                                  for the same reason) */
    /* While a reloadable module's plugin builds (src/module/), every
     * system added goes through add_hook instead (which tracks it as the
     * module's, or rebinds a live system of the same name); NULL
     * otherwise. */
    weft_node (*add_hook)(void *ctx, weft_schedule *s, const weft_system_desc *desc);
    void *add_hook_ctx;
} wf_sys_world;

/* ---- schedule.c ---- */
wf_sys_world *wf_sys_get(weft_world *w);            /* creates on first use */
/* A new empty schedule named `name` (copied, not empty); NULL with the
 * error recorded (ALREADY_EXISTS, OUT_OF_MEMORY). `fn` names the caller
 * in messages. */
weft_schedule *wf_schedule_create(weft_world *w, const char *name, const char *fn);
/* The schedule named `name`, or NULL. */
weft_schedule *wf_schedule_find(const weft_world *w, const char *name);
/* Appends a declared node: system `sys`, or an apply point named `name`
 * (copied) when sys is NULL. 0 with OUT_OF_MEMORY recorded. */
weft_node wf_schedule_add_node(weft_schedule *s, wf_system *sys, const char *name);
/* Creates a system from a checked desc (canary, fn) and appends it; 0
 * with the error recorded. The caller checked the schedule is not running. */
weft_node wf_schedule_add_system(weft_schedule *s, const weft_system_desc *desc);
/* wf_schedule_add_system without the add hook (the hook's own way in). */
weft_node wf_schedule_add_system_now(weft_schedule *s, const weft_system_desc *desc);
/* Removes the system of node `n` (a system node): applies nothing, so the
 * caller applied its pending commands; destroys the system (its local's
 * fini runs), drops its conditions' attachment and every ordering, set
 * membership and ambiguity exemption naming it, and renumbers the later
 * nodes (their handles shift down by one). The plan is dropped: the next
 * run rebuilds. The schedule must not be running. */
void wf_schedule_remove_system(weft_schedule *s, weft_node n);
weft_status wf_schedule_build(weft_schedule *s);
void wf_schedule_free(weft_world *w, weft_schedule *s);
bool wf_schedule_node_ok(const weft_schedule *s, weft_node n, bool sets_ok);
/* The name of node n (checked with wf_schedule_node_ok): a set's, a
 * system's or an apply point's. */
const char *wf_schedule_node_name(const weft_schedule *s, weft_node n);
/* WRONG_PHASE (recorded naming fn) while s runs: no declaration then. */
weft_status wf_schedule_refuse_running(const weft_schedule *s, const char *fn);
/* Checks a system descriptor before wf_schedule_add_system (not NULL,
 * canaries 0, fn set); INVALID_ARG recorded naming
 * weft_schedule_add_system, the entry point every way of adding a system
 * reports as. */
weft_status wf_system_desc_check(weft_world *w, const weft_system_desc *desc);
bool wf_conds_push(weft_world *w, wf_conds *c, weft_condition *cond);
/* A new unattached condition of `kind` owned by s (its last run "minus
 * infinity"); NULL when out of memory (recorded). */
weft_condition *wf_condition_new(weft_schedule *s, uint8_t kind);
/* Appends system `sys` (created for s) as a new node; 0 when out of
 * memory (recorded; sys is the caller's to destroy then). */
weft_node wf_schedule_add_system_node(weft_schedule *s, wf_system *sys);

/* ---- executor.c ---- */
weft_status wf_schedule_run(weft_world *w, weft_schedule *s, double dt);
weft_status wf_schedule_apply_pending(weft_world *w, weft_schedule *s);
weft_status wf_par_each(weft_system_ctx *ctx, int32_t query, weft_chunk_fn fn, void *user,
                        int32_t min_rows);
weft_status wf_exec_set_threads(weft_world *w, int32_t threads);
weft_status wf_exec_set_jobs(weft_world *w, const weft_job_system *jobs);
/* Stops the pool and returns to single-threaded. */
void wf_exec_release(weft_world *w);
/* True, with WRONG_PHASE recorded naming fn, when w's executor may not
 * change: it is lent to other worlds, or w borrows another's. */
bool wf_exec_refuse_change(weft_world *w, const char *fn);
/* Worlds borrowing w's executor now. */
uint32_t wf_exec_lent(const weft_world *w);
/* weft_world_share_threads (checked handles). */
weft_status wf_exec_share(weft_world *w, weft_world *lender);
uint64_t wf_now_ns(void);

/* ---- stepping.c ---- */
enum wf_step_action { WF_STEP_WAIT = 0, WF_STEP_ONE = 1, WF_STEP_CONTINUE = 2 };
/* Before a run of a built schedule with stepping on: marks skip_once on
 * every system this run must skip and moves the cursor; consumes the
 * pending action. */
void wf_stepping_prepare(weft_schedule *s);
/* The position the next step would run, or plan.n when none. */
uint32_t wf_stepping_next(const weft_schedule *s);

/* ---- export.c ---- */
size_t wf_schedule_trace(const weft_schedule *s, char *buf, size_t cap);
size_t wf_schedule_dot(const weft_schedule *s, char *buf, size_t cap);

#endif

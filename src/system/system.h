/* src/system/system.h - systems, their context and run conditions.
 * SPDX-License-Identifier: MIT
 *
 * The layer above the world: a system is a descriptor compiled into
 * queries, declared resource and message uses, local state and command
 * buffers (system.c); a running system or condition reaches the world only
 * through its context, which checks every access against the declaration
 * (context.c); conditions are read-only systems and their combinators
 * (condition.c). Schedules, which order and run systems, are the layer
 * above (schedule/schedule.h).
 *
 * Threads: systems are created and destroyed on the driver thread; a
 * context is used by the one thread running its system or condition.
 */
#ifndef WF_SYSTEM_H
#define WF_SYSTEM_H

#include "internal.h"
#include "task/thread_pool.h"
#include "world/messages.h"

/* Access ids of message types (components and resources use their ids). */
#define WF_MSG_ACCESS(t) (0x40000000u | (uint32_t)(t))

/* A reusable command buffer of a system's parallel iteration. */
typedef struct wf_chunk_buf {
    weft_commands *cmds;
    bool busy; /* recorded into, not yet applied */
} wf_chunk_buf;

/* One parallel-iteration task. */
typedef struct wf_par_task {
    wf_task task;
    struct wf_par_ctx *par;
    uint32_t match, row, row_end;
    uint32_t buf;              /* index into the system's chunk buffers */
    wf_error_sink sink;
} wf_par_task;

/* A system, or the state of a user run condition (then fn is NULL and
 * cond_fn set; the same context API serves both). */
typedef struct wf_system {
    /* what a run touches, first: a run without queries or failure
     * touches the first cache line only */
    weft_system_fn fn;
    void *user;
    weft_query **queries;
    weft_commands *cmds;       /* own buffer (NULL for conditions) */
    int32_t nqueries;
    uint32_t flags;            /* weft_system_flags */
    uint32_t last_run;
    int32_t worker;            /* last run's worker */
    weft_status fail_status;   /* the last run: WEFT_OK unless it failed */
    bool ran;                  /* the last run: the body ran (not skipped) */
    bool cmds_used;            /* this run asked for its command buffer */
    bool validated;            /* some query is Single/Populated */
    bool skip_once;            /* weft_schedule_run_skip: skip the next run */
    weft_system_stats stats;   /* runs: the line's last 8 bytes */
    uint64_t t_start, t_end;   /* profiling: ns since the run began */
    /* the rest */
    weft_schedule *sched;
    char *name;
    size_t name_len;
    weft_condition_fn cond_fn;
    weft_node node;            /* 0 for conditions */
    weft_resource_use *res;
    int32_t nres;
    weft_message_use *msgs;
    int32_t nmsgs;
    weft_message_cursor *cursors; /* [nmsgs] */
    int32_t *groups;           /* [nqueries] param-set group per query, or NULL */
    weft_component *removed;   /* [nremoved] removal streams read */
    weft_message_cursor *rcursors; /* [nremoved] */
    int32_t nremoved;
    void *local;
    weft_local_desc local_desc;
    /* parallel iteration */
    wf_chunk_buf *chunks;
    uint32_t nchunks, cap_chunks;
    wf_par_task *tasks;
    uint32_t cap_tasks;
    char fail_msg[WF_ERROR_LEN];
} wf_system;

enum wf_cond_kind {
    WF_COND_USER = 1,
    WF_COND_AND,
    WF_COND_AND_EAGER,
    WF_COND_OR,
    WF_COND_NOT,
    WF_COND_RUN_ONCE,
    WF_COND_RES_CHANGED,
    WF_COND_RES_EXISTS,
    WF_COND_ON_MESSAGE,
    WF_COND_RES_U32_EQ  /* resource present and its first uint32_t == u32 */
};

struct weft_condition {
    weft_schedule *sched;
    uint8_t kind;              /* wf_cond_kind */
    bool attached;             /* to a node or a combinator */
    bool fired;                /* run_once */
    bool retired;              /* made by a module build that a reload,
                                  a failed build or an unload replaced:
                                  on no node or set, used by nothing new */
    weft_condition *a, *b;     /* combinator operands */
    wf_system *sys;            /* WF_COND_USER */
    weft_component res;        /* resource kinds */
    uint32_t u32;              /* res_u32_eq: the value compared with */
    weft_message_type msg;     /* on_message */
    weft_message_cursor cursor;
    uint32_t last_run;         /* resource_changed */
    struct weft_condition *next; /* schedule's list */
};

/* Conditions attached to a node or set. */
typedef struct wf_conds {
    weft_condition **v;
    uint32_t n, cap;
} wf_conds;

struct weft_system_ctx {
    weft_world *world;
    wf_system *sys;
    wf_atomic_u32 *run_failed; /* the run's failure flag, or NULL */
    uint32_t this_run;
    int32_t worker;
    double dt;
    bool exclusive;
    bool condition;
};

/* The access of one query: components read (READ fields, Added/Changed
 * filters) and written, and the With/Without components that restrict
 * the entities it matches. */
typedef struct wf_qacc {
    uint32_t reads[WEFT_MAX_TERMS], writes[WEFT_MAX_TERMS];
    uint32_t with[WEFT_MAX_TERMS], without[WEFT_MAX_TERMS];
    uint32_t nr, nw, nwith, nwithout;
} wf_qacc;

/* ---- system.c ---- */
/* Compiles desc (or cdesc, for a condition) into a system of schedule `s`
 * (kept as its owner; never dereferenced here). NULL on failure (error
 * recorded). */
wf_system *wf_system_create(weft_world *w, weft_schedule *s, const weft_system_desc *desc,
                            const weft_condition_desc *cdesc);
void wf_system_destroy(weft_world *w, wf_system *sys);
/* Do a and b declare the same access: flags, queries (terms, flags,
 * param-set groups), resources, messages and removal streams? */
bool wf_system_same_decl(const wf_system *a, const wf_system *b);
/* Exchanges the declarations of `to` and `from` (flags, queries, groups,
 * resources, messages, removal streams): `to` keeps its identity (name,
 * node, local state, statistics, last-run tick, which its new queries
 * take) and the cursors of the messages and removal streams both
 * declarations read. `from` is left holding to's old declaration (for
 * the caller to destroy). */
void wf_system_swap_decl(wf_system *to, wf_system *from);
void wf_query_access(const weft_query *q, wf_qacc *a);
/* Entities matching q at archetype level (row filters ignored); q must be
 * up to date. */
int64_t wf_system_query_count(const weft_world *w, const weft_query *q);
/* Do the system's Single/Populated queries allow it to run? Brings those
 * queries up to date (false on out of memory, error recorded). */
bool wf_system_validate(weft_world *w, wf_system *sys);
/* Sets every query's last run (system and condition ticks live there). */
void wf_system_set_last_run(wf_system *sys, uint32_t tick);

/* ---- context.c ---- */
/* Records a failure of the running system (first one kept) and raises the
 * run's failure flag. */
void wf_ctx_fail(weft_system_ctx *ctx, weft_status st, const char *msg);
/* Records an access violation by the running system (it fails) and in
 * the error slot; returns ACCESS_VIOLATION. */
weft_status wf_ctx_violation(weft_system_ctx *ctx, const char *fn, const char *what,
                             weft_component c);
/* The system's query number `query`, brought up to date; NULL on a bad
 * number or out of memory (error recorded). */
weft_query *wf_ctx_query(weft_system_ctx *ctx, int32_t query, const char *fn);
/* Param sets: is another query of `query`'s group being iterated? (a
 * violation is recorded when it is) */
bool wf_ctx_group_busy(weft_system_ctx *ctx, int32_t query, const char *fn);
/* Starts iterating query number `query` with the run's ticks; on failure
 * `it` is zeroed and the error recorded. `it` must not be NULL. */
weft_status wf_ctx_iter(weft_system_ctx *ctx, int32_t query, weft_iter *it, const char *fn);

/* ---- condition.c ---- */
/* Evaluates a condition tree at tick `this_run`. */
bool wf_condition_eval(weft_condition *c, weft_system_ctx *ctx);
void wf_condition_free(weft_world *w, weft_condition *c);

#endif

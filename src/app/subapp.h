/* src/app/subapp.h - sub-apps: records and internal entry points of the
 * sub-apps (subapp.c) and their extract systems (extract.c).
 * SPDX-License-Identifier: MIT
 *
 * A sub-app is a weft_app (its `parent` set) on a world of its own. Its
 * record (wf_sub) hangs off the parent's `subs` list and holds what the
 * parent needs to feed it: the main-world components and queries of the
 * entity sync, the sub-world's Extract schedule, the extract systems'
 * records, the main-world ticks bracketing the last extraction, and the
 * pipeline (a thread, a mutex and a condition variable).
 *
 * Sub-apps belong to the app layer and are built on the internal entry
 * points of the layers below (entity operations, queries and iteration,
 * schedules, resources, observers: the wf_* functions the public entry
 * points call too), never on the public API. They reach the app only
 * through the `subs`, `subs_update` and `subs_fini` hooks of struct
 * weft_app; the entry points (src/api/api_subapp.c, api_extract.c) check
 * their arguments and call the functions declared below. Ownership: the
 * parent app owns the list, each record and its sub-app; a record frees
 * its extract records, main-world queries and observer while the main
 * world is alive (subs_fini runs first in
 * wf_app_destroy).
 *
 * Threads: everything on the driver thread of the main world, except a
 * pipelined frame: between the hand-off (state QUEUED) and the completion
 * (state DONE), the sub-app and its world belong to the record's thread.
 * `state`, `frame_status` and `quit` are guarded by `mu`; the hand-off
 * through `mu` orders every access to the sub-world on either side.
 */
#ifndef WF_SUBAPP_H
#define WF_SUBAPP_H

#include "app/app.h"
#include "task/thread.h"

typedef struct wf_sub wf_sub;

enum wf_extract_kind {
    WF_EXTRACT_USER = 0,      /* weft_sub_app_add_extract */
    WF_EXTRACT_COMPONENT = 1, /* weft_sub_app_extract_component */
    WF_EXTRACT_RESOURCE = 2,  /* weft_sub_app_extract_resource */
    WF_EXTRACT_INSTANCES = 3  /* weft_sub_app_extract_instances */
};

/* One extract system. */
typedef struct wf_extract {
    wf_sub *sub;
    uint8_t kind;                    /* wf_extract_kind */
    weft_system_fn fn;               /* USER: the body */
    void *user;                      /* USER: its user; forms: transform's */
    weft_query **mq;                 /* main-world queries, nmq of them */
    int32_t nmq;
    weft_component *mres;            /* declared main resources */
    int32_t nmres;
    weft_message_type *mmsg;         /* declared main message types */
    weft_message_cursor *cursors;    /* [nmmsg] */
    int32_t nmmsg;
    /* forms */
    weft_extract_fn transform;       /* NULL: copy */
    weft_component src, dst;         /* main id; sub id (map resource) */
    size_t src_size, dst_size;
    bool changed_only;
    bool ran;                        /* has run in an extraction */
    uint32_t last_tick;              /* main tick of its previous extraction */
    void *scratch;                   /* dst_size bytes for a transformed value */
    weft_entity *keys;               /* INSTANCES: staged in query order */
    unsigned char *values;           /* [cap] of dst_size */
    weft_entity *pub_keys;           /* INSTANCES: the map's, ascending */
    unsigned char *pub_values;
    uint32_t *perm, *perm_tmp;       /* INSTANCES: the sort's */
    uint32_t cap;                    /* entries of each INSTANCES array */
    struct wf_extract *next;         /* the sub-app's list */
} wf_extract;

enum wf_sub_state {
    WF_SUB_IDLE = 0,   /* no frame in flight */
    WF_SUB_QUEUED = 1, /* handed to the thread */
    WF_SUB_DONE = 2    /* finished; frame_status not yet collected */
};

struct wf_sub {
    weft_app *app;                   /* the sub-app (parent set) */
    weft_app *parent;
    char *name;                      /* owned */
    weft_schedule *extract;          /* the sub-world's Extract schedule */
    weft_component sync;             /* main: the sync tag */
    weft_component sub_entity;       /* main: the twin's id */
    weft_component main_entity;      /* sub: the main entity's id */
    weft_query *q_new;               /* main: Sync, without SubEntity */
    weft_query *q_gone;              /* main: SubEntity, without Sync */
    weft_query *q_all;               /* main: Sync and SubEntity */
    weft_observer *obs;              /* main: removal of SubEntity */
    weft_entity *dead;               /* twins whose main side went */
    uint32_t ndead, cap_dead;
    wf_extract *extracts;            /* in order of addition */
    bool clear;                      /* clear_every_frame */
    bool extracting;                 /* the Extract schedule runs */
    bool ever_extracted;
    uint32_t last_tick;              /* main tick of the previous extraction */
    uint32_t now_tick;               /* main tick of this extraction */
    int64_t frames;
    /* pipeline */
    bool pipelined;
    bool thread_up;                  /* `thread` runs (joined at fini) */
    wf_thread thread;
    wf_mutex mu;
    wf_cond cv;
    uint8_t state;                   /* wf_sub_state; under mu */
    bool quit;                       /* under mu */
    double dt;                       /* the queued frame's; under mu */
    weft_status frame_status;        /* the finished frame's; under mu */
};

/* The parent's list of records. */
typedef struct wf_subs {
    wf_sub **v;
    uint32_t n, cap;
} wf_subs;

/* ---- subapp.c ---- */
/* Adds sub-app desc->name to `app` (what weft_app_add_sub_app does past
 * its checks: desc valid, app no sub-app, not updating); NULL with the
 * error recorded in the main world (ALREADY_EXISTS, OUT_OF_MEMORY, ...). */
weft_app *wf_sub_app_add(weft_app *app, const weft_sub_app_desc *desc);
/* The sub-app of `app` named `name`, or NULL (NOT_FOUND recorded). */
weft_app *wf_sub_app_find(weft_app *app, const char *name);
/* The record of sub-app `sub` (a valid app), or NULL when it is none. */
wf_sub *wf_sub_of(const weft_app *sub);
/* Waits for the frame in flight and collects its status (copied into the
 * main world's slot with the sub-app's name when it failed). */
weft_status wf_sub_wait(wf_sub *s);
/* Is a pipelined frame in flight (the sub-world is its thread's)? */
bool wf_sub_busy(wf_sub *s);
/* Turns the pipeline on (starting the thread) or off (waiting for the
 * frame in flight and stopping it); refused during an update. */
weft_status wf_sub_set_pipelined(wf_sub *s, bool on);
/* The twin of main entity main_e, or 0 with the error recorded in `rec`
 * (the main world, or the sub-world inside an extract system) naming fn. */
weft_entity wf_sub_map(wf_sub *sub, weft_entity main_e, const weft_world *rec, const char *fn);

/* ---- extract.c ---- */
/* Frees an extract record (its main queries too: the main world is alive). */
void wf_extract_free(wf_sub *sub, wf_extract *x);
/* The extract record running `ctx` on this thread, or NULL with
 * WRONG_PHASE recorded (not an extract system, or not extracting). */
wf_extract *wf_extract_current(weft_system_ctx *ctx, const char *fn);
/* The entry points past their checks (s may change: no update, no frame
 * in flight; desc checked). 0 with the error recorded in the sub-world. */
weft_node wf_extract_add_user(wf_sub *s, const weft_extract_desc *desc, const char *fn);
weft_node wf_extract_add_component(wf_sub *s, const weft_extract_component_desc *desc,
                                   const char *fn);
weft_node wf_extract_add_resource(wf_sub *s, const weft_extract_resource_desc *desc,
                                  const char *fn);
weft_component wf_extract_add_instances(wf_sub *s, const weft_extract_instances_desc *desc,
                                        const char *fn);
/* The main-world parameters of the running extract system x (query in
 * range, it not NULL): errors recorded in ctx's world. */
weft_status wf_extract_iter(weft_system_ctx *ctx, wf_extract *x, int32_t query, weft_iter *it);
const void *wf_extract_resource_get(weft_system_ctx *ctx, wf_extract *x, weft_component r,
                                    size_t size);
bool wf_extract_resource_changed(weft_system_ctx *ctx, wf_extract *x, weft_component r);
const void *wf_extract_message_read(weft_system_ctx *ctx, wf_extract *x,
                                    weft_message_type type, size_t size);

#endif

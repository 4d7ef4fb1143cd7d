/* weft_rollback.h - the optional rollback library: a GGPO-style rollback
 * session over a weft_app, a sync-test mode, per-frame checksums and a
 * component-level diff of two snapshots (library weft_rollback,
 * src/rollback/; docs/rollback.md). SPDX-License-Identifier: MIT
 *
 * The models are GGPO's sessions and ggrs (P2PSession, SyncTestSession):
 * the host feeds inputs (its local players' at once, remote players' when
 * they arrive), the session predicts missing remote inputs, keeps a
 * snapshot per frame of its window (weft_snapshot_write) and, when a late
 * input differs from its prediction, restores the snapshot of that frame
 * in place (weft_snapshot_restore) and resimulates to the present within
 * one weft_rollback_advance. The library is transport-agnostic: it never
 * sends anything; the host moves inputs and checksums between peers. It is
 * built on the public API of weft.h only.
 *
 * A frame is one weft_app_update(app, frame_dt). Systems read the frame's
 * inputs from a resource of the world (weft_rollback_inputs_register),
 * never from the host; everything a frame depends on must live in the
 * world (docs/rollback.md).
 *
 * Allocation: through desc->allocator when both its functions are given,
 * else malloc/free. Threads: every call is for the driver thread of the
 * app's world, outside its updates. */
#ifndef WEFT_ROLLBACK_H
#define WEFT_ROLLBACK_H

#include "weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most players a session has. */
#define WEFT_ROLLBACK_MAX_PLAYERS 32
/** Largest input of one player, bytes. */
#define WEFT_ROLLBACK_MAX_INPUT 1024
/** Largest window (weft_rollback_desc.max_rollback), frames. */
#define WEFT_ROLLBACK_MAX_WINDOW 128
/** Largest input delay, frames. */
#define WEFT_ROLLBACK_MAX_DELAY 32
/** Name of the inputs resource (weft_rollback_inputs_register). */
#define WEFT_ROLLBACK_INPUTS_NAME "weft.RollbackInputs"

/** Results of the rollback calls. Values are never renumbered. */
typedef enum weft_rollback_status {
    WEFT_RB_OK = 0,
    WEFT_RB_INVALID_ARG = 1,      /**< NULL, bad player, size or flag */
    WEFT_RB_DUPLICATE = 2,        /**< that input was known with the same bytes:
                                       ignored (not a failure) */
    WEFT_RB_CONFLICT = 3,         /**< that input was confirmed with other
                                       bytes: refused, nothing changed */
    WEFT_RB_TOO_OLD = 4,          /**< the frame left the window or the
                                       checksum history */
    WEFT_RB_TOO_NEW = 5,          /**< the frame lies beyond what the session
                                       can hold (window and delay ahead) */
    WEFT_RB_WINDOW_FULL = 6,      /**< advance refused: max_rollback frames
                                       are unconfirmed; wait for remote inputs */
    WEFT_RB_NEED_LOCAL_INPUT = 7, /**< advance refused: a local player has no
                                       input for the frame to simulate */
    WEFT_RB_ALREADY_ADDED = 8,    /**< a local input was already added this
                                       frame */
    WEFT_RB_DESYNC = 9,           /**< checksums differ (weft_rollback_desync) */
    WEFT_RB_WEFT_ERROR = 10,      /**< a weft call failed: the message and
                                       weft_rollback_weft_status say which */
    WEFT_RB_OUT_OF_MEMORY = 11,
    WEFT_RB_NOT_FOUND = 12,       /**< no checksum / snapshot of that frame
                                       (not confirmed yet, or dropped) */
    WEFT_RB_STATUS_NUM,
    WEFT_RB_STATUS_FORCE_U32 = 0x7FFFFFFF
} weft_rollback_status;

/** Static name of a status ("WEFT_RB_WINDOW_FULL"); "WEFT_RB_UNKNOWN"
 *  outside the enum. Thread: any. */
WEFT_API const char *weft_rollback_status_name(weft_rollback_status status);

/* ---- the inputs resource ---- */

/** Header of the inputs resource; the value is this header followed by
 *  `players` inputs of `input_size` bytes (weft_rollback_input). During a
 *  frame it holds that frame's inputs; between frames (in snapshots and in
 *  weft_world_hash) it is all zero, so checksums do not depend on which
 *  inputs were predicted. */
typedef struct weft_rollback_inputs {
    int64_t frame;      /**< the frame being simulated */
    int32_t players;
    int32_t input_size;
    uint32_t confirmed; /**< bit p: player p's input is confirmed (else
                             predicted; differs between peers, so gameplay
                             must not depend on it) */
    uint32_t _pad;
} weft_rollback_inputs;

/** Registers the inputs resource (WEFT_ROLLBACK_INPUTS_NAME) in `world`
 *  for `players` players of `input_size` bytes each, or returns its id
 *  when it is registered with that size already; declare it as a READ
 *  resource of the systems reading inputs. Size: weft_rollback_inputs_size.
 *  Returns 0 on failure (bad counts, a resource of that name with another
 *  size, weft_component_register's errors in the world's slot).
 *  Thread: driver. */
WEFT_API weft_component weft_rollback_inputs_register(weft_world *world, int32_t players,
                                                      int32_t input_size);

/** Bytes of the inputs resource for these counts (0 when out of range). */
WEFT_API size_t weft_rollback_inputs_size(int32_t players, int32_t input_size);

/** Player `player`'s input inside an inputs resource value, or NULL (NULL
 *  value, player out of range). *confirmed (may be NULL) receives its bit. */
WEFT_API const void *weft_rollback_input(const weft_rollback_inputs *inputs, int32_t player,
                                         bool *confirmed);

/* ---- the session ---- */

typedef struct weft_rollback_session weft_rollback_session;

/** One difference between two worlds (weft_rollback_diff). */
typedef enum weft_rollback_diff_kind {
    WEFT_RB_DIFF_VALUE = 1,          /**< both have (entity, component), bytes differ */
    WEFT_RB_DIFF_ONLY_A = 2,         /**< (entity, component) only in A */
    WEFT_RB_DIFF_ONLY_B = 3,         /**< (entity, component) only in B */
    WEFT_RB_DIFF_ENTITY_ONLY_A = 4,  /**< the entity is alive only in A */
    WEFT_RB_DIFF_ENTITY_ONLY_B = 5,  /**< the entity is alive only in B */
    WEFT_RB_DIFF_RESOURCE_VALUE = 6, /**< resource `component` differs */
    WEFT_RB_DIFF_RESOURCE_ONLY_A = 7,
    WEFT_RB_DIFF_RESOURCE_ONLY_B = 8,
    WEFT_RB_DIFF_FORCE_U32 = 0x7FFFFFFF
} weft_rollback_diff_kind;

typedef struct weft_rollback_diff_entry {
    weft_rollback_diff_kind kind;
    weft_entity entity;       /**< 0 for resources */
    weft_component component; /**< 0 for ENTITY_ONLY_* */
} weft_rollback_diff_entry;

/** Static name of a diff kind ("value", "only_a", ...). */
WEFT_API const char *weft_rollback_diff_kind_name(weft_rollback_diff_kind kind);

/** What a desync report carries. */
typedef struct weft_rollback_desync {
    int64_t frame;   /**< first frame whose checksums differ */
    uint64_t local;  /**< this session's checksum (sync test: the first run) */
    uint64_t remote; /**< the peer's (sync test: the resimulation's) */
    /** Sync test only: how the resimulated world differs from the first
     *  run's (A = first run, B = resimulation); NULL and 0 for a peer's
     *  checksum (diff the peers' snapshots with weft_rollback_diff).
     *  Valid during the callback and until the next advance. */
    const weft_rollback_diff_entry *diff;
    int32_t diff_count;   /**< entries in `diff` */
    int32_t diff_total;   /**< differences found (may exceed diff_count) */
} weft_rollback_desync;

/** Called inside the call that found the mismatch (an advance or
 *  weft_rollback_add_remote_checksum), once per mismatching frame: it may
 *  read the session (checksums, weft_rollback_frame_snapshot) and the
 *  world, but must not add inputs or advance. */
typedef void (*weft_rollback_desync_fn)(weft_rollback_session *session,
                                        const weft_rollback_desync *desync, void *user);

/** Session descriptor. Zero-initialise it; zero fields mean defaults. */
typedef struct weft_rollback_desc {
    uint32_t _start_canary; /**< must be 0 */
    /** The app to drive (required). The session calls weft_app_setup, so
     *  add plugins first; the host then calls weft_rollback_advance
     *  instead of weft_app_update. The app stays the caller's. */
    weft_app *app;
    int32_t players;        /**< 1..WEFT_ROLLBACK_MAX_PLAYERS */
    int32_t input_size;     /**< 1..WEFT_ROLLBACK_MAX_INPUT bytes */
    uint32_t local_players; /**< bit p: player p is fed by this host */
    /** Frames between a local input being added and the frame it applies
     *  to (0..WEFT_ROLLBACK_MAX_DELAY). Every peer uses the same delay:
     *  frames 0..delay-1 have all-zero, confirmed inputs. */
    int32_t input_delay;
    /** Window: the most unconfirmed frames simulated ahead, and how far a
     *  rollback reaches (1..WEFT_ROLLBACK_MAX_WINDOW; 0: 8). */
    int32_t max_rollback;
    /** Sync test (> 0): every player is local (local_players is ignored)
     *  and every advance rolls back this many frames and resimulates
     *  them, comparing checksums with the first run (1..max_rollback - 1;
     *  max_rollback 0 then means sync_test + 1). */
    int32_t sync_test;
    double frame_dt;        /**< dt of each update; 0: the app's fixed step */
    int32_t checksum_history; /**< confirmed checksums kept; 0: 256 */
    weft_rollback_desync_fn on_desync; /**< optional */
    void *user;             /**< passed to on_desync */
    weft_allocator allocator; /**< both functions or neither: malloc */
    uint32_t _end_canary;   /**< must be 0 */
} weft_rollback_desc;

/** Creates a session: validates desc, sets the app up (weft_app_setup),
 *  registers and inserts the inputs resource (all zero) and allocates its
 *  rings. Returns NULL on failure; the reason is in *out_status when
 *  out_status is not NULL (INVALID_ARG, OUT_OF_MEMORY, WEFT_ERROR: see the
 *  world's weft_last_error). Nothing has been simulated: the current frame
 *  is 0. Thread: driver of the app's world. */
WEFT_API weft_rollback_session *weft_rollback_create(const weft_rollback_desc *desc,
                                                     weft_rollback_status *out_status);

/** Frees the session's memory. The app, its world and the inputs resource
 *  stay. NULL is ignored. */
WEFT_API void weft_rollback_destroy(weft_rollback_session *session);

/** Adds local player `player`'s input for the frame current + delay (so
 *  it applies input_delay frames later), once per frame; *out_frame (may
 *  be NULL) receives that frame, which the host sends to its peers with
 *  the bytes. Errors: INVALID_ARG (NULL, player not local, size not
 *  input_size), ALREADY_ADDED. */
WEFT_API weft_rollback_status weft_rollback_add_local_input(weft_rollback_session *session,
                                                            int32_t player, const void *input,
                                                            size_t size, int64_t *out_frame);

/** Adds remote player `player`'s confirmed input for `frame`, received
 *  in any order at any time. A duplicate is ignored (DUPLICATE); the
 *  input takes effect at the next advance (a rollback when it differs
 *  from what was predicted). Errors: INVALID_ARG (NULL, local player,
 *  size, negative frame), CONFLICT (confirmed with other bytes before),
 *  TOO_NEW (further ahead than the window and delay allow). */
WEFT_API weft_rollback_status weft_rollback_add_remote_input(weft_rollback_session *session,
                                                             int32_t player, int64_t frame,
                                                             const void *input, size_t size);

/** Simulates the next frame: first, when a confirmed input differs from
 *  the input a simulated frame used, restores that frame's snapshot and
 *  resimulates to the present; then saves the current state and runs the
 *  current frame with every player's input (confirmed, or predicted:
 *  the player's last confirmed input); then records the checksums of the
 *  frames that became confirmed; in sync-test mode, rolls back
 *  sync_test frames and compares. Errors: INVALID_ARG, NEED_LOCAL_INPUT,
 *  WINDOW_FULL (nothing done: call again after remote inputs arrived),
 *  DESYNC (sync test: a resimulated frame's checksum differs; the world
 *  continues from the first run's state), WEFT_ERROR, OUT_OF_MEMORY. */
WEFT_API weft_rollback_status weft_rollback_advance(weft_rollback_session *session);

/** The checksum (weft_world_hash after the frame) of confirmed frame
 *  `frame`. Errors: INVALID_ARG, NOT_FOUND (not confirmed yet), TOO_OLD
 *  (left the checksum history). */
WEFT_API weft_rollback_status weft_rollback_checksum(const weft_rollback_session *session,
                                                     int64_t frame, uint64_t *out);

/** A peer's checksum of `frame`: compared with the local one now, or
 *  when the frame is confirmed here. A mismatch records the desync (the
 *  earliest such frame), calls on_desync and returns DESYNC when found
 *  now. Errors: INVALID_ARG, TOO_OLD, DESYNC. */
WEFT_API weft_rollback_status weft_rollback_add_remote_checksum(weft_rollback_session *session,
                                                                int64_t frame, uint64_t checksum);

/** Whether a desync was found; *out_frame (may be NULL) receives the
 *  first diverging frame. */
WEFT_API bool weft_rollback_desync_frame(const weft_rollback_session *session,
                                         int64_t *out_frame);

/** The snapshot of the world after frame `frame` (the state the frame's
 *  checksum hashes), while the session still holds it (the window's
 *  frames). Valid until the next advance. Errors: INVALID_ARG, NOT_FOUND. */
WEFT_API weft_rollback_status weft_rollback_frame_snapshot(const weft_rollback_session *session,
                                                           int64_t frame, const void **out_data,
                                                           size_t *out_len);

/** Counters of a session. */
typedef struct weft_rollback_stats {
    int64_t frame;              /**< frames simulated (the next frame to run) */
    int64_t confirmed_frame;    /**< last frame simulated with confirmed inputs
                                     (its checksum recorded); -1: none */
    int64_t rollbacks;          /**< restores for mispredictions */
    int64_t frames_resimulated; /**< frames run again after those restores */
    int32_t max_rollback_depth; /**< deepest rollback, frames */
    int64_t sync_checks;        /**< sync test: frames resimulated and compared */
    int64_t predicted_inputs;   /**< player inputs simulated as predictions */
} weft_rollback_stats;

/** Fills *out. Errors: INVALID_ARG. */
WEFT_API weft_rollback_status weft_rollback_get_stats(const weft_rollback_session *session,
                                                      weft_rollback_stats *out);

/** The inputs resource's id. 0 for NULL. */
WEFT_API weft_component weft_rollback_inputs_id(const weft_rollback_session *session);

/** The message of the session's last failure ("" if none). Lifetime: until
 *  the next call on the session. */
WEFT_API const char *weft_rollback_last_error(const weft_rollback_session *session);

/** The weft status behind the last WEFT_ERROR (WEFT_OK otherwise). */
WEFT_API weft_status weft_rollback_weft_status(const weft_rollback_session *session);

/* ---- diff ---- */

/** Compares two snapshots (A, B) of worlds with the same registrations,
 *  component by component: writes up to `cap` differences to `out`
 *  (entities ascending, then components ascending; resources last) and
 *  their total number to *out_count. Values are compared as bytes;
 *  relationship target lists by their entities. An entity with no
 *  component at all is not seen. `world` is the scratch the snapshots are
 *  restored into, one after the other: a world with the same
 *  registrations (a tool world without schedules, or the live world
 *  itself: its content is saved first and restored at the end, so it is
 *  the same afterwards, weft_world_restore_count aside). `allocator` may
 *  be NULL (malloc). Errors (weft statuses, recorded in world's slot when
 *  they come from weft): INVALID_ARG, the errors of weft_snapshot_write
 *  and weft_snapshot_restore, OUT_OF_MEMORY. Thread: driver, outside
 *  updates. */
WEFT_API weft_status weft_rollback_diff(weft_world *world, const void *a, size_t a_len,
                                        const void *b, size_t b_len,
                                        weft_rollback_diff_entry *out, int32_t cap,
                                        int32_t *out_count, const weft_allocator *allocator);

#ifdef __cplusplus
}
#endif

#endif

/* include/weft_remote.h - weft_remote: the world over JSON-RPC 2.0 on HTTP.
 * SPDX-License-Identifier: MIT
 *
 * An optional library (target weft_remote, built when jansson is found;
 * see docs/remote.md) on top of weft's public API: it links weft
 * and uses nothing else of it, so the core library keeps no network
 * dependency. An HTTP server on a background thread receives JSON-RPC 2.0
 * requests (POST /), queues them, and the driver thread answers them at a
 * safe point: weft_remote_poll, called by the host between frames or by
 * the exclusive system weft_remote_add_plugin puts in an app's Last
 * schedule. No request touches the world while systems run.
 *
 * Methods follow bevy_remote's names and shapes where they exist
 * (world.get_components, world.query, world.spawn_entity, ...); weft's own
 * live under "weft.". Entities are JSON integers (weft_entity), component
 * values the JSON of their type descriptions (weft_json_write_component).
 *
 * Conventions of the doc comments are weft.h's (Thread, Lifetime,
 * Errors). A remote is not a world: its errors land in its own slot
 * (weft_remote_last_status, weft_remote_last_error), except
 * weft_remote_create's, which returns its status.
 */
#ifndef WEFT_REMOTE_H
#define WEFT_REMOTE_H

#include "weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque remote: one server bound to one world. */
typedef struct weft_remote weft_remote;

/** Port used when weft_remote_desc.port is 0 (bevy_remote's default). */
#define WEFT_REMOTE_DEFAULT_PORT 15702
/** weft_remote_desc.port: let the system pick a free port
 *  (weft_remote_port tells which). */
#define WEFT_REMOTE_ANY_PORT (-1)

/** JSON-RPC 2.0 error codes (the specification's). */
#define WEFT_REMOTE_PARSE_ERROR (-32700)
#define WEFT_REMOTE_INVALID_REQUEST (-32600)
#define WEFT_REMOTE_METHOD_NOT_FOUND (-32601)
#define WEFT_REMOTE_INVALID_PARAMS (-32602)
#define WEFT_REMOTE_INTERNAL_ERROR (-32603)
/** A weft failure: the error's code is WEFT_REMOTE_WEFT_ERROR - status
 *  (-32001 for WEFT_ERR_INVALID_ARG ... -32027 for WEFT_ERR_UNSUPPORTED),
 *  its data {"status": "<weft_status_name>", "status_code": <n>} and its
 *  message weft's (weft_last_error) or the remote's. */
#define WEFT_REMOTE_WEFT_ERROR (-32000)

/** Bits of weft_remote_desc.flags. */
typedef enum weft_remote_flags {
    WEFT_REMOTE_FLAGS_DEFAULT = 0,
    /** Allow the methods that change the world (spawn, insert, remove,
     *  despawn, reparent, mutate, insert_resources, stepping control).
     *  Without it they answer WEFT_ERR_ACCESS_VIOLATION. */
    WEFT_REMOTE_ALLOW_WRITES = 1u << 0,
    /** Start no HTTP server: requests come only through
     *  weft_remote_handle (tests, fuzzing, a host's own transport). */
    WEFT_REMOTE_NO_SERVER = 1u << 1,
    WEFT_REMOTE_FLAGS_FORCE_U32 = 0x7FFFFFFF
} weft_remote_flags;

/** Remote descriptor. Zero-initialise it; zero fields mean defaults. */
typedef struct weft_remote_desc {
    uint32_t _start_canary;     /**< must be 0 */
    /** The world served (required for weft_remote_create; ignored by
     *  weft_remote_add_plugin, which serves the app's world). Kept, not
     *  owned: destroy the remote before the world. */
    weft_world *world;
    /** IPv4 address to bind, dotted ("0.0.0.0" for every interface: read
     *  docs/remote.md first). NULL: "127.0.0.1". Copied. */
    const char *bind_address;
    /** TCP port: 0 means WEFT_REMOTE_DEFAULT_PORT, WEFT_REMOTE_ANY_PORT a
     *  free one; otherwise 1..65535. */
    int32_t port;
    uint32_t flags;             /**< weft_remote_flags bits */
    /** When set, every HTTP request must carry
     *  "Authorization: Bearer <token>" (else 401). Copied; at most 256
     *  bytes. NULL: no token. */
    const char *token;
    int32_t max_request_bytes;  /**< body size limit; 0: 1 MiB */
    int32_t max_depth;          /**< JSON nesting limit; 0: 32 */
    int32_t max_batch;          /**< requests per batch; 0: 64 */
    int32_t max_connections;    /**< open connections; 0: 16 */
    /** How long a request waits for the driver to answer it, ms; 0: 5000.
     *  Past it the client gets an error and the request is dropped. */
    int32_t timeout_ms;
    /** Requests weft_remote_add_plugin's system answers per update, and
     *  held watches and streams it evaluates again; 0: 16. */
    int32_t poll_budget;
    uint32_t _end_canary;       /**< must be 0 */
} weft_remote_desc;

/** Creates a remote serving desc->world and, unless
 *  WEFT_REMOTE_NO_SERVER, starts its HTTP server (its threads only parse
 *  HTTP and queue; nothing of the world is touched off the driver).
 *  *out receives the remote, or NULL on error.
 *  Thread: the world's driver. Lifetime: until weft_remote_destroy.
 *  Errors (returned): INVALID_ARG (desc or out NULL, canary, unknown
 *  flag bits, bad address, port outside 1..65535, negative limits, token
 *  too long), INVALID_HANDLE (world NULL), UNSUPPORTED (the server could
 *  not be started: port taken, no permission), OUT_OF_MEMORY. */
WEFT_API weft_status weft_remote_create(const weft_remote_desc *desc, weft_remote **out);

/** Stops the server (queued and waiting requests are answered with an
 *  error), joins its threads and frees the remote. NULL is ignored.
 *  Thread: driver. Errors: none (returns WEFT_OK). */
WEFT_API weft_status weft_remote_destroy(weft_remote *remote);

/** The TCP port the server listens on; 0 without a server or for NULL.
 *  Thread: any. */
WEFT_API int32_t weft_remote_port(const weft_remote *remote);

/** Answers up to `budget` queued HTTP requests (a batch counts as one),
 *  in arrival order, and returns how many answers and stream events it
 *  produced (0 when nothing was waiting or changed), or -1 on misuse. A
 *  "+watch" request whose etag is current is held instead; held requests
 *  and event streams are checked at every poll from change ticks (a
 *  probe, no evaluation), and at most `budget` of those that may have
 *  changed are evaluated again per poll (the rest at the next), so at
 *  most max_connections are held and a poll's work stays bounded. A held
 *  request is answered when its value changes or half of timeout_ms
 *  passes; a stream gets an event per change (docs/remote.md). Call it
 *  where nothing else uses the world: between frames, or from an
 *  exclusive system. Thread: driver. It never waits for a connection.
 *  Errors: INVALID_HANDLE (remote NULL), INVALID_ARG (budget < 1). */
WEFT_API int32_t weft_remote_poll(weft_remote *remote, int32_t budget);

/** Answers one JSON-RPC request or batch given as text (`len` bytes, no
 *  NUL needed), as the server would, except that a "+watch" request is
 *  answered at once. Returns the response text
 *  (NUL-terminated; *out_len, when not NULL, gets its length without the
 *  NUL), or NULL when nothing is to be answered (only notifications) or
 *  on misuse. Every JSON-RPC error is a response, not a failure.
 *  Thread: driver, where weft_remote_poll may be called.
 *  Lifetime: until the next weft_remote_handle or weft_remote_poll on
 *  this remote, or its destruction. Errors: INVALID_HANDLE, INVALID_ARG
 *  (text NULL with len > 0), OUT_OF_MEMORY. */
WEFT_API const char *weft_remote_handle(weft_remote *remote, const char *text, size_t len,
                                        size_t *out_len);

/** Adds a plugin "weft.remote" to `app`: a remote serving the app's world
 *  is created now (desc as for weft_remote_create; desc->world ignored,
 *  desc NULL means defaults), and the plugin's build adds the exclusive,
 *  non-steppable system "weft.remote_poll" to Last, which answers up to
 *  desc->poll_budget requests per update. *out (may be NULL) receives the
 *  remote, which the app destroys with itself.
 *  Thread: driver. Lifetime of *out: until weft_app_destroy.
 *  Errors (returned): as weft_remote_create and weft_app_add_plugin
 *  (INVALID_HANDLE for a NULL app, ALREADY_EXISTS for a second remote). */
WEFT_API weft_status weft_remote_add_plugin(weft_app *app, const weft_remote_desc *desc,
                                            weft_remote **out);

/** Status of the remote's most recent failure (WEFT_OK if none).
 *  INVALID_HANDLE for NULL. Thread: driver. */
WEFT_API weft_status weft_remote_last_status(const weft_remote *remote);

/** Message of the remote's most recent failure ("" if none). Thread:
 *  driver. Lifetime: until the next failure on this remote or its
 *  destruction. A NULL remote gives a static message. */
WEFT_API const char *weft_remote_last_error(const weft_remote *remote);

/** Requests answered since creation (through poll or handle, a batch
 *  counting its members), and of them those answered with an error.
 *  Thread: driver. Errors: INVALID_HANDLE. */
WEFT_API weft_status weft_remote_counts(const weft_remote *remote, int64_t *out_requests,
                                        int64_t *out_errors);

/** Counters of a remote (weft_remote_get_stats). */
typedef struct weft_remote_stats {
    int64_t requests;        /**< as weft_remote_counts */
    int64_t errors;          /**< as weft_remote_counts */
    /** +watch checks made from change ticks alone (a probe), and full
     *  evaluations of a watched method (a probe that found a newer tick or
     *  another structure, a method without a probe, a first answer). */
    int64_t watch_probes;
    int64_t watch_evaluations;
    int32_t held_watches;    /**< long polls held now */
    int32_t open_streams;    /**< event streams open now */
    int64_t stream_events;   /**< events queued on streams since creation */
} weft_remote_stats;

/** Fills `out` with the remote's counters. Thread: driver.
 *  Errors: INVALID_HANDLE (remote NULL), INVALID_ARG (out NULL). */
WEFT_API weft_status weft_remote_get_stats(const weft_remote *remote, weft_remote_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_REMOTE_H */

/* src/remote/remote_inspect.h - the weft.* remote methods (inspect.c) and
 * the error record every method fills (rpc_internal.h).
 * SPDX-License-Identifier: MIT
 */
#ifndef WEFT_REMOTE_INSPECT_H
#define WEFT_REMOTE_INSPECT_H

#include <jansson.h>

#include "remote_internal.h"

/* A method's failure: a JSON-RPC code, and for weft failures the status. */
typedef struct wr_err {
    int code;
    weft_status status; /* WEFT_OK: a plain JSON-RPC error */
    char msg[768];
} wr_err;

json_t *wi_world_stats(weft_remote *r, json_t *params, wr_err *err);
json_t *wi_archetypes(weft_remote *r, json_t *params, wr_err *err);
json_t *wi_schedules(weft_remote *r, json_t *params, wr_err *err);
json_t *wi_schedule_info(weft_remote *r, json_t *params, wr_err *err);
json_t *wi_trace(weft_remote *r, json_t *params, wr_err *err);
json_t *wi_diagnostics(weft_remote *r, json_t *params, wr_err *err);
json_t *wi_states(weft_remote *r, json_t *params, wr_err *err);
json_t *wi_stepping(weft_remote *r, json_t *params, wr_err *err);
json_t *wi_step_systems(weft_remote *r, json_t *params, wr_err *err);
json_t *wi_set_step_behavior(weft_remote *r, json_t *params, wr_err *err);
json_t *wi_set_state(weft_remote *r, json_t *params, wr_err *err);
json_t *wi_schema(weft_remote *r, json_t *params, wr_err *err);
/* schema.c */
json_t *wi_registry_schema(weft_remote *r, json_t *params, wr_err *err);

#endif

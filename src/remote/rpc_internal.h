/* src/remote/rpc_internal.h - what the JSON-RPC method files share.
 * SPDX-License-Identifier: MIT
 *
 * The requests are answered by rpc.c (parsing, the method table, dispatch
 * and the +watch protocol around a call); the methods and their helpers
 * live by family:
 *   rpc_common.c    errors, parameters, component values, the response
 *                   text
 *   rpc_entity.c    world.* methods on entities and components (get,
 *                   spawn, insert, remove, despawn, reparent, list,
 *                   mutate)
 *   rpc_query.c     world.query
 *   rpc_resource.c  world.* methods on resources
 *   rpc_watch.c     the +watch probes and etags, and bevy_remote's
 *                   streaming watches
 * (inspect.c and schema.c hold the weft.* methods: remote_inspect.h.)
 * Names are wr_*: weft_remote defines no wf_* symbol
 * (tests/layering/check_client_symbols.sh).
 */
#ifndef WEFT_REMOTE_RPC_INTERNAL_H
#define WEFT_REMOTE_RPC_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#include "remote_inspect.h"


/* Bevy's type paths of the built-in hierarchy (bevy_ecs 0.16 and later):
 * ChildOf is a newtype of the parent entity, Children a list of entities.
 * They name weft's ChildOf and its target list, shown in Bevy's shapes. */
#define WR_BEVY_CHILD_OF "bevy_ecs::hierarchy::ChildOf"
#define WR_BEVY_CHILDREN "bevy_ecs::hierarchy::Children"

enum { WR_ALIAS_NONE = 0, WR_ALIAS_CHILD_OF = 1, WR_ALIAS_CHILDREN = 2 };

/* What a world.query asks for, checked: its terms and name lists. */
typedef struct wr_qplan {
    weft_query_desc qd;
    bool matches_nothing, option_all, strict;
    json_t *comps, *option, *has, *with, *without; /* borrowed from params */
} wr_qplan;

/* ---- rpc_common.c ---- */

/* A failure with a JSON-RPC code, or with a weft status; both return NULL. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
json_t *wr_fail_code(wr_err *err, int code, const char *fmt, ...);
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
json_t *wr_fail_weft(wr_err *err, weft_status st, const char *fmt, ...);
json_t *wr_fail_world(weft_remote *r, wr_err *err, weft_status st);
json_t *wr_oom(wr_err *err);
bool wr_get_entity(weft_remote *r, json_t *v, const char *what, weft_entity *out,
                   wr_err *err);
weft_component wr_lookup(weft_remote *r, const char *name, int *alias);
bool wr_get_component(weft_remote *r, json_t *v, const char *what, weft_component *out,
                      wr_err *err);
bool wr_get_names(json_t *params, const char *key, json_t **out, wr_err *err);
bool wr_get_bool(json_t *params, const char *key, bool *out, wr_err *err);
bool wr_require_object(json_t *params, wr_err *err);
const char *wr_component_name(weft_remote *r, weft_component c);
json_t *wr_component_value(weft_remote *r, weft_entity e, weft_component c, wr_err *err);
json_t *wr_error_object(const wr_err *err);
char *wr_dump(json_t *o, size_t *out_len);

/* ---- rpc_entity.c ---- */

weft_component wr_list_relationship(weft_remote *r, weft_component c);
bool wr_is_relationship_list(weft_remote *r, weft_component c);
json_t *wr_value_as(weft_remote *r, weft_entity e, weft_component c, int alias,
                    wr_err *err);
bool wr_all_components(weft_remote *r, weft_entity e, json_t *into, wr_err *err);
bool wr_path_set(json_t *root, const char *path, json_t *value, json_t **out_root,
                 wr_err *err);
json_t *wr_world_get_components(weft_remote *r, json_t *params, wr_err *err);
json_t *wr_world_spawn_entity(weft_remote *r, json_t *params, wr_err *err);
json_t *wr_world_insert_components(weft_remote *r, json_t *params, wr_err *err);
json_t *wr_world_remove_components(weft_remote *r, json_t *params, wr_err *err);
json_t *wr_world_despawn_entity(weft_remote *r, json_t *params, wr_err *err);
json_t *wr_world_reparent_entities(weft_remote *r, json_t *params, wr_err *err);
json_t *wr_world_list_components(weft_remote *r, json_t *params, wr_err *err);
json_t *wr_world_mutate_components(weft_remote *r, json_t *params, wr_err *err);

/* ---- rpc_query.c ---- */

bool wr_query_plan(weft_remote *r, json_t *params, wr_qplan *p, wr_err *err);
weft_entity *wr_query_entities(weft_remote *r, const wr_qplan *p, size_t *out_count,
                               wr_err *err);
json_t *wr_world_query(weft_remote *r, json_t *params, wr_err *err);

/* ---- rpc_resource.c ---- */

json_t *wr_world_list_resources(weft_remote *r, json_t *params, wr_err *err);
json_t *wr_world_get_resources(weft_remote *r, json_t *params, wr_err *err);
json_t *wr_world_insert_resources(weft_remote *r, json_t *params, wr_err *err);
json_t *wr_world_remove_resources(weft_remote *r, json_t *params, wr_err *err);
json_t *wr_world_mutate_resources(weft_remote *r, json_t *params, wr_err *err);

/* ---- rpc_watch.c ---- */

bool wr_watch_probe(weft_remote *r, const char *method, json_t *params, uint32_t since,
                    uint64_t *shape);
bool wr_value_hash(json_t *v, uint64_t *out);
void wr_etag_format(const wr_watch *w, char out[48]);
bool wr_etag_parse(const char *s, wr_watch *w);
json_t *wr_watch_get_components(weft_remote *r, json_t *params, wr_watch *ws,
                                bool *nothing, wr_err *err);
json_t *wr_watch_list_components(weft_remote *r, json_t *params, wr_watch *ws,
                                 bool *nothing, wr_err *err);
bool wr_is_bevy_watch(const char *name);
void wr_bevy_code(wr_err *err, const char *method);

#endif

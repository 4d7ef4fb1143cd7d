/* src/api/api_subapp.c - sub-app entry points: creation, lookups, the
 * pipeline switch and entity mapping.
 * SPDX-License-Identifier: MIT
 *
 * Argument and phase checks, then one call into src/app/subapp.c, where
 * the sub-apps live (records, sync, extraction, the pipeline thread).
 */
#include "app/subapp.h"

#include <string.h>

WEFT_API weft_app *weft_app_add_sub_app(weft_app *app, const weft_sub_app_desc *desc)
{
    if (!wf_app_ok(app)) {
        return NULL;
    }
    weft_world *main = app->world;
    const char *fn = "weft_app_add_sub_app";
    if (wf_world_refuse_shared(main, fn)) {
        return NULL;
    }
    if (app->updating) {
        wf_error(main, WEFT_ERR_WRONG_PHASE, "%s: called during an update", fn);
        return NULL;
    }
    if (app->parent) {
        wf_error(main, WEFT_ERR_INVALID_ARG, "%s: a sub-app cannot have sub-apps", fn);
        return NULL;
    }
#if !WEFT_THREADS
    if (desc && desc->pipelined) {
        wf_error(main, WEFT_ERR_UNSUPPORTED, "%s: a pipelined sub-app needs its own thread, "
                 "and this build has no threads (WEFT_THREADS=OFF)", fn);
        return NULL;
    }
#endif
    if (!desc || desc->_start_canary || desc->_end_canary || !desc->name || !desc->name[0]) {
        wf_error(main, WEFT_ERR_INVALID_ARG, "%s: desc NULL, canary not 0 or no name", fn);
        return NULL;
    }
    const weft_world_desc *wd = &desc->world_desc;
    if (wd->_start_canary || wd->_end_canary || wd->entity_capacity_hint < 0 ||
        (wd->allocator.alloc == NULL) != (wd->allocator.free == NULL)) {
        wf_error(main, WEFT_ERR_INVALID_ARG, "%s: sub-app '%s': invalid world_desc", fn,
                 desc->name);
        return NULL;
    }
    if (desc->share_threads && main->sys && main->sys->lender) {
        wf_error(main, WEFT_ERR_INVALID_ARG,
                 "%s: share_threads, but the main world runs on another world's executor", fn);
        return NULL;
    }
    size_t nlen = strlen(desc->name);
    if (nlen > 200) {
        wf_error(main, WEFT_ERR_INVALID_ARG, "%s: name longer than 200 bytes", fn);
        return NULL;
    }
    return wf_sub_app_add(app, desc);
}

WEFT_API weft_app *weft_app_sub_app(weft_app *app, const char *name)
{
    if (!wf_app_ok(app)) {
        return NULL;
    }
    if (!name) {
        wf_error(app->world, WEFT_ERR_INVALID_ARG, "weft_app_sub_app: name is NULL");
        return NULL;
    }
    return wf_sub_app_find(app, name);
}

WEFT_API weft_app *weft_sub_app_parent(weft_app *sub)
{
    return wf_app_ok(sub) ? sub->parent : NULL;
}

/* The record of a sub-app argument, or NULL (INVALID_ARG recorded in its
 * world when it is an app but no sub-app). */
static wf_sub *sub_arg(const weft_app *sub, const char *fn)
{
    if (!wf_app_ok(sub)) {
        return NULL;
    }
    wf_sub *s = wf_sub_of(sub);
    if (!s) {
        wf_error(sub->world, WEFT_ERR_INVALID_ARG, "%s: the app is no sub-app", fn);
    }
    return s;
}

WEFT_API weft_status weft_sub_app_wait(weft_app *sub)
{
    if (!wf_app_ok(sub)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    wf_sub *s = sub_arg(sub, "weft_sub_app_wait");
    if (!s) {
        return WEFT_ERR_INVALID_ARG;
    }
    return wf_sub_wait(s);
}

WEFT_API weft_status weft_sub_app_set_pipelined(weft_app *sub, bool on)
{
    if (!wf_app_ok(sub)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    wf_sub *s = sub_arg(sub, "weft_sub_app_set_pipelined");
    if (!s) {
        return WEFT_ERR_INVALID_ARG;
    }
    return wf_sub_set_pipelined(s, on);
}

WEFT_API int64_t weft_sub_app_frames(const weft_app *sub)
{
    wf_sub *s = wf_app_ok(sub) ? wf_sub_of(sub) : NULL;
    return s ? s->frames : 0;
}

WEFT_API weft_component weft_sub_app_sync_tag(const weft_app *sub)
{
    wf_sub *s = sub_arg(sub, "weft_sub_app_sync_tag");
    return s ? s->sync : 0;
}

WEFT_API weft_component weft_sub_app_sub_entity(const weft_app *sub)
{
    wf_sub *s = sub_arg(sub, "weft_sub_app_sub_entity");
    return s ? s->sub_entity : 0;
}

WEFT_API weft_component weft_sub_app_main_entity(const weft_app *sub)
{
    wf_sub *s = sub_arg(sub, "weft_sub_app_main_entity");
    return s ? s->main_entity : 0;
}

WEFT_API weft_entity weft_sub_app_map(weft_app *sub, weft_entity main_e)
{
    wf_sub *s = sub_arg(sub, "weft_sub_app_map");
    if (!s) {
        return 0;
    }
    if (wf_sub_busy(s)) {
        /* the twin's liveness is the sub-world's, which the frame owns */
        wf_error(s->parent->world, WEFT_ERR_WRONG_PHASE,
                 "weft_sub_app_map: a pipelined frame of '%s' is in flight "
                 "(weft_sub_app_wait first)",
                 s->name);
        return 0;
    }
    return wf_sub_map(s, main_e, s->parent->world, "weft_sub_app_map");
}

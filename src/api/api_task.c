/* src/api/api_task.c - tasks that span frames: spawn, poll, wait, cancel,
 * detach, the sync point and the pools' thread counts.
 * SPDX-License-Identifier: MIT
 *
 * Argument checks, then one call into world/tasks.c. Errors from a system
 * or a task's function go to its own slot (wf_error's sink), so these may
 * be called from the threads weft.h allows.
 */
#include "internal.h"
#include "world/tasks.h"

WEFT_API weft_status weft_task_spawn(weft_world *world, const weft_task_desc *desc,
                                     weft_task *out_task)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (out_task) {
        *out_task = WEFT_TASK_NONE;
    }
    if (!desc || !out_task) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_task_spawn: %s is NULL",
                        desc ? "out_task" : "desc");
    }
    if (desc->_start_canary || desc->_end_canary) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_task_spawn: desc canary not 0");
    }
    if (!desc->fn) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_task_spawn: desc->fn is NULL");
    }
    if (desc->input_size && !desc->input) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_task_spawn: desc->input is NULL with input_size %zu",
                        desc->input_size);
    }
    if ((uint32_t)desc->pool >= (uint32_t)WEFT_TASK_POOL_COUNT) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_task_spawn: unknown pool %u (ASYNC_COMPUTE 0 or IO 1)",
                        (uint32_t)desc->pool);
    }
    if (desc->flags & ~WEFT_TASK_DETERMINISTIC) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "weft_task_spawn: unknown flags 0x%x",
                        desc->flags & ~WEFT_TASK_DETERMINISTIC);
    }
    if (desc->input_size > WF_TASK_BLOCK_MAX || desc->result_size > WF_TASK_BLOCK_MAX) {
        return wf_error(world, WEFT_ERR_CAPACITY,
                        "weft_task_spawn: input (%zu bytes) or result (%zu bytes) above 1 GiB",
                        desc->input_size, desc->result_size);
    }
    return wf_tasks_spawn(world, desc, out_task);
}

static weft_status poll_or_wait(weft_world *world, weft_task task, weft_task_outcome *out,
                                void *result, size_t result_size, bool wait,
                                const char *fn)
{
    if (out) {
        out->state = WEFT_TASK_STATE_NONE;
        out->status = WEFT_OK;
        out->message[0] = '\0';
    }
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if (!out) {
        return wf_error(world, WEFT_ERR_INVALID_ARG, "%s: out is NULL", fn);
    }
    return wf_tasks_poll(world, task, wait, out, result, result_size, fn);
}

WEFT_API weft_status weft_task_poll(weft_world *world, weft_task task, weft_task_outcome *out,
                                    void *result, size_t result_size)
{
    return poll_or_wait(world, task, out, result, result_size, false, "weft_task_poll");
}

WEFT_API weft_status weft_task_wait(weft_world *world, weft_task task, weft_task_outcome *out,
                                    void *result, size_t result_size)
{
    return poll_or_wait(world, task, out, result, result_size, true, "weft_task_wait");
}

WEFT_API weft_status weft_task_cancel(weft_world *world, weft_task task)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_tasks_cancel(world, task);
}

WEFT_API weft_status weft_task_detach(weft_world *world, weft_task task)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_tasks_detach(world, task);
}

WEFT_API bool weft_task_cancelled(const weft_task_ctx *ctx)
{
    return ctx && wf_task_ctx_cancelled(ctx);
}

WEFT_API weft_status weft_task_fail(weft_task_ctx *ctx, weft_status status,
                                    const char *message)
{
    if (!ctx || !message || status == WEFT_OK || (uint32_t)status >= (uint32_t)WEFT_STATUS_NUM) {
        return WEFT_ERR_INVALID_ARG; /* no world to record it in */
    }
    return wf_task_ctx_fail(ctx, status, message);
}

WEFT_API weft_status weft_tasks_tick(weft_world *world)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    return wf_tasks_tick(world);
}

WEFT_API weft_status weft_world_set_task_threads(weft_world *world, weft_task_pool pool,
                                                 int32_t threads)
{
    if (!wf_world_ok(world)) {
        return WEFT_ERR_INVALID_HANDLE;
    }
    if ((uint32_t)pool >= (uint32_t)WEFT_TASK_POOL_COUNT || threads < 0) {
        return wf_error(world, WEFT_ERR_INVALID_ARG,
                        "weft_world_set_task_threads: %s (pool %u, threads %d)",
                        threads < 0 ? "threads is negative" : "unknown pool", (uint32_t)pool,
                        threads);
    }
    return wf_tasks_set_threads(world, (uint32_t)pool, threads);
}

WEFT_API int32_t weft_world_task_threads(const weft_world *world, weft_task_pool pool)
{
    if (!wf_world_ok(world) || (uint32_t)pool >= (uint32_t)WEFT_TASK_POOL_COUNT) {
        return 0;
    }
    return wf_tasks_threads(world, (uint32_t)pool);
}

WEFT_API int32_t weft_world_task_count(const weft_world *world)
{
    return wf_world_ok(world) ? wf_tasks_count(world) : 0;
}

/* src/world/tasks.h - a world's tasks: spawn, poll, the sync point.
 * SPDX-License-Identifier: MIT
 *
 * The ECS half of weft_task (weft.h; the runtime is task/task.c): the
 * world's task set is made on the first spawn (any thread: published with
 * a CAS), runs each task's function with an error sink of its own and the
 * callback guard, and completes tasks at the sync point on the driver
 * (wf_tasks_tick): apply steps in their order, each one's commands applied
 * before the next. World destruction cancels and joins every task first
 * (wf_tasks_fini). docs/tasks.md describes the model.
 */
#ifndef WF_TASKS_H
#define WF_TASKS_H

#include "world/world.h"

/* Spawns a validated desc. Errors recorded (sink-aware), as weft.h says. */
weft_status wf_tasks_spawn(weft_world *w, const weft_task_desc *desc, weft_task *out);
/* Poll (wait false) or wait (wait true) for weft_task_poll / weft_task_wait;
 * fn names the entry point in messages. */
weft_status wf_tasks_poll(weft_world *w, weft_task task, bool wait, weft_task_outcome *out,
                          void *result, size_t result_size, const char *fn);
weft_status wf_tasks_cancel(weft_world *w, weft_task task);
weft_status wf_tasks_detach(weft_world *w, weft_task task);
/* The sync point (weft_tasks_tick; the app calls it after each update). */
weft_status wf_tasks_tick(weft_world *w);
weft_status wf_tasks_set_threads(weft_world *w, uint32_t pool, int32_t threads);
int32_t wf_tasks_threads(const weft_world *w, uint32_t pool);
int32_t wf_tasks_count(const weft_world *w);
/* For weft_task_cancelled / weft_task_fail (ctx checked by the caller). */
bool wf_task_ctx_cancelled(const weft_task_ctx *ctx);
weft_status wf_task_ctx_fail(weft_task_ctx *ctx, weft_status status, const char *message);
/* Cancels and joins every task and frees the set (world destruction,
 * before anything a task's apply step could use is torn down). */
void wf_tasks_fini(weft_world *w);

#endif

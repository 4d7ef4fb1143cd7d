/* src/core/guard.h - the callback guard: every user callback runs inside it.
 * SPDX-License-Identifier: MIT
 *
 * A user callback (hook, observer, system, condition, custom command, drop,
 * allocator, logger, OS hook, plugin, runner, extract function, state
 * compute, local init/fini, free_user, module entry, job-system submit and
 * help) is called through WF_CALLBACK, which pushes a frame naming what it
 * belongs to on a per-thread chain for the duration of the call. Calls that
 * must not run under a callback of a world (destroying it, destroying its
 * app, re-entering an update) ask wf_guard_inside, so one check covers
 * every callback kind; adding a callback means calling it through
 * WF_CALLBACK, nothing more.
 *
 * The owner is any address inside the world's struct (the world itself,
 * its allocator, its registry), or WF_GUARD_ANY for callbacks that are not
 * tied to one world (the process-wide OS hooks, component type hooks),
 * which then count as inside every world. The chain lives on the C stack
 * of the callers: pushing costs two stores of thread-local memory, nothing
 * is allocated, and a callback on a worker thread shows up on that
 * thread's chain only.
 */
#ifndef WF_GUARD_H
#define WF_GUARD_H

#include <stdbool.h>
#include <stddef.h>

typedef struct wf_guard_frame {
    const void *owner;
    struct wf_guard_frame *prev;
} wf_guard_frame;

#define WF_GUARD_ANY ((const void *)1)

extern _Thread_local wf_guard_frame *wf_guard_top;

static inline void wf_guard_push(wf_guard_frame *f, const void *owner)
{
    f->owner = owner;
    f->prev = wf_guard_top;
    wf_guard_top = f;
}

static inline void wf_guard_pop(wf_guard_frame *f)
{
    wf_guard_top = f->prev;
}

/* Runs the statement `call` (a user callback invocation, with or without
 * an assignment of its result) inside a guard frame for `owner`. */
#define WF_CALLBACK(owner, call)                                                               \
    do {                                                                                       \
        wf_guard_frame wf_guard_f_;                                                            \
        wf_guard_push(&wf_guard_f_, (owner));                                                  \
        call;                                                                                  \
        wf_guard_pop(&wf_guard_f_);                                                            \
    } while (0)

/* True when the calling thread is inside a callback whose owner lies in
 * [base, base + size) or is WF_GUARD_ANY. */
bool wf_guard_inside(const void *base, size_t size);

#endif

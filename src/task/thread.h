/* src/task/thread.h - threads, mutexes, condition variables and a
 * semaphore for the rest of src/, on top of the OS layer.
 * SPDX-License-Identifier: MIT
 *
 * Typed wrappers over the process-wide OS table (core/os.h, weft.h
 * weft_os_api): every call here is one call through the table, so a host
 * that replaces the table sees every thread, lock and wait weft makes.
 * The counting semaphore is built on a mutex and a condition variable.
 * All objects are caller-owned and initialised in place; none allocates.
 * Every function may be called from any thread; a wf_thread is joined
 * exactly once, by one thread. (Pool membership lives in the pool:
 * task/thread_pool.c.)
 *
 * Single-threaded build (WEFT_THREADS=0): wf_thread_create always fails,
 * and mutexes, condition variables and semaphores are no-ops (there is no
 * other thread to exclude or wake); waiting on one that nobody could
 * signal is an internal error, asserted.
 */
#ifndef WF_THREAD_H
#define WF_THREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "core/os.h"

typedef void (*wf_thread_fn)(void *arg);

typedef struct wf_thread {
    weft_os_object os; /* the OS layer's thread, between create and join */
} wf_thread;

typedef struct wf_mutex {
    weft_os_object os;
} wf_mutex;

typedef struct wf_cond {
    weft_os_object os;
} wf_cond;

/* Counting semaphore: post adds a token, wait takes one, blocking while
 * there is none. Tokens are never lost and never duplicated. */
typedef struct wf_semaphore {
    wf_mutex lock;  /* guards count */
    wf_cond nonzero; /* signalled on every post */
    uint32_t count; /* tokens available; under lock */
} wf_semaphore;

/* Starts fn(arg) on a new thread. `t` must stay alive until joined. */
bool wf_thread_create(wf_thread *t, wf_thread_fn fn, void *arg);
/* Waits for the thread to return. */
void wf_thread_join(wf_thread *t);
/* Gives up the rest of the time slice (idle spinning). */
void wf_thread_yield(void);
/* A spin-wait hint to the CPU (x86 pause, ARM yield); no OS call. */
void wf_thread_pause(void);
/* Number of CPUs available, at least 1 (1 in the single-threaded build). */
uint32_t wf_thread_cpu_count(void);

bool wf_mutex_init(wf_mutex *m);
void wf_mutex_fini(wf_mutex *m);
void wf_mutex_lock(wf_mutex *m);
void wf_mutex_unlock(wf_mutex *m);

bool wf_cond_init(wf_cond *c);
void wf_cond_fini(wf_cond *c);
/* Atomically releases m and waits; m is held again on return. May wake
 * spuriously: callers loop on their predicate. */
void wf_cond_wait(wf_cond *c, wf_mutex *m);
void wf_cond_signal(wf_cond *c);
void wf_cond_broadcast(wf_cond *c);

bool wf_semaphore_init(wf_semaphore *s, uint32_t initial);
void wf_semaphore_fini(wf_semaphore *s);
/* Adds n tokens and wakes up to n waiters. */
void wf_semaphore_post(wf_semaphore *s, uint32_t n);
/* Takes one token, blocking until one is available. */
void wf_semaphore_wait(wf_semaphore *s);

#endif

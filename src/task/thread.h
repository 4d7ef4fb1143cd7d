/* src/task/thread.h - the one door to the OS threading API.
 * SPDX-License-Identifier: MIT
 *
 * Thin pthread wrappers: thread create/join, mutex, condition variable, a
 * counting semaphore built on mutex + condition variable, the worker index
 * in thread-local storage, and the online CPU count. Nothing else in src/
 * includes <pthread.h>, so another backend (Win32, a console SDK) replaces
 * this file and thread.c only. All objects are caller-owned and
 * initialized in place; none allocates. Every function may be called from
 * any thread; a wf_thread is joined exactly once, by one thread. The
 * worker-index TLS holds only an integer (never world state): -1 on threads
 * that are not pool workers.
 */
#ifndef WF_THREAD_H
#define WF_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef void (*wf_thread_fn)(void *arg);

typedef struct wf_thread {
    pthread_t handle; /* valid between a successful create and join */
    wf_thread_fn fn;  /* entry point; read once by the new thread */
    void *arg;        /* its argument */
} wf_thread;

typedef struct wf_mutex {
    pthread_mutex_t m;
} wf_mutex;

typedef struct wf_cond {
    pthread_cond_t c;
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
/* A spin-wait hint to the CPU (x86 pause, ARM yield); no syscall. */
void wf_thread_pause(void);
/* Number of CPUs currently online, at least 1. */
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

/* Worker index of the calling thread in the pool it belongs to, or -1.
 * Written only by the thread itself (pool start-up, pool create). */
int wf_thread_worker_index(void);
void wf_thread_set_worker_index(int index);

#endif

/* src/core/os_posix.c - the built-in OS table: POSIX threads and clocks.
 * SPDX-License-Identifier: MIT
 *
 * One of the two files of the core library that include platform headers
 * (the other is core/alloc.c, the default allocator hook); everything
 * else reaches the OS through core/os.h. Threads, mutexes and condition
 * variables are pthreads stored in place in a weft_os_object (the static
 * assertions below check that they fit); the clock is
 * clock_gettime(CLOCK_MONOTONIC). In the single-threaded build
 * (WEFT_THREADS=0) nothing of pthreads is referenced: the thread, mutex
 * and condition entries are NULL, so the library links without it.
 * Failures of lock/unlock/wait on a correctly initialised object are
 * programming errors and are asserted, not reported.
 */
#define _POSIX_C_SOURCE 200809L

#include "core/os.h"

#include <stdio.h>
#include <string.h>

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "core/check.h"

#if WEFT_THREADS
#include <pthread.h>

_Static_assert(sizeof(pthread_mutex_t) <= sizeof(weft_os_object) &&
                   _Alignof(pthread_mutex_t) <= _Alignof(weft_os_object),
               "pthread_mutex_t does not fit a weft_os_object");
_Static_assert(sizeof(pthread_cond_t) <= sizeof(weft_os_object) &&
                   _Alignof(pthread_cond_t) <= _Alignof(weft_os_object),
               "pthread_cond_t does not fit a weft_os_object");

/* A started thread: its handle and what it runs (read once by the new
 * thread, which is why they live in the object and not on a stack). */
typedef struct posix_thread {
    pthread_t handle;
    void (*fn)(void *arg);
    void *arg;
} posix_thread;
_Static_assert(sizeof(posix_thread) <= sizeof(weft_os_object) &&
                   _Alignof(posix_thread) <= _Alignof(weft_os_object),
               "posix_thread does not fit a weft_os_object");

static void *posix_trampoline(void *p)
{
    posix_thread *t = p;
    t->fn(t->arg);
    return NULL;
}

static bool posix_thread_create(weft_os_object *obj, void (*fn)(void *arg), void *arg,
                                void *user)
{
    (void)user;
    posix_thread *t = (posix_thread *)(void *)obj;
    t->fn = fn;
    t->arg = arg;
    return pthread_create(&t->handle, NULL, posix_trampoline, t) == 0;
}

static void posix_thread_join(weft_os_object *obj, void *user)
{
    (void)user;
    posix_thread *t = (posix_thread *)(void *)obj;
    int rc = pthread_join(t->handle, NULL);
    WF_ASSERT(rc == 0);
    (void)rc;
}

static pthread_mutex_t *posix_mutex(weft_os_object *obj)
{
    return (pthread_mutex_t *)(void *)obj;
}

static pthread_cond_t *posix_cond(weft_os_object *obj)
{
    return (pthread_cond_t *)(void *)obj;
}

static bool posix_mutex_init(weft_os_object *m, void *user)
{
    (void)user;
    return pthread_mutex_init(posix_mutex(m), NULL) == 0;
}

static void posix_mutex_fini(weft_os_object *m, void *user)
{
    (void)user;
    (void)pthread_mutex_destroy(posix_mutex(m));
}

static void posix_mutex_lock(weft_os_object *m, void *user)
{
    (void)user;
    int rc = pthread_mutex_lock(posix_mutex(m));
    WF_ASSERT(rc == 0);
    (void)rc;
}

static void posix_mutex_unlock(weft_os_object *m, void *user)
{
    (void)user;
    int rc = pthread_mutex_unlock(posix_mutex(m));
    WF_ASSERT(rc == 0);
    (void)rc;
}

static bool posix_cond_init(weft_os_object *c, void *user)
{
    (void)user;
    return pthread_cond_init(posix_cond(c), NULL) == 0;
}

static void posix_cond_fini(weft_os_object *c, void *user)
{
    (void)user;
    (void)pthread_cond_destroy(posix_cond(c));
}

static void posix_cond_wait(weft_os_object *c, weft_os_object *m, void *user)
{
    (void)user;
    int rc = pthread_cond_wait(posix_cond(c), posix_mutex(m));
    WF_ASSERT(rc == 0);
    (void)rc;
}

static void posix_cond_signal(weft_os_object *c, void *user)
{
    (void)user;
    (void)pthread_cond_signal(posix_cond(c));
}

static void posix_cond_broadcast(weft_os_object *c, void *user)
{
    (void)user;
    (void)pthread_cond_broadcast(posix_cond(c));
}
#endif /* WEFT_THREADS */

static void posix_yield(void *user)
{
    (void)user;
    (void)sched_yield();
}

static uint32_t posix_cpu_count(void *user)
{
    (void)user;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) {
        return 1;
    }
    if (n > 4096) {
        n = 4096;
    }
    return (uint32_t)n;
}

static uint64_t posix_now_ns(void *user)
{
    (void)user;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void posix_log(weft_log_level level, const char *message, void *user)
{
    (void)user;
    (void)level;
    fprintf(stderr, "weft: %s\n", message);
}

const weft_os_api wf_os_builtin = {
#if WEFT_THREADS
    .thread_create = posix_thread_create,
    .thread_join = posix_thread_join,
    .mutex_init = posix_mutex_init,
    .mutex_fini = posix_mutex_fini,
    .mutex_lock = posix_mutex_lock,
    .mutex_unlock = posix_mutex_unlock,
    .cond_init = posix_cond_init,
    .cond_fini = posix_cond_fini,
    .cond_wait = posix_cond_wait,
    .cond_signal = posix_cond_signal,
    .cond_broadcast = posix_cond_broadcast,
#endif
    .thread_yield = posix_yield,
    .cpu_count = posix_cpu_count,
    .now_ns = posix_now_ns,
    .log = posix_log,
};

/* src/task/thread.c - pthread backend of task/thread.h.
 * SPDX-License-Identifier: MIT
 *
 * The semaphore is a mutex, a condition variable and a count rather than
 * POSIX sem_t, which macOS does not implement for unnamed semaphores; the
 * count is only touched under the mutex, so posts and waits are linearized
 * and a post can never be lost between a waiter's check and its sleep.
 * Failures of lock/unlock/wait on a correctly initialized object are
 * programming errors and are asserted, not reported.
 */
#define _POSIX_C_SOURCE 200809L

#include "task/thread.h"

#include <sched.h>
#include <unistd.h>

#include "core/check.h"

/* Plain int TLS: the worker index, never world state (a backend without
 * _Thread_local can keep an int per thread; see thread.h). */
static _Thread_local int thread_worker_index = -1;

/* ---- threads ---- */

static void *thread_trampoline(void *p)
{
    wf_thread *t = p;
    t->fn(t->arg);
    return NULL;
}

bool wf_thread_create(wf_thread *t, wf_thread_fn fn, void *arg)
{
    t->fn = fn;
    t->arg = arg;
    return pthread_create(&t->handle, NULL, thread_trampoline, t) == 0;
}

void wf_thread_join(wf_thread *t)
{
    int rc = pthread_join(t->handle, NULL);
    WF_ASSERT(rc == 0);
    (void)rc;
}

void wf_thread_yield(void)
{
    (void)sched_yield();
}

void wf_thread_pause(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif defined(__GNUC__) && defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

uint32_t wf_thread_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) {
        return 1;
    }
    if (n > 4096) {
        n = 4096;
    }
    return (uint32_t)n;
}

int wf_thread_worker_index(void)
{
    return thread_worker_index;
}

void wf_thread_set_worker_index(int index)
{
    thread_worker_index = index;
}

/* ---- mutex and condition variable ---- */

bool wf_mutex_init(wf_mutex *m)
{
    return pthread_mutex_init(&m->m, NULL) == 0;
}

void wf_mutex_fini(wf_mutex *m)
{
    (void)pthread_mutex_destroy(&m->m);
}

void wf_mutex_lock(wf_mutex *m)
{
    int rc = pthread_mutex_lock(&m->m);
    WF_ASSERT(rc == 0);
    (void)rc;
}

void wf_mutex_unlock(wf_mutex *m)
{
    int rc = pthread_mutex_unlock(&m->m);
    WF_ASSERT(rc == 0);
    (void)rc;
}

bool wf_cond_init(wf_cond *c)
{
    return pthread_cond_init(&c->c, NULL) == 0;
}

void wf_cond_fini(wf_cond *c)
{
    (void)pthread_cond_destroy(&c->c);
}

void wf_cond_wait(wf_cond *c, wf_mutex *m)
{
    int rc = pthread_cond_wait(&c->c, &m->m);
    WF_ASSERT(rc == 0);
    (void)rc;
}

void wf_cond_signal(wf_cond *c)
{
    (void)pthread_cond_signal(&c->c);
}

void wf_cond_broadcast(wf_cond *c)
{
    (void)pthread_cond_broadcast(&c->c);
}

/* ---- counting semaphore ---- */

bool wf_semaphore_init(wf_semaphore *s, uint32_t initial)
{
    if (!wf_mutex_init(&s->lock)) {
        return false;
    }
    if (!wf_cond_init(&s->nonzero)) {
        wf_mutex_fini(&s->lock);
        return false;
    }
    s->count = initial;
    return true;
}

void wf_semaphore_fini(wf_semaphore *s)
{
    wf_cond_fini(&s->nonzero);
    wf_mutex_fini(&s->lock);
}

void wf_semaphore_post(wf_semaphore *s, uint32_t n)
{
    wf_mutex_lock(&s->lock);
    s->count += n;
    wf_mutex_unlock(&s->lock);
    /* Signalling after unlock avoids waking a waiter straight into a held
     * mutex; the token is already published under the lock. */
    if (n == 1) {
        wf_cond_signal(&s->nonzero);
    } else if (n > 1) {
        wf_cond_broadcast(&s->nonzero);
    }
}

void wf_semaphore_wait(wf_semaphore *s)
{
    wf_mutex_lock(&s->lock);
    while (s->count == 0) {
        wf_cond_wait(&s->nonzero, &s->lock);
    }
    s->count--;
    wf_mutex_unlock(&s->lock);
}

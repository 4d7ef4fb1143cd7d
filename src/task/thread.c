/* src/task/thread.c - task/thread.h over the OS table (core/os.h).
 * SPDX-License-Identifier: MIT
 *
 * The semaphore is a mutex, a condition variable and a count rather than
 * an OS semaphore (macOS has no unnamed POSIX semaphores, and the table
 * stays small); the count is only touched under the mutex, so posts and
 * waits are linearized and a post can never be lost between a waiter's
 * check and its sleep. In the single-threaded build (WEFT_THREADS=0) no
 * entry of the table's thread half is ever called.
 */
#include "task/thread.h"
#include "core/guard.h"

#include "core/check.h"

/* ---- threads ---- */

#if WEFT_THREADS

bool wf_thread_create(wf_thread *t, wf_thread_fn fn, void *arg)
{
    const weft_os_api *os = wf_os();
    bool ok;
    WF_CALLBACK(WF_GUARD_ANY, ok = os->thread_create(&t->os, fn, arg, os->user));
    return ok;
}

void wf_thread_join(wf_thread *t)
{
    const weft_os_api *os = wf_os();
    WF_CALLBACK(WF_GUARD_ANY, os->thread_join(&t->os, os->user));
}

uint32_t wf_thread_cpu_count(void)
{
    const weft_os_api *os = wf_os();
    uint32_t n;
    WF_CALLBACK(WF_GUARD_ANY, n = os->cpu_count(os->user));
    return n ? n : 1;
}

bool wf_mutex_init(wf_mutex *m)
{
    const weft_os_api *os = wf_os();
    bool ok;
    WF_CALLBACK(WF_GUARD_ANY, ok = os->mutex_init(&m->os, os->user));
    return ok;
}

void wf_mutex_fini(wf_mutex *m)
{
    const weft_os_api *os = wf_os();
    WF_CALLBACK(WF_GUARD_ANY, os->mutex_fini(&m->os, os->user));
}

void wf_mutex_lock(wf_mutex *m)
{
    const weft_os_api *os = wf_os();
    WF_CALLBACK(WF_GUARD_ANY, os->mutex_lock(&m->os, os->user));
}

void wf_mutex_unlock(wf_mutex *m)
{
    const weft_os_api *os = wf_os();
    WF_CALLBACK(WF_GUARD_ANY, os->mutex_unlock(&m->os, os->user));
}

bool wf_cond_init(wf_cond *c)
{
    const weft_os_api *os = wf_os();
    bool ok;
    WF_CALLBACK(WF_GUARD_ANY, ok = os->cond_init(&c->os, os->user));
    return ok;
}

void wf_cond_fini(wf_cond *c)
{
    const weft_os_api *os = wf_os();
    WF_CALLBACK(WF_GUARD_ANY, os->cond_fini(&c->os, os->user));
}

void wf_cond_wait(wf_cond *c, wf_mutex *m)
{
    const weft_os_api *os = wf_os();
    WF_CALLBACK(WF_GUARD_ANY, os->cond_wait(&c->os, &m->os, os->user));
}

void wf_cond_signal(wf_cond *c)
{
    const weft_os_api *os = wf_os();
    WF_CALLBACK(WF_GUARD_ANY, os->cond_signal(&c->os, os->user));
}

void wf_cond_broadcast(wf_cond *c)
{
    const weft_os_api *os = wf_os();
    WF_CALLBACK(WF_GUARD_ANY, os->cond_broadcast(&c->os, os->user));
}

#else /* single-threaded: nothing to start, exclude or wake */

bool wf_thread_create(wf_thread *t, wf_thread_fn fn, void *arg)
{
    (void)t;
    (void)fn;
    (void)arg;
    return false;
}

void wf_thread_join(wf_thread *t)
{
    (void)t;
    WF_ASSERT(!"no thread was started in the single-threaded build");
}

uint32_t wf_thread_cpu_count(void)
{
    return 1;
}

bool wf_mutex_init(wf_mutex *m)
{
    (void)m;
    return true;
}

void wf_mutex_fini(wf_mutex *m)
{
    (void)m;
}

void wf_mutex_lock(wf_mutex *m)
{
    (void)m;
}

void wf_mutex_unlock(wf_mutex *m)
{
    (void)m;
}

bool wf_cond_init(wf_cond *c)
{
    (void)c;
    return true;
}

void wf_cond_fini(wf_cond *c)
{
    (void)c;
}

void wf_cond_wait(wf_cond *c, wf_mutex *m)
{
    (void)c;
    (void)m;
    /* No other thread could ever signal it: the caller would hang. */
    WF_ASSERT(!"wf_cond_wait in the single-threaded build");
}

void wf_cond_signal(wf_cond *c)
{
    (void)c;
}

void wf_cond_broadcast(wf_cond *c)
{
    (void)c;
}

#endif /* WEFT_THREADS */

void wf_thread_yield(void)
{
    wf_os_yield();
}

void wf_thread_pause(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif defined(__GNUC__) && defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
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

/* src/core/os.c - the process-wide OS table: installing, checking, calling.
 * SPDX-License-Identifier: MIT
 *
 * The table starts out as the built-in one (core/os_posix.c, a constant).
 * weft_set_os_api copies the host's table in after checking
 * that every required entry is set, and only while no world exists; the
 * live-world count is a relaxed atomic because that rule, not the count's
 * ordering, is what keeps readers away (weft.h: not concurrently with
 * weft_world_create).
 */
#include "core/os.h"
#include "core/guard.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/atomic.h"
#include "core/check.h"

static weft_os_api os_host;                       /* the host's copy */
static const weft_os_api *os_current = &wf_os_builtin; /* checked, complete */
static wf_atomic_i64 os_worlds;

const weft_os_api *wf_os(void)
{
    return os_current;
}

uint64_t wf_os_now_ns(void)
{
    const weft_os_api *os = wf_os();
    uint64_t t;
    WF_CALLBACK(WF_GUARD_ANY, t = os->now_ns(os->user));
    return t;
}

void wf_os_yield(void)
{
    const weft_os_api *os = wf_os();
    WF_CALLBACK(WF_GUARD_ANY, os->thread_yield(os->user));
}

void wf_os_log(weft_log_level level, const char *message)
{
    const weft_os_api *os = wf_os();
    if (os->log) {
        WF_CALLBACK(WF_GUARD_ANY, os->log(level, message, os->user));
    }
}

void wf_os_world_created(void)
{
    /* Relaxed: a count, read by weft_set_os_api; pairs with nothing. */
    wf_atomic_fetch_add_relaxed_i64(&os_worlds, 1);
}

void wf_os_world_destroyed(void)
{
    /* Relaxed: as in wf_os_world_created. */
    wf_atomic_fetch_sub_relaxed_i64(&os_worlds, 1);
}

/* The name of the first required entry that is NULL, or NULL. */
static const char *os_missing(const weft_os_api *api)
{
#define OS_NEED(f)                                                                                 \
    do {                                                                                           \
        if (!api->f) {                                                                             \
            return #f;                                                                             \
        }                                                                                          \
    } while (0)
#if WEFT_THREADS
    OS_NEED(thread_create);
    OS_NEED(thread_join);
    OS_NEED(mutex_init);
    OS_NEED(mutex_fini);
    OS_NEED(mutex_lock);
    OS_NEED(mutex_unlock);
    OS_NEED(cond_init);
    OS_NEED(cond_fini);
    OS_NEED(cond_wait);
    OS_NEED(cond_signal);
    OS_NEED(cond_broadcast);
#endif
    OS_NEED(thread_yield);
    OS_NEED(cpu_count);
    OS_NEED(now_ns);
#undef OS_NEED
    return NULL;
}

weft_status wf_os_set(const weft_os_api *api, char *msg, size_t cap)
{
    /* Relaxed: see wf_os_world_created. */
    int64_t live = wf_atomic_load_relaxed_i64(&os_worlds);
    if (live > 0) {
        snprintf(msg, cap,
                 "weft_set_os_api: %lld world(s) exist; the OS layer can be replaced only "
                 "while no world exists",
                 (long long)live);
        return WEFT_ERR_WRONG_PHASE;
    }
    if (!api) {
        os_current = &wf_os_builtin;
        return WEFT_OK;
    }
    if (api->_start_canary || api->_end_canary) {
        snprintf(msg, cap, "weft_set_os_api: a canary is set (zero-initialise weft_os_api)");
        return WEFT_ERR_INVALID_ARG;
    }
    const char *missing = os_missing(api);
    if (missing) {
        snprintf(msg, cap, "weft_set_os_api: the table has no %s (every entry but log is "
                 "required%s)", missing, WEFT_THREADS ? "" : "; this build has no threads, so "
                 "the thread, mutex and condition entries may be NULL");
        return WEFT_ERR_INVALID_ARG;
    }
    os_host = *api;
    os_current = &os_host;
    return WEFT_OK;
}

_Noreturn void wf_assert_fail(const char *cond, const char *file, int line)
{
    char msg[512];
    snprintf(msg, sizeof msg, "assertion failed: %s (%s:%d)", cond, file, line);
    wf_os_log(WEFT_LOG_ERROR, msg);
    abort();
}

/* src/core/os.h - the OS layer: one process-wide table of thread, lock,
 * clock and log functions.
 * SPDX-License-Identifier: MIT
 *
 * Every call weft makes into the operating system for threads, mutexes,
 * condition variables, the monotonic clock, yielding and last-resort
 * logging goes through the weft_os_api table held here (weft.h documents
 * the entries). The built-in table lives in core/os_posix.c, the only
 * file of the core library besides core/alloc.c (the default allocator
 * hook) that includes a platform header; src/module/module.c (reloadable
 * modules, dlopen + inotify) is the one documented POSIX-only module.
 * task/thread.h wraps the table in typed objects for the rest of src/.
 *
 * The table may be replaced only while no world exists: worlds embed OS
 * objects initialised by the table's functions, so a table must outlive
 * every object it made. The live-world count is kept here for that check.
 * The worker index is C11 _Thread_local storage (task/thread_pool.c), not
 * an OS call: every toolchain weft targets provides it for any thread the
 * host's thread_create starts.
 *
 * Threads: wf_os() may be read from any thread; the table is written only
 * by weft_set_os_api while no world exists (no reader can be running).
 */
#ifndef WF_OS_H
#define WF_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft.h"

/* WEFT_THREADS: 1 (default) with threads, 0 for the single-threaded build
 * (CMake -DWEFT_THREADS=OFF), where nothing starts a thread or takes a
 * lock and the thread entries of the table are never called. */
#ifndef WEFT_THREADS
#define WEFT_THREADS 1
#endif

/* The current table (never NULL; every required entry set). */
const weft_os_api *wf_os(void);

/* The built-in table (core/os_posix.c). */
extern const weft_os_api wf_os_builtin;

/* A monotonic clock in nanoseconds, through the table. */
uint64_t wf_os_now_ns(void);

/* Gives up the rest of the time slice, through the table. */
void wf_os_yield(void);

/* A line for the table's log (dropped when it has none). */
void wf_os_log(weft_log_level level, const char *message);

/* Installs api (NULL: the built-in table) unless a world exists or a
 * required entry is missing; on failure the table is unchanged and msg
 * (cap bytes) says why. */
weft_status wf_os_set(const weft_os_api *api, char *msg, size_t cap);

/* Counts live worlds: weft_set_os_api is refused while any exists. */
void wf_os_world_created(void);
void wf_os_world_destroyed(void);

#endif

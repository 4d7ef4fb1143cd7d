/* src/core/check.h - assertions and small checked helpers.
 * SPDX-License-Identifier: MIT
 *
 * WF_ASSERT guards internal invariants: it aborts in debug builds and
 * compiles away under NDEBUG. Misuse by the caller is never asserted: the
 * API layer turns it into a weft_status (see world/world.h wf_error).
 */
#ifndef WF_CHECK_H
#define WF_CHECK_H

#include <stdio.h>
#include <stdlib.h>


#ifdef NDEBUG
#  define WF_ASSERT(cond) ((void)0)
#else
#  define WF_ASSERT(cond) ((cond) ? (void)0 : wf_assert_fail(#cond, __FILE__, __LINE__))
#endif

/* Reports a failed assertion through the OS layer's log (core/os.h) and
 * aborts (core/os.c). */
_Noreturn void wf_assert_fail(const char *cond, const char *file, int line);

#if defined(__GNUC__)
#  define WF_FALLTHROUGH __attribute__((fallthrough))
#else
#  define WF_FALLTHROUGH ((void)0)
#endif

#if defined(__GNUC__)
#  define WF_LIKELY(x) __builtin_expect(!!(x), 1)
#  define WF_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#  define WF_LIKELY(x) (x)
#  define WF_UNLIKELY(x) (x)
#endif

#endif

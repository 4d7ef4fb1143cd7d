/* src/core/guard.c - the callback guard's per-thread chain (guard.h).
 * SPDX-License-Identifier: MIT
 */
#include "core/guard.h"

#include <stdint.h>

_Thread_local wf_guard_frame *wf_guard_top;

bool wf_guard_inside(const void *base, size_t size)
{
    uintptr_t lo = (uintptr_t)base;
    for (const wf_guard_frame *f = wf_guard_top; f; f = f->prev) {
        uintptr_t o = (uintptr_t)f->owner;
        if (f->owner == WF_GUARD_ANY || (o >= lo && o - lo < size)) {
            return true;
        }
    }
    return false;
}

/* src/core/ds.h - stb_ds for driver-thread scratch bookkeeping.
 * SPDX-License-Identifier: MIT
 *
 * stb_ds always passes a NULL context, so its memory cannot go through a
 * world's allocator hook; it goes through a process-global allocator
 * instead (weft's default: malloc). Use it only for temporary, driver-thread
 * bookkeeping that is freed before the public call returns (for example the
 * scratch arrays of weft_world_check), never for world storage, and never
 * hold a pointer into an stb_ds array across a push.
 */
#ifndef WF_DS_H
#define WF_DS_H

#include <stddef.h>

void *wf_ds_realloc(void *ptr, size_t size);
void wf_ds_free(void *ptr);

#define STBDS_NO_SHORT_NAMES
#define STBDS_REALLOC(ctx, ptr, size) wf_ds_realloc((ptr), (size))
#define STBDS_FREE(ctx, ptr) wf_ds_free(ptr)
#if defined(__GNUC__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wconversion"
#  pragma GCC diagnostic ignored "-Wsign-conversion"
#  pragma GCC diagnostic ignored "-Wcast-align"
#  pragma GCC diagnostic ignored "-Wmissing-prototypes"
#endif
#include <stb/stb_ds.h>
#if defined(__GNUC__)
#  pragma GCC diagnostic pop
#endif

#endif

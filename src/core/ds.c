/* src/core/ds.c - the only STB_DS_IMPLEMENTATION unit, plus its allocator.
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>

#define STB_DS_IMPLEMENTATION
#include "core/ds.h"

void *wf_ds_realloc(void *ptr, size_t size)
{
    return realloc(ptr, size);
}

void wf_ds_free(void *ptr)
{
    free(ptr);
}

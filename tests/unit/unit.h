// tests/unit/unit.h - shared includes for the white-box unit tests.
// SPDX-License-Identifier: MIT
#ifndef WEFT_UNIT_H
#define WEFT_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

// A registry entry built by hand for storage-level tests.
static inline void unit_type(wf_type_info *ti, weft_component id, uint32_t size,
                             uint32_t align, weft_storage storage)
{
    memset(ti, 0, sizeof *ti);
    ti->id = id;
    ti->size = size;
    ti->align = align;
    ti->storage = storage;
    ti->has_ticks = true;
    ti->trivial = true;
    ti->name = (char *)"unit";
}

#endif

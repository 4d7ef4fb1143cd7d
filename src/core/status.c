/* src/core/status.c - the table behind weft_status_name / weft_status_str.
 * SPDX-License-Identifier: MIT
 *
 * One row per status, indexed by value. docs/errors.md is generated from
 * this table (tests/unit/test_status.c checks every value has a row).
 */
#include "core/status.h"

typedef struct status_row {
    const char *name;
    const char *message;
} status_row;

static const status_row status_table[WEFT_STATUS_NUM] = {
    [WEFT_OK] = {"WEFT_OK", "success"},
    [WEFT_ERR_INVALID_ARG] = {"WEFT_ERR_INVALID_ARG",
        "an argument is invalid (NULL pointer, negative count, bad flag)"},
    [WEFT_ERR_INVALID_HANDLE] = {"WEFT_ERR_INVALID_HANDLE",
        "the world handle is NULL or not a live world"},
    [WEFT_ERR_STALE_ENTITY] = {"WEFT_ERR_STALE_ENTITY",
        "the entity was despawned or is not live yet"},
    [WEFT_ERR_SIZE_MISMATCH] = {"WEFT_ERR_SIZE_MISMATCH",
        "the size passed differs from the component's registered size"},
    [WEFT_ERR_OUT_OF_MEMORY] = {"WEFT_ERR_OUT_OF_MEMORY",
        "the allocator returned no memory; the world is unchanged"},
    [WEFT_ERR_CAPACITY] = {"WEFT_ERR_CAPACITY",
        "a fixed limit of weft was reached"},
    [WEFT_ERR_ALREADY_EXISTS] = {"WEFT_ERR_ALREADY_EXISTS",
        "something with this name or key already exists"},
    [WEFT_ERR_NOT_FOUND] = {"WEFT_ERR_NOT_FOUND",
        "the requested item does not exist"},
    [WEFT_ERR_WRONG_THREAD] = {"WEFT_ERR_WRONG_THREAD",
        "called from a thread that may not make this call"},
    [WEFT_ERR_WRONG_PHASE] = {"WEFT_ERR_WRONG_PHASE",
        "not allowed in the world's current phase"},
    [WEFT_ERR_ACCESS_VIOLATION] = {"WEFT_ERR_ACCESS_VIOLATION",
        "accessed a component or resource that was not declared"},
    [WEFT_ERR_SCHEDULE_CYCLE] = {"WEFT_ERR_SCHEDULE_CYCLE",
        "the ordering constraints form a cycle"},
    [WEFT_ERR_POISONED] = {"WEFT_ERR_POISONED",
        "an earlier fatal failure left the world unusable; destroy it"},
    [WEFT_ERR_INTERNAL] = {"WEFT_ERR_INTERNAL",
        "internal error in weft (please report it)"},
    [WEFT_ERR_INVALID_ENTITY] = {"WEFT_ERR_INVALID_ENTITY",
        "the entity handle is 0 or its index was never allocated"},
    [WEFT_ERR_UNKNOWN_COMPONENT] = {"WEFT_ERR_UNKNOWN_COMPONENT",
        "the component id is not registered in this world"},
    [WEFT_ERR_IMMUTABLE] = {"WEFT_ERR_IMMUTABLE",
        "mutable access to an immutable component"},
    [WEFT_ERR_BAD_ALIGNMENT] = {"WEFT_ERR_BAD_ALIGNMENT",
        "alignment is not a power of two up to 4096, or size is not a "
        "multiple of it"},
    [WEFT_ERR_DUPLICATE_COMPONENT] = {"WEFT_ERR_DUPLICATE_COMPONENT",
        "the same component appears twice in one call"},
    [WEFT_ERR_CORRUPT] = {"WEFT_ERR_CORRUPT",
        "a storage invariant is broken"},
    [WEFT_ERR_NOT_UNIQUE] = {"WEFT_ERR_NOT_UNIQUE",
        "more than one match where exactly one was expected"},
    [WEFT_ERR_DEPTH_LIMIT] = {"WEFT_ERR_DEPTH_LIMIT",
        "hooks, observers or triggers nested or cascaded too deep"},
    [WEFT_ERR_RELATIONSHIP] = {"WEFT_ERR_RELATIONSHIP",
        "a relationship would point at itself or form a cycle"},
    [WEFT_ERR_CALLBACK] = {"WEFT_ERR_CALLBACK",
        "a user callback (system, condition, job) failed"},
    [WEFT_ERR_BAD_FORMAT] = {"WEFT_ERR_BAD_FORMAT",
        "input data is malformed, corrupt, truncated or of another version"},
    [WEFT_ERR_TYPE_MISMATCH] = {"WEFT_ERR_TYPE_MISMATCH",
        "the value's kind differs from the described field's"},
    [WEFT_ERR_UNSUPPORTED] = {"WEFT_ERR_UNSUPPORTED",
        "needs an optional part this build of weft was made without (e.g. zstd)"},
};

const char *wf_status_name(weft_status status)
{
    if ((unsigned)status >= (unsigned)WEFT_STATUS_NUM) {
        return NULL;
    }
    return status_table[status].name;
}

const char *wf_status_message(weft_status status)
{
    if ((unsigned)status >= (unsigned)WEFT_STATUS_NUM) {
        return NULL;
    }
    return status_table[status].message;
}

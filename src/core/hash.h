/* src/core/hash.h - xxHash, inlined so no XXH symbol is ever exported.
 * SPDX-License-Identifier: MIT
 *
 * Archetype and table keys hash with XXH3-64 over their sorted component
 * ids; the value is stable across platforms of the same endianness.
 */
#ifndef WF_HASH_H
#define WF_HASH_H

#include <stddef.h>
#include <stdint.h>

#define XXH_INLINE_ALL
#define XXH_STATIC_LINKING_ONLY
#if defined(__GNUC__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wconversion"
#  pragma GCC diagnostic ignored "-Wsign-conversion"
#  pragma GCC diagnostic ignored "-Wcast-align"
#  pragma GCC diagnostic ignored "-Wpedantic"
#endif
#include <xxhash.h>
#if defined(__GNUC__)
#  pragma GCC diagnostic pop
#endif

static inline uint64_t wf_hash_bytes(const void *data, size_t len)
{
    return XXH3_64bits(data, len);
}

static inline uint64_t wf_hash_ids(const uint32_t *ids, int32_t count)
{
    return XXH3_64bits(ids, (size_t)count * sizeof(uint32_t));
}

#endif

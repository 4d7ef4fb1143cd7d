/* src/reflect/snapshot_format.h - the binary layout of weft snapshots.
 * SPDX-License-Identifier: MIT
 *
 * Format (all integers in the writer's byte order, which the header's
 * byte-order mark lets a reader detect):
 *   header, 64 bytes: magic "WEFTSNAP", version, byte-order mark
 *   0x01020304, header size, flags (1 delta, 2 zstd, 4 patch), payload
 *   length, XXH3-64 checksum (over the header with this field zeroed, then
 *   the payload as stored), the delta's base tick, the plain payload length
 *   when the payload is compressed (else 0), then zeroes;
 *   payload: sections in a fixed order, each {u32 tag, u32 0, u64 length}
 *   followed by `length` bytes padded to 8:
 *     COMP  every registered component: id, size, align, storage, flags,
 *           relationship role, name (restore matches them by name)
 *     ENTS  entity index: count, free-stack length, retired count, the
 *           raw records {generation, archetype, row}, the free stack
 *     ARCH  every archetype's sorted component ids, in creation order
 *     TABL  every non-empty table: entities, then per column its values
 *           (relationship lists as counted entity arrays) and ticks
 *     SPRS  every non-empty sparse set: owners, values, ticks
 *     RESO  present resources: ticks and value
 *     MSGS  message streams (by name) and removal streams (by component)
 *     TICK  the change tick and the last tick-clamp tick
 *     QRYS  every query's last run with a signature of its terms
 *     SCHD  flags (WF_SNAP_SCHD_*) and the frame accumulator of the app
 *           driving the world; per schedule, per system: last run and
 *           message cursors; per condition its state
 * A delta (flag 1) has the same sections; its table, sparse and resource
 * sections hold only what changed since its base tick (snapshot_write.c),
 * and snapshot_merge.c folds it into its base.
 */
#ifndef WF_SNAPSHOT_FORMAT_H
#define WF_SNAPSHOT_FORMAT_H

/* The header: its size and the byte offset of each field. */
#define WF_SNAP_HEADER 64u
#define WF_SNAP_MAGIC "WEFTSNAP" /* the first 8 bytes (no NUL) */
#define WF_SNAP_OFF_VERSION 8u   /* u32 WEFT_SNAPSHOT_VERSION */
#define WF_SNAP_OFF_BOM 12u      /* u32 WF_SNAP_BOM */
#define WF_SNAP_OFF_HSIZE 16u    /* u32 WF_SNAP_HEADER */
#define WF_SNAP_OFF_FLAGS 20u    /* u32 WF_SNAP_FLAG_* */
#define WF_SNAP_OFF_PAYLOAD 24u  /* u64 payload bytes as stored */
#define WF_SNAP_OFF_CHECKSUM 32u /* u64 XXH3-64 */
#define WF_SNAP_OFF_SINCE 40u    /* u64 a delta's base tick */
#define WF_SNAP_OFF_PLAIN 48u    /* u64 plain payload bytes when compressed */

#define WF_SNAP_BOM 0x01020304u
#define WF_SNAP_FLAG_DELTA 1u
#define WF_SNAP_FLAG_ZSTD 2u
#define WF_SNAP_FLAG_PATCH 4u  /* a delta written from the change journal */
#define WF_SNAP_PATCH_WHOLE UINT32_MAX /* a patched column given whole */

/* Sections, in payload order. */
#define WF_SNAP_SECTIONS 10u
enum {
    WF_SNAP_SEC_COMP = 1,
    WF_SNAP_SEC_ENTS,
    WF_SNAP_SEC_ARCH,
    WF_SNAP_SEC_TABL,
    WF_SNAP_SEC_SPRS,
    WF_SNAP_SEC_RESO,
    WF_SNAP_SEC_MSGS,
    WF_SNAP_SEC_TICK,
    WF_SNAP_SEC_QRYS,
    WF_SNAP_SEC_SCHD
};

/* SCHD flags: the app driving the world ran its startup order. */
#define WF_SNAP_SCHD_APP_STARTED 1u

/* Relationship role of a component (COMP section). */
enum { WF_SNAP_ROLE_PLAIN = 0, WF_SNAP_ROLE_REL_SOURCE = 1, WF_SNAP_ROLE_REL_LIST = 2 };


/* The writer hashes and copies this many bytes at a time. */
#define WF_SNAP_CHUNK 65536u

#endif

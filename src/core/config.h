/* src/core/config.h - build switches and fixed limits.
 * SPDX-License-Identifier: MIT
 *
 * Every limit weft enforces lives here so a reader can see them together.
 * They are checked at the API boundary and reported as WEFT_ERR_CAPACITY.
 */
#ifndef WF_CONFIG_H
#define WF_CONFIG_H

#include <stddef.h>
#include <stdint.h>

/* Largest component alignment a descriptor may ask for. */
#define WF_MAX_ALIGN 4096u
/* Component ids are dense from 1; a table maps id -> column with int16. */
#define WF_MAX_COMPONENTS 32000u
/* Largest component size (a row of one column must fit in 32 bits). */
#define WF_MAX_COMPONENT_SIZE (1u << 24)
/* Entity indices 0 .. WF_MAX_ENTITIES-1; 0xFFFFFFFF is never an index. */
#define WF_MAX_ENTITIES 0xFFFFFFFEu
/* Rows per table (table rows are uint32 in entity records). */
#define WF_MAX_ROWS 0x7FFFFFFFu
/* Sparse-set pages hold this many entity slots (a power of two). */
#define WF_SPARSE_PAGE_BITS 12u
#define WF_SPARSE_PAGE_SIZE (1u << WF_SPARSE_PAGE_BITS)
/* Columns are aligned to at least this many bytes. */
#define WF_COLUMN_MIN_ALIGN 16u
/* Length of the error message kept in the world's error slot. */
#define WF_ERROR_LEN 1024
/* Most workers a pool will start, and a host job system may report (the
 * rest of a larger request is ignored). */
#define WF_POOL_MAX_WORKERS 256u
/* Outside threads that may work in a pool at once besides worker 0
 * (wf_thread_pool_attach): e.g. a second world's driver or a sub-app's
 * pipeline thread running a schedule on a pool it shares. */
#define WF_POOL_MAX_CALLERS 8u
/* Default bound on the decompressed payload of a snapshot or delta
 * (weft_snapshot_set_limit): a compressed blob that announces or produces
 * more is refused before or while decompressing. */
#define WF_SNAPSHOT_MAX_DEFAULT (256ull << 20)
/* Largest module file weft_module_load copies (a shared library bigger
 * than this is refused as BAD_FORMAT). */
#define WF_MODULE_MAX_BYTES (1ull << 30)
/* First output buffer of a streaming decompression; it doubles as the
 * output arrives, never beyond the announced size. */
#define WF_SNAPSHOT_INFLATE_FIRST (256u << 10)
/* Bytes of a name a snapshot reader accepts (component, message type,
 * schedule, system). */
#define WF_SNAP_MAX_NAME 4096u
/* Iterations of one query open at the same time, at most (nested loops
 * over the same query, or iterations abandoned without weft_iter_fini). */
#define WF_QUERY_MAX_OPEN 64
/* Largest custom command payload: keeps every record size far from
 * wrapping a uint32_t or a size_t sum. */
#define WF_CMD_PAYLOAD_MAX (1u << 30)
/* Entries the change journal of delta snapshots keeps before deltas fall
 * back to scanning every row (weft_snapshot_track). */
#define WF_JOURNAL_MAX (1u << 22)
/* Nesting limit of described structs (a description that refers to
 * itself ends here instead of recursing forever). */
#define WF_REFLECT_MAX_DEPTH 16u
/* Elements of one array field, and entity fields of one description. */
#define WF_REFLECT_MAX_COUNT (1u << 20)
/* Length of a field path, and of one field name. */
#define WF_REFLECT_MAX_PATH 256u
/* Fields of one type description, and named values of one enum field. */
#define WF_REFLECT_MAX_FIELDS 4096u
#define WF_REFLECT_MAX_ENUM_VALUES 65536u
/* Rows a par_each task takes at least when the system asks for no minimum
 * (weft_system_par_each's min_rows 0). */
#define WF_PAR_EACH_MIN_ROWS 1024u
/* Components one JSON entity object ({"components": {...}}) may carry. */
#define WF_JSON_MAX_COMPONENTS 256u
/* Largest input and largest result block of one task (weft_task_desc):
 * the two share one allocation, whose size must not wrap a size_t. */
#define WF_TASK_BLOCK_MAX ((size_t)1 << 30)
/* Most threads one task pool starts (weft_world_set_task_threads clamps
 * a larger request): tasks that span frames are few and long, and every
 * thread holds an OS thread's stack. */
#define WF_TASK_POOL_MAX_THREADS 64u

#endif

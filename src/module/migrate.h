/* src/module/migrate.h - layout migration of a component whose module
 * registered it again, across a reload, with another layout.
 * SPDX-License-Identifier: MIT
 *
 * A plan is computed from the two type descriptions (old and new) before
 * anything changes: fields are matched by name (recursively in nested
 * structs); a new field without an old one keeps the default value (the
 * new description's `defaults`, else zero); an old field without a new
 * one is dropped; a matched field is copied when its kind and size are
 * the same and converted when the conversion widens (wf_mig_widens);
 * anything else refuses the plan with a message naming the component and
 * the field path. Then every block the migration needs (each table column
 * and the sparse set of the component, the resource value) is allocated;
 * only when all of them exist does the commit convert the values, swap the
 * blocks and change the component's size and alignment (and the sizes
 * queries cached). Entities, rows, change ticks and relationships stay.
 *
 * Threads: the driver thread, at a safe point (no iteration, no schedule).
 */
#ifndef WF_MIGRATE_H
#define WF_MIGRATE_H

#include "internal.h"
#include "reflect/reflect.h"

/* One step of a row's conversion: a byte copy (kind NONE) or `count`
 * values converted from src_kind to dst_kind. */
typedef struct wf_mig_op {
    uint32_t src_off, dst_off;
    uint32_t count;     /* values (conversions) */
    uint32_t bytes;     /* copy: bytes */
    weft_kind src_kind, dst_kind;
} wf_mig_op;

/* One block the commit installs: a column's values or the resource. */
typedef struct wf_mig_block {
    struct wf_column *col;  /* NULL: the resource value */
    void *data;             /* the new block */
    uint32_t cap;           /* rows it holds */
    uint32_t rows;          /* live rows to convert */
} wf_mig_block;

typedef struct wf_mig_plan {
    weft_component id;
    uint32_t old_size, old_align, new_size, new_align;
    wf_mig_op *ops;
    uint32_t nops, cap_ops;
    const uint8_t *defaults;   /* new_size bytes, or NULL: zeroes (not owned) */
    wf_mig_block *blocks;
    uint32_t nblocks, cap_blocks;
    uint64_t rows;             /* values converted (tables, sparse, resource) */
} wf_mig_plan;

/* Can a value of kind `from` be converted to kind `to` without loss? */
bool wf_mig_widens(weft_kind from, weft_kind to);

/* Checks the migration of component `ti` from description `old` to `nw`
 * (new_size / new_align) and fills `p` (zeroed by the caller). On refusal
 * records the error (prefixed by `who`, naming the component and field)
 * and returns its status; `p` is then freed with wf_mig_free. */
weft_status wf_mig_plan_build(weft_world *w, const wf_type_info *ti, const wf_rdesc *old,
                              const wf_rdesc *nw, uint32_t new_size, uint32_t new_align,
                              const uint8_t *defaults, wf_mig_plan *p, const char *who);
/* Allocates every block the commit needs. OUT_OF_MEMORY (recorded), the
 * world unchanged. */
weft_status wf_mig_prepare(weft_world *w, wf_mig_plan *p, const char *who);
/* Converts every value into the new blocks, frees the old ones and sets
 * the new layout. Cannot fail. */
void wf_mig_commit(weft_world *w, wf_mig_plan *p);
/* Frees the plan and any block not committed. */
void wf_mig_free(weft_world *w, wf_mig_plan *p);

#endif

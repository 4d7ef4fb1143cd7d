/* src/world/inspect.h - canonical world hash and the invariant checker.
 * SPDX-License-Identifier: MIT
 */
#ifndef WF_INSPECT_H
#define WF_INSPECT_H

#include "world/world.h"

/* Canonical hash (see weft_world_hash). */
uint64_t wf_world_hash(const weft_world *w);
/* Verifies INV-1..INV-9; records WEFT_ERR_CORRUPT naming the first failure. */
weft_status wf_world_check(weft_world *w);

#endif

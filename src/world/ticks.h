/* src/world/ticks.h - the periodic change-tick clamp.
 * SPDX-License-Identifier: MIT
 */
#ifndef WF_TICKS_H
#define WF_TICKS_H

#include "world/world.h"

/* Moves *t up to now - WEFT_MAX_CHANGE_AGE when it is older than that.
 * True when it moved. */
static inline bool wf_tick_clamp(uint32_t *t, uint32_t now)
{
    if (now - *t > WEFT_MAX_CHANGE_AGE) {
        *t = now - WEFT_MAX_CHANGE_AGE;
        return true;
    }
    return false;
}

/* Clamps every stored tick older than WEFT_MAX_CHANGE_AGE; without force
 * only once WEFT_CHECK_TICK_THRESHOLD ticks passed since the last clamp.
 * Returns true when it ran. */
bool wf_world_clamp_ticks(weft_world *w, bool force);

#endif

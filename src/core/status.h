/* src/core/status.h - the weft_status name/message table.
 * SPDX-License-Identifier: MIT
 */
#ifndef WF_STATUS_H
#define WF_STATUS_H

#include "weft.h"

/* Static name ("WEFT_ERR_...") or NULL when out of range. */
const char *wf_status_name(weft_status status);
/* Static description or NULL when out of range. */
const char *wf_status_message(weft_status status);

#endif

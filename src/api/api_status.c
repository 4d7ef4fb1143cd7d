/* src/api/api_status.c - status names, messages, version, handle parts.
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

WEFT_API int32_t weft_abi_version(void)
{
    return WEFT_VERSION;
}

WEFT_API const char *weft_status_name(weft_status status)
{
    const char *name = wf_status_name(status);
    return name ? name : "WEFT_UNKNOWN";
}

WEFT_API const char *weft_status_str(weft_status status)
{
    const char *msg = wf_status_message(status);
    return msg ? msg : "unknown status";
}

WEFT_API uint32_t weft_entity_index(weft_entity e)
{
    return (uint32_t)e;
}

WEFT_API uint32_t weft_entity_generation(weft_entity e)
{
    return (uint32_t)(e >> 32);
}

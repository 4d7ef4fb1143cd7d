/* src/api/api_os.c - public entry points of the OS layer (core/os.h).
 * SPDX-License-Identifier: MIT
 *
 * There is no world to record a failure in: the message goes to the log
 * entry of the table that stays installed.
 */
#include "core/os.h"

WEFT_API void weft_os_api_defaults(weft_os_api *out)
{
    if (out) {
        *out = wf_os_builtin;
    }
}

WEFT_API weft_status weft_set_os_api(const weft_os_api *api)
{
    char msg[256];
    weft_status st = wf_os_set(api, msg, sizeof msg);
    if (st != WEFT_OK) {
        wf_os_log(WEFT_LOG_ERROR, msg);
    }
    return st;
}

/* src/reflect/jwrite.c - the measuring text writer (reflect/jwrite.h).
 * SPDX-License-Identifier: MIT
 */
#include "reflect/jwrite.h"

#include <stdarg.h>
#include <stdio.h>

void wf_jw_fmt(wf_jw *o, const char *fmt, ...)
{
    char tmp[96];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) {
        wf_jw_raw(o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
    }
}

void wf_jw_str(wf_jw *o, const char *s, size_t max)
{
    wf_jw_raw(o, "\"", 1);
    for (size_t i = 0; i < max && s[i]; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            char esc[2] = {'\\', (char)ch};
            wf_jw_raw(o, esc, 2);
        } else if (ch < 0x20) {
            wf_jw_fmt(o, "\\u%04x", ch);
        } else {
            wf_jw_raw(o, (const char *)&s[i], 1);
        }
    }
    wf_jw_raw(o, "\"", 1);
}

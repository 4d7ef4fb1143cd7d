/* src/reflect/jwrite.c - the measuring text writer (reflect/jwrite.h).
 * SPDX-License-Identifier: MIT
 */
#include "reflect/jwrite.h"

#include <stdarg.h>
#include <stdint.h>
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

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 when the
 * bytes there are not one (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07u;
    } else {
        return 0;
    }
    if (len > n) {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0u) != 0x80u) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if ((len == 3 && (cp < 0x800u || (cp >= 0xD800u && cp <= 0xDFFFu))) ||
        (len == 4 && (cp < 0x10000u || cp > 0x10FFFFu))) {
        return 0;
    }
    return len;
}

void wf_jw_str(wf_jw *o, const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n]) {
        n++;
    }
    const unsigned char *u = (const unsigned char *)s;
    wf_jw_raw(o, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char ch = u[i];
        if (ch == '"' || ch == '\\') {
            char esc[2] = {'\\', (char)ch};
            wf_jw_raw(o, esc, 2);
            i++;
        } else if (ch < 0x20) {
            wf_jw_fmt(o, "\\u%04x", ch);
            i++;
        } else {
            size_t k = utf8_len(u + i, n - i);
            if (k == 0) {
                o->bad = true;
                wf_jw_raw(o, "\xEF\xBF\xBD", 3); /* U+FFFD */
                i++;
            } else {
                wf_jw_raw(o, s + i, k);
                i += k;
            }
        }
    }
    wf_jw_raw(o, "\"", 1);
}

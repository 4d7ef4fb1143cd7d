/* src/reflect/jwrite.h - the measuring text writer of the JSON outputs.
 * SPDX-License-Identifier: MIT
 *
 * Every JSON text weft writes (values, entities and queries in json.c, type
 * descriptions in schema.c) is produced twice by the same code: once with
 * buf NULL to measure it, then into the caller's buffer. Writes past `cap`
 * are dropped but still counted, so `len` is always the full length and a
 * caller whose buffer was too small learns the size it needs.
 */
#ifndef WF_JWRITE_H
#define WF_JWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct wf_jw {
    char *buf;  /* NULL while measuring */
    size_t cap;
    size_t len; /* bytes written or that would have been */
    bool bad;   /* a string was not valid UTF-8 (U+FFFD was written instead) */
    const char *bad_field; /* the field the first bad string was in */
} wf_jw;

static inline void wf_jw_raw(wf_jw *o, const char *s, size_t n)
{
    if (o->buf && o->len + n <= o->cap) {
        memcpy(o->buf + o->len, s, n);
    }
    o->len += n;
}

static inline void wf_jw_lit(wf_jw *o, const char *s)
{
    wf_jw_raw(o, s, strlen(s));
}

/* printf-style text of at most 95 bytes (numbers, short escapes). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void wf_jw_fmt(wf_jw *o, const char *fmt, ...);

/* A JSON string from at most `max` bytes of s, stopping at NUL: quotes and
 * backslashes escaped, control characters as \u00XX. Only valid UTF-8 is
 * written: a byte sequence that is not (a stray continuation byte, an
 * overlong form, a surrogate, past U+10FFFF, cut short) sets o->bad and is
 * written as U+FFFD, so the text stays valid whatever the caller does with
 * the flag. */
void wf_jw_str(wf_jw *o, const char *s, size_t max);

#endif

/* src/reflect/snapshot_internal.h - what the snapshot files share.
 * SPDX-License-Identifier: MIT
 *
 * The snapshot code is four files over one format (snapshot_format.h):
 *   snapshot_write.c     full and delta snapshots of a world
 *   snapshot_validate.c  the header check, and every section of a blob
 *                        checked against itself and the target world
 *                        into the staging below
 *   snapshot_restore.c   reserve every allocation, then commit the
 *                        staging into the world
 *   snapshot_merge.c     a delta folded into its base
 * Here: the measuring writer (wf_sw), the bounds-checked reader (wf_sr),
 * the restore staging (wf_restore) and the functions one file gives
 * another.
 */
#ifndef WF_SNAPSHOT_INTERNAL_H
#define WF_SNAPSHOT_INTERNAL_H

#include "reflect/reflect.h"
#include "reflect/snapshot_format.h"

#include <string.h>

#include "core/hash.h"
#include "world/messages.h"

/* ---- writer ---- */

/* The writer runs its code twice, measuring (buf NULL) then writing, so
 * the caller supplies the buffer and nothing is allocated; the checksum is
 * computed while writing, WF_SNAP_CHUNK bytes at a time, so each piece is
 * hashed while cached. */
typedef struct wf_sw {
    uint8_t *buf;             /* NULL while measuring */
    size_t len;
    XXH3_state_t hs;
    uint64_t sec_len[WF_SNAP_SECTIONS]; /* measured section lengths */
    uint32_t nsec;
    size_t sec_start;
    bool delta;               /* write only what changed since `since` */
    bool all;                 /* delta: every row counts as changed */
    bool patch;               /* delta from the journal (no structural change) */
    uint32_t since;
    const wf_jentry *jl;      /* patch: the sorted journal */
    uint32_t jn;
} wf_sw;

static inline void wf_sw_put(wf_sw *o, const void *src, size_t n)
{
    if (o->buf) {
        const uint8_t *s = src;
        while (n) {
            size_t k = n < WF_SNAP_CHUNK ? n : WF_SNAP_CHUNK;
            memcpy(o->buf + o->len, s, k);
            XXH3_64bits_update(&o->hs, o->buf + o->len, k);
            o->len += k;
            s += k;
            n -= k;
        }
    } else {
        o->len += n;
    }
}

static inline void wf_sw_u32(wf_sw *o, uint32_t v)
{
    wf_sw_put(o, &v, 4);
}

static inline void wf_sw_u64(wf_sw *o, uint64_t v)
{
    wf_sw_put(o, &v, 8);
}

static inline void wf_sw_pad(wf_sw *o)
{
    static const uint8_t zero[8];
    size_t pad = (8 - (o->len & 7)) & 7;
    if (pad) {
        wf_sw_put(o, zero, pad);
    }
}

static inline void wf_sw_sec_begin(wf_sw *o, uint32_t tag)
{
    wf_sw_u32(o, tag);
    wf_sw_u32(o, 0);
    wf_sw_u64(o, o->buf ? o->sec_len[o->nsec] : 0);
    o->sec_start = o->len;
}

static inline void wf_sw_sec_end(wf_sw *o)
{
    wf_sw_pad(o);
    if (!o->buf) {
        o->sec_len[o->nsec] = o->len - o->sec_start;
    }
    o->nsec++;
}

/* ---- reader ---- */

typedef struct wf_sr {
    const uint8_t *p;
    size_t len;
    size_t pos;
} wf_sr;

static inline const uint8_t *wf_sr_take(wf_sr *r, size_t n)
{
    if (n > r->len - r->pos) {
        return NULL;
    }
    const uint8_t *p = r->p + r->pos;
    r->pos += n;
    return p;
}

static inline bool wf_sr_u32(wf_sr *r, uint32_t *v)
{
    const uint8_t *p = wf_sr_take(r, 4);
    if (p) {
        memcpy(v, p, 4);
    }
    return p != NULL;
}

static inline bool wf_sr_u64(wf_sr *r, uint64_t *v)
{
    const uint8_t *p = wf_sr_take(r, 8);
    if (p) {
        memcpy(v, p, 8);
    }
    return p != NULL;
}

static inline bool wf_sr_pad(wf_sr *r)
{
    size_t pad = (8 - (r->pos & 7)) & 7;
    return wf_sr_take(r, pad) != NULL;
}

/* Bytes of n elements of `size`, NULL when they do not fit. */
static inline const uint8_t *wf_sr_array(wf_sr *r, uint64_t n, uint64_t size)
{
    if (size && n > (r->len - r->pos) / size) {
        return NULL;
    }
    return wf_sr_take(r, (size_t)(n * size));
}

static inline bool wf_sr_str(wf_sr *r, const char **s, uint32_t *len)
{
    if (!wf_sr_u32(r, len) || *len > WF_SNAP_MAX_NAME) {
        return false;
    }
    *s = (const char *)wf_sr_take(r, *len);
    return *s != NULL && wf_sr_pad(r);
}

/* ---- restore staging (snapshot_validate.c fills it) ---- */

typedef struct wf_stage_comp {
    weft_component dst;       /* 0: not registered in the target */
    uint32_t size;
    uint32_t role;
    const char *name;
    uint32_t name_len;
} wf_stage_comp;

typedef struct wf_stage_col {
    const wf_type_info *ti;   /* target component */
    const uint8_t *vals;      /* values, or the first counted list */
    const uint8_t *ticks;     /* NULL without ticks */
} wf_stage_col;

typedef struct wf_stage_table {
    uint32_t rows;
    uint32_t ncols;
    const uint8_t *ents;      /* rows * 8 */
    wf_table *dst;            /* target table */
    uint32_t col0;            /* first column in wf_restore.cols */
} wf_stage_table;

typedef struct wf_stage_sparse {
    wf_type_info *ti;
    uint32_t count;
    const uint8_t *owners;
    const uint8_t *vals;
    const uint8_t *ticks;
} wf_stage_sparse;

typedef struct wf_stage_res {
    wf_type_info *ti;
    weft_ticks ticks;
    const uint8_t *val;
    void *block;              /* reserved value block */
} wf_stage_res;

typedef struct wf_stage_stream {
    wf_msg_stream *dst;
    uint64_t first;
    uint32_t na, nb;
    const uint8_t *a, *b;
    void *block_a, *block_b;  /* reserved */
    wf_type_info *track;      /* removed stream to turn on, or NULL */
} wf_stage_stream;

typedef struct wf_restore {
    weft_world *w;
    weft_status st;
    /* COMP */
    wf_stage_comp *comps;     /* [ncomps + 1] by saved id */
    uint32_t ncomps;
    /* ENTS */
    uint32_t count, free_len, retired;
    const uint8_t *records;   /* count * sizeof(wf_record) */
    const uint8_t *free_stack;
    uint8_t *state;           /* [count] 0 live-or-unknown, 1 free, 2 placed */
    int64_t live;
    /* ARCH */
    uint32_t narch;
    const uint8_t **arch_ids; /* [narch] saved id lists */
    uint32_t *arch_n;         /* [narch] */
    wf_archetype **arch_dst;  /* [narch] */
    uint32_t *arch_live;      /* [narch] live entities per saved archetype */
    weft_component *scratch;  /* [WF_MAX_COMPONENTS] sorted mapped ids */
    /* TABL, SPRS, RESO, MSGS */
    wf_stage_table *tables;
    uint32_t ntables;
    uint8_t *table_seen;      /* [ntable_seen] target table already used */
    uint32_t ntable_seen;
    wf_stage_col *cols;       /* [ncols capacity] columns of every table */
    uint32_t ncols;
    wf_stage_sparse *sparse;
    uint32_t nsparse;
    wf_stage_res *res;
    uint32_t nres;
    wf_stage_stream *streams;
    uint32_t nstreams;
    void **lists;             /* reserved relationship item arrays */
    uint32_t *list_cap;       /* their capacities */
    uint32_t nlists;
    /* TICK */
    uint32_t change_tick, last_check_tick;
    /* QRYS, SCHD */
    wf_sr queries;
    bool apply_queries;
    wf_sr scheds;
    bool apply_scheds;
    double acc;
    bool app_started;
} wf_restore;

static inline wf_record wf_snap_rec_at(const wf_restore *r, uint32_t idx)
{
    wf_record rec;
    memcpy(&rec, r->records + (size_t)idx * sizeof rec, sizeof rec);
    return rec;
}

/* ---- snapshot_write.c ---- */

/* The header of a payload (checksum field as given). */
void wf_snap_write_header(uint8_t *h, size_t payload, uint64_t checksum, uint32_t flags,
                          uint64_t since, uint64_t plain_len);
/* Signature of a query's terms, independent of component ids. */
uint64_t wf_snap_query_sig(const weft_world *w, const weft_query *q);
/* Systems and run conditions of a schedule. */
uint32_t wf_snap_count_sys_nodes(const weft_schedule *s);
uint32_t wf_snap_count_conds(const weft_schedule *s);

/* ---- snapshot_validate.c ---- */

/* Records the error (r->st and the world's message); returns false. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
bool wf_snap_bad(wf_restore *r, weft_status st, const char *fmt, ...);
#define WF_SNAP_TRUNC(r, what) \
    wf_snap_bad((r), WEFT_ERR_BAD_FORMAT, "truncated or inconsistent %s", (what))
/* Zeroed scratch memory of n * size bytes (NULL for n 0, or out of memory
 * with the error recorded), and its release. */
void *wf_snap_scratch(wf_restore *r, size_t n, size_t size);
void wf_snap_scratch_free(wf_restore *r, void *p, size_t n, size_t size);
/* The next section of `in`, which must carry `tag`. */
bool wf_snap_section(wf_restore *r, wf_sr *in, uint32_t tag, wf_sr *out);
/* Checks the header and the checksum over header and payload; *since is
 * the delta's base tick. want_flags: WF_SNAP_FLAG_DELTA or 0. */
weft_status wf_snap_check_header(weft_world *w, const uint8_t *b, size_t len, uint32_t want_flags,
                                 uint64_t *since);
/* The payload of a snapshot whose header wf_snap_check_header accepted: in
 * place, or decompressed into scratch memory (freed by
 * wf_snap_payload_close). */
typedef struct wf_snap_payload {
    const uint8_t *p;
    size_t n;
    uint8_t *owned;
} wf_snap_payload;
weft_status wf_snap_payload_open(weft_world *w, const uint8_t *b, size_t len, wf_snap_payload *out);
void wf_snap_payload_close(weft_world *w, wf_snap_payload *pl);
/* Every section of a payload checked and staged into r (r->w set). */
bool wf_snap_validate(wf_restore *r, const uint8_t *payload, size_t len);

#endif

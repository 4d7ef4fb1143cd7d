// tests/support/test_world.c - counting/failing allocator, recording logger,
// splitmix64 RNG, world fixture and tracked component for weft's tests.
// SPDX-License-Identifier: MIT
//
// The allocator keeps an open-addressing table (pointer -> size, align) so a
// free with a wrong size or alignment, a double free or a free of a foreign
// pointer is recorded as an error instead of crashing. Each block carries
// TW_GUARD guard bytes after the requested size, checked at free.
#define _POSIX_C_SOURCE 200809L
#include "test_world.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define TW_GUARD 16
#define TW_GUARD_BYTE 0xFD
#define TW_TOMBSTONE ((void *)(uintptr_t)1)

// ---- allocator ----

static void alloc_error(tw_alloc *a, const char *fmt, ...)
{
    a->errors++;
    if (a->errors == 1) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->first_error, sizeof a->first_error, fmt, ap);
        va_end(ap);
    }
}

static size_t ptr_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static void rec_insert_raw(tw_alloc_rec *recs, size_t cap, void *ptr, size_t size,
                           size_t align)
{
    size_t i = ptr_hash(ptr) & (cap - 1);
    while (recs[i].ptr != NULL && recs[i].ptr != TW_TOMBSTONE) {
        i = (i + 1) & (cap - 1);
    }
    recs[i].ptr = ptr;
    recs[i].size = size;
    recs[i].align = align;
}

static bool rec_grow(tw_alloc *a)
{
    size_t ncap = a->rec_cap ? a->rec_cap * 2 : 1024;
    // Only rehash if live entries dominate; otherwise same size drops tombstones.
    if (a->rec_cap && (size_t)a->live_blocks * 4 < a->rec_cap) {
        ncap = a->rec_cap;
    }
    tw_alloc_rec *n = calloc(ncap, sizeof *n);
    if (!n) {
        return false;
    }
    for (size_t i = 0; i < a->rec_cap; i++) {
        if (a->recs[i].ptr != NULL && a->recs[i].ptr != TW_TOMBSTONE) {
            rec_insert_raw(n, ncap, a->recs[i].ptr, a->recs[i].size, a->recs[i].align);
        }
    }
    free(a->recs);
    a->recs = n;
    a->rec_cap = ncap;
    a->rec_used = (size_t)a->live_blocks;
    return true;
}

static tw_alloc_rec *rec_find(tw_alloc *a, const void *ptr)
{
    if (a->rec_cap == 0) {
        return NULL;
    }
    size_t i = ptr_hash(ptr) & (a->rec_cap - 1);
    while (a->recs[i].ptr != NULL) {
        if (a->recs[i].ptr == ptr) {
            return &a->recs[i];
        }
        i = (i + 1) & (a->rec_cap - 1);
    }
    return NULL;
}

static void *tw_alloc_fn(size_t size, size_t align, void *user)
{
    tw_alloc *a = user;
    void *p = NULL;
    pthread_mutex_lock(&a->mu);
    a->total_allocs++;
    if (!a->paused) {
        a->since_arm++;
    }
    if (a->fail_at > 0 && !a->paused &&
        (a->since_arm == a->fail_at || (a->sticky && a->since_arm > a->fail_at))) {
        a->injected++;
        goto out;
    }
    if (align == 0 || (align & (align - 1)) != 0) {
        alloc_error(a, "alloc(%zu) with alignment %zu not a power of two", size, align);
        goto out;
    }
    if ((a->rec_used + 1) * 2 > a->rec_cap && !rec_grow(a)) {
        goto out;
    }
    size_t al = align < sizeof(void *) ? sizeof(void *) : align;
    if (posix_memalign(&p, al, size + TW_GUARD) != 0) {
        p = NULL;
        goto out;
    }
    memset((unsigned char *)p + size, TW_GUARD_BYTE, TW_GUARD);
    // Fill fresh memory with junk so reads of uninitialised bytes show up.
    memset(p, 0xA5, size);
    rec_insert_raw(a->recs, a->rec_cap, p, size, align);
    a->rec_used++;
    a->live_bytes += (int64_t)size;
    a->live_blocks++;
    if (a->live_bytes > a->peak_bytes) {
        a->peak_bytes = a->live_bytes;
    }
out:
    pthread_mutex_unlock(&a->mu);
    return p;
}

static void tw_free_fn(void *ptr, size_t size, size_t align, void *user)
{
    tw_alloc *a = user;
    if (ptr == NULL) {
        return;
    }
    pthread_mutex_lock(&a->mu);
    a->total_frees++;
    tw_alloc_rec *r = rec_find(a, ptr);
    if (r == NULL) {
        alloc_error(a, "free(%p, %zu, %zu): pointer not allocated (double free?)", ptr,
                    size, align);
        pthread_mutex_unlock(&a->mu);
        return;
    }
    if (r->size != size || r->align != align) {
        alloc_error(a, "free(%p): got size %zu align %zu, alloc had size %zu align %zu",
                    ptr, size, align, r->size, r->align);
    }
    unsigned char *g = (unsigned char *)ptr + r->size;
    for (size_t i = 0; i < TW_GUARD; i++) {
        if (g[i] != TW_GUARD_BYTE) {
            alloc_error(a, "free(%p): overrun past %zu bytes", ptr, r->size);
            break;
        }
    }
    a->live_bytes -= (int64_t)r->size;
    a->live_blocks--;
    r->ptr = TW_TOMBSTONE;
    pthread_mutex_unlock(&a->mu);
    free(ptr);
}

void tw_alloc_init(tw_alloc *a)
{
    memset(a, 0, sizeof *a);
    pthread_mutex_init(&a->mu, NULL);
}

void tw_alloc_fini(tw_alloc *a)
{
    for (size_t i = 0; i < a->rec_cap; i++) {
        if (a->recs[i].ptr != NULL && a->recs[i].ptr != TW_TOMBSTONE) {
            free(a->recs[i].ptr);
        }
    }
    free(a->recs);
    a->recs = NULL;
    a->rec_cap = 0;
    pthread_mutex_destroy(&a->mu);
}

weft_allocator tw_alloc_hook(tw_alloc *a)
{
    weft_allocator h;
    memset(&h, 0, sizeof h);
    h.alloc = tw_alloc_fn;
    h.free = tw_free_fn;
    h.user = a;
    return h;
}

void tw_alloc_fail_nth(tw_alloc *a, int64_t n, bool sticky)
{
    pthread_mutex_lock(&a->mu);
    a->fail_at = n;
    a->sticky = sticky;
    a->since_arm = 0;
    a->injected = 0;
    pthread_mutex_unlock(&a->mu);
}

void tw_alloc_disarm(tw_alloc *a)
{
    pthread_mutex_lock(&a->mu);
    a->fail_at = 0;
    a->sticky = false;
    pthread_mutex_unlock(&a->mu);
}

void tw_alloc_pause(tw_alloc *a, bool paused)
{
    pthread_mutex_lock(&a->mu);
    a->paused = paused;
    pthread_mutex_unlock(&a->mu);
}

#define TW_GETTER(name, field)                  \
    int64_t name(tw_alloc *a)                   \
    {                                           \
        pthread_mutex_lock(&a->mu);             \
        int64_t v = a->field;                   \
        pthread_mutex_unlock(&a->mu);           \
        return v;                               \
    }
TW_GETTER(tw_alloc_live_bytes, live_bytes)
TW_GETTER(tw_alloc_live_blocks, live_blocks)
TW_GETTER(tw_alloc_total_allocs, total_allocs)
TW_GETTER(tw_alloc_injected, injected)
TW_GETTER(tw_alloc_since_arm, since_arm)
TW_GETTER(tw_alloc_errors, errors)

// ---- logger ----

static void tw_log_fn(void *user, weft_log_level level, weft_status status,
                      const char *message, const char *file, int32_t line)
{
    tw_log *l = user;
    (void)line;
    l->count++;
    if (level == WEFT_LOG_ERROR) {
        l->error_count++;
    }
    l->last_status = status;
    l->last_level = level;
    l->last_had_file = file != NULL;
    snprintf(l->last_message, sizeof l->last_message, "%s", message ? message : "(null)");
}

void tw_log_init(tw_log *l)
{
    memset(l, 0, sizeof *l);
}

weft_logger tw_log_hook(tw_log *l)
{
    weft_logger h;
    memset(&h, 0, sizeof h);
    h.fn = tw_log_fn;
    h.user = l;
    return h;
}

// ---- rng ----

void tw_rng_seed(tw_rng *r, uint64_t seed)
{
    r->state = seed;
}

uint64_t tw_rng_next(tw_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t tw_rng_below(tw_rng *r, uint32_t n)
{
    return (uint32_t)(((tw_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

bool tw_rng_chance(tw_rng *r, uint32_t percent)
{
    return tw_rng_below(r, 100) < percent;
}

void tw_rng_bytes(tw_rng *r, void *dst, size_t n)
{
    unsigned char *d = dst;
    while (n > 0) {
        uint64_t x = tw_rng_next(r);
        size_t k = n < 8 ? n : 8;
        memcpy(d, &x, k);
        d += k;
        n -= k;
    }
}

uint64_t tw_seed_from_env(uint64_t dflt, bool *overridden)
{
    const char *s = getenv("WEFT_TEST_SEED");
    if (overridden) {
        *overridden = false;
    }
    if (s == NULL || *s == '\0') {
        return dflt;
    }
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 0);
    if (end == s) {
        return dflt;
    }
    if (overridden) {
        *overridden = true;
    }
    return (uint64_t)v;
}

// ---- fixture ----

weft_world_desc tw_fixture_desc(tw_fixture *f)
{
    weft_world_desc d;
    memset(&d, 0, sizeof d);
    d.allocator = tw_alloc_hook(&f->alloc);
    d.logger = tw_log_hook(&f->log);
    return d;
}

tw_fixture *tw_fixture_new(void)
{
    tw_fixture *f = calloc(1, sizeof *f);
    if (!f) {
        return NULL;
    }
    tw_alloc_init(&f->alloc);
    tw_log_init(&f->log);
    weft_world_desc d = tw_fixture_desc(f);
    f->w = weft_world_create(&d);
    return f;
}

void tw_fixture_free(tw_fixture *f)
{
    if (f == NULL) {
        return;
    }
    weft_world_destroy(f->w);
    f->w = NULL;
    int64_t live = tw_alloc_live_bytes(&f->alloc);
    int64_t blocks = tw_alloc_live_blocks(&f->alloc);
    int64_t errs = tw_alloc_errors(&f->alloc);
    char first[256];
    memcpy(first, f->alloc.first_error, sizeof first);
    tw_tracker tr = f->tracker;
    tw_alloc_fini(&f->alloc);
    free(f);
    if (errs != 0) {
        fail_msg("allocator saw %lld bad calls; first: %s", (long long)errs, first);
    }
    if (live != 0 || blocks != 0) {
        fail_msg("world destroy leaked %lld bytes in %lld blocks", (long long)live,
                 (long long)blocks);
    }
    if (tr.errors != 0) {
        fail_msg("tracked component hooks saw %lld errors; first: %s", (long long)tr.errors,
                 tr.first_error);
    }
    if (tw_tracker_live(&tr) != 0) {
        fail_msg("%lld tracked values not destroyed (ctor %lld copy %lld dtor %lld)",
                 (long long)tw_tracker_live(&tr), (long long)tr.ctors, (long long)tr.copies,
                 (long long)tr.dtors);
    }
}

int tw_setup(void **state)
{
    tw_fixture *f = tw_fixture_new();
    if (f == NULL || f->w == NULL) {
        return -1;
    }
    *state = f;
    return 0;
}

int tw_teardown(void **state)
{
    tw_fixture *f = *state;
    *state = NULL;
    tw_fixture_free(f);
    return 0;
}

// ---- helpers ----

weft_component tw_comp(weft_world *w, const char *name, size_t size, size_t align,
                       weft_storage storage, uint32_t flags)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    d.align = align;
    d.storage = storage;
    d.flags = flags;
    weft_component c = weft_component_register(w, &d);
    if (c == 0) {
        fail_msg("registering %s failed: %s: %s", name,
                 weft_status_name(weft_last_status(w)), weft_last_error(w));
    }
    return c;
}

tw_snap tw_snap_take(weft_world *w)
{
    tw_snap s;
    memset(&s, 0, sizeof s);
    weft_status st = weft_world_check(w);
    if (st != WEFT_OK) {
        fail_msg("weft_world_check: %s: %s", weft_status_name(st), weft_last_error(w));
    }
    s.hash = weft_world_hash(w);
    assert_int_equal(weft_world_get_stats(w, &s.stats), WEFT_OK);
    return s;
}

static void snap_compare(weft_world *w, const tw_snap *s, bool strict)
{
    weft_status st = weft_world_check(w);
    if (st != WEFT_OK) {
        fail_msg("weft_world_check: %s: %s", weft_status_name(st), weft_last_error(w));
    }
    weft_world_stats now;
    memset(&now, 0, sizeof now);
    assert_int_equal(weft_world_get_stats(w, &now), WEFT_OK);
    if (weft_world_hash(w) != s->hash) {
        fail_msg("world hash changed: %016llx -> %016llx", (unsigned long long)s->hash,
                 (unsigned long long)weft_world_hash(w));
    }
    assert_int_equal(now.live_entities, s->stats.live_entities);
    assert_int_equal(now.components, s->stats.components);
    assert_int_equal(now.resources, s->stats.resources);
    assert_int_equal(now.pending_reserved, s->stats.pending_reserved);
    if (strict) {
        assert_int_equal(now.live_bytes, s->stats.live_bytes);
        assert_int_equal(now.archetypes, s->stats.archetypes);
        assert_int_equal(now.tables, s->stats.tables);
        assert_int_equal(now.entity_records, s->stats.entity_records);
    }
}

void tw_snap_expect_same(weft_world *w, const tw_snap *s)
{
    snap_compare(w, s, true);
}

void tw_snap_expect_same_content(weft_world *w, const tw_snap *s)
{
    snap_compare(w, s, false);
}

bool tw_contains(const char *hay, const char *needle)
{
    return hay != NULL && needle != NULL && strstr(hay, needle) != NULL;
}

void tw_expect_error(tw_fixture *f, weft_status expected, const char *needle)
{
    weft_status got = weft_last_status(f->w);
    if (got != expected) {
        fail_msg("last status %s (%s), expected %s", weft_status_name(got),
                 weft_last_error(f->w), weft_status_name(expected));
    }
    const char *msg = weft_last_error(f->w);
    assert_non_null(msg);
    if (msg[0] == '\0') {
        fail_msg("empty error message for %s", weft_status_name(expected));
    }
    if (needle != NULL && !tw_contains(msg, needle)) {
        fail_msg("error message \"%s\" does not mention \"%s\"", msg, needle);
    }
    if (f->log.count == 0 || f->log.last_status != expected) {
        fail_msg("logger did not receive %s (count %lld, last %s)",
                 weft_status_name(expected), (long long)f->log.count,
                 weft_status_name(f->log.last_status));
    }
    assert_int_equal(f->log.last_level, WEFT_LOG_ERROR);
}

// ---- tracked component ----

static void tracker_error(tw_tracker *t, const char *what, const void *p)
{
    t->errors++;
    if (t->errors == 1) {
        snprintf(t->first_error, sizeof t->first_error, "%s at %p", what, p);
    }
}

static void tracked_ctor(void *ptr, int32_t count, void *user)
{
    tw_tracker *t = user;
    tw_tracked *v = ptr;
    for (int32_t i = 0; i < count; i++) {
        v[i].self = &v[i];
        v[i].magic = TW_MAGIC_LIVE;
        v[i].payload = 0;
        v[i].pad = 0;
        t->ctors++;
    }
}

static void tracked_dtor(void *ptr, int32_t count, void *user)
{
    tw_tracker *t = user;
    tw_tracked *v = ptr;
    for (int32_t i = 0; i < count; i++) {
        if (v[i].magic != TW_MAGIC_LIVE) {
            tracker_error(t, "dtor of a value that is not live", &v[i]);
        } else if (v[i].self != &v[i]) {
            tracker_error(t, "dtor of a value moved by memcpy", &v[i]);
        }
        v[i].magic = TW_MAGIC_DEAD;
        t->dtors++;
    }
}

static void tracked_move(void *dst, void *src, int32_t count, void *user)
{
    tw_tracker *t = user;
    tw_tracked *d = dst;
    tw_tracked *s = src;
    for (int32_t i = 0; i < count; i++) {
        if (s[i].magic != TW_MAGIC_LIVE) {
            tracker_error(t, "move from a value that is not live", &s[i]);
        } else if (s[i].self != &s[i]) {
            tracker_error(t, "move from a value relocated by memcpy", &s[i]);
        }
        d[i].self = &d[i];
        d[i].magic = TW_MAGIC_LIVE;
        d[i].payload = s[i].payload;
        d[i].pad = 0;
        s[i].magic = TW_MAGIC_MOVED;
        t->moves++;
    }
}

static void tracked_copy(void *dst, const void *src, int32_t count, void *user)
{
    tw_tracker *t = user;
    tw_tracked *d = dst;
    const tw_tracked *s = src;
    for (int32_t i = 0; i < count; i++) {
        if (s[i].magic != TW_MAGIC_LIVE) {
            tracker_error(t, "copy from a value that is not live", &s[i]);
        }
        d[i].self = &d[i];
        d[i].magic = TW_MAGIC_LIVE;
        d[i].payload = s[i].payload;
        d[i].pad = 0;
        t->copies++;
    }
}

weft_type_hooks tw_tracked_hooks(tw_tracker *t)
{
    weft_type_hooks h;
    memset(&h, 0, sizeof h);
    h.ctor = tracked_ctor;
    h.dtor = tracked_dtor;
    h.move = tracked_move;
    h.copy = tracked_copy;
    h.user = t;
    return h;
}

int64_t tw_tracker_live(const tw_tracker *t)
{
    return t->ctors + t->copies - t->dtors;
}

void tw_tracked_make(tw_tracked *v, uint64_t payload)
{
    v->self = v;
    v->magic = TW_MAGIC_LIVE;
    v->payload = payload;
    v->pad = 0;
}

weft_component tw_tracked_register(weft_world *w, const char *name,
                                   weft_storage storage, tw_tracker *t)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = sizeof(tw_tracked);
    d.align = _Alignof(tw_tracked);
    d.storage = storage;
    d.hooks = tw_tracked_hooks(t);
    weft_component c = weft_component_register(w, &d);
    if (c == 0) {
        fail_msg("registering tracked %s failed: %s", name, weft_last_error(w));
    }
    return c;
}

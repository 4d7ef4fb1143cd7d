// tests/support/test_world.h - shared fixture for weft's black-box tests.
// SPDX-License-Identifier: MIT
//
// What every test file gets from here:
//  - tw_alloc: an allocator hook that counts live bytes and blocks, checks
//    that every free gets back the pointer, size and alignment its alloc
//    returned (tracking table keyed by pointer), puts guard bytes after each
//    block to catch overruns in builds without ASan, and can fail the Nth
//    allocation (once, or from N onwards) for fault injection. Thread-safe
//    (a mutex), since hooks may run on worker threads.
//  - tw_log: a logger hook that records the last message and counts them.
//  - tw_rng: splitmix64, deterministic per seed; tw_seed_from_env reads
//    WEFT_TEST_SEED.
//  - tw_fixture + tw_setup/tw_teardown: a world wired to both hooks; the
//    teardown destroys it and asserts that the allocator saw zero live bytes
//    and no bad free.
//  - tw_snap: hash + stats + weft_world_check, to assert "world unchanged".
//  - tw_tracked: a component type whose hooks count ctor/copy/move/dtor and
//    detect double destruction and memcpy where a hook should have run.
#ifndef WEFT_TEST_WORLD_H
#define WEFT_TEST_WORLD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft.h"

// ---- allocator hook ----

typedef struct tw_alloc_rec {
    void *ptr;      // NULL: empty slot; TW_TOMBSTONE: deleted
    size_t size;
    size_t align;
} tw_alloc_rec;

typedef struct tw_alloc {
    pthread_mutex_t mu;
    int64_t live_bytes;    // sum of sizes of blocks not yet freed
    int64_t live_blocks;
    int64_t peak_bytes;
    int64_t total_allocs;  // successful + failed alloc calls
    int64_t total_frees;
    int64_t since_arm;     // alloc calls since tw_alloc_fail_nth
    int64_t fail_at;       // 0 = disarmed; else fail call number fail_at
    bool sticky;           // also fail every call after fail_at
    bool paused;           // calls neither counted towards fail_at nor failed
    int64_t injected;      // failures injected since arm
    int64_t errors;        // bad frees, size/align mismatch, overruns
    char first_error[256];
    tw_alloc_rec *recs;    // open addressing, power-of-two capacity
    size_t rec_cap;
    size_t rec_used;       // live + tombstones
} tw_alloc;

void tw_alloc_init(tw_alloc *a);
// Releases the bookkeeping and any block still live (so ASan stays quiet
// after a leak has already been reported by the counters).
void tw_alloc_fini(tw_alloc *a);
weft_allocator tw_alloc_hook(tw_alloc *a);
// Fails the n-th allocation call from now (n >= 1); with sticky, every
// later call fails too. Resets since_arm and injected.
void tw_alloc_fail_nth(tw_alloc *a, int64_t n, bool sticky);
void tw_alloc_disarm(tw_alloc *a);
// While paused, allocations are not counted towards the armed failure and
// never fail (for snapshots taken in the middle of an armed scenario).
void tw_alloc_pause(tw_alloc *a, bool paused);
int64_t tw_alloc_live_bytes(tw_alloc *a);
int64_t tw_alloc_live_blocks(tw_alloc *a);
int64_t tw_alloc_total_allocs(tw_alloc *a);
int64_t tw_alloc_injected(tw_alloc *a);
int64_t tw_alloc_since_arm(tw_alloc *a);
int64_t tw_alloc_errors(tw_alloc *a);

// ---- logger hook ----

typedef struct tw_log {
    int64_t count;
    int64_t error_count;     // level ERROR
    weft_status last_status;
    weft_log_level last_level;
    char last_message[1024];
    bool last_had_file;
} tw_log;

void tw_log_init(tw_log *l);
weft_logger tw_log_hook(tw_log *l);

// ---- rng ----

typedef struct tw_rng {
    uint64_t state;
} tw_rng;

void tw_rng_seed(tw_rng *r, uint64_t seed);
uint64_t tw_rng_next(tw_rng *r);
// Uniform in [0, n); n > 0.
uint32_t tw_rng_below(tw_rng *r, uint32_t n);
bool tw_rng_chance(tw_rng *r, uint32_t percent);
void tw_rng_bytes(tw_rng *r, void *dst, size_t n);
// WEFT_TEST_SEED (decimal or 0x-hex) if set, and *overridden = true; else
// dflt.
uint64_t tw_seed_from_env(uint64_t dflt, bool *overridden);

// ---- tracked component ----

#define TW_MAGIC_LIVE 0x4C49564556414C55ull  // value constructed, not destroyed
#define TW_MAGIC_DEAD 0x4445414444454144ull  // destroyed by dtor
#define TW_MAGIC_MOVED 0x4D4F5645444D4F56ull // moved-from

// self points at the value's own address; a memcpy where a move or copy
// hook should have run leaves it stale.
typedef struct tw_tracked {
    void *self;
    uint64_t magic;
    uint64_t payload;
    uint64_t pad; // always 0 (hashed)
} tw_tracked;

typedef struct tw_tracker {
    int64_t ctors;   // values default-constructed
    int64_t copies;  // values copy-constructed
    int64_t moves;   // values move-constructed
    int64_t dtors;   // values destroyed
    int64_t errors;  // a hook saw a value in the wrong state
    char first_error[256];
} tw_tracker;

weft_type_hooks tw_tracked_hooks(tw_tracker *t);
// Values currently alive: ctors + copies - dtors.
int64_t tw_tracker_live(const tw_tracker *t);
// Initialises a caller-side value (live, self-consistent).
void tw_tracked_make(tw_tracked *v, uint64_t payload);
// Registers "name" as a tracked component with all four hooks.
weft_component tw_tracked_register(weft_world *w, const char *name,
                                   weft_storage storage, tw_tracker *t);

// ---- fixture ----

typedef struct tw_fixture {
    tw_alloc alloc;
    tw_log log;
    tw_tracker tracker; // for tracked components; outlives the world
    weft_world *w;
} tw_fixture;

// A heap fixture with a world using both hooks (NULL if creation failed).
tw_fixture *tw_fixture_new(void);
// Destroys the world (if any) and asserts zero live bytes, no allocator
// errors, and that the fixture's tracker saw every value destroyed exactly
// once; then frees the fixture.
void tw_fixture_free(tw_fixture *f);
// Builds a world desc wired to the fixture's hooks.
weft_world_desc tw_fixture_desc(tw_fixture *f);
// cmocka setup/teardown storing a tw_fixture * in *state.
int tw_setup(void **state);
int tw_teardown(void **state);

// ---- helpers ----

// Registers a component and asserts success.
weft_component tw_comp(weft_world *w, const char *name, size_t size, size_t align,
                       weft_storage storage, uint32_t flags);

typedef struct tw_snap {
    uint64_t hash;
    weft_world_stats stats;
} tw_snap;

// Takes hash + stats and asserts weft_world_check passes.
tw_snap tw_snap_take(weft_world *w);
// Asserts hash and stats (every field) equal the snapshot and the check
// passes.
void tw_snap_expect_same(weft_world *w, const tw_snap *s);
// Like tw_snap_expect_same but ignores live_bytes, archetypes, tables and
// entity_records (capacity and caches may grow on a failed call).
void tw_snap_expect_same_content(weft_world *w, const tw_snap *s);

// Asserts the world's error slot and the logger both report `expected`, and
// that the message is non-empty and contains `needle` (if not NULL).
void tw_expect_error(tw_fixture *f, weft_status expected, const char *needle);

// True if `hay` contains `needle`.
bool tw_contains(const char *hay, const char *needle);

#endif // WEFT_TEST_WORLD_H

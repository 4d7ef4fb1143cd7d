// tests/api/test_api_message.c - black-box tests of messages and
// removed-component tracking: the lifetime cases
// (two-update lifetime, reader before writer, fan-out, missed counts, FIFO,
// removed visibility window), misuse statuses, and allocation failures.
// SPDX-License-Identifier: MIT
//
// A "frame" here is: weft_messages_update (the frame's First), then the
// frame's systems as plain calls in a fixed order.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_world.h"
#include "weft.h"

typedef struct hit {
    uint32_t seq;
    float damage;
} hit;

typedef struct drops {
    int64_t count;
    uint64_t seq_sum;
} drops;

static void hit_drop(void *msg, void *user)
{
    drops *d = user;
    const hit *h = msg;
    d->count++;
    d->seq_sum += h->seq;
}

static weft_message_type hit_register(weft_world *w, const char *name, drops *d)
{
    weft_message_desc desc = {0};
    desc.name = name;
    desc.size = sizeof(hit);
    desc.drop = d ? hit_drop : NULL;
    desc.user = d;
    weft_message_type t = weft_message_register(w, &desc);
    assert_true(t != 0);
    return t;
}

static void hit_write(weft_world *w, weft_message_type t, uint32_t seq)
{
    hit h = {seq, (float)seq * 0.5f};
    assert_int_equal(weft_message_write(w, t, &h, sizeof h), WEFT_OK);
}

// Reads everything unread into seqs (up to cap); returns the count.
static int read_all(weft_world *w, weft_message_type t, weft_message_cursor *c,
                    uint32_t *seqs, int cap)
{
    int n = 0;
    const hit *h;
    while ((h = weft_message_read(w, t, c, sizeof(hit))) != NULL) {
        assert_true(n < cap);
        seqs[n++] = h->seq;
    }
    return n;
}

// ---- lifetime cases ----

// (a) Written in frame 1, readable in frames 1 and 2, dropped at frame 3's
// update (drop counter 1).
static void message_lifetime_two_updates(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    drops d = {0};
    weft_message_type t = hit_register(w, "hit", &d);

    weft_messages_update(w); // frame 1
    hit_write(w, t, 7);
    weft_message_cursor r1 = {0};
    const hit *h = weft_message_read(w, t, &r1, sizeof(hit));
    assert_non_null(h);
    assert_int_equal(h->seq, 7);
    assert_null(weft_message_read(w, t, &r1, sizeof(hit)));

    weft_messages_update(w); // frame 2
    assert_int_equal(d.count, 0);
    weft_message_cursor r2 = {0}; // a reader first running in frame 2
    assert_int_equal(weft_message_unread(w, t, &r2), 1);
    h = weft_message_read(w, t, &r2, sizeof(hit));
    assert_non_null(h);
    assert_int_equal(h->seq, 7);
    assert_null(weft_message_read(w, t, &r1, sizeof(hit))); // r1 saw it already

    weft_messages_update(w); // frame 3: dropped
    assert_int_equal(d.count, 1);
    assert_int_equal(d.seq_sum, 7);
    weft_message_cursor r3 = {0};
    assert_null(weft_message_read(w, t, &r3, sizeof(hit)));
    assert_int_equal(r3.missed, 0); // a new reader missed nothing
    assert_int_equal(r1.missed, 0);
    assert_int_equal(r2.missed, 0);
    assert_int_equal(weft_last_status(w), WEFT_OK);

    weft_messages_update(w);
    assert_int_equal(d.count, 1); // exactly once
}

// (b) A reader that runs before the writer in every frame gets frame N's
// message in frame N+1.
static void message_reader_before_writer(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_message_type t = hit_register(w, "hit", NULL);
    weft_message_cursor reader = {0};
    uint32_t seqs[8];
    for (uint32_t frame = 1; frame <= 5; frame++) {
        weft_messages_update(w);
        int n = read_all(w, t, &reader, seqs, 8); // reader system
        if (frame == 1) {
            assert_int_equal(n, 0);
        } else {
            assert_int_equal(n, 1);
            assert_int_equal(seqs[0], frame - 1);
        }
        hit_write(w, t, frame); // writer system
    }
    assert_int_equal(reader.missed, 0);
}

// (c) Two readers each get every message exactly once, whatever their
// position in the frame.
static void message_two_readers_each_once(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_message_type t = hit_register(w, "hit", NULL);
    weft_message_cursor early = {0};
    weft_message_cursor late = {0};
    uint32_t got_early[64];
    uint32_t got_late[64];
    int ne = 0;
    int nl = 0;
    uint32_t seq = 0;
    for (int frame = 0; frame < 10; frame++) {
        weft_messages_update(w);
        ne += read_all(w, t, &early, got_early + ne, 64 - ne);
        for (int k = 0; k < frame % 3 + 1; k++) {
            hit_write(w, t, ++seq);
        }
        nl += read_all(w, t, &late, got_late + nl, 64 - nl);
    }
    weft_messages_update(w);
    ne += read_all(w, t, &early, got_early + ne, 64 - ne);
    nl += read_all(w, t, &late, got_late + nl, 64 - nl);
    assert_int_equal(ne, (int)seq);
    assert_int_equal(nl, (int)seq);
    for (int i = 0; i < (int)seq; i++) {
        assert_int_equal(got_early[i], (uint32_t)i + 1);
        assert_int_equal(got_late[i], (uint32_t)i + 1);
    }
    assert_int_equal(early.missed, 0);
    assert_int_equal(late.missed, 0);
}

// (d) A reader skipped for two updates reports missed = k and then
// continues with what is still retained.
static void message_skipped_reader_reports_missed(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_message_type t = hit_register(w, "hit", NULL);
    weft_message_cursor reader = {0};
    uint32_t seqs[16];

    weft_messages_update(w); // frame 1: the reader runs, nothing yet
    assert_int_equal(read_all(w, t, &reader, seqs, 16), 0);
    for (uint32_t i = 1; i <= 5; i++) { // k = 5
        hit_write(w, t, i);
    }
    weft_messages_update(w); // frame 2: reader skipped (run condition)
    hit_write(w, t, 6);
    weft_messages_update(w); // frame 3: 1..5 expire
    assert_int_equal(weft_message_unread(w, t, &reader), 1);
    int n = read_all(w, t, &reader, seqs, 16);
    assert_int_equal(reader.missed, 5);
    assert_int_equal(n, 1);
    assert_int_equal(seqs[0], 6);
    assert_int_equal(weft_last_status(w), WEFT_OK); // missing is not an error

    // Partial read, then skipped: only the unread part counts.
    for (uint32_t i = 7; i <= 10; i++) {
        hit_write(w, t, i);
    }
    const hit *h = weft_message_read(w, t, &reader, sizeof(hit));
    assert_int_equal(h->seq, 7);
    weft_messages_update(w);
    weft_messages_update(w);
    weft_messages_update(w);
    assert_null(weft_message_read(w, t, &reader, sizeof(hit)));
    assert_int_equal(reader.missed, 5 + 3);
}

// (e) Two writers chained in one frame: messages come out in write order,
// across buffer growth and an update boundary.
static void message_fifo_order(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_message_type t = hit_register(w, "hit", NULL);
    weft_message_cursor reader = {0};
    weft_messages_update(w);
    uint32_t seq = 0;
    for (int i = 0; i < 300; i++) { // writer system A
        hit_write(w, t, ++seq);
    }
    for (int i = 0; i < 300; i++) { // writer system B, chained after A
        hit_write(w, t, ++seq);
    }
    weft_messages_update(w);
    for (int i = 0; i < 100; i++) {
        hit_write(w, t, ++seq);
    }
    assert_int_equal(weft_message_unread(w, t, &reader), 700);
    uint32_t expect = 1;
    const hit *h;
    while ((h = weft_message_read(w, t, &reader, sizeof(hit))) != NULL) {
        assert_int_equal(h->seq, expect);
        assert_true(h->damage == (float)expect * 0.5f);
        expect++;
    }
    assert_int_equal(expect, 701);
    assert_int_equal(weft_message_unread(w, t, &reader), 0);
}

static void message_types_are_independent(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    drops da = {0};
    drops db = {0};
    weft_message_type a = hit_register(w, "a", &da);
    weft_message_type b = hit_register(w, "b", &db);
    assert_true(a != b);
    hit_write(w, a, 1);
    hit_write(w, a, 2);
    hit_write(w, b, 3);
    weft_message_cursor ca = {0};
    weft_message_cursor cb = {0};
    assert_int_equal(weft_message_unread(w, a, &ca), 2);
    assert_int_equal(weft_message_unread(w, b, &cb), 1);
    const hit *h = weft_message_read(w, b, &cb, sizeof(hit));
    assert_int_equal(h->seq, 3);
    weft_messages_update(w);
    weft_messages_update(w);
    assert_int_equal(da.count, 2);
    assert_int_equal(da.seq_sum, 3);
    assert_int_equal(db.count, 1);
}

// Every message still buffered is dropped exactly once at world destroy.
static void message_drop_at_destroy(void **state)
{
    (void)state;
    tw_fixture *g = tw_fixture_new();
    assert_non_null(g);
    drops d = {0};
    weft_message_type t = hit_register(g->w, "hit", &d);
    hit_write(g->w, t, 1);
    weft_messages_update(g->w);
    hit_write(g->w, t, 2);
    hit_write(g->w, t, 3);
    tw_fixture_free(g); // zero live bytes asserted inside
    assert_int_equal(d.count, 3);
    assert_int_equal(d.seq_sum, 6);
}

// Messages are stored at their declared alignment.
static void message_alignment_honoured(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_message_desc desc = {0};
    desc.name = "wide";
    desc.size = 128;
    desc.align = 64;
    weft_message_type t = weft_message_register(w, &desc);
    assert_true(t != 0);
    unsigned char buf[128];
    for (int i = 0; i < 40; i++) {
        memset(buf, i, sizeof buf);
        assert_int_equal(weft_message_write(w, t, buf, sizeof buf), WEFT_OK);
    }
    weft_message_cursor c = {0};
    for (int i = 0; i < 40; i++) {
        const unsigned char *m = weft_message_read(w, t, &c, sizeof buf);
        assert_non_null(m);
        assert_int_equal((uintptr_t)m % 64, 0);
        assert_int_equal(m[0], i);
        assert_int_equal(m[127], i);
    }
    // Derived alignment: a 12-byte message is 4-aligned.
    desc.name = "twelve";
    desc.size = 12;
    desc.align = 0;
    assert_true(weft_message_register(w, &desc) != 0);
}

// A cursor from the future (or another world) reads nothing and is left
// alone.
static void message_cursor_past_end(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_message_type t = hit_register(w, "hit", NULL);
    hit_write(w, t, 1);
    weft_message_cursor c = {1000, 0};
    assert_null(weft_message_read(w, t, &c, sizeof(hit)));
    assert_int_equal(c.next, 1000);
    assert_int_equal(c.missed, 0);
    assert_int_equal(weft_message_unread(w, t, &c), 0);
}

// ---- removed-component tracking (f) ----

static void removed_window_two_updates(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component hp = tw_comp(w, "hp", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component sp = tw_comp(w, "sp", 4, 4, WEFT_STORAGE_SPARSE, 0);
    int32_t v = 1;
    weft_entity e[6];
    for (int i = 0; i < 6; i++) {
        e[i] = weft_spawn(w);
        assert_int_equal(weft_insert(w, e[i], hp, &v, sizeof v), WEFT_OK);
        assert_int_equal(weft_insert(w, e[i], sp, &v, sizeof v), WEFT_OK);
    }
    // Before tracking: not recorded.
    assert_int_equal(weft_remove(w, e[0], hp), WEFT_OK);
    assert_int_equal(weft_removed_track(w, hp), WEFT_OK);
    assert_int_equal(weft_removed_track(w, hp), WEFT_OK); // idempotent
    assert_int_equal(weft_removed_track(w, sp), WEFT_OK);
    weft_message_cursor c = {0};
    assert_int_equal(weft_removed_read(w, hp, &c), WEFT_ENTITY_NONE);

    // Frame N: remove and despawn both count; removing an absent component
    // does not.
    weft_messages_update(w);
    assert_int_equal(weft_remove(w, e[1], hp), WEFT_OK);
    assert_int_equal(weft_remove(w, e[1], hp), WEFT_OK); // no-op
    assert_int_equal(weft_despawn(w, e[2]), WEFT_OK);
    assert_int_equal(weft_remove(w, e[3], sp), WEFT_OK); // other component
    weft_message_cursor in_n = {0};
    assert_true(weft_removed_read(w, hp, &in_n) == e[1]);
    assert_true(weft_removed_read(w, hp, &in_n) == e[2]);
    assert_true(weft_removed_read(w, hp, &in_n) == WEFT_ENTITY_NONE);
    weft_message_cursor sc = {0};
    assert_true(weft_removed_read(w, sp, &sc) == e[2]); // despawn: sparse too
    assert_true(weft_removed_read(w, sp, &sc) == e[3]);
    assert_true(weft_removed_read(w, sp, &sc) == WEFT_ENTITY_NONE);

    // Frame N+1: still readable by a reader that has not seen them.
    weft_messages_update(w);
    weft_message_cursor in_n1 = {0};
    assert_true(weft_removed_read(w, hp, &in_n1) == e[1]);
    assert_true(weft_removed_read(w, hp, &in_n1) == e[2]);
    assert_true(weft_removed_read(w, hp, &in_n1) == WEFT_ENTITY_NONE);
    assert_true(weft_removed_read(w, hp, &in_n) == WEFT_ENTITY_NONE);

    // Frame N+2: gone.
    weft_messages_update(w);
    weft_message_cursor in_n2 = {0};
    assert_true(weft_removed_read(w, hp, &in_n2) == WEFT_ENTITY_NONE);
    assert_int_equal(in_n2.missed, 0);
    // The never-reading cursor from before frame N was attached: missed 2.
    assert_true(weft_removed_read(w, hp, &c) == WEFT_ENTITY_NONE);
    assert_int_equal(c.missed, 2);
    assert_int_equal(weft_last_status(w), WEFT_OK);
}

// weft_removed_read starts tracking on first use; removals after that are
// seen.
static void removed_read_starts_tracking(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component tag = tw_comp(w, "tag", 0, 0, WEFT_STORAGE_TABLE, 0);
    weft_entity a = weft_spawn(w);
    weft_entity b = weft_spawn(w);
    assert_int_equal(weft_insert(w, a, tag, NULL, 0), WEFT_OK);
    assert_int_equal(weft_insert(w, b, tag, NULL, 0), WEFT_OK);
    assert_int_equal(weft_remove(w, a, tag), WEFT_OK); // untracked
    weft_message_cursor c = {0};
    assert_true(weft_removed_read(w, tag, &c) == WEFT_ENTITY_NONE);
    assert_int_equal(weft_last_status(w), WEFT_OK);
    assert_int_equal(weft_remove(w, b, tag), WEFT_OK);
    assert_true(weft_removed_read(w, tag, &c) == b);
    assert_true(weft_removed_read(w, tag, &c) == WEFT_ENTITY_NONE);
}

// Many removals in one frame: all recorded, in order (growth past the
// initial capacity).
static void removed_many_in_order(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component hp = tw_comp(w, "hp", 4, 4, WEFT_STORAGE_TABLE, 0);
    assert_int_equal(weft_removed_track(w, hp), WEFT_OK);
    enum { N = 500 };
    static weft_entity es[N];
    int32_t v = 3;
    for (int i = 0; i < N; i++) {
        es[i] = weft_spawn(w);
        assert_int_equal(weft_insert(w, es[i], hp, &v, sizeof v), WEFT_OK);
    }
    for (int i = 0; i < N; i++) {
        if (i % 2) {
            assert_int_equal(weft_despawn(w, es[i]), WEFT_OK);
        } else {
            assert_int_equal(weft_remove(w, es[i], hp), WEFT_OK);
        }
    }
    weft_messages_update(w);
    weft_message_cursor c = {0};
    for (int i = 0; i < N; i++) {
        assert_true(weft_removed_read(w, hp, &c) == es[i]);
    }
    assert_true(weft_removed_read(w, hp, &c) == WEFT_ENTITY_NONE);
}

// ---- misuse ----

static void message_misuse_statuses(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_message_type t = hit_register(w, "hit", NULL);
    hit h = {1, 1.0f};
    weft_message_cursor c = {0};
    weft_message_desc desc = {0};
    desc.name = "x";
    desc.size = sizeof(hit);

    // NULL world.
    assert_int_equal(weft_message_register(NULL, &desc), 0);
    assert_int_equal(weft_message_write(NULL, t, &h, sizeof h), WEFT_ERR_INVALID_HANDLE);
    assert_null(weft_message_read(NULL, t, &c, sizeof h));
    assert_int_equal(weft_message_unread(NULL, t, &c), -1);
    weft_messages_update(NULL);
    assert_int_equal(weft_removed_track(NULL, 1), WEFT_ERR_INVALID_HANDLE);
    assert_true(weft_removed_read(NULL, 1, &c) == WEFT_ENTITY_NONE);

    // Descriptor problems.
    assert_int_equal(weft_message_register(w, NULL), 0);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "desc is NULL");
    desc._start_canary = 1;
    assert_int_equal(weft_message_register(w, &desc), 0);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "canary");
    desc._start_canary = 0;
    desc._end_canary = 0xdead;
    assert_int_equal(weft_message_register(w, &desc), 0);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "canary");
    desc._end_canary = 0;
    desc.name = NULL;
    assert_int_equal(weft_message_register(w, &desc), 0);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "name");
    desc.name = "";
    assert_int_equal(weft_message_register(w, &desc), 0);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "name");
    desc.name = "x";
    desc.size = 0;
    assert_int_equal(weft_message_register(w, &desc), 0);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "'x'");
    desc.size = 12;
    desc.align = 3;
    assert_int_equal(weft_message_register(w, &desc), 0);
    tw_expect_error(f, WEFT_ERR_BAD_ALIGNMENT, "power of two");
    desc.align = 8192;
    assert_int_equal(weft_message_register(w, &desc), 0);
    tw_expect_error(f, WEFT_ERR_BAD_ALIGNMENT, "power of two");
    desc.align = 8;
    assert_int_equal(weft_message_register(w, &desc), 0);
    tw_expect_error(f, WEFT_ERR_BAD_ALIGNMENT, "multiple");
    desc.align = 0;
    desc.name = "hit";
    assert_int_equal(weft_message_register(w, &desc), 0);
    tw_expect_error(f, WEFT_ERR_ALREADY_EXISTS, "'hit'");

    // Unknown type, size mismatch, NULL arguments.
    assert_int_equal(weft_message_write(w, 0, &h, sizeof h), WEFT_ERR_NOT_FOUND);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "message type 0");
    assert_int_equal(weft_message_write(w, 99, &h, sizeof h), WEFT_ERR_NOT_FOUND);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "99");
    assert_int_equal(weft_message_write(w, t, &h, 4), WEFT_ERR_SIZE_MISMATCH);
    tw_expect_error(f, WEFT_ERR_SIZE_MISMATCH, "'hit'");
    assert_int_equal(weft_message_write(w, t, NULL, sizeof h), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "NULL");
    assert_null(weft_message_read(w, 99, &c, sizeof h));
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "99");
    assert_null(weft_message_read(w, t, &c, sizeof h + 1));
    tw_expect_error(f, WEFT_ERR_SIZE_MISMATCH, "'hit'");
    assert_null(weft_message_read(w, t, NULL, sizeof h));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "cursor");
    assert_int_equal(weft_message_unread(w, 99, &c), -1);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "99");
    assert_int_equal(weft_message_unread(w, t, NULL), -1);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "cursor");
    assert_int_equal(c.next, 0); // failed calls leave the cursor alone
    assert_int_equal(c.missed, 0);

    // Removed tracking on unknown components.
    assert_int_equal(weft_removed_track(w, 0), WEFT_ERR_UNKNOWN_COMPONENT);
    tw_expect_error(f, WEFT_ERR_UNKNOWN_COMPONENT, "0");
    assert_int_equal(weft_removed_track(w, 4242), WEFT_ERR_UNKNOWN_COMPONENT);
    tw_expect_error(f, WEFT_ERR_UNKNOWN_COMPONENT, "4242");
    assert_true(weft_removed_read(w, 4242, &c) == WEFT_ENTITY_NONE);
    tw_expect_error(f, WEFT_ERR_UNKNOWN_COMPONENT, "4242");
    weft_component hp = tw_comp(w, "hp", 4, 4, WEFT_STORAGE_TABLE, 0);
    assert_true(weft_removed_read(w, hp, NULL) == WEFT_ENTITY_NONE);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "cursor");

    // Failed registrations left nothing behind: the next id is 2.
    desc.name = "second";
    assert_int_equal(weft_message_register(w, &desc), 2);
}

// Message state does not touch the world's content hash or checker.
static void message_state_outside_world_hash(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    tw_snap s = tw_snap_take(w);
    weft_message_type t = hit_register(w, "hit", NULL);
    hit_write(w, t, 1);
    weft_messages_update(w);
    tw_snap_expect_same_content(w, &s);
}

// ---- allocation failures ----

// Every allocation of a registration fails in turn: OUT_OF_MEMORY, no
// bytes kept, the name still free; both for the world's first message type
// (which also allocates the message state) and for a later one.
static void message_register_oom(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    const char *names[2] = {"hit", "hit2"};
    for (int k = 0; k < 2; k++) {
        weft_message_desc desc = {0};
        desc.name = names[k];
        desc.size = sizeof(hit);
        char needle[16];
        snprintf(needle, sizeof needle, "'%s'", names[k]);
        for (int64_t n = 1;; n++) {
            int64_t live = tw_alloc_live_bytes(&f->alloc);
            tw_alloc_fail_nth(&f->alloc, n, false);
            weft_message_type t = weft_message_register(w, &desc);
            bool injected = tw_alloc_injected(&f->alloc) > 0;
            tw_alloc_disarm(&f->alloc);
            if (t) {
                assert_false(injected);
                assert_int_equal(t, (weft_message_type)k + 1);
                break;
            }
            assert_true(injected);
            tw_expect_error(f, WEFT_ERR_OUT_OF_MEMORY, needle);
            assert_int_equal(tw_alloc_live_bytes(&f->alloc), live); // unchanged
            hit h = {0, 0};
            assert_int_equal(weft_message_write(w, (weft_message_type)k + 1, &h, sizeof h),
                             WEFT_ERR_NOT_FOUND);
            assert_true(n < 20);
        }
        assert_int_equal(weft_message_register(w, &desc), 0);
        tw_expect_error(f, WEFT_ERR_ALREADY_EXISTS, needle);
    }
}

static void message_write_oom(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    drops d = {0};
    weft_message_type t = hit_register(w, "hit", &d);
    uint32_t written = 0;
    int failures = 0;
    for (int round = 0; round < 6; round++) {
        // Fail every allocation, then write until a growth is needed.
        tw_alloc_fail_nth(&f->alloc, 1, true);
        int64_t live = tw_alloc_live_bytes(&f->alloc);
        for (;;) {
            hit h = {written + 1, 0};
            weft_status st = weft_message_write(w, t, &h, sizeof h);
            if (st != WEFT_OK) {
                assert_int_equal(st, WEFT_ERR_OUT_OF_MEMORY);
                tw_expect_error(f, WEFT_ERR_OUT_OF_MEMORY, "'hit'");
                failures++;
                break;
            }
            written++;
        }
        assert_int_equal(tw_alloc_live_bytes(&f->alloc), live);
        tw_alloc_disarm(&f->alloc);
        // The stream is intact: every written message is readable in order.
        weft_message_cursor c = {0};
        uint32_t expect = 1;
        const hit *h;
        while ((h = weft_message_read(w, t, &c, sizeof(hit))) != NULL) {
            assert_int_equal(h->seq, expect);
            expect++;
        }
        assert_int_equal(expect - 1, written);
        hit g = {written + 1, 0};
        assert_int_equal(weft_message_write(w, t, &g, sizeof g), WEFT_OK); // grows now
        written++;
    }
    assert_int_equal(failures, 6);
    assert_int_equal(d.count, 0);
    // Updates never allocate.
    tw_alloc_fail_nth(&f->alloc, 1, true);
    weft_messages_update(w);
    weft_messages_update(w);
    assert_int_equal(tw_alloc_injected(&f->alloc), 0);
    tw_alloc_disarm(&f->alloc);
    assert_int_equal(d.count, (int64_t)written);
}

static void removed_track_oom(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component hp = tw_comp(w, "hp", 4, 4, WEFT_STORAGE_TABLE, 0);
    weft_component sp = tw_comp(w, "sp", 4, 4, WEFT_STORAGE_TABLE, 0);
    for (int k = 0; k < 2; k++) {
        weft_component c = k ? sp : hp;
        for (int64_t n = 1;; n++) {
            int64_t live = tw_alloc_live_bytes(&f->alloc);
            tw_alloc_fail_nth(&f->alloc, n, false);
            weft_status st = weft_removed_track(w, c);
            tw_alloc_disarm(&f->alloc);
            if (st == WEFT_OK) {
                break;
            }
            assert_int_equal(st, WEFT_ERR_OUT_OF_MEMORY);
            tw_expect_error(f, WEFT_ERR_OUT_OF_MEMORY, k ? "'sp'" : "'hp'");
            assert_int_equal(tw_alloc_live_bytes(&f->alloc), live);
            assert_true(n < 20);
        }
    }
    // Both tracked and working.
    int32_t v = 0;
    weft_entity e = weft_spawn(w);
    assert_int_equal(weft_insert(w, e, hp, &v, sizeof v), WEFT_OK);
    assert_int_equal(weft_insert(w, e, sp, &v, sizeof v), WEFT_OK);
    assert_int_equal(weft_despawn(w, e), WEFT_OK);
    weft_message_cursor c1 = {0};
    weft_message_cursor c2 = {0};
    assert_true(weft_removed_read(w, hp, &c1) == e);
    assert_true(weft_removed_read(w, sp, &c2) == e);
}

// A removal whose record cannot be stored still happens; the loss is
// reported in the error slot and readers simply do not see that entity.
static void removed_push_oom_keeps_removal(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_component hp = tw_comp(w, "hp", 4, 4, WEFT_STORAGE_TABLE, 0);
    enum { N = 200 };
    static weft_entity es[N];
    int32_t v = 5;
    // Warm the tables so the removes below need no table growth.
    for (int i = 0; i < N; i++) {
        es[i] = weft_spawn(w);
        assert_int_equal(weft_insert(w, es[i], hp, &v, sizeof v), WEFT_OK);
    }
    for (int i = 0; i < N; i++) {
        assert_int_equal(weft_remove(w, es[i], hp), WEFT_OK);
    }
    for (int i = 0; i < N; i++) {
        assert_int_equal(weft_insert(w, es[i], hp, &v, sizeof v), WEFT_OK);
    }
    assert_int_equal(weft_removed_track(w, hp), WEFT_OK);
    weft_clear_error(w);
    tw_alloc_fail_nth(&f->alloc, 1, true);
    int stored = -1;
    for (int i = 0; i < N; i++) {
        assert_int_equal(weft_remove(w, es[i], hp), WEFT_OK);
        assert_false(weft_has(w, es[i], hp));
        if (stored < 0 && weft_last_status(w) == WEFT_ERR_OUT_OF_MEMORY) {
            stored = i;
            break;
        }
    }
    tw_alloc_disarm(&f->alloc);
    assert_true(stored > 0); // the initial capacity held some records
    tw_expect_error(f, WEFT_ERR_OUT_OF_MEMORY, "'hp'");
    weft_message_cursor c = {0};
    for (int i = 0; i < stored; i++) {
        assert_true(weft_removed_read(w, hp, &c) == es[i]);
    }
    assert_true(weft_removed_read(w, hp, &c) == WEFT_ENTITY_NONE);
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tw_setup, tw_teardown)
    const struct CMUnitTest tests[] = {
        T(message_lifetime_two_updates),
        T(message_reader_before_writer),
        T(message_two_readers_each_once),
        T(message_skipped_reader_reports_missed),
        T(message_fifo_order),
        T(message_types_are_independent),
        T(message_drop_at_destroy),
        T(message_alignment_honoured),
        T(message_cursor_past_end),
        T(removed_window_two_updates),
        T(removed_read_starts_tracking),
        T(removed_many_in_order),
        T(message_misuse_statuses),
        T(message_state_outside_world_hash),
        T(message_register_oom),
        T(message_write_oom),
        T(removed_track_oom),
        T(removed_push_oom_keeps_removal),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

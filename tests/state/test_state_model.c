// tests/state/test_state_model.c - random transition sequences on a state
// tree (root A; B exists while A = 1; C exists while B = 11; D computed from
// A and B) checked against a reference model after every step: the values
// and existence of every state, the exact sequence of OnExit / OnTransition
// / OnEnter schedules run (exits leaf to root, then transitions and enters
// root to leaf), and which DespawnOnExit / DespawnOnEnter entities survive.
// The seed comes from WEFT_TEST_SEED when set and is printed on failure.
// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_world.h"
#include "weft.h"

#define NONE WEFT_STATE_VALUE_NONE
#define NSTATES 4
#define MAXV 3
#define STEPS 1500
#define TAGGED 48

// ---- the reference model ----

typedef struct mstate {
    uint32_t cur;            // NONE: absent
    uint32_t initial;
    uint32_t values[MAXV];
    int nvalues;
} mstate;

typedef struct mev {
    bool any, same;
    uint32_t exited, entered;
} mev;

typedef struct model {
    mstate s[NSTATES];       // A, B, C, D
    bool first;              // the initial enter is pending
} model;

static uint32_t d_of(uint32_t a, uint32_t b)
{
    if (a == 2) {
        return 30;
    }
    return b != NONE ? 31 : NONE;
}

static void m_apply(mstate *t, mev *ev, uint32_t v, bool explicit_set)
{
    uint32_t old = t->cur;
    if (v == old && (!explicit_set || v == NONE)) {
        return;
    }
    ev->any = true;
    ev->same = v == old;
    ev->exited = old;
    ev->entered = v;
    t->cur = v;
}

// One transition step of the model; q[i] is the queued value or NONE.
static void m_step(model *m, const uint32_t q[NSTATES], mev ev[NSTATES])
{
    memset(ev, 0, sizeof(mev) * NSTATES);
    mstate *a = &m->s[0], *b = &m->s[1], *c = &m->s[2], *d = &m->s[3];
    if (m->first) {
        uint32_t v = q[0] != NONE ? q[0] : a->cur;
        a->cur = v;
        ev[0] = (mev){true, false, NONE, v};
    } else if (q[0] != NONE) {
        m_apply(a, &ev[0], q[0], true);
    }
    // B and C: sub states of A = 1 and B = 11
    mstate *subs[2] = {b, c};
    const mstate *srcs[2] = {a, b};
    const uint32_t need[2] = {1, 11};
    for (int k = 0; k < 2; k++) {
        bool src_changed = ev[k].any || m->first;
        bool queued = q[k + 1] != NONE;
        if (!src_changed && !queued) {
            continue;
        }
        uint32_t base = src_changed ? (srcs[k]->cur == need[k] ? subs[k]->initial : NONE)
                                    : subs[k]->cur;
        uint32_t v = NONE;
        if (base != NONE) {
            v = queued ? q[k + 1] : (subs[k]->cur != NONE ? subs[k]->cur : base);
        }
        m_apply(subs[k], &ev[k + 1], v, queued && v != NONE);
    }
    if (ev[0].any || ev[1].any || m->first) {
        m_apply(d, &ev[3], d_of(a->cur, b->cur), false);
    }
    m->first = false;
}

static bool moves(const mev *e)
{
    return e->any && (e->exited != e->entered || e->same);
}

// ---- the world side ----

static char g_log[16384];

static void log_sys(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    size_t n = strlen(g_log);
    snprintf(g_log + n, sizeof g_log - n, "%s ", (const char *)user);
}

static uint32_t compute_d(const uint32_t *src, int32_t n, void *user)
{
    (void)n;
    (void)user;
    return d_of(src[0], src[1]);
}

typedef struct fixture {
    weft_world *w;
    weft_state ids[NSTATES];
    char labels[NSTATES][MAXV * 3 + MAXV * MAXV][32];
} fixture;

static void label_schedule(fixture *fx, weft_schedule *s, char *buf, const char *text)
{
    assert_non_null(s);
    snprintf(buf, 32, "%s", text);
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = buf;
    d.fn = log_sys;
    d.user = buf;
    assert_int_not_equal(weft_schedule_add_system(s, &d), 0);
    (void)fx;
}

static void setup_world(fixture *fx, model *m)
{
    static const char *const names[NSTATES] = {"A", "B", "C", "D"};
    static const weft_state_value va[] = {{0, "a0"}, {1, "a1"}, {2, "a2"}};
    static const weft_state_value vb[] = {{10, "b0"}, {11, "b1"}, {12, "b2"}};
    static const weft_state_value vc[] = {{20, "c0"}, {21, "c1"}};
    static const weft_state_value vd[] = {{30, "d0"}, {31, "d1"}};
    const weft_state_value *vals[NSTATES] = {va, vb, vc, vd};
    const int counts[NSTATES] = {3, 3, 2, 2};
    memset(m, 0, sizeof *m);
    m->first = true;
    for (int i = 0; i < NSTATES; i++) {
        weft_state_desc d;
        memset(&d, 0, sizeof d);
        d.name = names[i];
        d.values = vals[i];
        d.value_count = counts[i];
        d.initial = vals[i][0].value;
        if (i == 1 || i == 2) {
            d.kind = WEFT_STATE_KIND_SUB;
            d.source = fx->ids[i - 1];
            d.source_value = i == 1 ? 1u : 11u;
        } else if (i == 3) {
            d.kind = WEFT_STATE_KIND_COMPUTED;
            d.initial = 0;
            d.sources = fx->ids;
            d.source_count = 2;
            d.compute = compute_d;
        }
        fx->ids[i] = weft_state_register(fx->w, &d);
        assert_int_not_equal(fx->ids[i], 0);
        mstate *ms = &m->s[i];
        ms->nvalues = counts[i];
        for (int k = 0; k < counts[i]; k++) {
            ms->values[k] = vals[i][k].value;
        }
        ms->initial = i == 3 ? NONE : vals[i][0].value;
        ms->cur = i == 0 ? ms->initial : NONE;
        int slot = 0;
        for (int k = 0; k < counts[i]; k++) {
            char text[32];
            snprintf(text, sizeof text, "+%s%u", names[i], vals[i][k].value);
            label_schedule(fx, weft_state_on_enter(fx->w, fx->ids[i], vals[i][k].value),
                           fx->labels[i][slot++], text);
            snprintf(text, sizeof text, "-%s%u", names[i], vals[i][k].value);
            label_schedule(fx, weft_state_on_exit(fx->w, fx->ids[i], vals[i][k].value),
                           fx->labels[i][slot++], text);
            for (int j = 0; j < counts[i]; j++) {
                snprintf(text, sizeof text, "%s%u>%u", names[i], vals[i][k].value,
                         vals[i][j].value);
                label_schedule(fx, weft_state_on_transition(fx->w, fx->ids[i],
                                                            vals[i][k].value,
                                                            vals[i][j].value),
                               fx->labels[i][slot++], text);
            }
        }
    }
}

// The log the model predicts for one step's events.
static void expected_log(const mev ev[NSTATES], char *out, size_t cap)
{
    static const char *const names[NSTATES] = {"A", "B", "C", "D"};
    size_t n = 0;
    out[0] = '\0';
    for (int i = NSTATES; i-- > 0;) {
        if (moves(&ev[i]) && ev[i].exited != NONE) {
            n += (size_t)snprintf(out + n, cap - n, "-%s%u ", names[i], ev[i].exited);
        }
    }
    for (int i = 0; i < NSTATES; i++) {
        if (moves(&ev[i]) && ev[i].exited != NONE && ev[i].entered != NONE) {
            n += (size_t)snprintf(out + n, cap - n, "%s%u>%u ", names[i], ev[i].exited,
                                  ev[i].entered);
        }
    }
    for (int i = 0; i < NSTATES; i++) {
        if (moves(&ev[i]) && ev[i].entered != NONE) {
            n += (size_t)snprintf(out + n, cap - n, "+%s%u ", names[i], ev[i].entered);
        }
    }
}

typedef struct tagged {
    weft_entity e;
    int state;
    bool on_enter;
    uint32_t value;
} tagged;

static void state_model_random_sequences(void **state)
{
    tw_fixture *f = *state;
    bool overridden = false;
    uint64_t seed = tw_seed_from_env(0x57a7e5u, &overridden);
    tw_rng rng;
    tw_rng_seed(&rng, seed);
    static fixture fx;
    memset(&fx, 0, sizeof fx);
    fx.w = f->w;
    model m;
    setup_world(&fx, &m);
    tagged tags[TAGGED];
    memset(tags, 0, sizeof tags);
    for (int step = 0; step < STEPS; step++) {
        // queue 0..3 writes; a later write to the same state wins
        uint32_t q[NSTATES] = {NONE, NONE, NONE, NONE};
        int writes = (int)tw_rng_below(&rng, 4);
        for (int k = 0; k < writes; k++) {
            int i = (int)tw_rng_below(&rng, 3);
            const mstate *ms = &m.s[i];
            uint32_t v = ms->values[tw_rng_below(&rng, (uint32_t)ms->nvalues)];
            assert_int_equal(weft_state_set_next(fx.w, fx.ids[i], v), WEFT_OK);
            q[i] = v;
        }
        // tag a few entities for the sweeps
        for (int k = 0; k < 3; k++) {
            tagged *t = &tags[tw_rng_below(&rng, TAGGED)];
            if (t->e && weft_is_alive(fx.w, t->e)) {
                continue;
            }
            t->state = (int)tw_rng_below(&rng, NSTATES);
            t->on_enter = tw_rng_chance(&rng, 30);
            const mstate *ms = &m.s[t->state];
            t->value = ms->values[tw_rng_below(&rng, (uint32_t)ms->nvalues)];
            weft_component c = t->on_enter ? weft_state_despawn_on_enter(fx.w, fx.ids[t->state])
                                           : weft_state_despawn_on_exit(fx.w, fx.ids[t->state]);
            weft_value val = {c, sizeof t->value, &t->value};
            t->e = weft_spawn_with(fx.w, &val, 1);
            assert_int_not_equal(t->e, 0);
        }
        mev ev[NSTATES];
        m_step(&m, q, ev);
        char want[4096];
        expected_log(ev, want, sizeof want);
        g_log[0] = '\0';
        assert_int_equal(weft_state_transition(fx.w), WEFT_OK);
        if (strcmp(g_log, want) != 0) {
            fail_msg("seed %#llx step %d: ran \"%s\", the model expects \"%s\"",
                     (unsigned long long)seed, step, g_log, want);
        }
        for (int i = 0; i < NSTATES; i++) {
            uint32_t v = 0;
            assert_int_equal(weft_state_get(fx.w, fx.ids[i], &v), WEFT_OK);
            if (v != m.s[i].cur) {
                fail_msg("seed %#llx step %d: state %d is %u, the model says %u",
                         (unsigned long long)seed, step, i, v, m.s[i].cur);
            }
            assert_true(weft_state_exists(fx.w, fx.ids[i]) == (m.s[i].cur != NONE));
        }
        for (int k = 0; k < TAGGED; k++) {
            tagged *t = &tags[k];
            if (!t->e) {
                continue;
            }
            const mev *e = &ev[t->state];
            bool gone = moves(e) && (t->on_enter ? e->entered == t->value
                                                 : e->exited == t->value);
            bool alive = weft_is_alive(fx.w, t->e);
            if (alive == gone) {
                fail_msg("seed %#llx step %d: entity tagged %s(%d = %u) %s", (unsigned long long)seed,
                         step, t->on_enter ? "DespawnOnEnter" : "DespawnOnExit", t->state,
                         t->value, alive ? "survived" : "was despawned");
            }
            if (!alive) {
                t->e = 0;
            }
        }
        if (step % 64 == 0) {
            weft_messages_update(fx.w); // keep the message buffers short
            assert_int_equal(weft_world_check(fx.w), WEFT_OK);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(state_model_random_sequences, tw_setup, tw_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

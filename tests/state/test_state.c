// tests/state/test_state.c - black-box tests of states (weft.h, "states"):
// the order of OnExit/OnTransition/OnEnter over a three-level tree,
// OnTransition's (from, to), last-write-wins of queued values, sub states
// existing only under their source value, computed states removed when
// their callback returns none, DespawnOnExit/DespawnOnEnter removing
// exactly the tagged entities, the run conditions, access from systems,
// and bad input (clear status and message, world unchanged).
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

// ---- a log of which schedule ran, in order ----

static char g_log[8192];

static void log_sys(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    size_t n = strlen(g_log);
    snprintf(g_log + n, sizeof g_log - n, "%s%s", n ? " " : "", (const char *)user);
}

static void add_logger(weft_schedule *s, const char *label)
{
    assert_non_null(s);
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = label;
    d.fn = log_sys;
    d.user = (void *)(uintptr_t)label;
    assert_int_not_equal(weft_schedule_add_system(s, &d), 0);
}

static void step_expect(weft_world *w, const char *expected)
{
    g_log[0] = '\0';
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    assert_string_equal(g_log, expected);
}

// ---- the tree: App {Menu, Game}; Phase {Setup, Battle} while App == Game;
// Turn {Player, Enemy} while Phase == Battle ----

enum { MENU = 0, GAME = 1 };
enum { SETUP = 10, BATTLE = 11 };
enum { PLAYER = 20, ENEMY = 21 };

typedef struct tree {
    weft_state app, phase, turn;
} tree;

static weft_state reg_default(weft_world *w, const char *name, const weft_state_value *v,
                              int32_t n, uint32_t initial)
{
    weft_state_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.values = v;
    d.value_count = n;
    d.initial = initial;
    weft_state s = weft_state_register(w, &d);
    assert_int_not_equal(s, 0);
    return s;
}

static weft_state reg_sub(weft_world *w, const char *name, const weft_state_value *v,
                          int32_t n, uint32_t initial, weft_state source, uint32_t source_value)
{
    weft_state_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.kind = WEFT_STATE_KIND_SUB;
    d.values = v;
    d.value_count = n;
    d.initial = initial;
    d.source = source;
    d.source_value = source_value;
    weft_state s = weft_state_register(w, &d);
    assert_int_not_equal(s, 0);
    return s;
}

static const weft_state_value APP_V[] = {{MENU, "Menu"}, {GAME, "Game"}};
static const weft_state_value PHASE_V[] = {{SETUP, "Setup"}, {BATTLE, "Battle"}};
static const weft_state_value TURN_V[] = {{PLAYER, "Player"}, {ENEMY, "Enemy"}};

static tree make_tree(weft_world *w)
{
    tree t;
    t.app = reg_default(w, "App", APP_V, 2, MENU);
    t.phase = reg_sub(w, "Phase", PHASE_V, 2, SETUP, t.app, GAME);
    t.turn = reg_sub(w, "Turn", TURN_V, 2, PLAYER, t.phase, BATTLE);
    return t;
}

// Loggers on every OnEnter/OnExit of the tree and on two transitions.
static void log_tree(weft_world *w, const tree *t)
{
    static const char *const enter[] = {"+Menu", "+Game", "+Setup", "+Battle", "+Player",
                                        "+Enemy"};
    static const char *const exitv[] = {"-Menu", "-Game", "-Setup", "-Battle", "-Player",
                                        "-Enemy"};
    const weft_state states[] = {t->app, t->app, t->phase, t->phase, t->turn, t->turn};
    const uint32_t values[] = {MENU, GAME, SETUP, BATTLE, PLAYER, ENEMY};
    for (int i = 0; i < 6; i++) {
        add_logger(weft_state_on_enter(w, states[i], values[i]), enter[i]);
        add_logger(weft_state_on_exit(w, states[i], values[i]), exitv[i]);
    }
    add_logger(weft_state_on_transition(w, t->app, GAME, MENU), "Game>Menu");
    add_logger(weft_state_on_transition(w, t->phase, SETUP, BATTLE), "Setup>Battle");
}

static uint32_t value_of(weft_world *w, weft_state s)
{
    uint32_t v = 12345;
    assert_int_equal(weft_state_get(w, s, &v), WEFT_OK);
    return v;
}

static void state_tree_exits_leaf_to_root_enters_root_to_leaf(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    tree t = make_tree(w);
    log_tree(w, &t);
    // before the first step nothing exists and no resource was inserted
    assert_int_equal(value_of(w, t.app), NONE);
    assert_int_equal(value_of(w, t.phase), NONE);
    weft_world_stats stats;
    assert_int_equal(weft_world_get_stats(w, &stats), WEFT_OK);
    assert_int_equal(stats.resources, 0);
    step_expect(w, "+Menu");
    step_expect(w, ""); // nothing queued: nothing runs

    assert_int_equal(weft_state_set_next(w, t.app, GAME), WEFT_OK);
    step_expect(w, "-Menu +Game +Setup");
    assert_int_equal(value_of(w, t.phase), SETUP);
    assert_int_equal(value_of(w, t.turn), NONE);

    assert_int_equal(weft_state_set_next(w, t.phase, BATTLE), WEFT_OK);
    step_expect(w, "-Setup Setup>Battle +Battle +Player");

    assert_int_equal(weft_state_set_next(w, t.turn, ENEMY), WEFT_OK);
    step_expect(w, "-Player +Enemy");

    // leaving the root: every level exits, leaf first, then the root enters
    assert_int_equal(weft_state_set_next(w, t.app, MENU), WEFT_OK);
    step_expect(w, "-Enemy -Battle -Game Game>Menu +Menu");
    assert_int_equal(value_of(w, t.app), MENU);
    assert_int_equal(value_of(w, t.phase), NONE);
    assert_int_equal(value_of(w, t.turn), NONE);

    // three levels appear in one step, root first; a value queued for a sub
    // state that comes into existence in the same step is used
    assert_int_equal(weft_state_set_next(w, t.app, GAME), WEFT_OK);
    assert_int_equal(weft_state_set_next(w, t.phase, BATTLE), WEFT_OK);
    step_expect(w, "-Menu +Game +Battle +Player");

    // setting the current value re-runs its exit and enter; the sub states
    // keep their values (no transition of theirs)
    assert_int_equal(weft_state_set_next(w, t.app, GAME), WEFT_OK);
    step_expect(w, "-Game +Game");
    assert_int_equal(value_of(w, t.phase), BATTLE);
    assert_int_equal(value_of(w, t.turn), PLAYER);
}

static void on_transition_runs_for_its_pair_only(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    static const weft_state_value v[] = {{1, "A"}, {2, "B"}, {3, "C"}};
    weft_state s = reg_default(w, "S", v, 3, 1);
    add_logger(weft_state_on_transition(w, s, 1, 2), "A>B");
    add_logger(weft_state_on_transition(w, s, 2, 1), "B>A");
    add_logger(weft_state_on_transition(w, s, 1, 3), "A>C");
    add_logger(weft_state_on_transition(w, s, 2, 3), "B>C");
    add_logger(weft_state_on_transition(w, s, 2, 2), "B>B");
    // the same schedule comes back on every call
    assert_ptr_equal(weft_state_on_transition(w, s, 1, 2),
                     weft_state_on_transition(w, s, 1, 2));
    assert_string_equal(weft_schedule_node_name(weft_state_on_transition(w, s, 1, 2), 1),
                        "A>B");
    assert_non_null(weft_schedule_lookup(w, "OnTransition(S::A -> S::B)"));
    assert_null(weft_schedule_lookup(w, "OnEnter(S::C)")); // never asked for

    weft_message_type mt = weft_state_transition_message(w, s);
    assert_int_not_equal(mt, 0);
    weft_message_cursor cur = {0, 0};
    step_expect(w, ""); // initial enter: no transition schedule (nothing exited)
    const weft_state_transition_event *ev =
        weft_message_read(w, mt, &cur, sizeof *ev);
    assert_non_null(ev);
    assert_int_equal(ev->state, s);
    assert_int_equal(ev->exited, NONE);
    assert_int_equal(ev->entered, 1);
    assert_int_equal(ev->same, 0);

    weft_state_set_next(w, s, 2);
    step_expect(w, "A>B");
    ev = weft_message_read(w, mt, &cur, sizeof *ev);
    assert_non_null(ev);
    assert_int_equal(ev->exited, 1);
    assert_int_equal(ev->entered, 2);

    weft_state_set_next(w, s, 2);
    step_expect(w, "B>B");
    ev = weft_message_read(w, mt, &cur, sizeof *ev);
    assert_non_null(ev);
    assert_int_equal(ev->exited, 2);
    assert_int_equal(ev->entered, 2);
    assert_int_equal(ev->same, 1);

    weft_state_set_next(w, s, 3);
    step_expect(w, "B>C");
    weft_state_set_next(w, s, 1);
    step_expect(w, "");
    weft_state_set_next(w, s, 3);
    step_expect(w, "A>C");
}

// ---- last write wins ----

typedef struct setter {
    weft_state s;
    uint32_t value;
} setter;

static void set_sys(weft_system_ctx *ctx, void *user)
{
    const setter *st = user;
    if (weft_system_state_set_next(ctx, st->s, st->value) != WEFT_OK) {
        weft_system_fail(ctx, WEFT_ERR_INTERNAL, "set_next failed");
    }
}

static void next_state_last_write_wins(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    static const weft_state_value v[] = {{0, "Menu"}, {1, "Game"}, {2, "Pause"},
                                         {3, "Over"}};
    weft_state s = reg_default(w, "G", v, 4, 0);
    add_logger(weft_state_on_enter(w, s, 1), "+Game");
    add_logger(weft_state_on_enter(w, s, 2), "+Pause");
    add_logger(weft_state_on_enter(w, s, 3), "+Over");
    add_logger(weft_state_on_exit(w, s, 0), "-Menu");
    step_expect(w, "");

    // from the driver
    assert_int_equal(weft_state_set_next(w, s, 2), WEFT_OK);
    assert_int_equal(weft_state_set_next(w, s, 3), WEFT_OK);
    assert_int_equal(weft_state_set_next(w, s, 1), WEFT_OK);
    const weft_next_state *ns =
        weft_resource_get(w, weft_state_next_resource(w, s), sizeof *ns);
    assert_non_null(ns);
    assert_int_equal(ns->pending, 1);
    assert_int_equal(ns->value, 1);
    step_expect(w, "-Menu +Game");
    ns = weft_resource_get(w, weft_state_next_resource(w, s), sizeof *ns);
    assert_int_equal(ns->pending, 0); // consumed
    assert_int_equal(value_of(w, s), 1);

    // from three systems of one frame (they conflict on NextState, so they
    // run in registration order whatever the thread count): the last wins
    assert_int_equal(weft_world_set_threads(w, weft_max_threads() < 4 ? 1 : 4), WEFT_OK);
    weft_schedule *upd = weft_schedule_create(w, "update");
    weft_resource_use use = {weft_state_next_resource(w, s), WEFT_ACCESS_WRITE};
    static setter setters[3];
    const uint32_t order[3] = {3, 0, 2};
    const char *names[3] = {"set-over", "set-menu", "set-pause"};
    for (int i = 0; i < 3; i++) {
        setters[i] = (setter){s, order[i]};
        weft_system_desc d;
        memset(&d, 0, sizeof d);
        d.name = names[i];
        d.fn = set_sys;
        d.user = &setters[i];
        d.resources = &use;
        d.resource_count = 1;
        assert_int_not_equal(weft_schedule_add_system(upd, &d), 0);
    }
    assert_int_equal(weft_schedule_run(upd, 0.016), WEFT_OK);
    step_expect(w, "+Pause");
    assert_int_equal(value_of(w, s), 2);

    // a direct write of the resource is the same as a set
    weft_next_state *m = weft_resource_get_mut(w, weft_state_next_resource(w, s), sizeof *m);
    assert_non_null(m);
    *m = (weft_next_state){3, 1};
    step_expect(w, "+Over");
    assert_int_equal(weft_world_set_threads(w, 1), WEFT_OK);
}

// ---- sub states ----

static void substate_resource_exists_only_under_source_value(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    tree t = make_tree(w);
    weft_component phase_res = weft_state_resource(w, t.phase);
    weft_component phase_next = weft_state_next_resource(w, t.phase);
    assert_int_not_equal(phase_res, 0);
    assert_false(weft_resource_has(w, phase_res));
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    assert_true(weft_resource_has(w, phase_next)); // from the first step on
    assert_false(weft_resource_has(w, phase_res));
    assert_false(weft_state_exists(w, t.phase));
    assert_true(weft_state_exists(w, t.app));

    // queued while its source has another value: dropped
    assert_int_equal(weft_state_set_next(w, t.phase, BATTLE), WEFT_OK);
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    assert_false(weft_resource_has(w, phase_res));

    for (int round = 0; round < 3; round++) {
        assert_int_equal(weft_state_set_next(w, t.app, GAME), WEFT_OK);
        assert_int_equal(weft_state_transition(w), WEFT_OK);
        assert_true(weft_resource_has(w, phase_res));
        const uint32_t *v = weft_resource_get(w, phase_res, sizeof *v);
        assert_non_null(v);
        assert_int_equal(*v, SETUP); // initial each time it appears
        // the State resource is immutable: only transitions change it
        assert_null(weft_resource_get_mut(w, phase_res, sizeof(uint32_t)));
        assert_int_equal(weft_last_status(w), WEFT_ERR_IMMUTABLE);
        assert_int_equal(weft_state_set_next(w, t.phase, BATTLE), WEFT_OK);
        assert_int_equal(weft_state_transition(w), WEFT_OK);
        assert_int_equal(value_of(w, t.phase), BATTLE);
        assert_true(weft_state_exists(w, t.turn));
        assert_int_equal(weft_state_set_next(w, t.app, MENU), WEFT_OK);
        assert_int_equal(weft_state_transition(w), WEFT_OK);
        assert_false(weft_resource_has(w, phase_res));
        assert_false(weft_resource_has(w, weft_state_resource(w, t.turn)));
        assert_int_equal(value_of(w, t.phase), NONE);
    }
}

// ---- computed states ----

static uint32_t in_game(const uint32_t *src, int32_t n, void *user)
{
    int *calls = user;
    (*calls)++;
    assert_int_equal(n, 1);
    return src[0] == GAME ? 7u : NONE;
}

typedef struct combo_user {
    int calls;
    uint32_t last[2];
} combo_user;

// (App, Phase) -> 100 in the menu, 101 setting up, 102 fighting
static uint32_t combo(const uint32_t *src, int32_t n, void *user)
{
    combo_user *u = user;
    u->calls++;
    assert_int_equal(n, 2);
    u->last[0] = src[0];
    u->last[1] = src[1];
    if (src[0] == MENU) {
        return 100;
    }
    return src[1] == BATTLE ? 102u : src[1] == SETUP ? 101u : NONE;
}

static void computed_state_removed_when_compute_returns_none(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    tree t = make_tree(w);
    static const weft_state_value ig_v[] = {{7, "InGame"}};
    int calls = 0;
    weft_state_desc d;
    memset(&d, 0, sizeof d);
    d.name = "InGame";
    d.kind = WEFT_STATE_KIND_COMPUTED;
    d.values = ig_v;
    d.value_count = 1;
    d.sources = &t.app;
    d.source_count = 1;
    d.compute = in_game;
    d.user = &calls;
    weft_state ig = weft_state_register(w, &d);
    assert_int_not_equal(ig, 0);

    static const weft_state_value cv[] = {{100, "Menu"}, {101, "Setup"}, {102, "Fight"}};
    combo_user cu = {0, {0, 0}};
    weft_state srcs[2] = {t.app, t.phase};
    memset(&d, 0, sizeof d);
    d.name = "Combo";
    d.kind = WEFT_STATE_KIND_COMPUTED;
    d.values = cv;
    d.value_count = 3;
    d.sources = srcs;
    d.source_count = 2;
    d.compute = combo;
    d.user = &cu;
    weft_state co = weft_state_register(w, &d);
    assert_int_not_equal(co, 0);
    add_logger(weft_state_on_enter(w, ig, 7), "+InGame");
    add_logger(weft_state_on_exit(w, ig, 7), "-InGame");
    add_logger(weft_state_on_enter(w, co, 102), "+Fight");
    add_logger(weft_state_on_exit(w, co, 102), "-Fight");
    weft_component ig_res = weft_state_resource(w, ig);

    // computed states cannot be set and have no NextState
    assert_int_equal(weft_state_set_next(w, ig, 7), WEFT_ERR_IMMUTABLE);
    tw_expect_error(f, WEFT_ERR_IMMUTABLE, "InGame");
    assert_int_equal(weft_state_next_resource(w, ig), 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_IMMUTABLE);

    step_expect(w, "");
    assert_int_equal(calls, 1);
    assert_false(weft_resource_has(w, ig_res));
    assert_int_equal(value_of(w, ig), NONE);
    assert_int_equal(value_of(w, co), 100);
    assert_int_equal(cu.last[1], NONE); // Phase absent in the menu

    weft_state_set_next(w, t.app, GAME);
    step_expect(w, "+InGame");
    assert_true(weft_resource_has(w, ig_res));
    assert_int_equal(value_of(w, ig), 7);
    assert_int_equal(value_of(w, co), 101);

    // Phase changes: InGame is not recomputed (its source did not move)
    int before = calls;
    weft_state_set_next(w, t.phase, BATTLE);
    step_expect(w, "+Fight");
    assert_int_equal(calls, before);
    assert_int_equal(value_of(w, co), 102);

    // App re-entered with the same value: recomputed to the same value, no
    // transition of InGame
    weft_state_set_next(w, t.app, GAME);
    step_expect(w, "");
    assert_int_equal(calls, before + 1);

    weft_state_set_next(w, t.app, MENU);
    step_expect(w, "-Fight -InGame");
    assert_false(weft_resource_has(w, ig_res));
    assert_int_equal(value_of(w, co), 100);
}

// ---- state-scoped despawns ----

static weft_entity spawn_tag(weft_world *w, weft_component c, uint32_t v)
{
    weft_value val = {c, sizeof v, &v};
    weft_entity e = weft_spawn_with(w, &val, 1);
    assert_int_not_equal(e, 0);
    return e;
}

static void despawn_on_exit_removes_exactly_the_tagged(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    static const weft_state_value v[] = {{0, "Menu"}, {1, "Game"}, {2, "Pause"}};
    weft_state s = reg_default(w, "G", v, 3, 0);
    static const weft_state_value other_v[] = {{0, "Menu"}, {1, "Game"}};
    weft_state other = reg_default(w, "Other", other_v, 2, 0);
    weft_component on_exit = weft_state_despawn_on_exit(w, s);
    weft_component on_enter = weft_state_despawn_on_enter(w, s);
    weft_component other_exit = weft_state_despawn_on_exit(w, other);
    weft_component hp = tw_comp(w, "hp", sizeof(int), 0, WEFT_STORAGE_TABLE, 0);
    assert_int_not_equal(on_exit, 0);
    assert_int_not_equal(on_enter, 0);
    assert_int_equal(weft_state_transition(w), WEFT_OK);

    weft_entity menu_ui[3], game_ents[5], pause_ui[2], keep[4], enter_pause[2];
    for (int i = 0; i < 3; i++) {
        menu_ui[i] = spawn_tag(w, on_exit, 0);
    }
    for (int i = 0; i < 5; i++) {
        game_ents[i] = spawn_tag(w, on_exit, 1);
        int h = 10 + i;
        // in another archetype too
        if (i % 2) {
            assert_int_equal(weft_insert(w, game_ents[i], hp, &h, sizeof h), WEFT_OK);
        }
    }
    for (int i = 0; i < 2; i++) {
        pause_ui[i] = spawn_tag(w, on_exit, 2);
        enter_pause[i] = spawn_tag(w, on_enter, 2);
    }
    keep[0] = weft_spawn(w);
    keep[1] = spawn_tag(w, other_exit, 0); // another state's tag
    keep[2] = spawn_tag(w, on_enter, 0);
    keep[3] = spawn_tag(w, hp, 0);
    for (int i = 0; i < 4; i++) {
        assert_int_not_equal(keep[i], 0);
    }

    // Menu -> Game: exactly the Menu-tagged go
    weft_state_set_next(w, s, 1);
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    for (int i = 0; i < 3; i++) {
        assert_false(weft_is_alive(w, menu_ui[i]));
    }
    for (int i = 0; i < 5; i++) {
        assert_true(weft_is_alive(w, game_ents[i]));
    }
    // Game -> Pause: Game-tagged go, DespawnOnEnter(Pause) go too
    weft_state_set_next(w, s, 2);
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    for (int i = 0; i < 5; i++) {
        assert_false(weft_is_alive(w, game_ents[i]));
    }
    for (int i = 0; i < 2; i++) {
        assert_true(weft_is_alive(w, pause_ui[i]));
        assert_false(weft_is_alive(w, enter_pause[i]));
    }
    // Pause -> Pause (set to itself): its exit runs again, so its tagged go
    weft_state_set_next(w, s, 2);
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    for (int i = 0; i < 2; i++) {
        assert_false(weft_is_alive(w, pause_ui[i]));
    }
    for (int i = 0; i < 4; i++) {
        assert_true(weft_is_alive(w, keep[i]));
    }
    weft_world_stats stats;
    assert_int_equal(weft_world_get_stats(w, &stats), WEFT_OK);
    assert_int_equal(stats.live_entities, 4);

    // the sweep follows the message: one written by hand acts the same
    weft_entity hand = spawn_tag(w, on_exit, 1);
    weft_state_transition_event ev = {s, 1, 0, 0};
    assert_int_equal(weft_message_write(w, weft_state_transition_message(w, s), &ev,
                                        sizeof ev), WEFT_OK);
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    assert_false(weft_is_alive(w, hand));
    assert_int_equal(value_of(w, s), 2); // the state itself did not move
    assert_int_equal(weft_world_check(w), WEFT_OK);
}

// ---- run conditions and systems ----

typedef struct counts {
    int in_game, exists, changed, reads;
    uint32_t seen;
} counts;

static void count_sys(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (*(int *)user)++;
}

static weft_node add_counter(weft_schedule *s, const char *name, int *counter)
{
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.fn = count_sys;
    d.user = counter;
    weft_node n = weft_schedule_add_system(s, &d);
    assert_int_not_equal(n, 0);
    return n;
}

static weft_state g_phase_for_reader;

static void phase_reader(weft_system_ctx *ctx, void *user)
{
    counts *c = user;
    uint32_t v = 0;
    if (weft_system_state_get(ctx, g_phase_for_reader, &v) == WEFT_OK) {
        c->seen = v;
        c->reads++;
    }
}

static void conditions_in_state_exists_changed(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    tree t = make_tree(w);
    weft_schedule *upd = weft_schedule_create(w, "update");
    counts c;
    memset(&c, 0, sizeof c);
    weft_node a = add_counter(upd, "in-game", &c.in_game);
    weft_node b = add_counter(upd, "phase-exists", &c.exists);
    weft_node d = add_counter(upd, "app-changed", &c.changed);
    assert_int_equal(weft_schedule_add_condition(upd, a,
                     weft_condition_in_state(upd, t.app, GAME)), WEFT_OK);
    assert_int_equal(weft_schedule_add_condition(upd, b,
                     weft_condition_state_exists(upd, t.phase)), WEFT_OK);
    assert_int_equal(weft_schedule_add_condition(upd, d,
                     weft_condition_state_changed(upd, t.app)), WEFT_OK);
    // a system reading Phase through its declared access
    g_phase_for_reader = t.phase;
    weft_resource_use use = {weft_state_resource(w, t.phase), WEFT_ACCESS_READ};
    weft_system_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.name = "phase-reader";
    rd.fn = phase_reader;
    rd.user = &c;
    rd.resources = &use;
    rd.resource_count = 1;
    assert_int_not_equal(weft_schedule_add_system(upd, &rd), 0);

    assert_int_equal(weft_state_transition(w), WEFT_OK);
    assert_int_equal(weft_schedule_run(upd, 0.0), WEFT_OK);
    assert_int_equal(c.in_game, 0);
    assert_int_equal(c.exists, 0);
    assert_int_equal(c.changed, 1); // the first evaluation counts the existing state
    assert_int_equal(c.reads, 1);
    assert_int_equal(c.seen, NONE);
    assert_int_equal(weft_schedule_run(upd, 0.0), WEFT_OK);
    assert_int_equal(c.changed, 1);

    weft_state_set_next(w, t.app, GAME);
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    assert_int_equal(weft_schedule_run(upd, 0.0), WEFT_OK);
    assert_int_equal(c.in_game, 1);
    assert_int_equal(c.exists, 1);
    assert_int_equal(c.changed, 2);
    assert_int_equal(c.seen, SETUP);
    assert_int_equal(weft_schedule_run(upd, 0.0), WEFT_OK);
    assert_int_equal(c.in_game, 2);
    assert_int_equal(c.changed, 2); // no change since

    // set to its own value: a transition, but State did not change
    weft_state_set_next(w, t.app, GAME);
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    assert_int_equal(weft_schedule_run(upd, 0.0), WEFT_OK);
    assert_int_equal(c.changed, 2);

    weft_state_set_next(w, t.app, MENU);
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    assert_int_equal(weft_schedule_run(upd, 0.0), WEFT_OK);
    assert_int_equal(c.in_game, 3); // not in the menu
    assert_int_equal(c.exists, 3);
    assert_int_equal(c.changed, 3);
}

static void undeclared(weft_system_ctx *ctx, void *user)
{
    weft_state s = *(const weft_state *)user;
    uint32_t v;
    weft_system_state_get(ctx, s, &v);
}

static void undeclared_set(weft_system_ctx *ctx, void *user)
{
    weft_state s = *(const weft_state *)user;
    weft_system_state_set_next(ctx, s, GAME);
}

static void system_access_must_be_declared(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    static weft_state s;
    s = reg_default(w, "App", APP_V, 2, MENU);
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    weft_schedule *a = weft_schedule_create(w, "a");
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "reads-undeclared";
    d.fn = undeclared;
    d.user = &s;
    assert_int_not_equal(weft_schedule_add_system(a, &d), 0);
    assert_int_equal(weft_schedule_run(a, 0.0), WEFT_ERR_ACCESS_VIOLATION);
    weft_schedule *b = weft_schedule_create(w, "b");
    // READ on NextState is not enough to set it
    weft_resource_use use = {weft_state_next_resource(w, s), WEFT_ACCESS_READ};
    d.name = "sets-with-read";
    d.fn = undeclared_set;
    d.resources = &use;
    d.resource_count = 1;
    assert_int_not_equal(weft_schedule_add_system(b, &d), 0);
    assert_int_equal(weft_schedule_run(b, 0.0), WEFT_ERR_ACCESS_VIOLATION);
    const weft_next_state *ns =
        weft_resource_get(w, weft_state_next_resource(w, s), sizeof *ns);
    assert_int_equal(ns->pending, 0);
    // declaring WRITE on State is refused: it is immutable
    weft_schedule *c = weft_schedule_create(w, "c");
    weft_resource_use wr = {weft_state_resource(w, s), WEFT_ACCESS_WRITE};
    d.resources = &wr;
    d.name = "writes-state";
    assert_int_equal(weft_schedule_add_system(c, &d), 0);
    assert_int_equal(weft_last_status(w), WEFT_ERR_IMMUTABLE);
}

// ---- bad input ----

static uint32_t compute_zero(const uint32_t *src, int32_t n, void *user)
{
    (void)src;
    (void)n;
    (void)user;
    return 0;
}

static uint32_t compute_garbage(const uint32_t *src, int32_t n, void *user)
{
    (void)n;
    (void)user;
    return src[0] == GAME ? 999u : 0u;
}

typedef struct bad_case {
    const char *what;
    weft_status expect;
    const char *needle;
} bad_case;

static void bad_registrations_leave_world_unchanged(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_state app = reg_default(w, "App", APP_V, 2, MENU);
    static const weft_state_value dup_v[] = {{1, "A"}, {1, "B"}};
    static const weft_state_value dupn_v[] = {{1, "A"}, {2, "A"}};
    static const weft_state_value none_v[] = {{NONE, "A"}};
    static const weft_state_value noname_v[] = {{1, NULL}};
    static const weft_state_value ok_v[] = {{1, "A"}, {2, "B"}};
    weft_state bogus = 99;
    weft_state twice[2] = {app, app};
    weft_component ghost = tw_comp(w, "State<Taken>", sizeof(int), 0, WEFT_STORAGE_TABLE, 0);
    (void)ghost;

    for (int i = 0;; i++) {
        weft_state_desc d;
        memset(&d, 0, sizeof d);
        d.name = "X";
        d.values = ok_v;
        d.value_count = 2;
        d.initial = 1;
        bad_case bc = {NULL, WEFT_OK, NULL};
        switch (i) {
        case 0: d.name = NULL; bc = (bad_case){"no name", WEFT_ERR_INVALID_ARG, "name"}; break;
        case 1: d._start_canary = 1; bc = (bad_case){"canary", WEFT_ERR_INVALID_ARG, "canary"}; break;
        case 2: d.values = NULL; bc = (bad_case){"no values", WEFT_ERR_INVALID_ARG, "values"}; break;
        case 3: d.value_count = 0; bc = (bad_case){"0 values", WEFT_ERR_INVALID_ARG, "value_count"}; break;
        case 4: d.values = dup_v; bc = (bad_case){"value twice", WEFT_ERR_INVALID_ARG, "twice"}; break;
        case 5: d.values = dupn_v; bc = (bad_case){"name twice", WEFT_ERR_INVALID_ARG, "named"}; break;
        case 6: d.values = none_v; d.value_count = 1; bc = (bad_case){"NONE value", WEFT_ERR_INVALID_ARG, "NONE"}; break;
        case 7: d.values = noname_v; d.value_count = 1; bc = (bad_case){"nameless value", WEFT_ERR_INVALID_ARG, "name"}; break;
        case 8: d.initial = 5; bc = (bad_case){"initial not a value", WEFT_ERR_INVALID_ARG, "initial"}; break;
        case 9: d.kind = (weft_state_kind)7; bc = (bad_case){"kind", WEFT_ERR_INVALID_ARG, "kind"}; break;
        case 10: d.name = "App"; bc = (bad_case){"name taken", WEFT_ERR_ALREADY_EXISTS, "App"}; break;
        case 11: d.name = "Taken"; bc = (bad_case){"derived name taken", WEFT_ERR_ALREADY_EXISTS, "State<Taken>"}; break;
        case 12: d.kind = WEFT_STATE_KIND_SUB; bc = (bad_case){"sub without source", WEFT_ERR_INVALID_ARG, "source"}; break;
        case 13: d.kind = WEFT_STATE_KIND_SUB; d.source = bogus; d.source_value = GAME;
            bc = (bad_case){"sub of unknown state", WEFT_ERR_NOT_FOUND, "not registered"}; break;
        case 14: d.kind = WEFT_STATE_KIND_SUB; d.source = app; d.source_value = 42;
            bc = (bad_case){"sub whose source never exists", WEFT_ERR_NOT_FOUND, "never exist"}; break;
        case 15: d.source = app; bc = (bad_case){"source on a default state", WEFT_ERR_INVALID_ARG, "sub states"}; break;
        case 16: d.kind = WEFT_STATE_KIND_COMPUTED; d.sources = &app; d.source_count = 1;
            bc = (bad_case){"computed without compute", WEFT_ERR_INVALID_ARG, "compute"}; break;
        case 17: d.kind = WEFT_STATE_KIND_COMPUTED; d.compute = compute_zero; d.sources = &bogus; d.source_count = 1;
            bc = (bad_case){"computed of unknown state", WEFT_ERR_NOT_FOUND, "not registered"}; break;
        case 18: d.kind = WEFT_STATE_KIND_COMPUTED; d.compute = compute_zero; d.sources = twice; d.source_count = 2;
            bc = (bad_case){"source twice", WEFT_ERR_INVALID_ARG, "twice"}; break;
        case 19: d.kind = WEFT_STATE_KIND_COMPUTED; d.compute = compute_zero; d.sources = &app; d.source_count = 0;
            bc = (bad_case){"no sources", WEFT_ERR_INVALID_ARG, "source_count"}; break;
        case 20: d.compute = compute_zero; bc = (bad_case){"compute on a default state", WEFT_ERR_INVALID_ARG, "computed"}; break;
        case 21: d.value_count = WEFT_MAX_STATE_VALUES + 1; bc = (bad_case){"too many values", WEFT_ERR_INVALID_ARG, "value_count"}; break;
        default: break;
        }
        if (!bc.what) {
            break;
        }
        tw_snap before = tw_snap_take(w);
        weft_world_stats st0;
        weft_world_get_stats(w, &st0);
        weft_state got = weft_state_register(w, &d);
        if (got != 0) {
            fail_msg("case %d (%s) registered", i, bc.what);
        }
        tw_expect_error(f, bc.expect, bc.needle);
        tw_snap_expect_same(w, &before);
        weft_world_stats st1;
        weft_world_get_stats(w, &st1);
        assert_int_equal(st0.components, st1.components);
    }
    assert_int_equal(weft_state_register(w, NULL), 0);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "NULL");
    assert_int_equal(weft_state_lookup(w, "X"), 0);
    assert_int_equal(weft_state_lookup(w, "App"), app);
}

static void bad_calls_clear_status_world_unchanged(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    tree t = make_tree(w);
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    assert_int_equal(weft_state_set_next(w, t.app, GAME), WEFT_OK);
    weft_schedule *s = weft_schedule_create(w, "s");
    tw_snap before = tw_snap_take(w);

    // a value that was not registered: nothing queued, the queued one stays
    assert_int_equal(weft_state_set_next(w, t.app, 5), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "not a value");
    // unknown state type
    assert_int_equal(weft_state_set_next(w, 77, 0), WEFT_ERR_NOT_FOUND);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "77");
    assert_int_equal(weft_state_set_next(w, 0, 0), WEFT_ERR_NOT_FOUND);
    uint32_t v;
    assert_int_equal(weft_state_get(w, 77, &v), WEFT_ERR_NOT_FOUND);
    assert_int_equal(weft_state_get(w, t.app, NULL), WEFT_ERR_INVALID_ARG);
    assert_false(weft_state_exists(w, 77));
    assert_null(weft_state_on_enter(w, 77, 0));
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, NULL);
    assert_null(weft_state_on_enter(w, t.app, 5));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "not a value");
    assert_null(weft_state_on_transition(w, t.app, MENU, 9));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "not a value");
    assert_null(weft_state_name(w, 77));
    assert_null(weft_state_value_name(w, t.app, 5));
    assert_string_equal(weft_state_value_name(w, t.app, GAME), "Game");
    assert_string_equal(weft_state_name(w, t.phase), "Phase");
    assert_int_equal(weft_state_resource(w, 77), 0);
    assert_int_equal(weft_state_despawn_on_exit(w, 77), 0);
    assert_int_equal(weft_state_transition_message(w, 77), 0);
    tw_snap before_s = tw_snap_take(w);
    assert_null(weft_condition_in_state(s, t.app, 5));
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "not a value");
    assert_null(weft_condition_in_state(s, 77, 0));
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, NULL);
    assert_null(weft_condition_state_exists(s, 77));
    assert_null(weft_condition_state_changed(s, 0));
    tw_snap_expect_same(w, &before_s);
    tw_snap_expect_same(w, &before);

    // the owned schedules cannot be destroyed by hand
    weft_schedule *on = weft_state_on_enter(w, t.app, GAME);
    assert_non_null(on);
    assert_int_equal(weft_schedule_destroy(on), WEFT_ERR_INVALID_ARG);
    tw_expect_error(f, WEFT_ERR_INVALID_ARG, "belongs to a state");
    assert_ptr_equal(weft_state_on_enter(w, t.app, GAME), on);
    // a schedule created by hand under the derived name is not taken over
    assert_non_null(weft_schedule_create(w, "OnExit(App::Game)"));
    assert_null(weft_state_on_exit(w, t.app, GAME));
    tw_expect_error(f, WEFT_ERR_ALREADY_EXISTS, "OnExit(App::Game)");

    // the queued GAME survived the bad calls
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    assert_int_equal(value_of(w, t.app), GAME);

    // a bad value written straight into NextState: dropped at the step
    weft_next_state *m =
        weft_resource_get_mut(w, weft_state_next_resource(w, t.app), sizeof *m);
    *m = (weft_next_state){55, 1};
    assert_int_equal(weft_state_transition(w), WEFT_ERR_NOT_FOUND);
    tw_expect_error(f, WEFT_ERR_NOT_FOUND, "55");
    assert_int_equal(value_of(w, t.app), GAME);
    assert_int_equal(weft_state_transition(w), WEFT_OK);
}

static uint32_t g_nested_status;

static void nested_transition(weft_system_ctx *ctx, void *user)
{
    (void)user;
    g_nested_status = (uint32_t)weft_state_transition(weft_system_world(ctx));
}

static void register_in_transition(weft_system_ctx *ctx, void *user)
{
    (void)user;
    static const weft_state_value v[] = {{1, "A"}};
    weft_state_desc d;
    memset(&d, 0, sizeof d);
    d.name = "Late";
    d.values = v;
    d.value_count = 1;
    d.initial = 1;
    if (weft_state_register(weft_system_world(ctx), &d) == 0) {
        g_nested_status = (uint32_t)weft_last_status(weft_system_world(ctx));
    }
}

static void compute_errors_and_nesting(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_state app = reg_default(w, "App", APP_V, 2, MENU);
    static const weft_state_value cv[] = {{0, "Zero"}};
    weft_state_desc d;
    memset(&d, 0, sizeof d);
    d.name = "Bad";
    d.kind = WEFT_STATE_KIND_COMPUTED;
    d.values = cv;
    d.value_count = 1;
    d.sources = &app;
    d.source_count = 1;
    d.compute = compute_garbage;
    weft_state bad = weft_state_register(w, &d);
    assert_int_not_equal(bad, 0);
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    assert_int_equal(value_of(w, bad), 0);
    weft_state_set_next(w, app, GAME);
    assert_int_equal(weft_state_transition(w), WEFT_ERR_CALLBACK);
    tw_expect_error(f, WEFT_ERR_CALLBACK, "999");
    assert_int_equal(value_of(w, app), GAME); // the rest of the step happened
    assert_int_equal(value_of(w, bad), 0);    // the computed state stayed

    // a transition from inside a transition, and a registration there
    weft_system_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.name = "nested";
    sd.fn = nested_transition;
    sd.flags = WEFT_SYSTEM_EXCLUSIVE;
    assert_int_not_equal(weft_schedule_add_system(weft_state_on_enter(w, app, MENU), &sd), 0);
    sd.name = "register";
    sd.fn = register_in_transition;
    assert_int_not_equal(weft_schedule_add_system(weft_state_on_exit(w, app, GAME), &sd), 0);
    g_nested_status = 0;
    weft_state_set_next(w, app, MENU);
    weft_state_transition(w);
    assert_int_equal(g_nested_status, WEFT_ERR_WRONG_PHASE);
    assert_int_equal(weft_state_lookup(w, "Late"), 0);
    assert_int_equal(value_of(w, app), MENU);
}

// Every allocation of a registration and of a transition step may fail:
// each run either succeeds or reports OUT_OF_MEMORY with the world as it
// was (registration) or consistent (the step).
static void out_of_memory_registration_and_step(void **state)
{
    tw_fixture *f = *state;
    weft_world *w = f->w;
    weft_state app = reg_default(w, "App", APP_V, 2, MENU);
    bool done = false;
    for (int64_t n = 1; !done && n < 200; n++) {
        tw_snap before = tw_snap_take(w);
        weft_world_stats st0;
        weft_world_get_stats(w, &st0);
        tw_alloc_fail_nth(&f->alloc, n, false);
        weft_state_desc d;
        memset(&d, 0, sizeof d);
        d.name = "Phase";
        d.kind = WEFT_STATE_KIND_SUB;
        d.values = PHASE_V;
        d.value_count = 2;
        d.initial = SETUP;
        d.source = app;
        d.source_value = GAME;
        weft_state s = weft_state_register(w, &d);
        bool injected = tw_alloc_injected(&f->alloc) > 0;
        tw_alloc_disarm(&f->alloc);
        if (s) {
            done = true;
            break;
        }
        assert_true(injected);
        tw_expect_error(f, WEFT_ERR_OUT_OF_MEMORY, NULL);
        tw_snap_expect_same_content(w, &before);
        weft_world_stats st1;
        weft_world_get_stats(w, &st1);
        assert_int_equal(st0.components, st1.components);
        assert_int_equal(weft_state_lookup(w, "Phase"), 0);
    }
    assert_true(done);
    weft_state phase = weft_state_lookup(w, "Phase");
    add_logger(weft_state_on_enter(w, phase, SETUP), "+Setup");
    assert_int_equal(weft_state_transition(w), WEFT_OK);
    done = false;
    for (int64_t n = 1; !done && n < 200; n++) {
        weft_state_set_next(w, app, GAME);
        tw_alloc_fail_nth(&f->alloc, n, false);
        weft_status st = weft_state_transition(w);
        bool injected = tw_alloc_injected(&f->alloc) > 0;
        tw_alloc_disarm(&f->alloc);
        assert_int_equal(weft_world_check(w), WEFT_OK);
        if (!injected) {
            assert_int_equal(st, WEFT_OK);
            done = true;
            break;
        }
        if (st != WEFT_OK) {
            assert_true(st == WEFT_ERR_OUT_OF_MEMORY);
        }
        // back to the menu for the next attempt
        weft_state_set_next(w, app, MENU);
        assert_int_equal(weft_state_transition(w), WEFT_OK);
        assert_int_equal(value_of(w, app), MENU);
    }
    assert_true(done);
    assert_int_equal(value_of(w, phase), SETUP);
}

// ---- rollback: a snapshot restored into a fresh world with the same
// registrations continues exactly like the original ----

typedef struct rb_world {
    tw_fixture *f;
    tree t;
    weft_component hp;
    char log[1024];
} rb_world;

static void rb_log(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    // user: "<label>\0" followed by the world's log buffer address
    const char *label = user;
    char *log = *(char *const *)(label + 16);
    size_t n = strlen(log);
    snprintf(log + n, 1024 - n, "%s%s", n ? " " : "", label);
}

static void rb_add(rb_world *rw, weft_schedule *s, char *slot, const char *label)
{
    snprintf(slot, 16, "%s", label);
    char *log = rw->log;
    memcpy(slot + 16, &log, sizeof log);
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = label;
    d.fn = rb_log;
    d.user = slot;
    assert_int_not_equal(weft_schedule_add_system(s, &d), 0);
}

static void rb_setup(rb_world *rw, char slots[][32])
{
    rw->f = tw_fixture_new();
    assert_non_null(rw->f);
    weft_world *w = rw->f->w;
    rw->t = make_tree(w);
    rw->hp = tw_comp(w, "hp", sizeof(int), 0, WEFT_STORAGE_TABLE, 0);
    rb_add(rw, weft_state_on_enter(w, rw->t.app, MENU), slots[0], "+Menu");
    rb_add(rw, weft_state_on_enter(w, rw->t.app, GAME), slots[1], "+Game");
    rb_add(rw, weft_state_on_exit(w, rw->t.app, GAME), slots[2], "-Game");
    rb_add(rw, weft_state_on_enter(w, rw->t.phase, SETUP), slots[3], "+Setup");
    rb_add(rw, weft_state_on_exit(w, rw->t.phase, SETUP), slots[4], "-Setup");
}

static void rb_step(rb_world *rw, weft_state s, uint32_t v)
{
    if (s) {
        assert_int_equal(weft_state_set_next(rw->f->w, s, v), WEFT_OK);
    }
    rw->log[0] = '\0';
    assert_int_equal(weft_state_transition(rw->f->w), WEFT_OK);
    weft_messages_update(rw->f->w);
}

static void snapshot_restore_continues_like_the_original(void **state)
{
    (void)state;
    static char slots_a[5][32], slots_b[5][32];
    static rb_world a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    rb_setup(&a, slots_a);
    rb_setup(&b, slots_b); // registered, never stepped: still empty
    weft_world *wa = a.f->w;
    weft_world *wb = b.f->w;
    rb_step(&a, 0, 0);
    assert_string_equal(a.log, "+Menu");
    rb_step(&a, a.t.app, GAME);
    assert_string_equal(a.log, "+Game +Setup");
    weft_component ex = weft_state_despawn_on_exit(wa, a.t.app);
    for (int i = 0; i < 4; i++) {
        uint32_t tag = (uint32_t)(i % 2 ? GAME : MENU);
        int hp = i;
        weft_value v[2] = {{ex, sizeof tag, &tag}, {a.hp, sizeof hp, &hp}};
        assert_int_not_equal(weft_spawn_with(wa, v, 2), 0);
    }
    size_t len = 0;
    assert_int_equal(weft_snapshot_write(wa, NULL, 0, &len), WEFT_ERR_CAPACITY);
    unsigned char *blob = test_malloc(len);
    assert_int_equal(weft_snapshot_write(wa, blob, len, &len), WEFT_OK);
    assert_int_equal(weft_snapshot_restore(wb, blob, len), WEFT_OK);
    test_free(blob);
    assert_true(weft_world_hash(wa) == weft_world_hash(wb));
    uint32_t v = 0;
    assert_int_equal(weft_state_get(wb, b.t.phase, &v), WEFT_OK);
    assert_int_equal(v, SETUP);
    // both continue the same way: nothing re-entered in the restored one,
    // the same entities swept
    const weft_state next_states[3] = {0, a.t.app, a.t.app};
    const uint32_t next_values[3] = {0, MENU, GAME};
    const char *const logs[3] = {"", "-Setup -Game +Menu", "+Game +Setup"};
    for (int k = 0; k < 3; k++) {
        rb_step(&a, next_states[k], next_values[k]);
        rb_step(&b, next_states[k], next_values[k]);
        assert_string_equal(a.log, logs[k]);
        assert_string_equal(b.log, logs[k]);
        if (weft_world_hash(wa) != weft_world_hash(wb)) {
            fail_msg("step %d: the restored world's hash differs", k);
        }
        // leaving Game sweeps the Game-tagged pair, leaving Menu the rest
        weft_world_stats st;
        assert_int_equal(weft_world_get_stats(wb, &st), WEFT_OK);
        assert_int_equal(st.live_entities, k == 0 ? 4 : k == 1 ? 2 : 0);
    }
    tw_fixture_free(a.f);
    tw_fixture_free(b.f);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tw_setup, tw_teardown)
    const struct CMUnitTest tests[] = {
        T(state_tree_exits_leaf_to_root_enters_root_to_leaf),
        T(on_transition_runs_for_its_pair_only),
        T(next_state_last_write_wins),
        T(substate_resource_exists_only_under_source_value),
        T(computed_state_removed_when_compute_returns_none),
        T(despawn_on_exit_removes_exactly_the_tagged),
        T(conditions_in_state_exists_changed),
        T(system_access_must_be_declared),
        T(bad_registrations_leave_world_unchanged),
        T(bad_calls_clear_status_world_unchanged),
        T(compute_errors_and_nesting),
        T(out_of_memory_registration_and_step),
        cmocka_unit_test(snapshot_restore_continues_like_the_original),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

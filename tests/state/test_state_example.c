// tests/state/test_state_example.c - examples/11_states.c (the menu -> game
// -> pause -> game over demo on the app, with DespawnOnExit cleanup) run on
// 1, 2 and 4 threads: its census and weft_world_hash must be identical (the
// par_each walk really splits into chunk tasks with 4,096 enemies). Runs
// under TSan in CI.
// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "needs_threads.h"

#define WEFT_STATES_EXAMPLE_NO_MAIN
#include "../../examples/11_states.c"

static void states_example_same_world_on_1_2_4_threads(void **state)
{
    (void)state;
    NEEDS_THREADS("compares 1, 2 and 4 workers");
    char first[256];
    uint64_t h1 = states_demo_run(1, 150, 4096, NULL, first, sizeof first);
    // the script went through every screen: six games were started and
    // the last one ended (only its score card is left)
    assert_non_null(strstr(first, "games 6"));
    for (int32_t threads = 2; threads <= 4; threads += 2) {
        char summary[256];
        uint64_t h = states_demo_run(threads, 150, 4096, NULL, summary, sizeof summary);
        assert_string_equal(summary, first);
        if (h != h1) {
            fail_msg("world hash on %d threads %016llx != %016llx on 1", (int)threads,
                     (unsigned long long)h, (unsigned long long)h1);
        }
    }
}

static void states_example_cleans_up_each_screen(void **state)
{
    (void)state;
    // stopped in the middle of the first game's pause: the menu's buttons
    // are gone, the arena and the pause overlay exist
    char summary[256];
    states_demo_run(weft_max_threads() < 2 ? 1 : 2, 16, 512, NULL, summary, sizeof summary);
    char screen[32];
    int games, best, hp;
    long long buttons, enemies, overlays, cards;
    assert_int_equal(sscanf(summary, "screen %31[^,], games %d, best %d, hp %d; buttons %lld, "
                                     "enemies %lld, overlays %lld, score cards %lld",
                            screen, &games, &best, &hp, &buttons, &enemies, &overlays,
                            &cards), 8);
    assert_string_equal(screen, "Game");
    assert_int_equal(games, 1);
    assert_int_equal(buttons, 0);
    assert_int_equal(overlays, 1);
    assert_int_equal(cards, 0);
    // every hit point lost is one enemy that reached the player and went
    assert_int_equal(enemies + (10 - hp), 512);
    // with 512 enemies the first game ends at update 25 and the menu is
    // back at 31 (examples/11_states.c prints the transitions): on the
    // game-over screen only its score card is left ...
    states_demo_run(2, 28, 512, NULL, summary, sizeof summary);
    assert_non_null(strstr(summary, "screen GameOver"));
    assert_non_null(strstr(summary, "buttons 0, enemies 0, overlays 0, score cards 1"));
    // ... and back in the menu, nothing of the game is left
    states_demo_run(2, 32, 512, NULL, summary, sizeof summary);
    assert_non_null(strstr(summary, "screen Menu"));
    assert_non_null(strstr(summary, "buttons 3, enemies 0, overlays 0, score cards 0"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(states_example_same_world_on_1_2_4_threads),
        cmocka_unit_test(states_example_cleans_up_each_screen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* bindings/python/tests/c_system.c - a system written in C for the Python
 * binding's tests: a function of the exact weft_system_fn type, so a test
 * can run a C system beside Python ones without calling some other C
 * function through an incompatible type. Built by tests/CMakeLists.txt as a
 * module; its path reaches the tests in WEFT_TEST_C_SYSTEM.
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>

#include "weft.h"

__attribute__((visibility("default"))) void pytest_count_runs(weft_system_ctx *ctx,
                                                                void *user);

/* Counts its runs in the int32_t that `user` points at (one instance of a
 * system never runs twice at once, so a plain increment is enough). */
void pytest_count_runs(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    ++*(int32_t *)user;
}

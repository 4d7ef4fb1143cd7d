// tests/support/needs_threads.h - skipping a test that is about threads in
// the build without them (-DWEFT_THREADS=OFF).
// SPDX-License-Identifier: MIT
//
// NEEDS_THREADS("why") as the first statement of a cmocka test: in the
// single-threaded build it prints the test's name and the reason and
// skips the test (cmocka reports it as SKIPPED, by name); otherwise it
// does nothing. Only for tests whose subject is threads (several worker
// counts compared, the pool, a pipelined thread, concurrent calls): every
// other test runs in both builds. Include after <cmocka.h>.
#ifndef WEFT_TEST_NEEDS_THREADS_H
#define WEFT_TEST_NEEDS_THREADS_H

#include <stdio.h>

#if defined(WEFT_THREADS) && !WEFT_THREADS
#define NEEDS_THREADS(why)                                                                         \
    do {                                                                                           \
        printf("[  SKIP    ] %s: needs threads (this build has WEFT_THREADS=OFF): %s\n",           \
               __func__, why);                                                                     \
        fflush(stdout);                                                                            \
        skip();                                                                                    \
    } while (0)
#else
#define NEEDS_THREADS(why) ((void)0)
#endif

#endif

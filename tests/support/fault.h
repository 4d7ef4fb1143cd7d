// tests/support/fault.h - the fault-injection driver the fault tests share.
// SPDX-License-Identifier: MIT
//
// tw_fault_run builds one fresh case per allocation number n = 1, 2, ...,
// makes allocation n fail (once, or from n on when sticky) while the case
// runs, and stops at the first n the case runs past without reaching. A
// run that fails must fail with OUT_OF_MEMORY after an injected failure,
// leave weft_world_check clean, and succeed when run again with memory
// back (runs are resumable: they keep their progress in the case). The
// scenario's own checks ("nothing changed", the final content) are its
// callbacks'.
#ifndef WEFT_TEST_FAULT_H
#define WEFT_TEST_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "test_world.h"

typedef struct tw_fault {
    const char *name;   // the scenario, for messages
    int64_t n;          // the allocation that fails in this case
    bool sticky;        // every allocation from n on fails too
    tw_fixture *f;      // set by prepare; freed by the driver (zero live bytes)
    void *state;        // the scenario's own, set by prepare
    void *user;         // as given to tw_fault_run
} tw_fault;

typedef struct tw_fault_ops {
    // Builds the case (c->f, c->state) before allocation n is armed.
    void (*prepare)(tw_fault *c);
    // The calls under test: WEFT_OK, or the status of the call that failed.
    weft_status (*run)(tw_fault *c);
    // Optional: after a failed run, before the retry (what a failure
    // promises: nothing changed, the error recorded, ...).
    void (*failed)(tw_fault *c);
    // Optional: once the case ran to its end (the final content).
    void (*verify)(tw_fault *c);
    // Optional: frees c->state; the fixture is freed after it.
    void (*finish)(tw_fault *c);
} tw_fault_ops;

// Runs the cases; returns how many allocations the scenario makes. Fails
// the test (cmocka) on a broken promise, or when allocation failures are
// still reached after max_n cases.
int64_t tw_fault_run(const char *name, const tw_fault_ops *ops, void *user, bool sticky,
                     int64_t max_n);

#endif

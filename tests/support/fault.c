// tests/support/fault.c - the fault-injection driver (see fault.h).
// SPDX-License-Identifier: MIT
#include "fault.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

static void fault_check_world(const tw_fault *c, const char *when)
{
    if (weft_world_check(c->f->w) != WEFT_OK) {
        fail_msg("%s: N=%lld%s: %s, weft_world_check: %s", c->name, (long long)c->n,
                 c->sticky ? " sticky" : "", when, weft_last_error(c->f->w));
    }
}

int64_t tw_fault_run(const char *name, const tw_fault_ops *ops, void *user, bool sticky,
                     int64_t max_n)
{
    for (int64_t n = 1; n <= max_n; n++) {
        tw_fault c = {name, n, sticky, NULL, NULL, user};
        ops->prepare(&c);
        assert_non_null(c.f);
        weft_clear_error(c.f->w);
        tw_alloc_fail_nth(&c.f->alloc, n, sticky);
        weft_status st = ops->run(&c);
        int64_t injected = tw_alloc_injected(&c.f->alloc);
        tw_alloc_disarm(&c.f->alloc);
        if (st != WEFT_OK) {
            if (st != WEFT_ERR_OUT_OF_MEMORY) {
                fail_msg("%s: N=%lld%s: failed with %s (%s), expected OUT_OF_MEMORY", name,
                         (long long)n, sticky ? " sticky" : "", weft_status_name(st),
                         weft_last_error(c.f->w));
            }
            if (injected == 0) {
                fail_msg("%s: N=%lld: OUT_OF_MEMORY without an injected failure", name,
                         (long long)n);
            }
            if (ops->failed) {
                ops->failed(&c);
            }
            fault_check_world(&c, "after the failure");
            weft_status again = ops->run(&c); // memory is back: the rest succeeds
            if (again != WEFT_OK) {
                fail_msg("%s: N=%lld%s: the run after the failure failed with %s (%s)", name,
                         (long long)n, sticky ? " sticky" : "", weft_status_name(again),
                         weft_last_error(c.f->w));
            }
        }
        fault_check_world(&c, "at the end");
        if (ops->verify) {
            ops->verify(&c);
        }
        if (ops->finish) {
            ops->finish(&c);
        }
        tw_fixture_free(c.f); // asserts zero live bytes and hook balance
        if (st == WEFT_OK && injected == 0) {
            return n - 1; // ran to the end without reaching allocation n
        }
    }
    fail_msg("%s: still hitting allocation failures after %lld cases", name, (long long)max_n);
    return -1;
}

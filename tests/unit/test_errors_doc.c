// tests/unit/test_errors_doc.c - docs/errors.md is generated from the status
// table and must match it.
// SPDX-License-Identifier: MIT
//
// Run with WEFT_REGEN_DOCS=1 to rewrite docs/errors.md from the table
// (then commit it); without it, the test fails when the file is stale.
#include <stdio.h>
#include <stdlib.h>

#include "unit.h"

#ifndef WEFT_SOURCE_DIR
#error "WEFT_SOURCE_DIR must name the source tree"
#endif

static size_t errors_doc(char *buf, size_t cap)
{
    size_t n = 0;
    n += (size_t)snprintf(buf + n, cap - n,
                          "<!-- docs/errors.md - every weft_status, generated from "
                          "src/core/status.c by tests/unit/test_errors_doc.c "
                          "(WEFT_REGEN_DOCS=1). SPDX-License-Identifier: MIT -->\n"
                          "# weft status codes\n\n"
                          "Every mutating call returns a `weft_status`; calls that "
                          "return a handle or pointer return 0/NULL instead. The last "
                          "failure of a world is kept in its error slot "
                          "(`weft_last_status`, `weft_last_error`, which names what was "
                          "wrong). Values are never renumbered; new ones are appended.\n\n"
                          "| value | name | meaning |\n|---:|---|---|\n");
    for (int s = 0; s < WEFT_STATUS_NUM && n < cap; s++) {
        n += (size_t)snprintf(buf + n, cap - n, "| %d | `%s` | %s |\n", s,
                              wf_status_name((weft_status)s),
                              wf_status_message((weft_status)s));
    }
    return n;
}

static void errors_doc_matches_status_table(void **state)
{
    (void)state;
    static char want[16384];
    size_t n = errors_doc(want, sizeof want);
    assert_true(n < sizeof want);
    const char *path = WEFT_SOURCE_DIR "/docs/errors.md";
    if (getenv("WEFT_REGEN_DOCS")) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(want, 1, n, f), n);
        fclose(f);
    }
    static char have[16384];
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail_msg("%s is missing: run this test with WEFT_REGEN_DOCS=1", path);
    }
    size_t got = fread(have, 1, sizeof have - 1, f);
    fclose(f);
    have[got] = '\0';
    if (got != n || memcmp(have, want, n) != 0) {
        fail_msg("%s is stale: run this test with WEFT_REGEN_DOCS=1 and commit it", path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(errors_doc_matches_status_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

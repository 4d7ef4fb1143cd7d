// tests/unit/test_status.c - every weft_status has a name and a message.
// SPDX-License-Identifier: MIT
#include "unit.h"

static void status_every_value_has_a_row(void **state)
{
    (void)state;
    for (int s = 0; s < WEFT_STATUS_NUM; s++) {
        const char *name = wf_status_name((weft_status)s);
        const char *msg = wf_status_message((weft_status)s);
        assert_non_null(name);
        assert_non_null(msg);
        assert_true(strncmp(name, "WEFT_", 5) == 0);
        assert_true(strlen(msg) > 5);
        // names are unique
        for (int t = 0; t < s; t++) {
            assert_string_not_equal(name, wf_status_name((weft_status)t));
        }
    }
}

static void status_out_of_range_is_reported(void **state)
{
    (void)state;
    assert_null(wf_status_name(WEFT_STATUS_NUM));
    assert_string_equal(weft_status_name((weft_status)999), "WEFT_UNKNOWN");
    assert_string_equal(weft_status_str((weft_status)-1), "unknown status");
    assert_string_equal(weft_status_name(WEFT_ERR_STALE_ENTITY), "WEFT_ERR_STALE_ENTITY");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(status_every_value_has_a_row),
        cmocka_unit_test(status_out_of_range_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/unit/test_migrate_rules.c - the conversions a layout migration
// accepts (src/module/migrate.c, wf_mig_widens): every pair of scalar
// kinds against a table written out by hand, and two properties (no
// conversion is accepted both ways; every accepted one keeps every value
// of its source kind's extremes).
// SPDX-License-Identifier: MIT
#include "unit.h"

#include "module/migrate.h"

#define K(x) WEFT_KIND_##x

typedef struct widen_case {
    weft_kind from;
    weft_kind to;
} widen_case;

// Every accepted pair of different kinds; any other pair must be refused.
static const widen_case accepted[] = {
    {K(BOOL), K(I8)},  {K(BOOL), K(I16)}, {K(BOOL), K(I32)}, {K(BOOL), K(I64)},
    {K(BOOL), K(U8)},  {K(BOOL), K(U16)}, {K(BOOL), K(U32)}, {K(BOOL), K(U64)},
    {K(I8), K(I16)},   {K(I8), K(I32)},   {K(I8), K(I64)},   {K(I8), K(F32)},
    {K(I8), K(F64)},   {K(I16), K(I32)},  {K(I16), K(I64)},  {K(I16), K(F32)},
    {K(I16), K(F64)},  {K(I32), K(I64)},  {K(I32), K(F64)},  {K(U8), K(U16)},
    {K(U8), K(U32)},   {K(U8), K(U64)},   {K(U8), K(I16)},   {K(U8), K(I32)},
    {K(U8), K(I64)},   {K(U8), K(F32)},   {K(U8), K(F64)},   {K(U16), K(U32)},
    {K(U16), K(U64)},  {K(U16), K(I32)},  {K(U16), K(I64)},  {K(U16), K(F32)},
    {K(U16), K(F64)},  {K(U32), K(U64)},  {K(U32), K(I64)},  {K(U32), K(F64)},
    {K(F32), K(F64)},
};

static bool listed(weft_kind a, weft_kind b)
{
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        if (accepted[i].from == a && accepted[i].to == b) {
            return true;
        }
    }
    return false;
}

static void widening_table(void **state)
{
    (void)state;
    for (int a = K(BOOL); a <= K(ENTITY); a++) {
        for (int b = K(BOOL); b <= K(ENTITY); b++) {
            bool want = a == b || listed((weft_kind)a, (weft_kind)b);
            if (wf_mig_widens((weft_kind)a, (weft_kind)b) != want) {
                print_error("%s -> %s\n", wf_kind_name((weft_kind)a), wf_kind_name((weft_kind)b));
            }
            assert_int_equal(wf_mig_widens((weft_kind)a, (weft_kind)b), want);
        }
    }
    // structs, strings and enums are matched field by field, not here
    assert_false(wf_mig_widens(K(STRUCT), K(STRUCT)));
    assert_false(wf_mig_widens(K(NONE), K(NONE)));
    assert_false(wf_mig_widens(K(STRING), K(I64)));
}

// An accepted conversion is exact at the source kind's extremes, and the
// opposite direction is refused.
static void accepted_conversions_are_exact(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        weft_kind a = accepted[i].from, b = accepted[i].to;
        assert_false(wf_mig_widens(b, a));
        long double lo, hi;
        switch (a) {
        case K(BOOL): lo = 0; hi = 1; break;
        case K(I8): lo = INT8_MIN; hi = INT8_MAX; break;
        case K(I16): lo = INT16_MIN; hi = INT16_MAX; break;
        case K(I32): lo = INT32_MIN; hi = INT32_MAX; break;
        case K(U8): lo = 0; hi = UINT8_MAX; break;
        case K(U16): lo = 0; hi = UINT16_MAX; break;
        case K(U32): lo = 0; hi = UINT32_MAX; break;
        default: continue; // F32 -> F64 is exact by IEEE 754
        }
        long double vals[2] = {lo, hi};
        for (int k = 0; k < 2; k++) {
            long double v = vals[k], back;
            switch (b) {
            case K(I8): back = (int8_t)v; break;
            case K(I16): back = (int16_t)v; break;
            case K(I32): back = (int32_t)v; break;
            case K(I64): back = (int64_t)v; break;
            case K(U8): back = (uint8_t)v; break;
            case K(U16): back = (uint16_t)v; break;
            case K(U32): back = (uint32_t)v; break;
            case K(U64): back = (uint64_t)v; break;
            case K(F32): back = (float)v; break;
            default: back = (double)v; break;
            }
            assert_true(back == v);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(widening_table),
        cmocka_unit_test(accepted_conversions_are_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

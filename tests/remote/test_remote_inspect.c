/* tests/remote/test_remote_inspect.c - the weft.* remote methods on an app:
 * world counters, archetypes, schedules with systems, edges, ambiguities
 * and timings, the trace, diagnostics, states and stepping control.
 * SPDX-License-Identifier: MIT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "remote_fixture.h"

static int runs_a, runs_b;

static void sys_a(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
    runs_a++;
}

static void sys_b(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
    runs_b++;
}

static int runs_c;

static void sys_c(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
    runs_c++;
}

static json_t *ok(json_t *resp)
{
    assert_non_null(resp);
    if (fx_code(resp) != 0) {
        fail_msg("error: %s", json_dumps(resp, 0));
    }
    return json_object_get(resp, "result");
}

static void test_inspect_app(void **state)
{
    (void)state;
    fx_world fx;
    fx_make(&fx);
    weft_app_desc ad = {0};
    ad.world = fx.w;
    weft_app *app = weft_app_create(&ad);
    assert_non_null(app);
    /* two systems writing Position with no order: one ambiguity */
    weft_query_desc q = {0};
    q.terms[0].id = fx.pos;
    q.terms[0].access = WEFT_ACCESS_WRITE;
    q.term_count = 1;
    weft_system_desc sd = {0};
    sd.name = "a";
    sd.fn = sys_a;
    sd.queries = &q;
    sd.query_count = 1;
    weft_node na = weft_app_add_system(app, WEFT_APP_UPDATE, &sd);
    sd.name = "b";
    sd.fn = sys_b;
    weft_node nb = weft_app_add_system(app, WEFT_APP_UPDATE, &sd);
    assert_true(na && nb);
    weft_schedule *upd = weft_schedule_lookup(fx.w, WEFT_APP_UPDATE);
    weft_node moves = weft_schedule_ensure_set(upd, "moves");
    assert_int_equal(weft_schedule_add_to_set(upd, nb, moves), WEFT_OK);
    assert_int_equal(weft_schedule_add_to_set(upd, na, moves), WEFT_OK);
    assert_int_equal(weft_app_add_diagnostics_plugin(app, NULL), WEFT_OK);
    assert_int_equal(weft_app_add_states_plugin(app), WEFT_OK);
    static const weft_state_value screens[] = {{0, "menu"}, {1, "game"}};
    weft_state_desc std = {0};
    std.name = "Screen";
    std.values = screens;
    std.value_count = 2;
    weft_state screen = weft_app_register_state(app, &std);
    assert_true(screen != 0);
    weft_remote_desc d = {0};
    d.flags = WEFT_REMOTE_NO_SERVER | WEFT_REMOTE_ALLOW_WRITES;
    weft_remote *r = NULL;
    assert_int_equal(weft_remote_add_plugin(app, &d, &r), WEFT_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
    }
    assert_int_equal(runs_a, 3);

    json_t *resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.world_stats\"}");
    json_t *res = ok(resp);
    weft_world_stats ws;
    weft_world_get_stats(fx.w, &ws);
    assert_int_equal(json_integer_value(json_object_get(res, "live_entities")), ws.live_entities);
    assert_int_equal(json_integer_value(json_object_get(res, "components")), ws.components);
    json_decref(resp);

    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.archetypes\"}");
    res = ok(resp);
    json_t *arch = json_object_get(res, "archetypes");
    assert_int_equal(json_array_size(arch), ws.archetypes);
    int64_t total = 0;
    size_t i;
    json_t *x;
    json_array_foreach(arch, i, x) {
        total += json_integer_value(json_object_get(x, "entities"));
    }
    assert_int_equal(total, ws.live_entities);
    /* sizes: the archetype of a (Position, Health, Tag) */
    json_t *xa = json_array_get(arch, weft_entity_archetype(fx.w, fx.a));
    assert_int_equal(json_integer_value(json_object_get(xa, "row_bytes")),
                     sizeof(fx_pos) + sizeof(fx_health));
    assert_int_equal(json_integer_value(json_object_get(xa, "bytes")),
                     json_integer_value(json_object_get(xa, "entities")) *
                         (json_int_t)(sizeof(fx_pos) + sizeof(fx_health)));
    json_decref(resp);

    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.schedules\"}");
    res = ok(resp);
    bool found_update = false;
    json_array_foreach(res, i, x) {
        if (strcmp(json_string_value(json_object_get(x, "name")), WEFT_APP_UPDATE) == 0) {
            found_update = true;
            assert_string_equal(json_string_value(json_object_get(x, "order")), "main");
            assert_int_equal(json_integer_value(json_object_get(x, "systems")), 2);
        }
    }
    assert_true(found_update);
    json_decref(resp);

    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.schedule\","
                      "\"params\":{\"schedule\":\"Update\"}}");
    res = ok(resp);
    json_t *systems = json_object_get(res, "systems");
    assert_int_equal(json_array_size(systems), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(systems, 0), "name")),
                        "a");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(systems, 0), "runs")), 3);
    json_t *amb = json_object_get(res, "ambiguities");
    assert_int_equal(json_array_size(amb), 1);
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(json_array_get(amb, 0), "components"), 0)),
        "Position");
    assert_non_null(strstr(json_string_value(json_object_get(res, "dot")), "digraph"));
    /* sets, outside the DOT too: the set and its members in order */
    json_t *sets = json_object_get(res, "sets");
    assert_int_equal(json_array_size(sets), 1);
    json_t *s0 = json_array_get(sets, 0);
    assert_string_equal(json_string_value(json_object_get(s0, "name")), "moves");
    assert_int_equal(json_integer_value(json_object_get(s0, "node")), moves);
    json_t *members = json_object_get(s0, "members");
    assert_int_equal(json_array_size(members), 2);
    assert_int_equal(json_integer_value(json_array_get(members, 0)), nb);
    assert_int_equal(json_integer_value(json_array_get(members, 1)), na);
    json_decref(resp);
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.schedule\","
                      "\"params\":{\"schedule\":\"Nope\"}}");
    assert_int_equal(fx_code(resp), WEFT_REMOTE_WEFT_ERROR - WEFT_ERR_NOT_FOUND);
    json_decref(resp);

    /* trace: profiling asked for now shows in the next update's trace */
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.trace\","
                      "\"params\":{\"schedule\":\"Update\",\"profile\":true}}");
    ok(resp);
    json_decref(resp);
    assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.trace\","
                      "\"params\":{\"schedule\":\"Update\"}}");
    res = ok(resp);
    char *trace = json_dumps(json_object_get(res, "trace"), 0);
    assert_non_null(strstr(trace, "\"a\""));
    free(trace);
    json_decref(resp);

    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.diagnostics\"}");
    res = ok(resp);
    assert_true(json_array_size(res) > 0);
    assert_int_equal(json_array_size(res), weft_diag_count(fx.w));
    json_decref(resp);

    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.states\"}");
    res = ok(resp);
    assert_int_equal(json_array_size(res), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(res, 0), "name")),
                        "Screen");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(res, 0), "value_name")), "menu");
    json_decref(resp);

    /* stepping: on, one step runs only "a" in the next update */
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.stepping\","
                      "\"params\":{\"schedule\":\"Update\",\"action\":\"on\"}}");
    ok(resp);
    json_decref(resp);
    int a0 = runs_a, b0 = runs_b;
    assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
    assert_int_equal(runs_a, a0); /* stepping: nothing runs unasked */
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.stepping\","
                      "\"params\":{\"schedule\":\"Update\",\"action\":\"step\"}}");
    ok(resp);
    json_decref(resp);
    assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
    assert_int_equal(runs_a + runs_b, a0 + b0 + 1);
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.stepping\","
                      "\"params\":{\"schedule\":\"Update\",\"action\":\"jump\"}}");
    assert_int_equal(fx_code(resp), WEFT_REMOTE_INVALID_PARAMS);
    json_decref(resp);
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.stepping\","
                      "\"params\":{\"schedule\":\"Update\",\"action\":\"off\"}}");
    ok(resp);
    json_decref(resp);
    assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
    assert_int_equal(runs_a + runs_b, a0 + b0 + 3);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);
    weft_world_destroy(fx.w);
}

/* Stepping control changes the app: refused on a read-only remote. */
static void test_stepping_needs_writes(void **state)
{
    (void)state;
    fx_world fx;
    fx_make(&fx);
    weft_remote_desc d = {0};
    d.world = fx.w;
    d.flags = WEFT_REMOTE_NO_SERVER;
    weft_remote *r = NULL;
    assert_int_equal(weft_remote_create(&d, &r), WEFT_OK);
    assert_non_null(weft_schedule_create(fx.w, "S"));
    json_t *resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.stepping\","
                              "\"params\":{\"schedule\":\"S\",\"action\":\"on\"}}");
    assert_int_equal(fx_code(resp), WEFT_REMOTE_WEFT_ERROR - WEFT_ERR_ACCESS_VIOLATION);
    json_decref(resp);
    assert_false(weft_schedule_is_stepping(weft_schedule_lookup(fx.w, "S")));
    /* without an app, weft.schedules lists the names asked for */
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.schedules\","
                      "\"params\":{\"names\":[\"S\",\"T\"]}}");
    assert_int_equal(json_array_size(ok(resp)), 1);
    json_decref(resp);
    weft_remote_destroy(r);
    weft_world_destroy(fx.w);
}

/* Breakpoints: weft.step_systems lists the systems in built order with
 * their step behaviors, weft.set_step_behavior sets and clears one, and
 * continue stops before a breakpoint; refusals change nothing. */
static void test_breakpoints(void **state)
{
    (void)state;
    fx_world fx;
    fx_make(&fx);
    weft_app_desc ad = {0};
    ad.world = fx.w;
    weft_app *app = weft_app_create(&ad);
    weft_system_desc sd = {0};
    sd.name = "a";
    sd.fn = sys_a;
    weft_node na = weft_app_add_system(app, WEFT_APP_UPDATE, &sd);
    sd.name = "b";
    sd.fn = sys_b;
    weft_node nb = weft_app_add_system(app, WEFT_APP_UPDATE, &sd);
    sd.name = "c";
    sd.fn = sys_c;
    weft_node nc = weft_app_add_system(app, WEFT_APP_UPDATE, &sd);
    weft_schedule *upd = weft_schedule_lookup(fx.w, WEFT_APP_UPDATE);
    /* built order c, a, b (declared order differs from node order) */
    assert_int_equal(weft_schedule_add_order(upd, nc, na, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(upd, na, nb, 0), WEFT_OK);
    weft_remote_desc d = {0};
    d.flags = WEFT_REMOTE_NO_SERVER | WEFT_REMOTE_ALLOW_WRITES;
    weft_remote *r = NULL;
    assert_int_equal(weft_remote_add_plugin(app, &d, &r), WEFT_OK);
    assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
    char want[512];

    json_t *resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.step_systems\","
                              "\"params\":{\"schedule\":\"Update\"}}");
    snprintf(want, sizeof want,
             "{\"stepping\":false,\"cursor\":0,\"systems\":["
             "{\"node\":%u,\"name\":\"c\",\"position\":0,\"behavior\":\"default\"},"
             "{\"node\":%u,\"name\":\"a\",\"position\":1,\"behavior\":\"default\"},"
             "{\"node\":%u,\"name\":\"b\",\"position\":2,\"behavior\":\"default\"}]}",
             nc, na, nb);
    json_error_t jerr;
    json_t *w = json_loads(want, 0, &jerr);
    assert_true(json_equal(ok(resp), w));
    json_decref(w);
    json_decref(resp);

    /* a behavior set through the C API shows too (read back with
     * weft_schedule_step_behavior), and clears the same way */
    assert_int_equal(weft_schedule_set_step_behavior(upd, na, WEFT_STEP_NEVER_RUN), WEFT_OK);
    assert_int_equal(weft_schedule_step_behavior(upd, na), WEFT_STEP_NEVER_RUN);
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.step_systems\","
                      "\"params\":{\"schedule\":\"Update\"}}");
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(ok(resp), "systems"), 1), "behavior")),
                        "never_run");
    json_decref(resp);
    assert_int_equal(weft_schedule_set_step_behavior(upd, na, WEFT_STEP_DEFAULT), WEFT_OK);
    weft_clear_error(fx.w);
    assert_int_equal(weft_schedule_step_behavior(upd, 0), WEFT_STEP_DEFAULT);
    assert_int_equal(weft_last_status(fx.w), WEFT_ERR_INVALID_ARG);

    /* a breakpoint on b, by name */
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.set_step_behavior\","
                      "\"params\":{\"schedule\":\"Update\",\"system\":\"b\",\"behavior\":\"break\"}}");
    json_t *sys = json_object_get(ok(resp), "systems");
    assert_string_equal(json_string_value(json_object_get(json_array_get(sys, 2), "behavior")),
                        "break");
    assert_string_equal(json_string_value(json_object_get(json_array_get(sys, 0), "behavior")),
                        "default");
    json_decref(resp);
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.stepping\","
                      "\"params\":{\"schedule\":\"Update\",\"action\":\"on\"}}");
    ok(resp);
    json_decref(resp);
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.stepping\","
                      "\"params\":{\"schedule\":\"Update\",\"action\":\"continue\"}}");
    ok(resp);
    json_decref(resp);
    int a0 = runs_a, b0 = runs_b, c0 = runs_c;
    assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
    /* continue ran c and a, and stopped before b */
    assert_int_equal(runs_c - c0, 1);
    assert_int_equal(runs_a - a0, 1);
    assert_int_equal(runs_b - b0, 0);
    assert_int_equal(weft_schedule_step_cursor(upd), nb);
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.step_systems\","
                      "\"params\":{\"schedule\":\"Update\"}}");
    assert_int_equal(json_integer_value(json_object_get(ok(resp), "cursor")), (json_int_t)nb);
    assert_true(json_is_true(json_object_get(ok(resp), "stepping")));
    json_decref(resp);

    /* refused: unknown system, node, behavior; read-only. Nothing changes */
    static const char *const bad[] = {
        "{\"schedule\":\"Update\",\"system\":\"zz\",\"behavior\":\"break\"}",
        "{\"schedule\":\"Update\",\"system\":99,\"behavior\":\"break\"}",
        "{\"schedule\":\"Update\",\"system\":\"a\",\"behavior\":\"stop\"}",
        "{\"schedule\":\"Update\",\"system\":true,\"behavior\":\"break\"}",
        "{\"schedule\":\"Nope\",\"system\":\"a\",\"behavior\":\"break\"}",
    };
    static const int codes[] = {
        WEFT_REMOTE_WEFT_ERROR - WEFT_ERR_NOT_FOUND, WEFT_REMOTE_WEFT_ERROR - WEFT_ERR_INVALID_ARG,
        WEFT_REMOTE_INVALID_PARAMS, WEFT_REMOTE_INVALID_PARAMS,
        WEFT_REMOTE_WEFT_ERROR - WEFT_ERR_NOT_FOUND,
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.set_step_behavior\","
                          "\"params\":%s}",
                       bad[i]);
        assert_int_equal(fx_code(resp), codes[i]);
        json_decref(resp);
    }
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.step_systems\","
                      "\"params\":{\"schedule\":\"Update\"}}");
    sys = json_object_get(ok(resp), "systems");
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(json_string_value(json_object_get(json_array_get(sys, i), "behavior")),
                            i == 2 ? "break" : "default");
    }
    json_decref(resp);

    /* continue at the breakpoint runs it, to the end */
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.stepping\","
                      "\"params\":{\"schedule\":\"Update\",\"action\":\"continue\"}}");
    ok(resp);
    json_decref(resp);
    b0 = runs_b;
    assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
    assert_int_equal(runs_b - b0, 1);
    /* cleared, by node: continue runs all three */
    char req[256];
    snprintf(req, sizeof req,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.set_step_behavior\","
             "\"params\":{\"schedule\":\"Update\",\"system\":%u,\"behavior\":\"default\"}}",
             nb);
    resp = fx_call(r, "%s", req);
    sys = json_object_get(ok(resp), "systems");
    assert_string_equal(json_string_value(json_object_get(json_array_get(sys, 2), "behavior")),
                        "default");
    json_decref(resp);
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.stepping\","
                      "\"params\":{\"schedule\":\"Update\",\"action\":\"continue\"}}");
    ok(resp);
    json_decref(resp);
    a0 = runs_a, b0 = runs_b, c0 = runs_c;
    assert_int_equal(weft_app_update(app, 1.0 / 60), WEFT_OK);
    assert_int_equal(runs_a - a0 + runs_b - b0 + runs_c - c0, 3);
    assert_int_equal(weft_app_destroy(app), WEFT_OK);

    /* read-only: refused */
    weft_remote_desc ro = {0};
    ro.world = fx.w;
    ro.flags = WEFT_REMOTE_NO_SERVER;
    assert_non_null(weft_schedule_create(fx.w, "S"));
    assert_int_equal(weft_remote_create(&ro, &r), WEFT_OK);
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.set_step_behavior\","
                      "\"params\":{\"schedule\":\"S\",\"system\":1,\"behavior\":\"break\"}}");
    assert_int_equal(fx_code(resp), WEFT_REMOTE_WEFT_ERROR - WEFT_ERR_ACCESS_VIOLATION);
    json_decref(resp);
    weft_remote_destroy(r);
    weft_world_destroy(fx.w);
}

/* weft.schema: type descriptions for editors. */
static void test_schema(void **state)
{
    (void)state;
    fx_world fx;
    fx_make(&fx);
    weft_remote_desc d = {0};
    d.world = fx.w;
    d.flags = WEFT_REMOTE_NO_SERVER;
    weft_remote *r = NULL;
    assert_int_equal(weft_remote_create(&d, &r), WEFT_OK);
    json_t *resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.schema\"}");
    json_t *res = ok(resp);
    json_t *pos = json_object_get(res, "Position");
    assert_int_equal(json_integer_value(json_object_get(pos, "size")), sizeof(fx_pos));
    json_t *f0 = json_array_get(json_object_get(pos, "fields"), 0);
    assert_string_equal(json_string_value(json_object_get(f0, "name")), "x");
    assert_string_equal(json_string_value(json_object_get(f0, "kind")), "f32");
    json_t *slots = json_array_get(json_object_get(json_object_get(res, "Health"), "fields"), 1);
    assert_string_equal(json_string_value(json_object_get(slots, "name")), "slots");
    assert_int_equal(json_integer_value(json_object_get(slots, "count")), 3);
    assert_true(json_is_true(json_object_get(json_object_get(res, "Tag"), "tag")));
    assert_null(json_object_get(res, "Opaque")); /* undescribed */
    json_decref(resp);
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.schema\","
                      "\"params\":{\"components\":[\"Health\",\"Nope\"]}}");
    res = ok(resp);
    assert_int_equal(json_object_size(res), 1);
    assert_non_null(json_object_get(res, "Health"));
    json_decref(resp);
    resp = fx_call(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"weft.schema\","
                      "\"params\":{\"components\":5}}");
    assert_int_equal(fx_code(resp), WEFT_REMOTE_INVALID_PARAMS);
    json_decref(resp);
    weft_remote_destroy(r);
    weft_world_destroy(fx.w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inspect_app),
        cmocka_unit_test(test_schema),
        cmocka_unit_test(test_stepping_needs_writes),
        cmocka_unit_test(test_breakpoints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// tests/hostile/test_null_args.c - NULL for every pointer parameter of every
// public function. The cases are generated from include/weft.h at build time
// (gen_null_calls.py -> null_calls.inc); this file provides the world they
// run against and the checks: a status (and, when the world is still named
// by another argument, a message in its error slot) for every NULL that
// weft.h does not allow, success where it does, no crash anywhere, and
// weft_world_check clean after each case.
// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_world.h"
#include "weft.h"

typedef enum nf_ret {
    NF_RET_VOID,    // nothing to check but survival
    NF_RET_VALUE,   // a count, tick or size: no failure value to check
    NF_RET_STATUS,  // weft_status: WEFT_OK or a failure
    NF_RET_POINTER, // NULL on failure
    NF_RET_HANDLE   // 0 / false on failure
} nf_ret;

typedef struct nf_result {
    nf_ret kind;
    uint64_t value;
} nf_result;

// Everything a generated case may pass as a valid argument.
typedef struct nf {
    tw_fixture *f;
    weft_world *w;
    weft_component c;      // int, table storage
    weft_component res;    // int, present as a resource
    weft_component rel;    // ChildOf
    weft_entity e;         // has c; child of parent
    weft_entity parent;
    int val;
    uint32_t tick;
    weft_query *q;         // {c write}
    weft_iter it;
    bool it_open;
    weft_commands *cmds;
    weft_schedule *s;      // one system (node) and one set
    weft_node node;
    weft_app *app;         // on w; Update has one system
    weft_condition *cond;
    weft_observer *obs;
    weft_scene *scene;     // saved from q
    weft_event event;      // payload of sizeof(int)
    weft_message_type msg; // sizeof(int)
    weft_message_cursor cursor;
    weft_value vals[1];    // {c, sizeof(int), &val}
    weft_require req;
    void *snap;            // a full snapshot of the fixture, and a delta on it
    size_t snap_len;
    void *delta;
    size_t delta_len;
    char buf[256];
    _Alignas(16) unsigned char scratch[4096]; // out parameters
    weft_world_desc weft_world_desc;
    weft_component_desc weft_component_desc;
    weft_query_desc weft_query_desc;
    weft_event_desc weft_event_desc;
    weft_observer_desc weft_observer_desc;
    weft_message_desc weft_message_desc;
    weft_type_desc weft_type_desc;
    weft_relationship_desc weft_relationship_desc;
    weft_system_desc weft_system_desc;
    weft_condition_desc weft_condition_desc;
    weft_state state;      // values 0 ("A") and 1 ("B")
    weft_state_value state_values[2];
    weft_state_desc weft_state_desc;
    weft_app_desc weft_app_desc;
    weft_plugin_desc weft_plugin_desc;
    weft_plugin_group_desc weft_plugin_group_desc;
    weft_sub_app_desc weft_sub_app_desc;
    weft_extract_desc weft_extract_desc;
    weft_extract_component_desc weft_extract_component_desc;
    weft_extract_resource_desc weft_extract_resource_desc;
    weft_extract_instances_desc weft_extract_instances_desc;
    weft_snapshot_options weft_snapshot_options;
    weft_diag_desc weft_diag_desc;
    weft_diag_plugin_desc weft_diag_plugin_desc;
    weft_task_desc weft_task_desc;
    weft_job_system jobs;
    int failures;
    int cases;
} nf;

typedef struct nf_case {
    const char *fn;
    const char *param;
    void (*run)(nf *F, weft_system_ctx *ctx);
    bool in_system;
} nf_case;

static void nf_command(weft_world *w, void *payload, void *user)
{
    (void)w;
    (void)payload;
    (void)user;
}

static void nf_drop(void *payload, void *user)
{
    (void)payload;
    (void)user;
}

static void nf_chunk(weft_iter *it, weft_commands *cmds, void *user)
{
    (void)it;
    (void)cmds;
    (void)user;
}

static void nf_observer(weft_world *w, weft_trigger *t, void *user)
{
    (void)w;
    (void)t;
    (void)user;
}

static void nf_system(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
}

static bool nf_condition(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
    return true;
}

static weft_status nf_plugin(weft_app *app, void *user)
{
    (void)app;
    (void)user;
    return WEFT_OK;
}

static weft_status nf_runner(weft_app *app, void *user)
{
    (void)app;
    (void)user;
    return WEFT_OK;
}

static void nf_job_submit(void *user, weft_job_fn fn, void *arg)
{
    (void)user;
    fn(arg);
}

static void nf_job_help(void *user)
{
    (void)user;
}

// An iteration with a current chunk, for cases whose iterator argument is
// valid.
static void nf_iter_begin(nf *F)
{
    assert_int_equal(weft_query_iter(F->w, F->q, &F->it), WEFT_OK);
    assert_true(weft_iter_next(&F->it));
    F->it_open = true;
}

static void nf_iter_end(nf *F)
{
    weft_iter_fini(&F->it);
    F->it_open = false;
}

static bool nf_failed(nf_result r)
{
    switch (r.kind) {
    case NF_RET_STATUS:
        return r.value != WEFT_OK;
    case NF_RET_POINTER:
    case NF_RET_HANDLE:
        return r.value == 0;
    default:
        return false;
    }
}

// Records a broken expectation (cases keep running, so one run lists every
// defect; the test fails at the end).
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void nf_fail(nf *F, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "null-args: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    F->failures++;
}

static void nf_expect(nf *F, nf_result r, const char *fn, const char *param, bool null_ok,
                      bool carrier, bool buf_null)
{
    F->cases++;
    if (null_ok) {
        // A NULL buffer asks for the size: the writers answer CAPACITY
        // (with the size in *out_len), as weft.h documents for them.
        // buf_null: the call's buffer is NULL (the parameter under test or
        // the valid value the generator gives it).
        bool size_query = buf_null && r.kind == NF_RET_STATUS &&
                          r.value == (uint64_t)WEFT_ERR_CAPACITY;
        if (r.kind != NF_RET_VOID && r.kind != NF_RET_VALUE && nf_failed(r) && !size_query) {
            nf_fail(F, "%s(%s = NULL): NULL is documented as valid but the call failed "
                    "(%s)", fn, param, weft_last_error(F->w));
        }
        if (size_query) {
            // a size query is an answer, not a failure: the size lands in
            // the out parameter (the scratch, zeroed before every case) and
            // nothing is recorded
            size_t need = 0;
            memcpy(&need, F->scratch, sizeof need);
            if (need == 0) {
                nf_fail(F, "%s(%s = NULL): a size query that reports no size", fn, param);
            }
            if (weft_last_status(F->w) != WEFT_OK) {
                nf_fail(F, "%s(%s = NULL): a size query recorded an error (%s)", fn, param,
                        weft_last_error(F->w));
            }
        }
        return;
    }
    if ((r.kind == NF_RET_STATUS || r.kind == NF_RET_POINTER || r.kind == NF_RET_HANDLE) &&
        !nf_failed(r)) {
        nf_fail(F, "%s(%s = NULL) did not report a failure", fn, param);
        return;
    }
    if (carrier && r.kind != NF_RET_VOID && r.kind != NF_RET_VALUE) {
        weft_status st = weft_last_status(F->w);
        const char *msg = weft_last_error(F->w);
        if (st == WEFT_OK || !msg || !msg[0]) {
            nf_fail(F, "%s(%s = NULL) failed without a status and message in the error slot",
                    fn, param);
        } else if (r.kind == NF_RET_STATUS && st != (weft_status)r.value) {
            nf_fail(F, "%s(%s = NULL) returned %s but the slot says %s", fn, param,
                    weft_status_name((weft_status)r.value), weft_status_name(st));
        }
    }
}

#include "null_calls.inc"

static int nf_setup(void **state)
{
    nf *F = calloc(1, sizeof *F);
    assert_non_null(F);
    F->f = tw_fixture_new();
    assert_non_null(F->f);
    weft_world *w = F->w = F->f->w;
    F->c = tw_comp(w, "null-args.C", sizeof(int), 0, WEFT_STORAGE_DEFAULT, 0);
    F->rel = weft_child_of(w);
    F->val = 7;
    F->vals[0] = (weft_value){F->c, sizeof(int), &F->val};
    F->parent = weft_spawn(w);
    F->e = weft_spawn_with(w, F->vals, 1);
    assert_int_equal(weft_set_parent(w, F->e, F->parent), WEFT_OK);
    F->res = tw_comp(w, "null-args.R", sizeof(int), 0, WEFT_STORAGE_DEFAULT, 0);
    assert_int_equal(weft_resource_insert(w, F->res, &F->val, sizeof(int)), WEFT_OK);
    F->tick = weft_world_change_tick(w);

    F->weft_query_desc.terms[0].id = F->c;
    F->weft_query_desc.terms[0].access = WEFT_ACCESS_WRITE;
    F->weft_query_desc.term_count = 1;
    F->q = weft_query_create(w, &F->weft_query_desc);
    assert_non_null(F->q);
    F->cmds = weft_commands_create(w);
    assert_non_null(F->cmds);

    F->weft_event_desc.name = "null-args.Event";
    F->weft_event_desc.payload_size = sizeof(int);
    F->event = weft_event_register(w, &F->weft_event_desc);
    assert_int_not_equal(F->event, 0);
    F->weft_event_desc.name = "null-args.Event2";

    F->weft_observer_desc.event = WEFT_EVENT_INSERT;
    F->weft_observer_desc.component = F->c;
    F->weft_observer_desc.fn = nf_observer;
    F->obs = weft_observer_create(w, &F->weft_observer_desc);
    assert_non_null(F->obs);
    F->scene = weft_scene_from_query(w, F->q);
    assert_non_null(F->scene);

    F->weft_message_desc.name = "null-args.Msg";
    F->weft_message_desc.size = sizeof(int);
    F->msg = weft_message_register(w, &F->weft_message_desc);
    assert_int_not_equal(F->msg, 0);
    F->weft_message_desc.name = "null-args.Msg2";
    assert_int_equal(weft_message_write(w, F->msg, &F->val, sizeof(int)), WEFT_OK);

    F->weft_component_desc.name = "null-args.C2";
    F->weft_component_desc.size = sizeof(int);
    F->req.id = F->c;
    F->weft_relationship_desc.name = "null-args.Rel";

    F->state_values[0] = (weft_state_value){0, "A"};
    F->state_values[1] = (weft_state_value){1, "B"};
    F->weft_state_desc.name = "null-args.State";
    F->weft_state_desc.values = F->state_values;
    F->weft_state_desc.value_count = 2;
    F->state = weft_state_register(w, &F->weft_state_desc);
    assert_int_not_equal(F->state, 0);
    F->weft_state_desc.name = "null-args.State2";

    F->s = weft_schedule_create(w, "null-args");
    assert_non_null(F->s);
    F->weft_system_desc.name = "null-args.sys";
    F->weft_system_desc.fn = nf_system;
    F->weft_system_desc.queries = &F->weft_query_desc;
    F->weft_system_desc.query_count = 1;
    F->node = weft_schedule_add_system(F->s, &F->weft_system_desc);
    assert_int_not_equal(F->node, 0);
    F->weft_condition_desc.name = "null-args.cond";
    F->weft_condition_desc.fn = nf_condition;
    F->cond = weft_condition_run_once(F->s);
    assert_non_null(F->cond);
    F->weft_app_desc.world = w; // refused: the app below already drives w
    F->app = weft_app_create(&F->weft_app_desc);
    assert_non_null(F->app);
    assert_int_not_equal(weft_app_add_system(F->app, WEFT_APP_UPDATE, &F->weft_system_desc), 0);
    assert_int_equal(weft_app_exit(F->app, 3), WEFT_OK); // exit_requested answers true
    F->weft_plugin_desc.name = "null-args.plugin";
    F->weft_plugin_desc.build = nf_plugin;
    F->weft_plugin_group_desc.name = "null-args.group";
    F->weft_diag_desc.name = "null-args.diag";
    F->jobs.workers = 1;
    F->jobs.submit = nf_job_submit;
    F->jobs.help = nf_job_help;
    // c and res are described (one i32), so that the JSON writers reach their size
    // query; a snapshot and a delta on top of it, for weft_snapshot_merge
    static const weft_field c_fields[] = {{.name = "v", .kind = WEFT_KIND_I32}};
    static const weft_type_desc c_desc = {"null-args.C", sizeof(int), 0, c_fields, 1};
    assert_int_equal(weft_component_describe(w, F->c, &c_desc), WEFT_OK);
    // res too, for the resource JSON writer
    static const weft_type_desc r_desc = {"null-args.R", sizeof(int), 0, c_fields, 1};
    assert_int_equal(weft_component_describe(w, F->res, &r_desc), WEFT_OK);
    assert_int_equal(weft_snapshot_write(w, NULL, 0, &F->snap_len), WEFT_ERR_CAPACITY);
    F->snap = malloc(F->snap_len);
    assert_non_null(F->snap);
    assert_int_equal(weft_snapshot_write(w, F->snap, F->snap_len, &F->snap_len), WEFT_OK);
    uint32_t since = weft_world_change_tick(w);
    assert_int_equal(weft_snapshot_delta_write(w, since, NULL, 0, &F->delta_len),
                     WEFT_ERR_CAPACITY);
    F->delta = malloc(F->delta_len);
    assert_non_null(F->delta);
    assert_int_equal(weft_snapshot_delta_write(w, since, F->delta, F->delta_len, &F->delta_len),
                     WEFT_OK);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    *state = F;
    return 0;
}

static int nf_teardown(void **state)
{
    nf *F = *state;
    if (F->it_open) {
        weft_iter_fini(&F->it);
    }
    assert_int_equal(weft_app_destroy(F->app), WEFT_OK);
    tw_fixture_free(F->f);
    free(F->snap);
    free(F->delta);
    free(F);
    return 0;
}

// Runs the cases that need a system context from inside a system that may
// touch what they pass (query 0 writes c, res is its resource, it reads
// and writes the message type).
static void nf_ctx_system(weft_system_ctx *ctx, void *user)
{
    nf *F = user;
    for (size_t i = 0; i < sizeof nf_cases / sizeof nf_cases[0]; i++) {
        if (!nf_cases[i].in_system) {
            continue;
        }
        weft_clear_error(F->w);
        memset(F->scratch, 0, sizeof F->scratch);
        nf_cases[i].run(F, ctx);
    }
    weft_clear_error(F->w); // the failures were expected: the system succeeds
}

static void null_args_every_pointer_parameter(void **state)
{
    nf *F = *state;
    size_t n = sizeof nf_cases / sizeof nf_cases[0];
    for (size_t i = 0; i < n; i++) {
        if (nf_cases[i].in_system) {
            continue;
        }
        weft_clear_error(F->w);
        memset(F->scratch, 0, sizeof F->scratch);
        nf_cases[i].run(F, NULL);
        weft_status st = weft_world_check(F->w);
        if (st != WEFT_OK) {
            nf_fail(F, "%s(%s = NULL) left the world inconsistent: %s", nf_cases[i].fn,
                    nf_cases[i].param, weft_last_error(F->w));
        }
    }
    // the context cases, inside a system
    weft_schedule *s = weft_schedule_create(F->w, "null-args.ctx");
    assert_non_null(s);
    weft_resource_use res = {F->res, WEFT_ACCESS_WRITE};
    weft_message_use mu = {F->msg, WEFT_ACCESS_WRITE};
    weft_system_desc sd = {0};
    sd.name = "null-args.ctx";
    sd.fn = nf_ctx_system;
    sd.user = F;
    sd.queries = &F->weft_query_desc;
    sd.query_count = 1;
    sd.resources = &res;
    sd.resource_count = 1;
    sd.messages = &mu;
    sd.message_count = 1;
    sd.flags = WEFT_SYSTEM_EXCLUSIVE;
    if (weft_schedule_add_system(s, &sd) == 0) {
        fail_msg("weft_system_add: %s", weft_last_error(F->w));
    }
    // the only failure the system keeps is the one weft_system_fail(ctx,
    // INVALID_ARG, NULL) asked for, reported with the status's own text
    weft_status st = weft_schedule_run(s, 0.016);
    if (st != WEFT_ERR_INVALID_ARG ||
        !strstr(weft_last_error(F->w), weft_status_str(WEFT_ERR_INVALID_ARG))) {
        nf_fail(F, "the context cases' system reported %s: %s", weft_status_name(st),
                weft_last_error(F->w));
    }
    assert_int_equal(weft_world_check(F->w), WEFT_OK);
    printf("null-args: %d cases over %d public functions\n", F->cases, NF_FUNCTIONS);
    assert_int_equal((size_t)F->cases, n);
    assert_int_equal(F->failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(null_args_every_pointer_parameter, nf_setup,
                                        nf_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

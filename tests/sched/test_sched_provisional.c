// tests/sched/test_sched_provisional.c - provisional spawn handles of system
// command buffers: never a live entity, refused outside their buffer round
// (a later round of the same system, another system's buffer, a world call,
// a ChildOf value), resolved to the real entity by weft_commands_resolve
// after the apply.
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_world.h"
#include "weft.h"

typedef struct prov {
    weft_component hp;
    weft_component tag;
    weft_component child_of;
    int mode;              // what sys_spawner does this run
    weft_entity kept;      // a handle kept from an earlier run
    weft_entity resolved;  // weft_commands_resolve of `kept`, taken this run
    weft_status cmd_status;
    weft_entity spawned[2];
} prov;

enum { SPAWN_TWO = 0, USE_KEPT = 1, RESOLVE_KEPT = 2, RESOLVE_OWN = 3, CHILD_OF_KEPT = 4 };

static void sys_spawner(weft_system_ctx *ctx, void *user)
{
    prov *p = user;
    weft_commands *cmds = weft_system_commands(ctx);
    int32_t hp = 7;
    weft_value v = {p->hp, sizeof hp, &hp};
    switch (p->mode) {
    case SPAWN_TWO:
        p->spawned[0] = weft_cmd_spawn(cmds, &v, 1);
        p->spawned[1] = weft_cmd_spawn(cmds, &v, 1);
        break;
    case USE_KEPT:
        // a fresh spawn takes index 1 of the new round, like the kept one
        p->spawned[0] = weft_cmd_spawn(cmds, &v, 1);
        p->cmd_status = weft_cmd_insert(cmds, p->kept, p->tag, NULL, 0);
        break;
    case RESOLVE_KEPT:
        p->resolved = weft_commands_resolve(cmds, p->kept);
        break;
    case RESOLVE_OWN: {
        weft_entity e = weft_cmd_spawn(cmds, &v, 1);
        p->resolved = weft_commands_resolve(cmds, e); // not applied yet
        break;
    }
    case CHILD_OF_KEPT: {
        // the new round's first spawn takes index 1, like the kept parent
        p->spawned[0] = weft_cmd_spawn(cmds, &v, 1);
        weft_entity parent = p->kept;
        weft_value cv[2] = {{p->hp, sizeof hp, &hp}, {p->child_of, sizeof parent, &parent}};
        p->spawned[1] = weft_cmd_spawn(cmds, cv, 2);
        break;
    }
    default:
        break;
    }
}

typedef struct fixture {
    weft_world *w;
    weft_schedule *s;
    prov p;
} fixture;

static void setup_world(fixture *f, int threads)
{
    memset(f, 0, sizeof *f);
    f->w = weft_world_create(NULL);
    assert_non_null(f->w);
    f->p.hp = tw_comp(f->w, "Hp", sizeof(int32_t), _Alignof(int32_t), WEFT_STORAGE_TABLE, 0);
    f->p.tag = tw_comp(f->w, "Tag", 0, 1, WEFT_STORAGE_TABLE, 0);
    f->p.child_of = weft_child_of(f->w);
    if (threads > 1) {
        assert_int_equal(weft_world_set_threads(f->w, threads), WEFT_OK);
    }
    f->s = weft_schedule_create(f->w, "main");
    assert_non_null(f->s);
    weft_system_desc d = {0};
    d.name = "spawner";
    d.fn = sys_spawner;
    d.user = &f->p;
    assert_int_not_equal(weft_schedule_add_system(f->s, &d), 0);
}

static int32_t hp_of(weft_world *w, weft_component hp, weft_entity e)
{
    const int32_t *v = weft_get(w, e, hp, sizeof *v);
    return v ? *v : -1;
}

// Kept past its round, a provisional handle used in the next round's
// commands is refused; before, it named that round's spawn with the same
// index, so the insert landed on the wrong entity.
static void kept_handle_never_aliases(void **state)
{
    (void)state;
    fixture f;
    setup_world(&f, 1);
    f.p.mode = SPAWN_TWO;
    assert_int_equal(weft_schedule_run(f.s, 0.0), WEFT_OK);
    weft_entity kept = f.p.spawned[0];
    assert_int_not_equal(kept, 0);
    // not a live entity, whatever the world holds
    assert_false(weft_is_alive(f.w, kept));
    assert_int_equal(weft_insert(f.w, kept, f.p.tag, NULL, 0), WEFT_ERR_STALE_ENTITY);
    assert_non_null(strstr(weft_last_error(f.w), "provisional"));

    f.p.mode = USE_KEPT;
    f.p.kept = kept;
    (void)weft_schedule_run(f.s, 0.0); // a failed command does not fail the run
    assert_int_equal(weft_last_status(f.w), WEFT_ERR_STALE_ENTITY);
    assert_non_null(strstr(weft_last_error(f.w), "provisional"));
    // nobody got the tag: not the new round's first spawn, not anyone else
    weft_query_desc qd = {0};
    qd.terms[0].id = f.p.tag;
    qd.term_count = 1;
    weft_query *q = weft_query_create(f.w, &qd);
    assert_non_null(q);
    assert_int_equal(weft_query_count(f.w, q), 0);
    weft_query_destroy(f.w, q);
    weft_world_destroy(f.w);
}

// After the apply the buffer maps its last round's handles to the real
// entities; a handle of an older round, of the round still recording, or a
// forged one, is refused.
static void resolve_after_apply(void **state)
{
    (void)state;
    fixture f;
    setup_world(&f, 1);
    f.p.mode = SPAWN_TWO;
    assert_int_equal(weft_schedule_run(f.s, 0.0), WEFT_OK);
    weft_entity a = f.p.spawned[0], b = f.p.spawned[1];

    f.p.mode = RESOLVE_KEPT;
    f.p.kept = b;
    assert_int_equal(weft_schedule_run(f.s, 0.0), WEFT_OK);
    weft_entity rb = f.p.resolved;
    assert_true(weft_is_alive(f.w, rb));
    assert_int_equal(hp_of(f.w, f.p.hp, rb), 7);
    assert_int_not_equal(rb, b);

    // a later round that spawns retires the old map
    f.p.mode = SPAWN_TWO;
    assert_int_equal(weft_schedule_run(f.s, 0.0), WEFT_OK);
    f.p.mode = RESOLVE_KEPT;
    f.p.kept = a; // two rounds old
    // an error the system records is its failure, returned by the run
    assert_int_equal(weft_schedule_run(f.s, 0.0), WEFT_ERR_STALE_ENTITY);
    assert_int_equal(f.p.resolved, 0);
    assert_int_equal(weft_last_status(f.w), WEFT_ERR_STALE_ENTITY);

    f.p.mode = RESOLVE_OWN;
    assert_int_equal(weft_schedule_run(f.s, 0.0), WEFT_ERR_WRONG_PHASE);
    assert_int_equal(f.p.resolved, 0);
    assert_int_equal(weft_last_status(f.w), WEFT_ERR_WRONG_PHASE);

    // a handle that is not provisional comes back as it is
    weft_commands *cb = weft_commands_create(f.w);
    assert_non_null(cb);
    weft_entity real = weft_spawn(f.w);
    assert_int_equal(weft_commands_resolve(cb, real), real);
    assert_int_equal(weft_commands_resolve(cb, 0), 0);
    assert_int_equal(weft_commands_resolve(NULL, real), 0);
    // a forged provisional handle is refused, not mapped
    weft_entity forged = ((weft_entity)0x80000001u << 32) | 1u;
    assert_int_equal(weft_commands_resolve(cb, forged), 0);
    assert_int_equal(weft_insert(f.w, forged, f.p.tag, NULL, 0), WEFT_ERR_STALE_ENTITY);
    weft_commands_destroy(cb);
    weft_world_destroy(f.w);
}

// Two systems, each spawning: a handle of one used in the other's buffer
// (passed through shared user data) is refused instead of naming the
// other's spawn of the same index.
typedef struct pair {
    weft_component hp, tag;
    weft_entity from_a;
    weft_status b_status;
    weft_entity b_spawn;
} pair;

static void sys_a(weft_system_ctx *ctx, void *user)
{
    pair *p = user;
    int32_t hp = 1;
    weft_value v = {p->hp, sizeof hp, &hp};
    p->from_a = weft_cmd_spawn(weft_system_commands(ctx), &v, 1);
}

static void sys_b(weft_system_ctx *ctx, void *user)
{
    pair *p = user;
    int32_t hp = 2;
    weft_value v = {p->hp, sizeof hp, &hp};
    weft_commands *cmds = weft_system_commands(ctx);
    p->b_spawn = weft_cmd_spawn(cmds, &v, 1);
    p->b_status = weft_cmd_insert(cmds, p->from_a, p->tag, NULL, 0);
}

static void handle_of_another_buffer_refused(void **state)
{
    (void)state;
    weft_world *w = weft_world_create(NULL);
    assert_non_null(w);
    pair p = {0};
    p.hp = tw_comp(w, "Hp", sizeof(int32_t), _Alignof(int32_t), WEFT_STORAGE_TABLE, 0);
    p.tag = tw_comp(w, "Tag", 0, 1, WEFT_STORAGE_TABLE, 0);
    weft_schedule *s = weft_schedule_create(w, "main");
    weft_system_desc da = {0}, db = {0};
    da.name = "a";
    da.fn = sys_a;
    da.user = &p;
    db.name = "b";
    db.fn = sys_b;
    db.user = &p;
    weft_node na = weft_schedule_add_system(s, &da);
    weft_node nb = weft_schedule_add_system(s, &db);
    assert_int_not_equal(na, 0);
    assert_int_not_equal(nb, 0);
    assert_int_equal(weft_schedule_add_order(s, na, nb, 0), WEFT_OK);
    (void)weft_schedule_run(s, 0.0); // a failed command does not fail the run
    assert_int_equal(weft_last_status(w), WEFT_ERR_STALE_ENTITY);
    weft_query_desc qd = {0};
    qd.terms[0].id = p.tag;
    qd.term_count = 1;
    weft_query *q = weft_query_create(w, &qd);
    assert_int_equal(weft_query_count(w, q), 0);
    weft_query_destroy(w, q);
    // both spawns landed
    qd.terms[0].id = p.hp;
    q = weft_query_create(w, &qd);
    assert_int_equal(weft_query_count(w, q), 2);
    weft_query_destroy(w, q);
    assert_int_equal(weft_world_check(w), WEFT_OK);
    weft_world_destroy(w);
}

// A kept parent handle used as a ChildOf value in a later round is refused;
// before, it became the child of that round's first spawn.
static void kept_handle_as_child_of_refused(void **state)
{
    (void)state;
    fixture f;
    setup_world(&f, 1);
    f.p.mode = SPAWN_TWO;
    assert_int_equal(weft_schedule_run(f.s, 0.0), WEFT_OK);
    f.p.kept = f.p.spawned[0];
    f.p.mode = CHILD_OF_KEPT;
    (void)weft_schedule_run(f.s, 0.0); // a failed command does not fail the run
    assert_int_equal(weft_last_status(f.w), WEFT_ERR_STALE_ENTITY);
    weft_query_desc qd = {0};
    qd.terms[0].id = f.p.child_of;
    qd.term_count = 1;
    weft_query *q = weft_query_create(f.w, &qd);
    assert_non_null(q);
    assert_int_equal(weft_query_count(f.w, q), 0);
    weft_query_destroy(f.w, q);
    assert_int_equal(weft_world_check(f.w), WEFT_OK);
    weft_world_destroy(f.w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kept_handle_never_aliases),
        cmocka_unit_test(resolve_after_apply),
        cmocka_unit_test(handle_of_another_buffer_refused),
        cmocka_unit_test(kept_handle_as_child_of_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

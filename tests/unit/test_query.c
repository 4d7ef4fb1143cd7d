// tests/unit/test_query.c - white-box tests of query compilation, the
// incremental match cache (new archetypes matched incrementally, a shared
// table listed once),
// the per-column change summary that lets a Changed query skip a table, and
// the iteration bookkeeping (depth, open iterations).
// SPDX-License-Identifier: MIT
#include "unit.h"

typedef struct fx {
    weft_world *w;
    weft_component pos, vel, tag, stag, hp;
} fx;

static weft_component reg(weft_world *w, const char *name, size_t size, weft_storage st)
{
    weft_component_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.size = size;
    d.storage = st;
    weft_component c = weft_component_register(w, &d);
    assert_true(c != 0);
    return c;
}

static int setup(void **state)
{
    static fx f;
    f.w = weft_world_create(NULL);
    if (!f.w) {
        return -1;
    }
    f.pos = reg(f.w, "Pos", 8, WEFT_STORAGE_TABLE);
    f.vel = reg(f.w, "Vel", 8, WEFT_STORAGE_TABLE);
    f.tag = reg(f.w, "Tag", 0, WEFT_STORAGE_TABLE);
    f.stag = reg(f.w, "STag", 0, WEFT_STORAGE_SPARSE);
    f.hp = reg(f.w, "Hp", 4, WEFT_STORAGE_SPARSE);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    assert_int_equal(weft_world_check(f->w), WEFT_OK);
    assert_int_equal(f->w->iter_depth, 0);
    weft_world_destroy(f->w);
    return 0;
}

static weft_query *query1(fx *f, weft_component c, weft_oper oper, uint32_t filter)
{
    weft_query_desc d;
    memset(&d, 0, sizeof d);
    d.term_count = 1;
    d.terms[0].id = c;
    d.terms[0].oper = oper;
    d.terms[0].filter = filter;
    weft_query *q = weft_query_create(f->w, &d);
    assert_non_null(q);
    return q;
}

static weft_entity spawn(fx *f, const weft_component *ids, int n)
{
    weft_value v[8];
    for (int i = 0; i < n; i++) {
        v[i].id = ids[i];
        v[i].ptr = NULL;
        v[i].size = wf_registry_get(&f->w->registry, ids[i])->size;
    }
    weft_entity e = weft_spawn_with(f->w, v, n);
    assert_true(e != 0);
    return e;
}

static uint32_t arch_of(fx *f, weft_entity e)
{
    return f->w->entities.records[(uint32_t)e].arch;
}

static void query_compile_resolves_defaults(void **state)
{
    fx *f = *state;
    weft_component dis = weft_disabled(f->w);
    weft_query_desc d;
    memset(&d, 0, sizeof d);
    d.term_count = 6;
    d.terms[0].id = f->pos; // DEFAULT oper/access -> AND READ
    d.terms[1].id = f->tag;
    d.terms[1].oper = WEFT_OPER_WITH; // DEFAULT access -> NONE
    d.terms[2].id = f->vel;
    d.terms[2].oper = WEFT_OPER_OR;
    d.terms[2].or_group = 42;
    d.terms[3].id = f->hp;
    d.terms[3].oper = WEFT_OPER_OR;
    d.terms[3].or_group = -1;
    d.terms[3].filter = WEFT_FILTER_CHANGED;
    d.terms[4].id = f->stag;
    d.terms[4].oper = WEFT_OPER_OR;
    d.terms[4].or_group = 42;
    d.terms[5].id = dis;
    d.terms[5].oper = WEFT_OPER_WITHOUT;
    weft_query *q = weft_query_create(f->w, &d);
    assert_non_null(q);
    assert_int_equal(q->term_count, 6);
    assert_int_equal(q->terms[0].oper, WEFT_OPER_AND);
    assert_int_equal(q->terms[0].access, WEFT_ACCESS_READ);
    assert_int_equal(q->terms[1].access, WEFT_ACCESS_NONE);
    assert_int_equal(q->group_count, 2);
    assert_int_equal(q->terms[2].group, q->terms[4].group);
    assert_int_not_equal(q->terms[2].group, q->terms[3].group);
    assert_int_equal(q->terms[0].group, -1);
    assert_true(q->terms[3].sparse);
    assert_false(q->terms[0].sparse);
    assert_true(q->row_filters);
    assert_true(q->allow_disabled); // Disabled is mentioned
    assert_true(q->index_term == 0 || q->index_term == 1);
    assert_false(q->flags & WEFT_QUERY_UNCACHED);
    assert_int_equal(q->iterating, 0);
    weft_query *plain = query1(f, f->pos, WEFT_OPER_AND, 0);
    assert_false(plain->row_filters);
    assert_false(plain->allow_disabled);
    assert_ptr_equal(f->w->queries, plain); // world list
    assert_int_equal(weft_query_destroy(f->w, plain), WEFT_OK);
    assert_ptr_equal(f->w->queries, q);
    assert_int_equal(weft_query_destroy(f->w, q), WEFT_OK);
    assert_null(f->w->queries);
}

// Incremental matching: after the first update, three new archetypes; only
// they are tested.
static void query_incremental_tests_only_new_archetypes(void **state)
{
    fx *f = *state;
    weft_component pv[] = {f->pos, f->vel};
    weft_component pt[] = {f->pos, f->tag};
    weft_component v1[] = {f->vel};
    weft_entity a = spawn(f, pv, 2);
    weft_entity b = spawn(f, pt, 2);
    (void)spawn(f, v1, 1);
    weft_query *q = query1(f, f->pos, WEFT_OPER_AND, 0);
    assert_int_equal(q->arch_gen, 0);
    assert_int_equal(weft_query_count(f->w, q), 2);
    uint32_t gen0 = f->w->graph.arch_count;
    assert_int_equal(q->arch_gen, gen0);
    uint32_t arch_a = arch_of(f, a), arch_b = arch_of(f, b);
    assert_true(wf_query_has_arch(q, arch_a));
    assert_true(wf_query_has_arch(q, arch_b));
    // Probe: forget an old matching archetype. A rescan would find it again.
    q->arch_bits[arch_a >> 6] &= ~(1ull << (arch_a & 63));
    assert_int_equal(weft_query_count(f->w, q), 2); // nothing new: no update
    assert_false(wf_query_has_arch(q, arch_a));

    // three new archetypes: {Pos,Vel,Tag}, {Pos,STag}, {Vel,Tag}
    weft_component n1[] = {f->pos, f->vel, f->tag};
    weft_component n2[] = {f->pos, f->stag};
    weft_component n3[] = {f->vel, f->tag};
    weft_entity c1 = spawn(f, n1, 3);
    weft_entity c2 = spawn(f, n2, 2);
    weft_entity c3 = spawn(f, n3, 2);
    assert_int_equal(f->w->graph.arch_count, gen0 + 3);
    assert_int_equal(q->arch_gen, gen0); // lazily: on the next use
    (void)weft_query_count(f->w, q);
    assert_int_equal(q->arch_gen, gen0 + 3);
    assert_false(wf_query_has_arch(q, arch_a)); // not retested
    assert_true(wf_query_has_arch(q, arch_b));
    assert_true(wf_query_has_arch(q, arch_of(f, c1)));
    assert_true(wf_query_has_arch(q, arch_of(f, c2)));
    assert_false(wf_query_has_arch(q, arch_of(f, c3)));
    // restore the probe
    q->arch_bits[arch_a >> 6] |= 1ull << (arch_a & 63);
    assert_int_equal(weft_query_count(f->w, q), 4);
    assert_int_equal(weft_query_destroy(f->w, q), WEFT_OK);

    // an uncached query rebuilds every time: the probe is repaired
    weft_query_desc d;
    memset(&d, 0, sizeof d);
    d.term_count = 1;
    d.terms[0].id = f->pos;
    d.flags = WEFT_QUERY_UNCACHED;
    weft_query *u = weft_query_create(f->w, &d);
    assert_non_null(u);
    assert_int_equal(weft_query_count(f->w, u), 4);
    u->arch_bits[arch_a >> 6] &= ~(1ull << (arch_a & 63));
    assert_int_equal(weft_query_count(f->w, u), 4);
    assert_true(wf_query_has_arch(u, arch_a));
    assert_int_equal(weft_query_destroy(f->w, u), WEFT_OK);
}

// The first update starts from the component index of the rarest required
// id; later updates walk only new archetypes. Either way every archetype
// holding the id is matched, none twice.
static void query_first_update_uses_component_index(void **state)
{
    fx *f = *state;
    weft_component ids[3] = {f->pos, f->vel, f->tag};
    for (int m = 1; m < 8; m++) {
        weft_component s[3];
        int n = 0;
        for (int i = 0; i < 3; i++) {
            if (m & (1 << i)) {
                s[n++] = ids[i];
            }
        }
        (void)spawn(f, s, n);
    }
    weft_query_desc d;
    memset(&d, 0, sizeof d);
    d.term_count = 2;
    d.terms[0].id = f->pos;
    d.terms[1].id = f->tag;
    d.terms[1].oper = WEFT_OPER_WITH;
    weft_query *q = weft_query_create(f->w, &d);
    assert_non_null(q);
    const wf_type_info *tpos = wf_registry_get(&f->w->registry, f->pos);
    const wf_type_info *ttag = wf_registry_get(&f->w->registry, f->tag);
    assert_int_equal(tpos->arch_count, 4);
    assert_int_equal(ttag->arch_count, 4);
    assert_int_equal(weft_query_count(f->w, q), 2);
    assert_int_equal(q->match_count, 2);
    uint32_t matched = 0;
    for (uint32_t a = 0; a < f->w->graph.arch_count; a++) {
        const wf_archetype *arch = f->w->graph.archetypes[a];
        bool want = wf_archetype_has(arch, f->pos) && wf_archetype_has(arch, f->tag);
        assert_int_equal(wf_query_has_arch(q, a), want);
        matched += want;
    }
    assert_int_equal(matched, 2);
    assert_int_equal(weft_query_destroy(f->w, q), WEFT_OK);
}

// A table shared by several matching archetypes is one match
// entry; a table with non-matching archetypes is iterated row by row.
static void query_shared_table_is_one_match(void **state)
{
    fx *f = *state;
    weft_component p[] = {f->pos};
    weft_component ps[] = {f->pos, f->stag};
    weft_component ph[] = {f->pos, f->hp};
    weft_component psh[] = {f->pos, f->stag, f->hp};
    weft_entity e1 = spawn(f, p, 1);
    weft_entity e2 = spawn(f, ps, 2);
    weft_entity e3 = spawn(f, ph, 2);
    weft_entity e4 = spawn(f, psh, 3);
    wf_table *t = wf_world_archetype(f->w, arch_of(f, e1))->table;
    assert_int_equal(t->archetype_count, 4);
    weft_query *all = query1(f, f->pos, WEFT_OPER_AND, 0);
    assert_int_equal(weft_query_count(f->w, all), 4);
    assert_int_equal(all->match_count, 1);
    const wf_match *m = wf_query_table_match(all, t);
    assert_non_null(m);
    assert_int_equal(m->arch_count, 4);
    assert_ptr_equal(m->table, t);
    assert_int_equal(m->cols[0], t->col_map[f->pos]);

    weft_query_desc d;
    memset(&d, 0, sizeof d);
    d.term_count = 2;
    d.terms[0].id = f->pos;
    d.terms[1].id = f->stag;
    d.terms[1].oper = WEFT_OPER_WITH;
    weft_query *with = weft_query_create(f->w, &d);
    assert_non_null(with);
    assert_int_equal(weft_query_count(f->w, with), 2);
    assert_int_equal(with->match_count, 1);
    m = wf_query_table_match(with, t);
    assert_int_equal(m->arch_count, 2); // partial: 2 of 4 archetypes
    assert_int_equal(m->cols[1], -1);   // sparse: no column
    // the iteration yields e2 and e4 only, in chunks of matching runs
    weft_iter it;
    assert_int_equal(weft_query_iter(f->w, with, &it), WEFT_OK);
    const wf_iter *wi = (const wf_iter *)(const void *)&it;
    int64_t n = 0;
    while (weft_iter_next(&it)) {
        assert_true(wi->partial);
        const weft_entity *es = weft_iter_entities(&it);
        for (int32_t r = 0; r < weft_iter_count(&it); r++) {
            assert_true(es[r] == e2 || es[r] == e4);
            n++;
        }
    }
    assert_int_equal(n, 2);
    (void)e3;
    assert_int_equal(weft_query_destroy(f->w, with), WEFT_OK);
    assert_int_equal(weft_query_destroy(f->w, all), WEFT_OK);
}

// A Changed filter consults the column's latest-change summary and skips a
// table whose summary is not newer than the last run, without looking at
// rows.
static void query_changed_filter_skips_table_by_summary(void **state)
{
    fx *f = *state;
    weft_world *w = f->w;
    weft_component p[] = {f->pos};
    weft_component pv[] = {f->pos, f->vel};
    weft_entity e[4];
    for (int i = 0; i < 4; i++) {
        e[i] = spawn(f, i < 2 ? p : pv, i < 2 ? 1 : 2);
    }
    weft_query *q = query1(f, f->pos, WEFT_OPER_AND, WEFT_FILTER_CHANGED);
    weft_iter it;
    assert_int_equal(weft_query_iter(w, q, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
    }
    uint32_t last = q->last_run;
    assert_int_equal(q->match_count, 2);
    wf_table *tp = wf_world_archetype(w, arch_of(f, e[0]))->table;
    wf_table *tpv = wf_world_archetype(w, arch_of(f, e[2]))->table;
    const wf_match *mp = wf_query_table_match(q, tp);
    const wf_match *mpv = wf_query_table_match(q, tpv);
    uint32_t now = w->change_tick;
    assert_false(wf_query_table_may_pass(q, mp, last, now));
    assert_false(wf_query_table_may_pass(q, mpv, last, now));

    // one row of {Pos,Vel} changes: that table may pass, {Pos} still not
    assert_non_null(weft_get_mut(w, e[3], f->pos, 8));
    assert_true(wf_query_table_may_pass(q, mpv, last, now));
    assert_false(wf_query_table_may_pass(q, mp, last, now));
    wf_column *c = wf_table_column(tpv, f->pos);
    assert_int_equal(c->latest_change, now);
    uint32_t row3 = w->entities.records[(uint32_t)e[3]].row;
    uint32_t row2 = w->entities.records[(uint32_t)e[2]].row;
    assert_true(wf_query_row_passes(q, mpv, row3, e[3], last, now, now));
    assert_false(wf_query_row_passes(q, mpv, row2, e[2], last, now, now));

    // Proof that rows are not scanned: forge a new tick into a row of {Pos}
    // while its summary stays old. The table is skipped, so the forged row
    // is not yielded; once the summary admits the table, it is.
    wf_column *cp = wf_table_column(tp, f->pos);
    assert_false(cp->bulk);
    uint32_t rowp = w->entities.records[(uint32_t)e[0]].row;
    uint32_t saved = cp->ticks[rowp].changed;
    cp->ticks[rowp].changed = now;
    assert_true(wf_query_row_passes(q, mp, rowp, e[0], last, now, now));
    assert_false(wf_query_table_may_pass(q, mp, last, now));
    assert_int_equal(weft_query_count(w, q), 1); // e[3] only
    uint32_t saved_summary = cp->latest_change;
    cp->latest_change = now;
    assert_int_equal(weft_query_count(w, q), 2); // now the row is seen
    cp->ticks[rowp].changed = saved;
    cp->latest_change = saved_summary;
    assert_int_equal(weft_query_count(w, q), 1);

    // an ADDED filter uses the same summary (added implies changed)
    weft_query *qa = query1(f, f->pos, WEFT_OPER_AND, WEFT_FILTER_ADDED);
    assert_int_equal(weft_query_iter(w, qa, &it), WEFT_OK);
    while (weft_iter_next(&it)) {
    }
    uint32_t la = qa->last_run;
    assert_false(wf_query_table_may_pass(qa, wf_query_table_match(qa, tp), la, w->change_tick));
    weft_entity fresh = spawn(f, p, 1);
    assert_true(wf_query_table_may_pass(qa, wf_query_table_match(qa, tp), la, w->change_tick));
    assert_int_equal(weft_query_count(w, qa), 1);
    (void)fresh;
    assert_int_equal(weft_query_destroy(w, qa), WEFT_OK);
    assert_int_equal(weft_query_destroy(w, q), WEFT_OK);
}

static void query_tick_compare_matches_reference(void **state)
{
    (void)state;
    assert_true(wf_tick_newer(7, 5, 10));
    assert_false(wf_tick_newer(5, 5, 10));
    assert_true(wf_tick_newer(10, 5, 10));
    assert_false(wf_tick_newer(11, 5, 10));
    assert_true(wf_tick_newer(0x05, 0xFFFFFFF0u, 0x10));
    assert_false(wf_tick_newer(100, 200, 4000000000u));
    // exhaustive agreement with the public function on a grid
    for (uint32_t t = 0; t < 40; t += 3) {
        for (uint32_t l = 0; l < 40; l += 5) {
            assert_int_equal(wf_tick_newer(t * 0x7000000u, l * 0x6000000u, 0x12345678u),
                             weft_tick_is_newer(t * 0x7000000u, l * 0x6000000u, 0x12345678u));
        }
    }
}

// The clamp covers row ticks, column summaries, sparse sets, resources and
// query last runs.
static void query_clamp_walks_everything(void **state)
{
    fx *f = *state;
    weft_world *w = f->w;
    w->change_tick = 10;
    weft_component p[] = {f->pos};
    weft_component ph[] = {f->pos, f->hp};
    weft_entity a = spawn(f, p, 1);
    weft_entity b = spawn(f, ph, 2);
    weft_query *q = query1(f, f->pos, WEFT_OPER_AND, WEFT_FILTER_CHANGED);
    q->last_run = 5;
    uint32_t now = 10u + 3600000000u;
    w->change_tick = now;
    assert_true(weft_world_clamp_ticks(w, true));
    assert_int_equal(w->last_check_tick, now);
    uint32_t floor = now - WEFT_MAX_CHANGE_AGE;
    wf_table *t = wf_world_archetype(w, arch_of(f, a))->table;
    wf_column *c = wf_table_column(t, f->pos);
    assert_int_equal(c->latest_change, floor);
    for (uint32_t r = 0; r < t->count; r++) {
        weft_ticks tk = wf_column_ticks(c, r, w->change_tick);
        assert_int_equal(tk.added, floor);
        assert_int_equal(tk.changed, floor);
    }
    const wf_type_info *hp = wf_registry_get(&w->registry, f->hp);
    uint32_t d = wf_sparse_find(hp->sparse, (uint32_t)b);
    assert_int_not_equal(d, WF_SPARSE_EMPTY);
    assert_int_equal(hp->sparse->dense.ticks[d].added, floor);
    assert_int_equal(hp->sparse->dense.latest_change, floor);
    assert_int_equal(q->last_run, floor);
    assert_int_equal(weft_query_destroy(w, q), WEFT_OK);
}

static void query_iteration_depth_and_open_counts(void **state)
{
    fx *f = *state;
    weft_world *w = f->w;
    weft_component p[] = {f->pos};
    (void)spawn(f, p, 1);
    weft_query *q = query1(f, f->pos, WEFT_OPER_AND, 0);
    weft_iter a, b;
    assert_int_equal(weft_query_iter(w, q, &a), WEFT_OK);
    assert_int_equal(weft_query_iter(w, q, &b), WEFT_OK); // same query twice
    assert_int_equal(w->iter_depth, 2);
    assert_int_equal(q->iterating, 2);
    weft_entity s = weft_spawn(w);
    assert_int_equal(w->cmds.count, 1);
    while (weft_iter_next(&b)) {
    }
    assert_int_equal(w->iter_depth, 1);
    assert_int_equal(q->iterating, 1);
    assert_int_equal(w->cmds.count, 1);
    assert_false(weft_is_alive(w, s));
    weft_iter_fini(&a);
    assert_int_equal(w->iter_depth, 0);
    assert_int_equal(q->iterating, 0);
    assert_int_equal(w->cmds.count, 0);
    assert_true(weft_is_alive(w, s));
    // a per-entity call does not open an iteration
    (void)weft_query_count(w, q);
    assert_int_equal(w->iter_depth, 0);
    assert_int_equal(weft_query_destroy(w, q), WEFT_OK);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(query_compile_resolves_defaults),
        T(query_incremental_tests_only_new_archetypes),
        T(query_first_update_uses_component_index),
        T(query_shared_table_is_one_match),
        T(query_changed_filter_skips_table_by_summary),
        T(query_tick_compare_matches_reference),
        T(query_clamp_walks_everything),
        T(query_iteration_depth_and_open_counts),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

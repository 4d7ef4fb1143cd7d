/* bench/scenarios_query.c - query scenarios: iteration, fragmentation, Changed, matching, per-entity get.
 * SPDX-License-Identifier: MIT
 *
 * Every figure is measured against its floor in the same run, alternating
 * weft and baseline passes so drift of the machine hits both:
 *  - iter:    a cached query over N entities (1, 2, 3 components, and the
 *             no-mark write) vs the same loop over plain C struct arrays.
 *             Both sides call the same out-of-line kernel, so the ratio is
 *             what the library adds (iteration, field fetch, change marks),
 *             not a difference in code generation.
 *  - frag:    100k entities spread over 1 .. 10,000 archetypes (tag
 *             components), one query, vs the same kernel over as many
 *             separately allocated plain arrays.
 *  - changed: a Changed(Velocity) query after 1% of the entities changed
 *             in 2 of 100 tables vs the same query without the filter.
 *  - match:   creating a query in a world of 10,000 archetypes and matching
 *             it (first weft_query_count), and the cost per archetype created
 *             later, vs a naive scan of plain archetype lists.
 *  - qget:    weft_query_get per entity vs the baseline store's lookup.
 * Iteration figures are the best of Q_PASSES passes per repetition, median
 * of the repetitions (as the peer comparison in bench/peers does). The first repetition is
 * verified: weft's values are compared with the baseline's after the same
 * passes, yielded entity sets and counts are checked, and worlds go through
 * weft_world_check.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "bench_world.h"
#include "weft.h"

#if defined(__GNUC__)
#define Q_NOINLINE __attribute__((noinline))
#else
#define Q_NOINLINE
#endif

enum {
    Q_TAGS = 14,       /* tag components: up to 16,384 archetypes */
    Q_PASSES = 10,     /* iteration: best of this many passes per repetition */
    Q_FRAG_PASSES = 30, /* frag: more, its per-table figures are differences */
    Q_FRAG_N = 100000, /* entities in the fragmentation scenario */
    Q_CHG_TABLES = 100 /* tables in the Changed scenario */
};

/* ---- kernels shared by weft and the baseline (kept out of line) ---- */

Q_NOINLINE static void k_p(bench_position *p, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        p[i].x += 1.0f;
    }
}

Q_NOINLINE static void k_pv(bench_position *p, const bench_velocity *v, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        p[i].x += v[i].x;
        p[i].y += v[i].y;
    }
}

Q_NOINLINE static void k_pvh(bench_position *p, const bench_velocity *v,
                             const bench_health *h, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        float s = (float)h[i].hp;
        p[i].x += v[i].x * s;
        p[i].y += v[i].y * s;
    }
}

/* ---- a world with Position, Velocity, Health and Q_TAGS tags ---- */

typedef struct qworld {
    bench_world b;
    weft_component tag[Q_TAGS];
} qworld;

static void qw_init(qworld *q, const char *scenario)
{
    bench_world_init(&q->b, scenario, 0, WEFT_STORAGE_DEFAULT, NULL);
    for (int32_t t = 0; t < Q_TAGS; t++) {
        char name[16];
        snprintf(name, sizeof name, "Tag%d", (int)t);
        q->tag[t] = bench_register(&q->b, name, 0, WEFT_STORAGE_DEFAULT, 0);
    }
}

/* Spawns n entities with Position (values pos), Velocity (when vel is
 * non-NULL), Health (when hp is non-NULL) and tag t for every bit t of
 * `bits`: all land in one archetype. */
static void qw_spawn(qworld *q, uint32_t bits, int32_t n, const bench_position *pos,
                     const bench_velocity *vel, const bench_health *hp,
                     weft_entity *out)
{
    weft_value cols[3 + Q_TAGS];
    int32_t c = 0;
    cols[c++] = (weft_value){q->b.pos, sizeof(bench_position), pos};
    if (vel != NULL) {
        cols[c++] = (weft_value){q->b.vel, sizeof(bench_velocity), vel};
    }
    if (hp != NULL) {
        cols[c++] = (weft_value){q->b.hp, sizeof(bench_health), hp};
    }
    for (int32_t t = 0; t < Q_TAGS; t++) {
        if ((bits >> t) & 1u) {
            cols[c++] = (weft_value){q->tag[t], 0, NULL};
        }
    }
    bench_world_expect(&q->b, "weft_spawn_bulk",
                       weft_spawn_bulk(q->b.w, cols, c, n, out));
}

static weft_term q_term(weft_component id, weft_access access, uint32_t filter)
{
    weft_term t;
    memset(&t, 0, sizeof t);
    t.id = id;
    t.access = access;
    t.oper = WEFT_OPER_AND;
    t.filter = filter;
    return t;
}

static weft_query *qw_query(qworld *q, const weft_term *terms, int32_t count)
{
    weft_query_desc d;
    memset(&d, 0, sizeof d);
    memcpy(d.terms, terms, sizeof *terms * (size_t)count);
    d.term_count = count;
    weft_query *qq = weft_query_create(q->b.w, &d);
    if (qq == NULL) {
        bench_world_expect(&q->b, "weft_query_create", weft_last_status(q->b.w));
        bench_fail(q->b.scenario, "weft_query_create", "NULL without an error");
    }
    return qq;
}

/* Fails unless a chunk's field pointer is non-NULL. */
static void q_field_ok(const qworld *q, const void *p, const char *fn)
{
    if (p == NULL) {
        bench_world_expect(&q->b, fn, weft_last_status(q->b.w));
        bench_fail(q->b.scenario, fn, "NULL without an error");
    }
}

static void q_expect_count(const char *scenario, const char *what, int64_t got,
                           int64_t want)
{
    if (got != want) {
        char detail[128];
        snprintf(detail, sizeof detail, "%lld, expected %lld", (long long)got,
                 (long long)want);
        bench_fail(scenario, what, detail);
    }
}

/* ---- the pass driver: best of Q_PASSES per repetition, median of reps ---- */

typedef uint64_t (*q_pass_fn)(void *ctx); /* one timed pass: nanoseconds */
typedef void (*q_check_fn)(void *ctx);    /* verification after the first rep */

typedef struct q_pair {
    double weft; /* median over reps of the best pass, ns / per */
    double base;
} q_pair;

static q_pair q_best_pair(const bench_cfg *cfg, const char *name, q_pass_fn wf,
                          q_pass_fn bf, q_check_fn check, void *ctx, int32_t passes,
                          double per)
{
    double *wv = bench_xmalloc(sizeof(double) * (size_t)cfg->reps);
    double *bv = bench_xmalloc(sizeof(double) * (size_t)cfg->reps);
    for (int32_t r = -cfg->warmup; r < cfg->reps; r++) {
        double bw = DBL_MAX;
        double bb = DBL_MAX;
        for (int32_t p = 0; p < passes; p++) {
            double a = (double)wf(ctx);
            double b = (double)bf(ctx);
            bw = a < bw ? a : bw;
            bb = b < bb ? b : bb;
        }
        if (r == -cfg->warmup && check != NULL) {
            check(ctx);
        }
        bench_trace(cfg, name, "weft", r, bw / per);
        bench_trace(cfg, name, "baseline", r, bb / per);
        if (r >= 0) {
            wv[r] = bw / per;
            bv[r] = bb / per;
        }
    }
    q_pair out = {bench_median(wv, cfg->reps), bench_median(bv, cfg->reps)};
    free(wv);
    free(bv);
    return out;
}

/* ================= iter: 1, 2 and 3 components over N ================= */

enum { IT_1 = 0, IT_2 = 1, IT_2_NOMARK = 2, IT_3 = 3 };

typedef struct it_ctx {
    qworld q;
    int32_t n;
    int32_t mode;
    weft_entity *ents;
    weft_query *query[4]; /* by mode */
    bench_position *pos;  /* the baseline's struct columns */
    bench_velocity *vel;
    bench_health *hp;
} it_ctx;

static uint64_t it_weft(void *p)
{
    it_ctx *c = p;
    weft_world *w = c->q.b.w;
    int32_t mode = c->mode;
    weft_iter it;
    int64_t seen = 0;
    uint64_t t0 = bench_now_ns();
    weft_status st = weft_query_iter(w, c->query[mode], &it);
    if (st != WEFT_OK) {
        bench_world_expect(&c->q.b, "weft_query_iter", st);
    }
    while (weft_iter_next(&it)) {
        int32_t k = weft_iter_count(&it);
        bench_position *pp = mode == IT_2_NOMARK
                                 ? weft_iter_field_mut_nomark(&it, 0, sizeof *pp)
                                 : weft_iter_field_mut(&it, 0, sizeof *pp);
        q_field_ok(&c->q, pp, "weft_iter_field_mut");
        if (mode == IT_1) {
            k_p(pp, k);
        } else {
            const bench_velocity *v = weft_iter_field(&it, 1, sizeof *v);
            q_field_ok(&c->q, v, "weft_iter_field");
            if (mode == IT_3) {
                const bench_health *h = weft_iter_field(&it, 2, sizeof *h);
                q_field_ok(&c->q, h, "weft_iter_field");
                k_pvh(pp, v, h, k);
            } else {
                k_pv(pp, v, k);
            }
        }
        seen += k;
    }
    uint64_t t1 = bench_now_ns();
    q_expect_count("iter", "entities iterated", seen, c->n);
    return t1 - t0;
}

static uint64_t it_base(void *p)
{
    it_ctx *c = p;
    uint64_t t0 = bench_now_ns();
    if (c->mode == IT_1) {
        k_p(c->pos, c->n);
    } else if (c->mode == IT_3) {
        k_pvh(c->pos, c->vel, c->hp, c->n);
    } else {
        k_pv(c->pos, c->vel, c->n);
    }
    return bench_now_ns() - t0;
}

/* After the same passes on both sides, every weft Position equals the
 * baseline's (small integers in floats: exact). */
static void it_check(void *p)
{
    it_ctx *c = p;
    for (int32_t i = 0; i < c->n; i++) {
        const bench_position *wp =
            weft_get(c->q.b.w, c->ents[i], c->q.b.pos, sizeof(bench_position));
        if (wp == NULL || wp->x != c->pos[i].x || wp->y != c->pos[i].y) {
            bench_fail("iter", "Position after the passes", "differs from the baseline");
        }
    }
    bench_world_verify(&c->q.b, c->n);
}

void bench_query_iter(const bench_cfg *cfg, const bench_data *d)
{
    it_ctx c;
    memset(&c, 0, sizeof c);
    int32_t n = cfg->n;
    c.n = n;
    size_t un = (size_t)n;
    c.pos = bench_xmalloc(sizeof *c.pos * un);
    c.vel = bench_xmalloc(sizeof *c.vel * un);
    c.hp = bench_xmalloc(sizeof *c.hp * un);
    c.ents = bench_xmalloc(sizeof *c.ents * un);
    memcpy(c.pos, d->pos, sizeof *c.pos * un);
    memcpy(c.vel, d->vel, sizeof *c.vel * un);
    for (int32_t i = 0; i < n; i++) {
        c.hp[i].hp = 1 + i % 3;
    }
    qw_init(&c.q, "iter");
    qw_spawn(&c.q, 0, n, c.pos, c.vel, c.hp, c.ents);
    weft_component pos = c.q.b.pos;
    weft_component vel = c.q.b.vel;
    weft_term t1[1] = {q_term(pos, WEFT_ACCESS_WRITE, 0)};
    weft_term t2[2] = {q_term(pos, WEFT_ACCESS_WRITE, 0),
                       q_term(vel, WEFT_ACCESS_READ, 0)};
    weft_term t3[3] = {q_term(pos, WEFT_ACCESS_WRITE, 0),
                       q_term(vel, WEFT_ACCESS_READ, 0),
                       q_term(c.q.b.hp, WEFT_ACCESS_READ, 0)};
    c.query[IT_1] = qw_query(&c.q, t1, 1);
    c.query[IT_2] = qw_query(&c.q, t2, 2);
    c.query[IT_2_NOMARK] = qw_query(&c.q, t2, 2);
    c.query[IT_3] = qw_query(&c.q, t3, 3);

    static const struct {
        int32_t mode;
        const char *name;
    } rows[] = {
        {IT_1, "iter 1 comp (p.x += 1)"},
        {IT_2, "iter 2 comp (p += v)"},
        {IT_2_NOMARK, "iter 2 comp (p += v), no-mark"},
        {IT_3, "iter 3 comp (p += v * hp)"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        c.mode = rows[r].mode;
        q_pair res = q_best_pair(cfg, rows[r].name, it_weft, it_base, it_check, &c,
                                 Q_PASSES, (double)n);
        bench_report_ratio(rows[r].name, "ns", res.weft, res.base, 1.05);
    }
    bench_note("iter: N = %d in one table; best of %d passes per repetition; the "
               "baseline runs the same out-of-line kernel over plain struct arrays",
               (int)n, (int)Q_PASSES);
    for (int32_t i = 0; i < 4; i++) {
        bench_world_expect(&c.q.b, "weft_query_destroy",
                           weft_query_destroy(c.q.b.w, c.query[i]));
    }
    bench_world_fini(&c.q.b);
    free(c.pos);
    free(c.vel);
    free(c.hp);
    free(c.ents);
}

/* ================= frag: 100k entities over k archetypes ================= */

typedef struct frag_ctx {
    qworld q;
    int32_t n;
    int32_t k;              /* archetypes (= matched tables) */
    weft_query *query;
    weft_entity *ents;      /* n, archetype j holds [start[j], start[j] + count[j]) */
    int32_t *start;
    int32_t *count;
    bench_position **bpos;  /* baseline: one allocation per archetype */
    bench_velocity **bvel;
    int64_t chunks;         /* chunks seen by the last weft pass */
} frag_ctx;

static uint64_t frag_weft(void *p)
{
    frag_ctx *c = p;
    weft_iter it;
    int64_t seen = 0;
    int64_t chunks = 0;
    uint64_t t0 = bench_now_ns();
    weft_status st = weft_query_iter(c->q.b.w, c->query, &it);
    if (st != WEFT_OK) {
        bench_world_expect(&c->q.b, "weft_query_iter", st);
    }
    while (weft_iter_next(&it)) {
        int32_t k = weft_iter_count(&it);
        bench_position *pp = weft_iter_field_mut(&it, 0, sizeof *pp);
        const bench_velocity *v = weft_iter_field(&it, 1, sizeof *v);
        q_field_ok(&c->q, pp, "weft_iter_field_mut");
        q_field_ok(&c->q, v, "weft_iter_field");
        k_pv(pp, v, k);
        seen += k;
        chunks++;
    }
    uint64_t t1 = bench_now_ns();
    q_expect_count("frag", "entities iterated", seen, c->n);
    c->chunks = chunks;
    return t1 - t0;
}

static uint64_t frag_base(void *p)
{
    frag_ctx *c = p;
    uint64_t t0 = bench_now_ns();
    for (int32_t j = 0; j < c->k; j++) {
        k_pv(c->bpos[j], c->bvel[j], c->count[j]);
    }
    return bench_now_ns() - t0;
}

static void frag_check(void *p)
{
    frag_ctx *c = p;
    q_expect_count("frag", "chunks (one per matched table)", c->chunks, c->k);
    for (int32_t j = 0; j < c->k; j++) {
        for (int32_t r = 0; r < c->count[j]; r++) {
            const bench_position *wp = weft_get(c->q.b.w, c->ents[c->start[j] + r],
                                                c->q.b.pos, sizeof(bench_position));
            if (wp == NULL || wp->x != c->bpos[j][r].x || wp->y != c->bpos[j][r].y) {
                bench_fail("frag", "Position after the passes",
                           "differs from the baseline");
            }
        }
    }
    weft_world_stats st;
    bench_world_expect(&c->q.b, "weft_world_get_stats",
                       weft_world_get_stats(c->q.b.w, &st));
    if (st.archetypes < c->k + 1) {
        bench_fail("frag", "archetype count", "fewer archetypes than asked for");
    }
    bench_world_verify(&c->q.b, c->n);
}

/* Builds the world and the baseline for k archetypes, measures, tears down.
 * Returns ns per pass (weft, baseline). */
static q_pair frag_case(const bench_cfg *cfg, const bench_data *d, int32_t n, int32_t k,
                        const char *name, double *out_bytes)
{
    frag_ctx c;
    memset(&c, 0, sizeof c);
    c.n = n;
    c.k = k;
    size_t uk = (size_t)k;
    c.ents = bench_xmalloc(sizeof *c.ents * (size_t)n);
    c.start = bench_xmalloc(sizeof *c.start * uk);
    c.count = bench_xmalloc(sizeof *c.count * uk);
    c.bpos = bench_xmalloc(sizeof *c.bpos * uk);
    c.bvel = bench_xmalloc(sizeof *c.bvel * uk);
    qw_init(&c.q, "frag");
    int32_t at = 0;
    for (int32_t j = 0; j < k; j++) {
        /* the distribution of "entity i gets the tag bits of i % k" */
        int32_t cnt = n / k + (j < n % k ? 1 : 0);
        c.start[j] = at;
        c.count[j] = cnt;
        qw_spawn(&c.q, (uint32_t)j, cnt, d->pos + at, d->vel + at, NULL, c.ents + at);
        c.bpos[j] = bench_xmalloc(sizeof(bench_position) * (size_t)cnt);
        c.bvel[j] = bench_xmalloc(sizeof(bench_velocity) * (size_t)cnt);
        memcpy(c.bpos[j], d->pos + at, sizeof(bench_position) * (size_t)cnt);
        memcpy(c.bvel[j], d->vel + at, sizeof(bench_velocity) * (size_t)cnt);
        at += cnt;
    }
    weft_term t2[2] = {q_term(c.q.b.pos, WEFT_ACCESS_WRITE, 0),
                       q_term(c.q.b.vel, WEFT_ACCESS_READ, 0)};
    c.query = qw_query(&c.q, t2, 2);
    q_pair res = q_best_pair(cfg, name, frag_weft, frag_base, frag_check, &c,
                             Q_FRAG_PASSES, 1.0);
    weft_world_stats st;
    bench_world_expect(&c.q.b, "weft_world_get_stats", weft_world_get_stats(c.q.b.w, &st));
    *out_bytes = (double)st.live_bytes;
    for (int32_t j = 0; j < k; j++) {
        free(c.bpos[j]);
        free(c.bvel[j]);
    }
    bench_world_fini(&c.q.b);
    free(c.ents);
    free(c.start);
    free(c.count);
    free(c.bpos);
    free(c.bvel);
    return res;
}

void bench_query_frag(const bench_cfg *cfg, const bench_data *d)
{
    static const int32_t ks[] = {1, 10, 100, 1000, 10000};
    static const char *ent_names[] = {
        "frag 1 arch, ns/entity",    "frag 10 arch, ns/entity",
        "frag 100 arch, ns/entity",  "frag 1000 arch, ns/entity",
        "frag 10000 arch, ns/entity",
    };
    static const char *tab_names[] = {
        "", "", "frag 100 arch, ns/table", "frag 1000 arch, ns/table",
        "frag 10000 arch, ns/table",
    };
    int32_t n = cfg->n < Q_FRAG_N ? cfg->n : Q_FRAG_N;
    q_pair t1 = {0.0, 0.0};
    double bytes1 = 0.0;
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        int32_t k = ks[i];
        if (k > n) {
            bench_note("frag: %d archetypes skipped (only %d entities)", (int)k, (int)n);
            continue;
        }
        double bytes = 0.0;
        q_pair t = frag_case(cfg, d, n, k, ent_names[i], &bytes);
        bench_report(ent_names[i], "ns", t.weft / n, t.base / n, 0.0);
        if (k == 1) {
            t1 = t;
            bytes1 = bytes;
        } else {
            double wt = (t.weft - t1.weft) / (double)(k - 1);
            double bt = (t.base - t1.base) / (double)(k - 1);
            if (k >= 100) {
                bench_report(tab_names[i], "ns", wt, bt, k >= 1000 ? 20.0 : 0.0);
            }
            bench_note("frag %5d archetypes: pass %8.1f us weft, %8.1f us baseline; "
                       "(T_k - T_1)/(k - 1) = %.1f ns weft; (T_k - T_k_base)/k = %.1f ns "
                       "per table over plain arrays",
                       (int)k, t.weft * 1e-3, t.base * 1e-3, wt,
                       (t.weft - t.base) / (double)k);
            if (k >= 1000) {
                /* below, allocation slack outside the tables hides the figure */
                bench_note("frag %5d archetypes: world live bytes per extra table %.0f",
                           (int)k, (bytes - bytes1) / (double)(k - 1));
            }
        }
    }
    bench_note("frag: %d entities with Position+Velocity over k archetypes (tag bits "
               "of j for archetype j); ns/entity = T_k / N; ns/table = (T_k - T_1) / "
               "(k - 1), T = best of %d passes (weft and baseline each); rows and the "
               "20 ns target only where k >= 100 / 1000 (below, the difference is "
               "within noise)",
               (int)n, (int)Q_FRAG_PASSES);
}

/* ================= changed: 1% changed in 2 of 100 tables ================= */

typedef struct chg_ctx {
    qworld q;
    int32_t n;
    weft_query *full;       /* Position write, Velocity read */
    weft_query *changed;    /* the same with Changed(Velocity) */
    weft_entity *ents;
    weft_entity *chosen;    /* the entities changed before every pass */
    int32_t nchosen;
    uint8_t *is_chosen;     /* by entity index */
    uint32_t max_index;
    bool verify;            /* check the yielded set on the next pass */
} chg_ctx;

static void chg_check_set(chg_ctx *c)
{
    weft_world *w = c->q.b.w;
    q_expect_count("changed", "weft_query_count (Changed)",
                   weft_query_count(w, c->changed), c->nchosen);
    q_expect_count("changed", "weft_query_count (full)", weft_query_count(w, c->full),
                   c->n);
    for (int32_t i = 0; i < c->n; i += 97) {
        weft_entity e = c->ents[i];
        bool want = c->is_chosen[weft_entity_index(e)] != 0;
        if (weft_query_matches(w, c->changed, e) != want) {
            bench_fail("changed", "weft_query_matches", "disagrees with the changed set");
        }
    }
}

static uint64_t chg_weft(void *p)
{
    chg_ctx *c = p;
    weft_world *w = c->q.b.w;
    weft_world_increment_change_tick(w);
    for (int32_t i = 0; i < c->nchosen; i++) {
        bench_velocity *v = weft_get_mut(w, c->chosen[i], c->q.b.vel, sizeof *v);
        q_field_ok(&c->q, v, "weft_get_mut");
    }
    bool verify = c->verify;
    c->verify = false;
    if (verify) {
        chg_check_set(c);
    }
    weft_iter it;
    int64_t seen = 0;
    int64_t wrong = 0;
    uint64_t t0 = bench_now_ns();
    weft_status st = weft_query_iter(w, c->changed, &it);
    if (st != WEFT_OK) {
        bench_world_expect(&c->q.b, "weft_query_iter", st);
    }
    while (weft_iter_next(&it)) {
        int32_t k = weft_iter_count(&it);
        bench_position *pp = weft_iter_field_mut(&it, 0, sizeof *pp);
        const bench_velocity *v = weft_iter_field(&it, 1, sizeof *v);
        q_field_ok(&c->q, pp, "weft_iter_field_mut");
        q_field_ok(&c->q, v, "weft_iter_field");
        k_pv(pp, v, k);
        if (verify) {
            const weft_entity *es = weft_iter_entities(&it);
            for (int32_t r = 0; r < k; r++) {
                wrong += c->is_chosen[weft_entity_index(es[r])] ? 0 : 1;
            }
        }
        seen += k;
    }
    uint64_t t1 = bench_now_ns();
    q_expect_count("changed", "entities yielded by the Changed query", seen, c->nchosen);
    q_expect_count("changed", "unchanged entities yielded", wrong, 0);
    return t1 - t0;
}

static uint64_t chg_full(void *p)
{
    chg_ctx *c = p;
    weft_iter it;
    int64_t seen = 0;
    uint64_t t0 = bench_now_ns();
    weft_status st = weft_query_iter(c->q.b.w, c->full, &it);
    if (st != WEFT_OK) {
        bench_world_expect(&c->q.b, "weft_query_iter", st);
    }
    while (weft_iter_next(&it)) {
        int32_t k = weft_iter_count(&it);
        bench_position *pp = weft_iter_field_mut(&it, 0, sizeof *pp);
        const bench_velocity *v = weft_iter_field(&it, 1, sizeof *v);
        q_field_ok(&c->q, pp, "weft_iter_field_mut");
        q_field_ok(&c->q, v, "weft_iter_field");
        k_pv(pp, v, k);
        seen += k;
    }
    uint64_t t1 = bench_now_ns();
    q_expect_count("changed", "entities yielded by the full query", seen, c->n);
    return t1 - t0;
}

static void chg_check(void *p)
{
    chg_ctx *c = p;
    bench_world_verify(&c->q.b, c->n);
}

void bench_query_changed(const bench_cfg *cfg, const bench_data *d)
{
    int32_t n = cfg->n;
    if (n < Q_CHG_TABLES * 2) {
        bench_note("changed: skipped (N < %d)", (int)(Q_CHG_TABLES * 2));
        return;
    }
    chg_ctx c;
    memset(&c, 0, sizeof c);
    c.n = n;
    c.ents = bench_xmalloc(sizeof *c.ents * (size_t)n);
    qw_init(&c.q, "changed");
    int32_t starts[Q_CHG_TABLES];
    int32_t counts[Q_CHG_TABLES];
    int32_t at = 0;
    for (int32_t j = 0; j < Q_CHG_TABLES; j++) {
        int32_t cnt = n / Q_CHG_TABLES + (j < n % Q_CHG_TABLES ? 1 : 0);
        starts[j] = at;
        counts[j] = cnt;
        qw_spawn(&c.q, (uint32_t)j, cnt, d->pos + at, d->vel + at, NULL, c.ents + at);
        at += cnt;
    }
    for (int32_t i = 0; i < n; i++) {
        uint32_t idx = weft_entity_index(c.ents[i]);
        c.max_index = idx > c.max_index ? idx : c.max_index;
    }
    c.is_chosen = bench_xmalloc((size_t)c.max_index + 1);
    c.chosen = bench_xmalloc(sizeof *c.chosen * (size_t)n);
    weft_term tf[2] = {q_term(c.q.b.pos, WEFT_ACCESS_WRITE, 0),
                       q_term(c.q.b.vel, WEFT_ACCESS_READ, 0)};
    weft_term tc[2] = {q_term(c.q.b.pos, WEFT_ACCESS_WRITE, 0),
                       q_term(c.q.b.vel, WEFT_ACCESS_READ, WEFT_FILTER_CHANGED)};
    c.full = qw_query(&c.q, tf, 2);
    c.changed = qw_query(&c.q, tc, 2);

    static const char *names[] = {"changed 1%, 2/100 tables, runs",
                                  "changed 1%, 2/100 tables, scattered"};
    for (int32_t mode = 0; mode < 2; mode++) {
        /* 1% of N: half of table 3 and half of table 4, as the first half of
         * each table (two runs) or every other row (scattered) */
        memset(c.is_chosen, 0, (size_t)c.max_index + 1);
        c.nchosen = 0;
        for (int32_t j = 3; j <= 4; j++) {
            int32_t half = counts[j] / 2;
            for (int32_t r = 0; r < half; r++) {
                int32_t row = mode == 0 ? r : 2 * r;
                weft_entity e = c.ents[starts[j] + row];
                c.chosen[c.nchosen++] = e;
                c.is_chosen[weft_entity_index(e)] = 1;
            }
        }
        /* a first run of the Changed query sees everything: consume it */
        chg_full(&c);
        weft_iter it;
        bench_world_expect(&c.q.b, "weft_query_iter",
                           weft_query_iter(c.q.b.w, c.changed, &it));
        while (weft_iter_next(&it)) {
        }
        c.verify = true;
        q_pair res = q_best_pair(cfg, names[mode], chg_weft, chg_full, chg_check, &c,
                                 Q_PASSES, (double)n);
        bench_report_ratio(names[mode], "ns", res.weft, res.base, 0.1);
    }
    bench_note("changed: N = %d in %d tables; before each pass %d Velocity values "
               "(1%%) in tables 3 and 4 are written with weft_get_mut; weft = the "
               "Changed(Velocity) query, baseline = the same query without the "
               "filter (full iteration); both p += v; ns per world entity",
               (int)n, (int)Q_CHG_TABLES, (int)c.nchosen);
    bench_world_fini(&c.q.b);
    free(c.ents);
    free(c.chosen);
    free(c.is_chosen);
}

/* ================= match: query creation in 10,000 archetypes ================= */

enum { MATCH_ARCHS = 10000, MATCH_NEW = 1000 };

/* The baseline's view of the archetypes: flat sorted component lists. */
typedef struct match_list {
    int32_t count;
    int32_t *off;           /* count + 1 offsets into ids */
    weft_component *ids;
    int32_t *entities;      /* entity count per archetype */
    int32_t id_cap;
    int32_t arch_cap;
} match_list;

static void match_list_load(match_list *l, const qworld *q, int32_t from, int32_t to)
{
    if (to > l->arch_cap) {
        bench_fail("match", "baseline lists", "more archetypes than expected");
    }
    for (int32_t a = from; a < to; a++) {
        weft_archetype_info info;
        bench_world_expect(&q->b, "weft_archetype_info_get",
                           weft_archetype_info_get(q->b.w, a, &info));
        int32_t base = l->off[a];
        if (base + info.component_count > l->id_cap) {
            bench_fail("match", "baseline lists", "too many ids");
        }
        if (info.component_count > 0) { /* the empty archetype has no list */
            memcpy(l->ids + base, info.components,
                   sizeof(weft_component) * (size_t)info.component_count);
        }
        l->off[a + 1] = base + info.component_count;
        l->entities[a] = info.entity_count;
    }
    l->count = to;
}

static bool match_has(const match_list *l, int32_t a, weft_component id)
{
    for (int32_t i = l->off[a]; i < l->off[a + 1]; i++) {
        if (l->ids[i] == id) {
            return true;
        }
    }
    return false;
}

/* Naive matcher: tests archetypes [from, to), appends matches; returns the
 * entities of all matches so far. */
static int64_t match_naive(const match_list *l, int32_t from, int32_t to,
                           weft_component a, weft_component b, int32_t *matches,
                           int32_t *match_count)
{
    for (int32_t i = from; i < to; i++) {
        if (match_has(l, i, a) && match_has(l, i, b)) {
            matches[(*match_count)++] = i;
        }
    }
    int64_t ents = 0;
    for (int32_t m = 0; m < *match_count; m++) {
        ents += l->entities[matches[m]];
    }
    return ents;
}

/* Archetype j: Position, Velocity when j is even, the tags of the bits of j;
 * one entity each. */
static void match_spawn(qworld *q, const bench_data *d, int32_t from, int32_t to)
{
    for (int32_t j = from; j < to; j++) {
        qw_spawn(q, (uint32_t)j, 1, d->pos + j, j % 2 == 0 ? d->vel + j : NULL, NULL,
                 NULL);
    }
}

void bench_query_match(const bench_cfg *cfg, const bench_data *d)
{
    if (cfg->n < MATCH_ARCHS + MATCH_NEW) {
        bench_note("match: skipped (needs N >= %d for the spawn values)",
                   (int)(MATCH_ARCHS + MATCH_NEW));
        return;
    }
    int32_t reps = cfg->reps;
    double *wc = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *bc = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *wi = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *bi = bench_xmalloc(sizeof(double) * (size_t)reps);
    double *split[3]; /* create alone, first count, count with nothing new */
    for (int32_t k = 0; k < 3; k++) {
        split[k] = bench_xmalloc(sizeof(double) * (size_t)reps);
    }
    int32_t archs_before = 0;
    int32_t archs_after = 0;
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        qworld q;
        qw_init(&q, "match");
        match_spawn(&q, d, 0, MATCH_ARCHS);
        weft_world_stats st;
        bench_world_expect(&q.b, "weft_world_get_stats", weft_world_get_stats(q.b.w, &st));
        archs_before = st.archetypes;
        match_list l;
        l.arch_cap = MATCH_ARCHS + MATCH_NEW + 64;
        l.id_cap = l.arch_cap * (Q_TAGS + 3);
        size_t ucap = (size_t)l.arch_cap;
        l.ids = bench_xmalloc(sizeof *l.ids * (size_t)l.id_cap);
        l.off = bench_xmalloc(sizeof *l.off * (ucap + 1));
        l.entities = bench_xmalloc(sizeof *l.entities * ucap);
        int32_t *matches = bench_xmalloc(sizeof *matches * ucap);
        int32_t match_count = 0;
        l.off[0] = 0;
        match_list_load(&l, &q, 0, st.archetypes);

        weft_query_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.terms[0] = q_term(q.b.pos, WEFT_ACCESS_WRITE, 0);
        desc.terms[1] = q_term(q.b.vel, WEFT_ACCESS_READ, 0);
        desc.term_count = 2;
        uint64_t t0 = bench_now_ns();
        weft_query *qq = weft_query_create(q.b.w, &desc);
        uint64_t t0c = bench_now_ns();
        int64_t cnt = qq != NULL ? weft_query_count(q.b.w, qq) : -1;
        uint64_t t1 = bench_now_ns();
        if (qq == NULL) {
            bench_world_expect(&q.b, "weft_query_create", weft_last_status(q.b.w));
        }
        int64_t bcnt = match_naive(&l, 0, l.count, q.b.pos, q.b.vel, matches, &match_count);
        uint64_t t2 = bench_now_ns();
        q_expect_count("match", "weft_query_count", cnt, MATCH_ARCHS / 2);
        q_expect_count("match", "baseline count", bcnt, MATCH_ARCHS / 2);

        match_spawn(&q, d, MATCH_ARCHS, MATCH_ARCHS + MATCH_NEW);
        bench_world_expect(&q.b, "weft_world_get_stats", weft_world_get_stats(q.b.w, &st));
        archs_after = st.archetypes;
        int32_t old_count = l.count;
        match_list_load(&l, &q, old_count, st.archetypes);
        uint64_t t3 = bench_now_ns();
        int64_t cnt2 = weft_query_count(q.b.w, qq);
        uint64_t t4 = bench_now_ns();
        int64_t cnt3 = weft_query_count(q.b.w, qq);
        uint64_t t5 = bench_now_ns();
        match_naive(&l, old_count, l.count, q.b.pos, q.b.vel, matches, &match_count);
        uint64_t t6 = bench_now_ns();
        int32_t want = (MATCH_ARCHS + MATCH_NEW) / 2;
        q_expect_count("match", "weft_query_count after new archetypes", cnt2, want);
        q_expect_count("match", "weft_query_count again", cnt3, want);
        q_expect_count("match", "baseline matches", match_count, want);
        if (r == -cfg->warmup) {
            bench_world_verify(&q.b, MATCH_ARCHS + MATCH_NEW);
        }
        int32_t added = archs_after - archs_before;
        double create = (double)(t1 - t0) * 1e-3;
        double bcreate = (double)(t2 - t1) * 1e-3;
        double inc = ((double)(t4 - t3) - (double)(t5 - t4)) / (double)added;
        /* the baseline's incremental step includes its count walk */
        double binc = (double)(t6 - t5) / (double)added;
        bench_trace(cfg, "match create", "weft", r, create);
        bench_trace(cfg, "match create", "baseline", r, bcreate);
        bench_trace(cfg, "match per new archetype", "weft", r, inc);
        bench_trace(cfg, "match per new archetype", "baseline", r, binc);
        if (r >= 0) {
            split[0][r] = (double)(t0c - t0) * 1e-3;
            split[1][r] = (double)(t1 - t0c) * 1e-3;
            split[2][r] = (double)(t5 - t4) * 1e-3;
            wc[r] = create;
            bc[r] = bcreate;
            wi[r] = inc;
            bi[r] = binc;
        }
        bench_world_expect(&q.b, "weft_query_destroy", weft_query_destroy(q.b.w, qq));
        bench_world_fini(&q.b);
        free(l.ids);
        free(l.off);
        free(l.entities);
        free(matches);
    }
    bench_report("match: create + first count", "us", bench_median(wc, reps),
                 bench_median(bc, reps), 0.0);
    bench_report("match: per new archetype", "ns", bench_median(wi, reps),
                 bench_median(bi, reps), 0.0);
    bench_note("match: world of %d archetypes (Position in all, Velocity in half, tag "
               "bits of j), query Position+Velocity; create + first count in us "
               "total; per new archetype = (count after %d new archetypes - count "
               "with nothing new) / %d; baseline = naive scan of plain sorted lists",
               (int)archs_before, (int)(archs_after - archs_before),
               (int)(archs_after - archs_before));
    bench_note("match: split (medians): weft_query_create %.1f us, first count (matches "
               "and walks) %.1f us, count with nothing new (walk of %d matched tables) "
               "%.1f us",
               bench_median(split[0], reps), bench_median(split[1], reps),
               (MATCH_ARCHS + MATCH_NEW) / 2, bench_median(split[2], reps));
    for (int32_t k = 0; k < 3; k++) {
        free(split[k]);
    }
    free(wc);
    free(bc);
    free(wi);
    free(bi);
}

/* ================= qget: weft_query_get per entity ================= */

void bench_query_get(const bench_cfg *cfg, const bench_data *d)
{
    int32_t n = cfg->n;
    size_t un = (size_t)n;
    qworld q;
    qw_init(&q, "qget");
    weft_entity *ents = bench_xmalloc(sizeof *ents * un);
    qw_spawn(&q, 0, n, d->pos, d->vel, NULL, ents);
    weft_term t2[2] = {q_term(q.b.pos, WEFT_ACCESS_READ, 0),
                       q_term(q.b.vel, WEFT_ACCESS_READ, 0)};
    weft_query *qq = qw_query(&q, t2, 2);
    q_expect_count("qget", "weft_query_count", weft_query_count(q.b.w, qq), n);
    bl_store *s = bl_create(true);
    uint64_t *bents = bench_xmalloc(sizeof *bents * un);
    bl_spawn_bulk(s, n, d->pos, d->vel, bents);
    weft_entity *wsh = bench_xmalloc(sizeof *wsh * un);
    uint64_t *bsh = bench_xmalloc(sizeof *bsh * un);
    double expect = 0.0;
    for (int32_t i = 0; i < n; i++) {
        wsh[i] = ents[d->perm[i]];
        bsh[i] = bents[d->perm[i]];
        expect += (double)d->pos[i].x;
    }
    int32_t reps = cfg->reps;
    double *v[4];
    for (int32_t k = 0; k < 4; k++) {
        v[k] = bench_xmalloc(sizeof(double) * (size_t)reps);
    }
    for (int32_t r = -cfg->warmup; r < reps; r++) {
        double sum[4] = {0.0, 0.0, 0.0, 0.0};
        uint64_t t[5];
        for (int32_t order = 0; order < 2; order++) {
            const weft_entity *we = order == 0 ? wsh : ents;
            const uint64_t *be = order == 0 ? bsh : bents;
            t[2 * order] = bench_now_ns();
            for (int32_t i = 0; i < n; i++) {
                const bench_position *p =
                    weft_query_get(q.b.w, qq, we[i], 0, sizeof(bench_position));
                if (p == NULL) {
                    bench_world_expect(&q.b, "weft_query_get", weft_last_status(q.b.w));
                    bench_fail("qget", "weft_query_get", "NULL for a matching entity");
                }
                sum[2 * order] += (double)p->x;
            }
            t[2 * order + 1] = bench_now_ns();
            for (int32_t i = 0; i < n; i++) {
                const bench_position *p = bl_get_pos(s, be[i]);
                sum[2 * order + 1] += (double)p->x;
            }
            t[2 * order + 2] = bench_now_ns();
        }
        for (int32_t k = 0; k < 4; k++) {
            if (sum[k] != expect) {
                bench_fail("qget", "sum check", "a get returned a wrong value");
            }
        }
        for (int32_t k = 0; k < 4; k++) {
            double ns = (double)(t[k + 1] - t[k]) / (double)n;
            bench_trace(cfg, k < 2 ? "qget shuffled" : "qget sequential",
                        k % 2 == 0 ? "weft" : "baseline", r, ns);
            if (r >= 0) {
                v[k][r] = ns;
            }
        }
    }
    bench_report("query_get, shuffled", "ns", bench_median(v[0], reps),
                 bench_median(v[1], reps), 5.0);
    bench_report("query_get, sequential", "ns", bench_median(v[2], reps),
                 bench_median(v[3], reps), 5.0);
    bench_note("qget: weft_query_get(term Position) of a Position+Velocity query for "
               "each of N entities in one table; baseline = bl_get_pos");
    bench_world_verify(&q.b, n);
    for (int32_t k = 0; k < 4; k++) {
        free(v[k]);
    }
    bench_world_expect(&q.b, "weft_query_destroy", weft_query_destroy(q.b.w, qq));
    bench_world_fini(&q.b);
    bl_destroy(s);
    free(ents);
    free(bents);
    free(wsh);
    free(bsh);
}

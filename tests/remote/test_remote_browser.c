/* tests/remote/test_remote_browser.c - the inspector page in a real
 * browser: headless Chromium, driven through the DevTools protocol over
 * a pipe (--remote-debugging-pipe: NUL-separated JSON on fds 3 and 4, no
 * WebDriver or WebSocket library needed), loads GET / from an app that
 * runs its frames (the remote plugin answers in Last) while the test
 * waits. Checked: the entity list appears and stays live through the
 * page's event stream; fields edited in the page by mouse and keyboard
 * (an integer, a float, an array element, a string, an enum) change the
 * component in the world, read back through the C API; an entity
 * despawned in the world disappears from the page; the schedule graph
 * (systems, edges, a set) and the frame timeline are drawn. Screenshots
 * are saved under the build tree (remote-artifacts/). Registered only
 * when chromium is found.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "remote_fixture.h"

/* ---- the world and app ---- */

typedef struct look {
    int32_t mode;      /* enum: idle, run */
    char name[16];
    uint8_t visible;   /* bool */
} look;

static void sys_noop(weft_system_ctx *ctx, void *user)
{
    (void)ctx;
    (void)user;
    /* a little work, so the timeline has something to draw */
    volatile int x = 0;
    for (int i = 0; i < 2000; i++) {
        x += i;
    }
}

typedef struct browser_world {
    fx_world fx;
    weft_app *app;
    weft_remote *r;
    weft_component look, name;
    weft_entity d; /* has a Look and a Name; parent of fx.a */
    weft_node physics, animate, render_prep; /* Update, in this order */
    int64_t physics_runs, prep_runs;         /* when stepping was turned on */
} browser_world;

static void make_world(browser_world *bw)
{
    fx_make(&bw->fx);
    weft_component_desc cd = {0};
    cd.name = "Look";
    cd.size = sizeof(look);
    bw->look = weft_component_register(bw->fx.w, &cd);
    static const weft_enum_value modes[] = {{"idle", 0}, {"run", 1}};
    static const weft_field fields[] = {
        {.name = "mode", .kind = WEFT_KIND_ENUM, .offset = offsetof(look, mode),
         .enum_values = modes, .enum_count = 2},
        {.name = "name", .kind = WEFT_KIND_STRING, .offset = offsetof(look, name), .count = 16},
        {.name = "visible", .kind = WEFT_KIND_BOOL, .offset = offsetof(look, visible)},
    };
    static const weft_type_desc desc = {.name = "Look", .fields = fields, .field_count = 3};
    assert_int_equal(weft_component_describe(bw->fx.w, bw->look, &desc), WEFT_OK);
    /* a Name as Bevy has it: a newtype over a string */
    cd.name = "bevy_ecs::name::Name";
    cd.size = 32;
    cd.align = 1;
    bw->name = weft_component_register(bw->fx.w, &cd);
    static const weft_field name_fields[] = {
        {.name = "name", .kind = WEFT_KIND_STRING, .offset = 0, .count = 32},
        {.name = "_shape", .kind = WEFT_KIND_SHAPE, .count = WEFT_SHAPE_NEWTYPE},
    };
    static const weft_type_desc name_desc = {.name = "Name", .fields = name_fields,
                                             .field_count = 2};
    assert_int_equal(weft_component_describe(bw->fx.w, bw->name, &name_desc), WEFT_OK);
    look l = {0, "nobody", 1};
    char nm[32] = "Player One";
    weft_value v[2] = {{bw->look, sizeof l, &l}, {bw->name, sizeof nm, nm}};
    bw->d = weft_spawn_with(bw->fx.w, v, 2);
    assert_true(bw->d != 0);
    assert_int_equal(weft_set_parent(bw->fx.w, bw->fx.a, bw->d), WEFT_OK);

    weft_app_desc ad = {0};
    ad.world = bw->fx.w;
    bw->app = weft_app_create(&ad);
    assert_non_null(bw->app);
    weft_query_desc qp = {0};
    qp.terms[0].id = bw->fx.pos;
    qp.terms[0].access = WEFT_ACCESS_READ;
    qp.term_count = 1;
    weft_system_desc sd = {0};
    sd.fn = sys_noop;
    sd.queries = &qp;
    sd.query_count = 1;
    sd.name = "physics";
    weft_node a = weft_app_add_system(bw->app, WEFT_APP_UPDATE, &sd);
    sd.name = "animate";
    weft_node b = weft_app_add_system(bw->app, WEFT_APP_UPDATE, &sd);
    sd.name = "render_prep";
    weft_node c = weft_app_add_system(bw->app, WEFT_APP_UPDATE, &sd);
    assert_true(a && b && c);
    weft_schedule *upd = weft_schedule_lookup(bw->fx.w, "Update");
    assert_non_null(upd);
    weft_node set = weft_schedule_ensure_set(upd, "gameplay");
    assert_int_equal(weft_schedule_add_to_set(upd, a, set), WEFT_OK);
    assert_int_equal(weft_schedule_add_to_set(upd, b, set), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(upd, a, b, 0), WEFT_OK);
    assert_int_equal(weft_schedule_add_order(upd, b, c, 0), WEFT_OK);
    bw->physics = a;
    bw->animate = b;
    bw->render_prep = c;
    weft_remote_desc d = {0};
    d.port = WEFT_REMOTE_ANY_PORT;
    d.flags = WEFT_REMOTE_ALLOW_WRITES;
    assert_int_equal(weft_remote_add_plugin(bw->app, &d, &bw->r), WEFT_OK);
    assert_int_equal(weft_app_update(bw->app, 1.0 / 60), WEFT_OK);
}

/* ---- DevTools protocol over a pipe ---- */

typedef struct cdp {
    pid_t pid;
    int wfd, rfd;
    char *buf;
    size_t len, cap;
    int next_id;
    char session[128];
    browser_world *bw;
    char profile[64];
} cdp;

/* One frame of the app (the remote answers in its Last schedule). */
static void frame(cdp *c)
{
    weft_status st = weft_app_update(c->bw->app, 1.0 / 60);
    if (st != WEFT_OK) {
        fail_msg("app update: %s", weft_last_error(c->bw->fx.w));
    }
}

static void cdp_start(cdp *c, browser_world *bw)
{
    memset(c, 0, sizeof *c);
    c->bw = bw;
    snprintf(c->profile, sizeof c->profile, "/tmp/weft-remote-browser-XXXXXX");
    assert_non_null(mkdtemp(c->profile));
    int to_chrome[2], from_chrome[2];
    assert_int_equal(pipe(to_chrome), 0);
    assert_int_equal(pipe(from_chrome), 0);
    c->pid = fork();
    assert_true(c->pid >= 0);
    if (c->pid == 0) {
        int a = fcntl(to_chrome[0], F_DUPFD, 10);
        int b = fcntl(from_chrome[1], F_DUPFD, 10);
        dup2(a, 3);
        dup2(b, 4);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        char dir[128];
        snprintf(dir, sizeof dir, "--user-data-dir=%s", c->profile);
        execl(WEFT_CHROMIUM, "chromium", "--headless", "--no-sandbox", "--disable-gpu",
              "--no-first-run", "--remote-debugging-pipe", "--window-size=1280,800", dir,
              "about:blank", (char *)NULL);
        _exit(127);
    }
    close(to_chrome[0]);
    close(from_chrome[1]);
    c->wfd = to_chrome[1];
    c->rfd = from_chrome[0];
    fcntl(c->rfd, F_SETFL, fcntl(c->rfd, F_GETFL) | O_NONBLOCK);
    signal(SIGPIPE, SIG_IGN);
    c->cap = 1 << 16;
    c->buf = malloc(c->cap);
    c->next_id = 1;
}

static int cdp_send(cdp *c, const char *method, json_t *params, bool session)
{
    int id = c->next_id++;
    json_t *m = json_pack("{s:i,s:s,s:o}", "id", id, "method", method, "params",
                          params ? params : json_object());
    if (session && c->session[0]) {
        json_object_set_new(m, "sessionId", json_string(c->session));
    }
    char *text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    size_t n = strlen(text) + 1; /* with the NUL that ends a message */
    size_t off = 0;
    while (off < n) {
        ssize_t k = write(c->wfd, text + off, n - off);
        assert_true(k > 0);
        off += (size_t)k;
    }
    free(text);
    return id;
}

/* Waits (running frames) for the answer to `id`; returns its "result". */
static json_t *cdp_wait(cdp *c, int id)
{
    time_t start = time(NULL);
    for (;;) {
        char *nul;
        while ((nul = memchr(c->buf, '\0', c->len)) != NULL) {
            size_t mlen = (size_t)(nul - c->buf);
            json_error_t jerr;
            json_t *m = json_loadb(c->buf, mlen, 0, &jerr);
            memmove(c->buf, nul + 1, c->len - mlen - 1);
            c->len -= mlen + 1;
            if (m && json_integer_value(json_object_get(m, "id")) == id) {
                json_t *err = json_object_get(m, "error");
                if (err) {
                    fail_msg("DevTools error: %s", json_dumps(err, 0));
                }
                json_t *res = json_incref(json_object_get(m, "result"));
                json_decref(m);
                return res;
            }
            json_decref(m); /* an event */
        }
        frame(c);
        struct pollfd pfd = {c->rfd, POLLIN, 0};
        poll(&pfd, 1, 2);
        if (c->len + 65536 > c->cap) {
            c->cap *= 2;
            c->buf = realloc(c->buf, c->cap);
        }
        ssize_t k = read(c->rfd, c->buf + c->len, c->cap - c->len);
        if (k == 0) {
            fail_msg("chromium closed its DevTools pipe");
        }
        if (k > 0) {
            c->len += (size_t)k;
        }
        if (time(NULL) - start > 60) {
            fail_msg("no DevTools answer in 60 s");
        }
    }
}

static json_t *cdp_call(cdp *c, const char *method, json_t *params, bool session)
{
    return cdp_wait(c, cdp_send(c, method, params, session));
}

/* Evaluates `js` in the page (promises awaited); returns its value. */
static json_t *eval(cdp *c, const char *js)
{
    json_t *res = cdp_call(c, "Runtime.evaluate",
                           json_pack("{s:s,s:b,s:b}", "expression", js, "returnByValue", 1,
                                     "awaitPromise", 1),
                           true);
    json_t *ex = json_object_get(res, "exceptionDetails");
    if (ex) {
        fail_msg("page exception in '%s': %s", js, json_dumps(ex, 0));
    }
    json_t *v = json_incref(json_object_get(json_object_get(res, "result"), "value"));
    json_decref(res);
    return v;
}

static bool eval_true(cdp *c, const char *js)
{
    json_t *v = eval(c, js);
    bool t = json_is_true(v);
    json_decref(v);
    return t;
}

/* Runs frames until `js` is true (at most ~30 s). */
static void wait_for(cdp *c, const char *js)
{
    time_t start = time(NULL);
    while (!eval_true(c, js)) {
        for (int i = 0; i < 5; i++) {
            frame(c);
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
        if (time(NULL) - start > 30) {
            json_t *dom = eval(c, "document.body.innerText.slice(0, 3000)");
            fail_msg("the page never satisfied: %s\npage text:\n%s", js, json_string_value(dom));
        }
    }
}

static void mouse_click(cdp *c, const char *selector)
{
    char js[512];
    snprintf(js, sizeof js,
             "(() => { const e = document.querySelector('%s'); e.scrollIntoView();"
             " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()",
             selector);
    json_t *xy = eval(c, js);
    double x = json_number_value(json_array_get(xy, 0));
    double y = json_number_value(json_array_get(xy, 1));
    json_decref(xy);
    static const char *const types[] = {"mousePressed", "mouseReleased"};
    for (int i = 0; i < 2; i++) {
        json_decref(cdp_call(c, "Input.dispatchMouseEvent",
                             json_pack("{s:s,s:f,s:f,s:s,s:i}", "type", types[i], "x", x, "y", y,
                                       "button", "left", "clickCount", 1),
                             true));
    }
}

static void key_enter(cdp *c)
{
    static const char *const types[] = {"keyDown", "keyUp"};
    for (int i = 0; i < 2; i++) {
        json_decref(cdp_call(c, "Input.dispatchKeyEvent",
                             json_pack("{s:s,s:s,s:s,s:i,s:s}", "type", types[i], "key", "Enter",
                                       "code", "Enter", "windowsVirtualKeyCode", 13, "text",
                                       i ? "" : "\r"),
                             true));
    }
}

/* Types `text` into the field input (clicked, its text selected, typed
 * over, Enter), as a user would. */
static void type_into(cdp *c, const char *component, const char *path, const char *text)
{
    char sel[256], js[512];
    snprintf(sel, sizeof sel, "#detail [data-component=\"%s\"][data-path=\"%s\"]", component, path);
    snprintf(js, sizeof js, "!!document.querySelector('%s')", sel);
    wait_for(c, js);
    mouse_click(c, sel);
    snprintf(js, sizeof js, "(() => { const e = document.querySelector('%s'); e.focus(); e.select(); return true; })()",
             sel);
    json_decref(eval(c, js));
    json_decref(cdp_call(c, "Input.insertText", json_pack("{s:s}", "text", text), true));
    key_enter(c);
}

/* Runs frames until `done(bw)` holds (at most ~20 s). */
static void wait_world(cdp *c, bool (*done)(browser_world *bw), const char *what)
{
    time_t start = time(NULL);
    while (!done(c->bw)) {
        frame(c);
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        if (time(NULL) - start > 20) {
            json_t *st = eval(c, "document.getElementById('status').textContent");
            fail_msg("the world never saw %s (page status: %s)", what, json_string_value(st));
        }
    }
}

static int64_t runs_of(browser_world *bw, weft_node n)
{
    weft_system_stats st;
    memset(&st, 0, sizeof st);
    weft_schedule_system_stats(weft_schedule_lookup(bw->fx.w, WEFT_APP_UPDATE), n, &st);
    return st.runs;
}

/* continue ran physics and animate and stopped before the breakpoint */
static bool stopped_at_render_prep(browser_world *bw)
{
    return weft_schedule_step_cursor(weft_schedule_lookup(bw->fx.w, WEFT_APP_UPDATE)) ==
               bw->render_prep &&
           runs_of(bw, bw->physics) > bw->physics_runs && runs_of(bw, bw->animate) > 0;
}

static bool is_stepping(browser_world *bw)
{
    return weft_schedule_is_stepping(weft_schedule_lookup(bw->fx.w, WEFT_APP_UPDATE));
}

static bool hp_is_42(browser_world *bw)
{
    const fx_health *h = weft_get(bw->fx.w, bw->fx.a, bw->fx.health, sizeof *h);
    return h && h->hp == 42;
}

static bool slot2_is_7(browser_world *bw)
{
    const fx_health *h = weft_get(bw->fx.w, bw->fx.a, bw->fx.health, sizeof *h);
    return h && h->slots[2] == 7 && h->hp == 42 && h->slots[0] == 1;
}

static bool x_is_2_25(browser_world *bw)
{
    const fx_pos *p = weft_get(bw->fx.w, bw->fx.a, bw->fx.pos, sizeof *p);
    return p && p->x == 2.25f && p->y == 2.0f;
}

static bool name_is_hero(browser_world *bw)
{
    const look *l = weft_get(bw->fx.w, bw->d, bw->look, sizeof *l);
    return l && strcmp(l->name, "hero") == 0;
}

static bool mode_is_run(browser_world *bw)
{
    const look *l = weft_get(bw->fx.w, bw->d, bw->look, sizeof *l);
    return l && l->mode == 1;
}

static void screenshot(cdp *c, const char *name)
{
    json_t *res = cdp_call(c, "Page.captureScreenshot", json_pack("{s:s}", "format", "png"), true);
    const char *b64 = json_string_value(json_object_get(res, "data"));
    assert_non_null(b64);
    size_t n = strlen(b64);
    unsigned char *png = malloc(n);
    size_t out = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = b64[i];
        int v = ch >= 'A' && ch <= 'Z'   ? ch - 'A'
                : ch >= 'a' && ch <= 'z' ? ch - 'a' + 26
                : ch >= '0' && ch <= '9' ? ch - '0' + 52
                : ch == '+'              ? 62
                : ch == '/'              ? 63
                                         : -1;
        if (v < 0) {
            continue;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            png[out++] = (unsigned char)(acc >> bits);
        }
    }
    json_decref(res);
    mkdir(WEFT_REMOTE_ARTIFACTS, 0755);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", WEFT_REMOTE_ARTIFACTS, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(png, 1, out, f), out);
    fclose(f);
    assert_true(out > 1000);
    assert_int_equal(memcmp(png, "\x89PNG", 4), 0);
    free(png);
}

static void cdp_stop(cdp *c)
{
    int id = cdp_send(c, "Browser.close", NULL, false);
    (void)id;
    int status = 0;
    for (int i = 0; i < 500; i++) {
        if (waitpid(c->pid, &status, WNOHANG) == c->pid) {
            c->pid = 0;
            break;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    if (c->pid) {
        kill(c->pid, SIGKILL); /* our own child */
        waitpid(c->pid, &status, 0);
    }
    close(c->wfd);
    close(c->rfd);
    free(c->buf);
    char rm[256];
    snprintf(rm, sizeof rm, "rm -rf '%s'", c->profile);
    assert_int_equal(system(rm), 0);
}

static void test_inspector_in_chromium(void **state)
{
    (void)state;
    browser_world bw;
    make_world(&bw);
    cdp c;
    cdp_start(&c, &bw);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", (int)weft_remote_port(bw.r));
    json_t *res = cdp_call(&c, "Target.createTarget", json_pack("{s:s}", "url", url), false);
    const char *target = json_string_value(json_object_get(res, "targetId"));
    assert_non_null(target);
    json_t *att = cdp_call(&c, "Target.attachToTarget",
                           json_pack("{s:s,s:b}", "targetId", target, "flatten", 1), false);
    snprintf(c.session, sizeof c.session, "%s",
             json_string_value(json_object_get(att, "sessionId")));
    json_decref(att);
    json_decref(res);
    assert_true(c.session[0] != '\0');

    /* the entity list, live through the page's event stream */
    char js[512];
    snprintf(js, sizeof js, "!!document.querySelector('#tree span[data-entity=\"%llu\"]')",
             (unsigned long long)bw.fx.a);
    wait_for(&c, js);
    wait_for(&c, "document.getElementById('status').textContent.includes('(streaming)')");
    wait_for(&c, "[...document.querySelectorAll('#arch td')].some((t) => t.textContent === 'Position, Health, Tag, weft.ChildOf')");

    /* entities are labelled by their Name; the hierarchy collapses and
     * opens; the list filters by component */
    snprintf(js, sizeof js,
             "document.querySelector('#tree span[data-entity=\"%llu\"]').textContent === 'Player One'",
             (unsigned long long)bw.d);
    wait_for(&c, js);
    snprintf(js, sizeof js,
             "(() => { document.querySelector('#tree span[data-entity=\"%llu\"]').previousSibling.click();"
             " return true; })()",
             (unsigned long long)bw.d);
    json_decref(eval(&c, js));
    snprintf(js, sizeof js, "!document.querySelector('#tree span[data-entity=\"%llu\"]')",
             (unsigned long long)bw.fx.a);
    wait_for(&c, js); /* the child is hidden */
    snprintf(js, sizeof js,
             "(() => { document.querySelector('#tree span[data-entity=\"%llu\"]').previousSibling.click();"
             " return true; })()",
             (unsigned long long)bw.d);
    json_decref(eval(&c, js));
    snprintf(js, sizeof js, "!!document.querySelector('#tree span[data-entity=\"%llu\"]')",
             (unsigned long long)bw.fx.a);
    wait_for(&c, js); /* open again */
    json_decref(eval(&c, "(() => { const f = document.getElementById('filter'); f.value = 'Look';"
                         " f.dispatchEvent(new Event('change')); return true; })()"));
    snprintf(js, sizeof js,
             "!!document.querySelector('#tree span[data-entity=\"%llu\"]') &&"
             " !document.querySelector('#tree span[data-entity=\"%llu\"]')",
             (unsigned long long)bw.d, (unsigned long long)bw.fx.b);
    wait_for(&c, js);
    json_decref(eval(&c, "(() => { const f = document.getElementById('filter'); f.value = '';"
                         " f.dispatchEvent(new Event('change')); return true; })()"));

    /* the panels: a live plot of frame time and entity count, stepping */
    wait_for(&c, "+document.getElementById('plot').dataset.samples >= 3 &&"
                 " !!document.querySelector('#plot polyline.series-entities')");
    wait_for(&c, "!!document.getElementById('st-step') && !!document.getElementById('states')");

    /* the schedule graph (Update: three systems, two edges, one set) and
     * the frame timeline (profiled runs of the main schedules) */
    wait_for(&c, "document.querySelectorAll('#graph g.node').length === 3 &&"
                 " document.querySelectorAll('#graph path.edge').length === 2 &&"
                 " [...document.querySelectorAll('#graph g.set text')].some((t) => t.textContent === 'gameplay')");
    wait_for(&c, "document.querySelectorAll('#timeline rect.sys').length >= 3 &&"
                 " [...document.querySelectorAll('#timeline rect.sys title')].some((t) => t.textContent.includes('physics'))");

    /* a breakpoint from the page: ticked on render_prep, stepping on,
     * continue: the schedule runs physics and animate and stops there */
    wait_for(&c, "!!document.querySelector('#st-systems input[data-system=\"render_prep\"]')");
    mouse_click(&c, "#st-systems input[data-system=\"render_prep\"]");
    wait_for(&c, "document.getElementById('status').textContent === 'breakpoint at render_prep' &&"
                 " document.querySelector('#st-systems input[data-system=\"render_prep\"]').checked");
    mouse_click(&c, "#st-on");
    wait_world(&c, is_stepping, "stepping on");
    wait_for(&c, "document.getElementById('st-state').textContent.includes('stepping')");
    bw.physics_runs = runs_of(&bw, bw.physics);
    bw.prep_runs = runs_of(&bw, bw.render_prep);
    for (int i = 0; i < 3; i++) {
        frame(&c); /* stepping: nothing runs unasked */
    }
    assert_int_equal(runs_of(&bw, bw.physics), bw.physics_runs);
    mouse_click(&c, "#st-cont");
    wait_world(&c, stopped_at_render_prep, "the schedule stopped before render_prep");
    for (int i = 0; i < 3; i++) {
        frame(&c);
    }
    assert_int_equal(runs_of(&bw, bw.render_prep), bw.prep_runs);
    assert_int_equal(runs_of(&bw, bw.physics), bw.physics_runs + 1);
    /* the page shows the cursor at the breakpoint */
    wait_for(&c, "document.getElementById('st-systems').dataset.cursor === 'render_prep'");

    /* edit fields through the page: select the entity, type into inputs */
    snprintf(js, sizeof js, "#tree span[data-entity=\"%llu\"]", (unsigned long long)bw.fx.a);
    mouse_click(&c, js);
    type_into(&c, "Health", ".hp", "42");
    wait_world(&c, hp_is_42, "Health.hp = 42");
    type_into(&c, "Health", ".slots[2]", "7");
    wait_world(&c, slot2_is_7, "Health.slots[2] = 7 (the rest kept)");
    type_into(&c, "Position", ".x", "2.25");
    wait_world(&c, x_is_2_25, "Position.x = 2.25 (y kept)");
    /* the page shows the new values (pushed by the stream) */
    wait_for(&c, "document.querySelector('#detail [data-component=\"Health\"][data-path=\".hp\"]').value === '42'");
    screenshot(&c, "inspector.png");

    /* a string and an enum of another entity */
    snprintf(js, sizeof js, "#tree span[data-entity=\"%llu\"]", (unsigned long long)bw.d);
    mouse_click(&c, js);
    type_into(&c, "Look", ".name", "hero");
    wait_world(&c, name_is_hero, "Look.name = \"hero\"");
    wait_for(&c, "!!document.querySelector('#detail select[data-path=\".mode\"]')");
    json_decref(eval(&c, "(() => { const s = document.querySelector('#detail select[data-path=\".mode\"]');"
                         " s.focus(); s.value = 'run'; s.dispatchEvent(new Event('change')); return true; })()"));
    wait_world(&c, mode_is_run, "Look.mode = run");

    /* despawned in the world: gone from the page */
    assert_int_equal(weft_despawn(bw.fx.w, bw.fx.b), WEFT_OK);
    snprintf(js, sizeof js, "!document.querySelector('#tree span[data-entity=\"%llu\"]')",
             (unsigned long long)bw.fx.b);
    wait_for(&c, js);
    screenshot(&c, "inspector-edited.png");

    cdp_stop(&c);
    weft_world *w = bw.fx.w;
    assert_int_equal(weft_app_destroy(bw.app), WEFT_OK);
    weft_world_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inspector_in_chromium),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

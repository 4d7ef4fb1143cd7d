/* tests/remote/test_remote_browser.c - the inspector page in a real
 * browser: headless Chromium loads GET / from a remote over loopback while
 * the driver polls, and the DOM it builds is checked: the entity list
 * appears (ids and component names), and an entity despawned in the world
 * is gone from the page on the next load. A screenshot is saved under the
 * build tree (remote-artifacts/inspector.png). Registered only when
 * chromium is found.
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "remote_fixture.h"

typedef struct browser_run {
    char cmd[1024];
    char *out;
    size_t len;
    int done;
} browser_run;

static void *browser_main(void *arg)
{
    browser_run *b = arg;
    FILE *p = popen(b->cmd, "r");
    size_t cap = 1 << 16;
    b->out = malloc(cap);
    b->len = 0;
    if (p) {
        size_t k;
        while ((k = fread(b->out + b->len, 1, cap - b->len - 1, p)) > 0) {
            b->len += k;
            if (b->len + 1 == cap) {
                cap *= 2;
                b->out = realloc(b->out, cap);
            }
        }
        pclose(p);
    }
    b->out[b->len] = '\0';
    __atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Runs chromium with `args` on the remote's page while polling. */
static char *browse(weft_remote *r, const char *profile, const char *args)
{
    browser_run *b = calloc(1, sizeof *b);
    snprintf(b->cmd, sizeof b->cmd,
             "'%s' --headless --no-sandbox --disable-gpu --no-first-run "
             "--user-data-dir='%s' --virtual-time-budget=3000 %s http://127.0.0.1:%d/ "
             "2>/dev/null",
             WEFT_CHROMIUM, profile, args, (int)weft_remote_port(r));
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, browser_main, b), 0);
    time_t start = time(NULL);
    while (!__atomic_load_n(&b->done, __ATOMIC_ACQUIRE)) {
        weft_remote_poll(r, 8);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        if (time(NULL) - start > 120) {
            fail_msg("chromium did not finish in 120 s");
        }
    }
    pthread_join(t, NULL);
    char *out = b->out;
    free(b);
    return out;
}

static void test_page_in_chromium(void **state)
{
    (void)state;
    fx_world fx;
    fx_make(&fx);
    weft_remote_desc d = {0};
    d.world = fx.w;
    d.port = WEFT_REMOTE_ANY_PORT;
    d.flags = WEFT_REMOTE_ALLOW_WRITES;
    weft_remote *r = NULL;
    assert_int_equal(weft_remote_create(&d, &r), WEFT_OK);
    char profile[] = "/tmp/weft-remote-browser-XXXXXX";
    assert_non_null(mkdtemp(profile));

    char *dom = browse(r, profile, "--dump-dom");
    char want[128];
    snprintf(want, sizeof want, "<span>%llu Position, Health, Tag</span>",
             (unsigned long long)fx.a);
    if (!strstr(dom, want)) {
        fail_msg("the entity list lacks '%s':\n%.2000s", want, dom);
    }
    snprintf(want, sizeof want, "<span>%llu Position</span>", (unsigned long long)fx.b);
    assert_non_null(strstr(dom, want));
    assert_non_null(strstr(dom, "3 entities"));
    assert_non_null(strstr(dom, "<td>Position, Health, Tag</td>")); /* archetype table */
    free(dom);

    /* despawned in the world: gone from the page */
    assert_int_equal(weft_despawn(fx.w, fx.b), WEFT_OK);
    dom = browse(r, profile, "--dump-dom");
    assert_null(strstr(dom, want));
    assert_non_null(strstr(dom, "2 entities"));
    free(dom);

    char shot[1024];
    mkdir(WEFT_REMOTE_ARTIFACTS, 0755);
    snprintf(shot, sizeof shot, "%s/inspector.png", WEFT_REMOTE_ARTIFACTS);
    remove(shot);
    char args[1200];
    snprintf(args, sizeof args, "--window-size=1200,700 --screenshot='%s'", shot);
    free(browse(r, profile, args));
    struct stat st;
    assert_int_equal(stat(shot, &st), 0);
    assert_true(st.st_size > 1000);

    char rm[256];
    snprintf(rm, sizeof rm, "rm -rf '%s'", profile);
    assert_int_equal(system(rm), 0);
    weft_remote_destroy(r);
    weft_world_destroy(fx.w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page_in_chromium),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

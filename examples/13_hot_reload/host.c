/* examples/13_hot_reload/host.c - a host that changes its gameplay code
 * while it runs.
 * SPDX-License-Identifier: MIT
 *
 * Usage: weft_example_hot_reload <game.c> <work dir> <compile command>
 *
 * The host builds game.c into <work dir>/game.so with the compile command
 * (the compiler and flags of this build; the host appends "-o out src"),
 * loads it and runs 10 frames: 100 entities move by 1 a frame and a host
 * system counts frames. Then it edits the constant GAME_SPEED in a copy of
 * the source (1 -> 3), rebuilds the module with the same command (into a
 * temporary file renamed over game.so, so a reload never sees a half
 * written build), reloads it between two frames and runs 10 more. It
 * checks that the world kept its 100 entities, its frame counter and the
 * system's run count while the behaviour changed (x == 10*1 + 10*3).
 */
#include "weft.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Position {
    int64_t x;
} Position;

typedef struct Frames {
    int64_t n;
} Frames;

static int fail(const char *what)
{
    fprintf(stderr, "hot_reload: %s\n", what);
    return 1;
}

static void count_frames(weft_system_ctx *ctx, void *user)
{
    weft_component frames = (weft_component)(uintptr_t)user;
    Frames *f = weft_system_resource_mut(ctx, frames, sizeof *f);
    f->n++;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) {
        buf[n] = '\0';
    }
    fclose(f);
    return buf;
}

/* Writes `src` with "#define GAME_SPEED <old>" turned into <speed>. */
static int write_edited(const char *src, const char *to, int speed)
{
    const char *key = "#define GAME_SPEED ";
    const char *at = strstr(src, key);
    if (!at) {
        return -1;
    }
    const char *rest = strchr(at, '\n');
    FILE *f = fopen(to, "wb");
    if (!f || !rest) {
        if (f) {
            fclose(f);
        }
        return -1;
    }
    fwrite(src, 1, (size_t)(at - src), f);
    fprintf(f, "%s%d", key, speed);
    fputs(rest, f);
    return fclose(f);
}

/* Builds `src` into `out` through a temporary file renamed at the end. */
static int build_module(const char *cc, const char *src, const char *out)
{
    char tmp[1024], cmd[4096];
    snprintf(tmp, sizeof tmp, "%s.partial", out);
    int n = snprintf(cmd, sizeof cmd, "%s -o '%s' '%s'", cc, tmp, src);
    if (n < 0 || (size_t)n >= sizeof cmd || system(cmd) != 0) {
        return -1;
    }
    return rename(tmp, out);
}

static int64_t sum_x(weft_world *w, weft_component pos, int32_t *count)
{
    weft_query_desc q;
    memset(&q, 0, sizeof q);
    q.terms[0].id = pos;
    q.term_count = 1;
    weft_query *qr = weft_query_create(w, &q);
    int64_t sum = 0;
    *count = 0;
    weft_iter it;
    weft_query_iter(w, qr, &it);
    while (weft_iter_next(&it)) {
        const Position *p = weft_iter_field(&it, 0, sizeof *p);
        for (int32_t i = 0; i < weft_iter_count(&it); i++) {
            sum += p[i].x;
            (*count)++;
        }
    }
    weft_query_destroy(w, qr);
    return sum;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s <game.c> <work dir> <compile command>\n", argv[0]);
        return 2;
    }
    char so[1024], edited[1024];
    snprintf(so, sizeof so, "%s/game.so", argv[2]);
    snprintf(edited, sizeof edited, "%s/game_edited.c", argv[2]);
    char *src = read_all(argv[1]);
    if (!src) {
        return fail("cannot read the module source");
    }
    if (build_module(argv[3], argv[1], so) != 0) {
        free(src);
        return fail("the first build failed");
    }

    weft_app *app = weft_app_create(NULL);
    weft_world *w = weft_app_world(app);
    weft_component_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.name = "Position";
    cd.size = sizeof(Position);
    weft_component pos = weft_component_register(w, &cd);
    cd.name = "Frames";
    cd.size = sizeof(Frames);
    weft_component frames = weft_component_register(w, &cd);
    Frames zero = {0};
    weft_resource_insert(w, frames, &zero, sizeof zero);
    for (int i = 0; i < 100; i++) {
        Position p = {0};
        weft_entity e = weft_spawn(w);
        weft_insert(w, e, pos, &p, sizeof p);
    }
    weft_resource_use use = {frames, WEFT_ACCESS_WRITE};
    weft_system_desc d;
    memset(&d, 0, sizeof d);
    d.name = "count_frames";
    d.fn = count_frames;
    d.user = (void *)(uintptr_t)frames;
    d.resources = &use;
    d.resource_count = 1;
    weft_app_add_system(app, "Last", &d);

    weft_module *game = weft_module_load(app, so);
    if (!game) {
        fprintf(stderr, "hot_reload: %s\n", weft_last_error(w));
        free(src);
        weft_app_destroy(app);
        return 1;
    }
    for (int i = 0; i < 10; i++) {
        weft_app_update(app, 1.0 / 60.0);
    }
    int32_t n1;
    int64_t s1 = sum_x(w, pos, &n1);
    printf("before the edit: %d entities, x = %lld each, frame %lld\n", n1,
           (long long)(s1 / (n1 ? n1 : 1)),
           (long long)((const Frames *)weft_resource_get(w, frames, sizeof(Frames)))->n);

    /* the edit: GAME_SPEED 1 -> 3, rebuilt with the same command */
    int rc = 0;
    if (write_edited(src, edited, 3) != 0 || build_module(argv[3], edited, so) != 0) {
        rc = fail("the edited build failed");
    } else if (weft_module_reload(game) != WEFT_OK) {
        fprintf(stderr, "hot_reload: %s\n", weft_last_error(w));
        rc = 1;
    }
    for (int i = 0; rc == 0 && i < 10; i++) {
        weft_app_update(app, 1.0 / 60.0);
    }
    int32_t n2;
    int64_t s2 = sum_x(w, pos, &n2);
    int64_t f2 = ((const Frames *)weft_resource_get(w, frames, sizeof(Frames)))->n;
    weft_system_stats st;
    weft_schedule *upd = weft_app_schedule(app, "Update");
    weft_schedule_system_stats(upd, 1, &st);
    printf("after the edit: %d entities, x = %lld each, frame %lld, 'move' ran %llu times\n", n2,
           (long long)(s2 / (n2 ? n2 : 1)), (long long)f2, (unsigned long long)st.runs);
    if (rc == 0 && (n2 != 100 || s2 != 100 * (10 + 30) || f2 != 20 || st.runs != 20)) {
        rc = fail("the world did not keep its state, or the new code did not run");
    }
    free(src);
    remove(edited);
    weft_app_destroy(app);
    return rc;
}

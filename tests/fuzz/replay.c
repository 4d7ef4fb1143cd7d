// tests/fuzz/replay.c - runs a fuzz target without libFuzzer: every file
// named on the command line, and every file inside every directory named
// (sorted by name, not recursive), goes once through the target's
// LLVMFuzzerTestOneInput. This is how the committed seed corpus and the
// regression inputs of each target run in the normal ctest suite (under
// ASan/UBSan in the Debug build), with gcc or clang.
// SPDX-License-Identifier: MIT
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 4096;
    size_t len = 0;
    uint8_t *buf = malloc(cap);
    if (buf == NULL) {
        fclose(f);
        return 1;
    }
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                return 1;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    // libFuzzer hands over a buffer of exactly the input's size.
    uint8_t *exact = malloc(len == 0 ? 1 : len);
    if (exact == NULL) {
        free(buf);
        return 1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "replay: cannot open directory %s\n", dir);
        return 1;
    }
    char **names = NULL;
    size_t n = 0;
    size_t cap = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (ent->d_name[0] == '.') {
            continue; // ., .., and hidden files such as .gitkeep
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *names);
            if (nn == NULL) {
                closedir(d);
                return 1;
            }
            names = nn;
        }
        size_t len = strlen(dir) + strlen(ent->d_name) + 2;
        names[n] = malloc(len);
        if (names[n] == NULL) {
            closedir(d);
            return 1;
        }
        snprintf(names[n], len, "%s/%s", dir, ent->d_name);
        n++;
    }
    closedir(d);
    if (n > 1) {
        qsort(names, n, sizeof *names, cmp_names);
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            rc |= run_file(names[i]);
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    int count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            rc = 1;
        } else if (S_ISDIR(st.st_mode)) {
            rc |= run_dir(argv[i], &count);
        } else {
            rc |= run_file(argv[i]);
            count++;
        }
    }
    printf("replay: %d inputs ran\n", count);
    if (count == 0) {
        fprintf(stderr, "replay: no input found\n");
        return 1;
    }
    return rc;
}

/*
 * regression_driver.c - replays fuzz inputs without libFuzzer, so the
 * normal build's ctest (label fuzz) runs every stored input through the
 * same target code on every run (after zstd's
 * tests/fuzz/regression_driver.c).
 *
 *   fuzzreg_<target> PATH...
 *
 * Each PATH is a file or a directory, walked recursively in sorted order.
 * Each file's bytes go to LLVMFuzzerTestOneInput once; a crash, a
 * sanitizer report or an abort() in the target fails the test. A PATH
 * that does not exist is an error (exit 2), so a renamed corpus folder
 * cannot turn the test into a silent no-op.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* scandir, alphasort */
#endif
#include <dirent.h>   /* scandir, alphasort */
#include <stdint.h>   /* uint8_t */
#include <stdio.h>    /* fopen, fread */
#include <stdlib.h>   /* malloc, free */
#include <string.h>   /* strcmp */
#include <sys/stat.h> /* stat */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t g_inputs;

static int run_file(const char *path, off_t size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "regression_driver: cannot open %s\n", path);
        return -1;
    }
    /* an exact-size heap copy, so ASan sees reads past the input */
    uint8_t *buf = malloc(size > 0 ? (size_t)size : 1);
    size_t got = buf ? fread(buf, 1, (size_t)size, f) : 0;
    fclose(f);
    if (buf == NULL || got != (size_t)size) {
        fprintf(stderr, "regression_driver: cannot read %s\n", path);
        free(buf);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    g_inputs++;
    return 0;
}

static int run_path(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "regression_driver: no such input: %s\n", path);
        return -1;
    }
    if (!S_ISDIR(sb.st_mode))
        return S_ISREG(sb.st_mode) ? run_file(path, sb.st_size) : 0;
    struct dirent **ents;
    int n = scandir(path, &ents, NULL, alphasort);
    if (n < 0) {
        fprintf(stderr, "regression_driver: cannot list %s\n", path);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        if (rc == 0 && strcmp(nm, ".") != 0 && strcmp(nm, "..") != 0) {
            size_t len = strlen(path) + strlen(nm) + 2;
            char *sub = malloc(len);
            if (sub == NULL)
                rc = -1;
            else {
                snprintf(sub, len, "%s/%s", path, nm);
                rc = run_path(sub);
                free(sub);
            }
        }
        free(ents[i]);
    }
    free(ents);
    return rc;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (run_path(argv[i]) != 0)
            return 2;
    printf("replayed %zu inputs\n", g_inputs);
    return g_inputs > 0 ? 0 : 2;
}

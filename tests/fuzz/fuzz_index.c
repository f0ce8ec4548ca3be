/*
 * fuzz_index.c - the sharded-checkpoint index loader (formats/index.c):
 * strict JSON through jansson, the weight_map / metadata / total_size
 * rules, the shard path rule (no absolute paths, no ".." components),
 * then the cross-checks: every weight_map name is offered as held by the
 * first shard and by no other, and na_index_finish runs (its stat of the
 * shard files looks in a private empty directory).
 *
 * Checks beyond "no crash": one-line errors; a loaded index lists sorted,
 * unique shard paths that stay inside the index's directory.
 */
#include "fuzz_common.h"

#include <stdio.h>  /* fopen, remove */
#include <stdlib.h> /* atexit */
#include <unistd.h> /* rmdir */

static char g_dir[64];
static char g_path[128];

/* libFuzzer ends a timed run with exit(): the private directory goes too. */
static void remove_dir(void)
{
    (void)remove(g_path);
    (void)rmdir(g_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (g_dir[0] == '\0') {
        snprintf(g_dir, sizeof g_dir, "/tmp/nanaudit-fuzz-index.XXXXXX");
        if (mkdtemp(g_dir) == NULL)
            abort();
        snprintf(g_path, sizeof g_path, "%s/model.safetensors.index.json", g_dir);
        atexit(remove_dir);
    }
    FILE *f = fopen(g_path, "wb");
    if (f == NULL)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);

    na_index_t *ix = NULL;
    na_err_t err = {{0}};
    na_status_t st = na_index_load(g_path, &ix, &err);
    fz_check_msg(st, &err);
    if (st != NA_OK) {
        na_index_free(ix);
        return 0;
    }
    size_t ns = na_index_shard_count(ix), dl = strlen(g_dir);
    for (size_t i = 0; i < ns; i++) {
        const char *p = na_index_shard_path(ix, i);
        if (p == NULL || strncmp(p, g_dir, dl) != 0 || p[dl] != '/' || strstr(p + dl, "/../"))
            abort();
        if (i > 0 && strcmp(na_index_shard_path(ix, i - 1), p) >= 0)
            abort();
    }
    /* names of the weight_map, all claimed by shard 0 */
    json_t *root = json_loadb((const char *)data, size, 0, NULL);
    json_t *wm = json_object_get(root, "weight_map");
    size_t nn = json_is_object(wm) ? json_object_size(wm) : 0, k = 0;
    const char **names = calloc(nn + 1, sizeof *names);
    const char *key;
    json_t *v;
    if (names != NULL && nn > 0)
        json_object_foreach(wm, key, v) names[k++] = key;
    for (size_t i = 0; names != NULL && i < ns; i++) {
        na_err_t e2 = {{0}};
        st = na_index_check_shard(ix, i, i == 0 ? names : NULL, i == 0 ? k : 0, 16 * i, &e2);
        fz_check_msg(st, &e2);
    }
    na_err_t e3 = {{0}};
    fz_check_msg(na_index_finish(ix, &e3), &e3);
    free(names);
    json_decref(root);
    na_index_free(ix);
    return 0;
}

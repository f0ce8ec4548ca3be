/*
 * test_walk.c - na_walk on a temporary tree built here: sorted order,
 * nested directories, hidden entries, an HF-cache-like symlink into
 * blobs/, a duplicate through a symlink, a directory symlink loop, a
 * dangling symlink, a FIFO (error, and no hang), README/config.json
 * skipped, a Git LFS pointer named model.safetensors and an HDF5 file
 * (errors), a sharded checkpoint whose index comes after its shards, and
 * the rules for command-line arguments and raw mode.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>    /* snprintf, fopen */
#include <stdlib.h>   /* mkdtemp, system */
#include <string.h>   /* strcmp, strlen */
#include <sys/stat.h> /* mkdir, mkfifo */
#include <unistd.h>   /* symlink */

#include "format.h"

static char root[64];

static const char *rp(const char *rel)
{
    static char buf[16][512]; /* rotating: up to 16 paths in use at once */
    static int k;
    k = (k + 1) % 16;
    snprintf(buf[k], sizeof buf[k], "%s/%s", root, rel);
    return buf[k];
}

static void put(const char *rel, const void *data, size_t n)
{
    FILE *f = fopen(rp(rel), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* A valid one-tensor safetensors file: tensor `name`, F32 [1]. */
static void put_st(const char *rel, const char *name)
{
    uint8_t b[256] = {0};
    int h = snprintf((char *)b + 8, sizeof b - 8,
                     "{\"%s\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", name);
    b[0] = (uint8_t)h;
    put(rel, b, 8 + (size_t)h + 4);
}

static const char lfs_ptr[] = "version https://git-lfs.github.com/spec/v1\n"
                              "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2"
                              "ca24d17e2393\nsize 4400000000\n";

static int setup(void **state)
{
    snprintf(root, sizeof root, "/tmp/na_walk.XXXXXX");
    if (mkdtemp(root) == NULL)
        return -1;
    const char *dirs[] = {".hidden", "a", "a/b", "blobs", "snapshots", "snapshots/main",
                          "lfs", "sharded", "empty"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (mkdir(rp(dirs[i]), 0755) != 0)
            return -1;
    put_st(".hidden/h.safetensors", "h");
    put(".gitattributes", "*.safetensors filter=lfs\n", 25);
    put("README.md", "# model\n", 8);
    put("config.json", "{\"hidden_size\": 8}", 18);
    put("notes.txt", "notes\n", 6);
    put("data.dat", "\x01\x02\x03\x04", 4);
    put_st("a/b/w.safetensors", "w");
    put_st("blobs/abc123", "blob");
    put("lfs/model.safetensors", lfs_ptr, sizeof lfs_ptr - 1);
    put("weights.h5", "\x89HDF\r\n\x1a\n\0\0\0\0", 12);
    put_st("sharded/model-00001-of-00002.safetensors", "x");
    put_st("sharded/model-00002-of-00002.safetensors", "y");
    const char *ix = "{\"metadata\": {\"total_size\": 8}, \"weight_map\": {"
                     "\"x\": \"model-00001-of-00002.safetensors\", "
                     "\"y\": \"model-00002-of-00002.safetensors\"}}";
    put("sharded/model.safetensors.index.json", ix, strlen(ix));
    if (symlink("..", rp("a/loop")) != 0 ||
        symlink("../../blobs/abc123", rp("snapshots/main/model.safetensors")) != 0 ||
        symlink("a/b/w.safetensors", rp("dup.safetensors")) != 0 ||
        symlink("nowhere", rp("dangling")) != 0 || mkfifo(rp("fifo"), 0600) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

enum { OK, SKIP, ERR };

/* 1 when this build reads HDF5 (na_probe_check accepts an HDF5 file). */
static int hdf5_built(void)
{
    na_probe_t p;
    na_err_t e;
    memset(&p, 0, sizeof p);
    p.kind = NA_FILE_HDF5;
    return na_probe_check(&p, &e) == NA_OK;
}

typedef struct want {
    const char *rel;
    int what;
    na_kind_of_file_t kind;
    const char *msg; /* exact reason/error; "%s" = root */
} want_t;

static void expect_items(const na_walk_t *w, const want_t *want, size_t n)
{
    for (size_t i = 0; i < w->n && i < n; i++) {
        const na_walk_item_t *it = &w->items[i];
        const want_t *x = &want[i];
        assert_string_equal(it->path, rp(x->rel));
        assert_int_equal(it->error != NULL, x->what == ERR);
        assert_int_equal(it->skip_reason != NULL, x->what == SKIP);
        assert_int_equal(it->kind, x->kind);
        if (x->msg != NULL) {
            char m[1024];
            const char *at = strstr(x->msg, "%s"); /* "%s" stands for root */
            if (at == NULL)
                snprintf(m, sizeof m, "%s", x->msg);
            else
                snprintf(m, sizeof m, "%.*s%s%s", (int)(at - x->msg), x->msg, root, at + 2);
            assert_string_equal(x->what == ERR ? it->error : it->skip_reason, m);
        }
    }
    assert_int_equal(w->n, n);
}

#define UNREC                                                                             \
    "unrecognised content (not safetensors, HDF5, NumPy .npy or .npz, PyTorch zip or "   \
    "pickle, gzip, netCDF-3, JSON or a Git LFS pointer; give --dtype to read raw data)"

static void walk_tree(void **state)
{
    const char *args[1] = {root};
    na_walk_t w;
    na_err_t e;
    assert_int_equal(na_walk(args, 1, 0, &w, &e), NA_OK);
    const want_t want[] = {
        /* hidden entries: not walked, listed (round 29a) */
        {".gitattributes", SKIP, NA_FILE_UNKNOWN, "hidden: not walked; give its path to audit it"},
        {".hidden", SKIP, NA_FILE_UNKNOWN, "hidden: not walked; give its path to audit it"},
        {"README.md", SKIP, NA_FILE_UNKNOWN, UNREC},
        {"a/b/w.safetensors", OK, NA_FILE_SAFETENSORS, NULL},
        /* a link to an ancestor: walked once, skipped (round 29a) */
        {"a/loop", SKIP, NA_FILE_UNKNOWN,
         "symlink loop: directory already being walked as %s"},
        /* blobs/ beside snapshots/ in a folder not named as the hub names
         * cache repositories (models--*): walked as any other (round 29a;
         * tests/cli/walk_hf_cache.sh has the cache) */
        {"blobs/abc123", OK, NA_FILE_SAFETENSORS, NULL},
        {"config.json", SKIP, NA_FILE_JSON,
         "JSON file without a \"weight_map\" (not a sharded-checkpoint index)"},
        {"dangling", ERR, NA_FILE_UNKNOWN, "No such file or directory"},
        {"data.dat", SKIP, NA_FILE_UNKNOWN, UNREC},
        {"dup.safetensors", SKIP, NA_FILE_SAFETENSORS,
         "same file as %s/a/b/w.safetensors (audited once)"},
        {"fifo", SKIP, NA_FILE_UNKNOWN, "not a regular file (FIFO)"},
        {"lfs/model.safetensors", ERR, NA_FILE_GIT_LFS,
         "Git LFS pointer: the real file (4400000000 bytes) was not downloaded"},
        {"notes.txt", SKIP, NA_FILE_UNKNOWN, UNREC},
        {"sharded/model-00001-of-00002.safetensors", OK, NA_FILE_SAFETENSORS, NULL},
        {"sharded/model-00002-of-00002.safetensors", OK, NA_FILE_SAFETENSORS, NULL},
        {"sharded/model.safetensors.index.json", OK, NA_FILE_INDEX, NULL},
        {"snapshots/main/model.safetensors", SKIP, NA_FILE_SAFETENSORS,
         "same file as %s/blobs/abc123 (audited once)"},
        /* an item to open when this build reads HDF5 (issue 3), else an
         * error: unaudited data never passes silently */
        {"weights.h5", hdf5_built() ? OK : ERR, NA_FILE_HDF5, NULL},
    };
    expect_items(&w, want, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < w.n; i++)
        assert_true(w.items[i].from_dir);
    /* the shards were found first and then claimed by the index */
    assert_int_equal(w.n_indexes, 1);
    assert_non_null(w.indexes[0]);
    assert_null(w.index_errors[0]);
    assert_string_equal(w.index_paths[0], rp("sharded/model.safetensors.index.json"));
    assert_int_equal(w.items[15].index_id, 0);
    assert_false(w.items[15].from_index);
    for (size_t s = 0; s < 2; s++) {
        assert_true(w.items[13 + s].from_index);
        assert_int_equal(w.items[13 + s].index_id, 0);
        assert_int_equal(w.items[13 + s].shard_no, s);
        assert_string_equal(na_index_shard_path(w.indexes[0], s), w.items[13 + s].path);
    }
    na_walk_free(&w);
    na_walk_free(&w); /* freed state is empty: a second free is harmless */
}

static void walk_args(void **state)
{
    na_walk_t w;
    na_err_t e;
    /* Named on the command line: not data is an error, not a skip; the
     * index expands after its own item; the directory then finds the
     * same files again. */
    const char *args[] = {rp("config.json"), rp("missing.safetensors"),
                          rp("sharded/model.safetensors.index.json"), rp("sharded"),
                          rp("a/b/w.safetensors"), rp("a/b/w.safetensors"), rp("empty")};
    assert_int_equal(na_walk(args, sizeof args / sizeof args[0], 0, &w, &e), NA_OK);
    const want_t want[] = {
        {"config.json", ERR, NA_FILE_JSON,
         "JSON file without a \"weight_map\" (not a sharded-checkpoint index)"},
        {"missing.safetensors", ERR, NA_FILE_UNKNOWN, "No such file or directory"},
        {"sharded/model.safetensors.index.json", OK, NA_FILE_INDEX, NULL},
        {"sharded/model-00001-of-00002.safetensors", OK, NA_FILE_SAFETENSORS, NULL},
        {"sharded/model-00002-of-00002.safetensors", OK, NA_FILE_SAFETENSORS, NULL},
        {"sharded/model-00001-of-00002.safetensors", SKIP, NA_FILE_SAFETENSORS,
         "audited once, as a shard of %s/sharded/model.safetensors.index.json"},
        {"sharded/model-00002-of-00002.safetensors", SKIP, NA_FILE_SAFETENSORS, NULL},
        {"sharded/model.safetensors.index.json", SKIP, NA_FILE_INDEX,
         "audited once (reached before by this path)"},
        {"a/b/w.safetensors", OK, NA_FILE_SAFETENSORS, NULL},
        {"a/b/w.safetensors", SKIP, NA_FILE_SAFETENSORS,
         "audited once (reached before by this path)"},
    };
    expect_items(&w, want, sizeof want / sizeof want[0]);
    assert_false(w.items[0].from_dir);
    assert_true(w.items[3].from_index && w.items[4].from_index);
    assert_int_equal(w.items[4].shard_no, 1);
    assert_true(w.items[5].from_dir);
    na_walk_free(&w);
}

/* An index whose shard is missing (no item: the index's "missing shard
 * file" line says it, na_index_finish) or is an LFS pointer. */
static void walk_broken_index(void **state)
{
    assert_int_equal(mkdir(rp("bad"), 0755), 0);
    put("bad/lfs.safetensors", lfs_ptr, sizeof lfs_ptr - 1);
    const char *ix = "{\"weight_map\": {\"p\": \"gone.safetensors\", \"q\": \"lfs.safetensors\"}}";
    put("bad/m.index.json", ix, strlen(ix));
    const char *args[] = {rp("bad/m.index.json")};
    na_walk_t w;
    na_err_t e;
    assert_int_equal(na_walk(args, 1, 0, &w, &e), NA_OK);
    const want_t want[] = {
        {"bad/m.index.json", OK, NA_FILE_INDEX, NULL},
        {"bad/lfs.safetensors", ERR, NA_FILE_GIT_LFS,
         "Git LFS pointer: the real file (4400000000 bytes) was not downloaded"},
    };
    expect_items(&w, want, sizeof want / sizeof want[0]);
    assert_true(w.items[1].from_index);
    na_walk_free(&w);
    /* An index that does not load: its item carries the loader's error. */
    const char *dup = "{\"weight_map\": {\"p\": \"a\", \"p\": \"b\"}}";
    put("bad/dup.index.json", dup, strlen(dup));
    args[0] = rp("bad/dup.index.json");
    assert_int_equal(na_walk(args, 1, 0, &w, &e), NA_OK);
    assert_int_equal(w.n, 1);
    assert_int_equal(w.items[0].kind, NA_FILE_INDEX);
    assert_non_null(w.items[0].error);
    assert_int_equal(w.n_indexes, 1);
    assert_null(w.indexes[0]);
    assert_string_equal(w.index_errors[0], w.items[0].error);
    na_walk_free(&w);
}

/* --dtype: every regular file is data; the FIFO is still refused. */
static void walk_raw_mode(void **state)
{
    assert_int_equal(mkdir(rp("rawdir"), 0755), 0);
    put("rawdir/x.bin", "abcd", 4);
    put("rawdir/README.md", "text", 4);
    put("rawdir/.hidden.bin", "abcd", 4);
    put("rawdir/zero.f32", "", 0);
    assert_int_equal(mkfifo(rp("rawdir/p"), 0600), 0);
    const char *args[] = {rp("rawdir")};
    na_walk_t w;
    na_err_t e;
    assert_int_equal(na_walk(args, 1, 1, &w, &e), NA_OK);
    const want_t want[] = {
        {"rawdir/.hidden.bin", SKIP, NA_FILE_UNKNOWN,
         "hidden: not walked; give its path to audit it"},
        {"rawdir/README.md", OK, NA_FILE_RAW, NULL},
        {"rawdir/p", SKIP, NA_FILE_UNKNOWN, "not a regular file (FIFO)"},
        {"rawdir/x.bin", OK, NA_FILE_RAW, NULL},
        {"rawdir/zero.f32", SKIP, NA_FILE_EMPTY, "empty file (0 bytes)"},
    };
    expect_items(&w, want, sizeof want / sizeof want[0]);
    na_walk_free(&w);
}

static void walk_empty_dir(void **state)
{
    const char *args[] = {rp("empty")};
    na_walk_t w;
    na_err_t e;
    assert_int_equal(na_walk(args, 1, 0, &w, &e), NA_OK);
    assert_int_equal(w.n, 0); /* the CLI turns "nothing audited" into exit 3 */
    na_walk_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(walk_tree),      cmocka_unit_test(walk_args),
        cmocka_unit_test(walk_broken_index), cmocka_unit_test(walk_raw_mode),
        cmocka_unit_test(walk_empty_dir),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

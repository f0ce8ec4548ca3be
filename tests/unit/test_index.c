/*
 * test_index.c - sharded checkpoints (formats/index.c): the HF
 * *.safetensors.index.json against the shards it names.
 *
 * Shards and indexes are written at test time into a temporary directory
 * (each shard holds U8 [1] tensors, one data byte each, so total_size is
 * the number of tensors); the real 6-shard set tests/data/real/
 * fluxml-sharded (written by transformers, total_size 4305) must pass.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>    /* open */
#include <sys/stat.h> /* mkdir */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* truncate, unlink, symlink */

#include "format.h"

static char g_dir[256];

/* Write g_dir/name: a safetensors file of U8 [1] tensors named in the
 * space-separated list `names`. */
static void write_shard(const char *name, const char *names)
{
    char header[2048], path[512], list[512];
    size_t k = 0, n = 0;
    k += (size_t)snprintf(header, sizeof header, "{");
    snprintf(list, sizeof list, "%s", names);
    for (char *tok = strtok(list, " "); tok; tok = strtok(NULL, " "), n++)
        k += (size_t)snprintf(header + k, sizeof header - k,
                              "%s\"%s\":{\"dtype\":\"U8\",\"shape\":[1],"
                              "\"data_offsets\":[%zu,%zu]}",
                              n ? "," : "", tok, n, n + 1);
    snprintf(header + k, sizeof header - k, "}");
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    uint64_t hl = strlen(header);
    for (int i = 0; i < 8; i++)
        fputc((int)(hl >> (8 * i)) & 0xff, f);
    fputs(header, f);
    for (size_t i = 0; i < n; i++)
        fputc(1, f);
    fclose(f);
}

static const char *write_index(const char *json)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", g_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(json, f);
    fclose(f);
    return path;
}

/* Open shard i of ix and check it; NA_E_NOTFOUND when the file is absent. */
static na_status_t check_one(na_index_t *ix, size_t i, na_err_t *err)
{
    const char *p = na_index_shard_path(ix, i);
    int fd = open(p, O_RDONLY);
    if (fd < 0)
        return NA_E_NOTFOUND;
    na_open_opts_t o;
    memset(&o, 0, sizeof o);
    na_input_t *in;
    na_status_t st = na_format_safetensors.open(p, fd, &o, &in, err);
    assert_int_equal(st, NA_OK);
    const char *const *names;
    size_t n = na_safetensors_stored_names(in, &names);
    st = na_index_check_shard(ix, i, names, n, na_safetensors_data_bytes(in), err);
    in->v->close(in);
    return st;
}

/* Load, check every shard, finish: the first error's status and message. */
static na_status_t run_index(const char *json, na_err_t *err)
{
    na_index_t *ix;
    err->msg[0] = '\0';
    na_status_t st = na_index_load(write_index(json), &ix, err), first = NA_OK;
    if (st != NA_OK)
        return st;
    na_err_t e1;
    for (size_t i = 0; i < na_index_shard_count(ix); i++) {
        st = check_one(ix, i, &e1);
        if (st == NA_E_FORMAT && first == NA_OK) {
            first = st;
            *err = e1;
        }
    }
    st = na_index_finish(ix, &e1);
    if (first == NA_OK && st != NA_OK) {
        first = st;
        *err = e1;
    }
    /* a total_size mismatch is a note: NA_OK with the note as message */
    if (first == NA_OK && st == NA_OK)
        na_index_total_note(ix, err->msg, sizeof err->msg);
    na_index_free(ix);
    return first;
}

static void expect(const char *json, na_status_t want, const char *msg)
{
    na_err_t err;
    na_status_t st = run_index(json, &err);
    if (st != want || strcmp(err.msg, msg) != 0)
        print_error("index %s\n  got %d '%s'\n  want %d '%s'\n", json, st, err.msg, want, msg);
    assert_int_equal(st, want);
    assert_string_equal(err.msg, msg);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/na_test_ix_XXXXXX");
    if (mkdtemp(g_dir) == NULL)
        return -1;
    write_shard("a.safetensors", "x y");
    write_shard("b.safetensors", "z");
    write_shard("b2.safetensors", "y z"); /* y is also in a */
    char sub[300];
    snprintf(sub, sizeof sub, "%s/sub", g_dir);
    mkdir(sub, 0755);
    write_shard("sub/c.safetensors", "q");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_valid(void **state)
{
    (void)state;
    const char *j = "{\"metadata\":{\"total_size\":3},\"weight_map\":"
                    "{\"z\":\"b.safetensors\",\"y\":\"a.safetensors\",\"x\":\"a.safetensors\"}}";
    na_index_t *ix;
    na_err_t err;
    assert_int_equal(na_index_load(write_index(j), &ix, &err), NA_OK);
    assert_int_equal(na_index_shard_count(ix), 2);
    char want[600];
    snprintf(want, sizeof want, "%s/a.safetensors", g_dir);
    assert_string_equal(na_index_shard_path(ix, 0), want);
    snprintf(want, sizeof want, "%s/b.safetensors", g_dir);
    assert_string_equal(na_index_shard_path(ix, 1), want);
    assert_null(na_index_shard_path(ix, 2));
    na_index_free(ix);
    expect(j, NA_OK, "");
    /* total_size is optional, and may be written as 3.0 */
    expect("{\"weight_map\":{\"z\":\"b.safetensors\",\"y\":\"a.safetensors\",\"x\":"
           "\"a.safetensors\"}}", NA_OK, "");
    /* a subdirectory below the index's directory is fine */
    expect("{\"weight_map\":{\"q\":\"sub/c.safetensors\"}}", NA_OK, "");
    expect("{\"metadata\":{\"total_size\":3.0},\"weight_map\":{\"z\":\"b.safetensors\","
           "\"y\":\"a.safetensors\",\"x\":\"a.safetensors\"}}", NA_OK, "");
}

/* HF cache layout: the index and shard names live in snapshots/REV/, the
 * shards are symlinks to ../../blobs/HASH - allowed, the escape check is
 * on the index's text only. */
static void test_hf_cache_symlinks(void **state)
{
    (void)state;
    char d[600], link[700], ixp[700];
    snprintf(d, sizeof d, "%s/blobs", g_dir);
    assert_int_equal(mkdir(d, 0755), 0);
    snprintf(d, sizeof d, "%s/snapshots", g_dir);
    assert_int_equal(mkdir(d, 0755), 0);
    snprintf(d, sizeof d, "%s/snapshots/rev1", g_dir);
    assert_int_equal(mkdir(d, 0755), 0);
    write_shard("blobs/0123abcd", "x y");
    snprintf(link, sizeof link, "%s/a.safetensors", d);
    assert_int_equal(symlink("../../blobs/0123abcd", link), 0);
    snprintf(ixp, sizeof ixp, "%s/model.safetensors.index.json", d);
    FILE *f = fopen(ixp, "w");
    assert_non_null(f);
    fputs("{\"metadata\":{\"total_size\":2},\"weight_map\":{\"x\":\"a.safetensors\","
          "\"y\":\"a.safetensors\"}}", f);
    fclose(f);
    na_index_t *ix;
    na_err_t err;
    assert_int_equal(na_index_load(ixp, &ix, &err), NA_OK);
    assert_int_equal(na_index_shard_count(ix), 1);
    assert_int_equal(check_one(ix, 0, &err), NA_OK);
    assert_int_equal(na_index_finish(ix, &err), NA_OK);
    na_index_free(ix);
}

/* The real set: total_size is the sum of tensor data bytes (4305), not of
 * file sizes (7017). */
static void test_real_fluxml(void **state)
{
    (void)state;
    na_index_t *ix;
    na_err_t err;
    assert_int_equal(na_index_load(NA_TEST_DATA "/real/fluxml-sharded/model.safetensors.index.json",
                                   &ix, &err), NA_OK);
    assert_int_equal(na_index_shard_count(ix), 6);
    assert_non_null(strstr(na_index_shard_path(ix, 5), "fluxml-sharded/model-00006-of-00006"));
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(check_one(ix, i, &err), NA_OK);
    assert_int_equal(na_index_finish(ix, &err), NA_OK);
    na_index_free(ix);
}

static void test_shard_errors(void **state)
{
    (void)state;
    expect("{\"weight_map\":{\"x\":\"a.safetensors\",\"y\":\"a.safetensors\",\"q\":"
           "\"c.safetensors\"}}", NA_E_NOTFOUND,
           "missing shard file 'c.safetensors' (the index puts 1 tensor in it)");
    expect("{\"weight_map\":{\"x\":\"a.safetensors\",\"y\":\"a.safetensors\",\"w\":"
           "\"a.safetensors\"}}", NA_E_FORMAT,
           "tensor 'w' is in the index (shard 'a.safetensors') but not in that shard");
    expect("{\"weight_map\":{\"x\":\"a.safetensors\"}}", NA_E_FORMAT,
           "tensor 'y' is in shard 'a.safetensors' but not in the index");
    expect("{\"weight_map\":{\"x\":\"a.safetensors\",\"y\":\"a.safetensors\",\"z\":"
           "\"b2.safetensors\"}}", NA_E_FORMAT,
           "tensor 'y' is in two shards: 'a.safetensors' and 'b2.safetensors'");
    expect("{\"weight_map\":{\"x\":\"a.safetensors\",\"y\":\"b2.safetensors\",\"z\":"
           "\"b2.safetensors\"}}", NA_E_FORMAT,
           "tensor 'y' is in shard 'a.safetensors' but the index puts it in 'b2.safetensors'");
    expect("{\"metadata\":{\"total_size\":7017},\"weight_map\":{\"z\":\"b.safetensors\","
           "\"y\":\"a.safetensors\",\"x\":\"a.safetensors\"}}", NA_OK,
           "index metadata.total_size is 7017 bytes but the shards hold 3 bytes of tensor data "
           "(loaders do not read it; some writers add up file sizes)");
    /* several problems in one shard: the first three, and how many more */
    expect("{\"weight_map\":{\"v\":\"a.safetensors\",\"w\":\"a.safetensors\"}}", NA_E_FORMAT,
           "tensor 'x' is in shard 'a.safetensors' but not in the index; tensor 'y' is in shard "
           "'a.safetensors' but not in the index; tensor 'v' is in the index (shard "
           "'a.safetensors') but not in that shard (and 1 more index problems)");
}

/* a weight_map of the two tensors of a.safetensors (written by setup) */
#define WM "\"weight_map\":{\"x\":\"a.safetensors\",\"y\":\"a.safetensors\"}}"

static void test_load_errors(void **state)
{
    (void)state;
    const char *bad[] = {"../a.safetensors", "/tmp/a.safetensors", "sub/../../a.safetensors",
                         ".."};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char j[300], m[300];
        snprintf(j, sizeof j, "{\"weight_map\":{\"x\":\"%s\"}}", bad[i]);
        snprintf(m, sizeof m, "index: shard path '%s' of tensor 'x' escapes the index's "
                 "directory (absolute or '..'; refused)", bad[i]);
        expect(j, NA_E_FORMAT, m);
    }
    expect("{\"weight_map\":{\"x\":\"\"}}", NA_E_FORMAT,
           "index: weight_map entry of tensor 'x' is not a file name");
    expect("{\"weight_map\":{\"x\":3}}", NA_E_FORMAT,
           "index: weight_map entry of tensor 'x' is not a file name");
    expect("{\"weight_map\":[]}", NA_E_FORMAT, "index: \"weight_map\" is not an object");
    expect("{\"metadata\":{}}", NA_E_FORMAT, "index has no \"weight_map\"");
    expect("{\"weight_map\":{}}", NA_E_FORMAT,
           "index: \"weight_map\" is empty: it names no tensor and no shard");
    expect("[]", NA_E_FORMAT, "index is not a JSON object");
    expect("{\"weight_map\":{}", NA_E_FORMAT,
           "index is not valid JSON: '}' expected near end of file (line 1, column 16)");
    expect("{\"weight_map\":{\"x\":\"a\",\"x\":\"a\"}}", NA_E_FORMAT,
           "index is not valid JSON: duplicate object key near '\"x\"' (line 1, column 26)");
    expect("{\"metadata\":[]," WM, NA_E_FORMAT,
           "index: \"metadata\" is not an object");
    /* a total_size that is no non-negative integer is a note, as one that
     * disagrees (no loader reads it: tester rounds 22b, 23a) */
    const char *tnote = "index metadata.total_size is not a non-negative integer (loaders do "
                        "not read it)";
    expect("{\"metadata\":{\"total_size\":\"3\"}," WM, NA_OK, tnote);
    expect("{\"metadata\":{\"total_size\":-1}," WM, NA_OK, tnote);
    expect("{\"metadata\":{\"total_size\":1.5}," WM, NA_OK, tnote);
    expect("{\"metadata\":{\"total_size\":2}," WM, NA_OK, "");
    na_index_t *ix;
    na_err_t err;
    char p[600];
    snprintf(p, sizeof p, "%s/nope.index.json", g_dir);
    assert_int_equal(na_index_load(p, &ix, &err), NA_E_NOTFOUND);
    assert_string_equal(err.msg, "cannot open the index: No such file or directory");
    /* a 256 MiB "index" (sparse file) is refused before being parsed */
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(truncate(p, (off_t)256 << 20), 0);
    assert_int_equal(na_index_load(p, &ix, &err), NA_E_FORMAT);
    assert_string_equal(err.msg, "index is 268435456 bytes or more: too big for a "
                        "sharded-checkpoint index");
    unlink(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_real_fluxml),
        cmocka_unit_test(test_hf_cache_symlinks),
        cmocka_unit_test(test_shard_errors),
        cmocka_unit_test(test_load_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

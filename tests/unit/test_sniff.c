/*
 * test_sniff.c - detection by content (formats/sniff.c, input.c): every
 * kind from bytes built here, the probe of real paths (FIFO, directory,
 * missing file, symlink loop, HDF5 user blocks) and the one-line message
 * and status that each content we do not audit gets (issue 2, section 3).
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>    /* snprintf, fopen */
#include <stdlib.h>   /* mkdtemp, system */
#include <string.h>   /* memcpy, strcmp */
#include <sys/stat.h> /* mkfifo */
#include <unistd.h>   /* symlink, unlink */

#include "format.h"

static char tmpdir[64];

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/na_sniff.XXXXXX");
    return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Write n bytes to tmpdir/name; returns the path (static buffer). */
static const char *put(const char *name, const void *data, size_t n)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    return path;
}

static na_kind_of_file_t sniff_str(const char *s, size_t n)
{
    return na_sniff((const uint8_t *)s, n, n);
}

/* Bytes of a minimal safetensors file: u64 LE length then the header. */
static size_t make_st(uint8_t *buf, const char *hdr, uint64_t len_field)
{
    size_t h = strlen(hdr);
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)(len_field >> (8 * i));
    memcpy(buf + 8, hdr, h);
    return 8 + h;
}

static void sniff_every_kind(void **state)
{
    uint8_t b[4096] = {0};
    size_t n = make_st(b, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 55);
    assert_int_equal(na_sniff(b, n + 4, n + 4), NA_FILE_SAFETENSORS);
    /* JSON whitespace before '{' is allowed by the reference loader. */
    n = make_st(b, " \n\t{}", 5);
    assert_int_equal(na_sniff(b, n, n), NA_FILE_SAFETENSORS);
    /* An absurd length with binary bytes is still safetensors: the
     * reader must say "header length exceeds the file". */
    n = make_st(b, "{}", 1ull << 40);
    assert_int_equal(na_sniff(b, n, n), NA_FILE_SAFETENSORS);
    /* A header length whose low bytes look like another format's magic:
     * 640 = 80 02 00.. (a pickle's protocol 2), 1152 = 80 04, 66176 =
     * 80 02 01; any length with '{' at byte 8 and room in the file is
     * safetensors, whatever its first bytes. */
    static const uint64_t lens[] = {640, 896, 1152, 1408, 66176};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        memset(b, ' ', sizeof b);
        n = make_st(b, "{\"__metadata__\":{}}", lens[k]);
        assert_int_equal(na_sniff(b, sizeof b, 8 + lens[k] + 64), NA_FILE_SAFETENSORS);
    }
    /* Cut short (a partial download): still safetensors, so that the
     * reader says the header runs past the end, not "pickle". */
    memset(b, ' ', sizeof b);
    n = make_st(b, "{\"__metadata__\":{}}", 896);
    assert_int_equal(na_sniff(b, 300, 300), NA_FILE_SAFETENSORS);
    assert_int_equal(sniff_str("\x80\x02}q\x00.", 6), NA_FILE_PICKLE); /* a real one */
    /* The HDF5 signature inside a safetensors file's data (a U8 tensor
     * at a power-of-two offset) does not make it HDF5. */
    memset(b, ' ', sizeof b);
    n = make_st(b, "{\"a\":{\"dtype\":\"U8\",\"shape\":[4000],\"data_offsets\":[0,4000]}}", 70);
    memcpy(b + 512, "\x89HDF\r\n\x1a\n", 8);
    assert_int_equal(na_sniff(b, sizeof b, 78 + 4000), NA_FILE_SAFETENSORS);
    /* A length that fits, then an array or a byte-order mark: a header
     * the reader names the fault of; with an absurd length, not ours. */
    n = make_st(b, "[1, 2]", 6);
    assert_int_equal(na_sniff(b, n, n), NA_FILE_SAFETENSORS);
    n = make_st(b, "\xef\xbb\xbf{}", 5);
    assert_int_equal(na_sniff(b, n, n), NA_FILE_SAFETENSORS);
    n = make_st(b, "\xff\xfe{", 3);
    assert_int_equal(na_sniff(b, n, n), NA_FILE_SAFETENSORS);
    n = make_st(b, "[1, 2]", 1ull << 40);
    assert_int_equal(na_sniff(b, n, n), NA_FILE_UNKNOWN);
    assert_int_equal(sniff_str("\xef\xbb\xbf{\"weight_map\": {}}", 20), NA_FILE_JSON);
    /* JSON whose 9th byte is '{': text, not a length. */
    assert_int_equal(sniff_str("{\"abc\": {\"x\": 1}}", 17), NA_FILE_JSON);
    assert_int_equal(sniff_str("  [1, 2]", 8), NA_FILE_JSON);
    assert_int_equal(sniff_str("\x89HDF\r\n\x1a\n\0\0", 10), NA_FILE_HDF5);
    memset(b, 'a', sizeof b);
    memcpy(b + 512, "\x89HDF\r\n\x1a\n", 8);
    assert_int_equal(na_sniff(b, sizeof b, sizeof b), NA_FILE_HDF5);
    memcpy(b + 512, "xxxxxxxx", 8);
    memcpy(b + 2048, "\x89HDF\r\n\x1a\n", 8);
    assert_int_equal(na_sniff(b, sizeof b, sizeof b), NA_FILE_HDF5);
    memcpy(b + 2048, "xxxxxxxx", 8);
    memcpy(b + 1000, "\x89HDF\r\n\x1a\n", 8); /* not a power of two: no */
    assert_int_equal(na_sniff(b, sizeof b, sizeof b), NA_FILE_UNKNOWN);
    assert_int_equal(sniff_str("PK\x03\x04rest", 8), NA_FILE_ZIP);
    assert_int_equal(sniff_str("PK\x05\x06", 4), NA_FILE_ZIP);
    assert_int_equal(sniff_str("PK\x07\x08", 4), NA_FILE_ZIP);
    assert_int_equal(sniff_str("\x1f\x8b\x08\0", 4), NA_FILE_GZIP);
    assert_int_equal(sniff_str("version https://git-lfs.github.com/spec/v1\n", 43),
                     NA_FILE_GIT_LFS);
    assert_int_equal(sniff_str("CDF\x01", 4), NA_FILE_NETCDF3);
    assert_int_equal(sniff_str("CDF\x02", 4), NA_FILE_NETCDF3);
    assert_int_equal(sniff_str("CDF\x05", 4), NA_FILE_NETCDF3);
    assert_int_equal(sniff_str("CDF\x03", 4), NA_FILE_UNKNOWN);
    assert_int_equal(na_sniff(b, 0, 0), NA_FILE_EMPTY);
    assert_int_equal(sniff_str("hello world", 11), NA_FILE_UNKNOWN);
    assert_int_equal(sniff_str("\0\0\0\0\0\0\0\0", 8), NA_FILE_UNKNOWN);
    /* a zip cut to 2 or 3 bytes (the whole file seen): the zip reader's
     * error, not "unrecognised content" */
    assert_int_equal(sniff_str("PK", 2), NA_FILE_ZIP);
    assert_int_equal(sniff_str("PK\x03", 3), NA_FILE_ZIP);
    assert_int_equal(sniff_str("PKx", 3), NA_FILE_UNKNOWN);
    /* n < size: never reads past n */
    assert_int_equal(na_sniff((const uint8_t *)"PK", 2, 1000), NA_FILE_UNKNOWN);
}

static void kind_strings(void **state)
{
    const na_kind_of_file_t all[] = {NA_FILE_UNKNOWN, NA_FILE_SAFETENSORS, NA_FILE_HDF5,
                                     NA_FILE_ZIP,     NA_FILE_GZIP,        NA_FILE_JSON,
                                     NA_FILE_INDEX,   NA_FILE_GIT_LFS,     NA_FILE_NETCDF3,
                                     NA_FILE_EMPTY,   NA_FILE_RAW};
    size_t n = sizeof all / sizeof all[0];
    for (size_t i = 0; i < n; i++) {
        assert_true(strlen(na_kind_of_file_str(all[i])) > 0);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(na_kind_of_file_str(all[i]), na_kind_of_file_str(all[j]));
    }
    assert_string_equal(na_kind_of_file_str(NA_FILE_GIT_LFS), "Git LFS pointer");
    assert_string_equal(na_kind_of_file_str(NA_FILE_ZIP), "zip archive");
}

/* Probe path and check: expected kind, status of the check, message. */
static void expect_probe(const char *path, na_kind_of_file_t kind, na_status_t check,
                         const char *msg)
{
    na_probe_t p;
    na_err_t e = {{0}};
    assert_int_equal(na_probe_path(path, 0, &p, NULL, &e), NA_OK);
    assert_int_equal(p.kind, kind);
    e.msg[0] = 0;
    assert_int_equal(na_probe_check(&p, &e), check);
    if (msg != NULL)
        assert_string_equal(e.msg, msg);
    /* na_input_open gives the same status and message */
    na_open_opts_t o;
    na_open_opts_init(&o);
    na_input_t *in = (na_input_t *)&o; /* must be reset to NULL */
    if (check != NA_OK) {
        na_err_t e2;
        assert_int_equal(na_input_open(path, &o, &in, &e2), check);
        assert_null(in);
        assert_string_equal(e2.msg, e.msg);
    }
}

static const char lfs_ptr[] =
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 12345678901\n";

static void probe_messages(void **state)
{
    expect_probe(put("model.safetensors", lfs_ptr, sizeof lfs_ptr - 1), NA_FILE_GIT_LFS,
                 NA_E_UNSUPPORTED,
                 "Git LFS pointer: the real file (12345678901 bytes) was not downloaded");
    /* a zip cut inside its first header: the .npz reader says why it
     * cannot be read (round 37b: "neither ... nor a NumPy .npz") */
    const char *cut = put("x.safetensors", "PK\x03\x04\x14\0\0\0", 8);
    expect_probe(cut, NA_FILE_NPZ, NA_OK, NULL);
    na_open_opts_t oo;
    na_open_opts_init(&oo);
    na_input_t *cin = NULL;
    na_err_t ce = {{0}};
    assert_int_not_equal(na_input_open(cut, &oo, &cin, &ce), NA_OK);
    assert_null(cin);
    assert_string_equal(ce.msg,
                        "not a readable zip archive (no valid end of central directory record)");
    expect_probe(put("e.bin", "", 0), NA_FILE_EMPTY, NA_E_FORMAT, "empty file (0 bytes)");
    expect_probe(put("u.bin", "hello world\n", 12), NA_FILE_UNKNOWN, NA_E_FORMAT,
                 "unrecognised content (not safetensors, HDF5, NumPy .npy or .npz, PyTorch zip "
                 "or pickle, gzip, netCDF-3, JSON or a Git LFS pointer; give --dtype to read raw "
                 "data)");
    expect_probe(put("c.nc", "CDF\x01\0\0\0\0", 8), NA_FILE_NETCDF3, NA_E_UNSUPPORTED,
                 "netCDF-3 (classic, 64-bit offset or CDF-5), not supported; nccopy -k nc4 IN "
                 "OUT writes a netCDF-4 copy, which is read");
    expect_probe(put("d.gz", "\x1f\x8b\x08\0\0\0\0\0", 8), NA_FILE_GZIP, NA_E_UNSUPPORTED,
                 "gzip-compressed file: give --dtype to audit it as raw data");
    expect_probe(put("config.json", "{\"hidden_size\": 8}", 18), NA_FILE_JSON,
                 NA_E_UNSUPPORTED,
                 "JSON file without a \"weight_map\" (not a sharded-checkpoint index)");
    const char *ix = "{\"metadata\": {}, \"weight_map\": {\"a\": \"s1.safetensors\"}}";
    expect_probe(put("m.index.json", ix, strlen(ix)), NA_FILE_INDEX, NA_OK, NULL);
    /* Broken JSON that mentions weight_map: the index loader explains. */
    const char *bad = "{\"weight_map\": {\"a\": \"s\", \"a\": \"t\"}}";
    expect_probe(put("dup.index.json", bad, strlen(bad)), NA_FILE_INDEX, NA_OK, NULL);
    /* weight_map below the top level, or in an array: not an index. */
    const char *nested = "{\"config\": {\"weight_map\": {}}}";
    expect_probe(put("nested.json", nested, strlen(nested)), NA_FILE_JSON, NA_E_UNSUPPORTED, NULL);
    expect_probe(put("arr.json", "[\"weight_map\"]", 14), NA_FILE_JSON, NA_E_UNSUPPORTED, NULL);
    na_open_opts_t o;
    na_open_opts_init(&o);
    na_input_t *in = NULL;
    na_err_t e;
    assert_int_equal(na_input_open(put("m2.index.json", ix, strlen(ix)), &o, &in, &e),
                     NA_E_UNSUPPORTED);
    assert_non_null(strstr(e.msg, "sharded-checkpoint index"));
    /* An LFS pointer without a size line still gets its own message. */
    const char *nosize = "version https://git-lfs.github.com/spec/v1\noid sha256:00\n";
    expect_probe(put("n.safetensors", nosize, strlen(nosize)), NA_FILE_GIT_LFS,
                 NA_E_UNSUPPORTED, "Git LFS pointer: the real file was not downloaded");
}

static void probe_hdf5(void **state)
{
    /* HDF5 after a user block beyond the 4 KiB head: at 8192. */
    static uint8_t big[8192 + 64];
    memset(big, 'u', sizeof big);
    memcpy(big + 8192, "\x89HDF\r\n\x1a\n", 8);
    na_err_t e;
    na_probe_t p;
    assert_int_equal(na_probe_path(put("ub.h5", big, sizeof big), 0, &p, NULL, &e), NA_OK);
    assert_int_equal(p.kind, NA_FILE_HDF5);
    assert_int_equal(p.size, sizeof big);
    /* accepted when built with HDF5 (issue 3), else refused with a message */
    na_status_t st = na_probe_check(&p, &e);
    assert_true(st == NA_OK ||
                (st == NA_E_UNSUPPORTED &&
                 strcmp(e.msg, "HDF5 file, but this nanaudit was built without HDF5") == 0));
    /* Real file: HDF5 test file with a 1024-byte user block. */
    assert_int_equal(na_probe_path(NA_TEST_DATA "/real/hdf5/hdfgroup-twithub513.h5", 0, &p,
                                   NULL, &e),
                     NA_OK);
    assert_int_equal(p.kind, NA_FILE_HDF5);
    /* Real netCDF-3 classic file (not HDF5). */
    assert_int_equal(
        na_probe_path(NA_TEST_DATA "/real/netcdf/nc4py-ubyte-netcdf3.nc", 0, &p, NULL, &e),
        NA_OK);
    assert_int_equal(p.kind, NA_FILE_NETCDF3);
    /* Real Fortran record: no magic at all. */
    assert_int_equal(na_probe_path(NA_TEST_DATA "/real/raw/scipy-fortran-sf8-15x10x22.dat", 0,
                                   &p, NULL, &e),
                     NA_OK);
    assert_int_equal(p.kind, NA_FILE_UNKNOWN);
}

static void probe_errors(void **state)
{
    char path[256], other[256];
    na_probe_t p;
    na_err_t e;
    int fd = 123;
    snprintf(path, sizeof path, "%s/missing", tmpdir);
    assert_int_equal(na_probe_path(path, 0, &p, &fd, &e), NA_E_NOTFOUND);
    assert_int_equal(fd, -1);
    assert_string_equal(e.msg, "No such file or directory");
    /* A FIFO is refused without opening it (opening would block). */
    snprintf(path, sizeof path, "%s/fifo", tmpdir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(na_probe_path(path, 0, &p, NULL, &e), NA_E_IO);
    assert_string_equal(e.msg, "not a regular file (FIFO)");
    assert_int_equal(na_probe_path(path, 1, &p, NULL, &e), NA_E_IO);
    assert_int_equal(na_probe_path("/dev/null", 1, &p, NULL, &e), NA_E_IO);
    assert_string_equal(e.msg, "not a regular file (character device)");
    assert_int_equal(na_probe_path(tmpdir, 0, &p, NULL, &e), NA_E_IO);
    assert_string_equal(e.msg, "not a regular file (directory)");
    /* Symlink loop a -> b -> a. */
    snprintf(path, sizeof path, "%s/loop_a", tmpdir);
    snprintf(other, sizeof other, "%s/loop_b", tmpdir);
    assert_int_equal(symlink(other, path), 0);
    assert_int_equal(symlink(path, other), 0);
    assert_int_equal(na_probe_path(path, 0, &p, NULL, &e), NA_E_IO);
    assert_string_equal(e.msg, "Too many levels of symbolic links");
    /* Unreadable file (root reads anything, so only as a normal user). */
    if (geteuid() != 0) {
        const char *q = put("secret.safetensors", "x", 1);
        assert_int_equal(chmod(q, 0), 0);
        assert_int_equal(na_probe_path(q, 0, &p, NULL, &e), NA_E_IO);
        assert_string_equal(e.msg, "Permission denied");
    }
}

static void probe_raw_mode(void **state)
{
    na_probe_t p;
    na_err_t e;
    int fd = -1;
    /* --dtype: any non-empty regular file is raw, whatever it holds. */
    assert_int_equal(na_probe_path(put("l.bin", lfs_ptr, sizeof lfs_ptr - 1), 1, &p, &fd, &e),
                     NA_OK);
    assert_int_equal(p.kind, NA_FILE_RAW);
    assert_true(fd >= 0);
    assert_int_equal(close(fd), 0);
    assert_int_equal(na_probe_check(&p, &e), NA_OK);
    /* an empty one too: the raw reader decides by --shape (test_raw.c) */
    assert_int_equal(na_probe_path(put("z.bin", "", 0), 1, &p, NULL, &e), NA_OK);
    assert_int_equal(p.kind, NA_FILE_RAW);
    assert_int_equal(na_probe_path(put("z.bin", "", 0), 0, &p, NULL, &e), NA_OK);
    assert_int_equal(p.kind, NA_FILE_EMPTY);
    assert_int_equal(na_probe_check(&p, &e), NA_E_FORMAT);
    assert_string_equal(e.msg, "empty file (0 bytes)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sniff_every_kind), cmocka_unit_test(kind_strings),
        cmocka_unit_test(probe_messages),   cmocka_unit_test(probe_hdf5),
        cmocka_unit_test(probe_errors),     cmocka_unit_test(probe_raw_mode),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

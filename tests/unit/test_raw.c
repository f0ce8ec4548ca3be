/*
 * test_raw.c - the raw reader (formats/raw.c): dtypes and byte orders,
 * offsets, --length, shapes and every size rule with its message, gzip
 * (written here with zlib: single and multi-member, read in windows, out
 * of order and twice), corrupt/truncated gzip, C64 as two parts, and the
 * real Fortran record files from scipy's test suite.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>  /* snprintf, fopen */
#include <stdlib.h> /* mkdtemp, system, malloc */
#include <string.h> /* memcmp */
#include <zlib.h>   /* gzopen: writes the test's gzip files */

#include "format.h"

#define SF8 NA_TEST_DATA "/real/raw/scipy-fortran-sf8-15x10x22.dat"
#define SI4 NA_TEST_DATA "/real/raw/scipy-fortran-si4-15x10x22.dat"

static char tmpdir[64];

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/na_raw.XXXXXX");
    return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *tpath(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

static const char *put(const char *name, const void *data, size_t n)
{
    const char *path = tpath(name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    return path;
}

/* gzip `parts` members, each holding n/parts bytes of data. */
static const char *put_gz(const char *name, const void *data, size_t n, int parts)
{
    const char *path = tpath(name);
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    assert_int_equal(fclose(out), 0);
    size_t step = n / (size_t)parts;
    for (int i = 0; i < parts; i++) {
        gzFile g = gzopen(path, "ab6");
        assert_non_null(g);
        size_t len = i == parts - 1 ? n - step * (size_t)i : step;
        assert_int_equal(gzwrite(g, (const char *)data + step * (size_t)i, (unsigned)len),
                         (int)len);
        assert_int_equal(gzclose(g), Z_OK);
    }
    return path;
}

static na_open_opts_t opts(na_dtype_t dt, na_endian_t e, uint64_t off, int ndim,
                           const uint64_t *shape)
{
    na_open_opts_t o;
    na_open_opts_init(&o);
    o.raw_dtype = dt;
    o.raw_endian = e;
    o.raw_offset = off;
    o.raw_ndim = ndim;
    for (int i = 0; i < ndim; i++)
        o.raw_shape[i] = shape[i];
    return o;
}

/* Open expecting an error: status and exact message. */
static void expect_open_error(const char *path, const na_open_opts_t *o, na_status_t st,
                              const char *msg)
{
    na_input_t *in = NULL;
    na_err_t e;
    assert_int_equal(na_input_open(path, o, &in, &e), st);
    assert_null(in);
    if (msg != NULL)
        assert_string_equal(e.msg, msg);
}

/* Read [off, off+len) of tensor t through its source and compare. */
static void expect_bytes(const na_tensor_t *t, uint64_t off, const void *want, size_t len)
{
    const uint8_t *p = NULL;
    na_err_t e;
    assert_int_equal(t->src.read(t->src.ctx, off, len, &p, &e), NA_OK);
    assert_memory_equal(p, want, len);
}

static void f32_little_default_shape(void **state)
{
    float v[7] = {1.0f, -2.5f, 3.0f, 0.0f, 65504.0f, 1e-40f, 7.0f};
    const char *path = put("f32.bin", v, sizeof v);
    na_open_opts_t o = opts(NA_DT_F32, NA_LITTLE, 0, -1, NULL);
    na_input_t *in = NULL;
    na_err_t e;
    assert_int_equal(na_input_open(path, &o, &in, &e), NA_OK);
    assert_string_equal(na_input_format(in), "raw");
    assert_string_equal(na_input_path(in), path);
    assert_int_equal(na_input_count(in), 1);
    assert_int_equal(na_input_metadata_count(in), 0);
    assert_int_equal(na_input_tensor_bytes(in, 0), sizeof v);
    na_tensor_t t;
    assert_int_equal(na_input_tensor(in, 0, &t, &e), NA_OK);
    assert_string_equal(t.name, "data");
    assert_int_equal(t.dtype, NA_DT_F32);
    assert_int_equal(t.stored, NA_DT_F32);
    assert_int_equal(t.byte_order, NA_LITTLE);
    assert_int_equal(t.ndim, 1);
    assert_int_equal(t.shape[0], 7);
    assert_int_equal(t.elements, 7);
    assert_int_equal(t.elem_stride, 4);
    assert_int_equal(t.elem_offset, 0);
    expect_bytes(&t, 0, v, sizeof v);
    expect_bytes(&t, 8, v + 2, 12); /* a window inside */
    double x;
    const uint8_t *p;
    assert_int_equal(t.src.read(t.src.ctx, 4, 4, &p, &e), NA_OK);
    assert_int_equal(na_decode1(t.dtype, t.byte_order, p, &x), NA_CL_NORMAL);
    assert_true(x == -2.5);
    /* Past the end of the data: refused, never read. */
    assert_int_not_equal(t.src.read(t.src.ctx, 24, 8, &p, &e), NA_OK);
    assert_int_equal(na_input_tensor(in, 1, &t, &e), NA_E_INTERNAL);
    na_input_close(in);
    na_input_close(NULL);
}

/* Big-endian F64 after a 16-byte header, shape [2,3]. */
static void f64_big_offset_shape(void **state)
{
    uint8_t buf[16 + 48];
    memset(buf, 0xAB, 16);
    const double vals[6] = {0.5, -1.0, 1e300, 2.0, -0.0, 3.25};
    for (int i = 0; i < 6; i++) {
        uint64_t u;
        memcpy(&u, &vals[i], 8);
        for (int k = 0; k < 8; k++)
            buf[16 + 8 * i + k] = (uint8_t)(u >> (56 - 8 * k));
    }
    const char *path = put("f64be.bin", buf, sizeof buf);
    const uint64_t shape[2] = {2, 3};
    na_open_opts_t o = opts(NA_DT_F64, NA_BIG, 16, 2, shape);
    na_input_t *in = NULL;
    na_err_t e;
    assert_int_equal(na_input_open(path, &o, &in, &e), NA_OK);
    na_tensor_t t;
    assert_int_equal(na_input_tensor(in, 0, &t, &e), NA_OK);
    assert_int_equal(t.byte_order, NA_BIG);
    assert_int_equal(t.ndim, 2);
    assert_int_equal(t.shape[0], 2);
    assert_int_equal(t.shape[1], 3);
    assert_int_equal(t.elements, 6);
    const uint8_t *p;
    assert_int_equal(t.src.read(t.src.ctx, 0, 48, &p, &e), NA_OK);
    assert_memory_equal(p, buf + 16, 48); /* offset skipped */
    for (int i = 0; i < 6; i++) {
        double x;
        na_decode1(NA_DT_F64, NA_BIG, p + 8 * i, &x);
        assert_memory_equal(&x, &vals[i], 8);
    }
    na_input_close(in);
}

static void i16_both_orders(void **state)
{
    const uint8_t b[6] = {0x01, 0x02, 0xFF, 0xFE, 0x80, 0x00};
    const char *path = put("i16.bin", b, sizeof b);
    const double want_le[3] = {0x0201, (int16_t)0xFEFF, 0x0080};
    const double want_be[3] = {0x0102, (int16_t)0xFFFE, (int16_t)0x8000};
    for (int be = 0; be <= 1; be++) {
        na_open_opts_t o = opts(NA_DT_I16, be ? NA_BIG : NA_LITTLE, 0, -1, NULL);
        na_input_t *in = NULL;
        na_err_t e;
        assert_int_equal(na_input_open(path, &o, &in, &e), NA_OK);
        na_tensor_t t;
        assert_int_equal(na_input_tensor(in, 0, &t, &e), NA_OK);
        assert_int_equal(t.elements, 3);
        const uint8_t *p;
        assert_int_equal(t.src.read(t.src.ctx, 0, 6, &p, &e), NA_OK);
        for (int i = 0; i < 3; i++) {
            double x;
            na_decode1(NA_DT_I16, t.byte_order, p + 2 * i, &x);
            assert_true(x == (be ? want_be[i] : want_le[i]));
        }
        na_input_close(in);
    }
}

static void size_rules(void **state)
{
    uint8_t b[28] = {0};
    const char *path = put("s.bin", b, sizeof b);
    const uint64_t s23[2] = {2, 3};
    na_open_opts_t o = opts(NA_DT_F32, NA_LITTLE, 0, 2, s23);
    expect_open_error(path, &o, NA_E_FORMAT,
                      "shape [2,3] of F32 needs 24 bytes, but the data after offset 0 is 28 "
                      "bytes");
    o = opts(NA_DT_F64, NA_LITTLE, 0, -1, NULL);
    expect_open_error(path, &o, NA_E_FORMAT,
                      "data size 28 bytes is not a multiple of the F64 element size (8 bytes); "
                      "give --shape, --offset or --length");
    o = opts(NA_DT_F32, NA_LITTLE, 100, -1, NULL);
    expect_open_error(path, &o, NA_E_FORMAT, "--offset 100 is past the end of the file (28 bytes)");
    /* offset 4 + shape [2,3]: exactly 24 bytes left */
    o = opts(NA_DT_F32, NA_LITTLE, 4, 2, s23);
    na_input_t *in = NULL;
    na_err_t e;
    assert_int_equal(na_input_open(path, &o, &in, &e), NA_OK);
    na_input_close(in);
    /* offset == size: no data, an error as an empty file is; with
     * --length 0 an empty 1-D tensor */
    o = opts(NA_DT_F32, NA_LITTLE, 28, -1, NULL);
    expect_open_error(path, &o, NA_E_FORMAT,
                      "no data after --offset 28 (the file has 28 bytes); give --shape with a "
                      "0 dimension or --length 0 if no data is right");
    o.raw_length = 0;
    assert_int_equal(na_input_open(path, &o, &in, &e), NA_OK);
    na_tensor_t t;
    assert_int_equal(na_input_tensor(in, 0, &t, &e), NA_OK);
    assert_int_equal(t.elements, 0);
    na_input_close(in);
    /* --length */
    o = opts(NA_DT_F32, NA_LITTLE, 4, 2, s23);
    o.raw_length = 20;
    expect_open_error(path, &o, NA_E_FORMAT,
                      "shape [2,3] of F32 needs 24 bytes, but the data after offset 4 is 20 "
                      "bytes");
    o.raw_length = 25;
    expect_open_error(path, &o, NA_E_FORMAT,
                      "--length 25 goes past the end of the file: 24 bytes after offset 4");
    /* element count and byte size overflow */
    const uint64_t huge[3] = {1ull << 32, 1ull << 32, 2};
    o = opts(NA_DT_F32, NA_LITTLE, 0, 3, huge);
    expect_open_error(path, &o, NA_E_FORMAT,
                      "shape [4294967296,4294967296,2]: element count overflows 64 bits");
    const uint64_t big[2] = {1ull << 32, 1ull << 31};
    o = opts(NA_DT_F32, NA_LITTLE, 0, 2, big);
    expect_open_error(path, &o, NA_E_FORMAT,
                      "shape [4294967296,2147483648] of F32: byte size overflows 64 bits");
    /* sub-byte dtypes cannot be raw */
    o = opts(NA_DT_F4, NA_LITTLE, 0, -1, NULL);
    expect_open_error(path, &o, NA_E_UNSUPPORTED, "unsupported dtype F4 for raw data");
    /* an empty file is an error with --dtype alone, and the tensor of 0
     * elements a --shape with a 0 dimension says (what numpy's
     * np.zeros((0, 2), "f4").tofile() writes); another shape needs bytes */
    o = opts(NA_DT_F32, NA_LITTLE, 0, -1, NULL);
    expect_open_error(put("empty.bin", "", 0), &o, NA_E_FORMAT,
                      "empty file (0 bytes); give --shape with a 0 dimension if no data is "
                      "right");
    const uint64_t zero2[2] = {0, 2}, two2[2] = {2, 2};
    o = opts(NA_DT_F32, NA_LITTLE, 0, 2, two2);
    expect_open_error(tpath("empty.bin"), &o, NA_E_FORMAT,
                      "shape [2,2] of F32 needs 16 bytes, but the data after offset 0 is 0 "
                      "bytes");
    o = opts(NA_DT_F32, NA_LITTLE, 0, 2, zero2);
    in = NULL;
    assert_int_equal(na_input_open(tpath("empty.bin"), &o, &in, &e), NA_OK);
    assert_int_equal(na_input_tensor(in, 0, &t, &e), NA_OK);
    assert_int_equal(t.ndim, 2);
    assert_int_equal(t.shape[0], 0);
    assert_int_equal(t.shape[1], 2);
    assert_int_equal(t.elements, 0);
    na_input_close(in);
}

static void c64_two_parts(void **state)
{
    const float v[6] = {1.0f, -1.0f, 2.0f, 0.5f, 3.0f, 4.0f}; /* 3 complex values */
    const char *path = put("c64.bin", v, sizeof v);
    na_open_opts_t o = opts(NA_DT_C64, NA_LITTLE, 0, -1, NULL);
    na_input_t *in = NULL;
    na_err_t e;
    assert_int_equal(na_input_open(path, &o, &in, &e), NA_OK);
    assert_int_equal(na_input_count(in), 2);
    const char *names[2] = {"data.real", "data.imag"};
    for (size_t i = 0; i < 2; i++) {
        na_tensor_t t;
        assert_int_equal(na_input_tensor(in, i, &t, &e), NA_OK);
        assert_string_equal(t.name, names[i]);
        assert_int_equal(t.dtype, NA_DT_F32);
        assert_int_equal(t.stored, NA_DT_C64);
        assert_int_equal(t.elements, 3);
        assert_int_equal(t.elem_stride, 8);
        assert_int_equal(t.elem_offset, 4 * i);
        assert_int_equal(na_input_tensor_bytes(in, i), 12);
        const uint8_t *p;
        assert_int_equal(t.src.read(t.src.ctx, 0, 24, &p, &e), NA_OK);
        for (int k = 0; k < 3; k++) {
            double x;
            na_decode1(t.dtype, t.byte_order, p + k * t.elem_stride + t.elem_offset, &x);
            assert_true(x == v[2 * k + i]);
        }
    }
    na_input_close(in);
}

/* 300,000 F32 (1.2 MB: more than one inflate step), in 2 gzip members. */
static void gzip_stream(void **state)
{
    size_t n = 300000;
    float *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)i * 0.25f - 1000.0f;
    for (int parts = 1; parts <= 2; parts++) {
        const char *path = put_gz(parts == 1 ? "g1.bin.gz" : "g2.bin.gz", v, n * 4, parts);
        na_open_opts_t o = opts(NA_DT_F32, NA_LITTLE, 0, -1, NULL);
        na_input_t *in = NULL;
        na_err_t e;
        assert_int_equal(na_input_open(path, &o, &in, &e), NA_OK);
        na_tensor_t t;
        assert_int_equal(na_input_tensor(in, 0, &t, &e), NA_OK);
        assert_int_equal(t.elements, n); /* from the inflated size */
        assert_int_equal(na_input_tensor_bytes(in, 0), n * 4);
        for (int pass = 0; pass < 2; pass++) /* the second pass restarts */
            for (size_t off = 0; off < n * 4; off += 65536) {
                size_t len = n * 4 - off < 65536 ? n * 4 - off : 65536;
                expect_bytes(&t, off, (const uint8_t *)v + off, len);
            }
        expect_bytes(&t, 800000, (const uint8_t *)v + 800000, 4096); /* jump back */
        expect_bytes(&t, 1100000, (const uint8_t *)v + 1100000, 4096); /* skip ahead */
        na_input_close(in);
    }
    free(v);
}

/* Through the engine with 1 MiB windows: 3 MiB of gzip data, pass 1 and
 * the outlier pass (which restarts the stream) agree with the plain file. */
static void gzip_scan_two_passes(void **state)
{
    size_t n = 3u << 18; /* 786,432 F32 = 3 MiB */
    float *v = malloc(n * sizeof *v);
    assert_non_null(v);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u; /* LCG: values in [-1, 1) */
        v[i] = (float)(x >> 8) / (float)(1u << 23) - 1.0f;
    }
    v[n - 3] = 1000.0f; /* an outlier near the end, after many windows */
    const char *plain = put("scan.bin", v, n * 4);
    const char *gz = put_gz("scan.bin.gz", v, n * 4, 1);
    na_scan_opts_t so;
    na_scan_opts_init(&so);
    so.window_bytes = 1u << 20;
    na_result_t r[2];
    const char *paths[2] = {plain, gz};
    for (int k = 0; k < 2; k++) {
        na_open_opts_t o = opts(NA_DT_F32, NA_LITTLE, 0, -1, NULL);
        o.window_bytes = so.window_bytes;
        na_input_t *in = NULL;
        na_err_t e;
        na_tensor_t t;
        assert_int_equal(na_input_open(paths[k], &o, &in, &e), NA_OK);
        assert_int_equal(na_input_tensor(in, 0, &t, &e), NA_OK);
        assert_int_equal(na_scan_tensor(&t, &so, &r[k], &e), NA_OK);
        na_input_close(in);
    }
    assert_true(r[1].pass2);
    assert_int_equal(r[1].outliers, 1);
    assert_int_equal(r[1].n_out_locs, 1);
    assert_int_equal(r[1].out_locs[0], n - 3);
    assert_true(r[1].st.max == 1000.0);
    assert_int_equal(r[1].st.finite, n);
    assert_memory_equal(&r[0].st, &r[1].st, sizeof r[0].st); /* bit-identical */
    na_result_free(&r[0]);
    na_result_free(&r[1]);
    free(v);
}

static void gzip_offset(void **state)
{
    float v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = (float)i;
    const char *path = put_gz("o.bin.gz", v, sizeof v, 1);
    const uint64_t shape[2] = {3, 333};
    na_open_opts_t o = opts(NA_DT_F32, NA_LITTLE, 4, 2, shape);
    na_input_t *in = NULL;
    na_err_t e;
    assert_int_equal(na_input_open(path, &o, &in, &e), NA_OK);
    na_tensor_t t;
    assert_int_equal(na_input_tensor(in, 0, &t, &e), NA_OK);
    expect_bytes(&t, 0, v + 1, 999 * 4);
    na_input_close(in);
    o = opts(NA_DT_F32, NA_LITTLE, 5000, -1, NULL);
    expect_open_error(path, &o, NA_E_FORMAT,
                      "--offset 5000 is past the end of the inflated data (4000 bytes)");
}

static void gzip_corrupt(void **state)
{
    uint8_t v[20000];
    for (size_t i = 0; i < sizeof v; i++)
        v[i] = (uint8_t)(i * 7 + i / 13);
    const char *path = put_gz("c.gz", v, sizeof v, 1);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t z[40000];
    size_t zn = fread(z, 1, sizeof z, f);
    fclose(f);
    assert_true(zn > 100);
    na_open_opts_t o = opts(NA_DT_U8, NA_LITTLE, 0, -1, NULL);
    /* truncated */
    expect_open_error(put("trunc.gz", z, zn / 2), &o, NA_E_FORMAT,
                      "gzip: unexpected end of file (the compressed data is truncated)");
    /* wrong CRC-32 in the trailer: zlib's own message */
    z[zn - 8] ^= 0xFF;
    expect_open_error(put("crc.gz", z, zn), &o, NA_E_FORMAT, "gzip: incorrect data check");
    z[zn - 8] ^= 0xFF;
    /* unknown compression method (RFC 1952: CM must be 8) */
    z[2] = 9;
    expect_open_error(put("cm.gz", z, zn), &o, NA_E_FORMAT, "gzip: unknown compression method");
    z[2] = 8;
    /* garbage after the last member */
    memcpy(z + zn, "junk", 4);
    char msg[128];
    snprintf(msg, sizeof msg, "gzip: trailing garbage after the compressed data (at byte %zu)",
             zn);
    expect_open_error(put("tail.gz", z, zn + 4), &o, NA_E_FORMAT, msg);
    /* a damaged block: some zlib message, always "gzip: " first */
    memset(z + 10, 0xFF, 16);
    na_input_t *in = NULL;
    na_err_t e;
    assert_int_equal(na_input_open(put("blk.gz", z, zn), &o, &in, &e), NA_E_FORMAT);
    assert_null(in);
    assert_memory_equal(e.msg, "gzip: ", 6);
}

/* scipy's Fortran records: 4-byte marker, 3300 values 0..3299, marker. */
static void real_fortran_records(void **state)
{
    const uint64_t n3300[1] = {3300};
    na_open_opts_t o = opts(NA_DT_F64, NA_LITTLE, 4, 1, n3300);
    expect_open_error(SF8, &o, NA_E_FORMAT,
                      "shape [3300] of F64 needs 26400 bytes, but the data after offset 4 is "
                      "26404 bytes");
    o.raw_length = 26400;
    na_input_t *in = NULL;
    na_err_t e;
    assert_int_equal(na_input_open(SF8, &o, &in, &e), NA_OK);
    na_tensor_t t;
    assert_int_equal(na_input_tensor(in, 0, &t, &e), NA_OK);
    na_scan_opts_t so;
    na_scan_opts_init(&so);
    so.threads = 1;
    na_result_t r;
    assert_int_equal(na_scan_tensor(&t, &so, &r, &e), NA_OK);
    assert_int_equal(r.st.finite, 3300);
    assert_true(r.st.min == 0.0 && r.st.max == 3299.0);
    assert_true(r.st.mean == 1649.5);
    na_result_free(&r);
    na_input_close(in);
    /* I32: without --length the trailing marker is silently a 3301st
     * element (13204 is a multiple of 4); --length 13200 is the fix. */
    o = opts(NA_DT_I32, NA_LITTLE, 4, -1, NULL);
    assert_int_equal(na_input_open(SI4, &o, &in, &e), NA_OK);
    assert_int_equal(na_input_tensor(in, 0, &t, &e), NA_OK);
    assert_int_equal(t.elements, 3301);
    na_input_close(in);
    o.raw_length = 13200;
    assert_int_equal(na_input_open(SI4, &o, &in, &e), NA_OK);
    assert_int_equal(na_input_tensor(in, 0, &t, &e), NA_OK);
    assert_int_equal(t.elements, 3300);
    assert_int_equal(na_scan_tensor(&t, &so, &r, &e), NA_OK);
    assert_true(r.st.min == 0.0 && r.st.max == 3299.0 && r.st.zeros == 1);
    na_result_free(&r);
    na_input_close(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(f32_little_default_shape),
        cmocka_unit_test(f64_big_offset_shape),
        cmocka_unit_test(i16_both_orders),
        cmocka_unit_test(size_rules),
        cmocka_unit_test(c64_two_parts),
        cmocka_unit_test(gzip_stream),
        cmocka_unit_test(gzip_scan_two_passes),
        cmocka_unit_test(gzip_offset),
        cmocka_unit_test(gzip_corrupt),
        cmocka_unit_test(real_fortran_records),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

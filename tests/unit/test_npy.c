/*
 * test_npy.c - the .npy header parser (formats/npy.c) on hand-written
 * headers, and the strided views of view.c read in C order through the
 * mapping in windows that cut rows and records in the middle.
 * Format: numpy.lib.format (NEP 1).
 */
#include <setjmp.h> /* cmocka */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h> /* memfd_create */
#include <unistd.h>   /* write */

#include <cmocka.h>

#include "npt.h"

/* "\x93NUMPY" v1.0 + header text padded to a multiple of 64 */
static size_t make(uint8_t *buf, const char *hdr)
{
    size_t n = strlen(hdr), total = 10 + n + 1;
    size_t pad = (64 - total % 64) % 64;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)((n + pad + 1) & 0xff);
    buf[9] = (uint8_t)((n + pad + 1) >> 8);
    memcpy(buf + 10, hdr, n);
    memset(buf + 10 + n, ' ', pad);
    buf[10 + n + pad] = '\n';
    return total + pad;
}

static void plain_headers(void **state)
{
    uint8_t b[512];
    na_npy_header_t h;
    na_err_t e;
    size_t n = make(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }");
    assert_int_equal(na_npy_parse_header(b, n, &h, &e), NA_OK);
    assert_int_equal(h.header_bytes, 128); /* 10 + 59 + '\n', padded to 64 */
    assert_int_equal(h.ndim, 2);
    assert_int_equal(h.elements, 12);
    assert_int_equal(h.itemsize, 4);
    assert_int_equal(h.data_bytes, 48);
    assert_int_equal(h.n_fields, 1);
    assert_int_equal(h.fields[0].dtype, NA_DT_F32);
    assert_int_equal(h.fields[0].order, NA_LITTLE);
    assert_false(h.fortran);
    na_npy_header_free(&h);
    /* keys in any order, Python 2 long, big-endian complex, 0-d */
    n = make(b, "{\"shape\": (), 'fortran_order': True, 'descr': '>c16'}");
    assert_int_equal(na_npy_parse_header(b, n, &h, &e), NA_OK);
    assert_int_equal(h.ndim, 0);
    assert_int_equal(h.elements, 1);
    assert_true(h.fortran);
    assert_int_equal(h.fields[0].dtype, NA_DT_F64);
    assert_int_equal(h.fields[0].nparts, 2);
    assert_int_equal(h.fields[0].order, NA_BIG);
    na_npy_header_free(&h);
    n = make(b, "{'descr': '<u8', 'fortran_order': False, 'shape': (2L, 5L)}");
    assert_int_equal(na_npy_parse_header(b, n, &h, &e), NA_OK);
    assert_int_equal(h.shape[1], 5);
    assert_int_equal(h.fields[0].dtype, NA_DT_U64);
    na_npy_header_free(&h);
}

static void structured_headers(void **state)
{
    uint8_t b[512];
    na_npy_header_t h;
    na_err_t e;
    size_t n = make(b, "{'descr': [('x', '<f8'), ('', '|V4'), ('v', '<f4', (3,)), "
                       "(('title', 'p'), [('a', '<i2'), ('b', '|S3')]), ('', '<f2'), "
                       "('', '<f4', (2,))], 'fortran_order': False, 'shape': (7,)}");
    assert_int_equal(na_npy_parse_header(b, n, &h, &e), NA_OK);
    assert_int_equal(h.itemsize, 8 + 4 + 12 + 2 + 3 + 2 + 8);
    /* x, v, p.a, p.b and the F16 named '' (numpy's a['']); the void and
     * the subarray named '' are padding (numpy's descr_to_dtype; round 30a) */
    assert_int_equal(h.n_fields, 5);
    assert_string_equal(h.fields[0].name, ".x"); /* paths: NAME.x */
    assert_string_equal(h.fields[1].name, ".v");
    assert_int_equal(h.fields[1].offset, 12);
    assert_int_equal(h.fields[1].sub_ndim, 1);
    assert_int_equal(h.fields[1].sub_shape[0], 3);
    assert_string_equal(h.fields[2].name, ".p.a");
    assert_int_equal(h.fields[2].offset, 24);
    assert_int_equal(h.fields[2].dtype, NA_DT_I16);
    assert_string_equal(h.fields[3].name, ".p.b");
    assert_int_equal(h.fields[3].kind, NA_NPY_SKIP);
    assert_string_equal(h.fields[4].name, ".");
    assert_int_equal(h.fields[4].offset, 29);
    assert_int_equal(h.fields[4].dtype, NA_DT_F16);
    na_npy_header_free(&h);
}

static void header_errors(void **state)
{
    static const struct {
        const char *hdr;
        const char *msg;
    } c[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'extra': 1}",
         "header has the key 'extra'; a .npy header has exactly 'descr', 'fortran_order' "
         "and 'shape'"},
        {"{'descr': '<f4', 'shape': (3,)}", "header has no 'fortran_order' key"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x",
         "header has text after its dict"},
        {"{'descr': eval('1'), 'fortran_order': False, 'shape': (3,)}",
         "header is not a valid literal: unexpected character"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3.5,)}",
         "header is not a valid literal: expected ',' or a closing bracket"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': ('3',)}",
         "header 'shape' item 0 is not a non-negative integer"},
        {"{'descr': 'f4x', 'fortran_order': False, 'shape': (3,)}",
         "descr 'f4x' is not a NumPy type string"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
         "header 'shape' item 0 is not a non-negative integer"},
        {"['descr', '<f4']", "header is not a dict literal"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        uint8_t b[512];
        na_npy_header_t h;
        na_err_t e;
        size_t n = make(b, c[i].hdr);
        assert_int_equal(na_npy_parse_header(b, n, &h, &e), NA_E_FORMAT);
        assert_string_equal(e.msg, c[i].msg);
    }
    uint8_t b[16] = "\x93NUMPY\x01\x00";
    na_npy_header_t h;
    na_err_t e;
    /* the magic and then too little: truncated, not "not a .npy file"
     * (sixteenth fresh-user round) */
    assert_int_equal(na_npy_parse_header(b, 7, &h, &e), NA_E_FORMAT);
    assert_string_equal(e.msg, "truncated .npy header (7 bytes)");
    assert_int_equal(na_npy_parse_header(b, 6, &h, &e), NA_E_FORMAT);
    assert_string_equal(e.msg, "truncated .npy header (6 bytes)");
    assert_int_equal(na_npy_parse_header((const uint8_t *)"\x93NUMPX\x01\x00\x10\x00", 10, &h, &e),
                     NA_E_FORMAT);
    assert_string_equal(e.msg, "not a .npy file (it does not start with 0x93 'NUMPY')");
}

/* A Fortran-order 3 x 4 F32 array holding C-order values 0..11 (so in
 * storage order 0 4 8 1 5 9 ...), read back in C order in windows of 5
 * elements: each window is the next 5 values 0, 1, 2, ... */
static void fortran_view_windows(void **state)
{
    float stored[12];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            stored[c * 3 + r] = (float)(r * 4 + c);
    int fd = memfd_create("npy-test", 0);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, stored, sizeof stored), (ssize_t)sizeof stored);
    na_map_t *m = NULL;
    na_err_t e;
    assert_int_equal(na_map_open(fd, sizeof stored, 4096, &m, &e), NA_OK);
    na_store_t s = {m, 0, sizeof stored, NULL, 0};
    na_view_t v;
    memset(&v, 0, sizeof v);
    v.store = &s;
    v.rsize = 4;
    v.ndim = 2;
    v.shape[0] = 3;
    v.shape[1] = 4;
    v.stride[0] = 4;  /* Fortran: the first index moves by one element */
    v.stride[1] = 12;
    assert_int_equal(na_view_prepare(&v, "t", &e), NA_OK);
    assert_false(v.contiguous);
    for (uint64_t off = 0; off < 12; off += 5) {
        size_t cnt = off + 5 <= 12 ? 5 : (size_t)(12 - off);
        const uint8_t *p;
        assert_int_equal(na_view_read(&v, off * 4, cnt * 4, &p, &e), NA_OK);
        for (size_t i = 0; i < cnt; i++) {
            float x;
            memcpy(&x, p + 4 * i, 4);
            assert_true(x == (float)(off + i));
        }
    }
    /* one element past the storage: refused before any read */
    v.shape[1] = 5;
    assert_int_equal(na_view_prepare(&v, "t", &e), NA_E_FORMAT);
    assert_string_equal(e.msg, "t: view reaches byte 60 of a storage of 48 bytes");
    na_view_free(&v);
    na_map_close(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_headers), cmocka_unit_test(structured_headers),
        cmocka_unit_test(header_errors), cmocka_unit_test(fortran_view_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

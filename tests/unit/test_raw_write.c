/*
 * test_raw_write.c - the raw writer (formats/raw_write.c): a cleaned
 * tensor of a --endian big input (na_wtensor_t.big_out) is written with
 * each element's bytes reversed, whatever the sizes of the pieces the
 * write pass hands over (an element split across two, three or eight
 * calls; pieces larger than the writer's 64 KiB swap buffer); other
 * tensors, and one-byte elements, are written as given. Found by the
 * fourth fresh-user round (clean_raw_endian.sh has the CLI side).
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>  /* snprintf */
#include <stdlib.h> /* malloc, free, mkstemp */
#include <string.h> /* memset */
#include <unistd.h> /* pread, close, unlink */

#include "write.h"

/* Write t[0..n) through the raw writer, tensor i's bytes data[i] in
 * pieces of the sizes in cuts (cycled), and read the file back into
 * out[cap]; returns the file's size. */
static size_t write_raw(const na_wtensor_t *t, size_t n, const uint8_t *const *data,
                        const size_t *cuts, size_t ncuts, uint8_t *out, size_t cap)
{
    char path[] = "/tmp/na_raw_write.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    na_writer_t *w = NULL;
    na_err_t err = {{0}};
    assert_int_equal(na_writer_raw.open(fd, NULL, t, n, NULL, 0, &w, &err), NA_OK);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(na_writer_begin(w, i, &err), NA_OK);
        size_t off = 0, c = 0;
        while (off < t[i].bytes) {
            size_t k = cuts[c++ % ncuts];
            if (k > t[i].bytes - off)
                k = t[i].bytes - off;
            assert_int_equal(na_writer_write(w, data[i] + off, k, &err), NA_OK);
            off += k;
        }
    }
    assert_int_equal(na_writer_finish(w, &err), NA_OK);
    na_writer_free(w);
    ssize_t got = pread(fd, out, cap, 0);
    close(fd);
    unlink(path);
    assert_true(got >= 0);
    return (size_t)got;
}

static na_wtensor_t tensor(na_dtype_t dt, uint64_t elems, int big_out)
{
    na_wtensor_t t;
    memset(&t, 0, sizeof t);
    t.name = "data";
    t.dtype = dt;
    t.ndim = 1;
    t.shape[0] = elems;
    t.bytes = elems * (na_dtype_bits(dt) / 8);
    t.big_out = big_out;
    return t;
}

/* F64, F32, I16 big_out: every element reversed, for pieces of 1, 3, 5,
 * 7, 8, 13 and 100000 bytes (the last beyond the 64 KiB swap buffer). */
static void reversed_any_split(void **state)
{
    (void)state;
    const na_dtype_t dts[] = {NA_DT_F64, NA_DT_F32, NA_DT_I16};
    const size_t cuts[][3] = {{1, 1, 1}, {3, 5, 7}, {8, 8, 8}, {13, 2, 1}, {100000, 9, 3}};
    enum { ELEMS = 20000 };
    uint8_t *in = malloc(ELEMS * 8), *out = malloc(ELEMS * 8 + 1);
    assert_non_null(in);
    assert_non_null(out);
    for (size_t b = 0; b < ELEMS * 8; b++)
        in[b] = (uint8_t)(b * 7 + b / 251);
    for (size_t d = 0; d < 3; d++) {
        na_wtensor_t t = tensor(dts[d], ELEMS, 1);
        unsigned es = na_dtype_bits(dts[d]) / 8;
        for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
            const uint8_t *data[1] = {in};
            size_t got = write_raw(&t, 1, data, cuts[c], 3, out, ELEMS * 8 + 1);
            assert_int_equal(got, t.bytes);
            for (size_t e = 0; e < ELEMS; e++)
                for (unsigned k = 0; k < es; k++)
                    assert_int_equal(out[e * es + k], in[e * es + es - 1 - k]);
        }
    }
    free(in);
    free(out);
}

/* Without big_out, and for one-byte elements, the bytes are as given; a
 * second tensor after a reversed one is not reversed. */
static void as_given(void **state)
{
    (void)state;
    uint8_t a[16], b[6], out[64];
    for (size_t i = 0; i < sizeof a; i++)
        a[i] = (uint8_t)i;
    for (size_t i = 0; i < sizeof b; i++)
        b[i] = (uint8_t)(100 + i);
    const size_t cuts[] = {3, 1};
    na_wtensor_t t[2] = {tensor(NA_DT_F32, 4, 0), tensor(NA_DT_U8, 6, 1)};
    const uint8_t *data[2] = {a, b};
    assert_int_equal(write_raw(t, 2, data, cuts, 2, out, sizeof out), 22);
    assert_memory_equal(out, a, 16);
    assert_memory_equal(out + 16, b, 6);
    na_wtensor_t u[2] = {tensor(NA_DT_F32, 4, 1), tensor(NA_DT_I16, 3, 0)};
    assert_int_equal(write_raw(u, 2, data, cuts, 2, out, sizeof out), 22);
    const uint8_t want[16] = {3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12};
    assert_memory_equal(out, want, 16);
    assert_memory_equal(out + 16, b, 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reversed_any_split),
        cmocka_unit_test(as_given),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_hdf5_msg.c - libhdf5's error descriptions as one clean line
 * (formats/hdf5_msg.c, issue 4): a file driver's failed system call (the
 * text of H5FDsec2.c, with ctime()'s newline) becomes "HEAD: TEXT (errno
 * N)"; other descriptions lose their control characters; the result is
 * bounded, cut on a UTF-8 character boundary with "...".
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "hdf5_msg.h"

/* What libhdf5 1.10-1.14's sec2 driver writes for EFBIG (RLIMIT_FSIZE). */
static const char SEC2[] =
    "file write failed: time = Mon Nov 30 08:16:12 2026\n, filename = "
    "'out/.nanaudit-tmp-5TMycS-big.h5', file descriptor = 8, errno = 27, error "
    "message = 'File too large', buf = 0x7f0b05367800, total write size = 1048576, "
    "bytes this sub-write = 1048576, bytes actually written = 18446744073709551615, "
    "offset = 2048";

static void test_driver(void **state)
{
    (void)state;
    char out[NA_H5_CAUSE_MAX];
    na_h5_clean_cause(SEC2, out, sizeof out);
    assert_string_equal(out, "file write failed: File too large (errno 27)");
    na_h5_clean_cause("unable to open file: name = 'x.h5', errno = 13, error message = "
                      "'Permission denied', flags = 1, o_flags = 2", out, sizeof out);
    assert_string_equal(out, "unable to open file: Permission denied (errno 13)");
}

static void test_one_line(void **state)
{
    (void)state;
    char out[NA_H5_CAUSE_MAX];
    na_h5_clean_cause("  bad\n\tthing\r\x01\x7f happened \n", out, sizeof out);
    assert_string_equal(out, "bad thing happened");
    na_h5_clean_cause("required filter 'zstd' is not registered", out, sizeof out);
    assert_string_equal(out, "required filter 'zstd' is not registered");
    na_h5_clean_cause("", out, sizeof out);
    assert_string_equal(out, "");
}

static void test_bounded(void **state)
{
    (void)state;
    char in[1000], out[NA_H5_CAUSE_MAX];
    memset(in, 'a', sizeof in - 1);
    in[sizeof in - 1] = '\0';
    na_h5_clean_cause(in, out, sizeof out);
    assert_int_equal(strlen(out), NA_H5_CAUSE_MAX - 1);
    assert_string_equal(out + NA_H5_CAUSE_MAX - 4, "...");
    /* "é" is two bytes: never half of one before the "..." */
    for (size_t i = 0; i + 2 < sizeof in; i += 2)
        memcpy(in + i, "\xc3\xa9", 2);
    in[998] = '\0';
    na_h5_clean_cause(in, out, 12);
    assert_string_equal(out, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...");
    na_h5_clean_cause("abcdef", out, 4);
    assert_string_equal(out, "...");
    na_h5_clean_cause("abc", out, 4);
    assert_string_equal(out, "abc");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_driver),
        cmocka_unit_test(test_one_line),
        cmocka_unit_test(test_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_status.c - every status has its text and the exit code pinned by
 * DESIGN.md ("Exit codes"); na_err_set keeps messages on one line.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "nanaudit.h"

/* The pinned table: numeric value, text, exit code. A renumbered enum,
 * a status without a message or a changed exit code fails here. */
static const struct {
    na_status_t st;
    int value;
    const char *text;
    int exit_code;
} pinned[] = {
    {NA_OK, 0, "success", 0},
    {NA_E_NOMEM, 1, "out of memory", 4},
    {NA_E_IO, 2, "read error", 3},
    {NA_E_FORMAT, 3, "malformed input", 3},
    {NA_E_UNSUPPORTED, 4, "unsupported input", 3},
    {NA_E_NOTFOUND, 5, "not found", 3},
    {NA_E_WRITE, 6, "write error", 4},
    {NA_E_INTERNAL, 7, "internal error", 4},
    {NA_E_USAGE, 8, "usage error", 2},
};
#define NPINNED (sizeof pinned / sizeof pinned[0])

static void test_every_status(void **state)
{
    (void)state;
    for (size_t i = 0; i < NPINNED; i++) {
        assert_int_equal((int)pinned[i].st, pinned[i].value);
        assert_string_equal(na_status_str(pinned[i].st), pinned[i].text);
        assert_int_equal(na_status_exit_code(pinned[i].st), pinned[i].exit_code);
    }
    /* the table covers the whole enum: the next value is unknown */
    na_status_t next = (na_status_t)NPINNED;
    assert_string_equal(na_status_str(next), "unknown status");
    assert_string_equal(na_status_str((na_status_t)-1), "unknown status");
    assert_int_equal(na_status_exit_code(next), 4); /* a bug, not "ok" */
}

static void test_err_set_formats(void **state)
{
    (void)state;
    na_err_t err;
    na_status_t st = na_err_set(&err, NA_E_FORMAT, "tensor '%s': data_offsets [%d, %d]: %s",
                                "w", 4, 0, "begin after end");
    assert_int_equal(st, NA_E_FORMAT);
    assert_string_equal(err.msg, "tensor 'w': data_offsets [4, 0]: begin after end");
    /* err may be NULL: the status still comes back */
    assert_int_equal(na_err_set(NULL, NA_E_IO, "x %d", 1), NA_E_IO);
}

static void test_err_set_one_line(void **state)
{
    (void)state;
    na_err_t err;
    /* newline, CR, ESC (ANSI colour), BEL, DEL: each byte becomes '?' */
    na_err_set(&err, NA_E_FORMAT, "tensor '%s': bad", "a\nb\r\x1b[31mc\x07\x7f");
    assert_string_equal(err.msg, "tensor 'a?b??[31mc?" "?': bad" /* split: no trigraph */);
    /* C1 CSI as UTF-8 (C2 9B) and as a raw byte (9B), invalid UTF-8 */
    na_err_set(&err, NA_E_FORMAT, "%s", "x\xc2\x9b" "2Jy\x9bz\xff\xe2\x82");
    assert_string_equal(err.msg, "x??2Jy?z???");
    /* valid UTF-8 is kept: é, ∞, 😀 */
    na_err_set(&err, NA_E_FORMAT, "%s", "caf\xc3\xa9 \xe2\x88\x9e \xf0\x9f\x98\x80");
    assert_string_equal(err.msg, "caf\xc3\xa9 \xe2\x88\x9e \xf0\x9f\x98\x80");
}

static void test_err_set_truncates(void **state)
{
    (void)state;
    char big[2 * NA_ERR_LEN];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    na_err_t err;
    na_err_set(&err, NA_E_FORMAT, "%s", big);
    assert_int_equal(strlen(err.msg), NA_ERR_LEN - 1);
    /* a multibyte character cut by the limit leaves no broken UTF-8 */
    memset(big, 'a', NA_ERR_LEN - 2);
    strcpy(big + NA_ERR_LEN - 2, "\xe2\x88\x9e");
    na_err_set(&err, NA_E_FORMAT, "%s", big);
    assert_int_equal(strlen(err.msg), NA_ERR_LEN - 1);
    assert_int_equal(err.msg[NA_ERR_LEN - 2], '?');
}

/* A failed system call: the environment's limits are exit 4, not the
 * input's fault (round 32b: ulimit -n 4 made a .npz "unreadable"). */
static void test_errno_status(void **state)
{
    (void)state;
    assert_int_equal(na_errno_status(ENOENT), NA_E_NOTFOUND);
    assert_int_equal(na_errno_status(ENOTDIR), NA_E_NOTFOUND);
    assert_int_equal(na_errno_status(ENOMEM), NA_E_NOMEM);
    assert_int_equal(na_status_exit_code(na_errno_status(EMFILE)), 4);
    assert_int_equal(na_status_exit_code(na_errno_status(ENFILE)), 4);
    assert_int_equal(na_status_exit_code(na_errno_status(EAGAIN)), 4);
    assert_int_equal(na_errno_status(EIO), NA_E_IO);
    assert_int_equal(na_errno_status(EACCES), NA_E_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_status),
        cmocka_unit_test(test_err_set_formats),
        cmocka_unit_test(test_err_set_one_line),
        cmocka_unit_test(test_err_set_truncates),
        cmocka_unit_test(test_errno_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_escape.c - na_escape_text (terminal-safe names) and
 * na_utf8_seq_len (the UTF-8 rules behind it).
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "nanaudit.h"

/* Escape s with plenty of room and compare; the return value is the
 * length of the full escape. */
static void check(const char *s, const char *want)
{
    char out[256];
    size_t n = na_escape_text(s, out, sizeof out);
    assert_string_equal(out, want);
    assert_int_equal(n, strlen(want));
}

static void test_plain_and_utf8_kept(void **state)
{
    (void)state;
    check("model.layers.0.weight", "model.layers.0.weight");
    check("", "");
    check("caf\xc3\xa9", "caf\xc3\xa9");                     /* é (2 bytes) */
    check("\xe2\x88\x9e \xe4\xb8\xad", "\xe2\x88\x9e \xe4\xb8\xad"); /* ∞ 中 */
    check("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");            /* 😀 (4 bytes) */
    check("\xc2\xa0\xef\xbf\xbd", "\xc2\xa0\xef\xbf\xbd");    /* NBSP, U+FFFD */
    check("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf");            /* U+10FFFF */
}

static void test_controls(void **state)
{
    (void)state;
    check("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"); /* ANSI colour */
    check("a\nb\tc\\d", "a\\nb\\tc\\\\d");
    check("\r\x07\x08\x7f", "\\x0d\\x07\\x08\\x7f");
    check("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07");    /* OSC: window title */
    /* C1 controls as UTF-8: U+009B (CSI) and U+0085 (NEL) */
    check("x\xc2\x9b" "2J", "x\\xc2\\x9b2J");
    check("\xc2\x85", "\\xc2\\x85");
    check("\xc2\x80\xc2\x9f\xc2\xa0", "\\xc2\\x80\\xc2\\x9f\xc2\xa0");
    /* bidi override (Trojan Source) and line separator */
    check("a\xe2\x80\xae" "b", "a\\xe2\\x80\\xaeb");
    check("\xe2\x80\xa8\xe2\x81\xa6\xe2\x81\xa9", "\\xe2\\x80\\xa8\\xe2\\x81\\xa6\\xe2\\x81\\xa9");
    check("\xe2\x80\xa7\xe2\x80\xaf", "\xe2\x80\xa7\xe2\x80\xaf"); /* neighbours kept */
    /* LRM, RLM and ALM (nineteenth fresh-user round); ZWJ beside them kept */
    check("\xe2\x80\x8e\xe2\x80\x8f", "\\xe2\\x80\\x8e\\xe2\\x80\\x8f");
    check("\xd8\x9c\xd8\x9b", "\\xd8\\x9c\xd8\x9b");
    check("\xe2\x80\x8d", "\xe2\x80\x8d");
    /* the zero-width space and the BOM are invisible: a name with one
     * looked like another (tester round 23a) */
    check("a\xe2\x80\x8b" "b", "a\\xe2\\x80\\x8bb");
    check("\xef\xbb\xbfw", "\\xef\\xbb\\xbfw");
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    check("a\xff" "b", "a\\xffb");               /* lone 0xff */
    check("\x80", "\\x80");                      /* stray continuation */
    check("\x9b" "2J", "\\x9b2J");               /* raw 8-bit CSI */
    check("ab\xe2\x82", "ab\\xe2\\x82");         /* truncated at the end */
    check("\xe2\x82" "x", "\\xe2\\x82x");        /* truncated mid-string */
    check("\xc0\xaf", "\\xc0\\xaf");             /* overlong '/' */
    check("\xe0\x80\xaf", "\\xe0\\x80\\xaf");    /* overlong, 3 bytes */
    check("\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf"); /* overlong, 4 bytes */
    check("\xed\xa0\x80", "\\xed\\xa0\\x80");    /* surrogate U+D800 */
    check("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* above U+10FFFF */
    check("\xf8\x88\x80\x80\x80", "\\xf8\\x88\\x80\\x80\\x80"); /* 5-byte form */
    /* a bad byte does not swallow the valid character after it */
    check("\xe2\xc3\xa9", "\\xe2\xc3\xa9");
}

static void test_truncation(void **state)
{
    (void)state;
    char out[8];
    /* like snprintf: returns the full length, writes cap-1 bytes + NUL */
    assert_int_equal(na_escape_text("abcdefghij", out, sizeof out), 10);
    assert_string_equal(out, "abcdefg");
    /* never half an escape: "ab\x1b" would need 6 bytes, only 5 fit */
    assert_int_equal(na_escape_text("abc\x1b" "d", out, 7), 8);
    assert_string_equal(out, "abc");
    /* never half a character: é does not fit after "abcdef" */
    assert_int_equal(na_escape_text("abcdef\xc3\xa9", out, sizeof out), 8);
    assert_string_equal(out, "abcdef");
    /* nothing after the first piece that did not fit, even if it would */
    assert_int_equal(na_escape_text("abcde\nx", out, 7), 8);
    assert_string_equal(out, "abcde");
    assert_int_equal(na_escape_text("abcde\\x", out, sizeof out), 8);
    assert_string_equal(out, "abcde\\\\"); /* the backslash pair fits */
    /* cap 1: only the NUL; cap 0 and out NULL: just the length */
    assert_int_equal(na_escape_text("\n", out, 1), 2);
    assert_string_equal(out, "");
    assert_int_equal(na_escape_text("a\n", NULL, 0), 3);
    /* exact fit */
    assert_int_equal(na_escape_text("a\n", out, 4), 3);
    assert_string_equal(out, "a\\n");
    /* NULL input is the empty string */
    assert_int_equal(na_escape_text(NULL, out, sizeof out), 0);
    assert_string_equal(out, "");
}

static void test_utf8_seq_len(void **state)
{
    (void)state;
    assert_int_equal(na_utf8_seq_len("A", 1), 1);
    assert_int_equal(na_utf8_seq_len("\n", 1), 1); /* controls are ASCII */
    assert_int_equal(na_utf8_seq_len("", 0), 0);
    assert_int_equal(na_utf8_seq_len("\xc3\xa9", 2), 2);
    assert_int_equal(na_utf8_seq_len("\xc3\xa9", 1), 0); /* cut by n */
    assert_int_equal(na_utf8_seq_len("\xe2\x88\x9e", 3), 3);
    assert_int_equal(na_utf8_seq_len("\xef\xbf\xbf", 3), 3);     /* U+FFFF */
    assert_int_equal(na_utf8_seq_len("\xed\x9f\xbf", 3), 3);     /* U+D7FF */
    assert_int_equal(na_utf8_seq_len("\xee\x80\x80", 3), 3);     /* U+E000 */
    assert_int_equal(na_utf8_seq_len("\xf0\x90\x80\x80", 4), 4); /* U+10000 */
    assert_int_equal(na_utf8_seq_len("\xf0\x9f\x98\x80", 3), 0);
    assert_int_equal(na_utf8_seq_len("\xc1\xbf", 2), 0);         /* overlong */
    assert_int_equal(na_utf8_seq_len("\xe0\x9f\xbf", 3), 0);     /* overlong */
    assert_int_equal(na_utf8_seq_len("\xed\xbf\xbf", 3), 0);     /* surrogate */
    assert_int_equal(na_utf8_seq_len("\xf5\x80\x80\x80", 4), 0);
    assert_int_equal(na_utf8_seq_len("\xe2\x28\xa1", 3), 0);     /* bad 2nd byte */
    assert_int_equal(na_utf8_seq_len("\xe2\x82\x28", 3), 0);     /* bad 3rd byte */
}

/* Terminal columns for the text tables (round 29b: CJK names counted as
 * one column a character misaligned their row). */
static void test_text_columns(void **state)
{
    (void)state;
    assert_int_equal(na_text_columns(""), 0);
    assert_int_equal(na_text_columns("layer.0.weight"), 14);
    assert_int_equal(na_text_columns("\xc3\xa9"), 1);                 /* e acute */
    assert_int_equal(na_text_columns("\xe6\x97\xa5\xe6\x9c\xac"), 4); /* two CJK ideographs */
    assert_int_equal(na_text_columns("a\xea\xb0\x80" "b"), 4);          /* Hangul syllable */
    assert_int_equal(na_text_columns("\xef\xbc\xa1"), 2);            /* fullwidth A */
    assert_int_equal(na_text_columns("\xf0\x9f\x98\x80"), 2);        /* emoji U+1F600 */
    assert_int_equal(na_text_columns("\xf0\xa0\x80\x80"), 2);        /* U+20000 */
    assert_int_equal(na_text_columns("\\xff"), 4);                  /* an escaped byte */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_and_utf8_kept),
        cmocka_unit_test(test_controls),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_utf8_seq_len),
        cmocka_unit_test(test_text_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

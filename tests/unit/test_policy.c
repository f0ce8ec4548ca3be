/*
 * test_policy.c - kind names, --fail-on parsing and the findings of a
 * scanned tensor (messages, counts, fails flags).
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "nanaudit.h"

#define B(k) NA_KIND_BIT(NA_K_##k)

static void test_kind_names(void **state)
{
    (void)state;
    static const char *want[NA_K_COUNT] = {
        "nan", "pos_inf", "neg_inf", "outliers", "subnormal", "zero_tensor",
        "range", "max_abs", "cast_overflow", "cast_underflow", "negative"};
    for (int k = 0; k < NA_K_COUNT; k++)
        assert_string_equal(na_kind_name((na_kind_t)k), want[k]);
    assert_string_equal(na_kind_name(NA_K_COUNT), "unknown");
}

static void test_fail_on_ok(void **state)
{
    (void)state;
    struct {
        const char *list;
        uint32_t mask;
    } cases[] = {
        {"nan,inf", NA_DEFAULT_FAIL_MASK},
        {"nan", B(NAN)},
        {"inf", B(POS_INF) | B(NEG_INF)},
        {"pos-inf", B(POS_INF)},
        {"neg_inf,outliers", B(NEG_INF) | B(OUTLIERS)},
        {"nan,inf,outliers", NA_DEFAULT_FAIL_MASK | B(OUTLIERS)},
        {"zero-tensor,cast-overflow,cast_underflow", B(ZERO_TENSOR) | B(CAST_OVERFLOW) |
                                                         B(CAST_UNDERFLOW)},
        {"subnormal,range,max_abs,negative", B(SUBNORMAL) | B(RANGE) | B(MAX_ABS) | B(NEGATIVE)},
        {"none", 0},
        {"NaN, Inf", NA_DEFAULT_FAIL_MASK},
        {"nan,nan", B(NAN)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t m = 0xdeadbeef;
        na_err_t err;
        assert_int_equal(na_parse_fail_on(cases[i].list, &m, &err), NA_OK);
        assert_int_equal(m, cases[i].mask);
    }
}

static void test_fail_on_errors(void **state)
{
    (void)state;
    uint32_t m = 7;
    na_err_t err;
    assert_int_equal(na_parse_fail_on("nan,infinity", &m, &err), NA_E_USAGE);
    assert_string_equal(err.msg, "--fail-on: unknown kind 'infinity' (valid: nan, pos_inf, "
                                 "neg_inf, inf, outliers, subnormal, zero_tensor, range, "
                                 "max_abs, cast_overflow, cast_underflow, negative, none)");
    assert_int_equal(m, 7); /* untouched on error */
    assert_int_equal(na_parse_fail_on("nan,,inf", &m, &err), NA_E_USAGE);
    assert_non_null(strstr(err.msg, "--fail-on: empty kind name in 'nan,,inf'"));
    assert_int_equal(na_parse_fail_on("", &m, &err), NA_E_USAGE);
    assert_int_equal(na_parse_fail_on("nan_", &m, &err), NA_E_USAGE);
    assert_non_null(strstr(err.msg, "'nan_'"));
    assert_int_equal(na_parse_fail_on("averyveryverylongwordthatisnotakindatallreally", &m, &err),
                     NA_E_USAGE);
    assert_non_null(strstr(err.msg, "'averyveryverylongwordthatisnotakindatallreally'"));
}

static na_tensor_t tensor2d(uint64_t rows, uint64_t cols, na_dtype_t dt)
{
    na_tensor_t t;
    memset(&t, 0, sizeof t);
    t.name = "w";
    t.dtype = t.stored = dt;
    t.ndim = 2;
    t.shape[0] = rows;
    t.shape[1] = cols;
    t.elements = rows * cols;
    return t;
}

static void base_result(na_result_t *r, uint64_t n)
{
    memset(r, 0, sizeof *r);
    na_stats_init(&r->st);
    r->st.elements = n;
    r->first_pos_inf = r->first_neg_inf = UINT64_MAX;
    r->threshold = 6;
}

/* Every kind with a count, in kind order, with index and fails flag. */
static void test_findings_messages(void **state)
{
    (void)state;
    na_tensor_t t = tensor2d(4, 5, NA_DT_F16);
    na_result_t r;
    base_result(&r, 20);
    uint64_t nan_locs[2] = {2, 7}, inf_locs[2] = {3, 9}, out_locs[1] = {19};
    r.st.nan = 3;
    r.nan_locs = nan_locs;
    r.n_nan_locs = 2;
    r.st.pos_inf = 1;
    r.st.neg_inf = 2;
    r.inf_locs = inf_locs;
    r.n_inf_locs = 2;
    r.first_pos_inf = 9;
    r.first_neg_inf = 3;
    r.st.finite = 14;
    r.st.mean = 0.5;
    r.std = 0.25;
    r.outliers = 1;
    r.out_locs = out_locs;
    r.n_out_locs = 1;
    r.st.subnormal = 4;
    na_finding_t f[8];
    size_t n = na_findings(&t, &r, NA_DEFAULT_FAIL_MASK, f, 8);
    assert_int_equal(n, 5);
    assert_int_equal(f[0].kind, NA_K_NAN);
    assert_int_equal(f[0].count, 3);
    assert_true(f[0].fails);
    assert_string_equal(f[0].message, "3 NaN values (first at [0, 2])");
    assert_int_equal(f[1].kind, NA_K_POS_INF);
    assert_string_equal(f[1].message, "1 +Inf value (first at [1, 4])");
    assert_true(f[1].fails);
    assert_int_equal(f[2].kind, NA_K_NEG_INF);
    assert_string_equal(f[2].message, "2 -Inf values (first at [0, 3])");
    assert_int_equal(f[3].kind, NA_K_OUTLIERS);
    assert_false(f[3].fails);
    assert_string_equal(f[3].message,
                        "1 outlier beyond mean +- 6*std (|x - 0.5| > 1.5) (first at [3, 4])");
    /* a negative mean: x + 0.5, not "x - -0.5" (nineteenth fresh-user round) */
    r.st.mean = -0.5;
    na_finding_t g[8];
    assert_int_equal(na_findings(&t, &r, NA_DEFAULT_FAIL_MASK, g, 8), 5);
    assert_string_equal(g[3].message,
                        "1 outlier beyond mean +- 6*std (|x + 0.5| > 1.5) (first at [3, 4])");
    r.st.mean = 0.5;
    assert_int_equal(f[4].kind, NA_K_SUBNORMAL);
    assert_string_equal(f[4].message, "4 subnormal values in F16");
    assert_false(f[4].fails);

    /* cap smaller than the count: only cap written, full count returned */
    na_finding_t one[1];
    assert_int_equal(na_findings(&t, &r, B(SUBNORMAL), one, 1), 5);
    assert_int_equal(one[0].kind, NA_K_NAN);
    assert_false(one[0].fails);
    assert_int_equal(na_findings(&t, &r, 0, NULL, 0), 5);
}

/* No locations kept (max_locations 0): messages without "first at". */
static void test_findings_without_locations(void **state)
{
    (void)state;
    na_tensor_t t = tensor2d(2, 2, NA_DT_F32);
    na_result_t r;
    base_result(&r, 4);
    r.st.nan = 1;
    r.st.pos_inf = 1;
    na_finding_t f[4];
    assert_int_equal(na_findings(&t, &r, NA_DEFAULT_FAIL_MASK, f, 4), 2);
    assert_string_equal(f[0].message, "1 NaN value");
    assert_string_equal(f[1].message, "1 +Inf value");
}

static void test_zero_tensor(void **state)
{
    (void)state;
    na_tensor_t t = tensor2d(3, 1, NA_DT_F32);
    na_result_t r;
    base_result(&r, 3);
    r.st.zeros = r.st.finite = 3;
    r.st.min = r.st.max = r.st.mean = 0;
    na_finding_t f[2];
    assert_int_equal(na_findings(&t, &r, B(ZERO_TENSOR), f, 2), 1);
    assert_int_equal(f[0].kind, NA_K_ZERO_TENSOR);
    assert_int_equal(f[0].count, 3);
    assert_true(f[0].fails);
    assert_string_equal(f[0].message, "all 3 values are zero");

    base_result(&r, 0); /* empty tensor: not a zero tensor, no findings */
    t = tensor2d(2, 0, NA_DT_F32);
    assert_int_equal(na_findings(&t, &r, ~0u, f, 2), 0);

    base_result(&r, 2); /* a clean tensor: nothing */
    r.st.finite = 2;
    r.st.zeros = 1;
    assert_int_equal(na_findings(&t, &r, ~0u, f, 2), 0);
}

/* A scalar (ndim 0) has the index "[]". */
static void test_findings_scalar(void **state)
{
    (void)state;
    na_tensor_t t;
    memset(&t, 0, sizeof t);
    t.name = "s";
    t.ndim = 0;
    t.elements = 1;
    na_result_t r;
    base_result(&r, 1);
    uint64_t at0 = 0;
    r.st.nan = 1;
    r.nan_locs = &at0;
    r.n_nan_locs = 1;
    na_finding_t f[2];
    assert_int_equal(na_findings(&t, &r, NA_DEFAULT_FAIL_MASK, f, 2), 1);
    assert_string_equal(f[0].message, "1 NaN value (first at [])");
}

/* Numbers of flags and policy files: decimal syntax only (lib/parse.c). */
static void test_parse_double(void **state)
{
    (void)state;
    double v;
    const char *ok[] = {"3", "-2.5", "+7", ".5", "3.", "1e3", "1E-3", "2.5e+2", "0",
                        "010", "1e-310"};
    const double want[] = {3, -2.5, 7, 0.5, 3, 1000, 0.001, 250, 0, 10, 1e-310};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_int_equal(na_parse_double(ok[i], &v), 0);
        assert_true(v == want[i]);
    }
    const char *bad[] = {"", " 3", "3 ", "0x10", "0x1p3", "inf", "nan", "-inf", "1e", "e3",
                         ".", "+", "1.2.3", "1e400", "3k", "--1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(na_parse_double(bad[i], &v), -1);
}

/* The shortest form that reads back exactly (lib/parse.c na_fmt_num). */
static void test_fmt_num(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(na_fmt_num(b, sizeof b, 0.2), "0.2");
    assert_string_equal(na_fmt_num(b, sizeof b, -0.1), "-0.1");
    assert_string_equal(na_fmt_num(b, sizeof b, 1e300), "1e+300");
    assert_string_equal(na_fmt_num(b, sizeof b, 0.1 + 0.2), "0.30000000000000004");
    assert_string_equal(na_fmt_num(b, sizeof b, (double)0.24725301563739777f),
                        "0.24725301563739777");
    assert_string_equal(na_fmt_num(b, sizeof b, 65520), "65520");
    /* 16 digits suffice where 15 do not */
    assert_string_equal(na_fmt_num(b, sizeof b, 0x1p53), "9007199254740992");
    assert_string_equal(na_fmt_num(b, sizeof b, 0x1p-1074), "4.94065645841247e-324");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_parse_double),
        cmocka_unit_test(test_fmt_num),
        cmocka_unit_test(test_fail_on_ok),
        cmocka_unit_test(test_fail_on_errors),
        cmocka_unit_test(test_findings_messages),
        cmocka_unit_test(test_findings_without_locations),
        cmocka_unit_test(test_zero_tensor),
        cmocka_unit_test(test_findings_scalar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

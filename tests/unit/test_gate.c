/*
 * test_gate.c - the CI-gate engine pieces (issue 5): exact cast
 * thresholds, the interval counts of pass 1 against a brute-force count
 * (several blocks and windows, any thread count, and na_scan_extra's own
 * pass), tolerances, policy precedence and baseline matching.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nanaudit.h"

static void test_cast_limits(void **state)
{
    (void)state;
    struct {
        na_dtype_t dt;
        double ovf, unf;
        int strict;
    } want[] = {
        {NA_DT_F16, 65520.0, ldexp(1, -25), 0},
        {NA_DT_BF16, ldexp(2 - ldexp(1, -8), 127), ldexp(1, -134), 0},
        {NA_DT_F8_E5M2, 61440.0, ldexp(1, -17), 0},
        {NA_DT_F8_E4M3, 464.0, ldexp(1, -10), 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        double o, u;
        int s;
        assert_int_equal(na_cast_limits(want[i].dt, &o, &s, &u), NA_OK);
        assert_true(o == want[i].ovf);
        assert_true(u == want[i].unf);
        assert_int_equal(s, want[i].strict);
    }
    double o, u;
    int s;
    assert_int_equal(na_cast_limits(NA_DT_F32, &o, &s, &u), NA_E_USAGE);
    assert_int_equal(na_cast_limits(NA_DT_F8_E4M3FNUZ, &o, &s, &u), NA_E_USAGE);
}

typedef struct mem {
    const unsigned char *p;
} mem_t;

static na_status_t mem_read(void *ctx, uint64_t off, size_t len, const uint8_t **ptr,
                            na_err_t *err)
{
    (void)len;
    (void)err;
    *ptr = ((mem_t *)ctx)->p + off;
    return NA_OK;
}

static na_tensor_t f32_tensor(const float *v, uint64_t n, mem_t *m)
{
    na_tensor_t t;
    memset(&t, 0, sizeof t);
    m->p = (const unsigned char *)v;
    t.name = "layer.running_var";
    t.dtype = t.stored = NA_DT_F32;
    t.ndim = 1;
    t.shape[0] = t.elements = n;
    t.elem_stride = 4;
    t.src.read = mem_read;
    t.src.ctx = m;
    return t;
}

static uint64_t brute(const float *v, uint64_t n, double lo, double hi)
{
    uint64_t c = 0;
    for (uint64_t i = 0; i < n; i++)
        c += isfinite(v[i]) && v[i] >= lo && v[i] <= hi;
    return c;
}

static void test_interval_counts(void **state)
{
    (void)state;
    const uint64_t n = 200003; /* 13 blocks of 16 Ki, the last partial */
    float *v = malloc(n * sizeof *v);
    assert_non_null(v);
    uint32_t x = 12345;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = ldexpf((float)(x >> 8) / 16777216.0f - 0.5f, (int)(x % 60) - 30);
    }
    v[7] = NAN, v[8] = INFINITY, v[9] = -INFINITY, v[10] = -0.0f, v[11] = 65520.0f;
    v[12] = 464.0f, v[13] = nextafterf(464.0f, 1000.0f), v[14] = ldexpf(1, -25);
    na_checks_t c;
    na_checks_init(&c);
    c.range_lo_set = c.range_hi_set = 1;
    c.range_lo = -3;
    c.range_hi = 0.25;
    c.max_abs_set = 1;
    c.max_abs = 1000;
    c.cast = NA_DT_F16;
    na_extra_t ex;
    na_checks_extra(&c, "layer.running_var", &ex);
    assert_int_equal(ex.n, 9); /* negative, range x2, max_abs x2, cast x4 */
    mem_t m;
    na_tensor_t t = f32_tensor(v, n, &m);
    uint64_t first[NA_MAX_INTERVALS];
    for (int threads = 1; threads <= 3; threads++) {
        na_scan_opts_t o;
        na_scan_opts_init(&o);
        o.threads = threads;
        o.window_bytes = threads == 3 ? 4 * 40000 : NA_DEFAULT_WINDOW_BYTES; /* several windows */
        o.extra = &ex;
        na_result_t r;
        na_err_t err;
        assert_int_equal(na_scan_tensor(&t, &o, &r, &err), NA_OK);
        assert_int_equal(r.extra_done, 1);
        for (size_t j = 0; j < ex.n; j++) {
            assert_int_equal(r.extra_counts[j], brute(v, n, ex.iv[j].lo, ex.iv[j].hi));
            if (threads == 1)
                first[j] = r.extra_counts[j];
            assert_int_equal(r.extra_counts[j], first[j]);
        }
        na_result_t r2;
        memset(&r2, 0, sizeof r2);
        assert_int_equal(na_scan_extra(&t, &o, &r2, &err), NA_OK);
        for (size_t j = 0; j < ex.n; j++)
            assert_int_equal(r2.extra_counts[j], first[j]);
        na_result_free(&r);
    }
    /* no extra checks: extra_done stays 0 and nothing is counted */
    na_scan_opts_t o;
    na_scan_opts_init(&o);
    na_result_t r;
    na_err_t err;
    assert_int_equal(na_scan_tensor(&t, &o, &r, &err), NA_OK);
    assert_int_equal(r.extra_done, 0);
    na_result_free(&r);
    free(v);
}

static void test_findings_and_tolerance(void **state)
{
    (void)state;
    float v[10] = {1, -2, NAN, 3, 70000, -70000, 0, 1e-9f, 5, 6};
    mem_t m;
    na_tensor_t t = f32_tensor(v, 10, &m);
    t.name = "w";
    na_checks_t c;
    na_checks_init(&c);
    c.cast = NA_DT_F16;
    c.fail_mask |= NA_KIND_BIT(NA_K_CAST_OVERFLOW);
    c.max_fraction[NA_K_NAN] = 0.1; /* 1 of 10: tolerated */
    na_extra_t ex;
    na_checks_extra(&c, t.name, &ex);
    na_scan_opts_t o;
    na_scan_opts_init(&o);
    o.zscore = 0;
    o.extra = &ex;
    na_result_t r;
    na_err_t err;
    assert_int_equal(na_scan_tensor(&t, &o, &r, &err), NA_OK);
    na_finding_t f[NA_K_COUNT];
    size_t n = na_findings_checked(&t, &r, &c, f, NA_K_COUNT);
    assert_int_equal(n, 3);
    assert_int_equal(f[0].kind, NA_K_NAN);
    assert_int_equal(f[0].fails, 0);
    assert_string_equal(f[0].message,
                        "1 NaN value (first at [2]) (tolerated: at most 0.1 of the elements)");
    assert_int_equal(f[1].kind, NA_K_CAST_OVERFLOW);
    assert_int_equal(f[1].count, 2);
    assert_int_equal(f[1].fails, 1);
    assert_int_equal(f[2].kind, NA_K_CAST_UNDERFLOW);
    assert_int_equal(f[2].count, 1);
    assert_int_equal(f[2].fails, 0);
    c.max_fraction[NA_K_NAN] = 0.09;
    n = na_findings_checked(&t, &r, &c, f, NA_K_COUNT);
    assert_int_equal(f[0].fails, 1);
    na_result_free(&r);
}

/* A count of exactly F x elements is tolerated, one more is not: 29 NaN
 * of 100 at F = 0.29 failed (0.29 * 100 is 28.999999999999996 in
 * doubles; fifteenth fresh-user round), and 57 of 100 at 0.57. */
static void test_tolerance_boundary(void **state)
{
    (void)state;
    static const struct { unsigned bad; double frac; int fails; } c[] = {
        {29, 0.29, 0}, {30, 0.29, 1}, {57, 0.57, 0}, {58, 0.57, 1}, {1, 0.01, 0}, {2, 0.01, 1},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        float v[100];
        for (unsigned i = 0; i < 100; i++)
            v[i] = i < c[k].bad ? NAN : 1.0f;
        mem_t m;
        na_tensor_t t = f32_tensor(v, 100, &m);
        na_checks_t ck;
        na_checks_init(&ck);
        ck.max_fraction[NA_K_NAN] = c[k].frac;
        na_scan_opts_t o;
        na_scan_opts_init(&o);
        o.zscore = 0;
        na_result_t r;
        na_err_t err;
        assert_int_equal(na_scan_tensor(&t, &o, &r, &err), NA_OK);
        na_finding_t f[NA_K_COUNT];
        size_t n = na_findings_checked(&t, &r, &ck, f, NA_K_COUNT);
        assert_true(n >= 1);
        assert_int_equal(f[0].kind, NA_K_NAN);
        assert_int_equal(f[0].count, c[k].bad);
        assert_int_equal(f[0].fails, c[k].fails);
        na_result_free(&r);
    }
}

static void test_policy_precedence(void **state)
{
    (void)state;
    static const char text[] =
        "version: 1\n"
        "defaults:\n"
        "  max_abs: 5\n"
        "  fail_on: nan\n"
        "rules:\n"
        "  - match: ['*.bias']\n"
        "    max_abs: 7\n"
        "  - match: 'x.*'\n"
        "    nonnegative: false\n";
    na_policy_t *p;
    na_err_t err;
    assert_int_equal(na_policy_parse(text, strlen(text), "p.yaml", &p, &err), NA_OK);
    na_checks_t flags, c;
    na_checks_init(&flags);
    na_policy_checks(p, &flags, 0, "w", &c);
    assert_true(c.max_abs_set && c.max_abs == 5);
    assert_int_equal(c.fail_mask, NA_KIND_BIT(NA_K_NAN)); /* defaults' fail_on decides */
    flags.max_abs_set = 1;
    flags.max_abs = 6;
    na_policy_checks(p, &flags, NA_CK_MAX_ABS, "w", &c); /* a flag beats the defaults */
    assert_true(c.max_abs == 6);
    na_policy_checks(p, &flags, NA_CK_MAX_ABS, "l.bias", &c); /* a rule beats the flag */
    assert_true(c.max_abs == 7);
    assert_true(c.fail_mask & NA_KIND_BIT(NA_K_MAX_ABS)); /* and fails on its kind */
    na_policy_checks(p, &flags, 0, "x.running_var", &c);
    assert_int_equal(c.nonneg, 0); /* the name rule switched off by a rule */
    na_policy_checks(NULL, &flags, 0, "x.running_var", &c);
    assert_int_equal(c.nonneg, -1);
    na_policy_free(p);
    na_policy_free(NULL);
    static const char bad[] = "version: 1\nrules:\n  - match: '*'\n    maxabs: 1\n";
    assert_int_equal(na_policy_parse(bad, strlen(bad), "b.yaml", &p, &err), NA_E_USAGE);
    assert_null(p);
    assert_non_null(strstr(err.msg, "b.yaml:4: unknown key 'maxabs' in a rule"));
}

static void test_baseline(void **state)
{
    (void)state;
    static const char text[] =
        "{\"schema_version\": 1, \"files\": [{\"path\": \"a\", \"tensors\": ["
        "{\"name\": \"w\", \"findings\": [{\"kind\": \"nan\", \"count\": 2}]},"
        "{\"name\": \"e\", \"status\": \"error\"}]}]}";
    na_baseline_t *b;
    na_err_t err;
    assert_int_equal(na_baseline_parse(text, strlen(text), "old.json", &b, &err), NA_OK);
    na_finding_t f[3];
    memset(f, 0, sizeof f);
    f[0].kind = NA_K_NAN, f[0].count = 2, f[0].fails = 1;
    f[1].kind = NA_K_POS_INF, f[1].count = 1, f[1].fails = 1;
    f[2].kind = NA_K_NAN, f[2].count = 3, f[2].fails = 1;
    na_baseline_apply(b, "a", "w", f, 2);
    assert_int_equal(f[0].fails, 0);
    assert_int_equal(f[0].in_baseline, 1);
    assert_int_equal(f[0].baseline, 2);
    assert_string_equal(f[0].message, " (baseline: 2)");
    assert_int_equal(f[1].fails, 1); /* a kind the baseline lacks */
    assert_int_equal(f[1].in_baseline, 0);
    na_baseline_apply(b, "a", "w", f + 2, 1);
    assert_int_equal(f[2].fails, 1); /* the count grew */
    f[2].fails = 1;
    f[2].in_baseline = 0;
    na_baseline_apply(b, "./a", "w", f + 2, 1); /* the same path, spelt otherwise */
    assert_int_equal(f[2].in_baseline, 1);
    assert_int_equal(f[2].fails, 1); /* still grew */
    f[2].in_baseline = 0;
    na_baseline_apply(b, "b/../a", "w", f + 2, 1); /* another path */
    assert_int_equal(f[2].in_baseline, 0);
    na_baseline_apply(b, "/a", "w", f + 2, 1);
    assert_int_equal(f[2].in_baseline, 0);
    na_baseline_free(b);
    na_baseline_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cast_limits),
        cmocka_unit_test(test_interval_counts),
        cmocka_unit_test(test_findings_and_tolerance),
        cmocka_unit_test(test_tolerance_boundary),
        cmocka_unit_test(test_policy_precedence),
        cmocka_unit_test(test_baseline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

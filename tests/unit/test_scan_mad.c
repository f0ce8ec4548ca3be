/*
 * test_scan_mad.c - na_scan_tensor with na_scan_opts_t.mad (scan --mad,
 * lib/scan_mad.c) on in-memory tensors read in small windows, so every
 * radix pass crosses many windows and blocks.
 *
 * References are computed here by sorting a copy (qsort): the median as
 * numpy's np.median (mean of the two middle values of an even count),
 * MAD = median |x - median|, MeanAD = sum |x - median| / n in element
 * order; flagged values by the formula of DESIGN.md written out.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nanaudit.h"

typedef struct src {
    const unsigned char *data;
    size_t size;
    int calls, fail_call; /* fail_call: 1-based read that fails (0: none) */
} src_t;

static na_status_t sread(void *ctx, uint64_t off, size_t len, const uint8_t **ptr, na_err_t *err)
{
    src_t *s = ctx;
    if (++s->calls == s->fail_call)
        return na_err_set(err, NA_E_IO, "x: injected read error");
    assert_true(off + len <= s->size);
    *ptr = s->data + off;
    return NA_OK;
}

static na_tensor_t tensor(na_dtype_t dt, uint64_t n, uint32_t esize, src_t *s)
{
    na_tensor_t t;
    memset(&t, 0, sizeof t);
    t.name = "x";
    t.dtype = t.stored = dt;
    t.byte_order = NA_LITTLE;
    t.ndim = 1;
    t.shape[0] = t.elements = n;
    t.elem_stride = esize;
    t.src.read = sread;
    t.src.ctx = s;
    return t;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct ref {
    double median, mad, meanad;
    uint64_t count, first[8];
    size_t nfirst;
} ref_t;

static ref_t reference(const double *x, size_t n, double k)
{
    ref_t r;
    memset(&r, 0, sizeof r);
    double *f = malloc(n * sizeof *f);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            f[m++] = x[i];
    r.median = median_of(f, m);
    for (size_t i = 0, j = 0; i < n; i++)
        if (isfinite(x[i]))
            f[j++] = fabs(x[i] - r.median);
    r.mad = median_of(f, m);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            sum += fabs(x[i] - r.median);
    r.meanad = sum / (double)m;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]))
            continue;
        double z = r.mad > 0 ? 0.6745 * (x[i] - r.median) / r.mad
                             : (x[i] - r.median) / (1.253314 * r.meanad);
        if (fabs(z) > k) {
            if (r.nfirst < 8)
                r.first[r.nfirst++] = i;
            r.count++;
        }
    }
    free(f);
    return r;
}

/* Scan F64 data x with --mad k in windows of `window` bytes and compare. */
static void check(const double *x, size_t n, double k, size_t window, int threads, int zero_mad)
{
    src_t s = {(const unsigned char *)x, n * 8, 0, 0};
    na_tensor_t t = tensor(NA_DT_F64, n, 8, &s);
    na_scan_opts_t o;
    na_scan_opts_init(&o);
    o.threads = threads;
    o.window_bytes = window;
    o.max_locations = 8;
    o.mad = k; /* zscore keeps its default 6: --mad replaces it */
    na_result_t r;
    na_err_t err = {{0}};
    assert_int_equal(na_scan_tensor(&t, &o, &r, &err), NA_OK);
    ref_t want = reference(x, n, k);
    assert_int_equal(r.method, NA_OUTLIER_MAD);
    assert_int_equal(r.outliers_checked, 1);
    assert_true(r.threshold == k);
    assert_true(r.median == want.median);
    assert_true(r.mad == want.mad);
    assert_true(zero_mad ? r.mad == 0 : r.mad > 0);
    if (r.mad == 0)
        assert_true(r.meanad == want.meanad); /* same order of summation */
    assert_int_equal(r.outliers, want.count);
    assert_int_equal(r.n_out_locs, want.nfirst);
    for (size_t i = 0; i < want.nfirst; i++)
        assert_int_equal(r.out_locs[i], want.first[i]);
    na_result_free(&r);
}

/* Odd count with NaN/Inf, outliers in several windows; 1-3 threads. */
static void test_odd_count_windows(void **state)
{
    (void)state;
    size_t n = 5 * 4096 + 37;
    double *x = malloc(n * sizeof *x);
    uint64_t s = 12345;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (double)(s >> 11) / 9007199254740992.0 - 0.3;
    }
    x[3] = 50, x[4097] = -40, x[9000] = NAN, x[12000] = INFINITY, x[20000] = 9;
    for (int th = 1; th <= 3; th++) {
        check(x, n, 3.5, 4096 * 8, th, 0);  /* one block per window */
        check(x, n, 3.5, 3 * 1000 * 8, th, 0); /* blocks of 3000, 3 per window */
    }
    check(x, n, 3.5, 1 << 20, 0, 0);
    free(x);
}

/* Even count and ties at the middle: the upper middle value repeats the
 * lower one (le_count > n/2) or is the next distinct value. */
static void test_even_count_ties(void **state)
{
    (void)state;
    double a[] = {1, 2, 2, 2, 2, 3, 9, 100, -50, 2.5};
    check(a, 10, 3.5, 4 * 8, 2, 0);
    double b[] = {1, 2, 3, 4, 5, 6, 7, 8, 1000, -1000};
    check(b, 10, 2.0, 3 * 8, 3, 0);
}

/* MAD == 0: MeanAD fallback, summed across windows in element order. */
static void test_mad_zero(void **state)
{
    (void)state;
    size_t n = 10007;
    double *x = calloc(n, sizeof *x);
    for (size_t i = 0; i < n; i += 7)
        x[i] = (double)(i % 13) * 0.37 - 2.0;
    x[5000] = 60;
    check(x, n, 3.5, 512 * 8, 2, 1);
    check(x, n, 3.5, 512 * 8, 1, 1);
    free(x);
}

/* A read error during a --mad pass is returned with its message and the
 * result is left empty. */
static void test_read_error(void **state)
{
    (void)state;
    double x[64];
    for (int i = 0; i < 64; i++)
        x[i] = i * 1.5;
    src_t s = {(const unsigned char *)x, sizeof x, 0, 6}; /* pass 1 reads 4 windows */
    na_tensor_t t = tensor(NA_DT_F64, 64, 8, &s);
    na_scan_opts_t o;
    na_scan_opts_init(&o);
    o.window_bytes = 16 * 8;
    o.mad = 3.5;
    na_result_t r;
    na_err_t err = {{0}};
    assert_int_equal(na_scan_tensor(&t, &o, &r, &err), NA_E_IO);
    assert_string_equal(err.msg, "x: injected read error");
    assert_int_equal(r.outliers, 0);
    assert_null(r.out_locs);
}

/* An F32 tensor without finite values: no median, nothing flagged. */
static void test_no_finite(void **state)
{
    (void)state;
    float x[5] = {NAN, INFINITY, -INFINITY, NAN, NAN};
    src_t s = {(const unsigned char *)x, sizeof x, 0, 0};
    na_tensor_t t = tensor(NA_DT_F32, 5, 4, &s);
    na_scan_opts_t o;
    na_scan_opts_init(&o);
    o.mad = 3.5;
    na_result_t r;
    na_err_t err = {{0}};
    assert_int_equal(na_scan_tensor(&t, &o, &r, &err), NA_OK);
    assert_int_equal(r.outliers_checked, 1);
    assert_true(isnan(r.median) && isnan(r.mad));
    assert_int_equal(r.outliers, 0);
    na_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_odd_count_windows),
        cmocka_unit_test(test_even_count_ties),
        cmocka_unit_test(test_mad_zero),
        cmocka_unit_test(test_read_error),
        cmocka_unit_test(test_no_finite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

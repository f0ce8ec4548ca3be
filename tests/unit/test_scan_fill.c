/*
 * test_scan_fill.c - fill runs (na_fill_fn, lib/scan_fill.c): a scan that
 * is told where the data are copies of one element gives the result of
 * the scan that reads them, bit for bit, and does not read them.
 *
 * Each case scans one in-memory tensor twice, with the fill callback and
 * without it (src.fill = NULL: every window read), and compares every
 * field of the results: statistics (doubles by their bits), std, outlier
 * count and locations, NaN/Inf locations, first +-Inf, interval counts.
 * The data hold the fill element at the declared runs, so both scans see
 * the same tensor. Cases cover the kernels' paths (F32, F64, F16, I8 via
 * the lookup table, missing values via the decoder), a NaN and a -Inf
 * fill (locations inside runs), a fill value that is a z-score outlier
 * (pass 2 counts it from the template), runs that start and end inside
 * blocks, several runs per window, partial last blocks, windows wholly in
 * a run, --threads 1 and 3. Error paths: a run outside the asked range,
 * runs of different elements, an error of the callback.
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

typedef struct run {
    uint64_t lo, hi; /* elements [lo, hi) are the fill element */
} run_t;

typedef struct fsrc {
    unsigned char *data;
    size_t n, stride;
    unsigned char fill[8];
    const run_t *runs;
    size_t nruns;
    uint64_t bytes_read;
    int bad; /* 1: report a run past the range; 2: a different element; 3: fail */
} fsrc_t;

static na_status_t fread_(void *ctx, uint64_t off, size_t len, const uint8_t **ptr,
                          na_err_t *err)
{
    (void)err;
    fsrc_t *s = ctx;
    assert_true(off + len <= s->n * s->stride);
    s->bytes_read += len;
    *ptr = s->data + off;
    return NA_OK;
}

static na_status_t ffill(void *ctx, uint64_t off, uint64_t len, uint64_t *skip, uint64_t *run,
                         const uint8_t **elem, na_err_t *err)
{
    fsrc_t *s = ctx;
    static const unsigned char other[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint64_t lo = off / s->stride, hi = (off + len) / s->stride;
    *skip = len;
    *run = 0;
    if (s->bad == 3)
        return na_err_set(err, NA_E_IO, "x: fill query failed");
    for (size_t i = 0; i < s->nruns; i++) {
        uint64_t a = s->runs[i].lo > lo ? s->runs[i].lo : lo;
        uint64_t b = s->runs[i].hi < hi ? s->runs[i].hi : hi;
        if (a >= b)
            continue;
        *skip = (a - lo) * s->stride;
        *run = (b - a) * s->stride + (s->bad == 1 ? s->stride : 0);
        *elem = s->bad == 2 && i > 0 ? other : s->fill;
        return NA_OK;
    }
    return NA_OK;
}

/* n elements of noise (gen: element i's bytes), the fill element in runs. */
static void fsrc_init(fsrc_t *s, size_t n, size_t stride, const void *fill, const run_t *runs,
                      size_t nruns, void (*gen)(unsigned char *, size_t))
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->stride = stride;
    s->data = malloc(n * stride);
    assert_non_null(s->data);
    memcpy(s->fill, fill, stride);
    s->runs = runs;
    s->nruns = nruns;
    for (size_t i = 0; i < n; i++)
        gen(s->data + i * stride, i);
    for (size_t r = 0; r < nruns; r++)
        for (uint64_t i = runs[r].lo; i < runs[r].hi; i++)
            memcpy(s->data + i * stride, fill, stride);
}

/* A deterministic pseudo-normal value for element i (sum of uniforms). */
static double noise(size_t i)
{
    uint64_t x = i * 0x9E3779B97F4A7C15ull + 12345;
    double v = 0;
    for (int k = 0; k < 4; k++) {
        x ^= x >> 29;
        x *= 0xBF58476D1CE4E5B9ull;
        x ^= x >> 32;
        v += (double)(x >> 11) / 9007199254740992.0;
    }
    return v - 2.0;
}

static void gen_f32(unsigned char *p, size_t i)
{
    float v = (float)noise(i);
    if (i % 50021 == 7)
        v = NAN;
    if (i % 70001 == 11)
        v = 1e4f; /* an outlier */
    memcpy(p, &v, 4);
}
static void gen_f64(unsigned char *p, size_t i)
{
    double v = noise(i) * 3 + 1;
    memcpy(p, &v, 8);
}
static void gen_f16(unsigned char *p, size_t i)
{
    uint16_t h = (uint16_t)(0x3c00 + (i * 37) % 1024); /* 1.0 .. 2.0 */
    if (i % 9001 == 5)
        h = 0x7c00; /* +Inf */
    memcpy(p, &h, 2);
}
static void gen_i8(unsigned char *p, size_t i)
{
    *p = (unsigned char)(i * 7 % 41);
}

static void assert_same_bits(double a, double b)
{
    assert_memory_equal(&a, &b, sizeof a);
}

static void assert_same(const na_result_t *a, const na_result_t *b)
{
    const na_stats_t *x = &a->st, *y = &b->st;
    assert_int_equal(x->elements, y->elements);
    assert_int_equal(x->nan, y->nan);
    assert_int_equal(x->pos_inf, y->pos_inf);
    assert_int_equal(x->neg_inf, y->neg_inf);
    assert_int_equal(x->zeros, y->zeros);
    assert_int_equal(x->subnormal, y->subnormal);
    assert_int_equal(x->finite, y->finite);
    assert_int_equal(x->missing, y->missing);
    assert_same_bits(x->min, y->min);
    assert_same_bits(x->max, y->max);
    assert_same_bits(x->abs_max, y->abs_max);
    assert_same_bits(x->mean, y->mean);
    assert_same_bits(x->m2, y->m2);
    assert_same_bits(a->std, b->std);
    assert_int_equal(a->outliers, b->outliers);
    assert_int_equal(a->n_nan_locs, b->n_nan_locs);
    assert_int_equal(a->n_inf_locs, b->n_inf_locs);
    assert_int_equal(a->n_out_locs, b->n_out_locs);
    for (size_t i = 0; i < a->n_nan_locs; i++)
        assert_int_equal(a->nan_locs[i], b->nan_locs[i]);
    for (size_t i = 0; i < a->n_inf_locs; i++)
        assert_int_equal(a->inf_locs[i], b->inf_locs[i]);
    for (size_t i = 0; i < a->n_out_locs; i++)
        assert_int_equal(a->out_locs[i], b->out_locs[i]);
    assert_int_equal(a->first_pos_inf, b->first_pos_inf);
    assert_int_equal(a->first_neg_inf, b->first_neg_inf);
    assert_int_equal(a->extra_done, b->extra_done);
    for (size_t i = 0; i < NA_MAX_INTERVALS; i++)
        assert_int_equal(a->extra_counts[i], b->extra_counts[i]);
}

/* Scan s as dtype dt with and without fill runs, for --threads 1 and 3
 * and windows of `window` bytes; results equal. Returns the fraction of
 * the bytes the fill-run scan read in its last pass-1 run (threads 3). */
static double check(fsrc_t *s, na_dtype_t dt, size_t window, double K, const na_extra_t *ex,
                    int n_missing, double missing, na_result_t *out)
{
    na_tensor_t t;
    memset(&t, 0, sizeof t);
    t.name = "x";
    t.dtype = t.stored = dt;
    t.ndim = 1;
    t.shape[0] = t.elements = s->n;
    t.elem_stride = (uint32_t)s->stride;
    t.src.read = fread_;
    t.src.ctx = s;
    t.n_missing = n_missing;
    t.missing[0] = missing;
    double frac = 1.0;
    for (int th = 1; th <= 3; th += 2) {
        na_scan_opts_t o;
        na_scan_opts_init(&o);
        o.threads = th;
        o.window_bytes = window;
        o.zscore = K;
        o.extra = ex;
        na_result_t slow, fast;
        na_err_t err = {{0}};
        t.src.fill = NULL;
        assert_int_equal(na_scan_tensor(&t, &o, &slow, &err), NA_OK);
        t.src.fill = ffill;
        s->bytes_read = 0;
        assert_int_equal(na_scan_tensor(&t, &o, &fast, &err), NA_OK);
        frac = (double)s->bytes_read / (double)(s->n * s->stride);
        assert_same(&slow, &fast);
        na_result_free(&slow);
        if (th == 3 && out)
            *out = fast;
        else
            na_result_free(&fast);
    }
    return frac;
}

static void test_f32_zero_fill(void **state)
{
    (void)state;
    static const run_t runs[] = {{0, 50000}, {70000, 150001}, {150500, 151000}, {180000, 200003}};
    float z = 0.0f;
    fsrc_t s;
    fsrc_init(&s, 200003, 4, &z, runs, 4, gen_f32);
    na_extra_t ex = {2, {{-0.5, 0.5}, {-1e300, -1.0}}};
    na_result_t r;
    for (size_t w = 4096; w <= (4u << 20); w *= 32)
        check(&s, NA_DT_F32, w, 6.0, &ex, 0, 0, NULL);
    /* one block per window: only the 5 of 13 blocks that hold data are
     * read in pass 1, and pass 2 reads those with an outlier again */
    double frac = check(&s, NA_DT_F32, 1u << 16, 6.0, &ex, 0, 0, &r);
    assert_true(frac < 0.7);
    assert_int_equal(r.st.zeros, 50000 + 80001 + 500 + 20003);
    na_result_free(&r);
    free(s.data);
}

static void test_nan_fill_locations(void **state)
{
    (void)state;
    static const run_t runs[] = {{3, 40000}, {60000, 100000}};
    float q = NAN;
    fsrc_t s;
    fsrc_init(&s, 100000, 4, &q, runs, 2, gen_f32);
    na_result_t r;
    check(&s, NA_DT_F32, 1u << 16, 6.0, NULL, 0, 0, &r);
    assert_int_equal(r.n_nan_locs, 5);
    assert_int_equal(r.nan_locs[0], 3);
    assert_int_equal(r.nan_locs[4], 7);
    /* the runs, and the generator's NaN at 50028 (its NaN at 7 is in a run) */
    assert_int_equal(r.st.nan, 39997 + 40000 + 1);
    na_result_free(&r);
    free(s.data);
}

static void test_outlier_fill(void **state)
{
    (void)state;
    /* 1000 in 2 % of the elements: beyond mean +- 6 std (pass 2) */
    static const run_t runs[] = {{100000, 104000}};
    double v = 1000.0;
    fsrc_t s;
    fsrc_init(&s, 200000, 8, &v, runs, 1, gen_f64);
    na_result_t r;
    check(&s, NA_DT_F64, 1u << 17, 6.0, NULL, 0, 0, &r);
    assert_int_equal(r.outliers, 4000);
    assert_int_equal(r.out_locs[0], 100000);
    na_result_free(&r);
    check(&s, NA_DT_F64, 1u << 20, 2.0, NULL, 0, 0, NULL);
    free(s.data);
}

static void test_f16_neg_inf_fill(void **state)
{
    (void)state;
    static const run_t runs[] = {{20000, 90000}};
    uint16_t ninf = 0xfc00;
    fsrc_t s;
    fsrc_init(&s, 90001, 2, &ninf, runs, 1, gen_f16);
    na_result_t r;
    check(&s, NA_DT_F16, 1u << 15, 6.0, NULL, 0, 0, &r);
    assert_int_equal(r.st.neg_inf, 70000);
    assert_int_equal(r.first_neg_inf, 20000);
    na_result_free(&r);
    free(s.data);
}

static void test_i8_missing_fill(void **state)
{
    (void)state;
    static const run_t runs[] = {{0, 16384}, {40000, 300000}};
    signed char m7 = -7;
    fsrc_t s;
    fsrc_init(&s, 300000, 1, &m7, runs, 2, gen_i8);
    na_extra_t ex = {1, {{-10.0, 0.0}}};
    na_result_t r;
    check(&s, NA_DT_I8, 1u << 16, 3.0, &ex, 1, -7.0, &r); /* -7 is missing */
    assert_int_equal(r.st.missing, 16384 + 260000);
    assert_int_equal(r.extra_counts[0], r.st.zeros); /* [-10, 0]: only 0 */
    na_result_free(&r);
    check(&s, NA_DT_I8, 1u << 16, 3.0, &ex, 0, 0, &r); /* -7 is a value */
    assert_int_equal(r.extra_counts[0], 16384 + 260000 + r.st.zeros); /* [-10, 0] */
    na_result_free(&r);
    free(s.data);
}

static void scan_bad(int bad, na_status_t want, const char *msg)
{
    static const run_t runs[] = {{0, 20000}, {30000, 40000}};
    float z = 0.0f;
    fsrc_t s;
    fsrc_init(&s, 40000, 4, &z, runs, 2, gen_f32);
    s.bad = bad;
    na_tensor_t t;
    memset(&t, 0, sizeof t);
    t.name = "x";
    t.dtype = t.stored = NA_DT_F32;
    t.ndim = 1;
    t.shape[0] = t.elements = s.n;
    t.elem_stride = 4;
    t.src = (na_source_t){fread_, &s, ffill};
    na_scan_opts_t o;
    na_scan_opts_init(&o);
    na_result_t r;
    na_err_t err = {{0}};
    assert_int_equal(na_scan_tensor(&t, &o, &r, &err), want);
    if (strstr(err.msg, msg) == NULL)
        fail_msg("message '%s', expected '%s'", err.msg, msg);
    assert_int_equal(r.n_nan_locs, 0); /* reset after the error */
    na_result_free(&r);
    free(s.data);
}

static void test_errors(void **state)
{
    (void)state;
    /* the second run, one element too long, ends past the window */
    scan_bad(1, NA_E_INTERNAL, "x: bad fill run [120000, +40004) in [80004, 160000)");
    scan_bad(2, NA_E_INTERNAL, "x: fill runs of different elements");
    scan_bad(3, NA_E_IO, "x: fill query failed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32_zero_fill),    cmocka_unit_test(test_nan_fill_locations),
        cmocka_unit_test(test_outlier_fill),     cmocka_unit_test(test_f16_neg_inf_fill),
        cmocka_unit_test(test_i8_missing_fill),  cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

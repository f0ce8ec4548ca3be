/*
 * test_clean.c - unit tests of the clean engine (lib/clean.h): rounding
 * back to F16/BF16/F32/integers (round to nearest even, overflow counts;
 * reference values from numpy/ml_dtypes astype), exact medians by radix
 * selection (odd and even counts, repeated values, negative zero, one
 * feature and many), the MAD == 0 MeanAD fallback, per-feature
 * passthrough of an all-NaN feature, and the write pass's predicted
 * statistics; the 2-bit drop states (na_clean_row) and the width-1 block
 * driver of lib/clean.c (run_tiles): drops on both sides of a block
 * boundary (16384 rows), partner rows, and the same bits for 1 and 4
 * threads.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <omp.h> /* omp_set_num_threads */
#include <stdlib.h>
#include <string.h>

#include "clean.h"
#include "clean_mem.h" /* mem_t, f64_tensor */

static uint16_t enc16(na_dtype_t dt, double v, int *over)
{
    uint8_t b[2];
    *over = na_clean_encode(dt, v, b);
    return (uint16_t)(b[0] | b[1] << 8);
}

static void test_encode_f16(void **state)
{
    int over;
    assert_int_equal(enc16(NA_DT_F16, 1.0, &over), 0x3C00);
    assert_int_equal(enc16(NA_DT_F16, 65504.0, &over), 0x7BFF);
    assert_int_equal(over, 0);
    /* 65519.99 rounds down to 65504; 65520 is the tie that rounds to Inf */
    assert_int_equal(enc16(NA_DT_F16, 65519.99, &over), 0x7BFF);
    assert_int_equal(enc16(NA_DT_F16, 65520.0, &over), 0x7C00);
    assert_int_equal(over, 1);
    /* ties to even: 1 + 2^-11 -> 1.0, 1 + 3*2^-11 -> 1 + 2^-9 */
    assert_int_equal(enc16(NA_DT_F16, 1.0 + ldexp(1, -11), &over), 0x3C00);
    assert_int_equal(enc16(NA_DT_F16, 1.0 + 3 * ldexp(1, -11), &over), 0x3C02);
    /* subnormals: 2^-24 is 0x0001; 2^-25 is a tie to 0; 1.5*2^-24 -> 2 */
    assert_int_equal(enc16(NA_DT_F16, ldexp(1, -24), &over), 0x0001);
    assert_int_equal(enc16(NA_DT_F16, ldexp(1, -25), &over), 0x0000);
    assert_int_equal(enc16(NA_DT_F16, 1.5 * ldexp(1, -24), &over), 0x0002);
    assert_int_equal(enc16(NA_DT_F16, -2.0, &over), 0xC000);
    assert_int_equal(enc16(NA_DT_F16, NAN, &over) & 0x7C00, 0x7C00);
    assert_int_equal(over, 0);
    assert_int_equal(enc16(NA_DT_F16, -INFINITY, &over), 0xFC00);
    assert_int_equal(over, 0);
}

static void test_encode_bf16(void **state)
{
    int over;
    assert_int_equal(enc16(NA_DT_BF16, 1.0, &over), 0x3F80);
    /* once-rounded from double: 1 + 2^-8 + 2^-30 is above the tie -> up;
     * through float it would also be; 1 + 2^-8 exactly is a tie -> even */
    assert_int_equal(enc16(NA_DT_BF16, 1.0 + ldexp(1, -8), &over), 0x3F80);
    assert_int_equal(enc16(NA_DT_BF16, 1.0 + ldexp(1, -8) + ldexp(1, -40), &over), 0x3F81);
    assert_int_equal(enc16(NA_DT_BF16, 3.4e38, &over), 0x7F80);
    assert_int_equal(over, 1);
    assert_int_equal(enc16(NA_DT_BF16, 3.3895313892515355e38, &over), 0x7F7F);
    assert_int_equal(over, 0);
}

static void test_encode_int_f32(void **state)
{
    uint8_t b[8];
    assert_int_equal(na_clean_encode(NA_DT_U8, 300.0, b), 1);
    assert_int_equal(b[0], 255);
    assert_int_equal(na_clean_encode(NA_DT_I8, 2.5, b), 0);
    assert_int_equal((int8_t)b[0], 2); /* half to even */
    assert_int_equal(na_clean_encode(NA_DT_I8, -3.5, b), 0);
    assert_int_equal((int8_t)b[0], -4);
    assert_int_equal(na_clean_encode(NA_DT_I16, NAN, b), 1);
    assert_int_equal(b[0] | b[1], 0);
    assert_int_equal(na_clean_encode(NA_DT_I64, 1e19, b), 1);
    int64_t v;
    memcpy(&v, b, 8);
    assert_true(v == INT64_MAX);
    assert_int_equal(na_clean_encode(NA_DT_F32, 1e39, b), 1);
    float f;
    memcpy(&f, b, 4);
    assert_true(isinf(f));
    assert_int_equal(na_clean_encode(NA_DT_F32, INFINITY, b), 0);
}

/* Fit with --mad K on one feature; returns median and MAD. */
static void mad_of(const double *v, uint64_t n, double *med, double *mad, double *meanad)
{
    mem_t m;
    na_tensor_t t = f64_tensor(&m, v, n, 1);
    na_clean_opts_t o;
    na_clean_opts_init(&o);
    o.samples = 1;
    o.method = NA_OM_MAD;
    o.k = 3.5;
    o.action = NA_OA_CLIP;
    na_clean_tensor_t ct;
    na_err_t err;
    assert_int_equal(na_clean_prepare(&t, &o, &ct, &err), NA_OK);
    assert_int_equal(na_clean_fit(&t, &o, &ct, &err), NA_OK);
    *med = ct.feat[0].center;
    *mad = ct.feat[0].scale;
    *meanad = ct.feat[0].meanad;
    na_clean_tensor_free(&ct);
}

static void test_median_exact(void **state)
{
    double med, mad, meanad;
    const double odd[] = {5, -1, 3, 3, 100, -7, 2};
    mad_of(odd, 7, &med, &mad, &meanad); /* sorted -7 -1 2 3 3 5 100 */
    assert_true(med == 3.0);
    assert_true(mad == 2.0); /* |x-3|: 10 4 1 0 0 2 97 -> 0 0 1 2 4 10 97 */
    const double even[] = {4, 1, 3, 2};
    mad_of(even, 4, &med, &mad, &meanad);
    assert_true(med == 2.5);
    assert_true(mad == 1.0); /* 1.5 .5 .5 1.5 -> (0.5 + 1.5) / 2 */
    const double rep[] = {2, 2, 2, 9};
    mad_of(rep, 4, &med, &mad, &meanad);
    assert_true(med == 2.0); /* the two middle values repeat */
    assert_true(mad == 0.0);
    assert_true(meanad == 7.0 / 4); /* MeanAD fallback: (0+0+0+7)/4 */
    const double zeros[] = {-0.0, 0.0, -1e-300, 1e-300};
    mad_of(zeros, 4, &med, &mad, &meanad);
    assert_true(med == 0.0);
    const double tiny[] = {1.0000000000000002, 1.0};
    mad_of(tiny, 2, &med, &mad, &meanad);
    assert_true(med == (1.0000000000000002 + 1.0) / 2);
}

/* Many features: the 8-bit digit path (more than 128 features). */
static void test_median_many_features(void **state)
{
    enum { R = 9, C = 200 };
    static double v[R * C];
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            v[r * C + c] = (double)((r * 7 + c) % R) * (c + 1) - c; /* a permutation of 0..8 scaled */
    mem_t m;
    na_tensor_t t = f64_tensor(&m, v, R, C);
    na_clean_opts_t o;
    na_clean_opts_init(&o);
    o.samples = 1;
    o.method = NA_OM_MAD;
    o.k = 3.5;
    o.action = NA_OA_CLIP;
    na_clean_tensor_t ct;
    na_err_t err;
    assert_int_equal(na_clean_prepare(&t, &o, &ct, &err), NA_OK);
    assert_int_equal(na_clean_fit(&t, &o, &ct, &err), NA_OK);
    for (int c = 0; c < C; c++) {
        /* median of {k*(c+1) - c, k = 0..8} is 4*(c+1) - c; MAD (c+1)*2 */
        assert_true(ct.feat[c].center == 4.0 * (c + 1) - c);
        assert_true(ct.feat[c].scale == 2.0 * (c + 1));
    }
    na_clean_tensor_free(&ct);
}

static na_status_t collect(void *ud, const void *buf, size_t len, na_err_t *err)
{
    mem_t *m = ud;
    memcpy((uint8_t *)m->p + m->n, buf, len);
    m->n += len;
    return NA_OK;
}

/* An all-NaN feature passes through and causes no drops; the other is
 * cleaned; the predicted statistics are those of what was written. */
static void test_passthrough_feature(void **state)
{
    double v[] = {1, NAN, 2, NAN, INFINITY, NAN, 4, NAN, 5, NAN};
    mem_t m;
    na_tensor_t t = f64_tensor(&m, v, 5, 2);
    na_clean_opts_t o;
    na_clean_opts_init(&o);
    o.samples = 1;
    o.nonfinite = NA_NF_DROP;
    o.normalize = NA_NORM_MINMAX;
    na_clean_tensor_t ct;
    na_err_t err;
    assert_int_equal(na_clean_prepare(&t, &o, &ct, &err), NA_OK);
    assert_int_equal(na_clean_fit(&t, &o, &ct, &err), NA_OK);
    assert_int_equal(ct.passthrough, 1);
    assert_int_equal(ct.dropped_nf, 1);
    assert_int_equal(ct.n_drop_idx, 1);
    assert_int_equal(ct.drop_idx[0], 2);
    assert_int_equal(ct.out_shape[0], 4);
    double out[8];
    mem_t sink = {(const uint8_t *)out, 0};
    assert_int_equal(na_clean_emit(&t, &o, &ct, collect, &sink, &err), NA_OK);
    assert_int_equal(sink.n, 64);
    assert_true(out[0] == 0.0 && out[2] == 0.25 && out[4] == 0.75 && out[6] == 1.0);
    assert_true(isnan(out[1]) && isnan(out[7]));
    assert_int_equal(ct.after.finite, 4);
    assert_int_equal(ct.after.nan, 4);
    assert_true(ct.after.min == 0.0 && ct.after.max == 1.0);
    na_clean_tensor_free(&ct);
}

/* Rows a --together partner drops (NA_CLEAN_ROW_JOINT) are gone before
 * step 1: no statistic but `before` sees them, a NaN in one is neither
 * replaced nor counted, and they are counted as joint drops. Reference:
 * the kept values [1, 2, 3, 6] have mean 3 and min/max 1/6. */
static void test_joint_rows(void **state)
{
    double v[] = {1, 2, 100, NAN, 3, 6};
    mem_t m;
    na_tensor_t t = f64_tensor(&m, v, 6, 1);
    na_clean_opts_t o;
    na_clean_opts_init(&o);
    o.samples = 1;
    o.nonfinite = NA_NF_MEAN;
    o.normalize = NA_NORM_MINMAX;
    na_clean_tensor_t ct;
    na_err_t err;
    assert_int_equal(na_clean_prepare(&t, &o, &ct, &err), NA_OK);
    na_clean_row_set(&ct, 2, NA_CLEAN_ROW_JOINT);
    na_clean_row_set(&ct, 3, NA_CLEAN_ROW_JOINT);
    assert_int_equal(na_clean_fit(&t, &o, &ct, &err), NA_OK);
    assert_int_equal(ct.dropped_joint, 2);
    assert_int_equal(ct.dropped_nf + ct.dropped_out, 0);
    assert_int_equal(ct.passthrough, 0);
    assert_int_equal(ct.out_shape[0], 4);
    assert_int_equal(ct.n_drop_idx, 2);
    assert_int_equal(ct.drop_idx[0], 2);
    assert_int_equal(ct.drop_idx[1], 3);
    assert_true(ct.feat[0].nf_fill == 3.0);
    assert_true(ct.feat[0].n_min == 1.0 && ct.feat[0].n_max == 6.0);
    /* before: the whole input, partners' rows included */
    assert_int_equal(ct.before.finite, 5);
    assert_int_equal(ct.before.nan, 1);
    assert_true(ct.before.max == 100.0);
    double out[4];
    mem_t sink = {(const uint8_t *)out, 0};
    assert_int_equal(na_clean_emit(&t, &o, &ct, collect, &sink, &err), NA_OK);
    assert_int_equal(sink.n, 32);
    assert_true(out[0] == 0.0 && out[1] == 0.2 && out[2] == 0.4 && out[3] == 1.0);
    assert_int_equal(ct.replaced_nf, 0);
    assert_int_equal(ct.after.finite, 4);
    na_clean_tensor_free(&ct);
}

/* Every row's state survives its neighbours' writes (4 rows a byte). */
static void test_row_states(void **state)
{
    (void)state;
    uint8_t bytes[4] = {0};
    na_clean_tensor_t ct;
    memset(&ct, 0, sizeof ct);
    ct.row_state = bytes;
    ct.rows = 13;
    for (uint64_t r = 0; r < 13; r++)
        na_clean_row_set(&ct, r, (unsigned)(r * 7 % 4));
    for (uint64_t r = 0; r < 13; r++)
        assert_int_equal(na_clean_row(&ct, r), r * 7 % 4);
    na_clean_row_set(&ct, 5, 0);
    assert_int_equal(na_clean_row(&ct, 4), 0);
    assert_int_equal(na_clean_row(&ct, 5), 0);
    assert_int_equal(na_clean_row(&ct, 6), 2);
    assert_int_equal(bytes[3], 0x00); /* rows 12..15: 12*7%4 = 0 */
}

#define ROWS 40003 /* two full blocks and a short one */

typedef struct run {
    uint64_t dropped_nf, dropped_out, dropped_joint, out_rows, n_idx, idx[4];
    na_stats_t after;
    double *out;
} run_t;

/* Clean v (ROWS F64 samples) with nonfinite drop and --zscore 3 drop,
 * rows 16383 and 16384 dropped by a partner, using `threads` threads. */
static void run_clean(const double *v, int threads, run_t *R)
{
    mem_t m;
    na_tensor_t t = f64_tensor(&m, v, ROWS, 1);
    na_clean_opts_t o;
    na_clean_opts_init(&o);
    o.samples = 1;
    o.nonfinite = NA_NF_DROP;
    o.method = NA_OM_ZSCORE;
    o.k = 3;
    o.action = NA_OA_DROP;
    o.max_locations = 4;
    omp_set_num_threads(threads);
    na_clean_tensor_t ct;
    na_err_t err;
    assert_int_equal(na_clean_prepare(&t, &o, &ct, &err), NA_OK);
    na_clean_row_set(&ct, 16383, NA_CLEAN_ROW_JOINT);
    na_clean_row_set(&ct, 16384, NA_CLEAN_ROW_JOINT);
    assert_int_equal(na_clean_fit(&t, &o, &ct, &err), NA_OK);
    R->out = malloc(ROWS * 8);
    assert_non_null(R->out);
    mem_t sink = {(const uint8_t *)R->out, 0};
    assert_int_equal(na_clean_emit(&t, &o, &ct, collect, &sink, &err), NA_OK);
    assert_int_equal(sink.n, ct.out_rows * 8);
    R->dropped_nf = ct.dropped_nf;
    R->dropped_out = ct.dropped_out;
    R->dropped_joint = ct.dropped_joint;
    R->out_rows = ct.out_rows;
    R->n_idx = ct.n_drop_idx;
    for (size_t i = 0; i < ct.n_drop_idx; i++)
        R->idx[i] = ct.drop_idx[i];
    R->after = ct.after;
    na_clean_tensor_free(&ct);
}

/* Values in [-1, 1) (a deterministic sequence), NaN at rows 5 and 32770,
 * +Inf at 16385 (just after the partners' rows), outliers 1e6 at 16382
 * and 40002 (the last row). Uniform values never pass 3 std (1.73 std at
 * most), so exactly the planted rows go. */
static void test_width1_drops(void **state)
{
    (void)state;
    double *v = malloc(ROWS * 8);
    assert_non_null(v);
    uint64_t s = 12345;
    for (uint64_t i = 0; i < ROWS; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;
    }
    v[5] = v[32770] = NAN;
    v[16385] = INFINITY;
    v[16382] = v[40002] = 1e6;
    run_t a, b;
    run_clean(v, 1, &a);
    run_clean(v, 4, &b);
    assert_int_equal(a.dropped_nf, 3);
    assert_int_equal(a.dropped_out, 2);
    assert_int_equal(a.dropped_joint, 2);
    assert_int_equal(a.out_rows, ROWS - 7);
    assert_int_equal(a.n_idx, 4);
    assert_int_equal(a.idx[0], 5);
    assert_int_equal(a.idx[1], 16382);
    assert_int_equal(a.idx[2], 16383);
    assert_int_equal(a.idx[3], 16384);
    /* the rows written are the input's kept rows, unchanged (F64, no
     * normalization), and the predicted statistics are theirs */
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    uint64_t q = 0;
    for (uint64_t i = 0; i < ROWS; i++) {
        if (i == 5 || i == 32770 || i == 16385 || i == 16382 || i == 40002 || i == 16383 ||
            i == 16384)
            continue;
        assert_true(a.out[q] == v[i]);
        q++;
        sum += v[i];
        mn = v[i] < mn ? v[i] : mn;
        mx = v[i] > mx ? v[i] : mx;
    }
    assert_int_equal(q, a.out_rows);
    assert_int_equal(a.after.finite, q);
    assert_true(a.after.min == mn && a.after.max == mx);
    assert_true(fabs(a.after.mean - sum / (double)q) <= 1e-15);
    /* 4 threads: the same bits */
    assert_int_equal(b.out_rows, a.out_rows);
    assert_memory_equal(b.out, a.out, a.out_rows * 8);
    assert_memory_equal(&b.after, &a.after, sizeof a.after);
    assert_memory_equal(b.idx, a.idx, sizeof a.idx);
    free(a.out);
    free(b.out);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_f16),
        cmocka_unit_test(test_encode_bf16),
        cmocka_unit_test(test_encode_int_f32),
        cmocka_unit_test(test_median_exact),
        cmocka_unit_test(test_median_many_features),
        cmocka_unit_test(test_passthrough_feature),
        cmocka_unit_test(test_joint_rows),
        cmocka_unit_test(test_row_states),
        cmocka_unit_test(test_width1_drops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

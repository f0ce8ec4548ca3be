/*
 * test_clean_elem.c - unit tests of lib/clean_elem.h, the per-element
 * steps of `nanaudit clean` that the CPU and the GPU write pass share
 * (issue 6): what they add to test_clean.c's rounding tables is checked
 * here. The F32 <-> F64 conversions of NaNs from their bits (the GPU's
 * own conversions need not keep payloads) against C's casts; the value
 * na_ce_put reads back against na_decode1 of the bytes it wrote, for
 * every F16 and BF16 code, the midpoints between them (ties) and integer
 * saturation; step 1's replacements, step 2's actions and clip bounds
 * (z-score and the MAD == 0 MeanAD fallback), step 3's constant-feature
 * and overflow rules.
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

#include "clean_elem.h"

static uint32_t f32bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static double dbits(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static uint64_t bitsd(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* na_ce_f32 builds NaNs from their bits; it must give what (float)v gives
 * on this CPU for every kind of NaN, and (float)v for everything else. */
static void test_f32_nan_bits(void **state)
{
    (void)state;
    const uint64_t nans[] = {0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull,
                             0x7FF4000000000000ull, 0xFFFFFFFFFFFFFFFFull, 0x7FFFFFFFE0000000ull,
                             0x7FF800001FFFFFFFull, 0x7FF8000020000000ull, NA_CLEAN_MISS_BITS};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        volatile double v = dbits(nans[i]); /* no constant folding of the cast */
        assert_int_equal(f32bits(na_ce_f32(v)), f32bits((float)v));
    }
    srand(6);
    for (int i = 0; i < 100000; i++) {
        uint64_t u = ((uint64_t)rand() << 42) ^ ((uint64_t)rand() << 21) ^ (uint64_t)rand();
        u ^= (uint64_t)(rand() & 3) << 62;
        volatile double v = dbits(u | (i & 1 ? 0x7FF0000000000000ull : 0)); /* half NaN/Inf */
        assert_int_equal(f32bits(na_ce_f32(v)), f32bits((float)v));
    }
    for (uint32_t m = 1; m < 0x800000u; m += 997) { /* every kind of F32 NaN, both signs */
        volatile float f = na_bits_to_f32(0x7F800000u | m), g = na_bits_to_f32(0xFF800000u | m);
        assert_int_equal(bitsd(na_ce_widen(f)), bitsd((double)f));
        assert_int_equal(bitsd(na_ce_widen(g)), bitsd((double)g));
    }
    assert_true(na_ce_widen(1.5f) == 1.5 && na_ce_widen(-INFINITY) == -INFINITY);
    assert_int_equal(f32bits(na_ce_f32(INFINITY)), 0x7F800000u);
    assert_int_equal(f32bits(na_ce_f32(-INFINITY)), 0xFF800000u);
}

/* The value na_ce_put reports equals na_decode1 of what it wrote. */
static void put_check(na_dtype_t dt, double v)
{
    unsigned char b[8];
    double back, ref;
    int over = na_ce_put(dt, v, b, &back);
    (void)na_decode1(dt, NA_LITTLE, b, &ref);
    if (isnan(ref)) {
        assert_true(isnan(back));
        assert_int_equal(bitsd(back), bitsd(ref));
    } else {
        assert_true(back == ref && signbit(back) == signbit(ref));
    }
    assert_int_equal(over, na_clean_encode(dt, v, b));
}

static void test_put_back_16bit(void **state)
{
    (void)state;
    const na_dtype_t dts[] = {NA_DT_F16, NA_DT_BF16};
    for (int d = 0; d < 2; d++)
        for (uint32_t h = 0; h < 0x10000; h++) {
            unsigned char b[2] = {(unsigned char)h, (unsigned char)(h >> 8)};
            unsigned char c[2] = {(unsigned char)(h + 1), (unsigned char)((h + 1) >> 8)};
            double v, w;
            (void)na_decode1(dts[d], NA_LITTLE, b, &v);
            (void)na_decode1(dts[d], NA_LITTLE, c, &w);
            put_check(dts[d], v);
            if (isfinite(v) && isfinite(w) && h != 0x7FFF && h != 0xFFFF)
                put_check(dts[d], v / 2 + w / 2); /* the tie between neighbours */
        }
    /* ties go to the even code: 1 + 3 * 2^-11 -> 1 + 2^-9 (0x3C02) */
    unsigned char b[2];
    double back;
    assert_int_equal(na_ce_put(NA_DT_F16, 1.0 + 3.0 / 2048, b, &back), 0);
    assert_true(back == 1.0 + 2.0 / 1024);
    assert_int_equal(na_ce_put(NA_DT_F16, 65520.0, b, &back), 1); /* rounds to Inf */
    assert_true(back == INFINITY);
    assert_int_equal(na_ce_put(NA_DT_BF16, -3.4e38, b, &back), 1);
    assert_true(back == -INFINITY);
}

static void test_put_back_int(void **state)
{
    (void)state;
    const na_dtype_t dts[] = {NA_DT_U8, NA_DT_I8, NA_DT_U16, NA_DT_I16, NA_DT_U32,
                              NA_DT_I32, NA_DT_U64, NA_DT_I64, NA_DT_F32, NA_DT_F64};
    const double vs[] = {0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 127.5, 128.0, -129.0, 255.5, 65535.5,
                         -32768.5, 4294967295.5, 2147483647.5, 9.3e18, -9.3e18, 1.9e19,
                         9223372036854775807.0, 3.5e38, -1e300, NAN, INFINITY, -INFINITY};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
            put_check(dts[d], vs[i]);
    unsigned char b[8];
    double back;
    assert_int_equal(na_ce_put(NA_DT_I64, 1e19, b, &back), 1);
    assert_true(back == (double)INT64_MAX);
    /* saturation to each type's bounds, both ways (I8 200 was written -1:
     * the low byte of INT64_MAX) */
    const struct { na_dtype_t dt; double lo, hi; } sat[] = {
        {NA_DT_I8, -128, 127}, {NA_DT_U8, 0, 255}, {NA_DT_I16, -32768, 32767},
        {NA_DT_U16, 0, 65535}, {NA_DT_I32, -2147483648.0, 2147483647.0},
        {NA_DT_U32, 0, 4294967295.0}, {NA_DT_I64, -9223372036854775808.0, (double)INT64_MAX},
        {NA_DT_U64, 0, (double)UINT64_MAX}};
    for (size_t k = 0; k < sizeof sat / sizeof sat[0]; k++) {
        assert_int_equal(na_ce_put(sat[k].dt, 1e30, b, &back), 1);
        assert_true(back == sat[k].hi);
        assert_int_equal(na_ce_put(sat[k].dt, -1e30, b, &back), 1);
        assert_true(back == sat[k].lo);
        assert_int_equal(na_ce_put(sat[k].dt, sat[k].hi + 1.0, b, &back), 1);
        assert_true(back == sat[k].hi);
    }
    assert_int_equal(na_ce_put(NA_DT_U8, NAN, b, &back), 1);
    assert_true(back == 0.0);
    assert_int_equal(na_ce_put(NA_DT_U8, 2.5, b, &back), 0); /* half to even */
    assert_true(back == 2.0);
    assert_int_equal(na_ce_put(NA_DT_F32, 3.5e38, b, &back), 1);
    assert_true(back == INFINITY);
    /* BOOL (a --together follower's own 0.0/1.0): one byte, 0 or 1, as
     * na_decode1 reads it back */
    b[1] = 0xAA;
    assert_int_equal(na_ce_put(NA_DT_BOOL, 1.0, b, &back), 0);
    assert_int_equal(b[0], 1);
    assert_int_equal(b[1], 0xAA);
    assert_true(back == 1.0);
    assert_int_equal(na_ce_put(NA_DT_BOOL, 0.0, b, &back), 0);
    assert_int_equal(b[0], 0);
    assert_true(back == 0.0);
    put_check(NA_DT_BOOL, 1.0);
    put_check(NA_DT_BOOL, 0.0);
}

static na_clean_feat_t feat(double center, double scale)
{
    na_clean_feat_t F;
    memset(&F, 0, sizeof F);
    F.nf_fill = 7.0;
    F.center = center;
    F.scale = scale;
    F.meanad = NAN;
    F.lo_bound = center - 3 * scale;
    F.hi_bound = center + 3 * scale;
    F.fill2 = 0.25;
    return F;
}

static void test_step1(void **state)
{
    (void)state;
    na_clean_opts_t o;
    na_clean_opts_init(&o);
    na_clean_feat_t F = feat(0, 1);
    int rep = 0;
    assert_true(isnan(na_ce_step1(&o, &F, NAN, 0, &rep))); /* keep */
    assert_int_equal(rep, 0);
    o.nonfinite = NA_NF_MEAN;
    assert_true(na_ce_step1(&o, &F, -INFINITY, 0, &rep) == 7.0);
    assert_int_equal(rep, 1);
    rep = 0;
    assert_true(na_ce_step1(&o, &F, 3.0, 0, &rep) == 3.0);
    assert_int_equal(rep, 0);
    double miss = dbits(NA_CLEAN_MISS_BITS | 1);
    assert_int_equal(bitsd(na_ce_step1(&o, &F, miss, 1, &rep)), NA_CLEAN_MISS_BITS | 1);
    assert_int_equal(rep, 0);
    F.passthrough = 1;
    assert_true(isnan(na_ce_step1(&o, &F, NAN, 0, &rep)));
    assert_int_equal(rep, 0);
}

static void test_step2_actions(void **state)
{
    (void)state;
    na_clean_opts_t o;
    na_clean_opts_init(&o);
    o.method = NA_OM_ZSCORE;
    o.k = 3;
    na_clean_feat_t F = feat(10, 2); /* bounds 4 and 16 */
    double out = -1;
    o.action = NA_OA_CLIP;
    assert_int_equal(na_ce_step2(&o, &F, 16.5, &out), 1);
    assert_true(out == 16.0);
    assert_int_equal(na_ce_step2(&o, &F, 3.0, &out), 1);
    assert_true(out == 4.0);
    out = -1;
    assert_int_equal(na_ce_step2(&o, &F, 16.0, &out), 0); /* |x - mean| == K std: strict */
    assert_int_equal(na_ce_step2(&o, &F, INFINITY, &out), 0);
    assert_int_equal(na_ce_step2(&o, &F, NAN, &out), 0);
    assert_true(out == -1);
    o.action = NA_OA_NAN;
    assert_int_equal(na_ce_step2(&o, &F, 100.0, &out), 1);
    assert_int_equal(bitsd(out), 0x7FF8000000000000ull);
    o.action = NA_OA_MEAN;
    assert_int_equal(na_ce_step2(&o, &F, 100.0, &out), 1);
    assert_true(out == 0.25);
    o.action = NA_OA_DROP;
    assert_int_equal(na_ce_step2(&o, &F, 100.0, &out), 1);
    assert_true(out == 100.0);
    F.passthrough = 1;
    assert_int_equal(na_ce_step2(&o, &F, 100.0, &out), 0);
    F = feat(10, 0); /* std 0: nothing is an outlier */
    assert_int_equal(na_ce_step2(&o, &F, 1e300, &out), 0);
    /* --mad with MAD == 0: |x - median| / (1.253314 MeanAD) > K */
    o.method = NA_OM_MAD;
    o.action = NA_OA_CLIP;
    F = feat(1.0, 0.0);
    F.meanad = 1.0;
    F.lo_bound = 1.0 - 3 * NA_MEANAD_CONST;
    F.hi_bound = 1.0 + 3 * NA_MEANAD_CONST;
    assert_int_equal(na_ce_step2(&o, &F, 1.0 + 3.759, &out), 0); /* 3 * 1.253314 = 3.759942 */
    assert_int_equal(na_ce_step2(&o, &F, 1.0 + 3.7600, &out), 1);
    assert_true(out == F.hi_bound);
    F.meanad = 0.0; /* both 0: nothing */
    assert_int_equal(na_ce_step2(&o, &F, 1e9, &out), 0);
}

static void test_step3(void **state)
{
    (void)state;
    na_clean_opts_t o;
    na_clean_opts_init(&o);
    na_clean_feat_t F = feat(0, 1);
    o.normalize = NA_NORM_MINMAX;
    o.lo = -1;
    o.hi = 1;
    F.n_min = F.n_max = 5.0; /* constant: LO */
    assert_true(na_ce_step3(&o, &F, 5.0) == -1.0);
    F.n_min = 2.0;
    F.n_max = 6.0;
    assert_true(na_ce_step3(&o, &F, 4.0) == 0.0);
    assert_true(isinf(na_ce_step3(&o, &F, INFINITY))); /* non-finite: unchanged */
    F.n_min = -DBL_MAX;
    F.n_max = DBL_MAX; /* max - min overflows: halves */
    o.lo = 0;
    o.hi = 1;
    assert_true(na_ce_step3(&o, &F, 0.0) == 0.5);
    assert_true(na_ce_step3(&o, &F, DBL_MAX) == 1.0);
    o.normalize = NA_NORM_ZSCORE;
    F.n_mean = 3.0;
    F.n_std = 0.0;
    assert_true(na_ce_step3(&o, &F, 9.0) == 0.0);
    F.n_std = 2.0;
    assert_true(na_ce_step3(&o, &F, 9.0) == 3.0);
    assert_int_equal(na_ce_unrepresentable(1, NAN), 1);
    assert_int_equal(na_ce_unrepresentable(1, dbits(NA_CLEAN_MISS_BITS)), 0);
    assert_int_equal(na_ce_unrepresentable(0, NAN), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32_nan_bits),
        cmocka_unit_test(test_put_back_16bit),
        cmocka_unit_test(test_put_back_int),
        cmocka_unit_test(test_step1),
        cmocka_unit_test(test_step2_actions),
        cmocka_unit_test(test_step3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_stats.c - na_stats_init / na_stats_merge / na_stats_std.
 *
 * The merge (Chan, Golub & LeVeque 1979) must give the one-shot two-pass
 * results numpy gives, whatever the split; empty partials must be
 * neutral; std is exactly 0 for constant data and NaN with no finite value.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "nanaudit.h"

/* |a - b| <= rel * (|b| + scale), the DESIGN.md tolerance shape. */
#define assert_close(a, b, rel, scale)                                          \
    do {                                                                        \
        double a_ = (a), b_ = (b);                                              \
        if (!(fabs(a_ - b_) <= (rel) * (fabs(b_) + (scale))))                   \
            fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);                 \
    } while (0)

/* np.array([1.5, -2.25, 3.0, 1e3, -7.5, 0.125, 42.0, -0.5, 8.0, 2.0]):
 * d.mean() = 104.6375, d.std() = 298.7331190314358 (numpy 2.x, float64). */
static const double DATA[10] = {1.5, -2.25, 3.0, 1e3, -7.5, 0.125, 42.0, -0.5, 8.0, 2.0};
#define NP_MEAN 104.6375
#define NP_STD 298.7331190314358

/* Partial of d[lo, hi) computed two-pass, as the scan kernels do. */
static na_stats_t partial(const double *d, size_t lo, size_t hi)
{
    na_stats_t s;
    na_stats_init(&s);
    if (hi == lo)
        return s;
    double sum = 0, m2 = 0, mn = INFINITY, mx = -INFINITY;
    for (size_t i = lo; i < hi; i++) {
        sum += d[i];
        mn = d[i] < mn ? d[i] : mn;
        mx = d[i] > mx ? d[i] : mx;
    }
    double mean = sum / (double)(hi - lo);
    for (size_t i = lo; i < hi; i++)
        m2 += (d[i] - mean) * (d[i] - mean);
    s.elements = s.finite = hi - lo;
    s.min = mn;
    s.max = mx;
    s.abs_max = fabs(mn) > fabs(mx) ? fabs(mn) : fabs(mx);
    s.mean = mean;
    s.m2 = m2;
    return s;
}

static void test_init(void **state)
{
    (void)state;
    na_stats_t s;
    memset(&s, 0x55, sizeof s);
    na_stats_init(&s);
    assert_int_equal(s.elements, 0);
    assert_int_equal(s.nan + s.pos_inf + s.neg_inf + s.zeros + s.subnormal + s.finite, 0);
    assert_true(isnan(s.min) && isnan(s.max) && isnan(s.abs_max) && isnan(s.mean));
    assert_true(s.m2 == 0.0);
    assert_true(isnan(na_stats_std(&s)));
}

/* One element at a time, and several uneven splits: all equal numpy. */
static void test_merge_matches_numpy(void **state)
{
    (void)state;
    static const size_t cuts[][4] = {{0, 1, 2, 10}, {0, 3, 7, 10}, {0, 9, 9, 10},
                                     {0, 0, 5, 10}, {0, 10, 10, 10}};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        na_stats_t a;
        na_stats_init(&a);
        for (int k = 0; k < 3; k++) {
            na_stats_t b = partial(DATA, cuts[c][k], cuts[c][k + 1]);
            na_stats_merge(&a, &b);
        }
        assert_int_equal(a.finite, 10);
        assert_int_equal(a.elements, 10);
        assert_true(a.min == -7.5 && a.max == 1000.0 && a.abs_max == 1000.0);
        assert_close(a.mean, NP_MEAN, 1e-15, NP_STD);
        assert_close(na_stats_std(&a), NP_STD, 1e-14, 0);
    }
    na_stats_t one;
    na_stats_init(&one);
    for (size_t i = 0; i < 10; i++) {
        na_stats_t b = partial(DATA, i, i + 1);
        na_stats_merge(&one, &b);
    }
    assert_close(one.mean, NP_MEAN, 1e-15, NP_STD);
    assert_close(na_stats_std(&one), NP_STD, 1e-14, 0);
}

/* Counts add; a partial without finite values changes no value statistic. */
static void test_merge_counts_and_empty(void **state)
{
    (void)state;
    na_stats_t a = partial(DATA, 0, 4), b, saved;
    na_stats_init(&b);
    b.elements = 7;
    b.nan = 3;
    b.pos_inf = 2;
    b.neg_inf = 1;
    b.zeros = 0;
    b.subnormal = 0;
    saved = a;
    na_stats_merge(&a, &b);
    assert_int_equal(a.elements, 11);
    assert_int_equal(a.nan, 3);
    assert_int_equal(a.pos_inf, 2);
    assert_int_equal(a.neg_inf, 1);
    assert_int_equal(a.finite, 4);
    assert_memory_equal(&a.min, &saved.min, 5 * sizeof(double));

    /* empty <- full: takes the values over exactly */
    na_stats_t e;
    na_stats_init(&e);
    na_stats_merge(&e, &saved);
    assert_memory_equal(&e, &saved, sizeof e);
}

/* max == min gives exactly 0 even when m2 holds rounding residue. */
static void test_std_constant_and_nan(void **state)
{
    (void)state;
    na_stats_t s = partial(DATA, 0, 1);
    s.m2 = 1e-30; /* what rounding can leave */
    assert_true(na_stats_std(&s) == 0.0);
    na_stats_t z;
    na_stats_init(&z);
    z.elements = z.nan = 3;
    assert_true(isnan(na_stats_std(&z)));
    /* sums that overflowed to +Inf and -Inf leave m2 NaN: the std is not
     * known (NaN), never 0, when max > min (it showed "std 0" for values
     * near +-1.7e308) */
    na_stats_t h = partial(DATA, 0, 4);
    h.mean = NAN;
    h.m2 = NAN;
    assert_true(isnan(na_stats_std(&h)));
    h.m2 = INFINITY; /* overflowed squares: +Inf, as numpy's std */
    assert_true(isinf(na_stats_std(&h)));
    /* two values: population std (ddof = 0) of {1, 3} is 1 */
    double two[2] = {1.0, 3.0};
    na_stats_t t = partial(two, 0, 2);
    assert_true(na_stats_std(&t) == 1.0);
}

/* Large offset: partial means near 1e8 differ only in low digits; the
 * pairwise update keeps std of {1e8 + k} exact where sum-of-squares loses
 * everything. Reference: numpy std of 1e8 + arange(1000) = 288.6749902572095
 * (= sqrt((1000^2 - 1) / 12), exact arithmetic). */
/* Values that differ by 1e-163: their squared deviations underflow, m2
 * is 0 or subnormal, and the std is unknown (NaN), not 0 (which would
 * call them constant); 1e-150 still has a normal variance, and one value
 * of 1e-152 among 1000 zeros a variance of 1e-307 (numpy: std 3.16e-154).
 * The limit is a variance of 2^-1034: m2 known to 2^-40 above it. */
static void test_std_underflow(void **state)
{
    (void)state;
    static const double tiny[4] = {1e-163, -2e-163, 3e-163, 0.5e-163};
    na_stats_t s = partial(tiny, 0, 4);
    assert_true(s.min < s.max);
    assert_int_equal(na_stats_std_underflow(&s), 1);
    assert_true(isnan(na_stats_std(&s)));
    static const double small[4] = {1e-150, -2e-150, 3e-150, 0.5e-150};
    s = partial(small, 0, 4);
    assert_int_equal(na_stats_std_underflow(&s), 0);
    assert_close(na_stats_std(&s), 1.780975856096876e-150, 1e-15, 0); /* numpy */
    static double one[1000];
    one[999] = 1e-152;
    s = partial(one, 0, 1000);
    assert_int_equal(na_stats_std_underflow(&s), 0);
    assert_close(na_stats_std(&s), 3.1606961258558215e-154, 1e-12, 0); /* numpy */
    static const double same[3] = {4e-320, 4e-320, 4e-320}; /* constant: 0 */
    s = partial(same, 0, 3);
    assert_int_equal(na_stats_std_underflow(&s), 0);
    assert_true(na_stats_std(&s) == 0.0);
}

static void test_merge_cancellation(void **state)
{
    (void)state;
    double d[1000];
    for (int i = 0; i < 1000; i++)
        d[i] = 1e8 + i;
    na_stats_t a;
    na_stats_init(&a);
    for (size_t lo = 0; lo < 1000; lo += 37) {
        size_t hi = lo + 37 < 1000 ? lo + 37 : 1000;
        na_stats_t b = partial(d, lo, hi);
        na_stats_merge(&a, &b);
    }
    assert_close(a.mean, 1e8 + 499.5, 1e-15, 0);
    assert_close(na_stats_std(&a), 288.6749902572095, 1e-12, 0);
}

/* Millions of merges of small shares into a large m2: 1100 x (0..63 less
 * 3 and 5) merged, then 2^26 blocks of 2^14 zeros (a 2^40-element sparse
 * HDF5 dataset's fill runs, tests/cli/hdf5_sparse_many.sh). Each block
 * adds ~6.6e-8 to an m2 of ~9.4e7, whose ulp is 1.5e-8: rounded into m2
 * alone the std drifted by 5e-10 relative; carried in m2_lo it stays
 * within DESIGN.md's 1e-12 of the exact value (Python's fractions:
 * mean 2.0088919012956125e-06, std 0.009238392091928026). */
static void test_merge_many_small_shares(void **state)
{
    (void)state;
    double d[62];
    for (int i = 0, k = 0; i < 64; i++)
        if (i != 3 && i != 5)
            d[k++] = i;
    na_stats_t a, one, zeros;
    na_stats_init(&a);
    one = partial(d, 0, 62);
    for (int i = 0; i < 1100; i++)
        na_stats_merge(&a, &one);
    na_stats_init(&zeros);
    zeros.elements = zeros.finite = zeros.zeros = 1u << 14;
    zeros.min = zeros.max = zeros.mean = zeros.abs_max = 0.0;
    zeros.m2 = 0.0;
    /* 2^40 elements in all: 1100 * 64 of them in the chunks */
    uint64_t left = ((uint64_t)1 << 40) - 1100 * 62 - 1100 * 2;
    for (; left >= (1u << 14); left -= 1u << 14)
        na_stats_merge(&a, &zeros);
    zeros.elements = zeros.finite = zeros.zeros = left;
    na_stats_merge(&a, &zeros);
    assert_int_equal(a.finite, ((uint64_t)1 << 40) - 2200);
    double mean = 2.0088919012956125e-06, sd = 0.009238392091928026;
    assert_close(a.mean, mean, 1e-12, sd);
    assert_close(na_stats_std(&a), sd, 1e-12, mean);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_merge_matches_numpy),
        cmocka_unit_test(test_merge_counts_and_empty),
        cmocka_unit_test(test_std_constant_and_nan),
        cmocka_unit_test(test_merge_cancellation),
        cmocka_unit_test(test_merge_many_small_shares),
        cmocka_unit_test(test_std_underflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

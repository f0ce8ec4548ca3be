/*
 * stats.c - mergeable partial statistics over the finite values of a
 * tensor (count, NaN/Inf/zero/subnormal counts, min, max, max |x|, mean,
 * sum of squared deviations).
 *
 * The scan computes one partial per fixed-size block (two-pass within the
 * block, see scan.c) and merges the partials in block-index order with the
 * pairwise formula of Chan, Golub & LeVeque, "Updating formulae and a
 * pairwise algorithm for computing sample variances" (Stanford CS tech.
 * report STAN-CS-79-773, 1979). Merging in a fixed order makes the result
 * independent of the number of threads; the pairwise update avoids the
 * cancellation of the textbook sum-of-squares formula (DESIGN.md:
 * F64 1e8 + N(0,1) must give std 1 to 1e-9 relative). Each mean carries
 * its rounding error (na_stats_t.mean_lo, TwoSum), so that the difference
 * of two means far from 0 keeps its digits: 1e9 + N(0, 1e-3) gives the
 * noise's std to ~1e-14 instead of 8e-7 (tests/unit/test_scan.c).
 */
#include "nanaudit.h"
#include "stats_block.h" /* na_stats_block_sums, na_two_sum */

#include <math.h> /* NAN, sqrt, fabs, isfinite */

void na_stats_init(na_stats_t *s)
{
    s->elements = s->nan = s->pos_inf = s->neg_inf = 0;
    s->zeros = s->subnormal = s->finite = 0;
    /* No finite value yet: the value statistics are undefined (NaN), which
     * the report writers print as null. */
    s->min = s->max = s->abs_max = s->mean = NAN;
    s->m2 = 0.0;
    s->missing = 0;
    s->mean_lo = 0.0;
    s->m2_lo = 0.0;
}

void na_stats_block(na_stats_t *s, double mean, double m2, double sd)
{
    na_stats_block_sums(s, mean, m2, sd); /* stats_block.h, the GPU's too */
}

/* Counts always add; value statistics come from whichever side has finite
 * values, or from Chan's update when both do. */
void na_stats_merge(na_stats_t *a, const na_stats_t *b)
{
    a->elements += b->elements;
    a->nan += b->nan;
    a->pos_inf += b->pos_inf;
    a->neg_inf += b->neg_inf;
    a->zeros += b->zeros;
    a->subnormal += b->subnormal;
    a->missing += b->missing;
    if (b->finite == 0)
        return;
    if (a->finite == 0) {
        a->finite = b->finite;
        a->min = b->min;
        a->max = b->max;
        a->abs_max = b->abs_max;
        a->mean = b->mean;
        a->mean_lo = b->mean_lo;
        a->m2 = b->m2;
        a->m2_lo = b->m2_lo;
        return;
    }
    double na = (double)a->finite, nb = (double)b->finite;
    double n = na + nb;
    /* The difference of the means with their low parts: b->mean - a->mean
     * is exact when the two are within a factor 2 (Sterbenz), so d keeps
     * the digits that plain doubles lose far from 0. */
    double d = b->mean - a->mean, dc = d + (b->mean_lo - a->mean_lo);
    if (isfinite(dc))
        d = dc;
    /* Chan et al. (1979), eq. 2.1b, written with n_b/n so that equal means
     * give exactly mean_a and the m2 correction vanishes. */
    double t = a->mean_lo + d * (nb / n);
    if (isfinite(t) && isfinite(a->mean))
        na_two_sum(a->mean, t, &a->mean, &a->mean_lo);
    else {
        a->mean = a->mean + d * (nb / n);
        a->mean_lo = 0.0;
    }
    /* m2 + m2_lo gains b's m2 and the correction, rounded once per merge
     * into m2_lo instead of into m2 (TwoSum, as the mean) */
    double share = b->m2 + d * d * (na * nb / n), t2 = (a->m2_lo + b->m2_lo) + share;
    if (isfinite(t2) && isfinite(a->m2)) {
        na_two_sum(a->m2, t2, &a->m2, &a->m2_lo);
    } else {
        a->m2 = a->m2 + share;
        a->m2_lo = 0.0;
    }
    a->finite += b->finite;
    if (b->min < a->min)
        a->min = b->min;
    if (b->max > a->max)
        a->max = b->max;
    if (b->abs_max > a->abs_max)
        a->abs_max = b->abs_max;
}

int na_stats_std_underflow(const na_stats_t *s)
{
    /* Each squared deviation below DBL_MIN is rounded to a multiple of
     * 2^-1074, an error of at most 2^-1075, and so is each partial sum
     * there: m2 is off by 2n * 2^-1075 at most, 2^-40 (1e-12, DESIGN.md's
     * tolerance) of m2 = n * v for v >= 2^-1034. Below, its digits are
     * not known (all of them when the squares became 0). */
    return s->finite > 0 && s->max != s->min && isfinite(s->m2) &&
           s->m2 / (double)s->finite < 0x1p-1034;
}

double na_stats_std(const na_stats_t *s)
{
    if (s->finite == 0)
        return NAN;
    /* Constant data: decided on the values (DESIGN.md), since rounding in
     * m2 can leave a tiny positive residue such as 1e-17. */
    if (s->max == s->min)
        return 0.0;
    if (na_stats_std_underflow(s))
        return NAN;
    /* m2 is NaN when partial sums overflowed to +Inf and -Inf (values
     * near +-1.8e308): the std is then unknown, not 0 */
    double v = (s->m2 + s->m2_lo) / (double)s->finite;
    return v > 0.0 ? sqrt(v) : v != v ? NAN : 0.0;
}

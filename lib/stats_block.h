/*
 * stats_block.h - how a block's mean and m2 are taken from its two-pass
 * sums, shared by the CPU (lib/stats.c, na_stats_block) and the GPU
 * kernels (gpu/gstats.cuh, na_g_block_stats), so that both carry the
 * mean's rounding error (na_stats_t.mean_lo) the same way. NA_HD
 * (decode.h) is `static inline` in C and `__host__ __device__` under nvcc.
 */
#ifndef NA_STATS_BLOCK_H
#define NA_STATS_BLOCK_H

#include "decode.h" /* NA_HD */
#include "nanaudit.h"

#include <math.h> /* isfinite */

/* hi + lo == a + b exactly, hi the double nearest (Knuth's TwoSum, TAOCP
 * vol. 2, 4.2.2, theorem B; no assumption on |a| vs |b|). */
NA_HD void na_two_sum(double a, double b, double *hi, double *lo)
{
    double s = a + b, bb = s - a;
    *hi = s;
    *lo = (a - (s - bb)) + (b - bb);
}

/* The "corrected two-pass algorithm" of Chan, Golub & LeVeque,
 * "Algorithms for computing the sample variance: analysis and
 * recommendations" (The American Statistician 37(3), 1983): for a block
 * with s->finite > 0 values in [s->min, s->max], whose sum / finite is
 * mean, m2 = sum of (x - mean)^2 and sd = sum of (x - mean): sets
 * s->mean, s->mean_lo (mean + mean_lo is the mean to about an ulp of
 * mean_lo) and s->m2 = m2 - sd^2 / n. Only for a block whose values lie
 * within |mean|/256 of each other (na_stats_narrow): each x - mean is
 * then exact (Sterbenz) and sd's rounding is far below an ulp of the
 * mean, so the correction only adds digits. For wider data the mean's
 * rounding (an ulp of |mean|) is negligible beside the spread, while sd's
 * rounding (an ulp of the spread) could move a correctly rounded mean:
 * the plain figures stand, bit for bit those of the two-pass sums. So do
 * sums that overflowed (values near +-DBL_MAX). */
NA_HD void na_stats_block_sums(na_stats_t *s, double mean, double m2, double sd)
{
    s->mean = mean;
    s->mean_lo = 0.0;
    s->m2 = m2;
    s->m2_lo = 0.0;
    double am = mean < 0 ? -mean : mean;
    if (!(s->max - s->min <= am * 0x1p-8)) /* na_stats_narrow, callable on both sides */
        return;
    double c = sd / (double)s->finite, m2c = m2 - sd * c;
    if (!isfinite(c) || !isfinite(m2c))
        return;
    na_two_sum(mean, c, &s->mean, &s->mean_lo);
    s->m2 = m2c > 0.0 ? m2c : 0.0;
}

#endif /* NA_STATS_BLOCK_H */

/*
 * gstats.cuh - the per-block statistics of the GPU kernels (CUDA C++17),
 * shared by the scan's pass 1 (kernels.cu) and clean's write pass
 * (clean_kernels.cu): the partial sums a block reduces with
 * cub::BlockReduce (fixed combination order for a block size, so results
 * are identical from run to run), and the na_stats_t they make, as the
 * CPU's block statistics (lib/stats.c, na_stats_init for a block without
 * finite values). The host merges blocks in order with na_stats_merge.
 */
#ifndef NA_GSTATS_CUH
#define NA_GSTATS_CUH

#include "nanaudit.h"
#include "stats_block.h" /* na_stats_block_sums: the CPU's block mean and m2 */

/* Counts, min, max and sum of the finite values of a thread or block. */
struct P1 {
    unsigned nan, pinf, ninf, zero, sub, fin;
    double mn, mx, sum;
};

struct P1Sum {
    __device__ __forceinline__ P1 operator()(const P1 &a, const P1 &b) const
    {
        P1 r;
        r.nan = a.nan + b.nan;
        r.pinf = a.pinf + b.pinf;
        r.ninf = a.ninf + b.ninf;
        r.zero = a.zero + b.zero;
        r.sub = a.sub + b.sub;
        r.fin = a.fin + b.fin;
        r.mn = b.mn < a.mn ? b.mn : a.mn;
        r.mx = b.mx > a.mx ? b.mx : a.mx;
        r.sum = a.sum + b.sum;
        return r;
    }
};

/* The second pass's sums of a thread or block: squared deviations from
 * the block mean (m2) and deviations (sd) of the finite values. */
struct D2 {
    double m2, sd;
};
struct D2Sum {
    __device__ __forceinline__ D2 operator()(const D2 &a, const D2 &b) const
    {
        D2 r;
        r.m2 = a.m2 + b.m2;
        r.sd = a.sd + b.sd;
        return r;
    }
};
/* The statistics of a block of `elements` values from its reduction r,
 * its mean and its second pass's sums m2 and sd, taken as the CPU takes
 * them (na_stats_block_sums: the mean's rounding error in mean_lo for a
 * narrow block). Missing values are never counted on the GPU: tensors
 * with markers stay on the CPU. */
__device__ __forceinline__ na_stats_t na_g_block_stats(const P1 &r, unsigned long long elements,
                                                       double mean, D2 m)
{
    na_stats_t s;
    s.elements = elements;
    s.nan = r.nan;
    s.pos_inf = r.pinf;
    s.neg_inf = r.ninf;
    s.zeros = r.zero;
    s.subnormal = r.sub;
    s.finite = r.fin;
    s.missing = 0;
    s.mean_lo = 0.0;
    s.m2_lo = 0.0;
    if (r.fin) {
        s.min = r.mn;
        s.max = r.mx;
        s.abs_max = fabs(r.mn) > fabs(r.mx) ? fabs(r.mn) : fabs(r.mx);
        na_stats_block_sums(&s, mean, m.m2, m.sd);
    } else { /* as na_stats_init: no finite value, value statistics NaN */
        s.min = s.max = s.abs_max = s.mean = __longlong_as_double(0x7ff8000000000000ll);
        s.m2 = 0.0;
    }
    return s;
}

#endif /* NA_GSTATS_CUH */

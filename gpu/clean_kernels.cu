/*
 * clean_kernels.cu - the write pass of `nanaudit clean` on the GPU
 * (issue 6: "kernels for ... the clean transforms"): for each kept row of
 * a window, steps 1-3 on every value, the rounding to the output dtype at
 * the value's output position, the counts, and per-block statistics of
 * the values as they read back (ct->after). The host side is
 * cuda_clean.c; the CPU's pass is na_clean_emit (lib/clean.c).
 *
 * Why it is built this way:
 *  - Every per-element decision is lib/clean_elem.h, the code the CPU
 *    runs (na_ce_step1, na_ce_step2, na_ce_step3, na_ce_put), compiled
 *    here as __host__ __device__: the same operations in the same order,
 *    and with --fmad=false (CMakeLists.txt) the same roundings, so the
 *    output bytes are the CPU's. Decoding uses lib/decode.h as the CPU's
 *    decoders do, NaN payloads included (load_value).
 *  - One CUDA block per `brows` rows (about 16 Ki elements). A row's
 *    output position is the number of kept rows before it: the host gives
 *    each block its first (opos, from the 2-bit row states), and inside the
 *    block one thread per 32 rows makes a kept-row mask, whose population
 *    counts a cub::BlockScan turns into offsets; then the elements are
 *    walked in order (coalesced), each thread finding its row's offset in
 *    shared memory.
 *  - Statistics are two-pass within a block, as the CPU's block_stats
 *    (sum, then squared deviations from the block mean), reduced with
 *    cub::BlockReduce, whose order is fixed for a block size: identical
 *    from run to run. The CPU sums in 8 fixed lanes, so mean and m2 differ
 *    from its in the last bits (within the verification's tolerance);
 *    counts, min and max are equal. The second pass recomputes the values
 *    (decode and steps again) rather than keeping 16 Ki doubles per block.
 *  - With --outliers drop, step 2 is not applied here, as on the CPU's
 *    width-1 path: the fit has dropped every row that holds a flagged value
 *    (its test is the one here), so a kept row has none.
 */
#include "na_cuda.h"
#include "clean_elem.h"
#include "gstats.cuh" /* P1, P1Sum, na_g_block_stats: the scan's block statistics */

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

namespace {

constexpr int kT = 512;          /* threads per block */
constexpr int kMaxWords = kT;    /* 32-row words per block: brows <= 32 * kT */

/* Element i of the window as the CPU's decoders give it: little-endian
 * contiguous F32, and F16 and BF16 in any layout, are widened (clean.c's
 * decode_run: a float-to-double conversion, which keeps a NaN's sign and
 * payload) and F64 copied; everything else goes through na_decode1
 * (lib/dtype.c), whose NaN is always the canonical one. The NaN bits matter: a NaN that stays
 * through the steps is written as it came. */
__device__ __forceinline__ double load_value(const na_gdesc_t &d, const unsigned char *p,
                                             unsigned long long i)
{
    bool direct = d.stride == d.esize && d.offset == 0 && !d.big;
    const unsigned char *q = p + i * d.stride + d.offset;
    switch (d.kind) {
    case NA_GK_F64: {
        uint64_t u = direct ? reinterpret_cast<const uint64_t *>(p)[i] : na_load_uint(q, 8, d.big);
        double v;
        memcpy(&v, &u, 8);
        return direct || v == v ? v : na_ce_nan();
    }
    case NA_GK_F32: {
        uint32_t u = direct ? reinterpret_cast<const uint32_t *>(p)[i]
                            : (uint32_t)na_load_uint(q, 4, d.big);
        float f = na_bits_to_f32(u);
        return direct ? na_ce_widen(f) : f == f ? (double)f : na_ce_nan();
    }
    case NA_GK_F16:
    case NA_GK_BF16: {
        uint16_t h = direct ? reinterpret_cast<const uint16_t *>(p)[i]
                            : (uint16_t)na_load_uint(q, 2, d.big);
        float f = d.kind == NA_GK_F16 ? na_f16_to_f32(h) : na_bf16_to_f32(h);
        return na_ce_widen(f); /* any layout, as clean.c's decode_run */
    }
    case NA_GK_UINT: /* C's uint64 -> double: nearest even, as on the CPU */
        return (double)na_load_uint(q, d.esize, d.big);
    default: /* NA_GK_SINT */
        return (double)na_sign_extend(na_load_uint(q, d.esize, d.big), d.esize * 8);
    }
}

/* One value through steps 1-3 (na_clean_emit's order), rounded into out
 * when out != NULL; returns the value read back and adds to the counts c
 * when c != NULL (collisions stay 0: markers are cleaned on the CPU). */
__device__ __forceinline__ double clean_one(const na_gclean_t &a, double v, unsigned long long col,
                                            unsigned char *out, na_clean_counts_t *c)
{
    const na_clean_feat_t *F = &a.feat[a.one_feat ? 0 : col];
    const na_clean_opts_t *o = &a.o;
    int rep = 0;
    v = na_ce_step1(o, F, v, 0, &rep);
    double nv;
    int flag = o->action != NA_OA_DROP && na_ce_step2(o, F, v, &nv);
    if (flag)
        v = nv;
    double x3 = v;
    v = na_ce_step3(o, F, v);
    unsigned char tmp[8];
    double back;
    int over = na_ce_put((na_dtype_t)a.out_dtype, v, out ? out : tmp, &back) +
               na_ce_step3_over(a.int_out, x3, v);
    if (c) {
        c->replaced_nf += (uint64_t)rep;
        c->replaced_out += (uint64_t)(flag && o->action == NA_OA_MEAN);
        c->clipped += (uint64_t)(flag && o->action == NA_OA_CLIP);
        c->nanned += (uint64_t)(flag && o->action == NA_OA_NAN);
        c->flagged += (uint64_t)flag;
        c->overflow += (uint64_t)over;
        c->unrep += (uint64_t)na_ce_unrepresentable(a.int_out, v);
    }
    return back;
}

struct CntSum {
    __device__ __forceinline__ na_clean_counts_t operator()(const na_clean_counts_t &x,
                                                            const na_clean_counts_t &y) const
    {
        na_clean_counts_t r = x;
        na_clean_counts_add(&r, &y);
        return r;
    }
};

__global__ void __launch_bounds__(kT) clean_kernel(na_gclean_t a)
{
    using Scan = cub::BlockScan<unsigned, kT>;
    using RedA = cub::BlockReduce<P1, kT>;
    using RedC = cub::BlockReduce<na_clean_counts_t, kT>;
    using RedD = cub::BlockReduce<D2, kT>;
    __shared__ union {
        typename Scan::TempStorage scan;
        typename RedA::TempStorage ra;
        typename RedC::TempStorage rc;
        typename RedD::TempStorage rd;
    } tmp;
    __shared__ unsigned s_mask[kMaxWords], s_pre[kMaxWords];
    __shared__ double s_mean;
    __shared__ int s_fin;
    unsigned long long j = blockIdx.x, r0 = j * a.brows;
    unsigned long long nr = a.rows - r0 < a.brows ? a.rows - r0 : a.brows;
    unsigned nw = (unsigned)((nr + 31) / 32);

    /* kept-row masks of 32 rows (state 0; rows past the block are not
     * kept) and their exclusive prefix counts */
    unsigned mask = 0;
    if (threadIdx.x < nw) {
        const unsigned char *p = a.rs + (r0 + 32ull * threadIdx.x) / 4;
        for (int b = 0; b < 8; b++) {
            unsigned v = p[b];
            for (int k = 0; k < 4; k++)
                mask |= (unsigned)(((v >> (2 * k)) & 3u) == 0) << (4 * b + k);
        }
        unsigned long long left = nr - 32ull * threadIdx.x;
        if (left < 32)
            mask &= (1u << left) - 1u;
    }
    unsigned pre;
    Scan(tmp.scan).ExclusiveSum((unsigned)__popc(mask), pre);
    if (threadIdx.x < nw) {
        s_mask[threadIdx.x] = mask;
        s_pre[threadIdx.x] = pre;
    }
    __syncthreads(); /* masks visible; tmp free */

    const double inf = __longlong_as_double(0x7ff0000000000000ll);
    P1 acc = {0, 0, 0, 0, 0, 0, inf, -inf, 0.0}; /* zeros, subnormals: 0, as the CPU's */
    na_clean_counts_t cnt = {0, 0, 0, 0, 0, 0, 0, 0};
    unsigned long long w = a.width, ne = nr * w, base = r0 * w, opos = a.opos[j];
    for (unsigned long long e = threadIdx.x; e < ne; e += kT) {
        unsigned long long row = w == 1 ? e : e / w, col = e - row * w;
        unsigned m = s_mask[row / 32], bit = (unsigned)(row % 32);
        if (!((m >> bit) & 1u))
            continue;
        unsigned long long krow = opos + s_pre[row / 32] + (unsigned)__popc(m & ((1u << bit) - 1u));
        double x = load_value(a.d, a.in, base + e);
        double b = clean_one(a, x, col, a.out + (krow * w + col) * a.osize, &cnt);
        if (na_ce_finite(b)) {
            acc.fin++;
            acc.sum += b;
            acc.mn = b < acc.mn ? b : acc.mn;
            acc.mx = b > acc.mx ? b : acc.mx;
        } else {
            acc.nan += b != b;
            acc.pinf += b == inf;
            acc.ninf += b == -inf;
        }
    }
    P1 r = RedA(tmp.ra).Reduce(acc, P1Sum());
    if (threadIdx.x == 0) { /* the aggregates are thread 0's only */
        s_mean = r.fin ? r.sum / (double)r.fin : 0.0;
        s_fin = r.fin != 0;
    }
    __syncthreads(); /* s_mean visible; tmp free */
    na_clean_counts_t rc = RedC(tmp.rc).Reduce(cnt, CntSum());
    __syncthreads();
    double mean = s_mean;
    D2 m = {0.0, 0.0};
    for (unsigned long long e = threadIdx.x; s_fin && e < ne; e += kT) {
        unsigned long long row = w == 1 ? e : e / w, col = e - row * w;
        if (!((s_mask[row / 32] >> (row % 32)) & 1u))
            continue;
        double b = clean_one(a, load_value(a.d, a.in, base + e), col, NULL, NULL);
        double d = na_ce_finite(b) ? b - mean : 0.0;
        m.m2 += d * d;
        m.sd += d;
    }
    D2 ms = RedD(tmp.rd).Reduce(m, D2Sum());
    if (threadIdx.x != 0)
        return;
    unsigned kept = s_pre[nw - 1] + (unsigned)__popc(s_mask[nw - 1]);
    a.bst[j] = na_g_block_stats(r, (unsigned long long)kept * w, mean, ms);
    a.bcnt[j] = rc;
}

} // namespace

extern "C" int na_gpu_clean(const na_gclean_t *a, void *stream)
{
    if (a->rows == 0)
        return 0;
    if (a->brows == 0 || a->brows % 32 || a->brows > 32ull * kMaxWords)
        return cudaErrorInvalidValue;
    unsigned grid = (unsigned)((a->rows + a->brows - 1) / a->brows);
    clean_kernel<<<grid, kT, 0, static_cast<cudaStream_t>(stream)>>>(*a);
    return cudaGetLastError();
}

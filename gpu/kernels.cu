/*
 * kernels.cu - the CUDA kernels of the scan: pass 1 (per-block counts,
 * min, max, two-pass mean and sum of squared deviations) and pass 2
 * (per-block z-score outlier counts), for every dtype the CPU decodes.
 *
 * Why it is built this way:
 *  - One CUDA block per scan block of NA_BLOCK_ELEMS elements (the CPU's
 *    block, lib/scan_kernels.h), with the same two-pass statistics inside
 *    the block. The host merges the per-block partials in block order with
 *    na_stats_merge, exactly as lib/scan_pass.c does, so counts, min, max
 *    and locations equal the CPU's and mean/std differ only by the order
 *    of additions inside a block (DESIGN.md: |d| <= 1e-12 (|mean| + std)).
 *  - Block reductions use cub::BlockReduce (CUB ships with the toolkit),
 *    whose combination order is fixed for a fixed block size: results are
 *    identical from run to run.
 *  - Element decoding comes from lib/decode.h, the header the CPU kernels
 *    and na_decode1 use (F16/BF16 widening, integers, F80), and 1-byte
 *    types use the 256-entry table the host builds with na_decode1
 *    (na_k_setup): the two backends cannot drift.
 *  - Built with --fmad=false (CMakeLists.txt) so a*b+c is rounded like
 *    the CPU's separate multiply and add.
 *  - Templates are instantiated once per decoding kind (8 kinds x 2
 *    passes, plus register-resident versions for the 4 IEEE kinds), which
 *    keeps nvcc's time in CI short.
 */
#include "na_cuda.h"
#include "decode.h"
#include "gstats.cuh" /* P1, P1Sum, na_g_block_stats */

#include <cub/block/block_reduce.cuh>
#include <cuda_runtime.h>
#include <type_traits> /* std::conditional */

namespace {

constexpr int kThreads = 256;

enum { CL_NORMAL = 0, CL_ZERO, CL_SUBNORMAL, CL_NAN, CL_POS_INF, CL_NEG_INF };

/* Class of an IEEE value from its magnitude bits a, its sign and the
 * largest subnormal magnitude (the rules of scan.c's class_of_bits). */
__device__ __forceinline__ int ieee_class(uint64_t a, uint64_t inf, bool neg, uint64_t submax)
{
    if (a > inf)
        return CL_NAN;
    if (a == inf)
        return neg ? CL_NEG_INF : CL_POS_INF;
    if (a == 0)
        return CL_ZERO;
    return a <= submax ? CL_SUBNORMAL : CL_NORMAL;
}

/* Raw bits of element i: an aligned load when the layout allows (device
 * buffers are 256-byte aligned and windows start on an element), else
 * assembled byte by byte in the tensor's byte order. */
template <typename U>
__device__ __forceinline__ U load_bits(const na_gdesc_t &d, const unsigned char *p, size_t i,
                                       bool direct)
{
    if (direct)
        return reinterpret_cast<const U *>(p)[i];
    return (U)na_load_uint(p + i * d.stride + d.offset, sizeof(U), d.big);
}

/* Decode element i of the block at p to a double and a class. */
template <int K>
__device__ __forceinline__ void decode(const na_gdesc_t &d, const unsigned char *p, size_t i,
                                       bool direct, double &v, int &cls)
{
    if (K == NA_GK_F32) {
        uint32_t u = load_bits<uint32_t>(d, p, i, direct);
        v = (double)na_bits_to_f32(u);
        cls = ieee_class(u & 0x7fffffffu, 0x7f800000u, u >> 31, 0x7fffffu);
    } else if (K == NA_GK_F64) {
        uint64_t u = load_bits<uint64_t>(d, p, i, direct);
        memcpy(&v, &u, 8);
        cls = ieee_class(u & 0x7fffffffffffffffull, 0x7ff0000000000000ull, u >> 63,
                         0x000fffffffffffffull);
    } else if (K == NA_GK_F16) {
        uint16_t h = load_bits<uint16_t>(d, p, i, direct);
        v = (double)na_f16_to_f32(h);
        cls = ieee_class(h & 0x7fffu, 0x7c00u, h >> 15, 0x3ffu);
    } else if (K == NA_GK_BF16) {
        uint16_t h = load_bits<uint16_t>(d, p, i, direct);
        v = (double)na_bf16_to_f32(h);
        cls = ieee_class(h & 0x7fffu, 0x7f80u, h >> 15, 0x7fu);
    } else if (K == NA_GK_LUT8) {
        unsigned char c = p[i * d.stride + d.offset];
        v = d.lut_val[c];
        cls = d.lut_cls[c];
    } else if (K == NA_GK_UINT || K == NA_GK_SINT) {
        uint64_t u = na_load_uint(p + i * d.stride + d.offset, d.esize, d.big);
        v = K == NA_GK_UINT ? (double)u : (double)na_sign_extend(u, d.esize * 8);
        cls = v == 0 ? CL_ZERO : CL_NORMAL;
    } else { /* F80: 8 significand bytes and 2 sign/exponent bytes */
        const unsigned char *b = p + i * d.stride + d.offset;
        uint64_t sig = na_load_uint(d.big ? b + 2 : b, 8, d.big);
        unsigned se = (unsigned)na_load_uint(d.big ? b : b + 8, 2, d.big);
        cls = na_f80_decode(sig, se, &v);
    }
}

template <int K>
__global__ void __launch_bounds__(kThreads)
pass1_kernel(na_gdesc_t d, const unsigned char *data, size_t n, size_t block, na_stats_t *out)
{
    using BR1 = cub::BlockReduce<P1, kThreads>;
    using BRd = cub::BlockReduce<D2, kThreads>;
    __shared__ union {
        typename BR1::TempStorage p1;
        typename BRd::TempStorage d;
    } tmp;
    __shared__ double s_mean;
    size_t j = blockIdx.x, b0 = j * block;
    size_t bn = n - b0 < block ? n - b0 : block;
    const unsigned char *p = data + b0 * d.stride;
    bool direct = d.stride == d.esize && d.offset == 0 && !d.big;
    P1 a = {0, 0, 0, 0, 0, 0, __longlong_as_double(0x7ff0000000000000ll),
            __longlong_as_double((long long)0xfff0000000000000ull), 0.0};
    for (size_t i = threadIdx.x; i < bn; i += kThreads) {
        double v;
        int c;
        decode<K>(d, p, i, direct, v, c);
        bool fin = c < CL_NAN;
        a.nan += c == CL_NAN;
        a.pinf += c == CL_POS_INF;
        a.ninf += c == CL_NEG_INF;
        a.zero += c == CL_ZERO;
        a.sub += c == CL_SUBNORMAL;
        a.fin += fin;
        if (fin) {
            a.sum += v;
            a.mn = v < a.mn ? v : a.mn;
            a.mx = v > a.mx ? v : a.mx;
        }
    }
    P1 r = BR1(tmp.p1).Reduce(a, P1Sum());
    if (threadIdx.x == 0)
        s_mean = r.fin ? r.sum / (double)r.fin : 0.0;
    __syncthreads(); /* s_mean visible; tmp free for the next reduction */
    double mean = s_mean;
    D2 m = {0.0, 0.0};
    for (size_t i = threadIdx.x; i < bn; i += kThreads) {
        double v;
        int c;
        decode<K>(d, p, i, direct, v, c);
        double dv = c < CL_NAN ? v - mean : 0.0;
        m.m2 += dv * dv;
        m.sd += dv;
    }
    D2 ms = BRd(tmp.d).Reduce(m, D2Sum());
    if (threadIdx.x == 0) /* tensors with missing values are scanned on the CPU */
        out[j] = na_g_block_stats(r, bn, mean, ms);
}

template <int K>
__global__ void __launch_bounds__(kThreads)
pass2_kernel(na_gdesc_t d, const unsigned char *data, size_t n, size_t block, double mean,
             double thr, unsigned long long *out)
{
    using BR = cub::BlockReduce<unsigned, kThreads>;
    __shared__ typename BR::TempStorage tmp;
    size_t j = blockIdx.x, b0 = j * block;
    size_t bn = n - b0 < block ? n - b0 : block;
    const unsigned char *p = data + b0 * d.stride;
    bool direct = d.stride == d.esize && d.offset == 0 && !d.big;
    unsigned cnt = 0;
    for (size_t i = threadIdx.x; i < bn; i += kThreads) {
        double v;
        int c;
        decode<K>(d, p, i, direct, v, c);
        /* the predicate of na_k_is_outlier (lib/scan_kernels.h) */
        cnt += c < CL_NAN && fabs(v - mean) > thr;
    }
    unsigned total = BR(tmp).Sum(cnt);
    if (threadIdx.x == 0)
        out[j] = total;
}

/* ---- the IEEE kinds (F32, F64, F16, BF16): the bulk of real data ----
 * One read of memory: each thread first loads its NW words of the block
 * into registers (NW independent, coalesced loads in flight per thread;
 * a 32-bit word holds two 16-bit elements), and both statistics loops and
 * the classes work on those registers. The generic kernels above read the
 * block twice, and with thousands of blocks in flight the second read
 * misses L2. T * NW * E == NA_BLOCK_ELEMS; NW words stay <= 32 registers,
 * so two 512-thread blocks fit on an SM and one's reductions overlap the
 * other's loads. */
template <int K> struct Fast { /* F32 */
    using W = uint32_t;
    static constexpr int T = 512, NW = 32, E = 1;
};
template <> struct Fast<NA_GK_F64> {
    using W = uint64_t;
    static constexpr int T = 1024, NW = 16, E = 1;
};
template <> struct Fast<NA_GK_F16> {
    using W = uint32_t;
    static constexpr int T = 512, NW = 16, E = 2;
};
template <> struct Fast<NA_GK_BF16> : Fast<NA_GK_F16> {};

/* Bit-level constants of the IEEE kinds: magnitude mask, +Inf's
 * magnitude, largest subnormal magnitude, sign bit, the magnitude's
 * integer type A and the value's own type V (F16/BF16 widen exactly to
 * float, as decode.h does). */
template <int K> struct Ieee { /* F32 */
    using A = uint32_t;
    using V = float;
    static constexpr A ABS = 0x7fffffffu, INF = 0x7f800000u, SUBMAX = 0x7fffffu;
    static constexpr int SIGN = 31;
    __device__ static V value(uint64_t u) { return na_bits_to_f32((uint32_t)u); }
    __device__ static V pinf() { return na_bits_to_f32(0x7f800000u); }
};
template <> struct Ieee<NA_GK_F64> {
    using A = uint64_t;
    using V = double;
    static constexpr A ABS = 0x7fffffffffffffffull, INF = 0x7ff0000000000000ull,
                       SUBMAX = 0x000fffffffffffffull;
    static constexpr int SIGN = 63;
    __device__ static V value(uint64_t u)
    {
        double v;
        memcpy(&v, &u, 8);
        return v;
    }
    __device__ static V pinf() { return __longlong_as_double(0x7ff0000000000000ll); }
};
template <> struct Ieee<NA_GK_F16> {
    using A = uint32_t;
    using V = float;
    static constexpr A ABS = 0x7fffu, INF = 0x7c00u, SUBMAX = 0x3ffu;
    static constexpr int SIGN = 15;
    __device__ static V value(uint64_t u) { return na_f16_to_f32((uint16_t)u); }
    __device__ static V pinf() { return na_bits_to_f32(0x7f800000u); }
};
template <> struct Ieee<NA_GK_BF16> {
    using A = uint32_t;
    using V = float;
    static constexpr A ABS = 0x7fffu, INF = 0x7f80u, SUBMAX = 0x7fu;
    static constexpr int SIGN = 15;
    __device__ static V value(uint64_t u) { return na_bf16_to_f32((uint16_t)u); }
    __device__ static V pinf() { return na_bits_to_f32(0x7f800000u); }
};

/* Value and class of the raw bits u of one element of kind K. */
template <int K>
__device__ __forceinline__ void from_bits(uint64_t u, double &v, int &cls)
{
    if (K == NA_GK_F32) {
        v = (double)na_bits_to_f32((uint32_t)u);
        cls = ieee_class(u & 0x7fffffffu, 0x7f800000u, (u >> 31) & 1, 0x7fffffu);
    } else if (K == NA_GK_F64) {
        memcpy(&v, &u, 8);
        cls = ieee_class(u & 0x7fffffffffffffffull, 0x7ff0000000000000ull, u >> 63,
                         0x000fffffffffffffull);
    } else if (K == NA_GK_F16) {
        v = (double)na_f16_to_f32((uint16_t)u);
        cls = ieee_class(u & 0x7fffu, 0x7c00u, (u >> 15) & 1, 0x3ffu);
    } else {
        v = (double)na_bf16_to_f32((uint16_t)u);
        cls = ieee_class(u & 0x7fffu, 0x7f80u, (u >> 15) & 1, 0x7fu);
    }
}

/* Load the thread's words of the block; elements at or past bn are 0. */
template <int K>
__device__ __forceinline__ void load_words(const na_gdesc_t &d, const unsigned char *p,
                                           unsigned bn, typename Fast<K>::W *raw)
{
    using F = Fast<K>;
    using W = typename F::W;
    bool direct = d.stride == d.esize && d.offset == 0 && !d.big;
#pragma unroll
    for (int k = 0; k < F::NW; k++) {
        unsigned w = threadIdx.x + k * F::T, i0 = w * F::E;
        if (direct && i0 + F::E <= bn) {
            raw[k] = reinterpret_cast<const W *>(p)[w];
            continue;
        }
        using EL = typename std::conditional<F::E == 2, uint16_t, W>::type; /* one element */
        W word = 0;
        for (int e = 0; e < F::E; e++) /* the layout's loader, or the tail */
            if (i0 + e < bn)
                word |= (W)load_bits<EL>(d, p, i0 + e, false) << (16 * e);
        raw[k] = word;
    }
}

template <int K>
__device__ __forceinline__ uint64_t elem_bits(typename Fast<K>::W word, int e)
{
    return Fast<K>::E == 1 ? (uint64_t)word : (uint64_t)((word >> (16 * e)) & 0xffffu);
}

/* Pass-1 sums of the thread's elements; SP: the block holds NaN or Inf,
 * so classes are masked (p1_f32like_masked on the CPU), else not. Words
 * alternate between two sets of accumulators, combined in a fixed order
 * at the end: two independent dependency chains keep the FP64 adders busy
 * (one chain of 32 dependent additions left them waiting on latency). */
template <int K, bool SP>
__device__ __forceinline__ void acc1(const typename Fast<K>::W *raw, unsigned bn, P1 &a,
                                     typename Ieee<K>::V &mn, typename Ieee<K>::V &mx)
{
    using F = Fast<K>;
    using I = Ieee<K>;
    using A = typename I::A;
    using V = typename I::V;
    double sum[2] = {0.0, 0.0};
    V lo[2] = {mn, mn}, hi[2] = {mx, mx};
#pragma unroll
    for (int k = 0; k < F::NW; k++) {
#pragma unroll
        for (int e = 0; e < F::E; e++) {
            if ((threadIdx.x + k * F::T) * F::E + e >= bn)
                continue;
            uint64_t u = elem_bits<K>(raw[k], e);
            A m = (A)(u & I::ABS);
            V x = I::value(u);
            a.zero += m == 0;
            a.sub += (A)(m - 1) < I::SUBMAX; /* m = 0 wraps: false */
            if (!SP) {
                a.fin++;
                sum[k & 1] += (double)x;
                lo[k & 1] = x < lo[k & 1] ? x : lo[k & 1];
                hi[k & 1] = x > hi[k & 1] ? x : hi[k & 1];
                continue;
            }
            bool neg = (u >> I::SIGN) & 1, fin = m < I::INF;
            a.nan += m > I::INF;
            a.pinf += m == I::INF && !neg;
            a.ninf += m == I::INF && neg;
            a.fin += fin;
            sum[k & 1] += fin ? (double)x : 0.0;
            lo[k & 1] = fin && x < lo[k & 1] ? x : lo[k & 1];
            hi[k & 1] = fin && x > hi[k & 1] ? x : hi[k & 1];
        }
    }
    a.sum = sum[0] + sum[1];
    mn = lo[1] < lo[0] ? lo[1] : lo[0];
    mx = hi[1] > hi[0] ? hi[1] : hi[0];
}

/* Sums of squared deviations from the block mean and of deviations of
 * the finite elements (two chains, as acc1). */
template <int K, bool SP>
__device__ __forceinline__ D2 acc2(const typename Fast<K>::W *raw, unsigned bn, double mean)
{
    using F = Fast<K>;
    using I = Ieee<K>;
    double m2[2] = {0.0, 0.0}, sd[2] = {0.0, 0.0};
#pragma unroll
    for (int k = 0; k < F::NW; k++) {
#pragma unroll
        for (int e = 0; e < F::E; e++) {
            if ((threadIdx.x + k * F::T) * F::E + e >= bn)
                continue;
            uint64_t u = elem_bits<K>(raw[k], e);
            double dv = (double)I::value(u) - mean;
            if (SP && (typename I::A)(u & I::ABS) >= I::INF)
                dv = 0.0;
            m2[k & 1] += dv * dv;
            sd[k & 1] += dv;
        }
    }
    D2 r = {m2[0] + m2[1], sd[0] + sd[1]};
    return r;
}

template <int K>
__global__ void __launch_bounds__(Fast<K>::T, 1024 / Fast<K>::T)
pass1_fast(na_gdesc_t d, const unsigned char *data, size_t n, size_t block, na_stats_t *out)
{
    using F = Fast<K>;
    using BR1 = cub::BlockReduce<P1, F::T>;
    using BRd = cub::BlockReduce<D2, F::T>;
    __shared__ union {
        typename BR1::TempStorage p1;
        typename BRd::TempStorage d;
    } tmp;
    __shared__ double s_mean;
    size_t j = blockIdx.x, b0 = j * block;
    unsigned bn = (unsigned)(n - b0 < block ? n - b0 : block);
    typename F::W raw[F::NW];
    load_words<K>(d, data + b0 * d.stride, bn, raw);
    using I = Ieee<K>;
    using V = typename I::V;
    /* As the CPU's p1_f32like: a block without NaN or Inf (almost every
     * block of real data) takes a loop without class masks; the choice is
     * per block (__syncthreads_or), so every thread of a block agrees. */
    typename I::A amax = 0;
#pragma unroll
    for (int k = 0; k < F::NW; k++)
#pragma unroll
        for (int e = 0; e < F::E; e++) {
            typename I::A m = (typename I::A)(elem_bits<K>(raw[k], e) & I::ABS);
            amax = (threadIdx.x + k * F::T) * F::E + e < bn && m > amax ? m : amax;
        }
    bool special = __syncthreads_or(amax >= I::INF);
    P1 a = {0, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0};
    V mn = I::pinf(), mx = -I::pinf(); /* min/max in the value's own type: exact */
    if (special)
        acc1<K, true>(raw, bn, a, mn, mx);
    else
        acc1<K, false>(raw, bn, a, mn, mx);
    a.mn = (double)mn;
    a.mx = (double)mx;
    P1 r = BR1(tmp.p1).Reduce(a, P1Sum());
    if (threadIdx.x == 0)
        s_mean = r.fin ? r.sum / (double)r.fin : 0.0;
    __syncthreads(); /* s_mean visible; tmp free for the next reduction */
    double mean = s_mean;
    D2 m = special ? acc2<K, true>(raw, bn, mean) : acc2<K, false>(raw, bn, mean);
    D2 ms = BRd(tmp.d).Reduce(m, D2Sum());
    if (threadIdx.x == 0) /* tensors with missing values are scanned on the CPU */
        out[j] = na_g_block_stats(r, bn, mean, ms);
}

template <int K>
__global__ void __launch_bounds__(Fast<K>::T, 1024 / Fast<K>::T)
pass2_fast(na_gdesc_t d, const unsigned char *data, size_t n, size_t block, double mean,
           double thr, unsigned long long *out)
{
    using F = Fast<K>;
    using BR = cub::BlockReduce<unsigned, F::T>;
    __shared__ typename BR::TempStorage tmp;
    size_t j = blockIdx.x, b0 = j * block;
    unsigned bn = (unsigned)(n - b0 < block ? n - b0 : block);
    typename F::W raw[F::NW];
    load_words<K>(d, data + b0 * d.stride, bn, raw);
    unsigned cnt = 0;
#pragma unroll
    for (int k = 0; k < F::NW; k++) {
#pragma unroll
        for (int e = 0; e < F::E; e++) {
            double v;
            int c;
            from_bits<K>(elem_bits<K>(raw[k], e), v, c);
            /* the predicate of na_k_is_outlier (lib/scan_kernels.h) */
            cnt += (threadIdx.x + k * F::T) * F::E + e < bn && c < CL_NAN && fabs(v - mean) > thr;
        }
    }
    unsigned total = BR(tmp).Sum(cnt);
    if (threadIdx.x == 0)
        out[j] = total;
}

constexpr bool is_fast(int K)
{
    return K == NA_GK_F32 || K == NA_GK_F64 || K == NA_GK_F16 || K == NA_GK_BF16;
}

template <int K>
cudaError_t launch1(const na_gdesc_t *d, const unsigned char *data, size_t n, size_t block,
                    na_stats_t *out, cudaStream_t st)
{
    unsigned grid = (unsigned)((n + block - 1) / block);
    constexpr int KF = is_fast(K) ? K : NA_GK_F32;
    constexpr int T = Fast<KF>::T;
    if (is_fast(K) && block <= (size_t)T * Fast<KF>::NW * Fast<KF>::E)
        pass1_fast<KF><<<grid, T, 0, st>>>(*d, data, n, block, out);
    else
        pass1_kernel<K><<<grid, kThreads, 0, st>>>(*d, data, n, block, out);
    return cudaGetLastError();
}

template <int K>
cudaError_t launch2(const na_gdesc_t *d, const unsigned char *data, size_t n, size_t block,
                    double mean, double thr, unsigned long long *out, cudaStream_t st)
{
    unsigned grid = (unsigned)((n + block - 1) / block);
    constexpr int KF = is_fast(K) ? K : NA_GK_F32;
    constexpr int T = Fast<KF>::T;
    if (is_fast(K) && block <= (size_t)T * Fast<KF>::NW * Fast<KF>::E)
        pass2_fast<KF><<<grid, T, 0, st>>>(*d, data, n, block, mean, thr, out);
    else
        pass2_kernel<K><<<grid, kThreads, 0, st>>>(*d, data, n, block, mean, thr, out);
    return cudaGetLastError();
}

} // namespace

extern "C" int na_gpu_pass1(const na_gdesc_t *d, const unsigned char *data, size_t n,
                            size_t block, na_stats_t *out, void *stream)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    if (n == 0)
        return 0;
    switch (d->kind) {
    case NA_GK_F32: return launch1<NA_GK_F32>(d, data, n, block, out, st);
    case NA_GK_F64: return launch1<NA_GK_F64>(d, data, n, block, out, st);
    case NA_GK_F16: return launch1<NA_GK_F16>(d, data, n, block, out, st);
    case NA_GK_BF16: return launch1<NA_GK_BF16>(d, data, n, block, out, st);
    case NA_GK_LUT8: return launch1<NA_GK_LUT8>(d, data, n, block, out, st);
    case NA_GK_UINT: return launch1<NA_GK_UINT>(d, data, n, block, out, st);
    case NA_GK_SINT: return launch1<NA_GK_SINT>(d, data, n, block, out, st);
    case NA_GK_F80: return launch1<NA_GK_F80>(d, data, n, block, out, st);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" int na_gpu_pass2(const na_gdesc_t *d, const unsigned char *data, size_t n,
                            size_t block, double mean, double thr, unsigned long long *out,
                            void *stream)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    if (n == 0)
        return 0;
    switch (d->kind) {
    case NA_GK_F32: return launch2<NA_GK_F32>(d, data, n, block, mean, thr, out, st);
    case NA_GK_F64: return launch2<NA_GK_F64>(d, data, n, block, mean, thr, out, st);
    case NA_GK_F16: return launch2<NA_GK_F16>(d, data, n, block, mean, thr, out, st);
    case NA_GK_BF16: return launch2<NA_GK_BF16>(d, data, n, block, mean, thr, out, st);
    case NA_GK_LUT8: return launch2<NA_GK_LUT8>(d, data, n, block, mean, thr, out, st);
    case NA_GK_UINT: return launch2<NA_GK_UINT>(d, data, n, block, mean, thr, out, st);
    case NA_GK_SINT: return launch2<NA_GK_SINT>(d, data, n, block, mean, thr, out, st);
    case NA_GK_F80: return launch2<NA_GK_F80>(d, data, n, block, mean, thr, out, st);
    default: return cudaErrorInvalidValue;
    }
}

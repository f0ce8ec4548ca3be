/*
 * scan.c - the per-block kernels of the scan: classification counts,
 * min/max, block mean and sum of squared deviations (pass 1), and the
 * z-score outlier count (pass 2).
 *
 * Why the loops look the way they do:
 *  - F32, F64, F16 and BF16 are the bulk of real checkpoints, so each has a
 *    branch-free loop with `#pragma omp simd` reductions: classes are
 *    decided from the bits with integer compares turned into 0/1 masks,
 *    and non-finite values are masked out of the sums with selects. This
 *    file is built with -O3 -fno-math-errno -fno-trapping-math (never
 *    -ffast-math, which would let the compiler assume there is no NaN).
 *  - Statistics are two-pass within a block (mean, then squared
 *    deviations from it; the block stays in L2), and blocks are merged by
 *    Chan et al.'s formula in stats.c: robust against cancellation.
 *  - Subnormals are counted in the tensor's own dtype, from its bits
 *    (an F16 subnormal is a normal binary32 once widened).
 *  - Other layouts (byte-swapped, strided C64 parts) are first gathered
 *    into host order in scratch; 1-byte types go through a 256-entry
 *    table built once per tensor from na_decode1; the rest through
 *    na_decode1 itself. Speed matters less there than sharing one
 *    definition of each class with the decoder.
 *  - The common block has no NaN or Inf: a first loop without masks
 *    (counts of zeros/subnormals, sum, min, max and the largest |bits|)
 *    serves it, and only a block whose largest |bits| shows a NaN or Inf
 *    is redone by the fully masked loop.
 *  - The kernels are cloned for AVX2 with a runtime dispatch
 *    (target_clones, GCC on x86-64), and F16 is widened with F16C where the
 *    CPU has it; both measured in bench/RESULTS.md (about 1.7x for F32 and
 *    4x for F16 on one core). NA_NO_CLONES builds the portable code only.
 */
#include "scan_kernels.h"
#include "decode.h"

#include <float.h>  /* FLT_MAX, DBL_MAX */
#include <math.h>   /* INFINITY, NAN, fabs, nextafter */
#include <string.h> /* memcpy */

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(NA_NO_CLONES)
#define NA_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NA_CLONES
#endif

#define NA_INLINE static inline __attribute__((always_inline))

enum { M_F32, M_F16, M_BF16 };

/* Bits of element i as binary32 (F16/BF16 widened exactly), and whether
 * it is subnormal in its own dtype. */
NA_INLINE uint32_t load32(const unsigned char *p, size_t i, int mode, unsigned *sub)
{
    uint32_t u;
    if (mode == M_F32) {
        memcpy(&u, p + 4 * i, 4);
        *sub = ((u & 0x7fffffffu) - 1u) < 0x7fffffu;
        return u;
    }
    uint16_t h;
    memcpy(&h, p + 2 * i, 2);
    uint32_t a = (uint32_t)h & 0x7fffu;
    if (mode == M_F16) {
        *sub = (a - 1u) < 0x3ffu;
        return na_f32_to_bits(na_f16_to_f32(h));
    }
    *sub = (a - 1u) < 0x7fu;
    return (uint32_t)h << 16;
}

/* The second loop over a block: BODY sets double d, the deviation of
 * element i from the block's mean (0 for a value left out); m2 = sum of
 * d^2, and sd = sum of d only for a narrow block (na_stats_narrow), whose
 * corrected sums need it (stats.c); other blocks keep the loop with one
 * reduction (with both, BF16's pass 1 took 15 % longer) and its bits. */
#define P1_DEVIATIONS(narrow, n, BODY)                                                  \
    do {                                                                                \
        if (narrow) {                                                                   \
            _Pragma("omp simd reduction(+ : m2, sd)") for (size_t i = 0; i < (n); i++) { \
                BODY;                                                                   \
                m2 += d * d;                                                            \
                sd += d;                                                                \
            }                                                                           \
        } else {                                                                        \
            _Pragma("omp simd reduction(+ : m2)") for (size_t i = 0; i < (n); i++) {     \
                BODY;                                                                   \
                m2 += d * d;                                                            \
            }                                                                           \
        }                                                                               \
    } while (0)

/* Pass 1 with every class masked: for blocks that hold NaN or Inf. */
NA_INLINE void p1_f32like_masked(const unsigned char *p, size_t n, int mode, na_stats_t *s)
{
    unsigned nnan = 0, npinf = 0, nninf = 0, nzero = 0, nsub = 0, nfin = 0;
    float mn = INFINITY, mx = -INFINITY;
    double sum = 0.0;
#pragma omp simd reduction(+ : nnan, npinf, nninf, nzero, nsub, nfin, sum) \
    reduction(min : mn) reduction(max : mx)
    for (size_t i = 0; i < n; i++) {
        unsigned sub;
        uint32_t u = load32(p, i, mode, &sub);
        uint32_t a = u & 0x7fffffffu;
        unsigned neg = u >> 31;
        unsigned fin = a < 0x7f800000u;
        unsigned inf = a == 0x7f800000u;
        float x = na_bits_to_f32(u);
        nnan += a > 0x7f800000u;
        npinf += inf & (neg ^ 1u);
        nninf += inf & neg;
        nzero += a == 0;
        nsub += sub;
        nfin += fin;
        sum += fin ? (double)x : 0.0;
        float lo = fin ? x : INFINITY, hi = fin ? x : -INFINITY;
        mn = lo < mn ? lo : mn;
        mx = hi > mx ? hi : mx;
    }
    s->elements = n;
    s->nan = nnan;
    s->pos_inf = npinf;
    s->neg_inf = nninf;
    s->zeros = nzero;
    s->subnormal = nsub;
    s->finite = nfin;
    if (nfin == 0)
        return;
    double mean = sum / (double)nfin, m2 = 0.0, sd = 0.0;
    P1_DEVIATIONS(na_stats_narrow(mn, mx, mean), n, unsigned sub; uint32_t u = load32(p, i, mode, &sub);
                  double d = (u & 0x7fffffffu) < 0x7f800000u ? (double)na_bits_to_f32(u) - mean
                                                              : 0.0);
    s->min = mn;
    s->max = mx;
    s->abs_max = fabs(mn) > fabs(mx) ? fabs(mn) : fabs(mx);
    na_stats_block(s, mean, m2, sd);
}

/* Pass 1 for the common block without NaN or Inf: no masks, so the loop
 * is loads, integer compares, converts, adds, min and max (a NaN never
 * wins `x < mn ? x : mn`, so min/max need no mask either). A block whose
 * largest |bits| shows a NaN or Inf is redone by the masked loop; each
 * block's path depends only on its data, so results stay deterministic. */
NA_INLINE void p1_f32like(const unsigned char *p, size_t n, int mode, na_stats_t *s)
{
    unsigned nzero = 0, nsub = 0;
    uint32_t amax = 0;
    float mn = INFINITY, mx = -INFINITY;
    double sum = 0.0;
#pragma omp simd reduction(+ : nzero, nsub, sum) reduction(min : mn) reduction(max : mx, amax)
    for (size_t i = 0; i < n; i++) {
        unsigned sub;
        uint32_t u = load32(p, i, mode, &sub);
        uint32_t a = u & 0x7fffffffu;
        float x = na_bits_to_f32(u);
        nzero += a == 0;
        nsub += sub;
        amax = a > amax ? a : amax;
        sum += (double)x;
        mn = x < mn ? x : mn;
        mx = x > mx ? x : mx;
    }
    if (amax >= 0x7f800000u) {
        p1_f32like_masked(p, n, mode, s);
        return;
    }
    double mean = sum / (double)n, m2 = 0.0, sd = 0.0;
    P1_DEVIATIONS(na_stats_narrow(mn, mx, mean), n, unsigned sub;
                  double d = (double)na_bits_to_f32(load32(p, i, mode, &sub)) - mean);
    s->elements = s->finite = n;
    s->zeros = nzero;
    s->subnormal = nsub;
    s->min = mn;
    s->max = mx;
    s->abs_max = fabs(mn) > fabs(mx) ? fabs(mn) : fabs(mx);
    na_stats_block(s, mean, m2, sd);
}

/* Pass 2 compares in the value's own precision against bounds that
 * na_k_thresholds derived from the exact predicate, so no conversion to
 * double is needed per element. The bounds are infinite when no finite
 * value can be an outlier on that side; +-FLT_MAX keeps Inf (and NaN, for
 * which every compare is false) out. */
NA_INLINE uint64_t p2_f32like(const unsigned char *p, size_t n, int mode, const na_kthr_t *th)
{
    float lo = th->flo, hi = th->fhi;
    unsigned cnt = 0;
#pragma omp simd reduction(+ : cnt)
    for (size_t i = 0; i < n; i++) {
        unsigned sub;
        float x = na_bits_to_f32(load32(p, i, mode, &sub));
        cnt += ((x >= hi) & (x <= FLT_MAX)) | ((x <= lo) & (x >= -FLT_MAX));
    }
    return cnt;
}

NA_CLONES static void p1_f32(const unsigned char *p, size_t n, na_stats_t *s)
{
    p1_f32like(p, n, M_F32, s);
}
NA_CLONES static void p1_f16(const unsigned char *p, size_t n, na_stats_t *s)
{
    p1_f32like(p, n, M_F16, s);
}
NA_CLONES static void p1_bf16(const unsigned char *p, size_t n, na_stats_t *s)
{
    p1_f32like(p, n, M_BF16, s);
}
NA_CLONES static uint64_t p2_f32(const unsigned char *p, size_t n, const na_kthr_t *th)
{
    return p2_f32like(p, n, M_F32, th);
}
NA_CLONES static uint64_t p2_f16(const unsigned char *p, size_t n, const na_kthr_t *th)
{
    return p2_f32like(p, n, M_F16, th);
}
NA_CLONES static uint64_t p2_bf16(const unsigned char *p, size_t n, const na_kthr_t *th)
{
    return p2_f32like(p, n, M_BF16, th);
}

#define F64_ABS 0x7fffffffffffffffull
#define F64_INF 0x7ff0000000000000ull

NA_INLINE void p1_f64_masked(const unsigned char *p, size_t n, na_stats_t *s)
{
    unsigned nnan = 0, npinf = 0, nninf = 0, nzero = 0, nsub = 0, nfin = 0;
    double mn = INFINITY, mx = -INFINITY, sum = 0.0;
#pragma omp simd reduction(+ : nnan, npinf, nninf, nzero, nsub, nfin, sum) \
    reduction(min : mn) reduction(max : mx)
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, p + 8 * i, 8);
        uint64_t a = u & F64_ABS;
        unsigned neg = (unsigned)(u >> 63);
        unsigned fin = a < F64_INF;
        unsigned inf = a == F64_INF;
        double x;
        memcpy(&x, &u, 8);
        nnan += a > F64_INF;
        npinf += inf & (neg ^ 1u);
        nninf += inf & neg;
        nzero += a == 0;
        nsub += (a - 1u) < 0x000fffffffffffffull;
        nfin += fin;
        sum += fin ? x : 0.0;
        double lo = fin ? x : INFINITY, hi = fin ? x : -INFINITY;
        mn = lo < mn ? lo : mn;
        mx = hi > mx ? hi : mx;
    }
    *s = (na_stats_t){n,   nnan, npinf, nninf, nzero, nsub, nfin, NAN,
                      NAN, NAN,  NAN,   0.0,   0,     0.0,  0.0};
    if (nfin == 0)
        return;
    double mean = sum / (double)nfin, m2 = 0.0, sd = 0.0;
    P1_DEVIATIONS(na_stats_narrow(mn, mx, mean), n, double x; memcpy(&x, p + 8 * i, 8);
                  double d = fabs(x) <= 1.7976931348623157e308 ? x - mean : 0.0);
    s->min = mn;
    s->max = mx;
    s->abs_max = fabs(mn) > fabs(mx) ? fabs(mn) : fabs(mx);
    na_stats_block(s, mean, m2, sd);
}

/* F64 pass 1: fast path and fallback as for p1_f32like. */
NA_CLONES static void p1_f64(const unsigned char *p, size_t n, na_stats_t *s)
{
    unsigned nzero = 0, nsub = 0;
    uint64_t amax = 0;
    double mn = INFINITY, mx = -INFINITY, sum = 0.0;
#pragma omp simd reduction(+ : nzero, nsub, sum) reduction(min : mn) reduction(max : mx, amax)
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        double x;
        memcpy(&u, p + 8 * i, 8);
        memcpy(&x, &u, 8);
        uint64_t a = u & F64_ABS;
        nzero += a == 0;
        nsub += (a - 1u) < 0x000fffffffffffffull;
        amax = a > amax ? a : amax;
        sum += x;
        mn = x < mn ? x : mn;
        mx = x > mx ? x : mx;
    }
    if (amax >= F64_INF) {
        p1_f64_masked(p, n, s);
        return;
    }
    double mean = sum / (double)n, m2 = 0.0, sd = 0.0;
    P1_DEVIATIONS(na_stats_narrow(mn, mx, mean), n, double x; memcpy(&x, p + 8 * i, 8);
                  double d = x - mean);
    *s = (na_stats_t){n, 0, 0, 0, nzero, nsub, n, mn, mx, fabs(mn) > fabs(mx) ? fabs(mn) : fabs(mx),
                      mean, m2, 0, 0.0, 0.0};
    na_stats_block(s, mean, m2, sd);
}

NA_CLONES static uint64_t p2_f64(const unsigned char *p, size_t n, const na_kthr_t *th)
{
    double lo = th->dlo, hi = th->dhi;
    unsigned cnt = 0;
#pragma omp simd reduction(+ : cnt)
    for (size_t i = 0; i < n; i++) {
        double x;
        memcpy(&x, p + 8 * i, 8);
        cnt += ((x >= hi) & (x <= DBL_MAX)) | ((x <= lo) & (x >= -DBL_MAX));
    }
    return cnt;
}

/* Finders: the elements of a block that the pass-2 kernels count, with
 * their offsets and values, at most cap of them (returns cap + 1 when
 * there are more). Counted per 64-element group with the kernel loop, so
 * only groups that hold one are looked at element by element. */
#define FIND_GROUP 64

NA_INLINE uint32_t find_f32like(const unsigned char *p, size_t n, int mode,
                                const na_kthr_t *th, uint32_t cap, uint32_t *idx, double *val)
{
    uint32_t found = 0;
    size_t esz = mode == M_F32 ? 4 : 2;
    for (size_t g = 0; g < n; g += FIND_GROUP) {
        size_t m = n - g < FIND_GROUP ? n - g : FIND_GROUP;
        uint64_t c = p2_f32like(p + g * esz, m, mode, th);
        if (c == 0)
            continue;
        if (found + c > cap)
            return cap + 1;
        for (size_t i = g; i < g + m; i++) {
            unsigned sub;
            float x = na_bits_to_f32(load32(p, i, mode, &sub));
            if (((x >= th->fhi) & (x <= FLT_MAX)) | ((x <= th->flo) & (x >= -FLT_MAX))) {
                idx[found] = (uint32_t)i;
                val[found++] = x;
            }
        }
    }
    return found;
}

NA_CLONES static uint32_t find_f32(const unsigned char *p, size_t n, const na_kthr_t *th,
                                   uint32_t cap, uint32_t *idx, double *val)
{
    return find_f32like(p, n, M_F32, th, cap, idx, val);
}
NA_CLONES static uint32_t find_f16(const unsigned char *p, size_t n, const na_kthr_t *th,
                                   uint32_t cap, uint32_t *idx, double *val)
{
    return find_f32like(p, n, M_F16, th, cap, idx, val);
}
NA_CLONES static uint32_t find_bf16(const unsigned char *p, size_t n, const na_kthr_t *th,
                                    uint32_t cap, uint32_t *idx, double *val)
{
    return find_f32like(p, n, M_BF16, th, cap, idx, val);
}
NA_CLONES static uint32_t find_f64(const unsigned char *p, size_t n, const na_kthr_t *th,
                                   uint32_t cap, uint32_t *idx, double *val)
{
    uint32_t found = 0;
    for (size_t g = 0; g < n; g += FIND_GROUP) {
        size_t m = n - g < FIND_GROUP ? n - g : FIND_GROUP;
        uint64_t c = p2_f64(p + g * 8, m, th);
        if (c == 0)
            continue;
        if (found + c > cap)
            return cap + 1;
        for (size_t i = g; i < g + m; i++) {
            double x;
            memcpy(&x, p + 8 * i, 8);
            if (((x >= th->dhi) & (x <= DBL_MAX)) | ((x <= th->dlo) & (x >= -DBL_MAX))) {
                idx[found] = (uint32_t)i;
                val[found++] = x;
            }
        }
    }
    return found;
}

/* F16 with the F16C instruction set (x86-64, checked at run time): widen
 * a block to binary32 with vcvtph2ps into scratch (exact, as
 * na_f16_to_f32), then run the F32 kernels on it; the subnormal count is
 * taken from the 16-bit codes. About 2x the bit-twiddling loop, which
 * needs ~12 integer operations per element for the same conversion. */
#ifdef NA_F16C
#include <immintrin.h> /* _mm256_cvtph_ps */
__attribute__((target("avx2,f16c"))) static unsigned widen_f16c(const unsigned char *p, size_t n,
                                                                 float *out)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(p + 2 * i));
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; i++) {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        out[i] = na_f16_to_f32(h);
    }
    unsigned nsub = 0;
#pragma omp simd reduction(+ : nsub)
    for (size_t j = 0; j < n; j++) {
        uint16_t h;
        memcpy(&h, p + 2 * j, 2);
        nsub += (((uint32_t)h & 0x7fffu) - 1u) < 0x3ffu;
    }
    return nsub;
}
#endif

/* Values and classes already decoded (1-byte types, integers, F80, and
 * tensors with missing values, whose class NA_K_CL_MISSING is counted
 * apart and is not finite). */
static void p1_decoded(const double *v, const unsigned char *c, size_t n, na_stats_t *s)
{
    unsigned nnan = 0, npinf = 0, nninf = 0, nzero = 0, nsub = 0, nfin = 0, nmiss = 0;
    double mn = INFINITY, mx = -INFINITY, sum = 0.0;
#pragma omp simd reduction(+ : nnan, npinf, nninf, nzero, nsub, nfin, nmiss, sum) \
    reduction(min : mn) reduction(max : mx)
    for (size_t i = 0; i < n; i++) {
        unsigned fin = c[i] < NA_CL_NAN;
        nmiss += c[i] == NA_K_CL_MISSING;
        nnan += c[i] == NA_CL_NAN;
        npinf += c[i] == NA_CL_POS_INF;
        nninf += c[i] == NA_CL_NEG_INF;
        nzero += c[i] == NA_CL_ZERO;
        nsub += c[i] == NA_CL_SUBNORMAL;
        nfin += fin;
        sum += fin ? v[i] : 0.0;
        double lo = fin ? v[i] : INFINITY, hi = fin ? v[i] : -INFINITY;
        mn = lo < mn ? lo : mn;
        mx = hi > mx ? hi : mx;
    }
    *s = (na_stats_t){n,   nnan, npinf, nninf, nzero, nsub, nfin, NAN,
                      NAN, NAN,  NAN,   0.0,   0,     0.0,  0.0};
    s->missing = nmiss;
    if (nfin == 0)
        return;
    double mean = sum / (double)nfin, m2 = 0.0, sd = 0.0;
    P1_DEVIATIONS(na_stats_narrow(mn, mx, mean), n,
                  double d = c[i] < NA_CL_NAN ? v[i] - mean : 0.0);
    s->min = mn;
    s->max = mx;
    s->abs_max = fabs(mn) > fabs(mx) ? fabs(mn) : fabs(mx);
    na_stats_block(s, mean, m2, sd);
}

static uint64_t p2_decoded(const double *v, const unsigned char *c, size_t n, double mean,
                           double thr)
{
    unsigned cnt = 0;
#pragma omp simd reduction(+ : cnt)
    for (size_t i = 0; i < n; i++)
        cnt += (c[i] < NA_CL_NAN) & (fabs(v[i] - mean) > thr);
    return cnt;
}

void na_k_pass1(const na_kctx_t *k, const unsigned char *blk, size_t n,
                const na_kscratch_t *s, na_stats_t *out)
{
    na_stats_init(out);
    switch (k->kind) {
    case NA_KK_F32: p1_f32(na_k_host_block(k, blk, n, s), n, out); break;
    case NA_KK_F16:
#ifdef NA_F16C
        if (k->f16c) {
            float *w = (float *)(void *)s->val; /* B floats fit in B doubles */
            unsigned nsub = widen_f16c(na_k_host_block(k, blk, n, s), n, w);
            p1_f32((const unsigned char *)w, n, out);
            out->subnormal = nsub; /* in F16, not in the widened F32 */
            break;
        }
#endif
        p1_f16(na_k_host_block(k, blk, n, s), n, out);
        break;
    case NA_KK_BF16: p1_bf16(na_k_host_block(k, blk, n, s), n, out); break;
    case NA_KK_F64: p1_f64(na_k_host_block(k, blk, n, s), n, out); break;
    default:
        na_k_decode(k, blk, n, s);
        p1_decoded(s->val, s->cls, n, out);
    }
}

uint64_t na_k_pass2(const na_kctx_t *k, const unsigned char *blk, size_t n,
                    const na_kthr_t *th, const na_kscratch_t *s)
{
    switch (k->kind) {
    case NA_KK_F32: return p2_f32(na_k_host_block(k, blk, n, s), n, th);
    case NA_KK_F16:
#ifdef NA_F16C
        if (k->f16c) {
            float *w = (float *)(void *)s->val;
            widen_f16c(na_k_host_block(k, blk, n, s), n, w);
            return p2_f32((const unsigned char *)w, n, th);
        }
#endif
        return p2_f16(na_k_host_block(k, blk, n, s), n, th);
    case NA_KK_BF16: return p2_bf16(na_k_host_block(k, blk, n, s), n, th);
    case NA_KK_F64: return p2_f64(na_k_host_block(k, blk, n, s), n, th);
    default:
        na_k_decode(k, blk, n, s);
        return p2_decoded(s->val, s->cls, n, th->mean, th->thr);
    }
}

uint32_t na_k_find(const na_kctx_t *k, const unsigned char *blk, size_t n,
                   const na_kthr_t *th, const na_kscratch_t *s, uint32_t cap, uint32_t *idx,
                   double *val)
{
    switch (k->kind) {
    case NA_KK_F32: return find_f32(na_k_host_block(k, blk, n, s), n, th, cap, idx, val);
    case NA_KK_F16:
#ifdef NA_F16C
        if (k->f16c) {
            float *w = (float *)(void *)s->val;
            widen_f16c(na_k_host_block(k, blk, n, s), n, w);
            return find_f32((const unsigned char *)w, n, th, cap, idx, val);
        }
#endif
        return find_f16(na_k_host_block(k, blk, n, s), n, th, cap, idx, val);
    case NA_KK_BF16: return find_bf16(na_k_host_block(k, blk, n, s), n, th, cap, idx, val);
    case NA_KK_F64: return find_f64(na_k_host_block(k, blk, n, s), n, th, cap, idx, val);
    default:
        break;
    }
    na_k_decode(k, blk, n, s);
    uint32_t found = 0;
    for (size_t i = 0; i < n; i++) {
        if (!na_k_is_outlier(s->val[i], s->cls[i], th->mean, th->thr))
            continue;
        if (found == cap)
            return cap + 1;
        idx[found] = (uint32_t)i;
        val[found++] = s->val[i];
    }
    return found;
}

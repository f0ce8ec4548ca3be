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

#include <math.h>   /* INFINITY, NAN, fabs */
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
    double mean = sum / (double)nfin, m2 = 0.0;
#pragma omp simd reduction(+ : m2)
    for (size_t i = 0; i < n; i++) {
        unsigned sub;
        uint32_t u = load32(p, i, mode, &sub);
        double d = (u & 0x7fffffffu) < 0x7f800000u ? (double)na_bits_to_f32(u) - mean : 0.0;
        m2 += d * d;
    }
    s->min = mn;
    s->max = mx;
    s->abs_max = fabs(mn) > fabs(mx) ? fabs(mn) : fabs(mx);
    s->mean = mean;
    s->m2 = m2;
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
    double mean = sum / (double)n, m2 = 0.0;
#pragma omp simd reduction(+ : m2)
    for (size_t i = 0; i < n; i++) {
        unsigned sub;
        double d = (double)na_bits_to_f32(load32(p, i, mode, &sub)) - mean;
        m2 += d * d;
    }
    s->elements = s->finite = n;
    s->zeros = nzero;
    s->subnormal = nsub;
    s->min = mn;
    s->max = mx;
    s->abs_max = fabs(mn) > fabs(mx) ? fabs(mn) : fabs(mx);
    s->mean = mean;
    s->m2 = m2;
}

NA_INLINE uint64_t p2_f32like(const unsigned char *p, size_t n, int mode, double mean,
                              double thr)
{
    unsigned cnt = 0;
#pragma omp simd reduction(+ : cnt)
    for (size_t i = 0; i < n; i++) {
        unsigned sub;
        uint32_t u = load32(p, i, mode, &sub);
        unsigned fin = (u & 0x7fffffffu) < 0x7f800000u;
        double d = fabs((double)na_bits_to_f32(u) - mean);
        cnt += fin & (d > thr);
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
NA_CLONES static uint64_t p2_f32(const unsigned char *p, size_t n, double mean, double thr)
{
    return p2_f32like(p, n, M_F32, mean, thr);
}
NA_CLONES static uint64_t p2_f16(const unsigned char *p, size_t n, double mean, double thr)
{
    return p2_f32like(p, n, M_F16, mean, thr);
}
NA_CLONES static uint64_t p2_bf16(const unsigned char *p, size_t n, double mean, double thr)
{
    return p2_f32like(p, n, M_BF16, mean, thr);
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
    *s = (na_stats_t){n, nnan, npinf, nninf, nzero, nsub, nfin, NAN, NAN, NAN, NAN, 0.0};
    if (nfin == 0)
        return;
    double mean = sum / (double)nfin, m2 = 0.0;
#pragma omp simd reduction(+ : m2)
    for (size_t i = 0; i < n; i++) {
        double x;
        memcpy(&x, p + 8 * i, 8);
        double d = fabs(x) <= 1.7976931348623157e308 ? x - mean : 0.0;
        m2 += d * d;
    }
    s->min = mn;
    s->max = mx;
    s->abs_max = fabs(mn) > fabs(mx) ? fabs(mn) : fabs(mx);
    s->mean = mean;
    s->m2 = m2;
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
    double mean = sum / (double)n, m2 = 0.0;
#pragma omp simd reduction(+ : m2)
    for (size_t i = 0; i < n; i++) {
        double x;
        memcpy(&x, p + 8 * i, 8);
        m2 += (x - mean) * (x - mean);
    }
    *s = (na_stats_t){n, 0, 0, 0, nzero, nsub, n, mn, mx, fabs(mn) > fabs(mx) ? fabs(mn) : fabs(mx),
                      mean, m2};
}

NA_CLONES static uint64_t p2_f64(const unsigned char *p, size_t n, double mean, double thr)
{
    unsigned cnt = 0;
#pragma omp simd reduction(+ : cnt)
    for (size_t i = 0; i < n; i++) {
        double x;
        memcpy(&x, p + 8 * i, 8);
        unsigned fin = fabs(x) <= 1.7976931348623157e308;
        cnt += fin & (fabs(x - mean) > thr);
    }
    return cnt;
}

/* F16 with the F16C instruction set (x86-64, checked at run time): widen
 * a block to binary32 with vcvtph2ps into scratch (exact, as
 * na_f16_to_f32), then run the F32 kernels on it; the subnormal count is
 * taken from the 16-bit codes. About 2x the bit-twiddling loop, which
 * needs ~12 integer operations per element for the same conversion. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(NA_NO_CLONES)
#include <immintrin.h> /* _mm256_cvtph_ps */
#define NA_F16C 1
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

/* Values and classes already decoded (1-byte types, integers, F80). */
static void p1_decoded(const double *v, const unsigned char *c, size_t n, na_stats_t *s)
{
    unsigned nnan = 0, npinf = 0, nninf = 0, nzero = 0, nsub = 0, nfin = 0;
    double mn = INFINITY, mx = -INFINITY, sum = 0.0;
#pragma omp simd reduction(+ : nnan, npinf, nninf, nzero, nsub, nfin, sum) \
    reduction(min : mn) reduction(max : mx)
    for (size_t i = 0; i < n; i++) {
        unsigned fin = c[i] < NA_CL_NAN;
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
    *s = (na_stats_t){n, nnan, npinf, nninf, nzero, nsub, nfin, NAN, NAN, NAN, NAN, 0.0};
    if (nfin == 0)
        return;
    double mean = sum / (double)nfin, m2 = 0.0;
#pragma omp simd reduction(+ : m2)
    for (size_t i = 0; i < n; i++) {
        double d = c[i] < NA_CL_NAN ? v[i] - mean : 0.0;
        m2 += d * d;
    }
    s->min = mn;
    s->max = mx;
    s->abs_max = fabs(mn) > fabs(mx) ? fabs(mn) : fabs(mx);
    s->mean = mean;
    s->m2 = m2;
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

/* ---- layout: gather / byte-swap into host order, and decoding ---- */

static int host_is_big(void)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return 1;
#else
    return 0;
#endif
}

/* Data of a fast-kind block in host order, contiguous: in place when
 * possible, otherwise gathered into s->raw (bytes reversed when the
 * tensor's byte order is not the host's). */
static const unsigned char *host_block(const na_kctx_t *k, const unsigned char *blk,
                                       size_t n, const na_kscratch_t *s)
{
    if (k->direct)
        return blk;
    int swap = (k->order == NA_BIG) != host_is_big();
    size_t es = k->esize;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *src = blk + i * k->stride + k->offset;
        unsigned char *dst = s->raw + i * es;
        for (size_t b = 0; b < es; b++)
            dst[b] = src[swap ? es - 1 - b : b];
    }
    return s->raw;
}

static unsigned char class_of_bits(uint64_t a, uint64_t inf, uint64_t neg, uint64_t submax)
{
    if (a > inf)
        return NA_CL_NAN;
    if (a == inf)
        return neg ? NA_CL_NEG_INF : NA_CL_POS_INF;
    if (a == 0)
        return NA_CL_ZERO;
    return a <= submax ? NA_CL_SUBNORMAL : NA_CL_NORMAL;
}

static void decode_fast(const na_kctx_t *k, const unsigned char *p, size_t n,
                        const na_kscratch_t *s)
{
    for (size_t i = 0; i < n; i++) {
        if (k->kind == NA_KK_F64) {
            uint64_t u;
            memcpy(&u, p + 8 * i, 8);
            memcpy(&s->val[i], &u, 8);
            s->cls[i] = class_of_bits(u & F64_ABS, F64_INF, u >> 63, 0x000fffffffffffffull);
            continue;
        }
        unsigned sub;
        int mode = k->kind == NA_KK_F32 ? M_F32 : k->kind == NA_KK_F16 ? M_F16 : M_BF16;
        uint32_t u = load32(p, i, mode, &sub);
        s->val[i] = (double)na_bits_to_f32(u);
        s->cls[i] = class_of_bits(u & 0x7fffffffu, 0x7f800000u, u >> 31, 0x7fffffu);
        if (mode == M_F16 && s->cls[i] <= NA_CL_SUBNORMAL && (u & 0x7fffffffu) != 0)
            s->cls[i] = sub ? NA_CL_SUBNORMAL : NA_CL_NORMAL;
    }
}

void na_k_decode(const na_kctx_t *k, const unsigned char *blk, size_t n, const na_kscratch_t *s)
{
    if (k->kind == NA_KK_LUT8) {
        for (size_t i = 0; i < n; i++) {
            unsigned char c = blk[i * k->stride + k->offset];
            s->val[i] = k->lut_val[c];
            s->cls[i] = k->lut_cls[c];
        }
    } else if (k->kind == NA_KK_GENERIC) {
        for (size_t i = 0; i < n; i++)
            s->cls[i] = (unsigned char)na_decode1(k->dtype, k->order,
                                                  blk + i * k->stride + k->offset, &s->val[i]);
    } else {
        decode_fast(k, host_block(k, blk, n, s), n, s);
    }
}

void na_k_pass1(const na_kctx_t *k, const unsigned char *blk, size_t n,
                const na_kscratch_t *s, na_stats_t *out)
{
    na_stats_init(out);
    switch (k->kind) {
    case NA_KK_F32: p1_f32(host_block(k, blk, n, s), n, out); break;
    case NA_KK_F16:
#ifdef NA_F16C
        if (k->f16c) {
            float *w = (float *)(void *)s->val; /* B floats fit in B doubles */
            unsigned nsub = widen_f16c(host_block(k, blk, n, s), n, w);
            p1_f32((const unsigned char *)w, n, out);
            out->subnormal = nsub; /* in F16, not in the widened F32 */
            break;
        }
#endif
        p1_f16(host_block(k, blk, n, s), n, out);
        break;
    case NA_KK_BF16: p1_bf16(host_block(k, blk, n, s), n, out); break;
    case NA_KK_F64: p1_f64(host_block(k, blk, n, s), n, out); break;
    default:
        na_k_decode(k, blk, n, s);
        p1_decoded(s->val, s->cls, n, out);
    }
}

uint64_t na_k_pass2(const na_kctx_t *k, const unsigned char *blk, size_t n, double mean,
                    double thr, const na_kscratch_t *s)
{
    switch (k->kind) {
    case NA_KK_F32: return p2_f32(host_block(k, blk, n, s), n, mean, thr);
    case NA_KK_F16:
#ifdef NA_F16C
        if (k->f16c) {
            float *w = (float *)(void *)s->val;
            widen_f16c(host_block(k, blk, n, s), n, w);
            return p2_f32((const unsigned char *)w, n, mean, thr);
        }
#endif
        return p2_f16(host_block(k, blk, n, s), n, mean, thr);
    case NA_KK_BF16: return p2_bf16(host_block(k, blk, n, s), n, mean, thr);
    case NA_KK_F64: return p2_f64(host_block(k, blk, n, s), n, mean, thr);
    default:
        na_k_decode(k, blk, n, s);
        return p2_decoded(s->val, s->cls, n, mean, thr);
    }
}

/* Element size in bytes of the types the engine decodes; 0 otherwise. */
static size_t elem_bytes(na_dtype_t dt)
{
    switch (dt) {
    case NA_DT_BOOL: case NA_DT_U8: case NA_DT_I8: case NA_DT_F8_E4M3:
    case NA_DT_F8_E5M2: case NA_DT_F8_E8M0: case NA_DT_F8_E4M3FNUZ:
    case NA_DT_F8_E5M2FNUZ:
        return 1;
    case NA_DT_U16: case NA_DT_I16: case NA_DT_F16: case NA_DT_BF16:
        return 2;
    case NA_DT_U32: case NA_DT_I32: case NA_DT_F32:
        return 4;
    case NA_DT_U64: case NA_DT_I64: case NA_DT_F64:
        return 8;
    case NA_DT_F80:
        return 10; /* the 80 significant bits; padding lives in the stride */
    default:
        return 0;
    }
}

na_status_t na_k_setup(na_kctx_t *k, const na_tensor_t *t, na_err_t *err)
{
    size_t es = elem_bytes(t->dtype);
    if (es == 0)
        return na_err_set(err, NA_E_UNSUPPORTED, "%s: unsupported dtype %s", t->name,
                          na_dtype_name(t->dtype));
    if (t->elem_stride == 0 || (size_t)t->elem_offset + es > t->elem_stride)
        return na_err_set(err, NA_E_INTERNAL, "%s: element layout (stride %u, offset %u) "
                          "does not hold a %zu-byte element", t->name,
                          (unsigned)t->elem_stride, (unsigned)t->elem_offset, es);
    k->dtype = t->dtype;
    k->order = t->byte_order;
    k->esize = es;
    k->stride = t->elem_stride;
    k->offset = t->elem_offset;
    switch (t->dtype) {
    case NA_DT_F32: k->kind = NA_KK_F32; break;
    case NA_DT_F64: k->kind = NA_KK_F64; break;
    case NA_DT_F16: k->kind = NA_KK_F16; break;
    case NA_DT_BF16: k->kind = NA_KK_BF16; break;
    default: k->kind = es == 1 ? NA_KK_LUT8 : NA_KK_GENERIC;
    }
    int swap = es > 1 && (t->byte_order == NA_BIG) != host_is_big();
    k->direct = k->stride == es && k->offset == 0 && !swap;
#ifdef NA_F16C
    k->f16c = t->dtype == NA_DT_F16 && __builtin_cpu_supports("avx2") &&
              __builtin_cpu_supports("f16c");
#else
    k->f16c = 0;
#endif
    if (k->kind == NA_KK_LUT8) {
        for (unsigned c = 0; c < 256; c++) {
            unsigned char b = (unsigned char)c;
            k->lut_cls[c] = (unsigned char)na_decode1(t->dtype, t->byte_order, &b,
                                                      &k->lut_val[c]);
        }
    }
    return NA_OK;
}

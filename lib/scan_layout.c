/*
 * scan_layout.c - the non-hot half of the scan kernels: how a tensor's
 * elements are laid out (na_k_setup: kind, stride, byte order, the 1-byte
 * table), gathering a block into host order, decoding a block to values
 * and classes for the serial location scans, and the pass-2 bounds.
 * The hot loops are in scan.c (built with -O3).
 *
 * The classes follow DESIGN.md "Definitions" (subnormal in the element's
 * own dtype); 1-byte types and the other non-float types use na_decode1
 * (dtype.c), the reference decoder, so the scan and the decoder cannot
 * disagree on them.
 */
#include "scan_kernels.h"
#include "decode.h"

#include <math.h>   /* INFINITY, isfinite */
#include <string.h> /* memcpy */

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
const unsigned char *na_k_host_block(const na_kctx_t *k, const unsigned char *blk, size_t n,
                                     const na_kscratch_t *s)
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

/* Values and classes of host-order F32/F64/F16/BF16 data, from the bits:
 * the same values the kernels compute (the widening is exact) and the
 * subnormal class of the element's own dtype. */
static void decode_fast(const na_kctx_t *k, const unsigned char *p, size_t n,
                        const na_kscratch_t *s)
{
    for (size_t i = 0; i < n; i++) {
        if (k->kind == NA_KK_F64) {
            uint64_t u;
            memcpy(&u, p + 8 * i, 8);
            memcpy(&s->val[i], &u, 8);
            s->cls[i] = class_of_bits(u & 0x7fffffffffffffffull, 0x7ff0000000000000ull,
                                      u >> 63, 0x000fffffffffffffull);
            continue;
        }
        uint32_t u;
        if (k->kind == NA_KK_F32) {
            memcpy(&u, p + 4 * i, 4);
        } else {
            uint16_t h;
            memcpy(&h, p + 2 * i, 2);
            u = na_f32_to_bits(k->kind == NA_KK_F16 ? na_f16_to_f32(h) : na_bf16_to_f32(h));
            if (k->kind == NA_KK_F16 && (h & 0x7fffu) != 0 && (h & 0x7c00u) == 0) {
                s->val[i] = (double)na_bits_to_f32(u);
                s->cls[i] = NA_CL_SUBNORMAL; /* a normal binary32 once widened */
                continue;
            }
        }
        s->val[i] = (double)na_bits_to_f32(u);
        s->cls[i] = class_of_bits(u & 0x7fffffffu, 0x7f800000u, u >> 31, 0x7fffffu);
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
        decode_fast(k, na_k_host_block(k, blk, n, s), n, s);
    }
    for (int m = 0; m < k->n_missing; m++) {
        int exact = (k->missing_exact >> m) & 1u; /* 8-byte integers: compare those */
        for (size_t i = 0; i < n; i++)
            if (s->cls[i] < NA_CL_NAN && s->val[i] == k->missing[m] &&
                (!exact || na_load_uint(blk + i * k->stride + k->offset, 8,
                                        k->order == NA_BIG) == k->missing_int[m]))
                s->cls[i] = NA_K_CL_MISSING;
    }
}

/* x - mean > thr, and x - mean < -thr: the two sides of the outlier
 * predicate (na_k_is_outlier), each monotone in x because x - mean is
 * computed exactly rounded. */
static int above(double x, const na_kthr_t *th) { return x - th->mean > th->thr; }
static int below(double x, const na_kthr_t *th) { return x - th->mean < -th->thr; }

/* Doubles and floats in increasing order <-> unsigned keys: the sign
 * bit flipped for positives, all bits for negatives, so -inf < ... < -0
 * < +0 < ... < +inf become consecutive integers. */
static uint64_t dkey(double x)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    return (u >> 63) ? ~u : u | (1ull << 63);
}
static double dval(uint64_t k)
{
    uint64_t u = (k >> 63) ? k & ~(1ull << 63) : ~k;
    double x;
    memcpy(&x, &u, 8);
    return x;
}
static uint32_t fkey(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return (u >> 31) ? ~u : u | (1u << 31);
}
static float fval(uint32_t k)
{
    uint32_t u = (k >> 31) ? k & ~(1u << 31) : ~k;
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* side 1: above(x); side 0: not below(x). Both are false at -inf, true
 * at +inf (mean and thr are finite) and monotone in x. */
static int side_true(double x, const na_kthr_t *th, int side)
{
    return side ? above(x, th) : !below(x, th);
}

/* The smallest double / float where side_true holds, by bisection on the
 * keys: at most 64 / 32 predicate calls. (A walk one ulp at a time from
 * mean +- thr never ends in practice when mean - thr cancels, e.g. mean
 * 0.8, thr 0.8 - 1 ulp: the boundary is ~10^15 ulps of the result away.
 * Found by tests/fuzz/fuzz_safetensors.) */
static double first_double(const na_kthr_t *th, int side)
{
    uint64_t lo = dkey(-INFINITY), hi = dkey(INFINITY);
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (side_true(dval(mid), th, side))
            hi = mid;
        else
            lo = mid;
    }
    return dval(hi);
}
static float first_float(const na_kthr_t *th, int side)
{
    uint32_t lo = fkey(-INFINITY), hi = fkey(INFINITY);
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (side_true((double)fval(mid), th, side))
            hi = mid;
        else
            lo = mid;
    }
    return fval(hi);
}

void na_k_thresholds(na_kthr_t *th, double mean, double thr)
{
    th->mean = mean;
    th->thr = thr;
    if (!isfinite(mean) || !isfinite(thr) || !(thr >= 0)) {
        /* no finite x satisfies |x - mean| > thr: empty on both sides */
        th->dlo = th->flo = -INFINITY;
        th->dhi = th->fhi = INFINITY;
        return;
    }
    /* dhi / fhi: the smallest value that is above; dlo / flo: the
     * largest that is below (one key before the first that is not). */
    th->dhi = first_double(th, 1);
    th->dlo = dval(dkey(first_double(th, 0)) - 1);
    th->fhi = first_float(th, 1);
    th->flo = fval(fkey(first_float(th, 0)) - 1);
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
    k->n_missing = t->n_missing > 0 ? (t->n_missing > 2 ? 2 : t->n_missing) : 0;
    for (int i = 0; i < 2; i++) {
        k->missing[i] = i < k->n_missing ? t->missing[i] : 0.0;
        k->missing_int[i] = t->missing_int[i];
    }
    k->missing_exact = t->missing_exact; /* I64/U64 only (nanaudit.h) */
    if (k->n_missing > 0 && k->kind != NA_KK_LUT8)
        k->kind = NA_KK_GENERIC; /* the fast kernels know no missing values */
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

void na_k_nan_inf_locations(const na_kctx_t *k, const unsigned char *blk, size_t n,
                            const na_kscratch_t *sc, uint64_t e, const na_stats_t *b,
                            size_t cap, na_result_t *r)
{
    /* Decode only when the block's counts show a location still wanted:
     * most blocks hold no NaN/Inf, and the list fills after cap hits. */
    int want_nan = b->nan && r->n_nan_locs < cap;
    int want_inf = (b->pos_inf || b->neg_inf) &&
                   (r->n_inf_locs < cap || (b->pos_inf && r->first_pos_inf == UINT64_MAX) ||
                    (b->neg_inf && r->first_neg_inf == UINT64_MAX));
    if (!want_nan && !want_inf)
        return;
    na_k_decode(k, blk, n, sc);
    for (size_t i = 0; i < n; i++) {
        unsigned c = sc->cls[i];
        if (c == NA_CL_NAN && r->n_nan_locs < cap)
            r->nan_locs[r->n_nan_locs++] = e + i;
        if (c != NA_CL_POS_INF && c != NA_CL_NEG_INF)
            continue;
        if (r->n_inf_locs < cap)
            r->inf_locs[r->n_inf_locs++] = e + i;
        if (c == NA_CL_POS_INF && r->first_pos_inf == UINT64_MAX)
            r->first_pos_inf = e + i;
        if (c == NA_CL_NEG_INF && r->first_neg_inf == UINT64_MAX)
            r->first_neg_inf = e + i;
    }
}

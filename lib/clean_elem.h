/*
 * clean_elem.h - the per-element logic of `nanaudit clean`'s write pass
 * (issue 4's steps, issue 6's GPU kernels): step 1 on a value, the
 * z-score / modified z-score test, step 2's action, step 3, and rounding
 * to the output dtype with the value that reads back. One definition for
 * the CPU (lib/clean.c, lib/clean_encode.c; C11) and the GPU
 * (gpu/clean_kernels.cu; CUDA C++17), so that the two backends write the
 * same bytes and cannot drift; the CPU's unit and CLI tests run this code.
 * Internal to lib/ and gpu/, not installed.
 *
 * Rules (DESIGN.md "Definitions", issue 4):
 *  - finite: |x| <= DBL_MAX (false for NaN and +-Inf), the test the CPU's
 *    vector loops use too; written with fabs so that it means the same in
 *    C and in device code, where isfinite is an overload set;
 *  - rounding: to nearest, ties to even, as numpy's astype and ml_dtypes:
 *    once, directly from double, to the target's precision (p significand
 *    bits, minimum normal exponent emin) with rint() on a power-of-two
 *    scaled copy, which is exact; a cast through float first would round
 *    twice. Results beyond the largest finite value become +-Inf and count
 *    as overflow (IEEE 754-2019, 4.3.1 and 7.4). Integers round half to
 *    even and saturate, counting each saturation (and each NaN, written
 *    as 0) as an overflow.
 *  - F32 NaN: the C conversion on x86-64 and AArch64 keeps the sign and the
 *    top 22 payload bits and sets the quiet bit; CUDA's double-to-float
 *    conversion returns one canonical NaN instead, so NaNs are converted
 *    from their bits here (na_ce_f32), the same on both.
 * Every function is branch-light and free of library state, so it runs on
 * either side; NA_HD (decode.h) is `static inline` in C and
 * `__host__ __device__` under nvcc.
 */
#ifndef NA_CLEAN_ELEM_H
#define NA_CLEAN_ELEM_H

#include "clean.h"
#include "decode.h" /* NA_HD, na_f16_to_f32, na_bf16_to_f32, na_load_uint */

#include <math.h>   /* fabs, rint, ilogb, ldexp, fmin, fmax */
#include <stdint.h> /* uint16_t, UINT64_MAX, INT64_MAX */
#include <string.h> /* memcpy */

#define NA_CE_DBL_MAX 1.7976931348623157e308
#define NA_CE_F16_MAX 65504.0
#define NA_CE_BF16_MAX 3.3895313892515355e38

/* 1 when x is neither NaN nor +-Inf. */
NA_HD int na_ce_finite(double x)
{
    return fabs(x) <= NA_CE_DBL_MAX;
}

/* The quiet NaN that C's NAN macro gives (positive, no payload). */
NA_HD double na_ce_nan(void)
{
    uint64_t u = 0x7FF8000000000000ull;
    double d;
    memcpy(&d, &u, 8);
    return d;
}

NA_HD int na_ce_signbit(double x)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    return (int)(u >> 63);
}

/* Step 1 (non-finite) on value x of feature F; *replaced is set when x
 * was replaced (zero/mean/value=X). A passthrough feature has only
 * non-finite values and keeps them; a missing-value stand-in (miss: the
 * tensor has markers, clean.h) is left alone. */
NA_HD double na_ce_step1(const na_clean_opts_t *o, const na_clean_feat_t *F, double x, int miss,
                         int *replaced)
{
    if (na_ce_finite(x) || F->passthrough || (miss && na_clean_is_missing(x)))
        return x;
    if (o->nonfinite == NA_NF_ZERO || o->nonfinite == NA_NF_MEAN || o->nonfinite == NA_NF_VALUE) {
        *replaced = 1;
        return F->nf_fill;
    }
    return x;
}

/* 1 when finite v is an outlier under the step-2 parameters of F:
 * |v - mean| > K std (strict; std == 0 flags nothing), or the modified
 * z-score test of median.h. */
NA_HD int na_ce_is_outlier(const na_clean_opts_t *o, const na_clean_feat_t *F, double v)
{
    if (o->method == NA_OM_ZSCORE)
        return F->scale > 0 && fabs(v - F->center) > o->k * F->scale;
    if (o->method == NA_OM_MAD)
        return na_mad_is_outlier(v, F->center, F->scale, F->meanad, o->k);
    return 0;
}

/* Step 2 on value v of feature F: 0 when v is not flagged (not finite,
 * passed through, or no outlier); else 1, with *out the value the action
 * leaves: clip moves it to the bound on its side of the center, nan makes
 * it NaN, mean replaces it by F->fill2, drop (and no action) leave it
 * (the caller drops the whole row). */
NA_HD int na_ce_step2(const na_clean_opts_t *o, const na_clean_feat_t *F, double v, double *out)
{
    if (!na_ce_finite(v) || F->passthrough || !na_ce_is_outlier(o, F, v))
        return 0;
    switch (o->action) {
    case NA_OA_CLIP: *out = v < F->center ? F->lo_bound : F->hi_bound; break;
    case NA_OA_NAN: *out = na_ce_nan(); break;
    case NA_OA_MEAN: *out = F->fill2; break;
    default: *out = v; break;
    }
    return 1;
}

/* Step 3 (normalize) on value v of feature F; non-finite values and
 * passthrough features are left as they are. */
NA_HD double na_ce_step3(const na_clean_opts_t *o, const na_clean_feat_t *F, double v)
{
    if (!na_ce_finite(v) || F->passthrough)
        return v;
    if (o->normalize == NA_NORM_MINMAX) {
        if (F->n_max == F->n_min)
            return o->lo;
        /* The quotient first, as the numpy reference computes it:
         * (x - min) / (max - min), then scaled to LO:HI (exact for 0:1).
         * When max - min overflows (values beyond +-DBL_MAX/2) that would
         * be x/Inf = 0 or Inf/Inf = NaN: then the same quotient on halves,
         * exact scalings by 2 that cannot overflow (issue 4: never NaN or
         * Inf); likewise for an HI - LO that overflows. */
        double d = F->n_max - F->n_min;
        double q = na_ce_finite(d) ? (v - F->n_min) / d
                                   : (v / 2 - F->n_min / 2) / (F->n_max / 2 - F->n_min / 2);
        if (o->lo == 0.0 && o->hi == 1.0)
            return q;
        if (na_ce_finite(o->hi - o->lo))
            return o->lo + q * (o->hi - o->lo);
        double h = q * (o->hi / 2 - o->lo / 2);
        return fmin(fmax((o->lo + h) + h, o->lo), o->hi);
    }
    if (o->normalize == NA_NORM_ZSCORE)
        return F->n_std == 0.0 ? 0.0 : ((v - F->n_mean) - F->n_mean_lo) / F->n_std;
    return v;
}

/* 1 when step 3 made the finite value x the non-finite v, for a float
 * output dtype: its arithmetic overflowed a double (a z-score with an
 * --apply-params std far below the run's spread; round 36b: 98 values
 * became +-Inf and "overflow 0"). na_ce_put counts only the rounding of a
 * finite v, and an integer type counts v's saturation itself. */
NA_HD int na_ce_step3_over(int int_out, double x, double v)
{
    return !int_out && na_ce_finite(x) && !na_ce_finite(v);
}

/* 1 when v, about to be written to an integer dtype (int_out), is NaN or
 * +-Inf: integers have neither, so it would come back as 0 or a bound -
 * a value the input did not have (issue 4). A missing-value stand-in is
 * not: it writes its marker. */
NA_HD int na_ce_unrepresentable(int int_out, double v)
{
    return int_out && !na_ce_finite(v) && !na_clean_is_missing(v);
}

/* (float)v, with NaNs converted from their bits as x86-64's cvtsd2ss
 * does (sign, quiet bit, top 22 payload bits), on the GPU too. */
NA_HD float na_ce_f32(double v)
{
    if (v != v) {
        uint64_t u;
        memcpy(&u, &v, 8);
        uint32_t b = (uint32_t)(u >> 32 & 0x80000000u) | 0x7FC00000u |
                     (uint32_t)(u >> 29 & 0x003FFFFFu);
        return na_bits_to_f32(b);
    }
    return (float)v;
}

/* (double)f, with NaNs widened from their bits as x86-64's cvtss2sd
 * does (sign, quiet bit set, the 23 payload bits on top of the 52), so
 * that a NaN kept through the steps writes the same bytes from the GPU
 * (whose float-to-double conversion need not keep payloads). */
NA_HD double na_ce_widen(float f)
{
    if (f != f) {
        uint64_t u = na_f32_to_bits(f);
        u = (u & 0x80000000u) << 32 | 0x7FF8000000000000ull | (u & 0x7FFFFFu) << 29;
        double d;
        memcpy(&d, &u, 8);
        return d;
    }
    return (double)f;
}

/* Round finite v to p significand bits with minimum normal exponent emin
 * (subnormals keep the quantum 2^(emin-p+1)). Exact: scaling by a power
 * of two loses nothing in double for the ranges of F16 and BF16. */
NA_HD double na_ce_round_to(double v, int p, int emin)
{
    if (v == 0.0)
        return v;
    int e = ilogb(v);
    if (e < emin)
        e = emin;
    double q = ldexp(1.0, e - (p - 1));
    return rint(v / q) * q;
}

/* The top `bits` bits of NaN r's fraction (a binary16/bfloat16 NaN
 * widened to double keeps its payload there: the F16 fraction shifted
 * by 42, the BF16 one by 45), never 0: a kept NaN keeps its sign and
 * payload (-NaN 0xFE00 was written 0x7E00). A signaling NaN was made
 * quiet by the widening, as numpy's astype makes it. */
NA_HD uint16_t na_ce_nan_payload(double r, int bits)
{
    uint64_t b;
    memcpy(&b, &r, 8);
    uint16_t m = (uint16_t)((b >> (52 - bits)) & ((1u << bits) - 1));
    return m ? m : (uint16_t)(1u << (bits - 1));
}

/* binary16 bits of r, which is already representable (or +-Inf/NaN). */
NA_HD uint16_t na_ce_f16_bits(double r)
{
    uint16_t s = na_ce_signbit(r) ? 0x8000 : 0;
    double a = fabs(r);
    if (r != r)
        return (uint16_t)(s | 0x7C00 | na_ce_nan_payload(r, 10));
    if (a > NA_CE_F16_MAX)
        return (uint16_t)(s | 0x7C00);
    if (a < 6.103515625e-05) /* 2^-14: subnormal, m * 2^-24 */
        return (uint16_t)(s | (uint16_t)ldexp(a, 24));
    int e = ilogb(a);
    uint16_t m = (uint16_t)(ldexp(a, 10 - e) - 1024.0);
    return (uint16_t)(s | (uint16_t)((e + 15) << 10) | m);
}

/* Little-endian store of the low `bytes` bytes of u. */
NA_HD void na_ce_put_le(unsigned char *p, uint64_t u, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        p[i] = (unsigned char)(u >> (8 * i));
}

/* Integer range of dt as doubles; both bounds are exact powers of two
 * (minus one for the maxima below 2^53, which doubles hold exactly).
 * Returns 2 for the 64-bit types, whose hi is one past the maximum. */
NA_HD int na_ce_int_range(na_dtype_t dt, double *lo, double *hi, unsigned *bytes)
{
    switch (dt) {
    case NA_DT_U8: *lo = 0; *hi = 255; *bytes = 1; return 1;
    case NA_DT_I8: *lo = -128; *hi = 127; *bytes = 1; return 1;
    case NA_DT_U16: *lo = 0; *hi = 65535; *bytes = 2; return 1;
    case NA_DT_I16: *lo = -32768; *hi = 32767; *bytes = 2; return 1;
    case NA_DT_U32: *lo = 0; *hi = 4294967295.0; *bytes = 4; return 1;
    case NA_DT_I32: *lo = -2147483648.0; *hi = 2147483647.0; *bytes = 4; return 1;
    case NA_DT_U64: *lo = 0; *hi = 18446744073709551616.0; *bytes = 8; return 2;
    case NA_DT_I64: *lo = -9223372036854775808.0; *hi = 9223372036854775808.0; *bytes = 8; return 2;
    default: return 0;
    }
}

/* Integer dt: round half to even, saturate; the value it reads back (as
 * na_decode1 gives it) in *back; 1 on saturation or NaN. */
NA_HD int na_ce_put_int(na_dtype_t dt, double v, unsigned char *p, double *back)
{
    /* initialised: na_ce_int_range leaves them unset for a non-integer
     * dtype, and gcc -fsanitize=address warns */
    double lo = 0, hi = 0;
    unsigned bytes = 0;
    int kind = na_ce_int_range(dt, &lo, &hi, &bytes);
    int uns = dt == NA_DT_U64 || dt == NA_DT_U32 || dt == NA_DT_U16 || dt == NA_DT_U8;
    int over = v != v;
    double r = over ? 0.0 : rint(v);
    if (r < lo) {
        r = lo;
        over = 1;
    }
    uint64_t u;
    /* 64-bit types: hi is 2^63 / 2^64, one past the maximum, and not
     * representable in the type; saturate to the maximum integer. The
     * narrower ones saturate to hi itself: INT64_MAX's low bytes would be
     * all ones, -1 for a signed type (I8 200 came out as -1). */
    if (kind == 2 ? r >= hi : r > hi) {
        over = 1;
        if (kind == 2)
            u = dt == NA_DT_U64 ? UINT64_MAX : (uint64_t)INT64_MAX;
        else
            u = (uint64_t)(int64_t)hi;
    } else {
        u = uns ? (uint64_t)r : (uint64_t)(int64_t)r; /* two's complement bytes */
    }
    na_ce_put_le(p, u, bytes);
    /* read back as na_decode1 does: C's integer -> double conversion */
    u = na_load_uint(p, bytes, 0);
    *back = uns ? (double)u : (double)na_sign_extend(u, bytes * 8);
    return over;
}

/* Round v to dtype dt (F64 F32 F16 BF16, an integer or BOOL; little-endian) at
 * p, and set *back to the value those bytes decode to (the `after`
 * statistics are of what a reader sees). Returns 1 when a finite value
 * overflowed (became +-Inf, or saturated for an integer type; NaN into
 * an integer type gives 0 and counts too). */
NA_HD int na_ce_put(na_dtype_t dt, double v, unsigned char *p, double *back)
{
    switch (dt) {
    case NA_DT_F64:
        memcpy(p, &v, 8);
        *back = v;
        return 0;
    case NA_DT_F32: {
        float f = na_ce_f32(v); /* current mode: nearest-even */
        memcpy(p, &f, 4);
        *back = f;
        return fabsf(f) > 3.4028234663852886e38f && na_ce_finite(v);
    }
    case NA_DT_F16: {
        double r = na_ce_finite(v) ? na_ce_round_to(v, 11, -14) : v;
        uint16_t h = na_ce_f16_bits(r);
        na_ce_put_le(p, h, 2);
        *back = na_f16_to_f32(h);
        return na_ce_finite(v) && fabs(r) > NA_CE_F16_MAX;
    }
    case NA_DT_BF16: {
        double r = na_ce_finite(v) ? na_ce_round_to(v, 8, -126) : v;
        int over = na_ce_finite(v) && fabs(r) > NA_CE_BF16_MAX;
        /* exact: r has 8 significant bits */
        uint32_t u = na_f32_to_bits((float)r);
        if (over)
            u = na_ce_signbit(r) ? 0xFF800000u : 0x7F800000u;
        if (v != v)
            u = (na_ce_signbit(v) ? 0xFF800000u : 0x7F800000u) |
                ((uint32_t)na_ce_nan_payload(v, 7) << 16);
        uint16_t h = (uint16_t)(u >> 16);
        na_ce_put_le(p, h, 2);
        *back = na_bf16_to_f32(h);
        return over;
    }
    case NA_DT_BOOL: /* a --together follower's own 0.0 or 1.0 (na_clean_prepare) */
        p[0] = (unsigned char)(v != 0.0);
        *back = p[0];
        return 0;
    default:
        return na_ce_put_int(dt, v, p, back);
    }
}

#endif /* NA_CLEAN_ELEM_H */

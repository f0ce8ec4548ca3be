/*
 * clean_encode.c - rounding a double back to a tensor dtype for
 * `nanaudit clean` (output dtype = input dtype, DESIGN.md / issue 4).
 *
 * Floats round to nearest, ties to even, as numpy's astype and ml_dtypes
 * do: the value is rounded once, directly from double, to the target's
 * precision (p significand bits, minimum normal exponent emin) with rint()
 * on a power-of-two-scaled copy, which is exact; a double cast through
 * float first would round twice. Results beyond the largest finite value
 * become +-Inf and count as overflow (IEEE 754-2019, 4.3.1 and 7.4).
 * Integers round half to even and saturate, counting each saturation
 * (and each NaN, written as 0) as an overflow.
 */
#include "clean.h"

#include <math.h>   /* rint, ilogb, ldexp, isnan */
#include <stdint.h> /* uint16_t */
#include <string.h> /* memcpy */

int na_clean_dtype_ok(na_dtype_t dt)
{
    switch (dt) {
    case NA_DT_F64: case NA_DT_F32: case NA_DT_F16: case NA_DT_BF16:
    case NA_DT_U8: case NA_DT_I8: case NA_DT_U16: case NA_DT_I16:
    case NA_DT_U32: case NA_DT_I32: case NA_DT_U64: case NA_DT_I64:
        return 1;
    default:
        return 0;
    }
}

/* Round finite v to p significand bits with minimum normal exponent emin
 * (subnormals keep the quantum 2^(emin-p+1)). Exact: scaling by a power
 * of two loses nothing in double for the ranges of F16 and BF16. */
static double round_to(double v, int p, int emin)
{
    if (v == 0.0)
        return v;
    int e = ilogb(v);
    if (e < emin)
        e = emin;
    double q = ldexp(1.0, e - (p - 1));
    return rint(v / q) * q;
}

static void put16(void *p, uint16_t h)
{
    uint8_t b[2] = {(uint8_t)(h & 0xff), (uint8_t)(h >> 8)};
    memcpy(p, b, 2);
}

static void put_le(void *p, uint64_t u, unsigned bytes)
{
    uint8_t b[8];
    for (unsigned i = 0; i < bytes; i++)
        b[i] = (uint8_t)(u >> (8 * i));
    memcpy(p, b, bytes);
}

/* binary16 bits of r, which is already representable (or +-Inf/NaN). */
static uint16_t f16_bits(double r)
{
    uint16_t s = signbit(r) ? 0x8000 : 0;
    double a = fabs(r);
    if (isnan(r))
        return 0x7E00;
    if (a > 65504.0)
        return s | 0x7C00;
    if (a < 6.103515625e-05) /* 2^-14: subnormal, m * 2^-24 */
        return s | (uint16_t)ldexp(a, 24);
    int e = ilogb(a);
    uint16_t m = (uint16_t)(ldexp(a, 10 - e) - 1024.0);
    return s | (uint16_t)((e + 15) << 10) | m;
}

/* Integer range of dt as doubles; both bounds are exact powers of two
 * (minus one for the maxima below 2^53, which doubles hold exactly). */
static int int_range(na_dtype_t dt, double *lo, double *hi, unsigned *bytes)
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

static int encode_int(na_dtype_t dt, double v, void *p)
{
    /* initialised: int_range leaves them unset for a non-integer dtype,
     * and gcc -fsanitize=address (scripts/test.sh stage 4) warns */
    double lo = 0, hi = 0;
    unsigned bytes = 0;
    int kind = int_range(dt, &lo, &hi, &bytes);
    int over = 0;
    double r = isnan(v) ? 0.0 : rint(v);
    if (isnan(v))
        over = 1;
    if (r < lo) {
        r = lo;
        over = 1;
    }
    /* 64-bit types: hi is 2^63 / 2^64, one past the maximum, and not
     * representable in the type; saturate to the maximum integer. */
    if (kind == 2 ? r >= hi : r > hi) {
        over = 1;
        uint64_t mx = dt == NA_DT_U64 ? UINT64_MAX : (uint64_t)INT64_MAX;
        put_le(p, mx, 8);
        return over;
    }
    uint64_t u;
    if (dt == NA_DT_U64 || dt == NA_DT_U32 || dt == NA_DT_U16 || dt == NA_DT_U8)
        u = (uint64_t)r;
    else
        u = (uint64_t)(int64_t)r; /* two's complement bytes */
    put_le(p, u, bytes);
    return over;
}

int na_clean_encode(na_dtype_t dt, double v, void *p)
{
    switch (dt) {
    case NA_DT_F64:
        memcpy(p, &v, 8);
        return 0;
    case NA_DT_F32: {
        float f = (float)v; /* C conversion: current mode, nearest-even */
        memcpy(p, &f, 4);
        return isinf(f) && isfinite(v);
    }
    case NA_DT_F16: {
        double r = isfinite(v) ? round_to(v, 11, -14) : v;
        put16(p, f16_bits(r));
        return isfinite(v) && fabs(r) > 65504.0;
    }
    case NA_DT_BF16: {
        double r = isfinite(v) ? round_to(v, 8, -126) : v;
        float f = (float)r; /* exact: r has 8 significant bits */
        int over = isfinite(v) && fabs(r) > 3.3895313892515355e38;
        if (over)
            f = signbit(r) ? -INFINITY : INFINITY;
        uint32_t u;
        memcpy(&u, &f, 4);
        if (isnan(v))
            u = 0x7FC00000u;
        put16(p, (uint16_t)(u >> 16));
        return over;
    }
    default:
        return encode_int(dt, v, p);
    }
}

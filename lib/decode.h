/*
 * decode.h - per-element decoding of the 16-bit float formats, shared by
 * the CPU kernels (C11) and the CUDA kernels (C++17): one definition, so
 * the backends cannot drift. Everything is static inline and branch-free
 * so the CPU loops vectorise.
 *
 * Formats:
 *  - F16: IEEE 754-2008 binary16 (1 sign, 5 exponent bias 15, 10 fraction).
 *  - BF16: the upper 16 bits of an IEEE binary32 (1, 8 bias 127, 7).
 * The conversion to binary32 is exact for both (every binary16 and bfloat16
 * value is a binary32 value), including subnormals, +-0, +-Inf, and NaN
 * (payload kept, quiet bit as stored).
 */
#ifndef NA_DECODE_H
#define NA_DECODE_H

#include <math.h>   /* ldexp */
#include <stdint.h>
#include <string.h> /* memcpy */

#if defined(__CUDACC__)
#define NA_HD __host__ __device__ __forceinline__
#else
#define NA_HD static inline
#endif

NA_HD float na_bits_to_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

NA_HD uint32_t na_f32_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* bfloat16 -> binary32: a 16-bit shift. */
NA_HD float na_bf16_to_f32(uint16_t b) { return na_bits_to_f32((uint32_t)b << 16); }

/* binary16 -> binary32, exact. Normal numbers rebias the exponent
 * (+112 << 23); Inf/NaN (exponent 31) get exponent 255; subnormals
 * (exponent 0) are scaled: value = fraction * 2^-24, computed exactly as
 * (float)fraction * 2^-24 (fraction < 2^10 converts exactly, and the
 * product, >= 2^-24, is a normal binary32, so the multiply is exact).
 * The three candidates are computed unconditionally and selected, so the
 * function stays branch-free and vectorises. Verified for all 65536 codes
 * against numpy by tests/unit/test_dtype.c. */
NA_HD float na_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = (uint32_t)(h & 0x7fffu);         /* exponent + fraction */
    uint32_t exp = em >> 10;
    uint32_t normal = (em << 13) + (112u << 23);   /* rebias 15 -> 127 */
    uint32_t infnan = (em << 13) | 0x7f800000u;     /* exponent 31 -> 255 */
    /* subnormal or zero: fraction * 2^-24 (exact, see above) */
    float sub = (float)(em & 0x3ffu) * 5.9604644775390625e-08f; /* 2^-24 */
    uint32_t subbits = na_f32_to_bits(sub);
    uint32_t r = exp == 0 ? subbits : (exp == 31 ? infnan : normal);
    return na_bits_to_f32(r | sign);
}

/* Classification helpers on raw bits (no decoding needed). */
NA_HD int na_f16_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
NA_HD int na_f16_is_inf(uint16_t h) { return (h & 0x7fffu) == 0x7c00u; }
NA_HD int na_f16_is_subnormal(uint16_t h) { return (h & 0x7c00u) == 0 && (h & 0x3ffu) != 0; }
NA_HD int na_bf16_is_nan(uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0; }
NA_HD int na_bf16_is_inf(uint16_t b) { return (b & 0x7fffu) == 0x7f80u; }
NA_HD int na_bf16_is_subnormal(uint16_t b) { return (b & 0x7f80u) == 0 && (b & 0x7fu) != 0; }
NA_HD int na_f32_bits_is_subnormal(uint32_t u)
{
    return (u & 0x7f800000u) == 0 && (u & 0x7fffffu) != 0;
}
NA_HD int na_f64_bits_is_subnormal(uint64_t u)
{
    return (u & 0x7ff0000000000000ull) == 0 && (u & 0x000fffffffffffffull) != 0;
}

/* ---- integers and x87 F80 (used by na_decode1 in dtype.c and by the
 * CUDA kernels in gpu/kernels.cu: one definition for both) ---------- */

/* Unsigned value of the `nbytes` (1..8) bytes at p, stored most
 * significant byte first when big != 0 (byte order of the tensor, not
 * of the host), so it works on any host and on the GPU. */
NA_HD uint64_t na_load_uint(const unsigned char *p, unsigned nbytes, int big)
{
    uint64_t u = 0;
    for (unsigned i = 0; i < nbytes; i++) {
        unsigned j = big ? i : nbytes - 1 - i; /* most significant first */
        u = (u << 8) | p[j];
    }
    return u;
}

/* Two's complement value of the low `bits` (1..64) bits of u. */
NA_HD int64_t na_sign_extend(uint64_t u, unsigned bits)
{
    uint64_t m = 1ull << (bits - 1);
    uint64_t x = (u ^ m) - m; /* wraps: the standard two's complement trick */
    int64_t r;
    memcpy(&r, &x, sizeof r);
    return r;
}

/* x87 F80 significand sig * 2^e2 rounded once to the nearest double, ties
 * to even (the IEEE default, and what the x87 FST to double does),
 * subnormal results included: the bits to drop are chosen so that the
 * result has at most 53 significant bits and an exponent >= -1074, then
 * rounded by hand, then scaled exactly. Overflow gives +Inf (the caller
 * saturates). Source: IEEE 754-2008 section 4.3.1 (roundTiesToEven). */
NA_HD double na_f80_round(uint64_t sig, int e2)
{
    int nbits = 0;
    for (uint64_t t = sig; t; t >>= 1)
        nbits++;
    int s = nbits - 53;
    if (-1074 - e2 > s)
        s = -1074 - e2;
    if (s <= 0)
        return ldexp((double)sig, e2);
    if (s > 64)
        return 0.0;
    uint64_t m, rem, half = 1ull << (s - 1);
    if (s == 64) {
        m = 0;
        rem = sig;
    } else {
        m = sig >> s;
        rem = sig & ((1ull << s) - 1);
    }
    if (rem > half || (rem == half && (m & 1)))
        m++;
    return ldexp((double)m, e2 + s); /* m <= 2^53: exact as a double */
}

/* Decode an F80 from its 64-bit significand `sig` (explicit integer bit
 * J = bit 63) and its sign/exponent word `se`; returns the na_class_t
 * value (as int, so this header needs no nanaudit.h). Rules and the
 * saturation to +-DBL_MAX: na_decode1 in dtype.c (Intel SDM Vol. 1,
 * 8.2.2). Class numbers: 0 normal, 1 zero, 2 subnormal, 3 NaN, 4 +Inf,
 * 5 -Inf (na_class_t). */
NA_HD int na_f80_decode(uint64_t sig, unsigned se, double *value)
{
    unsigned ex = se & 0x7fffu;
    int neg = (int)((se >> 15) & 1u);
    int j = (int)(sig >> 63);
    if (ex == 0x7fffu) {
        if (!j || (sig << 1) != 0) {
            *value = na_bits_to_f32(0x7fc00000u); /* NaN */
            return 3;
        }
        *value = (double)na_bits_to_f32(neg ? 0xff800000u : 0x7f800000u);
        return neg ? 5 : 4;
    }
    if (ex != 0 && !j) { /* unnormal: invalid operand since the 80387 */
        *value = na_bits_to_f32(0x7fc00000u);
        return 3;
    }
    double mag = na_f80_round(sig, (ex == 0 ? 1 : (int)ex) - 16383 - 63);
    if (mag > 1.7976931348623157e308) /* DBL_MAX */
        mag = 1.7976931348623157e308;
    *value = neg ? -mag : mag;
    if (ex == 0)
        return sig == 0 ? 1 : 2;
    return 0;
}

#endif /* NA_DECODE_H */

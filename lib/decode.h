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

#include <stdint.h>
#include <string.h>

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

#endif /* NA_DECODE_H */

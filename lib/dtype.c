/*
 * dtype.c - element types: names, sizes, and the reference decoder
 * na_decode1 that turns one stored element into a double and a class.
 *
 * na_decode1 is the slow, obviously-correct path: readers, tests and the
 * scan kernels' tail loops use it, and tests/unit/test_dtype.c checks it
 * exhaustively (every 8- and 16-bit code) against tables that ml_dtypes
 * and numpy produced (tests/tools/gen_dtype_tables.py). The fast kernels
 * decode F16/BF16 through lib/decode.h, which na_decode1 also uses, so
 * the same tables check both.
 *
 * Sources of the format rules:
 *  - names: safetensors' Dtype enum,
 *    https://github.com/huggingface/safetensors/blob/main/safetensors/src/tensor.rs
 *  - F16: IEEE 754-2008 binary16; BF16: the top half of binary32.
 *  - F8_*: OCP "8-bit Floating Point Specification (OFP8)" rev. 1.0 and
 *    "Microscaling Formats (MX)" v1.0 (E8M0), as implemented by ml_dtypes
 *    (https://github.com/jax-ml/ml_dtypes): float8_e4m3fn, float8_e5m2,
 *    float8_e8m0fnu, float8_e4m3fnuz, float8_e5m2fnuz.
 *  - F80: x87 double extended precision, Intel SDM Vol. 1, section 4.2.2
 *    and 8.2.2 ("Unsupported Double Extended-Precision Floating-Point
 *    Encodings and Pseudo-Denormals").
 */
#include "nanaudit.h"
#include "decode.h"

#include <float.h>  /* DBL_MAX */
#include <math.h>   /* ldexp, NAN, INFINITY */
#include <string.h> /* memcmp, strlen */

/* Indexed by na_dtype_t; bits as stored (C64: both parts). */
static const struct {
    const char *name;
    unsigned bits;
} dtypes[NA_DT_COUNT] = {
    [NA_DT_INVALID] = {"INVALID", 0},
    [NA_DT_BOOL] = {"BOOL", 8},
    [NA_DT_U8] = {"U8", 8},
    [NA_DT_I8] = {"I8", 8},
    [NA_DT_U16] = {"U16", 16},
    [NA_DT_I16] = {"I16", 16},
    [NA_DT_U32] = {"U32", 32},
    [NA_DT_I32] = {"I32", 32},
    [NA_DT_U64] = {"U64", 64},
    [NA_DT_I64] = {"I64", 64},
    [NA_DT_F16] = {"F16", 16},
    [NA_DT_BF16] = {"BF16", 16},
    [NA_DT_F32] = {"F32", 32},
    [NA_DT_F64] = {"F64", 64},
    [NA_DT_F8_E4M3] = {"F8_E4M3", 8},
    [NA_DT_F8_E5M2] = {"F8_E5M2", 8},
    [NA_DT_F8_E8M0] = {"F8_E8M0", 8},
    [NA_DT_F8_E4M3FNUZ] = {"F8_E4M3FNUZ", 8},
    [NA_DT_F8_E5M2FNUZ] = {"F8_E5M2FNUZ", 8},
    [NA_DT_C64] = {"C64", 64},
    [NA_DT_F4] = {"F4", 4},
    [NA_DT_F6_E2M3] = {"F6_E2M3", 6},
    [NA_DT_F6_E3M2] = {"F6_E3M2", 6},
    /* Not a safetensors name: ours for x87 long double (DESIGN.md). 80
     * significant bits; files usually pad it to 12 or 16 bytes, which the
     * reader expresses through na_tensor_t.elem_stride. */
    [NA_DT_F80] = {"F80", 80},
};

static int valid(na_dtype_t dt) { return dt > NA_DT_INVALID && dt < NA_DT_COUNT; }

const char *na_dtype_name(na_dtype_t dt)
{
    return valid(dt) ? dtypes[dt].name : "INVALID";
}

na_dtype_t na_dtype_from_name(const char *name, size_t len)
{
    if (name == NULL)
        return NA_DT_INVALID;
    for (int i = NA_DT_INVALID + 1; i < NA_DT_COUNT; i++) {
        const char *n = dtypes[i].name;
        if (strlen(n) == len && memcmp(n, name, len) == 0)
            return (na_dtype_t)i;
    }
    return NA_DT_INVALID;
}

unsigned na_dtype_bits(na_dtype_t dt) { return valid(dt) ? dtypes[dt].bits : 0; }

int na_dtype_supported(na_dtype_t dt)
{
    /* F4 and F6_*: safetensors packs them below a byte and no reference
     * reader agrees on the packing yet, so they fail closed (exit 3,
     * "unsupported dtype F4 in tensor X") instead of being guessed. */
    return valid(dt) && dt != NA_DT_F4 && dt != NA_DT_F6_E2M3 && dt != NA_DT_F6_E3M2;
}

int na_dtype_is_float(na_dtype_t dt)
{
    switch (dt) {
    case NA_DT_F16: case NA_DT_BF16: case NA_DT_F32: case NA_DT_F64:
    case NA_DT_F8_E4M3: case NA_DT_F8_E5M2: case NA_DT_F8_E8M0:
    case NA_DT_F8_E4M3FNUZ: case NA_DT_F8_E5M2FNUZ:
    case NA_DT_C64: case NA_DT_F80:
        return 1;
    default: /* integers, BOOL; F4/F6_* are "fn" types without NaN */
        return 0;
    }
}

void na_unravel(uint64_t flat, int ndim, const uint64_t *shape, uint64_t *idx)
{
    for (int i = ndim - 1; i >= 0; i--) {
        uint64_t d = shape[i];
        if (d == 0) { /* empty tensor: no element has an index */
            idx[i] = 0;
            continue;
        }
        idx[i] = flat % d;
        flat /= d;
    }
}

/* ---- loading n-byte unsigned integers in either byte order ---------- */

/* Assembled byte by byte, so the host's own byte order and the pointer's
 * alignment do not matter. */
static uint64_t load_uint(const void *p, unsigned nbytes, na_endian_t e)
{
    return na_load_uint((const unsigned char *)p, nbytes, e == NA_BIG); /* decode.h */
}

/* ---- integers -------------------------------------------------------- */

static na_class_t int_class(double v) { return v == 0 ? NA_CL_ZERO : NA_CL_NORMAL; }

/* Two's complement value of the low `bits` bits of u. */
static int64_t sign_extend(uint64_t u, unsigned bits)
{
    return na_sign_extend(u, bits); /* decode.h, shared with the GPU */
}

/* ---- 8-bit floats ----------------------------------------------------- */

/* Magnitude of a minifloat from its exponent field `ef`, its mantissa
 * field `mf` of `mbits` bits and its exponent bias `bias`:
 * subnormal (ef == 0): mf * 2^(1-bias-mbits); normal: (2^mbits + mf) *
 * 2^(ef-bias-mbits). ldexp of a small integer is exact here. */
static double minifloat_mag(unsigned ef, unsigned mf, int mbits, int bias)
{
    if (ef == 0)
        return ldexp((double)mf, 1 - bias - mbits);
    return ldexp((double)((1u << mbits) + mf), (int)ef - bias - mbits);
}

/* Decode a finite 8-bit float code with exponent width ebits (mantissa
 * 7-ebits, sign in bit 7). NaN and Inf codes differ per format and are
 * handled by the caller, decode_f8. */
static na_class_t f8_finite(unsigned code, int ebits, int bias, double *value)
{
    int mbits = 7 - ebits;
    unsigned ef = (code >> mbits) & ((1u << ebits) - 1);
    unsigned mf = code & ((1u << mbits) - 1);
    double mag = minifloat_mag(ef, mf, mbits, bias);
    *value = (code & 0x80) ? -mag : mag;
    if (ef == 0)
        return mf == 0 ? NA_CL_ZERO : NA_CL_SUBNORMAL;
    return NA_CL_NORMAL;
}

static na_class_t nan_out(double *value)
{
    *value = NAN;
    return NA_CL_NAN;
}

static na_class_t decode_f8(na_dtype_t dt, unsigned c, double *value)
{
    switch (dt) {
    case NA_DT_F8_E4M3: /* e4m3fn: S.1111.111 is NaN, no Inf */
        return (c & 0x7f) == 0x7f ? nan_out(value) : f8_finite(c, 4, 7, value);
    case NA_DT_F8_E5M2: /* IEEE-like: exponent 31 is Inf (m 0) or NaN */
        if ((c & 0x7c) == 0x7c) {
            if (c & 3)
                return nan_out(value);
            *value = (c & 0x80) ? -INFINITY : INFINITY;
            return (c & 0x80) ? NA_CL_NEG_INF : NA_CL_POS_INF;
        }
        return f8_finite(c, 5, 15, value);
    case NA_DT_F8_E4M3FNUZ: /* 0x80 ("-0") is the only NaN */
        return c == 0x80 ? nan_out(value) : f8_finite(c, 4, 8, value);
    case NA_DT_F8_E5M2FNUZ:
        return c == 0x80 ? nan_out(value) : f8_finite(c, 5, 16, value);
    default: /* NA_DT_F8_E8M0: unsigned exponent only, 2^(c-127) */
        if (c == 0xff)
            return nan_out(value);
        *value = ldexp(1.0, (int)c - 127);
        return NA_CL_NORMAL; /* no zero, no subnormal in E8M0 */
    }
}

/* ---- IEEE 16/32/64 ----------------------------------------------------- */

static na_class_t ieee_class(double v, int subnormal)
{
    if (v != v)
        return NA_CL_NAN;
    if (v == INFINITY)
        return NA_CL_POS_INF;
    if (v == -INFINITY)
        return NA_CL_NEG_INF;
    if (v == 0)
        return NA_CL_ZERO;
    return subnormal ? NA_CL_SUBNORMAL : NA_CL_NORMAL;
}

static na_class_t decode_ieee(na_dtype_t dt, na_endian_t e, const void *p, double *value)
{
    double v;
    int sub;
    if (dt == NA_DT_F16 || dt == NA_DT_BF16) {
        uint16_t h = (uint16_t)load_uint(p, 2, e);
        v = dt == NA_DT_F16 ? na_f16_to_f32(h) : na_bf16_to_f32(h);
        sub = dt == NA_DT_F16 ? na_f16_is_subnormal(h) : na_bf16_is_subnormal(h);
    } else if (dt == NA_DT_F64) {
        uint64_t u = load_uint(p, 8, e);
        memcpy(&v, &u, sizeof v);
        sub = na_f64_bits_is_subnormal(u);
    } else { /* F32, and C64's real part */
        uint32_t u = (uint32_t)load_uint(p, 4, e);
        v = na_bits_to_f32(u);
        sub = na_f32_bits_is_subnormal(u);
    }
    na_class_t c = ieee_class(v, sub);
    *value = c == NA_CL_NAN ? NAN : v; /* one canonical NaN, no payloads */
    return c;
}

/* ---- x87 80-bit extended ---------------------------------------------- */

/* Rounding to double: na_f80_round in decode.h (shared with the GPU). */

/* Layout: 64-bit significand with an explicit integer bit J (bit 63),
 * then 15-bit exponent (bias 16383) and the sign. Little endian: bytes
 * 0-7 significand, 8-9 sign/exponent; big endian: the same 10 bytes
 * reversed. Classes, by the F80 value itself (Intel SDM 8.2.2):
 *   exponent 0x7fff, J=1: fraction 0 is +-Inf, else NaN;
 *   exponent 0x7fff, J=0 (pseudo-Inf/NaN) and exponent 1..0x7ffe, J=0
 *     (unnormal): invalid operands since the 80387 -> NaN (fail closed);
 *   exponent 0: significand 0 is zero, else subnormal (J=1 pseudo-
 *     denormals too, valued as the hardware does: sig * 2^(1-16383-63)).
 * The double value is rounded to nearest-even. A finite F80 beyond the
 * double range stays finite (class NORMAL) and saturates to +-DBL_MAX; a
 * nonzero one below it keeps its class and rounds to +-0 or a double
 * subnormal. So a finite class always comes with a finite value, and the
 * NaN/Inf/zero/subnormal counts describe the data as stored. */
static na_class_t decode_f80(na_endian_t e, const void *p, double *value)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t sig = e == NA_BIG ? load_uint(b + 2, 8, e) : load_uint(b, 8, e);
    unsigned se = (unsigned)(e == NA_BIG ? load_uint(b, 2, e) : load_uint(b + 8, 2, e));
    return (na_class_t)na_f80_decode(sig, se, value); /* decode.h, shared with the GPU */
}

/* ---- the dispatcher ---------------------------------------------------- */

na_class_t na_decode1(na_dtype_t dt, na_endian_t e, const void *p, double *value)
{
    unsigned nbytes = na_dtype_bits(dt) / 8;
    switch (dt) {
    case NA_DT_BOOL: /* numpy: any nonzero byte is True (1.0) */
        *value = *(const unsigned char *)p != 0;
        return int_class(*value);
    case NA_DT_U8: case NA_DT_U16: case NA_DT_U32: case NA_DT_U64:
        /* C's uint64 -> double rounds to nearest even, as numpy's astype */
        *value = (double)load_uint(p, nbytes, e);
        return int_class(*value);
    case NA_DT_I8: case NA_DT_I16: case NA_DT_I32: case NA_DT_I64:
        *value = (double)sign_extend(load_uint(p, nbytes, e), nbytes * 8);
        return int_class(*value);
    case NA_DT_F16: case NA_DT_BF16: case NA_DT_F32: case NA_DT_F64:
    case NA_DT_C64:
        return decode_ieee(dt, e, p, value);
    case NA_DT_F8_E4M3: case NA_DT_F8_E5M2: case NA_DT_F8_E8M0:
    case NA_DT_F8_E4M3FNUZ: case NA_DT_F8_E5M2FNUZ:
        return decode_f8(dt, *(const unsigned char *)p, value);
    case NA_DT_F80:
        return decode_f80(e, p, value);
    default: /* INVALID, F4, F6_*: no element type; fail closed */
        return nan_out(value);
    }
}

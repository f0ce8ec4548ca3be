/*
 * test_dtype.c - dtype names, sizes and decoding.
 *
 * The 8- and 16-bit float decoders are checked exhaustively, every code in
 * both byte orders, against tests/data/dtype/<DTYPE>.tbl, which numpy and
 * ml_dtypes wrote (tests/tools/gen_dtype_tables.py); so are lib/decode.h's
 * F16/BF16 helpers that the fast kernels use. Integers are checked against
 * numpy's astype(float64) (int_edges.txt); F80 against hand-made
 * encodings and, on x86, against the FPU's own conversion.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "nanaudit.h"

/* ---- helpers ------------------------------------------------------------ */

static void put_uint(unsigned char *b, uint64_t u, unsigned nbytes, na_endian_t e)
{
    for (unsigned i = 0; i < nbytes; i++) {
        unsigned shift = 8 * (e == NA_BIG ? nbytes - 1 - i : i);
        b[i] = (unsigned char)(u >> shift);
    }
}

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* Same double, bit for bit (so -0 != +0), any NaN equal to any NaN. */
static int same_value(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return dbits(a) == dbits(b);
}

/* Decode code stored as nbytes in byte order e at an odd address (the
 * decoder must not assume alignment). */
static na_class_t decode_at_odd(na_dtype_t dt, na_endian_t e, uint64_t code,
                                unsigned nbytes, double *v)
{
    unsigned char buf[24];
    put_uint(buf + 1, code, nbytes, e);
    return na_decode1(dt, e, buf + 1, v);
}

/* ---- reference tables ------------------------------------------------ */

typedef struct table {
    size_t n;
    uint32_t *f32; /* binary32 bits of each code's value */
    uint8_t *cls;  /* na_class_t of each code */
} table_t;

static void load_table(const char *name, size_t n, table_t *t)
{
    char path[512];
    snprintf(path, sizeof path, "%s/dtype/%s.tbl", NA_TEST_DATA, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open %s (run tests/tools/gen_dtype_tables.py)", path);
    static char buf[400000];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    const char *mark = NULL;
    for (size_t i = 0; i + 4 <= len && mark == NULL; i++)
        if (memcmp(buf + i, "\n%%\n", 4) == 0)
            mark = buf + i + 4;
    assert_non_null(mark);
    assert_int_equal(len - (size_t)(mark - buf), n * 5);
    t->n = n;
    t->f32 = malloc(n * sizeof *t->f32);
    t->cls = malloc(n);
    assert_non_null(t->f32);
    assert_non_null(t->cls);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *r = (const unsigned char *)mark + 5 * i;
        t->f32[i] = (uint32_t)r[0] | (uint32_t)r[1] << 8 | (uint32_t)r[2] << 16 |
                    (uint32_t)r[3] << 24;
        t->cls[i] = r[4];
    }
}

static void free_table(table_t *t)
{
    free(t->f32);
    free(t->cls);
}

/* Every code of dt, both byte orders, against the table. Returns the
 * number of mismatches and prints the first few. */
static int check_all_codes(na_dtype_t dt, const table_t *t, unsigned nbytes)
{
    int bad = 0;
    for (size_t code = 0; code < t->n; code++) {
        double want = na_bits_to_f32(t->f32[code]);
        for (int e = NA_LITTLE; e <= NA_BIG; e++) {
            double v = 12345.0;
            na_class_t c = decode_at_odd(dt, (na_endian_t)e, code, nbytes, &v);
            if (c != (na_class_t)t->cls[code] || !same_value(v, want)) {
                if (bad++ < 5)
                    print_error("%s code 0x%zx %s: got %a class %d, want %a class %d\n",
                                na_dtype_name(dt), code, e ? "BE" : "LE", v, (int)c,
                                want, t->cls[code]);
            }
        }
    }
    return bad;
}

static void test_f8_tables(void **state)
{
    (void)state;
    const na_dtype_t dts[] = {NA_DT_F8_E4M3, NA_DT_F8_E5M2, NA_DT_F8_E8M0,
                              NA_DT_F8_E4M3FNUZ, NA_DT_F8_E5M2FNUZ};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        table_t t;
        load_table(na_dtype_name(dts[i]), 256, &t);
        assert_int_equal(check_all_codes(dts[i], &t, 1), 0);
        free_table(&t);
    }
}

/* decode.h's raw-bit helpers, as the kernels use them, against the table. */
static int check_decode_h(na_dtype_t dt, const table_t *t)
{
    int bad = 0;
    for (uint32_t code = 0; code < 65536; code++) {
        uint16_t h = (uint16_t)code;
        int f16 = dt == NA_DT_F16;
        float f = f16 ? na_f16_to_f32(h) : na_bf16_to_f32(h);
        int is_nan = f16 ? na_f16_is_nan(h) : na_bf16_is_nan(h);
        int is_inf = f16 ? na_f16_is_inf(h) : na_bf16_is_inf(h);
        int is_sub = f16 ? na_f16_is_subnormal(h) : na_bf16_is_subnormal(h);
        int c = t->cls[code];
        int ok = is_nan == (c == NA_CL_NAN) &&
                 is_inf == (c == NA_CL_POS_INF || c == NA_CL_NEG_INF) &&
                 is_sub == (c == NA_CL_SUBNORMAL);
        /* value: bit-exact, and for NaN the stored payload is kept */
        ok = ok && (c == NA_CL_NAN ? isnan(f) : na_f32_to_bits(f) == t->f32[code]);
        if (c == NA_CL_NAN && f16)
            ok = ok && (na_f32_to_bits(f) & 0x7fffffu) == (uint32_t)(code & 0x3ff) << 13;
        if (c == NA_CL_NAN && !f16)
            ok = ok && na_f32_to_bits(f) == code << 16;
        if (!ok && bad++ < 5)
            print_error("decode.h %s 0x%04x: got %a nan %d inf %d sub %d\n",
                        na_dtype_name(dt), code, (double)f, is_nan, is_inf, is_sub);
    }
    return bad;
}

static void test_f16_table(void **state)
{
    (void)state;
    table_t t;
    load_table("F16", 65536, &t);
    assert_int_equal(check_all_codes(NA_DT_F16, &t, 2), 0);
    assert_int_equal(check_decode_h(NA_DT_F16, &t), 0);
    free_table(&t);
}

static void test_bf16_table(void **state)
{
    (void)state;
    table_t t;
    load_table("BF16", 65536, &t);
    assert_int_equal(check_all_codes(NA_DT_BF16, &t, 2), 0);
    assert_int_equal(check_decode_h(NA_DT_BF16, &t), 0);
    free_table(&t);
}

/* Spot values named in the issue: F16 0x0001 0x03FF 0x8001 subnormal,
 * 0x0400 normal, 0x0000 zero, 0x7BFF = 65504, 0x7C00 = +Inf. */
static void test_f16_issue_codes(void **state)
{
    (void)state;
    const struct { uint16_t code; na_class_t c; double v; } cases[] = {
        {0x0001, NA_CL_SUBNORMAL, 0x1p-24}, {0x03ff, NA_CL_SUBNORMAL, 1023 * 0x1p-24},
        {0x8001, NA_CL_SUBNORMAL, -0x1p-24}, {0x0400, NA_CL_NORMAL, 0x1p-14},
        {0x0000, NA_CL_ZERO, 0.0}, {0x8000, NA_CL_ZERO, -0.0},
        {0x7bff, NA_CL_NORMAL, 65504.0}, {0x7c00, NA_CL_POS_INF, INFINITY},
        {0xfc00, NA_CL_NEG_INF, -INFINITY}, {0x3c00, NA_CL_NORMAL, 1.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int e = 0; e < 2; e++) {
            double v;
            assert_int_equal(decode_at_odd(NA_DT_F16, (na_endian_t)e, cases[i].code, 2, &v),
                             cases[i].c);
            assert_true(same_value(v, cases[i].v));
        }
}

/* ---- F32 / F64 / C64 ------------------------------------------------------ */

static void test_f32_f64(void **state)
{
    (void)state;
    const struct { uint32_t bits; na_class_t c; double v; } f32[] = {
        {0x3f800000u, NA_CL_NORMAL, 1.0}, {0x80000000u, NA_CL_ZERO, -0.0},
        {0x7fc00000u, NA_CL_NAN, NAN}, {0xffc00000u, NA_CL_NAN, NAN},
        {0x7f800001u, NA_CL_NAN, NAN}, {0x7f800000u, NA_CL_POS_INF, INFINITY},
        {0xff800000u, NA_CL_NEG_INF, -INFINITY}, {0x00000001u, NA_CL_SUBNORMAL, 0x1p-149},
        {0x807fffffu, NA_CL_SUBNORMAL, -0x1.fffffcp-127}, {0x00800000u, NA_CL_NORMAL, 0x1p-126},
        {0x7f7fffffu, NA_CL_NORMAL, FLT_MAX}, {0x477fef00u, NA_CL_NORMAL, 65519.0},
    };
    for (size_t i = 0; i < sizeof f32 / sizeof f32[0]; i++)
        for (int e = 0; e < 2; e++) {
            double v;
            assert_int_equal(decode_at_odd(NA_DT_F32, (na_endian_t)e, f32[i].bits, 4, &v),
                             f32[i].c);
            assert_true(same_value(v, f32[i].v));
        }
    const struct { uint64_t bits; na_class_t c; double v; } f64[] = {
        {0x3ff0000000000000ull, NA_CL_NORMAL, 1.0}, {0x8000000000000000ull, NA_CL_ZERO, -0.0},
        {0x7ff8000000000000ull, NA_CL_NAN, NAN}, {0xfff0000000000001ull, NA_CL_NAN, NAN},
        {0x7ff0000000000000ull, NA_CL_POS_INF, INFINITY},
        {0xfff0000000000000ull, NA_CL_NEG_INF, -INFINITY},
        {0x0000000000000001ull, NA_CL_SUBNORMAL, 0x1p-1074},
        {0x0010000000000000ull, NA_CL_NORMAL, DBL_MIN}, {0x7fefffffffffffffull, NA_CL_NORMAL, DBL_MAX},
    };
    for (size_t i = 0; i < sizeof f64 / sizeof f64[0]; i++)
        for (int e = 0; e < 2; e++) {
            double v;
            assert_int_equal(decode_at_odd(NA_DT_F64, (na_endian_t)e, f64[i].bits, 8, &v),
                             f64[i].c);
            assert_true(same_value(v, f64[i].v));
        }
}

/* C64: the F32 at p is the real part, at p + 4 the imaginary part. */
static void test_c64(void **state)
{
    (void)state;
    for (int e = 0; e < 2; e++) {
        unsigned char b[9];
        put_uint(b + 1, 0x40490fdbu, 4, (na_endian_t)e); /* 3.14159274 */
        put_uint(b + 5, 0xff800000u, 4, (na_endian_t)e); /* -Inf */
        double v;
        assert_int_equal(na_decode1(NA_DT_C64, (na_endian_t)e, b + 1, &v), NA_CL_NORMAL);
        assert_true(same_value(v, (double)0x1.921fb6p+1f));
        assert_int_equal(na_decode1(NA_DT_C64, (na_endian_t)e, b + 5, &v), NA_CL_NEG_INF);
        assert_true(same_value(v, -INFINITY));
    }
}

/* ---- integers and BOOL ---------------------------------------------------- */

static void test_int_edges(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/dtype/int_edges.txt", NA_TEST_DATA);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[256];
    int n = 0, seen64 = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        char name[16], dec[32], hex[64];
        assert_int_equal(sscanf(line, "%15s %31s %63s", name, dec, hex), 3);
        na_dtype_t dt = na_dtype_from_name(name, strlen(name));
        assert_int_not_equal(dt, NA_DT_INVALID);
        unsigned nbytes = na_dtype_bits(dt) / 8;
        /* two's complement bits of the decimal value */
        uint64_t u = dec[0] == '-' ? (uint64_t)strtoll(dec, NULL, 10)
                                   : (uint64_t)strtoull(dec, NULL, 10);
        double want = strtod(hex, NULL);
        for (int e = 0; e < 2; e++) {
            double v;
            na_class_t c = decode_at_odd(dt, (na_endian_t)e, u, nbytes, &v);
            if (!same_value(v, want) || c != (want == 0 ? NA_CL_ZERO : NA_CL_NORMAL))
                fail_msg("%s %s %s: got %a class %d, numpy %a", name, dec,
                         e ? "BE" : "LE", v, (int)c, want);
        }
        n++;
        seen64 += nbytes == 8;
    }
    fclose(f);
    assert_true(n > 100);
    assert_true(seen64 > 100); /* the 64-bit rounding cases are there */
}

/* A few of the table's cases written out, so a broken table cannot hide
 * the rounding rule: ties to even above 2^53. */
static void test_int_rounding(void **state)
{
    (void)state;
    double v;
    assert_int_equal(decode_at_odd(NA_DT_U64, NA_LITTLE, 9007199254740993ull, 8, &v),
                     NA_CL_NORMAL);
    assert_true(v == 9007199254740992.0); /* 2^53 + 1 -> 2^53 (even) */
    decode_at_odd(NA_DT_I64, NA_BIG, (uint64_t)-9007199254740995ll, 8, &v);
    assert_true(v == -9007199254740996.0); /* tie -> even mantissa */
    decode_at_odd(NA_DT_U64, NA_BIG, UINT64_MAX, 8, &v);
    assert_true(v == 0x1p64);
    decode_at_odd(NA_DT_I64, NA_LITTLE, (uint64_t)INT64_MIN, 8, &v);
    assert_true(v == -0x1p63);
    decode_at_odd(NA_DT_I8, NA_LITTLE, 0x80, 1, &v);
    assert_true(v == -128.0);
    assert_int_equal(decode_at_odd(NA_DT_I32, NA_BIG, 0, 4, &v), NA_CL_ZERO);
    assert_true(same_value(v, 0.0)); /* integer zero is +0 */
}

static void test_bool(void **state)
{
    (void)state;
    const unsigned char bytes[] = {0x00, 0x01, 0x02, 0x80, 0xff};
    for (size_t i = 0; i < sizeof bytes; i++) {
        double v;
        na_class_t c = na_decode1(NA_DT_BOOL, NA_BIG, &bytes[i], &v);
        assert_int_equal(c, bytes[i] ? NA_CL_NORMAL : NA_CL_ZERO);
        assert_true(same_value(v, bytes[i] ? 1.0 : 0.0)); /* numpy: nonzero is True */
    }
}

static void test_unsupported_decode(void **state)
{
    (void)state;
    const na_dtype_t dts[] = {NA_DT_INVALID, NA_DT_F4, NA_DT_F6_E2M3, NA_DT_F6_E3M2,
                              NA_DT_COUNT};
    unsigned char b[16] = {0};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        double v = 0;
        assert_int_equal(na_decode1(dts[i], NA_LITTLE, b, &v), NA_CL_NAN);
        assert_true(isnan(v));
    }
}

/* ---- F80 -------------------------------------------------------------- */

static na_class_t f80(uint16_t se, uint64_t sig, na_endian_t e, double *v)
{
    unsigned char b[11];
    if (e == NA_LITTLE) {
        put_uint(b + 1, sig, 8, e);
        put_uint(b + 9, se, 2, e);
    } else {
        put_uint(b + 1, se, 2, e);
        put_uint(b + 3, sig, 8, e);
    }
    return na_decode1(NA_DT_F80, e, b + 1, v);
}

static void test_f80_cases(void **state)
{
    (void)state;
    const uint64_t J = 1ull << 63;
    const struct { uint16_t se; uint64_t sig; na_class_t c; double v; } cases[] = {
        {0x3fff, J, NA_CL_NORMAL, 1.0},
        {0xc000, J | (1ull << 61), NA_CL_NORMAL, -2.5},
        {0x0000, 0, NA_CL_ZERO, 0.0},
        {0x8000, 0, NA_CL_ZERO, -0.0},
        {0x7fff, J, NA_CL_POS_INF, INFINITY},
        {0xffff, J, NA_CL_NEG_INF, -INFINITY},
        {0x7fff, J | (1ull << 62), NA_CL_NAN, NAN},    /* quiet NaN */
        {0xffff, J | 1, NA_CL_NAN, NAN},               /* signalling NaN */
        {0x7fff, 0, NA_CL_NAN, NAN},                   /* pseudo-infinity */
        {0x7fff, 1, NA_CL_NAN, NAN},                   /* pseudo-NaN */
        {0x3fff, 1ull << 62, NA_CL_NAN, NAN},          /* unnormal */
        {0x0000, 1, NA_CL_SUBNORMAL, 0.0},             /* 2^-16445 -> +0 */
        {0x8000, J, NA_CL_SUBNORMAL, -0.0},            /* pseudo-denormal */
        {0x0001, J, NA_CL_NORMAL, 0.0},                /* 2^-16382 -> +0 */
        {0x7ffe, ~0ull, NA_CL_NORMAL, DBL_MAX},        /* beyond double: saturates */
        {0xfffe, J, NA_CL_NORMAL, -DBL_MAX},
        {0x43fe, ~0ull << 11, NA_CL_NORMAL, DBL_MAX},  /* exactly DBL_MAX */
        {0x43fe, ~0ull << 10, NA_CL_NORMAL, DBL_MAX},  /* rounds up to 2^1024: saturates */
        {0x3fff, J | (1ull << 10), NA_CL_NORMAL, 1.0}, /* 1 + 2^-53: tie, to even */
        {0x3fff, J | (3ull << 10), NA_CL_NORMAL, 1.0 + 0x1p-51}, /* tie, up to even */
        {0x3fff, J | (1ull << 10) | 1, NA_CL_NORMAL, 1.0 + 0x1p-52}, /* above tie */
        {0x3bcd, J, NA_CL_NORMAL, 0x1p-1074},          /* 2^-1074 */
        {0x3bcc, J, NA_CL_NORMAL, 0.0},                /* 2^-1075: tie to even 0 */
        {0x3bcc, J | 1, NA_CL_NORMAL, 0x1p-1074},      /* just above: up */
        {0x3bcd, J | (1ull << 62), NA_CL_NORMAL, 0x1p-1073}, /* 1.5*2^-1074: tie, to even */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int e = 0; e < 2; e++) {
            double v;
            na_class_t c = f80(cases[i].se, cases[i].sig, (na_endian_t)e, &v);
            if (c != cases[i].c || !same_value(v, cases[i].v))
                fail_msg("F80 case %zu %s: got %a class %d, want %a class %d", i,
                         e ? "BE" : "LE", v, (int)c, cases[i].v, (int)cases[i].c);
        }
}

#if defined(__x86_64__) || defined(__i386__)
/* x86: the FPU converts long double to double itself, rounding to nearest
 * even. Random canonical encodings around the double range must agree;
 * where the FPU overflows to Inf our value saturates to DBL_MAX. */
static void test_f80_vs_fpu(void **state)
{
    (void)state;
    assert_int_equal(LDBL_MANT_DIG, 64);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        uint64_t sig = x | (1ull << 63);
        if (i & 1) /* short significands make ties likely */
            sig &= ~0ull << (x >> 58);
        unsigned ex = (unsigned)(16383 - 1100 + (x >> 20) % 2200); /* 2^-1100 .. 2^1100 */
        uint16_t se = (uint16_t)(ex | ((x >> 40) & 1) << 15);
        unsigned char b[16] = {0};
        put_uint(b, sig, 8, NA_LITTLE);
        put_uint(b + 8, se, 2, NA_LITTLE);
        long double ld;
        memcpy(&ld, b, 10);
        double hw = (double)ld;
        if (isinf(hw))
            hw = hw > 0 ? DBL_MAX : -DBL_MAX;
        double v;
        na_class_t c = na_decode1(NA_DT_F80, NA_LITTLE, b, &v);
        if (c != NA_CL_NORMAL || !same_value(v, hw))
            fail_msg("F80 %04x %016llx: got %a, FPU %a", se, (unsigned long long)sig, v, hw);
    }
}
#endif

/* ---- names, sizes, predicates -------------------------------------------- */

static void test_names(void **state)
{
    (void)state;
    const char *names[] = {"BOOL", "U8", "I8", "U16", "I16", "U32", "I32", "U64", "I64",
                           "F16", "BF16", "F32", "F64", "F8_E4M3", "F8_E5M2", "F8_E8M0",
                           "F8_E4M3FNUZ", "F8_E5M2FNUZ", "C64", "F4", "F6_E2M3", "F6_E3M2",
                           "F80"};
    const unsigned bits[] = {8, 8, 8, 16, 16, 32, 32, 64, 64, 16, 16, 32, 64, 8, 8, 8, 8, 8,
                             64, 4, 6, 6, 80};
    assert_int_equal(sizeof names / sizeof names[0], NA_DT_COUNT - 1);
    for (int dt = NA_DT_INVALID + 1; dt < NA_DT_COUNT; dt++) {
        const char *n = names[dt - 1];
        assert_string_equal(na_dtype_name((na_dtype_t)dt), n);
        assert_int_equal(na_dtype_from_name(n, strlen(n)), dt);
        assert_int_equal(na_dtype_bits((na_dtype_t)dt), bits[dt - 1]);
    }
    assert_string_equal(na_dtype_name(NA_DT_INVALID), "INVALID");
    assert_string_equal(na_dtype_name(NA_DT_COUNT), "INVALID");
    assert_string_equal(na_dtype_name((na_dtype_t)-1), "INVALID");
    assert_int_equal(na_dtype_bits(NA_DT_COUNT), 0);
    /* only `len` bytes count: a longer buffer is fine */
    assert_int_equal(na_dtype_from_name("F32garbage", 3), NA_DT_F32);
    const char *bad[] = {"f32", "F32 ", "F3", "", "INVALID", "F8_E4M3FN", "bf16", "F32\n",
                         " F32", "F8-E4M3", "float32"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(na_dtype_from_name(bad[i], strlen(bad[i])), NA_DT_INVALID);
    assert_int_equal(na_dtype_from_name("F32\0", 4), NA_DT_INVALID); /* trailing NUL */
    assert_int_equal(na_dtype_from_name(NULL, 0), NA_DT_INVALID);
}

static void test_predicates(void **state)
{
    (void)state;
    for (int dt = 0; dt <= NA_DT_COUNT; dt++) {
        int sub_byte = dt == NA_DT_F4 || dt == NA_DT_F6_E2M3 || dt == NA_DT_F6_E3M2;
        int valid = dt > NA_DT_INVALID && dt < NA_DT_COUNT;
        assert_int_equal(na_dtype_supported((na_dtype_t)dt), valid && !sub_byte);
        int flt = (dt >= NA_DT_F16 && dt <= NA_DT_C64) || dt == NA_DT_F80;
        assert_int_equal(na_dtype_is_float((na_dtype_t)dt), flt);
    }
}

static void test_unravel(void **state)
{
    (void)state;
    const uint64_t shape[] = {2, 3, 4};
    uint64_t idx[3];
    na_unravel(23, 3, shape, idx);
    assert_true(idx[0] == 1 && idx[1] == 2 && idx[2] == 3);
    na_unravel(0, 3, shape, idx);
    assert_true(idx[0] == 0 && idx[1] == 0 && idx[2] == 0);
    na_unravel(13, 3, shape, idx); /* 13 = 1*12 + 0*4 + 1 */
    assert_true(idx[0] == 1 && idx[1] == 0 && idx[2] == 1);
    const uint64_t big[] = {1ull << 40, 1ull << 20};
    uint64_t i2[2];
    na_unravel((5ull << 20) + 7, 2, big, i2);
    assert_true(i2[0] == 5 && i2[1] == 7);
    na_unravel(0, 0, NULL, NULL); /* scalar: no index, nothing written */
    const uint64_t empty[] = {2, 0};
    na_unravel(0, 2, empty, i2); /* must not divide by zero */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f8_tables),
        cmocka_unit_test(test_f16_table),
        cmocka_unit_test(test_bf16_table),
        cmocka_unit_test(test_f16_issue_codes),
        cmocka_unit_test(test_f32_f64),
        cmocka_unit_test(test_c64),
        cmocka_unit_test(test_int_edges),
        cmocka_unit_test(test_int_rounding),
        cmocka_unit_test(test_bool),
        cmocka_unit_test(test_unsupported_decode),
        cmocka_unit_test(test_f80_cases),
#if defined(__x86_64__) || defined(__i386__)
        cmocka_unit_test(test_f80_vs_fpu),
#endif
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_predicates),
        cmocka_unit_test(test_unravel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * parse.c - numbers given on the command line and in policy files.
 */
#include "nanaudit.h"
#include "clean_elem.h" /* na_ce_round_to: a value's rounding in a narrow float type */

#include <errno.h>  /* errno, ERANGE */
#include <math.h>   /* isfinite, floor, fabs */
#include <stdio.h>  /* snprintf */
#include <stdlib.h> /* strtod */

char *na_fmt_num(char *buf, size_t cap, double v)
{
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, cap, "%.*g", p, v);
        if (p == 17 || strtod(buf, NULL) == v || v != v)
            break;
    }
    return buf;
}

char *na_fmt_val(char *buf, size_t cap, double v, na_dtype_t dt)
{
    int p = 0, emin = 0; /* significand bits, minimum normal exponent */
    switch (dt) {
    case NA_DT_F32: p = 24, emin = -126; break;
    case NA_DT_BF16: p = 8, emin = -126; break;
    case NA_DT_F16: p = 11, emin = -14; break;
    case NA_DT_F8_E4M3: p = 4, emin = -6; break;
    case NA_DT_F8_E5M2: p = 3, emin = -14; break;
    case NA_DT_F8_E4M3FNUZ: p = 4, emin = -7; break;
    case NA_DT_F8_E5M2FNUZ: p = 3, emin = -15; break;
    default: break;
    }
    if (p == 0 || !isfinite(v) || na_ce_round_to(v, p, emin) != v)
        return na_fmt_num(buf, cap, v);
    if (v == floor(v) && fabs(v) < 16777216.0) { /* 10000000, as na_fmt_num, not 1e+07 */
        snprintf(buf, cap, "%.0f", v);
        return buf;
    }
    for (int d = 1; d <= 9; d++) {
        snprintf(buf, cap, "%.*g", d, v);
        double r = strtod(buf, NULL);
        if (isfinite(r) && na_ce_round_to(r, p, emin) == v)
            break;
    }
    return buf;
}

/* Decimal syntax: [+-] digits [. digits] [e [+-] digits], at least one
 * digit before the exponent; no spaces, no hex (strtod's 0x10), no
 * inf/nan words: one number reads the same on the command line, in a
 * policy file and in numpy. */
static int decimal(const char *s)
{
    size_t digits = 0;
    s += *s == '+' || *s == '-';
    for (; *s >= '0' && *s <= '9'; s++)
        digits++;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++)
            digits++;
    if (digits == 0)
        return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        s += *s == '+' || *s == '-';
        if (!(*s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

int na_parse_double(const char *s, double *v)
{
    *v = 0;
    if (!decimal(s))
        return -1;
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    /* ERANGE with a finite result is an underflow (C11 7.22.1.3p10): a
     * subnormal is the nearest double, kept; a zero from a number that is
     * not zero (1e-400) is refused, as an overflow to HUGE_VAL is: it
     * would turn --zscore 1e-400 into 0, the test switched off (fifteenth
     * fresh-user round). */
    if (errno == ERANGE && *v == 0)
        return -1;
    return !*s || *end || (errno && errno != ERANGE) || !isfinite(*v) ? -1 : 0;
}

/*
 * parse.c - numbers given on the command line and in policy files.
 */
#include "nanaudit.h"

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
    int narrow = dt == NA_DT_F32 || dt == NA_DT_F16 || dt == NA_DT_BF16 ||
                 dt == NA_DT_F8_E4M3 || dt == NA_DT_F8_E5M2 || dt == NA_DT_F8_E8M0 ||
                 dt == NA_DT_F8_E4M3FNUZ || dt == NA_DT_F8_E5M2FNUZ;
    if (!narrow || v != v || (double)(float)v != v)
        return na_fmt_num(buf, cap, v);
    if (v == floor(v) && fabs(v) < 1e15) { /* 10000000, as na_fmt_num, not 1e+07 */
        snprintf(buf, cap, "%.0f", v);
        return buf;
    }
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, cap, "%.*g", p, v);
        if ((float)strtod(buf, NULL) == (float)v)
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

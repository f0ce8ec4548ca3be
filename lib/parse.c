/*
 * parse.c - numbers given on the command line and in policy files.
 */
#include "nanaudit.h"

#include <errno.h>  /* errno, ERANGE */
#include <math.h>   /* isfinite */
#include <stdlib.h> /* strtod */

int na_parse_double(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    /* ERANGE with a finite result is an underflow (C11 7.22.1.3p10): the
     * subnormal or zero strtod returns is the nearest double. An
     * overflow returns HUGE_VAL, refused as not finite. */
    return !*s || *end || (errno && errno != ERANGE) || !isfinite(*v) ? -1 : 0;
}

/*
 * checks.c - the findings beyond NaN/Inf/outliers: range, max_abs,
 * negative, cast_overflow and cast_underflow, and the tolerances
 * (--max-nan-fraction ...) that decide whether a finding fails.
 *
 * Each check is a count of finite values beyond a threshold, taken by
 * the scan as closed intervals over doubles (na_extra_t, scan_extra.c).
 * Decoding is exact for every float dtype, so comparing the decoded
 * double with an exact threshold gives the exact answer in the source
 * dtype; strict bounds become the neighbouring double (nextafter).
 *
 * Cast thresholds (DESIGN.md "Cast checks"; round-to-nearest-even, IEEE
 * 754-2019 section 4.3.1; the OCP 8-bit float spec v1.0 for F8_*): for a
 * target with p mantissa bits, largest finite M = (2 - 2^-p) * 2^emax and
 * smallest subnormal S = 2^(emin - p):
 *   F16      p=10 emax=15   M = 65504        S = 2^-24
 *   BF16     p=7  emax=127  M = (2-2^-7)2^127 S = 2^-133
 *   F8_E5M2  p=2  emax=15   M = 57344        S = 2^-16
 *   F8_E4M3  p=3  emax=8    M = 448          S = 2^-9  (M = (2 - 2^-(p-1)) 2^emax:
 *                                                       the top code is NaN)
 * Overflow: the midpoint between M and the next step (2 - 2^-(p+1)) *
 * 2^emax (F16 65520, BF16 (2-2^-8)2^127, E5M2 61440) rounds away from M,
 * because M's last mantissa bit is 1 (odd) and ties go to even, so |x| >=
 * midpoint becomes Inf. F8_E4M3 ("fn") has no Inf: 1.875 * 2^8 = 480 is
 * the NaN code S.1111.111, and a non-saturating cast gives NaN for what
 * would round there; M = 448 = 1.110b * 2^8 is even, so the tie 464
 * rounds down to 448 and only |x| > 464 overflows.
 * Underflow: S/2 is a tie between 0 (even) and S (odd mantissa), so it
 * rounds to 0: a nonzero x underflows when |x| <= S/2.
 * Reference: numpy (F16) and ml_dtypes (BF16, F8_*) casts from float32
 * agree on every value (tests/conformance/test_gate.py). ml_dtypes casts
 * float64 to BF16/F8 through float32 (double rounding), so for F64 data
 * within 2^-24 relative of a midpoint it may differ from the single
 * rounding counted here.
 */
#include "nanaudit.h"

#include <float.h>   /* DBL_MAX, DBL_TRUE_MIN */
#include <fnmatch.h> /* fnmatch */
#include <math.h>    /* ldexp, nextafter, INFINITY */
#include <stdio.h>   /* snprintf */
#include <string.h>  /* memset, strlen */

void na_checks_init(na_checks_t *c)
{
    memset(c, 0, sizeof *c);
    c->fail_mask = NA_DEFAULT_FAIL_MASK;
    c->nonneg = -1;
    c->cast = NA_DT_INVALID;
}

na_status_t na_cast_limits(na_dtype_t target, double *overflow, int *overflow_strict,
                           double *underflow)
{
    int p, emax, emin; /* mantissa bits, exponent range of normals */
    *overflow_strict = 0;
    switch (target) {
    case NA_DT_F16: p = 10; emax = 15; emin = -14; break;
    case NA_DT_BF16: p = 7; emax = 127; emin = -126; break;
    case NA_DT_F8_E5M2: p = 2; emax = 15; emin = -14; break;
    case NA_DT_F8_E4M3: p = 3; emax = 8; emin = -6; *overflow_strict = 1; break;
    default: return NA_E_USAGE;
    }
    /* E4M3: midpoint between M = 1.75*2^8 and the NaN code 1.875*2^8. */
    *overflow = ldexp(2.0 - ldexp(1.0, -(p + 1)), emax) -
                (*overflow_strict ? ldexp(1.0, emax - p) : 0.0);
    *underflow = ldexp(1.0, emin - p - 1); /* S / 2 */
    return NA_OK;
}

/* Checkpoint tensors that are >= 0 by construction. */
static int nonneg_by_name(const char *name)
{
    return name && (fnmatch("*running_var*", name, 0) == 0 ||
                    fnmatch("*exp_avg_sq*", name, 0) == 0);
}

static int wants_nonneg(const na_checks_t *c, const char *name)
{
    return c->nonneg > 0 || (c->nonneg < 0 && nonneg_by_name(name));
}

/* Where each check's intervals sit in na_extra_t (-1: not asked). */
typedef struct layout {
    int neg, range_lo, range_hi, abs_lo, abs_hi, ovf_lo, ovf_hi, unf_lo, unf_hi;
} layout_t;

static int push(na_extra_t *ex, double lo, double hi)
{
    ex->iv[ex->n].lo = lo;
    ex->iv[ex->n].hi = hi;
    return (int)ex->n++;
}

/* The one place that orders the intervals, for the scan and the findings
 * alike. At most 9 intervals (NA_MAX_INTERVALS is 10). */
static void layout(const na_checks_t *c, const char *name, na_extra_t *ex, layout_t *L)
{
    memset(L, -1, sizeof *L);
    ex->n = 0;
    if (wants_nonneg(c, name))
        L->neg = push(ex, -DBL_MAX, -DBL_TRUE_MIN); /* x < 0, not -0 */
    if (c->range_lo_set && c->range_hi_set && c->range_lo > c->range_hi)
        /* an empty range (a policy's min from one scope above its max from
         * another): every finite value is outside it, and counted once */
        L->range_lo = push(ex, -DBL_MAX, DBL_MAX);
    else {
        if (c->range_lo_set)
            L->range_lo = push(ex, -DBL_MAX, nextafter(c->range_lo, -INFINITY));
        if (c->range_hi_set)
            L->range_hi = push(ex, nextafter(c->range_hi, INFINITY), DBL_MAX);
    }
    if (c->max_abs_set) {
        L->abs_lo = push(ex, -DBL_MAX, nextafter(-c->max_abs, -INFINITY));
        L->abs_hi = push(ex, nextafter(c->max_abs, INFINITY), DBL_MAX);
    }
    double ovf, unf;
    int strict;
    if (c->cast != NA_DT_INVALID && na_cast_limits(c->cast, &ovf, &strict, &unf) == NA_OK) {
        double o = strict ? nextafter(ovf, INFINITY) : ovf;
        L->ovf_lo = push(ex, -DBL_MAX, -o);
        L->ovf_hi = push(ex, o, DBL_MAX);
        L->unf_lo = push(ex, -unf, -DBL_TRUE_MIN);
        L->unf_hi = push(ex, DBL_TRUE_MIN, unf);
    }
}

void na_checks_extra(const na_checks_t *c, const char *name, na_extra_t *ex)
{
    layout_t L;
    layout(c, name, ex, &L);
}

static uint64_t cnt(const na_result_t *r, int slot)
{
    return slot >= 0 && r->extra_done ? r->extra_counts[slot] : 0;
}

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

/* Append one finding when count > 0 (fails decided later). */
static void add(na_finding_t *out, size_t cap, size_t *n, na_kind_t k, uint64_t count,
                const char *msg)
{
    if (count == 0)
        return;
    if (*n < cap) {
        out[*n].kind = k;
        out[*n].count = count;
        out[*n].fails = 0;
        out[*n].in_baseline = 0;
        out[*n].baseline = 0;
        snprintf(out[*n].message, sizeof out[*n].message, "%s", msg);
    }
    (*n)++;
}

static size_t extra_findings(const na_tensor_t *t, const na_result_t *r, const na_checks_t *c,
                             na_finding_t *out, size_t cap, size_t n)
{
    na_extra_t ex;
    layout_t L;
    char m[200];
    layout(c, t->name, &ex, &L);
    const na_stats_t *st = &r->st;
    uint64_t k;
    if ((k = cnt(r, L.range_lo) + cnt(r, L.range_hi)) > 0) {
        char lo[32] = "-inf", hi[32] = "inf", a[32], b[32];
        if (c->range_lo_set)
            na_fmt_num(lo, sizeof lo, c->range_lo);
        if (c->range_hi_set)
            na_fmt_num(hi, sizeof hi, c->range_hi);
        snprintf(m, sizeof m, "%llu value%s outside [%s, %s] (min %s, max %s)",
                 (unsigned long long)k, plural(k), lo, hi,
                 na_fmt_val(a, sizeof a, st->min, t->dtype),
                 na_fmt_val(b, sizeof b, st->max, t->dtype));
        add(out, cap, &n, NA_K_RANGE, k, m);
    }
    if ((k = cnt(r, L.abs_lo) + cnt(r, L.abs_hi)) > 0) {
        char a[32], b[32];
        snprintf(m, sizeof m, "%llu value%s with |x| > %s (max |x| %s)", (unsigned long long)k,
                 plural(k), na_fmt_num(a, sizeof a, c->max_abs),
                 na_fmt_val(b, sizeof b, st->abs_max, t->dtype));
        add(out, cap, &n, NA_K_MAX_ABS, k, m);
    }
    if ((k = cnt(r, L.neg)) > 0) {
        char a[32];
        snprintf(m, sizeof m, "%llu negative value%s (min %s) in a tensor that must be >= 0",
                 (unsigned long long)k, plural(k), na_fmt_val(a, sizeof a, st->min, t->dtype));
        add(out, cap, &n, NA_K_NEGATIVE, k, m);
    }
    double ovf, unf;
    int strict;
    if (L.ovf_lo >= 0 && na_cast_limits(c->cast, &ovf, &strict, &unf) == NA_OK) {
        const char *dt = na_dtype_name(c->cast);
        if ((k = cnt(r, L.ovf_lo) + cnt(r, L.ovf_hi)) > 0) {
            char a[32];
            snprintf(m, sizeof m, "%llu finite value%s overflow%s %s (|x| %s %s %s)",
                     (unsigned long long)k, plural(k), k == 1 ? "s" : "", dt,
                     strict ? ">" : ">=", na_fmt_num(a, sizeof a, ovf),
                     strict ? "becomes NaN, no Inf in this type" : "rounds to Inf");
            add(out, cap, &n, NA_K_CAST_OVERFLOW, k, m);
        }
        if ((k = cnt(r, L.unf_lo) + cnt(r, L.unf_hi)) > 0) {
            char a[32];
            snprintf(m, sizeof m, "%llu nonzero value%s underflow%s %s (|x| <= %s rounds "
                     "to 0)", (unsigned long long)k, plural(k), k == 1 ? "s" : "", dt,
                     na_fmt_num(a, sizeof a, unf));
            add(out, cap, &n, NA_K_CAST_UNDERFLOW, k, m);
        }
    }
    return n;
}

/* Does finding f fail under c? In the mask and above the tolerance. */
static int fails(const na_checks_t *c, const na_result_t *r, const na_finding_t *f,
                 uint64_t elements)
{
    if (!(c->fail_mask & NA_KIND_BIT(f->kind)))
        return 0;
    double frac = c->max_fraction[f->kind];
    if (!(frac > 0))
        return 1;
    uint64_t count = f->count;
    if (f->kind == NA_K_POS_INF || f->kind == NA_K_NEG_INF)
        count = r->st.pos_inf + r->st.neg_inf;
    /* the quotient, not frac * elements: a count of exactly F x elements
     * rounds to F as the user's decimal F does (0.29 * 100 is
     * 28.999999999999996, and 29 of 100 failed at 0.29) */
    return elements ? (double)count / (double)elements > frac : count > 0;
}

size_t na_findings_checked(const na_tensor_t *t, const na_result_t *r, const na_checks_t *c,
                           na_finding_t *out, size_t cap)
{
    size_t n = na_findings(t, r, c->fail_mask, out, cap);
    n = extra_findings(t, r, c, out, cap, n);
    for (size_t i = 0; i < n && i < cap; i++) {
        na_finding_t *f = &out[i];
        f->fails = fails(c, r, f, r->st.elements);
        if (!f->fails && (c->fail_mask & NA_KIND_BIT(f->kind))) {
            size_t len = strlen(f->message);
            snprintf(f->message + len, sizeof f->message - len,
                     " (tolerated: at most %g of the elements)", c->max_fraction[f->kind]);
        }
    }
    return n;
}

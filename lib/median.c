/*
 * median.c - exact per-feature medians by radix selection (see median.h
 * for the method and how a caller drives the passes). Moved out of
 * clean.c so that `scan --mad` uses the same selection as `clean --mad`.
 */
#include "median.h"

#include <math.h>   /* NAN, INFINITY, isfinite */
#include <stdlib.h> /* malloc, free */
#include <string.h> /* memset */

na_status_t na_med_init(na_med_t *m, uint64_t nfeat)
{
    memset(m, 0, sizeof *m);
    m->nfeat = nfeat;
    size_t nf = (size_t)nfeat;
    m->prefix = malloc(nf * sizeof *m->prefix);
    m->rank = malloc(nf * sizeof *m->rank);
    m->lo_val = malloc(nf * sizeof *m->lo_val);
    m->le_count = malloc(nf * sizeof *m->le_count);
    m->next_above = malloc(nf * sizeof *m->next_above);
    if (!m->prefix || !m->rank || !m->lo_val || !m->le_count || !m->next_above) {
        na_med_free(m);
        return NA_E_NOMEM;
    }
    return NA_OK;
}

void na_med_free(na_med_t *m)
{
    if (!m)
        return;
    free(m->hist);
    free(m->prefix);
    free(m->rank);
    free(m->lo_val);
    free(m->le_count);
    free(m->next_above);
    m->hist = m->prefix = m->rank = m->le_count = NULL;
    m->lo_val = m->next_above = NULL;
}

/* Start the radix pass that fixes the digit after m->done bits. */
static void radix_round(na_med_t *m)
{
    m->shift = 64 - m->done - m->bits;
    memset(m->hist, 0, (size_t)(m->nfeat << m->bits) * sizeof(uint64_t));
}

na_status_t na_med_start(na_med_t *m, const uint64_t *n)
{
    uint64_t nf = m->nfeat;
    m->n = n;
    m->bits = nf <= 128 ? 16 : (nf <= 32768 ? 8 : 4);
    free(m->hist);
    m->hist = malloc((size_t)(nf << m->bits) * sizeof(uint64_t));
    if (!m->hist)
        return NA_E_NOMEM;
    for (uint64_t f = 0; f < nf; f++) {
        m->prefix[f] = 0;
        m->rank[f] = n[f] ? (n[f] - 1) / 2 : 0; /* the lower middle rank */
    }
    m->done = 0;
    m->upper = 0;
    m->finished = 0;
    radix_round(m);
    return NA_OK;
}

/* Value of a key (inverse of na_med_key). */
static double key_value(uint64_t k)
{
    uint64_t u = (k >> 63) ? (k & 0x7FFFFFFFFFFFFFFFull) : ~k;
    double v;
    memcpy(&v, &u, 8);
    return v;
}

/* After the last digit: the lower middle values are known; an even count
 * needs one more pass for the upper middle value. */
static void radix_done(na_med_t *m)
{
    free(m->hist);
    m->hist = NULL;
    int even = 0;
    for (uint64_t f = 0; f < m->nfeat; f++) {
        m->lo_val[f] = key_value(m->prefix[f]);
        m->le_count[f] = 0;
        m->next_above[f] = INFINITY;
        even |= m->n[f] && m->n[f] % 2 == 0;
    }
    m->upper = even;
    m->finished = !even;
}

void na_med_next(na_med_t *m)
{
    if (m->finished)
        return;
    if (m->upper) {
        m->finished = 1;
        return;
    }
    /* The digit d of the wanted key: the bucket holding rank[f] among the
     * keys that share the prefix; the rank becomes relative to it. */
    for (uint64_t f = 0; f < m->nfeat; f++) {
        uint64_t *h = &m->hist[f << m->bits], k = m->rank[f], d = 0;
        while (d + 1 < ((uint64_t)1 << m->bits) && k >= h[d])
            k -= h[d++];
        m->rank[f] = k;
        m->prefix[f] = (m->prefix[f] << m->bits) | d;
    }
    m->done += m->bits;
    if (m->done < 64)
        radix_round(m);
    else
        radix_done(m);
}

/* The mean of the two middle values (numpy's median of an even count).
 * numpy computes (lo + hi) / 2, which overflows to inf for two values
 * above DBL_MAX / 2 (say DBL_MAX and 0.99 DBL_MAX) although their mean
 * is finite; then lo / 2 + hi / 2 (exact unless a half is subnormal, and
 * those sums never overflow). Every finite lo + hi keeps numpy's
 * expression, so all other medians stay bit-identical to np.median. */
double na_med_mid(double lo, double hi)
{
    double s = lo + hi;
    return isfinite(s) ? s / 2 : lo / 2 + hi / 2;
}

void na_med_result(const na_med_t *m, double *out)
{
    for (uint64_t f = 0; f < m->nfeat; f++) {
        uint64_t n = m->n[f];
        if (!n) {
            out[f] = NAN;
            continue;
        }
        double lo = m->lo_val[f], med = lo;
        if (n % 2 == 0) {
            double hi = m->le_count[f] > n / 2 ? lo : m->next_above[f];
            med = na_med_mid(lo, hi);
        }
        /* The keys order -0 below +0, so ties of the two zeros can select
         * -0; numpy's partition picks either. The statistics are equal;
         * +0 keeps reports from printing "median -0" or "(x + 0)". */
        out[f] = med == 0 ? 0.0 : med;
    }
}

/*
 * median.h - exact medians in bounded memory by radix selection, and the
 * modified z-score test built on them; shared by `clean --mad`
 * (clean.c, per feature) and `scan --mad` (scan_mad.c, per tensor), so
 * both flag exactly the same values. Internal to lib/, not installed.
 *
 * Radix selection: a double maps to a 64-bit key whose unsigned order is
 * the numeric order (flip all bits of negatives, the sign bit of
 * positives), and each pass over the data fixes B more bits of the
 * wanted key from a histogram per feature. After 64/B passes the key,
 * hence the value, of rank k is exact; numpy's median of an even count
 * averages ranks n/2-1 and n/2, so one more pass finds the upper one (the
 * smallest value above the lower, or the lower itself when it repeats).
 * B = 16 bits when the features number <= 128, 8 when <= 32768, else 4,
 * so the histograms (features x 2^B x 8 bytes) stay <= 64 MiB up to 32768
 * features, and grow as 128 bytes per feature beyond (2 GiB at clean's
 * 16 Mi features; man page, CLEAN).
 *
 * The caller owns the passes (it knows how to read and decode the data):
 *
 *     na_med_start(&m, n);               n[f]: finite values of feature f
 *     while (na_med_more(&m)) {          one read of the data per round
 *         for each finite value v of feature f: na_med_add(&m, f, v);
 *         na_med_next(&m);
 *     }
 *     na_med_result(&m, out);            out[f]: median, NaN when n[f] == 0
 *
 * Values must be fed in the same set (any order) on every pass.
 */
#ifndef NA_MEDIAN_H
#define NA_MEDIAN_H

#include "decode.h" /* NA_HD: also compiled for the GPU (lib/clean_elem.h) */
#include "nanaudit.h"

#include <math.h>   /* fabs */
#include <string.h> /* memcpy */

/* Iglewicz & Hoaglin (1993), "How to Detect and Handle Outliers":
 * M = 0.6745 (x - median) / MAD; MAD == 0 fallback with MeanAD and
 * 1.253314 (DESIGN.md, "Robust alternative"). */
#define NA_MAD_CONST 0.6745
#define NA_MEANAD_CONST 1.253314
#define NA_DEFAULT_MAD 3.5

typedef struct na_med {
    uint64_t nfeat;
    unsigned bits, done;      /* digit width, key bits fixed so far */
    unsigned shift;           /* 64 - done - bits */
    int upper;                /* 1: the upper-middle pass */
    int finished;
    uint64_t *hist;           /* nfeat << bits, during the radix passes */
    const uint64_t *n;        /* per feature: values fed each pass (caller's) */
    uint64_t *prefix, *rank;  /* per feature */
    double *lo_val;           /* per feature: the value of the lower rank */
    uint64_t *le_count;       /* per feature: values <= lo_val */
    double *next_above;       /* per feature: smallest value > lo_val */
} na_med_t;

/* Allocate the per-feature state for nfeat features (about 40 bytes
 * each; the histograms are allocated by na_med_start). NA_E_NOMEM. */
na_status_t na_med_init(na_med_t *m, uint64_t nfeat);
void na_med_free(na_med_t *m); /* NULL-safe on a zeroed or inited m */

/* Begin a selection of the median of each feature; n[f] is the number of
 * finite values fed per pass for feature f (kept by pointer until
 * na_med_result). NA_E_NOMEM for the histograms. */
na_status_t na_med_start(na_med_t *m, const uint64_t *n);

/* 1 while another pass over the data is needed. */
static inline int na_med_more(const na_med_t *m)
{
    return !m->finished;
}

/* Order-preserving key of a double (total order of finite values). */
static inline uint64_t na_med_key(double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}

/* Feed one finite value v of feature f in the current pass. */
static inline void na_med_add(na_med_t *m, uint64_t f, double v)
{
    if (m->upper) {
        if (v <= m->lo_val[f])
            m->le_count[f]++;
        else if (v < m->next_above[f])
            m->next_above[f] = v;
        return;
    }
    uint64_t k = na_med_key(v);
    if (m->done && (k >> (64 - m->done)) != m->prefix[f])
        return;
    m->hist[(f << m->bits) + ((k >> m->shift) & (((uint64_t)1 << m->bits) - 1))]++;
}

/* End of a pass: fix the next digit (or the upper middle value). */
void na_med_next(na_med_t *m);

/* The mean of two middle values lo <= hi without overflow: numpy's
 * (lo + hi) / 2 when that sum is finite, else lo / 2 + hi / 2 (finite
 * for finite inputs, where numpy's gives inf). */
double na_med_mid(double lo, double hi);

/* The medians, numpy's definition (mean of the two middle values of an
 * even count); NaN for a feature with n[f] == 0. */
void na_med_result(const na_med_t *m, double *out);

/* The modified z-score test (DESIGN.md "Definitions"): 1 when finite v
 * has |0.6745 (v - median) / mad| > k, or, when mad == 0,
 * |(v - median) / (1.253314 meanad)| > k; never when both are 0. The one
 * expression clean (CPU and GPU) and scan use, so they round alike. */
NA_HD int na_mad_is_outlier(double v, double median, double mad, double meanad, double k)
{
    if (mad > 0)
        return fabs(NA_MAD_CONST * (v - median) / mad) > k;
    if (meanad > 0)
        return fabs((v - median) / (NA_MEANAD_CONST * meanad)) > k;
    return 0;
}

#endif /* NA_MEDIAN_H */

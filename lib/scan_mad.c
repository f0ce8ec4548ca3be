/*
 * scan_mad.c - `scan --mad K`: the modified z-score of Iglewicz & Hoaglin
 * (1993) in place of the z-score pass 2 (DESIGN.md "Definitions",
 * "Robust alternative"): M = 0.6745 (x - median) / MAD over the finite
 * values, flagged when |M| > K; MAD == 0 falls back to
 * (x - median) / (1.253314 MeanAD); nothing is flagged when that is 0 too.
 *
 * The median and the MAD are exact (numpy's np.median, the mean of the
 * two middle values of an even count) and come from the radix selection
 * of median.h that `clean --mad` uses, and the test is na_mad_is_outlier,
 * so scan flags exactly the values clean flags (clean --global
 * --nonfinite keep sees the same values).
 *
 * Passes after pass 1 (which gives the count of finite values): 4 for the
 * median (16-bit digits), +1 for its upper middle value when the count is
 * even, the same again for the MAD, +1 serial pass for MeanAD only when
 * MAD == 0, and 1 to count and locate the flagged values. Each pass reads
 * the tensor in the same windows and blocks as pass 1, decodes blocks on
 * the OpenMP threads, and merges per-thread histograms (integer counts)
 * or minima, so the result is the same for any --threads. MeanAD is a
 * plain sum in element order, as clean sums it, so the two round alike.
 *
 * Memory: per thread one histogram (2^16 x 8 bytes = 512 KiB), plus one
 * count per block of a window; the block scratch is the scan's (one per
 * thread, scan_pass.c); never a copy of the tensor.
 */
#include "median.h"
#include "scan_kernels.h"

#include <math.h>   /* NAN, INFINITY, fabs */
#include <omp.h>    /* omp_get_thread_num, omp_get_max_threads */
#include <stdlib.h> /* calloc, malloc, free */
#include <string.h> /* memset */

typedef struct mscan {
    const na_tensor_t *t;
    const na_scan_opts_t *o;
    const na_kctx_t *k;
    int threads;
    size_t B, wel;              /* elements per block, per window (a multiple of B) */
    const na_kscratch_t *scr;   /* per thread (scan_pass.c's) */
    na_med_t med;         /* the selection (one feature: the tensor) */
    na_med_t *part;       /* per thread: med with private hist/le_count/next_above */
    uint64_t *phist, *ple;
    double *pnext;
    int stage;            /* 0: values; 1: |x - median| */
    double median, mad, meanad;
    uint64_t *bcnt;       /* flagged values per block of a window */
    na_result_t *r;
} mscan_t;

void na_k_mad_reset(na_result_t *r, double K)
{
    if (!(K > 0))
        return;
    r->method = NA_OUTLIER_MAD;
    r->threshold = K;
    r->outliers_checked = 1;
    r->median = r->mad = r->meanad = NAN;
}

static void ms_free(mscan_t *m)
{
    free(m->part);
    free(m->phist);
    free(m->ple);
    free(m->pnext);
    free(m->bcnt);
    na_med_free(&m->med);
}

static na_status_t ms_alloc(mscan_t *m, na_err_t *err)
{
    size_t nt = (size_t)m->threads;
    m->part = calloc(nt, sizeof *m->part);
    m->phist = malloc((nt << 16) * sizeof *m->phist); /* na_med_start: 16-bit digits */
    m->ple = calloc(nt, sizeof *m->ple);
    m->pnext = calloc(nt, sizeof *m->pnext);
    m->bcnt = calloc(m->wel / m->B, sizeof *m->bcnt);
    if (!m->part || !m->phist || !m->ple || !m->pnext || !m->bcnt ||
        na_med_init(&m->med, 1) != NA_OK)
        return na_err_set(err, NA_E_NOMEM, "%s: out of memory for --mad", m->t->name);
    return NA_OK;
}

/* Work on block j (n elements at blk) on thread `id`, its values decoded
 * in sc; and work on a whole window after its blocks, on the caller's
 * thread. */
typedef void (*ms_block_fn)(mscan_t *m, long j, const na_kscratch_t *sc, size_t n, int id);
typedef void (*ms_window_fn)(mscan_t *m, const unsigned char *w, size_t n, uint64_t e0, long nb);

/* One read of the tensor in scan_pass.c's windows and blocks: `block`
 * (may be NULL) on the OpenMP threads, then `window` (may be NULL). */
static na_status_t ms_each(mscan_t *m, ms_block_fn block, ms_window_fn window, na_err_t *err)
{
    const na_tensor_t *t = m->t;
    size_t B = m->B, stride = t->elem_stride;
    for (uint64_t e0 = 0; e0 < t->elements; e0 += m->wel) {
        size_t n = (size_t)(t->elements - e0 < m->wel ? t->elements - e0 : m->wel);
        const uint8_t *w = NULL;
        if (err)
            err->msg[0] = '\0';
        na_status_t st = t->src.read(t->src.ctx, e0 * stride, n * stride, &w, err);
        if (st != NA_OK) {
            if (err && err->msg[0] == '\0')
                na_err_set(err, st, "%s: read error: %s", t->name, na_status_str(st));
            return st;
        }
        long nb = (long)((n + B - 1) / B);
        int nt = m->threads < nb ? m->threads : (int)nb;
        if (block) {
#pragma omp parallel for num_threads(nt) schedule(static)
            for (long j = 0; j < nb; j++) {
                size_t off = (size_t)j * B, bn = n - off < B ? n - off : B;
                int id = omp_get_thread_num();
                na_k_decode(m->k, w + off * stride, bn, &m->scr[id]);
                block(m, j, &m->scr[id], bn, id);
            }
        }
        if (window)
            window(m, w, n, e0, nb);
    }
    return NA_OK;
}

/* What a selection round looks at for a finite value v. */
static inline double ms_value(const mscan_t *m, double v)
{
    return m->stage ? fabs(v - m->median) : v;
}

/* Per-thread copies of the selection state for the coming round: shared
 * read-only prefix/rank/lo_val, private histogram and upper-pass tallies. */
static void parts_begin(mscan_t *m)
{
    size_t hn = (size_t)1 << m->med.bits;
    for (int i = 0; i < m->threads; i++) {
        m->part[i] = m->med;
        m->part[i].hist = m->phist + (size_t)i * hn;
        m->part[i].le_count = &m->ple[i];
        m->part[i].next_above = &m->pnext[i];
        if (!m->med.upper)
            memset(m->part[i].hist, 0, hn * sizeof(uint64_t));
        m->ple[i] = 0;
        m->pnext[i] = INFINITY;
    }
}

/* Merge the per-thread tallies (sums and minima: order does not matter). */
static void parts_end(mscan_t *m)
{
    size_t hn = (size_t)1 << m->med.bits;
    for (int i = 0; i < m->threads; i++) {
        if (!m->med.upper) {
            for (size_t d = 0; d < hn; d++)
                m->med.hist[d] += m->part[i].hist[d];
        } else {
            m->med.le_count[0] += m->ple[i];
            if (m->pnext[i] < m->med.next_above[0])
                m->med.next_above[0] = m->pnext[i];
        }
    }
}

static void feed_block(mscan_t *m, long j, const na_kscratch_t *sc, size_t n, int id)
{
    (void)j;
    for (size_t i = 0; i < n; i++)
        if (sc->cls[i] < NA_CL_NAN)
            na_med_add(&m->part[id], 0, ms_value(m, sc->val[i]));
}

/* Exact median of the values of the current stage (n of them). */
static na_status_t ms_select(mscan_t *m, const uint64_t *n, double *out, na_err_t *err)
{
    if (na_med_start(&m->med, n) != NA_OK)
        return na_err_set(err, NA_E_NOMEM, "%s: out of memory for --mad", m->t->name);
    na_status_t st = NA_OK;
    while (st == NA_OK && na_med_more(&m->med)) {
        parts_begin(m);
        st = ms_each(m, feed_block, NULL, err);
        parts_end(m);
        na_med_next(&m->med);
    }
    na_med_result(&m->med, out);
    return st;
}

/* MeanAD = mean |x - median|, summed serially in element order exactly as
 * clean sums it (only needed when MAD == 0): the sum goes to m->meanad. */
static void sum_abs_window(mscan_t *m, const unsigned char *w, size_t n, uint64_t e0, long nb)
{
    (void)e0;
    size_t stride = m->t->elem_stride;
    const na_kscratch_t *sc = &m->scr[0];
    for (long j = 0; j < nb; j++) {
        size_t off = (size_t)j * m->B, bn = n - off < m->B ? n - off : m->B;
        na_k_decode(m->k, w + off * stride, bn, sc);
        for (size_t i = 0; i < bn; i++)
            if (sc->cls[i] < NA_CL_NAN)
                m->meanad += fabs(sc->val[i] - m->median);
    }
}

static inline int ms_flag(const mscan_t *m, double v, unsigned char cls)
{
    return cls < NA_CL_NAN && na_mad_is_outlier(v, m->median, m->mad, m->meanad, m->o->mad);
}

static void count_block(mscan_t *m, long j, const na_kscratch_t *sc, size_t n, int id)
{
    (void)id;
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ms_flag(m, sc->val[i], sc->cls[i]);
    m->bcnt[j] = c;
}

/* The block counts of a window summed in block order, and the first
 * max_locations flagged values, ascending. */
static void locate_window(mscan_t *m, const unsigned char *w, size_t n, uint64_t e0, long nb)
{
    na_result_t *r = m->r;
    const na_kscratch_t *sc = &m->scr[0];
    for (long j = 0; j < nb; j++) {
        r->outliers += m->bcnt[j];
        if (!m->bcnt[j] || r->n_out_locs >= m->o->max_locations)
            continue;
        size_t off = (size_t)j * m->B, bn = n - off < m->B ? n - off : m->B;
        na_k_decode(m->k, w + off * m->t->elem_stride, bn, sc);
        for (size_t i = 0; i < bn && r->n_out_locs < m->o->max_locations; i++)
            if (ms_flag(m, sc->val[i], sc->cls[i]))
                r->out_locs[r->n_out_locs++] = e0 + off + i;
    }
}

na_status_t na_k_scan_mad(const na_tensor_t *t, const na_scan_opts_t *o, const na_kctx_t *k,
                          const na_kscratch_t *scr, int threads, size_t B, size_t wel,
                          na_result_t *r, na_err_t *err)
{
    na_k_mad_reset(r, o->mad);
    uint64_t n = r->st.finite;
    if (n == 0)
        return NA_OK; /* no finite value: no median, nothing flagged */
    if (r->st.min == r->st.max) { /* all equal: MAD = MeanAD = 0, nothing flagged */
        r->median = r->st.min;
        r->mad = r->meanad = 0.0;
        return NA_OK;
    }
    mscan_t m;
    memset(&m, 0, sizeof m);
    m.t = t;
    m.o = o;
    m.k = k;
    m.scr = scr;
    m.threads = threads;
    m.B = B;
    m.wel = wel;
    m.r = r;
    na_status_t st = ms_alloc(&m, err);
    if (st == NA_OK) {
        m.stage = 0;
        st = ms_select(&m, &n, &m.median, err);
    }
    if (st == NA_OK) {
        m.stage = 1;
        st = ms_select(&m, &n, &m.mad, err);
    }
    m.meanad = NAN; /* not used while MAD > 0 */
    if (st == NA_OK && m.mad == 0) {
        m.meanad = 0.0;
        st = ms_each(&m, NULL, sum_abs_window, err);
        m.meanad /= (double)n;
    }
    if (st == NA_OK)
        st = ms_each(&m, count_block, locate_window, err);
    if (st == NA_OK) {
        r->pass2 = 1;
        r->median = m.median;
        r->mad = m.mad;
        r->meanad = m.meanad;
    }
    ms_free(&m);
    return st;
}

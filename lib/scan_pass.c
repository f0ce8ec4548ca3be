/*
 * scan_pass.c - na_scan_tensor: streams a tensor through its read
 * callback in windows, runs the block kernels of scan.c on OpenMP threads,
 * merges the per-block statistics in block order, collects locations and
 * decides whether a second (outlier) pass is needed.
 *
 * Determinism: every block's statistics depend only on its elements, and
 * blocks are merged serially in index order with Chan et al.'s formula
 * (stats.c), so the result is bit-identical for any thread count
 * (DESIGN.md, "Merging partial statistics").
 *
 * Block size: NA_BLOCK_ELEMS, or the window's element count when a window
 * holds fewer (only tests use such small windows); a window holds a whole
 * number of blocks, so block j always covers elements [j*B, (j+1)*B).
 *
 * Pass 2 runs only when some finite value lies beyond mean +- K*std: first
 * per tensor (its min and max), then per block: pass 1 keeps each block's
 * min and max (16 bytes per block: 256 KiB for 1 GiB of F32; capped at
 * NA_MAX_BOUNDS entries by letting neighbouring blocks share one
 * conservative entry), and pass 2 reads only windows with a block whose
 * range crosses the threshold.
 */
#include "scan_kernels.h"

#include <math.h>   /* NAN, fabs */
#include <omp.h>    /* omp_get_max_threads, omp_get_thread_num */
#include <stdlib.h> /* calloc, malloc, free */
#include <string.h> /* memset */

#define NA_MAX_BOUNDS (1u << 20) /* 16 MiB of per-block min/max at most */

typedef struct scan {
    const na_tensor_t *t;
    const na_scan_opts_t *o;
    na_kctx_t k;
    int threads;
    size_t B;         /* elements per block */
    size_t wel;       /* elements per window, a multiple of B */
    size_t nscr;      /* scratch slots (= threads) */
    na_kscratch_t *scr;
    na_stats_t *bst;  /* statistics of the blocks of one window */
    uint64_t *bcnt;   /* pass-2 counts of the blocks of one window */
    double *bounds;   /* [2*g]: min, max of bound group g (K > 0 only) */
    uint64_t group;   /* blocks per bound group */
    uint64_t nbounds;
    double mean, thr;
} scan_t;

void na_scan_opts_init(na_scan_opts_t *o)
{
    o->threads = 0;
    o->zscore = NA_DEFAULT_ZSCORE;
    o->max_locations = NA_DEFAULT_MAX_LOCATIONS;
    o->window_bytes = NA_DEFAULT_WINDOW_BYTES;
    o->progress = NULL;
    o->progress_ud = NULL;
}

void na_result_free(na_result_t *r)
{
    if (!r)
        return;
    free(r->nan_locs);
    free(r->inf_locs);
    free(r->out_locs);
    r->nan_locs = r->inf_locs = r->out_locs = NULL;
    r->n_nan_locs = r->n_inf_locs = r->n_out_locs = 0;
}

static void scan_free(scan_t *s)
{
    for (size_t i = 0; s->scr && i < s->nscr; i++) {
        free(s->scr[i].raw);
        free(s->scr[i].val);
        free(s->scr[i].cls);
    }
    free(s->scr);
    free(s->bst);
    free(s->bcnt);
    free(s->bounds);
}

/* Block and window geometry, scratch and location arrays. */
static na_status_t scan_alloc(scan_t *s, na_result_t *r, na_err_t *err)
{
    const na_tensor_t *t = s->t;
    size_t wel = s->o->window_bytes / t->elem_stride;
    if (wel == 0)
        wel = 1;
    s->B = wel < NA_BLOCK_ELEMS ? wel : NA_BLOCK_ELEMS;
    s->wel = wel - wel % s->B;
    uint64_t nblocks = (t->elements + s->B - 1) / s->B;
    size_t wblocks = s->wel / s->B;
    s->nscr = (size_t)s->threads;
    s->scr = calloc(s->nscr, sizeof *s->scr);
    s->bst = malloc(wblocks * sizeof *s->bst);
    s->bcnt = malloc(wblocks * sizeof *s->bcnt);
    int bad = !s->scr || !s->bst || !s->bcnt;
    for (size_t i = 0; !bad && i < s->nscr; i++) {
        s->scr[i].raw = malloc(s->B * 8);
        s->scr[i].val = malloc(s->B * sizeof(double));
        s->scr[i].cls = malloc(s->B);
        bad = !s->scr[i].raw || !s->scr[i].val || !s->scr[i].cls;
    }
    if (!bad && s->o->zscore > 0) {
        s->group = (nblocks + NA_MAX_BOUNDS - 1) / NA_MAX_BOUNDS;
        if (s->group == 0)
            s->group = 1;
        s->nbounds = (nblocks + s->group - 1) / s->group;
        s->bounds = malloc(2 * s->nbounds * sizeof(double));
        bad = !s->bounds;
        for (uint64_t g = 0; !bad && g < s->nbounds; g++) {
            s->bounds[2 * g] = INFINITY;
            s->bounds[2 * g + 1] = -INFINITY;
        }
    }
    size_t nl = s->o->max_locations;
    if (!bad && nl > 0) {
        r->nan_locs = malloc(nl * sizeof(uint64_t));
        r->inf_locs = malloc(nl * sizeof(uint64_t));
        r->out_locs = malloc(nl * sizeof(uint64_t));
        bad = !r->nan_locs || !r->inf_locs || !r->out_locs;
    }
    if (bad)
        return na_err_set(err, NA_E_NOMEM, "%s: out of memory for scan buffers", t->name);
    return NA_OK;
}

static na_status_t read_window(scan_t *s, uint64_t e0, size_t n, const unsigned char **w,
                               na_err_t *err)
{
    const na_tensor_t *t = s->t;
    const uint8_t *p = NULL;
    if (err)
        err->msg[0] = '\0';
    na_status_t st = t->src.read(t->src.ctx, e0 * t->elem_stride, n * t->elem_stride, &p, err);
    if (st != NA_OK) {
        if (err && err->msg[0] == '\0')
            na_err_set(err, st, "%s: read error: %s", t->name, na_status_str(st));
        return st;
    }
    *w = p;
    return NA_OK;
}

/* NaN and Inf locations of block j (first element e) of window w. */
static void pass1_locations(scan_t *s, na_result_t *r, const unsigned char *blk,
                            size_t n, uint64_t e, const na_stats_t *b)
{
    size_t cap = s->o->max_locations;
    int want_nan = b->nan && r->n_nan_locs < cap;
    int want_inf = (b->pos_inf || b->neg_inf) &&
                   (r->n_inf_locs < cap || (b->pos_inf && r->first_pos_inf == UINT64_MAX) ||
                    (b->neg_inf && r->first_neg_inf == UINT64_MAX));
    if (!want_nan && !want_inf)
        return;
    const na_kscratch_t *sc = &s->scr[0];
    na_k_decode(&s->k, blk, n, sc);
    for (size_t i = 0; i < n; i++) {
        unsigned c = sc->cls[i];
        if (c == NA_CL_NAN && r->n_nan_locs < cap)
            r->nan_locs[r->n_nan_locs++] = e + i;
        if (c != NA_CL_POS_INF && c != NA_CL_NEG_INF)
            continue;
        if (r->n_inf_locs < cap)
            r->inf_locs[r->n_inf_locs++] = e + i;
        if (c == NA_CL_POS_INF && r->first_pos_inf == UINT64_MAX)
            r->first_pos_inf = e + i;
        if (c == NA_CL_NEG_INF && r->first_neg_inf == UINT64_MAX)
            r->first_neg_inf = e + i;
    }
}

static void record_bounds(scan_t *s, uint64_t block, const na_stats_t *b)
{
    if (!s->bounds || b->finite == 0)
        return;
    double *g = s->bounds + 2 * (block / s->group);
    if (b->min < g[0])
        g[0] = b->min;
    if (b->max > g[1])
        g[1] = b->max;
}

static na_status_t pass1(scan_t *s, na_result_t *r, na_err_t *err)
{
    const na_tensor_t *t = s->t;
    size_t B = s->B, stride = t->elem_stride;
    for (uint64_t e0 = 0; e0 < t->elements; e0 += s->wel) {
        size_t n = (size_t)(t->elements - e0 < s->wel ? t->elements - e0 : s->wel);
        const unsigned char *w;
        na_status_t st = read_window(s, e0, n, &w, err);
        if (st != NA_OK)
            return st;
        long nb = (long)((n + B - 1) / B);
        int nt = s->threads < nb ? s->threads : (int)nb;
#pragma omp parallel for num_threads(nt) schedule(static)
        for (long j = 0; j < nb; j++) {
            size_t off = (size_t)j * B, bn = n - off < B ? n - off : B;
            na_k_pass1(&s->k, w + off * stride, bn, &s->scr[omp_get_thread_num()], &s->bst[j]);
        }
        for (long j = 0; j < nb; j++) {
            size_t off = (size_t)j * B, bn = n - off < B ? n - off : B;
            na_stats_merge(&r->st, &s->bst[j]);
            record_bounds(s, (e0 + off) / B, &s->bst[j]);
            pass1_locations(s, r, w + off * stride, bn, e0 + off, &s->bst[j]);
        }
        if (s->o->progress)
            s->o->progress(s->o->progress_ud, (uint64_t)n * stride);
    }
    return NA_OK;
}

/* Can block `block` hold an outlier? Same test as the element predicate,
 * applied to its range: |x - mean| is monotone on each side of mean. */
static int block_may_have_outliers(const scan_t *s, uint64_t block)
{
    const double *g = s->bounds + 2 * (block / s->group);
    if (g[0] > g[1])
        return 0; /* no finite value */
    return na_k_is_outlier(g[0], NA_CL_NORMAL, s->mean, s->thr) ||
           na_k_is_outlier(g[1], NA_CL_NORMAL, s->mean, s->thr);
}

static void pass2_locations(scan_t *s, na_result_t *r, const unsigned char *blk, size_t n,
                            uint64_t e)
{
    const na_kscratch_t *sc = &s->scr[0];
    na_k_decode(&s->k, blk, n, sc);
    for (size_t i = 0; i < n && r->n_out_locs < s->o->max_locations; i++)
        if (na_k_is_outlier(sc->val[i], sc->cls[i], s->mean, s->thr))
            r->out_locs[r->n_out_locs++] = e + i;
}

static na_status_t pass2(scan_t *s, na_result_t *r, na_err_t *err)
{
    const na_tensor_t *t = s->t;
    size_t B = s->B, stride = t->elem_stride;
    for (uint64_t e0 = 0; e0 < t->elements; e0 += s->wel) {
        size_t n = (size_t)(t->elements - e0 < s->wel ? t->elements - e0 : s->wel);
        long nb = (long)((n + B - 1) / B), need = 0;
        for (long j = 0; j < nb; j++) {
            int m = block_may_have_outliers(s, e0 / B + (uint64_t)j);
            s->bcnt[j] = (uint64_t)m; /* 1 = look at it, 0 = skip */
            need += m;
        }
        if (need == 0)
            continue; /* no block of this window can hold an outlier: not read */
        const unsigned char *w;
        na_status_t st = read_window(s, e0, n, &w, err);
        if (st != NA_OK)
            return st;
        int nt = s->threads < need ? s->threads : (int)need;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4)
        for (long j = 0; j < nb; j++) {
            if (!s->bcnt[j])
                continue;
            size_t off = (size_t)j * B, bn = n - off < B ? n - off : B;
            s->bcnt[j] = na_k_pass2(&s->k, w + off * stride, bn, s->mean, s->thr,
                                    &s->scr[omp_get_thread_num()]);
        }
        for (long j = 0; j < nb; j++) {
            size_t off = (size_t)j * B, bn = n - off < B ? n - off : B;
            r->outliers += s->bcnt[j];
            if (s->bcnt[j] && r->n_out_locs < s->o->max_locations)
                pass2_locations(s, r, w + off * stride, bn, e0 + off);
        }
    }
    return NA_OK;
}

static void result_reset(na_result_t *r, double K)
{
    memset(r, 0, sizeof *r);
    na_stats_init(&r->st);
    r->std = NAN;
    r->threshold = K;
    r->outliers_checked = K > 0;
    r->first_pos_inf = r->first_neg_inf = UINT64_MAX;
}

na_status_t na_scan_tensor(const na_tensor_t *t, const na_scan_opts_t *o, na_result_t *r,
                           na_err_t *err)
{
    na_scan_opts_t defaults;
    if (!o) {
        na_scan_opts_init(&defaults);
        o = &defaults;
    }
    result_reset(r, o->zscore);
    scan_t s;
    memset(&s, 0, sizeof s);
    s.t = t;
    s.o = o;
    na_status_t st = na_k_setup(&s.k, t, err);
    if (st != NA_OK)
        return st;
    if (t->elements == 0)
        return NA_OK; /* empty tensor: counts 0, statistics NaN (null) */
    if (t->elements > UINT64_MAX / t->elem_stride)
        return na_err_set(err, NA_E_FORMAT, "%s: %llu elements overflow the byte count",
                          t->name, (unsigned long long)t->elements);
    s.threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    st = scan_alloc(&s, r, err);
    if (st == NA_OK)
        st = pass1(&s, r, err);
    if (st == NA_OK) {
        r->std = na_stats_std(&r->st);
        s.mean = r->st.mean;
        s.thr = o->zscore * r->std;
        /* Pass 2 only when the tensor's own range crosses mean +- K*std;
         * std == 0 (constant) can never produce an outlier. */
        if (o->zscore > 0 && r->st.finite > 0 && r->std > 0 &&
            (na_k_is_outlier(r->st.min, NA_CL_NORMAL, s.mean, s.thr) ||
             na_k_is_outlier(r->st.max, NA_CL_NORMAL, s.mean, s.thr))) {
            r->pass2 = 1;
            st = pass2(&s, r, err);
        }
    }
    scan_free(&s);
    if (st != NA_OK) {
        na_result_free(r);
        result_reset(r, o->zscore);
    }
    return st;
}

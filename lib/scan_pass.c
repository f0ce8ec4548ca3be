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
 * per tensor (its min and max), then per block. Pass 1 keeps each block's
 * min and max (16 bytes per block: 256 KiB for 1 GiB of F32; capped at
 * NA_MAX_BOUNDS entries by letting neighbouring blocks share one
 * conservative entry) and, for tensors of up to NA_MAX_CAND_BLOCKS blocks,
 * up to NA_CAND "candidates": the block's values beyond its own mean +-
 * 0.75*K*std, found while the block is still in cache (72 bytes per
 * block). Pass 2 then skips a block whose range is inside the bounds,
 * counts the candidates of a block whose other values are provably
 * inside, and reads again only the rest -- in the usual case of a few
 * scattered outliers, nothing. Windows without a block to read are not
 * read at all.
 */
#include "scan_kernels.h"

#include <math.h>   /* NAN, fabs */
#include <omp.h>    /* omp_get_max_threads, omp_get_thread_num */
#include <stdlib.h> /* calloc, malloc, free */
#include <string.h> /* memset */

#define NA_MAX_BOUNDS (1u << 20) /* 16 MiB of per-block min/max at most */

/* Outlier candidates of a block (see block_candidates): up to NA_CAND
 * values beyond the block's own mean +- CAND_K*K*std, with their indices.
 * When the global bounds turn out to lie outside [dlo, dhi], the block's
 * outliers are among these and pass 2 need not read it again. Kept for
 * tensors of at most NA_MAX_CAND_BLOCKS blocks (about 5 MiB). */
#define NA_CAND 4
#define NA_CAND_NONE UINT32_MAX /* no usable list: read the block */
#define NA_MAX_CAND_BLOCKS (1u << 16)
#define CAND_K 0.75

typedef struct cand {
    double dlo, dhi;          /* values in (dlo, dhi) are not candidates */
    uint32_t n;               /* candidates, or NA_CAND_NONE */
    uint32_t idx[NA_CAND];    /* offsets in the block, ascending */
    double val[NA_CAND];
} cand_t;

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
    uint64_t *bext;   /* interval counts (o->extra), NA_MAX_INTERVALS per block */
    double *bounds;   /* [2*g]: min, max of bound group g (K > 0 only) */
    cand_t *cand;     /* per block, NULL when not kept */
    unsigned char *bflag; /* pass 2, per block of a window: SKIP/READ/CAND */
    uint64_t group;   /* blocks per bound group */
    uint64_t nbounds;
    double mean, thr;
    na_kthr_t th;     /* pass-2 bounds from mean and thr */
    na_kfill_t fill;  /* blocks in the source's fill runs (scan_fill.c) */
} scan_t;

void na_scan_opts_init(na_scan_opts_t *o)
{
    o->threads = 0;
    o->zscore = NA_DEFAULT_ZSCORE;
    o->max_locations = NA_DEFAULT_MAX_LOCATIONS;
    o->window_bytes = NA_DEFAULT_WINDOW_BYTES;
    o->progress = NULL;
    o->progress_ud = NULL;
    o->extra = NULL;
    o->mad = 0;
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
    free(s->bext);
    free(s->bounds);
    free(s->cand);
    free(s->bflag);
    na_kfill_free(&s->fill);
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
    if ((size_t)s->threads > wblocks)
        s->threads = (int)wblocks; /* no more threads than blocks: scratch is per thread */
    s->nscr = (size_t)s->threads;
    s->scr = calloc(s->nscr, sizeof *s->scr);
    s->bst = malloc(wblocks * sizeof *s->bst);
    s->bcnt = malloc(wblocks * sizeof *s->bcnt);
    s->bflag = malloc(wblocks);
    s->fill.flag = malloc(wblocks);
    int bad = !s->scr || !s->bst || !s->bcnt || !s->bflag || !s->fill.flag;
    if (!bad && s->o->extra && s->o->extra->n > 0) {
        s->bext = malloc(wblocks * NA_MAX_INTERVALS * sizeof *s->bext);
        bad = !s->bext;
    }
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
        if (!bad && nblocks <= NA_MAX_CAND_BLOCKS) {
            s->cand = malloc(nblocks * sizeof *s->cand);
            bad = !s->cand;
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

/* Data of block j of a window: the fill template when the block lies in
 * a fill run, else its place in w, which holds the window's blocks from
 * block j0 on (only the blocks that need reading are read). */
static const unsigned char *block_data(const scan_t *s, const unsigned char *w, long j0, long j)
{
    return s->fill.flag[j] ? s->fill.tmpl : w + (size_t)(j - j0) * s->B * s->k.stride;
}

/* Read blocks j0..j1 of the window of n elements at e0. */
static na_status_t read_blocks(scan_t *s, uint64_t e0, size_t n, long j0, long j1,
                               const unsigned char **w, na_err_t *err)
{
    size_t lo = (size_t)j0 * s->B, hi = (size_t)(j1 + 1) * s->B;
    return read_window(s, e0 + lo, (hi < n ? hi : n) - lo, w, err);
}

/* NaN and Inf locations of block j (first element e) of window w. */
static void pass1_locations(scan_t *s, na_result_t *r, const unsigned char *blk,
                            size_t n, uint64_t e, const na_stats_t *b)
{
    na_k_nan_inf_locations(&s->k, blk, n, &s->scr[0], e, b, s->o->max_locations, r);
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

/* Record block b's values beyond its own mean +- CAND_K*K*std. Its data
 * are in cache; a block whose min and max lie inside needs no look at
 * all, others one vectorised count per 64 elements (na_k_find). Runs on
 * the block's thread. */
static void block_candidates(const scan_t *s, const na_stats_t *b, const unsigned char *blk,
                             size_t n, const na_kscratch_t *sc, cand_t *c)
{
    c->n = NA_CAND_NONE;
    double sd = na_stats_std(b);
    if (b->finite == 0 || !(sd > 0) || !isfinite(sd) || !isfinite(b->mean))
        return; /* min/max alone decide about such a block */
    na_kthr_t th;
    na_k_thresholds(&th, b->mean, CAND_K * s->o->zscore * sd);
    uint32_t k = 0;
    if (na_k_is_outlier(b->min, NA_CL_NORMAL, th.mean, th.thr) ||
        na_k_is_outlier(b->max, NA_CL_NORMAL, th.mean, th.thr))
        k = na_k_find(&s->k, blk, n, &th, sc, NA_CAND, c->idx, c->val);
    if (k > NA_CAND)
        return;
    c->dlo = th.dlo;
    c->dhi = th.dhi;
    c->n = k;
}

static na_status_t pass1(scan_t *s, na_result_t *r, na_err_t *err)
{
    const na_tensor_t *t = s->t;
    size_t B = s->B, stride = t->elem_stride;
    for (uint64_t e0 = 0; e0 < t->elements; e0 += s->wel) {
        size_t n = (size_t)(t->elements - e0 < s->wel ? t->elements - e0 : s->wel);
        long nb = (long)((n + B - 1) / B), nfill = 0, j0 = 0, j1 = nb - 1;
        na_status_t st = na_kfill_window(&s->fill, t, &s->k, &s->scr[0], s->o->extra, B, e0, n,
                                         &nfill, err);
        while (j0 < nb && s->fill.flag[j0])
            j0++;
        while (j1 >= j0 && s->fill.flag[j1])
            j1--;
        const unsigned char *w = NULL;
        if (st == NA_OK && j0 <= j1) /* a window wholly in fill runs is not read */
            st = read_blocks(s, e0, n, j0, j1, &w, err);
        if (st != NA_OK)
            return st;
        /* a window of fill blocks only is merges of the template: one
         * thread, no barrier (65536 such windows of a sparse 2^40-element
         * dataset cost minutes of barrier waits on a loaded machine) */
        int nt = j0 > j1 ? 1 : s->threads < nb ? s->threads : (int)nb;
#pragma omp parallel for num_threads(nt) schedule(static)
        for (long j = 0; j < nb; j++) {
            size_t off = (size_t)j * B, bn = n - off < B ? n - off : B;
            const na_kscratch_t *sc = &s->scr[omp_get_thread_num()];
            const unsigned char *p = block_data(s, w, j0, j);
            uint64_t *ext = s->bext ? &s->bext[(size_t)j * NA_MAX_INTERVALS] : NULL;
            if (s->fill.flag[j]) {
                na_kfill_pass1(&s->fill, &s->k, sc, s->o->extra, bn, &s->bst[j], ext);
            } else {
                na_k_pass1(&s->k, p, bn, sc, &s->bst[j]);
                if (ext) /* while the block is in cache (scan_extra.c) */
                    na_k_extra(&s->k, p, bn, sc, s->o->extra, ext);
            }
            if (s->cand)
                block_candidates(s, &s->bst[j], p, bn, sc, &s->cand[(e0 + off) / B]);
        }
        for (long j = 0; j < nb; j++) {
            size_t off = (size_t)j * B, bn = n - off < B ? n - off : B;
            na_stats_merge(&r->st, &s->bst[j]);
            record_bounds(s, (e0 + off) / B, &s->bst[j]);
            pass1_locations(s, r, block_data(s, w, j0, j), bn, e0 + off, &s->bst[j]);
            for (size_t x = 0; s->bext && x < s->o->extra->n; x++)
                r->extra_counts[x] += s->bext[(size_t)j * NA_MAX_INTERVALS + x];
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

enum { B_SKIP = 0, B_READ, B_CAND, B_FILL };

/* What pass 2 does with block `block`: skip it (its range is inside the
 * bounds), count its recorded candidates (every other value lies in
 * (c->dlo, c->dhi), inside the global bounds), or read it again. */
static int block_plan(const scan_t *s, uint64_t block)
{
    if (!block_may_have_outliers(s, block))
        return B_SKIP;
    const cand_t *c = s->cand ? &s->cand[block] : NULL;
    if (c && c->n != NA_CAND_NONE && c->dhi <= s->th.dhi && c->dlo >= s->th.dlo)
        return B_CAND;
    return B_READ;
}

/* Outliers among a block's candidates; their locations come in order. */
static void pass2_candidates(scan_t *s, na_result_t *r, const cand_t *c, uint64_t e)
{
    for (uint32_t i = 0; i < c->n; i++) {
        if (!na_k_is_outlier(c->val[i], NA_CL_NORMAL, s->mean, s->thr))
            continue;
        r->outliers++;
        if (r->n_out_locs < s->o->max_locations)
            r->out_locs[r->n_out_locs++] = e + c->idx[i];
    }
}

/* Count with the kernels the blocks of window w (from block j0 on)
 * planned B_READ. */
static void pass2_kernels(scan_t *s, const unsigned char *w, long j0, size_t n, long nb,
                          long nread)
{
    size_t B = s->B;
    int nt = s->threads < nread ? s->threads : (int)nread;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4)
    for (long j = 0; j < nb; j++) {
        if (s->bflag[j] != B_READ)
            continue;
        size_t off = (size_t)j * B, bn = n - off < B ? n - off : B;
        s->bcnt[j] = na_k_pass2(&s->k, block_data(s, w, j0, j), bn, &s->th,
                                &s->scr[omp_get_thread_num()]);
    }
}

static na_status_t pass2(scan_t *s, na_result_t *r, na_err_t *err)
{
    const na_tensor_t *t = s->t;
    size_t B = s->B;
    for (uint64_t e0 = 0; e0 < t->elements; e0 += s->wel) {
        size_t n = (size_t)(t->elements - e0 < s->wel ? t->elements - e0 : s->wel);
        long nb = (long)((n + B - 1) / B), nread = 0, nfill = 0, j0 = 0, j1 = nb - 1;
        for (long j = 0; j < nb; j++) {
            s->bflag[j] = (unsigned char)block_plan(s, e0 / B + (uint64_t)j);
            s->bcnt[j] = 0;
            nread += s->bflag[j] == B_READ;
        }
        /* Blocks in fill runs are counted from the template (B_FILL). */
        na_status_t st = NA_OK;
        if (nread > 0)
            st = na_kfill_window(&s->fill, t, &s->k, &s->scr[0], NULL, B, e0, n, &nfill, err);
        else
            memset(s->fill.flag, 0, (size_t)nb);
        for (long j = 0; st == NA_OK && nfill > 0 && j < nb; j++)
            if (s->fill.flag[j] && s->bflag[j] == B_READ) {
                s->bflag[j] = B_FILL;
                nread--;
            }
        while (j0 < nb && s->bflag[j0] != B_READ)
            j0++;
        while (j1 >= j0 && s->bflag[j1] != B_READ)
            j1--;
        const unsigned char *w = NULL;
        if (st == NA_OK && nread > 0) /* windows without such a block are not read */
            st = read_blocks(s, e0, n, j0, j1, &w, err);
        if (st != NA_OK)
            return st;
        if (nread > 0) {
            r->pass2 = 1;
            pass2_kernels(s, w, j0, n, nb, nread);
        }
        for (long j = 0; j < nb; j++) {
            size_t off = (size_t)j * B, bn = n - off < B ? n - off : B;
            if (s->bflag[j] == B_CAND)
                pass2_candidates(s, r, &s->cand[(e0 + off) / B], e0 + off);
            if (s->bflag[j] == B_FILL)
                s->bcnt[j] = na_kfill_pass2(&s->fill, &s->k, &s->th, &s->scr[0], bn);
            r->outliers += s->bcnt[j];
            if (s->bcnt[j] && r->n_out_locs < s->o->max_locations)
                pass2_locations(s, r, block_data(s, w, j0, j), bn, e0 + off);
        }
    }
    return NA_OK;
}

void na_k_result_reset(na_result_t *r, double K)
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
    na_scan_opts_t robust; /* --mad replaces the z-score test (scan_mad.c) */
    if (o->mad > 0 && o->zscore != 0) {
        robust = *o;
        robust.zscore = 0;
        o = &robust;
    }
    na_k_result_reset(r, o->zscore);
    na_k_mad_reset(r, o->mad);
    scan_t s;
    memset(&s, 0, sizeof s);
    s.t = t;
    s.o = o;
    na_status_t st = na_k_setup(&s.k, t, err);
    if (st != NA_OK)
        return st;
    r->extra_done = o->extra && o->extra->n > 0; /* unset again if pass 1 fails */
    if (t->elements == 0)
        return NA_OK; /* empty tensor: counts 0, statistics NaN (null) */
    if (t->constant) /* e.g. an unwritten HDF5 dataset of 2^61 elements */
        return na_scan_constant(t, o, r, err);
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
            na_k_thresholds(&s.th, s.mean, s.thr);
            st = pass2(&s, r, err);
        }
    }
    if (st == NA_OK && o->mad > 0)
        st = na_k_scan_mad(t, o, &s.k, s.scr, s.threads, s.B, s.wel, r, err);
    scan_free(&s);
    if (st != NA_OK) {
        na_result_free(r);
        na_k_result_reset(r, o->zscore);
    }
    return st;
}

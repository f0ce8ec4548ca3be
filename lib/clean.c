/*
 * clean.c - the passes of `nanaudit clean` over one tensor (see clean.h
 * for the steps, the pass plan and the memory held).
 *
 * Every pass reads whole rows (samples) into a buffer of doubles, marks
 * the rows already dropped as NaN, applies the steps decided so far, and
 * accumulates what the next decision needs. Within a chunk each feature's
 * statistics are computed two-pass (sum, then squared deviations from
 * the chunk mean) and merged into the running total with Chan, Golub &
 * LeVeque's pairwise update (lib/stats.c), in row order, so the results
 * do not depend on the chunk size beyond rounding and are reproducible.
 *
 * Exact medians (--mad) come from radix selection: a double maps to a
 * 64-bit key whose unsigned order is the numeric order (flip all bits of
 * negatives, the sign bit of positives), and each pass fixes B more bits
 * of the wanted key from a histogram per feature. After 64/B passes the
 * key, hence the value, of rank k is exact; numpy's median of an even
 * count averages ranks n/2-1 and n/2, so one more pass finds the upper
 * one (the smallest value above the lower, or the lower itself when it
 * repeats).
 */
#include "clean.h"

#include <math.h>   /* isfinite, fabs, NAN */
#include <stdlib.h> /* calloc, malloc, free */
#include <string.h> /* memcpy, memset */

void na_clean_opts_init(na_clean_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->nonfinite = NA_NF_KEEP;
    o->nf_value = 0.0;
    o->k = 0.0;
    o->lo = 0.0;
    o->hi = 1.0;
    o->out_dtype = NA_DT_INVALID;
    o->max_locations = NA_DEFAULT_MAX_LOCATIONS;
    o->window_bytes = NA_DEFAULT_WINDOW_BYTES;
}

void na_clean_tensor_free(na_clean_tensor_t *ct)
{
    if (!ct)
        return;
    free(ct->feat);
    free(ct->row_state);
    free(ct->drop_idx);
    ct->feat = NULL;
    ct->row_state = NULL;
    ct->drop_idx = NULL;
}

static void feat_init(na_clean_feat_t *f)
{
    f->passthrough = 0;
    f->nf_fill = f->center = f->scale = f->meanad = NAN;
    f->lo_bound = f->hi_bound = f->fill2 = NAN;
    f->n_min = f->n_max = f->n_mean = f->n_std = NAN;
}

na_status_t na_clean_prepare(const na_tensor_t *t, const na_clean_opts_t *o,
                             na_clean_tensor_t *ct, na_err_t *err)
{
    memset(ct, 0, sizeof *ct);
    if (t->stored != t->dtype || !na_clean_dtype_ok(t->dtype))
        return na_err_set(err, NA_E_UNSUPPORTED,
                          "%s: clean cannot write dtype %s back (supported: F64 F32 F16 "
                          "BF16 and integers)",
                          t->name, na_dtype_name(t->stored));
    if (o->samples && t->ndim >= 1) {
        ct->rows = t->shape[0];
        ct->width = t->shape[0] ? t->elements / t->shape[0] : 1;
    } else {
        ct->rows = t->elements; /* weights: one "row" per element */
        ct->width = 1;
    }
    if (ct->width == 0)
        ct->width = 1;
    if (t->elements == 0)
        ct->rows = 0; /* [5, 0]: nothing to read; the shape is kept */
    ct->nfeat = (o->global || !o->samples) ? 1 : ct->width;
    ct->out_dtype = o->out_dtype;
    if (ct->out_dtype == NA_DT_INVALID) {
        int is_int = !na_dtype_is_float(t->dtype);
        ct->out_dtype = (is_int && o->normalize != NA_NORM_NONE) ? NA_DT_F32 : t->dtype;
    }
    ct->ndim = t->ndim;
    memcpy(ct->out_shape, t->shape, sizeof ct->out_shape);
    ct->out_rows = ct->rows;
    na_stats_init(&ct->before);
    na_stats_init(&ct->after);
    ct->feat = malloc((size_t)ct->nfeat * sizeof *ct->feat);
    ct->row_state = calloc((size_t)ct->rows + 1, 1);
    if (!ct->feat || !ct->row_state) {
        na_clean_tensor_free(ct);
        return na_err_set(err, NA_E_NOMEM, "%s: out of memory for %llu features",
                          t->name, (unsigned long long)ct->nfeat);
    }
    for (uint64_t f = 0; f < ct->nfeat; f++)
        feat_init(&ct->feat[f]);
    return NA_OK;
}

/* ------------------------------------------------------------------ */
/* Reading rows                                                        */
/* ------------------------------------------------------------------ */

#define CHUNK_ELEMS (1u << 22)

typedef struct chunker {
    const na_tensor_t *t;
    uint64_t rows_per;  /* rows per chunk */
    double *buf;        /* rows_per * width doubles */
    size_t esize;
} chunker_t;

static na_status_t chunker_init(chunker_t *c, const na_tensor_t *t, const na_clean_tensor_t *ct,
                                const na_clean_opts_t *o, na_err_t *err)
{
    c->t = t;
    c->esize = t->elem_stride;
    uint64_t per = (o->window_bytes / 8) / ct->width;
    uint64_t by_src = (o->window_bytes / c->esize) / ct->width;
    if (by_src < per)
        per = by_src;
    /* At most 4 Mi elements (32 MiB of doubles) per chunk: the steps walk
     * a chunk several times (smaller is kinder to caches, larger spends
     * less time in OpenMP barriers; 1 Mi and 4 Mi measured alike). */
    uint64_t by_cache = CHUNK_ELEMS / ct->width;
    if (by_cache < per)
        per = by_cache;
    c->rows_per = per ? per : 1;
    c->buf = malloc((size_t)(c->rows_per * ct->width) * sizeof(double));
    if (!c->buf)
        return na_err_set(err, NA_E_NOMEM, "%s: out of memory for a read buffer", t->name);
    return NA_OK;
}

/* Decode rows [r0, r0+nr) into c->buf. */
static na_status_t chunker_read(chunker_t *c, const na_clean_tensor_t *ct, uint64_t r0,
                                uint64_t nr, na_err_t *err)
{
    const na_tensor_t *t = c->t;
    uint64_t n = nr * ct->width;
    const uint8_t *p;
    na_status_t st = t->src.read(t->src.ctx, r0 * ct->width * c->esize, (size_t)(n * c->esize),
                                 &p, err);
    if (st != NA_OK)
        return st;
    double *b = c->buf;
    if (t->dtype == NA_DT_F64 && t->byte_order == NA_LITTLE && c->esize == 8) {
        memcpy(b, p, (size_t)n * 8);
    } else if (t->dtype == NA_DT_F32 && t->byte_order == NA_LITTLE && c->esize == 4) {
#pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < n; i++) {
            float f;
            memcpy(&f, p + 4 * i, 4);
            b[i] = f;
        }
    } else {
#pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < n; i++)
            (void)na_decode1(t->dtype, t->byte_order, p + i * c->esize + t->elem_offset, &b[i]);
    }
    return NA_OK;
}

/* ------------------------------------------------------------------ */
/* The steps on a chunk                                                */
/* ------------------------------------------------------------------ */

static inline const na_clean_feat_t *feat_of(const na_clean_tensor_t *ct, uint64_t j)
{
    return &ct->feat[ct->nfeat == 1 ? 0 : j];
}

/* Rows whose state is in `mask` (bit 1: step-1 drops, bit 2: step-2
 * drops) become NaN, so no statistic sees them. */
static void blank_rows(const na_clean_tensor_t *ct, double *b, uint64_t r0, uint64_t nr, int mask)
{
    for (uint64_t r = 0; r < nr; r++) {
        uint8_t s = ct->row_state[r0 + r];
        if (s && (mask & s))
            for (uint64_t j = 0; j < ct->width; j++)
                b[r * ct->width + j] = NAN;
    }
}

/* Step 1 on one value; *replaced is set when a non-finite value was
 * replaced. A passthrough feature has only non-finite values and keeps
 * them, so it stays out of every later statistic. */
static inline double step1(const na_clean_opts_t *o, const na_clean_feat_t *F, double x,
                           int *replaced)
{
    if (isfinite(x) || F->passthrough)
        return x;
    if (o->nonfinite == NA_NF_ZERO || o->nonfinite == NA_NF_MEAN || o->nonfinite == NA_NF_VALUE) {
        *replaced = 1;
        return F->nf_fill;
    }
    return x;
}

/* 1 when finite v is an outlier under the step-2 parameters of F. */
static inline int is_outlier(const na_clean_opts_t *o, const na_clean_feat_t *F, double v)
{
    if (o->method == NA_OM_ZSCORE)
        return F->scale > 0 && fabs(v - F->center) > o->k * F->scale;
    if (o->method == NA_OM_MAD) {
        if (F->scale > 0)
            return fabs(NA_MAD_CONST * (v - F->center) / F->scale) > o->k;
        if (F->meanad > 0)
            return fabs((v - F->center) / (NA_MEANAD_CONST * F->meanad)) > o->k;
    }
    return 0;
}

typedef struct counts {
    uint64_t replaced_nf, replaced_out, clipped, nanned, flagged, overflow;
} counts_t;

/* Apply step 1 to the chunk (rows r0..r0+nr-1) in place. Rows gone
 * before step 1 (states 1 and NA_CLEAN_ROW_JOINT, blanked to NaN) stay
 * NaN, so no later statistic sees them; step-2 drops are filled like the
 * others but, as every dropped row, not counted as replaced. */
static void apply_step1(const na_clean_opts_t *o, const na_clean_tensor_t *ct, double *b,
                        uint64_t r0, uint64_t nr, counts_t *c)
{
    if (o->nonfinite != NA_NF_ZERO && o->nonfinite != NA_NF_MEAN && o->nonfinite != NA_NF_VALUE)
        return;
    uint64_t replaced = 0;
#pragma omp parallel for schedule(static) reduction(+ : replaced)
    for (uint64_t r = 0; r < nr; r++)
        for (uint64_t j = 0; j < ct->width && !(ct->row_state[r0 + r] & 1); j++) {
            double *x = &b[r * ct->width + j];
            int rep = 0;
            *x = step1(o, feat_of(ct, j), *x, &rep);
            replaced += (uint64_t)(rep && !ct->row_state[r0 + r]);
        }
    if (c)
        c->replaced_nf += replaced;
}

/* Apply step 2 in place. With drop, a row with a flagged value is marked
 * (state 2, unless mark is 0) and blanked. Returns rows newly flagged.
 * Rows are independent, so they are spread over threads; the counts are
 * sums, the same for any thread count. */
static uint64_t apply_step2(const na_clean_opts_t *o, na_clean_tensor_t *ct, double *b,
                            uint64_t r0, uint64_t nr, int mark, counts_t *c)
{
    uint64_t newly = 0, flagged = 0, clipped = 0, nanned = 0, repl = 0;
    if (o->method == NA_OM_NONE)
        return 0;
#pragma omp parallel for schedule(static) reduction(+ : newly, flagged, clipped, nanned, repl)
    for (uint64_t r = 0; r < nr; r++) {
        if (ct->row_state[r0 + r])
            continue;
        int row_flag = 0;
        double *row = &b[r * ct->width];
        for (uint64_t j = 0; j < ct->width; j++) {
            const na_clean_feat_t *F = feat_of(ct, j);
            double v = row[j];
            if (!isfinite(v) || F->passthrough || !is_outlier(o, F, v))
                continue;
            row_flag = 1;
            flagged++;
            switch (o->action) {
            case NA_OA_CLIP:
                row[j] = v < F->center ? F->lo_bound : F->hi_bound;
                clipped++;
                break;
            case NA_OA_NAN:
                row[j] = NAN;
                nanned++;
                break;
            case NA_OA_MEAN:
                row[j] = F->fill2;
                repl++;
                break;
            default:
                break;
            }
        }
        if (row_flag && o->action == NA_OA_DROP) {
            newly++;
            if (mark)
                ct->row_state[r0 + r] = 2;
            for (uint64_t j = 0; j < ct->width; j++)
                row[j] = NAN;
        }
    }
    if (c) {
        c->flagged += flagged;
        c->clipped += clipped;
        c->nanned += nanned;
        c->replaced_out += repl;
    }
    return newly;
}

static inline double step3(const na_clean_opts_t *o, const na_clean_feat_t *F, double v)
{
    if (!isfinite(v) || F->passthrough)
        return v;
    if (o->normalize == NA_NORM_MINMAX) {
        if (F->n_max == F->n_min)
            return o->lo;
        /* The quotient first, as the numpy reference computes it:
         * (x - min) / (max - min), then scaled to LO:HI (exact for 0:1). */
        double q = (v - F->n_min) / (F->n_max - F->n_min);
        return o->lo == 0.0 && o->hi == 1.0 ? q : o->lo + q * (o->hi - o->lo);
    }
    if (o->normalize == NA_NORM_ZSCORE)
        return F->n_std == 0.0 ? 0.0 : (v - F->n_mean) / F->n_std;
    return v;
}

/* ------------------------------------------------------------------ */
/* Statistics of a chunk                                               */
/* ------------------------------------------------------------------ */

/* Statistics of finite b[i*stride], i < n (one block): two-pass within
 * the block (sum, then squared deviations from the block mean). The
 * simd reductions let the compiler vectorise; the result depends only on
 * the block, never on the thread count. Non-finite values are counted in
 * a scalar loop that runs only when there are some. */
static inline __attribute__((always_inline)) void block_stats_s(na_stats_t *blk, const double *b,
                                                                uint64_t n, uint64_t stride)
{
    na_stats_init(blk);
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    uint64_t cnt = 0;
#pragma omp simd reduction(+ : sum, cnt) reduction(min : mn) reduction(max : mx)
    for (uint64_t i = 0; i < n; i++) {
        double x = b[i * stride];
        int fin = isfinite(x);
        sum += fin ? x : 0.0;
        cnt += (uint64_t)fin;
        double lo = fin ? x : INFINITY, hi = fin ? x : -INFINITY;
        mn = lo < mn ? lo : mn;
        mx = hi > mx ? hi : mx;
    }
    blk->elements = n;
    if (cnt < n)
        for (uint64_t i = 0; i < n; i++) {
            double x = b[i * stride];
            if (isnan(x))
                blk->nan++;
            else if (isinf(x))
                *(x > 0 ? &blk->pos_inf : &blk->neg_inf) += 1;
        }
    if (!cnt)
        return;
    double mean = sum / (double)cnt, m2 = 0;
#pragma omp simd reduction(+ : m2)
    for (uint64_t i = 0; i < n; i++) {
        double x = b[i * stride];
        double d = isfinite(x) ? x - mean : 0.0;
        m2 += d * d;
    }
    blk->finite = cnt;
    blk->mean = mean;
    blk->m2 = m2;
    blk->min = mn;
    blk->max = mx;
    blk->abs_max = fabs(mn) > fabs(mx) ? fabs(mn) : fabs(mx);
}

/* Contiguous blocks (global statistics) get their own copy with a
 * constant stride, which vectorises; strided ones gather. */
static void block_stats(na_stats_t *blk, const double *b, uint64_t n, uint64_t stride)
{
    if (stride == 1)
        block_stats_s(blk, b, n, 1);
    else
        block_stats_s(blk, b, n, stride);
}

#define BLOCK 16384 /* elements per block: fits L2 between the two loops */

/* Finite values b[off + i*stride], i < n, merged into s in block order
 * (Chan's merge). par: spread the blocks over OpenMP threads. */
static void accum_par(na_stats_t *s, const double *b, uint64_t n, uint64_t stride, uint64_t off,
                      int par)
{
    uint64_t nb = (n + BLOCK - 1) / BLOCK;
    na_stats_t one, *blks = nb > 1 ? malloc((size_t)nb * sizeof *blks) : &one;
    if (!blks) { /* no memory for partials: one block at a time */
        for (uint64_t k = 0; k < nb; k++) {
            uint64_t len = n - k * BLOCK < BLOCK ? n - k * BLOCK : BLOCK;
            block_stats(&one, b + off + k * BLOCK * stride, len, stride);
            na_stats_merge(s, &one);
        }
        return;
    }
#pragma omp parallel for schedule(static) if (par && nb > 1)
    for (uint64_t k = 0; k < nb; k++) {
        uint64_t len = n - k * BLOCK < BLOCK ? n - k * BLOCK : BLOCK;
        block_stats(&blks[k], b + off + k * BLOCK * stride, len, stride);
    }
    for (uint64_t k = 0; k < nb; k++)
        na_stats_merge(s, &blks[k]);
    if (blks != &one)
        free(blks);
}

static void accum(na_stats_t *s, const double *b, uint64_t n, uint64_t stride, uint64_t off)
{
    accum_par(s, b, n, stride, off, 1);
}

/* Per-feature statistics of a chunk of nr rows into st[nfeat]. */
static void accum_feats(const na_clean_tensor_t *ct, na_stats_t *st, const double *b, uint64_t nr)
{
    if (ct->nfeat == 1)
        accum(&st[0], b, nr * ct->width, 1, 0);
    else
#pragma omp parallel for schedule(static)
        for (uint64_t j = 0; j < ct->width; j++)
            accum_par(&st[j], b, nr, ct->width, j, 0);
}

/* A pass: for every chunk, read, blank rows in `blank`, call fn. */
typedef na_status_t (*chunk_fn)(void *ctx, double *b, uint64_t r0, uint64_t nr, na_err_t *err);

static na_status_t run_pass(const na_tensor_t *t, const na_clean_opts_t *o, na_clean_tensor_t *ct,
                            int blank, chunk_fn fn, void *ctx, na_err_t *err)
{
    chunker_t c;
    na_status_t st = chunker_init(&c, t, ct, o, err);
    if (st != NA_OK)
        return st;
    ct->passes++;
    for (uint64_t r0 = 0; r0 < ct->rows && st == NA_OK; r0 += c.rows_per) {
        uint64_t nr = ct->rows - r0 < c.rows_per ? ct->rows - r0 : c.rows_per;
        st = chunker_read(&c, ct, r0, nr, err);
        if (st != NA_OK)
            break;
        if (blank)
            blank_rows(ct, c.buf, r0, nr, blank);
        st = fn(ctx, c.buf, r0, nr, err);
    }
    free(c.buf);
    return st;
}

/* ------------------------------------------------------------------ */
/* Fit                                                                 */
/* ------------------------------------------------------------------ */

typedef struct fit {
    const na_clean_opts_t *o;
    na_clean_tensor_t *ct;
    na_stats_t *s0, *s1, *s2; /* per feature: input, after step 1, after step 2 */
    int with_before;          /* accumulate ct->before */
    int mark_nf;              /* mark rows with a non-finite value (step-1 drop) */
    int want_s1;              /* accumulate s1 over the rows kept so far */
    uint64_t joint;           /* rows marked NA_CLEAN_ROW_JOINT by the caller */
    /* radix selection (--mad) */
    int mad_stage;            /* 0 median of values, 1 MAD of |v - median| */
    unsigned bits, done;      /* digit width, key bits fixed so far */
    uint64_t *hist;           /* nfeat << bits */
    uint64_t *prefix, *rank;  /* per feature */
    double *lo_val;           /* per feature: the value of the lower rank */
    uint64_t *le_count;       /* per feature: values <= lo_val */
    double *next_above;       /* per feature: smallest value > lo_val */
    double *sum_abs;          /* per feature: sum |v - median| */
} fit_t;

/* Pass A: input statistics, step-1 drop marks and (when nothing turns out
 * to pass through) the statistics after step 1 of the rows kept. */
static na_status_t pass_a(void *ctx, double *b, uint64_t r0, uint64_t nr, na_err_t *err)
{
    fit_t *F = ctx;
    na_clean_tensor_t *ct = F->ct;
    /* One feature: its statistics are the tensor's (copied by the fit). */
    if (F->with_before && (ct->nfeat > 1 || F->joint))
        accum(&ct->before, b, nr * ct->width, 1, 0);
    /* Rows a --together partner dropped: gone before step 1. They are
     * blanked to NaN here and their NaN taken out of s0 after the pass
     * (fit_joint_fix), so s0 counts only the rows that remain. */
    if (F->joint)
        blank_rows(ct, b, r0, nr, NA_CLEAN_ROW_JOINT);
    accum_feats(ct, F->s0, b, nr);
    if (!F->mark_nf)
        return NA_OK;
    for (uint64_t r = 0; r < nr; r++) {
        double *row = &b[r * ct->width];
        int bad = 0;
        if (ct->row_state[r0 + r] == NA_CLEAN_ROW_JOINT)
            continue;
        for (uint64_t j = 0; j < ct->width && !bad; j++)
            bad = !isfinite(row[j]) && !feat_of(ct, j)->passthrough;
        if (bad) {
            ct->row_state[r0 + r] = 1;
            for (uint64_t j = 0; j < ct->width; j++)
                row[j] = NAN;
        }
    }
    if (F->want_s1)
        accum_feats(ct, F->s1, b, nr);
    return NA_OK;
}

/* Pass C: step 2 flags (drop marks) and statistics after step 2. */
static na_status_t pass_s2(void *ctx, double *b, uint64_t r0, uint64_t nr, na_err_t *err)
{
    fit_t *F = ctx;
    apply_step1(F->o, F->ct, b, r0, nr, NULL);
    apply_step2(F->o, F->ct, b, r0, nr, 1, NULL);
    if (F->s2)
        accum_feats(F->ct, F->s2, b, nr);
    return NA_OK;
}

/* Order-preserving key of a double (total order of finite values). */
static inline uint64_t dkey(double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}

static inline double kval(uint64_t k)
{
    uint64_t u = (k >> 63) ? (k & 0x7FFFFFFFFFFFFFFFull) : ~k;
    double v;
    memcpy(&v, &u, 8);
    return v;
}

/* The value a --mad selection looks at: v after step 1 (stage 0) or
 * |v - median| (stage 1). */
static inline double mad_value(const fit_t *F, uint64_t f, double v)
{
    return F->mad_stage ? fabs(v - F->ct->feat[f].center) : v;
}

/* Pass M (radix digit): histogram of the next B bits among keys that
 * match the prefix fixed so far. */
static na_status_t pass_radix(void *ctx, double *b, uint64_t r0, uint64_t nr, na_err_t *err)
{
    fit_t *F = ctx;
    na_clean_tensor_t *ct = F->ct;
    apply_step1(F->o, ct, b, r0, nr, NULL);
    unsigned shift = 64 - F->done - F->bits;
    uint64_t dmask = ((uint64_t)1 << F->bits) - 1;
    for (uint64_t r = 0; r < nr; r++)
        for (uint64_t j = 0; j < ct->width; j++) {
            double v = b[r * ct->width + j];
            uint64_t f = ct->nfeat == 1 ? 0 : j;
            if (!isfinite(v) || ct->feat[f].passthrough)
                continue;
            v = mad_value(F, f, v);
            uint64_t k = dkey(v);
            if (F->done && (k >> (64 - F->done)) != F->prefix[f])
                continue;
            F->hist[(f << F->bits) + ((k >> shift) & dmask)]++;
            if (F->mad_stage && F->done == 0)
                F->sum_abs[f] += v;
        }
    return NA_OK;
}

/* Pass M (upper middle): values <= the lower middle and the smallest above. */
static na_status_t pass_upper(void *ctx, double *b, uint64_t r0, uint64_t nr, na_err_t *err)
{
    fit_t *F = ctx;
    na_clean_tensor_t *ct = F->ct;
    apply_step1(F->o, ct, b, r0, nr, NULL);
    for (uint64_t r = 0; r < nr; r++)
        for (uint64_t j = 0; j < ct->width; j++) {
            double v = b[r * ct->width + j];
            uint64_t f = ct->nfeat == 1 ? 0 : j;
            if (!isfinite(v) || ct->feat[f].passthrough)
                continue;
            v = mad_value(F, f, v);
            if (v <= F->lo_val[f])
                F->le_count[f]++;
            else if (v < F->next_above[f])
                F->next_above[f] = v;
        }
    return NA_OK;
}

/* Exact median of the step-1 values (stage 0) or of |v - median|
 * (stage 1) per feature, counts n[f] known (finite values after step 1).
 * Result in out[f] (NaN when n[f] == 0). */
static na_status_t select_median(const na_tensor_t *t, fit_t *F, const uint64_t *n, double *out,
                                 na_err_t *err)
{
    na_clean_tensor_t *ct = F->ct;
    uint64_t nf = ct->nfeat;
    F->bits = nf <= 128 ? 16 : (nf <= 32768 ? 8 : 4);
    F->hist = malloc((size_t)(nf << F->bits) * sizeof(uint64_t));
    if (!F->hist)
        return na_err_set(err, NA_E_NOMEM, "%s: out of memory for median histograms", t->name);
    for (uint64_t f = 0; f < nf; f++) {
        F->prefix[f] = 0;
        F->rank[f] = n[f] ? (n[f] - 1) / 2 : 0;
    }
    na_status_t st = NA_OK;
    for (F->done = 0; F->done < 64 && st == NA_OK; F->done += F->bits) {
        memset(F->hist, 0, (size_t)(nf << F->bits) * sizeof(uint64_t));
        st = run_pass(t, F->o, ct, 1, pass_radix, F, err);
        for (uint64_t f = 0; f < nf && st == NA_OK; f++) {
            uint64_t *h = &F->hist[f << F->bits], k = F->rank[f], d = 0;
            while (d + 1 < ((uint64_t)1 << F->bits) && k >= h[d])
                k -= h[d++];
            F->rank[f] = k;
            F->prefix[f] = (F->prefix[f] << F->bits) | d;
        }
    }
    free(F->hist);
    F->hist = NULL;
    if (st != NA_OK)
        return st;
    for (uint64_t f = 0; f < nf; f++) {
        F->lo_val[f] = kval(F->prefix[f]);
        F->le_count[f] = 0;
        F->next_above[f] = INFINITY;
    }
    int even = 0;
    for (uint64_t f = 0; f < nf; f++)
        even |= n[f] && n[f] % 2 == 0;
    if (even)
        st = run_pass(t, F->o, ct, 1, pass_upper, F, err);
    for (uint64_t f = 0; f < nf; f++) {
        if (!n[f]) {
            out[f] = NAN;
            continue;
        }
        double lo = F->lo_val[f];
        if (n[f] % 2) {
            out[f] = lo;
        } else {
            uint64_t hi_rank = n[f] / 2;
            double hi = F->le_count[f] > hi_rank ? lo : F->next_above[f];
            out[f] = (lo + hi) / 2; /* numpy: mean of the two middle values */
        }
    }
    return st;
}

/* --mad: median, MAD and MeanAD of the step-1 values of every feature. */
static na_status_t fit_mad(const na_tensor_t *t, fit_t *F, na_err_t *err)
{
    na_clean_tensor_t *ct = F->ct;
    uint64_t nf = ct->nfeat;
    uint64_t *n = calloc((size_t)nf, sizeof *n);
    double *med = calloc((size_t)nf, sizeof *med);
    F->prefix = malloc((size_t)nf * sizeof *F->prefix);
    F->rank = malloc((size_t)nf * sizeof *F->rank);
    F->lo_val = malloc((size_t)nf * sizeof *F->lo_val);
    F->le_count = malloc((size_t)nf * sizeof *F->le_count);
    F->next_above = malloc((size_t)nf * sizeof *F->next_above);
    F->sum_abs = calloc((size_t)nf, sizeof *F->sum_abs);
    na_status_t st = NA_OK;
    if (!n || !med || !F->prefix || !F->rank || !F->lo_val || !F->le_count || !F->next_above ||
        !F->sum_abs)
        st = na_err_set(err, NA_E_NOMEM, "%s: out of memory for --mad", t->name);
    for (uint64_t f = 0; st == NA_OK && f < nf; f++)
        n[f] = F->s1[f].finite;
    if (st == NA_OK) {
        F->mad_stage = 0;
        st = select_median(t, F, n, med, err);
    }
    for (uint64_t f = 0; st == NA_OK && f < nf; f++)
        ct->feat[f].center = med[f];
    if (st == NA_OK) {
        F->mad_stage = 1;
        st = select_median(t, F, n, med, err);
    }
    for (uint64_t f = 0; st == NA_OK && f < nf; f++) {
        na_clean_feat_t *c = &ct->feat[f];
        c->scale = med[f];
        c->meanad = n[f] ? F->sum_abs[f] / (double)n[f] : NAN;
        if (c->scale > 0) {
            c->lo_bound = c->center - F->o->k * c->scale / NA_MAD_CONST;
            c->hi_bound = c->center + F->o->k * c->scale / NA_MAD_CONST;
        } else {
            c->lo_bound = c->center - F->o->k * NA_MEANAD_CONST * c->meanad;
            c->hi_bound = c->center + F->o->k * NA_MEANAD_CONST * c->meanad;
        }
    }
    free(n);
    free(med);
    free(F->prefix);
    free(F->rank);
    free(F->lo_val);
    free(F->le_count);
    free(F->next_above);
    free(F->sum_abs);
    return st;
}

/* Statistics after step 1 without reading: the input's finite values
 * merged with the replaced ones, a group of identical values (mean = the
 * fill, m2 = 0) - Chan's merge again. */
static void s1_analytic(fit_t *F)
{
    na_clean_tensor_t *ct = F->ct;
    for (uint64_t f = 0; f < ct->nfeat; f++) {
        F->s1[f] = F->s0[f];
        uint64_t nonfin = F->s0[f].nan + F->s0[f].pos_inf + F->s0[f].neg_inf;
        double c = ct->feat[f].nf_fill;
        int replaces = F->o->nonfinite == NA_NF_ZERO || F->o->nonfinite == NA_NF_MEAN ||
                       F->o->nonfinite == NA_NF_VALUE;
        if (!replaces || nonfin == 0 || ct->feat[f].passthrough)
            continue;
        na_stats_t g;
        na_stats_init(&g);
        g.finite = nonfin;
        g.mean = g.min = g.max = c;
        g.abs_max = fabs(c);
        g.m2 = 0;
        F->s1[f].nan = F->s1[f].pos_inf = F->s1[f].neg_inf = 0;
        na_stats_merge(&F->s1[f], &g);
    }
}

static void fit_free(fit_t *F)
{
    free(F->s0);
    free(F->s1);
    free(F->s2);
}

/* Take the NaN that pass A put in the partners' rows (NA_CLEAN_ROW_JOINT)
 * back out of s0: each such row gave every feature one NaN per element of
 * the row that belongs to it (width with one global feature, else 1). */
static void fit_joint_fix(fit_t *F)
{
    na_clean_tensor_t *ct = F->ct;
    uint64_t per = F->joint * (ct->nfeat == 1 ? ct->width : 1);
    for (uint64_t f = 0; f < ct->nfeat && per; f++) {
        F->s0[f].nan -= per;
        F->s0[f].elements -= per;
    }
}

static void record_drops(const na_clean_opts_t *o, na_clean_tensor_t *ct)
{
    ct->dropped_nf = ct->dropped_out = ct->dropped_joint = 0;
    size_t cap = o->max_locations;
    free(ct->drop_idx);
    ct->drop_idx = cap ? malloc(cap * sizeof *ct->drop_idx) : NULL;
    ct->n_drop_idx = 0;
    for (uint64_t r = 0; r < ct->rows; r++) {
        uint8_t s = ct->row_state[r];
        if (!s)
            continue;
        if (s == 1)
            ct->dropped_nf++;
        else if (s == NA_CLEAN_ROW_JOINT)
            ct->dropped_joint++;
        else
            ct->dropped_out++;
        if (ct->drop_idx && ct->n_drop_idx < cap)
            ct->drop_idx[ct->n_drop_idx++] = r;
    }
    ct->out_rows = ct->rows - ct->dropped_nf - ct->dropped_out - ct->dropped_joint;
    if (o->samples && ct->ndim >= 1 && ct->rows > 0)
        ct->out_shape[0] = ct->out_rows;
}

na_status_t na_clean_fit(const na_tensor_t *t, const na_clean_opts_t *o, na_clean_tensor_t *ct,
                         na_err_t *err)
{
    fit_t F;
    memset(&F, 0, sizeof F);
    F.o = o;
    F.ct = ct;
    uint64_t nf = ct->nfeat;
    F.s0 = malloc((size_t)nf * sizeof *F.s0);
    F.s1 = malloc((size_t)nf * sizeof *F.s1);
    F.s2 = malloc((size_t)nf * sizeof *F.s2);
    if (!F.s0 || !F.s1 || !F.s2) {
        fit_free(&F);
        return na_err_set(err, NA_E_NOMEM, "%s: out of memory for statistics", t->name);
    }
    for (uint64_t f = 0; f < nf; f++) {
        na_stats_init(&F.s0[f]);
        na_stats_init(&F.s1[f]);
        na_stats_init(&F.s2[f]);
    }
    int nf_drop = o->nonfinite == NA_NF_DROP;
    for (uint64_t r = 0; r < ct->rows; r++)
        F.joint += ct->row_state[r] == NA_CLEAN_ROW_JOINT;
    /* Pass A. With fixed parameters the passthrough features are known;
     * otherwise we assume none and check afterwards. */
    F.with_before = 1;
    F.mark_nf = nf_drop;
    F.want_s1 = nf_drop;
    na_status_t st = run_pass(t, o, ct, 0, pass_a, &F, err);
    if (st != NA_OK)
        goto out;
    if (nf == 1 && !F.joint)
        ct->before = F.s0[0];
    fit_joint_fix(&F);
    int any_pass = 0;
    for (uint64_t f = 0; f < nf; f++) {
        if (!ct->fixed)
            ct->feat[f].passthrough = F.s0[f].finite == 0 && F.s0[f].elements > 0;
        any_pass |= ct->feat[f].passthrough;
        ct->passthrough += (uint64_t)ct->feat[f].passthrough;
    }
    if (nf_drop && any_pass && !ct->fixed) {
        /* Re-mark ignoring the features with no finite value (issue 4:
         * they must not empty the dataset). */
        for (uint64_t r = 0; r < ct->rows; r++)
            if (ct->row_state[r] == 1)
                ct->row_state[r] = 0; /* partners' marks stay */
        for (uint64_t f = 0; f < nf; f++) {
            na_stats_init(&F.s0[f]);
            na_stats_init(&F.s1[f]);
        }
        F.with_before = 0;
        st = run_pass(t, o, ct, 0, pass_a, &F, err);
        if (st != NA_OK)
            goto out;
        fit_joint_fix(&F);
    }
    if (!ct->fixed)
        for (uint64_t f = 0; f < nf; f++) {
            na_clean_feat_t *c = &ct->feat[f];
            c->nf_fill = o->nonfinite == NA_NF_ZERO    ? 0.0
                         : o->nonfinite == NA_NF_VALUE ? o->nf_value
                         : o->nonfinite == NA_NF_MEAN  ? F.s0[f].mean
                                                       : NAN;
        }
    if (!nf_drop)
        s1_analytic(&F);
    int need_stats = !ct->fixed;
    /* Step 2 parameters. */
    if (o->method != NA_OM_NONE) {
        if (need_stats && o->method == NA_OM_ZSCORE) {
            for (uint64_t f = 0; f < nf; f++) {
                na_clean_feat_t *c = &ct->feat[f];
                c->center = F.s1[f].mean;
                c->scale = na_stats_std(&F.s1[f]);
                c->lo_bound = c->center - o->k * c->scale;
                c->hi_bound = c->center + o->k * c->scale;
            }
        } else if (need_stats) {
            st = fit_mad(t, &F, err);
            if (st != NA_OK)
                goto out;
        }
        if (need_stats)
            for (uint64_t f = 0; f < nf; f++)
                ct->feat[f].fill2 = F.s1[f].mean;
        /* Pass C: flags, drops and the statistics after step 2. Without
         * drops and without normalization the pass is only needed for
         * the drop marks, which are none: skip it. */
        if (o->action == NA_OA_DROP || (need_stats && o->normalize != NA_NORM_NONE)) {
            if (!need_stats || o->normalize == NA_NORM_NONE) {
                na_stats_t *keep = F.s2;
                F.s2 = NULL;
                st = run_pass(t, o, ct, 1, pass_s2, &F, err);
                F.s2 = keep;
            } else {
                st = run_pass(t, o, ct, 1, pass_s2, &F, err);
            }
            if (st != NA_OK)
                goto out;
        }
    } else {
        memcpy(F.s2, F.s1, (size_t)nf * sizeof *F.s2);
    }
    /* Step 3 parameters. */
    if (need_stats && o->normalize != NA_NORM_NONE) {
        for (uint64_t f = 0; f < nf; f++) {
            na_clean_feat_t *c = &ct->feat[f];
            c->n_min = F.s2[f].min;
            c->n_max = F.s2[f].max;
            c->n_mean = F.s2[f].mean;
            c->n_std = na_stats_std(&F.s2[f]);
        }
    }
    for (uint64_t f = 0; f < nf && o->normalize != NA_NORM_NONE; f++) {
        const na_clean_feat_t *c = &ct->feat[f];
        if (!c->passthrough && (o->normalize == NA_NORM_MINMAX ? c->n_max == c->n_min
                                                                : c->n_std == 0.0))
            ct->constant++;
    }
    record_drops(o, ct);
out:
    fit_free(&F);
    return st;
}

/* ------------------------------------------------------------------ */
/* Emit                                                                */
/* ------------------------------------------------------------------ */

typedef struct emit {
    const na_clean_opts_t *o;
    na_clean_tensor_t *ct;
    const na_tensor_t *t;
    counts_t c;
    uint8_t *out;
    double *back;       /* decoded output values, for ct->after */
    uint64_t *pos;      /* output row of each row of the chunk */
    size_t osize;
    na_clean_sink_fn sink;
    void *ud;
} emit_t;

/* Round v to the output dtype at p and return the value read back. */
static inline double put_out(na_dtype_t dt, double v, uint8_t *p, uint64_t *over)
{
    if (dt == NA_DT_F32) {
        float f = (float)v;
        memcpy(p, &f, 4);
        *over += isinf(f) && isfinite(v);
        return f;
    }
    if (dt == NA_DT_F64) {
        memcpy(p, &v, 8);
        return v;
    }
    double back;
    *over += (uint64_t)na_clean_encode(dt, v, p);
    (void)na_decode1(dt, NA_LITTLE, p, &back);
    return back;
}

static na_status_t pass_emit(void *ctx, double *b, uint64_t r0, uint64_t nr, na_err_t *err)
{
    emit_t *E = ctx;
    na_clean_tensor_t *ct = E->ct;
    const na_clean_opts_t *o = E->o;
    apply_step1(o, ct, b, r0, nr, &E->c);
    apply_step2(o, ct, b, r0, nr, 0, &E->c);
    /* Output row of each kept input row: a prefix count (kept in pos). */
    uint64_t n = 0;
    for (uint64_t r = 0; r < nr; r++) {
        E->pos[r] = n;
        n += ct->row_state[r0 + r] == 0;
    }
    uint64_t over = 0, w = ct->width;
    na_dtype_t dt = ct->out_dtype;
#pragma omp parallel for schedule(static) reduction(+ : over)
    for (uint64_t r = 0; r < nr; r++) {
        if (ct->row_state[r0 + r])
            continue;
        uint64_t q = E->pos[r] * w;
        for (uint64_t j = 0; j < w; j++) {
            double v = step3(o, feat_of(ct, j), b[r * w + j]);
            E->back[q + j] = put_out(dt, v, E->out + (q + j) * E->osize, &over);
        }
    }
    E->c.overflow += over;
    n *= w;
    accum(&ct->after, E->back, n, 1, 0);
    ct->out_bytes += n * E->osize;
    return n ? E->sink(E->ud, E->out, n * E->osize, err) : NA_OK;
}

na_status_t na_clean_emit(const na_tensor_t *t, const na_clean_opts_t *o, na_clean_tensor_t *ct,
                          na_clean_sink_fn sink, void *ud, na_err_t *err)
{
    emit_t E;
    memset(&E, 0, sizeof E);
    E.o = o;
    E.ct = ct;
    E.t = t;
    E.sink = sink;
    E.ud = ud;
    E.osize = na_dtype_bits(ct->out_dtype) / 8;
    chunker_t probe;
    na_status_t st = chunker_init(&probe, t, ct, o, err);
    if (st != NA_OK)
        return st;
    free(probe.buf);
    size_t n = (size_t)(probe.rows_per * ct->width);
    E.out = malloc(n * E.osize);
    E.back = malloc(n * sizeof(double));
    E.pos = malloc((size_t)probe.rows_per * sizeof *E.pos);
    na_stats_init(&ct->after);
    ct->out_bytes = 0;
    if (!E.out || !E.back || !E.pos)
        st = na_err_set(err, NA_E_NOMEM, "%s: out of memory for the output buffer", t->name);
    else
        st = run_pass(t, o, ct, 3, pass_emit, &E, err);
    ct->replaced_nf = E.c.replaced_nf;
    ct->replaced_out = E.c.replaced_out;
    ct->clipped = E.c.clipped;
    ct->nanned = E.c.nanned;
    ct->flagged = E.c.flagged + ct->dropped_out;
    ct->overflow = E.c.overflow;
    free(E.out);
    free(E.back);
    free(E.pos);
    return st;
}

/*
 * clean.c - the passes of `nanaudit clean` over one tensor (see clean.h
 * for the steps, the pass plan and the memory held).
 *
 * Every pass reads whole rows (samples) into a buffer of doubles, marks
 * the rows already dropped as NaN, applies the steps decided so far, and
 * accumulates what the next decision needs. Each feature's statistics
 * are computed per block (two-pass: sum, then squared deviations from
 * the block mean, in fixed vector lanes) and merged into the running
 * total with Chan, Golub & LeVeque's pairwise update (lib/stats.c) in
 * row order, so the results are the same for any thread count.
 *
 * Two drivers run a pass. Width 1 (rank-1 samples and every weight
 * tensor, the common and the benchmarked case) uses run_tiles: one
 * OpenMP region per chunk, each thread decoding 16 Ki-element blocks
 * straight from the mapped input into its own L2-sized buffer and running
 * all steps of the pass there. Wider rows (per-feature statistics) use
 * run_pass: a chunk decoded into doubles, each step a parallel loop over
 * it. bench/RESULTS.md ("nanaudit clean") has the measurements.
 *
 * Exact medians (--mad) come from the radix selection of median.h (one
 * pass per digit, driven from here), shared with `scan --mad`.
 */
/* lib/ is built as strict C; this file also needs O_TMPFILE and
 * posix_fallocate (state_file) */
#define _GNU_SOURCE
#include "clean.h"
#include "clean_elem.h" /* the per-element steps, shared with gpu/ */
#include "decode.h" /* na_f16_to_f32, na_bf16_to_f32 */
#include "fill.h"   /* na_fill_flags: an HDF5 dataset's unwritten chunks */

#include <float.h>  /* DBL_MAX, FLT_MAX */
#include <math.h>   /* isfinite, fabs, NAN */
#include <omp.h>    /* omp_in_parallel */
#include <errno.h>  /* errno */
#include <fcntl.h>  /* open, O_TMPFILE, posix_fallocate */
#include <stdio.h>  /* snprintf */
#include <stdlib.h> /* calloc, malloc, free, getenv, mkstemp */
#include <string.h> /* memcpy, memset, strerror */
#include <sys/mman.h> /* mmap, munmap */
#include <sys/statvfs.h> /* fstatvfs */
#include <unistd.h> /* sysconf, ftruncate, close, unlink */

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
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    uint64_t phys = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
    o->state_file_min = phys / 16 > (256ull << 20) ? phys / 16 : 256ull << 20;
}

/* A file of `bytes` zero bytes in o->state_dir, mapped shared, or NULL
 * with why (cap bytes) saying what failed. The file has no name
 * (O_TMPFILE; elsewhere mkstemp and unlink at once), so nothing of it
 * outlives the process, SIGKILL included. Its blocks are reserved with
 * posix_fallocate: a full disk is an error here, not a SIGBUS when the
 * kernel writes a page back. It takes at most half of the free space
 * left after the tensor's output (out_bytes: it goes to the same
 * directory; round 37a: a clean that fitted failed with ENOSPC), checked
 * first: ext4 would fill the disk before posix_fallocate failed. */
static uint8_t *state_file(const na_clean_opts_t *o, size_t bytes, uint64_t out_bytes, char *why,
                           size_t cap)
{
    const char *dir = o->state_dir ? o->state_dir : getenv("TMPDIR");
    if (dir == NULL || *dir == '\0')
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/.nanaudit-state-XXXXXX", dir) < (int)sizeof path &&
            (fd = mkstemp(path)) >= 0)
            unlink(path);
    }
    if (fd < 0) {
        snprintf(why, cap, "cannot create a file in '%s': %s", dir, strerror(errno));
        return NULL;
    }
    struct statvfs vs;
    int known = fstatvfs(fd, &vs) == 0;
    uint64_t avail = known ? (uint64_t)vs.f_bavail * vs.f_frsize : 0;
    if (known && (avail < out_bytes || (avail - out_bytes) / 2 < (uint64_t)bytes)) {
        snprintf(why, cap, "no room for %zu bytes in '%s' (%llu bytes free, %llu of them for "
                 "the output)", bytes, dir, (unsigned long long)avail,
                 (unsigned long long)out_bytes);
        close(fd);
        return NULL;
    }
    int e = ftruncate(fd, (off_t)bytes) != 0 ? errno : posix_fallocate(fd, 0, (off_t)bytes);
    void *p = MAP_FAILED;
    if (e == 0) {
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            e = errno;
    }
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(why, cap, "no room for %zu bytes in '%s': %s", bytes, dir, strerror(e));
        return NULL;
    }
    return p;
}

/* ct->row_state for ct->rows rows: 2 bits each, all 0 (kept), in a file
 * when o says so (state_file; out_bytes: the tensor's output), else in
 * memory. NA_E_NOMEM naming both when neither can hold it. */
static na_status_t state_alloc(const char *name, const na_clean_opts_t *o,
                               na_clean_tensor_t *ct, uint64_t out_bytes, na_err_t *err)
{
    size_t bytes = (size_t)(ct->rows / 4) + 1;
    char why[512] = "";
    ct->row_state_mapped = 0;
    if (o != NULL && bytes >= o->state_file_min) {
        ct->row_state = state_file(o, bytes, out_bytes, why, sizeof why);
        if (ct->row_state != NULL) {
            ct->row_state_mapped = bytes;
            return NA_OK;
        }
    }
    ct->row_state = calloc(bytes, 1);
    if (ct->row_state != NULL)
        return NA_OK;
    /* which one: the row map of 2^40 rows is 256 GiB (audit 25a: this
     * said "1 features") */
    return na_err_set(err, NA_E_NOMEM, "%s: out of memory for the state of %llu samples "
                      "(%zu bytes: 2 bits per sample)%s%s", name,
                      (unsigned long long)ct->rows, bytes, *why ? "; and " : "", why);
}

void na_clean_tensor_free(na_clean_tensor_t *ct)
{
    if (!ct)
        return;
    free(ct->feat);
    if (ct->row_state_mapped)
        munmap(ct->row_state, ct->row_state_mapped);
    else
        free(ct->row_state);
    ct->row_state_mapped = 0;
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
    f->n_mean_lo = 0.0;
}

/* The most features a tensor without elements ((0, W)) gets statistics
 * for: 1 Mi covers (0, 3, 512, 512) image batches (~420 MiB during its
 * fit, na_clean_prepare). */
#define NA_CLEAN_MAX_EMPTY_WIDTH (1ull << 20)
/* The most samples a tensor of empty samples ((N, 0)) keeps drop states
 * for: 2^30 (256 MiB of them). A header alone can declare (2^62, 0). */
#define NA_CLEAN_MAX_EMPTY_ROWS (1ull << 30)
/* The most features a tensor with data gets statistics for: 2^24 (16 Mi,
 * (N, 4096, 4096) images) take ~7 GiB during the fit at ~420 bytes each.
 * More would be refused by malloc only where memory is short, and where it
 * is not, a header declaring (N, 2^28) would make the fit touch 110 GiB
 * (hdfgroup-tlayouto.h5): refused before, with --global as the way out. */
#define NA_CLEAN_MAX_FEATURES (1ull << 24)

na_status_t na_clean_prepare(const na_tensor_t *t, const na_clean_opts_t *o,
                             na_clean_tensor_t *ct, na_err_t *err)
{
    memset(ct, 0, sizeof *ct);
    /* BOOL (a mask, a label beside the data) only ever loses rows: a
     * --together follower runs without steps (o has none) and writes
     * its values back as they are. A step would be wrong for it: the
     * z-score of a rare True is large, and a normalized mask is no
     * longer BOOL. */
    if (t->stored == t->dtype && t->dtype == NA_DT_BOOL &&
        (o->nonfinite != NA_NF_KEEP || o->method != NA_OM_NONE ||
         o->normalize != NA_NORM_NONE ||
         (o->out_dtype != NA_DT_INVALID && o->out_dtype != NA_DT_BOOL)))
        return na_err_set(err, NA_E_UNSUPPORTED,
                          "%s: BOOL is never transformed (no NaN, outlier or scale in "
                          "true/false); --together with its partners makes it lose the "
                          "samples they drop",
                          t->name);
    if (t->stored != t->dtype || !(na_clean_dtype_ok(t->dtype) || t->dtype == NA_DT_BOOL))
        return na_err_set(err, NA_E_UNSUPPORTED,
                          "%s: clean cannot write dtype %s back (supported: F64 F32 F16 "
                          "BF16 and integers)",
                          t->name, na_dtype_name(t->stored));
    /* Elements per sample: the product of the trailing dimensions, not
     * elements / shape[0], which has no answer for (0, 3). A header
     * alone can declare it (no data backs an empty tensor), so it is
     * computed without wrapping and, for a tensor without elements,
     * bounded: each feature costs ~420 bytes in the fit (na_clean_feat_t,
     * three na_stats_t, a chunk column) and a hostile (0, 2^40) must not
     * allocate 2^40 of them. Such a tensor is refused as unsupported:
     * without --include the CLI copies it unchanged, which loses nothing
     * (it has no value to clean). */
    uint64_t w = 1;
    if (o->samples && t->ndim >= 1) {
        int zero = 0, over = 0;
        for (int d = 1; d < t->ndim; d++) {
            zero |= t->shape[d] == 0;
            over |= t->shape[d] != 0 && w > UINT64_MAX / t->shape[d];
            w *= t->shape[d];
        }
        if (zero)
            w = 0; /* (0, 2^40, 2^40, 0) has empty samples */
        else if (over)
            return na_err_set(err, NA_E_UNSUPPORTED,
                              "%s: its samples have more than 2^64 elements (a header "
                              "without data)", t->name);
        ct->rows = t->shape[0];
    } else {
        ct->rows = t->elements; /* weights: one "row" per element */
    }
    if (t->elements == 0) {
        /* Nothing to read. Samples of width 0, (5, 0), are still 5
         * samples: beside a (5, 3) dataset they share its sample axis
         * (--together, the misalignment check) and lose the same rows,
         * giving (k, 0) (issue 4); the passes read nothing (run_pass). */
        if (!o->samples || t->ndim < 1 || w != 0)
            ct->rows = 0;
        else if (ct->rows > NA_CLEAN_MAX_EMPTY_ROWS)
            return na_err_set(err, NA_E_UNSUPPORTED,
                              "%s: no data and %llu samples, more than clean keeps sample "
                              "states for without data (%llu)",
                              t->name, (unsigned long long)ct->rows,
                              (unsigned long long)NA_CLEAN_MAX_EMPTY_ROWS);
        if (w > NA_CLEAN_MAX_EMPTY_WIDTH)
            return na_err_set(err, NA_E_UNSUPPORTED,
                              "%s: no data and %llu elements per sample, more features than "
                              "clean keeps statistics for without data (%llu)",
                              t->name, (unsigned long long)w,
                              (unsigned long long)NA_CLEAN_MAX_EMPTY_WIDTH);
    }
    ct->nfeat = (o->global || !o->samples) ? 1 : w; /* 0 for (5, 0) and (0, 0, 3) */
    if (ct->nfeat > NA_CLEAN_MAX_FEATURES)
        return na_err_set(err, NA_E_UNSUPPORTED,
                          "%s: %llu elements per sample, more features than clean keeps "
                          "statistics for (%llu, ~420 bytes each); --global keeps one "
                          "statistic for the tensor",
                          t->name, (unsigned long long)ct->nfeat,
                          (unsigned long long)NA_CLEAN_MAX_FEATURES);
    /* The passes divide by the width and size a chunk by it: empty
     * samples (no feature, nothing to read) run them with width 1. */
    ct->width = w ? w : 1;
    ct->out_dtype = o->out_dtype;
    if (ct->out_dtype == NA_DT_INVALID) {
        int is_int = !na_dtype_is_float(t->dtype);
        ct->out_dtype = (is_int && o->normalize != NA_NORM_NONE) ? NA_DT_F32 : t->dtype;
    }
    ct->ndim = t->ndim;
    memcpy(ct->out_shape, t->shape, sizeof ct->out_shape);
    /* Only finite markers: "a finite value equal to a marker" (the scan's
     * rule, lib/scan_layout.c), and the comparison with == needs one. */
    for (int i = 0; i < t->n_missing && i < 2; i++)
        if (isfinite(t->missing[i])) {
            uint8_t tmp[8];
            double m = t->missing[i], back = m;
            ct->missing[ct->n_missing] = m;
            /* a 64-bit integer marker: compared as that integer, and
             * written as it while the output has the input's dtype. One
             * known only as a double (a compound member's) cannot be,
             * past 2^53: INT64_MIN + 1 and INT64_MIN equal NC_FILL_INT64
             * there and came out as INT64_MIN, "verified" (nineteenth
             * fresh-user round): refused. */
            int wide = t->dtype == NA_DT_I64 || t->dtype == NA_DT_U64;
            if (wide && !((t->missing_exact >> i) & 1u) && fabs(m) >= 0x1p53)
                return na_err_set(err, NA_E_UNSUPPORTED,
                                  "%s: its missing-value marker %.17g is beyond 2^53, where "
                                  "doubles cannot tell %s values apart; --exclude copies it "
                                  "unchanged (--missing none: no markers)",
                                  t->name, m, na_dtype_name(t->dtype));
            if (((t->missing_exact >> i) & 1u) && wide) {
                ct->missing_exact |= 1u << ct->n_missing;
                ct->missing_int[ct->n_missing] = t->missing_int[i];
                if (ct->out_dtype == t->dtype)
                    ct->missing_put_int |= 1u << ct->n_missing;
            }
            int over = na_clean_encode(ct->out_dtype, m, tmp);
            (void)na_decode1(ct->out_dtype, NA_LITTLE, tmp, &back);
            /* A marker the output dtype turns into +-Inf is no marker
             * there (markers are finite): its values would read back as
             * Inf, not as missing, and the verification fail (exit 4). */
            if (over && !isfinite(back))
                return na_err_set(err, NA_E_USAGE,
                                  "%s: its missing-value marker %g overflows %s (it would be "
                                  "written as %g, which is not a marker); use a wider "
                                  "--out-dtype, or --missing none",
                                  t->name, m, na_dtype_name(ct->out_dtype), back);
            ct->missing_out[ct->n_missing++] = back;
        }
    /* --nonfinite value=X written as X (no step 3 rescales it) must be a
     * value of the output dtype: 1e6 into F16 wrote +Inf for a NaN, in a
     * copy "verified" (round 36a; value=inf is already a usage error).
     * Integer data without markers has nothing to fill. */
    if (o->nonfinite == NA_NF_VALUE && o->normalize == NA_NORM_NONE &&
        (na_dtype_is_float(t->dtype) || ct->n_missing)) {
        uint8_t tmp[8];
        double back = o->nf_value;
        if (na_clean_encode(ct->out_dtype, o->nf_value, tmp)) {
            (void)na_decode1(ct->out_dtype, NA_LITTLE, tmp, &back);
            return na_err_set(err, NA_E_USAGE,
                              "%s: --nonfinite value=%g does not fit %s (it would be written as "
                              "%g); give a value within its range, or a wider --out-dtype",
                              t->name, o->nf_value, na_dtype_name(ct->out_dtype), back);
        }
    }
    ct->out_rows = ct->rows;
    na_stats_init(&ct->before);
    na_stats_init(&ct->after);
    ct->feat = malloc((size_t)(ct->nfeat ? ct->nfeat : 1) * sizeof *ct->feat);
    if (!ct->feat)
        return na_err_set(err, NA_E_NOMEM, "%s: out of memory for %llu features",
                          t->name, (unsigned long long)ct->nfeat);
    /* the output's bytes (saturating): the state file leaves room for them */
    uint64_t ob = na_dtype_bits(ct->out_dtype) / 8, out_bytes = UINT64_MAX;
    if (ct->width == 0 || ct->rows <= UINT64_MAX / ct->width / (ob ? ob : 1))
        out_bytes = ct->rows * ct->width * ob;
    na_status_t st = state_alloc(t->name, o, ct, out_bytes, err);
    if (st != NA_OK) {
        na_clean_tensor_free(ct);
        return st;
    }
    for (uint64_t f = 0; f < ct->nfeat; f++)
        feat_init(&ct->feat[f]);
    return NA_OK;
}

/* Bits set among the even positions 0, 2, 4, .. of m (a SWAR count: the
 * default x86-64 target has no POPCNT, and __builtin_popcount becomes a
 * libgcc call). */
static inline uint64_t count_even(uint64_t m)
{
    m = (m & 0x3333333333333333ull) + ((m >> 2) & 0x3333333333333333ull);
    m = (m + (m >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (m * 0x0101010101010101ull) >> 56;
}

/* Rows in states 1, 2 and 3 among the 2-bit states of bytes p[0..nb):
 * lo/hi hold bit 0/1 of each state, so lo & ~hi marks the 1s, hi & ~lo
 * the 2s, lo & hi the 3s (states past the last row are 0). */
static void count_states(const uint8_t *p, uint64_t nb, uint64_t c[4])
{
    const uint64_t E = 0x5555555555555555ull;
    uint64_t c1 = 0, c2 = 0, c3 = 0, q = 0;
    for (; q + 8 <= nb; q += 8) {
        uint64_t v;
        memcpy(&v, p + q, 8);
        uint64_t lo = v & E, hi = (v >> 1) & E;
        c1 += count_even(lo & ~hi);
        c2 += count_even(hi & ~lo);
        c3 += count_even(lo & hi);
    }
    for (; q < nb; q++) {
        uint64_t v = p[q], lo = v & E, hi = (v >> 1) & E;
        c1 += count_even(lo & ~hi);
        c2 += count_even(hi & ~lo);
        c3 += count_even(lo & hi);
    }
    c[0] = 0;
    c[1] = c1;
    c[2] = c2;
    c[3] = c3;
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

/* Rows per chunk: a window of the source, at most 4 Mi elements. */
static uint64_t chunk_rows(const na_tensor_t *t, const na_clean_tensor_t *ct,
                           const na_clean_opts_t *o)
{
    uint64_t per = (o->window_bytes / 8) / ct->width;
    uint64_t by_src = (o->window_bytes / t->elem_stride) / ct->width;
    if (by_src < per)
        per = by_src;
    /* At most 4 Mi elements (32 MiB of doubles) per chunk: the steps walk
     * a chunk several times (smaller is kinder to caches, larger spends
     * less time in OpenMP barriers; 1 Mi and 4 Mi measured alike). */
    uint64_t by_cache = CHUNK_ELEMS / ct->width;
    if (by_cache < per)
        per = by_cache;
    if (per >= 4)
        per -= per % 4; /* chunks start on a byte of the 2-bit row states */
    return per ? per : 1;
}

static na_status_t chunker_init(chunker_t *c, const na_tensor_t *t, const na_clean_tensor_t *ct,
                                const na_clean_opts_t *o, na_err_t *err)
{
    c->t = t;
    c->esize = t->elem_stride;
    c->rows_per = chunk_rows(t, ct, o);
    c->buf = malloc((size_t)(c->rows_per * ct->width) * sizeof(double));
    if (!c->buf)
        return na_err_set(err, NA_E_NOMEM, "%s: out of memory for a read buffer", t->name);
    return NA_OK;
}

/* 1 when element i of the stream at p (stride es) is exactly the integer
 * of marker m, for a marker that is one (na_tensor_t.missing_exact). */
static int exact_miss(const na_tensor_t *t, const na_clean_tensor_t *ct, int m,
                      const uint8_t *p, size_t es, uint64_t i)
{
    return !((ct->missing_exact >> m) & 1u) ||
           na_load_uint(p + i * es + t->elem_offset, 8, t->byte_order == NA_BIG) ==
               ct->missing_int[m];
}

/* Markers of ct in x[0..n) (decoded from the stream at p, stride es)
 * become their NaN stand-ins (clean.h); a NaN that already has a
 * stand-in's bits (only an F64 input can hold one) becomes a plain NaN,
 * so that it is not taken for missing. A 64-bit integer equal to a
 * marker as a double but not as an integer stays a value (clean then
 * refuses it: beyond 2^53). */
static void mark_missing(const na_tensor_t *t, const na_clean_tensor_t *ct, const uint8_t *p,
                         size_t es, double *x, uint64_t n)
{
    /* one marker: the second is NaN, which equals nothing */
    double m0 = ct->missing[0], m1 = ct->n_missing > 1 ? ct->missing[1] : NAN;
    uint64_t s0 = NA_CLEAN_MISS_BITS, s1 = NA_CLEAN_MISS_BITS | 1u;
    double d0, d1;
    memcpy(&d0, &s0, 8);
    memcpy(&d1, &s1, 8);
    for (uint64_t i = 0; i < n; i++) {
        double v = x[i];
        x[i] = v == m0 && exact_miss(t, ct, 0, p, es, i)   ? d0
               : v == m1 && exact_miss(t, ct, 1, p, es, i) ? d1
               : na_clean_is_missing(v)                    ? NAN
                                                           : v;
    }
}

/* Decode rows [r0, r0+nr) into c->buf. */
/* Elements [0, n) of the stream at p (stride es bytes) as doubles, each
 * exactly what na_decode1 gives (NaN made canonical as there, but F32's,
 * F16's and BF16's NaN, converted as they are, keep their sign and
 * payload, which na_ce_put writes back: their payloads stay out of the
 * missing-value stand-ins, NA_CLEAN_MISS_BITS), with a loop per dtype for contiguous
 * little-endian data: na_decode1's per-element dispatch cost 65 % of a
 * clean of I8 data (perf, hdfgroup-tbigdims.h5). Other layouts and
 * dtypes (big-endian, complex parts, F8, F80, BOOL: masks beside the
 * data, never large) go element by element. */
static void decode_run(const na_tensor_t *t, size_t es, const uint8_t *p, double *x, uint64_t n)
{
    size_t w = na_dtype_bits(t->dtype) / 8;
    int plain = es == w && t->elem_offset == 0 && (w == 1 || t->byte_order == NA_LITTLE);
#define NA_RUN(T, EXPR)                                                                            \
    do {                                                                                           \
        for (uint64_t i = 0; i < n; i++) {                                                         \
            T v;                                                                                   \
            memcpy(&v, p + i * sizeof(T), sizeof(T));                                              \
            x[i] = (EXPR);                                                                         \
        }                                                                                          \
        return;                                                                                    \
    } while (0)
    if (plain) {
        switch (t->dtype) {
        case NA_DT_F64:
            memcpy(x, p, (size_t)n * 8);
            return;
        case NA_DT_F32: NA_RUN(float, v);
        case NA_DT_F16: NA_RUN(uint16_t, na_ce_widen(na_f16_to_f32(v)));
        case NA_DT_BF16: NA_RUN(uint16_t, na_ce_widen(na_bf16_to_f32(v)));
        case NA_DT_U8: NA_RUN(uint8_t, (double)v);
        case NA_DT_I8: NA_RUN(int8_t, (double)v);
        case NA_DT_U16: NA_RUN(uint16_t, (double)v);
        case NA_DT_I16: NA_RUN(int16_t, (double)v);
        case NA_DT_U32: NA_RUN(uint32_t, (double)v);
        case NA_DT_I32: NA_RUN(int32_t, (double)v);
        case NA_DT_U64: NA_RUN(uint64_t, (double)v);
        case NA_DT_I64: NA_RUN(int64_t, (double)v);
        default:
            break;
        }
    }
#undef NA_RUN
    if (t->dtype == NA_DT_F16 || t->dtype == NA_DT_BF16) { /* big-endian, strided: NaN kept too */
        for (uint64_t i = 0; i < n; i++) {
            uint16_t h = (uint16_t)na_load_uint(p + i * es + t->elem_offset, 2,
                                                t->byte_order == NA_BIG);
            x[i] = na_ce_widen(t->dtype == NA_DT_F16 ? na_f16_to_f32(h) : na_bf16_to_f32(h));
        }
        return;
    }
    for (uint64_t i = 0; i < n; i++)
        (void)na_decode1(t->dtype, t->byte_order, p + i * es + t->elem_offset, &x[i]);
}

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
    const uint64_t piece = 16384; /* elements per thread's turn */
#pragma omp parallel for schedule(static)
    for (uint64_t a = 0; a < n; a += piece)
        decode_run(t, c->esize, p + a * c->esize, b + a, n - a < piece ? n - a : piece);
    if (ct->n_missing)
        mark_missing(t, ct, p, c->esize, b, n);
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
        unsigned s = na_clean_row(ct, r0 + r);
        if (s && (mask & s))
            for (uint64_t j = 0; j < ct->width; j++)
                b[r * ct->width + j] = NAN;
    }
}

/* The steps on one value (step 1, the outlier test, step 2's action,
 * step 3) and the rounding to the output dtype are na_ce_* in
 * lib/clean_elem.h, which the GPU's write pass compiles too. */

typedef na_clean_counts_t counts_t; /* clean.h */

/* Apply step 1 to the chunk (rows r0..r0+nr-1) in place. Rows gone
 * before step 1 (states 1 and NA_CLEAN_ROW_JOINT, blanked to NaN) stay
 * NaN, so no later statistic sees them; step-2 drops are filled like the
 * others but, as every dropped row, not counted as replaced. Called
 * inside a parallel region (run_tiles), it runs on the calling thread. */
static void apply_step1(const na_clean_opts_t *o, const na_clean_tensor_t *ct, double *b,
                        uint64_t r0, uint64_t nr, counts_t *c)
{
    if (o->nonfinite != NA_NF_ZERO && o->nonfinite != NA_NF_MEAN && o->nonfinite != NA_NF_VALUE)
        return;
    uint64_t replaced = 0;
#pragma omp parallel for schedule(static) reduction(+ : replaced) if (!omp_in_parallel())
    for (uint64_t r = 0; r < nr; r++)
        for (uint64_t j = 0; j < ct->width && !(na_clean_row(ct, r0 + r) & 1); j++) {
            double *x = &b[r * ct->width + j];
            int rep = 0;
            *x = na_ce_step1(o, feat_of(ct, j), *x, ct->n_missing, &rep);
            replaced += (uint64_t)(rep && !na_clean_row(ct, r0 + r));
        }
    if (c)
        c->replaced_nf += replaced;
}

/* 1 when a value of the row may be a z-score outlier: |v - center| >
 * k*std for some feature (pk: +Inf where nothing is flagged). Also 1
 * for an infinite value, which the exact test then skips: a superset,
 * tested in a loop that vectorises. */
static inline int row_may_flag(const double *row, const double *pc, const double *pk, uint64_t w)
{
    int hit = 0;
    for (uint64_t j = 0; j < w; j++)
        hit |= fabs(row[j] - pc[j]) > pk[j];
    return hit;
}

/* Step 2 on one row (row r of the tensor, kept so far) in place: the
 * counts of apply_step2 (newly flagged rows, flagged values, clipped,
 * set NaN, replaced) are added to k[0..4]. */
static inline void step2_row(const na_clean_opts_t *o, na_clean_tensor_t *ct, double *row,
                             uint64_t r, int mark, uint64_t k[5])
{
    int row_flag = 0;
    for (uint64_t j = 0; j < ct->width; j++) {
        if (!na_ce_step2(o, feat_of(ct, j), row[j], &row[j]))
            continue;
        row_flag = 1;
        k[1]++;
        k[2] += o->action == NA_OA_CLIP;
        k[3] += o->action == NA_OA_NAN;
        k[4] += o->action == NA_OA_MEAN;
    }
    if (row_flag && o->action == NA_OA_DROP) {
        k[0]++;
        if (mark)
            na_clean_row_set(ct, r, 2);
        for (uint64_t j = 0; j < ct->width; j++)
            row[j] = NAN;
    }
}

/* The counts of step2_row into c (NULL: none kept); returns k[0]. */
static uint64_t step2_counts(const uint64_t k[5], counts_t *c)
{
    if (c) {
        c->flagged += k[1];
        c->clipped += k[2];
        c->nanned += k[3];
        c->replaced_out += k[4];
    }
    return k[0];
}

/* Apply step 2 in place. With drop, a row with a flagged value is marked
 * (state 2, unless mark is 0) and blanked. Returns rows newly flagged.
 * Rows are independent, so they are spread over threads (or, inside a
 * parallel region, run on the calling thread); the counts are sums, the
 * same for any thread count. */
static uint64_t apply_step2(const na_clean_opts_t *o, na_clean_tensor_t *ct, double *b,
                            uint64_t r0, uint64_t nr, int mark, counts_t *c)
{
    uint64_t newly = 0, flagged = 0, clipped = 0, nanned = 0, repl = 0;
    if (o->method == NA_OM_NONE)
        return 0;
    /* Rows of several values and --zscore: most rows have no outlier, and
     * a vectorised test over the row (centers and bounds per position)
     * lets them skip the exact test. Without memory for it, no skip. */
    uint64_t w = ct->width;
    double *pc = o->method == NA_OM_ZSCORE && w > 1 ? malloc((size_t)w * 2 * sizeof *pc) : NULL,
           *pk = pc ? pc + w : NULL;
    for (uint64_t j = 0; pc && j < w; j++) {
        const na_clean_feat_t *F = feat_of(ct, j);
        pc[j] = F->center;
        pk[j] = F->passthrough || !(F->scale > 0) ? INFINITY : o->k * F->scale;
    }
/* Pieces of 1024 rows from r0 (a multiple of 4, chunk_rows): no two
 * threads share a byte of the 2-bit row states. */
#pragma omp parallel for schedule(static, 1024) \
    reduction(+ : newly, flagged, clipped, nanned, repl) if (!omp_in_parallel())
    for (uint64_t r = 0; r < nr; r++) {
        double *row = &b[r * ct->width];
        if (na_clean_row(ct, r0 + r) || (pc && !row_may_flag(row, pc, pk, w)))
            continue;
        uint64_t k[5] = {0, 0, 0, 0, 0};
        step2_row(o, ct, row, r0 + r, mark, k);
        newly += k[0];
        flagged += k[1];
        clipped += k[2];
        nanned += k[3];
        repl += k[4];
    }
    free(pc);
    const uint64_t k[5] = {newly, flagged, clipped, nanned, repl};
    return step2_counts(k, c);
}

/* ------------------------------------------------------------------ */
/* Statistics of a chunk                                               */
/* ------------------------------------------------------------------ */

/* Statistics of finite b[i*stride], i < n (one block): two-pass within
 * the block (sum, then squared deviations from the block mean). Each sum
 * runs in NA_CLEAN_LANES fixed lanes (element i goes to lane i % 8, two
 * vectors of 4, so that two chains of dependent adds and compares run
 * side by side), combined in a fixed tree: the order of every addition is written here,
 * so the compiler may vectorise the lanes (SSE2 or AVX2 alike) without
 * changing a bit, and the result depends only on the block - not on the
 * thread count, the ISA or the compiler's choice (a single running sum
 * would be a 4-cycle dependency chain per element). Non-finite values
 * are counted in a second loop that runs only when there are some.
 * With `fast`, a first loop without the finite masks tries the block as
 * all finite: a NaN or an infinity leaves a non-finite sum, minimum or
 * maximum in its lane, and then the masked loop runs; on finite values
 * both loops make the same operations in the same order (the masks
 * select every value), so the result does not depend on which ran. */
#define NA_CLEAN_LANES 8
typedef double v4d_t __attribute__((vector_size(32)));   /* GCC and clang */
typedef long long v4l_t __attribute__((vector_size(32))); /* its compare masks */

/* Helpers as macros: a function taking or returning a 32-byte vector
 * changes the ABI in a non-AVX build (-Wpsabi). */
#define LANES_SUM(a) (((a)[0] + (a)[1]) + ((a)[2] + (a)[3]))
/* a where m, else b (m: all-ones or zero lanes of a vector compare) */
#define VSEL(m, a, b) ((v4d_t)(((m) & (v4l_t)(a)) | (~(m) & (v4l_t)(b))))
#define VLOAD(b, i, s) ((v4d_t){(b)[(i) * (s)], (b)[((i) + 1) * (s)], (b)[((i) + 2) * (s)], \
                                (b)[((i) + 3) * (s)]})
/* All ones in the lanes of x that are finite: |x| <= DBL_MAX is false
 * for NaN and +-Inf. */
#define VFINITE(x) ((v4d_t)((v4l_t)(x) & vabs) <= vbig)

/* The lanes are GCC/clang vector types (the compiler's own loop
 * vectoriser leaves the min/max reductions scalar, since it may not
 * reorder them without -ffinite-math-only). */
static inline __attribute__((always_inline)) void block_stats_s(na_stats_t *blk, const double *b,
                                                                uint64_t n, uint64_t stride,
                                                                int fast)
{
    const v4d_t zero = {0, 0, 0, 0}, one = {1, 1, 1, 1};
    const v4d_t inf = {INFINITY, INFINITY, INFINITY, INFINITY};
    const v4d_t vbig = {DBL_MAX, DBL_MAX, DBL_MAX, DBL_MAX};
    const v4l_t vabs = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
    /* [0]: lanes 0-3, [1]: lanes 4-7 */
    v4d_t sum[2] = {zero, zero}, cnt[2] = {zero, zero}, mn[2] = {inf, inf}, mx[2] = {-inf, -inf};
    uint64_t i = 0;
    if (fast) {
        for (; i + NA_CLEAN_LANES <= n; i += NA_CLEAN_LANES)
            for (int h = 0; h < 2; h++) {
                v4d_t x = VLOAD(b, i + 4 * (uint64_t)h, stride);
                sum[h] += x;
                mn[h] = VSEL(x < mn[h], x, mn[h]);
                mx[h] = VSEL(x > mx[h], x, mx[h]);
            }
        for (int l = 0; i < n; i++, l++) {
            double x = b[i * stride];
            sum[l / 4][l % 4] += x;
            mn[l / 4][l % 4] = x < mn[l / 4][l % 4] ? x : mn[l / 4][l % 4];
            mx[l / 4][l % 4] = x > mx[l / 4][l % 4] ? x : mx[l / 4][l % 4];
        }
        /* a lane no value reached (n < 8) keeps +-Inf: the masked loop */
        v4l_t ok = VFINITE(sum[0]) & VFINITE(sum[1]) & VFINITE(mn[0]) & VFINITE(mn[1]) &
                   VFINITE(mx[0]) & VFINITE(mx[1]);
        fast = (ok[0] & ok[1] & ok[2] & ok[3]) != 0;
        if (fast) {
            cnt[0][0] = (double)n; /* every value finite */
        } else {
            for (int h = 0; h < 2; h++) {
                sum[h] = zero;
                mn[h] = inf;
                mx[h] = -inf;
            }
            i = 0;
        }
    }
    for (; !fast && i + NA_CLEAN_LANES <= n; i += NA_CLEAN_LANES)
        for (int h = 0; h < 2; h++) {
            v4d_t x = VLOAD(b, i + 4 * (uint64_t)h, stride);
            v4l_t fin = VFINITE(x);
            sum[h] += VSEL(fin, x, zero);
            cnt[h] += VSEL(fin, one, zero);
            v4d_t lo = VSEL(fin, x, inf), hi = VSEL(fin, x, -inf);
            mn[h] = VSEL(lo < mn[h], lo, mn[h]);
            mx[h] = VSEL(hi > mx[h], hi, mx[h]);
        }
    for (int l = 0; !fast && i < n; i++, l++) { /* the tail, lane i % 8 as above */
        double x = b[i * stride];
        if (fabs(x) <= DBL_MAX) {
            sum[l / 4][l % 4] += x;
            cnt[l / 4][l % 4] += 1.0;
            mn[l / 4][l % 4] = x < mn[l / 4][l % 4] ? x : mn[l / 4][l % 4];
            mx[l / 4][l % 4] = x > mx[l / 4][l % 4] ? x : mx[l / 4][l % 4];
        }
    }
    /* lanes l and l + 4 first, then the tree of LANES_SUM */
    v4d_t sumv = sum[0] + sum[1], cntv = cnt[0] + cnt[1];
    v4d_t mnv = VSEL(mn[1] < mn[0], mn[1], mn[0]), mxv = VSEL(mx[1] > mx[0], mx[1], mx[0]);
    na_stats_init(blk);
    blk->elements = n;
    uint64_t c = (uint64_t)LANES_SUM(cntv); /* exact: n <= 2^53 */
    if (c < n) { /* branch-free, so it vectorises too */
        uint64_t nan = 0, pinf = 0, miss = 0;
        for (i = 0; i < n; i++) {
            double x = b[i * stride];
            uint64_t bits;
            memcpy(&bits, &x, 8);
            nan += (uint64_t)(x != x);
            pinf += (uint64_t)(x == INFINITY);
            miss += (uint64_t)((bits & ~1ull) == NA_CLEAN_MISS_BITS); /* clean.h */
        }
        blk->nan = nan - miss;
        blk->missing = miss;
        blk->pos_inf = pinf;
        blk->neg_inf = n - c - nan - pinf;
    }
    if (!c)
        return;
    double mean = LANES_SUM(sumv) / (double)c, lo = mnv[0], hi = mxv[0];
    for (int l = 1; l < 4; l++) {
        lo = mnv[l] < lo ? mnv[l] : lo;
        hi = mxv[l] > hi ? mxv[l] : hi;
    }
    const v4d_t vmean = {mean, mean, mean, mean};
    /* the deviations' sum only for a block na_stats_block corrects, as
     * the scan kernels do (P1_DEVIATIONS): the others ignore it */
    const int narrow = na_stats_narrow(lo, hi, mean);
    v4d_t m2[2] = {zero, zero}, sd[2] = {zero, zero};
    if (fast)
        for (i = 0; i + NA_CLEAN_LANES <= n; i += NA_CLEAN_LANES)
            for (int h = 0; h < 2; h++) {
                v4d_t d = VLOAD(b, i + 4 * (uint64_t)h, stride) - vmean;
                m2[h] += d * d;
                if (narrow)
                    sd[h] += d;
            }
    else
        for (i = 0; i + NA_CLEAN_LANES <= n; i += NA_CLEAN_LANES)
            for (int h = 0; h < 2; h++) {
                v4d_t x = VLOAD(b, i + 4 * (uint64_t)h, stride);
                v4d_t d = VSEL(VFINITE(x), x - vmean, zero);
                m2[h] += d * d;
                if (narrow)
                    sd[h] += d;
            }
    for (int l = 0; i < n; i++, l++) {
        double x = b[i * stride];
        double d = fabs(x) <= DBL_MAX ? x - mean : 0.0;
        m2[l / 4][l % 4] += d * d;
        sd[l / 4][l % 4] += d;
    }
    v4d_t m2v = m2[0] + m2[1], sdv = sd[0] + sd[1];
    blk->finite = c;
    blk->min = lo;
    blk->max = hi;
    blk->abs_max = fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi);
    na_stats_block(blk, mean, LANES_SUM(m2v), LANES_SUM(sdv));
}

/* Contiguous blocks (global statistics) get their own copy with a
 * constant stride, which vectorises; strided ones gather. Cloned for
 * AVX2 with a run-time dispatch, as the scan kernels (lib/scan.c); the
 * fixed lanes make both clones give the same bits. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(NA_NO_CLONES)
#define NA_CLEAN_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NA_CLEAN_CLONES
#endif
NA_CLEAN_CLONES
static void block_stats(na_stats_t *blk, const double *b, uint64_t n, uint64_t stride)
{
    if (stride == 1)
        block_stats_s(blk, b, n, 1, 1);
    else
        block_stats_s(blk, b, n, stride, 1);
}

/* block_stats of a contiguous block that likely holds NaN (rows blanked
 * by a step): the masked loop only. */
NA_CLEAN_CLONES
static void block_stats_nan(na_stats_t *blk, const double *b, uint64_t n)
{
    block_stats_s(blk, b, n, 1, 0);
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

/* Features per group of accum_feats: 8 doubles of a row are one cache
 * line, and 8 columns of BLOCK rows (1 MiB) stay in L2. */
#define FEAT_GROUP 8

/* Per-feature statistics of a chunk of nr rows into st[nfeat]: for each
 * feature, blocks of BLOCK rows merged in order, as accum_par does. A
 * thread takes a group of FEAT_GROUP features and copies each block of
 * their columns into contiguous scratch first (a transpose), so that a
 * row's cache line is read once for the group, not once per feature, and
 * block_stats runs on contiguous data; the values, blocks and merge
 * order are those of the strided walk, so are the results. Without
 * memory for the scratch, the strided walk. */
static void accum_feats(const na_clean_tensor_t *ct, na_stats_t *st, const double *b, uint64_t nr)
{
    uint64_t w = ct->width, ng = (w + FEAT_GROUP - 1) / FEAT_GROUP;
    if (ct->nfeat == 1) {
        accum(&st[0], b, nr * ct->width, 1, 0);
        return;
    }
#pragma omp parallel
    {
        double *tb = malloc((size_t)FEAT_GROUP * BLOCK * sizeof(double));
#pragma omp for schedule(dynamic)
        for (uint64_t g = 0; g < ng; g++) {
            uint64_t j0 = g * FEAT_GROUP, gw = w - j0 < FEAT_GROUP ? w - j0 : FEAT_GROUP;
            if (!tb) {
                for (uint64_t j = j0; j < j0 + gw; j++)
                    accum_par(&st[j], b, nr, w, j, 0);
                continue;
            }
            for (uint64_t r0 = 0; r0 < nr; r0 += BLOCK) {
                uint64_t len = nr - r0 < BLOCK ? nr - r0 : BLOCK;
                for (uint64_t i = 0; i < len; i++)
                    for (uint64_t c = 0; c < gw; c++)
                        tb[c * BLOCK + i] = b[(r0 + i) * w + j0 + c];
                for (uint64_t c = 0; c < gw; c++) {
                    na_stats_t one;
                    block_stats(&one, tb + c * BLOCK, len, 1);
                    na_stats_merge(&st[j0 + c], &one);
                }
            }
        }
        free(tb);
    }
}

/* A pass: for every chunk, read, blank rows in `blank`, call fn. */
typedef na_status_t (*chunk_fn)(void *ctx, double *b, uint64_t r0, uint64_t nr, na_err_t *err);

static na_status_t run_pass(const na_tensor_t *t, const na_clean_opts_t *o, na_clean_tensor_t *ct,
                            int blank, chunk_fn fn, void *ctx, na_err_t *err)
{
    chunker_t c;
    if (t->elements == 0) { /* (5, 0): samples without values, nothing to read */
        ct->passes++;
        return NA_OK;
    }
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
/* Width 1: one parallel region per chunk                              */
/* ------------------------------------------------------------------ */

/* Rank-1 samples and weight tensors have width 1 (so one feature): for
 * them a pass decodes each block of BLOCK elements straight from the
 * mapped input into a thread's own buffer (128 KiB, it stays in L2) and
 * runs every step of the pass on it before the next block, in one OpenMP
 * region per chunk. The general path above decodes a whole chunk into
 * doubles (32 MiB) and walks it once per step, which makes each step a
 * trip to memory. The blocks are those of accum() (BLOCK elements from
 * the start of the chunk) and their statistics are merged in block order
 * after the region, so the results do not depend on the thread count. */

typedef struct tiles tiles_t;
/* Per block k (rows r0..r0+n-1) of the current chunk; x: its values. */
typedef void (*tile_fn)(tiles_t *T, double *x, uint64_t k, uint64_t r0, uint64_t n);

typedef struct tile_ops {
    tile_fn count;     /* optional, before the blocks run: T->aux[k] = a count */
    tile_fn blk;       /* the steps on one block (x decoded) */
    na_status_t (*end)(tiles_t *T, na_err_t *err); /* after, in block order */
    /* optional: what end() left to do that may overlap the next chunk's
     * blocks (the emit's write of the chunk's output): run by one thread
     * while the others start on the next chunk, or after the last one */
    na_status_t (*io)(tiles_t *T, na_err_t *err);
    /* optional: where block k's output bytes are and *len their length
     * (the emit), for the reuse of a fill block's results (fill_reuse) */
    uint8_t *(*out_at)(tiles_t *T, uint64_t k, size_t *len);
} tile_ops_t;

struct tiles {
    const na_tensor_t *t;
    na_clean_tensor_t *ct;
    void *ctx;
    const uint8_t *p;     /* the chunk's bytes */
    uint64_t r0, nr, nb;  /* the chunk: first row, rows, blocks */
    na_stats_t *part[3];  /* per block of the chunk */
    counts_t *cnt;        /* per block */
    uint64_t *aux;        /* per block: count, then its exclusive prefix sum */
    uint64_t aux_total;
    int nomem;            /* a thread had no memory for its buffer */
    /* Fill runs (na_source_t.fill: an HDF5 dataset's unwritten chunks):
     * flag[k] = block k of the chunk is copies of the element tmpl holds
     * (BLOCK of them), decoded from tmpl instead of the input. A whole
     * block of them, all rows kept, has the results of the first such
     * block computed (the cache): its statistics, counts and output
     * bytes are copied, not recomputed, unless that block marked rows. */
    uint8_t *flag;
    uint8_t *tmpl;
    int fill_off;         /* the source gave runs of different elements */
    int cache_ok, cache_have;
    uint64_t cache_k;     /* the block of this chunk computed for the cache */
    na_stats_t cache_part[3];
    counts_t cache_cnt;
    uint8_t *cache_out;   /* BLOCK output values (8 bytes at most each) */
    size_t cache_len;
};

/* Decode block k of the chunk into x (n elements). */
static void tile_decode(const tiles_t *T, uint64_t k, double *x, uint64_t n)
{
    const na_tensor_t *t = T->t;
    size_t es = t->elem_stride;
    const uint8_t *p = T->flag[k] ? T->tmpl : T->p + k * BLOCK * es;
    decode_run(t, es, p, x, n);
    if (T->ct->n_missing)
        mark_missing(t, T->ct, p, es, x, n);
}

/* The row states of the block a run_tiles buffer x holds, one byte per
 * row (unpacked by tile_unpack in the ops that need them, read-only:
 * marks go to ct->row_state). */
static inline uint8_t *tile_rs(double *x)
{
    return (uint8_t *)(x + 2 * BLOCK);
}

/* The four 2-bit row states of a byte v of row_state as four bytes. */
#define UNPACK1(v) {(v) & 3, ((v) >> 2) & 3, ((v) >> 4) & 3, (v) >> 6}
#define UNPACK4(v) UNPACK1(v), UNPACK1((v) + 1), UNPACK1((v) + 2), UNPACK1((v) + 3)
#define UNPACK16(v) UNPACK4(v), UNPACK4((v) + 4), UNPACK4((v) + 8), UNPACK4((v) + 12)
#define UNPACK64(v) UNPACK16(v), UNPACK16((v) + 16), UNPACK16((v) + 32), UNPACK16((v) + 48)
static const uint8_t g_unpack[256][4] = {UNPACK64(0), UNPACK64(64), UNPACK64(128),
                                         UNPACK64(192)};

/* States of rows r0..r0+n-1 (r0 a multiple of 4) into rs, a byte each. */
static void tile_unpack(const na_clean_tensor_t *ct, uint8_t *rs, uint64_t r0, uint64_t n)
{
    const uint8_t *p = ct->row_state + r0 / 4;
    uint64_t i = 0;
    for (; i + 4 <= n; i += 4)
        memcpy(rs + i, g_unpack[p[i / 4]], 4);
    for (; i < n; i++)
        rs[i] = (uint8_t)na_clean_row(ct, r0 + i);
}

/* Rows in state 0 among rows r0..r0+n-1 (r0 a multiple of 4). */
static uint64_t count_kept(const na_clean_tensor_t *ct, uint64_t r0, uint64_t n)
{
    uint64_t c[4], gone = 0;
    count_states(ct->row_state + r0 / 4, n / 4, c);
    for (uint64_t i = n / 4 * 4; i < n; i++)
        gone += na_clean_row(ct, r0 + i) != 0;
    return n - gone - c[1] - c[2] - c[3];
}

/* Rows per chunk of the width-1 path (run_tiles), which keeps no chunk
 * of doubles: a window of input and of output values (and at least 4
 * bytes a row: 16 Mi rows for the default 64 MiB), in whole blocks, so
 * that the blocks (and the statistics) do not depend on the window size.
 * Fewer chunks mean fewer OpenMP barriers and serial gaps (the read, the
 * write). */
static uint64_t tile_rows(const na_tensor_t *t, const na_clean_tensor_t *ct,
                          const na_clean_opts_t *o)
{
    uint64_t unit = t->elem_stride, osize = na_dtype_bits(ct->out_dtype) / 8;
    unit = unit > osize ? unit : osize;
    unit = unit > 4 ? unit : 4;
    uint64_t per = o->window_bytes / unit / BLOCK * BLOCK;
    return ct->width == 1 && per ? per : chunk_rows(t, ct, o);
}

/* What fill_blocks' walk does with a run's element: the first run's
 * fills T->tmpl; a run of another element turns the fill runs off for
 * the pass (every block is read, as without them). */
static na_status_t fill_use(void *ud, const uint8_t *elem, int *take, na_err_t *err)
{
    tiles_t *T = ud;
    size_t es = T->t->elem_stride;
    if (T->tmpl == NULL && (T->tmpl = na_fill_repeat(elem, es, BLOCK)) == NULL)
        return na_err_set(err, NA_E_NOMEM, "%s: out of memory for the fill block", T->t->name);
    *take = memcmp(T->tmpl, elem, es) == 0;
    T->fill_off = !*take;
    return NA_OK;
}

/* Flag the blocks of the chunk (rows r0.., T->nr of them; width 1, so
 * rows are elements) that lie wholly in fill runs of t's source
 * (na_fill_flags); *nflag: how many. */
static na_status_t fill_blocks(tiles_t *T, uint64_t *nflag, na_err_t *err)
{
    if (T->fill_off) {
        memset(T->flag, 0, (size_t)T->nb);
        *nflag = 0;
        return NA_OK;
    }
    return na_fill_flags(T->t, T->r0, T->nr, BLOCK, T->flag, nflag, fill_use, T, err);
}

/* 1 when block k (n rows from row r) is a whole fill block whose rows are
 * all kept so far: the cache's results are its results. */
static int fill_same(const tiles_t *T, uint64_t k, uint64_t r, uint64_t n)
{
    return T->flag[k] && n == BLOCK && count_kept(T->ct, r, n) == n;
}

/* Keep block k's results as the cache (when it marked no row). */
static void fill_save(tiles_t *T, const tile_ops_t *ops, uint64_t k, uint64_t r)
{
    if (count_kept(T->ct, r, BLOCK) != BLOCK) {
        T->cache_ok = 0; /* its values drop rows: every fill block is computed */
        return;
    }
    for (int i = 0; i < 3; i++)
        T->cache_part[i] = T->part[i][k];
    T->cache_cnt = T->cnt[k];
    T->cache_len = 0;
    size_t len = 0;
    uint8_t *p = ops->out_at ? ops->out_at(T, k, &len) : NULL;
    if (p != NULL && len <= BLOCK * 8) {
        memcpy(T->cache_out, p, len);
        T->cache_len = len;
    }
    T->cache_have = 1;
}

/* Block k gets the cache's results; 0 (nothing done) when its output
 * would not have the cached length. */
static int fill_reuse(tiles_t *T, const tile_ops_t *ops, uint64_t k)
{
    size_t len = 0;
    uint8_t *p = ops->out_at ? ops->out_at(T, k, &len) : NULL;
    if (p != NULL && len != T->cache_len)
        return 0;
    if (p != NULL)
        memcpy(p, T->cache_out, len);
    for (int i = 0; i < 3; i++)
        T->part[i][k] = T->cache_part[i];
    T->cnt[k] = T->cache_cnt;
    return 1;
}

static na_status_t run_tiles(const na_tensor_t *t, const na_clean_opts_t *o,
                             na_clean_tensor_t *ct, const tile_ops_t *ops, void *ctx,
                             na_err_t *err)
{
    tiles_t T;
    memset(&T, 0, sizeof T);
    T.t = t;
    T.ct = ct;
    T.ctx = ctx;
    uint64_t per = tile_rows(t, ct, o), nbmax = (per + BLOCK - 1) / BLOCK;
    for (int i = 0; i < 3; i++)
        T.part[i] = malloc((size_t)nbmax * sizeof(na_stats_t));
    T.cnt = malloc((size_t)nbmax * sizeof *T.cnt);
    T.aux = malloc((size_t)nbmax * sizeof *T.aux);
    T.flag = calloc((size_t)nbmax, 1);
    T.cache_out = malloc((size_t)BLOCK * 8);
    T.cache_ok = 1;
    na_status_t st = NA_OK, st_io = NA_OK;
    na_err_t err_io = {{0}};
    int pending = 0; /* an ops->io left over from the previous chunk */
    if (!T.part[0] || !T.part[1] || !T.part[2] || !T.cnt || !T.aux || !T.flag || !T.cache_out)
        st = na_err_set(err, NA_E_NOMEM, "%s: out of memory for block statistics", t->name);
    else
        ct->passes++;
    for (uint64_t r0 = 0; r0 < ct->rows && st == NA_OK; r0 += per) {
        T.r0 = r0;
        T.nr = ct->rows - r0 < per ? ct->rows - r0 : per;
        T.nb = (T.nr + BLOCK - 1) / BLOCK;
        uint64_t nflag = 0;
        st = fill_blocks(&T, &nflag, err);
        /* a chunk of fill blocks only is not read at all */
        T.p = NULL;
        if (st == NA_OK && nflag < T.nb)
            st = t->src.read(t->src.ctx, r0 * t->elem_stride, (size_t)(T.nr * t->elem_stride),
                             &T.p, err);
        if (st != NA_OK)
            break;
        memset(T.cnt, 0, (size_t)T.nb * sizeof *T.cnt);
        T.cache_k = UINT64_MAX;
        /* decided here, once: every thread must meet the same constructs */
        int want_cache = nflag && T.cache_ok && !T.cache_have;
        /* a chunk of fill blocks only: one thread, no barriers (as pass 1
         * of the scan, lib/scan_pass.c) */
#pragma omp parallel if (nflag < T.nb)
        {
            /* two blocks: the values and scratch for the pass (emit),
             * then the block's row states, one byte each (tile_rs) */
            double *x = malloc(2 * BLOCK * sizeof(double) + BLOCK);
            if (!x) {
#pragma omp atomic write
                T.nomem = 1;
            }
            if (ops->count) {
#pragma omp for schedule(static)
                for (uint64_t k = 0; k < T.nb; k++) {
                    uint64_t b0 = k * BLOCK, n = T.nr - b0 < BLOCK ? T.nr - b0 : BLOCK;
                    ops->count(&T, NULL, k, r0 + b0, n);
                }
#pragma omp single
                {
                    uint64_t sum = 0;
                    for (uint64_t k = 0; k < T.nb; k++) {
                        uint64_t c = T.aux[k];
                        T.aux[k] = sum;
                        sum += c;
                    }
                    T.aux_total = sum;
                }
            }
            if (want_cache) {
                /* the first whole fill block with its rows kept, computed
                 * before the others so that they can copy its results */
#pragma omp single
                for (uint64_t k = 0; k < T.nb && x; k++) {
                    uint64_t b0 = k * BLOCK, n = T.nr - b0 < BLOCK ? T.nr - b0 : BLOCK;
                    if (!fill_same(&T, k, r0 + b0, n))
                        continue;
                    tile_decode(&T, k, x, n);
                    ops->blk(&T, x, k, r0 + b0, n);
                    fill_save(&T, ops, k, r0 + b0);
                    T.cache_k = k;
                    break;
                }
            }
            if (pending) {
#pragma omp single nowait
                st_io = ops->io(&T, &err_io);
            }
/* dynamic: on a busy machine a thread that lost its CPU does not hold
 * the others at the barrier; the merge order is fixed anyway */
#pragma omp for schedule(dynamic, 4)
            for (uint64_t k = 0; k < T.nb; k++) {
                uint64_t b0 = k * BLOCK, n = T.nr - b0 < BLOCK ? T.nr - b0 : BLOCK;
                if (!x || k == T.cache_k)
                    continue;
                if (T.cache_have && fill_same(&T, k, r0 + b0, n) && fill_reuse(&T, ops, k))
                    continue;
                tile_decode(&T, k, x, n);
                ops->blk(&T, x, k, r0 + b0, n);
            }
            free(x);
        }
        pending = 0;
        if (st_io != NA_OK) {
            *err = err_io;
            st = st_io;
        } else if (T.nomem) {
            st = na_err_set(err, NA_E_NOMEM, "%s: out of memory for a block buffer", t->name);
        } else {
            st = ops->end(&T, err);
            pending = st == NA_OK && ops->io;
        }
    }
    if (pending && st == NA_OK)
        st = ops->io(&T, err);
    for (int i = 0; i < 3; i++)
        free(T.part[i]);
    free(T.cnt);
    free(T.aux);
    free(T.flag);
    free(T.tmpl);
    free(T.cache_out);
    return st;
}

/* A pass over the tensor: run_tiles with ops for width 1, else run_pass
 * with fn (the same steps on whole chunks). */
static na_status_t run_pass_w(const na_tensor_t *t, const na_clean_opts_t *o,
                              na_clean_tensor_t *ct, int blank, chunk_fn fn,
                              const tile_ops_t *ops, void *ctx, na_err_t *err)
{
    if (t->elements == 0) { /* (5, 0): samples without values, nothing to read */
        ct->passes++;
        return NA_OK;
    }
    if (ct->width == 1)
        return run_tiles(t, o, ct, ops, ctx, err);
    return run_pass(t, o, ct, blank, fn, ctx, err);
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
    int empty;                /* no values: (5, 0), whose passes read nothing */
    /* radix selection (--mad, median.h) */
    int mad_stage;            /* 0 median of values, 1 MAD of |v - median| */
    na_med_t med;
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
        if (na_clean_row(ct, r0 + r) == NA_CLEAN_ROW_JOINT)
            continue;
        for (uint64_t j = 0; j < ct->width && !bad; j++)
            bad = !isfinite(row[j]) && !feat_of(ct, j)->passthrough &&
                  !(ct->n_missing && na_clean_is_missing(row[j]));
        if (bad) {
            na_clean_row_set(ct, r0 + r, 1);
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

/* Rows of a width-1 block whose state is in mask become NaN (blank_rows
 * in a form that vectorises). */
static void blank_w1(double *x, const uint8_t *rs, uint64_t n, int mask)
{
    for (uint64_t i = 0; i < n; i++)
        x[i] = (rs[i] & mask) ? NAN : x[i];
}

/* Step 2 on a block of width 1 (apply_step2's effect, exactly): for a
 * z-score, a vectorised test finds the runs of 64 values that hold an
 * outlier (rows already gone are NaN here, which never compares
 * greater), and apply_step2 handles only those; most runs have none. */
NA_CLEAN_CLONES
static void step2_w1(const na_clean_opts_t *o, na_clean_tensor_t *ct, double *x, uint64_t r0,
                     uint64_t n, int mark, counts_t *c)
{
    const na_clean_feat_t *F = &ct->feat[0];
    if (o->method != NA_OM_ZSCORE) {
        apply_step2(o, ct, x, r0, n, mark, c);
        return;
    }
    if (F->passthrough || !(F->scale > 0))
        return; /* na_ce_is_outlier is 0 for every value */
    double ctr = F->center, ks = o->k * F->scale;
    uint64_t k[5] = {0, 0, 0, 0, 0};
    const v4d_t vbig = {DBL_MAX, DBL_MAX, DBL_MAX, DBL_MAX};
    const v4l_t vabs = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
    const v4d_t vc = {ctr, ctr, ctr, ctr}, vks = {ks, ks, ks, ks};
    for (uint64_t i0 = 0; i0 < n; i0 += 64) {
        uint64_t len = n - i0 < 64 ? n - i0 : 64, i = 0;
        v4l_t any = {0, 0, 0, 0};
        for (; i + 4 <= len; i += 4) {
            v4d_t v = VLOAD(x + i0, i, 1);
            v4d_t d = v - vc; /* NaN (a row gone) never compares greater */
            any |= ((v4d_t)((v4l_t)d & vabs) > vks) & VFINITE(v);
        }
        int hit = (any[0] | any[1] | any[2] | any[3]) != 0;
        for (; i < len; i++)
            hit |= fabs(x[i0 + i] - ctr) > ks && fabs(x[i0 + i]) <= DBL_MAX;
        /* apply_step2's rows, here on this thread (no nested region),
         * for the values that pass na_ce_is_outlier's test */
        for (i = 0; hit && i < len; i++) {
            double v = x[i0 + i];
            if (fabs(v - ctr) > ks && fabs(v) <= DBL_MAX && !na_clean_row(ct, r0 + i0 + i))
                step2_row(o, ct, x + i0 + i, r0 + i0 + i, mark, k);
        }
    }
    (void)step2_counts(k, c);
}

/* Pass A on one block (width 1). With one value per row, marking a row
 * only turns its non-finite value into NaN, so the statistics after
 * step 1 are those of the block with its infinities counted as NaN: no
 * second look at the values. part[0]: s0, part[1]: s1, part[2]: before. */
static void tile_a(tiles_t *T, double *x, uint64_t k, uint64_t r0, uint64_t n)
{
    fit_t *F = T->ctx;
    na_clean_tensor_t *ct = F->ct;
    const uint8_t *rs = tile_rs(x);
    if (F->joint) /* only a partner's marks matter here */
        tile_unpack(ct, tile_rs(x), r0, n);
    if (F->with_before && F->joint)
        block_stats(&T->part[2][k], x, n, 1);
    if (F->joint)
        for (uint64_t i = 0; i < n; i++)
            x[i] = rs[i] == NA_CLEAN_ROW_JOINT ? NAN : x[i];
    na_stats_t *s0 = &T->part[0][k], *s1 = &T->part[1][k];
    block_stats(s0, x, n, 1);
    *s1 = *s0;
    int miss = ct->n_missing > 0;
    if (!F->mark_nf || ct->feat[0].passthrough || s0->finite + (miss ? s0->missing : 0) == n)
        return;
    for (uint64_t i = 0; i < n; i++)
        if ((!F->joint || rs[i] != NA_CLEAN_ROW_JOINT) && !isfinite(x[i]) &&
            !(miss && na_clean_is_missing(x[i])))
            na_clean_row_set(ct, r0 + i, 1); /* the block's bytes are this thread's */
    s1->nan += s1->pos_inf + s1->neg_inf;
    s1->pos_inf = s1->neg_inf = 0;
}

static na_status_t tile_a_end(tiles_t *T, na_err_t *err)
{
    (void)err;
    fit_t *F = T->ctx;
    for (uint64_t k = 0; k < T->nb; k++) {
        if (F->with_before && F->joint)
            na_stats_merge(&F->ct->before, &T->part[2][k]);
        na_stats_merge(&F->s0[0], &T->part[0][k]);
        if (F->mark_nf && F->want_s1)
            na_stats_merge(&F->s1[0], &T->part[1][k]);
    }
    return NA_OK;
}

static const tile_ops_t TILE_A = {NULL, tile_a, tile_a_end, NULL, NULL};

/* Pass C on one block (width 1); part[0]: s2. */
static void tile_c(tiles_t *T, double *x, uint64_t k, uint64_t r0, uint64_t n)
{
    fit_t *F = T->ctx;
    /* Rows gone before step 2: a partner's (NA_CLEAN_ROW_JOINT) and step
     * 1's. With one value per row the latter hold a non-finite value,
     * which no later step or statistic takes: only a partner's marks
     * make the blanking needed. */
    if (F->joint) {
        tile_unpack(F->ct, tile_rs(x), r0, n);
        blank_w1(x, tile_rs(x), n, 1);
    }
    apply_step1(F->o, F->ct, x, r0, n, NULL);
    step2_w1(F->o, F->ct, x, r0, n, 1, NULL);
    if (F->s2)
        block_stats_nan(&T->part[0][k], x, n);
}

static na_status_t tile_c_end(tiles_t *T, na_err_t *err)
{
    (void)err;
    fit_t *F = T->ctx;
    for (uint64_t k = 0; k < T->nb && F->s2; k++)
        na_stats_merge(&F->s2[0], &T->part[0][k]);
    return NA_OK;
}

static const tile_ops_t TILE_C = {NULL, tile_c, tile_c_end, NULL, NULL};

/* The value a --mad selection looks at: v after step 1 (stage 0) or
 * |v - median| (stage 1). */
static inline double mad_value(const fit_t *F, uint64_t f, double v)
{
    return F->mad_stage ? fabs(v - F->ct->feat[f].center) : v;
}

/* Pass M (one round of the radix selection of median.h): feed the finite
 * step-1 values (or their |v - median|) of every feature. */
static na_status_t pass_med(void *ctx, double *b, uint64_t r0, uint64_t nr, na_err_t *err)
{
    fit_t *F = ctx;
    na_clean_tensor_t *ct = F->ct;
    int want_sum = F->mad_stage && F->med.done == 0 && !F->med.upper;
    apply_step1(F->o, ct, b, r0, nr, NULL);
    for (uint64_t r = 0; r < nr; r++)
        for (uint64_t j = 0; j < ct->width; j++) {
            double v = b[r * ct->width + j];
            uint64_t f = ct->nfeat == 1 ? 0 : j;
            if (!isfinite(v) || ct->feat[f].passthrough)
                continue;
            v = mad_value(F, f, v);
            na_med_add(&F->med, f, v);
            if (want_sum)
                F->sum_abs[f] += v;
        }
    return NA_OK;
}

/* Exact median of the step-1 values (stage 0) or of |v - median|
 * (stage 1) per feature, counts n[f] known (finite values after step 1).
 * Result in out[f] (NaN when n[f] == 0). */
static na_status_t select_median(const na_tensor_t *t, fit_t *F, const uint64_t *n, double *out,
                                 na_err_t *err)
{
    if (na_med_start(&F->med, n) != NA_OK)
        return na_err_set(err, NA_E_NOMEM, "%s: out of memory for median histograms", t->name);
    na_status_t st = NA_OK;
    while (st == NA_OK && na_med_more(&F->med)) {
        st = run_pass(t, F->o, F->ct, 1, pass_med, F, err);
        na_med_next(&F->med);
    }
    na_med_result(&F->med, out);
    return st;
}

void na_clean_bounds(const na_clean_opts_t *o, na_clean_feat_t *c)
{
    if (o->method == NA_OM_ZSCORE) {
        c->lo_bound = c->center - o->k * c->scale;
        c->hi_bound = c->center + o->k * c->scale;
    } else if (c->scale > 0) {
        c->lo_bound = c->center - o->k * c->scale / NA_MAD_CONST;
        c->hi_bound = c->center + o->k * c->scale / NA_MAD_CONST;
    } else {
        c->lo_bound = c->center - o->k * NA_MEANAD_CONST * c->meanad;
        c->hi_bound = c->center + o->k * NA_MEANAD_CONST * c->meanad;
    }
}

/* --mad: median, MAD and MeanAD of the step-1 values of every feature. */
static na_status_t fit_mad(const na_tensor_t *t, fit_t *F, na_err_t *err)
{
    na_clean_tensor_t *ct = F->ct;
    uint64_t nf = ct->nfeat;
    uint64_t *n = calloc((size_t)nf, sizeof *n);
    double *med = calloc((size_t)nf, sizeof *med);
    F->sum_abs = calloc((size_t)nf, sizeof *F->sum_abs);
    na_status_t st = NA_OK;
    if (!n || !med || !F->sum_abs || na_med_init(&F->med, nf) != NA_OK)
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
        na_clean_bounds(F->o, c);
    }
    free(n);
    free(med);
    na_med_free(&F->med);
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

/* ct->late: the samples a --together partner's step 2 drops leave now,
 * after step 1's and step 2's statistics and before pass C (step 3's and
 * the drops), as from one dataset of the group's columns; a row this
 * tensor drops itself keeps its own state. */
static void late_rows(fit_t *F)
{
    na_clean_tensor_t *ct = F->ct;
    for (uint64_t r = 0; ct->late && r < ct->rows; r++)
        if ((ct->late[r] & NA_CLEAN_LATE) && na_clean_row(ct, r) == 0) {
            na_clean_row_set(ct, r, NA_CLEAN_ROW_JOINT);
            F->joint++; /* pass C blanks partners' rows */
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
    uint64_t per = F->empty ? 0 : F->joint * (ct->nfeat == 1 ? ct->width : 1);
    for (uint64_t f = 0; f < ct->nfeat && per; f++) {
        F->s0[f].nan -= per;
        F->s0[f].elements -= per;
    }
}

/* Without markers a stand-in's bits can only be an F64 input's NaN
 * (block_stats counts them as missing): put them back among the NaN. */
static void fold_missing(const na_clean_tensor_t *ct, na_stats_t *s, uint64_t n)
{
    for (uint64_t i = 0; i < n && !ct->n_missing; i++) {
        s[i].nan += s[i].missing;
        s[i].missing = 0;
    }
}

static void fit_fold(fit_t *F)
{
    fold_missing(F->ct, F->s0, F->ct->nfeat);
    fold_missing(F->ct, F->s1, F->ct->nfeat);
    fold_missing(F->ct, &F->ct->before, 1);
}

static void record_drops(const na_clean_opts_t *o, na_clean_tensor_t *ct)
{
    ct->dropped_nf = ct->dropped_out = ct->dropped_joint = 0;
    size_t cap = o->max_locations;
    free(ct->drop_idx);
    ct->drop_idx = cap ? malloc(cap * sizeof *ct->drop_idx) : NULL;
    ct->n_drop_idx = 0;
    /* the first indices in a loop that stops early */
    uint64_t c[4];
    count_states(ct->row_state, (ct->rows + 3) / 4, c);
    ct->dropped_nf = c[1];
    ct->dropped_out = c[2];
    ct->dropped_joint = c[3];
    for (uint64_t r = 0; ct->drop_idx && ct->n_drop_idx < cap && r < ct->rows; r++)
        if (na_clean_row(ct, r))
            ct->drop_idx[ct->n_drop_idx++] = r;
    ct->out_rows = ct->rows - ct->dropped_nf - ct->dropped_out - ct->dropped_joint;
    if (o->samples && ct->ndim >= 1 && ct->rows > 0)
        ct->out_shape[0] = ct->out_rows;
}

void na_clean_rows_done(const na_clean_opts_t *o, na_clean_tensor_t *ct)
{
    record_drops(o, ct);
}

na_status_t na_clean_rows_prepare(const char *name, int ndim, const uint64_t *shape,
                                  const na_clean_opts_t *o, na_clean_tensor_t *ct,
                                  na_err_t *err)
{
    memset(ct, 0, sizeof *ct);
    if (ndim < 1)
        return na_err_set(err, NA_E_USAGE, "%s: a scalar has no sample axis", name);
    ct->rows = ct->out_rows = shape[0];
    ct->width = 1;
    ct->out_dtype = NA_DT_INVALID;
    ct->ndim = ndim;
    memcpy(ct->out_shape, shape, sizeof ct->out_shape);
    na_stats_init(&ct->before);
    na_stats_init(&ct->after);
    return state_alloc(name, o, ct, 0, err); /* copied rows: their bytes are not known here */
}

/* The statistic of feature f that a step uses and that overflowed a
 * double, or NULL. Sums beyond DBL_MAX (values near 1.8e308) make the
 * mean Inf or NaN, squared deviations beyond it (a spread of ~1e154 or
 * more) the std Inf - as numpy's float64 mean and std do. Used anyway,
 * z-scores would come out all 0 or NaN and no outlier would be flagged,
 * silently (issue 4); min and max never overflow, and minmax has its
 * overflow-safe form (na_ce_step3). Features without finite values at a step
 * have nothing it could scale and are skipped. A std is NaN too when the
 * variance of values that differ underflowed (na_stats_std_underflow):
 * used, it would map the feature to 0 as "constant"; *why then says
 * NA_UNDERFLOW_WHY, else NA_OVERFLOW_WHY. */
static const char *fit_overflowed(const fit_t *F, uint64_t f, const char **why)
{
    const na_clean_opts_t *o = F->o;
    *why = NA_OVERFLOW_WHY;
    const na_clean_feat_t *c = &F->ct->feat[f];
    const na_stats_t *s0 = &F->s0[f];
    if (c->passthrough)
        return NULL;
    if (o->nonfinite == NA_NF_MEAN && s0->finite && s0->nan + s0->pos_inf + s0->neg_inf &&
        !isfinite(c->nf_fill))
        return "mean (--nonfinite mean)";
    if (o->method != NA_OM_NONE && F->s1[f].finite) {
        if (o->method == NA_OM_ZSCORE && !isfinite(c->center))
            return "mean (--zscore)";
        if (o->method == NA_OM_ZSCORE && !isfinite(c->scale)) {
            if (na_stats_std_underflow(&F->s1[f]))
                *why = NA_UNDERFLOW_WHY;
            return "standard deviation (--zscore)";
        }
        if (o->method == NA_OM_MAD && !isfinite(c->scale))
            return "MAD (--mad)";
        if (o->method == NA_OM_MAD && c->scale == 0 && !isfinite(c->meanad))
            return "mean absolute deviation (--mad)";
        if (o->action == NA_OA_MEAN && !isfinite(c->fill2))
            return "mean (--outliers mean)";
    }
    if (o->normalize == NA_NORM_ZSCORE && F->s2[f].finite && !isfinite(c->n_mean))
        return "mean (--normalize zscore)";
    if (o->normalize == NA_NORM_ZSCORE && F->s2[f].finite && !isfinite(c->n_std)) {
        if (na_stats_std_underflow(&F->s2[f]))
            *why = NA_UNDERFLOW_WHY;
        return "standard deviation (--normalize zscore)";
    }
    return NULL;
}

/* NA_E_UNSUPPORTED (exit 3: the tensor cannot be cleaned as asked) for
 * the first feature whose statistic overflowed (fit_overflowed). */
static na_status_t fit_check_finite(const na_tensor_t *t, const fit_t *F, na_err_t *err)
{
    for (uint64_t f = 0; f < F->ct->nfeat; f++) {
        const char *why, *what = fit_overflowed(F, f, &why);
        if (what)
            return na_err_set(err, NA_E_UNSUPPORTED,
                              "%s: feature %llu: the %s %s; --exclude '%s' "
                              "copies the tensor unchanged",
                              t->name, (unsigned long long)f, what, why, t->name);
    }
    return NA_OK;
}

static inline uint64_t nonfinite_of(const na_stats_t *s)
{
    return s->nan + s->pos_inf + s->neg_inf;
}

/* ct->unrep (clean.h): the NaN and +-Inf values the write pass will hand
 * to an integer out_dtype, from statistics the fit already has, so that
 * the refusal comes before anything is written (issue 4). Rows dropped
 * are NaN in s1 and s2 (blanked; at width 1 a row dropped in step 1
 * keeps its own NaN or Inf), one value per element, so the kept rows
 * hold the non-finite values of those statistics less `width` per
 * dropped row:
 *  - s2, when pass C ran: after step 2, so keep's NaN/Inf in rows step 2
 *    did not drop, those of features passed through, the NaN of
 *    --outliers nan. Without markers a NaN with a stand-in's bits (only
 *    an F64 input has one) is a NaN: block_stats counts it in `missing`
 *    (s0 and s1 get it back among the NaN in fit_fold);
 *  - s1 with --nonfinite drop and no pass C (then step 2 drops nothing
 *    and makes no NaN: clip and mean with fitted parameters);
 *  - otherwise no row is dropped but a --together partner's, which s0
 *    leaves out (fit_joint_fix): the NaN/Inf of s0 in the features step 1
 *    leaves alone (keep, passed through, a non-finite fill from a file).
 * Step 3 maps finite values to finite ones with fitted parameters (their
 * overflows are refused by fit_check_finite; minmax has its halved form);
 * it is monotonic, so it does for every value when it does for the least
 * and the greatest after step 2. When it does not (parameters from
 * --apply-params), unrep_known is 0 and na_clean_check_out counts. */
static void fit_unrep(const fit_t *F, int have_s2)
{
    na_clean_tensor_t *ct = F->ct;
    const na_clean_opts_t *o = F->o;
    int fill = o->nonfinite == NA_NF_ZERO || o->nonfinite == NA_NF_MEAN ||
               o->nonfinite == NA_NF_VALUE;
    uint64_t nonfin = 0, gone = 0;
    ct->unrep = 0;
    ct->unrep_known = 1;
    if (na_dtype_is_float(ct->out_dtype) || F->empty)
        return; /* it holds NaN and Inf, or nothing is written */
    for (uint64_t f = 0; f < ct->nfeat; f++) {
        const na_clean_feat_t *c = &ct->feat[f];
        if (have_s2)
            nonfin += nonfinite_of(&F->s2[f]) + (ct->n_missing ? 0 : F->s2[f].missing);
        else if (o->nonfinite == NA_NF_DROP)
            nonfin += nonfinite_of(&F->s1[f]);
        else if (c->passthrough || !fill || !isfinite(c->nf_fill))
            nonfin += nonfinite_of(&F->s0[f]);
    }
    if (have_s2)
        gone = ct->dropped_nf + ct->dropped_out + ct->dropped_joint;
    else if (o->nonfinite == NA_NF_DROP)
        gone = ct->dropped_nf + ct->dropped_joint;
    gone *= ct->width;
    if (nonfin < gone) { /* never: the rules above are wrong, let a pass count */
        ct->unrep_known = 0;
        return;
    }
    ct->unrep = nonfin - gone;
    if (o->normalize == NA_NORM_NONE)
        return;
    /* s2 is s1 without an outlier step (na_clean_fit) */
    const na_stats_t *s = have_s2 || o->method == NA_OM_NONE ? F->s2 : NULL;
    for (uint64_t f = 0; f < ct->nfeat; f++) {
        const na_clean_feat_t *c = &ct->feat[f];
        if (c->passthrough || (s && s[f].finite == 0))
            continue;
        if (!s || !isfinite(na_ce_step3(o, c, s[f].min)) || !isfinite(na_ce_step3(o, c, s[f].max))) {
            ct->unrep_known = 0;
            return;
        }
    }
}

/* Tensors of fewer than SERIAL_BELOW elements run every pass on one
 * thread: a parallel region costs more than their work, and OpenMP's
 * threads spin between regions, taking a core from the writer and the
 * SHA-256 thread (fresh-user round 25b: 100000 tensors of 4 elements took
 * 122 s to clean on 2 threads of a loaded machine, 6.3 s on one; idle,
 * 20000 took 2.0 s and 1.3 s). Returns the thread count to put back
 * (serial_end), 0 when nothing changed. */
#define SERIAL_BELOW (1u << 16)
static int serial_begin(const na_tensor_t *t)
{
    int nt = omp_get_max_threads();
    if (t->elements >= SERIAL_BELOW || nt <= 1 || omp_in_parallel())
        return 0;
    omp_set_num_threads(1);
    return nt;
}

static void serial_end(int nt)
{
    if (nt > 0)
        omp_set_num_threads(nt);
}

static na_status_t fit(const na_tensor_t *t, const na_clean_opts_t *o, na_clean_tensor_t *ct,
                       na_err_t *err);

na_status_t na_clean_fit(const na_tensor_t *t, const na_clean_opts_t *o, na_clean_tensor_t *ct,
                         na_err_t *err)
{
    int nt = serial_begin(t);
    na_status_t st = fit(t, o, ct, err);
    serial_end(nt);
    return st;
}

static na_status_t fit(const na_tensor_t *t, const na_clean_opts_t *o, na_clean_tensor_t *ct,
                       na_err_t *err)
{
    fit_t F;
    memset(&F, 0, sizeof F);
    F.o = o;
    F.ct = ct;
    F.empty = t->elements == 0;
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
    uint64_t states[4];
    count_states(ct->row_state, (ct->rows + 3) / 4, states);
    F.joint = states[NA_CLEAN_ROW_JOINT];
    /* Pass A. With fixed parameters the passthrough features are known;
     * otherwise we assume none and check afterwards. */
    F.with_before = 1;
    F.mark_nf = nf_drop;
    F.want_s1 = nf_drop;
    na_status_t st = run_pass_w(t, o, ct, 0, pass_a, &TILE_A, &F, err);
    if (st != NA_OK)
        goto out;
    if (nf == 1 && !F.joint)
        ct->before = F.s0[0];
    fit_joint_fix(&F);
    fit_fold(&F);
    int any_pass = 0;
    for (uint64_t f = 0; f < nf; f++) {
        if (!ct->fixed && !ct->pass_known) /* zero and value=X need no statistic: they fill it too */
            ct->feat[f].passthrough = F.s0[f].finite == 0 && F.s0[f].elements > F.s0[f].missing &&
                                      o->nonfinite != NA_NF_ZERO && o->nonfinite != NA_NF_VALUE;
        else if (ct->fixed && ct->feat[f].passthrough && (nf_drop ? F.s1 : F.s0)[f].finite) {
            /* fitted without finite values: no parameters for these. With
             * --nonfinite drop, counted in the samples step 1 keeps: a
             * value in a sample that goes anyway needs none (round 39a) */
            st = na_err_set(err, NA_E_USAGE, "%s: feature %llu had no finite value when the "
                            "parameters were fitted, and has %llu here: they cannot clean it "
                            "(fit again, or --exclude it)", t->name, (unsigned long long)f,
                            (unsigned long long)(nf_drop ? F.s1 : F.s0)[f].finite);
            goto out;
        }
        any_pass |= ct->feat[f].passthrough;
        ct->passthrough += (uint64_t)ct->feat[f].passthrough;
    }
    if (nf_drop && any_pass && !ct->fixed && !ct->pass_known) {
        /* Re-mark ignoring the features with no finite value (issue 4:
         * they must not empty the dataset). */
        for (uint64_t q = 0; q < (ct->rows + 3) / 4; q++) {
            unsigned v = ct->row_state[q], one = v & ~(v >> 1) & 0x55u;
            ct->row_state[q] = (uint8_t)(v & ~one); /* 1 -> 0; partners' marks stay */
        }
        for (uint64_t f = 0; f < nf; f++) {
            na_stats_init(&F.s0[f]);
            na_stats_init(&F.s1[f]);
        }
        F.with_before = 0;
        st = run_pass_w(t, o, ct, 0, pass_a, &TILE_A, &F, err);
        if (st != NA_OK)
            goto out;
        fit_joint_fix(&F);
        fit_fold(&F);
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
    int have_s2 = 0; /* s2 from pass C */
    /* Step 2 parameters. */
    if (o->method != NA_OM_NONE) {
        if (need_stats && o->method == NA_OM_ZSCORE) {
            for (uint64_t f = 0; f < nf; f++) {
                na_clean_feat_t *c = &ct->feat[f];
                c->center = F.s1[f].mean;
                c->scale = na_stats_std(&F.s1[f]);
                na_clean_bounds(o, c);
            }
        } else if (need_stats) {
            st = fit_mad(t, &F, err);
            if (st != NA_OK)
                goto out;
        }
        if (need_stats)
            for (uint64_t f = 0; f < nf; f++)
                ct->feat[f].fill2 = F.s1[f].mean;
        late_rows(&F); /* step 2's statistics are made: they had them */
        /* Pass C: flags, drops and the statistics after step 2. Without
         * drops and without normalization the pass is only needed for
         * the drop marks, which are none: skip it. An integer out_dtype
         * needs s2 for fit_unrep whenever step 2 can make a NaN (nan, or
         * parameters from a file), and runs it then. */
        int int_out = !na_dtype_is_float(ct->out_dtype);
        if (o->action == NA_OA_DROP || (need_stats && o->normalize != NA_NORM_NONE) ||
            (int_out && (o->action == NA_OA_NAN || ct->fixed))) {
            have_s2 = 1;
            if (!int_out && (!need_stats || o->normalize == NA_NORM_NONE)) {
                have_s2 = 0;
                na_stats_t *keep = F.s2;
                F.s2 = NULL;
                st = run_pass_w(t, o, ct, 1, pass_s2, &TILE_C, &F, err);
                F.s2 = keep;
            } else {
                st = run_pass_w(t, o, ct, 1, pass_s2, &TILE_C, &F, err);
            }
            if (st != NA_OK)
                goto out;
        }
    } else {
        late_rows(&F); /* none without step 2: they come from its drops */
        memcpy(F.s2, F.s1, (size_t)nf * sizeof *F.s2);
    }
    /* Step 3 parameters. */
    if (need_stats && o->normalize != NA_NORM_NONE) {
        for (uint64_t f = 0; f < nf; f++) {
            na_clean_feat_t *c = &ct->feat[f];
            c->n_min = F.s2[f].min;
            c->n_max = F.s2[f].max;
            c->n_mean = F.s2[f].mean;
            c->n_mean_lo = isfinite(F.s2[f].mean_lo) ? F.s2[f].mean_lo : 0.0;
            c->n_std = na_stats_std(&F.s2[f]);
        }
    }
    for (uint64_t f = 0; f < nf && o->normalize != NA_NORM_NONE; f++) {
        const na_clean_feat_t *c = &ct->feat[f];
        if (!c->passthrough && (o->normalize == NA_NORM_MINMAX ? c->n_max == c->n_min
                                                                : c->n_std == 0.0))
            ct->constant++;
    }
    if (need_stats)
        st = fit_check_finite(t, &F, err);
    if (st != NA_OK)
        goto out;
    record_drops(o, ct);
    fit_unrep(&F, have_s2);
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
    uint8_t *out;       /* where this chunk's output goes */
    uint8_t *outs[2];   /* width 1: out is one, the other may be being
                         * written (tile_w_io) */
    uint64_t pend;      /* width 1: bytes of the other to write */
    double *back;       /* decoded output values, for ct->after */
    uint64_t *pos;      /* output row of each row of the chunk */
    size_t osize;
    na_clean_sink_fn sink;
    void *ud;
} emit_t;

/* Round v to the output dtype at p and return the value read back. */
static inline double put_out(na_dtype_t dt, double v, uint8_t *p, uint64_t *over)
{
    double back;
    *over += (uint64_t)na_ce_put(dt, v, p, &back);
    return back;
}

/* put_out for a tensor with markers: a stand-in writes its marker (in
 * dt) and stays a stand-in for ct->after; a value that comes out equal
 * to a marker is a collision and, as it reads back, missing. */
static inline double put_miss(const na_clean_tensor_t *ct, na_dtype_t dt, double v, uint8_t *p,
                              uint64_t *over, uint64_t *coll)
{
    if (na_clean_is_missing(v)) {
        uint64_t b;
        memcpy(&b, &v, 8);
        if ((ct->missing_put_int >> (b & 1)) & 1u) /* the marker's own integer */
            na_ce_put_le(p, ct->missing_int[b & 1], 8);
        else
            (void)put_out(dt, ct->missing[b & 1], p, over);
        return v;
    }
    double back = put_out(dt, v, p, over);
    for (int i = 0; i < ct->n_missing; i++)
        if (back == ct->missing_out[i]) {
            uint64_t b = NA_CLEAN_MISS_BITS | (uint64_t)i;
            (*coll)++;
            memcpy(&back, &b, 8);
            break;
        }
    return back;
}

/* See clean.h. The steps of pass_emit (apply_step1, apply_step2, step 3
 * and put_out / put_miss) on one value repeated in every feature. */
int na_clean_fill_out(const na_tensor_t *t, const na_clean_opts_t *o,
                      const na_clean_tensor_t *ct, const uint8_t *elem, uint8_t out[8])
{
    size_t ob = na_dtype_bits(ct->out_dtype) / 8;
    if (!ct->feat || ct->width == 0 || ob == 0 || ob > 8 || !na_clean_dtype_ok(ct->out_dtype))
        return 0;
    double x;
    decode_run(t, t->elem_stride, elem, &x, 1);
    if (ct->n_missing)
        mark_missing(t, ct, elem, t->elem_stride, &x, 1);
    int int_out = !na_dtype_is_float(ct->out_dtype);
    uint64_t over = 0, coll = 0;
    uint8_t b[8];
    for (uint64_t j = 0; j < ct->nfeat; j++) { /* width features, or one (--global) */
        const na_clean_feat_t *F = &ct->feat[j];
        int rep = 0;
        double v = na_ce_step1(o, F, x, ct->n_missing, &rep), nv = v;
        /* a row that holds it is dropped: step 1 (a non-finite value, drop) or step 2 */
        if ((!na_ce_finite(v) && o->nonfinite == NA_NF_DROP && !F->passthrough &&
             !(ct->n_missing && na_clean_is_missing(v))) ||
            (na_ce_step2(o, F, v, &nv) && o->action == NA_OA_DROP))
            return 0;
        v = na_ce_step3(o, F, nv);
        if (na_ce_unrepresentable(int_out, v))
            return 0;
        if (ct->n_missing)
            (void)put_miss(ct, ct->out_dtype, v, b, &over, &coll);
        else
            (void)put_out(ct->out_dtype, v, b, &over);
        if (j == 0)
            memcpy(out, b, ob);
        else if (memcmp(out, b, ob))
            return 0;
    }
    return 1;
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
        n += na_clean_row(ct, r0 + r) == 0;
    }
    uint64_t over = 0, coll = 0, bad = 0, w = ct->width;
    na_dtype_t dt = ct->out_dtype;
    int int_out = !na_dtype_is_float(dt);
#pragma omp parallel for schedule(static) reduction(+ : over, coll, bad)
    for (uint64_t r = 0; r < nr; r++) {
        if (na_clean_row(ct, r0 + r))
            continue;
        uint64_t q = E->pos[r] * w;
        for (uint64_t j = 0; j < w; j++) {
            double x = b[r * w + j], v = na_ce_step3(o, feat_of(ct, j), x);
            bad += (uint64_t)na_ce_unrepresentable(int_out, v);
            over += (uint64_t)na_ce_step3_over(int_out, x, v);
            uint8_t *p = E->out + (q + j) * E->osize;
            E->back[q + j] = ct->n_missing ? put_miss(ct, dt, v, p, &over, &coll)
                                           : put_out(dt, v, p, &over);
        }
    }
    E->c.overflow += over;
    E->c.collisions += coll;
    E->c.unrep += bad;
    n *= w;
    accum(&ct->after, E->back, n, 1, 0);
    ct->out_bytes += n * E->osize;
    return n ? E->sink(E->ud, E->out, n * E->osize, err) : NA_OK;
}

/* Emit, width 1: kept rows of block k, counted first so that every block
 * knows where its output starts (T->aux[k] after the prefix sum). */
static void tile_w_count(tiles_t *T, double *x, uint64_t k, uint64_t r0, uint64_t n)
{
    (void)x;
    T->aux[k] = count_kept(T->ct, r0, n);
}

/* Step 3 as y = ((v - a) - al) / s, then lo + y * (hi - lo) when scaled:
 * 1 when feature F takes that form (not constant, not passed through),
 * which gives na_ce_step3()'s value also for NaN and +-Inf (s > 0,
 * hi > lo). al is the mean's low part for zscore, else 0. */
static int step3_linear(const na_clean_opts_t *o, const na_clean_feat_t *F, double *a,
                        double *al, double *s, int *scaled)
{
    *scaled = 0;
    *al = 0.0;
    if (F->passthrough)
        return 0;
    if (o->normalize == NA_NORM_MINMAX && F->n_max != F->n_min) {
        *a = F->n_min;
        *s = F->n_max - F->n_min;
        *scaled = !(o->lo == 0.0 && o->hi == 1.0);
        /* an overflowing max - min or HI - LO: na_ce_step3()'s halved form */
        return *s > 0 && isfinite(*s) && isfinite(o->hi - o->lo);
    }
    if (o->normalize == NA_NORM_ZSCORE && F->n_std != 0.0) {
        *a = F->n_mean;
        *al = F->n_mean_lo;
        *s = F->n_std;
        return *s > 0;
    }
    return 0;
}

/* End of the run of kept rows (state 0 in rs) that starts at i < n,
 * rs[i] == 0: 8 rows at a time while all are kept. */
static inline uint64_t kept_run_end(const uint8_t *rs, uint64_t i, uint64_t n)
{
    uint64_t j = i;
    for (uint64_t w8; j + 8 <= n; j += 8) {
        memcpy(&w8, rs + j, 8);
        if (w8)
            break;
    }
    while (j < n && !rs[j])
        j++;
    return j;
}

/* A run of m kept values of a linear step 3 (step3_linear) into an
 * integer type T of range [LO, HI] (8 to 32 bits): na_ce_put_int's
 * result, exactly (round half to even with rint, saturation, NaN to 0;
 * each of those counted in *over, NaN and +-Inf in *unrep as
 * na_ce_unrepresentable counts them), in a loop without calls that
 * vectorises. back gets the values as they read back. */
#define NA_INT_RUN(T, LO, HI)                                                                      \
    do {                                                                                           \
        T *ot = (T *)(void *)(out + sizeof(T) * q);                                                \
        for (uint64_t m = 0; m < j - i; m++) {                                                     \
            double v = x[i + m];                                                                   \
            double y = none ? v : ((v - a) - al) / s;                                              \
            y = scaled ? lo + y * span : y;                                                        \
            double r = rint(y);                                                                    \
            int in = r >= (LO) && r <= (HI); /* false for NaN */                                   \
            double cl = in ? r : y != y ? 0.0 : r < (LO) ? (LO) : (HI);                            \
            T tv = (T)cl;                                                                          \
            memcpy(&ot[m], &tv, sizeof(T));                                                        \
            /* +0 for a -0 rounded: gcc -O3 -fno-trapping-math folds                               \
             * (double)(T)rint(y) into rint(y) in the vector loop (and                             \
             * + 0.0 with it); a reader sees the integer 0 */                                      \
            double bv = (double)tv;                                                                \
            back[q + m] = bv == 0 ? 0.0 : bv;                                                      \
            over += (uint64_t)!in;                                                                 \
            unrep += (uint64_t)!(fabs(y) <= DBL_MAX);                                              \
        }                                                                                          \
    } while (0)

/* Emit one block: steps 1-3, rounding into the chunk's output buffer at
 * the block's place, and the statistics of the values written (part[0];
 * blocks of the kept values of BLOCK input rows). F32 and 8- to 32-bit
 * integer output of a linear step 3 (the common cases: weights and
 * features, and images kept in their integer type) convert each run of
 * kept rows in a loop that vectorises; the rest goes value by value
 * through na_ce_step3 and put_out. */
NA_CLEAN_CLONES
static void tile_w(tiles_t *T, double *x, uint64_t k, uint64_t r0, uint64_t n)
{
    emit_t *E = T->ctx;
    na_clean_tensor_t *ct = E->ct;
    const na_clean_opts_t *o = E->o;
    const uint8_t *rs = tile_rs(x);
    tile_unpack(ct, tile_rs(x), r0, n);
    counts_t *c = &T->cnt[k];
    blank_w1(x, rs, n, 3);
    apply_step1(o, ct, x, r0, n, c);
    if (o->action != NA_OA_DROP) /* with drop, every flagged row is gone */
        step2_w1(o, ct, x, r0, n, 0, c);
    double *back = x + BLOCK;
    uint8_t *out = E->out + T->aux[k] * E->osize;
    uint64_t q = 0, over = 0;
    na_dtype_t dt = ct->out_dtype;
    const na_clean_feat_t *F = &ct->feat[0];
    double a = 0, al = 0, s = 1, lo = o->lo, span = o->hi - o->lo;
    int scaled = 0;
    int lin = o->normalize == NA_NORM_NONE || step3_linear(o, F, &a, &al, &s, &scaled);
    int none = o->normalize == NA_NORM_NONE;
    int int_fast = dt == NA_DT_U8 || dt == NA_DT_I8 || dt == NA_DT_U16 || dt == NA_DT_I16 ||
                   dt == NA_DT_U32 || dt == NA_DT_I32;
    if (int_fast && lin && !ct->n_missing) {
        uint64_t unrep = 0;
        for (uint64_t i = 0; i < n;) {
            if (rs[i]) {
                i++;
                continue;
            }
            uint64_t j = kept_run_end(rs, i, n);
            switch (dt) {
            case NA_DT_U8: NA_INT_RUN(uint8_t, 0.0, 255.0); break;
            case NA_DT_I8: NA_INT_RUN(int8_t, -128.0, 127.0); break;
            case NA_DT_U16: NA_INT_RUN(uint16_t, 0.0, 65535.0); break;
            case NA_DT_I16: NA_INT_RUN(int16_t, -32768.0, 32767.0); break;
            case NA_DT_U32: NA_INT_RUN(uint32_t, 0.0, 4294967295.0); break;
            default: NA_INT_RUN(int32_t, -2147483648.0, 2147483647.0); break;
            }
            q += j - i;
            i = j;
        }
        c->unrep += unrep;
    } else if (dt == NA_DT_F32 && lin && !ct->n_missing) {
        for (uint64_t i = 0; i < n;) {
            if (rs[i]) {
                i++;
                continue;
            }
            uint64_t j = kept_run_end(rs, i, n);
            float *of = (float *)(void *)(out + 4 * q);
            for (uint64_t m = 0; m < j - i; m++) {
                double v = x[i + m];
                double y = o->normalize == NA_NORM_NONE ? v : ((v - a) - al) / s;
                y = scaled ? lo + y * span : y;
                float f = (float)y;
                memcpy(&of[m], &f, 4);
                back[q + m] = f;
                /* a finite v that became +-Inf: by rounding or in y */
                over += (uint64_t)((fabsf(f) > FLT_MAX) & (fabs(v) <= DBL_MAX));
            }
            q += j - i;
            i = j;
        }
    } else {
        int int_out = !na_dtype_is_float(dt);
        for (uint64_t i = 0; i < n; i++) {
            if (rs[i])
                continue;
            double v = na_ce_step3(o, F, x[i]);
            uint8_t *p = out + q * E->osize;
            c->unrep += (uint64_t)na_ce_unrepresentable(int_out, v);
            over += (uint64_t)na_ce_step3_over(int_out, x[i], v);
            back[q++] = ct->n_missing ? put_miss(ct, dt, v, p, &over, &c->collisions)
                                      : put_out(dt, v, p, &over);
        }
    }
    c->overflow += over;
    block_stats(&T->part[0][k], back, q, 1);
}

static na_status_t tile_w_end(tiles_t *T, na_err_t *err)
{
    emit_t *E = T->ctx;
    for (uint64_t k = 0; k < T->nb; k++) {
        na_stats_merge(&E->ct->after, &T->part[0][k]);
        na_clean_counts_add(&E->c, &T->cnt[k]);
    }
    /* The write goes to tile_w_io, which overlaps the next chunk (its
     * blocks go to the other buffer). */
    E->pend = T->aux_total * E->osize;
    E->ct->out_bytes += E->pend;
    E->out = E->out == E->outs[0] ? E->outs[1] : E->outs[0];
    return NA_OK;
}

static na_status_t tile_w_io(tiles_t *T, na_err_t *err)
{
    emit_t *E = T->ctx;
    uint8_t *done = E->out == E->outs[0] ? E->outs[1] : E->outs[0];
    return E->pend ? E->sink(E->ud, done, E->pend, err) : NA_OK;
}

/* Block k's output bytes in the chunk's buffer (fill_reuse). */
static uint8_t *tile_w_out(tiles_t *T, uint64_t k, size_t *len)
{
    emit_t *E = T->ctx;
    uint64_t next = k + 1 < T->nb ? T->aux[k + 1] : T->aux_total;
    *len = (size_t)((next - T->aux[k]) * E->osize);
    return E->out + T->aux[k] * E->osize;
}

static const tile_ops_t TILE_W = {tile_w_count, tile_w, tile_w_end, tile_w_io, tile_w_out};

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
    na_status_t st = NA_OK;
    uint64_t per = tile_rows(t, ct, o);
    size_t n = (size_t)(per * ct->width);
    int tiles = ct->width == 1; /* run_tiles keeps its values per block */
    E.out = E.outs[0] = malloc(n * E.osize);
    E.outs[1] = tiles ? malloc(n * E.osize) : NULL;
    E.back = tiles ? NULL : malloc(n * sizeof(double));
    E.pos = tiles ? NULL : malloc((size_t)per * sizeof *E.pos);
    na_stats_init(&ct->after);
    ct->out_bytes = 0;
    if (!E.out || (tiles && !E.outs[1]) || (!tiles && (!E.back || !E.pos))) {
        st = na_err_set(err, NA_E_NOMEM, "%s: out of memory for the output buffer", t->name);
    } else {
        int nt = serial_begin(t);
        st = run_pass_w(t, o, ct, 3, pass_emit, &TILE_W, &E, err);
        serial_end(nt);
    }
    free(E.outs[0]);
    free(E.outs[1]);
    free(E.back);
    free(E.pos);
    return na_clean_emit_finish(t, ct, &E.c, st, err);
}

na_status_t na_clean_emit_finish(const na_tensor_t *t, na_clean_tensor_t *ct,
                                 const na_clean_counts_t *c, na_status_t st, na_err_t *err)
{
    ct->replaced_nf = c->replaced_nf;
    ct->replaced_out = c->replaced_out;
    ct->clipped = c->clipped;
    ct->nanned = c->nanned;
    ct->flagged = c->flagged + ct->dropped_out;
    /* na_clean_encode counts a NaN or +-Inf bound for an integer as one
     * overflow; it is counted in unrep instead (the refusal below). */
    ct->overflow = c->overflow - c->unrep;
    ct->collisions = c->collisions;
    fold_missing(ct, &ct->after, 1);
    /* The count is over the whole pass (the caller discards what the sink
     * got). The refusal is na_clean_check_out's, made before the pass from
     * the fit's prediction (ct->unrep); here it is a check of that
     * prediction, or the count itself when there was none. */
    if (st == NA_OK && ct->unrep_known && c->unrep != ct->unrep)
        return na_err_set(err, NA_E_INTERNAL,
                          "%s: the write pass made %llu NaN/Inf value(s) for %s where the fit "
                          "predicted %llu (a bug in nanaudit; please report it)",
                          t->name, (unsigned long long)c->unrep, na_dtype_name(ct->out_dtype),
                          (unsigned long long)ct->unrep);
    if (st == NA_OK && !ct->unrep_known) {
        ct->unrep = c->unrep;
        ct->unrep_known = 1;
    }
    if (st == NA_OK && c->unrep)
        st = na_clean_unrep_error(t, ct, c->unrep, err);
    return st;
}

/*
 * clean.h - the transforms of `nanaudit clean` (issue 4) and their
 * statistics: non-finite handling, z-score / modified z-score outliers,
 * normalization, and rounding back to a dtype. Engine only: a tensor's
 * bytes arrive through its na_source_t and the cleaned bytes leave
 * through a callback (na_clean_sink_fn); no file I/O here.
 *
 * Steps, in this order (each on the previous step's output, over finite
 * values only; DESIGN.md "Definitions"):
 *   1. non-finite: drop | zero | mean | value=X | keep;
 *   2. outliers (only with --zscore K or --mad K): drop | clip | nan | mean;
 *   3. normalize: minmax (to LO:HI) | zscore.
 * A value replaced by zero/mean/value=X or clipped counts in the next
 * step's statistics; a value made NaN does not; dropped samples are gone.
 *
 * Layout. With samples, axis 0 is the sample axis: a tensor of shape
 * [n, d1, d2..] has n rows of width w = d1*d2*..; every position inside a
 * row is a feature with its own statistics (per feature, "over axis 0"),
 * or one statistic for the tensor with `global`. Rank-1 data is one
 * feature. Without samples (weights) the tensor is one feature and one
 * "row" per element, and drop is refused by the caller.
 *
 * Passes over the data (na_clean_fit + na_clean_emit), per tensor:
 *   A      input statistics and the rows holding a non-finite value
 *          (+1 pass when a feature has no finite value at all and
 *          --nonfinite drop: rows are re-marked ignoring that feature);
 *          With --nonfinite drop, A also gives the statistics after
 *          step 1 (a row is whole in a chunk, so its fate is known before
 *          its values are added); zero/mean/value/keep are derived
 *          analytically (Chan's merge with a group of equal values);
 *   C      --zscore: flags and statistics after step 2 (one pass); with
 *          --outliers drop and some rows flagged, +1 pass for the
 *          statistics of the rows kept;
 *   M      --mad: exact median and MAD by radix selection on the
 *          order-preserving 64-bit key of each double: 64/B passes for
 *          the median, +1 for its upper middle value, 64/B+1 for the MAD,
 *          where B = 16 bits when the features number <= 128, 8 when
 *          <= 32768, else 4 (histograms: features x 2^B x 8 bytes <= 64
 *          MiB); then C as for --zscore;
 *   W      the write pass (transform, round, predicted output statistics;
 *          the CLI also hashes the input as W reads it);
 *   V      verification re-reads the written file (the caller's scan).
 * Missing data (CF _FillValue / missing_value, issue 4): with markers
 * (na_tensor_t.n_missing > 0), a finite value equal (==) to a marker is
 * missing. The decoders turn it into a NaN with a payload of our own
 * (NA_CLEAN_MISS_BITS, one per marker; a NaN of the input with that
 * payload becomes a plain NaN), so that every statistic leaves it out
 * as it does NaN, counted in na_stats_t.missing instead of nan; step 1
 * neither drops its row nor replaces it, step 2 never flags it (it is
 * not finite), step 3 leaves it, and the write pass writes the marker
 * itself, converted to out_dtype. A transformed value that rounds to a
 * marker (in out_dtype) is written as it is, counted in collisions and
 * counted as missing in `after`, since that is how it reads back. A row
 * dropped for another reason is dropped whole, markers included.
 * Tensors without markers run the code they ran before: the checks are
 * behind n_missing, or in loops that run only for non-finite values.
 *
 * So a minmax normalization after --zscore 3 without drops costs A, C, W
 * (+V); --apply-params skips A's statistics use, B, C's statistics and M,
 * but still reads A and C when rows must be flagged for dropping.
 *
 * Memory per tensor: for rows wider than one element, a chunk (the read
 * window, na_scan_opts_t-style window_bytes, at most 4 Mi elements, at
 * least one row) decoded into doubles (8 bytes per element of it); for
 * width 1, two 16 Ki-element double buffers per thread instead. The
 * write pass adds one chunk of output values. Per feature one
 * na_clean_feat_t (~200 bytes) plus two na_stats_t, 2 bits per sample
 * (which step dropped it), the --mad histograms above, and max_locations
 * dropped-sample indices. Never the whole tensor.
 */
#ifndef NA_CLEAN_H
#define NA_CLEAN_H

#include "median.h"
#include "nanaudit.h"

#include <string.h> /* memcpy */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum na_nonfinite {
    NA_NF_KEEP = 0,
    NA_NF_DROP,
    NA_NF_ZERO,
    NA_NF_MEAN,
    NA_NF_VALUE
} na_nonfinite_t;

typedef enum na_outlier_method { NA_OM_NONE = 0, NA_OM_ZSCORE, NA_OM_MAD } na_outlier_method_t;

typedef enum na_outlier_action {
    NA_OA_NONE = 0, /* not given (weights: a usage error with a method) */
    NA_OA_DROP,
    NA_OA_CLIP,
    NA_OA_NAN,
    NA_OA_MEAN
} na_outlier_action_t;

typedef enum na_normalize { NA_NORM_NONE = 0, NA_NORM_MINMAX, NA_NORM_ZSCORE } na_normalize_t;

/* NA_MAD_CONST, NA_MEANAD_CONST, NA_DEFAULT_MAD and the modified
 * z-score test are in median.h, shared with `scan --mad`. */

typedef struct na_clean_opts {
    int samples;                  /* axis 0 is a sample axis */
    int global;                   /* one statistic per tensor */
    na_nonfinite_t nonfinite;
    double nf_value;              /* for NA_NF_VALUE */
    na_outlier_method_t method;
    double k;                     /* threshold K (> 0) */
    na_outlier_action_t action;
    na_normalize_t normalize;
    double lo, hi;                /* --feature-range, lo < hi */
    na_dtype_t out_dtype;         /* NA_DT_INVALID: the input's (F32 for
                                   * integer input with normalize) */
    size_t max_locations;         /* dropped-sample indices kept */
    size_t window_bytes;          /* bytes per read, >= 1 row */
    /* Row states (2 bits per sample, na_clean_tensor_t.row_state) of at
     * least state_file_min bytes are kept in an unnamed file in state_dir
     * (NULL: $TMPDIR, else /tmp), space reserved up front, and mapped:
     * the kernel writes them back under memory pressure, so memory stays
     * bounded for datasets of more samples than RAM holds (issue 4:
     * "bounded memory, also for files larger than RAM"; 2^36 F32 samples,
     * a 256 GiB file, have 16 GiB of states). Where the file cannot be
     * made (no O_TMPFILE nor room for it) they are allocated in memory.
     * na_clean_opts_init: the larger of 256 MiB and 1/16 of physical
     * memory. */
    const char *state_dir;
    uint64_t state_file_min;
} na_clean_opts_t;

void na_clean_opts_init(na_clean_opts_t *o);

/* Parameters of one feature: everything a step uses. Saved by
 * --save-params and given back by --apply-params. NaN = not defined. */
typedef struct na_clean_feat {
    int passthrough;      /* 1: no finite value: every step leaves it alone */
    double nf_fill;       /* step 1 replacement (zero: 0, mean: mean, value: X) */
    double center, scale; /* step 2: mean/std (zscore) or median/MAD (mad) */
    double meanad;        /* mad: mean |x - median|, the MAD == 0 fallback */
    double lo_bound, hi_bound; /* step 2 clip bounds */
    double fill2;         /* step 2 "mean" replacement: mean after step 1 */
    double n_min, n_max, n_mean, n_std; /* step 3 inputs (after step 2) */
    /* The rest of the mean: n_mean + n_mean_lo is it to twice double's
     * precision (na_stats_t.mean_lo), so --normalize zscore subtracts the
     * mean itself, not the double nearest it: for 1e9 + N(0, 1e-3) an
     * ulp of the mean is 1e-4 std. 0 when unknown (the GPU, older
     * parameter files). */
    double n_mean_lo;
} na_clean_feat_t;

/* The plan and the change report of one tensor. */
typedef struct na_clean_tensor {
    uint64_t rows, width;  /* samples and elements per sample */
    uint64_t nfeat;        /* statistics kept (width, or 1 with global) */
    na_clean_feat_t *feat; /* nfeat entries */
    uint8_t *row_state;    /* 2 bits per row (na_clean_row): 0 kept, 1 dropped
                            * in step 1, 2 in step 2, NA_CLEAN_ROW_JOINT dropped
                            * with a partner; (rows + 3) / 4 bytes */
    size_t row_state_mapped; /* bytes of row_state's file mapping
                              * (na_clean_opts_t.state_file_min); 0: calloc */
    int fixed;             /* feat came from --apply-params: not estimated */
    /* feat[].passthrough set by the caller, not from the rows fitted: a
     * --together refit (cli/clean.c refit_joint), where a feature whose
     * finite values only partners drop still has finite values - it is
     * not one "with no finite value at all" (issue 4, judged on all the
     * samples, as in one dataset of the group's columns), and its own NaN
     * rows still drop (a NaN was kept; round 32a) */
    int pass_known;
    /* --together: NULL, or one byte per row, with NA_CLEAN_LATE set for
     * the samples a partner's step 2 drops (cli/clean.c join_groups;
     * other bits are the caller's). They stay in this
     * tensor's step 1 and step 2 statistics, then become
     * NA_CLEAN_ROW_JOINT before pass C: out of step 3's statistics and of
     * the output, as in one dataset holding the group's columns. The
     * caller owns it and clears it after na_clean_fit. */
    const uint8_t *late;
    uint64_t dropped_nf, dropped_out;  /* rows dropped by step 1 / step 2 */
    uint64_t dropped_joint; /* rows dropped because a --together partner dropped them */
    uint64_t replaced_nf;  /* non-finite values replaced (zero/mean/value) */
    uint64_t replaced_out; /* outliers replaced by the mean */
    uint64_t clipped, nanned, flagged;
    uint64_t overflow;     /* finite results that do not fit out_dtype */
    uint64_t passthrough, constant; /* features without finite values / constant at step 3 */
    /* CF missing data (na_tensor_t.missing, --missing auto): the finite
     * markers and their values as written in out_dtype (decoded back).
     * n_missing == 0: markers are ordinary values (--missing none, or
     * none declared). before.missing / after.missing count the values
     * equal to a marker in the input / the output. */
    int n_missing;
    double missing[2], missing_out[2];
    /* bit i: marker i is exactly the 64-bit integer missing_int[i]
     * (na_tensor_t.missing_exact), compared as that integer; in
     * missing_put_int also written as it (the output has the input's
     * dtype, I64 or U64) */
    unsigned missing_exact, missing_put_int;
    uint64_t missing_int[2];
    uint64_t collisions;   /* transformed values that came out equal to a
                            * marker (they read back as missing) */
    size_t n_drop_idx;
    uint64_t *drop_idx;    /* first max_locations dropped rows, ascending */
    na_stats_t before;     /* input, global */
    na_stats_t after;      /* predicted output (decoded from what is written) */
    unsigned passes;       /* reads of the data made by fit and emit */
    na_dtype_t out_dtype;
    uint64_t out_rows;     /* rows written */
    uint64_t out_bytes;    /* bytes written by na_clean_emit */
    int ndim;
    uint64_t out_shape[NA_MAX_NDIM];
    /* The NaN and +-Inf values (missing-value stand-ins aside) the write
     * pass will hand to an integer out_dtype, which has neither: predicted
     * by na_clean_fit from its statistics, so that na_clean_check_out can
     * refuse before anything is written. unrep_known 0: not predictable
     * (na_clean_check_out then counts them with a write pass). */
    uint64_t unrep;
    int unrep_known;
} na_clean_tensor_t;

/* The NaN payloads that stand for missing[0] and missing[1] while a
 * tensor is in doubles: quiet NaNs whose low 29 bits are not zero, so no
 * F32, F16 or BF16 NaN decodes to one (their payloads land in the high
 * mantissa bits). */
#define NA_CLEAN_MISS_BITS 0x7FF80000000A11A0ull

/* 1 when v is a missing-value stand-in (either marker). NA_HD
 * (decode.h, through median.h): also compiled for the GPU. */
NA_HD int na_clean_is_missing(double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    return (b & ~1ull) == NA_CLEAN_MISS_BITS;
}

/* Joint dropping (--together, issue 4): tensors that share the sample
 * axis lose the same samples. The caller marks, between na_clean_prepare
 * and na_clean_fit, each row a partner drops with NA_CLEAN_ROW_JOINT
 * (na_clean_row_set); the fit then treats those rows as gone before step 1:
 * no statistic after `before` sees them (DESIGN.md: statistics over the
 * kept samples), they are never written, and they count in
 * dropped_joint, not in dropped_nf/dropped_out. ct->before stays the
 * statistics of the whole input. */
#define NA_CLEAN_ROW_JOINT 3
/* The bit of na_clean_tensor_t.late that marks a row. */
#define NA_CLEAN_LATE 2u

/* The state of row r: 2 bits per row, row r in bits 2*(r%4).. of byte
 * r/4, so a billion samples cost 256 MiB, not 1 GiB. */
static inline unsigned na_clean_row(const na_clean_tensor_t *ct, uint64_t r)
{
    return (ct->row_state[r >> 2] >> ((r & 3) * 2)) & 3u;
}

/* Set the state of row r to s (0..3). Rows r/4 share a byte: threads
 * must not set rows of the same byte concurrently. */
static inline void na_clean_row_set(na_clean_tensor_t *ct, uint64_t r, unsigned s)
{
    uint8_t *p = &ct->row_state[r >> 2];
    unsigned sh = (unsigned)(r & 3) * 2;
    *p = (uint8_t)((*p & ~(3u << sh)) | ((s & 3u) << sh));
}

/* Layout, dtype and memory for t under o: fills rows/width/nfeat,
 * out_dtype, out_shape (rows not yet reduced) and allocates feat and
 * row_state. Samples of width 0, shape (N, 0), are N rows (width 1 for
 * the passes, which read nothing), so that --together partners and the
 * misalignment check see them and out_shape becomes (k, 0).
 * NA_E_UNSUPPORTED for a dtype that clean cannot write back (F8_*, C64
 * parts, F80, sub-byte types), for BOOL when o has a step (BOOL only
 * loses rows: a --together follower's options have no step), for more
 * than 2^20 features or 2^30 such samples without data (a header alone
 * can declare them), for more than 2^24 features with data (per-feature
 * statistics take ~420 bytes each: --global keeps one), NA_E_NOMEM. */
na_status_t na_clean_prepare(const na_tensor_t *t, const na_clean_opts_t *o,
                             na_clean_tensor_t *ct, na_err_t *err);

/* Rows only, for an entry whose values clean never reads (a string
 * dataset named by --together, which loses the samples its partners drop
 * and is copied row by row by the writer: na_wtensor_t.drop): rows =
 * shape[0] (ndim >= 1), width 1, no feature, out_dtype NA_DT_INVALID,
 * out_shape = shape, row_state all kept (where o says: state_dir,
 * state_file_min). The caller marks the partners'
 * rows NA_CLEAN_ROW_JOINT and then calls na_clean_rows_done.
 * NA_E_USAGE for ndim 0, NA_E_NOMEM. */
na_status_t na_clean_rows_prepare(const char *name, int ndim, const uint64_t *shape,
                                  const na_clean_opts_t *o, na_clean_tensor_t *ct,
                                  na_err_t *err);

/* Count the dropped rows of row_state (dropped_nf, dropped_out,
 * dropped_joint), list the first o->max_locations of them (drop_idx) and
 * set out_rows and, with o->samples, out_shape[0]: what na_clean_fit does
 * after deciding the rows, for entries set up by na_clean_rows_prepare. */
void na_clean_rows_done(const na_clean_opts_t *o, na_clean_tensor_t *ct);

/* Step 2's interval of feature c from its center, scale and MeanAD
 * (o->method, o->k): center -+ K * scale for --zscore; for --mad the
 * modified z-score's, center -+ K * MAD / 0.6745, or with MAD == 0
 * center -+ K * 1.253314 * MeanAD (DESIGN.md). Sets lo_bound, hi_bound:
 * the fit and --apply-params (which checks a file's bounds against it)
 * compute them alike, bit for bit. */
void na_clean_bounds(const na_clean_opts_t *o, na_clean_feat_t *c);

/* Read the tensor as many times as the passes above need, estimate every
 * na_clean_feat_t (unless ct->fixed) and decide which rows go. After it,
 * out_rows and out_shape are final and the counts of dropped rows known.
 * Errors: those of the source; NA_E_NOMEM; NA_E_UNSUPPORTED when a
 * statistic a step needs (mean, std, MAD, MeanAD) overflowed a double,
 * as numpy's float64 ones do for values near 1.8e308 (err names the
 * feature and the statistic; issue 4). */
na_status_t na_clean_fit(const na_tensor_t *t, const na_clean_opts_t *o,
                         na_clean_tensor_t *ct, na_err_t *err);

/* After na_clean_fit (and any --together refit): NA_E_USAGE when the
 * write pass would hand NaN or +-Inf to an integer out_dtype, which has
 * neither (issue 4: they would come back as 0 or a bound, values the input
 * did not have), with the message na_clean_emit would give - the file,
 * the tensor, their exact count, the dtype and what to use instead - and
 * before any byte is written, so that a real run creates no temporary
 * file and --dry-run refuses alike. The count is ct->unrep (na_clean_fit);
 * when the fit could not predict it (--apply-params whose step-3
 * parameters map a value beyond a double), one write pass into nothing
 * counts it. NA_OK for a float out_dtype. Errors: those of the source. */
na_status_t na_clean_check_out(const na_tensor_t *t, const na_clean_opts_t *o,
                               na_clean_tensor_t *ct, na_err_t *err);

/* 1 when the steps of o can write numbers the input did not hold:
 * normalization, a mean or value=X fill, outliers clipped or set to the
 * mean (drop, a zero fill and nan keep the input's values or write 0 or
 * NaN). A writer whose storage type keeps fewer bits than it occupies
 * (HDF5's H5Tset_precision) must refuse those (formats/hdf5_wchild.c). */
int na_clean_computes(const na_clean_opts_t *o);

/* The refusal of na_clean_check_out and na_clean_emit: NA_E_USAGE, err =
 * "NAME: N NaN/Inf value(s) would be written as DTYPE, ...; HINT". */
na_status_t na_clean_unrep_error(const na_tensor_t *t, const na_clean_tensor_t *ct, uint64_t n,
                                 na_err_t *err);

/* Sink for cleaned bytes, in order; returns NA_OK or an error (with err). */
typedef na_status_t (*na_clean_sink_fn)(void *ud, const void *buf, size_t len, na_err_t *err);

/* The write pass: transform every kept row, round to out_dtype (nearest
 * even; integers saturate), hand the bytes (little-endian) to sink, and
 * count replaced/clipped/overflow values and the predicted statistics of
 * what was written (ct->after). Errors: those of the source and the sink;
 * NA_E_NOMEM; NA_E_USAGE when NaN or +-Inf would be written to an integer
 * out_dtype, which has neither (err gives their count over the whole
 * pass; the caller discards what the sink received). */
na_status_t na_clean_emit(const na_tensor_t *t, const na_clean_opts_t *o,
                          na_clean_tensor_t *ct, na_clean_sink_fn sink, void *ud,
                          na_err_t *err);

/* The counts of one write pass (na_clean_emit's, or the GPU's). */
typedef struct na_clean_counts {
    uint64_t replaced_nf, replaced_out, clipped, nanned, flagged, overflow, collisions;
    uint64_t unrep; /* NaN/Inf bound for an integer out_dtype (refused) */
} na_clean_counts_t;

/* a += b, field by field (NA_HD: the GPU's block reduction uses it too). */
NA_HD void na_clean_counts_add(na_clean_counts_t *a, const na_clean_counts_t *b)
{
    a->replaced_nf += b->replaced_nf;
    a->replaced_out += b->replaced_out;
    a->clipped += b->clipped;
    a->nanned += b->nanned;
    a->flagged += b->flagged;
    a->overflow += b->overflow;
    a->collisions += b->collisions;
    a->unrep += b->unrep;
}

/* The end of a write pass that ran with status st, wrote its bytes and
 * accumulated ct->after (na_clean_emit; gpu/cuda_clean.c for the GPU):
 * stores the counts c in ct and, when st is NA_OK and c->unrep > 0,
 * returns NA_E_USAGE with na_clean_emit's message; else st. */
na_status_t na_clean_emit_finish(const na_tensor_t *t, na_clean_tensor_t *ct,
                                 const na_clean_counts_t *c, na_status_t st, na_err_t *err);

/* The bytes (little-endian, ct->out_dtype: 1 to 8 of them, into out) that
 * the write pass makes of an element of t whose stored bytes are elem
 * (t->elem_stride bytes, as na_fill_fn gives them) in every feature, when
 * that is the same for all features and a row holding it in every feature
 * is kept: 1. 0 when features differ, when step 1 or 2 would drop such a
 * row, or when it cannot be written (NaN into an integer dtype). After
 * na_clean_fit. For an HDF5 dataset's fill value: the HDF5 writer gives
 * the cleaned copy this fill value, so that chunks never written stay
 * unwritten (formats/hdf5_wchild.c, na_wtensor_t.fill_set). */
int na_clean_fill_out(const na_tensor_t *t, const na_clean_opts_t *o,
                      const na_clean_tensor_t *ct, const uint8_t *elem, uint8_t out[8]);

/* Round one double to dtype dt (little-endian) at p; returns 1 when a
 * finite value overflowed (became +-Inf, or saturated for an integer
 * type; NaN into an integer type gives 0 and counts too). Supported: F64
 * F32 F16 BF16 and integers. Rounding: to nearest, ties to even, as
 * numpy's astype and ml_dtypes do. */
int na_clean_encode(na_dtype_t dt, double v, void *p);

/* 1 when na_clean_encode supports dt as a step's output (--out-dtype);
 * BOOL, which na_ce_put also writes, is not one (na_clean_prepare). */
int na_clean_dtype_ok(na_dtype_t dt);

void na_clean_tensor_free(na_clean_tensor_t *ct); /* NULL ok; frees arrays */

#ifdef __cplusplus
}
#endif
#endif /* NA_CLEAN_H */

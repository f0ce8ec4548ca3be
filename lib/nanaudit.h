/*
 * nanaudit.h - the public interface of the nanaudit engine (lib/).
 *
 * The engine decodes tensor elements, computes statistics, finds NaN, Inf
 * and z-score outliers, turns results into findings under a policy and
 * writes reports. It does no file I/O of its own: a tensor's bytes arrive
 * through a read callback (na_source_t) that a format reader in formats/
 * provides, and report writers write to a FILE* the caller opened.
 *
 * Conventions (../DESIGN.md, "Definitions" and "Conventions"):
 *  - every function that can fail returns na_status_t and, where it has an
 *    na_err_t*, fills it with one line "tensor: problem" (the CLI adds the
 *    file name in front);
 *  - sizes are in bytes or elements as each comment says;
 *  - no global mutable state; objects are freed by their *_free function,
 *    which accepts NULL.
 *
 * Compiles as C11 and as C++17 (the CUDA backend includes it).
 */
#ifndef NANAUDIT_H
#define NANAUDIT_H

#include <stddef.h> /* size_t */
#include <stdint.h> /* uint64_t, uint32_t */
#include <stdio.h>  /* FILE */

#ifdef __cplusplus
extern "C" {
#endif

#define NA_VERSION "0.1.0"
#define NA_SCHEMA_VERSION 1

/* ------------------------------------------------------------------ */
/* Status codes. Values are pinned: never renumber, only append.       */
/* ------------------------------------------------------------------ */
typedef enum na_status {
    NA_OK = 0,
    NA_E_NOMEM = 1,       /* out of memory                     -> exit 4 */
    NA_E_IO = 2,          /* an input could not be read        -> exit 3 */
    NA_E_FORMAT = 3,      /* malformed / invalid input         -> exit 3 */
    NA_E_UNSUPPORTED = 4, /* valid but not supported (dtype..) -> exit 3 */
    NA_E_NOTFOUND = 5,    /* missing input (file, shard)       -> exit 3 */
    NA_E_WRITE = 6,       /* a write failed                    -> exit 4 */
    NA_E_INTERNAL = 7,    /* bug or environment problem        -> exit 4 */
    NA_E_USAGE = 8        /* bad option value                  -> exit 2 */
} na_status_t;

/* Short English text for a status ("out of memory", "malformed input", ...).
 * Never NULL; unknown values give "unknown status". */
const char *na_status_str(na_status_t s);

/* Exit code of DESIGN.md for a status: OK 0, USAGE 2, IO/FORMAT/
 * UNSUPPORTED/NOTFOUND 3, NOMEM/WRITE/INTERNAL 4. */
int na_status_exit_code(na_status_t s);
/* The status of a system call on an input that failed with errno e:
 * NA_E_NOTFOUND for ENOENT and ENOTDIR; NA_E_NOMEM for ENOMEM; the
 * environment's limits (EMFILE, ENFILE: descriptors; EAGAIN) NA_E_INTERNAL,
 * exit 4, not the input's fault; NA_E_IO (exit 3) otherwise. */
na_status_t na_errno_status(int e);

/* One-line error message buffer. Messages never contain a newline. */
#define NA_ERR_LEN 512
typedef struct na_err {
    char msg[NA_ERR_LEN];
} na_err_t;

/* printf-style setter; truncates to NA_ERR_LEN-1 bytes and replaces any
 * control character with '?' so a message stays one line. err may be NULL.
 * "Control character" covers C0, DEL, C1 (U+0080..U+009F) and every byte
 * that is not well-formed UTF-8 (a raw 0x9B is CSI to a non-UTF-8
 * terminal); each such byte becomes one '?'.
 * Returns st, so `return na_err_set(err, NA_E_FORMAT, "...")` works. */
na_status_t na_err_set(na_err_t *err, na_status_t st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ------------------------------------------------------------------ */
/* dtypes (names follow safetensors, see                               */
/* https://github.com/huggingface/safetensors/blob/main/safetensors/src/tensor.rs) */
/* ------------------------------------------------------------------ */
typedef enum na_dtype {
    NA_DT_INVALID = 0,
    NA_DT_BOOL,
    NA_DT_U8,
    NA_DT_I8,
    NA_DT_U16,
    NA_DT_I16,
    NA_DT_U32,
    NA_DT_I32,
    NA_DT_U64,
    NA_DT_I64,
    NA_DT_F16,         /* IEEE binary16 */
    NA_DT_BF16,        /* bfloat16: top 16 bits of binary32 */
    NA_DT_F32,
    NA_DT_F64,
    NA_DT_F8_E4M3,     /* OCP E4M3 "fn": no Inf, 0x7F/0xFF NaN, max 448 */
    NA_DT_F8_E5M2,     /* OCP E5M2: IEEE-like, Inf and NaN */
    NA_DT_F8_E8M0,     /* OCP E8M0 scale: 2^(e-127), 0xFF NaN, no zero/sign */
    NA_DT_F8_E4M3FNUZ, /* bias 8, 0x80 only NaN, no Inf, no -0 */
    NA_DT_F8_E5M2FNUZ, /* bias 16, 0x80 only NaN, no Inf, no -0 */
    NA_DT_C64,         /* complex64: audited as NAME.real / NAME.imag (F32) */
    NA_DT_F4,          /* sub-byte types: not decoded, fail closed */
    NA_DT_F6_E2M3,
    NA_DT_F6_E3M2,
    NA_DT_F80,         /* x87 80-bit extended (HDF5 / NumPy long double) */
    NA_DT_COUNT
} na_dtype_t;

typedef enum na_endian { NA_LITTLE = 0, NA_BIG = 1 } na_endian_t;

/* Safetensors name ("F32", "F8_E4M3", ...); "INVALID" for bad values. */
const char *na_dtype_name(na_dtype_t dt);
/* Exact, case-sensitive lookup of a safetensors name; NA_DT_INVALID when
 * unknown. `len` bytes of `name` are compared (name need not be NUL-ended). */
na_dtype_t na_dtype_from_name(const char *name, size_t len);
/* Storage size of one element in bits (F4: 4, F6_*: 6, C64: 64, BOOL: 8). */
unsigned na_dtype_bits(na_dtype_t dt);
/* 1 when the engine can decode the dtype (all but F4, F6_*, INVALID). */
int na_dtype_supported(na_dtype_t dt);
/* 1 for floating types that can hold NaN (F*, BF16, F8_*): F16 BF16 F32
 * F64 F8_* C64 F80; 0 for F4 and F6_* ("fn" types without NaN), integers,
 * BOOL and INVALID. */
int na_dtype_is_float(na_dtype_t dt);

/* Classification of one decoded element. */
typedef enum na_class {
    NA_CL_NORMAL = 0, /* finite, nonzero, not subnormal (all integers too) */
    NA_CL_ZERO,       /* +0 or -0 (integer 0, BOOL false) */
    NA_CL_SUBNORMAL,  /* nonzero with a zero exponent field, in its dtype */
    NA_CL_NAN,
    NA_CL_POS_INF,
    NA_CL_NEG_INF
} na_class_t;

/* Decode the element at p (dtype dt, stored in byte order e, possibly
 * unaligned) to double and classify it. For NaN and Inf *value is NaN or
 * +-Inf. Exact for every supported dtype except I64/U64 magnitudes above
 * 2^53, which round to nearest as numpy's astype(float64) does.
 * Reference for the 8- and 16-bit floats: ml_dtypes
 * (https://github.com/jax-ml/ml_dtypes) and the OCP 8-bit float spec.
 * Also: BOOL is 1.0 for any nonzero byte (as numpy reads it); C64 decodes
 * the F32 at p (the real part; pass p + 4 for the imaginary part); F80
 * (10 bytes at p) rounds to nearest-even, is classified by the F80 value
 * itself, and a finite F80 beyond double range gives +-DBL_MAX (a finite
 * class always comes with a finite value); dtypes that na_dtype_supported
 * rejects give NA_CL_NAN, so nothing undecodable can look clean. */
na_class_t na_decode1(na_dtype_t dt, na_endian_t e, const void *p, double *value);

/* ------------------------------------------------------------------ */
/* Tensor views                                                        */
/* ------------------------------------------------------------------ */

/* Read callback: make bytes [off, off+len) of the tensor's data stream
 * readable and set *ptr to them. The pointer stays valid until the next
 * call on the same source or until the source is closed. The engine asks
 * for windows in increasing order of off, restarting at 0 for a second
 * pass; len is a multiple of the tensor's elem_stride and at most
 * na_scan_opts_t.window_bytes. Returns NA_OK, or an error with err filled
 * ("data truncated: ...", "read error: ..."). */
typedef na_status_t (*na_read_fn)(void *ctx, uint64_t off, size_t len,
                                  const uint8_t **ptr, na_err_t *err);

/* Optional fill-run callback: what a source knows without reading, such
 * as an HDF5 dataset's unallocated chunks, which read as its fill value.
 * Within bytes [off, off+len) of the data stream: bytes [off, off+*skip)
 * may hold anything, and bytes [off+*skip, off+*skip+*run) are known to
 * be copies of one element of elem_stride bytes at *elem (the same element
 * for every run of a tensor; valid until the next call on the source).
 * *run == 0: no run starts in the range. skip and run are whole elements
 * and skip + run <= len. na_scan_tensor never reads the blocks of
 * NA_BLOCK_ELEMS elements that lie wholly in a run: it reuses the results
 * of one block of copies, so the report is the same byte for byte as when
 * it reads them. Errors as na_read_fn. */
typedef na_status_t (*na_fill_fn)(void *ctx, uint64_t off, uint64_t len, uint64_t *skip,
                                  uint64_t *run, const uint8_t **elem, na_err_t *err);

typedef struct na_source {
    na_read_fn read;
    void *ctx;
    na_fill_fn fill; /* NULL: no fill runs known, every window is read */
} na_source_t;

#define NA_MAX_NDIM 64

/* The CF attributes that describe stored values (CF conventions 1.11,
 * sections 8.1 "Packed Data" and 2.5.1 "Missing data, valid and actual
 * range of data"): na_tensor_t.packed's bits, in this order. */
/* Dimension scales kept per tensor along axis 0 (na_tensor_t.scale0). */
#define NA_SCALES0 4
#define NA_PACKING_ATTRS {"scale_factor", "add_offset", "valid_min", "valid_max", "valid_range"}

typedef struct na_tensor {
    const char *name;     /* as stored; may hold any bytes but NUL */
    na_dtype_t dtype;     /* decoded element type (F32 for C64 parts) */
    na_dtype_t stored;    /* dtype as stored (C64 for NAME.real) */
    na_endian_t byte_order;
    int ndim;             /* 0 for a scalar; <= NA_MAX_NDIM */
    uint64_t shape[NA_MAX_NDIM];
    uint64_t elements;    /* product of shape (1 for a scalar) */
    /* Layout of the data stream: element i's first byte is at
     * i * elem_stride + elem_offset (bytes). Plain tensors: stride =
     * element size, offset 0. C64 parts: stride 8, offset 0 or 4. */
    uint32_t elem_stride;
    uint32_t elem_offset;
    na_source_t src;
    /* Missing values (HDF5/netCDF CF attributes _FillValue and
     * missing_value, formats/hdf5.c): finite elements equal to one of
     * missing[0..n_missing) are counted in na_stats_t.missing and left out
     * of every statistic, finding and location. 0 for other formats. */
    int n_missing;
    double missing[2];
    /* I64/U64 tensors: bit i set when missing[i] stands for exactly the
     * integer missing_int[i] (the element's bits, int64_t for I64): an
     * element is missing only when its integer equals it, since doubles
     * merge integers of magnitude 2^53 or more (NC_FILL_INT64,
     * -9223372036854775806, is -2^63 as a double, as is INT64_MIN). 0 for
     * every other dtype (the HDF5 reader sets it for I64/U64 only). */
    unsigned missing_exact;
    uint64_t missing_int[2];
    /* 1: the report carries "missing" and "unallocated_chunks" for this
     * tensor (HDF5 datasets); unallocated_chunks is -1 when the dataset
     * is not chunked. */
    int report_missing;
    int64_t unallocated_chunks;
    /* 1: every element equals element 0 (an HDF5 dataset with no storage
     * allocated reads as its fill value): the scan reads one element and
     * derives the rest (lib/scan_const.c), whatever the element count. */
    int constant;
    /* Not 0: attributes describe the stored values (CF scale_factor,
     * add_offset, valid_min/max/range on an HDF5 dataset), bit i set for
     * NA_PACKING_ATTRS' name i; the HDF5 writer drops them from a
     * normalized copy and clean's warning names them (formats/hdf5.c). */
    int packed;
    /* 1: an HDF5 dimension scale (attribute CLASS = "DIMENSION_SCALE":
     * a netCDF-4 coordinate variable such as /time or /lat): coordinates,
     * not data, which clean copies unless --include names them. */
    int dim_scale;
    /* The HDF5 dimension scales along axis 0 (object address + 1 of each
     * scale the dataset's DIMENSION_LIST attribute attaches to dimension
     * 0, at most NA_SCALES0, or a dimension scale's own; 0: unused
     * slots): tensors with one value in common share that dimension (a
     * netCDF-4 variable and its time axis), and clean never lets them
     * lose different samples. All 0 elsewhere. */
    uint64_t scale0[NA_SCALES0];
    /* 1: an HDF5 dimension scale that some dataset attaches to a
     * dimension other than 0 (its REFERENCE_LIST): clean never drops its
     * rows, which that dataset's other axis would no longer match. */
    int scale_other_axis;
    /* Not 0: one of the tensors a reader makes of one stored array
     * (formats/npy.c, for .npy and .npz): NA_PART_FIELD, a field of a
     * structured array ("NAME.x"); NA_PART_COMPLEX, the real or imaginary
     * part of a complex one ("NAME.real"). The .npy and .npz writers
     * cannot put one part back into its records, so clean copies the
     * array unchanged. 0 elsewhere (HDF5 compound members are written
     * back field by field). */
    int part;
    /* 1: HDF5 variable-length numeric data (h5py.vlen_dtype, formats/hdf5.c):
     * the tensor is the concatenation of the dataset's sequences in
     * row-major order of its elements (numpy: np.concatenate of
     * d[...].ravel()), so ndim is 1, shape[0] = elements = the values of
     * all sequences, and locations index the concatenation. sequences:
     * the dataset's element count; vndim, vshape: its shape. Opened with
     * na_open_opts_t.no_measure (info) the values are not counted:
     * elements and shape[0] are then 0. 0 and unused elsewhere. */
    int vlen;
    uint64_t sequences;
    int vndim;
    uint64_t vshape[NA_MAX_NDIM];
} na_tensor_t;

#define NA_PART_FIELD 1
#define NA_PART_COMPLEX 2

/* Row-major (C-order) multi-index of flat index `flat` in `shape`
 * (idx gets ndim entries). */
void na_unravel(uint64_t flat, int ndim, const uint64_t *shape, uint64_t *idx);

/* ------------------------------------------------------------------ */
/* Statistics                                                          */
/* ------------------------------------------------------------------ */

/* Partial statistics, mergeable. Over finite values only, in double.
 * m2 = sum of squared deviations from mean (Welford/Chan). The mean is
 * mean + mean_lo: mean is the double nearest it, mean_lo the rest (0 when
 * not known), which keeps the merge exact for data far from 0 (1e9 +
 * N(0, 1e-3): the difference of two block means is then a few ulps).
 * m2 likewise is m2 + m2_lo: the merges add each block's share to m2 with
 * TwoSum and carry the rounding error in m2_lo, so that millions of
 * merges of small shares into a large m2 do not drift (2^26 blocks of a
 * 2^40-element sparse dataset moved its std by 5e-10 relative). */
typedef struct na_stats {
    uint64_t elements, nan, pos_inf, neg_inf, zeros, subnormal, finite;
    double min, max, abs_max; /* meaningful only when finite > 0 */
    double mean, m2;
    uint64_t missing; /* elements equal to a missing value (na_tensor_t) */
    double mean_lo;   /* see above; last, so positional initialisers leave it 0 */
    double m2_lo;     /* see above; 0 for one block's statistics */
} na_stats_t;

void na_stats_init(na_stats_t *s);
/* a <- a merged with b, Chan, Golub & LeVeque (1979) pairwise update:
 *   d = mean_b - mean_a; n = n_a + n_b;
 *   mean = mean_a + d * n_b / n; m2 = m2_a + m2_b + d^2 * n_a * n_b / n.
 * Not commutative in rounding: callers merge in index order. */
void na_stats_merge(na_stats_t *a, const na_stats_t *b);
/* The value statistics of one block from its two-pass sums: mean (the
 * block sum / finite, finite > 0), m2 = sum of (x - mean)^2 and sd = sum of
 * (x - mean) over its finite x. Sets s->mean, s->mean_lo and s->m2 with the
 * "corrected two-pass algorithm" of Chan, Golub & LeVeque, "Algorithms for
 * computing the sample variance: analysis and recommendations" (The
 * American Statistician 37(3), 1983): m2 - sd^2 / n, and the mean's
 * rounding error sd / n, for a block whose values lie within |mean|/256 of
 * each other (else the plain figures). s->finite (> 0), s->min and s->max
 * must be set. */
void na_stats_block(na_stats_t *s, double mean, double m2, double sd);
/* The blocks na_stats_block corrects: values within |mean|/256 of each
 * other. The scan kernels sum sd for those only (0 is passed for others). */
static inline int na_stats_narrow(double mn, double mx, double mean)
{
    return mx - mn <= (mean < 0 ? -mean : mean) * 0x1p-8;
}
/* Population std (ddof = 0): sqrt(m2 / finite); exactly 0 when
 * max == min; NaN when finite == 0, when m2 overflowed, and when the
 * variance underflowed (na_stats_std_underflow). */
double na_stats_std(const na_stats_t *s);
/* 1 when s's values differ (max != min) but their variance m2 / finite is
 * below 2^-1034 = 5.4e-312 (a std below 2.3e-156: F64 values within
 * ~1e-156 of each other, subnormals): squared deviations that small are
 * subnormal or 0, and m2 is no longer known to 1e-12, so neither is the
 * std (numpy's np.std says 0 or a rounded value; 0 would call the data
 * constant and flag nothing). */
int na_stats_std_underflow(const na_stats_t *s);

/* ------------------------------------------------------------------ */
/* Scanning                                                            */
/* ------------------------------------------------------------------ */

#define NA_DEFAULT_ZSCORE 6.0
#define NA_DEFAULT_MAX_LOCATIONS 5
#define NA_DEFAULT_WINDOW_BYTES (64u << 20)

/* Extra counts pass 1 can take on request (lib/scan_extra.c): for each
 * closed interval [lo, hi] the number of finite elements x (decoded to
 * double, exactly) with lo <= x <= hi. Strict bounds are expressed with
 * nextafter() (x < 0 is [-DBL_MAX, -DBL_TRUE_MIN]), open ends with
 * -DBL_MAX / DBL_MAX, so NaN and +-Inf never count. The findings range,
 * max_abs, negative, cast_overflow and cast_underflow are built on these
 * counts (na_checks_t below). */
#define NA_MAX_INTERVALS 10
typedef struct na_interval {
    double lo, hi;
} na_interval_t;
typedef struct na_extra {
    size_t n; /* <= NA_MAX_INTERVALS */
    na_interval_t iv[NA_MAX_INTERVALS];
} na_extra_t;

enum { NA_OUTLIER_ZSCORE = 0, NA_OUTLIER_MAD = 1 }; /* na_result_t.method */

typedef struct na_scan_opts {
    int threads;          /* OpenMP threads; 0 = omp_get_max_threads() */
    double zscore;        /* K for |x - mean| > K*std; <= 0 disables */
    size_t max_locations; /* N first locations kept per kind */
    size_t window_bytes;  /* max bytes per source read (>= 1 MiB) */
    /* Optional progress callback, called from the calling thread with
     * the number of bytes processed since the last call. */
    void (*progress)(void *ud, uint64_t bytes);
    void *progress_ud;
    /* Interval counts to take in pass 1 (NULL or n == 0: none, and pass 1
     * runs exactly as without them). Not owned. */
    const na_extra_t *extra;
    /* K of the modified z-score (Iglewicz & Hoaglin 1993, DESIGN.md
     * "Robust alternative"): |0.6745 (x - median) / MAD| > K with the
     * exact median and MAD, MeanAD fallback when MAD == 0. > 0 replaces
     * the z-score test (zscore is then ignored); <= 0: not used (the
     * default). CPU only: the CUDA backend has no median. */
    double mad;
} na_scan_opts_t;

void na_scan_opts_init(na_scan_opts_t *o); /* the defaults above */

typedef struct na_result {
    na_stats_t st;
    double std;           /* na_stats_std(&st) */
    int outliers_checked; /* 1 when the z-score test ran (K > 0) */
    double threshold;     /* K */
    int pass2;            /* 1 when a second pass read data again (blocks whose
                           * outliers pass 1 recorded are not re-read) */
    uint64_t outliers;    /* count of finite x with |x-mean| > K*std */
    /* First max_locations flat row-major indices, ascending. inf_locs
     * holds +Inf and -Inf together. Owned; freed by na_result_free. */
    size_t n_nan_locs, n_inf_locs, n_out_locs;
    uint64_t *nan_locs, *inf_locs, *out_locs;
    /* Flat index of the first +Inf and of the first -Inf (UINT64_MAX when
     * there is none or max_locations is 0), for the findings' messages. */
    uint64_t first_pos_inf, first_neg_inf;
    /* Counts of na_scan_opts_t.extra's intervals, in its order; valid when
     * extra_done is 1 (a backend that does not take them leaves it 0, and
     * na_scan_extra fills them in a separate pass). */
    int extra_done;
    uint64_t extra_counts[NA_MAX_INTERVALS];
    /* Which outlier test ran: NA_OUTLIER_ZSCORE (centre mean, scale std)
     * or NA_OUTLIER_MAD (na_scan_opts_t.mad; threshold is its K). For
     * MAD: the exact median and MAD of the finite values and, when MAD
     * == 0, MeanAD = mean |x - median| (otherwise NaN: not used). */
    int method;
    double median, mad, meanad;
} na_result_t;

/* Scan one tensor: pass 1 (statistics, NaN/Inf locations) and, when
 * K > 0 and pass 1 shows values beyond mean +- K*std, pass 2 (outlier
 * count and locations). Memory: window_bytes of source data plus O(threads
 * + blocks/window) state, plus 16 bytes per block of 16 Ki elements for
 * the per-block min/max that let pass 2 skip blocks (capped at 16 MiB),
 * and for tensors of at most 64 Ki blocks 72 bytes per block of outlier
 * candidates that spare most blocks a second read (scan_pass.c).
 * Pass 2 reads only the windows that can hold an outlier: its offsets
 * increase but its first read is not necessarily at 0. The progress
 * callback counts pass-1 bytes only (its total is the tensor's bytes).
 * Identical results for any thread count. Errors: those of the source, NA_E_UNSUPPORTED for
 * a dtype that cannot be decoded, NA_E_NOMEM. */
na_status_t na_scan_tensor(const na_tensor_t *t, const na_scan_opts_t *o,
                           na_result_t *r, na_err_t *err);
void na_result_free(na_result_t *r); /* frees the location arrays */

/* How a statistic that overflowed a double is described, by scan's note
 * below and by clean's refusal (lib/clean.c), so that the two agree. */
#define NA_OVERFLOW_WHY \
    "overflows a double, as numpy's does (values near 1.8e308, or spread by 1e154 or more)"
/* The same for a std whose variance underflowed (na_stats_std_underflow). */
#define NA_UNDERFLOW_WHY \
    "underflows a double (a variance below 5.4e-312, a std below 2.3e-156: squared " \
    "deviations that small lose their digits, and numpy's np.std gives 0 or a rounded value)"

/* Why the outlier test of r ran but cannot flag anything, or NULL: the
 * mean or the std (--zscore), or the MAD or, when the MAD is 0, the
 * MeanAD (--mad) of a tensor with finite values is not finite. Sums
 * beyond DBL_MAX (values near +-1.8e308) make the mean Inf or NaN and
 * squared deviations beyond it (a spread of ~1e154 or more) the std Inf
 * or NaN, as numpy's float64 np.mean and np.std do; then |x - mean| >
 * K*std is false for every x, silently. The reports print the note per
 * tensor (text "note NAME: ...", JSON outliers.note); it is not a
 * finding, so the exit code is unchanged (man page). Static text. */
const char *na_outliers_note(const na_result_t *r);

/* Take only the interval counts of o->extra, in a pass of its own over
 * t's data on the CPU (for backends that do not take them in pass 1):
 * fills r->extra_counts and sets r->extra_done = 1; nothing else of r
 * changes. Errors: those of the source, NA_E_UNSUPPORTED, NA_E_NOMEM. */
na_status_t na_scan_extra(const na_tensor_t *t, const na_scan_opts_t *o, na_result_t *r,
                          na_err_t *err);

/* ------------------------------------------------------------------ */
/* Backends: where na_scan_tensor's work runs                          */
/* ------------------------------------------------------------------ */

/* A scan backend (after curl's struct Curl_ssl: one table, one file per
 * backend). The CPU one (lib/backend_cpu.c) is na_scan_tensor itself; the
 * CUDA one (gpu/) computes the same partial statistics per block of
 * NA_BLOCK_ELEMS elements on the GPU and merges them on the host in block
 * order, so both give the answers DESIGN.md specifies ("Merging partial
 * statistics"). scan_tensor has na_scan_tensor's contract; close frees
 * the backend's state (NULL-safe via na_backend_close). */
typedef struct na_backend {
    const char *name; /* "cpu", "cuda:0", ...: the report's "device" */
    na_status_t (*scan_tensor)(void *self, const na_tensor_t *t, const na_scan_opts_t *o,
                               na_result_t *r, na_err_t *err);
    void (*close)(void *self);
    void *self;
} na_backend_t;

/* Fill b with the CPU backend (no state; never fails). */
void na_backend_cpu(na_backend_t *b);
/* Release b's state (b may be NULL or already closed); b becomes empty. */
void na_backend_close(na_backend_t *b);

/* ------------------------------------------------------------------ */
/* Findings and policy                                                 */
/* ------------------------------------------------------------------ */
typedef enum na_kind {
    NA_K_NAN = 0,
    NA_K_POS_INF,
    NA_K_NEG_INF,
    NA_K_OUTLIERS,
    NA_K_SUBNORMAL,
    NA_K_ZERO_TENSOR,
    NA_K_RANGE,
    NA_K_MAX_ABS,
    NA_K_CAST_OVERFLOW,
    NA_K_CAST_UNDERFLOW,
    NA_K_NEGATIVE,
    NA_K_COUNT
} na_kind_t;

#define NA_KIND_BIT(k) (1u << (k))
#define NA_DEFAULT_FAIL_MASK \
    (NA_KIND_BIT(NA_K_NAN) | NA_KIND_BIT(NA_K_POS_INF) | NA_KIND_BIT(NA_K_NEG_INF))

const char *na_kind_name(na_kind_t k); /* "nan", "pos_inf", ... */

/* Parse a --fail-on list: comma-separated kind names, '-' accepted for
 * '_', "inf" = pos_inf + neg_inf, "none" = empty. Sets *mask.
 * NA_E_USAGE with err naming the bad word otherwise. */
na_status_t na_parse_fail_on(const char *list, uint32_t *mask, na_err_t *err);

typedef struct na_finding {
    na_kind_t kind;
    uint64_t count;
    int fails;        /* kind is in the policy's fail mask */
    char message[200];
    /* --baseline has the same (file, tensor, kind), with count baseline
     * (JSON "baseline"); 0 and 0 otherwise, so zeroed findings are right. */
    int in_baseline;
    uint64_t baseline;
} na_finding_t;

/* Findings of one scanned tensor: nan, pos_inf, neg_inf, outliers,
 * subnormal (count > 0 each), zero_tensor (elements > 0, all zero).
 * Writes at most cap entries to out, returns how many there are. */
size_t na_findings(const na_tensor_t *t, const na_result_t *r,
                   uint32_t fail_mask, na_finding_t *out, size_t cap);

/* What to check in a tensor beyond NaN/Inf/outliers/subnormal/zero, and
 * when a finding fails (lib/checks.c). One per run from the flags, and
 * one per tensor once a --policy rule matches its name. */
typedef struct na_checks {
    uint32_t fail_mask;        /* kinds that fail (NA_KIND_BIT) */
    int range_lo_set, range_hi_set; /* --range LO:HI (either side may be open) */
    double range_lo, range_hi; /* finite values outside [lo, hi]: kind range */
    int max_abs_set;
    double max_abs;            /* finite |x| > max_abs: kind max_abs */
    /* kind negative (finite x < 0; -0 is not negative): 1 on, 0 off, -1
     * by name: on for names matching *running_var* or *exp_avg_sq*
     * (BatchNorm running variances and Adam's second moments, which are
     * >= 0 by construction; a negative one is corruption). */
    int nonneg;
    na_dtype_t cast;           /* --cast-check target or NA_DT_INVALID */
    /* Tolerance per kind: a finding fails only when count > fraction *
     * elements (so 0, the default, fails on any count). pos_inf and
     * neg_inf are compared on their sum (--max-inf-fraction). */
    double max_fraction[NA_K_COUNT];
} na_checks_t;

/* Defaults: fail_mask NA_DEFAULT_FAIL_MASK, no range/max_abs/cast,
 * nonneg -1 (by name), fractions 0. */
void na_checks_init(na_checks_t *c);

/* Exact cast thresholds of a --cast-check target (F16, BF16, F8_E4M3,
 * F8_E5M2; NA_E_USAGE for others). A finite x overflows when |x| >=
 * *overflow (|x| > *overflow when *overflow_strict) and underflows when
 * 0 < |x| <= *underflow. Derivation in checks.c. */
na_status_t na_cast_limits(na_dtype_t target, double *overflow, int *overflow_strict,
                           double *underflow);

/* The intervals a scan must count for checks c on a tensor named name
 * (na_scan_opts_t.extra); ex->n == 0 when nothing beyond the core is
 * asked. */
void na_checks_extra(const na_checks_t *c, const char *name, na_extra_t *ex);

/* na_findings plus the findings of c (range, max_abs, negative,
 * cast_overflow, cast_underflow; from r->extra_counts, which must come
 * from a scan with na_checks_extra(c, t->name)), with fails decided by
 * c->fail_mask and the tolerances. Same return convention as
 * na_findings; at most NA_K_COUNT findings. */
size_t na_findings_checked(const na_tensor_t *t, const na_result_t *r, const na_checks_t *c,
                           na_finding_t *out, size_t cap);

/* Which fields of an na_checks_t a patch sets (na_checks_patch). */
enum {
    NA_CK_FAIL_ON = 1u << 0,  /* fail_mask */
    NA_CK_RANGE_LO = 1u << 1, /* range_lo_set, range_lo */
    NA_CK_RANGE_HI = 1u << 2, /* range_hi_set, range_hi */
    NA_CK_MAX_ABS = 1u << 3,  /* max_abs_set, max_abs */
    NA_CK_NONNEG = 1u << 4,
    NA_CK_CAST = 1u << 5,
    NA_CK_FRAC_NAN = 1u << 6, /* max_fraction[nan] */
    NA_CK_FRAC_INF = 1u << 7, /* max_fraction[pos_inf] and [neg_inf] */
    NA_CK_FRAC_OUT = 1u << 8  /* max_fraction[outliers] */
};
/* Copy into dst the fields of src that `given` names. */
void na_checks_patch(na_checks_t *dst, const na_checks_t *src, uint32_t given);

/* A --policy file (lib/policy_file.c has the format and why YAML). */
typedef struct na_policy na_policy_t;
/* Parse len bytes of YAML text; fname only names the file in messages.
 * NA_E_USAGE with err "FNAME:LINE: problem" for YAML errors, unknown
 * keys, duplicate keys and bad values; NA_E_NOMEM. *out is NULL on error. */
na_status_t na_policy_parse(const char *text, size_t len, const char *fname,
                            na_policy_t **out, na_err_t *err);
/* The checks of tensor `name`: na_checks_init, then p's defaults, then the
 * command-line flags (the fields flags_given names), then every rule of p
 * whose glob matches the name (fnmatch(3), flags 0), in file order. p may
 * be NULL (flags only); name NULL applies no rule (the run-wide checks,
 * e.g. the report's "fail_on"). */
void na_policy_checks(const na_policy_t *p, const na_checks_t *flags, uint32_t flags_given,
                      const char *name, na_checks_t *out);
void na_policy_free(na_policy_t *p); /* NULL-safe */

/* --baseline old.json (lib/baseline.c): the findings of an earlier JSON
 * report, keyed by (file path as given, tensor name, kind); paths are
 * compared without "." components and repeated slashes ("./a" is "a"),
 * and relative to the working directory at parse time when under it.
 * Parse len
 * bytes; NA_E_USAGE with err "FNAME[:LINE]: problem" when it is not JSON
 * or not a nanaudit report (schema_version 1, files[].path,
 * files[].tensors[].name, findings[].kind/count); NA_E_NOMEM. */
typedef struct na_baseline na_baseline_t;
na_status_t na_baseline_parse(const char *text, size_t len, const char *fname,
                              na_baseline_t **out, na_err_t *err);
/* For each of the n findings of tensor `tensor` in file `path`: when the
 * baseline has the triple, set .in_baseline and .baseline (its count), append
 * " (baseline: N)" to the message, and clear .fails unless the count
 * grew. b may be NULL (nothing changes). */
void na_baseline_apply(const na_baseline_t *b, const char *path, const char *tensor,
                       na_finding_t *f, size_t n);
void na_baseline_free(na_baseline_t *b); /* NULL-safe */

/* ------------------------------------------------------------------ */
/* Reports                                                             */
/* ------------------------------------------------------------------ */
typedef enum na_tstatus { NA_TS_OK = 0, NA_TS_ERROR, NA_TS_SKIPPED } na_tstatus_t;

typedef struct na_tensor_report {
    char *name;
    na_tstatus_t status;
    char *reason;          /* NULL when ok */
    na_dtype_t dtype;      /* decoded dtype */
    na_dtype_t stored;     /* stored dtype */
    na_endian_t byte_order;
    int ndim;
    uint64_t *shape;       /* ndim entries (one allocation with vshape's,
                            * freed with the entry; NULL when both are 0):
                            * a report holds 10^6 entries, NA_MAX_NDIM of
                            * each would be 1 KiB a tensor */
    uint64_t elements;
    int elements_overflow; /* the shape's product overflows 64 bits (an error
                            * entry): elements is not a count (text "-",
                            * JSON null) */
    int scanned;           /* res is valid */
    na_result_t res;
    size_t n_findings;
    na_finding_t *findings;
    int report_missing;    /* from na_tensor_t: JSON "missing", "unallocated_chunks" */
    int64_t unallocated_chunks;
    int vlen;              /* from na_tensor_t: JSON "variable_length" */
    uint64_t sequences;
    int vndim;
    uint64_t *vshape;      /* vndim entries, after shape's */
} na_tensor_report_t;

typedef struct na_file_report {
    char *path;            /* as given / found */
    const char *format;    /* "safetensors", "raw", "index", ...; static */
    int ok;                /* 0 when the file had an error */
    char *error;           /* one line, NULL when ok */
    size_t n_notes;
    char **notes;
    size_t n_tensors, cap_tensors;
    na_tensor_report_t *tensors;
} na_file_report_t;

typedef struct na_summary {
    uint64_t files, tensors, elements, nan, pos_inf, neg_inf, outliers, errors;
    uint64_t skipped; /* tensor entries of status skipped (not numeric) */
    int failed;    /* some finding violates the policy */
    int exit_code; /* set by the CLI before writing */
} na_summary_t;

typedef struct na_report {
    const char *device;    /* "cpu", "cuda:N", "cuda:N+cpu" (not owned) */
    /* Why the device differs from what --device asked (auto's CPU
     * fallback, small tensors left on the CPU); NULL when nothing to say.
     * JSON "device_note", present only when set. Not owned. */
    const char *device_note;
    double zscore;
    double mad;            /* --mad K (> 0: it replaced the z-score test) */
    size_t max_locations;
    uint32_t fail_mask;
    size_t n_files, cap_files;
    na_file_report_t *files;
    na_summary_t summary;
    /* Files a directory walk passed over as not data (config.json,
     * README): JSON top-level "skipped" [{path, reason}]. Not errors. */
    size_t n_skipped, cap_skipped;
    char **skipped_paths;
    char **skipped_reasons;
} na_report_t;

/* Building a report (all strings copied). NULL on out of memory. */
na_report_t *na_report_new(void);
void na_report_free(na_report_t *r);
na_file_report_t *na_report_add_file(na_report_t *r, const char *path, const char *format);
na_status_t na_file_report_set_error(na_file_report_t *f, const char *msg);
na_status_t na_file_report_add_note(na_file_report_t *f, const char *note);
/* Adds a tensor entry copying name/dtype/shape from t (t may be NULL for
 * entries with only a name); a scan result is moved in afterwards with
 * na_tensor_report_set_result (ownership of its arrays passes to the
 * report). The pointer is valid until the next add on f. */
na_tensor_report_t *na_file_report_add_tensor(na_file_report_t *f, const char *name,
                                              const na_tensor_t *t);
/* Whether reason already names tensor `name`: it starts with "NAME: ", as
 * the HDF5 reader's messages do ("/y: HDF5 filter 32000 ..."), where the
 * NumPy reader's do not ("object array ..."). Writers that put the name in
 * front of a reason do so only when this is 0, so that it stands once.
 * NULL reason or name: 0. */
int na_reason_names(const char *reason, const char *name);
/* Set an entry's status and reason (copied; reason may be NULL). */
na_status_t na_tensor_report_set_status(na_tensor_report_t *e, na_tstatus_t st,
                                        const char *reason);
/* Move a scan result into the entry (res's arrays now belong to the
 * report; *res is zeroed) and copy n findings. Sets scanned = 1. */
na_status_t na_tensor_report_set_result(na_tensor_report_t *e, na_result_t *res,
                                        const na_finding_t *findings, size_t n);
/* List a file a directory walk skipped as not data (strings copied). */
na_status_t na_report_add_skipped(na_report_t *r, const char *path, const char *reason);
/* Fills summary counts (not exit_code) from the entries. */
void na_report_summarize(na_report_t *r);
/* "N tensor(s)" of summary s, with " (K not numeric)" when K tensor
 * entries were skipped (README round 24: "3 tensors" for two datasets and
 * a string attribute), for the text, Markdown and github summaries; in
 * buf (64 bytes are enough), returned. */
const char *na_summary_tensors(const na_summary_t *s, char *buf, size_t cap);

/* JSON report (schema documented in docs/json-schema.md), one object,
 * newline-terminated. Returns NA_E_WRITE when the stream fails. */
na_status_t na_report_write_json(const na_report_t *r, FILE *out);

/* Text report for people. */
typedef struct na_text_opts {
    int color; /* ANSI colour */
    int quiet; /* only findings, errors and the summary */
} na_text_opts_t;
na_status_t na_report_write_text(const na_report_t *r, const na_text_opts_t *o, FILE *out);

/* CI report formats (issue 5). Each writes the whole report r (summary
 * and exit_code set) to out and returns NA_E_WRITE when the stream fails
 * (NA_E_NOMEM for SARIF's JSON build). Escaping rules and the shape of
 * each are in its file's header:
 *  - JUnit XML (lib/report_junit.c): a testsuite per file, a testcase per
 *    tensor, <failure> with the failing findings;
 *  - Markdown summary for $GITHUB_STEP_SUMMARY (lib/report_md.c);
 *  - SARIF 2.1.0 (lib/report_sarif.c);
 *  - GitHub Actions workflow commands, ::error/::warning per finding
 *    (lib/report_github.c). */
na_status_t na_report_write_junit(const na_report_t *r, FILE *out);
na_status_t na_report_write_markdown(const na_report_t *r, FILE *out);
na_status_t na_report_write_sarif(const na_report_t *r, FILE *out);
na_status_t na_report_write_github(const na_report_t *r, FILE *out);

/* Escape bytes for a terminal: control characters (C0, DEL, C1 as
 * UTF-8), backslash and invalid UTF-8 become \xHH / \n / \t / \\; valid
 * printable UTF-8 is kept. Writes at most cap-1 bytes plus NUL; returns
 * the length the full escape needs (like snprintf). */
size_t na_escape_text(const char *s, char *out, size_t cap);
/* 1 when the well-formed UTF-8 sequence at p (len bytes, na_utf8_seq_len)
 * is escaped all the same: a C1 control (U+0080..U+009F) or a line
 * separator / bidi format character or an invisible one (U+061C,
 * U+200B, U+200E, U+200F, U+FEFF, U+2028..U+202E, U+2066..U+2069), which could
 * reorder, break or hide what a reader sees. */
int na_escape_dangerous(const void *p, size_t len);
/* 1 when s holds a character na_escape_dangerous names (checked as valid
 * UTF-8 sequences; invalid bytes are not counted). */
int na_escape_has_dangerous(const char *s);
/* na_escape_text of s (NULL: "") into a buffer of its own (malloc'd, the
 * caller frees it); NULL on out of memory. */
char *na_escape_text_dup(const char *s);

/* Length in bytes (1..4) of the well-formed UTF-8 sequence at s, of which
 * n bytes are readable; 0 when the bytes there are not well-formed UTF-8
 * (stray continuation byte, overlong form, surrogate, above U+10FFFF, or
 * cut short by n). ASCII bytes, controls included, give 1. Rules: RFC 3629
 * section 4 / Unicode Table 3-7. */
size_t na_utf8_seq_len(const void *s, size_t n);
/* Terminal columns of s, escaped text (ASCII or valid printable UTF-8:
 * na_escape_text), for aligned tables: one per character, two for an East
 * Asian Wide or Fullwidth one (UAX #11; round 29b: a CJK tensor name
 * pushed its row 12 columns to the right). */
size_t na_text_columns(const char *s);

/* The whole of s as a finite double, decimal syntax only ([+-] digits
 * [. digits] [e [+-] digits]: no hex, no spaces, no inf/nan words),
 * converted by strtod ("1e-310" included: a subnormal, or 0 for a value
 * below the smallest one, as Python's float() gives, although strtod
 * reports ERANGE for both). 0, or -1 for an empty string, any other
 * character, a value beyond DBL_MAX. */
int na_parse_double(const char *s, double *v);

/* v as the shortest of %.15g, %.16g and %.17g that strtod reads back as
 * v, into buf (cap bytes, 32 is enough): 0.2 for the 0.2 a user typed,
 * where %.17g prints 0.20000000000000001, and still exact for a value of
 * the data (an F32's 0.24725301563739777). Returns buf. */
char *na_fmt_num(char *buf, size_t cap, double v);
/* A value of a tensor of dtype dt as the shortest decimal that reads back
 * as that value of the type: for the float types of 32 bits and fewer
 * (F32, F16, BF16, F8_E4M3/E5M2 and their FNUZ forms), the shortest %.Ng
 * (N <= 9) that rounds to v in that type (round to nearest even; F32
 * -1e-08, not its double -9.99999993922529e-09; F16 -0.3, not
 * -0.30004883), integers below 2^24 in full; otherwise na_fmt_num.
 * buf: cap bytes, 32 is enough. Returns buf. */
char *na_fmt_val(char *buf, size_t cap, double v, na_dtype_t dt);

#ifdef __cplusplus
}
#endif
#endif /* NANAUDIT_H */

/*
 * scan_kernels.h - internal interface between the scan driver
 * (scan_pass.c: windows, threads, merging, locations) and the per-block
 * kernels (scan.c: the hot loops, built with -O3 -fno-math-errno
 * -fno-trapping-math, see CMakeLists.txt). Not installed, not public.
 *
 * A block is NA_BLOCK_ELEMS consecutive elements (fewer at the end of a
 * window). Element i of a block whose data start at `blk` lies at
 * blk + i * stride + offset, exactly as in na_tensor_t.
 */
#ifndef NA_SCAN_KERNELS_H
#define NA_SCAN_KERNELS_H

#include "nanaudit.h"

/* 16 Ki elements: 64 KiB of F32, 32 KiB of F16/BF16, 128 KiB of F64, so a
 * block stays in L2 between the two passes over it (mean, then squared
 * deviations). Measured in bench/RESULTS.md. */
#ifndef NA_BLOCK_ELEMS
#define NA_BLOCK_ELEMS 16384u
#endif

/* How a dtype's blocks are processed. */
typedef enum na_kkind {
    NA_KK_F32 = 0, /* vectorised kernels on host-order contiguous data */
    NA_KK_F64,
    NA_KK_F16,
    NA_KK_BF16,
    NA_KK_LUT8,    /* 1-byte types: 256-entry table of value + class */
    NA_KK_GENERIC  /* everything else: na_decode1 per element */
} na_kkind_t;

typedef struct na_kctx {
    na_kkind_t kind;
    na_dtype_t dtype;
    na_endian_t order;
    size_t esize;   /* bytes of one element */
    size_t stride;  /* bytes between elements in the stream */
    size_t offset;  /* byte offset of an element inside its stride */
    int direct;     /* fast kinds: data usable in place (contiguous, host order) */
    int f16c;       /* F16: the CPU converts with F16C (runtime check) */
    /* Missing values (na_tensor_t.n_missing): na_k_decode gives elements
     * equal to one of them the class NA_K_CL_MISSING, which every kernel
     * of the decoded path leaves out; such tensors use that path only. */
    int n_missing;
    double missing[2];
    unsigned missing_exact; /* na_tensor_t.missing_exact (I64/U64) */
    uint64_t missing_int[2];
    double lut_val[256];
    unsigned char lut_cls[256];
} na_kctx_t;

/* na_scan_tensor of a tensor with t->constant set: one element read, the
 * statistics, locations and o->extra counts of `elements` copies of it
 * (scan_const.c). */
na_status_t na_scan_constant(const na_tensor_t *t, const na_scan_opts_t *o, na_result_t *r,
                             na_err_t *err);

/* Class of a finite element equal to a missing value: after every
 * na_class_t, so "cls < NA_CL_NAN" (finite) excludes it. */
#define NA_K_CL_MISSING 6

/* Per-thread scratch, NA_BLOCK_ELEMS entries each. */
typedef struct na_kscratch {
    unsigned char *raw; /* gathered / byte-swapped elements, 8 bytes each */
    double *val;        /* decoded values */
    unsigned char *cls; /* na_class_t of each value */
} na_kscratch_t;

/* F16 widened with the F16C instructions (x86-64 with GCC; checked at run
 * time, k->f16c). NA_NO_CLONES builds the portable kernels only. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(NA_NO_CLONES)
#define NA_F16C 1
#endif

/* Data of a fast-kind block (F32/F64/F16/BF16) in host order and
 * contiguous: blk itself when k->direct, otherwise gathered into s->raw
 * (bytes reversed when the tensor's byte order is not the host's). */
const unsigned char *na_k_host_block(const na_kctx_t *k, const unsigned char *blk, size_t n,
                                     const na_kscratch_t *s);

/* Fill k for tensor t. NA_E_UNSUPPORTED (err: "NAME: unsupported dtype X")
 * for dtypes the engine cannot decode; NA_E_INTERNAL for a layout whose
 * element does not fit in its stride. */
na_status_t na_k_setup(na_kctx_t *k, const na_tensor_t *t, na_err_t *err);
/* Empty result for a scan with z-score K: zero counts, NaN statistics,
 * no locations, first_pos_inf/first_neg_inf = UINT64_MAX. Shared by the
 * CPU (scan_pass.c) and CUDA (gpu/cuda_host.c) drivers. */
void na_k_result_reset(na_result_t *r, double K);
/* NaN and +-Inf locations of block [e, e+n) (b: its pass-1 counts) added
 * to r, ascending, at most cap per list; also first_pos_inf/first_neg_inf.
 * Shared by the CPU and CUDA drivers so their locations cannot differ. */
void na_k_nan_inf_locations(const na_kctx_t *k, const unsigned char *blk, size_t n,
                            const na_kscratch_t *sc, uint64_t e, const na_stats_t *b,
                            size_t cap, na_result_t *r);


/* Pass 1 over one block of n <= NA_BLOCK_ELEMS elements: counts and
 * two-pass statistics (block mean, then sum of squared deviations). */
void na_k_pass1(const na_kctx_t *k, const unsigned char *blk, size_t n,
                const na_kscratch_t *s, na_stats_t *out);

/* Outlier test of pass 2: |x - mean| > thr, and the same test as bounds:
 * a finite x is an outlier iff x >= hi or x <= lo (dhi/dlo for values in
 * double, fhi/flo for values that are binary32). +-Inf bounds mean that no
 * finite value qualifies on that side. */
typedef struct na_kthr {
    double mean, thr;
    double dlo, dhi;
    float flo, fhi;
} na_kthr_t;

void na_k_thresholds(na_kthr_t *th, double mean, double thr);

/* Pass 2 over one block: number of finite x with |x - mean| > thr. */
uint64_t na_k_pass2(const na_kctx_t *k, const unsigned char *blk, size_t n,
                    const na_kthr_t *th, const na_kscratch_t *s);

/* The elements of one block that na_k_pass2 counts: their offsets in the
 * block (ascending) and values, at most cap of them. Returns how many
 * there are, or cap + 1 when there are more than cap. */
uint32_t na_k_find(const na_kctx_t *k, const unsigned char *blk, size_t n,
                   const na_kthr_t *th, const na_kscratch_t *s, uint32_t cap, uint32_t *idx,
                   double *val);

/* Decode one block into s->val / s->cls (the values and classes that the
 * kernels use, bit for bit), for the serial location scans. */
void na_k_decode(const na_kctx_t *k, const unsigned char *blk, size_t n,
                 const na_kscratch_t *s);

/* Interval counts of na_extra_t over one block (scan_extra.c): counts[j]
 * = finite elements in ex->iv[j]. Uses the scratch like na_k_decode. */
void na_k_extra(const na_kctx_t *k, const unsigned char *blk, size_t n, const na_kscratch_t *s,
                const na_extra_t *ex, uint64_t *counts);

/* Fill runs (scan_fill.c): blocks of a window that the source's na_fill_fn
 * says are copies of one element, and the results of one such block. */
typedef struct na_kfill {
    unsigned char *flag;  /* per block of the window: 1 = wholly in a fill run */
    unsigned char *tmpl;  /* B copies of the fill element; NULL until a run */
    size_t B;
    na_stats_t st;        /* pass 1 of the B copies */
    uint64_t ext[NA_MAX_INTERVALS]; /* their interval counts */
    int have_p2;
    uint64_t p2;          /* their pass-2 count (thresholds fixed per tensor) */
} na_kfill_t;

void na_kfill_free(na_kfill_t *f); /* the arrays; f is zeroed */
/* Set f->flag[j] for the blocks j of window [e0, e0+n) (blocks of B
 * elements) that lie wholly in the source's fill runs; *nfill = their
 * number. Builds the template on the first run, with k, scratch sc and
 * interval list ex (may be NULL). f->flag holds (n+B-1)/B entries.
 * Errors: the source's, NA_E_NOMEM, NA_E_INTERNAL for a run outside the
 * range or of a different element. */
na_status_t na_kfill_window(na_kfill_t *f, const na_tensor_t *t, const na_kctx_t *k,
                            const na_kscratch_t *sc, const na_extra_t *ex, size_t B, uint64_t e0,
                            size_t n, long *nfill, na_err_t *err);
/* Pass 1 results of a flagged block of bn elements (ext: NULL or
 * NA_MAX_INTERVALS counts), copied for a whole block, computed from the
 * template for a partial one. */
void na_kfill_pass1(const na_kfill_t *f, const na_kctx_t *k, const na_kscratch_t *sc,
                    const na_extra_t *ex, size_t bn, na_stats_t *st, uint64_t *ext);
/* Pass 2 count of a flagged block of bn elements under th. */
uint64_t na_kfill_pass2(na_kfill_t *f, const na_kctx_t *k, const na_kthr_t *th,
                        const na_kscratch_t *sc, size_t bn);

/* scan --mad (scan_mad.c): after pass 1 (r->st known), the exact median
 * and MAD of the finite values, the MeanAD fallback, and the count and
 * first o->max_locations locations of the values na_mad_is_outlier flags
 * with K = o->mad; fills r->method/median/mad/meanad. Reads the tensor
 * again (about 10 passes) in pass 1's geometry: windows of wel elements,
 * blocks of B, `threads` threads with one scratch each in scr. Errors:
 * the source's, NA_E_NOMEM. */
na_status_t na_k_scan_mad(const na_tensor_t *t, const na_scan_opts_t *o, const na_kctx_t *k,
                          const na_kscratch_t *scr, int threads, size_t B, size_t wel,
                          na_result_t *r, na_err_t *err);
/* Mark r as a --mad result with threshold K (> 0; otherwise no-op). */
void na_k_mad_reset(na_result_t *r, double K);

/* The outlier predicate every path uses. */
static inline int na_k_is_outlier(double x, int cls, double mean, double thr)
{
    double d = x - mean;
    d = d < 0 ? -d : d;
    return cls < NA_CL_NAN && d > thr;
}

#endif /* NA_SCAN_KERNELS_H */

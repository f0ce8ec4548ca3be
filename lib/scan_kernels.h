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
    double lut_val[256];
    unsigned char lut_cls[256];
} na_kctx_t;

/* Per-thread scratch, NA_BLOCK_ELEMS entries each. */
typedef struct na_kscratch {
    unsigned char *raw; /* gathered / byte-swapped elements, 8 bytes each */
    double *val;        /* decoded values */
    unsigned char *cls; /* na_class_t of each value */
} na_kscratch_t;

/* Fill k for tensor t. NA_E_UNSUPPORTED (err: "NAME: unsupported dtype X")
 * for dtypes the engine cannot decode; NA_E_INTERNAL for a layout whose
 * element does not fit in its stride. */
na_status_t na_k_setup(na_kctx_t *k, const na_tensor_t *t, na_err_t *err);

/* Pass 1 over one block of n <= NA_BLOCK_ELEMS elements: counts and
 * two-pass statistics (block mean, then sum of squared deviations). */
void na_k_pass1(const na_kctx_t *k, const unsigned char *blk, size_t n,
                const na_kscratch_t *s, na_stats_t *out);

/* Pass 2 over one block: number of finite x with |x - mean| > thr. */
uint64_t na_k_pass2(const na_kctx_t *k, const unsigned char *blk, size_t n,
                    double mean, double thr, const na_kscratch_t *s);

/* Decode one block into s->val / s->cls (the values and classes that the
 * kernels use, bit for bit), for the serial location scans. */
void na_k_decode(const na_kctx_t *k, const unsigned char *blk, size_t n,
                 const na_kscratch_t *s);

/* The outlier predicate every path uses. */
static inline int na_k_is_outlier(double x, int cls, double mean, double thr)
{
    double d = x - mean;
    d = d < 0 ? -d : d;
    return cls < NA_CL_NAN && d > thr;
}

#endif /* NA_SCAN_KERNELS_H */

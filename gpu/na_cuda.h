/*
 * na_cuda.h - the CUDA scan backend (gpu/): opening a device as an
 * na_backend_t, and the kernel launchers that cuda_host.c (C11, host
 * side) calls in kernels.cu (CUDA C++17, device side); clean's write
 * pass on the GPU (cuda_clean.c, clean_kernels.cu).
 *
 * Built only when CMake finds nvcc (NANAUDIT_CUDA=AUTO|ON); otherwise
 * cuda_none.c provides na_cuda_open returning "built without CUDA".
 * The binary links the CUDA runtime statically; the runtime loads the
 * driver (libcuda.so.1) when first called, so a machine without a driver
 * runs the CPU backend and `--device cuda` fails with one line.
 */
#ifndef NA_CUDA_H
#define NA_CUDA_H

#include "clean.h" /* na_clean_*: the GPU write pass of clean */
#include "nanaudit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this binary was built with the CUDA backend. */
int na_cuda_built(void);

/* Open CUDA device `ordinal` (0-based; -1 = device 0) as a scan backend
 * (b->name "cuda:N"). Errors, each with one line in err, status
 * NA_E_INTERNAL (exit 4):
 *   "CUDA: no driver (libcuda.so.1 could not be loaded); ...",
 *   "CUDA: driver older than the runtime (driver supports CUDA X.Y,
 *     nanaudit was built with X.Y)" (cudaErrorInsufficientDriver),
 *   "CUDA: no CUDA device", "CUDA: device N does not exist (M devices)",
 *   "CUDA: device N has compute capability X.Y; this build has GPU code
 *     for 8.0 and newer", an allocation failure,
 *   "CUDA: this nanaudit was built without CUDA support ..." (cuda_none.c).
 * Device properties come from cudaDeviceGetAttribute (CUDA 13 dropped
 * several cudaDeviceProp clock fields). */
na_status_t na_cuda_open(int ordinal, na_backend_t *b, na_err_t *err);

/* The CUDA device (0-based) of a backend na_cuda_open filled. */
int na_cuda_ordinal(const na_backend_t *b);

/* clean's write pass on the GPU (gpu/cuda_clean.c): na_clean_emit's work
 * for tensor t on the device of backend b (na_cuda_open), with ct fitted
 * by na_clean_fit on the CPU: the same bytes to sink, in order, the same
 * counts, and ct->after within the verification's tolerance (per-block
 * statistics merged in block order; sums in another order than the
 * CPU's 8 lanes). Before anything reaches the sink it returns
 * NA_E_UNSUPPORTED (err: why, one line) for what stays on the CPU:
 * missing-value markers (t->n_missing > 0), unwritten chunks
 * (t->src.fill), a dtype outside F64 F32 F16 BF16 and the integers,
 * rows so wide that the GPU's smallest window (32 rows) exceeds
 * o->window_bytes (a source may refuse a longer read);
 * NA_E_NOMEM / NA_E_INTERNAL for device memory and CUDA errors (also
 * later, after bytes went to the sink); the source's and the sink's
 * errors; NA_E_USAGE as na_clean_emit (na_clean_emit_finish). The
 * build without CUDA (cuda_none.c) returns NA_E_INTERNAL. */
na_status_t na_cuda_clean_emit(na_backend_t *b, const na_tensor_t *t, const na_clean_opts_t *o,
                               na_clean_tensor_t *ct, na_clean_sink_fn sink, void *ud,
                               na_err_t *err);

/* ---- kernel launchers (kernels.cu), all asynchronous on `stream` ---- */

/* Element decoding on the GPU, chosen by cuda_host.c per tensor. */
typedef enum na_gkind {
    NA_GK_F32 = 0, NA_GK_F64, NA_GK_F16, NA_GK_BF16,
    NA_GK_LUT8,   /* 1-byte types: value/class table built by na_decode1 */
    NA_GK_UINT,   /* U16 U32 U64 */
    NA_GK_SINT,   /* I16 I32 I64 */
    NA_GK_F80,
    NA_GK_COUNT
} na_gkind_t;

typedef struct na_gdesc {
    int kind;          /* na_gkind_t */
    unsigned esize;    /* bytes of one element (10 for F80) */
    unsigned stride;   /* bytes between elements in the stream */
    unsigned offset;   /* byte offset of an element inside its stride */
    int big;           /* stored big endian */
    const double *lut_val;        /* device pointers, NA_GK_LUT8 only */
    const unsigned char *lut_cls;
} na_gdesc_t;

/* Pass 1: for each block j of `block` elements of the n-element window at
 * device pointer `data` (the last block has n - j*block), write the
 * block's two-pass statistics to out[j] (device memory), as the CPU's
 * na_k_pass1 computes them. Returns a cudaError_t as int (0 = success). */
int na_gpu_pass1(const na_gdesc_t *d, const unsigned char *data, size_t n, size_t block,
                 na_stats_t *out, void *stream);

/* Pass 2: out[j] = number of finite x in block j with |x - mean| > thr. */
int na_gpu_pass2(const na_gdesc_t *d, const unsigned char *data, size_t n, size_t block,
                 double mean, double thr, unsigned long long *out, void *stream);

/* Copy n bytes with `threads` OpenMP threads (cuda_host.c: one memcpy
 * out of a page-cache mapping runs at a fraction of the PCIe bandwidth). */
void na_cuda_copy(unsigned char *dst, const unsigned char *src, size_t n, int threads);

/* clean's write pass on one window of rows (clean_kernels.cu), launched
 * asynchronously on `stream`; all pointers are device memory. */
typedef struct na_gclean {
    na_gdesc_t d;                   /* the input's layout (kind NA_GK_LUT8/F80 not used) */
    const unsigned char *in;        /* the window's elements, rows * width */
    const unsigned char *rs;        /* its 2-bit row states (clean.h), from its first
                                     * row (a multiple of 32), 8 bytes of padding */
    const unsigned long long *opos; /* per block: kept rows of the window before it */
    unsigned char *out;             /* the kept rows' output values */
    unsigned long long rows, width; /* rows in the window, elements per row */
    unsigned long long brows;       /* rows per block: a multiple of 32, <= 16384 */
    na_clean_opts_t o;
    const na_clean_feat_t *feat;    /* ct->feat */
    int one_feat;                   /* ct->nfeat == 1: feat[0] for every column */
    int out_dtype;                  /* na_dtype_t */
    int int_out;                    /* it is an integer dtype (no NaN, no Inf) */
    unsigned osize;                 /* its bytes */
    na_stats_t *bst;                /* per block: statistics of the values read back */
    na_clean_counts_t *bcnt;        /* per block: na_clean_counts_t */
} na_gclean_t;

/* Launch the write pass of a->rows rows: ceil(rows / brows) blocks.
 * Returns a cudaError_t as int (0 = success). */
int na_gpu_clean(const na_gclean_t *a, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* NA_CUDA_H */

/*
 * na_cuda.h - the CUDA scan backend (gpu/): opening a device as an
 * na_backend_t, and the kernel launchers that cuda_host.c (C11, host
 * side) calls in kernels.cu (CUDA C++17, device side).
 *
 * Built only when CMake finds nvcc (NANAUDIT_CUDA=AUTO|ON); otherwise
 * cuda_none.c provides na_cuda_open returning "built without CUDA".
 * The binary links the CUDA runtime statically; the runtime loads the
 * driver (libcuda.so.1) when first called, so a machine without a driver
 * runs the CPU backend and `--device cuda` fails with one line.
 */
#ifndef NA_CUDA_H
#define NA_CUDA_H

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

#ifdef __cplusplus
}
#endif
#endif /* NA_CUDA_H */

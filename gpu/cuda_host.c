/*
 * cuda_host.c - the host side of the CUDA scan backend: device checks,
 * pinned staging buffers, streams, and the two scan passes that stream a
 * tensor through the GPU window by window.
 *
 * Pipeline: a tensor is read in windows (at most na_scan_opts_t.window_bytes
 * and NA_GPU_WINDOW, a whole number of the CPU's NA_BLOCK_ELEMS blocks). Each window is
 * copied (by all threads) from the reader's buffer into one of NA_GPU_NBUF
 * pinned host buffers, sent with cudaMemcpyAsync on that buffer's own
 * stream, scanned by the kernels of kernels.cu, and its per-block results
 * come back on the same stream. While the GPU works on window w, the host
 * copies window w+1 into the next buffer, so copies overlap kernels and
 * transfers; memory is NA_GPU_NBUF windows on each side whatever the file
 * size, so files larger than GPU memory work.
 *
 * Results: windows are finished strictly in order, and each window's block
 * statistics are merged in block order with na_stats_merge (the CPU's
 * merge, lib/stats.c). NaN/Inf and outlier locations are found on the host
 * in the pinned copy of the few blocks that hold them, with the CPU's own
 * decoder (na_k_decode), so they are the CPU's locations by construction.
 * Pass 2 runs under the CPU's condition and reads only windows whose
 * pass-1 range crosses mean +- K*std.
 */
#include "na_cuda.h"
#include "scan_kernels.h"

#include <cuda_runtime_api.h> /* cudaMalloc, cudaMemcpyAsync, streams */
#include <math.h>             /* INFINITY, NAN */
#include <omp.h>              /* omp_get_max_threads */
#include <stdio.h>            /* snprintf */
#include <stdlib.h>           /* calloc, malloc, free */
#include <string.h>           /* memcpy, memset */

#define NA_GPU_NBUF 4 /* windows in flight: host copy, transfer + kernels, results */
/* GPU windows of at most 16 MiB (a whole number of blocks, so the blocks
 * are the CPU's): filling and draining the pipeline costs about two
 * windows per tensor and per pass, which 64 MiB windows made 7 % of a
 * 2 GiB tensor's time on an H200 (tests/gpu/README.md). */
#define NA_GPU_WINDOW ((size_t)16 << 20)

typedef struct gbuf {
    unsigned char *host, *dev;       /* window bytes: pinned / device */
    na_stats_t *hst, *dst;           /* per-block pass-1 results */
    unsigned long long *hcnt, *dcnt; /* per-block pass-2 counts */
    cudaStream_t stream;
    uint64_t e0;                     /* first element of the window in flight */
    size_t n;                        /* its element count; 0 = idle */
} gbuf_t;

typedef struct gctx {
    int dev;
    char name[24];                   /* "cuda:N" */
    size_t cap_bytes, cap_blocks;
    gbuf_t buf[NA_GPU_NBUF];
    double *lut_val;                 /* device copy of the 1-byte table */
    unsigned char *lut_cls;
} gctx_t;

/* One tensor's scan state. */
typedef struct gscan {
    gctx_t *g;
    const na_tensor_t *t;
    const na_scan_opts_t *o;
    na_result_t *r;
    na_kctx_t k;
    na_gdesc_t d;
    size_t B, wel;
    int threads;
    na_kscratch_t scr;
    double *wmin, *wmax;             /* finite range of each window (pass 2 skip) */
    double mean, thr;
} gscan_t;

int na_cuda_built(void) { return 1; }

int na_cuda_ordinal(const na_backend_t *b)
{
    return ((const gctx_t *)b->self)->dev;
}

static na_status_t cuda_fail(na_err_t *err, const char *what, cudaError_t e, const char *tname)
{
    return na_err_set(err, NA_E_INTERNAL, "%s: CUDA error in %s: %s", tname, what,
                      cudaGetErrorString(e));
}

static void free_buffers(gctx_t *g)
{
    for (int i = 0; i < NA_GPU_NBUF; i++) {
        gbuf_t *b = &g->buf[i];
        cudaFreeHost(b->host);
        cudaFreeHost(b->hst);
        cudaFreeHost(b->hcnt);
        cudaFree(b->dev);
        cudaFree(b->dst);
        cudaFree(b->dcnt);
        b->host = b->dev = NULL;
        b->hst = b->dst = NULL;
        b->hcnt = b->dcnt = NULL;
    }
    g->cap_bytes = g->cap_blocks = 0;
}

/* Buffers for windows of `bytes` bytes and `blocks` blocks; kept across
 * tensors and grown when a tensor needs more. */
static na_status_t ensure_buffers(gctx_t *g, size_t bytes, size_t blocks, na_err_t *err)
{
    if (bytes <= g->cap_bytes && blocks <= g->cap_blocks)
        return NA_OK;
    free_buffers(g);
    for (int i = 0; i < NA_GPU_NBUF; i++) {
        gbuf_t *b = &g->buf[i];
        cudaError_t e = cudaHostAlloc((void **)&b->host, bytes, cudaHostAllocDefault);
        if (e == cudaSuccess)
            e = cudaHostAlloc((void **)&b->hst, blocks * sizeof(na_stats_t), cudaHostAllocDefault);
        if (e == cudaSuccess)
            e = cudaHostAlloc((void **)&b->hcnt, blocks * sizeof(unsigned long long),
                              cudaHostAllocDefault);
        if (e == cudaSuccess) /* + 16: the kernels load whole words at a block's end */
            e = cudaMalloc((void **)&b->dev, bytes + 16);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&b->dst, blocks * sizeof(na_stats_t));
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&b->dcnt, blocks * sizeof(unsigned long long));
        if (e != cudaSuccess) {
            free_buffers(g);
            return na_err_set(err, NA_E_NOMEM, "CUDA: cannot allocate %zu-byte window "
                              "buffers: %s", bytes, cudaGetErrorString(e));
        }
    }
    g->cap_bytes = bytes;
    g->cap_blocks = blocks;
    return NA_OK;
}

/* Copy n bytes with all threads: one memcpy out of a page-cache mapping
 * (page faults included) runs at a fraction of the PCIe bandwidth. */
static void par_copy(unsigned char *dst, const unsigned char *src, size_t n, int threads)
{
    const size_t chunk = 1u << 20;
    long nc = (long)((n + chunk - 1) / chunk);
    int nt = threads < nc ? threads : (int)nc;
    if (nt <= 1) {
        memcpy(dst, src, n);
        return;
    }
#pragma omp parallel for num_threads(nt) schedule(static)
    for (long c = 0; c < nc; c++) {
        size_t off = (size_t)c * chunk, len = n - off < chunk ? n - off : chunk;
        memcpy(dst + off, src + off, len);
    }
}

void na_cuda_copy(unsigned char *dst, const unsigned char *src, size_t n, int threads)
{
    par_copy(dst, src, n, threads);
}

static na_status_t read_window(gscan_t *s, uint64_t e0, size_t n, gbuf_t *b, na_err_t *err)
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
    par_copy(b->host, p, n * t->elem_stride, s->threads);
    return NA_OK;
}

/* Locations of NaN/Inf in block [e, e+n) of the pinned window copy, with
 * the CPU decoder; only for blocks whose counts show something wanted
 * (the rule of scan_pass.c's pass1_locations). */
static void nan_inf_locations(gscan_t *s, const unsigned char *blk, size_t n, uint64_t e,
                              const na_stats_t *b)
{
    na_k_nan_inf_locations(&s->k, blk, n, &s->scr, e, b, s->o->max_locations, s->r);
}

/* Wait for the window in b and fold its results into the tensor's. */
static na_status_t finish(gscan_t *s, gbuf_t *b, int pass, na_err_t *err)
{
    if (b->n == 0)
        return NA_OK;
    cudaError_t e = cudaStreamSynchronize(b->stream);
    if (e != cudaSuccess) {
        b->n = 0;
        return cuda_fail(err, pass == 1 ? "pass 1" : "pass 2", e, s->t->name);
    }
    size_t B = s->B, stride = s->t->elem_stride, nb = (b->n + B - 1) / B;
    uint64_t w = b->e0 / s->wel;
    na_result_t *r = s->r;
    for (size_t j = 0; j < nb; j++) {
        size_t off = j * B, bn = b->n - off < B ? b->n - off : B;
        const unsigned char *blk = b->host + off * stride;
        if (pass == 1) {
            const na_stats_t *bs = &b->hst[j];
            na_stats_merge(&r->st, bs);
            if (bs->finite && bs->min < s->wmin[w])
                s->wmin[w] = bs->min;
            if (bs->finite && bs->max > s->wmax[w])
                s->wmax[w] = bs->max;
            nan_inf_locations(s, blk, bn, b->e0 + off, bs);
            continue;
        }
        r->outliers += b->hcnt[j];
        if (!b->hcnt[j] || r->n_out_locs >= s->o->max_locations)
            continue;
        na_k_decode(&s->k, blk, bn, &s->scr);
        for (size_t i = 0; i < bn && r->n_out_locs < s->o->max_locations; i++)
            if (na_k_is_outlier(s->scr.val[i], s->scr.cls[i], s->mean, s->thr))
                r->out_locs[r->n_out_locs++] = b->e0 + off + i;
    }
    if (pass == 1 && s->o->progress)
        s->o->progress(s->o->progress_ud, (uint64_t)b->n * stride);
    b->n = 0;
    return NA_OK;
}

/* Can window w hold an outlier? Its finite range against the predicate,
 * which is monotone on each side of the mean. */
static int window_may_have_outliers(const gscan_t *s, uint64_t w)
{
    if (s->wmin[w] > s->wmax[w])
        return 0;
    return na_k_is_outlier(s->wmin[w], NA_CL_NORMAL, s->mean, s->thr) ||
           na_k_is_outlier(s->wmax[w], NA_CL_NORMAL, s->mean, s->thr);
}

/* Queue window [e0, e0+n) of buffer b: transfer, kernel, results back. */
static cudaError_t launch(gscan_t *s, gbuf_t *b, int pass, size_t n)
{
    size_t nb = (n + s->B - 1) / s->B;
    cudaError_t e = cudaMemcpyAsync(b->dev, b->host, n * s->t->elem_stride,
                                    cudaMemcpyHostToDevice, b->stream);
    if (e != cudaSuccess)
        return e;
    if (pass == 1) {
        e = (cudaError_t)na_gpu_pass1(&s->d, b->dev, n, s->B, b->dst, b->stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(b->hst, b->dst, nb * sizeof(na_stats_t),
                                cudaMemcpyDeviceToHost, b->stream);
        return e;
    }
    e = (cudaError_t)na_gpu_pass2(&s->d, b->dev, n, s->B, s->mean, s->thr, b->dcnt, b->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(b->hcnt, b->dcnt, nb * sizeof(unsigned long long),
                            cudaMemcpyDeviceToHost, b->stream);
    return e;
}

/* One pass over the tensor's windows through the NA_GPU_NBUF pipeline. */
static na_status_t run_pass(gscan_t *s, int pass, na_err_t *err)
{
    gctx_t *g = s->g;
    const na_tensor_t *t = s->t;
    unsigned slot = 0;
    na_status_t st = NA_OK;
    for (uint64_t e0 = 0; st == NA_OK && e0 < t->elements; e0 += s->wel) {
        size_t n = (size_t)(t->elements - e0 < s->wel ? t->elements - e0 : s->wel);
        if (pass == 2 && !window_may_have_outliers(s, e0 / s->wel))
            continue; /* not read at all, as on the CPU */
        gbuf_t *b = &g->buf[slot];
        slot = (slot + 1) % NA_GPU_NBUF;
        st = finish(s, b, pass, err);
        if (st == NA_OK)
            st = read_window(s, e0, n, b, err);
        if (st != NA_OK)
            break;
        cudaError_t e = launch(s, b, pass, n);
        if (e != cudaSuccess)
            st = cuda_fail(err, pass == 1 ? "pass 1" : "pass 2", e, t->name);
        b->e0 = e0;
        b->n = n;
    }
    /* Finish what is in flight, oldest first (slot order is window order). */
    for (unsigned i = 0; i < NA_GPU_NBUF; i++) {
        gbuf_t *b = &g->buf[(slot + i) % NA_GPU_NBUF];
        if (st == NA_OK) {
            st = finish(s, b, pass, err);
        } else {
            cudaStreamSynchronize(b->stream);
            b->n = 0;
        }
    }
    return st;
}

/* GPU decoding kind for the tensor (na_k_setup has accepted its dtype). */
static na_status_t describe(gscan_t *s, na_err_t *err)
{
    const na_tensor_t *t = s->t;
    na_gdesc_t *d = &s->d;
    memset(d, 0, sizeof *d);
    d->esize = (unsigned)s->k.esize;
    d->stride = t->elem_stride;
    d->offset = t->elem_offset;
    d->big = s->k.esize > 1 && t->byte_order == NA_BIG;
    switch (t->dtype) {
    case NA_DT_F32: d->kind = NA_GK_F32; break;
    case NA_DT_F64: d->kind = NA_GK_F64; break;
    case NA_DT_F16: d->kind = NA_GK_F16; break;
    case NA_DT_BF16: d->kind = NA_GK_BF16; break;
    case NA_DT_U16: case NA_DT_U32: case NA_DT_U64: d->kind = NA_GK_UINT; break;
    case NA_DT_I16: case NA_DT_I32: case NA_DT_I64: d->kind = NA_GK_SINT; break;
    case NA_DT_F80: d->kind = NA_GK_F80; break;
    default: d->kind = NA_GK_LUT8; break; /* every other decodable dtype is 1 byte */
    }
    if (d->kind != NA_GK_LUT8)
        return NA_OK;
    gctx_t *g = s->g;
    cudaError_t e = cudaMemcpy(g->lut_val, s->k.lut_val, sizeof s->k.lut_val,
                               cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(g->lut_cls, s->k.lut_cls, sizeof s->k.lut_cls, cudaMemcpyHostToDevice);
    /* A copy from pageable memory may still be on its way to the device
     * when cudaMemcpy returns, and the windows' streams are non-blocking:
     * they would not wait for it (CUDA Runtime API, "API synchronization
     * behavior"). */
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e != cudaSuccess)
        return cuda_fail(err, "table upload", e, t->name);
    d->lut_val = g->lut_val;
    d->lut_cls = g->lut_cls;
    return NA_OK;
}


/* Geometry, scratch and result arrays: as scan_pass.c's scan_alloc. */
static na_status_t gscan_alloc(gscan_t *s, na_err_t *err)
{
    const na_tensor_t *t = s->t;
    size_t wel = s->o->window_bytes / t->elem_stride;
    if (wel == 0)
        wel = 1;
    s->B = wel < NA_BLOCK_ELEMS ? wel : NA_BLOCK_ELEMS;
    s->wel = wel - wel % s->B;
    size_t gw = NA_GPU_WINDOW / t->elem_stride;
    gw -= gw % s->B;
    if (gw >= s->B && gw < s->wel)
        s->wel = gw;
    uint64_t nwin = (t->elements + s->wel - 1) / s->wel;
    s->scr.raw = malloc(s->B * 8);
    s->scr.val = malloc(s->B * sizeof(double));
    s->scr.cls = malloc(s->B);
    s->wmin = malloc(nwin * sizeof(double));
    s->wmax = malloc(nwin * sizeof(double));
    na_result_t *r = s->r;
    size_t nl = s->o->max_locations;
    if (nl > 0) {
        r->nan_locs = malloc(nl * sizeof(uint64_t));
        r->inf_locs = malloc(nl * sizeof(uint64_t));
        r->out_locs = malloc(nl * sizeof(uint64_t));
    }
    if (!s->scr.raw || !s->scr.val || !s->scr.cls || !s->wmin || !s->wmax ||
        (nl && (!r->nan_locs || !r->inf_locs || !r->out_locs)))
        return na_err_set(err, NA_E_NOMEM, "%s: out of memory for scan buffers", t->name);
    for (uint64_t w = 0; w < nwin; w++) {
        s->wmin[w] = INFINITY;
        s->wmax[w] = -INFINITY;
    }
    return ensure_buffers(s->g, s->wel * t->elem_stride, s->wel / s->B, err);
}

static na_status_t cuda_scan(void *self, const na_tensor_t *t, const na_scan_opts_t *o,
                             na_result_t *r, na_err_t *err)
{
    na_scan_opts_t defaults;
    if (!o) {
        na_scan_opts_init(&defaults);
        o = &defaults;
    }
    na_k_result_reset(r, o->zscore);
    gscan_t s;
    memset(&s, 0, sizeof s);
    s.g = self;
    s.t = t;
    s.o = o;
    s.r = r;
    s.threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    /* The kernels do not leave missing values out, a constant tensor (no
     * stored data) is one element's work, and the CPU does not read fill
     * runs (lib/scan_fill.c): all three are the CPU's. */
    if (t->n_missing > 0 || t->constant || t->src.fill != NULL)
        return na_scan_tensor(t, o, r, err);
    na_status_t st = na_k_setup(&s.k, t, err); /* the CPU's checks and messages */
    if (st != NA_OK)
        return st;
    if (t->elements == 0)
        return NA_OK; /* as the CPU: counts 0, statistics NaN (null) */
    if (t->elements > UINT64_MAX / t->elem_stride)
        return na_err_set(err, NA_E_FORMAT, "%s: %llu elements overflow the byte count",
                          t->name, (unsigned long long)t->elements);
    cudaError_t e = cudaSetDevice(s.g->dev);
    if (e != cudaSuccess)
        st = cuda_fail(err, "cudaSetDevice", e, t->name);
    if (st == NA_OK)
        st = gscan_alloc(&s, err);
    if (st == NA_OK)
        st = describe(&s, err);
    if (st == NA_OK)
        st = run_pass(&s, 1, err);
    if (st == NA_OK) {
        r->std = na_stats_std(&r->st);
        s.mean = r->st.mean;
        s.thr = o->zscore * r->std;
        /* The CPU's condition for pass 2 (scan_pass.c). */
        if (o->zscore > 0 && r->st.finite > 0 && r->std > 0 &&
            (na_k_is_outlier(r->st.min, NA_CL_NORMAL, s.mean, s.thr) ||
             na_k_is_outlier(r->st.max, NA_CL_NORMAL, s.mean, s.thr))) {
            r->pass2 = 1;
            st = run_pass(&s, 2, err);
        }
    }
    free(s.scr.raw);
    free(s.scr.val);
    free(s.scr.cls);
    free(s.wmin);
    free(s.wmax);
    if (st != NA_OK) {
        na_result_free(r);
        na_k_result_reset(r, o->zscore);
    }
    return st;
}

static void cuda_close(void *self)
{
    gctx_t *g = self;
    if (!g)
        return;
    cudaSetDevice(g->dev);
    free_buffers(g);
    for (int i = 0; i < NA_GPU_NBUF; i++)
        if (g->buf[i].stream)
            cudaStreamDestroy(g->buf[i].stream);
    cudaFree(g->lut_val);
    cudaFree(g->lut_cls);
    free(g);
}

/* Why no device can be used, as one line (DESIGN.md: exit 4). The static
 * runtime loads libcuda.so.1 at its first call: without it the driver
 * version reads 0; a driver older than the runtime gives
 * cudaErrorInsufficientDriver. */
static na_status_t probe(int ordinal, na_err_t *err)
{
    int drv = 0, rt = 0, count = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    cudaError_t e = cudaGetDeviceCount(&count);
    if (drv == 0)
        return na_err_set(err, NA_E_INTERNAL, "CUDA: no driver (libcuda.so.1 could not be "
                          "loaded); no GPU can be used on this machine");
    if (e == cudaErrorInsufficientDriver)
        return na_err_set(err, NA_E_INTERNAL, "CUDA: driver older than the runtime (driver "
                          "supports CUDA %d.%d, nanaudit was built with %d.%d)", drv / 1000,
                          drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
    if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0))
        return na_err_set(err, NA_E_INTERNAL, "CUDA: no CUDA device");
    if (e != cudaSuccess)
        return na_err_set(err, NA_E_INTERNAL, "CUDA: %s", cudaGetErrorString(e));
    if (ordinal >= count)
        return na_err_set(err, NA_E_INTERNAL, "CUDA: device %d does not exist (%d device%s)",
                          ordinal, count, count == 1 ? "" : "s");
    int major = 0, minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ordinal);
    /* Code is built for sm_80 and sm_90 plus compute_90 PTX (CMakeLists.txt):
     * 8.x runs the sm_80 code, 9.0 its own, later devices JIT the PTX. */
    if (major < 8)
        return na_err_set(err, NA_E_INTERNAL, "CUDA: device %d has compute capability %d.%d; "
                          "this build has GPU code for 8.0 and newer", ordinal, major, minor);
    return NA_OK;
}

na_status_t na_cuda_open(int ordinal, na_backend_t *b, na_err_t *err)
{
    if (ordinal < 0)
        ordinal = 0;
    na_status_t st = probe(ordinal, err);
    if (st != NA_OK)
        return st;
    gctx_t *g = calloc(1, sizeof *g);
    if (!g)
        return na_err_set(err, NA_E_NOMEM, "CUDA: out of memory");
    g->dev = ordinal;
    snprintf(g->name, sizeof g->name, "cuda:%d", ordinal);
    cudaError_t e = cudaSetDevice(ordinal);
    for (int i = 0; e == cudaSuccess && i < NA_GPU_NBUF; i++)
        e = cudaStreamCreateWithFlags(&g->buf[i].stream, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&g->lut_val, 256 * sizeof(double));
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&g->lut_cls, 256);
    if (e != cudaSuccess) {
        cuda_close(g);
        return na_err_set(err, NA_E_INTERNAL, "CUDA: device %d: %s", ordinal,
                          cudaGetErrorString(e));
    }
    b->name = g->name;
    b->scan_tensor = cuda_scan;
    b->close = cuda_close;
    b->self = g;
    return NA_OK;
}

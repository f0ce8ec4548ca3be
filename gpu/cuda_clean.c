/*
 * cuda_clean.c - the host side of clean's write pass on the GPU (issue
 * 6): na_clean_emit's work for one tensor, with the kernels of
 * clean_kernels.cu. The fit (statistics, medians, which rows go) stays on
 * the CPU (na_clean_fit); what it decided - ct->feat and the 2-bit row
 * states - goes to the device.
 *
 * Pipeline, as the scan's (cuda_host.c): the tensor is read in windows of
 * whole blocks of rows (at most NA_GC_WINDOW bytes of input and the
 * caller's window_bytes); each window's bytes are copied by all threads
 * into one of NA_GC_NBUF pinned buffers and sent on that buffer's own
 * stream with its row states and the output position of each block
 * (kept rows before it, counted here from the row states); the kernel
 * writes the kept rows' output values, per-block statistics and counts,
 * which come back on the same stream. While the GPU works on window w the
 * host reads window w+1, and hands the output of window w-NA_GC_NBUF+1
 * to the sink: copies overlap kernels, and memory is NA_GC_NBUF windows
 * on each side (plus ct->feat on the device) whatever the tensor's size.
 * Windows finish strictly in order, so the sink gets the bytes in order,
 * and block statistics are merged in block order (na_stats_merge).
 *
 * Nothing reaches the sink before every buffer is allocated, so a refusal
 * (NA_E_UNSUPPORTED) or an allocation failure leaves the caller free to
 * run na_clean_emit instead (cli/device.c).
 */
#include "na_cuda.h"

#include <cuda_runtime_api.h> /* cudaMalloc, cudaMemcpyAsync, streams */
#include <omp.h>              /* omp_get_max_threads */
#include <stdlib.h>           /* calloc, free */
#include <string.h>           /* memcpy, memset */

#define NA_GC_NBUF 3 /* windows in flight: host read, transfer + kernel, results */
/* 16 MiB of input per window, the scan's NA_GPU_WINDOW (cuda_host.c). */
#define NA_GC_WINDOW ((uint64_t)16 << 20)
#define NA_GC_BLOCK 16384 /* elements per CUDA block, about (lib/clean.c's BLOCK) */

typedef struct gcslot {
    unsigned char *hin, *din;          /* window input: pinned / device */
    unsigned char *hrs, *drs;          /* its row states */
    unsigned long long *hpos, *dpos;   /* per block: kept rows before it */
    unsigned char *hout, *dout;        /* kept rows' output */
    na_stats_t *hst, *dst;             /* per block: statistics */
    na_clean_counts_t *hcnt, *dcnt;    /* per block: counts */
    cudaStream_t stream;
    uint64_t nb, kept;                 /* in flight: blocks, kept rows; nb 0 = idle */
} gcslot_t;

typedef struct gclean {
    const na_tensor_t *t;
    na_clean_tensor_t *ct;
    na_gclean_t a;                     /* kernel arguments (pointers set per window) */
    gcslot_t s[NA_GC_NBUF];
    uint64_t wrows, brows, nbmax;      /* rows per window and per block */
    size_t osize;
    int threads;
    na_clean_counts_t c;
    na_clean_feat_t *dfeat;
} gclean_t;

static na_status_t fail(na_err_t *err, const char *what, cudaError_t e, const char *tname)
{
    return na_err_set(err, NA_E_INTERNAL, "%s: CUDA error in %s: %s", tname, what,
                      cudaGetErrorString(e));
}

/* The GPU kind of t's dtype, or -1 when the GPU pass does not take t. */
static int kind_of(const na_tensor_t *t)
{
    switch (t->dtype) {
    case NA_DT_F32: return NA_GK_F32;
    case NA_DT_F64: return NA_GK_F64;
    case NA_DT_F16: return NA_GK_F16;
    case NA_DT_BF16: return NA_GK_BF16;
    case NA_DT_U8: case NA_DT_U16: case NA_DT_U32: case NA_DT_U64: return NA_GK_UINT;
    case NA_DT_I8: case NA_DT_I16: case NA_DT_I32: case NA_DT_I64: return NA_GK_SINT;
    default: return -1;
    }
}

/* Kept rows (state 0) among rows [r0, r0 + n) of ct, r0 a multiple of 4:
 * the bytes of four whole rows by a table of their zero states, the
 * tail row by row. */
static uint64_t kept_rows(const na_clean_tensor_t *ct, uint64_t r0, uint64_t n)
{
    static const unsigned char z[4] = {1, 0, 0, 0};
    const uint8_t *p = ct->row_state + r0 / 4;
    uint64_t k = 0, i = 0;
    for (; i + 4 <= n; i += 4) {
        unsigned v = p[i / 4];
        k += z[v & 3] + z[(v >> 2) & 3] + z[(v >> 4) & 3] + z[v >> 6];
    }
    for (; i < n; i++)
        k += na_clean_row(ct, r0 + i) == 0;
    return k;
}

static void free_slots(gclean_t *g)
{
    for (int i = 0; i < NA_GC_NBUF; i++) {
        gcslot_t *s = &g->s[i];
        cudaFreeHost(s->hin);
        cudaFreeHost(s->hrs);
        cudaFreeHost(s->hpos);
        cudaFreeHost(s->hout);
        cudaFreeHost(s->hst);
        cudaFreeHost(s->hcnt);
        cudaFree(s->din);
        cudaFree(s->drs);
        cudaFree(s->dpos);
        cudaFree(s->dout);
        cudaFree(s->dst);
        cudaFree(s->dcnt);
        if (s->stream)
            cudaStreamDestroy(s->stream);
    }
    cudaFree(g->dfeat);
}

/* Geometry, device copy of the features, buffers and streams. */
static na_status_t setup(gclean_t *g, const na_clean_opts_t *o, na_err_t *err)
{
    const na_tensor_t *t = g->t;
    na_clean_tensor_t *ct = g->ct;
    uint64_t w = ct->width, es = t->elem_stride;
    /* rows per block: ~NA_GC_BLOCK elements, whole 32-row words */
    uint64_t br = NA_GC_BLOCK / w / 32 * 32;
    g->brows = br < 32 ? 32 : br;
    uint64_t wb = o->window_bytes < NA_GC_WINDOW ? o->window_bytes : NA_GC_WINDOW;
    uint64_t wr = wb / (w * es) / g->brows * g->brows;
    g->wrows = wr ? wr : g->brows;
    if (g->wrows > ct->rows) /* a small tensor: one window of whole words */
        g->wrows = (ct->rows + 31) / 32 * 32;
    g->nbmax = (g->wrows + g->brows - 1) / g->brows;
    g->osize = na_dtype_bits(ct->out_dtype) / 8;
    size_t in_b = (size_t)(g->wrows * w * es), rs_b = (size_t)(g->wrows / 4 + 16);
    size_t out_b = (size_t)(g->wrows * w * g->osize);
    size_t nf = (size_t)(ct->nfeat ? ct->nfeat : 1);
    cudaError_t e = cudaMalloc((void **)&g->dfeat, nf * sizeof *ct->feat);
    if (e == cudaSuccess)
        e = cudaMemcpy(g->dfeat, ct->feat, nf * sizeof *ct->feat, cudaMemcpyHostToDevice);
    /* A pageable cudaMemcpy may return before its DMA lands (CUDA "API
     * synchronization behavior"), on the legacy stream, which the
     * non-blocking streams below do not wait for: wait here. */
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    for (int i = 0; e == cudaSuccess && i < NA_GC_NBUF; i++) {
        gcslot_t *s = &g->s[i];
        e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking);
        if (e == cudaSuccess)
            e = cudaHostAlloc((void **)&s->hin, in_b, cudaHostAllocDefault);
        if (e == cudaSuccess)
            e = cudaHostAlloc((void **)&s->hrs, rs_b, cudaHostAllocDefault);
        if (e == cudaSuccess)
            e = cudaHostAlloc((void **)&s->hpos, g->nbmax * sizeof *s->hpos, cudaHostAllocDefault);
        if (e == cudaSuccess)
            e = cudaHostAlloc((void **)&s->hout, out_b, cudaHostAllocDefault);
        if (e == cudaSuccess)
            e = cudaHostAlloc((void **)&s->hst, g->nbmax * sizeof *s->hst, cudaHostAllocDefault);
        if (e == cudaSuccess)
            e = cudaHostAlloc((void **)&s->hcnt, g->nbmax * sizeof *s->hcnt, cudaHostAllocDefault);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&s->din, in_b);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&s->drs, rs_b);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&s->dpos, g->nbmax * sizeof *s->dpos);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&s->dout, out_b);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&s->dst, g->nbmax * sizeof *s->dst);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&s->dcnt, g->nbmax * sizeof *s->dcnt);
    }
    if (e != cudaSuccess)
        return na_err_set(err, e == cudaErrorMemoryAllocation ? NA_E_NOMEM : NA_E_INTERNAL,
                          "%s: CUDA: cannot set up the write pass (%zu-byte windows): %s",
                          t->name, in_b, cudaGetErrorString(e));
    na_gclean_t *a = &g->a;
    memset(&a->d, 0, sizeof a->d);
    a->d.kind = kind_of(t);
    a->d.esize = na_dtype_bits(t->dtype) / 8;
    a->d.stride = (unsigned)es;
    a->d.offset = t->elem_offset;
    a->d.big = a->d.esize > 1 && t->byte_order == NA_BIG;
    a->width = w;
    a->brows = g->brows;
    a->o = *o;
    a->feat = g->dfeat;
    a->one_feat = ct->nfeat == 1;
    a->out_dtype = (int)ct->out_dtype;
    a->int_out = !na_dtype_is_float(ct->out_dtype);
    a->osize = (unsigned)g->osize;
    return NA_OK;
}

/* Wait for the window in s, hand its output to the sink, fold its
 * results in (block order). */
static na_status_t finish(gclean_t *g, gcslot_t *s, na_clean_sink_fn sink, void *ud,
                          na_err_t *err)
{
    if (s->nb == 0)
        return NA_OK;
    cudaError_t e = cudaStreamSynchronize(s->stream);
    uint64_t nb = s->nb;
    s->nb = 0;
    if (e != cudaSuccess)
        return fail(err, "the write pass", e, g->t->name);
    for (uint64_t b = 0; b < nb; b++) {
        na_stats_merge(&g->ct->after, &s->hst[b]);
        na_clean_counts_add(&g->c, &s->hcnt[b]);
    }
    uint64_t bytes = s->kept * g->ct->width * g->osize;
    g->ct->out_bytes += bytes;
    return bytes ? sink(ud, s->hout, (size_t)bytes, err) : NA_OK;
}

/* Read rows [r0, r0 + nr) into s and queue their transfer, kernel and
 * results on s's stream. */
static na_status_t launch(gclean_t *g, gcslot_t *s, uint64_t r0, uint64_t nr, na_err_t *err)
{
    const na_tensor_t *t = g->t;
    na_clean_tensor_t *ct = g->ct;
    uint64_t w = ct->width, es = t->elem_stride, nb = (nr + g->brows - 1) / g->brows;
    const uint8_t *p = NULL;
    na_status_t st = t->src.read(t->src.ctx, r0 * w * es, (size_t)(nr * w * es), &p, err);
    if (st != NA_OK)
        return st;
    na_cuda_copy(s->hin, p, (size_t)(nr * w * es), g->threads);
    size_t rsb = (size_t)((nr + 3) / 4);
    memcpy(s->hrs, ct->row_state + r0 / 4, rsb);
    memset(s->hrs + rsb, 0, 16);
    s->kept = 0;
    for (uint64_t b = 0; b < nb; b++) {
        uint64_t b0 = b * g->brows, n = nr - b0 < g->brows ? nr - b0 : g->brows;
        s->hpos[b] = s->kept;
        s->kept += kept_rows(ct, r0 + b0, n);
    }
    na_gclean_t a = g->a;
    a.in = s->din;
    a.rs = s->drs;
    a.opos = s->dpos;
    a.out = s->dout;
    a.rows = nr;
    a.bst = s->dst;
    a.bcnt = s->dcnt;
    cudaError_t e = cudaMemcpyAsync(s->din, s->hin, (size_t)(nr * w * es), cudaMemcpyHostToDevice,
                                    s->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(s->drs, s->hrs, rsb + 16, cudaMemcpyHostToDevice, s->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(s->dpos, s->hpos, nb * sizeof *s->hpos, cudaMemcpyHostToDevice,
                            s->stream);
    if (e == cudaSuccess)
        e = (cudaError_t)na_gpu_clean(&a, s->stream);
    if (e == cudaSuccess && s->kept)
        e = cudaMemcpyAsync(s->hout, s->dout, (size_t)(s->kept * w * g->osize),
                            cudaMemcpyDeviceToHost, s->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(s->hst, s->dst, nb * sizeof *s->hst, cudaMemcpyDeviceToHost,
                            s->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(s->hcnt, s->dcnt, nb * sizeof *s->hcnt, cudaMemcpyDeviceToHost,
                            s->stream);
    s->nb = nb; /* finish() waits for whatever was queued */
    return e == cudaSuccess ? NA_OK : fail(err, "the write pass", e, t->name);
}

/* Why the GPU pass does not take t (NULL: it does). */
static const char *refusal(const na_tensor_t *t, const na_clean_tensor_t *ct,
                           const na_clean_opts_t *o)
{
    if (t->n_missing > 0 || ct->n_missing > 0)
        return "missing-value markers";
    if (t->src.fill != NULL || t->constant || !t->src.read)
        return "unwritten chunks";
    if (t->elements == 0) /* e.g. (5, 0): rows without data, nothing to read */
        return "no elements";
    if (t->stored != t->dtype || kind_of(t) < 0)
        return "its dtype";
    if (ct->width > ((uint64_t)1 << 26)) /* a block's counts are 32-bit (gstats.cuh) */
        return "rows of more than 64 Mi values";
    /* A window holds at least one block of 32 rows, and a source read may
     * not exceed window_bytes (nanaudit.h; the HDF5 reader refuses it):
     * wider rows would also pin 32 rows per buffer. */
    if (ct->width > o->window_bytes / 32 / t->elem_stride)
        return "rows too wide for 32-row GPU blocks in one read window";
    return NULL;
}

na_status_t na_cuda_clean_emit(na_backend_t *b, const na_tensor_t *t, const na_clean_opts_t *o,
                               na_clean_tensor_t *ct, na_clean_sink_fn sink, void *ud,
                               na_err_t *err)
{
    const char *why = refusal(t, ct, o);
    if (why)
        return na_err_set(err, NA_E_UNSUPPORTED, "%s: %s: not cleaned on the GPU", t->name, why);
    na_stats_init(&ct->after);
    ct->out_bytes = 0;
    gclean_t g;
    memset(&g, 0, sizeof g);
    g.t = t;
    g.ct = ct;
    g.threads = omp_get_max_threads();
    na_status_t st = NA_OK;
    if (ct->rows == 0)
        return na_clean_emit_finish(t, ct, &g.c, st, err);
    cudaError_t e = cudaSetDevice(na_cuda_ordinal(b));
    if (e != cudaSuccess)
        st = fail(err, "cudaSetDevice", e, t->name);
    if (st == NA_OK)
        st = setup(&g, o, err);
    unsigned k = 0;
    for (uint64_t r0 = 0; st == NA_OK && r0 < ct->rows; r0 += g.wrows, k++) {
        gcslot_t *s = &g.s[k % NA_GC_NBUF];
        st = finish(&g, s, sink, ud, err);
        if (st == NA_OK)
            st = launch(&g, s, r0, ct->rows - r0 < g.wrows ? ct->rows - r0 : g.wrows, err);
    }
    /* what is in flight, oldest first (slot order is window order) */
    for (unsigned i = 0; i < NA_GC_NBUF; i++) {
        gcslot_t *s = &g.s[(k + i) % NA_GC_NBUF];
        if (st == NA_OK) {
            st = finish(&g, s, sink, ud, err);
        } else if (s->stream) {
            cudaStreamSynchronize(s->stream);
            s->nb = 0;
        }
    }
    free_slots(&g);
    /* counted only when it ran: after a failure with nothing sent, the
     * CPU's na_clean_emit runs the pass again and counts it (cli/device.c) */
    if (st == NA_OK)
        ct->passes++;
    return na_clean_emit_finish(t, ct, &g.c, st, err);
}

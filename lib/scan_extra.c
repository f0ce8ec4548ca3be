/*
 * scan_extra.c - the optional interval counts of a scan (na_extra_t):
 * how many finite elements lie in each closed interval [lo, hi]. The
 * findings range, max_abs, negative, cast_overflow and cast_underflow
 * (checks.c) are sums of such counts.
 *
 * Why intervals: every one of those checks is "x beyond a threshold",
 * with the threshold strict or not; over doubles a strict bound is the
 * next double (nextafter), so one closed-interval test serves them all
 * and the per-element work is two compares and an add, which vectorises.
 *
 * The counts are taken in pass 1 (scan_pass.c calls na_k_extra on each
 * block while it is in cache) only when na_scan_opts_t.extra asks for
 * them, so a scan without extra checks runs exactly the code it ran
 * before. na_scan_extra is a pass of its own, for backends (CUDA) that do
 * not take them.
 */
#include "scan_kernels.h"
#include "decode.h"

#include <float.h>  /* FLT_MAX */
#include <math.h>   /* nextafterf, INFINITY */
#include <stdlib.h> /* malloc, free */
#include <string.h> /* memcpy, memset */

/* The float interval [*flo, *fhi] holding exactly the floats of [lo, hi]:
 * flo is the least float >= lo, fhi the greatest float <= hi, clamped to
 * [-FLT_MAX, +Inf] and [-Inf, FLT_MAX] so that +-Inf never count (lo and
 * hi are finite doubles). Comparing binary32 data in float is then exact
 * and twice as wide per vector as in double. */
static void float_bounds(double lo, double hi, float *flo, float *fhi)
{
    float a = (float)lo, b = (float)hi; /* rounded to nearest */
    if ((double)a < lo)
        a = nextafterf(a, INFINITY);
    if ((double)b > hi)
        b = nextafterf(b, -INFINITY);
    *flo = a < -FLT_MAX ? -FLT_MAX : a;
    *fhi = b > FLT_MAX ? FLT_MAX : b;
}

/* F32 in host order. NaN compares false, the bounds exclude +-Inf.
 * Loads go through memcpy: safetensors data need not be 4-byte aligned.
 * A block has at most NA_BLOCK_ELEMS elements, so 32-bit counts do. */
static uint64_t count_f32(const unsigned char *p, size_t n, double lo, double hi)
{
    float flo, fhi;
    float_bounds(lo, hi, &flo, &fhi);
    uint32_t c = 0;
#pragma omp simd reduction(+ : c)
    for (size_t i = 0; i < n; i++) {
        float x;
        memcpy(&x, p + 4 * i, 4);
        c += (uint32_t)((x >= flo) & (x <= fhi));
    }
    return c;
}

/* Decoded values: the class decides finiteness (an F80 beyond double
 * range decodes to +-DBL_MAX with a finite class and counts as such). */
static uint64_t count_decoded(const double *v, const unsigned char *cls, size_t n, double lo,
                              double hi)
{
    uint32_t c = 0;
#pragma omp simd reduction(+ : c)
    for (size_t i = 0; i < n; i++)
        c += (uint32_t)((cls[i] < NA_CL_NAN) & (v[i] >= lo) & (v[i] <= hi));
    return c;
}

/* F64 in host order, compared in double (exact). */
static uint64_t count_f64(const unsigned char *p, size_t n, double lo, double hi)
{
    uint32_t c = 0;
#pragma omp simd reduction(+ : c)
    for (size_t i = 0; i < n; i++) {
        double x;
        memcpy(&x, p + 8 * i, 8);
        c += (uint32_t)((x >= lo) & (x <= hi));
    }
    return c;
}

/* F16 / BF16 widened exactly to binary32 into w (n floats). */
static void widen16(const unsigned char *p, size_t n, int bf16, float *w)
{
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        w[i] = bf16 ? na_bf16_to_f32(h) : na_f16_to_f32(h);
    }
}

void na_k_extra(const na_kctx_t *k, const unsigned char *blk, size_t n, const na_kscratch_t *s,
                const na_extra_t *ex, uint64_t *counts)
{
    if (k->kind == NA_KK_F32) {
        const unsigned char *p = na_k_host_block(k, blk, n, s);
        for (size_t j = 0; j < ex->n; j++)
            counts[j] = count_f32(p, n, ex->iv[j].lo, ex->iv[j].hi);
        return;
    }
    if (k->kind == NA_KK_F64) {
        const unsigned char *p = na_k_host_block(k, blk, n, s);
        for (size_t j = 0; j < ex->n; j++)
            counts[j] = count_f64(p, n, ex->iv[j].lo, ex->iv[j].hi);
        return;
    }
    if (k->kind == NA_KK_F16 || k->kind == NA_KK_BF16) {
        /* s->val holds n doubles, room for n floats */
        float *w = (float *)(void *)s->val;
        widen16(na_k_host_block(k, blk, n, s), n, k->kind == NA_KK_BF16, w);
        for (size_t j = 0; j < ex->n; j++)
            counts[j] = count_f32((const unsigned char *)w, n, ex->iv[j].lo, ex->iv[j].hi);
        return;
    }
    na_k_decode(k, blk, n, s);
    for (size_t j = 0; j < ex->n; j++)
        counts[j] = count_decoded(s->val, s->cls, n, ex->iv[j].lo, ex->iv[j].hi);
}

na_status_t na_scan_extra(const na_tensor_t *t, const na_scan_opts_t *o, na_result_t *r,
                          na_err_t *err)
{
    const na_extra_t *ex = o ? o->extra : NULL;
    memset(r->extra_counts, 0, sizeof r->extra_counts);
    r->extra_done = 1;
    if (!ex || ex->n == 0 || t->elements == 0)
        return NA_OK;
    if (t->constant) { /* one element stands for all (scan_const.c) */
        na_result_t tmp;
        memset(&tmp, 0, sizeof tmp);
        na_scan_opts_t o1 = *o;
        o1.max_locations = 0;
        na_status_t st = na_scan_constant(t, &o1, &tmp, err);
        memcpy(r->extra_counts, tmp.extra_counts, sizeof r->extra_counts);
        na_result_free(&tmp);
        return st;
    }
    na_kctx_t k;
    na_status_t st = na_k_setup(&k, t, err);
    if (st != NA_OK)
        return st;
    size_t window = o->window_bytes ? o->window_bytes : NA_DEFAULT_WINDOW_BYTES;
    size_t wel = window / t->elem_stride, B = NA_BLOCK_ELEMS;
    if (wel < B)
        B = wel ? wel : 1;
    wel = wel < B ? B : wel - wel % B;
    na_kscratch_t sc;
    sc.raw = malloc(B * 8);
    sc.val = malloc(B * sizeof(double));
    sc.cls = malloc(B);
    if (!sc.raw || !sc.val || !sc.cls) {
        st = na_err_set(err, NA_E_NOMEM, "%s: out of memory for scan buffers", t->name);
        goto out;
    }
    /* One thread: this pass runs only after a GPU scan, whose tensors are
     * large enough that reading, not counting, dominates. */
    for (uint64_t e0 = 0; e0 < t->elements && st == NA_OK; e0 += wel) {
        size_t n = (size_t)(t->elements - e0 < wel ? t->elements - e0 : wel);
        const uint8_t *w = NULL;
        if (err)
            err->msg[0] = '\0';
        st = t->src.read(t->src.ctx, e0 * t->elem_stride, n * t->elem_stride, &w, err);
        if (st != NA_OK) {
            if (err && !err->msg[0])
                na_err_set(err, st, "%s: read error: %s", t->name, na_status_str(st));
            break;
        }
        for (size_t off = 0; off < n; off += B) {
            uint64_t c[NA_MAX_INTERVALS];
            size_t bn = n - off < B ? n - off : B;
            na_k_extra(&k, w + off * t->elem_stride, bn, &sc, ex, c);
            for (size_t j = 0; j < ex->n; j++)
                r->extra_counts[j] += c[j];
        }
    }
out:
    free(sc.raw);
    free(sc.val);
    free(sc.cls);
    if (st != NA_OK)
        r->extra_done = 0;
    return st;
}

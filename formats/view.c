/*
 * view.c - a tensor as a strided view over a storage, read in C order.
 *
 * PyTorch tensors are (storage, storage offset, shape, strides) views: a
 * transposed or sliced tensor is not contiguous, several tensors may
 * share one storage, and a .npy array may be in Fortran order. The
 * engine reads each tensor as one stream in C (row-major) order and
 * reports locations as C-order indices (DESIGN.md, "Locations"), so a
 * non-contiguous view is gathered into C order here, window by window.
 *
 * Decision (issue 8): gather per window rather than teach the engine
 * strides. The engine stays simple and every location, statistic and
 * merge order is exactly that of a contiguous C-order copy (numpy's
 * np.ascontiguousarray), whatever the layout. The cost: the window's
 * elements are copied once, and the mapping covers the span of storage
 * the whole view touches (for a Fortran-order array, every C-order
 * window touches all of it). That is address space, not memory: the
 * pages are the file's, read-only, and dropped by the kernel as needed.
 * A contiguous C-order view (the common case) is handed out straight
 * from the mapping, without a copy.
 */
#include "npt.h"

#include <stdlib.h> /* realloc, free */
#include <string.h> /* memcpy */

/* Span in bytes of storage the view touches from its offset: the last
 * record's start + rsize. 0 for an empty view. -1 on 64-bit overflow. */
static int view_span(const na_view_t *v, uint64_t *span)
{
    *span = 0;
    if (v->elements == 0)
        return 0;
    uint64_t last = 0;
    for (int d = 0; d < v->ndim; d++) {
        uint64_t k = v->shape[d] - 1;
        if (k != 0 && v->stride[d] > UINT64_MAX / k)
            return -1;
        if (k * v->stride[d] > UINT64_MAX - last)
            return -1;
        last += k * v->stride[d];
    }
    if (last > UINT64_MAX - v->rsize)
        return -1;
    *span = last + v->rsize;
    return 0;
}

na_status_t na_view_prepare(na_view_t *v, const char *what, na_err_t *err)
{
    uint64_t n = 1;
    for (int d = 0; d < v->ndim; d++) {
        if (v->shape[d] != 0 && n > UINT64_MAX / v->shape[d])
            return na_err_set(err, NA_E_FORMAT, "%s: element count overflows 64 bits", what);
        n *= v->shape[d];
    }
    v->elements = n;
    uint64_t span;
    if (view_span(v, &span) != 0 || (n != 0 && v->offset > UINT64_MAX - span))
        return na_err_set(err, NA_E_FORMAT, "%s: view extent overflows 64 bits", what);
    if (n != 0 && v->offset + span > v->store->size)
        return na_err_set(err, NA_E_FORMAT, "%s: view reaches byte %llu of a storage of %llu "
                          "bytes", what, (unsigned long long)(v->offset + span),
                          (unsigned long long)v->store->size);
    uint64_t expect = v->rsize;
    v->contiguous = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (v->shape[d] != 1 && v->stride[d] != expect)
            v->contiguous = 0;
        expect *= v->shape[d] ? v->shape[d] : 1;
    }
    return NA_OK;
}

/* Make the window buffer (the input's shared one, or the view's own)
 * hold len bytes; *out gets it. */
static na_status_t grow_buf(na_view_t *v, size_t len, uint8_t **out, na_err_t *err)
{
    uint8_t **buf = v->scratch ? &v->scratch->buf : &v->buf;
    size_t *cap = v->scratch ? &v->scratch->cap : &v->cap;
    if (len > *cap) {
        uint8_t *b = realloc(*buf, len);
        if (b == NULL)
            return na_err_set(err, NA_E_NOMEM, "out of memory (window of %zu bytes)", len);
        *buf = b;
        *cap = len;
    }
    *out = *buf;
    return NA_OK;
}

/* Copy records [r0, r0 + n) of the view, in C order, into v->buf. The
 * innermost dimension is a tight loop; the outer ones an odometer. */
static void gather(const na_view_t *v, uint8_t *out, const uint8_t *base, uint64_t r0,
                   uint64_t n)
{
    uint64_t idx[NA_MAX_NDIM];
    na_unravel(r0, v->ndim, v->shape, idx);
    uint64_t off = 0;
    for (int d = 0; d < v->ndim; d++)
        off += idx[d] * v->stride[d];
    const uint32_t rs = v->rsize;
    if (v->ndim == 0) {
        memcpy(out, base, rs);
        return;
    }
    const int in = v->ndim - 1;
    const uint64_t istride = v->stride[in], ishape = v->shape[in];
    while (n > 0) {
        uint64_t run = ishape - idx[in];
        if (run > n)
            run = n;
        const uint8_t *p = base + off;
        if (rs == 4)
            for (uint64_t k = 0; k < run; k++, p += istride, out += 4)
                memcpy(out, p, 4);
        else
            for (uint64_t k = 0; k < run; k++, p += istride, out += rs)
                memcpy(out, p, rs);
        n -= run;
        off += run * istride;
        idx[in] += run;
        /* carry into the outer dimensions */
        for (int d = in; d > 0 && idx[d] == v->shape[d]; d--) {
            off -= idx[d] * v->stride[d];
            idx[d] = 0;
            idx[d - 1]++;
            off += v->stride[d - 1];
        }
    }
}

na_status_t na_view_read(void *ctx, uint64_t off, size_t len, const uint8_t **ptr,
                         na_err_t *err)
{
    na_view_t *v = ctx;
    const na_store_t *s = v->store;
    uint64_t total = v->elements * v->rsize;
    *ptr = NULL;
    if (off > total || len > total - off || off % v->rsize || len % v->rsize)
        return na_err_set(err, NA_E_INTERNAL, "view read of %zu bytes at %llu outside the "
                          "%llu bytes of the view", len, (unsigned long long)off,
                          (unsigned long long)total);
    if (v->contiguous) {
        if (s->map != NULL)
            return na_map_get(s->map, s->base + v->offset + off, len, ptr, err);
        uint8_t *buf = NULL;
        na_status_t st = grow_buf(v, len ? len : 1, &buf, err);
        if (st == NA_OK)
            st = na_zip_read(s->zip, s->member, v->offset + off, buf, len, err);
        *ptr = st == NA_OK ? buf : NULL;
        return st;
    }
    if (s->map == NULL)
        return na_err_set(err, NA_E_INTERNAL, "a strided view over a compressed stream");
    uint64_t span;
    (void)view_span(v, &span); /* checked by na_view_prepare */
    if (span > SIZE_MAX)
        return na_err_set(err, NA_E_NOMEM, "view spans %llu bytes, more than the address "
                          "space", (unsigned long long)span);
    const uint8_t *base;
    uint8_t *buf = NULL;
    na_status_t st = na_map_get(s->map, s->base + v->offset, (size_t)span, &base, err);
    if (st == NA_OK)
        st = grow_buf(v, len ? len : 1, &buf, err);
    if (st != NA_OK)
        return st;
    if (len > 0)
        gather(v, buf, base, off / v->rsize, len / v->rsize);
    *ptr = buf;
    return NA_OK;
}

void na_view_free(na_view_t *v)
{
    if (v == NULL)
        return;
    free(v->buf); /* the shared scratch is the input's to free */
    v->buf = NULL;
    v->cap = 0;
}

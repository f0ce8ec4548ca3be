/*
 * hdf5_wdeflate.c - deflate of the HDF5 writer's whole chunks on several
 * threads (issue 4, `nanaudit clean` of gzip-compressed HDF5 files).
 *
 * libhdf5 runs a chunk's filter pipeline on the thread that calls
 * H5Dwrite, one chunk after the other: for a (4e6, 12) F32 dataset in
 * gzip chunks, zlib's deflate in the writer's child was ~45 % of clean's
 * time (bench/RESULTS.md, "gzip HDF5 output"). For the two pipelines
 * people write most, deflate and shuffle + deflate, this file does what
 * the pipeline does itself, on POSIX threads (the writer's child is a
 * forked child of an OpenMP process and must make no OpenMP call), and
 * stores the result with H5Dwrite_chunk (libhdf5 >= 1.10.2) and filter
 * mask 0 (every filter applied), the bytes libhdf5 would store:
 *  - deflate (filter 1): compress2 of the whole chunk at the level in the
 *    filter's client data (HDF5 source src/H5Zdeflate.c; its output
 *    buffer is compressBound bytes, so the filter never fails and never
 *    leaves a chunk unfiltered); same zlib, same level, same bytes;
 *  - shuffle (filter 2): byte k of every element stored together, plane
 *    k holding byte k of elements 0..n-1, n = chunk bytes / element size
 *    in client data 0 (src/H5Zshuffle.c; HDF5 User's Guide, "Using the
 *    Shuffle Filter"); undone by hdf5_inflate.c in the reader.
 * Only chunks inside the extent whose elements are all in one window go
 * here; libhdf5 writes the rest (a chunk cut by a window boundary, the
 * edge chunks, whose bytes past the extent libhdf5 fills): a chunk is
 * compressed once either way. Data arrives as the dataset's own file
 * type (no conversion), else libhdf5 writes it all.
 */
#include "hdf5_wdeflate.h"

#if NA_HAVE_HDF5
#include <pthread.h>   /* pthread_create, pthread_join */
#include <stdatomic.h> /* atomic_fetch_add */
#include <stdio.h>     /* snprintf */
#include <stdlib.h>    /* malloc, free */
#include <string.h>    /* memcpy, memcmp */
#include <zlib.h>      /* compress2, compressBound */

struct na_h5wd {
    int ndim;
    uint64_t shape[H5S_MAX_RANK], chunk[H5S_MAX_RANK];
    uint64_t full[H5S_MAX_RANK]; /* whole chunks inside the extent per dimension */
    size_t esize;                /* bytes of one dataset element */
    uint64_t celems;             /* elements of one chunk */
    int level, shuffle, threads;
};

/* The dataset's filters are exactly [shuffle,] deflate with the client
 * data libhdf5 sets: *level and *shuffle, else 0. */
static int plan_filters(hid_t dcpl, size_t esize, int *level, int *shuffle)
{
    int nf = H5Pget_nfilters(dcpl);
    if (nf < 1 || nf > 2)
        return 0;
    for (int i = 0; i < nf; i++) {
        unsigned flags = 0, cd[8], config = 0;
        size_t ncd = 8;
        char name[64];
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name,
                                         &config);
        if (i == 0 && nf == 2) {
            /* client data 0 is the element size (set_local at creation) */
            if (id != H5Z_FILTER_SHUFFLE || ncd != 1 || cd[0] != esize)
                return 0;
            *shuffle = 1;
        } else if (id != H5Z_FILTER_DEFLATE || ncd != 1 || cd[0] > 9) {
            return 0;
        } else {
            *level = (int)cd[0];
        }
    }
    return 1;
}

/* 1 when bytes of dataset type ft arrive as they are stored. */
static int plain_type(hid_t ft, hid_t memtype)
{
    if (H5Tequal(ft, memtype) <= 0 || H5Tdetect_class(ft, H5T_VLEN) != 0 ||
        H5Tdetect_class(ft, H5T_REFERENCE) != 0)
        return 0;
    H5T_class_t tc = H5Tget_class(ft);
    return tc == H5T_INTEGER || tc == H5T_FLOAT || tc == H5T_ARRAY;
}

na_h5wd_t *na_h5wd_plan(hid_t dset, hid_t memtype, int threads, uint64_t window)
{
    hid_t dcpl = H5Dget_create_plist(dset), ft = H5Dget_type(dset), sp = H5Dget_space(dset);
    na_h5wd_t *p = calloc(1, sizeof *p);
    hsize_t dims[H5S_MAX_RANK], ck[H5S_MAX_RANK];
    int ok = p && dcpl >= 0 && ft >= 0 && sp >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
             plain_type(ft, memtype);
    if (ok) {
        p->ndim = H5Sget_simple_extent_ndims(sp);
        p->esize = H5Tget_size(ft);
        ok = p->ndim > 0 && p->esize > 0 && H5Sget_simple_extent_dims(sp, dims, NULL) == p->ndim &&
             H5Pget_chunk(dcpl, H5S_MAX_RANK, ck) == p->ndim &&
             plan_filters(dcpl, p->esize, &p->level, &p->shuffle);
    }
    uint64_t bytes = ok ? p->esize : 0;
    for (int d = 0; ok && d < p->ndim; d++) {
        p->shape[d] = dims[d];
        p->chunk[d] = ck[d];
        p->full[d] = ck[d] ? dims[d] / ck[d] : 0;
        ok = p->full[d] > 0 && ck[d] <= window / bytes;
        bytes *= ck[d];
    }
    ok = ok && bytes <= window;
    if (ok) {
        p->celems = bytes / p->esize;
        p->threads = threads < 1 ? 1 : threads > 256 ? 256 : threads;
    }
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (ft >= 0)
        H5Tclose(ft);
    if (sp >= 0)
        H5Sclose(sp);
    H5Eclear2(H5E_DEFAULT);
    if (!ok) {
        free(p);
        return NULL;
    }
    return p;
}

void na_h5wd_free(na_h5wd_t *p) { free(p); }

/* ---- one window's whole chunks, compressed on threads ---------------- */

typedef struct wd_out {
    uint8_t *z;    /* the stored chunk (NULL: all fill value, not written) */
    uLongf zn;
    int err;       /* zlib's error code, or Z_MEM_ERROR for malloc */
} wd_out_t;

typedef struct wd_job {
    const na_h5wd_t *p;
    const uint8_t *band;     /* element (r0, 0, ..., 0) */
    uint64_t r0;             /* first row of the band */
    uint64_t per_row;        /* chunks per chunk row */
    uint64_t n;              /* chunks */
    const uint8_t *fillpat;
    size_t patlen;
    atomic_uint_fast64_t next;
    wd_out_t *out;
} wd_job_t;

/* Chunk k's origin (dataset coordinates). */
static void chunk_origin(const wd_job_t *j, uint64_t k, hsize_t *o)
{
    const na_h5wd_t *p = j->p;
    uint64_t in_row = k % j->per_row;
    for (int d = p->ndim - 1; d >= 1; d--) {
        o[d] = in_row % p->full[d] * p->chunk[d];
        in_row /= p->full[d];
    }
    o[0] = j->r0 + k / j->per_row * p->chunk[0];
}

/* Copy chunk k's elements, row-major within the chunk, from the band to
 * dst; returns dst, or the band itself when the chunk is whole rows there
 * (contiguous: nothing to copy). */
static const uint8_t *gather(const wd_job_t *j, uint64_t k, uint8_t *dst)
{
    const na_h5wd_t *p = j->p;
    hsize_t o[H5S_MAX_RANK];
    chunk_origin(j, k, o);
    uint64_t stride[H5S_MAX_RANK]; /* elements between steps along d */
    stride[p->ndim - 1] = 1;
    for (int d = p->ndim - 2; d >= 0; d--)
        stride[d] = stride[d + 1] * p->shape[d + 1];
    int contiguous = 1;
    for (int d = 1; d < p->ndim; d++)
        contiguous &= p->chunk[d] == p->shape[d];
    const uint8_t *base = j->band + (o[0] - j->r0) * stride[0] * p->esize;
    for (int d = 1; d < p->ndim; d++)
        base += o[d] * stride[d] * p->esize;
    if (contiguous)
        return base;
    /* runs along the last dimension, the other dimensions counted in idx */
    size_t run = (size_t)(p->chunk[p->ndim - 1] * p->esize), es = p->esize;
    uint64_t runs = p->celems / p->chunk[p->ndim - 1], idx[H5S_MAX_RANK] = {0};
    uint8_t *w = dst;
    for (uint64_t r = 0; r < runs; r++) {
        uint64_t off = 0;
        for (int d = 0; d < p->ndim - 1; d++)
            off += idx[d] * stride[d];
        const uint8_t *s = base + off * es;
        if (run == 4) /* (N, 1) column chunks of 4-byte elements: a fixed-size copy */
            memcpy(w, s, 4);
        else if (run == 8)
            memcpy(w, s, 8);
        else
            memcpy(w, s, run);
        w += run;
        for (int d = p->ndim - 2; d >= 0 && ++idx[d] == p->chunk[d]; d--)
            idx[d] = 0;
    }
    return dst;
}

/* src (n elements of es bytes) shuffled into dst: byte b of element e
 * at dst[b * n + e] (H5Zshuffle.c; one element or one byte: unchanged). */
static const uint8_t *shuffle(const uint8_t *src, uint64_t n, size_t es, uint8_t *dst)
{
    if (es <= 1 || n <= 1)
        return src;
    for (size_t b = 0; b < es; b++) {
        uint8_t *plane = dst + b * n;
        for (uint64_t e = 0; e < n; e++)
            plane[e] = src[e * es + b];
    }
    return dst;
}

static int all_fill(const uint8_t *s, uint64_t bytes, const uint8_t *pat, size_t patlen)
{
    for (uint64_t at = 0; at < bytes; at += patlen) {
        size_t k = bytes - at < patlen ? (size_t)(bytes - at) : patlen;
        if (memcmp(s + at, pat, k))
            return 0;
    }
    return 1;
}

static void *wd_worker(void *arg)
{
    wd_job_t *j = arg;
    const na_h5wd_t *p = j->p;
    uint64_t bytes = p->celems * p->esize;
    uint8_t *g = malloc(bytes), *s = p->shuffle ? malloc(bytes) : NULL;
    for (;;) {
        uint64_t k = atomic_fetch_add(&j->next, 1);
        if (k >= j->n)
            break;
        wd_out_t *o = &j->out[k];
        if (!g || (p->shuffle && !s)) {
            o->err = Z_MEM_ERROR;
            continue;
        }
        const uint8_t *src = gather(j, k, g);
        if (j->fillpat && all_fill(src, bytes, j->fillpat, j->patlen))
            continue; /* left out, as write_sparse leaves it */
        if (p->shuffle)
            src = shuffle(src, p->celems, p->esize, s);
        o->zn = compressBound((uLong)bytes);
        o->z = malloc(o->zn);
        o->err = o->z ? compress2(o->z, &o->zn, src, (uLong)bytes, p->level) : Z_MEM_ERROR;
    }
    free(g);
    free(s);
    return NULL;
}

/* Compress the job's chunks on up to p->threads threads (this one
 * included); a thread that cannot be started leaves its share to the
 * others. */
static void wd_compress(wd_job_t *j)
{
    pthread_t th[256];
    int nt = 0;
    uint64_t want = j->n < (uint64_t)j->p->threads ? j->n : (uint64_t)j->p->threads;
    while ((uint64_t)nt + 1 < want && pthread_create(&th[nt], NULL, wd_worker, j) == 0)
        nt++;
    wd_worker(j);
    for (int i = 0; i < nt; i++)
        pthread_join(th[i], NULL);
}

/* H5Dwrite of the band's elements outside the whole chunks: for every
 * dimension d >= 1 whose extent the chunks do not divide, the slab of
 * its last (edge) chunks; memory and file select the same elements
 * (union of the slabs), so they pair in the same row-major order. */
static herr_t write_edges(const na_h5wd_t *p, hid_t dset, hid_t memtype, uint64_t r0,
                          uint64_t rows, const uint8_t *band)
{
    hsize_t mdims[H5S_MAX_RANK], fst[H5S_MAX_RANK], mst[H5S_MAX_RANK], cnt[H5S_MAX_RANK];
    int any = 0;
    for (int d = 1; d < p->ndim; d++)
        any |= p->full[d] * p->chunk[d] < p->shape[d];
    if (!any)
        return 0;
    hid_t fs = H5Dget_space(dset), ms = -1;
    herr_t r = fs < 0 ? -1 : 0;
    mdims[0] = rows;
    for (int d = 1; d < p->ndim; d++)
        mdims[d] = p->shape[d];
    if (r >= 0)
        ms = H5Screate_simple(p->ndim, mdims, NULL);
    r = ms < 0 ? -1 : r;
    H5S_seloper_t op = H5S_SELECT_SET;
    for (int e = 1; r >= 0 && e < p->ndim; e++) {
        uint64_t inner = p->full[e] * p->chunk[e];
        if (inner >= p->shape[e])
            continue;
        for (int d = 0; d < p->ndim; d++) {
            fst[d] = mst[d] = 0;
            cnt[d] = mdims[d];
        }
        fst[0] = r0;
        fst[e] = mst[e] = inner;
        cnt[e] = p->shape[e] - inner;
        if (H5Sselect_hyperslab(fs, op, fst, NULL, cnt, NULL) < 0 ||
            H5Sselect_hyperslab(ms, op, mst, NULL, cnt, NULL) < 0)
            r = -1;
        op = H5S_SELECT_OR;
    }
    if (r >= 0)
        r = H5Dwrite(dset, memtype, ms, fs, H5P_DEFAULT, band);
    hid_t es = r < 0 ? H5Eget_current_stack() : H5I_INVALID_HID; /* see write_part */
    if (fs >= 0)
        H5Sclose(fs);
    if (ms >= 0)
        H5Sclose(ms);
    if (es >= 0)
        H5Eset_current_stack(es);
    return r;
}

int na_h5wd_write(na_h5wd_t *p, hid_t dset, hid_t memtype, uint64_t first, uint64_t count,
                  const uint8_t *buf, const uint8_t *fillpat, size_t patlen, uint64_t *lo,
                  uint64_t *hi, char *why, size_t cap)
{
    why[0] = '\0';
    *lo = *hi = first;
    uint64_t row = 1, c0 = p->chunk[0];
    for (int d = 1; d < p->ndim; d++)
        row *= p->shape[d];
    /* the band: whole chunk rows in the range and inside the extent */
    uint64_t r0 = (first + row - 1) / row, r1 = (first + count) / row;
    r0 = (r0 + c0 - 1) / c0 * c0;
    r1 = r1 < p->full[0] * c0 ? r1 / c0 * c0 : p->full[0] * c0;
    if (r1 <= r0)
        return 0;
    wd_job_t j = {.p = p, .band = buf + (r0 * row - first) * p->esize, .r0 = r0,
                  .fillpat = fillpat, .patlen = patlen};
    j.per_row = 1;
    for (int d = 1; d < p->ndim; d++)
        j.per_row *= p->full[d];
    j.n = (r1 - r0) / c0 * j.per_row;
    atomic_init(&j.next, 0);
    j.out = calloc(j.n, sizeof *j.out);
    if (!j.out) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    wd_compress(&j);
    int r = 0;
    for (uint64_t k = 0; k < j.n; k++) {
        wd_out_t *o = &j.out[k];
        if (r == 0 && o->err != Z_OK) {
            snprintf(why, cap, o->err == Z_MEM_ERROR ? "out of memory"
                                                     : "deflate failed (zlib error %d)", o->err);
            r = -1;
        }
        if (r == 0 && o->z) {
            hsize_t off[H5S_MAX_RANK];
            chunk_origin(&j, k, off);
            if (H5Dwrite_chunk(dset, H5P_DEFAULT, 0, off, (size_t)o->zn, o->z) < 0)
                r = -1;
        }
        free(o->z);
    }
    free(j.out);
    if (r == 0 && write_edges(p, dset, memtype, r0, r1 - r0, j.band) < 0)
        r = -1;
    if (r == 0) {
        *lo = r0 * row;
        *hi = r1 * row;
    }
    return r;
}

#endif /* NA_HAVE_HDF5 */

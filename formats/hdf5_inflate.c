/*
 * hdf5_inflate.c - parallel decompression of HDF5 chunks (issue 3).
 *
 * libhdf5 decompresses chunk by chunk on one thread (and Debian's build
 * serialises every HDF5 call behind one lock). For the two most common
 * pipelines, deflate and shuffle + deflate, the child (hdf5_child.c)
 * instead hands over the stored chunks (H5Dread_chunk) and this file
 * inflates them on all threads and undoes the shuffle, in the parent,
 * where OpenMP is allowed. A chunk is one whole buffer, the case
 * libdeflate (https://github.com/ebiggers/libdeflate) is made for: it
 * inflates them faster than zlib (bench/RESULTS.md, HDF5), so it is used
 * when the build found it (NA_HAVE_LIBDEFLATE), with zlib as the fallback
 * for builds without it and for any stream libdeflate refuses, so that
 * error messages stay zlib's. Formats:
 *  - deflate (filter 1): a zlib stream (RFC 1950) of the whole chunk, as
 *    H5Z_filter_deflate writes it (HDF5 source src/H5Zdeflate.c);
 *  - shuffle (filter 2): byte k of every element stored together: the
 *    stored chunk is es planes of n bytes, plane k holding byte k of
 *    elements 0..n-1 (HDF5 User's Guide, "Using the Shuffle Filter").
 * A stored chunk always has the full chunk extent, also at the edge of
 * the dataset, in row-major order of the chunk's own dims (HDF5 File
 * Format Specification, "Data Layout Message", version 3 chunked
 * storage; HDF5 User's Guide, "Chunking in HDF5"); only the part inside
 * the dataset's extent is real. Chunks of whole rows are one run of
 * elements of the window; any other chunk (h5py's (15625, 1) column
 * chunks of a tall table, 2-D and 3-D tiles) is scattered line by line
 * (runs along the last dim) to their row-major places. The result is
 * byte-identical to what H5Dread gives (tested: tests/cli/hdf5_parallel.sh,
 * tests/cli/hdf5_column_chunks_parallel.sh).
 */
#include "hdf5_inflate.h"

#include <omp.h>    /* omp_get_max_threads */
#include <stdlib.h> /* malloc, free */
#include <string.h> /* memcpy */
#include <zlib.h>   /* uncompress */
#if NA_HAVE_LIBDEFLATE
#include <libdeflate.h> /* libdeflate_zlib_decompress */
#endif

/* Inflate the zlib stream of in_n bytes at in into out (cap bytes); *got:
 * the bytes written. Returns Z_OK or zlib's error code. dec: this
 * thread's libdeflate decompressor, or NULL (zlib only). Inflating a valid
 * stream has one result, so both libraries give the same bytes. */
static int inflate_chunk(void *dec, uint8_t *out, uint64_t cap, const uint8_t *in,
                         uint64_t in_n, uint64_t *got)
{
#if NA_HAVE_LIBDEFLATE
    size_t n = 0;
    if (dec != NULL &&
        libdeflate_zlib_decompress(dec, in, in_n, out, cap, &n) == LIBDEFLATE_SUCCESS) {
        *got = n;
        return Z_OK;
    }
#else
    (void)dec;
#endif
    uLongf g = (uLongf)cap;
    int zr = uncompress(out, &g, in, (uLong)in_n);
    *got = g;
    return zr;
}

void na_h5i_unshuffle(const uint8_t *in, uint8_t *out, uint64_t n, uint32_t es)
{
    for (uint32_t b = 0; b < es; b++) {
        const uint8_t *plane = in + (uint64_t)b * n;
        for (uint64_t i = 0; i < n; i++)
            out[i * es + b] = plane[i];
    }
}

/* Copy n elements of es bytes; most runs of column chunks are one. */
static void copy_elems(uint8_t *dst, const uint8_t *src, uint64_t n, uint32_t es)
{
    if (n == 1 && es == 4)
        memcpy(dst, src, 4);
    else if (n == 1 && es == 8)
        memcpy(dst, src, 8);
    else
        memcpy(dst, src, n * es);
}

/* Scatter the in-extent part of one inflated chunk (elems, full chunk
 * extent, row-major) at grid coordinates gc to the window [first,
 * first+count) of out. A line is a run along the last dim: contiguous in
 * the chunk and in the dataset; lines come in increasing dataset order. */
static void scatter(const na_h5i_layout_t *L, const uint64_t *gc, const uint8_t *elems,
                    uint64_t first, uint64_t count, uint8_t *out)
{
    int n = L->ndim;
    uint32_t es = L->esize;
    uint64_t off[NA_MAX_NDIM] = {0}, ext[NA_MAX_NDIM] = {0}, cst[NA_MAX_NDIM] = {0},
             sst[NA_MAX_NDIM] = {0};
    uint64_t cs = 1, ss = 1;
    for (int d = n - 1; d >= 0; d--) {
        off[d] = gc[d] * L->chunk[d];
        ext[d] = L->shape[d] - off[d] < L->chunk[d] ? L->shape[d] - off[d] : L->chunk[d];
        cst[d] = cs;
        sst[d] = ss;
        cs *= L->chunk[d];
        ss *= L->shape[d];
    }
    uint64_t line = ext[n - 1], end = first + count;
    uint64_t loc[NA_MAX_NDIM] = {0};
    uint64_t src = 0, dst = 0;
    for (int d = 0; d < n; d++)
        dst += off[d] * sst[d];
    for (;;) {
        /* this line: dataset elements [dst, dst+line), chunk [src, ...) */
        if (dst >= end)
            return;
        if (dst + line > first) {
            uint64_t lo = dst > first ? dst : first;
            uint64_t hi = dst + line < end ? dst + line : end;
            copy_elems(out + (lo - first) * es, elems + (src + (lo - dst)) * es, hi - lo, es);
        }
        /* next line: odometer over dims n-2 .. 0 */
        int d = n - 2;
        for (; d >= 0; d--) {
            if (++loc[d] < ext[d]) {
                src += cst[d];
                dst += sst[d];
                break;
            }
            src -= (loc[d] - 1) * cst[d];
            dst -= (loc[d] - 1) * sst[d];
            loc[d] = 0;
        }
        if (d < 0)
            return;
    }
}

na_status_t na_h5i_assemble(const uint8_t *raw, const h5p_chunk_t *ck, size_t nk,
                            const na_h5i_layout_t *L, uint64_t first, uint64_t count,
                            uint8_t *out, na_err_t *err)
{
    /* The layout comes from the libhdf5 child: check it before use. */
    uint64_t grid[NA_MAX_NDIM], nchunks = 1, ce = 1, el = 1;
    int ok = L->ndim >= 1 && L->ndim <= NA_MAX_NDIM && L->esize > 0 && L->esize <= 8;
    for (int d = 0; ok && d < L->ndim; d++) {
        ok = L->chunk[d] > 0 && L->shape[d] > 0 && ce <= UINT64_MAX / L->chunk[d] &&
             el <= UINT64_MAX / L->shape[d];
        if (!ok)
            break;
        ce *= L->chunk[d];
        el *= L->shape[d];
        grid[d] = (L->shape[d] - 1) / L->chunk[d] + 1;
        nchunks = grid[d] != 0 && nchunks <= UINT64_MAX / grid[d] ? nchunks * grid[d] : 0;
    }
    if (!ok || ce != L->chunk_elems || el != L->elements || nchunks == 0 ||
        first > el || count > el - first || ce > UINT64_MAX / L->esize)
        return na_err_set(err, NA_E_INTERNAL, "HDF5 reader: bad chunk layout");
    for (size_t i = 0; i < nk; i++)
        if (ck[i].index >= nchunks)
            return na_err_set(err, NA_E_INTERNAL, "HDF5 reader: chunk %llu outside the grid",
                              (unsigned long long)ck[i].index);
    uint64_t cbytes = L->chunk_elems * L->esize;
    int bad = 0;
    char msg[200] = "";
    int nt = L->threads > 0 ? L->threads : omp_get_max_threads();
    if ((uint64_t)nt > nk)
        nt = nk > 0 ? (int)nk : 1;
#pragma omp parallel num_threads(nt)
    {
        uint8_t *tmp = malloc(cbytes ? cbytes : 1);
        uint8_t *tmp2 = L->shuffle ? malloc(cbytes ? cbytes : 1) : NULL;
#if NA_HAVE_LIBDEFLATE
        struct libdeflate_decompressor *dec = libdeflate_alloc_decompressor();
#else
        void *dec = NULL;
#endif
        if (tmp == NULL || (L->shuffle && tmp2 == NULL)) {
#pragma omp atomic write
            bad = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (size_t i = 0; i < nk; i++) {
            int stop;
#pragma omp atomic read
            stop = bad;
            if (stop)
                continue;
            uint64_t got = 0;
            int zr = inflate_chunk(dec, tmp, cbytes, raw + ck[i].offset, ck[i].bytes, &got);
            if (zr != Z_OK || got != cbytes) {
                /* the first failure's message; `bad` is read by the other
                 * threads without the lock, so it is only ever accessed
                 * atomically (ThreadSanitizer) */
#pragma omp critical(na_h5i_msg)
                {
                    int was;
#pragma omp atomic read
                    was = bad;
                    if (!was) {
                        snprintf(msg, sizeof msg, "chunk %llu: deflate: %s (%lu of %llu bytes)",
                                 (unsigned long long)ck[i].index,
                                 zr != Z_OK ? zError(zr) : "wrong size", (unsigned long)got,
                                 (unsigned long long)cbytes);
#pragma omp atomic write
                        bad = 2;
                    }
                }
                continue;
            }
            const uint8_t *elems = tmp;
            if (L->shuffle) {
                na_h5i_unshuffle(tmp, tmp2, L->chunk_elems, L->esize);
                elems = tmp2;
            }
            uint64_t gc[NA_MAX_NDIM], r = ck[i].index;
            for (int d = L->ndim - 1; d >= 0; d--) {
                gc[d] = r % grid[d];
                r /= grid[d];
            }
            scatter(L, gc, elems, first, count, out);
        }
        free(tmp);
        free(tmp2);
#if NA_HAVE_LIBDEFLATE
        libdeflate_free_decompressor(dec);
#endif
    }
    if (bad == 1)
        return na_err_set(err, NA_E_NOMEM, "out of memory (chunk buffers of %llu bytes)",
                          (unsigned long long)cbytes);
    if (bad)
        return na_err_set(err, NA_E_FORMAT, "%s", msg);
    return NA_OK;
}

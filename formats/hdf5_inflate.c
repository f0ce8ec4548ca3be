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
 * the dataset; only chunks of whole rows reach here, so the valid
 * elements of a chunk are its first ones. The result is byte-identical to
 * what H5Dread gives (tested: tests/cli/hdf5_parallel.sh).
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

/* Undo shuffle: n elements of es bytes, planes in `in`, elements to out. */
static void unshuffle(const uint8_t *in, uint8_t *out, uint64_t n, uint32_t es)
{
    for (uint32_t b = 0; b < es; b++) {
        const uint8_t *plane = in + (uint64_t)b * n;
        for (uint64_t i = 0; i < n; i++)
            out[i * es + b] = plane[i];
    }
}

na_status_t na_h5i_assemble(const uint8_t *raw, const h5p_chunk_t *ck, size_t nk,
                            const na_h5i_layout_t *L, uint64_t first, uint64_t count,
                            uint8_t *out, na_err_t *err)
{
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
                unshuffle(tmp, tmp2, L->chunk_elems, L->esize);
                elems = tmp2;
            }
            uint64_t c0 = ck[i].index * L->chunk_elems;
            uint64_t valid = L->elements - c0 < L->chunk_elems ? L->elements - c0 : L->chunk_elems;
            uint64_t lo = c0 > first ? c0 : first;
            uint64_t hi = c0 + valid < first + count ? c0 + valid : first + count;
            if (hi > lo)
                memcpy(out + (lo - first) * L->esize, elems + (lo - c0) * L->esize,
                       (hi - lo) * L->esize);
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

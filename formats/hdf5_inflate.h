/*
 * hdf5_inflate.h - parallel decompression of stored HDF5 chunks in the
 * nanaudit process (hdf5_inflate.c). Internal to formats/.
 */
#ifndef NA_HDF5_INFLATE_H
#define NA_HDF5_INFLATE_H

#include "hdf5_proto.h"

typedef struct na_h5i_layout {
    uint64_t chunk_elems; /* elements of one stored chunk: the product of chunk[] */
    uint32_t esize;       /* bytes per element */
    int shuffle;          /* 1: shuffle + deflate, 0: deflate */
    uint64_t elements;    /* of the dataset: the product of shape[] */
    int threads;          /* 0: omp_get_max_threads() */
    int ndim;             /* 1..NA_MAX_NDIM */
    uint64_t shape[NA_MAX_NDIM]; /* dataset extent, elements per dim */
    uint64_t chunk[NA_MAX_NDIM]; /* chunk extent, elements per dim (> 0) */
} na_h5i_layout_t;

/* Inflate (and unshuffle) the nk stored chunks described by ck, whose
 * bytes are at raw + ck[i].offset, and copy the parts of them that fall in
 * stream elements [first, first+count) (row-major flat indices of the
 * dataset) to out (count * esize bytes), on all threads, each chunk once.
 * ck[i].index is the chunk's row-major position in the chunk grid
 * (ceil(shape[d] / chunk[d]) chunks along dim d; hdf5_proto.h): chunk
 * (g_0, ..., g_n-1) holds elements g_d*chunk[d] + [0, chunk[d]) of each
 * dim, stored row-major at full chunk size; only the part inside shape
 * is used (HDF5 File Format Specification, "Data Layout Message",
 * chunked storage). Elements of the window that no listed chunk covers
 * are left as they were. Errors: NA_E_FORMAT "chunk N: deflate: ..." for
 * a corrupt chunk, NA_E_INTERNAL for an index outside the grid or a bad
 * layout, NA_E_NOMEM. */
na_status_t na_h5i_assemble(const uint8_t *raw, const h5p_chunk_t *ck, size_t nk,
                            const na_h5i_layout_t *L, uint64_t first, uint64_t count,
                            uint8_t *out, na_err_t *err);

/* Undo the shuffle filter: n elements of es bytes stored as es planes of
 * n bytes in `in` (plane k: byte k of every element; HDF5 User's Guide,
 * "Using the Shuffle Filter"), written as elements to out (n * es bytes,
 * not overlapping in). */
void na_h5i_unshuffle(const uint8_t *in, uint8_t *out, uint64_t n, uint32_t es);

#endif /* NA_HDF5_INFLATE_H */

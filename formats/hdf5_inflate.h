/*
 * hdf5_inflate.h - parallel decompression of stored HDF5 chunks in the
 * nanaudit process (hdf5_inflate.c). Internal to formats/.
 */
#ifndef NA_HDF5_INFLATE_H
#define NA_HDF5_INFLATE_H

#include "hdf5_proto.h"

typedef struct na_h5i_layout {
    uint64_t chunk_elems; /* elements of one stored chunk (whole rows) */
    uint32_t esize;       /* bytes per element */
    int shuffle;          /* 1: shuffle + deflate, 0: deflate */
    uint64_t elements;    /* of the dataset */
    int threads;          /* 0: omp_get_max_threads() */
} na_h5i_layout_t;

/* Inflate (and unshuffle) the nk stored chunks described by ck, whose
 * bytes are at raw + ck[i].offset, and copy the parts of them that fall in
 * stream elements [first, first+count) to out (count * esize bytes), on
 * all threads. Chunk ck[i].index holds elements [index * chunk_elems,
 * ...). Errors: NA_E_FORMAT "chunk N: deflate: ..." for a corrupt chunk,
 * NA_E_NOMEM. */
na_status_t na_h5i_assemble(const uint8_t *raw, const h5p_chunk_t *ck, size_t nk,
                            const na_h5i_layout_t *L, uint64_t first, uint64_t count,
                            uint8_t *out, na_err_t *err);

#endif /* NA_HDF5_INFLATE_H */

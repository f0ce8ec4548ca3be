/*
 * hdf5_wdeflate.h - deflate of the HDF5 writer's whole chunks on several
 * threads (hdf5_wdeflate.c), for the writer's child (hdf5_wchild.c).
 * Internal to formats/; compiled only with libhdf5 (NA_HAVE_HDF5).
 */
#ifndef NA_HDF5_WDEFLATE_H
#define NA_HDF5_WDEFLATE_H

#include "hdf5_proto.h"

#if NA_HAVE_HDF5
#include <hdf5.h>

typedef struct na_h5wd na_h5wd_t;

/* A plan for writing dataset dset's whole chunks here, or NULL when its
 * chunks must go through libhdf5 (H5Dwrite): not chunked, a filter
 * pipeline other than deflate or shuffle + deflate (fletcher32, lzf,
 * szip, scale-offset... and no filter at all), elements of memtype that
 * are not exactly the dataset's file type (libhdf5 would convert them),
 * a variable-length or reference type, a chunk larger than window bytes
 * or no whole chunk along some dimension. threads: the most threads that
 * compress (the run's --threads; 1: this thread only). The caller frees
 * it (na_h5wd_free, NULL accepted). */
na_h5wd_t *na_h5wd_plan(hid_t dset, hid_t memtype, int threads, uint64_t window);
void na_h5wd_free(na_h5wd_t *p);

/* Write the part of dataset elements [first, first+count) (row-major;
 * their bytes at buf, memtype) that is whole chunk rows: for each chunk
 * row along dimension 0 that lies whole inside the range and inside the
 * extent, its chunks that lie whole inside the extent are gathered,
 * shuffled, deflated on the plan's threads and stored with
 * H5Dwrite_chunk (filter mask 0), and its elements in the edge chunks of
 * the other dimensions with one H5Dwrite. fillpat (NULL: none) is a
 * pattern of patlen bytes (a multiple of the element size) of the
 * dataset's fill value: a chunk all of fill value is then not written
 * (the caller's sparse plan, hdf5_wchild.c sparse_plan). *lo, *hi: the
 * elements written, [*lo, *hi) within the range (*lo == *hi: none); the
 * caller writes the rest. Memory: the deflated chunks until they are
 * stored (at most compressBound of the range's bytes) and two chunks per
 * thread. 0, or -1 with why set ("out of memory", a zlib error) or empty
 * (a libhdf5 error: its error stack). */
int na_h5wd_write(na_h5wd_t *p, hid_t dset, hid_t memtype, uint64_t first, uint64_t count,
                  const uint8_t *buf, const uint8_t *fillpat, size_t patlen, uint64_t *lo,
                  uint64_t *hi, char *why, size_t cap);

#endif /* NA_HAVE_HDF5 */
#endif /* NA_HDF5_WDEFLATE_H */

/*
 * hdf5_types.h - how the HDF5 reader's child (hdf5_child.c) maps an HDF5
 * datatype to what nanaudit audits (hdf5_types.c). Internal to formats/;
 * compiled only with libhdf5 (NA_HAVE_HDF5).
 */
#ifndef NA_HDF5_TYPES_H
#define NA_HDF5_TYPES_H

#include "hdf5_proto.h"

#if NA_HAVE_HDF5
#include <hdf5.h>

/* Result of classifying one (member) type. */
typedef struct c_type {
    int kind;          /* H5P_K_TENSOR, _ERROR or _SKIP */
    na_dtype_t dtype;
    na_endian_t order;
    hid_t memtype;     /* owned; -1 unless TENSOR */
    uint32_t esize;    /* bytes of one scalar element */
    uint64_t per;      /* scalars per element (array types), else 1 */
    int adims;         /* array dims appended to the shape */
    uint64_t adim[NA_MAX_NDIM];
    int vlen;          /* 1: variable-length sequences of dtype; memtype is
                        * the sequence of the base's memory type */
    char reason[300];
} c_type_t;

/* Classify a non-compound type ft: kind H5P_K_TENSOR with the stream's
 * dtype, byte order and a memory type to read it with (owned by the
 * caller: H5Tclose), H5P_K_ERROR (numeric but not auditable: reason) or
 * H5P_K_SKIP (not numeric: reason). Rules in hdf5_types.c. */
void na_h5t_classify(hid_t ft, c_type_t *r);

/* Shared by the reader's and the writer's children (hdf5_child.c):
 * select flat row-major elements [a, a+n) of shape in dataspace fs (0 or
 * -1); the innermost message of the HDF5 error stack into buf (clears
 * it); the memory type of compound member path names[0..depth) around
 * leaf (consumed); 1 for a complex compound (two equal float members
 * named r/i or real/imag, NAME.real and NAME.imag). */
int na_h5c_select_range(hid_t fs, int ndim, const uint64_t *shape, uint64_t a, uint64_t n);
/* The memory dataspace for those elements: the selection's own shape when
 * they are whole rows (libhdf5's fast path), else one dimension of n. */
hid_t na_h5c_range_space(int ndim, const uint64_t *shape, uint64_t a, uint64_t n);
/* [a, a+n) in up to three parts {first, count}, each a partial row or
 * whole rows, to be read or written one by one (range_space's fast path
 * for the whole rows). */
void na_h5c_row_parts(int ndim, const uint64_t *shape, uint64_t a, uint64_t n,
                      uint64_t part[3][2]);
/* Chunks one H5Dread or H5Dwrite may meet: libhdf5 keeps a record of
 * some KiB for every chunk a selection meets (a window of one-element
 * chunks took 12 GB), so tiny chunks are read and written at most this
 * many at a time. */
#define NA_H5_RANGE_CHUNKS 8192u
/* Rows of a chunked dataset (chunk shape chunk[0..ndim), ndim >= 1) that
 * meet at most NA_H5_RANGE_CHUNKS chunks: whole chunk rows, at least one. */
uint64_t na_h5c_range_rows(int ndim, const uint64_t *shape, const uint64_t *chunk);
/* Set dapl's chunk cache for reading or writing a dataset of extent
 * shape[0..ndim) in chunks of chunk[0..ndim) (NULL: not chunked), esize
 * bytes per dataset element, in row-major windows: room for every chunk one
 * row of chunks holds (the chunks a window boundary cuts are completed by
 * the next window), at least 64 MiB and at most NA_H5_CACHE_MAX; slots
 * a prime at least 4 times the chunks of a row that fit (at most about
 * 2^20); plain LRU (w0 = 0). With
 * 64 MiB and w0 = 1, (2048, 1) chunks across 32768 columns took 71 s to
 * scan (libhdf5 walks its list of partly read chunks for each chunk it
 * evicts: quadratic) and every chunk was inflated and deflated once per
 * window; now 2.9 s (h5py: 4.8 s; round 33b). 0 or -1. */
#define NA_H5_CACHE_MAX ((size_t)512 << 20)
int na_h5c_chunk_cache(hid_t dapl, int ndim, const uint64_t *shape, const uint64_t *chunk,
                       size_t esize);
void na_h5c_cause(char *buf, size_t cap);
hid_t na_h5c_nest_memtype(char *const *names, int depth, hid_t leaf);
/* 1 when a filter of dataset dset's pipeline (dcpl) is missing from this
 * libhdf5, with the one-line reason ("HDF5 filter 32000 (lzf) is not
 * available ...") in msg[cap]; 0 when every filter is there, or an
 * optional one is missing that the first allocated chunk skipped. */
int na_h5c_filter_missing(hid_t dset, hid_t dcpl, char *msg, size_t cap);
int na_h5c_is_complex(hid_t ct);

/* 1 when attribute name describes a variable's stored values rather than
 * what they mean, so it is wrong on normalized values: the CF packing
 * attributes scale_factor and add_offset (unpacked = stored * scale_factor
 * + add_offset) and the valid range valid_min, valid_max, valid_range (CF
 * conventions 1.11, sections 8.1 "Packed Data" and 2.5.1). */
int na_h5_packing_attr(const char *name);
/* Which of those attributes object obj has: bit i for na_h5_packing_attr's
 * name i, NA_PACKING_ATTRS' order (errors read as absent). */
int na_h5_has_packing(hid_t obj);
/* 1 when dataset dset is a dimension scale (attribute CLASS =
 * "DIMENSION_SCALE": a netCDF-4 coordinate variable or dimension);
 * errors read as 0. */
int na_h5_is_dim_scale(hid_t dset);
/* 1 when dataset dset has a signed integer type and the netCDF attribute
 * _Unsigned = "true" (or "True"): its elements are the unsigned integers
 * of the same bits, as netCDF4-python and xarray read them (the file type
 * stays signed; clean writes the same bits back). Errors read as 0. */
int na_h5_unsigned_view(hid_t dset);
/* 1 when dataset dset is the dimension scale netCDF-4 writes for a
 * dimension that has no coordinate variable (its NAME attribute starts
 * "This is a netCDF dimension but not a netCDF variable."): netCDF
 * readers list no such variable. Errors read as 0. */
int na_h5_nc_dim_only(hid_t dset);
/* Why a MATLAB v7.3 variable holds no numbers to audit (MATLAB_class
 * "char": UTF-16 text; MATLAB_empty set: an empty array stored as its
 * dimensions), or NULL. Errors read as NULL. */
const char *na_h5_matlab_skip(hid_t dset);

#endif /* NA_HAVE_HDF5 */
#endif /* NA_HDF5_TYPES_H */

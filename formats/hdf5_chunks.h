/*
 * hdf5_chunks.h - the allocated chunks of an HDF5 chunked dataset, listed
 * by walking its chunk index in the file itself (hdf5_chunks.c).
 * Internal to formats/; no libhdf5 needed, so the unit tests and the
 * fuzzer build it everywhere.
 *
 * Why: libhdf5 1.10.8 (Debian 12) has no chunk iterator (H5Dchunk_iter
 * came in 1.14), and H5Dget_chunk_info(index) walks the index from its
 * start on every call, so listing n chunks through it costs n^2 / 2 steps.
 * The reader's child (hdf5_child.c) used it up to 1024 chunks and beyond
 * that read a sparse dataset element by element over its whole extent (a
 * 330 KB file declaring 2^32 elements took 17.5 s to scan). This walk is
 * linear. It is only a proposal: the child keeps a listed chunk only when
 * libhdf5's own lookup (H5Dget_chunk_info_by_coord) finds the same
 * address and size there, and the list only when it holds exactly as
 * many distinct chunks as H5Dget_num_chunks counts; else it falls back to
 * what it did before.
 *
 * Format (HDF5 File Format Specification version 3.0, little-endian
 * throughout; addresses are sizeof_addr bytes, relative to the base
 * address):
 *  - object header version 1 ("Disk Format: Level 2A1"): version 1, a
 *    reserved byte, the message count (2), reference count (4), chunk
 *    size (4), 4 bytes of padding, then messages of type (2), size (2),
 *    flags (1), 3 reserved bytes and their data;
 *  - version 2 (Level 2A1): "OHDR", version 2, flags; times (16 bytes)
 *    when flags bit 5, attribute phase change (4) when bit 4; the size of
 *    chunk 0 in 1 << (flags & 3) bytes; messages of type (1), size (2),
 *    flags (1) and a creation order (2) when flags bit 2; a checksum (4)
 *    ends each chunk; continuation chunks start with "OCHK";
 *  - a continuation message (type 0x0010): address and length
 *    (sizeof_length) of the next chunk of messages;
 *  - the data layout message (type 0x0008, Level 2A2 "Data Layout
 *    Message"): versions 1 and 2 (version, dimensionality, class 2 =
 *    chunked, 5 reserved bytes, B-tree address), version 3 (version,
 *    class, dimensionality, B-tree address); the dimensionality counts
 *    the dataset's rank plus one. Version 4 (files written with libver
 *    "v110" or later and no unlimited dim): class, flags,
 *    dimensionality, the dims' byte width, the chunk dims (the last is
 *    the element size), the index type and its parameters, its address;
 *    of its index types only the fixed array (3) is read here
 *    (hdf5_chunks.c farray); single chunk and implicit indices never
 *    need a list, extensible arrays and version 2 B-trees (unlimited
 *    dims) are not read;
 *  - a version 1 B-tree ("Level 1A1"): "TREE", node type 1 (raw data
 *    chunks), level, entries used (2), left and right sibling addresses,
 *    then key 0, child 0, ..., key N-1, child N-1, key N; a key is the
 *    chunk's stored size (4), filter mask (4) and its element offset in
 *    each of the dimensionality dimensions (8 each; the last is 0); a
 *    child of a level-0 node is a chunk, of a level-L node a node of
 *    level L - 1. The address of all bits set is "undefined" (no chunk).
 */
#ifndef NA_HDF5_CHUNKS_H
#define NA_HDF5_CHUNKS_H

#include <stddef.h> /* size_t */
#include <stdint.h> /* uint64_t */

/* One listed chunk: where the index says it is stored. */
typedef struct na_h5ci_chunk {
    uint64_t addr; /* relative to the base address */
    uint64_t size; /* stored bytes (after the filters) */
    uint32_t mask; /* filters skipped for this chunk (bit i: filter i) */
} na_h5ci_chunk_t;

/* The chunks of the dataset whose object header is at relative address
 * ohdr in fd (not owned, read with pread). base: the file's base address
 * in bytes (its user block); eof: the file's size in bytes; sa, sl:
 * sizeof_addr and sizeof_length (2, 4 or 8); rank: the dataset's (1..32);
 * maxdims: its maximum dims (rank of them; a fixed array's slots follow
 * their grid), or NULL; max: the most chunks to list (the count libhdf5
 * reports).
 * 0: listed, *n chunks; (*offs)[i * rank + d] is chunk i's element offset
 * in dimension d and (*info)[i] its storage, in index order (both
 * malloc'd, NULL when *n is 0; the caller frees them). 1: not a layout
 * this walker reads (not chunked, a version 4 layout's index other than
 * a fixed array, another rank, a fixed array that does not match the
 * grid of maxdims), or a reading that disagrees with libhdf5's (an
 * object header this walker cannot parse, though libhdf5 opened it; more
 * chunks than max), msg says which. -1: the index itself breaks the
 * format (a B-tree node that is not one, of a level other than its
 * parent's less one, lying past the end of the file or unreadable; more
 * nodes than max chunks need; a fixed array header or data block that
 * is not one): damage, msg says what and where. -3: out of memory.
 * Bounds: nodes visited <= 2 * max + 64, levels <= 64, header bytes <= 64
 * MiB. */
int na_h5ci_list(int fd, uint64_t base, uint64_t eof, unsigned sa, unsigned sl, uint64_t ohdr,
                 unsigned rank, const uint64_t *maxdims, uint64_t max, uint64_t **offs,
                 na_h5ci_chunk_t **info, uint64_t *n, char *msg, size_t cap);

/* Chunks' flat-index bounds [s[i][0], s[i][1]] (inclusive, row-major
 * element indices), as the reader's parent and child keep them: sorted
 * by their first element and merged where they overlap or touch (the
 * bounds of a 2-D or deeper grid's chunks interleave; what lies between
 * merged spans is unallocated). Returns how many remain, in place. */
uint64_t na_h5_spans_merge(uint64_t (*s)[2], uint64_t n);

/* The first of n merged spans that ends at or after element x (n when
 * none does): binary search. */
uint64_t na_h5_span_find(const uint64_t (*s)[2], uint64_t n, uint64_t x);

#endif /* NA_HDF5_CHUNKS_H */

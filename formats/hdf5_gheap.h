/*
 * hdf5_gheap.h - checks of variable-length sequence descriptors against
 * the HDF5 global heap, read from the file itself (hdf5_gheap.c).
 * Internal to formats/; no libhdf5 needed, so the unit tests build it
 * everywhere.
 *
 * Why: libhdf5 1.10.8 (Debian 12) trusts a descriptor's length and heap
 * ID. A length shorter than its heap object hides the rest of the
 * sequence (a NaN there is never read), a longer one or an index that
 * names no object makes it read outside its buffers. Newer libhdf5
 * refuses a length that does not match its object; the reader's child
 * (hdf5_child.c) checks every stored descriptor of a dataset with these
 * functions before libhdf5 reads any of its sequences.
 *
 * Format (HDF5 File Format Specification version 3, "Disk Format: Level
 * 1E - Global Heap" and "Datatype Message", variable-length sequences):
 *  - a stored sequence is a descriptor of 4 + sizeof_addr + 4 bytes:
 *    its length in values (uint32), then its heap ID: the address of a
 *    global heap collection (sizeof_addr bytes) and an object index
 *    (uint32); all little-endian; address 0 is a null (empty) sequence;
 *  - a collection at base address + A: "GCOL", version 1, 3 reserved
 *    bytes, its size in bytes with this header (sizeof_length bytes);
 *    then objects: index (uint16), reference count (uint16), 4 reserved
 *    bytes, object size in bytes (sizeof_length), the object's bytes
 *    padded to a multiple of 8; index 0 is free space, whose size counts
 *    its own header; a tail shorter than an object header is free space
 *    (as libhdf5's H5HG__cache_heap_deserialize reads it);
 *  - libhdf5 writes a sequence of L values as an object of exactly
 *    L * (bytes of one stored value) bytes (H5T__conv_vlen).
 */
#ifndef NA_HDF5_GHEAP_H
#define NA_HDF5_GHEAP_H

#include <stddef.h> /* size_t */
#include <stdint.h> /* uint64_t */

typedef struct na_gheap na_gheap_t;

/* A checker reading collections from fd (not owned, read with pread).
 * base: the file's base address (its user block size) in bytes; eof:
 * the file's size in bytes; sa, sl: sizeof_addr and sizeof_length of
 * the superblock (2, 4 or 8); fbase: bytes of one stored value (> 0).
 * NULL when out of memory or a parameter is out of range. */
na_gheap_t *na_gheap_new(int fd, uint64_t base, uint64_t eof, unsigned sa, unsigned sl,
                         uint32_t fbase);
void na_gheap_free(na_gheap_t *g);

/* Bytes of one stored descriptor: 4 + sa + 4. */
size_t na_gheap_desc_size(const na_gheap_t *g);

/* The length (values) a stored descriptor at d says: its first 4 bytes. */
uint32_t na_gheap_desc_len(const uint8_t *d);

/* Check one descriptor (na_gheap_desc_size bytes at d) of sequence seq
 * (the dataset element's row-major index, for the message). 0: it is a
 * null sequence of length 0, or names an existing object of exactly its
 * length's bytes. -1: damaged, msg "sequence N: ..." (a damaged length,
 * a heap ID naming no object, a collection that is not one or runs past
 * the end of the file). -2: a read error, -3: out of memory, msg says
 * which. Collections are parsed once each while they stay in a cache of
 * the 256 last met (direct-mapped by address). */
int na_gheap_check(na_gheap_t *g, const uint8_t *d, uint64_t seq, char *msg, size_t cap);

#endif /* NA_HDF5_GHEAP_H */

/*
 * hdf5_proto.h - the messages between the HDF5 reader (hdf5.c, in the
 * nanaudit process) and its crash-isolated child (hdf5_child.c), which
 * alone calls libhdf5. Internal to formats/, not installed.
 *
 * Why a child: libhdf5 1.10.8 crashes or loops on some hostile files (its
 * own h5dump segfaults on the CVE-2021-37501 reproducer), so every HDF5
 * file is opened in a forked process. A crash, abort or hang there is
 * one file's error (exit 3), not the end of the run. The child makes no
 * OpenMP call: GNU libgomp is not usable in a forked child of a process
 * that has already used it; all scanning stays in the parent.
 *
 * Transport: one AF_UNIX stream socketpair for the messages (send with
 * MSG_NOSIGNAL, so a dead child is an error and not a SIGPIPE), and one
 * MAP_SHARED anonymous mapping, made before fork, into which the child
 * reads data windows with H5Dread; the parent scans them in place.
 *
 * Every message is a h5p_hdr_t followed by `len` payload bytes. Sequence:
 *   child  -> parent: ENTRY* (the catalog, storage order), ALIAS*, then
 *                     DONE or FAIL (the file cannot be opened: payload =
 *                     message)
 *   parent -> child : READ {entry, first element, count}
 *   child  -> parent: DATA (count * elem_size bytes now in the mapping)
 *                     or FAIL (payload = one-line message)
 * A variable-length entry (h5p_entry_t.vlen) is first measured (H5P_VLEN);
 * its READs then count values of the concatenated sequences, not dataset
 * elements, and may start or end inside a sequence.
 *   parent -> child : QUIT, or closes the socket.
 */
#ifndef NA_HDF5_PROTO_H
#define NA_HDF5_PROTO_H

#include "format.h" /* NA_HDF5_MAX_ALIASES */
#include "nanaudit.h"

#include <stdint.h>
#include <sys/types.h> /* pid_t */

enum h5p_type {
    H5P_ENTRY = 1,
    H5P_DONE = 2,
    H5P_FAIL = 3,
    H5P_READ = 4,
    H5P_DATA = 5,
    H5P_QUIT = 6,
    H5P_RAW = 7,  /* READ of stored chunks: DATA payload = h5p_chunk_t[] */
    H5P_FILL = 8, /* READ {entry, 0, 0}: where the stream is fill value;
                   * DATA payload = h5p_fill_t, uint64_t[n_spans][2],
                   * elem_size bytes of the fill element */
    H5P_ALIAS = 9, /* child -> parent, after the ENTRYs, before DONE:
                    * payload = h5p_alias_t + another hard-link path of an
                    * object; takes no catalog index */
    H5P_VLEN = 10  /* READ {entry, 0, 0} of a variable-length entry: the
                    * child measures its sequences (a prefix sum of their
                    * lengths, kept for the READs that follow); DATA
                    * payload = uint64_t: the values of all sequences */
};

/* An object (dataset or group) met again through another hard link
 * (h5py: f['b'] = f['a']): its visit sent catalog entries [lo, hi), each
 * named by the object's first path (plen bytes) plus a suffix (".real",
 * "@attr", "/member"); the other path, which follows this struct
 * (possibly empty), names each of them with the same suffix. Sent for
 * the object met last first, so that a group's other paths reach the
 * other paths its members already have (hdf5.c). more: links
 * beyond the NA_HDF5_MAX_ALIASES the child keeps per object, counted but
 * not sent, so a file with millions of links to one dataset costs
 * bounded memory on both sides. */
typedef struct h5p_alias {
    uint64_t lo, hi;
    uint64_t plen;
    uint64_t more;
} h5p_alias_t;

/* Answer to H5P_FILL: the flat bounds [lo, hi] (inclusive, ascending by
 * lo, possibly overlapping) of the entry's allocated chunks, and the
 * element that every element outside them reads as. n_spans UINT64_MAX:
 * not known, read everything. */
typedef struct h5p_fill {
    uint64_t n_spans;
    uint32_t elem_size;
    uint32_t pad;
} h5p_fill_t;

/* Parallel decompression modes (entry.par_mode). */
enum { H5P_PAR_NONE = 0, H5P_PAR_DEFLATE = 1, H5P_PAR_SHUFFLE_DEFLATE = 2 };

/* One stored chunk of an H5P_RAW answer, at shm + offset. index: its
 * position in the chunk grid, row-major (grid extent ceil(shape[d] /
 * chunk[d]) along dim d), so chunk rows k hold indices [k*G, (k+1)*G)
 * with G the chunks per chunk row (1 when chunks are whole rows). mask:
 * the filters libhdf5 skipped for it (H5Dread_chunk); nonzero = use
 * H5Dread. */
typedef struct h5p_chunk {
    uint64_t index, offset, bytes;
    uint32_t mask, pad;
} h5p_chunk_t;

typedef struct h5p_hdr {
    uint32_t type;
    uint32_t status; /* na_status_t for FAIL */
    uint64_t len;    /* payload bytes */
} h5p_hdr_t;

/* What a catalog entry is. */
enum h5p_kind {
    H5P_K_TENSOR = 0, /* numeric, auditable */
    H5P_K_ERROR = 1,  /* numeric but not auditable: reason, status */
    H5P_K_SKIP = 2,   /* not numeric (strings, references, ...): reason */
    H5P_K_NOTE = 3    /* a file-level note (external link, ...): reason */
};

/* A catalog entry; followed by name_len bytes of name, reason_len bytes
 * of reason and detail_len bytes of detail (none NUL-terminated). */
typedef struct h5p_entry {
    uint32_t kind;         /* enum h5p_kind */
    uint32_t status;       /* na_status_t, for H5P_K_ERROR */
    int32_t dtype;         /* na_dtype_t of the data stream */
    int32_t stored;        /* na_dtype_t as stored (C64 for complex parts) */
    int32_t byte_order;    /* na_endian_t of the data stream */
    int32_t ndim;          /* 0 for scalar and null dataspaces */
    uint32_t elem_size;    /* bytes per element in the stream */
    uint32_t n_missing;    /* 0..2: _FillValue, missing_value */
    double missing[2];
    uint64_t missing_int[2]; /* na_tensor_t.missing_int */
    uint64_t elements;
    uint64_t shape[NA_MAX_NDIM];
    uint64_t storage_bytes;      /* H5Dget_storage_size */
    int64_t unallocated_chunks;  /* -1 when not chunked */
    uint32_t name_len, reason_len, detail_len;
    uint32_t constant;           /* no storage allocated: all fill value */
    uint32_t par_mode;           /* H5P_PAR_*: raw chunks inflated here */
    uint32_t packed;             /* CF packing/valid-range attributes (na_h5_packing_attr) */
    uint32_t dim_scale;          /* a dimension scale (na_h5_is_dim_scale) */
    uint64_t chunk_elems;        /* elements per stored chunk (par_mode) */
    uint64_t chunk0;             /* chunk extent along dim 0 */
    uint64_t chunk[NA_MAX_NDIM]; /* chunk extent along each dim (par_mode) */
    uint64_t direct_offset;      /* file offset of the stream's bytes as
                                  * stored (contiguous, no conversion), or
                                  * UINT64_MAX: read through the child */
    uint32_t vlen;               /* variable-length sequences of dtype:
                                  * elements and shape are the dataset's
                                  * (sequences), the values are measured
                                  * by H5P_VLEN */
    uint32_t missing_exact;      /* na_tensor_t.missing_exact */
    uint64_t scale0[NA_SCALES0]; /* na_tensor_t.scale0 */
    uint32_t scale_other_axis;   /* na_tensor_t.scale_other_axis */
} h5p_entry_t;

typedef struct h5p_read {
    uint64_t entry, first, count;
} h5p_read_t;

/* Child entry point: runs in the forked process, never returns. sock is
 * its end of the socketpair, shm/shm_bytes the shared mapping;
 * attributes: also list numeric attributes (--attributes). */
void na_h5c_main(const char *path, int sock, uint8_t *shm, uint64_t shm_bytes, int attributes)
    __attribute__((noreturn));

/* Fork a libhdf5 process (hdf5.c): a socketpair (the child gets sock,
 * the caller *sock) and shm_bytes of MAP_SHARED anonymous memory (*shm,
 * the caller munmaps it, also after an error) made before the fork; the
 * child is killed when the caller dies (PR_SET_PDEATHSIG), ignores
 * SIGPIPE and runs fn, which must end with _exit. Used by the reader and
 * by the writer (hdf5_write.c). NA_E_NOMEM, NA_E_INTERNAL. */
typedef void (*na_h5p_child_fn)(int sock, uint8_t *shm, void *arg);
na_status_t na_h5p_spawn(uint64_t shm_bytes, na_h5p_child_fn fn, void *arg, pid_t *pid,
                         int *sock, uint8_t **shm, na_err_t *err);

/* Blocking full send / receive on a stream socket; 0 or -1 (peer gone). */
int na_h5p_send(int fd, uint32_t type, uint32_t status, const void *a, uint64_t alen,
                const void *b, uint64_t blen);
int na_h5p_recv_all(int fd, void *buf, uint64_t len);

#endif /* NA_HDF5_PROTO_H */

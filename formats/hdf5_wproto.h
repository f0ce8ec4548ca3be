/*
 * hdf5_wproto.h - the messages between the HDF5 writer of `nanaudit
 * clean` (hdf5_write.c, in the nanaudit process) and its libhdf5 process
 * (hdf5_wchild.c). Internal to formats/, not installed.
 *
 * Why a process: copying the input's groups, attributes and untouched
 * datasets makes libhdf5 read the input, and libhdf5 1.10.8 crashes on
 * hostile files (hdf5_proto.h). The child makes no OpenMP call (a forked
 * child of a process that used GNU libgomp must not). Same transport as
 * the reader: a socketpair for messages (h5p_hdr_t + payload, sent with
 * na_h5p_send) and a MAP_SHARED mapping for the data.
 *
 * The child is forked after the tensor list is known and reads it (and
 * the paths) from its copy of the parent's memory, h5w_job_t. Sequence:
 *   child  -> parent: READY (output created, every group, attribute,
 *                     link and untouched dataset copied, cleaned datasets
 *                     created empty; payload: per tensor a u32 unit, the
 *                     tensor elements in one dataset element: the product
 *                     of an array type's dimensions, else 1) or FAIL
 *                     (status, one-line message)
 *   parent -> child : WRITE {tensor, first, count}, in dataset elements
 *                     (units), their bytes (little-endian, the tensor's
 *                     output dtype) at the start of the mapping
 *   child  -> parent: ACK or FAIL
 *   parent -> child : FINISH, payload: metadata pairs, each as u32 key
 *                     length, u32 value length, key, value
 *   child  -> parent: DONE (root attributes written, file closed) or FAIL
 * A check (output NULL: clean --dry-run) ends after READY or FAIL: the
 * parent closes the socket, and the child's in-memory file is dropped.
 */
#ifndef NA_HDF5_WPROTO_H
#define NA_HDF5_WPROTO_H

#include "hdf5_proto.h"
#include "write.h"

/* Message types (h5p_hdr_t.type); FAIL is H5P_FAIL. Numbered apart
 * from the reader's, so a message of the wrong protocol is refused. */
enum {
    H5W_READY = 20,
    H5W_WRITE = 21,
    H5W_ACK = 22,
    H5W_FINISH = 23,
    H5W_DONE = 24
};

typedef struct h5w_job {
    const char *input;        /* input file, opened read-only */
    const char *output;       /* temporary file, created (truncated);
                               * NULL: check only (hdf5_wchild.c) */
    const na_wtensor_t *t;    /* the writer's tensor list */
    size_t n;
    uint64_t shm_bytes;       /* size of the shared mapping */
    int threads;              /* the run's --threads: threads that deflate
                               * (hdf5_wdeflate.c; POSIX threads, no OpenMP) */
    char *where;              /* H5W_WHERE bytes shared with the parent, or
                               * NULL: the input object (PATH or PATH@ATTR)
                               * libhdf5 is reading, "" between them, so that
                               * a crash names it */
} h5w_job_t;

#define H5W_WHERE 4096

typedef struct h5w_write {
    uint64_t tensor, first, count; /* dataset elements [first, first+count) */
} h5w_write_t;

/* Child entry point (na_h5p_child_fn; arg is the h5w_job_t): never
 * returns. */
void na_h5w_child_main(int sock, uint8_t *shm, void *arg) __attribute__((noreturn));

#endif /* NA_HDF5_WPROTO_H */
